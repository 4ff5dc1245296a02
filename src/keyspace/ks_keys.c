/*
 * ks_keys: the generic key verbs, on ks_txn like every write: DEL,
 * RENAME, PEXPIREAT, and the empty collections kvfs remembers (mkdir of a
 * key, rmdir of an empty one, a type chosen before the first entry).
 * Layer: keyspace (keyspace.h, ks_int.h, ks_txn.h, ks_attr.h, store,
 * encoding, util).
 */
#include "keyspace/keyspace.h"

#include "keyspace/ks_attr.h"
#include "keyspace/ks_int.h"
#include "keyspace/ks_tsindex.h"
#include "keyspace/ks_txn.h"

#include <errno.h>

/* Begin a transaction on k for a verb that writes reserved records
 * itself: its batch (NULL on ENOMEM) and k's tracked state. */
static struct store_batch *begin_one(struct ks_txn *tx, struct keyspace *ks, const struct ks_key *k,
				     struct ks_track **w)
{
	ks_txn_begin(tx, ks, k);
	*w = ks_txn_track(tx, k);
	return ks_txn_batch(tx);
}

int ks_del(struct keyspace *ks, const struct ks_key *k)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	enum kv_type t;
	struct ks_txn tx;
	bool live, empty;

	struct ks_track *w;
	struct store_batch *b = begin_one(&tx, ks, k, &w);
	if (!b)
		return ks_txn_end(&tx, -ENOMEM);
	int rc = ks_track_meta_get(ks, w, k, KV_TYPE_NONE, &raw, &m);
	/* A corrupt record can be deleted too: that is how it gets repaired. */
	live = rc == 0 || rc == -EUCLEAN;
	if (rc && !live && rc != -ENOENT)
		goto out;
	rc = ks_empty_get(ks, w, k, &t, NULL);
	empty = rc == 0 || rc == -EUCLEAN;
	if (rc && !empty && rc != -ENOENT)
		goto out;
	if (!live && !empty) {
		rc = -ENOENT;
		goto out;
	}
	rc = 0;
	if (live)
		rc = ks_track_del_meta(ks, b, w, k);
	if (!rc && empty)
		rc = ks_track_empty_del(ks, b, w, k);
	if (!rc)
		rc = ks_attr_batch_drop_key(ks, b, k);
	if (!rc)
		rc = ks_txn_commit(&tx);
out:
	buf_release(&raw);
	return ks_txn_end(&tx, rc);
}

/*
 * NEEDSWORK: like Kvrocks, a rename builds one batch holding every
 * sub-key, so renaming a huge collection needs memory in proportion.
 *
 * Copy every sub-key of `from`'s version `version` in column family cf to
 * `to` (same version, as Kvrocks's RENAME), and drop the source range with
 * one range tombstone: the source is gone after the rename, and a later
 * key of the same name and version must not see stale sub-keys.
 */
static int rename_cf(struct keyspace *ks, struct store_batch *b, enum store_cf cf,
		     const struct ks_key *from, const struct ks_key *to, uint64_t version)
{
	struct buf prefix = BUF_INIT, upper = BUF_INIT, nk = BUF_INIT;
	struct store_iter *it = NULL;
	int rc = ks_sub_key(ks, from, version, NULL, 0, &prefix);
	if (rc)
		goto out;
	it = ks_prefix_iter(ks, cf, &prefix);
	if (!it) {
		rc = -ENOMEM;
		goto out;
	}
	for (store_iter_seek(it, prefix.data, prefix.len); store_iter_valid(it);
	     store_iter_next(it)) {
		size_t kn, vn;
		const char *key = store_iter_key(it, &kn);
		const void *val = store_iter_value(it, &vn);
		rc = ks_sub_key(ks, to, version, key + prefix.len, kn - prefix.len, &nk);
		if (rc)
			goto out;
		store_batch_put(b, cf, nk.data, nk.len, val, vn);
	}
	rc = store_iter_status(it);
	if (rc)
		goto out;
	rc = buf_set(&upper, prefix.data, prefix.len);
	if (!rc && enc_prefix_successor(&upper))
		store_batch_delete_range(b, cf, prefix.data, prefix.len, upper.data, upper.len);
out:
	store_iter_free(it);
	buf_release(&prefix);
	buf_release(&upper);
	buf_release(&nk);
	return rc;
}

