/*
 * encoding: the Kvrocks byte layout as pure functions (no I/O): metadata
 * values, namespace keys, sub-keys, sortable doubles, cluster slots.
 * Layer: encoding (includes util only). Source of truth for every byte:
 * kvrocks-encoding.md sections 2, 4, 5 and 12.
 *
 * All integers are big-endian.
 *
 * Metadata value, v1 (flags bit 7 set; what kvfs writes):
 *
 *   off  len  field
 *   0    1    flags: bit 7 = 1 (v1), bits 4-6 = 0, bits 0-3 = type 1..13
 *   1    8    expire: absolute Unix ms, 0 = none
 *   9    8    version          } absent for string (1) and json (10),
 *   17   8    size             } whose value follows at offset 9
 *   25   ...  type-specific tail (list head/tail, stream ids, ...)
 *
 * Metadata value, v0 (flags bit 7 clear; read, and written only when a
 * caller keeps an old key's encoding):
 *
 *   off  len  field
 *   0    1    flags: bit 7 = 0, bits 4-6 = 0, bits 0-3 = type
 *   1    4    expire: absolute Unix seconds, 0 = none. Written from ms as
 *             0 -> 0, 1..999 -> 1, else (ms + 499) / 1000; read as s * 1000
 *   5    8    version          } absent for string and json,
 *   13   4    size             } whose value follows at offset 5
 *   17   ...  type-specific tail
 *
 * Metadata-CF key ("ns key"):
 *
 *   ns_len u8 (1..255) | ns | [slot u16, cluster mode only] | user key
 *
 * Sub-key (default, zset_score and stream CFs):
 *
 *   ns_len u8 | ns | [slot u16, cluster only] | key_len u32 | user key |
 *   version u64 | sub-key bytes (to the end, no length)
 *
 * The slot is CRC16-XMODEM(tag) & 0x3fff, where the tag is the bytes
 * between the first '{' and the first '}' after it when that is non-empty,
 * else the whole user key (Redis Cluster's rule).
 *
 * Sortable double: IEEE bits as u64; negative -> all bits inverted,
 * otherwise sign bit set; stored big-endian, so byte order == numeric order.
 */
#include "engine/encoding.h"

#include <errno.h>

/*
 * The types: one row each, all the byte layout needs to know of a type
 * besides its own sub-keys. A type missing here has no name and is
 * neither inline nor emptyable.
 */
static const struct {
	const char *name; /* TYPE's answer, user.kvfs.type, empty records */
	bool is_inline;	  /* the value is in the metadata record */
	bool emptyable;	  /* a live key may have size 0 */
} types[KV_TYPE_MAX + 1] = {
    [KV_TYPE_NONE] = {.name = "none"},
    [KV_TYPE_STRING] = {.name = "string", .is_inline = true},
    [KV_TYPE_HASH] = {.name = "hash"},
    [KV_TYPE_LIST] = {.name = "list"},
    [KV_TYPE_SET] = {.name = "set"},
    [KV_TYPE_ZSET] = {.name = "zset"},
    [KV_TYPE_BITMAP] = {.name = "bitmap"},
    [KV_TYPE_SORTEDINT] = {.name = "sortedint"},
    [KV_TYPE_STREAM] = {.name = "stream", .emptyable = true},
    [KV_TYPE_BLOOM] = {.name = "bloom", .emptyable = true},
    [KV_TYPE_JSON] = {.name = "json", .is_inline = true},
    [KV_TYPE_HLL] = {.name = "hyperloglog", .emptyable = true},
    [KV_TYPE_TDIGEST] = {.name = "tdigest", .emptyable = true},
    [KV_TYPE_TIMESERIES] = {.name = "timeseries", .emptyable = true},
    [KV_TYPE_TOPK] = {.name = "topk", .emptyable = true},
};

#define ENC_FLAG_RESERVED 0x70 /* flags bits 4-6: must be zero */

static bool type_is_valid(enum kv_type t)
{
	return t >= KV_TYPE_STRING && t <= KV_TYPE_MAX;
}

const char *enc_type_name(enum kv_type t)
{
	if ((unsigned)t > KV_TYPE_MAX)
		return types[KV_TYPE_NONE].name;
	return types[t].name;
}

enum kv_type enc_type_from_name(const char *name, size_t n)
{
	for (int t = KV_TYPE_STRING; t <= KV_TYPE_MAX; t++) {
		const char *s = types[t].name;
		if (strlen(s) == n && memcmp(s, name, n) == 0)
			return (enum kv_type)t;
	}
	return KV_TYPE_NONE;
}

bool enc_type_is_inline(enum kv_type t)
{
	return type_is_valid(t) && types[t].is_inline;
}

