/*
 * t_topk: Redis Stack's top-k over HeavyKeeper, in kvfs's own layout
 * (Kvrocks has no top-k in its mainline; this is not a Kvrocks format).
 * Layer: types.
 *
 *   CF        key                                   value
 *   metadata  ns|key                                header (type 14, size = heap entries) | tail
 *   default   ns|key_len|key|version|00|row u32 BE  width x (fingerprint u32 BE, count u32 BE)
 *   default   ns|key_len|key|version|01             heap: n x (count u32 BE, len u32 BE, item)
 *
 * Tail (28 bytes): k u32 | width u32 | depth u32 | decay (sortable double)
 * | draws u64 (the generator's counter, alg_topk.h). A row is stored once
 * one of its buckets is non-empty (a missing row is all zeros; a touched
 * bucket never empties again); the heap record exists while the heap has
 * entries, in heap-array order. Type 14 is emptyable: a reserved top-k
 * with nothing added is a live key of size 0.
 */
#include "types/t_topk.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define TOPK_TAIL 28
#define SEG_ROW	  0x00
#define SEG_HEAP  0x01

static void tail_encode(uint8_t *p, const struct hk *t)
{
	put_be32(p, t->k);
	put_be32(p + 4, t->width);
	put_be32(p + 8, t->depth);
	put_be64(p + 12, enc_double_to_sortable(t->decay));
	put_be64(p + 20, t->draws);
}

static int tail_decode(const struct ks_key *k, const struct enc_meta *m, struct topk_params *p,
		       uint64_t *draws)
{
	const uint8_t *t = m->tail;
	if (m->tail_len < TOPK_TAIL) {
		return ks_corrupt(k, "a top-k metadata tail of %zu bytes (28 expected)",
				  m->tail_len);
	}
	p->k = get_be32(t);
	p->width = get_be32(t + 4);
	p->depth = get_be32(t + 8);
	p->decay = enc_sortable_to_double(get_be64(t + 12));
	*draws = get_be64(t + 20);
	if (!hk_params_ok(p->k, p->width, p->depth, p->decay)) {
		return ks_corrupt(k,
				  "top-k parameters k %u width %u depth %u decay %g out of range",
				  p->k, p->width, p->depth, p->decay);
	}
	return 0;
}

static int params_check(const struct ks_key *k, const struct topk_params *p)
{
	if (hk_params_ok(p->k, p->width, p->depth, p->decay))
		return 0;
	LOG_ERR("%.*s: bad top-k parameters k %u width %u depth %u decay %g (k 1..%d, width "
		"1..%u, depth 1..%d, width x depth up to %u, decay in (0, 1])",
		(int)k->klen, k->key, p->k, p->width, p->depth, p->decay, TOPK_K_MAX,
		TOPK_WIDTH_MAX, TOPK_DEPTH_MAX, TOPK_CELLS_MAX);
	return -EINVAL;
}

/* The sub-key of row r (after the version). */
static void row_sub(uint8_t sub[5], uint32_t r)
{
	sub[0] = SEG_ROW;
	put_be32(sub + 1, r);
}

/* Parse a stored heap into t (empty). */
static int heap_decode(const struct ks_key *k, const uint8_t *p, size_t n, struct hk *t)
{
	size_t off = 0;
	while (off < n) {
		if (n - off < 8 || t->n == t->k)
			goto bad;
		uint32_t count = get_be32(p + off), len = get_be32(p + off + 4);
		off += 8;
		if (len > TOPK_ITEM_MAX || n - off < len)
			goto bad;
		char *item = malloc(len ? len : 1);
		if (!item)
			return -ENOMEM;
		memcpy(item, p + off, len);
		off += len;
		t->heap[t->n++] = (struct hk_entry){count, hk_fingerprint(item, len), item, len};
	}
	return 0;
bad:
	return ks_corrupt(k, "a top-k heap record that does not decode");
}

static int heap_encode(const struct hk_entry *h, size_t n, struct buf *out)
{
	int rc = 0;
	buf_reset(out);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = buf_add_be32(out, h[i].count);
		if (!rc)
			rc = buf_add_be32(out, (uint32_t)h[i].len);
		if (!rc)
			rc = buf_add(out, h[i].item, h[i].len);
	}
	return rc;
}

/* Load the whole state of k, whose metadata is m, into t (initialised
 * here): parameters, rows, heap. */
