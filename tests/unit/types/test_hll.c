/*
 * Unit tests for alg_hll and t_hll on a temporary database: MurmurHash64A
 * and register choice against vectors from an independent implementation,
 * counts against answers of a real redis-server (PFCOUNT of the same
 * items), register packing, every verb with a success, wrong-type,
 * missing-key and bad-input case, and the stored bytes against
 * kvrocks-encoding.md 6.11 (metadata 8B ... 00, 768-byte segments named
 * "0".."15", only changed segments written).
 */
#include "types/alg_hll.h"
#include "check.h"
#include "fixture.h"
#include "types/t_convert.h"
#include "types/t_hash.h"
#include "types/t_hll.h"
#include "types/t_string.h"

#include <inttypes.h>
#include <stdio.h>

static struct keyspace *ks;

/* Items "1".."n" (as `seq 1 n` writes them), into a fresh key. */
static int add_seq(const char *key, unsigned from, unsigned to)
{
	static char bufs[16][12];
	struct iovec it[16];
	size_t n = 0;
	int rc = 0;
	for (unsigned i = from; i <= to && !rc; i++) {
		it[n].iov_len = (size_t)snprintf(bufs[n], sizeof(bufs[n]), "%u", i);
		it[n].iov_base = bufs[n];
		if (++n == 16 || i == to) {
			rc = hll_add(ks, KEY(key), it, n, NULL);
			n = 0;
		}
	}
	return rc;
}

static uint64_t count1(const char *key)
{
	uint64_t c = 999999;
	CHECK_INT(hll_count(ks, KEY(key), 1, &c), 0);
	return c;
}

static int meta_raw(const char *key, struct buf *out)
{
	return fixture_meta_raw(ks, KEY(key), out);
}

/* The stored value of segment `seg` ("0".."15") of key: its length, or
 * -ENOENT. */
static long seg_len(const char *key, const char *seg, struct buf *val)
{
	struct buf raw = BUF_INIT;
	unsigned char k[128];
	long rc;
	if (meta_raw(key, &raw) || raw.len < 25) {
		buf_release(&raw);
		return -ENOENT;
	}
	size_t kn = fixture_sub_key(key, get_be64(raw.data + 9), seg, strlen(seg), k);
	rc = store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, val);
	buf_release(&raw);
	return rc ? rc : (long)val->len;
}

static void test_murmur(void)
{
	/* From an independent MurmurHash64A (Python, the published algorithm). */
	CHECK(hll_dense_murmur64a("", 0, HLL_SEED) == 0xd8dfea6585bc9732ULL);
	CHECK(hll_dense_murmur64a("a", 1, HLL_SEED) == 0x53d2470a9b43b1a7ULL);
	CHECK(hll_dense_murmur64a("hello", 5, HLL_SEED) == 0x0f656f01eecfe400ULL);
	CHECK(hll_dense_murmur64a("abcdefgh", 8, HLL_SEED) == 0xf3a65df559914567ULL);
	CHECK(hll_dense_murmur64a("abcdefghijklmnopqrstu", 21, HLL_SEED) == 0xf716943f7fdffb2aULL);
	uint32_t idx;
	uint8_t val;
	hll_dense_pat_len("a", 1, &idx, &val);
	CHECK_INT(idx, 12711);
	CHECK_INT(val, 2);
	hll_dense_pat_len("hello", 5, &idx, &val);
	CHECK_INT(idx, 9216);
	CHECK_INT(val, 1);
	hll_dense_pat_len("", 0, &idx, &val);
	CHECK_INT(idx, 5938);
	CHECK_INT(val, 2);
}

static void test_packing(void)
{
	static uint8_t r[HLL_DENSE_BYTES];
	memset(r, 0, sizeof(r));
	/* Register 1 = 63: bits 6..11 -> byte 0 bits 6,7 and byte 1 bits 0..3. */
	hll_dense_set(r, 1, 63);
	CHECK_INT(r[0], 0xC0);
	CHECK_INT(r[1], 0x0F);
	CHECK_INT(hll_dense_get(r, 1), 63);
	CHECK_INT(hll_dense_get(r, 0), 0);
	CHECK_INT(hll_dense_get(r, 2), 0);
	/* The last register is the top 6 bits of the last byte. */
	hll_dense_set(r, HLL_REGISTERS - 1, 5);
	CHECK_INT(r[HLL_DENSE_BYTES - 1], 5 << 2);
	CHECK_INT(hll_dense_get(r, HLL_REGISTERS - 1), 5);
	CHECK_INT(hll_dense_count(memset(r, 0, sizeof(r))), 0);
}

