/*
 * fs_string: string and bitmap keys as files (file shapes, fs_int.h).
 * A string file holds the value's bytes; read and not written, it is
 * borrowed from the store (string_pin) rather than copied. A bitmap file
 * holds the bitmap's bytes in Redis's bit order as GET shows them; while
 * nobody buffers it, it is read and written in place (GETRANGE-like
 * reads, one batch per write), so a sparse 512 MiB bitmap never has to
 * fit in memory. A string is the new-file type: every other file type
 * converts from and to it (user.kvfs.type, an editor's save). Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>

#include "types/t_bitmap.h"
#include "types/t_string.h"

/* ---- string ---------------------------------------------------------- */

static int str_load(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	return string_get(fs->ks, k, out);
}

static int str_commit(struct fs *fs, const struct ks_key *k, const char *d, size_t n)
{
	return string_set(fs->ks, k, d, n, STRING_SET_KEEPTTL);
}

static int str_create(struct fs *fs, const struct ks_key *k)
{
	return string_set(fs->ks, k, "", 0, STRING_SET_NX);
}

static int str_pin(struct fs *fs, const struct ks_key *k, struct string_pin **pin, const char **d,
		   size_t *n)
{
	return string_pin(fs->ks, k, pin, d, n);
}

static const struct fs_help string_help[] = {
    {"KEY", "the value's bytes: any write, append, truncate (SET, APPEND, SETRANGE)", "echo v > s"},
    {"user.kvfs.type", "set bitmap or json to convert the key",
     "setfattr -n user.kvfs.type -v json s"},
    {"KEY:incr", "INCR (KEY:decr: DECR), print the new value; a missing key starts at 0",
     "n=$(cat 'hits:incr')"},
    {"KEY:incrby:N", "INCRBY a whole N (KEY:decrby:N: DECRBY)", "cat 'hits:incrby:10'"},
    {"KEY:incrbyfloat:X", "INCRBYFLOAT: add a float X", "cat 'price:incrbyfloat:0.5'"},
    {NULL, NULL, NULL},
};

const struct fs_file_shape fs_string_file_shape = {
    .type = KV_TYPE_STRING,
    .load = str_load,
    .commit = str_commit,
    .create = str_create,
    .pin = str_pin,
    .help = string_help,
};

/* ---- bitmap ---------------------------------------------------------- */

static int bm_load(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	int rc = bitmap_read(fs->ks, k, 0, BITMAP_MAX_BYTES, out);
	return rc == -ENOENT ? 0 : rc; /* a remembered empty bitmap */
}

static int bm_commit(struct fs *fs, const struct ks_key *k, const char *d, size_t n)
{
	return bitmap_set(fs->ks, k, d, n, BITMAP_KEEP_EMPTY);
}

static int bm_read(struct fs *fs, const struct ks_key *k, uint64_t off, size_t size,
		   struct buf *out)
{
	return bitmap_read(fs->ks, k, off, size, out);
}

static int bm_write(struct fs *fs, const struct ks_key *k, uint64_t off, const char *d, size_t n)
{
	return bitmap_write(fs->ks, k, off, d, n, NULL);
}

static int bm_truncate(struct fs *fs, const struct ks_key *k, uint64_t size)
{
	int rc = bitmap_truncate(fs->ks, k, size, BITMAP_KEEP_EMPTY);
	if (rc == -ENOENT) {
		/* A remembered empty bitmap: growing it makes the key. */
		rc = size ? bitmap_write(fs->ks, k, size - 1, "", 1, NULL) : 0;
	}
	return rc;
}

static int bm_from_string(struct fs *fs, const struct ks_key *k)
{
	return bitmap_from_string(fs->ks, k);
}

static int bm_to_string(struct fs *fs, const struct ks_key *k)
{
	return bitmap_to_string(fs->ks, k);
}

static const struct fs_help bitmap_help[] = {
    {"KEY", "the bytes in Redis bit order (GETBIT, SETBIT as bytes), sparse", "xxd b"},
    {"user.kvfs.type", "set string to convert the key", "setfattr -n user.kvfs.type -v string b"},
    {"KEY:bitcount[:START:END]", "BITCOUNT over bytes START..END (negative from the end)",
     "cat 'b:bitcount'"},
    {"KEY:bitpos:BIT[:START[:END]]", "BITPOS: the first bit holding BIT (0 or 1), or -1",
     "cat 'b:bitpos:1'"},
    {"DEST:bitop:OP:K1,K2,...", "BITOP OP (and, or, xor, not) of bitmaps into DEST; its length",
     "cat 'd:bitop:or:b,c'"},
    {NULL, NULL, NULL},
};

const struct fs_file_shape fs_bitmap_file_shape = {
    .type = KV_TYPE_BITMAP,
    .load = bm_load,
    .commit = bm_commit,
    .read = bm_read,
    .write = bm_write,
    .truncate = bm_truncate,
    .from_new = bm_from_string,
    .to_new = bm_to_string,
    .help = bitmap_help,
};
