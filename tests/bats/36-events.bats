#!/usr/bin/env bats
# Change events (docs/mapping.md, "Live databases and backups", "Change
# events"): what kvfs changes by no system call on a name (an expiry, a
# TTL of 0, entries an input adds, a pop, a rule's output) reaches the
# kernel's cache, and inotify watchers see what the kernel can report.
# Mounted with -o timeout=60: without the notifications, the kernel would
# keep the stale names and attributes for a minute, far past every bounded
# wait below (no test measures a time).

load helper

setup() {
	kvfs_setup
	kvfs_mount -o timeout=60
}

# gone_within SECS PATH: true once PATH is gone (polled every 0.1 s, at
# most SECS seconds).
gone_within() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		[ -e "$2" ] || return 0
		sleep 0.1
	done
	return 1
}

# watch DIR...: inotifywait -m on the DIRs into $BATS_TEST_TMPDIR/events,
# running once its watches are set ($watcher is its pid).
watch() {
	command -v inotifywait >/dev/null || skip "inotifywait missing (make deps: inotify-tools)"
	inotifywait -m --format '%w|%e|%f' "$@" >"$BATS_TEST_TMPDIR/events" 2>"$BATS_TEST_TMPDIR/watch.err" &
	watcher=$!
	local i
	for ((i = 0; i < 100; i++)); do
		grep -q 'Watches established' "$BATS_TEST_TMPDIR/watch.err" && return 0
		sleep 0.1
	done
	return 1
}

# seen_within SECS PATTERN: true once a line of the events matches PATTERN
# (grep -E), at most SECS seconds.
seen_within() {
	local i
	for ((i = 0; i < $1 * 10; i++)); do
		grep -qE "$2" "$BATS_TEST_TMPDIR/events" && return 0
		sleep 0.1
	done
	return 1
}

# unwatch: end the watcher after a marker (created in $NS) shows that
# every earlier event was delivered.
unwatch() {
	touch "$NS/.marker"
	seen_within 10 "\|CREATE\|\.marker$" || true
	kill -TERM "$watcher"
	wait "$watcher" || true
}

@test "a TTL set on a name the kernel cached: the name is gone soon after the expiry" {
	echo v >"$NS/k"
	echo w >"$NS/keep"
	ls "$NS/k" >/dev/null # cached for 60 s
	setfattr -n user.kvfs.ttl -v 2000 "$NS/k"
	[ -e "$NS/k" ]
	gone_within 20 "$NS/k"
	run stat "$NS/k"
	[ "$status" -ne 0 ]
	[[ $output == *"No such file"* ]]
	run ls "$NS"
	assert_eq "$output" keep "listing"
}

@test "a key whose expiry was set elsewhere (before this mount) leaves the kernel's cache at its expiry" {
	mkdir "$NS/h"
	echo 1 >"$NS/h/f"
	setfattr -n user.kvfs.ttl -v 4000 "$NS/h"
	kvfs_remount -o timeout=60
	ls "$NS/h" >/dev/null # the lookup learns the expiry
	stat "$NS/h/f" >/dev/null
	gone_within 20 "$NS/h"
	[ ! -e "$NS/h/f" ]
}

@test "inotify: an expiry is DELETE_SELF for a watcher of the key, nothing for its directory's watcher" {
	echo v >"$NS/k"
	mkdir "$NS/h"
	echo 1 >"$NS/h/f"
	stat "$NS/k" "$NS/h" >/dev/null
	watch "$NS" "$NS/k" "$NS/h"
	setfattr -n user.kvfs.ttl -v 1000 "$NS/k"
	setfattr -n user.kvfs.ttl -v 1000 "$NS/h"
	seen_within 20 "^$NS/k\|DELETE_SELF\|$"
	seen_within 20 "^$NS/h/\|DELETE_SELF\|$"
	unwatch
	cat "$BATS_TEST_TMPDIR/events"
	# setxattr is a system call: ATTRIB, for both watches.
	grep -qx "$NS/|ATTRIB|k" "$BATS_TEST_TMPDIR/events"
	# The kernel reports no IN_DELETE to the directory's watcher for a
	# name FUSE deletes (fuse_lowlevel_notify_delete).
	! grep -qE "^$NS/\|DELETE(,ISDIR)?\|(k|h)$" "$BATS_TEST_TMPDIR/events"
}

@test "inotify: user.kvfs.ttl 0 deletes the key; its watcher sees DELETE_SELF and the name is gone" {
	echo v >"$NS/k"
	stat "$NS/k" >/dev/null
	watch "$NS" "$NS/k"
	setfattr -n user.kvfs.ttl -v 0 "$NS/k"
	seen_within 20 "^$NS/k\|DELETE_SELF\|$"
	unwatch
	[ ! -e "$NS/k" ]
}

