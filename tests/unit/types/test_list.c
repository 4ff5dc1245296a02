/*
 * Unit tests for t_list on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case; the stored bytes
 * against kvrocks-encoding.md sections 6.6 and 12 (RPUSH l a, LPUSH
 * indexes, v0 metadata kept); and a model-based run of random operations
 * checking after each one that head/tail/size match the element sub-keys
 * exactly and the contents match an in-memory model.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_list.h"
#include "types/t_string.h"

#include <inttypes.h>
#include <pthread.h>
#include <unistd.h>

#define BADKEY KEY("", "l")
#define INIT   LIST_INITIAL_INDEX

static struct keyspace *ks;
static struct buf v = BUF_INIT;

/* Sub-key NS | key_len u32 | key | V | index u64, built by hand. */
static size_t sub_key(const char *key, uint64_t ver, uint64_t idx, unsigned char *k)
{
	unsigned char sub[8];
	put_be64(sub, idx);
	return fixture_sub_key(key, ver, sub, 8, k);
}

/* Check the v1 metadata bytes: 83 | 0 x8 | V | size | head | tail. */
static void check_meta(const char *key, uint64_t head, uint64_t tail)
{
	char ends[40];
	snprintf(ends, sizeof(ends), "%016" PRIX64 "%016" PRIX64, head, tail);
	fixture_check_meta(ks, KEY(key), 0x83, tail - head, ends);
}

static void check_elem_raw(const char *key, uint64_t idx, const char *val)
{
	unsigned char k[256];
	size_t kn = sub_key(key, fixture_version(ks, KEY(key)), idx, k);
	int rc = store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v);
	if (!val) {
		CHECK_INT(rc, -ENOENT);
		return;
	}
	CHECK_INT(rc, 0);
	CHECK_MEM(v.data, v.len, val, strlen(val));
}

/* The whole list joined with ',' (via list_range 0 -1). */
static int join_cb(void *arg, uint64_t pos, const char *e, size_t en)
{
	struct buf *out = arg;
	(void)pos;
	if (out->len)
		buf_add(out, ",", 1);
	return buf_add(out, e, en);
}

static struct buf out = BUF_INIT;

static const char *contents(const char *key)
{
	buf_reset(&out);
	buf_add(&out, "", 0);
	if (list_range(ks, KEY(DEFNS, key), 0, -1, join_cb, &out))
		return "(error)";
	return out.data;
}

static void push(const char *key, enum list_where w, const char *csv)
{
	char tmp[256];
	struct list_value vals[32];
	size_t n = 0;
	snprintf(tmp, sizeof(tmp), "%s", csv);
	for (char *s = strtok(tmp, ","); s; s = strtok(NULL, ","))
		vals[n++] = (struct list_value){s, strlen(s)};
	CHECK_INT(list_push(ks, KEY(DEFNS, key), w, vals, n, NULL), 0);
}

static void test_push_bytes(void)
{
	uint64_t len = 0;
	struct list_value a = {"a", 1};
	/* kvrocks-encoding.md 12: RPUSH l a. */
	CHECK_INT(list_push(ks, KEY(DEFNS, "l"), LIST_TAIL, &a, 1, &len), 0);
	CHECK_INT(len, 1);
	uint64_t ver = fixture_version(ks, KEY("l"));
	CHECK((ver >> 11) <= now_us() && (ver >> 11) > now_us() - 60000000);
	unsigned char want[64], k[128];
	size_t wn = unhex("83 00 00 00 00 00 00 00 00", want);
	put_be64(want + wn, ver);
	wn += 8;
	wn += unhex("00 00 00 00 00 00 00 01 7F FF FF FF FF FF FF FF 80 00 00 00 00 00 00 00",
		    want + wn);
	CHECK_INT(fixture_meta_raw(ks, KEY("l"), &v), 0);
	CHECK_MEM(v.data, v.len, want, wn);
	size_t kn = unhex(NS_HEX " 00 00 00 01 6C", k);
	put_be64(k + kn, ver);
	kn += 8;
	kn += unhex("7F FF FF FF FF FF FF FF", k + kn);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), 0);
	CHECK_MEM(v.data, v.len, "\x61", 1);

	/* LPUSH into a new list writes 7F..FE; b c -> c first. */
	push("lp", LIST_HEAD, "b,c");
	check_meta("lp", INIT - 2, INIT);
	check_elem_raw("lp", INIT - 1, "b");
	check_elem_raw("lp", INIT - 2, "c");
	check_elem_raw("lp", INIT, NULL);
	CHECK(strcmp(contents("lp"), "c,b") == 0);
	/* RPUSH of several, then LPUSH onto the same list. */
	push("l", LIST_TAIL, "b,c");
	push("l", LIST_HEAD, "z");
	check_meta("l", INIT - 1, INIT + 3);
	check_elem_raw("l", INIT - 1, "z");
	check_elem_raw("l", INIT + 2, "c");
	CHECK(strcmp(contents("l"), "z,a,b,c") == 0);
	CHECK(fixture_version(ks, KEY("l")) == ver);
	/* Binary and empty elements. */
	struct list_value bin[2] = {{"x\0y", 3}, {"", 0}};
	CHECK_INT(list_push(ks, KEY(DEFNS, "bin"), LIST_TAIL, bin, 2, &len), 0);
	CHECK_INT(len, 2);
	CHECK_INT(list_index(ks, KEY(DEFNS, "bin"), 0, &v), 0);
	CHECK_MEM(v.data, v.len, "x\0y", 3);
	CHECK_INT(list_index(ks, KEY(DEFNS, "bin"), 1, &v), 0);
	CHECK_INT(v.len, 0);

	/* Wrong type, bad input: nothing written. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "str", 3, 0), 0);
	CHECK_INT(list_push(ks, KEY(DEFNS, "s"), LIST_TAIL, &a, 1, &len), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	CHECK_INT(list_push(ks, KEY(DEFNS, "l"), LIST_TAIL, &a, 0, &len), -EINVAL);
	CHECK_INT(list_push(ks, KEY(DEFNS, "l"), (enum list_where)7, &a, 1, &len), -EINVAL);
	CHECK_INT(list_push(ks, BADKEY, LIST_TAIL, &a, 1, &len), -EINVAL);
	struct list_value big = {"x", (size_t)LIST_VALUE_MAX + 1};
	CHECK_INT(list_push(ks, KEY(DEFNS, "l"), LIST_TAIL, &big, 1, &len), -EFBIG);
	CHECK_INT(list_push(ks, KEY(DEFNS, "nl"), LIST_TAIL, &big, 1, &len), -EFBIG);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "nl"), &info), -ENOENT);
	check_meta("l", INIT - 1, INIT + 3);
	/* A remembered empty list loses its record when pushed into. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "em"), KV_TYPE_LIST), 0);
	CHECK_INT(list_push(ks, KEY(DEFNS, "em"), LIST_TAIL, &a, 1, &len), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "em"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_LIST && info.size == 1);
}

/* list_push_typed: a missing key or a remembered empty list becomes the
 * list; a remembered empty collection of another type is refused and
 * kept, as a live key of another type is. */
static void test_push_typed(void)
{
	uint64_t len = 0;
	struct ks_info info;
	struct list_value ab[2] = {{"a", 1}, {"b", 1}};
	CHECK_INT(list_push_typed(ks, KEY(DEFNS, "t1"), LIST_TAIL, ab, 2, &len), 0);
	CHECK_INT(len, 2);
	check_meta("t1", INIT, INIT + 2);
	CHECK(strcmp(contents("t1"), "a,b") == 0);
	CHECK_INT(list_push_typed(ks, KEY(DEFNS, "t1"), LIST_HEAD, ab, 2, &len), 0);
	CHECK(strcmp(contents("t1"), "b,a,a,b") == 0);
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "te"), KV_TYPE_LIST), 0);
	CHECK_INT(list_push_typed(ks, KEY(DEFNS, "te"), LIST_HEAD, ab, 1, &len), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "te"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_LIST && info.size == 1);
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "th"), KV_TYPE_HASH), 0);
	CHECK_INT(list_push_typed(ks, KEY(DEFNS, "th"), LIST_TAIL, ab, 2, &len), -KV_EWRONGTYPE);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "th"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_HASH);
	CHECK_INT(string_set(ks, KEY(DEFNS, "ts"), "str", 3, 0), 0);
	CHECK_INT(list_push_typed(ks, KEY(DEFNS, "ts"), LIST_TAIL, ab, 1, &len), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY(DEFNS, "ts"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	CHECK_INT(list_push_typed(ks, KEY(DEFNS, "t2"), LIST_TAIL, ab, 0, &len), -EINVAL);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "t2"), &info), -ENOENT);
	/* list_push makes the remembered empty hash the list. */
	CHECK_INT(list_push(ks, KEY(DEFNS, "th"), LIST_TAIL, ab, 1, &len), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "th"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_LIST);
}

