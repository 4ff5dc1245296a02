#!/usr/bin/env bats
# Readdir offsets are stable positions (docs/architecture.md section 7):
# every directory shape with more than 10,000 entries, listed with
# getdents64 and small buffers (so the kernel resumes from offsets in the
# middle of kvfs's replies), with seeks back to older offsets, and while
# other entries come and go, lists each entry exactly once, as many as the
# key's metadata counts.

load helper

N=10001
GETDENTS=$BATS_TEST_DIRNAME/../tools/getdents.py

setup() {
	kvfs_setup
	kvfs_mount
}

# list_check DIR WANT: DIR lists WANT entries, each once, with buffers of
# 64, 256 and 4096 bytes, and with seeks back to an older offset.
list_check() {
	local dir=$1 want=$2 b out
	for b in 4096 256 64; do
		out=$(python3 "$GETDENTS" -b "$b" "$dir") || {
			echo "buffer $b: $out" >&2
			return 1
		}
		assert_eq "$out" "entries $want distinct $want duplicates 0" "listing with a $b-byte buffer"
	done
	out=$(python3 "$GETDENTS" --seek -b 512 "$dir") || {
		echo "seeking: $out" >&2
		return 1
	}
	assert_eq "$out" "entries $want distinct $want duplicates 0" "listing with seeks back"
}

# st_size of a key's directory: its number of entries as stored.
stored_size() {
	stat -c %s "$1"
}

# make_files DIR N FMT [DATA]: create files DIR/(FMT % i) for i < N, each
# holding DATA (may use %d).
make_files() {
	python3 -c '
import os, sys
d, n, fmt = sys.argv[1], int(sys.argv[2]), sys.argv[3]
data = sys.argv[4] if len(sys.argv) > 4 else ""
for i in range(n):
    fd = os.open(os.path.join(d, fmt % i), os.O_WRONLY | os.O_CREAT, 0o644)
    if data:
        os.write(fd, (data % i if "%" in data else data).encode())
    os.close(fd)
' "$@"
}

@test "a namespace of 10,001 keys lists each key once, as many as stored" {
	make_files "$NS" "$N" 'k%05d' v
	kvfs_unmount
	local stored
	stored=$(ldb_scan metadata | grep -c "^0x${NS_HEX}")
	assert_eq "$stored" "$N" "keys stored"
	kvfs_mount
	list_check "$NS" "$stored"
}

@test "a hash of 10,001 fields lists each field once" {
	mkdir "$NS/h"
	make_files "$NS/h" "$N" 'f%d' 'value %d'
	assert_eq "$(stored_size "$NS/h")" "$N" "fields stored"
	list_check "$NS/h" "$N"
}

@test "a list of 10,001 elements lists each position once" {
	mkdir "$NS/l"
	setfattr -n user.kvfs.type -v list "$NS/l"
	make_files "$NS/l" "$N" '%d' 'e%d'
	assert_eq "$(stored_size "$NS/l")" "$N" "elements stored"
	list_check "$NS/l" "$N"
}

@test "a set of 10,001 members lists each member once" {
	mkdir "$NS/s"
	setfattr -n user.kvfs.type -v set "$NS/s"
	make_files "$NS/s" "$N" 'm%d'
	assert_eq "$(stored_size "$NS/s")" "$N" "members stored"
	list_check "$NS/s" "$N"
}

@test "a zset of 10,001 members lists each member once" {
	mkdir "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	# scores repeat, so members of one score resume by name
	python3 -c '
import os, sys
d, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(d, "m%d" % i), "w") as f:
        f.write("%d" % (i % 7))
' "$NS/z" "$N"
	assert_eq "$(stored_size "$NS/z")" "$N" "members stored"
	list_check "$NS/z" "$N"
}

@test "a sortedint of 10,001 ids lists each id once" {
	mkdir "$NS/si"
	setfattr -n user.kvfs.type -v sortedint "$NS/si"
	make_files "$NS/si" "$N" '%d'
	assert_eq "$(stored_size "$NS/si")" "$N" "ids stored"
	list_check "$NS/si" "$N"
}

@test "a stream of 10,001 entries lists each entry once" {
	mkdir "$NS/st"
	setfattr -n user.kvfs.type -v stream "$NS/st"
	python3 -c 'import sys; sys.stdout.write("".join("f\t%d\n" % i for i in range(int(sys.argv[1]))))' \
		"$N" >>"$NS/st/.add"
	# a stream's st_size is 0: its length from .info (XINFO)
	assert_eq "$(grep '^length' "$NS/st/.info" | cut -f2)" "$N" "entries stored"
	list_check "$NS/st" "$N"
}

@test "a time series of 10,001 chunks lists each chunk once" {
	mkdir "$NS/ts"
	setfattr -n user.kvfs.ts.chunk_size -v 1 "$NS/ts"
	python3 -c 'import sys; sys.stdout.write("".join("%d,%d\n" % (1000 + i, i) for i in range(int(sys.argv[1]))))' \
		"$N" >>"$NS/ts/.add"
	assert_eq "$(grep '^chunkCount ' "$NS/ts/.info")" "chunkCount $N" "chunks stored"
	list_check "$NS/ts" "$N"
}

