/*
 * t_hash: the Redis hash type (kvrocks-encoding.md 6.3). Metadata (type
 * 2, size = number of fields) in the metadata CF; one sub-key per field
 * in the default CF, ns|key_len|key|version|field -> raw value.
 * Layer: types.
 *
 * Every mutation holds the key's lock (both keys' for a move) from the
 * metadata read to the single batch write, so size always equals the
 * number of fields of the current version. Updates keep the stored
 * metadata encoding (v0 stays v0); a new key gets fresh v1 metadata and a
 * fresh version, and loses its empty-collection record in the same batch.
 * Removing the last field deletes the metadata (Kvrocks may leave size 0,
 * which reads as absent; deleting is equivalent and tidier).
 */
#include "t_hash.h"

#include "store.h"

#include <errno.h>
#include <stdlib.h>

/* Largest value of one field: Redis's proto-max-bulk-len, as STRING_MAX. */
#define HASH_VALUE_MAX (512ull << 20)

/* NEEDSWORK: hashes written with Kvrocks's hash field expiration (a tail
 * after `size`, values prefixed with an expiry in mode 1) are not
 * understood; their tail is carried along unchanged. */

static bool key_eq(const struct ks_key *a, const struct ks_key *b)
{
	return a->nslen == b->nslen && a->klen == b->klen && memcmp(a->ns, b->ns, a->nslen) == 0 &&
	       (!a->klen || memcmp(a->key, b->key, a->klen) == 0);
}

/* Read field f of version `version`. 0 and out, -ENOENT, -EIO. */
static int field_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, const void *f,
		     size_t fn, struct buf *out)
{
	struct buf sk = BUF_INIT;
	int rc = ks_sub_key(ks, k, version, f, fn, &sk);
	if (!rc)
		rc = store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, out);
	buf_release(&sk);
	return rc;
}

/* Length of field f of version `version`, without copying its value.
 * 0, -ENOENT, -EIO. */
static int field_len(struct keyspace *ks, const struct ks_key *k, uint64_t version, const void *f,
		     size_t fn, uint64_t *len)
{
	struct buf sk = BUF_INIT;
	size_t full = 0;
	int rc = ks_sub_key(ks, k, version, f, fn, &sk);
	if (!rc)
		rc =
		    store_get_head(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, 0, NULL, &full);
	buf_release(&sk);
	if (!rc)
		*len = full;
	return rc;
}

/* Does field f exist? 1, 0, <0. */
static int field_exists(struct keyspace *ks, const struct ks_key *k, uint64_t version,
			const void *f, size_t fn)
{
	uint64_t len;
	int rc = field_len(ks, k, version, f, fn, &len);
	if (rc == -ENOENT)
		return 0;
	return rc ? rc : 1;
}

static void batch_put_field(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			    uint64_t version, const void *f, size_t fn, const void *v, size_t vn,
			    int *rc)
{
	struct buf sk = BUF_INIT;
	if (*rc)
		return;
	*rc = ks_sub_key(ks, k, version, f, fn, &sk);
	if (!*rc)
		store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, v, vn);
	buf_release(&sk);
}

static void batch_del_field(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			    uint64_t version, const void *f, size_t fn, int *rc)
{
	struct buf sk = BUF_INIT;
	if (*rc)
		return;
	*rc = ks_sub_key(ks, k, version, f, fn, &sk);
	if (!*rc)
		store_batch_delete(b, STORE_CF_DEFAULT, sk.data, sk.len);
	buf_release(&sk);
}

/* Metadata after one field went away: rewrite it, or delete the key
 * (remembering it as an empty hash if asked). */
static int batch_shrink(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			struct enc_meta *m, unsigned flags)
{
	int rc;
	if (m->size > 1) {
		m->size--;
		return ks_batch_put_meta(ks, b, k, m, m->tail, m->tail_len);
	}
	rc = ks_batch_del_meta(ks, b, k);
	if (!rc && (flags & HASH_KEEP_EMPTY))
		rc = ks_batch_empty_put(ks, b, k, KV_TYPE_HASH);
	return rc;
}

int hash_get(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, struct buf *out)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_meta_get(ks, k, KV_TYPE_HASH, &raw, &m);
	if (!rc)
		rc = field_get(ks, k, m.version, f, fn, out);
	buf_release(&raw);
	return rc;
}

/* HSET / HSETNX. */
static int hash_put(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn,
		    const void *v, size_t vn, bool nx, bool *created)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta m;
	bool fresh = false;
	int rc, exists = 0;

	if (vn > HASH_VALUE_MAX)
		return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_HASH, &raw, &m);
	if (rc == -ENOENT) {
		ks_meta_new(ks, &m, KV_TYPE_HASH);
		fresh = true;
		rc = 0;
	}
	if (rc)
		goto out;
	if (!fresh) {
		exists = field_exists(ks, k, m.version, f, fn);
		if (exists < 0) {
			rc = exists;
			goto out;
		}
	}
	if (nx && exists) {
		rc = -EEXIST;
		goto out;
	}
	batch_put_field(ks, b, k, m.version, f, fn, v, vn, &rc);
	if (!rc && !exists) {
		m.size++;
		rc = ks_batch_put_meta(ks, b, k, &m, m.tail, m.tail_len);
	}
	if (!rc && fresh)
		rc = ks_batch_empty_del(ks, b, k);
	if (!rc)
		rc = ks_write(ks, b);
	if (!rc && created)
		*created = !exists;
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

