/*
 * Unit tests for t_tdigest on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case (bad input checks
 * the errno and that the stored records did not change), the stored bytes
 * against kvrocks-encoding.md 6.12 written by hand in hex (metadata tail,
 * buffer record, centroid records), Kvrocks's buffer/merge rule at the
 * capacity, queries that store nothing, and the state setters the tree
 * uses.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_string.h"
#include "types/t_tdigest.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

static struct keyspace *ks;

static int meta_raw(const char *key, struct buf *o)
{
	return fixture_meta_raw(ks, KEY(key), o);
}

/* The metadata tail (after the 25-byte header) in hex, spaced. */
static void check_tail(const char *key, const char *hex)
{
	struct buf r = BUF_INIT;
	unsigned char want[128];
	size_t n = check_unhex(hex, want, sizeof(want));
	CHECK_INT(meta_raw(key, &r), 0);
	CHECK(r.len == 25 + 72);
	if (r.len == 97) {
		CHECK_INT((uint8_t)r.data[0], 0x8C);
		CHECK_INT(get_be64(r.data + 17), 0); /* size unused */
		CHECK_MEM(r.data + 25, r.len - 25, want, n);
	}
	buf_release(&r);
}

static void check_sub(const char *key, const char *subhex, const char *valhex)
{
	fixture_check_sub_hex(ks, STORE_CF_DEFAULT, KEY(key), subhex, valhex);
}

#define EMPTY_MINMAX "FF EF FF FF FF FF FF FF 00 10 00 00 00 00 00 00"

static void test_create(void)
{
	struct buf snap = BUF_INIT;
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "td"), 0), 0);
	/* compression 100, capacity 610, counters 0, min DBL_MAX, max -DBL_MAX */
	check_tail("td", "00 00 00 64 00 00 02 62"
			 "00 00 00 00 00 00 00 00"
			 "00 00 00 00 00 00 00 00"
			 "00 00 00 00 00 00 00 00"
			 "00 00 00 00 00 00 00 00" EMPTY_MINMAX "00 00 00 00 00 00 00 00"
			 "00 00 00 00 00 00 00 00");
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "td"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_TDIGEST);
	CHECK(!info.empty);
	/* exists already: any type */
	fixture_snapshot(ks, KEY("td"), &snap);
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "td"), 50), -EEXIST);
	CHECK(fixture_unchanged(ks, KEY("td"), &snap));
	CHECK_INT(string_set(ks, KEY(DEFNS, "str"), "x", 1, 0), 0);
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "str"), 50), -EEXIST);
	/* bad compression: nothing stored */
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "bad"), 1001), -EINVAL);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "bad"), &info), -ENOENT);
	/* compression 1000: capacity capped at 1024 */
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "big"), 1000), 0);
	struct tdigest_info in;
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "big"), &in), 0);
	CHECK_INT(in.capacity, 1024);
	/* over a remembered empty collection: it is replaced */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "e"), KV_TYPE_HASH), 0);
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "e"), 10), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "e"), &info), 0);
	CHECK(info.type == KV_TYPE_TDIGEST && !info.empty);
	buf_release(&snap);
}

static void test_add(void)
{
	struct buf snap = BUF_INIT;
	double v[] = {1.0, 2.5};
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "a"), 100), 0);
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "a"), v, 2), 0);
	/* the buffer: two sortable doubles (1.0 = BF F0.., 2.5 = C0 04..) */
	check_sub("a", "00", "BF F0 00 00 00 00 00 00 C0 04 00 00 00 00 00 00");
	/* unmerged 2, merged 0, total weight 2, merged weight 0, min 1 and
	 * max 2.5 (Kvrocks's Add sets them at every add), observations 2 */
	check_tail("a", "00 00 00 64 00 00 02 62"
			"00 00 00 00 00 00 00 02"
			"00 00 00 00 00 00 00 00"
			"00 00 00 00 00 00 00 02"
			"00 00 00 00 00 00 00 00"
			"BF F0 00 00 00 00 00 00"
			"C0 04 00 00 00 00 00 00"
			"00 00 00 00 00 00 00 02"
			"00 00 00 00 00 00 00 00");
	/* bad input: NaN, infinity, nothing */
	fixture_snapshot(ks, KEY("a"), &snap);
	double bad[] = {3, NAN};
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "a"), bad, 2), -EINVAL);
	bad[1] = INFINITY;
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "a"), bad, 2), -EINVAL);
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "a"), bad, 0), -EINVAL);
	CHECK(fixture_unchanged(ks, KEY("a"), &snap));
	/* wrong type, missing key */
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "str"), v, 1), -KV_EWRONGTYPE);
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "nokey"), v, 1), -ENOENT);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "nokey"), &info), -ENOENT);
	buf_release(&snap);
}

