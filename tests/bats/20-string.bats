#!/usr/bin/env bats
# String keys are regular files: whole and partial reads and writes,
# append, truncate, st_size, binary values, rm, mv, persistence.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

@test "echo > key creates a string and cat reads it back" {
	echo hello >"$NS/k"
	[ -f "$NS/k" ]
	assert_bytes "$NS/k" $'hello\n'
	assert_size "$NS/k" 6
}

@test "touch creates an empty string that survives a remount" {
	touch "$NS/e"
	assert_size "$NS/e" 0
	kvfs_remount
	[ -f "$NS/e" ]
	assert_size "$NS/e" 0
}

@test ">> appends" {
	printf abc >"$NS/k"
	printf def >>"$NS/k"
	assert_bytes "$NS/k" abcdef
	assert_size "$NS/k" 6
	echo g >>"$NS/k"
	assert_bytes "$NS/k" $'abcdefg\n'
	assert_size "$NS/k" 8
}

@test "> replaces the value with a shorter one" {
	printf 'a long value here' >"$NS/k"
	printf xy >"$NS/k"
	assert_bytes "$NS/k" xy
	assert_size "$NS/k" 2
}

@test "write at an offset (dd conv=notrunc) overwrites in place" {
	printf 0123456789 >"$NS/k"
	printf XY | dd of="$NS/k" bs=1 seek=3 conv=notrunc status=none
	assert_bytes "$NS/k" 012XY56789
	assert_size "$NS/k" 10
}

@test "write at an offset past the end fills the gap with zero bytes" {
	printf abc >"$NS/k"
	printf XY | dd of="$NS/k" bs=1 seek=6 conv=notrunc status=none
	assert_eq "$(xxd -p -u "$NS/k")" 6162630000005859 "hex of the value"
	assert_size "$NS/k" 8
}

@test "truncate grows a value with zero bytes" {
	printf abc >"$NS/k"
	truncate -s 6 "$NS/k"
	assert_size "$NS/k" 6
	assert_eq "$(xxd -p -u "$NS/k")" 616263000000 "hex of the value"
}

@test "truncate shrinks a value" {
	printf abcdef >"$NS/k"
	truncate -s 2 "$NS/k"
	assert_size "$NS/k" 2
	assert_bytes "$NS/k" ab
	truncate -s 0 "$NS/k"
	assert_size "$NS/k" 0
	assert_bytes "$NS/k" ""
	[ -f "$NS/k" ]
}

@test "truncate beyond 512 MiB fails with EFBIG and changes nothing" {
	printf abc >"$NS/k"
	run errno_of 'os.truncate(a[0], (512 << 20) + 1)' "$NS/k"
	assert_eq "$output" EFBIG "truncate to 512 MiB + 1"
	assert_size "$NS/k" 3
	assert_bytes "$NS/k" abc
}

@test "cp of a file over 512 MiB onto a key fails and keeps the old value" {
	printf old >"$NS/k"
	truncate -s 600M "$BATS_TEST_TMPDIR/big" # sparse: cp extends with ftruncate
	run cp "$BATS_TEST_TMPDIR/big" "$NS/k"
	[ "$status" -ne 0 ]
	[[ "$output" == *"File too large"* ]]
	assert_bytes "$NS/k" old
	kvfs_remount
	assert_bytes "$NS/k" old
}

@test "cp of a file over 512 MiB onto a new name creates no key" {
	truncate -s 600M "$BATS_TEST_TMPDIR/big"
	run cp "$BATS_TEST_TMPDIR/big" "$NS/new"
	[ "$status" -ne 0 ]
	assert_eq "$(ls -A "$NS")" "" "keys"
	kvfs_remount
	[ ! -e "$NS/new" ]
}

@test "a write past 512 MiB fails with EFBIG, so do later ones and the close; nothing is stored" {
	printf old >"$NS/k"
	run python3 -c '
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"new")
for what, f in (("pwrite", lambda: os.pwrite(fd, b"xy", (512 << 20) - 1)),
                ("write", lambda: os.write(fd, b"more")), ("close", lambda: os.close(fd))):
    try:
        f()
        print(what, "OK")
    except OSError as e:
        print(what, errno.errorcode[e.errno])
' "$NS/k"
	assert_eq "$output" $'pwrite EFBIG\nwrite EFBIG\nclose EFBIG'
	assert_bytes "$NS/k" old
	grep -q "'k' would pass 536870912 bytes" "$KVFS_LOG"
}

@test "a binary value with NUL bytes round-trips" {
	printf '\0a\0' >"$BATS_TEST_TMPDIR/v"
	cp "$BATS_TEST_TMPDIR/v" "$NS/k"
	cmp "$BATS_TEST_TMPDIR/v" "$NS/k"
	assert_size "$NS/k" 3
	kvfs_remount
	cmp "$BATS_TEST_TMPDIR/v" "$NS/k"
}

