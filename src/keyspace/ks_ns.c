/*
 * ks_ns: namespaces and the iteration of the keyspace: namespace records
 * (mkdir and rmdir of a namespace directory), the skip-scan over every
 * namespace, and key iteration within one namespace (live keys merged
 * with remembered empty collections).
 * Layer: keyspace (keyspace.h, ks_int.h, ks_txn.h, ks_attr.h, store,
 * encoding, util).
 */
#include "keyspace/keyspace.h"

#include "keyspace/ks_attr.h"
#include "keyspace/ks_int.h"
#include "keyspace/ks_txn.h"

#include <errno.h>
#include <stdlib.h>

/* ---- Namespaces ---------------------------------------------------- */

static int ns_check(const char *ns, size_t n)
{
	if (!ns || n < 1 || n > ENC_MAX_NS)
		return -EINVAL;
	if (ks_is_reserved_ns(ns, n))
		return -EPERM;
	return 0;
}

/* Does any record under `prefix` (metadata CF) count as live? 1, 0, <0.
 * `string_only`: reserved records, which must be live strings. */
static int prefix_has_live(struct keyspace *ks, const struct buf *prefix, bool string_only)
{
	struct store_iter *it = ks_prefix_iter(ks, STORE_CF_METADATA, prefix);
	uint64_t now = now_ms();
	struct enc_meta m;
	int found = 0;

	if (!it)
		return -ENOMEM;
	for (store_iter_seek(it, prefix->data, prefix->len); store_iter_valid(it);
	     store_iter_next(it)) {
		size_t vn;
		const void *v = store_iter_value(it, &vn);
		if (ks_meta_value_live(v, vn, now, &m) &&
		    (!string_only || m.type == KV_TYPE_STRING)) {
			found = 1;
			break;
		}
	}
	int rc = store_iter_status(it);
	store_iter_free(it);
	return rc ? rc : found;
}

/* Live keys (1), or none (0), in namespace ns. */
static int ns_has_keys(struct keyspace *ks, const char *ns, size_t n)
{
	struct buf prefix = BUF_INIT;
	int rc = enc_ns_key(&prefix, ns, n, NULL, 0, false);
	if (!rc)
		rc = prefix_has_live(ks, &prefix, false);
	buf_release(&prefix);
	return rc;
}

/* Remembered empty collections (1) or none (0) in namespace ns. */
static int ns_has_empties(struct keyspace *ks, const char *ns, size_t n)
{
	struct buf prefix = BUF_INIT;
	int rc = ks_res_prefix(&prefix, RES_EMPTY, ns, n, true);
	if (!rc)
		rc = prefix_has_live(ks, &prefix, true);
	buf_release(&prefix);
	return rc;
}

/* A namespace record for ns (1) or none (0). */
static int ns_has_record(struct keyspace *ks, const char *ns, size_t n)
{
	struct buf key = BUF_INIT, raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_ns_record_key(ns, n, &key);
	if (!rc)
		rc = ks_res_get(ks, &key, &raw, &m);
	buf_release(&key);
	buf_release(&raw);
	if (rc == -ENOENT)
		return 0;
	return rc ? rc : 1;
}

static bool is_default_ns(const char *ns, size_t n)
{
	return bytes_cmp(ns, n, KS_DEFAULT_NS, strlen(KS_DEFAULT_NS)) == 0;
}

int ks_ns_exists(struct keyspace *ks, const char *ns, size_t n)
{
	int rc = ns_check(ns, n);
	if (rc == -EPERM)
		return 0; /* the reserved namespace is invisible */
	if (rc)
		return rc;
	if (is_default_ns(ns, n))
		return 1;
	rc = ns_has_record(ks, ns, n);
	if (rc == 0)
		rc = ns_has_keys(ks, ns, n);
	return rc;
}

/* Namespace records are serialised on the stripe of their record name. */
static void ns_lock_key(struct ks_key *lk, const struct buf *name)
{
	lk->ns = RES_NS;
	lk->nslen = RES_NSLEN;
	lk->key = name->data + 1 + RES_NSLEN;
	lk->klen = name->len - 1 - RES_NSLEN;
	lk->attr = NULL;
	lk->snap = NULL;
}

