#!/usr/bin/env bats
# JSON path names with wildcards, `..`, unions, slices and filters
# (docs/mapping.md section 18, "Paths"): cat shows the JSON array of every
# match, :type and :keys a line per match; echo >, >> and rm change every
# match in one batch (the stored bytes checked with ldb); a rename onto
# such a name is refused; 4 writers adding to 3 matches lose nothing.

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

STORE='{"inventory":{"headphones":[{"id":1,"name":"NC","wireless":true,"price":99.98,"colors":["black","silver"]},{"id":2,"name":"Buds","wireless":true,"price":64.99},{"id":3,"name":"Mic","wireless":false,"price":35.01}],"keyboards":[{"id":4,"name":"KB","wireless":true,"price":44.99},{"id":5,"name":"USB-C","wireless":false,"price":29.99}]}}'

@test "cat of a wildcard, .., slice, union or filter name shows the array of every match" {
	mkjson "$NS/s" "$STORE"
	assert_bytes "$NS/s:\$..name" $'["NC","Buds","Mic","KB","USB-C"]\n'
	assert_bytes "$NS/s:\$.inventory.headphones[*].id" $'[1,2,3]\n'
	assert_bytes "$NS/s:\$.inventory.*[0].id" $'[1,4]\n'
	assert_bytes "$NS/s:\$..headphones[0:2].name" $'["NC","Buds"]\n'
	assert_bytes "$NS/s:\$..headphones[-1:].name" $'["Mic"]\n'
	assert_bytes "$NS/s:\$..headphones[::-2].id" $'[3,1]\n'
	assert_bytes "$NS/s:\$..headphones[2,0,0].id" $'[3,1,1]\n'
	assert_bytes "$NS/s:\$..[?(@.price<70 && @.wireless==true)].name" $'["Buds","KB"]\n'
	assert_bytes "$NS/s:\$..[?(@.colors)].name" $'["NC"]\n'
	assert_bytes "$NS/s:\$..[?(!(@.wireless) || @.name == 'NC')].id" $'[1,3,5]\n'
	# st_size is what cat shows
	assert_size "$NS/s:\$..name" 33
	# nothing matches: [] (Kvrocks's JSON.GET answers [])
	assert_bytes "$NS/s:\$..nothing" $'[]\n'
	# a definite path still shows the value itself
	assert_bytes "$NS/s:\$.inventory.keyboards[1].name" $'"USB-C"\n'
	# not a path: no such name
	run cat "$NS/s:\$..headphones[::0]"
	[ "$status" -ne 0 ]
	run cat "$NS/s:\$.."
	[ "$status" -ne 0 ]
	run cat "$NS/s:\$[?(@.a == )]"
	[ "$status" -ne 0 ]
	assert_eq "$(ls "$NS")" s "listing"
}

@test ":type and :keys of an indefinite path answer a line per match" {
	mkjson "$NS/t" '{"a":{"y":1,"x":[]},"b":"s","c":2.5}'
	assert_bytes "$NS/t:\$.*:type" $'object\nstring\nnumber\n'
	assert_bytes "$NS/t:\$..*:type" $'object\nstring\nnumber\narray\ninteger\n'
	assert_bytes "$NS/t:\$.*:keys" $'["x","y"]\nnull\nnull\n'
	assert_bytes "$NS/t:\$..zz:type" ''
	run sh -c "echo x > '$NS/t:\$.*:type'"
	[ "$status" -ne 0 ]
}

@test "echo > an indefinite path sets every match in one batch (ldb); it never creates one" {
	mkjson "$NS/p" '{"a":{"price":1},"b":[{"price":2},{"other":3}],"price":4}'
	echo 0 >"$NS/p:\$..price"
	assert_bytes "$NS/p" $'{"a":{"price":0},"b":[{"price":0},{"other":3}],"price":0}\n'
	echo '"x"' >"$NS/p:\$.b[?(@.other)].other"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex p)"
	assert_eq "$output" "8A000000000000000000$(hexof '{"a":{"price":0},"b":[{"price":0},{"other":"x"}],"price":0}')" "record of p"
	kvfs_mount
	# nothing matches: ENOENT at close, nothing changed
	assert_eq "$(errno_of '
fd = os.open(a[0], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"1")
os.close(fd)' "$NS/p:\$.b[*].new")" ENOENT "set with no match"
	# not JSON: EINVAL
	assert_eq "$(errno_of '
