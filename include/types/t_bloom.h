/*
 * t_bloom: Kvrocks's scalable bloom filter (BF.RESERVE, BF.ADD, BF.MADD,
 * BF.EXISTS, BF.MEXISTS, BF.INFO, BF.CARD) and the whole-state access the
 * file system needs. Layout (kvrocks-encoding.md 6.10): metadata type 9,
 * size = items added, tail n_filters u16 | expansion u16 (0 = non-scaling)
 * | base_capacity u32 | error_rate (sortable double) | bloom_bytes u32;
 * filter i in the default CF at ns|key_len|key|version|i u16 BE -> its
 * split-block bitset (alg_bloom). Bloom is "emptyable": a key with no
 * items is a live key. Layer: types.
 * All verbs return 0 or a negative errno: -ENOENT, -KV_EWRONGTYPE,
 * -EINVAL (bad parameters, logged), -EEXIST (BF.RESERVE of an existing
 * key), -ENOSPC (a non-scaling filter is full), -EUCLEAN, -EROFS,
 * -ENOMEM, -EIO.
 */
#ifndef KVFS_T_BLOOM_H
#define KVFS_T_BLOOM_H

#include <sys/uio.h>

#include "types/alg_bloom.h"
#include "keyspace/keyspace.h"

#define BLOOM_DEFAULT_CAPACITY	 100
#define BLOOM_DEFAULT_ERROR_RATE 0.01
#define BLOOM_DEFAULT_EXPANSION	 2

/* The metadata of a bloom key (BF.INFO's numbers). */
struct bloom_state {
	uint64_t size; /* items added */
	uint16_t n_filters;
	uint16_t expansion; /* 0 = non-scaling */
	uint32_t base_capacity;
	double error_rate;
	uint32_t bloom_bytes; /* sum of the filters' sizes */
};

/* Capacity of the chain (BF.INFO "Capacity"). */
uint64_t bloom_state_capacity(const struct bloom_state *st);
/* Are these creation parameters valid (capacity >= 1, 0 < error_rate <
 * 1)? 0 or -EINVAL, logged with `what` (the key or the caller). */
int bloom_check_params(uint32_t capacity, double error_rate, const char *what);

/* BF.RESERVE: a new empty chain with one zero filter. -EEXIST if the key
 * exists; a remembered empty collection is replaced. */
int bloom_reserve(struct keyspace *ks, const struct ks_key *k, uint32_t capacity, double error_rate,
		  uint16_t expansion);
/* BF.MADD (BF.ADD with n = 1): a missing key is created with the
 * defaults. added[i] (may be NULL) = 1 if item i was new, 0 if it was
 * (probably) there. A full non-scaling chain refuses the whole call
 * (-ENOSPC) and stores nothing. */
int bloom_add(struct keyspace *ks, const struct ks_key *k, const struct iovec *items, size_t n,
	      int *added);
/* BF.MEXISTS: found[i] = 1 or 0; a missing key has nothing. */
int bloom_exists(struct keyspace *ks, const struct ks_key *k, const struct iovec *items, size_t n,
		 int *found);
/* BF.INFO: the metadata. -ENOENT for a missing key. */
int bloom_info(struct keyspace *ks, const struct ks_key *k, struct bloom_state *st);
/* The same without checking every filter of the chain against the
 * stored total (which takes one step per filter): for what sizes
 * nothing by the chain, such as naming and sizing one filter file. */
int bloom_params(struct keyspace *ks, const struct ks_key *k, struct bloom_state *st);
/* BF.CARD: a missing key has 0 items. */
int bloom_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n);
/* Filter i's bitset as stored (zeros of its size if missing). -ENOENT if
 * the key is missing or i >= n_filters. */
int bloom_filter(struct keyspace *ks, const struct ks_key *k, uint32_t i, struct buf *out);
/* Replace filter i's bitset: n must be its size (else -EINVAL, logged). */
int bloom_set_filter(struct keyspace *ks, const struct ks_key *k, uint32_t i, const void *d,
		     size_t n);
/* Empty the chain in one batch: no items, every filter zero (a fresh
 * version without filter records: missing filters read as zeros), the
 * same parameters, number of filters and expiry. -ENOENT for a missing
 * key. */
int bloom_clear(struct keyspace *ks, const struct ks_key *k);
/*
 * Replace the parameters and counters (st's bloom_bytes is ignored: it
 * follows from the others). Creates a missing key (or one remembered
 * empty). Filters that keep their size keep their bits; others become
 * zero filters of the new size; filters past n_filters are deleted.
 * -EINVAL for bad parameters or n_filters 0 or a chain over 4 GiB.
 */
int bloom_set_state(struct keyspace *ks, const struct ks_key *k, const struct bloom_state *st);

/* BF.RESERVE over an empty chain: the parameters of a bloom without
 * items (or of a missing key or a remembered empty collection, which
 * becomes one) are replaced and the chain starts again with one filter.
 * 0 also when the parameters are the ones it has (nothing is written);
 * -ENOTEMPTY (logged) if it holds items; -EINVAL for bad parameters. */
int bloom_set_params(struct keyspace *ks, const struct ks_key *k, uint32_t capacity,
		     double error_rate, uint16_t expansion);
/* For t_convert: k, read in transaction t and renewed there as a bloom
 * (ks_txn_renew; m its metadata), gets state st (its bloom_bytes is
 * ignored) and filters[i] (st->n_filters entries) as filter i, an entry
 * with iov_base NULL a zero filter (not stored); then t commits. 0, what
 * ks_txn_commit returns, or -EINVAL (logged: bad parameters, a filter of
 * the wrong size) with nothing staged. */
struct ks_txn;
int bloom_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		     const struct bloom_state *st, const struct iovec *filters);

#endif
