/*
 * alg_tsagg: pure cores of the time-series type (t_timeseries): Kvrocks's
 * aggregators, the running state of a compaction rule, bucket alignment,
 * and RedisTimeSeries label filters. No storage. Layer: algorithms (may
 * include util only).
 */
#ifndef KVFS_ALG_TSAGG_H
#define KVFS_ALG_TSAGG_H

#include "engine/util.h"

struct ts_sample {
	uint64_t ts;
	double v;
};

struct ts_label {
	const char *name;
	size_t nn;
	const char *value;
	size_t vn;
};

/* Kvrocks's TSAggregatorType numbering (rule byte). */
enum ts_agg {
	TS_AGG_NONE = 0,
	TS_AGG_SUM = 1,
	TS_AGG_MIN = 2,
	TS_AGG_MAX = 3,
	TS_AGG_COUNT = 4,
	TS_AGG_FIRST = 5,
	TS_AGG_LAST = 6,
	TS_AGG_AVG = 7,
	TS_AGG_RANGE = 8,
	TS_AGG_STD_P = 9,
	TS_AGG_STD_S = 10,
	TS_AGG_VAR_P = 11,
	TS_AGG_VAR_S = 12,
};

/* "avg", "sum", "std.p", ... (lower case); NULL / -1 when unknown (or
 * none). Parsing is case-insensitive. */
const char *tsagg_name(int a);
int tsagg_parse(const char *s, size_t n);

#define TS_AUX_MAX 4
/* A compaction rule (downstream record), with its running state. */
struct ts_rule {
	int agg;
	uint64_t bucket, align, latest;
	uint8_t nu, nf;
	uint64_t u[TS_AUX_MAX];
	double f[TS_AUX_MAX];
};
/* The state of a rule just created: latest 0, aux reset (Kvrocks). */
void tsagg_rule_init(struct ts_rule *r, int agg, uint64_t bucket, uint64_t align);
/* Kvrocks's ResetAuxs: the state of an empty open bucket. */
void tsagg_rule_reset(struct ts_rule *r);
/* Is r's state the reset one (nothing folded, or a sum/count of 0)? */
bool tsagg_rule_is_reset(const struct ts_rule *r);
/* Fold samples into the open bucket (Kvrocks's AggregateLatestBucket). */
void tsagg_rule_fold(struct ts_rule *r, const struct ts_sample *s, size_t n);
/* The value of the open bucket from its state (non-empty). */
double tsagg_rule_value(const struct ts_rule *r);

/* Start / end of the aligned bucket holding ts (Kvrocks's
 * CalculateAlignedBucketLeft / Right; dur > 0). */
uint64_t tsagg_bucket_left(uint64_t ts, uint64_t dur, uint64_t align);
uint64_t tsagg_bucket_right(uint64_t ts, uint64_t dur, uint64_t align);
/* The aggregate of n >= 1 samples in time order (Kvrocks's formulas:
 * var.p = (sum of squares - sum^2 / n) / n; var.s, std.s are 0 for n = 1). */
double tsagg_aggregate(int agg, const struct ts_sample *s, size_t n);

/* TS.MRANGE/MREVRANGE GROUPBY ... REDUCE: the reducers Kvrocks has
 * (avg, sum, min, max, range, count, std.p, std.s, var.p, var.s: the
 * aggregators without first and last), case-insensitive; -1 if none. */
int tsagg_reducer_parse(const char *s, size_t n);
/*
 * Kvrocks's GroupSamplesAndReduce: merge the k series s[i] (n[i] samples
 * each, in time order) by timestamp and reduce the values of each
 * timestamp with reducer r (tsagg_aggregate's formulas; a timestamp one
 * series has counts once for it). *out (malloc'd, free it) gets one
 * sample per distinct timestamp, in time order, *nout of them. Samples of
 * equal timestamps are taken in series order. 0 or -ENOMEM.
 */
int tsagg_group_reduce(int r, const struct ts_sample *const *s, const size_t *n, size_t k,
		       struct ts_sample **out, size_t *nout);

/* Label filters of TS.MRANGE / TS.MGET ("a=b", "a!=b", "a=", "a!=",
 * "a=(x,y)", "a!=(x,y)"). Parse with tsagg_filter_parse (one expression
 * each call); tsagg_filter_check: at least one positive matcher "a=b" or
 * "a=(..)", as RedisTimeSeries requires. */
struct tsagg_filter;
struct tsagg_filter *tsagg_filter_new(void);
void tsagg_filter_free(struct tsagg_filter *f);
int tsagg_filter_parse(struct tsagg_filter *f, const char *expr, size_t n); /* -EINVAL, -ENOMEM */
int tsagg_filter_check(const struct tsagg_filter *f);			    /* -EINVAL */
/* Call cb for every value of every positive matcher "a=v" / "a=(v,w)"
 * of f (the label index's look-ups), in the order given; a non-zero
 * return stops and is returned. */
int tsagg_filter_each_equal(const struct tsagg_filter *f,
			    int (*cb)(void *arg, const char *label, size_t ln, const char *v,
				      size_t vn),
			    void *arg);
/* Do labels l[0..n) pass every matcher of f? */
bool tsagg_filter_match(const struct tsagg_filter *f, const struct ts_label *l, size_t n);

#endif
