#!/usr/bin/env bats
# A JSON document as a tree (docs/mapping.md section 18, "The document as
# a tree"): the unlisted directory KEY:tree, objects and arrays as
# directories, scalars as files of their text and a newline, the type in
# user.kvfs.json.type; reading with ls, find, grep -r, cat; changing with
# echo, mkdir, rm, rmdir, mv, sed -i and vim; refusals that change
# nothing; the stored bytes (ldb) equal to a path name's JSON.SET; no
# lost update when shells race on members of one document.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# mkjson KEY TEXT: a JSON key holding TEXT.
mkjson() {
	touch "$1"
	setfattr -n user.kvfs.type -v json "$1"
	printf '%s' "$2" >"$1"
}

jtype() {
	getfattr --absolute-names --only-values -n user.kvfs.json.type -- "$1"
}

DOC='{"server":{"port":80,"hosts":["a","b"],"name":"web"},"debug":false,"n":null,"f":2.5}'

@test "tree: ls, find, cat and the type of every node; the tree is not listed" {
	mkjson "$NS/cfg" "$DOC"
	T="$NS/cfg:tree"
	run ls "$NS"
	assert_eq "$output" "cfg" "namespace listing"
	run ls "$T"
	assert_eq "$(echo $output)" "debug f n server"
	run find "$T" -type f
	assert_eq "$(echo $output | tr ' ' '\n' | sed "s|^$T/||" | sort | tr '\n' ' ')" \
		"debug f n server/hosts/0 server/hosts/1 server/name server/port "
	assert_eq "$(cat "$T/server/port")" 80
	assert_eq "$(cat "$T/server/name")" web
	assert_eq "$(cat "$T/debug")" false
	assert_eq "$(cat "$T/n")" null
	assert_eq "$(cat "$T/f")" 2.5
	assert_eq "$(cat "$T/server/hosts/1")" b
	assert_eq "$(jtype "$T")" object
	assert_eq "$(jtype "$T/server/hosts")" array
	assert_eq "$(jtype "$T/server/port")" integer
	assert_eq "$(jtype "$T/f")" number
	assert_eq "$(jtype "$T/server/name")" string
	assert_eq "$(jtype "$T/debug")" boolean
	assert_eq "$(jtype "$T/n")" null
	[ -d "$T/server/hosts" ]
	[ -f "$T/server/port" ]
}

@test "tree: sizes are exact, a string is its raw bytes and a newline" {
	mkjson "$NS/d" '{"s":"x\ny \"q\"","i":12345,"e":""}'
	T="$NS/d:tree"
	assert_size "$T/s" 8
	assert_eq "$(od -An -c "$T/s" | tr -s ' ')" ' x \n y " q " \n'
	assert_size "$T/i" 6
	assert_size "$T/e" 1
	for f in s i e; do
		assert_eq "$(cat "$T/$f" | wc -c)" "$(stat -c %s "$T/$f")" "size of $f"
	done
}

@test "tree: grep -r finds members" {
	mkjson "$NS/cfg" "$DOC"
	run grep -r port "$NS/cfg:tree"
	[ "$status" -eq 1 ] # names are not contents
	run grep -rl web "$NS/cfg:tree"
	assert_eq "$output" "$NS/cfg:tree/server/name"
	run grep -r '^9' "$NS/cfg:tree"
	[ "$status" -eq 1 ]
	run grep -rx 80 "$NS/cfg:tree"
	assert_eq "$output" "$NS/cfg:tree/server/port:80"
}

@test "tree: array positions are padded to the array's width and sort in order" {
	mkjson "$NS/a" '{"v":[0,1,2,3,4,5,6,7,8,9,10],"w":[1]}'
	run ls "$NS/a:tree/v"
	assert_eq "$(echo $output)" "00 01 02 03 04 05 06 07 08 09 10"
	assert_eq "$(cat "$NS/a:tree/v/03")" 3
	[ ! -e "$NS/a:tree/v/3" ] # only the padded spelling names an element
	run ls "$NS/a:tree/w"
	assert_eq "$output" 0
}

