/*
 * Unit tests for alg_topk: MurmurHash2 against known vectors, the heap
 * rules (room, expulsion, order of LIST), INCRBY limits, reproducibility
 * (the same input gives the same state), and the accuracy required by
 * issue 6: on a seeded Zipf(1.0) stream of 1,000,000 items over 100,000
 * distinct values, top-50 precision >= 0.95 with k 50, width 2000, depth
 * 5, decay 0.9.
 */
#include "types/alg_topk.h"
#include "check.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define S(x) (x), strlen(x)

static void test_params(void)
{
	struct hk t;
	CHECK_INT(hk_init(&t, 0, 8, 7, 0.9), -EINVAL);
	CHECK_INT(hk_init(&t, 1, 0, 7, 0.9), -EINVAL);
	CHECK_INT(hk_init(&t, 1, 8, 0, 0.9), -EINVAL);
	CHECK_INT(hk_init(&t, 1, 8, 7, 0), -EINVAL);
	CHECK_INT(hk_init(&t, 1, 8, 7, 1.5), -EINVAL);
	CHECK_INT(hk_init(&t, 1, 8, 7, NAN), -EINVAL);
	CHECK_INT(hk_init(&t, 1, 1u << 20, 1u << 10, 0.9), -EINVAL);
	CHECK_INT(hk_init(&t, 3, 8, 7, 0.9), 0);
	CHECK(hk_is_empty(&t));
	hk_release(&t);
}

/* The fingerprint is MurmurHash2 with seed 1919: pinned values, so a
 * change of the hash (which would change every stored sketch) fails. */
static void test_hash(void)
{
	struct hk t;
	CHECK_INT(hk_init(&t, 3, 1000, 3, 0.9), 0);
	uint32_t a = hk_fingerprint(S("a")), a2 = hk_fingerprint(S("a"));
	CHECK(a == a2);
	CHECK(hk_fingerprint(S("a")) != hk_fingerprint(S("b")));
	CHECK(hk_fingerprint("", 0) != hk_fingerprint(S("abcd")));
	CHECK_INT(hk_fingerprint(S("a")), 0xf23cf517);
	CHECK_INT(hk_fingerprint(S("abcd")), 0x81b55b43);
	CHECK_INT(hk_fingerprint(S("hello")), 0x234dad03);
	for (uint32_t r = 0; r < 3; r++)
		CHECK(hk_bucket_of(&t, S("hello"), r) < 1000);
	hk_release(&t);
}

static void test_heap(void)
{
	struct hk t;
	char *ex;
	size_t en;
	CHECK_INT(hk_init(&t, 2, 100, 3, 0.9), 0);
	CHECK_INT(hk_incrby(&t, S("a"), 5, &ex, &en), 0);
	CHECK(ex == NULL);
	CHECK_INT(hk_incrby(&t, S("b"), 3, &ex, &en), 0);
	CHECK(ex == NULL);
	CHECK(hk_query(&t, S("a")) && hk_query(&t, S("b")) && !hk_query(&t, S("c")));
	CHECK_INT(hk_count(&t, S("a")), 5);
	CHECK_INT(hk_count(&t, S("c")), 0);
	/* c (count 1) does not reach the minimum 3 */
	CHECK_INT(hk_incrby(&t, S("c"), 1, &ex, &en), 0);
	CHECK(ex == NULL && !hk_query(&t, S("c")));
	/* now it does: b is expelled */
	CHECK_INT(hk_incrby(&t, S("c"), 4, &ex, &en), 0);
	CHECK(ex && en == 1 && ex[0] == 'b');
	free(ex);
	CHECK(hk_query(&t, S("c")) && !hk_query(&t, S("b")));
	const struct hk_entry *l[2];
	hk_list(&t, l);
	/* equal counts list in item byte order */
	CHECK(l[0]->count == 5 && l[0]->item[0] == 'a');
	CHECK(l[1]->count == 5 && l[1]->item[0] == 'c');
	CHECK_INT(hk_count(&t, S("c")), 5);
	CHECK(hk_heap_ok(t.heap, t.n));
	CHECK(!hk_is_empty(&t));
	/* limits */
	CHECK_INT(hk_incrby(&t, S("a"), 0, NULL, NULL), -EINVAL);
	CHECK_INT(hk_incrby(&t, S("a"), TOPK_INCR_MAX + 1, NULL, NULL), -EINVAL);
	CHECK_INT(hk_incrby(&t, S("a"), TOPK_INCR_MAX, NULL, NULL), 0);
	CHECK_INT(hk_count(&t, S("a")), 5 + TOPK_INCR_MAX);
	hk_release(&t);
}

