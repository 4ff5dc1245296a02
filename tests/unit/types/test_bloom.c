/*
 * Unit tests for alg_bloom and t_bloom on a temporary database: the hash,
 * block and bit choice against an independent computation of
 * kvrocks-encoding.md 6.10 (Python with Debian's xxhsum), sizing and
 * chain capacity, every verb with a success, wrong-type, missing-key and
 * bad-input case, the scaling chain, a full non-scaling filter, the
 * stored bytes (metadata 89 ... 45 bytes, filter sub-keys u16 BE), and the
 * false-positive rate on 100,000 absent items.
 */
#include "types/alg_bloom.h"
#include "check.h"
#include "fixture.h"
#include "keyspace/ks_attr.h"
#include "types/t_bloom.h"
#include "types/t_convert.h"
#include "types/t_hash.h"
#include "types/t_string.h"

#include <stdio.h>

static struct keyspace *ks;

static int meta_raw(const char *key, struct buf *out)
{
	return fixture_meta_raw(ks, KEY(key), out);
}

/* The stored filter i of key (by hand-built sub-key): 0 or -ENOENT. */
static int filter_raw(const char *key, unsigned i, struct buf *val)
{
	struct buf raw = BUF_INIT;
	unsigned char k[128], sub[2] = {(unsigned char)(i >> 8), (unsigned char)i};
	int rc = meta_raw(key, &raw);
	if (!rc) {
		size_t kn = fixture_sub_key(key, get_be64(raw.data + 9), sub, 2, k);
		rc = store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, val);
	}
	buf_release(&raw);
	return rc;
}

static struct iovec item(const char *s)
{
	return (struct iovec){(void *)s, strlen(s)};
}

static void test_alg(void)
{
	/* From xxhsum -H64 and a Python transcription of section 6.10. */
	CHECK(sbbf_hash("apple", 5) == 0x5889a1c15c94729fULL);
	CHECK(sbbf_hash("banana", 6) == 0xcef162e1813c8ce2ULL);
	CHECK(sbbf_hash("", 0) == 0xef46db3751d8e999ULL);
	CHECK_INT(sbbf_block_of(0x5889a1c15c94729fULL, 128), 1);
	CHECK_INT(sbbf_block_of(0xcef162e1813c8ce2ULL, 128), 3);
	uint8_t bits[8], want_a[8] = {2, 29, 26, 16, 17, 7, 31, 10};
	sbbf_bits_of(0x5889a1c15c94729fULL, bits);
	CHECK_MEM(bits, 8, want_a, 8);
	CHECK_INT(sbbf_filter_bytes(100, 0.01), 128);
	CHECK_INT(sbbf_filter_bytes(1000, 0.01), 2048);
	CHECK_INT(sbbf_filter_bytes(1, 0.5), 32);
	CHECK_INT(sbbf_filter_bytes(200, 0.01), 256);
	CHECK_INT(sbbf_filter_bytes(100000, 0.001), 262144);
	CHECK_INT(sbbf_filter_bytes(UINT32_MAX, 1e-9), SBBF_MAX_BYTES);
	CHECK_INT(sbbf_chain_capacity(100, 0, 5), 100);
	CHECK_INT(sbbf_chain_capacity(100, 1, 3), 300);
	CHECK_INT(sbbf_chain_capacity(100, 2, 3), 700);
	CHECK_INT(sbbf_chain_capacity(10, 3, 2), 40);
	CHECK_INT(sbbf_filter_capacity(100, 2, 3), 800);
	CHECK_INT(sbbf_filter_capacity(100, 0, 3), 100);

	/* "apple" in a 128-byte filter: block 1 (bytes 32..63), word i at
	 * 32 + 4i, bit b in little-endian order: byte b / 8, bit b % 8. */
	uint8_t f[128], want[128];
	memset(f, 0, sizeof(f));
	memset(want, 0, sizeof(want));
	for (int i = 0; i < 8; i++)
		want[32 + 4 * i + want_a[i] / 8] |= (uint8_t)(1u << (want_a[i] % 8));
	CHECK(!sbbf_find(f, 128, sbbf_hash("apple", 5)));
	CHECK(sbbf_insert(f, 128, sbbf_hash("apple", 5)));
	CHECK_MEM(f, 128, want, 128);
	CHECK(sbbf_find(f, 128, sbbf_hash("apple", 5)));
	CHECK(!sbbf_insert(f, 128, sbbf_hash("apple", 5)));
}

