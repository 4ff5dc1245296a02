/*
 * Unit tests for encoding: every worked example of kvrocks-encoding.md
 * section 12, byte for byte. Expected bytes are written by hand in hex,
 * never produced by the encoder under test.
 */
#include "check.h"
#include "engine/encoding.h"

#include <errno.h>
#include <float.h>
#include <math.h>

/* "\x0b__namespace" and the fixed version V used in all sub-keys. */
#define NS	"0B 5F 5F 6E 61 6D 65 73 70 61 63 65 "
#define V	"01 23 45 67 89 AB CD EF "
#define VERSION 0x0123456789ABCDEFull
#define DNS	"__namespace"
#define DNS_LEN 11

/* Compare a buffer with hand-written hex. */
#define CHECK_HEX(b, hex)                                                                          \
	do {                                                                                       \
		unsigned char want_[512];                                                          \
		size_t wn_ = check_unhex(hex, want_, sizeof(want_));                               \
		CHECK_MEM((b)->data, (b)->len, want_, wn_);                                        \
	} while (0)

static struct enc_meta meta(enum kv_type t, bool v1, uint64_t expire, uint64_t version,
			    uint64_t size)
{
	struct enc_meta m = {
	    .type = t, .v1 = v1, .expire_ms = expire, .version = version, .size = size};
	return m;
}

static void test_set(void)
{
	struct buf b = BUF_INIT;
	struct enc_meta m = meta(KV_TYPE_STRING, true, 0, 0, 0);

	CHECK_INT(enc_ns_key(&b, DNS, DNS_LEN, "foo", 3, false), 0);
	CHECK_HEX(&b, NS "66 6F 6F");

	buf_reset(&b);
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_INT(buf_add(&b, "bar", 3), 0);
	CHECK_HEX(&b, "81 00 00 00 00 00 00 00 00 62 61 72");

	/* SET foo bar PX...: expire at E = 0x0000018F2C3D4E5F ms. */
	buf_reset(&b);
	m.expire_ms = 0x0000018F2C3D4E5Full;
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_INT(buf_add(&b, "bar", 3), 0);
	CHECK_HEX(&b, "81 00 00 01 8F 2C 3D 4E 5F 62 61 72");

	/* And read back from hand-written bytes. */
	unsigned char raw[64];
	size_t n = check_unhex("81 00 00 01 8F 2C 3D 4E 5F 62 61 72", raw, sizeof(raw));
	struct enc_meta d;
	CHECK_INT(enc_meta_decode(raw, n, &d), 0);
	CHECK_INT(d.type, KV_TYPE_STRING);
	CHECK(d.v1);
	CHECK_INT(d.flags, 0x81);
	CHECK(d.expire_ms == 0x0000018F2C3D4E5Full);
	CHECK_INT(d.version, 0);
	CHECK_INT(d.size, 0);
	CHECK_MEM(d.tail, d.tail_len, "bar", 3);
	CHECK(d.tail == raw + 9);
	buf_release(&b);
}

static void test_hset(void)
{
	struct buf b = BUF_INIT;
	struct enc_meta m = meta(KV_TYPE_HASH, true, 0, VERSION, 1);

	CHECK_INT(enc_ns_key(&b, DNS, DNS_LEN, "h", 1, false), 0);
	CHECK_HEX(&b, NS "68");
	buf_reset(&b);
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_HEX(&b, "82 00 00 00 00 00 00 00 00" V "00 00 00 00 00 00 00 01");
	CHECK_INT(enc_sub_key(&b, DNS, DNS_LEN, "h", 1, false, VERSION, "f", 1), 0);
	CHECK_HEX(&b, NS "00 00 00 01 68" V "66");

	unsigned char raw[64];
	size_t n =
	    check_unhex("82 00 00 00 00 00 00 00 00" V "00 00 00 00 00 00 00 01", raw, sizeof(raw));
	struct enc_meta d;
	CHECK_INT(enc_meta_decode(raw, n, &d), 0);
	CHECK_INT(d.type, KV_TYPE_HASH);
	CHECK(d.v1);
	CHECK(d.expire_ms == 0);
	CHECK(d.version == VERSION);
	CHECK(d.size == 1);
	CHECK_INT(d.tail_len, 0);
	CHECK(d.tail == raw + ENC_META_V1_HEADER);
	buf_release(&b);
}

