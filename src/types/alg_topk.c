/*
 * alg_topk: HeavyKeeper as RedisBloom's topk.c runs it, with a
 * reproducible generator. Layer: algorithms (pure, util only).
 *
 * An increment of an item with fingerprint fp visits its bucket in each
 * row: an empty bucket takes fp and the increment; a bucket holding fp
 * grows by it; a bucket holding another fingerprint decays, one step per
 * unit of the increment, with probability decay^count, and when it
 * reaches 0 it takes fp with what is left of the increment. The item's
 * estimate is the largest count among the buckets holding fp. A heap
 * entry of the item gets that estimate; an item not in the heap enters
 * when the heap has room or the estimate reaches the heap's minimum (the
 * minimum is expelled). Unlike RedisBloom an entry whose count went down
 * moves up the heap too, so the heap stays a heap.
 */
#include "types/alg_topk.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define TOPK_FP_SEED 1919 /* RedisBloom's GA */
#define DECAY_TABLE  256

/* MurmurHash2 (Austin Appleby), 32-bit, reading 4 bytes little-endian. */
static uint32_t murmur2(const void *key, size_t len, uint32_t seed)
{
	const uint32_t m = 0x5bd1e995;
	const uint8_t *p = key;
	uint32_t h = seed ^ (uint32_t)len;
	while (len >= 4) {
		uint32_t k = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			     (uint32_t)p[3] << 24;
		k *= m;
		k ^= k >> 24;
		k *= m;
		h *= m;
		h ^= k;
		p += 4;
		len -= 4;
	}
	switch (len) {
	case 3:
		h ^= (uint32_t)p[2] << 16;
		/* fall through */
	case 2:
		h ^= (uint32_t)p[1] << 8;
		/* fall through */
	case 1:
		h ^= p[0];
		h *= m;
	}
	h ^= h >> 13;
	h *= m;
	h ^= h >> 15;
	return h;
}

/* splitmix64 of the draw counter: a uniform double in [0, 1). */
static double draw(struct hk *t)
{
	uint64_t z = (t->draws++ + 1) * 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (double)(z >> 11) * 0x1p-53;
}

bool hk_params_ok(uint32_t k, uint32_t width, uint32_t depth, double decay)
{
	return k >= 1 && k <= TOPK_K_MAX && width >= 1 && width <= TOPK_WIDTH_MAX && depth >= 1 &&
	       depth <= TOPK_DEPTH_MAX && (uint64_t)width * depth <= TOPK_CELLS_MAX && decay > 0 &&
	       decay <= 1;
}

int hk_init(struct hk *t, uint32_t k, uint32_t width, uint32_t depth, double decay)
{
	memset(t, 0, sizeof(*t));
	if (!hk_params_ok(k, width, depth, decay))
		return -EINVAL;
	t->k = k;
	t->width = width;
	t->depth = depth;
	t->decay = decay;
	t->b = calloc((size_t)width * depth, sizeof(*t->b));
	t->heap = calloc(k, sizeof(*t->heap));
	if (!t->b || !t->heap) {
		hk_release(t);
		return -ENOMEM;
	}
	return 0;
}

void hk_release(struct hk *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->heap[i].item);
	free(t->heap);
	free(t->b);
	t->heap = NULL;
	t->b = NULL;
	t->n = 0;
}

uint32_t hk_fingerprint(const void *item, size_t len)
{
	return murmur2(item, len, TOPK_FP_SEED);
}

uint32_t hk_bucket_of(const struct hk *t, const void *item, size_t len, uint32_t row)
{
	return murmur2(item, len, row) % t->width;
}

static double decay_chance(const struct hk *t, uint32_t count)
{
	return count < DECAY_TABLE ? pow(t->decay, count) : pow(t->decay, (double)count);
}

static void heap_swap(struct hk_entry *h, size_t a, size_t b)
{
	struct hk_entry x = h[a];
	h[a] = h[b];
	h[b] = x;
}

static void heap_down(struct hk_entry *h, size_t n, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, s = i;
		if (l < n && h[l].count < h[s].count)
			s = l;
		if (r < n && h[r].count < h[s].count)
			s = r;
		if (s == i)
			return;
		heap_swap(h, i, s);
		i = s;
	}
}

