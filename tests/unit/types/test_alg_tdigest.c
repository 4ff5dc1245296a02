/*
 * Unit tests for alg_tdigest: the examples of RedisBloom's TDIGEST.*
 * documentation (rank, revrank, byrank, byrevrank, cdf) as known answers,
 * Kvrocks's merge rules (capacity, min/max, weights), and the accuracy
 * required by issue 6: quantiles of 1,000,000 seeded samples from a
 * uniform, a normal (Box-Muller) and an exponential distribution, fed
 * through a buffer of Kvrocks's capacity at compression 100, within 1 %
 * rank error of the exact quantiles.
 */
#include "types/alg_tdigest.h"
#include "check.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* A digest of these samples, merged all at once. */
static void digest_of(struct td_digest *d, uint32_t compression, const double *v, size_t n)
{
	double *copy = malloc(n * sizeof(*copy));
	memcpy(copy, v, n * sizeof(*copy));
	td_init(d, compression);
	CHECK_INT(td_merge_input(d, copy, n), 0);
	free(copy);
}

static void test_capacity(void)
{
	CHECK_INT(td_capacity(100), 610);
	CHECK_INT(td_capacity(10), 70);
	CHECK_INT(td_capacity(169), 1024);
	CHECK_INT(td_capacity(1000), 1024);
}

static void test_empty(void)
{
	struct td_digest d;
	td_init(&d, 100);
	CHECK(d.min == DBL_MAX && d.max == -DBL_MAX);
	CHECK(isnan(td_quantile(&d, 0.5)));
	CHECK(isnan(td_cdf(&d, 1)));
	CHECK_INT(td_rank(&d, 1), -2);
	CHECK_INT(td_revrank(&d, 1), -2);
	CHECK(isnan(td_byrank(&d, 0)));
	CHECK(isnan(td_trimmed_mean(&d, 0.1, 0.9)));
	td_release(&d);
}

/* TDIGEST.RANK / REVRANK examples of the RedisBloom documentation. */
static void test_rank_examples(void)
{
	static const double a[] = {10, 20, 30, 40, 50, 60};
	static const double x[] = {0, 10, 20, 30, 40, 50, 60, 70};
	static const int64_t rank[] = {-1, 1, 2, 3, 4, 5, 6, 6};
	static const int64_t rev[] = {6, 5, 4, 3, 2, 1, 0, -1};
	struct td_digest d;
	digest_of(&d, 1000, a, 6);
	CHECK_INT(d.n, 6);
	for (int i = 0; i < 8; i++) {
		CHECK_INT(td_rank(&d, x[i]), rank[i]);
		CHECK_INT(td_revrank(&d, x[i]), rev[i]);
	}
	td_release(&d);

	static const double b[] = {10, 10, 10, 10, 20, 20};
	digest_of(&d, 1000, b, 6);
	CHECK_INT(td_rank(&d, 10), 2);
	CHECK_INT(td_rank(&d, 20), 5);
	CHECK_INT(td_revrank(&d, 10), 4);
	CHECK_INT(td_revrank(&d, 20), 1);
	td_release(&d);

	static const double c[] = {10, 20, 30, 40, 50};
	digest_of(&d, 100, c, 5);
	CHECK_INT(td_revrank(&d, -5), 5);
	CHECK_INT(td_revrank(&d, 40), 1);
	CHECK_INT(td_revrank(&d, 30), 2);
	CHECK_INT(td_revrank(&d, 100), -1);
	td_release(&d);
}

/* TDIGEST.BYRANK / BYREVRANK examples. */
static void test_byrank_examples(void)
{
	static const double a[] = {1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5};
	static const double by[] = {1, 2, 2, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 5, INFINITY};
	static const double rev[] = {5, 5, 5, 5, 5, 4, 4, 4, 4, 3, 3, 3, 2, 2, 1, -INFINITY};
	struct td_digest d;
	digest_of(&d, 1000, a, 15);
	for (int r = 0; r < 16; r++) {
		CHECK(td_byrank(&d, r) == by[r]);
		CHECK(td_byrevrank(&d, r) == rev[r]);
	}
	CHECK(isnan(td_byrank(&d, -1)));
	td_release(&d);
}

