/*
 * Unit tests for t_stream on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case (nothing changed),
 * and the stored bytes against kvrocks-encoding.md 6.9: the metadata
 * tail's 12 counters after XADD, XDEL, XTRIM and XGROUP, entry values as
 * varint32-prefixed strings, and the group, consumer and pending records
 * under the FF x8 prefix.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_convert.h"
#include "types/t_hash.h"
#include "types/t_stream.h"
#include "types/t_string.h"

#include <inttypes.h>

#define ID(a, b) (&(struct stream_id){(a), (b)})
#define S(x)                                                                                       \
	{                                                                                          \
		(x), sizeof(x) - 1                                                                 \
	}

static struct keyspace *ks;
static struct buf v = BUF_INIT;

static int meta_raw(const char *key, struct buf *out)
{
	return fixture_meta_raw(ks, KEY(DEFNS, key), out);
}

/* Compare the whole metadata record with: 88, expire 0, version, size,
 * then the tail given in hex (96 bytes). */
static void check_meta(const char *key, uint64_t size, const char *tail_hex)
{
	unsigned char tail[256];
	CHECK_INT(unhex(tail_hex, tail), 96);
	fixture_check_meta(ks, KEY(DEFNS, key), 0x88, size, tail_hex);
}

/* The stream-CF key NS | len | key | version | sub(hex) into k; its
 * length. */
static size_t sub_key(const char *key, const char *sub_hex, unsigned char *k)
{
	unsigned char sub[512];
	size_t sn = check_unhex(sub_hex, sub, sizeof(sub));
	return fixture_sub_key(key, fixture_version(ks, KEY(key)), sub, sn, k);
}

static int sub_raw(const char *key, const char *sub_hex, struct buf *out)
{
	unsigned char k[512];
	size_t kn = sub_key(key, sub_hex, k);
	return store_get(ks_store(ks), STORE_CF_STREAM, k, kn, out);
}

static void check_sub(const char *key, const char *sub_hex, const char *val_hex)
{
	unsigned char want[512];
	size_t wn = unhex(val_hex, want);
	CHECK_INT(sub_raw(key, sub_hex, &v), 0);
	CHECK_MEM(v.data, v.len, want, wn);
}

static int add(const char *key, enum stream_add_mode mode, uint64_t ms, uint64_t seq,
	       struct stream_id *out)
{
	struct stream_str fv[] = {S("a"), S("b")};
	return stream_add(ks, KEY(DEFNS, key), mode, ID(ms, seq), fv, 2, 0, out);
}

/* "1-1,2-0" of the entries from..to. */
static int range_str(const char *key, bool rev, const struct stream_id *from, bool xf,
		     const struct stream_id *to, bool xt, size_t count, char *out)
{
	int rc;
	struct stream_iter *it = stream_iter_new(ks, KEY(DEFNS, key), rev, from, xf, to, xt, &rc);
	struct stream_id id;
	const char *val;
	size_t vn, n = 0;
	out[0] = 0;
	if (!it)
		return rc;
	while ((!count || n < count) && (rc = stream_iter_next(it, &id, &val, &vn)) == 1) {
		char s[STREAM_ID_MAX];
		stream_id_format(&id, s);
		if (n++)
			strcat(out, ",");
		strcat(out, s);
	}
	stream_iter_free(it);
	return rc == 1 ? 0 : rc;
}

static void test_ids(void)
{
	struct stream_id id;
	char s[STREAM_ID_MAX];
	CHECK_INT(stream_id_parse("1700000000000-5", 15, false, &id), 0);
	CHECK(id.ms == 1700000000000ULL && id.seq == 5);
	CHECK_INT(stream_id_format(&id, s), 15);
	CHECK(strcmp(s, "1700000000000-5") == 0);
	CHECK_INT(stream_id_parse("12", 2, false, &id), -EINVAL);
	CHECK_INT(stream_id_parse("12", 2, true, &id), 0);
	CHECK(id.ms == 12 && id.seq == 0);
	CHECK_INT(stream_id_parse("01-0", 4, false, &id), -EINVAL);
	CHECK_INT(stream_id_parse("1-", 2, false, &id), -EINVAL);
	CHECK_INT(stream_id_parse("-1", 2, false, &id), -EINVAL);
	CHECK_INT(stream_id_parse("1-2-3", 5, false, &id), -EINVAL);
	CHECK_INT(stream_id_parse("18446744073709551616-0", 22, false, &id), -EINVAL);
	CHECK(stream_id_cmp(ID(1, 2), ID(1, 3)) < 0 && stream_id_cmp(ID(2, 0), ID(1, 9)) > 0);
}

#define Z16	   "00000000000000000000000000000000"
#define I(ms, seq) ms seq /* two u64 in hex */

static void test_add_bytes(void)
{
	struct stream_id id;
	uint64_t n;
	/* XADD s 1-1 a b */
	CHECK_INT(add("s", STREAM_ADD_ID, 1, 1, &id), 0);
	CHECK(id.ms == 1 && id.seq == 1);
	check_meta("s", 1,
		   "0000000000000001 0000000000000001" /* last_generated 1-1 */
		   "0000000000000001 0000000000000001" /* recorded_first 1-1 */
		   Z16				       /* max_deleted 0-0 */
		   "0000000000000001 0000000000000001" /* first 1-1 */
		   "0000000000000001 0000000000000001" /* last 1-1 */
		   "0000000000000001"		       /* entries_added */
		   "0000000000000000");		       /* group_number */
	check_sub("s", "0000000000000001 0000000000000001", "01 61 01 62");
	/* ms-*: same ms continues the sequence; a new ms starts at 0 */
	CHECK_INT(add("s", STREAM_ADD_MS, 1, 0, &id), 0);
	CHECK(id.ms == 1 && id.seq == 2);
	CHECK_INT(add("s", STREAM_ADD_MS, 5, 0, &id), 0);
	CHECK(id.ms == 5 && id.seq == 0);
	/* *: now in ms */
	uint64_t before = now_ms();
	CHECK_INT(add("s", STREAM_ADD_AUTO, 0, 0, &id), 0);
	CHECK(id.ms >= before && id.seq == 0);
	CHECK_INT(stream_len(ks, KEY(DEFNS, "s"), &n), 0);
	CHECK_INT(n, 4);
	/* a binary field of 200 bytes: a two-byte varint (C8 01) */
	char big[200];
	memset(big, 'x', sizeof(big));
	struct stream_str fv[] = {{big, sizeof(big)}, {"", 0}};
	CHECK_INT(stream_add(ks, KEY(DEFNS, "bin"), STREAM_ADD_ID, ID(7, 0), fv, 2, 0, NULL), 0);
	CHECK_INT(sub_raw("bin", "0000000000000007 0000000000000000", &v), 0);
	CHECK_INT(v.len, 203);
	CHECK(v.len == 203 && (uint8_t)v.data[0] == 0xC8 && (uint8_t)v.data[1] == 0x01 &&
	      v.data[202] == 0);
	/* the value decodes back */
	size_t pos = 0;
	struct stream_str s;
	CHECK_INT(stream_value_next(v.data, v.len, &pos, &s), 1);
	CHECK_INT(s.n, 200);
	CHECK_INT(stream_value_next(v.data, v.len, &pos, &s), 1);
	CHECK_INT(s.n, 0);
	CHECK_INT(stream_value_next(v.data, v.len, &pos, &s), 0);
	CHECK_INT(stream_value_next("\x05"
				    "ab",
				    3, &(size_t){0}, &s),
		  -EUCLEAN);
}

