#!/usr/bin/env bats
# POSIX conformance, pjdfstest style: chown(2) on kvfs. See docs/posix.md.

load ../bats/helper

setup() {
	kvfs_setup
	kvfs_mount
	echo x >"$NS/s"
	mkdir "$NS/h"
	echo v >"$NS/h/f"
}

owner_of() {
	stat -c '%u %g' "$1"
}

@test "chown sets owner and group of a key, a key directory and an entry" {
	for p in s h h/f; do
		run errno_of 'os.chown(a[0], 1234, 5678)' "$NS/$p"
		assert_eq "$output" OK "$p"
		assert_eq "$(owner_of "$NS/$p")" "1234 5678" "$p"
	done
	kvfs_remount
	assert_eq "$(owner_of "$NS/h/f")" "1234 5678"
}

@test "chown with -1 keeps that id" {
	chown 1234:5678 "$NS/s"
	run errno_of 'os.chown(a[0], -1, 42)' "$NS/s"
	assert_eq "$output" OK
	assert_eq "$(owner_of "$NS/s")" "1234 42"
	run errno_of 'os.chown(a[0], 7, -1)' "$NS/s"
	assert_eq "$(owner_of "$NS/s")" "7 42"
}

@test "chown of a missing name: ENOENT" {
	run errno_of 'os.chown(a[0], 1, 1)' "$NS/missing"
	assert_eq "$output" ENOENT
}

@test "chown of a name longer than 255 bytes: ENAMETOOLONG" {
	run errno_of 'os.chown(a[0], 1, 1)' "$NS/$(printf 'n%.0s' {1..256})"
	assert_eq "$output" ENAMETOOLONG
}

@test "chown on a read-only mount: EROFS, owner unchanged" {
	chown 1234:5678 "$NS/s"
	kvfs_remount -o ro
	run errno_of 'os.chown(a[0], 1, 1)' "$NS/s"
	assert_eq "$output" EROFS
	assert_eq "$(owner_of "$NS/s")" "1234 5678"
}
