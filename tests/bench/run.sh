#!/usr/bin/env bash
# tests/bench/run.sh BUILD: the benchmark harness behind `make bench`.
# Builds the bench tools into BUILD/bench/, then runs every workload side by
# side on tmpfs directly, through tests/bench/passthrough over tmpfs, on kvfs
# (fresh database), with a redis-cli shell loop against a private
# redis-server, and through the type layer in-process (tests/bench/typelayer).
# Prints a table of medians and writes it to BUILD/bench/results.md.
#
# Environment:
#   BENCH=quick (default, < 10 min on 2 cores) | full (the large sizes)
#   BENCH_RUNS, BENCH_SMALL_N, BENCH_REDIS_N, BENCH_NS_N, BENCH_HASH_N,
#   BENCH_DEL_N, BENCH_BIG_MIB, BENCH_RAND_SECS, BENCH_INCR_N,
#   BENCH_QUEUE_N, BENCH_RSYNC_N, BENCH_FOLLOW_N   override a size
#   BENCH_FOLLOW_MS   the follower's catch-up period in the lag row (50 ms)
#   BENCH_THREADS     FUSE loop threads for kvfs and the passthrough (4)
#   BENCH_TIMEOUT     entry/attr timeout of both (10 s, kvfs's default)
#   BENCH_WORKDIR     where the mount points and logs go (TMPDIR or /tmp)
#   BENCH_DB=disk     kvfs's database in BENCH_WORKDIR (a disk, as a user's
#                     would be) instead of on the tmpfs beside the
#                     passthrough's files (the default: like for like)
#   BENCH_KEEP=1      keep the work directory (database, logs)
# Everything it mounts it unmounts, and it stops only the processes it
# started, also when interrupted.

# Flag lists from pkg-config are split on purpose; bash -c scripts take
# their arguments as $1, $2.
# shellcheck disable=SC2046,SC2086,SC2016
set -uo pipefail
export LC_ALL=C

cd "$(dirname "$0")/../.." || exit 2
ROOT=$PWD
BUILD=$(realpath -m "${1:-build}")
BIN=$BUILD/bench
KVFS=$BUILD/kvfs
T_START=${EPOCHREALTIME/./}

MODE=${BENCH:-quick}
case $MODE in
quick) RUNS=3 HASH_N=200000 DEL_N=200000 RAND_SECS=2 ;;
full) RUNS=5 HASH_N=1000000 DEL_N=1000000 RAND_SECS=5 ;;
*)
	echo "run.sh: BENCH must be quick or full, not '$MODE'" >&2
	exit 2
	;;
esac
RUNS=${BENCH_RUNS:-$RUNS}
SMALL_N=${BENCH_SMALL_N:-20000}
REDIS_N=${BENCH_REDIS_N:-2000}
NS_N=${BENCH_NS_N:-100000}
HASH_N=${BENCH_HASH_N:-$HASH_N}
DEL_N=${BENCH_DEL_N:-$DEL_N}
BIG_MIB=${BENCH_BIG_MIB:-256}
RAND_SECS=${BENCH_RAND_SECS:-$RAND_SECS}
RAND_MAX=100000000
THREADS=${BENCH_THREADS:-4}
TIMEOUT=${BENCH_TIMEOUT:-10}
SIZE=100
VAL=$(printf 'v%.0s' $(seq 1 $SIZE))

say() { printf '%s\n' "$*" >&2; }
die() {
	say "run.sh: $*"
	exit 1
}

# ------------------------------------------------------------------ build

[ -x "$KVFS" ] || die "$KVFS is missing: run make first"
command -v pkg-config >/dev/null || die "pkg-config is missing (make deps)"
mkdir -p "$BIN" || die "cannot create $BIN"
BENCH_CFLAGS="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
 -Wformat=2 -Wno-format-nonliteral"
PKGS="fuse3 rocksdb libxxhash libcjson"
LIB_OBJS=
for o in "$BUILD"/obj/*/*.o; do
	[ -e "$o" ] && [ "${o##*/}" != main.o ] && LIB_OBJS="$LIB_OBJS $o"
done
[ -n "$LIB_OBJS" ] || die "no kvfs objects in $BUILD/obj (run make first)"
say "  CC      $BIN/passthrough $BIN/fsops $BIN/typelayer"
{
	cc $BENCH_CFLAGS $(pkg-config --cflags fuse3) -o "$BIN/passthrough" \
		tests/bench/passthrough.c $(pkg-config --libs fuse3) -lpthread &&
		cc $BENCH_CFLAGS -o "$BIN/fsops" tests/bench/fsops.c &&
		cc $BENCH_CFLAGS -D_GNU_SOURCE -DFUSE_USE_VERSION=314 -Iinclude \
			$(pkg-config --cflags $PKGS) -o "$BIN/typelayer" tests/bench/typelayer.c \
			$LIB_OBJS $(pkg-config --libs $PKGS) -lpthread -lm
} || die "building the bench tools failed"
FSOPS=$BIN/fsops
TL=$BIN/typelayer
PT=$BIN/passthrough
# Other builds may replace BUILD/kvfs while this runs: every mount uses
# this copy, so the whole table measures one binary.
cp -p "$KVFS" "$BIN/kvfs" || die "cannot copy $KVFS"
KVFS=$BIN/kvfs
KVFS_COMMIT=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -n "$(git -C "$ROOT" status --porcelain -- src include 2>/dev/null)" ] &&
	KVFS_COMMIT="$KVFS_COMMIT + uncommitted changes"
KVFS_COMMIT="$KVFS_COMMIT (binary built $(date -r "$KVFS" '+%H:%M:%S'))"


# ------------------------------------------------------- tools and redis

SUDO=$([ "$(id -u)" = 0 ] || echo sudo)
missing=
for t in redis-server:redis-server redis-cli:redis-tools rsync:rsync setfattr:attr \
	fusermount3:fuse3 mountpoint:util-linux; do
	command -v "${t%%:*}" >/dev/null 2>&1 || missing="$missing ${t#*:}"
done
if [ -n "$missing" ]; then
	say "installing:$missing"
	{ $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
		$SUDO apt-get install -y -qq $missing >/dev/null; } ||
		say "run.sh: could not install$missing; those columns will be empty"
fi
[ -c /dev/fuse ] || die "/dev/fuse is missing: FUSE benchmarks need it"
command -v fusermount3 >/dev/null || die "fusermount3 is missing (make deps)"

# ------------------------------------------------------ state and cleanup

WORK=$(mktemp -d "${BENCH_WORKDIR:-${TMPDIR:-/tmp}}/kvfs-bench.XXXXXX") || die "mktemp failed"
LOGS=$WORK/logs
mkdir -p "$LOGS"
KMNT=$WORK/kvfs-mnt
PTM=$WORK/pt-mnt
TMPFS=$WORK/tmpfs
SOCK=$WORK/redis.sock
mkdir -p "$KMNT" "$PTM" "$TMPFS"
KV_PID='' PT_PID='' REDIS_PID='' OWN_TMPFS='' SHM_DIR='' RSS_HOW='' FW_PID=''
FMNT=$WORK/follow-mnt
declare -A RES    # "row|system" -> values of the runs, space-separated
NOTES=()          # lines printed under the table
declare -A RSS    # "row|system" -> growth in KiB of the runs
note() { NOTES+=("$*"); say "note: $*"; }

# Two costs of this machine that bound the large-value rows: fresh memory
# (every copy of a 256 MiB value is one) and RocksDB's CRC32C (the WAL and
# each blob read checksum the whole value; a portable build computes it
# in software). Measured first, on the quiet machine.
MEMTOUCH=$("$BIN/fsops" memtouch - 256 2>/dev/null || echo "?")
CRC=$(timeout 120 db_bench --benchmarks=crc32c --db="$WORK/db_bench" 2>/dev/null |
	awk '/^crc32c/ { for (i = 1; i < NF; i++) if ($(i + 1) == "MB/s") print $i }')

