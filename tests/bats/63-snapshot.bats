#!/usr/bin/env bats
# Snapshots and backups (docs/mapping.md, "Live databases and backups"):
# `kvfs snapshot DBDIR DEST` of an unmounted database and of one a kvfs
# mount is writing (the daemon makes it), what the snapshot shows when
# mounted read-only (that moment, whole keys, nothing later), its hard
# links, ldb on it, its refusals; and mountscripts/kvfs-backup's snapshot
# mode end to end, with its cleanup after a failed rsync and a SIGTERM.

load helper

BACKUP=$BATS_TEST_DIRNAME/../../mountscripts/kvfs-backup

setup() {
	kvfs_setup
	SNAP_MNT=$BATS_TEST_TMPDIR/snapmnt
	SNAP_PID=
	WRITER_PID=
	LOCK_PID=
	mkdir -p "$SNAP_MNT"
	# kvfs-backup's temporary mount points go here, where the test sees them.
	export TMPDIR=$BATS_TEST_TMPDIR/tmp
	mkdir -p "$TMPDIR"
}

teardown() {
	[ -z "$WRITER_PID" ] || { kill -TERM "$WRITER_PID" 2>/dev/null; wait "$WRITER_PID" || true; }
	[ -z "$LOCK_PID" ] || { kill -TERM "$LOCK_PID" 2>/dev/null; wait "$LOCK_PID" || true; }
	snap_unmount || true
	kvfs_teardown
}

# snap_mount DIR: mount the snapshot DIR read-only at SNAP_MNT.
snap_mount() {
	"$KVFS_BIN" -f -o ro "$1" "$SNAP_MNT" </dev/null >>"$KVFS_LOG" 2>&1 3>&- &
	SNAP_PID=$!
	for ((i = 0; i < 200; i++)); do
		mountpoint -q "$SNAP_MNT" && return 0
		_kvfs_alive "$SNAP_PID" || break
		sleep 0.05
	done
	echo "snapshot $1 did not mount" >&2
	kvfs_show_log
	return 1
}

snap_unmount() {
	[ -n "$SNAP_PID" ] || return 0
	fusermount3 -u "$SNAP_MNT"
	local status=0
	wait "$SNAP_PID" || status=$?
	SNAP_PID=
	assert_eq "$status" 0 "exit status of the snapshot's kvfs"
}

# Some keys of several types.
fill() {
	printf 'hello' >"$NS/s"
	mkdir "$NS/h"
	printf 'v1' >"$NS/h/f1"
	printf 'v2' >"$NS/h/f2"
	mkdir "$NS/l"
	setfattr -n user.kvfs.type -v list "$NS/l"
	printf a >"$NS/l/0"
	printf b >"$NS/l/1"
	mkdir "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	printf 2.5 >"$NS/z/m"
	mkdir "$KVFS_MNT/other"
	printf 'x' >"$KVFS_MNT/other/k"
}

# No kvfs mount left whose source is a snapshot, no temporary mount point.
assert_no_backup_leftovers() {
	if grep -q "kvfs-backup\." /proc/self/mountinfo; then
		echo "a kvfs-backup mount is left:" >&2
		grep "kvfs-backup\." /proc/self/mountinfo >&2
		return 1
	fi
	assert_eq "$(ls -A "$TMPDIR")" "" "temporary mount points left"
}

@test "snapshot of an unmounted database: a plain RocksDB directory that mounts ro with the same tree" {
	kvfs_mount
	fill
	kvfs_unmount
	run "$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/snap"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[[ $output == *"snapshot in $BATS_TEST_TMPDIR/snap"* ]]
	[ -f "$BATS_TEST_TMPDIR/snap/CURRENT" ]
	kvfs_mount -o ro
	snap_mount "$BATS_TEST_TMPDIR/snap"
	diff -r "$KVFS_MNT" "$SNAP_MNT"
	assert_eq "$(kvfs_type "$SNAP_MNT/__namespace/l")" list "type of l"
	assert_eq "$(cat "$SNAP_MNT/__namespace/z/m")" 2.5 "score"
	run touch "$SNAP_MNT/__namespace/new"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
}

@test "the snapshot's tables are hard links of the database's (same inode, link count 2 or more)" {
	kvfs_mount
	fill
	kvfs_unmount
	"$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/snap"
	local n=0 f
	for f in "$BATS_TEST_TMPDIR"/snap/*.sst; do
		[ -e "$f" ] || continue
		local orig=$KVFS_DB/db/${f##*/}
		assert_eq "$(stat -c %i "$f")" "$(stat -c %i "$orig")" "inode of ${f##*/}"
		[ "$(stat -c %h "$f")" -ge 2 ]
		n=$((n + 1))
	done
	[ "$n" -ge 1 ] || { echo "no .sst in the snapshot" >&2; false; }
}

