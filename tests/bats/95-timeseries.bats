#!/usr/bin/env bats
# Time-series keys are directories of CSV chunk files (docs/mapping.md
# section 20): .add takes "timestamp,value" lines all or nothing,
# chunks list in time order and can be written back (a restore), views
# answer ranges, aggregations, the newest sample and TS.INFO, the
# namespace views select series by label filters, parameters, labels and
# compaction rules are user.kvfs.ts.* attributes, the stored bytes are
# Kvrocks's (ldb), and rsync -aX copies a series exactly.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

C1000=00000000000000001000.csv

@test "mkdir + type makes an empty series; .add adds samples; chunks are CSV in time order" {
	mktype "$NS/t" timeseries
	assert_eq "$(kvfs_type "$NS/t")" timeseries "type"
	assert_eq "$(ls -A "$NS/t")" "" "no chunks yet"
	printf '2000,2.5\n1000,1\n' >>"$NS/t/.add"
	assert_eq "$(ls -A "$NS/t")" "$C1000" "one chunk, named by its first timestamp"
	assert_bytes "$NS/t/$C1000" $'1000,1\n2000,2.5\n'
	assert_size "$NS/t/$C1000" 16
	kvfs_remount
	assert_bytes "$NS/t/$C1000" $'1000,1\n2000,2.5\n'
}

@test "samples added through .add change the series' mtime, kept over a remount" {
	mktype "$NS/t" timeseries
	echo "1000,1" >>"$NS/t/.add"
	touch -d @978307200 "$NS/t"
	kvfs_remount
	assert_eq "$(stat -c %Y "$NS/t")" 978307200 "touch -d"
	echo "2000,1" >>"$NS/t/.add"
	kvfs_remount
	# (An add once dropped the change: the mtime stayed at 2001.)
	m=$(stat -c %Y "$NS/t")
	[ "$m" -gt $(($(date +%s) - 60)) ] || { echo "mtime $m" >&2; false; }
}

@test "chunks split at chunk_size and list in time order" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.chunk_size -v 2 "$NS/t"
	for t in 1 2 3 4 5; do echo "${t}000,$t" >>"$NS/t/.add"; done
	assert_eq "$(ls -U "$NS/t" | paste -sd' ')" \
		"00000000000000001000.csv 00000000000000003000.csv 00000000000000005000.csv" "chunks"
	assert_eq "$(cat "$NS/t"/*.csv | paste -sd' ')" "1000,1 2000,2 3000,3 4000,4 5000,5" "samples"
	# Out of order (Kvrocks's rule): an older chunk grows to 2 x chunk_size.
	mktype "$NS/u" timeseries
	setfattr -n user.kvfs.ts.chunk_size -v 2 "$NS/u"
	for t in 5 1 3 2 4; do echo "${t}000,$t" >>"$NS/u/.add"; done
	assert_eq "$(ls -U "$NS/u" | paste -sd' ')" \
		"00000000000000001000.csv 00000000000000005000.csv" "chunks"
	assert_eq "$(cat "$NS/u"/*.csv | paste -sd' ')" "1000,1 2000,2 3000,3 4000,4 5000,5" "samples"
}

@test "values print as the shortest text that reads back the same double" {
	mktype "$NS/t" timeseries
	printf '1,0.1\n2,1e300\n3,-inf\n4,1000000\n5,0.30000000000000004\n' >>"$NS/t/.add"
	assert_bytes "$NS/t/00000000000000000001.csv" \
		$'1,0.1\n2,1e+300\n3,-inf\n4,1e+06\n5,0.30000000000000004\n'
}