static void test_add_bad(void)
{
	struct buf before = BUF_INIT;
	struct stream_str odd[] = {S("a")};
	CHECK_INT(add("b", STREAM_ADD_ID, 5, 5, NULL), 0);
	CHECK_INT(meta_raw("b", &before), 0);
	/* at or below the last ID, 0-0, an odd count: EINVAL, nothing changed */
	CHECK_INT(add("b", STREAM_ADD_ID, 5, 5, NULL), -EINVAL);
	CHECK_INT(add("b", STREAM_ADD_ID, 5, 4, NULL), -EINVAL);
	CHECK_INT(add("b", STREAM_ADD_ID, 4, 9, NULL), -EINVAL);
	CHECK_INT(add("b", STREAM_ADD_MS, 4, 0, NULL), -EINVAL);
	CHECK_INT(add("b", STREAM_ADD_ID, 0, 0, NULL), -EINVAL);
	CHECK_INT(add("b", STREAM_ADD_ID, UINT64_MAX, 0, NULL), -EINVAL);
	CHECK_INT(stream_add(ks, KEY(DEFNS, "b"), STREAM_ADD_AUTO, NULL, odd, 1, 0, NULL), -EINVAL);
	CHECK_INT(meta_raw("b", &v), 0);
	CHECK_MEM(v.data, v.len, before.data, before.len);
	CHECK_INT(sub_raw("b", "0000000000000005 0000000000000004", &v), -ENOENT);
	/* 0-0 on a new key too, and the key is not created */
	CHECK_INT(add("new", STREAM_ADD_ID, 0, 0, NULL), -EINVAL);
	CHECK_INT(meta_raw("new", &v), -ENOENT);
	/* 0-* on a new key is 0-1 */
	struct stream_id id;
	CHECK_INT(add("z", STREAM_ADD_MS, 0, 0, &id), 0);
	CHECK(id.ms == 0 && id.seq == 1);
	/* wrong type, NOMKSTREAM */
	CHECK_INT(string_set(ks, KEY(DEFNS, "str"), "x", 1, 0), 0);
	CHECK_INT(add("str", STREAM_ADD_AUTO, 0, 0, NULL), -KV_EWRONGTYPE);
	struct stream_str fv[] = {S("a"), S("b")};
	CHECK_INT(stream_add(ks, KEY(DEFNS, "nomk"), STREAM_ADD_AUTO, NULL, fv, 2,
			     STREAM_NOMKSTREAM, NULL),
		  -ENOENT);
	CHECK_INT(meta_raw("nomk", &v), -ENOENT);
	buf_release(&before);
}

static void test_restore(void)
{
	/* a restore accepts any order; the counters end as an in-order add */
	CHECK_INT(add("r", STREAM_ADD_RESTORE, 10, 0, NULL), 0);
	CHECK_INT(add("r", STREAM_ADD_RESTORE, 9, 0, NULL), 0);
	CHECK_INT(add("r", STREAM_ADD_RESTORE, 11, 0, NULL), 0);
	CHECK_INT(add("r", STREAM_ADD_RESTORE, 10, 0, NULL), -EEXIST);
	check_meta("r", 3,
		   I("000000000000000B", "0000000000000000")
		       I("0000000000000009", "0000000000000000")
			   Z16 I("0000000000000009", "0000000000000000")
			       I("000000000000000B", "0000000000000000") "0000000000000003"
									 "0000000000000000");
	char s[256];
	CHECK_INT(range_str("r", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "9-0,10-0,11-0") == 0);
}

static void test_range(void)
{
	char s[256];
	for (uint64_t j = 1; j <= 5; j++)
		CHECK_INT(add("q", STREAM_ADD_ID, j, 0, NULL), 0);
	CHECK_INT(range_str("q", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "1-0,2-0,3-0,4-0,5-0") == 0);
	CHECK_INT(range_str("q", false, ID(2, 0), true, ID(4, 0), false, 0, s), 0);
	CHECK(strcmp(s, "3-0,4-0") == 0);
	CHECK_INT(range_str("q", false, ID(2, 0), false, ID(4, 0), true, 0, s), 0);
	CHECK(strcmp(s, "2-0,3-0") == 0);
	CHECK_INT(range_str("q", true, NULL, false, NULL, false, 2, s), 0);
	CHECK(strcmp(s, "5-0,4-0") == 0);
	CHECK_INT(range_str("q", true, ID(4, 0), true, ID(2, 0), false, 0, s), 0);
	CHECK(strcmp(s, "3-0,2-0") == 0);
	CHECK_INT(range_str("q", false, ID(3, 1), false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "4-0,5-0") == 0);
	CHECK_INT(range_str("missing", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "") == 0);
	CHECK_INT(range_str("str", false, NULL, false, NULL, false, 0, s), -KV_EWRONGTYPE);
	CHECK_INT(stream_get(ks, KEY(DEFNS, "q"), ID(3, 0), &v), 0);
	CHECK_MEM(v.data, v.len,
		  "\x01"
		  "a\x01"
		  "b",
		  4);
	CHECK_INT(stream_get(ks, KEY(DEFNS, "q"), ID(3, 1), &v), -ENOENT);
	CHECK_INT(stream_get(ks, KEY(DEFNS, "str"), ID(3, 0), &v), -KV_EWRONGTYPE);
}

