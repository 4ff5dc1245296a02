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
#include "t_sortedint.h"

#include "store.h"

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
	struct buf raw = BUF_INIT, sk = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta m;
	bool fresh = false;
	int rc, exists = 0;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_SORTEDINT, &raw, &m);
	if (rc == -ENOENT) {
		ks_meta_new(ks, &m, KV_TYPE_SORTEDINT);
		fresh = true;
		rc = 0;
	}
	if (rc)
		goto out;
	if (!fresh && (exists = id_exists(ks, k, m.version, id)) != 0) {
		rc = exists < 0 ? exists : 0; /* present: nothing to write */
		goto out;
	}
	rc = id_key(ks, k, m.version, id, &sk);
	if (!rc) {
		store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, "", 0);
		m.size++;
		rc = ks_batch_put_meta(ks, b, k, &m, m.tail, m.tail_len);
	}
	if (!rc && fresh)
		rc = ks_batch_empty_del(ks, b, k);
	if (!rc)
		rc = ks_write(ks, b);
out:
	if (!rc && added)
		*added = !exists;
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&sk);
	return rc;
}

int sortedint_rem(struct keyspace *ks, const struct ks_key *k, uint64_t id, unsigned flags)
{
	struct buf raw = BUF_INIT, sk = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta m;
	int rc;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_SORTEDINT, &raw, &m);
	if (rc)
		goto out;
	rc = id_exists(ks, k, m.version, id);
	if (rc <= 0) {
		rc = rc ? rc : -ENOENT;
		goto out;
	}
	rc = id_key(ks, k, m.version, id, &sk);
	if (rc)
		goto out;
	store_batch_delete(b, STORE_CF_DEFAULT, sk.data, sk.len);
	if (m.size > 1) {
		m.size--;
		rc = ks_batch_put_meta(ks, b, k, &m, m.tail, m.tail_len);
	} else {
		rc = ks_batch_del_meta(ks, b, k);
		if (!rc && (flags & SORTEDINT_KEEP_EMPTY))
			rc = ks_batch_empty_put(ks, b, k, KV_TYPE_SORTEDINT);
	}
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&sk);
	return rc;
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
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_meta_get(ks, k, KV_TYPE_SORTEDINT, &raw, &m);
	if (rc == 0) {
		*n = m.size;
	} else if (rc == -ENOENT) {
		*n = 0;
		rc = 0;
	}
	buf_release(&raw);
	return rc;
}

/* ---- Iteration ----------------------------------------------------- */

struct sortedint_iter {
	struct store_iter *si; /* NULL: nothing to iterate */
	size_t plen;	       /* sub-key prefix length */
	bool reverse;
	bool started;
	struct buf name; /* ns | key: k points into it, for the log */
	struct ks_key k;
};

struct sortedint_iter *sortedint_iter_new(struct keyspace *ks, const struct ks_key *k, bool reverse,
					  const uint64_t *after, int *err)
{
	struct buf raw = BUF_INIT, prefix = BUF_INIT, upper = BUF_INIT, cur = BUF_INIT;
	struct sortedint_iter *it = calloc(1, sizeof(*it));
	struct enc_meta m;
	bool bounded;
	int rc;

	if (!it) {
		rc = -ENOMEM;
		goto out;
	}
	it->reverse = reverse;
	rc = ks_meta_get(ks, k, KV_TYPE_SORTEDINT, &raw, &m);
	if (rc == -ENOENT) {
		rc = 0; /* a missing key iterates nothing */
		goto out;
	}
	if (rc)
		goto out;
	rc = ks_sub_key(ks, k, m.version, NULL, 0, &prefix);
	if (!rc)
		rc = buf_set(&upper, prefix.data, prefix.len);
	if (!rc)
		rc = ks_key_dup(k, &it->name, &it->k);
	if (rc)
		goto out;
	it->plen = prefix.len;
	bounded = enc_prefix_successor(&upper);
	it->si = store_iter_new(ks_store(ks), STORE_CF_DEFAULT, prefix.data, prefix.len,
				bounded ? upper.data : NULL, bounded ? upper.len : 0);
	if (!it->si) {
		rc = -ENOMEM;
		goto out;
	}
	if (!after) {
		if (reverse)
			store_iter_seek_last(it->si);
		else
			store_iter_seek_first(it->si);
		goto out;
	}
	if ((rc = id_key(ks, k, m.version, *after, &cur)))
		goto out;
	if (reverse)
		store_iter_seek_for_prev(it->si, cur.data, cur.len);
	else
		store_iter_seek(it->si, cur.data, cur.len);
	if (store_iter_valid(it->si)) {
		size_t kn;
		const char *key = store_iter_key(it->si, &kn);
		if (kn == cur.len && memcmp(key, cur.data, kn) == 0) {
			/* strictly after the cursor */
			if (reverse)
				store_iter_prev(it->si);
			else
				store_iter_next(it->si);
		}
	}
out:
	if (rc) {
		sortedint_iter_free(it);
		it = NULL;
	}
	*err = rc;
	buf_release(&raw);
	buf_release(&prefix);
	buf_release(&upper);
	buf_release(&cur);
	return it;
}

int sortedint_iter_next(struct sortedint_iter *it, uint64_t *id)
{
	size_t kn;
	const char *key;

	if (!it->si)
		return 0;
	for (;;) {
		if (!store_iter_step(it->si, it->reverse, &it->started))
			return store_iter_status(it->si);
		key = store_iter_key(it->si, &kn);
		if (kn == it->plen + 8)
			break;
		/* It names no id a lookup finds (every lookup builds 8
		 * bytes): skipped wherever it is met (encoding.md 20). */
		ks_corrupt_entry(&it->k, key + it->plen, kn - it->plen,
				 "a sortedint sub-key of %zu bytes where an 8-byte id belongs; "
				 "skipped",
				 kn - it->plen);
	}
	*id = get_be64(key + it->plen);
	return 1;
}

void sortedint_iter_free(struct sortedint_iter *it)
{
	if (!it)
		return;
	store_iter_free(it->si);
	buf_release(&it->name);
	free(it);
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

int sortedint_batch_create(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			   uint64_t expire_ms, const uint64_t *ids, size_t n)
{
	struct buf sk = BUF_INIT;
	struct enc_meta m;
	int rc = 0;

	if (n == 0)
		return -EINVAL;
	ks_meta_new(ks, &m, KV_TYPE_SORTEDINT);
	m.expire_ms = expire_ms;
	m.size = n;
	for (size_t i = 0; i < n && !rc; i++) {
		rc = id_key(ks, k, m.version, ids[i], &sk);
		if (!rc)
			store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, "", 0);
	}
	if (!rc)
		rc = ks_batch_put_meta(ks, b, k, &m, NULL, 0);
	buf_release(&sk);
	return rc;
}