static void test_pop(void)
{
	struct ks_info info;
	push("p", LIST_TAIL, "a,b,c");
	CHECK_INT(list_pop(ks, KEY(DEFNS, "p"), LIST_HEAD, 0, &v), 0);
	CHECK_MEM(v.data, v.len, "a", 1);
	check_meta("p", INIT + 1, INIT + 3);
	check_elem_raw("p", INIT, NULL);
	CHECK_INT(list_pop(ks, KEY(DEFNS, "p"), LIST_TAIL, 0, &v), 0);
	CHECK_MEM(v.data, v.len, "c", 1);
	check_meta("p", INIT + 1, INIT + 2);
	check_elem_raw("p", INIT + 2, NULL);
	/* The last one: metadata and element gone. */
	CHECK_INT(list_pop(ks, KEY(DEFNS, "p"), LIST_TAIL, 0, NULL), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("p"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "p"), &info), -ENOENT);
	/* Missing, wrong type, bad where. */
	CHECK_INT(list_pop(ks, KEY(DEFNS, "p"), LIST_HEAD, 0, &v), -ENOENT);
	CHECK_INT(list_pop(ks, KEY(DEFNS, "s"), LIST_HEAD, 0, &v), -KV_EWRONGTYPE);
	CHECK_INT(list_pop(ks, BADKEY, LIST_HEAD, 0, &v), -EINVAL);
	push("p", LIST_TAIL, "x");
	CHECK_INT(list_pop(ks, KEY(DEFNS, "p"), (enum list_where)3, 0, &v), -EINVAL);
	CHECK(strcmp(contents("p"), "x") == 0);
	/* KEEP_EMPTY: remembered as an empty list. */
	CHECK_INT(list_pop(ks, KEY(DEFNS, "p"), LIST_HEAD, LIST_KEEP_EMPTY, &v), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("p"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "p"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_LIST);
	uint64_t n = 9;
	CHECK_INT(list_len(ks, KEY(DEFNS, "p"), &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(list_pop(ks, KEY(DEFNS, "p"), LIST_HEAD, 0, &v), -ENOENT);
}

static void test_index_set(void)
{
	push("ix", LIST_TAIL, "a,b,c");
	CHECK_INT(list_index(ks, KEY(DEFNS, "ix"), 0, &v), 0);
	CHECK_MEM(v.data, v.len, "a", 1);
	CHECK_INT(list_index(ks, KEY(DEFNS, "ix"), -1, &v), 0);
	CHECK_MEM(v.data, v.len, "c", 1);
	CHECK_INT(list_index(ks, KEY(DEFNS, "ix"), -3, &v), 0);
	CHECK_MEM(v.data, v.len, "a", 1);
	CHECK_INT(list_index(ks, KEY(DEFNS, "ix"), 3, &v), -ERANGE);
	CHECK_INT(list_index(ks, KEY(DEFNS, "ix"), -4, &v), -ERANGE);
	CHECK_INT(list_index(ks, KEY(DEFNS, "ix"), INT64_MIN, &v), -ERANGE);
	CHECK_INT(list_index(ks, KEY(DEFNS, "ix"), INT64_MAX, &v), -ERANGE);
	CHECK_INT(list_index(ks, KEY(DEFNS, "nope"), 0, &v), -ENOENT);
	CHECK_INT(list_index(ks, KEY(DEFNS, "s"), 0, &v), -KV_EWRONGTYPE);
	CHECK_INT(list_index(ks, BADKEY, 0, &v), -EINVAL);

	CHECK_INT(list_set(ks, KEY(DEFNS, "ix"), 1, "B", 1), 0);
	CHECK_INT(list_set(ks, KEY(DEFNS, "ix"), -1, "C", 1), 0);
	CHECK(strcmp(contents("ix"), "a,B,C") == 0);
	check_elem_raw("ix", INIT + 1, "B");
	check_meta("ix", INIT, INIT + 3);
	CHECK_INT(list_set(ks, KEY(DEFNS, "ix"), 3, "D", 1), -ERANGE);
	CHECK_INT(list_set(ks, KEY(DEFNS, "ix"), -4, "D", 1), -ERANGE);
	CHECK_INT(list_set(ks, KEY(DEFNS, "ix"), 0, "x", (size_t)LIST_VALUE_MAX + 1), -EFBIG);
	CHECK_INT(list_set(ks, KEY(DEFNS, "nope"), 0, "D", 1), -ENOENT);
	CHECK_INT(list_set(ks, KEY(DEFNS, "s"), 0, "D", 1), -KV_EWRONGTYPE);
	CHECK_INT(list_set(ks, BADKEY, 0, "D", 1), -EINVAL);
	CHECK(strcmp(contents("ix"), "a,B,C") == 0);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "nope"), &info), -ENOENT);
}

static void test_insert(void)
{
	uint64_t len = 0;
	push("in", LIST_TAIL, "a,b,c,d");
	/* Pivot near the tail: the tail side moves (tail grows). */
	CHECK_INT(list_insert(ks, KEY(DEFNS, "in"), true, "d", 1, "X", 1, &len), 0);
	CHECK_INT(len, 5);
	CHECK(strcmp(contents("in"), "a,b,c,X,d") == 0);
	check_meta("in", INIT, INIT + 5);
	/* Pivot near the head: the head side moves (head shrinks). */
	CHECK_INT(list_insert(ks, KEY(DEFNS, "in"), false, "a", 1, "Y", 1, &len), 0);
	CHECK(strcmp(contents("in"), "a,Y,b,c,X,d") == 0);
	check_meta("in", INIT - 1, INIT + 5);
	check_elem_raw("in", INIT - 1, "a");
	check_elem_raw("in", INIT, "Y");
	/* First match only; before the head element. */
	CHECK_INT(list_insert(ks, KEY(DEFNS, "in"), true, "a", 1, "0", 1, &len), 0);
	CHECK_INT(len, 7);
	CHECK(strcmp(contents("in"), "0,a,Y,b,c,X,d") == 0);
	/* Errors change nothing. */
	CHECK_INT(list_insert(ks, KEY(DEFNS, "in"), true, "zz", 2, "Q", 1, &len), -ESRCH);
	CHECK_INT(list_insert(ks, KEY(DEFNS, "nope"), true, "a", 1, "Q", 1, &len), -ENOENT);
	CHECK_INT(list_insert(ks, KEY(DEFNS, "s"), true, "a", 1, "Q", 1, &len), -KV_EWRONGTYPE);
	CHECK_INT(list_insert(ks, BADKEY, true, "a", 1, "Q", 1, &len), -EINVAL);
	CHECK_INT(
	    list_insert(ks, KEY(DEFNS, "in"), true, "a", 1, "Q", (size_t)LIST_VALUE_MAX + 1, &len),
	    -EFBIG);
	CHECK(strcmp(contents("in"), "0,a,Y,b,c,X,d") == 0);
	check_meta("in", INIT - 2, INIT + 5);

	/* insert_at: append, prepend, middle, negative. */
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ia"), 0, "b", 1, &len), 0);
	check_meta("ia", INIT, INIT + 1); /* a new list starts as RPUSH would */
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ia"), 1, "d", 1, &len), 0);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ia"), 0, "a", 1, &len), 0);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ia"), 2, "c", 1, &len), 0);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ia"), -1, "c2", 2, &len), 0);
	CHECK_INT(len, 5);
	CHECK(strcmp(contents("ia"), "a,b,c,c2,d") == 0);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ia"), 6, "z", 1, &len), -ERANGE);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ia"), -6, "z", 1, &len), -ERANGE);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "nope"), 1, "z", 1, &len), -ERANGE);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "nope"), -1, "z", 1, &len), -ERANGE);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "s"), 0, "z", 1, &len), -KV_EWRONGTYPE);
	CHECK_INT(list_insert_at(ks, BADKEY, 0, "z", 1, &len), -EINVAL);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ia"), 0, "z", (size_t)LIST_VALUE_MAX + 1, &len),
		  -EFBIG);
	CHECK(strcmp(contents("ia"), "a,b,c,c2,d") == 0);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "nope"), &info), -ENOENT);
	/* Into a remembered empty list: created, record gone. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "ie"), KV_TYPE_LIST), 0);
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ie"), 0, "a", 1, &len), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ie"), &info), 0);
	CHECK(!info.empty && info.size == 1);
}

static void test_remove_at(void)
{
	struct ks_info info;
	push("ra", LIST_TAIL, "a,b,c,d,e");
	/* Near the tail: the later elements move down, tail shrinks. */
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "ra"), 3, 0, &v), 0);
	CHECK_MEM(v.data, v.len, "d", 1);
	CHECK(strcmp(contents("ra"), "a,b,c,e") == 0);
	check_meta("ra", INIT, INIT + 4);
	check_elem_raw("ra", INIT + 3, "e");
	check_elem_raw("ra", INIT + 4, NULL);
	/* Near the head: the earlier elements move up, head grows. */
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "ra"), 1, 0, NULL), 0);
	CHECK(strcmp(contents("ra"), "a,c,e") == 0);
	check_meta("ra", INIT + 1, INIT + 4);
	check_elem_raw("ra", INIT, NULL);
	check_elem_raw("ra", INIT + 1, "a");
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "ra"), -1, 0, &v), 0);
	CHECK_MEM(v.data, v.len, "e", 1);
	CHECK(strcmp(contents("ra"), "a,c") == 0);
	/* Errors change nothing. */
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "ra"), 2, 0, &v), -ERANGE);
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "ra"), -3, 0, &v), -ERANGE);
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "nope"), 0, 0, &v), -ENOENT);
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "s"), 0, 0, &v), -KV_EWRONGTYPE);
	CHECK_INT(list_remove_at(ks, BADKEY, 0, 0, &v), -EINVAL);
	CHECK(strcmp(contents("ra"), "a,c") == 0);
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "ra"), 0, 0, NULL), 0);
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "ra"), 0, LIST_KEEP_EMPTY, NULL), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("ra"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ra"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_LIST);
}

