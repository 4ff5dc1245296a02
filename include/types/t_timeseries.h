/*
 * t_timeseries: the RedisTimeSeries-compatible time-series type as
 * Kvrocks stores it (kvrocks-encoding.md 6.13): TS.CREATE, TS.ALTER,
 * TS.ADD, TS.MADD, TS.INCRBY/DECRBY, TS.DEL, TS.GET, TS.RANGE/REVRANGE,
 * TS.MRANGE/MREVRANGE/MGET, TS.CREATERULE/DELETERULE, TS.INFO, and the
 * chunk-level access the file tree needs for a lossless copy.
 * Layer: types.
 *
 * All verbs return 0 (or a documented count) or a negative errno:
 * -ENOENT (no such key), -KV_EWRONGTYPE, -EEXIST (TS.CREATE of an
 * existing key; a sample refused by DUPLICATE_POLICY BLOCK), -EINVAL (bad
 * argument; a sample older than the retention window; NaN), -EROFS,
 * -ENOMEM, -EIO, -EUCLEAN (a stored record that does not decode).
 */
#ifndef KVFS_T_TIMESERIES_H
#define KVFS_T_TIMESERIES_H

#include "types/alg_tsagg.h"
#include "keyspace/keyspace.h"

/* Kvrocks's numbering (metadata byte). */
enum ts_policy {
	TS_DUP_BLOCK = 0,
	TS_DUP_FIRST = 1,
	TS_DUP_LAST = 2,
	TS_DUP_MIN = 3,
	TS_DUP_MAX = 4,
	TS_DUP_SUM = 5,
};
#define TS_DUP_NONE (-1) /* no ON_DUPLICATE override */

#define TS_DEFAULT_CHUNK_SIZE 1024 /* samples per chunk (Kvrocks) */
#define TS_CHUNK_SIZE_MAX     (1u << 20)
#define TS_NOW		      UINT64_MAX /* a timestamp of "*": the clock */

/* Rules of one source at most: an add locks it and every destination. */
#define TS_RULES_MAX (KS_LOCKV_MAX - 1)

/* Policy names: "block", "first", ... (lower case); NULL or -1 when
 * unknown. Parsing is case-insensitive. (Aggregators: alg_tsagg.h.) */
const char *ts_policy_name(int p);
int ts_policy_parse(const char *s, size_t n);

/* Options of TS.CREATE / TS.ALTER / the create part of TS.ADD. */
#define TS_OPT_RETENTION  0x1
#define TS_OPT_CHUNK_SIZE 0x2
#define TS_OPT_POLICY	  0x4
#define TS_OPT_LABELS	  0x8 /* ALTER: replace every label by `labels` */
struct ts_options {
	unsigned set; /* TS_OPT_* given */
	uint64_t retention;
	uint64_t chunk_size;
	int policy;
	const struct ts_label *labels;
	size_t nlabels;
};

/* The metadata tail, decoded. source borrows from the record read. */
struct ts_meta {
	uint64_t retention, chunk_size, last_ts;
	uint8_t chunk_type, policy;
	const char *source;
	size_t source_len;
};

/* TS.CREATE. -EEXIST if the key exists (any type), -EINVAL for a chunk
 * size of 0 or over TS_CHUNK_SIZE_MAX, a bad policy, an empty label name
 * or value. */
int ts_create(struct keyspace *ks, const struct ks_key *k, const struct ts_options *o);
/* TS.ALTER: only what o->set names changes. */
int ts_alter(struct keyspace *ks, const struct ks_key *k, const struct ts_options *o);

/* Outcome of one sample of TS.MADD. */
enum ts_add_result {
	TS_ADD_INSERT = 0, /* a new timestamp */
	TS_ADD_UPDATE,	   /* an existing one changed by the policy */
	TS_ADD_SKIP,	   /* an existing one kept (FIRST, or no change) */
	TS_ADD_BLOCK,	   /* refused: DUPLICATE_POLICY BLOCK */
	TS_ADD_OLD,	   /* refused: older than the retention window */
};

/* TS.ADD: add one sample (ts TS_NOW = the clock); *out_ts = its
 * timestamp. A missing key is created with create (NULL = defaults).
 * on_dup overrides the key's policy (TS_DUP_NONE: none). -EEXIST when
 * BLOCK refuses, -EINVAL when older than the retention window. */
int ts_add(struct keyspace *ks, const struct ks_key *k, uint64_t ts, double v,
	   const struct ts_options *create, int on_dup, uint64_t *out_ts);