static void test_zadd(void)
{
	struct buf b = BUF_INIT;
	struct enc_meta m = meta(KV_TYPE_ZSET, true, 0, VERSION, 1);

	CHECK_INT(enc_ns_key(&b, DNS, DNS_LEN, "z", 1, false), 0);
	CHECK_HEX(&b, NS "7A");
	buf_reset(&b);
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_HEX(&b, "85 00 00 00 00 00 00 00 00" V "00 00 00 00 00 00 00 01");

	/* default CF: member -> score */
	CHECK_INT(enc_sub_key(&b, DNS, DNS_LEN, "z", 1, false, VERSION, "m", 1), 0);
	CHECK_HEX(&b, NS "00 00 00 01 7A" V "6D");
	buf_reset(&b);
	CHECK_INT(buf_add_double(&b, 1.5), 0);
	CHECK_HEX(&b, "BF F8 00 00 00 00 00 00");

	/* zset_score CF: score || member -> empty */
	struct buf sub = BUF_INIT;
	CHECK_INT(buf_add_double(&sub, 1.5), 0);
	CHECK_INT(buf_add(&sub, "m", 1), 0);
	CHECK_INT(enc_sub_key(&b, DNS, DNS_LEN, "z", 1, false, VERSION, sub.data, sub.len), 0);
	CHECK_HEX(&b, NS "00 00 00 01 7A" V "BF F8 00 00 00 00 00 00 6D");

	unsigned char raw[64];
	size_t n =
	    check_unhex("85 00 00 00 00 00 00 00 00" V "00 00 00 00 00 00 00 01", raw, sizeof(raw));
	struct enc_meta d;
	CHECK_INT(enc_meta_decode(raw, n, &d), 0);
	CHECK_INT(d.type, KV_TYPE_ZSET);
	CHECK(d.version == VERSION && d.size == 1);
	buf_release(&sub);
	buf_release(&b);
}

static void test_rpush(void)
{
	struct buf b = BUF_INIT;
	struct enc_meta m = meta(KV_TYPE_LIST, true, 0, VERSION, 1);

	CHECK_INT(enc_ns_key(&b, DNS, DNS_LEN, "l", 1, false), 0);
	CHECK_HEX(&b, NS "6C");
	buf_reset(&b);
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_INT(buf_add_be64(&b, 0x7FFFFFFFFFFFFFFFull), 0); /* head */
	CHECK_INT(buf_add_be64(&b, 0x8000000000000000ull), 0); /* tail */
	CHECK_HEX(&b, "83 00 00 00 00 00 00 00 00" V "00 00 00 00 00 00 00 01"
		      "7F FF FF FF FF FF FF FF 80 00 00 00 00 00 00 00");

	unsigned char idx[8];
	check_unhex("7F FF FF FF FF FF FF FF", idx, sizeof(idx));
	CHECK_INT(enc_sub_key(&b, DNS, DNS_LEN, "l", 1, false, VERSION, idx, 8), 0);
	CHECK_HEX(&b, NS "00 00 00 01 6C" V "7F FF FF FF FF FF FF FF");

	unsigned char raw[64];
	size_t n = check_unhex("83 00 00 00 00 00 00 00 00" V "00 00 00 00 00 00 00 01"
			       "7F FF FF FF FF FF FF FF 80 00 00 00 00 00 00 00",
			       raw, sizeof(raw));
	CHECK_INT(n, 41);
	struct enc_meta d;
	CHECK_INT(enc_meta_decode(raw, n, &d), 0);
	CHECK_INT(d.type, KV_TYPE_LIST);
	CHECK(d.version == VERSION && d.size == 1);
	CHECK_INT(d.tail_len, 16);
	CHECK(d.tail_len == 16 && get_be64(d.tail) == 0x7FFFFFFFFFFFFFFFull &&
	      get_be64(d.tail + 8) == 0x8000000000000000ull);
	buf_release(&b);
}

static void test_setbit(void)
{
	struct buf b = BUF_INIT;
	struct enc_meta m = meta(KV_TYPE_BITMAP, true, 0, VERSION, 2);

	CHECK_INT(enc_sub_key(&b, DNS, DNS_LEN, "b", 1, false, VERSION, "0", 1), 0);
	CHECK_HEX(&b, NS "00 00 00 01 62" V "30");
	buf_reset(&b);
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_HEX(&b, "86 00 00 00 00 00 00 00 00" V "00 00 00 00 00 00 00 02");
	buf_release(&b);
}

/* ---- Sortable doubles ---------------------------------------------- */

static void check_double(double d, const char *hex)
{
	struct buf b = BUF_INIT;
	CHECK_INT(buf_add_double(&b, d), 0);
	CHECK_HEX(&b, hex);
	unsigned char raw[8];
	check_unhex(hex, raw, sizeof(raw));
	double back = enc_sortable_to_double(get_be64(raw));
	CHECK(memcmp(&back, &d, sizeof(d)) == 0);
	buf_release(&b);
}

