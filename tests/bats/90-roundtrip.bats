#!/usr/bin/env bats
# The round trip of DESIGN.md section 5 rule 1: one key of each mapped type
# (string, hash, a list of 1,200 elements, set, zset, sortedint, bitmap,
# json, hyperloglog, bloom filter),
# copied out to a plain directory with rsync -aX and back into a fresh,
# empty database with rsync -aX, cp -a, and cp -r plus user.kvfs.type; every
# key compared: type, content, and for the list the order.

load helper

setup() {
	kvfs_setup
	kvfs_mount
	PLAIN=$BATS_TEST_TMPDIR/plain
}

# One key of each type in directory $1.
build_keys() {
	local d=$1 i
	printf 'hello\0world\n' >"$d/str"
	mkdir "$d/hash"
	echo v1 >"$d/hash/f1"
	printf '' >"$d/hash/empty"
	mkdir "$d/list"
	setfattr -n user.kvfs.type -v list "$d/list"
	for i in $(seq 0 1199); do echo "element $i" >"$d/list/$i"; done
	mkdir "$d/set"
	setfattr -n user.kvfs.type -v set "$d/set"
	touch "$d/set/alpha" "$d/set/beta" "$d/set/with space"
	mkdir "$d/zset"
	setfattr -n user.kvfs.type -v zset "$d/zset"
	echo 2.5 >"$d/zset/a"
	echo -inf >"$d/zset/b"
	echo 1e21 >"$d/zset/c"
	echo 0.1 >"$d/zset/d"
	mkdir "$d/si"
	setfattr -n user.kvfs.type -v sortedint "$d/si"
	touch "$d/si/1" "$d/si/20" "$d/si/300" "$d/si/18446744073709551615"
	touch "$d/bm"
	setfattr -n user.kvfs.type -v bitmap "$d/bm"
	printf '\x80\x01' >"$d/bm"
	printf '\xff' | dd of="$d/bm" bs=1 seek=3000 conv=notrunc status=none
	mkdir "$d/emptylist"
	setfattr -n user.kvfs.type -v list "$d/emptylist"
	touch "$d/doc" "$d/emptydoc"
	setfattr -n user.kvfs.type -v json "$d/doc"
	setfattr -n user.kvfs.type -v json "$d/emptydoc"
	printf '{"a": [1, 2.50, 9007199254740993, "x\\u00e9"], "b": {"c": null}}' >"$d/doc"
	mkdir "$d/hll"
	setfattr -n user.kvfs.type -v hyperloglog "$d/hll"
	seq 1 5000 >>"$d/hll/.add"
	mkdir "$d/bf"
	setfattr -n user.kvfs.bloom.capacity -v 50 "$d/bf"
	setfattr -n user.kvfs.bloom.error_rate -v 0.001 "$d/bf"
	seq 1 120 >>"$d/bf/.add"
}

# Every key of $1 has the type and content of its copy in $2; the list's
# elements come in list order.
compare_keys() {
	local a=$1 b=$2 k i
	for k in str hash list set zset si bm emptylist doc emptydoc hll bf; do
		assert_eq "$(kvfs_type "$b/$k")" "$(getfattr --absolute-names --only-values \
			-n user.kvfs.type "$a/$k")" "type of $k"
	done
	diff -r "$a" "$b"
	assert_eq "$(kvfs_type "$b/list")" list "list type"
	# list order: position p holds "element p", for every p
	run python3 -c '
import os, sys
d = sys.argv[1]
names = os.listdir(d)
bad = [n for n in names if open(os.path.join(d, n)).read() != "element %d\n" % int(n)]
print(len(names), len(bad))
' "$b/list"
	assert_eq "$output" "1200 0" "list elements in place"
	assert_eq "$(cat "$b/list/-1")" "element 1199" "last element"
	assert_eq "$(ls -U "$b/zset" | paste -sd' ')" "b d a c" "zset in score order"
	assert_eq "$(ls -U "$b/si" | paste -sd' ')" "1 20 300 18446744073709551615" "ids in order"
	assert_size "$b/bm" 3001
	assert_eq "$(cat "$b/doc:\$.a[2]")" 9007199254740993 "a JSON member"
	assert_eq "$(ls "$b/bf" | paste -sd' ')" "chain filter.0 filter.1" "bloom filters"
	assert_eq "$(sed -n 's/^Number of items inserted\t//p' "$b/bf/.info")" \
		"$(sed -n 's/^items //p' "$a/bf/chain")" "bloom items"
}

