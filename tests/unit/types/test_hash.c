/*
 * Unit tests for t_hash on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case, field iteration,
 * field moves, and the stored bytes compared with kvrocks-encoding.md
 * sections 6.3 and 12 (the version comes from the metadata read back).
 */
#include "check.h"
#include "fixture.h"
#include "types/t_hash.h"
#include "types/t_string.h"

#include <math.h>

static struct keyspace *ks;
static struct buf v = BUF_INIT;

static int raw_get(enum store_cf cf, const unsigned char *k, size_t kn, struct buf *out)
{
	return store_get(ks_store(ks), cf, k, kn, out);
}

static uint64_t stored_version(const char *ns, const char *key)
{
	return fixture_version(ks, KEY(ns, key));
}

/* Metadata of hash `key` in the default namespace: 82 00x8 V size. */
static void check_meta(const char *key, uint64_t size)
{
	fixture_check_meta(ks, KEY(DEFNS, key), 0x82, size, "");
}

static void check_field_raw(const char *key, const char *f, const char *val)
{
	unsigned char k[512];
	size_t kn = fixture_sub_key(key, stored_version(DEFNS, key), f, strlen(f), k);
	int rc = raw_get(STORE_CF_DEFAULT, k, kn, &v);
	if (!val) {
		CHECK_INT(rc, -ENOENT);
		return;
	}
	CHECK_INT(rc, 0);
	CHECK_MEM(v.data, v.len, val, strlen(val));
}

static void test_set_get(void)
{
	bool created = false;
	/* kvrocks-encoding.md 12: HSET h f v. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "v", 1, &created), 0);
	CHECK(created);
	uint64_t ver = stored_version(DEFNS, "h");
	CHECK(ver != 0);
	CHECK((ver >> 11) <= now_us() && (ver >> 11) > now_us() - 60000000);
	check_meta("h", 1);
	unsigned char k[256], want[256];
	size_t kn = unhex(NS_HEX " 00 00 00 01 68", want);
	put_be64(want + kn, ver);
	want[kn + 8] = 0x66;
	size_t got = fixture_sub_key("h", ver, "f", 1, k);
	CHECK_MEM(k, got, want, kn + 9);
	CHECK_INT(raw_get(STORE_CF_DEFAULT, want, kn + 9, &v), 0);
	CHECK_MEM(v.data, v.len, "\x76", 1);

	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "f", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "v", 1);
	/* Update: not created, size unchanged, version kept. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "v2", 2, &created), 0);
	CHECK(!created);
	check_meta("h", 1);
	CHECK(stored_version(DEFNS, "h") == ver);
	check_field_raw("h", "f", "v2");
	/* A second field; binary field and value; empty field name and value. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "g\0h", 3, "x\0y", 3, &created), 0);
	CHECK(created);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "", 0, "", 0, NULL), 0);
	check_meta("h", 3);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "g\0h", 3, &v), 0);
	CHECK_MEM(v.data, v.len, "x\0y", 3);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "", 0, &v), 0);
	CHECK_INT(v.len, 0);

	/* Missing key and missing field. */
	CHECK_INT(hash_get(ks, KEY(DEFNS, "nope"), "f", 1, &v), -ENOENT);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "zz", 2, &v), -ENOENT);
	/* Wrong type: nothing written. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "str", 3, 0), 0);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "s"), "f", 1, &v), -KV_EWRONGTYPE);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "s"), "f", 1, "v", 1, NULL), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	/* Bad input. */
	CHECK_INT(hash_set(ks, &(struct ks_key){"", 0, "k", 1, NULL, NULL}, "f", 1, "v", 1, NULL),
		  -EINVAL);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "x", (size_t)(512ull << 20) + 1, NULL),
		  -EFBIG);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "big"), "f", 1, "x", (size_t)(512ull << 20) + 1, NULL),
		  -EFBIG);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "f", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "v2", 2);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "big"), &info), -ENOENT);
}