static void test_doubles(void)
{
	check_double(1.0, "BF F0 00 00 00 00 00 00");
	check_double(-1.0, "40 0F FF FF FF FF FF FF");
	check_double(0.0, "80 00 00 00 00 00 00 00");
	check_double(-0.0, "7F FF FF FF FF FF FF FF");
	check_double(INFINITY, "FF F0 00 00 00 00 00 00");
	check_double(-INFINITY, "00 0F FF FF FF FF FF FF");
	check_double(2.5, "C0 04 00 00 00 00 00 00");
	check_double(1.5, "BF F8 00 00 00 00 00 00");
	/* Smallest positive denormal: bits 1 -> 80 00..01. */
	check_double(4.9406564584124654e-324, "80 00 00 00 00 00 00 01");
	check_double(-4.9406564584124654e-324, "7F FF FF FF FF FF FF FE");

	/* Ascending, including -0.0 < +0.0 as the byte order puts them. */
	const double sorted[] = {
	    -INFINITY,	 -DBL_MAX,     -1e300,
	    -2.5,	 -1.0,	       -1.0 + DBL_EPSILON / 2,
	    -DBL_MIN,	 -DBL_MIN / 2, -4.9406564584124654e-324,
	    -0.0,	 0.0,	       4.9406564584124654e-324,
	    DBL_MIN / 4, DBL_MIN,      1e-300,
	    0.5,	 1.0,	       1.0 + DBL_EPSILON,
	    1.5,	 2.5,	       1e300,
	    DBL_MAX,	 INFINITY,
	};
	size_t n = sizeof(sorted) / sizeof(sorted[0]);
	uint8_t prev[8];
	for (size_t i = 0; i < n; i++) {
		uint64_t u = enc_double_to_sortable(sorted[i]);
		uint8_t cur[8];
		put_be64(cur, u);
		if (i > 0)
			CHECK(memcmp(prev, cur, 8) < 0);
		memcpy(prev, cur, 8);
		double back = enc_sortable_to_double(u);
		CHECK(memcmp(&back, &sorted[i], sizeof(back)) == 0);
	}
	/* Round trip of every sortable value class through the u64 side. */
	const uint64_t us[] = {0,
			       1,
			       0x7FFFFFFFFFFFFFFFull,
			       0x8000000000000000ull,
			       0x8000000000000001ull,
			       0xFFEFFFFFFFFFFFFFull};
	for (size_t i = 0; i < sizeof(us) / sizeof(us[0]); i++)
		CHECK(enc_double_to_sortable(enc_sortable_to_double(us[i])) == us[i]);
}

/* ---- Cluster slots ------------------------------------------------- */

static void test_slots(void)
{
	CHECK_INT(enc_crc16("123456789", 9), 0x31C3);
	CHECK_INT(enc_crc16("", 0), 0);
	CHECK_INT(enc_slot("foo", 3), 12182);
	CHECK_INT(enc_slot("bar", 3), 5061);
	CHECK_INT(enc_slot("{user1000}.following", 20), 3443);
	CHECK_INT(enc_slot("{user1000}.followers", 20), 3443);
	CHECK_INT(enc_slot("user1000", 8), 3443);
	CHECK_INT(enc_slot("a{user1000}b", 12), 3443);
	/* Only the first '{' and the first '}' after it count. */
	CHECK_INT(enc_slot("x{user1000}{foo}", 16), 3443);
	CHECK_INT(enc_slot("{foo}{user1000}", 15), 12182);
	/* Empty or unclosed tags hash the whole key. */
	CHECK_INT(enc_slot("{}foo", 5), enc_crc16("{}foo", 5) & 0x3fff);
	CHECK_INT(enc_slot("foo{}{bar}", 10), enc_crc16("foo{}{bar}", 10) & 0x3fff);
	CHECK_INT(enc_slot("{bar", 4), enc_crc16("{bar", 4) & 0x3fff);
	CHECK_INT(enc_slot("}bar{", 5), enc_crc16("}bar{", 5) & 0x3fff);
	CHECK_INT(enc_slot("foo{{bar}}", 10), enc_crc16("{bar", 4) & 0x3fff);
	CHECK_INT(enc_slot("", 0), 0);

	struct buf b = BUF_INIT;
	CHECK_INT(enc_ns_key(&b, DNS, DNS_LEN, "foo", 3, true), 0);
	CHECK_HEX(&b, NS "2F 96 66 6F 6F");
	/* Cluster sub-key: the slot sits between namespace and key length. */
	CHECK_INT(enc_sub_key(&b, DNS, DNS_LEN, "foo", 3, true, VERSION, "f", 1), 0);
	CHECK_HEX(&b, NS "2F 96 00 00 00 03 66 6F 6F" V "66");
	CHECK_INT(enc_ns_key(&b, DNS, DNS_LEN, "{user1000}.following", 20, true), 0);
	CHECK_HEX(&b, NS "0D 73 7B 75 73 65 72 31 30 30 30 7D 2E 66 6F 6C 6C 6F 77 69 6E 67");

	unsigned char raw[64];
	size_t n = check_unhex(NS "2F 96 00 00 00 03 66 6F 6F" V "66", raw, sizeof(raw));
	const uint8_t *ns, *key, *sub;
	size_t nslen, klen, sublen;
	uint64_t ver;
	CHECK_INT(enc_sub_key_decode(raw, n, true, &ns, &nslen, &key, &klen, &ver, &sub, &sublen),
		  0);
	CHECK_MEM(ns, nslen, DNS, DNS_LEN);
	CHECK_MEM(key, klen, "foo", 3);
	CHECK(ver == VERSION);
	CHECK_MEM(sub, sublen, "f", 1);

	n = check_unhex(NS "2F 96 66 6F 6F", raw, sizeof(raw));
	CHECK_INT(enc_ns_key_decode(raw, n, true, &ns, &nslen, &key, &klen), 0);
	CHECK_MEM(ns, nslen, DNS, DNS_LEN);
	CHECK_MEM(key, klen, "foo", 3);
	buf_release(&b);
}

