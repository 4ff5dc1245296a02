/*
 * keyspace: keys as Kvrocks sees them, on top of the store. Metadata
 * lookup with type check and expiry, version generation, striped per-key
 * locks, the generic key verbs (TYPE, DEL, RENAME, PEXPIREAT), namespace
 * and key iteration, and kvfs's reserved namespace.
 * Layer: keyspace (store, encoding, util).
 *
 * The reserved namespace "__kvfs" holds ordinary Kvrocks v1 string keys
 * (value: 0x81 | expire u64 0 | payload) in the metadata CF:
 *
 *   record          user key inside __kvfs                  payload
 *   empty coll.     "E" | ns_len u8 | ns | [slot u16] | key  type name ("hash")
 *                                                            [| 00 | expire ms u64]
 *   namespace       "N" | ns                                 ""
 *   attributes      "@" ...                                  see src/ks_attr.c
 *
 * An empty collection may carry a pending expiry (absolute Unix ms) after
 * its type name: Kvrocks keeps no expiry for empty collections, so the
 * record holds it until the first entry makes the key live, in the same
 * batch (see the write context below). A pending expiry that passes
 * makes the record count as absent.
 *
 * A namespace record is written by ks_ns_create and, in the same batch,
 * with every empty-collection record (a namespace holding an empty
 * directory exists even without live keys); only ks_ns_remove drops it.
 *
 * Their metadata-CF keys never carry a cluster slot (06 "__kvfs" "E" ...).
 * In cluster mode the empty-collection name instead carries the slot of
 * the *user* key, so that empty records of a namespace sort exactly like
 * that namespace's slot-prefixed metadata keys (slot, then key) and the
 * two streams can be merged. Leading bytes "E" and "N" in __kvfs belong to
 * this module; slot-prefixed keys there start with a byte <= 0x3f.
 */
#include "keyspace.h"

#include "ks_attr.h"
#include "ks_gc.h"
#include "names.h"
#include "store.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * Lock stripes. A key's stripe is hash(ns_len | ns | key) & (KS_LOCKS - 1).
 * Order rule: a thread takes the stripes it needs at once, in ascending
 * stripe index (ks_lock2 for two keys, ks_lockv for a time series and the
 * destinations of its rules); it never takes a stripe while holding one.
 * Equal stripes are taken once.
 */
#define KS_LOCKS      1024
#define KS_STRIPE_BUF 1024 /* keys up to this hash as ns_len|ns|key directly */

#define RES_NS	      KS_RESERVED_NS
#define RES_NSLEN     (sizeof(KS_RESERVED_NS) - 1)
#define RES_EMPTY     'E'
#define RES_NAMESPACE 'N'

struct keyspace {
	struct store *st;
	bool cluster;
	_Atomic uint64_t version_counter;
	pthread_mutex_t locks[KS_LOCKS];
};

/*
 * The write context of the verbs not yet on ks_txn: for the keys whose
 * locks this thread holds (at most two), what the verb under way saw of
 * them (struct ks_track, keyspace.h). Set by ks_lock/ks_lock2, cleared by
 * the unlocks, read by ks_write; only the owning thread touches it.
 * NEEDSWORK: goes when the last verb writes through ks_txn.
 */
static _Thread_local struct {
	int n;
	struct ks_track keys[2];
} wctx;

/* ---- Open, close, locks -------------------------------------------- */

int ks_open(const char *dir, const struct ks_options *opt, struct keyspace **out)
{
	struct store_options so = {0};
	struct store_gc gc;
	struct keyspace *ks;
	int rc;

	*out = NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	if (opt) {
		so.read_only = opt->read_only;
		so.block_cache_bytes = opt->block_cache_bytes;
		ks->cluster = opt->cluster;
	}
	/* Kvrocks's compaction filters (src/ks_gc.c); the store installs
	 * nothing on a read-only database. They call back into ks, which
	 * ks_close frees only after store_close has stopped them. */
	ks_gc_hook(ks, &gc);
	so.gc = &gc;
	rc = store_open(dir, &so, &ks->st);
	if (rc) {
		free(ks);
		return rc;
	}
	for (int i = 0; i < KS_LOCKS; i++)
		pthread_mutex_init(&ks->locks[i], NULL);
	/* As Kvrocks: the counter starts at rand() seeded with the time, so a
	 * restarted process with a clock that went back is unlikely to reuse
	 * a version. */
	srand((unsigned)time(NULL));
	atomic_init(&ks->version_counter, (uint64_t)rand());
	*out = ks;
	return 0;
}

void ks_close(struct keyspace *ks)
{
	if (!ks)
		return;
	store_close(ks->st);
	for (int i = 0; i < KS_LOCKS; i++)
		pthread_mutex_destroy(&ks->locks[i]);
	free(ks);
}

bool ks_is_read_only(const struct keyspace *ks)
{
	return store_is_read_only(ks->st);
}

int ks_sync(struct keyspace *ks)
{
	return store_sync(ks->st);
}

int ks_stats(struct keyspace *ks, uint64_t *bytes, uint64_t *keys)
{
	return store_stats(ks->st, bytes, keys);
}

struct store *ks_store(struct keyspace *ks)
{
	return ks->st;
}

bool ks_cluster(const struct keyspace *ks)
{
	return ks->cluster;
}