static void test_setnx(void)
{
	CHECK_INT(hash_setnx(ks, KEY(DEFNS, "nx"), "f", 1, "1", 1), 0);
	CHECK_INT(hash_setnx(ks, KEY(DEFNS, "nx"), "f", 1, "2", 1), -EEXIST);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "nx"), "f", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "1", 1);
	CHECK_INT(hash_setnx(ks, KEY(DEFNS, "nx"), "g", 1, "2", 1), 0);
	check_meta("nx", 2);
	CHECK_INT(hash_setnx(ks, KEY(DEFNS, "s"), "f", 1, "1", 1), -KV_EWRONGTYPE);
	CHECK_INT(hash_setnx(ks, KEY(DEFNS, "nx"), "h", 1, "x", (size_t)(512ull << 20) + 1),
		  -EFBIG);
	check_meta("nx", 2);
}

static void test_del(void)
{
	CHECK_INT(hash_set(ks, KEY(DEFNS, "d"), "a", 1, "1", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "d"), "b", 1, "2", 1, NULL), 0);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "d"), "a", 1, 0), 0);
	check_meta("d", 1);
	check_field_raw("d", "a", NULL);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "d"), "a", 1, 0), -ENOENT);
	check_meta("d", 1);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "nope"), "a", 1, 0), -ENOENT);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "s"), "a", 1, 0), -KV_EWRONGTYPE);
	CHECK_INT(hash_del(ks, &(struct ks_key){"", 0, "d", 1, NULL, NULL}, "b", 1, 0), -EINVAL);
	/* The last field: the metadata goes. */
	unsigned char k[64];
	size_t kn = unhex(NS_HEX " 64", k);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "d"), "b", 1, 0), 0);
	CHECK_INT(raw_get(STORE_CF_METADATA, k, kn, &v), -ENOENT);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "d"), &info), -ENOENT);
	/* With HASH_KEEP_EMPTY it stays as an empty hash. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "d"), "c", 1, "3", 1, NULL), 0);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "d"), "c", 1, HASH_KEEP_EMPTY), 0);
	CHECK_INT(raw_get(STORE_CF_METADATA, k, kn, &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "d"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_HASH);
	kn = unhex(RES_HEX " 45 0B 5F 5F 6E 61 6D 65 73 70 61 63 65 64", k);
	CHECK_INT(raw_get(STORE_CF_METADATA, k, kn, &v), 0);
	unsigned char want[32];
	size_t wn = unhex("81 00 00 00 00 00 00 00 00 68 61 73 68", want);
	CHECK_MEM(v.data, v.len, want, wn);
	uint64_t n = 7;
	CHECK_INT(hash_len(ks, KEY(DEFNS, "d"), &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "d"), "c", 1, 0), -ENOENT);
	/* The next HSET makes it a Kvrocks hash again, record gone. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "d"), "e", 1, "5", 1, NULL), 0);
	CHECK_INT(raw_get(STORE_CF_METADATA, k, kn, &v), -ENOENT);
	check_meta("d", 1);
}

static void test_len_exists_strlen(void)
{
	uint64_t n = 99;
	CHECK_INT(hash_len(ks, KEY(DEFNS, "h"), &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(hash_len(ks, KEY(DEFNS, "nope"), &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(hash_len(ks, KEY(DEFNS, "s"), &n), -KV_EWRONGTYPE);
	CHECK_INT(hash_len(ks, &(struct ks_key){"", 0, "h", 1, NULL, NULL}, &n), -EINVAL);

	CHECK_INT(hash_exists(ks, KEY(DEFNS, "h"), "f", 1), 1);
	CHECK_INT(hash_exists(ks, KEY(DEFNS, "h"), "nope", 4), 0);
	CHECK_INT(hash_exists(ks, KEY(DEFNS, "nope"), "f", 1), 0);
	CHECK_INT(hash_exists(ks, KEY(DEFNS, "s"), "f", 1), -KV_EWRONGTYPE);
	CHECK_INT(hash_exists(ks, &(struct ks_key){"", 0, "h", 1, NULL, NULL}, "f", 1), -EINVAL);

	CHECK_INT(hash_strlen(ks, KEY(DEFNS, "h"), "f", 1, &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(hash_strlen(ks, KEY(DEFNS, "h"), "", 0, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(hash_strlen(ks, KEY(DEFNS, "h"), "zz", 2, &n), -ENOENT);
	CHECK_INT(hash_strlen(ks, KEY(DEFNS, "nope"), "f", 1, &n), -ENOENT);
	CHECK_INT(hash_strlen(ks, KEY(DEFNS, "s"), "f", 1, &n), -KV_EWRONGTYPE);

	/* The same through the metadata ks_lookup returned. */
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), 0);
	n = 99;
	CHECK_INT(hash_strlen_in(ks, KEY(DEFNS, "h"), &info, "f", 1, &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(hash_strlen_in(ks, KEY(DEFNS, "h"), &info, "zz", 2, &n), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "s"), &info), 0);
	CHECK_INT(hash_strlen_in(ks, KEY(DEFNS, "s"), &info, "f", 1, &n), -KV_EWRONGTYPE);
	/* A remembered empty hash has no fields (and nothing is read). */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "he"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "he"), &info), 0);
	CHECK(info.empty);
	CHECK_INT(hash_strlen_in(ks, KEY(DEFNS, "he"), &info, "f", 1, &n), -ENOENT);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "he")), 0);
}