static void heap_up(struct hk_entry *h, size_t i)
{
	while (i > 0) {
		size_t p = (i - 1) / 2;
		if (h[p].count <= h[i].count)
			return;
		heap_swap(h, i, p);
		i = p;
	}
}

bool hk_heap_ok(const struct hk_entry *h, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (h[(i - 1) / 2].count > h[i].count)
			return false;
	return true;
}

static struct hk_entry *heap_find(const struct hk *t, uint32_t fp, const void *item, size_t len)
{
	for (size_t i = 0; i < t->n; i++) {
		const struct hk_entry *e = &t->heap[i];
		if (e->fp == fp && e->len == len && memcmp(e->item, item, len) == 0)
			return &t->heap[i];
	}
	return NULL;
}

static uint32_t sat_add(uint32_t a, uint32_t b)
{
	return a > UINT32_MAX - b ? UINT32_MAX : a + b;
}

int hk_incrby(struct hk *t, const void *item, size_t len, uint32_t incr, char **expelled,
	      size_t *elen)
{
	if (expelled)
		*expelled = NULL;
	if (incr < 1 || incr > TOPK_INCR_MAX || len > TOPK_ITEM_MAX)
		return -EINVAL;
	uint32_t fp = hk_fingerprint(item, len), max = 0;
	struct hk_entry *e = heap_find(t, fp, item, len);
	char *copy = NULL;
	if (!e && !(copy = malloc(len ? len : 1)))
		return -ENOMEM;

	for (uint32_t row = 0; row < t->depth; row++) {
		struct hk_bucket *b =
		    &t->b[(size_t)row * t->width + hk_bucket_of(t, item, len, row)];
		if (b->count == 0) {
			b->fp = fp;
			b->count = incr;
			max = b->count > max ? b->count : max;
		} else if (b->fp == fp) {
			b->count = sat_add(b->count, incr);
			max = b->count > max ? b->count : max;
		} else {
			for (uint32_t left = incr; left > 0; left--) {
				if (draw(t) < decay_chance(t, b->count) && --b->count == 0) {
					b->fp = fp;
					b->count = left;
					max = left > max ? left : max;
					break;
				}
			}
		}
	}

	if (e) {
		size_t i = (size_t)(e - t->heap);
		uint32_t old = e->count;
		e->count = max;
		if (max > old)
			heap_down(t->heap, t->n, i);
		else
			heap_up(t->heap, i);
		return 0;
	}
	if (t->n == t->k && max < t->heap[0].count) {
		free(copy);
		return 0;
	}
	if (len)
		memcpy(copy, item, len);
	struct hk_entry ne = {max, fp, copy, len};
	if (t->n < t->k) {
		t->heap[t->n] = ne;
		heap_up(t->heap, t->n++);
		return 0;
	}
	if (expelled) {
		*expelled = t->heap[0].item;
		*elen = t->heap[0].len;
	} else {
		free(t->heap[0].item);
	}
	t->heap[0] = ne;
	heap_down(t->heap, t->n, 0);
	return 0;
}

bool hk_query(const struct hk *t, const void *item, size_t len)
{
	return heap_find(t, hk_fingerprint(item, len), item, len) != NULL;
}

uint32_t hk_count(const struct hk *t, const void *item, size_t len)
{
	uint32_t fp = hk_fingerprint(item, len), max = 0;
	for (uint32_t row = 0; row < t->depth; row++) {
		const struct hk_bucket *b =
		    &t->b[(size_t)row * t->width + hk_bucket_of(t, item, len, row)];
		if (b->fp == fp && b->count > max)
			max = b->count;
	}
	return max;
}

static int cmp_list(const void *a, const void *b)
{
	const struct hk_entry *x = *(const struct hk_entry *const *)a;
	const struct hk_entry *y = *(const struct hk_entry *const *)b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return bytes_cmp(x->item, x->len, y->item, y->len);
}

void hk_list(const struct hk *t, const struct hk_entry **out)
{
	for (size_t i = 0; i < t->n; i++)
		out[i] = &t->heap[i];
	qsort(out, t->n, sizeof(*out), cmp_list);
}

bool hk_is_empty(const struct hk *t)
{
	if (t->n)
		return false;
	for (size_t i = 0; i < (size_t)t->width * t->depth; i++)
		if (t->b[i].count || t->b[i].fp)
			return false;
	return true;
}
