#!/usr/bin/env bats
# rmdir(2) (POSIX conformance; docs/posix.md): empty directory keys and
# empty namespaces go; everything else keeps its state.

load posix

@test "rmdir removes an empty hash, an empty list, an empty namespace" {
	mkdir "$NS/h"
	mktype "$NS/l" list
	mkdir "$KVFS_MNT/app"
	expect OK 'os.rmdir(a[0])' "$NS/h"
	expect OK 'os.rmdir(a[0])' "$NS/l"
	expect OK 'os.rmdir(a[0])' "$KVFS_MNT/app"
	assert_eq "$(names "$NS")" "" "keys"
	[ ! -e "$KVFS_MNT/app" ]
	kvfs_remount
	[ ! -e "$NS/h" ]
}

@test "ENOTEMPTY: a hash with a field, a namespace with a key" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	mkdir "$KVFS_MNT/app"
	printf k >"$KVFS_MNT/app/k"
	expect ENOTEMPTY 'os.rmdir(a[0])' "$NS/h"
	expect ENOTEMPTY 'os.rmdir(a[0])' "$KVFS_MNT/app"
	assert_bytes "$NS/h/f" v
	assert_bytes "$KVFS_MNT/app/k" k
}

@test "the default namespace cannot be removed: EBUSY (docs/posix.md)" {
	expect EBUSY 'os.rmdir(a[0])' "$NS"
	[ -d "$NS" ]
}

@test "ENOTDIR: a string key, a field, a path through a file" {
	printf abc >"$NS/s"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	expect ENOTDIR 'os.rmdir(a[0])' "$NS/s"
	expect ENOTDIR 'os.rmdir(a[0])' "$NS/h/f"
	expect ENOTDIR 'os.rmdir(a[0])' "$NS/s/x"
	assert_bytes "$NS/s" abc
	assert_bytes "$NS/h/f" v
}

@test "ENOENT: no such directory" {
	expect ENOENT 'os.rmdir(a[0])' "$NS/nope"
	expect ENOENT 'os.rmdir(a[0])' "$KVFS_MNT/nons"
}

@test "EINVAL: rmdir of ." {
	mkdir "$NS/h"
	expect EINVAL 'os.rmdir(a[0] + "/.")' "$NS/h"
	[ -d "$NS/h" ]
}

@test "ENAMETOOLONG: a name over 255 bytes" {
	expect ENAMETOOLONG 'os.rmdir(a[0])' "$NS/$LONG_NAME"
}

@test "EROFS: nothing is removed on a read-only mount" {
	mkdir "$NS/h"
	mkdir "$KVFS_MNT/app"
	ro_remount
	expect EROFS 'os.rmdir(a[0])' "$NS/h"
	expect EROFS 'os.rmdir(a[0])' "$KVFS_MNT/app"
	[ -d "$NS/h" ]
	[ -d "$KVFS_MNT/app" ]
}
