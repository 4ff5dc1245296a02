/*
 * t_ts_rules: the compaction rules of the time-series type
 * (TS.CREATERULE, TS.DELETERULE, and their upkeep by every add and
 * delete of samples), a part of the module t_timeseries (contract:
 * t_timeseries.h; inside: t_timeseries_int.h; byte layouts: the top of
 * t_timeseries.c). Layer: types.
 *
 * Rules (downstream records): latest_bucket is the start of the bucket
 * still open; the auxiliaries hold its running state, per aggregator
 * (Kvrocks): sum {} {sum}; min, max {} {v, NaN when empty}; count {}
 * {count}; first {ts} {v}; last {ts} {v}; avg {count} {sum}; std/var
 * {count} {sum, sum of squares}; range {} {min, max}. A sample in the
 * open bucket folds into the state; one in a later bucket closes it (its
 * value is added to the destination) and opens the new one; a late one
 * (an older, closed bucket) recomputes that bucket from the source and
 * replaces its sample in the destination. latest 0 with a state just
 * reset means no bucket is open yet (a new rule starts at the next
 * sample, as Redis). All of it goes into the one batch of the add.
 *
 * A source has at most TS_RULES_MAX rules: an add or a delete locks it
 * and every destination in one transaction (ts_rule_set_begin). A rule
 * record that does not decode is logged with the source and the
 * destination (ks_corrupt_entry); ts_rules skips it, so the other rules
 * and the series read; an add or a delete, which would have to maintain
 * it, fails with -EUCLEAN and changes nothing; TS.DELETERULE and the
 * key's deletion remove it.
 */
#include "types/t_timeseries_int.h"

#include <errno.h>
#include <stdlib.h>

#define RULE_FIXED 27 /* 1 + 3 x 8 + 2 */

/* ---- the rule record ---------------------------------------------------- */

/* The record rule_decode reads, at the same offsets. */
static int rule_encode(struct buf *out, const struct ts_rule *r)
{
	buf_reset(out);
	int rc = buf_resize(out, RULE_FIXED + 8 * ((size_t)r->nu + r->nf));
	if (rc)
		return rc;
	uint8_t *p = (uint8_t *)out->data;
	p[0] = (uint8_t)r->agg;
	put_be64(p + 1, r->bucket);
	put_be64(p + 9, r->align);
	put_be64(p + 17, r->latest);
	p[25] = r->nu;
	p[26] = r->nf;
	for (int i = 0; i < r->nu; i++)
		put_be64(p + RULE_FIXED + 8 * i, r->u[i]);
	for (int i = 0; i < r->nf; i++)
		put_be64(p + RULE_FIXED + 8 * (r->nu + i), enc_double_to_sortable(r->f[i]));
	return 0;
}

static int rule_decode(const void *v, size_t n, struct ts_rule *r)
{
	const uint8_t *p = v;
	memset(r, 0, sizeof(*r));
	if (n < RULE_FIXED)
		return -EUCLEAN;
	r->agg = p[0];
	r->bucket = get_be64(p + 1);
	r->align = get_be64(p + 9);
	r->latest = get_be64(p + 17);
	r->nu = p[25];
	r->nf = p[26];
	if (r->nu > TS_AUX_MAX || r->nf > TS_AUX_MAX ||
	    n != RULE_FIXED + 8 * ((size_t)r->nu + r->nf) || r->agg < 1 || r->agg > TS_AGG_VAR_S ||
	    r->bucket == 0)
		return -EUCLEAN;
	for (int i = 0; i < r->nu; i++)
		r->u[i] = get_be64(p + RULE_FIXED + 8 * i);
	for (int i = 0; i < r->nf; i++)
		r->f[i] = enc_sortable_to_double(get_be64(p + RULE_FIXED + 8 * (r->nu + i)));
	return 0;
}

/* ---- the rules of a source, and its transaction ---------------------------- */

struct rules_read {
	struct ts_rule_set *rs;
	const struct ks_key *k; /* the source, for the log */
};

