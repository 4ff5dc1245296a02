#!/usr/bin/env bats
# JSON keys are regular files holding their document as compact text
# (docs/mapping.md section 18): choosing the type, cat, replacing with >,
# refusing text that is not JSON (close fails, nothing changes), the path
# names KEY:PATH (read, set, remove, append) and their :type and :keys
# views, the stored record (ldb, written and read by hand, CBOR too),
# conversions, and the rsync -aX and cp -a round trips.

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

# mkjson KEY [TEXT]: an empty JSON key, then TEXT written into it.
mkjson() {
	touch "$1"
	setfattr -n user.kvfs.type -v json "$1"
	if [ $# -gt 1 ]; then
		printf '%s' "$2" >"$1"
	fi
}

# write_close PATH TEXT [FLAGS]: write TEXT with one write() and print
# the errno name of the close (or OK). FLAGS: trunc (default) or append.
write_close() {
	errno_of '
fl = os.O_WRONLY | (os.O_APPEND if a[2] == "append" else os.O_TRUNC)
fd = os.open(a[0], fl)
os.write(fd, a[1].encode())
os.close(fd)' "$1" "$2" "${3:-trunc}"
}

@test "touch and user.kvfs.type=json make an empty JSON key, kept across a remount" {
	mkjson "$NS/j"
	assert_eq "$(kvfs_type "$NS/j")" json "type"
	assert_size "$NS/j" 0
	assert_eq "$(cat "$NS/j")" "" "contents"
	kvfs_remount
	assert_eq "$(kvfs_type "$NS/j")" json "type after remount"
	assert_size "$NS/j" 0
	kvfs_unmount
	# Kvrocks has no empty document: nothing in __namespace, a record in __kvfs
	run ldb_value metadata "$(nskey_hex j)"
	[ "$status" -ne 0 ]
	run ldb_value metadata "065F5F6B76667345${NS_HEX}6A"
	assert_eq "$output" "810000000000000000$(hexof json)" "empty-JSON record"
}

@test "a document written is shown compact with a newline; st_size is what cat returns" {
	mkjson "$NS/j"
	printf '{ "a" : [1, 2.50, 1e3],\n  "b": "x y" }\n' >"$NS/j"
	assert_bytes "$NS/j" $'{"a":[1,2.5,1000.0],"b":"x y"}\n'
	assert_size "$NS/j" 31
	ls -l "$NS/j" | grep -q ' 31 '
	assert_eq "$(kvfs_type "$NS/j")" json "type after the write"
	kvfs_remount
	assert_bytes "$NS/j" $'{"a":[1,2.5,1000.0],"b":"x y"}\n'
	assert_size "$NS/j" 31
}

@test "the record is Kvrocks's: 8A, no expiry, format 0, compact text (ldb)" {
	mkjson "$NS/j" '{"k": [1, true, null]}'
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex j)"
	assert_eq "$output" "8A000000000000000000$(hexof '{"k":[1,true,null]}')" "record of j"
}

@test "a document Kvrocks wrote (ldb) is read, format 0 and CBOR (format 1)" {
	kvfs_unmount
	ldb_put metadata "$(nskey_hex t)" "8A000000000000000000$(hexof '{"a":{"b":[1,2]}}')"
	# CBOR {"a": [1, 1.5], "s": "hi", "t": true}
	ldb_put metadata "$(nskey_hex c)" \
		"8A000000000000000001A361618201F93E0061736268696174F5"
	kvfs_mount
	assert_bytes "$NS/t" $'{"a":{"b":[1,2]}}\n'
	assert_eq "$(kvfs_type "$NS/c")" json "type of c"
	assert_bytes "$NS/c" $'{"a":[1,1.5],"s":"hi","t":true}\n'
	assert_size "$NS/c" 32
	assert_eq "$(cat "$NS/c:\$.a[1]")" 1.5 "path in CBOR"
	# a write stores format 0
	echo 2 >"$NS/c:\$.a[0]"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex c)"
	assert_eq "$output" "8A000000000000000000$(hexof '{"a":[2,1.5],"s":"hi","t":true}')" "c"
}

