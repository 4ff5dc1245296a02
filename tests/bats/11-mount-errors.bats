#!/usr/bin/env bats
# Mount-time failures (issue 15, items 12 and 13): each is one line saying
# what is wrong and exits with its own status (docs/errors.md, "At mount
# time"), and nothing is mounted. Bad option values are refused (2).

load helper

# try_mount [ARGS...]: run kvfs in the foreground on ARGS (options, then
# DBDIR MOUNTPOINT), as `run` does; a mount that happens anyway is
# caught by the timeout and by not_mounted.
try_mount() {
	run timeout 20 "$KVFS_BIN" -f "$@" 3>&-
}

# failed STATUS TEXT [MNT]: the last try_mount exited with STATUS, printed
# one line holding TEXT, and left nothing mounted on MNT (KVFS_MNT).
failed() {
	if [ "$status" -ne "$1" ] || [ "${#lines[@]}" -ne 1 ] || [[ "$output" != *"$2"* ]]; then
		echo "expected status $1 and one line with '$2'; got status $status:" >&2
		printf '%s\n' "$output" >&2
		return 1
	fi
	run mountpoint -q "${3:-$KVFS_MNT}"
	[ "$status" -ne 0 ]
}

# ------------------------------------------------------------ DBDIR

@test "DBDIR missing with -o ro: 'no such directory', status 3, nothing created" {
	try_mount -o ro "$BATS_TEST_TMPDIR/nodb" "$KVFS_MNT"
	failed 3 "nodb: no such directory"
	[ ! -e "$BATS_TEST_TMPDIR/nodb" ]
}

@test "DBDIR missing with its parent: 'no such directory', status 3" {
	try_mount "$BATS_TEST_TMPDIR/no/db" "$KVFS_MNT"
	failed 3 "no/db: no such directory, and its parent does not exist"
}

@test "DBDIR is a file: 'not a directory', status 3" {
	echo x >"$BATS_TEST_TMPDIR/file"
	try_mount "$BATS_TEST_TMPDIR/file" "$KVFS_MNT"
	failed 3 "file: not a directory"
}

@test "DBDIR without permission for the user running kvfs: 'permission denied', status 4" {
	kvfs_mount
	kvfs_unmount
	chmod 0700 "$KVFS_DB"
	chmod 0777 "$KVFS_MNT"
	run as_nobody "timeout 20 '$KVFS_BIN' -f '$KVFS_DB' '$KVFS_MNT' 2>&1"
	failed 4 "permission denied"
	# the database below a directory it may enter, but not write
	chmod 0755 "$KVFS_DB"
	run as_nobody "timeout 20 '$KVFS_BIN' -f '$KVFS_DB' '$KVFS_MNT' 2>&1"
	failed 4 "db/db: permission denied"
}

@test "a non-empty directory without a database: 'not a RocksDB database', status 5, nothing created" {
	mkdir "$KVFS_DB"
	echo data >"$KVFS_DB/dump.rdb"
	try_mount "$KVFS_DB" "$KVFS_MNT"
	failed 5 "not a RocksDB database"
	assert_eq "$(ls -A "$KVFS_DB")" dump.rdb "entries of DBDIR"
}

@test "a CURRENT file that is not RocksDB's: 'not a RocksDB database, or a damaged one', status 5" {
	mkdir "$KVFS_DB"
	echo junk >"$KVFS_DB/CURRENT"
	try_mount "$KVFS_DB" "$KVFS_MNT"
	failed 5 "not a RocksDB database, or a damaged one"
}

@test "a RocksDB without Kvrocks's column families: refused read-write (status 5), -o ro shows it empty; nothing added" {
	ldb --db="$KVFS_DB" --create_if_missing put a b >/dev/null
	try_mount "$KVFS_DB" "$KVFS_MNT"
	failed 5 "a RocksDB without Kvrocks's column families (no \"metadata\"): not Kvrocks data; kvfs adds none"
	kvfs_mount -o ro
	grep -q "without Kvrocks's column families (no \"metadata\"): not Kvrocks data; -o ro adds none" "$KVFS_LOG"
	assert_eq "$(ls -A "$NS")" "" "the default namespace"
	kvfs_unmount
	run ldb --db="$KVFS_DB" list_column_families
	[[ "$output" == *"{default}"* ]]
	assert_eq "$(ldb --db="$KVFS_DB" get a)" b
}

@test "a Kvrocks database missing newer column families gets them, as Kvrocks does; -o ro says it lacks them" {
	ldb --db="$KVFS_DB" --create_if_missing put a b >/dev/null
	ldb --db="$KVFS_DB" create_column_family metadata >/dev/null
	kvfs_mount -o ro
	grep -q 'without Kvrocks.s column families zset_score pubsub propagate stream search' "$KVFS_LOG"
	kvfs_unmount
	kvfs_mount
	grep -q "adding Kvrocks's missing column families zset_score" "$KVFS_LOG"
	echo v >"$NS/k"
	kvfs_unmount
	run ldb --db="$KVFS_DB" list_column_families
	[[ "$output" == *"{default, metadata, zset_score, pubsub, propagate, stream, search}"* ]]
}

