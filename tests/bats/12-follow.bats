#!/usr/bin/env bats
# -o follow[=MS] (mapping.md, "Following a live database"): a read-only
# mount that follows the database's writer through a RocksDB secondary
# instance. The writer here is kvfs itself, a read-write mount of the
# same Kvrocks data directory (DB/db); the follower is a second mount
# beside it. Changes must show in the follower within a bounded wait
# (polled, never a fixed sleep), every write through it is EROFS and
# changes no byte (ldb), and it survives the writer's compaction and
# restart.

load helper

# How long a change may take to show (polled every 0.1 s): generous, for a
# loaded machine; the catch-up period of the tests is 200 ms.
WAIT_TENTHS=200

setup() {
	kvfs_setup
	FOLLOW_MNT=$BATS_TEST_TMPDIR/follow
	FOLLOW_LOG=$BATS_TEST_TMPDIR/follow.log
	FOLLOW_DIR=$BATS_TEST_TMPDIR/secondary
	FNS=$FOLLOW_MNT/$KVFS_DEFAULT_NS
	FOLLOW_PID=
	mkdir -p "$FOLLOW_MNT"
}

teardown() {
	local rc=0 st=0
	if [ -n "${FOLLOW_PID:-}" ]; then
		fusermount3 -u "$FOLLOW_MNT" 2>/dev/null || fusermount3 -u -z "$FOLLOW_MNT" || true
		wait "$FOLLOW_PID" || st=$?
		FOLLOW_PID=
		if [ "$st" -ne 0 ]; then
			echo "teardown: the follower exited with status $st" >&2
			cat "$FOLLOW_LOG" >&2
			rc=1
		fi
	fi
	if grep -qE "$KVFS_SANITIZER_RE" "$FOLLOW_LOG" 2>/dev/null; then
		echo "teardown: sanitizer report in the follower's log" >&2
		cat "$FOLLOW_LOG" >&2
		rc=1
	fi
	kvfs_teardown || rc=1
	return "$rc"
}

# follower_mount [OPTS...]: a follower of KVFS_DB at FOLLOW_MNT (catch-up
# every 200 ms unless OPTS say otherwise), waited for like kvfs_mount.
follower_mount() {
	local i
	echo "=== $KVFS_BIN -f -o follow=200,follow_dir=$FOLLOW_DIR $*" >>"$FOLLOW_LOG"
	"$KVFS_BIN" -f -o "follow=200,follow_dir=$FOLLOW_DIR" "$@" "$KVFS_DB" "$FOLLOW_MNT" \
		</dev/null >>"$FOLLOW_LOG" 2>&1 3>&- &
	FOLLOW_PID=$!
	for ((i = 0; i < 200; i++)); do
		if ! _kvfs_alive "$FOLLOW_PID"; then
			wait "$FOLLOW_PID" || true
			FOLLOW_PID=
			echo "follower_mount: the follower exited before mounting" >&2
			cat "$FOLLOW_LOG" >&2
			return 1
		fi
		mountpoint -q "$FOLLOW_MNT" && return 0
		sleep 0.05
	done
	echo "follower_mount: not mounted after 10 s" >&2
	cat "$FOLLOW_LOG" >&2
	return 1
}

follower_unmount() {
	local st=0
	fusermount3 -u "$FOLLOW_MNT"
	wait "$FOLLOW_PID" || st=$?
	FOLLOW_PID=
	assert_eq "$st" 0 "the follower's exit status"
}

# eventually CMD...: CMD succeeds within WAIT_TENTHS tenths of a second;
# else it fails, showing what CMD printed last.
eventually() {
	local i out
	for ((i = 0; i < WAIT_TENTHS; i++)); do
		out=$("$@" 2>&1) && return 0
		sleep 0.1
	done
	echo "never true: $* (last output: $out)" >&2
	return 1
}

# has_bytes FILE STRING: FILE holds exactly STRING (quiet, for eventually).
has_bytes() {
	[ "$(cat "$1" 2>/dev/null)" = "$2" ]
}

# size_is FILE N, mtime_is FILE SECS, count_is DIR N: stat and ls now
# (for eventually, which runs them again each time).
size_is() {
	[ "$(stat -c %s "$1" 2>/dev/null)" = "$2" ]
}
mtime_is() {
	[ "$(stat -c %Y "$1" 2>/dev/null)" = "$2" ]
}
count_is() {
	[ "$(ls "$1" 2>/dev/null | wc -l)" = "$2" ]
}

