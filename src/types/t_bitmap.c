/*
 * t_bitmap: Kvrocks's native bitmap type (kvrocks-encoding.md 6.7).
 * Metadata (type 6, size = length in bytes) in the metadata CF; the bits
 * in 1024-byte fragments in the default CF:
 *
 *   ns|key_len|key|version|"0"     -> bytes [0, 1024)       1..1024 bytes
 *   ns|key_len|key|version|"1024"  -> bytes [1024, 2048)
 *   ns|key_len|key|version|"10240" -> bytes [10240, 11264)  (sorts before "2048")
 *
 * Bit b lives in fragment (b / 8192) * 1024, byte (b / 8) % 1024, at
 * (byte >> (b % 8)) & 1 (LSB-first; Redis order is MSB-first, so the
 * bytes a user sees are the stored bytes bit-reversed). Bytes past a
 * fragment's length and missing fragments are zero; size may exceed what
 * the fragments hold. Layer: types.
 *
 * Mutations are write transactions (ks_txn.h): the key's lock from the
 * metadata read to the one batch write; updates keep the stored metadata
 * encoding (v0 stays v0); a new key gets fresh v1 metadata and loses its
 * empty-collection record in the same batch. Readers open one RocksDB
 * iterator (a snapshot) under the lock together with the metadata, so
 * what they return is consistent.
 */
#include "types/t_bitmap.h"

#include "keyspace/ks_txn.h"
#include "types/t_string.h"
#include "engine/store.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define FRAG BITMAP_FRAGMENT_BYTES
/* The keyspace refuses a stored size over this as corrupt. */
_Static_assert(BITMAP_MAX_BYTES == ENC_BITMAP_MAX_BYTES, "bitmap size bound");
/* Up to this many fragments a reader seeks to each; past it, it scans
 * every fragment of the key once (their key order is not numeric). */
#define SEEK_MAX_FRAGS 64

/* Reverse the bits of a byte: stored (LSB-first) <-> Redis order. */
static uint8_t rev8(uint8_t b)
{
	b = (uint8_t)((b & 0xf0) >> 4 | (b & 0x0f) << 4);
	b = (uint8_t)((b & 0xcc) >> 2 | (b & 0x33) << 2);
	b = (uint8_t)((b & 0xaa) >> 1 | (b & 0x55) << 1);
	return b;
}

/* The sub-key of the fragment starting at byte fo: decimal ASCII. Its
 * length. */
#define FRAG_SUB 24
static size_t frag_sub(uint64_t fo, char sub[FRAG_SUB])
{
	return (size_t)snprintf(sub, FRAG_SUB, "%" PRIu64, fo);
}

/* Read a fragment (under the lock). 0, -ENOENT, -EIO. */
static int frag_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, uint64_t fo,
		    struct buf *out)
{
	char sub[FRAG_SUB];
	size_t sn = frag_sub(fo, sub);
	return ks_sub_get(ks, k, version, STORE_CF_DEFAULT, sub, sn, out);
}

/* Stage the fragment at fo of k's version in t. */
static void frag_put(struct ks_txn *t, const struct ks_key *k, uint64_t fo, const void *v, size_t n)
{
	char sub[FRAG_SUB];
	ks_txn_sub_put(t, k, STORE_CF_DEFAULT, sub, frag_sub(fo, sub), v, n);
}

/* Kvrocks's growth rule for a fragment of length len that must hold byte
 * index idx (idx >= len): exactly idx + 1 if that is at least double,
 * else double, capped at 1024. */
static size_t frag_grow(size_t len, size_t idx)
{
	if (idx >= len * 2)
		return idx + 1;
	if (len * 2 > FRAG)
		return FRAG;
	return len * 2;
}

/* ---- Consistent reads ----------------------------------------------- */

/* The metadata (its header: m.tail is not kept) and a snapshot iterator
 * over the fragments of a key. */
struct bm_view {
	struct enc_meta m;
	struct buf prefix; /* sub-key prefix of the version */
	struct store_iter *si;
};

/* The view of the version m of k, read under k's lock (the caller's
 * transaction). Close with view_close in every case. */
static int view_iter(struct keyspace *ks, const struct ks_key *k, const struct enc_meta *m,
		     struct bm_view *v)
{
	struct buf upper = BUF_INIT;
	v->m = *m;
	v->m.tail = NULL;
	v->m.tail_len = 0;
	int rc = ks_sub_key(ks, k, m->version, NULL, 0, &v->prefix);
	if (!rc)
		rc = buf_set(&upper, v->prefix.data, v->prefix.len);
	if (!rc) {
		bool bounded = enc_prefix_successor(&upper);
		v->si = store_iter_new_at(ks_store(ks), k->snap, STORE_CF_DEFAULT, v->prefix.data,
					  v->prefix.len, bounded ? upper.data : NULL,
					  bounded ? upper.len : 0);
		if (!v->si)
			rc = -ENOMEM;
	}
	buf_release(&upper);
	return rc;
}

