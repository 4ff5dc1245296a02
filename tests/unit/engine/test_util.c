/*
 * Unit tests for util: growable buffers and their invariants, big-endian
 * helpers, byte comparison, number parsing, clocks and hashing.
 */
#include "check.h"
#include "engine/util.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>

/* The struct buf invariant of util.h. */
static void check_inv(const struct buf *b)
{
	CHECK((b->data == NULL) == (b->cap == 0));
	if (b->data) {
		CHECK(b->len < b->cap);
		CHECK(b->data[b->len] == '\0');
	} else {
		CHECK(b->len == 0);
	}
}

static void test_buf_basic(void)
{
	struct buf b;
	buf_init(&b);
	check_inv(&b);
	CHECK(b.data == NULL && b.len == 0 && b.cap == 0);

	struct buf s = BUF_INIT;
	check_inv(&s);

	CHECK_INT(buf_add(&b, "abc", 3), 0);
	check_inv(&b);
	CHECK_MEM(b.data, b.len, "abc", 3);
	CHECK(strcmp(b.data, "abc") == 0);
	CHECK_INT(buf_add(&b, "d\0e", 3), 0);
	check_inv(&b);
	CHECK_MEM(b.data, b.len, "abcd\0e", 6);
	CHECK_INT(buf_add(&b, NULL, 0), 0);
	CHECK_INT(b.len, 6);

	buf_reset(&b);
	check_inv(&b);
	CHECK_INT(b.len, 0);
	CHECK(b.cap > 0);
	CHECK(b.data[0] == '\0');

	/* buf_reset on an empty buffer must not touch memory. */
	buf_reset(&s);
	check_inv(&s);

	CHECK_INT(buf_set(&b, "xyz", 3), 0);
	CHECK_MEM(b.data, b.len, "xyz", 3);
	CHECK_INT(buf_set(&b, "", 0), 0);
	CHECK_INT(b.len, 0);
	check_inv(&b);
	CHECK_INT(buf_set(&s, "q", 1), 0);
	CHECK_MEM(s.data, s.len, "q", 1);
	check_inv(&s);

	buf_release(&b);
	check_inv(&b);
	CHECK(b.data == NULL);
	buf_release(&b); /* twice is fine */
	buf_release(&s);
}

static void test_buf_ints(void)
{
	struct buf b = BUF_INIT;
	unsigned char want[32];
	size_t n = check_unhex("7F 12 34 89 AB CD EF 01 23 45 67 89 AB CD EF 00 00 00 00", want,
			       sizeof(want));
	CHECK_INT(buf_add_u8(&b, 0x7F), 0);
	CHECK_INT(buf_add_be16(&b, 0x1234), 0);
	CHECK_INT(buf_add_be32(&b, 0x89ABCDEF), 0);
	CHECK_INT(buf_add_be64(&b, 0x0123456789ABCDEFull), 0);
	CHECK_INT(buf_add_be32(&b, 0), 0);
	CHECK_MEM(b.data, b.len, want, n);
	check_inv(&b);
	buf_release(&b);
}

static void test_buf_grow(void)
{
	struct buf b = BUF_INIT;
	/* Many small appends across several reallocations. */
	for (int i = 0; i < 10000; i++)
		CHECK_INT(buf_add_u8(&b, (uint8_t)i), 0);
	check_inv(&b);
	CHECK_INT(b.len, 10000);
	int bad = 0;
	for (int i = 0; i < 10000; i++)
		bad += (uint8_t)b.data[i] != (uint8_t)i;
	CHECK_INT(bad, 0);

	/* reserve gives room for len + extra + NUL without changing len. */
	buf_reset(&b);
	CHECK_INT(buf_reserve(&b, 100000), 0);
	CHECK(b.cap >= 100001);
	CHECK_INT(b.len, 0);
	check_inv(&b);
	CHECK_INT(buf_reserve(&b, SIZE_MAX), -ENOMEM);
	CHECK_INT(buf_add(&b, "x", SIZE_MAX), -ENOMEM);
	CHECK_INT(b.len, 0);
	check_inv(&b);

	struct buf e = BUF_INIT;
	CHECK_INT(buf_reserve(&e, 0), 0);
	check_inv(&e);
	CHECK(e.data != NULL);
	buf_release(&e);
	buf_release(&b);
}