# has_ttl FILE: FILE's key has an expiry (user.kvfs.ttl reads).
has_ttl() {
	getfattr --only-values -n user.kvfs.ttl "$1" >/dev/null 2>&1
}

# gone PATH: PATH does not exist (stat says ENOENT).
gone() {
	[ "$(errno_of 'os.stat(a[0])' "$1")" = ENOENT ]
}

# listed DIR NAMES: ls DIR prints exactly NAMES (one a line).
listed() {
	[ "$(ls "$1" 2>/dev/null)" = "$2" ]
}

# The records of every column family, as ldb prints them (unmounted).
dump_all() {
	local cf
	for cf in default metadata zset_score pubsub propagate stream search; do
		echo "== $cf"
		ldb_scan "$cf"
	done
}

@test "keys, hash fields, list pushes and stream entries the writer adds show in the follower" {
	kvfs_mount
	printf one >"$NS/s"
	follower_mount
	assert_bytes "$FNS/s" one
	printf two >"$NS/t"
	mkdir "$NS/h"
	printf v1 >"$NS/h/f1"
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	echo a >>"$NS/q/.rpush"
	mkdir "$NS/st"
	setfattr -n user.kvfs.type -v stream "$NS/st"
	printf 'temp\t21\n' >"$NS/st/.add"
	eventually has_bytes "$FNS/t" two
	eventually has_bytes "$FNS/h/f1" v1
	eventually listed "$FNS/q" 0
	assert_bytes "$FNS/q/0" a
	eventually count_is "$FNS/st" 1
	entry=$(ls "$NS/st")
	assert_eq "$(ls "$FNS/st")" "$entry" "the stream's entry in the follower"
	assert_eq "$(cat "$FNS/st/$entry")" "$(printf 'temp\t21')" "the entry's text"
	assert_eq "$(kvfs_type "$FNS/st")" stream "the stream's type in the follower"

	# More of each, once the follower's kernel has them all cached.
	ls -lR "$FOLLOW_MNT" >/dev/null
	printf v2 >"$NS/h/f2"
	echo b >>"$NS/q/.rpush"
	printf 'temp\t22\n' >"$NS/st/.add"
	eventually listed "$FNS/h" $'f1\nf2'
	eventually listed "$FNS/q" $'0\n1'
	assert_bytes "$FNS/q/1" b
	eventually count_is "$FNS/st" 2
	assert_eq "$(ls "$FNS/st")" "$(ls "$NS/st")" "the stream's entries in the follower"
	assert_eq "$(ls "$FNS")" "$(ls "$NS")" "the keys in the follower"
}

@test "changed values, sizes and times show although the kernel had them cached (-o timeout=3600)" {
	kvfs_mount
	printf short >"$NS/s"
	mkdir "$NS/h"
	printf 1 >"$NS/h/f"
	follower_mount -o timeout=3600
	assert_bytes "$FNS/s" short
	assert_size "$FNS/s" 5
	assert_bytes "$FNS/h/f" 1
	m0=$(stat -c %Y "$FNS/s")
	printf 'a longer value' >"$NS/s"
	printf 22 >"$NS/h/f"
	touch -d '2001-02-03 04:05:06' "$NS/s"
	eventually size_is "$FNS/s" 14
	eventually has_bytes "$FNS/s" 'a longer value'
	eventually mtime_is "$FNS/s" "$(stat -c %Y "$NS/s")"
	[ "$(stat -c %Y "$FNS/s")" != "$m0" ]
	eventually has_bytes "$FNS/h/f" 22
	assert_size "$FNS/h/f" 2
}

@test "deletions, pops and expiries make names disappear from the follower" {
	kvfs_mount
	printf x >"$NS/del"
	printf y >"$NS/exp"
	mkdir "$NS/h"
	printf 1 >"$NS/h/a"
	printf 2 >"$NS/h/b"
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	printf 'a\nb\n' >>"$NS/q/.rpush"
	follower_mount -o timeout=3600
	# Every name and its attributes in the follower's kernel cache.
	ls -lR "$FOLLOW_MNT" >/dev/null
	cat "$FNS/del" "$FNS/h/a" "$FNS/q/0" >/dev/null
	rm "$NS/del"
	rm "$NS/h/a"
	assert_bytes "$NS/q/.lpop" a
	setfattr -n user.kvfs.ttl -v 600000 "$NS/exp"
	eventually gone "$FNS/del"
	eventually gone "$FNS/h/a"
	eventually listed "$FNS/h" b
	eventually listed "$FNS/q" 0
	assert_bytes "$FNS/q/0" b
	# The expiry shows, then the key goes on time, in both mounts.
	eventually has_ttl "$FNS/exp"
	setfattr -n user.kvfs.ttl -v 1000 "$NS/exp"
	eventually gone "$NS/exp"
	eventually gone "$FNS/exp"
	assert_eq "$(ls "$FNS")" "$(ls "$NS")" "the keys in the follower"
	# A key deleted and made again as another type: a file becomes a
	# directory in the follower too.
	printf file >"$NS/morph"
	eventually has_bytes "$FNS/morph" file
	rm "$NS/morph"
	mkdir "$NS/morph"
	printf v >"$NS/morph/f"
	eventually test -d "$FNS/morph"
	eventually has_bytes "$FNS/morph/f" v
}