@test "a malformed line refuses the whole write (EINVAL), logs its number, adds nothing" {
	mktype "$NS/t" timeseries
	echo "1000,1" >>"$NS/t/.add"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"2000,2\n3000,abc\n4000,4\n")' "$NS/t/.add"
	assert_eq "$output" EINVAL
	grep -q "line 2 of this write is not" "$KVFS_LOG"
	assert_bytes "$NS/t/$C1000" $'1000,1\n'
	for bad in 'x,1' '1000' '-5,1' '1000,' ',1' '1000,nan'; do
		run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, (a[1] + "\n").encode())' "$NS/t/.add" "$bad"
		assert_eq "$output" EINVAL "errno for '$bad'"
	done
	assert_bytes "$NS/t/$C1000" $'1000,1\n'
}

@test "* is the clock" {
	mktype "$NS/t" timeseries
	before=$(($(date +%s%3N) - 1))
	echo "*,7" >>"$NS/t/.add"
	after=$(($(date +%s%3N) + 1))
	IFS=, read -r ts v <"$NS/t/.last"
	[ "$ts" -ge "$before" ] && [ "$ts" -le "$after" ]
	assert_eq "$v" 7
}

@test "duplicate policy: block refuses (EEXIST) and stores nothing; sum adds" {
	mktype "$NS/t" timeseries
	echo "1000,1" >>"$NS/t/.add"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"2000,2\n1000,5\n")' "$NS/t/.add"
	assert_eq "$output" EEXIST
	assert_bytes "$NS/t/$C1000" $'1000,1\n'
	setfattr -n user.kvfs.ts.duplicate_policy -v sum "$NS/t"
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.duplicate_policy "$NS/t")" sum
	echo "1000,5" >>"$NS/t/.add"
	assert_bytes "$NS/t/$C1000" $'1000,6\n'
	run setfattr -n user.kvfs.ts.duplicate_policy -v often "$NS/t"
	[ "$status" -ne 0 ]
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.duplicate_policy "$NS/t")" sum
}

@test "ON_DUPLICATE per write: .add:on_duplicate=POLICY overrides the key's policy for that write" {
	mktype "$NS/t" timeseries
	echo "1000,1" >>"$NS/t/.add"
	printf '1000,5\n2000,2\n' | cat >>"$NS/t/.add:on_duplicate=sum"
	assert_bytes "$NS/t/$C1000" $'1000,6\n2000,2\n'
	echo "1000,3" >>"$NS/t/.add:on_duplicate=min"
	echo "2000,9" >>"$NS/t/.add:on_duplicate=MAX"
	assert_bytes "$NS/t/$C1000" $'1000,3\n2000,9\n'
	# the key's own policy is still block
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.duplicate_policy "$NS/t")" block "policy"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"3000,1\n1000,5\n")' "$NS/t/.add:on_duplicate=block"
	assert_eq "$output" EEXIST
	assert_bytes "$NS/t/$C1000" $'1000,3\n2000,9\n'
	# a policy that is none is no input: refused at create
	run errno_of 'os.open(a[0], os.O_WRONLY | os.O_APPEND | os.O_CREAT)' "$NS/t/.add:on_duplicate=avg"
	assert_eq "$output" EINVAL
}

