#!/usr/bin/env bats
# Time series, written and followed (docs/mapping.md section 20): the
# namespace input .madd (TS.MADD across keys, one batch), the growing
# .log view under tail -f, and chunk files edited in place by sed -i,
# perl -pi, vim and a write-then-rename, which recompute the rules'
# buckets they touch, while rsync's temp file stays a restore.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mkts() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v timeseries "$1"
}

C1000=00000000000000001000.csv

# ---------------------------------------------------------------- .log

@test ".log lists every sample and grows under tail -f as another process adds samples" {
	mkts "$NS/t"
	printf '1000,1\n2000,2.5\n' >>"$NS/t/.add"
	assert_bytes "$NS/t/.log" $'1000,1\n2000,2.5\n'
	assert_size "$NS/t/.log" 16
	timeout 6 tail -n +1 -f "$NS/t/.log" >"$BATS_TEST_TMPDIR/tail" 3>&- &
	tailpid=$!
	sleep 1.5
	(echo '3000,3' >>"$NS/t/.add") 3>&-
	sleep 1.5
	(printf '4000,4\n5000,-1\n' >>"$NS/t/.add") 3>&-
	wait "$tailpid" || true
	assert_bytes "$BATS_TEST_TMPDIR/tail" $'1000,1\n2000,2.5\n3000,3\n4000,4\n5000,-1\n'
	assert_eq "$(ls -A "$NS/t" | paste -sd' ')" "$C1000" ".log is not listed"
	run errno_of 'open(a[0], "w")' "$NS/t/.log"
	assert_eq "$output" EACCES
}

@test ".log of a rule's destination grows with the buckets the rule closes" {
	mkts "$NS/src"
	setfattr -n user.kvfs.ts.rule.sum1s -v "sum 1000 0" "$NS/src"
	printf '1000,1\n1500,2\n' >>"$NS/src/.add"
	assert_bytes "$NS/sum1s/.log" ""
	timeout 6 tail -n +1 -f "$NS/sum1s/.log" >"$BATS_TEST_TMPDIR/tail" 3>&- &
	tailpid=$!
	sleep 1.5
	(echo '2100,4' >>"$NS/src/.add") 3>&-
	sleep 1.5
	(echo '3000,1' >>"$NS/src/.add") 3>&-
	wait "$tailpid" || true
	assert_bytes "$BATS_TEST_TMPDIR/tail" $'1000,3\n2000,4\n'
	assert_bytes "$NS/sum1s/.log" $'1000,3\n2000,4\n'
}

@test ".log keeps to the retention window, and a late sample shows in a new open" {
	mkts "$NS/t"
	setfattr -n user.kvfs.ts.retention -v 1000 "$NS/t"
	printf '1000,1\n3000,3\n' >>"$NS/t/.add"
	assert_bytes "$NS/t/.log" $'3000,3\n'
	echo '2500,2' >>"$NS/t/.add"
	assert_bytes "$NS/t/.log" $'2500,2\n3000,3\n'
}
