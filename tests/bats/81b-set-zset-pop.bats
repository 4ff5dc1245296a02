#!/usr/bin/env bats
# Set and sorted-set verbs (docs/mapping.md sections 13 and 14): the
# actions S/.spop[:COUNT], S/.srandmember[:COUNT], Z/.zpopmin[:COUNT],
# Z/.zpopmax[:COUNT], Z/.bzpopmin:SECS, Z/.bzpopmax:SECS (one run per
# open, never listed, answers in the escaping of item lists), SMOVE as mv
# of a member to another set key, and each under contention by several
# shells, counting exactly.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# mkset PATH MEMBER...: a set with these members.
mkset() {
	local d=$1
	shift
	mktype "$d" set
	[ $# -eq 0 ] || (cd "$d" && touch -- "$@")
}

# rename FROM TO: one rename(2), no copy when it fails.
rename() {
	errno_of 'os.rename(a[0], a[1])' "$1" "$2"
}

@test "SPOP: each cat pops one member; COUNT pops several, distinct; an empty set reads empty and stays" {
	mkset "$NS/s" a b c d e
	x=$(cat "$NS/s/.spop")
	case $x in a | b | c | d | e) ;; *) false ;; esac
	[ ! -e "$NS/s/$x" ]
	assert_eq "$(ls "$NS/s" | wc -l)" 4 "one popped"
	cat "$NS/s/.spop:2" >"$BATS_TEST_TMPDIR/two"
	assert_eq "$(sort -u "$BATS_TEST_TMPDIR/two" | wc -l)" 2 "two distinct"
	while read -r m; do [ ! -e "$NS/s/$m" ]; done <"$BATS_TEST_TMPDIR/two"
	assert_eq "$(cat "$NS/s/.spop:0")" "" "COUNT 0 pops nothing"
	assert_eq "$(ls "$NS/s" | wc -l)" 2 "two left"
	assert_eq "$(cat "$NS/s/.spop:10")" "$(printf '%s\n' a b c d e | grep -vxF -e "$x" -f "$BATS_TEST_TMPDIR/two")" "more than it has: all, in byte order"
	run cat "$NS/s/.spop"
	[ "$status" -eq 0 ]
	assert_eq "$output" "" "an empty set reads empty"
	assert_eq "$(kvfs_type "$NS/s")" set "the set stays"
	kvfs_remount
	assert_eq "$(kvfs_type "$NS/s")" set "an empty set after a remount"
}

@test "SRANDMEMBER changes nothing: one, COUNT distinct, -COUNT with repeats, all in byte order" {
	mkset "$NS/s" a b c
	for i in 1 2 3 4 5; do
		case $(cat "$NS/s/.srandmember") in a | b | c) ;; *) false ;; esac
	done
	cat "$NS/s/.srandmember:2" >"$BATS_TEST_TMPDIR/two"
	assert_eq "$(sort -u "$BATS_TEST_TMPDIR/two" | wc -l)" 2 "two distinct"
	assert_eq "$(cat "$NS/s/.srandmember:3" | sort | paste -sd' ')" "a b c" "three of three"
	assert_eq "$(cat "$NS/s/.srandmember:10" | paste -sd' ')" "a b c" "more: all, in byte order"
	cat "$NS/s/.srandmember:-50" >"$BATS_TEST_TMPDIR/many"
	assert_eq "$(wc -l <"$BATS_TEST_TMPDIR/many")" 50 "-50: fifty draws"
	assert_eq "$(sort -u "$BATS_TEST_TMPDIR/many" | paste -sd' ')" "a b c" "of the members, repeated"
	assert_eq "$(cat "$NS/s/.srandmember:0")" "" "none"
	assert_eq "$(ls "$NS/s" | paste -sd' ')" "a b c" "nothing changed"
}

@test "members with a newline, tab, comma, slash or percent are answered as items, one per line, that name them" {
	mktype "$NS/s" set
	touch "$NS/s/$(printf 'n\nl')" "$NS/s/$(printf 't\tt')" "$NS/s/c,d" "$NS/s/a%2Fb" "$NS/s/100%" "$NS/s/b\\s"
	cat "$NS/s/.srandmember:10" >"$BATS_TEST_TMPDIR/items"
	assert_eq "$(paste -sd' ' "$BATS_TEST_TMPDIR/items")" '100%25 a%2Fb b\s c%2Cd n%0Al t%09t' "items"
	while read -r item; do
		[ -e "$NS/s/$item" ] || { echo "no member named $item" >&2; false; }
	done <"$BATS_TEST_TMPDIR/items"
	cat "$NS/s/.spop:10" >"$BATS_TEST_TMPDIR/popped"
	cmp "$BATS_TEST_TMPDIR/items" "$BATS_TEST_TMPDIR/popped"
	assert_eq "$(ls -A "$NS/s")" "" "all popped"
}

