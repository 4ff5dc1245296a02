#!/usr/bin/env bats
# top-k keys (docs/mapping.md section 25): a directory whose listed files
# buckets, heap and rng are the exact HeavyKeeper state; .add/.incrby
# inputs fed from pipelines; read-only views; the k/width/depth/decay
# attributes; the stored bytes of kvfs's own layout (ldb, docs/encoding.md);
# and the rsync -aX round trip restoring the identical state.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mktk() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v topk "$1"
}

param() {
	getfattr --only-values -n "user.kvfs.topk.$2" "$1"
}

# sketch_state KEY [NS]: the metadata size and tail and every sub-key
# record (sub-key without the version, value) of KEY, from ldb. Unmounted.
sketch_state() {
	local key=$1 ns=${2:-$KVFS_DEFAULT_NS} nsh kh meta pre
	nsh=$(printf '%02X%s' "${#ns}" "$(hexof "$ns")")
	kh=$(hexof "$key")
	meta=$(ldb_value metadata "${nsh}${kh}") || return 1
	echo "size and tail ${meta:34}"
	pre="0x${nsh}$(printf '%08X' "${#key}")${kh}"
	ldb_scan default | awk -v p="$pre" 'index($1, p) == 1 { print substr($1, length(p) + 17), $3 }'
}

@test "mkdir and user.kvfs.type make an empty top-k with Redis's defaults and k 50" {
	mktk "$NS/t"
	assert_eq "$(kvfs_type "$NS/t")" topk "type"
	assert_eq "$(param "$NS/t" k) $(param "$NS/t" width) $(param "$NS/t" depth) $(param "$NS/t" decay)" \
		"50 8 7 0.9" "parameters"
	assert_eq "$(ls -A "$NS/t")" "" "listing"
	assert_eq "$(getfattr -d -m - "$NS/t" | grep -c user.kvfs.topk)" 4 "listed attributes"
}

@test "parameter attributes on an empty directory make a top-k (rsync's sorted order)" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.topk.decay -v 0.5 "$NS/t"
	setfattr -n user.kvfs.topk.depth -v 3 "$NS/t"
	setfattr -n user.kvfs.topk.k -v 4 "$NS/t"
	setfattr -n user.kvfs.topk.width -v 100 "$NS/t"
	setfattr -n user.kvfs.type -v topk "$NS/t"
	assert_eq "$(cat "$NS/t/.info" | paste -sd' ')" "k 4 width 100 depth 3 decay 0.5" "info"
}

@test "parameters are refused once items are in (ENOTEMPTY) and out of range (EINVAL)" {
	mktk "$NS/t"
	for bad in "k 0" "width 0" "depth 0" "decay 0" "decay 1.5" "decay nan" "k x"; do
		set -- $bad
		run errno_of 'os.setxattr(a[0], "user.kvfs.topk." + a[1], a[2].encode())' "$NS/t" "$1" "$2"
		assert_eq "$output" EINVAL "$bad"
	done
	echo a >>"$NS/t/.add"
	run errno_of 'os.setxattr(a[0], "user.kvfs.topk.k", b"3")' "$NS/t"
	assert_eq "$output" ENOTEMPTY
	# the same value is no change
	setfattr -n user.kvfs.topk.k -v 50 "$NS/t"
	assert_eq "$(param "$NS/t" k)" 50 "k"
}

@test "a pipeline feeds .add (TOPK.ADD) and .list shows item<TAB>count, highest first" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.topk.k -v 3 "$NS/t"
	setfattr -n user.kvfs.topk.width -v 1000 "$NS/t"
	printf '%s\n' a b a c a b d a >>"$NS/t/.add"
	# d (1) reaches the heap's minimum c (1) and expels it, as in RedisBloom
	assert_eq "$(cat "$NS/t/.list")" "$(printf 'a\t4\nb\t2\nd\t1')" "list"
	assert_eq "$(cat "$NS/t/.query:a") $(cat "$NS/t/.query:c") $(cat "$NS/t/.count:b")" "1 0 2" \
		"query and count"
	assert_eq "$(ls "$NS/t" | paste -sd' ')" "buckets heap" "listing"
	assert_eq "$(wc -l <"$NS/t/buckets")" 7 "rows"
}

@test "TOPK.ADD's reply: a read of .add on the open that wrote gives each item's expelled item" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.topk.k -v 3 "$NS/t"
	setfattr -n user.kvfs.topk.width -v 1000 "$NS/t"
	run python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_RDWR)