@test "> replaces the document" {
	mkjson "$NS/j" '{"a":1}'
	echo '[3, 4]' >"$NS/j"
	assert_bytes "$NS/j" $'[3,4]\n'
}

@test "text that is not JSON: close fails with EINVAL, the document is unchanged, one log line" {
	mkjson "$NS/j" '{"a":1}'
	local before
	before=$(grep -c 'not one JSON value' "$KVFS_LOG" || true)
	assert_eq "$(write_close "$NS/j" '{"a":')" EINVAL "close"
	assert_bytes "$NS/j" $'{"a":1}\n'
	assert_eq "$(grep -c 'not one JSON value' "$KVFS_LOG")" $((before + 1)) "log lines"
	# the shell's own redirection: nothing changes either
	echo 'not json' >"$NS/j" || true
	assert_bytes "$NS/j" $'{"a":1}\n'
	# a tool that checks close sees the error
	run bash -c "printf '[1,' | cat >'$NS/j'"
	[ "$status" -ne 0 ]
	assert_bytes "$NS/j" $'{"a":1}\n'
	kvfs_remount
	assert_bytes "$NS/j" $'{"a":1}\n'
}

@test "fsync reports text that is not JSON" {
	mkjson "$NS/j" '[1]'
	run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_TRUNC); os.write(fd, b"[1,,2]"); os.fsync(fd)' "$NS/j"
	assert_eq "$output" EINVAL "fsync"
	assert_bytes "$NS/j" $'[1]\n'
}

@test ": > doc and truncate -s 0 empty the key; a truncate that breaks the text is refused" {
	mkjson "$NS/j" '{"a":[1,2]}'
	run truncate -s 5 "$NS/j"
	[ "$status" -ne 0 ]
	assert_bytes "$NS/j" $'{"a":[1,2]}\n'
	: >"$NS/j"
	assert_size "$NS/j" 0
	assert_eq "$(kvfs_type "$NS/j")" json "type"
	echo '[1]' >"$NS/j"
	truncate -s 0 "$NS/j"
	assert_size "$NS/j" 0
	assert_eq "$(kvfs_type "$NS/j")" json "type"
}

@test "KEY:PATH reads a member: dotted, bracketed, negative index, root" {
	mkjson "$NS/doc" '{"a":{"b":[10,20,{"c":"x"}]},"key with space":true,"x.y":1}'
	assert_bytes "$NS/doc:\$.a.b[2]" $'{"c":"x"}\n'
	assert_bytes "$NS/doc:\$.a.b[-1].c" $'"x"\n'
	assert_bytes "$NS/doc:\$['key with space']" $'true\n'
	assert_bytes "$NS/doc:\$[\"x.y\"]" $'1\n'
	assert_bytes "$NS/doc:\$" "$(cat "$NS/doc")"$'\n'
	assert_size "$NS/doc:\$.a.b[0]" 3
	# names that match nothing, and a name that is no path (a slice's step is never 0)
	run cat "$NS/doc:\$.a.b[3]"
	[ "$status" -ne 0 ]
	run cat "$NS/doc:\$.nope"
	[ "$status" -ne 0 ]
	run cat "$NS/doc:\$[::0]"
	[ "$status" -ne 0 ]
	# path names are never listed
	assert_eq "$(ls "$NS")" doc "listing"
}

@test "members are stored in name order, as Kvrocks stores a document (ldb)" {
	mkjson "$NS/o" '{"b":1,"a":{"z":[{"y":1,"x":2}],"c":null},"a b":0}'
	assert_bytes "$NS/o" $'{"a":{"c":null,"z":[{"x":2,"y":1}]},"a b":0,"b":1}\n'
	echo 5 >"$NS/o:\$.aa"
	assert_bytes "$NS/o" $'{"a":{"c":null,"z":[{"x":2,"y":1}]},"a b":0,"aa":5,"b":1}\n'
	kvfs_unmount
	# 8A, no expiry, format 0 (text), the sorted text
	run ldb_value metadata "$(nskey_hex o)"
	assert_eq "$output" \
		"8A000000000000000000$(hexof '{"a":{"c":null,"z":[{"x":2,"y":1}]},"a b":0,"aa":5,"b":1}')" \
		"record of o"
}

