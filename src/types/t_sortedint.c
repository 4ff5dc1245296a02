/*
 * t_sortedint: Kvrocks's sorted-integer type (kvrocks-encoding.md 6.8).
 * Metadata (type 7, size = number of ids) in the metadata CF; one
 * sub-key per id in the default CF, ns|key_len|key|version|id u64 BE ->
 * empty value. Big-endian ids make byte order numeric order.
 * Layer: types.
 *
 * Every mutation holds the key's lock from the metadata read to the one
 * batch write, so size always equals the number of ids of the current
 * version. Updates keep the stored metadata encoding (v0 stays v0); a new
 * key gets fresh v1 metadata and loses its empty-collection record in
 * the same batch. Removing the last id deletes the metadata, or with
 * SORTEDINT_KEEP_EMPTY replaces it by an empty-collection record.
 */
#include "types/t_sortedint.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <stdlib.h>

int sortedint_add(struct keyspace *ks, const struct ks_key *k, uint64_t id, bool *added)
{
	uint8_t sub[8];
	put_be64(sub, id);
	return ks_member_put(ks, k, KV_TYPE_SORTEDINT, sub, sizeof(sub), "", 0, KS_MEMBER_KEEP,
			     added);
}

int sortedint_rem(struct keyspace *ks, const struct ks_key *k, uint64_t id, unsigned flags)
{
	uint8_t sub[8];
	put_be64(sub, id);
	return ks_member_del(ks, k, KV_TYPE_SORTEDINT, sub, sizeof(sub),
			     (flags & SORTEDINT_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
}

int sortedint_exists(struct keyspace *ks, const struct ks_key *k, uint64_t id)
{
	uint8_t sub[8];
	put_be64(sub, id);
	return ks_sub_has(ks, k, KV_TYPE_SORTEDINT, sub, sizeof(sub));
}

int sortedint_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	return ks_card(ks, k, KV_TYPE_SORTEDINT, n);
}

/* ---- Iteration ----------------------------------------------------- */

/* A sortedint iterator is the keyspace's sub-key iterator, ascending or
 * descending, that checks each sub-key is an 8-byte id. */
struct sortedint_iter *sortedint_iter_new(struct keyspace *ks, const struct ks_key *k, bool reverse,
					  const uint64_t *after, int *err)
{
	uint8_t cur[8];
	struct ks_sub_iter_opts o = {.reverse = reverse};
	if (after) {
		put_be64(cur, *after);
		o.after = cur;
		o.alen = sizeof(cur);
	}
	return (struct sortedint_iter *)ks_sub_iter_open(ks, k, KV_TYPE_SORTEDINT, &o, err);
}

int sortedint_iter_next(struct sortedint_iter *it, uint64_t *id)
{
	struct ks_sub_iter *si = (struct ks_sub_iter *)it;
	const char *sub, *v;
	size_t sn, vn;
	int rc;

	while ((rc = ks_sub_iter_next(si, &sub, &sn, &v, &vn)) == 1) {
		if (sn == 8) {
			*id = get_be64(sub);
			return 1;
		}
		/* It names no id a lookup finds (every lookup builds 8
		 * bytes): skipped wherever it is met (encoding.md 20). */
		ks_corrupt_entry(ks_sub_iter_key(si), sub, sn,
				 "a sortedint sub-key of %zu bytes where an 8-byte id belongs; "
				 "skipped",
				 sn);
	}
	return rc;
}

void sortedint_iter_free(struct sortedint_iter *it)
{
	ks_sub_iter_free((struct ks_sub_iter *)it);
}

int sortedint_range(struct keyspace *ks, const struct ks_key *k, const uint64_t *after,
		    uint64_t offset, bool reverse, uint64_t *ids, size_t limit, size_t *n)
{
	struct sortedint_iter *it;
	uint64_t id = 0, skipped = 0;
	int rc;

	*n = 0;
	if (limit == 0 || !ids)
		return -EINVAL;
	it = sortedint_iter_new(ks, k, reverse, after, &rc);
	if (!it)
		return rc;
	while (*n < limit && (rc = sortedint_iter_next(it, &id)) == 1) {
		if (skipped < offset) {
			skipped++;
			continue;
		}
		ids[(*n)++] = id;
	}
	if (rc == 1)
		rc = 0;
	sortedint_iter_free(it);
	return rc;
}

/* ---- For t_convert --------------------------------------------------- */

int sortedint_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
			 const uint64_t *ids, size_t n)
{
	uint8_t sub[8];

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		put_be64(sub, ids[i]);
		ks_txn_sub_put(t, k, STORE_CF_DEFAULT, sub, sizeof(sub), "", 0);
	}
	m->size = n;
	return ks_txn_commit(t);
}
