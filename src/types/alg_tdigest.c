/*
 * alg_tdigest: the merging t-digest of Kvrocks (src/types/tdigest.cc,
 * after Apache Arrow) and the queries of RedisBloom's TDIGEST.* commands.
 * Layer: algorithms (pure, util only).
 *
 * Merging walks centroids in mean order with a weight limit: a centroid
 * joins the last output centroid while the running weight stays within
 * the limit, else it starts a new one and the limit moves to
 * total * Q(K(q) + 1), q = weight so far / total, with the scale function
 * k1: K(q) = delta/(2 pi) * asin(2q - 1), Q its inverse, delta =
 * max(compression, 10). The arithmetic follows Kvrocks step by step so
 * the centroids come out as Kvrocks would store them.
 */
#include "types/alg_tdigest.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

uint32_t td_capacity(uint32_t compression)
{
	uint64_t cap = (uint64_t)compression * 6 + 10;
	return cap < TD_CAPACITY_MAX ? (uint32_t)cap : TD_CAPACITY_MAX;
}

void td_init(struct td_digest *d, uint32_t compression)
{
	memset(d, 0, sizeof(*d));
	d->compression = compression;
	td_clear(d);
}

void td_release(struct td_digest *d)
{
	free(d->c);
	d->c = NULL;
	d->n = d->alloc = 0;
}

void td_clear(struct td_digest *d)
{
	d->n = 0;
	d->total_weight = 0;
	d->min = DBL_MAX;
	d->max = -DBL_MAX;
}

static int td_reserve(struct td_digest *d, size_t n)
{
	if (n <= d->alloc)
		return 0;
	struct td_centroid *c = realloc(d->c, n * sizeof(*c));
	if (!c)
		return -ENOMEM;
	d->c = c;
	d->alloc = n;
	return 0;
}

int td_push(struct td_digest *d, double mean, double weight)
{
	if (d->n == d->alloc && td_reserve(d, d->alloc ? d->alloc * 2 : 16))
		return -ENOMEM;
	d->c[d->n].mean = mean;
	d->c[d->n].weight = weight;
	d->n++;
	d->total_weight += weight;
	return 0;
}

int td_copy(struct td_digest *dst, const struct td_digest *src)
{
	td_init(dst, src->compression);
	if (td_reserve(dst, src->n ? src->n : 1))
		return -ENOMEM;
	if (src->n)
		memcpy(dst->c, src->c, src->n * sizeof(*src->c));
	dst->n = src->n;
	dst->min = src->min;
	dst->max = src->max;
	dst->total_weight = src->total_weight;
	return 0;
}

/* ---- The merger (Kvrocks's TDigestMerger with ScalerK1) ---------------- */

struct merger {
	double delta_norm;
	double total, so_far, limit;
	struct td_centroid *out; /* room for every centroid fed */
	size_t n;
};

static double k1_k(const struct merger *m, double q)
{
	return m->delta_norm * asin(2 * q - 1);
}

static double k1_q(const struct merger *m, double k)
{
	return (sin(k / m->delta_norm) + 1) / 2;
}

static void merger_init(struct merger *m, uint32_t compression, double total,
			struct td_centroid *out)
{
	uint32_t delta = compression > 10 ? compression : 10;
	m->delta_norm = delta / (2.0 * M_PI);
	m->total = total;
	m->so_far = 0;
	m->limit = -1; /* the first centroid starts a bin */
	m->out = out;
	m->n = 0;
}

static void merger_add(struct merger *m, double mean, double weight)
{
	double w = m->so_far + weight;
	if (m->n > 0 && w <= m->limit) {
		struct td_centroid *b = &m->out[m->n - 1];
		b->weight += weight;
		b->mean += (mean - b->mean) * weight / b->weight;
	} else {
		double q = m->so_far / m->total;
		double next = m->total * k1_q(m, k1_k(m, q) + 1);
		/* the limit grows strictly until the last centroid */
		m->limit = next <= m->limit ? m->total : next;
		m->out[m->n].mean = mean;
		m->out[m->n].weight = weight;
		m->n++;
	}
	m->so_far = w;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : (x > y ? 1 : 0);
}

