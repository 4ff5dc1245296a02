/*
 * Unit tests for t_timeseries on a temporary database: stored bytes by
 * hand (metadata tail, chunk with little-endian samples, labels, rules),
 * every duplicate policy, chunk splitting, every aggregation over known
 * samples with bucket timestamps and EMPTY, range filters, retention,
 * compaction rules for in-order and late samples, TS.DEL, INCRBY/DECRBY,
 * label filters for MRANGE/MGET, and wrong-type, missing-key and
 * bad-input cases that change nothing.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_string.h"
#include "types/t_timeseries.h"

#include <math.h>

#define NOW_OPTS NULL

static struct keyspace *ks;

static int meta_raw(const char *key, struct buf *out)
{
	return fixture_meta_raw(ks, KEY(key), out);
}

static uint64_t version_of(const char *key)
{
	return fixture_version(ks, KEY(key));
}

/* The stored key of sub-key (type byte | rest) of key. */
static int sub_key_of(const char *key, uint8_t type, const void *rest, size_t rn, struct buf *sk)
{
	struct buf sub = BUF_INIT;
	buf_add_u8(&sub, type);
	buf_add(&sub, rest, rn);
	int rc = ks_sub_key(ks, KEY(key), version_of(key), sub.data, sub.len, sk);
	buf_release(&sub);
	return rc;
}

/* The raw value of sub-key (type byte | rest) of key. */
static int sub_raw(const char *key, uint8_t type, const void *rest, size_t rn, struct buf *out)
{
	struct buf sk = BUF_INIT;
	int rc = sub_key_of(key, type, rest, rn, &sk);
	if (!rc)
		rc = store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, out);
	buf_release(&sk);
	return rc;
}

/* Plant sub-key (type byte | rest) of key with the value in hex. */
static void sub_plant(const char *key, uint8_t type, const void *rest, size_t rn, const char *hex)
{
	struct buf sk = BUF_INIT;
	unsigned char v[256];
	size_t vn = unhex(hex, v);
	CHECK_INT(sub_key_of(key, type, rest, rn, &sk), 0);
	CHECK_INT(fixture_write(ks, STORE_CF_DEFAULT, sk.data, sk.len, v, vn), 0);
	buf_release(&sk);
}

/* Plant the metadata of time series `key` (version 4096, size 0,
 * retention 0, policy block, no source) with this chunk size. */
static void plant_meta(const char *key, const char *chunk_size_hex)
{
	unsigned char v[128];
	struct buf mk = BUF_INIT;
	size_t n =
	    unhex("8D 0000000000000000 0000000000001000 0000000000000000 0000000000000000", v);
	n += unhex(chunk_size_hex, v + n);
	n += unhex("00 00 00000000 0000000000000000", v + n);
	CHECK_INT(ks_meta_key(ks, KEY(key), &mk), 0);
	CHECK_INT(fixture_write(ks, STORE_CF_METADATA, mk.data, mk.len, v, n), 0);
	buf_release(&mk);
}

static int chunk_raw(const char *key, uint64_t id, struct buf *out)
{
	uint8_t b[8];
	put_be64(b, id);
	return sub_raw(key, 0, b, 8, out);
}

/* Samples of a range as "ts=v ts=v" (%g). */
static void range_str(const char *key, const struct ts_range_opt *o, bool rev, char *out,
		      size_t cap)
{
	struct ts_sample *s = NULL;
	size_t n = 0;
	int rc = ts_range(ks, KEY(key), o, rev, &s, &n);
	out[0] = 0;
	if (rc) {
		snprintf(out, cap, "err %d", rc);
		return;
	}
	size_t off = 0;
	for (size_t i = 0; i < n && off < cap; i++)
		off += (size_t)snprintf(out + off, cap - off, "%s%llu=%g", i ? " " : "",
					(unsigned long long)s[i].ts, s[i].v);
	free(s);
}

static void all_str(const char *key, char *out, size_t cap)
{
	struct ts_range_opt o;
	ts_range_opt_init(&o);
	range_str(key, &o, false, out, cap);
}

static void add(const char *key, uint64_t ts, double v)
{
	CHECK_INT(ts_add(ks, KEY(key), ts, v, NULL, TS_DUP_NONE, NULL), 0);
}

static void test_bytes(void)
{
	struct buf r = BUF_INIT;
	unsigned char want[256];
	size_t n;
	struct ts_label labels[] = {{"room", 4, "k", 1}};
	struct ts_options o = {TS_OPT_RETENTION | TS_OPT_CHUNK_SIZE | TS_OPT_POLICY | TS_OPT_LABELS,
			       60000,
			       2,
			       TS_DUP_LAST,
			       labels,
			       1};
	CHECK_INT(ts_create(ks, KEY("t"), &o), 0);
	CHECK_INT(ts_create(ks, KEY("t"), &o), -EEXIST);
	/* metadata: 8D, expire 0, version, size 0, retention 60000, chunk 2,
	 * type 0, policy 2 (last), source "" (len 0), last_timestamp 0. */
	CHECK_INT(meta_raw("t", &r), 0);
	n = unhex("8D 00 00 00 00 00 00 00 00", want);
	put_be64(want + n, version_of("t"));
	n += 8;
	n += unhex("00 00 00 00 00 00 00 00"
		   "00 00 00 00 00 00 EA 60 00 00 00 00 00 00 00 02 00 02 00 00 00 00"
		   "00 00 00 00 00 00 00 00",
		   want + n);
	CHECK_MEM(r.data, r.len, want, n);
	CHECK_INT(sub_raw("t", 1, "room", 4, &r), 0);
	CHECK_MEM(r.data, r.len, "k", 1);

	add("t", 1000, 1.5);
	CHECK_INT(chunk_raw("t", 1000, &r), 0);
	/* flags 0, count 1, ts 1000 LE, 1.5 LE (3FF8000000000000). */
	n = unhex("00 00 00 00 00 00 00 01 E8 03 00 00 00 00 00 00 00 00 00 00 00 00 F8 3F", want);
	CHECK_MEM(r.data, r.len, want, n);
	/* The full sub-key: NS | len 1 | "t" | version | 00 | id BE. */
	struct buf sk = BUF_INIT;
	uint8_t sub[9] = {0, 0, 0, 0, 0, 0, 0, 0x03, 0xE8};
	CHECK_INT(ks_sub_key(ks, KEY("t"), version_of("t"), sub, 9, &sk), 0);
	n = unhex(NS_HEX " 00 00 00 01 74", want);
	put_be64(want + n, version_of("t"));
	n += 8;
	n += unhex("00 00 00 00 00 00 00 03 E8", want + n);
	CHECK_MEM(sk.data, sk.len, want, n);
	buf_release(&sk);

	/* Two more: chunk_size 2 splits the newest chunk: 1000..2000 | 3000;
	 * size 2 and last_timestamp = 3000 (Kvrocks's rule). */
	add("t", 2000, 2);
	add("t", 3000, -1);
	CHECK_INT(chunk_raw("t", 1000, &r), 0);
	CHECK_INT(get_be32(r.data + 4), 2);
	CHECK_INT(chunk_raw("t", 3000, &r), 0);
	n = unhex("00 00 00 00 00 00 00 01 B8 0B 00 00 00 00 00 00 00 00 00 00 00 00 F0 BF", want);
	CHECK_MEM(r.data, r.len, want, n);
	CHECK_INT(meta_raw("t", &r), 0);
	CHECK_INT(get_be64(r.data + 17), 2);	       /* size = chunks */
	CHECK_INT(get_be64(r.data + r.len - 8), 3000); /* last_timestamp */
	CHECK_INT(ts_chunk_get(ks, KEY("t"), 2000, &(struct ts_sample *){0}, &n), -ENOENT);

	/* An older sample goes into the first chunk, whose id changes. */
	add("t", 500, 7);
	CHECK_INT(chunk_raw("t", 1000, &r), -ENOENT);
	CHECK_INT(chunk_raw("t", 500, &r), 0);
	CHECK_INT(get_be32(r.data + 4), 3);
	char s[256];
	all_str("t", s, sizeof(s));
	CHECK(strcmp(s, "500=7 1000=1.5 2000=2 3000=-1") == 0);
	buf_release(&r);
}

