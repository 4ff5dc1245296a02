#!/usr/bin/env bats
# The script patterns of docs/mapping.md section 26, run by several real
# shells at once through the mount: the locks must exclude each other
# exactly (a non-atomic read-modify-write inside them loses nothing).

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# worker N ACQUIRE RELEASE: N critical sections, each a non-atomic
# increment of $NS/plain (read, then write).
worker() {
	local n=$1 acquire=$2 release=$3 i v tok
	for i in $(seq 1 "$n"); do
		eval "$acquire"
		v=$(cat "$NS/plain")
		echo $((v + 1)) >"$NS/plain"
		eval "$release"
	done
}

@test "a list of one token is a mutex: 4 shells x 40 non-atomic increments inside it end at exactly 160" {
	mkdir "$NS/mutex"
	setfattr -n user.kvfs.type -v list "$NS/mutex"
	echo token >>"$NS/mutex/.rpush"
	echo 0 >"$NS/plain"
	pids=()
	for w in 1 2 3 4; do
		worker 40 'tok=$(cat "$NS/mutex/.blpop:30")' 'echo "$tok" >>"$NS/mutex/.rpush"' &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	assert_eq "$(cat "$NS/plain")" 160 "no increment lost"
	assert_eq "$(ls "$NS/mutex" | wc -l)" 1 "the token is back"
	assert_eq "$(cat "$NS/mutex/0")" token "the token"
}

@test "INCR == 1 is a lock: 4 shells x 25 non-atomic increments inside it end at exactly 100" {
	echo 0 >"$NS/plain"
	pids=()
	for w in 1 2 3 4; do
		worker 25 'until [ "$(cat "$NS/lock:incr")" = 1 ]; do sleep 0.01; done' \
			'rm "$NS/lock"' &
		pids+=($!)
	done
	for p in "${pids[@]}"; do wait "$p"; done
	assert_eq "$(cat "$NS/plain")" 100 "no increment lost"
	[ ! -e "$NS/lock" ]
}
