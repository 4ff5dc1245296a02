/*
 * t_zset: the Redis sorted-set type (ZADD with NX/XX/GT/LT/CH, ZREM,
 * ZSCORE, ZINCRBY, ZRANK/ZREVRANK, ZCARD, ZPOPMIN/ZPOPMAX, ZRANGE by rank and by
 * score in both directions, iteration in score and in member order).
 * Layout (kvrocks-encoding.md 6.5): metadata (type 5, size = member
 * count); default CF: ns|key_len|key|version|member -> score as an
 * 8-byte sortable double; zset_score CF: ns|key_len|key|version|sortable
 * score|member -> empty value. The two records of a member are always
 * written and deleted together, in one batch. Layer: types.
 *
 * Scores: NaN is refused (-EINVAL). -0.0 and +0.0 are stored as given,
 * as Kvrocks's ZADD stores the parsed double unchanged (-0.0 sorts as 7F
 * FF.., +0.0 as 80 00..). Like Kvrocks and Redis they compare equal: a
 * ZADD that only flips the sign of a zero score is no change and writes
 * nothing, and score ranges include both zeros wherever 0 is in range.
 * Members are binary. All verbs return 0 (or a documented count) or a
 * negative errno: -ENOENT (no such key or member), -KV_EWRONGTYPE,
 * -EINVAL, -EFBIG (member over ZSET_MEMBER_MAX), -EUCLEAN (a member
 * record whose score does not decode: not 8 bytes, or NaN; logged),
 * -EROFS, -ENOMEM, -EIO.
 */
#ifndef KVFS_T_ZSET_H
#define KVFS_T_ZSET_H

#include "keyspace/keyspace.h"

/* ZREM option: when the last member goes, remember the key as an empty
 * zset (in the same batch) instead of letting it vanish. */
#define ZSET_KEEP_EMPTY 0x1

/* ZADD options (Redis's meaning). NX with XX, GT or LT, and GT with LT
 * are -EINVAL. GT/LT only restrict updates; new members are added. */
#define ZSET_ADD_NX 0x1	 /* only add new members */
#define ZSET_ADD_XX 0x2	 /* only update existing members */
#define ZSET_ADD_GT 0x4	 /* update only if the new score is greater */
#define ZSET_ADD_LT 0x8	 /* update only if the new score is less */
#define ZSET_ADD_CH 0x10 /* count changed members as well as added ones */

/* Largest member: Redis's proto-max-bulk-len. */
#define ZSET_MEMBER_MAX (512ull << 20)

/* One member and score for zset_add_multi: borrowed bytes. */
struct zset_member {
	const void *member;
	size_t len;
	double score;
};

/* ZADD of one member: returns 1 if it was added (or, with ZSET_ADD_CH,
 * added or its score changed), 0 if not, or a negative errno. Creates
 * the key (unless nothing is added) and drops its empty-collection
 * record in the same batch. */
int zset_add(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, double score,
	     unsigned flags);
/* ZADD of n >= 1 members in one batch; a member given twice takes its
 * last score (as Kvrocks). *count (may be NULL) = what ZADD replies. */
int zset_add_multi(struct keyspace *ks, const struct ks_key *k, const struct zset_member *ms,
		   size_t n, unsigned flags, uint64_t *count);
/* ZINCRBY: member m's score plus by, in one batch (its score-index record
 * moved in the same batch); a missing member (or key) is added with score
 * by. *out = the new score (infinities allowed, as Redis). -EINVAL: by is
 * NaN; -ERANGE: the sum is NaN (inf + -inf), nothing written; -EFBIG,
 * -KV_EWRONGTYPE, -EUCLEAN (the member's score does not decode). */
int zset_incrby(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, double by,
		double *out);
/* ZREM of one member. flags: ZSET_KEEP_EMPTY. -ENOENT if the key or the
 * member is missing. A member whose score does not decode is removed too
 * (its score-index record found by a scan of the key's index). */
int zset_rem(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, unsigned flags);
/* Rename member `from` to `to`, keeping its score, in one batch; if `to`
 * is a member too it is replaced (the set loses one member). from == to
 * is 0 if it exists. -ENOENT if the key or `from` is missing. */
int zset_rename_member(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fn,
		       const void *to, size_t tn);
/* ZSCORE. -ENOENT if the key or the member is missing. */
int zset_score(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn,
	       double *score);
