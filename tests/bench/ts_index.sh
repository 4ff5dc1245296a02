#!/usr/bin/env bash
# tests/bench/ts_index.sh KVFS WORKDIR [KEYS] [SERIES]: what the label
# index saves a namespace view. A namespace of KEYS string keys (default
# 20,000) and SERIES labelled time series (default 20, one sample each);
# `cat '.mget?sensor=temp'` is timed 20 times through the index, then 20
# times with the index's family dropped by ldb (kvfs then scans the
# namespace). Prints lines "NAME VALUE":
#   ts_index_mget   median ms of one read through the index
#   ts_scan_mget    median ms of one read by a scan
# Everything goes in WORKDIR; it mounts at WORKDIR/tsimnt and unmounts,
# and removes the database at the end.
set -u
kvfs=$1 work=$2 keys=${3:-20000} series=${4:-20}
db=$work/tsidb mnt=$work/tsimnt
mkdir -p "$mnt" || exit 1
pid=

start() {
	"$kvfs" -f "$db" "$mnt" </dev/null >>"$work/ts_index.log" 2>&1 &
	pid=$!
	for ((i = 0; i < 200; i++)); do
		mountpoint -q "$mnt" && return 0
		sleep 0.05
	done
	echo "ts_index: kvfs did not mount" >&2
	exit 1
}
stop() {
	[ -n "$pid" ] || return 0
	fusermount3 -u "$mnt" 2>/dev/null
	wait "$pid"
	pid=
}
trap 'stop; rm -rf "$db"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The median of 20 reads, in ms.
timed() {
	local i t0 t1
	for ((i = 0; i < 20; i++)); do
		t0=${EPOCHREALTIME/./}
		cat "$1" >/dev/null || exit 1
		t1=${EPOCHREALTIME/./}
		echo $((t1 - t0))
	done | sort -n | awk '{ v[NR] = $1 } END { printf "%.2f\n", (v[10] + v[11]) / 2000 }'
}

start
ns=$mnt/__namespace
python3 - "$ns" "$keys" <<'PY' || exit 1
import os, sys
ns, n = sys.argv[1], int(sys.argv[2])
for i in range(n):
    with open(os.path.join(ns, "k%06d" % i), "w") as f:
        f.write("v")
PY
for ((i = 0; i < series; i++)); do
	mkdir "$ns/ts$i" && setfattr -n user.kvfs.type -v timeseries "$ns/ts$i" &&
		setfattr -n user.kvfs.ts.label.sensor -v temp "$ns/ts$i" &&
		echo "1000,$i" >>"$ns/ts$i/.add" || exit 1
done
view="$ns/.mget?sensor=temp"
[ "$(wc -l <"$view")" -eq "$series" ] || { echo "ts_index: wrong answer" >&2; exit 1; }
echo "ts_index_mget $(timed "$view") ms"
stop
ldb --db="$db/db" drop_column_family index >/dev/null || exit 1
start
[ "$(wc -l <"$view")" -eq "$series" ] || { echo "ts_index: wrong answer (scan)" >&2; exit 1; }
echo "ts_scan_mget $(timed "$view") ms"
