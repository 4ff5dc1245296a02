#!/usr/bin/env bats
# Creating files: open(O_CREAT), creat, mknod (POSIX conformance; see
# docs/posix.md for where kvfs differs: entries by the key's type, no
# special files).

load posix

@test "creat in a namespace makes an empty string key" {
	expect OK 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))' "$NS/k"
	assert_size "$NS/k" 0
	assert_eq "$(kvfs_type "$NS/k")" string "type"
	assert_eq "$(names "$NS")" k "keys"
}

@test "creat in a hash makes a field; in a list at the length appends" {
	mkdir "$NS/h"
	mktype "$NS/l" list
	expect OK 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL))' "$NS/h/f"
	expect OK 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL))' "$NS/l/0"
	assert_eq "$(names "$NS/h")" f "fields"
	assert_eq "$(names "$NS/l")" 0 "positions"
}

@test "a create without O_EXCL opens an existing file and keeps its value" {
	printf abc >"$NS/s"
	expect OK 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT))' "$NS/s"
	assert_bytes "$NS/s" abc
}

@test "EEXIST: O_EXCL over a key, a field, a directory key, a set member" {
	printf abc >"$NS/s"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	mktype "$NS/st" set
	touch "$NS/st/m"
	for p in "$NS/s" "$NS/h/f" "$NS/h" "$NS/st/m"; do
		expect EEXIST 'os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL)' "$p"
	done
	expect EEXIST 'os.mknod(a[0], 0o644 | 0o100000)' "$NS/s"
	assert_bytes "$NS/s" abc
	assert_bytes "$NS/h/f" v
}

@test "ENOENT: the directory does not exist" {
	expect ENOENT 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/nodir/k"
	expect ENOENT 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$KVFS_MNT/nons/k"
	assert_eq "$(names "$NS")" "" "keys"
}

@test "ENOTDIR: the directory is a file" {
	printf abc >"$NS/s"
	expect ENOTDIR 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/s/k"
	expect ENOTDIR 'os.mknod(a[0], 0o644 | 0o100000)' "$NS/s/k"
	assert_bytes "$NS/s" abc
}

@test "EISDIR: creat on the name of a directory key" {
	mkdir "$NS/h"
	expect EISDIR 'os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)' "$NS/h"
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
}

@test "ENAMETOOLONG: a name over 255 bytes" {
	mkdir "$NS/h"
	expect ENAMETOOLONG 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/$LONG_NAME"
	expect ENAMETOOLONG 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/h/$LONG_NAME"
	assert_eq "$(names "$NS")" h "keys"
	assert_eq "$(names "$NS/h")" "" "fields"
}

@test "EROFS: no create on a read-only mount" {
	mkdir "$NS/h"
	ro_remount
	expect EROFS 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/k"
	expect EROFS 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/h/f"
	expect EROFS 'os.mknod(a[0], 0o644 | 0o100000)' "$NS/k"
	assert_eq "$(names "$NS")" h "keys"
}

@test "mknod of a regular file works; FIFOs and devices are EPERM (docs/posix.md)" {
	expect OK 'os.mknod(a[0], 0o644 | 0o100000)' "$NS/r"
	assert_size "$NS/r" 0
	expect EPERM 'os.mkfifo(a[0])' "$NS/fifo"
	expect EPERM 'os.mknod(a[0], 0o644 | 0o020000, os.makedev(1, 3))' "$NS/dev"
	assert_eq "$(names "$NS")" r "keys"
}

@test "a file at the root is EPERM: the root holds namespaces (docs/posix.md)" {
	expect EPERM 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$KVFS_MNT/f"
	[ ! -e "$KVFS_MNT/f" ]
}

@test "a list position past the end is EINVAL (docs/posix.md)" {
	mktype "$NS/l" list
	expect EINVAL 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/l/5"
	assert_eq "$(names "$NS/l")" "" "positions"
}

# Modes and owners at creation (docs/posix.md "Attributes"): the mode
# with the caller's umask applied, and the caller's uid and gid, stored.

