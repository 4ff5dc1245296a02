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
