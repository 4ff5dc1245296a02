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

at_of() {
	getfattr --absolute-names --only-values -n user.kvfs.expireat -- "$1"
}

now_ms() {
	date +%s%3N
}

@test "a key without expiry has no user.kvfs.ttl (ENODATA) and lists only its type" {
	echo v >"$NS/k"
	run errno_of 'os.getxattr(a[0], "user.kvfs.ttl")' "$NS/k"
	assert_eq "$output" ENODATA
	run python3 -c 'import os,sys; print(",".join(sorted(os.listxattr(sys.argv[1]))))' "$NS/k"
	assert_eq "$output" user.kvfs.type
}

@test "setting user.kvfs.ttl gives the key an expiry that reads back; the deadline is listed" {
	echo v >"$NS/k"
	setfattr -n user.kvfs.ttl -v 100000 "$NS/k"
	ttl=$(ttl_of "$NS/k")
	[ "$ttl" -gt 90000 ] && [ "$ttl" -le 100000 ]
	# listed: the absolute user.kvfs.expireat, not the ttl (a copy keeps
	# the deadline)
	run python3 -c 'import os,sys; print(",".join(sorted(os.listxattr(sys.argv[1]))))' "$NS/k"
	assert_eq "$output" user.kvfs.expireat,user.kvfs.type
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

# ---- user.kvfs.expireat: the deadline, Unix ms (PEXPIREAT, PEXPIRETIME)

@test "user.kvfs.expireat sets the deadline, reads it back exactly, and agrees with user.kvfs.ttl" {
	echo v >"$NS/k"
	mkdir "$NS/h"
	echo 1 >"$NS/h/f"
	run errno_of 'os.getxattr(a[0], "user.kvfs.expireat")' "$NS/k"
	assert_eq "$output" ENODATA
	at=$(($(now_ms) + 100000))
	setfattr -n user.kvfs.expireat -v "$at" "$NS/k"
	setfattr -n user.kvfs.expireat -v "$at" "$NS/h"
	assert_eq "$(at_of "$NS/k")" "$at" "deadline of k"
	assert_eq "$(at_of "$NS/h")" "$at" "deadline of h"
	ttl=$(ttl_of "$NS/k")
	[ "$ttl" -gt 90000 ] && [ "$ttl" -le 100000 ]
	# and the other way: a ttl shows as a deadline
	setfattr -n user.kvfs.ttl -v 50000 "$NS/h"
	d=$(($(at_of "$NS/h") - $(now_ms)))
	[ "$d" -gt 40000 ] && [ "$d" -le 50000 ]
	kvfs_remount
	assert_eq "$(at_of "$NS/k")" "$at" "deadline after a remount"
}

@test "a deadline passes: the key expires on time" {
	echo v >"$NS/k"
	setfattr -n user.kvfs.expireat -v $(($(now_ms) + 400)) "$NS/k"
	assert_bytes "$NS/k" $'v\n'
	sleep 0.7
	[ ! -e "$NS/k" ]
}

@test "a deadline in the past, 0 or negative deletes the key, as PEXPIREAT does" {
	echo v >"$NS/a"
	echo v >"$NS/b"
	mkdir "$NS/c"
	echo 1 >"$NS/c/f"
	setfattr -n user.kvfs.expireat -v $(($(now_ms) - 1000)) "$NS/a"
	setfattr -n user.kvfs.expireat -v 0 "$NS/b"
	setfattr -n user.kvfs.expireat -v -5 "$NS/c"
	run ls "$NS"
	assert_eq "$output" ""
	kvfs_remount
	run ls "$NS"
	assert_eq "$output" ""
}

@test "removing user.kvfs.expireat makes the key persistent; a key without expiry has none (ENODATA)" {
	echo v >"$NS/k"
	setfattr -n user.kvfs.expireat -v $(($(now_ms) + 400)) "$NS/k"
	setfattr -x user.kvfs.expireat "$NS/k"
	sleep 0.6
	assert_bytes "$NS/k" $'v\n'
	run errno_of 'os.getxattr(a[0], "user.kvfs.expireat")' "$NS/k"
	assert_eq "$output" ENODATA
	run errno_of 'os.removexattr(a[0], "user.kvfs.expireat")' "$NS/k"
	assert_eq "$output" ENODATA
}

@test "a deadline that is not a whole number is refused with EINVAL, logged, and changes nothing" {
	echo v >"$NS/k"
	at=$(($(now_ms) + 100000))
	setfattr -n user.kvfs.expireat -v "$at" "$NS/k"
	for bad in soon 12x 1.5 '' 99999999999999999999; do
		run errno_of 'os.setxattr(a[0], "user.kvfs.expireat", a[1].encode())' "$NS/k" "$bad"
		assert_eq "$output" EINVAL "expireat '$bad'"
	done
	assert_eq "$(at_of "$NS/k")" "$at" "deadline unchanged"
	assert_bytes "$NS/k" $'v\n'
	grep -q "user.kvfs.expireat: 'soon' is not a Unix time in milliseconds" "$KVFS_LOG"
}

@test "an empty directory keeps a deadline pending until its first entry" {
	mkdir "$NS/e"
	at=$(($(now_ms) + 100000))
	setfattr -n user.kvfs.expireat -v "$at" "$NS/e"
	assert_eq "$(at_of "$NS/e")" "$at"
	echo v >"$NS/e/f"
	assert_eq "$(at_of "$NS/e")" "$at"
}

@test "rsync -aX, cp -a and tar --xattrs out and back a few seconds later keep the original deadline" {
	echo v >"$NS/s"
	mkdir "$NS/h" "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	echo v >"$NS/h/f"
	echo 1.5 >"$NS/z/m"
	at=$(($(now_ms) + 100000))
	for k in s h z; do setfattr -n user.kvfs.expireat -v "$at" "$NS/$k"; done
	PLAIN=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$PLAIN/"
	assert_eq "$(getfattr --only-values -n user.kvfs.expireat "$PLAIN/s")" "$at" "the copy's"
	tar --xattrs --xattrs-include='user.*' -C "$PLAIN" -cf "$BATS_TEST_TMPDIR/t.tar" .
	sleep 2 # a ttl copied would now give deadlines 2 s later
	mkdir "$KVFS_MNT/r1" "$KVFS_MNT/r2" "$KVFS_MNT/r3"
	rsync -aX "$PLAIN/" "$KVFS_MNT/r1/"
	cp -a "$PLAIN/s" "$KVFS_MNT/r2/s"
	tar --xattrs --xattrs-include='user.*' -C "$KVFS_MNT/r3" -xf "$BATS_TEST_TMPDIR/t.tar"
	for k in s h z; do
		assert_eq "$(at_of "$KVFS_MNT/r1/$k")" "$at" "rsync -aX: deadline of $k"
		assert_eq "$(at_of "$KVFS_MNT/r3/$k")" "$at" "tar: deadline of $k"
	done
	assert_eq "$(at_of "$KVFS_MNT/r2/s")" "$at" "cp -a: deadline of s"
	assert_eq "$(kvfs_type "$KVFS_MNT/r1/z")" zset
	assert_bytes "$KVFS_MNT/r1/z/m" $'1.5\n'
	# and back over the original: still the same deadline
	rsync -aX "$PLAIN/" "$NS/"
	assert_eq "$(at_of "$NS/h")" "$at" "deadline of h restored in place"
}

@test "a copy restored after its keys' deadline does not bring them back (rsync reports them)" {
	echo v >"$NS/s"
	mkdir "$NS/h"
	echo v >"$NS/h/f"
	echo keep >"$NS/keep"
	at=$(($(now_ms) + 1500))
	setfattr -n user.kvfs.expireat -v "$at" "$NS/s"
	setfattr -n user.kvfs.expireat -v "$at" "$NS/h"
	PLAIN=$BATS_TEST_TMPDIR/plain
	rsync -aX "$NS/" "$PLAIN/"
	sleep 2
	[ ! -e "$NS/s" ] && [ ! -e "$NS/h" ]
	mkdir "$KVFS_MNT/r"
	run rsync -aX "$PLAIN/" "$KVFS_MNT/r/"
	assert_eq "$status" 23 "rsync: some files were not transferred"
	run ls "$KVFS_MNT/r"
	assert_eq "$output" keep
	kvfs_remount
	run ls "$KVFS_MNT/r"
	assert_eq "$output" keep
}