static void test_del(void)
{
	uint64_t n;
	char s[256];
	for (uint64_t j = 1; j <= 4; j++)
		CHECK_INT(add("d", STREAM_ADD_ID, j, 0, NULL), 0);
	/* XDEL d 1-0 3-0 3-0 9-0: two deleted; first moves on, max_deleted 3-0 */
	CHECK_INT(stream_del(ks, KEY(DEFNS, "d"),
			     (struct stream_id[]){{1, 0}, {3, 0}, {3, 0}, {9, 0}}, 4, &n),
		  0);
	CHECK_INT(n, 2);
	check_meta("d", 2,
		   I("0000000000000004", "0000000000000000") /* last_generated */
		   I("0000000000000002", "0000000000000000") /* recorded_first */
		   I("0000000000000003", "0000000000000000") /* max_deleted */
		   I("0000000000000002", "0000000000000000") /* first */
		   I("0000000000000004", "0000000000000000") /* last */
		   "0000000000000004"
		   "0000000000000000");
	CHECK_INT(range_str("d", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "2-0,4-0") == 0);
	/* deleting the last entry moves last back */
	CHECK_INT(stream_del(ks, KEY(DEFNS, "d"), ID(4, 0), 1, &n), 0);
	CHECK_INT(n, 1);
	check_meta(
	    "d", 1,
	    I("0000000000000004", "0000000000000000") I("0000000000000002", "0000000000000000")
		I("0000000000000004", "0000000000000000") I("0000000000000002", "0000000000000000")
		    I("0000000000000002", "0000000000000000") "0000000000000004"
							      "0000000000000000");
	/* the last one: an empty stream is a live key; first/last/recorded 0-0 */
	CHECK_INT(stream_del(ks, KEY(DEFNS, "d"), ID(2, 0), 1, &n), 0);
	check_meta("d", 0,
		   I("0000000000000004", "0000000000000000")
		       Z16 I("0000000000000004", "0000000000000000") Z16 Z16 "0000000000000004"
									     "0000000000000000");
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "d"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_STREAM);
	CHECK_INT(info.size, 0);
	/* an explicit ID at or below last_generated stays refused */
	CHECK_INT(add("d", STREAM_ADD_ID, 3, 0, NULL), -EINVAL);
	CHECK_INT(add("d", STREAM_ADD_ID, 4, 1, NULL), 0);
	/* missing key, wrong type, nothing there */
	CHECK_INT(stream_del(ks, KEY(DEFNS, "missing"), ID(1, 0), 1, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(stream_del(ks, KEY(DEFNS, "str"), ID(1, 0), 1, &n), -KV_EWRONGTYPE);
	struct buf before = BUF_INIT;
	CHECK_INT(meta_raw("d", &before), 0);
	CHECK_INT(stream_del(ks, KEY(DEFNS, "d"), ID(77, 0), 1, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(meta_raw("d", &v), 0);
	CHECK_MEM(v.data, v.len, before.data, before.len);
	buf_release(&before);
	/* rmdir of an emptied stream */
	CHECK_INT(stream_del_if_empty(ks, KEY(DEFNS, "d")), -ENOTEMPTY);
	CHECK_INT(stream_del(ks, KEY(DEFNS, "d"), ID(4, 1), 1, &n), 0);
	CHECK_INT(stream_del_if_empty(ks, KEY(DEFNS, "d")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "d"), &info), -ENOENT);
	CHECK_INT(stream_del_if_empty(ks, KEY(DEFNS, "str")), -KV_EWRONGTYPE);
}

static void test_trim(void)
{
	uint64_t n;
	char s[256];
	for (uint64_t j = 1; j <= 6; j++)
		CHECK_INT(add("t", STREAM_ADD_ID, j, 0, NULL), 0);
	/* MAXLEN 4: 1-0 and 2-0 go; max_deleted = 2-0 */
	CHECK_INT(stream_trim(ks, KEY(DEFNS, "t"), STREAM_TRIM_MAXLEN, 4, NULL, &n), 0);
	CHECK_INT(n, 2);
	check_meta(
	    "t", 4,
	    I("0000000000000006", "0000000000000000") I("0000000000000003", "0000000000000000")
		I("0000000000000002", "0000000000000000") I("0000000000000003", "0000000000000000")
		    I("0000000000000006", "0000000000000000") "0000000000000006"
							      "0000000000000000");
	/* MINID 5-0: 3-0 and 4-0 go */
	CHECK_INT(stream_trim(ks, KEY(DEFNS, "t"), STREAM_TRIM_MINID, 0, ID(5, 0), &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(range_str("t", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "5-0,6-0") == 0);
	/* nothing to trim: unchanged */
	CHECK_INT(stream_trim(ks, KEY(DEFNS, "t"), STREAM_TRIM_MAXLEN, 10, NULL, &n), 0);
	CHECK_INT(n, 0);
	/* MAXLEN 0 empties it; the key lives on */
	CHECK_INT(stream_trim(ks, KEY(DEFNS, "t"), STREAM_TRIM_MAXLEN, 0, NULL, &n), 0);
	CHECK_INT(n, 2);
	check_meta("t", 0,
		   I("0000000000000006", "0000000000000000")
		       Z16 I("0000000000000006", "0000000000000000") Z16 Z16 "0000000000000006"
									     "0000000000000000");
	CHECK_INT(stream_trim(ks, KEY(DEFNS, "missing"), STREAM_TRIM_MAXLEN, 0, NULL, &n), 0);
	CHECK_INT(stream_trim(ks, KEY(DEFNS, "str"), STREAM_TRIM_MAXLEN, 0, NULL, &n),
		  -KV_EWRONGTYPE);
	CHECK_INT(stream_trim(ks, KEY(DEFNS, "t"), STREAM_TRIM_MINID, 0, NULL, &n), -EINVAL);
}

struct collect {
	char s[512];
	int n;
};

static int collect_entry(void *arg, const struct stream_id *id, const char *val, size_t vn)
{
	struct collect *c = arg;
	char s[STREAM_ID_MAX];
	(void)vn;
	stream_id_format(id, s);
	if (c->n++)
		strcat(c->s, ",");
	strcat(c->s, s);
	if (!val)
		strcat(c->s, "(nil)");
	return 0;
}

static int collect_pel(void *arg, const struct stream_id *id, const struct stream_pel *p,
		       uint64_t idle)
{
	struct collect *c = arg;
	char s[128];
	(void)idle;
	int n = snprintf(s, sizeof(s), "%s%" PRIu64 "-%" PRIu64 ":%.*s:%" PRIu64, c->n++ ? "," : "",
			 id->ms, id->seq, (int)p->consumer.n, p->consumer.p, p->deliveries);
	(void)n;
	strcat(c->s, s);
	return 0;
}

static int collect_group(void *arg, const char *name, size_t n, const struct stream_group *g)
{
	struct collect *c = arg;
	char s[160];
	snprintf(s, sizeof(s),
		 "%s%.*s:%" PRIu64 ":%" PRIu64 ":%" PRIu64 "-%" PRIu64 ":%" PRId64 ":%" PRIu64,
		 c->n++ ? "," : "", (int)n, name, g->consumers, g->pending, g->last_delivered.ms,
		 g->last_delivered.seq, g->entries_read, g->lag);
	strcat(c->s, s);
	return 0;
}

static int collect_consumer(void *arg, const char *name, size_t n, const struct stream_consumer *co)
{
	struct collect *c = arg;
	char s[128];
	snprintf(s, sizeof(s), "%s%.*s:%" PRIu64, c->n++ ? "," : "", (int)n, name, co->pending);
	strcat(c->s, s);
	return 0;
}

#define GROUP_G	   "FFFFFFFFFFFFFFFF 01 0000000000000001 67"
#define CONS(n, c) "FFFFFFFFFFFFFFFF 02 0000000000000001 67 000000000000000" n " " c
#define PEL(ms)	   "FFFFFFFFFFFFFFFF 03 0000000000000001 67 " ms " 0000000000000000"

static void test_groups(void)
{
	struct collect c = {0};
	uint64_t n;
	for (uint64_t j = 1; j <= 3; j++)
		CHECK_INT(add("g", STREAM_ADD_ID, j, 0, NULL), 0);
	/* XGROUP CREATE g g 0: group record, group_number 1 */
	CHECK_INT(stream_group_create(ks, KEY(DEFNS, "g"), "g", 1, ID(0, 0),
				      STREAM_ENTRIES_READ_UNSET, 0),
		  0);
	check_sub("g", GROUP_G,
		  "0000000000000000 0000000000000000 0000000000000000 0000000000000000"
		  "FFFFFFFFFFFFFFFF 0000000000000000");
	check_meta("g", 3,
		   I("0000000000000003", "0000000000000000")
		       I("0000000000000001", "0000000000000000")
			   Z16 I("0000000000000001", "0000000000000000")
			       I("0000000000000003", "0000000000000000") "0000000000000003"
									 "0000000000000001");
	/* BUSYGROUP, a digit-first name, no key without MKSTREAM */
	CHECK_INT(
	    stream_group_create(ks, KEY(DEFNS, "g"), "g", 1, NULL, STREAM_ENTRIES_READ_UNSET, 0),
	    -EEXIST);
	CHECK_INT(
	    stream_group_create(ks, KEY(DEFNS, "g"), "1g", 2, NULL, STREAM_ENTRIES_READ_UNSET, 0),
	    -EINVAL);
	CHECK_INT(stream_group_create(ks, KEY(DEFNS, "nokey"), "g", 1, NULL,
				      STREAM_ENTRIES_READ_UNSET, 0),
		  -ENOENT);
	CHECK_INT(meta_raw("nokey", &v), -ENOENT);
	CHECK_INT(
	    stream_group_create(ks, KEY(DEFNS, "str"), "g", 1, NULL, STREAM_ENTRIES_READ_UNSET, 0),
	    -KV_EWRONGTYPE);
	/* MKSTREAM: an empty stream with one group */
	CHECK_INT(stream_group_create(ks, KEY(DEFNS, "mk"), "g", 1, NULL, STREAM_ENTRIES_READ_UNSET,
				      STREAM_MKSTREAM),
		  0);
	check_meta("mk", 0,
		   Z16 Z16 Z16 Z16 Z16 "0000000000000000"
				       "0000000000000001");

	/* XREADGROUP GROUP g alice COUNT 2 STREAMS g > */
	CHECK_INT(stream_readgroup(ks, KEY(DEFNS, "g"), "g", 1, "alice", 5, NULL, 2, 0,
				   collect_entry, &c),
		  0);
	CHECK(strcmp(c.s, "1-0,2-0") == 0);
	/* group: 1 consumer, 2 pending, last 2-0, entries_read 2 (estimated
	 * from -1 at the first read, then counted) */
	CHECK_INT(sub_raw("g", GROUP_G, &v), 0);
	CHECK_INT(v.len, 48);
	CHECK_INT(get_be64(v.data), 1);
	CHECK_INT(get_be64(v.data + 8), 2);
	CHECK_INT(get_be64(v.data + 16), 2);
	CHECK_INT(get_be64(v.data + 24), 0);
	CHECK_INT(get_be64(v.data + 32), 2);
	CHECK_INT(get_be64(v.data + 40), 0);
	/* consumer record: pending 2, two times */
	CHECK_INT(sub_raw("g", CONS("5", "616C696365"), &v), 0);
	CHECK_INT(v.len, 24);
	CHECK_INT(get_be64(v.data), 2);
	CHECK(get_be64(v.data + 8) > 0 && get_be64(v.data + 8) == get_be64(v.data + 16));
	/* PEL of 1-0: time, count 1, consumer "alice" */
	CHECK_INT(sub_raw("g", PEL("0000000000000001"), &v), 0);
	CHECK_INT(v.len, 29);
	CHECK_INT(get_be64(v.data + 8), 1);
	CHECK_INT(get_be64(v.data + 16), 5);
	CHECK_MEM(v.data + 24, 5, "alice", 5);

	/* bob takes the rest */
	memset(&c, 0, sizeof(c));
	CHECK_INT(
	    stream_readgroup(ks, KEY(DEFNS, "g"), "g", 1, "bob", 3, NULL, 0, 0, collect_entry, &c),
	    0);
	CHECK(strcmp(c.s, "3-0") == 0);
	/* nothing new */
	memset(&c, 0, sizeof(c));
	CHECK_INT(
	    stream_readgroup(ks, KEY(DEFNS, "g"), "g", 1, "bob", 3, NULL, 0, 0, collect_entry, &c),
	    0);
	CHECK(strcmp(c.s, "") == 0);
	/* history: alice's pending from 0 */
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_readgroup(ks, KEY(DEFNS, "g"), "g", 1, "alice", 5, ID(0, 0), 0, 0,
				   collect_entry, &c),
		  0);
	CHECK(strcmp(c.s, "1-0,2-0") == 0);
	/* XPENDING extended: deliveries went to 2 for alice's */
	memset(&c, 0, sizeof(c));
	CHECK_INT(
	    stream_pending(ks, KEY(DEFNS, "g"), "g", 1, NULL, NULL, 0, NULL, 0, 0, collect_pel, &c),
	    0);
	CHECK(strcmp(c.s, "1-0:alice:2,2-0:alice:2,3-0:bob:1") == 0);
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_pending(ks, KEY(DEFNS, "g"), "g", 1, ID(2, 0), NULL, 1, NULL, 0, 0,
				 collect_pel, &c),
		  0);
	CHECK(strcmp(c.s, "2-0:alice:2") == 0);
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_pending(ks, KEY(DEFNS, "g"), "g", 1, NULL, NULL, 0, "bob", 3, 0,
				 collect_pel, &c),
		  0);
	CHECK(strcmp(c.s, "3-0:bob:1") == 0);
	CHECK_INT(stream_pending(ks, KEY(DEFNS, "g"), "nog", 3, NULL, NULL, 0, NULL, 0, 0,
				 collect_pel, &c),
		  -ENOENT);
	CHECK_INT(stream_pending(ks, KEY(DEFNS, "nokey"), "g", 1, NULL, NULL, 0, NULL, 0, 0,
				 collect_pel, &c),
		  -ENOENT);

	/* XPENDING summary: 3 pending, 1-0..3-0, alice 2, bob 1 */
	struct stream_id lo, hi;
	memset(&c, 0, sizeof(c));
	CHECK_INT(
	    stream_pending_summary(ks, KEY(DEFNS, "g"), "g", 1, &n, &lo, &hi, collect_consumer, &c),
	    0);
	CHECK_INT(n, 3);
	CHECK(lo.ms == 1 && hi.ms == 3);
	CHECK(strcmp(c.s, "bob:1,alice:2") == 0);
	CHECK_INT(stream_pending_summary(ks, KEY(DEFNS, "g"), "nog", 3, &n, &lo, &hi, NULL, NULL),
		  -ENOENT);
	CHECK_INT(stream_pending_summary(ks, KEY(DEFNS, "str"), "g", 1, &n, &lo, &hi, NULL, NULL),
		  -KV_EWRONGTYPE);
	/* XACK g g 1-0 1-0 7-0: one acknowledged */
	CHECK_INT(stream_ack(ks, KEY(DEFNS, "g"), "g", 1,
			     (struct stream_id[]){{1, 0}, {1, 0}, {7, 0}}, 3, &n),
		  0);
	CHECK_INT(n, 1);
	CHECK_INT(sub_raw("g", PEL("0000000000000001"), &v), -ENOENT);
	CHECK_INT(sub_raw("g", CONS("5", "616C696365"), &v), 0);
	CHECK_INT(get_be64(v.data), 1);
	CHECK_INT(stream_ack(ks, KEY(DEFNS, "g"), "nog", 3, ID(2, 0), 1, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(stream_ack(ks, KEY(DEFNS, "str"), "g", 1, ID(2, 0), 1, &n), -KV_EWRONGTYPE);

	/* XCLAIM g g bob 0 2-0: alice -> bob */
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_claim(ks, KEY(DEFNS, "g"), "g", 1, "bob", 3, 0, ID(2, 0), 1, 0,
			       collect_entry, &c),
		  0);
	CHECK(strcmp(c.s, "2-0") == 0);
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_consumers(ks, KEY(DEFNS, "g"), "g", 1, collect_consumer, &c), 0);
	CHECK(strcmp(c.s, "bob:2,alice:0") == 0);
	/* min-idle not reached: nothing claimed */
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_claim(ks, KEY(DEFNS, "g"), "g", 1, "alice", 5, 3600000, ID(2, 0), 1, 0,
			       collect_entry, &c),
		  0);
	CHECK(strcmp(c.s, "") == 0);
	/* an entry deleted from the stream leaves the PEL on claim */
	CHECK_INT(stream_del(ks, KEY(DEFNS, "g"), ID(3, 0), 1, &n), 0);
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_claim(ks, KEY(DEFNS, "g"), "g", 1, "alice", 5, 0, ID(3, 0), 1, 0,
			       collect_entry, &c),
		  0);
	CHECK(strcmp(c.s, "") == 0);
	CHECK_INT(sub_raw("g", PEL("0000000000000003"), &v), -ENOENT);
	/* XAUTOCLAIM g g alice 0 0-0 COUNT 1: takes 2-0 back from bob, next 0-0 */
	struct stream_id next;
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_autoclaim(ks, KEY(DEFNS, "g"), "g", 1, "alice", 5, 0, ID(0, 0), 1, 0,
				   collect_entry, NULL, &c, &next),
		  0);
	CHECK(strcmp(c.s, "2-0") == 0);
	CHECK(next.ms == 0 && next.seq == 0);
	CHECK_INT(sub_raw("g", PEL("0000000000000002"), &v), 0);
	CHECK_INT(get_be64(v.data + 8), 4); /* read, history read, claim, autoclaim */
	CHECK_MEM(v.data + 24, v.len - 24, "alice", 5);
	/* and back to bob with JUSTID: the count stays */
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_autoclaim(ks, KEY(DEFNS, "g"), "g", 1, "bob", 3, 0, ID(0, 0), 0,
				   STREAM_JUSTID, collect_entry, NULL, &c, &next),
		  0);
	CHECK(strcmp(c.s, "2-0(nil)") == 0);
	CHECK_INT(sub_raw("g", PEL("0000000000000002"), &v), 0);
	CHECK_INT(get_be64(v.data + 8), 4);
	CHECK_INT(stream_autoclaim(ks, KEY(DEFNS, "g"), "nog", 3, "bob", 3, 0, ID(0, 0), 0, 0, NULL,
				   NULL, NULL, &next),
		  -ENOENT);
	CHECK_INT(stream_autoclaim(ks, KEY(DEFNS, "str"), "g", 1, "bob", 3, 0, ID(0, 0), 0, 0, NULL,
				   NULL, NULL, &next),
		  -KV_EWRONGTYPE);
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_groups(ks, KEY(DEFNS, "g"), collect_group, &c), 0);
	/* 2 consumers, 1 pending (2-0, bob), last 3-0, entries_read 3;
	 * lag: max_deleted 3-0 >= last delivered -> estimate: 3-0 == last
	 * entry? no (last is 2-0) -> unknown */
	CHECK(strcmp(c.s, "g:2:1:3-0:3:18446744073709551615") == 0);
	CHECK_INT(
	    stream_claim(ks, KEY(DEFNS, "g"), "nog", 3, "bob", 3, 0, ID(2, 0), 1, 0, NULL, NULL),
	    -ENOENT);

	/* SETID, CREATECONSUMER, DELCONSUMER, DESTROY */
	CHECK_INT(
	    stream_group_setid(ks, KEY(DEFNS, "g"), "g", 1, ID(1, 0), STREAM_ENTRIES_READ_UNSET),
	    0);
	CHECK_INT(sub_raw("g", GROUP_G, &v), 0);
	CHECK_INT(get_be64(v.data + 16), 1);
	CHECK_INT(get_be64(v.data + 32), UINT64_MAX); /* entries_read -1 */
	CHECK_INT(
	    stream_group_setid(ks, KEY(DEFNS, "g"), "nog", 3, NULL, STREAM_ENTRIES_READ_UNSET),
	    -ENOENT);
	CHECK_INT(stream_consumer_create(ks, KEY(DEFNS, "g"), "g", 1, "carol", 5), 1);
	CHECK_INT(stream_consumer_create(ks, KEY(DEFNS, "g"), "g", 1, "carol", 5), 0);
	CHECK_INT(stream_consumer_create(ks, KEY(DEFNS, "g"), "g", 1, "9c", 2), -EINVAL);
	CHECK_INT(stream_consumer_create(ks, KEY(DEFNS, "g"), "nog", 3, "c", 1), -ENOENT);
	CHECK_INT(stream_consumer_create(ks, KEY(DEFNS, "nokey"), "g", 1, "c", 1), -ENOENT);
	CHECK_INT(stream_consumer_del(ks, KEY(DEFNS, "g"), "g", 1, "bob", 3, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(sub_raw("g", PEL("0000000000000002"), &v), -ENOENT);
	CHECK_INT(sub_raw("g", CONS("3", "626F62"), &v), -ENOENT);
	CHECK_INT(stream_consumer_del(ks, KEY(DEFNS, "g"), "g", 1, "nobody", 6, &n), 0);
	CHECK_INT(n, 0);
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_groups(ks, KEY(DEFNS, "g"), collect_group, &c), 0);
	CHECK(strncmp(c.s, "g:2:0:1-0:-1:", 13) == 0);
	CHECK_INT(stream_group_destroy(ks, KEY(DEFNS, "g"), "g", 1), 1);
	CHECK_INT(stream_group_destroy(ks, KEY(DEFNS, "g"), "g", 1), 0);
	CHECK_INT(stream_group_destroy(ks, KEY(DEFNS, "nokey"), "g", 1), -ENOENT);
	CHECK_INT(sub_raw("g", GROUP_G, &v), -ENOENT);
	CHECK_INT(sub_raw("g", CONS("5", "616C696365"), &v), -ENOENT);
	CHECK_INT(sub_raw("g", CONS("5", "6361726F6C"), &v), -ENOENT);
	check_meta("g", 2,
		   I("0000000000000003", "0000000000000000") /* last_generated */
		   I("0000000000000001", "0000000000000000") /* recorded_first */
		   I("0000000000000003", "0000000000000000") /* max_deleted */
		   I("0000000000000001", "0000000000000000") /* first */
		   I("0000000000000002", "0000000000000000") /* last */
		   "0000000000000003"
		   "0000000000000000"); /* added, no group */
	/* entries are untouched by the group records around them */
	char s[64];
	CHECK_INT(range_str("g", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "1-0,2-0") == 0);
	/* readgroup on a missing key / group / wrong type */
	CHECK_INT(stream_readgroup(ks, KEY(DEFNS, "nokey"), "g", 1, "a", 1, NULL, 0, 0, NULL, NULL),
		  -ENOENT);
	CHECK_INT(stream_readgroup(ks, KEY(DEFNS, "g"), "g", 1, "a", 1, NULL, 0, 0, NULL, NULL),
		  -ENOENT);
	CHECK_INT(stream_readgroup(ks, KEY(DEFNS, "str"), "g", 1, "a", 1, NULL, 0, 0, NULL, NULL),
		  -KV_EWRONGTYPE);
}