is_mounted() { awk -v m="$1" '($5 "") == m { f = 1 } END { exit !f }' /proc/self/mountinfo; }
alive() {
	local s
	s=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	s=${s##*) }
	[ "${s%% *}" != Z ]
}

# fuse_stop MNT PID NAME: unmount, wait for the daemon, check its status.
fuse_stop() {
	local mnt=$1 pid=$2 name=$3 i st=0
	[ -n "$pid" ] || return 0
	for ((i = 0; i < 60; i++)); do
		is_mounted "$mnt" || break
		fusermount3 -u "$mnt" 2>/dev/null && break
		sleep 0.05
	done
	if is_mounted "$mnt"; then
		note "$name: $mnt stayed busy; detached it lazily"
		fusermount3 -u -z "$mnt" 2>/dev/null
	fi
	for ((i = 0; i < 1200; i++)); do
		alive "$pid" || break
		sleep 0.05
	done
	if alive "$pid"; then
		note "$name (pid $pid) did not exit 60 s after the unmount; killed"
		kill -9 "$pid" 2>/dev/null
	fi
	wait "$pid" 2>/dev/null || st=$?
	[ "$st" = 0 ] || note "$name exited with status $st after the unmount"
}

cleanup() {
	trap - EXIT INT TERM
	fuse_stop "$FMNT" "$FW_PID" follower
	FW_PID=
	fuse_stop "$KMNT" "$KV_PID" kvfs
	KV_PID=
	fuse_stop "$PTM" "$PT_PID" passthrough
	PT_PID=
	if [ -n "$REDIS_PID" ]; then
		kill "$REDIS_PID" 2>/dev/null
		wait "$REDIS_PID" 2>/dev/null
		REDIS_PID=
	fi
	[ -n "$OWN_TMPFS" ] && umount "$TMPFS" 2>/dev/null
	[ -n "$SHM_DIR" ] && rm -rf --one-file-system "$SHM_DIR"
	rm -rf "$BIN/logs"
	mkdir -p "$BIN/logs" && cp -r "$LOGS"/. "$BIN/logs/" 2>/dev/null
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		say "work directory kept: $WORK"
	elif ! is_mounted "$KMNT" && ! is_mounted "$PTM" && ! is_mounted "$TMPFS" &&
		! is_mounted "$FMNT"; then
		rm -rf --one-file-system "$WORK"
	fi
}
trap cleanup EXIT
trap 'say "interrupted"; exit 130' INT TERM

# The tmpfs: a private one if we may mount, else a directory in /dev/shm.
# No inode cap: full mode holds over two million files at once.
if mount -t tmpfs -o size=80%,nr_inodes=0,mode=755 kvfs-bench "$TMPFS" 2>/dev/null; then
	OWN_TMPFS=1
else
	SHM_DIR=$(mktemp -d /dev/shm/kvfs-bench.XXXXXX) || die "no tmpfs to use"
	TMPFS=$SHM_DIR
fi
[ "$(stat -f -c %T "$TMPFS")" = tmpfs ] || die "$TMPFS is not a tmpfs"
DIRECT=$TMPFS/direct # tmpfs workloads
PTSRC=$TMPFS/pt      # the passthrough's source
# kvfs's database lives where the passthrough's files do, on the tmpfs,
# so the ratios compare the file systems and not a disk with memory.
# BENCH_DB=disk puts it in the work directory instead.
if [ "${BENCH_DB:-tmpfs}" = disk ]; then
	KDB=$WORK/kvfs-db
else
	KDB=$TMPFS/kvfs-db
fi
mkdir -p "$DIRECT" "$PTSRC" "$TMPFS/out"

# -------------------------------------------------------------- mounting

wait_mount() {
	local mnt=$1 pid=$2 name=$3 i
	for ((i = 0; i < 400; i++)); do
		alive "$pid" || {
			wait "$pid"
			note "$name exited (status $?) before mounting"
			return 1
		}
		mountpoint -q "$mnt" && return 0
		sleep 0.05
	done
	note "$name: $mnt not mounted after 20 s"
	return 1
}

kvfs_start() {
	echo "=== $(date +%T) kvfs -f -o timeout=$TIMEOUT -o threads=$THREADS $KDB $KMNT" >>"$LOGS/kvfs.log"
	"$KVFS" -f -o timeout="$TIMEOUT" -o threads="$THREADS" "$KDB" "$KMNT" \
		</dev/null >>"$LOGS/kvfs.log" 2>&1 &
	KV_PID=$!
	wait_mount "$KMNT" "$KV_PID" kvfs || {
		KV_PID=
		return 1
	}
}
kvfs_stop() {
	fuse_stop "$KMNT" "$KV_PID" kvfs
	KV_PID=
}
pt_start() {
	echo "=== $(date +%T) passthrough" >>"$LOGS/passthrough.log"
	"$PT" -f -o timeout="$TIMEOUT" -o threads="$THREADS" "$PTSRC" "$PTM" \
		</dev/null >>"$LOGS/passthrough.log" 2>&1 &
	PT_PID=$!
	wait_mount "$PTM" "$PT_PID" passthrough || {
		PT_PID=
		return 1
	}
}
pt_stop() {
	fuse_stop "$PTM" "$PT_PID" passthrough
	PT_PID=
}

# Make every system's caches cold: drop the kernel's caches when allowed,
# else remount both FUSE file systems.
DROP_OK=
if sync && echo 3 >/proc/sys/vm/drop_caches 2>/dev/null; then DROP_OK=1; fi
cold() {
	sync
	if [ -n "$DROP_OK" ]; then
		echo 3 >/proc/sys/vm/drop_caches
	else
		kvfs_stop
		pt_stop
		kvfs_start
		pt_start
	fi
}

# ------------------------------------------------------------ measuring

# A rate or time for one run of one workload on one system.
record() { RES["$1|$2"]+="$3 "; }

# measure ROW SYSTEM CMD...: run a tool that prints "VALUE UNIT".
measure() {
	local row=$1 sys=$2 out
	shift 2
	if out=$("$@" 2>"$LOGS/last.err"); then
		record "$row" "$sys" "$(awk 'END { print $1 }' <<<"$out")"
	else
		record "$row" "$sys" ERR
		note "$sys, $row: '$*' failed: $(head -c 300 "$LOGS/last.err")"
	fi
	cat "$LOGS/last.err" >>"$LOGS/errors.log"
}

# tsec CMD...: run CMD, set ELAPSED (seconds) from bash's clock.
tsec() {
	local t0=${EPOCHREALTIME/./} rc t1
	"$@"
	rc=$?
	t1=${EPOCHREALTIME/./}
	ELAPSED=$(awk -v d=$((t1 - t0)) 'BEGIN { printf "%.6f", d / 1e6 }')
	return $rc
}

# The daemon's RSS (KiB) and its peak since the last reset.
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }
hwm_kb() { awk '/^VmHWM:/ { print $2 }' "/proc/$1/status" 2>/dev/null; }

