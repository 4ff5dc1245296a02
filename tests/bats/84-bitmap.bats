#!/usr/bin/env bats
# Bitmap keys are regular files whose bytes are the bitmap in Redis order
# (docs/mapping.md section 16): choosing the type, reads and writes at any
# offset, holes, st_size, truncate, conversion to and from strings, and
# the stored fragments (ldb, written and read by hand).

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mkbitmap() {
	touch "$1"
	setfattr -n user.kvfs.type -v bitmap "$1"
}

# fragment_of KEY OFFSET: the value (hex) of bitmap KEY's fragment "OFFSET".
fragment_of() {
	local meta version
	meta=$(ldb_value metadata "$(nskey_hex "$1")") || return 1
	version=${meta:18:16}
	ldb_value default "${NS_HEX}$(printf '%08X' "${#1}")$(hexof "$1")${version}$(hexof "$2")"
}

@test "touch and user.kvfs.type=bitmap make an empty bitmap, kept across a remount" {
	mkbitmap "$NS/b"
	assert_eq "$(kvfs_type "$NS/b")" bitmap "type"
	assert_size "$NS/b" 0
	kvfs_remount
	assert_eq "$(kvfs_type "$NS/b")" bitmap "type after remount"
	assert_size "$NS/b" 0
	kvfs_unmount
	# Kvrocks has no empty bitmap: nothing in __namespace, a record in __kvfs
	run ldb_value metadata "$(nskey_hex b)"
	[ "$status" -ne 0 ]
	run ldb_value metadata "065F5F6B76667345${NS_HEX}62"
	assert_eq "$output" "810000000000000000$(hexof bitmap)" "empty-collection record"
}

@test "bytes written read back unchanged (Redis order), also after a remount" {
	mkbitmap "$NS/b"
	printf '\x80\x01\xff' >"$NS/b"
	assert_eq "$(xxd -p "$NS/b")" 8001ff "bytes"
	assert_size "$NS/b" 3
	assert_eq "$(kvfs_type "$NS/b")" bitmap "type after the write"
	kvfs_remount
	assert_eq "$(xxd -p "$NS/b")" 8001ff "bytes after remount"
}

@test "SETBIT-like layout: fragment \"0\" holds the bytes LSB-first, size in the metadata" {
	mkbitmap "$NS/b"
	printf '\x80\x01' >"$NS/b"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex b)"
	[[ $output =~ ^860000000000000000[0-9A-F]{16}0000000000000002$ ]] || {
		echo "metadata of b: $output" >&2
		false
	}
	run fragment_of b 0
	assert_eq "$output" 0180 "fragment 0 (bit 0 -> 01, bit 15 -> 80)"
}

@test "a write at an offset leaves a hole of zeros and stores no fragment for it" {
	mkbitmap "$NS/b"
	printf 'A' | dd of="$NS/b" bs=1 seek=5000 conv=notrunc status=none
	assert_size "$NS/b" 5001
	assert_eq "$(head -c 5000 "$NS/b" | tr -d '\0' | wc -c)" 0 "hole reads as zeros"
	assert_eq "$(tail -c 1 "$NS/b")" A "the byte written"
	kvfs_unmount
	run fragment_of b 0
	[ "$status" -ne 0 ]
	run fragment_of b 4096
	# 'A' = 0x41 reversed is 0x82, at 5000 - 4096 = 904
	assert_eq "$output" "$(printf '%01808d' 0)82" "fragment 4096"
}

@test "st_size is the size Kvrocks records, holes included; truncate shrinks and grows" {
	mkbitmap "$NS/b"
	printf '\xff\xff\xff' >"$NS/b"
	truncate -s 1 "$NS/b"
	assert_eq "$(xxd -p "$NS/b")" ff "shrunk"
	truncate -s 3 "$NS/b"
	assert_eq "$(xxd -p "$NS/b")" ff0000 "grown with zeros"
	assert_size "$NS/b" 3
	truncate -s 0 "$NS/b"
	assert_size "$NS/b" 0
	assert_eq "$(kvfs_type "$NS/b")" bitmap "an empty bitmap stays one"
}

@test "a bitmap written by hand in Kvrocks's layout reads in Redis order" {
	kvfs_unmount
	# metadata 86 | no expiry | version | size 3; fragment "0" = 01 (bit 0)
	version=0005F3A2B4C6D800
	ldb_put metadata "$(nskey_hex kb)" "860000000000000000${version}0000000000000003"
	ldb_put default "${NS_HEX}000000026B62${version}30" 01
	kvfs_mount
	assert_eq "$(kvfs_type "$NS/kb")" bitmap "type"
	assert_size "$NS/kb" 3
	assert_eq "$(xxd -p "$NS/kb")" 800000 "bytes"
}

@test "a non-empty string becomes a bitmap with the same bytes, and back" {
	printf 'hello' >"$NS/s"
	setfattr -n user.kvfs.type -v bitmap "$NS/s"
	assert_eq "$(kvfs_type "$NS/s")" bitmap "type"
	assert_bytes "$NS/s" hello
	setfattr -n user.kvfs.type -v string "$NS/s"
	assert_eq "$(kvfs_type "$NS/s")" string "type back"
	assert_bytes "$NS/s" hello
}

@test "user.kvfs.type=bitmap on a file still open for writing keeps its bytes" {
	run python3 -c '
import os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
os.write(fd, b"\x01\x02")
os.setxattr(sys.argv[1], "user.kvfs.type", b"bitmap")
os.write(fd, b"\x03")
os.close(fd)
' "$NS/b"
	[ "$status" -eq 0 ]
	assert_eq "$(kvfs_type "$NS/b")" bitmap "type"
	assert_eq "$(xxd -p "$NS/b")" 010203 "bytes"
}

@test "a bitmap cannot become a directory type (EINVAL)" {
	mkbitmap "$NS/b"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"list")' "$NS/b"
	assert_eq "$output" EINVAL
	assert_eq "$(kvfs_type "$NS/b")" bitmap "type"
}

@test "rm deletes a bitmap" {
	mkbitmap "$NS/b"
	printf x >"$NS/b"
	rm "$NS/b"
	[ ! -e "$NS/b" ]
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex b)"
	[ "$status" -ne 0 ]
}