int ks_ns_create(struct keyspace *ks, const char *ns, size_t n, const struct ks_attr_change *c)
{
	struct buf key = BUF_INIT, val = BUF_INIT;
	struct ks_txn tx;
	struct ks_key lk;
	int rc = ns_check(ns, n);
	if (rc)
		return rc;
	rc = ks_ns_record_key(ns, n, &key);
	if (!rc)
		rc = ks_res_value(&val, "", 0);
	if (rc)
		goto out;
	ns_lock_key(&lk, &key);
	ks_txn_begin(&tx, ks, &lk);
	struct store_batch *b = ks_txn_batch(&tx);
	rc = b ? ks_ns_exists(ks, ns, n) : -ENOMEM;
	if (rc == 1) {
		rc = -EEXIST;
	} else if (rc == 0) {
		/* The directory's own records start anew (a namespace that
		 * vanished with its last key may have left some), with its
		 * creation time and what the caller asked for it (mkdir's
		 * mode and owner). */
		struct ks_key nk;
		ks_attr_ns_key(&nk, ns, n);
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
		rc = ks_attr_batch_drop_key(ks, b, &nk);
		if (!rc)
			rc = ks_attr_batch_ns_touch(b, ns, n);
		if (!rc && c)
			rc = ks_attr_batch_change(ks, b, &nk, 0, true, c);
		if (!rc)
			rc = ks_txn_commit(&tx);
	}
	rc = ks_txn_end(&tx, rc);
out:
	buf_release(&key);
	buf_release(&val);
	return rc;
}

/* NEEDSWORK: an empty-collection record created in `ns` by another
 * thread between the emptiness check and the write below would survive
 * its namespace record. The kernel serialises rmdir of a directory with
 * mkdir inside it, so the fs layer never races here. */
int ks_ns_remove(struct keyspace *ks, const char *ns, size_t n)
{
	struct buf key = BUF_INIT;
	struct ks_txn tx;
	struct ks_key lk;
	int rc = ns_check(ns, n);
	if (rc)
		return rc;
	if (is_default_ns(ns, n)) {
		LOG_ERR("the default namespace %s always exists and cannot be removed",
			KS_DEFAULT_NS);
		return -EBUSY;
	}
	rc = ks_ns_record_key(ns, n, &key);
	if (rc)
		goto out;
	ns_lock_key(&lk, &key);
	ks_txn_begin(&tx, ks, &lk);
	struct store_batch *b = ks_txn_batch(&tx);
	rc = b ? ns_has_keys(ks, ns, n) : -ENOMEM;
	if (rc == 0)
		rc = ns_has_empties(ks, ns, n);
	if (rc == 1)
		rc = -ENOTEMPTY;
	if (rc == 0)
		rc = ns_has_record(ks, ns, n);
	if (rc == 0)
		rc = -ENOENT;
	if (rc == 1) {
		struct ks_key nk;
		ks_attr_ns_key(&nk, ns, n);
		store_batch_delete(b, STORE_CF_METADATA, key.data, key.len);
		rc = ks_attr_batch_drop_key(ks, b, &nk);
		if (!rc)
			rc = ks_txn_commit(&tx);
	}
	rc = ks_txn_end(&tx, rc);
out:
	buf_release(&key);
	return rc;
}

/*
 * Namespace iteration. The metadata CF orders namespaces by ns_len first,
 * so each length is its own sorted stream (a skip-scan: one seek per
 * namespace); the namespace records ("N" | ns, byte order) are one more.
 * The iterator keeps one current candidate per stream (at most 256 names
 * of up to 255 bytes) and yields the smallest, which gives byte order of
 * the names without ever holding the whole list.
 */
#define NS_STREAMS (ENC_MAX_NS + 1) /* [1..255]: by length; [0]: records */
#define NS_DEFAULT NS_STREAMS	    /* the default namespace, which always exists */

struct ks_ns_iter {
	struct keyspace *ks;
	struct store_iter *meta; /* the whole metadata CF */
	struct store_iter *recs; /* the "N" records */
	struct buf recs_prefix;
	struct buf seek;
	struct buf after;
	bool started;
	bool has[NS_STREAMS + 1];
	struct buf cand[NS_STREAMS + 1];
	struct buf out;
};

struct ks_ns_iter *ks_ns_iter_new(struct keyspace *ks, const char *after, size_t alen)
{
	struct ks_ns_iter *it = calloc(1, sizeof(*it));
	if (!it)
		return NULL;
	it->ks = ks;
	if (ks_res_prefix(&it->recs_prefix, RES_NAMESPACE, NULL, 0, false) ||
	    buf_set(&it->after, after, after ? alen : 0))
		goto fail;
	it->meta = store_iter_new(ks->st, STORE_CF_METADATA, NULL, 0, NULL, 0);
	it->recs = ks_prefix_iter(ks, STORE_CF_METADATA, &it->recs_prefix);
	if (!it->meta || !it->recs)
		goto fail;
	return it;
fail:
	ks_ns_iter_free(it);
	return NULL;
}

