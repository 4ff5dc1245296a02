#!/usr/bin/env bats
# One version per listing and per read pass (docs/mapping.md, "Live
# databases and backups", "Consistent reads"): a listing of a key spread
# over several readdir calls, and a bitmap read in pieces, while another
# process changes the key (many entries in one batch, or the whole bitmap
# in one write), show the key as it was when the pass started, never a
# mix of the two.
# A python3 reader pauses between its first piece and the rest, runs the
# writer (mv -T, another process) and waits for it, then reads on: the
# interleaving is fixed, no timing decides the outcome.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# mkhash DIR PREFIX N: a hash DIR of N fields "PREFIX-<i>-<padding>"
# holding PREFIX (long names: a listing takes many readdir calls).
mkhash() {
	mkdir "$1"
	python3 -c '
import os, sys
d, p, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    with open(os.path.join(d, "%s-%05d-%s" % (p, i, "x" * 80)), "w") as f:
        f.write(p)
' "$1" "$2" "$3"
}

# listing_with PATH CMD...: list PATH with python's scandir, running CMD
# (another process, waited for) after the first entry; prints the number
# of names, then the names, one a line.
listing_with() {
	python3 -c '
import os, subprocess, sys
it = os.scandir(sys.argv[1])
names = [next(it).name]
subprocess.run(sys.argv[2:], check=True, stdout=subprocess.DEVNULL)
names += [e.name for e in it]
it.close()
print(len(names))
print("\n".join(names))
' "$@"
}

@test "a hash listed while another process removes and renames fields lists one version" {
	mkhash "$NS/h" a 600
	# Ahead of the reader: 100 fields removed; behind it, at the head: a
	# field renamed. Both happen after the first entry was read (glibc
	# fetched its first 32 KiB of entries, well short of 600 long names).
	pad=$(printf 'x%.0s' $(seq 80))
	run listing_with "$NS/h" sh -c '
for i in $(seq 400 499); do rm "$1/a-00$i-$2"; done
mv "$1/a-00550-$2" "$1/a-00000-0"' sh "$NS/h" "$pad"
	[ "$status" -eq 0 ]
	assert_eq "${lines[0]}" 600 "names listed"
	printf '%s\n' "${lines[@]:1}" | grep -qx "a-00450-$pad"
	printf '%s\n' "${lines[@]:1}" | grep -qx "a-00550-$pad"
	! printf '%s\n' "${lines[@]:1}" | grep -qx "a-00000-0"
	# The next listing is of the hash as it is now.
	assert_eq "$(ls "$NS/h" | wc -l)" 500 "the next listing"
}

@test "a list listed while another process pushes 1000 elements at its head lists one version" {
	mkdir "$NS/q"
	setfattr -n user.kvfs.type -v list "$NS/q"
	seq 1 3000 >>"$NS/q/.rpush"
	# An LPUSH renumbers every position: one batch.
	run listing_with "$NS/q" sh -c 'seq 1 1000 >>"$1/.lpush"' sh "$NS/q"
	[ "$status" -eq 0 ]
	assert_eq "${lines[0]}" 3000 "positions listed"
	assert_eq "$(printf '%s\n' "${lines[@]:1}" | sort -u | wc -l)" 3000 "distinct positions"
	assert_eq "$(ls "$NS/q" | wc -l)" 4000 "the next listing"
}

@test "a zset listed while another process pops 1000 members in one batch lists one version" {
	mkdir "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	python3 -c '
import os, sys
for i in range(3000):
    with open(os.path.join(sys.argv[1], "m%05d-%s" % (i, "y" * 80)), "w") as f:
        f.write(str(i))
' "$NS/z"
	run listing_with "$NS/z" cat "$NS/z/.zpopmin:1000"
	[ "$status" -eq 0 ]
	assert_eq "${lines[0]}" 3000 "members listed"
	assert_eq "$(printf '%s\n' "${lines[@]:1}" | sort -u | wc -l)" 3000 "distinct members"
	assert_eq "$(ls "$NS/z" | wc -l)" 2000 "the next listing"
}

# mkbitmap PATH BYTE KIB: a bitmap of KIB KiB, every byte BYTE (two hex
# digits), written in place (the daemon keeps no buffer of it: its reads
# go to the store).
mkbitmap() {
	touch "$1"
	setfattr -n user.kvfs.type -v bitmap "$1"
	fill "$1" "$2" "$3"
}

# fill PATH BYTE KIB: one write of KIB KiB of BYTE over the start of PATH,
# in place: one batch (a write of at most 128 KiB is one request).
fill() {
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
n = int(sys.argv[3]) << 10
assert os.write(fd, bytes.fromhex(sys.argv[2]) * n) == n
os.close(fd)
' "$@"
}

@test "a bitmap read in 4 KiB pieces while another process rewrites it whole in one write reads one version" {
	mkbitmap "$NS/bm" 0f 64
	run python3 -c '
import os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
data = [os.read(fd, 4096)]
subprocess.run(sys.argv[2:], check=True)
while True:
    b = os.read(fd, 4096)
    if not b:
        break
    data.append(b)
os.close(fd)
data = b"".join(data)
print(len(data), sorted(set(data)))
' "$NS/bm" python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY)
os.write(fd, b"\xf0" * 65536)
os.close(fd)
' "$NS/bm"
	[ "$status" -eq 0 ]
	assert_eq "$output" "65536 [15]" "bytes and their values in one pass"
	# The next open reads the new bytes.
	assert_eq "$(od -An -tx1 -j 65535 "$NS/bm" | tr -d ' ')" f0 "last byte after the write"
}

@test "dd bs=4k of a bitmap while another shell flips it whole reads one version every time" {
	mkbitmap "$NS/bm" 0f 64
	# The other shell: 200 flips, each one write of the whole bitmap.
	(
		for i in $(seq 1 200); do
			if [ $((i % 2)) -eq 0 ]; then b=0f; else b=f0; fi
			fill "$NS/bm" $b 64
		done
	) &
	writer=$!
	reads=0
	while kill -0 "$writer" 2>/dev/null; do
		dd if="$NS/bm" bs=4k status=none >"$BATS_TEST_TMPDIR/read"
		run python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); print(len(d), len(set(d)))' "$BATS_TEST_TMPDIR/read"
		assert_eq "$output" "65536 1" "read $reads: length and number of distinct bytes"
		reads=$((reads + 1))
	done
	wait "$writer"
	[ "$reads" -gt 0 ]
}
