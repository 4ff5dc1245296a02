/*
 * ks_tsindex: Kvrocks's time-series label index, kept complete (see the
 * header for what that means and how): the marker, the first completion
 * (a walk over every time series), the reads by label, and what a rename
 * changes in it. The record layout is encoding.h's
 * (enc_ts_label_index_key); a label is the time series' sub-key 01 | name
 * -> value (kvrocks-encoding.md 6.13).
 * Layer: keyspace (keyspace.h, ks_int.h, ks_txn.h, store, encoding, util).
 */
#include "keyspace/ks_tsindex.h"

#include "keyspace/ks_int.h"
#include "keyspace/ks_txn.h"

#include <errno.h>

#define TS_SUB_LABEL 0x01 /* a time series' label sub-key (t_timeseries_int.h) */

enum { TSI_UNKNOWN = 0, TSI_NO, TSI_YES };

static int marker_key(struct buf *out)
{
	return ks_res_prefix(out, RES_TSINDEX, NULL, 0, false);
}

static bool marker_present(struct keyspace *ks)
{
	struct buf key = BUF_INIT, raw = BUF_INIT;
	struct enc_meta m;
	bool yes = marker_key(&key) == 0 && ks_res_get(ks, &key, &raw, &m) == 0;
	buf_release(&key);
	buf_release(&raw);
	return yes;
}

bool ks_tsindex_ready(struct keyspace *ks)
{
	int st = atomic_load(&ks->tsindex);
	if (st != TSI_UNKNOWN)
		return st == TSI_YES;
	bool yes = store_has_cf(ks->st, STORE_CF_INDEX) && marker_present(ks);
	/* A follower's database may get it from its primary later. */
	if (yes || !store_is_follower(ks->st))
		atomic_store(&ks->tsindex, yes ? TSI_YES : TSI_NO);
	return yes;
}

/* The label sub-keys of the current version of k (a time series), from
 * the first: NULL with *err (-KV_EWRONGTYPE, ...) or an iterator. */
static struct ks_sub_iter *labels_iter(struct keyspace *ks, const struct ks_key *k, int *err)
{
	static const char first = TS_SUB_LABEL;
	struct ks_sub_iter_opts o = {.after = &first, .alen = 1, .inclusive = true};
	*err = 0;
	return ks_sub_iter_open(ks, k, KV_TYPE_TIMESERIES, &o, err);
}

bool ks_tsindex_has_labels(struct keyspace *ks, const struct ks_key *k)
{
	const char *sub, *v;
	size_t sn, vn;
	int err;
	struct ks_sub_iter *it = labels_iter(ks, k, &err);
	if (!it)
		return false;
	bool yes = ks_sub_iter_next(it, &sub, &sn, &v, &vn) == 1 && sn > 1 &&
		   (uint8_t)sub[0] == TS_SUB_LABEL;
	ks_sub_iter_free(it);
	return yes;
}

/* Index the labels of one key, if it is a live time series, under its
 * lock; *n counts the records. */
static int index_key(struct keyspace *ks, const struct ks_key *k, size_t *n)
{
	struct ks_txn t;
	struct enc_meta *m;
	const char *sub, *v;
	size_t sn, vn, here = 0;
	int err;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_TIMESERIES, &m);
	if (rc == -ENOENT || rc == -KV_EWRONGTYPE || rc == -EUCLEAN)
		return ks_txn_end(&t, 0); /* gone or changed meanwhile: not one */
	struct ks_sub_iter *it = rc ? NULL : labels_iter(ks, k, &err);
	if (!rc && !it)
		rc = err ? err : -ENOMEM;
	while (!rc && (rc = ks_sub_iter_next(it, &sub, &sn, &v, &vn)) == 1) {
		rc = 0;
		if (!sn || (uint8_t)sub[0] != TS_SUB_LABEL)
			break;
		ks_txn_ts_index(&t, k, sub + 1, sn - 1, v, vn, true);
		here++;
	}
	ks_sub_iter_free(it);
	if (rc == 1)
		rc = 0;
	if (!rc && here)
		rc = ks_txn_commit(&t);
	if (!rc)
		*n += here;
	return ks_txn_end(&t, rc);
}

/* Index every label of every time series of every namespace. */
static int backfill(struct keyspace *ks, size_t *nrec, size_t *nser)
{
	struct ks_ns_iter *nit = ks_ns_iter_new(ks, NULL, 0);
	struct buf nsb = BUF_INIT;
	const char *ns, *key;
	size_t nslen, klen;
	struct ks_info info;
	int rc;
	if (!nit)
		return -ENOMEM;
	while ((rc = ks_ns_iter_next(nit, &ns, &nslen)) == 1) {
		/* ns is borrowed until the next namespace; keys need it longer
		 * than their own iterator's step. */
		if ((rc = buf_set(&nsb, ns, nslen)) != 0)
			break;
		struct ks_key_iter *kit = ks_key_iter_new(ks, nsb.data, nsb.len, NULL, 0);
		if (!kit) {
			rc = -ENOMEM;
			break;
		}
		while ((rc = ks_key_iter_next(kit, &key, &klen, &info)) == 1) {
			if (info.type != KV_TYPE_TIMESERIES || info.empty)
				continue;
			struct ks_key k = {nsb.data, nsb.len, key, klen, NULL, NULL};
			size_t before = *nrec;
			if ((rc = index_key(ks, &k, nrec)) != 0)
				break;
			*nser += *nrec > before;
		}
		ks_key_iter_free(kit);
		if (rc)
			break;
	}
	ks_ns_iter_free(nit);
	buf_release(&nsb);
	return rc;
}

