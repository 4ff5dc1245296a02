#!/usr/bin/env bats
# Counters (docs/mapping.md, "Counters"): `cat 'KEY:incr'`, ':decr',
# ':incrby:N', ':decrby:N', ':incrbyfloat:X' on string keys (INCR ...
# INCRBYFLOAT) and time series (TS.INCRBY/DECRBY), and the same suffixes
# on hash fields (HINCRBY, HINCRBYFLOAT) and zset members (ZINCRBY). Each
# open increments once and prints the new value and a newline. Never
# listed; a key or entry of that exact name wins.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# logged TEXT: the daemon's log holds TEXT exactly once.
logged() {
	local n
	n=$(grep -cF -- "$1" "$KVFS_LOG")
	assert_eq "$n" 1 "log lines with '$1'"
}

@test "INCR, DECR, INCRBY, DECRBY: a missing key starts at 0; each cat prints the new value" {
	run cat "$NS/c"
	[ "$status" -ne 0 ] # the kernel may now remember the miss
	assert_eq "$(cat "$NS/c:incr")" 1 "incr of a missing key"
	assert_eq "$(cat "$NS/c")" 1 "the key exists now"
	assert_eq "$(cat "$NS/c:incr")" 2 "incr"
	assert_eq "$(cat "$NS/c:incrby:10")" 12 "incrby"
	assert_eq "$(cat "$NS/c:decrby:20")" -8 "decrby"
	assert_eq "$(cat "$NS/c:decr")" -9 "decr"
	assert_eq "$(cat "$NS/c:incrby:+4")" -5 "a + sign, as Kvrocks reads it"
	# the answer is the value and a newline; the key holds the value only
	assert_bytes "$NS/c:incr" $'-4\n'
	assert_bytes "$NS/c" "-4"
	assert_eq "$(ls -A "$NS")" c "counters are never listed"
	assert_eq "$(find "$NS" | wc -l)" 2 "find sees the namespace and c"
	kvfs_unmount
	assert_eq "$(ldb_value metadata "$(nskey_hex c)")" "81$(printf '%016d' 0)$(hexof -4)" \
		"stored as Kvrocks's INCR stores it"
}

@test "cat KEY after an increment shows the new value (the page cache and the node are dropped)" {
	echo -n 41 >"$NS/k"
	assert_eq "$(cat "$NS/k")" 41
	stat "$NS/k" >/dev/null
	assert_eq "$(cat "$NS/k:incr")" 42
	assert_eq "$(cat "$NS/k")" 42 "read after the increment"
	assert_size "$NS/k" 2
	# while another process holds the key open
	exec 5<"$NS/k"
	assert_eq "$(cat "$NS/k:incrby:958")" 1000
	assert_eq "$(cat "$NS/k")" 1000 "read while open elsewhere"
	exec 5<&-
}

@test "INCRBYFLOAT stores Kvrocks's text (%f) and prints it; INCR of it is EINVAL" {
	assert_eq "$(cat "$NS/f:incrbyfloat:10.5")" 10.500000
	assert_eq "$(cat "$NS/f:incrbyfloat:0.1")" 10.600000
	assert_eq "$(cat "$NS/f:incrbyfloat:-1e1")" 0.600000
	assert_bytes "$NS/f" "0.600000"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/f:incr")" EINVAL "INCR of a float"
	assert_bytes "$NS/f" "0.600000"
	kvfs_unmount
	assert_eq "$(ldb_value metadata "$(nskey_hex f)")" "81$(printf '%016d' 0)$(hexof 0.600000)"
}

@test "the key's expiry is kept" {
	echo -n 5 >"$NS/e"
	setfattr -n user.kvfs.ttl -v 100000 "$NS/e"
	assert_eq "$(cat "$NS/e:incr")" 6
	ttl=$(getfattr --absolute-names --only-values -n user.kvfs.ttl "$NS/e")
	[ "$ttl" -gt 90000 ] && [ "$ttl" -le 100000 ]
	assert_eq "$(cat "$NS/e:incrbyfloat:0.5")" 6.500000
	getfattr -n user.kvfs.ttl "$NS/e" >/dev/null
}