static void test_policies(void)
{
	static const struct {
		int p;
		double want;
		int rc;
	} cases[] = {
	    {TS_DUP_BLOCK, 10, -EEXIST}, {TS_DUP_FIRST, 10, 0}, {TS_DUP_LAST, 4, 0},
	    {TS_DUP_MIN, 4, 0},		 {TS_DUP_MAX, 10, 0},	{TS_DUP_SUM, 14, 0},
	};
	char name[16], s[64];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(name, sizeof(name), "p%zu", i);
		struct ts_options o = {TS_OPT_POLICY, 0, 0, cases[i].p, NULL, 0};
		CHECK_INT(ts_create(ks, KEY(name), &o), 0);
		add(name, 100, 10);
		CHECK_INT(ts_add(ks, KEY(name), 100, 4, NULL, TS_DUP_NONE, NULL), cases[i].rc);
		all_str(name, s, sizeof(s));
		char want[32];
		snprintf(want, sizeof(want), "100=%g", cases[i].want);
		CHECK(strcmp(s, want) == 0);
	}
	/* ON_DUPLICATE overrides the key's policy (p0 is BLOCK). */
	CHECK_INT(ts_add(ks, KEY("p0"), 100, 4, NULL, TS_DUP_SUM, NULL), 0);
	all_str("p0", s, sizeof(s));
	CHECK(strcmp(s, "100=14") == 0);
	/* ...and for a whole MADD (kvfs's .add:on_duplicate=). */
	struct ts_sample two[] = {{100, 1}, {150, 2}};
	CHECK_INT(ts_madd_dup(ks, KEY("p0"), two, 2, TS_MADD_ATOMIC, TS_DUP_MAX, NULL, NULL), 0);
	CHECK_INT(ts_madd_dup(ks, KEY("p0"), two, 2, TS_MADD_ATOMIC, TS_DUP_SUM, NULL, NULL), 0);
	all_str("p0", s, sizeof(s));
	CHECK(strcmp(s, "100=15 150=4") == 0);
	CHECK_INT(ts_madd_dup(ks, KEY("p0"), two, 2, TS_MADD_ATOMIC, TS_DUP_NONE, NULL, NULL),
		  -EEXIST);
	/* MADD: per sample results; a BLOCK in an atomic MADD stores nothing. */
	struct ts_sample ms[] = {{200, 1}, {100, 5}, {300, 2}};
	enum ts_add_result res[3];
	size_t bad = 99;
	CHECK_INT(ts_madd(ks, KEY("p1"), ms, 3, TS_MADD_ATOMIC, res, &bad), 0); /* FIRST */
	CHECK_INT(res[0], TS_ADD_INSERT);
	CHECK_INT(res[1], TS_ADD_SKIP);
	CHECK_INT(res[2], TS_ADD_INSERT);
	struct ts_options blk = {TS_OPT_POLICY, 0, 0, TS_DUP_BLOCK, NULL, 0};
	CHECK_INT(ts_alter(ks, KEY("p1"), &blk), 0);
	struct ts_sample ms2[] = {{400, 1}, {200, 9}};
	CHECK_INT(ts_madd(ks, KEY("p1"), ms2, 2, TS_MADD_ATOMIC, res, &bad), -EEXIST);
	CHECK_INT(bad, 1);
	all_str("p1", s, sizeof(s));
	CHECK(strcmp(s, "100=10 200=1 300=2") == 0);
	/* Without ATOMIC the good sample goes in and the bad one is reported. */
	CHECK_INT(ts_madd(ks, KEY("p1"), ms2, 2, 0, res, &bad), 0);
	CHECK_INT(res[0], TS_ADD_INSERT);
	CHECK_INT(res[1], TS_ADD_BLOCK);
	CHECK_INT(ts_madd(ks, KEY("nope"), ms2, 2, 0, res, &bad), -ENOENT);
	/* NaN is bad input. */
	struct ts_sample nan_s = {500, NAN};
	CHECK_INT(ts_madd(ks, KEY("p1"), &nan_s, 1, 0, res, &bad), -EINVAL);
	all_str("p1", s, sizeof(s));
	CHECK(strcmp(s, "100=10 200=1 300=2 400=1") == 0);
}

static void test_aggregations(void)
{
	static const struct {
		int agg;
		const char *want;
	} cases[] = {
	    {TS_AGG_AVG, "1000=2 2000=3.5 4000=10"},
	    {TS_AGG_SUM, "1000=4 2000=7 4000=10"},
	    {TS_AGG_MIN, "1000=1 2000=2 4000=10"},
	    {TS_AGG_MAX, "1000=3 2000=5 4000=10"},
	    {TS_AGG_RANGE, "1000=2 2000=3 4000=0"},
	    {TS_AGG_COUNT, "1000=2 2000=2 4000=1"},
	    {TS_AGG_FIRST, "1000=1 2000=5 4000=10"},
	    {TS_AGG_LAST, "1000=3 2000=2 4000=10"},
	    {TS_AGG_STD_P, "1000=1 2000=1.5 4000=0"},
	    {TS_AGG_STD_S, "1000=1.41421 2000=2.12132 4000=0"},
	    {TS_AGG_VAR_P, "1000=1 2000=2.25 4000=0"},
	    {TS_AGG_VAR_S, "1000=2 2000=4.5 4000=0"},
	};
	char s[256];
	struct ts_sample ms[] = {{1000, 1}, {1500, 3}, {2000, 5}, {2500, 2}, {4000, 10}};
	CHECK_INT(ts_create(ks, KEY("agg"), NULL), 0);
	CHECK_INT(ts_madd(ks, KEY("agg"), ms, 5, TS_MADD_ATOMIC, NULL, NULL), 0);
	struct ts_range_opt o;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		ts_range_opt_init(&o);
		o.agg = cases[i].agg;
		o.bucket = 1000;
		range_str("agg", &o, false, s, sizeof(s));
		if (strcmp(s, cases[i].want))
			fprintf(stderr, "  %s: got '%s'\n", tsagg_name(cases[i].agg), s);
		CHECK(strcmp(s, cases[i].want) == 0);
	}
	/* Bucket timestamps, EMPTY, ALIGN, COUNT, reverse. */
	ts_range_opt_init(&o);
	o.agg = TS_AGG_AVG;
	o.bucket = 1000;
	o.bt = TS_BT_END;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "2000=2 3000=3.5 5000=10") == 0);
	o.bt = TS_BT_MID;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "1500=2 2500=3.5 4500=10") == 0);
	o.bt = TS_BT_START;
	o.empty = true;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "1000=2 2000=3.5 3000=nan 4000=10") == 0);
	o.agg = TS_AGG_SUM;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "1000=4 2000=7 3000=0 4000=10") == 0);
	o.agg = TS_AGG_LAST;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "1000=3 2000=2 3000=2 4000=10") == 0);
	o.empty = false;
	o.agg = TS_AGG_COUNT;
	o.align = 500;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "500=1 1500=2 2500=1 3500=1") == 0);
	o.count = 2;
	range_str("agg", &o, true, s, sizeof(s));
	CHECK(strcmp(s, "3500=1 2500=1") == 0);
	/* Raw filters. */
	ts_range_opt_init(&o);
	o.from = 1500;
	o.to = 2500;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "1500=3 2000=5 2500=2") == 0);
	range_str("agg", &o, true, s, sizeof(s));
	CHECK(strcmp(s, "2500=2 2000=5 1500=3") == 0);
	ts_range_opt_init(&o);
	o.filter_value = true;
	o.vmin = 2;
	o.vmax = 5;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "1500=3 2000=5 2500=2") == 0);
	uint64_t fts[] = {4000, 1000, 1234};
	ts_range_opt_init(&o);
	o.filter_ts = fts;
	o.nfilter_ts = 3;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "1000=1 4000=10") == 0);
	o.count = 1;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "1000=1") == 0);
	/* Bad input. */
	ts_range_opt_init(&o);
	o.agg = TS_AGG_AVG;
	o.bucket = 0;
	range_str("agg", &o, false, s, sizeof(s));
	CHECK(strcmp(s, "err -22") == 0);
	/* TS.GET, TS.INFO. */
	struct ts_sample last;
	CHECK_INT(ts_get(ks, KEY("agg"), &last), 1);
	CHECK_INT(last.ts, 4000);
	struct ts_info info;
	CHECK_INT(ts_info(ks, KEY("agg"), &info), 0);
	CHECK_INT(info.total_samples, 5);
	CHECK_INT(info.first_ts, 1000);
	CHECK_INT(info.last_ts, 4000);
	CHECK_INT(info.chunks, 1);
	CHECK_INT(info.m.chunk_size, TS_DEFAULT_CHUNK_SIZE);
	buf_release(&info.source);
}