/* ---- Keys: other namespaces, decoding, bad input ------------------- */

static void test_keys(void)
{
	struct buf b = BUF_INIT;
	unsigned char raw[300];
	const uint8_t *ns, *key, *sub;
	size_t nslen, klen, sublen, n;
	uint64_t ver;

	CHECK_INT(enc_ns_key(&b, "ns1", 3, "k\0y", 3, false), 0);
	CHECK_HEX(&b, "03 6E 73 31 6B 00 79");
	/* The output is replaced, not appended to. */
	CHECK_INT(enc_ns_key(&b, "ns1", 3, "", 0, false), 0);
	CHECK_HEX(&b, "03 6E 73 31");
	CHECK_INT(enc_sub_key(&b, "ns1", 3, "k", 1, false, 1, NULL, 0), 0);
	CHECK_HEX(&b, "03 6E 73 31 00 00 00 01 6B 00 00 00 00 00 00 00 01");

	char ns255[255];
	memset(ns255, 'n', sizeof(ns255));
	CHECK_INT(enc_ns_key(&b, ns255, 255, "k", 1, false), 0);
	CHECK_INT(b.len, 257);
	CHECK_INT((uint8_t)b.data[0], 0xFF);
	buf_reset(&b);
	CHECK_INT(enc_ns_key(&b, ns255, 256, "k", 1, false), -EINVAL);
	CHECK_INT(enc_ns_key(&b, ns255, 0, "k", 1, false), -EINVAL);
	CHECK_INT(enc_sub_key(&b, ns255, 0, "k", 1, false, 1, "s", 1), -EINVAL);
	CHECK_INT(enc_sub_key(&b, ns255, 256, "k", 1, false, 1, "s", 1), -EINVAL);
	CHECK_INT(b.len, 0);

	/* Decoding hand-written keys. */
	n = check_unhex("03 6E 73 31 6B 00 79", raw, sizeof(raw));
	CHECK_INT(enc_ns_key_decode(raw, n, false, &ns, &nslen, &key, &klen), 0);
	CHECK_MEM(ns, nslen, "ns1", 3);
	CHECK_MEM(key, klen, "k\0y", 3);
	n = check_unhex("03 6E 73 31", raw, sizeof(raw));
	CHECK_INT(enc_ns_key_decode(raw, n, false, &ns, &nslen, &key, &klen), 0);
	CHECK_INT(klen, 0);
	/* Too short for the namespace, or for the slot; empty; ns_len 0. */
	CHECK_INT(enc_ns_key_decode(raw, 3, false, &ns, &nslen, &key, &klen), -EUCLEAN);
	CHECK_INT(enc_ns_key_decode(raw, 5, true, &ns, &nslen, &key, &klen), -EUCLEAN);
	CHECK_INT(enc_ns_key_decode(raw, 0, false, &ns, &nslen, &key, &klen), -EUCLEAN);
	n = check_unhex("00 6B", raw, sizeof(raw));
	CHECK_INT(enc_ns_key_decode(raw, n, false, &ns, &nslen, &key, &klen), -EUCLEAN);

	n = check_unhex("03 6E 73 31 00 00 00 02 6B 6B 00 00 00 00 00 00 00 07", raw, sizeof(raw));
	CHECK_INT(enc_sub_key_decode(raw, n, false, &ns, &nslen, &key, &klen, &ver, &sub, &sublen),
		  0);
	CHECK_MEM(key, klen, "kk", 2);
	CHECK(ver == 7);
	CHECK_INT(sublen, 0);
	/* Every truncation of a sub-key without sub bytes is corrupt. */
	for (size_t i = 0; i < n; i++)
		CHECK_INT(enc_sub_key_decode(raw, i, false, &ns, &nslen, &key, &klen, &ver, &sub,
					     &sublen),
			  -EUCLEAN);
	/* A key length pointing past the end. */
	n = check_unhex("03 6E 73 31 FF FF FF FF 6B 6B 00 00 00 00 00 00 00 07", raw, sizeof(raw));
	CHECK_INT(enc_sub_key_decode(raw, n, false, &ns, &nslen, &key, &klen, &ver, &sub, &sublen),
		  -EUCLEAN);
	/* NULL outputs are allowed. */
	n = check_unhex(NS "00 00 00 01 68" V "66", raw, sizeof(raw));
	sublen = 0;
	CHECK_INT(enc_sub_key_decode(raw, n, false, NULL, NULL, NULL, NULL, NULL, NULL, &sublen),
		  0);
	CHECK_INT(sublen, 1);
	buf_release(&b);
}