@test "tar --xattrs and cp -a restore a time series: a hash of chunk files becomes the series" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.chunk_size -v 2 "$NS/t"
	setfattr -n user.kvfs.ts.label.room -v kitchen "$NS/t"
	printf '1000,1\n2000,2\n3000,3\n4000,4.5\n5000,5\n' | cat >>"$NS/t/.add"
	local chunks
	chunks=$(ls "$NS/t" | paste -sd' ')
	PLAIN=$BATS_TEST_TMPDIR/plain
	mkdir "$PLAIN"
	cp -a "$NS/t" "$PLAIN/t"
	tar --xattrs --xattrs-include='user.*' -C "$PLAIN" -cf "$BATS_TEST_TMPDIR/t.tar" t
	mkdir "$KVFS_MNT/r1" "$KVFS_MNT/r2"
	cp -a "$PLAIN/t" "$KVFS_MNT/r1/t"
	tar --xattrs --xattrs-include='user.*' -C "$KVFS_MNT/r2" -xf "$BATS_TEST_TMPDIR/t.tar"
	for r in r1 r2; do
		assert_eq "$(kvfs_type "$KVFS_MNT/$r/t")" timeseries "type ($r)"
		assert_eq "$(ls "$KVFS_MNT/$r/t" | paste -sd' ')" "$chunks" "chunks ($r)"
		assert_eq "$(cat "$KVFS_MNT/$r/t/.range:-..+")" "$(cat "$NS/t/.range:-..+")" "samples ($r)"
		assert_eq "$(getfattr --only-values -n user.kvfs.ts.label.room "$KVFS_MNT/$r/t")" kitchen "label ($r)"
		assert_eq "$(getfattr --only-values -n user.kvfs.ts.chunk_size "$KVFS_MNT/$r/t")" 2 "chunk size ($r)"
		assert_eq "$(cat "$KVFS_MNT/$r/t/.last")" "$(cat "$NS/t/.last")" "last ($r)"
	done
	# the metadata record is the original's after its version (ldb): the
	# size (3 chunks), the parameters, the last timestamp
	kvfs_unmount
	local orig copy
	orig=$(ldb_value metadata "$(nskey_hex t)")
	copy=$(ldb_value metadata "$(nskey_hex t r2)")
	assert_eq "${copy:34}" "${orig:34}" "metadata after the version"
	assert_eq "${copy:34:16}" 0000000000000003 "size"
	kvfs_mount
	# a directory whose files are no chunks stays a hash (EINVAL, logged)
	mkdir "$NS/h"
	echo 1,1 >"$NS/h/notachunk"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"timeseries")' "$NS/h"
	assert_eq "$output" EINVAL
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
	# chunks that overlap are refused the same way
	mkdir "$NS/o"
	printf '1000,1\n3000,3\n' >"$NS/o/$C1000"
	printf '2000,2\n' >"$NS/o/00000000000000002000.csv"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"timeseries")' "$NS/o"
	assert_eq "$output" EINVAL
	assert_eq "$(kvfs_type "$NS/o")" hash "type"
}

@test "range views: raw, reverse, count, value filter, aggregation with bucket timestamps and empty" {
	mktype "$NS/t" timeseries
	printf '1000,1\n1500,3\n2000,5\n2500,2\n4000,10\n' >>"$NS/t/.add"
	assert_bytes "$NS/t/.range:1500..2500" $'1500,3\n2000,5\n2500,2\n'
	assert_bytes "$NS/t/.revrange:-..+:count=2" $'4000,10\n2500,2\n'
	assert_bytes "$NS/t/.range:-..+:value=2..3" $'1500,3\n2500,2\n'
	assert_bytes "$NS/t/.range:-..+:ts=4000,1000" $'1000,1\n4000,10\n'
	assert_bytes "$NS/t/.range:-..+:avg:1000" $'1000,2\n2000,3.5\n4000,10\n'
	assert_bytes "$NS/t/.range:-..+:var.s:1000" $'1000,2\n2000,4.5\n4000,0\n'
	assert_bytes "$NS/t/.range:-..+:sum:1000:empty" $'1000,4\n2000,7\n3000,0\n4000,10\n'
	assert_bytes "$NS/t/.range:-..+:avg:1000:bt=mid" $'1500,2\n2500,3.5\n4500,10\n'
	assert_bytes "$NS/t/.range:-..+:count:1000:align=500" $'500,1\n1500,2\n2500,1\n3500,1\n'
	assert_bytes "$NS/t/.last" $'4000,10\n'
	grep -qx "totalSamples 5" "$NS/t/.info"
	grep -qx "firstTimestamp 1000" "$NS/t/.info"
	run errno_of 'open(a[0]).read()' "$NS/t/.range:-..+:median:1000"
	assert_eq "$output" EINVAL
	run errno_of 'open(a[0], "w")' "$NS/t/.last"
	assert_eq "$output" EACCES
	assert_eq "$(ls -A "$NS/t")" "$C1000" "views and .add are not listed"
}

