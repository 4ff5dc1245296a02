/*
 * Unit tests for t_bitmap on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case; the stored bytes
 * against kvrocks-encoding.md 6.7 and 12 (SETBIT b 9 1 -> fragment "0" =
 * 00 02, size 2; fragments "1024" and "10240"; LSB-first bits; Kvrocks's
 * fragment growth); Redis's documented BITCOUNT/BITPOS examples; and a
 * model-based run of random SETBIT/write/truncate checking fragment
 * lengths, bytes and size exactly after each operation. BITOP: the
 * destination's records against Kvrocks's Bitmap::BitOp, by hand and
 * against a model of its fragment loop.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_bitmap.h"
#include "types/t_string.h"
#include "keyspace/ks_txn.h"

#include <inttypes.h>

#define BADKEY KEY("", "b")

static struct keyspace *ks;
static struct buf v = BUF_INIT;

static void check_meta(const char *key, uint64_t size)
{
	fixture_check_meta(ks, KEY(key), 0x86, size, "");
}

/* The fragment with decimal sub-key `sub`, compared with hex (NULL:
 * absent). */
static void check_frag(const char *key, const char *sub, const char *hex)
{
	unsigned char k[256], want[1100];
	size_t kn = fixture_sub_key(key, fixture_version(ks, KEY(key)), sub, strlen(sub), k);
	int rc = store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v);
	if (!hex) {
		CHECK_INT(rc, -ENOENT);
		return;
	}
	CHECK_INT(rc, 0);
	size_t wn = check_unhex(hex, want, sizeof(want));
	CHECK_MEM(v.data, v.len, want, wn);
}

/* Length of fragment `sub`, or -1. */
static long frag_len(const char *key, uint64_t fo)
{
	char sub[24];
	struct buf sk = BUF_INIT;
	long n = -1;
	snprintf(sub, sizeof(sub), "%" PRIu64, fo);
	ks_sub_key(ks, KEY(DEFNS, key), fixture_version(ks, KEY(key)), sub, strlen(sub), &sk);
	if (store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, &v) == 0)
		n = (long)v.len;
	buf_release(&sk);
	return n;
}

static void test_setbit_bytes(void)
{
	struct ks_info info;
	/* kvrocks-encoding.md 12: SETBIT b 9 1. */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 9, true), 0);
	uint64_t ver = fixture_version(ks, KEY("b"));
	CHECK((ver >> 11) <= now_us() && (ver >> 11) > now_us() - 60000000);
	check_meta("b", 2);
	unsigned char k[128];
	size_t kn = unhex(NS_HEX " 00 00 00 01 62", k);
	put_be64(k + kn, ver);
	kn += 8;
	k[kn++] = 0x30;
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), 0);
	CHECK_MEM(v.data, v.len, "\x00\x02", 2);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "b"), 9), 1);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "b"), 8), 0);
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 9, true), 1);
	/* LSB-first: bit 0 is 0x01 stored, 0x80 in Redis order. */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 0, true), 0);
	check_frag("b", "0", "01 02");
	CHECK_INT(bitmap_getrange(ks, KEY(DEFNS, "b"), 0, -1, &v), 0);
	CHECK_MEM(v.data, v.len, "\x80\x40", 2);
	/* Growth: byte 2 doubles to 4; byte 9 (>= 2 x 4) gives exactly 10;
	 * byte 10 doubles to 20; byte 600 gives 601; byte 700 caps at 1024. */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 2 * 8, true), 0);
	check_frag("b", "0", "01 02 01 00");
	check_meta("b", 3); /* size is the byte touched + 1, not the fragment length */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 9 * 8 + 7, true), 0);
	CHECK_INT(frag_len("b", 0), 10);
	check_frag("b", "0", "01 02 01 00 00 00 00 00 00 80");
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 10 * 8, true), 0);
	CHECK_INT(frag_len("b", 0), 20);
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 600 * 8, false), 0);
	CHECK_INT(frag_len("b", 0), 601);
	check_meta("b", 601); /* clearing a bit still counts as touching it */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 700 * 8, true), 0);
	CHECK_INT(frag_len("b", 0), 1024);
	check_meta("b", 701);
	/* Fragments "1024" and "10240" (which sorts before "2048"). */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 1024 * 8 + 3, true), 0);
	check_frag("b", "1024", "08");
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 10240 * 8 + 9, true), 0);
	check_frag("b", "10240", "00 02");
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 2048 * 8, true), 0);
	check_frag("b", "2048", "01");
	check_meta("b", 10242);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "b"), 10240 * 8 + 9), 1);
	CHECK_INT(bitmap_getrange(ks, KEY(DEFNS, "b"), 10240, 10241, &v), 0);
	CHECK_MEM(v.data, v.len, "\x00\x40", 2);
	/* Clearing never shrinks. */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), 10240 * 8 + 9, false), 1);
	check_meta("b", 10242);
	check_frag("b", "10240", "00 00");
	/* The largest bit offset: fragment 536869888, byte 1023, size 512 MiB. */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "big"), BITMAP_MAX_BIT, true), 0);
	CHECK_INT(frag_len("big", 536869888), 1024);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "big"), BITMAP_MAX_BIT), 1);
	check_meta("big", BITMAP_MAX_BYTES);
	uint64_t n = 0;
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "big"), 0, -1, &n), 0);
	CHECK_INT(n, 1);
	int64_t pos = 0;
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "big"), true, 0, -1, false, &pos), 0);
	CHECK_INT(pos, (int64_t)BITMAP_MAX_BIT);
	/* Over 64 fragments: read by one scan instead of a seek each. */
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "big"), BITMAP_MAX_BYTES - 100000, 200000, &v), 0);
	CHECK_INT(v.len, 100000);
	CHECK_INT((uint8_t)v.data[99999], 0x01);
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "big"), -100000, -2, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "big"), false, -100000, -1, true, &pos), 0);
	CHECK_INT(pos, (int64_t)(BITMAP_MAX_BYTES - 100000) * 8);

	/* Bad input, wrong type, missing key. */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "b"), BITMAP_MAX_BIT + 1, true), -EINVAL);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "b"), BITMAP_MAX_BIT + 1), -EINVAL);
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "nb"), BITMAP_MAX_BIT + 1, true), -EINVAL);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "nb"), &info), -ENOENT);
	CHECK_INT(bitmap_setbit(ks, BADKEY, 1, true), -EINVAL);
	CHECK_INT(bitmap_getbit(ks, BADKEY, 1), -EINVAL);
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "str", 3, 0), 0);
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "s"), 1, true), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "s"), 1), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "nope"), 1), 0);
	check_meta("b", 10242);
	/* SETBIT 0 on a missing key creates it, as Redis. */
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "z0"), 20, false), 0);
	check_meta("z0", 3);
	check_frag("z0", "0", "00 00 00");
	/* A remembered empty bitmap loses its record. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "eb"), KV_TYPE_BITMAP), 0);
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "eb"), 1, true), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "eb"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_BITMAP && info.size == 1);
}

static void test_write_read(void)
{
	uint64_t size = 0;
	struct ks_info info;
	/* Redis order in, LSB-first stored. */
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "w"), 0, "\x80\x01", 2, &size), 0);
	CHECK_INT(size, 2);
	check_frag("w", "0", "01 80");
	check_meta("w", 2);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "w"), 0), 1);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "w"), 15), 1);
	/* Across a fragment boundary, into a hole; zeros store nothing. */
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "w"), 1022, "ABCD", 4, &size), 0);
	CHECK_INT(size, 1026);
	CHECK_INT(frag_len("w", 0), 1024);
	CHECK_INT(frag_len("w", 1024), 2);
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "w"), 5000, "\0\0\0", 3, &size), 0);
	CHECK_INT(size, 5003);
	CHECK_INT(frag_len("w", 4096), -1);
	check_meta("w", 5003);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "w"), 1020, 8, &v), 0);
	CHECK_MEM(v.data, v.len, "\0\0ABCD\0\0", 8);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "w"), 5000, 100, &v), 0);
	CHECK_MEM(v.data, v.len, "\0\0\0", 3);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "w"), 5003, 100, &v), 0);
	CHECK_INT(v.len, 0);
	CHECK_INT(bitmap_getrange(ks, KEY(DEFNS, "w"), -3, -1, &v), 0);
	CHECK_INT(v.len, 3);
	CHECK_INT(bitmap_getrange(ks, KEY(DEFNS, "w"), 1022, 1025, &v), 0);
	CHECK_MEM(v.data, v.len, "ABCD", 4);
	CHECK_INT(bitmap_getrange(ks, KEY(DEFNS, "w"), 10, 5, &v), 0);
	CHECK_INT(v.len, 0);
	/* A large read goes through the scan path. */
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "w"), 0, 1 << 20, &v), 0);
	CHECK_INT(v.len, 5003);
	CHECK_MEM(v.data + 1022, 4, "ABCD", 4);
	CHECK_MEM(v.data, 2, "\x80\x01", 2);
	/* Overwrite with zeros: bytes cleared, fragment kept, size kept. */
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "w"), 1024, "\0\0", 2, &size), 0);
	check_frag("w", "1024", "00 00");
	CHECK_INT(size, 5003);
	/* n == 0 changes nothing and creates nothing. */
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "w0"), 10, "x", 0, &size), 0);
	CHECK_INT(size, 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "w0"), &info), -ENOENT);
	/* Bad input, wrong type, missing key. */
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "w"), BITMAP_MAX_BYTES, "x", 1, &size), -EFBIG);
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "w"), UINT64_MAX, "x", 1, &size), -EFBIG);
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "w"), BITMAP_MAX_BYTES - 1, "xy", 2, &size), -EFBIG);
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "s"), 0, "x", 1, &size), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_write(ks, BADKEY, 0, "x", 1, &size), -EINVAL);
	check_meta("w", 5003);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "nope"), 0, 10, &v), 0);
	CHECK_INT(v.len, 0);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "s"), 0, 10, &v), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_read(ks, BADKEY, 0, 10, &v), -EINVAL);
	CHECK_INT(bitmap_getrange(ks, KEY(DEFNS, "nope"), 0, -1, &v), 0);
	CHECK_INT(v.len, 0);
	CHECK_INT(bitmap_getrange(ks, KEY(DEFNS, "s"), 0, -1, &v), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_getrange(ks, BADKEY, 0, -1, &v), -EINVAL);
	/* The last byte there is. */
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "wl"), BITMAP_MAX_BYTES - 1, "\x01", 1, &size), 0);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "wl"), BITMAP_MAX_BIT), 1);
}