static int load(struct keyspace *ks, const struct ks_key *k, const struct enc_meta *m, struct hk *t)
{
	static const uint8_t heap_sub = SEG_HEAP;
	struct topk_params p;
	struct buf v = BUF_INIT;
	uint64_t draws;
	int rc = tail_decode(k, m, &p, &draws);
	if (!rc)
		rc = hk_init(t, p.k, p.width, p.depth, p.decay);
	if (rc)
		return rc;
	t->draws = draws;
	for (uint32_t r = 0; r < t->depth && !rc; r++) {
		uint8_t sub[5];
		row_sub(sub, r);
		rc = ks_sub_get(ks, k, m->version, STORE_CF_DEFAULT, sub, sizeof(sub), &v);
		if (rc == -ENOENT) {
			rc = 0;
			continue;
		}
		if (!rc && v.len != (size_t)t->width * 8) {
			rc = ks_corrupt(k, "top-k row %u holds %zu bytes, not %u", r, v.len,
					t->width * 8);
		}
		for (uint32_t c = 0; !rc && c < t->width; c++) {
			struct hk_bucket *b = &t->b[(size_t)r * t->width + c];
			b->fp = get_be32(v.data + 8 * c);
			b->count = get_be32(v.data + 8 * c + 4);
		}
	}
	if (!rc) {
		rc = ks_sub_get(ks, k, m->version, STORE_CF_DEFAULT, &heap_sub, 1, &v);
		if (rc == -ENOENT)
			rc = 0;
		else if (!rc)
			rc = heap_decode(k, (const uint8_t *)v.data, v.len, t);
	}
	if (!rc && !hk_heap_ok(t->heap, t->n)) {
		rc = ks_corrupt(k, "the top-k heap record is not a heap");
	}
	if (rc)
		hk_release(t); /* on error t holds nothing */
	buf_release(&v);
	return rc;
}

/* k's whole state under tx's lock (t initialised here, *m is tx's). */
static int txn_load(struct ks_txn *tx, struct keyspace *ks, const struct ks_key *k,
		    struct enc_meta **m, struct hk *t)
{
	memset(t, 0, sizeof(*t));
	int rc = ks_txn_get(tx, k, KV_TYPE_TOPK, m);
	return rc ? rc : load(ks, k, *m, t);
}

/* Stage t in tx: the metadata (tail, the caller's, holds it until the
 * commit), the rows that differ from `old` (all when old is NULL), and
 * the heap. */
static void state_stage(struct ks_txn *tx, const struct ks_key *k, struct enc_meta *m,
			const struct hk *t, const struct hk_bucket *old, bool heap,
			uint8_t tail[TOPK_TAIL])
{
	static const uint8_t heap_sub = SEG_HEAP;
	struct buf v = BUF_INIT;
	int rc = 0;
	for (uint32_t r = 0; r < t->depth && !rc; r++) {
		const struct hk_bucket *row = &t->b[(size_t)r * t->width];
		size_t bytes = (size_t)t->width * sizeof(*row);
		uint8_t sub[5];
		if (old && memcmp(row, &old[(size_t)r * t->width], bytes) == 0)
			continue;
		bool zero = true;
		for (uint32_t c = 0; c < t->width && zero; c++)
			zero = !row[c].fp && !row[c].count;
		row_sub(sub, r);
		if (zero) {
			ks_txn_sub_del(tx, k, STORE_CF_DEFAULT, sub, sizeof(sub));
			continue;
		}
		buf_reset(&v);
		for (uint32_t c = 0; c < t->width && !rc; c++) {
			rc = buf_add_be32(&v, row[c].fp);
			if (!rc)
				rc = buf_add_be32(&v, row[c].count);
		}
		if (!rc)
			ks_txn_sub_put(tx, k, STORE_CF_DEFAULT, sub, sizeof(sub), v.data, v.len);
	}
	if (!rc && heap) {
		rc = heap_encode(t->heap, t->n, &v);
		if (!rc && t->n)
			ks_txn_sub_put(tx, k, STORE_CF_DEFAULT, &heap_sub, 1, v.data, v.len);
		else if (!rc)
			ks_txn_sub_del(tx, k, STORE_CF_DEFAULT, &heap_sub, 1);
	}
	ks_txn_fail(tx, rc);
	m->size = t->n;
	tail_encode(tail, t);
	ks_txn_meta_put(tx, k, tail, TOPK_TAIL);
	buf_release(&v);
}

