#!/usr/bin/env bats
# ftruncate(2) on an open file (POSIX conformance; docs/posix.md): the
# open file sees the new size at once; the value is stored at close.

load posix

@test "ftruncate shrinks and grows through the open file; the value is stored at close" {
	printf abcdef >"$NS/s"
	expect OK '
fd = os.open(a[0], os.O_RDWR)
os.ftruncate(fd, 2)
assert os.fstat(fd).st_size == 2
os.ftruncate(fd, 4)
assert os.pread(fd, 9, 0) == b"ab\0\0"
os.close(fd)' "$NS/s"
	assert_eq "$(xxd -p "$NS/s")" 61620000 "bytes"
	kvfs_remount
	assert_eq "$(xxd -p "$NS/s")" 61620000 "bytes"
}

@test "ftruncate to 0 then a write: an editor's in-place save of a field and a zset member" {
	mkdir "$NS/h"
	printf 'old value' >"$NS/h/f"
	mktype "$NS/z" zset
	echo 12345 >"$NS/z/m"
	expect OK '
for p, v in ((a[0], b"new"), (a[1], b"7\n")):
    fd = os.open(p, os.O_WRONLY)
    os.ftruncate(fd, 0)
    os.write(fd, v)
    os.fsync(fd)
    os.close(fd)' "$NS/h/f" "$NS/z/m"
	assert_bytes "$NS/h/f" new
	assert_eq "$(cat "$NS/z/m")" 7 "score"
}

@test "EINVAL: a file open only for reading, or a negative length" {
	printf abc >"$NS/s"
	expect EINVAL 'os.ftruncate(os.open(a[0], os.O_RDONLY), 0)' "$NS/s"
	expect EINVAL 'os.ftruncate(os.open(a[0], os.O_RDWR), -1)' "$NS/s"
	assert_bytes "$NS/s" abc
}

@test "EBADF: a closed descriptor" {
	expect EBADF 'fd = os.open("/dev/null", os.O_RDONLY); os.close(fd); os.ftruncate(fd, 0)'
}

@test "EROFS: no file opens for writing on a read-only mount" {
	printf abc >"$NS/s"
	ro_remount
	expect EROFS 'os.ftruncate(os.open(a[0], os.O_RDWR), 0)' "$NS/s"
	assert_bytes "$NS/s" abc
}

@test "a refused ftruncate (a zset member grown with zeros) stores nothing" {
	mktype "$NS/z" zset
	echo 5 >"$NS/z/m"
	expect EINVAL 'fd = os.open(a[0], os.O_RDWR); os.ftruncate(fd, 300)' "$NS/z/m"
	assert_eq "$(cat "$NS/z/m")" 5 "score"
}

@test "ftruncate then stat at once: the new size, mtime and ctime, before and after close" {
	printf abcdef >"$NS/s"
	mkdir "$NS/h"
	printf abcdef >"$NS/h/f"
	for p in "$NS/s" "$NS/h/f"; do
		before=$(times_ns "$p")
		sleep 0.05
		expect OK '
fd = os.open(a[0], os.O_RDWR)
os.ftruncate(fd, 3)
s, f = os.stat(a[0]), os.fstat(fd)
m, c = map(int, a[1].split())
assert s.st_size == 3 and f.st_size == 3, (s.st_size, f.st_size)
assert s.st_mtime_ns > m and s.st_ctime_ns > c, ("stat", s.st_mtime_ns, s.st_ctime_ns, m, c)
assert f.st_mtime_ns > m and f.st_ctime_ns > c, ("fstat", f.st_mtime_ns, f.st_ctime_ns, m, c)
os.close(fd)' "$p" "$before"
		assert_later "$before" "$(times_ns "$p")" "$p after close"
		assert_size "$p" 3
	done
}
