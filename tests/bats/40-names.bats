#!/usr/bin/env bats
# Name escaping (include/engine/names.h, docs/mapping.md): ordinary names are
# unchanged, "/" NUL "." ".." and names over 255 bytes are escaped
# reversibly. Stored bytes are checked with ldb.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# round_trip NAME: a key and a hash field called NAME are created, listed
# under exactly that name, readable, and survive a remount.
round_trip() {
	local name=$1
	printf 'v:%s' "$name" >"$NS/$name"
	mkdir -p "$NS/h"
	printf 'f:%s' "$name" >"$NS/h/$name"
	assert_eq "$(ls -A "$NS/h")" "$name" "field name listed"
	[[ $'\n'"$(ls -A "$NS")"$'\n' == *$'\n'"$name"$'\n'* ]]
	assert_bytes "$NS/$name" "v:$name"
	kvfs_remount
	assert_eq "$(ls -A "$NS/h")" "$name" "field name listed after remount"
	assert_bytes "$NS/$name" "v:$name"
	assert_bytes "$NS/h/$name" "f:$name"
}

# The key NAME exists in the metadata column family (unmounted).
assert_stored_key() {
	if ! ldb_value metadata "$(nskey_hex "$1")" >/dev/null; then
		echo "no metadata record for key hex $(hexof "$1")" >&2
		ldb_scan metadata >&2
		return 1
	fi
}

@test "a name with % round-trips unchanged" {
	round_trip '50%off'
	kvfs_unmount
	assert_stored_key '50%off'
}

@test "a name with % before non-hex characters round-trips unchanged" {
	round_trip 'a%zz%g'
}

@test "a UTF-8 name round-trips unchanged" {
	round_trip 'héllo-wörld-日本語'
	kvfs_unmount
	assert_stored_key 'héllo-wörld-日本語'
}

@test "a name with spaces round-trips unchanged" {
	round_trip ' a b  c '
	kvfs_unmount
	assert_stored_key ' a b  c '
}

@test "a name with shell-special characters round-trips unchanged" {
	round_trip $'tab\there*?[x]\'"\\'
}

@test "a%2Fb is stored as the key a/b and listed as a%2Fb" {
	printf v >"$NS/a%2Fb"
	assert_eq "$(ls -A "$NS")" 'a%2Fb' "name listed"
	assert_bytes "$NS/a%2Fb" v
	kvfs_unmount
	run ldb_value metadata "${NS_HEX}612F62"
	[ "$status" -eq 0 ]
	assert_eq "$output" 81000000000000000076 "value of key a/b"
	assert_eq "$(ldb_scan metadata | grep -c "^0x${NS_HEX}")" 1 "keys in __namespace"
}

@test "a field a%2Fb is stored as the field a/b" {
	mkdir "$NS/h"
	printf v >"$NS/h/a%2Fb"
	assert_eq "$(ls -A "$NS/h")" 'a%2Fb' "field listed"
	kvfs_unmount
	assert_eq "$(ldb_scan default | grep -cE "^0x${NS_HEX}0000000168[0-9A-F]{16}612F62 : 0x76\$")" 1 \
		"sub-key records of field a/b"
}

@test "%2E is the key . and %2E%2E the key .." {
	printf one >"$NS/%2E"
	printf two >"$NS/%2E%2E"
	run ls -A "$NS"
	assert_eq "$output" $'%2E\n%2E%2E' "names listed"
	assert_bytes "$NS/%2E" one
	assert_bytes "$NS/%2E%2E" two
	kvfs_unmount
	run ldb_value metadata "${NS_HEX}2E"
	assert_eq "$output" "810000000000000000$(hexof one)" "value of key ."
	run ldb_value metadata "${NS_HEX}2E2E"
	assert_eq "$output" "810000000000000000$(hexof two)" "value of key .."
}

@test "a name over 255 bytes fails with ENAMETOOLONG" {
	long=$(printf 'n%.0s' {1..256})
	run errno_of 'open(a[0], "w")' "$NS/$long"
	assert_eq "$output" ENAMETOOLONG "create with a 256-byte name"
	assert_eq "$(ls -A "$NS")" "" "keys after the failed create"
}

# A 300-byte key written by another writer (ldb), value "v".
put_long_key() {
	kvfs_unmount
	long_key=$(printf 'k%.0s' {1..300})
	ldb_put metadata "$(nskey_hex "$long_key")" 81000000000000000076
	kvfs_mount
}

@test "a 300-byte key is listed as a name of at most 255 bytes ending in %~ and 16 hex digits" {
	put_long_key
	run ls -A "$NS"
	[ "$status" -eq 0 ]
	[ "${#lines[@]}" -eq 1 ]
	name=${lines[0]}
	[ "${#name}" -le 255 ]
	[[ $name =~ ^k+%~[0-9a-f]{16}$ ]]
}

@test "a 300-byte key can be read through its listed name" {
	put_long_key
	name=$(ls -A "$NS")
	assert_bytes "$NS/$name" v
	assert_size "$NS/$name" 1
	run kvfs_type "$NS/$name"
	assert_eq "$output" string "user.kvfs.type"
}

@test "a 300-byte key can be written through its listed name" {
	put_long_key
	name=$(ls -A "$NS")
	printf new >"$NS/$name"
	assert_bytes "$NS/$name" new
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex "$long_key")"
	assert_eq "$output" "810000000000000000$(hexof new)" "value of the long key"
	assert_eq "$(ldb_scan metadata | grep -c "^0x${NS_HEX}")" 1 "keys in __namespace"
}
