/*
 * Unit tests for t_zset on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case; ZADD flags; ranks
 * and ranges in both directions; the stored bytes against
 * kvrocks-encoding.md 6.5 and 12 (ZADD z 1.5 m in both column families,
 * sortable scores of +-0.0, +-inf, +-1, 2.5); and a model-based run of
 * random operations checking after each one that size equals the number
 * of member records and of score-index records, that the two agree, and
 * that ranks and ranges match an in-memory model; ZPOPMIN/ZPOPMAX with
 * both column families' records checked, and past corrupt records.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_string.h"
#include "types/t_zset.h"

#include <math.h>
#include <stdlib.h>

#define BADKEY KEY("", "z")

static struct keyspace *ks;
static struct buf v = BUF_INIT;
static struct buf out = BUF_INIT;

static void check_meta(const char *key, uint64_t size)
{
	fixture_check_meta(ks, KEY(key), 0x85, size, "");
}

/* Both records of member m hold the score whose sortable bytes are hex
 * (NULL: neither record exists under that score). */
static void check_member_raw(const char *key, const char *m, const char *hex)
{
	unsigned char k[256], sub[128], sc[8];
	uint64_t ver = fixture_version(ks, KEY(key));
	size_t kn = fixture_sub_key(key, ver, m, strlen(m), k);
	int rc = store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v);
	if (!hex) {
		CHECK_INT(rc, -ENOENT);
		return;
	}
	unhex(hex, sc);
	CHECK_INT(rc, 0);
	CHECK_MEM(v.data, v.len, sc, 8);
	memcpy(sub, sc, 8);
	memcpy(sub + 8, m, strlen(m));
	kn = fixture_sub_key(key, ver, sub, 8 + strlen(m), k);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_ZSET_SCORE, k, kn, &v), 0);
	CHECK_INT(v.len, 0);
}

static int join_cb(void *arg, const char *m, size_t mn, double score)
{
	struct buf *o = arg;
	if (o->len)
		buf_add(o, ",", 1);
	buf_add(o, m, mn);
	return buf_printf(o, "=%g", score);
}

static const char *by_rank(const char *key, int64_t a, int64_t b, bool rev)
{
	buf_reset(&out);
	buf_add(&out, "", 0);
	int rc = zset_range_by_rank(ks, KEY(DEFNS, key), a, b, rev, join_cb, &out);
	return rc ? "(error)" : out.data;
}

static const char *by_score(const char *key, double min, bool minex, double max, bool maxex,
			    bool rev, uint64_t off, int64_t count)
{
	struct zset_score_range r = {min, max, minex, maxex};
	buf_reset(&out);
	buf_add(&out, "", 0);
	int rc = zset_range_by_score(ks, KEY(DEFNS, key), &r, rev, off, count, join_cb, &out);
	return rc ? "(error)" : out.data;
}

