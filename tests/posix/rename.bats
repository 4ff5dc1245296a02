#!/usr/bin/env bats
# rename(2) and renameat2(2) (POSIX conformance; docs/mapping.md section 6
# has the rules, docs/posix.md where they differ from a local disk).

load posix

# rename2 FROM TO FLAGS: renameat2(2) through libc.
rename2() {
	errno_of '
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
if libc.renameat2(-100, a[0].encode(), -100, a[1].encode(), int(a[2])) != 0:
    raise OSError(ctypes.get_errno(), "renameat2")' "$@"
}

@test "a key renamed: the new name has the value and type, the old one is gone" {
	touch "$NS/b"
	setfattr -n user.kvfs.type -v bitmap "$NS/b"
	printf 'ab' >"$NS/b"
	expect OK 'os.rename(a[0], a[1])' "$NS/b" "$NS/c"
	assert_bytes "$NS/c" ab
	assert_eq "$(kvfs_type "$NS/c")" bitmap "type"
	[ ! -e "$NS/b" ]
	kvfs_remount
	assert_eq "$(names "$NS")" c "keys"
}

@test "a key renamed over another replaces it; to another namespace moves it" {
	printf a >"$NS/a"
	printf b >"$NS/b"
	mkdir "$KVFS_MNT/app"
	expect OK 'os.rename(a[0], a[1])' "$NS/a" "$NS/b"
	assert_bytes "$NS/b" a
	expect OK 'os.rename(a[0], a[1])' "$NS/b" "$KVFS_MNT/app/k"
	assert_bytes "$KVFS_MNT/app/k" a
	assert_eq "$(names "$NS")" "" "keys"
}

@test "a hash renamed over an empty hash replaces it" {
	mkdir "$NS/h" "$NS/e"
	printf v >"$NS/h/f"
	expect OK 'os.rename(a[0], a[1])' "$NS/h" "$NS/e"
	assert_bytes "$NS/e/f" v
	assert_eq "$(names "$NS")" e "keys"
}

@test "a field renamed within its hash and to another hash" {
	mkdir "$NS/h" "$NS/g"
	printf v >"$NS/h/f"
	expect OK 'os.rename(a[0], a[1])' "$NS/h/f" "$NS/h/x"
	expect OK 'os.rename(a[0], a[1])' "$NS/h/x" "$NS/g/y"
	assert_bytes "$NS/g/y" v
	assert_eq "$(names "$NS/h")" "" "fields of h"
}

@test "ENOENT: no source; no target directory" {
	printf a >"$NS/a"
	expect ENOENT 'os.rename(a[0], a[1])' "$NS/nope" "$NS/x"
	expect ENOENT 'os.rename(a[0], a[1])' "$NS/a" "$NS/nodir/x"
	assert_bytes "$NS/a" a
}

@test "EISDIR: a file over a directory" {
	printf a >"$NS/a"
	mkdir "$NS/h"
	expect EISDIR 'os.rename(a[0], a[1])' "$NS/a" "$NS/h"
	assert_bytes "$NS/a" a
	[ -d "$NS/h" ]
}

@test "ENOTDIR: a directory over a file; a path through a file" {
	printf a >"$NS/a"
	mkdir "$NS/h"
	expect ENOTDIR 'os.rename(a[0], a[1])' "$NS/h" "$NS/a"
	expect ENOTDIR 'os.rename(a[0], a[1])' "$NS/a/x" "$NS/b"
	expect ENOTDIR 'os.rename(a[0], a[1])' "$NS/h" "$NS/a/x"
	assert_bytes "$NS/a" a
	[ -d "$NS/h" ]
}

@test "ENOTEMPTY: a directory over a non-empty one" {
	mkdir "$NS/h" "$NS/g"
	printf v >"$NS/h/f"
	printf w >"$NS/g/f"
	expect ENOTEMPTY 'os.rename(a[0], a[1])' "$NS/h" "$NS/g"
	assert_bytes "$NS/h/f" v
	assert_bytes "$NS/g/f" w
}

@test "EEXIST: RENAME_NOREPLACE onto an existing name; EINVAL: RENAME_EXCHANGE" {
	printf a >"$NS/a"
	printf b >"$NS/b"
	run rename2 "$NS/a" "$NS/b" 1
	assert_eq "$output" EEXIST
	run rename2 "$NS/a" "$NS/b" 2
	assert_eq "$output" EINVAL
	assert_bytes "$NS/a" a
	assert_bytes "$NS/b" b
	run rename2 "$NS/a" "$NS/c" 1
	assert_eq "$output" OK
	assert_bytes "$NS/c" a
}

