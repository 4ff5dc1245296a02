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
 *   attributes      "@" ...                                  see src/keyspace/ks_attr.c
 *
 * An empty collection may carry a pending expiry (absolute Unix ms) after
 * its type name: Kvrocks keeps no expiry for empty collections, so the
 * record holds it until the first entry makes the key live, in the same
 * batch (ks_txn_commit). A pending expiry that passes
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
#include "keyspace/keyspace.h"

#include "keyspace/ks_int.h"
#include "engine/names.h"
#include "engine/store.h"

#include <errno.h>
#include <stdarg.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* ---- Open, close, locks -------------------------------------------- */

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

struct store_snap *ks_snap_new(struct keyspace *ks)
{
	return store_snap_new(ks->st);
}

void ks_snap_free(struct keyspace *ks, struct store_snap *snap)
{
	store_snap_free(ks->st, snap);
}

bool ks_cluster(const struct keyspace *ks)
{
	return ks->cluster;
}

unsigned ks_stripe(const struct ks_key *k)
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

int ks_sub_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, int cf,
	       const void *sub, size_t sn, struct buf *out)
{
	struct buf sk = BUF_INIT;
	int rc = ks_sub_key(ks, k, version, sub, sn, &sk);
	if (!rc)
		rc = store_get_at(ks->st, k->snap, (enum store_cf)cf, sk.data, sk.len, out);
	buf_release(&sk);
	return rc;
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

bool ks_is_reserved_ns(const void *ns, size_t n)
{
	return n == RES_NSLEN && memcmp(ns, RES_NS, n) == 0;
}

/* The write-context entry of k, if this thread holds its lock. */

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
	return meta_read(ks, NULL, k, want, raw, m, vlen);
}

int ks_meta_get(struct keyspace *ks, const struct ks_key *k, enum kv_type want, struct buf *raw,
		struct enc_meta *m)
{
	return meta_read(ks, NULL, k, want, raw, m, NULL);
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
		out->snap = k->snap; /* a dup of a read at a snapshot reads there too */
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
		rc = store_value_get_at(ks->st, k->snap, STORE_CF_METADATA, key.data, key.len, v);
	if (!rc) {
		size_t n;
		const char *p = store_value_data(*v, &n);
		rc = meta_check(NULL, k, want, p, n, m);
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
		rc = store_get_head_at(ks->st, k->snap, STORE_CF_METADATA, key.data, key.len,
				       KS_META_HEAD, raw, &full);
		/* A long record of a collection type: read it whole. */
		if (!rc && full > raw->len && raw->len > 0 &&
		    !enc_type_is_inline((enum kv_type)(raw->data[0] & ENC_FLAG_TYPE_MASK)))
			rc = store_get_at(ks->st, k->snap, STORE_CF_METADATA, key.data, key.len,
					  raw);
	} else {
		rc = store_get_at(ks->st, k->snap, STORE_CF_METADATA, key.data, key.len, raw);
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
bool ks_meta_value_live(const void *v, size_t n, uint64_t now, struct enc_meta *m)
{
	struct enc_meta tmp;
	if (!m)
		m = &tmp;
	return enc_meta_decode(v, n, m) == 0 && !enc_meta_is_expired(m, now);
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
	}
	buf_release(&key);
	buf_release(&hdr);
	return rc;
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
	}
	buf_release(&key);
	return rc;
}

/* ---- The reserved namespace ---------------------------------------- */

/* Metadata-CF key of a reserved record: 06 "__kvfs" tag [ns_len] ns. */
int ks_res_prefix(struct buf *out, char tag, const void *ns, size_t nslen, bool with_len)
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
int ks_key_rank(struct keyspace *ks, struct buf *out, const void *key, size_t klen)
{
	int rc = 0;
	if (ks->cluster)
		rc = buf_add_be16(out, enc_slot(key, klen));
	if (!rc)
		rc = buf_add(out, key, klen);
	return rc;
}

int ks_empty_key(struct keyspace *ks, const struct ks_key *k, struct buf *out)
{
	if (k->nslen < 1 || k->nslen > ENC_MAX_NS)
		return -EINVAL;
	int rc = ks_res_prefix(out, RES_EMPTY, k->ns, k->nslen, true);
	if (!rc)
		rc = ks_key_rank(ks, out, k->key, k->klen);
	return rc;
}

