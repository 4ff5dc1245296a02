#!/usr/bin/env bats
# Garbage: deleting a key drops its metadata only (O(1)); Kvrocks's
# compaction filters drop the orphaned sub-keys later, and `kvfs compact
# DBDIR` runs that compaction now. Sub-keys are counted with RocksDB's own
# ldb (while unmounted). Also: statfs follows the space, and the database
# stays what Kvrocks and ldb open.

load helper

# A version for records written with ldb.
V0=0005F3A2B4C6D800

# count CF KEY: records of column family CF that are sub-keys of KEY in
# the default namespace, any version (NS | key_len u32 | key).
count() {
	local prefix
	prefix=$(printf '0x%s%08X%s' "$NS_HEX" "${#2}" "$(hexof "$2")")
	ldb_scan "$1" | grep -c "^$prefix" || true
}

# big_hash KEY N: write a hash of N fields with ldb (as a Kvrocks server
# would have left it): metadata 82 | expire 0 | V0 | size, fields f000000...
big_hash() {
	local key=$1 n=$2 khex
	khex=$(hexof "$key")
	python3 - "$NS_HEX" "$khex" "$V0" "$n" >"$BATS_TEST_TMPDIR/load.txt" <<'EOF'
import sys
ns, key, ver, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
klen = "%08X" % (len(key) // 2)
for i in range(n):
    print("0x%s%s%s%s%s ==> 0x76" % (ns, klen, key, ver, ("f%06d" % i).encode().hex().upper()))
EOF
	ldb --db="$(kvfs_rocksdb_dir)" --column_family=default --hex load \
		<"$BATS_TEST_TMPDIR/load.txt" >/dev/null
	ldb_put metadata "$(nskey_hex "$key")" "$(printf '820000000000000000%s%016X' "$V0" "$n")"
}

used_bytes() {
	df -B1 --output=used "$KVFS_MNT" | tail -n 1 | tr -d ' '
}

@test "deleting a 100,000-field hash is O(1); kvfs compact then removes its sub-keys" {
	kvfs_mount
	mkdir "$NS/small"
	printf 1 >"$NS/small/a"
	printf 2 >"$NS/small/b"
	printf 3 >"$NS/small/c"
	kvfs_unmount
	big_hash big 100000
	assert_eq "$(count default big)" 100000 "sub-keys of big, written"

	kvfs_mount
	assert_eq "$(ls -f "$NS/big" | grep -vc '^\.\.\?$')" 100000 "fields listed"
	before=$(used_bytes)
	start=$(date +%s%N)
	setfattr -n user.kvfs.ttl -v 0 "$NS/big"
	ms=$((($(date +%s%N) - start) / 1000000))
	[ ! -e "$NS/big" ]
	[ "$ms" -lt 1000 ] || {
		echo "deleting the hash took $ms ms" >&2
		false
	}
	kvfs_unmount
	# O(1): the metadata is gone, every sub-key is still there.
	run ldb_value metadata "$(nskey_hex big)"
	[ "$status" -ne 0 ]
	assert_eq "$(count default big)" 100000 "sub-keys of big after the delete"

	run "$KVFS_BIN" compact "$KVFS_DB"
	[ "$status" -eq 0 ]
	[[ $output =~ bytes\ before ]]
	assert_eq "$(count default big)" 0 "sub-keys of big after kvfs compact"
	assert_eq "$(count default small)" 3 "sub-keys of the live hash"

	kvfs_mount
	assert_eq "$(cat "$NS/small/a" "$NS/small/b" "$NS/small/c")" 123 "the live hash"
	after=$(used_bytes)
	# statfs counts RocksDB's live bytes: over a megabyte came back.
	[ "$after" -lt $((before - 1000000)) ] || {
		echo "used before $before, after $after" >&2
		false
	}
}

@test "a re-created key keeps only the new version's fields; old zset entries and list elements go" {
	kvfs_mount
	mkdir "$NS/h"
	printf 1 >"$NS/h/a"
	printf 2 >"$NS/h/b"
	setfattr -n user.kvfs.ttl -v 0 "$NS/h"
	mkdir "$NS/h"
	printf 3 >"$NS/h/c"
	mkdir "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	echo 1 >"$NS/z/m1"
	echo 2 >"$NS/z/m2"
	setfattr -n user.kvfs.ttl -v 0 "$NS/z"
	mkdir "$NS/zl"
	setfattr -n user.kvfs.type -v zset "$NS/zl"
	echo 5 >"$NS/zl/keep"
	mkdir "$NS/l"
	setfattr -n user.kvfs.type -v list "$NS/l"
	echo x >"$NS/l/0"
	echo y >"$NS/l/1"
	setfattr -n user.kvfs.ttl -v 0 "$NS/l"
	kvfs_unmount
	assert_eq "$(count default h)" 3 "fields of h, both versions"
	assert_eq "$(count zset_score z)" 2 "score index of z"
	assert_eq "$(count default l)" 2 "elements of l"

	"$KVFS_BIN" compact "$KVFS_DB" >/dev/null
	assert_eq "$(count default h)" 1 "fields of h after compact"
	assert_eq "$(count default z)" 0 "members of z"
	assert_eq "$(count zset_score z)" 0 "score index of z"
	assert_eq "$(count default l)" 0 "elements of l"
	assert_eq "$(count default zl)" 1 "members of the live zset"
	assert_eq "$(count zset_score zl)" 1 "score index of the live zset"
	kvfs_mount
	assert_eq "$(ls "$NS/h")" c
	assert_eq "$(cat "$NS/zl/keep")" 5
}

@test "an expired key's metadata and sub-keys are dropped; kvfs's own records stay" {
	kvfs_mount
	mkdir "$NS/e"
	printf 1 >"$NS/e/a"
	printf v >"$NS/s"
	mkdir "$NS/empty" # remembered in kvfs's reserved namespace
	setfattr -n user.kvfs.ttl -v 200 "$NS/e"
	setfattr -n user.kvfs.ttl -v 200 "$NS/s"
	sleep 0.5
	kvfs_unmount
	reserved=$(ldb_scan metadata | grep -c "^0x06$(hexof __kvfs)")
	[ "$reserved" -ge 1 ]
	# Expired but not yet collected: the records are still stored.
	ldb_value metadata "$(nskey_hex e)" >/dev/null
	ldb_value metadata "$(nskey_hex s)" >/dev/null

	"$KVFS_BIN" compact "$KVFS_DB" >/dev/null
	run ldb_value metadata "$(nskey_hex e)"
	[ "$status" -ne 0 ]
	run ldb_value metadata "$(nskey_hex s)"
	[ "$status" -ne 0 ]
	assert_eq "$(count default e)" 0 "fields of the expired hash"
	assert_eq "$(ldb_scan metadata | grep -c "^0x06$(hexof __kvfs)")" "$reserved" \
		"records of __kvfs"
	kvfs_mount
	[ -d "$NS/empty" ]
	[ ! -e "$NS/e" ]
}

@test "after compaction the database has exactly Kvrocks's column families and still opens" {
	kvfs_mount
	printf bar >"$NS/foo"
	kvfs_unmount
	"$KVFS_BIN" compact "$KVFS_DB" >/dev/null
	run ldb --db="$(kvfs_rocksdb_dir)" list_column_families
	[ "$status" -eq 0 ]
	[[ $output == *"{default, metadata, zset_score, pubsub, propagate, stream, search}"* ]] || {
		echo "$output" >&2
		false
	}
	# ldb loads the OPTIONS file, which names kvfs's filter factory: a
	# RocksDB without it still opens the database.
	assert_eq "$(ldb_value metadata "$(nskey_hex foo)")" 810000000000000000626172
	kvfs_mount
	assert_bytes "$NS/foo" bar
}

@test "kvfs compact refuses a mounted database, a missing one and bad arguments" {
	kvfs_mount
	printf v >"$NS/k"
	run "$KVFS_BIN" compact "$KVFS_DB"
	[ "$status" -eq 1 ]
	[[ $output =~ "is in use" ]]
	assert_bytes "$NS/k" v
	kvfs_unmount
	run "$KVFS_BIN" compact "$BATS_TEST_TMPDIR/nothing"
	[ "$status" -eq 1 ]
	[ ! -e "$BATS_TEST_TMPDIR/nothing" ]
	run "$KVFS_BIN" compact
	[ "$status" -eq 2 ]
	run "$KVFS_BIN" compact --bogus "$KVFS_DB"
	[ "$status" -eq 2 ]
}

db_kib() {
	du -sk "$KVFS_DB" | cut -f1
}

@test "rm -rf of big values, then kvfs compact: the database's space comes back, blob files too" {
	# 40 fields of 1 MiB (blob files: values from 64 KiB) beside small
	# ones; one big field stays: the blob file it shares with deleted
	# ones must go too (blob GC for every blob file, not the oldest
	# quarter only).
	head -c 1048576 /dev/urandom >"$BATS_TEST_TMPDIR/big"
	kvfs_mount
	for d in 0 1 2 3; do
		mkdir "$NS/d$d"
		for f in $(seq 0 9); do
			cp "$BATS_TEST_TMPDIR/big" "$NS/d$d/big$f"
			printf 'small %s' "$f" >"$NS/d$d/small$f"
		done
	done
	kvfs_unmount # the values are in blob files now
	kvfs_mount
	rm -rf "$NS"/d[123]
	find "$NS/d0" -type f ! -name big0 -delete
	kvfs_unmount
	before=$(db_kib)
	[ "$before" -gt 40000 ] || {
		echo "only $before KiB before compact: the test wrote too little" >&2
		false
	}
	run "$KVFS_BIN" compact "$KVFS_DB"
	[ "$status" -eq 0 ]
	after=$(db_kib)
	# What stays: one 1 MiB value and RocksDB's own files.
	[ "$after" -lt $((before / 4)) ] || {
		echo "du: $before KiB before kvfs compact, $after KiB after" >&2
		ls -l "$(kvfs_rocksdb_dir)" >&2
		false
	}
	kvfs_mount
	cmp "$BATS_TEST_TMPDIR/big" "$NS/d0/big0"
	assert_eq "$(ls "$NS")" d0 "keys left"
	assert_eq "$(ls "$NS/d0")" big0 "fields left"
}