/* TS.MADD on one key: res[i] (may be NULL) gets each sample's outcome,
 * as Redis answers per sample. With TS_MADD_ATOMIC, any refused sample
 * fails the whole call (-EEXIST for BLOCK, -EINVAL for OLD; *bad = its
 * index) and nothing is stored. Without it a missing key is -ENOENT (as
 * TS.MADD); with TS_MADD_CREATE it is created with defaults. Compaction
 * rules are maintained in the same batch. */
#define TS_MADD_ATOMIC 0x1
#define TS_MADD_CREATE 0x2
int ts_madd(struct keyspace *ks, const struct ks_key *k, const struct ts_sample *s, size_t n,
	    unsigned flags, enum ts_add_result *res, size_t *bad);
/* ts_madd with an ON_DUPLICATE policy for these samples (TS.ADD's
 * ON_DUPLICATE; TS_DUP_NONE: the key's DUPLICATE_POLICY). */
int ts_madd_dup(struct keyspace *ks, const struct ks_key *k, const struct ts_sample *s, size_t n,
		unsigned flags, int on_dup, enum ts_add_result *res, size_t *bad);

/* One series of a TS.MADD across keys, and its samples (ts TS_NOW: the
 * clock). */
struct ts_madd_in {
	struct ks_key k;
	const struct ts_sample *s;
	size_t n; /* at least 1 */
};
/*
 * TS.MADD across keys (t_ts_madd.c), all or nothing: the n series (each
 * key once), and the destinations of their rules, locked together; each
 * one's samples added as ts_madd_dup with TS_MADD_ATOMIC does (the
 * duplicate policy: on_dup, else each key's own), its rules run, and one
 * batch for all. On an error nothing is stored, and *bad_key, *bad (may
 * be NULL) name the key and its sample: -ENOENT (a missing key: Redis
 * answers that sample with an error and adds the others; a file write
 * cannot answer per sample, so it refuses the whole), -KV_EWRONGTYPE,
 * -EEXIST (BLOCK), -EINVAL (older than the retention window, NaN, a key
 * given twice or without samples, a key that is also a destination of a
 * rule of another; logged), -E2BIG (more than KS_LOCKV_MAX series and
 * rule destinations; logged), -EUCLEAN, -ENOMEM, -EIO.
 */
int ts_madd_keys(struct keyspace *ks, const struct ts_madd_in *in, size_t n, int on_dup,
		 size_t *bad_key, size_t *bad);

/* TS.INCRBY (delta) / TS.DECRBY (-delta): the newest sample's value plus
 * delta at ts (TS_NOW = clock), which must not be older than the newest
 * sample (-EINVAL). *out = the new value. */
int ts_incrby(struct keyspace *ks, const struct ks_key *k, uint64_t ts, double delta,
	      const struct ts_options *create, double *out, uint64_t *out_ts);

/* TS.DEL key from to (inclusive): *deleted = samples removed. */
int ts_del(struct keyspace *ks, const struct ks_key *k, uint64_t from, uint64_t to,
	   uint64_t *deleted);

/* TS.GET: 1 with *s, 0 for an empty series, or an errno. */
int ts_get(struct keyspace *ks, const struct ks_key *k, struct ts_sample *s);

/* Bucket timestamps of an aggregation. */
enum ts_bt { TS_BT_START = 0, TS_BT_END, TS_BT_MID };

/* TS.RANGE options. */
struct ts_range_opt {
	uint64_t from, to; /* inclusive; 0 and UINT64_MAX for - and + */
	uint64_t count;	   /* 0 = no limit */
	const uint64_t *filter_ts;
	size_t nfilter_ts; /* FILTER_BY_TS (any order) */
	bool filter_value;
	double vmin, vmax; /* FILTER_BY_VALUE */
	int agg;	   /* TS_AGG_NONE: raw samples */
	uint64_t bucket;   /* bucket duration (> 0 with agg) */
	uint64_t align;	   /* ALIGN */
	int bt;		   /* enum ts_bt */
	bool empty;	   /* EMPTY: report empty buckets */
};
void ts_range_opt_init(struct ts_range_opt *o);

/* The samples (or aggregated buckets) of a range, in time order or, with
 * reverse, newest first. out is allocated (free it); *n its length. A
 * missing key is -ENOENT. Retention applies (samples older than the
 * newest minus the retention are not returned). */
int ts_range(struct keyspace *ks, const struct ks_key *k, const struct ts_range_opt *o,
	     bool reverse, struct ts_sample **out, size_t *n);

