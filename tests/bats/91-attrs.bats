#!/usr/bin/env bats
# Attributes that persist (issue 5): mtime follows content and survives a
# remount; touch, utimensat, chmod and chown persist on keys and entries;
# user.* extended attributes persist and travel with rsync -aX; defaults
# for keys written by someone else; df; expiry without a remount.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# mtime_ns PATH: st_mtime_ns.
mtime_ns() {
	python3 -c 'import os, sys; print(os.stat(sys.argv[1]).st_mtime_ns)' "$1"
}

# attrs PATH: "mode uid gid mtime_ns atime_ns" of PATH.
attrs() {
	python3 -c '
import os, sys
s = os.stat(sys.argv[1])
print("%o %d %d %d %d" % (s.st_mode & 0o7777, s.st_uid, s.st_gid, s.st_mtime_ns, s.st_atime_ns))' "$1"
}

OLD=981173106123456789 # 2001-02-03 04:05:06.123456789 UTC, in ns
Z8=0000000000000000    # eight zero bytes, in hex

# set_old PATH: mtime and atime to $OLD.
set_old() {
	python3 -c 'import os, sys; os.utime(sys.argv[1], ns=(int(sys.argv[2]), int(sys.argv[2])))' \
		"$1" "$OLD"
}

# is_recent PATH: its mtime is within the last minute.
is_recent() {
	local m now
	m=$(mtime_ns "$1")
	now=$(date +%s%N)
	[ "$m" -gt $((now - 60000000000)) ] && [ "$m" -le $((now + 1000000000)) ]
}

# One key of every directory type, each with one entry "1".
make_dirs() {
	mkdir "$NS/hash" "$NS/list" "$NS/set" "$NS/zset" "$NS/sint"
	setfattr -n user.kvfs.type -v list "$NS/list"
	setfattr -n user.kvfs.type -v set "$NS/set"
	setfattr -n user.kvfs.type -v zset "$NS/zset"
	setfattr -n user.kvfs.type -v sortedint "$NS/sint"
	echo v >"$NS/hash/1"
	echo v >"$NS/list/0"
	touch "$NS/set/1"
	echo 1 >"$NS/zset/1"
	touch "$NS/sint/1"
}

@test "a string's mtime changes with its content and survives a remount" {
	echo a >"$NS/s"
	set_old "$NS/s"
	assert_eq "$(mtime_ns "$NS/s")" "$OLD"
	echo b >"$NS/s"
	is_recent "$NS/s"
	m=$(mtime_ns "$NS/s")
	kvfs_remount
	assert_eq "$(mtime_ns "$NS/s")" "$m" "mtime after a remount"
	assert_bytes "$NS/s" $'b\n'
}

@test "a bitmap's mtime changes with its content (written in place) and survives a remount" {
	touch "$NS/b"
	setfattr -n user.kvfs.type -v bitmap "$NS/b"
	printf '\x01' >"$NS/b"
	set_old "$NS/b"
	printf '\x02' | dd of="$NS/b" bs=1 seek=3 conv=notrunc status=none
	is_recent "$NS/b"
	m=$(mtime_ns "$NS/b")
	kvfs_remount
	assert_eq "$(mtime_ns "$NS/b")" "$m"
}

@test "an entry's mtime changes with its content, in every directory type, and survives a remount" {
	make_dirs
	for e in hash/1 list/0 zset/1; do
		set_old "$NS/$e"
		assert_eq "$(mtime_ns "$NS/$e")" "$OLD" "$e before"
	done
	echo w >"$NS/hash/1"
	echo w >"$NS/list/0"
	echo 2 >"$NS/zset/1"
	for e in hash/1 list/0 zset/1; do
		is_recent "$NS/$e"
		eval "m_${e%%/*}=$(mtime_ns "$NS/$e")"
	done
	kvfs_remount
	assert_eq "$(mtime_ns "$NS/hash/1")" "$m_hash"
	assert_eq "$(mtime_ns "$NS/list/0")" "$m_list"
	assert_eq "$(mtime_ns "$NS/zset/1")" "$m_zset"
}

