#!/usr/bin/env bats
# user.kvfs.ttl: the remaining time to live of a key, in milliseconds.
# Setting it sets the expiry, 0 drops the key at once (PEXPIRE key 0),
# removing it makes the key persistent; expired keys leave the tree.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

ttl_of() {
	getfattr --absolute-names --only-values -n user.kvfs.ttl -- "$1"
}

@test "a key without expiry has no user.kvfs.ttl (ENODATA) and lists only its type" {
	echo v >"$NS/k"
	run errno_of 'os.getxattr(a[0], "user.kvfs.ttl")' "$NS/k"
	assert_eq "$output" ENODATA
	run python3 -c 'import os,sys; print(",".join(sorted(os.listxattr(sys.argv[1]))))' "$NS/k"
	assert_eq "$output" user.kvfs.type
}

@test "setting user.kvfs.ttl gives the key an expiry that reads back and is listed" {
	echo v >"$NS/k"
	setfattr -n user.kvfs.ttl -v 100000 "$NS/k"
	ttl=$(ttl_of "$NS/k")
	[ "$ttl" -gt 90000 ] && [ "$ttl" -le 100000 ]
	run python3 -c 'import os,sys; print(",".join(sorted(os.listxattr(sys.argv[1]))))' "$NS/k"
	assert_eq "$output" user.kvfs.ttl,user.kvfs.type
	kvfs_remount
	ttl=$(ttl_of "$NS/k")
	[ "$ttl" -gt 80000 ] && [ "$ttl" -le 100000 ]
}

@test "an expired string disappears from the tree without a remount" {
	echo v >"$NS/k"
	echo w >"$NS/keep"
	setfattr -n user.kvfs.ttl -v 300 "$NS/k"
	assert_bytes "$NS/k" $'v\n'
	sleep 0.5
	[ ! -e "$NS/k" ]
	run ls "$NS"
	assert_eq "$output" keep
}

@test "an expired hash disappears with its fields" {
	mkdir "$NS/h"
	echo 1 >"$NS/h/a"
	setfattr -n user.kvfs.ttl -v 300 "$NS/h"
	sleep 0.5
	[ ! -e "$NS/h" ]
	[ ! -e "$NS/h/a" ]
}

@test "user.kvfs.ttl 0 drops a whole hash at once" {
	mkdir "$NS/h"
	for i in $(seq 1 50); do echo "$i" >"$NS/h/f$i"; done
	setfattr -n user.kvfs.ttl -v 0 "$NS/h"
	[ ! -e "$NS/h" ]
	run ls "$NS"
	assert_eq "$output" ""
	kvfs_remount
	[ ! -e "$NS/h" ]
	# the name is free for a new key
	echo new >"$NS/h"
	assert_bytes "$NS/h" $'new\n'
}

@test "removing user.kvfs.ttl makes the key persistent" {
	echo v >"$NS/k"
	setfattr -n user.kvfs.ttl -v 400 "$NS/k"
	setfattr -x user.kvfs.ttl "$NS/k"
	sleep 0.6
	assert_bytes "$NS/k" $'v\n'
	run errno_of 'os.getxattr(a[0], "user.kvfs.ttl")' "$NS/k"
	assert_eq "$output" ENODATA
}

@test "a ttl that is not a number is refused with EINVAL and changes nothing" {
	echo v >"$NS/k"
	run errno_of 'os.setxattr(a[0], "user.kvfs.ttl", b"soon")' "$NS/k"
	assert_eq "$output" EINVAL
	run errno_of 'os.getxattr(a[0], "user.kvfs.ttl")' "$NS/k"
	assert_eq "$output" ENODATA
	grep -q "not a number of milliseconds" "$KVFS_LOG"
}

@test "an empty hash keeps an expiry pending until its first field (Kvrocks keeps none for it)" {
	mkdir "$NS/e"
	setfattr -n user.kvfs.ttl -v 100000 "$NS/e"
	ttl=$(getfattr --only-values -n user.kvfs.ttl "$NS/e")
	[ "$ttl" -gt 90000 ] && [ "$ttl" -le 100000 ]
	echo v >"$NS/e/f"
	ttl=$(getfattr --only-values -n user.kvfs.ttl "$NS/e")
	[ "$ttl" -gt 90000 ] && [ "$ttl" -le 100000 ]
}

@test "unknown attributes read as ENODATA; other namespaces and user.kvfs.* are refused (ENOTSUP)" {
	echo v >"$NS/k"
	run errno_of 'os.getxattr(a[0], "user.other")' "$NS/k"
	assert_eq "$output" ENODATA
	run errno_of 'os.getxattr(a[0], "security.capability")' "$NS/k"
	assert_eq "$output" ENODATA
	run errno_of 'os.setxattr(a[0], "trusted.x", b"x")' "$NS/k"
	assert_eq "$output" ENOTSUP
	run errno_of 'os.setxattr(a[0], "user.kvfs.other", b"x")' "$NS/k"
	assert_eq "$output" ENOTSUP
}

@test "user.kvfs.type cannot be removed (EPERM)" {
	echo v >"$NS/k"
	run errno_of 'os.removexattr(a[0], "user.kvfs.type")' "$NS/k"
	assert_eq "$output" EPERM
}
