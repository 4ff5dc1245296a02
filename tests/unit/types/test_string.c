/*
 * Unit tests for t_string on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case, and the stored
 * bytes compared with kvrocks-encoding.md sections 6.1 and 12.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_hash.h"
#include "types/t_string.h"

#include <math.h>
#include <time.h>

static struct keyspace *ks;
static struct buf v = BUF_INIT;

/* The raw metadata record of a default-namespace key. */
static int raw_meta(const char *key, struct buf *out)
{
	return fixture_meta_raw(ks, KEY(key), out);
}

static void check_raw(const char *key, const char *hex)
{
	fixture_check_meta_hex(ks, KEY(key), hex);
}

static void check_value(const char *key, const void *want, size_t n)
{
	CHECK_INT(string_get(ks, KEY(DEFNS, key), &v), 0);
	CHECK_MEM(v.data, v.len, want, n);
}

static void test_set_get(void)
{
	/* kvrocks-encoding.md 12: SET foo bar -> NS 66 6F 6F : 81 00x8 62 61 72 */
	CHECK_INT(string_set(ks, KEY(DEFNS, "foo"), "bar", 3, 0), 0);
	unsigned char k[64];
	size_t kn = check_unhex(NS_HEX " 66 6F 6F", k, sizeof(k));
	struct buf mk = BUF_INIT;
	CHECK_INT(ks_meta_key(ks, KEY(DEFNS, "foo"), &mk), 0);
	CHECK_MEM(mk.data, mk.len, k, kn);
	buf_release(&mk);
	check_raw("foo", "81 00 00 00 00 00 00 00 00 62 61 72");
	check_value("foo", "bar", 3);
	/* Binary values and the empty value. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "bin"), "a\0b\n", 4, 0), 0);
	check_value("bin", "a\0b\n", 4);
	CHECK_INT(string_set(ks, KEY(DEFNS, "empty"), "", 0, 0), 0);
	check_value("empty", "", 0);
	check_raw("empty", "81 00 00 00 00 00 00 00 00");
	/* Overwrite. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "foo"), "baz!", 4, 0), 0);
	check_value("foo", "baz!", 4);
	/* Missing key. */
	CHECK_INT(string_get(ks, KEY(DEFNS, "nope"), &v), -ENOENT);
	/* Wrong type. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(string_get(ks, KEY(DEFNS, "h"), &v), -KV_EWRONGTYPE);
	/* Bad input: a namespace of length 0; nothing written. */
	CHECK_INT(string_set(ks, &(struct ks_key){"", 0, "k", 1, NULL, NULL}, "v", 1, 0), -EINVAL);
	CHECK_INT(string_get(ks, &(struct ks_key){"", 0, "k", 1, NULL, NULL}, &v), -EINVAL);
	/* Too big: refused before anything is read or written. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "foo"), "x", (size_t)STRING_MAX + 1, 0), -EFBIG);
	check_value("foo", "baz!", 4);
}

static void test_set_flags(void)
{
	CHECK_INT(string_set(ks, KEY(DEFNS, "nx"), "1", 1, STRING_SET_NX), 0);
	CHECK_INT(string_set(ks, KEY(DEFNS, "nx"), "2", 1, STRING_SET_NX), -EEXIST);
	check_value("nx", "1", 1);
	CHECK_INT(string_set(ks, KEY(DEFNS, "xx"), "1", 1, STRING_SET_XX), -ENOENT);
	CHECK_INT(string_get(ks, KEY(DEFNS, "xx"), &v), -ENOENT);
	CHECK_INT(string_set(ks, KEY(DEFNS, "nx"), "3", 1, STRING_SET_XX), 0);
	check_value("nx", "3", 1);

	/* Without KEEPTTL the expiry goes; with it, it stays. */
	uint64_t e = now_ms() + 3600000;
	struct ks_info info;
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "nx"), e), 0);
	CHECK_INT(string_set(ks, KEY(DEFNS, "nx"), "4", 1, STRING_SET_KEEPTTL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "nx"), &info), 0);
	CHECK(info.expire_ms == e);
	unsigned char want[16] = {0x81};
	put_be64(want + 1, e);
	want[9] = '4';
	CHECK_INT(raw_meta("nx", &v), 0);
	CHECK_MEM(v.data, v.len, want, 10);
	CHECK_INT(string_set(ks, KEY(DEFNS, "nx"), "5", 1, 0), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "nx"), &info), 0);
	CHECK_INT(info.expire_ms, 0);

	/* SET replaces another type, and an empty collection. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hh"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(string_set(ks, KEY(DEFNS, "hh"), "s", 1, STRING_SET_XX), 0);
	check_value("hh", "s", 1);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "hh"), "f", 1, &v), -KV_EWRONGTYPE);
	check_raw("hh", "81 00 00 00 00 00 00 00 00 73");
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "eh"), KV_TYPE_HASH), 0);
	CHECK_INT(string_set(ks, KEY(DEFNS, "eh"), "s", 1, STRING_SET_NX), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "eh"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_STRING);
	/* ... and SET over a v0 string writes v1. */
	unsigned char k[64], v0[16];
	size_t kn = check_unhex(NS_HEX " 76 30", k, sizeof(k));
	size_t vn = check_unhex("01 00 00 00 00 61", v0, sizeof(v0));
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_METADATA, k, kn, v0, vn);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
	check_value("v0", "a", 1);
	CHECK_INT(string_set(ks, KEY(DEFNS, "v0"), "b", 1, 0), 0);
	check_raw("v0", "81 00 00 00 00 00 00 00 00 62");
}

