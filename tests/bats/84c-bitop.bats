#!/usr/bin/env bats
# BITOP into a new key as a name of the namespace, `cat 'DEST:bitop:OP:K1,K2'`
# (docs/mapping.md, "Counting and finding bits"): the answers and DEST's
# bytes against a real redis-server running the same BITOPs on the same
# bits, DEST's records with ldb, the refusals, and shells racing BITOPs
# against writers of the sources.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mkbitmap() {
	touch "$1"
	setfattr -n user.kvfs.type -v bitmap "$1"
}

# setbyte FILE OFFSET HEX: write one byte in place (one batch, like SETRANGE).
setbyte() {
	printf "\\x$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# fragments_of KEY: "SUB VALUE" (hex) of every record of bitmap KEY's
# version in the default column family, ordered by SUB; then its metadata
# "meta VALUE". Unmounted.
fragments_of() {
	local meta version prefix
	meta=$(ldb_value metadata "$(nskey_hex "$1")") || return 1
	version=${meta:18:16}
	prefix="0x${NS_HEX}$(printf '%08X' "${#1}")$(hexof "$1")${version}"
	ldb_scan default | awk -v p="$prefix" '
		substr($1, 1, length(p)) == p {
			v = $3; sub(/^0x/, "", v)
			print substr($1, length(p) + 1), v
		}' | LC_ALL=C sort
	echo "meta $meta"
}

@test "BITOP AND, OR, XOR, NOT answer and store what redis-server does for the same bits" {
	redis_start
	python3 - "$RSOCK" "$NS" <<'PY'
import os, random, socket, subprocess, sys
sock, ns = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
f = s.makefile('rb')
def cmd(*args):
    args = [a if isinstance(a, bytes) else str(a).encode() for a in args]
    out = b'*%d\r\n' % len(args)
    for a in args:
        out += b'$%d\r\n%s\r\n' % (len(a), a)
    s.sendall(out)
    line = f.readline()
    if line[:1] == b'$':
        n = int(line[1:])
        return None if n < 0 else f.read(n + 2)[:-2]
    if line[:1] == b'-':
        raise SystemExit('redis: ' + line.decode())
    return line[1:].strip()

rnd = random.Random(17)
def chunk(n):
    return bytes(rnd.randrange(256) for _ in range(n))
# Sparse patterns: runs of random bytes with gaps of whole fragments, a
# bitmap of zeros only (a size and no fragment), different lengths.
patterns = {
    'a': [(0, chunk(10)), (3000, b'\xff')],
    'b': [(500, chunk(2000))],
    'c': [(70000, b'\x81')],
    'e': [(1020, chunk(10)), (9000, chunk(1200))],
    'z': [(0, bytes(5))],
}
for key, runs in patterns.items():
    p = os.path.join(ns, key)
    open(p, 'w').close()
    os.setxattr(p, 'user.kvfs.type', b'bitmap')
    fd = os.open(p, os.O_WRONLY)
    for off, data in runs:
        os.pwrite(fd, data, off)
        cmd('SETRANGE', key, off, data)
    os.close(fd)
# dest keys of another type before: a hash and a string are replaced
os.mkdir(os.path.join(ns, 'h'))
open(os.path.join(ns, 'h', 'f'), 'w').write('v')
cmd('HSET', 'h', 'f', 'v')

ops = [
    ('d1', 'and', 'a,b'), ('d2', 'or', 'a,b,c'), ('d3', 'xor', 'a,b,c,e'),
    ('d4', 'xor', 'a,a'), ('d5', 'not', 'a'), ('d6', 'not', 'c'), ('d7', 'not', 'z'),
    ('d8', 'and', 'a,nokey'), ('d9', 'or', 'nokey'), ('d10', 'not', 'nokey'),
    ('d11', 'or', 'a,z'), ('d12', 'and', 'b,e'), ('d13', 'xor', 'z,b'),
    ('d14', 'OR', 'e,c'), ('h', 'or', 'b,e'),
    # dest among its sources, then run again over its own result
    ('d2', 'xor', 'd2,e,a'), ('d2', 'and', 'b,d2'), ('d5', 'not', 'd5'),
    # every source missing: dest deleted, answer 0
    ('d1', 'and', 'nokey,nokey2'), ('d6', 'not', 'nokey'),
]
bad = 0
for dest, op, srcs in ops:
    name = '%s:bitop:%s:%s' % (dest, op, srcs)
    got = subprocess.run(['cat', os.path.join(ns, name)], capture_output=True, check=True).stdout
    want = cmd('BITOP', op, dest, *srcs.split(','))
    if got != want + b'\n':
        print('%s: kvfs %r, redis %r' % (name, got, want)); bad += 1
    p = os.path.join(ns, dest)
    rv = cmd('GET', dest)
    kv = subprocess.run(['cat', p], capture_output=True).stdout if os.path.exists(p) else None
    if rv != kv:
        print('%s: %s differs: kvfs %s bytes, redis %s' % (name, dest,
              None if kv is None else len(kv), None if rv is None else len(rv))); bad += 1
    if kv is not None and os.getxattr(p, 'user.kvfs.type') != b'bitmap':
        print('%s: %s is no bitmap' % (name, dest)); bad += 1
sys.exit(1 if bad else 0)
PY
	assert_eq "$(LC_ALL=C ls "$NS" | paste -sd' ')" "a b c d11 d12 d13 d14 d2 d3 d4 d5 d7 d8 e h z" \
		"keys: those deleted or never made by an empty result are not there"
}

@test "DEST's records are Kvrocks's: fragments where the sources have one, zeros too; NOT whole but the last" {
	mkbitmap "$NS/a"
	setbyte "$NS/a" 0 80    # fragment "0": 01 (LSB-first)
	setbyte "$NS/a" 5000 01 # fragment "4096": byte 904 = 80, 905 bytes
	mkbitmap "$NS/b"
	setbyte "$NS/b" 1 ff # fragment "0": 00 FF
	mkbitmap "$NS/c"
	setbyte "$NS/c" 0 40 # fragment "0": 02
	setfattr -n user.kvfs.ttl -v 100000 "$NS/b"
	assert_eq "$(cat "$NS/d:bitop:or:a,b")" 5001 "OR answer"
	assert_eq "$(cat "$NS/x:bitop:and:b,c")" 2 "AND answer"
	assert_eq "$(cat "$NS/b:bitop:not:c")" 1 "NOT answer, into a source of the others"
	assert_eq "$(cat "$NS/n:bitop:not:a")" 5001 "NOT answer"
	kvfs_unmount
	zeros=$(printf '0%.0s' $(seq 1808))
	ones=$(printf 'F%.0s' $(seq 2048))
	run fragments_of d
	assert_eq "${lines[0]}" "30 01FF" "OR: fragment 0, as long as b's"
	assert_eq "${lines[1]}" "34303936 ${zeros}80" "OR: fragment 4096, a's alone"
	assert_eq "${#lines[@]}" 3 "OR: two fragments"
	assert_eq "${lines[2]:0:23}" "meta 860000000000000000" "v1 bitmap, no expiry"
	assert_eq "${lines[2]:39}" "0000000000001389" "size 5001"
	run fragments_of x
	assert_eq "${lines[0]}" "30 0000" "AND: a fragment of zeros is written"
	assert_eq "${#lines[@]}" 2 "AND: one fragment"
	run fragments_of b
	assert_eq "${lines[0]}" "30 FD" "NOT: the size, 1 byte"
	assert_eq "${lines[1]:39}" "0000000000000001" "size 1"
	assert_eq "${lines[1]:0:23}" "meta 860000000000000000" "b's expiry dropped"
	run fragments_of n
	assert_eq "${#lines[@]}" 6 "NOT: fragments 0, 1024, 2048, 3072, 4096"
	assert_eq "${lines[0]}" "30 FE${ones:2}" "NOT: fragment 0, whole"
	assert_eq "${lines[1]}" "31303234 ${ones}" "NOT: fragment 1024, a hole: ones"
	assert_eq "${lines[4]}" "34303936 ${ones:0:1808}7F" "NOT: the last ends at the size"
}

@test "a source of another type is EMEDIUMTYPE, a bad name EINVAL, writing EACCES; each logged, nothing changes" {
	mkbitmap "$NS/a"
	setbyte "$NS/a" 0 0f
	echo hello >"$NS/s"
	mkdir "$NS/h"
	echo v >"$NS/h/f"
	cat "$NS/a" >"$BATS_TEST_TMPDIR/a.before"
	run errno_of 'open(a[0]).read()' "$NS/d:bitop:or:a,s"
	assert_eq "$output" EMEDIUMTYPE "a string source (Kvrocks: WRONGTYPE)"
	run errno_of 'open(a[0]).read()' "$NS/a:bitop:and:a,h"
	assert_eq "$output" EMEDIUMTYPE "a hash source"
	run errno_of 'open(a[0]).read()' "$NS/d:bitop:nand:a"
	assert_eq "$output" EINVAL "an unknown operation"
	run errno_of 'open(a[0]).read()' "$NS/d:bitop:not:a,a"
	assert_eq "$output" EINVAL "NOT of two"
	run errno_of 'open(a[0]).read()' "$NS/d:bitop:or:a,,a"
	assert_eq "$output" EINVAL "an empty item"
	run errno_of 'open(a[0]).read()' "$NS/d:bitop:or"
	assert_eq "$output" EINVAL "no sources"
	run errno_of 'open(a[0]).read()' "$NS/d:bitop"
	assert_eq "$output" ENOENT "no operation: no such name"
	run errno_of 'open(a[0], "w")' "$NS/d:bitop:or:a"
	assert_eq "$output" EACCES "writing"
	grep -q "source 's' is a string; BITOP reads bitmaps" "$KVFS_LOG"
	grep -q "source 'h' is a hash; BITOP reads bitmaps" "$KVFS_LOG"
	grep -q "'d:bitop:nand:a': write KEY:bitcount" "$KVFS_LOG"
	grep -q "BITOP NOT takes exactly one source, not 2" "$KVFS_LOG"
	assert_eq "$(ls "$NS" | paste -sd' ')" "a h s" "no d made"
	cmp "$NS/a" "$BATS_TEST_TMPDIR/a.before"
	assert_eq "$(cat "$NS/s")" hello "the string is unchanged"
	assert_eq "$(cat "$NS/h/f")" v "the hash is unchanged"
}

@test "BITOP names are never listed; a source may hold ',' (escaped) and ':'; each open runs anew" {
	mkbitmap "$NS/a,b"
	setbyte "$NS/a,b" 0 f0
	mkbitmap "$NS/u:1"
	setbyte "$NS/u:1" 1 0f
	# in a path a ',' of an item is %252C (docs/mapping.md, "Item lists")
	assert_eq "$(cat "$NS/d:bitop:or:a%252Cb,u:1")" 2 "answer"
	assert_eq "$(xxd -p "$NS/d")" f00f "d"
	setbyte "$NS/a,b" 0 01
	assert_eq "$(cat "$NS/d:bitop:or:a%252Cb")" 1 "each open runs again"
	assert_eq "$(xxd -p "$NS/d")" 01 "d shows the new result"
	assert_eq "$(LC_ALL=C ls -a "$NS" | paste -sd' ')" ". .. a,b d u:1" "listing"
	find "$NS" >/dev/null
	assert_eq "$(stat -c '%s %A' "$NS/d:bitop:or:a%252Cb")" "0 -r--r--r--" "stat"
	assert_eq "$(xxd -p "$NS/d")" 01 "stat, ls and find ran nothing"
}

# bitop_check FILE: DEST's bytes in FILE are one state of the sources
# s0..s3 of the race below: for each source i, the bytes it set (offsets
# (4k + i) * 53, in order) form a prefix, and the length is the longest
# source's.
bitop_check() {
	python3 - "$1" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
n = 0
for i in range(4):
    offs = [(4 * k + i) * 53 for k in range(60)]
    got = [o < len(d) and d[o] == 0xff for o in offs]
    p = got.index(False) if False in got else len(got)
    if any(got[p:]):
        sys.exit('source %d: not a prefix: %s' % (i, got))
    n = max(n, offs[p - 1] + 1 if p else 1)
other = set(range(len(d))) - {(4 * k + i) * 53 for k in range(60) for i in range(4)}
if any(d[o] for o in other):
    sys.exit('bytes no source set')
if len(d) != n:
    sys.exit('length %d, the sources say %d' % (len(d), n))
PY
}

@test "shells racing BITOP OR into one DEST (and crosswise) against writers of the sources end consistent" {
	for i in 0 1 2 3; do
		mkbitmap "$NS/s$i"
		setbyte "$NS/s$i" $((i * 53)) ff
	done
	mkbitmap "$NS/x"
	mkbitmap "$NS/y"
	pids=()
	for i in 0 1 2 3; do
		(for k in $(seq 1 59); do setbyte "$NS/s$i" $(((4 * k + i) * 53)) ff; done) &
		pids+=($!)
	done
	for w in 1 2 3; do
		(for _ in $(seq 1 40); do
			n=$(cat "$NS/d:bitop:or:s0,s1,s2,s3") || exit 1
			case $n in '' | *[!0-9]*) exit 1 ;; esac
		done) &
		pids+=($!)
	done
	# crosswise: x from y and y from x, and d among its own sources
	(for _ in $(seq 1 30); do cat "$NS/x:bitop:or:y,s0" "$NS/d:bitop:or:d,s1,s2" >/dev/null || exit 1; done) &
	pids+=($!)
	(for _ in $(seq 1 30); do cat "$NS/y:bitop:or:s3,x" >/dev/null || exit 1; done) &
	pids+=($!)
	# readers of DEST: every state they see is whole
	(for j in $(seq 1 40); do
		cat "$NS/d" >"$BATS_TEST_TMPDIR/seen.$j" 2>/dev/null || true
	done) &
	pids+=($!)
	for p in "${pids[@]}"; do wait "$p"; done
	for f in "$BATS_TEST_TMPDIR"/seen.*; do
		[ -s "$f" ] || continue
		bitop_check "$f"
	done
	assert_eq "$(cat "$NS/d:bitop:or:s0,s1,s2,s3")" $(((4 * 59 + 3) * 53 + 1)) "final length"
	cat "$NS/d" >"$BATS_TEST_TMPDIR/final"
	bitop_check "$BATS_TEST_TMPDIR/final"
	assert_eq "$(cat "$NS/d:bitcount")" $((240 * 8)) "every bit set"
}