static void test_buf_resize(void)
{
	struct buf b = BUF_INIT;
	CHECK_INT(buf_resize(&b, 0), 0);
	check_inv(&b);
	CHECK_INT(buf_resize(&b, 5), 0);
	CHECK_MEM(b.data, b.len, "\0\0\0\0\0", 5);
	check_inv(&b);
	memcpy(b.data, "hello", 5);
	CHECK_INT(buf_resize(&b, 2), 0);
	CHECK_MEM(b.data, b.len, "he", 2);
	check_inv(&b);
	/* Growing again zeroes the new bytes, not the old contents. */
	CHECK_INT(buf_resize(&b, 4), 0);
	CHECK_MEM(b.data, b.len, "he\0\0", 4);
	check_inv(&b);
	CHECK_INT(buf_resize(&b, 1000), 0);
	CHECK_INT(b.len, 1000);
	CHECK(b.data[999] == 0 && b.data[4] == 0);
	check_inv(&b);
	CHECK_INT(buf_resize(&b, SIZE_MAX), -ENOMEM);
	CHECK_INT(b.len, 1000);
	buf_release(&b);
}

static void test_buf_printf(void)
{
	struct buf b = BUF_INIT;
	CHECK_INT(buf_printf(&b, "%d-%s", 42, "x"), 0);
	CHECK_MEM(b.data, b.len, "42-x", 4);
	check_inv(&b);
	CHECK_INT(buf_printf(&b, "%s", ""), 0);
	CHECK_INT(b.len, 4);
	CHECK_INT(buf_printf(&b, "|%05u|", 7u), 0);
	CHECK_MEM(b.data, b.len, "42-x|00007|", 11);
	check_inv(&b);

	struct buf e = BUF_INIT;
	CHECK_INT(buf_printf(&e, "%s", ""), 0);
	check_inv(&e);
	CHECK_INT(e.len, 0);

	/* Longer than any first allocation. */
	buf_reset(&b);
	char big[3000];
	memset(big, 'q', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	CHECK_INT(buf_printf(&b, "<%s>", big), 0);
	CHECK_INT(b.len, sizeof(big) + 1);
	CHECK(b.data[0] == '<' && b.data[b.len - 1] == '>');
	check_inv(&b);
	buf_release(&e);
	buf_release(&b);
}

static void test_be(void)
{
	unsigned char m[10], want[10];
	size_t n;

	memset(m, 0xEE, sizeof(m));
	put_be16(m + 1, 0xA1B2);
	n = check_unhex("EE A1 B2 EE", want, sizeof(want));
	CHECK_MEM(m, 4, want, n);
	CHECK_INT(get_be16(m + 1), 0xA1B2);

	memset(m, 0xEE, sizeof(m));
	put_be32(m + 1, 0x80010203u);
	n = check_unhex("EE 80 01 02 03 EE", want, sizeof(want));
	CHECK_MEM(m, 6, want, n);
	CHECK(get_be32(m + 1) == 0x80010203u);

	memset(m, 0xEE, sizeof(m));
	put_be64(m + 1, 0xF00102030405060Aull);
	n = check_unhex("EE F0 01 02 03 04 05 06 0A EE", want, sizeof(want));
	CHECK_MEM(m, 10, want, n);
	CHECK(get_be64(m + 1) == 0xF00102030405060Aull);

	/* Extremes, read from hand-written bytes. */
	check_unhex("FF FF FF FF FF FF FF FF", want, sizeof(want));
	CHECK(get_be16(want) == 0xFFFF);
	CHECK(get_be32(want) == 0xFFFFFFFFu);
	CHECK(get_be64(want) == UINT64_MAX);
	check_unhex("80 00 00 00 00 00 00 01", want, sizeof(want));
	CHECK(get_be16(want) == 0x8000);
	CHECK(get_be32(want) == 0x80000000u);
	CHECK(get_be64(want) == 0x8000000000000001ull);
}

static void test_bytes_cmp(void)
{
	CHECK_INT(bytes_cmp("", 0, "", 0), 0);
	CHECK_INT(bytes_cmp(NULL, 0, NULL, 0), 0);
	CHECK(bytes_cmp("a", 1, "b", 1) < 0);
	CHECK(bytes_cmp("b", 1, "a", 1) > 0);
	CHECK(bytes_cmp("a", 1, "ab", 2) < 0);
	CHECK(bytes_cmp("ab", 2, "a", 1) > 0);
	CHECK(bytes_cmp("", 0, "\0", 1) < 0);
	CHECK_INT(bytes_cmp("a\0b", 3, "a\0b", 3), 0);
	CHECK(bytes_cmp("a\0b", 3, "a\0c", 3) < 0);
	/* Unsigned, as RocksDB's bytewise comparator. */
	CHECK(bytes_cmp("\x7f", 1, "\x80", 1) < 0);
	CHECK(bytes_cmp("\xff", 1, "\x01", 1) > 0);
}

static void check_u64(const char *s, int rc, uint64_t v)
{
	uint64_t out = 12345;
	CHECK_INT(parse_u64(s, strlen(s), &out), rc);
	if (rc == 0)
		CHECK(out == v);
	else
		CHECK(out == 12345); /* untouched on failure */
}

static void check_i64(const char *s, int rc, int64_t v)
{
	int64_t out = 12345;
	CHECK_INT(parse_i64(s, strlen(s), &out), rc);
	if (rc == 0)
		CHECK(out == v);
	else
		CHECK(out == 12345);
}

static void check_dbl(const char *s, int rc, double v)
{
	double out = 12345;
	CHECK_INT(parse_double(s, strlen(s), &out), rc);
	if (rc == 0)
		CHECK(out == v && signbit(out) == signbit(v));
	else
		CHECK(out == 12345);
}

static void test_parse_double(void)
{
	check_dbl("0", 0, 0.0);
	check_dbl("-0", 0, -0.0);
	check_dbl("1.5", 0, 1.5);
	check_dbl("1.5\n", 0, 1.5);
	check_dbl("  -2e3 \t\r\n", 0, -2000.0);
	check_dbl("+7", 0, 7.0);
	check_dbl(".5", 0, 0.5);
	check_dbl("5.", 0, 5.0);
	check_dbl("inf", 0, INFINITY);
	check_dbl("-inf", 0, -INFINITY);
	check_dbl("+inf\n", 0, INFINITY);
	check_dbl("Infinity", 0, INFINITY);
	check_dbl("0x1p3", 0, 8.0);
	check_dbl("0.1", 0, 0.1);
	check_dbl("1e-400", 0, 0.0); /* underflow: the nearest double */
	check_dbl("1e400", -EINVAL, 0);
	check_dbl("-1e400", -EINVAL, 0);
	check_dbl("nan", -EINVAL, 0);
	check_dbl("-nan", -EINVAL, 0);
	check_dbl("", -EINVAL, 0);
	check_dbl(" \n", -EINVAL, 0);
	check_dbl("abc", -EINVAL, 0);
	check_dbl("1.5x", -EINVAL, 0);
	check_dbl("1 2", -EINVAL, 0);
	check_dbl("1,5", -EINVAL, 0);
	double d;
	CHECK_INT(parse_double("1\0002", 3, &d), -EINVAL);
	CHECK_INT(parse_double("123", 2, &d), 0);
	CHECK(d == 12.0);
	char big[200];
	memset(big, '1', sizeof(big));
	CHECK_INT(parse_double(big, sizeof(big), &d), -EINVAL);
}

static void test_fmt_double(void)
{
	char t[40];
	static const struct {
		double d;
		const char *shortest, *g17;
	} v[] = {
	    {0.1, "0.1", "0.1"},
	    {1000, "1000", "1000"},
	    {100000, "1e+05", "100000"},
	    {2.5, "2.5", "2.5"},
	    {-0.0, "-0", "-0"},
	    {1e21, "1e+21", "1e+21"},
	    {0.1 + 0.2, "0.30000000000000004", "0.30000000000000004"},
	    {1.0 / 3, "0.3333333333333333", "0.333333333333333"},
	};
	for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		CHECK(fmt_double_shortest(v[i].d, t) == strlen(v[i].shortest));
		CHECK(strcmp(t, v[i].shortest) == 0);
		CHECK(fmt_double_g17(v[i].d, t) == strlen(t));
		CHECK(strtod(t, NULL) == v[i].d);
	}
	CHECK(fmt_double_g17(100000, t) == 6 && strcmp(t, "100000") == 0);
	CHECK(fmt_double_shortest(NAN, t) == 3 && strcmp(t, "nan") == 0);
	CHECK(fmt_double_shortest(-INFINITY, t) == 4 && strcmp(t, "-inf") == 0);
	/* every double of a sweep reads back from both */
	for (int i = -300; i <= 300; i += 7) {
		double d = 1.2345678901234567 * pow(10, i);
		fmt_double_shortest(d, t);
		CHECK(strtod(t, NULL) == d);
		fmt_double_g17(d, t);
		CHECK(strtod(t, NULL) == d);
	}
}

