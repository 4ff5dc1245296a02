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
#include "types/t_hash.h"

#include "types/t_string.h" /* the counters' number rules */

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <stdlib.h>

/* Largest value of one field: Redis's proto-max-bulk-len, as STRING_MAX. */
#define HASH_VALUE_MAX (512ull << 20)

/* NEEDSWORK: hashes written with Kvrocks's hash field expiration (a tail
 * after `size`, values prefixed with an expiry in mode 1) are not
 * understood; their tail is carried along unchanged. */

/* Read field f of version `version`. 0 and out, -ENOENT, -EIO. */
static int field_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, const void *f,
		     size_t fn, struct buf *out)
{
	return ks_sub_get(ks, k, version, STORE_CF_DEFAULT, f, fn, out);
}

/* Length of field f of version `version`, without copying its value.
 * 0, -ENOENT, -EIO. */
static int field_len(struct keyspace *ks, const struct ks_key *k, uint64_t version, const void *f,
		     size_t fn, uint64_t *len)
{
	return ks_sub_len(ks, k, version, STORE_CF_DEFAULT, f, fn, len);
}

int hash_get(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, struct buf *out)
{
	uint64_t version;
	int rc = ks_version_get(ks, k, KV_TYPE_HASH, &version);
	return rc ? rc : field_get(ks, k, version, f, fn, out);
}

int hash_set(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, const void *v,
	     size_t vn, bool *created)
{
	if (vn > HASH_VALUE_MAX)
		return -EFBIG;
	return ks_member_put(ks, k, KV_TYPE_HASH, f, fn, v, vn, 0, created);
}

int hash_setnx(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, const void *v,
	       size_t vn)
{
	if (vn > HASH_VALUE_MAX)
		return -EFBIG;
	return ks_member_put(ks, k, KV_TYPE_HASH, f, fn, v, vn, KS_MEMBER_NX, NULL);
}

int hash_del(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, unsigned flags)
{
	return ks_member_del(ks, k, KV_TYPE_HASH, f, fn,
			     (flags & HASH_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
}

int hash_len(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	return ks_card(ks, k, KV_TYPE_HASH, n);
}

int hash_exists(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn)
{
	return ks_sub_has(ks, k, KV_TYPE_HASH, f, fn);
}

int hash_strlen(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn,
		uint64_t *len)
{
	uint64_t version;
	int rc = ks_version_get(ks, k, KV_TYPE_HASH, &version);
	return rc ? rc : field_len(ks, k, version, f, fn, len);
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
	return ks_member_rename(ks, k, KV_TYPE_HASH, from, fromn, to, ton);
}

int hash_move_field(struct keyspace *ks, const struct ks_key *src, const void *f, size_t fn,
		    const struct ks_key *dst, const void *t, size_t tn, unsigned flags)
{
	struct buf val = BUF_INIT;
	struct ks_txn tx;
	struct enc_meta *sm, *dm;
	int exists = 0;

	if (ks_key_eq(src, dst))
		return hash_rename_field(ks, src, f, fn, t, tn);
	ks_txn_begin2(&tx, ks, src, dst);
	int rc = ks_txn_get(&tx, src, KV_TYPE_HASH, &sm);
	if (!rc)
		rc = field_get(ks, src, sm->version, f, fn, &val);
	if (!rc)
		rc = ks_txn_open(&tx, dst, KV_TYPE_HASH, &dm);
	if (!rc && !ks_txn_is_new(&tx, dst))
		rc = exists = ks_sub_exists(ks, dst, dm->version, STORE_CF_DEFAULT, t, tn);
	if (rc < 0)
		goto out;
	ks_txn_sub_del(&tx, src, STORE_CF_DEFAULT, f, fn);
	ks_txn_resize(&tx, src, -1, (flags & HASH_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
	ks_txn_sub_put(&tx, dst, STORE_CF_DEFAULT, t, tn, val.data, val.len);
	if (!exists)
		ks_txn_resize(&tx, dst, +1, 0);
	rc = ks_txn_commit(&tx);
out:
	buf_release(&val);
	return ks_txn_end(&tx, rc);
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

/* The body of HINCRBY and HINCRBYFLOAT (redis_hash.cc's IncrBy and
 * IncrByFloat): one transaction on k. */
static int hash_incr(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, bool fl,
		     int64_t by, double byf, int64_t *out, double *outf)
{
	struct buf v = BUF_INIT, text = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	int ex = -ENOENT;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_HASH, &m);
	if (!rc && !ks_txn_is_new(&t, k)) {
		ex = field_get(ks, k, m->version, f, fn, &v);
		if (ex && ex != -ENOENT)
			rc = ex;
	}
	/* A field that exists must hold a number: an empty one does not
	 * (unlike an empty string key, which counts as 0). */
	if (!rc)
		rc = string_num_incr(ex	      ? NULL
				     : v.data ? v.data
					      : "",
				     v.len, fl, by, byf, &text, out, outf);
	if (!rc) {
		ks_txn_sub_put(&t, k, STORE_CF_DEFAULT, f, fn, text.data, text.len);
		if (ex)
			ks_txn_resize(&t, k, +1, 0);
		rc = ks_txn_commit(&t);
	}
	buf_release(&v);
	buf_release(&text);
	return ks_txn_end(&t, rc);
}

int hash_incrby(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn, int64_t by,
		int64_t *out)
{
	return hash_incr(ks, k, f, fn, false, by, 0, out, NULL);
}

int hash_incrbyfloat(struct keyspace *ks, const struct ks_key *k, const void *f, size_t fn,
		     double by, double *out)
{
	return hash_incr(ks, k, f, fn, true, 0, by, NULL, out);
}