/* Kvrocks's rule: samples go to the buffer while unmerged + n <= capacity;
 * beyond it, buffer and samples merge into the centroids. */
static void test_merge_at_capacity(void)
{
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "m"), 10), 0); /* capacity 70 */
	for (int i = 1; i <= 70; i++) {
		double x = i;
		CHECK_INT(tdigest_add(ks, KEY(DEFNS, "m"), &x, 1), 0);
	}
	struct tdigest_info in;
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "m"), &in), 0);
	CHECK(in.unmerged_nodes == 70 && in.merged_nodes == 0 && in.merge_times == 0);
	double x = 71;
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "m"), &x, 1), 0);
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "m"), &in), 0);
	CHECK(in.unmerged_nodes == 0 && in.merge_times == 1 && in.total_weight == 71 &&
	      in.merged_weight == 71 && in.observations == 71);
	CHECK(in.min == 1 && in.max == 71);
	/* an independent model of Kvrocks's k1 merger (delta 10, 71 samples)
	 * gives 6 centroids: (3.5, 6), (15, 17), (34, 21), ... */
	CHECK_INT(in.merged_nodes, 6);
	struct buf v = BUF_INIT;
	CHECK_INT(fixture_sub_raw_hex(ks, STORE_CF_DEFAULT, KEY("m"), "00", &v),
		  -ENOENT); /* no buffer record */
	/* centroid 0: key 01 | 3.5 (C0 0C..) | seq 00 00 00 00 -> weight 6.0;
	 * centroid 1: 15.0 (C0 2E..) at seq 1 -> 17.0 */
	check_sub("m", "01 C0 0C 00 00 00 00 00 00 00 00 00 00", "C0 18 00 00 00 00 00 00");
	check_sub("m", "01 C0 2E 00 00 00 00 00 00 00 00 00 01", "C0 31 00 00 00 00 00 00");
	/* the stored state agrees with the metadata */
	struct td_digest d;
	double *buf;
	size_t nb;
	CHECK_INT(tdigest_state(ks, KEY(DEFNS, "m"), &in, &d, &buf, &nb), 0);
	CHECK(d.n == in.merged_nodes && nb == 0 && d.total_weight == 71);
	td_release(&d);
	free(buf);
	buf_release(&v);
}

static void test_queries(void)
{
	struct buf snap = BUF_INIT;
	struct td_digest d;
	struct tdigest_info in;
	double v[] = {10, 20, 30, 40, 50};
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "q"), 100), 0);
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "q"), v, 5), 0);
	fixture_snapshot(ks, KEY("q"), &snap);
	CHECK_INT(tdigest_digest(ks, KEY(DEFNS, "q"), &d, &in), 0);
	/* the buffer merged in memory */
	CHECK(d.n == 5 && d.min == 10 && d.max == 50);
	CHECK(td_quantile(&d, 0.5) == 30);
	CHECK_INT(td_revrank(&d, 40), 1);
	CHECK_INT(td_rank(&d, 30), 3);
	CHECK(td_cdf(&d, 30) == 0.5);
	td_release(&d);
	/* queries store nothing */
	CHECK(fixture_unchanged(ks, KEY("q"), &snap));
	CHECK_INT(tdigest_digest(ks, KEY(DEFNS, "str"), &d, NULL), -KV_EWRONGTYPE);
	td_release(&d);
	CHECK_INT(tdigest_digest(ks, KEY(DEFNS, "nokey"), &d, NULL), -ENOENT);
	td_release(&d);
	/* an empty digest answers NaN */
	CHECK_INT(tdigest_digest(ks, KEY(DEFNS, "td"), &d, NULL), 0);
	CHECK(d.n == 0 && isnan(td_quantile(&d, 0.5)));
	td_release(&d);
	buf_release(&snap);
}

