#!/bin/bash
# Run libFuzzer harnesses one after the other (make fuzz-run).
# Usage: tests/fuzz/run.sh BUILD_DIR SECONDS HARNESS...
#
# Each harness starts from its seed corpus (tests/fuzz/corpus/HARNESS,
# never written) and a working corpus (BUILD_DIR/corpus/HARNESS, kept
# between runs); a crash is written to BUILD_DIR/crashes/HARNESS-*.
# The harness runs niced. Prints one line per harness:
#   HARNESS: SECONDS s, EXECS execs, cov COV, ft FT, corpus N, crashes N
# and exits non-zero if any harness found a crash. It fuzzes in fork mode
# and goes on after a crash, saving each (the seed corpus holds the
# reproducers of known crashes, and a harness must still run its full
# time); FUZZ_ARGS replaces these libFuzzer options.

set -u
if [ $# -lt 3 ]; then
	echo "usage: $0 BUILD_DIR SECONDS HARNESS..." >&2
	exit 2
fi
build=$1
secs=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
status=0
summary=()
for h in "$@"; do
	bin=$build/$h
	if [ ! -x "$bin" ]; then
		echo "fuzz-run: no $bin (make fuzz)" >&2
		status=1
		continue
	fi
	work=$build/corpus/$h
	crashes=$build/crashes
	mkdir -p "$work" "$crashes"
	log=$build/$h.log
	echo "=== $h for ${secs}s (log: $log)"
	start=$(date +%s)
	# shellcheck disable=SC2086 # FUZZ_ARGS is a list of options
	nice -n 10 "$bin" -max_total_time="$secs" -timeout=30 -print_final_stats=1 \
		-artifact_prefix="$crashes/$h-" \
		${FUZZ_ARGS:--fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1} \
		"$work" "$here/corpus/$h" \
		>"$log" 2>&1
	rc=$?
	end=$(date +%s)
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	last=$(grep -E '^#[0-9]+:?[[:space:]]' "$log" | tail -n 1)
	[ -n "$execs" ] || execs=$(sed -n 's/^#\([0-9]*\).*/\1/p' <<<"$last")
	cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
	ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
	corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
	found=$(ls "$crashes" 2>/dev/null | grep -c "^$h-")
	line="$h: $((end - start)) s, ${execs:-?} execs, cov ${cov:-?}, ft ${ft:-?}, corpus ${corp:-?}, crashes $found"
	[ "$rc" -ne 0 ] && line="$line (exit $rc: see $log)" && status=1
	echo "$line"
	summary+=("$line")
done
echo "=== summary"
printf '%s\n' "${summary[@]}"
exit $status