void ks_ns_iter_free(struct ks_ns_iter *it)
{
	if (!it)
		return;
	store_iter_free(it->meta);
	store_iter_free(it->recs);
	buf_release(&it->recs_prefix);
	buf_release(&it->seek);
	buf_release(&it->after);
	for (int i = 0; i <= NS_STREAMS; i++)
		buf_release(&it->cand[i]);
	buf_release(&it->out);
	free(it);
}

/*
 * Fill the candidate of length stream L: the first namespace of length L
 * whose name is greater than `after` and that has a live key. Returns the
 * first length byte seen past the stream (so the caller can skip lengths
 * that have no keys at all; 256 when the CF ends), or a negative errno.
 */
static int ns_fill_len(struct ks_ns_iter *it, int L, const char *after, size_t alen)
{
	struct store_iter *mi = it->meta;
	uint64_t now = now_ms();
	int rc;

	it->has[L] = false;
	/* Names of length L greater than `after`: if after is at least L
	 * long, those past every name starting with after[0..L); else those
	 * from after on (none of them equals it). */
	buf_reset(&it->seek);
	if ((rc = buf_add_u8(&it->seek, (uint8_t)L)) ||
	    (rc = buf_add(&it->seek, after, alen < (size_t)L ? alen : (size_t)L)))
		return rc;
	if (alen >= (size_t)L && !enc_prefix_successor(&it->seek))
		return NS_STREAMS;
	store_iter_seek(mi, it->seek.data, it->seek.len);
	while (store_iter_valid(mi)) {
		size_t kn;
		const uint8_t *k = store_iter_key(mi, &kn);
		if (k[0] != L)
			return k[0] < L ? L + 1 : k[0];
		if (kn < 1 + (size_t)L) {
			store_iter_next(mi); /* malformed: too short for its ns_len */
			continue;
		}
		const uint8_t *ns = k + 1;
		if (!ks_is_reserved_ns(ns, (size_t)L)) {
			/* Scan this namespace until one live key shows up. */
			if ((rc = buf_set(&it->cand[L], ns, (size_t)L)))
				return rc;
			do {
				size_t vn;
				const void *v = store_iter_value(mi, &vn);
				if (ks_meta_value_live(v, vn, now, NULL)) {
					it->has[L] = true;
					return L + 1;
				}
				store_iter_next(mi);
				if (!store_iter_valid(mi))
					break;
				k = store_iter_key(mi, &kn);
			} while (kn >= 1 + (size_t)L && k[0] == L &&
				 memcmp(k + 1, it->cand[L].data, (size_t)L) == 0);
			continue; /* positioned on the next namespace already */
		}
		/* Skip the whole reserved namespace with one seek. */
		if ((rc = buf_set(&it->seek, k, 1 + (size_t)L)))
			return rc;
		if (!enc_prefix_successor(&it->seek))
			return NS_STREAMS;
		store_iter_seek(mi, it->seek.data, it->seek.len);
	}
	rc = store_iter_status(mi);
	return rc ? rc : NS_STREAMS;
}

/* Fill the candidate of the namespace-record stream (after `after`). */
static int ns_fill_recs(struct ks_ns_iter *it, const char *after, size_t alen)
{
	struct store_iter *ri = it->recs;
	size_t plen = it->recs_prefix.len;
	uint64_t now = now_ms();
	int rc;

	it->has[0] = false;
	if ((rc = buf_set(&it->seek, it->recs_prefix.data, plen)) ||
	    (rc = buf_add(&it->seek, after, alen)))
		return rc;
	for (store_iter_seek(ri, it->seek.data, it->seek.len); store_iter_valid(ri);
	     store_iter_next(ri)) {
		size_t kn, vn;
		const char *k = store_iter_key(ri, &kn);
		const char *name = k + plen;
		size_t n = kn - plen;
		if (n == alen && memcmp(name, after, n) == 0)
			continue;
		if (n < 1 || n > ENC_MAX_NS || ks_is_reserved_ns(name, n))
			continue;
		struct enc_meta m;
		const void *v = store_iter_value(ri, &vn);
		if (!ks_meta_value_live(v, vn, now, &m) || m.type != KV_TYPE_STRING)
			continue;
		it->has[0] = true;
		return buf_set(&it->cand[0], name, n);
	}
	return store_iter_status(ri);
}

