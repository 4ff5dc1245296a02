#!/usr/bin/env bats
# Saves and renames (docs/mapping.md section 6): a temp file written,
# fsynced and renamed over the original leaves the original with the new
# content and its type, in every directory where files can be written,
# with the temp names of rsync, editors and sed; vim, sed -i and rsync
# leave no debris (checked with ldb); renames across kinds of directory
# follow the table of section 6; rsync -aX carries a one-byte change and
# copies every type back.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# The temp names editors and tools use for NAME, one a line.
temp_names() {
	printf '%s\n' ".$1.Ab12Cd" "$1~" ".$1.swp" "sedQ1w2E3"
}

# save DIR NAME CONTENT TEMP: write TEMP in DIR, fsync it, rename it onto
# NAME (what rsync, editors and sed -i do); prints OK or the errno name.
save() {
	errno_of '
p = os.path.join(a[0], a[3])
fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
os.write(fd, a[2].encode())
os.fsync(fd)
os.close(fd)
os.rename(p, os.path.join(a[0], a[1]))' "$@"
}

# The whole database (every column family) as hex lines, while unmounted.
db_dump() {
	local cf
	for cf in default metadata zset_score; do
		ldb_scan "$cf"
	done
}

# refute_debris NAME...: unmount and compact (so that sub-keys of deleted
# keys, which Kvrocks leaves to compaction, are gone); no record holds the
# bytes of any NAME.
refute_debris() {
	local n dump
	kvfs_unmount
	"$KVFS_BIN" compact "$KVFS_DB" >/dev/null
	dump=$(db_dump)
	for n in "$@"; do
		if printf '%s\n' "$dump" | grep -qi "$(hexof "$n")"; then
			echo "debris: a record holds '$n'" >&2
			printf '%s\n' "$dump" | grep -i "$(hexof "$n")" >&2
			return 1
		fi
	done
}

@test "a save over a string key: every temp name leaves the new bytes, a string" {
	printf old >"$NS/s"
	local i=0
	while read -r t; do
		i=$((i + 1))
		run save "$NS" s "new$i" "$t"
		assert_eq "$output" OK "save via $t"
		assert_bytes "$NS/s" "new$i"
		assert_eq "$(kvfs_type "$NS/s")" string "type after $t"
	done < <(temp_names s)
	assert_eq "$(ls -A "$NS")" s "keys"
	refute_debris Ab12Cd "s~" ".s.swp" sedQ1w2E3
}

@test "a save over a bitmap key keeps it a bitmap with the new bytes" {
	touch "$NS/b"
	setfattr -n user.kvfs.type -v bitmap "$NS/b"
	printf '\x80' >"$NS/b"
	local i=0
	while read -r t; do
		i=$((i + 1))
		run save "$NS" b "n$i" "$t"
		assert_eq "$output" OK "save via $t"
		assert_eq "$(kvfs_type "$NS/b")" bitmap "type after $t"
		assert_bytes "$NS/b" "n$i"
	done < <(temp_names b)
	assert_eq "$(ls -A "$NS")" b "keys"
	kvfs_unmount
	# metadata of b: flags 0x06 (bitmap), no string (0x01) record for it
	run ldb_value metadata "$(nskey_hex b)"
	[ "$status" -eq 0 ]
	assert_eq $((0x${output:0:2} & 0x0F)) 6 "type in the metadata flags of b"
	! db_dump | grep -qi "$(hexof Ab12Cd)"
}

@test "a save over a string key of another namespace-level type is a RENAME (the source's type)" {
	touch "$NS/b"
	setfattr -n user.kvfs.type -v bitmap "$NS/b"
	printf 'xy' >"$NS/b"
	printf 'old' >"$NS/s"
	mv "$NS/b" "$NS/s"
	assert_eq "$(kvfs_type "$NS/s")" bitmap "type"
	assert_bytes "$NS/s" xy
}