static void test_incrby(void)
{
	int64_t n = 0;
	double d = 0;
	bool created;
	/* A missing key and field count from 0 (redis_hash.cc IncrBy). */
	CHECK_INT(hash_incrby(ks, KEY(DEFNS, "hi"), "f", 1, 5, &n), 0);
	CHECK_INT(n, 5);
	check_meta("hi", 1);
	check_field_raw("hi", "f", "5");
	CHECK_INT(hash_incrby(ks, KEY(DEFNS, "hi"), "f", 1, -7, &n), 0);
	CHECK_INT(n, -2);
	check_field_raw("hi", "f", "-2");
	CHECK_INT(hash_incrby(ks, KEY(DEFNS, "hi"), "g", 1, 1, &n), 0);
	check_meta("hi", 2);
	/* Not an integer (an empty field neither), overflow: unchanged. */
	static const char *const bad[] = {"", " 1", "1.5", "x", "99999999999999999999"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK_INT(hash_set(ks, KEY(DEFNS, "hi"), "b", 1, bad[i], strlen(bad[i]), &created),
			  0);
		CHECK_INT(hash_incrby(ks, KEY(DEFNS, "hi"), "b", 1, 1, &n), -EINVAL);
		check_field_raw("hi", "b", bad[i]);
	}
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hi"), "o", 1, "9223372036854775807", 19, &created), 0);
	CHECK_INT(hash_incrby(ks, KEY(DEFNS, "hi"), "o", 1, 1, &n), -ERANGE);
	check_field_raw("hi", "o", "9223372036854775807");
	check_meta("hi", 4);
	/* HINCRBYFLOAT: "%f" text, as Kvrocks stores it. */
	CHECK_INT(hash_incrbyfloat(ks, KEY(DEFNS, "hi"), "x", 1, 0.25, &d), 0);
	CHECK(d == 0.25);
	check_field_raw("hi", "x", "0.250000");
	CHECK_INT(hash_incrbyfloat(ks, KEY(DEFNS, "hi"), "f", 1, 1.5, &d), 0);
	check_field_raw("hi", "f", "-0.500000");
	CHECK_INT(hash_incrbyfloat(ks, KEY(DEFNS, "hi"), "x", 1, INFINITY, &d), -ERANGE);
	CHECK_INT(hash_incrbyfloat(ks, KEY(DEFNS, "hi"), "x", 1, NAN, &d), -EINVAL);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hi"), "b", 1, "1.5x", 4, &created), 0);
	CHECK_INT(hash_incrbyfloat(ks, KEY(DEFNS, "hi"), "b", 1, 1, &d), -EINVAL);
	check_field_raw("hi", "b", "1.5x");
	check_field_raw("hi", "x", "0.250000");
	/* Wrong type; a remembered empty hash becomes a live one. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "hs"), "1", 1, 0), 0);
	CHECK_INT(hash_incrby(ks, KEY(DEFNS, "hs"), "f", 1, 1, &n), -KV_EWRONGTYPE);
	CHECK_INT(hash_incrbyfloat(ks, KEY(DEFNS, "hs"), "f", 1, 1, &d), -KV_EWRONGTYPE);
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "he"), KV_TYPE_HASH), 0);
	CHECK_INT(hash_incrby(ks, KEY(DEFNS, "he"), "f", 1, 1, &n), 0);
	check_meta("he", 1);
}

static void test_rename_field(void)
{
	CHECK_INT(hash_set(ks, KEY(DEFNS, "r"), "a", 1, "1", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "r"), "b", 1, "2", 1, NULL), 0);
	/* To a new name: size unchanged. */
	CHECK_INT(hash_rename_field(ks, KEY(DEFNS, "r"), "a", 1, "c", 1), 0);
	check_meta("r", 2);
	check_field_raw("r", "a", NULL);
	check_field_raw("r", "c", "1");
	/* Onto an existing field: replaced, size drops by one. */
	CHECK_INT(hash_rename_field(ks, KEY(DEFNS, "r"), "c", 1, "b", 1), 0);
	check_meta("r", 1);
	check_field_raw("r", "b", "1");
	check_field_raw("r", "c", NULL);
	/* Onto itself: nothing changes. */
	CHECK_INT(hash_rename_field(ks, KEY(DEFNS, "r"), "b", 1, "b", 1), 0);
	check_meta("r", 1);
	check_field_raw("r", "b", "1");
	/* Missing field, missing key, wrong type. */
	CHECK_INT(hash_rename_field(ks, KEY(DEFNS, "r"), "zz", 2, "y", 1), -ENOENT);
	CHECK_INT(hash_rename_field(ks, KEY(DEFNS, "nope"), "a", 1, "y", 1), -ENOENT);
	CHECK_INT(hash_rename_field(ks, KEY(DEFNS, "s"), "a", 1, "y", 1), -KV_EWRONGTYPE);
	CHECK_INT(
	    hash_rename_field(ks, &(struct ks_key){"", 0, "r", 1, NULL, NULL}, "b", 1, "y", 1),
	    -EINVAL);
	check_meta("r", 1);
}

