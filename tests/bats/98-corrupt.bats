#!/usr/bin/env bats
# Corrupt records through a real mount (issue 15 items 4, 6, 7, 8, 15):
# counts read from the store are bounded before they size anything, a
# corrupt key reads as EIO with one log line naming it as the tree
# spells it, `rm`, `rm -r` and user.kvfs.ttl 0 delete it, and values out
# of range are refused on write and change nothing. Records are planted
# with ldb while unmounted.

load helper

# A version for planted keys: 4096.
VER=0000000000001000

# plant_meta KEY VALUEHEX: the metadata record of KEY in the default ns.
plant_meta() {
	ldb_put metadata "$(nskey_hex "$1")" "$2"
}

# The daemon's peak resident set, in kB.
peak_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$KVFS_PID/status"
}

@test "a bloom whose n_filters disagrees with bloom_bytes reads as EIO; the daemon stays small" {
	kvfs_mount
	kvfs_unmount
	# 65535 filters of capacity 2^32-1 at error 1e-9 (128 MiB each), but
	# bloom_bytes 128: loading the chain would take 8 TiB.
	plant_meta cb "890000000000000000${VER}0000000000000000FFFF0002FFFFFFFFBE112E0BE826D69500000080"
	kvfs_mount
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/cb/filter.0")" EIO "cat filter.0"
	assert_eq "$(errno_of 'os.listdir(a[0])' "$NS/cb")" EIO "ls"
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/cb/.card")" EIO "cat .card"
	peak=$(peak_kb)
	[ "$peak" -lt 262144 ] || { echo "peak RSS ${peak} kB" >&2; false; }
	grep -q "corrupt record of '__namespace/cb': bloom of 65535 filters" "$KVFS_LOG"
}

@test "rm of a key whose metadata does not decode deletes it; it is not listed, its name answers" {
	kvfs_mount
	kvfs_unmount
	# type id 15 does not exist
	plant_meta 'ju/nk' "8F0000000000000000${VER}0000000000000001"
	plant_meta ok 810000000000000000626172
	kvfs_mount
	assert_eq "$(ls "$NS")" ok "listing"
	grep -q "corrupt record of '__namespace/ju%2Fnk': metadata of 25 bytes, flags 0x8f: an unknown type id" "$KVFS_LOG"
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/ju%2Fnk")" EIO "cat"
	rm "$NS/ju%2Fnk"
	[ ! -e "$NS/ju%2Fnk" ]
	assert_bytes "$NS/ok" bar
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex 'ju/nk')"
	[ "$status" -ne 0 ]
}

@test "a hash of size 2^63 is corrupt; setfattr user.kvfs.ttl 0 deletes it" {
	kvfs_mount
	kvfs_unmount
	plant_meta h "820000000000000000${VER}8000000000000000"
	kvfs_mount
	assert_eq "$(errno_of 'os.listdir(a[0])' "$NS/h")" EIO "ls"
	grep -q "corrupt record of '__namespace/h': .*flags 0x82: a size of 2^63 or more" "$KVFS_LOG"
	setfattr -n user.kvfs.ttl -v 0 "$NS/h"
	[ ! -e "$NS/h" ]
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex h)"
	[ "$status" -ne 0 ]
}

@test "a bitmap of size 2^40 is not a 1 TiB file: EIO, and rm removes it" {
	kvfs_mount
	kvfs_unmount
	plant_meta b "860000000000000000${VER}0000010000000000"
	kvfs_mount
	assert_size "$NS/b" 0
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/b")" EIO "cat"
	rm "$NS/b"
	[ ! -e "$NS/b" ]
}

