/*
 * t_json_cbor: CBOR (RFC 8949), the format of Kvrocks's
 * json-storage-format cbor, to compact JSON text (json_cbor_to_text,
 * t_json.h). Pure: no cJSON, no store. Part of the JSON module
 * (t_json_int.h). Layer: types.
 */
#include "types/t_json.h"
#include "types/t_json_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JSON_MAX_DEPTH 1000 /* CBOR nesting, as cJSON's CJSON_NESTING_LIMIT */
/* A CBOR bignum's magnitude, in bytes: 2^1024 and beyond is past any
 * double and past the 63 digits of a JSON number (t_json.c), and the decimal conversion is
 * quadratic in the length (encoding.md section 20). */
#define JSON_CBOR_BIGNUM_MAX 128

struct cbor {
	const unsigned char *p, *end;
	struct buf *out;
	int depth;
};

/* The argument of an item head: *v, or -EUCLEAN. ai 31 (indefinite)
 * gives *indef. */
static int cbor_arg(struct cbor *c, unsigned ai, uint64_t *v, bool *indef)
{
	*indef = false;
	if (ai < 24) {
		*v = ai;
		return 0;
	}
	if (ai == 31) {
		*indef = true;
		return 0;
	}
	if (ai > 27)
		return -EUCLEAN;
	size_t n = (size_t)1 << (ai - 24);
	if ((size_t)(c->end - c->p) < n)
		return -EUCLEAN;
	*v = 0;
	for (size_t i = 0; i < n; i++)
		*v = (*v << 8) | *c->p++;
	return 0;
}

static int json_add_string(struct buf *out, const unsigned char *s, size_t n)
{
	int rc = buf_add(out, "\"", 1);
	for (size_t i = 0; i < n && !rc; i++) {
		unsigned char b = s[i];
		if (b == '"' || b == '\\')
			rc = buf_printf(out, "\\%c", b);
		else if (b == '\n')
			rc = buf_add(out, "\\n", 2);
		else if (b == '\t')
			rc = buf_add(out, "\\t", 2);
		else if (b == '\r')
			rc = buf_add(out, "\\r", 2);
		else if (b < 0x20)
			rc = buf_printf(out, "\\u%04x", b);
		else
			rc = buf_add(out, &b, 1);
	}
	return rc ? rc : buf_add(out, "\"", 1);
}

/* Bytes (or text) of a string item, indefinite chunks joined. */
static int cbor_bytes(struct cbor *c, unsigned major, unsigned ai, struct buf *s)
{
	uint64_t len;
	bool indef;
	int rc = cbor_arg(c, ai, &len, &indef);
	if (rc)
		return rc;
	if (!indef) {
		if ((uint64_t)(c->end - c->p) < len)
			return -EUCLEAN;
		rc = buf_add(s, c->p, (size_t)len);
		c->p += len;
		return rc;
	}
	for (;;) {
		if (c->p >= c->end)
			return -EUCLEAN;
		unsigned char h = *c->p++;
		if (h == 0xFF)
			return 0;
		if (h >> 5 != major || (h & 31) == 31)
			return -EUCLEAN;
		if ((rc = cbor_bytes(c, major, h & 31, s)))
			return rc;
	}
}

/* Bytes as base64url without padding (jsoncons's default for byte
 * strings), base64 (tag 22) or base16 (tag 23). */
