/*
 * t_string: the Redis string type. The value lives in the key's metadata
 * record (kvrocks-encoding.md 6.1): flags | expire | value bytes, no
 * version, no size, no sub-keys. Layer: types.
 *
 * Mutations are write transactions (ks_txn.h): the key's lock from the
 * metadata read to the write. SET writes a fresh v1 record (as Kvrocks's
 * SET does); APPEND and SETRANGE keep the stored header, so its expiry
 * and v0/v1 encoding stay as they were (as Kvrocks keeps it), and so do
 * the counters (INCRBY, INCRBYFLOAT: redis_string.cc's IncrBy and
 * IncrByFloat, their value stored as std::to_string writes it).
 */
#include "types/t_string.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

/* n more bytes at offset off would make a value longer than STRING_MAX. */
static bool string_too_big(uint64_t off, uint64_t n)
{
	return off > STRING_MAX || n > STRING_MAX - off;
}

/* Copy bytes [off, off + n) of a live string's value (clipped to it) into
 * out, straight from RocksDB's pinned record: only those bytes are
 * copied. -ENOENT, -KV_EWRONGTYPE. */
static int string_copy(struct keyspace *ks, const struct ks_key *k, uint64_t off, size_t n,
		       struct buf *out)
{
	struct store_value *v;
	struct enc_meta m;
	buf_reset(out);
	int rc = ks_meta_pin(ks, k, KV_TYPE_STRING, &v, &m);
	if (rc)
		return rc;
	if (off < m.tail_len) {
		size_t avail = m.tail_len - (size_t)off;
		rc = buf_set(out, m.tail + off, n < avail ? n : avail);
	}
	store_value_free(v);
	return rc;
}

/* The whole value of a live string. */
static int string_load(struct keyspace *ks, const struct ks_key *k, struct buf *out)
{
	return string_copy(ks, k, 0, SIZE_MAX, out);
}

int string_get(struct keyspace *ks, const struct ks_key *k, struct buf *out)
{
	return string_load(ks, k, out);
}

/* A pin is the store's pinned record; the value is its tail. */
int string_pin(struct keyspace *ks, const struct ks_key *k, struct string_pin **pin,
	       const char **data, size_t *n)
{
	struct store_value *v;
	struct enc_meta m;
	int rc = ks_meta_pin(ks, k, KV_TYPE_STRING, &v, &m);
	*pin = NULL;
	if (rc)
		return rc;
	*pin = (struct string_pin *)v;
	*data = (const char *)m.tail;
	*n = m.tail_len;
	return 0;
}

void string_unpin(struct string_pin *pin)
{
	store_value_free((struct store_value *)pin);
}

int string_set(struct keyspace *ks, const struct ks_key *k, const void *v, size_t n, unsigned flags)
{
	struct ks_txn t;
	struct enc_meta *m;
	uint64_t vlen, expire = 0;

	if (string_too_big(0, n))
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	/* Only the header of the old record matters: never copy its value. */
	int rc = ks_txn_head(&t, k, KV_TYPE_NONE, &m, &vlen);
	/* SET replaces a key of any type, even a corrupt record. */
	bool exists = rc == 0 || rc == -EUCLEAN;
	if (rc && !exists && rc != -ENOENT)
		return ks_txn_end(&t, rc);
	if ((flags & STRING_SET_NX) && exists)
		return ks_txn_end(&t, -EEXIST);
	if ((flags & STRING_SET_XX) && !exists)
		return ks_txn_end(&t, -ENOENT);
	if ((flags & STRING_SET_KEEPTTL) && rc == 0)
		expire = m->expire_ms;
	rc = ks_txn_renew(&t, k, KV_TYPE_STRING, &m);
	if (!rc) {
		m->expire_ms = expire;
		ks_txn_meta_put(&t, k, v, n);
		rc = ks_txn_commit(&t);
	}
	return ks_txn_end(&t, rc);
}

/*
 * The body of APPEND and SETRANGE: write v at offset `off` (for APPEND,
 * the current length), zero-filling any gap. The stored header (its
 * expiry, its v0/v1 encoding) is kept.
 */