@test "EINVAL: a directory into itself" {
	mkdir "$KVFS_MNT/app"
	expect EINVAL 'os.rename(a[0], a[1])' "$KVFS_MNT/app" "$KVFS_MNT/app/x"
	[ -d "$KVFS_MNT/app" ]
}

@test "EXDEV: across kinds of directory, and a namespace (mv copies)" {
	printf a >"$NS/a"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	mkdir "$KVFS_MNT/app"
	expect EXDEV 'os.rename(a[0], a[1])' "$NS/a" "$NS/h/a"
	expect EXDEV 'os.rename(a[0], a[1])' "$NS/h/f" "$NS/f"
	expect EXDEV 'os.rename(a[0], a[1])' "$KVFS_MNT/app" "$KVFS_MNT/app2"
	expect EXDEV 'os.rename(a[0], a[1])' "$NS/h" "$KVFS_MNT/h2"
	assert_bytes "$NS/a" a
	assert_bytes "$NS/h/f" v
	[ -d "$KVFS_MNT/app" ]
	[ ! -e "$KVFS_MNT/app2" ]
}

@test "EXDEV: a list position onto another, a zset member to another key; a set member to another set is SMOVE" {
	mktype "$NS/l" list
	printf a >"$NS/l/0"
	printf b >"$NS/l/1"
	mktype "$NS/z1" zset
	mktype "$NS/z2" zset
	echo 1 >"$NS/z1/m"
	mktype "$NS/s1" set
	mktype "$NS/s2" set
	touch "$NS/s1/m"
	expect EXDEV 'os.rename(a[0], a[1])' "$NS/l/0" "$NS/l/1"
	expect EXDEV 'os.rename(a[0], a[1])' "$NS/z1/m" "$NS/z2/m"
	assert_bytes "$NS/l/0" a
	assert_bytes "$NS/l/1" b
	assert_eq "$(names "$NS/z1")" m "zset members"
	expect OK 'os.rename(a[0], a[1])' "$NS/s1/m" "$NS/s2/m"
	assert_eq "$(names "$NS/s1")" "" "SMOVE: the source lost it"
	assert_eq "$(names "$NS/s2")" m "SMOVE: the target has it"
}

@test "EINVAL: onto a scratch name of a list from outside (docs/mapping.md section 6)" {
	mktype "$NS/l" list
	printf a >"$NS/a"
	expect EINVAL 'os.rename(a[0], a[1])' "$NS/a" "$NS/l/.x.AbC123"
	assert_bytes "$NS/a" a
	assert_eq "$(names "$NS/l")" "" "positions"
}

@test "ENAMETOOLONG: a name over 255 bytes" {
	printf a >"$NS/a"
	expect ENAMETOOLONG 'os.rename(a[0], a[1])' "$NS/a" "$NS/$LONG_NAME"
	expect ENAMETOOLONG 'os.rename(a[0], a[1])' "$NS/$LONG_NAME" "$NS/b"
	assert_bytes "$NS/a" a
}

@test "EROFS: no rename on a read-only mount" {
	printf a >"$NS/a"
	mkdir "$NS/h"
	printf v >"$NS/h/f"
	ro_remount
	expect EROFS 'os.rename(a[0], a[1])' "$NS/a" "$NS/b"
	expect EROFS 'os.rename(a[0], a[1])' "$NS/h/f" "$NS/h/g"
	assert_bytes "$NS/a" a
	assert_eq "$(names "$NS/h")" f "fields"
}

@test "an open file renamed keeps being written, under its new name" {
	expect OK '
fd = os.open(a[0], os.O_WRONLY | os.O_CREAT)
os.write(fd, b"abc")
os.rename(a[0], a[1])
os.write(fd, b"def")
os.close(fd)' "$NS/a" "$NS/b"
	assert_bytes "$NS/b" abcdef
	[ ! -e "$NS/a" ]
}

@test "a file replaced by a rename stays readable while open (key and field)" {
	printf old >"$NS/a"
	printf new >"$NS/b"
	mkdir "$NS/h"
	printf old >"$NS/h/f"
	printf new >"$NS/h/g"
	expect OK '
for src, dst in ((a[0], a[1]), (a[2], a[3])):
    fd = os.open(dst, os.O_RDONLY)
    os.rename(src, dst)
    assert os.read(fd, 9) == b"old", dst
    os.close(fd)' "$NS/b" "$NS/a" "$NS/h/g" "$NS/h/f"
	assert_bytes "$NS/a" new
	assert_bytes "$NS/h/f" new
}
