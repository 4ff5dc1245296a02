#!/usr/bin/env bats
# Streams are directories of entries named by ID (docs/mapping.md section
# 19): .add with auto IDs, explicit IDs above the last one, immutable
# entries, rm as XDEL, the escaped field<TAB>value format, the .ctl
# commands for consumer groups and the .groups/.consumers/.pending views,
# .log under tail -f, mv, rm -r, rsync -aX into an empty namespace, and
# the stored bytes (ldb).

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mkst() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v stream "$1"
}

# append_errno PATH TEXT: open PATH as >> does (O_CREAT), write TEXT in one
# write(), close; print the errno name of the first call that failed (or OK).
append_errno() {
	errno_of '
fd = os.open(a[0], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
os.write(fd, a[1].encode())
os.close(fd)' "$1" "$2"
}

@test "a line written to .add is an entry with a generated ID; entries listed in ID order" {
	mkst "$NS/s"
	printf 'temp\t21\n' >"$NS/s/.add"
	printf 'temp\t22\thum\t40\n' >"$NS/s/.add"
	run ls -U "$NS/s"
	[ "${#lines[@]}" -eq 2 ]
	[[ ${lines[0]} =~ ^[0-9]{13}-0$ ]]
	[ "${lines[0]}" \< "${lines[1]}" ] || [ "${#lines[0]}" -lt "${#lines[1]}" ]
	assert_bytes "$NS/s/${lines[0]}" $'temp\t21\n'
	assert_bytes "$NS/s/${lines[1]}" $'temp\t22\nhum\t40\n'
	assert_size "$NS/s/${lines[1]}" 15
	assert_eq "$(kvfs_type "$NS/s")" stream "type"
	# inputs and views are not listed
	assert_eq "$(ls -A "$NS/s" | grep -c '^\.')" 0 "dot names listed"
}

@test "an explicit ID above the last creates that entry; listing is numeric ID order" {
	mkst "$NS/s"
	printf 'a\t1\n' >"$NS/s/9-0"
	printf 'a\t2\n' >"$NS/s/10-0"
	printf 'a\t3\n' >"$NS/s/10-1"
	printf 'a\t4\n' >"$NS/s/100-0"
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "9-0 10-0 10-1 100-0" "order"
	kvfs_remount
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "9-0 10-0 10-1 100-0" "after remount"
	assert_bytes "$NS/s/10-1" $'a\t3\n'
}

@test "an explicit ID at or below the last one is refused with EINVAL and changes nothing" {
	mkst "$NS/s"
	printf 'a\t1\n' >"$NS/s/5-5"
	for bad in 5-5 5-4 4-9 0-0 1-0; do
		run errno_of 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_EXCL))' "$NS/s/$bad"
		if [ "$bad" = 5-5 ]; then
			assert_eq "$output" EEXIST "errno for $bad"
		else
			assert_eq "$output" EINVAL "errno for $bad"
		fi
	done
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "5-5" "entries"
	grep -q "a new entry's ID must be greater than the last ID 5-5" "$KVFS_LOG"
	assert_eq "$(grep -c "must be greater than the last ID" "$KVFS_LOG")" 3 "one line each"
	assert_eq "$(grep -c "create '0-0': not a valid entry ID" "$KVFS_LOG")" 1 "0-0 logged"
	grep -qx $'entries-added\t1' "$NS/s/.info"
}

@test "a name that is not an ID is refused with EINVAL" {
	mkst "$NS/s"
	for bad in abc 1 01-0 1-01 -1-0 1-2-3 18446744073709551616-0 0-0 18446744073709551615-0; do
		run errno_of 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT))' "$NS/s/$bad"
		assert_eq "$output" EINVAL "errno for '$bad'"
	done
	assert_eq "$(ls -A "$NS/s")" "" "entries"
}

@test "entries are immutable: writing or truncating one is refused with EACCES" {
	mkst "$NS/s"
	printf 'a\t1\n' >"$NS/s/1-0"
	run errno_of 'os.close(os.open(a[0], os.O_WRONLY | os.O_TRUNC))' "$NS/s/1-0"
	assert_eq "$output" EACCES
	run errno_of 'os.truncate(a[0], 0)' "$NS/s/1-0"
	assert_eq "$output" EACCES
	assert_bytes "$NS/s/1-0" $'a\t1\n'
	grep -q "the entries of a stream cannot be changed" "$KVFS_LOG"
}