static void test_retention_del_incr(void)
{
	char s[256];
	struct ts_options o = {TS_OPT_RETENTION, 1000, 0, 0, NULL, 0};
	CHECK_INT(ts_create(ks, KEY("ret"), &o), 0);
	add("ret", 1000, 1);
	add("ret", 2000, 2);
	add("ret", 2500, 3);
	/* On read: older than 2500 - 1000 is gone. */
	all_str("ret", s, sizeof(s));
	CHECK(strcmp(s, "2000=2 2500=3") == 0);
	/* On add: too old is refused, nothing changes. */
	CHECK_INT(ts_add(ks, KEY("ret"), 1400, 9, NULL, TS_DUP_NONE, NULL), -EINVAL);
	o.retention = 0;
	CHECK_INT(ts_alter(ks, KEY("ret"), &o), 0);
	all_str("ret", s, sizeof(s));
	CHECK(strcmp(s, "1000=1 2000=2 2500=3") == 0);

	/* A retention near 2^64 (read from disk, or set so) keeps everything:
	 * ts + retention wrapped once and refused 500 as too old. */
	struct ts_options big = {TS_OPT_RETENTION, UINT64_MAX - 10, 0, 0, NULL, 0};
	CHECK_INT(ts_create(ks, KEY("ret2"), &big), 0);
	add("ret2", 1000, 1);
	CHECK_INT(ts_add(ks, KEY("ret2"), 500, 2, NULL, TS_DUP_NONE, NULL), 0);
	all_str("ret2", s, sizeof(s));
	CHECK(strcmp(s, "500=2 1000=1") == 0);

	/* Compaction's rule (kvrocks-encoding.md 6.13 / 9). */
	struct ts_meta m = {.retention = 1000, .last_ts = 3000};
	uint8_t chunk[24] = {0, 0, 0, 0, 0, 0, 0, 1};
	put_be64(chunk + 8, 0); /* overwritten below in LE */
	uint64_t t = 1999;
	for (int i = 0; i < 8; i++)
		chunk[8 + i] = (uint8_t)(t >> (8 * i));
	CHECK(ts_chunk_is_expired(&m, chunk, sizeof(chunk)));
	t = 2000;
	for (int i = 0; i < 8; i++)
		chunk[8 + i] = (uint8_t)(t >> (8 * i));
	CHECK(!ts_chunk_is_expired(&m, chunk, sizeof(chunk)));
	m.retention = 0;
	CHECK(!ts_chunk_is_expired(&m, chunk, sizeof(chunk)));

	/* TS.DEL. */
	uint64_t del = 0;
	CHECK_INT(ts_del(ks, KEY("ret"), 1500, 2000, &del), 0);
	CHECK_INT(del, 1);
	all_str("ret", s, sizeof(s));
	CHECK(strcmp(s, "1000=1 2500=3") == 0);
	CHECK_INT(ts_del(ks, KEY("ret"), 3000, 2000, &del), -EINVAL);
	CHECK_INT(ts_del(ks, KEY("none"), 0, 10, &del), -ENOENT);

	/* INCRBY / DECRBY. */
	double v = 0;
	CHECK_INT(ts_incrby(ks, KEY("inc"), 100, 5, NULL, &v, NULL), 0);
	CHECK(v == 5);
	CHECK_INT(ts_incrby(ks, KEY("inc"), 100, 2.5, NULL, &v, NULL), 0);
	CHECK(v == 7.5);
	CHECK_INT(ts_incrby(ks, KEY("inc"), 200, -1, NULL, &v, NULL), 0);
	CHECK(v == 6.5);
	CHECK_INT(ts_incrby(ks, KEY("inc"), 150, 1, NULL, &v, NULL), -EINVAL);
	all_str("inc", s, sizeof(s));
	CHECK(strcmp(s, "100=7.5 200=6.5") == 0);
}

struct rule_got {
	char dst[32];
	struct ts_rule r;
	int n;
};

static int rule_cb(void *arg, const char *dst, size_t dn, const struct ts_rule *r)
{
	struct rule_got *g = arg;
	snprintf(g->dst, sizeof(g->dst), "%.*s", (int)dn, dst);
	g->r = *r;
	g->n++;
	return 0;
}

