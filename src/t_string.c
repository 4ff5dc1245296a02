/*
 * t_string: the Redis string type. The value lives in the key's metadata
 * record (kvrocks-encoding.md 6.1): flags | expire | value bytes, no
 * version, no size, no sub-keys. Layer: types.
 *
 * Mutations hold the key's lock from the metadata read to the write. SET
 * writes a fresh v1 record (as Kvrocks's SET does); APPEND and SETRANGE
 * edit the stored record in place, so its flags, expiry and v0/v1
 * encoding stay as they were (as Kvrocks keeps the stored header).
 */
#include "t_string.h"

#include "store.h"

#include <errno.h>
#include <stdint.h>

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
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta m, nm;
	bool exists, decoded;
	uint64_t oldlen;
	int rc;

	if (string_too_big(0, n))
		return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	/* Only the header of the old record matters: never copy its value. */
	rc = ks_meta_head(ks, k, KV_TYPE_NONE, &raw, &m, &oldlen);
	/* SET replaces a key of any type, even a corrupt record. */
	decoded = rc == 0;
	exists = decoded || rc == -EUCLEAN;
	if (rc && !exists && rc != -ENOENT)
		goto out;
	rc = 0;
	if ((flags & STRING_SET_NX) && exists) {
		rc = -EEXIST;
		goto out;
	}
	if ((flags & STRING_SET_XX) && !exists) {
		rc = -ENOENT;
		goto out;
	}
	ks_meta_new(ks, &nm, KV_TYPE_STRING);
	if ((flags & STRING_SET_KEEPTTL) && decoded)
		nm.expire_ms = m.expire_ms;
	rc = ks_batch_put_meta(ks, b, k, &nm, v, n);
	/* A missing key may be remembered as an empty collection. */
	if (!rc && !exists)
		rc = ks_batch_empty_del(ks, b, k);
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

/*
 * The body of APPEND and SETRANGE: write v at offset `off` (for APPEND,
 * the current length), zero-filling any gap. An existing record is edited
 * as raw bytes so its header is kept exactly.
 */
static int string_write_at(struct keyspace *ks, const struct ks_key *k, bool append, uint64_t off,
			   const void *v, size_t n, uint64_t *newlen)
{
	struct buf raw = BUF_INIT, key = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta m;
	int rc;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_STRING, &raw, &m);
	if (rc == -ENOENT) {
		/* Redis: SETRANGE with an empty value does not create the key. */
		if (!append && n == 0) {
			*newlen = 0;
			rc = 0;
			goto out;
		}
		if (string_too_big(off, n)) {
			rc = -EFBIG;
			goto out;
		}
		ks_meta_new(ks, &m, KV_TYPE_STRING);
		buf_reset(&raw);
		if (!(rc = enc_meta_encode(&raw, &m)))
			rc = buf_resize(&raw, raw.len + (size_t)off);
		if (!rc)
			rc = buf_add(&raw, v, n);
		if (!rc)
			rc = ks_batch_empty_del(ks, b, k);
		if (!rc)
			*newlen = off + n;
	} else if (rc == 0) {
		size_t hdr = (size_t)((const char *)m.tail - raw.data);
		uint64_t len = m.tail_len;
		if (append)
			off = len;
		if (n == 0) {
			*newlen = len;
			goto out;
		}
		if (string_too_big(off, n)) {
			rc = -EFBIG;
			goto out;
		}
		uint64_t end = off + n > len ? off + n : len;
		rc = buf_resize(&raw, hdr + (size_t)end);
		if (!rc) {
			memcpy(raw.data + hdr + off, v, n);
			*newlen = end;
		}
	}
	if (!rc)
		rc = ks_meta_key(ks, k, &key);
	if (!rc) {
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, raw.data, raw.len);
		rc = ks_write(ks, b);
	}
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&key);
	return rc;
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

int string_getrange(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t end,
		    struct buf *out)
{
	int rc = string_load(ks, k, out);
	if (rc == -ENOENT)
		return 0; /* Redis: "" */
	if (rc)
		return rc;
	/* Redis's getrangeCommand, step by step. */
	int64_t len = (int64_t)out->len;
	if (start < 0 && end < 0 && start > end)
		return buf_slice(out, 0, 0);
	if (start < 0)
		start = len + start;
	if (end < 0)
		end = len + end;
	if (start < 0)
		start = 0;
	if (end < 0)
		end = 0;
	if (end >= len)
		end = len - 1;
	if (len == 0 || start > end)
		return buf_slice(out, 0, 0);
	return buf_slice(out, (size_t)start, (size_t)(end - start + 1));
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
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta m;
	int rc;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_STRING, &raw, &m);
	if (!rc)
		rc = ks_batch_del_meta(ks, b, k);
	if (!rc)
		rc = ks_write(ks, b);
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}
