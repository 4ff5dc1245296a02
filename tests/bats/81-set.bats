#!/usr/bin/env bats
# Set keys are directories of empty member files (docs/mapping.md section
# 13): touch adds, rm removes, data written into a member is refused
# (EINVAL) and changes nothing, renames, conversion from a hash, and the
# stored bytes (ldb).

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mkset() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v set "$1"
}

@test "touch adds members, listed in byte order, as empty files" {
	mkset "$NS/s"
	touch "$NS/s/b" "$NS/s/a" "$NS/s/B"
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "B a b" "members"
	assert_size "$NS/s/a" 0
	assert_bytes "$NS/s/a" ""
	assert_eq "$(kvfs_type "$NS/s")" set "type"
	run stat -c %s "$NS/s"
	assert_eq "$output" 3 "directory size = cardinality"
	kvfs_remount
	assert_eq "$(ls -U "$NS/s" | paste -sd' ')" "B a b" "members after remount"
}

@test "touch of an existing member changes nothing" {
	mkset "$NS/s"
	touch "$NS/s/a"
	touch "$NS/s/a"
	assert_eq "$(ls -A "$NS/s")" a "members"
}

@test "rm removes a member; the last one leaves an empty set, which rmdir removes" {
	mkset "$NS/s"
	touch "$NS/s/a" "$NS/s/b"
	rm "$NS/s/a"
	assert_eq "$(ls -A "$NS/s")" b "members"
	rm "$NS/s/b"
	assert_eq "$(kvfs_type "$NS/s")" set "type of the empty set"
	kvfs_remount
	assert_eq "$(ls -A "$NS/s")" "" "members after remount"
	rmdir "$NS/s"
	[ ! -e "$NS/s" ]
}

@test "writing data into a new member fails with EINVAL and adds nothing" {
	mkset "$NS/s"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_TRUNC); os.write(fd, b"x")' \
		"$NS/s/m"
	assert_eq "$output" EINVAL
	run bash -c "echo data > '$NS/s/m2'"
	[ "$status" -ne 0 ]
	assert_eq "$(ls -A "$NS/s")" "" "members"
	grep -q "members of a set are empty files" "$KVFS_LOG"
}

@test "writing data into an existing member fails with EINVAL and keeps it" {
	mkset "$NS/s"
	touch "$NS/s/m"
	run errno_of 'fd = os.open(a[0], os.O_WRONLY); os.write(fd, b"x")' "$NS/s/m"
	assert_eq "$output" EINVAL
	assert_eq "$(ls -A "$NS/s")" m "members"
	assert_size "$NS/s/m" 0
}

@test "truncate to 0 is fine, to anything else EINVAL" {
	mkset "$NS/s"
	touch "$NS/s/m"
	truncate -s 0 "$NS/s/m"
	run errno_of 'os.truncate(a[0], 5)' "$NS/s/m"
	assert_eq "$output" EINVAL
	assert_size "$NS/s/m" 0
}

@test "mv renames a member in one batch, also onto an existing member" {
	mkset "$NS/s"
	touch "$NS/s/a" "$NS/s/b"
	mv "$NS/s/a" "$NS/s/c"
	assert_eq "$(ls -A "$NS/s" | paste -sd' ')" "b c" "members"
	mv "$NS/s/c" "$NS/s/b"
	assert_eq "$(ls -A "$NS/s" | paste -sd' ')" "b" "members"
	run stat -c %s "$NS/s"
	assert_eq "$output" 1 "cardinality"
}

@test "rsync's way of writing a member (temp name, rename) leaves no debris" {
	mkset "$NS/s"
	touch "$NS/s/.m.XyZ123"
	mv "$NS/s/.m.XyZ123" "$NS/s/m"
	assert_eq "$(ls -A "$NS/s")" m "members"
	kvfs_unmount
	! ldb_scan default | grep -qi "$(hexof XyZ123)"
}

@test "a hash whose fields are all empty converts to a set; one with data stays a hash" {
	mkdir "$NS/h"
	touch "$NS/h/x" "$NS/h/y"
	setfattr -n user.kvfs.type -v set "$NS/h"
	assert_eq "$(kvfs_type "$NS/h")" set "type"
	assert_eq "$(ls -A "$NS/h" | paste -sd' ')" "x y" "members"
	mkdir "$NS/h2"
	touch "$NS/h2/x"
	printf data >"$NS/h2/y"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"set")' "$NS/h2"
	assert_eq "$output" EINVAL
	assert_eq "$(kvfs_type "$NS/h2")" hash "type"
	assert_bytes "$NS/h2/y" data
}

@test "a set key that is a file operation's target: open for write of the directory is EISDIR" {
	mkset "$NS/s"
	run errno_of 'open(a[0], "w")' "$NS/s"
	assert_eq "$output" EISDIR
}

@test "SADD s m: metadata 84 + expire + version + size 1, sub-key m with an empty value" {
	mkset "$NS/s"
	touch "$NS/s/m"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex s)"
	[[ $output =~ ^840000000000000000([0-9A-F]{16})0000000000000001$ ]] || {
		echo "metadata of s: $output" >&2
		false
	}
	version=${BASH_REMATCH[1]}
	run ldb_scan default
	printf '%s\n' "$output" | grep -qx "0x${NS_HEX}0000000173${version}6D : 0x"
}

@test "a new member renamed while its file is still open (rsync's temp file) is listed at once" {
	mkdir "$NS/st"
	setfattr -n user.kvfs.type -v set "$NS/st"
	run python3 -c '
import os, sys
d = sys.argv[1]
fd = os.open(d + "/.b.XyZ123", os.O_WRONLY | os.O_CREAT)
os.rename(d + "/.b.XyZ123", d + "/b")
print(" ".join(sorted(os.listdir(d))))
os.close(fd)
' "$NS/st"
	[ "$status" -eq 0 ]
	assert_eq "$output" b "listed before the release"
	sleep 0.3
	assert_eq "$(ls -A "$NS/st")" b "after it"
}

@test "a new empty entry closed first by one of two handles is stored at the last close (rsync's temp file, opened again for its times)" {
	mkset "$NS/s"
	mkdir "$NS/si"
	setfattr -n user.kvfs.type -v sortedint "$NS/si"
	# The first close is not the last one: it leaves the entry for the
	# last close, which stores it; a rename between the two stores it
	# under the new name.
	run python3 -c '
import os, sys
for d in sys.argv[1:]:
    a = os.open(d + "/7", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    b = os.open(d + "/7", os.O_RDONLY)
    os.close(a)
    os.close(b)
    a = os.open(d + "/.8.XyZ123", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    b = os.open(d + "/.8.XyZ123", os.O_RDONLY)
    os.close(a)
    os.rename(d + "/.8.XyZ123", d + "/8")
    os.close(b)
' "$NS/s" "$NS/si"
	[ "$status" -eq 0 ] || { echo "$output" >&2; false; }
	kvfs_remount
	assert_eq "$(ls -A "$NS/s" | paste -sd' ')" "7 8" "set members after a remount"
	assert_eq "$(ls -A "$NS/si" | paste -sd' ')" "7 8" "sortedint ids after a remount"
}