/* ---- v0 metadata --------------------------------------------------- */

static void test_v0_decode(void)
{
	unsigned char raw[64];
	struct enc_meta d;
	size_t n;

	/* Hash: flags 0x02, expire 100 s, version V, size 5 (u32). */
	n = check_unhex("02 00 00 00 64" V "00 00 00 05", raw, sizeof(raw));
	CHECK_INT(n, ENC_META_V0_HEADER);
	CHECK_INT(enc_meta_decode(raw, n, &d), 0);
	CHECK_INT(d.type, KV_TYPE_HASH);
	CHECK(!d.v1);
	CHECK_INT(d.flags, 0x02);
	CHECK(d.expire_ms == 100000);
	CHECK(d.version == VERSION);
	CHECK(d.size == 5);
	CHECK_INT(d.tail_len, 0);

	/* Largest v0 expire and size. */
	n = check_unhex("04 FF FF FF FF" V "FF FF FF FF", raw, sizeof(raw));
	CHECK_INT(enc_meta_decode(raw, n, &d), 0);
	CHECK(d.expire_ms == 4294967295000ull);
	CHECK(d.size == 0xFFFFFFFFull);

	/* List: the tail follows the 17-byte header. */
	n = check_unhex("03 00 00 00 00" V
			"00 00 00 02 7F FF FF FF FF FF FF FF 80 00 00 00 00 00 00 01",
			raw, sizeof(raw));
	CHECK_INT(enc_meta_decode(raw, n, &d), 0);
	CHECK_INT(d.type, KV_TYPE_LIST);
	CHECK(d.size == 2);
	CHECK(d.tail == raw + 17);
	CHECK_INT(d.tail_len, 16);

	/* String: flags, expire u32, value. */
	n = check_unhex("01 65 00 00 00 62 61 72", raw, sizeof(raw));
	CHECK_INT(enc_meta_decode(raw, n, &d), 0);
	CHECK_INT(d.type, KV_TYPE_STRING);
	CHECK(d.expire_ms == 0x65000000ull * 1000);
	CHECK(d.version == 0 && d.size == 0);
	CHECK_MEM(d.tail, d.tail_len, "bar", 3);
	CHECK(d.tail == raw + 5);

	/* JSON v0 with an empty value. */
	n = check_unhex("0A 00 00 00 00", raw, sizeof(raw));
	CHECK_INT(enc_meta_decode(raw, n, &d), 0);
	CHECK_INT(d.type, KV_TYPE_JSON);
	CHECK_INT(d.tail_len, 0);
}

static void check_v0_expire(uint64_t ms, const char *hex)
{
	struct buf b = BUF_INIT;
	struct enc_meta m = meta(KV_TYPE_STRING, false, ms, 0, 0);
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_HEX(&b, hex);
	buf_release(&b);
}

static void test_v0_encode(void)
{
	check_v0_expire(0, "01 00 00 00 00");
	check_v0_expire(1, "01 00 00 00 01");
	check_v0_expire(999, "01 00 00 00 01");
	check_v0_expire(1000, "01 00 00 00 01");
	check_v0_expire(1499, "01 00 00 00 01");
	check_v0_expire(1500, "01 00 00 00 01"); /* (1500 + 499) / 1000 = 1 */
	check_v0_expire(1501, "01 00 00 00 02");
	check_v0_expire(2000, "01 00 00 00 02");
	check_v0_expire(1700000000123ull, "01 65 53 F1 00");
	check_v0_expire(1700000000501ull, "01 65 53 F1 01");
	check_v0_expire(4294967295000ull, "01 FF FF FF FF");
	check_v0_expire(4294967295500ull, "01 FF FF FF FF");

	struct buf b = BUF_INIT;
	struct enc_meta m = meta(KV_TYPE_STRING, false, 4294967295501ull, 0, 0);
	CHECK_INT(enc_meta_encode(&b, &m), -EOVERFLOW);
	m.expire_ms = UINT64_MAX;
	CHECK_INT(enc_meta_encode(&b, &m), -EOVERFLOW);
	CHECK_INT(b.len, 0);

	/* A v0 hash: version u64, size u32. */
	m = meta(KV_TYPE_HASH, false, 100000, VERSION, 5);
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_HEX(&b, "02 00 00 00 64" V "00 00 00 05");
	buf_reset(&b);
	m.size = 0x100000000ull;
	CHECK_INT(enc_meta_encode(&b, &m), -EOVERFLOW);
	CHECK_INT(b.len, 0);

	/* enc_meta_encode appends. */
	CHECK_INT(buf_add(&b, "xy", 2), 0);
	m = meta(KV_TYPE_SET, true, 1, 2, 3);
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_HEX(&b, "78 79 84 00 00 00 00 00 00 00 01 00 00 00 00 00 00 00 02"
		      "00 00 00 00 00 00 00 03");
	/* Reserved bits in m->flags never reach the disk; a bad type fails. */
	buf_reset(&b);
	m = meta(KV_TYPE_JSON, true, 0, 99, 99);
	m.flags = 0xFF;
	CHECK_INT(enc_meta_encode(&b, &m), 0);
	CHECK_HEX(&b, "8A 00 00 00 00 00 00 00 00");
	m.type = KV_TYPE_NONE;
	CHECK_INT(enc_meta_encode(&b, &m), -EINVAL);
	m.type = (enum kv_type)15;
	CHECK_INT(enc_meta_encode(&b, &m), -EINVAL);
	buf_release(&b);
}

