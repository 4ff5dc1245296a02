/*
 * t_ts_labels: the labels of the time-series type (TS.CREATE/ALTER
 * LABELS, one label set or removed) and the verbs that find series by
 * them (TS.MRANGE, TS.MREVRANGE, TS.MGET), a part of the module
 * t_timeseries (contract: t_timeseries.h; inside: t_timeseries_int.h;
 * byte layouts: the top of t_timeseries.c). Layer: types.
 *
 * Every label change also changes Kvrocks's label index (the "index"
 * column family) in the same transaction, as TS.CREATE/TS.ALTER do, once
 * the index is complete (keyspace/ks_tsindex.h); a verb that puts a label
 * first makes it complete (ts_labels_prepare). TS.MRANGE/MGET read the
 * keys of their "label=value" matchers from a complete index and check
 * each key's own labels; without one they scan the namespace.
 */
#include "types/t_timeseries_int.h"

#include "keyspace/ks_tsindex.h"

#include <errno.h>
#include <stdlib.h>

int ts_labels_prepare(struct keyspace *ks, const struct ts_options *o)
{
	if (!o || !(o->set & TS_OPT_LABELS) || !o->nlabels)
		return 0;
	return ks_tsindex_prepare(ks);
}

/* Stage the index record of label name = v of s (a put or a delete),
 * when there is a complete index to keep. */
static void label_index(struct ts_series *s, const char *name, size_t nn, const char *v, size_t vn,
			bool put)
{
	if (ks_tsindex_ready(s->ks))
		ks_txn_ts_index(s->t, s->tk, name, nn, v, vn, put);
}

/* ---- labels ------------------------------------------------------------------ */

static int label_del_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	ts_series_sub_put(arg, TS_SUB_LABEL, name, nn, NULL, 0);
	label_index(arg, name, nn, v, vn, false);
	return 0;
}

int ts_labels_write(struct ts_series *s, const struct ts_options *o)
{
	int rc = 0;
	if (!o || !(o->set & TS_OPT_LABELS))
		return 0;
	if (!s->fresh)
		rc = ts_series_subs(s, TS_SUB_LABEL, label_del_cb, s);
	for (size_t i = 0; i < o->nlabels && !rc; i++) {
		ts_series_sub_put(s, TS_SUB_LABEL, o->labels[i].name, o->labels[i].nn,
				  o->labels[i].value, o->labels[i].vn);
		label_index(s, o->labels[i].name, o->labels[i].nn, o->labels[i].value,
			    o->labels[i].vn, true);
	}
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

struct label_find {
	const char *name;
	size_t nn;
	struct buf old; /* the value found */
};

static int label_find_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct label_find *l = arg;
	if (nn != l->nn || memcmp(name, l->name, nn) != 0)
		return 0;
	int rc = buf_set(&l->old, v, vn);
	return rc ? rc : 1;
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
	struct label_find l = {name, nn, BUF_INIT};
	bool had = false;
	int rc = v ? ks_tsindex_prepare(ks) : 0;
	if (rc)
		return rc;
	ks_txn_begin(&t, ks, k);
	rc = ts_series_open(&s, ks, &t, k, false, NULL);
	if (!rc) {
		rc = ts_series_subs(&s, TS_SUB_LABEL, label_find_cb, &l);
		had = rc == 1;
		rc = rc == 1 ? 0 : (rc ? rc : (v ? 0 : -ENODATA));
	}
	if (!rc) {
		ts_series_sub_put(&s, TS_SUB_LABEL, name, nn, v, vn);
		/* The old value's record goes, the new one's comes, as
		 * TS.ALTER LABELS changes them. */
		if (had)
			label_index(&s, name, nn, l.old.data, l.old.len, false);
		if (v)
			label_index(&s, name, nn, v, vn, true);
	}
	rc = ts_series_end(&t, &s, NULL, rc);
	buf_release(&l.old);
	return rc;
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

/* Run fn on key `key` of ns if it is a live time series whose labels
 * pass f. A key that is gone, of another type (a stale index record) or
 * whose metadata does not decode (logged) is skipped, not an error. */
static int one_series(struct keyspace *ks, const char *ns, size_t nslen, const char *key,
		      size_t klen, const struct tsagg_filter *f,
		      int (*fn)(void *arg, struct ts_series *s), void *arg)
{
	struct ks_key k = {ns, nslen, key, klen, NULL, NULL};
	struct ts_series s;
	struct lab l = {0};
	int open = ts_series_open(&s, ks, NULL, &k, false, NULL);
	int rc = open == -ENOENT || open == -EUCLEAN || open == -KV_EWRONGTYPE ? 0 : open;
	if (!open)
		rc = ts_series_subs(&s, TS_SUB_LABEL, lab_cb, &l);
	if (!open && !rc && lab_match(f, &l))
		rc = fn(arg, &s);
	lab_release(&l);
	ts_series_release(&s);
	return rc;
}

/* The keys a complete label index lists under f's "label=value"
 * matchers (their union, as Kvrocks's getTSKeyByFilter takes it). */
struct cand {
	struct keyspace *ks;
	const char *ns;
	size_t nslen;
	struct buf *k;
	size_t n, cap;
};

static int cand_add(void *arg, const char *key, size_t klen)
{
	struct cand *c = arg;
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		void *p = realloc(c->k, cap * sizeof(*c->k));
		if (!p)
			return -ENOMEM;
		c->k = p;
		c->cap = cap;
	}
	buf_init(&c->k[c->n]);
	return buf_set(&c->k[c->n++], key, klen);
}

static int cand_lookup(void *arg, const char *label, size_t ln, const char *v, size_t vn)
{
	struct cand *c = arg;
	return ks_tsindex_keys(c->ks, c->ns, c->nslen, label, ln, v, vn, cand_add, c);
}

static int cand_cmp(const void *a, const void *b)
{
	const struct buf *x = a, *y = b;
	size_t n = x->len < y->len ? x->len : y->len;
	int d = memcmp(x->data, y->data, n);
	return d ? d : (x->len > y->len) - (x->len < y->len);
}

/* Every time series of the namespace whose labels match: from the label
 * index when it is complete, else by a scan of the namespace's keys.
 * Both visit the keys in byte order. */
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
	if (ks_tsindex_ready(ks)) {
		struct cand c = {ks, ns, nslen, NULL, 0, 0};
		rc = tsagg_filter_each_equal(f, cand_lookup, &c);
		if (!rc && c.n)
			qsort(c.k, c.n, sizeof(*c.k), cand_cmp);
		for (size_t i = 0; !rc && i < c.n; i++)
			if (!i || cand_cmp(&c.k[i - 1], &c.k[i]) != 0)
				rc = one_series(ks, ns, nslen, c.k[i].data, c.k[i].len, f, fn, arg);
		for (size_t i = 0; i < c.n; i++)
			buf_release(&c.k[i]);
		free(c.k);
		return rc < 0 ? rc : (rc > 0 && rc != 1 ? rc : 0);
	}
	if (!(it = ks_key_iter_new(ks, ns, nslen, NULL, 0)))
		return -ENOMEM;
	while (!rc && (rc = ks_key_iter_next(it, &key, &klen, &info)) == 1) {
		rc = 0;
		if (info.type != KV_TYPE_TIMESERIES || info.empty)
			continue;
		rc = one_series(ks, ns, nslen, key, klen, f, fn, arg);
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