static void view_init(struct bm_view *v)
{
	memset(v, 0, sizeof(*v));
	buf_init(&v->prefix);
}

/* The view of k, its metadata and iterator opened under its lock. 0,
 * -ENOENT (missing key), -KV_EWRONGTYPE, ... Close with view_close in
 * every case. */
static int view_open(struct keyspace *ks, const struct ks_key *k, struct bm_view *v)
{
	struct ks_txn t;
	struct enc_meta *m;
	view_init(v);
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_BITMAP, &m);
	if (!rc)
		rc = view_iter(ks, k, m, v);
	return ks_txn_end(&t, rc);
}

static void view_close(struct bm_view *v)
{
	store_iter_free(v->si);
	buf_release(&v->prefix);
}

/* Called with each stored fragment that may overlap the bytes asked for:
 * its start offset and its bytes (at most 1024, borrowed). */
typedef int (*frag_fn)(void *arg, uint64_t fo, const uint8_t *d, size_t n);

/* The fragment start of the iterator's current key. 0 or -EUCLEAN. */
static int view_frag_offset(struct bm_view *v, uint64_t *fo)
{
	size_t kn;
	const char *key = store_iter_key(v->si, &kn);
	if (parse_u64(key + v->prefix.len, kn - v->prefix.len, fo) == 0 && *fo % FRAG == 0)
		return 0;
	LOG_ERR("bitmap: a fragment sub-key that is not a decimal multiple of 1024 (%zu bytes)",
		kn - v->prefix.len);
	return -EUCLEAN;
}

/* Visit the stored fragments overlapping bytes [lo, hi), in any order. */
static int view_visit(struct bm_view *v, uint64_t lo, uint64_t hi, frag_fn fn, void *arg)
{
	struct buf key = BUF_INIT;
	uint64_t first = lo / FRAG * FRAG, fo;
	int rc = 0;

	if (lo >= hi)
		return 0;
	if ((hi - 1) / FRAG - lo / FRAG < SEEK_MAX_FRAGS) {
		for (fo = first; fo < hi && !rc; fo += FRAG) {
			char sub[FRAG_SUB];
			size_t kn, vn;
			const char *cur;
			const void *val;
			if ((rc = buf_set(&key, v->prefix.data, v->prefix.len)) ||
			    (rc = buf_add(&key, sub, frag_sub(fo, sub))))
				break;
			store_iter_seek(v->si, key.data, key.len);
			if (!store_iter_valid(v->si)) {
				rc = store_iter_status(v->si);
				continue;
			}
			cur = store_iter_key(v->si, &kn);
			if (kn != key.len || memcmp(cur, key.data, kn) != 0)
				continue;
			val = store_iter_value(v->si, &vn);
			rc = fn(arg, fo, val, vn > FRAG ? FRAG : vn);
		}
		buf_release(&key);
		return rc;
	}
	for (store_iter_seek_first(v->si); store_iter_valid(v->si) && !rc; store_iter_next(v->si)) {
		size_t vn;
		const void *val;
		if ((rc = view_frag_offset(v, &fo)))
			break;
		if (fo + FRAG <= lo || fo >= hi)
			continue;
		val = store_iter_value(v->si, &vn);
		rc = fn(arg, fo, val, vn > FRAG ? FRAG : vn);
	}
	if (!rc)
		rc = store_iter_status(v->si);
	return rc;
}

/* Copy Redis-order bytes of [lo, hi) into out (pre-zeroed). */
struct read_ctx {
	uint8_t *out;
	uint64_t lo, hi;
};

static int read_frag(void *arg, uint64_t fo, const uint8_t *d, size_t n)
{
	struct read_ctx *c = arg;
	uint64_t a = fo > c->lo ? fo : c->lo, e = fo + n < c->hi ? fo + n : c->hi;
	for (uint64_t p = a; p < e; p++)
		c->out[p - c->lo] = rev8(d[p - fo]);
	return 0;
}

/* out = Redis-order bytes [lo, hi) of the view (hi <= size). */
static int view_read(struct bm_view *v, uint64_t lo, uint64_t hi, struct buf *out)
{
	struct read_ctx c;
	int rc;

	buf_reset(out);
	if (lo >= hi)
		return 0;
	if ((rc = buf_resize(out, (size_t)(hi - lo))))
		return rc;
	memset(out->data, 0, out->len);
	c.out = (uint8_t *)out->data;
	c.lo = lo;
	c.hi = hi;
	rc = view_visit(v, lo, hi, read_frag, &c);
	if (rc)
		buf_reset(out);
	return rc;
}