# ls_run ROW SYSTEM DIR WANT [PID]: time `ls -f DIR | wc -l`, check the count
# and, with PID, record the daemon's peak RSS growth during the listing.
ls_run() {
	local row=$1 sys=$2 dir=$3 want=$4 pid=${5:-} before=0 peak=0 n sampler='' hwm_ok=''
	if [ -n "$pid" ]; then
		echo 5 >"/proc/$pid/clear_refs" 2>/dev/null && hwm_ok=1
		RSS_HOW=${hwm_ok:+peak from VmHWM after resetting it (clear_refs 5)}
		RSS_HOW=${RSS_HOW:-peak of VmRSS sampled every 10 ms}
		before=$(rss_kb "$pid")
		if [ -z "$hwm_ok" ]; then # no peak reset: sample instead
			(
				p=0
				while [ ! -e "$LOGS/ls.stop" ]; do
					r=$(rss_kb "$pid")
					[ "${r:-0}" -gt "$p" ] && p=$r
					sleep 0.01
				done
				echo "$p" >"$LOGS/ls.peak"
			) &
			sampler=$!
		fi
	fi
	if tsec bash -c 'ls -f "$1" | wc -l >"$2"' _ "$dir" "$LOGS/ls.count"; then
		n=$(cat "$LOGS/ls.count")
		if [ "$n" -ne "$want" ]; then
			record "$row" "$sys" ERR
			note "$sys, $row: ls -f listed $n entries, expected $want"
		else
			record "$row" "$sys" "$ELAPSED"
		fi
	else
		record "$row" "$sys" ERR
		note "$sys, $row: ls -f $dir failed"
	fi
	if [ -n "$pid" ]; then
		if [ -n "$hwm_ok" ]; then
			peak=$(hwm_kb "$pid")
		else
			touch "$LOGS/ls.stop"
			wait "$sampler"
			rm -f "$LOGS/ls.stop"
			peak=$(cat "$LOGS/ls.peak")
		fi
		RSS["$row|$sys"]+="$((${peak:-0} - ${before:-0})) "
		RSS["$row|$sys.base"]=$before
	fi
}

# redis_loop VERB KEY N: one redis-cli process per command, as a shell user
# would write it.
redis_loop() {
	local verb=$1 key=$2 n=$3 i k
	for ((i = 0; i < n; i++)); do
		printf -v k 'k%06d' "$i"
		case $verb in
		SET) redis-cli -s "$SOCK" SET "$key:$k" "$VAL" ;;
		HSET) redis-cli -s "$SOCK" HSET "$key" "$k" "$VAL" ;;
		GET) redis-cli -s "$SOCK" GET "$key:$k" ;;
		HGET) redis-cli -s "$SOCK" HGET "$key" "$k" ;;
		esac >/dev/null || return 1
	done
}
redis_measure() {
	local row=$1 verb=$2 key=$3
	[ -n "$REDIS_PID" ] || return 0
	if tsec redis_loop "$verb" "$key" "$REDIS_N"; then
		record "$row" redis "$(awk -v n="$REDIS_N" -v t="$ELAPSED" 'BEGIN { print n / t }')"
	else
		record "$row" redis ERR
		note "redis-cli, $row: the $verb loop failed"
	fi
}
# redis_fill_hash KEY N / redis_fill_keys PREFIX N: bulk load (--pipe).
redis_fill_hash() {
	awk -v k="$1" -v n="$2" -v v="$VAL" \
		'BEGIN { for (i = 0; i < n; i++) printf "HSET %s k%06d %s\r\n", k, i, v }' |
		redis-cli -s "$SOCK" --pipe >/dev/null
}
redis_fill_keys() {
	awk -v p="$1" -v n="$2" -v v="$VAL" \
		'BEGIN { for (i = 0; i < n; i++) printf "SET %s:k%06d %s\r\n", p, i, v }' |
		redis-cli -s "$SOCK" --pipe >/dev/null
}

# typelayer's multi-line output "NAME VALUE UNIT" -> rows.
tl_small() {
	local dir=$WORK/tl-small out name v
	rm -rf "$dir"
	if ! out=$("$TL" small "$dir" "$SMALL_N" "$SIZE" 2>"$LOGS/last.err"); then
		note "type layer: small workloads failed: $(head -c 300 "$LOGS/last.err")"
		for name in create_s create_h stat_cold_s stat_cold_h stat_warm_s stat_warm_h cat_s cat_h; do
			record "$name" tl ERR
		done
		return
	fi
	while read -r name v _; do
		case $name in
		string_set) record create_s tl "$v" ;;
		hash_set) record create_h tl "$v" ;;
		ks_lookup) record stat_cold_s tl "$v" && record stat_warm_s tl "$v" ;;
		hash_strlen) record stat_cold_h tl "$v" && record stat_warm_h tl "$v" ;;
		string_get) record cat_s tl "$v" ;;
		hash_get) record cat_h tl "$v" ;;
		esac
	done <<<"$out"
	rm -rf "$dir"
}

# ------------------------------------------------------------- the runs

say "bench: $MODE mode, $RUNS runs; work directory $WORK; tmpfs $TMPFS"
pt_start || die "the passthrough did not mount"
kvfs_start || die "kvfs did not mount a fresh database"
if command -v redis-server >/dev/null && command -v redis-cli >/dev/null; then
	redis-server --port 0 --unixsocket "$SOCK" --unixsocketperm 700 --save '' \
		--appendonly no --dir "$WORK" --logfile "$LOGS/redis.log" &
	REDIS_PID=$!
	for ((i = 0; i < 100; i++)); do
		redis-cli -s "$SOCK" ping >/dev/null 2>&1 && break
		sleep 0.05
	done
	redis-cli -s "$SOCK" ping >/dev/null 2>&1 || {
		note "redis-server did not start; no redis-cli column"
		kill "$REDIS_PID" 2>/dev/null
		wait "$REDIS_PID" 2>/dev/null
		REDIS_PID=
	}
else
	note "redis-server/redis-cli not installed; no redis-cli column"
fi
KNS=$KMNT/__namespace

# 1. small values: create+write+close, stat (cold, warm), cat (warm)
for ((r = 1; r <= RUNS; r++)); do
	say "[$(date +%T)] small files, run $r/$RUNS"
	mkdir "$DIRECT/s$r" "$DIRECT/h$r" "$PTM/s$r" "$PTM/h$r" ||
		note "mkdir on tmpfs/passthrough failed"
	mkdir "$KMNT/s$r" || note "kvfs: mkdir of namespace s$r failed"
	mkdir "$KNS/h$r" || note "kvfs: mkdir of hash h$r failed"
	measure create_s tmpfs "$FSOPS" create "$DIRECT/s$r" "$SMALL_N" $SIZE
	measure create_s pt "$FSOPS" create "$PTM/s$r" "$SMALL_N" $SIZE
	measure create_s kvfs "$FSOPS" create "$KMNT/s$r" "$SMALL_N" $SIZE
	redis_measure create_s SET "s$r"
	measure create_h tmpfs "$FSOPS" create "$DIRECT/h$r" "$SMALL_N" $SIZE
	measure create_h pt "$FSOPS" create "$PTM/h$r" "$SMALL_N" $SIZE
	measure create_h kvfs "$FSOPS" create "$KNS/h$r" "$SMALL_N" $SIZE
	redis_measure create_h HSET "h$r"
	tl_small

	cold
	for x in s h; do
		kd=$KMNT/s$r
		[ $x = h ] && kd=$KNS/h$r
		measure stat_cold_$x tmpfs "$FSOPS" stat "$DIRECT/$x$r" "$SMALL_N"
		measure stat_cold_$x pt "$FSOPS" stat "$PTM/$x$r" "$SMALL_N"
		measure stat_cold_$x kvfs "$FSOPS" stat "$kd" "$SMALL_N"
	done
	for x in s h; do
		kd=$KMNT/s$r
		[ $x = h ] && kd=$KNS/h$r
		# Warm: every entry looked up (and read) by the pass just
		# before. The caches are dropped first, so no entry looked up
		# earlier reaches its timeout during the measured pass (which
		# one did depended on how long ago the other rows ran).
		for sd in "tmpfs $DIRECT/$x$r" "pt $PTM/$x$r" "kvfs $kd"; do
			cold
			"$FSOPS" stat "${sd#* }" "$SMALL_N" >/dev/null 2>&1 # warm up
			measure stat_warm_$x "${sd%% *}" "$FSOPS" stat "${sd#* }" "$SMALL_N"
		done
		for sd in "tmpfs $DIRECT/$x$r" "pt $PTM/$x$r" "kvfs $kd"; do
			cold
			"$FSOPS" cat "${sd#* }" "$SMALL_N" >/dev/null 2>&1 # warm up
			measure cat_$x "${sd%% *}" "$FSOPS" cat "${sd#* }" "$SMALL_N"
		done
	done
	redis_measure cat_s GET "s$r"
	redis_measure cat_h HGET "h$r"