@test "a 3 MiB binary value written in many chunks round-trips" {
	head -c $((3 << 20)) /dev/urandom >"$BATS_TEST_TMPDIR/v"
	dd if="$BATS_TEST_TMPDIR/v" of="$NS/k" bs=4096 status=none
	assert_size "$NS/k" $((3 << 20))
	cmp "$BATS_TEST_TMPDIR/v" "$NS/k"
	kvfs_remount
	cmp "$BATS_TEST_TMPDIR/v" "$NS/k"
}

@test "a 40 MiB value (kept in a blob file) survives a flush and reads back at any offset" {
	head -c $((40 << 20)) /dev/urandom >"$BATS_TEST_TMPDIR/v"
	dd if="$BATS_TEST_TMPDIR/v" of="$NS/big" bs=1M status=none
	printf small >"$NS/after"
	kvfs_remount # the WAL replay at mount flushes the memtable
	ls "$KVFS_DB"/db/*.blob >/dev/null
	cmp "$BATS_TEST_TMPDIR/v" "$NS/big"
	assert_eq "$(dd if="$NS/big" bs=4096 skip=5000 count=1 status=none | xxd -p | head -c 32)" \
		"$(dd if="$BATS_TEST_TMPDIR/v" bs=4096 skip=5000 count=1 status=none | xxd -p | head -c 32)" "block 5000"
	assert_bytes "$NS/after" small
	# A value in a blob file is an ordinary record to any RocksDB reader.
	head -c $((100 << 10)) /dev/zero | tr '\0' z >"$NS/z"
	kvfs_unmount
	ldb --db="$(kvfs_rocksdb_dir)" --column_family=metadata compact >/dev/null
	ls "$KVFS_DB"/db/*.blob >/dev/null
	v=$(ldb_value metadata "$(nskey_hex z)")
	assert_eq "${#v}" $((2 * (9 + (100 << 10)))) "hex digits: flags, expire, value"
	assert_eq "${v:0:18}" 810000000000000000 "flags and no expiry"
	assert_eq "${v:18:8}" 7A7A7A7A "first value bytes"
}

@test "an open reader sees what another open file writes and commits" {
	printf old-value >"$NS/k"
	run python3 - "$NS/k" <<'PY'
import os, sys
r = os.open(sys.argv[1], os.O_RDONLY)
assert os.pread(r, 100, 0) == b"old-value"
w = os.open(sys.argv[1], os.O_WRONLY)
os.pwrite(w, b"NEW", 0)
os.fsync(w)
os.close(w)
# The kernel may serve the reader from its page cache; bypass it.
fd = os.open(sys.argv[1], os.O_RDONLY | os.O_DIRECT)
got = os.pread(fd, 4096, 0)
os.close(fd)
os.close(r)
print(got.decode())
PY
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	assert_eq "$output" NEW-value
	assert_bytes "$NS/k" NEW-value
}

@test "a write-only open that starts the value anew: a reader holding pages sees each write" {
	# Such opens (a new file, O_TRUNC) go around the page cache; the
	# kernel must still drop what an open reader cached of each range.
	printf old-value >"$NS/k"
	for f in "$NS/k" "$NS/new"; do
		run python3 - "$f" <<'PY'
import os, sys
p = sys.argv[1]
if os.path.exists(p):
    r = os.open(p, os.O_RDONLY)
    assert os.pread(r, 100, 0) == b"old-value"
    w = os.open(p, os.O_WRONLY | os.O_TRUNC)
else:
    w = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    r = os.open(p, os.O_RDONLY)
assert os.pread(r, 100, 0) == b"", "before the first write"
assert os.fstat(w).st_size == 0, "size before the first write"
os.write(w, b"aaaa")
assert os.pread(r, 100, 0) == b"aaaa", "after the first write"
os.pwrite(w, b"bbbb", 4)
os.pwrite(w, b"cc", 0)
got = os.pread(r, 100, 0)
assert got == b"ccaabbbb", got
os.close(w)
assert os.pread(r, 100, 0) == b"ccaabbbb", "after the close"
os.close(r)
PY
		[ "$status" -eq 0 ] || { echo "$f: $output"; false; }
		assert_bytes "$f" ccaabbbb
	done
}

@test "a file created for reading and writing can be mapped shared" {
	run python3 - "$NS/m" <<'PY'
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644)
os.write(fd, b"0123456789")
m = mmap.mmap(fd, 10)
m[0:2] = b"AB"
m.flush()
m.close()
os.close(fd)
PY
	[ "$status" -eq 0 ] || { echo "$output"; false; }
	assert_bytes "$NS/m" AB23456789
}

@test "reads at an offset return the right bytes" {
	printf 0123456789 >"$NS/k"
	assert_eq "$(dd if="$NS/k" bs=1 skip=4 count=3 status=none)" 456 "bytes 4..6"
	assert_eq "$(tail -c 2 "$NS/k")" 89 "last 2 bytes"
}

@test "rm deletes the key" {
	printf v >"$NS/k"
	printf w >"$NS/other"
	rm "$NS/k"
	[ ! -e "$NS/k" ]
	assert_eq "$(ls "$NS")" other "ls after rm"
	kvfs_remount
	[ ! -e "$NS/k" ]
}

@test "mv renames a key" {
	printf v >"$NS/a"
	mv "$NS/a" "$NS/b"
	[ ! -e "$NS/a" ]
	assert_bytes "$NS/b" v
	kvfs_remount
	[ ! -e "$NS/a" ]
	assert_bytes "$NS/b" v
}

@test "mv onto an existing key replaces it" {
	printf new >"$NS/a"
	printf 'old and longer' >"$NS/b"
	mv "$NS/a" "$NS/b"
	[ ! -e "$NS/a" ]
	assert_bytes "$NS/b" new
	assert_size "$NS/b" 3
	assert_eq "$(ls "$NS")" b "ls after mv"
	kvfs_remount
	assert_bytes "$NS/b" new
	assert_eq "$(ls "$NS")" b "ls after mv and remount"
}

@test "values persist across unmount and remount" {
	printf one >"$NS/k1"
	printf 'two\0bytes' >"$NS/k2"
	printf 'x%.0s' {1..1000} >"$NS/k3"
	kvfs_remount
	assert_bytes "$NS/k1" one
	assert_eq "$(xxd -p -u "$NS/k2")" 74776F006279746573 "hex of k2"
	assert_size "$NS/k3" 1000
	assert_eq "$(tr -d x <"$NS/k3")" "" "k3 is all x"
}

@test "user.kvfs.type of a string key is string" {
	printf v >"$NS/k"
	run kvfs_type "$NS/k"
	[ "$status" -eq 0 ]
	assert_eq "$output" string "user.kvfs.type"
}

@test "reading a missing key fails with ENOENT" {
	run cat "$NS/missing"
	[ "$status" -eq 1 ]
	[[ $output == *"No such file or directory"* ]]
	run errno_of 'open(a[0], "rb")' "$NS/missing"
	assert_eq "$output" ENOENT "open of a missing key"
}

@test "a string key is not a directory (ENOTDIR)" {
	printf v >"$NS/k"
	run errno_of 'open(a[0], "w")' "$NS/k/f"
	assert_eq "$output" ENOTDIR "create below a string"
	run errno_of 'os.rmdir(a[0])' "$NS/k"
	assert_eq "$output" ENOTDIR "rmdir of a string"
	assert_bytes "$NS/k" v
}

@test "a new string is stored at its first close: found at once, listed from the close" {
	# closed once by anyone (a flush), even empty: listed, though still open
	exec 7>"$NS/d"
	[ -f "$NS/d" ]
	assert_size "$NS/d" 0
	: >>"$NS/d"
	assert_eq "$(ls "$NS")" "d" "listing after one close of two"
	printf 'later' >&7
	exec 7>&-
	assert_bytes "$NS/d" later
	# while open and never closed: O_EXCL, mkdir and rmdir see the file
	exec 7>"$NS/n"
	assert_eq "$(errno_of 'os.close(os.open(a[0], os.O_CREAT | os.O_EXCL | os.O_WRONLY))' "$NS/n")" EEXIST "O_EXCL"
	assert_eq "$(errno_of 'os.mkdir(a[0])' "$NS/n")" EEXIST "mkdir"
	assert_eq "$(errno_of 'os.rmdir(a[0])' "$NS/n")" ENOTDIR "rmdir"
	printf 'x' >&7
	chmod 600 "$NS/n"
	setfattr -n user.note -v kept "$NS/n"
	touch -d '2001-02-03 04:05:06' "$NS/n"
	exec 7>&-
	# removed while open and never closed: nothing is stored
	exec 7>"$NS/gone"
	printf 'lost' >&7
	rm "$NS/gone"
	exec 7>&-
	# renamed while open: stored, then renamed, the data follows
	exec 7>"$NS/from"
	printf 'moved' >&7
	mv "$NS/from" "$NS/to"
	exec 7>&-
	# a namespace holding only a new file is not empty
	mkdir "$KVFS_MNT/ns2"
	exec 7>"$KVFS_MNT/ns2/f"
	assert_eq "$(errno_of 'os.rmdir(a[0])' "$KVFS_MNT/ns2")" ENOTEMPTY "rmdir of its namespace"
	exec 7>&-
	kvfs_remount
	assert_eq "$(ls "$NS" | tr '\n' ' ')" "d n to " "keys after a remount"
	assert_bytes "$NS/n" x
	assert_eq "$(stat -c %a "$NS/n")" 600 "mode set before the first close"
	assert_eq "$(getfattr --only-values -n user.note "$NS/n")" kept "xattr set before the first close"
	assert_eq "$(stat -c %Y "$NS/n")" "$(date -d '2001-02-03 04:05:06' +%s)" "mtime set before the first close"
	assert_bytes "$NS/to" moved
	assert_eq "$(ls "$KVFS_MNT/ns2")" f "the namespace's new file"
}

@test "a new string not closed yet shows the time it is being written, not the mount's" {
	sleep 2.2 # the mount is older than that
	exec 7>"$NS/w"
	printf 'abc' >&7
	local now m
	now=$(date +%s)
	m=$(stat -c %Y "$NS/w")
	exec 7>&-
	[ $((now - m)) -le 1 ] || {
		echo "mtime $m, now $now" >&2
		return 1
	}
}