static int rules_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct rules_read *a = arg;
	struct ts_rule_set *rs = a->rs;
	/* The number of records is no stored count, but bounded all the same:
	 * what an add can lock at once. */
	if (rs->n == TS_RULES_MAX) {
		LOG_ERR("%.*s: more rules than the %d kvfs can lock at once", (int)a->k->klen,
			a->k->key, TS_RULES_MAX);
		return -ENOSPC;
	}
	struct ts_rule r;
	if (rule_decode(v, vn, &r))
		return ks_corrupt_entry(a->k, name, nn,
					"time-series rule record of %zu bytes does not decode", vn);
	void *p = realloc(rs->e, (rs->n + 1) * sizeof(*rs->e));
	if (!p)
		return -ENOMEM;
	rs->e = p;
	struct ts_rule_ent *e = &rs->e[rs->n++];
	memset(e, 0, sizeof(*e));
	e->r = r;
	return buf_set(&e->dst, name, nn);
}

/* The rules of k, read without a lock, into rs (empty). A missing key
 * has none. */
static int rules_read(struct keyspace *ks, const struct ks_key *k, struct ts_rule_set *rs)
{
	struct ts_series s;
	struct rules_read a = {rs, k};
	int rc = ts_series_open(&s, ks, NULL, k, false, NULL);
	if (!rc)
		rc = ts_series_subs(&s, TS_SUB_RULE, rules_cb, &a);
	ts_series_release(&s);
	return rc == -ENOENT ? 0 : rc;
}

/* rs->keys for the rules of rs: the source k, then the destinations,
 * which borrow the names of rs->e. */
static int rules_keys(struct ts_rule_set *rs, const struct ks_key *k)
{
	struct ks_key *v = calloc(rs->n + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	v[0] = *k;
	for (size_t i = 0; i < rs->n; i++) {
		v[i + 1] = *k;
		v[i + 1].key = rs->e[i].dst.data;
		v[i + 1].klen = rs->e[i].dst.len;
		v[i + 1].attr = NULL;
		v[i + 1].snap = NULL;
	}
	free(rs->keys);
	rs->keys = v;
	return 0;
}

/* Do a and b name the same destinations, in the same order? */
static bool rules_same(const struct ts_rule_set *a, const struct ts_rule_set *b)
{
	if (a->n != b->n)
		return false;
	for (size_t i = 0; i < a->n; i++)
		if (a->e[i].dst.len != b->e[i].dst.len ||
		    memcmp(a->e[i].dst.data, b->e[i].dst.data, a->e[i].dst.len) != 0)
			return false;
	return true;
}

void ts_rule_set_release(struct ts_rule_set *rs)
{
	for (size_t i = 0; i < rs->n; i++) {
		buf_release(&rs->e[i].dst);
		ts_series_release(&rs->e[i].d);
	}
	free(rs->e);
	free(rs->keys);
	memset(rs, 0, sizeof(*rs));
}

int ts_rule_set_begin(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
		      struct ts_rule_set *rs)
{
	struct ts_rule_set now = {0};
	int rc = 0;
	memset(rs, 0, sizeof(*rs));
	/* The first look holds k's lock alone (most series have no rules);
	 * then every destination read is locked too, until what is read
	 * under the locks is what was locked. */
	for (int tries = 0; tries < 8 && !rc; tries++) {
		rc = rules_keys(rs, k);
		if (rc)
			break;
		ks_txn_beginv(t, ks, rs->keys, rs->n + 1);
		rc = rules_read(ks, k, &now);
		if (!rc && rules_same(&now, rs)) {
			/* rs->keys borrow the names of rs: keep rs, with the
			 * states read under the locks. */
			for (size_t i = 0; i < now.n; i++)
				rs->e[i].r = now.e[i].r;
			ts_rule_set_release(&now);
			return 0;
		}
		ks_txn_end(t, 0);
		ts_rule_set_release(rs);
		*rs = now;
		memset(&now, 0, sizeof(now));
	}
	ts_rule_set_release(rs);
	return rc ? rc : -EAGAIN;
}

/* all[] for the series k[0..n) and the destinations of rs[]: -E2BIG
 * past what one transaction locks, -EINVAL (logged) when a series is a
 * destination of another of them (two series objects in one batch would
 * not see each other's chunks). */
static int sets_keys(const struct ks_key *k, size_t n, struct ts_rule_set *rs, struct ks_key **all,
		     size_t *nall)
{
	size_t total = n, m = n;
	for (size_t i = 0; i < n; i++)
		total += rs[i].n;
	if (total > KS_LOCKV_MAX) {
		LOG_ERR("TS.MADD: %zu series and rule destinations, more than the %d keys one "
			"batch locks",
			total, KS_LOCKV_MAX);
		return -E2BIG;
	}
	struct ks_key *v = calloc(total, sizeof(*v));
	int rc = v ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++) {
		v[i] = k[i];
		rc = rules_keys(&rs[i], &k[i]);
	}
	for (size_t i = 0; i < n && !rc; i++)
		for (size_t j = 0; j < rs[i].n && !rc; j++) {
			v[m] = rs[i].keys[j + 1];
			for (size_t x = 0; x < n && !rc; x++)
				if (ks_key_eq(&v[m], &k[x])) {
					LOG_ERR("TS.MADD: '%.*s' is written and is also the "
						"destination "
						"of a rule of '%.*s': write them apart",
						(int)k[x].klen, k[x].key, (int)k[i].klen, k[i].key);
					rc = -EINVAL;
				}
			m++;
		}
	if (rc) {
		free(v);
		return rc;
	}
	free(*all);
	*all = v;
	*nall = total;
	return 0;
}