static void test_info_rename(void)
{
	struct stream_info i;
	CHECK_INT(stream_info(ks, KEY(DEFNS, "q"), &i), 0);
	CHECK_INT(i.size, 5);
	CHECK_INT(i.entries_added, 5);
	CHECK(i.first.ms == 1 && i.last.ms == 5 && i.last_generated.ms == 5);
	CHECK_INT(stream_info(ks, KEY(DEFNS, "missing"), &i), -ENOENT);
	CHECK_INT(stream_info(ks, KEY(DEFNS, "str"), &i), -KV_EWRONGTYPE);
	/* RENAME copies the stream CF sub-keys */
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "q"), KEY(DEFNS, "q2")), 0);
	char s[64];
	CHECK_INT(range_str("q2", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "1-0,2-0,3-0,4-0,5-0") == 0);
}

/* A field "MS-SEQ" holding V becomes the entry MS-SEQ with the pair v V. */
static int field_as_entry(void *arg, const char *f, size_t fn, const char *val, size_t vn,
			  struct convert_item *it)
{
	struct stream_id id;
	struct stream_str fv[] = {{"v", 1}, {val, vn}};
	(void)arg;
	if (stream_id_parse(f, fn, false, &id))
		return -EINVAL;
	it->num = id.ms;
	it->seq = id.seq;
	return stream_value_encode(fv, 2, &it->value);
}