@test "a bloom filter of 10,001 filters lists chain and each filter.I once" {
	mkdir "$NS/b"
	setfattr -n user.kvfs.bloom.capacity -v 1 "$NS/b"
	setfattr -n user.kvfs.bloom.expansion -v 1 "$NS/b"
	seq 1 "$N" >>"$NS/b/.add"
	assert_eq "$(grep '^filters ' "$NS/b/chain")" "filters $N" "filters stored"
	list_check "$NS/b" $((N + 1))
	python3 "$GETDENTS" -b 256 --names "$BATS_TEST_TMPDIR/names" "$NS/b"
	assert_eq "$(grep -c '^filter\.' "$BATS_TEST_TMPDIR/names")" "$N" "filter.I names"
	assert_eq "$(sed -n '1p;$p' "$BATS_TEST_TMPDIR/names" | tr '\n' ' ')" "chain filter.$((N - 1)) " \
		"first and last names (number order)"
}

@test "hyperloglog, t-digest and top-k list each state file once with a tiny buffer" {
	local t want
	for t in hyperloglog tdigest topk; do
		mkdir "$NS/$t"
		setfattr -n user.kvfs.type -v "$t" "$NS/$t"
	done
	seq 1 100 >>"$NS/hyperloglog/.add"
	seq 1 100 >>"$NS/tdigest/.add"
	seq 1 100 >>"$NS/topk/.add"
	for t in hyperloglog tdigest topk; do
		want=$(ls -A "$NS/$t" | wc -l)
		[ "$want" -ge 1 ]
		for b in 32 64; do
			assert_eq "$(python3 "$GETDENTS" -b "$b" "$NS/$t")" \
				"entries $want distinct $want duplicates 0" "$t with a $b-byte buffer"
		done
	done
}

# python3 -c "$churn_py" DIR FMT STOP: until the file STOP exists, create
# names FMT % i, i counting up, and remove each three later, so entries
# come and go while another process lists DIR.
churn_py='
import os, sys, time
d, fmt, stop = sys.argv[1], sys.argv[2], sys.argv[3]
i = 0
while not os.path.exists(stop):
    p = os.path.join(d, fmt % i)
    os.close(os.open(p, os.O_WRONLY | os.O_CREAT, 0o644))
    if i >= 3:
        os.unlink(os.path.join(d, fmt % (i - 3)))
    i += 1
'

# listing_under_churn DIR WANT_FMT N CHURN_FMT: list DIR with a small buffer
# while names CHURN_FMT come and go; the N names WANT_FMT % i, present
# throughout, must each be listed exactly once.
listing_under_churn() {
	local dir=$1 want_fmt=$2 n=$3 churn_fmt=$4 pid rc=0
	python3 -c "$churn_py" "$dir" "$churn_fmt" "$BATS_TEST_TMPDIR/stop" &
	pid=$!
	python3 "$GETDENTS" -n -b 200 --names "$BATS_TEST_TMPDIR/listed" "$dir" >/dev/null || rc=1
	python3 "$GETDENTS" -n --seek -b 600 --names "$BATS_TEST_TMPDIR/listed2" "$dir" >/dev/null || rc=1
	touch "$BATS_TEST_TMPDIR/stop"
	wait "$pid" || rc=1
	[ "$rc" -eq 0 ]
	python3 -c '
import sys
want_fmt, n = sys.argv[1], int(sys.argv[2])
want = {(want_fmt % i).encode() for i in range(n)}
for path in sys.argv[3:]:
    names = open(path, "rb").read().split(b"\n")[:-1]
    seen = {}
    for nm in names:
        if nm in want:
            seen[nm] = seen.get(nm, 0) + 1
    missing = len(want) - len(seen)
    twice = sum(1 for c in seen.values() if c > 1)
    if missing or twice:
        sys.exit("%s: %d of %d missing, %d listed more than once" % (path, missing, len(want), twice))
' "$want_fmt" "$n" "$BATS_TEST_TMPDIR/listed" "$BATS_TEST_TMPDIR/listed2"
}

@test "a hash listed while other fields come and go lists each lasting field once" {
	mkdir "$NS/h"
	make_files "$NS/h" "$N" 'f%05d' v
	# the churned names sort first, so they shift every later position
	listing_under_churn "$NS/h" 'f%05d' "$N" 'a%07d'
}

@test "a namespace listed while other keys come and go lists each lasting key once" {
	make_files "$NS" "$N" 'k%05d' v
	listing_under_churn "$NS" 'k%05d' "$N" 'a%07d'
}

@test "a sortedint listed while other ids come and go lists each lasting id once" {
	mkdir "$NS/si"
	setfattr -n user.kvfs.type -v sortedint "$NS/si"
	make_files "$NS/si" "$N" '1%05d'
	# ids below every lasting one
	listing_under_churn "$NS/si" '1%05d' "$N" '%d'
}

@test "-o cluster: a key stored under a slot its name does not hash to lists once; ls -f ends" {
	kvfs_remount -o cluster
	echo x >"$NS/b"
	kvfs_unmount
	# key "a" hashes to slot 15495 (3C87); plant it under the last slot
	local ns_hex
	ns_hex=$(nskey_hex "")
	ldb_put metadata "${ns_hex}3FFF$(hexof a)" 81000000000000000076
	kvfs_mount -o cluster
	run timeout 10 ls -f "$NS"
	[ "$status" -eq 0 ]
	assert_eq "$(printf '%s\n' "$output" | sort | tr '\n' ' ')" ". .. a b " "names listed"
	assert_eq "$(python3 "$GETDENTS" -b 64 "$NS")" "entries 2 distinct 2 duplicates 0" "tiny buffer"
}