static void test_add_bytes(void)
{
	struct ks_info info;
	/* kvrocks-encoding.md 12: ZADD z 1.5 m. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 1.5, 0), 1);
	uint64_t ver = fixture_version(ks, KEY("z"));
	CHECK((ver >> 11) <= now_us() && (ver >> 11) > now_us() - 60000000);
	check_meta("z", 1);
	unsigned char k[128], want[32];
	size_t kn = unhex(NS_HEX " 00 00 00 01 7A", k);
	put_be64(k + kn, ver);
	kn += 8;
	k[kn++] = 0x6D;
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), 0);
	size_t wn = unhex("BF F8 00 00 00 00 00 00", want);
	CHECK_MEM(v.data, v.len, want, wn);
	kn = unhex(NS_HEX " 00 00 00 01 7A", k);
	put_be64(k + kn, ver);
	kn += 8;
	kn += unhex("BF F8 00 00 00 00 00 00 6D", k + kn);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_ZSET_SCORE, k, kn, &v), 0);
	CHECK_INT(v.len, 0);

	/* Sortable scores of section 12. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "sc"), "one", 3, 1.0, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "sc"), "mone", 4, -1.0, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "sc"), "zero", 4, 0.0, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "sc"), "nzero", 5, -0.0, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "sc"), "inf", 3, INFINITY, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "sc"), "ninf", 4, -INFINITY, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "sc"), "twoh", 4, 2.5, 0), 1);
	check_member_raw("sc", "one", "BF F0 00 00 00 00 00 00");
	check_member_raw("sc", "mone", "40 0F FF FF FF FF FF FF");
	check_member_raw("sc", "zero", "80 00 00 00 00 00 00 00");
	check_member_raw("sc", "nzero", "7F FF FF FF FF FF FF FF");
	check_member_raw("sc", "inf", "FF F0 00 00 00 00 00 00");
	check_member_raw("sc", "ninf", "00 0F FF FF FF FF FF FF");
	check_member_raw("sc", "twoh", "C0 04 00 00 00 00 00 00");
	check_meta("sc", 7);
	/* -0.0 and +0.0 are equal: flipping the sign is no change. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "sc"), "nzero", 5, 0.0, ZSET_ADD_CH), 0);
	check_member_raw("sc", "nzero", "7F FF FF FF FF FF FF FF");
	CHECK_INT(zset_add(ks, KEY(DEFNS, "sc"), "zero", 4, -0.0, ZSET_ADD_CH), 0);
	check_member_raw("sc", "zero", "80 00 00 00 00 00 00 00");
	double s = 1;
	CHECK_INT(zset_score(ks, KEY(DEFNS, "sc"), "nzero", 5, &s), 0);
	CHECK(s == 0 && signbit(s));
	CHECK(strcmp(by_score("sc", 0, false, 0, false, false, 0, -1), "nzero=-0,zero=0") == 0);
	CHECK(strcmp(by_score("sc", -0.0, false, -0.0, false, true, 0, -1), "zero=0,nzero=-0") ==
	      0);
	CHECK(strcmp(by_score("sc", -INFINITY, false, 0, true, false, 0, -1),
		     "ninf=-inf,mone=-1") == 0);
	CHECK(strcmp(by_score("sc", 0, true, INFINITY, false, false, 0, -1),
		     "one=1,twoh=2.5,inf=inf") == 0);

	/* A score change moves the score-index record in the same batch. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 2.5, 0), 0);
	check_member_raw("z", "m", "C0 04 00 00 00 00 00 00");
	kn = unhex(NS_HEX " 00 00 00 01 7A", k);
	put_be64(k + kn, ver);
	kn += 8;
	kn += unhex("BF F8 00 00 00 00 00 00 6D", k + kn);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_ZSET_SCORE, k, kn, &v), -ENOENT);
	check_meta("z", 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 1.5, ZSET_ADD_CH), 1);
	check_member_raw("z", "m", "BF F8 00 00 00 00 00 00");

	/* Flags. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 9, ZSET_ADD_NX), 0);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "n", 1, 9, ZSET_ADD_XX), 0);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 1, ZSET_ADD_GT | ZSET_ADD_CH), 0);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 2, ZSET_ADD_GT | ZSET_ADD_CH), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 3, ZSET_ADD_LT | ZSET_ADD_CH), 0);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 1.5, ZSET_ADD_LT), 0);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "n", 1, 1, ZSET_ADD_GT), 1); /* GT still adds */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "o", 1, 7, ZSET_ADD_NX), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "o", 1, 8, ZSET_ADD_XX | ZSET_ADD_CH), 1);
	CHECK_INT(zset_score(ks, KEY(DEFNS, "z"), "m", 1, &s), 0);
	CHECK(s == 1.5);
	check_meta("z", 3);
	CHECK(strcmp(by_rank("z", 0, -1, false), "n=1,m=1.5,o=8") == 0);
	/* XX on a missing key creates nothing. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "zx"), "a", 1, 1, ZSET_ADD_XX), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "zx"), &info), -ENOENT);

	/* Multi: duplicates take the last score. */
	struct zset_member ms[4] = {{"a", 1, 1}, {"b", 1, 2}, {"a", 1, 3}, {"c", 1, -1}};
	uint64_t count = 0;
	CHECK_INT(zset_add_multi(ks, KEY(DEFNS, "zm"), ms, 4, 0, &count), 0);
	CHECK_INT(count, 3);
	check_meta("zm", 3);
	CHECK(strcmp(by_rank("zm", 0, -1, false), "c=-1,b=2,a=3") == 0);
	check_member_raw("zm", "a", "C0 08 00 00 00 00 00 00");

	/* Bad input, wrong type: nothing changes. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "str", 3, 0), 0);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "s"), "m", 1, 1, 0), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, NAN, 0), -EINVAL);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 5, ZSET_ADD_NX | ZSET_ADD_XX), -EINVAL);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 5, ZSET_ADD_NX | ZSET_ADD_GT), -EINVAL);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 5, ZSET_ADD_LT | ZSET_ADD_GT), -EINVAL);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", 1, 5, 0x100), -EINVAL);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "z"), "m", (size_t)ZSET_MEMBER_MAX + 1, 5, 0), -EFBIG);
	CHECK_INT(zset_add(ks, BADKEY, "m", 1, 5, 0), -EINVAL);
	CHECK_INT(zset_add_multi(ks, KEY(DEFNS, "z"), ms, 0, 0, &count), -EINVAL);
	struct zset_member bad[2] = {{"p", 1, 1}, {"q", 1, NAN}};
	CHECK_INT(zset_add_multi(ks, KEY(DEFNS, "z"), bad, 2, 0, &count), -EINVAL);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "zn"), "m", 1, NAN, 0), -EINVAL);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "zn"), &info), -ENOENT);
	check_meta("z", 3);
	CHECK(strcmp(by_rank("z", 0, -1, false), "n=1,m=1.5,o=8") == 0);
	/* A remembered empty zset loses its record. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "ez"), KV_TYPE_ZSET), 0);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "ez"), "a", 1, 1, 0), 1);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ez"), &info), 0);
	CHECK(!info.empty && info.size == 1);
}

static void test_rem_score_card(void)
{
	struct ks_info info;
	uint64_t n = 0;
	double s = 0;
	CHECK_INT(zset_add(ks, KEY(DEFNS, "r"), "a", 1, 1, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "r"), "b", 1, 2, 0), 1);
	CHECK_INT(zset_rem(ks, KEY(DEFNS, "r"), "a", 1, 0), 0);
	check_meta("r", 1);
	check_member_raw("r", "a", NULL);
	unsigned char k[128], sub[16];
	put_be64(sub, enc_double_to_sortable(1));
	sub[8] = 'a';
	size_t kn = fixture_sub_key("r", fixture_version(ks, KEY("r")), sub, 9, k);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_ZSET_SCORE, k, kn, &v), -ENOENT);
	CHECK_INT(zset_rem(ks, KEY(DEFNS, "r"), "a", 1, 0), -ENOENT);
	CHECK_INT(zset_rem(ks, KEY(DEFNS, "nope"), "a", 1, 0), -ENOENT);
	CHECK_INT(zset_rem(ks, KEY(DEFNS, "s"), "a", 1, 0), -KV_EWRONGTYPE);
	CHECK_INT(zset_rem(ks, BADKEY, "a", 1, 0), -EINVAL);
	check_meta("r", 1);
	CHECK_INT(zset_rem(ks, KEY(DEFNS, "r"), "b", 1, 0), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("r"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "r"), &info), -ENOENT);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "r"), "c", 1, 1, 0), 1);
	CHECK_INT(zset_rem(ks, KEY(DEFNS, "r"), "c", 1, ZSET_KEEP_EMPTY), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "r"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_ZSET);

	CHECK_INT(zset_score(ks, KEY(DEFNS, "z"), "o", 1, &s), 0);
	CHECK(s == 8);
	CHECK_INT(zset_score(ks, KEY(DEFNS, "z"), "q", 1, &s), -ENOENT);
	CHECK_INT(zset_score(ks, KEY(DEFNS, "nope"), "q", 1, &s), -ENOENT);
	CHECK_INT(zset_score(ks, KEY(DEFNS, "s"), "q", 1, &s), -KV_EWRONGTYPE);
	CHECK_INT(zset_score(ks, BADKEY, "q", 1, &s), -EINVAL);
	CHECK_INT(zset_card(ks, KEY(DEFNS, "z"), &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(zset_card(ks, KEY(DEFNS, "nope"), &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(zset_card(ks, KEY(DEFNS, "s"), &n), -KV_EWRONGTYPE);
	CHECK_INT(zset_card(ks, BADKEY, &n), -EINVAL);
}

static void test_rank_ranges(void)
{
	uint64_t r = 99;
	/* z: n=1, m=1.5, o=8 */
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "z"), "n", 1, false, &r), 0);
	CHECK_INT(r, 0);
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "z"), "o", 1, false, &r), 0);
	CHECK_INT(r, 2);
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "z"), "o", 1, true, &r), 0);
	CHECK_INT(r, 0);
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "z"), "m", 1, true, &r), 0);
	CHECK_INT(r, 1);
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "z"), "q", 1, false, &r), -ENOENT);
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "nope"), "q", 1, false, &r), -ENOENT);
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "s"), "q", 1, false, &r), -KV_EWRONGTYPE);
	CHECK_INT(zset_rank(ks, BADKEY, "q", 1, false, &r), -EINVAL);

	CHECK(strcmp(by_rank("z", 0, 0, false), "n=1") == 0);
	CHECK(strcmp(by_rank("z", -2, -1, false), "m=1.5,o=8") == 0);
	CHECK(strcmp(by_rank("z", 0, 1, true), "o=8,m=1.5") == 0);
	CHECK(strcmp(by_rank("z", 1, 100, true), "m=1.5,n=1") == 0);
	CHECK(strcmp(by_rank("z", INT64_MIN, INT64_MAX, false), "n=1,m=1.5,o=8") == 0);
	CHECK(strcmp(by_rank("z", 2, 1, false), "") == 0);
	CHECK(strcmp(by_rank("z", 3, 5, false), "") == 0);
	CHECK(strcmp(by_rank("nope", 0, -1, false), "") == 0);
	CHECK(strcmp(by_rank("s", 0, -1, false), "(error)") == 0);
	CHECK_INT(zset_range_by_rank(ks, KEY(DEFNS, "s"), 0, -1, false, join_cb, &out),
		  -KV_EWRONGTYPE);
	CHECK_INT(zset_range_by_rank(ks, BADKEY, 0, -1, false, join_cb, &out), -EINVAL);

	CHECK(strcmp(by_score("z", 1, false, 8, false, false, 0, -1), "n=1,m=1.5,o=8") == 0);
	CHECK(strcmp(by_score("z", 1, true, 8, true, false, 0, -1), "m=1.5") == 0);
	CHECK(strcmp(by_score("z", 1, false, 8, false, true, 0, -1), "o=8,m=1.5,n=1") == 0);
	CHECK(strcmp(by_score("z", 1, true, 8, false, true, 0, -1), "o=8,m=1.5") == 0);
	CHECK(strcmp(by_score("z", -INFINITY, false, INFINITY, false, false, 1, 1), "m=1.5") == 0);
	CHECK(strcmp(by_score("z", -INFINITY, false, INFINITY, false, true, 1, 5), "m=1.5,n=1") ==
	      0);
	CHECK(strcmp(by_score("z", 1.5, false, 1.5, false, false, 0, -1), "m=1.5") == 0);
	CHECK(strcmp(by_score("z", 1.5, true, 1.5, false, false, 0, -1), "") == 0);
	CHECK(strcmp(by_score("z", 9, false, 1, false, false, 0, -1), "") == 0);
	CHECK(strcmp(by_score("z", 1, false, 9, false, false, 0, 0), "") == 0);
	CHECK(strcmp(by_score("nope", 1, false, 9, false, false, 0, -1), "") == 0);
	CHECK(strcmp(by_score("z", NAN, false, 9, false, false, 0, -1), "(error)") == 0);
	struct zset_score_range rr = {NAN, 1, false, false};
	CHECK_INT(zset_range_by_score(ks, KEY(DEFNS, "z"), &rr, false, 0, -1, join_cb, &out),
		  -EINVAL);
	rr.min = 0;
	CHECK_INT(zset_range_by_score(ks, KEY(DEFNS, "s"), &rr, false, 0, -1, join_cb, &out),
		  -KV_EWRONGTYPE);
	CHECK_INT(zset_range_by_score(ks, BADKEY, &rr, false, 0, -1, join_cb, &out), -EINVAL);
}