static void test_convert(void)
{
	char s[64];
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hc"), "10-0", 4, "b", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hc"), "9-0", 3, "a", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hc"), "10-1", 4, "c", 1, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "hc"), KV_TYPE_STREAM, field_as_entry, NULL), 0);
	CHECK_INT(range_str("hc", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "9-0,10-0,10-1") == 0);
	check_meta("hc", 3,
		   I("000000000000000A", "0000000000000001")
		       I("0000000000000009", "0000000000000000")
			   Z16 I("0000000000000009", "0000000000000000")
			       I("000000000000000A", "0000000000000001") "0000000000000003"
									 "0000000000000000");
	check_sub("hc", "000000000000000A 0000000000000001", "01 76 01 63");
	/* a field that is no ID: EINVAL, the hash stays */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hb"), "x", 1, "a", 1, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "hb"), KV_TYPE_STREAM, field_as_entry, NULL),
		  -EINVAL);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "hb"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_HASH);
	/* 0-0 is refused by the batch helper */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hz"), "0-0", 3, "a", 1, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "hz"), KV_TYPE_STREAM, field_as_entry, NULL),
		  -EINVAL);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "hz"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_HASH);
	struct buf e = BUF_INIT;
	CHECK_INT(stream_value_encode((struct stream_str[]){{"a", 1}}, 1, &e), -EINVAL);
	buf_release(&e);
}

