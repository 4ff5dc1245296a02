/*
 * t_set: the Redis set type (kvrocks-encoding.md 6.4). Metadata (type 4,
 * size = number of members) in the metadata CF; one sub-key per member
 * in the default CF, ns|key_len|key|version|member -> empty value.
 * Layer: types.
 *
 * Every mutation holds the key's lock from the metadata read to the one
 * batch write, so size always equals the number of members of the
 * current version. Updates keep the stored metadata encoding (v0 stays
 * v0); a new key gets fresh v1 metadata and a fresh version and loses
 * its empty-collection record in the same batch. Removing the last
 * member deletes the metadata (as Kvrocks's SREM does), or with
 * SET_KEEP_EMPTY replaces it by an empty-collection record.
 */
#include "types/t_set.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <stdlib.h>

int set_add(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, bool *added)
{
	if (mn > SET_MEMBER_MAX)
		return -EFBIG;
	return ks_member_put(ks, k, KV_TYPE_SET, m, mn, "", 0, KS_MEMBER_KEEP, added);
}

int set_rem(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, unsigned flags)
{
	return ks_member_del(ks, k, KV_TYPE_SET, m, mn,
			     (flags & SET_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
}

int set_rename_member(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fn,
		      const void *to, size_t tn)
{
	if (tn > SET_MEMBER_MAX)
		return -EFBIG;
	return ks_member_rename(ks, k, KV_TYPE_SET, from, fn, to, tn);
}

int set_ismember(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn)
{
	return ks_sub_has(ks, k, KV_TYPE_SET, m, mn);
}

int set_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	return ks_card(ks, k, KV_TYPE_SET, n);
}

/* ---- Iteration ----------------------------------------------------- */

/* A set iterator is the keyspace's sub-key iterator (values are empty). */
struct set_iter *set_iter_new(struct keyspace *ks, const struct ks_key *k, const void *after,
			      size_t alen, int *err)
{
	return (struct set_iter *)ks_sub_iter_new(ks, k, KV_TYPE_SET, after, alen, err);
}

int set_iter_next(struct set_iter *it, const char **m, size_t *mn)
{
	const char *v;
	size_t vn;
	return ks_sub_iter_next((struct ks_sub_iter *)it, m, mn, &v, &vn);
}

void set_iter_free(struct set_iter *it)
{
	ks_sub_iter_free((struct ks_sub_iter *)it);
}

/* ---- For t_convert --------------------------------------------------- */

int set_txn_add(struct ks_txn *t, const struct ks_key *k, const void *m, size_t mn)
{
	if (mn > SET_MEMBER_MAX)
		return -EFBIG;
	ks_txn_sub_put(t, k, STORE_CF_DEFAULT, m, mn, "", 0);
	ks_txn_resize(t, k, +1, 0);
	return 0;
}