static void test_rem(void)
{
	uint64_t n = 99;
	push("rm", LIST_TAIL, "x,a,x,b,x,c,x");
	CHECK_INT(list_rem(ks, KEY(DEFNS, "rm"), 2, "x", 1, 0, &n), 0);
	CHECK_INT(n, 2);
	CHECK(strcmp(contents("rm"), "a,b,x,c,x") == 0);
	CHECK_INT(list_rem(ks, KEY(DEFNS, "rm"), -1, "x", 1, 0, &n), 0);
	CHECK_INT(n, 1);
	CHECK(strcmp(contents("rm"), "a,b,x,c") == 0);
	CHECK_INT(list_rem(ks, KEY(DEFNS, "rm"), 0, "zz", 2, 0, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(list_rem(ks, KEY(DEFNS, "rm"), 0, "x", 1, 0, &n), 0);
	CHECK_INT(n, 1);
	CHECK(strcmp(contents("rm"), "a,b,c") == 0);
	uint64_t h, t;
	CHECK_INT(fixture_meta_raw(ks, KEY("rm"), &v), 0);
	h = get_be64(v.data + 25);
	t = get_be64(v.data + 33);
	CHECK_INT(t - h, 3);
	CHECK_INT(list_rem(ks, KEY(DEFNS, "nope"), 0, "x", 1, 0, &n), -ENOENT);
	CHECK_INT(list_rem(ks, KEY(DEFNS, "s"), 0, "x", 1, 0, &n), -KV_EWRONGTYPE);
	CHECK_INT(list_rem(ks, BADKEY, 0, "x", 1, 0, &n), -EINVAL);
	CHECK(strcmp(contents("rm"), "a,b,c") == 0);
	/* Removing everything; INT64_MIN as a count. */
	push("rall", LIST_TAIL, "q,q,q");
	CHECK_INT(list_rem(ks, KEY(DEFNS, "rall"), INT64_MIN, "q", 1, 0, &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(fixture_meta_raw(ks, KEY("rall"), &v), -ENOENT);
}

static void test_trim_range_len(void)
{
	struct ks_info info;
	uint64_t n = 0;
	push("tr", LIST_TAIL, "a,b,c,d,e,f");
	CHECK_INT(list_trim(ks, KEY(DEFNS, "tr"), 1, -2, 0), 0);
	CHECK(strcmp(contents("tr"), "b,c,d,e") == 0);
	check_meta("tr", INIT + 1, INIT + 5);
	check_elem_raw("tr", INIT, NULL);
	check_elem_raw("tr", INIT + 5, NULL);
	CHECK_INT(list_trim(ks, KEY(DEFNS, "tr"), -100, 100, 0), 0); /* keeps all */
	CHECK(strcmp(contents("tr"), "b,c,d,e") == 0);
	CHECK_INT(list_trim(ks, KEY(DEFNS, "nope"), 0, 1, 0), -ENOENT);
	CHECK_INT(list_trim(ks, KEY(DEFNS, "s"), 0, 1, 0), -KV_EWRONGTYPE);
	CHECK_INT(list_trim(ks, BADKEY, 0, 1, 0), -EINVAL);
	/* start past the end empties it (Kvrocks leaves head past tail here;
	 * kvfs deletes the key). */
	CHECK_INT(list_trim(ks, KEY(DEFNS, "tr"), 7, 10, LIST_KEEP_EMPTY), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("tr"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "tr"), &info), 0);
	CHECK(info.empty);
	push("tr2", LIST_TAIL, "a,b");
	CHECK_INT(list_trim(ks, KEY(DEFNS, "tr2"), 1, 0, 0), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "tr2"), &info), -ENOENT);

	push("rg", LIST_TAIL, "a,b,c,d");
	buf_reset(&out);
	CHECK_INT(list_range(ks, KEY(DEFNS, "rg"), 1, 2, join_cb, &out), 0);
	CHECK_MEM(out.data, out.len, "b,c", 3);
	buf_reset(&out);
	CHECK_INT(list_range(ks, KEY(DEFNS, "rg"), -2, 100, join_cb, &out), 0);
	CHECK_MEM(out.data, out.len, "c,d", 3);
	buf_reset(&out);
	CHECK_INT(list_range(ks, KEY(DEFNS, "rg"), INT64_MIN, INT64_MAX, join_cb, &out), 0);
	CHECK_MEM(out.data, out.len, "a,b,c,d", 7);
	buf_reset(&out);
	CHECK_INT(list_range(ks, KEY(DEFNS, "rg"), 3, 1, join_cb, &out), 0);
	CHECK_INT(list_range(ks, KEY(DEFNS, "rg"), 4, 10, join_cb, &out), 0);
	CHECK_INT(list_range(ks, KEY(DEFNS, "nope"), 0, -1, join_cb, &out), 0);
	CHECK_INT(out.len, 0);
	CHECK_INT(list_range(ks, KEY(DEFNS, "s"), 0, -1, join_cb, &out), -KV_EWRONGTYPE);
	CHECK_INT(list_range(ks, BADKEY, 0, -1, join_cb, &out), -EINVAL);

	CHECK_INT(list_len(ks, KEY(DEFNS, "rg"), &n), 0);
	CHECK_INT(n, 4);
	CHECK_INT(list_len(ks, KEY(DEFNS, "nope"), &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(list_len(ks, KEY(DEFNS, "s"), &n), -KV_EWRONGTYPE);
	CHECK_INT(list_len(ks, BADKEY, &n), -EINVAL);
}

static int stop_cb(void *arg, uint64_t pos, const char *e, size_t en)
{
	(void)e;
	(void)en;
	*(uint64_t *)arg = pos;
	return pos == 1 ? 42 : 0;
}

static void test_iter(void)
{
	int err = 1;
	uint64_t pos, seen = 0;
	const char *e;
	size_t en;
	struct list_iter *it = list_iter_new(ks, KEY(DEFNS, "rg"), 2, &err);
	CHECK_INT(err, 0);
	CHECK(it != NULL);
	if (it) {
		CHECK_INT(list_iter_next(it, &pos, &e, &en), 1);
		CHECK_INT(pos, 2);
		CHECK_MEM(e, en, "c", 1);
		CHECK_INT(list_iter_next(it, &pos, &e, &en), 1);
		CHECK_INT(pos, 3);
		CHECK_INT(list_iter_next(it, &pos, &e, &en), 0);
		CHECK_INT(list_iter_next(it, &pos, &e, &en), 0);
		list_iter_free(it);
	}
	it = list_iter_new(ks, KEY(DEFNS, "rg"), -1, &err);
	CHECK(it && list_iter_next(it, &pos, &e, &en) == 1 && pos == 3);
	list_iter_free(it);
	it = list_iter_new(ks, KEY(DEFNS, "rg"), -100, &err);
	CHECK(it && list_iter_next(it, &pos, &e, &en) == 1 && pos == 0);
	list_iter_free(it);
	it = list_iter_new(ks, KEY(DEFNS, "rg"), 4, &err);
	CHECK(it && list_iter_next(it, &pos, &e, &en) == 0);
	list_iter_free(it);
	it = list_iter_new(ks, KEY(DEFNS, "nope"), 0, &err);
	CHECK(it && err == 0 && list_iter_next(it, &pos, &e, &en) == 0);
	list_iter_free(it);
	it = list_iter_new(ks, KEY(DEFNS, "s"), 0, &err);
	CHECK(it == NULL);
	CHECK_INT(err, -KV_EWRONGTYPE);
	it = list_iter_new(ks, BADKEY, 0, &err);
	CHECK(it == NULL);
	CHECK_INT(err, -EINVAL);
	/* The snapshot: a pop after list_iter_new is not seen. */
	it = list_iter_new(ks, KEY(DEFNS, "rg"), 0, &err);
	CHECK_INT(list_pop(ks, KEY(DEFNS, "rg"), LIST_TAIL, 0, NULL), 0);
	while (it && list_iter_next(it, &pos, &e, &en) == 1)
		seen++;
	CHECK_INT(seen, 4);
	list_iter_free(it);
	/* A callback's non-zero return stops the range. */
	CHECK_INT(list_range(ks, KEY(DEFNS, "rg"), 0, -1, stop_cb, &pos), 42);
	CHECK_INT(pos, 1);
}

static void test_append_at(void)
{
	uint64_t n = 0;
	int err = 1;
	struct ks_info info;
	/* A missing key is created by position 0 only. */
	CHECK_INT(list_append_at(ks, KEY(DEFNS, "ap"), 1, "x", 1, &n), -ERANGE);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ap"), &info), -ENOENT);
	CHECK_INT(list_append_at(ks, KEY(DEFNS, "ap"), 0, "a", 1, &n), 0);
	CHECK_INT(n, 1);
	check_meta("ap", INIT, INIT + 1);
	check_elem_raw("ap", INIT, "a");
	CHECK_INT(list_append_at(ks, KEY(DEFNS, "ap"), 1, "b", 1, &n), 0);
	CHECK_INT(n, 2);
	CHECK(strcmp(contents("ap"), "a,b") == 0);
	/* An existing position, a position past the end: nothing written. */
	CHECK_INT(list_append_at(ks, KEY(DEFNS, "ap"), 1, "c", 1, &n), -EEXIST);
	CHECK_INT(list_append_at(ks, KEY(DEFNS, "ap"), 3, "c", 1, &n), -ERANGE);
	CHECK(strcmp(contents("ap"), "a,b") == 0);
	/* Wrong type, bad input. */
	CHECK_INT(list_append_at(ks, KEY(DEFNS, "s"), 0, "c", 1, &n), -KV_EWRONGTYPE);
	CHECK_INT(list_append_at(ks, BADKEY, 0, "c", 1, &n), -EINVAL);
	CHECK_INT(list_append_at(ks, KEY(DEFNS, "ap"), 2, "c", LIST_VALUE_MAX + 1, &n), -EFBIG);
	/* A remembered empty list loses its record. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "ape"), KV_TYPE_LIST), 0);
	CHECK_INT(list_append_at(ks, KEY(DEFNS, "ape"), 0, "z", 1, NULL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ape"), &info), 0);
	CHECK(!info.empty && info.size == 1);
	/* list_iter_len: the snapshot's length, 0 for a missing key. */
	struct list_iter *it = list_iter_new(ks, KEY(DEFNS, "ap"), 5, &err);
	CHECK(it && list_iter_len(it) == 2);
	list_iter_free(it);
	it = list_iter_new(ks, KEY(DEFNS, "nope"), 0, &err);
	CHECK(it && list_iter_len(it) == 0);
	list_iter_free(it);
}

/* A v0 list written by hand keeps v0 through updates. */
static void test_v0(void)
{
	unsigned char k[128], val[64], want[64];
	size_t kn = unhex(NS_HEX " 76 30", k); /* "v0" */
	size_t vn = unhex("03 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 01"
			  " 00 00 00 00 00 00 00 10 00 00 00 00 00 00 00 11",
			  val);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_METADATA, k, kn, val, vn);
	size_t skn = sub_key("v0", 42, 0x10, k + 64);
	store_batch_put(b, STORE_CF_DEFAULT, k + 64, skn, "a", 1);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);

	push("v0", LIST_HEAD, "z");
	CHECK_INT(fixture_meta_raw(ks, KEY("v0"), &v), 0);
	size_t wn = unhex("03 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 02"
			  " 00 00 00 00 00 00 00 0F 00 00 00 00 00 00 00 11",
			  want);
	CHECK_MEM(v.data, v.len, want, wn);
	skn = sub_key("v0", 42, 0x0F, k + 64);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k + 64, skn, &v), 0);
	CHECK_MEM(v.data, v.len, "z", 1);
	CHECK(strcmp(contents("v0"), "z,a") == 0);
	CHECK_INT(list_pop(ks, KEY(DEFNS, "v0"), LIST_TAIL, 0, &v), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("v0"), &v), 0);
	wn = unhex("03 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 01"
		   " 00 00 00 00 00 00 00 0F 00 00 00 00 00 00 00 10",
		   want);
	CHECK_MEM(v.data, v.len, want, wn);
	/* Corrupt metadata (size disagrees with tail - head) is refused. */
	kn = unhex(NS_HEX " 63", k);
	vn = unhex("83 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 00 00 00 00 05"
		   " 00 00 00 00 00 00 00 10 00 00 00 00 00 00 00 11",
		   val);
	b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_METADATA, k, kn, val, vn);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
	uint64_t n;
	CHECK_INT(list_len(ks, KEY(DEFNS, "c"), &n), -EUCLEAN);
	CHECK_INT(list_pop(ks, KEY(DEFNS, "c"), LIST_HEAD, 0, &v), -EUCLEAN);
}

