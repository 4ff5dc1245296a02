#!/usr/bin/env bats
# Lists as queues (docs/mapping.md, "Pushes, inserts and moves"): the inputs
# L/.rpush, .lpush (lines), .rpush0, .lpush0 (NUL-terminated elements),
# .linsert:before:PIVOT, .linsert:after:PIVOT; the moves
# `cat L/.lmove:FROM:TO:DEST`, `.blmove:FROM:TO:DEST:SECS`; and producers,
# consumers and movers racing through real shells, counted exactly.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# mkq PATH: an empty list.
mkq() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v list "$1"
}

# elems PATH: the elements in order, each as [bytes], on one line.
elems() {
	local f
	for f in "$1"/*; do
		[ -e "$f" ] || continue
		printf '[%s]' "$(cat "$f")"
	done
}

@test "RPUSH and LPUSH: one element per line, in order, an empty line is an element, a last line without newline goes at the close" {
	mkq "$NS/q"
	printf 'a\nb\n\nc' >"$NS/q/.rpush"
	assert_eq "$(elems "$NS/q")" "[a][b][][c]" "rpush"
	printf 'x\ny\n' >>"$NS/q/.lpush"
	assert_eq "$(elems "$NS/q")" "[y][x][a][b][][c]" "lpush x y leaves y first, as LPUSH q x y"
	echo z >>"$NS/q/.rpush"
	assert_eq "$(cat "$NS/q/-1")" z "one more at the tail"
	: >"$NS/q/.rpush"
	assert_eq "$(ls "$NS/q" | wc -l)" 7 "an empty write pushes nothing"
	kvfs_remount
	assert_eq "$(elems "$NS/q")" "[y][x][a][b][][c][z]" "stored"
}

@test "RPUSH0 and LPUSH0: NUL-terminated elements keep their newlines and bytes" {
	mkq "$NS/q"
	printf 'l1\nl2\0\0b\tc\0tail' >"$NS/q/.rpush0"
	assert_eq "$(ls "$NS/q" | wc -l)" 4 "four elements"
	assert_eq "$(xxd -p "$NS/q/0")" 6c310a6c32 "a newline inside"
	assert_size "$NS/q/1" 0
	assert_eq "$(xxd -p "$NS/q/2")" 620963 "b TAB c"
	assert_eq "$(cat "$NS/q/3")" tail "the last at the close"
	printf 'p\0q\0' >>"$NS/q/.lpush0"
	assert_eq "$(cat "$NS/q/0")" q "LPUSH order"
	cat "$NS/q/.lpop" >"$BATS_TEST_TMPDIR/e"
	cat "$NS/q/.lpop" >/dev/null
	cat "$NS/q/.lpop" >"$BATS_TEST_TMPDIR/e"
	assert_eq "$(xxd -p "$BATS_TEST_TMPDIR/e")" 6c310a6c32 "popped as pushed"
	(cd "$BATS_TEST_TMPDIR" && mkdir -p t && touch t/one 't/two words' && find t -type f -print0) >"$NS/q/.rpush0"
	assert_eq "$(cat "$NS/q/-1")" "t/two words" "find -print0 feeds it"
}

@test "inputs are never listed, cannot be removed or renamed, read empty; a misspelt one is refused" {
	mkq "$NS/q"
	echo a >"$NS/q/.rpush"
	assert_eq "$(ls -a "$NS/q" | paste -sd' ')" ". .. 0" "listing"
	assert_eq "$(find "$NS/q" | wc -l)" 2 "find"
	assert_eq "$(stat -c %s "$NS/q/.rpush")" 0 "size"
	assert_eq "$(cat "$NS/q/.rpush")" "" "reads empty"
	run errno_of 'os.unlink(a[0])' "$NS/q/.lpush"
	assert_eq "$output" EACCES "rm"
	run errno_of 'os.rename(a[0], a[1])' "$NS/q/.rpush" "$NS/q/1"
	assert_eq "$output" EACCES "mv"
	run errno_of 'open(a[0], "a")' "$NS/q/.rpushx"
	assert_eq "$output" EINVAL "a typo"
	run errno_of 'open(a[0], "a")' "$NS/q/.linsert:middle:a"
	assert_eq "$output" EINVAL "neither before nor after"
	assert_eq "$(elems "$NS/q")" "[a]" "unchanged"
	getfattr -n user.kvfs.help "$NS/q" | grep -q '\.rpush0'
	getfattr -n user.kvfs.help "$NS/q" | grep -q '\.lmove:FROM:TO:DEST'
}

@test "LINSERT: each line goes right before (in order) or right after (the last first) the first element equal to PIVOT, spelt as file names are" {
	mkq "$NS/q"
	printf 'a\nb\na/b\nb\n' >"$NS/q/.rpush"
	printf 'x\ny\n' >>"$NS/q/.linsert:before:b"
	assert_eq "$(elems "$NS/q")" "[a][x][y][b][a/b][b]" "before the first b"
	printf 'p\nq\n' >>"$NS/q/.linsert:after:b" # bash: one write per line
	assert_eq "$(elems "$NS/q")" "[a][x][y][b][q][p][a/b][b]" "after it, each in turn: the last first"
	env printf 'u\nv\n' >>"$NS/q/.linsert:after:p" # one write: the same order
	assert_eq "$(elems "$NS/q")" "[a][x][y][b][q][p][v][u][a/b][b]" "one write"
	echo s >>"$NS/q/.linsert:after:a%2Fb"
	assert_eq "$(cat "$NS/q/9")" s "pivot a/b as a%2Fb"
	printf 'm\nn\0o\0' >>"$NS/q/.linsert0:before:a"
	assert_eq "$(cat "$NS/q/0")" "m
n" "binary-safe form"
	assert_eq "$(cat "$NS/q/1")" o "and the next"
}

@test "LINSERT with no such pivot (or an empty list) is ENOENT, logged, and inserts nothing" {
	mkq "$NS/q"
	printf 'a\nb\n' >"$NS/q/.rpush"
	run errno_of 'f = open(a[0], "w"); f.write("x\n"); f.flush()' "$NS/q/.linsert:before:zz"
	assert_eq "$output" ENOENT "no pivot"
	grep -q "'q/.linsert:before:zz': no element equals the pivot" "$KVFS_LOG"
	assert_eq "$(elems "$NS/q")" "[a][b]" "nothing inserted"
	mkq "$NS/e"
	run errno_of 'f = open(a[0], "w"); f.write("x\n"); f.flush()' "$NS/e/.linsert:after:a"
	assert_eq "$output" ENOENT "an empty list has no pivot"
	assert_eq "$(ls -A "$NS/e")" "" "still empty"
	assert_eq "$(kvfs_type "$NS/e")" list "still a list"
}

@test "LMOVE: pops from one end, pushes onto the other list's end in one step, prints the element; DEST is made if missing" {
	mkq "$NS/q"
	printf 'a\nb\nc\n' >"$NS/q/.rpush"
	assert_eq "$(cat "$NS/q/.lmove:left:right:work")" a "moved"
	assert_eq "$(kvfs_type "$NS/work")" list "DEST made"
	assert_eq "$(cat "$NS/q/.lmove:right:left:work")" c "right to left"
	assert_eq "$(elems "$NS/work")" "[c][a]" "DEST"
	assert_eq "$(elems "$NS/q")" "[b]" "source"
	assert_eq "$(cat "$NS/q/.lmove:left:left:a%2Fb")" b "DEST spelt as file names are"
	assert_eq "$(cat "$NS/a%2Fb/0")" b "in a/b"
	run cat "$NS/q/.lmove:left:right:work"
	[ "$status" -eq 0 ]
	assert_eq "$output" "" "an empty source reads empty"
	assert_eq "$(kvfs_type "$NS/q")" list "the source stays, empty"
	[ ! -e "$NS/never" ]
	assert_eq "$(cat "$NS/q/.lmove:left:right:never")" "" "nothing to move"
	[ ! -e "$NS/never" ] # no DEST made when nothing moves
	kvfs_remount
	assert_eq "$(elems "$NS/work")" "[c][a]" "stored"
}

@test "LMOVE of a list onto itself rotates it" {
	mkq "$NS/r"
	printf '1\n2\n3\n' >"$NS/r/.rpush"
	assert_eq "$(cat "$NS/r/.lmove:left:right:r")" 1 "moved"
	assert_eq "$(elems "$NS/r")" "[2][3][1]" "rotated"
	cat "$NS/r/.lmove:right:left:r" >/dev/null
	assert_eq "$(elems "$NS/r")" "[1][2][3]" "back"
}

@test "LMOVE errors: DEST of another type is EMEDIUMTYPE, a bad name EINVAL; nothing moves" {
	mkq "$NS/q"
	printf 'a\nb\n' >"$NS/q/.rpush"
	echo s >"$NS/str"
	run errno_of 'open(a[0]).read()' "$NS/q/.lmove:left:right:str"
	assert_eq "$output" EMEDIUMTYPE "a string DEST"
	grep -q "'q/.lmove:left:right:str': 'str' is no list: nothing moved" "$KVFS_LOG"
	for bad in .lmove:up:left:w .lmove:left:w .lmove:left:right: .blmove:left:right:w .blmove:left:right:w:x .blmove:left:right::1; do
		run errno_of 'open(a[0]).read()' "$NS/q/$bad"
		assert_eq "$output" EINVAL "$bad"
	done
	run errno_of 'open(a[0], "w")' "$NS/q/.lmove:left:right:w"
	assert_eq "$output" EACCES "a move is read, not written"
	assert_eq "$(elems "$NS/q")" "[a][b]" "nothing moved"
	assert_eq "$(cat "$NS/str")" s "DEST unchanged"
	[ ! -e "$NS/w" ]
}

@test "BLMOVE waits for a push, then moves it; ETIMEDOUT when none came" {
	mkq "$NS/q"
	(
		sleep 0.4
		echo job >>"$NS/q/.rpush"
	) &
	pusher=$!
	got=$(cat "$NS/q/.blmove:left:right:work:10")
	wait $pusher
	assert_eq "$got" job "moved"
	assert_eq "$(elems "$NS/work")" "[job]" "in DEST"
	assert_eq "$(ls -A "$NS/q")" "" "gone from the source"
	run errno_of 'open(a[0]).read()' "$NS/q/.blmove:left:right:work:0.3"
	assert_eq "$output" ETIMEDOUT "timed out"
	assert_eq "$(elems "$NS/work")" "[job]" "unchanged"
}

@test "the consumer loop: while x=\$(cat q/.blpop:0); do ...; done gets every pushed line, in order" {
	mkq "$NS/q"
	(
		while x=$(cat "$NS/q/.blpop:0"); do
			[ "$x" = STOP ] && break
			echo "$x"
		done >"$BATS_TEST_TMPDIR/got"
	) &
	consumer=$!
	for i in $(seq 1 50); do
		echo "job $i" >>"$NS/q/.rpush"
	done
	seq 51 100 | sed 's/^/job /' >>"$NS/q/.rpush"
	echo STOP >>"$NS/q/.rpush"
	wait $consumer
	assert_eq "$(cat "$BATS_TEST_TMPDIR/got")" "$(seq 1 100 | sed 's/^/job /')" "every job once, in order"
	assert_eq "$(ls -A "$NS/q")" "" "nothing left"
}

@test "a reliable queue: each worker moves a job to its own list, and a dead worker's jobs go back" {
	mkq "$NS/jobs"
	seq 1 6 >"$NS/jobs/.rpush"
	# A worker: take a job (LMOVE), do it, then drop it from its own list.
	for i in 1 2 3; do
		job=$(cat "$NS/jobs/.lmove:left:right:pending-w1")
		echo "done $job" >>"$BATS_TEST_TMPDIR/done"
		cat "$NS/pending-w1/.lpop" >/dev/null
	done
	# Another worker takes a job and dies before it is done.
	job=$(cat "$NS/jobs/.lmove:left:right:pending-w2")
	assert_eq "$job" 4 "taken"
	assert_eq "$(elems "$NS/pending-w2")" "[4]" "kept while it works"
	# Recovery: what the dead worker held goes back to the head of the queue.
	while [ -n "$(ls -A "$NS/pending-w2")" ]; do
		cat "$NS/pending-w2/.lmove:right:left:jobs" >/dev/null
	done
	assert_eq "$(elems "$NS/jobs")" "[4][5][6]" "nothing lost"
	assert_eq "$(paste -sd' ' "$BATS_TEST_TMPDIR/done")" "done 1 done 2 done 3" "done once"
}

@test "contention: 4 producers x 1,000 pushes through .rpush and 4 blocking consumers deliver every element exactly once" {
	mkq "$NS/q"
	for c in 1 2 3 4; do
		(
			while x=$(cat "$NS/q/.blpop:3"); do
				printf '%s\n' "$x"
			done >"$BATS_TEST_TMPDIR/got.$c"
		) &
		eval "consumer$c=\$!"
	done
	push_lines_4 "$NS/q/.rpush" 1000
	for c in 1 2 3 4; do
		eval "wait \$consumer$c"
	done
	for p in 1 2 3 4; do
		seq -f "p$p-%g" 1 1000
	done | sort >"$BATS_TEST_TMPDIR/want"
	cat "$BATS_TEST_TMPDIR"/got.* | sort >"$BATS_TEST_TMPDIR/got"
	assert_eq "$(wc -l <"$BATS_TEST_TMPDIR/got")" 4000 "4,000 popped"
	cmp "$BATS_TEST_TMPDIR/want" "$BATS_TEST_TMPDIR/got"
	assert_eq "$(ls -A "$NS/q")" "" "nothing left"
}

@test "contention: 4 movers LMOVE 2,000 elements to a work list; nothing lost, nothing twice" {
	mkq "$NS/src"
	seq 1 2000 >"$NS/src/.rpush"
	for m in 1 2 3 4; do
		(
			while x=$(cat "$NS/src/.lmove:left:right:work") && [ -n "$x" ]; do
				printf '%s\n' "$x"
			done >"$BATS_TEST_TMPDIR/moved.$m"
		) &
		eval "mover$m=\$!"
	done
	for m in 1 2 3 4; do
		eval "wait \$mover$m"
	done
	assert_eq "$(cat "$BATS_TEST_TMPDIR"/moved.* | wc -l)" 2000 "2,000 moves"
	assert_eq "$(cat "$BATS_TEST_TMPDIR"/moved.* | sort -n | uniq | wc -l)" 2000 "none twice"
	assert_eq "$(ls -A "$NS/src" | wc -l)" 0 "source empty"
	assert_eq "$(ls "$NS/work" | wc -l)" 2000 "work list exact"
	for f in "$NS/work"/*; do cat "$f"; echo; done | sort -n >"$BATS_TEST_TMPDIR/work"
	cmp "$BATS_TEST_TMPDIR/work" <(seq 1 2000)
}
