#!/usr/bin/env bats
# t-digest keys (docs/mapping.md section 24): a directory whose listed
# files buffer, centroids and state are the exact state; .add/.reset/.merge
# inputs fed from pipelines; read-only views; the compression attribute;
# the stored bytes (ldb, kvrocks-encoding.md 6.12); and the rsync -aX round
# trip restoring the identical state.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mktd() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v tdigest "$1"
}

# sketch_state KEY [NS]: the metadata tail and every sub-key record
# (sub-key without the version, value) of KEY, from ldb. Unmounted.
sketch_state() {
	local key=$1 ns=${2:-$KVFS_DEFAULT_NS} nsh kh meta pre
	nsh=$(printf '%02X%s' "${#ns}" "$(hexof "$ns")")
	kh=$(hexof "$key")
	meta=$(ldb_value metadata "${nsh}${kh}") || return 1
	echo "tail ${meta:50}"
	pre="0x${nsh}$(printf '%08X' "${#key}")${kh}"
	ldb_scan default | awk -v p="$pre" 'index($1, p) == 1 { print substr($1, length(p) + 17), $3 }'
}

@test "mkdir and user.kvfs.type make an empty t-digest: a real record, nothing listed" {
	mktd "$NS/td"
	assert_eq "$(kvfs_type "$NS/td")" tdigest "type"
	assert_eq "$(getfattr --only-values -n user.kvfs.tdigest.compression "$NS/td")" 100 \
		"compression"
	assert_eq "$(ls -A "$NS/td")" "" "listing"
	kvfs_unmount
	# type 12, v1: 8C | expire 0 | version | size 0 | compression 100 |
	# capacity 610 | counters 0 | min DBL_MAX | max -DBL_MAX | 0 | 0
	run ldb_value metadata "$(nskey_hex td)"
	[[ $output =~ ^8C0000000000000000[0-9A-F]{16}0000000000000000(.*)$ ]] || {
		echo "metadata: $output" >&2
		false
	}
	assert_eq "${BASH_REMATCH[1]}" \
		"0000006400000262$(printf '0%.0s' {1..64})FFEFFFFFFFFFFFFF0010000000000000$(printf '0%.0s' {1..32})" \
		"tail"
}

@test "the compression attribute on an empty directory makes a t-digest with it" {
	mkdir "$NS/td"
	setfattr -n user.kvfs.tdigest.compression -v 200 "$NS/td"
	assert_eq "$(kvfs_type "$NS/td")" tdigest "type"
	grep -qx "capacity 1024" "$NS/td/.info"
	grep -qx "compression 200" "$NS/td/.info"
	getfattr -d -m - "$NS/td" | grep -q 'user.kvfs.tdigest.compression="200"'
}

@test "the compression cannot change once samples are in (ENOTEMPTY), nor be 0 or 1001 (EINVAL)" {
	mktd "$NS/td"
	echo 5 >>"$NS/td/.add"
	run errno_of 'os.setxattr(a[0], "user.kvfs.tdigest.compression", b"50")' "$NS/td"
	assert_eq "$output" ENOTEMPTY
	mktd "$NS/e"
	for bad in 0 1001 abc -5; do
		run errno_of 'os.setxattr(a[0], "user.kvfs.tdigest.compression", a[1].encode())' \
			"$NS/e" "$bad"
		assert_eq "$output" EINVAL "compression $bad"
	done
	run errno_of 'os.removexattr(a[0], "user.kvfs.tdigest.compression")' "$NS/e"
	assert_eq "$output" EPERM "removexattr"
	assert_eq "$(getfattr --only-values -n user.kvfs.tdigest.compression "$NS/e")" 100 "kept"
	assert_eq "$(getfattr --only-values -n user.kvfs.tdigest.compression "$NS/td")" 100 "kept"
	# a hash with fields is not empty
	mkdir "$NS/h"
	echo v >"$NS/h/f"
	run errno_of 'os.setxattr(a[0], "user.kvfs.tdigest.compression", b"50")' "$NS/h"
	assert_eq "$output" ENOTEMPTY
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
}

@test "a pipeline feeds .add: each line is a sample (TDIGEST.ADD)" {
	mktd "$NS/td"
	seq 1 100 | shuf --random-source=<(yes) >>"$NS/td/.add"
	grep -qx "observations 100" "$NS/td/.info"
	grep -qx "unmerged_nodes 100" "$NS/td/state"
	assert_eq "$(wc -l <"$NS/td/buffer")" 100 "buffer lines"
	assert_eq "$(sort -n "$NS/td/buffer" | paste -sd+ | bc)" 5050 "buffer sum"
	assert_eq "$(cat "$NS/td/.min") $(cat "$NS/td/.max")" "1 100" "min max"
	assert_eq "$(ls "$NS/td" | paste -sd' ')" "buffer state" "listing"
}

@test "a line that is not a number refuses the whole write (EINVAL) and adds nothing" {
	mktd "$NS/td"
	echo 1 >>"$NS/td/.add"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"2\n3\nabc\n4\n")' \
		"$NS/td/.add"
	assert_eq "$output" EINVAL
	grep -q "line 3 ('abc') is not a number" "$KVFS_LOG"
	grep -qx "observations 1" "$NS/td/.info"
	assert_eq "$(cat "$NS/td/buffer")" 1 "buffer"
}