static unsigned ks_stripe(const struct ks_key *k)
{
	uint8_t tmp[KS_STRIPE_BUF];
	size_t n = 1 + k->nslen + k->klen;

	if (k->nslen <= ENC_MAX_NS && n <= sizeof(tmp)) {
		tmp[0] = (uint8_t)k->nslen;
		memcpy(tmp + 1, k->ns, k->nslen);
		if (k->klen)
			memcpy(tmp + 1 + k->nslen, k->key, k->klen);
		return (unsigned)(hash_bytes(tmp, n) & (KS_LOCKS - 1));
	}
	/* Long names: hash the parts first (no allocation, so the stripe of
	 * a key never depends on whether malloc succeeded). */
	tmp[0] = (uint8_t)k->nslen;
	put_be64(tmp + 1, hash_bytes(k->ns, k->nslen));
	put_be64(tmp + 9, hash_bytes(k->key, k->klen));
	return (unsigned)(hash_bytes(tmp, 17) & (KS_LOCKS - 1));
}

void ks_track_init(struct ks_track *w, const struct ks_key *k)
{
	memset(w, 0, sizeof(*w));
	w->k = k;
	w->attr = k->attr;
}

static void wctx_begin(const struct ks_key *a, const struct ks_key *b)
{
	ks_track_init(&wctx.keys[0], a);
	wctx.n = 1;
	if (b) {
		ks_track_init(&wctx.keys[1], b);
		wctx.n = 2;
	}
}

static void wctx_end(void)
{
	wctx.n = 0;
}

void ks_lock(struct keyspace *ks, const struct ks_key *k)
{
	pthread_mutex_lock(&ks->locks[ks_stripe(k)]);
	wctx_begin(k, NULL);
}

void ks_unlock(struct keyspace *ks, const struct ks_key *k)
{
	wctx_end();
	pthread_mutex_unlock(&ks->locks[ks_stripe(k)]);
}

void ks_lock_pair(struct keyspace *ks, const struct ks_key *a, const struct ks_key *b)
{
	unsigned x = ks_stripe(a), y = b ? ks_stripe(b) : x;
	if (x > y) {
		unsigned t = x;
		x = y;
		y = t;
	}
	pthread_mutex_lock(&ks->locks[x]);
	if (y != x)
		pthread_mutex_lock(&ks->locks[y]);
}

void ks_unlock_pair(struct keyspace *ks, const struct ks_key *a, const struct ks_key *b)
{
	unsigned x = ks_stripe(a), y = b ? ks_stripe(b) : x;
	if (y != x)
		pthread_mutex_unlock(&ks->locks[y]);
	pthread_mutex_unlock(&ks->locks[x]);
}

void ks_lock2(struct keyspace *ks, const struct ks_key *a, const struct ks_key *b)
{
	ks_lock_pair(ks, a, b);
	wctx_begin(a, b);
}

void ks_unlock2(struct keyspace *ks, const struct ks_key *a, const struct ks_key *b)
{
	wctx_end();
	ks_unlock_pair(ks, a, b);
}

static int stripe_cmp(const void *a, const void *b)
{
	unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
	return x < y ? -1 : (x > y ? 1 : 0);
}

/* The distinct stripes of n keys, ascending, in out (n entries). */
static size_t stripes_of(const struct ks_key *keys, size_t n, unsigned *out)
{
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		out[i] = ks_stripe(&keys[i]);
	qsort(out, n, sizeof(*out), stripe_cmp);
	for (size_t i = 0; i < n; i++)
		if (m == 0 || out[i] != out[m - 1])
			out[m++] = out[i];
	return m;
}

void ks_lockv(struct keyspace *ks, const struct ks_key *keys, size_t n)
{
	unsigned st[KS_LOCKV_MAX];
	if (n > KS_LOCKV_MAX)
		n = KS_LOCKV_MAX; /* callers check; never lock a partial set silently */
	size_t m = stripes_of(keys, n, st);
	for (size_t i = 0; i < m; i++)
		pthread_mutex_lock(&ks->locks[st[i]]);
}

void ks_unlockv(struct keyspace *ks, const struct ks_key *keys, size_t n)
{
	unsigned st[KS_LOCKV_MAX];
	if (n > KS_LOCKV_MAX)
		n = KS_LOCKV_MAX;
	size_t m = stripes_of(keys, n, st);
	for (size_t i = m; i > 0; i--)
		pthread_mutex_unlock(&ks->locks[st[i - 1]]);
}

/* ---- Versions, keys, metadata -------------------------------------- */

uint64_t ks_version_new(struct keyspace *ks)
{
	uint64_t c = atomic_fetch_add(&ks->version_counter, 1);
	return enc_version_make(now_us(), c);
}

void ks_meta_new(struct keyspace *ks, struct enc_meta *m, enum kv_type t)
{
	memset(m, 0, sizeof(*m));
	m->type = t;
	m->v1 = true;
	m->flags = (uint8_t)(ENC_FLAG_64BIT | t);
	/* Kvrocks gives inline types (string, json) no version. */
	m->version = enc_type_is_inline(t) ? 0 : ks_version_new(ks);
}

int ks_meta_key(struct keyspace *ks, const struct ks_key *k, struct buf *out)
{
	return enc_ns_key(out, k->ns, k->nslen, k->key, k->klen, ks->cluster);
}

int ks_sub_key(struct keyspace *ks, const struct ks_key *k, uint64_t version, const void *sub,
	       size_t sublen, struct buf *out)
{
	return enc_sub_key(out, k->ns, k->nslen, k->key, k->klen, ks->cluster, version, sub,
			   sublen);
}

bool ks_key_eq(const struct ks_key *a, const struct ks_key *b)
{
	return a == b ||
	       (a->nslen == b->nslen && a->klen == b->klen && memcmp(a->ns, b->ns, a->nslen) == 0 &&
		(!a->klen || memcmp(a->key, b->key, a->klen) == 0));
}

static bool is_reserved_ns(const void *ns, size_t n)
{
	return n == RES_NSLEN && memcmp(ns, RES_NS, n) == 0;
}

