#!/usr/bin/env bats
# No silent loss, and inputs you can discover (docs/mapping.md, "Scratch
# names" and "Help"): in a directory where only some names are entries
# (list, sortedint, stream, time series, sketches) a name that is neither
# an entry nor a tool's temp name is refused at create with EINVAL and one
# log line naming the directory and what it accepts; a scratch file no
# rename stored logs a line when it is discarded; user.kvfs.help prints
# every name, input and view of a key's type; kvfs --help points to it;
# the kvfs-mapping(7) page reads with man -l.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# A create of NAME in DIR (O_CREAT|O_WRONLY, a write of "x") answers
# EINVAL, and DIR lists the same names before and after.
refused() {
	local before
	before=$(ls -A "$1" | paste -sd' ')
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_CREAT | os.O_APPEND); os.write(fd, b"x\n"); os.close(fd)' "$1/$2"
	assert_eq "$output" EINVAL "create of '$2'"
	[ ! -e "$1/$2" ]
	assert_eq "$(ls -A "$1" | paste -sd' ')" "$before" "names after '$2'"
	grep -q "create '$(basename "$1")/$2': no name a" "$KVFS_LOG"
}

@test "a list refuses a name that is no position nor a temp name, with one log line" {
	mktype "$NS/q" list
	printf a >"$NS/q/0"
	refused "$NS/q" .push
	refused "$NS/q" junk
	run -1 bash -c "echo x >> '$NS/q/.rpsuh'"
	assert_eq "$(grep -c "create 'q/.push'" "$KVFS_LOG")" 1 "log lines"
	grep "create 'q/.push'" "$KVFS_LOG" | grep -q 'it accepts POSITION, LENGTH'
	assert_eq "$(cat "$NS/q/0")" a "element"
}

@test "a time series refuses an unknown input name: nothing is lost silently" {
	mktype "$NS/temp" timeseries
	echo '1,2' >>"$NS/temp/.add"
	refused "$NS/temp" '.add:ON_DUPLICATE=sum'
	refused "$NS/temp" samples.csv
	assert_eq "$(cat "$NS/temp/.last")" "1,2" "series"
}

@test "a stream, a sortedint and every sketch refuse unknown names" {
	mktype "$NS/t" stream
	refused "$NS/t" .ad
	refused "$NS/t" entry
	mktype "$NS/i" sortedint
	refused "$NS/i" .x
	refused "$NS/i" abc
	for t in hyperloglog bloom tdigest topk; do
		mktype "$NS/$t" "$t"
		refused "$NS/$t" .ad
		refused "$NS/$t" notes
	done
}

@test "tools' temp names are still scratch files in a list; vim's probe 4913 is a position" {
	mktype "$NS/l" list
	printf a >"$NS/l/0"
	for n in .0.AbC123 sedAbC123 XXAbC123 CuAbC123 0.oAbC123 0.orig 0.rej .0.swp .0.swpx \
		'0~' '0.~1~' '#0#' '.#0'; do
		printf x >"$NS/l/$n" || return 1
		assert_bytes "$NS/l/$n" x
		rm "$NS/l/$n"
	done
	assert_eq "$(ls -A "$NS/l" | paste -sd' ')" 0 "positions"
	# 4913 is past the end of a list of 1: refused as a position is
	run errno_of 'os.close(os.open(a[0], os.O_WRONLY | os.O_CREAT))' "$NS/l/4913"
	assert_eq "$output" EINVAL "4913"
	grep -q "past the end\|4913" "$KVFS_LOG"
}

@test "a scratch file no rename stored logs a line when it is discarded" {
	mktype "$NS/l" list
	printf a >"$NS/l/0"
	printf hello >"$NS/l/.0.AbC123"
	rm "$NS/l/.0.AbC123"
	grep "'__namespace/l/.0.AbC123' (rsync's temp file), a scratch file no rename stored, is discarded at rm: its 5 bytes" "$KVFS_LOG"
	printf bye >"$NS/l/sedXyZ789"
	kvfs_unmount
	grep -q "'__namespace/l/sedXyZ789' (.*sed -i.*), a scratch file no rename stored, is discarded at exit: its 3 bytes" "$KVFS_LOG"
}

