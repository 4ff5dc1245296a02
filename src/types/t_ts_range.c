/*
 * t_ts_range: the range reads of the time-series type (TS.RANGE,
 * TS.REVRANGE: filters, aggregation into buckets, retention), which
 * TS.MRANGE (t_ts_labels.c) runs on every series it finds; a part of the
 * module t_timeseries (contract: t_timeseries.h; inside:
 * t_timeseries_int.h). Layer: types.
 */
#include "types/t_timeseries_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

void ts_range_opt_init(struct ts_range_opt *o)
{
	memset(o, 0, sizeof(*o));
	o->to = UINT64_MAX;
}

static bool ts_in(const struct ts_range_opt *o, uint64_t ts)
{
	if (!o->nfilter_ts)
		return true;
	for (size_t i = 0; i < o->nfilter_ts; i++)
		if (o->filter_ts[i] == ts)
			return true;
	return false;
}

/* Kvrocks's AggregateSamplesByRangeOption over samples a (time order). */
static int range_aggregate(const struct ts_range_opt *o, const struct ts_sarr *a,
			   struct ts_sarr *out)
{
	int rc = 0;
	if (!a->n)
		return 0;
	uint64_t left = tsagg_bucket_left(a->s[0].ts, o->bucket, o->align);
	size_t i = 0;
	bool prev_empty = true;
	double prev_last = NAN;
	while (i < a->n && !rc) {
		uint64_t right = tsagg_bucket_right(left, o->bucket, o->align);
		size_t j = i;
		while (j < a->n && a->s[j].ts < right)
			j++;
		uint64_t ts = o->bt == TS_BT_END   ? left + o->bucket
			      : o->bt == TS_BT_MID ? left + o->bucket / 2
						   : left;
		if (j > i) {
			rc = ts_sarr_push(
			    out, (struct ts_sample){ts, tsagg_aggregate(o->agg, a->s + i, j - i)});
			prev_empty = false;
			prev_last = a->s[j - 1].v;
		} else if (o->empty) {
			double v = NAN;
			if (o->agg == TS_AGG_SUM || o->agg == TS_AGG_COUNT)
				v = 0;
			else if (o->agg == TS_AGG_LAST && !prev_empty)
				v = prev_last; /* NEEDSWORK: Kvrocks reads the empty span here */
			rc = ts_sarr_push(out, (struct ts_sample){ts, v});
			prev_empty = true;
		}
		i = j;
		if (right == UINT64_MAX)
			break;
		left = right;
	}
	return rc;
}

int ts_series_range(struct ts_series *s, const struct ts_range_opt *o, bool reverse,
		    struct ts_sarr *out)
{
	struct ts_sample last;
	bool any;
	struct ts_sarr a = {0};
	int rc = ts_series_last(s, &any, &last);
	if (rc || !any || o->to < o->from)
		return rc;
	uint64_t from = o->from, to = o->to < last.ts ? o->to : last.ts;
	if (s->tm.retention && last.ts > s->tm.retention && last.ts - s->tm.retention > from)
		from = last.ts - s->tm.retention;
	if (from > to)
		return 0;
	rc = ts_series_collect(s, from, to, &a);
	/* Filters. */
	size_t w = 0;
	for (size_t i = 0; i < a.n && !rc; i++) {
		if (!ts_in(o, a.s[i].ts))
			continue;
		if (o->filter_value && (a.s[i].v < o->vmin || a.s[i].v > o->vmax))
			continue;
		a.s[w++] = a.s[i];
	}
	a.n = w;
	if (!rc && o->agg) {
		rc = range_aggregate(o, &a, out);
	} else if (!rc) {
		*out = a;
		a.s = NULL;
	}
	free(a.s);
	if (rc)
		return rc;
	if (reverse)
		for (size_t i = 0; i < out->n / 2; i++) {
			struct ts_sample t = out->s[i];
			out->s[i] = out->s[out->n - 1 - i];
			out->s[out->n - 1 - i] = t;
		}
	if (o->count && out->n > o->count)
		out->n = o->count;
	return 0;
}

int ts_range_check(const struct ts_range_opt *o)
{
	if (o->agg && (!tsagg_name(o->agg) || o->bucket == 0)) {
		LOG_ERR("AGGREGATION: a known aggregator and a bucket duration > 0");
		return -EINVAL;
	}
	if (o->filter_value && (isnan(o->vmin) || isnan(o->vmax))) {
		LOG_ERR("FILTER_BY_VALUE: two numbers");
		return -EINVAL;
	}
	return 0;
}

int ts_range(struct keyspace *ks, const struct ks_key *k, const struct ts_range_opt *o,
	     bool reverse, struct ts_sample **out, size_t *n)
{
	struct ts_series s;
	struct ts_sarr r = {0};
	int rc = ts_range_check(o);
	if (rc)
		return rc;
	rc = ts_series_open(&s, ks, NULL, k, false, NULL);
	if (!rc)
		rc = ts_series_range(&s, o, reverse, &r);
	ts_series_release(&s);
	if (rc) {
		free(r.s);
		return rc;
	}
	*out = r.s;
	*n = r.n;
	return 0;
}