@test "a t-digest with 2^40 unmerged samples reads as EIO; rm -r deletes it" {
	kvfs_mount
	kvfs_unmount
	tail=000000640000026200000100000000000000000000000000
	tail+=00000000000000000000000000000000FFEFFFFFFFFFFFFF
	tail+=001000000000000000000000000000000000000000000000
	plant_meta td "8C0000000000000000${VER}0000000000000000${tail}"
	kvfs_mount
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/td/buffer")" EIO "cat buffer"
	peak=$(peak_kb)
	[ "$peak" -lt 262144 ] || { echo "peak RSS ${peak} kB" >&2; false; }
	rm -rf "$NS/td"
	[ ! -e "$NS/td" ]
}

@test "t-digest centroids whose weights pass 2^53 together are refused and change nothing" {
	kvfs_mount
	mkdir "$NS/td"
	setfattr -n user.kvfs.type -v tdigest "$NS/td"
	printf '%s\n' 3 1 2 >"$NS/td/buffer"
	before=$(cat "$NS/td/state")
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC); os.write(fd, a[1].encode()); os.close(fd)' \
		"$NS/td/centroids" $'1 4503599627370496\n2 4503599627370496\n3 4503599627370496\n'
	assert_eq "$output" EINVAL "close of centroids"
	assert_eq "$(cat "$NS/td/state")" "$before" "state"
	[ ! -e "$NS/td/centroids" ]
	grep -q "brings the total past 2^53" "$KVFS_LOG"
}

# sub_hex KEY SUBHEX: the key of a sub-key of KEY (version $VER) in the
# default namespace, in hex.
sub_hex() {
	local ns=$KVFS_DEFAULT_NS
	printf '%02X%s%08X%s%s%s' "${#ns}" "$(hexof "$ns")" "${#1}" "$(hexof "$1")" "$VER" "$2"
}

# stat_listed DIR: stat every name `ls -A DIR` lists; fails on the first
# that does not answer.
stat_listed() {
	local f
	ls -A "$1" >"$BATS_TEST_TMPDIR/listed" || return 1
	while IFS= read -r f; do
		stat -- "$1/$f" >/dev/null || return 1
	done <"$BATS_TEST_TMPDIR/listed"
}

# Sortable doubles: 1 BFF0.., 2 C000.., 5 C014.., 9 C022..
S1=BFF0000000000000
S2=C000000000000000

@test "a zset's score-index record without a member record is not listed; what is listed answers" {
	kvfs_mount
	kvfs_unmount
	plant_meta z "850000000000000000${VER}0000000000000002"
	ldb_put default "$(sub_hex z 61)" "$S1"
	ldb_put zset_score "$(sub_hex z "${S1}61")" ""
	ldb_put default "$(sub_hex z 62)" "$S2"
	ldb_put zset_score "$(sub_hex z "${S2}62")" ""
	ldb_put zset_score "$(sub_hex z C01400000000000067)" "" # "g" at 5: no member record
	ldb_put zset_score "$(sub_hex z C02200000000000061)" "" # "a" at 9: its record says 1
	kvfs_mount
	assert_eq "$(ls "$NS/z" | tr '\n' ' ')" "a b " "listing"
	stat_listed "$NS/z"
	getfattr -d "$NS/z" >/dev/null
	rsync -aX "$NS/z/" "$BATS_TEST_TMPDIR/copy/"
	assert_eq "$(cat "$BATS_TEST_TMPDIR/copy/a")" 1 "copied a"
	assert_eq "$(cat "$NS/z/.by-score" | cut -f3 | tr '\n' ' ')" "a b " ".by-score"
	grep -q "corrupt record of '__namespace/z/g': a score-index record without its member record; not listed" "$KVFS_LOG"
	grep -q "corrupt record of '__namespace/z/a': a score-index record at another score" "$KVFS_LOG"
}

