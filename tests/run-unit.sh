#!/bin/bash
# Run unit-test binaries and total their results.
# Usage: tests/run-unit.sh BIN...
#
# Each binary prints "NAME: N passed, N failed" (tests/unit/check.h) and
# exits non-zero if a check failed. Its output is shown as it runs. A
# binary that crashes, times out, exits non-zero without reporting a
# failure, or whose output carries a sanitizer report counts as one more
# failure, so nothing can fail silently.
#
# Prints "unit: N passed, N failed" last. If KVFS_TEST_SUMMARY names a
# file, "unit PASSED FAILED 0" is appended to it (tests/run-all.sh reads
# it). Exit status 0 only if nothing failed.
# KVFS_UNIT_TIMEOUT: seconds per binary (default 600).

set -u

timeout_s=${KVFS_UNIT_TIMEOUT:-600}
passed=0
failed=0
out=$(mktemp "${TMPDIR:-/tmp}/kvfs-unit.XXXXXX") || exit 2
trap 'rm -f "$out"' EXIT

for bin in "$@"; do
	case $bin in
	*.d | *.o) continue ;; # make's dependency files live beside the binaries
	esac
	if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then
		echo "run-unit: $bin: not an executable file"
		failed=$((failed + 1))
		continue
	fi
	echo "--- $bin"
	timeout -k 10 "$timeout_s" "$bin" 2>&1 | tee "$out"
	status=${PIPESTATUS[0]}

	# "NAME: N passed, N failed" (the last such line wins)
	line=$(grep -E '^[^ :]+: [0-9]+ passed, [0-9]+ failed$' "$out" | tail -n 1)
	p=0
	f=0
	if [ -n "$line" ]; then
		p=$(printf '%s\n' "$line" | sed -E 's/^[^ :]+: ([0-9]+) passed, ([0-9]+) failed$/\1/')
		f=$(printf '%s\n' "$line" | sed -E 's/^[^ :]+: ([0-9]+) passed, ([0-9]+) failed$/\2/')
	fi
	extra=
	if [ "$status" -eq 124 ] || [ "$status" -eq 137 ]; then
		extra="timed out after ${timeout_s}s"
	elif [ -z "$line" ]; then
		extra="printed no \"NAME: N passed, N failed\" line (exit status $status)"
	elif grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$out"; then
		extra="sanitizer report in its output"
	elif [ "$status" -ne 0 ] && [ "$f" -eq 0 ]; then
		extra="exited with status $status but reported no failure"
	fi
	if [ -n "$extra" ]; then
		echo "run-unit: FAIL $bin: $extra"
		f=$((f + 1))
	fi
	passed=$((passed + p))
	failed=$((failed + f))
done

echo "unit: $passed passed, $failed failed"
if [ -n "${KVFS_TEST_SUMMARY:-}" ]; then
	echo "unit $passed $failed 0" >>"$KVFS_TEST_SUMMARY"
fi
[ "$failed" -eq 0 ]