/* ---- Missing elements and stored counts --------------------------------- */

/* Log lines: stderr goes to a file between log_begin and log_end, which
 * returns the lines' count and leaves them in `logged`. */
static struct buf logged = BUF_INIT;
static FILE *log_file;
static int log_saved = -1;

static void log_begin(void)
{
	fflush(stderr);
	log_file = tmpfile();
	log_saved = dup(2);
	if (log_file)
		dup2(fileno(log_file), 2);
	log_level_current = LOG_LEVEL_ERR;
}

static int log_end(void)
{
	char line[1024];
	int n = 0;
	fflush(stderr);
	log_level_current = -1;
	dup2(log_saved, 2);
	close(log_saved);
	buf_reset(&logged);
	buf_add(&logged, "", 0);
	if (!log_file)
		return -1;
	rewind(log_file);
	while (fgets(line, sizeof(line), log_file)) {
		buf_add(&logged, line, strlen(line));
		n++;
	}
	fclose(log_file);
	return n;
}

/* Did the lines logged last contain s? */
static bool log_has(const char *s)
{
	return logged.data && strstr(logged.data, s) != NULL;
}

/* Delete the record of raw index idx of `key`: a missing element. */
static void hole_make(const char *key, uint64_t idx)
{
	unsigned char k[256];
	size_t kn = sub_key(key, fixture_version(ks, KEY(key)), idx, k);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_delete(b, STORE_CF_DEFAULT, k, kn);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
}

/*
 * Every verb that meets a missing element answers -EUCLEAN with one log
 * line naming the key, the position (as its file name) and the index,
 * and changes nothing; removing by position works across it, and LSET,
 * which reads nothing, writes the element anew.
 */