int td_merge_input(struct td_digest *d, double *in, size_t n)
{
	if (n == 0)
		return 0;
	struct td_centroid *out = malloc((d->n + n) * sizeof(*out));
	if (!out)
		return -ENOMEM;
	/* Kvrocks seeds min/max with the first sample given, then sorts. */
	if (d->n == 0) {
		d->min = in[0];
		d->max = in[0];
	}
	d->total_weight += (double)n;
	qsort(in, n, sizeof(*in), cmp_double);
	d->min = fmin(d->min, in[0]);
	d->max = fmax(d->max, in[n - 1]);

	struct merger m;
	merger_init(&m, d->compression, d->total_weight, out);
	size_t i = 0, j = 0;
	while (i < d->n && j < n) {
		if (d->c[i].mean < in[j]) {
			merger_add(&m, d->c[i].mean, d->c[i].weight);
			i++;
		} else {
			merger_add(&m, in[j++], 1);
		}
	}
	for (; i < d->n; i++)
		merger_add(&m, d->c[i].mean, d->c[i].weight);
	for (; j < n; j++)
		merger_add(&m, in[j], 1);
	free(d->c);
	d->c = out;
	d->alloc = d->n + n;
	d->n = m.n;
	return 0;
}

/* One centroid of a k-way merge: its source, for a stable order. */
struct src_centroid {
	struct td_centroid c;
	size_t src, idx;
};

static int cmp_src(const void *a, const void *b)
{
	const struct src_centroid *x = a, *y = b;
	if (x->c.mean != y->c.mean)
		return x->c.mean < y->c.mean ? -1 : 1;
	if (x->src != y->src)
		return x->src < y->src ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx ? 1 : 0);
}

int td_merge_digests(struct td_digest *out, const struct td_digest *const *src, size_t n)
{
	size_t total = 0;
	double weight = 0, mn = DBL_MAX, mx = -DBL_MAX;
	for (size_t s = 0; s < n; s++) {
		if (src[s]->n == 0)
			continue;
		total += src[s]->n;
		weight += src[s]->total_weight;
		mn = fmin(mn, src[s]->min);
		mx = fmax(mx, src[s]->max);
	}
	struct src_centroid *all = malloc((total ? total : 1) * sizeof(*all));
	struct td_centroid *res = malloc((total ? total : 1) * sizeof(*res));
	if (!all || !res) {
		free(all);
		free(res);
		return -ENOMEM;
	}
	size_t k = 0;
	for (size_t s = 0; s < n; s++)
		for (size_t i = 0; i < src[s]->n; i++)
			all[k++] = (struct src_centroid){src[s]->c[i], s, i};
	qsort(all, total, sizeof(*all), cmp_src);
	struct merger m;
	merger_init(&m, out->compression, weight, res);
	for (size_t i = 0; i < total; i++)
		merger_add(&m, all[i].c.mean, all[i].c.weight);
	free(all);
	free(out->c);
	out->c = res;
	out->alloc = total ? total : 1;
	out->n = m.n;
	out->total_weight = weight;
	out->min = mn;
	out->max = mx;
	return 0;
}

/* ---- Queries -------------------------------------------------------------- */

static double lerp(double a, double b, double t)
{
	return a + t * (b - a);
}

/* Kvrocks's TDigestQuantile at a weight index (q * total). */
static double quantile_at(const struct td_digest *d, double index)
{
	const struct td_centroid *c = d->c;
	if (d->n == 0)
		return NAN;
	if (index <= 1)
		return d->min;
	if (index >= d->total_weight - 1)
		return d->max;
	size_t ci = 0;
	double sum = 0;
	for (; ci < d->n; ci++) {
		sum += c[ci].weight;
		if (index <= sum)
			break;
	}
	if (ci == d->n)
		return d->max; /* rounding: past the last centroid */
	double diff = index + c[ci].weight / 2 - sum;
	if (c[ci].weight == 1 && fabs(diff) < 0.5)
		return c[ci].mean;
	size_t l = ci, r = ci;
	if (diff > 0) {
		if (r == d->n - 1)
			return lerp(c[r].mean, d->max, diff / (c[r].weight / 2));
		r++;
	} else {
		if (l == 0)
			return lerp(d->min, c[0].mean, index / (c[0].weight / 2));
		l--;
		diff += c[l].weight / 2 + c[r].weight / 2;
	}
	diff /= c[l].weight / 2 + c[r].weight / 2;
	return lerp(c[l].mean, c[r].mean, diff);
}

double td_quantile(const struct td_digest *d, double q)
{
	if (!(q >= 0 && q <= 1))
		return NAN;
	return quantile_at(d, q * d->total_weight);
}