static void test_reset(void)
{
	double v[] = {1, 2, 3};
	uint64_t ver = fixture_version(ks, KEY("q"));
	CHECK_INT(tdigest_reset(ks, KEY(DEFNS, "q")), 0);
	check_tail("q", "00 00 00 64 00 00 02 62"
			"00 00 00 00 00 00 00 00"
			"00 00 00 00 00 00 00 00"
			"00 00 00 00 00 00 00 00"
			"00 00 00 00 00 00 00 00" EMPTY_MINMAX "00 00 00 00 00 00 00 00"
			"00 00 00 00 00 00 00 00");
	CHECK(fixture_version(ks, KEY("q")) == ver);
	struct buf b = BUF_INIT;
	CHECK_INT(fixture_sub_raw_hex(ks, STORE_CF_DEFAULT, KEY("q"), "00", &b), -ENOENT);
	/* the merged one loses its centroids */
	CHECK_INT(tdigest_reset(ks, KEY(DEFNS, "m")), 0);
	struct buf snap = BUF_INIT;
	fixture_snapshot(ks, KEY("m"), &snap);
	CHECK(snap.len == 97); /* the metadata alone */
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "q"), v, 3), 0);
	CHECK_INT(tdigest_reset(ks, KEY(DEFNS, "str")), -KV_EWRONGTYPE);
	CHECK_INT(tdigest_reset(ks, KEY(DEFNS, "nokey")), -ENOENT);
	buf_release(&b);
	buf_release(&snap);
}

static void test_merge(void)
{
	struct buf snap = BUF_INIT;
	struct tdigest_info in;
	struct td_digest d;
	double a[] = {1, 2, 3}, b[] = {10, 20};
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "s1"), 50), 0);
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "s2"), 200), 0);
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "s1"), a, 3), 0);
	CHECK_INT(tdigest_add(ks, KEY(DEFNS, "s2"), b, 2), 0);
	struct ks_key src[] = {*KEY(DEFNS, "s1"), *KEY(DEFNS, "s2")};
	/* a new dest: the largest source compression */
	CHECK_INT(tdigest_merge(ks, KEY(DEFNS, "d"), src, 2, 0, false), 0);
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "d"), &in), 0);
	CHECK(in.compression == 200 && in.merged_nodes == 5 && in.unmerged_nodes == 0 &&
	      in.total_weight == 5 && in.observations == 5 && in.min == 1 && in.max == 20 &&
	      in.merge_times == 1);
	/* again without OVERRIDE: dest's own samples count too */
	CHECK_INT(tdigest_merge(ks, KEY(DEFNS, "d"), src, 1, 0, false), 0);
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "d"), &in), 0);
	CHECK(in.total_weight == 8 && in.compression == 200 && in.merge_times == 2);
	/* OVERRIDE with a compression */
	CHECK_INT(tdigest_merge(ks, KEY(DEFNS, "d"), src, 1, 30, true), 0);
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "d"), &in), 0);
	CHECK(in.total_weight == 3 && in.compression == 30 && in.capacity == 190 && in.max == 3);
	CHECK_INT(tdigest_digest(ks, KEY(DEFNS, "d"), &d, NULL), 0);
	CHECK(d.n == 3 && d.c[2].mean == 3);
	td_release(&d);
	/* a missing or wrong-typed source: nothing changes */
	fixture_snapshot(ks, KEY("d"), &snap);
	struct ks_key bad[] = {*KEY(DEFNS, "s1"), *KEY(DEFNS, "nokey")};
	CHECK_INT(tdigest_merge(ks, KEY(DEFNS, "d"), bad, 2, 0, false), -ENOENT);
	bad[1] = *KEY(DEFNS, "str");
	CHECK_INT(tdigest_merge(ks, KEY(DEFNS, "d"), bad, 2, 0, false), -KV_EWRONGTYPE);
	CHECK_INT(tdigest_merge(ks, KEY(DEFNS, "d"), src, 2, 1001, false), -EINVAL);
	CHECK_INT(tdigest_merge(ks, KEY(DEFNS, "d"), src, 0, 0, false), -EINVAL);
	CHECK(fixture_unchanged(ks, KEY("d"), &snap));
	/* a dest of another type */
	CHECK_INT(tdigest_merge(ks, KEY(DEFNS, "str"), src, 1, 0, false), -KV_EWRONGTYPE);
	buf_release(&snap);
}