fd = os.open(a[0], os.O_WRONLY | os.O_TRUNC)
os.write(fd, b"{")
os.close(fd)' "$NS/p:\$..price")" EINVAL "set of bad JSON"
	assert_bytes "$NS/p" $'{"a":{"price":0},"b":[{"price":0},{"other":"x"}],"price":0}\n'
}

@test "rm of a filter name deletes every match, highest index first; no match is ENOENT" {
	mkjson "$NS/todo" '{"items":[{"t":"a","done":true},{"t":"b","done":false},{"t":"c","done":true},{"t":"d","done":true}]}'
	rm "$NS/todo:\$.items[?(@.done==true)]"
	assert_bytes "$NS/todo" $'{"items":[{"done":false,"t":"b"}]}\n'
	run rm "$NS/todo:\$.items[?(@.done==true)]"
	[ "$status" -ne 0 ]
	[[ "$output" == *"No such file"* ]]
	mkjson "$NS/n" '[0,1,2,3,4,5,6]'
	rm "$NS/n:\$[1:6:2]"
	assert_bytes "$NS/n" $'[0,2,4,6]\n'
	rm "$NS/n:\$[0,-1,0]"
	assert_bytes "$NS/n" $'[2,4]\n'
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex n)"
	assert_eq "$output" "8A000000000000000000$(hexof '[2,4]')" "record of n"
}

@test ">> adds to every match of its type: NUMINCRBY, STRAPPEND, ARRAPPEND" {
	mkjson "$NS/c" '{"a":{"n":1},"b":{"n":"s"},"n":2.5,"l":[[1],{"l":[]}]}'
	echo 2 >>"$NS/c:\$..n"
	assert_bytes "$NS/c:\$..n" $'[4.5,3,"s"]\n' # the root's n first: `..` visits a container, then its children
	echo '"!"' >>"$NS/c:\$.b.*"
	assert_bytes "$NS/c:\$.b.n" $'"s!"\n'
	echo 7 >>"$NS/c:\$..l"
	assert_bytes "$NS/c:\$.l" $'[[1],{"l":[7]},7]\n'
	# the first match's type chooses; none at all: ENOENT
	assert_eq "$(errno_of '
fd = os.open(a[0], os.O_WRONLY | os.O_APPEND)
os.write(fd, b"1")
os.close(fd)' "$NS/c:\$..nope")" ENOENT "append with no match"
	# an object first: nothing can be added (EINVAL)
	assert_eq "$(errno_of '
fd = os.open(a[0], os.O_WRONLY | os.O_APPEND)
os.write(fd, b"1")
os.close(fd)' "$NS/c:\$.*")" EINVAL "append to objects"
}

@test "a rename onto an indefinite path name is refused and changes nothing; cp sets every match" {
	mkjson "$NS/r" '{"a":1,"b":2}'
	echo 5 >"$NS/f"
	run mv "$NS/f" "$NS/r:\$.*"
	[ "$status" -ne 0 ]
	assert_bytes "$NS/r" $'{"a":1,"b":2}\n'
	assert_bytes "$NS/f" $'5\n'
	# cp writes it: every match takes the file's value
	cp "$NS/f" "$NS/r:\$.*"
	assert_bytes "$NS/r" $'{"a":5,"b":5}\n'
}

@test "4 shells adding to 3 matches 200 times each lose nothing" {
	mkjson "$NS/ctr" '{"n":0,"x":{"n":0},"y":[{"n":0}]}'
	local pids=()
	for w in 1 2 3 4; do
		(for i in $(seq 200); do echo 1 >>"$NS/ctr:\$..n"; done) &
		pids+=($!)
	done
	wait "${pids[@]}" # by pid: a bare wait would wait for the daemon too
	assert_bytes "$NS/ctr:\$..n" $'[800,800,800]\n'
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex ctr)"
	assert_eq "$output" "8A000000000000000000$(hexof '{"n":800,"x":{"n":800},"y":[{"n":800}]}')" "record of ctr"
}

@test "a change of every match that was closed survives a kill -9" {
	mkjson "$NS/k" '{"a":{"n":1},"b":[{"n":2},{"n":3}],"c":[1,2,3,4]}'
	echo 9 >"$NS/k:\$..n"
	rm "$NS/k:\$.c[?(@ > 1 && @ < 4)]"
	echo 1 >>"$NS/k:\$.b[*].n"
	kvfs_kill9
	kvfs_mount
	assert_bytes "$NS/k" $'{"a":{"n":9},"b":[{"n":10},{"n":10}],"c":[1,4]}\n'
}