static void test_rules(void)
{
	char s[256];
	struct buf r = BUF_INIT;
	unsigned char want[128];
	CHECK_INT(ts_create(ks, KEY("src"), NULL), 0);
	CHECK_INT(ts_create(ks, KEY("dst"), NULL), 0);
	CHECK_INT(ts_createrule(ks, KEY("src"), KEY("dst"), TS_AGG_AVG, 1000, 0, NULL), 0);
	CHECK_INT(ts_createrule(ks, KEY("src"), KEY("dst"), TS_AGG_AVG, 1000, 0, NULL), -EEXIST);
	CHECK_INT(ts_createrule(ks, KEY("src"), KEY("src"), TS_AGG_AVG, 1000, 0, NULL), -EINVAL);
	CHECK_INT(ts_createrule(ks, KEY("src"), KEY("zz"), TS_AGG_AVG, 1000, 0, NULL), -ENOENT);
	CHECK_INT(ts_createrule(ks, KEY("dst"), KEY("src"), TS_AGG_AVG, 1000, 0, NULL), -EINVAL);
	CHECK_INT(ts_createrule(ks, KEY("src"), KEY("agg"), TS_AGG_NONE, 1000, 0, NULL), -EINVAL);
	/* The new rule: 07, bucket 1000, align 0, latest 0, 1 u64 {0}, 1 f64 {0.0}. */
	CHECK_INT(sub_raw("src", 2, "dst", 3, &r), 0);
	size_t n = unhex("07 00 00 00 00 00 00 03 E8 00 00 00 00 00 00 00 00"
			 "00 00 00 00 00 00 00 00 01 01 00 00 00 00 00 00 00 00"
			 "80 00 00 00 00 00 00 00",
			 want);
	CHECK_MEM(r.data, r.len, want, n);
	/* dst's metadata names its source. */
	struct ts_info info;
	CHECK_INT(ts_info(ks, KEY("dst"), &info), 0);
	CHECK(info.source.len == 3 && memcmp(info.source.data, "src", 3) == 0);
	buf_release(&info.source);

	add("src", 1000, 1);
	add("src", 1500, 3);
	all_str("dst", s, sizeof(s));
	CHECK(strcmp(s, "") == 0); /* the bucket is still open */
	add("src", 2000, 5);	   /* closes 1000: avg 2 */
	all_str("dst", s, sizeof(s));
	CHECK(strcmp(s, "1000=2") == 0);
	add("src", 1200, 5); /* late: bucket 1000 recomputed: (1+5+3)/3 */
	all_str("dst", s, sizeof(s));
	CHECK(strcmp(s, "1000=3") == 0);
	struct rule_got g = {0};
	CHECK_INT(ts_rules(ks, KEY("src"), rule_cb, &g), 0);
	CHECK_INT(g.n, 1);
	CHECK(strcmp(g.dst, "dst") == 0);
	CHECK_INT(g.r.latest, 2000);
	CHECK_INT(g.r.u[0], 1);
	CHECK(g.r.f[0] == 5);
	/* The rule record now: latest 2000, count 1, sum 5 (sortable C0 14 ..). */
	CHECK_INT(sub_raw("src", 2, "dst", 3, &r), 0);
	n = unhex("07 00 00 00 00 00 00 03 E8 00 00 00 00 00 00 00 00"
		  "00 00 00 00 00 00 07 D0 01 01 00 00 00 00 00 00 00 01"
		  "C0 14 00 00 00 00 00 00",
		  want);
	CHECK_MEM(r.data, r.len, want, n);
	/* An update inside the open bucket (LAST via ON_DUPLICATE) refolds it. */
	CHECK_INT(ts_add(ks, KEY("src"), 2000, 9, NULL, TS_DUP_LAST, NULL), 0);
	add("src", 2600, 1);
	add("src", 3100, 0); /* closes 2000: (9 + 1) / 2 */
	all_str("dst", s, sizeof(s));
	CHECK(strcmp(s, "1000=3 2000=5") == 0);
	/* A MADD across buckets closes each in order. */
	struct ts_sample ms[] = {{3200, 4}, {4100, 2}, {5000, 1}};
	CHECK_INT(ts_madd(ks, KEY("src"), ms, 3, TS_MADD_ATOMIC, NULL, NULL), 0);
	all_str("dst", s, sizeof(s));
	CHECK(strcmp(s, "1000=3 2000=5 3000=2 4000=2") == 0);
	/* TS.DEL on the source recomputes the closed buckets it touches. */
	uint64_t del;
	CHECK_INT(ts_del(ks, KEY("src"), 1000, 1200, &del), 0);
	CHECK_INT(del, 2);
	all_str("dst", s, sizeof(s));
	CHECK(strcmp(s, "1000=3 2000=5 3000=2 4000=2") == 0);
	CHECK_INT(ts_del(ks, KEY("src"), 1500, 1500, &del), 0);
	all_str("dst", s, sizeof(s));
	CHECK(strcmp(s, "2000=5 3000=2 4000=2") == 0);

	/* A second rule (min) on another destination; and DELETERULE. */
	CHECK_INT(ts_create(ks, KEY("dmin"), NULL), 0);
	CHECK_INT(ts_createrule(ks, KEY("src"), KEY("dmin"), TS_AGG_MIN, 1000, 0, NULL), 0);
	add("src", 5500, -3);
	add("src", 6000, 8);
	all_str("dmin", s, sizeof(s));
	CHECK(strcmp(s, "5000=-3") == 0);
	add("src", 5200, -7); /* late, into the closed 5000 bucket */
	all_str("dmin", s, sizeof(s));
	CHECK(strcmp(s, "5000=-7") == 0);
	CHECK_INT(ts_deleterule(ks, KEY("src"), KEY("dmin")), 0);
	CHECK_INT(ts_deleterule(ks, KEY("src"), KEY("dmin")), -ENOENT);
	add("src", 7000, 1);
	all_str("dmin", s, sizeof(s));
	CHECK(strcmp(s, "5000=-7") == 0);

	/* At most TS_RULES_MAX rules: one more is ENOSPC and changes nothing;
	 * adds keep working (they lock the source and every destination). */
	CHECK_INT(ts_create(ks, KEY("many"), NULL), 0);
	for (int i = 0; i <= TS_RULES_MAX; i++) {
		char d[16];
		snprintf(d, sizeof(d), "many%d", i);
		CHECK_INT(ts_create(ks, KEY(d), NULL), 0);
		CHECK_INT(ts_createrule(ks, KEY("many"), KEY(d), TS_AGG_SUM, 10, 0, NULL),
			  i < TS_RULES_MAX ? 0 : -ENOSPC);
	}
	CHECK_INT(ts_info(ks, KEY("many63"), &info), 0);
	CHECK_INT(info.source.len, 0);
	buf_release(&info.source);
	g.n = 0;
	CHECK_INT(ts_rules(ks, KEY("many"), rule_cb, &g), 0);
	CHECK_INT(g.n, TS_RULES_MAX);
	add("many", 5, 1);
	add("many", 15, 2);
	all_str("many0", s, sizeof(s));
	CHECK(strcmp(s, "0=1") == 0);

	/* A restore (with a state) makes a missing source and destination in
	 * its batch; one that fails makes neither. */
	struct ts_rule st;
	tsagg_rule_init(&st, TS_AGG_SUM, 10, 0);
	st.latest = 20;
	st.f[0] = 4;
	CHECK_INT(ts_createrule(ks, KEY("many"), KEY("new64"), TS_AGG_SUM, 10, 0, &st), -ENOSPC);
	CHECK_INT(ts_info(ks, KEY("new64"), &info), -ENOENT);
	CHECK_INT(ts_createrule(ks, KEY("rsrc"), KEY("many0"), TS_AGG_SUM, 10, 0, &st), -EINVAL);
	CHECK_INT(ts_info(ks, KEY("rsrc"), &info), -ENOENT);
	CHECK_INT(ts_createrule(ks, KEY("rsrc"), KEY("rdst"), TS_AGG_SUM, 10, 0, &st), 0);
	CHECK_INT(ts_info(ks, KEY("rsrc"), &info), 0);
	buf_release(&info.source);
	CHECK_INT(ts_info(ks, KEY("rdst"), &info), 0);
	CHECK(info.source.len == 4 && memcmp(info.source.data, "rsrc", 4) == 0);
	buf_release(&info.source);
	g.n = 0;
	CHECK_INT(ts_rules(ks, KEY("rsrc"), rule_cb, &g), 0);
	CHECK(g.n == 1 && strcmp(g.dst, "rdst") == 0 && g.r.latest == 20 && g.r.f[0] == 4);
	buf_release(&r);
}

struct mres {
	char out[512];
	size_t off;
};

static int mcb(void *arg, const struct ts_series_result *r)
{
	struct mres *m = arg;
	m->off += (size_t)snprintf(m->out + m->off, sizeof(m->out) - m->off, "%.*s:", (int)r->klen,
				   r->key);
	for (size_t i = 0; i < r->n; i++)
		m->off += (size_t)snprintf(m->out + m->off, sizeof(m->out) - m->off, "%s%g",
					   i ? "," : "", r->s[i].v);
	m->off += (size_t)snprintf(m->out + m->off, sizeof(m->out) - m->off, ";");
	return 0;
}

static const char *mq(const char *const *filters, size_t nf, bool get)
{
	static struct mres m;
	struct tsagg_filter *f = tsagg_filter_new();
	struct ts_range_opt o;
	int rc = 0;
	memset(&m, 0, sizeof(m));
	for (size_t i = 0; i < nf && !rc; i++)
		rc = tsagg_filter_parse(f, filters[i], strlen(filters[i]));
	ts_range_opt_init(&o);
	if (!rc)
		rc = get ? ts_mget(ks, KS_DEFAULT_NS, strlen(KS_DEFAULT_NS), f, NULL, mcb, &m)
			 : ts_mrange(ks, KS_DEFAULT_NS, strlen(KS_DEFAULT_NS), f, &o, false, NULL,
				     mcb, &m);
	tsagg_filter_free(f);
	if (rc)
		snprintf(m.out, sizeof(m.out), "err %d", rc);
	return m.out;
}

/* A result with its labels: "KEY:v,v[k=v|k=v];" */
static int gcb(void *arg, const struct ts_series_result *r)
{
	struct mres *m = arg;
	m->off += (size_t)snprintf(m->out + m->off, sizeof(m->out) - m->off, "%.*s:", (int)r->klen,
				   r->key);
	for (size_t i = 0; i < r->n; i++)
		m->off += (size_t)snprintf(m->out + m->off, sizeof(m->out) - m->off, "%s%g",
					   i ? "," : "", r->s[i].v);
	for (size_t i = 0; i < r->nlabels; i++)
		m->off += (size_t)snprintf(m->out + m->off, sizeof(m->out) - m->off, "%s%.*s=%.*s",
					   i ? "|" : "[", (int)r->labels[i].nn, r->labels[i].name,
					   (int)r->labels[i].vn, r->labels[i].value);
	m->off += (size_t)snprintf(m->out + m->off, sizeof(m->out) - m->off, "%s;",
				   r->nlabels ? "]" : "");
	return 0;
}

static const char *gq(const char *filter, const struct ts_mopt *mo, bool reverse, bool get)
{
	static struct mres m;
	struct tsagg_filter *f = tsagg_filter_new();
	struct ts_range_opt o;
	memset(&m, 0, sizeof(m));
	int rc = tsagg_filter_parse(f, filter, strlen(filter));
	ts_range_opt_init(&o);
	if (!rc)
		rc = get ? ts_mget(ks, KS_DEFAULT_NS, strlen(KS_DEFAULT_NS), f, mo, gcb, &m)
			 : ts_mrange(ks, KS_DEFAULT_NS, strlen(KS_DEFAULT_NS), f, &o, reverse, mo,
				     gcb, &m);
	tsagg_filter_free(f);
	if (rc)
		snprintf(m.out, sizeof(m.out), "err %d", rc);
	return m.out;
}

