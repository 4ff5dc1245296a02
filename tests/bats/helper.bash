# Common setup for the kvfs bats suites: mount a database in the test's
# temporary directory, wait for the mount, and on teardown unmount and
# require a clean daemon exit (exit status 0, no sanitizer report in its
# log). Load it with `load helper` from tests/bats/NN-area.bats.
#
# Per test (set by kvfs_setup, the default setup()):
#   KVFS_DB   database directory (new ones get the Kvrocks layout: DB/db)
#   KVFS_MNT  mount point
#   KVFS_LOG  the daemon's stdout and stderr, appended across remounts
#   NS        $KVFS_MNT/__namespace, the default namespace directory
# Functions:
#   kvfs_setup / kvfs_teardown   the default setup() and teardown()
#   kvfs_use_dir DIR             put DB, mount point and log in DIR
#   kvfs_mount [OPTS]            start `$KVFS_BIN -f OPTS DB MNT`, wait
#   kvfs_unmount                 fusermount3 -u, require exit status 0
#   kvfs_remount [OPTS]          both
#   kvfs_kill9                   SIGKILL the daemon, detach its mount
#   ldb_scan CF                  `ldb --hex scan` of a column family
#   ldb_value CF KEYHEX          the value of one record (hex)
#   ldb_put CF KEYHEX VALUEHEX   write one record with ldb
#   hexof STRING, nskey_hex KEY [NS], kvfs_type PATH
#   errno_of PYCODE ARGS...      errno name raised by PYCODE, or OK
#   as_nobody CMD                run the shell command CMD as uid/gid 65534
#   mktype PATH TYPE             mkdir PATH and make it an empty key of TYPE
#   redis_start [ARGS]           a private redis-server on $RSOCK (a unix
#                                socket), stopped by kvfs_teardown
#   assert_bytes FILE STRING, assert_size FILE N, assert_eq GOT WANT [WHAT]
# A machine without a usable /dev/fuse skips every test, saying why.
#
# Environment: KVFS_BIN (default: build/kvfs of this tree);
#   KVFS_MOUNT_WAIT (seconds, default 10), KVFS_EXIT_WAIT (seconds the
#   daemon gets to exit after an unmount, default 60).

bats_require_minimum_version 1.5.0

export LC_ALL=C # coreutils error messages and sort order are checked
unset LANGUAGE