static void test_holes(void)
{
	uint64_t n = 0;
	int err;

	push("ho", LIST_TAIL, "a,b,c,d");
	hole_make("ho", INIT + 1);
	log_begin();
	CHECK_INT(list_index(ks, KEY(DEFNS, "ho"), 1, &v), -EUCLEAN);
	CHECK_INT(log_end(), 1);
	CHECK(log_has("corrupt record of '__namespace/ho/1': list element 9223372036854775808 is "
		      "missing"));
	CHECK_INT(list_index(ks, KEY(DEFNS, "ho"), 2, &v), 0);
	CHECK_MEM(v.data, v.len, "c", 1);
	log_begin();
	CHECK(strcmp(contents("ho"), "(error)") == 0); /* list_range: -EUCLEAN */
	CHECK_INT(log_end(), 1);
	buf_reset(&out);
	CHECK_INT(list_range(ks, KEY(DEFNS, "ho"), 2, 3, join_cb, &out), 0);
	CHECK_MEM(out.data, out.len, "c,d", 3);
	/* LINSERT: a pivot past the hole, or none at all, meets it. */
	log_begin();
	CHECK_INT(list_insert(ks, KEY(DEFNS, "ho"), true, "d", 1, "x", 1, &n), -EUCLEAN);
	CHECK_INT(list_insert(ks, KEY(DEFNS, "ho"), true, "zz", 2, "x", 1, &n), -EUCLEAN);
	CHECK_INT(log_end(), 2);
	/* An insert whose shift crosses it. */
	log_begin();
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ho"), 2, "x", 1, &n), -EUCLEAN);
	CHECK_INT(log_end(), 1);
	/* LREM reads every element. */
	log_begin();
	CHECK_INT(list_rem(ks, KEY(DEFNS, "ho"), 0, "d", 1, 0, &n), -EUCLEAN);
	CHECK_INT(log_end(), 1);
	check_meta("ho", INIT, INIT + 4);
	check_elem_raw("ho", INIT, "a");
	check_elem_raw("ho", INIT + 1, NULL);
	check_elem_raw("ho", INIT + 2, "c");
	check_elem_raw("ho", INIT + 3, "d");
	/* LPOP of a, then of the missing one: refused, nothing changes. */
	CHECK_INT(list_pop(ks, KEY(DEFNS, "ho"), LIST_HEAD, 0, &v), 0);
	log_begin();
	CHECK_INT(list_pop(ks, KEY(DEFNS, "ho"), LIST_HEAD, 0, &v), -EUCLEAN);
	CHECK_INT(log_end(), 1);
	CHECK(log_has("'__namespace/ho/0': list element 9223372036854775808 is missing"));
	check_meta("ho", INIT + 1, INIT + 4);
	/* LSET writes it. */
	log_begin();
	CHECK_INT(list_set(ks, KEY(DEFNS, "ho"), 0, "B", 1), 0);
	CHECK_INT(log_end(), 0);
	CHECK(strcmp(contents("ho"), "B,c,d") == 0);

	/* The last element missing: an insert that shifts it failed on an
	 * iterator past its end. */
	push("ht", LIST_TAIL, "a,b,c,d");
	hole_make("ht", INIT + 3);
	log_begin();
	CHECK_INT(list_insert_at(ks, KEY(DEFNS, "ht"), 3, "x", 1, &n), -EUCLEAN);
	CHECK_INT(list_insert(ks, KEY(DEFNS, "ht"), false, "zz", 2, "x", 1, &n), -EUCLEAN);
	CHECK_INT(list_rem(ks, KEY(DEFNS, "ht"), -1, "a", 1, 0, &n), -EUCLEAN);
	CHECK_INT(list_pop(ks, KEY(DEFNS, "ht"), LIST_TAIL, 0, &v), -EUCLEAN);
	CHECK_INT(log_end(), 4);
	CHECK(log_has("'__namespace/ht/3': list element 9223372036854775810 is missing"));
	check_meta("ht", INIT, INIT + 4);
	/* Removing it by position works (and meets it). */
	log_begin();
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "ht"), 3, 0, NULL), 0);
	CHECK_INT(log_end(), 1);
	CHECK(strcmp(contents("ht"), "a,b,c") == 0);

	/* A run of three missing: listed as three positions, logged once;
	 * removals walk across it and it stays missing where it moves. */
	push("hr", LIST_TAIL, "a,b,c,d,e,f");
	for (uint64_t i = 1; i <= 3; i++)
		hole_make("hr", INIT + i);
	log_begin();
	struct list_iter *it = list_iter_new(ks, KEY(DEFNS, "hr"), 0, &err);
	uint64_t pos, holes = 0, got = 0;
	const char *e;
	size_t en;
	while (it && list_iter_next(it, &pos, &e, &en) == 1) {
		got++;
		holes += e == NULL;
	}
	list_iter_free(it);
	CHECK_INT(log_end(), 1);
	CHECK(log_has("'__namespace/hr/1': list elements 9223372036854775808 to "
		      "9223372036854775810 are missing"));
	CHECK_INT(got, 6);
	CHECK_INT(holes, 3);
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "hr"), 0, 0, NULL), 0);
	check_meta("hr", INIT + 1, INIT + 6);
	for (uint64_t i = 1; i <= 3; i++)
		check_elem_raw("hr", INIT + i, NULL);
	check_elem_raw("hr", INIT + 4, "e");
	check_elem_raw("hr", INIT + 5, "f");
	/* Remove e (position 3), moving the shorter side: f moves down. */
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "hr"), 3, 0, NULL), 0);
	check_meta("hr", INIT + 1, INIT + 5);
	check_elem_raw("hr", INIT + 4, "f");
	check_elem_raw("hr", INIT + 5, NULL);
	/* Remove position 1 (missing): the head side moves up, a hole with it. */
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "hr"), 1, 0, NULL), 0);
	check_meta("hr", INIT + 2, INIT + 5);
	for (uint64_t i = 0; i <= 3; i++)
		check_elem_raw("hr", INIT + i, NULL);
	check_elem_raw("hr", INIT + 4, "f");
	for (int i = 0; i < 2; i++)
		CHECK_INT(list_remove_at(ks, KEY(DEFNS, "hr"), 0, 0, NULL), 0);
	CHECK(strcmp(contents("hr"), "f") == 0);
	check_meta("hr", INIT + 4, INIT + 5);
}

/* Put a v1 list of `key` with head and tail by hand, with elements at
 * the raw indexes idx[0..n) ("e0", "e1", ...). */
static void list_plant(const char *key, uint64_t head, uint64_t tail, const uint64_t *idx, size_t n)
{
	unsigned char k[256], val[41];
	struct buf mk = BUF_INIT;
	uint64_t ver = 42;
	CHECK_INT(ks_meta_key(ks, KEY(DEFNS, key), &mk), 0);
	val[0] = 0x83;
	put_be64(val + 1, 0);
	put_be64(val + 9, ver);
	put_be64(val + 17, tail - head);
	put_be64(val + 25, head);
	put_be64(val + 33, tail);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_METADATA, mk.data, mk.len, val, sizeof(val));
	for (size_t i = 0; i < n; i++) {
		char e[24];
		snprintf(e, sizeof(e), "e%zu", i);
		size_t kn = sub_key(key, ver, idx[i], k);
		store_batch_put(b, STORE_CF_DEFAULT, k, kn, e, strlen(e));
	}
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
	buf_release(&mk);
}

/*
 * A size the metadata overstates (2^62 elements, three stored) sizes no
 * loop and no batch: every verb is done in steps bounded by the records
 * (a trim deleted 2^62 indexes one by one, a removal in the middle
 * walked 2^61 positions).
 */
static void test_huge_size(void)
{
	const uint64_t big = 1ull << 62, mid = 1ull << 61;
	const uint64_t idx[3] = {0, 1, big - 1};
	uint64_t n = 0, pos;
	const char *e;
	size_t en;
	int err;

	list_plant("hz", 0, big, idx, 3);
	log_level_current = -1;
	CHECK_INT(list_len(ks, KEY(DEFNS, "hz"), &n), 0);
	CHECK_INT(n, big);
	CHECK_INT(list_index(ks, KEY(DEFNS, "hz"), -1, &v), 0);
	CHECK_MEM(v.data, v.len, "e2", 2);
	CHECK_INT(list_index(ks, KEY(DEFNS, "hz"), 5, &v), -EUCLEAN);
	CHECK_INT(list_range(ks, KEY(DEFNS, "hz"), 0, -1, join_cb, &out), -EUCLEAN);
	CHECK_INT(list_rem(ks, KEY(DEFNS, "hz"), 0, "none", 4, 0, &n), -EUCLEAN);
	CHECK_INT(list_insert(ks, KEY(DEFNS, "hz"), true, "none", 4, "x", 1, &n), -EUCLEAN);
	/* A listing hands out the run one position at a time, logged once. */
	struct list_iter *it = list_iter_new(ks, KEY(DEFNS, "hz"), 0, &err);
	for (int i = 0; i < 1000 && it && list_iter_next(it, &pos, &e, &en) == 1; i++)
		CHECK(pos == (uint64_t)i && (i < 2) == (e != NULL));
	list_iter_free(it);
	/* Removing from the middle: one step for the run. The tail side
	 * is shorter by one: the last element moves down. */
	unsigned char k[256];
	size_t kn;
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "hz"), (int64_t)mid, 0, NULL), 0);
	check_meta("hz", 0, big - 1);
	CHECK_INT(list_index(ks, KEY(DEFNS, "hz"), -1, &v), 0);
	CHECK_MEM(v.data, v.len, "e2", 2);
	kn = sub_key("hz", 42, big - 1, k);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), -ENOENT);
	/* From the other side: the first two move up over the run. */
	CHECK_INT(list_remove_at(ks, KEY(DEFNS, "hz"), -(int64_t)mid, 0, NULL), 0);
	check_meta("hz", 1, big - 1);
	CHECK_INT(list_index(ks, KEY(DEFNS, "hz"), 0, &v), 0);
	CHECK_MEM(v.data, v.len, "e0", 2);
	CHECK_INT(list_index(ks, KEY(DEFNS, "hz"), 1, &v), 0);
	CHECK_MEM(v.data, v.len, "e1", 2);
	kn = sub_key("hz", 42, 0, k);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), -ENOENT);
	/* LTRIM deletes the records it finds, not every index. */
	CHECK_INT(list_trim(ks, KEY(DEFNS, "hz"), 0, 0, 0), 0);
	check_meta("hz", 1, 2);
	CHECK(strcmp(contents("hz"), "e0") == 0);
	kn = sub_key("hz", 42, 2, k);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), -ENOENT);
	kn = sub_key("hz", 42, big - 2, k);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), -ENOENT);
}

/* ---- Model-based random test ------------------------------------------ */

#define MODEL_MAX 64