done

# Counters (issue 17): INCR from a shell loop, one process per increment
# as a script does: `cat 'c:incr'` against `redis-cli INCR c`.
INCR_N=${BENCH_INCR_N:-2000}
incr_loop() { # cmd...: run it INCR_N times, output dropped
	local i
	for ((i = 0; i < INCR_N; i++)); do "$@" >/dev/null || return 1; done
}
for ((r = 1; r <= RUNS; r++)); do
	say "[$(date +%T)] counters, run $r/$RUNS"
	if tsec incr_loop cat "$KNS/incr$r:incr" && [ "$(cat "$KNS/incr$r")" = "$INCR_N" ]; then
		record incr kvfs "$(awk -v n="$INCR_N" -v t="$ELAPSED" 'BEGIN { print n / t }')"
	else
		record incr kvfs ERR
		note "kvfs, incr: the cat loop failed or did not count to $INCR_N"
	fi
	[ -n "$REDIS_PID" ] || continue
	if tsec incr_loop redis-cli -s "$SOCK" INCR "incr$r"; then
		record incr redis "$(awk -v n="$INCR_N" -v t="$ELAPSED" 'BEGIN { print n / t }')"
	else
		record incr redis ERR
	fi
done

# The small files but run 1's hash (the rsync source) are done with: free
# their tmpfs memory before the big fills.
find "$DIRECT" "$PTSRC" -mindepth 1 -maxdepth 1 -name '[sh][0-9]*' ! -name h1 -exec rm -rf {} +

# 2. big listings and deletions. kvfs's collections are filled in-process
# through the type layer while it is unmounted (faster than through FUSE).
kvfs_stop
say "[$(date +%T)] filling: $NS_N keys, a $HASH_N-field hash, $RUNS x 2 $DEL_N-field hashes"
fill() { # cmd...: run a fill; note a failure and return its status
	"$@" >/dev/null 2>"$LOGS/last.err" && return 0
	note "fill failed ($*): $(head -c 300 "$LOGS/last.err")"
	return 1
}
fill "$TL" fillns "$KDB" lsns "$NS_N" $SIZE
fill "$TL" fillhash "$KDB" __namespace lsbig "$HASH_N" $SIZE
for ((r = 1; r <= RUNS; r++)); do
	fill "$TL" fillhash "$KDB" __namespace "del$r" "$DEL_N" $SIZE
	fill "$TL" fillhash "$KDB" __namespace "tldel$r" "$DEL_N" $SIZE
done
say "[$(date +%T)] type layer: listing and deleting"
for ((r = 1; r <= RUNS; r++)); do
	if out=$("$TL" list "$KDB" lsns 2>>"$LOGS/errors.log") && [ "$(echo "$out" | awk '{ print $3 }')" = "$NS_N" ]; then
		record ls_ns tl "$(echo "$out" | awk '{ print $1 }')"
	else
		record ls_ns tl ERR
	fi
	if out=$("$TL" list "$KDB" __namespace lsbig 2>>"$LOGS/errors.log") && [ "$(echo "$out" | awk '{ print $3 }')" = "$HASH_N" ]; then
		record ls_h tl "$(echo "$out" | awk '{ print $1 }')"
	else
		record ls_h tl ERR
	fi
	measure del tl "$TL" del "$KDB" __namespace "tldel$r"
done
say "[$(date +%T)] filling tmpfs and redis"
mkdir -p "$PTSRC/lsns" "$PTSRC/lsbig"
fill "$FSOPS" create "$PTSRC/lsns" "$NS_N" $SIZE
fill "$FSOPS" create "$PTSRC/lsbig" "$HASH_N" $SIZE
if [ -n "$REDIS_PID" ]; then
	redis_fill_keys lsns "$NS_N"
	redis_fill_hash lsbig "$HASH_N"
fi
DB_BEFORE=$(du -sk --apparent-size "$KDB" | awk '{ print $1 }')
kvfs_start || die "kvfs did not mount the filled database"

for ((r = 1; r <= RUNS; r++)); do
	say "[$(date +%T)] ls -f, run $r/$RUNS"
	cold
	ls_run ls_ns tmpfs "$PTSRC/lsns" $((NS_N + 2))
	ls_run ls_ns pt "$PTM/lsns" $((NS_N + 2)) "$PT_PID"
	ls_run ls_ns kvfs "$KMNT/lsns" $((NS_N + 2)) "$KV_PID"
	ls_run ls_h tmpfs "$PTSRC/lsbig" $((HASH_N + 2))
	ls_run ls_h pt "$PTM/lsbig" $((HASH_N + 2)) "$PT_PID"
	ls_run ls_h kvfs "$KNS/lsbig" $((HASH_N + 2)) "$KV_PID"
	if [ -n "$REDIS_PID" ]; then
		if tsec bash -c 'redis-cli -s "$1" --scan --pattern "lsns:*" | wc -l >"$2"' _ "$SOCK" "$LOGS/ls.count" &&
			[ "$(cat "$LOGS/ls.count")" -eq "$NS_N" ]; then
			record ls_ns redis "$ELAPSED"
		else
			record ls_ns redis ERR
		fi
		if tsec bash -c 'redis-cli -s "$1" HKEYS lsbig | wc -l >"$2"' _ "$SOCK" "$LOGS/ls.count" &&
			[ "$(cat "$LOGS/ls.count")" -eq "$HASH_N" ]; then
			record ls_h redis "$ELAPSED"
		else
			record ls_h redis ERR
		fi
	fi
done

