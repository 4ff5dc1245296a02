#!/usr/bin/env bats
# A copy of a stream is the same stream (docs/mapping.md sections 17, 19):
# its state files `groups` (consumer groups, consumers, pending entries)
# and `state` (the metadata counters no entry shows) travel with the
# entries through rsync -aX, cp -a and tar --xattrs, and the restored
# key's records are Kvrocks's bytes of the original (ldb), but for the
# version. Malformed state files are refused and change nothing; a
# second rsync carries a changed group state; copies taken while two
# consumers read and acknowledge are each one consistent state.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mkst() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v stream "$1"
}

# mkrich DIR: a stream with deleted entries (XDEL), a trimmed head
# (XTRIM), its last entries deleted (last-generated-id above the last
# entry), two groups, consumers with and without pending entries, an
# entry delivered twice and a pending entry no longer in the stream.
mkrich() {
	local s=$1
	mkst "$s"
	for i in 1 2 3 4 5 6 7 8; do printf 'k\t%s\tbin\t\\x00\\t\n' $i >"$s/$i-0"; done
	rm "$s/3-0"
	echo 'trim maxlen 5' >"$s/.ctl" # 1-0 and 2-0 go
	echo 'group create g1 0' >"$s/.ctl"
	echo 'group create grp2 5-0 entriesread 3' >"$s/.ctl"
	echo 'readgroup g1 alice count 2' >"$s/.ctl"
	echo 'readgroup g1 bob' >"$s/.ctl"
	echo 'readgroup g1 bob 0' >"$s/.ctl" # bob's again: 2 deliveries
	echo 'readgroup grp2 carol count 1' >"$s/.ctl"
	echo 'group createconsumer g1 dave' >"$s/.ctl"
	rm "$s/4-0" # pending for alice, gone from the stream
	rm "$s/8-0" # the last entry
}

# views S: what the stream's views say, but the idle times (which grow).
views() {
	cat "$1/.info"
	cat "$1/.groups"
	for g in g1 grp2; do
		cut -f1,2 "$1/.consumers:$g"
		cut -f1,2,4 "$1/.pending:$g"
	done
}

