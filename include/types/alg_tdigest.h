/*
 * alg_tdigest: the merging t-digest as Kvrocks implements it (after
 * Apache Arrow): centroids (mean, weight) sorted by mean, merged with the
 * scale function k1 (k = delta/(2 pi) * asin(2q - 1)), plus the queries of
 * RedisBloom's TDIGEST.* commands (quantile, cdf, rank, revrank, by rank,
 * trimmed mean). Pure: no storage. Layer: algorithms (may include util).
 *
 * A digest here is what Kvrocks keeps merged: the centroids, their total
 * weight, min and max (DBL_MAX / -DBL_MAX while empty). Raw samples not
 * merged yet (Kvrocks's buffer) are the caller's: td_merge_input folds
 * them in.
 */
#ifndef KVFS_ALG_TDIGEST_H
#define KVFS_ALG_TDIGEST_H

#include "engine/util.h"

#define TD_COMPRESSION_MAX     1000 /* Kvrocks's kTDigestMaxCompression */
#define TD_COMPRESSION_DEFAULT 100  /* TDIGEST.CREATE without COMPRESSION */
#define TD_CAPACITY_MAX	       1024 /* buffer capacity bound (kMaxElements) */

struct td_centroid {
	double mean, weight;
};

/* Caller-owned: td_init / td_release. */
struct td_digest {
	uint32_t compression;
	double min, max;
	double total_weight; /* sum of the centroid weights */
	struct td_centroid *c;
	size_t n, alloc;
};

/* Kvrocks's buffer capacity: min(6 * compression + 10, 1024). */
uint32_t td_capacity(uint32_t compression);

/* An empty digest with this compression. */
void td_init(struct td_digest *d, uint32_t compression);
void td_release(struct td_digest *d);
/* Forget the centroids: empty again (min DBL_MAX, max -DBL_MAX). */
void td_clear(struct td_digest *d);
/* Append one centroid as stored (no merging; means must not decrease). 0 or -ENOMEM. */
int td_push(struct td_digest *d, double mean, double weight);
/* A copy of src into dst (initialised). 0 or -ENOMEM. */
int td_copy(struct td_digest *dst, const struct td_digest *src);

/* Kvrocks's MergeInput: fold n raw samples (sorted in place here) into
 * the centroids; min/max follow the samples. 0 or -ENOMEM. */
int td_merge_input(struct td_digest *d, double *in, size_t n);
/* Kvrocks's Merge: out (initialised, emptied here, with out->compression
 * as set) becomes the merge of n digests; min/max/weights combined. The
 * sources keep their order among equal means. 0 or -ENOMEM. */
int td_merge_digests(struct td_digest *out, const struct td_digest *const *src, size_t n);

/* The queries; every one answers NaN on an empty digest. */
/* Kvrocks's TDIGEST.QUANTILE (q in [0, 1], else NaN). */
double td_quantile(const struct td_digest *d, double q);
/* RedisBloom's TDIGEST.CDF: fraction of weight below x plus half of that equal to it. */
double td_cdf(const struct td_digest *d, double x);
/* TDIGEST.RANK / REVRANK: -2 when empty; -1 below min (rank) / above max
 * (revrank); the total weight above max (rank) / below min (revrank). */
int64_t td_rank(const struct td_digest *d, double x);
int64_t td_revrank(const struct td_digest *d, double x);
/* TDIGEST.BYRANK / BYREVRANK (rank >= 0): +inf / -inf from the total weight on. */
double td_byrank(const struct td_digest *d, double rank);
double td_byrevrank(const struct td_digest *d, double rank);
/* TDIGEST.TRIMMED_MEAN lo hi (0 <= lo < hi <= 1, else NaN). */
double td_trimmed_mean(const struct td_digest *d, double lo, double hi);

#endif