int ts_rule_sets_begin(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k, size_t n,
		       struct ts_rule_set *rs, struct ks_key **all)
{
	struct ts_rule_set *now = calloc(n ? n : 1, sizeof(*now));
	size_t nall = 0;
	int rc = now ? 0 : -ENOMEM;
	*all = NULL;
	memset(rs, 0, n * sizeof(*rs));
	/* As ts_rule_set_begin: the series alone first, then with every
	 * destination read, until what is read under the locks was locked. */
	for (int tries = 0; tries < 8 && !rc; tries++) {
		bool same = true;
		rc = sets_keys(k, n, rs, all, &nall);
		if (rc)
			break;
		ks_txn_beginv(t, ks, *all, nall);
		for (size_t i = 0; i < n && !rc; i++) {
			/* A key of another type has no rules: the caller's open
			 * of it answers, naming it. */
			rc = rules_read(ks, &k[i], &now[i]);
			rc = rc == -KV_EWRONGTYPE ? 0 : rc;
			same = same && !rc && rules_same(&now[i], &rs[i]);
		}
		if (!rc && same) {
			for (size_t i = 0; i < n; i++) {
				for (size_t j = 0; j < now[i].n; j++)
					rs[i].e[j].r = now[i].e[j].r;
				ts_rule_set_release(&now[i]);
			}
			free(now);
			return 0;
		}
		ks_txn_end(t, 0);
		for (size_t i = 0; i < n; i++) {
			ts_rule_set_release(&rs[i]);
			rs[i] = now[i];
			memset(&now[i], 0, sizeof(now[i]));
		}
	}
	for (size_t i = 0; now && i < n; i++) {
		ts_rule_set_release(&rs[i]);
		ts_rule_set_release(&now[i]);
	}
	free(now);
	free(*all);
	*all = NULL;
	return rc ? rc : -EAGAIN;
}

/* ---- upkeep: what an add or a delete does to each rule ------------------------ */

/* Destination updates of one rule. */
struct dst_upd {
	struct ts_sarr put; /* bucket samples to set (LAST) */
	struct ts_sarr del; /* buckets whose sample goes (ts only) */
};

