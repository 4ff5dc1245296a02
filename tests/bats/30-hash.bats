#!/usr/bin/env bats
# Hash keys are directories of field files: mkdir, field writes, listing
# order, rm/rmdir/rm -r, mv, the type xattr, and concurrent writers.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# The metadata value of hash KEY in the default namespace must say SIZE
# fields: 82 | expire (8) | version (8) | size (8), all big-endian.
assert_hash_meta_size() {
	local meta want
	meta=$(ldb_value metadata "${NS_HEX}$(hexof "$1")") || {
		echo "no metadata record for hash $1" >&2
		return 1
	}
	want=$(printf '%016X' "$2")
	if ! [[ $meta =~ ^82[0-9A-F]{32}${want}$ ]]; then
		echo "metadata of $1 is $meta, expected 82 + expire + version + size $want" >&2
		return 1
	fi
}

@test "mkdir creates an empty hash that survives a remount" {
	mkdir "$NS/h"
	[ -d "$NS/h" ]
	assert_eq "$(ls -A "$NS/h")" "" "fields of the new hash"
	kvfs_remount
	[ -d "$NS/h" ]
	assert_eq "$(ls -A "$NS/h")" "" "fields after remount"
}

@test "echo > hash/field creates fields" {
	mkdir "$NS/h"
	echo one >"$NS/h/f1"
	printf two >"$NS/h/f2"
	[ -f "$NS/h/f1" ]
	assert_bytes "$NS/h/f1" $'one\n'
	assert_bytes "$NS/h/f2" two
	assert_size "$NS/h/f1" 4
	assert_size "$NS/h/f2" 3
	kvfs_remount
	assert_bytes "$NS/h/f1" $'one\n'
	assert_bytes "$NS/h/f2" two
}

@test "ls lists fields in byte order" {
	mkdir "$NS/h"
	for f in b a B a1 '~' _ 'é' A0 0; do
		printf x >"$NS/h/$f"
	done
	# ls -U: the file system's own order, not ls's sorting
	run ls -U -A "$NS/h"
	[ "$status" -eq 0 ]
	assert_eq "$output" $'0\nA0\nB\n_\na\na1\nb\n~\né' "readdir order"
}

@test "field files have the semantics of string files (offset write, append, truncate)" {
	mkdir "$NS/h"
	printf 0123456789 >"$NS/h/f"
	printf XY | dd of="$NS/h/f" bs=1 seek=3 conv=notrunc status=none
	printf ab >>"$NS/h/f"
	assert_bytes "$NS/h/f" 012XY56789ab
	truncate -s 4 "$NS/h/f"
	assert_bytes "$NS/h/f" 012X
	assert_size "$NS/h/f" 4
}

@test "rm deletes one field" {
	mkdir "$NS/h"
	printf 1 >"$NS/h/a"
	printf 2 >"$NS/h/b"
	rm "$NS/h/a"
	[ ! -e "$NS/h/a" ]
	assert_eq "$(ls -A "$NS/h")" b "fields after rm"
	kvfs_remount
	assert_eq "$(ls -A "$NS/h")" b "fields after rm and remount"
	assert_bytes "$NS/h/b" 2
}

@test "removing the last field keeps the empty hash, also after a remount" {
	mkdir "$NS/h"
	printf 1 >"$NS/h/a"
	rm "$NS/h/a"
	[ -d "$NS/h" ]
	assert_eq "$(ls -A "$NS/h")" "" "fields after removing the last"
	kvfs_remount
	[ -d "$NS/h" ]
	assert_eq "$(ls -A "$NS/h")" "" "fields after remount"
}

@test "rmdir removes an empty hash" {
	mkdir "$NS/h"
	rmdir "$NS/h"
	[ ! -e "$NS/h" ]
	kvfs_remount
	[ ! -e "$NS/h" ]
}