static int string_write_at(struct keyspace *ks, const struct ks_key *k, bool append, uint64_t off,
			   const void *v, size_t n, uint64_t *newlen)
{
	struct buf val = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_STRING, &m);
	if (rc)
		return ks_txn_end(&t, rc);
	bool fresh = ks_txn_is_new(&t, k);
	uint64_t len = m->tail_len;
	if (append)
		off = len;
	/* Redis: SETRANGE with an empty value does not create the key. */
	if (n == 0 && (!fresh || !append)) {
		*newlen = len;
		return ks_txn_end(&t, 0);
	}
	if (string_too_big(off, n))
		return ks_txn_end(&t, -EFBIG);
	uint64_t end = off + n > len ? off + n : len;
	rc = buf_set(&val, m->tail, (size_t)len);
	if (!rc)
		rc = buf_resize(&val, (size_t)end);
	if (!rc) {
		if (n)
			memcpy(val.data + off, v, n);
		ks_txn_meta_put(&t, k, val.data, val.len);
		rc = ks_txn_commit(&t);
	}
	if (!rc)
		*newlen = end;
	buf_release(&val);
	return ks_txn_end(&t, rc);
}

int string_append(struct keyspace *ks, const struct ks_key *k, const void *v, size_t n,
		  uint64_t *newlen)
{
	return string_write_at(ks, k, true, 0, v, n, newlen);
}

int string_setrange(struct keyspace *ks, const struct ks_key *k, uint64_t off, const void *v,
		    size_t n, uint64_t *newlen)
{
	return string_write_at(ks, k, false, off, v, n, newlen);
}

/* Keep bytes [start, start + n) of out. */
static int buf_slice(struct buf *out, size_t start, size_t n)
{
	if (n)
		memmove(out->data, out->data + start, n);
	return buf_resize(out, n);
}

bool string_range_clamp(int64_t start, int64_t end, uint64_t len, uint64_t *lo, uint64_t *hi)
{
	uint64_t last;
	if (start < 0 && end < 0 && start > end)
		return false;
	if (len <= INT64_MAX && end < -(int64_t)len)
		end = -(int64_t)len; /* byte 0, where rank_range_clamp would give none */
	if (!rank_range_clamp(start, end, len, lo, &last))
		return false;
	*hi = last + 1;
	return true;
}

int string_getrange(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t end,
		    struct buf *out)
{
	uint64_t lo, hi;
	int rc = string_load(ks, k, out);
	if (rc == -ENOENT)
		return 0; /* Redis: "" */
	if (rc)
		return rc;
	if (!string_range_clamp(start, end, out->len, &lo, &hi))
		return buf_slice(out, 0, 0);
	return buf_slice(out, (size_t)lo, (size_t)(hi - lo));
}

int string_read(struct keyspace *ks, const struct ks_key *k, uint64_t off, size_t n,
		struct buf *out)
{
	return string_copy(ks, k, off, n, out);
}

int string_strlen(struct keyspace *ks, const struct ks_key *k, uint64_t *len)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	uint64_t vlen;
	int rc = ks_meta_head(ks, k, KV_TYPE_STRING, &raw, &m, &vlen);
	if (rc == 0)
		*len = vlen - (uint64_t)((const char *)m.tail - raw.data);
	else if (rc == -ENOENT) {
		*len = 0;
		rc = 0;
	}
	buf_release(&raw);
	return rc;
}

int string_del(struct keyspace *ks, const struct ks_key *k)
{
	struct ks_txn t;
	struct enc_meta *m;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_STRING, &m);
	if (!rc) {
		ks_txn_delete(&t, k, 0);
		rc = ks_txn_commit(&t);
	}
	return ks_txn_end(&t, rc);
}

/* ---- Counters --------------------------------------------------------------- */

/* s as a C string for strtoll / strtod: in small, or malloc'd (*big, to
 * free) for a long value. NULL on ENOMEM. */