static void dst_upd_free(struct dst_upd *u, size_t n)
{
	for (size_t i = 0; u && i < n; i++) {
		free(u[i].put.s);
		free(u[i].del.s);
	}
	free(u);
}

static int bucket_samples(struct ts_series *src, const struct ts_rule *r, uint64_t b,
			  struct ts_sarr *a)
{
	uint64_t right = tsagg_bucket_right(b, r->bucket, r->align);
	return ts_series_collect(src, b, right - 1, a);
}

/* Recompute the open bucket's state from the source. */
static int rule_refold(struct ts_series *src, struct ts_rule *r)
{
	struct ts_sarr a = {0};
	int rc = bucket_samples(src, r, r->latest, &a);
	tsagg_rule_reset(r);
	if (!rc)
		tsagg_rule_fold(r, a.s, a.n);
	free(a.s);
	return rc;
}

/* Recompute closed bucket b from the source: its new value, or, with
 * no samples left, its removal, goes to the destination. */
static int rule_redo(struct ts_series *src, const struct ts_rule *r, uint64_t b, struct dst_upd *u)
{
	struct ts_sarr a = {0};
	int rc = bucket_samples(src, r, b, &a);
	if (!rc && a.n)
		rc =
		    ts_sarr_push(&u->put, (struct ts_sample){b, tsagg_aggregate(r->agg, a.s, a.n)});
	else if (!rc)
		rc = ts_sarr_push(&u->del, (struct ts_sample){b, 0});
	free(a.s);
	return rc;
}

/* Close the open bucket: its value goes to the destination. */
static int rule_close(struct ts_series *src, struct ts_rule *r, struct dst_upd *u)
{
	struct ts_sarr a = {0};
	int rc = 0;
	if (tsagg_rule_is_reset(r)) {
		/* Nothing folded (or a sum of 0): ask the source. */
		rc = bucket_samples(src, r, r->latest, &a);
		if (!rc && a.n)
			rc = ts_sarr_push(
			    &u->put,
			    (struct ts_sample){r->latest, tsagg_aggregate(r->agg, a.s, a.n)});
	} else {
		rc = ts_sarr_push(&u->put, (struct ts_sample){r->latest, tsagg_rule_value(r)});
	}
	free(a.s);
	tsagg_rule_reset(r);
	return rc;
}

/* Apply the changed samples c (time order, res INSERT or UPDATE) to rule r. */
static int rule_apply(struct ts_series *src, struct ts_rule *r, const struct ts_ssamp *c, size_t n,
		      struct dst_upd *u)
{
	struct ts_sarr g = {0};
	int rc = 0;
	size_t i = 0;
	while (i < n && !rc) {
		uint64_t b = tsagg_bucket_left(c[i].s.ts, r->bucket, r->align);
		bool upd = false;
		g.n = 0;
		for (; i < n && tsagg_bucket_left(c[i].s.ts, r->bucket, r->align) == b && !rc;
		     i++) {
			upd |= c[i].res == TS_ADD_UPDATE;
			rc = ts_sarr_push(&g, c[i].s);
		}
		if (rc)
			break;
		bool open = !(r->latest == 0 && tsagg_rule_is_reset(r));
		if (open && b < r->latest) {
			/* A late sample: recompute the closed bucket. */
			rc = rule_redo(src, r, b, u);
			continue;
		}
		if (open && b > r->latest)
			rc = rule_close(src, r, u);
		if (!open || b > r->latest) {
			tsagg_rule_reset(r);
			r->latest = b;
		}
		if (!rc && upd)
			rc = rule_refold(src, r);
		else if (!rc)
			tsagg_rule_fold(r, g.s, g.n);
	}
	free(g.s);
	return rc;
}

/* Stage rule e's record (its state) in the source's transaction. */
static void rule_put(struct ts_series *s, const char *dst, size_t dn, const struct ts_rule *r)
{
	struct buf val = BUF_INIT;
	int rc = rule_encode(&val, r);
	if (rc)
		ks_txn_fail(s->t, rc);
	else
		ts_series_sub_put(s, TS_SUB_RULE, dst, dn, val.data, val.len);
	buf_release(&val);
}