static void test_append(void)
{
	uint64_t len = 0;
	/* Missing key: created. */
	CHECK_INT(string_append(ks, KEY(DEFNS, "ap"), "ab", 2, &len), 0);
	CHECK_INT(len, 2);
	check_raw("ap", "81 00 00 00 00 00 00 00 00 61 62");
	CHECK_INT(string_append(ks, KEY(DEFNS, "ap"), "c\0", 2, &len), 0);
	CHECK_INT(len, 4);
	check_value("ap", "abc\0", 4);
	CHECK_INT(string_append(ks, KEY(DEFNS, "ap"), "", 0, &len), 0);
	CHECK_INT(len, 4);
	/* Empty append on a missing key creates "" (as Redis). */
	CHECK_INT(string_append(ks, KEY(DEFNS, "ap0"), "", 0, &len), 0);
	CHECK_INT(len, 0);
	check_value("ap0", "", 0);
	/* Keeps the expiry (the record is edited in place). */
	uint64_t e = now_ms() + 3600000;
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "ap"), e), 0);
	CHECK_INT(string_append(ks, KEY(DEFNS, "ap"), "d", 1, &len), 0);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ap"), &info), 0);
	CHECK(info.expire_ms == e);
	CHECK_INT(info.size, 5);
	/* Wrong type. */
	CHECK_INT(string_append(ks, KEY(DEFNS, "h"), "x", 1, &len), -KV_EWRONGTYPE);
	/* Too big: nothing changes. */
	CHECK_INT(string_append(ks, KEY(DEFNS, "ap"), "x", (size_t)STRING_MAX, &len), -EFBIG);
	check_value("ap", "abc\0d", 5);
	CHECK_INT(string_append(ks, KEY(DEFNS, "ap1"), "x", (size_t)STRING_MAX + 1, &len), -EFBIG);
	CHECK_INT(string_get(ks, KEY(DEFNS, "ap1"), &v), -ENOENT);
}

static void test_setrange(void)
{
	uint64_t len = 0;
	/* Missing key: zero-padded. */
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "sr"), 3, "xy", 2, &len), 0);
	CHECK_INT(len, 5);
	check_raw("sr", "81 00 00 00 00 00 00 00 00 00 00 00 78 79");
	/* Inside, overlapping the end, and past the end with a gap. */
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "sr"), 0, "a", 1, &len), 0);
	CHECK_INT(len, 5);
	check_value("sr", "a\0\0xy", 5);
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "sr"), 4, "ZZ", 2, &len), 0);
	CHECK_INT(len, 6);
	check_value("sr", "a\0\0xZZ", 6);
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "sr"), 8, "q", 1, &len), 0);
	CHECK_INT(len, 9);
	check_value("sr", "a\0\0xZZ\0\0q", 9);
	/* Empty value: length reported, nothing created. */
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "sr"), 100, "", 0, &len), 0);
	CHECK_INT(len, 9);
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "sr0"), 5, "", 0, &len), 0);
	CHECK_INT(len, 0);
	CHECK_INT(string_get(ks, KEY(DEFNS, "sr0"), &v), -ENOENT);
	/* Wrong type. */
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "h"), 0, "x", 1, &len), -KV_EWRONGTYPE);
	/* Too far: nothing changes. */
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "sr"), STRING_MAX, "x", 1, &len), -EFBIG);
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "sr"), UINT64_MAX, "x", 1, &len), -EFBIG);
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "sr1"), STRING_MAX - 1, "xy", 2, &len), -EFBIG);
	CHECK_INT(string_get(ks, KEY(DEFNS, "sr1"), &v), -ENOENT);
	check_value("sr", "a\0\0xZZ\0\0q", 9);
	/* The last byte that fits. */
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "big"), (1u << 20) - 1, "z", 1, &len), 0);
	CHECK_INT(len, 1u << 20);
}

