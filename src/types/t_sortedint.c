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

static int id_key(struct keyspace *ks, const struct ks_key *k, uint64_t version, uint64_t id,
		  struct buf *out)
{
	uint8_t sub[8];
	put_be64(sub, id);
	buf_reset(out);
	return ks_sub_key(ks, k, version, sub, sizeof(sub), out);
}

/* Does id exist in version `version`? 1, 0, <0. */
static int id_exists(struct keyspace *ks, const struct ks_key *k, uint64_t version, uint64_t id)
{
	struct buf sk = BUF_INIT, v = BUF_INIT;
	int rc = id_key(ks, k, version, id, &sk);
	if (!rc)
		rc = store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, &v);
	buf_release(&sk);
	buf_release(&v);
	if (rc == -ENOENT)
		return 0;
	return rc ? rc : 1;
}

int sortedint_add(struct keyspace *ks, const struct ks_key *k, uint64_t id, bool *added)
{
	struct ks_txn t;
	struct enc_meta *m;
	uint8_t sub[8];
	int exists = 0;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_SORTEDINT, &m);
	if (!rc && !ks_txn_is_new(&t, k))
		rc = exists = id_exists(ks, k, m->version, id);
	if (rc < 0)
		return ks_txn_end(&t, rc);
	if (!exists) {
		put_be64(sub, id);
		ks_txn_sub_put(&t, k, STORE_CF_DEFAULT, sub, sizeof(sub), "", 0);
		ks_txn_resize(&t, k, +1, 0);
		rc = ks_txn_commit(&t);
	} else {
		rc = 0; /* present: nothing to write */
	}
	if (!rc && added)
		*added = !exists;
	return ks_txn_end(&t, rc);
}

int sortedint_rem(struct keyspace *ks, const struct ks_key *k, uint64_t id, unsigned flags)
{
	struct ks_txn t;
	struct enc_meta *m;
	uint8_t sub[8];

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_SORTEDINT, &m);
	if (!rc)
		rc = id_exists(ks, k, m->version, id);
	if (rc <= 0)
		return ks_txn_end(&t, rc ? rc : -ENOENT);
	put_be64(sub, id);
	ks_txn_sub_del(&t, k, STORE_CF_DEFAULT, sub, sizeof(sub));
	ks_txn_resize(&t, k, -1, (flags & SORTEDINT_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
	return ks_txn_end(&t, ks_txn_commit(&t));
}

int sortedint_exists(struct keyspace *ks, const struct ks_key *k, uint64_t id)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_meta_get(ks, k, KV_TYPE_SORTEDINT, &raw, &m);
	if (rc == 0)
		rc = id_exists(ks, k, m.version, id);
	else if (rc == -ENOENT)
		rc = 0;
	buf_release(&raw);
	return rc;
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