int hash_set(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, const void *v,
	     size_t vn, bool *created)
{
	return hash_put(ks, k, f, fn, v, vn, false, created);
}

int hash_setnx(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, const void *v,
	       size_t vn)
{
	return hash_put(ks, k, f, fn, v, vn, true, NULL);
}

int hash_del(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, unsigned flags)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta m;
	int rc;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_HASH, &raw, &m);
	if (rc)
		goto out;
	rc = field_exists(ks, k, m.version, f, fn);
	if (rc <= 0) {
		rc = rc ? rc : -ENOENT;
		goto out;
	}
	rc = 0;
	batch_del_field(ks, b, k, m.version, f, fn, &rc);
	if (!rc)
		rc = batch_shrink(ks, b, k, &m, flags);
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

int hash_len(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_meta_get(ks, k, KV_TYPE_HASH, &raw, &m);
	if (rc == 0) {
		*n = m.size;
	} else if (rc == -ENOENT) {
		*n = 0;
		rc = 0;
	}
	buf_release(&raw);
	return rc;
}

int hash_exists(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_meta_get(ks, k, KV_TYPE_HASH, &raw, &m);
	if (rc == 0)
		rc = field_exists(ks, k, m.version, f, fn);
	else if (rc == -ENOENT)
		rc = 0;
	buf_release(&raw);
	return rc;
}

int hash_strlen(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn,
		uint64_t *len)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_meta_get(ks, k, KV_TYPE_HASH, &raw, &m);
	if (!rc)
		rc = field_len(ks, k, m.version, f, fn, len);
	buf_release(&raw);
	return rc;
}

int hash_strlen_in(struct keyspace *ks, const struct ks_key *k, const struct ks_info *info,
		   const void *f, size_t fn, uint64_t *len)
{
	if (info->type != KV_TYPE_HASH)
		return -KV_EWRONGTYPE;
	if (info->empty)
		return -ENOENT;
	return field_len(ks, k, info->version, f, fn, len);
}

int hash_rename_field(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fromn,
		      const void *to, size_t ton)
{
	struct buf raw = BUF_INIT, val = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta m;
	int rc, exists;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_HASH, &raw, &m);
	if (!rc)
		rc = field_get(ks, k, m.version, from, fromn, &val);
	if (rc)
		goto out;
	if (fromn == ton && (!fromn || memcmp(from, to, fromn) == 0))
		goto out; /* onto itself: nothing to do */
	exists = field_exists(ks, k, m.version, to, ton);
	if (exists < 0) {
		rc = exists;
		goto out;
	}
	batch_del_field(ks, b, k, m.version, from, fromn, &rc);
	batch_put_field(ks, b, k, m.version, to, ton, val.data, val.len, &rc);
	/* Replacing `to` removes one field; size stays >= 1. */
	if (!rc && exists) {
		m.size--;
		rc = ks_batch_put_meta(ks, b, k, &m, m.tail, m.tail_len);
	}
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&val);
	return rc;
}

int hash_move_field(struct keyspace *ks, const struct ks_key *src, const void *f, size_t fn,
		    const struct ks_key *dst, const void *t, size_t tn, unsigned flags)
{
	struct buf sraw = BUF_INIT, draw = BUF_INIT, val = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta sm, dm;
	bool fresh = false;
	int rc, exists = 0;

	if (key_eq(src, dst))
		return hash_rename_field(ks, src, f, fn, t, tn);
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock2(ks, src, dst);
	rc = ks_meta_get(ks, src, KV_TYPE_HASH, &sraw, &sm);
	if (!rc)
		rc = field_get(ks, src, sm.version, f, fn, &val);
	if (rc)
		goto out;
	rc = ks_meta_get(ks, dst, KV_TYPE_HASH, &draw, &dm);
	if (rc == -ENOENT) {
		ks_meta_new(ks, &dm, KV_TYPE_HASH);
		fresh = true;
		rc = 0;
	}
	if (rc)
		goto out;
	if (!fresh) {
		exists = field_exists(ks, dst, dm.version, t, tn);
		if (exists < 0) {
			rc = exists;
			goto out;
		}
	}
	batch_del_field(ks, b, src, sm.version, f, fn, &rc);
	if (!rc)
		rc = batch_shrink(ks, b, src, &sm, flags);
	batch_put_field(ks, b, dst, dm.version, t, tn, val.data, val.len, &rc);
	if (!rc && !exists) {
		dm.size++;
		rc = ks_batch_put_meta(ks, b, dst, &dm, dm.tail, dm.tail_len);
	}
	if (!rc && fresh)
		rc = ks_batch_empty_del(ks, b, dst);
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock2(ks, src, dst);
	store_batch_free(b);
	buf_release(&sraw);
	buf_release(&draw);
	buf_release(&val);
	return rc;
}

/* ---- Iteration ----------------------------------------------------- */

/* A hash iterator is the keyspace's sub-key iterator (values are the
 * field values). */
struct hash_iter *hash_iter_new(struct keyspace *ks, const struct ks_key *k, const void *after,
				size_t alen, int *err)
{
	return (struct hash_iter *)ks_sub_iter_new(ks, k, KV_TYPE_HASH, after, alen, err);
}

int hash_iter_next(struct hash_iter *it, const char **f, size_t *fn, const char **v, size_t *vn)
{
	return ks_sub_iter_next((struct ks_sub_iter *)it, f, fn, v, vn);
}

void hash_iter_free(struct hash_iter *it)
{
	ks_sub_iter_free((struct ks_sub_iter *)it);
}
