#!/usr/bin/env bats
# Read-only views of several items or of a range (issue 17, item 3;
# docs/mapping.md section 7 "Item lists" and the sections of each type):
# BF.MEXISTS, TOPK.QUERY/COUNT of several items, PFCOUNT of several keys,
# the sortedint range views, XRANGE/XREVRANGE on streams, XTRIM ~, and
# BITCOUNT/BITPOS names of bitmaps. Views are never listed; a malformed
# name is EINVAL with one log line and changes nothing.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mktyped() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v "$2" "$1"
}

@test "bloom .mexists:A,B answers BF.MEXISTS one line per item, in order" {
	mktyped "$NS/b" bloom
	printf 'apple\nba,na\nwith space\n' >>"$NS/b/.add"
	assert_eq "$(cat "$NS/b/.mexists:apple,cherry,with space,apple")" "$(printf '1\n0\n1\n1')"
	# a ',' inside an item: %2C in the list, typed %252C (the name is decoded once first)
	assert_eq "$(cat "$NS/b/.mexists:ba%252Cna,ba")" "$(printf '1\n0')" "escaped comma"
	assert_eq "$(cat "$NS/b/.mexists:apple")" 1 "one item"
	assert_eq "$(cat "$NS/b/.exists:ba,na")" 1 ".exists: takes the whole rest as one item"
	assert_eq "$(ls -A "$NS/b" | paste -sd' ')" "chain filter.0" "views not listed"
}

@test "bloom .mexists: with an empty item or no items is EINVAL, logged" {
	mktyped "$NS/b" bloom
	echo apple >>"$NS/b/.add"
	run errno_of 'os.stat(a[0])' "$NS/b/.mexists:apple,,x"
	assert_eq "$output" EINVAL
	grep -q "bloom filter .mexists:: item 2 is empty" "$KVFS_LOG"
	run errno_of 'os.stat(a[0])' "$NS/b/.mexists:"
	assert_eq "$output" EINVAL
	grep -q "bloom filter .mexists:: no items" "$KVFS_LOG"
	# the empty item is written %
	assert_eq "$(cat "$NS/b/.mexists:%,apple")" "$(printf '0\n1')" "empty item"
	assert_eq "$(cat "$NS/b/.card")" 1 "nothing changed"
}

@test "top-k .mquery:A,B and .mcount:A,B answer TOPK.QUERY and TOPK.COUNT per item" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.topk.k -v 3 "$NS/t"
	setfattr -n user.kvfs.topk.width -v 1000 "$NS/t"
	printf '%s\n' a b a c a b d a >>"$NS/t/.add"
	assert_eq "$(cat "$NS/t/.mquery:a,c,d,zz")" "$(printf '1\n0\n1\n0')" ".mquery"
	assert_eq "$(cat "$NS/t/.mcount:a,b,zz")" "$(printf '4\n2\n0')" ".mcount"
	assert_eq "$(cat "$NS/t/.query:a") $(cat "$NS/t/.count:b")" "1 2" "single views kept"
	assert_eq "$(ls -A "$NS/t" | paste -sd' ')" "buckets heap" "listing"
	run errno_of 'os.stat(a[0])' "$NS/t/.mcount:a,"
	assert_eq "$output" EINVAL
	grep -q "top-k .mcount:: item 2 is empty" "$KVFS_LOG"
}

@test "hyperloglog .count:K2,K3 is PFCOUNT of the union, equal to a PFMERGE's count" {
	mktyped "$NS/h1" hyperloglog
	mktyped "$NS/h2" hyperloglog
	mktyped "$NS/u" hyperloglog
	seq 1 600 >>"$NS/h1/.add"
	seq 400 1500 >>"$NS/h2/.add"
	printf 'h1\nh2\n' >>"$NS/u/.merge"
	want=$(cat "$NS/u/.count")
	assert_eq "$(cat "$NS/h1/.count:h2")" "$want" "union of h1 and h2"
	assert_eq "$(cat "$NS/h2/.count:h1,u,missing")" "$want" "a missing key is empty"
	assert_eq "$(cat "$NS/h1/.count:h1")" "$(cat "$NS/h1/.count")" "itself"
	assert_eq "$(ls -A "$NS/h1")" registers "listing"
	echo s >"$NS/str"
	run errno_of 'os.stat(a[0])' "$NS/h1/.count:h2,str"
	assert_eq "$output" EINVAL
	grep -q "'h1/.count:h2,str': a key named there is no hyperloglog: EINVAL" "$KVFS_LOG"
	assert_eq "$(cat "$NS/str")" s "nothing changed"
}