@test "set actions are never listed nor written; a member of the same name wins" {
	mkset "$NS/s" a
	assert_eq "$(ls -a "$NS/s" | paste -sd' ')" ". .. a" "listing"
	assert_eq "$(stat -c '%s %A' "$NS/s/.spop")" "0 -r--r--r--" "stat"
	[ -e "$NS/s/.srandmember:-3" ]
	assert_eq "$(find "$NS/s" | wc -l)" 2 "find walks no action"
	assert_eq "$(ls "$NS/s")" a "stat and find popped nothing"
	run errno_of 'open(a[0], "w")' "$NS/s/.spop"
	assert_eq "$output" EACCES "an action is not written"
	touch "$NS/s/x"
	mv "$NS/s/x" "$NS/s/.spop"
	assert_eq "$(cat "$NS/s/.spop")" "" "the member .spop: an empty file"
	assert_eq "$(ls -A "$NS/s" | paste -sd' ')" ".spop a" "the member wins: nothing popped"
}

@test "a bad COUNT is EINVAL, logged, and changes nothing; in a hash the names are fields" {
	mkset "$NS/s" a b
	for bad in x -1 +1 '' 1x 2147483648 99999999999999999999; do
		run errno_of 'open(a[0]).read()' "$NS/s/.spop:$bad"
		assert_eq "$output" EINVAL "spop count '$bad'"
	done
	for bad in x -1000001 2147483648 ''; do
		run errno_of 'open(a[0]).read()' "$NS/s/.srandmember:$bad"
		assert_eq "$output" EINVAL "srandmember count '$bad'"
	done
	grep -q "'.spop:x': COUNT is a whole number from 0 to 2147483647" "$KVFS_LOG"
	grep -q "'.srandmember:x': COUNT is a whole number from -1000000 to 2147483647" "$KVFS_LOG"
	assert_eq "$(ls "$NS/s" | paste -sd' ')" "a b" "nothing changed"
	mkdir "$NS/h"
	run errno_of 'open(a[0]).read()' "$NS/h/.spop"
	assert_eq "$output" ENOENT "a hash has no such field"
}

@test "SMOVE: mv of a member to another set is one rename, also onto a member there and into an empty set" {
	mkset "$NS/a" m n o
	mkset "$NS/b" x
	assert_eq "$(rename "$NS/a/m" "$NS/b/m")" OK "one rename"
	assert_eq "$(ls "$NS/a" | paste -sd' ')" "n o" "a"
	assert_eq "$(ls "$NS/b" | paste -sd' ')" "m x" "b"
	mv "$NS/a/n" "$NS/b/y"
	assert_eq "$(ls "$NS/b" | paste -sd' ')" "m x y" "renamed on the way"
	touch "$NS/b/o"
	mv "$NS/a/o" "$NS/b/"
	assert_eq "$(ls -A "$NS/a")" "" "a's last member moved onto one b has"
	assert_eq "$(kvfs_type "$NS/a")" set "a stays, an empty set"
	assert_eq "$(ls "$NS/b" | paste -sd' ')" "m o x y" "b"
	mv "$NS/b/m" "$NS/a/"
	assert_eq "$(ls "$NS/a")" m "into the empty set"
	! grep -q "moves an entry between keys: EXDEV" "$KVFS_LOG"
	mktype "$NS/z" zset
	assert_eq "$(rename "$NS/a/m" "$NS/z/m")" EXDEV "to a zset: mv copies"
	assert_eq "$(rename "$NS/a/nope" "$NS/b/nope")" ENOENT "no such member"
	assert_eq "$(rename "$NS/a/m" "$NS/b/.m.swp")" EINVAL "onto a swap name: the copy would be lost"
	assert_eq "$(ls "$NS/a")" m "still there"
}

