#!/usr/bin/env bats
# Sorted-set keys are directories of member files holding the score as text
# (docs/mapping.md section 14): score formats, writing numbers, refusing the
# rest, score order in listings, new members, the read-only views, renames,
# conversion from a hash, and the stored bytes in both column families
# (ldb).

load helper

setup() {
	kvfs_setup
	kvfs_mount
}

mkzset() {
	mkdir "$1"
	setfattr -n user.kvfs.type -v zset "$1"
}

@test "writing a number sets the score; the file shows the shortest form and a newline" {
	mkzset "$NS/z"
	echo 2.5 >"$NS/z/a"
	assert_bytes "$NS/z/a" $'2.5\n'
	assert_size "$NS/z/a" 4
	for pair in "0.1 0.1" "1000 1000" "1e21 1e+21" "-0 -0" "inf inf" "-inf -inf" \
		"+inf inf" "0.30000000000000004 0.30000000000000004" "1.50 1.5" "7e-3 0.007"; do
		set -- $pair
		printf '%s\n' "$1" >"$NS/z/m"
		assert_bytes "$NS/z/m" "$2"$'\n'
	done
	assert_eq "$(kvfs_type "$NS/z")" zset "type"
	kvfs_remount
	assert_bytes "$NS/z/a" $'2.5\n'
}

@test "blanks around the number and a missing newline are fine" {
	mkzset "$NS/z"
	printf '  42 \n' >"$NS/z/a"
	printf 3 >"$NS/z/b"
	assert_bytes "$NS/z/a" $'42\n'
	assert_bytes "$NS/z/b" $'3\n'
}

@test "writing anything else fails with EINVAL and changes nothing" {
	mkzset "$NS/z"
	echo 5 >"$NS/z/a"
	for bad in abc 1.5.2 nan 1e 12x '1 2'; do
		run errno_of 'fd = os.open(a[0], os.O_WRONLY | os.O_TRUNC); os.write(fd, a[1].encode()); os.close(fd)' \
			"$NS/z/a" "$bad"
		assert_eq "$output" EINVAL "errno for '$bad'"
		assert_bytes "$NS/z/a" $'5\n'
	done
	run bash -c "echo abc > '$NS/z/a'"
	[ "$status" -ne 0 ]
	assert_bytes "$NS/z/a" $'5\n'
	# a new member written badly is not added
	run bash -c "echo abc > '$NS/z/new'"
	[ "$status" -ne 0 ]
	assert_eq "$(ls -A "$NS/z")" a "members"
	grep -q "is not one" "$KVFS_LOG"
}

@test "touch adds a member with score 0 and keeps an existing score" {
	mkzset "$NS/z"
	touch "$NS/z/a"
	assert_bytes "$NS/z/a" $'0\n'
	echo 9 >"$NS/z/a"
	touch "$NS/z/a"
	assert_bytes "$NS/z/a" $'9\n'
}

@test "ls -U and find list members in score order" {
	mkzset "$NS/z"
	echo 3 >"$NS/z/a"
	echo -1 >"$NS/z/b"
	echo inf >"$NS/z/c"
	echo -inf >"$NS/z/d"
	echo 3 >"$NS/z/e"
	assert_eq "$(ls -U "$NS/z" | paste -sd' ')" "d b a e c" "ls -U"
	assert_eq "$(cd "$NS/z" && find . -type f | paste -sd' ')" "./d ./b ./a ./e ./c" "find"
	# a score change moves the member
	echo -5 >"$NS/z/c"
	assert_eq "$(ls -U "$NS/z" | paste -sd' ')" "d c b a e" "after a change"
}

@test "rm removes a member; the last one leaves an empty zset" {
	mkzset "$NS/z"
	echo 1 >"$NS/z/a"
	echo 2 >"$NS/z/b"
	rm "$NS/z/a"
	assert_eq "$(ls -A "$NS/z")" b "members"
	rm "$NS/z/b"
	assert_eq "$(kvfs_type "$NS/z")" zset "type"
	rmdir "$NS/z"
}