static void test_info(void)
{
	struct tdigest_info in;
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "a"), &in), 0);
	CHECK(in.compression == 100 && in.capacity == 610 && in.unmerged_nodes == 2 &&
	      in.observations == 2 && in.min == 1 && in.max == 2.5);
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "str"), &in), -KV_EWRONGTYPE);
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "nokey"), &in), -ENOENT);
}

static void test_setters(void)
{
	struct buf snap = BUF_INIT;
	struct tdigest_info in;
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "st"), 10), 0);
	/* compression while empty */
	CHECK_INT(tdigest_set_compression(ks, KEY(DEFNS, "st"), 20), 0);
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "st"), &in), 0);
	CHECK(in.compression == 20 && in.capacity == 130);
	fixture_snapshot(ks, KEY("st"), &snap);
	CHECK_INT(tdigest_set_compression(ks, KEY(DEFNS, "st"), 0), -EINVAL);
	CHECK_INT(tdigest_set_compression(ks, KEY(DEFNS, "st"), 1001), -EINVAL);
	CHECK(fixture_unchanged(ks, KEY("st"), &snap));
	/* buffer */
	double v[] = {5, -1.5};
	CHECK_INT(tdigest_set_buffer(ks, KEY(DEFNS, "st"), v, 2), 0);
	check_sub("st", "00", "C0 14 00 00 00 00 00 00 40 07 FF FF FF FF FF FF");
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "st"), &in), 0);
	CHECK(in.unmerged_nodes == 2 && in.total_weight == 2);
	/* not empty now */
	fixture_snapshot(ks, KEY("st"), &snap);
	CHECK_INT(tdigest_set_compression(ks, KEY(DEFNS, "st"), 30), -ENOTEMPTY);
	double big[200] = {0};
	CHECK_INT(tdigest_set_buffer(ks, KEY(DEFNS, "st"), big, 131), -EINVAL);
	double nan1 = NAN;
	CHECK_INT(tdigest_set_buffer(ks, KEY(DEFNS, "st"), &nan1, 1), -EINVAL);
	CHECK(fixture_unchanged(ks, KEY("st"), &snap));
	/* centroids */
	struct td_centroid c[] = {{1, 1}, {2, 3}, {2, 2}};
	CHECK_INT(tdigest_set_centroids(ks, KEY(DEFNS, "st"), c, 3), 0);
	check_sub("st", "01 C0 00 00 00 00 00 00 00 00 00 00 01", "C0 08 00 00 00 00 00 00");
	check_sub("st", "01 C0 00 00 00 00 00 00 00 00 00 00 02", "C0 00 00 00 00 00 00 00");
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "st"), &in), 0);
	CHECK(in.merged_nodes == 3 && in.merged_weight == 6 && in.total_weight == 8);
	/* replacing them deletes the old records */
	CHECK_INT(tdigest_set_centroids(ks, KEY(DEFNS, "st"), c, 1), 0);
	struct buf b = BUF_INIT;
	CHECK_INT(fixture_sub_raw_hex(ks, STORE_CF_DEFAULT, KEY("st"),
				      "01 C0 00 00 00 00 00 00 00 00 00 00 01", &b),
		  -ENOENT);
	fixture_snapshot(ks, KEY("st"), &snap);
	struct td_centroid bad1[] = {{2, 1}, {1, 1}};
	CHECK_INT(tdigest_set_centroids(ks, KEY(DEFNS, "st"), bad1, 2), -EINVAL);
	struct td_centroid bad2[] = {{1, 0.5}};
	CHECK_INT(tdigest_set_centroids(ks, KEY(DEFNS, "st"), bad2, 1), -EINVAL);
	struct td_centroid bad3[] = {{INFINITY, 1}};
	CHECK_INT(tdigest_set_centroids(ks, KEY(DEFNS, "st"), bad3, 1), -EINVAL);
	CHECK(fixture_unchanged(ks, KEY("st"), &snap));
	/* stats */
	CHECK_INT(tdigest_set_stats(ks, KEY(DEFNS, "st"), 20, -1.5, 5, 7, 3), 0);
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "st"), &in), 0);
	CHECK(in.min == -1.5 && in.max == 5 && in.observations == 7 && in.merge_times == 3);
	fixture_snapshot(ks, KEY("st"), &snap);
	CHECK_INT(tdigest_set_stats(ks, KEY(DEFNS, "st"), 20, NAN, 5, 7, 3), -EINVAL);
	CHECK_INT(tdigest_set_stats(ks, KEY(DEFNS, "st"), 0, 1, 5, 7, 3), -EINVAL);
	CHECK_INT(tdigest_set_stats(ks, KEY(DEFNS, "st"), 30, 1, 5, 7, 3), -ENOTEMPTY);
	CHECK(fixture_unchanged(ks, KEY("st"), &snap));
	CHECK_INT(tdigest_set_stats(ks, KEY(DEFNS, "str"), 20, 1, 5, 7, 3), -KV_EWRONGTYPE);
	CHECK_INT(tdigest_set_buffer(ks, KEY(DEFNS, "nokey"), v, 1), -ENOENT);
	/* the state reads back */
	struct td_digest d;
	double *buf;
	size_t nb;
	CHECK_INT(tdigest_state(ks, KEY(DEFNS, "st"), &in, &d, &buf, &nb), 0);
	CHECK(nb == 2 && buf[0] == 5 && buf[1] == -1.5 && d.n == 1 && d.c[0].weight == 1);
	td_release(&d);
	free(buf);
	buf_release(&b);
	buf_release(&snap);
}