/* The write-context entry of k, if this thread holds its lock. */
static struct ks_track *wctx_find(const struct ks_key *k)
{
	if (!wctx.n)
		return NULL;
	for (int i = 0; i < wctx.n; i++)
		if (wctx.keys[i].k == k || ks_key_eq(wctx.keys[i].k, k))
			return &wctx.keys[i];
	return NULL;
}

/* A verb read k's live metadata m. */
static void track_saw(struct ks_track *w, const struct enc_meta *m)
{
	if (w) {
		w->version = enc_type_is_inline(m->type) ? 0 : m->version;
		if (!w->read_version)
			w->read_version = w->version;
		w->live = true;
		w->was_live = true;
	}
}

/* Metadata records other than string and JSON values fit in this; the
 * header read of a large string stops here. */
#define KS_META_HEAD 512

static int meta_read(struct keyspace *ks, struct ks_track *w, const struct ks_key *k,
		     enum kv_type want, struct buf *raw, struct enc_meta *m, uint64_t *vlen);

int ks_meta_head(struct keyspace *ks, const struct ks_key *k, enum kv_type want, struct buf *raw,
		 struct enc_meta *m, uint64_t *vlen)
{
	return meta_read(ks, wctx_find(k), k, want, raw, m, vlen);
}

int ks_meta_get(struct keyspace *ks, const struct ks_key *k, enum kv_type want, struct buf *raw,
		struct enc_meta *m)
{
	return meta_read(ks, wctx_find(k), k, want, raw, m, NULL);
}

int ks_track_meta_get(struct keyspace *ks, struct ks_track *w, const struct ks_key *k,
		      enum kv_type want, struct buf *raw, struct enc_meta *m)
{
	return meta_read(ks, w, k, want, raw, m, NULL);
}

int ks_track_meta_head(struct keyspace *ks, struct ks_track *w, const struct ks_key *k,
		       enum kv_type want, struct buf *raw, struct enc_meta *m, uint64_t *vlen)
{
	return meta_read(ks, w, k, want, raw, m, vlen);
}

int ks_card(struct keyspace *ks, const struct ks_key *k, enum kv_type want, uint64_t *n)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_meta_get(ks, k, want, &raw, &m);
	*n = rc ? 0 : m.size;
	buf_release(&raw);
	return rc == -ENOENT ? 0 : rc;
}

/* The line of ks_corrupt and ks_corrupt_entry; entry NULL: none. */
static int corrupt_log(const struct ks_key *k, const void *entry, size_t en, const char *fmt,
		       va_list ap)
{
	struct buf ns = BUF_INIT, key = BUF_INIT, ent = BUF_INIT, what = BUF_INIT;
	va_list aq;
	va_copy(aq, ap);
	int n = vsnprintf(NULL, 0, fmt, aq);
	va_end(aq);
	/* Out of memory only shortens the line: the error stays -EUCLEAN. */
	if (n >= 0 && buf_resize(&what, (size_t)n) == 0)
		vsnprintf(what.data, (size_t)n + 1, fmt, ap);
	if (names_encode(k->ns, k->nslen, &ns))
		buf_reset(&ns);
	if (names_encode(k->key, k->klen, &key))
		buf_reset(&key);
	if (entry && names_encode(entry, en, &ent))
		buf_reset(&ent);
	LOG_ERR("corrupt record of '%s/%s%s%s': %s", ns.data ? ns.data : "",
		key.data ? key.data : "", entry ? "/" : "", ent.data ? ent.data : "",
		what.data ? what.data : fmt);
	buf_release(&ns);
	buf_release(&key);
	buf_release(&ent);
	buf_release(&what);
	return -EUCLEAN;
}

int ks_key_dup(const struct ks_key *k, struct buf *store, struct ks_key *out)
{
	int rc = buf_set(store, k->ns, k->nslen);
	if (!rc)
		rc = buf_add(store, k->key, k->klen);
	if (!rc) {
		out->ns = store->data;
		out->nslen = k->nslen;
		out->key = store->data + k->nslen;
		out->klen = k->klen;
		out->attr = NULL;
	}
	return rc;
}

int ks_corrupt(const struct ks_key *k, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = corrupt_log(k, NULL, 0, fmt, ap);
	va_end(ap);
	return rc;
}

int ks_corrupt_entry(const struct ks_key *k, const void *entry, size_t en, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = corrupt_log(k, entry, en, fmt, ap);
	va_end(ap);
	return rc;
}

/* Decode a metadata record and apply Kvrocks's read rules. */
static int meta_check(struct ks_track *w, const struct ks_key *k, enum kv_type want, const char *p,
		      size_t n, struct enc_meta *m)
{
	int rc = enc_meta_decode(p, n, m);
	if (rc) {
		uint8_t f = n ? (uint8_t)p[0] : 0;
		return ks_corrupt(k, "metadata of %zu bytes, flags 0x%02x: %s", n, f,
				  enc_meta_why(p, n));
	}
	/* An expired or size-0 record is absent whatever its type. */
	if (enc_meta_is_expired(m, now_ms()))
		return -ENOENT;
	track_saw(w, m);
	if (want != KV_TYPE_NONE && m->type != want)
		return -KV_EWRONGTYPE;
	return 0;
}

int ks_meta_pin(struct keyspace *ks, const struct ks_key *k, enum kv_type want,
		struct store_value **v, struct enc_meta *m)
{
	struct buf key = BUF_INIT;
	int rc = ks_meta_key(ks, k, &key);
	*v = NULL;
	if (!rc)
		rc = store_value_get(ks->st, STORE_CF_METADATA, key.data, key.len, v);
	if (!rc) {
		size_t n;
		const char *p = store_value_data(*v, &n);
		rc = meta_check(wctx_find(k), k, want, p, n, m);
	}
	if (rc) {
		store_value_free(*v);
		*v = NULL;
	}
	buf_release(&key);
	return rc;
}