/* Stage rule e's destination updates u in the source's transaction
 * (which locks dk). The destination series stays open in e until the
 * rule set is released: the transaction borrows its metadata tail. */
static int dst_write(struct ts_series *src, struct ts_rule_ent *e, const struct ks_key *dk,
		     struct dst_upd *u)
{
	struct ts_series *d = &e->d;
	struct ts_ssamp *v = NULL;
	int rc;
	if (!u->put.n && !u->del.n)
		return 0;
	rc = ts_series_open(d, src->ks, src->t, dk, false, NULL);
	if (rc == -ENOENT || rc == -KV_EWRONGTYPE) {
		LOG_WARN("rule destination '%.*s' is gone: its samples are dropped", (int)dk->klen,
			 dk->key);
		return 0;
	}
	for (size_t i = 0; i < u->del.n && !rc; i++) {
		uint64_t del;
		rc = ts_series_delete(d, u->del.s[i].ts, u->del.s[i].ts, &del, NULL);
	}
	if (!rc && u->put.n) {
		if (!(v = calloc(u->put.n, sizeof(*v))))
			rc = -ENOMEM;
		for (size_t i = 0; !rc && i < u->put.n; i++) {
			v[i].s = u->put.s[i];
			v[i].idx = i;
		}
		if (!rc) {
			qsort(v, u->put.n, sizeof(*v), ts_ssamp_cmp);
			/* Later updates of one bucket win. */
			for (size_t i = 0; i + 1 < u->put.n; i++)
				if (v[i].s.ts == v[i + 1].s.ts)
					v[i].res = TS_ADD_SKIP;
			rc = ts_series_upsert(d, v, u->put.n, TS_DUP_LAST);
		}
	}
	if (!rc)
		ts_series_flush(d);
	free(v);
	return rc;
}

int ts_rule_set_added(struct ts_rule_set *rs, struct ts_series *s, const struct ts_ssamp *c,
		      size_t n)
{
	struct dst_upd *u = calloc(rs->n, sizeof(*u));
	int rc = u ? 0 : -ENOMEM;
	for (size_t i = 0; i < rs->n && !rc; i++) {
		rc = rule_apply(s, &rs->e[i].r, c, n, &u[i]);
		if (!rc)
			rule_put(s, rs->e[i].dst.data, rs->e[i].dst.len, &rs->e[i].r);
	}
	for (size_t i = 0; i < rs->n && !rc; i++)
		rc = dst_write(s, &rs->e[i], &rs->keys[i + 1], &u[i]);
	dst_upd_free(u, rs->n);
	return rc;
}

int ts_rule_set_deleted(struct ts_rule_set *rs, struct ts_series *s, const struct ts_sarr *gone)
{
	struct dst_upd *u = NULL;
	int rc = 0;
	if (!rs->n)
		return 0;
	if (!(u = calloc(rs->n, sizeof(*u))))
		return -ENOMEM;
	/* Every bucket that lost samples is recomputed. */
	for (size_t i = 0; i < rs->n && !rc; i++) {
		struct ts_rule *r = &rs->e[i].r;
		uint64_t prev = UINT64_MAX;
		for (size_t j = 0; j < gone->n && !rc; j++) {
			uint64_t bk = tsagg_bucket_left(gone->s[j].ts, r->bucket, r->align);
			if (bk == prev)
				continue;
			prev = bk;
			bool open = !(r->latest == 0 && tsagg_rule_is_reset(r));
			if (open && bk == r->latest)
				rc = rule_refold(s, r);
			else if (open && bk < r->latest)
				rc = rule_redo(s, r, bk, &u[i]);
		}
		if (!rc)
			rule_put(s, rs->e[i].dst.data, rs->e[i].dst.len, r);
		if (!rc)
			rc = dst_write(s, &rs->e[i], &rs->keys[i + 1], &u[i]);
	}
	dst_upd_free(u, rs->n);
	return rc;
}