@test "tree: a big array is listed whole, in order, from resumed offsets" {
	local text
	text=$(python3 -c 'import json; print(json.dumps({"big": list(range(3000))}))')
	mkjson "$NS/b" "$text"
	run ls "$NS/b:tree/big"
	[ "${#lines[@]}" -eq 3000 ]
	assert_eq "${lines[0]}" 0000
	assert_eq "${lines[2999]}" 2999
	printf '%s\n' "${lines[@]}" | sort -c
	run python3 "$BATS_TEST_DIRNAME/../tools/getdents.py" -b 256 "$NS/b:tree/big"
	[ "$status" -eq 0 ]
	assert_eq "$output" "entries 3000 distinct 3000 duplicates 0"
	assert_eq "$(cat "$NS/b:tree/big/1234")" 1234
}

@test "tree: member names are escaped as key names are (/, ., empty)" {
	mkjson "$NS/d" '{"a/b":1,"":2,".":3,"..":4}'
	run ls -A "$NS/d:tree"
	assert_eq "$(echo $output)" "% %2E %2E%2E a%2Fb"
	assert_eq "$(cat "$NS/d:tree/a%2Fb" "$NS/d:tree/%" "$NS/d:tree/%2E" "$NS/d:tree/%2E%2E")" \
		"$(printf '1\n2\n3\n4')"
	echo 5 >"$NS/d:tree/a%2Fb"
	assert_eq "$(cat "$NS/d")" '{"":2,".":3,"..":4,"a/b":5}'
	# A member name cannot hold a NUL byte: refused, logged, nothing made.
	run bash -c "echo 1 >'$NS/d:tree/a%00b'"
	[[ "$output" == *"Invalid argument"* ]]
	grep -q "a member name cannot hold a NUL byte" "$KVFS_LOG"
	assert_eq "$(cat "$NS/d")" '{"":2,".":3,"..":4,"a/b":5}'
	# A name longer than a file name: shown as a long name, still reached.
	local long
	long=$(printf 'k%.0s' $(seq 300))
	echo "{\"$long\":1}" >"$NS/d"
	run ls "$NS/d:tree"
	[[ "$output" == *"%~"* ]]
	echo 7 >"$NS/d:tree/$output"
	assert_eq "$(cat "$NS/d")" "{\"$long\":7}"
}

@test "tree: a real key named KEY:tree wins; a string key has no tree" {
	[ ! -e "$NS/cfg:tree" ] # a miss the kernel must not keep:
	mkjson "$NS/cfg" "$DOC"
	[ -d "$NS/cfg:tree" ]
	kvfs_unmount
	# A string key "cfg:tree" written by another program (Kvrocks).
	ldb_put metadata "$(nskey_hex 'cfg:tree')" "810000000000000000$(hexof plain)"
	kvfs_mount
	assert_eq "$(cat "$NS/cfg:tree")" plain
	echo text >"$NS/s"
	[ ! -e "$NS/s:tree" ]
}

@test "tree: echo into a number member stores JSON text; a string member raw text" {
	mkjson "$NS/cfg" "$DOC"
	T="$NS/cfg:tree"
	echo 8080 >"$T/server/port"
	echo 'hello "world"' >"$T/server/name"
	assert_eq "$(cat "$NS/cfg")" \
		'{"debug":false,"f":2.5,"n":null,"server":{"hosts":["a","b"],"name":"hello \"world\"","port":8080}}'
	assert_eq "$(cat "$NS/cfg:\$.server.port")" 8080
	# A number member takes any JSON scalar: its type follows.
	echo 1.5 >"$T/server/port"
	assert_eq "$(jtype "$T/server/port")" number
	echo true >"$T/n"
	assert_eq "$(jtype "$T/n")" boolean
	printf 'no newline' >"$T/server/name"
	assert_eq "$(cat "$NS/cfg:\$.server.name")" '"no newline"'
}

@test "tree: non-JSON or an out-of-range integer in a number member: EINVAL, ERANGE, nothing changes" {
	mkjson "$NS/cfg" "$DOC"
	local before
	before=$(cat "$NS/cfg")
	run bash -c "printf 'eighty' | cat >'$NS/cfg:tree/server/port'"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Invalid argument"* ]]
	run bash -c "echo 99999999999999999999 | cat >'$NS/cfg:tree/server/port'"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Numerical result out of range"* ]]
	run bash -c "echo '{\"a\":1}' | cat >'$NS/cfg:tree/server/port'"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Invalid argument"* ]]
	assert_eq "$(cat "$NS/cfg")" "$before"
	grep -q "tree write 'cfg': not one JSON value" "$KVFS_LOG"
	grep -q "integer 99999999999999999999 is out of the 64-bit range" "$KVFS_LOG"
}