/* With vlen, an inline value is read only up to KS_META_HEAD bytes and
 * *vlen gets its full length. */
static int meta_read(struct keyspace *ks, struct ks_track *w, const struct ks_key *k,
		     enum kv_type want, struct buf *raw, struct enc_meta *m, uint64_t *vlen)
{
	struct buf key = BUF_INIT;
	size_t full = 0;
	int rc = ks_meta_key(ks, k, &key);
	if (rc)
		goto out;
	if (vlen) {
		rc = store_get_head(ks->st, STORE_CF_METADATA, key.data, key.len, KS_META_HEAD, raw,
				    &full);
		/* A long record of a collection type: read it whole. */
		if (!rc && full > raw->len && raw->len > 0 &&
		    !enc_type_is_inline((enum kv_type)(raw->data[0] & ENC_FLAG_TYPE_MASK)))
			rc = store_get(ks->st, STORE_CF_METADATA, key.data, key.len, raw);
	} else {
		rc = store_get(ks->st, STORE_CF_METADATA, key.data, key.len, raw);
	}
	if (rc)
		goto out;
	if (vlen)
		*vlen = full;
	rc = meta_check(w, k, want, raw->data, raw->len, m);
out:
	buf_release(&key);
	return rc;
}

/* A live (decodable, unexpired, non-empty) metadata value? */
static bool meta_value_live(const void *v, size_t n, uint64_t now, struct enc_meta *m)
{
	struct enc_meta tmp;
	if (!m)
		m = &tmp;
	return enc_meta_decode(v, n, m) == 0 && !enc_meta_is_expired(m, now);
}

int ks_batch_put_meta(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
		      const struct enc_meta *m, const void *tail, size_t tlen)
{
	return ks_track_put_meta(ks, b, wctx_find(k), k, m, tail, tlen);
}

int ks_track_put_meta(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		      const struct ks_key *k, const struct enc_meta *m, const void *tail,
		      size_t tlen)
{
	struct buf key = BUF_INIT, hdr = BUF_INIT;
	int rc = ks_meta_key(ks, k, &key);
	if (!rc)
		rc = enc_meta_encode(&hdr, m);
	if (!rc) {
		/* Header and tail go in as two parts: a large string value is
		 * copied once, into the batch. */
		const void *parts[2] = {hdr.data, tail};
		size_t lens[2] = {hdr.len, tlen};
		store_batch_putv(b, STORE_CF_METADATA, key.data, key.len, parts, lens, 2);
	}
	if (!rc && w) {
		w->version = enc_type_is_inline(m->type) ? 0 : m->version;
		w->live = true;
		/* A collection's header, kept in case a pending expiry must be
		 * applied to it (ks_write). */
		w->has_meta = !enc_type_is_inline(m->type) && tlen <= sizeof(w->meta);
		if (w->has_meta) {
			w->m = *m;
			if (tlen)
				memcpy(w->meta, tail, tlen);
			w->m.tail = w->meta;
			w->m.tail_len = tlen;
		}
	}
	buf_release(&key);
	buf_release(&hdr);
	return rc;
}

int ks_batch_del_meta(struct keyspace *ks, struct store_batch *b, const struct ks_key *k)
{
	return ks_track_del_meta(ks, b, wctx_find(k), k);
}

int ks_track_del_meta(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		      const struct ks_key *k)
{
	struct buf key = BUF_INIT;
	int rc = ks_meta_key(ks, k, &key);
	if (!rc)
		store_batch_delete(b, STORE_CF_METADATA, key.data, key.len);
	if (!rc && w) {
		w->live = false;
		w->has_meta = false;
	}
	buf_release(&key);
	return rc;
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
	if (w->pending_expire && w->live && w->has_meta && !w->m.expire_ms) {
		/* The first entry of an empty collection that had an expiry. */
		struct enc_meta m = w->m;
		m.expire_ms = w->pending_expire;
		rc = ks_batch_put_meta(ks, b, w->k, &m, m.tail, m.tail_len);
		w->pending_expire = 0;
	}
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
	if (!rc && before != after && !is_reserved_ns(w->k->ns, w->k->nslen))
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

int ks_track_apply(struct keyspace *ks, struct store_batch *b, struct ks_track *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = track_apply(ks, b, &w[i], w, n);
		if (rc)
			return rc;
	}
	return 0;
}

int ks_write(struct keyspace *ks, struct store_batch *b)
{
	int rc = ks_track_apply(ks, b, wctx.keys, (size_t)wctx.n);
	return rc ? rc : store_write(ks->st, b, false);
}

/* ---- The reserved namespace ---------------------------------------- */

/* Metadata-CF key of a reserved record: 06 "__kvfs" tag [ns_len] ns. */
static int res_prefix(struct buf *out, char tag, const void *ns, size_t nslen, bool with_len)
{
	int rc = enc_ns_key(out, RES_NS, RES_NSLEN, NULL, 0, false);
	if (!rc)
		rc = buf_add_u8(out, (uint8_t)tag);
	if (!rc && with_len)
		rc = buf_add_u8(out, (uint8_t)nslen);
	if (!rc)
		rc = buf_add(out, ns, nslen);
	return rc;
}

/* The rank of a user key within its namespace: the bytes that order it
 * in the metadata CF after ns_len|ns ([slot u16] | key). */
static int key_rank(struct keyspace *ks, struct buf *out, const void *key, size_t klen)
{
	int rc = 0;
	if (ks->cluster)
		rc = buf_add_be16(out, enc_slot(key, klen));
	if (!rc)
		rc = buf_add(out, key, klen);
	return rc;
}