@test "rmdir removes a hash emptied by rm" {
	mkdir "$NS/h"
	printf 1 >"$NS/h/a"
	rm "$NS/h/a"
	rmdir "$NS/h"
	[ ! -e "$NS/h" ]
	kvfs_remount
	[ ! -e "$NS/h" ]
}

@test "rmdir of a non-empty hash fails with ENOTEMPTY and changes nothing" {
	mkdir "$NS/h"
	printf 1 >"$NS/h/a"
	run rmdir "$NS/h"
	[ "$status" -eq 1 ]
	[[ $output == *"Directory not empty"* ]]
	assert_bytes "$NS/h/a" 1
	kvfs_remount
	assert_bytes "$NS/h/a" 1
}

@test "rm -r removes a hash with its fields" {
	mkdir "$NS/h"
	for i in 1 2 3 4 5; do
		printf '%s' "$i" >"$NS/h/f$i"
	done
	printf keep >"$NS/other"
	rm -r "$NS/h"
	[ ! -e "$NS/h" ]
	kvfs_remount
	[ ! -e "$NS/h" ]
	assert_eq "$(ls -A "$NS")" other "keys after rm -r"
}

@test "mv renames a field within a hash" {
	mkdir "$NS/h"
	printf v >"$NS/h/a"
	mv "$NS/h/a" "$NS/h/b"
	[ ! -e "$NS/h/a" ]
	assert_bytes "$NS/h/b" v
	kvfs_remount
	assert_eq "$(ls -A "$NS/h")" b "fields after mv"
	assert_bytes "$NS/h/b" v
}

@test "mv of a field onto an existing field replaces it" {
	mkdir "$NS/h"
	printf new >"$NS/h/a"
	printf 'old and longer' >"$NS/h/b"
	mv "$NS/h/a" "$NS/h/b"
	assert_eq "$(ls -A "$NS/h")" b "fields after mv"
	assert_bytes "$NS/h/b" new
	kvfs_remount
	assert_eq "$(ls -A "$NS/h")" b "fields after mv and remount"
	assert_bytes "$NS/h/b" new
}

@test "mv onto an existing field keeps the hash length exact" {
	mkdir "$NS/h"
	printf 1 >"$NS/h/a"
	printf 2 >"$NS/h/b"
	printf 3 >"$NS/h/c"
	mv "$NS/h/a" "$NS/h/b"
	kvfs_unmount
	assert_hash_meta_size h 2
}

@test "mv renames a hash key within the namespace" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	mv "$NS/h" "$NS/g"
	[ ! -e "$NS/h" ]
	assert_bytes "$NS/g/f" v
	kvfs_remount
	[ ! -e "$NS/h" ]
	assert_bytes "$NS/g/f" v
}

@test "mv renames an empty hash" {
	mkdir "$NS/h"
	mv "$NS/h" "$NS/g"
	[ ! -e "$NS/h" ]
	[ -d "$NS/g" ]
	kvfs_remount
	[ ! -e "$NS/h" ]
	[ -d "$NS/g" ]
}

@test "user.kvfs.type of a hash is hash" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	run kvfs_type "$NS/h"
	[ "$status" -eq 0 ]
	assert_eq "$output" hash "user.kvfs.type"
}

@test "user.kvfs.type of an empty hash made by mkdir is hash" {
	mkdir "$NS/h"
	run kvfs_type "$NS/h"
	[ "$status" -eq 0 ]
	assert_eq "$output" hash "user.kvfs.type"
}

@test "mkdir inside a hash fails with EPERM and creates nothing" {
	mkdir "$NS/h"
	run errno_of 'os.mkdir(a[0])' "$NS/h/sub"
	assert_eq "$output" EPERM "mkdir in a hash"
	[ ! -e "$NS/h/sub" ]
	assert_eq "$(ls -A "$NS/h")" "" "fields after the failed mkdir"
}

@test "writing to a hash as if it were a file fails with EISDIR" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	run errno_of 'open(a[0], "w")' "$NS/h"
	assert_eq "$output" EISDIR "open(O_WRONLY) of a hash"
	assert_bytes "$NS/h/f" v
}