static void test_reserve(void)
{
	struct buf raw = BUF_INIT, val = BUF_INIT;
	unsigned char want[45];
	CHECK_INT(bloom_reserve(ks, KEY("b"), 100, 0.01, 2), 0);
	CHECK_INT(meta_raw("b", &raw), 0);
	CHECK_INT(raw.len, 45);
	check_unhex("89 0000000000000000", want, 9);
	memcpy(want + 9, raw.data + 9, 8); /* version: fresh, checked by ks tests */
	check_unhex("0000000000000000 0001 0002 00000064 BF847AE147AE147B 00000080", want + 17, 28);
	CHECK_MEM(raw.data, raw.len, want, 45);
	/* Filter 0: 128 zero bytes at sub-key 00 00. */
	CHECK_INT(filter_raw("b", 0, &val), 0);
	unsigned char zero[128] = {0};
	CHECK_MEM(val.data, val.len, zero, 128);
	/* Existing key (any type): -EEXIST, nothing changed. */
	CHECK_INT(bloom_reserve(ks, KEY("b"), 5, 0.1, 0), -EEXIST);
	CHECK_INT(string_set(ks, KEY("s"), "x", 1, 0), 0);
	CHECK_INT(bloom_reserve(ks, KEY("s"), 5, 0.1, 0), -EEXIST);
	struct bloom_state st;
	CHECK_INT(bloom_info(ks, KEY("b"), &st), 0);
	CHECK_INT(st.base_capacity, 100);
	/* Bad input: nothing created. */
	CHECK_INT(bloom_reserve(ks, KEY("bad"), 0, 0.01, 2), -EINVAL);
	CHECK_INT(bloom_reserve(ks, KEY("bad"), 10, 0, 2), -EINVAL);
	CHECK_INT(bloom_reserve(ks, KEY("bad"), 10, 1, 2), -EINVAL);
	CHECK_INT(bloom_info(ks, KEY("bad"), &st), -ENOENT);
	buf_release(&raw);
	buf_release(&val);
}