static int empty_key(struct keyspace *ks, const struct ks_key *k, struct buf *out)
{
	if (k->nslen < 1 || k->nslen > ENC_MAX_NS)
		return -EINVAL;
	int rc = res_prefix(out, RES_EMPTY, k->ns, k->nslen, true);
	if (!rc)
		rc = key_rank(ks, out, k->key, k->klen);
	return rc;
}

static int ns_record_key(const char *ns, size_t n, struct buf *out)
{
	return res_prefix(out, RES_NAMESPACE, ns, n, false);
}

/* A v1 string metadata value with no expiry holding `payload`. */
static int res_value(struct buf *out, const char *payload, size_t n)
{
	struct enc_meta m = {.type = KV_TYPE_STRING, .v1 = true};
	buf_reset(out);
	int rc = enc_meta_encode(out, &m);
	if (!rc)
		rc = buf_add(out, payload, n);
	return rc;
}

/* Read a reserved record; 0 with *m decoded (tail = payload), -ENOENT. */
static int res_get(struct keyspace *ks, const struct buf *key, struct buf *raw, struct enc_meta *m)
{
	int rc = store_get(ks->st, STORE_CF_METADATA, key->data, key->len, raw);
	if (rc)
		return rc;
	if (!meta_value_live(raw->data, raw->len, now_ms(), m) || m->type != KV_TYPE_STRING)
		return -ENOENT;
	return 0;
}

/* Types a key can be remembered empty as: every collection, and JSON (a
 * file typed json before its first document). An empty string is a
 * string record. */
static bool type_can_be_empty(enum kv_type t)
{
	return t > KV_TYPE_NONE && t <= KV_TYPE_MAX && t != KV_TYPE_STRING;
}

/* The type of a remembered empty collection named by a payload: the
 * name, up to a NUL that starts a pending expiry. */
static enum kv_type empty_type(const struct enc_meta *m)
{
	const char *p = (const char *)m->tail;
	const char *nul = memchr(p, 0, m->tail_len);
	size_t n = nul ? (size_t)(nul - p) : m->tail_len;
	enum kv_type t = enc_type_from_name(p, n);
	return type_can_be_empty(t) ? t : KV_TYPE_NONE;
}

/* The pending expiry of an empty-collection payload (0: none). */
static uint64_t empty_expire(const struct enc_meta *m)
{
	const char *p = (const char *)m->tail;
	const char *nul = memchr(p, 0, m->tail_len);
	if (!nul || (size_t)(p + m->tail_len - nul) != 9)
		return 0;
	return get_be64(nul + 1);
}

static bool empty_expired(const struct enc_meta *m, uint64_t now)
{
	uint64_t e = empty_expire(m);
	return e && e <= now;
}

/* 0 and *t (and *expire, if asked) if k is remembered as an empty
 * collection, -ENOENT, <0. */
static int empty_get_exp(struct keyspace *ks, const struct ks_key *k, enum kv_type *t,
			 uint64_t *expire)
{
	struct buf key = BUF_INIT, raw = BUF_INIT;
	struct enc_meta m;
	int rc = empty_key(ks, k, &key);
	if (!rc)
		rc = res_get(ks, &key, &raw, &m);
	if (!rc && empty_expired(&m, now_ms()))
		rc = -ENOENT;
	struct ks_track *w = !rc ? wctx_find(k) : NULL;
	if (w)
		w->empty_seen = true;
	if (!rc && expire)
		*expire = empty_expire(&m);
	if (!rc) {
		*t = empty_type(&m);
		if (*t == KV_TYPE_NONE) {
			LOG_ERR("%.*s/%.*s: empty-collection record with unknown type \"%.*s\"",
				(int)k->nslen, k->ns, (int)k->klen, k->key, (int)m.tail_len,
				(const char *)m.tail);
			rc = -EUCLEAN;
		}
	}
	buf_release(&key);
	buf_release(&raw);
	return rc;
}

static int empty_get(struct keyspace *ks, const struct ks_key *k, enum kv_type *t)
{
	return empty_get_exp(ks, k, t, NULL);
}

static int empty_put(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		     const struct ks_key *k, enum kv_type t, uint64_t expire);

int ks_batch_empty_put(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
		       enum kv_type t)
{
	return empty_put(ks, b, wctx_find(k), k, t, 0);
}

int ks_track_empty_put(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		       const struct ks_key *k, enum kv_type t)
{
	return empty_put(ks, b, w, k, t, 0);
}

/*
 * Also records k's namespace ("N" | ns): a namespace holding an empty
 * collection must exist (be listed, and refuse rmdir) even when it has no
 * live key, and the namespace stream of ks_ns_iter then covers it.
 */
static int empty_put(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		     const struct ks_key *k, enum kv_type t, uint64_t expire)
{
	struct buf key = BUF_INIT, val = BUF_INIT;
	const char *name = enc_type_name(t);
	int rc = empty_key(ks, k, &key);
	if (!rc)
		rc = res_value(&val, name, strlen(name));
	if (!rc && expire) {
		rc = buf_add_u8(&val, 0);
		if (!rc)
			rc = buf_add_be64(&val, expire);
	}
	if (!rc)
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
	if (!rc && w)
		w->empty_made = true;
	if (!rc && !is_reserved_ns(k->ns, k->nslen)) {
		rc = ns_record_key(k->ns, k->nslen, &key);
		if (!rc)
			rc = res_value(&val, "", 0);
		if (!rc)
			store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
	}
	buf_release(&key);
	buf_release(&val);
	return rc;
}

/*
 * Deletes the record only if it is stored now (a point read, cheap with
 * the bloom filter): an unconditional delete on every write would leave a
 * tombstone per key in the range that key iteration scans.
 */
int ks_batch_empty_del(struct keyspace *ks, struct store_batch *b, const struct ks_key *k)
{
	return ks_track_empty_del(ks, b, wctx_find(k), k);
}