int ts_rule_set_edited(struct ts_rule_set *rs, struct ts_series *s, const uint64_t *ts, size_t n)
{
	struct dst_upd *u = NULL;
	struct ts_sarr a = {0};
	int rc = 0;
	if (!rs->n || !n)
		return 0;
	if (!(u = calloc(rs->n, sizeof(*u))))
		return -ENOMEM;
	/* Each bucket the edit touched, from the source as it now is: a
	 * closed one is recomputed, the open one refolded, a later one
	 * opened as an add opens it (closing the open one). */
	for (size_t i = 0; i < rs->n && !rc; i++) {
		struct ts_rule *r = &rs->e[i].r;
		uint64_t prev = UINT64_MAX;
		for (size_t j = 0; j < n && !rc; j++) {
			uint64_t bk = tsagg_bucket_left(ts[j], r->bucket, r->align);
			if (bk == prev)
				continue;
			prev = bk;
			bool open = !(r->latest == 0 && tsagg_rule_is_reset(r));
			if (open && bk < r->latest) {
				rc = rule_redo(s, r, bk, &u[i]);
				continue;
			}
			if (open && bk == r->latest) {
				rc = rule_refold(s, r);
				continue;
			}
			rc = bucket_samples(s, r, bk, &a);
			if (rc || !a.n)
				continue; /* samples removed past the open bucket */
			if (open)
				rc = rule_close(s, r, &u[i]);
			tsagg_rule_reset(r);
			r->latest = bk;
			if (!rc)
				rc = rule_refold(s, r);
		}
		if (!rc)
			rule_put(s, rs->e[i].dst.data, rs->e[i].dst.len, r);
		if (!rc)
			rc = dst_write(s, &rs->e[i], &rs->keys[i + 1], &u[i]);
	}
	free(a.s);
	dst_upd_free(u, rs->n);
	return rc;
}

/* ---- TS.CREATERULE, TS.DELETERULE, the rules of a key ------------------------- */

struct rule_find {
	const char *dst;
	size_t dn;
	bool found;
	size_t n; /* rules seen */
};

static int rule_find_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	(void)v;
	(void)vn;
	struct rule_find *f = arg;
	if (nn == f->dn && memcmp(name, f->dst, nn) == 0)
		f->found = true;
	f->n++;
	return 0;
}

static int any_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	(void)name;
	(void)nn;
	(void)v;
	(void)vn;
	*(bool *)arg = true;
	return 0;
}

/* What TS.CREATERULE refuses of the source s and the destination d. */
static int createrule_check(struct ts_series *s, struct ts_series *d, const struct ks_key *src,
			    const struct ks_key *dst, bool restore)
{
	bool has_rules = false;
	int rc = 0;
	if (s->tm.source_len) {
		LOG_ERR("TS.CREATERULE: the source '%.*s' is itself a destination", (int)src->klen,
			src->key);
		return -EINVAL;
	}
	if (d->tm.source_len &&
	    !(d->tm.source_len == src->klen && memcmp(d->tm.source, src->key, src->klen) == 0)) {
		LOG_ERR("TS.CREATERULE: '%.*s' already has a source", (int)dst->klen, dst->key);
		return -EINVAL;
	}
	rc = ts_series_subs(d, TS_SUB_RULE, any_cb, &has_rules);
	if (!rc && has_rules) {
		LOG_ERR("TS.CREATERULE: the destination '%.*s' has rules of its own",
			(int)dst->klen, dst->key);
		return -EINVAL;
	}
	struct rule_find f = {dst->key, dst->klen, false, 0};
	if (!rc)
		rc = ts_series_subs(s, TS_SUB_RULE, rule_find_cb, &f);
	if (!rc && f.found && !restore)
		rc = -EEXIST;
	if (!rc && !f.found && f.n >= TS_RULES_MAX) {
		/* an add locks the source and every destination at once */
		LOG_ERR("TS.CREATERULE: '%.*s' has %d rules, the most kvfs keeps", (int)src->klen,
			src->key, TS_RULES_MAX);
		rc = -ENOSPC;
	}
	return rc;
}

