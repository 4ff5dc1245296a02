/*
 * t_topk: the top-k type of Redis Stack (TOPK.RESERVE, ADD, INCRBY,
 * QUERY, COUNT, LIST [WITHCOUNT], INFO) over alg_topk's HeavyKeeper, in a
 * layout of kvfs's own (Kvrocks has no top-k yet; see docs/encoding.md):
 * metadata type 14 with k, width, depth, decay and the generator's draw
 * counter; one sub-key per bucket row; one sub-key for the heap.
 * Layer: types.
 *
 * Verbs return 0 (or a count) or a negative errno: -ENOENT (no such key),
 * -KV_EWRONGTYPE, -EEXIST, -EINVAL (bad argument, logged), -ENOTEMPTY,
 * -EUCLEAN (corrupt record), -EROFS, -ENOMEM, -EIO.
 */
#ifndef KVFS_T_TOPK_H
#define KVFS_T_TOPK_H

#include "types/alg_topk.h"
#include "keyspace/keyspace.h"

#define TOPK_K_DEFAULT 50 /* an empty top-k made without TOPK.RESERVE (mkdir) */

struct topk_params {
	uint32_t k, width, depth;
	double decay;
};

/* One item of TOPK.ADD / INCRBY: borrowed bytes. */
struct topk_item {
	const void *item;
	size_t len;
	uint32_t incr; /* 1 for ADD; 1..TOPK_INCR_MAX */
};

/* TOPK.RESERVE key k [width depth decay]. A remembered empty collection
 * at k is replaced in the same batch. -EEXIST if k is live, -EINVAL for
 * bad parameters (hk_params_ok). */
int topk_reserve(struct keyspace *ks, const struct ks_key *k, const struct topk_params *p);
/* Called for each item of an add, in order, with the item it expelled
 * from the heap (NULL/0: none), after the write succeeded. */
typedef void (*topk_expelled_cb)(void *arg, size_t i, const char *item, size_t len);
/* TOPK.ADD / TOPK.INCRBY of n >= 1 items in one batch. cb may be NULL. */
int topk_add(struct keyspace *ks, const struct ks_key *k, const struct topk_item *items, size_t n,
	     topk_expelled_cb cb, void *arg);
/* TOPK.QUERY: 1 if the item is in the top-k list, 0 if not. */
int topk_has(struct keyspace *ks, const struct ks_key *k, const void *item, size_t len);
/* TOPK.COUNT (an estimate). */
int topk_count_of(struct keyspace *ks, const struct ks_key *k, const void *item, size_t len,
		  uint32_t *count);
/* TOPK.INFO. */
int topk_info(struct keyspace *ks, const struct ks_key *k, struct topk_params *p);
/* The whole state (TOPK.LIST is hk_list() of it): t is initialised
 * here; hk_release() it (on error it holds nothing, and releasing it
 * is harmless). */
int topk_state(struct keyspace *ks, const struct ks_key *k, struct hk *t);

/* ---- The exact state, for the tree (docs/mapping.md) ------------------- */

/* Change the parameters of a top-k that holds nothing (-ENOTEMPTY else). */
int topk_set_params(struct keyspace *ks, const struct ks_key *k, const struct topk_params *p);
/* Replace the heap by these n <= k entries in array order: a valid
 * min-heap of distinct items, each at most TOPK_ITEM_MAX bytes (-EINVAL
 * else; their fingerprints are recomputed). */
int topk_set_heap(struct keyspace *ks, const struct ks_key *k, const struct hk_entry *h, size_t n);
/* Replace the buckets: depth * width of them, row-major (-EINVAL if rows
 * is not the key's depth * width). */
int topk_set_buckets(struct keyspace *ks, const struct ks_key *k, const struct hk_bucket *b,
		     size_t n);
/* Replace the generator's draw counter. */
int topk_set_draws(struct keyspace *ks, const struct ks_key *k, uint64_t draws);

#endif