@test "views answer RedisBloom's TDIGEST queries and are not listed" {
	mktd "$NS/td"
	printf '%s\n' 10 20 30 40 50 60 >>"$NS/td/.add"
	assert_eq "$(cat "$NS/td/.rank:0,10,20,30,40,50,60,70" | paste -sd' ')" "-1 1 2 3 4 5 6 6" rank
	assert_eq "$(cat "$NS/td/.revrank:0,10,20,30,40,50,60,70" | paste -sd' ')" \
		"6 5 4 3 2 1 0 -1" revrank
	# Kvrocks's quantile: index 3 of 6 falls between 30 and 40
	assert_eq "$(cat "$NS/td/.quantile:0,0.5,1" | paste -sd' ')" "10 35 60" quantile
	assert_eq "$(cat "$NS/td/.byrank:0,1,6" | paste -sd' ')" "10 20 inf" byrank
	assert_eq "$(cat "$NS/td/.byrevrank:0,6" | paste -sd' ')" "60 -inf" byrevrank
	assert_eq "$(cat "$NS/td/.cdf:5,35,65" | paste -sd' ')" "0 0.5 1" cdf
	assert_eq "$(cat "$NS/td/.trimmed-mean:0..1")" 35 "trimmed mean"
	assert_eq "$(cat "$NS/td/.min") $(cat "$NS/td/.max")" "10 60" "min max"
	assert_size "$NS/td/.quantile:0,0.5,1" 9
	assert_eq "$(ls -A "$NS/td" | paste -sd' ')" "buffer state" "listing"
	# a view is read-only; a bad spec is EINVAL
	run errno_of 'os.open(a[0], os.O_WRONLY)' "$NS/td/.min"
	assert_eq "$output" EACCES
	for bad in .quantile:2 .quantile:x .byrank:-1 .trimmed-mean:0.5..0.2 .cdf:; do
		run errno_of 'open(a[0]).read()' "$NS/td/$bad"
		assert_eq "$output" EINVAL "$bad"
	done
}

@test "an empty t-digest answers nan, and rank -2" {
	mktd "$NS/td"
	assert_eq "$(cat "$NS/td/.min") $(cat "$NS/td/.quantile:0.5") $(cat "$NS/td/.rank:1")" \
		"nan nan -2" "empty answers"
}

@test "past the capacity the buffer merges into centroids (Kvrocks's rule)" {
	mkdir "$NS/td"
	setfattr -n user.kvfs.tdigest.compression -v 10 "$NS/td" # capacity 70
	seq 1 70 >>"$NS/td/.add"
	grep -qx "unmerged_nodes 70" "$NS/td/state"
	# min and max follow every add, merged or not (Kvrocks's TDigest::Add)
	grep -qx "min 1" "$NS/td/state"
	grep -qx "max 70" "$NS/td/state"
	echo 71 >>"$NS/td/.add"
	assert_eq "$(ls "$NS/td" | paste -sd' ')" "centroids state" "listing"
	# an independent model of the k1 merger: (3.5, 6), (15, 17), ...
	assert_eq "$(head -2 "$NS/td/centroids" | paste -sd' ')" "3.5 6 15 17" "centroids"
	grep -qx "merge_times 1" "$NS/td/state"
	grep -qx "min 1" "$NS/td/state"
	grep -qx "max 71" "$NS/td/state"
}