static const char *num_cstr(const char *s, size_t n, char small[64], char **big)
{
	char *d = small;
	*big = NULL;
	if (n >= 64 && !(d = *big = malloc(n + 1)))
		return NULL;
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

static bool num_is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r'); /* C's isspace */
}

/* strtoll or strtod (fl) over the whole of s, as Kvrocks's ParseInt and
 * ParseFloat read it. */
static int num_parse(const char *s, size_t n, unsigned flags, bool fl, int64_t *i, double *d)
{
	char small[64], *big, *end;
	long long iv = 0;
	double dv = 0;
	if ((flags & STRING_NUM_VALUE) && n > 0 && num_is_space(s[0]))
		return -EINVAL;
	const char *c = num_cstr(s, n, small, &big);
	if (!c)
		return -ENOMEM;
	errno = 0;
	if (fl)
		dv = strtod(c, &end);
	else
		iv = strtoll(c, &end, 10);
	int rc = end == c || errno || end != c + n ? -EINVAL : 0;
	/* Kvrocks lets a NaN argument through to its "would produce NaN"
	 * answer; Redis refuses it as no float. kvfs: not a number. */
	if (!rc && fl && !(flags & STRING_NUM_VALUE) && isnan(dv))
		rc = -EINVAL;
	free(big);
	if (!rc && fl)
		*d = dv;
	else if (!rc)
		*i = iv;
	return rc;
}

int string_num_int(const char *s, size_t n, unsigned flags, int64_t *out)
{
	return num_parse(s, n, flags, false, out, NULL);
}

int string_num_float(const char *s, size_t n, unsigned flags, double *out)
{
	return num_parse(s, n, flags, true, NULL, out);
}

int string_num_fmt_float(double d, struct buf *out)
{
	buf_reset(out);
	return buf_printf(out, "%f", d);
}

int string_num_incr(const char *v, size_t vn, bool fl, int64_t by, double byf, struct buf *text,
		    int64_t *n, double *f)
{
	int64_t i = 0;
	double d = 0;
	int rc = 0;
	if (fl && isnan(byf))
		return -EINVAL;
	if (v)
		rc = num_parse(v, vn, STRING_NUM_VALUE, fl, &i, &d);
	buf_reset(text);
	if (!rc && !fl) {
		if ((by < 0 && i < 0 && by < INT64_MIN - i) ||
		    (by > 0 && i > 0 && by > INT64_MAX - i))
			return -ERANGE;
		i += by;
		rc = buf_printf(text, "%" PRId64, i);
	} else if (!rc) {
		d += byf;
		rc = isinf(d) || isnan(d) ? -ERANGE : string_num_fmt_float(d, text);
		if (!rc) /* the value as stored, which the next increment reads */
			rc = string_num_float(text->data, text->len, STRING_NUM_VALUE, &d);
	}
	if (!rc && n)
		*n = i;
	if (!rc && f)
		*f = d;
	return rc;
}

/* The body of INCRBY and INCRBYFLOAT: one transaction on k. */
static int string_incr(struct keyspace *ks, const struct ks_key *k, bool fl, int64_t by, double byf,
		       int64_t *out, double *outf)
{
	struct buf text = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;

	ks_txn_begin(&t, ks, k);
	/* Open, not renew: the stored header (expiry, encoding) stays. */
	int rc = ks_txn_open(&t, k, KV_TYPE_STRING, &m);
	/* An empty value counts as 0, as a missing key. */
	if (!rc)
		rc = string_num_incr(m->tail_len ? (const char *)m->tail : NULL, m->tail_len, fl,
				     by, byf, &text, out, outf);
	if (!rc) {
		ks_txn_meta_put(&t, k, text.data, text.len);
		rc = ks_txn_commit(&t);
	}
	buf_release(&text);
	return ks_txn_end(&t, rc);
}

int string_incrby(struct keyspace *ks, const struct ks_key *k, int64_t by, int64_t *out)
{
	return string_incr(ks, k, false, by, 0, out, NULL);
}

int string_incrbyfloat(struct keyspace *ks, const struct ks_key *k, double by, double *out)
{
	return string_incr(ks, k, true, 0, by, NULL, out);
}