os.write(fd, b"a\nb\na\nc\na\nb\nd\na\n")
first = os.read(fd, 4096)
again = os.read(fd, 4096)  # read once: then the end
os.write(fd, b"e\n")      # e (1) ties the minimum d (1) and expels it
second = os.read(fd, 4096)
os.close(fd)
other = os.open(sys.argv[1], os.O_RDONLY)  # another open has no answer
third = os.read(other, 4096)
os.close(other)
print(repr(first), repr(again), repr(second), repr(third))
' "$NS/t/.add"
	[ "$status" -eq 0 ]
	# per item, in order: nothing expelled but by d, which expels c
	assert_eq "$output" "b'\\n\\n\\n\\n\\n\\nc\\n\\n' b'' b'd\\n' b''" "replies"
	assert_eq "$(cut -f1 "$NS/t/.list" | paste -sd' ')" "a b e" "list"
	# a shell: read the reply on the descriptor that wrote
	assert_eq "$(bash -c 'exec 3<>"$1"; echo f >&3; read -r gone <&3; echo "[$gone]"' sh "$NS/t/.add")" \
		"[e]" "shell"
}

@test ".incrby takes ITEM<TAB>N lines; a bad line refuses the whole write (EINVAL)" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.topk.width -v 1000 "$NS/t"
	printf 'x\t5\ny y\t3\n' >>"$NS/t/.incrby"
	assert_eq "$(cat "$NS/t/.list")" "$(printf 'x\t5\ny y\t3')" "list"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"z\t1\nw\t0\n")' \
		"$NS/t/.incrby"
	assert_eq "$output" EINVAL
	grep -q "line 2 is not ITEM<TAB>N" "$KVFS_LOG"
	assert_eq "$(cat "$NS/t/.count:z")" 0 "z not added"
}

@test "a Zipf stream through .add finds the heavy hitters" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.topk.k -v 5 "$NS/t"
	setfattr -n user.kvfs.topk.width -v 200 "$NS/t"
	setfattr -n user.kvfs.topk.depth -v 5 "$NS/t"
	python3 -c '
import random
random.seed(7)
w = [1.0 / i for i in range(1, 2001)]
for x in random.choices(range(1, 2001), weights=w, k=20000):
    print("item%d" % x)' >"$BATS_TEST_TMPDIR/stream"
	cat "$BATS_TEST_TMPDIR/stream" >>"$NS/t/.add"
	assert_eq "$(cut -f1 "$NS/t/.list" | sort | paste -sd' ')" "item1 item2 item3 item4 item5" \
		"top 5"
}

@test "TOPK.ADD a, b x2 (k 2, width 4, depth 2): rows, heap and metadata bytes (ldb)" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.topk.depth -v 2 "$NS/t"
	setfattr -n user.kvfs.topk.k -v 2 "$NS/t"
	setfattr -n user.kvfs.topk.width -v 4 "$NS/t"
	printf 'a\nb\nb\n' >>"$NS/t/.add"
	kvfs_unmount
	# type 14: 8E | expire 0 | version | size 2 | k 2 | width 4 | depth 2 |
	# decay 0.9 (sortable BFECCCCCCCCCCCCD) | draws 0
	run ldb_value metadata "$(nskey_hex t)"
	[[ $output =~ ^8E0000000000000000([0-9A-F]{16})0000000000000002(.*)$ ]] || {
		echo "metadata: $output" >&2
		false
	}
	version=${BASH_REMATCH[1]}
	assert_eq "${BASH_REMATCH[2]}" 000000020000000400000002BFECCCCCCCCCCCCD0000000000000000 "tail"
	sub="${NS_HEX}00000001$(hexof t)${version}"
	# MurmurHash2 (independent Python): a fp F23CF517 at 2 and 0, b fp
	# 2ADFED97 at 0 and 1
	run ldb_value default "${sub}0000000000"
	assert_eq "$output" 2ADFED9700000002$(printf '0%.0s' {1..16})F23CF51700000001$(printf '0%.0s' {1..16}) "row 0"
	run ldb_value default "${sub}0000000001"
	assert_eq "$output" F23CF517000000012ADFED9700000002$(printf '0%.0s' {1..32}) "row 1"
	# heap in array order: a (1), b (2): count u32, length u32, item
	run ldb_value default "${sub}01"
	assert_eq "$output" 000000010000000161000000020000000162 "heap"
}

