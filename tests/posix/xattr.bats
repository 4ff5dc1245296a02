#!/usr/bin/env bats
# POSIX conformance, pjdfstest style: setxattr/getxattr/listxattr/
# removexattr on kvfs (Linux semantics). See docs/posix.md.

load ../bats/helper

setup() {
	kvfs_setup
	kvfs_mount
	echo x >"$NS/s"
	mkdir "$NS/h"
	echo v >"$NS/h/f"
}

# xcall PATH OP NAME [SIZE]: raw getxattr/listxattr with a buffer of SIZE
# bytes through ctypes; prints the result length or the errno name.
xcall() {
	python3 - "$@" <<'PY'
import ctypes, errno, os, sys
libc = ctypes.CDLL(None, use_errno=True)
path, op, name, size = sys.argv[1].encode(), sys.argv[2], sys.argv[3].encode(), int(sys.argv[4])
buf = ctypes.create_string_buffer(max(size, 1))
if op == "get":
    r = libc.getxattr(path, name, buf, ctypes.c_size_t(size))
else:
    r = libc.listxattr(path, buf, ctypes.c_size_t(size))
print(errno.errorcode[ctypes.get_errno()] if r < 0 else r)
PY
}

@test "setxattr and getxattr of user.* on a key, a key directory and an entry" {
	for p in s h h/f; do
		run errno_of 'os.setxattr(a[0], "user.t", b"v\x00w")' "$NS/$p"
		assert_eq "$output" OK "$p"
		run python3 -c 'import os, sys; print(os.getxattr(sys.argv[1], "user.t"))' "$NS/$p"
		assert_eq "$output" "b'v\\x00w'" "$p"
	done
}

@test "an empty value is a value" {
	run errno_of 'os.setxattr(a[0], "user.e", b"")' "$NS/s"
	assert_eq "$output" OK
	run xcall "$NS/s" get user.e 0
	assert_eq "$output" 0
}

@test "getxattr of a missing attribute: ENODATA" {
	run errno_of 'os.getxattr(a[0], "user.none")' "$NS/h/f"
	assert_eq "$output" ENODATA
}

@test "XATTR_CREATE on an existing attribute: EEXIST, value unchanged" {
	setfattr -n user.a -v 1 "$NS/s"
	run errno_of 'os.setxattr(a[0], "user.a", b"2", os.XATTR_CREATE)' "$NS/s"
	assert_eq "$output" EEXIST
	assert_eq "$(getfattr --only-values -n user.a "$NS/s")" 1
}

@test "XATTR_REPLACE of a missing attribute: ENODATA, nothing created" {
	run errno_of 'os.setxattr(a[0], "user.a", b"2", os.XATTR_REPLACE)' "$NS/s"
	assert_eq "$output" ENODATA
	run errno_of 'os.getxattr(a[0], "user.a")' "$NS/s"
	assert_eq "$output" ENODATA
}

@test "removexattr removes; of a missing attribute: ENODATA" {
	setfattr -n user.a -v 1 "$NS/h"
	run errno_of 'os.removexattr(a[0], "user.a")' "$NS/h"
	assert_eq "$output" OK
	run errno_of 'os.removexattr(a[0], "user.a")' "$NS/h"
	assert_eq "$output" ENODATA
}

@test "a buffer too small for the value or the list: ERANGE; size 0 asks the size" {
	setfattr -n user.a -v 12345 "$NS/s"
	run xcall "$NS/s" get user.a 2
	assert_eq "$output" ERANGE
	run xcall "$NS/s" get user.a 0
	assert_eq "$output" 5
	run xcall "$NS/s" list - 3
	assert_eq "$output" ERANGE
	run xcall "$NS/s" list - 0
	# user.kvfs.type\0 user.a\0
	assert_eq "$output" 22
}

@test "a name longer than 255 bytes: ERANGE; a value over 64 KiB: E2BIG" {
	run errno_of 'os.setxattr(a[0], "user." + "n" * 251, b"v")' "$NS/s"
	assert_eq "$output" ERANGE
	run errno_of 'os.setxattr(a[0], "user.big", b"v" * 65537)' "$NS/s"
	assert_eq "$output" E2BIG
	run errno_of 'os.getxattr(a[0], "user.big")' "$NS/s"
	assert_eq "$output" ENODATA
}

@test "all of one file's attributes together over 64 KiB: ENOSPC" {
	run errno_of 'os.setxattr(a[0], "user.a", b"v" * 40000)' "$NS/s"
	assert_eq "$output" OK
	run errno_of 'os.setxattr(a[0], "user.b", b"v" * 40000)' "$NS/s"
	assert_eq "$output" ENOSPC
	run errno_of 'os.getxattr(a[0], "user.b")' "$NS/s"
	assert_eq "$output" ENODATA
}

@test "namespaces other than user, and user.kvfs.* names kvfs does not know: ENOTSUP" {
	run errno_of 'os.setxattr(a[0], "trusted.a", b"v")' "$NS/s"
	assert_eq "$output" ENOTSUP
	run errno_of 'os.setxattr(a[0], "security.a", b"v")' "$NS/s"
	assert_eq "$output" ENOTSUP
	run errno_of 'os.setxattr(a[0], "user.kvfs.other", b"v")' "$NS/s"
	assert_eq "$output" ENOTSUP
	run errno_of 'os.getxattr(a[0], "security.capability")' "$NS/s"
	assert_eq "$output" ENODATA
}

@test "xattrs of a missing name: ENOENT" {
	run errno_of 'os.setxattr(a[0], "user.a", b"v")' "$NS/missing"
	assert_eq "$output" ENOENT
	run errno_of 'os.getxattr(a[0], "user.a")' "$NS/h/missing"
	assert_eq "$output" ENOENT
}

@test "setxattr and removexattr on a read-only mount: EROFS, nothing changed" {
	setfattr -n user.a -v 1 "$NS/s"
	kvfs_remount -o ro
	run errno_of 'os.setxattr(a[0], "user.a", b"2")' "$NS/s"
	assert_eq "$output" EROFS
	run errno_of 'os.removexattr(a[0], "user.a")' "$NS/s"
	assert_eq "$output" EROFS
	assert_eq "$(getfattr --only-values -n user.a "$NS/s")" 1
}