@test "a malformed entry file is refused with EINVAL and no entry is added" {
	mkst "$NS/s"
	run errno_of 'f = os.open(a[0], os.O_WRONLY | os.O_CREAT); os.write(f, b"no tab here\n"); os.close(f)' "$NS/s/1-0"
	assert_eq "$output" EINVAL
	run errno_of 'f = os.open(a[0], os.O_WRONLY | os.O_CREAT); os.write(f, b"a\\q\tb\n"); os.close(f)' "$NS/s/2-0"
	assert_eq "$output" EINVAL
	printf 'a\tb\tc\n' >"$NS/s/.add" || true
	assert_eq "$(ls -A "$NS/s")" "" "entries"
	grep -q "line 1: not field<TAB>value pairs" "$KVFS_LOG"
}

@test "the format is binary-safe: TAB, newline, backslash and control bytes are escaped" {
	mkst "$NS/s"
	printf 'f\\ttab\tline1\\nline2\\\\ \\x00\\x7f\\r\xc3\xa9\n' >"$NS/s/1-0"
	assert_bytes "$NS/s/1-0" $'f\\ttab\tline1\\nline2\\\\ \\x00\\x7f\\r\xc3\xa9\n'
	kvfs_unmount
	# stored bytes: varint lengths, then the raw field and value
	run ldb_scan stream
	field=$(printf 'f\ttab' | xxd -p -u)
	value=$(printf 'line1\nline2\\ \000\177\r\303\251' | xxd -p -u | tr -d '\n')
	vlen=$(printf '%02X' $((${#value} / 2)))
	assert_eq "$vlen" 12 "value length"
	printf '%s\n' "$output" | grep -q " : 0x05${field}${vlen}${value}\$"
}

@test "4 concurrent writers to .add: every entry stored once, counters exact" {
	mkst "$NS/s"
	local pids=()
	for w in 1 2 3 4; do
		(for i in $(seq 1 50); do printf 'w\t%s\ti\t%s\n' $w $i >"$NS/s/.add"; done) 3>&- &
		pids+=($!)
	done
	wait "${pids[@]}" # not a bare wait: the daemon is a child too
	assert_eq "$(ls -A "$NS/s" | wc -l)" 200 "entries"
	assert_eq "$(sort -u <(cut -f3,5 "$NS/s/.log") | wc -l)" 200 "distinct pairs"
	grep -qx $'length\t200' "$NS/s/.info"
	grep -qx $'entries-added\t200' "$NS/s/.info"
}

@test "XADD MAXLEN, MINID and NOMKSTREAM as .add options: one batch per write, exact trims" {
	mkst "$NS/s"
	# entries at ms F, in the future: the generated IDs are F-4, F-5, ...
	local F=99999999999999
	for q in 1 2 3; do printf 'o\t%s\n' $q >"$NS/s/$F-$q"; done
	# MAXLEN 4 over 3 old + 3 new (one write): the two oldest go
	printf 'n\t1\nn\t2\nn\t3\n' | cat >>"$NS/s/.add:maxlen=4"
	assert_eq "$(ls "$NS/s" | tr '\n' ' ')" "$F-3 $F-4 $F-5 $F-6 state " "maxlen 4"
	# each entry of the write holds its own line
	assert_bytes "$NS/s/$F-4" $'n\t1\n'
	assert_bytes "$NS/s/$F-5" $'n\t2\n'
	assert_bytes "$NS/s/$F-6" $'n\t3\n'
	grep -qx $'length\t4' "$NS/s/.info"
	grep -qx $'entries-added\t6' "$NS/s/.info"
	grep -qx $'max-deleted-entry-id\t'$F-2 "$NS/s/.info"
	# ~ trims exactly too (as Kvrocks); MAXLEN 0 stores nothing, counts the add
	printf 'n\t4\n' >>"$NS/s/.add:maxlen~2"
	assert_eq "$(ls "$NS/s" | tr '\n' ' ')" "$F-6 $F-7 state " "maxlen ~2"
	printf 'n\t5\n' >>"$NS/s/.add:maxlen=0"
	assert_eq "$(ls -A "$NS/s")" state "maxlen 0: only the counters"
	grep -qx $'entries-added\t8' "$NS/s/.info"
	grep -qx $'max-deleted-entry-id\t'$F-8 "$NS/s/.info"
	# MINID: entries below it never stay
	printf 'n\t6\nn\t7\n' | cat >>"$NS/s/.add:minid=$F-10"
	assert_eq "$(ls "$NS/s" | tr '\n' ' ')" "$F-10 state " "minid"
	printf 'n\t8\n' >>"$NS/s/.add:nomkstream:minid~$F"
	assert_eq "$(ls "$NS/s" | tr '\n' ' ')" "$F-10 $F-11 state " "nomkstream on a stream with a record"
	# NOMKSTREAM on a stream without a record (an empty remembered one)
	mkst "$NS/e"
	assert_eq "$(append_errno "$NS/e/.add:nomkstream" $'f\tv\n')" ENOENT "nomkstream"
	assert_eq "$(ls -A "$NS/e")" "" "nothing added"
	# misspelt or doubled options are no input: refused at create
	for bad in .add:maxln=3 .add:maxlen=x .add:maxlen=1:minid=1 .add:limit=5 .add: .add:minid=1-x; do
		assert_eq "$(append_errno "$NS/s/$bad" $'f\tv\n')" EINVAL "$bad"
	done
	assert_eq "$(ls "$NS/s" | wc -l)" 3 "nothing added by refused names"
}

@test "4 shells add to .add:maxlen=50 at once: exactly 50 stay, every add counted" {
	mkst "$NS/s"
	local pids=()
	for w in 1 2 3 4; do
		(for i in $(seq 1 100); do printf 'w\t%s\ti\t%s\n' $w $i >>"$NS/s/.add:maxlen=50"; done) 3>&- &
		pids+=($!)
	done
	wait "${pids[@]}"
	assert_eq "$(ls -A "$NS/s" | grep -vcx state)" 50 "entries"
	grep -qx $'length\t50' "$NS/s/.info"
	grep -qx $'entries-added\t400' "$NS/s/.info"
	# the 50 that stay are the 50 newest: each shell's stay in its order
	for w in 1 2 3 4; do
		grep -P "\tw\t$w\t" "$NS/s/.log" | cut -f5 | sort -c -n
	done
	# the newest entry is the last add of the shell that finished last
	assert_eq "$(tail -1 "$NS/s/.log" | cut -f4-)" $'i\t100' "newest"
}

@test "rm is XDEL; the emptied stream stays a live key until rmdir" {
	mkst "$NS/s"
	printf 'a\t1\n' >"$NS/s/1-0"
	printf 'a\t2\n' >"$NS/s/2-0"
	rm "$NS/s/1-0"
	assert_eq "$(ls -A "$NS/s" | paste -sd' ')" "2-0 state" "entries, and the counters"
	rm "$NS/s/2-0"
	assert_eq "$(kvfs_type "$NS/s")" stream "type"
	grep -qx $'max-deleted-entry-id\t2-0' "$NS/s/.info"
	grep -qx $'length\t0' "$NS/s/.info"
	# IDs keep growing after the deletes
	run errno_of 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT))' "$NS/s/2-0"
	assert_eq "$output" EINVAL
	run errno_of 'os.unlink(a[0])' "$NS/s/7-0"
	assert_eq "$output" ENOENT
	rmdir "$NS/s"
	[ ! -e "$NS/s" ]
}

@test "rm -r removes a stream with entries" {
	mkst "$NS/s"
	for i in 1 2 3; do printf 'a\t%s\n' $i >"$NS/s/.add"; done
	rm -r "$NS/s"
	[ ! -e "$NS/s" ]
}

@test "mv renames a stream with its entries (RENAME copies the stream column family)" {
	mkst "$NS/s"
	printf 'a\t1\n' >"$NS/s/1-0"
	printf 'b\t2\n' >"$NS/s/2-0"
	echo 'group create g 0' >"$NS/s/.ctl"
	mv "$NS/s" "$NS/s2"
	[ ! -e "$NS/s" ]
	assert_eq "$(ls -U "$NS/s2" | paste -sd' ')" "1-0 2-0 groups" "entries and groups"
	assert_bytes "$NS/s2/2-0" $'b\t2\n'
	assert_eq "$(cut -f1 "$NS/s2/.groups")" g "groups"
}

@test ".log has one line per entry and grows under tail -f" {
	mkst "$NS/s"
	printf 'a\t1\n' >"$NS/s/1-0"
	printf 'a\t2\tb\t3\n' >"$NS/s/2-0"
	assert_bytes "$NS/s/.log" $'1-0\ta\t1\n2-0\ta\t2\tb\t3\n'
	assert_size "$NS/s/.log" 20
	timeout 5 tail -n +1 -f "$NS/s/.log" >"$BATS_TEST_TMPDIR/tail" 3>&- &
	tailpid=$!
	sleep 1.5
	printf 'c\t4\n' >"$NS/s/3-0"
	wait "$tailpid" || true
	assert_bytes "$BATS_TEST_TMPDIR/tail" $'1-0\ta\t1\n2-0\ta\t2\tb\t3\n3-0\tc\t4\n'
}

@test "views and inputs are read-only, unremovable and never listed" {
	mkst "$NS/s"
	printf 'a\t1\n' >"$NS/s/1-0"
	run errno_of 'open(a[0], "w")' "$NS/s/.log"
	assert_eq "$output" EACCES
	run errno_of 'os.unlink(a[0])' "$NS/s/.add"
	assert_eq "$output" EACCES
	assert_eq "$(cat "$NS/s/.add")" "" ".add reads empty"
	assert_eq "$(ls -A "$NS/s" | paste -sd' ')" "1-0" "listing"
}

@test "XINFO STREAM as .info" {
	mkst "$NS/s"
	printf 'a\t1\n' >"$NS/s/1-0"
	printf 'a\t2\n' >"$NS/s/3-0"
	rm "$NS/s/1-0"
	assert_bytes "$NS/s/.info" $'length\t1\nlast-generated-id\t3-0\nmax-deleted-entry-id\t1-0\nentries-added\t2\nrecorded-first-entry-id\t3-0\ngroups\t0\nfirst-entry\t3-0\nlast-entry\t3-0\n'
}

@test ".ctl trim maxlen and minid are XTRIM" {
	mkst "$NS/s"
	for i in 1 2 3 4 5; do printf 'a\t%s\n' $i >"$NS/s/$i-0"; done
	echo 'trim maxlen 3' >"$NS/s/.ctl"
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "3-0 4-0 5-0 state" "after maxlen"
	echo 'trim minid 5' >"$NS/s/.ctl"
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "5-0 state" "after minid"
	run errno_of 'f = os.open(a[0], os.O_WRONLY); os.write(f, b"trim maxlen x\n")' "$NS/s/.ctl"
	assert_eq "$output" EINVAL
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "5-0 state" "unchanged"
}

@test "consumer groups: create, readgroup records pending entries, ack, claim, views" {
	mkst "$NS/s"
	for i in 1 2 3; do printf 'a\t%s\n' $i >"$NS/s/$i-0"; done
	echo 'group create workers 0' >"$NS/s/.ctl"
	assert_eq "$(cat "$NS/s/.groups")" $'workers\t0\t0\t0-0\t-\t3' ".groups after create"
	# reading a view takes nothing
	cat "$NS/s/.pending:workers" "$NS/s/.log" >/dev/null
	assert_eq "$(cat "$NS/s/.groups")" $'workers\t0\t0\t0-0\t-\t3' "no side effect"
	echo 'readgroup workers alice count 2' >"$NS/s/.ctl"
	assert_eq "$(cut -f1,2,4 "$NS/s/.pending:workers" | paste -sd' ')" \
		"1-0	alice	1 2-0	alice	1" "pending"
	assert_eq "$(cut -f1-5 "$NS/s/.groups")" $'workers\t1\t2\t2-0\t2' ".groups after read"
	echo 'readgroup workers bob' >"$NS/s/.ctl"
	assert_eq "$(cut -f1 "$NS/s/.pending:workers:bob")" 3-0 "bob's"
	assert_eq "$(cut -f1,2 "$NS/s/.consumers:workers" | paste -sd' ')" \
		"bob	1 alice	2" "consumers"
	echo 'ack workers 1-0' >"$NS/s/.ctl"
	echo 'claim workers bob 0 2-0' >"$NS/s/.ctl"
	assert_eq "$(cut -f1,2 "$NS/s/.pending:workers" | paste -sd' ')" \
		"2-0	bob 3-0	bob" "after ack and claim"
	assert_eq "$(cut -f1,2 "$NS/s/.consumers:workers" | paste -sd' ')" \
		"bob	2 alice	0" "consumers after claim"
	echo 'group delconsumer workers bob' >"$NS/s/.ctl"
	assert_eq "$(cut -f1-3 "$NS/s/.groups")" $'workers\t1\t0' "after delconsumer"
	echo 'group setid workers $' >"$NS/s/.ctl"
	assert_eq "$(cut -f4 "$NS/s/.groups")" 3-0 "setid \$"
	echo 'group destroy workers' >"$NS/s/.ctl"
	assert_eq "$(cat "$NS/s/.groups")" "" "destroyed"
}

@test ".ctl autoclaim is XAUTOCLAIM: idle pending entries move to the claiming consumer" {
	mkst "$NS/s"
	for i in 1 2; do printf 'a\t%s\n' $i >"$NS/s/$i-0"; done
	echo 'group create g 0' >"$NS/s/.ctl"
	echo 'readgroup g alice' >"$NS/s/.ctl"
	echo 'autoclaim g bob 3600000 0' >"$NS/s/.ctl"
	assert_eq "$(cut -f2 "$NS/s/.pending:g" | paste -sd' ')" "alice alice" "not idle enough"
	echo 'autoclaim g bob 0 0 count 1' >"$NS/s/.ctl"
	assert_eq "$(cut -f1,2,4 "$NS/s/.pending:g" | paste -sd' ')" "1-0	bob	2 2-0	alice	1" "one claimed"
	rm "$NS/s/2-0"
	echo 'autoclaim g bob 0 0' >"$NS/s/.ctl"
	assert_eq "$(cut -f1,2 "$NS/s/.pending:g")" $'1-0\tbob' "deleted entry dropped"
	assert_eq "$(cut -f1-3 "$NS/s/.groups")" $'g\t2\t1' "group counts"
}

@test "group commands that fail are refused with their errno and change nothing" {
	mkst "$NS/s"
	printf 'a\t1\n' >"$NS/s/1-0"
	echo 'group create g $' >"$NS/s/.ctl"
	run errno_of 'f = os.open(a[0], os.O_WRONLY); os.write(f, b"group create g 0\n")' "$NS/s/.ctl"
	assert_eq "$output" EEXIST
	run errno_of 'f = os.open(a[0], os.O_WRONLY); os.write(f, b"readgroup nog c\n")' "$NS/s/.ctl"
	assert_eq "$output" ENOENT
	run errno_of 'f = os.open(a[0], os.O_WRONLY); os.write(f, b"group create 1g 0\n")' "$NS/s/.ctl"
	assert_eq "$output" EINVAL
	run errno_of 'f = os.open(a[0], os.O_WRONLY); os.write(f, b"frobnicate\n")' "$NS/s/.ctl"
	assert_eq "$output" EINVAL
	assert_eq "$(cut -f1-4 "$NS/s/.groups")" $'g\t0\t0\t1-0' "groups"
	grep -q "no consumer group 'nog'" "$KVFS_LOG"
}

@test "a stream key of another type's directory: .add on a hash is just a field" {
	mkdir "$NS/h"
	printf 'x\n' >"$NS/h/.add"
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
	assert_bytes "$NS/h/.add" $'x\n'
}

@test "XADD with explicit IDs: metadata 88, 12 counters, entry sub-keys in the stream CF" {
	mkst "$NS/s"
	printf 'a\tb\n' >"$NS/s/1-1"
	printf 'c\td\n' >"$NS/s/2-0"
	rm "$NS/s/1-1"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex s)"
	# flags 88, no expiry, version, size 1, then last_generated 2-0,
	# recorded_first 2-0, max_deleted 1-1, first 2-0, last 2-0,
	# entries_added 2, group_number 0
	local id20=00000000000000020000000000000000 id11=00000000000000010000000000000001
	[[ $output =~ ^880000000000000000([0-9A-F]{16})0000000000000001${id20}${id20}${id11}${id20}${id20}00000000000000020000000000000000$ ]] || {
		echo "metadata of s: $output" >&2
		false
	}
	version=${BASH_REMATCH[1]}
	run ldb_scan stream
	printf '%s\n' "$output" | grep -qx "0x${NS_HEX}0000000173${version}${id20} : 0x01630164"
	! printf '%s\n' "$output" | grep -q "${version}${id11}"
	# nothing of the stream in the default column family
	! ldb_scan default | grep -q "0x${NS_HEX}0000000173"
}

@test "a consumer group's records: FF x8 then type 1 (group), 2 (consumer), 3 (pending)" {
	mkst "$NS/s"
	printf 'a\tb\n' >"$NS/s/1-0"
	echo 'group create g 0' >"$NS/s/.ctl"
	echo 'readgroup g c' >"$NS/s/.ctl"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex s)"
	[[ $output =~ ^880000000000000000([0-9A-F]{16})0000000000000001.{176}0000000000000001$ ]]
	version=${BASH_REMATCH[1]}
	local pre="0x${NS_HEX}0000000173${version}FFFFFFFFFFFFFFFF"
	run ldb_scan stream
	# group g: 1 consumer, 1 pending, last delivered 1-0, entries_read 1, lag 0
	printf '%s\n' "$output" | grep -qx "${pre}01000000000000000167 : 0x000000000000000100000000000000010000000000000001000000000000000000000000000000010000000000000000"
	# consumer c of g: pending 1, then two times
	printf '%s\n' "$output" | grep -qE "^${pre}02000000000000000167000000000000000163 : 0x0000000000000001[0-9A-F]{32}\$"
	# pending 1-0 of g: delivery time, count 1, consumer c
	printf '%s\n' "$output" | grep -qE "^${pre}0300000000000000016700000000000000010000000000000000 : 0x[0-9A-F]{16}0000000000000001000000000000000163\$"
}

