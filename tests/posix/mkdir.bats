#!/usr/bin/env bats
# mkdir(2) (POSIX conformance; docs/posix.md): namespaces at the root,
# empty hashes in a namespace, nothing inside a key.

load posix

@test "mkdir in a namespace makes an empty hash" {
	expect OK 'os.mkdir(a[0])' "$NS/h"
	[ -d "$NS/h" ]
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
	assert_eq "$(names "$NS/h")" "" "fields"
	kvfs_remount
	[ -d "$NS/h" ]
}

@test "mkdir at the root makes a namespace" {
	expect OK 'os.mkdir(a[0])' "$KVFS_MNT/app"
	[ -d "$KVFS_MNT/app" ]
	printf x >"$KVFS_MNT/app/k"
	assert_bytes "$KVFS_MNT/app/k" x
}

@test "EEXIST: over a key, a hash, a namespace" {
	printf abc >"$NS/s"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	expect EEXIST 'os.mkdir(a[0])' "$NS/s"
	expect EEXIST 'os.mkdir(a[0])' "$NS/h"
	expect EEXIST 'os.mkdir(a[0])' "$NS"
	assert_bytes "$NS/s" abc
	assert_bytes "$NS/h/f" v
}

@test "ENOENT: the parent does not exist" {
	expect ENOENT 'os.mkdir(a[0])' "$NS/nodir/h"
	expect ENOENT 'os.mkdir(a[0])' "$KVFS_MNT/nons/h"
	assert_eq "$(names "$NS")" "" "keys"
}

@test "ENOTDIR: the parent is a file" {
	printf abc >"$NS/s"
	expect ENOTDIR 'os.mkdir(a[0])' "$NS/s/h"
	assert_bytes "$NS/s" abc
}

@test "ENAMETOOLONG: a name over 255 bytes" {
	expect ENAMETOOLONG 'os.mkdir(a[0])' "$NS/$LONG_NAME"
	expect ENAMETOOLONG 'os.mkdir(a[0])' "$KVFS_MNT/$LONG_NAME"
	assert_eq "$(names "$NS")" "" "keys"
}

@test "EROFS: no mkdir on a read-only mount" {
	ro_remount
	expect EROFS 'os.mkdir(a[0])' "$NS/h"
	expect EROFS 'os.mkdir(a[0])' "$KVFS_MNT/app"
	[ ! -e "$NS/h" ]
}

@test "mkdir inside a key is EPERM: entries are files (docs/posix.md)" {
	mkdir "$NS/h"
	expect EPERM 'os.mkdir(a[0])' "$NS/h/d"
	assert_eq "$(names "$NS/h")" "" "fields"
}

@test "mkdir takes the mode and the umask: a hash directory and a namespace" {
	mkdir -m 0700 "$NS/h"
	(umask 077 && mkdir "$NS/h2" "$KVFS_MNT/ns2")
	mkdir -m 0711 "$KVFS_MNT/ns"
	mkdir -m 0755 "$NS/plain"
	want="700 0:0,700 0:0,700 0:0,711 0:0,755 0:0"
	paths=("$NS/h" "$NS/h2" "$KVFS_MNT/ns2" "$KVFS_MNT/ns" "$NS/plain")
	assert_eq "$(mode_owner "${paths[@]}" | paste -sd,)" "$want" "modes"
	kvfs_remount
	assert_eq "$(mode_owner "${paths[@]}" | paste -sd,)" "$want" "modes after a remount"
	# A namespace made again starts with the mode of its new mkdir.
	rmdir "$KVFS_MNT/ns"
	mkdir "$KVFS_MNT/ns"
	assert_eq "$(mode_owner "$KVFS_MNT/ns")" "755 0:0" "a namespace made again"
}