@test "bad input: EINVAL or ERANGE, the value unchanged, one log line" {
	echo -n abc >"$NS/s"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/s:incr")" EINVAL "not an integer"
	logged "'s:incr': the value is not an integer; it is unchanged"
	assert_bytes "$NS/s" abc
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/s:incrbyfloat:1")" EINVAL "not a number"
	assert_bytes "$NS/s" abc
	echo -n 7 >"$NS/n"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/n:incrby:x")" EINVAL "N not a number"
	logged "'n:incrby:x': 'x' is not a whole number"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/n:incrby:1.5")" EINVAL "N not whole"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/n:incrby:")" EINVAL "N empty"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/n:incrbyfloat:nan")" EINVAL "X nan"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/n:incrby:9223372036854775807")" ERANGE "overflow"
	logged "'n:incrby:9223372036854775807': the result would be out of the 64-bit range"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/n:decrby:-9223372036854775808")" ERANGE
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/n:incrbyfloat:1e308")" OK
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/n:incrbyfloat:1e308")" ERANGE "to infinity"
	assert_eq "$(cat "$NS/n:incrbyfloat:-1e308")" 0.000000 "back: 1e308 was stored exactly"
	assert_eq "$(errno_of 'open(a[0], "w")' "$NS/n:incr")" EACCES "a counter is not written"
	assert_eq "$(errno_of 'open(a[0], "w")' "$NS/new:incr")" EACCES "nor created"
	[ ! -e "$NS/new" ]
}

@test "wrong type: EMEDIUMTYPE, logged; a key of the counter's exact name wins" {
	mkdir "$NS/h"
	echo 1 >"$NS/h/f"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/h:incr")" EMEDIUMTYPE
	logged "'h:incr': 'h' is a hash; counters are strings and time series"
	# a key named like a counter (made before counters existed, or by
	# Kvrocks) is that key
	echo -n 2 >"$NS/x"
	kvfs_unmount
	ldb_put metadata "$(nskey_hex x:incr)" "81$(printf '%016d' 0)$(hexof 100)"
	kvfs_mount
	assert_eq "$(cat "$NS/x:incr")" 100 "the key x:incr"
	assert_eq "$(cat "$NS/x:incr")" 100 "read again: no increment"
	assert_eq "$(cat "$NS/x")" 2 "x unchanged"
	assert_eq "$(cat "$NS/a:b:incr")" 1 "a key name holding ':'"
	assert_eq "$(cat "$NS/a:b")" 1
}

@test "HINCRBY, HINCRBYFLOAT on fields: H/F:incr ...; cat H/F shows the new value" {
	mkdir "$NS/h"
	run cat "$NS/h/f"
	[ "$status" -ne 0 ]
	assert_eq "$(cat "$NS/h/f:incr")" 1 "a missing field starts at 0"
	assert_eq "$(cat "$NS/h/f")" 1
	assert_eq "$(cat "$NS/h/f:incrby:41")" 42
	assert_eq "$(cat "$NS/h/f")" 42 "read after"
	assert_eq "$(cat "$NS/h/f:decrby:2")" 40
	assert_eq "$(cat "$NS/h/f:decr")" 39
	assert_eq "$(cat "$NS/h/p:incrbyfloat:2.5")" 2.500000
	assert_eq "$(ls -A "$NS/h" | paste -sd' ')" "f p" "only the fields are listed"
	echo -n x >"$NS/h/s"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/h/s:incr")" EINVAL
	logged "'s:incr': the field is not an integer; it is unchanged"
	assert_bytes "$NS/h/s" x
	: >"$NS/h/empty"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/h/empty:incr")" EINVAL "an empty field"
	assert_eq "$(errno_of 'open(a[0], "w")' "$NS/h/f:incr")" EACCES
	kvfs_unmount
	ver=$(ldb_value metadata "$(nskey_hex h)" | cut -c19-34)
	assert_eq "$(ldb_value default "$(printf '%02X%s%08X' 11 "$(hexof __namespace)" 1)$(hexof h)${ver}$(hexof p)")" "$(hexof 2.500000)" \
		"HINCRBYFLOAT's stored text"
}

