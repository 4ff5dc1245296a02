/*
 * Unit tests for names: the escaping rules of names.h, long names, and a
 * fuzz-style proof that decode(encode(x)) == x for binary names of every
 * length 0..600, checked against a second, naive escaper written here.
 */
#include "check.h"
#include "engine/names.h"

#include <errno.h>
#include <inttypes.h>

/* Encode raw and compare with the expected file name (a C string). */
static void check_enc(const void *raw, size_t n, const char *want)
{
	struct buf out = BUF_INIT;
	CHECK_INT(names_encode(raw, n, &out), 0);
	CHECK_MEM(out.data, out.len, want, strlen(want));
	CHECK(out.data && out.data[out.len] == '\0');
	buf_release(&out);
}

/* Decode name and compare with the expected stored bytes. */
static void check_dec(const char *name, const void *want, size_t wn)
{
	struct buf out = BUF_INIT;
	uint64_t h = 0;
	CHECK_INT(names_decode(name, &out, &h), 0);
	CHECK_MEM(out.data, out.len, want, wn);
	buf_release(&out);
}

#define ENC(lit, want) check_enc(lit, sizeof(lit) - 1, want)
#define DEC(name, lit) check_dec(name, lit, sizeof(lit) - 1)

static void test_plain(void)
{
	ENC("hello", "hello");
	ENC("with space", "with space");
	ENC("caf\xc3\xa9 \xe2\x9c\x93", "caf\xc3\xa9 \xe2\x9c\x93");
	ENC("\x01\x7f\x80\xff", "\x01\x7f\x80\xff");
	ENC("...", "...");
	ENC(".a", ".a");
	ENC("a.", "a.");
	ENC("~", "~");
	ENC("a~b", "a~b");
	DEC("hello", "hello");
	DEC("...", "...");
	DEC("~", "~");
}

static void test_specials(void)
{
	ENC("a/b", "a%2Fb");
	ENC("/", "%2F");
	ENC("//", "%2F%2F");
	ENC("a\0b", "a%00b");
	ENC("\0", "%00");
	ENC(".", "%2E");
	ENC("..", "%2E%2E");
	ENC("", "%");
	ENC("./", ".%2F");

	DEC("a%2Fb", "a/b");
	DEC("a%2fb", "a/b");
	DEC("%00", "\0");
	DEC("%2E", ".");
	DEC("%2e", ".");
	DEC("%2E%2E", "..");
	DEC("%2e%2E", "..");
	DEC("%", "");
	DEC("%41%42", "AB");
	DEC("%c3%A9", "\xc3\xa9");
}

static void test_percent(void)
{
	/* '%' is literal unless followed by two hex digits, '~', or the end. */
	ENC("50%off", "50%off");
	ENC("%zz", "%zz");
	ENC("%4", "%4");
	ENC("%4g", "%4g");
	ENC("%g4", "%g4");
	ENC("%41", "%2541");
	ENC("%aF", "%25aF");
	ENC("%", "%25");
	ENC("a%", "a%25");
	ENC("%%", "%%25");
	ENC("%%41", "%%2541");
	ENC("%~", "%25~");
	ENC("a%~b", "a%25~b");
	ENC("%/", "%%2F");
	ENC("%\0", "%%00");
	ENC("%2F", "%252F");
	ENC("%2E", "%252E");
	ENC("%25", "%2525");

	DEC("50%off", "50%off");
	DEC("%zz", "%zz");
	DEC("%4", "%4");
	DEC("%4g", "%4g");
	DEC("%2541", "%41");
	DEC("%25", "%");
	DEC("a%25", "a%");
	DEC("%%25", "%%");
	DEC("%%2F", "%/");
	DEC("%25~", "%~");
	/* Lenient: what users type never fails. */
	DEC("%%", "%%");
	DEC("50%", "50%");
	DEC("%~", "%~");
	DEC("a%~b", "a%~b");
	DEC("%~0123", "%~0123");
}

/* The long form for raw: prefix (already escaped) + "%~" + hash. */
static void long_name(const char *prefix, const void *raw, size_t n, char *out, size_t cap)
{
	snprintf(out, cap, "%s%%~%016" PRIx64, prefix, hash_bytes(raw, n));
}