@test "echo VALUE > KEY:PATH is JSON.SET: replaces a member, adds one, refuses non-JSON" {
	mkjson "$NS/cfg" '{"server":{"port":80}}'
	echo 8080 >"$NS/cfg:\$.server.port"
	echo '"example.org"' >"$NS/cfg:\$.server.host"
	assert_bytes "$NS/cfg" $'{"server":{"host":"example.org","port":8080}}\n'
	assert_eq "$(write_close "$NS/cfg:\$.server.port" 'eighty')" EINVAL "not JSON"
	assert_eq "$(write_close "$NS/cfg:\$.nope.port" '1')" ENOENT "missing parent"
	assert_bytes "$NS/cfg" $'{"server":{"host":"example.org","port":8080}}\n'
}

@test "rm KEY:PATH is JSON.DEL; rm KEY:\$ removes the key" {
	mkjson "$NS/d" '{"a":1,"b":[1,2,3]}'
	rm "$NS/d:\$.a"
	rm "$NS/d:\$.b[0]"
	assert_bytes "$NS/d" $'{"b":[2,3]}\n'
	run rm "$NS/d:\$.a"
	[ "$status" -ne 0 ]
	rm "$NS/d:\$"
	[ ! -e "$NS/d" ]
}

@test ">> adds: ARRAPPEND on an array, NUMINCRBY on a number, STRAPPEND on a string" {
	mkjson "$NS/d" '{"l":[1],"n":5,"f":1.5,"s":"ab","o":{}}'
	printf '2\n"three"\n' >>"$NS/d:\$.l"
	echo 10 >>"$NS/d:\$.n"
	echo 0.25 >>"$NS/d:\$.f"
	echo '"cd"' >>"$NS/d:\$.s"
	assert_bytes "$NS/d" $'{"f":1.75,"l":[1,2,"three"],"n":15,"o":{},"s":"abcd"}\n'
	# nothing can be added to an object, and what is added must be JSON
	assert_eq "$(write_close "$NS/d:\$.o" '1' append)" EINVAL "object"
	assert_eq "$(write_close "$NS/d:\$.l" '[1' append)" EINVAL "bad value"
	assert_eq "$(write_close "$NS/d:\$.n" '"x"' append)" EINVAL "not a number"
	assert_bytes "$NS/d" $'{"f":1.75,"l":[1,2,"three"],"n":15,"o":{},"s":"abcd"}\n'
	# a root array, through the key itself
	mkjson "$NS/a" '[]'
	echo '{"x":1}' >>"$NS/a"
	assert_bytes "$NS/a" $'[{"x":1}]\n'
}

@test "KEY:PATH:type and KEY:PATH:keys are read-only views" {
	mkjson "$NS/d" '{"o":{"b":1,"a b":2},"i":3,"n":0.5,"l":[],"s":"","t":false,"z":null}'
	for p in o:object i:integer n:number l:array s:string t:boolean z:null; do
		assert_eq "$(cat "$NS/d:\$.${p%%:*}:type")" "${p#*:}" "type of ${p%%:*}"
	done
	assert_eq "$(cat "$NS/d:\$:type")" object "root"
	assert_bytes "$NS/d:\$.o:keys" $'a b\nb\n' # stored sorted, as Kvrocks
	assert_eq "$(cat "$NS/d:\$:keys" | tr '\n' ,)" "i,l,n,o,s,t,z," "root keys"
	run cat "$NS/d:\$.l:keys"
	[ "$status" -ne 0 ]
	assert_eq "$(write_close "$NS/d:\$.o:type" 'x')" EACCES "write a view"
	run rm "$NS/d:\$.o:type"
	[ "$status" -ne 0 ]
	assert_eq "$(cat "$NS/d:\$.o:type")" object "still there"
}

