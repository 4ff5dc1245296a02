/*
 * Unit tests for t_topk on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case (bad input checks
 * the errno and that the stored records did not change), and the stored
 * bytes of kvfs's top-k layout (docs/encoding.md) written by hand in hex:
 * fingerprints and bucket positions come from an independent MurmurHash2
 * in Python ("a": fp F23CF517, rows 0/1 of width 4 at 2/0; "b": fp
 * 2ADFED97 at 0/1; "c": fp AEA5DE10 at 1/0).
 */
#include "check.h"
#include "fixture.h"
#include "types/t_string.h"
#include "types/t_topk.h"

#include <math.h>
#include <stdlib.h>

#define ITEM(s, n) ((struct topk_item){(s), strlen(s), (n)})

static struct keyspace *ks;

static int meta_raw(const char *key, struct buf *o)
{
	return fixture_meta_raw(ks, KEY(key), o);
}

static void check_meta(const char *key, uint64_t size, const char *tailhex)
{
	struct buf r = BUF_INIT;
	unsigned char want[64];
	size_t n = check_unhex(tailhex, want, sizeof(want));
	CHECK_INT(meta_raw(key, &r), 0);
	CHECK_INT(r.len, 25 + 28);
	if (r.len == 53) {
		CHECK_INT((uint8_t)r.data[0], 0x8E);
		CHECK_INT(get_be64(r.data + 17), size);
		CHECK_MEM(r.data + 25, 28, want, n);
	}
	buf_release(&r);
}

static int sub_raw(const char *key, const char *subhex, struct buf *o)
{
	return fixture_sub_raw_hex(ks, STORE_CF_DEFAULT, KEY(key), subhex, o);
}

static void check_sub(const char *key, const char *subhex, const char *valhex)
{
	fixture_check_sub_hex(ks, STORE_CF_DEFAULT, KEY(key), subhex, valhex);
}

static void snapshot(const char *key, struct buf *o)
{
	fixture_snapshot(ks, KEY(key), o);
}

static bool unchanged(const char *key, const struct buf *before)
{
	return fixture_unchanged(ks, KEY(key), before);
}

/* decay 0.9 = 3FEC CCCC CCCC CCCD, sortable: sign bit set */
#define DECAY09 "BF EC CC CC CC CC CC CD"

static void test_reserve(void)
{
	struct buf snap = BUF_INIT;
	struct ks_info info;
	struct topk_params p = {3, 8, 7, 0.9};
	CHECK_INT(topk_reserve(ks, KEY(DEFNS, "t"), &p), 0);
	check_meta("t", 0, "00 00 00 03 00 00 00 08 00 00 00 07" DECAY09 "00 00 00 00 00 00 00 00");
	snapshot("t", &snap);
	CHECK_INT(snap.len, 53); /* no row, no heap record */
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "t"), &info), 0);
	CHECK(info.type == KV_TYPE_TOPK && !info.empty);
	CHECK_INT(topk_reserve(ks, KEY(DEFNS, "t"), &p), -EEXIST);
	CHECK(unchanged("t", &snap));
	CHECK_INT(string_set(ks, KEY(DEFNS, "str"), "x", 1, 0), 0);
	CHECK_INT(topk_reserve(ks, KEY(DEFNS, "str"), &p), -EEXIST);
	struct topk_params bad[] = {{0, 8, 7, 0.9}, {3, 0, 7, 0.9}, {3, 8, 0, 0.9},
				    {3, 8, 7, 0},   {3, 8, 7, 1.1}, {3, 8, 7, NAN}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK_INT(topk_reserve(ks, KEY(DEFNS, "bad"), &bad[i]), -EINVAL);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "bad"), &info), -ENOENT);
	/* over a remembered empty collection */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "e"), KV_TYPE_SET), 0);
	CHECK_INT(topk_reserve(ks, KEY(DEFNS, "e"), &p), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "e"), &info), 0);
	CHECK(info.type == KV_TYPE_TOPK && !info.empty);
	buf_release(&snap);
}

static size_t n_expelled;
static char expelled[16];

static void on_expelled(void *arg, size_t i, const char *item, size_t len)
{
	(void)arg;
	(void)i;
	if (item && len < sizeof(expelled)) {
		memcpy(expelled, item, len);
		expelled[len] = 0;
		n_expelled++;
	}
}

