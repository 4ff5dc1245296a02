/*
 * ks_txn: the write transaction of every type verb (include/keyspace/ks_txn.h):
 * lock, typed metadata lookup or creation, staged sub-key changes with a
 * sticky error, the size step, and one commit that adds what kvfs keeps
 * beside the data (empty-collection records, attributes, expiry).
 * Layer: keyspace (keyspace.h, store, encoding, util).
 */
#include "keyspace/ks_txn.h"

#include "keyspace/ks_attr.h"
#include "keyspace/ks_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Set up t for n keys, with a batch unless it only reads. false (t->rc
 * set) when it cannot hold them. */
static bool txn_init_as(struct ks_txn *t, struct keyspace *ks, size_t n, bool write)
{
	memset(t, 0, sizeof(*t));
	t->ks = ks;
	t->key = t->key_small;
	t->track = t->track_small;
	if (n > KS_TXN_SMALL) {
		t->key = calloc(n, sizeof(*t->key));
		t->track = calloc(n, sizeof(*t->track));
		if (!t->key || !t->track) {
			free(t->key);
			free(t->track);
			t->key = t->key_small;
			t->track = t->track_small;
			t->rc = -ENOMEM;
			return false;
		}
	}
	if (!write) {
		t->rc = -EINVAL; /* sticky: a read transaction writes nothing */
		return true;
	}
	t->b = store_batch_new(ks_store(ks));
	if (!t->b)
		t->rc = -ENOMEM;
	return true;
}

static bool txn_init(struct ks_txn *t, struct keyspace *ks, size_t n)
{
	return txn_init_as(t, ks, n, true);
}

static void txn_add(struct ks_txn *t, const struct ks_key *k)
{
	struct ks_txn_key *x = &t->key[t->n];
	memset(x, 0, sizeof(*x));
	x->k = k;
	buf_init(&x->raw);
	ks_track_init(&t->track[t->n], k);
	t->n++;
}

void ks_txn_begin(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k)
{
	txn_init(t, ks, 1);
	txn_add(t, k);
	ks_lock_pair(ks, k, NULL);
	t->locked = true;
}

void ks_txn_begin_read(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k)
{
	txn_init_as(t, ks, 1, false);
	txn_add(t, k);
	ks_lock_pair(ks, k, NULL);
	t->locked = true;
}

void ks_txn_begin2(struct ks_txn *t, struct keyspace *ks, const struct ks_key *a,
		   const struct ks_key *b)
{
	txn_init(t, ks, 2);
	txn_add(t, a);
	if (!ks_key_eq(a, b))
		txn_add(t, b);
	ks_lock_pair(ks, a, t->n == 2 ? b : NULL);
	t->locked = true;
}

void ks_txn_beginv(struct ks_txn *t, struct keyspace *ks, const struct ks_key *keys, size_t n)
{
	if (n > KS_LOCKV_MAX) {
		txn_init(t, ks, 0);
		t->rc = -E2BIG;
		return;
	}
	if (!txn_init(t, ks, n))
		return;
	for (size_t i = 0; i < n; i++)
		txn_add(t, &keys[i]);
	t->keys = keys;
	ks_lockv(ks, keys, n);
	t->locked = true;
}

/* The transaction's entry of k (by pointer, else by name), or NULL. */
static struct ks_txn_key *txn_find(struct ks_txn *t, const struct ks_key *k, size_t *at)
{
	for (size_t i = 0; i < t->n; i++)
		if (t->key[i].k == k) {
			*at = i;
			return &t->key[i];
		}
	for (size_t i = 0; i < t->n; i++)
		if (ks_key_eq(t->key[i].k, k)) {
			*at = i;
			return &t->key[i];
		}
	return NULL;
}

/* The entry of k whose metadata was got or opened; else a sticky error
 * (a verb that stages for a key it never read is a bug). */
static struct ks_txn_key *txn_ready(struct ks_txn *t, const struct ks_key *k)
{
	size_t at;
	struct ks_txn_key *x = txn_find(t, k, &at);
	if (!x || !x->read) {
		LOG_ERR("ks_txn: a change staged for a key the transaction did not read");
		ks_txn_fail(t, -EINVAL);
		return NULL;
	}
	return x;
}