static int marker_write(struct keyspace *ks)
{
	struct buf key = BUF_INIT, val = BUF_INIT;
	struct store_batch *b = store_batch_new(ks->st);
	int rc = b ? marker_key(&key) : -ENOMEM;
	if (!rc)
		rc = ks_res_value(&val, "", 0);
	if (!rc) {
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
		rc = store_write(ks->st, b, false);
	}
	store_batch_free(b);
	buf_release(&key);
	buf_release(&val);
	return rc;
}

int ks_tsindex_prepare(struct keyspace *ks)
{
	size_t nrec = 0, nser = 0;
	int rc = 0;
	if (ks_tsindex_ready(ks))
		return 0;
	if (store_is_read_only(ks->st))
		return -EROFS;
	pthread_mutex_lock(&ks->tsindex_lock);
	if (atomic_load(&ks->tsindex) != TSI_YES) {
		bool made = !store_has_cf(ks->st, STORE_CF_INDEX);
		rc = store_cf_create(ks->st, STORE_CF_INDEX);
		if (!rc)
			rc = backfill(ks, &nrec, &nser);
		if (!rc)
			rc = marker_write(ks);
		if (!rc) {
			atomic_store(&ks->tsindex, TSI_YES);
			LOG_INFO("time-series label index %s: %zu records of %zu series written",
				 made ? "made" : "completed", nrec, nser);
		}
	}
	pthread_mutex_unlock(&ks->tsindex_lock);
	return rc;
}

int ks_tsindex_keys(struct keyspace *ks, const char *ns, size_t nslen, const void *name, size_t nn,
		    const void *value, size_t vn,
		    int (*cb)(void *arg, const char *key, size_t klen), void *arg)
{
	struct buf pfx = BUF_INIT;
	struct store_iter *it = NULL;
	if (!store_has_cf(ks->st, STORE_CF_INDEX))
		return -ENOENT;
	int rc = enc_ts_label_index_key(&pfx, ns, nslen, name, nn, value ? value : "", vn, NULL, 0);
	if (!rc && !(it = ks_prefix_iter(ks, STORE_CF_INDEX, &pfx)))
		rc = -ENOMEM;
	if (!rc)
		store_iter_seek(it, pfx.data, pfx.len);
	while (!rc && store_iter_valid(it)) {
		size_t kn;
		const char *k = store_iter_key(it, &kn);
		rc = cb(arg, k + pfx.len, kn - pfx.len);
		if (!rc)
			store_iter_next(it);
	}
	if (!rc && it)
		rc = store_iter_status(it);
	store_iter_free(it);
	buf_release(&pfx);
	return rc;
}

int ks_tsindex_rename(struct keyspace *ks, struct store_batch *b, const struct ks_key *from,
		      const struct ks_key *to, uint64_t version)
{
	struct buf pfx = BUF_INIT, ik = BUF_INIT;
	struct store_iter *it = NULL;
	static const char lab = TS_SUB_LABEL;
	if (!ks_tsindex_ready(ks))
		return 0;
	int rc = ks_sub_key(ks, from, version, &lab, 1, &pfx);
	if (!rc && !(it = ks_prefix_iter(ks, STORE_CF_DEFAULT, &pfx)))
		rc = -ENOMEM;
	if (!rc)
		store_iter_seek(it, pfx.data, pfx.len);
	for (; !rc && store_iter_valid(it); store_iter_next(it)) {
		size_t kn, vn;
		const char *k = store_iter_key(it, &kn);
		const char *v = store_iter_value(it, &vn);
		const char *name = k + pfx.len;
		size_t nn = kn - pfx.len;
		rc = enc_ts_label_index_key(&ik, from->ns, from->nslen, name, nn, v, vn, from->key,
					    from->klen);
		if (!rc)
			store_batch_delete(b, STORE_CF_INDEX, ik.data, ik.len);
		if (!rc)
			rc = enc_ts_label_index_key(&ik, to->ns, to->nslen, name, nn, v, vn,
						    to->key, to->klen);
		if (!rc)
			store_batch_put(b, STORE_CF_INDEX, ik.data, ik.len, "", 0);
	}
	if (!rc && it)
		rc = store_iter_status(it);
	store_iter_free(it);
	buf_release(&pfx);
	buf_release(&ik);
	return rc;
}