static void test_truncate_strlen(void)
{
	struct ks_info info;
	uint64_t n = 0;
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "t"), 0, "\xff\xff\xff", 3, NULL), 0);
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "t"), 2048, "\xff", 1, NULL), 0);
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "t"), 2, 0), 0);
	check_meta("t", 2);
	check_frag("t", "0", "FF FF");
	check_frag("t", "2048", NULL);
	/* Growing again shows zeros where the cut bytes were. */
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "t"), 3000, 0), 0);
	check_meta("t", 3000);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "t"), 0, 4, &v), 0);
	CHECK_MEM(v.data, v.len, "\xff\xff\0\0", 4);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "t"), 2048 * 8), 0);
	CHECK_INT(bitmap_strlen(ks, KEY(DEFNS, "t"), &n), 0);
	CHECK_INT(n, 3000);
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "t"), BITMAP_MAX_BYTES + 1, 0), -EFBIG);
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "nope"), 5, 0), -ENOENT);
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "s"), 5, 0), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_truncate(ks, BADKEY, 5, 0), -EINVAL);
	check_meta("t", 3000);
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "t"), 0, BITMAP_KEEP_EMPTY), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("t"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "t"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_BITMAP);
	CHECK_INT(bitmap_strlen(ks, KEY(DEFNS, "t"), &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(bitmap_strlen(ks, KEY(DEFNS, "s"), &n), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_strlen(ks, BADKEY, &n), -EINVAL);
}

static void test_count_pos(void)
{
	uint64_t n = 0;
	int64_t pos = 0;
	/* Redis's documented examples. */
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "fb"), 0, "foobar", 6, NULL), 0);
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "fb"), 0, -1, &n), 0);
	CHECK_INT(n, 26);
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "fb"), 0, 0, &n), 0);
	CHECK_INT(n, 4);
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "fb"), 1, 1, &n), 0);
	CHECK_INT(n, 6);
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "fb"), -2, -1, &n), 0);
	CHECK_INT(n, 7); /* "ar" */
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "fb"), 5, 1, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "fb"), -1, -2, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "nope"), 0, -1, &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "s"), 0, -1, &n), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_bitcount(ks, BADKEY, 0, -1, &n), -EINVAL);
	/* Fragments with holes between them. */
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "b"), 0, -1, &n), 0);
	CHECK_INT(n, 8);

	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "p1"), 0, "\xff\xf0\x00", 3, NULL), 0);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "p1"), false, 0, -1, false, &pos), 0);
	CHECK_INT(pos, 12);
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "p2"), 0, "\x00\xff\xf0", 3, NULL), 0);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "p2"), true, 0, -1, false, &pos), 0);
	CHECK_INT(pos, 8);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "p2"), true, 2, -1, false, &pos), 0);
	CHECK_INT(pos, 16);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "p2"), true, 2, 2, true, &pos), 0);
	CHECK_INT(pos, 16);
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "p3"), 0, "\0\0\0", 3, NULL), 0);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "p3"), true, 0, -1, false, &pos), 0);
	CHECK_INT(pos, -1);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "p3"), false, 1, -1, false, &pos), 0);
	CHECK_INT(pos, 8); /* a hole reads as zero */
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "p4"), 0, "\xff\xff", 2, NULL), 0);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "p4"), false, 0, -1, false, &pos), 0);
	CHECK_INT(pos, 16); /* past the end without an end */
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "p4"), false, 0, -1, true, &pos), 0);
	CHECK_INT(pos, -1);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "p4"), true, 1, 0, true, &pos), 0);
	CHECK_INT(pos, -1);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "b"), true, 1, -1, false, &pos), 0);
	CHECK_INT(pos, 9);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "b"), true, 3, -1, false, &pos), 0);
	CHECK_INT(pos, 9 * 8 + 7);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "b"), true, 701, -1, false, &pos), 0);
	CHECK_INT(pos, 1024 * 8 + 3);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "b"), true, 1025, -1, false, &pos), 0);
	CHECK_INT(pos, 2048 * 8);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "b"), false, 1024, -1, false, &pos), 0);
	CHECK_INT(pos, 1024 * 8);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "nope"), true, 0, -1, false, &pos), 0);
	CHECK_INT(pos, -1);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "nope"), false, 0, -1, false, &pos), 0);
	CHECK_INT(pos, 0);
	CHECK_INT(bitmap_bitpos(ks, KEY(DEFNS, "s"), false, 0, -1, false, &pos), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_bitpos(ks, BADKEY, false, 0, -1, false, &pos), -EINVAL);
}