@test "a zset member whose score does not decode is listed, reads as EIO, and rm removes both its records" {
	kvfs_mount
	kvfs_unmount
	plant_meta z "850000000000000000${VER}0000000000000002"
	ldb_put default "$(sub_hex z 61)" "$S1"
	ldb_put zset_score "$(sub_hex z "${S1}61")" ""
	ldb_put default "$(sub_hex z 62)" 78797A # 3 bytes
	ldb_put zset_score "$(sub_hex z "${S2}62")" ""
	kvfs_mount
	assert_eq "$(ls "$NS/z" | tr '\n' ' ')" "a b " "listing"
	stat_listed "$NS/z"
	assert_size "$NS/z/b" 0
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/z/b")" EIO "cat b"
	grep -q "corrupt record of '__namespace/z/b': a zset score of 3 bytes that does not decode" "$KVFS_LOG"
	rm "$NS/z/b"
	assert_eq "$(ls "$NS/z")" a "listing after rm"
	kvfs_unmount
	run ldb_value default "$(sub_hex z 62)"
	[ "$status" -ne 0 ]
	run ldb_value zset_score "$(sub_hex z "${S2}62")"
	[ "$status" -ne 0 ]
	assert_eq "$(ldb_value metadata "$(nskey_hex z)")" "850000000000000000${VER}0000000000000001" "size"
}

@test "rm -r of a zset with a member whose score does not decode deletes it" {
	kvfs_mount
	kvfs_unmount
	plant_meta z "850000000000000000${VER}0000000000000001"
	ldb_put default "$(sub_hex z 62)" 78797A
	ldb_put zset_score "$(sub_hex z "${S2}62")" ""
	kvfs_mount
	rm -r "$NS/z"
	[ ! -e "$NS/z" ]
}

# A time series of size 1, chunk_size 1024, duplicate policy $1.
ts_meta() {
	printf '8D0000000000000000%s0000000000000001' "$VER"
	printf '0000000000000000000000000000040000%s000000000000000000000000' "$1"
}
# Chunk 1000 holding 1000,1.5 (samples little-endian).
CHUNK=0000000000000001E803000000000000000000000000F83F

@test "a time-series chunk record whose key is not 8 bytes of id is not listed; what is listed answers" {
	kvfs_mount
	kvfs_unmount
	plant_meta t "$(ts_meta 00)"
	ldb_put default "$(sub_hex t 0000000000000003E8)" "$CHUNK"
	ldb_put default "$(sub_hex t 004142)" "$CHUNK" # key "AB": no id
	kvfs_mount
	# (Its id read from the wrong bytes once made ls list for ever.)
	assert_eq "$(timeout 60 ls "$NS/t")" 00000000000000001000.csv "listing"
	stat_listed "$NS/t"
	getfattr -d "$NS/t" >/dev/null
	rsync -aX "$NS/t/" "$BATS_TEST_TMPDIR/copy/"
	assert_eq "$(cat "$NS/t/.range:-..+")" "1000,1.5" ".range"
	grep -q "corrupt record of '__namespace/t/AB': a time-series chunk key of 2 bytes, not 8; skipped" "$KVFS_LOG"
}

@test "a time-series chunk whose value does not decode is listed, reads as EIO, and rm removes it" {
	kvfs_mount
	kvfs_unmount
	plant_meta t "$(ts_meta 00)"
	ldb_put default "$(sub_hex t 0000000000000003E8)" 0000000000000009E803 # 9 samples in 2 bytes
	kvfs_mount
	assert_eq "$(ls "$NS/t")" 00000000000000001000.csv "listing"
	stat_listed "$NS/t"
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/t/00000000000000001000.csv")" EIO "cat"
	grep -q "corrupt record of '__namespace/t': time-series chunk 1000 does not decode (10 bytes)" "$KVFS_LOG"
	rm "$NS/t/00000000000000001000.csv"
	assert_eq "$(ls "$NS/t")" "" "listing after rm"
	kvfs_unmount
	run ldb_value default "$(sub_hex t 0000000000000003E8)"
	[ "$status" -ne 0 ]
}