# stream_records KEY [NS]: the metadata record of KEY but its version, and
# every stream-CF record of KEY (sub-key after the version, value), from
# ldb. Unmounted.
stream_records() {
	local key=$1 ns=${2:-$KVFS_DEFAULT_NS} nsh kh meta pre
	nsh=$(printf '%02X%s' "${#ns}" "$(hexof "$ns")")
	kh=$(hexof "$key")
	meta=$(ldb_value metadata "${nsh}${kh}") || return 1
	echo "meta ${meta:0:18} ${meta:34}"
	pre="0x${nsh}$(printf '%08X' "${#key}")${kh}"
	ldb_scan stream | awk -v p="$pre" 'index($1, p) == 1 { print substr($1, length(p) + 17), $3 }'
}

# same_stream A B: the stream B (a path) shows what A does.
same_stream() {
	assert_eq "$(views "$2")" "$(views "$1")" "views of $2"
	assert_eq "$(cat "$2/groups")" "$(cat "$1/groups")" "groups of $2"
	assert_eq "$(cat "$2/state")" "$(cat "$1/state")" "state of $2"
	assert_eq "$(ls "$2" | paste -sd' ')" "$(ls "$1" | paste -sd' ')" "listing of $2"
}

@test "the state files list what a copy needs: groups, consumers, pending entries, counters" {
	mkrich "$NS/s"
	assert_eq "$(ls "$NS/s" | paste -sd' ')" "5-0 6-0 7-0 groups state" "listing"
	assert_eq "$(cat "$NS/s/state")" "last-generated-id 8-0
max-deleted-entry-id 8-0
entries-added 8
recorded-first-entry-id 5-0" "state"
	run awk -F'\t' -v OFS='\t' '$1 == "consumer" { $3 = $4 = "T" } $1 == "pending" { $4 = "T" } 1' \
		"$NS/s/groups"
	# groups by name length then name, consumers likewise, pending by ID;
	# 4-0 and 8-0 are pending though deleted from the stream
	assert_eq "$output" "group	g1	8-0	8	0
consumer	bob	T	T
consumer	dave	T	T
consumer	alice	T	T
pending	4-0	alice	T	1
pending	5-0	alice	T	1
pending	6-0	bob	T	2
pending	7-0	bob	T	2
pending	8-0	bob	T	2
group	grp2	6-0	4	0
consumer	carol	T	T
pending	6-0	carol	T	1" "groups (times cut)"
	# the times are the stored ones: delivery times and seen times in ms
	now=$(date +%s%3N)
	for t in $(awk -F'\t' '$1 == "pending" { print $4 } $1 == "consumer" { print $3, $4 }' "$NS/s/groups"); do
		[ "$t" -le "$now" ] && [ "$t" -gt $((now - 600000)) ]
	done
	# a stream whose counters are those of its entries lists neither
	mkst "$NS/plain"
	printf 'a\t1\n' >>"$NS/plain/.add"
	assert_eq "$(ls "$NS/plain" | wc -l)" 1 "plain stream"
}

@test "rsync -aX out and back into another namespace: the same stream, record for record (ldb)" {
	mkrich "$NS/s"
	PLAIN=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$PLAIN/"
	assert_eq "$(ls "$PLAIN/s" | paste -sd' ')" "5-0 6-0 7-0 groups state" "copied files"
	mkdir "$KVFS_MNT/two"
	rsync -aX "$PLAIN/" "$KVFS_MNT/two/"
	same_stream "$NS/s" "$KVFS_MNT/two/s"
	# a second rsync finds nothing to send and changes nothing
	run rsync -aXi "$PLAIN/" "$KVFS_MNT/two/"
	assert_eq "$(grep -v '^\.d' <<<"$output")" "" "second rsync"
	kvfs_unmount
	a=$(stream_records s)
	b=$(stream_records s two)
	# metadata, 3 entries, 2 groups, 4 consumers, 6 pending entries
	assert_eq "$(wc -l <<<"$a")" 16 "records"
	assert_eq "$b" "$a" "stored records"
}

@test "cp -a and tar --xattrs restore the same stream: the hash they fill converts with its state files" {
	mkrich "$NS/s"
	PLAIN=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$PLAIN/"
	mkdir "$KVFS_MNT/cp" "$KVFS_MNT/tar"
	cp -a "$PLAIN/s" "$KVFS_MNT/cp/s"
	(cd "$PLAIN" && tar --xattrs --xattrs-include='user.*' -cf "$BATS_TEST_TMPDIR/s.tar" s)
	(cd "$KVFS_MNT/tar" && tar --xattrs --xattrs-include='user.*' -xf "$BATS_TEST_TMPDIR/s.tar")
	assert_eq "$(kvfs_type "$KVFS_MNT/cp/s")" stream "cp -a type"
	assert_eq "$(kvfs_type "$KVFS_MNT/tar/s")" stream "tar type"
	same_stream "$NS/s" "$KVFS_MNT/cp/s"
	same_stream "$NS/s" "$KVFS_MNT/tar/s"
	# and back out of the copy: still the same
	rm -rf "$PLAIN"
	cp -a "$KVFS_MNT/tar/s" "$PLAIN"
	mkdir "$KVFS_MNT/back"
	cp -a "$PLAIN" "$KVFS_MNT/back/s"
	same_stream "$NS/s" "$KVFS_MNT/back/s"
	kvfs_unmount
	a=$(stream_records s)
	for ns in cp tar back; do
		assert_eq "$(stream_records s $ns)" "$a" "stored records of the $ns copy"
	done
}

@test "a stream of groups alone (no entries) and a stream emptied by deletes copy too" {
	mkst "$NS/g"
	echo 'group create g 0 mkstream' >"$NS/g/.ctl"
	mkst "$NS/e"
	printf 'a\t1\n' >"$NS/e/1-0"
	rm "$NS/e/1-0"
	assert_eq "$(ls "$NS/g")" groups "groups only"
	assert_eq "$(ls "$NS/e")" state "counters only"
	PLAIN=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$PLAIN/"
	mkdir "$KVFS_MNT/two" "$KVFS_MNT/three"
	rsync -aX "$PLAIN/" "$KVFS_MNT/two/"
	cp -a "$PLAIN/." "$KVFS_MNT/three/"
	for d in two three; do
		assert_eq "$(cat "$KVFS_MNT/$d/g/groups")" "$(cat "$NS/g/groups")" "$d: groups"
		assert_eq "$(cat "$KVFS_MNT/$d/e/.info")" "$(cat "$NS/e/.info")" "$d: counters"
	done
}

@test "malformed state files are refused with EINVAL, logged, and change nothing" {
	mkrich "$NS/s"
	g0=$(cat "$NS/s/groups")
	s0=$(cat "$NS/s/state")
	w='f = open(a[0], "w"); f.write(a[1]); f.close()'
	for bad in $'group\tg1\tx\t1\t0\n' $'consumer\tc\t1\t1\n' \
		$'group\tg\t1-0\t-1\t0\ngroup\tg\t2-0\t-1\t0\n' \
		$'group\tg\t1-0\t-1\t0\nconsumer\tc\t1\t1\nconsumer\tc\t2\t2\n' \
		$'group\tg\t1-0\t-1\t0\nconsumer\tc\t1\t1\nconsumer\td\t1\t1\npending\t1-0\tc\t1\t1\npending\t1-0\td\t1\t1\n' \
		$'group\tg\t1-0\t1\t0\npending\t1-0\tghost\t1000\t1\n' \
		$'group\t1g\t1-0\t-1\t0\n' $'group\tg\t1-0\t-1\t0\tx\n' $'group\tg\t1-0\t-1\n' \
		$'group\tg\t1-0\t-1\t99999999999999999999\n' $'group\tg\t1-0\t-1\t0\npending\t1-0\tc\t1\n' \
		$'group\tg\\q\t1-0\t-1\t0\n' $'bogus\n'; do
		assert_eq "$(errno_of "$w" "$NS/s/groups" "$bad")" EINVAL "groups: $bad"
	done
	for bad in 'entries-added 8' $'last-generated-id 8-0\nmax-deleted-entry-id 8-0\nentries-added 8\nrecorded-first-entry-id 5-0\nentries-added 9' \
		$'last-generated-id 6-0\nmax-deleted-entry-id 0-0\nentries-added 8\nrecorded-first-entry-id 5-0' \
		$'last-generated-id 8-0\nmax-deleted-entry-id 9-0\nentries-added 8\nrecorded-first-entry-id 5-0' \
		$'last-generated-id 8-0\nmax-deleted-entry-id 8-0\nentries-added 2\nrecorded-first-entry-id 5-0' \
		$'last-generated-id 8\nmax-deleted-entry-id 8-0\nentries-added 8\nrecorded-first-entry-id 5-0'; do
		assert_eq "$(errno_of "$w" "$NS/s/state" "$bad")" EINVAL "state: $bad"
	done
	# an rsync-style temp file renamed onto it: refused at the rename
	printf 'group\tg\t1-0\tx\t0\n' >"$NS/s/.groups.Ab12Cd"
	run errno_of 'os.rename(a[0], a[1])' "$NS/s/.groups.Ab12Cd" "$NS/s/groups"
	assert_eq "$output" EINVAL "rename"
	rm -f "$NS/s/.groups.Ab12Cd"
	assert_eq "$(cat "$NS/s/groups")" "$g0" "groups unchanged"
	assert_eq "$(cat "$NS/s/state")" "$s0" "state unchanged"
	grep -q "stream groups, line 1 ('group	g1	x	1	0')" "$KVFS_LOG"
	grep -q "stream 's': max-deleted-entry-id is above last-generated-id" "$KVFS_LOG"
	grep -q "pending entry 1-0 of group 'g' names consumer 'ghost', which has no consumer line" "$KVFS_LOG"
	grep -q "pending entry 1-0 of group 'g' is written twice" "$KVFS_LOG"
	# a hash with such a file does not convert: it stays a hash
	mkdir "$NS/h"
	printf 'a\t1\n' >"$NS/h/1-0"
	printf 'group\tg\t1-0\n' >"$NS/h/groups"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"stream")' "$NS/h"
	assert_eq "$output" EINVAL
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
}

