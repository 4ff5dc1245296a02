#!/usr/bin/env bats
# Pops: reads with a side effect (docs/mapping.md, "Lists as queues").
# `cat L/.lpop`, `.rpop` pop one element per open; `.blpop:SECS`,
# `.brpop:SECS` wait for one (0: for ever). Never listed; an empty list
# reads empty; the list stays as an empty directory.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# mklist PATH ELEMENT...: an empty list, then each element appended.
mklist() {
	local d=$1 i=0 e
	shift
	mkdir "$d"
	setfattr -n user.kvfs.type -v list "$d"
	for e in "$@"; do
		printf '%s' "$e" >"$d/$i"
		i=$((i + 1))
	done
}

# push PATH VALUE: append VALUE as one element in one step: written to a
# temp name (rsync's), renamed to the list's length. (A new position is an
# empty element from its create on: a reader could pop it before the
# write. The inputs .rpush and .lpush push in one step too.)
push() {
	python3 -c '
import os, sys
d, v = sys.argv[1], sys.argv[2]
t = os.path.join(d, ".e.AbC123")
fd = os.open(t, os.O_WRONLY | os.O_CREAT | os.O_EXCL)
os.write(fd, v.encode())
os.close(fd)
os.rename(t, os.path.join(d, str(len(os.listdir(d)))))
' "$1" "$2"
}

@test "LPOP and RPOP: each cat pops one element, in order; an empty list reads empty and stays" {
	mklist "$NS/q" a b c
	assert_eq "$(cat "$NS/q/.lpop")" a "lpop"
	assert_eq "$(cat "$NS/q/.rpop")" c "rpop"
	assert_eq "$(ls "$NS/q" | paste -sd' ')" 0 "what is left is renumbered"
	assert_eq "$(cat "$NS/q/0")" b "the element left"
	assert_eq "$(cat "$NS/q/.lpop")" b "last"
	run cat "$NS/q/.lpop"
	[ "$status" -eq 0 ]
	assert_eq "$output" "" "an empty list reads empty"
	[ -d "$NS/q" ]
	assert_eq "$(kvfs_type "$NS/q")" list "the list stays"
	kvfs_remount
	assert_eq "$(kvfs_type "$NS/q")" list "the empty list stays after a remount"
	assert_eq "$(ls -A "$NS/q")" "" "empty"
}

@test "a pop answers the element's bytes exactly (binary, newlines) and removes it in one step" {
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	printf 'x\0y\nz\n' >"$NS/q/0"
	cat "$NS/q/.lpop" >"$BATS_TEST_TMPDIR/got"
	assert_eq "$(xxd -p "$BATS_TEST_TMPDIR/got")" 7800790a7a0a "bytes"
	assert_eq "$(ls -A "$NS/q")" "" "removed"
}

@test "pops are never listed and never stored; stat answers an empty read-only file" {
	mklist "$NS/q" a
	assert_eq "$(ls -a "$NS/q" | paste -sd' ')" ". .. 0" "listing"
	assert_eq "$(stat -c '%s %A' "$NS/q/.lpop")" "0 -r--r--r--" "stat"
	[ -e "$NS/q/.blpop:3" ]
	assert_eq "$(cat "$NS/q/0")" a "stat and lookups pop nothing"
	assert_eq "$(find "$NS/q" | wc -l)" 2 "find walks no pop"
	run errno_of 'open(a[0], "w")' "$NS/q/.lpop"
	assert_eq "$output" EACCES "a pop is not written"
	run errno_of 'os.unlink(a[0])' "$NS/q/.lpop"
	[ "$output" != OK ]
	assert_eq "$(cat "$NS/q/0")" a "still there"
}

@test "BLPOP waits for a push and takes it; BRPOP takes from the tail" {
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	(
		sleep 0.4
		push "$NS/q" first
	) &
	pusher=$!
	start=$(date +%s%N)
	got=$(cat "$NS/q/.blpop:10")
	took=$((($(date +%s%N) - start) / 1000000))
	wait $pusher
	assert_eq "$got" first "blpop"
	[ "$took" -ge 300 ] || { echo "woke after $took ms, before the push" >&2; false; }
	[ "$took" -lt 5000 ] || { echo "woke after $took ms" >&2; false; }
	mklist "$NS/r" a b
	assert_eq "$(cat "$NS/r/.brpop:1")" b "brpop of a list with elements answers at once"
	assert_eq "$(ls -A "$NS/q")" "" "taken"
}

@test "a blocking pop whose time runs out fails with ETIMEDOUT and changes nothing; bad seconds are EINVAL" {
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	run errno_of 'open(a[0]).read()' "$NS/q/.blpop:0.3"
	assert_eq "$output" ETIMEDOUT "timed out"
	for bad in x -1 1e99 '' 1x; do
		run errno_of 'open(a[0]).read()' "$NS/q/.blpop:$bad"
		assert_eq "$output" EINVAL "seconds '$bad'"
	done
	grep -q "the seconds to wait are a decimal number" "$KVFS_LOG"
	assert_eq "$(kvfs_type "$NS/q")" list "still a list"
}

@test "a reader killed while it waits takes nothing: the next push stays for the next reader" {
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	cat "$NS/q/.blpop:0" >"$BATS_TEST_TMPDIR/out" &
	pid=$!
	sleep 0.3
	kill $pid
	wait $pid || true
	push "$NS/q" kept
	sleep 0.3
	assert_eq "$(cat "$NS/q/0")" kept "the element stays"
	assert_eq "$(cat "$NS/q/.blpop:0")" kept "the next reader gets it"
}

@test "a consumer loop with the blocking pop gets every pushed element once, in order" {
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	(
		while x=$(cat "$NS/q/.blpop:2"); do
			echo "$x"
		done >"$BATS_TEST_TMPDIR/got"
	) &
	consumer=$!
	for i in $(seq 1 30); do
		push "$NS/q" "e$i"
	done
	wait $consumer # ends 2 s after the last element
	assert_eq "$(paste -sd' ' "$BATS_TEST_TMPDIR/got")" "$(seq -f 'e%g' 1 30 | paste -sd' ')" "every element once, in order"
	assert_eq "$(ls -A "$NS/q")" "" "nothing left"
}
