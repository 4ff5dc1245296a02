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

C1000=00000000000000001000.csv

# ---------------------------------------------------------------- .log

@test ".log lists every sample and grows under tail -f as another process adds samples" {
	mktype "$NS/t" timeseries
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
	mktype "$NS/src" timeseries
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
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.retention -v 1000 "$NS/t"
	printf '1000,1\n3000,3\n' >>"$NS/t/.add"
	assert_bytes "$NS/t/.log" $'3000,3\n'
	echo '2500,2' >>"$NS/t/.add"
	assert_bytes "$NS/t/.log" $'2500,2\n3000,3\n'
}

# --------------------------------------------------------------- .madd

# write_once PATH TEXT: TEXT in one write() (bash's printf writes each
# line apart); prints the errno name of a failure, or OK.
write_once() {
	errno_of '
fd = os.open(a[0], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
try:
    os.write(fd, a[1].encode())
finally:
    os.close(fd)' "$1" "$2"
}

# meta_version KEY: the 8-byte version (hex) of time series KEY's metadata.
meta_version() {
	local out
	out=$(ldb_value metadata "$(nskey_hex "$1")") || return 1
	printf '%s\n' "${out:18:16}"
}

@test ".madd: one write adds to several series (a key with commas too), bytes as Kvrocks's (ldb)" {
	mktype "$NS/temp" timeseries
	mktype "$NS/hum" timeseries
	mktype "$NS/a,b" timeseries
	run write_once "$NS/.madd" $'temp,1000,1.5\nhum,2000,2\n\na,b,3000,7\ntemp,1500,-2\n'
	assert_eq "$output" OK
	assert_bytes "$NS/temp/$C1000" $'1000,1.5\n1500,-2\n'
	assert_bytes "$NS/hum/.log" $'2000,2\n'
	assert_bytes "$NS/a,b/.log" $'3000,7\n'
	assert_eq "$(ls -A "$NS" | paste -sd' ')" "a,b hum temp" ".madd is not listed"
	assert_eq "$(cat "$NS/.madd")" "" ".madd reads empty"
	kvfs_unmount
	vt=$(meta_version temp)
	vh=$(meta_version hum)
	run ldb_value default "${NS_HEX}0000000474656D70${vt}0000000000000003E8"
	assert_eq "$output" "0000000000000002""E803000000000000""000000000000F83F""DC05000000000000""00000000000000C0" "temp's chunk 1000"
	run ldb_value default "${NS_HEX}0000000368756D${vh}0000000000000007D0"
	assert_eq "$output" "0000000000000001""D007000000000000""0000000000000040" "hum's chunk 2000"
}

@test ".madd refuses the whole write, changing nothing: a missing key, a bad line, a blocked duplicate, a rule's destination" {
	mktype "$NS/temp" timeseries
	mktype "$NS/hum" timeseries
	setfattr -n user.kvfs.ts.rule.temp_s -v "sum 1000 0" "$NS/temp"
	run write_once "$NS/.madd" $'temp,1000,1\nhum,1000,2\n'
	assert_eq "$output" OK
	run write_once "$NS/.madd" $'temp,2000,1\nnope,2000,1\n'
	assert_eq "$output" ENOENT "missing key"
	grep -q "'.madd': line 2, key 'nope': no such time series" "$KVFS_LOG"
	run write_once "$NS/.madd" $'temp,2000,1\nhum,x,1\n'
	assert_eq "$output" EINVAL "bad timestamp"
	grep -q "'.madd': line 2 of this write is not" "$KVFS_LOG"
	run write_once "$NS/.madd" $'temp,2000,1\nhum,1000,5\n'
	assert_eq "$output" EEXIST "duplicate under block"
	grep -q "'.madd': line 2, key 'hum': a sample at that timestamp exists" "$KVFS_LOG"
	echo x >"$NS/str"
	run write_once "$NS/.madd" $'temp,2000,1\nstr,2000,1\n'
	assert_eq "$output" EMEDIUMTYPE "a string key"
	grep -q "'.madd': line 2, key 'str': the key is not a time series" "$KVFS_LOG"
	assert_bytes "$NS/str" $'x\n'
	run write_once "$NS/.madd" $'temp,2000,1\ntemp_s,2000,5\n'
	assert_eq "$output" EINVAL "a series and its rule's destination"
	grep -q "TS.MADD: 'temp_s' is written and is also the destination of a rule of 'temp'" "$KVFS_LOG"
	run write_once "$NS/.madd:on_duplicate=nope" $'temp,2000,1\n'
	assert_eq "$output" EINVAL "no such policy"
	[ ! -e "$NS/.madd:on_duplicate=nope" ]
	assert_bytes "$NS/temp/.log" $'1000,1\n'
	assert_bytes "$NS/hum/.log" $'1000,2\n'
	assert_bytes "$NS/temp_s/.log" ""
	run write_once "$NS/.madd" $'temp,2000,1\nhum,2000,1\n'
	assert_eq "$output" OK "the same lines without the bad one"
	assert_bytes "$NS/temp/.log" $'1000,1\n2000,1\n'
	assert_bytes "$NS/temp_s/.log" $'1000,1\n'
}

@test ".madd refused writes leave the records byte for byte (ldb)" {
	mktype "$NS/temp" timeseries
	mktype "$NS/hum" timeseries
	run write_once "$NS/.madd" $'temp,1000,1\nhum,1000,2\n'
	kvfs_unmount
	before=$(ldb_scan default)$(ldb_scan metadata)
	kvfs_mount
	for bad in $'temp,2000,1\nnope,2000,1\n' $'temp,2000,1\nhum,1000,5\n' $'hum,3000,1\ntemp,2000,nan\n'; do
		run write_once "$NS/.madd" "$bad"
		[ "$output" != OK ]
	done
	kvfs_unmount
	assert_eq "$(ldb_scan default)$(ldb_scan metadata)" "$before" "records"
}

@test ".madd:on_duplicate=sum adds to existing samples of every key of the write" {
	mktype "$NS/a" timeseries
	mktype "$NS/b" timeseries
	run write_once "$NS/.madd" $'a,1000,1\nb,1000,10\n'
	run write_once "$NS/.madd:on_duplicate=sum" $'a,1000,2\nb,1000,5\na,2000,1\n'
	assert_eq "$output" OK
	assert_bytes "$NS/a/.log" $'1000,3\n2000,1\n'
	assert_bytes "$NS/b/.log" $'1000,15\n'
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.duplicate_policy "$NS/a")" block
}

