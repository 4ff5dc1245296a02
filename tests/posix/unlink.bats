#!/usr/bin/env bats
# unlink(2) (POSIX conformance; docs/posix.md): keys and entries go, the
# errno of each failure, the state after.

load posix

@test "unlink removes a string key, a field, a set member" {
	printf abc >"$NS/s"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	printf w >"$NS/h/g"
	mktype "$NS/st" set
	touch "$NS/st/a" "$NS/st/b"
	expect OK 'os.unlink(a[0])' "$NS/s"
	expect OK 'os.unlink(a[0])' "$NS/h/f"
	expect OK 'os.unlink(a[0])' "$NS/st/a"
	assert_eq "$(names "$NS")" "h st" "keys"
	assert_eq "$(names "$NS/h")" g "fields"
	assert_eq "$(names "$NS/st")" b "members"
	[ ! -e "$NS/s" ]
}

@test "the last field goes, the hash stays (empty)" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	expect OK 'os.unlink(a[0])' "$NS/h/f"
	[ -d "$NS/h" ]
	assert_eq "$(names "$NS/h")" "" "fields"
}

@test "an open file stays readable after unlink (key and field), and fstat works" {
	printf abc >"$NS/s"
	mkdir "$NS/h"
	printf abc >"$NS/h/f"
	expect OK '
for p in a:
    fd = os.open(p, os.O_RDONLY)
    os.unlink(p)
    assert os.read(fd, 9) == b"abc", p
    assert os.fstat(fd).st_size == 3, p
    os.close(fd)' "$NS/s" "$NS/h/f"
	[ ! -e "$NS/s" ]
	[ ! -e "$NS/h/f" ]
}

@test "an unlinked open file can still be written and read back; nothing is stored" {
	printf abc >"$NS/s"
	expect OK '
fd = os.open(a[0], os.O_RDWR)
os.unlink(a[0])
os.pwrite(fd, b"XY", 1)
assert os.pread(fd, 9, 0) == b"aXY", os.pread(fd, 9, 0)
os.close(fd)' "$NS/s"
	[ ! -e "$NS/s" ]
	assert_eq "$(names "$NS")" "" "keys"
}

@test "ENOENT: no such key, field, or directory" {
	mkdir "$NS/h"
	expect ENOENT 'os.unlink(a[0])' "$NS/nope"
	expect ENOENT 'os.unlink(a[0])' "$NS/h/nope"
	expect ENOENT 'os.unlink(a[0])' "$NS/nodir/f"
	assert_eq "$(names "$NS")" h "keys"
}

@test "EISDIR: unlink of a hash, a list, a namespace" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	mktype "$NS/l" list
	expect EISDIR 'os.unlink(a[0])' "$NS/h"
	expect EISDIR 'os.unlink(a[0])' "$NS/l"
	expect EISDIR 'os.unlink(a[0])' "$NS"
	assert_eq "$(names "$NS")" "h l" "keys"
	assert_bytes "$NS/h/f" v
}

@test "ENOTDIR: a path through a file" {
	printf abc >"$NS/s"
	expect ENOTDIR 'os.unlink(a[0])' "$NS/s/x"
	assert_bytes "$NS/s" abc
}

@test "ENAMETOOLONG: a name over 255 bytes" {
	expect ENAMETOOLONG 'os.unlink(a[0])' "$NS/$LONG_NAME"
}

@test "EROFS: nothing is removed on a read-only mount" {
	printf abc >"$NS/s"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	ro_remount
	expect EROFS 'os.unlink(a[0])' "$NS/s"
	expect EROFS 'os.unlink(a[0])' "$NS/h/f"
	assert_bytes "$NS/s" abc
	assert_bytes "$NS/h/f" v
}

@test "unlinking a list element moves the later ones down (docs/posix.md)" {
	mktype "$NS/l" list
	for i in 0 1 2; do printf "e$i" >"$NS/l/$i"; done
	expect OK 'os.unlink(a[0])' "$NS/l/0"
	assert_eq "$(names "$NS/l")" "0 1" "positions"
	assert_bytes "$NS/l/0" e1
	assert_bytes "$NS/l/1" e2
}

@test "a zset view cannot be removed: EACCES" {
	mktype "$NS/z" zset
	echo 1 >"$NS/z/m"
	expect EACCES 'os.unlink(a[0])' "$NS/z/.by-score"
	assert_eq "$(names "$NS/z")" m "members"
}

@test "removing a key moves its namespace's mtime and ctime at once" {
	mkdir "$KVFS_MNT/app"
	for ns in "$NS" "$KVFS_MNT/app"; do
		echo x >"$ns/k"
		mkdir "$ns/h"
		echo y >"$ns/keep"
		before=$(times_ns "$ns")
		sleep 0.05
		rm "$ns/k"
		assert_later "$before" "$(times_ns "$ns")" "$ns: unlink of a key"
		before=$(times_ns "$ns")
		sleep 0.05
		rmdir "$ns/h"
		assert_later "$before" "$(times_ns "$ns")" "$ns: rmdir of a hash"
	done
}
