/*
 * t_hash: the Redis hash type (HGET, HSET, HSETNX, HDEL, HLEN, HEXISTS,
 * HSTRLEN, HINCRBY, HINCRBYFLOAT, ordered field iteration) plus an atomic
 * field rename.
 * Layout: metadata (size = field count), one sub-key per field in the
 * default CF holding the raw value. Layer: types.
 * Errors as in t_string.h; fields and values are binary.
 */
#ifndef KVFS_T_HASH_H
#define KVFS_T_HASH_H

#include "keyspace/keyspace.h"

/* HDEL option: when the last field goes, remember the key as an empty
 * hash (in the same batch) instead of letting it vanish. */
#define HASH_KEEP_EMPTY 0x1

/* HGET: out = value. -ENOENT if the key or the field is missing. */
int hash_get(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn,
	     struct buf *out);
/* HSET of one field; creates the key. *created (may be NULL) = true if the
 * field was new. Removes an empty-collection record in the same batch. */
int hash_set(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, const void *v,
	     size_t vn, bool *created);
/* HSETNX: -EEXIST if the field exists. */
int hash_setnx(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, const void *v,
	       size_t vn);
/* HDEL of one field. -ENOENT if the key or field is missing. */
int hash_del(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, unsigned flags);
/* HLEN: a missing key has length 0. */
int hash_len(struct keyspace *ks, const struct ks_key *k, uint64_t *n);
/* HEXISTS: 1, 0, or a negative errno (-KV_EWRONGTYPE). */
int hash_exists(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn);
/* HSTRLEN: -ENOENT if the field is missing. */
int hash_strlen(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn,
		uint64_t *len);
/* HSTRLEN in the hash `info` describes, as ks_lookup just returned it (a
 * lookup of a field need not read the metadata twice). -ENOENT if the
 * field is missing (always, in a remembered empty hash). */
int hash_strlen_in(struct keyspace *ks, const struct ks_key *k, const struct ks_info *info,
		   const void *f, size_t fn, uint64_t *len);
/* Move field `from` to `to` within one hash, replacing `to` atomically.
 * -ENOENT if `from` is missing. */
int hash_rename_field(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fromn,
		      const void *to, size_t ton);
/* Move a field between two hashes (`to` may exist; it is replaced).
 * flags: HASH_KEEP_EMPTY for the source. -ENOENT if the source is missing. */
int hash_move_field(struct keyspace *ks, const struct ks_key *src, const void *f, size_t fn,
		    const struct ks_key *dst, const void *t, size_t tn, unsigned flags);

/* HINCRBY / HINCRBYFLOAT: field f plus by, in one batch, stored as
 * Kvrocks stores it (decimal text; "%f" for a float, t_string.h's
 * counters, whose number rules apply); a missing field (or key) counts
 * from 0 and is created. *out = the new value (as stored). -EINVAL: the
 * field is not an integer / a number (an empty field is neither), or by
 * is NaN; -ERANGE: the sum leaves the 64-bit range / is infinite or NaN.
 * Nothing is written on an error. */
int hash_incrby(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, int64_t by,
		int64_t *out);
int hash_incrbyfloat(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn,
		     double by, double *out);

/*
 * Ordered iteration of the fields of the key's current version, in byte
 * order, starting after `after` (NULL = from the first field). A missing
 * or empty key iterates nothing; another type gives -KV_EWRONGTYPE from
 * hash_iter_new's *err. next() returns 1 with borrowed field and value
 * (valid until the next call), 0 at the end, or a negative errno.
 */
struct hash_iter;
struct hash_iter *hash_iter_new(struct keyspace *ks, const struct ks_key *k, const void *after,
				size_t alen, int *err);
int hash_iter_next(struct hash_iter *it, const char **f, size_t *fn, const char **v, size_t *vn);
void hash_iter_free(struct hash_iter *it);

#endif
