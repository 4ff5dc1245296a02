/*
 * t_ts_madd: TS.MADD across keys, a part of the module t_timeseries
 * (contract: t_timeseries.h; inside: t_timeseries_int.h). Every series
 * of the call and every destination of their rules is locked at once
 * (ts_rule_sets_begin: ks_txn_beginv, in stripe order), the samples are
 * added and the rules run as each single-key add does, and one batch
 * commits it all, or nothing is stored. Layer: types.
 */
#include "types/t_timeseries_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* The samples of in[i] as an add takes them (ts TS_NOW = now), into
 * v[i]; a NaN is -EINVAL with *bad_key, *bad. */
static int samples_prepare(const struct ts_madd_in *in, size_t n, struct ts_ssamp **v,
			   size_t *bad_key, size_t *bad)
{
	uint64_t now = now_ms();
	for (size_t i = 0; i < n; i++) {
		if (!(v[i] = calloc(in[i].n ? in[i].n : 1, sizeof(*v[i]))))
			return -ENOMEM;
		for (size_t j = 0; j < in[i].n; j++) {
			if (isnan(in[i].s[j].v)) {
				*bad_key = i;
				*bad = j;
				LOG_ERR("%.*s: a sample value cannot be NaN", (int)in[i].k.klen,
					in[i].k.key);
				return -EINVAL;
			}
			v[i][j].s = in[i].s[j];
			if (v[i][j].s.ts == TS_NOW)
				v[i][j].s.ts = now;
			v[i][j].idx = j;
		}
	}
	return 0;
}

int ts_madd_keys(struct keyspace *ks, const struct ts_madd_in *in, size_t n, int on_dup,
		 size_t *bad_key, size_t *bad)
{
	struct ts_ssamp **v = NULL;
	struct ts_rule_set *rs = NULL;
	struct ts_series *s = NULL;
	struct ks_key *keys = NULL, *all = NULL;
	struct ks_txn t;
	size_t opened = 0, dummy;
	int rc = 0;
	if (!bad_key)
		bad_key = &dummy;
	if (!bad)
		bad = &dummy;
	*bad_key = n; /* no key's fault, unless one is named below */
	*bad = 0;
	if (n == 0 || (on_dup != TS_DUP_NONE && !ts_policy_name(on_dup)))
		return -EINVAL;
	if (n > KS_LOCKV_MAX) {
		LOG_ERR("TS.MADD: %zu series, more than the %d keys one batch locks", n,
			KS_LOCKV_MAX);
		return -E2BIG;
	}
	v = calloc(n, sizeof(*v));
	rs = calloc(n, sizeof(*rs));
	s = calloc(n, sizeof(*s));
	keys = calloc(n, sizeof(*keys));
	if (!v || !rs || !s || !keys) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		keys[i] = in[i].k;
		for (size_t j = 0; j < i && !rc; j++)
			if (ks_key_eq(&keys[j], &keys[i]))
				rc = -EINVAL; /* the caller gives each key once */
		if (!in[i].n)
			rc = -EINVAL;
	}
	if (!rc)
		rc = samples_prepare(in, n, v, bad_key, bad);
	if (!rc)
		rc = ts_rule_sets_begin(&t, ks, keys, n, rs, &all);
	if (rc)
		goto out;
	for (size_t i = 0; i < n && !rc; i++) {
		*bad_key = i;
		*bad = 0;
		rc = ts_series_open(&s[i], ks, &t, &all[i], false, NULL);
		opened = i + 1;
		if (!rc)
			rc = ts_series_madd(&s[i], v[i], in[i].n, TS_MADD_ATOMIC, on_dup, NULL,
					    &rs[i], bad);
	}
	if (!rc) {
		*bad_key = n;
		for (size_t i = 0; i < n; i++)
			ts_series_flush(&s[i]);
		rc = ks_txn_commit(&t);
	}
	for (size_t i = 0; i < opened; i++)
		ts_series_release(&s[i]);
	rc = ks_txn_end(&t, rc);
out:
	for (size_t i = 0; rs && i < n; i++)
		ts_rule_set_release(&rs[i]);
	for (size_t i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
	free(rs);
	free(s);
	free(keys);
	free(all);
	return rc;
}