static void test_iters(void)
{
	int err = 1;
	const char *m;
	size_t mn;
	double s;
	char got[256];

	/* Score order with a cursor; neighbours "zz" do not leak in. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "zz"), "x", 1, 0, 0), 1);
	struct zset_cursor cur = {1.5, "m", 1};
	struct zset_score_iter *it = zset_score_iter_new(ks, KEY(DEFNS, "z"), false, &cur, &err);
	CHECK_INT(err, 0);
	CHECK(it && zset_score_iter_next(it, &m, &mn, &s) == 1);
	CHECK(it && mn == 1 && m[0] == 'o' && s == 8);
	CHECK(it && zset_score_iter_next(it, &m, &mn, &s) == 0);
	zset_score_iter_free(it);
	it = zset_score_iter_new(ks, KEY(DEFNS, "z"), true, &cur, &err);
	CHECK(it && zset_score_iter_next(it, &m, &mn, &s) == 1 && m[0] == 'n');
	CHECK(it && zset_score_iter_next(it, &m, &mn, &s) == 0);
	zset_score_iter_free(it);
	it = zset_score_iter_new(ks, KEY(DEFNS, "z"), true, NULL, &err);
	got[0] = '\0';
	while (it && zset_score_iter_next(it, &m, &mn, &s) == 1)
		strncat(got, m, mn);
	CHECK(strcmp(got, "omn") == 0);
	zset_score_iter_free(it);
	it = zset_score_iter_new(ks, KEY(DEFNS, "nope"), false, NULL, &err);
	CHECK(it && err == 0 && zset_score_iter_next(it, &m, &mn, &s) == 0);
	zset_score_iter_free(it);
	CHECK(!zset_score_iter_new(ks, KEY(DEFNS, "s"), false, NULL, &err));
	CHECK_INT(err, -KV_EWRONGTYPE);
	CHECK(!zset_score_iter_new(ks, BADKEY, false, NULL, &err));
	CHECK_INT(err, -EINVAL);
	cur.score = NAN;
	CHECK(!zset_score_iter_new(ks, KEY(DEFNS, "z"), false, &cur, &err));
	CHECK_INT(err, -EINVAL);

	/* Member order. */
	struct zset_member_iter *mi = zset_member_iter_new(ks, KEY(DEFNS, "z"), NULL, 0, &err);
	got[0] = '\0';
	while (mi && zset_member_iter_next(mi, &m, &mn, &s) == 1) {
		strncat(got, m, mn);
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%g", s);
	}
	CHECK(strcmp(got, "m1.5n1o8") == 0);
	CHECK(mi && zset_member_iter_next(mi, &m, &mn, &s) == 0);
	zset_member_iter_free(mi);
	mi = zset_member_iter_new(ks, KEY(DEFNS, "z"), "m", 1, &err);
	CHECK(mi && zset_member_iter_next(mi, &m, &mn, &s) == 1 && m[0] == 'n' && s == 1);
	zset_member_iter_free(mi);
	mi = zset_member_iter_new(ks, KEY(DEFNS, "nope"), NULL, 0, &err);
	CHECK(mi && err == 0 && zset_member_iter_next(mi, &m, &mn, &s) == 0);
	zset_member_iter_free(mi);
	CHECK(!zset_member_iter_new(ks, KEY(DEFNS, "s"), NULL, 0, &err));
	CHECK_INT(err, -KV_EWRONGTYPE);
	CHECK(!zset_member_iter_new(ks, BADKEY, NULL, 0, &err));
	CHECK_INT(err, -EINVAL);
}