@test "ldb opens the snapshot and finds the keys' Kvrocks records" {
	kvfs_mount
	printf bar >"$NS/foo"
	"$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/snap"
	run ldb --db="$BATS_TEST_TMPDIR/snap" --column_family=metadata --hex scan
	[ "$status" -eq 0 ]
	# SET foo bar: 0B __namespace foo -> 81, 8 zero bytes, bar
	[[ $output == *"0x0B5F5F6E616D657370616365666F6F : 0x810000000000000000626172"* ]]
}

@test "snapshot of a database mounted read-write while a shell writes: whole keys of one moment, no later writes" {
	kvfs_mount
	mkdir "$NS/l"
	setfattr -n user.kvfs.type -v list "$NS/l"
	# Each round appends element i-1 = i to l, then sets c = i, then
	# replaces big by 100000 bytes of the digit i mod 10. c and big are
	# written under another name and renamed (one batch each): a shell's
	# `>` closes a duplicate before it writes, and kvfs commits the empty
	# file then (mapping.md section 5), a state a snapshot may show.
	(
		i=0
		while :; do
			i=$((i + 1))
			echo "$i" >"$NS/l/$((i - 1))"
			echo "$i" >"$NS/c.new"
			mv -f "$NS/c.new" "$NS/c"
			head -c 100000 /dev/zero | tr '\0' "$((i % 10))" >"$NS/big.new"
			mv -f "$NS/big.new" "$NS/big"
		done
	) 3>&- &
	WRITER_PID=$!
	for ((t = 0; t < 200; t++)); do
		[ "$(cat "$NS/c" 2>/dev/null || echo 0)" -ge 20 ] && break
		sleep 0.05
	done
	run "$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/snap"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[[ $output == *"made by the kvfs mounted at $KVFS_MNT"* ]]
	sleep 0.3 # more rounds after the snapshot
	snap_mount "$BATS_TEST_TMPDIR/snap"
	local sn=$SNAP_MNT/__namespace
	local c len
	c=$(cat "$sn/c")
	len=$(ls "$sn/l" | wc -l)
	[ "$c" -ge 20 ]
	# The list got element c-1 before c was set, and at most one more.
	[ "$len" -eq "$c" ] || [ "$len" -eq $((c + 1)) ] || {
		echo "counter $c, list length $len" >&2
		false
	}
	for ((j = 0; j < len; j++)); do
		assert_eq "$(cat "$sn/l/$j")" $((j + 1)) "element $j"
	done
	# big is one write's bytes: 100000 copies of one digit.
	assert_eq "$(stat -c %s "$sn/big")" 100000 "size of big"
	assert_eq "$(tr -d '0-9' <"$sn/big" | wc -c)" 0 "non-digits in big"
	assert_eq "$(fold -w1 <"$sn/big" | sort -u | wc -l)" 1 "digits in big"
	kill -TERM "$WRITER_PID"
	wait "$WRITER_PID" || true
	WRITER_PID=
	# The live database went on; the snapshot did not follow.
	[ "$(cat "$NS/c")" -gt "$c" ]
	assert_eq "$(cat "$sn/c")" "$c" "the snapshot's counter, after more writes"
	snap_unmount
	snap_mount "$BATS_TEST_TMPDIR/snap"
	assert_eq "$(cat "$sn/c")" "$c" "the snapshot's counter, remounted"
}

@test "kvfs snapshot DBDIR/db of a Kvrocks data directory mounted as DBDIR asks the daemon too" {
	kvfs_mount
	printf v >"$NS/k"
	run "$KVFS_BIN" snapshot "$KVFS_DB/db" "$BATS_TEST_TMPDIR/snap"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	[[ $output == *"made by the kvfs mounted at $KVFS_MNT"* ]]
	snap_mount "$BATS_TEST_TMPDIR/snap"
	assert_eq "$(cat "$SNAP_MNT/__namespace/k")" v "k in the snapshot"
}

@test "snapshot of a database mounted read-only (no lock): made beside the mount" {
	kvfs_mount
	printf v >"$NS/k"
	kvfs_remount -o ro
	run "$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/snap"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	snap_mount "$BATS_TEST_TMPDIR/snap"
	assert_eq "$(cat "$SNAP_MNT/__namespace/k")" v "k in the snapshot"
}

