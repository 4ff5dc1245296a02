/*
 * t_ts_labels: the labels of the time-series type (TS.CREATE/ALTER
 * LABELS, one label set or removed) and the verbs that find series by
 * them (TS.MRANGE, TS.MREVRANGE with GROUPBY/REDUCE, WITHLABELS and
 * SELECTED_LABELS; TS.MGET; TS.QUERYINDEX), a part of the module
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
typedef int (*series_fn)(void *arg, struct ts_series *s, const struct lab *l);

static int one_series(struct keyspace *ks, const char *ns, size_t nslen, const char *key,
		      size_t klen, const struct tsagg_filter *f, series_fn fn, void *arg)
{
	struct ks_key k = {ns, nslen, key, klen, NULL, NULL};
	struct ts_series s;
	struct lab l = {0};
	int open = ts_series_open(&s, ks, NULL, &k, false, NULL);
	int rc = open == -ENOENT || open == -EUCLEAN || open == -KV_EWRONGTYPE ? 0 : open;
	if (!open)
		rc = ts_series_subs(&s, TS_SUB_LABEL, lab_cb, &l);
	if (!open && !rc && lab_match(f, &l))
		rc = fn(arg, &s, &l);
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
		       const struct tsagg_filter *f, series_fn fn, void *arg)
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

/* ---- TS.MRANGE, TS.MGET, TS.QUERYINDEX ------------------------------------- */

static int lab_cmp(const void *a, const void *b)
{
	const struct ts_label *x = a, *y = b;
	size_t n = x->nn < y->nn ? x->nn : y->nn;
	int d = memcmp(x->name, y->name, n);
	return d ? d : (x->nn > y->nn) - (x->nn < y->nn);
}

/* The labels of a result (m's choice) from a series' labels l, into
 * out[] (room for l->n + m->nsel), as borrowed pointers. */
static size_t result_labels(const struct ts_mopt *m, const struct lab *l, struct ts_label *out)
{
	size_t n = 0;
	if (!m)
		return 0;
	if (m->withlabels) {
		for (size_t i = 0; i < l->n; i++)
			out[n++] = (struct ts_label){l->names[i].data, l->names[i].len,
						     l->vals[i].data, l->vals[i].len};
		return n;
	}
	for (size_t i = 0; i < m->nsel; i++) {
		if (i && lab_cmp(&m->sel[i - 1], &m->sel[i]) == 0)
			continue;
		out[n] = (struct ts_label){m->sel[i].name, m->sel[i].nn, "", 0};
		for (size_t j = 0; j < l->n; j++)
			if (l->names[j].len == m->sel[i].nn &&
			    memcmp(l->names[j].data, m->sel[i].name, m->sel[i].nn) == 0) {
				out[n].value = l->vals[j].data;
				out[n].vn = l->vals[j].len;
			}
		n++;
	}
	return n;
}

struct mq {
	const struct ts_range_opt *o;
	bool reverse, get;
	const struct ts_mopt *m;
	ts_series_cb cb;
	void *arg;
};

/* The samples one series gives: its newest (get), or its range. */
static int mq_samples(struct mq *q, struct ts_series *s, struct ts_sarr *r)
{
	struct ts_sample last;
	bool any = false;
	int rc;
	if (q->get) {
		rc = ts_series_last(s, &any, &last);
		if (!rc && any)
			rc = ts_sarr_push(r, last);
		return rc;
	}
	return ts_series_range(s, q->o, q->reverse, r);
}

static int mq_fn(void *arg, struct ts_series *s, const struct lab *l)
{
	struct mq *q = arg;
	struct ts_sarr r = {0};
	struct ts_label *lv = NULL;
	size_t nl = 0;
	int rc = mq_samples(q, s, &r);
	if (!rc && q->m && (q->m->withlabels || q->m->nsel)) {
		if (!(lv = calloc(l->n + q->m->nsel + 1, sizeof(*lv))))
			rc = -ENOMEM;
		else
			nl = result_labels(q->m, l, lv);
	}
	if (!rc) {
		struct ts_series_result res = {s->k.key, s->k.klen, r.s, r.n, lv, nl};
		rc = q->cb(q->arg, &res);
	}
	free(lv);
	free(r.s);
	return rc;
}

