#!/usr/bin/env bats
# Permissions (issue 15, items 9-11): -o allow_other turns the kernel's
# permission checks on (default_permissions), every type shows the mode,
# owner and times it stores (JSON keys and their path names too), and a
# namespace keeps its chmod, chown and touch across a remount. Another
# user is uid/gid 65534 (as_nobody).

load helper

# One key of every type under $NS, each holding something.
make_keys() {
	local t
	echo secret >"$NS/string"
	printf '\x80' >"$NS/bitmap"
	setfattr -n user.kvfs.type -v bitmap "$NS/bitmap"
	echo '{"a":1}' >"$NS/json"
	setfattr -n user.kvfs.type -v json "$NS/json"
	for t in hash list set zset sortedint stream hyperloglog bloom tdigest topk timeseries; do
		mkdir "$NS/$t"
		[ "$t" = hash ] || setfattr -n user.kvfs.type -v "$t" "$NS/$t"
	done
	echo v >"$NS/hash/f"
	echo v >"$NS/list/0"
	touch "$NS/set/m"
	echo 1 >"$NS/zset/m"
	touch "$NS/sortedint/7"
	printf 'f\tv\n' >>"$NS/stream/.add"
	echo a >>"$NS/hyperloglog/.add"
	echo a >>"$NS/bloom/.add"
	echo 1 >>"$NS/tdigest/.add"
	echo a >>"$NS/topk/.add"
	echo 1700000000000,1 >>"$NS/timeseries/.add"
}

FILES="string bitmap json"
DIRS="hash list set zset sortedint stream hyperloglog bloom tdigest topk timeseries"

# can_read PATH: as another user, read the file or list the directory.
can_read() {
	if [ -d "$1" ]; then
		as_nobody "ls '$1' >/dev/null 2>&1"
	else
		as_nobody "cat '$1' >/dev/null 2>&1"
	fi
}

@test "-o allow_other alone turns on default_permissions: another user cannot read, overwrite or remove a 0600 key" {
	kvfs_mount -o allow_other
	grep -E " $KVFS_MNT fuse\.kvfs .*default_permissions" /proc/self/mounts
	echo secret >"$NS/k"
	echo open >"$NS/pub"
	as_nobody "cat '$NS/pub'" # the other user does get in
	chmod 600 "$NS/k"
	run as_nobody "cat '$NS/k'"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Permission denied"* ]]
	run as_nobody "echo evil >'$NS/k'"
	[ "$status" -ne 0 ]
	run as_nobody "rm -f '$NS/k'"
	[ "$status" -ne 0 ]
	assert_bytes "$NS/k" $'secret\n'
}

@test "-o allow_other,default_permissions is taken as it is" {
	kvfs_mount -o allow_other,default_permissions
	grep -E " $KVFS_MNT fuse\.kvfs .*default_permissions" /proc/self/mounts
}

@test "-o no_default_permissions opts out (unsafe, warned): another user reads a 0600 key" {
	kvfs_mount -o allow_other,no_default_permissions
	grep -q 'every user may read, change and remove every key' "$KVFS_LOG"
	run grep -E " $KVFS_MNT fuse\.kvfs .*default_permissions" /proc/self/mounts
	[ "$status" -ne 0 ]
	echo secret >"$NS/k"
	chmod 600 "$NS/k"
	run as_nobody "cat '$NS/k'"
	assert_eq "$output" secret
}

@test "chmod 600 on a key of every type: stat shows it, before and after a remount, and another user is kept out" {
	kvfs_mount -o allow_other
	make_keys
	for k in $FILES $DIRS; do
		can_read "$NS/$k" || {
			echo "$k: unreadable before chmod" >&2
			return 1
		}
		chmod 600 "$NS/$k"
		assert_eq "$(stat -c %a "$NS/$k")" 600 "$k"
	done
	kvfs_remount -o allow_other
	for k in $FILES $DIRS; do
		assert_eq "$(stat -c %a "$NS/$k")" 600 "$k after a remount"
		if can_read "$NS/$k"; then
			echo "$k: another user reads it" >&2
			return 1
		fi
	done
	[ -f "$NS/json" ] && [ -d "$NS/timeseries" ]
}

@test "a JSON key shows the owner and times that chown and touch store, also after a remount" {
	kvfs_mount
	echo '{"a":1}' >"$NS/j"
	setfattr -n user.kvfs.type -v json "$NS/j"
	chown 1234:5678 "$NS/j"
	touch -d '2001-02-03 04:05:06' "$NS/j"
	chmod 640 "$NS/j"
	want="640 1234:5678 $(date -d '2001-02-03 04:05:06' +%s)"
	assert_eq "$(stat -c '%a %u:%g %Y' "$NS/j")" "$want"
	kvfs_remount
	assert_eq "$(stat -c '%a %u:%g %Y' "$NS/j")" "$want" "after a remount"
	assert_eq "$(kvfs_type "$NS/j")" json
}

@test "a JSON path name shows its key's mode and owner: a 0600 document is not read through one" {
	kvfs_mount -o allow_other
	echo '{"a":{"b":42}}' >"$NS/doc"
	setfattr -n user.kvfs.type -v json "$NS/doc"
	run as_nobody "cat '$NS/doc:\$.a.b'"
	assert_eq "$output" 42
	chmod 600 "$NS/doc"
	chown 1234:5678 "$NS/doc"
	assert_eq "$(stat -c '%a %u:%g' "$NS/doc:\$.a.b")" "600 1234:5678"
	assert_eq "$(stat -c '%a %u:%g' "$NS/doc:\$.a:type")" "400 1234:5678" "a view"
	run as_nobody "cat '$NS/doc:\$.a.b'"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Permission denied"* ]]
}

@test "a namespace keeps chmod 700, chown and touch across a remount, and another user cannot enter it" {
	kvfs_mount -o allow_other
	mkdir "$KVFS_MNT/app"
	echo v >"$KVFS_MNT/app/k"
	echo v >"$NS/k"
	as_nobody "cat '$KVFS_MNT/app/k' '$NS/k' >/dev/null"
	for ns in "$NS" "$KVFS_MNT/app"; do
		chmod 700 "$ns"
		chown 1234:5678 "$ns"
		touch -d '2001-02-03 04:05:06' "$ns"
	done
	want="700 1234:5678 $(date -d '2001-02-03 04:05:06' +%s)"
	kvfs_remount -o allow_other
	for ns in "$NS" "$KVFS_MNT/app"; do
		assert_eq "$(stat -c '%a %u:%g %Y' "$ns")" "$want" "$ns"
		run as_nobody "cat '$ns/k'"
		[ "$status" -ne 0 ]
	done
	# -o ns=: the root is that namespace, with its attributes
	kvfs_remount -o ns=app
	assert_eq "$(stat -c '%a %u:%g %Y' "$KVFS_MNT")" "$want" "the root with -o ns=app"
}