/* One series of TS.MRANGE / TS.MGET (or one group of GROUPBY: key is
 * "label=value"), with the labels asked for (struct ts_mopt): all
 * borrowed during the callback. */
struct ts_series_result {
	const char *key;
	size_t klen;
	const struct ts_sample *s;
	size_t n;
	const struct ts_label *labels;
	size_t nlabels;
};
typedef int (*ts_series_cb)(void *arg, const struct ts_series_result *r);

/*
 * The options of TS.MRANGE/MREVRANGE/MGET beyond the range: all zero is
 * none. groupby (gn bytes) with reduce (tsagg_reducer_parse) groups the
 * series by that label's value (TS.MRANGE only). withlabels: every label
 * of a series, in name order (a group's: the label, "__reducer__" and
 * "__source__", the group's keys joined by commas); else sel (nsel
 * names, values ignored): those labels, in name order without repeats,
 * "" for one a series lacks (Kvrocks's ExtractSelectedLabels).
 */
struct ts_mopt {
	const char *groupby;
	size_t gn;
	int reduce;
	bool withlabels;
	const struct ts_label *sel;
	size_t nsel;
};

/* TS.MRANGE / TS.MREVRANGE over the series of namespace ns whose labels
 * match f, in key order: found through Kvrocks's label index once it is
 * complete (keyspace/ks_tsindex.h), else by a scan of the namespace.
 * With m's GROUPBY: one result per group, in the byte order of the
 * label's values; a series without the label is in none; each group's
 * samples are its series' ranges (aggregation applied) reduced per
 * timestamp (Kvrocks's TS.MRANGE GROUPBY). A non-zero cb return stops and
 * is returned. -EINVAL (logged) for a groupby without a reducer or the
 * other way round. */
int ts_mrange(struct keyspace *ks, const char *ns, size_t nslen, const struct tsagg_filter *f,
	      const struct ts_range_opt *o, bool reverse, const struct ts_mopt *m, ts_series_cb cb,
	      void *arg);
/* TS.MGET: the newest sample of each matching series (n = 0 if empty),
 * with m's labels (m may be NULL; its groupby is refused, -EINVAL). */
int ts_mget(struct keyspace *ks, const char *ns, size_t nslen, const struct tsagg_filter *f,
	    const struct ts_mopt *m, ts_series_cb cb, void *arg);
/* TS.QUERYINDEX: cb(arg, key, klen) for each matching series, in key
 * order (the key borrowed for the call). */
int ts_queryindex(struct keyspace *ks, const char *ns, size_t nslen, const struct tsagg_filter *f,
		  int (*cb)(void *arg, const char *key, size_t klen), void *arg);

/* TS.INFO. Labels and rules come from ts_labels / ts_rules. */
struct ts_info {
	struct ts_meta m; /* source copied into `source` */
	struct buf source;
	uint64_t chunks, total_samples, first_ts, last_ts, memory;
};
int ts_info(struct keyspace *ks, const struct ks_key *k, struct ts_info *out); /* release source */
/* The stored DUPLICATE_POLICY byte, from the metadata alone. 0, -ENOENT,
 * -KV_EWRONGTYPE, or -EUCLEAN (logged) if it names no policy (*policy
 * is then the byte). */
int ts_policy(struct keyspace *ks, const struct ks_key *k, int *policy);

typedef int (*ts_label_cb)(void *arg, const char *name, size_t nn, const char *v, size_t vn);
int ts_labels(struct keyspace *ks, const struct ks_key *k, ts_label_cb cb, void *arg);
/* One label: set (value non-empty) or remove (value NULL: -ENODATA if
 * absent). */
int ts_label_set(struct keyspace *ks, const struct ks_key *k, const char *name, size_t nn,
		 const char *v, size_t vn);

/* TS.CREATERULE src dst AGGREGATION agg bucket [align]. -ENOENT if src
 * or dst is missing, -EINVAL if src == dst, dst already has a source,
 * src is itself a destination, or the aggregation is bad; -EEXIST if the
 * rule exists; -ENOSPC if src has TS_RULES_MAX rules (an add locks the
 * source and all its destinations: KS_LOCKV_MAX keys). With r (restore)
 * the rule gets r's state as given, and a missing (or remembered empty)
 * src or dst is created as an empty time series in the same batch. */
int ts_createrule(struct keyspace *ks, const struct ks_key *src, const struct ks_key *dst, int agg,
		  uint64_t bucket, uint64_t align, const struct ts_rule *r);