/* GROUPBY: every matching series that has the label, with its value and
 * its samples in time order, collected before the groups are made. */
struct gent {
	struct buf key, val;
	struct ts_sarr r;
	size_t order;
};

struct gq {
	struct mq q;
	struct gent *e;
	size_t n, cap;
};

static int gq_fn(void *arg, struct ts_series *s, const struct lab *l)
{
	struct gq *g = arg;
	const struct ts_mopt *m = g->q.m;
	size_t at = l->n;
	for (size_t i = 0; i < l->n; i++)
		if (l->names[i].len == m->gn && memcmp(l->names[i].data, m->groupby, m->gn) == 0)
			at = i;
	if (at == l->n)
		return 0; /* in no group */
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 8;
		void *p = realloc(g->e, cap * sizeof(*g->e));
		if (!p)
			return -ENOMEM;
		g->e = p;
		g->cap = cap;
	}
	struct gent *e = &g->e[g->n++];
	memset(e, 0, sizeof(*e));
	e->order = g->n;
	int rc = buf_set(&e->key, s->k.key, s->k.klen);
	if (!rc)
		rc = buf_set(&e->val, l->vals[at].data, l->vals[at].len);
	if (!rc)
		rc = mq_samples(&g->q, s, &e->r);
	/* A reverse range (its count from the newest) merges in time order. */
	for (size_t i = 0; !rc && g->q.reverse && i < e->r.n / 2; i++) {
		struct ts_sample t = e->r.s[i];
		e->r.s[i] = e->r.s[e->r.n - 1 - i];
		e->r.s[e->r.n - 1 - i] = t;
	}
	return rc;
}

static int gent_cmp(const void *a, const void *b)
{
	const struct gent *x = a, *y = b;
	int d = cand_cmp(&x->val, &y->val);
	return d ? d : (x->order > y->order) - (x->order < y->order);
}

/* One group: g->e[from, to) share a value. */
static int group_emit(struct gq *g, size_t from, size_t to)
{
	const struct ts_mopt *m = g->q.m;
	size_t k = to - from, nout = 0;
	const struct ts_sample **s = calloc(k, sizeof(*s));
	size_t *n = calloc(k, sizeof(*n));
	struct ts_sample *out = NULL;
	struct buf name = BUF_INIT, src = BUF_INIT;
	struct ts_label lv[3], grp;
	size_t nl = 0;
	int rc = s && n ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < k; i++) {
		s[i] = g->e[from + i].r.s;
		n[i] = g->e[from + i].r.n;
		if (i)
			rc = buf_add(&src, ",", 1);
		if (!rc)
			rc = buf_add(&src, g->e[from + i].key.data, g->e[from + i].key.len);
	}
	if (!rc)
		rc = tsagg_group_reduce(m->reduce, s, n, k, &out, &nout);
	if (!rc)
		rc = buf_printf(&name, "%.*s=", (int)m->gn, m->groupby);
	if (!rc)
		rc = buf_add(&name, g->e[from].val.data, g->e[from].val.len);
	for (size_t i = 0; !rc && g->q.reverse && i < nout / 2; i++) {
		struct ts_sample t = out[i];
		out[i] = out[nout - 1 - i];
		out[nout - 1 - i] = t;
	}
	grp = (struct ts_label){m->groupby, m->gn, g->e[from].val.data, g->e[from].val.len};
	if (m->withlabels) {
		const char *red = tsagg_name(m->reduce);
		lv[nl++] = grp;
		lv[nl++] = (struct ts_label){"__reducer__", 11, red, strlen(red)};
		lv[nl++] = (struct ts_label){"__source__", 10, src.data ? src.data : "", src.len};
	}
	struct ts_label *sel = NULL;
	struct ts_series_result res = {name.data, name.len, out, nout, lv, nl};
	struct buf gn = BUF_INIT, gv = BUF_INIT;
	if (!rc && !m->withlabels && m->nsel) {
		/* Kvrocks extracts the selected ones from the group's label. */
		struct lab one = {&gn, &gv, 1};
		rc = buf_set(&gn, m->groupby, m->gn);
		if (!rc)
			rc = buf_set(&gv, g->e[from].val.data, g->e[from].val.len);
		if (!rc && !(sel = calloc(m->nsel + 1, sizeof(*sel))))
			rc = -ENOMEM;
		if (!rc) {
			res.labels = sel;
			res.nlabels = result_labels(m, &one, sel);
		}
	}
	if (!rc) {
		res.key = name.data;
		res.klen = name.len;
		res.s = out;
		res.n = nout;
		rc = g->q.cb(g->q.arg, &res);
	}
	buf_release(&gn);
	buf_release(&gv);
	free(sel);
	free(out);
	free(s);
	free(n);
	buf_release(&name);
	buf_release(&src);
	return rc;
}