/* TS.MRANGE GROUPBY/REDUCE, WITHLABELS, SELECTED_LABELS; TS.MGET with
 * labels; TS.QUERYINDEX (Kvrocks's PR #3167 example, and a series
 * without the label, in no group). */
static void test_mrange_groupby(void)
{
	struct ts_label la[] = {{"gtype", 5, "stock", 5}, {"name", 4, "A", 1}};
	struct ts_label lb[] = {{"gtype", 5, "stock", 5}, {"name", 4, "B", 1}};
	struct ts_label lc[] = {{"gtype", 5, "bond", 4}, {"name", 4, "C", 1}};
	struct ts_label ld[] = {{"name", 4, "D", 1}};
	struct ts_options oa = {TS_OPT_LABELS, 0, 0, 0, la, 2};
	struct ts_options ob = {TS_OPT_LABELS, 0, 0, 0, lb, 2};
	struct ts_options oc = {TS_OPT_LABELS, 0, 0, 0, lc, 2};
	struct ts_options od = {TS_OPT_LABELS, 0, 0, 0, ld, 1};
	CHECK_INT(ts_create(ks, KEY("stock:A"), &oa), 0);
	CHECK_INT(ts_create(ks, KEY("stock:B"), &ob), 0);
	CHECK_INT(ts_create(ks, KEY("bond:C"), &oc), 0);
	CHECK_INT(ts_create(ks, KEY("other:D"), &od), 0);
	add("stock:A", 1000, 100);
	add("stock:A", 1010, 110);
	add("stock:A", 1020, 120);
	add("stock:B", 1000, 120);
	add("stock:B", 1010, 110);
	add("stock:B", 1020, 100);
	add("bond:C", 1005, 7);
	add("other:D", 1000, 1);
	const char *f = "name=(A,B,C,D)";
	struct ts_mopt g = {"gtype", 5, TS_AGG_MAX, true, NULL, 0};
	const char *got = gq(f, &g, false, false);
	const char *want = "gtype=bond:7[gtype=bond|__reducer__=max|__source__=bond:C];"
			   "gtype=stock:120,110,120[gtype=stock|__reducer__=max|__source__=stock:A,"
			   "stock:B];";
	CHECK(strcmp(got, want) == 0);
	if (strcmp(got, want) != 0)
		fprintf(stderr, "  got %s\n", got);
	g.withlabels = false;
	g.reduce = TS_AGG_SUM;
	CHECK(strcmp(gq(f, &g, false, false), "gtype=bond:7;gtype=stock:220,220,220;") == 0);
	CHECK(strcmp(gq(f, &g, true, false), "gtype=bond:7;gtype=stock:220,220,220;") == 0);
	g.reduce = TS_AGG_MIN;
	CHECK(strcmp(gq(f, &g, true, false), "gtype=bond:7;gtype=stock:100,110,100;") == 0);
	/* Selected labels of a group: the group's own label, "" for others. */
	struct ts_label sel[] = {{"name", 4, NULL, 0}, {"gtype", 5, NULL, 0}};
	g.sel = sel;
	g.nsel = 2;
	CHECK(
	    strcmp(gq(f, &g, false, false),
		   "gtype=bond:7[gtype=bond|name=];gtype=stock:100,110,100[gtype=stock|name=];") ==
	    0);
	/* GROUPBY without REDUCE, REDUCE without GROUPBY, GROUPBY in MGET. */
	struct ts_mopt bad = {"gtype", 5, 0, false, NULL, 0};
	CHECK(strcmp(gq(f, &bad, false, false), "err -22") == 0);
	bad.groupby = NULL;
	bad.reduce = TS_AGG_MAX;
	CHECK(strcmp(gq(f, &bad, false, false), "err -22") == 0);
	CHECK(strcmp(gq(f, &bad, false, true), "err -22") == 0);
	/* Without GROUPBY: every label, or the selected ones sorted, with ""
	 * for one a series lacks; MGET likewise. */
	struct ts_mopt wl = {NULL, 0, 0, true, NULL, 0};
	CHECK(strcmp(gq("name=(C,D)", &wl, false, true),
		     "bond:C:7[gtype=bond|name=C];other:D:1[name=D];") == 0);
	struct ts_label sel2[] = {
	    {"name", 4, NULL, 0}, {"gtype", 5, NULL, 0}, {"name", 4, NULL, 0}};
	struct ts_mopt sl = {NULL, 0, 0, false, sel2, 3};
	CHECK(strcmp(gq("name=(C,D)", &sl, false, false),
		     "bond:C:7[gtype=bond|name=C];other:D:1[gtype=|name=D];") == 0);
}

static void test_filters(void)
{
	struct ts_label l1[] = {{"sensor", 6, "temp", 4}, {"room", 4, "a", 1}};
	struct ts_label l2[] = {{"sensor", 6, "temp", 4}, {"room", 4, "b", 1}};
	struct ts_label l3[] = {{"sensor", 6, "hum", 3}};
	struct ts_options o1 = {TS_OPT_LABELS, 0, 0, 0, l1, 2};
	struct ts_options o2 = {TS_OPT_LABELS, 0, 0, 0, l2, 2};
	struct ts_options o3 = {TS_OPT_LABELS, 0, 0, 0, l3, 1};
	CHECK_INT(ts_create(ks, KEY("m1"), &o1), 0);
	CHECK_INT(ts_create(ks, KEY("m2"), &o2), 0);
	CHECK_INT(ts_create(ks, KEY("m3"), &o3), 0);
	add("m1", 10, 1);
	add("m1", 20, 2);
	add("m2", 10, 3);
	add("m3", 10, 4);
	CHECK(strcmp(mq((const char *[]){"sensor=temp"}, 1, false), "m1:1,2;m2:3;") == 0);
	CHECK(strcmp(mq((const char *[]){"sensor=temp"}, 1, true), "m1:2;m2:3;") == 0);
	CHECK(strcmp(mq((const char *[]){"sensor=temp", "room!=a"}, 2, true), "m2:3;") == 0);
	CHECK(strcmp(mq((const char *[]){"sensor=(temp,hum)", "room="}, 2, true), "m3:4;") == 0);
	CHECK(strcmp(mq((const char *[]){"sensor!=(temp)", "sensor=(hum, temp)"}, 2, true),
		     "m3:4;") == 0);
	CHECK(strcmp(mq((const char *[]){"sensor=temp", "room!="}, 2, true), "m1:2;m2:3;") == 0);
	/* At least one positive matcher; a matcher needs = or !=. */
	CHECK(strcmp(mq((const char *[]){"room!=a"}, 1, true), "err -22") == 0);
	CHECK(strcmp(mq((const char *[]){"room="}, 1, true), "err -22") == 0);
	CHECK(strcmp(mq((const char *[]){"sensor"}, 1, true), "err -22") == 0);
	CHECK(strcmp(mq((const char *[]){"=x"}, 1, true), "err -22") == 0);
	/* ALTER LABELS replaces them all. */
	struct ts_options a = {TS_OPT_LABELS, 0, 0, 0, l3, 1};
	CHECK_INT(ts_alter(ks, KEY("m1"), &a), 0);
	CHECK(strcmp(mq((const char *[]){"sensor=temp"}, 1, true), "m2:3;") == 0);
	CHECK_INT(ts_label_set(ks, KEY("m1"), "x", 1, "y", 1), 0);
	CHECK(strcmp(mq((const char *[]){"x=y"}, 1, true), "m1:2;") == 0);
	CHECK_INT(ts_label_set(ks, KEY("m1"), "x", 1, NULL, 0), 0);
	CHECK_INT(ts_label_set(ks, KEY("m1"), "x", 1, NULL, 0), -ENODATA);
	CHECK(strcmp(mq((const char *[]){"x=y"}, 1, true), "") == 0);
	/* A series whose metadata does not decode (a tail of 3 bytes) is
	 * skipped, logged: the others answer. */
	struct buf mk = BUF_INIT;
	unsigned char v[64];
	size_t n = unhex("8D 0000000000000000 0000000000001000 0000000000000001 000000", v);
	CHECK_INT(ks_meta_key(ks, KEY("m15"), &mk), 0);
	CHECK_INT(fixture_write(ks, STORE_CF_METADATA, mk.data, mk.len, v, n), 0);
	buf_release(&mk);
	CHECK_INT(ts_get(ks, KEY("m15"), &(struct ts_sample){0}), -EUCLEAN);
	CHECK(strcmp(mq((const char *[]){"sensor=temp"}, 1, true), "m2:3;") == 0);
	CHECK(strcmp(mq((const char *[]){"sensor=temp"}, 1, false), "m2:3;") == 0);
}