/* A v0 bitmap keeps v0. */
static void test_v0(void)
{
	unsigned char k[128], val[64], want[64];
	size_t kn = unhex(NS_HEX " 76", k);
	size_t vn = unhex("06 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 01", val);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_METADATA, k, kn, val, vn);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
	CHECK_INT(bitmap_setbit(ks, KEY(DEFNS, "v"), 17, true), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("v"), &v), 0);
	size_t wn = unhex("06 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 03", want);
	CHECK_MEM(v.data, v.len, want, wn);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "v"), 0, 10, &v), 0);
	CHECK_MEM(v.data, v.len, "\0\0\x40", 3);
}

/* ---- Model-based random test ------------------------------------------ */

#define MBYTES (48 * 1024)
#define MFRAGS (MBYTES / 1024)

struct bm_model {
	uint8_t b[MBYTES]; /* stored (LSB-first) bytes */
	size_t len[MFRAGS];
	uint64_t size;
};

static uint64_t rng_state = 0x6a09e667f3bcc909ull;

static size_t grow(size_t len, size_t idx)
{
	if (idx >= len * 2)
		return idx + 1;
	return len * 2 > 1024 ? 1024 : len * 2;
}

static uint8_t rev8(uint8_t x)
{
	uint8_t r = 0;
	for (int i = 0; i < 8; i++)
		if (x & (1 << i))
			r |= (uint8_t)(0x80 >> i);
	return r;
}

static int check_exact(const struct bm_model *m)
{
	struct buf raw = BUF_INIT, prefix = BUF_INIT, upper = BUF_INIT;
	int bad = 0;
	size_t frags = 0, count = 0;
	for (int f = 0; f < MFRAGS; f++)
		frags += m->len[f] > 0;
	if (fixture_meta_raw(ks, KEY("model"), &raw) != 0) {
		buf_release(&raw);
		return m->size != 0;
	}
	uint64_t ver = get_be64(raw.data + 9);
	bad |= get_be64(raw.data + 17) != m->size;
	ks_sub_key(ks, KEY(DEFNS, "model"), ver, NULL, 0, &prefix);
	buf_set(&upper, prefix.data, prefix.len);
	enc_prefix_successor(&upper);
	struct store_iter *it = store_iter_new(ks_store(ks), STORE_CF_DEFAULT, prefix.data,
					       prefix.len, upper.data, upper.len);
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it), count++) {
		size_t kn, vn;
		const char *k = store_iter_key(it, &kn);
		const char *val = store_iter_value(it, &vn);
		uint64_t fo;
		if (parse_u64(k + prefix.len, kn - prefix.len, &fo) || fo % 1024 || fo >= MBYTES ||
		    vn != m->len[fo / 1024] || memcmp(val, m->b + fo, vn))
			bad = 1;
	}
	bad |= count != frags;
	store_iter_free(it);
	/* What a reader sees: Redis order, holes zero, exactly size bytes. */
	if (bitmap_read(ks, KEY(DEFNS, "model"), 0, MBYTES * 2, &v) || v.len != m->size)
		bad = 1;
	for (uint64_t p = 0; !bad && p < m->size; p++)
		if ((uint8_t)v.data[p] != rev8(p < MBYTES ? m->b[p] : 0))
			bad = 1;
	buf_release(&raw);
	buf_release(&prefix);
	buf_release(&upper);
	return bad;
}