static void test_add(void)
{
	struct buf snap = BUF_INIT;
	struct topk_params p = {2, 4, 2, 0.9};
	CHECK_INT(topk_reserve(ks, KEY(DEFNS, "a"), &p), 0);
	struct topk_item it[] = {ITEM("a", 1), ITEM("b", 2)};
	CHECK_INT(topk_add(ks, KEY(DEFNS, "a"), it, 2, on_expelled, NULL), 0);
	CHECK_INT(n_expelled, 0);
	/* row 0: b at 0 (count 2), a at 2 (count 1); row 1: a at 0, b at 1 */
	check_sub("a", "00 00 00 00 00",
		  "2A DF ED 97 00 00 00 02 00 00 00 00 00 00 00 00"
		  "F2 3C F5 17 00 00 00 01 00 00 00 00 00 00 00 00");
	check_sub("a", "00 00 00 00 01",
		  "F2 3C F5 17 00 00 00 01 2A DF ED 97 00 00 00 02"
		  "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	/* the heap in array order: a (1) then b (2) */
	check_sub("a", "01", "00 00 00 01 00 00 00 01 61 00 00 00 02 00 00 00 01 62");
	check_meta("a", 2, "00 00 00 02 00 00 00 04 00 00 00 02" DECAY09 "00 00 00 00 00 00 00 00");
	/* c: row 0 bucket 1 is free (count 3 reaches the minimum 1): a goes */
	struct topk_item c = ITEM("c", 3);
	CHECK_INT(topk_add(ks, KEY(DEFNS, "a"), &c, 1, on_expelled, NULL), 0);
	CHECK_INT(n_expelled, 1);
	CHECK(strcmp(expelled, "a") == 0);
	CHECK_INT(topk_has(ks, KEY(DEFNS, "a"), "c", 1), 1);
	CHECK_INT(topk_has(ks, KEY(DEFNS, "a"), "a", 1), 0);
	uint32_t cnt = 0;
	CHECK_INT(topk_count_of(ks, KEY(DEFNS, "a"), "c", 1, &cnt), 0);
	CHECK_INT(cnt, 3);
	/* c decayed a's bucket of row 1 with some draws */
	struct hk t;
	CHECK_INT(topk_state(ks, KEY(DEFNS, "a"), &t), 0);
	CHECK(t.draws > 0 && t.n == 2);
	hk_release(&t);
	/* bad input: nothing changes */
	snapshot("a", &snap);
	struct topk_item bad[] = {ITEM("x", 1), ITEM("y", 0)};
	CHECK_INT(topk_add(ks, KEY(DEFNS, "a"), bad, 2, NULL, NULL), -EINVAL);
	bad[1].incr = TOPK_INCR_MAX + 1;
	CHECK_INT(topk_add(ks, KEY(DEFNS, "a"), bad, 2, NULL, NULL), -EINVAL);
	char *longitem = calloc(1, TOPK_ITEM_MAX + 1);
	bad[1] = (struct topk_item){longitem, TOPK_ITEM_MAX + 1, 1};
	CHECK_INT(topk_add(ks, KEY(DEFNS, "a"), bad, 2, NULL, NULL), -EINVAL);
	free(longitem);
	CHECK_INT(topk_add(ks, KEY(DEFNS, "a"), bad, 0, NULL, NULL), -EINVAL);
	CHECK(unchanged("a", &snap));
	CHECK_INT(topk_add(ks, KEY(DEFNS, "str"), it, 1, NULL, NULL), -KV_EWRONGTYPE);
	CHECK_INT(topk_add(ks, KEY(DEFNS, "nokey"), it, 1, NULL, NULL), -ENOENT);
	buf_release(&snap);
}

static void test_reads(void)
{
	struct topk_params p;
	uint32_t cnt;
	struct hk t;
	CHECK_INT(topk_info(ks, KEY(DEFNS, "a"), &p), 0);
	CHECK(p.k == 2 && p.width == 4 && p.depth == 2 && p.decay == 0.9);
	CHECK_INT(topk_info(ks, KEY(DEFNS, "str"), &p), -KV_EWRONGTYPE);
	CHECK_INT(topk_info(ks, KEY(DEFNS, "nokey"), &p), -ENOENT);
	CHECK_INT(topk_has(ks, KEY(DEFNS, "str"), "a", 1), -KV_EWRONGTYPE);
	CHECK_INT(topk_has(ks, KEY(DEFNS, "nokey"), "a", 1), -ENOENT);
	CHECK_INT(topk_count_of(ks, KEY(DEFNS, "a"), "zz", 2, &cnt), 0);
	CHECK_INT(cnt, 0);
	CHECK_INT(topk_count_of(ks, KEY(DEFNS, "str"), "a", 1, &cnt), -KV_EWRONGTYPE);
	CHECK_INT(topk_count_of(ks, KEY(DEFNS, "nokey"), "a", 1, &cnt), -ENOENT);
	CHECK_INT(topk_state(ks, KEY(DEFNS, "a"), &t), 0);
	const struct hk_entry *l[2];
	hk_list(&t, l);
	CHECK(l[0]->count == 3 && l[0]->item[0] == 'c' && l[1]->item[0] == 'b');
	hk_release(&t);
	CHECK_INT(topk_state(ks, KEY(DEFNS, "nokey"), &t), -ENOENT);
	hk_release(&t);
}

static void test_setters(void)
{
	struct buf snap = BUF_INIT, v = BUF_INIT;
	struct topk_params p = {2, 4, 2, 0.9}, q = {5, 3, 1, 0.5};
	CHECK_INT(topk_reserve(ks, KEY(DEFNS, "s"), &p), 0);
	/* parameters while empty */
	CHECK_INT(topk_set_params(ks, KEY(DEFNS, "s"), &q), 0);
	/* decay 0.5 = 3FE0.. -> BF E0.. */
	check_meta("s", 0,
		   "00 00 00 05 00 00 00 03 00 00 00 01 BF E0 00 00 00 00 00 00"
		   "00 00 00 00 00 00 00 00");
	snapshot("s", &snap);
	struct topk_params bad = {0, 3, 1, 0.5};
	CHECK_INT(topk_set_params(ks, KEY(DEFNS, "s"), &bad), -EINVAL);
	CHECK(unchanged("s", &snap));
	/* buckets: 3 of them */
	struct hk_bucket b[3] = {{0, 0}, {7, 9}, {0, 0}};
	CHECK_INT(topk_set_buckets(ks, KEY(DEFNS, "s"), b, 3), 0);
	check_sub("s", "00 00 00 00 00",
		  "00 00 00 00 00 00 00 00 00 00 00 07 00 00 00 09"
		  "00 00 00 00 00 00 00 00");
	snapshot("s", &snap);
	CHECK_INT(topk_set_buckets(ks, KEY(DEFNS, "s"), b, 2), -EINVAL);
	CHECK(unchanged("s", &snap));
	/* not empty any more */
	CHECK_INT(topk_set_params(ks, KEY(DEFNS, "s"), &p), -ENOTEMPTY);
	CHECK(unchanged("s", &snap));
	/* all-zero buckets: the row record goes */
	b[1] = (struct hk_bucket){0, 0};
	CHECK_INT(topk_set_buckets(ks, KEY(DEFNS, "s"), b, 3), 0);
	CHECK_INT(sub_raw("s", "00 00 00 00 00", &v), -ENOENT);
	/* heap */
	struct hk_entry h[] = {{1, 0, "x", 1}, {4, 0, "yy", 2}, {2, 0, "z", 1}};
	CHECK_INT(topk_set_heap(ks, KEY(DEFNS, "s"), h, 3), 0);
	check_sub("s", "01",
		  "00 00 00 01 00 00 00 01 78 00 00 00 04 00 00 00 02 79 79"
		  "00 00 00 02 00 00 00 01 7A");
	check_meta("s", 3,
		   "00 00 00 05 00 00 00 03 00 00 00 01 BF E0 00 00 00 00 00 00"
		   "00 00 00 00 00 00 00 00");
	snapshot("s", &snap);
	struct hk_entry notheap[] = {{5, 0, "x", 1}, {4, 0, "y", 1}};
	CHECK_INT(topk_set_heap(ks, KEY(DEFNS, "s"), notheap, 2), -EINVAL);
	struct hk_entry dup[] = {{1, 0, "x", 1}, {4, 0, "x", 1}};
	CHECK_INT(topk_set_heap(ks, KEY(DEFNS, "s"), dup, 2), -EINVAL);
	struct hk_entry six[6] = {{1, 0, "a", 1}, {1, 0, "b", 1}, {1, 0, "c", 1},
				  {1, 0, "d", 1}, {1, 0, "e", 1}, {1, 0, "f", 1}};
	CHECK_INT(topk_set_heap(ks, KEY(DEFNS, "s"), six, 6), -EINVAL); /* k is 5 */
	CHECK(unchanged("s", &snap));
	/* draws */
	CHECK_INT(topk_set_draws(ks, KEY(DEFNS, "s"), 0x0102030405060708ull), 0);
	check_meta("s", 3,
		   "00 00 00 05 00 00 00 03 00 00 00 01 BF E0 00 00 00 00 00 00"
		   "01 02 03 04 05 06 07 08");
	/* an empty heap: the record goes */
	CHECK_INT(topk_set_heap(ks, KEY(DEFNS, "s"), h, 0), 0);
	CHECK_INT(sub_raw("s", "01", &v), -ENOENT);
	CHECK_INT(topk_set_draws(ks, KEY(DEFNS, "str"), 1), -KV_EWRONGTYPE);
	CHECK_INT(topk_set_heap(ks, KEY(DEFNS, "nokey"), h, 1), -ENOENT);
	buf_release(&snap);
	buf_release(&v);
}

/* Put raw bytes at `key`'s metadata key (sub NULL) or at its sub-key
 * subhex of version `version`. */
static void plant(const char *key, const char *subhex, uint64_t version, const void *v, size_t n)
{
	unsigned char sub[64];
	struct buf k = BUF_INIT;
	int rc = subhex ? ks_sub_key(ks, KEY(DEFNS, key), version, sub,
				     check_unhex(subhex, sub, sizeof(sub)), &k)
			: ks_meta_key(ks, KEY(DEFNS, key), &k);
	CHECK_INT(rc, 0);
	CHECK_INT(
	    fixture_write(ks, subhex ? STORE_CF_DEFAULT : STORE_CF_METADATA, k.data, k.len, v, n),
	    0);
	buf_release(&k);
}

/* A top-k metadata record of version 4096 with this tail (hex). */
static void plant_meta(const char *key, const char *tailhex)
{
	unsigned char r[25 + 64] = {0x8E};
	put_be64(r + 9, 4096);
	size_t n = check_unhex(tailhex, r + 25, sizeof(r) - 25);
	plant(key, NULL, 0, r, 25 + n);
}

/* Every verb that loads a corrupt top-k answers -EUCLEAN and changes
 * nothing. */
static void check_corrupt(const char *key, bool params_bad)
{
	struct topk_params p;
	struct hk t;
	struct topk_item it = ITEM("x", 1);
	struct buf snap = BUF_INIT;
	snapshot(key, &snap);
	CHECK_INT(topk_info(ks, KEY(DEFNS, key), &p), params_bad ? -EUCLEAN : 0);
	CHECK_INT(topk_state(ks, KEY(DEFNS, key), &t), -EUCLEAN);
	hk_release(&t);
	CHECK_INT(topk_add(ks, KEY(DEFNS, key), &it, 1, NULL, NULL), -EUCLEAN);
	CHECK_INT(topk_set_draws(ks, KEY(DEFNS, key), 7), -EUCLEAN);
	CHECK_INT(topk_has(ks, KEY(DEFNS, key), "x", 1), -EUCLEAN);
	CHECK(unchanged(key, &snap));
	buf_release(&snap);
}

/* Issue 15: the stored k, width and depth size the sketch's arrays and
 * loops; out of kvfs's bounds they are -EUCLEAN before anything is
 * allocated. With the address space capped at 256 MiB over what the
 * process has, a sketch sized by 2^32-1 x 2^32-1 buckets fails the test
 * if it is allocated. */
static void test_corrupt(void)
{
	struct rlimit old = check_limit_as(256u << 20);
	/* tails: k | width | depth | decay 0.9 | draws */
	plant_meta("c1", "00000000 00000008 00000007" DECAY09 "0000000000000000");
	check_corrupt("c1", true);
	plant_meta("c2", "00000003 FFFFFFFF FFFFFFFF" DECAY09 "0000000000000000");
	check_corrupt("c2", true);
	plant_meta("c3", "00000003 01000000 00000400" DECAY09 "0000000000000000");
	check_corrupt("c3", true);
	plant_meta("c4", "FFFFFFFF 00000008 00000007" DECAY09 "0000000000000000");
	check_corrupt("c4", true);
	plant_meta("c5", "00000003 00000008 00000007 FFF8000000000000 0000000000000000");
	check_corrupt("c5", true);
	plant_meta("c6", "00000003 00000008 00000007" DECAY09 "00000000000000"); /* 27 bytes */
	check_corrupt("c6", true);
	/* Well-formed parameters (k 1, width 2, depth 1), corrupt records: */
	static const unsigned char heap2[] = {0, 0, 0, 2, 0, 0, 0, 1, 'a',
					      0, 0, 0, 1, 0, 0, 0, 1, 'b'};
	plant_meta("c7", "00000001 00000002 00000001" DECAY09 "0000000000000000");
	plant("c7", "01", 4096, heap2, sizeof(heap2)); /* two entries, k is 1 */
	check_corrupt("c7", false);
	plant_meta("c8", "00000001 00000002 00000001" DECAY09 "0000000000000000");
	plant("c8", "01", 4096, heap2, 9 + 3); /* the second entry cut short */
	check_corrupt("c8", false);
	plant_meta("c9", "00000001 00000002 00000001" DECAY09 "0000000000000000");
	plant("c9", "00 00000000", 4096, heap2, 8); /* a row of 8 bytes, not 16 */
	check_corrupt("c9", false);
	plant_meta("c10", "00000001 00000002 00000001" DECAY09 "0000000000000000");
	static const unsigned char long_item[] = {0, 0, 0, 1, 0, 1, 0, 1}; /* 65537 bytes */
	plant("c10", "01", 4096, long_item, sizeof(long_item));
	check_corrupt("c10", false);
	check_unlimit_as(old);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_topk");
	test_reserve();
	test_add();
	test_reads();
	test_setters();
	test_corrupt();
	fixture_done(ks);
	return check_done("test_topk");
}