static void test_escape(void)
{
	struct buf e = BUF_INIT, u = BUF_INIT;
	const char raw[] = "a\\b\tc\nd\re\x01\x7f\xc3\xa9 z";
	CHECK(buf_add_escaped(&e, raw, sizeof(raw) - 1) == 0);
	CHECK(strcmp(e.data, "a\\\\b\\tc\\nd\\re\\x01\\x7f\xc3\xa9 z") == 0);
	CHECK(buf_set_unescaped(&u, e.data, e.len) == 0);
	CHECK(u.len == sizeof(raw) - 1 && memcmp(u.data, raw, u.len) == 0);
	/* every byte value survives */
	char all[256];
	for (int i = 0; i < 256; i++)
		all[i] = (char)i;
	buf_reset(&e);
	CHECK(buf_add_escaped(&e, all, sizeof(all)) == 0);
	CHECK(memchr(e.data, '\t', e.len) == NULL && memchr(e.data, '\n', e.len) == NULL);
	CHECK(buf_set_unescaped(&u, e.data, e.len) == 0);
	CHECK(u.len == 256 && memcmp(u.data, all, 256) == 0);
	/* bad escapes */
	CHECK(buf_set_unescaped(&u, "a\\", 2) == -EINVAL);
	CHECK(buf_set_unescaped(&u, "\\q", 2) == -EINVAL);
	CHECK(buf_set_unescaped(&u, "\\x4", 3) == -EINVAL);
	CHECK(buf_set_unescaped(&u, "\\xg0", 4) == -EINVAL);
	CHECK(buf_set_unescaped(&u, "\\X41", 4) == -EINVAL);
	CHECK(buf_set_unescaped(&u, "\\x4A", 4) == 0 && u.len == 1 && u.data[0] == 'J');
	CHECK(hex_digit('f') == 15 && hex_digit('F') == 15 && hex_digit('0') == 0);
	CHECK(hex_digit('g') == -1 && hex_digit('/') == -1);
	buf_release(&e);
	buf_release(&u);
}