@test "tail -f of a stream's .log in the follower shows entries as the writer adds them" {
	kvfs_mount
	mkdir "$NS/st"
	setfattr -n user.kvfs.type -v stream "$NS/st"
	printf 'n\t1\n' >"$NS/st/.add"
	follower_mount
	eventually test -d "$FNS/st"
	tail -f "$FNS/st/.log" >"$BATS_TEST_TMPDIR/tail.out" 2>&1 3>&- &
	tail_pid=$!
	eventually grep -q "$(printf 'n\t1')" "$BATS_TEST_TMPDIR/tail.out"
	printf 'n\t2\n' >"$NS/st/.add"
	run eventually grep -q "$(printf 'n\t2')" "$BATS_TEST_TMPDIR/tail.out"
	kill -TERM "$tail_pid"
	wait "$tail_pid" || true
	[ "$status" -eq 0 ]
}

@test "every write through the follower is EROFS and changes no byte of the database" {
	kvfs_mount
	printf val >"$NS/s"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	printf 'a\nb\n' >>"$NS/q/.rpush"
	printf 5 >"$NS/n"
	kvfs_unmount
	before=$(dump_all)
	follower_mount
	assert_bytes "$FNS/s" val
	# POSIX calls, with the errno each must give.
	while IFS='|' read -r path code; do
		got=$(errno_of "$code" "$path" "$FOLLOW_MNT")
		assert_eq "$got" EROFS "$code on $path"
	done <<EOF
$FNS/new|os.open(a[0], os.O_WRONLY|os.O_CREAT, 0o644)
$FNS/s|os.open(a[0], os.O_WRONLY)
$FNS/s|os.open(a[0], os.O_WRONLY|os.O_APPEND)
$FNS/s|os.truncate(a[0], 0)
$FNS/newdir|os.mkdir(a[0])
$FOLLOW_MNT/newns|os.mkdir(a[0])
$FNS/s|os.unlink(a[0])
$FNS/h/f|os.unlink(a[0])
$FNS/h|os.rmdir(a[0])
$FNS/s|os.rename(a[0], a[1] + '/__namespace/s2')
$FNS/h/f|os.rename(a[0], a[0] + '2')
$FNS/s|os.chmod(a[0], 0o600)
$FNS/s|os.chown(a[0], 1, 1)
$FNS/s|os.utime(a[0], (1, 1))
$FNS/s|os.setxattr(a[0], 'user.kvfs.ttl', b'1000')
$FNS/s|os.setxattr(a[0], 'user.note', b'x')
$FNS/s|os.removexattr(a[0], 'user.kvfs.type')
$FNS/h|os.setxattr(a[0], 'user.kvfs.type', b'set')
$FNS/q/.rpush|os.open(a[0], os.O_WRONLY)
$FNS/h/f|os.open(a[0], os.O_WRONLY)
$FNS/node|os.mknod(a[0])
$FNS/link|os.symlink('x', a[0])
EOF
	# Through tools, too.
	run sh -c "echo x >'$FNS/n:incr'"
	[ "$status" -ne 0 ]
	[[ $output == *"Read-only file system"* ]]
	run sh -c "echo c >>'$FNS/q/.rpush'"
	[[ $output == *"Read-only file system"* ]]
	run touch "$FNS/h/g"
	[[ $output == *"Read-only file system"* ]]
	# A pop is a read that writes: it changes nothing either.
	run cat "$FNS/q/.lpop"
	[ "$status" -ne 0 ]
	assert_eq "$(ls "$FNS/q")" $'0\n1' "the list after the refused pop"
	assert_bytes "$FNS/s" val
	follower_unmount
	after=$(dump_all)
	assert_eq "$after" "$before" "the database's records"
}