static int bytes_text(struct buf *out, const unsigned char *s, size_t n, uint64_t tag)
{
	static const char url[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
	static const char std[] =
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	const char *abc = tag == 22 ? std : url;
	int rc = buf_add(out, "\"", 1);
	if (tag == 23) {
		for (size_t i = 0; i < n && !rc; i++)
			rc = buf_printf(out, "%02x", s[i]);
		return rc ? rc : buf_add(out, "\"", 1);
	}
	for (size_t i = 0; i < n && !rc; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16;
		size_t k = n - i < 3 ? n - i : 3;
		if (k > 1)
			v |= (uint32_t)s[i + 1] << 8;
		if (k > 2)
			v |= s[i + 2];
		char q[4] = {abc[v >> 18], abc[(v >> 12) & 63], abc[(v >> 6) & 63], abc[v & 63]};
		rc = buf_add(out, q, k + 1);
		if (!rc && tag == 22 && k < 3)
			rc = buf_add(out, "==", 3 - k);
	}
	return rc ? rc : buf_add(out, "\"", 1);
}

/* A big-endian unsigned magnitude (plus one, for negative bignums) in
 * decimal. */
static int bignum_text(struct buf *out, const unsigned char *s, size_t n, bool negative)
{
	if (n > JSON_CBOR_BIGNUM_MAX)
		return -EUCLEAN;
	struct buf digits = BUF_INIT;
	unsigned char *v = malloc(n + 1);
	int rc = 0;
	if (!v)
		return -ENOMEM;
	v[0] = 0;
	if (n) /* an empty magnitude may come with no bytes at all (s NULL) */
		memcpy(v + 1, s, n);
	n++;
	if (negative) /* -1 - m: print m + 1 */
		for (size_t i = n; i-- > 0;)
			if (++v[i] != 0)
				break;
	for (;;) {
		bool zero = true;
		unsigned rem = 0;
		for (size_t i = 0; i < n; i++) {
			unsigned cur = rem * 256 + v[i];
			v[i] = (unsigned char)(cur / 10);
			rem = cur % 10;
			zero = zero && v[i] == 0;
		}
		char d = (char)('0' + rem);
		if ((rc = buf_add(&digits, &d, 1)) || zero)
			break;
	}
	if (!rc && negative)
		rc = buf_add(out, "-", 1);
	for (size_t i = digits.len; !rc && i-- > 0;)
		rc = buf_add(out, digits.data + i, 1);
	free(v);
	buf_release(&digits);
	return rc;
}

static double half_to_double(unsigned h)
{
	unsigned e = (h >> 10) & 31, m = h & 1023;
	double d = e == 0    ? ldexp(m, -24)
		   : e == 31 ? (m ? NAN : INFINITY)
			     : ldexp(m + 1024, e - 25);
	return h & 0x8000 ? -d : d;
}

static int cbor_item(struct cbor *c);

/* A map key: a text string, or an integer written as its decimal text. */
static int cbor_key(struct cbor *c)
{
	if (c->p >= c->end)
		return -EUCLEAN;
	unsigned major = *c->p >> 5;
	if (major == 3)
		return cbor_item(c);
	if (major > 1)
		return -EUCLEAN;
	int rc = buf_add(c->out, "\"", 1);
	if (!rc)
		rc = cbor_item(c);
	return rc ? rc : buf_add(c->out, "\"", 1);
}

static int cbor_container(struct cbor *c, bool map, unsigned ai)
{
	uint64_t n;
	bool indef;
	int rc = cbor_arg(c, ai, &n, &indef);
	if (!rc)
		rc = buf_add(c->out, map ? "{" : "[", 1);
	for (uint64_t i = 0; !rc; i++) {
		if (indef ? c->p < c->end && *c->p == 0xFF : i == n) {
			c->p += indef;
			break;
		}
		if (i && (rc = buf_add(c->out, ",", 1)))
			break;
		if (map && !(rc = cbor_key(c)))
			rc = buf_add(c->out, ":", 1);
		if (!rc)
			rc = cbor_item(c);
	}
	return rc ? rc : buf_add(c->out, map ? "}" : "]", 1);
}

static int cbor_item(struct cbor *c)
{
	struct buf s = BUF_INIT;
	char num[40];
	uint64_t v = 0, tag = 0;
	bool indef;
	int rc;
	if (c->p >= c->end || ++c->depth > JSON_MAX_DEPTH)
		return -EUCLEAN;
	unsigned char h = *c->p++;
	unsigned major = h >> 5, ai = h & 31;
	switch (major) {
	case 0:
	case 1:
		rc = cbor_arg(c, ai, &v, &indef);
		if (!rc && indef)
			rc = -EUCLEAN;
		if (!rc && major == 0)
			rc = buf_printf(c->out, "%llu", (unsigned long long)v);
		else if (!rc && v == UINT64_MAX)
			rc = buf_add(c->out, "-18446744073709551616", 21);
		else if (!rc)
			rc = buf_printf(c->out, "-%llu", (unsigned long long)v + 1);
		break;
	case 2:
		rc = cbor_bytes(c, 2, ai, &s);
		if (!rc)
			rc = bytes_text(c->out, (unsigned char *)s.data, s.len, 21);
		break;
	case 3:
		rc = cbor_bytes(c, 3, ai, &s);
		if (!rc)
			rc = json_add_string(c->out, (unsigned char *)s.data, s.len);
		break;
	case 4:
	case 5:
		rc = cbor_container(c, major == 5, ai);
		break;
	case 6:
		rc = cbor_arg(c, ai, &tag, &indef);
		if (!rc && indef)
			rc = -EUCLEAN;
		if (rc)
			break;
		if ((tag == 2 || tag == 3) && c->p < c->end && *c->p >> 5 == 2) {
			unsigned char bh = *c->p++;
			rc = cbor_bytes(c, 2, bh & 31, &s);
			if (!rc)
				rc = bignum_text(c->out, (unsigned char *)s.data, s.len, tag == 3);
		} else if ((tag == 21 || tag == 22 || tag == 23) && c->p < c->end &&
			   *c->p >> 5 == 2) {
			unsigned char bh = *c->p++;
			rc = cbor_bytes(c, 2, bh & 31, &s);
			if (!rc)
				rc = bytes_text(c->out, (unsigned char *)s.data, s.len, tag);
		} else if (tag == 4 && c->end - c->p >= 3 && *c->p == 0x82 && c->p[1] >> 5 <= 1) {
			/* A decimal fraction [exponent, mantissa]: mantissa "e" exponent. */
			struct buf e = BUF_INIT, *out = c->out;
			c->p++;
			c->out = &e;
			rc = cbor_item(c);
			c->out = out;
			if (!rc)
				rc = cbor_item(c);
			if (!rc)
				rc = buf_printf(out, "e%s", e.data);
			buf_release(&e);
		} else {
			rc = cbor_item(c); /* other tags: the value they tag */
		}
		break;
	default: /* 7 */
		if (ai == 20 || ai == 21) {
			rc = buf_add(c->out, ai == 21 ? "true" : "false", ai == 21 ? 4 : 5);
		} else if (ai < 24 || ai == 24) {
			if (ai == 24 && c->p++ >= c->end)
				return -EUCLEAN;
			rc = buf_add(c->out, "null", 4); /* null, undefined, other simples */
		} else if (ai >= 25 && ai <= 27) {
			if ((rc = cbor_arg(c, ai, &v, &indef)))
				break;
			double d;
			if (ai == 25) {
				d = half_to_double((unsigned)v);
			} else if (ai == 26) {
				uint32_t u = (uint32_t)v;
				float f;
				memcpy(&f, &u, 4);
				d = f;
			} else {
				memcpy(&d, &v, 8);
			}
			json_fmt_double(d, num);
			rc = buf_add(c->out, num, strlen(num));
		} else {
			rc = -EUCLEAN; /* a break outside an indefinite item, or reserved */
		}
		break;
	}
	c->depth--;
	buf_release(&s);
	return rc;
}

int json_cbor_to_text(const void *cbor, size_t n, struct buf *out)
{
	struct cbor c = {cbor, (const unsigned char *)cbor + n, out, 0};
	size_t start = out->len;
	int rc = cbor_item(&c);
	if (!rc && c.p != c.end)
		rc = -EUCLEAN; /* trailing bytes */
	if (rc)
		buf_resize(out, start);
	return rc;
}