@test "inotify: .add on a stream shows the input's own events, no CREATE of the entry; stat sees the new entry at once" {
	mkdir "$NS/s"
	setfattr -n user.kvfs.type -v stream "$NS/s"
	printf 'a\t1\n' >"$NS/s/.add"
	assert_eq "$(stat -c %s "$NS/s")" 1 "entries before"
	watch "$NS" "$NS/s"
	printf 'b\t2\n' >"$NS/s/.add"
	unwatch
	cat "$BATS_TEST_TMPDIR/events"
	grep -qx "$NS/s/|MODIFY|.add" "$BATS_TEST_TMPDIR/events"
	grep -qx "$NS/s/|CLOSE_WRITE,CLOSE|.add" "$BATS_TEST_TMPDIR/events"
	! grep -q "^$NS/s/|CREATE|" "$BATS_TEST_TMPDIR/events"
	# The directory's cached attributes (its size: the entry count) were
	# dropped by the input: stat asks again.
	assert_eq "$(stat -c %s "$NS/s")" 2 "entries after"
	assert_eq "$(ls "$NS/s" | wc -l)" 2 "listed"
}

@test "a list position's cached attributes are right after a pop by another process" {
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	printf 'a\nbbb\ncccccc\n' >>"$NS/q/.rpush"
	assert_eq "$(stat -c %s "$NS/q/0")" 1 "size of position 0"
	assert_eq "$(stat -c %s "$NS/q")" 3 "the list's size"
	sh -c 'cat "$1/.lpop" >/dev/null' sh "$NS/q"
	assert_eq "$(stat -c %s "$NS/q/0")" 3 "size of position 0 after the pop"
	assert_eq "$(cat "$NS/q/0")" bbb "position 0 after the pop"
	assert_eq "$(stat -c %s "$NS/q")" 2 "the list's size after the pop"
	[ ! -e "$NS/q/2" ]
}

@test "a list's cached attributes are right after a push and a move by another process" {
	mkdir "$NS/q" "$NS/done"
	setfattr -n user.kvfs.type -v list "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/done"
	printf 'a\nb\n' >>"$NS/q/.rpush"
	echo xxxx >>"$NS/done/.rpush"
	assert_eq "$(stat -c %s "$NS/q")" 2 "q before"
	assert_eq "$(stat -c %s "$NS/done")" 1 "done before"
	stat "$NS/done/0" >/dev/null
	sh -c 'printf "c\n" >>"$1/.rpush"' sh "$NS/q"
	assert_eq "$(stat -c %s "$NS/q")" 3 "q after a push"
	# LMOVE q done LEFT LEFT: the destination changed by no call on it.
	sh -c 'cat "$1/.lmove:left:left:done" >/dev/null' sh "$NS/q"
	assert_eq "$(stat -c %s "$NS/done")" 2 "done after the move"
	assert_eq "$(cat "$NS/done/0")" a "done's head after the move"
	assert_eq "$(stat -c %s "$NS/done/0")" 1 "size of done's head"
}

@test "a compaction rule's destination: its cached attributes are right after .add on the source" {
	mkdir "$NS/temp"
	setfattr -n user.kvfs.type -v timeseries "$NS/temp"
	setfattr -n user.kvfs.ts.rule.temp_1m -v 'sum 60000 0' "$NS/temp"
	echo '1000,1' >>"$NS/temp/.add"
	echo '61000,2' >>"$NS/temp/.add" # closes the first bucket: temp_1m gets a sample
	chunk=$(ls "$NS/temp_1m" | head -1)
	[ -n "$chunk" ]
	assert_eq "$(cat "$NS/temp_1m/$chunk")" "0,1" "the first bucket"
	stat "$NS/temp_1m" "$NS/temp_1m/$chunk" >/dev/null # cached for 60 s
	echo '121000,3' >>"$NS/temp/.add"                  # closes the second
	# The chunk holds both buckets, and stat shows the size cat reads.
	assert_eq "$(cat "$NS/temp_1m/$chunk")" "$(printf '0,1\n60000,2')" "the buckets"
	assert_eq "$(stat -c %s "$NS/temp_1m/$chunk")" "$(wc -c <"$NS/temp_1m/$chunk")" "chunk size"
}

@test "unmounting with expiries watched and invalidations queued exits cleanly at once" {
	for i in $(seq 1 200); do
		echo v >"$NS/k$i"
		setfattr -n user.kvfs.ttl -v 600000 "$NS/k$i"
	done
	printf 'x\n' >"$NS/k1"
	kvfs_unmount
	kvfs_mount -o timeout=60
	assert_eq "$(ls "$NS" | wc -l)" 200 "keys after the remount"
}