int ks_track_empty_del(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		       const struct ks_key *k)
{
	struct buf key = BUF_INIT, raw = BUF_INIT;
	int rc = empty_key(ks, k, &key);
	if (!rc) {
		rc = store_get(ks->st, STORE_CF_METADATA, key.data, key.len, &raw);
		if (rc == 0) {
			store_batch_delete(b, STORE_CF_METADATA, key.data, key.len);
			/* Its pending expiry goes to the key its first entry makes. */
			struct enc_meta m;
			if (w)
				w->was_empty = w->empty_seen = true;
			if (w && meta_value_live(raw.data, raw.len, now_ms(), &m) &&
			    m.type == KV_TYPE_STRING && !empty_expired(&m, now_ms()))
				w->pending_expire = empty_expire(&m);
		} else if (rc == -ENOENT) {
			rc = 0;
		}
	}
	buf_release(&key);
	buf_release(&raw);
	return rc;
}

/* An iterator over every key that starts with `prefix`. */
static struct store_iter *prefix_iter(struct keyspace *ks, enum store_cf cf,
				      const struct buf *prefix)
{
	struct buf upper = BUF_INIT;
	struct store_iter *it = NULL;
	if (buf_set(&upper, prefix->data, prefix->len) == 0) {
		bool bounded = enc_prefix_successor(&upper);
		it = store_iter_new(ks->st, cf, prefix->data, prefix->len,
				    bounded ? upper.data : NULL, bounded ? upper.len : 0);
	}
	buf_release(&upper);
	return it;
}

/* ---- Generic key verbs --------------------------------------------- */

static void info_from_meta(struct ks_info *out, const struct enc_meta *m)
{
	memset(out, 0, sizeof(*out));
	out->type = m->type;
	out->expire_ms = m->expire_ms;
	if (enc_type_is_inline(m->type)) {
		out->size = m->tail_len;
	} else {
		out->version = m->version;
		out->size = m->size;
	}
}

int ks_lookup(struct keyspace *ks, const struct ks_key *k, struct ks_info *out)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	enum kv_type t;
	uint64_t vlen;
	memset(out, 0, sizeof(*out));
	int rc = ks_meta_head(ks, k, KV_TYPE_NONE, &raw, &m, &vlen);
	if (rc == -ENOENT) {
		uint64_t exp = 0;
		rc = empty_get_exp(ks, k, &t, &exp);
		if (rc == 0) {
			out->type = t;
			out->empty = true;
			out->expire_ms = exp;
		} else if (rc == -ENOENT) {
			/* The first element may have been written between the two
			 * reads: it creates the metadata and drops the empty record
			 * in one batch, so a second look at the metadata sees it. */
			rc = ks_meta_head(ks, k, KV_TYPE_NONE, &raw, &m, &vlen);
		}
	}
	if (rc == 0 && !out->empty) {
		info_from_meta(out, &m);
		if (enc_type_is_inline(m.type))
			out->size = vlen - (uint64_t)((const char *)m.tail - raw.data);
	}
	if (rc == -EUCLEAN && raw.len > 0) {
		/* The type its flags byte names, if any: the file system shows
		 * the key in that shape so that `rm` / `rm -r` can delete it. */
		out->type = enc_flags_type((uint8_t)raw.data[0]);
	}
	buf_release(&raw);
	return rc;
}

int ks_del(struct keyspace *ks, const struct ks_key *k)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = store_batch_new(ks->st);
	struct enc_meta m;
	enum kv_type t;
	bool live, empty;
	int rc;

	if (!b)
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_NONE, &raw, &m);
	/* A corrupt record can be deleted too: that is how it gets repaired. */
	live = rc == 0 || rc == -EUCLEAN;
	if (rc && !live && rc != -ENOENT)
		goto out;
	rc = empty_get(ks, k, &t);
	empty = rc == 0 || rc == -EUCLEAN;
	if (rc && !empty && rc != -ENOENT)
		goto out;
	if (!live && !empty) {
		rc = -ENOENT;
		goto out;
	}
	rc = 0;
	if (live)
		rc = ks_batch_del_meta(ks, b, k);
	if (!rc && empty)
		rc = ks_batch_empty_del(ks, b, k);
	if (!rc)
		rc = ks_attr_batch_drop_key(ks, b, k);
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
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
	it = prefix_iter(ks, cf, &prefix);
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
	struct store_batch *b = NULL;
	struct enc_meta m;
	enum store_cf cfs[2];
	enum kv_type t;
	int rc, ncf;

	if (ks_key_eq(from, to)) {
		struct ks_info info;
		return ks_lookup(ks, from, &info);
	}
	b = store_batch_new(ks->st);
	if (!b)
		return -ENOMEM;
	ks_lock2(ks, from, to);
	rc = ks_meta_get(ks, from, KV_TYPE_NONE, &raw, &m);
	if (rc == -ENOENT) {
		/* An empty collection moves as its record, pending expiry and
		 * attributes included. */
		uint64_t exp = 0;
		rc = empty_get_exp(ks, from, &t, &exp);
		if (!rc)
			rc = ks_batch_empty_del(ks, b, from);
		if (!rc)
			rc = ks_batch_del_meta(ks, b, to);
		if (!rc)
			rc = ks_batch_empty_del(ks, b, to);
		if (!rc)
			rc = empty_put(ks, b, wctx_find(to), to, t, exp);
		if (!rc)
			rc = ks_attr_batch_rename(ks, b, from, to, 0);
		goto write;
	}
	if (rc)
		goto out;
	ncf = sub_cfs(m.type, cfs);
	for (int i = 0; i < ncf && !rc; i++)
		rc = rename_cf(ks, b, cfs[i], from, to, m.version);
	if (!rc)
		rc = ks_batch_del_meta(ks, b, from);
	if (!rc)
		rc = ks_batch_empty_del(ks, b, from);
	if (!rc)
		rc = ks_batch_empty_del(ks, b, to);
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
	/* The target's namespace gains a name (the source's loses one:
	 * ks_write sees that key go). */
	if (!rc && !is_reserved_ns(to->ns, to->nslen))
		rc = ks_attr_batch_ns_touch(b, to->ns, to->nslen);
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock2(ks, from, to);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&key);
	return rc;
}

