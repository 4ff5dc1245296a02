/*
 * alg_tsagg: the pure cores of the time-series type: Kvrocks's aggregators
 * over a bucket's samples, the running state of a compaction rule (its
 * auxiliaries: Kvrocks's ResetAuxs / AggregateLatestBucket /
 * AggregateMultiBuckets), bucket alignment, and RedisTimeSeries label
 * filters. No storage. Layer: algorithms (util only).
 */
#include "types/alg_tsagg.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

static uint64_t dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}

static const char *const agg_names[] = {"none", "sum",	 "min",	  "max",   "count", "first", "last",
					"avg",	"range", "std.p", "std.s", "var.p", "var.s"};

const char *tsagg_name(int a)
{
	return a > 0 && a <= TS_AGG_VAR_S ? agg_names[a] : NULL;
}

int tsagg_parse(const char *s, size_t n)
{
	for (int i = 1; i <= TS_AGG_VAR_S; i++)
		if (strlen(agg_names[i]) == n && strncasecmp(s, agg_names[i], n) == 0)
			return i;
	return -1;
}

/* Kvrocks's ResetAuxs. */
void tsagg_rule_reset(struct ts_rule *r)
{
	r->nu = r->nf = 0;
	switch (r->agg) {
	case TS_AGG_SUM:
	case TS_AGG_COUNT:
		r->nf = 1;
		r->f[0] = 0;
		break;
	case TS_AGG_MIN:
	case TS_AGG_MAX:
		r->nf = 1;
		r->f[0] = NAN;
		break;
	case TS_AGG_FIRST:
	case TS_AGG_LAST:
		r->nu = r->nf = 1;
		r->u[0] = r->agg == TS_AGG_FIRST ? UINT64_MAX : 0;
		r->f[0] = NAN;
		break;
	case TS_AGG_AVG:
		r->nu = r->nf = 1;
		r->u[0] = 0;
		r->f[0] = 0;
		break;
	case TS_AGG_RANGE:
		r->nf = 2;
		r->f[0] = r->f[1] = NAN;
		break;
	default: /* std, var */
		r->nu = 1;
		r->nf = 2;
		r->u[0] = 0;
		r->f[0] = r->f[1] = 0;
		break;
	}
}

void tsagg_rule_init(struct ts_rule *r, int agg, uint64_t bucket, uint64_t align)
{
	memset(r, 0, sizeof(*r));
	r->agg = agg;
	r->bucket = bucket;
	r->align = align;
	tsagg_rule_reset(r);
}

bool tsagg_rule_is_reset(const struct ts_rule *r)
{
	struct ts_rule z;
	tsagg_rule_init(&z, r->agg, r->bucket, r->align);
	if (z.nu != r->nu || z.nf != r->nf)
		return false;
	for (int i = 0; i < z.nu; i++)
		if (z.u[i] != r->u[i])
			return false;
	for (int i = 0; i < z.nf; i++)
		if (dbits(z.f[i]) != dbits(r->f[i]) && !(isnan(z.f[i]) && isnan(r->f[i])))
			return false;
	return true;
}

/* Kvrocks's CalculateAlignedBucketLeft / Right. */
uint64_t tsagg_bucket_left(uint64_t ts, uint64_t dur, uint64_t align)
{
	if (ts >= align)
		return align + (ts - align) / dur * dur;
	uint64_t diff = align - ts, m0 = diff / dur + (diff % dur ? 1 : 0);
	return m0 <= align / dur ? align - m0 * dur : 0;
}

uint64_t tsagg_bucket_right(uint64_t ts, uint64_t dur, uint64_t align)
{
	if (ts < align)
		return align - (align - ts) / dur * dur;
	uint64_t m0 = (ts - align) / dur + 1;
	return m0 <= (UINT64_MAX - align) / dur ? align + m0 * dur : UINT64_MAX;
}