static void test_model(void)
{
	static struct bm_model m;
	int fails = 0;
	for (int op = 0; op < 3000; op++) {
		int rc = 0, kind = (int)check_rnd(&rng_state, 7);
		switch (kind) {
		case 0:
		case 1: { /* SETBIT */
			uint64_t bit = check_rnd(&rng_state, MBYTES * 8);
			bool on = check_rnd(&rng_state, 4) != 0;
			size_t f = (size_t)(bit / 8192), idx = (size_t)(bit / 8 % 1024);
			int old = (m.b[bit / 8] >> (bit % 8)) & 1;
			rc = bitmap_setbit(ks, KEY(DEFNS, "model"), bit, on);
			rc = rc == old ? 0 : 1;
			if (idx >= m.len[f])
				m.len[f] = grow(m.len[f], idx);
			if (on)
				m.b[bit / 8] |= (uint8_t)(1 << (bit % 8));
			else
				m.b[bit / 8] &= (uint8_t) ~(1 << (bit % 8));
			if (bit / 8 + 1 > m.size)
				m.size = bit / 8 + 1;
			break;
		}
		case 2:
		case 3: { /* write of 1..3000 bytes, some runs of zeros */
			uint64_t off = check_rnd(&rng_state, MBYTES - 3000),
				 n = 1 + check_rnd(&rng_state, 3000);
			static uint8_t data[3000];
			for (uint64_t i = 0; i < n; i++)
				data[i] = check_rnd(&rng_state, 3)
					      ? 0
					      : (uint8_t)check_rnd(&rng_state, 256);
			rc = bitmap_write(ks, KEY(DEFNS, "model"), off, data, n, NULL);
			for (uint64_t fo = off / 1024 * 1024; fo < off + n; fo += 1024) {
				size_t f = (size_t)(fo / 1024), top = 0;
				uint64_t a = (off > fo ? off : fo) - fo;
				uint64_t e = (off + n < fo + 1024 ? off + n : fo + 1024) - fo;
				bool nz = false;
				for (uint64_t p = a; p < e; p++)
					if (data[fo + p - off]) {
						top = (size_t)p;
						nz = true;
					}
				if (!m.len[f] && !nz)
					continue;
				if (nz && top >= m.len[f])
					m.len[f] = grow(m.len[f], top);
				for (uint64_t p = a; p < e && p < m.len[f]; p++)
					m.b[fo + p] = rev8(data[fo + p - off]);
			}
			if (off + n > m.size)
				m.size = off + n;
			break;
		}
		case 4: { /* truncate, sometimes to 0 */
			if (check_rnd(&rng_state, 3))
				break;
			uint64_t sz =
			    check_rnd(&rng_state, 8) == 0 ? 0 : check_rnd(&rng_state, MBYTES);
			rc = bitmap_truncate(ks, KEY(DEFNS, "model"), sz, 0);
			if (!m.size) {
				rc = rc == -ENOENT ? 0 : 1;
				break;
			}
			if (sz == 0) {
				memset(&m, 0, sizeof(m));
				break;
			}
			if (sz < m.size)
				for (size_t f = 0; f < MFRAGS; f++) {
					uint64_t fo = f * 1024;
					if (fo >= sz)
						m.len[f] = 0;
					else if (fo + m.len[f] > sz)
						m.len[f] = (size_t)(sz - fo);
				}
			for (uint64_t p = sz; p < MBYTES; p++)
				m.b[p] = 0;
			m.size = sz;
			break;
		}
		case 5: { /* BITCOUNT of a random range */
			int64_t a = (int64_t)check_rnd(&rng_state, MBYTES) - 1000,
				z = (int64_t)check_rnd(&rng_state, MBYTES) - 1000;
			uint64_t got = 0, want = 0;
			int64_t n = (int64_t)m.size;
			rc = bitmap_bitcount(ks, KEY(DEFNS, "model"), a, z, &got);
			if (n && !(a < 0 && z < 0 && a > z)) {
				a = a < 0 ? (a + n < 0 ? 0 : a + n) : a;
				z = z < 0 ? (z + n < 0 ? 0 : z + n) : z;
				if (z >= n)
					z = n - 1;
				for (int64_t p = a; p <= z; p++)
					want += (uint64_t)__builtin_popcount(m.b[p]);
			}
			if (got != want)
				rc = 1;
			break;
		}
		default: { /* BITPOS from a random start */
			bool bit = check_rnd(&rng_state, 2);
			int64_t a = (int64_t)check_rnd(&rng_state, m.size + 1), got = 0, want = -1;
			rc = bitmap_bitpos(ks, KEY(DEFNS, "model"), bit, a, -1, false, &got);
			if (!m.size) {
				want = bit ? -1 : 0;
			} else {
				for (uint64_t p = (uint64_t)a * 8; p < m.size * 8 && want < 0; p++)
					if (((m.b[p / 8] >> (p % 8)) & 1) == bit)
						want = (int64_t)p;
				if (want < 0 && !bit && (uint64_t)a < m.size)
					want = (int64_t)m.size * 8;
			}
			if (got != want)
				rc = 1;
			break;
		}
		}
		if (rc || check_exact(&m))
			if (fails++ < 5)
				fprintf(stderr, "model: op %d kind %d rc %d\n", op, kind, rc);
	}
	CHECK_INT(fails, 0);
}

/* bitmap_set, bitmap_from_string and bitmap_to_string: whole values in
 * one batch, a fresh version, fragments only where bytes are non-zero. */
static void test_set_convert(void)
{
	struct ks_info info;
	unsigned char big[3000];
	uint64_t n = 0, ver;

	/* Redis order in, LSB-first fragments out: 0x80 is bit 0. */
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "w"), "\x80\x01\0", 3, 0), 0);
	check_meta("w", 3);
	check_frag("w", "0", "01 80");
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "w"), 0), 1);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "w"), 15), 1);
	/* A replacement is a new version: old fragments are not visible. */
	ver = fixture_version(ks, KEY("w"));
	memset(big, 0, sizeof(big));
	big[2999] = 0xff;
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "w"), big, sizeof(big), 0), 0);
	CHECK(fixture_version(ks, KEY("w")) != ver);
	check_meta("w", 3000);
	check_frag("w", "0", NULL);
	check_frag("w", "1024", NULL);
	CHECK_INT(frag_len("w", 2048), 2999 - 2048 + 1);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "w"), 0, sizeof(big), &v), 0);
	CHECK_MEM(v.data, v.len, big, sizeof(big));
	/* The expiry is kept. */
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "w"), now_ms() + 100000), 0);
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "w"), "\x01", 1, 0), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "w"), &info), 0);
	CHECK(info.expire_ms > now_ms());
	CHECK_INT(info.size, 1);
	/* Empty: with an expiry there is nothing to keep it on. */
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "w"), "", 0, BITMAP_KEEP_EMPTY), -EINVAL);
	CHECK_INT(bitmap_strlen(ks, KEY(DEFNS, "w"), &n), 0);
	CHECK_INT(n, 1);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "w"), 0), 0);
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "w"), "", 0, BITMAP_KEEP_EMPTY), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("w"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "w"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_BITMAP);
	/* From remembered empty back to bytes: the record goes. */
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "w"), "\xff", 1, 0), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "w"), &info), 0);
	CHECK(!info.empty && info.size == 1);
	check_frag("w", "0", "FF");
	/* Missing key, n == 0 without KEEP_EMPTY: nothing at all. */
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "w0"), "", 0, 0), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "w0"), &info), -ENOENT);
	/* Wrong type (a string, a remembered empty hash), bad input. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "ws"), "ab", 2, 0), 0);
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "ws"), "x", 1, 0), -KV_EWRONGTYPE);
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "wh"), KV_TYPE_HASH), 0);
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "wh"), "x", 1, 0), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_set(ks, KEY(DEFNS, "w"), "x", BITMAP_MAX_BYTES + 1, 0), -EFBIG);
	CHECK_INT(bitmap_set(ks, BADKEY, "x", 1, 0), -EINVAL);

	/* string -> bitmap: the same bytes, the expiry kept. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "c"), "\x80\0\x01", 3, 0), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "c"), now_ms() + 100000), 0);
	CHECK_INT(bitmap_from_string(ks, KEY(DEFNS, "c")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "c"), &info), 0);
	CHECK(info.type == KV_TYPE_BITMAP && info.size == 3 && info.expire_ms > now_ms());
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "c"), 0, 10, &v), 0);
	CHECK_MEM(v.data, v.len, "\x80\0\x01", 3);
	check_frag("c", "0", "01 00 80");
	CHECK_INT(bitmap_from_string(ks, KEY(DEFNS, "c")), -KV_EWRONGTYPE);
	/* ... and back. */
	CHECK_INT(bitmap_to_string(ks, KEY(DEFNS, "c")), 0);
	CHECK_INT(string_get(ks, KEY(DEFNS, "c"), &v), 0);
	CHECK_MEM(v.data, v.len, "\x80\0\x01", 3);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "c"), &info), 0);
	CHECK(info.type == KV_TYPE_STRING && info.expire_ms > now_ms());
	CHECK_INT(bitmap_to_string(ks, KEY(DEFNS, "c")), -KV_EWRONGTYPE);
	/* An empty string becomes a remembered empty bitmap, and back. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "e"), "", 0, 0), 0);
	CHECK_INT(bitmap_from_string(ks, KEY(DEFNS, "e")), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("e"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "e"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_BITMAP);
	CHECK_INT(bitmap_to_string(ks, KEY(DEFNS, "e")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "e"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_STRING && info.size == 0);
	/* An empty string with an expiry cannot become an empty bitmap. */
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "e"), now_ms() + 100000), 0);
	CHECK_INT(bitmap_from_string(ks, KEY(DEFNS, "e")), -EINVAL);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "e"), &info), 0);
	CHECK(info.type == KV_TYPE_STRING);
	CHECK_INT(bitmap_from_string(ks, KEY(DEFNS, "none")), -ENOENT);
	CHECK_INT(bitmap_to_string(ks, KEY(DEFNS, "none")), -ENOENT);
	CHECK_INT(bitmap_to_string(ks, KEY(DEFNS, "wh")), -KV_EWRONGTYPE);
	CHECK_INT(bitmap_from_string(ks, BADKEY), -EINVAL);
}