# 3. deleting a DEL_N-field hash
DEL_HOW=
# Wait (at most 10 s) until the machine is idle: after a fill of DEL_N
# files and an rm -rf of them, the kernel frees memory for a while, and
# the first requests to a daemon idle for minutes took 5-11 ms here
# whatever they were (a user.* setxattr on a one-byte key), 0.1-0.3 ms
# right after.
quiet() {
	local a b i
	for ((i = 0; i < 50; i++)); do
		a=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat)
		sleep 0.2
		b=$(awk '/^cpu / { print $2 + $3 + $4 + $7 + $8, $5 + $6 }' /proc/stat)
		# busy below 10 % of the ticks of the last 0.2 s
		awk -v a="$a" -v b="$b" 'BEGIN { split(a, x, " "); split(b, y, " ");
			busy = y[1] - x[1]; all = busy + y[2] - x[2];
			exit !(all > 0 && busy * 10 < all) }' && return 0
	done
	return 0
}
# The first write after a mount starts a new write-ahead log, which RocksDB
# preallocates with fallocate: cheap on a disk, 16 ms of zeroed pages on
# tmpfs. Pay it here, not in the first deletion timed below.
printf x >"$KNS/bench-warmup" && rm -f "$KNS/bench-warmup"
for ((r = 1; r <= RUNS; r++)); do
	say "[$(date +%T)] deleting a $DEL_N-field hash, run $r/$RUNS"
	# one directory at a time: in full mode each holds 4 GiB of tmpfs
	mkdir -p "$DIRECT/del$r" "$PTSRC/del$r"
	if fill "$FSOPS" create "$DIRECT/del$r" "$DEL_N" $SIZE && quiet && tsec rm -rf "$DIRECT/del$r"; then
		record del tmpfs "$(awk -v t="$ELAPSED" 'BEGIN { print t * 1e3 }')"
	else
		record del tmpfs ERR
	fi
	rm -rf "$DIRECT/del$r"
	if fill "$FSOPS" create "$PTSRC/del$r" "$DEL_N" $SIZE && quiet &&
		tsec rm -rf "$PTM/del$r" && [ ! -e "$PTSRC/del$r" ]; then
		record del pt "$(awk -v t="$ELAPSED" 'BEGIN { print t * 1e3 }')"
	else
		record del pt ERR
		note "passthrough: rm -rf of del$r failed"
	fi
	rm -rf "$PTSRC/del$r"
	d=$KNS/del$r
	# The call itself (setfattr(1) makes the same one): starting a process
	# takes 1-9 ms here, as long as the deletion or longer. The namespace
	# is looked up first, as by a shell user's ls or tab completion.
	quiet
	stat "$KNS" >/dev/null
	if out=$("$FSOPS" setxattr "$d" user.kvfs.ttl 0 2>"$LOGS/last.err"); then
		how="setxattr(2) user.kvfs.ttl = 0, timed by fsops setxattr (what setfattr -n user.kvfs.ttl -v 0 calls)"
		ELAPSED=$(awk -v ms="${out%% *}" 'BEGIN { print ms / 1e3 }')
	else
		err=$(head -c 200 "$LOGS/last.err")
		if tsec rm -rf "$d"; then
			how="rm -rf (setfattr user.kvfs.ttl failed: ${err:-no message})"
		else
			how="rm -rf, which failed"
			ELAPSED=
		fi
	fi
	if [ -n "$ELAPSED" ] && ! ls -d "$d" >/dev/null 2>&1; then
		record del kvfs "$(awk -v t="$ELAPSED" 'BEGIN { print t * 1e3 }')"
	elif [ -n "$ELAPSED" ]; then
		record del kvfs ERR
		note "kvfs: del$r still visible after: $how"
	else
		record del kvfs ERR
	fi
	case " $DEL_HOW " in *" [$how] "*) ;; *) DEL_HOW="$DEL_HOW [$how]" ;; esac
	if [ -n "$REDIS_PID" ]; then
		redis_fill_hash "del$r" "$DEL_N"
		if tsec redis-cli -s "$SOCK" DEL "del$r" >/dev/null; then
			record del redis "$(awk -v t="$ELAPSED" 'BEGIN { print t * 1e3 }')"
		else
			record del redis ERR
		fi
	fi
done
DB_AFTER=$(du -sk --apparent-size "$KDB" | awk '{ print $1 }')

# 4. one big value: sequential write, cold sequential read, random reads
COLD_HOW="kvfs and the passthrough remounted"
[ -n "$DROP_OK" ] && COLD_HOW="$COLD_HOW, kernel caches dropped (drop_caches)"
for ((r = 1; r <= RUNS; r++)); do
	say "[$(date +%T)] $BIG_MIB MiB value, run $r/$RUNS"
	measure seqw tmpfs "$FSOPS" seqwrite "$DIRECT/big" "$BIG_MIB"
	measure seqw pt "$FSOPS" seqwrite "$PTM/big" "$BIG_MIB"
	measure seqw kvfs "$FSOPS" seqwrite "$KNS/big" "$BIG_MIB"
	sync
	kvfs_stop
	pt_stop
	[ -n "$DROP_OK" ] && echo 3 >/proc/sys/vm/drop_caches
	kvfs_start || die "kvfs did not mount again"
	pt_start || die "the passthrough did not mount again"
	for sf in "tmpfs $DIRECT/big" "pt $PTM/big" "kvfs $KNS/big"; do
		measure seqr "${sf%% *}" "$FSOPS" seqread "${sf#* }"
	done
	for sf in "tmpfs $DIRECT/big" "pt $PTM/big" "kvfs $KNS/big"; do
		measure randd "${sf%% *}" "$FSOPS" randread "${sf#* }" "$RAND_SECS" $RAND_MAX direct
	done
	for sf in "tmpfs $DIRECT/big" "pt $PTM/big" "kvfs $KNS/big"; do
		"$FSOPS" seqread "${sf#* }" >/dev/null 2>&1 # into the page cache
		measure randc "${sf%% *}" "$FSOPS" randread "${sf#* }" "$RAND_SECS" $RAND_MAX
	done
	rm -rf "$WORK/tl-big"
	if out=$("$TL" big "$WORK/tl-big" "$BIG_MIB" "$RAND_SECS" 2>"$LOGS/last.err"); then
		while read -r name v _; do
			case $name in
			string_set) record seqw tl "$v" ;;
			string_get) record seqr tl "$v" ;;
			string_read_4k) record randd tl "$v" ;;
			esac
		done <<<"$out"
	else
		note "type layer: big value failed: $(head -c 300 "$LOGS/last.err")"
		record seqw tl ERR
	fi
	rm -rf "$WORK/tl-big"
done
rm -f "$DIRECT/big" "$PTM/big" "$KNS/big"

# 5. the namespace listing again, now that a big value has been written
# and deleted in the same database (a regression check: the value's data
# block must not be read by operations on other keys)
for ((r = 1; r <= RUNS; r++)); do
	say "[$(date +%T)] ls -f after the big value, run $r/$RUNS"
	cold
	ls_run ls_ns2 tmpfs "$PTSRC/lsns" $((NS_N + 2))
	ls_run ls_ns2 pt "$PTM/lsns" $((NS_N + 2)) "$PT_PID"
	ls_run ls_ns2 kvfs "$KMNT/lsns" $((NS_N + 2)) "$KV_PID"
done

# 6. rsync -a of a SMALL_N-field hash (run 1's) out of the mount, cold
for ((r = 1; r <= RUNS; r++)); do
	say "[$(date +%T)] rsync, run $r/$RUNS"
	for sd in "tmpfs $DIRECT/h1" "pt $PTM/h1" "kvfs $KNS/h1"; do
		sys=${sd%% *}
		out=$TMPFS/out/$sys
		rm -rf "$out"
		cold
		if tsec rsync -a "${sd#* }/" "$out/" 2>"$LOGS/last.err"; then
			n=$(find "$out" -type f | wc -l)
			if [ "$n" -eq "$SMALL_N" ]; then
				record rsync "$sys" "$ELAPSED"
			else
				record rsync "$sys" ERR
				note "$sys, rsync: copied $n files, expected $SMALL_N"
			fi
		else
			record rsync "$sys" ERR
			note "$sys, rsync -a failed: $(head -c 300 "$LOGS/last.err")"
		fi
		rm -rf "$out"
	done
done

kvfs_stop
if out=$("$TL" compact "$KDB" 2>"$LOGS/last.err"); then
	COMPACT_S=$(awk '{ print $1 }' <<<"$out")
else
	COMPACT_S=ERR
	note "type layer: compaction failed: $(head -c 300 "$LOGS/last.err")"
fi
DB_COMPACTED=$(du -sk --apparent-size "$KDB" | awk '{ print $1 }')
pt_stop