@test "retention hides old samples on read and refuses too old ones" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.retention -v 1000 "$NS/t"
	printf '1000,1\n2000,2\n2500,3\n' >>"$NS/t/.add"
	assert_bytes "$NS/t/.range:-..+" $'2000,2\n2500,3\n'
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"1400,9\n")' "$NS/t/.add"
	assert_eq "$output" EINVAL
	grep -q "older than the retention window" "$KVFS_LOG"
}

@test "labels are attributes; namespace views select series by label filters" {
	mktype "$NS/a" timeseries
	mktype "$NS/b" timeseries
	mktype "$NS/c" timeseries
	setfattr -n user.kvfs.ts.label.sensor -v temp "$NS/a"
	setfattr -n user.kvfs.ts.label.room -v k "$NS/a"
	setfattr -n user.kvfs.ts.label.sensor -v temp "$NS/b"
	setfattr -n user.kvfs.ts.label.sensor -v hum "$NS/c"
	printf '10,1\n20,2\n' >>"$NS/a/.add"
	echo "10,3" >>"$NS/b/.add"
	echo "10,4" >>"$NS/c/.add"
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.label.room "$NS/a")" k
	assert_bytes "$NS/.mget?sensor=temp" $'a,20,2\nb,10,3\n'
	assert_bytes "$NS/.mrange:-..+?sensor=temp,room!=k" $'b,10,3\n'
	assert_bytes "$NS/.mrange:-..+?sensor=(temp,hum),room=" $'b,10,3\nc,10,4\n'
	assert_bytes "$NS/.mrevrange:-..+:sum:100?sensor=temp,room!=" $'a,0,3\n'
	run errno_of 'open(a[0]).read()' "$NS/.mget?room!=k"
	assert_eq "$output" EINVAL
	grep -q "at least one" "$KVFS_LOG"
	setfattr -x user.kvfs.ts.label.room "$NS/a"
	assert_bytes "$NS/.mget?sensor=temp,room=" $'a,20,2\nb,10,3\n'
	[ -z "$(ls -A "$NS" | grep mget)" ]
}

@test "compaction rules: closed buckets reach the destination, late samples recompute theirs" {
	mktype "$NS/src" timeseries
	setfattr -n user.kvfs.ts.rule.avg1s -v "avg 1000 0" "$NS/src"
	assert_eq "$(kvfs_type "$NS/avg1s")" timeseries "destination made"
	printf '1000,1\n1500,3\n' >>"$NS/src/.add"
	assert_eq "$(cat "$NS/avg1s"/*.csv 2>/dev/null)" "" "bucket still open"
	echo "2000,5" >>"$NS/src/.add"
	assert_eq "$(cat "$NS/avg1s"/*.csv)" "1000,2"
	echo "1200,5" >>"$NS/src/.add"
	assert_eq "$(cat "$NS/avg1s"/*.csv)" "1000,3"
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.rule.avg1s "$NS/src")" \
		"avg 1000 0 latest=2000 u=1 f=5"
	grep -qx "sourceKey src" "$NS/avg1s/.info"
	grep -qx "rule avg1s avg 1000 0" "$NS/src/.info"
	setfattr -x user.kvfs.ts.rule.avg1s "$NS/src"
	echo "3000,1" >>"$NS/src/.add"
	assert_eq "$(cat "$NS/avg1s"/*.csv)" "1000,3"
	run setfattr -n user.kvfs.ts.rule.x -v "median 10 0" "$NS/src"
	[ "$status" -ne 0 ]
}

@test "a rule's state without latest= starts at latest 0; an overlong rule is EINVAL, logged" {
	mktype "$NS/src" timeseries
	setfattr -n user.kvfs.ts.rule.d -v "avg 1000 0 u=2 f=6" "$NS/src"
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.rule.d "$NS/src")" \
		"avg 1000 0 latest=0 u=2 f=6"
	run errno_of 'os.setxattr(a[0], "user.kvfs.ts.rule.e", b"avg 1000 0" + b" u=1" * 150)' "$NS/src"
	assert_eq "$output" EINVAL
	grep -q "ts.rule.\*: write" "$KVFS_LOG"
	[ -z "$(getfattr -n user.kvfs.ts.rule.e "$NS/src" 2>/dev/null)" ]
}

