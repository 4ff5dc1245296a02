# Common helpers of the POSIX conformance suite (tests/posix/*.bats), in
# the style of pjdfstest: each test makes a state, does one operation,
# checks its result (OK or the errno name) and the state after. Load it
# with `load posix`; it loads the bats helper (mount, errno_of, ...).

load ../bats/helper

setup() {
	kvfs_setup
	kvfs_mount
}

# A name of 256 bytes: one over NAME_MAX.
LONG_NAME=$(printf 'n%.0s' $(seq 256))

# expect WANT PYCODE ARGS...: the operation (errno_of) gives WANT (OK or
# an errno name).
expect() {
	local want=$1 got
	shift
	got=$(errno_of "$@")
	if [ "$got" != "$want" ]; then
		echo "expected $want, got $got: $1 ${*:2}" >&2
		return 1
	fi
}

# mktype PATH TYPE: an empty directory key of that type.
mktype() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v "$2" "$1"
}

# names DIR: the names ls -A lists, on one line.
names() {
	ls -A "$1" | paste -sd' '
}

# ro_remount: the same database, mounted read-only.
ro_remount() {
	kvfs_remount -o ro
}

# mode_owner PATH...: "MODE UID:GID" of each path (octal permission bits).
mode_owner() {
	stat -c '%a %u:%g' "$@"
}

# times_ns PATH: "MTIME CTIME" of PATH in nanoseconds, read at once (no
# cached attributes are bypassed: what stat shows now).
times_ns() {
	python3 -c 'import os, sys; s = os.stat(sys.argv[1]); print(s.st_mtime_ns, s.st_ctime_ns)' "$1"
}

# assert_later BEFORE AFTER WHAT: both times of AFTER ("MTIME CTIME") are
# later than those of BEFORE.
assert_later() {
	local bm bc am ac
	read -r bm bc <<<"$1"
	read -r am ac <<<"$2"
	if [ "$am" -le "$bm" ] || [ "$ac" -le "$bc" ]; then
		echo "$3: mtime/ctime did not move: before $1, after $2" >&2
		return 1
	fi
}