/* A stored fragment longer than 1024 bytes (no writer makes one) sizes
 * nothing: readers use its first 1024 bytes, a truncate cuts it. */
static void test_long_fragment(void)
{
	static unsigned char ff[3000];
	uint64_t count;
	struct buf sk = BUF_INIT;
	memset(ff, 0xFF, sizeof(ff));
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "lf"), 0, 0), -ENOENT);
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "lf"), 0, "\x01", 1, NULL), 0);
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "lf"), 3000, 0), 0);
	CHECK_INT(ks_sub_key(ks, KEY(DEFNS, "lf"), fixture_version(ks, KEY("lf")), "0", 1, &sk), 0);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, ff, sizeof(ff));
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
	buf_release(&sk);
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "lf"), 0, -1, &count), 0);
	CHECK_INT(count, 1024 * 8);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "lf"), 1000, 100, &v), 0);
	CHECK_INT(v.len, 100);
	CHECK(v.len == 100 && (unsigned char)v.data[23] == 0xFF && v.data[24] == 0);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "lf"), 1024 * 8), 0);
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "lf"), 1500, 0), 0);
	CHECK_INT(frag_len("lf", 0), 1500);
}

/* ---- BITOP -------------------------------------------------------------
 *
 * Sources are written raw, as Kvrocks would have them (metadata, then
 * fragments of chosen lengths); the destination is checked record by
 * record: its metadata byte for byte and every fragment of its version,
 * none more. */

/* A bitmap written raw: v1 metadata (or v0 with v0), version ver, size,
 * and fragments "SUB=HEX" (stored, LSB-first bytes), NULL-terminated. */
static void raw_bitmap(const char *key, uint64_t ver, uint64_t size, const char *const *frags)
{
	unsigned char meta[32], k[256], val[1100];
	size_t mn;
	meta[0] = 0x86;
	put_be64(meta + 1, 0);
	put_be64(meta + 9, ver);
	put_be64(meta + 17, size);
	mn = 25;
	fixture_put_meta(ks, KEY(key), meta, mn);
	for (size_t i = 0; frags && frags[i]; i++) {
		const char *eq = strchr(frags[i], '=');
		size_t kn = fixture_sub_key(key, ver, frags[i], (size_t)(eq - frags[i]), k);
		size_t vn = check_unhex(eq + 1, val, sizeof(val));
		fixture_put(ks, STORE_CF_DEFAULT, k, kn, val, vn);
	}
}

/* Every fragment of key's stored version is one of want ("SUB=HEX",
 * NULL-terminated) with that very value, and each of want is there. */
static void check_frags(const char *key, const char *const *want)
{
	struct buf prefix = BUF_INIT, upper = BUF_INIT;
	unsigned char w[1100];
	size_t nwant = 0, seen = 0;
	while (want[nwant])
		nwant++;
	ks_sub_key(ks, KEY(DEFNS, key), fixture_version(ks, KEY(key)), NULL, 0, &prefix);
	buf_set(&upper, prefix.data, prefix.len);
	enc_prefix_successor(&upper);
	struct store_iter *it = store_iter_new(ks_store(ks), STORE_CF_DEFAULT, prefix.data,
					       prefix.len, upper.data, upper.len);
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it)) {
		size_t kn, vn, i;
		const char *k = store_iter_key(it, &kn);
		const char *val = store_iter_value(it, &vn);
		for (i = 0; i < nwant; i++) {
			const char *eq = strchr(want[i], '=');
			if ((size_t)(eq - want[i]) == kn - prefix.len &&
			    memcmp(want[i], k + prefix.len, kn - prefix.len) == 0)
				break;
		}
		if (i == nwant) {
			fprintf(stderr, "%s: unexpected fragment %.*s\n", key,
				(int)(kn - prefix.len), k + prefix.len);
			CHECK(!"an unexpected fragment");
			continue;
		}
		size_t wn = check_unhex(strchr(want[i], '=') + 1, w, sizeof(w));
		CHECK_MEM(val, vn, w, wn);
		seen++;
	}
	CHECK_INT(seen, nwant);
	store_iter_free(it);
	buf_release(&prefix);
	buf_release(&upper);
}

#define FRAGS(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NOFRAGS	   ((const char *const[]){NULL})

/* The hex of n bytes of b. */
static const char *hexrun(char *out, unsigned char b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		snprintf(out + 3 * i, 4, "%02x ", b);
	out[n ? 3 * n - 1 : 0] = 0;
	return out;
}