@test "sortedint .range:MIN..MAX and .revrange:MAX..MIN list ids as SIRANGEBYVALUE does" {
	mktyped "$NS/i" sortedint
	for id in 0 3 7 10 42 18446744073709551615; do touch "$NS/i/$id"; done
	assert_eq "$(cat "$NS/i/.range:3..10" | paste -sd' ')" "3 7 10" "inclusive"
	assert_eq "$(cat "$NS/i/.range:(3..(42" | paste -sd' ')" "7 10" "exclusive"
	assert_eq "$(cat "$NS/i/.range:-inf..+inf" | paste -sd' ')" \
		"0 3 7 10 42 18446744073709551615" "all"
	assert_eq "$(cat "$NS/i/.range:0..inf:1:2" | paste -sd' ')" "3 7" "offset 1 count 2"
	assert_eq "$(cat "$NS/i/.revrange:+inf..-inf:0:3" | paste -sd' ')" \
		"18446744073709551615 42 10" "revrange top 3"
	assert_eq "$(cat "$NS/i/.revrange:(42..(0" | paste -sd' ')" "10 7 3" "revrange exclusive"
	assert_eq "$(cat "$NS/i/.range:11..41")" "" "none in range"
	assert_eq "$(cat "$NS/i/.range:50..3")" "" "min above max"
	assert_eq "$(ls -A "$NS/i" | paste -sd' ')" "0 10 18446744073709551615 3 42 7" "views not listed"
}

@test "a malformed sortedint range view is EINVAL, logged; writing a view is refused" {
	mktyped "$NS/i" sortedint
	touch "$NS/i/5"
	for bad in '.range:1' '.range:a..3' '.range:1..3:2' '.range:+inf..3' '.range:1..3:x:1'; do
		run errno_of 'os.stat(a[0])' "$NS/i/$bad"
		assert_eq "$output" EINVAL "$bad"
	done
	grep -q "'.range:a..3': a sortedint range view is .range:MIN..MAX" "$KVFS_LOG"
	run errno_of 'open(a[0], "w")' "$NS/i/.range:1..3"
	assert_eq "$output" EACCES
	assert_eq "$(ls -A "$NS/i")" 5 "nothing changed"
}

mkstream() {
	mktyped "$NS/s" stream
	for i in 1 2 3 4 5; do printf 'a\t%s\n' "$i" >"$NS/s/$i-0"; done
	printf 'b\tx y\n' >"$NS/s/5-1"
}

@test "stream .range:START..END[:COUNT] is XRANGE, lines as .log's" {
	mkstream
	assert_eq "$(cat "$NS/s/.range:-..+")" "$(cat "$NS/s/.log")" "all equals .log"
	assert_eq "$(cat "$NS/s/.range:2-0..4-0" | cut -f1 | paste -sd' ')" "2-0 3-0 4-0" "IDs"
	assert_eq "$(cat "$NS/s/.range:(2-0..4" | cut -f1 | paste -sd' ')" "3-0 4-0" "( and MS"
	assert_eq "$(cat "$NS/s/.range:5..+" | cut -f1 | paste -sd' ')" "5-0 5-1" "MS low is MS-0"
	assert_eq "$(cat "$NS/s/.range:-..5" | cut -f1 | paste -sd' ')" "1-0 2-0 3-0 4-0 5-0 5-1" \
		"MS high is every seq"
	assert_eq "$(cat "$NS/s/.range:-..+:2")" "$(printf '1-0\ta\t1\n2-0\ta\t2')" "COUNT"
	assert_eq "$(cat "$NS/s/.range:5-1..5-1")" "$(printf '5-1\tb\tx y')" "one entry"
	assert_eq "$(cat "$NS/s/.range:9..+")" "" "none"
}

@test "stream .revrange:END..START[:COUNT] is XREVRANGE, newest first" {
	mkstream
	assert_eq "$(cat "$NS/s/.revrange:+..-" | cut -f1 | paste -sd' ')" \
		"5-1 5-0 4-0 3-0 2-0 1-0" "all"
	assert_eq "$(cat "$NS/s/.revrange:+..-:1")" "$(printf '5-1\tb\tx y')" "the last entry"
	assert_eq "$(cat "$NS/s/.revrange:(4-0..2" | cut -f1 | paste -sd' ')" "3-0 2-0" "bounds"
	assert_eq "$(ls -A "$NS/s" | paste -sd' ')" "1-0 2-0 3-0 4-0 5-0 5-1" "views not listed"
}

@test "a malformed stream range view is EINVAL, logged, and changes nothing" {
	mkstream
	for bad in '.range:1-0' '.range:+..-' '.range:x..+' '.range:-..+:0' '.range:-..+:x' \
		'.revrange:-..+' '.range:(-..+'; do
		run errno_of 'os.stat(a[0])' "$NS/s/$bad"
		assert_eq "$output" EINVAL "$bad"
	done
	grep -q "'.range:x..+': a stream range view is .range:START..END\[:COUNT\]" "$KVFS_LOG"
	run errno_of 'open(a[0], "w")' "$NS/s/.range:-..+"
	assert_eq "$output" EACCES
	assert_eq "$(cat "$NS/s/.info" | head -1)" "$(printf 'length\t6')" "unchanged"
}

@test ".ctl trim maxlen ~ N and minid ~ ID trim exactly, as trim maxlen N does" {
	mkstream
	echo 'trim maxlen ~ 4' >>"$NS/s/.ctl"
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "3-0 4-0 5-0 5-1 state" "after maxlen ~ 4"
	echo 'trim maxlen = 3' >>"$NS/s/.ctl"
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "4-0 5-0 5-1 state" "after maxlen = 3"
	echo 'trim minid ~ 5-1' >>"$NS/s/.ctl"
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "5-1 state" "after minid ~"
	for bad in 'trim maxlen ~' 'trim maxlen ~ x' 'trim maxlen ! 3' 'trim maxlen ~ 1 limit 5'; do
		run errno_of 'f = os.open(a[0], os.O_WRONLY|os.O_APPEND); os.write(f, a[1].encode() + b"\n")' \
			"$NS/s/.ctl" "$bad"
		assert_eq "$output" EINVAL "$bad"
	done
	grep -q "not a command: trim maxlen \[~|=\] N" "$KVFS_LOG"
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "5-1 state" "unchanged"
}