bool enc_type_is_emptyable(enum kv_type t)
{
	return type_is_valid(t) && types[t].emptyable;
}

/* ---- Metadata values ---------------------------------------------- */

/* Kvrocks's ms -> s conversion for v0 expire (rounds, never turns a
 * set expiry into "none"). Written without (ms + 499) to avoid overflow;
 * (ms + 499) / 1000 rounds x.500 down, hence "> 500". */
static uint64_t expire_ms_to_s(uint64_t ms)
{
	if (ms == 0)
		return 0;
	if (ms < 1000)
		return 1;
	return ms / 1000 + (ms % 1000 > 500);
}

/* The header length of the record p/n, or 0 with *why saying what is
 * wrong with it. */
static size_t meta_header_len(const uint8_t *p, size_t n, const char **why)
{
	if (n < 1) {
		*why = "an empty record";
		return 0;
	}
	enum kv_type t = (enum kv_type)(p[0] & ENC_FLAG_TYPE_MASK);
	if (p[0] & ENC_FLAG_RESERVED) {
		*why = "reserved flag bits set";
		return 0;
	}
	if (!type_is_valid(t)) {
		*why = "an unknown type id";
		return 0;
	}
	bool v1 = p[0] & ENC_FLAG_64BIT;
	size_t hdr = 1 + (v1 ? 8 : 4);
	if (!enc_type_is_inline(t))
		hdr += 8 + (v1 ? 8 : 4);
	if (n < hdr) {
		*why = "shorter than its header";
		return 0;
	}
	if (!enc_type_is_inline(t)) {
		uint64_t size = v1 ? get_be64(p + hdr - 8) : get_be32(p + hdr - 4);
		if (size > ENC_SIZE_MAX) {
			*why = "a size of 2^63 or more";
			return 0;
		}
		/* A bitmap's size is its length in bytes, which a u32 bit
		 * offset keeps at 512 MiB: more would show a file that
		 * cat reads for ever. */
		if (t == KV_TYPE_BITMAP && size > ENC_BITMAP_MAX_BYTES) {
			*why = "a bitmap size over 512 MiB";
			return 0;
		}
	}
	*why = "";
	return hdr;
}

enum kv_type enc_flags_type(uint8_t flags)
{
	enum kv_type t = (enum kv_type)(flags & ENC_FLAG_TYPE_MASK);
	return (flags & ENC_FLAG_RESERVED) || !type_is_valid(t) ? KV_TYPE_NONE : t;
}

const char *enc_meta_why(const void *val, size_t n)
{
	const char *why;
	meta_header_len(val, n, &why);
	return why;
}

int enc_meta_decode(const void *val, size_t n, struct enc_meta *m)
{
	const uint8_t *p = val;
	const char *why;
	size_t hdr = meta_header_len(p, n, &why);
	if (!hdr)
		return -EUCLEAN;
	uint8_t flags = p[0];
	enum kv_type t = (enum kv_type)(flags & ENC_FLAG_TYPE_MASK);
	bool v1 = flags & ENC_FLAG_64BIT;
	size_t exp_len = v1 ? 8 : 4;

	m->type = t;
	m->v1 = v1;
	m->flags = flags;
	m->expire_ms = v1 ? get_be64(p + 1) : (uint64_t)get_be32(p + 1) * 1000;
	m->version = 0;
	m->size = 0;
	if (!enc_type_is_inline(t)) {
		m->version = get_be64(p + 1 + exp_len);
		m->size = v1 ? get_be64(p + 1 + exp_len + 8) : get_be32(p + 1 + exp_len + 8);
	}
	m->tail = p + hdr;
	m->tail_len = n - hdr;
	return 0;
}

int enc_meta_encode(struct buf *out, const struct enc_meta *m)
{
	if (!type_is_valid(m->type))
		return -EINVAL;
	bool is_inline = enc_type_is_inline(m->type);
	/* The flags byte is rebuilt rather than copied from m->flags so that
	 * reserved bits can never reach the disk. */
	uint8_t flags = (uint8_t)((m->v1 ? ENC_FLAG_64BIT : 0) | m->type);
	uint8_t hdr[ENC_META_V1_HEADER];
	size_t n = 0;

	hdr[n++] = flags;
	if (m->v1) {
		put_be64(hdr + n, m->expire_ms);
		n += 8;
	} else {
		uint64_t s = expire_ms_to_s(m->expire_ms);
		if (s > UINT32_MAX || (!is_inline && m->size > UINT32_MAX))
			return -EOVERFLOW;
		put_be32(hdr + n, (uint32_t)s);
		n += 4;
	}
	if (!is_inline) {
		put_be64(hdr + n, m->version);
		n += 8;
		if (m->v1) {
			put_be64(hdr + n, m->size);
			n += 8;
		} else {
			put_be32(hdr + n, (uint32_t)m->size);
			n += 4;
		}
	}
	return buf_add(out, hdr, n);
}