static void test_long(void)
{
	char raw[700], prefix[256], want[300];
	struct buf out = BUF_INIT;
	uint64_t h;

	/* 255 escaped bytes fit; 256 do not. */
	memset(raw, 'a', sizeof(raw));
	memset(prefix, 'a', 255);
	prefix[255] = '\0';
	check_enc(raw, 255, prefix);
	prefix[NAMES_LONG_PREFIX] = '\0';
	long_name(prefix, raw, 256, want, sizeof(want));
	check_enc(raw, 256, want);
	CHECK_INT(strlen(want), 218);
	long_name(prefix, raw, 600, want, sizeof(want));
	check_enc(raw, 600, want);

	/* Decoding the long form gives the prefix and the hash. */
	CHECK_INT(names_decode(want, &out, &h), NAMES_DECODED_LONG);
	CHECK_MEM(out.data, out.len, raw, NAMES_LONG_PREFIX);
	CHECK(h == hash_bytes(raw, 600));
	CHECK(names_long_matches(raw, 600, h));
	CHECK(!names_long_matches(raw, 599, h));
	CHECK(!names_long_matches(raw, 600, h ^ 1));
	/* A short name is never what a long reference means. */
	CHECK(!names_long_matches(raw, 255, hash_bytes(raw, 255)));
	CHECK(names_long_matches(raw, 256, hash_bytes(raw, 256)));
	/* NULL hash pointer is fine. */
	CHECK_INT(names_decode(want, &out, NULL), NAMES_DECODED_LONG);

	/* 85 '/' escape to exactly 255 bytes; 86 do not fit, and the prefix is
	 * cut at an escape boundary (66 escapes = 198 bytes). */
	memset(raw, '/', 86);
	prefix[0] = '\0';
	for (int i = 0; i < 85; i++)
		strcat(prefix, "%2F");
	check_enc(raw, 85, prefix);
	prefix[198] = '\0';
	long_name(prefix, raw, 86, want, sizeof(want));
	check_enc(raw, 86, want);
	CHECK_INT(names_decode(want, &out, &h), NAMES_DECODED_LONG);
	CHECK_MEM(out.data, out.len, raw, 66);

	/* 199 'a' + '/' + ...: the escape would cross 200, so the cut is 199. */
	memset(raw, 'a', 199);
	raw[199] = '/';
	memset(raw + 200, 'b', 100);
	memset(prefix, 'a', 199);
	prefix[199] = '\0';
	long_name(prefix, raw, 300, want, sizeof(want));
	check_enc(raw, 300, want);

	/* A literal '%' right before the cut: "aaa...%%~hash". */
	memset(raw, 'a', 199);
	memcpy(raw + 199, "%zz", 3);
	memset(raw + 202, 'b', 100);
	memset(prefix, 'a', 199);
	strcpy(prefix + 199, "%");
	long_name(prefix, raw, 302, want, sizeof(want));
	check_enc(raw, 302, want);
	CHECK_INT(names_decode(want, &out, &h), NAMES_DECODED_LONG);
	CHECK_MEM(out.data, out.len, raw, 200);
	CHECK(names_long_matches(raw, 302, h));

	/* Hash digits in either case; exactly 16 of them. */
	CHECK_INT(names_decode("abc%~0123456789abcdef", &out, &h), NAMES_DECODED_LONG);
	CHECK_MEM(out.data, out.len, "abc", 3);
	CHECK(h == 0x0123456789abcdefull);
	CHECK_INT(names_decode("a%2Fb%~0123456789ABCDEF", &out, &h), NAMES_DECODED_LONG);
	CHECK_MEM(out.data, out.len, "a/b", 3);
	CHECK(h == 0x0123456789abcdefull);
	CHECK_INT(names_decode("%~ffffffffffffffff", &out, &h), NAMES_DECODED_LONG);
	CHECK_INT(out.len, 0);
	CHECK(h == UINT64_MAX);
	DEC("abc%~0123456789abcde", "abc%~0123456789abcde");
	DEC("abc%~0123456789abcdef0", "abc%~0123456789abcdef0");
	DEC("abc%~0123456789abcdeg", "abc%~0123456789abcdeg");
	DEC("%25~0123456789abcdef", "%~0123456789abcdef");
	ENC("%~0123456789abcdef", "%25~0123456789abcdef");

	/* Names over 255 bytes are refused. */
	char big[300];
	memset(big, 'x', sizeof(big));
	big[255] = '\0';
	CHECK_INT(names_decode(big, &out, &h), 0);
	CHECK_INT(out.len, 255);
	big[255] = 'x';
	big[256] = '\0';
	CHECK_INT(names_decode(big, &out, &h), -ENAMETOOLONG);
	big[299] = '\0';
	CHECK_INT(names_decode(big, &out, &h), -ENAMETOOLONG);

	/* Output is replaced, not appended. */
	CHECK_INT(buf_set(&out, "junk", 4), 0);
	CHECK_INT(names_encode("x", 1, &out), 0);
	CHECK_MEM(out.data, out.len, "x", 1);
	CHECK_INT(names_decode("y", &out, &h), 0);
	CHECK_MEM(out.data, out.len, "y", 1);
	buf_release(&out);
}