@test "a missing field reads as ENOENT" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	run errno_of 'open(a[0], "rb")' "$NS/h/missing"
	assert_eq "$output" ENOENT "open of a missing field"
}

# 8 writers, 200 distinct fields each, into one hash.
parallel_writers() {
	local w pids=() fail=0
	mkdir "$NS/h"
	for w in 0 1 2 3 4 5 6 7; do
		(
			for i in $(seq 0 199); do
				printf 'w%d-%d' "$w" "$i" >"$NS/h/f-$w-$i" || exit 1
			done
		) 3>&- &
		pids+=($!)
	done
	for w in "${pids[@]}"; do
		wait "$w" || fail=1
	done
	[ "$fail" -eq 0 ]
}

@test "8 parallel writers of 200 fields each: ls counts exactly 1600, also after remount" {
	parallel_writers
	assert_eq "$(ls "$NS/h" | wc -l)" 1600 "fields listed"
	assert_eq "$(ls "$NS/h" | sort -u | wc -l)" 1600 "distinct fields listed"
	# every field holds what its writer wrote
	python3 -c '
import os, sys
d = sys.argv[1]
bad = [n for n in os.listdir(d) if open(os.path.join(d, n), "rb").read() != ("w" + n[2:]).encode()]
if bad:
    sys.exit("wrong values: %s" % bad[:10])
' "$NS/h"
	kvfs_remount
	assert_eq "$(ls "$NS/h" | wc -l)" 1600 "fields listed after remount"
}

@test "8 parallel writers of 200 fields each: the stored hash size is exactly 1600" {
	parallel_writers
	kvfs_unmount
	assert_hash_meta_size h 1600
	assert_eq "$(ldb_scan default | grep -c "^0x${NS_HEX}00000001$(hexof h)")" 1600 \
		"sub-keys of h in the default column family"
}

@test "a new field is stored at its first close, in one batch with its value" {
	mkdir "$NS/h"
	# touch closes at once: listed and stored right after, without a wait
	touch "$NS/h/t"
	assert_eq "$(ls "$NS/h")" "t" "listing right after touch"
	# open for writing: found by name at once, stored at the close
	exec 7>"$NS/h/w"
	[ -f "$NS/h/w" ]
	assert_size "$NS/h/w" 0
	printf 'value' >&7
	exec 7>&-
	assert_bytes "$NS/h/w" value
	assert_eq "$(ls "$NS/h" | tr '\n' ' ')" "t w " "listing after the close"
	# closed once by anyone (a flush), even empty: listed, though still open
	exec 7>"$NS/h/d"
	: >>"$NS/h/d"
	assert_eq "$(ls "$NS/h" | tr '\n' ' ')" "d t w " "listing after one close of two"
	exec 7>&-
	# O_EXCL on a name just created and not yet closed
	exec 7>"$NS/h/x"
	run bash -c "set -o noclobber; : > '$NS/h/x'"
	[ "$status" -ne 0 ]
	exec 7>&-
	kvfs_remount
	assert_bytes "$NS/h/t" ""
	assert_bytes "$NS/h/w" value
	assert_bytes "$NS/h/x" ""
	kvfs_unmount
	assert_hash_meta_size h 4
}

@test "cp of a file over 512 MiB onto a field keeps the old value, and a new field is not created" {
	mkdir "$NS/h"
	printf old >"$NS/h/f"
	truncate -s 600M "$BATS_TEST_TMPDIR/big"
	run cp "$BATS_TEST_TMPDIR/big" "$NS/h/f"
	[ "$status" -ne 0 ]
	run cp "$BATS_TEST_TMPDIR/big" "$NS/h/g"
	[ "$status" -ne 0 ]
	assert_bytes "$NS/h/f" old
	assert_eq "$(ls "$NS/h")" f "fields"
	kvfs_remount
	[ ! -e "$NS/h/g" ]
	assert_bytes "$NS/h/f" old
	assert_eq "$(ls "$NS/h")" f
}