@test "a time series whose duplicate policy byte names no policy does not list user.kvfs.ts.duplicate_policy" {
	kvfs_mount
	kvfs_unmount
	plant_meta t "$(ts_meta 09)"
	ldb_put default "$(sub_hex t 0000000000000003E8)" "$CHUNK"
	kvfs_mount
	getfattr -d -m - "$NS/t" >"$BATS_TEST_TMPDIR/attrs"
	! grep -q duplicate_policy "$BATS_TEST_TMPDIR/attrs"
	grep -q 'user.kvfs.ts.retention="0"' "$BATS_TEST_TMPDIR/attrs"
	rsync -aX "$NS/t" "$BATS_TEST_TMPDIR/copy/"
	grep -q "corrupt record of '__namespace/t': time-series duplicate policy 9 names no policy" "$KVFS_LOG"
}

@test "a sortedint sub-key that is not an 8-byte id is not listed; what is listed answers" {
	kvfs_mount
	kvfs_unmount
	plant_meta si "870000000000000000${VER}0000000000000002"
	ldb_put default "$(sub_hex si 0000000000000001)" ""
	ldb_put default "$(sub_hex si 0102)" ""
	ldb_put default "$(sub_hex si 0000000000000002)" ""
	kvfs_mount
	assert_eq "$(ls "$NS/si" | tr '\n' ' ')" "1 2 " "listing"
	stat_listed "$NS/si"
	LC_ALL=C grep -q "corrupt record of '__namespace/si/..': a sortedint sub-key of 2 bytes where an 8-byte id belongs; skipped" "$KVFS_LOG"
	rm -r "$NS/si"
	[ ! -e "$NS/si" ]
}

# A stream of `size` $1 whose IDs run from 1-1 to 1-$2, no groups.
st_meta() {
	local one=0000000000000001 last
	last=$(printf '%016X' "$2")
	printf '880000000000000000%s%016X' "$VER" "$1"
	printf '%s%s%s%s%s%s' "$one" "$last" "$one" "$one" 00000000000000000000000000000000 "$one"
	printf '%s%s%s%016X%s' "$one" "$one" "$last" "$2" 0000000000000000
}
# The sub-key of entry 1-SEQ of stream KEY.
st_entry() {
	sub_hex "$1" "$(printf '0000000000000001%016X' "$2")"
}

@test "a stream sub-key that is not a 16-byte ID is not listed; what is listed answers" {
	kvfs_mount
	kvfs_unmount
	plant_meta s "$(st_meta 2 2)"
	ldb_put stream "$(st_entry s 1)" 01610162
	ldb_put stream "$(sub_hex s 00000000000000010000)" 01610162 # 10 bytes
	ldb_put stream "$(st_entry s 2)" 01630164
	kvfs_mount
	assert_eq "$(ls "$NS/s" | tr '\n' ' ')" "1-1 1-2 " "listing"
	stat_listed "$NS/s"
	assert_eq "$(cat "$NS/s/1-2")" "$(printf 'c\td')" "cat 1-2"
	LC_ALL=C grep -q "corrupt record of '__namespace/s/%00%00%00%00%00%00%00.%00%00': a stream sub-key of 10 bytes where a 16-byte entry ID belongs; skipped" "$KVFS_LOG"
}

@test "a stream entry whose value does not decode is listed, reads as EIO, and rm removes it" {
	kvfs_mount
	kvfs_unmount
	plant_meta s "$(st_meta 2 2)"
	ldb_put stream "$(st_entry s 1)" 0561 # 5 bytes announced, 1 there
	ldb_put stream "$(st_entry s 2)" 01630164
	kvfs_mount
	assert_eq "$(ls "$NS/s" | tr '\n' ' ')" "1-1 1-2 " "listing"
	stat_listed "$NS/s"
	assert_size "$NS/s/1-1" 0
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/s/1-1")" EIO "cat 1-1"
	grep -q "corrupt record of '__namespace/s/1-1': a stream entry value of 2 bytes that does not decode" "$KVFS_LOG"
	rm "$NS/s/1-1"
	assert_eq "$(ls "$NS/s" | paste -sd" ")" "1-2 state" "listing after rm (XDEL: the counters listed)"
	kvfs_unmount
	run ldb_value stream "$(st_entry s 1)"
	[ "$status" -ne 0 ]
}

