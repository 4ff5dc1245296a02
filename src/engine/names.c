/*
 * names: reversible escaping between stored bytes and file names, the
 * rules of names.h. Layer: names (includes util only).
 *
 * Why decoding is unambiguous: the encoder writes '%' literally only when
 * the stored bytes after it are not two hex digits, not '~' and not the
 * end; since hex digits and '~' are never escaped, the file name then
 * shows the same non-escape after it. So every "%XX" in an encoded name is
 * an escape, and "%~" appears only in the long-name suffix.
 */
#include "engine/names.h"

#include <errno.h>

#define LONG_MARK	 "%~"
#define LONG_MARK_LEN	 2
#define LONG_HASH_DIGITS 16
#define LONG_SUFFIX_LEN	 (LONG_MARK_LEN + LONG_HASH_DIGITS)

static const char hex_upper[] = "0123456789ABCDEF";

static bool is_hex(uint8_t c)
{
	return hex_digit(c) >= 0;
}

/* Must stored byte p[i] be escaped? */
static bool needs_escape(const uint8_t *p, size_t n, size_t i)
{
	if (p[i] == '/' || p[i] == '\0')
		return true;
	if (p[i] != '%')
		return false;
	return i + 1 == n || p[i + 1] == '~' || (i + 2 < n && is_hex(p[i + 1]) && is_hex(p[i + 2]));
}

/* The escaped form of stored byte p[i], written to dst (room for 3).
 * Returns its length, 1 or 3. dst may be NULL to only measure. */
static size_t escape_unit(const uint8_t *p, size_t n, size_t i, char *dst)
{
	if (!needs_escape(p, n, i)) {
		if (dst)
			dst[0] = (char)p[i];
		return 1;
	}
	if (dst) {
		dst[0] = '%';
		dst[1] = hex_upper[p[i] >> 4];
		dst[2] = hex_upper[p[i] & 0x0f];
	}
	return 3;
}

/* Length of the full escaped form (without the "." / ".." / empty cases,
 * which are short anyway). Stops counting past `limit`. */
static size_t escaped_len(const uint8_t *p, size_t n, size_t limit)
{
	size_t len = 0;
	for (size_t i = 0; i < n && len <= limit; i++)
		len += escape_unit(p, n, i, NULL);
	return len;
}

int names_encode(const void *raw, size_t n, struct buf *out)
{
	const uint8_t *p = raw;
	const char *special = NULL;

	if (n == 0)
		special = "%";
	else if (n == 1 && p[0] == '.')
		special = "%2E";
	else if (n == 2 && p[0] == '.' && p[1] == '.')
		special = "%2E%2E";
	if (special)
		return buf_set(out, special, strlen(special));

	bool is_long = escaped_len(p, n, NAMES_MAX) > NAMES_MAX;
	size_t limit = is_long ? NAMES_LONG_PREFIX : NAMES_MAX;
	char name[NAMES_MAX + 1];
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		char unit[3];
		size_t u = escape_unit(p, n, i, unit);
		if (len + u > limit)
			break; /* only when is_long: cut at an escape boundary */
		memcpy(name + len, unit, u);
		len += u;
	}
	if (is_long) {
		uint64_t h = hash_bytes(p, n);
		memcpy(name + len, LONG_MARK, LONG_MARK_LEN);
		len += LONG_MARK_LEN;
		for (int i = LONG_HASH_DIGITS - 1; i >= 0; i--, h >>= 4)
			name[len + (size_t)i] = "0123456789abcdef"[h & 0x0f];
		len += LONG_HASH_DIGITS;
	}
	return buf_set(out, name, len);
}

/* Decode the escapes of name[0, n) into out (cleared first). */
static int unescape(const uint8_t *s, size_t n, struct buf *out)
{
	uint8_t tmp[NAMES_MAX];
	size_t len = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '%' && i + 2 < n && is_hex(s[i + 1]) && is_hex(s[i + 2])) {
			tmp[len++] = (uint8_t)(hex_digit(s[i + 1]) << 4 | hex_digit(s[i + 2]));
			i += 2;
		} else {
			tmp[len++] = s[i];
		}
	}
	return buf_set(out, tmp, len);
}

int names_decode(const char *name, struct buf *out, uint64_t *hash)
{
	const uint8_t *s = (const uint8_t *)name;
	size_t n = strnlen(name, NAMES_MAX + 1);

	if (n > NAMES_MAX)
		return -ENAMETOOLONG;
	if (n == 1 && s[0] == '%')
		return buf_set(out, "", 0); /* the empty stored name */
	if (n >= LONG_SUFFIX_LEN &&
	    memcmp(s + n - LONG_SUFFIX_LEN, LONG_MARK, LONG_MARK_LEN) == 0) {
		const uint8_t *hx = s + n - LONG_HASH_DIGITS;
		uint64_t h = 0;
		int i;
		for (i = 0; i < LONG_HASH_DIGITS && is_hex(hx[i]); i++)
			h = h << 4 | (uint64_t)hex_digit(hx[i]);
		if (i == LONG_HASH_DIGITS) {
			int rc = unescape(s, n - LONG_SUFFIX_LEN, out);
			if (rc)
				return rc;
			if (hash)
				*hash = h;
			return NAMES_DECODED_LONG;
		}
	}
	return unescape(s, n, out);
}

bool names_long_matches(const void *raw, size_t n, uint64_t hash)
{
	/* Only a name too long to show can be meant by a long reference:
	 * otherwise one stored name would answer to two file names. */
	return escaped_len(raw, n, NAMES_MAX) > NAMES_MAX && hash_bytes(raw, n) == hash;
}