@test "TDIGEST.ADD 1 2.5: the buffer record holds two sortable doubles (ldb)" {
	mktd "$NS/td"
	printf '1\n2.5\n' >>"$NS/td/.add"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex td)"
	[[ $output =~ ^8C0000000000000000([0-9A-F]{16})0000000000000000(.*)$ ]]
	version=${BASH_REMATCH[1]}
	# unmerged 2, merged 0, total weight 2, merged weight 0, observations 2
	assert_eq "${BASH_REMATCH[2]:16:64}" \
		"0000000000000002000000000000000000000000000000020000000000000000" "counters"
	assert_eq "${BASH_REMATCH[2]:112:16}" 0000000000000002 "observations"
	run ldb_value default "${NS_HEX}00000002$(hexof td)${version}00"
	assert_eq "$output" BFF0000000000000C004000000000000 "buffer"
}

@test ".reset empties the digest and keeps the compression; .merge adds other digests" {
	mkdir "$NS/a" "$NS/b"
	setfattr -n user.kvfs.tdigest.compression -v 50 "$NS/a"
	setfattr -n user.kvfs.type -v tdigest "$NS/b"
	seq 1 10 >>"$NS/a/.add"
	seq 11 20 >>"$NS/b/.add"
	echo b >>"$NS/a/.merge"
	grep -qx "observations 20" "$NS/a/.info"
	assert_eq "$(cat "$NS/a/.max")" 20 "max after merge"
	assert_eq "$(wc -l <"$NS/a/centroids")" 20 "centroids"
	echo >>"$NS/a/.reset"
	assert_eq "$(ls -A "$NS/a")" "" "listing after reset"
	grep -qx "compression 50" "$NS/a/.info"
	# a missing source: ENOENT, nothing changes
	seq 1 3 >>"$NS/a/.add"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"nokey\n")' \
		"$NS/a/.merge"
	assert_eq "$output" ENOENT
	grep -qx "observations 3" "$NS/a/.info"
}

@test "writing buffer, centroids and state replaces that part; bad content is EINVAL and changes nothing" {
	mktd "$NS/td"
	printf '%s\n' 3 1 2 >"$NS/td/buffer"
	grep -qx "unmerged_nodes 3" "$NS/td/state"
	printf '1 2\n5 3\n' >"$NS/td/centroids"
	grep -qx "total_weight 8" "$NS/td/state"
	before=$(cat "$NS/td/state")
	# a non-number fails at the write
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_TRUNC); os.write(fd, b"1 1\nx 2\n")' \
		"$NS/td/centroids"
	assert_eq "$output" EINVAL
	# means going down fail when the file is stored (close)
	run errno_of 'fd = os.open(a[0], os.O_WRONLY); os.write(fd, b"5 1\n1 1\n"); os.close(fd)' \
		"$NS/td/centroids"
	assert_eq "$output" EINVAL
	grep -q "centroid 2 has a mean below the one before" "$KVFS_LOG"
	# a state whose counters do not match the key
	run errno_of 'fd = os.open(a[0], os.O_WRONLY); os.write(fd, a[1].encode()); os.close(fd)' \
		"$NS/td/state" "$(sed 's/^total_weight 8$/total_weight 9/' <<<"$before")"
	assert_eq "$output" EINVAL
	# min and max are the state's own
	sed 's/^min .*/min -7/' <<<"$before" >"$NS/td/state"
	grep -qx "min -7" "$NS/td/state"
}

@test "rm of each part empties it; rmdir then deletes the key" {
	mktd "$NS/td"
	seq 1 5 >>"$NS/td/.add"
	run rmdir "$NS/td"
	[ "$status" -ne 0 ]
	rm -r "$NS/td"
	[ ! -e "$NS/td" ]
	run errno_of 'os.unlink(a[0])' "$NS/x/.add"
	assert_eq "$output" ENOENT
}