struct model {
	char e[MODEL_MAX * 4][8];
	size_t n;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static void m_insert(struct model *m, size_t p, const char *s)
{
	memmove(m->e[p + 1], m->e[p], (m->n - p) * sizeof(m->e[0]));
	snprintf(m->e[p], sizeof(m->e[p]), "%s", s);
	m->n++;
}

static void m_remove(struct model *m, size_t p)
{
	memmove(m->e[p], m->e[p + 1], (m->n - p - 1) * sizeof(m->e[0]));
	m->n--;
}

/* Stored state vs the model: metadata, every sub-key of the version in
 * [head, tail) exactly once and nothing else, and the values. */
static int check_exact(const char *key, const struct model *m)
{
	int bad = 0;
	struct buf raw = BUF_INIT, prefix = BUF_INIT, upper = BUF_INIT;
	if (m->n == 0) {
		bad |= fixture_meta_raw(ks, KEY(key), &raw) != -ENOENT;
		buf_release(&raw);
		return bad;
	}
	if (fixture_meta_raw(ks, KEY(key), &raw) != 0 || raw.len != 41) {
		buf_release(&raw);
		return 1;
	}
	uint64_t ver = get_be64(raw.data + 9), size = get_be64(raw.data + 17);
	uint64_t head = get_be64(raw.data + 25), tail = get_be64(raw.data + 33);
	bad |= size != m->n || tail - head != size;
	ks_sub_key(ks, KEY(DEFNS, key), ver, NULL, 0, &prefix);
	buf_set(&upper, prefix.data, prefix.len);
	enc_prefix_successor(&upper);
	struct store_iter *it = store_iter_new(ks_store(ks), STORE_CF_DEFAULT, prefix.data,
					       prefix.len, upper.data, upper.len);
	uint64_t want = head, count = 0;
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it), want++) {
		size_t kn, vn;
		const char *k = store_iter_key(it, &kn);
		const char *val = store_iter_value(it, &vn);
		if (kn != prefix.len + 8 || get_be64(k + prefix.len) != want || count >= m->n ||
		    vn != strlen(m->e[count]) || memcmp(val, m->e[count], vn) != 0)
			bad = 1;
		count++;
	}
	bad |= count != m->n;
	store_iter_free(it);
	buf_release(&raw);
	buf_release(&prefix);
	buf_release(&upper);
	return bad;
}

/*
 * Removals by position across missing elements, at random, against a
 * model in which a missing element is a value of its own: after each,
 * the stored indexes of [head, tail) are exactly the model's present
 * elements, and nothing else is stored.
 */
static void test_hole_model(void)
{
	int fails = 0;
	for (int round = 0; round < 300; round++) {
		char key[16], vals[16][24];
		bool present[16];
		size_t n = 2 + check_rnd(&rng_state, 12);
		snprintf(key, sizeof(key), "hm%d", round);
		for (size_t i = 0; i < n; i++) {
			snprintf(vals[i], sizeof(vals[i]), "%zu", i);
			struct list_value lv = {vals[i], strlen(vals[i])};
			CHECK_INT(list_push(ks, KEY(DEFNS, key), LIST_TAIL, &lv, 1, NULL), 0);
		}
		uint64_t head = INIT;
		for (size_t i = 0; i < n; i++) {
			present[i] = check_rnd(&rng_state, 3) != 0;
			if (!present[i])
				hole_make(key, head + i);
		}
		while (n > 1 && !fails) {
			size_t p = check_rnd(&rng_state, n);
			int bad = list_remove_at(ks, KEY(DEFNS, key), (int64_t)p, 0, NULL) != 0;
			memmove(vals[p], vals[p + 1], (n - p - 1) * sizeof(vals[0]));
			memmove(present + p, present + p + 1, (n - p - 1) * sizeof(present[0]));
			n--;
			/* The stored state. */
			struct buf raw = BUF_INIT, prefix = BUF_INIT, upper = BUF_INIT;
			if (fixture_meta_raw(ks, KEY(key), &raw) != 0 || raw.len != 41) {
				fails++;
				buf_release(&raw);
				break;
			}
			uint64_t ver = get_be64(raw.data + 9);
			head = get_be64(raw.data + 25);
			bad |= get_be64(raw.data + 33) - head != n;
			ks_sub_key(ks, KEY(DEFNS, key), ver, NULL, 0, &prefix);
			buf_set(&upper, prefix.data, prefix.len);
			enc_prefix_successor(&upper);
			struct store_iter *it =
			    store_iter_new(ks_store(ks), STORE_CF_DEFAULT, prefix.data, prefix.len,
					   upper.data, upper.len);
			size_t i = 0;
			for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it)) {
				size_t kn, vn;
				const char *k = store_iter_key(it, &kn);
				const char *val = store_iter_value(it, &vn);
				while (i < n && !present[i])
					i++;
				if (i >= n || kn != prefix.len + 8 ||
				    get_be64(k + prefix.len) != head + i || vn != strlen(vals[i]) ||
				    memcmp(val, vals[i], vn) != 0)
					bad = 1;
				i++;
			}
			while (i < n && !present[i])
				i++;
			bad |= i != n;
			store_iter_free(it);
			buf_release(&raw);
			buf_release(&prefix);
			buf_release(&upper);
			if (bad && fails++ < 5)
				fprintf(stderr, "hole model: round %d, removed %zu\n", round, p);
		}
	}
	CHECK_INT(fails, 0);
}

static void test_model(void)
{
	static struct model m;
	char val[8];
	int fails = 0;
	const char *key = "model";

	for (int op = 0; op < 4000; op++) {
		int rc = 0, what = (int)check_rnd(&rng_state, 11);
		snprintf(val, sizeof(val), "%c", (char)('a' + check_rnd(&rng_state, 4)));
		if (m.n >= MODEL_MAX && what <= 2)
			what = 5;
		switch (what) {
		case 0: /* LPUSH / RPUSH */
		case 1: {
			struct list_value lv = {val, strlen(val)};
			rc = list_push(ks, KEY(DEFNS, key), what ? LIST_TAIL : LIST_HEAD, &lv, 1,
				       NULL);
			m_insert(&m, what ? m.n : 0, val);
			break;
		}
		case 2: { /* insert_at */
			size_t p = (size_t)check_rnd(&rng_state, m.n + 1);
			rc =
			    list_insert_at(ks, KEY(DEFNS, key), (int64_t)p, val, strlen(val), NULL);
			m_insert(&m, p, val);
			break;
		}
		case 3: { /* LINSERT */
			size_t p;
			bool before = check_rnd(&rng_state, 2);
			for (p = 0; p < m.n && strcmp(m.e[p], "a") != 0; p++)
				;
			rc = list_insert(ks, KEY(DEFNS, key), before, "a", 1, val, strlen(val),
					 NULL);
			if (!m.n)
				rc = rc == -ENOENT ? 0 : rc;
			else if (p == m.n)
				rc = rc == -ESRCH ? 0 : rc;
			else
				m_insert(&m, before ? p : p + 1, val);
			break;
		}
		case 4: { /* LPOP / RPOP */
			bool tail = check_rnd(&rng_state, 2);
			rc = list_pop(ks, KEY(DEFNS, key), tail ? LIST_TAIL : LIST_HEAD, 0, &v);
			if (!m.n) {
				rc = rc == -ENOENT ? 0 : rc;
			} else {
				size_t p = tail ? m.n - 1 : 0;
				if (strcmp(v.data, m.e[p]) != 0)
					rc = 1;
				m_remove(&m, p);
			}
			break;
		}
		case 5: { /* remove_at */
			if (!m.n) {
				rc = list_remove_at(ks, KEY(DEFNS, key), 0, 0, NULL);
				rc = rc == -ENOENT ? 0 : rc;
				break;
			}
			size_t p = (size_t)check_rnd(&rng_state, m.n);
			rc = list_remove_at(ks, KEY(DEFNS, key), (int64_t)p, 0, &v);
			if (!rc && strcmp(v.data, m.e[p]) != 0)
				rc = 1;
			m_remove(&m, p);
			break;
		}
		case 6: { /* LREM */
			int64_t count = (int64_t)check_rnd(&rng_state, 5) - 2;
			uint64_t removed = 0, want = 0,
				 lim = count < 0 ? (uint64_t)-count : (uint64_t)count;
			rc = list_rem(ks, KEY(DEFNS, key), count, val, strlen(val), 0, &removed);
			if (!m.n) {
				rc = rc == -ENOENT ? 0 : rc;
				break;
			}
			if (count >= 0) {
				for (size_t p = 0; p < m.n && (!lim || want < lim);)
					if (strcmp(m.e[p], val) == 0) {
						m_remove(&m, p);
						want++;
					} else {
						p++;
					}
			} else {
				for (size_t p = m.n; p > 0 && want < lim; p--)
					if (strcmp(m.e[p - 1], val) == 0) {
						m_remove(&m, p - 1);
						want++;
					}
			}
			if (removed != want)
				rc = 1;
			break;
		}
		case 7: { /* LSET */
			int64_t p = (int64_t)check_rnd(&rng_state, m.n + 2) - 1;
			rc = list_set(ks, KEY(DEFNS, key), p, val, strlen(val));
			if (!m.n) {
				rc = rc == -ENOENT ? 0 : rc;
			} else if (p >= (int64_t)m.n) {
				rc = rc == -ERANGE ? 0 : rc;
			} else {
				size_t q = p < 0 ? m.n - 1 : (size_t)p;
				snprintf(m.e[q], sizeof(m.e[q]), "%s", val);
			}
			break;
		}
		case 8: { /* LTRIM, rarely everything */
			if (check_rnd(&rng_state, 4))
				break;
			int64_t s = (int64_t)check_rnd(&rng_state, 4) - 1,
				e = (int64_t)check_rnd(&rng_state, m.n + 3) - 2;
			rc = list_trim(ks, KEY(DEFNS, key), s, e, 0);
			if (!m.n) {
				rc = rc == -ENOENT ? 0 : rc;
				break;
			}
			int64_t n = (int64_t)m.n, a = s < 0 ? s + n : s, z = e < 0 ? e + n : e;
			if (a < 0)
				a = 0;
			if (a > z || a >= n) {
				m.n = 0;
			} else {
				if (z >= n)
					z = n - 1;
				memmove(m.e[0], m.e[a], (size_t)(z - a + 1) * sizeof(m.e[0]));
				m.n = (size_t)(z - a + 1);
			}
			break;
		}
		default: { /* LINDEX */
			if (!m.n)
				break;
			int64_t p = (int64_t)check_rnd(&rng_state, m.n * 2) - (int64_t)m.n;
			rc = list_index(ks, KEY(DEFNS, key), p, &v);
			size_t q = p < 0 ? (size_t)(p + (int64_t)m.n) : (size_t)p;
			if (!rc && strcmp(v.data, m.e[q]) != 0)
				rc = 1;
			break;
		}
		}
		if (rc || check_exact(key, &m)) {
			if (fails++ < 5)
				fprintf(stderr, "model: op %d (kind %d) rc %d, list of %zu\n", op,
					what, rc, m.n);
		}
	}
	CHECK_INT(fails, 0);
}

