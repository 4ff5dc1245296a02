#!/usr/bin/env bats
# open(2) (POSIX conformance, pjdfstest style; docs/posix.md): keys and
# entries open as files, the errno of each failure POSIX names, and the
# state after.

load posix

@test "open O_RDONLY of a key and of a field reads the value" {
	printf abc >"$NS/s"
	mkdir "$NS/h"
	printf xyz >"$NS/h/f"
	expect OK 'assert os.read(os.open(a[0], os.O_RDONLY), 9) == b"abc"' "$NS/s"
	expect OK 'assert os.read(os.open(a[0], os.O_RDONLY), 9) == b"xyz"' "$NS/h/f"
}

@test "open O_WRONLY|O_TRUNC empties the value, O_APPEND appends" {
	printf abc >"$NS/s"
	expect OK 'os.close(os.open(a[0], os.O_WRONLY | os.O_TRUNC))' "$NS/s"
	assert_size "$NS/s" 0
	printf abc >"$NS/s"
	expect OK 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"de"); os.close(fd)' "$NS/s"
	assert_bytes "$NS/s" abcde
}

@test "ENOENT: a missing key, field, or namespace, without O_CREAT" {
	mkdir "$NS/h"
	expect ENOENT 'os.open(a[0], os.O_RDONLY)' "$NS/nope"
	expect ENOENT 'os.open(a[0], os.O_RDWR)' "$NS/h/nope"
	expect ENOENT 'os.open(a[0], os.O_RDONLY)' "$KVFS_MNT/nons/k"
	expect ENOENT 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/nodir/k"
	assert_eq "$(names "$NS")" h "keys"
	assert_eq "$(names "$NS/h")" "" "fields"
}

@test "EEXIST: O_CREAT|O_EXCL on a key, a field, a hash, a namespace" {
	printf abc >"$NS/s"
	mkdir "$NS/h"
	printf xyz >"$NS/h/f"
	expect EEXIST 'os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL)' "$NS/s"
	expect EEXIST 'os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL)' "$NS/h/f"
	expect EEXIST 'os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL)' "$NS/h"
	expect EEXIST 'os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL)' "$NS"
	assert_bytes "$NS/s" abc
	assert_bytes "$NS/h/f" xyz
}

@test "ENOTDIR: a path through a file, or O_DIRECTORY on a file" {
	printf abc >"$NS/s"
	expect ENOTDIR 'os.open(a[0], os.O_RDONLY)' "$NS/s/x"
	expect ENOTDIR 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/s/x"
	expect ENOTDIR 'os.open(a[0], os.O_RDONLY | os.O_DIRECTORY)' "$NS/s"
	expect ENOTDIR 'os.open(a[0] + "/", os.O_RDONLY)' "$NS/s"
	assert_bytes "$NS/s" abc
}

@test "EISDIR: a hash, a list or a namespace opened for writing" {
	mkdir "$NS/h"
	mktype "$NS/l" list
	expect EISDIR 'os.open(a[0], os.O_WRONLY)' "$NS/h"
	expect EISDIR 'os.open(a[0], os.O_RDWR)' "$NS/l"
	expect EISDIR 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/h"
	expect EISDIR 'os.open(a[0], os.O_WRONLY)' "$NS"
	expect OK 'os.close(os.open(a[0], os.O_RDONLY | os.O_DIRECTORY))' "$NS/h"
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
}

@test "ENAMETOOLONG: a name over 255 bytes" {
	expect ENAMETOOLONG 'os.open(a[0], os.O_RDONLY)' "$NS/$LONG_NAME"
	expect ENAMETOOLONG 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/$LONG_NAME"
	assert_eq "$(names "$NS")" "" "keys"
}

@test "EROFS: opening for writing on a read-only mount; reading works" {
	printf abc >"$NS/s"
	mkdir "$NS/h"
	printf xyz >"$NS/h/f"
	ro_remount
	expect EROFS 'os.open(a[0], os.O_WRONLY)' "$NS/s"
	expect EROFS 'os.open(a[0], os.O_RDWR)' "$NS/h/f"
	expect EROFS 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/new"
	expect EROFS 'os.open(a[0], os.O_RDONLY | os.O_TRUNC)' "$NS/s"
	expect OK 'assert os.read(os.open(a[0], os.O_RDONLY), 9) == b"abc"' "$NS/s"
	assert_bytes "$NS/h/f" xyz
	[ ! -e "$NS/new" ]
}