@test "an input cannot be removed (EACCES); a name that is no part is EINVAL" {
	mktd "$NS/td"
	run errno_of 'os.unlink(a[0])' "$NS/td/.add"
	assert_eq "$output" EACCES
	run errno_of 'open(a[0], "w").close()' "$NS/td/other"
	assert_eq "$output" EINVAL
}

@test "rsync -aX out and back restores the identical state (ldb), buffer and centroids both" {
	mkdir "$NS/td"
	setfattr -n user.kvfs.tdigest.compression -v 20 "$NS/td" # capacity 130
	seq 1 1000 | awk '{ print ($1 * 7919) % 1000 / 7 }' >>"$NS/td/.add"
	seq 1 50 >>"$NS/td/.add" # a buffer beside the centroids
	assert_eq "$(ls "$NS/td" | paste -sd' ')" "buffer centroids state" "listing"
	plain=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$plain/"
	assert_eq "$(ls "$plain/td" | paste -sd' ')" "buffer centroids state" "copied files"
	mkdir "$KVFS_MNT/two"
	rsync -aX "$plain/" "$KVFS_MNT/two/"
	assert_eq "$(getfattr --only-values -n user.kvfs.tdigest.compression "$KVFS_MNT/two/td")" \
		20 "compression"
	assert_eq "$(cat "$KVFS_MNT/two/td/.quantile:0.1,0.5,0.99")" \
		"$(cat "$NS/td/.quantile:0.1,0.5,0.99")" "answers"
	kvfs_unmount
	a=$(sketch_state td)
	b=$(sketch_state td two)
	[ "$(wc -l <<<"$a")" -gt 10 ]
	assert_eq "$b" "$a" "stored state"
}

@test "a second rsync -aX after more samples carries every changed part (mtime is the last change's)" {
	mktd "$NS/td"
	seq 1 5 >>"$NS/td/.add"
	plain=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$plain/"
	mkdir "$KVFS_MNT/two"
	rsync -aX "$plain/" "$KVFS_MNT/two/"
	t1=$(stat -c %Y "$NS/td/state")
	sleep 1.1 # rsync compares whole seconds, as on any disk
	echo 6 >>"$NS/td/.add" # state keeps its size: only the mtime tells
	[ "$(stat -c %Y "$NS/td/state")" != "$t1" ]
	rsync -aX "$NS/" "$plain/"
	rsync -aX "$plain/" "$KVFS_MNT/two/"
	assert_eq "$(cat "$KVFS_MNT/two/td/state")" "$(cat "$NS/td/state")" "state"
	assert_eq "$(cat "$KVFS_MNT/two/td/buffer")" "$(cat "$NS/td/buffer")" "buffer"
}

@test ".merge takes key names as the tree spells them; a source of another type is EMEDIUMTYPE" {
	mktd "$NS/td"
	mktd "$NS/a%2Fb" # the key a/b
	seq 1 4 >>"$NS/a%2Fb/.add"
	printf 'a%%2Fb\n\n' >>"$NS/td/.merge"
	grep -qx "observations 4" "$NS/td/.info"
	echo x >"$NS/str"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"a%2Fb\nstr\n")' \
		"$NS/td/.merge"
	assert_eq "$output" EMEDIUMTYPE
	grep -q ".merge: a source key is not a t-digest" "$KVFS_LOG"
	grep -qx "observations 4" "$NS/td/.info"
}

@test "a part whose times were set (touch, rsync restoring it) still shows a later change" {
	mktd "$NS/td"
	seq 1 5 >>"$NS/td/.add"
	touch -d 2001-02-03 "$NS/td/state"
	assert_eq "$(stat -c %Y "$NS/td/state")" "$(date -d 2001-02-03 +%s)" "touched"
	echo 6 >>"$NS/td/.add"
	[ "$(stat -c %Y "$NS/td/state")" -ge "$(($(date +%s) - 5))" ]
	kvfs_remount
	[ "$(stat -c %Y "$NS/td/state")" -ge "$(($(date +%s) - 10))" ]
}