@test "a rule onto itself or onto a string is refused before an empty directory becomes a series" {
	mkdir "$NS/e"
	run errno_of 'os.setxattr(a[0], "user.kvfs.ts.rule.e", b"avg 1000 0")' "$NS/e"
	assert_eq "$output" EINVAL
	grep -q "into itself" "$KVFS_LOG"
	[ "$(kvfs_type "$NS/e")" != timeseries ]
	echo x >"$NS/s"
	run errno_of 'os.setxattr(a[0], "user.kvfs.ts.rule.s", b"avg 1000 0")' "$NS/e"
	assert_eq "$output" EMEDIUMTYPE
	[ "$(kvfs_type "$NS/e")" != timeseries ]
	assert_eq "$(cat "$NS/s")" x
}

@test "a label on an empty directory makes a series with it; removing one there is ENODATA" {
	mkdir "$NS/e" "$NS/f"
	setfattr -n user.kvfs.ts.label.room -v kitchen "$NS/e"
	assert_eq "$(kvfs_type "$NS/e")" timeseries
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.label.room "$NS/e")" kitchen
	run errno_of 'os.removexattr(a[0], "user.kvfs.ts.label.room")' "$NS/f"
	assert_eq "$output" ENODATA
	[ "$(kvfs_type "$NS/f")" != timeseries ]
}

@test "a chunk file can be rewritten whole; bad content is EINVAL and changes nothing" {
	mktype "$NS/t" timeseries
	printf '1000,1\n2000,2\n' >>"$NS/t/.add"
	printf '1000,7\n1500,8\n' >"$NS/t/$C1000"
	assert_bytes "$NS/t/$C1000" $'1000,7\n1500,8\n'
	for bad in $'1000,x\n' $'1500,1\n' $'1000,1\n900,2\n'; do
		run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_TRUNC); os.write(fd, a[1].encode()); os.close(fd)' "$NS/t/$C1000" "$bad"
		assert_eq "$output" EINVAL "errno for '$bad'"
	done
	assert_bytes "$NS/t/$C1000" $'1000,7\n1500,8\n'
	run errno_of 'open(a[0], "w").write("1,1\\n")' "$NS/t/notachunk"
	assert_eq "$output" EINVAL
	rm "$NS/t/$C1000"
	assert_eq "$(ls -A "$NS/t")" "" "chunk removed"
	rmdir "$NS/t"
	[ ! -e "$NS/t" ]
}

@test "wrong type: ts attributes on a string or a hash are refused" {
	echo x >"$NS/s"
	run setfattr -n user.kvfs.ts.retention -v 5 "$NS/s"
	[ "$status" -ne 0 ]
	mkdir "$NS/h"
	echo v >"$NS/h/f"
	run setfattr -n user.kvfs.ts.retention -v 5 "$NS/h"
	[ "$status" -ne 0 ]
	assert_eq "$(kvfs_type "$NS/h")" hash
}

@test "ldb: metadata, a chunk with little-endian samples and a label as Kvrocks stores them" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.label.a -v b "$NS/t"
	echo "1000,1.5" >>"$NS/t/.add"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex t)"
	# type 13 v1, no expiry, version, size 1, retention 0, chunk_size 1024,
	# uncompressed, block, source "", last_timestamp 0
	tail="0000000000000000""0000000000000400""00""00""00000000""0000000000000000"
	[[ $output =~ ^8D0000000000000000([0-9A-F]{16})0000000000000001${tail}$ ]] || {
		echo "metadata of t: $output" >&2
		false
	}
	version=${BASH_REMATCH[1]}
	sub="${NS_HEX}0000000174${version}"
	run ldb_value default "${sub}0000000000000003E8"
	assert_eq "$output" 0000000000000001E803000000000000000000000000F83F "chunk 1000"
	run ldb_value default "${sub}01$(hexof a)"
	assert_eq "$output" "$(hexof b)" "label"
}