/* A heap violating the order is recognised. */
static void test_heap_ok(void)
{
	struct hk_entry h[3] = {{1, 0, NULL, 0}, {2, 0, NULL, 0}, {3, 0, NULL, 0}};
	CHECK(hk_heap_ok(h, 3));
	h[0].count = 5;
	CHECK(!hk_heap_ok(h, 3));
}

/* ---- Zipf accuracy ---------------------------------------------------- */

static uint64_t rng = 42;

static double uniform01(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) * 0x1p-53;
}

static int cmp_u32_desc(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x > y ? -1 : x < y;
}

/* Run a stream; a copy of the final state is compared for reproducibility. */
static void zipf_run(struct hk *t, uint32_t *truth, int n_items, int n_values)
{
	double *cdf = malloc(n_values * sizeof(*cdf));
	double sum = 0;
	for (int i = 0; i < n_values; i++)
		cdf[i] = (sum += 1.0 / (i + 1));
	int fails = 0;
	rng = 42;
	memset(truth, 0, n_values * sizeof(*truth));
	for (int i = 0; i < n_items; i++) {
		double u = uniform01() * sum;
		int lo = 0, hi = n_values - 1;
		while (lo < hi) {
			int mid = (lo + hi) / 2;
			if (cdf[mid] < u)
				lo = mid + 1;
			else
				hi = mid;
		}
		char item[16];
		int n = snprintf(item, sizeof(item), "v%d", lo);
		truth[lo]++;
		if (hk_incrby(t, item, (size_t)n, 1, NULL, NULL))
			fails++;
	}
	free(cdf);
	CHECK_INT(fails, 0);
}

static void test_zipf(void)
{
	enum { N = 1000000, V = 100000, K = 50 };
	uint32_t *truth = malloc(V * sizeof(*truth)), *sorted = malloc(V * sizeof(*sorted));
	struct hk t, u;
	CHECK_INT(hk_init(&t, K, 2000, 5, 0.9), 0);
	zipf_run(&t, truth, N, V);
	memcpy(sorted, truth, V * sizeof(*truth));
	qsort(sorted, V, sizeof(*sorted), cmp_u32_desc);
	uint32_t kth = sorted[K - 1];
	CHECK_INT(t.n, K);
	int hits = 0;
	for (size_t i = 0; i < t.n; i++) {
		char num[16] = {0};
		memcpy(num, t.heap[i].item + 1, t.heap[i].len - 1);
		int v = atoi(num);
		if (truth[v] >= kth)
			hits++;
	}
	double precision = (double)hits / K;
	printf("zipf: top-%d precision %.3f (%d of %d), %llu draws\n", K, precision, hits, K,
	       (unsigned long long)t.draws);
	CHECK(precision >= 0.95);
	CHECK(hk_heap_ok(t.heap, t.n));
	/* counts never overestimate by much and the heaviest is exact-ish */
	const struct hk_entry *l[K];
	hk_list(&t, l);
	CHECK(l[0]->len == 2 && memcmp(l[0]->item, "v0", 2) == 0);
	CHECK(fabs((double)l[0]->count - truth[0]) / truth[0] < 0.01);

	/* the same stream again gives the same state, byte for byte */
	CHECK_INT(hk_init(&u, K, 2000, 5, 0.9), 0);
	zipf_run(&u, truth, N, V);
	CHECK(u.draws == t.draws && u.n == t.n);
	CHECK(memcmp(u.b, t.b, sizeof(*t.b) * 2000 * 5) == 0);
	bool same = true;
	for (size_t i = 0; i < t.n; i++)
		same = same && u.heap[i].count == t.heap[i].count &&
		       u.heap[i].len == t.heap[i].len &&
		       memcmp(u.heap[i].item, t.heap[i].item, t.heap[i].len) == 0;
	CHECK(same);
	hk_release(&u);
	hk_release(&t);
	free(truth);
	free(sorted);
}

int main(void)
{
	test_params();
	test_hash();
	test_heap();
	test_heap_ok();
	test_zipf();
	return check_done("test_alg_topk");
}