/* The column families that hold a type's sub-keys. */
static int sub_cfs(enum kv_type t, enum store_cf cfs[2])
{
	if (enc_type_is_inline(t))
		return 0;
	if (t == KV_TYPE_STREAM) {
		cfs[0] = STORE_CF_STREAM;
		return 1;
	}
	cfs[0] = STORE_CF_DEFAULT;
	if (t == KV_TYPE_ZSET) {
		cfs[1] = STORE_CF_ZSET_SCORE;
		return 2;
	}
	return 1;
}

int ks_rename(struct keyspace *ks, const struct ks_key *from, const struct ks_key *to)
{
	struct buf raw = BUF_INIT, key = BUF_INIT;
	struct enc_meta m;
	enum store_cf cfs[2];
	enum kv_type t;
	struct ks_txn tx;
	int ncf;

	if (ks_key_eq(from, to)) {
		struct ks_info info;
		return ks_lookup(ks, from, &info);
	}
	/* A time series with labels moves its label index records too,
	 * which needs a complete index (made without our locks held). */
	if (ks_tsindex_has_labels(ks, from)) {
		int prc = ks_tsindex_prepare(ks);
		if (prc)
			return prc;
	}
	ks_txn_begin2(&tx, ks, from, to);
	struct store_batch *b = ks_txn_batch(&tx);
	struct ks_track *wf = ks_txn_track(&tx, from), *wt = ks_txn_track(&tx, to);
	if (!b)
		return ks_txn_end(&tx, -ENOMEM);
	int rc = ks_track_meta_get(ks, wf, from, KV_TYPE_NONE, &raw, &m);
	if (rc == -ENOENT) {
		/* An empty collection moves as its record, pending expiry and
		 * attributes included. */
		uint64_t exp = 0;
		rc = ks_empty_get(ks, wf, from, &t, &exp);
		if (!rc)
			rc = ks_track_empty_del(ks, b, wf, from);
		if (!rc)
			rc = ks_track_del_meta(ks, b, wt, to);
		if (!rc)
			rc = ks_track_empty_del(ks, b, wt, to);
		if (!rc)
			rc = ks_empty_put(ks, b, wt, to, t, exp);
		if (!rc)
			rc = ks_attr_batch_rename(ks, b, from, to, 0);
		goto write;
	}
	if (rc)
		goto out;
	ncf = sub_cfs(m.type, cfs);
	if (m.type == KV_TYPE_TIMESERIES)
		rc = ks_tsindex_rename(ks, b, from, to, m.version);
	for (int i = 0; i < ncf && !rc; i++)
		rc = rename_cf(ks, b, cfs[i], from, to, m.version);
	if (!rc)
		rc = ks_track_del_meta(ks, b, wf, from);
	if (!rc)
		rc = ks_track_empty_del(ks, b, wf, from);
	if (!rc)
		rc = ks_track_empty_del(ks, b, wt, to);
	if (!rc)
		rc = ks_attr_batch_rename(ks, b, from, to,
					  enc_type_is_inline(m.type) ? 0 : m.version);
	/* The metadata record moves byte for byte: same version, expiry and
	 * encoding (v0 stays v0). It replaces whatever `to` was. */
	if (!rc)
		rc = ks_meta_key(ks, to, &key);
	if (!rc)
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, raw.data, raw.len);
write:
	/* The target's namespace gains a name (the source's loses one: the
	 * commit sees that key go). */
	if (!rc && !ks_is_reserved_ns(to->ns, to->nslen))
		rc = ks_attr_batch_ns_touch(b, to->ns, to->nslen);
	if (!rc)
		rc = ks_txn_commit(&tx);
out:
	buf_release(&raw);
	buf_release(&key);
	return ks_txn_end(&tx, rc);
}