static void test_v0(void)
{
	unsigned char k[128], val[64], want[64], sub[16];
	size_t kn = unhex(NS_HEX " 76", k);
	size_t vn = unhex("05 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 01", val);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_METADATA, k, kn, val, vn);
	put_be64(sub, enc_double_to_sortable(3));
	size_t skn = fixture_sub_key("v", 42, "a", 1, k + 64);
	store_batch_put(b, STORE_CF_DEFAULT, k + 64, skn, sub, 8);
	sub[8] = 'a';
	skn = fixture_sub_key("v", 42, sub, 9, k + 64);
	store_batch_put(b, STORE_CF_ZSET_SCORE, k + 64, skn, "", 0);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "v"), "b", 1, 1, 0), 1);
	CHECK_INT(fixture_meta_raw(ks, KEY("v"), &v), 0);
	size_t wn = unhex("05 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 02", want);
	CHECK_MEM(v.data, v.len, want, wn);
	CHECK(strcmp(by_rank("v", 0, -1, false), "b=1,a=3") == 0);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "v"), "a", 1, 0.5, 0), 0);
	CHECK(strcmp(by_rank("v", 0, -1, false), "a=0.5,b=1") == 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("v"), &v), 0);
	CHECK_MEM(v.data, v.len, want, wn);
}

/* ---- Model-based random test ------------------------------------------ */

#define NMEM 24
static const double scores[] = {-INFINITY, -2, -1.5, -0.0, 0.0, 0.25, 1, 3, INFINITY};
#define NSC (sizeof(scores) / sizeof(scores[0]))

struct zm {
	bool in[NMEM];
	double sc[NMEM];
};

static uint64_t rng_state = 0xda3e39cb94b95bdbull;

static void mname(int i, char *s)
{
	snprintf(s, 8, "m%02d", i % 100);
}

/* Members of the model in storage order (sortable score, then name). */
static const struct zm *sort_model;
static int model_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	uint64_t u = enc_double_to_sortable(sort_model->sc[x]);
	uint64_t w = enc_double_to_sortable(sort_model->sc[y]);
	if (u != w)
		return u < w ? -1 : 1;
	return x - y;
}

static size_t model_sorted(const struct zm *z, int *order)
{
	size_t n = 0;
	for (int i = 0; i < NMEM; i++)
		if (z->in[i])
			order[n++] = i;
	sort_model = z;
	qsort(order, n, sizeof(*order), model_cmp);
	return n;
}

/* size, member records and score-index records agree with each other and
 * with the model, bit for bit. */