static void test_wrongtype_missing_bad(void)
{
	struct ts_sample s;
	char out[64];
	CHECK_INT(string_set(ks, KEY("str"), "x", 1, 0), 0);
	CHECK_INT(ts_add(ks, KEY("str"), 1, 1, NULL, TS_DUP_NONE, NULL), -KV_EWRONGTYPE);
	CHECK_INT(ts_get(ks, KEY("str"), &s), -KV_EWRONGTYPE);
	CHECK_INT(ts_create(ks, KEY("str"), NULL), -EEXIST);
	CHECK_INT(ts_get(ks, KEY("missing"), &s), -ENOENT);
	CHECK_INT(ts_alter(ks, KEY("missing"), &(struct ts_options){0}), -ENOENT);
	all_str("missing", out, sizeof(out));
	CHECK(strcmp(out, "err -2") == 0);
	/* An empty series: GET answers 0. */
	CHECK_INT(ts_create(ks, KEY("empty"), NULL), 0);
	CHECK_INT(ts_get(ks, KEY("empty"), &s), 0);
	/* Bad options change nothing. */
	struct ts_options bad = {TS_OPT_CHUNK_SIZE, 0, 0, 0, NULL, 0};
	CHECK_INT(ts_alter(ks, KEY("empty"), &bad), -EINVAL);
	CHECK_INT(ts_create(ks, KEY("bad1"), &bad), -EINVAL);
	CHECK_INT(ts_get(ks, KEY("bad1"), &s), -ENOENT);
	struct ts_options badp = {TS_OPT_POLICY, 0, 0, 9, NULL, 0};
	CHECK_INT(ts_alter(ks, KEY("empty"), &badp), -EINVAL);
	struct ts_info info;
	CHECK_INT(ts_info(ks, KEY("empty"), &info), 0);
	CHECK_INT(info.m.chunk_size, TS_DEFAULT_CHUNK_SIZE);
	CHECK_INT(info.m.policy, TS_DUP_BLOCK);
	buf_release(&info.source);
	/* Every verb on a string: WRONGTYPE, nothing changed. */
	struct ts_sample one = {1, 1};
	struct ts_range_opt ro;
	struct ts_sample *rs = NULL;
	size_t rn = 0;
	uint64_t del;
	double dv;
	ts_range_opt_init(&ro);
	CHECK_INT(ts_alter(ks, KEY("str"), &(struct ts_options){0}), -KV_EWRONGTYPE);
	CHECK_INT(ts_madd(ks, KEY("str"), &one, 1, 0, NULL, NULL), -KV_EWRONGTYPE);
	CHECK_INT(ts_incrby(ks, KEY("str"), 1, 1, NULL, &dv, NULL), -KV_EWRONGTYPE);
	CHECK_INT(ts_del(ks, KEY("str"), 0, 10, &del), -KV_EWRONGTYPE);
	CHECK_INT(ts_range(ks, KEY("str"), &ro, false, &rs, &rn), -KV_EWRONGTYPE);
	CHECK_INT(ts_info(ks, KEY("str"), &info), -KV_EWRONGTYPE);
	CHECK_INT(ts_label_set(ks, KEY("str"), "a", 1, "b", 1), -KV_EWRONGTYPE);
	CHECK_INT(ts_createrule(ks, KEY("empty"), KEY("str"), TS_AGG_SUM, 10, 0, NULL),
		  -KV_EWRONGTYPE);
	CHECK_INT(ts_chunk_put(ks, KEY("str"), 1, &one, 1), -KV_EWRONGTYPE);
	struct buf sv = BUF_INIT;
	CHECK_INT(string_get(ks, KEY("str"), &sv), 0);
	CHECK(sv.len == 1 && sv.data[0] == 'x');
	buf_release(&sv);
	/* Missing keys. */
	CHECK_INT(ts_info(ks, KEY("missing"), &info), -ENOENT);
	CHECK_INT(ts_label_set(ks, KEY("missing"), "a", 1, "b", 1), -ENOENT);
	CHECK_INT(ts_chunk_put(ks, KEY("missing"), 1, &one, 1), -ENOENT);
	CHECK_INT(ts_deleterule(ks, KEY("missing"), KEY("empty")), -ENOENT);
	CHECK_INT(ts_get(ks, KEY("missing"), &s), -ENOENT);
	/* Bad input. */
	CHECK_INT(ts_add(ks, KEY("empty"), 5, NAN, NULL, TS_DUP_NONE, NULL), -EINVAL);
	CHECK_INT(ts_add(ks, KEY("empty"), 5, 1, NULL, 17, NULL), -EINVAL);
	CHECK_INT(ts_label_set(ks, KEY("empty"), "", 0, "b", 1), -EINVAL);
	CHECK_INT(ts_label_set(ks, KEY("empty"), "a", 1, "", 0), -EINVAL);
	CHECK_INT(ts_get(ks, KEY("empty"), &s), 0);
	CHECK_INT(ts_policy_parse("Last", 4), TS_DUP_LAST);
	CHECK_INT(tsagg_parse("std.s", 5), TS_AGG_STD_S);
	CHECK_INT(tsagg_parse("median", 6), -1);
}