@test "rsync -aX copies series, labels, parameters and rules into an empty namespace exactly" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.chunk_size -v 2 "$NS/t"
	setfattr -n user.kvfs.ts.retention -v 100000 "$NS/t"
	setfattr -n user.kvfs.ts.duplicate_policy -v last "$NS/t"
	setfattr -n user.kvfs.ts.label.room -v kitchen "$NS/t"
	setfattr -n user.kvfs.ts.rule.t_avg -v "avg 1000 0" "$NS/t"
	printf '1000,1\n1500,2\n2100,4\n2600,5\n3200,0.1\n' >>"$NS/t/.add"
	mkdir "$KVFS_MNT/copy"
	rsync -aX "$NS/" "$BATS_TEST_TMPDIR/backup/"
	rsync -aX "$BATS_TEST_TMPDIR/backup/" "$KVFS_MNT/copy/"
	for k in t t_avg; do
		assert_eq "$(getfattr -d -m - "$KVFS_MNT/copy/$k" | tail -n +2)" \
			"$(getfattr -d -m - "$NS/$k" | tail -n +2)" "attributes of $k"
		assert_eq "$(ls -A "$KVFS_MNT/copy/$k")" "$(ls -A "$NS/$k")" "chunks of $k"
		assert_eq "$(cat "$KVFS_MNT/copy/$k"/*.csv)" "$(cat "$NS/$k"/*.csv)" "samples of $k"
		assert_eq "$(cat "$KVFS_MNT/copy/$k/.info")" "$(cat "$NS/$k/.info")" "info of $k"
	done
	# The copy goes on exactly as the original: the rule's state came along.
	echo "4000,1" >>"$NS/t/.add"
	echo "4000,1" >>"$KVFS_MNT/copy/t/.add"
	assert_eq "$(cat "$KVFS_MNT/copy/t_avg"/*.csv)" "$(cat "$NS/t_avg"/*.csv)" "after one more"
	kvfs_remount
	assert_eq "$(cat "$KVFS_MNT/copy/t"/*.csv | paste -sd' ')" \
		"1000,1 1500,2 2100,4 2600,5 3200,0.1 4000,1" "after remount"
}

@test "kvfs compact drops chunks past the retention (Kvrocks's rule), keeps the rest" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.chunk_size -v 2 "$NS/t"
	setfattr -n user.kvfs.ts.retention -v 1000 "$NS/t"
	printf '1000,1\n2000,2\n3000,3\n4000,4\n5000,5\n' >>"$NS/t/.add"
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.last_timestamp "$NS/t")" 5000
	kvfs_unmount
	pfx="${NS_HEX}0000000174"
	run ldb_scan default
	[ "$(printf '%s\n' "$output" | grep -c "^0x${pfx}[0-9A-F]\{16\}00")" -eq 3 ]
	"$KVFS_BIN" compact "$KVFS_DB" >/dev/null
	run ldb_scan default
	# chunk 1000 (last 2000 < 5000 - 1000) is gone; 3000 (last 4000) and 5000 stay
	! printf '%s\n' "$output" | grep -q "^0x${pfx}[0-9A-F]\{16\}0000000000000003E8 "
	printf '%s\n' "$output" | grep -q "^0x${pfx}[0-9A-F]\{16\}000000000000000BB8 "
	printf '%s\n' "$output" | grep -q "^0x${pfx}[0-9A-F]\{16\}000000000000001388 "
	kvfs_mount
	assert_eq "$(cat "$NS/t"/*.csv | paste -sd' ')" "3000,3 4000,4 5000,5" "samples left"
}
