#!/usr/bin/env bats
# Times that tell the truth for every type (issue 18 item 3): one key of
# each of the 14 types is copied out with rsync -aX, changed with a
# same-size change a second later (through a file write, an input, an
# action, a JSON path name, a compaction rule), copied again without
# --checksum, and the copy must equal the mount byte for byte, xattrs
# included; find -newer sees every change; touch -d is stored for every
# type.

load helper

setup() {
	kvfs_setup
	kvfs_mount
	PLAIN=$BATS_TEST_TMPDIR/plain
}

TYPES="str bm doc h l s z si st ts tsd hll bf td tk"

# One key of each of the 14 types (ts and its rule's destination tsd are
# both time series).
make_keys() {
	local d=$1
	printf 'abc' >"$d/str"
	touch "$d/bm"
	setfattr -n user.kvfs.type -v bitmap "$d/bm"
	printf 'xyz' >"$d/bm"
	touch "$d/doc"
	setfattr -n user.kvfs.type -v json "$d/doc"
	printf '{"a":2,"b":"x"}' >"$d/doc"
	mkdir "$d/h"
	echo v1 >"$d/h/f"
	mkdir "$d/l"
	setfattr -n user.kvfs.type -v list "$d/l"
	printf 'a\nb\n' >>"$d/l/.rpush"
	mkdir "$d/s"
	setfattr -n user.kvfs.type -v set "$d/s"
	touch "$d/s/aa"
	mkdir "$d/z"
	setfattr -n user.kvfs.type -v zset "$d/z"
	echo 1 >"$d/z/m"
	mkdir "$d/si"
	setfattr -n user.kvfs.type -v sortedint "$d/si"
	touch "$d/si/11"
	mkdir "$d/st"
	setfattr -n user.kvfs.type -v stream "$d/st"
	printf 'a\t1\n' >>"$d/st/.add"
	mkdir "$d/ts" "$d/tsd"
	setfattr -n user.kvfs.type -v timeseries "$d/ts"
	setfattr -n user.kvfs.type -v timeseries "$d/tsd"
	setfattr -n user.kvfs.ts.duplicate_policy -v last "$d/ts"
	setfattr -n user.kvfs.ts.rule.tsd -v 'last 1000 0' "$d/ts"
	printf '1000,1\n2000,1\n' >>"$d/ts/.add"
	mkdir "$d/hll"
	setfattr -n user.kvfs.type -v hyperloglog "$d/hll"
	echo a >>"$d/hll/.add"
	mkdir "$d/bf"
	setfattr -n user.kvfs.type -v bloom "$d/bf"
	echo a >>"$d/bf/.add"
	mkdir "$d/td"
	setfattr -n user.kvfs.type -v tdigest "$d/td"
	echo 1 >>"$d/td/.add"
	mkdir "$d/tk"
	setfattr -n user.kvfs.topk.k -v 1 "$d/tk"
	echo a >>"$d/tk/.add"
}

# A change of every key that keeps the size of every file it changes,
# through the paths a user has: a write, an input, an action, a JSON path
# name, a rule.
change_keys() {
	local d=$1
	printf 'abd' >"$d/str"
	printf 'xyw' >"$d/bm"
	echo 3 >"$d/doc:\$.a" # JSON.SET doc $.a 3: a path name
	echo v2 >"$d/h/f"
	cat "$d/l/.lpop" >/dev/null # LPOP, then RPUSH: a b -> b c
	echo c >>"$d/l/.rpush"
	rm "$d/s/aa"
	touch "$d/s/ab"
	cat "$d/z/m:incr" >/dev/null # ZINCRBY z 1 m: an action
	rm "$d/si/11"
	touch "$d/si/12"
	printf 'a\t2\n' >>"$d/st/.add"
	echo 'trim maxlen = 1' >"$d/st/.ctl"
	# a late sample in the closed bucket 1000: the rule rewrites tsd
	echo '1000,5' >>"$d/ts/.add"
	echo b >>"$d/hll/.add"
	echo b >>"$d/bf/.add"
	echo 1 >>"$d/td/.reset"
	echo 2 >>"$d/td/.add"
	echo b >>"$d/tk/.add"
}