/* ---- Fuzz ------------------------------------------------------------ */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rng(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static bool ref_is_hex(unsigned char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* A naive second escaper: full escaped form (no special cases) and the
 * end offset of every unit, straight from the rules in names.h. */
static size_t ref_escape(const unsigned char *p, size_t n, char *out, size_t *ends)
{
	size_t len = 0;
	for (size_t i = 0; i < n; i++) {
		bool esc = p[i] == '/' || p[i] == 0;
		if (p[i] == '%') {
			bool hex2 = i + 2 < n && ref_is_hex(p[i + 1]) && ref_is_hex(p[i + 2]);
			esc = hex2 || i + 1 == n || p[i + 1] == '~';
		}
		if (esc)
			len += (size_t)sprintf(out + len, "%%%02X", p[i]);
		else
			out[len++] = (char)p[i];
		ends[i] = len;
	}
	return len;
}

static void fuzz_one(const unsigned char *raw, size_t n)
{
	struct buf enc = BUF_INIT, dec = BUF_INIT;
	char ref[3 * 600 + 1];
	size_t ends[600];
	uint64_t h = 0;

	int rc = names_encode(raw, n, &enc);
	CHECK_INT(rc, 0);
	if (rc)
		return;
	/* A valid file name: 1..255 bytes, no NUL, no '/', not . or .. */
	CHECK(enc.len >= 1 && enc.len <= NAMES_MAX);
	CHECK(strlen(enc.data) == enc.len);
	CHECK(!memchr(enc.data, '/', enc.len));
	CHECK(strcmp(enc.data, ".") != 0 && strcmp(enc.data, "..") != 0);

	size_t rlen = ref_escape(raw, n, ref, ends);
	rc = names_decode(enc.data, &dec, &h);
	if (rlen <= NAMES_MAX) {
		CHECK_INT(rc, 0);
		CHECK_MEM(dec.data, dec.len, raw, n);
		bool special = n == 0 || (n == 1 && raw[0] == '.') ||
			       (n == 2 && raw[0] == '.' && raw[1] == '.');
		if (!special)
			CHECK_MEM(enc.data, enc.len, ref, rlen);
	} else {
		CHECK_INT(rc, NAMES_DECODED_LONG);
		CHECK(h == hash_bytes(raw, n));
		CHECK(names_long_matches(raw, n, h));
		/* prefix: the longest whole-unit cut of ref within 200 bytes */
		size_t units = 0;
		while (units < n && ends[units] <= NAMES_LONG_PREFIX)
			units++;
		size_t plen = units ? ends[units - 1] : 0;
		CHECK_INT(enc.len, plen + 18);
		CHECK_MEM(enc.data, plen, ref, plen);
		CHECK_MEM(dec.data, dec.len, raw, units);
	}
	buf_release(&enc);
	buf_release(&dec);
}

static void test_fuzz(void)
{
	static const unsigned char alpha[] = {'%', '~', '/', '.', 0,   'a', 'A', 'f',
					      'F', '0', '9', 'z', 'G', '%', '%', 0xff};
	unsigned char raw[600];
	int before = check_failed;

	for (size_t n = 0; n <= 600; n++) {
		for (int rep = 0; rep < 40; rep++) {
			int mode = rep % 4;
			for (size_t i = 0; i < n; i++) {
				uint64_t r = rng();
				if (mode == 0)
					raw[i] = (unsigned char)r; /* any byte */
				else if (mode == 1)
					raw[i] = alpha[r % sizeof(alpha)];
				else if (mode == 2)
					raw[i] = (r & 3) ? 'x' : alpha[(r >> 8) % sizeof(alpha)];
				else
					raw[i] = (r & 7) ? '/' : '%';
			}
			fuzz_one(raw, n);
			if (check_failed > before + 20)
				return; /* enough noise */
		}
	}
	/* Every name of up to 3 bytes from the interesting alphabet. */
	for (size_t a = 0; a < sizeof(alpha); a++)
		for (size_t b = 0; b < sizeof(alpha); b++)
			for (size_t c = 0; c < sizeof(alpha); c++) {
				raw[0] = alpha[a];
				raw[1] = alpha[b];
				raw[2] = alpha[c];
				fuzz_one(raw, 1);
				fuzz_one(raw, 2);
				fuzz_one(raw, 3);
			}
}

/* Names users type (no NUL, no '/') always decode, and the stored bytes
 * they mean survive encode/decode. */
static void test_fuzz_typed(void)
{
	static const char alpha[] = "%~.aAfF09zG%%%2E5";
	struct buf dec = BUF_INIT, enc = BUF_INIT, again = BUF_INIT;
	char name[NAMES_MAX + 1];
	uint64_t h, h2;

	for (int iter = 0; iter < 100000; iter++) {
		size_t n = 1 + rng() % (iter % 10 ? 24 : NAMES_MAX);
		for (size_t i = 0; i < n; i++)
			name[i] = alpha[rng() % (sizeof(alpha) - 1)];
		name[n] = '\0';
		int rc = names_decode(name, &dec, &h);
		CHECK(rc == 0 || rc == NAMES_DECODED_LONG);
		if (rc != 0)
			continue;
		CHECK_INT(names_encode(dec.data, dec.len, &enc), 0);
		CHECK_INT(names_decode(enc.data, &again, &h2), 0);
		CHECK_MEM(again.data, again.len, dec.data, dec.len);
	}
	buf_release(&dec);
	buf_release(&enc);
	buf_release(&again);
}

int main(void)
{
	test_plain();
	test_specials();
	test_percent();
	test_long();
	test_fuzz();
	test_fuzz_typed();
	return check_done("test_names");
}
