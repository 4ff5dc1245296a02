/*
 * Unit tests for fs_xval's item lists (fs_items_encode, fs_items_decode,
 * fs_items_split): the escaping of several members in one answer or one
 * name, against the file-name rules of names.h, and round trips of every
 * byte and of random items. Pure: no database.
 */
#include <errno.h>

#include "check.h"
#include "fs/fs_xval.h"
#include "engine/names.h"

static struct buf out = BUF_INIT;

static void check_encode(const char *item, size_t n, const char *want)
{
	buf_reset(&out);
	CHECK_INT(fs_items_encode(&out, item, n), 0);
	CHECK_MEM(out.data, out.len, want, strlen(want));
}

static void test_encode(void)
{
	check_encode("plain", 5, "plain");
	check_encode("café menu", 10, "café menu");
	check_encode("", 0, "%");
	check_encode(".", 1, "%2E");
	check_encode("..", 2, "%2E%2E");
	check_encode("...", 3, "...");
	check_encode("a/b", 3, "a%2Fb");
	check_encode("a\0b", 3, "a%00b");
	check_encode("a\nb", 3, "a%0Ab");
	check_encode("a\tb", 3, "a%09b");
	check_encode("a,b", 3, "a%2Cb");
	check_encode("50%off", 6, "50%off");
	check_encode("100%", 4, "100%25");
	check_encode("%41", 3, "%2541");
	check_encode("%~x", 3, "%25~x");
	check_encode("%,", 2, "%%2C");
	check_encode("\n\n", 2, "%0A%0A");
	check_encode("a\\b", 3, "a\\b"); /* a backslash is no escape */
	/* Appends: the caller separates. */
	buf_reset(&out);
	CHECK_INT(fs_items_encode(&out, "a", 1), 0);
	CHECK_INT(buf_add(&out, "\n", 1), 0);
	CHECK_INT(fs_items_encode(&out, "b,c", 3), 0);
	CHECK_MEM(out.data, out.len, "a\nb%2Cc", 7);
	/* Never cut to a long name. */
	char big[600];
	memset(big, 'k', sizeof(big));
	buf_reset(&out);
	CHECK_INT(fs_items_encode(&out, big, sizeof(big)), 0);
	CHECK_MEM(out.data, out.len, big, sizeof(big));
}

static void check_decode(const char *s, const char *want, size_t wn)
{
	CHECK_INT(fs_items_decode(s, strlen(s), &out), 0);
	CHECK_MEM(out.data, out.len, want, wn);
}

static void test_decode(void)
{
	check_decode("plain", "plain", 5);
	check_decode("%", "", 0);
	check_decode("%2E", ".", 1);
	check_decode("a%0ab%2c", "a\nb,", 4); /* either case */
	check_decode("50%off", "50%off", 6);
	check_decode("100%", "100%", 4);
	check_decode("%%2C", "%,", 2);
	check_decode("%~x", "%~x", 3);
	check_decode("a%0", "a%0", 3);
	/* What names_decode reads from a short name, items read alike. */
	const char *names[] = {"a%2Fb", "%2E%2E", "x%00y", "%2541", "50%off", "b%25"};
	struct buf nd = BUF_INIT;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		CHECK_INT(names_decode(names[i], &nd, NULL), 0);
		CHECK_INT(fs_items_decode(names[i], strlen(names[i]), &out), 0);
		CHECK_MEM(out.data, out.len, nd.data, nd.len);
	}
	buf_release(&nd);
}

/* Every item, encoded then decoded, is itself; an encoded item holds no
 * separator; one of at most 255 bytes without the three extra escapes
 * encodes as names_encode does. */
