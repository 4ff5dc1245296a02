/*
 * t_set: the Redis set type (SADD, SREM, SISMEMBER, SCARD, and ordered
 * member iteration after a cursor). Layout (kvrocks-encoding.md 6.4):
 * metadata (type 4, size = member count), one sub-key per member in the
 * default CF with an empty value. Layer: types.
 * Members are binary. All verbs return 0 (or a documented count) or a
 * negative errno: -ENOENT (no such key or member), -KV_EWRONGTYPE
 * (another type), -EFBIG (member over SET_MEMBER_MAX), -EROFS, -ENOMEM,
 * -EIO, -EINVAL (bad namespace).
 */
#ifndef KVFS_T_SET_H
#define KVFS_T_SET_H

#include "keyspace/keyspace.h"

/* SREM option: when the last member goes, remember the key as an empty
 * set (in the same batch) instead of letting it vanish. */
#define SET_KEEP_EMPTY 0x1

/* Largest member: Redis's proto-max-bulk-len. */
#define SET_MEMBER_MAX (512ull << 20)

/* SADD of one member; creates the key and drops its empty-collection
 * record in the same batch. *added (may be NULL) = true if it was new;
 * adding a present member writes nothing. */
int set_add(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, bool *added);
/* SREM of one member. flags: SET_KEEP_EMPTY. -ENOENT if the key or the
 * member is missing. */
int set_rem(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, unsigned flags);
/* Rename member `from` to `to` in one batch; if `to` is a member too it
 * is replaced (the set loses one member). from == to is 0 if it exists.
 * -ENOENT if the key or `from` is missing. */
int set_rename_member(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fn,
		      const void *to, size_t tn);
/* SISMEMBER: 1, 0 (also for a missing key), or a negative errno. */
int set_ismember(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn);
/* SCARD: a missing key has 0 members. */
int set_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n);

/*
 * Members of the key's current version in byte order, starting after
 * `after` (NULL = from the first member). A missing key iterates
 * nothing; another type gives NULL and -KV_EWRONGTYPE in *err. next()
 * returns 1 with a borrowed member (valid until the next call), 0 at the
 * end, or a negative errno. Free with set_iter_free.
 */
struct set_iter;
struct set_iter *set_iter_new(struct keyspace *ks, const struct ks_key *k, const void *after,
			      size_t alen, int *err);
int set_iter_next(struct set_iter *it, const char **m, size_t *mn);
void set_iter_free(struct set_iter *it);

/* For t_convert: k, read in transaction t and renewed there as a set
 * (ks_txn_renew), gets member m, one it does not have yet; the caller
 * commits. 0, or -EFBIG (nothing staged). */
struct ks_txn;
int set_txn_add(struct ks_txn *t, const struct ks_key *k, const void *m, size_t mn);

#endif
