#!/usr/bin/env bats
# List keys are directories of elements named by position (docs/mapping.md
# section 12): appending by writing position n, replacing, negative
# positions, rm and the renumbering after it, names padded so that byte
# order is list order, scratch files and renames onto positions, rm -r,
# conversion from a hash, and the stored bytes (ldb).

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# mklist PATH ELEMENT...: an empty list, then each element appended.
mklist() {
	local d=$1 i=0 e
	shift
	mkdir "$d"
	setfattr -n user.kvfs.type -v list "$d"
	for e in "$@"; do
		printf '%s' "$e" >"$d/$i"
		i=$((i + 1))
	done
}

# The elements of list directory $1 in listing order, one per line.
elements() {
	local f
	for f in $(ls -U "$1"); do
		cat "$1/$f"
		echo
	done
}

@test "mkdir and user.kvfs.type=list make an empty list that survives a remount" {
	mkdir "$NS/l"
	setfattr -n user.kvfs.type -v list "$NS/l"
	assert_eq "$(kvfs_type "$NS/l")" list "type"
	assert_eq "$(ls -A "$NS/l")" "" "elements"
	kvfs_remount
	assert_eq "$(kvfs_type "$NS/l")" list "type after remount"
}

@test "writing position n appends; ls -U lists positions in list order" {
	mklist "$NS/l" a b c
	assert_eq "$(ls -U "$NS/l" | paste -sd' ')" "0 1 2" "names"
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a b c" "elements"
	assert_size "$NS/l/1" 1
	run stat -c %s "$NS/l"
	assert_eq "$output" 3 "directory size = length"
	kvfs_remount
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a b c" "elements after remount"
}

@test "past 10 elements names are zero-padded so byte order is list order" {
	mklist "$NS/l" $(seq 0 11)
	assert_eq "$(ls "$NS/l" | paste -sd' ')" "00 01 02 03 04 05 06 07 08 09 10 11" "sorted names"
	assert_eq "$(ls -U "$NS/l" | paste -sd' ')" "$(ls "$NS/l" | paste -sd' ')" "readdir order"
	assert_eq "$(for f in "$NS"/l/*; do cat "$f"; echo; done | paste -sd' ')" \
		"$(seq 0 11 | paste -sd' ')" "glob order"
	# any spelling of a position reaches it
	assert_bytes "$NS/l/7" 7
	assert_bytes "$NS/l/007" 7
}

@test "negative positions count from the end and are not listed" {
	mklist "$NS/l" a b c
	assert_bytes "$NS/l/-1" c
	assert_bytes "$NS/l/-3" a
	run errno_of 'open(a[0], "rb")' "$NS/l/-4"
	assert_eq "$output" ENOENT
	assert_eq "$(ls -A "$NS/l" | paste -sd' ')" "0 1 2" "names"
	# -1 follows the list as it grows
	printf d >"$NS/l/3"
	assert_bytes "$NS/l/-1" d
}

@test "writing an existing position replaces the element" {
	mklist "$NS/l" a b c
	echo BEE >"$NS/l/1"
	assert_bytes "$NS/l/1" $'BEE\n'
	assert_size "$NS/l/1" 4
	printf Z >"$NS/l/-1"
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a BEE  Z" "elements"
	run stat -c %s "$NS/l"
	assert_eq "$output" 3 "length unchanged"
}

@test "creating a position past the end fails with EINVAL and changes nothing" {
	mklist "$NS/l" a b
	run errno_of 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/l/3"
	assert_eq "$output" EINVAL
	run errno_of 'os.open(a[0], os.O_WRONLY | os.O_CREAT)' "$NS/l/-3"
	assert_eq "$output" EINVAL
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a b" "elements"
	grep -q "past the end of a list of 2" "$KVFS_LOG"
}

@test "rm of a position removes it and the later elements move down" {
	mklist "$NS/l" a b c d e
	# cached names and sizes of the later positions must not go stale
	assert_bytes "$NS/l/3" d
	assert_size "$NS/l/4" 1
	rm "$NS/l/1"
	assert_eq "$(ls -U "$NS/l" | paste -sd' ')" "0 1 2 3" "names"
	assert_bytes "$NS/l/1" c
	assert_bytes "$NS/l/3" e
	run errno_of 'open(a[0], "rb")' "$NS/l/4"
	assert_eq "$output" ENOENT
	rm "$NS/l/-1"
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a c d" "elements"
	kvfs_remount
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a c d" "elements after remount"
}