int bitmap_getbit(struct keyspace *ks, const struct ks_key *k, uint64_t bit)
{
	struct buf frag = BUF_INIT;
	uint64_t version, byte = bit / 8;
	int rc;

	if (bit > BITMAP_MAX_BIT)
		return -EINVAL;
	rc = ks_version_get(ks, k, KV_TYPE_BITMAP, &version);
	if (!rc)
		rc = frag_get(ks, k, version, byte / FRAG * FRAG, &frag);
	if (rc == 0)
		rc = byte % FRAG < frag.len ? (frag.data[byte % FRAG] >> (bit % 8)) & 1 : 0;
	else if (rc == -ENOENT)
		rc = 0;
	buf_release(&frag);
	return rc;
}

int bitmap_setbit(struct keyspace *ks, const struct ks_key *k, uint64_t bit, bool on)
{
	struct buf frag = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	uint64_t fo = bit / 8 / FRAG * FRAG;
	size_t idx = (size_t)(bit / 8 % FRAG);
	uint8_t mask = (uint8_t)(1u << (bit % 8));
	int old = 0;

	if (bit > BITMAP_MAX_BIT)
		return -EINVAL;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_BITMAP, &m);
	if (!rc && !ks_txn_is_new(&t, k)) {
		rc = frag_get(ks, k, m->version, fo, &frag);
		if (rc == -ENOENT)
			rc = 0;
	}
	if (!rc && idx >= frag.len)
		rc = buf_resize(&frag, frag_grow(frag.len, idx));
	if (rc)
		goto out;
	old = (frag.data[idx] & mask) != 0;
	if (on)
		frag.data[idx] = (char)(frag.data[idx] | mask);
	else
		frag.data[idx] = (char)(frag.data[idx] & ~mask);
	/* Like Kvrocks, the fragment is written even if no bit changed. */
	frag_put(&t, k, fo, frag.data, frag.len);
	if (fo + idx + 1 > m->size) {
		m->size = fo + idx + 1;
		ks_txn_touch(&t, k);
	}
	rc = ks_txn_commit(&t);
out:
	buf_release(&frag);
	rc = ks_txn_end(&t, rc);
	return rc ? rc : old;
}

/* Population count over [lo, hi). */
struct count_ctx {
	uint64_t lo, hi, count;
};

static int count_frag(void *arg, uint64_t fo, const uint8_t *d, size_t n)
{
	struct count_ctx *c = arg;
	uint64_t a = fo > c->lo ? fo : c->lo, e = fo + n < c->hi ? fo + n : c->hi;
	for (uint64_t p = a; p < e; p++)
		c->count += (uint64_t)__builtin_popcount(d[p - fo]);
	return 0;
}

int bitmap_bitcount(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t end,
		    uint64_t *count)
{
	struct bm_view v;
	struct count_ctx c = {0, 0, 0};
	int rc = view_open(ks, k, &v);

	if (rc == 0 && string_range_clamp(start, end, v.m.size, &c.lo, &c.hi))
		rc = view_visit(&v, c.lo, c.hi, count_frag, &c);
	if (rc == -ENOENT)
		rc = 0;
	if (!rc)
		*count = c.count;
	view_close(&v);
	return rc;
}

/* BITPOS over [lo, hi): the lowest bit number holding `bit` among the
 * stored bytes, and (looking for 0) the stored byte ranges, to find the
 * first byte no fragment holds. */
struct pos_ctx {
	uint64_t lo, hi;
	bool bit;
	int64_t best;	  /* -1: none yet */
	struct buf spans; /* looking for 0: the ranges, uint64_t [2] each */
};

static int pos_frag(void *arg, uint64_t fo, const uint8_t *d, size_t n)
{
	struct pos_ctx *c = arg;
	uint64_t a = fo > c->lo ? fo : c->lo, e = fo + n < c->hi ? fo + n : c->hi;
	if (a >= e)
		return 0;
	for (uint64_t p = a; p < e; p++) {
		uint8_t x = c->bit ? d[p - fo] : (uint8_t)~d[p - fo];
		if (x) {
			int64_t at = (int64_t)(p * 8) + __builtin_ctz(x);
			if (c->best < 0 || at < c->best)
				c->best = at;
			break;
		}
	}
	uint64_t span[2] = {a, e};
	return c->bit ? 0 : buf_add(&c->spans, span, sizeof(span));
}