static void test_bitop_bytes(void)
{
	static char run[1100 * 3], last[64], full[1100 * 3 + 16];
	uint64_t len = 99;
	/* a: "0" = 01 02 (size 2); b: "0" = f0, "1024" = 00 00 08 (size 1027) */
	raw_bitmap("opa", 0x1000, 2, FRAGS("0=01 02"));
	raw_bitmap("opb", 0x2000, 1027, FRAGS("0=f0", "1024=00 00 08"));
	const struct ks_key ab[] = {*KEY("opa"), *KEY("opb")};

	/* OR: each fragment as long as the longest there */
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("d"), ab, 2, &len), 0);
	CHECK_INT(len, 1027);
	check_meta("d", 1027);
	check_frags("d", FRAGS("0=f1 02", "1024=00 00 08"));
	CHECK(fixture_version(ks, KEY("d")) > 0x2000);
	CHECK_INT(bitmap_read(ks, KEY(DEFNS, "d"), 0, 2, &v), 0);
	CHECK_MEM(v.data, v.len, "\x8f\x40", 2);

	/* AND: only where both have one, zeros written too */
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_AND, KEY("d"), ab, 2, &len), 0);
	CHECK_INT(len, 1027);
	check_meta("d", 1027);
	check_frags("d", FRAGS("0=00 00"));

	/* XOR of a key with itself: zeros, still written */
	const struct ks_key aa[] = {*KEY("opa"), *KEY("opa")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_XOR, KEY("d"), aa, 2, &len), 0);
	CHECK_INT(len, 2);
	check_meta("d", 2);
	check_frags("d", FRAGS("0=00 00"));

	/* NOT: every fragment up to the size, whole but the last */
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_NOT, KEY("d"), ab, 1, &len), 0);
	CHECK_INT(len, 2);
	check_frags("d", FRAGS("0=fe fd"));
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_NOT, KEY("d"), ab + 1, 1, &len), 0);
	CHECK_INT(len, 1027);
	snprintf(full, sizeof(full), "0=0f %s", hexrun(run, 0xff, 1023));
	snprintf(last, sizeof(last), "1024=ff ff f7");
	check_frags("d", FRAGS(full, last));

	/* NOT of a bitmap whose size is a multiple of 1024: its last
	 * fragment is whole; a hole reads as zeros (ff after NOT) */
	raw_bitmap("opc", 0x3000, 2048, FRAGS("1024=80"));
	const struct ks_key c1[] = {*KEY("opc")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_NOT, KEY("d"), c1, 1, &len), 0);
	CHECK_INT(len, 2048);
	snprintf(full, sizeof(full), "0=%s", hexrun(run, 0xff, 1024));
	static char full2[1100 * 3 + 16];
	snprintf(full2, sizeof(full2), "1024=7f %s", hexrun(run, 0xff, 1023));
	check_frags("d", FRAGS(full, full2));

	/* A fragment longer than the size (Kvrocks's doubling: 4 bytes for
	 * size 3) keeps its length in OR, is cut to the size by NOT. */
	raw_bitmap("ope", 0x4000, 3, FRAGS("0=01 00 04 00"));
	const struct ks_key e1[] = {*KEY("ope")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("d"), e1, 1, &len), 0);
	CHECK_INT(len, 3);
	check_frags("d", FRAGS("0=01 00 04 00"));
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_NOT, KEY("d"), e1, 1, &len), 0);
	check_frags("d", FRAGS("0=fe ff fb"));

	/* Sparse sources with gaps: only the fragments they hold */
	raw_bitmap("opf", 0x5000, BITMAP_MAX_BYTES, FRAGS("0=01", "536869888=00 80"));
	raw_bitmap("opg", 0x6000, 10241, FRAGS("10240=ff", "2048=0f"));
	const struct ks_key fg[] = {*KEY("opf"), *KEY("opg")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_XOR, KEY("d"), fg, 2, &len), 0);
	CHECK_INT(len, BITMAP_MAX_BYTES);
	check_meta("d", BITMAP_MAX_BYTES);
	check_frags("d", FRAGS("0=01", "2048=0f", "10240=ff", "536869888=00 80"));
	uint64_t count = 0;
	CHECK_INT(bitmap_bitcount(ks, KEY(DEFNS, "d"), 0, -1, &count), 0);
	CHECK_INT(count, 1 + 4 + 8 + 1);
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_AND, KEY("d"), fg, 2, &len), 0);
	CHECK_INT(len, BITMAP_MAX_BYTES);
	check_frags("d", NOFRAGS);

	/* v0 metadata of a source is read as well */
	unsigned char v0[] = {0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x2A, 0, 0, 0, 5};
	fixture_put_meta(ks, KEY("opv"), v0, sizeof(v0));
	unsigned char sk[128];
	fixture_put(ks, STORE_CF_DEFAULT, sk, fixture_sub_key("opv", 0x2A, "0", 1, sk), "\x10", 1);
	const struct ks_key v1[] = {*KEY("opv"), *KEY("opa")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("d"), v1, 2, &len), 0);
	CHECK_INT(len, 5);
	check_meta("d", 5);
	check_frags("d", FRAGS("0=11 02"));
}

