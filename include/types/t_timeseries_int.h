/*
 * t_timeseries_int: what the files of the time-series module share, and
 * no one else may use: t_timeseries.c (chunks, adds, deletes),
 * t_ts_range.c (TS.RANGE), t_ts_rules.c (compaction rules) and
 * t_ts_labels.c (labels, MRANGE, MGET). The module's contract is
 * t_timeseries.h; this header is its inside (one series being read or
 * changed, the sample arrays) and changes with it. Byte layouts: the top
 * of t_timeseries.c.
 * Layer: types.
 */
#ifndef KVFS_T_TIMESERIES_INT_H
#define KVFS_T_TIMESERIES_INT_H

#include "keyspace/ks_txn.h"
#include "types/t_timeseries.h"

/* The byte after the version of a sub-key: what the record is. */
#define TS_SUB_CHUNK 0x00
#define TS_SUB_LABEL 0x01
#define TS_SUB_RULE  0x02

/* A growable array of samples: zero-initialise, free(a.s). */
struct ts_sarr {
	struct ts_sample *s;
	size_t n, cap;
};
/* Append s. 0 or -ENOMEM. */
int ts_sarr_push(struct ts_sarr *a, struct ts_sample s);

/* A sample of an add, with its place in the caller's array and its
 * outcome (enum ts_add_result). */
struct ts_ssamp {
	struct ts_sample s;
	size_t idx;
	int res;
};
/* qsort order of ts_ssamp: by timestamp, then by idx. */
int ts_ssamp_cmp(const void *a, const void *b);

/* A chunk the series rewrites (pending until ts_series_flush). */
struct ts_nchunk {
	uint64_t id;
	struct ts_sample *s;
	size_t n;
};

/*
 * One time series being read (t NULL: no lock, nothing written) or
 * changed in the write transaction t. Its reads see its own pending
 * chunk changes; ts_series_flush stages them (and the metadata, when
 * dirty) in t, and ks_txn_commit writes them. Fields are the module's.
 */
struct ts_series {
	struct keyspace *ks;
	struct ks_txn *t;
	const struct ks_key *tk; /* the key as given to t */
	struct ks_key k;	 /* a copy, for reads and the log */
	struct buf raw, pfx, src, tail;
	struct enc_meta *m; /* t's (a writer) or &own (a reader) */
	struct enc_meta own;
	struct ts_meta tm;
	bool fresh, dirty;
	struct store_iter *it; /* over the chunk sub-keys */
	uint64_t *dead;	       /* chunks gone */
	size_t ndead;
	struct ts_nchunk *nc; /* chunks (re)written */
	size_t nnc;
};

/*
 * Open k as a time series: its metadata read through t (ks_txn_get; with
 * create, ks_txn_open, and a missing key is a new series with the
 * defaults and o), or, t NULL, with a plain read (create must be false).
 * 0, -ENOENT, -KV_EWRONGTYPE, -EUCLEAN (logged), -ENOMEM, -EIO. Release
 * s with ts_series_release whatever the result.
 */
int ts_series_open(struct ts_series *s, struct keyspace *ks, struct ks_txn *t,
		   const struct ks_key *k, bool create, const struct ts_options *o);
void ts_series_release(struct ts_series *s);

/* Call cb for each stored sub-key of one type (TS_SUB_LABEL,
 * TS_SUB_RULE) of s, in byte order, with the part after the type byte
 * and the value, both borrowed for the call. A non-zero return of cb
 * stops and is returned. */
int ts_series_subs(struct ts_series *s, uint8_t type, ts_label_cb cb, void *arg);
/* Stage in s->t a put (v not NULL) or delete of the sub-key type | p. */
void ts_series_sub_put(struct ts_series *s, uint8_t type, const void *p, size_t n, const void *v,
		       size_t vn);

/* The newest sample, pending changes included: *any false if none. */
int ts_series_last(struct ts_series *s, bool *any, struct ts_sample *last);
/* Samples with from <= ts <= to, in time order, pending changes included. */
int ts_series_collect(struct ts_series *s, uint64_t from, uint64_t to, struct ts_sarr *out);
/* Upsert the samples v (sorted by ts_ssamp_cmp; res preset: only
 * TS_ADD_INSERT ones are added) with the policy; res gets each outcome. */
int ts_series_upsert(struct ts_series *s, struct ts_ssamp *v, size_t n, int policy);
/* Delete from <= ts <= to: *deleted counts; gone (may be NULL) gets the
 * deleted samples. */
int ts_series_delete(struct ts_series *s, uint64_t from, uint64_t to, uint64_t *deleted,
		     struct ts_sarr *gone);
