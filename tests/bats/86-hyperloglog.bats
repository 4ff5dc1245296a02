#!/usr/bin/env bats
# HyperLogLog keys (docs/mapping.md sections 21, 22): a directory whose listed
# file `registers` is Redis's dense register array; `.add` takes items a
# line each, `.count` answers PFCOUNT, `.merge` PFMERGEs named keys.
# Registers and counts are compared with a real redis-server fed the same
# items; stored bytes with ldb; the rsync -aX round trip.

load helper

setup() {
	kvfs_setup
	kvfs_mount
	ITEMS=$BATS_TEST_TMPDIR/items
}

mkhll() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v hyperloglog "$1"
}

# redis_pfadd KEY FILE: PFADD KEY of every line of FILE (binary-safe, in
# batches); then write Redis's registers (GET minus the 16-byte header)
# to FILE.redis and print PFCOUNT KEY.
redis_pfadd() {
	python3 - "$RSOCK" "$1" "$2" <<'PY'
import socket, sys
sock, key, path = sys.argv[1], sys.argv[2].encode(), sys.argv[3]
s = socket.socket(socket.AF_UNIX)
s.connect(sock)
f = s.makefile('rb')
def cmd(*args):
    out = b'*%d\r\n' % len(args)
    for a in args:
        out += b'$%d\r\n%s\r\n' % (len(a), a)
    return out
def reply():
    line = f.readline()
    if line[:1] == b'$':
        n = int(line[1:])
        data = f.read(n + 2)[:-2]
        return data
    if line[:1] == b'-':
        raise SystemExit(line.decode())
    return line[1:].strip()
lines = open(path, 'rb').read().split(b'\n')
if lines and lines[-1] == b'':
    lines.pop()
for i in range(0, len(lines), 1000):
    s.sendall(cmd(b'PFADD', key, *lines[i:i + 1000]))
    reply()
s.sendall(cmd(b'GET', key))
v = reply()
assert v[:4] == b'HYLL' and v[4] == 0, 'not a dense HLL'
open(path + '.redis', 'wb').write(v[16:])
s.sendall(cmd(b'PFCOUNT', key))
print(int(reply()))
PY
}

@test "mkdir and user.kvfs.type make an empty hyperloglog: zero registers, count 0" {
	mkhll "$NS/h"
	assert_eq "$(kvfs_type "$NS/h")" hyperloglog "type"
	assert_eq "$(ls -A "$NS/h")" registers "listed entries"
	assert_size "$NS/h/registers" 12288
	assert_eq "$(tr -d '\0' <"$NS/h/registers" | wc -c)" 0 "all zero"
	assert_eq "$(cat "$NS/h/.count")" 0 ".count"
	kvfs_unmount
	# an emptyable type: a real metadata record 8B, no expiry, size 0, encode_type 0
	run ldb_value metadata "$(nskey_hex h)"
	[ "$status" -eq 0 ]
	[[ $output =~ ^8B0000000000000000[0-9A-F]{16}000000000000000000$ ]]
}

@test "100,000 lines piped into .add give Redis's registers and PFCOUNT exactly" {
	redis_start --hll-sparse-max-bytes 0
	seq 1 100000 | sed 's/^/visitor-/' >"$ITEMS"
	mkhll "$NS/visits"
	cut -f1 "$ITEMS" >>"$NS/visits/.add"
	want=$(redis_pfadd visits "$ITEMS")
	cmp "$NS/visits/registers" "$ITEMS.redis"
	assert_eq "$(cat "$NS/visits/.count")" "$want" "PFCOUNT"
	kvfs_remount
	cmp "$NS/visits/registers" "$ITEMS.redis"
}

@test "small sets and odd items (empty line, spaces, bytes) match Redis too" {
	redis_start --hll-sparse-max-bytes 0
	printf 'a\n\nwith space\n\xff\xfe\ttab\na\nlast' >"$ITEMS"
	mkhll "$NS/s"
	cat "$ITEMS" >>"$NS/s/.add"
	want=$(redis_pfadd s "$ITEMS")
	assert_eq "$want" 5 "Redis's count"
	cmp "$NS/s/registers" "$ITEMS.redis"
	assert_eq "$(cat "$NS/s/.count")" 5 ".count"
}

@test ".add feeds a line split across two writes once, and a last line without newline at close" {
	redis_start --hll-sparse-max-bytes 0
	mkhll "$NS/h"
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b"ab")
os.write(fd, b"c\nde")
os.write(fd, b"f\ngh")
os.close(fd)
' "$NS/h/.add"
	printf 'abc\ndef\ngh\n' >"$ITEMS"
	redis_pfadd h "$ITEMS" >/dev/null
	cmp "$NS/h/registers" "$ITEMS.redis"
	assert_eq "$(cat "$NS/h/.count")" 3 "count"
}