/* Threads pushing and popping one list: the lock keeps head/tail exact. */
struct worker {
	int id;
	int pushed, popped;
};

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	struct buf popped = BUF_INIT;
	char val[16];
	for (int i = 0; i < 300; i++) {
		snprintf(val, sizeof(val), "%d.%d", w->id, i);
		struct list_value lv = {val, strlen(val)};
		if (list_push(ks, KEY(DEFNS, "conc"), i % 2 ? LIST_HEAD : LIST_TAIL, &lv, 1,
			      NULL) == 0)
			w->pushed++;
		if (i % 3 == 0 && list_pop(ks, KEY(DEFNS, "conc"), LIST_HEAD, 0, &popped) == 0)
			w->popped++;
		if (i % 7 == 0 && list_insert_at(ks, KEY(DEFNS, "conc"), 1, "m", 1, NULL) == 0)
			w->pushed++;
		if (i % 11 == 0 && list_remove_at(ks, KEY(DEFNS, "conc"), 1, 0, NULL) == 0)
			w->popped++;
	}
	buf_release(&popped);
	return NULL;
}

static void test_concurrent(void)
{
	pthread_t th[4];
	struct worker w[4];
	int net = 0;
	for (int i = 0; i < 4; i++) {
		w[i] = (struct worker){i, 0, 0};
		pthread_create(&th[i], NULL, worker_run, &w[i]);
	}
	for (int i = 0; i < 4; i++) {
		pthread_join(th[i], NULL);
		net += w[i].pushed - w[i].popped;
	}
	uint64_t n = 0, count = 0, pos, want = 0;
	const char *e;
	size_t en;
	int err;
	CHECK_INT(list_len(ks, KEY(DEFNS, "conc"), &n), 0);
	CHECK_INT(n, net);
	struct list_iter *it = list_iter_new(ks, KEY(DEFNS, "conc"), 0, &err);
	while (it && list_iter_next(it, &pos, &e, &en) == 1)
		count += pos == want++;
	list_iter_free(it);
	CHECK_INT(count, n);
}

/* In cluster mode the keys carry the slot: NS 2F 96 "foo". */
static void test_cluster(void)
{
	struct ks_options o = {.cluster = true};
	ks = fixture_reopen_checked(ks, &o);
	if (!ks)
		return;
	struct list_value a = {"a", 1};
	CHECK_INT(list_push(ks, KEY(DEFNS, "foo"), LIST_TAIL, &a, 1, NULL), 0);
	unsigned char k[128];
	size_t kn = unhex(NS_HEX " 2F 96 66 6F 6F", k);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_METADATA, k, kn, &v), 0);
	CHECK_INT(v.len, 41);
	uint64_t ver = v.len == 41 ? get_be64(v.data + 9) : 0;
	kn = unhex(NS_HEX " 2F 96 00 00 00 03 66 6F 6F", k);
	put_be64(k + kn, ver);
	kn += 8;
	kn += unhex("7F FF FF FF FF FF FF FF", k + kn);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), 0);
	CHECK_MEM(v.data, v.len, "a", 1);
	CHECK_INT(list_index(ks, KEY(DEFNS, "foo"), 0, &v), 0);
	CHECK_MEM(v.data, v.len, "a", 1);
}

/* LINSERT of several values in one batch: order, the side that moves,
 * the stored indexes; no pivot, no key, wrong type: nothing changes. */
