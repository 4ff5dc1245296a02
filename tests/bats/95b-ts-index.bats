#!/usr/bin/env bats
# The time-series label index (Kvrocks's "index" column family): kvfs
# writes a record per label exactly as Kvrocks's TS.CREATE/TS.ALTER do, in
# the label's own batch, and its namespace views (.mget, .mrange) read the
# keys of their "label=value" matchers from it once it is complete; stale
# records never fool them. Checked with RocksDB's ldb.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# ixkey NAME VALUE KEY [NS]: an index record's key, in hex.
ixkey() {
	local ns=${4:-$KVFS_DEFAULT_NS}
	printf '%02X%s00%08X%s%08X%s%s' "${#ns}" "$(hexof "$ns")" "${#1}" "$(hexof "$1")" \
		"${#2}" "$(hexof "$2")" "$(hexof "$3")"
}

# The index's records, "KEYHEX VALUEHEX" (value "" when empty), sorted.
index_records() {
	ldb_scan index | awk '{ k = $1; v = $3; sub(/^0x/, "", k); sub(/^0x/, "", v); print k, v }' |
		sort
}

# The marker of a complete index: "I" in kvfs's reserved namespace.
MARKER=$(printf '06%s49' "$(hexof __kvfs)")

@test "the first label makes the index column family, its record and the marker" {
	mktype "$NS/t" timeseries
	echo "1000,1" >>"$NS/t/.add"
	kvfs_unmount
	run ldb --db="$(kvfs_rocksdb_dir)" list_column_families
	[[ $output != *index* ]] || {
		echo "a series without labels made the index: $output" >&2
		false
	}
	kvfs_mount
	setfattr -n user.kvfs.ts.label.room -v kitchen "$NS/t"
	kvfs_unmount
	run ldb --db="$(kvfs_rocksdb_dir)" list_column_families
	[[ $output == *index* ]]
	assert_eq "$(index_records)" "$(ixkey room kitchen t) " "index records"
	run ldb_value metadata "$MARKER"
	[ "$status" -eq 0 ]
}

@test "a label change moves its record, a removal drops it, TS.ALTER-style sets replace them" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.label.room -v a "$NS/t"
	setfattr -n user.kvfs.ts.label.room -v b "$NS/t"
	setfattr -n user.kvfs.ts.label.floor -v 1 "$NS/t"
	kvfs_unmount
	assert_eq "$(index_records)" "$(printf '%s \n%s \n' "$(ixkey floor 1 t)" "$(ixkey room b t)" | sort)" \
		"after a change"
	kvfs_mount
	setfattr -x user.kvfs.ts.label.room "$NS/t"
	kvfs_unmount
	assert_eq "$(index_records)" "$(ixkey floor 1 t) " "after a removal"
}

@test "rm of a series leaves its record as Kvrocks's DEL does; the views skip it; kvfs compact drops it" {
	mktype "$NS/t" timeseries
	mktype "$NS/u" timeseries
	setfattr -n user.kvfs.ts.label.room -v k "$NS/t"
	setfattr -n user.kvfs.ts.label.room -v k "$NS/u"
	echo "1000,1" >>"$NS/t/.add"
	echo "1000,2" >>"$NS/u/.add"
	rm -r "$NS/t"
	assert_bytes "$NS/.mget?room=k" $'u,1000,2\n'
	# A new key of the same name and another type: still not a series.
	mkdir "$NS/t"
	echo v >"$NS/t/f"
	assert_bytes "$NS/.mget?room=k" $'u,1000,2\n'
	rm -r "$NS/t"
	kvfs_unmount
	assert_eq "$(index_records)" "$(printf '%s \n%s \n' "$(ixkey room k t)" "$(ixkey room k u)" | sort)" \
		"after rm"
	"$KVFS_BIN" compact "$KVFS_DB"
	assert_eq "$(index_records)" "$(ixkey room k u) " "after kvfs compact"
}

@test "mv of a series moves its records in the same batch" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.label.room -v k "$NS/t"
	echo "1000,1" >>"$NS/t/.add"
	mv "$NS/t" "$NS/v"
	assert_bytes "$NS/.mget?room=k" $'v,1000,1\n'
	kvfs_unmount
	assert_eq "$(index_records)" "$(ixkey room k v) " "after mv"
}