@test "a database in use by another process: the process named, status 6" {
	kvfs_mount
	mkdir "$BATS_TEST_TMPDIR/mnt2"
	run timeout 20 "$KVFS_BIN" -f "$KVFS_DB" "$BATS_TEST_TMPDIR/mnt2" 3>&-
	failed 6 "in use by another process: $KVFS_PID (kvfs) holds its lock" "$BATS_TEST_TMPDIR/mnt2"
	[ -d "$NS" ] # the first mount is untouched
}

@test "without -f the status still reaches the shell: a database in use is 6" {
	kvfs_mount
	mkdir "$BATS_TEST_TMPDIR/mnt2"
	run timeout 20 "$KVFS_BIN" "$KVFS_DB" "$BATS_TEST_TMPDIR/mnt2" 3>&-
	[ "$status" -eq 6 ]
	[[ "$output" == *"in use by another process"* ]]
}

# ------------------------------------------------------ mount point

@test "a missing mount point: 'no such mount point', status 7, no database created" {
	try_mount "$KVFS_DB" "$BATS_TEST_TMPDIR/nomnt"
	failed 7 "nomnt: no such mount point"
	[ ! -e "$KVFS_DB" ]
}

@test "a mount point that is a file: 'not a directory', status 7" {
	echo x >"$BATS_TEST_TMPDIR/file"
	try_mount "$KVFS_DB" "$BATS_TEST_TMPDIR/file"
	failed 7 "the mount point is not a directory"
}

@test "a mount point something is mounted on: 'mount point busy', status 7" {
	kvfs_mount
	try_mount "$BATS_TEST_TMPDIR/db2" "$KVFS_MNT"
	[ "$status" -eq 7 ]
	[ "${#lines[@]}" -eq 1 ]
	[[ "$output" == *"mount point busy: fuse.kvfs kvfs:$KVFS_DB is mounted there"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/db2" ]
}

@test "a mount point whose daemon was killed (a dead FUSE mount): 'mount point busy', status 7" {
	kvfs_mount
	kill -9 "$KVFS_PID"
	wait "$KVFS_PID" 2>/dev/null || true
	KVFS_PID=
	try_mount "$BATS_TEST_TMPDIR/db2" "$KVFS_MNT"
	fusermount3 -u -z "$KVFS_MNT"
	[ "$status" -eq 7 ]
	[ "${#lines[@]}" -eq 1 ]
	# the kernel may still answer stat from its cache, or not any more
	[[ "$output" == *"mount point busy: "* ]]
}

@test "a mount point the user may not write: 'permission denied', status 4" {
	run as_nobody "timeout 20 '$KVFS_BIN' -f '$BATS_TEST_TMPDIR/db2' '$KVFS_MNT' 2>&1"
	failed 4 "mount point: permission denied"
	[ ! -e "$BATS_TEST_TMPDIR/db2" ]
}

# ---------------------------------------------------- option values

@test "bad -o timeout= and -o threads= values are refused with the range, status 2" {
	local v
	for v in timeout=-1 timeout=abc timeout=5x timeout=nan timeout=inf timeout= \
		timeout=31536001 threads=0 threads=-5 threads=100000 threads=1.5 threads=x threads=; do
		try_mount -o "$v" "$KVFS_DB" "$KVFS_MNT"
		failed 2 "-o $v: needs "
	done
	[ ! -e "$KVFS_DB" ]
}

@test "bad -o uid=, gid= and umask= values are refused, status 2" {
	local v
	for v in uid=-1 uid=4294967295 uid=abc gid=-1 gid=1x umask=8 umask=1000 umask=-2; do
		try_mount -o "$v" "$KVFS_DB" "$KVFS_MNT"
		failed 2 "-o $v: needs "
	done
}

@test "an option neither kvfs nor libfuse knows is a usage error too, status 2" {
	try_mount -o bogus "$KVFS_DB" "$KVFS_MNT"
	[ "$status" -eq 2 ]
	[[ "$output" == *"unknown option(s): \`-o bogus'"* ]]
	run mountpoint -q "$KVFS_MNT"
	[ "$status" -ne 0 ]
}

@test "the bounds of -o timeout= and -o threads= are accepted" {
	kvfs_mount -o timeout=0,threads=1
	echo v >"$NS/k"
	kvfs_remount -o timeout=31536000,threads=1024,umask=0777,uid=0,gid=0
	assert_bytes "$NS/k" $'v\n'
}
