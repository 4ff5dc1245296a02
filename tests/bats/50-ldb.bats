#!/usr/bin/env bats
# The stored bytes, read and written by RocksDB's own ldb tool (an
# independent reader and writer), against kvrocks-encoding.md: sections 3
# (column families), 4 (keys), 5 (metadata), 6.1 (string), 6.3 (hash) and
# the worked examples of section 12. Hex is upper-case, as ldb prints it.

load helper

# A version for records written with ldb (any u64 works for a reader).
V0=0005F3A2B4C6D800

setup() {
	kvfs_setup
	kvfs_mount
}

# Make an empty database (so ldb finds the column families) and unmount.
empty_db() {
	kvfs_unmount
}

@test "SET foo bar: metadata key 0B __namespace foo, value 81 + 8 zero bytes + bar" {
	printf bar >"$NS/foo"
	kvfs_unmount
	run ldb_value metadata 0B5F5F6E616D657370616365666F6F
	[ "$status" -eq 0 ]
	assert_eq "$output" 810000000000000000626172 "metadata value of foo"
}

@test "HSET h f v: metadata 82 + expire + version + size 1, sub-key with the same version" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	kvfs_unmount
	run ldb_value metadata 0B5F5F6E616D65737061636568
	[ "$status" -eq 0 ]
	[[ $output =~ ^820000000000000000([0-9A-F]{16})0000000000000001$ ]] || {
		echo "metadata value of h: $output" >&2
		false
	}
	version=${BASH_REMATCH[1]}
	run ldb_value default "0B5F5F6E616D6573706163650000000168${version}66"
	[ "$status" -eq 0 ]
	assert_eq "$output" 76 "value of sub-key f"
}

@test "the default namespace holds exactly the records Kvrocks would have" {
	printf bar >"$NS/foo"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	mkdir "$NS/empty" # kept in __kvfs, not here
	kvfs_unmount
	assert_eq "$(ldb_scan metadata | grep "^0x$NS_HEX" | cut -d' ' -f1)" \
		$'0x0B5F5F6E616D657370616365666F6F\n0x0B5F5F6E616D65737061636568' \
		"metadata keys of __namespace"
	assert_eq "$(ldb_scan default | grep -c "^0x$NS_HEX")" 1 "default-CF records of __namespace"
	for cf in zset_score stream; do
		assert_eq "$(ldb_scan "$cf" | grep -c "^0x$NS_HEX")" 0 "$cf records of __namespace"
	done
}