@test "ZINCRBY on members: Z/M:incrby:X; a missing member is added; the score order follows" {
	mkdir "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	echo 5 >"$NS/z/a"
	assert_eq "$(cat "$NS/z/b:incrby:1.5")" 1.5 "a new member"
	assert_eq "$(cat "$NS/z/b:incrby:10")" 11.5
	assert_eq "$(cat "$NS/z/b")" 11.5 "read after"
	assert_eq "$(cat "$NS/z/.by-score-rev:1" | cut -f3)" b "b is first now"
	assert_eq "$(cat "$NS/z/a:decr")" 4
	assert_eq "$(cat "$NS/z/a:incrbyfloat:0.25")" 4.25
	assert_eq "$(cat "$NS/z/a:incrby:inf")" inf
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/z/a:incrby:-inf")" ERANGE "inf - inf"
	assert_eq "$(cat "$NS/z/a")" inf
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/z/a:incrby:x")" EINVAL
	assert_eq "$(ls -A "$NS/z" | paste -sd' ')" "a b"
}

@test "TS.INCRBY, TS.DECRBY on a time series: TS:incrby:X adds a sample now" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.type -v timeseries "$NS/t"
	assert_eq "$(cat "$NS/t:incrby:5")" 5 "from 0"
	assert_eq "$(cat "$NS/t:incrby:2.5")" 7.5
	assert_eq "$(cat "$NS/t:decrby:1")" 6.5
	assert_eq "$(cat "$NS/t/.last" | cut -d, -f2)" 6.5 "the newest sample"
	assert_eq "$(errno_of 'open(a[0]).read()' "$NS/t:incrby:x")" EINVAL
}

@test "user.kvfs.help of a string, hash, zset and time series names the counters" {
	echo 1 >"$NS/s"
	mkdir "$NS/h" "$NS/z" "$NS/t"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	setfattr -n user.kvfs.type -v timeseries "$NS/t"
	for k in s h; do
		out=$(getfattr --absolute-names --only-values -n user.kvfs.help "$NS/$k")
		[[ "$out" == *":incr "*":incrby:N "*":incrbyfloat:X "* ]]
	done
	out=$(getfattr --absolute-names --only-values -n user.kvfs.help "$NS/z")
	[[ "$out" == *"MEMBER:incrby:X "* ]]
	out=$(getfattr --absolute-names --only-values -n user.kvfs.help "$NS/t")
	[[ "$out" == *"T:incrby:X "* ]]
}

# count_up N M PATH: N shells, each cat'ing PATH M times (one process per
# increment, as a script does); waits for each by its pid.
count_up() {
	local n=$1 m=$2 path=$3 i pids=()
	for ((i = 0; i < n; i++)); do
		(for ((j = 0; j < m; j++)); do cat "$path" >/dev/null || exit 1; done) &
		pids+=($!)
	done
	local rc=0
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	return "$rc"
}

@test "contention: 8 shells x 500 INCR of one string end at exactly 4000" {
	count_up 8 500 "$NS/cnt:incr"
	assert_eq "$(cat "$NS/cnt")" 4000
}

@test "contention: 8 shells x 500 HINCRBY of one field end at exactly 4000" {
	mkdir "$NS/h"
	count_up 8 500 "$NS/h/f:incr"
	assert_eq "$(cat "$NS/h/f")" 4000
}

@test "contention: 8 shells x 500 ZINCRBY 0.5 + 0.5 of one member end at exactly 4000" {
	mkdir "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	local pids=() i rc=0
	count_up 4 500 "$NS/z/m:incrby:0.5" &
	pids+=($!)
	count_up 4 500 "$NS/z/m:incrbyfloat:1.5" &
	pids+=($!)
	for i in "${pids[@]}"; do wait "$i" || rc=1; done
	[ "$rc" -eq 0 ]
	assert_eq "$(cat "$NS/z/m")" 4000
	assert_eq "$(cat "$NS/z/.by-score" | wc -l)" 1 "one index record"
}
