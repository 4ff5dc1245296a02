#!/usr/bin/env bash
# tests/bench/queue.sh NSDIR N [WAKES]: a list as a queue on a kvfs mount, as
# shell scripts drive it (docs/mapping.md, "Pushes, inserts and moves").
# Prints two lines, "NAME VALUE UNIT":
#   queue_ops   (pushes + pops) per second: one producer shell loop pushes N
#               elements (`echo e$i >> q/.rpush`, one open per push) while
#               one consumer shell loop pops them
#               (`while x=$(cat q/.blpop:5); do ...; done`), from the first
#               push to the last pop
#   queue_wake  the median and the largest time (ms) from a push to the
#               moment a shell blocked in `x=$(cat q/.blpop:10)` has the
#               element, over WAKES (default 20) pushes; each push starts
#               when the reader has waited 200 ms. The push's own open,
#               write and close and cat's exit are inside the figure.
# NSDIR: a namespace directory of the mount; the lists qbench and
# qwake are made there and removed at the end.
set -u
ns=$1 n=$2 wakes=${3:-20}
q=$ns/qbench
mkdir "$q" && setfattr -n user.kvfs.type -v list "$q" || exit 1

last=e$((n - 1))
t0=${EPOCHREALTIME/./}
(
	got=0
	while x=$(cat "$q/.blpop:5"); do
		got=$((got + 1))
		[ "$x" = "$last" ] && break
	done
	echo "$got" >"$q.count.tmp"
) 2>/dev/null &
consumer=$!
for ((i = 0; i < n; i++)); do
	echo "e$i" >>"$q/.rpush" || exit 1
done
wait "$consumer"
t1=${EPOCHREALTIME/./}
got=$(cat "$q.count.tmp" 2>/dev/null)
rm -f "$q.count.tmp"
if [ "${got:-0}" -ne "$n" ]; then
	echo "queue: the consumer got ${got:-0} of $n elements" >&2
	exit 1
fi
awk -v n="$n" -v d=$((t1 - t0)) 'BEGIN { printf "queue_ops %.0f ops/s\n", 2 * n / (d / 1e6) }'
rmdir "$q"

w=$ns/qwake
mkdir "$w" && setfattr -n user.kvfs.type -v list "$w" || exit 1
lat=()
for ((i = 0; i < wakes; i++)); do
	(
		x=$(cat "$w/.blpop:10") && echo "${EPOCHREALTIME/./}" >"$w.t.tmp"
	) &
	reader=$!
	sleep 0.2
	p0=${EPOCHREALTIME/./}
	echo "w$i" >>"$w/.rpush"
	wait "$reader"
	p1=$(cat "$w.t.tmp" 2>/dev/null) || {
		echo "queue: reader $i woke with nothing" >&2
		exit 1
	}
	lat+=($((p1 - p0)))
done
rm -f "$w.t.tmp"
rmdir "$w"
printf '%s\n' "${lat[@]}" | sort -n | awk '{ v[NR] = $1 }
	END { printf "queue_wake %.2f ms median, %.2f ms max\n", v[int((NR + 1) / 2)] / 1e3, v[NR] / 1e3 }'
