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
#include "t_set.h"

#include "store.h"

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
	struct buf raw = BUF_INIT, sk = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta meta;
	bool fresh = false;
	int rc, exists = 0;

	if (mn > SET_MEMBER_MAX)
		return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_SET, &raw, &meta);
	if (rc == -ENOENT) {
		ks_meta_new(ks, &meta, KV_TYPE_SET);
		fresh = true;
		rc = 0;
	}
	if (rc)
		goto out;
	if (!fresh && (exists = member_exists(ks, k, meta.version, m, mn)) != 0) {
		rc = exists < 0 ? exists : 0; /* present: nothing to write */
		goto out;
	}
	rc = ks_sub_key(ks, k, meta.version, m, mn, &sk);
	if (!rc) {
		store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, "", 0);
		meta.size++;
		rc = ks_batch_put_meta(ks, b, k, &meta, meta.tail, meta.tail_len);
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

int set_rem(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, unsigned flags)
{
	struct buf raw = BUF_INIT, sk = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta meta;
	int rc;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_SET, &raw, &meta);
	if (rc)
		goto out;
	rc = member_exists(ks, k, meta.version, m, mn);
	if (rc <= 0) {
		rc = rc ? rc : -ENOENT;
		goto out;
	}
	rc = ks_sub_key(ks, k, meta.version, m, mn, &sk);
	if (rc)
		goto out;
	store_batch_delete(b, STORE_CF_DEFAULT, sk.data, sk.len);
	if (meta.size > 1) {
		meta.size--;
		rc = ks_batch_put_meta(ks, b, k, &meta, meta.tail, meta.tail_len);
	} else {
		rc = ks_batch_del_meta(ks, b, k);
		if (!rc && (flags & SET_KEEP_EMPTY))
			rc = ks_batch_empty_put(ks, b, k, KV_TYPE_SET);
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

int set_rename_member(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fn,
		      const void *to, size_t tn)
{
	struct buf raw = BUF_INIT, sk = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta meta;
	int rc;

	if (tn > SET_MEMBER_MAX)
		return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_SET, &raw, &meta);
	if (!rc) {
		rc = member_exists(ks, k, meta.version, from, fn);
		if (rc == 0)
			rc = -ENOENT;
		else if (rc == 1)
			rc = 0;
	}
	if (rc || (fn == tn && memcmp(from, to, fn) == 0))
		goto out;
	rc = member_exists(ks, k, meta.version, to, tn);
	if (rc < 0)
		goto out;
	if (rc == 1) {
		/* `to` is replaced: one member fewer. */
		meta.size--;
		rc = ks_batch_put_meta(ks, b, k, &meta, meta.tail, meta.tail_len);
	} else {
		rc = 0;
	}
	if (!rc)
		rc = ks_sub_key(ks, k, meta.version, from, fn, &sk);
	if (!rc) {
		store_batch_delete(b, STORE_CF_DEFAULT, sk.data, sk.len);
		buf_reset(&sk);
		rc = ks_sub_key(ks, k, meta.version, to, tn, &sk);
	}
	if (!rc) {
		store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, "", 0);
		rc = ks_write(ks, b);
	}
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&sk);
	return rc;
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
	struct buf raw = BUF_INIT;
	struct enc_meta meta;
	int rc = ks_meta_get(ks, k, KV_TYPE_SET, &raw, &meta);
	if (rc == 0) {
		*n = meta.size;
	} else if (rc == -ENOENT) {
		*n = 0;
		rc = 0;
	}
	buf_release(&raw);
	return rc;
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

int set_batch_create(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
		     uint64_t expire_ms, const struct set_member *ms, size_t n)
{
	struct buf sk = BUF_INIT;
	struct enc_meta meta;
	int rc = 0;

	if (n == 0)
		return -EINVAL;
	ks_meta_new(ks, &meta, KV_TYPE_SET);
	meta.expire_ms = expire_ms;
	meta.size = n;
	for (size_t i = 0; i < n && !rc; i++) {
		if (ms[i].len > SET_MEMBER_MAX) {
			rc = -EFBIG;
			break;
		}
		buf_reset(&sk);
		rc = ks_sub_key(ks, k, meta.version, ms[i].data, ms[i].len, &sk);
		if (!rc)
			store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, "", 0);
	}
	if (!rc)
		rc = ks_batch_put_meta(ks, b, k, &meta, NULL, 0);
	buf_release(&sk);
	return rc;
}