@test ".madd runs each series' rules, as .add does" {
	mktype "$NS/src" timeseries
	mktype "$NS/other" timeseries
	setfattr -n user.kvfs.ts.rule.src_max -v "max 1000 0" "$NS/src"
	run write_once "$NS/.madd" $'src,1000,4\nother,1,1\nsrc,1500,9\nsrc,2000,1\n'
	assert_eq "$output" OK
	assert_bytes "$NS/src_max/.log" $'1000,9\n'
	run write_once "$NS/.madd" $'other,2,1\nsrc,1200,20\n'
	assert_bytes "$NS/src_max/.log" $'1000,20\n'
}

@test "contention: 4 writers of .madd over 3 shared series and one of .add lose nothing" {
	for k in a b c; do mktype "$NS/$k" timeseries; done
	setfattr -n user.kvfs.ts.rule.c_n -v "count 100000 0" "$NS/c"
	pids=()
	for p in 1 2 3 4; do
		python3 -c '
import os, sys
p = int(sys.argv[2])
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
for i in range(500):
    t = p * 100000 + i
    os.write(fd, ("a,%d,1\nb,%d,%d\nc,%d,1\n" % (t, t, p, t)).encode())
os.close(fd)' "$NS/.madd" "$p" &
		pids+=($!)
	done
	(
		for i in $(seq 0 499); do
			echo "$((900000 + i)),5" >>"$NS/a/.add"
		done
	) &
	pids+=($!)
	wait "${pids[@]}"
	assert_eq "$(wc -l <"$NS/a/.log")" 2500 "samples of a"
	assert_eq "$(wc -l <"$NS/b/.log")" 2000 "samples of b"
	assert_eq "$(wc -l <"$NS/c/.log")" 2000 "samples of c"
	assert_eq "$(grep -c ',5$' "$NS/a/.log")" 500 "a's .add samples"
	for p in 1 2 3 4; do
		assert_eq "$(grep -c ",$p\$" "$NS/b/.log")" 500 "b's samples of writer $p"
	done
	assert_bytes "$NS/c_n/.log" $'100000,500\n200000,500\n300000,500\n'
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.rule.c_n "$NS/c")" \
		"count 100000 0 latest=400000 f=500"
}

# ------------------------------------------------------- editing chunks

@test "sed -i, perl -pi, vim, cp and python's temp-then-rename edit a chunk; the rule recomputes its buckets" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.rule.t_s -v "sum 1000 0" "$NS/t"
	run write_once "$NS/t/.add" $'1000,1\n1500,2\n2000,4\n2500,1\n3000,1\n'
	assert_bytes "$NS/t_s/.log" $'1000,3\n2000,5\n'
	F=$NS/t/$C1000
	sed -i 's/^1500,2$/1500,10/' "$F"
	assert_bytes "$NS/t_s/.log" $'1000,11\n2000,5\n' "after sed -i"
	perl -pi -e 's/^2500,1$/2500,5/' "$F"
	assert_bytes "$NS/t_s/.log" $'1000,11\n2000,9\n' "after perl -pi"
	vim -N -u NONE -i NONE --not-a-term -c '%s/^1000,1$/1000,2/' -c wq "$F" </dev/null >/dev/null 2>&1
	assert_bytes "$NS/t_s/.log" $'1000,12\n2000,9\n' "after vim"
	run python3 -c '