: "${KVFS_BIN:=$BATS_TEST_DIRNAME/../../build/kvfs}"
case $KVFS_BIN in
/*) ;;
*) KVFS_BIN=$PWD/$KVFS_BIN ;;
esac
export KVFS_BIN

KVFS_DEFAULT_NS=__namespace
# "\x0b__namespace" in hex: the prefix of every key of the default namespace
# shellcheck disable=SC2034 # used by the suites
NS_HEX=0B5F5F6E616D657370616365

# Sanitizer reports that make a test fail when they show up in the log.
KVFS_SANITIZER_RE='ERROR: (Address|Leak)Sanitizer|runtime error:'

# ---------------------------------------------------------------- checks

# Why this machine cannot run the suite (empty if it can).
kvfs_skip_reason() {
	if [ ! -c /dev/fuse ]; then
		echo "/dev/fuse is missing: FUSE tests need the fuse module and access to /dev/fuse"
	elif [ ! -r /dev/fuse ] || [ ! -w /dev/fuse ]; then
		echo "/dev/fuse is not readable and writable by $(id -un)"
	fi
}

# Fails (with a message) if something the tests need is missing.
kvfs_require() {
	local t missing=
	if [ ! -x "$KVFS_BIN" ]; then
		echo "KVFS_BIN=$KVFS_BIN is not an executable (run make first)" >&2
		return 1
	fi
	for t in fusermount3 mountpoint ldb getfattr setfattr python3 xxd; do
		command -v "$t" >/dev/null 2>&1 || missing="$missing $t"
	done
	if [ -n "$missing" ]; then
		echo "missing tools:$missing (run: make deps)" >&2
		return 1
	fi
}

# ----------------------------------------------------- setup / teardown

# Default per-test setup: skip without FUSE, check tools, make the dirs.
# A suite that wants a mount in every test defines
#   setup() { kvfs_setup; kvfs_mount; }
kvfs_setup() {
	local why
	why=$(kvfs_skip_reason)
	[ -z "$why" ] || skip "$why"
	kvfs_require
	kvfs_use_dir "$BATS_TEST_TMPDIR"
}

# kvfs_use_dir DIR: database, mount point and log in DIR (setup_file uses
# it with BATS_FILE_TMPDIR for a database shared by a file's tests).
kvfs_use_dir() {
	KVFS_DB=$1/db
	KVFS_MNT=$1/mnt
	KVFS_LOG=$1/daemon.log
	# shellcheck disable=SC2034
	NS=$KVFS_MNT/$KVFS_DEFAULT_NS
	KVFS_PID=
	mkdir -p "$KVFS_MNT"
	: >>"$KVFS_LOG"
	_kvfs_ready=1
}

# Default per-test teardown: unmount (lazily if needed), reap the daemon
# this test started (killing it only if it does not exit), and fail if it
# did not exit with status 0 or its log holds a sanitizer report.
kvfs_teardown() {
	redis_stop
	local rc=0 status
	[ -n "${_kvfs_ready:-}" ] || return 0 # skipped before kvfs_setup finished
	if [ -n "${KVFS_PID:-}" ]; then
		if _kvfs_is_mounted "$KVFS_MNT"; then
			fusermount3 -u "$KVFS_MNT" 2>/dev/null || fusermount3 -u -z "$KVFS_MNT" || true
		fi
		_kvfs_reap "$KVFS_PID"
		status=$_kvfs_status
		KVFS_PID=
		if [ "$status" -ne 0 ]; then
			echo "teardown: kvfs exited with status $status" >&2
			rc=1
		fi
	fi
	# a mount whose daemon is gone (after kvfs_kill9 without a remount)
	if _kvfs_is_mounted "$KVFS_MNT"; then
		fusermount3 -u -z "$KVFS_MNT" 2>/dev/null || true
	fi
	if [ -z "${_kvfs_san_reported:-}" ] && ! kvfs_log_is_clean; then
		echo "teardown: sanitizer report in the daemon log" >&2
		rc=1
	fi
	if [ "$rc" -ne 0 ]; then
		kvfs_show_log
	fi
	return "$rc"
}

setup() {
	kvfs_setup
}

teardown() {
	kvfs_teardown
}

# ------------------------------------------------------- mount / unmount

# kvfs_mount [OPTIONS...]: start `$KVFS_BIN -f OPTIONS DB MNT` in the
# background and wait (at most KVFS_MOUNT_WAIT seconds) until MNT is a
# mount point. Fails, showing the log, if the daemon exits or never mounts.
kvfs_mount() {
	local i tries
	if [ -n "${KVFS_PID:-}" ]; then
		echo "kvfs_mount: already mounted (pid $KVFS_PID)" >&2
		return 1
	fi
	echo "=== $KVFS_BIN -f $* $KVFS_DB $KVFS_MNT" >>"$KVFS_LOG"
	# fd 3 is bats's own output: the daemon must not hold it open.
	"$KVFS_BIN" -f "$@" "$KVFS_DB" "$KVFS_MNT" </dev/null >>"$KVFS_LOG" 2>&1 3>&- &
	KVFS_PID=$!
	tries=$((${KVFS_MOUNT_WAIT:-10} * 20))
	for ((i = 0; i < tries; i++)); do
		if ! _kvfs_alive "$KVFS_PID"; then
			_kvfs_reap "$KVFS_PID"
			echo "kvfs_mount: kvfs exited with status $_kvfs_status before mounting" >&2
			KVFS_PID=
			kvfs_show_log
			return 1
		fi
		if mountpoint -q "$KVFS_MNT"; then
			return 0
		fi
		sleep 0.05
	done
	echo "kvfs_mount: $KVFS_MNT not mounted after ${KVFS_MOUNT_WAIT:-10}s" >&2
	kvfs_show_log
	return 1
}

# Unmount and require the daemon to exit with status 0 and a clean log.
kvfs_unmount() {
	local i status
	if [ -z "${KVFS_PID:-}" ]; then
		echo "kvfs_unmount: not mounted" >&2
		return 1
	fi
	# A busy mount is a test bug (a process left inside); report it rather
	# than retrying for long. Allow 2 s for releases still in flight.
	for ((i = 0; ; i++)); do
		fusermount3 -u "$KVFS_MNT" 2>"$KVFS_LOG.fusermount" && break
		if [ "$i" -ge 40 ]; then
			echo "kvfs_unmount: fusermount3 -u $KVFS_MNT failed:" >&2
			cat "$KVFS_LOG.fusermount" >&2
			return 1
		fi
		sleep 0.05
	done
	_kvfs_reap "$KVFS_PID"
	status=$_kvfs_status
	KVFS_PID=
	if [ "$status" -ne 0 ]; then
		echo "kvfs_unmount: kvfs exited with status $status" >&2
		kvfs_show_log
		return 1
	fi
	if ! kvfs_log_is_clean; then
		echo "kvfs_unmount: sanitizer report in the daemon log" >&2
		kvfs_show_log
		_kvfs_san_reported=1
		return 1
	fi
}

# Unmount, then mount again with the given options.
kvfs_remount() {
	kvfs_unmount
	kvfs_mount "$@"
}

# Kill the daemon with SIGKILL (a crash; it may already be dead if the test
# killed it itself), reap it and detach its dead mount with
# `fusermount3 -u -z`, so the test can mount again.
kvfs_kill9() {
	if [ -z "${KVFS_PID:-}" ]; then
		echo "kvfs_kill9: not mounted" >&2
		return 1
	fi
	kill -9 "$KVFS_PID" 2>/dev/null || true
	wait "$KVFS_PID" 2>/dev/null || true
	KVFS_PID=
	fusermount3 -u -z "$KVFS_MNT"
}

kvfs_show_log() {
	echo "----- daemon log ($KVFS_LOG) -----" >&2
	cat "$KVFS_LOG" >&2 2>/dev/null || true
	echo "----- end of daemon log -----" >&2
}

kvfs_log_is_clean() {
	! grep -qE "$KVFS_SANITIZER_RE" "$KVFS_LOG" 2>/dev/null
}

# True while the process runs (a zombie, which kill -0 still finds, is not
# running).
_kvfs_alive() {
	local stat
	stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	stat=${stat##*) }
	[ "${stat%% *}" != Z ]
}

# Wait at most KVFS_EXIT_WAIT seconds for our daemon to exit, SIGKILL it if
# it does not, and collect its exit status in _kvfs_status.
_kvfs_reap() {
	local pid=$1 i tries
	tries=$((${KVFS_EXIT_WAIT:-60} * 20))
	for ((i = 0; i < tries; i++)); do
		_kvfs_alive "$pid" || break
		sleep 0.05
	done
	if _kvfs_alive "$pid"; then
		echo "kvfs (pid $pid) did not exit ${KVFS_EXIT_WAIT:-60}s after the unmount; killing it" >&2
		kill -9 "$pid" 2>/dev/null || true
	fi
	_kvfs_status=0
	wait "$pid" 2>/dev/null || _kvfs_status=$?
}

# Is DIR a mount point? Read from the mount table, so that a dead FUSE
# mount (stat fails with ENOTCONN) counts too.
_kvfs_is_mounted() {
	awk -v m="$1" '($5 "") == m { found = 1 } END { exit !found }' /proc/self/mountinfo
}

# as_nobody CMD: run the shell command CMD as uid and gid 65534, no
# groups. The directories above the mount point that others cannot search
# (bats's temporary ones and tests/run-bats.sh's, 0700) are made
# searchable for it first.
as_nobody() {
	local d=$(dirname "$KVFS_MNT")
	while [ "$d" != / ]; do
		[ -z "$(find "$d" -maxdepth 0 ! -perm -o+x)" ] || chmod a+x "$d"
		d=$(dirname "$d")
	done
	setpriv --reuid=65534 --regid=65534 --clear-groups sh -c "$1"
}

# ------------------------------------------------------ database helpers

# The RocksDB directory of KVFS_DB: DB/db (Kvrocks layout) or DB itself.
kvfs_rocksdb_dir() {
	if [ -e "$KVFS_DB/db/CURRENT" ] || [ ! -e "$KVFS_DB/CURRENT" ]; then
		echo "$KVFS_DB/db"
	else
		echo "$KVFS_DB"
	fi
}

# ldb_scan CF: every record of column family CF as "0xKEY : 0xVALUE" lines
# (hex upper-case), read with RocksDB's own ldb. Only while unmounted.
ldb_scan() {
	if [ -n "${KVFS_PID:-}" ]; then
		echo "ldb_scan: unmount first (kvfs holds the database)" >&2
		return 1
	fi
	ldb --db="$(kvfs_rocksdb_dir)" --column_family="$1" --hex scan
}

# ldb_put CF KEYHEX VALUEHEX: write one record with ldb (an independent
# writer), while unmounted.
ldb_put() {
	if [ -n "${KVFS_PID:-}" ]; then
		echo "ldb_put: unmount first (kvfs holds the database)" >&2
		return 1
	fi
	ldb --db="$(kvfs_rocksdb_dir)" --column_family="$1" --hex put "0x$2" "0x$3" >/dev/null
}

# ldb_value CF KEYHEX: the value (hex, upper-case, no 0x) of the record
# with that key; fails if there is none.
ldb_value() {
	local out
	out=$(ldb_scan "$1") || return 1
	# ($1 "") forces a string comparison: awk would compare "0x..." fields
	# as (hex floating-point) numbers, and long keys would collide.
	printf '%s\n' "$out" | awk -v k="0x$2" '
		($1 "") == k { v = $3; sub(/^0x/, "", v); print v; found = 1 }
		END { exit !found }'
}

# hexof STRING: the bytes of STRING in upper-case hex, one line.
hexof() {
	printf '%s' "$1" | xxd -p -u | tr -d '\n'
}

# nskey_hex KEY [NS]: the metadata-CF key of KEY (non-cluster), in hex.
nskey_hex() {
	local ns=${2:-$KVFS_DEFAULT_NS}
	printf '%02X%s%s' "${#ns}" "$(hexof "$ns")" "$(hexof "$1")"
}

# --------------------------------------------------------------- asserts

# kvfs_type PATH: the value of PATH's user.kvfs.type attribute.
kvfs_type() {
	getfattr --absolute-names --only-values -n user.kvfs.type -- "$1"
}

# errno_of PYCODE ARGS...: run PYCODE (Python, with os and errno imported
# and the ARGS in the list a) and print the errno name of the OSError it
# raises, or OK if it raises none.
errno_of() {
	python3 -c '
import errno, os, sys
a = sys.argv[2:]
try:
    exec(sys.argv[1])
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))
else:
    print("OK")
' "$@"
}

# assert_bytes FILE STRING: FILE holds exactly the bytes of STRING.
assert_bytes() {
	local got want
	got=$(xxd -p -u "$1" | tr -d '\n') || return 1
	want=$(hexof "$2")
	if [ "$got" != "$want" ]; then
		echo "content of $1:" >&2
		echo "  got      $got" >&2
		echo "  expected $want" >&2
		return 1
	fi
}

# assert_size FILE N: st_size of FILE is N.
assert_size() {
	local got
	got=$(stat -c %s "$1") || return 1
	if [ "$got" != "$2" ]; then
		echo "st_size of $1 is $got, expected $2" >&2
		return 1
	fi
}

# assert_eq GOT WANT [WHAT]
assert_eq() {
	if [ "$1" != "$2" ]; then
		echo "${3:-value}: got '$1', expected '$2'" >&2
		return 1
	fi
}

# push_lines_4 FILE N: 4 shells at once each append the lines pP-1 ... pP-N
# (P = 1..4) to FILE, one `echo >>` (one open, write and close) per line;
# returns when all 4 are done (each waited for by its pid: a bare `wait`
# would also wait for the daemon and the watchdog).
push_lines_4() {
	local p pids=()
	for p in 1 2 3 4; do
		(
			for i in $(seq 1 "$2"); do
				echo "p$p-$i" >>"$1"
			done
		) &
		pids+=($!)
	done
	wait "${pids[@]}"
}

# mktype PATH TYPE: an empty directory key of that type (mkdir, then
# user.kvfs.type).
mktype() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v "$2" "$1"
}

# ---------------------------------------------------------- redis-server

# redis_start [ARGS]: a private redis-server for the test (known answers),
# on the unix socket RSOCK, no port, no persistence, ARGS added (e.g.
# --hll-sparse-max-bytes 0). Skips the test without redis-server.
redis_start() {
	command -v redis-server >/dev/null || skip "redis-server is not installed (make deps)"
	RSOCK=$BATS_TEST_TMPDIR/redis.sock
	redis-server --port 0 --unixsocket "$RSOCK" --save '' --appendonly no \
		--dir "$BATS_TEST_TMPDIR" --daemonize yes --pidfile "$BATS_TEST_TMPDIR/redis.pid" \
		"$@" >/dev/null
	for _ in $(seq 50); do [ -S "$RSOCK" ] && return 0; sleep 0.1; done
	echo "redis-server did not start" >&2
	return 1
}

# redis_stop: end the test's redis-server, if it started one.
redis_stop() {
	if [ -f "$BATS_TEST_TMPDIR/redis.pid" ]; then
		kill "$(cat "$BATS_TEST_TMPDIR/redis.pid")" 2>/dev/null || true
	fi
}