/* A digest as Kvrocks writes it, by hand: two centroids, one with the seq
 * suffix and one without (Kvrocks before mid-2025), and a buffer of one. */
static void test_kvrocks_written(void)
{
	unsigned char meta[128], sub[32], val[16];
	struct buf k = BUF_INIT;
	size_t n = check_unhex("8C 00 00 00 00 00 00 00 00" /* flags, expire */
			       "00 00 00 00 00 00 10 00"    /* version 4096 */
			       "00 00 00 00 00 00 00 00"    /* size */
			       "00 00 00 64 00 00 02 62"    /* compression 100, capacity 610 */
			       "00 00 00 00 00 00 00 01"    /* unmerged 1 */
			       "00 00 00 00 00 00 00 02"    /* merged 2 */
			       "00 00 00 00 00 00 00 06"    /* total weight 6 */
			       "00 00 00 00 00 00 00 05"    /* merged weight 5 */
			       "BF F0 00 00 00 00 00 00"    /* min 1 */
			       "C0 24 00 00 00 00 00 00"    /* max 10 */
			       "00 00 00 00 00 00 00 06"    /* observations */
			       "00 00 00 00 00 00 00 01",   /* merge_times */
			       meta, sizeof(meta));
	CHECK_INT(n, 97);
	ks_meta_key(ks, KEY(DEFNS, "kv"), &k);
	CHECK_INT(fixture_write(ks, STORE_CF_METADATA, k.data, k.len, meta, n), 0);
	/* centroid (2.0, 2) with seq 0; centroid (6.0, 3) without seq */
	n = check_unhex("01 C0 00 00 00 00 00 00 00 00 00 00 00", sub, sizeof(sub));
	ks_sub_key(ks, KEY(DEFNS, "kv"), 4096, sub, n, &k);
	CHECK_INT(fixture_write(ks, STORE_CF_DEFAULT, k.data, k.len, val,
				check_unhex("C0 00 00 00 00 00 00 00", val, 16)),
		  0);
	n = check_unhex("01 C0 18 00 00 00 00 00 00", sub, sizeof(sub));
	ks_sub_key(ks, KEY(DEFNS, "kv"), 4096, sub, n, &k);
	CHECK_INT(fixture_write(ks, STORE_CF_DEFAULT, k.data, k.len, val,
				check_unhex("C0 08 00 00 00 00 00 00", val, 16)),
		  0);
	n = check_unhex("00", sub, sizeof(sub));
	ks_sub_key(ks, KEY(DEFNS, "kv"), 4096, sub, n, &k);
	CHECK_INT(fixture_write(ks, STORE_CF_DEFAULT, k.data, k.len, val,
				check_unhex("C0 20 00 00 00 00 00 00", val, 16)),
		  0);
	struct td_digest d;
	struct tdigest_info in;
	CHECK_INT(tdigest_digest(ks, KEY(DEFNS, "kv"), &d, &in), 0);
	CHECK(d.n == 3 && d.total_weight == 6 && d.min == 1 && d.max == 10);
	CHECK(d.c[0].mean == 2 && d.c[1].mean == 6 && d.c[2].mean == 8);
	td_release(&d);
	/* RESET deletes both kinds of record */
	CHECK_INT(tdigest_reset(ks, KEY(DEFNS, "kv")), 0);
	struct buf v = BUF_INIT;
	CHECK_INT(
	    fixture_sub_raw_hex(ks, STORE_CF_DEFAULT, KEY("kv"), "01 C0 18 00 00 00 00 00 00", &v),
	    -ENOENT);
	/* a centroid record of another length is corruption */
	n = check_unhex("01 C0 18 00", sub, sizeof(sub));
	ks_sub_key(ks, KEY(DEFNS, "kv"), 4096, sub, n, &k);
	CHECK_INT(fixture_write(ks, STORE_CF_DEFAULT, k.data, k.len, val, 8), 0);
	CHECK_INT(tdigest_digest(ks, KEY(DEFNS, "kv"), &d, &in), -EUCLEAN);
	td_release(&d);
	buf_release(&v);
	buf_release(&k);
}