int ks_expire(struct keyspace *ks, const struct ks_key *k, uint64_t expire_ms)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = store_batch_new(ks->st);
	struct enc_meta m;
	int rc;

	if (!b)
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_NONE, &raw, &m);
	if (rc == -ENOENT) {
		/* An empty collection keeps the expiry pending in its record
		 * until its first entry; one in the past removes it. */
		enum kv_type t;
		rc = empty_get(ks, k, &t);
		if (!rc && expire_ms != 0 && expire_ms <= now_ms()) {
			rc = ks_batch_empty_del(ks, b, k);
			if (!rc)
				rc = ks_attr_batch_drop_key(ks, b, k);
		} else if (!rc) {
			rc = empty_put(ks, b, wctx_find(k), k, t, expire_ms);
		}
		if (!rc)
			rc = ks_write(ks, b);
		goto out;
	}
	if (rc)
		goto out;
	if (expire_ms != 0 && expire_ms <= now_ms()) {
		/* A time in the past deletes the key, as Redis does. */
		rc = ks_batch_del_meta(ks, b, k);
	} else {
		/* Everything else stays, including the v0/v1 encoding. */
		m.expire_ms = expire_ms;
		rc = ks_batch_put_meta(ks, b, k, &m, m.tail, m.tail_len);
	}
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

/* ---- Empty collections --------------------------------------------- */

/* Is k live (0 = no, 1 = yes, <0 error)? */
static int key_live(struct keyspace *ks, const struct ks_key *k)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_meta_get(ks, k, KV_TYPE_NONE, &raw, &m);
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
	struct store_batch *b = store_batch_new(ks->st);
	enum kv_type cur;
	int rc;

	if (!b)
		return -ENOMEM;
	ks_lock(ks, k);
	rc = key_live(ks, k);
	if (rc < 0)
		goto out;
	if (rc == 1) {
		rc = want_record ? -ENOTEMPTY : -EEXIST;
		goto out;
	}
	uint64_t exp = 0;
	rc = empty_get_exp(ks, k, &cur, &exp);
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
		rc = ks_batch_empty_del(ks, b, k);
		if (!rc)
			rc = ks_attr_batch_drop_key(ks, b, k);
	} else {
		/* A new empty collection starts without attributes of an old
		 * key of that name; a retyped one keeps its pending expiry. */
		rc = empty_put(ks, b, wctx_find(k), k, t, want_record ? exp : 0);
		if (!rc && !want_record)
			rc = ks_attr_batch_drop_key(ks, b, k);
	}
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	return rc;
}

int ks_empty_create(struct keyspace *ks, const struct ks_key *k, enum kv_type t)
{
	if (!type_can_be_empty(t))
		return -EINVAL;
	return empty_change(ks, k, t, false, false);
}

int ks_empty_retype(struct keyspace *ks, const struct ks_key *k, enum kv_type t)
{
	if (!type_can_be_empty(t))
		return -EINVAL;
	return empty_change(ks, k, t, true, false);
}

int ks_empty_remove(struct keyspace *ks, const struct ks_key *k)
{
	return empty_change(ks, k, KV_TYPE_NONE, true, true);
}

/* ---- Namespaces ---------------------------------------------------- */

static int ns_check(const char *ns, size_t n)
{
	if (!ns || n < 1 || n > ENC_MAX_NS)
		return -EINVAL;
	if (is_reserved_ns(ns, n))
		return -EPERM;
	return 0;
}

/* Does any record under `prefix` (metadata CF) count as live? 1, 0, <0.
 * `string_only`: reserved records, which must be live strings. */