@test "the score views: whole set both ways, top N, score ranges; never listed" {
	mkzset "$NS/z"
	echo 1 >"$NS/z/a"
	echo 2.5 >"$NS/z/b"
	echo 2.5 >"$NS/z/c"
	echo -inf >"$NS/z/d"
	echo 10 >"$NS/z/e"
	assert_eq "$(cat "$NS/z/.by-score")" \
		$'0\t-inf\td\n1\t1\ta\n2\t2.5\tb\n3\t2.5\tc\n4\t10\te' ".by-score"
	assert_eq "$(cat "$NS/z/.by-score-rev")" \
		$'0\t10\te\n1\t2.5\tc\n2\t2.5\tb\n3\t1\ta\n4\t-inf\td' ".by-score-rev"
	assert_eq "$(cat "$NS/z/.by-score-rev:2")" $'0\t10\te\n1\t2.5\tc' "top 2"
	assert_eq "$(cat "$NS/z/.by-score:1")" $'0\t-inf\td' "bottom 1"
	assert_eq "$(cat "$NS/z/.by-score:1..2.5")" $'1\t1\ta\n2\t2.5\tb\n3\t2.5\tc' "1..2.5"
	assert_eq "$(cat "$NS/z/.by-score:(1..(10")" $'2\t2.5\tb\n3\t2.5\tc' "(1..(10"
	assert_eq "$(cat "$NS/z/.by-score:2..inf")" $'2\t2.5\tb\n3\t2.5\tc\n4\t10\te' "2..inf"
	assert_eq "$(cat "$NS/z/.by-score-rev:-inf..1")" $'3\t1\ta\n4\t-inf\td' "rev -inf..1"
	assert_eq "$(cat "$NS/z/.by-score:5..1")" "" "empty range"
	# st_size is what cat returns
	assert_size "$NS/z/.by-score" "$(cat "$NS/z/.by-score" | wc -c)"
	assert_eq "$(ls -A "$NS/z" | paste -sd' ')" "a b c d e" "ls -A"
	run errno_of 'open(a[0], "rb")' "$NS/z/.by-score:abc"
	assert_eq "$output" EINVAL
}

@test "views are read-only (EACCES) and writing them changes nothing" {
	mkzset "$NS/z"
	echo 1 >"$NS/z/a"
	run errno_of 'open(a[0], "w")' "$NS/z/.by-score"
	assert_eq "$output" EACCES
	run errno_of 'os.unlink(a[0])' "$NS/z/.by-score"
	assert_eq "$output" EACCES
	run errno_of 'os.rename(a[0], a[1])' "$NS/z/a" "$NS/z/.by-score"
	assert_eq "$output" EACCES
	run errno_of 'os.truncate(a[0], 0)' "$NS/z/.by-score-rev"
	assert_eq "$output" EACCES
	assert_eq "$(ls -A "$NS/z")" a "members"
	assert_bytes "$NS/z/a" $'1\n'
}

@test "mv renames a member keeping its score" {
	mkzset "$NS/z"
	echo 7 >"$NS/z/a"
	echo 8 >"$NS/z/b"
	mv "$NS/z/a" "$NS/z/c"
	assert_bytes "$NS/z/c" $'7\n'
	mv "$NS/z/c" "$NS/z/b"
	assert_eq "$(ls -A "$NS/z")" b "members"
	assert_bytes "$NS/z/b" $'7\n'
	kvfs_unmount
	# no score-index record left for a or c (zset_score: version|score|member)
	! ldb_scan zset_score | grep -qE "7FFFFFFFFFFFFF?[0-9A-F]*(61|63) :"
}

@test "sed -i on a member file sets the new score" {
	mkzset "$NS/z"
	echo 12 >"$NS/z/a"
	sed -i s/12/13/ "$NS/z/a"
	assert_bytes "$NS/z/a" $'13\n'
	assert_eq "$(ls -A "$NS/z")" a "no debris"
}

@test "a hash whose values are scores converts to a zset; a bad score keeps the hash" {
	mkdir "$NS/h"
	echo 2 >"$NS/h/x"
	echo -inf >"$NS/h/y"
	touch "$NS/h/w"
	setfattr -n user.kvfs.type -v zset "$NS/h"
	assert_eq "$(kvfs_type "$NS/h")" zset "type"
	assert_eq "$(ls -U "$NS/h" | paste -sd' ')" "y w x" "score order"
	mkdir "$NS/h2"
	echo two >"$NS/h2/x"
	run errno_of 'os.setxattr(a[0], "user.kvfs.type", b"zset")' "$NS/h2"
	assert_eq "$output" EINVAL
	assert_eq "$(kvfs_type "$NS/h2")" hash "type"
}

@test "ZADD z 1.5 m: metadata 85 ... size 1; default CF m -> BFF8..; zset_score CF BFF8.. m -> empty" {
	mkzset "$NS/z"
	echo 1.5 >"$NS/z/m"
	echo -inf >"$NS/z/n"
	kvfs_unmount
	run ldb_value metadata "$(nskey_hex z)"
	[[ $output =~ ^850000000000000000([0-9A-F]{16})0000000000000002$ ]] || {
		echo "metadata of z: $output" >&2
		false
	}
	version=${BASH_REMATCH[1]}
	sub="${NS_HEX}000000017A${version}"
	run ldb_value default "${sub}6D"
	assert_eq "$output" BFF8000000000000 "sortable 1.5"
	run ldb_value default "${sub}6E"
	assert_eq "$output" 000FFFFFFFFFFFFF "sortable -inf"
	run ldb_scan zset_score
	printf '%s\n' "$output" | grep -qx "0x${sub}BFF80000000000006D : 0x"
	printf '%s\n' "$output" | grep -qx "0x${sub}000FFFFFFFFFFFFF6E : 0x"
}

@test "a view opened while an earlier open of it is still held shows the current members" {
	mkdir "$NS/z"
	setfattr -n user.kvfs.type -v zset "$NS/z"
	echo 1 >"$NS/z/a"
	run python3 -c '
import sys
d = sys.argv[1]
f = open(d + "/.by-score")  # held open: its release would come later
first = f.read()
with open(d + "/b", "w") as m:
    m.write("2")
print(first.count("\n"), open(d + "/.by-score").read().count("\n"))
f.close()
' "$NS/z"
	[ "$status" -eq 0 ]
	assert_eq "$output" "1 2" "members in the first and the second open"
}