static void test_chunks(void)
{
	struct ts_options o = {TS_OPT_CHUNK_SIZE, 0, 2, 0, NULL, 0};
	struct ts_sample *s;
	size_t n;
	char out[128];
	CHECK_INT(ts_create(ks, KEY("ck"), &o), 0);
	struct ts_sample a[] = {{10, 1}, {20, 2}};
	struct ts_sample b[] = {{30, 3}, {40, 4}, {50, 5}};
	CHECK_INT(ts_chunk_put(ks, KEY("ck"), 10, a, 2), 0);
	CHECK_INT(ts_chunk_put(ks, KEY("ck"), 30, b, 3), 0);
	/* Overlaps, unsorted samples and a wrong first timestamp are refused. */
	struct ts_sample c[] = {{15, 1}};
	CHECK_INT(ts_chunk_put(ks, KEY("ck"), 15, c, 1), -EINVAL);
	struct ts_sample d[] = {{25, 1}, {35, 2}};
	CHECK_INT(ts_chunk_put(ks, KEY("ck"), 25, d, 2), -EINVAL);
	struct ts_sample e[] = {{60, 1}, {55, 2}};
	CHECK_INT(ts_chunk_put(ks, KEY("ck"), 60, e, 2), -EINVAL);
	CHECK_INT(ts_chunk_put(ks, KEY("ck"), 61, e, 1), -EINVAL);
	all_str("ck", out, sizeof(out));
	CHECK(strcmp(out, "10=1 20=2 30=3 40=4 50=5") == 0);
	struct ts_chunk_iter *it;
	int err;
	uint64_t id;
	uint32_t cnt;
	it = ts_chunk_iter_new(ks, KEY("ck"), NULL, &err);
	CHECK(it != NULL);
	CHECK_INT(ts_chunk_iter_next(it, &id, &cnt), 1);
	CHECK_INT(id, 10);
	CHECK_INT(cnt, 2);
	CHECK_INT(ts_chunk_iter_next(it, &id, &cnt), 1);
	CHECK_INT(id, 30);
	CHECK_INT(ts_chunk_iter_next(it, &id, &cnt), 0);
	ts_chunk_iter_free(it);
	it = ts_chunk_iter_new(ks, KEY("ck"), &(uint64_t){10}, &err);
	CHECK_INT(ts_chunk_iter_next(it, &id, &cnt), 1);
	CHECK_INT(id, 30);
	ts_chunk_iter_free(it);
	CHECK_INT(ts_chunk_get(ks, KEY("ck"), 30, &s, &n), 0);
	CHECK_INT(n, 3);
	free(s);
	CHECK_INT(ts_chunk_put(ks, KEY("ck"), 10, NULL, 0), 0);
	all_str("ck", out, sizeof(out));
	CHECK(strcmp(out, "30=3 40=4 50=5") == 0);
	struct ts_info info;
	CHECK_INT(ts_info(ks, KEY("ck"), &info), 0);
	CHECK_INT(info.chunks, 1);
	buf_release(&info.source);
	CHECK_INT(ts_set_last_timestamp(ks, KEY("ck"), 777), 0);
	CHECK_INT(ts_info(ks, KEY("ck"), &info), 0);
	CHECK_INT(info.m.last_ts, 777);
	buf_release(&info.source);
	/* An old chunk is split in equal pieces only above 2 x chunk_size:
	 * adding 35 and 45 to chunk 30 (3 -> 5 samples > 4) gives 3 + 2? No:
	 * 30 is the newest chunk, so it splits fixed: 30,35 | 40,45 | 50. */
	struct ts_sample m[] = {{35, 0}, {45, 0}};
	CHECK_INT(ts_madd(ks, KEY("ck"), m, 2, TS_MADD_ATOMIC, NULL, NULL), 0);
	it = ts_chunk_iter_new(ks, KEY("ck"), NULL, &err);
	char ids[64] = "";
	size_t off = 0;
	while (ts_chunk_iter_next(it, &id, &cnt) == 1)
		off += (size_t)snprintf(ids + off, sizeof(ids) - off, "%llu/%u ",
					(unsigned long long)id, cnt);
	ts_chunk_iter_free(it);
	CHECK(strcmp(ids, "30/2 40/2 50/1 ") == 0);
	/* A sealed chunk grows to 2 x chunk_size, then splits equally. */
	struct ts_sample m2[] = {{31, 0}, {32, 0}};
	CHECK_INT(ts_madd(ks, KEY("ck"), m2, 2, TS_MADD_ATOMIC, NULL, NULL), 0);
	struct ts_sample m3[] = {{33, 0}};
	CHECK_INT(ts_madd(ks, KEY("ck"), m3, 1, TS_MADD_ATOMIC, NULL, NULL), 0);
	it = ts_chunk_iter_new(ks, KEY("ck"), NULL, &err);
	ids[0] = 0;
	off = 0;
	while (ts_chunk_iter_next(it, &id, &cnt) == 1)
		off += (size_t)snprintf(ids + off, sizeof(ids) - off, "%llu/%u ",
					(unsigned long long)id, cnt);
	ts_chunk_iter_free(it);
	CHECK(strcmp(ids, "30/3 33/2 40/2 50/1 ") == 0);
	CHECK_INT(ts_info(ks, KEY("ck"), &info), 0);
	CHECK_INT(info.chunks, 4);
	buf_release(&info.source);
}

/* Issue 15: a rule record that does not decode hides nothing else. The
 * series and its other rules read (the broken one is skipped, logged);
 * an add or a delete, which would have to maintain it, is refused and
 * changes nothing; TS.DELETERULE removes it, and the key can go. */
static void test_corrupt_rule(void)
{
	char s[128];
	struct rule_got g = {0};
	struct ts_sample last;
	struct ts_info info;
	struct buf r = BUF_INIT;
	uint64_t del;
	CHECK_INT(ts_create(ks, KEY("cr"), NULL), 0);
	CHECK_INT(ts_create(ks, KEY("cr1"), NULL), 0);
	CHECK_INT(ts_create(ks, KEY("cr2"), NULL), 0);
	CHECK_INT(ts_createrule(ks, KEY("cr"), KEY("cr1"), TS_AGG_SUM, 10, 0, NULL), 0);
	CHECK_INT(ts_createrule(ks, KEY("cr"), KEY("cr2"), TS_AGG_SUM, 10, 0, NULL), 0);
	add("cr", 1, 1);
	sub_plant("cr", 2, "cr1", 3, "01 02"); /* 2 bytes: no rule */
	CHECK_INT(ts_rules(ks, KEY("cr"), rule_cb, &g), 0);
	CHECK(g.n == 1 && strcmp(g.dst, "cr2") == 0);
	all_str("cr", s, sizeof(s));
	CHECK(strcmp(s, "1=1") == 0);
	CHECK_INT(ts_get(ks, KEY("cr"), &last), 1);
	CHECK_INT(ts_info(ks, KEY("cr"), &info), 0);
	CHECK_INT(info.total_samples, 1);
	buf_release(&info.source);
	CHECK_INT(ts_add(ks, KEY("cr"), 2, 2, NULL, TS_DUP_NONE, NULL), -EUCLEAN);
	CHECK_INT(ts_del(ks, KEY("cr"), 0, 10, &del), -EUCLEAN);
	all_str("cr", s, sizeof(s));
	CHECK(strcmp(s, "1=1") == 0);
	CHECK_INT(ts_deleterule(ks, KEY("cr"), KEY("cr1")), 0);
	CHECK_INT(sub_raw("cr", 2, "cr1", 3, &r), -ENOENT);
	CHECK_INT(ts_info(ks, KEY("cr1"), &info), 0);
	CHECK_INT(info.source.len, 0);
	buf_release(&info.source);
	add("cr", 2, 2);
	add("cr", 15, 1); /* closes bucket 0 of the rule left: 1 + 2 */
	all_str("cr2", s, sizeof(s));
	CHECK(strcmp(s, "0=3") == 0);
	sub_plant("cr", 2, "cr2", 3, "07");
	CHECK_INT(ks_del(ks, KEY("cr")), 0);
	CHECK_INT(ts_get(ks, KEY("cr"), &last), -ENOENT);
	buf_release(&r);
}

/* Issue 15: stored counts and sizes are bounded before they size a
 * loop or an allocation. */
static void test_stored_bounds(void)
{
	char s[128];
	struct ts_sample *sp = NULL;
	size_t n;
	uint8_t id[8];
	/* A chunk whose count says 2^32-1 samples in 8 bytes does not decode. */
	CHECK_INT(ts_create(ks, KEY("cb"), NULL), 0);
	put_be64(id, 100);
	sub_plant("cb", 0, id, 8, "00000000 FFFFFFFF");
	CHECK_INT(ts_chunk_get(ks, KEY("cb"), 100, &sp, &n), -EUCLEAN);
	all_str("cb", s, sizeof(s));
	CHECK_INT(strcmp(s, "err -117"), 0);
	/* A stored chunk size past what kvfs writes splits without overflow
	 * (the piece count of 2^64-1 and of 2^63 once wrapped to 0: ENOMEM). */
	plant_meta("csz", "FFFFFFFFFFFFFFFF");
	add("csz", 1, 1);
	add("csz", 2, 2);
	add("csz", 3, 3);
	all_str("csz", s, sizeof(s));
	CHECK(strcmp(s, "1=1 2=2 3=3") == 0);
	plant_meta("csz2", "8000000000000000");
	CHECK_INT(ts_chunk_put(ks, KEY("csz2"), 10, &(struct ts_sample){10, 1}, 1), 0);
	CHECK_INT(ts_chunk_put(ks, KEY("csz2"), 30, &(struct ts_sample){30, 3}, 1), 0);
	add("csz2", 15, 2); /* into chunk 10, not the newest: the equal split */
	all_str("csz2", s, sizeof(s));
	CHECK(strcmp(s, "10=1 15=2 30=3") == 0);
	/* More rule records than an add can lock: -ENOSPC, read no further
	 * than that, nothing changed; the rules are still listed. */
	CHECK_INT(ts_create(ks, KEY("rmany"), NULL), 0);
	for (int i = 0; i < 200; i++) {
		char d[16];
		snprintf(d, sizeof(d), "rm%03d", i);
		sub_plant("rmany", 2, d, strlen(d),
			  "07 00000000000003E8 0000000000000000 0000000000000000 01 01"
			  "0000000000000000 8000000000000000");
	}
	CHECK_INT(ts_add(ks, KEY("rmany"), 1, 1, NULL, TS_DUP_NONE, NULL), -ENOSPC);
	CHECK_INT(ts_get(ks, KEY("rmany"), &(struct ts_sample){0}), 0);
	struct rule_got g = {0};
	CHECK_INT(ts_rules(ks, KEY("rmany"), rule_cb, &g), 0);
	CHECK_INT(g.n, 200);
}