int ks_ns_iter_next(struct ks_ns_iter *it, const char **ns, size_t *n)
{
	int rc, best = -1;

	if (!it->started) {
		for (int L = 1; L <= ENC_MAX_NS;) {
			rc = ns_fill_len(it, L, it->after.data, it->after.len);
			if (rc < 0)
				return rc;
			L = rc > L ? rc : L + 1; /* lengths in between have no keys */
		}
		rc = ns_fill_recs(it, it->after.data, it->after.len);
		if (rc < 0)
			return rc;
		if (bytes_cmp(KS_DEFAULT_NS, strlen(KS_DEFAULT_NS), it->after.data, it->after.len) >
		    0) {
			rc = buf_set(&it->cand[NS_DEFAULT], KS_DEFAULT_NS, strlen(KS_DEFAULT_NS));
			if (rc)
				return rc;
			it->has[NS_DEFAULT] = true;
		}
		it->started = true;
	}
	for (int i = 0; i <= NS_STREAMS; i++) {
		if (!it->has[i])
			continue;
		if (best < 0 || bytes_cmp(it->cand[i].data, it->cand[i].len, it->cand[best].data,
					  it->cand[best].len) < 0)
			best = i;
	}
	if (best < 0)
		return 0;
	if ((rc = buf_set(&it->out, it->cand[best].data, it->cand[best].len)))
		return rc;
	/* Advance the streams that offered this name: its length stream and
	 * possibly the record stream. */
	int L = (int)it->out.len;
	if (it->has[L] &&
	    bytes_cmp(it->cand[L].data, it->cand[L].len, it->out.data, it->out.len) == 0) {
		rc = ns_fill_len(it, L, it->out.data, it->out.len);
		if (rc < 0)
			return rc;
	}
	if (it->has[0] &&
	    bytes_cmp(it->cand[0].data, it->cand[0].len, it->out.data, it->out.len) == 0) {
		rc = ns_fill_recs(it, it->out.data, it->out.len);
		if (rc < 0)
			return rc;
	}
	if (it->has[NS_DEFAULT] && bytes_cmp(it->cand[NS_DEFAULT].data, it->cand[NS_DEFAULT].len,
					     it->out.data, it->out.len) == 0)
		it->has[NS_DEFAULT] = false;
	*ns = it->out.data;
	*n = it->out.len;
	return 1;
}

/*
 * Key iteration: a streaming merge of the namespace's metadata keys with
 * its empty-collection records, both ordered by rank ([slot] | key).
 */
struct ks_key_iter {
	struct keyspace *ks;
	struct store_iter *live, *empty;
	size_t live_plen, empty_plen; /* bytes before the rank */
	struct buf out;
};

/* Position `si` at the first record after rank `after` (whole rank). */
static void key_iter_start(struct store_iter *si, const struct buf *prefix, size_t plen,
			   const struct buf *rank, bool skip_equal, struct buf *tmp, int *rc)
{
	if (*rc)
		return;
	if ((*rc = buf_set(tmp, prefix->data, plen)) || (*rc = buf_add(tmp, rank->data, rank->len)))
		return;
	store_iter_seek(si, tmp->data, tmp->len);
	if (skip_equal && store_iter_valid(si)) {
		size_t kn;
		const char *k = store_iter_key(si, &kn);
		if (kn == tmp->len && memcmp(k, tmp->data, kn) == 0)
			store_iter_next(si);
	}
}

struct ks_key_iter *ks_key_iter_new(struct keyspace *ks, const char *ns, size_t nslen,
				    const char *after, size_t alen)
{
	struct buf lp = BUF_INIT, ep = BUF_INIT, rank = BUF_INIT, tmp = BUF_INIT;
	struct ks_key_iter *it = calloc(1, sizeof(*it));
	int rc = 0;

	if (!it)
		return NULL;
	it->ks = ks;
	if (nslen < 1 || nslen > ENC_MAX_NS || enc_ns_key(&lp, ns, nslen, NULL, 0, false) ||
	    ks_res_prefix(&ep, RES_EMPTY, ns, nslen, true))
		goto fail;
	it->live_plen = lp.len;
	it->empty_plen = ep.len;
	it->live = ks_prefix_iter(ks, STORE_CF_METADATA, &lp);
	it->empty = ks_prefix_iter(ks, STORE_CF_METADATA, &ep);
	if (!it->live || !it->empty)
		goto fail;
	if (after)
		rc = buf_set(&rank, after, alen);
	key_iter_start(it->live, &lp, lp.len, &rank, after != NULL, &tmp, &rc);
	key_iter_start(it->empty, &ep, ep.len, &rank, after != NULL, &tmp, &rc);
	if (rc)
		goto fail;
	goto out;
fail:
	ks_key_iter_free(it);
	it = NULL;
out:
	buf_release(&lp);
	buf_release(&ep);
	buf_release(&rank);
	buf_release(&tmp);
	return it;
}

