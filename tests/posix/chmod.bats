#!/usr/bin/env bats
# POSIX conformance, pjdfstest style: chmod(2) on kvfs. See docs/posix.md.

load ../bats/helper

setup() {
	kvfs_setup
	kvfs_mount
	echo x >"$NS/s"
	mkdir "$NS/h"
	echo v >"$NS/h/f"
}

mode_of() {
	stat -c %a "$1"
}

@test "chmod sets the permission bits of a key, a key directory and an entry; the type stays" {
	for p in s h h/f; do
		run errno_of 'os.chmod(a[0], 0o4751)' "$NS/$p"
		assert_eq "$output" OK "$p"
		assert_eq "$(mode_of "$NS/$p")" 4751 "$p"
	done
	[ -f "$NS/s" ] && [ -d "$NS/h" ] && [ -f "$NS/h/f" ]
	kvfs_remount
	assert_eq "$(mode_of "$NS/h/f")" 4751
}

@test "chmod of a missing name: ENOENT" {
	run errno_of 'os.chmod(a[0], 0o600)' "$NS/missing"
	assert_eq "$output" ENOENT
	run errno_of 'os.chmod(a[0], 0o600)' "$NS/h/missing"
	assert_eq "$output" ENOENT
}

@test "chmod of a name longer than 255 bytes: ENAMETOOLONG" {
	run errno_of 'os.chmod(a[0], 0o600)' "$NS/$(printf 'n%.0s' {1..256})"
	assert_eq "$output" ENAMETOOLONG
}

@test "chmod through a file as a directory: ENOTDIR" {
	run errno_of 'os.chmod(a[0], 0o600)' "$NS/s/x"
	assert_eq "$output" ENOTDIR
}

@test "chmod on a read-only mount: EROFS, mode unchanged" {
	chmod 0600 "$NS/s"
	kvfs_remount -o ro
	run errno_of 'os.chmod(a[0], 0o644)' "$NS/s"
	assert_eq "$output" EROFS
	assert_eq "$(mode_of "$NS/s")" 600
}
