#!/bin/bash
# Run every test: the unit binaries in BUILD_DIR/tests/test_*, then the bats
# suites against BUILD_DIR/kvfs.
# Usage: tests/run-all.sh BUILD_DIR [UNIT_BINARY...]
#        (make check / make test / make asan pass the unit binaries of the
#        current sources, so a stale binary left in BUILD_DIR/tests by a
#        renamed or removed test never runs; without them every test_* there
#        runs)
#
# The last line is always "tests: N passed, N failed" (", N skipped" is
# added when some were skipped). Exit status 0 only if nothing failed and
# at least one test ran.
#
# Under `make asan` BUILD_DIR is build-asan and the sanitizer options come
# from the environment; the unit runner and the bats helper both fail a
# test whose output or daemon log holds a sanitizer report.

set -u

if [ $# -lt 1 ]; then
	echo "usage: $0 BUILD_DIR [UNIT_BINARY...]" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" 2>/dev/null && pwd) || {
	echo "run-all: no build directory $1"
	echo "tests: 0 passed, 1 failed"
	exit 1
}

summary=$(mktemp "${TMPDIR:-/tmp}/kvfs-summary.XXXXXX") || exit 2
trap 'rm -f "$summary"' EXIT
export KVFS_TEST_SUMMARY=$summary

shift
units=()
if [ $# -gt 0 ]; then
	for f in "$@"; do
		if [ -f "$f" ] && [ -x "$f" ]; then
			units+=("$f")
		else
			echo "run-all: no unit-test binary $f"
			echo "tests: 0 passed, 1 failed"
			exit 1
		fi
	done
else
	for f in "$build"/tests/test_* "$build"/tests/*/test_*; do
		case $f in
		*.d | *.o) continue ;;
		esac
		[ -f "$f" ] && [ -x "$f" ] && units+=("$f")
	done
fi

echo "=== unit tests (${#units[@]} binaries in $build/tests)"
if [ ${#units[@]} -gt 0 ]; then
	"$here/run-unit.sh" "${units[@]}"
else
	echo "run-all: no unit-test binaries in $build/tests"
fi

echo "=== bats suites (KVFS_BIN=$build/kvfs)"
KVFS_BIN=$build/kvfs "$here/run-bats.sh"

# Each runner appended "NAME PASSED FAILED SKIPPED"; a runner that died
# without appending its line counts as one failure.
passed=0
failed=0
skipped=0
for part in unit bats; do
	if [ "$part" = unit ] && [ ${#units[@]} -eq 0 ]; then
		continue
	fi
	line=$(grep -E "^$part [0-9]+ [0-9]+ [0-9]+$" "$summary" | tail -n 1)
	if [ -z "$line" ]; then
		echo "run-all: the $part runner reported no totals"
		failed=$((failed + 1))
		continue
	fi
	read -r _ p f s <<<"$line"
	passed=$((passed + p))
	failed=$((failed + f))
	skipped=$((skipped + s))
done

final="tests: $passed passed, $failed failed"
[ "$skipped" -gt 0 ] && final="$final, $skipped skipped"
echo "$final"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