static void test_move_field(void)
{
	struct ks_info info;
	CHECK_INT(hash_set(ks, KEY(DEFNS, "m1"), "a", 1, "1", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "m1"), "b", 1, "2", 1, NULL), 0);
	/* Into a missing hash that is remembered as empty: created, record gone. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "m2"), KV_TYPE_HASH), 0);
	CHECK_INT(hash_move_field(ks, KEY(DEFNS, "m1"), "a", 1, KEY(DEFNS, "m2"), "x", 1, 0), 0);
	check_meta("m1", 1);
	check_meta("m2", 1);
	check_field_raw("m1", "a", NULL);
	check_field_raw("m2", "x", "1");
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "m2"), &info), 0);
	CHECK(!info.empty);
	/* Onto an existing field: replaced; the source's last field goes and
	 * HASH_KEEP_EMPTY keeps the source as an empty hash. */
	CHECK_INT(hash_move_field(ks, KEY(DEFNS, "m1"), "b", 1, KEY(DEFNS, "m2"), "x", 1,
				  HASH_KEEP_EMPTY),
		  0);
	check_meta("m2", 1);
	check_field_raw("m2", "x", "2");
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "m1"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_HASH);
	/* Back, to a new field, without KEEP_EMPTY: the source vanishes. */
	CHECK_INT(hash_move_field(ks, KEY(DEFNS, "m2"), "x", 1, KEY(DEFNS, "m1"), "y", 1, 0), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "m2"), &info), -ENOENT);
	check_meta("m1", 1);
	check_field_raw("m1", "y", "2");
	/* Across namespaces. */
	CHECK_INT(hash_move_field(ks, KEY(DEFNS, "m1"), "y", 1, KEY("other", "m3"), "z", 1, 0), 0);
	CHECK_INT(hash_get(ks, KEY("other", "m3"), "z", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "2", 1);
	/* Within one key it is a rename. */
	CHECK_INT(hash_move_field(ks, KEY("other", "m3"), "z", 1, KEY("other", "m3"), "w", 1, 0),
		  0);
	CHECK_INT(hash_get(ks, KEY("other", "m3"), "w", 1, &v), 0);
	uint64_t n;
	CHECK_INT(hash_len(ks, KEY("other", "m3"), &n), 0);
	CHECK_INT(n, 1);
	/* Errors change nothing. */
	CHECK_INT(hash_move_field(ks, KEY("other", "m3"), "nope", 4, KEY(DEFNS, "m9"), "a", 1, 0),
		  -ENOENT);
	CHECK_INT(hash_move_field(ks, KEY(DEFNS, "nope"), "w", 1, KEY(DEFNS, "m9"), "a", 1, 0),
		  -ENOENT);
	CHECK_INT(hash_move_field(ks, KEY("other", "m3"), "w", 1, KEY(DEFNS, "s"), "a", 1, 0),
		  -KV_EWRONGTYPE);
	CHECK_INT(hash_move_field(ks, KEY(DEFNS, "s"), "w", 1, KEY(DEFNS, "m9"), "a", 1, 0),
		  -KV_EWRONGTYPE);
	CHECK_INT(hash_move_field(ks, KEY("other", "m3"), "w", 1,
				  &(struct ks_key){"", 0, "x", 1, NULL, NULL}, "a", 1, 0),
		  -EINVAL);
	CHECK_INT(hash_len(ks, KEY("other", "m3"), &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "m9"), &info), -ENOENT);
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
}