@test "a save over a hash field: the field takes the bytes, no temp field is left" {
	mkdir "$NS/h"
	printf old >"$NS/h/f"
	printf other >"$NS/h/g"
	local i=0
	while read -r t; do
		i=$((i + 1))
		run save "$NS/h" f "new$i" "$t"
		assert_eq "$output" OK "save via $t"
		assert_bytes "$NS/h/f" "new$i"
	done < <(temp_names f)
	assert_eq "$(ls -A "$NS/h" | paste -sd' ')" "f g" "fields"
	assert_eq "$(kvfs_type "$NS/h")" hash "type"
	refute_debris Ab12Cd "f~" ".f.swp" sedQ1w2E3
}

@test "a save over list position 3 replaces element 3 only" {
	mktype "$NS/l" list
	for i in 0 1 2 3 4; do printf "e$i" >"$NS/l/$i"; done
	local i=0
	while read -r t; do
		i=$((i + 1))
		run save "$NS/l" 3 "n$i" "$t"
		assert_eq "$output" OK "save via $t"
		assert_bytes "$NS/l/3" "n$i"
	done < <(temp_names 3)
	assert_eq "$(ls -A "$NS/l" | paste -sd' ')" "0 1 2 3 4" "positions"
	assert_bytes "$NS/l/2" e2
	assert_bytes "$NS/l/4" e4
	assert_eq "$(kvfs_type "$NS/l")" list "type"
	refute_debris Ab12Cd "3~" ".3.swp" sedQ1w2E3
}

@test "a save over a zset member sets its score; no temp member is left" {
	mktype "$NS/z" zset
	echo 1 >"$NS/z/m"
	echo 2 >"$NS/z/n"
	local i=10
	while read -r t; do
		run save "$NS/z" m "$i" "$t"
		assert_eq "$output" OK "save via $t"
		assert_eq "$(cat "$NS/z/m")" "$i" "score after $t"
		i=$((i + 1))
	done < <(temp_names m)
	assert_eq "$(ls -AU "$NS/z" | paste -sd' ')" "n m" "members in score order"
	refute_debris Ab12Cd "m~" ".m.swp" sedQ1w2E3
}

@test "a save over a set member or a sortedint id keeps it; no temp entry is left" {
	mktype "$NS/st" set
	touch "$NS/st/a" "$NS/st/b"
	mktype "$NS/si" sortedint
	touch "$NS/si/5" "$NS/si/7"
	while read -r t; do
		run save "$NS/st" a "" "$t"
		assert_eq "$output" OK "set: save via $t"
		run save "$NS/si" 5 "" "$t"
		assert_eq "$output" OK "sortedint: save via $t"
	done < <(temp_names 5)
	assert_eq "$(ls -A "$NS/st" | paste -sd' ')" "a b" "members"
	assert_eq "$(ls -A "$NS/si" | paste -sd' ')" "5 7" "ids"
	refute_debris Ab12Cd "5~" ".5.swp" sedQ1w2E3
}