static int check_exact(const struct zm *z)
{
	struct buf raw = BUF_INIT, prefix = BUF_INIT, upper = BUF_INIT;
	int order[NMEM], bad = 0;
	size_t n = model_sorted(z, order), count;
	char name[8];

	if (fixture_meta_raw(ks, KEY("model"), &raw) != 0) {
		buf_release(&raw);
		return n != 0;
	}
	uint64_t ver = get_be64(raw.data + 9), size = get_be64(raw.data + 17);
	bad |= size != n;
	ks_sub_key(ks, KEY(DEFNS, "model"), ver, NULL, 0, &prefix);
	buf_set(&upper, prefix.data, prefix.len);
	enc_prefix_successor(&upper);
	/* default CF: member -> score, in member order. */
	struct store_iter *it = store_iter_new(ks_store(ks), STORE_CF_DEFAULT, prefix.data,
					       prefix.len, upper.data, upper.len);
	int next = 0;
	count = 0;
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it), count++) {
		size_t kn, vn;
		const char *k = store_iter_key(it, &kn);
		const char *val = store_iter_value(it, &vn);
		while (next < NMEM && !z->in[next])
			next++;
		mname(next, name);
		if (next >= NMEM || kn != prefix.len + 3 || memcmp(k + prefix.len, name, 3) ||
		    vn != 8 || get_be64(val) != enc_double_to_sortable(z->sc[next]))
			bad = 1;
		next++;
	}
	bad |= count != n;
	store_iter_free(it);
	/* zset_score CF: score | member, in the model's storage order. */
	it = store_iter_new(ks_store(ks), STORE_CF_ZSET_SCORE, prefix.data, prefix.len, upper.data,
			    upper.len);
	count = 0;
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it), count++) {
		size_t kn, vn;
		const char *k = store_iter_key(it, &kn);
		store_iter_value(it, &vn);
		if (count >= n) {
			bad = 1;
			break;
		}
		mname(order[count], name);
		if (kn != prefix.len + 11 || vn != 0 ||
		    get_be64(k + prefix.len) != enc_double_to_sortable(z->sc[order[count]]) ||
		    memcmp(k + prefix.len + 8, name, 3))
			bad = 1;
	}
	bad |= count != n;
	store_iter_free(it);
	buf_release(&raw);
	buf_release(&prefix);
	buf_release(&upper);
	return bad;
}

static void test_model(void)
{
	static struct zm z;
	int fails = 0;
	static const unsigned flagsets[] = {0,
					    ZSET_ADD_NX,
					    ZSET_ADD_XX,
					    ZSET_ADD_GT,
					    ZSET_ADD_LT,
					    ZSET_ADD_CH,
					    ZSET_ADD_XX | ZSET_ADD_GT | ZSET_ADD_CH};
	for (int op = 0; op < 4000; op++) {
		int i = (int)check_rnd(&rng_state, NMEM), rc = 0,
		    kind = (int)check_rnd(&rng_state, 6);
		int order[NMEM];
		char name[8];
		double s = scores[check_rnd(&rng_state, NSC)];
		mname(i, name);
		switch (kind) {
		case 0:
		case 1: { /* ZADD with flags */
			unsigned f =
			    flagsets[check_rnd(&rng_state, sizeof(flagsets) / sizeof(flagsets[0]))];
			int want = 0;
			rc = zset_add(ks, KEY(DEFNS, "model"), name, 3, s, f);
			if (!z.in[i]) {
				if (!(f & ZSET_ADD_XX)) {
					z.in[i] = true;
					z.sc[i] = s;
					want = 1;
				}
			} else if (!(f & ZSET_ADD_NX) && s != z.sc[i] &&
				   !((f & ZSET_ADD_GT) && s <= z.sc[i]) &&
				   !((f & ZSET_ADD_LT) && s >= z.sc[i])) {
				z.sc[i] = s;
				want = (f & ZSET_ADD_CH) ? 1 : 0;
			}
			rc = rc == want ? 0 : 1;
			break;
		}
		case 2: /* ZREM */
			rc = zset_rem(ks, KEY(DEFNS, "model"), name, 3, 0);
			rc = rc == (z.in[i] ? 0 : -ENOENT) ? 0 : 1;
			z.in[i] = false;
			break;
		case 3: { /* ZRANK / ZSCORE */
			uint64_t r = 0;
			double got = 0;
			bool rev = check_rnd(&rng_state, 2);
			size_t n = model_sorted(&z, order), p;
			rc = zset_rank(ks, KEY(DEFNS, "model"), name, 3, rev, &r);
			if (!z.in[i]) {
				rc = rc == -ENOENT ? 0 : 1;
				break;
			}
			for (p = 0; order[p] != i; p++)
				;
			if (rc || r != (rev ? n - 1 - p : p))
				rc = 1;
			if (zset_score(ks, KEY(DEFNS, "model"), name, 3, &got) ||
			    enc_double_to_sortable(got) != enc_double_to_sortable(z.sc[i]))
				rc = 1;
			break;
		}
		case 4: { /* range by rank */
			int64_t a = (int64_t)check_rnd(&rng_state, 8) - 4,
				b = (int64_t)check_rnd(&rng_state, 8) - 2;
			bool rev = check_rnd(&rng_state, 2);
			size_t n = model_sorted(&z, order);
			struct buf want = BUF_INIT;
			buf_add(&want, "", 0);
			int64_t nn = (int64_t)n, from = a < 0 ? a + nn : a, to = b < 0 ? b + nn : b;
			if (from < 0)
				from = 0;
			if (to >= nn)
				to = nn - 1;
			for (int64_t q = from; n && q <= to; q++) {
				int m = order[rev ? nn - 1 - q : q];
				mname(m, name);
				if (want.len)
					buf_add(&want, ",", 1);
				buf_printf(&want, "%s=%g", name, z.sc[m]);
			}
			rc = strcmp(by_rank("model", a, b, rev), want.data) != 0;
			buf_release(&want);
			break;
		}
		default: { /* range by score */
			double lo = scores[check_rnd(&rng_state, NSC)],
			       hi = scores[check_rnd(&rng_state, NSC)];
			bool lox = check_rnd(&rng_state, 2), hix = check_rnd(&rng_state, 2),
			     rev = check_rnd(&rng_state, 2);
			uint64_t off = check_rnd(&rng_state, 3);
			int64_t cnt = (int64_t)check_rnd(&rng_state, 5) - 1, given = 0;
			uint64_t skipped = 0;
			size_t n = model_sorted(&z, order);
			struct buf want = BUF_INIT;
			buf_add(&want, "", 0);
			for (size_t q = 0; q < n && cnt != 0; q++) {
				int m = order[rev ? n - 1 - q : q];
				double x = z.sc[m];
				if (x < lo || (lox && x == lo) || x > hi || (hix && x == hi))
					continue;
				if (skipped < off) {
					skipped++;
					continue;
				}
				if (cnt > 0 && given == cnt)
					break;
				given++;
				mname(m, name);
				if (want.len)
					buf_add(&want, ",", 1);
				buf_printf(&want, "%s=%g", name, x);
			}
			rc = strcmp(by_score("model", lo, lox, hi, hix, rev, off, cnt),
				    want.data) != 0;
			buf_release(&want);
			break;
		}
		}
		if (rc || check_exact(&z))
			if (fails++ < 5)
				fprintf(stderr, "model: op %d kind %d rc %d\n", op, kind, rc);
	}
	CHECK_INT(fails, 0);
}

