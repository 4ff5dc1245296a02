#!/usr/bin/env bats
# Issue 14: no acknowledged write is ever lost or corrupted, whatever other
# processes do at the same time. Each test races real processes on a fresh
# mount with tests/contention/contend.py (its header describes the
# scenarios and the exact model each one keeps), then unmounts, mounts
# again and checks the tree against the saved model a second time.
#
# KVFS_CONTENTION_SECONDS (default 8) is the length of each race;
# `make stress` runs the same scenarios longer (STRESS_SECONDS).

load helper

CONTEND=$BATS_TEST_DIRNAME/../contention/contend.py
# a remount after a race replays the write-ahead log of many rewrites
export KVFS_MOUNT_WAIT=${KVFS_MOUNT_WAIT:-60}

setup() {
	kvfs_setup
	kvfs_mount
}

# contend SCENARIO: race, remount, check again. The driver's count lines
# (and examples of each violation) are the test's output; fails if either
# step found a violation or the daemon did not exit cleanly.
contend() {
	local rc=0 state=$BATS_TEST_TMPDIR/state
	python3 "$CONTEND" run "$1" "$NS" "$state" "${KVFS_CONTENTION_SECONDS:-8}" || rc=1
	kvfs_remount
	python3 "$CONTEND" check "$1" "$NS" "$state" || rc=1
	return "$rc"
}

@test "rename-append: appends to fields swapped by renames all stay, under their names" {
	contend rename-append
}

@test "append-list: appends to 4 fields beside listers, staters and readers are never lost" {
	contend append-list
}

@test "read-torn: a single read() of a file appended, truncated and renamed over is whole lines" {
	contend read-torn
}

@test "create-race: open(O_CREAT) never fails while the name is renamed over and unlinked" {
	contend create-race
}

@test "mixed: appends, overwrites, renames, unlinks and readers on a hash and on string keys" {
	local rc=0
	contend mixed || rc=1
	kvfs_unmount
	ldb_scan metadata >"$BATS_TEST_TMPDIR/meta.scan"
	ldb_scan default >"$BATS_TEST_TMPDIR/default.scan"
	# the hash's metadata size equals its sub-key records (ldb, not kvfs)
	python3 "$CONTEND" ldb-hash "$BATS_TEST_TMPDIR/meta.scan" "$BATS_TEST_TMPDIR/default.scan" mh || rc=1
	return "$rc"
}