/* TS.DELETERULE: -ENOENT if there is no such rule. */
int ts_deleterule(struct keyspace *ks, const struct ks_key *src, const struct ks_key *dst);
typedef int (*ts_rule_cb)(void *arg, const char *dst, size_t dn, const struct ts_rule *r);
/* The rules of k, by destination. A rule record that does not decode is
 * skipped with a log line naming it (ts_deleterule removes it); an add
 * or a delete on k answers -EUCLEAN while it is there. */
int ts_rules(struct keyspace *ks, const struct ks_key *k, ts_rule_cb cb, void *arg);

/* ---- Chunks, for the file tree ------------------------------------- */

/* Chunks in id order, strictly after `after` (NULL = from the first):
 * next() returns 1 with the chunk id and its sample count, 0 at the end,
 * or an errno. A missing key iterates nothing; another type gives NULL
 * and -KV_EWRONGTYPE in *err. Every reader of chunks skips, with a log
 * line, a record whose key is not 8 bytes of id; a chunk whose value
 * does not decode is returned (logged, count 0), and samples() and
 * ts_chunk_get() answer -EUCLEAN for it. */
struct ts_chunk_iter;
struct ts_chunk_iter *ts_chunk_iter_new(struct keyspace *ks, const struct ks_key *k,
					const uint64_t *after, int *err);
int ts_chunk_iter_next(struct ts_chunk_iter *it, uint64_t *id, uint32_t *count);
void ts_chunk_iter_free(struct ts_chunk_iter *it);
/* The samples of the chunk next() returned, borrowed until the next
 * call. 0, -EUCLEAN or -ENOMEM. */
int ts_chunk_iter_samples(struct ts_chunk_iter *it, const struct ts_sample **s, size_t *n);
/* The samples of chunk id (allocated, free them). -ENOENT, -EUCLEAN. */
int ts_chunk_get(struct keyspace *ks, const struct ks_key *k, uint64_t id, struct ts_sample **s,
		 size_t *n);
/* Store chunk id with exactly these samples (a restore or an edit): ts
 * strictly increasing, the first == id, all before the next chunk and
 * after the previous one; n == 0 removes the chunk. Rules are not run
 * and last_timestamp is not changed (the stored state is what is
 * written). -EINVAL (logged) otherwise. A missing key is -ENOENT. */
int ts_chunk_put(struct keyspace *ks, const struct ks_key *k, uint64_t id,
		 const struct ts_sample *s, size_t n);
/* ts_chunk_put as an edit (a chunk file changed through the mount): the
 * same checks and the same chunk, and in the same batch every
 * compaction rule of k recomputes the buckets holding a timestamp whose
 * sample the edit added, removed or changed (as TS.DEL and late samples
 * do; a bucket after the open one opens as an add would).
 * last_timestamp is not changed. -ENOSPC, -EUCLEAN (a rule that does
 * not decode) as an add. */
int ts_chunk_edit(struct keyspace *ks, const struct ks_key *k, uint64_t id,
		  const struct ts_sample *s, size_t n);
/* A chunk given whole: id (its first timestamp) and its samples. */
struct ts_chunk_in {
	uint64_t id;
	const struct ts_sample *s;
	size_t n;
};
/* In t, whose key k was just renewed as a time series (m: its new
 * metadata; t_convert: a hash
 * of chunk files becomes a series): a series with the defaults holding
 * exactly these n chunks, sorted by id, each as ts_chunk_put checks it
 * and after the one before. last_timestamp is the newest sample. Stages
 * and commits t. -EINVAL (logged) for a chunk that does not fit. */
struct ks_txn;
struct enc_meta;
int ts_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		  const struct ts_chunk_in *c, size_t n);
/* Set the metadata's last_timestamp (Kvrocks's approximate newest
 * timestamp, which compaction uses for the retention). */
int ts_set_last_timestamp(struct keyspace *ks, const struct ks_key *k, uint64_t ts);

/* Pure helpers (encoding of a chunk value, the metadata tail, a rule),
 * exposed for the compaction filter and tests. */
int ts_meta_decode(const uint8_t *tail, size_t n, struct ts_meta *m); /* 0 or -EUCLEAN */
/* Last timestamp of an encoded chunk; false if it does not decode. */
bool ts_chunk_last_ts(const void *v, size_t n, uint64_t *last, uint32_t *count);
/* Kvrocks's retention rule for a chunk: retention != 0 and the chunk's
 * last ts < last_timestamp - retention. */
bool ts_chunk_is_expired(const struct ts_meta *m, const void *v, size_t n);

#endif