/* ---- Stored counts and lengths (issue 15 item 4) ------------------- */

/* Plant the metadata of stream `key` (version 4096) with this size and
 * 96-byte tail. */
static void plant_meta(const char *key, const char *size_hex, const char *tail_hex)
{
	unsigned char val[256];
	size_t n = unhex("88 0000000000000000 0000000000001000", val);
	n += unhex(size_hex, val + n);
	n += unhex(tail_hex, val + n);
	CHECK_INT(n, 121);
	fixture_put_meta(ks, KEY(DEFNS, key), val, n);
}

/* Plant the stream-CF record sub(hex) -> val(hex) of stream `key`. */
static void plant_sub(const char *key, const char *sub_hex, const char *val_hex)
{
	unsigned char k[512], val[512];
	size_t kn = sub_key(key, sub_hex, k);
	fixture_put(ks, STORE_CF_STREAM, k, kn, val, unhex(val_hex, val));
}

/* The log lines written between log_begin and log_count, which returns
 * how many of them contain `what`. */
static FILE *log_tmp;
static int log_saved = -1;

static void log_begin(void)
{
	fflush(stderr);
	log_tmp = tmpfile();
	log_saved = dup(2);
	if (log_tmp)
		dup2(fileno(log_tmp), 2);
	log_level_current = LOG_LEVEL_ERR;
}

static int log_count(const char *what)
{
	char line[1024];
	int n = 0;
	fflush(stderr);
	dup2(log_saved, 2);
	close(log_saved);
	log_level_current = -1;
	if (!log_tmp)
		return -1;
	rewind(log_tmp);
	while (fgets(line, sizeof(line), log_tmp))
		n += strstr(line, what) != NULL;
	fclose(log_tmp);
	return n;
}

#define ONE16 "0000000000000001 0000000000000001" /* the ID 1-1 */
#define ONE2  "0000000000000001 0000000000000002" /* the ID 1-2 */
#define FF8   "FFFFFFFFFFFFFFFF"
#define PEL1  "FFFFFFFFFFFFFFFF 03 0000000000000001 67" ONE16 /* 1-1 of g */

/* Counts and lengths read from the store size nothing: a corrupt one is
 * -EUCLEAN with one log line naming the key, or is only reported, never
 * an allocation or a walk of its size. With the address space capped at
 * 256 MiB over what the process has, allocating a length of 2^32 or
 * 2^64 fails the test. */
