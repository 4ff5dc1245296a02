#!/bin/bash
# Run contention scenarios (tests/contention/contend.py) against real
# mounts, each on a fresh database: run, unmount (the daemon must exit 0),
# mount again and check the tree against the saved model; for `mixed`
# also compare the hash's stored size with its sub-key records using ldb.
#
# Usage: [KVFS_BIN=build/kvfs] [STRESS_SECONDS=30] [STRESS_ROUNDS=1] \
#          tests/contention/stress.sh [SCENARIO...]   (default: all of them)
#
# Prints the driver's count lines; ends with "stress: N passed, N failed"
# and exits non-zero if any round failed. Work files live in a private
# temporary directory, removed at the end unless KVFS_KEEP=1 (or a round
# failed: then its database, daemon log and model are kept and named).

set -u
here=$(cd "$(dirname "$0")" && pwd)
: "${KVFS_BIN:=$here/../../build/kvfs}"
case $KVFS_BIN in /*) ;; *) KVFS_BIN=$PWD/$KVFS_BIN ;; esac
seconds=${STRESS_SECONDS:-30}
rounds=${STRESS_ROUNDS:-1}
driver=$here/contend.py

if [ $# -gt 0 ]; then
	scenarios=("$@")
else
	mapfile -t scenarios < <(python3 "$driver" list)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kvfs-stress.XXXXXX") || exit 2
pid=
mnt=

cleanup() {
	if [ -n "$pid" ]; then
		fusermount3 -u "$mnt" 2>/dev/null || fusermount3 -u -z "$mnt" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
}
trap cleanup EXIT

# mount DIR: start the daemon on DIR/db at DIR/mnt, wait (KVFS_MOUNT_WAIT
# seconds, default 120: reopening a database right after a long run replays
# a large write-ahead log) for the mount; on failure stop that daemon.
mount_it() {
	local i
	"$KVFS_BIN" -f "$1/db" "$1/mnt" </dev/null >>"$1/daemon.log" 2>&1 &
	pid=$!
	mnt=$1/mnt
	for ((i = 0; i < ${KVFS_MOUNT_WAIT:-120} * 20; i++)); do
		mountpoint -q "$1/mnt" && return 0
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.05
	done
	echo "stress: kvfs did not mount $1/mnt" >&2
	kill "$pid" 2>/dev/null
	wait "$pid" 2>/dev/null
	pid=
	fusermount3 -u -z "$1/mnt" 2>/dev/null
	return 1
}

# unmount DIR: unmount and require exit status 0 and a clean log.
unmount_it() {
	local i status=0
	for i in $(seq 40); do
		fusermount3 -u "$1/mnt" 2>/dev/null && break
		sleep 0.1
	done
	wait "$pid" || status=$?
	pid=
	if [ "$status" -ne 0 ]; then
		echo "stress: kvfs exited with status $status" >&2
		return 1
	fi
	if grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1/daemon.log"; then
		echo "stress: sanitizer report in the daemon log:" >&2
		grep -m 5 -A 12 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1/daemon.log" >&2
		return 1
	fi
}

# A database's RocksDB directory (the Kvrocks layout puts it in DB/db).
ldb_dir() {
	if [ -e "$1/db/db/CURRENT" ]; then echo "$1/db/db"; else echo "$1/db"; fi
}

passed=0
failed=0
for s in "${scenarios[@]}"; do
	for r in $(seq "$rounds"); do
		d=$work/$s.$r
		mkdir -p "$d/mnt"
		ok=1
		mount_it "$d" || ok=0
		if [ "$ok" = 1 ]; then
			python3 "$driver" run "$s" "$d/mnt/__namespace" "$d/state" "$seconds" || ok=0
			unmount_it "$d" || ok=0
		fi
		if [ -z "$pid" ] && mount_it "$d"; then
			python3 "$driver" check "$s" "$d/mnt/__namespace" "$d/state" || ok=0
			unmount_it "$d" || ok=0
		else
			ok=0
		fi
		if [ "$s" = mixed ] && [ -z "$pid" ]; then
			ldb --db="$(ldb_dir "$d")" --column_family=metadata --hex scan >"$d/meta.scan" &&
				ldb --db="$(ldb_dir "$d")" --column_family=default --hex scan >"$d/default.scan" &&
				python3 "$driver" ldb-hash "$d/meta.scan" "$d/default.scan" mh || ok=0
		fi
		if [ "$ok" = 1 ]; then
			passed=$((passed + 1))
		else
			failed=$((failed + 1))
			echo "stress: $s round $r FAILED (kept: $d)"
		fi
	done
done
echo "stress: $passed passed, $failed failed"
if [ "$failed" -eq 0 ] && [ -z "${KVFS_KEEP:-}" ]; then
	rm -rf "$work"
fi
[ "$failed" -eq 0 ]