static int prefix_has_live(struct keyspace *ks, const struct buf *prefix, bool string_only)
{
	struct store_iter *it = prefix_iter(ks, STORE_CF_METADATA, prefix);
	uint64_t now = now_ms();
	struct enc_meta m;
	int found = 0;

	if (!it)
		return -ENOMEM;
	for (store_iter_seek(it, prefix->data, prefix->len); store_iter_valid(it);
	     store_iter_next(it)) {
		size_t vn;
		const void *v = store_iter_value(it, &vn);
		if (meta_value_live(v, vn, now, &m) && (!string_only || m.type == KV_TYPE_STRING)) {
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
	int rc = res_prefix(&prefix, RES_EMPTY, ns, n, true);
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
	int rc = ns_record_key(ns, n, &key);
	if (!rc)
		rc = res_get(ks, &key, &raw, &m);
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
}

int ks_ns_create(struct keyspace *ks, const char *ns, size_t n, const struct ks_attr_change *c)
{
	struct buf key = BUF_INIT, val = BUF_INIT;
	struct store_batch *b = NULL;
	struct ks_key lk;
	int rc = ns_check(ns, n);
	if (rc)
		return rc;
	rc = ns_record_key(ns, n, &key);
	if (!rc)
		rc = res_value(&val, "", 0);
	if (!rc && !(b = store_batch_new(ks->st)))
		rc = -ENOMEM;
	if (rc)
		goto out;
	ns_lock_key(&lk, &key);
	ks_lock(ks, &lk);
	rc = ks_ns_exists(ks, ns, n);
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
			rc = ks_write(ks, b);
	}
	ks_unlock(ks, &lk);
out:
	store_batch_free(b);
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
	struct store_batch *b = NULL;
	struct ks_key lk;
	int rc = ns_check(ns, n);
	if (rc)
		return rc;
	if (is_default_ns(ns, n)) {
		LOG_ERR("the default namespace %s always exists and cannot be removed",
			KS_DEFAULT_NS);
		return -EBUSY;
	}
	rc = ns_record_key(ns, n, &key);
	if (!rc && !(b = store_batch_new(ks->st)))
		rc = -ENOMEM;
	if (rc)
		goto out;
	ns_lock_key(&lk, &key);
	ks_lock(ks, &lk);
	rc = ns_has_keys(ks, ns, n);
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
			rc = ks_write(ks, b);
	}
	ks_unlock(ks, &lk);
out:
	store_batch_free(b);
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
	if (res_prefix(&it->recs_prefix, RES_NAMESPACE, NULL, 0, false) ||
	    buf_set(&it->after, after, after ? alen : 0))
		goto fail;
	it->meta = store_iter_new(ks->st, STORE_CF_METADATA, NULL, 0, NULL, 0);
	it->recs = prefix_iter(ks, STORE_CF_METADATA, &it->recs_prefix);
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
		if (!is_reserved_ns(ns, (size_t)L)) {
			/* Scan this namespace until one live key shows up. */
			if ((rc = buf_set(&it->cand[L], ns, (size_t)L)))
				return rc;
			do {
				size_t vn;
				const void *v = store_iter_value(mi, &vn);
				if (meta_value_live(v, vn, now, NULL)) {
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
		if (n < 1 || n > ENC_MAX_NS || is_reserved_ns(name, n))
			continue;
		struct enc_meta m;
		const void *v = store_iter_value(ri, &vn);
		if (!meta_value_live(v, vn, now, &m) || m.type != KV_TYPE_STRING)
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
	    res_prefix(&ep, RES_EMPTY, ns, nslen, true))
		goto fail;
	it->live_plen = lp.len;
	it->empty_plen = ep.len;
	it->live = prefix_iter(ks, STORE_CF_METADATA, &lp);
	it->empty = prefix_iter(ks, STORE_CF_METADATA, &ep);
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
			struct ks_key k = {key + 1, (uint8_t)key[0], key + min, kn - min, NULL};
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
		if (kn >= min && meta_value_live(v, vn, now, &m) && m.type == KV_TYPE_STRING &&
		    empty_type(&m) != KV_TYPE_NONE && !empty_expired(&m, now))
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
		info_from_meta(info, &m);
		rc = buf_set(&it->out, lk, ln);
	} else {
		size_t vn;
		struct enc_meta m;
		const void *v = store_iter_value(it->empty, &vn);
		(void)enc_meta_decode(v, vn, &m);
		memset(info, 0, sizeof(*info));
		info->type = empty_type(&m);
		info->empty = true;
		info->expire_ms = empty_expire(&m);
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

/* ---- Sub-key iteration (HGETALL, SMEMBERS, ... in byte order) ----- */

struct ks_sub_iter {
	struct store_iter *si; /* NULL: nothing to iterate */
	size_t plen;	       /* sub-key prefix length */
	bool started;
};

struct ks_sub_iter *ks_sub_iter_new(struct keyspace *ks, const struct ks_key *k, enum kv_type want,
				    const void *after, size_t alen, int *err)
{
	struct buf raw = BUF_INIT, prefix = BUF_INIT, upper = BUF_INIT;
	struct ks_sub_iter *it = calloc(1, sizeof(*it));
	struct enc_meta m;
	bool bounded;
	int rc;

	if (!it) {
		rc = -ENOMEM;
		goto out;
	}
	rc = ks_meta_get(ks, k, want, &raw, &m);
	if (rc == -ENOENT) {
		rc = 0; /* a missing key iterates nothing */
		goto out;
	}
	if (rc)
		goto out;
	rc = ks_sub_key(ks, k, m.version, NULL, 0, &prefix);
	if (!rc)
		rc = buf_set(&upper, prefix.data, prefix.len);
	if (rc)
		goto out;
	it->plen = prefix.len;
	bounded = enc_prefix_successor(&upper);
	it->si = store_iter_new(ks->st, STORE_CF_DEFAULT, prefix.data, prefix.len,
				bounded ? upper.data : NULL, bounded ? upper.len : 0);
	if (!it->si) {
		rc = -ENOMEM;
		goto out;
	}
	if (after) {
		if ((rc = buf_add(&prefix, after, alen)))
			goto out;
		store_iter_seek(it->si, prefix.data, prefix.len);
		if (store_iter_valid(it->si)) {
			size_t kn;
			const char *key = store_iter_key(it->si, &kn);
			if (kn == prefix.len && memcmp(key, prefix.data, kn) == 0)
				store_iter_next(it->si);
		}
	} else {
		store_iter_seek(it->si, prefix.data, prefix.len);
	}
out:
	if (rc) {
		ks_sub_iter_free(it);
		it = NULL;
	}
	*err = rc;
	buf_release(&raw);
	buf_release(&prefix);
	buf_release(&upper);
	return it;
}

int ks_sub_iter_next(struct ks_sub_iter *it, const char **f, size_t *fn, const char **v, size_t *vn)
{
	if (!it->si)
		return 0;
	/* The slices handed out last time stay valid until this move. */
	if (it->started && store_iter_valid(it->si))
		store_iter_next(it->si);
	it->started = true;
	if (!store_iter_valid(it->si))
		return store_iter_status(it->si);
	size_t kn;
	const char *key = store_iter_key(it->si, &kn);
	*f = key + it->plen;
	*fn = kn - it->plen;
	*v = store_iter_value(it->si, vn);
	return 1;
}

void ks_sub_iter_free(struct ks_sub_iter *it)
{
	if (!it)
		return;
	store_iter_free(it->si);
	free(it);
}