@test "the follower survives the writer's compaction and restart" {
	kvfs_mount
	for i in $(seq 1 50); do printf "v$i" >"$NS/k$i"; done
	follower_mount
	eventually has_bytes "$FNS/k50" v50
	# Deleted and overwritten keys give the compaction something to drop.
	for i in $(seq 1 25); do rm "$NS/k$i"; done
	printf new >"$NS/k50"
	eventually has_bytes "$FNS/k50" new
	kvfs_unmount # the writer stops: its memtables go to table files
	run "$KVFS_BIN" compact "$KVFS_DB"
	[ "$status" -eq 0 ]
	# Nothing moved for the follower: same keys, same bytes.
	eventually gone "$FNS/k1"
	assert_eq "$(ls "$FNS" | wc -l)" 25 "keys in the follower after the compaction"
	assert_bytes "$FNS/k26" v26
	assert_bytes "$FNS/k50" new
	# The writer again (a new MANIFEST, a new WAL): its changes show.
	kvfs_mount
	printf back >"$NS/after"
	rm "$NS/k26"
	eventually has_bytes "$FNS/after" back
	eventually gone "$FNS/k26"
	# ... and a second restart without a compaction.
	kvfs_remount
	printf again >"$NS/after2"
	eventually has_bytes "$FNS/after2" again
	assert_eq "$(ls "$FNS")" "$(ls "$NS")" "the keys in the follower"
}

@test "a key deleted while the follower was not looking stays deleted after the writer's compaction" {
	kvfs_mount
	printf a >"$NS/a"
	printf doomed >"$NS/doomed"
	follower_mount
	eventually has_bytes "$FNS/doomed" doomed
	# The follower holds the key from the writer's WAL. It sleeps while
	# the writer deletes the key, stops (its memtables flushed, its WAL
	# gone) and a compaction drops the deletion's tombstone.
	kill -STOP "$FOLLOW_PID"
	rm "$NS/doomed"
	printf b >"$NS/b"
	kvfs_unmount
	run "$KVFS_BIN" compact "$KVFS_DB"
	kill -CONT "$FOLLOW_PID"
	[ "$status" -eq 0 ]
	eventually listed "$FNS" $'a\nb'
	gone "$FNS/doomed"
	assert_bytes "$FNS/b" b
}

@test "values in blob files: the follower switches to read-only instances and reads them, and follows on" {
	kvfs_mount
	printf small >"$NS/a"
	head -c 200000 /dev/urandom >"$BATS_TEST_TMPDIR/big"
	cp "$BATS_TEST_TMPDIR/big" "$NS/big"
	follower_mount
	# In the writer's memtable, not in a blob file yet: readable.
	eventually cmp -s "$BATS_TEST_TMPDIR/big" "$FNS/big"
	kvfs_unmount # the flush puts the big value into a blob file
	run eventually grep -q 'following it through read-only instances' "$FOLLOW_LOG"
	[ "$status" -eq 0 ]
	eventually cmp -s "$BATS_TEST_TMPDIR/big" "$FNS/big"
	assert_bytes "$FNS/a" small
	# The writer goes on (a running writer: memtable and WAL), then
	# removes the big value and compacts: each change shows.
	kvfs_mount
	printf more >"$NS/b"
	head -c 150000 /dev/urandom >"$BATS_TEST_TMPDIR/big2"
	cp "$BATS_TEST_TMPDIR/big2" "$NS/big2"
	eventually listed "$FNS" $'a\nb\nbig\nbig2'
	eventually cmp -s "$BATS_TEST_TMPDIR/big2" "$FNS/big2"
	rm "$NS/big"
	eventually listed "$FNS" $'a\nb\nbig2'
	kvfs_unmount
	run "$KVFS_BIN" compact "$KVFS_DB"
	[ "$status" -eq 0 ]
	kvfs_mount
	printf c >"$NS/c"
	eventually listed "$FNS" $'a\nb\nbig2\nc'
	assert_bytes "$FNS/b" more
	cmp -s "$BATS_TEST_TMPDIR/big2" "$FNS/big2"
	# never refused on the way
	! grep -q 'which a follower cannot read' "$FOLLOW_LOG"
}

@test "a follower started on a database that holds blob files reads them from the start" {
	kvfs_mount
	head -c 100000 /dev/urandom >"$BATS_TEST_TMPDIR/big"
	cp "$BATS_TEST_TMPDIR/big" "$NS/big"
	kvfs_remount # flushed: a blob file
	follower_mount
	grep -q 'read-only instances, opened anew at each change' "$FOLLOW_LOG"
	cmp -s "$BATS_TEST_TMPDIR/big" "$FNS/big"
	printf x >"$NS/x"
	eventually listed "$FNS" $'big\nx'
	assert_eq "$(errno_of 'open(a[0], "w").write("y")' "$FNS/x")" EROFS "a write"
}