static void test_add_exists(void)
{
	struct iovec its[3] = {item("apple"), item("banana"), item("apple")};
	int added[3] = {9, 9, 9}, found[3];
	CHECK_INT(bloom_add(ks, KEY("b"), its, 3, added), 0);
	CHECK_INT(added[0], 1);
	CHECK_INT(added[1], 1);
	CHECK_INT(added[2], 0); /* in the same call */
	uint64_t n = 0;
	CHECK_INT(bloom_card(ks, KEY("b"), &n), 0);
	CHECK_INT(n, 2);
	struct iovec q[3] = {item("apple"), item("cherry"), item("banana")};
	CHECK_INT(bloom_exists(ks, KEY("b"), q, 3, found), 0);
	CHECK_INT(found[0], 1);
	CHECK_INT(found[1], 0);
	CHECK_INT(found[2], 1);
	/* The stored filter has exactly the bits of an independent placement. */
	struct buf val = BUF_INIT;
	uint8_t want[128];
	uint8_t ba[8] = {2, 29, 26, 16, 17, 7, 31, 10}, bb[8] = {13, 17, 23, 14, 25, 26, 8, 6};
	memset(want, 0, sizeof(want));
	for (int i = 0; i < 8; i++) {
		want[32 * 1 + 4 * i + ba[i] / 8] |= (uint8_t)(1u << (ba[i] % 8));
		want[32 * 3 + 4 * i + bb[i] / 8] |= (uint8_t)(1u << (bb[i] % 8));
	}
	CHECK_INT(filter_raw("b", 0, &val), 0);
	CHECK_MEM(val.data, val.len, want, 128);
	/* Missing key: BF.EXISTS says 0, BF.CARD 0, BF.INFO -ENOENT. */
	CHECK_INT(bloom_exists(ks, KEY("nope"), q, 1, found), 0);
	CHECK_INT(found[0], 0);
	CHECK_INT(bloom_card(ks, KEY("nope"), &n), 0);
	CHECK_INT(n, 0);
	struct bloom_state st;
	CHECK_INT(bloom_info(ks, KEY("nope"), &st), -ENOENT);
	/* Wrong type everywhere. */
	CHECK_INT(bloom_add(ks, KEY("s"), its, 1, NULL), -KV_EWRONGTYPE);
	CHECK_INT(bloom_exists(ks, KEY("s"), its, 1, found), -KV_EWRONGTYPE);
	CHECK_INT(bloom_card(ks, KEY("s"), &n), -KV_EWRONGTYPE);
	CHECK_INT(bloom_info(ks, KEY("s"), &st), -KV_EWRONGTYPE);
	/* BF.ADD on a missing key creates it with the defaults. */
	CHECK_INT(bloom_add(ks, KEY("auto"), its, 1, NULL), 0);
	CHECK_INT(bloom_info(ks, KEY("auto"), &st), 0);
	CHECK_INT(st.base_capacity, 100);
	CHECK(st.error_rate == 0.01);
	CHECK_INT(st.expansion, 2);
	CHECK_INT(st.size, 1);
	buf_release(&val);
}

static void test_scaling(void)
{
	char s[16];
	struct iovec it;
	struct bloom_state st;
	struct buf val = BUF_INIT;
	CHECK_INT(bloom_reserve(ks, KEY("sc"), 100, 0.01, 2), 0);
	int new_items = 0;
	for (int i = 0; i < 250; i++) {
		int added = 0;
		it.iov_base = s;
		it.iov_len = (size_t)snprintf(s, sizeof(s), "item%d", i);
		CHECK_INT(bloom_add(ks, KEY("sc"), &it, 1, &added), 0);
		new_items += added;
	}
	CHECK_INT(bloom_info(ks, KEY("sc"), &st), 0);
	CHECK_INT(st.size, (uint64_t)new_items);
	CHECK_INT(st.n_filters, 2); /* 100 + 200 >= 250 */
	CHECK_INT(st.bloom_bytes, 128 + 256);
	CHECK_INT(bloom_state_capacity(&st), 300);
	CHECK_INT(filter_raw("sc", 1, &val), 0);
	CHECK_INT(val.len, 256);
	CHECK_INT(filter_raw("sc", 2, &val), -ENOENT);

	/* Non-scaling: full after its capacity; the refused call stores
	 * nothing at all. */
	CHECK_INT(bloom_reserve(ks, KEY("ns"), 10, 0.01, 0), 0);
	int got = 0;
	for (int i = 0; got < 10; i++) {
		int added = 0;
		it.iov_len = (size_t)snprintf(s, sizeof(s), "n%d", i);
		CHECK_INT(bloom_add(ks, KEY("ns"), &it, 1, &added), 0);
		got += added;
	}
	struct buf before = BUF_INIT;
	CHECK_INT(filter_raw("ns", 0, &before), 0);
	struct iovec two[2];
	char s1[] = "fresh-one", s2[] = "fresh-two";
	two[0] = item(s1);
	two[1] = item(s2);
	CHECK_INT(bloom_add(ks, KEY("ns"), two, 2, NULL), -ENOSPC);
	CHECK_INT(bloom_info(ks, KEY("ns"), &st), 0);
	CHECK_INT(st.size, 10);
	CHECK_INT(st.n_filters, 1);
	CHECK_INT(filter_raw("ns", 0, &val), 0);
	CHECK_MEM(val.data, val.len, before.data, before.len);
	buf_release(&before);
	buf_release(&val);
}