import os, sys, tempfile
d, f = sys.argv[1], sys.argv[2]
text = open(f).read().replace("3000,1\n", "3000,7\n4000,1\n")
fd, p = tempfile.mkstemp(dir=d)
os.write(fd, text.encode())
os.close(fd)
print(" ".join(sorted(os.listdir(d))))
os.replace(p, f)' "$NS/t" "$F"
	assert_eq "$output" "$C1000" "ls while the temp file is open"
	assert_bytes "$F" $'1000,2\n1500,10\n2000,4\n2500,5\n3000,7\n4000,1\n'
	# 3000 was the open bucket: 4000 closes it (7) and opens 4000
	assert_bytes "$NS/t_s/.log" $'1000,12\n2000,9\n3000,7\n' "after python"
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.rule.t_s "$NS/t")" "sum 1000 0 latest=4000 f=1"
	printf '1000,1\n2000,1\n' >"$BATS_TEST_TMPDIR/c.csv"
	cp "$BATS_TEST_TMPDIR/c.csv" "$F"
	# 3000 and 4000 are gone: bucket 3000 leaves the destination
	assert_bytes "$NS/t_s/.log" $'1000,1\n2000,1\n' "after cp"
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.rule.t_s "$NS/t")" "sum 1000 0 latest=4000 f=0"
	assert_eq "$(ls -A "$NS/t")" "$C1000" "no temp file left"
	assert_eq "$(kvfs_type "$NS/t")" timeseries
}

@test "a bad edit of a chunk is refused (EINVAL) and changes nothing (ldb); its temp file does not stay" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.rule.t_s -v "sum 1000 0" "$NS/t"
	run write_once "$NS/t/.add" $'1000,1\n1500,2\n2000,4\n3000,1\n'
	printf '5000,1\n' >"$NS/t/00000000000000005000.csv"
	kvfs_unmount
	before=$(ldb_scan default)$(ldb_scan metadata)
	kvfs_mount
	F=$NS/t/$C1000
	run sed -i 's/^1000,/1200,/' "$F"
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	run sed -i 's/^1500,2$/2500,2/' "$F"
	[ "$status" -ne 0 ]
	run perl -pi -e 's/^2000,4$/2000,x/' "$F"
	[ "$status" -ne 0 ]
	run errno_of '
f = open(a[0], "w")
f.write("1000,1\n5000,2\n")
f.close()' "$F"
	assert_eq "$output" EINVAL "overlaps the next chunk"
	assert_eq "$(ls -A "$NS/t" | paste -sd' ')" "$C1000 00000000000000005000.csv" "listing"
	kvfs_unmount
	assert_eq "$(ldb_scan default)$(ldb_scan metadata)" "$before" "records"
}

@test "rsync's temp file renamed onto a chunk stays a restore: a destination edited by hand is copied as it is" {
	mktype "$NS/t" timeseries
	# a_s sorts before t: rsync writes the destination first, then t's chunk
	setfattr -n user.kvfs.ts.rule.a_s -v "sum 1000 0" "$NS/t"
	run write_once "$NS/t/.add" $'1000,1\n1500,2\n2000,4\n'
	assert_bytes "$NS/a_s/.log" $'1000,3\n'
	printf '1000,99\n' >"$NS/a_s/$C1000" # a destination has no rules: kept as written
	assert_bytes "$NS/a_s/.log" $'1000,99\n'
	mkdir "$KVFS_MNT/copy"
	rsync -aX "$NS/" "$BATS_TEST_TMPDIR/backup/"
	rsync -aX "$BATS_TEST_TMPDIR/backup/" "$KVFS_MNT/copy/"
	assert_bytes "$KVFS_MNT/copy/a_s/.log" $'1000,99\n'
	assert_bytes "$KVFS_MNT/copy/t/.log" $'1000,1\n1500,2\n2000,4\n'
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.rule.a_s "$KVFS_MNT/copy/t")" \
		"$(getfattr --only-values -n user.kvfs.ts.rule.a_s "$NS/t")" "rule state"
	# an incremental rsync of a changed chunk is a restore too
	printf '1000,1\n1500,5\n2000,4\n' >"$BATS_TEST_TMPDIR/backup/t/$C1000"
	touch -d '2001-01-01' "$BATS_TEST_TMPDIR/backup/t/$C1000"
	rsync -aX "$BATS_TEST_TMPDIR/backup/" "$KVFS_MNT/copy/"
	assert_bytes "$KVFS_MNT/copy/t/.log" $'1000,1\n1500,5\n2000,4\n'
	assert_bytes "$KVFS_MNT/copy/a_s/.log" $'1000,99\n' "not recomputed"
}