static void test_cdf_quantile_small(void)
{
	static const double a[] = {1, 2, 3, 4, 5};
	struct td_digest d;
	digest_of(&d, 100, a, 5);
	CHECK(d.min == 1 && d.max == 5 && d.total_weight == 5);
	CHECK(td_cdf(&d, 0) == 0);
	CHECK(td_cdf(&d, 6) == 1);
	CHECK(td_cdf(&d, 3) == 0.5);	   /* 2 below + half of 1 */
	CHECK(td_cdf(&d, 2.5) == 2.0 / 5); /* two singletons: no interpolation */
	CHECK(td_quantile(&d, 0) == 1);
	CHECK(td_quantile(&d, 1) == 5);
	CHECK(td_quantile(&d, 0.5) == 3);
	CHECK(isnan(td_quantile(&d, 1.5)));
	CHECK(isnan(td_quantile(&d, -0.1)));
	CHECK(td_trimmed_mean(&d, 0, 1) == 3);
	CHECK(td_trimmed_mean(&d, 0.2, 0.8) == 3);
	CHECK(isnan(td_trimmed_mean(&d, 0.8, 0.2)));
	td_release(&d);

	static const double t[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	digest_of(&d, 100, t, 10);
	CHECK(td_trimmed_mean(&d, 0.1, 0.9) == 5.5);
	td_release(&d);
}

/* Merging keeps weights and min/max and never loses a sample. */
static void test_merge_rules(void)
{
	double a[] = {3, 1, 2}, b[] = {10, 20};
	struct td_digest x, y, out;
	td_init(&x, 100);
	CHECK_INT(td_merge_input(&x, a, 3), 0);
	/* Kvrocks's min/max start from the first sample given */
	CHECK(x.min == 1 && x.max == 3);
	td_init(&y, 50);
	CHECK_INT(td_merge_input(&y, b, 2), 0);
	td_init(&out, 200);
	const struct td_digest *src[] = {&x, &y};
	CHECK_INT(td_merge_digests(&out, src, 2), 0);
	CHECK(out.total_weight == 5 && out.min == 1 && out.max == 20 && out.n == 5);
	CHECK(out.c[0].mean == 1 && out.c[4].mean == 20);
	CHECK_INT(out.compression, 200);
	/* an empty source changes nothing */
	struct td_digest e;
	td_init(&e, 100);
	const struct td_digest *src2[] = {&e, &x};
	CHECK_INT(td_merge_digests(&out, src2, 2), 0);
	CHECK(out.total_weight == 3 && out.min == 1 && out.max == 3);
	td_release(&x);
	td_release(&y);
	td_release(&out);
	td_release(&e);
}

/* Centroid sizes stay within the k1 bound: many samples make few centroids. */
static void test_compression_bound(void)
{
	struct td_digest d;
	td_init(&d, 100);
	double buf[1000];
	uint64_t s = 1;
	for (int r = 0; r < 100; r++) {
		for (int i = 0; i < 1000; i++) {
			s = s * 6364136223846793005ull + 1442695040888963407ull;
			buf[i] = (double)(s >> 11);
		}
		CHECK_INT(td_merge_input(&d, buf, 1000), 0);
	}
	CHECK(d.n <= 100 && d.n >= 20);
	double w = 0;
	for (size_t i = 0; i < d.n; i++)
		w += d.c[i].weight;
	CHECK(w == 100000 && d.total_weight == 100000);
	for (size_t i = 1; i < d.n; i++)
		CHECK(d.c[i - 1].mean <= d.c[i].mean);
	td_release(&d);
}

/* ---- accuracy on 1,000,000 samples ---------------------------------- */

static uint64_t rng = 0x1234567;

static double uniform01(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return ((double)(rng >> 11) + 0.5) * 0x1p-53;
}

static int cmpd(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Number of samples <= v in the sorted array. */
static size_t rank_of(const double *s, size_t n, double v)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s[mid] <= v)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void accuracy(const char *name, double (*gen)(void))
{
	enum { N = 1000000 };
	static const double qs[] = {0.001, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999};
	double *all = malloc(N * sizeof(*all));
	double buffer[TD_CAPACITY_MAX];
	uint32_t cap = td_capacity(100);
	size_t nb = 0;
	struct td_digest d;
	td_init(&d, 100);
	/* Kvrocks's TDIGEST.ADD one sample at a time: into the buffer while
	 * it fits, else buffer and sample are merged. */
	for (size_t i = 0; i < N; i++) {
		double v = gen();
		all[i] = v;
		if (nb + 1 <= cap) {
			buffer[nb++] = v;
		} else {
			buffer[nb++] = v;
			CHECK_INT(td_merge_input(&d, buffer, nb), 0);
			nb = 0;
		}
	}
	CHECK_INT(td_merge_input(&d, buffer, nb), 0);
	qsort(all, N, sizeof(*all), cmpd);
	CHECK(d.total_weight == N && d.min == all[0] && d.max == all[N - 1]);
	double worst = 0;
	for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
		double est = td_quantile(&d, qs[i]);
		double err = fabs((double)rank_of(all, N, est) / N - qs[i]);
		worst = fmax(worst, err);
		if (err > 0.01)
			fprintf(stderr, "%s: q %g: estimate %g has rank error %g\n", name, qs[i],
				est, err);
		CHECK(err <= 0.01);
		/* the cdf of the estimate comes back to about q */
		CHECK(fabs(td_cdf(&d, est) - qs[i]) <= 0.01);
	}
	printf("%s: %zu centroids, worst rank error %.6f\n", name, d.n, worst);
	td_release(&d);
	free(all);
}