@test "ZPOPMIN, ZPOPMAX: MEMBER<TAB>SCORE lines as the score files show them, ties by member; empty stays" {
	mktype "$NS/z" zset
	echo 1 >"$NS/z/a"
	echo 2 >"$NS/z/b"
	echo 2 >"$NS/z/c"
	echo 1e3 >"$NS/z/d"
	echo .1 >"$NS/z/e"
	echo -inf >"$NS/z/$(printf 't\tt')"
	assert_eq "$(cat "$NS/z/.zpopmin")" "$(printf 't%%09t\t-inf')" "lowest, its tab escaped"
	assert_eq "$(cat "$NS/z/.zpopmax:2")" "$(printf 'd\t1000\nc\t2')" "highest two, ties down"
	assert_eq "$(cat "$NS/z/.zpopmin:0")" "" "COUNT 0"
	assert_eq "$(cat "$NS/z/.zpopmin:10")" "$(printf 'e\t0.1\na\t1\nb\t2')" "the rest, lowest first"
	assert_eq "$(cat "$NS/z/.zpopmax")" "" "an empty zset reads empty"
	assert_eq "$(kvfs_type "$NS/z")" zset "and stays"
	assert_eq "$(ls -a "$NS/z" | paste -sd' ')" ". .." "never listed"
	for bad in x -1 '' 2147483648; do
		run errno_of 'open(a[0]).read()' "$NS/z/.zpopmin:$bad"
		assert_eq "$output" EINVAL "count '$bad'"
	done
	run errno_of 'open(a[0], "w")' "$NS/z/.zpopmax"
	assert_eq "$output" EACCES "not written"
}

@test "BZPOPMIN waits for a member and takes it; BZPOPMAX answers at once; time out ETIMEDOUT; bad seconds EINVAL" {
	mktype "$NS/z" zset
	(
		sleep 0.4
		echo 7 >"$NS/z/w"
	) &
	writer=$!
	start=$(date +%s%N)
	got=$(cat "$NS/z/.bzpopmin:10")
	took=$((($(date +%s%N) - start) / 1000000))
	wait $writer
	assert_eq "$got" "$(printf 'w\t7')" "bzpopmin"
	[ "$took" -ge 300 ] || { echo "woke after $took ms, before the write" >&2; false; }
	[ "$took" -lt 5000 ] || { echo "woke after $took ms" >&2; false; }
	echo 1 >"$NS/z/a"
	echo 2 >"$NS/z/b"
	assert_eq "$(cat "$NS/z/.bzpopmax:1")" "$(printf 'b\t2')" "at once"
	run errno_of 'open(a[0]).read()' "$NS/z/.bzpopmax:0.3"
	assert_eq "$output" OK "a member is there"
	run errno_of 'open(a[0]).read()' "$NS/z/.bzpopmin:0.3"
	assert_eq "$output" ETIMEDOUT "timed out"
	for bad in x -1 1e99 '' 1x; do
		run errno_of 'open(a[0]).read()' "$NS/z/.bzpopmin:$bad"
		assert_eq "$output" EINVAL "seconds '$bad'"
	done
	run errno_of 'open(a[0]).read()' "$NS/z/.bzpopmax"
	assert_eq "$output" ENOENT "the blocking pops need :SECS"
}

@test "a BZPOPMIN reader killed while it waits takes nothing" {
	mktype "$NS/z" zset
	cat "$NS/z/.bzpopmin:0" >"$BATS_TEST_TMPDIR/out" &
	pid=$!
	sleep 0.3
	kill $pid
	wait $pid || true
	echo 5 >"$NS/z/kept"
	sleep 0.3
	assert_eq "$(cat "$NS/z/kept")" 5 "the member stays"
	assert_eq "$(cat "$NS/z/.bzpopmin:0")" "$(printf 'kept\t5')" "the next reader gets it"
}

# The kernel caches every member (ls -l); a pop's invalidation of the
# member it took reaches the kernel before the reader gets the answer, so
# a script that tests the member right after sees it gone (the old code
# sent it asynchronously: a few of 500 were still visible).
@test "a popped member is gone for its reader as soon as it has the answer: 500 pops, each checked" {
	mktype "$NS/s" set
	local r i x bad=0
	for r in $(seq 1 100); do
		(cd "$NS/s" && touch a b c d e)
		ls -l "$NS/s" >/dev/null
		for i in 1 2 3 4 5; do
			x=$(cat "$NS/s/.spop")
			if [ -e "$NS/s/$x" ]; then
				bad=$((bad + 1))
			fi
		done
	done
	assert_eq "$bad" 0 "members still visible after their pop"
}

@test "user.kvfs.help of a set and a zset names their actions" {
	mkset "$NS/s" a
	mktype "$NS/z" zset
	help=$(getfattr --absolute-names --only-values -n user.kvfs.help "$NS/s")
	for n in .spop .spop:COUNT .srandmember .srandmember:COUNT; do
		grep -q "^$n " <<<"$help" || { echo "no $n" >&2; false; }
	done
	help=$(getfattr --absolute-names --only-values -n user.kvfs.help "$NS/z")
	for n in .zpopmin .zpopmin:COUNT .zpopmax .bzpopmin:SECS .bzpopmax:SECS; do
		grep -q "^$n " <<<"$help" || { echo "no $n" >&2; false; }
	done
}