/* ks_txn_get, or with vlen ks_txn_head. */
static int txn_read(struct ks_txn *t, const struct ks_key *k, enum kv_type want,
		    struct enc_meta **m, uint64_t *vlen)
{
	size_t at;
	struct ks_txn_key *x = txn_find(t, k, &at);
	*m = NULL;
	if (!x) /* a key it did not lock, or a begin that failed */
		return t->rc && t->rc != -EINVAL ? t->rc : -EINVAL;
	buf_reset(&x->raw);
	x->read = x->cut = false;
	int rc = vlen ? ks_track_meta_head(t->ks, &t->track[at], k, want, &x->raw, &x->m, vlen)
		      : ks_track_meta_get(t->ks, &t->track[at], k, want, &x->raw, &x->m);
	x->found = rc == 0 || rc == -KV_EWRONGTYPE || rc == -EUCLEAN;
	if (rc)
		return rc;
	x->read = true;
	x->cut = vlen && *vlen > x->raw.len;
	*m = &x->m;
	return 0;
}

int ks_txn_get(struct ks_txn *t, const struct ks_key *k, enum kv_type want, struct enc_meta **m)
{
	return txn_read(t, k, want, m, NULL);
}

int ks_txn_head(struct ks_txn *t, const struct ks_key *k, enum kv_type want, struct enc_meta **m,
		uint64_t *vlen)
{
	return txn_read(t, k, want, m, vlen);
}

int ks_txn_lookup(struct ks_txn *t, const struct ks_key *k, struct ks_info *info)
{
	size_t at;
	if (!txn_find(t, k, &at))
		return -EINVAL;
	int rc = ks_lookup(t->ks, k, info);
	/* A remembered empty collection is the key's existence before the
	 * write (for its namespace's times). */
	if (!rc && info->empty)
		t->track[at].empty_seen = true;
	return rc;
}

int ks_txn_open(struct ks_txn *t, const struct ks_key *k, enum kv_type want, struct enc_meta **m)
{
	int rc = ks_txn_get(t, k, want, m);
	if (rc != -ENOENT)
		return rc;
	size_t at;
	struct ks_txn_key *x = txn_find(t, k, &at);
	ks_meta_new(t->ks, &x->m, want);
	x->read = x->fresh = true;
	*m = &x->m;
	return 0;
}

int ks_txn_renew(struct ks_txn *t, const struct ks_key *k, enum kv_type type, struct enc_meta **m)
{
	size_t at;
	struct ks_txn_key *x = txn_find(t, k, &at);
	*m = NULL;
	if (!x) {
		ks_txn_fail(t, -EINVAL);
		return -EINVAL;
	}
	ks_meta_new(t->ks, &x->m, type);
	x->fresh = !x->found;
	x->read = x->dirty = x->changed = true;
	x->gone = x->cut = x->tail_set = x->drop = x->noexp = false;
	x->flags = 0;
	*m = &x->m;
	return 0;
}

void ks_txn_renew_no_expiry(struct ks_txn *t, const struct ks_key *k)
{
	size_t at;
	struct ks_txn_key *x = txn_find(t, k, &at);
	if (x)
		x->noexp = true;
	else
		ks_txn_fail(t, -EINVAL);
}

bool ks_txn_is_new(const struct ks_txn *t, const struct ks_key *k)
{
	size_t at;
	struct ks_txn_key *x = txn_find((struct ks_txn *)t, k, &at);
	return x && x->fresh;
}

int ks_txn_create(struct ks_txn *t, const struct ks_key *k, enum kv_type want, struct enc_meta **m)
{
	int rc = ks_txn_open(t, k, want, m);
	if (rc == -KV_EWRONGTYPE || (!rc && !ks_txn_is_new(t, k))) {
		*m = NULL;
		rc = -EEXIST;
	}
	return rc;
}

static void sub_change(struct ks_txn *t, const struct ks_key *k, enum store_cf cf, const void *sub,
		       size_t sn, const void *v, size_t vn, bool put)
{
	struct buf sk = BUF_INIT;
	struct ks_txn_key *x;
	if (t->rc || !(x = txn_ready(t, k)))
		return;
	int rc = ks_sub_key(t->ks, k, x->m.version, sub, sn, &sk);
	if (rc)
		ks_txn_fail(t, rc);
	else if (put)
		store_batch_put(t->b, cf, sk.data, sk.len, v, vn);
	else
		store_batch_delete(t->b, cf, sk.data, sk.len);
	if (!rc)
		x->changed = true;
	buf_release(&sk);
}