static void test_state(void)
{
	struct bloom_state st = {
	    .size = 5, .n_filters = 3, .expansion = 2, .base_capacity = 100, .error_rate = 0.01};
	struct buf val = BUF_INIT;
	CHECK_INT(bloom_set_state(ks, KEY("st"), &st), 0);
	struct bloom_state got;
	CHECK_INT(bloom_info(ks, KEY("st"), &got), 0);
	CHECK_INT(got.n_filters, 3);
	CHECK_INT(got.size, 5);
	CHECK_INT(got.bloom_bytes, 128 + 256 + 512);
	CHECK_INT(filter_raw("st", 2, &val), 0);
	CHECK_INT(val.len, 512);
	/* Replace filter 1: the right size only. */
	uint8_t f[256];
	memset(f, 0xA5, sizeof(f));
	CHECK_INT(bloom_set_filter(ks, KEY("st"), 1, f, 255), -EINVAL);
	CHECK_INT(bloom_set_filter(ks, KEY("st"), 3, f, 256), -ENOENT);
	CHECK_INT(bloom_set_filter(ks, KEY("nope"), 0, f, 128), -ENOENT);
	CHECK_INT(bloom_set_filter(ks, KEY("s"), 0, f, 128), -KV_EWRONGTYPE);
	CHECK_INT(bloom_filter(ks, KEY("st"), 1, &val), 0);
	CHECK_INT(val.len, 256);
	CHECK(val.data[0] == 0);
	CHECK_INT(bloom_set_filter(ks, KEY("st"), 1, f, 256), 0);
	CHECK_INT(bloom_filter(ks, KEY("st"), 1, &val), 0);
	CHECK_MEM(val.data, val.len, f, 256);
	/* Fewer filters: the last goes; filter 1 keeps its bits. */
	st.n_filters = 2;
	CHECK_INT(bloom_set_state(ks, KEY("st"), &st), 0);
	CHECK_INT(filter_raw("st", 2, &val), -ENOENT);
	CHECK_INT(bloom_filter(ks, KEY("st"), 1, &val), 0);
	CHECK_MEM(val.data, val.len, f, 256);
	/* Bad input: nothing changes. */
	struct bloom_state bad = st;
	bad.error_rate = 1.5;
	CHECK_INT(bloom_set_state(ks, KEY("st"), &bad), -EINVAL);
	bad = st;
	bad.n_filters = 0;
	CHECK_INT(bloom_set_state(ks, KEY("st"), &bad), -EINVAL);
	bad = st;
	bad.base_capacity = UINT32_MAX;
	bad.n_filters = 200;
	CHECK_INT(bloom_set_state(ks, KEY("st"), &bad), -EINVAL); /* over 4 GiB */
	CHECK_INT(bloom_set_state(ks, KEY("s"), &st), -KV_EWRONGTYPE);
	CHECK_INT(bloom_info(ks, KEY("st"), &got), 0);
	CHECK_INT(got.n_filters, 2);
	CHECK(got.error_rate == 0.01);
	/* Clear: no items, zero filters (no records), same parameters, a new
	 * version that the key's attribute records follow. */
	struct ks_attr_set mode = {.mask = KS_ATTR_SET_MODE, .mode = 0604};
	struct ks_info before, after;
	struct ks_attr a;
	CHECK_INT(ks_attr_set(ks, KEY("st"), NULL, 0, &mode), 0);
	CHECK_INT(ks_lookup(ks, KEY("st"), &before), 0);
	CHECK_INT(bloom_clear(ks, KEY("st")), 0);
	CHECK_INT(ks_lookup(ks, KEY("st"), &after), 0);
	CHECK(after.version != before.version);
	CHECK_INT(ks_attr_get(ks, KEY("st"), after.version, NULL, 0, &a), 0);
	CHECK_INT(a.mode, 0604);
	CHECK_INT(bloom_info(ks, KEY("st"), &got), 0);
	CHECK_INT(got.size, 0);
	CHECK_INT(got.n_filters, 2);
	CHECK_INT(got.bloom_bytes, 128 + 256);
	CHECK_INT(filter_raw("st", 1, &val), -ENOENT);
	CHECK_INT(bloom_filter(ks, KEY("st"), 1, &val), 0);
	unsigned char z[256] = {0};
	CHECK_MEM(val.data, val.len, z, 256);
	CHECK_INT(bloom_clear(ks, KEY("nope")), -ENOENT);
	buf_release(&val);
}

