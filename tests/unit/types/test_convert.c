/*
 * Unit tests for t_convert on a temporary database: a hash becomes a
 * list (in position order), a set, a zset and a sortedint in one batch,
 * keeping its expiry, with the target's own verbs reading the result and
 * the metadata bytes checked by hand; and the refusals (a field that
 * does not fit, a gap or a repeat in positions, repeated ids, wrong type,
 * missing key, bad input) that change nothing.
 */
#include "check.h"
#include "fixture.h"
#include "keyspace/ks_attr.h"
#include "types/t_convert.h"
#include "types/t_hash.h"
#include "types/t_list.h"
#include "types/t_set.h"
#include "types/t_sortedint.h"
#include "types/t_string.h"
#include "types/t_timeseries.h"
#include "types/t_zset.h"

#include <stdlib.h>

#define BADKEY KEY("", "h")

static struct keyspace *ks;
static struct buf v = BUF_INIT;
static struct buf out = BUF_INIT;

/* The metadata record's flags byte and size. */
static void check_meta(const char *key, unsigned flags, uint64_t size)
{
	CHECK_INT(fixture_meta_raw(ks, KEY(key), &v), 0);
	CHECK(v.len >= 25);
	if (v.len >= 25) {
		CHECK_INT((unsigned char)v.data[0], flags);
		CHECK_INT(get_be64(v.data + 17), size);
	}
}

static void hset(const char *key, const char *f, const char *val)
{
	CHECK_INT(hash_set(ks, KEY(DEFNS, key), f, strlen(f), val, strlen(val), NULL), 0);
}

/* Field names are decimal positions/ids; values are scores for zsets. */
static int num_cb(void *arg, const char *f, size_t fn, const char *val, size_t vn,
		  struct convert_item *it)
{
	(void)arg;
	(void)val;
	(void)vn;
	return parse_u64(f, fn, &it->num) ? -EINVAL : 0;
}

static int score_cb(void *arg, const char *f, size_t fn, const char *val, size_t vn,
		    struct convert_item *it)
{
	(void)arg;
	(void)f;
	(void)fn;
	return parse_double(val, vn, &it->score);
}

static int empty_cb(void *arg, const char *f, size_t fn, const char *val, size_t vn,
		    struct convert_item *it)
{
	int *calls = arg;
	(void)f;
	(void)fn;
	(void)val;
	(void)it;
	(*calls)++;
	return vn ? -EINVAL : 0;
}

static int join_list(void *arg, uint64_t pos, const char *e, size_t en)
{
	(void)pos;
	struct buf *o = arg;
	if (o->len)
		buf_add(o, ",", 1);
	return buf_add(o, e, en);
}

static int join_zset(void *arg, const char *m, size_t mn, double score)
{
	struct buf *o = arg;
	if (o->len)
		buf_add(o, ",", 1);
	buf_add(o, m, mn);
	return buf_printf(o, "=%g", score);
}

static void test_list(void)
{
	struct ks_info info;
	/* Field order (bytewise: 0, 1, 10, 2, ...) is not position order. */
	const char *pos[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"};
	for (int i = 0; i < 12; i++) {
		char val[16];
		snprintf(val, sizeof(val), "v%d", i);
		hset("l", pos[i], val);
	}
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "l"), now_ms() + 100000), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "l"), KV_TYPE_LIST, num_cb, NULL), 0);
	check_meta("l", 0x83, 12);
	/* head and tail from Kvrocks's initial index */
	CHECK(v.len == 41 && get_be64(v.data + 25) == LIST_INITIAL_INDEX &&
	      get_be64(v.data + 33) == LIST_INITIAL_INDEX + 12);
	buf_reset(&out);
	CHECK_INT(list_range(ks, KEY(DEFNS, "l"), 0, -1, join_list, &out), 0);
	CHECK(strcmp(out.data, "v0,v1,v2,v3,v4,v5,v6,v7,v8,v9,v10,v11") == 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "l"), &info), 0);
	CHECK(info.type == KV_TYPE_LIST && info.expire_ms > now_ms());
	/* Leading zeros are the callback's business: 00 and 1 are 0 and 1. */
	hset("l2", "00", "a");
	hset("l2", "1", "b");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "l2"), KV_TYPE_LIST, num_cb, NULL), 0);
	buf_reset(&out);
	CHECK_INT(list_range(ks, KEY(DEFNS, "l2"), 0, -1, join_list, &out), 0);
	CHECK(strcmp(out.data, "a,b") == 0);
	/* A gap, a repeat, a field that is no position: nothing changes. */
	hset("g", "0", "a");
	hset("g", "2", "c");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "g"), KV_TYPE_LIST, num_cb, NULL), -EINVAL);
	hset("g", "1", "b");
	hset("g", "01", "b2");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "g"), KV_TYPE_LIST, num_cb, NULL), -EINVAL);
	hset("x", "0", "a");
	hset("x", "name", "b");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "x"), KV_TYPE_LIST, num_cb, NULL), -EINVAL);
	check_meta("g", 0x82, 4);
	check_meta("x", 0x82, 2);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "g"), "01", 2, &v), 0);
}