void ks_txn_sub_put(struct ks_txn *t, const struct ks_key *k, enum store_cf cf, const void *sub,
		    size_t sn, const void *v, size_t vn)
{
	sub_change(t, k, cf, sub, sn, v, vn, true);
}

void ks_txn_sub_del(struct ks_txn *t, const struct ks_key *k, enum store_cf cf, const void *sub,
		    size_t sn)
{
	sub_change(t, k, cf, sub, sn, NULL, 0, false);
}

void ks_txn_ts_index(struct ks_txn *t, const struct ks_key *k, const void *name, size_t nn,
		     const void *v, size_t vn, bool put)
{
	struct buf ik = BUF_INIT;
	struct store *st = ks_store(t->ks);
	if (t->rc || !txn_ready(t, k))
		return;
	int rc = 0;
	if (put)
		rc = store_cf_create(st, STORE_CF_INDEX);
	else if (!store_has_cf(st, STORE_CF_INDEX))
		return; /* no index: no record to delete */
	if (!rc)
		rc = enc_ts_label_index_key(&ik, k->ns, k->nslen, name, nn, v ? v : "", vn, k->key,
					    k->klen);
	if (rc)
		ks_txn_fail(t, rc);
	else if (put)
		store_batch_put(t->b, STORE_CF_INDEX, ik.data, ik.len, "", 0);
	else
		store_batch_delete(t->b, STORE_CF_INDEX, ik.data, ik.len);
	buf_release(&ik);
}

void ks_txn_sub_clear(struct ks_txn *t, const struct ks_key *k, enum store_cf cf)
{
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	struct ks_txn_key *x;
	if (t->rc || !(x = txn_ready(t, k)))
		return;
	int rc = ks_sub_key(t->ks, k, x->m.version, NULL, 0, &lo);
	if (!rc)
		rc = buf_set(&hi, lo.data, lo.len);
	if (!rc && !enc_prefix_successor(&hi))
		rc = -EINVAL;
	if (!rc) {
		store_batch_delete_range(t->b, cf, lo.data, lo.len, hi.data, hi.len);
		x->changed = true;
	}
	ks_txn_fail(t, rc);
	buf_release(&lo);
	buf_release(&hi);
}

void ks_txn_resize(struct ks_txn *t, const struct ks_key *k, int64_t delta, unsigned flags)
{
	struct ks_txn_key *x;
	if (t->rc || !(x = txn_ready(t, k)))
		return;
	uint64_t size = x->m.size;
	if (delta < 0) {
		/* A size smaller than what went is a count gone wrong on disk:
		 * the key goes, as its last member did. */
		uint64_t d = (uint64_t)(-(delta + 1)) + 1;
		size = size > d ? size - d : 0;
	} else if (UINT64_MAX - size < (uint64_t)delta) {
		ks_txn_fail(t, ks_corrupt(k, "size %llu cannot grow by %lld",
					  (unsigned long long)size, (long long)delta));
		return;
	} else {
		size += (uint64_t)delta;
	}
	x->m.size = size;
	x->gone = size == 0;
	x->dirty = x->changed = true;
	x->flags = flags;
}

void ks_txn_delete(struct ks_txn *t, const struct ks_key *k, unsigned flags)
{
	struct ks_txn_key *x;
	if (t->rc || !(x = txn_ready(t, k)))
		return;
	x->gone = x->dirty = x->drop = x->changed = true;
	x->tail_set = false;
	x->flags = flags;
}

void ks_txn_touch(struct ks_txn *t, const struct ks_key *k)
{
	struct ks_txn_key *x;
	if (!t->rc && (x = txn_ready(t, k)))
		x->dirty = x->changed = true;
}

void ks_txn_meta_put(struct ks_txn *t, const struct ks_key *k, const void *tail, size_t tlen)
{
	struct ks_txn_key *x;
	if (t->rc || !(x = txn_ready(t, k)))
		return;
	x->tail = tail;
	x->tail_len = tlen;
	x->tail_set = x->dirty = x->changed = true;
	x->gone = false;
}

struct store_batch *ks_txn_batch(struct ks_txn *t)
{
	return t->b;
}

