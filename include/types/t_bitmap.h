/*
 * t_bitmap: Kvrocks's native bitmap type (GETBIT, SETBIT, BITCOUNT,
 * BITPOS, STRLEN, and GETRANGE of the bytes as Redis shows them) plus
 * byte-level read, write and truncate, which the file system needs.
 * Layout (kvrocks-encoding.md 6.7): metadata (type 6, size = length in
 * bytes); default CF: ns|key_len|key|version|"<byte offset in decimal>"
 * -> fragment of 1..1024 bytes covering bytes [offset, offset + 1024).
 * Inside a fragment bits are LSB-first: bit b of the bitmap is
 * (frag[(b / 8) % 1024] >> (b % 8)) & 1. Missing fragments and bytes past
 * a fragment's end read as zero. Layer: types.
 *
 * "Redis order" is what Redis's GET returns for the same bits (bit b is
 * the MSB-first bit b % 8 of byte b / 8), i.e. every stored byte
 * bit-reversed. Bit numbers (getbit, setbit, bitpos) are the same in both.
 *
 * BITOP (bitmap_bitop) writes a new bitmap from others, as Kvrocks.
 *
 * Kvrocks's bit commands also work on String keys (MSB-first); these
 * verbs accept only bitmap keys (a string is -KV_EWRONGTYPE) -- strings
 * belong to t_string.
 * All verbs return 0 (or a documented count) or a negative errno:
 * -ENOENT, -KV_EWRONGTYPE, -EINVAL (bit offset over BITMAP_MAX_BIT),
 * -EFBIG (bytes past BITMAP_MAX_BYTES), -EUCLEAN (a fragment whose
 * sub-key is not a decimal offset), -EROFS, -ENOMEM, -EIO.
 */
#ifndef KVFS_T_BITMAP_H
#define KVFS_T_BITMAP_H

#include "keyspace/keyspace.h"

#define BITMAP_FRAGMENT_BYTES 1024
#define BITMAP_MAX_BIT	      0xffffffffull /* bit offsets are u32, as Kvrocks */
#define BITMAP_MAX_BYTES      (1ull << 29)  /* 512 MiB: every u32 bit offset */

/* bitmap_truncate option: truncating to 0 remembers an empty bitmap. */
#define BITMAP_KEEP_EMPTY 0x1

/* GETBIT: 1, 0 (also for a missing key or a bit past the end), <0. */
int bitmap_getbit(struct keyspace *ks, const struct ks_key *k, uint64_t bit);
/* SETBIT: set (on) or clear bit `bit`; returns the old bit (1/0) or a
 * negative errno. Creates the key (even to clear a bit, as Redis) and
 * drops its empty-collection record in the same batch. The fragment
 * grows as Kvrocks's: to exactly the byte needed if that is at least
 * twice its length, else it doubles, capped at 1024. size = max(size,
 * byte + 1); clearing never shrinks. */
int bitmap_setbit(struct keyspace *ks, const struct ks_key *k, uint64_t bit, bool on);
/* BITCOUNT over the bytes [start, end] (Redis's inclusive, negative
 * from the end; 0, -1 = all). A missing key counts 0. */
int bitmap_bitcount(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t end,
		    uint64_t *count);
/* BITPOS bit [start [end]] with Redis's rules: *pos = the first bit
 * number holding `bit` in bytes [start, end], or -1. Looking for 0
 * without end_given, bytes past the end count as zeros (so an all-ones
 * bitmap gives size * 8). A missing key gives -1 for 1 and 0 for 0. */
int bitmap_bitpos(struct keyspace *ks, const struct ks_key *k, bool bit, int64_t start, int64_t end,
		  bool end_given, int64_t *pos);
/* GETRANGE on the Redis-order bytes (inclusive, negative from the end);
 * holes read as zero bytes. A missing key gives "". */
int bitmap_getrange(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t end,
		    struct buf *out);
/* Redis-order bytes [off, off + n) clipped to the size (what pread
 * needs). A missing key gives "". */
int bitmap_read(struct keyspace *ks, const struct ks_key *k, uint64_t off, size_t n,
		struct buf *out);
/* Write n bytes given in Redis order at byte offset off, so a read
 * afterwards returns them: sets and clears the bits, grows fragments
 * only to hold non-zero bytes (by Kvrocks's rule above), and sets size =
 * max(size, off + n). n == 0 changes nothing and creates nothing. Creates
 * the key. *newsize (may be NULL) = the size after. -EFBIG past
 * BITMAP_MAX_BYTES. */