static void test_meta_reject(void)
{
	unsigned char raw[64];
	struct enc_meta d;
	size_t n;

	CHECK_INT(enc_meta_decode(raw, 0, &d), -EUCLEAN);

	/* Reserved flag bits 4-6, in v1 and v0. */
	const char *reserved[] = {"92", "A2", "C2", "F2", "12", "22", "42", "91", "11"};
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++) {
		n = check_unhex(reserved[i], raw, sizeof(raw));
		n += check_unhex("00 00 00 00 00 00 00 00" V "00 00 00 00 00 00 00 01", raw + n,
				 sizeof(raw) - n);
		CHECK_INT(enc_meta_decode(raw, n, &d), -EUCLEAN);
	}
	/* Unknown type ids 0 and 15 (14 is kvfs's top-k). */
	const char *unknown[] = {"80", "8F", "00", "0F"};
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++) {
		n = check_unhex(unknown[i], raw, sizeof(raw));
		n += check_unhex("00 00 00 00 00 00 00 00" V "00 00 00 00 00 00 00 01", raw + n,
				 sizeof(raw) - n);
		CHECK_INT(enc_meta_decode(raw, n, &d), -EUCLEAN);
	}
	/* Every known type id decodes in both encodings. */
	for (int t = 1; t <= 14; t++) {
		memset(raw, 0, sizeof(raw));
		raw[0] = (uint8_t)(0x80 | t);
		CHECK_INT(enc_meta_decode(raw, 25, &d), 0);
		CHECK_INT(d.type, t);
		raw[0] = (uint8_t)t;
		CHECK_INT(enc_meta_decode(raw, 17, &d), 0);
		CHECK_INT(d.type, t);
	}

	/* Short values: header lengths 9 / 25 (v1), 5 / 17 (v0). */
	memset(raw, 0, sizeof(raw));
	raw[0] = 0x81;
	CHECK_INT(enc_meta_decode(raw, 8, &d), -EUCLEAN);
	CHECK_INT(enc_meta_decode(raw, 9, &d), 0);
	CHECK_INT(d.tail_len, 0);
	raw[0] = 0x8A;
	CHECK_INT(enc_meta_decode(raw, 8, &d), -EUCLEAN);
	CHECK_INT(enc_meta_decode(raw, 9, &d), 0);
	raw[0] = 0x82;
	for (size_t i = 1; i < 25; i++)
		CHECK_INT(enc_meta_decode(raw, i, &d), -EUCLEAN);
	CHECK_INT(enc_meta_decode(raw, 25, &d), 0);
	raw[0] = 0x01;
	CHECK_INT(enc_meta_decode(raw, 4, &d), -EUCLEAN);
	CHECK_INT(enc_meta_decode(raw, 5, &d), 0);
	raw[0] = 0x02;
	for (size_t i = 1; i < 17; i++)
		CHECK_INT(enc_meta_decode(raw, i, &d), -EUCLEAN);
	CHECK_INT(enc_meta_decode(raw, 17, &d), 0);
}

static void test_expired(void)
{
	const uint64_t now = 1700000000000ull;
	struct enc_meta m = meta(KV_TYPE_HASH, true, 0, VERSION, 1);

	CHECK(!enc_meta_is_expired(&m, now));
	m.expire_ms = now + 1;
	CHECK(!enc_meta_is_expired(&m, now));
	m.expire_ms = now; /* strict: expire < now */
	CHECK(!enc_meta_is_expired(&m, now));
	m.expire_ms = now - 1;
	CHECK(enc_meta_is_expired(&m, now));
	m.expire_ms = 1;
	CHECK(enc_meta_is_expired(&m, now));

	/* size 0: expired for non-emptyable collections only. */
	const enum kv_type dead[] = {KV_TYPE_HASH, KV_TYPE_LIST,   KV_TYPE_SET,
				     KV_TYPE_ZSET, KV_TYPE_BITMAP, KV_TYPE_SORTEDINT};
	const enum kv_type live[] = {KV_TYPE_STRING,	 KV_TYPE_JSON, KV_TYPE_STREAM,
				     KV_TYPE_BLOOM,	 KV_TYPE_HLL,  KV_TYPE_TDIGEST,
				     KV_TYPE_TIMESERIES, KV_TYPE_TOPK};
	for (size_t i = 0; i < sizeof(dead) / sizeof(dead[0]); i++) {
		m = meta(dead[i], true, 0, VERSION, 0);
		CHECK(enc_meta_is_expired(&m, now));
		m.size = 1;
		CHECK(!enc_meta_is_expired(&m, now));
	}
	for (size_t i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
		m = meta(live[i], true, 0, VERSION, 0);
		CHECK(!enc_meta_is_expired(&m, now));
		m.expire_ms = now - 1;
		CHECK(enc_meta_is_expired(&m, now));
	}
}