@test "rm -r of a stream with an entry whose value does not decode deletes it" {
	kvfs_mount
	kvfs_unmount
	plant_meta s "$(st_meta 2 2)"
	ldb_put stream "$(st_entry s 1)" 0561
	ldb_put stream "$(st_entry s 2)" 01630164
	kvfs_mount
	rm -r "$NS/s"
	[ ! -e "$NS/s" ]
}

# A stream group record: 48 bytes (consumers, pending, last delivered,
# entries read, lag), all 0.
GROUP=$(printf '%096d' 0)

@test "stream group and pending-entry records that do not decode are logged with the key and the group" {
	kvfs_mount
	kvfs_unmount
	plant_meta s "$(st_meta 1 1)"
	ldb_put stream "$(st_entry s 1)" 01610162
	# group "g" of 3 bytes; group "h" whole, with a pending entry 1-1 of 3 bytes
	ldb_put stream "$(sub_hex s FFFFFFFFFFFFFFFF01000000000000000167)" 010203
	ldb_put stream "$(sub_hex s FFFFFFFFFFFFFFFF01000000000000000168)" "$GROUP"
	ldb_put stream "$(sub_hex s FFFFFFFFFFFFFFFF0300000000000000016800000000000000010000000000000001)" 010203
	kvfs_mount
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/s/.groups")" EIO "cat .groups"
	grep -q "corrupt record of '__namespace/s/g': a stream group record of 3 bytes, not 48" "$KVFS_LOG"
	assert_eq "$(cat "$NS/s/.pending:h")" "" "cat .pending:h"
	grep -q "corrupt record of '__namespace/s/h': pending entry 1-1 of 3 bytes does not decode; skipped" "$KVFS_LOG"
	stat_listed "$NS/s"
}

# A list of `size` $1 from head 7FFF...FF.
li_meta() {
	printf '830000000000000000%s%016X7FFFFFFFFFFFFFFF%016X' "$VER" "$1" $((0x7FFFFFFFFFFFFFFF + $1))
}

@test "a list sub-key that is not an 8-byte index is not listed; what is listed answers" {
	kvfs_mount
	kvfs_unmount
	plant_meta l "$(li_meta 2)"
	ldb_put default "$(sub_hex l 7FFFFFFFFFFFFFFF)" 61
	ldb_put default "$(sub_hex l 8000)" 78 # between the two, 2 bytes
	ldb_put default "$(sub_hex l 8000000000000000)" 62
	kvfs_mount
	assert_eq "$(ls "$NS/l" | tr '\n' ' ')" "0 1 " "listing"
	stat_listed "$NS/l"
	assert_eq "$(cat "$NS/l/1")" b "cat 1"
	LC_ALL=C grep -q "corrupt record of '__namespace/l/.%00': a list sub-key of 2 bytes where an 8-byte index belongs; skipped" "$KVFS_LOG"
}

@test "a list element missing from the middle is listed as an EIO file; rm of a position closes the list" {
	kvfs_mount
	kvfs_unmount
	plant_meta l "$(li_meta 4)"
	ldb_put default "$(sub_hex l 7FFFFFFFFFFFFFFF)" 61
	ldb_put default "$(sub_hex l 8000000000000001)" 63 # position 1 missing
	ldb_put default "$(sub_hex l 8000000000000002)" 64
	kvfs_mount
	assert_eq "$(ls "$NS/l" | tr '\n' ' ')" "0 1 2 3 " "listing"
	stat_listed "$NS/l"
	assert_size "$NS/l/1" 0
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/l/1")" EIO "cat 1"
	grep -q "corrupt record of '__namespace/l/1': list element 9223372036854775808 is missing" "$KVFS_LOG"
	rm "$NS/l/0"
	kvfs_remount
	assert_eq "$(ls "$NS/l" | tr '\n' ' ')" "0 1 2 " "listing after rm 0"
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/l/0")" EIO "cat 0"
	assert_eq "$(cat "$NS/l/1")" c "cat 1"
	rm "$NS/l/0"
	kvfs_remount
	assert_eq "$(cat "$NS/l/0")$(cat "$NS/l/1")" cd "after rm of the missing one"
}