@test "tree: a new file is a string; user.kvfs.json.type changes a scalar's type" {
	mkjson "$NS/cfg" '{"a":1}'
	T="$NS/cfg:tree"
	echo 42 >"$T/new"
	assert_eq "$(jtype "$T/new")" string
	assert_eq "$(cat "$NS/cfg")" '{"a":1,"new":"42"}'
	setfattr -n user.kvfs.json.type -v integer "$T/new"
	assert_eq "$(cat "$NS/cfg")" '{"a":1,"new":42}'
	setfattr -n user.kvfs.json.type -v number "$T/new"
	assert_eq "$(cat "$NS/cfg")" '{"a":1,"new":42.0}'
	setfattr -n user.kvfs.json.type -v string "$T/a"
	assert_eq "$(cat "$NS/cfg")" '{"a":"1","new":42.0}'
	echo abc >"$T/a"
	run setfattr -n user.kvfs.json.type -v integer "$T/a"
	[ "$status" -ne 0 ]
	run setfattr -n user.kvfs.json.type -v object "$T/a"
	[ "$status" -ne 0 ]
	run setfattr -n user.kvfs.json.type -v nonsense "$T/a"
	[ "$status" -ne 0 ]
	assert_eq "$(cat "$NS/cfg")" '{"a":"abc","new":42.0}'
}

@test "tree: mkdir makes an object, the type xattr an array; rmdir only empty ones" {
	mkjson "$NS/cfg" '{"a":1}'
	T="$NS/cfg:tree"
	mkdir "$T/log"
	echo 2 >"$T/log/level"
	assert_eq "$(cat "$NS/cfg")" '{"a":1,"log":{"level":"2"}}'
	mkdir "$T/list"
	setfattr -n user.kvfs.json.type -v array "$T/list"
	echo x >"$T/list/0"
	echo y >"$T/list/1"
	mkdir "$T/list/2"
	assert_eq "$(cat "$NS/cfg")" '{"a":1,"list":["x","y",{}],"log":{"level":"2"}}'
	run rmdir "$T/log"
	[ "$status" -ne 0 ]
	[[ "$output" == *"Directory not empty"* ]]
	run mkdir "$T/list/7"
	[[ "$output" == *"Invalid argument"* ]]
	run bash -c "echo z >'$T/list/x'"
	[[ "$output" == *"Invalid argument"* ]]
	rmdir "$T/list/2"
	rm "$T/log/level"
	rmdir "$T/log"
	assert_eq "$(cat "$NS/cfg")" '{"a":1,"list":["x","y"]}'
}

@test "tree: rm of a member and of an element (the later ones move down)" {
	mkjson "$NS/cfg" '{"a":1,"l":["x","y","z"],"o":{}}'
	T="$NS/cfg:tree"
	rm "$T/a"
	rm "$T/l/0"
	assert_eq "$(cat "$NS/cfg")" '{"l":["y","z"],"o":{}}'
	assert_eq "$(cat "$T/l/0")" y
	run rm "$T/o"
	[ "$status" -ne 0 ]
	run rm "$T/missing"
	[[ "$output" == *"No such file or directory"* ]]
	rm -r "$T/l"
	assert_eq "$(cat "$NS/cfg")" '{"o":{}}'
}

@test "tree: mv inside a document is one move; across documents EXDEV" {
	mkjson "$NS/cfg" '{"a":{"b":1},"c":[1,2],"d":"s"}'
	mkjson "$NS/other" '{}'
	T="$NS/cfg:tree"
	mv "$T/a/b" "$T/top"
	assert_eq "$(cat "$NS/cfg")" '{"a":{},"c":[1,2],"d":"s","top":1}'
	mv "$T/d" "$T/c/2"
	assert_eq "$(cat "$NS/cfg")" '{"a":{},"c":[1,2,"s"],"top":1}'
	mv "$T/top" "$T/c/0"
	assert_eq "$(cat "$NS/cfg")" '{"a":{},"c":[1,2,"s"]}' # replaced element 0
	run errno_of 'os.rename(a[0], a[1])' "$T/c" "$NS/other:tree/c"
	assert_eq "$output" EXDEV
	run errno_of 'os.rename(a[0], a[1])' "$T/c" "$NS/elsewhere"
	assert_eq "$output" EXDEV
	run errno_of 'os.rename(a[0], a[1])' "$T/a" "$T/a/x"
	assert_eq "$output" EINVAL
	assert_eq "$(cat "$NS/cfg")" '{"a":{},"c":[1,2,"s"]}'
}