@test "a file open on a position keeps reading what it opened after a shift" {
	mklist "$NS/l" aa bb cc
	run python3 -c '
import os, sys
d = sys.argv[1]
with open(d + "/2") as f:
    os.unlink(d + "/0")
    print(open(d + "/1").read(), f.read())
' "$NS/l"
	[ "$status" -eq 0 ]
	assert_eq "$output" "cc cc" "the new position 1, then the open file"
}

@test "crossing 10 elements renames every position; old spellings still resolve" {
	mklist "$NS/l" $(seq 0 9)
	assert_bytes "$NS/l/9" 9
	printf 10 >"$NS/l/10"
	assert_eq "$(ls -U "$NS/l" | head -2 | paste -sd' ')" "00 01" "new names"
	assert_bytes "$NS/l/9" 9
	assert_bytes "$NS/l/09" 9
	rm "$NS/l/00"
	assert_eq "$(ls -U "$NS/l" | paste -sd' ')" "$(seq 0 9 | paste -sd' ')" "narrow again"
	assert_bytes "$NS/l/0" 1
}

@test "removing the last element leaves an empty list; rmdir removes it" {
	mklist "$NS/l" a
	rm "$NS/l/0"
	assert_eq "$(kvfs_type "$NS/l")" list "type"
	assert_eq "$(ls -A "$NS/l")" "" "elements"
	rmdir "$NS/l"
	[ ! -e "$NS/l" ]
}

@test "rmdir of a non-empty list fails with ENOTEMPTY" {
	mklist "$NS/l" a
	run errno_of 'os.rmdir(a[0])' "$NS/l"
	assert_eq "$output" ENOTEMPTY
	assert_bytes "$NS/l/0" a
}

@test "rm -r removes a list of 1,200 elements (positions stay put while it works)" {
	mkdir "$NS/l"
	setfattr -n user.kvfs.type -v list "$NS/l"
	for i in $(seq 0 1199); do echo "$i" >"$NS/l/$i"; done
	assert_eq "$(ls "$NS/l" | wc -l)" 1200 "elements"
	rm -r "$NS/l"
	[ ! -e "$NS/l" ]
}

@test "while the directory is open a removal leaves a gap, closed at the last close" {
	mklist "$NS/l" a b c d
	run python3 -c '
import os, sys, time
d = sys.argv[1]
fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY)
os.unlink(d + "/1")
print(" ".join(sorted(os.listdir(d))), open(d + "/2").read())
os.close(fd)
# The kernel sends RELEASEDIR in the background: give it time to arrive
# before the next opendir (otherwise that opendir still sees it open).
time.sleep(0.3)
print(" ".join(sorted(os.listdir(d))), open(d + "/1").read())
' "$NS/l"
	[ "$status" -eq 0 ]
	assert_eq "$output" $'0 2 3 c\n0 1 2 c' "names while open, then after"
}