@test "cp -a into the mount: the hash it fills becomes a stream when its type is set" {
	mkst "$NS/s"
	printf 'k\tnine\n' >"$NS/s/9-0"
	printf 'k\tten\tbin\t\\x00\n' >"$NS/s/10-0"
	cp -a "$NS/s" "$BATS_TEST_TMPDIR/plain"
	cp -a "$BATS_TEST_TMPDIR/plain" "$NS/s2"
	assert_eq "$(kvfs_type "$NS/s2")" stream "type"
	assert_eq "$(ls -U "$NS/s2" | paste -sd' ')" "9-0 10-0" "entries"
	assert_eq "$(cat "$NS/s2/.log")" "$(cat "$NS/s/.log")" ".log"
	# a directory whose files are no entries stays a hash (EINVAL, logged)
	mkdir "$NS/h"
	echo x >"$NS/h/notanid"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"stream")' "$NS/h"
	assert_eq "$output" EINVAL
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
}

@test "rsync -aX round trip into an empty namespace, IDs out of name order (9-0 after 10-0)" {
	mkst "$NS/s"
	printf 'k\tnine\n' >"$NS/s/9-0"
	printf 'k\tten\tbin\t\\x00\\t\n' >"$NS/s/10-0"
	printf 'k\tten-one\n' >"$NS/s/10-1"
	printf 'k\thundred\n' >"$NS/s/100-0"
	mkst "$NS/empty"
	PLAIN=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$PLAIN/"
	assert_eq "$(getfattr --absolute-names --only-values -n user.kvfs.type "$PLAIN/s")" stream \
		"type carried"
	! ls -A "$PLAIN/s" | grep -q '^\.' # no views or inputs copied
	mkdir "$KVFS_MNT/copy"
	rsync -aX "$PLAIN/" "$KVFS_MNT/copy/"
	diff -r "$PLAIN" "$KVFS_MNT/copy"
	assert_eq "$(ls -U "$KVFS_MNT/copy/s" | paste -sd' ')" "9-0 10-0 10-1 100-0" "order"
	assert_eq "$(kvfs_type "$KVFS_MNT/copy/empty")" stream "empty stream"
	# the counters are those of adding the entries in ID order
	assert_eq "$(cat "$KVFS_MNT/copy/s/.info")" "$(cat "$NS/s/.info")" ".info"
	# a second rsync over it changes nothing
	rsync -aX "$PLAIN/" "$KVFS_MNT/copy/"
	diff -r "$PLAIN" "$KVFS_MNT/copy"
	kvfs_unmount
	! ldb_scan stream | grep -qE "2E[0-9A-F]*2E[0-9A-F]{12} :"
}