@test "tree: sed -i and vim edit one member; its type stays" {
	mkjson "$NS/cfg" '{"port":8080,"name":"web"}'
	T="$NS/cfg:tree"
	sed -i 's/8080/9090/' "$T/port"
	sed -i 's/web/www/' "$T/name"
	assert_eq "$(cat "$NS/cfg")" '{"name":"www","port":9090}'
	local vim
	vim=$(command -v vim.tiny || command -v vim) || skip "neither vim.tiny nor vim is installed"
	# backupskip emptied: its default skips /tmp, where the tests run.
	"$vim" -u NONE -N -es -c "set backupskip=" -c '%s/9090/7070/' -c wq "$T/port"
	assert_eq "$(cat "$NS/cfg")" '{"name":"www","port":7070}'
	# backupcopy=no: the member is renamed to port~, then port written anew.
	"$vim" -u NONE -N -es -c "set backupskip= backupcopy=no writebackup" \
		-c '%s/7070/6060/' -c wq "$T/port"
	"$vim" -u NONE -N -es -c "set backupskip= backupcopy=no writebackup" \
		-c '%s/www/w3/' -c wq "$T/name"
	assert_eq "$(cat "$NS/cfg")" '{"name":"w3","port":6060}'
	assert_eq "$(jtype "$T/port")" integer
	run ls -A "$T"
	assert_eq "$(echo $output)" "name port" # no swap, backup or temp left
}

@test "tree: a file held open shows a change made through the key when read again" {
	mkjson "$NS/cfg" '{"a":1}'
	exec 8<"$NS/cfg:tree/a"
	echo '{"a":22}' >"$NS/cfg"
	assert_eq "$(cat "$NS/cfg:tree/a")" 22
	assert_size "$NS/cfg:tree/a" 3
	exec 8<&-
}

@test "tree: a tree write stores the same bytes as JSON.SET through the path name (ldb)" {
	mkjson "$NS/t1" "$DOC"
	mkjson "$NS/t2" "$DOC"
	echo 8080 >"$NS/t1:tree/server/port"
	echo 8080 >"$NS/t2:\$.server.port"
	echo new >"$NS/t1:tree/server/name"
	echo '"new"' >"$NS/t2:\$.server.name"
	kvfs_unmount
	local v1 v2
	v1=$(ldb_value metadata "$(nskey_hex t1)")
	v2=$(ldb_value metadata "$(nskey_hex t2)")
	assert_eq "$v1" "$v2"
	assert_eq "$v1" "8A000000000000000000$(hexof '{"debug":false,"f":2.5,"n":null,"server":{"hosts":["a","b"],"name":"new","port":8080}}')"
	kvfs_mount
}

@test "tree: writes keep the key's expiry; a write to the key shows in the tree at once" {
	mkjson "$NS/cfg" '{"a":1}'
	setfattr -n user.kvfs.ttl -v 600000 "$NS/cfg"
	echo 2 >"$NS/cfg:tree/a"
	local ttl
	ttl=$(getfattr --absolute-names --only-values -n user.kvfs.ttl "$NS/cfg")
	[ "$ttl" -gt 500000 ]
	assert_eq "$(cat "$NS/cfg:tree/a")" 2
	echo '{"a":3,"b":[1]}' >"$NS/cfg"
	assert_eq "$(cat "$NS/cfg:tree/a")" 3
	assert_size "$NS/cfg:tree/a" 2
	echo '{"b":[1]}' >"$NS/cfg"
	[ ! -e "$NS/cfg:tree/a" ]
	echo 4 >"$NS/cfg:\$.a"
	assert_eq "$(cat "$NS/cfg:tree/a")" 4
}