static void test_types(void)
{
	static const char *const names[] = {"none",    "string",     "hash",   "list",
					    "set",     "zset",	     "bitmap", "sortedint",
					    "stream",  "bloom",	     "json",   "hyperloglog",
					    "tdigest", "timeseries", "topk"};
	for (int t = 0; t <= 14; t++) {
		CHECK(strcmp(enc_type_name((enum kv_type)t), names[t]) == 0);
		if (t)
			CHECK_INT(enc_type_from_name(names[t], strlen(names[t])), t);
	}
	CHECK(strcmp(enc_type_name((enum kv_type)15), "none") == 0);
	CHECK(strcmp(enc_type_name((enum kv_type)255), "none") == 0);
	CHECK_INT(enc_type_from_name("none", 4), KV_TYPE_NONE);
	CHECK_INT(enc_type_from_name("Hash", 4), KV_TYPE_NONE);
	CHECK_INT(enc_type_from_name("has", 3), KV_TYPE_NONE);
	CHECK_INT(enc_type_from_name("hashx", 5), KV_TYPE_NONE);
	CHECK_INT(enc_type_from_name("hash\0", 5), KV_TYPE_NONE);
	CHECK_INT(enc_type_from_name("", 0), KV_TYPE_NONE);
	CHECK_INT(enc_type_from_name("sets", 3), KV_TYPE_SET);

	for (int t = 0; t <= 15; t++) {
		CHECK(enc_type_is_inline((enum kv_type)t) == (t == 1 || t == 10));
		CHECK(enc_type_is_emptyable((enum kv_type)t) ==
		      (t == 8 || t == 9 || t == 11 || t == 12 || t == 13 || t == 14));
	}
}

static void test_version(void)
{
	CHECK(enc_version_make(0, 0) == 0);
	CHECK(enc_version_make(1, 0) == 2048);
	CHECK(enc_version_make(1, 2047) == 4095);
	CHECK(enc_version_make(1, 2048) == 2048);
	CHECK(enc_version_make(1, 2049) == 2049);
	const uint64_t us = 1700000000123456ull;
	uint64_t v = enc_version_make(us, 12345);
	CHECK(v == (us << 11) + (12345 % 2048));
	CHECK(v >> 11 == us);
	CHECK((v & 2047) == 12345 % 2048);
	/* 0x123456789 << 11 = 0x91A2B3C4800, worked by hand. */
	CHECK(enc_version_make(0x123456789ull, 5) == 0x91A2B3C4805ull);
}

static void check_succ(const char *in_hex, bool ok, const char *out_hex)
{
	unsigned char raw[64];
	size_t n = check_unhex(in_hex, raw, sizeof(raw));
	struct buf b = BUF_INIT;
	CHECK_INT(buf_set(&b, raw, n), 0);
	CHECK(enc_prefix_successor(&b) == ok);
	CHECK_HEX(&b, out_hex);
	buf_release(&b);
}

static void test_prefix_successor(void)
{
	check_succ("61 62", true, "61 63");
	check_succ("61 FF", true, "62");
	check_succ("61 FF FF FF", true, "62");
	check_succ("01 FE", true, "01 FF");
	check_succ("00", true, "01");
	check_succ("FE FF", true, "FF");
	check_succ("61 FF 62 FF", true, "61 FF 63");
	check_succ("FF", false, "FF");
	check_succ("FF FF FF", false, "FF FF FF");
	check_succ("", false, "");
	check_succ(NS, true, "0B 5F 5F 6E 61 6D 65 73 70 61 63 66");

	struct buf b = BUF_INIT;
	CHECK(!enc_prefix_successor(&b));
	buf_release(&b);
}

/* Issue 15 items 4 and 15: sizes no count reaches are corrupt, with a
 * reason for the log line. */