@test "creat, open(O_CREAT) and mknod take the mode and the umask: keys and entries" {
	mkdir "$NS/h"
	mktype "$NS/st" set
	mktype "$NS/z" zset
	mktype "$NS/l" list
	mktype "$NS/si" sortedint
	expect OK '
os.umask(0o077)
for p in a[:4]:
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
os.umask(0)
os.close(os.open(a[4], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o640))
os.umask(0o027)
os.mknod(a[5], 0o666 | 0o100000)
os.mknod(a[6], 0o604 | 0o100000)
os.umask(0o022)
fd = os.open(a[7], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o444)
os.write(fd, b"1\n")
os.close(fd)
os.close(os.open(a[8], os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
' "$NS/s" "$NS/h/f" "$NS/st/m" "$NS/l/0" "$NS/h/g" "$NS/n" "$NS/h/n" "$NS/z/m" "$NS/si/7"
	want="600 0:0
600 0:0
600 0:0
600 0:0
640 0:0
640 0:0
600 0:0
444 0:0
600 0:0"
	paths=("$NS/s" "$NS/h/f" "$NS/st/m" "$NS/l/0" "$NS/h/g" "$NS/n" "$NS/h/n" "$NS/z/m" "$NS/si/7")
	assert_eq "$(mode_owner "${paths[@]}")" "$want" "modes"
	kvfs_remount
	assert_eq "$(mode_owner "${paths[@]}")" "$want" "modes after a remount"
}

@test "a shell redirection under umask 077 makes a 0600 file; the default umask 0644" {
	mkdir "$NS/h"
	(umask 077 && echo secret >"$NS/f" && echo v >"$NS/h/f")
	(umask 022 && echo open >"$NS/g")
	assert_eq "$(mode_owner "$NS/f" "$NS/h/f" "$NS/g" | paste -sd,)" "600 0:0,600 0:0,644 0:0"
	kvfs_remount
	assert_eq "$(mode_owner "$NS/f" "$NS/h/f" "$NS/g" | paste -sd,)" "600 0:0,600 0:0,644 0:0"
	assert_bytes "$NS/f" $'secret\n'
}

@test "with allow_other a file made by another user is that user's: chmod and reopen work" {
	kvfs_remount -o allow_other,default_permissions
	chmod 1777 "$NS"
	mkdir -m 0777 "$NS/h"
	as_nobody "umask 022 && echo a >'$NS/o' && echo b >'$NS/h/o' && mkdir '$NS/d' && mkdir -m 0700 '$NS/e'"
	assert_eq "$(mode_owner "$NS/o" "$NS/h/o" "$NS/d" "$NS/e" | paste -sd,)" \
		"644 65534:65534,644 65534:65534,755 65534:65534,700 65534:65534" "owners"
	as_nobody "chmod 600 '$NS/o' '$NS/h/o' && echo more >>'$NS/o' && echo c >'$NS/h/o'"
	assert_bytes "$NS/o" $'a\nmore\n'
	assert_bytes "$NS/h/o" $'c\n'
	kvfs_remount -o allow_other,default_permissions
	assert_eq "$(mode_owner "$NS" "$NS/o" "$NS/h/o" "$NS/d" | paste -sd,)" \
		"1777 0:0,600 65534:65534,600 65534:65534,755 65534:65534" "after a remount"
	as_nobody "echo again >>'$NS/o'"
	assert_bytes "$NS/o" $'a\nmore\nagain\n'
}

@test "creating a key moves its namespace's mtime and ctime at once" {
	mkdir "$KVFS_MNT/app"
	for ns in "$NS" "$KVFS_MNT/app"; do
		before=$(times_ns "$ns")
		sleep 0.05
		echo x >"$ns/k"
		assert_later "$before" "$(times_ns "$ns")" "$ns: a string key"
		before=$(times_ns "$ns")
		sleep 0.05
		mkdir "$ns/h"
		assert_later "$before" "$(times_ns "$ns")" "$ns: mkdir of a hash"
	done
	after=$(times_ns "$NS")
	kvfs_remount
	assert_eq "$(times_ns "$NS")" "$after" "namespace times after a remount"
}
