/*
 * alg_topk: HeavyKeeper top-k (Gong et al., ATC 2018) with the command
 * semantics of Redis Stack's TOPK.* (RedisBloom): depth rows of width
 * buckets (fingerprint, count) whose counts decay with probability
 * decay^count when another item hits them, and a min-heap of at most k
 * items with their counts. Randomness comes from a counter-based
 * generator (splitmix64 of a stored draw counter), so a run is
 * reproducible and the whole state is the buckets, the heap and the
 * counter. Pure: no storage. Layer: algorithms (may include util).
 */
#ifndef KVFS_ALG_TOPK_H
#define KVFS_ALG_TOPK_H

#include "engine/util.h"

#define TOPK_WIDTH_DEFAULT 8
#define TOPK_DEPTH_DEFAULT 7
#define TOPK_DECAY_DEFAULT 0.9
#define TOPK_K_MAX	   100000 /* bounds kvfs sets */
#define TOPK_WIDTH_MAX	   (1u << 24)
#define TOPK_DEPTH_MAX	   1024
#define TOPK_CELLS_MAX	   (1u << 26) /* width * depth */
#define TOPK_INCR_MAX	   100000     /* TOPK.INCRBY's limit */
#define TOPK_ITEM_MAX	   65536      /* longest item kvfs keeps in the heap */

struct hk_bucket {
	uint32_t fp, count;
};

/* One heap entry: the item's bytes are owned by the heap. */
struct hk_entry {
	uint32_t count, fp;
	char *item;
	size_t len;
};

/* Caller-owned: hk_init / hk_release. */
struct hk {
	uint32_t k, width, depth;
	double decay;
	uint64_t draws;	       /* random draws so far (the generator's state) */
	struct hk_bucket *b;   /* depth * width, row-major */
	struct hk_entry *heap; /* min-heap by count, n <= k */
	size_t n;
};

/* Are these valid parameters? (k, width, depth >= 1, within the maxima,
 * width * depth <= TOPK_CELLS_MAX, 0 < decay <= 1.) */
bool hk_params_ok(uint32_t k, uint32_t width, uint32_t depth, double decay);
/* An empty sketch. 0, -EINVAL (bad parameters), -ENOMEM. */
int hk_init(struct hk *t, uint32_t k, uint32_t width, uint32_t depth, double decay);
void hk_release(struct hk *t);

/* The fingerprint and the bucket of an item in row i (MurmurHash2, as
 * RedisBloom: fingerprint seed 1919, row i seed i). */
uint32_t hk_fingerprint(const void *item, size_t len);
uint32_t hk_bucket_of(const struct hk *t, const void *item, size_t len, uint32_t row);

/* TOPK.INCRBY of one item (TOPK.ADD is incr 1, 1..TOPK_INCR_MAX). When
 * the item enters a full heap it expels the smallest: *expelled (if not
 * NULL) then gets that item, which the caller frees, else NULL. 0,
 * -EINVAL (incr or length out of range), -ENOMEM. */
int hk_incrby(struct hk *t, const void *item, size_t len, uint32_t incr, char **expelled,
	      size_t *elen);
/* TOPK.QUERY: is the item in the heap? */
bool hk_query(const struct hk *t, const void *item, size_t len);
/* TOPK.COUNT: the largest count of a bucket holding the item's fingerprint. */
uint32_t hk_count(const struct hk *t, const void *item, size_t len);
/* TOPK.LIST order: the heap entries by count, highest first (ties by
 * item bytes), borrowed from t. out must hold t->n pointers. */
void hk_list(const struct hk *t, const struct hk_entry **out);
/* Is h[0..n) (counts) a valid min-heap? */
bool hk_heap_ok(const struct hk_entry *h, size_t n);
/* Is the sketch untouched (no heap entry, every bucket empty)? */
bool hk_is_empty(const struct hk *t);

#endif