# ---- contention: several shells at once, exact counts --------------------

@test "4 shells SPOP a set of 2,000 members until it is empty: every member exactly once" {
	mktype "$NS/s" set
	(cd "$NS/s" && seq -f 'm%04g' 1 2000 | xargs touch)
	assert_eq "$(ls "$NS/s" | wc -l)" 2000 "members"
	pids=()
	for p in 1 2 3 4; do
		# Two pop one at a time, two seven at a time.
		name=.spop
		[ $((p % 2)) -eq 0 ] && name=.spop:7
		(
			while out=$(cat "$NS/s/$name") && [ -n "$out" ]; do
				printf '%s\n' "$out"
			done >"$BATS_TEST_TMPDIR/got.$p"
		) &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid"; done
	for p in 1 2 3 4; do
		[ -s "$BATS_TEST_TMPDIR/got.$p" ] || echo "# shell $p popped nothing" >&3
	done
	LC_ALL=C sort "$BATS_TEST_TMPDIR"/got.* >"$BATS_TEST_TMPDIR/all"
	assert_eq "$(wc -l <"$BATS_TEST_TMPDIR/all")" 2000 "pops in total"
	seq -f 'm%04g' 1 2000 | cmp - "$BATS_TEST_TMPDIR/all"
	assert_eq "$(ls -A "$NS/s")" "" "empty"
	assert_eq "$(kvfs_type "$NS/s")" set "an empty set"
}

@test "4 shells ZPOPMIN a zset of 2,000 members until it is empty: every member exactly once, each shell's in score order" {
	mktype "$NS/z" zset
	python3 -c '
import sys
for i in range(1, 2001):
    with open("%s/m%04d" % (sys.argv[1], i), "w") as f:
        f.write("%d\n" % i)
' "$NS/z"
	assert_eq "$(ls "$NS/z" | wc -l)" 2000 "members"
	pids=()
	for p in 1 2 3 4; do
		name=.zpopmin
		[ $((p % 2)) -eq 0 ] && name=.zpopmin:5
		(
			while out=$(cat "$NS/z/$name") && [ -n "$out" ]; do
				printf '%s\n' "$out"
			done >"$BATS_TEST_TMPDIR/got.$p"
		) &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid"; done
	for p in 1 2 3 4; do
		cut -f2 "$BATS_TEST_TMPDIR/got.$p" | sort -c -n || { echo "shell $p: not in score order" >&2; false; }
	done
	LC_ALL=C sort "$BATS_TEST_TMPDIR"/got.* >"$BATS_TEST_TMPDIR/all"
	assert_eq "$(wc -l <"$BATS_TEST_TMPDIR/all")" 2000 "pops in total"
	seq 1 2000 | awk '{ printf "m%04d\t%d\n", $1, $1 }' | cmp - "$BATS_TEST_TMPDIR/all"
	assert_eq "$(ls -A "$NS/z")" "" "empty"
	assert_eq "$(kvfs_type "$NS/z")" zset "an empty zset"
}

@test "4 shells SMOVE 1,000 members between two sets, both ways at once: nothing lost, nothing doubled" {
	mktype "$NS/a" set
	mktype "$NS/b" set
	seq -f 'm%04g' 1 1000 >"$BATS_TEST_TMPDIR/want"
	(cd "$NS/a" && seq -f 'm%04g' 1 2 1000 | xargs touch)
	(cd "$NS/b" && seq -f 'm%04g' 2 2 1000 | xargs touch)
	pids=()
	for p in 1 2 3 4; do
		from=a to=b
		[ $((p % 2)) -eq 0 ] && from=b to=a
		(
			for round in 1 2; do
				for m in $(ls "$NS/$from"); do
					mv -f "$NS/$from/$m" "$NS/$to/" 2>/dev/null || true
				done
			done
		) &
		pids+=($!)
	done
	for pid in "${pids[@]}"; do wait "$pid"; done
	na=$(ls "$NS/a" | wc -l)
	nb=$(ls "$NS/b" | wc -l)
	echo "# a $na, b $nb" >&3
	assert_eq $((na + nb)) 1000 "the cardinalities add up"
	(ls "$NS/a" && ls "$NS/b") | LC_ALL=C sort | cmp - "$BATS_TEST_TMPDIR/want"
	assert_eq "$(getfattr --only-values -n user.kvfs.type "$NS/a")" set "a"
	assert_eq "$(getfattr --only-values -n user.kvfs.type "$NS/b")" set "b"
	! grep -q "EXDEV" "$KVFS_LOG"
}
