#!/usr/bin/env bats
# truncate(2) by path (POSIX conformance; docs/posix.md): shrink, grow
# with zeros, the errno of each failure, the state after.

load posix

@test "truncate shrinks and grows a string key (zeros), and survives a remount" {
	printf abcdef >"$NS/s"
	expect OK 'os.truncate(a[0], 3)' "$NS/s"
	assert_bytes "$NS/s" abc
	expect OK 'os.truncate(a[0], 5)' "$NS/s"
	assert_eq "$(xxd -p "$NS/s")" 6162630000 "bytes"
	kvfs_remount
	assert_size "$NS/s" 5
}

@test "truncate of a hash field, a list element, a bitmap" {
	mkdir "$NS/h"
	printf abcdef >"$NS/h/f"
	mktype "$NS/l" list
	printf abcdef >"$NS/l/0"
	touch "$NS/b"
	setfattr -n user.kvfs.type -v bitmap "$NS/b"
	printf abcdef >"$NS/b"
	for p in "$NS/h/f" "$NS/l/0" "$NS/b"; do
		expect OK 'os.truncate(a[0], 2)' "$p"
		assert_bytes "$p" ab
	done
	expect OK 'os.truncate(a[0], 0)' "$NS/b"
	assert_size "$NS/b" 0
	assert_eq "$(kvfs_type "$NS/b")" bitmap "type"
}

@test "ENOENT: no such file" {
	mkdir "$NS/h"
	expect ENOENT 'os.truncate(a[0], 0)' "$NS/nope"
	expect ENOENT 'os.truncate(a[0], 0)' "$NS/h/nope"
	assert_eq "$(names "$NS")" h "keys"
}

@test "EISDIR: a hash, a namespace" {
	mkdir "$NS/h"
	expect EISDIR 'os.truncate(a[0], 0)' "$NS/h"
	expect EISDIR 'os.truncate(a[0], 0)' "$NS"
}

@test "ENOTDIR: a path through a file" {
	printf a >"$NS/s"
	expect ENOTDIR 'os.truncate(a[0], 0)' "$NS/s/x"
	assert_bytes "$NS/s" a
}

@test "EINVAL: a negative length" {
	printf abc >"$NS/s"
	expect EINVAL 'os.truncate(a[0], -1)' "$NS/s"
	assert_bytes "$NS/s" abc
}

@test "EFBIG: past the largest value (512 MiB)" {
	printf abc >"$NS/s"
	expect EFBIG 'os.truncate(a[0], 512 * 2**20 + 1)' "$NS/s"
	assert_bytes "$NS/s" abc
}

@test "ENAMETOOLONG: a name over 255 bytes" {
	expect ENAMETOOLONG 'os.truncate(a[0], 0)' "$NS/$LONG_NAME"
}

@test "EROFS: no truncate on a read-only mount" {
	printf abc >"$NS/s"
	ro_remount
	expect EROFS 'os.truncate(a[0], 0)' "$NS/s"
	assert_bytes "$NS/s" abc
}

@test "truncate of a set member to a non-zero size is EINVAL (docs/posix.md)" {
	mktype "$NS/st" set
	touch "$NS/st/m"
	expect EINVAL 'os.truncate(a[0], 1)' "$NS/st/m"
	assert_size "$NS/st/m" 0
	assert_eq "$(names "$NS/st")" m "members"
}