# 8. listing under write load (issue 14, item 7): `ls -l` of a 580-field
# hash while 4 processes rewrite 4 MiB files, on a fresh database in the
# work directory (a disk, as a user's would be) with kvfs's own defaults
# (its thread count, not BENCH_THREADS); then how long the daemon takes
# from the unmount to its exit with the writers just stopped. A figure,
# not a check. The writers stop when their flag file goes (also when the
# cleanup removes the work directory).
say "[$(date +%T)] listing under write load"
LDB=$WORK/load-db LFLAG=$WORK/load-writing
echo "=== $(date +%T) kvfs -f $LDB $KMNT (defaults)" >>"$LOGS/kvfs.log"
"$KVFS" -f -o timeout="$TIMEOUT" "$LDB" "$KMNT" </dev/null >>"$LOGS/kvfs.log" 2>&1 &
KV_PID=$!
LOAD_QUIET='' LOAD_BUSY='' LOAD_EXIT=''
if wait_mount "$KMNT" "$KV_PID" kvfs; then
	LNS=$KMNT/__namespace
	mkdir "$LNS/h" && for ((i = 0; i < 580; i++)); do printf 'v%d' $i >"$LNS/h/f$i"; done
	head -c 4194304 /dev/urandom >"$WORK/load-value"
	for ((r = 0; r < RUNS; r++)); do
		tsec ls -l "$LNS/h" >/dev/null && LOAD_QUIET+="$ELAPSED "
	done
	: >"$LFLAG"
	LW=()
	for w in 1 2 3 4; do
		(while [ -e "$LFLAG" ]; do cp "$WORK/load-value" "$LNS/big$w" 2>/dev/null || break; done) &
		LW+=($!)
	done
	sleep 2
	for ((r = 0; r < 3 * RUNS; r++)); do
		tsec ls -l "$LNS/h" >/dev/null && LOAD_BUSY+="$ELAPSED "
		sleep 0.2
	done
	rm -f "$LFLAG"
	wait "${LW[@]}" 2>/dev/null
	tsec kvfs_stop && LOAD_EXIT=$ELAPSED
else
	KV_PID=
fi
LOAD_CLOSED=$(grep -o 'closed in [0-9]* ms ([0-9]* MiB[^)]*)' "$LOGS/kvfs.log" | tail -1)

# 9. a list as a queue (issue 17): one producer and one consumer shell loop
# through .rpush and .blpop, and the time from a push to the wake-up of a
# shell blocked in .blpop (tests/bench/queue.sh), on a fresh database in the
# work directory with kvfs's defaults. BENCH_QUEUE_N: the elements (quick
# 10,000; full 100,000).
QUEUE_N=${BENCH_QUEUE_N:-$([ "$MODE" = full ] && echo 100000 || echo 10000)}
QUEUE_OUT=''
say "[$(date +%T)] a list as a queue, $QUEUE_N elements"
"$KVFS" -f -o timeout="$TIMEOUT" "$WORK/queue-db" "$KMNT" </dev/null >>"$LOGS/kvfs.log" 2>&1 &
KV_PID=$!
if wait_mount "$KMNT" "$KV_PID" kvfs; then
	QUEUE_OUT=$(tests/bench/queue.sh "$KMNT/__namespace" "$QUEUE_N" 2>"$LOGS/last.err") ||
		note "queue: $(head -c 300 "$LOGS/last.err")"
	kvfs_stop
else
	KV_PID=
fi

# 10. snapshots (issue 18): `kvfs snapshot` of a database of BENCH_SNAP_MIB
# MiB (default 1024) of kvfs data in the work directory, mounted read-write
# (the daemon makes it) and unmounted: the time, and the extra disk use
# (tests/bench/snapshot.sh).
SNAP_MIB=${BENCH_SNAP_MIB:-1024}
say "[$(date +%T)] snapshots of a $SNAP_MIB MiB database"
SNAP_OUT=$(tests/bench/snapshot.sh "$KVFS" "$WORK" "$SNAP_MIB" 2>"$LOGS/last.err") ||
	note "snapshot: $(head -c 300 "$LOGS/last.err")"

# 11. incremental backup (issue 18): rsync -aX of a namespace of
# BENCH_RSYNC_N string keys (default NS_N, 100,000) to a directory in the
# work directory, then again after 1 % of the keys got same-size changes
# (tests/bench/rsync_incr.sh): the time of each copy and the bytes rsync
# sent (--stats), on a fresh database in the work directory.
RSYNC_N=${BENCH_RSYNC_N:-$NS_N}
RSYNC_OUT=''
say "[$(date +%T)] incremental rsync -aX, $RSYNC_N keys, 1 % changed"
"$KVFS" -f -o timeout="$TIMEOUT" "$WORK/rsync-db" "$KMNT" </dev/null >>"$LOGS/kvfs.log" 2>&1 &
KV_PID=$!
if wait_mount "$KMNT" "$KV_PID" kvfs; then
	RSYNC_OUT=$(tests/bench/rsync_incr.sh "$KMNT" "$WORK/rsync-dest" "$RSYNC_N" 2>"$LOGS/last.err") ||
		note "rsync_incr: $(head -c 300 "$LOGS/last.err")"
	kvfs_stop
	rm -rf "$WORK/rsync-dest"
else
	KV_PID=
fi

# 12. follower lag (issue 18): a read-write mount and a `-o follow=MS` mount
# of one fresh database in the work directory; N writes of a small value
# through the first, each timed until the follower shows it
# (tests/bench/follow.py, polling every millisecond). BENCH_FOLLOW_N: the
# writes (1,000); BENCH_FOLLOW_MS: the follower's catch-up period (50 ms,
# so that 1,000 writes take about a minute; the default is 1000).
FOLLOW_N=${BENCH_FOLLOW_N:-1000}
FOLLOW_MS=${BENCH_FOLLOW_MS:-50}
FOLLOW_OUT=''
say "[$(date +%T)] follower lag, $FOLLOW_N writes, -o follow=$FOLLOW_MS"
mkdir -p "$FMNT"
"$KVFS" -f -o timeout="$TIMEOUT" "$WORK/follow-db" "$KMNT" </dev/null >>"$LOGS/kvfs.log" 2>&1 &
KV_PID=$!
if wait_mount "$KMNT" "$KV_PID" kvfs; then
	"$KVFS" -f -o "follow=$FOLLOW_MS,follow_dir=$WORK/follow-secondary" "$WORK/follow-db" \
		"$FMNT" </dev/null >>"$LOGS/follower.log" 2>&1 &
	FW_PID=$!
	if wait_mount "$FMNT" "$FW_PID" follower; then
		FOLLOW_OUT=$(python3 tests/bench/follow.py "$KMNT/__namespace" "$FMNT/__namespace" \
			"$FOLLOW_N" $((2 * FOLLOW_MS)) 2>"$LOGS/last.err") ||
			note "follower lag: $(head -c 300 "$LOGS/last.err")"
		fuse_stop "$FMNT" "$FW_PID" follower
	fi
	FW_PID=
	kvfs_stop
else
	KV_PID=
fi

# 13. the time-series label index (issue 19): `cat '.mget?sensor=temp'`
# over BENCH_TSI_KEYS string keys (20,000) and 20 labelled series, through
# Kvrocks's index and by a scan (tests/bench/ts_index.sh; its own database
# in the work directory).
TSI_KEYS=${BENCH_TSI_KEYS:-20000}
say "[$(date +%T)] TS.MGET through the label index and by a scan, $TSI_KEYS keys"
TSI_OUT=$(tests/bench/ts_index.sh "$KVFS" "$WORK" "$TSI_KEYS" 20 2>"$LOGS/last.err") ||
	note "ts_index: $(head -c 300 "$LOGS/last.err")"

# 14. JSON path names (issue 19): cat, >, >> and rm of definite and
# indefinite paths on a document of BENCH_JSON_ITEMS items (10,000, about
# 534 KB; at least 5,001: it reads item 5000; tests/bench/jsonpath.py), on
# a fresh database.
JSON_ITEMS=${BENCH_JSON_ITEMS:-10000}
JSON_OUT=''
say "[$(date +%T)] JSON path names, a document of $JSON_ITEMS items"
"$KVFS" -f -o timeout="$TIMEOUT" "$WORK/json-db" "$KMNT" </dev/null >>"$LOGS/kvfs.log" 2>&1 &
KV_PID=$!
if wait_mount "$KMNT" "$KV_PID" kvfs; then
	JSON_OUT=$(python3 tests/bench/jsonpath.py "$KMNT/__namespace" "$JSON_ITEMS" 2>"$LOGS/last.err") ||
		note "jsonpath: $(head -c 300 "$LOGS/last.err")"
	kvfs_stop
else
	KV_PID=
fi

# ----------------------------------------------------------------- report

