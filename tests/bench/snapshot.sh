#!/usr/bin/env bash
# tests/bench/snapshot.sh KVFS WORKDIR [MIB]: `kvfs snapshot` of a database
# of MIB MiB (default 1024) of kvfs data, written through a kvfs mount:
# MIB string keys of 1 MiB of random bytes (blob files) and a hash of
# 20,000 100-byte fields (tables). Prints lines "NAME VALUE...":
#   snapshot_db        the database's disk use (du), KiB
#   snapshot_mounted   seconds for `kvfs snapshot` while the database is
#                      mounted read-write (the daemon flushes and links),
#                      and the extra disk use of the snapshot in KiB (du of
#                      the database and the snapshot together minus du of
#                      the database alone: hard links count once)
#   snapshot_unmounted the same for a database that is not mounted (kvfs
#                      opens it, links, closes)
# Everything goes in WORKDIR (on the database's file system, so that the
# tables can be hard links); it mounts at WORKDIR/mnt and unmounts, and
# removes the database and the snapshots at the end.
set -u
kvfs=$1 work=$2 mib=${3:-1024}
db=$work/snapdb mnt=$work/snapmnt
mkdir -p "$mnt" || exit 1
pid=

stop() {
	[ -n "$pid" ] || return 0
	fusermount3 -u "$mnt" 2>/dev/null
	wait "$pid"
	pid=
}
trap 'stop; rm -rf "$db" "$work"/snap1 "$work"/snap2' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

"$kvfs" -f "$db" "$mnt" </dev/null >>"$work/snapshot.log" 2>&1 &
pid=$!
for ((i = 0; i < 200; i++)); do
	mountpoint -q "$mnt" && break
	sleep 0.05
done
mountpoint -q "$mnt" || { echo "snapshot: kvfs did not mount" >&2; exit 1; }
ns=$mnt/__namespace
for ((i = 0; i < mib; i++)); do
	head -c 1048576 /dev/urandom >"$ns/big$i" || exit 1
done
mkdir "$ns/h"
val=$(head -c 75 /dev/urandom | base64 -w0)
for ((i = 0; i < 20000; i++)); do
	printf '%s' "$val" >"$ns/h/f$i"
done || exit 1

kib() { du -sk "$@" | awk '{ s += $1 } END { print s }'; }
# du of several paths counts a file with several links once.
extra() { echo $(($(du -skc "$db" "$1" | awk 'END { print $1 }') - $(kib "$db"))); }

t0=${EPOCHREALTIME/./}
"$kvfs" snapshot "$db" "$work/snap1" >/dev/null || exit 1
t1=${EPOCHREALTIME/./}
echo "snapshot_db $(kib "$db") KiB"
echo "snapshot_mounted $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e6 }') s, $(extra "$work/snap1") KiB extra"
stop
t0=${EPOCHREALTIME/./}
"$kvfs" snapshot "$db" "$work/snap2" >/dev/null || exit 1
t1=${EPOCHREALTIME/./}
echo "snapshot_unmounted $(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.3f", d / 1e6 }') s, $(extra "$work/snap2") KiB extra"