static void test_corrupt_counts(void)
{
	struct rlimit old = check_limit_as(256u << 20);
	struct collect c = {0};
	uint64_t n;
	char s[128];

	/* a size of 2^63-1 (the largest that decodes) over two entries:
	 * reported as stored; XTRIM walks the two entries there are, and
	 * stops */
	plant_meta("c1", "7FFFFFFFFFFFFFFF",
		   ONE2 ONE16 Z16 ONE16 ONE2 "0000000000000002"
					     "0000000000000000");
	plant_sub("c1", ONE16, "01 61 01 62");
	plant_sub("c1", ONE2, "01 63 01 64");
	CHECK_INT(stream_len(ks, KEY(DEFNS, "c1"), &n), 0);
	CHECK(n == INT64_MAX);
	CHECK_INT(range_str("c1", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "1-1,1-2") == 0);
	CHECK_INT(stream_trim(ks, KEY(DEFNS, "c1"), STREAM_TRIM_MAXLEN, 0, NULL, &n), 0);
	CHECK_INT(n, 2);
	CHECK_INT(range_str("c1", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "") == 0);

	/* entry values whose varint announces 2^32-1 bytes, or runs past
	 * five bytes: -EUCLEAN, one line naming the key and the entry */
	plant_meta("c2", "0000000000000002",
		   ONE2 ONE16 Z16 ONE16 ONE2 "0000000000000002"
					     "0000000000000000");
	plant_sub("c2", ONE16, "FF FF FF FF 0F 61");
	plant_sub("c2", ONE2, "80 80 80 80 80 00");
	CHECK_INT(stream_get(ks, KEY(DEFNS, "c2"), ID(1, 1), &v), 0);
	log_begin();
	CHECK_INT(stream_value_check(KEY(DEFNS, "c2"), ID(1, 1), v.data, v.len), -EUCLEAN);
	CHECK_INT(log_count("corrupt record of '__namespace/c2/1-1': a stream entry value of 6 "
			    "bytes that does not decode"),
		  1);
	CHECK_INT(stream_get(ks, KEY(DEFNS, "c2"), ID(1, 2), &v), 0);
	CHECK_INT(stream_value_check(KEY(DEFNS, "c2"), ID(1, 2), v.data, v.len), -EUCLEAN);

	/* a group counting 2^64-1 consumers and pending entries, a pending
	 * entry whose consumer name is 2^64-1 bytes long, a consumer sub-key
	 * whose name length says 2^64-1 */
	plant_meta("c3", "0000000000000001",
		   ONE16 ONE16 Z16 ONE16 ONE16 "0000000000000001"
					       "0000000000000001");
	plant_sub("c3", ONE16, "01 61 01 62");
	plant_sub("c3", GROUP_G, FF8 FF8 ONE16 "0000000000000001 0000000000000000");
	plant_sub("c3", PEL1, "0000000000000000" FF8 FF8 "61");
	plant_sub("c3", "FFFFFFFFFFFFFFFF 02 0000000000000001 67" FF8 "61", Z16 "0000000000000000");
	CHECK_INT(stream_groups(ks, KEY(DEFNS, "c3"), collect_group, &c), 0);
	CHECK(strcmp(c.s, "g:18446744073709551615:18446744073709551615:1-1:1:0") == 0);
	memset(&c, 0, sizeof(c));
	log_begin();
	CHECK_INT(stream_pending(ks, KEY(DEFNS, "c3"), "g", 1, NULL, NULL, 0, NULL, 0, 0,
				 collect_pel, &c),
		  0);
	CHECK_INT(log_count("corrupt record of '__namespace/c3/g': pending entry 1-1 of 25 bytes "
			    "does not decode; skipped"),
		  1);
	CHECK_INT(c.n, 0);
	log_begin();
	CHECK_INT(stream_consumers(ks, KEY(DEFNS, "c3"), "g", 1, collect_consumer, &c), 0);
	CHECK_INT(log_count("whose length prefix disagrees; skipped"), 1);
	CHECK_INT(c.n, 0);
	CHECK_INT(
	    stream_claim(ks, KEY(DEFNS, "c3"), "g", 1, "bob", 3, 0, ID(1, 1), 1, 0, NULL, NULL),
	    -EUCLEAN);
	CHECK_INT(stream_readgroup(ks, KEY(DEFNS, "c3"), "g", 1, "bob", 3, ID(0, 0), 0, 0,
				   collect_entry, &c),
		  0);
	CHECK_INT(c.n, 0);
	/* XACK needs only the ID: the broken entry goes */
	CHECK_INT(stream_ack(ks, KEY(DEFNS, "c3"), "g", 1, ID(1, 1), 1, &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(sub_raw("c3", PEL1, &v), -ENOENT);

	/* counts below what the records say: a group counting no consumer
	 * and no pending entry over one pending entry of a consumer without
	 * a record, entries-read at 2^63-1. XACK leaves 0 pending, not
	 * 2^64-1; XREADGROUP keeps entries-read at 2^63-1 (no signed wrap) */
	plant_meta("c4", "0000000000000002",
		   ONE2 ONE16 Z16 ONE16 ONE2 "0000000000000002"
					     "0000000000000001");
	plant_sub("c4", ONE16, "01 61 01 62");
	plant_sub("c4", ONE2, "01 63 01 64");
	plant_sub("c4", GROUP_G,
		  "0000000000000000 0000000000000000" ONE16 "7FFFFFFFFFFFFFFF 0000000000000000");
	plant_sub("c4", PEL1, "0000000000000000 0000000000000001 0000000000000001 61");
	CHECK_INT(stream_ack(ks, KEY(DEFNS, "c4"), "g", 1, ID(1, 1), 1, &n), 0);
	CHECK_INT(n, 1);
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_groups(ks, KEY(DEFNS, "c4"), collect_group, &c), 0);
	CHECK(strncmp(c.s, "g:0:0:1-1:", 10) == 0);
	memset(&c, 0, sizeof(c));
	CHECK_INT(
	    stream_readgroup(ks, KEY(DEFNS, "c4"), "g", 1, "bob", 3, NULL, 0, 0, collect_entry, &c),
	    0);
	CHECK_INT(c.n, 1);
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_groups(ks, KEY(DEFNS, "c4"), collect_group, &c), 0);
	CHECK(strncmp(c.s, "g:1:1:1-2:9223372036854775807:", 30) == 0);

	/* DEL needs only the metadata */
	CHECK_INT(ks_del(ks, KEY(DEFNS, "c4")), 0);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "c1")), 0);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "c2")), 0);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "c3")), 0);
	check_unlimit_as(old);
}

/* n XADDs in one batch with MAXLEN/MINID/NOMKSTREAM: what the commands
 * one after the other leave (Kvrocks's Add: trim to MAXLEN - 1 first; an
 * entry under MAXLEN 0 or below MINID only counts as added and deleted).
 * Old entries at ms F, far in the future, make the "*" IDs F-(seq+1). */
#define F (UINT64_C(1) << 62)
static void many_base(const char *key)
{
	for (uint64_t q = 1; q <= 3; q++)
		CHECK_INT(add(key, STREAM_ADD_ID, F, q, NULL), 0);
}

static int many(const char *key, size_t n, const struct stream_trim_opt *o, unsigned flags,
		struct stream_id *last)
{
	static const struct stream_str fv[] = {S("f"), S("v")};
	struct stream_entry_in e[8];
	for (size_t j = 0; j < n; j++)
		e[j] = (struct stream_entry_in){fv, 2};
	return stream_add_many(ks, KEY(DEFNS, key), e, n, o, flags, last);
}

static void check_info(const char *key, uint64_t size, uint64_t first, uint64_t last,
		       uint64_t maxdel, uint64_t added, uint64_t lastgen)
{
	struct stream_info i;
	CHECK_INT(stream_info(ks, KEY(DEFNS, key), &i), 0);
	CHECK_INT(i.size, size);
	CHECK(i.first.seq == first && i.recorded_first.seq == first && i.last.seq == last);
	CHECK(i.first.ms == (first ? F : 0) && i.last.ms == (last ? F : 0));
	CHECK(i.max_deleted.seq == maxdel && i.max_deleted.ms == (maxdel ? F : 0));
	CHECK_INT(i.entries_added, added);
	CHECK(i.last_generated.ms == F && i.last_generated.seq == lastgen);
}