/* ZRANK (reverse = false) / ZREVRANK: 0-based. -ENOENT if the key or the
 * member is missing. O(rank), as Kvrocks. */
int zset_rank(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, bool reverse,
	      uint64_t *rank);
/* ZCARD: a missing key has 0 members. */
int zset_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n);

/* Called for each member of a range with borrowed bytes (valid during
 * the call). A non-zero return stops the range and is returned. */
typedef int (*zset_range_cb)(void *arg, const char *m, size_t mn, double score);

/* ZRANGE start stop [REV]: Redis's inclusive, possibly negative ranks,
 * counted from the lowest score (or the highest with reverse); cb gets
 * the members in that order, the first at rank max(start, 0). A missing
 * key calls nothing. One consistent snapshot. */
int zset_range_by_rank(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t stop,
		       bool reverse, zset_range_cb cb, void *arg);

/*
 * ZPOPMIN key count (max false) / ZPOPMAX: remove up to count members of
 * the lowest (highest) scores in one batch, as Kvrocks's ZSet::Pop: in
 * score-index order, ties by member bytes (descending for ZPOPMAX). cb
 * gets each member and score in that order before the batch is written
 * (a non-zero return stops the verb with it, nothing written; on an error
 * of the write the caller drops what cb got: nothing was popped). flags:
 * ZSET_KEEP_EMPTY. A missing key or count 0 pops nothing: 0, no call.
 * A score-index record without its member record (or at another score)
 * is skipped and logged; a member whose record does not decode is popped
 * with the index's score (logged).
 */
int zset_pop(struct keyspace *ks, const struct ks_key *k, uint64_t count, bool max, unsigned flags,
	     zset_range_cb cb, void *arg);

/* A score interval; min/max may be -inf/+inf; *ex = exclusive bound. */
struct zset_score_range {
	double min, max;
	bool minex, maxex;
};
/* ZRANGEBYSCORE / ZREVRANGEBYSCORE with LIMIT offset count (count < 0 =
 * no limit): members with scores in the range, ascending (or descending
 * with reverse). An empty interval calls nothing; NaN bounds are
 * -EINVAL. */
int zset_range_by_score(struct keyspace *ks, const struct ks_key *k,
			const struct zset_score_range *r, bool reverse, uint64_t offset,
			int64_t count, zset_range_cb cb, void *arg);

/*
 * Iteration in score order (ties by member bytes), ascending or with
 * reverse descending, strictly after the cursor (score, member) in that
 * direction (NULL = from the first). The iterator reads one snapshot. A
 * missing key iterates nothing; another type gives NULL and
 * -KV_EWRONGTYPE in *err. next() returns 1 with a borrowed member (valid
 * until the next call) and its score, 0 at the end, or a negative errno.
 * Each score-index record is checked against its member record (one
 * point read): one without it, or at another score, names nothing ZSCORE
 * finds and is skipped with a log line. A member whose record does not
 * decode is returned (logged) with the index's score and _bad() true.
 */
struct zset_cursor {
	double score;
	const void *member;
	size_t len;
};
struct zset_score_iter;
struct zset_score_iter *zset_score_iter_new(struct keyspace *ks, const struct ks_key *k,
					    bool reverse, const struct zset_cursor *after,
					    int *err);
int zset_score_iter_next(struct zset_score_iter *it, const char **m, size_t *mn, double *score);
bool zset_score_iter_bad(const struct zset_score_iter *it);
void zset_score_iter_free(struct zset_score_iter *it);

/* Iteration in member byte order, strictly after `after` (NULL = from the
 * first), with the same rules as above; a score that does not decode is
 * returned as NaN (logged) with _bad() true. */
struct zset_member_iter;
struct zset_member_iter *zset_member_iter_new(struct keyspace *ks, const struct ks_key *k,
					      const void *after, size_t alen, int *err);
int zset_member_iter_next(struct zset_member_iter *it, const char **m, size_t *mn, double *score);
bool zset_member_iter_bad(const struct zset_member_iter *it);
void zset_member_iter_free(struct zset_member_iter *it);

/* For t_convert: k, read in transaction t and renewed there as a zset
 * (ks_txn_renew), gets member m with score, one it does not have yet;
 * the caller commits. 0, or -EINVAL (NaN)/-EFBIG (nothing staged). */
struct ks_txn;
int zset_txn_add(struct ks_txn *t, const struct ks_key *k, const void *m, size_t mn, double score);

#endif