# Unmount and mount a new, empty database.
fresh_db() {
	kvfs_unmount
	KVFS_DB=$BATS_TEST_TMPDIR/db2
	kvfs_mount
	mkdir -p "$NS"
}

@test "rsync -aX out to a plain directory and into a fresh database reproduces every key" {
	build_keys "$NS"
	rsync -aX "$NS/" "$PLAIN/"
	assert_eq "$(getfattr --absolute-names --only-values -n user.kvfs.type "$PLAIN/list")" list \
		"type carried by the copy"
	assert_eq "$(ls "$PLAIN/list" | head -3 | paste -sd' ')" "0000 0001 0002" "names"
	fresh_db
	rsync -aX "$PLAIN/" "$NS/"
	compare_keys "$PLAIN" "$NS"
	kvfs_remount
	compare_keys "$PLAIN" "$NS"
	# nothing left behind: no temp file (.NAME.XXXXXX) reached the database
	kvfs_unmount
	for cf in metadata default zset_score; do
		! ldb_scan "$cf" | grep -qE "2E[0-9A-F]*2E[0-9A-F]{12} :"
	done
}

@test "a second rsync -aX over the copy (temp files renamed onto existing entries) keeps every key" {
	build_keys "$NS"
	rsync -aX "$NS/" "$PLAIN/"
	fresh_db
	rsync -aX "$PLAIN/" "$NS/"
	# times are kept, so --ignore-times makes rsync send every file
	# again: each rename replaces an element, member or id
	kvfs_remount
	rsync -aX --ignore-times "$PLAIN/" "$NS/"
	compare_keys "$PLAIN" "$NS"
}

@test "cp -a from the plain copy into an empty namespace reproduces every key" {
	build_keys "$NS"
	rsync -aX "$NS/" "$PLAIN/"
	fresh_db
	mkdir "$KVFS_MNT/copy"
	cp -a "$PLAIN/." "$KVFS_MNT/copy/"
	compare_keys "$PLAIN" "$KVFS_MNT/copy"
}

@test "cp -a of a list whose files were written in random order keeps list order" {
	build_keys "$NS"
	rsync -aX "$NS/" "$PLAIN/"
	# a second plain copy whose list files are created shuffled
	python3 -c '
import os, random, shutil, sys
src, dst = sys.argv[1], sys.argv[2]
shutil.copytree(src, dst, copy_function=shutil.copy2, ignore=lambda d, n: n if d.endswith("/list") else [])
names = os.listdir(os.path.join(src, "list"))
random.seed(4)
random.shuffle(names)
for n in names:
    shutil.copy2(os.path.join(src, "list", n), os.path.join(dst, "list", n))
os.setxattr(os.path.join(dst, "list"), "user.kvfs.type", b"list")
' "$PLAIN" "$BATS_TEST_TMPDIR/shuffled"
	fresh_db
	mkdir "$KVFS_MNT/copy"
	cp -a "$BATS_TEST_TMPDIR/shuffled/." "$KVFS_MNT/copy/"
	compare_keys "$PLAIN" "$KVFS_MNT/copy"
}

@test "cp -r carries no types; setting user.kvfs.type afterwards converts each key" {
	build_keys "$NS"
	rsync -aX "$NS/" "$PLAIN/"
	fresh_db
	mkdir "$KVFS_MNT/copy"
	cp -r "$PLAIN/." "$KVFS_MNT/copy/"
	assert_eq "$(kvfs_type "$KVFS_MNT/copy/list")" hash "a directory without a type"
	for k in str hash list set zset si bm emptylist doc emptydoc hll bf; do
		setfattr -n user.kvfs.type \
			-v "$(getfattr --absolute-names --only-values -n user.kvfs.type "$PLAIN/$k")" \
			"$KVFS_MNT/copy/$k"
	done
	compare_keys "$PLAIN" "$KVFS_MNT/copy"
}