static void test_counts_like_redis(void)
{
	/* PFCOUNT answers of redis-server 7 for PFADD of `seq 1 N`. */
	static const struct {
		unsigned n;
		uint64_t want;
	} t[] = {{1, 1}, {10, 10}, {100, 100}, {1000, 1001}, {10000, 9988}};
	char key[16];
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(key, sizeof(key), "c%u", t[i].n);
		CHECK_INT(add_seq(key, 1, t[i].n), 0);
		CHECK_INT(count1(key), t[i].want);
	}
	/* PFCOUNT u1 u2 with u1 = 1..5000, u2 = 2501..7500: Redis says 7463. */
	CHECK_INT(add_seq("u1", 1, 5000), 0);
	CHECK_INT(add_seq("u2", 2501, 7500), 0);
	struct ks_key two[2] = {*KEY("u1"), *KEY("u2")};
	uint64_t c = 0;
	CHECK_INT(hll_count(ks, two, 2, &c), 0);
	CHECK_INT(c, 7463);
}

static void test_add(void)
{
	struct iovec a = {"a", 1};
	struct buf raw = BUF_INIT, val = BUF_INIT;
	bool changed = false;
	/* Success: a new key, then the same item again. */
	CHECK_INT(hll_add(ks, KEY("h"), &a, 1, &changed), 0);
	CHECK(changed);
	CHECK_INT(hll_add(ks, KEY("h"), &a, 1, &changed), 0);
	CHECK(!changed);
	CHECK_INT(count1("h"), 1);
	/* Bytes: metadata 8B | expire 0 | version | size 0 | encode_type 0. */
	CHECK_INT(meta_raw("h", &raw), 0);
	CHECK_INT(raw.len, 26);
	CHECK_INT((unsigned char)raw.data[0], 0x8B);
	CHECK(get_be64(raw.data + 1) == 0);
	CHECK(get_be64(raw.data + 17) == 0);
	CHECK_INT(raw.data[25], 0);
	/* "a" sets register 12711 (segment 12, "12") to 2; nothing else stored. */
	CHECK_INT(seg_len("h", "12", &val), HLL_SEGMENT_BYTES);
	uint8_t regs[HLL_DENSE_BYTES];
	memset(regs, 0, sizeof(regs));
	hll_dense_set(regs, 12711, 2);
	CHECK_MEM(val.data, val.len, regs + 12 * HLL_SEGMENT_BYTES, HLL_SEGMENT_BYTES);
	for (int s = 0; s < HLL_SEGMENTS; s++) {
		char name[4];
		snprintf(name, sizeof(name), "%d", s);
		if (s != 12)
			CHECK_INT(seg_len("h", name, &val), -ENOENT);
	}
	/* PFADD with no items creates an empty key (emptyable type). */
	CHECK_INT(hll_add(ks, KEY("e"), NULL, 0, &changed), 0);
	CHECK(changed);
	CHECK_INT(count1("e"), 0);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY("e"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_HLL);
	/* Wrong type: a string key. */
	CHECK_INT(string_set(ks, KEY("s"), "x", 1, 0), 0);
	CHECK_INT(hll_add(ks, KEY("s"), &a, 1, NULL), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY("s"), &val), 0);
	CHECK_MEM(val.data, val.len, "x", 1);
	buf_release(&raw);
	buf_release(&val);
}

static void test_count_missing_and_wrongtype(void)
{
	uint64_t c = 7;
	CHECK_INT(hll_count(ks, KEY("nope"), 1, &c), 0);
	CHECK_INT(c, 0);
	CHECK_INT(hll_count(ks, KEY("s"), 1, &c), -KV_EWRONGTYPE);
	CHECK_INT(hll_count(ks, KEY("h"), 0, &c), -EINVAL);
	uint8_t regs[HLL_DENSE_BYTES];
	CHECK_INT(hll_registers(ks, KEY("nope"), regs), -ENOENT);
	CHECK_INT(hll_registers(ks, KEY("s"), regs), -KV_EWRONGTYPE);
}