@test "a save races nothing: 30 quick saves onto a set member and a zset member leave one entry" {
	mktype "$NS/st" set
	touch "$NS/st/c"
	mktype "$NS/z" zset
	echo 1 >"$NS/z/m"
	python3 - "$NS" <<'EOF'
import os, sys
ns = sys.argv[1]
for i in range(30):
    for d, n, v in (("st", "c", b""), ("z", "m", str(i).encode())):
        for t in (".%s.x%d" % (n, i), n + "~", "sedAbcde%d" % (i % 10)):
            p = os.path.join(ns, d, t)
            fd = os.open(p, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            os.write(fd, v)
            os.fsync(fd)
            os.close(fd)
            os.rename(p, os.path.join(ns, d, n))
EOF
	assert_eq "$(ls -A "$NS/st")" c "set members"
	assert_eq "$(ls -A "$NS/z")" m "zset members"
	assert_eq "$(cat "$NS/z/m")" 29 "score"
}

@test "sed -i on a string key: new bytes, a string, no debris" {
	printf 'hello world\n' >"$NS/s"
	sed -i 's/world/there/' "$NS/s"
	assert_bytes "$NS/s" $'hello there\n'
	assert_eq "$(kvfs_type "$NS/s")" string "type"
	assert_eq "$(ls -A "$NS")" s "keys"
	kvfs_unmount
	! db_dump | grep -qi "$(hexof sed)"
}

@test "sed -i on a bitmap key keeps it a bitmap" {
	touch "$NS/b"
	setfattr -n user.kvfs.type -v bitmap "$NS/b"
	printf 'abc\n' >"$NS/b"
	sed -i 's/b/X/' "$NS/b"
	assert_bytes "$NS/b" $'aXc\n'
	assert_eq "$(kvfs_type "$NS/b")" bitmap "type"
}

@test "sed -i on a hash field: exactly the new value, no temp field" {
	mkdir "$NS/h"
	printf 'hello world\n' >"$NS/h/f"
	sed -i 's/world/there/' "$NS/h/f"
	assert_bytes "$NS/h/f" $'hello there\n'
	assert_eq "$(ls -A "$NS/h")" f "fields"
	kvfs_unmount
	! db_dump | grep -qi "$(hexof sed)"
	# exactly one field record: the hash's size is 1
	run ldb_value metadata "$(nskey_hex h)"
	[ "$status" -eq 0 ]
	assert_eq $((0x${output:0:2} & 0x0F)) 2 "type in the metadata flags: a hash"
}

@test "sed -i on a list element, a zset member and a sortedint id" {
	mktype "$NS/l" list
	printf 'a\n' >"$NS/l/0"
	printf 'hello\n' >"$NS/l/1"
	printf 'c\n' >"$NS/l/2"
	mktype "$NS/z" zset
	echo 29 >"$NS/z/m"
	mktype "$NS/si" sortedint
	touch "$NS/si/3"
	sed -i 's/hello/HELLO/' "$NS/l/1"
	sed -i 's/29/31/' "$NS/z/m"
	sed -i 's/x/y/' "$NS/si/3"
	assert_eq "$(cat "$NS/l/0" "$NS/l/1" "$NS/l/2" | paste -sd' ')" "a HELLO c" "list"
	assert_eq "$(cat "$NS/z/m")" 31 "score"
	assert_eq "$(ls -A "$NS/si")" 3 "ids"
	assert_eq "$(ls -A "$NS/l" | paste -sd' ')" "0 1 2" "positions"
	refute_debris sed
}

# vim_edit FILE [SETTINGS]: replace "hello" by "HELLO" with vim-tiny, as a
# user would, saving with the given settings. backupskip is emptied: its
# default skips /tmp, where the tests run.
vim_edit() {
	local vim
	vim=$(command -v vim.tiny || command -v vim)
	"$vim" -u NONE -N -es -c "set backupskip= ${2:-}" -c '%s/hello/HELLO/' -c wq "$1"
}

@test "vim (default settings) on a hash field: new value, no debris" {
	mkdir "$NS/h"
	printf 'hello\n' >"$NS/h/f"
	vim_edit "$NS/h/f"
	assert_bytes "$NS/h/f" $'HELLO\n'
	assert_eq "$(ls -A "$NS/h")" f "fields"
	refute_debris "f~" ".f.sw" 4913
}

@test "vim with backupcopy=no (rename to f~, write anew) on a hash field: no debris" {
	mkdir "$NS/h"
	printf 'hello\n' >"$NS/h/f"
	printf 'other\n' >"$NS/h/g"
	vim_edit "$NS/h/f" "backupcopy=no writebackup"
	assert_bytes "$NS/h/f" $'HELLO\n'
	assert_eq "$(ls -A "$NS/h" | paste -sd' ')" "f g" "fields"
	refute_debris "f~" ".f.sw" 4913
}

@test "vim with backupcopy=no on a list element: the element is replaced, nothing renumbers" {
	mktype "$NS/l" list
	for i in 0 1 2 3 4; do printf "e$i\n" >"$NS/l/$i"; done
	printf 'hello\n' >"$NS/l/3"
	vim_edit "$NS/l/3" "backupcopy=no writebackup"
	assert_eq "$(cat "$NS"/l/* | paste -sd' ')" "e0 e1 e2 HELLO e4" "elements"
	printf 'hello\n' >"$NS/l/3"
	vim_edit "$NS/l/3"
	assert_eq "$(cat "$NS"/l/* | paste -sd' ')" "e0 e1 e2 HELLO e4" "elements"
	assert_eq "$(ls -A "$NS/l" | paste -sd' ')" "0 1 2 3 4" "positions"
	refute_debris "3~" ".3.sw"
}

@test "vim on a zset member and a sortedint id, both ways" {
	mktype "$NS/z" zset
	echo 1 >"$NS/z/m"
	mktype "$NS/si" sortedint
	touch "$NS/si/5" "$NS/si/7"
	local vim
	vim=$(command -v vim.tiny || command -v vim)
	for bk in no auto; do
		"$vim" -u NONE -N -es -c "set backupskip= backupcopy=$bk" -c '%s/.*/7/' \
			-c wq "$NS/z/m"
		"$vim" -u NONE -N -es -c "set backupskip= backupcopy=$bk" -c wq "$NS/si/5"
	done
	assert_eq "$(cat "$NS/z/m")" 7 "score"
	assert_eq "$(ls -A "$NS/z")" m "members"
	assert_eq "$(ls -A "$NS/si" | paste -sd' ')" "5 7" "ids"
	refute_debris 4913 ".m.sw" "m~" ".5.sw" "5~"
}

@test "vim on a bitmap key keeps it a bitmap, with every backupcopy setting" {
	touch "$NS/b"
	setfattr -n user.kvfs.type -v bitmap "$NS/b"
	for bk in no auto yes; do
		printf 'hello\n' >"$NS/b"
		vim_edit "$NS/b" "backupcopy=$bk writebackup"
		assert_bytes "$NS/b" $'HELLO\n'
		assert_eq "$(kvfs_type "$NS/b")" bitmap "type with backupcopy=$bk"
	done
	assert_eq "$(ls -A "$NS")" b "keys"
	refute_debris "b~" ".b.sw" 4913
}

@test "a string key renamed to a backup name and written anew is a string (no type carried)" {
	printf old >"$NS/s"
	mv "$NS/s" "$NS/s~"
	printf new >"$NS/s"
	assert_eq "$(kvfs_type "$NS/s")" string "type"
	assert_eq "$(kvfs_type "$NS/s~")" string "backup's type"
}

@test "sed -i that fails (a zset member cannot hold text) leaves the member and no temp member" {
	mktype "$NS/z" zset
	echo 5 >"$NS/z/m"
	run sed -i 's/.*/abc/' "$NS/z/m"
	[ "$status" -ne 0 ]
	assert_eq "$(cat "$NS/z/m")" 5 "score"
	assert_eq "$(ls -A "$NS/z")" m "members"
	refute_debris sed
}

@test "renaming a list position onto a scratch name leaves the element; the copy is a scratch file" {
	mktype "$NS/l" list
	for i in 0 1 2; do printf "e$i" >"$NS/l/$i"; done
	mv "$NS/l/1" "$NS/l/1~"
	assert_bytes "$NS/l/1~" e1
	assert_eq "$(ls -A "$NS/l" | paste -sd' ')" "0 1 2" "positions"
	assert_bytes "$NS/l/1" e1
	rm "$NS/l/1~"
	assert_eq "$(ls -A "$NS/l" | paste -sd' ')" "0 1 2" "positions"
}

@test "a rename from outside a list onto a scratch name is EINVAL and changes nothing" {
	mktype "$NS/l" list
	printf e0 >"$NS/l/0"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	printf s >"$NS/s"
	run errno_of 'os.rename(a[0], a[1])' "$NS/h/f" "$NS/l/x~"
	assert_eq "$output" EINVAL "field into a list"
	run errno_of 'os.rename(a[0], a[1])' "$NS/s" "$NS/l/x~"
	assert_eq "$output" EINVAL "string key into a list"
	assert_bytes "$NS/h/f" v
	assert_bytes "$NS/s" s
	assert_eq "$(ls -A "$NS/l")" 0 "positions"
}

@test "cross-kind renames are EXDEV; mv turns a field into a key and a key into a field" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	printf s >"$NS/s"
	run errno_of 'os.rename(a[0], a[1])' "$NS/h/f" "$NS/k"
	assert_eq "$output" EXDEV "field to namespace"
	run errno_of 'os.rename(a[0], a[1])' "$NS/s" "$NS/h/s"
	assert_eq "$output" EXDEV "key into hash"
	mv "$NS/h/f" "$NS/k"
	assert_eq "$(kvfs_type "$NS/k")" string "type"
	assert_bytes "$NS/k" v
	mv "$NS/s" "$NS/h/"
	assert_bytes "$NS/h/s" s
	assert_eq "$(ls -A "$NS" | paste -sd' ')" "h k" "keys"
}