int ks_ns_record_key(const char *ns, size_t n, struct buf *out)
{
	return ks_res_prefix(out, RES_NAMESPACE, ns, n, false);
}

/* A v1 string metadata value with no expiry holding `payload`. */
int ks_res_value(struct buf *out, const char *payload, size_t n)
{
	struct enc_meta m = {.type = KV_TYPE_STRING, .v1 = true};
	buf_reset(out);
	int rc = enc_meta_encode(out, &m);
	if (!rc)
		rc = buf_add(out, payload, n);
	return rc;
}

/* Read a reserved record; 0 with *m decoded (tail = payload), -ENOENT. */
int ks_res_get(struct keyspace *ks, const struct buf *key, struct buf *raw, struct enc_meta *m)
{
	int rc = store_get(ks->st, STORE_CF_METADATA, key->data, key->len, raw);
	if (rc)
		return rc;
	if (!ks_meta_value_live(raw->data, raw->len, now_ms(), m) || m->type != KV_TYPE_STRING)
		return -ENOENT;
	return 0;
}

/* Types a key can be remembered empty as: every collection, and JSON (a
 * file typed json before its first document). An empty string is a
 * string record. */
bool ks_type_can_be_empty(enum kv_type t)
{
	return t > KV_TYPE_NONE && t <= KV_TYPE_MAX && t != KV_TYPE_STRING;
}

/* The type of a remembered empty collection named by a payload: the
 * name, up to a NUL that starts a pending expiry. */
enum kv_type ks_empty_type(const struct enc_meta *m)
{
	const char *p = (const char *)m->tail;
	const char *nul = memchr(p, 0, m->tail_len);
	size_t n = nul ? (size_t)(nul - p) : m->tail_len;
	enum kv_type t = enc_type_from_name(p, n);
	return ks_type_can_be_empty(t) ? t : KV_TYPE_NONE;
}

/* The pending expiry of an empty-collection payload (0: none). */
uint64_t ks_empty_expire(const struct enc_meta *m)
{
	const char *p = (const char *)m->tail;
	const char *nul = memchr(p, 0, m->tail_len);
	if (!nul || (size_t)(p + m->tail_len - nul) != 9)
		return 0;
	return get_be64(nul + 1);
}

bool ks_empty_expired(const struct enc_meta *m, uint64_t now)
{
	uint64_t e = ks_empty_expire(m);
	return e && e <= now;
}

/* 0 and *t (and *expire, if asked) if k is remembered as an empty
 * collection, -ENOENT, <0. */
int ks_empty_get(struct keyspace *ks, struct ks_track *w, const struct ks_key *k, enum kv_type *t,
		 uint64_t *expire)
{
	struct buf key = BUF_INIT, raw = BUF_INIT;
	struct enc_meta m;
	int rc = ks_empty_key(ks, k, &key);
	if (!rc)
		rc = ks_res_get(ks, &key, &raw, &m);
	if (!rc && ks_empty_expired(&m, now_ms()))
		rc = -ENOENT;
	if (!rc && w)
		w->empty_seen = true;
	if (!rc && expire)
		*expire = ks_empty_expire(&m);
	if (!rc) {
		*t = ks_empty_type(&m);
		if (*t == KV_TYPE_NONE) {
			rc = ks_corrupt(k,
					"an empty-collection record of an unknown type (%zu bytes)",
					m.tail_len);
		}
	}
	buf_release(&key);
	buf_release(&raw);
	return rc;
}

int ks_track_empty_put(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		       const struct ks_key *k, enum kv_type t)
{
	return ks_empty_put(ks, b, w, k, t, 0);
}

/*
 * Also records k's namespace ("N" | ns): a namespace holding an empty
 * collection must exist (be listed, and refuse rmdir) even when it has no
 * live key, and the namespace stream of ks_ns_iter then covers it.
 */