struct ks_track *ks_txn_track(struct ks_txn *t, const struct ks_key *k)
{
	size_t at;
	return txn_find(t, k, &at) ? &t->track[at] : NULL;
}

void ks_txn_fail(struct ks_txn *t, int rc)
{
	if (!t->rc && rc)
		t->rc = rc;
}

/* The tracked key of k among w[0..n). */
static struct ks_track *track_find(struct ks_track *w, size_t n, const struct ks_key *k)
{
	for (size_t i = 0; i < n; i++)
		if (w[i].k == k || ks_key_eq(w[i].k, k))
			return &w[i];
	return NULL;
}

/* What a write adds to its batch for one key w of the tracked all[0..n). */
static int track_apply(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		       struct ks_track *all, size_t n)
{
	const struct ks_attr_change *c = w->attr;
	int rc = 0;
	/* A key made from nothing (not live, no empty record) starts
	 * without the records a dead key of that name may have left (expired,
	 * or deleted by someone else). */
	if (!rc && w->live && !w->was_live && !w->was_empty)
		rc = ks_attr_batch_drop_key(ks, b, w->k);
	/* A key re-made with a new version in one batch (a hash converted to
	 * a list): its own records follow it. */
	if (!rc && w->live && w->read_version && w->version != w->read_version)
		rc = ks_attr_batch_restamp(ks, b, w->k, w->read_version, w->version);
	/* A key created or removed changes its namespace directory. */
	bool before = w->was_live || w->empty_seen;
	bool after = w->live || w->empty_made || (w->empty_seen && !w->was_empty);
	if (!rc && before != after && !ks_is_reserved_ns(w->k->ns, w->k->nslen))
		rc = ks_attr_batch_ns_touch(b, w->k->ns, w->k->nslen);
	if (!rc && c)
		rc = ks_attr_batch_change(ks, b, w->k, w->version, w->live, c);
	if (!rc && c && (c->flags & KS_ATTR_MOVE) && c->from && c->entry) {
		struct ks_track *f = track_find(all, n, c->from);
		if (f)
			rc = ks_attr_batch_move(ks, b, c->from, f->version, c->fentry, c->flen,
						w->k, w->version, c->entry, c->elen);
	}
	return rc;
}

static int track_apply_all(struct keyspace *ks, struct store_batch *b, struct ks_track *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = track_apply(ks, b, &w[i], w, n);
		if (rc)
			return rc;
	}
	return 0;
}

/* What commit writes of one key's metadata (see ks_txn.h). */
static int commit_meta(struct ks_txn *t, struct ks_txn_key *x, struct ks_track *w)
{
	int rc = 0;
	if (x->gone) {
		if (!x->fresh)
			rc = ks_track_del_meta(t->ks, t->b, w, x->k);
		if (!rc && (x->flags & KS_TXN_KEEP_EMPTY))
			rc = ks_track_empty_put(t->ks, t->b, w, x->k, x->m.type);
		else if (!rc && x->fresh && x->drop)
			rc = ks_track_empty_del(t->ks, t->b, w, x->k);
		return rc;
	}
	if (!x->dirty)
		return 0;
	if (x->cut && !x->tail_set) {
		LOG_ERR("ks_txn: a record read by its head alone would be written whole");
		return -EINVAL;
	}
	if (x->fresh) {
		/* A new key replaces its empty-collection record and takes
		 * over the expiry that record was keeping for it. */
		rc = ks_track_empty_del(t->ks, t->b, w, x->k);
		if (!rc && w->pending_expire && !x->m.expire_ms && !x->noexp &&
		    !enc_type_is_inline(x->m.type))
			x->m.expire_ms = w->pending_expire;
		w->pending_expire = 0;
	}
	if (!rc)
		rc = ks_track_put_meta(t->ks, t->b, w, x->k, &x->m,
				       x->tail_set ? x->tail : x->m.tail,
				       x->tail_set ? x->tail_len : x->m.tail_len);
	return rc;
}

/* The change of a key that a verb changed without saying how: its
 * content (ks_txn.h). */
static const struct ks_attr_change content_changed = {.flags = KS_ATTR_TOUCH};