int ts_createrule(struct keyspace *ks, const struct ks_key *src, const struct ks_key *dst, int agg,
		  uint64_t bucket, uint64_t align, const struct ts_rule *state)
{
	struct ts_series s = {0}, d = {0};
	struct ks_txn t;
	struct ts_rule r;
	int rc;
	if (!tsagg_name(agg) || bucket == 0) {
		LOG_ERR("TS.CREATERULE: a known aggregator and a bucket duration > 0");
		return -EINVAL;
	}
	if (src->nslen != dst->nslen || memcmp(src->ns, dst->ns, src->nslen) != 0 ||
	    ks_key_eq(src, dst)) {
		LOG_ERR("TS.CREATERULE: source and destination must be two keys of one namespace");
		return -EINVAL;
	}
	if (state)
		r = *state;
	else
		tsagg_rule_init(&r, agg, bucket, align);
	r.agg = agg;
	r.bucket = bucket;
	r.align = align;
	ks_txn_begin2(&t, ks, src, dst);
	/* A restore makes a missing source or destination in the same batch. */
	rc = ts_series_open(&s, ks, &t, src, state != NULL, NULL);
	if (!rc)
		rc = ts_series_open(&d, ks, &t, dst, state != NULL, NULL);
	if (!rc)
		rc = createrule_check(&s, &d, src, dst, state != NULL);
	if (!rc) {
		rule_put(&s, dst->key, dst->klen, &r);
		d.tm.source = src->key;
		d.tm.source_len = src->klen;
		d.dirty = true;
	}
	return ts_series_end(&t, &s, &d, rc); /* s is written if new */
}

int ts_deleterule(struct keyspace *ks, const struct ks_key *src, const struct ks_key *dst)
{
	struct ts_series s = {0}, d = {0};
	struct ks_txn t;
	ks_txn_begin2(&t, ks, src, dst);
	int rc = ts_series_open(&s, ks, &t, src, false, NULL);
	if (!rc) {
		struct rule_find f = {dst->key, dst->klen, false, 0};
		rc = ts_series_subs(&s, TS_SUB_RULE, rule_find_cb, &f);
		if (!rc && !f.found)
			rc = -ENOENT;
	}
	if (!rc) {
		ts_series_sub_put(&s, TS_SUB_RULE, dst->key, dst->klen, NULL, 0);
		/* The destination forgets its source (if it is still it). */
		if (ts_series_open(&d, ks, &t, dst, false, NULL) == 0 &&
		    d.tm.source_len == src->klen && memcmp(d.tm.source, src->key, src->klen) == 0) {
			d.tm.source = "";
			d.tm.source_len = 0;
			d.dirty = true;
		}
	}
	return ts_series_end(&t, &s, &d, rc);
}

struct rules_user {
	const struct ks_key *k;
	ts_rule_cb cb;
	void *arg;
};

static int rules_user_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct rules_user *u = arg;
	struct ts_rule r;
	if (rule_decode(v, vn, &r)) {
		/* One broken rule hides none of the others. */
		ks_corrupt_entry(u->k, name, nn,
				 "time-series rule record of %zu bytes does not decode; skipped",
				 vn);
		return 0;
	}
	return u->cb(u->arg, name, nn, &r);
}

int ts_rules(struct keyspace *ks, const struct ks_key *k, ts_rule_cb cb, void *arg)
{
	struct ts_series s;
	struct rules_user u = {k, cb, arg};
	int rc = ts_series_open(&s, ks, NULL, k, false, NULL);
	if (!rc)
		rc = ts_series_subs(&s, TS_SUB_RULE, rules_user_cb, &u);
	ts_series_release(&s);
	return rc;
}