static void test_false_positives(void)
{
	/* 100,000 items at 1 %: at most 1 % of 100,000 absent items found. */
	enum { N = 100000 };
	static char text[N][12];
	static struct iovec its[N];
	static int res[N];
	CHECK_INT(bloom_reserve(ks, KEY("fp"), N, 0.01, 2), 0);
	for (int i = 0; i < N; i++) {
		its[i].iov_base = text[i];
		its[i].iov_len = (size_t)snprintf(text[i], sizeof(text[i]), "in%d", i);
	}
	CHECK_INT(bloom_add(ks, KEY("fp"), its, N, NULL), 0);
	CHECK_INT(bloom_exists(ks, KEY("fp"), its, N, res), 0);
	int present = 0;
	for (int i = 0; i < N; i++)
		present += res[i];
	CHECK_INT(present, N); /* no false negatives */
	for (int i = 0; i < N; i++)
		its[i].iov_len = (size_t)snprintf(text[i], sizeof(text[i]), "out%d", i);
	CHECK_INT(bloom_exists(ks, KEY("fp"), its, N, res), 0);
	int fp = 0;
	for (int i = 0; i < N; i++)
		fp += res[i];
	printf("bloom: %d false positives in %d absent items (capacity %d, error rate 0.01)\n", fp,
	       N, N);
	/* Kvrocks's sizing gives this split-block filter an expected rate of
	 * 1.02 % when it holds exactly its capacity (Poisson block loads:
	 * docs/mapping.md section 23); allow that plus sampling noise. */
	CHECK(fp <= N / 100 + N / 1000);
}

/* The fs layer's reading of a hash field: "chain" (file 0, the state
 * passed in arg) or "f1", "f2" (filters 0, 1). */
static int bloom_cb(void *arg, const char *f, size_t fn, const char *v, size_t vn,
		    struct convert_item *it)
{
	(void)v;
	(void)vn;
	if (fn == 5 && !memcmp(f, "chain", 5)) {
		it->num = 0;
		it->bloom = *(const struct bloom_state *)arg;
		return 0;
	}
	if (fn == 2 && f[0] == 'f' && (f[1] == '1' || f[1] == '2')) {
		it->num = (uint64_t)(f[1] - '0');
		return 0;
	}
	return -EINVAL;
}