@test "writing a state file replaces that state in one batch; rm of groups destroys them, of state resets the counters" {
	mkrich "$NS/s"
	printf 'group\tnew\t6-0\t-1\t0\nconsumer\tzed\t1000\t2000\npending\t7-0\tzed\t3000\t9\n' \
		>"$NS/s/groups"
	assert_eq "$(cut -f1-3 "$NS/s/.groups")" $'new\t1\t1' "only the new group"
	assert_eq "$(cut -f1,2,4 "$NS/s/.pending:new")" $'7-0\tzed\t9' "its pending entry"
	grep -qx $'groups\t1' "$NS/s/.info"
	# readgroup goes on from the restored state
	echo 'readgroup new zed 0' >"$NS/s/.ctl"
	assert_eq "$(cut -f1,2,4 "$NS/s/.pending:new")" $'7-0\tzed\t10' "delivered again"
	rm "$NS/s/groups"
	assert_eq "$(cat "$NS/s/.groups")" "" "destroyed"
	grep -qx $'groups\t0' "$NS/s/.info"
	printf 'last-generated-id 100-5\nmax-deleted-entry-id 50-0\nentries-added 77\nrecorded-first-entry-id 5-0\n' \
		>"$NS/s/state"
	grep -qx $'entries-added\t77' "$NS/s/.info"
	grep -qx $'last-generated-id\t100-5' "$NS/s/.info"
	# XADD continues from the restored last ID
	printf 'a\t1\n' >>"$NS/s/.add"
	[[ $(tail -1 "$NS/s/.log" | cut -f1) != 100-5 ]]
	run errno_of 'open(a[0], "w").write("x\ty\n")' "$NS/s/100-5"
	assert_eq "$output" EINVAL
	rm "$NS/s/state"
	grep -qx $'max-deleted-entry-id\t0-0' "$NS/s/.info"
	grep -qx $'entries-added\t4' "$NS/s/.info"
	rm -r "$NS/s"
	[ ! -e "$NS/s" ]
}