static void check_range(const char *key, int64_t s, int64_t e, const char *want)
{
	CHECK_INT(string_getrange(ks, KEY(DEFNS, key), s, e, &v), 0);
	CHECK_MEM(v.data, v.len, want, strlen(want));
}

static void test_getrange_read(void)
{
	CHECK_INT(string_set(ks, KEY(DEFNS, "gr"), "This is a string", 16, 0), 0);
	/* The examples of the Redis GETRANGE documentation. */
	check_range("gr", 0, 3, "This");
	check_range("gr", -3, -1, "ing");
	check_range("gr", 0, -1, "This is a string");
	check_range("gr", 10, 100, "string");
	check_range("gr", 5, 3, "");
	check_range("gr", -1, -3, "");
	check_range("gr", -100, 2, "Thi");
	check_range("gr", 16, 20, "");
	check_range("gr", -100, -50, "T"); /* Redis: both clamp to 0 */
	check_range("nope", 0, -1, "");
	CHECK_INT(string_set(ks, KEY(DEFNS, "e0"), "", 0, 0), 0);
	check_range("e0", 0, -1, "");
	CHECK_INT(string_getrange(ks, KEY(DEFNS, "h"), 0, -1, &v), -KV_EWRONGTYPE);

	CHECK_INT(string_read(ks, KEY(DEFNS, "gr"), 5, 2, &v), 0);
	CHECK_MEM(v.data, v.len, "is", 2);
	CHECK_INT(string_read(ks, KEY(DEFNS, "gr"), 10, 100, &v), 0);
	CHECK_MEM(v.data, v.len, "string", 6);
	CHECK_INT(string_read(ks, KEY(DEFNS, "gr"), 16, 1, &v), 0);
	CHECK_INT(v.len, 0);
	CHECK_INT(string_read(ks, KEY(DEFNS, "gr"), UINT64_MAX, 1, &v), 0);
	CHECK_INT(v.len, 0);
	CHECK_INT(string_read(ks, KEY(DEFNS, "gr"), 0, 0, &v), 0);
	CHECK_INT(v.len, 0);
	CHECK_INT(string_read(ks, KEY(DEFNS, "nope"), 0, 1, &v), -ENOENT);
	CHECK_INT(string_read(ks, KEY(DEFNS, "h"), 0, 1, &v), -KV_EWRONGTYPE);
}

static void test_pin(void)
{
	struct string_pin *pin = (struct string_pin *)1;
	const char *d = NULL;
	size_t n = 0;
	CHECK_INT(string_set(ks, KEY(DEFNS, "pin"), "first", 5, 0), 0);
	CHECK_INT(string_pin(ks, KEY(DEFNS, "pin"), &pin, &d, &n), 0);
	CHECK_MEM(d, n, "first", 5);
	/* The borrowed bytes outlive a change of the key. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "pin"), "second!", 7, 0), 0);
	CHECK_MEM(d, n, "first", 5);
	string_unpin(pin);
	CHECK_INT(string_pin(ks, KEY(DEFNS, "pin"), &pin, &d, &n), 0);
	CHECK_MEM(d, n, "second!", 7);
	string_unpin(pin);
	CHECK_INT(string_set(ks, KEY(DEFNS, "pin0"), "", 0, 0), 0);
	CHECK_INT(string_pin(ks, KEY(DEFNS, "pin0"), &pin, &d, &n), 0);
	CHECK_INT(n, 0);
	string_unpin(pin);
	CHECK_INT(string_pin(ks, KEY(DEFNS, "nope"), &pin, &d, &n), -ENOENT);
	CHECK(pin == NULL);
	CHECK_INT(string_pin(ks, KEY(DEFNS, "h"), &pin, &d, &n), -KV_EWRONGTYPE);
	CHECK(pin == NULL);
	string_unpin(NULL); /* a no-op, like free(NULL) */
}