static void test_add_many(void)
{
	char s[256];
	struct stream_id last;
	struct buf snap = BUF_INIT;

	/* no trim: three entries, one batch, each its own value */
	many_base("m0");
	CHECK_INT(many("m0", 3, NULL, 0, &last), 0);
	CHECK(last.ms == F && last.seq == 6);
	check_info("m0", 6, 1, 6, 0, 6, 6);
	for (uint64_t q = 4; q <= 6; q++) {
		CHECK_INT(stream_get(ks, KEY(DEFNS, "m0"), ID(F, q), &v), 0);
		CHECK_MEM(v.data, v.len, "\001f\001v", 4);
	}
	/* distinct values stay distinct (a value is no sum of those before) */
	struct stream_str a[] = {S("a"), S("1")}, b[] = {S("b"), S("22")};
	struct stream_entry_in two[] = {{a, 2}, {b, 2}};
	CHECK_INT(stream_add_many(ks, KEY(DEFNS, "m0"), two, 2, NULL, 0, &last), 0);
	CHECK_INT(stream_get(ks, KEY(DEFNS, "m0"), ID(F, 7), &v), 0);
	CHECK_MEM(v.data, v.len, "\001a\0011", 4);
	CHECK_INT(stream_get(ks, KEY(DEFNS, "m0"), ID(F, 8), &v), 0);
	CHECK_MEM(v.data, v.len, "\001b\00222", 5);

	/* MAXLEN 2 over 3 old + 2 new: the old ones go, max_deleted the last */
	struct stream_trim_opt o = {STREAM_TRIM_MAXLEN, 2, {0, 0}};
	many_base("m1");
	CHECK_INT(many("m1", 2, &o, 0, NULL), 0);
	check_info("m1", 2, 4, 5, 3, 5, 5);
	CHECK_INT(range_str("m1", false, NULL, false, NULL, false, 0, s), 0);
	CHECK(strcmp(s, "4611686018427387904-4,4611686018427387904-5") == 0);

	/* MAXLEN 1, 3 new: two of the new ones never stored */
	o.maxlen = 1;
	many_base("m2");
	CHECK_INT(many("m2", 3, &o, 0, NULL), 0);
	check_info("m2", 1, 6, 6, 5, 6, 6);
	CHECK_INT(sub_raw("m2", "4000000000000000 0000000000000005", &v), -ENOENT);

	/* MAXLEN 5 keeps everything: no max_deleted */
	o.maxlen = 5;
	many_base("m3");
	CHECK_INT(many("m3", 2, &o, 0, NULL), 0);
	check_info("m3", 5, 1, 5, 0, 5, 5);

	/* MAXLEN 0: nothing stays; the stream lives on, empty */
	o.maxlen = 0;
	many_base("m4");
	CHECK_INT(many("m4", 2, &o, 0, &last), 0);
	CHECK(last.seq == 5);
	check_info("m4", 0, 0, 0, 5, 5, 5);

	/* MINID: F-3 keeps F-3 and the new ones; F-9 drops all */
	o = (struct stream_trim_opt){STREAM_TRIM_MINID, 0, {F, 3}};
	many_base("m5");
	CHECK_INT(many("m5", 2, &o, 0, NULL), 0);
	check_info("m5", 3, 3, 5, 2, 5, 5);
	o.minid.seq = 9;
	many_base("m6");
	CHECK_INT(many("m6", 2, &o, 0, NULL), 0);
	check_info("m6", 0, 0, 0, 5, 5, 5);

	/* NOMKSTREAM on a missing key; a bad entry: nothing changes */
	CHECK_INT(many("m7", 2, NULL, STREAM_NOMKSTREAM, NULL), -ENOENT);
	CHECK_INT(meta_raw("m7", &v), -ENOENT);
	CHECK_INT(many("m7", 2, NULL, 0, NULL), 0); /* made: * on a new key */
	CHECK_INT(many("m7", 1, NULL, STREAM_NOMKSTREAM, NULL), 0);
	fixture_snapshot(ks, KEY("m0"), &snap);
	struct stream_str odd[] = {S("f")};
	struct stream_entry_in bad[] = {{odd, 1}};
	CHECK_INT(stream_add_many(ks, KEY(DEFNS, "m0"), bad, 1, NULL, 0, NULL), -EINVAL);
	CHECK(fixture_unchanged(ks, KEY("m0"), &snap));
	CHECK_INT(many("str", 1, NULL, 0, NULL), -KV_EWRONGTYPE);
	buf_release(&snap);
}
#undef F

/* The verbs not covered above on another type and on a missing key. */
static void test_wrongtype_missing(void)
{
	struct collect c = {0};
	uint64_t n = 9;
	const struct ks_key *w = KEY(DEFNS, "str"), *m = KEY(DEFNS, "missing");
	CHECK_INT(stream_len(ks, w, &n), -KV_EWRONGTYPE);
	CHECK_INT(stream_len(ks, m, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(stream_group_destroy(ks, w, "g", 1), -KV_EWRONGTYPE);
	CHECK_INT(stream_group_setid(ks, w, "g", 1, NULL, STREAM_ENTRIES_READ_UNSET),
		  -KV_EWRONGTYPE);
	CHECK_INT(stream_group_setid(ks, m, "g", 1, NULL, STREAM_ENTRIES_READ_UNSET), -ENOENT);
	CHECK_INT(stream_consumer_create(ks, w, "g", 1, "c", 1), -KV_EWRONGTYPE);
	CHECK_INT(stream_consumer_del(ks, w, "g", 1, "c", 1, &n), -KV_EWRONGTYPE);
	CHECK_INT(stream_consumer_del(ks, m, "g", 1, "c", 1, &n), -ENOENT);
	CHECK_INT(stream_pending(ks, w, "g", 1, NULL, NULL, 0, NULL, 0, 0, collect_pel, &c),
		  -KV_EWRONGTYPE);
	CHECK_INT(stream_claim(ks, w, "g", 1, "c", 1, 0, ID(1, 0), 1, 0, NULL, NULL),
		  -KV_EWRONGTYPE);
	CHECK_INT(stream_claim(ks, m, "g", 1, "c", 1, 0, ID(1, 0), 1, 0, NULL, NULL), -ENOENT);
	CHECK_INT(stream_groups(ks, w, collect_group, &c), -KV_EWRONGTYPE);
	CHECK_INT(stream_groups(ks, m, collect_group, &c), -ENOENT);
	CHECK_INT(stream_consumers(ks, w, "g", 1, collect_consumer, &c), -KV_EWRONGTYPE);
	CHECK_INT(stream_consumers(ks, m, "g", 1, collect_consumer, &c), -ENOENT);
	CHECK_INT(stream_ack(ks, m, "g", 1, ID(1, 0), 1, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(stream_del_if_empty(ks, m), -ENOENT);
	CHECK_INT(c.n, 0);
	/* the string is untouched by all of it */
	CHECK_INT(string_get(ks, w, &v), 0);
	CHECK_MEM(v.data, v.len, "x", 1);
}

/* XREADGROUP with an ID over pending entries deleted from the stream:
 * they come as no value (Redis's nil), their delivery counts (as
 * Kvrocks counts it), and the read succeeds with or without a callback
 * (the .ctl file has none). */
static void test_readgroup_deleted(void)
{
	struct collect c = {0};
	uint64_t n;
	for (uint64_t j = 1; j <= 2; j++)
		CHECK_INT(add("rd", STREAM_ADD_ID, j, 0, NULL), 0);
	CHECK_INT(stream_group_create(ks, KEY(DEFNS, "rd"), "g", 1, ID(0, 0),
				      STREAM_ENTRIES_READ_UNSET, 0),
		  0);
	CHECK_INT(stream_readgroup(ks, KEY(DEFNS, "rd"), "g", 1, "a", 1, NULL, 0, 0, NULL, NULL),
		  0);
	CHECK_INT(stream_del(ks, KEY(DEFNS, "rd"), ID(2, 0), 1, &n), 0);
	CHECK_INT(n, 1);
	/* the last one read is the deleted one */
	CHECK_INT(
	    stream_readgroup(ks, KEY(DEFNS, "rd"), "g", 1, "a", 1, ID(0, 0), 0, 0, NULL, NULL), 0);
	CHECK_INT(stream_readgroup(ks, KEY(DEFNS, "rd"), "g", 1, "a", 1, ID(0, 0), 0, 0,
				   collect_entry, &c),
		  0);
	CHECK(strcmp(c.s, "1-0,2-0(nil)") == 0);
	memset(&c, 0, sizeof(c));
	CHECK_INT(stream_pending(ks, KEY(DEFNS, "rd"), "g", 1, NULL, NULL, 0, NULL, 0, 0,
				 collect_pel, &c),
		  0);
	CHECK(strcmp(c.s, "1-0:a:3,2-0:a:3") == 0);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_fresh(NULL, false);
	test_ids();
	test_add_bytes();
	test_add_bad();
	test_restore();
	test_range();
	test_del();
	test_trim();
	test_add_many();
	test_groups();
	test_readgroup_deleted();
	test_info_rename();
	test_wrongtype_missing();
	test_convert();
	test_corrupt_counts();
	fixture_done(ks);
	buf_release(&v);
	return check_done("test_stream");
}