bool enc_meta_is_expired(const struct enc_meta *m, uint64_t now)
{
	if (m->expire_ms != 0 && m->expire_ms < now)
		return true;
	return !enc_type_is_inline(m->type) && !enc_type_is_emptyable(m->type) && m->size == 0;
}

/* ---- Keys ---------------------------------------------------------- */

/* Writes ns_len | ns | [slot] into out, which is cleared first. */
static int key_prefix(struct buf *out, const void *ns, size_t nslen, const void *key, size_t klen,
		      bool cluster)
{
	uint8_t hdr[1 + ENC_MAX_NS + 2];
	size_t n = 0;

	hdr[n++] = (uint8_t)nslen;
	memcpy(hdr + n, ns, nslen);
	n += nslen;
	if (cluster) {
		put_be16(hdr + n, enc_slot(key, klen));
		n += 2;
	}
	buf_reset(out);
	return buf_add(out, hdr, n);
}

int enc_ns_key(struct buf *out, const void *ns, size_t nslen, const void *key, size_t klen,
	       bool cluster)
{
	if (!ns || nslen < 1 || nslen > ENC_MAX_NS || (klen && !key))
		return -EINVAL;
	int rc = key_prefix(out, ns, nslen, key, klen, cluster);
	if (!rc)
		rc = buf_add(out, key, klen);
	return rc;
}

/* Parse ns_len | ns | [slot]; returns the offset after it, or 0 if raw is
 * too short or the namespace length is 0 (never written by Kvrocks). */
static size_t key_prefix_decode(const uint8_t *p, size_t n, bool cluster, const uint8_t **ns,
				size_t *nslen)
{
	if (n < 1 || p[0] == 0)
		return 0;
	size_t off = 1 + (size_t)p[0] + (cluster ? 2 : 0);
	if (n < off)
		return 0;
	if (ns)
		*ns = p + 1;
	if (nslen)
		*nslen = p[0];
	return off;
}

int enc_ns_key_decode(const void *raw, size_t n, bool cluster, const uint8_t **ns, size_t *nslen,
		      const uint8_t **key, size_t *klen)
{
	const uint8_t *p = raw;
	size_t off = key_prefix_decode(p, n, cluster, ns, nslen);
	if (!off)
		return -EUCLEAN;
	if (key)
		*key = p + off;
	if (klen)
		*klen = n - off;
	return 0;
}

int enc_sub_key(struct buf *out, const void *ns, size_t nslen, const void *key, size_t klen,
		bool cluster, uint64_t version, const void *sub, size_t sublen)
{
	if (!ns || nslen < 1 || nslen > ENC_MAX_NS || klen > UINT32_MAX || (klen && !key) ||
	    (sublen && !sub))
		return -EINVAL;
	int rc = key_prefix(out, ns, nslen, key, klen, cluster);
	if (!rc)
		rc = buf_reserve(out, 4 + klen + 8 + sublen);
	if (rc)
		return rc;
	/* Cannot fail now: the room is reserved. */
	buf_add_be32(out, (uint32_t)klen);
	buf_add(out, key, klen);
	buf_add_be64(out, version);
	buf_add(out, sub, sublen);
	return 0;
}

int enc_sub_key_decode(const void *raw, size_t n, bool cluster, const uint8_t **ns, size_t *nslen,
		       const uint8_t **key, size_t *klen, uint64_t *version, const uint8_t **sub,
		       size_t *sublen)
{
	const uint8_t *p = raw;
	size_t off = key_prefix_decode(p, n, cluster, ns, nslen);
	if (!off || n - off < 4)
		return -EUCLEAN;
	size_t kl = get_be32(p + off);
	off += 4;
	if (n - off < kl || n - off - kl < 8)
		return -EUCLEAN;
	if (key)
		*key = p + off;
	if (klen)
		*klen = kl;
	off += kl;
	if (version)
		*version = get_be64(p + off);
	off += 8;
	if (sub)
		*sub = p + off;
	if (sublen)
		*sublen = n - off;
	return 0;
}

bool enc_prefix_successor(struct buf *b)
{
	size_t n = b->len;
	while (n > 0 && (uint8_t)b->data[n - 1] == 0xff)
		n--;
	if (n == 0)
		return false;
	b->data[n - 1] = (char)((uint8_t)b->data[n - 1] + 1);
	b->len = n;
	b->data[n] = '\0';
	return true;
}

/* ---- Cluster slots ------------------------------------------------- */