@test "rm -r of a list with an element missing from the middle deletes it" {
	kvfs_mount
	kvfs_unmount
	plant_meta l "$(li_meta 3)"
	ldb_put default "$(sub_hex l 7FFFFFFFFFFFFFFF)" 61
	ldb_put default "$(sub_hex l 8000000000000001)" 63
	kvfs_mount
	rm -r "$NS/l"
	[ ! -e "$NS/l" ]
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex l)"
	[ "$status" -ne 0 ]
}

@test "a time-series rule record that does not decode is logged with the key and the destination" {
	kvfs_mount
	kvfs_unmount
	plant_meta t "$(ts_meta 00)"
	ldb_put default "$(sub_hex t 0000000000000003E8)" "$CHUNK"
	ldb_put default "$(sub_hex t 0264)" 0102 # rule to "d": 2 bytes
	kvfs_mount
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"2000,1\n"); os.close(fd)' "$NS/t/.add"
	assert_eq "$output" EIO ".add"
	grep -q "corrupt record of '__namespace/t/d': time-series rule record of 2 bytes does not decode" "$KVFS_LOG"
}

@test "a time-series rule record that does not decode hides no other rule; removing it works" {
	kvfs_mount
	kvfs_unmount
	plant_meta t "$(ts_meta 00)"
	ldb_put default "$(sub_hex t 0000000000000003E8)" "$CHUNK"
	ldb_put default "$(sub_hex t 0264)" 0102 # rule to "d": 2 bytes
	# rule to "e": avg 1000 0, nothing folded yet
	ldb_put default "$(sub_hex t 0265)" 0700000000000003E800000000000000000000000000000000010100000000000000008000000000000000
	kvfs_mount
	getfattr -d -m - "$NS/t" >"$BATS_TEST_TMPDIR/attrs"
	grep -q '^user.kvfs.ts.rule.e=' "$BATS_TEST_TMPDIR/attrs"
	! grep -q '^user.kvfs.ts.rule.d' "$BATS_TEST_TMPDIR/attrs"
	assert_eq "$(getfattr --only-values -n user.kvfs.ts.rule.e "$NS/t")" "avg 1000 0 latest=0 u=0 f=0"
	assert_eq "$(errno_of 'os.getxattr(a[0], "user.kvfs.ts.rule.d")' "$NS/t")" ENODATA "getfattr rule.d"
	grep -qx "rule e avg 1000 0" "$NS/t/.info"
	assert_eq "$(cat "$NS/t/.range:-..+")" "1000,1.5" ".range"
	grep -q "corrupt record of '__namespace/t/d': time-series rule record of 2 bytes does not decode; skipped" "$KVFS_LOG"
	setfattr -x user.kvfs.ts.rule.d "$NS/t"
	echo "2000,1" >>"$NS/t/.add"
	assert_eq "$(cat "$NS/t/.range:-..+")" $'1000,1.5\n2000,1' ".range after the add"
	kvfs_unmount
	run ldb_value default "$(sub_hex t 0264)"
	[ "$status" -ne 0 ]
}

@test "a bitmap fragment sub-key that is no fragment offset does not stop a truncate" {
	kvfs_mount
	kvfs_unmount
	plant_meta b "860000000000000000${VER}0000000000000002"
	ldb_put default "$(sub_hex b 30)" 4142 # fragment "0": AB
	ldb_put default "$(sub_hex b 78)" 43   # "x"
	kvfs_mount
	truncate -s 1 "$NS/b"
	assert_eq "$(xxd -p "$NS/b")" 82 "the first byte (stored 41, bits LSB-first)"
	grep -q "corrupt record of '__namespace/b/x': a bitmap fragment sub-key that is not a decimal offset of a fragment; skipped" "$KVFS_LOG"
}
