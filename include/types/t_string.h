/*
 * t_string: the Redis string type (GET, SET, APPEND, SETRANGE, GETRANGE,
 * STRLEN, DEL, INCRBY, INCRBYFLOAT). The value lives in the metadata
 * record: flags | expire | bytes. Layer: types (may include keyspace, store, encoding, util).
 * All verbs return 0 (or a documented count) on success and a negative
 * errno: -ENOENT (no such key), -KV_EWRONGTYPE (another type), -EROFS,
 * -EFBIG (value over STRING_MAX), -ENOMEM, -EIO.
 */
#ifndef KVFS_T_STRING_H
#define KVFS_T_STRING_H

#include "keyspace/keyspace.h"

/* Largest value kvfs stores in one string (Redis's proto-max-bulk-len). */
#define STRING_MAX (512ull << 20)

/* SET options */
#define STRING_SET_NX	   0x1 /* only if the key does not exist (-EEXIST) */
#define STRING_SET_XX	   0x2 /* only if the key exists (-ENOENT) */
#define STRING_SET_KEEPTTL 0x4 /* keep the key's expiry (SET ... KEEPTTL) */

/* GET: out = the value. */
int string_get(struct keyspace *ks, const struct ks_key *k, struct buf *out);
/* SET: replaces a key of any type (as Redis SET does), unless NX/XX say
 * otherwise; without KEEPTTL the expiry is cleared. */
int string_set(struct keyspace *ks, const struct ks_key *k, const void *v, size_t n,
	       unsigned flags);
/* APPEND: creates the key if missing; *newlen = the new length. */
int string_append(struct keyspace *ks, const struct ks_key *k, const void *v, size_t n,
		  uint64_t *newlen);
/* SETRANGE: write at byte offset `off`, zero-padding a gap; creates the
 * key if missing (unless n == 0, as Redis). *newlen = the new length. */
int string_setrange(struct keyspace *ks, const struct ks_key *k, uint64_t off, const void *v,
		    size_t n, uint64_t *newlen);
/* GETRANGE with Redis's inclusive, possibly negative, start/end. A missing
 * key gives an empty result (Redis returns ""), not -ENOENT. */
int string_getrange(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t end,
		    struct buf *out);
/*
 * Redis's GETRANGE clamp (BITCOUNT's and BITPOS's too) of an inclusive
 * [start, end], negatives from the end, against len bytes: true with the
 * bytes [*lo, *hi), false for none. Unlike LRANGE's (rank_range_clamp),
 * an end before the first byte means the first byte, unless start and
 * end are both negative and start > end.
 */
bool string_range_clamp(int64_t start, int64_t end, uint64_t len, uint64_t *lo, uint64_t *hi);
/* Bytes [off, off + n) clipped to the value (what pread needs). */
int string_read(struct keyspace *ks, const struct ks_key *k, uint64_t off, size_t n,
		struct buf *out);
/*
 * GET without a copy: the value of a live string, borrowed from the
 * store. The bytes (*data, *n) stay valid, whatever happens to the key afterwards,
 * until string_unpin(*pin). 0, -ENOENT, -KV_EWRONGTYPE, -EIO, -ENOMEM;
 * *pin is NULL unless 0 is returned.
 */
struct string_pin;
int string_pin(struct keyspace *ks, const struct ks_key *k, struct string_pin **pin,
	       const char **data, size_t *n);
void string_unpin(struct string_pin *pin);
/* STRLEN: a missing key has length 0 (as Redis). */
int string_strlen(struct keyspace *ks, const struct ks_key *k, uint64_t *len);
/* DEL of a string key: -ENOENT, -KV_EWRONGTYPE if the key is another type. */
int string_del(struct keyspace *ks, const struct ks_key *k);

/*
 * ---- Counters: INCR, DECR, INCRBY, DECRBY, INCRBYFLOAT ----
 *
 * Numbers are read as Kvrocks reads them (its ParseInt<int64_t>(s, 10)
 * and ParseFloat: strtoll / strtod over the whole bytes, nothing left
 * over, no overflow or underflow): an argument may start with blanks and
 * a '+' (" +5"), a stored value may not start with a blank. The hash
 * verbs (t_hash.h) use the same rules.
 */
#define STRING_NUM_VALUE 1 /* a stored value: a leading blank is refused */
/* Read s (n bytes, binary) as an integer: 0 with *out, or -EINVAL (not a
 * 64-bit integer). flags: STRING_NUM_VALUE. */
int string_num_int(const char *s, size_t n, unsigned flags, int64_t *out);
/* Read s as a double: 0 with *out, or -EINVAL (not a number; also NaN
 * for an argument, with flags 0). */
int string_num_float(const char *s, size_t n, unsigned flags, double *out);
/* The text Kvrocks stores for an INCRBYFLOAT result (C++ std::to_string,
 * printf "%f": "10.500000"), replacing out's contents. 0 or -ENOMEM. */
int string_num_fmt_float(double d, struct buf *out);
/* The arithmetic of the counters: the value v (vn bytes; NULL: none,
 * which counts as 0) plus by (fl: byf, doubles), as Kvrocks stores the
 * sum, into text (replaced); *n / *f (may be NULL) = the new value as
 * stored. -EINVAL (v is no number, byf is NaN), -ERANGE (the sum leaves
 * the 64-bit range / is infinite or NaN), -ENOMEM. */
int string_num_incr(const char *v, size_t vn, bool fl, int64_t by, double byf, struct buf *text,
		    int64_t *n, double *f);
/*
 * INCRBY (INCR, DECR and DECRBY are INCRBY by 1, -1 and -N): the value
 * plus `by`, stored as decimal text ("%lld") in one batch, the stored
 * header (expiry, v0/v1 encoding) kept; a missing key (or an empty value)
 * counts from 0 and is created. *out = the new value. -EINVAL: the value
 * is not an integer (string_num_int); -ERANGE: the sum leaves the 64-bit
 * range. Nothing is written on an error.
 */
int string_incrby(struct keyspace *ks, const struct ks_key *k, int64_t by, int64_t *out);
/* INCRBYFLOAT: the same with doubles, stored as string_num_fmt_float's
 * text. *out = the new value as stored (the text read back). -EINVAL:
 * the value is not a number, or `by` is NaN; -ERANGE: the sum is
 * infinite or NaN. */
int string_incrbyfloat(struct keyspace *ks, const struct ks_key *k, double by, double *out);

#endif