int topk_reserve(struct keyspace *ks, const struct ks_key *k, const struct topk_params *p)
{
	struct ks_txn tx;
	struct enc_meta *m;
	uint8_t tail[TOPK_TAIL];
	int rc = params_check(k, p);
	if (rc)
		return rc;
	ks_txn_begin(&tx, ks, k);
	rc = ks_txn_create(&tx, k, KV_TYPE_TOPK, &m);
	if (!rc) {
		/* the tail only: no row or heap record is written */
		struct hk t = {.k = p->k, .width = p->width, .depth = p->depth, .decay = p->decay};
		tail_encode(tail, &t);
		ks_txn_meta_put(&tx, k, tail, sizeof(tail));
		rc = ks_txn_commit(&tx);
	}
	return ks_txn_end(&tx, rc);
}

struct expelled {
	char *item;
	size_t len;
};

int topk_add(struct keyspace *ks, const struct ks_key *k, const struct topk_item *items, size_t n,
	     topk_expelled_cb cb, void *arg)
{
	struct ks_txn tx;
	struct hk_bucket *old = NULL;
	struct expelled *ex = NULL;
	struct enc_meta *m;
	struct hk t;
	uint8_t tail[TOPK_TAIL];
	int rc = 0;

	memset(&t, 0, sizeof(t));
	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (items[i].incr < 1 || items[i].incr > TOPK_INCR_MAX) {
			LOG_ERR("%.*s: top-k increment %u of item %zu is not within 1..%d",
				(int)k->klen, k->key, items[i].incr, i + 1, TOPK_INCR_MAX);
			return -EINVAL;
		}
		if (items[i].len > TOPK_ITEM_MAX) {
			LOG_ERR("%.*s: top-k item %zu is longer than %d bytes", (int)k->klen,
				k->key, i + 1, TOPK_ITEM_MAX);
			return -EINVAL;
		}
	}
	if (!(ex = calloc(n, sizeof(*ex))))
		return -ENOMEM;
	ks_txn_begin(&tx, ks, k);
	rc = txn_load(&tx, ks, k, &m, &t);
	if (!rc) {
		size_t bytes = (size_t)t.width * t.depth * sizeof(*old);
		if ((old = malloc(bytes)))
			memcpy(old, t.b, bytes);
		else
			rc = -ENOMEM;
	}
	for (size_t i = 0; i < n && !rc; i++)
		rc = hk_incrby(&t, items[i].item, items[i].len, items[i].incr, &ex[i].item,
			       &ex[i].len);
	if (!rc) {
		state_stage(&tx, k, m, &t, old, true, tail);
		rc = ks_txn_commit(&tx);
	}
	rc = ks_txn_end(&tx, rc);
	for (size_t i = 0; i < n; i++) {
		if (!rc && cb)
			cb(arg, i, ex[i].item, ex[i].len);
		free(ex[i].item);
	}
	hk_release(&t);
	free(old);
	free(ex);
	return rc;
}

int topk_state(struct keyspace *ks, const struct ks_key *k, struct hk *t)
{
	struct ks_txn tx;
	struct enc_meta *m;
	ks_txn_begin_read(&tx, ks, k); /* rows and heap of one moment */
	int rc = txn_load(&tx, ks, k, &m, t);
	return ks_txn_end(&tx, rc);
}

int topk_has(struct keyspace *ks, const struct ks_key *k, const void *item, size_t len)
{
	struct hk t;
	int rc = topk_state(ks, k, &t);
	if (!rc)
		rc = hk_query(&t, item, len) ? 1 : 0;
	hk_release(&t);
	return rc;
}

int topk_count_of(struct keyspace *ks, const struct ks_key *k, const void *item, size_t len,
		  uint32_t *count)
{
	struct hk t;
	int rc = topk_state(ks, k, &t);
	if (!rc)
		*count = hk_count(&t, item, len);
	hk_release(&t);
	return rc;
}

int topk_info(struct keyspace *ks, const struct ks_key *k, struct topk_params *p)
{
	uint8_t tail[TOPK_TAIL];
	struct enc_meta m;
	uint64_t draws;
	int rc = ks_meta_copy(ks, k, KV_TYPE_TOPK, &m, tail, sizeof(tail));
	return rc ? rc : tail_decode(k, &m, p, &draws);
}

/* One edit of the state under the key's lock. */
struct edit {
	char what; /* 'p'arams, 'h'eap, 'b'uckets, 'd'raws */
	const struct topk_params *p;
	const struct hk_entry *h;
	const struct hk_bucket *b;
	size_t n;
	uint64_t draws;
};