@test "the default catch-up period (1 s) follows too, with the secondary under XDG_CACHE_HOME" {
	kvfs_mount
	printf one >"$NS/a"
	cache=$BATS_TEST_TMPDIR/cache
	top=$(ls -A "$KVFS_DB")
	XDG_CACHE_HOME=$cache "$KVFS_BIN" -f -o follow "$KVFS_DB" "$FOLLOW_MNT" \
		</dev/null >>"$FOLLOW_LOG" 2>&1 3>&- &
	FOLLOW_PID=$!
	eventually mountpoint -q "$FOLLOW_MNT"
	assert_bytes "$FNS/a" one
	printf two >"$NS/b"
	eventually has_bytes "$FNS/b" two
	# The secondary's directory is the user's cache, one per database.
	run ls "$cache/kvfs/secondary"
	[ "$status" -eq 0 ]
	[[ $output =~ ^[0-9a-f]{16}$ ]]
	# ... and nothing of the follower's is in the database's directory.
	assert_eq "$(ls -A "$KVFS_DB")" "$top" "the data directory's entries"
	grep -q "following the database's writer" "$FOLLOW_LOG"
}

@test "kvfs snapshot beside a follower asks the writer's daemon, whichever mount comes first" {
	kvfs_mount
	printf one >"$NS/a"
	follower_mount
	kvfs_remount # the writer's mount now after the follower's in mountinfo
	printf two >"$NS/b"
	run "$KVFS_BIN" snapshot "$KVFS_DB" "$BATS_TEST_TMPDIR/snap"
	[ "$status" -eq 0 ] || {
		echo "$output" >&2
		false
	}
	[[ $output == *"made by the kvfs mounted at $KVFS_MNT"* ]]
	ldb --db="$BATS_TEST_TMPDIR/snap" --column_family=metadata --hex scan | grep -q "^0x$(nskey_hex b) "
}

@test "a follower of a directory with no database, or with its directory inside the database's, is refused" {
	mkdir "$BATS_TEST_TMPDIR/empty"
	run "$KVFS_BIN" -f -o "follow,follow_dir=$FOLLOW_DIR" "$BATS_TEST_TMPDIR/empty" "$FOLLOW_MNT"
	[ "$status" -eq 3 ]
	[[ $output == *"no database there"* ]]
	assert_eq "$(ls -A "$BATS_TEST_TMPDIR/empty")" "" "the empty directory's entries"
	[ ! -e "$FOLLOW_DIR" ]
	run "$KVFS_BIN" -f -o follow "$BATS_TEST_TMPDIR/none" "$FOLLOW_MNT"
	[ "$status" -eq 3 ]
	[[ $output == *"no such directory"* ]]
	[ ! -e "$BATS_TEST_TMPDIR/none" ]
	! mountpoint -q "$FOLLOW_MNT"

	kvfs_mount
	printf x >"$NS/a"
	run "$KVFS_BIN" -f -o "follow,follow_dir=$KVFS_DB/db/sec" "$KVFS_DB" "$FOLLOW_MNT"
	[ "$status" -eq 2 ]
	[[ $output == *"inside the database's directory"* ]]
	[ ! -e "$KVFS_DB/db/sec" ]
	run "$KVFS_BIN" -f -o "follow,follow_dir=$KVFS_DB/sec" "$KVFS_DB" "$FOLLOW_MNT"
	[ "$status" -eq 2 ]
	[ ! -e "$KVFS_DB/sec" ]
	run "$KVFS_BIN" -f -o "follow,follow_dir=relative/dir" "$KVFS_DB" "$FOLLOW_MNT"
	[ "$status" -eq 2 ]
	[[ $output == *"absolute path"* ]]
	! mountpoint -q "$FOLLOW_MNT"
}

@test "bad follow options are usage errors" {
	for bad in follow=0 follow=abc follow=-5 follow=3600001 "follow=1 "; do
		run "$KVFS_BIN" -f -o "$bad" "$BATS_TEST_TMPDIR" "$FOLLOW_MNT"
		[ "$status" -eq 2 ]
		[[ $output == *"-o follow="* ]]
	done
	run "$KVFS_BIN" -f -o "follow_dir=$FOLLOW_DIR" "$BATS_TEST_TMPDIR" "$FOLLOW_MNT"
	[ "$status" -eq 2 ]
	[[ $output == *"needs -o follow"* ]]
	! mountpoint -q "$FOLLOW_MNT"
}
