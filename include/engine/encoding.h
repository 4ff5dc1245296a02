/*
 * encoding: the Kvrocks byte layout, as pure functions with no I/O.
 * Namespace keys, sub-keys, metadata values (v0 read, v1 read/write),
 * sortable doubles, CRC16 cluster slots and version numbers.
 * Layer: encoding (may include util). Byte tables: top of encoding.c and
 * ../docs/encoding.md.
 */
#ifndef KVFS_ENCODING_H
#define KVFS_ENCODING_H

#include "engine/util.h"

/* Type ids: low 4 bits of the metadata flags byte. A new type also gets
 * its row in the type table of encoding.c (name, inline, emptyable). */
enum kv_type {
	KV_TYPE_NONE = 0,
	KV_TYPE_STRING = 1,
	KV_TYPE_HASH = 2,
	KV_TYPE_LIST = 3,
	KV_TYPE_SET = 4,
	KV_TYPE_ZSET = 5,
	KV_TYPE_BITMAP = 6,
	KV_TYPE_SORTEDINT = 7,
	KV_TYPE_STREAM = 8,
	KV_TYPE_BLOOM = 9,
	KV_TYPE_JSON = 10,
	KV_TYPE_HLL = 11,
	KV_TYPE_TDIGEST = 12,
	KV_TYPE_TIMESERIES = 13,
	KV_TYPE_TOPK = 14, /* kvfs's own layout: Kvrocks has no top-k yet */
	KV_TYPE_MAX = 14,
};

/* Lower-case name of a type ("string", "hash", ...); "none" for 0 and
 * unknown ids. Static storage. */
const char *enc_type_name(enum kv_type t);
/* Type id for a name (exact, case-sensitive), or KV_TYPE_NONE. */
enum kv_type enc_type_from_name(const char *name, size_t n);
/* String and JSON keep their value in the metadata record (no version,
 * no size, no sub-keys). */
bool enc_type_is_inline(enum kv_type t);
/* Types whose live keys may have size 0 (stream, bloom, hll, tdigest,
 * timeseries, topk). Both are columns of the type table. */
bool enc_type_is_emptyable(enum kv_type t);

#define ENC_FLAG_64BIT	   0x80 /* metadata flags bit 7: v1 encoding */
#define ENC_FLAG_TYPE_MASK 0x0f
#define ENC_META_V1_HEADER 25 /* flags + expire u64 + version u64 + size u64 */
#define ENC_META_V0_HEADER 17 /* flags + expire u32 + version u64 + size u32 */
#define ENC_MAX_NS	   255

/*
 * A decoded metadata header. For inline types (string, json) version and
 * size are 0 and `tail` is the stored value; for the others `tail` is the
 * type-specific bytes after `size` (list head/tail, ...). `tail` points
 * into the buffer that was decoded and lives as long as it does.
 */
struct enc_meta {
	enum kv_type type;
	bool v1;	    /* 64-bit encoding (flags bit 7) */
	uint8_t flags;	    /* the raw flags byte */
	uint64_t expire_ms; /* absolute Unix ms, 0 = none (v0 seconds are converted) */
	uint64_t version;
	uint64_t size;
	const uint8_t *tail;
	size_t tail_len;
};

/* Decode a metadata value. 0, or -EUCLEAN if it is too short, has an
 * unknown type id or reserved flag bits set, a size of 2^63 or more
 * (ENC_SIZE_MAX: no count of Kvrocks's reaches it, and sizes past it
 * would overflow every sum a type makes of them), or a bitmap size over
 * ENC_BITMAP_MAX_BYTES. */
#define ENC_SIZE_MAX ((1ull << 63) - 1)
/* A bitmap's size is bytes; bit offsets are u32 (kvrocks-encoding.md
 * 6.7), so a size over 2^29 is refused the same way. */
#define ENC_BITMAP_MAX_BYTES (1ull << 29)
int enc_meta_decode(const void *val, size_t n, struct enc_meta *m);
/* Why enc_meta_decode refuses val: a short phrase for the log (static
 * storage), or "" if it decodes. */
const char *enc_meta_why(const void *val, size_t n);
/* The type a metadata flags byte names, or KV_TYPE_NONE if its type id
 * is unknown or reserved bits are set. */