static void check_round_trip(const uint8_t *item, size_t n)
{
	struct buf back = BUF_INIT, name = BUF_INIT;
	buf_reset(&out);
	CHECK_INT(fs_items_encode(&out, item, n), 0);
	CHECK(out.len > 0);
	CHECK(!memchr(out.data, '\n', out.len) && !memchr(out.data, '\t', out.len) &&
	      !memchr(out.data, ',', out.len) && !memchr(out.data, '/', out.len) &&
	      !memchr(out.data, '\0', out.len));
	CHECK_INT(fs_items_decode(out.data, out.len, &back), 0);
	CHECK_MEM(back.data, back.len, item, n);
	if (!memchr(item, '\n', n) && !memchr(item, '\t', n) && !memchr(item, ',', n) &&
	    out.len <= NAMES_MAX) {
		CHECK_INT(names_encode(item, n, &name), 0);
		CHECK_MEM(out.data, out.len, name.data, name.len);
	}
	buf_release(&back);
	buf_release(&name);
}

static void test_round_trip(void)
{
	uint8_t item[64];
	for (unsigned c = 0; c < 256; c++) {
		item[0] = (uint8_t)c;
		check_round_trip(item, 1);
		item[1] = (uint8_t)c;
		item[2] = '%';
		check_round_trip(item, 3);
	}
	/* Random items from an alphabet of the bytes that matter. */
	static const char alpha[] = "%~/\n\t,.aF0\\ \0";
	uint64_t x = 88172645463325252ull;
	for (int t = 0; t < 20000; t++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		size_t n = x % 9;
		for (size_t i = 0; i < n; i++)
			item[i] = (uint8_t)alpha[(x >> (8 + 4 * i)) % (sizeof(alpha) - 1)];
		check_round_trip(item, n);
	}
}

/* The items of s, each followed by '|', into out; fs_items_split's result. */
static int split(const char *s, struct buf *got, size_t *n)
{
	struct fs_items it;
	buf_reset(got);
	int rc = fs_items_split(s, strlen(s), "test", &it);
	for (size_t i = 0; !rc && i < it.n; i++) {
		CHECK_INT(buf_add(got, it.v[i].iov_base, it.v[i].iov_len), 0);
		CHECK_INT(buf_add(got, "|", 1), 0);
	}
	*n = rc ? 0 : it.n;
	fs_items_release(&it);
	return rc;
}

static void test_split(void)
{
	struct buf all = BUF_INIT;
	size_t n;
	CHECK_INT(split("a,b%2Cc,%,d%0Ae", &all, &n), 0);
	CHECK_INT(n, 4);
	CHECK_MEM(all.data, all.len, "a|b,c||d\ne|", 11);
	CHECK_INT(split("one", &all, &n), 0);
	CHECK_INT(n, 1);
	/* No items at all, and empty items, which must be written "%". */
	CHECK_INT(split("", &all, &n), -EINVAL);
	CHECK_INT(split("a,,b", &all, &n), -EINVAL);
	CHECK_INT(split(",a", &all, &n), -EINVAL);
	CHECK_INT(split("a,", &all, &n), -EINVAL);
	CHECK_INT(split(",", &all, &n), -EINVAL);
	/* What fs_items_encode writes, split back: the same items. */
	static const char *items[] = {"a,b", "x\ny", "", "100%", "t\tv"};
	struct buf list = BUF_INIT;
	for (size_t i = 0; i < 5; i++) {
		if (i)
			CHECK_INT(buf_add(&list, ",", 1), 0);
		CHECK_INT(fs_items_encode(&list, items[i], strlen(items[i])), 0);
	}
	CHECK_INT(buf_add(&list, "", 1), 0);
	CHECK_INT(split(list.data, &all, &n), 0);
	CHECK_INT(n, 5);
	CHECK_MEM(all.data, all.len, "a,b|x\ny||100%|t\tv|", 18);
	buf_release(&list);
	buf_release(&all);
}

int main(void)
{
	log_level_current = -1;
	test_encode();
	test_decode();
	test_round_trip();
	test_split();
	buf_release(&out);
	return check_done("test_fs_xval");
}