static int span_cmp(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] < y[0] ? -1 : (x[0] > y[0] ? 1 : 0);
}

int bitmap_bitpos(struct keyspace *ks, const struct ks_key *k, bool bit, int64_t start, int64_t end,
		  bool end_given, int64_t *pos)
{
	struct bm_view v;
	struct pos_ctx c = {.bit = bit, .best = -1};
	int rc = view_open(ks, k, &v);

	if (rc == -ENOENT) {
		*pos = bit ? -1 : 0;
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	if (!end_given)
		end = -1;
	if (!string_range_clamp(start, end, v.m.size, &c.lo, &c.hi)) {
		*pos = -1;
		goto out;
	}
	if ((rc = view_visit(&v, c.lo, c.hi, pos_frag, &c)))
		goto out;
	if (!bit) {
		/* The first byte of [lo, hi) that no fragment holds is zero. */
		uint64_t at = c.lo;
		uint64_t(*spans)[2] = (uint64_t(*)[2])c.spans.data;
		size_t nspans = c.spans.len / sizeof(*spans);
		if (nspans)
			qsort(spans, nspans, sizeof(*spans), span_cmp);
		for (size_t i = 0; i < nspans && spans[i][0] == at; i++)
			at = spans[i][1];
		if (at < c.hi && (c.best < 0 || (int64_t)(at * 8) < c.best))
			c.best = (int64_t)(at * 8);
		/* All ones: without an end, the zeros past the end count. */
		if (c.best < 0 && !end_given)
			c.best = (int64_t)(c.hi * 8);
	}
	*pos = c.best;
out:
	buf_release(&c.spans);
	view_close(&v);
	return rc;
}

int bitmap_getrange(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t end,
		    struct buf *out)
{
	struct bm_view v;
	uint64_t lo, hi;
	int rc = view_open(ks, k, &v);

	buf_reset(out);
	if (rc == 0 && string_range_clamp(start, end, v.m.size, &lo, &hi))
		rc = view_read(&v, lo, hi, out);
	if (rc == -ENOENT)
		rc = 0; /* Redis: "" */
	view_close(&v);
	return rc;
}

int bitmap_read(struct keyspace *ks, const struct ks_key *k, uint64_t off, size_t n,
		struct buf *out)
{
	struct bm_view v;
	int rc = view_open(ks, k, &v);

	buf_reset(out);
	if (rc == 0 && off < v.m.size) {
		uint64_t hi = n < v.m.size - off ? off + n : v.m.size;
		rc = view_read(&v, off, hi, out);
	}
	if (rc == -ENOENT)
		rc = 0;
	view_close(&v);
	return rc;
}

/* Write Redis-order src (the bytes [off, off + n) of the bitmap) into the
 * fragment at fo of k's version m; stages it in t (and sets *staged) if
 * it changed. */
static int write_frag(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
		      const struct enc_meta *m, bool fresh, uint64_t fo, uint64_t off,
		      const uint8_t *src, size_t n, bool *staged)
{
	struct buf frag = BUF_INIT;
	uint64_t a = (off > fo ? off : fo) - fo;
	uint64_t e = (off + n < fo + FRAG ? off + n : fo + FRAG) - fo;
	size_t len, top = 0;
	bool nonzero = false, exists = false, changed = false;
	int rc = 0;

	for (uint64_t p = a; p < e; p++)
		if (src[fo + p - off]) {
			top = (size_t)p;
			nonzero = true;
		}
	if (!fresh) {
		rc = frag_get(ks, k, m->version, fo, &frag);
		exists = rc == 0;
		if (rc == -ENOENT)
			rc = 0;
		if (rc)
			goto out;
	}
	if (!exists && !nonzero)
		goto out; /* zeros into a hole: nothing to store */
	len = frag.len;
	if (nonzero && top >= len) {
		if ((rc = buf_resize(&frag, frag_grow(len, top))))
			goto out;
		changed = true;
	}
	for (uint64_t p = a; p < e && p < frag.len; p++) {
		char x = (char)rev8(src[fo + p - off]);
		if (frag.data[p] != x) {
			frag.data[p] = x;
			changed = true;
		}
	}
	if (changed) {
		frag_put(t, k, fo, frag.data, frag.len);
		*staged = true;
	}
out:
	buf_release(&frag);
	return rc;
}

int bitmap_write(struct keyspace *ks, const struct ks_key *k, uint64_t off, const void *data,
		 size_t n, uint64_t *newsize)
{
	struct ks_txn t;
	struct enc_meta *m;
	uint64_t size = 0;
	bool staged = false;

	if (off > BITMAP_MAX_BYTES || n > BITMAP_MAX_BYTES - off)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	/* Nothing to write creates nothing. */
	int rc = n ? ks_txn_open(&t, k, KV_TYPE_BITMAP, &m) : ks_txn_get(&t, k, KV_TYPE_BITMAP, &m);
	if (rc == -ENOENT)
		rc = 0;
	else if (!rc)
		size = m->size;
	if (rc || n == 0)
		goto done;
	bool fresh = ks_txn_is_new(&t, k);
	for (uint64_t fo = off / FRAG * FRAG; fo < off + n && !rc; fo += FRAG)
		rc = write_frag(&t, ks, k, m, fresh, fo, off, data, n, &staged);
	if (!rc && off + n > size) {
		size = m->size = off + n;
		ks_txn_touch(&t, k);
		staged = true;
	}
	/* Zeros into holes change nothing: no write at all. */
	if (!rc && staged)
		rc = ks_txn_commit(&t);
done:
	if (!rc && newsize)
		*newsize = size;
	return ks_txn_end(&t, rc);
}

int bitmap_truncate(struct keyspace *ks, const struct ks_key *k, uint64_t size, unsigned flags)
{
	struct ks_txn t;
	struct ks_sub_iter *it = NULL;
	struct enc_meta *m;
	const char *sub, *val;
	size_t sn, vn;

	if (size > BITMAP_MAX_BYTES)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_BITMAP, &m);
	if (rc || size == m->size)
		goto out;
	if (size == 0) {
		/* Like DEL: the fragments become garbage for compaction. */
		ks_txn_delete(&t, k, (flags & BITMAP_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
		rc = ks_txn_commit(&t);
		goto out;
	}
	/* Cut every fragment that holds bytes at or past `size`. */
	if (size < m->size && (it = ks_sub_iter_new(ks, k, KV_TYPE_BITMAP, NULL, 0, &rc))) {
		while ((rc = ks_sub_iter_next(it, &sub, &sn, &val, &vn)) == 1) {
			uint64_t fo;
			if (parse_u64(sub, sn, &fo) || fo % FRAG) {
				/* no read finds it (reads build their keys):
				 * skipped, as encoding.md section 20 says */
				ks_corrupt_entry(k, sub, sn,
						 "a bitmap fragment sub-key that is not a decimal "
						 "offset of a fragment; skipped");
				continue;
			}
			if (fo >= size)
				ks_txn_sub_del(&t, k, STORE_CF_DEFAULT, sub, sn);
			else if (fo + vn > size)
				ks_txn_sub_put(&t, k, STORE_CF_DEFAULT, sub, sn, val,
					       (size_t)(size - fo));
		}
	}
	if (!rc) {
		m->size = size;
		ks_txn_touch(&t, k);
		rc = ks_txn_commit(&t);
	}
out:
	ks_sub_iter_free(it);
	return ks_txn_end(&t, rc);
}

int bitmap_strlen(struct keyspace *ks, const struct ks_key *k, uint64_t *len)
{
	return ks_card(ks, k, KV_TYPE_BITMAP, len);
}

/* ---- Whole-value replacement and conversion -------------------------- */

/* Stage the fragments of Redis-order bytes d[0, n) for k's (fresh)
 * version: one per 1 KiB run that holds a non-zero byte, cut after the
 * last. */
static void put_bytes(struct ks_txn *t, const struct ks_key *k, const uint8_t *d, size_t n)
{
	uint8_t frag[FRAG];
	for (size_t fo = 0; fo < n; fo += FRAG) {
		size_t len = n - fo < FRAG ? n - fo : FRAG, top = 0;
		for (size_t i = 0; i < len; i++)
			if (d[fo + i])
				top = i + 1;
		if (!top)
			continue;
		for (size_t i = 0; i < top; i++)
			frag[i] = rev8(d[fo + i]);
		frag_put(t, k, fo, frag, top);
	}
}

/* The body of bitmap_set and bitmap_from_string, in their transaction:
 * whatever k is (missing, remembered empty, a bitmap, a string: what
 * ks_txn_get said) becomes a new bitmap holding d[0, n) with expiry
 * `expire`, or with n == 0 goes (BITMAP_KEEP_EMPTY: remembered empty). */
static int replace(struct ks_txn *t, const struct ks_key *k, uint64_t expire, const void *d,
		   size_t n, unsigned flags)
{
	struct enc_meta *m;
	if (n == 0 && (flags & BITMAP_KEEP_EMPTY) && expire) {
		LOG_ERR("%.*s/%.*s: an empty bitmap cannot keep an expiry", (int)k->nslen, k->ns,
			(int)k->klen, k->key);
		return -EINVAL;
	}
	int rc = ks_txn_renew(t, k, KV_TYPE_BITMAP, &m);
	if (rc)
		return rc;
	if (n == 0) {
		ks_txn_delete(t, k, (flags & BITMAP_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
	} else {
		m->expire_ms = expire;
		m->size = n;
		put_bytes(t, k, d, n);
	}
	return ks_txn_commit(t);
}

int bitmap_set(struct keyspace *ks, const struct ks_key *k, const void *data, size_t n,
	       unsigned flags)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct ks_info info;

	if (n > BITMAP_MAX_BYTES)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_BITMAP, &m);
	uint64_t expire = rc ? 0 : m->expire_ms;
	if (rc == -ENOENT) {
		/* Missing, or remembered empty: only a bitmap record may be
		 * replaced by one. */
		rc = ks_txn_lookup(&t, k, &info);
		if (rc == 0 && info.type != KV_TYPE_BITMAP)
			rc = -KV_EWRONGTYPE;
		else if (rc == -ENOENT)
			rc = 0;
	}
	if (!rc)
		rc = replace(&t, k, expire, data, n, flags);
	return ks_txn_end(&t, rc);
}

int bitmap_from_string(struct keyspace *ks, const struct ks_key *k)
{
	struct ks_txn t;
	struct enc_meta *m;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_STRING, &m);
	if (!rc && m->tail_len > BITMAP_MAX_BYTES)
		rc = -EFBIG;
	/* The string's value stays where it was read while k is renewed. */
	if (!rc)
		rc = replace(&t, k, m->expire_ms, m->tail, m->tail_len, BITMAP_KEEP_EMPTY);
	return ks_txn_end(&t, rc);
}

int bitmap_to_string(struct keyspace *ks, const struct ks_key *k)
{
	struct buf val = BUF_INIT;
	struct ks_txn t;
	struct bm_view v;
	struct enc_meta *m;
	struct ks_info info;
	uint64_t expire = 0;

	/* Read and write in one transaction: nothing changes between. */
	view_init(&v);
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_BITMAP, &m);
	if (rc == -ENOENT) {
		rc = ks_txn_lookup(&t, k, &info);
		if (!rc && info.type != KV_TYPE_BITMAP)
			rc = -KV_EWRONGTYPE;
	} else if (!rc) {
		expire = m->expire_ms;
		rc = view_iter(ks, k, m, &v);
		if (!rc)
			rc = view_read(&v, 0, v.m.size, &val);
	}
	if (!rc)
		rc = ks_txn_renew(&t, k, KV_TYPE_STRING, &m);
	if (!rc) {
		m->expire_ms = expire;
		ks_txn_meta_put(&t, k, val.data, val.len);
		rc = ks_txn_commit(&t);
	}
	view_close(&v);
	buf_release(&val);
	return ks_txn_end(&t, rc);
}