void ks_key_iter_free(struct ks_key_iter *it)
{
	if (!it)
		return;
	store_iter_free(it->live);
	store_iter_free(it->empty);
	buf_release(&it->out);
	free(it);
}

/* Skip records that do not count: expired, size 0, corrupt, too short.
 * A corrupt one is logged by name (ks_corrupt): it is not listed, but a
 * lookup of that name finds it, so that `rm` can remove it (ks_lookup). */
static void key_iter_settle_live(struct ks_key_iter *it, uint64_t now)
{
	size_t min = it->live_plen + (it->ks->cluster ? 2 : 0);
	for (; store_iter_valid(it->live); store_iter_next(it->live)) {
		size_t kn, vn;
		const char *key = store_iter_key(it->live, &kn);
		const void *v = store_iter_value(it->live, &vn);
		if (kn < min)
			continue;
		struct enc_meta m;
		if (enc_meta_decode(v, vn, &m) != 0) {
			struct ks_key k = {key + 1, (uint8_t)key[0], key + min, kn - min, NULL,
					   NULL};
			ks_corrupt(&k, "metadata of %zu bytes, flags 0x%02x: %s; not listed", vn,
				   vn ? *(const uint8_t *)v : 0, enc_meta_why(v, vn));
			continue;
		}
		if (!enc_meta_is_expired(&m, now))
			return;
	}
}

static void key_iter_settle_empty(struct ks_key_iter *it, uint64_t now)
{
	size_t min = it->empty_plen + (it->ks->cluster ? 2 : 0);
	for (; store_iter_valid(it->empty); store_iter_next(it->empty)) {
		size_t kn, vn;
		struct enc_meta m;
		store_iter_key(it->empty, &kn);
		const void *v = store_iter_value(it->empty, &vn);
		if (kn >= min && ks_meta_value_live(v, vn, now, &m) && m.type == KV_TYPE_STRING &&
		    ks_empty_type(&m) != KV_TYPE_NONE && !ks_empty_expired(&m, now))
			return;
	}
}

int ks_key_iter_next(struct ks_key_iter *it, const char **key, size_t *klen, struct ks_info *info)
{
	uint64_t now = now_ms();
	size_t skip = it->ks->cluster ? 2 : 0;
	const char *lk = NULL, *ek = NULL;
	size_t ln = 0, en = 0;
	int rc;

	key_iter_settle_live(it, now);
	key_iter_settle_empty(it, now);
	if ((rc = store_iter_status(it->live)) || (rc = store_iter_status(it->empty)))
		return rc;
	bool lv = store_iter_valid(it->live), ev = store_iter_valid(it->empty);
	if (!lv && !ev)
		return 0;
	if (lv) {
		lk = store_iter_key(it->live, &ln);
		lk += it->live_plen;
		ln -= it->live_plen;
	}
	if (ev) {
		ek = store_iter_key(it->empty, &en);
		ek += it->empty_plen;
		en -= it->empty_plen;
	}
	int c = !lv ? 1 : !ev ? -1 : bytes_cmp(lk, ln, ek, en);
	if (c <= 0) {
		/* A live key wins over an empty record of the same name. */
		size_t vn;
		struct enc_meta m;
		const void *v = store_iter_value(it->live, &vn);
		(void)enc_meta_decode(v, vn, &m); /* checked by settle */
		ks_info_from_meta(info, &m);
		rc = buf_set(&it->out, lk, ln);
	} else {
		size_t vn;
		struct enc_meta m;
		const void *v = store_iter_value(it->empty, &vn);
		(void)enc_meta_decode(v, vn, &m);
		memset(info, 0, sizeof(*info));
		info->type = ks_empty_type(&m);
		info->empty = true;
		info->expire_ms = ks_empty_expire(&m);
		rc = buf_set(&it->out, ek, en);
	}
	if (rc)
		return rc;
	if (c <= 0)
		store_iter_next(it->live);
	if (c >= 0)
		store_iter_next(it->empty);
	*key = it->out.data + skip;
	*klen = it->out.len - skip;
	return 1;
}

void ks_key_iter_rank(const struct ks_key_iter *it, const char **rank, size_t *n)
{
	*rank = it->out.data;
	*n = it->out.len;
}