int ks_expire(struct keyspace *ks, const struct ks_key *k, uint64_t expire_ms)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	struct ks_txn tx;

	struct ks_track *w;
	struct store_batch *b = begin_one(&tx, ks, k, &w);
	if (!b)
		return ks_txn_end(&tx, -ENOMEM);
	int rc = ks_track_meta_get(ks, w, k, KV_TYPE_NONE, &raw, &m);
	if (rc == -ENOENT) {
		/* An empty collection keeps the expiry pending in its record
		 * until its first entry; one in the past removes it. */
		enum kv_type t;
		rc = ks_empty_get(ks, w, k, &t, NULL);
		if (!rc && expire_ms != 0 && expire_ms <= now_ms()) {
			rc = ks_track_empty_del(ks, b, w, k);
			if (!rc)
				rc = ks_attr_batch_drop_key(ks, b, k);
		} else if (!rc) {
			rc = ks_empty_put(ks, b, w, k, t, expire_ms);
		}
		if (!rc)
			rc = ks_txn_commit(&tx);
		goto out;
	}
	if (rc)
		goto out;
	if (expire_ms != 0 && expire_ms <= now_ms()) {
		/* A time in the past deletes the key, as Redis does. */
		rc = ks_track_del_meta(ks, b, w, k);
	} else {
		/* Everything else stays, including the v0/v1 encoding. */
		m.expire_ms = expire_ms;
		rc = ks_track_put_meta(ks, b, w, k, &m, m.tail, m.tail_len);
	}
	if (!rc)
		rc = ks_txn_commit(&tx);
out:
	buf_release(&raw);
	return ks_txn_end(&tx, rc);
}

/* ---- Empty collections --------------------------------------------- */

/* Is k live (0 = no, 1 = yes, <0 error)? */
static int key_live(struct keyspace *ks, struct ks_track *w, const struct ks_key *k)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_track_meta_get(ks, w, k, KV_TYPE_NONE, &raw, &m);
	buf_release(&raw);
	if (rc == -ENOENT)
		return 0;
	return rc == 0 || rc == -EUCLEAN ? 1 : rc;
}

/* The shared body of create/retype/remove: `want_record` says whether
 * the record must exist (retype, remove) or must not (create). */
static int empty_change(struct keyspace *ks, const struct ks_key *k, enum kv_type t,
			bool want_record, bool remove)
{
	enum kv_type cur;
	struct ks_txn tx;

	struct ks_track *w;
	struct store_batch *b = begin_one(&tx, ks, k, &w);
	if (!b)
		return ks_txn_end(&tx, -ENOMEM);
	int rc = key_live(ks, w, k);
	if (rc < 0)
		goto out;
	if (rc == 1) {
		rc = want_record ? -ENOTEMPTY : -EEXIST;
		goto out;
	}
	uint64_t exp = 0;
	rc = ks_empty_get(ks, w, k, &cur, &exp);
	if (rc == -EUCLEAN)
		rc = 0; /* a broken record can be replaced or removed */
	if (rc && rc != -ENOENT)
		goto out;
	if (want_record && rc == -ENOENT)
		goto out;
	if (!want_record && rc == 0) {
		rc = -EEXIST;
		goto out;
	}
	if (remove) {
		rc = ks_track_empty_del(ks, b, w, k);
		if (!rc)
			rc = ks_attr_batch_drop_key(ks, b, k);
	} else {
		/* A new empty collection starts without attributes of an old
		 * key of that name; a retyped one keeps its pending expiry. */
		rc = ks_empty_put(ks, b, w, k, t, want_record ? exp : 0);
		if (!rc && !want_record)
			rc = ks_attr_batch_drop_key(ks, b, k);
	}
	if (!rc)
		rc = ks_txn_commit(&tx);
out:
	return ks_txn_end(&tx, rc);
}

int ks_empty_create(struct keyspace *ks, const struct ks_key *k, enum kv_type t)
{
	if (!ks_type_can_be_empty(t))
		return -EINVAL;
	return empty_change(ks, k, t, false, false);
}

int ks_empty_retype(struct keyspace *ks, const struct ks_key *k, enum kv_type t)
{
	if (!ks_type_can_be_empty(t))
		return -EINVAL;
	return empty_change(ks, k, t, true, false);
}

int ks_empty_remove(struct keyspace *ks, const struct ks_key *k)
{
	return empty_change(ks, k, KV_TYPE_NONE, true, true);
}