static void test_parse(void)
{
	check_u64("0", 0, 0);
	check_u64("7", 0, 7);
	check_u64("42", 0, 42);
	check_u64("007", 0, 7);
	check_u64("18446744073709551615", 0, UINT64_MAX);
	check_u64("18446744073709551616", -ERANGE, 0);
	check_u64("18446744073709551620", -ERANGE, 0);
	check_u64("99999999999999999999", -ERANGE, 0);
	check_u64("00000000000000000001", 0, 1);
	check_u64("", -EINVAL, 0);
	check_u64("-1", -EINVAL, 0);
	check_u64("-0", -EINVAL, 0);
	check_u64("+1", -EINVAL, 0);
	check_u64(" 1", -EINVAL, 0);
	check_u64("1 ", -EINVAL, 0);
	check_u64("12a", -EINVAL, 0);
	check_u64("0x10", -EINVAL, 0);
	check_u64("1.0", -EINVAL, 0);
	check_u64("1e3", -EINVAL, 0);
	/* More than 20 digits: always refused (the errno is not pinned here). */
	uint64_t u;
	CHECK(parse_u64("123456789012345678901", 21, &u) < 0);

	/* n bounds the input; bytes past it are ignored, embedded NUL fails. */
	CHECK_INT(parse_u64("123", 2, &u), 0);
	CHECK(u == 12);
	CHECK_INT(parse_u64("1\0002", 3, &u), -EINVAL);
	CHECK_INT(parse_u64("5", 0, &u), -EINVAL);

	check_i64("0", 0, 0);
	check_i64("-0", 0, 0);
	check_i64("123", 0, 123);
	check_i64("-123", 0, -123);
	check_i64("9223372036854775807", 0, INT64_MAX);
	check_i64("9223372036854775808", -ERANGE, 0);
	check_i64("-9223372036854775808", 0, INT64_MIN);
	check_i64("-9223372036854775809", -ERANGE, 0);
	check_i64("18446744073709551615", -ERANGE, 0);
	check_i64("-18446744073709551616", -ERANGE, 0);
	check_i64("", -EINVAL, 0);
	check_i64("-", -EINVAL, 0);
	check_i64("--1", -EINVAL, 0);
	check_i64("+1", -EINVAL, 0);
	check_i64("- 1", -EINVAL, 0);
	check_i64("1-", -EINVAL, 0);
	check_i64(" -1", -EINVAL, 0);
	int64_t i;
	CHECK_INT(parse_i64("-12", 2, &i), 0);
	CHECK(i == -1);
}