/* The value of one bucket's samples (non-empty). */
double tsagg_aggregate(int agg, const struct ts_sample *s, size_t n)
{
	double sum = 0, sq = 0, mn = s[0].v, mx = s[0].v, var;
	for (size_t i = 0; i < n; i++) {
		sum += s[i].v;
		sq += s[i].v * s[i].v;
		if (s[i].v < mn)
			mn = s[i].v;
		if (s[i].v > mx)
			mx = s[i].v;
	}
	double dn = (double)n;
	switch (agg) {
	case TS_AGG_SUM:
		return sum;
	case TS_AGG_MIN:
		return mn;
	case TS_AGG_MAX:
		return mx;
	case TS_AGG_COUNT:
		return dn;
	case TS_AGG_FIRST:
		return s[0].v;
	case TS_AGG_LAST:
		return s[n - 1].v;
	case TS_AGG_AVG:
		return sum / dn;
	case TS_AGG_RANGE:
		return mx - mn;
	default:
		break;
	}
	var = (sq - sum * sum / dn) / dn;
	if (agg == TS_AGG_STD_S || agg == TS_AGG_VAR_S)
		var = n > 1 ? var * dn / (dn - 1) : 0;
	return agg == TS_AGG_STD_P || agg == TS_AGG_STD_S ? sqrt(var) : var;
}

int tsagg_reducer_parse(const char *s, size_t n)
{
	int a = tsagg_parse(s, n);
	return a == TS_AGG_FIRST || a == TS_AGG_LAST ? -1 : a;
}

struct gsamp {
	struct ts_sample s;
	size_t series, at;
};

static int gsamp_cmp(const void *a, const void *b)
{
	const struct gsamp *x = a, *y = b;
	if (x->s.ts != y->s.ts)
		return x->s.ts < y->s.ts ? -1 : 1;
	if (x->series != y->series)
		return x->series < y->series ? -1 : 1;
	return (x->at > y->at) - (x->at < y->at);
}

int tsagg_group_reduce(int r, const struct ts_sample *const *s, const size_t *n, size_t k,
		       struct ts_sample **out, size_t *nout)
{
	size_t total = 0, m = 0;
	struct gsamp *all;
	struct ts_sample *run, *res;
	*out = NULL;
	*nout = 0;
	for (size_t i = 0; i < k; i++)
		total += n[i];
	if (!total)
		return 0;
	all = calloc(total, sizeof(*all));
	run = calloc(total, sizeof(*run));
	res = calloc(total, sizeof(*res));
	if (!all || !run || !res) {
		free(all);
		free(run);
		free(res);
		return -ENOMEM;
	}
	for (size_t i = 0, j = 0; i < k; i++)
		for (size_t x = 0; x < n[i]; x++, j++)
			all[j] = (struct gsamp){s[i][x], i, x};
	qsort(all, total, sizeof(*all), gsamp_cmp);
	for (size_t i = 0; i < total;) {
		size_t j = i, rn = 0;
		while (j < total && all[j].s.ts == all[i].s.ts)
			run[rn++] = all[j++].s;
		res[m++] = (struct ts_sample){all[i].s.ts, tsagg_aggregate(r, run, rn)};
		i = j;
	}
	free(all);
	free(run);
	*out = res;
	*nout = m;
	return 0;
}