@test "tree: 4 shells incrementing members while a fifth rewrites another lose no update" {
	mkjson "$NS/k" '{"c0":0,"c1":0,"c2":0,"c3":0,"other":"x"}'
	T="$NS/k:tree"
	local pids=() i
	for i in 0 1 2 3; do
		(
			for _ in $(seq 200); do
				v=$(cat "$T/c$i")
				echo $((v + 1)) >"$T/c$i"
			done
		) &
		pids+=($!)
	done
	(for j in $(seq 200); do echo "w$j" >"$T/other"; done) &
	pids+=($!)
	for i in "${pids[@]}"; do
		wait "$i"
	done
	assert_eq "$(cat "$NS/k")" '{"c0":200,"c1":200,"c2":200,"c3":200,"other":"w200"}'
}

@test "tree: a file open for writing stores its member after a sibling is removed or it is moved" {
	mkjson "$NS/cfg" '{"a":"x","b":"y","c":"z"}'
	exec 8>"$NS/cfg:tree/a"
	rm "$NS/cfg:tree/b"
	echo new >&8
	exec 8>&-
	assert_eq "$(cat "$NS/cfg")" '{"a":"new","c":"z"}'
	exec 8>"$NS/cfg:tree/c"
	mv "$NS/cfg:tree/c" "$NS/cfg:tree/d"
	echo moved >&8
	exec 8>&-
	assert_eq "$(cat "$NS/cfg")" '{"a":"new","d":"moved"}'
	# mv -n (RENAME_NOREPLACE) onto a member: nothing moves.
	mv -n "$NS/cfg:tree/a" "$NS/cfg:tree/d" || true
	assert_eq "$(cat "$NS/cfg")" '{"a":"new","d":"moved"}'
}

@test "tree: rm -r and rm ARRAY/* remove every element they listed (names keep their numbering)" {
	local text
	text=$(python3 -c 'import json; print(json.dumps({"a": list(range(12)), "b": list(range(12))}))')
	mkjson "$NS/r" "$text"
	rm -r "$NS/r:tree/a"
	rm "$NS/r:tree/b/"*
	assert_eq "$(cat "$NS/r")" '{"b":[]}'
	# A new listing numbers afresh.
	echo '{"c":[1,2,3]}' >"$NS/r"
	rm "$NS/r:tree/c/0"
	run ls "$NS/r:tree/c"
	assert_eq "$(echo $output)" "0 1"
	rm "$NS/r:tree/c/0"
	assert_eq "$(cat "$NS/r")" '{"c":[3]}'
}

@test "tree: KEY:tree itself cannot be removed or renamed (EBUSY): it is a view of its key" {
	mkjson "$NS/cfg" '{"a":1}'
	run errno_of 'os.rmdir(a[0])' "$NS/cfg:tree"
	assert_eq "$output" EBUSY
	run errno_of 'os.rename(a[0], a[1])' "$NS/cfg:tree" "$NS/other"
	assert_eq "$output" EBUSY
	mkdir "$NS/h"
	run errno_of 'os.rename(a[0], a[1])' "$NS/h" "$NS/cfg:tree"
	assert_eq "$output" EBUSY
	assert_eq "$(cat "$NS/cfg")" '{"a":1}'
	[ -d "$NS/h" ]
	grep -q "a JSON document's tree is a view of its key" "$KVFS_LOG"
}

@test "tree: a document that is one scalar is a file KEY:tree, read-only" {
	mkjson "$NS/n" '42'
	[ -f "$NS/n:tree" ]
	assert_eq "$(cat "$NS/n:tree")" 42
	assert_eq "$(jtype "$NS/n:tree")" integer
	run bash -c "echo 7 | cat >'$NS/n:tree'"
	[ "$status" -ne 0 ]
	assert_eq "$(cat "$NS/n")" 42
}

# Review findings of the tree (issue 19 item 13): writes that stored into
# another element, names that never stored, wrong errnos.