/* ---- BITOP ------------------------------------------------------------ */

/*
 * Kvrocks's Bitmap::BitOp reads fragment i of every source for i = 0 up
 * to the last fragment of the longest, one Get each. Here each source's
 * fragments are listed once (their sub-keys, ascending by offset) and the
 * result is made only where one exists (NOT: everywhere), one 1 KiB
 * fragment at a time: the same bytes, without a Get per hole of a sparse
 * bitmap and without holding any bitmap whole.
 */

/* A distinct key of a BITOP: keys[0] is the destination. */
struct bitop_src {
	int state; /* 0: not read yet, 1: a live bitmap, 2: missing */
	struct bm_view v;
	uint64_t *offs; /* the offsets of its fragments up to the result's last */
	size_t n, at;	/* how many; the cursor of the walk */
};

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : (x > y ? 1 : 0);
}

/* List the fragments of source s (key k) that start at or before `last`,
 * ascending. A sub-key that is no decimal multiple of 1024 as Kvrocks
 * spells it (no sign, no leading zero) is -EUCLEAN, logged: Kvrocks would
 * never read it, and BITOP would drop it silently. */
static int bitop_list(const struct ks_key *k, struct bitop_src *s, uint64_t last)
{
	size_t cap = 0;
	int rc = 0;
	for (store_iter_seek_first(s->v.si); store_iter_valid(s->v.si) && !rc;
	     store_iter_next(s->v.si)) {
		char sub[FRAG_SUB];
		size_t kn;
		const char *key = store_iter_key(s->v.si, &kn);
		const char *p = key + s->v.prefix.len;
		size_t pn = kn - s->v.prefix.len;
		uint64_t fo;
		if (parse_u64(p, pn, &fo) != 0 || fo % FRAG != 0 || frag_sub(fo, sub) != pn ||
		    memcmp(sub, p, pn) != 0) {
			rc = ks_corrupt_entry(k, p, pn,
					      "a bitmap fragment sub-key that is not a decimal "
					      "multiple of 1024; BITOP refused");
			break;
		}
		if (fo > last)
			continue;
		if (s->n == cap) {
			/* at most last / 1024 + 1 distinct offsets */
			size_t ncap = cap ? cap * 2 : 64;
			uint64_t *o = realloc(s->offs, ncap * sizeof(*o));
			if (!o) {
				rc = -ENOMEM;
				break;
			}
			s->offs = o;
			cap = ncap;
		}
		s->offs[s->n++] = fo;
	}
	if (!rc)
		rc = store_iter_status(s->v.si);
	if (!rc && s->n > 1)
		qsort(s->offs, s->n, sizeof(*s->offs), u64_cmp);
	return rc;
}