@test "snapshot refusals: DEST exists, DBDIR missing, no database, usage" {
	kvfs_mount
	printf v >"$NS/k"
	mkdir "$BATS_TEST_TMPDIR/dest"
	touch "$BATS_TEST_TMPDIR/dest/mine"
	run "$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/dest"
	[ "$status" -eq 1 ]
	[[ $output == *"dest exists"* ]]
	assert_eq "$(ls -A "$BATS_TEST_TMPDIR/dest")" mine "DEST's content"
	# The daemon refuses too, when asked directly.
	run setfattr -n user.kvfs.snapshot -v "$BATS_TEST_TMPDIR/dest" "$KVFS_MNT"
	[ "$status" -ne 0 ]
	[[ $output == *"File exists"* ]]
	run setfattr -n user.kvfs.snapshot -v relative/path "$KVFS_MNT"
	[[ $output == *"Invalid argument"* ]]
	run "$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/no/such/parent"
	[ "$status" -eq 1 ]
	[[ $output == *"parent directory does not exist"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/no" ]
	run "$KVFS_BIN" snapshot "$BATS_TEST_TMPDIR/missing" "$BATS_TEST_TMPDIR/s2"
	[ "$status" -eq 3 ]
	[[ $output == *"no such directory"* ]]
	mkdir "$BATS_TEST_TMPDIR/empty"
	run "$KVFS_BIN" snapshot "$BATS_TEST_TMPDIR/empty" "$BATS_TEST_TMPDIR/s2"
	[ "$status" -eq 3 ]
	[[ $output == *"no database there"* ]]
	assert_eq "$(ls -A "$BATS_TEST_TMPDIR/empty")" "" "the empty directory"
	run "$KVFS_BIN" snapshot "$KVFS_DB"
	[ "$status" -eq 2 ]
	[ ! -e "$BATS_TEST_TMPDIR/s2" ]
	grep -q "user.kvfs.snapshot: the value must be the absolute path" "$KVFS_LOG"
}

@test "only the mount's owner or root may ask the daemon for a snapshot (EPERM, logged; EACCES from the kernel)" {
	kvfs_mount -o allow_other,no_default_permissions
	printf v >"$NS/k"
	mkdir -m 0777 "$BATS_TEST_TMPDIR/pub"
	run as_nobody "'$KVFS_BIN' snapshot '$KVFS_DB' '$BATS_TEST_TMPDIR/pub/snap'"
	[ "$status" -eq 4 ]
	[[ $output == *"only the owner of the mount $KVFS_MNT"* ]] || { echo "$output" >&2; false; }
	run as_nobody "setfattr -n user.kvfs.snapshot -v '$BATS_TEST_TMPDIR/pub/snap' '$KVFS_MNT'"
	[[ $output == *"Operation not permitted"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/pub/snap" ]
	grep -q "uid 65534 may not take a snapshot" "$KVFS_LOG"
	# With default_permissions (allow_other's default) the kernel refuses
	# first: the root is not the other user's to write.
	kvfs_remount -o allow_other
	run as_nobody "'$KVFS_BIN' snapshot '$KVFS_DB' '$BATS_TEST_TMPDIR/pub/snap'"
	[ "$status" -eq 4 ]
	[[ $output == *"permission denied: only the owner of the mount"* ]] || { echo "$output" >&2; false; }
	[ ! -e "$BATS_TEST_TMPDIR/pub/snap" ]
	# The owner (root here) may.
	"$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/pub/snap"
	[ -f "$BATS_TEST_TMPDIR/pub/snap/CURRENT" ]
}

@test "a database another process holds (a running Kvrocks) is refused with the way to use Kvrocks's backup" {
	kvfs_mount
	printf v >"$NS/k"
	kvfs_unmount
	# RocksDB's lock is an fcntl lock on LOCK: take it as Kvrocks would.
	python3 -c '
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR)
fcntl.lockf(fd, fcntl.LOCK_EX)
open(sys.argv[2], "w").close()
time.sleep(60)' "$KVFS_DB/db/LOCK" "$BATS_TEST_TMPDIR/locked" 3>&- &
	LOCK_PID=$!
	for ((t = 0; t < 100; t++)); do
		[ -e "$BATS_TEST_TMPDIR/locked" ] && break
		sleep 0.05
	done
	run "$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/snap"
	[ "$status" -eq 6 ]
	[[ $output == *"use its own backup (BGSAVE"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/snap" ]
	# Also beside a read-only kvfs mount (which takes no lock): the writer
	# could delete the files a read-only checkpoint links.
	kvfs_mount -o ro
	run "$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/snap"
	[ "$status" -eq 6 ]
	[[ $output == *"use its own backup (BGSAVE"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/snap" ]
}

@test "kvfs-backup --snapshot of a mounted namespace: byte-identical copy, no mount or snapshot left, restores" {
	kvfs_mount
	fill
	run env KVFS="$KVFS_BIN" "$BACKUP" --snapshot "$KVFS_DB" --ns __namespace "$BATS_TEST_TMPDIR/bk"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	diff -r "$NS" "$BATS_TEST_TMPDIR/bk"
	assert_eq "$(getfattr --only-values -n user.kvfs.type "$BATS_TEST_TMPDIR/bk/z")" zset "type in the copy"
	[ ! -e "$BATS_TEST_TMPDIR/bk/other" ]
	[ ! -e "$KVFS_DB.snapshots" ] # no snapshot left, nor their directory
	assert_no_backup_leftovers
	# The old form restores it into an empty namespace.
	mkdir "$KVFS_MNT/restored"
	"$BACKUP" "$BATS_TEST_TMPDIR/bk" "$KVFS_MNT/restored"
	diff -r "$NS" "$KVFS_MNT/restored"
	assert_eq "$(kvfs_type "$KVFS_MNT/restored/l")" list "restored type of l"
	assert_eq "$(kvfs_type "$KVFS_MNT/restored/z")" zset "restored type of z"
}

@test "kvfs-backup --snapshot of every namespace, --keep 2 keeps the two newest snapshots, --progress shows rsync's" {
	kvfs_mount
	fill
	for n in 1 2 3; do
		printf '%s' "$n" >"$NS/round"
		run env KVFS="$KVFS_BIN" "$BACKUP" --snapshot "$KVFS_DB" --keep 2 --progress "$BATS_TEST_TMPDIR/bk"
		[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
		sleep 1 # snapshot names carry the second
	done
	[[ $output == *"to-chk="* ]]
	diff -r "$KVFS_MNT" "$BATS_TEST_TMPDIR/bk"
	assert_eq "$(ls "$KVFS_DB.snapshots" | wc -l)" 2 "snapshots kept"
	# The newest kept snapshot holds round 3.
	snap_mount "$KVFS_DB.snapshots/$(ls "$KVFS_DB.snapshots" | sort | tail -n 1)"
	assert_eq "$(cat "$SNAP_MNT/__namespace/round")" 3 "round in the newest snapshot"
	snap_unmount
	assert_no_backup_leftovers
}

@test "kvfs-backup cleans up when rsync fails and when the namespace is missing" {
	kvfs_mount
	fill
	# An rsync that copies, then fails as a full disk would.
	mkdir "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\n%s "$@"\nexit 23\n' "$(command -v rsync)" >"$BATS_TEST_TMPDIR/bin/rsync"
	chmod +x "$BATS_TEST_TMPDIR/bin/rsync"
	run env PATH="$BATS_TEST_TMPDIR/bin:$PATH" KVFS="$KVFS_BIN" "$BACKUP" --snapshot "$KVFS_DB" \
		--keep 3 "$BATS_TEST_TMPDIR/bk"
	[ "$status" -eq 23 ]
	[[ $output == *"rsync failed (exit status 23)"* ]]
	[ ! -e "$KVFS_DB.snapshots" ] # no snapshot left, nor their directory
	assert_no_backup_leftovers
	run env KVFS="$KVFS_BIN" "$BACKUP" --snapshot "$KVFS_DB" --ns nosuch "$BATS_TEST_TMPDIR/bk2"
	[ "$status" -eq 1 ]
	[[ $output == *"no namespace 'nosuch'"* ]]
	[ ! -e "$KVFS_DB.snapshots" ] # no snapshot left, nor their directory
	assert_no_backup_leftovers
}

@test "kvfs-backup cleans up on SIGTERM during the copy (exit 143)" {
	kvfs_mount
	fill
	# An rsync that waits inside the mount until it is killed.
	mkdir "$BATS_TEST_TMPDIR/bin"
	printf '#!/bin/sh\ncd "$(dirname "$4")" && touch %s && exec sleep 60\n' \
		"$BATS_TEST_TMPDIR/started" >"$BATS_TEST_TMPDIR/bin/rsync"
	chmod +x "$BATS_TEST_TMPDIR/bin/rsync"
	env PATH="$BATS_TEST_TMPDIR/bin:$PATH" KVFS="$KVFS_BIN" "$BACKUP" --snapshot "$KVFS_DB" \
		"$BATS_TEST_TMPDIR/bk" 3>&- &
	local pid=$!
	for ((t = 0; t < 200; t++)); do
		[ -e "$BATS_TEST_TMPDIR/started" ] && break
		sleep 0.05
	done
	[ -e "$BATS_TEST_TMPDIR/started" ]
	grep -q "kvfs-backup\." /proc/self/mountinfo # mounted now
	kill -TERM "$pid"
	local status=0
	wait "$pid" || status=$?
	assert_eq "$status" 143 "exit status"
	[ ! -e "$KVFS_DB.snapshots" ] # no snapshot left, nor their directory
	assert_no_backup_leftovers
}