@test "a list element moved into a hash becomes a field; a field moved to list position n appends" {
	mktype "$NS/l" list
	printf a >"$NS/l/0"
	printf b >"$NS/l/1"
	mkdir "$NS/h"
	mv "$NS/l/0" "$NS/h/x"
	assert_bytes "$NS/h/x" a
	assert_eq "$(ls -A "$NS/l")" 0 "positions"
	assert_bytes "$NS/l/0" b
	mv "$NS/h/x" "$NS/l/1"
	assert_bytes "$NS/l/0" b
	assert_bytes "$NS/l/1" a
	assert_eq "$(ls -A "$NS/h")" "" "fields"
}

@test "a zset member moved to another zset is EXDEV; a field moved into a set must be empty" {
	mktype "$NS/z" zset
	mktype "$NS/z2" zset
	echo 3 >"$NS/z/m"
	run errno_of 'os.rename(a[0], a[1])' "$NS/z/m" "$NS/z2/m"
	assert_eq "$output" EXDEV
	mv "$NS/z/m" "$NS/z2/"
	assert_eq "$(cat "$NS/z2/m")" 3 "score"
	mkdir "$NS/h"
	printf data >"$NS/h/f"
	mktype "$NS/st" set
	run mv "$NS/h/f" "$NS/st/"
	[ "$status" -ne 0 ]
	assert_bytes "$NS/h/f" data
}

