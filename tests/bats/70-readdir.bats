#!/usr/bin/env bats
# Streaming readdir of a large namespace: 100,000 string keys, made once
# per file by one python3 process, then listed by ls, find and python.

load helper

NKEYS=100000

# The names are k000000 .. k099999.
expected_names() {
	python3 -c 'import sys; print("\n".join("k%06d" % i for i in range(int(sys.argv[1]))))' "$NKEYS"
}

make_big_db() {
	kvfs_mount || return 1
	python3 -c '
import os, sys
ns, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    fd = os.open(os.path.join(ns, "k%06d" % i), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    os.write(fd, b"v")
    os.close(fd)
' "$NS" "$NKEYS" || return 1
	kvfs_unmount || return 1
}

setup_file() {
	[ -z "$(kvfs_skip_reason)" ] || return 0 # every test skips in setup
	kvfs_require
	kvfs_use_dir "$BATS_FILE_TMPDIR"
	if ! make_big_db; then
		kvfs_teardown
		echo "could not create $NKEYS keys" >&2
		return 1
	fi
	export READDIR_DB=$KVFS_DB
}

teardown_file() {
	[ -z "${KVFS_PID:-}" ] || kvfs_teardown
}

setup() {
	kvfs_setup
	KVFS_DB=$READDIR_DB
	kvfs_mount
}

@test "ls -f lists 100,000 keys plus . and .." {
	assert_eq "$(ls -f "$NS" | wc -l)" $((NKEYS + 2)) "entries listed by ls -f"
}

@test "ls -f lists every key exactly once" {
	ls -f "$NS" >"$BATS_TEST_TMPDIR/listed"
	assert_eq "$(sort "$BATS_TEST_TMPDIR/listed" | uniq -d | head -n 5)" "" "names listed twice"
	grep -vxE '\.|\.\.' "$BATS_TEST_TMPDIR/listed" | sort >"$BATS_TEST_TMPDIR/names"
	expected_names >"$BATS_TEST_TMPDIR/expected"
	diff "$BATS_TEST_TMPDIR/expected" "$BATS_TEST_TMPDIR/names" >"$BATS_TEST_TMPDIR/diff" || {
		echo "listing differs from the keys created:" >&2
		head -n 20 "$BATS_TEST_TMPDIR/diff" >&2
		false
	}
}

@test "find counts the same 100,000 regular files" {
	assert_eq "$(find "$NS" -mindepth 1 | wc -l)" "$NKEYS" "entries found"
	assert_eq "$(find "$NS" -mindepth 1 -type f | wc -l)" "$NKEYS" "regular files found"
}

@test "os.scandir reads each name exactly once" {
	python3 -c '
import os, sys
ns, n = sys.argv[1], int(sys.argv[2])
names = [e.name for e in os.scandir(ns)]
dups = len(names) - len(set(names))
want = {"k%06d" % i for i in range(n)}
missing = sorted(want - set(names))
extra = sorted(set(names) - want)
if dups or missing or extra:
    sys.exit("%d entries, %d duplicates, missing %s, unexpected %s"
             % (len(names), dups, missing[:5], extra[:5]))
' "$NS" "$NKEYS"
}

@test "seekdir to a telldir position replays the same names, rewinddir restarts" {
	python3 -c '
import ctypes, ctypes.util, os, sys

class Dirent(ctypes.Structure):  # struct dirent64, Linux
    _fields_ = [("d_ino", ctypes.c_uint64), ("d_off", ctypes.c_int64),
                ("d_reclen", ctypes.c_ushort), ("d_type", ctypes.c_ubyte),
                ("d_name", ctypes.c_char * 256)]

libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
libc.opendir.restype = ctypes.c_void_p
libc.opendir.argtypes = [ctypes.c_char_p]
libc.readdir64.restype = ctypes.POINTER(Dirent)
libc.readdir64.argtypes = [ctypes.c_void_p]
libc.telldir.restype = ctypes.c_long
libc.telldir.argtypes = [ctypes.c_void_p]
libc.seekdir.argtypes = [ctypes.c_void_p, ctypes.c_long]
libc.rewinddir.argtypes = [ctypes.c_void_p]
libc.closedir.argtypes = [ctypes.c_void_p]

d = libc.opendir(os.fsencode(sys.argv[1]))
if not d:
    sys.exit("opendir: " + os.strerror(ctypes.get_errno()))

def read(count=None):
    out = []
    while count is None or len(out) < count:
        ctypes.set_errno(0)
        p = libc.readdir64(d)
        if not p:
            if ctypes.get_errno():
                sys.exit("readdir: " + os.strerror(ctypes.get_errno()))
            break
        out.append(p.contents.d_name)
    return out

first = read(50000)
pos = libc.telldir(d)
after = read(1000)
rest = read()
libc.seekdir(d, pos)
again = read(1000)
if again != after:
    sys.exit("after seekdir: %r... expected %r..." % (again[:3], after[:3]))
libc.rewinddir(d)
whole = read()
libc.closedir(d)
if whole != first + after + rest:
    sys.exit("after rewinddir: %d entries, first pass had %d"
             % (len(whole), len(first + after + rest)))
if len(whole) != int(sys.argv[2]) + 2:
    sys.exit("%d entries, expected %d" % (len(whole), int(sys.argv[2]) + 2))
' "$NS" "$NKEYS"
}

@test "a key in the middle of the listing reads back" {
	assert_bytes "$NS/k050000" v
	assert_bytes "$NS/k099999" v
}