/* Kvrocks's AggregateLatestBucket: fold samples into the open bucket. */
void tsagg_rule_fold(struct ts_rule *r, const struct ts_sample *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		double v = s[i].v;
		switch (r->agg) {
		case TS_AGG_SUM:
			r->f[0] += v;
			break;
		case TS_AGG_MIN:
			r->f[0] = isnan(r->f[0]) || v < r->f[0] ? v : r->f[0];
			break;
		case TS_AGG_MAX:
			r->f[0] = isnan(r->f[0]) || v > r->f[0] ? v : r->f[0];
			break;
		case TS_AGG_COUNT:
			r->f[0] += 1;
			break;
		case TS_AGG_FIRST:
			if (isnan(r->f[0]) || s[i].ts < r->u[0]) {
				r->f[0] = v;
				r->u[0] = s[i].ts;
			}
			break;
		case TS_AGG_LAST:
			if (isnan(r->f[0]) || s[i].ts > r->u[0]) {
				r->f[0] = v;
				r->u[0] = s[i].ts;
			}
			break;
		case TS_AGG_AVG:
			r->u[0]++;
			r->f[0] += v;
			break;
		case TS_AGG_RANGE:
			if (isnan(r->f[0])) {
				r->f[0] = r->f[1] = v;
			} else {
				r->f[0] = v < r->f[0] ? v : r->f[0];
				r->f[1] = v > r->f[1] ? v : r->f[1];
			}
			break;
		default:
			r->u[0]++;
			r->f[0] += v;
			r->f[1] += v * v;
			break;
		}
	}
}

/* The closed bucket's value from the state (Kvrocks's AggregateMultiBuckets). */
double tsagg_rule_value(const struct ts_rule *r)
{
	double dn, v;
	switch (r->agg) {
	case TS_AGG_AVG:
		return r->f[0] / (double)r->u[0];
	case TS_AGG_RANGE:
		return r->f[1] - r->f[0];
	case TS_AGG_STD_P:
	case TS_AGG_STD_S:
	case TS_AGG_VAR_P:
	case TS_AGG_VAR_S:
		dn = (double)r->u[0];
		v = r->f[1] - r->f[0] * r->f[0] / dn;
		if (r->agg == TS_AGG_STD_S || r->agg == TS_AGG_VAR_S)
			v = r->u[0] > 1 ? v / (dn - 1) : 0;
		else
			v = v / dn;
		return r->agg == TS_AGG_STD_P || r->agg == TS_AGG_STD_S ? sqrt(v) : v;
	default:
		return r->f[0];
	}
}

/* ---- label filters --------------------------------------------------------- */

struct matcher {
	struct buf label;
	bool neg;
	struct buf *vals; /* none: "a=" (absent) or "a!=" (present) */
	size_t nvals;
};

struct tsagg_filter {
	struct matcher *m;
	size_t n;
};

struct tsagg_filter *tsagg_filter_new(void)
{
	return calloc(1, sizeof(struct tsagg_filter));
}

void tsagg_filter_free(struct tsagg_filter *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->n; i++) {
		buf_release(&f->m[i].label);
		for (size_t j = 0; j < f->m[i].nvals; j++)
			buf_release(&f->m[i].vals[j]);
		free(f->m[i].vals);
	}
	free(f->m);
	free(f);
}

static void trim(const char **s, size_t *n)
{
	while (*n && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*n)--;
	}
	while (*n && ((*s)[*n - 1] == ' ' || (*s)[*n - 1] == '\t'))
		(*n)--;
}

static void unquote(const char **s, size_t *n)
{
	if (*n >= 2 &&
	    ((**s == '"' && (*s)[*n - 1] == '"') || (**s == '\'' && (*s)[*n - 1] == '\''))) {
		(*s)++;
		*n -= 2;
	}
}

static int add_val(struct matcher *m, const char *s, size_t n)
{
	trim(&s, &n);
	unquote(&s, &n);
	if (!n)
		return 0;
	void *p = realloc(m->vals, (m->nvals + 1) * sizeof(*m->vals));
	if (!p)
		return -ENOMEM;
	m->vals = p;
	buf_init(&m->vals[m->nvals]);
	return buf_set(&m->vals[m->nvals++], s, n);
}