@test "writing heap, buckets and rng replaces that part; bad content is EINVAL and changes nothing" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.topk.k -v 3 "$NS/t"
	setfattr -n user.kvfs.topk.width -v 2 "$NS/t"
	setfattr -n user.kvfs.topk.depth -v 1 "$NS/t"
	printf '1\tx\n4\ty\\ty\n2\tz\n' >"$NS/t/heap"
	assert_eq "$(cat "$NS/t/.list")" "$(printf 'y\\ty\t4\nz\t2\nx\t1')" "list (escaped tab)"
	printf '0000000a:3 00000000:0\n' >"$NS/t/buckets"
	assert_eq "$(cat "$NS/t/buckets")" "0000000a:3 00000000:0" "buckets"
	echo 17 >"$NS/t/rng"
	assert_eq "$(cat "$NS/t/rng")" 17 "rng"
	before=$(cat "$NS/t/heap")
	# not a heap: fails when stored (close)
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_TRUNC); os.write(fd, b"5\tx\n1\ty\n"); os.close(fd)' \
		"$NS/t/heap"
	assert_eq "$output" EINVAL
	grep -q "not in heap order" "$KVFS_LOG"
	# no tab: fails at the write
	run errno_of 'fd = os.open(a[0], os.O_WRONLY); os.write(fd, b"5 x\n")' "$NS/t/heap"
	assert_eq "$output" EINVAL
	# a row of the wrong width
	run errno_of 'fd = os.open(a[0], os.O_WRONLY); os.write(fd, b"00000001:1\n"); os.close(fd)' \
		"$NS/t/buckets"
	assert_eq "$output" EINVAL
	grep -q "row 1 has 1 entries, not 2" "$KVFS_LOG"
}

@test "rm of each part empties it; rmdir then deletes the key; inputs cannot be removed" {
	mktk "$NS/t"
	printf 'a\nb\n' >>"$NS/t/.add"
	run errno_of 'os.unlink(a[0])' "$NS/t/.add"
	assert_eq "$output" EACCES
	run rmdir "$NS/t"
	[ "$status" -ne 0 ]
	rm -r "$NS/t"
	[ ! -e "$NS/t" ]
}

@test "views are read-only and unlisted; other names are EINVAL; a topk is not a hash" {
	mktk "$NS/t"
	echo a >>"$NS/t/.add"
	run errno_of 'os.open(a[0], os.O_WRONLY)' "$NS/t/.list"
	assert_eq "$output" EACCES
	run errno_of 'open(a[0], "w").close()' "$NS/t/field"
	assert_eq "$output" EINVAL
	assert_eq "$(ls -A "$NS/t" | paste -sd' ')" "buckets heap" "listing"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"hash")' "$NS/t"
	assert_eq "$output" ENOTEMPTY
}

@test "rsync -aX out and back restores the identical state (ldb), heap, buckets and rng" {
	mkdir "$NS/t"
	setfattr -n user.kvfs.topk.k -v 10 "$NS/t"
	setfattr -n user.kvfs.topk.width -v 50 "$NS/t"
	setfattr -n user.kvfs.topk.depth -v 4 "$NS/t"
	setfattr -n user.kvfs.topk.decay -v 0.8 "$NS/t"
	seq 1 3000 | awk '{ print "k" int(sqrt($1 * 7919 % 3000)) }' >>"$NS/t/.add"
	printf 'tab\there\t7\n' >>"$NS/t/.incrby"
	assert_eq "$(ls "$NS/t" | paste -sd' ')" "buckets heap rng" "listing"
	plain=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$plain/"
	mkdir "$KVFS_MNT/two"
	rsync -aX "$plain/" "$KVFS_MNT/two/"
	assert_eq "$(cat "$KVFS_MNT/two/t/.list")" "$(cat "$NS/t/.list")" "list"
	assert_eq "$(cat "$KVFS_MNT/two/t/.info")" "$(cat "$NS/t/.info")" "info"
	# the same state goes on the same way
	echo k1 >>"$NS/t/.add"
	echo k1 >>"$KVFS_MNT/two/t/.add"
	kvfs_unmount
	a=$(sketch_state t)
	b=$(sketch_state t two)
	[ "$(wc -l <<<"$a")" -ge 5 ]
	assert_eq "$b" "$a" "stored state"
}

@test "a second rsync -aX after more items carries every changed part" {
	mktk "$NS/t"
	printf 'a\nb\n' >>"$NS/t/.add"
	plain=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$plain/"
	mkdir "$KVFS_MNT/two"
	rsync -aX "$plain/" "$KVFS_MNT/two/"
	sleep 1.1 # rsync compares whole seconds, as on any disk
	printf 'c\na\n' >>"$NS/t/.add"
	rsync -aX "$NS/" "$plain/"
	rsync -aX "$plain/" "$KVFS_MNT/two/"
	for f in buckets heap; do
		assert_eq "$(cat "$KVFS_MNT/two/t/$f")" "$(cat "$NS/t/$f")" "$f"
	done
}