static int mrange_grouped(struct keyspace *ks, const char *ns, size_t nslen,
			  const struct tsagg_filter *f, struct mq *q)
{
	struct gq g = {*q, NULL, 0, 0};
	int rc = each_series(ks, ns, nslen, f, gq_fn, &g);
	if (!rc && g.n)
		qsort(g.e, g.n, sizeof(*g.e), gent_cmp);
	for (size_t i = 0; !rc && i < g.n;) {
		size_t j = i + 1;
		while (j < g.n && cand_cmp(&g.e[i].val, &g.e[j].val) == 0)
			j++;
		rc = group_emit(&g, i, j);
		i = j;
	}
	for (size_t i = 0; i < g.n; i++) {
		buf_release(&g.e[i].key);
		buf_release(&g.e[i].val);
		free(g.e[i].r.s);
	}
	free(g.e);
	return rc;
}

/* Sort m's selected names (a copy) as Kvrocks's std::set holds them. */
static int mopt_sorted(const struct ts_mopt *m, struct ts_mopt *out, struct ts_label **sel)
{
	*sel = NULL;
	if (!m) {
		memset(out, 0, sizeof(*out));
		return 0;
	}
	*out = *m;
	if (m->nsel) {
		if (!(*sel = calloc(m->nsel, sizeof(**sel))))
			return -ENOMEM;
		memcpy(*sel, m->sel, m->nsel * sizeof(**sel));
		qsort(*sel, m->nsel, sizeof(**sel), lab_cmp);
		out->sel = *sel;
	}
	return 0;
}

int ts_mrange(struct keyspace *ks, const char *ns, size_t nslen, const struct tsagg_filter *f,
	      const struct ts_range_opt *o, bool reverse, const struct ts_mopt *m, ts_series_cb cb,
	      void *arg)
{
	struct ts_mopt mo;
	struct ts_label *sel = NULL;
	int rc = ts_range_check(o);
	if (!rc && m && (!m->groupby) != (m->reduce <= 0)) {
		LOG_ERR("GROUPBY needs REDUCE and REDUCE needs GROUPBY");
		rc = -EINVAL;
	}
	if (!rc)
		rc = mopt_sorted(m, &mo, &sel);
	struct mq q = {o, reverse, false, &mo, cb, arg};
	if (!rc)
		rc = mo.groupby ? mrange_grouped(ks, ns, nslen, f, &q)
				: each_series(ks, ns, nslen, f, mq_fn, &q);
	free(sel);
	return rc;
}

int ts_mget(struct keyspace *ks, const char *ns, size_t nslen, const struct tsagg_filter *f,
	    const struct ts_mopt *m, ts_series_cb cb, void *arg)
{
	struct ts_mopt mo;
	struct ts_label *sel = NULL;
	if (m && (m->groupby || m->reduce > 0)) {
		LOG_ERR("TS.MGET has no GROUPBY");
		return -EINVAL;
	}
	int rc = mopt_sorted(m, &mo, &sel);
	struct mq q = {NULL, false, true, &mo, cb, arg};
	if (!rc)
		rc = each_series(ks, ns, nslen, f, mq_fn, &q);
	free(sel);
	return rc;
}

struct qi {
	int (*cb)(void *arg, const char *key, size_t klen);
	void *arg;
};

static int qi_fn(void *arg, struct ts_series *s, const struct lab *l)
{
	(void)l;
	struct qi *q = arg;
	return q->cb(q->arg, s->k.key, s->k.klen);
}

int ts_queryindex(struct keyspace *ks, const char *ns, size_t nslen, const struct tsagg_filter *f,
		  int (*cb)(void *arg, const char *key, size_t klen), void *arg)
{
	struct qi q = {cb, arg};
	return each_series(ks, ns, nslen, f, qi_fn, &q);
}