/* Issue 15 items 4 and 8: counts of a corrupt digest are -EUCLEAN before
 * they size an allocation (the address space is capped at 256 MiB over
 * what the process has: an unmerged_nodes of 2^40 asked malloc for 8
 * TiB), and weights that overflow the u64 total are refused on write. */
static void test_bounds(void)
{
	unsigned char meta[128];
	struct buf k = BUF_INIT;
	struct td_digest d;
	struct tdigest_info in;
	double one = 1;
	struct rlimit old = check_limit_as(256u << 20);
	const char *tails[] = {
	    /* unmerged 2^40 (capacity 610) */
	    "00 00 00 64 00 00 02 62 00 00 01 00 00 00 00 00",
	    /* capacity 2^32-1, unmerged 2^32-1 */
	    "00 00 00 64 FF FF FF FF 00 00 00 00 FF FF FF FF",
	    /* compression 0 */
	    "00 00 00 00 00 00 00 0A 00 00 00 00 00 00 00 01",
	    /* unmerged 611 > capacity 610 */
	    "00 00 00 64 00 00 02 62 00 00 00 00 00 00 02 63",
	};
	for (size_t i = 0; i < sizeof(tails) / sizeof(tails[0]); i++) {
		size_t n = check_unhex("8C 00 00 00 00 00 00 00 00 00 00 00 00 00 00 20 00"
				       "00 00 00 00 00 00 00 00",
				       meta, sizeof(meta));
		n += check_unhex(tails[i], meta + n, sizeof(meta) - n);
		n += check_unhex("00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
				 "00 00 00 00 00 00 00 00 FF EF FF FF FF FF FF FF"
				 "00 10 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
				 "00 00 00 00 00 00 00 00",
				 meta + n, sizeof(meta) - n);
		CHECK_INT(n, 97);
		ks_meta_key(ks, KEY(DEFNS, "bad"), &k);
		CHECK_INT(fixture_write(ks, STORE_CF_METADATA, k.data, k.len, meta, n), 0);
		CHECK_INT(tdigest_digest(ks, KEY(DEFNS, "bad"), &d, &in), -EUCLEAN);
		td_release(&d);
		CHECK_INT(tdigest_add(ks, KEY(DEFNS, "bad"), &one, 1), -EUCLEAN);
		CHECK_INT(tdigest_info(ks, KEY(DEFNS, "bad"), &in), -EUCLEAN);
	}
	CHECK_INT(ks_del(ks, KEY(DEFNS, "bad")), 0);
	check_unlimit_as(old);

	/* Centroid weights whose sum passes 2^53 (each one is allowed). */
	struct td_centroid c[3] = {{1, 0x1p52}, {2, 0x1p52}, {3, 0x1p52}};
	CHECK_INT(tdigest_create(ks, KEY(DEFNS, "w"), 100), 0);
	CHECK_INT(tdigest_set_centroids(ks, KEY(DEFNS, "w"), c, 3), -EINVAL);
	CHECK_INT(tdigest_info(ks, KEY(DEFNS, "w"), &in), 0);
	CHECK(in.merged_nodes == 0 && in.merged_weight == 0 && in.total_weight == 0);
	CHECK_INT(tdigest_set_centroids(ks, KEY(DEFNS, "w"), c, 2), 0);
	buf_release(&k);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_tdigest");
	test_create();
	test_add();
	test_merge_at_capacity();
	test_queries();
	test_reset();
	test_merge();
	test_info();
	test_setters();
	test_kvrocks_written();
	test_bounds();
	fixture_done(ks);
	return check_done("test_tdigest");
}