static void test_strlen_del(void)
{
	uint64_t len = 99;
	CHECK_INT(string_strlen(ks, KEY(DEFNS, "gr"), &len), 0);
	CHECK_INT(len, 16);
	CHECK_INT(string_strlen(ks, KEY(DEFNS, "nope"), &len), 0);
	CHECK_INT(len, 0);
	CHECK_INT(string_strlen(ks, KEY(DEFNS, "h"), &len), -KV_EWRONGTYPE);

	CHECK_INT(string_del(ks, KEY(DEFNS, "gr")), 0);
	CHECK_INT(string_get(ks, KEY(DEFNS, "gr"), &v), -ENOENT);
	CHECK_INT(raw_meta("gr", &v), -ENOENT);
	CHECK_INT(string_del(ks, KEY(DEFNS, "gr")), -ENOENT);
	CHECK_INT(string_del(ks, KEY(DEFNS, "h")), -KV_EWRONGTYPE);
	uint64_t n;
	CHECK_INT(hash_len(ks, KEY(DEFNS, "h"), &n), 0);
	CHECK_INT(n, 1);
	/* An expired string is missing for every verb. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "ex"), "v", 1, 0), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "ex"), now_ms() + 1), 0);
	struct timespec ts = {0, 5 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK_INT(string_get(ks, KEY(DEFNS, "ex"), &v), -ENOENT);
	CHECK_INT(string_del(ks, KEY(DEFNS, "ex")), -ENOENT);
	CHECK_INT(string_strlen(ks, KEY(DEFNS, "ex"), &len), 0);
	CHECK_INT(len, 0);
	CHECK_INT(string_set(ks, KEY(DEFNS, "ex"), "w", 1, STRING_SET_XX), -ENOENT);
	CHECK_INT(string_append(ks, KEY(DEFNS, "ex"), "w", 1, &len), 0);
	CHECK_INT(len, 1);
	check_raw("ex", "81 00 00 00 00 00 00 00 00 77");
}

static void test_incr(void)
{
	int64_t n = 0;
	double d = 0;
	uint64_t e = now_ms() + 3600000;
	struct ks_info info;

	/* A missing key counts from 0 and is made: a fresh v1 record, as
	 * Kvrocks's INCR writes it (redis_string.cc IncrBy). */
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "c"), 1, &n), 0);
	CHECK_INT(n, 1);
	check_raw("c", "81 00 00 00 00 00 00 00 00 31");
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "c"), -11, &n), 0);
	CHECK_INT(n, -10);
	check_raw("c", "81 00 00 00 00 00 00 00 00 2D 31 30");
	/* The expiry stays. */
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "c"), e), 0);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "c"), 12, &n), 0);
	CHECK_INT(n, 2);
	unsigned char want[16] = {0x81};
	put_be64(want + 1, e);
	want[9] = '2';
	CHECK_INT(raw_meta("c", &v), 0);
	CHECK_MEM(v.data, v.len, want, 10);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "c"), &info), 0);
	CHECK(info.expire_ms == e);
	/* Kvrocks reads the value with strtoll: a '+' and leading zeros are
	 * numbers, a leading blank, a trailing byte, a NUL are not. An
	 * empty value counts as 0. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "p"), "+007", 4, 0), 0);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "p"), 1, &n), 0);
	CHECK_INT(n, 8);
	check_value("p", "8", 1);
	CHECK_INT(string_set(ks, KEY(DEFNS, "p"), "", 0, 0), 0);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "p"), 5, &n), 0);
	check_value("p", "5", 1);
	static const char *const bad[] = {" 1", "1 ", "1.0", "abc", "0x10", "9223372036854775808",
					  "1\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(string_set(ks, KEY(DEFNS, "b"), bad[i], strlen(bad[i]), 0), 0);
		CHECK_INT(string_incrby(ks, KEY(DEFNS, "b"), 1, &n), -EINVAL);
		check_value("b", bad[i], strlen(bad[i]));
	}
	CHECK_INT(string_set(ks, KEY(DEFNS, "b"), "1\0", 2, 0), 0);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "b"), 1, &n), -EINVAL);
	check_value("b", "1\0", 2);
	/* Overflow: ERANGE, nothing written. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "o"), "9223372036854775806", 19, 0), 0);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "o"), 1, &n), 0);
	CHECK(n == INT64_MAX);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "o"), 1, &n), -ERANGE);
	check_value("o", "9223372036854775807", 19);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "o"), INT64_MIN, &n), 0);
	CHECK_INT(n, -1);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "o"), INT64_MIN, &n), -ERANGE);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "o"), 1, &n), 0);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "o"), INT64_MIN, &n), 0);
	CHECK(n == INT64_MIN);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "o"), -1, &n), -ERANGE);
	check_value("o", "-9223372036854775808", 20);
	/* Wrong type; an expired key counts from 0 without its expiry. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "1", 1, NULL), 0);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "h"), 1, &n), -KV_EWRONGTYPE);
	CHECK_INT(string_incrbyfloat(ks, KEY(DEFNS, "h"), 1, &d), -KV_EWRONGTYPE);
	CHECK_INT(string_set(ks, KEY(DEFNS, "x"), "41", 2, 0), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "x"), now_ms() + 1), 0);
	struct timespec ts = {0, 5 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "x"), 1, &n), 0);
	CHECK_INT(n, 1);
	check_raw("x", "81 00 00 00 00 00 00 00 00 31");

	/* INCRBYFLOAT stores std::to_string's "%f" text (Kvrocks), and
	 * answers the value as stored. */
	CHECK_INT(string_incrbyfloat(ks, KEY(DEFNS, "f"), 10.5, &d), 0);
	CHECK(d == 10.5);
	check_raw("f", "81 00 00 00 00 00 00 00 00 31 30 2E 35 30 30 30 30 30");
	CHECK_INT(string_incrbyfloat(ks, KEY(DEFNS, "f"), 0.1, &d), 0);
	check_value("f", "10.600000", 9);
	CHECK(d == 10.6);
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "f"), 1, &n), -EINVAL); /* "10.600000" */
	CHECK_INT(string_set(ks, KEY(DEFNS, "g"), "5", 1, 0), 0);
	CHECK_INT(string_incrbyfloat(ks, KEY(DEFNS, "g"), -5e-7, &d), 0);
	check_value("g", "5.000000", 8); /* six decimals, as Kvrocks */
	CHECK_INT(string_set(ks, KEY(DEFNS, "g"), "1e3", 3, 0), 0);
	CHECK_INT(string_incrbyfloat(ks, KEY(DEFNS, "g"), 1, &d), 0);
	check_value("g", "1001.000000", 11);
	CHECK_INT(string_incrbyfloat(ks, KEY(DEFNS, "g"), NAN, &d), -EINVAL);
	CHECK_INT(string_incrbyfloat(ks, KEY(DEFNS, "g"), INFINITY, &d), -ERANGE);
	CHECK_INT(string_set(ks, KEY(DEFNS, "g"), "1.7e308", 7, 0), 0);
	CHECK_INT(string_incrbyfloat(ks, KEY(DEFNS, "g"), 1e308, &d), -ERANGE);
	check_value("g", "1.7e308", 7);
	CHECK_INT(string_set(ks, KEY(DEFNS, "g"), "x1", 2, 0), 0);
	CHECK_INT(string_incrbyfloat(ks, KEY(DEFNS, "g"), 1, &d), -EINVAL);
	check_value("g", "x1", 2);
	/* The number rules on their own. */
	CHECK_INT(string_num_int(" +5", 3, 0, &n), 0);
	CHECK_INT(n, 5);
	CHECK_INT(string_num_int(" 5", 2, STRING_NUM_VALUE, &n), -EINVAL);
	CHECK_INT(string_num_int("", 0, 0, &n), -EINVAL);
	CHECK_INT(string_num_float("nan", 3, 0, &d), -EINVAL);
	CHECK_INT(string_num_float("1e-400", 6, 0, &d), -EINVAL);
	CHECK_INT(string_num_float("0x1p3", 5, 0, &d), 0);
	CHECK(d == 8);
	char longnum[200];
	memset(longnum, '0', sizeof(longnum));
	longnum[sizeof(longnum) - 1] = '7';
	CHECK_INT(string_num_int(longnum, sizeof(longnum), STRING_NUM_VALUE, &n), 0);
	CHECK_INT(n, 7);
}

static void test_read_only(void)
{
	uint64_t len;
	struct ks_options o = {.read_only = true};
	ks = fixture_reopen_checked(ks, &o);
	if (!ks)
		return;
	CHECK_INT(string_set(ks, KEY(DEFNS, "foo"), "x", 1, 0), -EROFS);
	CHECK_INT(string_append(ks, KEY(DEFNS, "foo"), "x", 1, &len), -EROFS);
	CHECK_INT(string_setrange(ks, KEY(DEFNS, "foo"), 0, "x", 1, &len), -EROFS);
	CHECK_INT(string_del(ks, KEY(DEFNS, "foo")), -EROFS);
	int64_t n;
	CHECK_INT(string_incrby(ks, KEY(DEFNS, "newc"), 1, &n), -EROFS);
	check_value("foo", "baz!", 4);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_string");
	test_set_get();
	test_set_flags();
	test_append();
	test_setrange();
	test_getrange_read();
	test_pin();
	test_strlen_del();
	test_incr();
	test_read_only();
	fixture_done(ks);
	buf_release(&v);
	return check_done("test_string");
}