static void test_bitop_missing_dest(void)
{
	uint64_t len = 99;
	struct ks_info info;
	raw_bitmap("ma", 0x1000, 3, FRAGS("0=ff 00 01"));
	const struct ks_key am[] = {*KEY("ma"), *KEY("nosuch")};
	const struct ks_key ma[] = {*KEY("nosuch"), *KEY("ma")};
	/* AND with a missing source: the size, no fragment */
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_AND, KEY("md"), am, 2, &len), 0);
	CHECK_INT(len, 3);
	check_meta("md", 3);
	check_frags("md", NOFRAGS);
	/* OR and XOR skip it, in any place */
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("md"), ma, 2, &len), 0);
	CHECK_INT(len, 3);
	check_frags("md", FRAGS("0=ff 00 01"));
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_XOR, KEY("md"), ma, 2, &len), 0);
	check_frags("md", FRAGS("0=ff 00 01"));

	/* dest's expiry is dropped; dest of another type is replaced */
	CHECK_INT(ks_expire(ks, KEY("md"), now_ms() + 100000), 0);
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("md"), am, 1, &len), 0);
	check_meta("md", 3); /* expire 0 */
	CHECK_INT(string_set(ks, KEY(DEFNS, "mstr"), "hello", 5, 0), 0);
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("mstr"), am, 1, &len), 0);
	check_meta("mstr", 3);
	check_frags("mstr", FRAGS("0=ff 00 01"));

	/* a remembered empty dest's expiry goes too (Kvrocks knows no such
	 * key: its result has none) */
	CHECK_INT(ks_empty_create(ks, KEY("mttl"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_expire(ks, KEY("mttl"), now_ms() + 100000), 0);
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("mttl"), am, 1, &len), 0);
	check_meta("mttl", 3);
	CHECK_INT(ks_lookup(ks, KEY("mttl"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_BITMAP && info.expire_ms == 0);

	/* Every source missing or empty: dest deleted, 0 */
	const struct ks_key none[] = {*KEY("nosuch"), *KEY("nosuch2")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("md"), none, 2, &len), 0);
	CHECK_INT(len, 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("md"), &v), -ENOENT);
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_NOT, KEY("mstr"), none, 1, &len), 0);
	CHECK_INT(len, 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("mstr"), &v), -ENOENT);
	/* missing dest: nothing written, nothing made */
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_AND, KEY("md"), none, 2, &len), 0);
	CHECK_INT(ks_lookup(ks, KEY("md"), &info), -ENOENT);
	/* a remembered empty dest goes too; a remembered empty source is
	 * empty */
	CHECK_INT(bitmap_write(ks, KEY(DEFNS, "mempty"), 0, "\x01", 1, NULL), 0);
	CHECK_INT(bitmap_truncate(ks, KEY(DEFNS, "mempty"), 0, BITMAP_KEEP_EMPTY), 0);
	CHECK_INT(ks_lookup(ks, KEY("mempty"), &info), 0);
	CHECK(info.empty);
	const struct ks_key em[] = {*KEY("mempty")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("mempty"), em, 1, &len), 0);
	CHECK_INT(len, 0);
	CHECK_INT(ks_lookup(ks, KEY("mempty"), &info), -ENOENT);

	/* dest is a source: read before it is replaced */
	raw_bitmap("ms", 0x7000, 2, FRAGS("0=03 01"));
	const struct ks_key self[] = {*KEY("ms"), *KEY("ma"), *KEY("ms")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_XOR, KEY("ms"), self, 3, &len), 0);
	CHECK_INT(len, 3);
	CHECK(fixture_version(ks, KEY("ms")) != 0x7000);
	check_meta("ms", 3);
	check_frags("ms", FRAGS("0=ff 00 01"));
	CHECK_INT(fixture_count_hex(ks, STORE_CF_DEFAULT,
				    NS_HEX " 00 00 00 02 6d 73 00 00 00 00 00 00 70 00"),
		  1); /* the old fragment stays for compaction, as Kvrocks's */
}

static void test_bitop_refused(void)
{
	struct buf before = BUF_INIT;
	uint64_t len = 99;
	raw_bitmap("ra", 0x1000, 1, FRAGS("0=01"));
	raw_bitmap("rd", 0x2000, 1, FRAGS("0=80"));
	CHECK_INT(string_set(ks, KEY(DEFNS, "rs"), "x", 1, 0), 0);
	CHECK_INT(ks_member_put(ks, KEY("rh"), KV_TYPE_HASH, "f", 1, "v", 1, 0, NULL), 0);
	fixture_snapshot(ks, KEY("rd"), &before);
	/* a string source (Kvrocks: WRONGTYPE), a hash source */
	const struct ks_key s1[] = {*KEY("ra"), *KEY("nosuch"), *KEY("rs")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("rd"), s1, 3, &len), -KV_EWRONGTYPE);
	const struct ks_key h1[] = {*KEY("rh"), *KEY("ra")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_AND, KEY("rd"), h1, 2, &len), -KV_EWRONGTYPE);
	/* a hash dest named as a source is a source of another type */
	const struct ks_key hd[] = {*KEY("rh")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_NOT, KEY("rh"), hd, 1, &len), -KV_EWRONGTYPE);
	CHECK_INT(ks_card(ks, KEY("rh"), KV_TYPE_HASH, &len), 0);
	CHECK_INT(len, 1);
	/* NOT takes one source; none is no BITOP */
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_NOT, KEY("rd"), h1, 2, &len), -EINVAL);
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("rd"), h1, 0, &len), -EINVAL);
	/* a fragment sub-key Kvrocks never writes ("01024") */
	raw_bitmap("rc", 0x3000, 2000, FRAGS("0=01", "01024=01"));
	const struct ks_key c1[] = {*KEY("rc")};
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("rd"), c1, 1, &len), -EUCLEAN);
	CHECK(fixture_unchanged(ks, KEY("rd"), &before));
	/* more distinct keys than one transaction locks */
	static struct ks_key many[BITMAP_BITOP_MAX_KEYS];
	static char names[BITMAP_BITOP_MAX_KEYS][16];
	for (int i = 0; i < BITMAP_BITOP_MAX_KEYS; i++) {
		snprintf(names[i], sizeof(names[i]), "k%d", i);
		many[i] = *KEY(names[i]);
	}
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("rd"), many, BITMAP_BITOP_MAX_KEYS, &len),
		  -E2BIG);
	CHECK_INT(bitmap_bitop(ks, BITMAP_OP_OR, KEY("rd"), many, BITMAP_BITOP_MAX_KEYS - 1, &len),
		  0);
	CHECK_INT(len, 0); /* all missing: rd deleted */
	buf_release(&before);
}

/* A model of Kvrocks's Bitmap::BitOp as its source reads: fragment i of
 * every source for i = 0 .. (size - 1) / 1024, one Get each. Random
 * sources (random fragment lengths and holes, sizes past them), random
 * lists (repeats, missing keys, dest among them); dest checked record by
 * record. */
#define BM_KEYS	 4
#define BM_FRAGS 6
struct bm_src {
	bool live;
	uint64_t size;
	int len[BM_FRAGS]; /* -1: no fragment */
	uint8_t b[BM_FRAGS][1024];
};

static void bm_src_put(const char *key, const struct bm_src *s, uint64_t ver)
{
	unsigned char meta[25], k[256];
	if (!s->live) {
		ks_del(ks, KEY(key));
		return;
	}
	meta[0] = 0x86;
	put_be64(meta + 1, 0);
	put_be64(meta + 9, ver);
	put_be64(meta + 17, s->size);
	fixture_put_meta(ks, KEY(key), meta, sizeof(meta));
	for (int f = 0; f < BM_FRAGS; f++) {
		char sub[16];
		if (s->len[f] < 0)
			continue;
		snprintf(sub, sizeof(sub), "%d", f * 1024);
		fixture_put(ks, STORE_CF_DEFAULT, k, fixture_sub_key(key, ver, sub, strlen(sub), k),
			    s->b[f], (size_t)s->len[f]);
	}
}