static double gen_uniform(void)
{
	return uniform01() * 1000 - 500;
}

static double gen_normal(void)
{
	double u1 = uniform01(), u2 = uniform01();
	return 50 + 10 * sqrt(-2 * log(u1)) * cos(2 * M_PI * u2);
}

static double gen_exponential(void)
{
	return -log(uniform01()) / 0.25;
}

/* Weights a corrupt record can hold (the fuzzer's find): an infinite
 * total and centroids past 2^63 give ranks at the limits, never an
 * undefined conversion (UBSan aborts on one under make asan). */
static void test_rank_of_huge_weights(void)
{
	struct td_digest d;
	td_init(&d, 100);
	CHECK_INT(td_push(&d, 1.0, 1e300), 0);
	CHECK_INT(td_push(&d, 2.0, 1e308), 0);
	CHECK_INT(td_push(&d, 3.0, 1e308), 0);
	d.min = 1.0;
	d.max = 3.0;
	d.total_weight = INFINITY;
	CHECK_INT(td_rank(&d, 4.0), INT64_MAX);
	CHECK_INT(td_revrank(&d, 0.5), INT64_MAX);
	CHECK(td_rank(&d, 2.5) >= 0);
	CHECK(td_revrank(&d, 1.5) >= 0);
	d.total_weight = 5e18;
	CHECK_INT(td_rank(&d, 4.0), 5000000000000000000ll);
	td_release(&d);
}

int main(void)
{
	test_capacity();
	test_empty();
	test_rank_examples();
	test_byrank_examples();
	test_cdf_quantile_small();
	test_merge_rules();
	test_compression_bound();
	test_rank_of_huge_weights();
	accuracy("uniform", gen_uniform);
	accuracy("normal", gen_normal);
	accuracy("exponential", gen_exponential);
	return check_done("test_alg_tdigest");
}