static void test_clock_hash(void)
{
	uint64_t ms = now_ms(), us = now_us();
	CHECK(ms > 1600000000000ull); /* after Sep 2020 */
	CHECK(ms < 4102444800000ull); /* before 2100 */
	CHECK(us / 1000 >= ms);
	CHECK(us / 1000 - ms < 5000);

	/* XXH3-64, seed 0: the published value for empty input. */
	CHECK(hash_bytes("", 0) == 0x2D06800538D394C2ull);
	CHECK(hash_bytes("abc", 3) == hash_bytes("abc", 3));
	CHECK(hash_bytes("abc", 3) != hash_bytes("abd", 3));
	CHECK(hash_bytes("a\0", 2) != hash_bytes("a", 1));
}

static void test_log(void)
{
	int saved = log_level_current;
	log_level_current = LOG_LEVEL_ERR;
	/* Filtered out: must not print or crash. */
	LOG_INFO("this should not appear %d", 1);
	LOG_DEBUG("nor this %s", "x");
	log_level_current = saved;
	CHECK(LOG_LEVEL_ERR < LOG_LEVEL_WARN && LOG_LEVEL_INFO < LOG_LEVEL_DEBUG);
}

static void test_prefix_blank(void)
{
	CHECK(has_prefix("count=5", 7, "count="));
	CHECK(has_prefix("count=", 6, "count="));
	CHECK(has_prefix("abc", 3, ""));
	CHECK(has_prefix("", 0, ""));
	CHECK(!has_prefix("count", 5, "count="));
	CHECK(!has_prefix("count=5", 7, "align="));
	/* n bounds s, not a NUL: "ab" of "abc" lacks the prefix "abc" */
	CHECK(!has_prefix("abc", 2, "abc"));
	CHECK(has_prefix("a\0b", 3, "a"));

	CHECK(text_is_blank("", 0));
	CHECK(text_is_blank(" \t\r\n", 4));
	CHECK(!text_is_blank(" x ", 3));
	CHECK(!text_is_blank("\0", 1));
	CHECK(!text_is_blank("\v", 1));
	CHECK(text_is_blank("  x", 2));
}

static void test_array_grow(void)
{
	int *v = NULL, *nv;
	size_t cap = 0, len = 0;
	for (int i = 0; i < 100; i++) {
		nv = array_grow(v, &cap, len, sizeof(*v), 4);
		CHECK(nv != NULL);
		if (!nv)
			break;
		v = nv;
		CHECK(len < cap);
		v[len++] = i;
	}
	CHECK(cap == 128);
	for (int i = 0; i < 100; i++)
		CHECK(v[i] == i);
	/* not full: the same array, cap unchanged */
	CHECK(array_grow(v, &cap, len, sizeof(*v), 4) == v && cap == 128);
	free(v);
	v = NULL;
	cap = 0;
	v = array_grow(v, &cap, 0, sizeof(*v), 1);
	CHECK(v != NULL && cap == 1);
	free(v);
}

int main(void)
{
	test_buf_basic();
	test_buf_ints();
	test_buf_grow();
	test_buf_resize();
	test_buf_printf();
	test_be();
	test_bytes_cmp();
	test_parse();
	test_parse_double();
	test_fmt_double();
	test_prefix_blank();
	test_array_grow();
	test_escape();
	test_clock_hash();
	test_log();
	return check_done("test_util");
}