static void test_convert(void)
{
	struct bloom_state st = {.size = 3,
				 .n_filters = 2,
				 .expansion = 2,
				 .base_capacity = 100,
				 .error_rate = 0.01},
			   got;
	struct buf val = BUF_INIT;
	uint8_t f1[256];
	memset(f1, 0x5A, sizeof(f1));
	/* Success: chain and filter 1; filter 0 missing reads as zeros. */
	CHECK_INT(hash_set(ks, KEY("cv"), "chain", 5, "x", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY("cv"), "f2", 2, f1, sizeof(f1), NULL), 0);
	CHECK_INT(convert_hash(ks, KEY("cv"), KV_TYPE_BLOOM, bloom_cb, &st), 0);
	CHECK_INT(bloom_info(ks, KEY("cv"), &got), 0);
	CHECK_INT(got.size, 3);
	CHECK_INT(got.n_filters, 2);
	CHECK_INT(got.bloom_bytes, 128 + 256);
	CHECK_INT(filter_raw("cv", 0, &val), -ENOENT);
	CHECK_INT(filter_raw("cv", 1, &val), 0);
	CHECK_MEM(val.data, val.len, f1, sizeof(f1));
	/* Bad input: no chain; a filter of the wrong size; a filter past the
	 * count. The hash stays. */
	CHECK_INT(hash_set(ks, KEY("cw"), "f1", 2, f1, 128, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY("cw"), KV_TYPE_BLOOM, bloom_cb, &st), -EINVAL);
	CHECK_INT(hash_set(ks, KEY("cw"), "chain", 5, "x", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY("cw"), "f2", 2, f1, 100, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY("cw"), KV_TYPE_BLOOM, bloom_cb, &st), -EINVAL);
	struct bloom_state one = st;
	one.n_filters = 1;
	CHECK_INT(hash_set(ks, KEY("cw"), "f2", 2, f1, 256, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY("cw"), KV_TYPE_BLOOM, bloom_cb, &one), -EINVAL);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY("cw"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_HASH);
	CHECK_INT(convert_hash(ks, KEY("cw"), KV_TYPE_BLOOM, bloom_cb, &st), 0);
	/* Missing key, wrong type. */
	CHECK_INT(convert_hash(ks, KEY("nope"), KV_TYPE_BLOOM, bloom_cb, &st), -ENOENT);
	CHECK_INT(convert_hash(ks, KEY("s"), KV_TYPE_BLOOM, bloom_cb, &st), -KV_EWRONGTYPE);
	buf_release(&val);
}

static void test_set_params(void)
{
	struct bloom_state st;
	struct iovec it = item("x");
	/* A missing key becomes a bloom; an empty one takes new parameters. */
	CHECK_INT(bloom_set_params(ks, KEY("sp"), 1000, 0.01, 2), 0);
	CHECK_INT(bloom_info(ks, KEY("sp"), &st), 0);
	CHECK_INT(st.base_capacity, 1000);
	CHECK_INT(st.bloom_bytes, 2048);
	CHECK_INT(bloom_set_params(ks, KEY("sp"), 100, 0.001, 0), 0);
	CHECK_INT(bloom_info(ks, KEY("sp"), &st), 0);
	CHECK_INT(st.base_capacity, 100);
	CHECK(st.error_rate == 0.001);
	CHECK_INT(st.expansion, 0);
	CHECK_INT(st.n_filters, 1);
	/* With items: the same parameters are fine, others -ENOTEMPTY. */
	CHECK_INT(bloom_add(ks, KEY("sp"), &it, 1, NULL), 0);
	CHECK_INT(bloom_set_params(ks, KEY("sp"), 100, 0.001, 0), 0);
	CHECK_INT(bloom_set_params(ks, KEY("sp"), 200, 0.001, 0), -ENOTEMPTY);
	CHECK_INT(bloom_info(ks, KEY("sp"), &st), 0);
	CHECK_INT(st.base_capacity, 100);
	CHECK_INT(st.size, 1);
	/* Bad input and wrong type. */
	CHECK_INT(bloom_set_params(ks, KEY("sp2"), 0, 0.01, 2), -EINVAL);
	CHECK_INT(bloom_info(ks, KEY("sp2"), &st), -ENOENT);
	CHECK_INT(bloom_set_params(ks, KEY("s"), 10, 0.01, 2), -KV_EWRONGTYPE);
}

/* Plant the metadata of bloom `key` (version 4096, size 0) with this tail. */
static void plant_meta(const char *key, const char *tail_hex)
{
	unsigned char v[128];
	struct buf mk = BUF_INIT;
	size_t n = check_unhex("89 0000000000000000 0000000000001000 0000000000000000", v, 25);
	n += check_unhex(tail_hex, v + n, sizeof(v) - n);
	CHECK_INT(ks_meta_key(ks, KEY(key), &mk), 0);
	CHECK_INT(fixture_write(ks, STORE_CF_METADATA, mk.data, mk.len, v, n), 0);
	buf_release(&mk);
}