@test "rsync -aX into another namespace writes the copy's records" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.label.room -v k "$NS/t"
	setfattr -n user.kvfs.ts.label.floor -v 2 "$NS/t"
	echo "1000,1" >>"$NS/t/.add"
	rsync -aX "$NS/" "$BATS_TEST_TMPDIR/backup/"
	mkdir "$KVFS_MNT/copy"
	rsync -aX "$BATS_TEST_TMPDIR/backup/" "$KVFS_MNT/copy/"
	assert_bytes "$KVFS_MNT/copy/.mget?floor=2" $'t,1000,1\n'
	kvfs_unmount
	want=$(printf '%s \n' "$(ixkey room k t)" "$(ixkey floor 2 t)" \
		"$(ixkey room k t copy)" "$(ixkey floor 2 t copy)" | sort)
	assert_eq "$(index_records)" "$want" "records of both namespaces"
}

@test "tar --xattrs and cp -a restores (a hash of chunks made a series, then labelled) write the records" {
	mktype "$NS/t" timeseries
	setfattr -n user.kvfs.ts.label.room -v k "$NS/t"
	echo "1000,1" >>"$NS/t/.add"
	PLAIN=$BATS_TEST_TMPDIR/plain
	mkdir "$PLAIN"
	cp -a "$NS/t" "$PLAIN/t"
	tar --xattrs --xattrs-include='user.*' -C "$PLAIN" -cf "$BATS_TEST_TMPDIR/t.tar" t
	mkdir "$KVFS_MNT/r1" "$KVFS_MNT/r2"
	cp -a "$PLAIN/t" "$KVFS_MNT/r1/t"
	tar --xattrs --xattrs-include='user.*' -C "$KVFS_MNT/r2" -xf "$BATS_TEST_TMPDIR/t.tar"
	assert_bytes "$KVFS_MNT/r1/.mget?room=k" $'t,1000,1\n'
	assert_bytes "$KVFS_MNT/r2/.mget?room=k" $'t,1000,1\n'
	kvfs_unmount
	want=$(printf '%s \n' "$(ixkey room k t)" "$(ixkey room k t r1)" "$(ixkey room k t r2)" | sort)
	assert_eq "$(index_records)" "$want" "records of the three namespaces"
}

@test "the views read the index: a stale record does not fool them, a missing one is not found" {
	mktype "$NS/a" timeseries
	mktype "$NS/b" timeseries
	setfattr -n user.kvfs.ts.label.room -v k "$NS/a"
	setfattr -n user.kvfs.ts.label.room -v x "$NS/b"
	echo "1000,1" >>"$NS/a/.add"
	echo "1000,2" >>"$NS/b/.add"
	echo str >"$NS/s"
	kvfs_unmount
	# Stale records: b (whose room is x), a string, a key that is not
	# there; and a's own record goes.
	ldb_put index "$(ixkey room k b)" ""
	ldb_put index "$(ixkey room k s)" ""
	ldb_put index "$(ixkey room k ghost)" ""
	ldb --db="$(kvfs_rocksdb_dir)" --column_family=index --hex delete "0x$(ixkey room k a)"
	kvfs_mount
	# a is not found: the view trusts the complete index, not a scan.
	assert_bytes "$NS/.mget?room=k" ""
	assert_bytes "$NS/.mrange:-..+?room=(k,x)" $'b,1000,2\n'
	# A label write puts a's record back.
	setfattr -n user.kvfs.ts.label.room -v k "$NS/a"
	assert_bytes "$NS/.mget?room=k" $'a,1000,1\n'
}