static void test_set_zset_sortedint(void)
{
	double sc = 0;
	int calls = 0;
	hset("s", "b", "");
	hset("s", "a", "");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "s"), KV_TYPE_SET, empty_cb, &calls), 0);
	CHECK_INT(calls, 2);
	check_meta("s", 0x84, 2);
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "s"), "a", 1), 1);
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "s"), "b", 1), 1);
	hset("s2", "a", "data");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "s2"), KV_TYPE_SET, empty_cb, &calls), -EINVAL);
	check_meta("s2", 0x82, 1);

	hset("z", "m1", "2.5\n");
	hset("z", "m2", "-inf");
	hset("z", "m3", "1e3");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "z"), KV_TYPE_ZSET, score_cb, NULL), 0);
	check_meta("z", 0x85, 3);
	buf_reset(&out);
	CHECK_INT(zset_range_by_rank(ks, KEY(DEFNS, "z"), 0, -1, false, join_zset, &out), 0);
	CHECK(strcmp(out.data, "m2=-inf,m1=2.5,m3=1000") == 0);
	CHECK_INT(zset_score(ks, KEY(DEFNS, "z"), "m1", 2, &sc), 0);
	CHECK(sc == 2.5);
	hset("z2", "m1", "1");
	hset("z2", "m2", "one");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "z2"), KV_TYPE_ZSET, score_cb, NULL), -EINVAL);
	check_meta("z2", 0x82, 2);

	hset("i", "10", "");
	hset("i", "9", "");
	hset("i", "18446744073709551615", "");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "i"), KV_TYPE_SORTEDINT, num_cb, NULL), 0);
	check_meta("i", 0x87, 3);
	CHECK_INT(sortedint_exists(ks, KEY(DEFNS, "i"), 9), 1);
	CHECK_INT(sortedint_exists(ks, KEY(DEFNS, "i"), 10), 1);
	CHECK_INT(sortedint_exists(ks, KEY(DEFNS, "i"), UINT64_MAX), 1);
	hset("i2", "7", "");
	hset("i2", "007", "");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "i2"), KV_TYPE_SORTEDINT, num_cb, NULL), -EINVAL);
	check_meta("i2", 0x82, 2);
}

/* The key's attribute records follow it to its new version. */
static void test_attrs_follow(void)
{
	struct ks_attr_set s = {.mask = KS_ATTR_SET_MODE, .mode = 0640};
	struct ks_info before, after;
	struct ks_attr a;
	hset("am", "0", "x");
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "am"), NULL, 0, &s), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "am"), &before), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "am"), KV_TYPE_LIST, num_cb, NULL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "am"), &after), 0);
	CHECK(after.type == KV_TYPE_LIST && after.version != before.version);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "am"), after.version, NULL, 0, &a), 0);
	CHECK(a.has & KS_ATTR_HAS_MODE);
	CHECK_INT(a.mode, 0640);
}

/* Field names are chunk ids; values "TS=V,TS=V" its samples (fs parses CSV). */
static int chunk_cb(void *arg, const char *f, size_t fn, const char *val, size_t vn,
		    struct convert_item *it)
{
	(void)arg;
	struct ts_sample s[8];
	size_t n = 0;
	char text[128];
	if (parse_u64(f, fn, &it->num) || vn >= sizeof(text))
		return -EINVAL;
	memcpy(text, val, vn);
	text[vn] = '\0';
	for (char *save = NULL, *tok = strtok_r(text, ",", &save); tok && n < 8;
	     tok = strtok_r(NULL, ",", &save)) {
		unsigned long long ts;
		if (sscanf(tok, "%llu=%lf", &ts, &s[n].v) != 2)
			return -EINVAL;
		s[n++].ts = ts;
	}
	return buf_set(&it->value, s, n * sizeof(*s));
}