@test "a key directory's mtime changes when an entry is added or removed, in every type" {
	make_dirs
	for d in hash list set zset sint; do
		set_old "$NS/$d"
	done
	kvfs_remount
	for d in hash list set zset sint; do
		assert_eq "$(mtime_ns "$NS/$d")" "$OLD" "$d before"
	done
	echo v >"$NS/hash/2"
	echo v >"$NS/list/1"
	touch "$NS/set/2"
	echo 2 >"$NS/zset/2"
	rm "$NS/sint/1"
	touch "$NS/sint/5"
	for d in hash list set zset sint; do
		is_recent "$NS/$d"
	done
	m=$(mtime_ns "$NS/set")
	kvfs_remount
	assert_eq "$(mtime_ns "$NS/set")" "$m"
}

@test "touch -d persists on string keys, key directories and entries" {
	make_dirs
	echo x >"$NS/s"
	for p in s hash hash/1 list list/0 set/1 zset/1 sint/1; do
		touch -d '2001-02-03 04:05:06.123456789 UTC' "$NS/$p"
	done
	kvfs_remount
	for p in s hash hash/1 list list/0 set/1 zset/1 sint/1; do
		assert_eq "$(mtime_ns "$NS/$p")" "$OLD" "$p"
	done
}

# utimensat PATH ATIME_NS|now|omit MTIME_NS|now|omit, through ctypes.
utimensat() {
	python3 - "$@" <<'EOF'
import ctypes, os, sys
UTIME_NOW, UTIME_OMIT = (1 << 30) - 1, (1 << 30) - 2
class ts(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]
def one(v):
    if v == "now":
        return ts(0, UTIME_NOW)
    if v == "omit":
        return ts(0, UTIME_OMIT)
    n = int(v)
    return ts(n // 10**9, n % 10**9)
libc = ctypes.CDLL(None, use_errno=True)
times = (ts * 2)(one(sys.argv[2]), one(sys.argv[3]))
if libc.utimensat(-100, sys.argv[1].encode(), times, 0) != 0:
    e = ctypes.get_errno()
    print(os.strerror(e))
    sys.exit(1)
EOF
}

@test "utimensat with UTIME_OMIT keeps one time, UTIME_NOW sets it to now" {
	echo x >"$NS/s"
	utimensat "$NS/s" 1000000000000000001 2000000000000000002
	assert_eq "$(attrs "$NS/s" | cut -d' ' -f4,5)" "2000000000000000002 1000000000000000001"
	utimensat "$NS/s" omit 3000000000000000003
	assert_eq "$(attrs "$NS/s" | cut -d' ' -f4,5)" "3000000000000000003 1000000000000000001"
	utimensat "$NS/s" 4000000000000000004 omit
	assert_eq "$(attrs "$NS/s" | cut -d' ' -f4,5)" "3000000000000000003 4000000000000000004"
	kvfs_remount
	assert_eq "$(attrs "$NS/s" | cut -d' ' -f4,5)" "3000000000000000003 4000000000000000004"
	utimensat "$NS/s" omit now
	is_recent "$NS/s"
	a=$(attrs "$NS/s" | cut -d' ' -f5)
	assert_eq "$a" 4000000000000000004 "atime kept"
}

@test "chmod and chown persist on string keys, key directories and entries" {
	make_dirs
	echo x >"$NS/s"
	for p in s hash hash/1 list/0 set/1 zset/1 sint/1 sint; do
		chmod 0640 "$NS/$p"
		chown 1234:5678 "$NS/$p"
	done
	kvfs_remount
	# a listing (readdirplus) fills the attributes first
	run ls -ln "$NS/hash" "$NS/set"
	[[ "$output" == *"-rw-r----- 1 1234 5678 "*" 1"* ]]
	for p in s hash hash/1 list/0 set/1 zset/1 sint/1 sint; do
		assert_eq "$(attrs "$NS/$p" | cut -d' ' -f1-3)" "640 1234 5678" "$p"
	done
	[ -d "$NS/hash" ] && [ -f "$NS/hash/1" ]
	assert_eq "$(stat -c %A "$NS/hash")" "drw-r-----"
}

@test "mode, owner and times are stored in __kvfs, in the bytes of docs/encoding.md" {
	echo x >"$NS/k"
	chmod 0600 "$NS/k"
	touch -d '2001-02-03 04:05:06.123456789 UTC' "$NS/k"
	kvfs_unmount
	# "\x06__kvfs" "@" | ns_len | ns | key_len u32 | "k" | part
	prefix="065F5F6B76667340${NS_HEX}000000016B"
	# attrs ("X"): v1 string header, ver 0, has = mode (1), mode 0600
	run ldb_value metadata "${prefix}58"
	[ "$status" -eq 0 ]
	assert_eq "${output:0:44}" "81${Z8}${Z8}0100000180" "attrs head"
	# times ("T"): ver 0, mtime 981173106 s + 123456789 ns, atime the same
	run ldb_value metadata "${prefix}54"
	[ "$status" -eq 0 ]
	assert_eq "${output:0:82}" "81${Z8}${Z8}000000003A7B8372075BCD15000000003A7B8372075BCD15" \
		"times head"
	[ "${#output}" -eq $(((9 + 8 + 36) * 2)) ]
}

@test "user.* attributes persist on keys and entries and are listed with the kvfs ones" {
	make_dirs
	echo x >"$NS/s"
	setfattr -n user.note -v "on a key" "$NS/s"
	setfattr -n user.note -v "on a dir" "$NS/hash"
	setfattr -n user.note -v "on a field" "$NS/hash/1"
	setfattr -n user.bin -v 0x00ff00 "$NS/set/1"
	kvfs_remount
	assert_eq "$(getfattr --only-values -n user.note "$NS/s")" "on a key"
	assert_eq "$(getfattr --only-values -n user.note "$NS/hash")" "on a dir"
	assert_eq "$(getfattr --only-values -n user.note "$NS/hash/1")" "on a field"
	assert_eq "$(getfattr -e hex --only-values -n user.bin "$NS/set/1" | xxd -p)" "00ff00"
	run getfattr -d -m - "$NS/s"
	[[ "$output" == *'user.kvfs.type="string"'* ]]
	[[ "$output" == *'user.note="on a key"'* ]]
	setfattr -x user.note "$NS/s"
	run errno_of 'os.getxattr(a[0], "user.note")' "$NS/s"
	assert_eq "$output" ENODATA
	run errno_of 'os.removexattr(a[0], "user.note")' "$NS/s"
	assert_eq "$output" ENODATA
}

@test "a re-created key or field does not inherit the old one's attributes" {
	echo x >"$NS/s"
	chmod 0600 "$NS/s"
	setfattr -n user.a -v 1 "$NS/s"
	rm "$NS/s"
	echo y >"$NS/s"
	assert_eq "$(attrs "$NS/s" | cut -d' ' -f1)" 644
	run errno_of 'os.getxattr(a[0], "user.a")' "$NS/s"
	assert_eq "$output" ENODATA
	mkdir "$NS/h"
	echo v >"$NS/h/f"
	setfattr -n user.a -v 1 "$NS/h/f"
	chmod 0600 "$NS/h"
	rm -r "$NS/h"
	mkdir "$NS/h"
	echo v >"$NS/h/f"
	assert_eq "$(attrs "$NS/h" | cut -d' ' -f1)" 755
	run errno_of 'os.getxattr(a[0], "user.a")' "$NS/h/f"
	assert_eq "$output" ENODATA
}

@test "a renamed key or field keeps its attributes" {
	echo x >"$NS/s"
	chmod 0600 "$NS/s"
	setfattr -n user.a -v 1 "$NS/s"
	mv "$NS/s" "$NS/t"
	mkdir "$NS/h"
	echo v >"$NS/h/f"
	setfattr -n user.b -v 2 "$NS/h/f"
	touch -d '2001-02-03 04:05:06.123456789 UTC' "$NS/h/f"
	mv "$NS/h/f" "$NS/h/g"
	kvfs_remount
	assert_eq "$(attrs "$NS/t" | cut -d' ' -f1)" 600
	assert_eq "$(getfattr --only-values -n user.a "$NS/t")" 1
	assert_eq "$(getfattr --only-values -n user.b "$NS/h/g")" 2
	assert_eq "$(mtime_ns "$NS/h/g")" "$OLD"
}

@test "user.* attributes, modes and times round trip through rsync -aX into a fresh namespace" {
	make_dirs
	echo x >"$NS/s"
	setfattr -n user.note -v key "$NS/s"
	setfattr -n user.note -v field "$NS/hash/1"
	setfattr -n user.note -v dir "$NS/hash"
	chmod 0600 "$NS/s" "$NS/hash/1"
	touch -d '2001-02-03 04:05:06 UTC' "$NS/s" "$NS/hash/1"
	PLAIN=$BATS_TEST_TMPDIR/plain
	mkdir "$PLAIN"
	rsync -aX "$NS/" "$PLAIN/"
	assert_eq "$(getfattr --only-values -n user.note "$PLAIN/hash/1")" field
	mkdir "$KVFS_MNT/copy"
	rsync -aX "$PLAIN/" "$KVFS_MNT/copy/"
	kvfs_remount
	C=$KVFS_MNT/copy
	assert_eq "$(getfattr --only-values -n user.note "$C/s")" key
	assert_eq "$(getfattr --only-values -n user.note "$C/hash/1")" field
	assert_eq "$(getfattr --only-values -n user.note "$C/hash")" dir
	assert_eq "$(attrs "$C/s" | cut -d' ' -f1)" 600
	assert_eq "$(attrs "$C/hash/1" | cut -d' ' -f1)" 600
	assert_eq "$(stat -c %Y "$C/s")" 981173106
	assert_eq "$(stat -c %Y "$C/hash/1")" 981173106
	# a second run finds nothing to send
	run rsync -aXi "$PLAIN/" "$C/"
	[ "$status" -eq 0 ]
	! printf '%s\n' "$output" | grep -q '^>f'
}

@test "a hash and a zset with a ttl round trip through rsync -aX (expireat before type, on the empty directory)" {
	mkdir "$NS/h" "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	echo v >"$NS/h/f"
	echo 1.5 >"$NS/z/m"
	setfattr -n user.kvfs.ttl -v 100000 "$NS/h"
	setfattr -n user.kvfs.ttl -v 100000 "$NS/z"
	PLAIN=$BATS_TEST_TMPDIR/plain
	mkdir "$PLAIN"
	rsync -aX "$NS/" "$PLAIN/"
	[ -n "$(getfattr --only-values -n user.kvfs.expireat "$PLAIN/z")" ]
	mkdir "$KVFS_MNT/copy"
	rsync -aX "$PLAIN/" "$KVFS_MNT/copy/"
	C=$KVFS_MNT/copy
	assert_eq "$(kvfs_type "$C/z")" zset
	assert_eq "$(kvfs_type "$C/h")" hash
	assert_bytes "$C/z/m" $'1.5\n'
	for k in h z; do
		ttl=$(getfattr --only-values -n user.kvfs.ttl "$C/$k")
		[ "$ttl" -gt 50000 ] && [ "$ttl" -le 100000 ]
	done
}

@test "kill -9 after a write and close leaves content and mtime together" {
	mkdir "$NS/h"
	echo one >"$NS/s"
	echo one >"$NS/h/f"
	set_old "$NS/s"
	set_old "$NS/h/f"
	echo two >"$NS/s"
	echo two >"$NS/h/f"
	ms=$(mtime_ns "$NS/s")
	mf=$(mtime_ns "$NS/h/f")
	kvfs_kill9
	kvfs_mount
	assert_bytes "$NS/s" $'two\n'
	assert_bytes "$NS/h/f" $'two\n'
	assert_eq "$(mtime_ns "$NS/s")" "$ms"
	assert_eq "$(mtime_ns "$NS/h/f")" "$mf"
}

@test "keys written by someone else: times from the version, owner and mode from the mount options" {
	kvfs_unmount
	# a hash h (version 0x305120C101120005: microsecond 1700000000123456)
	# with field f, and a string s, written with ldb as Kvrocks would
	ldb_put metadata "$(nskey_hex h)" "82${Z8}305120C1011200050000000000000001"
	ldb_put default "${NS_HEX}0000000168305120C10112000566" "$(hexof v)"
	ldb_put metadata "$(nskey_hex s)" "810000000000000000$(hexof str)"
	kvfs_mount -o uid=1234,gid=5678,umask=027
	assert_eq "$(attrs "$NS/h" | cut -d' ' -f1-4)" "750 1234 5678 1700000000123456000"
	assert_eq "$(attrs "$NS/h/f" | cut -d' ' -f1-4)" "640 1234 5678 1700000000123456000"
	assert_eq "$(attrs "$NS/s" | cut -d' ' -f1-3)" "640 1234 5678"
	assert_bytes "$NS/h/f" v
}

@test "df reports the database's numbers" {
	head -c 1048576 /dev/urandom >"$NS/big"
	run df -B1 --output=size,used,avail "$KVFS_MNT"
	[ "$status" -eq 0 ]
	read -r size used avail < <(printf '%s\n' "$output" | tail -1)
	[ "$size" -gt 0 ] && [ "$avail" -gt 0 ] && [ "$used" -gt 0 ]
	python3 -c '
import os, sys
s = os.statvfs(sys.argv[1])
assert s.f_bsize > 0 and s.f_blocks >= s.f_bfree >= s.f_bavail > 0, s
assert s.f_files > 0 and s.f_namemax > 0, s' "$KVFS_MNT"
}

@test "an expiring key disappears without a remount and an open file reads nothing after expiry" {
	echo secret >"$NS/e"
	mkdir "$NS/h"
	echo secret >"$NS/h/f"
	setfattr -n user.kvfs.ttl -v 1500 "$NS/e"
	setfattr -n user.kvfs.ttl -v 1500 "$NS/h"
	exec 5<"$NS/e" 6<"$NS/h/f"
	assert_eq "$(cat <&5)" secret
	sleep 2
	run errno_of 'os.pread(int(a[0]), 100, 0)' 5
	assert_eq "$output" ENOENT
	run errno_of 'os.pread(int(a[0]), 100, 0)' 6
	assert_eq "$output" ENOENT
	exec 5<&- 6<&-
	run ls "$NS"
	[[ "$output" != *e* ]]
	[[ "$output" != *h* ]]
	run errno_of 'open(a[0]).read()' "$NS/e"
	assert_eq "$output" ENOENT
	run errno_of 'os.stat(a[0])' "$NS/h/f"
	assert_eq "$output" ENOENT
}

@test "a hash converted to a list (cp -a sets the type last) keeps its mode, owner and xattrs" {
	mkdir "$NS/l"
	echo a >"$NS/l/0"
	echo b >"$NS/l/1"
	chmod 0700 "$NS/l"
	chown 1234:5678 "$NS/l"
	setfattr -n user.note -v kept "$NS/l"
	setfattr -n user.kvfs.type -v list "$NS/l"
	assert_eq "$(kvfs_type "$NS/l")" list
	kvfs_remount
	assert_eq "$(attrs "$NS/l" | cut -d' ' -f1-3)" "700 1234 5678"
	assert_eq "$(getfattr --only-values -n user.note "$NS/l")" kept
}

@test "user.* attributes and times of list and sortedint entries round trip through rsync -aX (set on scratch files)" {
	mkdir "$NS/l" "$NS/n"
	setfattr -n user.kvfs.type -v list "$NS/l"
	setfattr -n user.kvfs.type -v sortedint "$NS/n"
	echo a >"$NS/l/0"
	echo b >"$NS/l/1"
	touch "$NS/n/7"
	setfattr -n user.note -v first "$NS/l/0"
	setfattr -n user.note -v id "$NS/n/7"
	touch -d '2001-02-03 04:05:06 UTC' "$NS/l/1" "$NS/n/7"
	PLAIN=$BATS_TEST_TMPDIR/plain
	mkdir "$PLAIN"
	rsync -aX "$NS/" "$PLAIN/"
	mkdir "$KVFS_MNT/copy"
	rsync -aX "$PLAIN/" "$KVFS_MNT/copy/"
	kvfs_remount
	C=$KVFS_MNT/copy
	assert_eq "$(kvfs_type "$C/l")" list
	assert_eq "$(getfattr --only-values -n user.note "$C/l/0")" first
	assert_eq "$(getfattr --only-values -n user.note "$C/n/7")" id
	assert_eq "$(stat -c %Y "$C/l/1")" 981173106
	assert_eq "$(stat -c %Y "$C/n/7")" 981173106
}