@test "rm l/* (a shell glob: list, close, then remove) removes every element" {
	mklist "$NS/l" $(seq 0 24)
	rm "$NS"/l/*
	assert_eq "$(ls -A "$NS/l" | wc -l)" 0 "elements left"
	[ -d "$NS/l" ]
	assert_eq "$(kvfs_type "$NS/l")" list
	mklist "$NS/m" a b c d e
	for f in "$NS"/m/[13]; do rm "$f"; done
	assert_eq "$(elements "$NS/m" | paste -sd' ')" "a c e" "every other element"
}

@test "a listing's numbering for removals ends after a second without one" {
	mklist "$NS/l" a b c d
	ls "$NS/l" >/dev/null
	rm "$NS/l/1"
	# still the listing's numbering: 1 is a gap, 2 is still c
	[ ! -e "$NS/l/1" ]
	assert_bytes "$NS/l/2" c
	sleep 1.2
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a c d" "after the window"
	assert_bytes "$NS/l/1" c
	# a removal with no listing before it renumbers at once
	sleep 1.2
	rm "$NS/l/0"
	assert_bytes "$NS/l/0" c
}

@test "scratch files: never stored or listed; a rename onto position n appends" {
	mklist "$NS/l" a
	printf b >"$NS/l/.1.AbC123"
	assert_bytes "$NS/l/.1.AbC123" b
	assert_eq "$(ls -A "$NS/l" | paste -sd' ')" "0" "names"
	mv "$NS/l/.1.AbC123" "$NS/l/1"
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a b" "elements"
	[ ! -e "$NS/l/.1.AbC123" ]
	printf A >"$NS/l/sedAbCtmp"
	mv "$NS/l/sedAbCtmp" "$NS/l/0"
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "A b" "replaced"
	printf x >"$NS/l/.junk.XyZ123"
	run errno_of 'os.rename(a[0], a[1])' "$NS/l/.junk.XyZ123" "$NS/l/5"
	assert_eq "$output" EINVAL
	# nor onto a name that is no position and no scratch name
	run errno_of 'os.rename(a[0], a[1])' "$NS/l/.junk.XyZ123" "$NS/l/junk"
	assert_eq "$output" EINVAL
	rm "$NS/l/.junk.XyZ123"
	# any other name is refused at create (99-discover.bats)
	run errno_of 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT))' "$NS/l/junk"
	assert_eq "$output" EINVAL
	kvfs_unmount
	# no scratch name anywhere in the database
	! ldb_scan default | grep -qi "$(hexof junk)"
	! ldb_scan metadata | grep -qi "$(hexof AbCtmp)"
}

@test "sed -i edits an element in place" {
	mklist "$NS/l" a hello c
	sed -i s/hello/world/ "$NS/l/1"
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a world c" "elements"
	assert_eq "$(ls -A "$NS/l" | paste -sd' ')" "0 1 2" "no debris"
}

@test "renaming one position onto another is EXDEV (mv copies, then removes)" {
	mklist "$NS/l" a b c
	run errno_of 'os.rename(a[0], a[1])' "$NS/l/0" "$NS/l/2"
	assert_eq "$output" EXDEV
	assert_eq "$(elements "$NS/l" | paste -sd' ')" "a b c" "unchanged"
}

@test "a non-empty hash whose fields are 0..n-1 converts to a list in position order" {
	mkdir "$NS/h"
	for i in $(seq 0 11); do printf "v$i" >"$NS/h/$i"; done
	setfattr -n user.kvfs.type -v list "$NS/h"
	assert_eq "$(kvfs_type "$NS/h")" list "type"
	assert_eq "$(elements "$NS/h" | paste -sd' ')" "$(seq 0 11 | sed 's/^/v/' | paste -sd' ')" \
		"elements"
}

@test "a hash with a field that is no position stays a hash (EINVAL)" {
	mkdir "$NS/h"
	printf a >"$NS/h/0"
	printf b >"$NS/h/name"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"list")' "$NS/h"
	assert_eq "$output" EINVAL
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
	assert_bytes "$NS/h/name" b
	# a gap in the positions too
	rm "$NS/h/name"
	printf c >"$NS/h/2"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"list")' "$NS/h"
	assert_eq "$output" EINVAL
}

@test "a list of two: metadata 83 + expire + version + size 2 + head + tail, elements at head and head+1" {
	mklist "$NS/l" a b
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex l)"
	[ "$status" -eq 0 ]
	# head 0x7FFFFFFFFFFFFFFF (Kvrocks's initial index), tail head + 2
	[[ $output =~ ^830000000000000000([0-9A-F]{16})00000000000000027FFFFFFFFFFFFFFF8000000000000001$ ]] || {
		echo "metadata of l: $output" >&2
		false
	}
	version=${BASH_REMATCH[1]}
	run ldb_value default "${NS_HEX}000000016C${version}7FFFFFFFFFFFFFFF"
	assert_eq "$output" "$(hexof a)" "element at head"
	run ldb_value default "${NS_HEX}000000016C${version}8000000000000000"
	assert_eq "$output" "$(hexof b)" "element at head + 1"
}