@test "writing a line completes it at once; .add reads as empty and cannot be removed" {
	mkhll "$NS/h"
	run python3 -c '
import os, sys
fd = os.open(sys.argv[1] + "/.add", os.O_WRONLY | os.O_APPEND)
os.write(fd, b"x\ny\npartial")
print(open(sys.argv[1] + "/.count").read().strip())
os.close(fd)
print(open(sys.argv[1] + "/.count").read().strip())
' "$NS/h"
	assert_eq "$output" "2
3" "counts while open and after close"
	assert_eq "$(cat "$NS/h/.add" | wc -c)" 0 ".add reads empty"
	run errno_of 'os.unlink(a[0])' "$NS/h/.add"
	assert_eq "$output" EACCES "rm .add"
	run errno_of 'os.unlink(a[0])' "$NS/h/.count"
	assert_eq "$output" EACCES "rm .count"
	run errno_of 'open(a[0], "w").write("1")' "$NS/h/.count"
	assert_eq "$output" EACCES "write .count"
}

@test "views and inputs are not listed; a name that is no state file cannot be created" {
	mkhll "$NS/h"
	echo a >>"$NS/h/.add"
	assert_eq "$(ls -A "$NS/h")" registers "listing"
	[ -f "$NS/h/.count" ]
	[ -f "$NS/h/.merge" ]
	run errno_of 'open(a[0], "w")' "$NS/h/other"
	assert_eq "$output" EINVAL "create"
	assert_eq "$(ls -A "$NS/h")" registers "listing after"
}

@test "ldb: PFADD a writes only segment \"12\", 768 bytes with register 12711 = 2" {
	mkhll "$NS/h"
	echo a >>"$NS/h/.add"
	kvfs_unmount
	run ldb_scan default
	[ "$status" -eq 0 ]
	# the one sub-key: ns | key_len 1 | "h" | version | "12"
	assert_eq "$(printf '%s\n' "$output" | grep -c "^0x${NS_HEX}0000000168")" 1 "sub-keys"
	line=$(printf '%s\n' "$output" | grep "^0x${NS_HEX}0000000168")
	[[ $line =~ ^0x${NS_HEX}0000000168[0-9A-F]{16}3132\ :\ 0x([0-9A-F]*)$ ]]
	val=${BASH_REMATCH[1]}
	assert_eq "${#val}" 1536 "768 bytes"
	# register 12711 - 12288 = 423 of segment 12: bit 2538 = byte 317 bit 2
	# value 2 -> bit 3 of byte 317 = 0x08; every other byte zero
	want=$(python3 -c 'b = bytearray(768); b[317] = 0x08; print(b.hex().upper())')
	assert_eq "$val" "$want" "segment bytes"
}

@test "cp of a 12288-byte file onto registers replaces the state; a wrong size is EINVAL, nothing changed" {
	mkhll "$NS/a"
	mkhll "$NS/b"
	seq 1 1000 >>"$NS/a/.add"
	echo one >>"$NS/b/.add"
	cp "$NS/a/registers" "$BATS_TEST_TMPDIR/regs"
	cp "$BATS_TEST_TMPDIR/regs" "$NS/b/registers"
	cmp "$NS/a/registers" "$NS/b/registers"
	assert_eq "$(cat "$NS/b/.count")" "$(cat "$NS/a/.count")" "count"
	head -c 100 /dev/zero >"$BATS_TEST_TMPDIR/short"
	run cp "$BATS_TEST_TMPDIR/short" "$NS/b/registers"
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	cmp "$NS/a/registers" "$NS/b/registers"
	grep -q "registers are 12288 bytes" "$KVFS_LOG"
}

@test ".merge PFMERGEs the keys named a line each; a wrong-type source refuses the write whole" {
	mkhll "$NS/a"
	mkhll "$NS/b"
	mkhll "$NS/u"
	seq 1 500 >>"$NS/a/.add"
	seq 251 750 >>"$NS/b/.add"
	seq 1 750 >>"$NS/u/.add"
	mkhll "$NS/m"
	printf 'a\nb\n' >>"$NS/m/.merge"
	cmp "$NS/m/registers" "$NS/u/registers"
	echo str >"$NS/str"
	mkhll "$NS/m2"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_APPEND); os.write(fd, b"a\nstr\n")' \
		"$NS/m2/.merge"
	assert_eq "$output" EMEDIUMTYPE "errno"
	assert_eq "$(cat "$NS/m2/.count")" 0 "nothing merged"
	grep -q "a source key is not a hyperloglog" "$KVFS_LOG"
}

@test "a refused write keeps the partial line written before it" {
	mkhll "$NS/a"
	seq 1 100 >>"$NS/a/.add"
	echo str >"$NS/str"
	mkhll "$NS/m"
	run python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b"a")
try:
    os.write(fd, b"\nstr\n")
except OSError as e:
    print(e.errno)
print(open(sys.argv[2]).read().strip())
os.write(fd, b"\n")
print(open(sys.argv[2]).read().strip())
os.close(fd)
' "$NS/m/.merge" "$NS/m/.count"
	assert_eq "$output" "$(python3 -c 'import errno; print(errno.EMEDIUMTYPE)')
