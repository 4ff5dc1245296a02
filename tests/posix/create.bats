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