/* The fragment at fo of s, which its list holds: *d (borrowed until the
 * iterator moves) and *dn, at most 1024 bytes (a longer one is read as
 * its first 1024, as every reader does). 1, 0 if it went, <0. */
static int bitop_frag(struct bitop_src *s, uint64_t fo, struct buf *key, const uint8_t **d,
		      size_t *dn)
{
	char sub[FRAG_SUB];
	size_t kn, vn;
	int rc = buf_set(key, s->v.prefix.data, s->v.prefix.len);
	if (!rc)
		rc = buf_add(key, sub, frag_sub(fo, sub));
	if (rc)
		return rc;
	store_iter_seek(s->v.si, key->data, key->len);
	if (!store_iter_valid(s->v.si))
		return store_iter_status(s->v.si);
	const char *cur = store_iter_key(s->v.si, &kn);
	if (kn != key->len || memcmp(cur, key->data, kn) != 0)
		return 0;
	*d = store_iter_value(s->v.si, &vn);
	*dn = vn > FRAG ? FRAG : vn;
	return 1;
}

/* Stage the fragments of the result (size `size`) of op over the listed
 * sources (src[idx[i]] for i < n), for keys[0]'s new version. */
static int bitop_frags(struct ks_txn *t, const struct ks_key *keys, struct bitop_src *src,
		       size_t nk, const size_t *idx, size_t n, enum bitmap_op op, uint64_t size)
{
	uint8_t res[FRAG];
	struct buf key = BUF_INIT;
	uint64_t last = (size - 1) / FRAG * FRAG, fo = 0;
	int rc = 0;

	for (size_t j = 0; j < nk && !rc; j++)
		if (src[j].state == 1)
			rc = bitop_list(&keys[j], &src[j], last);
	while (!rc) {
		if (op == BITMAP_OP_NOT) {
			if (fo > last)
				break;
		} else {
			/* the next offset any source holds */
			fo = UINT64_MAX;
			for (size_t j = 0; j < nk; j++)
				if (src[j].at < src[j].n && src[j].offs[src[j].at] < fo)
					fo = src[j].offs[src[j].at];
			if (fo == UINT64_MAX)
				break;
		}
		size_t maxlen = 0;
		bool first = true, skip = false;
		memset(res, op == BITMAP_OP_NOT ? 0xff : 0, sizeof(res));
		for (size_t i = 0; i < n && !rc; i++) {
			struct bitop_src *s = &src[idx[i]];
			const uint8_t *d = NULL;
			size_t dn = 0;
			int has = s->at < s->n && s->offs[s->at] == fo;
			if (has && (has = bitop_frag(s, fo, &key, &d, &dn)) < 0)
				rc = has;
			if (rc)
				break;
			if (!has) {
				/* AND with a hole: Kvrocks writes no fragment */
				skip = op == BITMAP_OP_AND;
				if (skip)
					break;
				continue;
			}
			maxlen = dn > maxlen ? dn : maxlen;
			if (op == BITMAP_OP_NOT) {
				for (size_t b = 0; b < dn; b++)
					res[b] = (uint8_t)~d[b];
			} else if (first) {
				memcpy(res, d, dn);
				first = false;
			} else if (op == BITMAP_OP_AND) {
				for (size_t b = 0; b < dn; b++)
					res[b] &= d[b];
				memset(res + dn, 0, FRAG - dn);
			} else if (op == BITMAP_OP_OR) {
				for (size_t b = 0; b < dn; b++)
					res[b] |= d[b];
			} else {
				for (size_t b = 0; b < dn; b++)
					res[b] ^= d[b];
			}
		}
		for (size_t j = 0; j < nk; j++)
			if (src[j].at < src[j].n && src[j].offs[src[j].at] == fo)
				src[j].at++;
		if (rc)
			break;
		/* Kvrocks writes every fragment it computed, zeros too: as long
		 * as the sources' longest there; NOT's are whole but the last,
		 * which ends at the size. */
		if (op == BITMAP_OP_NOT)
			frag_put(t, &keys[0], fo, res, fo == last ? (size_t)(size - fo) : FRAG);
		else if (!skip && maxlen)
			frag_put(t, &keys[0], fo, res, maxlen);
		if (op == BITMAP_OP_NOT)
			fo += FRAG;
	}
	buf_release(&key);
	return rc;
}