static int edit(struct keyspace *ks, const struct ks_key *k, const struct edit *e)
{
	struct ks_txn tx;
	struct enc_meta *m;
	struct hk t;
	uint8_t tail[TOPK_TAIL];
	bool heap = false, rows = false;

	ks_txn_begin(&tx, ks, k);
	int rc = txn_load(&tx, ks, k, &m, &t);
	if (rc)
		goto out;
	switch (e->what) {
	case 'p':
		if (!hk_is_empty(&t)) {
			LOG_ERR("%.*s: top-k parameters can only change while it holds nothing",
				(int)k->klen, k->key);
			rc = -ENOTEMPTY;
			break;
		}
		hk_release(&t);
		rc = hk_init(&t, e->p->k, e->p->width, e->p->depth, e->p->decay);
		/* an empty sketch has no records: only the metadata changes */
		break;
	case 'h':
		if (e->n > t.k) {
			LOG_ERR("%.*s: %zu heap entries, more than k = %u", (int)k->klen, k->key,
				e->n, t.k);
			rc = -EINVAL;
			break;
		}
		for (size_t i = 0; i < t.n; i++)
			free(t.heap[i].item);
		t.n = 0;
		for (size_t i = 0; i < e->n && !rc; i++) {
			const struct hk_entry *h = &e->h[i];
			char *item = malloc(h->len ? h->len : 1);
			if (!item) {
				rc = -ENOMEM;
				break;
			}
			memcpy(item, h->item, h->len);
			t.heap[t.n++] =
			    (struct hk_entry){h->count, hk_fingerprint(item, h->len), item, h->len};
		}
		heap = true;
		break;
	case 'b':
		if (e->n != (size_t)t.width * t.depth) {
			LOG_ERR("%.*s: %zu buckets given, the top-k has %u rows of %u",
				(int)k->klen, k->key, e->n, t.depth, t.width);
			rc = -EINVAL;
			break;
		}
		memcpy(t.b, e->b, e->n * sizeof(*t.b));
		rows = true;
		break;
	default:
		t.draws = e->draws;
	}
	if (!rc) {
		state_stage(&tx, k, m, &t, rows ? NULL : t.b, heap, tail);
		rc = ks_txn_commit(&tx);
	}
out:
	hk_release(&t);
	return ks_txn_end(&tx, rc);
}

int topk_set_params(struct keyspace *ks, const struct ks_key *k, const struct topk_params *p)
{
	int rc = params_check(k, p);
	return rc ? rc : edit(ks, k, &(struct edit){.what = 'p', .p = p});
}

static int cmp_entry(const void *a, const void *b)
{
	const struct hk_entry *x = *(const struct hk_entry *const *)a;
	const struct hk_entry *y = *(const struct hk_entry *const *)b;
	return bytes_cmp(x->item, x->len, y->item, y->len);
}

/* -EINVAL (logged) if two entries hold the same item. */
static int distinct(const struct ks_key *k, const struct hk_entry *h, size_t n)
{
	const struct hk_entry **s = malloc((n ? n : 1) * sizeof(*s));
	int rc = 0;
	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		s[i] = &h[i];
	qsort(s, n, sizeof(*s), cmp_entry);
	for (size_t i = 1; i < n && !rc; i++) {
		if (cmp_entry(&s[i - 1], &s[i]) == 0) {
			LOG_ERR("%.*s: two heap entries hold the item '%.*s'", (int)k->klen, k->key,
				(int)s[i]->len, s[i]->item);
			rc = -EINVAL;
		}
	}
	free(s);
	return rc;
}

int topk_set_heap(struct keyspace *ks, const struct ks_key *k, const struct hk_entry *h, size_t n)
{
	int rc;
	for (size_t i = 0; i < n; i++) {
		if (h[i].len > TOPK_ITEM_MAX) {
			LOG_ERR("%.*s: heap entry %zu is longer than %d bytes", (int)k->klen,
				k->key, i + 1, TOPK_ITEM_MAX);
			return -EINVAL;
		}
	}
	rc = distinct(k, h, n);
	if (rc)
		return rc;
	if (!hk_heap_ok(h, n)) {
		LOG_ERR("%.*s: the heap entries are not in heap order (each count at least its "
			"parent's, entry i's parent is (i - 1) / 2)",
			(int)k->klen, k->key);
		return -EINVAL;
	}
	return edit(ks, k, &(struct edit){.what = 'h', .h = h, .n = n});
}

int topk_set_buckets(struct keyspace *ks, const struct ks_key *k, const struct hk_bucket *b,
		     size_t n)
{
	return edit(ks, k, &(struct edit){.what = 'b', .b = b, .n = n});
}

int topk_set_draws(struct keyspace *ks, const struct ks_key *k, uint64_t draws)
{
	return edit(ks, k, &(struct edit){.what = 'd', .draws = draws});
}