# Every file and directory under $1 with its user.* xattrs, sorted, one
# "path name=value" line each (what rsync -X carries).
xattrs_of() {
	python3 -c '
import os, sys
top = sys.argv[1]
out = []
for root, dirs, files in os.walk(top):
    for n in [root] + [os.path.join(root, f) for f in files]:
        rel = os.path.relpath(n, top)
        for a in os.listxattr(n, follow_symlinks=False):
            if a.startswith("user."):
                out.append("%s %s=%r" % (rel, a, os.getxattr(n, a, follow_symlinks=False)))
print("\n".join(sorted(out)))
' "$1"
}

# The copy equals the mount: contents (diff -r) and xattrs.
same_tree() {
	diff -r "$NS" "$PLAIN"
	assert_eq "$(xattrs_of "$PLAIN")" "$(xattrs_of "$NS")" "xattrs of the copy"
}

@test "a second rsync -aX (no --checksum) after same-size changes of all 14 types copies every change" {
	make_keys "$NS"
	rsync -aX --delete "$NS/" "$PLAIN/"
	same_tree
	sleep 1.1 # rsync compares whole seconds, as on any disk
	change_keys "$NS"
	# the changes are the ones meant: same sizes, other bytes
	assert_eq "$(cat "$NS/doc")" '{"a":3,"b":"x"}' "doc"
	assert_eq "$(ls "$NS/l" | paste -sd' ')" "0 1" "list positions"
	assert_eq "$(cat "$NS/l/0" "$NS/l/1")" "bc" "list"
	assert_eq "$(cat "$NS/z/m")" 2 "score"
	assert_eq "$(cat "$NS/tsd/"*.csv | paste -sd' ')" "1000,5" "rule destination"
	assert_eq "$(cat "$NS/tk/heap")" $'1\tb' "top-k heap"
	! cmp -s "$NS/hll/registers" "$PLAIN/hll/registers"
	! cmp -s "$NS/bf/filter.0" "$PLAIN/bf/filter.0"
	! cmp -s "$NS/td/buffer" "$PLAIN/td/buffer"
	rsync -aX --delete "$NS/" "$PLAIN/"
	same_tree
	# and after a remount (stored times, not the kernel's)
	kvfs_remount
	rsync -aX --delete "$NS/" "$PLAIN/"
	same_tree
}

# The files and key directories under $NS newer than $1, sorted.
newer_than() {
	(cd "$NS" && find . -newer "$1" | sort)
}

@test "find -newer sees every change of every type: writes, inputs, actions, JSON path names, rules" {
	make_keys "$NS"
	local ref=$BATS_TEST_TMPDIR/ref
	sleep 1.1
	touch "$ref"
	sleep 1.1 # find compares nanoseconds, but make the point plain
	assert_eq "$(newer_than "$ref")" "" "nothing newer yet"
	change_keys "$NS"
	local want k f
	want=$(
		for k in $TYPES; do echo "./$k"; done
		# the files whose content changed
		echo ./h/f ./l/0 ./l/1 ./s/ab ./z/m ./si/12 ./hll/registers ./bf/chain \
			./bf/filter.0 ./td/buffer ./td/state ./tk/heap ./tk/buckets \
			./ts/00000000000000001000.csv ./tsd/00000000000000001000.csv | tr ' ' '\n'
		(cd "$NS" && ls st | sed 's|^|./st/|')
	)
	for f in $want; do
		newer_than "$ref" | grep -qxF -- "$f" || {
			echo "not newer: $f" >&2
			return 1
		}
	done
	# stored: the same after a remount
	kvfs_remount
	for f in $want; do
		newer_than "$ref" | grep -qxF -- "$f" || {
			echo "not newer after a remount: $f" >&2
			return 1
		}
	done
}

