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

/* Does member m exist in version `version`? 1, 0, <0. */
static int member_exists(struct keyspace *ks, const struct ks_key *k, uint64_t version,
			 const void *m, size_t mn)
{
	struct buf sk = BUF_INIT, v = BUF_INIT;
	int rc = ks_sub_key(ks, k, version, m, mn, &sk);
	if (!rc)
		rc = store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, &v);
	buf_release(&sk);
	buf_release(&v);
	if (rc == -ENOENT)
		return 0;
	return rc ? rc : 1;
}

int set_add(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, bool *added)
{
	struct ks_txn t;
	struct enc_meta *meta;
	int exists = 0;

	if (mn > SET_MEMBER_MAX)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_SET, &meta);
	if (!rc && !ks_txn_is_new(&t, k))
		rc = exists = member_exists(ks, k, meta->version, m, mn);
	if (rc < 0)
		return ks_txn_end(&t, rc);
	if (!exists) {
		ks_txn_sub_put(&t, k, STORE_CF_DEFAULT, m, mn, "", 0);
		ks_txn_resize(&t, k, +1, 0);
		rc = ks_txn_commit(&t);
	} else {
		rc = 0; /* present: nothing to write */
	}
	if (!rc && added)
		*added = !exists;
	return ks_txn_end(&t, rc);
}

int set_rem(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, unsigned flags)
{
	struct ks_txn t;
	struct enc_meta *meta;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_SET, &meta);
	if (!rc)
		rc = member_exists(ks, k, meta->version, m, mn);
	if (rc <= 0)
		return ks_txn_end(&t, rc ? rc : -ENOENT);
	ks_txn_sub_del(&t, k, STORE_CF_DEFAULT, m, mn);
	ks_txn_resize(&t, k, -1, (flags & SET_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
	return ks_txn_end(&t, ks_txn_commit(&t));
}

int set_rename_member(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fn,
		      const void *to, size_t tn)
{
	struct ks_txn t;
	struct enc_meta *meta;

	if (tn > SET_MEMBER_MAX)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_SET, &meta);
	if (!rc)
		rc = member_exists(ks, k, meta->version, from, fn);
	if (rc <= 0)
		return ks_txn_end(&t, rc ? rc : -ENOENT);
	if (fn == tn && memcmp(from, to, fn) == 0)
		return ks_txn_end(&t, 0); /* onto itself: nothing to do */
	int exists = member_exists(ks, k, meta->version, to, tn);
	if (exists < 0)
		return ks_txn_end(&t, exists);
	ks_txn_sub_del(&t, k, STORE_CF_DEFAULT, from, fn);
	ks_txn_sub_put(&t, k, STORE_CF_DEFAULT, to, tn, "", 0);
	if (exists)
		ks_txn_resize(&t, k, -1, 0); /* `to` is replaced: size stays >= 1 */
	return ks_txn_end(&t, ks_txn_commit(&t));
}

int set_ismember(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn)
{
	struct buf raw = BUF_INIT;
	struct enc_meta meta;
	int rc = ks_meta_get(ks, k, KV_TYPE_SET, &raw, &meta);
	if (rc == 0)
		rc = member_exists(ks, k, meta.version, m, mn);
	else if (rc == -ENOENT)
		rc = 0;
	buf_release(&raw);
	return rc;
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

int set_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		   const struct set_member *ms, size_t n)
{
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (ms[i].len > SET_MEMBER_MAX)
			return -EFBIG;
		ks_txn_sub_put(t, k, STORE_CF_DEFAULT, ms[i].data, ms[i].len, "", 0);
	}
	m->size = n;
	return ks_txn_commit(t);
}