median() { # values... -> median, or ERR if any run failed, or empty
	printf '%s\n' "$@" | awk '
		$1 == "ERR" { err = 1 } $1 != "ERR" && $1 != "" { v[++n] = $1 }
		END {
			if (err) { print "ERR"; exit }
			if (!n) exit
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
			print (n % 2) ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
		}'
}
med() { median ${RES["$1|$2"]-}; }
fmt() { # value -> display
	awk -v v="$1" 'BEGIN {
		if (v == "") { print "—"; exit }
		if (v == "ERR") { print "ERR"; exit }
		a = v < 0 ? -v : v
		if (a >= 1000) printf "%\047.0f\n", v; else if (a >= 100) printf "%.0f\n", v
		else if (a >= 10) printf "%.1f\n", v; else if (a >= 1) printf "%.2f\n", v
		else printf "%.3f\n", v }'
}
pct() { # a b -> a/b in % (or —)
	awk -v a="$1" -v b="$2" 'BEGIN {
		if (a == "" || b == "" || a == "ERR" || b == "ERR" || b + 0 == 0) { print "—"; exit }
		p = 100 * a / b
		if (p < 1) printf "%.2f %%\n", p; else if (p < 10) printf "%.1f %%\n", p; else printf "%.0f %%\n", p }'
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "" || b == "" || a == "ERR" || b == "ERR" || b + 0 == 0) print ""; else printf "%.3f\n", a / b }'; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
kfmt() { printf "%'d" "$1" 2>/dev/null || echo "$1"; }

ROWS=(create_s create_h stat_cold_s stat_cold_h stat_warm_s stat_warm_h cat_s cat_h
	ls_ns ls_h ls_ns2 seqw seqr randd randc rsync del incr)
declare -A LABEL=(
	[create_s]="create+write+close $(kfmt "$SMALL_N") × 100 B, string keys (files/s)"
	[create_h]="create+write+close $(kfmt "$SMALL_N") × 100 B, hash fields (files/s)"
	[stat_cold_s]="stat, not cached, string keys (stats/s)"
	[stat_cold_h]="stat, not cached, hash fields (stats/s)"
	[stat_warm_s]="stat, warm, string keys (stats/s)"
	[stat_warm_h]="stat, warm, hash fields (stats/s)"
	[cat_s]="cat, warm, string keys (files/s)"
	[cat_h]="cat, warm, hash fields (files/s)"
	[ls_ns]="ls -f, namespace of $(kfmt "$NS_N") keys (s)"
	[ls_h]="ls -f, hash of $(kfmt "$HASH_N") fields (s)"
	[ls_ns2]="ls -f, the same namespace after a $BIG_MIB MiB value was written and deleted (s)"
	[seqw]="sequential write $BIG_MIB MiB, 128 KiB writes + close (MB/s)"
	[seqr]="sequential read $BIG_MIB MiB, cold (MB/s)"
	[randd]="random 4 KiB reads, O_DIRECT: answered by the daemon (IOPS)"
	[randc]="random 4 KiB reads, page cache warm (IOPS)"
	[rsync]="rsync -a of a $(kfmt "$SMALL_N")-field hash, cold (s)"
	[del]="delete a $(kfmt "$DEL_N")-field hash (ms)"
	[incr]="INCR from a shell loop, one process each: cat 'c:incr' / redis-cli INCR (incr/s)"
)
# The targets of issue 3. kind: rate (higher is better) or time.
declare -A TARGET=(
	[create_s]="≥ 60 % pt, ≥ 5× redis-cli" [create_h]="≥ 60 % pt, ≥ 5× redis-cli"
	[stat_warm_s]="≥ 80 % pt" [stat_warm_h]="≥ 80 % pt" [cat_s]="≥ 80 % pt" [cat_h]="≥ 80 % pt"
	[ls_h]="≤ 150 % of pt's time, RSS +≤ 64 MiB" [seqw]="≥ 50 % pt" [seqr]="≥ 50 % pt"
	[del]="< 10 ms" [incr]="≥ 5× redis-cli (issue 17)"
)
verdict() { # row kv pt redis -> "met"/"MISSED (...)"/""
	local row=$1 kv=$2 pt=$3 rd=$4 a b ok
	[ -n "${TARGET[$row]-}" ] || return 0
	if [ -z "$kv" ] || [ "$kv" = ERR ]; then
		echo "MISSED (kvfs: ${kv:-no figure})"
		return
	fi
	case $row in
	create_*)
		a=$(ratio "$kv" "$pt")
		b=$(ratio "$kv" "$rd")
		ok=$(awk -v a="$a" -v b="$b" 'BEGIN { print (a != "" && a >= 0.6 && (b == "" || b >= 5)) ? 1 : 0 }')
		[ -n "$b" ] && b=" $(awk -v b="$b" 'BEGIN { printf "%.1f", b }')× redis-cli" || b=""
		[ "$ok" = 1 ] && echo "met:$b" || echo "MISSED:$b"
		;;
	stat_* | cat_*) a=$(ratio "$kv" "$pt") && awk -v a="$a" 'BEGIN { print (a != "" && a >= 0.8) ? "met" : "MISSED" }' ;;
	seq*) a=$(ratio "$kv" "$pt") && awk -v a="$a" 'BEGIN { print (a != "" && a >= 0.5) ? "met" : "MISSED" }' ;;
	ls_h)
		a=$(ratio "$kv" "$pt")
		b=$(printf '%s\n' ${RSS["ls_h|kvfs"]-} | sort -n | tail -1)
		awk -v a="$a" -v b="${b:-0}" 'BEGIN { print (a != "" && a <= 1.5 && b <= 65536) ? "met" : "MISSED" }'
		;;
	del) awk -v t="$kv" 'BEGIN { print (t < 10) ? "met" : "MISSED" }' ;;
	incr)
		b=$(ratio "$kv" "$rd")
		awk -v b="$b" 'BEGIN { if (b == "") print "—"; else printf "%s: %.1f× redis-cli\n", (b >= 5) ? "met" : "MISSED", b }'
		;;
	esac
}

