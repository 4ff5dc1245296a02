#!/usr/bin/env bats
# Crashes: kill -9 the daemon, detach the dead mount, mount again. A write
# whose close() returned is there; nothing is ever half there (a file
# created but not yet closed may be there, empty: open(O_CREAT) has
# returned, so it exists, but its data was never committed).

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

@test "a written and closed file survives kill -9 of the daemon" {
	printf 'durable value' >"$NS/k"
	mkdir "$NS/h"
	printf 'field value' >"$NS/h/f"
	kvfs_kill9
	kvfs_mount
	assert_bytes "$NS/k" 'durable value'
	assert_bytes "$NS/h/f" 'field value'
}

@test "an empty hash made by mkdir survives kill -9" {
	mkdir "$NS/h"
	kvfs_kill9
	kvfs_mount
	[ -d "$NS/h" ]
	assert_eq "$(ls -A "$NS/h")" "" "fields"
}

# The value writer $1 writes into field $2: a header line, then 300 KiB,
# so that one field takes several FUSE write requests.
expected_value() {
	printf 'field %s\n' "$1"
	cat "$BATS_TEST_TMPDIR/payload"
}

@test "kill -9 during a writer loop on a 100-field hash leaves a consistent hash" {
	yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c 307200 >"$BATS_TEST_TMPDIR/payload"
	mkdir "$NS/h"
	done_a=$BATS_TEST_TMPDIR/done-a
	done_b=$BATS_TEST_TMPDIR/done-b
	: >"$done_a"
	: >"$done_b"
	pid=$KVFS_PID

	# Writer B fills f50..f99 and records each field whose close() returned.
	(
		for i in $(seq 50 99); do
			{ printf 'field %s\n' "$i" && cat "$BATS_TEST_TMPDIR/payload"; } >"$NS/h/f$i" 2>/dev/null || exit 0
			echo "$i" >>"$done_b"
		done
	) 3>&- &
	writer_b=$!
	# Writer A fills f0..f49 and, once 30 of them are complete, kills the
	# daemon while writer B is still writing.
	(
		for i in $(seq 0 49); do
			{ printf 'field %s\n' "$i" && cat "$BATS_TEST_TMPDIR/payload"; } >"$NS/h/f$i" 2>/dev/null || exit 0
			echo "$i" >>"$done_a"
			if [ "$i" -eq 29 ]; then
				kill -9 "$pid"
				exit 0
			fi
		done
	) 3>&- &
	writer_a=$!
	wait "$writer_a"
	wait "$writer_b"
	kvfs_kill9 # reap it and detach the dead mount
	kvfs_mount

	run ls "$NS/h"
	[ "$status" -eq 0 ]
	listed=("${lines[@]}")
	[ "${#listed[@]}" -ge 30 ]
	completed=" $(cat "$done_a" "$done_b" | tr '\n' ' ') "
	# Every field whose close() returned before the kill is there ...
	for i in $completed; do
		[ -e "$NS/h/f$i" ] || { echo "completed field f$i is missing" >&2; false; }
	done
	# ... and every listed field reads back: whole, or (only for a field
	# whose writer was cut off between create and close) empty. A field
	# holding part of its value would be a torn write.
	readable=0
	in_flight=0
	for name in "${listed[@]}"; do
		i=${name#f}
		if ! size=$(stat -c %s "$NS/h/$name") || ! cat "$NS/h/$name" >/dev/null; then
			echo "listed field $name cannot be read" >&2
			continue
		fi
		if cmp -s <(expected_value "$i") "$NS/h/$name"; then
			readable=$((readable + 1))
		elif [ "$size" -eq 0 ] && [[ $completed != *" $i "* ]]; then
			readable=$((readable + 1))
			in_flight=$((in_flight + 1))
		else
			echo "field $name holds $size bytes, not its whole value" >&2
		fi
	done
	assert_eq "$readable" "${#listed[@]}" "fields that read back consistently, of those listed"
	[ "$in_flight" -le 2 ] || { echo "$in_flight empty fields; 2 writers had at most 2 in flight" >&2; false; }

	# The stored hash length agrees with the listing.
	kvfs_unmount
	run ldb_value metadata "${NS_HEX}68"
	[[ $output =~ ^82[0-9A-F]{32}([0-9A-F]{16})$ ]] || { echo "metadata of h: $output" >&2; false; }
	assert_eq "$((16#${BASH_REMATCH[1]}))" "${#listed[@]}" "stored size of h vs fields listed"
}

@test "an unmount under write load logs how long closing took, exits cleanly and leaves no WAL to replay" {
	head -c 2097152 /dev/urandom >"$BATS_TEST_TMPDIR/big"
	mkdir "$NS/h"
	printf f >"$NS/h/f" # a small write in another column family
	pids=()
	for w in 1 2 3; do
		(
			for i in $(seq 20); do
				cp "$BATS_TEST_TMPDIR/big" "$NS/big$w" 2>/dev/null || exit 0
			done
		) 3>&- &
		pids+=($!)
	done
	wait "${pids[@]}"
	kvfs_unmount # requires exit status 0
	grep -q "closed in [0-9]* ms" "$KVFS_LOG" || {
		echo "no shutdown line in the log" >&2
		false
	}
	# Every memtable was flushed at close: the WAL left is empty.
	wal=$(cat "$(kvfs_rocksdb_dir)"/*.log | wc -c)
	assert_eq "$wal" 0 "bytes of WAL after a clean unmount"
	kvfs_mount
	cmp "$BATS_TEST_TMPDIR/big" "$NS/big2"
	assert_bytes "$NS/h/f" f
}

# kvfs_term_while_open SIGNAL PYTHON: a writer runs PYTHON (d: the
# namespace directory) to open files and write to them, keeps them open
# while the daemon gets SIGNAL; the daemon must exit 0. Mounts again.
kvfs_term_while_open() {
	local sig=$1 w i
	python3 -c "
import os, sys, time
d = sys.argv[1]
$2
print('ready', flush=True)
time.sleep(120)
" "$NS" >"$BATS_TEST_TMPDIR/writer.out" 2>&1 &
	w=$!
	for ((i = 0; i < 100; i++)); do
		grep -q ready "$BATS_TEST_TMPDIR/writer.out" && break
		sleep 0.1
	done
	grep -q ready "$BATS_TEST_TMPDIR/writer.out"
	kill "-$sig" "$KVFS_PID"
	_kvfs_reap "$KVFS_PID"
	KVFS_PID=
	kill "$w" 2>/dev/null || true
	wait "$w" 2>/dev/null || true
	assert_eq "$_kvfs_status" 0 "exit status after SIG$sig"
	if _kvfs_is_mounted "$KVFS_MNT"; then
		fusermount3 -u -z "$KVFS_MNT"
	fi
	kvfs_mount
}

# kvfs_term_with_open_files SIGNAL: a writer opens k (appending), a new
# key and a new field, writes to each and keeps them open while the
# daemon gets SIGNAL; it must exit 0 and store what they hold.
kvfs_term_with_open_files() {
	printf 'old\n' >"$NS/k"
	mkdir "$NS/h"
	kvfs_term_while_open "$1" '
a = os.open(d + "/k", os.O_WRONLY | os.O_APPEND)
os.write(a, b"more\n")
b = os.open(d + "/new", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(b, b"fresh")
c = os.open(d + "/h/f", os.O_WRONLY | os.O_CREAT, 0o644)
os.write(c, b"field")'
	assert_bytes "$NS/k" $'old\nmore\n'
	assert_bytes "$NS/new" fresh
	assert_bytes "$NS/h/f" field
	grep -q "at exit: '__namespace/k' was still open: its 9 bytes are stored" "$KVFS_LOG"
	grep -q "at exit: '__namespace/h/f' was still open: its 5 bytes are stored" "$KVFS_LOG"
}

@test "SIGTERM with files open for writing stores what they hold and logs each by name" {
	kvfs_term_with_open_files TERM
}

# (Not SIGINT: a shell starts background jobs with SIGINT ignored, and
# libfuse leaves an ignored signal alone.)
@test "SIGHUP with files open for writing stores what they hold" {
	kvfs_term_with_open_files HUP
}

@test "SIGTERM with a JSON file open for appending adds what it wrote" {
	touch "$NS/j"
	setfattr -n user.kvfs.type -v json "$NS/j"
	printf '[1]' >"$NS/j"
	kvfs_term_while_open TERM '
a = os.open(d + "/j", os.O_WRONLY | os.O_APPEND)
os.write(a, b"2\n")'
	assert_bytes "$NS/j" $'[1,2]\n'
	grep -q "at exit: '__namespace/j' was still open: its 2 appended bytes are added" "$KVFS_LOG"
}

@test "SIGTERM with a file of a JSON tree open for writing stores what it holds" {
	touch "$NS/j"
	setfattr -n user.kvfs.type -v json "$NS/j"
	printf '{"a":1,"s":"x"}' >"$NS/j"
	kvfs_term_while_open TERM '
a = os.open(d + "/j:tree/s", os.O_WRONLY | os.O_TRUNC)
os.write(a, b"held\n")'
	assert_eq "$(cat "$NS/j")" '{"a":1,"s":"held"}'
	grep -q "at exit: 's' of a JSON tree was still open: its 5 bytes are stored" "$KVFS_LOG"
}

teardown() {
	local rc=0
	kvfs_teardown || rc=$?
	if mountpoint -q "$BATS_TEST_TMPDIR/disk" 2>/dev/null; then
		umount "$BATS_TEST_TMPDIR/disk" || umount -l "$BATS_TEST_TMPDIR/disk"
	fi
	return "$rc"
}

# fill_disk: write 1 MiB files f0, f1, ... until three in a row fail;
# prints "stored N" and the errno of each failure.
fill_disk() {
	python3 -c '
import errno, os, sys
d, src = sys.argv[1], open(sys.argv[2], "rb").read()
n = fails = 0
while fails < 3 and n < 200:
    try:
        with open("%s/f%d" % (d, n), "wb") as f:
            f.write(src)
        n += 1
        fails = 0
    except OSError as e:
        print(errno.errorcode[e.errno])
        fails += 1
print("stored", n)
' "$NS" "$BATS_TEST_TMPDIR/r"
}

@test "a full disk: ENOSPC, reads go on, writes work again once space is freed; a remount on it is read-only" {
	[ "$(id -u)" = 0 ] || skip "mounting a tmpfs needs root"
	local disk=$BATS_TEST_TMPDIR/disk i
	kvfs_unmount
	mkdir "$disk"
	mount -t tmpfs -o size=48m tmpfs "$disk"
	KVFS_DB=$disk/db
	head -c 16M /dev/zero >"$disk/filler" # freed later: rm through kvfs needs space too
	head -c 1M /dev/urandom >"$BATS_TEST_TMPDIR/r"
	kvfs_mount
	run fill_disk
	[[ "$output" == *"stored "* ]]
	[ "$(grep -c . <<<"$output")" -ge 4 ] # three failures and the count
	assert_eq "$(grep -v stored <<<"$output" | sort -u)" ENOSPC "errno of the writes that did not fit"
	grep -q "the disk is full: writes fail with ENOSPC" "$KVFS_LOG"
	cmp "$BATS_TEST_TMPDIR/r" "$NS/f0" # reads work
	rm "$disk/filler"
	for ((i = 0; i < 60; i++)); do
		# (not printf: the shell does not check the close, which commits)
		[ "$(errno_of 'f = open(a[0], "w"); f.write("again"); f.close()' "$NS/again")" = OK ] && break
		sleep 0.5
	done
	assert_bytes "$NS/again" again
	grep -q "writes work again" "$KVFS_LOG"
	kvfs_unmount # exit status 0
	# Full again, unmounted, remounted on the full disk: read-only.
	kvfs_mount
	run fill_disk
	kvfs_unmount
	dd if=/dev/zero of="$disk/filler" bs=1M 2>/dev/null || true
	kvfs_mount
	cmp "$BATS_TEST_TMPDIR/r" "$NS/f0"
	run errno_of 'f = open(a[0], "w"); f.write("x"); f.close()' "$NS/new"
	assert_eq "$output" EROFS "a write on the full disk's mount"
	grep -q "mounted read-only: the disk is full" "$KVFS_LOG"
}
