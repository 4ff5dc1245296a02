#!/bin/bash
# Run the bats suites against a real mount and total the results.
# Usage: [KVFS_BIN=path/to/kvfs] tests/run-bats.sh [FILE.bats...]
#        (default: every tests/bats/*.bats, then tests/posix/*.bats, in name order)
#
# Each file runs as `bats --tap FILE`; its output is shown as it runs.
# "ok" lines count as passed, "ok ... # skip" as skipped, "not ok" as
# failed. Tests the plan announced but that never reported (bats died, a
# timeout) count as failed, and so does a bats run that exits non-zero
# without reporting a failure.
#
# All temporary files, databases and mount points live in one private
# directory (TMPDIR for bats); any mount left behind there after a file
# has run is lazily unmounted, so a broken run cannot leave a stale mount.
#
# Prints "bats: N passed, N failed, N skipped" last. If KVFS_TEST_SUMMARY
# names a file, "bats PASSED FAILED SKIPPED" is appended to it (see
# tests/run-all.sh). Exit status 0 only if nothing failed.
#
# Environment: KVFS_BIN (default build/kvfs), BATS_TEST_TIMEOUT (seconds per
# test, default 900), KVFS_BATS_FILE_TIMEOUT (seconds per file, default 3600).

set -u

here=$(cd "$(dirname "$0")" && pwd)
: "${KVFS_BIN:=$here/../build/kvfs}"
case $KVFS_BIN in
/*) ;;
*) KVFS_BIN=$PWD/$KVFS_BIN ;;
esac
export KVFS_BIN
export BATS_TEST_TIMEOUT=${BATS_TEST_TIMEOUT:-900}
file_timeout=${KVFS_BATS_FILE_TIMEOUT:-3600}

passed=0
failed=0
skipped=0

report() {
	echo "bats: $passed passed, $failed failed, $skipped skipped"
	if [ -n "${KVFS_TEST_SUMMARY:-}" ]; then
		echo "bats $passed $failed $skipped" >>"$KVFS_TEST_SUMMARY"
	fi
	[ "$failed" -eq 0 ]
	exit
}

if ! command -v bats >/dev/null 2>&1; then
	echo "run-bats: bats is not installed (run: make deps)"
	failed=1
	report
fi

if [ $# -gt 0 ]; then
	files=("$@")
else
	files=("$here"/bats/*.bats)
	for f in "$here"/posix/*.bats; do
		[ -e "$f" ] && files+=("$f")
	done
fi
if [ ! -e "${files[0]}" ]; then
	echo "run-bats: no .bats files found in $here/bats"
	failed=1
	report
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/kvfs-bats.XXXXXX") || exit 2
out=$work/tap.out
mkdir "$work/tmp"

# Mount points below $work that are still mounted (from /proc/self/mountinfo).
leftover_mounts() {
	awk -v w="$work/" 'index($5, w) == 1 { print $5 }' /proc/self/mountinfo
}

for f in "${files[@]}"; do
	echo "--- $f"
	TMPDIR=$work/tmp timeout -k 30 "$file_timeout" bats --tap "$f" 2>&1 | tee "$out"
	status=${PIPESTATUS[0]}

	plan=$(sed -nE 's/^1\.\.([0-9]+)$/\1/p' "$out" | head -n 1)
	ok=$(grep -cE '^ok ' "$out")
	skip=$(grep -cE '^ok .* # skip( |$)' "$out")
	notok=$(grep -cE '^not ok ' "$out")
	f_failed=$notok
	missing=$((${plan:-0} - ok - notok))
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		echo "run-bats: FAIL $f: timed out after ${file_timeout}s"
	fi
	if [ "$missing" -gt 0 ]; then
		echo "run-bats: FAIL $f: $missing of $plan tests never reported"
		f_failed=$((f_failed + missing))
	elif [ -z "$plan" ] || { [ "$status" -ne 0 ] && [ "$f_failed" -eq 0 ]; }; then
		echo "run-bats: FAIL $f: bats exited with status $status without reporting a failure"
		f_failed=$((f_failed + 1))
	fi
	passed=$((passed + ok - skip))
	skipped=$((skipped + skip))
	failed=$((failed + f_failed))

	for m in $(leftover_mounts); do
		echo "run-bats: $f left $m mounted; unmounting it lazily"
		fusermount3 -u -z "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
	done
done

if [ -z "$(leftover_mounts)" ]; then
	rm -rf "$work"
else
	echo "run-bats: mounts remain below $work; not removing it"
fi
report