@test ":keys escapes a backslash and a newline in member names" {
	mkjson "$NS/d" '{"a\\b":1,"c\nd":2,"e":3}'
	assert_bytes "$NS/d:\$:keys" 'a\\b
c\nd
e
'
}

@test "path names work at the root of a -o ns= mount" {
	mkdir "$KVFS_MNT/app"
	mkjson "$KVFS_MNT/app/cfg" '{"port":80}'
	kvfs_remount -o ns=app
	assert_bytes "$KVFS_MNT/cfg:\$.port" $'80\n'
	echo 81 >"$KVFS_MNT/cfg:\$.port"
	assert_bytes "$KVFS_MNT/cfg" $'{"port":81}\n'
	assert_eq "$(ls "$KVFS_MNT")" cfg "listing"
}

@test "a real key with a path name's exact name wins" {
	mkjson "$NS/d" '{"a":1}'
	# an ordinary key of that name cannot be made through the path name...
	echo 2 >"$NS/d:\$.a"
	assert_bytes "$NS/d" $'{"a":2}\n'
	# ... nor by a rename: mv copies the file into the member (EXDEV)
	echo '{"z":1}' >"$NS/other"
	mv "$NS/other" "$NS/d:\$.a"
	assert_bytes "$NS/d" $'{"a":{"z":1}}\n'
	assert_eq "$(ls "$NS")" d "keys"
	kvfs_unmount
	ldb_put metadata "$(nskey_hex 'd:$.a')" "810000000000000000$(hexof 'a string')"
	kvfs_mount
	assert_bytes "$NS/d:\$.a" "a string"
	assert_eq "$(kvfs_type "$NS/d:\$.a")" string "type"
}

@test "JSON files of other keys: wrong type and missing key" {
	echo '{"a":1}' >"$NS/s"
	run cat "$NS/s:\$.a"
	[ "$status" -ne 0 ]
	run cat "$NS/missing:\$"
	[ "$status" -ne 0 ]
	# writing such a name makes an ordinary string key
	echo x >"$NS/missing:\$"
	assert_eq "$(kvfs_type "$NS/missing:\$")" string "type"
}

@test "user.kvfs.type converts string <-> json; a string that is not JSON stays a string" {
	printf ' {"a": 1.0}\n' >"$NS/s"
	setfattr -n user.kvfs.type -v json "$NS/s"
	assert_eq "$(kvfs_type "$NS/s")" json "type"
	assert_bytes "$NS/s" $'{"a":1.0}\n'
	setfattr -n user.kvfs.type -v string "$NS/s"
	assert_eq "$(kvfs_type "$NS/s")" string "type"
	assert_bytes "$NS/s" $'{"a":1.0}\n'
	echo 'nope' >"$NS/t"
	run setfattr -n user.kvfs.type -v json "$NS/t"
	[ "$status" -ne 0 ]
	[[ $output == *"Invalid argument"* ]]
	assert_eq "$(kvfs_type "$NS/t")" string "type"
	assert_bytes "$NS/t" $'nope\n'
	mkdir "$NS/h"
	run setfattr -n user.kvfs.type -v json "$NS/h"
	[ "$status" -ne 0 ]
}

@test "sed -i keeps a JSON key JSON, and refuses an edit that is not JSON" {
	mkjson "$NS/j" '{"port":80}'
	sed -i s/80/8080/ "$NS/j"
	assert_eq "$(kvfs_type "$NS/j")" json "type"
	assert_bytes "$NS/j" $'{"port":8080}\n'
	run sed -i 's/8080/{/' "$NS/j"
	[ "$status" -ne 0 ]
	assert_bytes "$NS/j" $'{"port":8080}\n'
	assert_eq "$(ls "$NS")" j "no temp file left"
}

