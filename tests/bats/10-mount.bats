#!/usr/bin/env bats
# Mounting: clean exit, the root as a list of namespaces, -o ro, -o ns=,
# the reserved namespace, and both database directory layouts.

load helper

@test "mount and unmount: the daemon exits with status 0" {
	kvfs_mount
	mountpoint -q "$KVFS_MNT"
	kvfs_unmount
	run mountpoint -q "$KVFS_MNT"
	[ "$status" -ne 0 ]
}

@test "the default namespace /__namespace exists on a new database" {
	kvfs_mount
	[ -d "$NS" ]
	assert_eq "$(ls -A "$NS")" "" "keys of a new database"
}

@test "ls / lists the default namespace once a key is written" {
	kvfs_mount
	printf v >"$NS/k"
	run ls -1 "$KVFS_MNT"
	[ "$status" -eq 0 ]
	[[ $'\n'"$output"$'\n' == *$'\n__namespace\n'* ]]
}

@test "mkdir at the root creates a namespace that survives a remount while empty" {
	kvfs_mount
	mkdir "$KVFS_MNT/newns"
	[ -d "$KVFS_MNT/newns" ]
	kvfs_remount
	run ls -1 "$KVFS_MNT"
	[[ $'\n'"$output"$'\n' == *$'\n'newns$'\n'* ]]
	[ -d "$KVFS_MNT/newns" ]
	assert_eq "$(ls -A "$KVFS_MNT/newns")" "" "entries of the new namespace"
}

@test "a key written in a new namespace is read back there, not in the default one" {
	kvfs_mount
	mkdir "$KVFS_MNT/newns"
	printf v >"$KVFS_MNT/newns/k"
	kvfs_remount
	assert_bytes "$KVFS_MNT/newns/k" v
	[ ! -e "$NS/k" ]
}

@test "rmdir of a non-empty namespace fails with ENOTEMPTY and keeps it" {
	kvfs_mount
	mkdir "$KVFS_MNT/ns2"
	printf v >"$KVFS_MNT/ns2/k"
	run rmdir "$KVFS_MNT/ns2"
	[ "$status" -eq 1 ]
	[[ $output == *"Directory not empty"* ]]
	assert_bytes "$KVFS_MNT/ns2/k" v
	kvfs_remount
	assert_bytes "$KVFS_MNT/ns2/k" v
}

@test "rmdir of an empty namespace removes it, also after a remount" {
	kvfs_mount
	mkdir "$KVFS_MNT/ns2"
	rmdir "$KVFS_MNT/ns2"
	[ ! -e "$KVFS_MNT/ns2" ]
	kvfs_remount
	[ ! -e "$KVFS_MNT/ns2" ]
	run ls -1 "$KVFS_MNT"
	[[ $'\n'"$output"$'\n' != *$'\n'ns2$'\n'* ]]
}

@test "-o ro: every kind of write fails with EROFS and changes nothing" {
	kvfs_mount
	printf v >"$NS/k"
	mkdir "$NS/h"
	printf w >"$NS/h/f"
	kvfs_remount -o ro

	run errno_of 'open(a[0], "w")' "$NS/k"
	assert_eq "$output" EROFS "open(O_TRUNC) of a key"
	run errno_of 'open(a[0], "a").write("x")' "$NS/k"
	assert_eq "$output" EROFS "open(O_APPEND) of a key"
	run errno_of 'open(a[0], "x")' "$NS/new"
	assert_eq "$output" EROFS "create"
	run errno_of 'os.truncate(a[0], 0)' "$NS/k"
	assert_eq "$output" EROFS "truncate"
	run errno_of 'os.unlink(a[0])' "$NS/k"
	assert_eq "$output" EROFS "unlink"
	run errno_of 'os.rename(a[0], a[1])' "$NS/k" "$NS/k2"
	assert_eq "$output" EROFS "rename"
	run errno_of 'os.mkdir(a[0])' "$NS/d"
	assert_eq "$output" EROFS "mkdir of a key"
	run errno_of 'os.mkdir(a[0])' "$KVFS_MNT/newns"
	assert_eq "$output" EROFS "mkdir of a namespace"
	run errno_of 'os.unlink(a[0])' "$NS/h/f"
	assert_eq "$output" EROFS "unlink of a field"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"hash")' "$NS/k"
	assert_eq "$output" EROFS "setxattr"

	kvfs_remount
	assert_bytes "$NS/k" v
	assert_bytes "$NS/h/f" w
	[ ! -e "$NS/new" ]
	[ ! -e "$NS/k2" ]
	[ ! -e "$NS/d" ]
	[ ! -e "$KVFS_MNT/newns" ]
}

@test "-o ro: reading works" {
	kvfs_mount
	printf value >"$NS/k"
	mkdir "$NS/h"
	printf w >"$NS/h/f"
	kvfs_remount -o ro
	assert_bytes "$NS/k" value
	assert_size "$NS/k" 5
	assert_bytes "$NS/h/f" w
	assert_eq "$(ls "$NS")" $'h\nk' "ls of the namespace"
}