@test "without the index (an older kvfs's database) the views scan; the first label completes it" {
	mktype "$NS/a" timeseries
	mktype "$NS/b" timeseries
	setfattr -n user.kvfs.ts.label.room -v k "$NS/a"
	echo "1000,1" >>"$NS/a/.add"
	echo "1000,2" >>"$NS/b/.add"
	kvfs_unmount
	ldb --db="$(kvfs_rocksdb_dir)" drop_column_family index >/dev/null
	kvfs_mount
	assert_bytes "$NS/.mget?room=k" $'a,1000,1\n'
	setfattr -n user.kvfs.ts.label.room -v k "$NS/b"
	assert_bytes "$NS/.mget?room=k" $'a,1000,1\nb,1000,2\n'
	kvfs_unmount
	assert_eq "$(index_records)" "$(printf '%s \n%s \n' "$(ixkey room k a)" "$(ixkey room k b)" | sort)" \
		"records written at completion"
}

@test "an index without kvfs's marker (a Kvrocks that made it) is completed at the first label" {
	mktype "$NS/a" timeseries
	mktype "$NS/b" timeseries
	setfattr -n user.kvfs.ts.label.room -v k "$NS/a"
	echo "1000,1" >>"$NS/a/.add"
	echo "1000,2" >>"$NS/b/.add"
	kvfs_unmount
	# An empty index and no marker: labels written before the index was
	# kept (an older kvfs beside a newer Kvrocks).
	ldb --db="$(kvfs_rocksdb_dir)" --column_family=index --hex delete "0x$(ixkey room k a)"
	ldb --db="$(kvfs_rocksdb_dir)" --column_family=metadata --hex delete "0x$MARKER"
	kvfs_mount -o ro
	assert_bytes "$NS/.mget?room=k" $'a,1000,1\n'
	kvfs_remount
	setfattr -n user.kvfs.ts.label.room -v k "$NS/b"
	assert_bytes "$NS/.mget?room=k" $'a,1000,1\nb,1000,2\n'
	kvfs_unmount
	assert_eq "$(index_records)" "$(printf '%s \n%s \n' "$(ixkey room k a)" "$(ixkey room k b)" | sort)" \
		"records written at completion"
	run ldb_value metadata "$MARKER"
	[ "$status" -eq 0 ]
}

@test "contention: shells set labels on the same and different series while .mget reads; the index matches" {
	for s in s0 s1 s2 s3; do
		mktype "$NS/$s" timeseries
		echo "1000,1" >>"$NS/$s/.add"
	done
	writer() {
		local i
		for i in $(seq 1 40); do
			setfattr -n user.kvfs.ts.label.room -v "r$(((i + $1) % 3))" "$NS/s$(((i + $1) % 4))"
			setfattr -n "user.kvfs.ts.label.w$1" -v "$i" "$NS/s$1"
			if [ $((i % 7)) -eq 0 ]; then
				setfattr -x user.kvfs.ts.label.room "$NS/s$(((i + $1) % 4))" 2>/dev/null || true
			fi
		done
	}
	reader() {
		while [ ! -e "$BATS_TEST_TMPDIR/stop" ]; do
			cat "$NS/.mget?room=(r0,r1,r2)" >/dev/null || return 1
		done
	}
	reader &
	rpid=$!
	pids=()
	for w in 0 1 2; do
		writer "$w" &
		pids+=($!)
	done
	for p in "${pids[@]}"; do
		wait "$p"
	done
	touch "$BATS_TEST_TMPDIR/stop"
	wait "$rpid"
	# Every series the view finds has the label it asked for.
	for s in $(cut -d, -f1 <"$NS/.mget?room=(r0,r1,r2)"); do
		getfattr --only-values -n user.kvfs.ts.label.room "$NS/$s" >/dev/null
	done
	# The index holds exactly one record per label.
	want=$(for s in s0 s1 s2 s3; do
		getfattr -d -m '^user\.kvfs\.ts\.label\.' --absolute-names "$NS/$s" | tail -n +2 |
			while IFS= read -r line; do
				[ -n "$line" ] || continue
				n=${line%%=*}
				n=${n#user.kvfs.ts.label.}
				v=${line#*=}
				v=${v#\"}
				v=${v%\"}
				printf '%s \n' "$(ixkey "$n" "$v" "$s")"
			done
	done | sort)
	[ -n "$want" ]
	kvfs_unmount
	assert_eq "$(index_records)" "$want" "index after the race"
}
