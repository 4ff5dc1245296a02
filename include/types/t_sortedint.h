/*
 * t_sortedint: Kvrocks's sorted-integer type (SIADD, SIREM, SIEXISTS,
 * SICARD, SIRANGE/SIREVRANGE). Layout (kvrocks-encoding.md 6.8):
 * metadata (type 7, size = id count), one sub-key per id in the default
 * CF, ns|key_len|key|version|id u64 BE -> empty value, so ids iterate in
 * numeric order. Layer: types.
 * All verbs return 0 (or a documented count) or a negative errno:
 * -ENOENT (no such key or id), -KV_EWRONGTYPE (another type), -EINVAL,
 * -EUCLEAN (a sub-key that is not 8 bytes), -EROFS, -ENOMEM, -EIO.
 */
#ifndef KVFS_T_SORTEDINT_H
#define KVFS_T_SORTEDINT_H

#include "keyspace/keyspace.h"

/* SIREM option: when the last id goes, remember the key as an empty
 * sortedint (in the same batch) instead of letting it vanish. */
#define SORTEDINT_KEEP_EMPTY 0x1

/* SIADD of one id; creates the key and drops its empty-collection record
 * in the same batch. *added (may be NULL) = true if it was new. */
int sortedint_add(struct keyspace *ks, const struct ks_key *k, uint64_t id, bool *added);
/* SIREM of one id. flags: SORTEDINT_KEEP_EMPTY. -ENOENT if the key or the
 * id is missing. (Kvrocks leaves size 0 metadata when the last id goes;
 * kvfs deletes the record, which reads the same.) */
int sortedint_rem(struct keyspace *ks, const struct ks_key *k, uint64_t id, unsigned flags);
/* SIEXISTS: 1, 0 (also for a missing key), or a negative errno. */
int sortedint_exists(struct keyspace *ks, const struct ks_key *k, uint64_t id);
/* SICARD: a missing key has 0 ids. */
int sortedint_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n);

/*
 * SIRANGE / SIREVRANGE: up to `limit` (>= 1, the capacity of ids) ids in
 * ascending (or, with reverse, descending) order, strictly after the
 * cursor `*after` in that direction (after == NULL: from the smallest, or
 * the largest), skipping the first `offset`. *n = how many were stored.
 * A missing key gives *n = 0. -EINVAL if limit is 0.
 * (Kvrocks's SIRANGE takes cursor 0 to mean "from the start" in both
 * directions and so never returns id 0 ascending; pass NULL for that.)
 */
int sortedint_range(struct keyspace *ks, const struct ks_key *k, const uint64_t *after,
		    uint64_t offset, bool reverse, uint64_t *ids, size_t limit, size_t *n);

/*
 * Iteration over the ids, ascending or descending, strictly after the
 * cursor `*after` (NULL = from the first). A missing key iterates
 * nothing; another type gives NULL and -KV_EWRONGTYPE in *err. next()
 * returns 1 with the id, 0 at the end, or a negative errno. Free with
 * sortedint_iter_free.
 */
struct sortedint_iter;
struct sortedint_iter *sortedint_iter_new(struct keyspace *ks, const struct ks_key *k, bool reverse,
					  const uint64_t *after, int *err);
int sortedint_iter_next(struct sortedint_iter *it, uint64_t *id);
void sortedint_iter_free(struct sortedint_iter *it);

/* For t_convert: k, read in transaction t and renewed there as a
 * sortedint (ks_txn_renew; m its metadata), gets n >= 1 distinct ids;
 * then t commits. 0, what ks_txn_commit returns, or -EINVAL (not
 * committed). */
struct ks_txn;
int sortedint_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
			 const uint64_t *ids, size_t n);

#endif
