/*
 * t_tdigest: the t-digest type of Redis Stack (TDIGEST.CREATE, ADD,
 * MERGE, RESET, QUANTILE, CDF, RANK, REVRANK, BYRANK, BYREVRANK, MIN, MAX,
 * TRIMMED_MEAN, INFO) in Kvrocks's layout (kvrocks-encoding.md 6.12):
 * metadata type 12 with a 72-byte tail, the unmerged samples in one
 * buffer sub-key and one sub-key per centroid. Layer: types.
 *
 * Writes follow Kvrocks: ADD appends to the buffer while it fits the
 * capacity, else merges buffer and samples into the centroids. Queries
 * merge the buffer in memory and store nothing (Kvrocks stores that merge;
 * the answers are the same). All verbs return 0 (or a count) or a
 * negative errno: -ENOENT (no such key), -KV_EWRONGTYPE, -EEXIST,
 * -EINVAL (bad argument, logged), -ENOTEMPTY, -EUCLEAN (corrupt record),
 * -EROFS, -ENOMEM, -EIO.
 */
#ifndef KVFS_T_TDIGEST_H
#define KVFS_T_TDIGEST_H

#include "types/alg_tdigest.h"
#include "keyspace/keyspace.h"

/* The metadata tail, decoded. */
struct tdigest_info {
	uint32_t compression, capacity;
	uint64_t unmerged_nodes, merged_nodes;
	uint64_t total_weight, merged_weight;
	double min, max; /* as stored: DBL_MAX / -DBL_MAX until a merge */
	uint64_t observations, merge_times;
};

/* TDIGEST.CREATE key [COMPRESSION c] (c = 0: the default 100). A
 * remembered empty collection at k is replaced in the same batch.
 * -EEXIST if k is live (any type), -EINVAL if c > 1000. */
int tdigest_create(struct keyspace *ks, const struct ks_key *k, uint32_t compression);
/* TDIGEST.ADD of n >= 1 finite samples (NaN and infinities: -EINVAL). */
int tdigest_add(struct keyspace *ks, const struct ks_key *k, const double *v, size_t n);
/* TDIGEST.RESET: no samples, no centroids; compression and version kept. */
int tdigest_reset(struct keyspace *ks, const struct ks_key *k);
/* TDIGEST.MERGE dest numkeys src... [COMPRESSION c] [OVERRIDE]: dest
 * becomes the merge of the sources (each with its buffer merged), and of
 * its own old contents unless override. c = 0: dest's compression when it
 * is kept, else the largest of the sources'. A missing dest is created;
 * a missing source is -ENOENT and nothing changes. The observations add
 * up; merge_times is dest's (when kept) + 1. */
int tdigest_merge(struct keyspace *ks, const struct ks_key *dest, const struct ks_key *src,
		  size_t nsrc, uint32_t compression, bool override);
/* TDIGEST.INFO: the stored counters. */
int tdigest_info(struct keyspace *ks, const struct ks_key *k, struct tdigest_info *out);
/* The digest the queries see: stored centroids with the buffer merged in
 * (d is initialised here; the caller td_release()s it, also on error).
 * Every TDIGEST.* query is an alg_tdigest function of it (td_quantile,
 * td_cdf, td_rank, ...; TDIGEST.MIN/MAX are d->min/d->max, NaN when
 * d->n == 0). */
int tdigest_digest(struct keyspace *ks, const struct ks_key *k, struct td_digest *d,
		   struct tdigest_info *info);

/* ---- The exact state, for the tree (docs/mapping.md) ------------------- */

/* The stored state: centroids as stored (not merged with the buffer,
 * d initialised here; td_release it) and the buffer samples (*buf
 * malloc()ed, free it; NULL when none). */
int tdigest_state(struct keyspace *ks, const struct ks_key *k, struct tdigest_info *info,
		  struct td_digest *d, double **buf, size_t *nbuf);
/* Replace the buffer by n finite samples (n <= capacity; -EINVAL else).
 * unmerged_nodes and total_weight follow. */
int tdigest_set_buffer(struct keyspace *ks, const struct ks_key *k, const double *v, size_t n);
/* Replace the centroids: finite means not decreasing, finite integral
 * weights >= 1 (-EINVAL else). merged_nodes, merged_weight and
 * total_weight follow. */
int tdigest_set_centroids(struct keyspace *ks, const struct ks_key *k, const struct td_centroid *c,
			  size_t n);
/* Replace the compression (1..1000; a change only while the digest has
 * no samples and no centroids: -ENOTEMPTY else), min, max (not NaN),
 * observations and merge_times, in one write. */
int tdigest_set_stats(struct keyspace *ks, const struct ks_key *k, uint32_t compression, double min,
		      double max, uint64_t observations, uint64_t merge_times);
/* Change the compression (1..1000) of a digest with no samples and no
 * centroids: -ENOTEMPTY else. The capacity follows. */
int tdigest_set_compression(struct keyspace *ks, const struct ks_key *k, uint32_t compression);

#endif