/* The zset_score record of member m at sortable score hex `sc` exists? */
static int score_index_get(const char *key, const char *m, const char *sc)
{
	unsigned char k[256], sub[128];
	size_t sn = unhex(sc, sub);
	memcpy(sub + sn, m, strlen(m));
	size_t kn = fixture_sub_key(key, fixture_version(ks, KEY(key)), sub, sn + strlen(m), k);
	return store_get(ks_store(ks), STORE_CF_ZSET_SCORE, k, kn, &v);
}

/* The score-index record of m under the sortable score hex is gone. */
static void check_index_gone(const char *key, const char *m, const char *hex)
{
	unsigned char k[256], sub[128];
	uint64_t ver = fixture_version(ks, KEY(key));
	unhex(hex, sub);
	memcpy(sub + 8, m, strlen(m));
	size_t kn = fixture_sub_key(key, ver, sub, 8 + strlen(m), k);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_ZSET_SCORE, k, kn, &v), -ENOENT);
}

static void test_incrby(void)
{
	double d = 0;
	uint64_t n = 0;
	/* A missing key and member: added with the increment as its score. */
	CHECK_INT(zset_incrby(ks, KEY("zi"), "m", 1, 1, &d), 0);
	CHECK(d == 1);
	check_meta("zi", 1);
	check_member_raw("zi", "m", "BF F0 00 00 00 00 00 00");
	/* Both records move in the batch: the old index record goes. */
	CHECK_INT(zset_incrby(ks, KEY("zi"), "m", 1, 1.5, &d), 0);
	CHECK(d == 2.5);
	check_member_raw("zi", "m", "C0 04 00 00 00 00 00 00");
	check_index_gone("zi", "m", "BF F0 00 00 00 00 00 00");
	check_meta("zi", 1);
	CHECK_INT(zset_incrby(ks, KEY("zi"), "n", 1, -1, &d), 0);
	check_member_raw("zi", "n", "40 0F FF FF FF FF FF FF");
	check_meta("zi", 2);
	/* 0: no change, nothing written. */
	CHECK_INT(zset_incrby(ks, KEY("zi"), "m", 1, 0, &d), 0);
	CHECK(d == 2.5);
	/* Infinities are scores; inf + -inf is ERANGE, unchanged. */
	CHECK_INT(zset_incrby(ks, KEY("zi"), "n", 1, INFINITY, &d), 0);
	CHECK(isinf(d) && d > 0);
	CHECK_INT(zset_incrby(ks, KEY("zi"), "n", 1, -INFINITY, &d), -ERANGE);
	CHECK_INT(zset_score(ks, KEY("zi"), "n", 1, &d), 0);
	CHECK(isinf(d) && d > 0);
	/* Bad input, wrong type. */
	CHECK_INT(zset_incrby(ks, KEY("zi"), "m", 1, NAN, &d), -EINVAL);
	CHECK_INT(zset_score(ks, KEY("zi"), "m", 1, &d), 0);
	CHECK(d == 2.5);
	CHECK_INT(zset_card(ks, KEY("zi"), &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(string_set(ks, KEY("zs"), "x", 1, 0), 0);
	CHECK_INT(zset_incrby(ks, KEY("zs"), "m", 1, 1, &d), -KV_EWRONGTYPE);
	/* A remembered empty zset becomes a live one. */
	CHECK_INT(ks_empty_create(ks, KEY("ze"), KV_TYPE_ZSET), 0);
	CHECK_INT(zset_incrby(ks, KEY("ze"), "a", 1, 3, &d), 0);
	check_meta("ze", 1);
	/* Many increments of 0.5 add up exactly. */
	for (int i = 0; i < 100; i++)
		CHECK_INT(zset_incrby(ks, KEY("zc"), "m", 1, 0.5, &d), 0);
	CHECK(d == 50);
}

static void test_rename(void)
{
	double sc = 0;
	CHECK_INT(zset_add(ks, KEY(DEFNS, "rn"), "a", 1, 1.0, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "rn"), "b", 1, 2.0, 0), 1);
	uint64_t ver = fixture_version(ks, KEY("rn"));
	/* To a new name: the score moves with it, both records. */
	CHECK_INT(zset_rename_member(ks, KEY(DEFNS, "rn"), "a", 1, "c", 1), 0);
	check_meta("rn", 2);
	CHECK(fixture_version(ks, KEY("rn")) == ver);
	check_member_raw("rn", "a", NULL);
	CHECK_INT(score_index_get("rn", "a", "BF F0 00 00 00 00 00 00"), -ENOENT);
	check_member_raw("rn", "c", "BF F0 00 00 00 00 00 00");
	CHECK(strcmp(by_rank("rn", 0, -1, false), "c=1,b=2") == 0);
	/* Onto another member: it takes the score, its old index record goes. */
	CHECK_INT(zset_rename_member(ks, KEY(DEFNS, "rn"), "c", 1, "b", 1), 0);
	check_meta("rn", 1);
	check_member_raw("rn", "b", "BF F0 00 00 00 00 00 00");
	CHECK_INT(score_index_get("rn", "b", "C0 00 00 00 00 00 00 00"), -ENOENT);
	check_member_raw("rn", "c", NULL);
	CHECK_INT(zset_score(ks, KEY(DEFNS, "rn"), "b", 1, &sc), 0);
	CHECK(sc == 1.0);
	CHECK_INT(zset_rename_member(ks, KEY(DEFNS, "rn"), "b", 1, "b", 1), 0);
	check_meta("rn", 1);
	/* Missing member, missing key, wrong type, bad input: nothing written. */
	CHECK_INT(zset_rename_member(ks, KEY(DEFNS, "rn"), "zz", 2, "y", 1), -ENOENT);
	CHECK_INT(zset_rename_member(ks, KEY(DEFNS, "nope"), "a", 1, "y", 1), -ENOENT);
	CHECK_INT(string_set(ks, KEY(DEFNS, "rs"), "str", 3, 0), 0);
	CHECK_INT(zset_rename_member(ks, KEY(DEFNS, "rs"), "a", 1, "y", 1), -KV_EWRONGTYPE);
	CHECK_INT(zset_rename_member(ks, BADKEY, "a", 1, "y", 1), -EINVAL);
	CHECK_INT(
	    zset_rename_member(ks, KEY(DEFNS, "rn"), "b", 1, "y", (size_t)ZSET_MEMBER_MAX + 1),
	    -EFBIG);
	CHECK(strcmp(by_rank("rn", 0, -1, false), "b=1") == 0);
}

/* Corrupt records (issue 15): what the score iterator lists is what
 * ZSCORE finds, and a member whose score does not decode is listed,
 * answers -EUCLEAN and is removed by ZREM. */
static void plant(enum store_cf cf, const char *key, const void *sub, size_t sn, const void *val,
		  size_t vn)
{
	unsigned char k[128];
	size_t kn = fixture_sub_key(key, fixture_version(ks, KEY(key)), sub, sn, k);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, cf, k, kn, val, vn);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
}