@test "a new hash gets a Kvrocks version: microseconds since the epoch << 11" {
	t0=$(date +%s%6N)
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	t1=$(date +%s%6N)
	kvfs_unmount
	run ldb_value metadata "${NS_HEX}68"
	[[ $output =~ ^82[0-9A-F]{16}([0-9A-F]{16}) ]]
	us=$(((16#${BASH_REMATCH[1]}) >> 11))
	# 2 s of slack either side for clock granularity
	[ "$us" -ge $((t0 - 2000000)) ] || { echo "version time $us < start $t0" >&2; false; }
	[ "$us" -le $((t1 + 2000000)) ] || { echo "version time $us > end $t1" >&2; false; }
}

@test "rm of a string key deletes its metadata record" {
	printf x >"$NS/gone"
	printf y >"$NS/stays"
	rm "$NS/gone"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex gone)"
	[ "$status" -ne 0 ]
	run ldb_value metadata "$(nskey_hex stays)"
	assert_eq "$output" "810000000000000000$(hexof y)" "value of stays"
}

@test "an empty hash is remembered in __kvfs, and forgotten at its first field" {
	# keyspace.h: "E" | ns_len | ns | key -> type name, in namespace __kvfs
	ekey=065F5F6B76667345${NS_HEX}65
	mkdir "$NS/e"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex e)"
	[ "$status" -ne 0 ] # Kvrocks has no empty hashes: nothing in __namespace
	run ldb_value metadata "$ekey"
	[ "$status" -eq 0 ]
	assert_eq "$output" "810000000000000000$(hexof hash)" "empty-collection record"
	kvfs_mount
	printf v >"$NS/e/f"
	kvfs_unmount
	run ldb_value metadata "$ekey"
	[ "$status" -ne 0 ]
	run ldb_value metadata "$(nskey_hex e)"
	[[ $output =~ ^82[0-9A-F]{32}0000000000000001$ ]]
}

@test "a key in another namespace is stored under that namespace" {
	mkdir "$KVFS_MNT/newns"
	printf v >"$KVFS_MNT/newns/k"
	kvfs_unmount
	run ldb_value metadata 056E65776E736B
	[ "$status" -eq 0 ]
	assert_eq "$output" 81000000000000000076 "value of newns/k"
}

@test "a new database has exactly Kvrocks's column families" {
	kvfs_unmount
	run ldb --db="$KVFS_DB/db" list_column_families
	[ "$status" -eq 0 ]
	# "Column families in DIR: \n{default, metadata, ...}"
	cfs=$(printf '%s\n' "$output" | sed -n 's/^{\(.*\)}$/\1/p' | tr -d ' ' | tr , '\n' | sort | paste -sd' ')
	assert_eq "$cfs" "default metadata propagate pubsub search stream zset_score" "column families"
}

@test "-o cluster: SET foo bar is stored under slot 12182 (2F96)" {
	kvfs_remount -o cluster
	printf bar >"$NS/foo"
	kvfs_unmount
	run ldb_value metadata "${NS_HEX}2F96666F6F"
	[ "$status" -eq 0 ]
	assert_eq "$output" 810000000000000000626172 "metadata value of foo"
	run ldb_value metadata "${NS_HEX}666F6F"
	[ "$status" -ne 0 ]
}

@test "-o cluster: a hash field's sub-key carries the slot of its key" {
	# slot = CRC16/XMODEM(hash tag, or the whole key) & 0x3FFF, computed
	# here independently and checked against section 12's vectors first
	slot=$(python3 -c '
import sys
def crc16(b):
    c = 0
    for x in b:
        c ^= x << 8
        for _ in range(8):
            c = ((c << 1) ^ 0x1021 if c & 0x8000 else c << 1) & 0xFFFF
    return c
def slot(key):
    s = key.find(b"{")
    if s >= 0:
        e = key.find(b"}", s + 1)
        if e > s + 1:
            key = key[s + 1:e]
    return crc16(key) & 0x3FFF
assert crc16(b"123456789") == 0x31C3
assert slot(b"foo") == 12182 and slot(b"bar") == 5061
print("%04X" % slot(sys.argv[1].encode()))' "{user1000}.following")
	assert_eq "$slot" 0D73 "slot of {user1000}.following (3443)"
	kvfs_remount -o cluster
	mkdir "$NS/{user1000}.following"
	printf v >"$NS/{user1000}.following/f"
	kvfs_unmount
	key=$(hexof "{user1000}.following")
	run ldb_value metadata "${NS_HEX}${slot}${key}"
	[[ $output =~ ^820000000000000000([0-9A-F]{16})0000000000000001$ ]]
	version=${BASH_REMATCH[1]}
	run ldb_value default "${NS_HEX}${slot}00000014${key}${version}66"
	[ "$status" -eq 0 ]
	assert_eq "$output" 76 "value of the field"
}

@test "reads a v0 string written by another writer" {
	empty_db
	# v0: flags 01 | expire u32 seconds | value
	ldb_put metadata "$(nskey_hex old)" "0100000000$(hexof legacy)"
	kvfs_mount
	assert_bytes "$NS/old" legacy
	assert_size "$NS/old" 6
	run kvfs_type "$NS/old"
	assert_eq "$output" string "user.kvfs.type"
}

@test "reads a v0 hash written by another writer" {
	empty_db
	# v0: flags 02 | expire u32 | version u64 | size u32
	ldb_put metadata "$(nskey_hex oh)" "0200000000${V0}00000002"
	ldb_put default "${NS_HEX}00000002$(hexof oh)${V0}$(hexof a)" "$(hexof 1)"
	ldb_put default "${NS_HEX}00000002$(hexof oh)${V0}$(hexof b)" "$(hexof 22)"
	kvfs_mount
	[ -d "$NS/oh" ]
	assert_eq "$(ls -A "$NS/oh")" $'a\nb' "fields"
	assert_bytes "$NS/oh/a" 1
	assert_bytes "$NS/oh/b" 22
}

@test "a field added to a v0 hash keeps its version and the size exact" {
	empty_db
	ldb_put metadata "$(nskey_hex oh)" "0200000000${V0}00000001"
	ldb_put default "${NS_HEX}00000002$(hexof oh)${V0}$(hexof a)" "$(hexof 1)"
	kvfs_mount
	printf 2 >"$NS/oh/b"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex oh)"
	# Kvrocks keeps an existing key's encoding; either way the version stays
	[[ $output == "0200000000${V0}00000002" || $output == "820000000000000000${V0}0000000000000002" ]] || {
		echo "metadata of oh after the write: $output" >&2
		false
	}
	run ldb_value default "${NS_HEX}00000002$(hexof oh)${V0}$(hexof b)"
	assert_eq "$output" "$(hexof 2)" "new field's sub-key"
}

@test "an expired string is absent" {
	empty_db
	# v1 string with expire = 1000 ms after the epoch
	ldb_put metadata "$(nskey_hex gone)" "8100000000000003E8$(hexof x)"
	kvfs_mount
	assert_eq "$(ls -A "$NS")" "" "keys listed"
	run errno_of 'open(a[0], "rb")' "$NS/gone"
	assert_eq "$output" ENOENT "open of an expired key"
}

@test "a string expiring in an hour is present" {
	empty_db
	exp=$(printf '%016X' $(($(date +%s%3N) + 3600000)))
	ldb_put metadata "$(nskey_hex soon)" "81${exp}$(hexof y)"
	kvfs_mount
	assert_bytes "$NS/soon" y
}

@test "an expired hash is absent" {
	empty_db
	ldb_put metadata "$(nskey_hex eh)" "8200000000000003E8${V0}0000000000000001"
	ldb_put default "${NS_HEX}00000002$(hexof eh)${V0}$(hexof f)" 76
	kvfs_mount
	assert_eq "$(ls -A "$NS")" "" "keys listed"
	[ ! -e "$NS/eh" ]
}

@test "a hash with size 0 is absent" {
	empty_db
	ldb_put metadata "$(nskey_hex zh)" "820000000000000000${V0}0000000000000000"
	kvfs_mount
	assert_eq "$(ls -A "$NS")" "" "keys listed"
	[ ! -e "$NS/zh" ]
}