enum kv_type enc_flags_type(uint8_t flags);
/* Append the header of m (flags, expire, and for non-inline types version
 * and size) in v1 or v0 form according to m->v1; the caller appends the
 * tail. v0 expire is written as seconds, rounded as Kvrocks does. 0 or
 * -ENOMEM. */
int enc_meta_encode(struct buf *out, const struct enc_meta *m);
/* Kvrocks's rule: expired when expire != 0 && expire < now_ms, or when a
 * non-emptyable collection has size 0. */
bool enc_meta_is_expired(const struct enc_meta *m, uint64_t now_ms);

/* The metadata-CF key: ns_len u8 | ns | [slot u16 BE] | key.
 * nslen must be 1..255. 0 or -ENOMEM/-EINVAL. */
int enc_ns_key(struct buf *out, const void *ns, size_t nslen, const void *key, size_t klen,
	       bool cluster);
/* Split a metadata-CF key. Pointers point into `raw`. 0 or -EUCLEAN. */
int enc_ns_key_decode(const void *raw, size_t n, bool cluster, const uint8_t **ns, size_t *nslen,
		      const uint8_t **key, size_t *klen);
/* A sub-key: ns_len u8 | ns | [slot u16 BE] | key_len u32 BE | key |
 * version u64 BE | sub. With sub == NULL/sublen 0 this is the prefix of
 * all sub-keys of one key version. 0 or -ENOMEM/-EINVAL. */
int enc_sub_key(struct buf *out, const void *ns, size_t nslen, const void *key, size_t klen,
		bool cluster, uint64_t version, const void *sub, size_t sublen);
/* Split a sub-key. 0 or -EUCLEAN. */
int enc_sub_key_decode(const void *raw, size_t n, bool cluster, const uint8_t **ns, size_t *nslen,
		       const uint8_t **key, size_t *klen, uint64_t *version, const uint8_t **sub,
		       size_t *sublen);

/* Turn b into the smallest byte string greater than every string that
 * has b as a prefix (an exclusive upper bound for a prefix scan).
 * Returns false if there is none (b is empty or all 0xff). */
bool enc_prefix_successor(struct buf *b);

/* CRC16-CCITT (XMODEM): poly 0x1021, init 0, as Redis Cluster. */
uint16_t enc_crc16(const void *p, size_t n);
/* Cluster slot of a user key, honouring {hash tags}: crc16 & 0x3fff. */
uint16_t enc_slot(const void *key, size_t klen);

/* Sortable doubles: byte order of the big-endian u64 == numeric order. */
uint64_t enc_double_to_sortable(double d);
double enc_sortable_to_double(uint64_t u);
int buf_add_double(struct buf *b, double d); /* appends 8 sortable bytes */

/* Kvrocks's retention rule for a time-series chunk (kvrocks-encoding.md
 * 6.13 and 9): given the series' metadata tail (after `size`) and a chunk
 * value, true if retention != 0 and the chunk's last timestamp <
 * last_timestamp - retention. Anything that does not decode: false. */
bool enc_ts_chunk_expired(const uint8_t *tail, size_t tn, const void *chunk, size_t cn);

/*
 * Kvrocks's time-series label reverse index (the "index" column family,
 * 2025+; docs/encoding.md): ns_len u8 | ns | index_type u8 (0 TS_LABEL) |
 * name_len u32 BE | name | value_len u32 BE | value | user key, value
 * empty. No slot and no version. With key NULL (klen 0) it is the prefix
 * of every key with that label; with name NULL too (nn 0, value NULL) the
 * prefix of the namespace's whole label index. 0 or -EINVAL/-ENOMEM.
 */
#define ENC_INDEX_TS_LABEL 0
int enc_ts_label_index_key(struct buf *out, const void *ns, size_t nslen, const void *name,
			   size_t nn, const void *value, size_t vn, const void *key, size_t klen);
/* Split an index key of type TS_LABEL. Pointers point into raw. 0, or
 * -EUCLEAN (not a TS_LABEL key, or lengths past its end). */
int enc_ts_label_index_decode(const void *raw, size_t n, const uint8_t **ns, size_t *nslen,
			      const uint8_t **name, size_t *nn, const uint8_t **value, size_t *vn,
			      const uint8_t **key, size_t *klen);

/* Kvrocks version: (unix_us << 11) + (counter mod 2048). */
static inline uint64_t enc_version_make(uint64_t unix_us, uint64_t counter)
{
	return (unix_us << 11) + (counter % 2048);
}

#endif