@test "a second rsync -aX after a readgroup sends the changed group state" {
	mkrich "$NS/s"
	PLAIN=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$PLAIN/"
	mkdir "$KVFS_MNT/two"
	rsync -aX "$PLAIN/" "$KVFS_MNT/two/"
	t1=$(stat -c %Y "$NS/s/groups")
	sleep 1.1 # rsync compares whole seconds, as on any disk
	echo 'readgroup g1 bob 0 count 1' >"$NS/s/.ctl" # the same sizes: only the times tell
	[ "$(stat -c %Y "$NS/s/groups")" != "$t1" ]
	rsync -aX "$NS/" "$PLAIN/"
	rsync -aX "$PLAIN/" "$KVFS_MNT/two/"
	assert_eq "$(cut -f1,2,4 "$KVFS_MNT/two/s/.pending:g1")" "$(cut -f1,2,4 "$NS/s/.pending:g1")" \
		"pending"
	grep -q $'^pending\t6-0\tbob\t[0-9]*\t3$' "$KVFS_MNT/two/s/groups"
	assert_eq "$(cat "$KVFS_MNT/two/s/groups")" "$(cat "$NS/s/groups")" "groups"
}

@test "copies taken while two consumers read and acknowledge are each one consistent state" {
	mkst "$NS/s"
	seq 1 400 | awk '{ printf "n\t%d\n", $1 }' >>"$NS/s/.add"
	echo 'group create g 0' >"$NS/s/.ctl"
	local pids=()
	for c in c1 c2; do
		(
			for i in $(seq 1 60); do
				echo "readgroup g $c count 3" >"$NS/s/.ctl"
				id=$(cut -f1 "$NS/s/.pending:g:$c" | head -1)
				[ -z "$id" ] || echo "ack g $id" >"$NS/s/.ctl"
			done
		) 3>&- &
		pids+=($!)
	done
	mkdir "$KVFS_MNT/r"
	for i in $(seq 1 15); do
		rsync -aX "$NS/s/" "$BATS_TEST_TMPDIR/copy$i/"
		# the copy is one state: it restores (a bad line would be EINVAL)
		rsync -aX "$BATS_TEST_TMPDIR/copy$i/" "$KVFS_MNT/r/s$i/"
	done
	wait "${pids[@]}"
	for i in $(seq 1 15); do
		f=$BATS_TEST_TMPDIR/copy$i/groups
		[ -f "$f" ]
		# whole lines, each of its number of fields
		assert_eq "$(tail -c1 "$f" | od -An -c | tr -d ' ')" '\n' "copy $i ends a line"
		awk -F'\t' '($1 == "group" && NF != 5) || ($1 == "consumer" && NF != 4) ||
			($1 == "pending" && NF != 5) || $1 !~ /^(group|consumer|pending)$/ { exit 1 }' "$f"
		# each pending ID once, each at or below the last delivered ID
		assert_eq "$(awk -F'\t' '$1 == "pending"' "$f" | cut -f2 | sort | uniq -d)" "" "copy $i"
		last=$(awk -F'\t' '$1 == "group" { print $3 }' "$f")
		awk -F'\t' -v l="${last%-0}" '$1 == "pending" { split($2, a, "-"); if (a[1] > l) exit 1 }' "$f"
	done
	# a restored copy: the group's pending count is the PEL's size
	mkdir "$KVFS_MNT/two"
	rsync -aX "$BATS_TEST_TMPDIR/copy15/" "$KVFS_MNT/two/s/"
	n=$(grep -c '^pending' "$BATS_TEST_TMPDIR/copy15/groups" || true)
	assert_eq "$(cut -f3 "$KVFS_MNT/two/s/.groups")" "$n" "pending count"
	assert_eq "$(wc -l <"$KVFS_MNT/two/s/.pending:g")" "$n" "pending entries"
}