@test "-o ro on a directory with no database fails without mounting or creating anything" {
	mkdir "$BATS_TEST_TMPDIR/empty"
	KVFS_DB=$BATS_TEST_TMPDIR/empty
	run timeout 20 "$KVFS_BIN" -f -o ro "$KVFS_DB" "$KVFS_MNT" 3>&-
	[ "$status" -ne 0 ]
	[ "$status" -ne 124 ] # it did not sit there mounted
	assert_eq "$(ls -A "$KVFS_DB")" "" "entries created in the empty directory"
	run mountpoint -q "$KVFS_MNT"
	[ "$status" -ne 0 ]
}

@test "-o ns=NAME shows that namespace's keys at the root" {
	kvfs_mount
	mkdir "$KVFS_MNT/myns"
	printf v >"$KVFS_MNT/myns/k"
	printf w >"$NS/other"
	kvfs_remount -o ns=myns
	assert_eq "$(ls -A "$KVFS_MNT")" k "entries of the root"
	assert_bytes "$KVFS_MNT/k" v
}

@test "-o ns=NAME: a key written at the root lands in that namespace" {
	kvfs_mount
	mkdir "$KVFS_MNT/myns"
	kvfs_remount -o ns=myns
	printf x >"$KVFS_MNT/new"
	kvfs_remount
	assert_bytes "$KVFS_MNT/myns/new" x
	[ ! -e "$NS/new" ]
}

@test "the reserved namespace __kvfs is never listed" {
	kvfs_mount
	mkdir "$NS/emptyhash"     # an empty hash is remembered in __kvfs
	mkdir "$KVFS_MNT/emptyns" # so is an empty namespace
	printf v >"$NS/k"
	run ls -a "$KVFS_MNT"
	[ "$status" -eq 0 ]
	[[ $output != *__kvfs* ]]
	kvfs_remount
	run ls -a "$KVFS_MNT"
	[ "$status" -eq 0 ]
	[[ $output != *__kvfs* ]]
	[[ $output == *emptyns* ]]
}

@test "the reserved namespace __kvfs cannot be looked up" {
	kvfs_mount
	mkdir "$NS/emptyhash"
	run errno_of 'os.stat(a[0])' "$KVFS_MNT/__kvfs"
	assert_eq "$output" ENOENT "stat of /__kvfs"
	run errno_of 'os.mkdir(a[0])' "$KVFS_MNT/__kvfs"
	[ "$output" != OK ]
}

@test "a new database gets the Kvrocks layout (DBDIR/db) and mounts again" {
	kvfs_mount
	printf v >"$NS/k"
	kvfs_unmount
	[ -f "$KVFS_DB/db/CURRENT" ]
	[ ! -e "$KVFS_DB/CURRENT" ]
	kvfs_mount
	assert_bytes "$NS/k" v
}

@test "a plain RocksDB directory mounts as it is" {
	kvfs_mount
	printf v >"$NS/k"
	kvfs_unmount
	mv "$KVFS_DB/db" "$BATS_TEST_TMPDIR/plain"
	KVFS_DB=$BATS_TEST_TMPDIR/plain
	kvfs_mount
	assert_bytes "$NS/k" v
	printf w >"$NS/k2"
	kvfs_remount
	assert_bytes "$NS/k2" w
	kvfs_unmount
	[ ! -e "$KVFS_DB/db" ] # opened in place, no Kvrocks layout added
}

@test "-o ns=__kvfs is refused: the reserved namespace is never mounted" {
	run timeout 20 "$KVFS_BIN" -f -o ns=__kvfs "$KVFS_DB" "$KVFS_MNT" 3>&-
	[ "$status" -eq 2 ] # a usage error
	[[ "$output" == *"kvfs's own"* ]]
	run mountpoint -q "$KVFS_MNT"
	[ "$status" -ne 0 ]
}

@test "the default namespace cannot be removed (EBUSY), even when empty" {
	kvfs_mount
	run errno_of 'os.rmdir(a[0])' "$NS"
	assert_eq "$output" EBUSY
	[ -d "$NS" ]
}

@test "without -f kvfs goes to the background, serves requests, and a relative DBDIR works" {
	cd "$BATS_TEST_TMPDIR"
	run "$KVFS_BIN" reldb "$KVFS_MNT"
	[ "$status" -eq 0 ]
	mountpoint -q "$KVFS_MNT"
	echo hi >"$KVFS_MNT/__namespace/k"
	assert_bytes "$KVFS_MNT/__namespace/k" $'hi\n'
	[ -e "$BATS_TEST_TMPDIR/reldb/db/CURRENT" ]
	fusermount3 -u "$KVFS_MNT"
	# the daemon exits by itself once unmounted
	for _ in $(seq 1 100); do
		pgrep -f "$KVFS_BIN reldb" >/dev/null || break
		sleep 0.1
	done
	run pgrep -f "$KVFS_BIN reldb"
	[ "$status" -ne 0 ]
}

@test "without -f a database that cannot be opened is reported with its exit status (3: none there)" {
	mkdir "$BATS_TEST_TMPDIR/empty"
	run "$KVFS_BIN" -o ro "$BATS_TEST_TMPDIR/empty" "$KVFS_MNT"
	[ "$status" -eq 3 ]
	[[ "$output" == *"empty: no database there"* ]]
	run mountpoint -q "$KVFS_MNT"
	[ "$status" -ne 0 ]
}