static void test_insert_vals(void)
{
	uint64_t len = 0;
	struct list_value ab[2] = {{"a", 1}, {"b", 1}};
	push("iv", LIST_TAIL, "p,q,r,s,t");
	/* Before the head: the head side moves 2 down. */
	CHECK_INT(list_insert_vals(ks, KEY(DEFNS, "iv"), true, "p", 1, ab, 2, &len), 0);
	CHECK_INT(len, 7);
	CHECK(strcmp(contents("iv"), "a,b,p,q,r,s,t") == 0);
	check_meta("iv", INIT - 2, INIT + 5);
	check_elem_raw("iv", INIT - 2, "a");
	check_elem_raw("iv", INIT - 1, "b");
	check_elem_raw("iv", INIT, "p");
	/* After an element near the tail: the tail side moves 2 up; the
	 * values in reverse, as two LINSERT AFTER s leave them. */
	CHECK_INT(list_insert_vals(ks, KEY(DEFNS, "iv"), false, "s", 1, ab, 2, &len), 0);
	CHECK(strcmp(contents("iv"), "a,b,p,q,r,s,b,a,t") == 0);
	check_meta("iv", INIT - 2, INIT + 7);
	check_elem_raw("iv", INIT + 4, "b");
	check_elem_raw("iv", INIT + 5, "a");
	check_elem_raw("iv", INIT + 6, "t");
	/* After the first of two equal elements, near the head: the head
	 * side moves (elements before and at the pivot). */
	struct list_value xyz[3] = {{"x", 1}, {"", 0}, {"z\nz", 3}};
	CHECK_INT(list_insert_vals(ks, KEY(DEFNS, "iv"), false, "b", 1, xyz, 3, &len), 0);
	CHECK_INT(len, 12);
	CHECK(strcmp(contents("iv"), "a,b,z\nz,,x,p,q,r,s,b,a,t") == 0);
	check_meta("iv", INIT - 5, INIT + 7);
	check_elem_raw("iv", INIT - 5, "a");
	check_elem_raw("iv", INIT - 4, "b");
	check_elem_raw("iv", INIT - 3, "z\nz");
	check_elem_raw("iv", INIT - 2, "");
	check_elem_raw("iv", INIT - 1, "x");
	check_elem_raw("iv", INIT, "p");
	/* Errors change nothing. */
	CHECK_INT(list_insert_vals(ks, KEY(DEFNS, "iv"), true, "zz", 2, ab, 2, &len), -ESRCH);
	CHECK_INT(list_insert_vals(ks, KEY(DEFNS, "nope"), true, "a", 1, ab, 2, &len), -ENOENT);
	CHECK_INT(list_insert_vals(ks, KEY(DEFNS, "s"), true, "a", 1, ab, 2, &len), -KV_EWRONGTYPE);
	CHECK_INT(list_insert_vals(ks, KEY(DEFNS, "iv"), true, "a", 1, ab, 0, &len), -EINVAL);
	CHECK_INT(list_insert_vals(ks, BADKEY, true, "a", 1, ab, 2, &len), -EINVAL);
	struct list_value big[2] = {{"a", 1}, {"x", (size_t)LIST_VALUE_MAX + 1}};
	CHECK_INT(list_insert_vals(ks, KEY(DEFNS, "iv"), true, "a", 1, big, 2, &len), -EFBIG);
	CHECK(strcmp(contents("iv"), "a,b,z\nz,,x,p,q,r,s,b,a,t") == 0);
	check_meta("iv", INIT - 5, INIT + 7);
	/* An empty list (remembered) has no pivot: -ENOENT, still empty. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "ive"), KV_TYPE_LIST), 0);
	CHECK_INT(list_insert_vals(ks, KEY(DEFNS, "ive"), true, "a", 1, ab, 2, &len), -ENOENT);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ive"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_LIST);
}

/* LMOVE: the stored bytes of both keys after each move; a new
 * destination; the same list rotating; errors changing nothing. */
static void test_move(void)
{
	struct ks_info info;
	push("ms", LIST_TAIL, "a,b,c");
	/* LMOVE ms md LEFT RIGHT: md is made, as RPUSH would make it. */
	CHECK_INT(list_move(ks, KEY(DEFNS, "ms"), KEY(DEFNS, "md"), LIST_HEAD, LIST_TAIL, 0, &v),
		  0);
	CHECK_MEM(v.data, v.len, "a", 1);
	check_meta("ms", INIT + 1, INIT + 3);
	check_elem_raw("ms", INIT, NULL);
	check_meta("md", INIT, INIT + 1);
	check_elem_raw("md", INIT, "a");
	/* RIGHT LEFT: c goes before a. */
	CHECK_INT(list_move(ks, KEY(DEFNS, "ms"), KEY(DEFNS, "md"), LIST_TAIL, LIST_HEAD, 0, &v),
		  0);
	CHECK_MEM(v.data, v.len, "c", 1);
	check_meta("ms", INIT + 1, INIT + 2);
	check_elem_raw("ms", INIT + 2, NULL);
	check_meta("md", INIT - 1, INIT + 1);
	check_elem_raw("md", INIT - 1, "c");
	CHECK(strcmp(contents("md"), "c,a") == 0);
	/* The last element: with LIST_KEEP_EMPTY the source stays, empty. */
	CHECK_INT(list_move(ks, KEY(DEFNS, "ms"), KEY(DEFNS, "md"), LIST_HEAD, LIST_TAIL,
			    LIST_KEEP_EMPTY, NULL),
		  0);
	CHECK_INT(fixture_meta_raw(ks, KEY("ms"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ms"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_LIST);
	check_meta("md", INIT - 1, INIT + 2);
	check_elem_raw("md", INIT + 1, "b");
	CHECK(strcmp(contents("md"), "c,a,b") == 0);
	/* An empty or missing source: -ENOENT, the destination not made. */
	CHECK_INT(list_move(ks, KEY(DEFNS, "ms"), KEY(DEFNS, "mn"), LIST_HEAD, LIST_TAIL, 0, &v),
		  -ENOENT);
	CHECK_INT(list_move(ks, KEY(DEFNS, "nope"), KEY(DEFNS, "mn"), LIST_HEAD, LIST_TAIL, 0, &v),
		  -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "mn"), &info), -ENOENT);
	CHECK_INT(list_move(ks, KEY(DEFNS, "nope"), KEY(DEFNS, "s"), LIST_HEAD, LIST_TAIL, 0, &v),
		  -ENOENT);
	/* Rotation of one list: c,a,b -> a,b,c (LEFT RIGHT), back (RIGHT LEFT). */
	CHECK_INT(list_move(ks, KEY(DEFNS, "md"), KEY(DEFNS, "md"), LIST_HEAD, LIST_TAIL, 0, &v),
		  0);
	CHECK_MEM(v.data, v.len, "c", 1);
	CHECK(strcmp(contents("md"), "a,b,c") == 0);
	check_meta("md", INIT, INIT + 3);
	check_elem_raw("md", INIT - 1, NULL);
	check_elem_raw("md", INIT + 2, "c");
	CHECK_INT(list_move(ks, KEY(DEFNS, "md"), KEY(DEFNS, "md"), LIST_TAIL, LIST_HEAD, 0, &v),
		  0);
	CHECK(strcmp(contents("md"), "c,a,b") == 0);
	check_meta("md", INIT - 1, INIT + 2);
	check_elem_raw("md", INIT + 2, NULL);
	/* The same end: the element leaves and comes back. */
	CHECK_INT(list_move(ks, KEY(DEFNS, "md"), KEY(DEFNS, "md"), LIST_HEAD, LIST_HEAD, 0, &v),
		  0);
	CHECK_MEM(v.data, v.len, "c", 1);
	check_meta("md", INIT - 1, INIT + 2);
	check_elem_raw("md", INIT - 1, "c");
	/* A list of one onto itself. */
	push("m1", LIST_TAIL, "x");
	CHECK_INT(list_move(ks, KEY(DEFNS, "m1"), KEY(DEFNS, "m1"), LIST_HEAD, LIST_TAIL, 0, &v),
		  0);
	check_meta("m1", INIT + 1, INIT + 2);
	check_elem_raw("m1", INIT, NULL);
	check_elem_raw("m1", INIT + 1, "x");
	/* Wrong types, bad where: nothing changes. */
	CHECK_INT(list_move(ks, KEY(DEFNS, "md"), KEY(DEFNS, "s"), LIST_HEAD, LIST_TAIL, 0, &v),
		  -KV_EWRONGTYPE);
	CHECK_INT(list_move(ks, KEY(DEFNS, "s"), KEY(DEFNS, "md"), LIST_HEAD, LIST_TAIL, 0, &v),
		  -KV_EWRONGTYPE);
	CHECK_INT(
	    list_move(ks, KEY(DEFNS, "md"), KEY(DEFNS, "m1"), (enum list_where)2, LIST_TAIL, 0, &v),
	    -EINVAL);
	CHECK_INT(
	    list_move(ks, KEY(DEFNS, "md"), KEY(DEFNS, "m1"), LIST_HEAD, (enum list_where)2, 0, &v),
	    -EINVAL);
	CHECK_INT(list_move(ks, BADKEY, KEY(DEFNS, "m1"), LIST_HEAD, LIST_TAIL, 0, &v), -EINVAL);
	CHECK(strcmp(contents("md"), "c,a,b") == 0);
	CHECK(strcmp(contents("m1"), "x") == 0);
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	/* Across namespaces (the type layer allows it; kvfs names one). */
	CHECK_INT(list_move(ks, KEY(DEFNS, "md"), KEY("other", "md"), LIST_TAIL, LIST_TAIL, 0, &v),
		  0);
	CHECK_MEM(v.data, v.len, "b", 1);
	CHECK(strcmp(contents("md"), "c,a") == 0);
	CHECK_INT(list_len(ks, KEY("other", "md"), &(uint64_t){0}), 0);
}

/* Movers racing on one source: every element ends in exactly one
 * destination, once. */
struct mover {
	int moved;
};

static void *mover_run(void *arg)
{
	struct mover *m = arg;
	struct buf e = BUF_INIT;
	while (list_move(ks, KEY(DEFNS, "race"), KEY(DEFNS, "work"), LIST_HEAD, LIST_TAIL, 0, &e) ==
	       0)
		m->moved++;
	buf_release(&e);
	return NULL;
}

static void test_move_concurrent(void)
{
	enum { N = 2000, T = 4 };
	struct list_value one;
	char s[16];
	for (int i = 0; i < N; i++) {
		one.len = (size_t)snprintf(s, sizeof(s), "%d", i);
		one.data = s;
		CHECK_INT(list_push(ks, KEY(DEFNS, "race"), LIST_TAIL, &one, 1, NULL), 0);
	}
	pthread_t th[T];
	struct mover m[T] = {{0}};
	for (int i = 0; i < T; i++)
		pthread_create(&th[i], NULL, mover_run, &m[i]);
	int total = 0;
	for (int i = 0; i < T; i++) {
		pthread_join(th[i], NULL);
		total += m[i].moved;
	}
	CHECK_INT(total, N);
	uint64_t n = 0;
	CHECK_INT(list_len(ks, KEY(DEFNS, "work"), &n), 0);
	CHECK_INT(n, N);
	CHECK_INT(list_len(ks, KEY(DEFNS, "race"), &n), 0);
	CHECK_INT(n, 0);
	/* In order, each once: one mover at a time held both keys. */
	for (int i = 0; i < N; i += 499) {
		CHECK_INT(list_index(ks, KEY(DEFNS, "work"), i, &v), 0);
		snprintf(s, sizeof(s), "%d", i);
		CHECK_MEM(v.data, v.len, s, strlen(s));
	}
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_list");
	test_push_bytes();
	test_push_typed();
	test_pop();
	test_index_set();
	test_insert();
	test_remove_at();
	test_rem();
	test_trim_range_len();
	test_iter();
	test_append_at();
	test_insert_vals();
	test_move();
	test_move_concurrent();
	test_v0();
	test_holes();
	test_huge_size();
	test_model();
	test_hole_model();
	test_concurrent();
	test_cluster();
	fixture_done(ks);
	buf_release(&v);
	buf_release(&out);
	return check_done("test_list");
}