T_END=${EPOCHREALTIME/./}
TOTAL=$(awk -v d=$((T_END - T_START)) 'BEGIN { printf "%d min %02d s", d / 6e7, (d / 1e6) % 60 }')
{
	echo "# kvfs benchmark ($MODE mode)"
	echo
	echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC'); run time $TOTAL"
	echo "- machine: $(nproc) cores ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), $(awk '/MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) memory, kernel $(uname -r), load average at the end $(cut -d' ' -f1-3 /proc/loadavg)"
	echo "- this machine: faulting in and filling 256 MiB of fresh memory takes ${MEMTOUCH} (fsops memtouch, median of 5); RocksDB's crc32c runs at ${CRC:-?} MB/s (db_bench --benchmarks=crc32c), so one checksum of a 256 MiB value takes $(awk -v c="${CRC:-0}" 'BEGIN { if (c > 0) printf "%.2f s", 268.435456 / c; else print "?" }')"
	echo "- libfuse $(pkg-config --modversion fuse3), RocksDB $(pkg-config --modversion rocksdb), $(redis-server --version 2>/dev/null | awk '{ print $1, $2, $3 }'), kvfs $KVFS_COMMIT"
	echo "- kvfs database on $(stat -f -c %T "$KDB") (${KDB#"$WORK"/} in the work directory; BENCH_DB=disk puts it on the work directory's file system); tmpfs and passthrough source on tmpfs; FUSE: $THREADS loop threads, entry/attr timeout $TIMEOUT s"
	echo "- each figure is the median of $RUNS runs; ratios are of the medians (time rows: kvfs's time / the other's, lower is better)"
	echo "- cold: $([ -n "$DROP_OK" ] && echo "kernel caches dropped (echo 3 > /proc/sys/vm/drop_caches)" || echo "drop_caches not permitted: both FUSE file systems remounted") before the not-cached stat, rsync and ls rows; before the cold read, $COLD_HOW"
	echo "- redis-cli: one redis-cli process per command in a shell loop of $(kfmt "$REDIS_N") commands (create, cat); ls: --scan / HKEYS; delete: DEL; a private redis-server on a unix socket, no persistence"
	echo "- type layer: the same verbs in-process (string_set/hash_set, ks_lookup/hash_strlen, string_get/hash_get, ks_key_iter/hash_iter, string_set/string_get/string_read of one value, ks_del)"
	echo
	echo "| workload | tmpfs | passthrough | kvfs | redis-cli | type layer | kvfs/passthrough | kvfs/tmpfs | target (issue 3) |"
	echo "|---|---:|---:|---:|---:|---:|---:|---:|---|"
	for row in "${ROWS[@]}"; do
		tm=$(med "$row" tmpfs)
		p=$(med "$row" pt)
		k=$(med "$row" kvfs)
		rd=$(med "$row" redis)
		t=$(med "$row" tl)
		v=$(verdict "$row" "$k" "$p" "$rd")
		tg=${TARGET[$row]-}
		[ -n "$tg" ] && tg="$tg: $v"
		echo "| ${LABEL[$row]} | $(fmt "$tm") | $(fmt "$p") | $(fmt "$k") | $(fmt "$rd") | $(fmt "$t") | $(pct "$k" "$p") | $(pct "$k" "$tm") | $tg |"
	done
	echo
	echo "Daemon RSS growth during \`ls -f\` (peak minus the RSS before, per run; ${RSS_HOW:-not measured})"
	echo
	for row in ls_ns ls_h ls_ns2; do
		for sys in pt kvfs; do
			name=$([ $sys = pt ] && echo passthrough || echo kvfs)
			vals=$(for v in ${RSS["$row|$sys"]-}; do mib "$v"; echo -n ", "; done | sed 's/, $//')
			mx=$(printf '%s\n' ${RSS["$row|$sys"]-} | sort -n | tail -1)
			echo "- ${LABEL[$row]%% (s)}, $name: peak growth $(mib "${mx:-0}") (runs: $vals; RSS before $(mib "${RSS["$row|$sys.base"]-0}"))"
		done
	done
	echo
	echo "Every run of the kvfs and passthrough columns, in the order run (a median hides a bimodal row)"
	echo
	for row in "${ROWS[@]}"; do
		echo "- ${LABEL[$row]}: kvfs ${RES["$row|kvfs"]:-—}; passthrough ${RES["$row|pt"]:-—}" | sed 's/ ;/;/; s/ $//'
	done
	echo
	echo "Listing under write load (\`ls -l\` of a 580-field hash while 4 processes rewrite 4 MiB files; kvfs's default threads, database in the work directory): median $(fmt "$(median $LOAD_QUIET)") s quiet, $(fmt "$(median $LOAD_BUSY)") s under load (runs: ${LOAD_BUSY:-—}); unmount to exit with the writers just stopped: $(fmt "$LOAD_EXIT") s (${LOAD_CLOSED:-no shutdown line in the log})"
	echo
	qops=$(awk '/^queue_ops/ { printf "%s %s", $2, $3 }' <<<"$QUEUE_OUT")
	qwake=$(awk '/^queue_wake/ { $1 = ""; print substr($0, 2) }' <<<"$QUEUE_OUT")
	echo "A list as a queue ($(kfmt "$QUEUE_N") elements; one producer and one consumer shell loop, "'`echo e$i >> q/.rpush`, `while x=$(cat q/.blpop:5)`'"; kvfs's defaults): ${qops:-no figure} (pushes + pops); a push wakes a shell blocked in "'`x=$(cat q/.blpop:10)`'" in ${qwake:-no figure} over 20 pushes (target: within 10 ms)"
	echo
	sdb=$(awk '/^snapshot_db/ { print $2 }' <<<"$SNAP_OUT")
	smnt=$(awk '/^snapshot_mounted/ { print $2, "s,", $4, "KiB" }' <<<"$SNAP_OUT")
	sun=$(awk '/^snapshot_unmounted/ { print $2, "s,", $4, "KiB" }' <<<"$SNAP_OUT")
	echo "Snapshot of a $SNAP_MIB MiB database (\`kvfs snapshot\`; ${sdb:-?} KiB on disk; 1 MiB strings and a 20,000-field hash written through kvfs): mounted read-write ${smnt:-no figure} extra disk; unmounted ${sun:-no figure} extra (du of the database and the snapshot together minus the database's: the tables are hard links)"
	echo
	rv() { awk -v k="$1" '$1 == k { $1 = ""; print substr($0, 2) }' <<<"$RSYNC_OUT"; }
	echo "Incremental backup ($(kfmt "$RSYNC_N") string keys of 100 B in one namespace, \`rsync -aX --stats\` to a directory, then again after 1 % of the keys were rewritten with the same size, no --checksum; tests/bench/rsync_incr.sh): full copy $(rv rsync_full_s) and $(rv rsync_full_sent) sent; incremental copy $(rv rsync_incr_s) and $(rv rsync_incr_sent) sent, $(rv rsync_incr_files) transferred (copy equal to the mount: $(rv rsync_incr_same))"
	echo
	flag=$(awk '/^follow_lag/ { printf "median %s ms, p99 %s ms, max %s ms", $2, $3, $4 }' <<<"$FOLLOW_OUT")
	echo "Follower lag ($(kfmt "$FOLLOW_N") writes of a small value through a read-write mount, each after a random pause of up to $((2 * FOLLOW_MS)) ms and timed from its close until a \`-o follow=$FOLLOW_MS\` mount of the same database shows it, polled every millisecond): ${flag:-no figure}"
	echo
	tsi=$(awk '/^ts_index_mget/ { i = $2 } /^ts_scan_mget/ { c = $2 } END { if (i != "") printf "%s ms through the index, %s ms by a scan", i, c }' <<<"$TSI_OUT")
	echo "TS.MGET over $(kfmt "$TSI_KEYS") string keys and 20 labelled series (\`cat '.mget?sensor=temp'\`, median of 20; tests/bench/ts_index.sh): ${tsi:-no figure}"
	echo
	echo "JSON path names on a document of $(kfmt "$JSON_ITEMS") items (tests/bench/jsonpath.py; median ms of each operation):"
	echo
	echo '```'
	echo "${JSON_OUT:-no figure}"
	echo '```'
	echo
	echo "Deleting on kvfs used:$DEL_HOW"
	echo
	echo "kvfs database (apparent size): $(mib "$DB_BEFORE") before the deletions, $(mib "$DB_AFTER") after them, $(mib "$DB_COMPACTED") after all workloads and a full compaction (${COMPACT_S} s); $((2 * RUNS * DEL_N)) of the $((2 * RUNS * DEL_N + NS_N + HASH_N + 2 * RUNS * SMALL_N)) small values written belonged to the deleted hashes"
	kerr=$(grep -ciE 'error|assert|sanitizer' "$LOGS/kvfs.log" 2>/dev/null)
	echo
	echo "kvfs log: ${kerr:-0} error lines$([ "${kerr:-0}" -gt 0 ] && echo "; the most frequent:")"
	if [ "${kerr:-0}" -gt 0 ]; then
		echo
		echo '```'
		grep -iE 'error|assert|sanitizer' "$LOGS/kvfs.log" | sed 's/[0-9]\{6,\}/N/g' | sort | uniq -c | sort -rn | head -8
		echo '```'
	fi
	if [ ${#NOTES[@]} -gt 0 ]; then
		echo
		echo "Notes:"
		echo
		for n in "${NOTES[@]}"; do echo "- $n"; done
	fi
} >"$BIN/results.md"
cat "$BIN/results.md"
say "written to $BIN/results.md (logs in $BIN/logs)"