int ks_empty_put(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		 const struct ks_key *k, enum kv_type t, uint64_t expire)
{
	struct buf key = BUF_INIT, val = BUF_INIT;
	const char *name = enc_type_name(t);
	int rc = ks_empty_key(ks, k, &key);
	if (!rc)
		rc = ks_res_value(&val, name, strlen(name));
	if (!rc && expire) {
		rc = buf_add_u8(&val, 0);
		if (!rc)
			rc = buf_add_be64(&val, expire);
	}
	if (!rc)
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
	if (!rc && w)
		w->empty_made = true;
	if (!rc && !ks_is_reserved_ns(k->ns, k->nslen)) {
		rc = ks_ns_record_key(k->ns, k->nslen, &key);
		if (!rc)
			rc = ks_res_value(&val, "", 0);
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
int ks_track_empty_del(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		       const struct ks_key *k)
{
	struct buf key = BUF_INIT, raw = BUF_INIT;
	int rc = ks_empty_key(ks, k, &key);
	if (!rc) {
		rc = store_get(ks->st, STORE_CF_METADATA, key.data, key.len, &raw);
		if (rc == 0) {
			store_batch_delete(b, STORE_CF_METADATA, key.data, key.len);
			/* Its pending expiry goes to the key its first entry makes. */
			struct enc_meta m;
			if (w)
				w->was_empty = w->empty_seen = true;
			if (w && ks_meta_value_live(raw.data, raw.len, now_ms(), &m) &&
			    m.type == KV_TYPE_STRING && !ks_empty_expired(&m, now_ms()))
				w->pending_expire = ks_empty_expire(&m);
		} else if (rc == -ENOENT) {
			rc = 0;
		}
	}
	buf_release(&key);
	buf_release(&raw);
	return rc;
}

/* An iterator over every key that starts with `prefix`. */
struct store_iter *ks_prefix_iter(struct keyspace *ks, enum store_cf cf, const struct buf *prefix)
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

void ks_info_from_meta(struct ks_info *out, const struct enc_meta *m)
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
		rc = ks_empty_get(ks, NULL, k, &t, &exp);
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
		ks_info_from_meta(out, &m);
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

/* ---- Sub-key iteration (HGETALL, SMEMBERS, ... in byte order) ----- */

struct ks_sub_iter {
	struct store_iter *si; /* NULL: nothing to iterate */
	size_t plen;	       /* sub-key prefix length */
	bool reverse;
	bool started;
	struct buf name; /* ns | key: k points into it */
	struct ks_key k;
};

/* Position it->si at the first sub-key of its direction, or at the
 * first strictly after (inclusive: at or after) prefix|after. prefix
 * is the version's sub-key prefix; it is extended. */
static int sub_iter_seek(struct ks_sub_iter *it, struct buf *prefix, const void *after, size_t alen,
			 bool inclusive)
{
	if (!after) {
		if (it->reverse)
			store_iter_seek_last(it->si);
		else
			store_iter_seek_first(it->si);
		return 0;
	}
	int rc = buf_add(prefix, after, alen);
	if (rc)
		return rc;
	if (it->reverse)
		store_iter_seek_for_prev(it->si, prefix->data, prefix->len);
	else
		store_iter_seek(it->si, prefix->data, prefix->len);
	if (!inclusive && store_iter_valid(it->si)) {
		size_t kn;
		const char *key = store_iter_key(it->si, &kn);
		if (kn == prefix->len && memcmp(key, prefix->data, kn) == 0) {
			if (it->reverse)
				store_iter_prev(it->si);
			else
				store_iter_next(it->si);
		}
	}
	return 0;
}

struct ks_sub_iter *ks_sub_iter_open(struct keyspace *ks, const struct ks_key *k, enum kv_type want,
				     const struct ks_sub_iter_opts *o, int *err)
{
	struct buf raw = BUF_INIT, prefix = BUF_INIT, upper = BUF_INIT;
	struct ks_sub_iter *it = calloc(1, sizeof(*it));
	struct enc_meta m;
	bool bounded;
	int rc;

	if (o->meta)
		memset(o->meta, 0, sizeof(*o->meta));
	if (!it) {
		rc = -ENOMEM;
		goto out;
	}
	it->reverse = o->reverse;
	buf_init(&it->name);
	if ((rc = ks_key_dup(k, &it->name, &it->k)))
		goto out;
	rc = ks_meta_get(ks, k, want, &raw, &m);
	if (rc == -ENOENT) {
		rc = 0; /* a missing key iterates nothing */
		goto out;
	}
	if (rc)
		goto out;
	if (o->meta) {
		*o->meta = m;
		o->meta->tail = NULL;
		o->meta->tail_len = 0;
	}
	rc = ks_sub_key(ks, k, m.version, NULL, 0, &prefix);
	if (!rc)
		rc = buf_set(&upper, prefix.data, prefix.len);
	if (rc)
		goto out;
	it->plen = prefix.len;
	bounded = enc_prefix_successor(&upper);
	it->si = store_iter_new_at(ks->st, k->snap, (enum store_cf)o->cf, prefix.data, prefix.len,
				   bounded ? upper.data : NULL, bounded ? upper.len : 0);
	if (!it->si) {
		rc = -ENOMEM;
		goto out;
	}
	rc = sub_iter_seek(it, &prefix, o->after, o->alen, o->inclusive);
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

struct ks_sub_iter *ks_sub_iter_new(struct keyspace *ks, const struct ks_key *k, enum kv_type want,
				    const void *after, size_t alen, int *err)
{
	struct ks_sub_iter_opts o = {.after = after, .alen = alen};
	return ks_sub_iter_open(ks, k, want, &o, err);
}

int ks_sub_iter_next(struct ks_sub_iter *it, const char **f, size_t *fn, const char **v, size_t *vn)
{
	if (!it->si)
		return 0;
	/* The slices handed out last time stay valid until this move. */
	if (!store_iter_step(it->si, it->reverse, &it->started))
		return store_iter_status(it->si);
	size_t kn;
	const char *key = store_iter_key(it->si, &kn);
	*f = key + it->plen;
	*fn = kn - it->plen;
	*v = store_iter_value(it->si, vn);
	return 1;
}

const struct ks_key *ks_sub_iter_key(const struct ks_sub_iter *it)
{
	return &it->k;
}

void ks_sub_iter_free(struct ks_sub_iter *it)
{
	if (!it)
		return;
	store_iter_free(it->si);
	buf_release(&it->name);
	free(it);
}

int ks_meta_copy(struct keyspace *ks, const struct ks_key *k, enum kv_type want, struct enc_meta *m,
		 void *tail, size_t cap)
{
	struct store_value *v;
	int rc = ks_meta_pin(ks, k, want, &v, m);
	if (rc)
		return rc;
	if (m->tail_len > cap)
		m->tail_len = cap;
	if (m->tail_len)
		memcpy(tail, m->tail, m->tail_len);
	m->tail = tail;
	store_value_free(v);
	return 0;
}

/* ---- One sub-key of a live key --------------------------------------- */

int ks_version_get(struct keyspace *ks, const struct ks_key *k, enum kv_type want,
		   uint64_t *version)
{
	struct enc_meta m;
	uint8_t none[1];
	int rc = ks_meta_copy(ks, k, want, &m, none, 0);
	if (!rc)
		*version = m.version;
	return rc;
}

int ks_sub_len(struct keyspace *ks, const struct ks_key *k, uint64_t version, int cf,
	       const void *sub, size_t sn, uint64_t *len)
{
	struct buf sk = BUF_INIT;
	size_t full = 0;
	int rc = ks_sub_key(ks, k, version, sub, sn, &sk);
	if (!rc)
		rc = store_get_head_at(ks->st, k->snap, (enum store_cf)cf, sk.data, sk.len, 0, NULL,
				       &full);
	buf_release(&sk);
	if (!rc)
		*len = full;
	return rc;
}

int ks_sub_exists(struct keyspace *ks, const struct ks_key *k, uint64_t version, int cf,
		  const void *sub, size_t sn)
{
	uint64_t len;
	int rc = ks_sub_len(ks, k, version, cf, sub, sn, &len);
	if (rc == -ENOENT)
		return 0;
	return rc ? rc : 1;
}

int ks_sub_has(struct keyspace *ks, const struct ks_key *k, enum kv_type want, const void *sub,
	       size_t sn)
{
	uint64_t version;
	int rc = ks_version_get(ks, k, want, &version);
	if (rc)
		return rc == -ENOENT ? 0 : rc;
	return ks_sub_exists(ks, k, version, STORE_CF_DEFAULT, sub, sn);
}