static void test_bitop_model(void)
{
	static struct bm_src src[BM_KEYS], want;
	static const char *const names[BM_KEYS] = {"m0", "m1", "m2", "m3"};
	uint64_t ver = 0x100000;
	int fails = 0;
	for (int round = 0; round < 400; round++) {
		for (int i = 0; i < BM_KEYS; i++) {
			struct bm_src *s = &src[i];
			memset(s, 0, sizeof(*s));
			s->live = check_rnd(&rng_state, 5) != 0;
			int top = -1;
			for (int f = 0; f < BM_FRAGS; f++) {
				s->len[f] = -1;
				if (check_rnd(&rng_state, 3) == 0)
					continue;
				int r = (int)check_rnd(&rng_state, 4);
				s->len[f] =
				    r == 0 ? 1024 : (int)check_rnd(&rng_state, r == 1 ? 40 : 1025);
				for (int j = 0; j < s->len[f]; j++)
					s->b[f][j] = (uint8_t)check_rnd(&rng_state, 256);
				top = f;
			}
			s->size = top < 0 ? check_rnd(&rng_state, 3)
					  : (uint64_t)top * 1024 + (uint64_t)s->len[top] +
						check_rnd(&rng_state, 3000);
			if (s->size > BM_FRAGS * 1024)
				s->size = BM_FRAGS * 1024;
			if (s->size == 0)
				s->live = false; /* size 0: no bitmap */
			bm_src_put(names[i], s, ++ver);
		}
		enum bitmap_op op = (enum bitmap_op)check_rnd(&rng_state, 4);
		size_t n = op == BITMAP_OP_NOT ? 1 : 1 + (size_t)check_rnd(&rng_state, 5);
		struct ks_key list[6];
		int li[6];
		for (size_t i = 0; i < n; i++) {
			li[i] = (int)check_rnd(&rng_state, BM_KEYS);
			list[i] = *KEY(names[li[i]]);
		}
		int d = (int)check_rnd(&rng_state, BM_KEYS + 1); /* BM_KEYS: "mdest" */
		const char *dname = d < BM_KEYS ? names[d] : "mdest";

		/* Kvrocks's loop */
		uint64_t size = 0;
		size_t found = 0;
		for (size_t i = 0; i < n; i++)
			if (src[li[i]].live) {
				found++;
				if (src[li[i]].size > size)
					size = src[li[i]].size;
			}
		memset(&want, 0, sizeof(want));
		want.live = size > 0;
		want.size = size;
		for (int f = 0; f < BM_FRAGS; f++)
			want.len[f] = -1;
		if (size && !(op == BITMAP_OP_AND && found != n)) {
			uint64_t stop = (size - 1) / 1024;
			for (uint64_t f = 0; f <= stop; f++) {
				const struct bm_src *fr[6];
				size_t nf = 0, maxlen = 0;
				bool hole = false;
				for (size_t i = 0; i < n; i++) {
					const struct bm_src *s = &src[li[i]];
					if (!s->live)
						continue;
					if (s->len[f] < 0) {
						if (op == BITMAP_OP_AND) {
							hole = true;
							break;
						}
						continue;
					}
					fr[nf++] = s;
					if ((size_t)s->len[f] > maxlen)
						maxlen = (size_t)s->len[f];
				}
				if (hole)
					maxlen = 0;
				if (maxlen == 0 && op != BITMAP_OP_NOT)
					continue;
				uint8_t res[1024];
				memset(res, op == BITMAP_OP_NOT ? 0xff : 0, 1024);
				for (size_t j = 0; j < maxlen; j++) {
					uint8_t o = (size_t)fr[0]->len[f] <= j ? 0 : fr[0]->b[f][j];
					if (op == BITMAP_OP_NOT)
						o = (uint8_t)~o;
					for (size_t i = 1; i < nf; i++) {
						uint8_t by =
						    (size_t)fr[i]->len[f] <= j ? 0 : fr[i]->b[f][j];
						if (op == BITMAP_OP_AND)
							o &= by;
						else if (op == BITMAP_OP_OR)
							o |= by;
						else if (op == BITMAP_OP_XOR)
							o ^= by;
					}
					res[j] = o;
				}
				if (op == BITMAP_OP_NOT)
					maxlen = f == stop ? size - f * 1024 : 1024;
				want.len[f] = (int)maxlen;
				memcpy(want.b[f], res, maxlen);
			}
		}

		uint64_t len = 99;
		int rc = bitmap_bitop(ks, op, KEY(dname), list, n, &len);
		bool bad = rc != 0 || len != size;
		struct buf r = BUF_INIT;
		int mrc = fixture_meta_raw(ks, KEY(dname), &r);
		if (!want.live) {
			bad |= mrc != -ENOENT;
		} else if (mrc != 0 || r.len != 25 || (uint8_t)r.data[0] != 0x86 ||
			   get_be64(r.data + 1) != 0 || get_be64(r.data + 17) != size) {
			bad = true;
		} else {
			uint64_t dv = get_be64(r.data + 9);
			struct buf prefix = BUF_INIT, upper = BUF_INIT;
			ks_sub_key(ks, KEY(DEFNS, dname), dv, NULL, 0, &prefix);
			buf_set(&upper, prefix.data, prefix.len);
			enc_prefix_successor(&upper);
			struct store_iter *it =
			    store_iter_new(ks_store(ks), STORE_CF_DEFAULT, prefix.data, prefix.len,
					   upper.data, upper.len);
			int count = 0, nwant = 0;
			for (int f = 0; f < BM_FRAGS; f++)
				nwant += want.len[f] >= 0;
			for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it)) {
				size_t kn, vn;
				const char *k = store_iter_key(it, &kn);
				const char *val = store_iter_value(it, &vn);
				uint64_t fo;
				count++;
				if (parse_u64(k + prefix.len, kn - prefix.len, &fo) || fo % 1024 ||
				    fo / 1024 >= BM_FRAGS || want.len[fo / 1024] < 0 ||
				    vn != (size_t)want.len[fo / 1024] ||
				    memcmp(val, want.b[fo / 1024], vn) != 0)
					bad = true;
			}
			bad |= count != nwant;
			store_iter_free(it);
			buf_release(&prefix);
			buf_release(&upper);
		}
		buf_release(&r);
		if (bad && fails++ < 3)
			fprintf(stderr,
				"bitop model: round %d op %d n %zu dest %s: rc %d len %" PRIu64
				" want %" PRIu64 "\n",
				round, (int)op, n, dname, rc, len, size);
		CHECK(!bad);
		/* the dest read back as a source next round: forget it */
		if (d < BM_KEYS)
			src[d].live = false;
	}
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_bitmap");
	test_setbit_bytes();
	test_write_read();
	test_truncate_strlen();
	test_count_pos();
	test_v0();
	test_set_convert();
	test_long_fragment();
	test_model();
	test_bitop_bytes();
	test_bitop_missing_dest();
	test_bitop_refused();
	test_bitop_model();
	fixture_done(ks);
	buf_release(&v);
	return check_done("test_bitmap");
}