int bitmap_write(struct keyspace *ks, const struct ks_key *k, uint64_t off, const void *data,
		 size_t n, uint64_t *newsize);
/* Set the byte length (ftruncate): growing adds zero bytes; shrinking
 * drops the bytes past the new end from the fragments, so they read as
 * zero if the bitmap grows again. 0 deletes the key (or, with
 * BITMAP_KEEP_EMPTY, remembers an empty bitmap). (Kvrocks has no such
 * command; the result is an ordinary Kvrocks bitmap.) -ENOENT if the key
 * is missing, -EFBIG past BITMAP_MAX_BYTES. */
int bitmap_truncate(struct keyspace *ks, const struct ks_key *k, uint64_t size, unsigned flags);
/* STRLEN: the size in bytes; a missing key has 0. */
int bitmap_strlen(struct keyspace *ks, const struct ks_key *k, uint64_t *len);

/* BITOP's operations. */
enum bitmap_op { BITMAP_OP_AND, BITMAP_OP_OR, BITMAP_OP_XOR, BITMAP_OP_NOT };
/* The most distinct keys BITOP takes (the destination counted): the
 * locks of one transaction. */
#define BITMAP_BITOP_MAX_KEYS KS_LOCKV_MAX

/*
 * BITOP op dest srcs[0..n) as Kvrocks's Bitmap::BitOp, in one batch under
 * the locks of dest and every source (ks_lockv's order: no deadlock with
 * another BITOP, whatever it lists; dest may be a source, a source may be
 * listed twice). *len = the length in bytes of dest's value after it,
 * the longest source's (BITOP's answer).
 *   - Sources are bitmaps; a missing, expired or remembered empty one
 *     reads as zeros of length 0. A source of another type, a string
 *     too, is -KV_EWRONGTYPE (Kvrocks: "WRONGTYPE"), nothing written.
 *   - dest, whatever its type, becomes a new bitmap (v1 metadata, a new
 *     version, no expiry, size = *len), as Kvrocks writes it: for AND,
 *     OR, XOR one fragment wherever the sources have one (AND: where
 *     every source has one; none at all when a source is missing), as
 *     long as their longest there, written even when all its bytes are
 *     zero; for NOT every fragment up to the length, 1024 bytes each but
 *     the last (length % 1024). Sources' fragments are read one at a
 *     time: a sparse bitmap is never held whole.
 *   - Every source missing or empty: dest is deleted (with a remembered
 *     empty collection of that name), *len = 0.
 * -EINVAL: n == 0, NOT with n != 1, more than BITMAP_BITOP_MAX_KEYS
 * distinct keys is -E2BIG; -EUCLEAN for a source fragment whose sub-key
 * is no decimal multiple of 1024 (logged), -ENOMEM, -EROFS, -EIO.
 */
int bitmap_bitop(struct keyspace *ks, enum bitmap_op op, const struct ks_key *dest,
		 const struct ks_key *srcs, size_t n, uint64_t *len);

/*
 * Replace the whole value by n bytes given in Redis order (what a file's
 * commit needs), in one batch: the key gets a fresh version, fragments
 * only where a 1 KiB run holds a non-zero byte (each cut after its last
 * non-zero byte), size = n, and the expiry of the key it replaces. The
 * key may be missing, a remembered empty bitmap, or a bitmap. n == 0
 * deletes the key, or with BITMAP_KEEP_EMPTY remembers an empty bitmap
 * (then a key with an expiry is -EINVAL: an empty collection has no
 * record to carry it). -KV_EWRONGTYPE for another type, -EFBIG past
 * BITMAP_MAX_BYTES.
 */
int bitmap_set(struct keyspace *ks, const struct ks_key *k, const void *data, size_t n,
	       unsigned flags);
/*
 * Turn string key k into a bitmap whose bytes (in Redis order) are the
 * string's value, in one batch, keeping the expiry. An empty string
 * becomes a remembered empty bitmap (-EINVAL if it has an expiry).
 * -ENOENT (no key), -KV_EWRONGTYPE (not a string), -EFBIG.
 */
int bitmap_from_string(struct keyspace *ks, const struct ks_key *k);
/*
 * The reverse: bitmap k (or a remembered empty bitmap) becomes a string
 * holding its bytes in Redis order, in one batch, keeping the expiry.
 * -ENOENT, -KV_EWRONGTYPE (not a bitmap).
 */
int bitmap_to_string(struct keyspace *ks, const struct ks_key *k);

#endif