/* Issue 15 item 4: a corrupt chain is -EUCLEAN before anything is sized
 * by it. With the address space capped at 256 MiB over what the process
 * has, a chain of 65535 missing 128 MiB filters (what n_filters ffff
 * with a huge capacity asks for) fails the test if it is loaded. */
static void test_corrupt(void)
{
	struct iovec it = item("apple");
	struct bloom_state st;
	struct buf val = BUF_INIT, sk = BUF_INIT;
	int found = -1;
	struct rlimit old = check_limit_as(256u << 20);

	/* n_filters 65535, capacity 2^32-1, error 1e-9, bloom_bytes 128 */
	plant_meta("cb1", "FFFF 0002 FFFFFFFF BE112E0BE826D695 00000080");
	CHECK_INT(bloom_exists(ks, KEY("cb1"), &it, 1, &found), -EUCLEAN);
	CHECK_INT(bloom_add(ks, KEY("cb1"), &it, 1, NULL), -EUCLEAN);
	CHECK_INT(bloom_filter(ks, KEY("cb1"), 3, &val), -EUCLEAN);
	CHECK_INT(bloom_info(ks, KEY("cb1"), &st), -EUCLEAN);
	/* no filter at all; capacity 0; error rate 0, NaN, 1 */
	plant_meta("cb2", "0000 0002 00000064 BF847AE147AE147B 00000000");
	CHECK_INT(bloom_exists(ks, KEY("cb2"), &it, 1, &found), -EUCLEAN);
	plant_meta("cb3", "0001 0002 00000000 BF847AE147AE147B 00000020");
	CHECK_INT(bloom_exists(ks, KEY("cb3"), &it, 1, &found), -EUCLEAN);
	plant_meta("cb4", "0001 0002 00000064 8000000000000000 00000080");
	CHECK_INT(bloom_exists(ks, KEY("cb4"), &it, 1, &found), -EUCLEAN);
	plant_meta("cb5", "0001 0002 00000064 FFF8000000000000 00000080");
	CHECK_INT(bloom_exists(ks, KEY("cb5"), &it, 1, &found), -EUCLEAN);
	plant_meta("cb6", "0001 0002 00000064 BFF0000000000000 00000080");
	CHECK_INT(bloom_exists(ks, KEY("cb6"), &it, 1, &found), -EUCLEAN);
	/* bloom_bytes that is not the sum of the filters' sizes */
	plant_meta("cb7", "0002 0002 00000064 BF847AE147AE147B 00000080");
	CHECK_INT(bloom_exists(ks, KEY("cb7"), &it, 1, &found), -EUCLEAN);
	/* a well-formed chain, but filter 0 holds 64 bytes, not 128 */
	plant_meta("cb8", "0001 0002 00000064 BF847AE147AE147B 00000080");
	CHECK_INT(bloom_exists(ks, KEY("cb8"), &it, 1, &found), 0);
	CHECK_INT(ks_sub_key(ks, KEY("cb8"), 4096, "\0\0", 2, &sk), 0);
	unsigned char zero[64] = {0};
	CHECK_INT(fixture_write(ks, STORE_CF_DEFAULT, sk.data, sk.len, zero, sizeof(zero)), 0);
	CHECK_INT(bloom_exists(ks, KEY("cb8"), &it, 1, &found), -EUCLEAN);
	CHECK_INT(bloom_filter(ks, KEY("cb8"), 0, &val), -EUCLEAN);
	/* DEL needs only the metadata: every one of them goes */
	const char *keys[] = {"cb1", "cb2", "cb3", "cb4", "cb5", "cb6", "cb7", "cb8"};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		CHECK_INT(ks_del(ks, KEY(keys[i])), 0);
	check_unlimit_as(old);
	buf_release(&val);
	buf_release(&sk);
}

int main(void)
{
	ks = fixture_open_checked();
	test_alg();
	test_reserve();
	test_add_exists();
	test_scaling();
	test_state();
	test_convert();
	test_set_params();
	test_false_positives();
	test_corrupt();
	fixture_done(ks);
	return check_done("test_bloom");
}
