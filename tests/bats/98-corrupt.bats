#!/usr/bin/env bats
# Corrupt records through a real mount (issue 15 items 4, 6, 7, 8, 15):
# counts read from the store are bounded before they size anything, a
# corrupt key reads as EIO with one log line naming it as the tree
# spells it, `rm`, `rm -r` and user.kvfs.ttl 0 delete it, and values out
# of range are refused on write and change nothing. Records are planted
# with ldb while unmounted.

load helper

# A version for planted keys: 4096.
VER=0000000000001000

# plant_meta KEY VALUEHEX: the metadata record of KEY in the default ns.
plant_meta() {
	ldb_put metadata "$(nskey_hex "$1")" "$2"
}

# The daemon's peak resident set, in kB.
peak_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$KVFS_PID/status"
}

@test "a bloom whose n_filters disagrees with bloom_bytes reads as EIO; the daemon stays small" {
	kvfs_mount
	kvfs_unmount
	# 65535 filters of capacity 2^32-1 at error 1e-9 (128 MiB each), but
	# bloom_bytes 128: loading the chain would take 8 TiB.
	plant_meta cb "890000000000000000${VER}0000000000000000FFFF0002FFFFFFFFBE112E0BE826D69500000080"
	kvfs_mount
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/cb/filter.0")" EIO "cat filter.0"
	assert_eq "$(errno_of 'os.listdir(a[0])' "$NS/cb")" EIO "ls"
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/cb/.card")" EIO "cat .card"
	peak=$(peak_kb)
	[ "$peak" -lt 262144 ] || { echo "peak RSS ${peak} kB" >&2; false; }
	grep -q "corrupt record of '__namespace/cb': bloom of 65535 filters" "$KVFS_LOG"
}

@test "rm of a key whose metadata does not decode deletes it; it is not listed, its name answers" {
	kvfs_mount
	kvfs_unmount
	# type id 15 does not exist
	plant_meta 'ju/nk' "8F0000000000000000${VER}0000000000000001"
	plant_meta ok 810000000000000000626172
	kvfs_mount
	assert_eq "$(ls "$NS")" ok "listing"
	grep -q "corrupt record of '__namespace/ju%2Fnk': metadata of 25 bytes, flags 0x8f: an unknown type id" "$KVFS_LOG"
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/ju%2Fnk")" EIO "cat"
	rm "$NS/ju%2Fnk"
	[ ! -e "$NS/ju%2Fnk" ]
	assert_bytes "$NS/ok" bar
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex 'ju/nk')"
	[ "$status" -ne 0 ]
}

@test "a hash of size 2^63 is corrupt; setfattr user.kvfs.ttl 0 deletes it" {
	kvfs_mount
	kvfs_unmount
	plant_meta h "820000000000000000${VER}8000000000000000"
	kvfs_mount
	assert_eq "$(errno_of 'os.listdir(a[0])' "$NS/h")" EIO "ls"
	grep -q "corrupt record of '__namespace/h': .*flags 0x82: a size of 2^63 or more" "$KVFS_LOG"
	setfattr -n user.kvfs.ttl -v 0 "$NS/h"
	[ ! -e "$NS/h" ]
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex h)"
	[ "$status" -ne 0 ]
}

@test "a bitmap of size 2^40 is not a 1 TiB file: EIO, and rm removes it" {
	kvfs_mount
	kvfs_unmount
	plant_meta b "860000000000000000${VER}0000010000000000"
	kvfs_mount
	assert_size "$NS/b" 0
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/b")" EIO "cat"
	rm "$NS/b"
	[ ! -e "$NS/b" ]
}

@test "a t-digest with 2^40 unmerged samples reads as EIO; rm -r deletes it" {
	kvfs_mount
	kvfs_unmount
	tail=000000640000026200000100000000000000000000000000
	tail+=00000000000000000000000000000000FFEFFFFFFFFFFFFF
	tail+=001000000000000000000000000000000000000000000000
	plant_meta td "8C0000000000000000${VER}0000000000000000${tail}"
	kvfs_mount
	assert_eq "$(errno_of 'open(a[0], "rb").read()' "$NS/td/buffer")" EIO "cat buffer"
	peak=$(peak_kb)
	[ "$peak" -lt 262144 ] || { echo "peak RSS ${peak} kB" >&2; false; }
	rm -rf "$NS/td"
	[ ! -e "$NS/td" ]
}

@test "t-digest centroids whose weights pass 2^53 together are refused and change nothing" {
	kvfs_mount
	mkdir "$NS/td"
	setfattr -n user.kvfs.type -v tdigest "$NS/td"
	printf '%s\n' 3 1 2 >"$NS/td/buffer"
	before=$(cat "$NS/td/state")
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC); os.write(fd, a[1].encode()); os.close(fd)' \
		"$NS/td/centroids" $'1 4503599627370496\n2 4503599627370496\n3 4503599627370496\n'
	assert_eq "$output" EINVAL "close of centroids"
	assert_eq "$(cat "$NS/td/state")" "$before" "state"
	[ ! -e "$NS/td/centroids" ]
	grep -q "brings the total past 2^53" "$KVFS_LOG"
}