static void test_merge(void)
{
	struct ks_key srcs[2] = {*KEY("u1"), *KEY("u2")};
	CHECK_INT(hll_merge(ks, KEY("m"), srcs, 2), 0);
	CHECK_INT(count1("m"), 7463);
	/* Merging into an existing key keeps its registers (union). */
	CHECK_INT(hll_merge(ks, KEY("c10"), srcs, 1), 0);
	uint8_t a[HLL_DENSE_BYTES], b[HLL_DENSE_BYTES];
	CHECK_INT(hll_registers(ks, KEY("u1"), a), 0);
	CHECK_INT(hll_registers(ks, KEY("c10"), b), 0);
	CHECK(memcmp(a, b, sizeof(a)) == 0); /* 1..10 are in 1..5000 */
	/* A missing source is empty. */
	struct ks_key missing = *KEY("nope");
	CHECK_INT(hll_merge(ks, KEY("m2"), &missing, 1), 0);
	CHECK_INT(count1("m2"), 0);
	/* A wrong-type source or destination: refused, nothing changed. */
	struct ks_key bad[2] = {*KEY("u1"), *KEY("s")};
	CHECK_INT(hll_merge(ks, KEY("m3"), bad, 2), -KV_EWRONGTYPE);
	CHECK_INT(hll_registers(ks, KEY("m3"), a), -ENOENT);
	CHECK_INT(hll_merge(ks, KEY("s"), srcs, 1), -KV_EWRONGTYPE);
}

static void test_set_registers(void)
{
	static uint8_t r[HLL_DENSE_BYTES], got[HLL_DENSE_BYTES];
	struct buf val = BUF_INIT;
	memset(r, 0, sizeof(r));
	hll_dense_set(r, 0, 7);
	hll_dense_set(r, 16383, 51);
	CHECK_INT(hll_set_registers(ks, KEY("r"), r, sizeof(r)), 0);
	CHECK_INT(hll_registers(ks, KEY("r"), got), 0);
	CHECK(memcmp(r, got, sizeof(r)) == 0);
	CHECK_INT(seg_len("r", "0", &val), HLL_SEGMENT_BYTES);
	CHECK_INT(seg_len("r", "15", &val), HLL_SEGMENT_BYTES);
	CHECK_INT(seg_len("r", "7", &val), -ENOENT);
	/* Bad input: a wrong size changes nothing. */
	CHECK_INT(hll_set_registers(ks, KEY("r"), r, sizeof(r) - 1), -EINVAL);
	CHECK_INT(hll_set_registers(ks, KEY("r2"), r, 768), -EINVAL);
	CHECK_INT(hll_registers(ks, KEY("r2"), got), -ENOENT);
	CHECK_INT(hll_registers(ks, KEY("r"), got), 0);
	CHECK(memcmp(r, got, sizeof(r)) == 0);
	/* A segment that becomes all zeros is deleted. */
	hll_dense_set(r, 0, 0);
	CHECK_INT(hll_set_registers(ks, KEY("r"), r, sizeof(r)), 0);
	CHECK_INT(seg_len("r", "0", &val), -ENOENT);
	CHECK_INT(seg_len("r", "15", &val), HLL_SEGMENT_BYTES);
	/* Wrong type. */
	CHECK_INT(hll_set_registers(ks, KEY("s"), r, sizeof(r)), -KV_EWRONGTYPE);
	buf_release(&val);
}

static void test_corrupt(void)
{
	/* encode_type 1 (not dense) and a short segment are refused. */
	struct buf mk = BUF_INIT, raw = BUF_INIT;
	struct store_batch *b = store_batch_new(ks_store(ks));
	CHECK_INT(meta_raw("h", &raw), 0);
	raw.data[25] = 1;
	CHECK_INT(ks_meta_key(ks, KEY("h1"), &mk), 0);
	store_batch_put(b, STORE_CF_METADATA, mk.data, mk.len, raw.data, raw.len);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	uint64_t c;
	CHECK_INT(hll_count(ks, KEY("h1"), 1, &c), -EUCLEAN);
	struct iovec a = {"zz", 2};
	CHECK_INT(hll_add(ks, KEY("h1"), &a, 1, NULL), -EUCLEAN);
	store_batch_free(b);
	buf_release(&mk);
	buf_release(&raw);
}

/* Put v at sub-key `seg` of key's current version. */
static void plant_seg(const char *key, const char *seg, const void *v, size_t n)
{
	struct buf raw = BUF_INIT, sk = BUF_INIT;
	CHECK_INT(meta_raw(key, &raw), 0);
	CHECK_INT(ks_sub_key(ks, KEY(key), get_be64(raw.data + 9), seg, strlen(seg), &sk), 0);
	CHECK_INT(fixture_write(ks, STORE_CF_DEFAULT, sk.data, sk.len, v, n), 0);
	buf_release(&raw);
	buf_release(&sk);
}

