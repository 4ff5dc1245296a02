/*
 * Unit tests for alg_tsagg (pure): bucket alignment as Kvrocks computes
 * it, every aggregator over known samples, a rule's running state folded
 * sample by sample giving the same value as the whole bucket, the reset
 * states' (n_u64, n_f64) shapes, and label filters.
 */
#include "types/alg_tsagg.h"
#include "check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void test_buckets(void)
{
	CHECK_INT(tsagg_bucket_left(100, 30, 20), 80); /* Kvrocks's example */
	CHECK_INT(tsagg_bucket_right(100, 30, 20), 110);
	CHECK_INT(tsagg_bucket_left(1999, 1000, 0), 1000);
	CHECK_INT(tsagg_bucket_left(2000, 1000, 0), 2000);
	CHECK_INT(tsagg_bucket_right(2000, 1000, 0), 3000);
	CHECK_INT(tsagg_bucket_left(5, 10, 27), 0); /* before the first aligned bucket */
	CHECK_INT(tsagg_bucket_left(12, 10, 27), 7);
	CHECK_INT(tsagg_bucket_right(12, 10, 27), 17);
	CHECK_INT(tsagg_bucket_right(UINT64_MAX - 1, 10, 0), UINT64_MAX);
}

static void test_aggregators(void)
{
	struct ts_sample s[] = {{1, 2}, {2, 4}, {3, 4}, {4, 4}, {5, 5}, {6, 5}, {7, 7}, {8, 9}};
	static const struct {
		int agg;
		double want;
	} c[] = {
	    {TS_AGG_SUM, 40},  {TS_AGG_MIN, 2},		 {TS_AGG_MAX, 9},
	    {TS_AGG_COUNT, 8}, {TS_AGG_FIRST, 2},	 {TS_AGG_LAST, 9},
	    {TS_AGG_AVG, 5},   {TS_AGG_RANGE, 7},	 {TS_AGG_VAR_P, 4},
	    {TS_AGG_STD_P, 2}, {TS_AGG_VAR_S, 32.0 / 7}, {TS_AGG_STD_S, 2.1380899352993952},
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		double got = tsagg_aggregate(c[i].agg, s, 8);
		if (fabs(got - c[i].want) > 1e-12)
			fprintf(stderr, "  %s: %.17g\n", tsagg_name(c[i].agg), got);
		CHECK(fabs(got - c[i].want) <= 1e-12);
		/* The running state gives the same value, folded one by one. */
		struct ts_rule r;
		tsagg_rule_init(&r, c[i].agg, 100, 0);
		CHECK(tsagg_rule_is_reset(&r));
		for (size_t j = 0; j < 8; j++)
			tsagg_rule_fold(&r, &s[j], 1);
		CHECK(fabs(tsagg_rule_value(&r) - c[i].want) <= 1e-12);
		CHECK(c[i].agg == TS_AGG_SUM || !tsagg_rule_is_reset(&r));
	}
	/* One sample: the sample variances are 0. */
	CHECK(tsagg_aggregate(TS_AGG_VAR_S, s, 1) == 0);
	CHECK(tsagg_aggregate(TS_AGG_STD_S, s, 1) == 0);
	/* First and last follow timestamps, not the folding order. */
	struct ts_rule r;
	tsagg_rule_init(&r, TS_AGG_FIRST, 100, 0);
	tsagg_rule_fold(&r, &s[4], 1);
	tsagg_rule_fold(&r, &s[0], 1);
	CHECK(tsagg_rule_value(&r) == 2);
	CHECK_INT(r.u[0], 1);
	/* Reset shapes (Kvrocks's ResetAuxs): (n_u64, n_f64). */
	static const int shape[][3] = {
	    {TS_AGG_SUM, 0, 1},	  {TS_AGG_MIN, 0, 1},	{TS_AGG_MAX, 0, 1},   {TS_AGG_COUNT, 0, 1},
	    {TS_AGG_FIRST, 1, 1}, {TS_AGG_LAST, 1, 1},	{TS_AGG_AVG, 1, 1},   {TS_AGG_RANGE, 0, 2},
	    {TS_AGG_STD_P, 1, 2}, {TS_AGG_STD_S, 1, 2}, {TS_AGG_VAR_P, 1, 2}, {TS_AGG_VAR_S, 1, 2},
	};
	for (size_t i = 0; i < sizeof(shape) / sizeof(shape[0]); i++) {
		tsagg_rule_init(&r, shape[i][0], 10, 0);
		CHECK_INT(r.nu, shape[i][1]);
		CHECK_INT(r.nf, shape[i][2]);
	}
	CHECK_INT(tsagg_parse("AVG", 3), TS_AGG_AVG);
	CHECK_INT(tsagg_parse("none", 4), -1);
	CHECK(tsagg_name(0) == NULL);
}

static int match(const char *const *exprs, size_t ne, const struct ts_label *l, size_t nl)
{
	struct tsagg_filter *f = tsagg_filter_new();
	int rc = 0;
	for (size_t i = 0; i < ne && !rc; i++)
		rc = tsagg_filter_parse(f, exprs[i], strlen(exprs[i]));
	if (!rc)
		rc = tsagg_filter_check(f);
	if (!rc)
		rc = tsagg_filter_match(f, l, nl) ? 1 : 0;
	tsagg_filter_free(f);
	return rc;
}

