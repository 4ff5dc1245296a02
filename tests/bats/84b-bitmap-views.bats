#!/usr/bin/env bats
# BITCOUNT and BITPOS of a bitmap as names of its namespace
# (docs/mapping.md, "Counting and finding bits").

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mkbitmap() {
	touch "$1"
	setfattr -n user.kvfs.type -v bitmap "$1"
	printf "$2" >"$1"
}

@test "KEY:bitcount and KEY:bitpos answer BITCOUNT and BITPOS, Redis's numbers" {
	mkbitmap "$NS/b" '\xff\x00\x0f'
	assert_eq "$(cat "$NS/b:bitcount")" 12 "bitcount"
	assert_eq "$(cat "$NS/b:bitcount:0:0")" 8 "first byte"
	assert_eq "$(cat "$NS/b:bitcount:1:-1")" 4 "from the second byte"
	assert_eq "$(cat "$NS/b:bitcount:-1:-1")" 4 "the last byte"
	assert_eq "$(cat "$NS/b:bitpos:0")" 8 "first 0"
	assert_eq "$(cat "$NS/b:bitpos:1")" 0 "first 1"
	assert_eq "$(cat "$NS/b:bitpos:1:1")" 20 "first 1 from byte 1"
	assert_eq "$(cat "$NS/b:bitpos:1:1:1")" -1 "none in byte 1"
	assert_eq "$(cat "$NS/b:bitpos:0:0:0")" -1 "no 0 in byte 0 with an end"
	# a missing key, as Redis
	assert_eq "$(cat "$NS/none:bitcount")" 0 "missing: bitcount"
	assert_eq "$(cat "$NS/none:bitpos:1")" -1 "missing: bitpos 1"
	assert_eq "$(cat "$NS/none:bitpos:0")" 0 "missing: bitpos 0"
}

@test "the answers follow writes, and the names are never listed" {
	mkbitmap "$NS/b" '\x01'
	assert_eq "$(cat "$NS/b:bitcount")" 1 "before"
	printf '\xff\xff' >"$NS/b"
	assert_eq "$(cat "$NS/b:bitcount")" 16 "after a write"
	assert_eq "$(ls -a "$NS" | paste -sd' ')" ". .. b" "listing"
	assert_eq "$(stat -c '%s %A' "$NS/b:bitcount")" "0 -r--r--r--" "stat"
}

@test "bad numbers are EINVAL, another type EMEDIUMTYPE, writing EACCES; each logged, nothing changes" {
	mkbitmap "$NS/b" '\x0f'
	echo hello >"$NS/s"
	run errno_of 'open(a[0]).read()' "$NS/b:bitcount:x:1"
	assert_eq "$output" EINVAL "a bad number"
	run errno_of 'open(a[0]).read()' "$NS/b:bitpos:2"
	assert_eq "$output" EINVAL "a bit of 2"
	run errno_of 'open(a[0]).read()' "$NS/s:bitcount"
	assert_eq "$output" EMEDIUMTYPE "a string"
	run errno_of 'open(a[0], "w")' "$NS/b:bitcount"
	assert_eq "$output" EACCES "writing"
	grep -q "write KEY:bitcount\[:START:END\]" "$KVFS_LOG"
	grep -q "'s' is no bitmap" "$KVFS_LOG"
	assert_eq "$(xxd -p "$NS/b")" 0f "the bitmap is unchanged"
	assert_eq "$(cat "$NS/s")" hello "the string is unchanged"
}

@test "a key with the very name wins (one Kvrocks wrote: the tree cannot make it)" {
	run errno_of 'open(a[0], "w")' "$NS/b:bitcount"
	assert_eq "$output" EACCES "not through the tree"
	kvfs_unmount
	ldb_put metadata "$(nskey_hex b:bitcount)" "81$(printf '%016d' 0)$(hexof real)"
	kvfs_mount
	assert_eq "$(cat "$NS/b:bitcount")" real "the key"
}