@test "a string temp file over a hash, or a hash over a string: EISDIR / ENOTDIR, nothing changed" {
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	printf s >"$NS/s"
	run errno_of 'os.rename(a[0], a[1])' "$NS/s" "$NS/h"
	assert_eq "$output" EISDIR
	run errno_of 'os.rename(a[0], a[1])' "$NS/h" "$NS/s"
	assert_eq "$output" ENOTDIR
	assert_bytes "$NS/s" s
	assert_bytes "$NS/h/f" v
}

# rename2 FROM TO FLAGS: renameat2(2) through libc; prints OK or the errno.
rename2() {
	errno_of '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, a[0].encode(), -100, a[1].encode(), int(a[2])) != 0:
    raise OSError(ctypes.get_errno(), "renameat2")' "$@"
}

@test "RENAME_NOREPLACE: EEXIST over keys, fields, members, list positions; works onto free names" {
	printf a >"$NS/a"
	printf b >"$NS/b"
	mkdir "$NS/h"
	printf f >"$NS/h/f"
	printf g >"$NS/h/g"
	mktype "$NS/z" zset
	echo 1 >"$NS/z/m"
	echo 2 >"$NS/z/n"
	mktype "$NS/l" list
	printf x >"$NS/l/0"
	touch "$NS/l/.0.AbC123"
	run rename2 "$NS/a" "$NS/b" 1
	assert_eq "$output" EEXIST "keys"
	run rename2 "$NS/h/f" "$NS/h/g" 1
	assert_eq "$output" EEXIST "fields"
	run rename2 "$NS/z/m" "$NS/z/n" 1
	assert_eq "$output" EEXIST "members"
	run rename2 "$NS/l/.0.AbC123" "$NS/l/0" 1
	assert_eq "$output" EEXIST "list position"
	assert_bytes "$NS/b" b
	assert_bytes "$NS/h/g" g
	assert_eq "$(cat "$NS/z/n")" 2
	assert_bytes "$NS/l/0" x
	run rename2 "$NS/a" "$NS/c" 1
	assert_eq "$output" OK "onto a free name"
	assert_bytes "$NS/c" a
}