@test "expiry is kept by writes; an empty document cannot keep one" {
	mkjson "$NS/j" '[1]'
	setfattr -n user.kvfs.ttl -v 600000 "$NS/j"
	echo '[2]' >"$NS/j"
	echo 3 >>"$NS/j"
	ttl=$(getfattr --only-values -n user.kvfs.ttl "$NS/j")
	[ "$ttl" -gt 500000 ]
	# an empty document has no record to carry it
	assert_eq "$(errno_of 'os.truncate(a[0], 0)' "$NS/j")" EINVAL "truncate"
	assert_bytes "$NS/j" $'[2,3]\n'
}

@test "parallel appends to one array are all kept (each is one batch under the key's lock)" {
	mkjson "$NS/d" '{"l":[]}'
	local pids=()
	for w in 1 2 3 4; do
		(for i in $(seq 25); do echo "$w" >>"$NS/d:\$.l"; done) &
		pids+=($!)
	done
	wait "${pids[@]}" # not the daemon, which this shell started too
	n=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["l"]))' "$NS/d")
	assert_eq "$n" 100 "elements"
}

@test "mv moves a JSON key, an empty one too; rm removes it" {
	mkjson "$NS/a" '[1]'
	mkjson "$NS/e"
	mv "$NS/a" "$NS/b"
	mv "$NS/e" "$NS/f"
	assert_bytes "$NS/b" $'[1]\n'
	assert_eq "$(kvfs_type "$NS/f")" json "type of the moved empty key"
	assert_size "$NS/f" 0
	assert_eq "$(ls "$NS" | tr '\n' ' ')" "b f " "keys"
	rm "$NS/b" "$NS/f"
	assert_eq "$(ls "$NS")" "" "keys after rm"
}

@test "rsync -aX out and into an empty namespace recreates every JSON key" {
	mkdir "$KVFS_MNT/app"
	mkjson "$KVFS_MNT/app/doc" '{"a":{"b":[1,2.5,9007199254740993]},"s":"caf\u00e9 \"q\""}'
	mkjson "$KVFS_MNT/app/empty"
	mkjson "$KVFS_MNT/app/num" '42'
	echo plain >"$KVFS_MNT/app/str"
	rsync -aX "$KVFS_MNT/app/" "$BATS_TEST_TMPDIR/backup/"
	assert_eq "$(getfattr --only-values -n user.kvfs.type "$BATS_TEST_TMPDIR/backup/doc")" json
	mkdir "$KVFS_MNT/app2"
	rsync -aX "$BATS_TEST_TMPDIR/backup/" "$KVFS_MNT/app2/"
	assert_eq "$(ls "$KVFS_MNT/app2" | tr '\n' ' ')" "doc empty num str " "keys"
	for k in doc empty num str; do
		assert_eq "$(kvfs_type "$KVFS_MNT/app2/$k")" "$(kvfs_type "$KVFS_MNT/app/$k")" "type of $k"
		cmp "$KVFS_MNT/app/$k" "$KVFS_MNT/app2/$k"
	done
	kvfs_unmount
	for k in doc num; do
		a=$(ldb_value metadata "$(nskey_hex "$k" app)")
		b=$(ldb_value metadata "$(nskey_hex "$k" app2)")
		assert_eq "$b" "$a" "record of $k"
	done
}

@test "cp -a out and back recreates JSON keys" {
	mkjson "$NS/doc" '{"x":[true,null,"y"]}'
	mkjson "$NS/empty"
	cp -a "$NS/." "$BATS_TEST_TMPDIR/backup/"
	mkdir "$KVFS_MNT/app"
	cp -a "$BATS_TEST_TMPDIR/backup/." "$KVFS_MNT/app/"
	assert_eq "$(kvfs_type "$KVFS_MNT/app/doc")" json "type of doc"
	assert_eq "$(kvfs_type "$KVFS_MNT/app/empty")" json "type of empty"
	assert_bytes "$KVFS_MNT/app/doc" $'{"x":[true,null,"y"]}\n'
	assert_size "$KVFS_MNT/app/empty" 0
}