@test "tree: an open element file whose element moved (rm through a path name, a rewrite of the key) stores nothing: close says EIO" {
	mkjson "$NS/w" '{"arr":["a","b","c","d"]}'
	run python3 - "$NS" <<'PY'
import errno, os, sys
ns = sys.argv[1]
fd = os.open(ns + "/w:tree/arr/1", os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"X\n")
os.unlink(ns + "/w:$.arr[0]")
out = []
for step in (lambda: os.fsync(fd), lambda: os.write(fd, b"Y\n"), lambda: os.fsync(fd),
             lambda: os.close(fd)):
    try:
        step()
        out.append("OK")
    except OSError as e:
        out.append(errno.errorcode[e.errno])
print(" ".join(out))
PY
	# refused at the first store, and so is all it writes until closed
	assert_eq "$output" "EIO OK EIO EIO"
	assert_eq "$(cat "$NS/w")" '{"arr":["b","c","d"]}'
	grep -q "changed or moved since it was opened" "$KVFS_LOG"
	# The array shrank to the open file's position: no append either.
	exec 8>"$NS/w:tree/arr/2"
	printf '{"arr":["q","r"]}' >"$NS/w"
	echo Y >&8
	exec 8>&-
	assert_eq "$(cat "$NS/w")" '{"arr":["q","r"]}'
	# A file opened after the change stores as usual.
	echo Z >"$NS/w:tree/arr/1"
	assert_eq "$(cat "$NS/w")" '{"arr":["q","Z"]}'
}

@test "tree: a write racing with rm of an earlier element never lands on another element" {
	local text out
	text=$(python3 -c 'import json; print(json.dumps({"arr": ["v%05d" % i for i in range(40000)]}))')
	for round in 1 2 3 4 5 6; do
		mkjson "$NS/big" "$text"
		out=$(python3 - "$NS" <<'PY'
import errno, os, sys, threading, time
ns = sys.argv[1]
fd = os.open(ns + "/big:tree/arr/20000", os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"X\n")
t = threading.Thread(target=os.unlink, args=(ns + "/big:tree/arr/00000",))
t.start()
time.sleep(0.02)
try:
    os.close(fd)
    r = "OK"
except OSError as e:
    r = errno.errorcode[e.errno]
t.join()
print(r)
PY
)
		run python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["arr"]
assert len(a) == 39999, len(a)
assert "v00000" not in a
# every other element is still there, in order; X, if stored, in the
# place of v20000
want = ["v%05d" % i for i in range(1, 40000)]
got = ["v20000" if x == "X" else x for x in a]
assert got == want, [x for x, y in zip(got, want) if x != y][:3]
print("X" if "X" in a else "-")' "$NS/big"
		[ "$status" -eq 0 ] || { echo "round $round: $output" >&2; false; }
		if [ "$output" = X ]; then
			assert_eq "$out" OK "round $round: stored, so close succeeds"
		else
			assert_eq "$out" EIO "round $round: not stored, so close says so"
		fi
	done
}

@test "tree: mv onto an existing element replaces that element; onto the length appends" {
	mkjson "$NS/m" '{"arr":["a","b","c"]}'
	mv "$NS/m:tree/arr/0" "$NS/m:tree/arr/1"
	assert_eq "$(cat "$NS/m")" '{"arr":["a","c"]}'
	mv "$NS/m:tree/arr/0" "$NS/m:tree/arr/2"
	assert_eq "$(cat "$NS/m")" '{"arr":["c","a"]}'
	run errno_of 'os.rename(a[0], a[1])' "$NS/m:tree/arr/0" "$NS/m:tree/arr/3"
	assert_eq "$output" EINVAL
	assert_eq "$(cat "$NS/m")" '{"arr":["c","a"]}'
}