@test "RENAME_EXCHANGE is EINVAL and changes nothing" {
	printf a >"$NS/a"
	printf b >"$NS/b"
	run rename2 "$NS/a" "$NS/b" 2
	assert_eq "$output" EINVAL
	assert_bytes "$NS/a" a
	assert_bytes "$NS/b" b
}

# fill NSDIR: one key of every type, with content.
fill() {
	local d=$1
	printf 'abcd' >"$d/s"
	touch "$d/b"
	setfattr -n user.kvfs.type -v bitmap "$d/b"
	printf 'abcd' >"$d/b"
	mkdir "$d/h"
	printf 'abcd' >"$d/h/f"
	printf 'wxyz' >"$d/h/g"
	mktype "$d/l" list
	for i in 0 1 2 3 4 5 6 7 8 9 10 11; do printf "e%02d" "$i" >"$d/l/$i"; done
	mktype "$d/z" zset
	echo 1.5 >"$d/z/m"
	echo 2 >"$d/z/n"
	mktype "$d/st" set
	touch "$d/st/a" "$d/st/b"
	mktype "$d/si" sortedint
	touch "$d/si/5" "$d/si/70"
	mkdir "$d/eh"
}

# tree_of DIR: every path with its type (keys) and content, one a line.
tree_of() {
	(
		cd "$1" || exit 1
		find . -mindepth 1 | LC_ALL=C sort | while read -r p; do
			if [ -d "$p" ]; then
				echo "$p/ $(getfattr --only-values -n user.kvfs.type "$p" 2>/dev/null)"
			else
				echo "$p $(getfattr --only-values -n user.kvfs.type "$p" 2>/dev/null) $(xxd -p "$p")"
			fi
		done
	)
}

@test "rsync -aX carries a one-byte change of the same size in every type to the backup" {
	fill "$NS"
	local bk=$BATS_TEST_TMPDIR/bk
	rsync -aX "$NS/" "$bk/"
	assert_eq "$(tree_of "$bk")" "$(tree_of "$NS")" "first copy"
	sleep 1.1 # a whole second: rsync compares mtimes in seconds
	printf 'abXd' >"$NS/s"
	printf 'X' | dd of="$NS/b" bs=1 seek=2 conv=notrunc status=none
	printf 'abXd' >"$NS/h/f"
	printf 'eX3' >"$NS/l/03"
	echo 2.5 >"$NS/z/m"
	run rsync -aX --itemize-changes "$NS/" "$bk/"
	[ "$status" -eq 0 ]
	echo "$output"
	for f in s b h/f l/03 z/m; do
		echo "$output" | grep -q "^>f.* $f\$" || {
			echo "rsync did not transfer $f" >&2
			return 1
		}
	done
	assert_bytes "$bk/s" abXd
	assert_bytes "$bk/b" abXd
	assert_bytes "$bk/h/f" abXd
	assert_bytes "$bk/l/03" eX3
	assert_eq "$(cat "$bk/z/m")" 2.5 "score"
	assert_eq "$(tree_of "$bk")" "$(tree_of "$NS")" "second copy"
	# rsync's temp files (.NAME.XXXXXX) left no key, field or member
	refute_debris ".s." ".b." ".f." ".03." ".m."
}

@test "rsync -aX of a backup into an empty namespace recreates every type; a second run transfers nothing" {
	fill "$NS"
	local bk=$BATS_TEST_TMPDIR/bk
	rsync -aX "$NS/" "$bk/"
	mkdir "$KVFS_MNT/ns2"
	rsync -aX "$bk/" "$KVFS_MNT/ns2/"
	assert_eq "$(tree_of "$KVFS_MNT/ns2")" "$(tree_of "$NS")" "copy back"
	run rsync -aX --stats --itemize-changes "$bk/" "$KVFS_MNT/ns2/"
	[ "$status" -eq 0 ]
	echo "$output"
	echo "$output" | grep -q "^Number of regular files transferred: 0\$"
	! echo "$output" | grep -q '^[<>ch.][fd]'
	assert_eq "$(tree_of "$KVFS_MNT/ns2")" "$(tree_of "$NS")" "after the second run"
}
