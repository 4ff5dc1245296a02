#!/usr/bin/env bats
# POSIX conformance, pjdfstest style: utimensat(2) on kvfs. For each case
# the result, the errno, and the state after. See docs/posix.md.

load ../bats/helper

setup() {
	kvfs_setup
	kvfs_mount
	echo x >"$NS/s"
	mkdir "$NS/h"
	echo v >"$NS/h/f"
}

# times PATH: "atime_ns mtime_ns".
times() {
	python3 -c 'import os, sys; s = os.stat(sys.argv[1]); print(s.st_atime_ns, s.st_mtime_ns)' "$1"
}

# utime PATH ATIME_NS MTIME_NS: errno name or OK.
utime() {
	errno_of 'os.utime(a[0], ns=(int(a[1]), int(a[2])))' "$@"
}

@test "utimensat sets both times of a key, a key directory and an entry" {
	for p in s h h/f; do
		run utime "$NS/$p" 1000000000000000001 2000000000000000002
		assert_eq "$output" OK "$p"
		assert_eq "$(times "$NS/$p")" "1000000000000000001 2000000000000000002" "$p"
	done
}

@test "utimensat with both UTIME_OMIT changes nothing" {
	utime "$NS/s" 1000000000000000001 2000000000000000002
	run python3 - "$NS/s" <<'PY'
import ctypes, sys
class ts(ctypes.Structure):
    _fields_ = [("s", ctypes.c_long), ("ns", ctypes.c_long)]
omit = (1 << 30) - 2
t = (ts * 2)(ts(0, omit), ts(0, omit))
sys.exit(ctypes.CDLL(None).utimensat(-100, sys.argv[1].encode(), t, 0))
PY
	[ "$status" -eq 0 ]
	assert_eq "$(times "$NS/s")" "1000000000000000001 2000000000000000002"
}

@test "utimensat of a missing name: ENOENT, nothing created" {
	run utime "$NS/missing" 1 1
	assert_eq "$output" ENOENT
	[ ! -e "$NS/missing" ]
	run utime "$NS/h/missing" 1 1
	assert_eq "$output" ENOENT
	[ ! -e "$NS/h/missing" ]
}

@test "utimensat of a name longer than 255 bytes: ENAMETOOLONG" {
	run utime "$NS/$(printf 'n%.0s' {1..256})" 1 1
	assert_eq "$output" ENAMETOOLONG
}

@test "utimensat through a file as a directory: ENOTDIR" {
	run utime "$NS/s/x" 1 1
	assert_eq "$output" ENOTDIR
}

@test "utimensat on a read-only mount: EROFS, times unchanged" {
	utime "$NS/s" 1000000000000000001 2000000000000000002
	kvfs_remount -o ro
	run utime "$NS/s" 3 3
	assert_eq "$output" EROFS
	assert_eq "$(times "$NS/s")" "1000000000000000001 2000000000000000002"
}