static int index_get(const char *key, double score, const char *m)
{
	unsigned char k[128], sub[64];
	put_be64(sub, enc_double_to_sortable(score));
	memcpy(sub + 8, m, strlen(m));
	size_t kn = fixture_sub_key(key, fixture_version(ks, KEY(key)), sub, 8 + strlen(m), k);
	return store_get(ks_store(ks), STORE_CF_ZSET_SCORE, k, kn, &v);
}

static void test_corrupt(void)
{
	unsigned char sub[16];
	const char *m;
	size_t mn;
	double s;
	char got[256];
	int err = 1;
	uint64_t n = 0, rank = 9;

	CHECK_INT(zset_add(ks, KEY(DEFNS, "cz"), "a", 1, 1, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "cz"), "b", 1, 2, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "cz"), "c", 1, 3, 0), 1);
	plant(STORE_CF_DEFAULT, "cz", "b", 1, "xyz", 3); /* b's score: 3 bytes */
	put_be64(sub, enc_double_to_sortable(5));
	sub[8] = 'g'; /* "g" at 5: an index record without a member record */
	plant(STORE_CF_ZSET_SCORE, "cz", sub, 9, "", 0);
	put_be64(sub, enc_double_to_sortable(9));
	sub[8] = 'a'; /* "a" at 9: a's member record says 1 */
	plant(STORE_CF_ZSET_SCORE, "cz", sub, 9, "", 0);
	plant(STORE_CF_ZSET_SCORE, "cz", "\x01", 1, "", 0); /* a sub-key too short */

	struct zset_score_iter *it = zset_score_iter_new(ks, KEY(DEFNS, "cz"), false, NULL, &err);
	CHECK_INT(err, 0);
	got[0] = '\0';
	while (it && zset_score_iter_next(it, &m, &mn, &s) == 1)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%.*s%g%s,", (int)mn, m, s,
			 zset_score_iter_bad(it) ? "!" : "");
	CHECK_MEM(got, strlen(got), "a1,b2!,c3,", 10);
	zset_score_iter_free(it);
	struct zset_member_iter *mi = zset_member_iter_new(ks, KEY(DEFNS, "cz"), NULL, 0, &err);
	got[0] = '\0';
	while (mi && zset_member_iter_next(mi, &m, &mn, &s) == 1)
		snprintf(got + strlen(got), sizeof(got) - strlen(got), "%.*s%g%s,", (int)mn, m, s,
			 zset_member_iter_bad(mi) ? "!" : "");
	CHECK_MEM(got, strlen(got), "a1,bnan!,c3,", 12);
	zset_member_iter_free(mi);
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "cz"), "c", 1, false, &rank), 0);
	CHECK(rank == 2);
	CHECK_INT(zset_score(ks, KEY(DEFNS, "cz"), "b", 1, &s), -EUCLEAN);

	/* ZREM of b needs only its name: both its records go. */
	CHECK_INT(zset_rem(ks, KEY(DEFNS, "cz"), "b", 1, 0), 0);
	CHECK_INT(zset_card(ks, KEY(DEFNS, "cz"), &n), 0);
	CHECK(n == 2);
	CHECK_INT(zset_score(ks, KEY(DEFNS, "cz"), "b", 1, &s), -ENOENT);
	CHECK_INT(index_get("cz", 2, "b"), -ENOENT);
	CHECK_INT(index_get("cz", 1, "a"), 0);
	CHECK_INT(zset_rem(ks, KEY(DEFNS, "cz"), "g", 1, 0), -ENOENT);

	/* Members the metadata does not count (its size says 2 of 4) before
	 * q: the rank is corrupt, not a count wrapped below zero. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "rz"), "p", 1, 1, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "rz"), "q", 1, 2, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "rz"), "x", 1, 0, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "rz"), "y", 1, 0.5, 0), 1);
	struct buf meta = BUF_INIT;
	CHECK_INT(fixture_meta_raw(ks, KEY(DEFNS, "rz"), &meta), 0);
	CHECK(meta.len >= 25);
	put_be64((unsigned char *)meta.data + 17, 2);
	fixture_put_meta(ks, KEY(DEFNS, "rz"), meta.data, meta.len);
	buf_release(&meta);
	rank = 9;
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "rz"), "q", 1, true, &rank), -EUCLEAN);
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "rz"), "q", 1, false, &rank), -EUCLEAN);
	CHECK(rank == 9);
	/* x and y before p: 2 - 1 - 2 would wrap too */
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "rz"), "p", 1, true, &rank), -EUCLEAN);
	CHECK_INT(zset_rank(ks, KEY(DEFNS, "rz"), "y", 1, true, &rank), 0);
	CHECK(rank == 0); /* 2 - 1 - 1 */
}