0
$(cat "$NS/a/.count")" "errno, count after the refusal, after the newline"
	cmp "$NS/a/registers" "$NS/m/registers"
}

@test "wrong type and missing key: .count of a hash or a string is no file" {
	mkdir "$NS/hash"
	echo str >"$NS/str"
	run cat "$NS/hash/.count"
	[ "$status" -ne 0 ]
	run errno_of 'open(a[0])' "$NS/str/.count"
	assert_eq "$output" ENOTDIR "under a string"
	run errno_of 'open(a[0])' "$NS/missing/.count"
	assert_eq "$output" ENOENT "missing key"
	# in a hash, .add is just a field name
	echo x >>"$NS/hash/.add"
	assert_eq "$(cat "$NS/hash/.add")" x "a hash field"
}

@test "rm -r removes a hyperloglog" {
	mkhll "$NS/h"
	seq 1 10 >>"$NS/h/.add"
	rm -r "$NS/h"
	[ ! -e "$NS/h" ]
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex h)"
	[ "$status" -ne 0 ]
}

@test "rsync -aX out and back into an empty namespace restores identical registers" {
	mkhll "$NS/h"
	seq 1 20000 >>"$NS/h/.add"
	mkhll "$NS/empty"
	rsync -aX "$NS/" "$BATS_TEST_TMPDIR/plain/"
	assert_eq "$(getfattr --absolute-names --only-values -n user.kvfs.type \
		"$BATS_TEST_TMPDIR/plain/h")" hyperloglog "type in the copy"
	assert_eq "$(ls -A "$BATS_TEST_TMPDIR/plain/h")" registers "copied files"
	mkdir "$KVFS_MNT/ns2"
	rsync -aX "$BATS_TEST_TMPDIR/plain/" "$KVFS_MNT/ns2/"
	kvfs_remount
	for k in h empty; do
		assert_eq "$(kvfs_type "$KVFS_MNT/ns2/$k")" hyperloglog "type of $k"
		cmp "$NS/$k/registers" "$KVFS_MNT/ns2/$k/registers"
		assert_eq "$(cat "$KVFS_MNT/ns2/$k/.count")" "$(cat "$NS/$k/.count")" "count of $k"
	done
	# no rsync temp file (.registers.XXXXXX) reached the database
	kvfs_unmount
	! ldb_scan metadata | grep -q "$(hexof .registers.)"
	! ldb_scan default | grep -q "$(hexof .registers.)"
}

@test "cp -a and cp -r plus user.kvfs.type bring a hyperloglog in (a hash converted)" {
	mkhll "$NS/h"
	seq 1 3000 >>"$NS/h/.add"
	rsync -aX "$NS/" "$BATS_TEST_TMPDIR/plain/"
	mkdir "$KVFS_MNT/a" "$KVFS_MNT/r"
	cp -a "$BATS_TEST_TMPDIR/plain/." "$KVFS_MNT/a/"
	assert_eq "$(kvfs_type "$KVFS_MNT/a/h")" hyperloglog "type after cp -a"
	cmp "$NS/h/registers" "$KVFS_MNT/a/h/registers"
	cp -r "$BATS_TEST_TMPDIR/plain/h" "$KVFS_MNT/r/h"
	assert_eq "$(kvfs_type "$KVFS_MNT/r/h")" hash "cp -r makes a hash"
	setfattr -n user.kvfs.type -v hyperloglog "$KVFS_MNT/r/h"
	cmp "$NS/h/registers" "$KVFS_MNT/r/h/registers"
	assert_eq "$(cat "$KVFS_MNT/r/h/.count")" "$(cat "$NS/h/.count")" "count"
}

@test "a hash that is no hyperloglog keeps its type: EINVAL" {
	mkdir "$NS/x"
	head -c 12288 /dev/zero >"$NS/x/registers"
	echo v >"$NS/x/other"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"hyperloglog")' "$NS/x"
	assert_eq "$output" EINVAL "other field"
	mkdir "$NS/y"
	head -c 100 /dev/zero >"$NS/y/registers"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"hyperloglog")' "$NS/y"
	assert_eq "$output" EINVAL "short registers"
	assert_eq "$(kvfs_type "$NS/x") $(kvfs_type "$NS/y")" "hash hash" "types"
	assert_eq "$(ls "$NS/x" | paste -sd' ')" "other registers" "fields kept"
}

@test "the mtime of registers is the time of the last change (a second rsync sees it)" {
	mkdir "$NS/h"
	setfattr -n user.kvfs.type -v hyperloglog "$NS/h"
	empty=$(stat -c %Y "$NS/h/registers")
	sleep 1.1 # rsync compares whole seconds, as on any disk
	echo a >>"$NS/h/.add"
	added=$(stat -c %Y "$NS/h/registers")
	[ "$added" -gt "$empty" ]
	sleep 1.1
	rm "$NS/h/registers"
	[ "$(stat -c %Y "$NS/h/registers")" -gt "$added" ]
}