/* Stage the pending chunk changes, and the metadata if dirty, in s->t. */
void ts_series_flush(struct ts_series *s);
/* The end of a write verb on s (and also, another series of t, or NULL)
 * in t: with rc 0, stage them (ts_series_flush) and commit t; then
 * release them and end t. rc, or the commit's error. A series staged in
 * t stays open until the commit: t borrows its metadata tail. */
int ts_series_end(struct ks_txn *t, struct ts_series *s, struct ts_series *also, int rc);

/* Merge v (n samples, any order: sorted here) into s as TS.MADD does,
 * with the flags of ts_madd (TS_MADD_ATOMIC: a refused sample is
 * -EEXIST or -EINVAL with *bad its idx) and the policy on_dup
 * (TS_DUP_NONE: the key's); create's labels go to a new series. The
 * rules of rs follow in the same transaction. */
struct ts_rule_set;
int ts_series_madd(struct ts_series *s, struct ts_ssamp *v, size_t n, unsigned flags, int on_dup,
		   const struct ts_options *create, struct ts_rule_set *rs, size_t *bad);

/* ---- ranges (t_ts_range.c) ----------------------------------------- */

/* The samples or buckets of TS.RANGE o on s (see ts_range). */
int ts_series_range(struct ts_series *s, const struct ts_range_opt *o, bool reverse,
		    struct ts_sarr *out);
/* Refuse (logged -EINVAL) a bad aggregation or value filter of o. */
int ts_range_check(const struct ts_range_opt *o);

/* ---- labels (t_ts_labels.c) ---------------------------------------- */

/* Stage o's labels (TS_OPT_LABELS) for s, replacing the stored ones of a
 * series that is not new, and their label index records. 0 or an error
 * of the read. */
int ts_labels_write(struct ts_series *s, const struct ts_options *o);
/* Before the transaction of a verb that may write o's labels: make the
 * label index complete (ks_tsindex_prepare) if o has any. 0 or its
 * error. Never with a key lock held. */
int ts_labels_prepare(struct keyspace *ks, const struct ts_options *o);

/* ---- rules (t_ts_rules.c) ------------------------------------------ */

struct ts_rule_ent {
	struct buf dst;
	struct ts_rule r;
	/* The destination, while a write changes it: open until the set
	 * is released, as the transaction borrows its metadata tail. */
	struct ts_series d;
};

/* The rules of a source and the keys its write transaction locks:
 * keys[0] the source (with its caller's attribute change), keys[1..n]
 * the destinations (without). Zero-initialise; ts_rule_set_release,
 * after the transaction ended. */
struct ts_rule_set {
	struct ts_rule_ent *e;
	size_t n;
	struct ks_key *keys; /* n + 1 */
};

/*
 * Begin t on k and the destinations of its rules, read into rs under
 * the lock of them all (re-read until the rules read are those locked).
 * A missing key has none. 0 with t begun (the caller ends it), else the
 * error with t ended: -ENOSPC (more than TS_RULES_MAX rules),
 * -KV_EWRONGTYPE, -EUCLEAN (a rule that does not decode; logged),
 * -EAGAIN, -ENOMEM, -EIO. t borrows rs->keys: release rs after ending t.
 */
int ts_rule_set_begin(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
		      struct ts_rule_set *rs);
void ts_rule_set_release(struct ts_rule_set *rs);
/*
 * ts_rule_set_begin for the n distinct series k[] at once (TS.MADD
 * across keys): rs[i] gets the rules of k[i], and t locks every series
 * and every destination, in *all (allocated: free it after ending t;
 * the series first, in k's order). -E2BIG when they are more than
 * KS_LOCKV_MAX keys, -EINVAL (logged) when one of k[] is a destination
 * of another's rule; otherwise as ts_rule_set_begin. Release each rs[i]
 * after ending t.
 */
int ts_rule_sets_begin(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k, size_t n,
		       struct ts_rule_set *rs, struct ks_key **all);
/* Maintain the rules after the samples c (time order, res INSERT or
 * UPDATE) were added to s: their states and destinations, staged in
 * s->t. */
int ts_rule_set_added(struct ts_rule_set *rs, struct ts_series *s, const struct ts_ssamp *c,
		      size_t n);
/* The same after the samples gone (time order) were deleted from s. */
int ts_rule_set_deleted(struct ts_rule_set *rs, struct ts_series *s, const struct ts_sarr *gone);
/* The same after a chunk edit changed the samples at the timestamps ts
 * (sorted: added, removed or given another value): every bucket they
 * fall in is recomputed from s as it now is. */
int ts_rule_set_edited(struct ts_rule_set *rs, struct ts_series *s, const uint64_t *ts, size_t n);

#endif