@test "a scratch file discarded with its directory logs a line" {
	mktype "$NS/l" list
	printf a >"$NS/l/0"
	printf x >"$NS/l/0~"
	rm "$NS/l/0"
	rmdir "$NS/l"
	grep -q "'l/0~', a scratch file no rename stored, is discarded with its directory" "$KVFS_LOG"
}

@test "a set still takes any name as a member, but vim's swap file stays a scratch file" {
	mktype "$NS/s" set
	touch "$NS/s/.push" "$NS/s/junk~" "$NS/s/#m#"
	assert_eq "$(ls -A "$NS/s" | paste -sd' ')" "#m# .push junk~" "members"
	printf x >"$NS/s/.m.swp"
	assert_eq "$(ls -A "$NS/s" | paste -sd' ')" "#m# .push junk~" "members"
}

@test "user.kvfs.help lists the names, inputs and views of each type, unlisted" {
	mktype "$NS/l" list
	mktype "$NS/z" zset
	mktype "$NS/t" timeseries
	mktype "$NS/st" stream
	mktype "$NS/h" hyperloglog
	mkdir "$NS/hash"
	echo v >"$NS/str"
	run getfattr --absolute-names --only-values -n user.kvfs.help "$NS/l"
	[ "$status" -eq 0 ]
	[[ "${lines[0]}" == "list 'l': "* ]]
	[[ "$output" == *"POSITION"*"e.g. cat l/-1"* ]]
	run getfattr --absolute-names --only-values -n user.kvfs.help "$NS/z"
	[[ "$output" == *".by-score "*".by-score-rev "*".by-score:MIN..MAX"* ]]
	run getfattr --absolute-names --only-values -n user.kvfs.help "$NS/t"
	for n in .add .last .info .range: .revrange:; do [[ "$output" == *"$n"* ]]; done
	run getfattr --absolute-names --only-values -n user.kvfs.help "$NS/st"
	for n in .add .ctl .log .info .groups .consumers: .pending:; do [[ "$output" == *"$n"* ]]; done
	run getfattr --absolute-names --only-values -n user.kvfs.help "$NS/h"
	for n in registers .add .merge .count; do [[ "$output" == *"$n"* ]]; done
	run getfattr --absolute-names --only-values -n user.kvfs.help "$NS/hash"
	[[ "$output" == *"FIELD"* ]]
	run getfattr --absolute-names --only-values -n user.kvfs.help "$NS/str"
	[[ "${lines[0]}" == "string 'str': "* ]]
	# one line per row after the header, each with an example
	run getfattr --absolute-names --only-values -n user.kvfs.help "$NS/z"
	for ((i = 1; i < ${#lines[@]}; i++)); do [[ "${lines[$i]}" == *"; e.g. "* ]]; done
	# never listed, so rsync -X and cp -a never copy it
	! getfattr -d -m - "$NS/l" "$NS/str" 2>/dev/null | grep -q help
	# and not settable
	run errno_of 'os.setxattr(a[0], "user.kvfs.help", b"x")' "$NS/l"
	[ "$output" != OK ]
}

@test "kvfs --help points to user.kvfs.help; kvfs-mapping(7) reads with man -l" {
	run "$KVFS_BIN" --help
	[[ "$output" == *"user.kvfs.help"* ]]
	[[ "$output" == *"kvfs-mapping(7)"* ]]
	command -v man >/dev/null || skip "man is not installed (make deps)"
	run env MANWIDTH=80 man -l "$BATS_TEST_DIRNAME/../../docs/kvfs-mapping.7"
	[ "$status" -eq 0 ]
	[[ "$output" == *"user.kvfs.help"* ]]
	[[ "$output" == *"sedXXXXXX"* ]]
	run env MANWIDTH=80 man -l "$BATS_TEST_DIRNAME/../../docs/kvfs.1"
	[ "$status" -eq 0 ]
	[[ "$output" == *"kvfs-mapping"* ]]
}