static void test_meta_bounds(void)
{
	unsigned char raw[64];
	struct enc_meta m;
	size_t n;
	/* a hash of size 2^63: refused; 2^63 - 1: read */
	n = check_unhex("82 0000000000000000 0000000000001000 8000000000000000", raw, sizeof(raw));
	CHECK_INT(enc_meta_decode(raw, n, &m), -EUCLEAN);
	CHECK(strcmp(enc_meta_why(raw, n), "a size of 2^63 or more") == 0);
	n = check_unhex("82 0000000000000000 0000000000001000 7FFFFFFFFFFFFFFF", raw, sizeof(raw));
	CHECK_INT(enc_meta_decode(raw, n, &m), 0);
	CHECK(strcmp(enc_meta_why(raw, n), "") == 0);
	/* a bitmap of 2^40 bytes (v1) or 2^32 - 1 (v0): more than u32 bit
	 * offsets reach; 512 MiB: read */
	n = check_unhex("86 0000000000000000 0000000000001000 0000010000000000", raw, sizeof(raw));
	CHECK_INT(enc_meta_decode(raw, n, &m), -EUCLEAN);
	n = check_unhex("06 00000000 0000000000001000 FFFFFFFF", raw, sizeof(raw));
	CHECK_INT(enc_meta_decode(raw, n, &m), -EUCLEAN);
	n = check_unhex("86 0000000000000000 0000000000001000 0000000020000000", raw, sizeof(raw));
	CHECK_INT(enc_meta_decode(raw, n, &m), 0);
	CHECK(enc_flags_type(0x86) == KV_TYPE_BITMAP && enc_flags_type(0x8F) == KV_TYPE_NONE &&
	      enc_flags_type(0xC2) == KV_TYPE_NONE);
	CHECK(strcmp(enc_meta_why(raw, 0), "an empty record") == 0);
}

/* Kvrocks's TSRevLabelKey (src/types/redis_timeseries.cc): ns_len | ns |
 * 00 | u32 BE name length | name | u32 BE value length | value | key. */
static void test_ts_label_index(void)
{
	struct buf b = BUF_INIT;
	const uint8_t *ns, *name, *val, *key;
	size_t nslen, nn, vn, klen;

	CHECK_INT(enc_ts_label_index_key(&b, DNS, DNS_LEN, "room", 4, "kitchen", 7, "t:1", 3), 0);
	CHECK_HEX(&b, NS "00 00 00 00 04 72 6F 6F 6D 00 00 00 07 6B 69 74 63 68 65 6E 74 3A 31");
	CHECK_INT(enc_ts_label_index_decode(b.data, b.len, &ns, &nslen, &name, &nn, &val, &vn, &key,
					    &klen),
		  0);
	CHECK_MEM(ns, nslen, DNS, DNS_LEN);
	CHECK_MEM(name, nn, "room", 4);
	CHECK_MEM(val, vn, "kitchen", 7);
	CHECK_MEM(key, klen, "t:1", 3);
	/* The prefix of one label's keys, and of the namespace's index. */
	CHECK_INT(enc_ts_label_index_key(&b, DNS, DNS_LEN, "a", 1, "b", 1, NULL, 0), 0);
	CHECK_HEX(&b, NS "00 00 00 00 01 61 00 00 00 01 62");
	CHECK_INT(enc_ts_label_index_key(&b, "n", 1, NULL, 0, NULL, 0, NULL, 0), 0);
	CHECK_HEX(&b, "01 6E 00");
	CHECK_INT(enc_ts_label_index_key(&b, DNS, 0, "a", 1, "b", 1, "k", 1), -EINVAL);

	/* Untrusted bytes: another index type, lengths past the end. */
	unsigned char raw[64];
	size_t n = check_unhex("01 6E 01 00 00 00 01 61 00 00 00 01 62 6B", raw, sizeof(raw));
	CHECK_INT(
	    enc_ts_label_index_decode(raw, n, &ns, &nslen, &name, &nn, &val, &vn, &key, &klen),
	    -EUCLEAN);
	n = check_unhex("01 6E 00 00 00 00 09 61 00 00 00 01 62 6B", raw, sizeof(raw));
	CHECK_INT(
	    enc_ts_label_index_decode(raw, n, &ns, &nslen, &name, &nn, &val, &vn, &key, &klen),
	    -EUCLEAN);
	n = check_unhex("01 6E 00 00 00 00 01 61 00 00 00 09 62", raw, sizeof(raw));
	CHECK_INT(
	    enc_ts_label_index_decode(raw, n, &ns, &nslen, &name, &nn, &val, &vn, &key, &klen),
	    -EUCLEAN);
	n = check_unhex("05 6E 00", raw, sizeof(raw));
	CHECK_INT(
	    enc_ts_label_index_decode(raw, n, &ns, &nslen, &name, &nn, &val, &vn, &key, &klen),
	    -EUCLEAN);
	n = check_unhex("01 6E 00 00 00 00 00 00 00 00 00", raw, sizeof(raw));
	CHECK_INT(
	    enc_ts_label_index_decode(raw, n, &ns, &nslen, &name, &nn, &val, &vn, &key, &klen), 0);
	CHECK_INT(nn, 0);
	CHECK_INT(vn, 0);
	CHECK_INT(klen, 0);
	buf_release(&b);
}

int main(void)
{
	test_set();
	test_hset();
	test_zadd();
	test_rpush();
	test_setbit();
	test_doubles();
	test_slots();
	test_keys();
	test_v0_decode();
	test_v0_encode();
	test_meta_reject();
	test_expired();
	test_types();
	test_version();
	test_prefix_successor();
	test_meta_bounds();
	test_ts_label_index();
	return check_done("test_encoding");
}