/* ZPOPMIN, ZPOPMAX: what cb got, joined as by_rank joins it. */
static const char *pop(const char *key, uint64_t count, bool max, unsigned flags, int *rc)
{
	buf_reset(&out);
	buf_add(&out, "", 0);
	*rc = zset_pop(ks, KEY(DEFNS, key), count, max, flags, join_cb, &out);
	return out.data;
}

static int fail_cb(void *arg, const char *m, size_t mn, double score)
{
	(void)arg;
	(void)m;
	(void)mn;
	(void)score;
	return -ECANCELED;
}

static void test_pop(void)
{
	struct ks_info info;
	int rc = 1;
	CHECK_INT(zset_add(ks, KEY(DEFNS, "pz"), "a", 1, 1, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "pz"), "b", 1, 2, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "pz"), "c", 1, 2, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "pz"), "d", 1, -INFINITY, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "pz"), "e", 1, INFINITY, 0), 1);
	uint64_t ver = fixture_version(ks, KEY("pz"));
	/* The lowest: both its records go, size 4, the version stays. */
	CHECK(strcmp(pop("pz", 1, false, 0, &rc), "d=-inf") == 0);
	CHECK_INT(rc, 0);
	check_member_raw("pz", "d", NULL);
	CHECK_INT(index_get("pz", -INFINITY, "d"), -ENOENT);
	check_meta("pz", 4);
	CHECK(fixture_version(ks, KEY("pz")) == ver);
	check_member_raw("pz", "a", "BF F0 00 00 00 00 00 00");
	/* Ties by member bytes: up for ZPOPMIN, down for ZPOPMAX. */
	CHECK(strcmp(pop("pz", 2, false, 0, &rc), "a=1,b=2") == 0);
	check_member_raw("pz", "a", NULL);
	check_member_raw("pz", "b", NULL);
	CHECK_INT(index_get("pz", 2, "b"), -ENOENT);
	check_meta("pz", 2);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "pz"), "b", 1, 2, 0), 1);
	CHECK(strcmp(pop("pz", 1, true, 0, &rc), "e=inf") == 0);
	CHECK_INT(index_get("pz", INFINITY, "e"), -ENOENT);
	check_member_raw("pz", "c", "C0 00 00 00 00 00 00 00");
	/* A callback's error, count 0, a missing key: nothing written. */
	struct buf before = BUF_INIT;
	fixture_snapshot(ks, KEY("pz"), &before);
	CHECK_INT(zset_pop(ks, KEY(DEFNS, "pz"), 2, true, 0, fail_cb, NULL), -ECANCELED);
	CHECK_INT(zset_pop(ks, KEY(DEFNS, "pz"), 0, true, 0, fail_cb, NULL), 0);
	CHECK_INT(zset_pop(ks, KEY(DEFNS, "nope"), 3, false, 0, fail_cb, NULL), 0);
	/* Wrong type, bad namespace. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "ps"), "str", 3, 0), 0);
	CHECK_INT(zset_pop(ks, KEY(DEFNS, "ps"), 1, false, 0, fail_cb, NULL), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY(DEFNS, "ps"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	CHECK_INT(zset_pop(ks, BADKEY, 1, false, 0, fail_cb, NULL), -EINVAL);
	CHECK(fixture_unchanged(ks, KEY("pz"), &before));
	buf_release(&before);
	/* More than it has: all, highest first; ZSET_KEEP_EMPTY keeps it. */
	CHECK(strcmp(pop("pz", 10, true, ZSET_KEEP_EMPTY, &rc), "c=2,b=2") == 0);
	CHECK_INT(rc, 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("pz"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "pz"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_ZSET);
	CHECK(strcmp(pop("pz", 1, false, ZSET_KEEP_EMPTY, &rc), "") == 0);
	CHECK_INT(rc, 0);
	/* Without it the key goes. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "pz"), "x", 1, 0.5, 0), 1);
	CHECK(strcmp(pop("pz", 1, false, 0, &rc), "x=0.5") == 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "pz"), &info), -ENOENT);
}

/* After test_corrupt: "cz" holds a=1 and c=3, and index records that name
 * nothing ("g" at 5, "a" at 9, a short one): popped past, not popped. */
static void test_pop_corrupt(void)
{
	struct ks_info info;
	int rc = 1;
	CHECK(strcmp(pop("cz", 10, false, 0, &rc), "a=1,c=3") == 0);
	CHECK_INT(rc, 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "cz"), &info), -ENOENT);
	/* A member whose score does not decode is popped at the index's. */
	CHECK_INT(zset_add(ks, KEY(DEFNS, "cp"), "a", 1, 1, 0), 1);
	CHECK_INT(zset_add(ks, KEY(DEFNS, "cp"), "b", 1, 2, 0), 1);
	plant(STORE_CF_DEFAULT, "cp", "b", 1, "xyz", 3);
	CHECK(strcmp(pop("cp", 1, true, 0, &rc), "b=2") == 0);
	CHECK_INT(rc, 0);
	check_member_raw("cp", "b", NULL);
	CHECK_INT(index_get("cp", 2, "b"), -ENOENT);
	check_meta("cp", 1);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_zset");
	test_add_bytes();
	test_rem_score_card();
	test_rank_ranges();
	test_iters();
	test_rename();
	test_incrby();
	test_v0();
	test_corrupt();
	test_pop();
	test_pop_corrupt();
	test_model();
	fixture_done(ks);
	buf_release(&v);
	buf_release(&out);
	return check_done("test_zset");
}