int bitmap_bitop(struct keyspace *ks, enum bitmap_op op, const struct ks_key *dest,
		 const struct ks_key *srcs, size_t n, uint64_t *len)
{
	struct ks_key *keys = NULL;
	struct bitop_src *src = NULL;
	size_t *idx = NULL, nk = 1, missing = 0;
	uint64_t size = 0, vlen;
	struct enc_meta *m;
	struct ks_txn t;
	int rc = 0;

	*len = 0;
	if (n == 0 || op > BITMAP_OP_NOT || (op == BITMAP_OP_NOT && n != 1))
		return -EINVAL;
	keys = calloc(n + 1, sizeof(*keys));
	src = calloc(n + 1, sizeof(*src));
	idx = calloc(n, sizeof(*idx));
	if (!keys || !src || !idx) {
		rc = -ENOMEM;
		goto free;
	}
	/* The distinct keys, dest first: each locked and read once. */
	keys[0] = *dest;
	for (size_t i = 0; i < n; i++) {
		size_t j = 0;
		while (j < nk && !ks_key_eq(&keys[j], &srcs[i]))
			j++;
		if (j == nk) {
			keys[nk] = srcs[i];
			keys[nk++].attr = NULL; /* a source is only read */
		}
		idx[i] = j;
	}
	if (nk > BITMAP_BITOP_MAX_KEYS) {
		rc = -E2BIG;
		goto free;
	}
	for (size_t j = 0; j < nk; j++)
		view_init(&src[j].v);

	ks_txn_beginv(&t, ks, keys, nk);
	/* The sources in their order, as Kvrocks: the first of another type
	 * (a string too) refuses the whole. */
	for (size_t i = 0; i < n && !rc; i++) {
		struct bitop_src *s = &src[idx[i]];
		if (s->state == 0) {
			rc = ks_txn_get(&t, &keys[idx[i]], KV_TYPE_BITMAP, &m);
			s->state = rc == -ENOENT ? 2 : 1;
			if (rc == -ENOENT)
				rc = 0;
			else if (!rc)
				rc = view_iter(ks, &keys[idx[i]], m, &s->v);
			if (!rc && s->state == 1 && m->size > size)
				size = m->size;
		}
		missing += s->state == 2;
	}
	if (rc)
		goto out;
	/* dest: replaced whatever it holds (SET does too), a corrupt record
	 * included; Kvrocks does not read it. */
	rc = ks_txn_head(&t, &keys[0], KV_TYPE_NONE, &m, &vlen);
	bool exists = rc == 0 || rc == -EUCLEAN;
	if (rc && !exists && rc != -ENOENT)
		goto out;
	rc = 0;
	if (size == 0) {
		/* Every source missing or empty: dest is deleted. */
		struct ks_info info;
		if (!exists) {
			rc = ks_txn_lookup(&t, &keys[0], &info);
			if (rc == -ENOENT) {
				rc = 0; /* nothing to delete: nothing written */
				goto out;
			}
		}
		if (!rc)
			rc = ks_txn_renew(&t, &keys[0], KV_TYPE_BITMAP, &m);
		if (!rc) {
			ks_txn_delete(&t, &keys[0], 0);
			rc = ks_txn_commit(&t);
		}
		goto out;
	}
	rc = ks_txn_renew(&t, &keys[0], KV_TYPE_BITMAP, &m);
	if (!rc) {
		ks_txn_renew_no_expiry(&t, &keys[0]);
		m->size = size;
		/* AND with a missing source: zeros, no fragment at all. */
		if (!(op == BITMAP_OP_AND && missing))
			rc = bitop_frags(&t, keys, src, nk, idx, n, op, size);
	}
	if (!rc)
		rc = ks_txn_commit(&t);
	if (!rc)
		*len = size;
out:
	rc = ks_txn_end(&t, rc);
	for (size_t j = 0; j < nk; j++) {
		view_close(&src[j].v);
		free(src[j].offs);
	}
free:
	free(keys);
	free(src);
	free(idx);
	return rc;
}
