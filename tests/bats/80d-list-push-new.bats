#!/usr/bin/env bats
# The namespace's pushes (docs/mapping.md, "Pushes, inserts and moves"):
# `echo x >> 'NS/KEY:rpush'`, 'KEY:lpush', 'KEY:rpush0', 'KEY:lpush0' push
# onto list KEY as L/.rpush ... do, and make KEY when it is missing (RPUSH
# on a new key), in the push's batch. Another type is EMEDIUMTYPE; a key
# of that very name wins; the names are never listed.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# elems PATH: the elements in order, each as [bytes], on one line.
elems() {
	local f
	for f in "$1"/*; do
		[ -e "$f" ] || continue
		printf '[%s]' "$(cat "$f")"
	done
}

@test "a push to a missing key makes the list: ls and cat show it at once, even after a miss" {
	run ls "$NS/q"
	[ "$status" -ne 0 ] # the kernel may remember this miss
	[ ! -d "$NS/q" ]
	echo job >>"$NS/q:rpush"
	assert_eq "$(ls "$NS/q")" 0 "listed at once"
	assert_eq "$(cat "$NS/q/0")" job "the element"
	assert_eq "$(kvfs_type "$NS/q")" list "a list"
	assert_eq "$(ls -A "$NS" | paste -sd' ')" q "only the list, no key named q:rpush"
	ls "$NS/q" >/dev/null # the kernel knows q and its size now
	printf 'b\nc\n' >>"$NS/q:rpush"
	assert_eq "$(stat -c %s "$NS/q")" 3 "the size the kernel shows is new"
	assert_eq "$(cat "$NS/q/-1")" c "the last one"
	kvfs_remount
	assert_eq "$(elems "$NS/q")" "[job][b][c]" "stored"
}

@test "the list is made as Kvrocks writes it (ldb): RPUSH q a b on a new key" {
	printf 'a\nb\n' >>"$NS/q:rpush"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex q)"
	[ "$status" -eq 0 ]
	# 83 | expire 0 | version | size 2 | head 7FFF..FF | tail 8000..01
	[[ $output =~ ^830000000000000000([0-9A-F]{16})00000000000000027FFFFFFFFFFFFFFF8000000000000001$ ]] || {
		echo "metadata value of q: $output" >&2
		false
	}
	version=${BASH_REMATCH[1]}
	run ldb_value default "${NS_HEX}0000000171${version}7FFFFFFFFFFFFFFF"
	assert_eq "$output" 61 "element 0"
	run ldb_value default "${NS_HEX}0000000171${version}8000000000000000"
	assert_eq "$output" 62 "element 1"
	assert_eq "$(ldb_scan metadata | grep -c "^0x$NS_HEX")" 1 "one key in the namespace"
	assert_eq "$(ldb_scan default | grep -c "^0x$NS_HEX")" 2 "two elements"
}

@test "LPUSH: lines go to the head, the last line first, as LPUSH q x y" {
	env printf 'x\ny\n' >>"$NS/q:lpush"
	assert_eq "$(elems "$NS/q")" "[y][x]" "one write"
	echo z >>"$NS/q:lpush"
	assert_eq "$(elems "$NS/q")" "[z][y][x]" "the head"
	echo t >>"$NS/q:rpush"
	assert_eq "$(elems "$NS/q")" "[z][y][x][t]" "and the tail"
}

@test "> pushes as >> does, once; an empty line is an element; a last line without newline goes at the close" {
	echo x >"$NS/q:rpush"
	assert_eq "$(elems "$NS/q")" "[x]" "> pushes"
	printf 'a\n\nb' >"$NS/q:rpush"
	assert_eq "$(elems "$NS/q")" "[x][a][][b]" "empty line, last line"
	: >"$NS/q:rpush"
	truncate -s 0 "$NS/q:rpush"
	assert_eq "$(ls "$NS/q" | wc -l)" 4 "an empty write or a truncate pushes nothing"
	assert_eq "$(ls -A "$NS" | paste -sd' ')" q "no string key named q:rpush"
	kvfs_remount
	assert_eq "$(ls -A "$NS" | paste -sd' ')" q "nor after a remount"
	assert_eq "$(elems "$NS/q")" "[x][a][][b]" "stored"
}

@test "a write is pushed once: several writes on one open, flushes of dup'd descriptors" {
	# (bats keeps fd 3 for itself: the shell of a script)
	bash -c 'exec 3>>"$1"; echo a >&3; echo b >&3; exec 3>&-' sh "$NS/q:rpush"
	assert_eq "$(elems "$NS/q")" "[a][b]" "exec 3>>"
	python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_APPEND)
os.write(fd, b"c\nd")
os.close(os.dup(fd))   # a flush: d, the last line, goes now
os.write(fd, b"e\n")
os.close(os.dup(fd))   # nothing waits
os.write(fd, b"f")
os.close(fd)
' "$NS/q:rpush"
	assert_eq "$(elems "$NS/q")" "[a][b][c][d][e][f]" "each once"
}

@test "RPUSH0 and LPUSH0 on a new key: NUL-terminated elements keep newlines and bytes" {
	printf 'l1\nl2\0\0b\tc\0tail' >"$NS/b:rpush0"
	assert_eq "$(ls "$NS/b" | wc -l)" 4 "four elements"
	assert_eq "$(xxd -p "$NS/b/0")" 6c310a6c32 "a newline inside"
	assert_size "$NS/b/1" 0
	assert_eq "$(xxd -p "$NS/b/2")" 620963 "b TAB c"
	assert_eq "$(cat "$NS/b/3")" tail "the last at the close"
	printf 'p\0q\0' >>"$NS/c:lpush0"
	assert_eq "$(elems "$NS/c")" "[q][p]" "LPUSH order"
}

@test "a key of another type takes nothing: EMEDIUMTYPE, one log line, nothing changed" {
	echo s >"$NS/s"
	run errno_of 'os.write(os.open(a[0], os.O_WRONLY | os.O_APPEND), b"y\n")' "$NS/s:rpush"
	assert_eq "$output" EMEDIUMTYPE "a string"
	assert_eq "$(grep -c "'s:rpush': 's' is a string, not a list: nothing of this write is pushed" "$KVFS_LOG")" 1 "one log line"
	assert_eq "$(cat "$NS/s")" s "unchanged"
	mkdir "$NS/h"
	run errno_of 'os.write(os.open(a[0], os.O_WRONLY | os.O_APPEND), b"y\n")' "$NS/h:lpush"
	assert_eq "$output" EMEDIUMTYPE "a remembered empty hash"
	grep -q "'h:lpush': 'h' is a remembered empty hash, not a list" "$KVFS_LOG"
	assert_eq "$(kvfs_type "$NS/h")" hash "still a hash"
	assert_eq "$(ls -A "$NS/h")" "" "still empty"
	mkdir "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	echo 1 >"$NS/z/m"
	run errno_of 'os.write(os.open(a[0], os.O_WRONLY | os.O_APPEND), b"y\0")' "$NS/z:rpush0"
	assert_eq "$output" EMEDIUMTYPE "a zset"
	assert_eq "$(ls "$NS/z")" m "unchanged"
	assert_eq "$(ls -A "$NS" | paste -sd' ')" "h s z" "no key made"
}

@test "a remembered empty list takes the push" {
	mkdir "$NS/e"
	setfattr -n user.kvfs.type -v list "$NS/e"
	ls "$NS/e" >/dev/null
	echo a >>"$NS/e:rpush"
	assert_eq "$(elems "$NS/e")" "[a]" "pushed"
	assert_eq "$(kvfs_type "$NS/e")" list "a list"
}

@test "a key named KEY:rpush wins: it is that key, read and written as a string" {
	kvfs_unmount
	ldb_put metadata "$(nskey_hex 'x:rpush')" "810000000000000000$(hexof old)"
	kvfs_mount
	assert_eq "$(cat "$NS/x:rpush")" old "the key's value"
	echo new >"$NS/x:rpush"
	assert_eq "$(cat "$NS/x:rpush")" new "written as a string"
	assert_eq "$(ls -A "$NS" | paste -sd' ')" "x:rpush" "listed; no list x made"
	rm "$NS/x:rpush"
	echo job >>"$NS/x:rpush"
	assert_eq "$(elems "$NS/x")" "[job]" "once the key is gone, a push"
}

@test "push names are never listed, read empty, cannot be removed or renamed; KEY is spelt as file names are" {
	echo a >>"$NS/q:rpush"
	assert_eq "$(ls -a "$NS" | paste -sd' ')" ". .. q" "listing"
	assert_eq "$(find "$NS" | wc -l)" 3 "find: NS, q, q/0"
	assert_eq "$(stat -c %s "$NS/q:rpush")" 0 "size"
	assert_eq "$(cat "$NS/q:rpush")" "" "reads empty"
	run errno_of 'os.unlink(a[0])' "$NS/q:rpush"
	assert_eq "$output" EACCES "rm"
	run errno_of 'os.rename(a[0], a[1])' "$NS/q:rpush" "$NS/r"
	assert_eq "$output" EACCES "mv from"
	echo s >"$NS/s"
	run errno_of 'os.rename(a[0], a[1])' "$NS/s" "$NS/q:lpush"
	assert_eq "$output" EACCES "mv onto"
	assert_eq "$(cat "$NS/s")" s "the source stays"
	run errno_of 'os.chmod(a[0], 0o600)' "$NS/q:rpush"
	assert_eq "$output" EACCES "chmod"
	run errno_of 'os.utime(a[0])' "$NS/q:rpush"
	assert_eq "$output" EACCES "touch"
	grep -q "'q:rpush' is an input (a push to a list): it has no mode, owner or times" "$KVFS_LOG"
	echo b >>"$NS/a%2Fb:rpush"
	assert_eq "$(elems "$NS/a%2Fb")" "[b]" "the list a/b"
	echo c >>"$NS/u:1:jobs:rpush"
	assert_eq "$(elems "$NS/u:1:jobs")" "[c]" "KEY may hold ':'"
	assert_eq "$(elems "$NS/q")" "[a]" "unchanged"
}

@test "contention: 4 shells x 500 pushes racing to make the same missing list end with exactly 2,000, each once, each shell's in order" {
	push_lines_4 "$NS/q:rpush" 500
	python3 -c '
import os, sys
d = sys.argv[1]
for f in sorted(os.listdir(d)):
    print(open(os.path.join(d, f)).read())
' "$NS/q" >"$BATS_TEST_TMPDIR/got"
	assert_eq "$(wc -l <"$BATS_TEST_TMPDIR/got")" 2000 "2,000 elements"
	for p in 1 2 3 4; do
		seq -f "p$p-%g" 1 500
	done | sort >"$BATS_TEST_TMPDIR/want"
	sort "$BATS_TEST_TMPDIR/got" | cmp "$BATS_TEST_TMPDIR/want" -
	for p in 1 2 3 4; do
		assert_eq "$(grep "^p$p-" "$BATS_TEST_TMPDIR/got" | md5sum)" \
			"$(seq -f "p$p-%g" 1 500 | md5sum)" "shell $p in order"
	done
}

@test "-o ns=NAME: the pushes are names of the root, and its help lists them" {
	kvfs_unmount
	kvfs_mount -o ns=app
	echo a >>"$KVFS_MNT/q:rpush"
	assert_eq "$(elems "$KVFS_MNT/q")" "[a]" "made at the root"
	getfattr --only-values -n user.kvfs.help "$KVFS_MNT" | grep -q "^namespace 'app'"
	getfattr --only-values -n user.kvfs.help "$KVFS_MNT" | grep -q "^KEY:rpush "
	kvfs_remount
	assert_eq "$(elems "$KVFS_MNT/app/q")" "[a]" "in namespace app"
	run errno_of 'os.getxattr(a[0], "user.kvfs.help")' "$KVFS_MNT"
	assert_eq "$output" ENODATA "the root of namespaces has no help"
}

@test "the namespace's help lists its names" {
	getfattr -n user.kvfs.help "$NS" >"$BATS_TEST_TMPDIR/help"
	grep -q 'KEY:rpush' "$BATS_TEST_TMPDIR/help"
	grep -q 'KEY:incr' "$BATS_TEST_TMPDIR/help"
	grep -q 'KEY:bitcount' "$BATS_TEST_TMPDIR/help"
	grep -q '\.mrange:' "$BATS_TEST_TMPDIR/help"
	grep -q 'KEY:PATH' "$BATS_TEST_TMPDIR/help"
}
