/*
 * t_string: the Redis string type (GET, SET, APPEND, SETRANGE, GETRANGE,
 * STRLEN, DEL). The value lives in the metadata record: flags | expire |
 * bytes. Layer: types (may include keyspace, store, encoding, util).
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

#endif