uint16_t enc_crc16(const void *p, size_t n)
{
	const uint8_t *b = p;
	uint16_t crc = 0;
	for (size_t i = 0; i < n; i++) {
		crc ^= (uint16_t)(b[i] << 8);
		for (int bit = 0; bit < 8; bit++)
			crc =
			    (crc & 0x8000) ? (uint16_t)((crc << 1) ^ 0x1021) : (uint16_t)(crc << 1);
	}
	return crc;
}

uint16_t enc_slot(const void *key, size_t klen)
{
	const uint8_t *k = key;
	const uint8_t *open = klen ? memchr(k, '{', klen) : NULL;
	if (open) {
		size_t start = (size_t)(open - k) + 1;
		const uint8_t *close = memchr(k + start, '}', klen - start);
		if (close && close > k + start)
			return enc_crc16(k + start, (size_t)(close - (k + start))) & 0x3fff;
	}
	return enc_crc16(k, klen) & 0x3fff;
}

/* ---- Sortable doubles ---------------------------------------------- */

#define SIGN_BIT 0x8000000000000000ull

uint64_t enc_double_to_sortable(double d)
{
	uint64_t u;
	memcpy(&u, &d, sizeof(u));
	return (u & SIGN_BIT) ? ~u : (u | SIGN_BIT);
}

double enc_sortable_to_double(uint64_t u)
{
	u = (u & SIGN_BIT) ? (u & ~SIGN_BIT) : ~u;
	double d;
	memcpy(&d, &u, sizeof(d));
	return d;
}

int buf_add_double(struct buf *b, double d)
{
	return buf_add_be64(b, enc_double_to_sortable(d));
}

bool enc_ts_chunk_expired(const uint8_t *t, size_t tn, const void *chunk, size_t cn)
{
	const uint8_t *c = chunk;
	/* tail: retention u64 | chunk_size u64 | type u8 | policy u8 |
	 * source (u32 len + bytes) | last_timestamp u64 */
	if (tn < 30 || cn < 8 || (get_be32(c) & 1))
		return false;
	uint32_t sl = get_be32(t + 18);
	if (tn != 30 + (size_t)sl)
		return false;
	uint64_t retention = get_be64(t), last = get_be64(t + 22 + sl);
	uint32_t count = get_be32(c + 4);
	if (!retention || !count || cn != 8 + (size_t)count * 16 || last < retention)
		return false;
	/* The chunk's last sample: u64 ts in host (little-endian) order. */
	const uint8_t *p = c + 8 + (size_t)(count - 1) * 16;
	uint64_t ts = 0;
	for (int i = 7; i >= 0; i--)
		ts = (ts << 8) | p[i];
	return ts < last - retention;
}

int enc_ts_label_index_key(struct buf *out, const void *ns, size_t nslen, const void *name,
			   size_t nn, const void *value, size_t vn, const void *key, size_t klen)
{
	if (!ns || nslen < 1 || nslen > ENC_MAX_NS || nn > UINT32_MAX || vn > UINT32_MAX ||
	    (nn && !name) || (vn && !value) || (klen && !key))
		return -EINVAL;
	buf_reset(out);
	int rc = buf_reserve(out, 1 + nslen + 1 + 4 + nn + 4 + vn + klen);
	if (rc)
		return rc;
	buf_add_u8(out, (uint8_t)nslen);
	buf_add(out, ns, nslen);
	buf_add_u8(out, ENC_INDEX_TS_LABEL);
	if (!name)
		return 0;
	buf_add_be32(out, (uint32_t)nn);
	buf_add(out, name, nn);
	if (!value)
		return 0;
	buf_add_be32(out, (uint32_t)vn);
	buf_add(out, value, vn);
	if (klen)
		buf_add(out, key, klen);
	return 0;
}

int enc_ts_label_index_decode(const void *raw, size_t n, const uint8_t **ns, size_t *nslen,
			      const uint8_t **name, size_t *nn, const uint8_t **value, size_t *vn,
			      const uint8_t **key, size_t *klen)
{
	const uint8_t *p = raw;
	size_t off, l;
	if (n < 1 || p[0] < 1 || n - 1 < (size_t)p[0] + 1u + 4u)
		return -EUCLEAN;
	*ns = p + 1;
	*nslen = p[0];
	off = 1 + (size_t)p[0];
	if (p[off++] != ENC_INDEX_TS_LABEL)
		return -EUCLEAN;
	l = get_be32(p + off);
	off += 4;
	if (n - off < l || n - off - l < 4)
		return -EUCLEAN;
	*name = p + off;
	*nn = l;
	off += l;
	l = get_be32(p + off);
	off += 4;
	if (n - off < l)
		return -EUCLEAN;
	*value = p + off;
	*vn = l;
	off += l;
	*key = p + off;
	*klen = n - off;
	return 0;
}