/* Compaction drops chunks past the retention (Kvrocks's filter). */
static void test_gc(void)
{
	struct buf r = BUF_INIT;
	struct ts_options o = {TS_OPT_RETENTION | TS_OPT_CHUNK_SIZE, 1000, 2, 0, NULL, 0};
	CHECK_INT(ts_create(ks, KEY("gc"), &o), 0);
	for (uint64_t t = 1000; t <= 5000; t += 1000)
		add("gc", t, (double)t);
	/* chunks 1000 (1000, 2000), 3000 (3000, 4000), 5000; last_timestamp 5000 */
	CHECK_INT(meta_raw("gc", &r), 0);
	CHECK_INT(get_be64(r.data + r.len - 8), 5000);
	CHECK_INT(chunk_raw("gc", 1000, &r), 0);
	CHECK_INT(ks_compact(ks), 0);
	CHECK_INT(chunk_raw("gc", 1000, &r), -ENOENT); /* 2000 < 5000 - 1000 */
	CHECK_INT(chunk_raw("gc", 3000, &r), 0);       /* 4000 is not < 4000 */
	CHECK_INT(chunk_raw("gc", 5000, &r), 0);
	buf_release(&r);
}

/* TS.MADD across keys: all or nothing, rules in the same batch. */
static void test_madd_keys(void)
{
	char s[256];
	struct ts_sample a1[] = {{1000, 1}, {1500, 2}}, b1[] = {{1000, 7}}, c1[] = {{3000, 1}};
	CHECK_INT(ts_create(ks, KEY("mk_a"), NULL), 0);
	CHECK_INT(ts_create(ks, KEY("mk_b"), NULL), 0);
	CHECK_INT(ts_create(ks, KEY("mk_d"), NULL), 0);
	CHECK_INT(ts_createrule(ks, KEY("mk_a"), KEY("mk_d"), TS_AGG_SUM, 1000, 0, NULL), 0);
	struct ts_madd_in in[3] = {{*KEY("mk_a"), a1, 2}, {*KEY("mk_b"), b1, 1}};
	size_t bk = 99, bs = 99;
	CHECK_INT(ts_madd_keys(ks, in, 2, TS_DUP_NONE, &bk, &bs), 0);
	all_str("mk_a", s, sizeof(s));
	CHECK(strcmp(s, "1000=1 1500=2") == 0);
	all_str("mk_b", s, sizeof(s));
	CHECK(strcmp(s, "1000=7") == 0);
	/* a missing third key: nothing of the call is stored */
	struct ts_sample a2[] = {{2000, 1}};
	in[0].s = a2;
	in[0].n = 1;
	in[1].s = c1;
	in[2] = (struct ts_madd_in){*KEY("mk_none"), c1, 1};
	CHECK_INT(ts_madd_keys(ks, in, 3, TS_DUP_NONE, &bk, &bs), -ENOENT);
	CHECK_INT(bk, 2);
	CHECK_INT(bs, 0);
	/* BLOCK on the second key */
	in[1].s = b1;
	CHECK_INT(ts_madd_keys(ks, in, 2, TS_DUP_NONE, &bk, &bs), -EEXIST);
	CHECK_INT(bk, 1);
	all_str("mk_a", s, sizeof(s));
	CHECK(strcmp(s, "1000=1 1500=2") == 0);
	all_str("mk_d", s, sizeof(s));
	CHECK(strcmp(s, "") == 0);
	/* a key and its rule's destination together: refused */
	in[1] = (struct ts_madd_in){*KEY("mk_d"), c1, 1};
	CHECK_INT(ts_madd_keys(ks, in, 2, TS_DUP_NONE, &bk, &bs), -EINVAL);
	CHECK_INT(bk, 2);
	/* the same key twice: refused */
	in[1] = in[0];
	CHECK_INT(ts_madd_keys(ks, in, 2, TS_DUP_NONE, &bk, &bs), -EINVAL);
	/* ON_DUPLICATE for all; the rule closes bucket 1000 into mk_d */
	in[1] = (struct ts_madd_in){*KEY("mk_b"), b1, 1};
	CHECK_INT(ts_madd_keys(ks, in, 2, TS_DUP_SUM, &bk, &bs), 0);
	all_str("mk_b", s, sizeof(s));
	CHECK(strcmp(s, "1000=14") == 0);
	all_str("mk_d", s, sizeof(s));
	CHECK(strcmp(s, "1000=3") == 0);
	/* a string key */
	CHECK_INT(string_set(ks, KEY("mk_s"), "x", 1, 0), 0);
	in[0].s = c1;
	in[1] = (struct ts_madd_in){*KEY("mk_s"), b1, 1};
	CHECK_INT(ts_madd_keys(ks, in, 2, TS_DUP_NONE, &bk, &bs), -KV_EWRONGTYPE);
	CHECK_INT(bk, 1);
	CHECK_INT(ts_madd_keys(ks, in, 0, TS_DUP_NONE, &bk, &bs), -EINVAL);
}

/* A chunk edit recomputes the rules' buckets; a chunk put (restore) does not. */
static void test_chunk_edit(void)
{
	char s[256];
	CHECK_INT(ts_create(ks, KEY("ce"), NULL), 0);
	CHECK_INT(ts_create(ks, KEY("ce_s"), NULL), 0);
	CHECK_INT(ts_createrule(ks, KEY("ce"), KEY("ce_s"), TS_AGG_SUM, 1000, 0, NULL), 0);
	add("ce", 1000, 1);
	add("ce", 1500, 2);
	add("ce", 2000, 4);
	all_str("ce_s", s, sizeof(s));
	CHECK(strcmp(s, "1000=3") == 0);
	struct ts_sample a[] = {{1000, 1}, {1500, 5}, {2000, 4}};
	CHECK_INT(ts_chunk_put(ks, KEY("ce"), 1000, a, 3), 0); /* restore: no rule */
	all_str("ce_s", s, sizeof(s));
	CHECK(strcmp(s, "1000=3") == 0);
	struct ts_sample b[] = {{1000, 1}, {1500, 7}, {2000, 4}, {3000, 2}};
	CHECK_INT(ts_chunk_edit(ks, KEY("ce"), 1000, b, 4), 0);
	all_str("ce_s", s, sizeof(s));
	CHECK(strcmp(s, "1000=8 2000=4") == 0); /* 3000 opens, closing 2000 */
	struct ts_sample bad[] = {{1200, 1}};
	CHECK_INT(ts_chunk_edit(ks, KEY("ce"), 1000, bad, 1), -EINVAL);
	CHECK_INT(ts_chunk_edit(ks, KEY("ce"), 1000, NULL, 0), 0); /* the chunk goes */
	all_str("ce", s, sizeof(s));
	CHECK(strcmp(s, "") == 0);
	all_str("ce_s", s, sizeof(s));
	CHECK(strcmp(s, "") == 0);
	/* TS.DEL emptying two closed buckets held by one destination chunk:
	 * both go (the second delete finds the chunk the first rewrote). */
	add("ce", 1000, 1);
	add("ce", 2000, 1);
	add("ce", 3000, 1);
	add("ce", 4000, 1);
	all_str("ce_s", s, sizeof(s));
	CHECK(strcmp(s, "1000=1 2000=1 3000=1") == 0);
	uint64_t del = 0;
	CHECK_INT(ts_del(ks, KEY("ce"), 1000, 2999, &del), 0);
	CHECK_INT(del, 2);
	all_str("ce_s", s, sizeof(s));
	CHECK(strcmp(s, "3000=1") == 0);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_timeseries");
	test_bytes();
	test_policies();
	test_aggregations();
	test_retention_del_incr();
	test_rules();
	test_filters();
	test_mrange_groupby();
	test_wrongtype_missing_bad();
	test_chunks();
	test_corrupt_rule();
	test_stored_bounds();
	test_gc();
	test_madd_keys();
	test_chunk_edit();
	fixture_done(ks);
	return check_done("test_timeseries");
}