/* A hash of chunks becomes the series ts_create and ts_chunk_put would
 * store: the same metadata after the version (chunk count, defaults,
 * last timestamp) and chunk records. */
static void test_timeseries(void)
{
	struct buf a = BUF_INIT, b = BUF_INIT;
	hset("ts", "2000", "2000=2,2500=2.5");
	hset("ts", "1000", "1000=1,1500=1.5");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "ts"), KV_TYPE_TIMESERIES, chunk_cb, NULL), 0);
	check_meta("ts", 0x8D, 2);

	struct ts_sample c1[] = {{1000, 1}, {1500, 1.5}}, c2[] = {{2000, 2}, {2500, 2.5}};
	CHECK_INT(ts_create(ks, KEY(DEFNS, "tsref"), NULL), 0);
	CHECK_INT(ts_chunk_put(ks, KEY(DEFNS, "tsref"), 1000, c1, 2), 0);
	CHECK_INT(ts_chunk_put(ks, KEY(DEFNS, "tsref"), 2000, c2, 2), 0);
	CHECK_INT(ts_set_last_timestamp(ks, KEY(DEFNS, "tsref"), 2500), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("ts"), &a), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("tsref"), &b), 0);
	CHECK(a.len > 25 && a.len == b.len);
	if (a.len > 25 && a.len == b.len)
		CHECK_MEM(a.data + 25, a.len - 25, b.data + 25, b.len - 25);
	for (uint64_t id = 1000; id <= 2000; id += 1000) {
		unsigned char sub[9] = {0};
		sub[0] = 0; /* the chunk sub-key type */
		for (int i = 0; i < 8; i++)
			sub[1 + i] = (unsigned char)(id >> (8 * (7 - i)));
		CHECK_INT(fixture_sub_raw(ks, STORE_CF_DEFAULT, KEY("ts"),
					  fixture_version(ks, KEY("ts")), sub, 9, &a),
			  0);
		CHECK_INT(fixture_sub_raw(ks, STORE_CF_DEFAULT, KEY("tsref"),
					  fixture_version(ks, KEY("tsref")), sub, 9, &b),
			  0);
		CHECK_MEM(a.data, a.len, b.data, b.len);
	}

	/* Overlapping chunks, a chunk not named by its first sample, an empty
	 * one: the hash stays as it was. */
	hset("tso", "1000", "1000=1,3000=3");
	hset("tso", "2000", "2000=2");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "tso"), KV_TYPE_TIMESERIES, chunk_cb, NULL), -EINVAL);
	check_meta("tso", 0x82, 2);
	hset("tsf", "1000", "1001=1");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "tsf"), KV_TYPE_TIMESERIES, chunk_cb, NULL), -EINVAL);
	hset("tse", "1000", "");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "tse"), KV_TYPE_TIMESERIES, chunk_cb, NULL), -EINVAL);
	check_meta("tse", 0x82, 1);
	buf_release(&a);
	buf_release(&b);
}

static void test_refusals(void)
{
	struct ks_info info;
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "none"), KV_TYPE_SET, num_cb, NULL), -ENOENT);
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "eh"), KV_TYPE_HASH), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "eh"), KV_TYPE_SET, num_cb, NULL), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "eh"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_HASH);
	CHECK_INT(string_set(ks, KEY(DEFNS, "str"), "x", 1, 0), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "str"), KV_TYPE_SET, num_cb, NULL), -KV_EWRONGTYPE);
	hset("h", "f", "v");
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "h"), KV_TYPE_BITMAP, num_cb, NULL), -EOPNOTSUPP);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "h"), KV_TYPE_STRING, num_cb, NULL), -EOPNOTSUPP);
	CHECK_INT(convert_hash(ks, BADKEY, KV_TYPE_SET, num_cb, NULL), -EINVAL);
	check_meta("h", 0x82, 1);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_convert");
	test_list();
	test_set_zset_sortedint();
	test_attrs_follow();
	test_timeseries();
	test_refusals();
	fixture_done(ks);
	buf_release(&v);
	buf_release(&out);
	return check_done("test_convert");
}
