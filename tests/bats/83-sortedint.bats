#!/usr/bin/env bats
# Sorted-int keys are directories of empty files named by decimal ids
# (docs/mapping.md section 15): touch adds, rm removes, ascending listing,
# refusal of other names and of data, scratch files and renames onto ids,
# conversion from a hash, and the stored bytes (ldb).

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mksi() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v sortedint "$1"
}

@test "touch adds ids, listed ascending as numbers" {
	mksi "$NS/i"
	touch "$NS/i/10" "$NS/i/9" "$NS/i/100" "$NS/i/0" "$NS/i/18446744073709551615"
	assert_eq "$(ls -U "$NS/i" | paste -sd' ')" "0 9 10 100 18446744073709551615" "ids"
	assert_size "$NS/i/9" 0
	assert_eq "$(kvfs_type "$NS/i")" sortedint "type"
	kvfs_remount
	assert_eq "$(ls -U "$NS/i" | paste -sd' ')" "0 9 10 100 18446744073709551615" "after remount"
}

@test "a name that is not an id is refused with EINVAL and creates nothing" {
	mksi "$NS/i"
	for bad in abc -1 1.5 18446744073709551616 ' 7' 7x; do
		run errno_of 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT))' "$NS/i/$bad"
		assert_eq "$output" EINVAL "errno for '$bad'"
	done
	run touch "$NS/i/abc"
	[ "$status" -ne 0 ]
	assert_eq "$(ls -A "$NS/i")" "" "ids"
	grep -q "create 'i/abc': no name a sortedint holds" "$KVFS_LOG"
}

@test "another spelling of an id reaches it: 007 is 7" {
	mksi "$NS/i"
	touch "$NS/i/7"
	[ -f "$NS/i/007" ]
	rm "$NS/i/007"
	assert_eq "$(ls -A "$NS/i")" "" "ids"
}

@test "a new id still open (not stored until its release) is found and removed by another spelling" {
	mksi "$NS/i"
	run python3 -c '
import os, sys
d = sys.argv[1]
fd = os.open(d + "/8", os.O_WRONLY | os.O_CREAT)
print(os.path.exists(d + "/008"))
os.unlink(d + "/008")
os.close(fd)
' "$NS/i"
	[ "$status" -eq 0 ]
	assert_eq "$output" True "found while open"
	sleep 0.3 # the release arrives in the background
	assert_eq "$(ls -A "$NS/i")" "" "ids"
}

@test "rm removes an id; the last one leaves an empty sortedint, which rmdir removes" {
	mksi "$NS/i"
	touch "$NS/i/1" "$NS/i/2"
	rm "$NS/i/1"
	assert_eq "$(ls -A "$NS/i")" 2 "ids"
	rm "$NS/i/2"
	assert_eq "$(kvfs_type "$NS/i")" sortedint "type"
	rmdir "$NS/i"
}

@test "writing data into an id fails with EINVAL and adds nothing" {
	mksi "$NS/i"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_CREAT); os.write(fd, b"x")' "$NS/i/5"
	assert_eq "$output" EINVAL
	assert_eq "$(ls -A "$NS/i")" "" "ids"
}

@test "hidden scratch files: a rename onto an id adds it, nothing else is stored" {
	mksi "$NS/i"
	touch "$NS/i/.5.AbC123"
	assert_eq "$(ls -A "$NS/i")" "" "not listed"
	mv "$NS/i/.5.AbC123" "$NS/i/5"
	assert_eq "$(ls -A "$NS/i")" 5 "ids"
	[ ! -e "$NS/i/.5.AbC123" ]
	touch "$NS/i/.x.XyZ123"
	run errno_of 'os.rename(a[0], a[1])' "$NS/i/.x.XyZ123" "$NS/i/abc"
	assert_eq "$output" EINVAL
	rm "$NS/i/.x.XyZ123"
	kvfs_unmount
	! ldb_scan default | grep -qi "$(hexof AbC123)"
}

@test "renaming one id onto another is EXDEV (mv copies, then removes)" {
	mksi "$NS/i"
	touch "$NS/i/1"
	run errno_of 'os.rename(a[0], a[1])' "$NS/i/1" "$NS/i/2"
	assert_eq "$output" EXDEV
	mv "$NS/i/1" "$NS/i/2"
	assert_eq "$(ls -A "$NS/i")" 2 "ids after mv"
}

@test "a hash of empty fields named by ids converts to a sortedint" {
	mkdir "$NS/h"
	touch "$NS/h/20" "$NS/h/3"
	setfattr -n user.kvfs.type -v sortedint "$NS/h"
	assert_eq "$(ls -U "$NS/h" | paste -sd' ')" "3 20" "ids"
	mkdir "$NS/h2"
	touch "$NS/h2/x"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"sortedint")' "$NS/h2"
	assert_eq "$output" EINVAL
	assert_eq "$(kvfs_type "$NS/h2")" hash "type"
}

@test "SIADD i 258: metadata 87 ... size 1, sub-key id u64 big-endian with an empty value" {
	mksi "$NS/i"
	touch "$NS/i/258"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex i)"
	[[ $output =~ ^870000000000000000([0-9A-F]{16})0000000000000001$ ]] || {
		echo "metadata of i: $output" >&2
		false
	}
	version=${BASH_REMATCH[1]}
	run ldb_scan default
	printf '%s\n' "$output" | grep -qx "0x${NS_HEX}0000000169${version}0000000000000102 : 0x"
}