/* RedisBloom's td_cdf in units of weight: the weight below x plus half
 * the weight at x, interpolated between centroid centres. */
static double cdf_weight(const struct td_digest *d, double x)
{
	const struct td_centroid *c = d->c;
	double n = d->total_weight;
	if (x < d->min)
		return 0;
	if (x > d->max)
		return n;
	if (d->n == 1) {
		double width = d->max - d->min;
		return width > 0 ? n * (x - d->min) / width : n / 2;
	}
	if (x < c[0].mean) {
		double width = c[0].mean - d->min;
		if (!(width > 0))
			return 0;
		if (x == d->min)
			return 0.5;
		return 1 + (x - d->min) / width * (c[0].weight / 2 - 1);
	}
	const struct td_centroid *last = &c[d->n - 1];
	if (x > last->mean) {
		double width = d->max - last->mean;
		if (!(width > 0))
			return n;
		if (x == d->max)
			return n - 0.5;
		return n - (1 + (d->max - x) / width * (last->weight / 2 - 1));
	}
	double so_far = 0;
	for (size_t i = 0; i + 1 < d->n; i++) {
		if (c[i].mean == x) {
			double dw = 0;
			for (; i < d->n && c[i].mean == x; i++)
				dw += c[i].weight;
			return so_far + dw / 2;
		}
		if (c[i].mean <= x && x < c[i + 1].mean) {
			double w = c[i].weight, nw = c[i + 1].weight;
			double dm = c[i + 1].mean - c[i].mean;
			if (!(dm > 0))
				return so_far + (w + nw) / 2;
			/* a singleton's weight sits exactly at its mean */
			double left_ex = 0, right_ex = 0;
			if (w == 1) {
				if (nw == 1)
					return so_far + 1;
				left_ex = 0.5;
			} else if (nw == 1) {
				right_ex = 0.5;
			}
			double dw = (w + nw) / 2 - left_ex - right_ex;
			double base = so_far + w / 2 + left_ex;
			return base + dw * (x - c[i].mean) / dm;
		}
		so_far += c[i].weight;
	}
	return n - 0.5; /* x is the last centroid's mean */
}

double td_cdf(const struct td_digest *d, double x)
{
	if (d->n == 0 || isnan(x))
		return NAN;
	return cdf_weight(d, x) / d->total_weight;
}

/* A weight as a rank: weights from a record that does not hold together
 * (infinite, NaN, past 2^63) must not make the cast undefined. */
static int64_t rank_of(double w)
{
	if (!(w > 0))
		return 0;
	if (w >= 9223372036854775807.0)
		return INT64_MAX;
	return (int64_t)w;
}

int64_t td_rank(const struct td_digest *d, double x)
{
	if (d->n == 0)
		return -2;
	if (x < d->min)
		return -1;
	if (x > d->max)
		return rank_of(d->total_weight);
	return rank_of(round(cdf_weight(d, x)));
}

int64_t td_revrank(const struct td_digest *d, double x)
{
	if (d->n == 0)
		return -2;
	if (x > d->max)
		return -1;
	if (x < d->min)
		return rank_of(d->total_weight);
	double f = d->total_weight - cdf_weight(d, x);
	double fl = floor(f);
	return rank_of(f - fl > 0.5 ? ceil(f) : fl); /* halves round down */
}

double td_byrank(const struct td_digest *d, double rank)
{
	if (d->n == 0 || !(rank >= 0))
		return NAN;
	if (rank >= d->total_weight)
		return INFINITY;
	return quantile_at(d, rank + 0.5);
}

double td_byrevrank(const struct td_digest *d, double rank)
{
	if (d->n == 0 || !(rank >= 0))
		return NAN;
	if (rank >= d->total_weight)
		return -INFINITY;
	return quantile_at(d, d->total_weight - rank - 0.5);
}

double td_trimmed_mean(const struct td_digest *d, double lo, double hi)
{
	if (d->n == 0 || !(lo >= 0 && hi <= 1 && lo < hi))
		return NAN;
	double left = lo * d->total_weight, right = hi * d->total_weight;
	double done = 0, sum = 0, count = 0;
	for (size_t i = 0; i < d->n; i++) {
		double add = d->c[i].weight;
		add -= fmin(fmax(0, left - done), add);
		add = fmin(fmax(0, right - done), add);
		done += d->c[i].weight;
		sum += d->c[i].mean * add;
		count += add;
		if (done >= right)
			break;
	}
	return count > 0 ? sum / count : NAN;
}
