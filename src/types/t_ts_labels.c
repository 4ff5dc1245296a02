/*
 * t_ts_labels: the labels of the time-series type (TS.CREATE/ALTER
 * LABELS, one label set or removed) and the verbs that find series by
 * them (TS.MRANGE, TS.MREVRANGE, TS.MGET), a part of the module
 * t_timeseries (contract: t_timeseries.h; inside: t_timeseries_int.h;
 * byte layouts: the top of t_timeseries.c). Layer: types.
 *
 * No Index CF: kvfs never adds a column family, so the label reverse
 * index of Kvrocks's Index CF is not written; TS.MRANGE/MGET scan the
 * namespace's metadata and the labels of each series instead.
 */
#include "types/t_timeseries_int.h"

#include <errno.h>
#include <stdlib.h>

/* ---- labels ------------------------------------------------------------------ */

static int label_del_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	(void)v;
	(void)vn;
	ts_series_sub_put(arg, TS_SUB_LABEL, name, nn, NULL, 0);
	return 0;
}

int ts_labels_write(struct ts_series *s, const struct ts_options *o)
{
	int rc = 0;
	if (!o || !(o->set & TS_OPT_LABELS))
		return 0;
	if (!s->fresh)
		rc = ts_series_subs(s, TS_SUB_LABEL, label_del_cb, s);
	for (size_t i = 0; i < o->nlabels && !rc; i++)
		ts_series_sub_put(s, TS_SUB_LABEL, o->labels[i].name, o->labels[i].nn,
				  o->labels[i].value, o->labels[i].vn);
	return rc;
}

int ts_labels(struct keyspace *ks, const struct ks_key *k, ts_label_cb cb, void *arg)
{
	struct ts_series s;
	int rc = ts_series_open(&s, ks, NULL, k, false, NULL);
	if (!rc)
		rc = ts_series_subs(&s, TS_SUB_LABEL, cb, arg);
	ts_series_release(&s);
	return rc;
}

static int label_find_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	(void)v;
	(void)vn;
	const struct ts_label *l = arg;
	return nn == l->nn && memcmp(name, l->name, nn) == 0 ? 1 : 0;
}

int ts_label_set(struct keyspace *ks, const struct ks_key *k, const char *name, size_t nn,
		 const char *v, size_t vn)
{
	struct ts_series s;
	struct ks_txn t;
	if (!nn || (v && !vn)) {
		LOG_ERR("a label needs a name and a value");
		return -EINVAL;
	}
	ks_txn_begin(&t, ks, k);
	int rc = ts_series_open(&s, ks, &t, k, false, NULL);
	if (!rc && !v) {
		struct ts_label l = {name, nn, NULL, 0};
		rc = ts_series_subs(&s, TS_SUB_LABEL, label_find_cb, &l);
		rc = rc == 1 ? 0 : (rc ? rc : -ENODATA);
	}
	if (!rc)
		ts_series_sub_put(&s, TS_SUB_LABEL, name, nn, v, vn);
	return ts_series_end(&t, &s, NULL, rc);
}

/* ---- label filters (alg_tsagg.c matches) ----------------------------------- */
struct lab {
	struct buf *names, *vals;
	size_t n;
};

static int lab_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct lab *l = arg;
	void *p = realloc(l->names, (l->n + 1) * sizeof(*l->names));
	if (!p)
		return -ENOMEM;
	l->names = p;
	p = realloc(l->vals, (l->n + 1) * sizeof(*l->vals));
	if (!p)
		return -ENOMEM;
	l->vals = p;
	buf_init(&l->names[l->n]);
	buf_init(&l->vals[l->n]);
	l->n++;
	int rc = buf_set(&l->names[l->n - 1], name, nn);
	return rc ? rc : buf_set(&l->vals[l->n - 1], v, vn);
}

/* Do the labels l pass filter f? (false when out of memory: no match) */
static bool lab_match(const struct tsagg_filter *f, const struct lab *l)
{
	struct ts_label *v = calloc(l->n + 1, sizeof(*v));
	if (!v)
		return false;
	for (size_t i = 0; i < l->n; i++) {
		v[i].name = l->names[i].data;
		v[i].nn = l->names[i].len;
		v[i].value = l->vals[i].data;
		v[i].vn = l->vals[i].len;
	}
	bool ok = tsagg_filter_match(f, v, l->n);
	free(v);
	return ok;
}

static void lab_release(struct lab *l)
{
	for (size_t i = 0; i < l->n; i++) {
		buf_release(&l->names[i]);
		buf_release(&l->vals[i]);
	}
	free(l->names);
	free(l->vals);
	memset(l, 0, sizeof(*l));
}

/* Every time series of the namespace whose labels match. */
static int each_series(struct keyspace *ks, const char *ns, size_t nslen,
		       const struct tsagg_filter *f, int (*fn)(void *arg, struct ts_series *s),
		       void *arg)
{
	struct ks_key_iter *it;
	const char *key;
	size_t klen;
	struct ks_info info;
	int rc = tsagg_filter_check(f);
	if (rc)
		return rc;
	if (!(it = ks_key_iter_new(ks, ns, nslen, NULL, 0)))
		return -ENOMEM;
	while (!rc && (rc = ks_key_iter_next(it, &key, &klen, &info)) == 1) {
		rc = 0;
		if (info.type != KV_TYPE_TIMESERIES || info.empty)
			continue;
		struct ks_key k = {ns, nslen, key, klen, NULL, NULL};
		struct ts_series s;
		struct lab l = {0};
		int open = ts_series_open(&s, ks, NULL, &k, false, NULL);
		/* Gone meanwhile, or its metadata does not decode (logged): not
		 * one of them, and no reason to fail the others. */
		rc = open == -ENOENT || open == -EUCLEAN ? 0 : open;
		if (!open)
			rc = ts_series_subs(&s, TS_SUB_LABEL, lab_cb, &l);
		if (!open && !rc && lab_match(f, &l))
			rc = fn(arg, &s);
		lab_release(&l);
		ts_series_release(&s);
	}
	ks_key_iter_free(it);
	return rc < 0 ? rc : (rc > 0 && rc != 1 ? rc : 0);
}

struct mq {
	const struct ts_range_opt *o;
	bool reverse, get;
	ts_series_cb cb;
	void *arg;
};

static int mq_fn(void *arg, struct ts_series *s)
{
	struct mq *q = arg;
	struct ts_sarr r = {0};
	struct ts_sample last;
	bool any = false;
	int rc;
	if (q->get) {
		rc = ts_series_last(s, &any, &last);
		if (!rc && any)
			rc = ts_sarr_push(&r, last);
	} else {
		rc = ts_series_range(s, q->o, q->reverse, &r);
	}
	if (!rc) {
		struct ts_series_result res = {s->k.key, s->k.klen, r.s, r.n};
		rc = q->cb(q->arg, &res);
	}
	free(r.s);
	return rc;
}

int ts_mrange(struct keyspace *ks, const char *ns, size_t nslen, const struct tsagg_filter *f,
	      const struct ts_range_opt *o, bool reverse, ts_series_cb cb, void *arg)
{
	struct mq q = {o, reverse, false, cb, arg};
	int rc = ts_range_check(o);
	return rc ? rc : each_series(ks, ns, nslen, f, mq_fn, &q);
}

int ts_mget(struct keyspace *ks, const char *ns, size_t nslen, const struct tsagg_filter *f,
	    ts_series_cb cb, void *arg)
{
	struct mq q = {NULL, false, true, cb, arg};
	return each_series(ks, ns, nslen, f, mq_fn, &q);
}