@test "touch -d is stored on every type, its entries and state files" {
	make_keys "$NS"
	local paths p
	paths=$(cd "$NS" && find . -mindepth 1 | sort)
	for p in $paths; do
		touch -d '2001-02-03 04:05:06' "$NS/$p"
	done
	for p in $paths; do
		assert_eq "$(stat -c %Y "$NS/$p")" 981173106 "mtime of $p"
	done
	kvfs_remount
	for p in $paths; do
		assert_eq "$(stat -c %Y "$NS/$p")" 981173106 "mtime of $p after a remount"
	done
	# every type is there
	assert_eq "$(cd "$NS" && ls | paste -sd' ')" "bf bm doc h hll l s si st str td tk ts tsd z"
}

@test "a change after touch -d moves mtime and ctime again, and the key directory's" {
	make_keys "$NS"
	local p
	for p in $TYPES h/f z/m l/0 hll/registers; do
		touch -d '2001-02-03 04:05:06' "$NS/$p"
	done
	change_keys "$NS"
	kvfs_remount
	now=$(date +%s)
	for p in $TYPES h/f z/m l/0 hll/registers; do
		m=$(stat -c %Y "$NS/$p")
		c=$(stat -c %Z "$NS/$p")
		[ "$m" -ge $((now - 60)) ] || {
			echo "mtime of $p: $m" >&2
			return 1
		}
		[ "$c" -ge $((now - 60)) ] || {
			echo "ctime of $p: $c" >&2
			return 1
		}
	done
}

@test "an expiry set or removed moves ctime, not mtime, of every type (as a setxattr on a disk)" {
	make_keys "$NS"
	local k
	for k in $TYPES; do
		touch -d '2001-02-03 04:05:06' "$NS/$k"
	done
	sleep 1.1
	start=$(date +%s)
	for k in $TYPES; do
		setfattr -n user.kvfs.ttl -v 600000 "$NS/$k"
	done
	kvfs_remount
	for k in $TYPES; do
		assert_eq "$(stat -c %Y "$NS/$k")" 981173106 "mtime of $k"
		[ "$(stat -c %Z "$NS/$k")" -ge "$start" ] || {
			echo "ctime of $k: $(stat -c %Z "$NS/$k")" >&2
			return 1
		}
	done
	# removing it (PERSIST) too
	touch -d '2001-02-03 04:05:06' "$NS/str"
	sleep 1.1
	start=$(date +%s)
	setfattr -x user.kvfs.expireat "$NS/str"
	kvfs_remount
	assert_eq "$(stat -c %Y "$NS/str")" 981173106 "mtime after PERSIST"
	[ "$(stat -c %Z "$NS/str")" -ge "$start" ]
}

# chmod, chown and a user.* attribute set or removed move ctime, as on a
# disk, and keep mtime and atime: on a key of every type, a hash field and
# a list element, after a remount too.
@test "chmod, chown, setfattr and setfattr -x move ctime, not mtime, of keys and entries" {
	make_keys "$NS"
	local p paths="h/f l/0"
	for p in $TYPES; do
		paths="$paths $p"
	done
	for p in $paths; do
		touch -d '2001-02-03 04:05:06' "$NS/$p"
	done
	local step
	for step in chmod chown set remove; do
		sleep 1.1
		start=$(date +%s)
		for p in $paths; do
			case $step in
			chmod) chmod 640 "$NS/$p" ;;
			chown) chown 1234:1234 "$NS/$p" ;;
			set) setfattr -n user.note -v "x" "$NS/$p" ;;
			remove) setfattr -x user.note "$NS/$p" ;;
			esac
		done
		kvfs_remount
		for p in $paths; do
			assert_eq "$(stat -c %Y "$NS/$p")" 981173106 "mtime of $p after $step"
			[ "$(stat -c %Z "$NS/$p")" -ge "$start" ] || {
				echo "ctime of $p after $step: $(stat -c %Z "$NS/$p")" >&2
				return 1
			}
		done
	done
	assert_eq "$(stat -c '%a %u' "$NS/h/f")" "640 1234"
}