/* Issue 15: a segment's index and size are checked before its bytes go
 * into the register array: one of another size is -EUCLEAN for every
 * verb that reads it (and changes nothing); a sub-key that names no
 * segment 0..15 is not read at all. */
static void test_corrupt_segments(void)
{
	static uint8_t big[HLL_SEGMENT_BYTES + 1], regs[HLL_DENSE_BYTES], got[HLL_DENSE_BYTES];
	struct iovec a = {"zz", 2};
	uint64_t c;
	memset(big, 0xff, sizeof(big));
	const char *names[] = {"16", "99", "015", "-1", "1a"};
	CHECK_INT(add_seq("hs", 1, 100), 0);
	CHECK_INT(hll_registers(ks, KEY("hs"), regs), 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		plant_seg("hs", names[i], big, sizeof(big));
	CHECK_INT(hll_registers(ks, KEY("hs"), got), 0);
	CHECK(memcmp(regs, got, sizeof(regs)) == 0);
	size_t sizes[] = {HLL_SEGMENT_BYTES + 1, HLL_SEGMENT_BYTES - 1, 0};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		plant_seg("hs", "15", big, sizes[i]);
		CHECK_INT(hll_count(ks, KEY("hs"), 1, &c), -EUCLEAN);
		CHECK_INT(hll_add(ks, KEY("hs"), &a, 1, NULL), -EUCLEAN);
		CHECK_INT(hll_registers(ks, KEY("hs"), got), -EUCLEAN);
		CHECK_INT(hll_merge(ks, KEY("hs2"), KEY("hs"), 1), -EUCLEAN);
		CHECK_INT(hll_count(ks, KEY("hs2"), 1, &c), 0);
		CHECK_INT(c, 0);
	}
}

/* The fs layer's reading of a hash field: "registers" is state file 0. */
static int regs_cb(void *arg, const char *f, size_t fn, const char *v, size_t vn,
		   struct convert_item *it)
{
	(void)arg;
	(void)v;
	(void)vn;
	it->num = 0;
	return fn == 9 && !memcmp(f, "registers", 9) ? 0 : -EINVAL;
}

static void test_convert(void)
{
	static uint8_t r[HLL_DENSE_BYTES], got[HLL_DENSE_BYTES];
	struct buf val = BUF_INIT;
	memset(r, 0, sizeof(r));
	hll_dense_set(r, 5000, 9);
	/* Success: a hash with one field "registers" becomes the hyperloglog. */
	CHECK_INT(hash_set(ks, KEY("ch"), "registers", 9, r, sizeof(r), NULL), 0);
	CHECK_INT(convert_hash(ks, KEY("ch"), KV_TYPE_HLL, regs_cb, NULL), 0);
	CHECK_INT(hll_registers(ks, KEY("ch"), got), 0);
	CHECK(memcmp(r, got, sizeof(r)) == 0);
	CHECK_INT(seg_len("ch", "4", &val), HLL_SEGMENT_BYTES); /* 5000 / 1024 */
	CHECK_INT(seg_len("ch", "0", &val), -ENOENT);
	/* Bad input: a wrong size, or another field: the hash stays. */
	CHECK_INT(hash_set(ks, KEY("cb"), "registers", 9, r, 100, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY("cb"), KV_TYPE_HLL, regs_cb, NULL), -EINVAL);
	CHECK_INT(hash_set(ks, KEY("cc"), "registers", 9, r, sizeof(r), NULL), 0);
	CHECK_INT(hash_set(ks, KEY("cc"), "x", 1, "1", 1, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY("cc"), KV_TYPE_HLL, regs_cb, NULL), -EINVAL);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY("cb"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_HASH);
	CHECK_INT(ks_lookup(ks, KEY("cc"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_HASH);
	/* Missing key and wrong type. */
	CHECK_INT(convert_hash(ks, KEY("nope"), KV_TYPE_HLL, regs_cb, NULL), -ENOENT);
	CHECK_INT(convert_hash(ks, KEY("s"), KV_TYPE_HLL, regs_cb, NULL), -KV_EWRONGTYPE);
	buf_release(&val);
}

int main(void)
{
	ks = fixture_open_checked();
	test_murmur();
	test_packing();
	test_counts_like_redis();
	test_add();
	test_count_missing_and_wrongtype();
	test_merge();
	test_set_registers();
	test_corrupt();
	test_corrupt_segments();
	test_convert();
	fixture_done(ks);
	return check_done("test_hll");
}