static void test_filters(void)
{
	struct ts_label l[] = {{"a", 1, "x", 1}, {"b", 1, "y z", 3}};
	CHECK_INT(match((const char *[]){"a=x"}, 1, l, 2), 1);
	CHECK_INT(match((const char *[]){"a=y"}, 1, l, 2), 0);
	CHECK_INT(match((const char *[]){"a=(y, x)"}, 1, l, 2), 1);
	CHECK_INT(match((const char *[]){"a=x", "b!=(q,'y z')"}, 2, l, 2), 0);
	CHECK_INT(match((const char *[]){"a=x", "b=\"y z\""}, 2, l, 2), 1);
	CHECK_INT(match((const char *[]){"a=x", "c="}, 2, l, 2), 1);
	CHECK_INT(match((const char *[]){"a=x", "c!="}, 2, l, 2), 0);
	CHECK_INT(match((const char *[]){"a=x", "b!="}, 2, l, 2), 1);
	CHECK_INT(match((const char *[]){"a!=x", "b=(y z)"}, 2, l, 2), 0);
	/* Bad filters. */
	CHECK_INT(match((const char *[]){"a!=x"}, 1, l, 2), -EINVAL);
	CHECK_INT(match((const char *[]){"a="}, 1, l, 2), -EINVAL);
	CHECK_INT(match((const char *[]){"ax"}, 1, l, 2), -EINVAL);
	CHECK_INT(match((const char *[]){"a=()"}, 1, l, 2), -EINVAL);
	CHECK_INT(match((const char *[]){" =x"}, 1, l, 2), -EINVAL);
}

/* GROUPBY ... REDUCE: three series merged by timestamp, every reducer
 * by hand (at 1000: 100 and 120; at 1005: 7 alone; at 1010: 110 and 110;
 * at 1020: 120 and 100). */
static void test_group_reduce(void)
{
	static const struct ts_sample a[] = {{1000, 100}, {1010, 110}, {1020, 120}};
	static const struct ts_sample b[] = {{1000, 120}, {1010, 110}, {1020, 100}};
	static const struct ts_sample c[] = {{1005, 7}};
	const struct ts_sample *s[] = {a, b, c};
	const size_t n[] = {3, 3, 1};
	static const struct {
		const char *name;
		double want[4];
	} cases[] = {
	    {"max", {120, 7, 110, 120}}, {"MIN", {100, 7, 110, 100}},
	    {"sum", {220, 7, 220, 220}}, {"avg", {110, 7, 110, 110}},
	    {"range", {20, 0, 0, 20}},	 {"count", {2, 1, 2, 2}},
	    {"var.p", {100, 0, 0, 100}}, {"std.p", {10, 0, 0, 10}},
	    {"var.s", {200, 0, 0, 200}}, {"std.s", {14.142135623730951, 0, 0, 14.142135623730951}},
	};
	static const uint64_t ts[] = {1000, 1005, 1010, 1020};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int r = tsagg_reducer_parse(cases[i].name, strlen(cases[i].name));
		struct ts_sample *out = NULL;
		size_t nout = 0;
		CHECK(r > 0);
		CHECK_INT(tsagg_group_reduce(r, s, n, 3, &out, &nout), 0);
		CHECK_INT(nout, 4);
		for (size_t j = 0; j < nout && j < 4; j++) {
			CHECK_INT(out[j].ts, ts[j]);
			if (fabs(out[j].v - cases[i].want[j]) > 1e-9) {
				fprintf(stderr, "  %s at %llu: got %.17g, want %.17g\n",
					cases[i].name, (unsigned long long)out[j].ts, out[j].v,
					cases[i].want[j]);
				CHECK(false);
			}
		}
		free(out);
	}
	/* first and last are aggregators, not reducers; nothing in: nothing out. */
	CHECK_INT(tsagg_reducer_parse("first", 5), -1);
	CHECK_INT(tsagg_reducer_parse("last", 4), -1);
	CHECK_INT(tsagg_reducer_parse("median", 6), -1);
	struct ts_sample *out = (struct ts_sample *)1;
	size_t nout = 9;
	CHECK_INT(tsagg_group_reduce(TS_AGG_SUM, s, (const size_t[]){0, 0, 0}, 3, &out, &nout), 0);
	CHECK(out == NULL);
	CHECK_INT(nout, 0);
	/* A NaN (an empty bucket of EMPTY) first at a timestamp stays the
	 * min and max there, as Kvrocks's min_element/max_element keep it. */
	static const struct ts_sample na[] = {{1, NAN}}, nb[] = {{1, 5}};
	const struct ts_sample *ns[] = {na, nb};
	CHECK_INT(tsagg_group_reduce(TS_AGG_MAX, ns, (const size_t[]){1, 1}, 2, &out, &nout), 0);
	CHECK_INT(nout, 1);
	CHECK(out && isnan(out[0].v));
	free(out);
	const struct ts_sample *ns2[] = {nb, na};
	CHECK_INT(tsagg_group_reduce(TS_AGG_MAX, ns2, (const size_t[]){1, 1}, 2, &out, &nout), 0);
	CHECK(out && out[0].v == 5);
	free(out);
}

int main(void)
{
	log_level_current = -1;
	test_buckets();
	test_aggregators();
	test_filters();
	test_group_reduce();
	return check_done("test_alg_tsagg");
}