int tsagg_filter_parse(struct tsagg_filter *f, const char *e, size_t n)
{
	size_t op = n, oplen = 0;
	char q = 0;
	for (size_t i = 0; i < n; i++) {
		if (e[i] == '"' || e[i] == '\'')
			q = q == 0 ? e[i] : (q == e[i] ? 0 : q);
		else if (!q && e[i] == '!' && i + 1 < n && e[i + 1] == '=') {
			op = i;
			oplen = 2;
			break;
		} else if (!q && e[i] == '=') {
			op = i;
			oplen = 1;
			break;
		}
	}
	const char *l = e;
	size_t ln = op;
	if (op < n)
		trim(&l, &ln);
	if (op == n || ln == 0) {
		LOG_ERR("filter '%.*s': write LABEL=VALUE, LABEL!=VALUE, LABEL=, LABEL!=, "
			"LABEL=(V1,V2) or LABEL!=(V1,V2)",
			(int)n, e);
		return -EINVAL;
	}
	void *p = realloc(f->m, (f->n + 1) * sizeof(*f->m));
	if (!p)
		return -ENOMEM;
	f->m = p;
	struct matcher *m = &f->m[f->n];
	memset(m, 0, sizeof(*m));
	f->n++;
	m->neg = oplen == 2;
	int rc = buf_set(&m->label, l, ln);
	const char *v = e + op + oplen;
	size_t vn = n - op - oplen;
	trim(&v, &vn);
	if (!rc && vn >= 2 && v[0] == '(' && v[vn - 1] == ')') {
		size_t start = 1;
		int depth = 0;
		q = 0;
		for (size_t i = 1; i < vn - 1 && !rc; i++) {
			if (v[i] == '"' || v[i] == '\'')
				q = q == 0 ? v[i] : (q == v[i] ? 0 : q);
			else if (!q && v[i] == '(')
				depth++;
			else if (!q && v[i] == ')' && depth > 0)
				depth--;
			else if (!q && !depth && v[i] == ',') {
				rc = add_val(m, v + start, i - start);
				start = i + 1;
			}
		}
		if (!rc)
			rc = add_val(m, v + start, vn - 1 - start);
		if (!rc && !m->nvals) {
			LOG_ERR("filter '%.*s': an empty list", (int)n, e);
			rc = -EINVAL;
		}
	} else if (!rc && vn) {
		rc = add_val(m, v, vn);
	}
	return rc;
}

int tsagg_filter_check(const struct tsagg_filter *f)
{
	for (size_t i = 0; f && i < f->n; i++)
		if (!f->m[i].neg && f->m[i].nvals)
			return 0;
	LOG_ERR("a label filter needs at least one matcher LABEL=VALUE or LABEL=(V1,..)");
	return -EINVAL;
}

int tsagg_filter_each_equal(const struct tsagg_filter *f,
			    int (*cb)(void *arg, const char *label, size_t ln, const char *v,
				      size_t vn),
			    void *arg)
{
	int rc = 0;
	for (size_t i = 0; f && i < f->n && !rc; i++)
		for (size_t j = 0; !f->m[i].neg && j < f->m[i].nvals && !rc; j++)
			rc = cb(arg, f->m[i].label.data, f->m[i].label.len, f->m[i].vals[j].data,
				f->m[i].vals[j].len);
	return rc;
}

bool tsagg_filter_match(const struct tsagg_filter *f, const struct ts_label *l, size_t n)
{
	for (size_t i = 0; i < f->n; i++) {
		const struct matcher *m = &f->m[i];
		const struct ts_label *v = NULL;
		for (size_t j = 0; j < n; j++)
			if (l[j].nn == m->label.len &&
			    memcmp(l[j].name, m->label.data, l[j].nn) == 0)
				v = &l[j];
		bool in = false;
		for (size_t j = 0; v && j < m->nvals; j++)
			in |= m->vals[j].len == v->vn &&
			      memcmp(m->vals[j].data, v->value, v->vn) == 0;
		if (!m->nvals) {
			/* a= : absent; a!= : present */
			if (m->neg ? v == NULL : v != NULL)
				return false;
		} else if (m->neg ? in : !in) {
			return false;
		}
	}
	return true;
}