/* Fields of a hash from a cursor, joined with ','. */
static int list_fields(const struct ks_key *k, const char *after, char *out, size_t cap)
{
	int err = 1;
	struct hash_iter *it = hash_iter_new(ks, k, after, after ? strlen(after) : 0, &err);
	const char *f, *val;
	size_t fn, vn;
	int rc;
	out[0] = '\0';
	if (!it)
		return err;
	CHECK_INT(err, 0);
	while ((rc = hash_iter_next(it, &f, &fn, &val, &vn)) == 1) {
		if (out[0])
			strncat(out, ",", cap - strlen(out) - 1);
		strncat(out, f, fn);
		strncat(out, "=", cap - strlen(out) - 1);
		strncat(out, val, vn);
	}
	CHECK_INT(rc, 0);
	/* Calling next again at the end stays at the end. */
	CHECK_INT(hash_iter_next(it, &f, &fn, &val, &vn), 0);
	hash_iter_free(it);
	return 0;
}

static void test_iter(void)
{
	char got[256];
	const char *fields[] = {"b", "a", "ab", "c", "B"};
	for (int i = 0; i < 5; i++)
		CHECK_INT(hash_set(ks, KEY(DEFNS, "it"), fields[i], strlen(fields[i]), fields[i],
				   strlen(fields[i]), NULL),
			  0);
	/* Neighbouring keys must not leak in: "i", "itx" and another version. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "i"), "zz", 2, "1", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "itx"), "zz", 2, "1", 1, NULL), 0);
	CHECK_INT(list_fields(KEY(DEFNS, "it"), NULL, got, sizeof(got)), 0);
	CHECK(strcmp(got, "B=B,a=a,ab=ab,b=b,c=c") == 0);
	CHECK_INT(list_fields(KEY(DEFNS, "it"), "a", got, sizeof(got)), 0);
	CHECK(strcmp(got, "ab=ab,b=b,c=c") == 0);
	CHECK_INT(list_fields(KEY(DEFNS, "it"), "aa", got, sizeof(got)), 0);
	CHECK(strcmp(got, "ab=ab,b=b,c=c") == 0);
	CHECK_INT(list_fields(KEY(DEFNS, "it"), "", got, sizeof(got)), 0);
	CHECK(strcmp(got, "B=B,a=a,ab=ab,b=b,c=c") == 0);
	CHECK_INT(list_fields(KEY(DEFNS, "it"), "c", got, sizeof(got)), 0);
	CHECK(strcmp(got, "") == 0);
	/* Missing key: nothing; wrong type: an error. */
	CHECK_INT(list_fields(KEY(DEFNS, "nope"), NULL, got, sizeof(got)), 0);
	CHECK(strcmp(got, "") == 0);
	CHECK_INT(list_fields(KEY(DEFNS, "s"), NULL, got, sizeof(got)), -KV_EWRONGTYPE);
	CHECK_INT(list_fields(&(struct ks_key){"", 0, "x", 1, NULL, NULL}, NULL, got, sizeof(got)),
		  -EINVAL);
	/* After DEL and re-creation, old fields are not iterated. */
	CHECK_INT(ks_del(ks, KEY(DEFNS, "it")), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "it"), "new", 3, "n", 1, NULL), 0);
	CHECK_INT(list_fields(KEY(DEFNS, "it"), NULL, got, sizeof(got)), 0);
	CHECK(strcmp(got, "new=n") == 0);
}