int ks_txn_commit(struct ks_txn *t)
{
	int rc = t->rc;
	for (size_t i = 0; i < t->n && !rc; i++)
		if (t->key[i].read)
			rc = commit_meta(t, &t->key[i], &t->track[i]);
	for (size_t i = 0; i < t->n && !rc; i++) {
		struct ks_track *w = &t->track[i];
		if (t->key[i].changed && !w->attr && w->live &&
		    !ks_is_reserved_ns(w->k->ns, w->k->nslen))
			w->attr = &content_changed;
	}
	if (!rc)
		rc = track_apply_all(t->ks, t->b, t->track, t->n);
	if (!rc)
		rc = store_write(ks_store(t->ks), t->b, false);
	for (size_t i = 0; i < t->n && !rc && t->locked; i++)
		ks_wait_commit(t->ks, t->key[i].k);
	return rc;
}

int ks_txn_end(struct ks_txn *t, int rc)
{
	if (t->locked) {
		if (t->keys)
			ks_unlockv(t->ks, t->keys, t->n);
		else
			ks_unlock_pair(t->ks, t->key[0].k, t->n == 2 ? t->key[1].k : NULL);
	}
	for (size_t i = 0; i < t->n; i++)
		buf_release(&t->key[i].raw);
	if (t->key != t->key_small) {
		free(t->key);
		free(t->track);
	}
	store_batch_free(t->b);
	memset(t, 0, sizeof(*t));
	return rc;
}

/* ---- Whole verbs of member collections ------------------------------- */

int ks_member_put(struct keyspace *ks, const struct ks_key *k, enum kv_type type, const void *sub,
		  size_t sn, const void *v, size_t vn, unsigned flags, bool *added)
{
	struct ks_txn t;
	struct enc_meta *m;
	int exists = 0;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, type, &m);
	if (!rc && !ks_txn_is_new(&t, k))
		rc = exists = ks_sub_exists(ks, k, m->version, STORE_CF_DEFAULT, sub, sn);
	if (rc < 0)
		return ks_txn_end(&t, rc);
	if (exists && (flags & KS_MEMBER_NX))
		return ks_txn_end(&t, -EEXIST);
	rc = 0; /* present and kept: nothing to write */
	if (!exists || !(flags & KS_MEMBER_KEEP)) {
		ks_txn_sub_put(&t, k, STORE_CF_DEFAULT, sub, sn, v, vn);
		if (!exists)
			ks_txn_resize(&t, k, +1, 0);
		rc = ks_txn_commit(&t);
	}
	if (!rc && added)
		*added = !exists;
	return ks_txn_end(&t, rc);
}

int ks_member_del(struct keyspace *ks, const struct ks_key *k, enum kv_type type, const void *sub,
		  size_t sn, unsigned flags)
{
	struct ks_txn t;
	struct enc_meta *m;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, type, &m);
	if (!rc)
		rc = ks_sub_exists(ks, k, m->version, STORE_CF_DEFAULT, sub, sn);
	if (rc <= 0)
		return ks_txn_end(&t, rc ? rc : -ENOENT);
	ks_txn_sub_del(&t, k, STORE_CF_DEFAULT, sub, sn);
	ks_txn_resize(&t, k, -1, flags);
	return ks_txn_end(&t, ks_txn_commit(&t));
}

int ks_member_rename(struct keyspace *ks, const struct ks_key *k, enum kv_type type,
		     const void *from, size_t fn, const void *to, size_t tn)
{
	struct buf val = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, type, &m);
	if (!rc)
		rc = ks_sub_get(ks, k, m->version, STORE_CF_DEFAULT, from, fn, &val);
	if (rc || (fn == tn && (!fn || memcmp(from, to, fn) == 0)))
		goto out; /* an error, or onto itself: nothing to do */
	int exists = ks_sub_exists(ks, k, m->version, STORE_CF_DEFAULT, to, tn);
	if (exists < 0) {
		rc = exists;
		goto out;
	}
	ks_txn_sub_del(&t, k, STORE_CF_DEFAULT, from, fn);
	ks_txn_sub_put(&t, k, STORE_CF_DEFAULT, to, tn, val.data, val.len);
	if (exists)
		ks_txn_resize(&t, k, -1, 0); /* `to` is replaced: size stays >= 1 */
	rc = ks_txn_commit(&t);
out:
	buf_release(&val);
	return ks_txn_end(&t, rc);
}