@test "tree: digit names, NAME.orig and NAME.rej are stored, not kept as scratch files; a scratch file's close is logged" {
	text=$(python3 -c 'import json; print(json.dumps({"a": list(range(4913))}))')
	mkjson "$NS/big" "$text"
	echo x >"$NS/big:tree/a/4913"
	assert_eq "$(cat "$NS/big:tree/a/4913")" x
	assert_eq "$(python3 -c 'import json,sys; a=json.load(open(sys.argv[1]))["a"]; print(len(a), a[-1])' "$NS/big")" "4914 x"
	mkjson "$NS/u" '{"users":{}}'
	echo bob >"$NS/u:tree/users/5036"
	echo carl >"$NS/u:tree/users/notes.orig"
	echo dan >"$NS/u:tree/users/x.rej"
	assert_eq "$(cat "$NS/u")" '{"users":{"5036":"bob","notes.orig":"carl","x.rej":"dan"}}'
	# A tool's temp name still waits for its rename (sed -i's), and says so.
	echo 7 >"$NS/u:tree/users/sedAb12Cd"
	assert_eq "$(cat "$NS/u")" '{"users":{"5036":"bob","notes.orig":"carl","x.rej":"dan"}}'
	grep -q "'sedAb12Cd' of a JSON tree is a scratch name" "$KVFS_LOG"
	mv "$NS/u:tree/users/sedAb12Cd" "$NS/u:tree/users/5036"
	assert_eq "$(cat "$NS/u")" '{"users":{"5036":"7","notes.orig":"carl","x.rej":"dan"}}'
}

@test "tree: rm of a scalar document's KEY:tree is EBUSY; retyping it, RENAME_EXCHANGE: EINVAL; each logged" {
	mkjson "$NS/n" '42'
	run errno_of 'os.unlink(a[0])' "$NS/n:tree"
	assert_eq "$output" EBUSY
	grep -q "unlink 'n:tree': a JSON document's tree is a view of its key" "$KVFS_LOG"
	run setfattr -n user.kvfs.json.type -v string "$NS/n:tree"
	[ "$status" -ne 0 ]
	grep -q "a document that is one scalar changes type through its key" "$KVFS_LOG"
	assert_eq "$(cat "$NS/n")" 42
	mkjson "$NS/x" '{"a":1,"b":2}'
	run errno_of '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, a[0].encode(), -100, a[1].encode(), 2) != 0:
    raise OSError(ctypes.get_errno(), "renameat2")' "$NS/x:tree/a" "$NS/x:tree/b"
	assert_eq "$output" EINVAL
	grep -q "a JSON tree cannot exchange two nodes" "$KVFS_LOG"
	assert_eq "$(cat "$NS/x")" '{"a":1,"b":2}'
}

@test "tree: while an array's listing is kept, mv and cat mean the same element by one name" {
	mkjson "$NS/k" '{"arr":["a","b","c","d","e"],"o":{}}'
	T="$NS/k:tree"
	exec 9<"$T/arr" # the directory held open: its numbering is kept
	ls "$T/arr" >/dev/null
	rm "$T/arr/1"
	assert_eq "$(cat "$T/arr/3")" d
	mv "$T/arr/3" "$T/o/x"
	assert_eq "$(cat "$NS/k")" '{"arr":["a","c","e"],"o":{"x":"d"}}'
	assert_eq "$(cat "$T/arr/4")" e
	echo E >"$T/arr/4"
	rm "$T/arr/2"
	exec 9<&-
	assert_eq "$(cat "$NS/k")" '{"arr":["a","E"],"o":{"x":"d"}}'
}

@test "tree: the kept numbering ends at a change from outside the tree, and a listing in the middle of a glob rm shows it" {
	mkjson "$NS/q" '{"a":["a","b","c","d","e"]}'
	T="$NS/q:tree"
	ls "$T/a" >/dev/null
	rm "$T/a/0"
	printf '{"a":["A","B","C","D"]}' >"$NS/q"
	rm "$T/a/0" # the names number the rewritten array
	rm "$T/a/3"
	assert_eq "$(cat "$NS/q")" '{"a":["B","C"]}'
	grep -q "changed from outside the tree" "$KVFS_LOG"
	# Another ls between a glob's removals lists the numbering in use.
	printf '{"a":["a","b","c","d","e"]}' >"$NS/q"
	ls "$T/a" >/dev/null
	rm "$T/a/0"
	run ls "$T/a"
	assert_eq "$(echo $output)" "1 2 3 4"
	rm "$T/a/1" "$T/a/3"
	assert_eq "$(cat "$NS/q")" '{"a":["c","e"]}'
	# find -delete removes every element it found.
	text=$(python3 -c 'import json; print(json.dumps({"f": [{"x": i} for i in range(12)]}))')
	mkjson "$NS/f" "$text"
	find "$NS/f:tree/f" -mindepth 1 -delete
	assert_eq "$(cat "$NS/f")" '{"f":[]}'
}