/* A v0 hash written by hand keeps v0 through every update. */
static void test_v0_updates(void)
{
	unsigned char k[128], val[64], want[64];
	size_t kn = unhex(NS_HEX " 76", k);
	size_t vn = unhex("02 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 01", val);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_METADATA, k, kn, val, vn);
	size_t skn = fixture_sub_key("v", 42, "f", 1, k + 64);
	store_batch_put(b, STORE_CF_DEFAULT, k + 64, skn, "1", 1);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);

	CHECK_INT(hash_set(ks, KEY(DEFNS, "v"), "g", 1, "2", 1, NULL), 0);
	CHECK_INT(raw_get(STORE_CF_METADATA, k, kn, &v), 0);
	size_t wn = unhex("02 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 02", want);
	CHECK_MEM(v.data, v.len, want, wn);
	skn = fixture_sub_key("v", 42, "g", 1, k + 64);
	CHECK_INT(raw_get(STORE_CF_DEFAULT, k + 64, skn, &v), 0);
	CHECK_MEM(v.data, v.len, "2", 1);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "v"), "f", 1, 0), 0);
	CHECK_INT(raw_get(STORE_CF_METADATA, k, kn, &v), 0);
	wn = unhex("02 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 01", want);
	CHECK_MEM(v.data, v.len, want, wn);
	CHECK_INT(hash_rename_field(ks, KEY(DEFNS, "v"), "g", 1, "h", 1), 0);
	CHECK_INT(raw_get(STORE_CF_METADATA, k, kn, &v), 0);
	CHECK_MEM(v.data, v.len, want, wn);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "v"), "h", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "2", 1);
}

static void test_read_only(void)
{
	struct ks_options o = {.read_only = true};
	ks = fixture_reopen_checked(ks, &o);
	if (!ks)
		return;
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "z", 1, NULL), -EROFS);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "h"), "f", 1, 0), -EROFS);
	CHECK_INT(hash_rename_field(ks, KEY(DEFNS, "h"), "f", 1, "q", 1), -EROFS);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "f", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "v2", 2);
}

/* A key read at a snapshot (ks_key.snap) is the key of that moment:
 * its fields, its count and a deleted and re-created key too. */
static void test_snapshot(void)
{
	uint64_t n = 0;
	CHECK_INT(hash_set(ks, KEY(DEFNS, "snap"), "f", 1, "1", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "snap"), "g", 1, "1", 1, NULL), 0);
	struct store_snap *sn = ks_snap_new(ks);
	CHECK(sn != NULL);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "snap"), "f", 1, "2", 1, NULL), 0);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "snap"), "g", 1, 0), 0);
	struct ks_key at = *KEY(DEFNS, "snap");
	at.snap = sn;
	CHECK_INT(hash_get(ks, &at, "f", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "1", 1);
	CHECK_INT(hash_get(ks, &at, "g", 1, &v), 0);
	CHECK_INT(hash_len(ks, &at, &n), 0);
	CHECK_INT((int)n, 2);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "snap"), "f", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "2", 1);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "snap"), "g", 1, &v), -ENOENT);
	/* Deleted and made again (a new version): the snapshot keeps the old. */
	CHECK_INT(ks_del(ks, KEY(DEFNS, "snap")), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "snap"), "h", 1, "3", 1, NULL), 0);
	CHECK_INT(hash_get(ks, &at, "f", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "1", 1);
	CHECK_INT(hash_get(ks, &at, "h", 1, &v), -ENOENT);
	ks_snap_free(ks, sn);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_hash");
	test_set_get();
	test_setnx();
	test_del();
	test_len_exists_strlen();
	test_rename_field();
	test_incrby();
	test_move_field();
	test_iter();
	test_snapshot();
	test_v0_updates();
	test_read_only();
	fixture_done(ks);
	buf_release(&v);
	return check_done("test_hash");
}
