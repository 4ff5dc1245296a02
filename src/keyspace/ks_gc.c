/*
 * ks_gc: garbage collection as Kvrocks does it. DEL, expiry and
 * re-creation only touch a key's metadata record; the sub-keys of the
 * old version stay behind until a compaction meets them. These filters,
 * installed through the store's hook, make RocksDB drop them then:
 *
 *   column family              rule (Kvrocks's filter)
 *   metadata                   drop if expired (MetadataFilter)
 *   default, zset_score,       drop if the key's metadata is missing, is a
 *   stream                     string/JSON, expired over 5 minutes ago, of
 *                              another version; an all-zero bitmap
 *                              fragment; a time-series chunk whose last
 *                              timestamp < last_timestamp - retention
 *                              (SubKeyFilter)
 *   index                      a time-series label record: drop if its
 *                              key's metadata is missing or expired, no
 *                              grace (IndexFilter, Kvrocks 2025+)
 *   pubsub                     drop everything (PubSubFilter)
 *   propagate                  drop the key "script" (PropagateFilter)
 *   search, others             no filter
 *
 * Records that do not decode are kept: a filter never guesses.
 * kvfs's reserved namespace "__kvfs" holds ordinary string keys without
 * expiry: the same rules keep them. Its attribute records (ks_attr.c) get
 * one more rule, in the spirit of the sub-key filter: an entry's record
 * goes when its key is missing, expired (with the grace), or of another
 * version; a key's record goes when it names a version the key no longer
 * has. Layer: keyspace.
 */
#include "keyspace/ks_gc.h"

#include "keyspace/keyspace.h"
#include "keyspace/ks_attr.h"
#include "engine/store.h"

#include <errno.h>

bool ks_gc_meta_dead(const void *v, size_t vn, uint64_t now)
{
	struct enc_meta m;
	if (enc_meta_decode(v, vn, &m) != 0)
		return false;
	return enc_meta_is_expired(&m, now);
}

static bool all_zero(const void *v, size_t vn)
{
	const uint8_t *p = v;
	for (size_t i = 0; i < vn; i++)
		if (p[i])
			return false;
	return true;
}

bool ks_gc_sub_dead(const struct enc_meta *m, uint64_t sub_version, const void *v, size_t vn,
		    uint64_t now)
{
	if (enc_type_is_inline(m->type))
		return true;
	/* Kvrocks's ExpireAt(now - 5 min): the size-0 rule has no grace. */
	uint64_t lazy = now > KS_GC_GRACE_MS ? now - KS_GC_GRACE_MS : 0;
	if (enc_meta_is_expired(m, lazy))
		return true;
	if (sub_version != m->version)
		return true;
	return m->type == KV_TYPE_BITMAP && all_zero(v, vn);
}

/* A sub-key of the default, zset_score or stream column family. */
static bool sub_drop(struct keyspace *ks, struct store_gc_read *rd, const void *k, size_t kn,
		     const void *v, size_t vn)
{
	bool cluster = ks_cluster(ks);
	const uint8_t *ns, *key, *sub;
	size_t nslen, klen, sublen;
	uint64_t version;
	struct buf mk = BUF_INIT;
	const char *mv;
	size_t mvn;
	struct enc_meta m;
	bool drop = false;
	int rc;

	if (enc_sub_key_decode(k, kn, cluster, &ns, &nslen, &key, &klen, &version, &sub, &sublen) !=
	    0)
		return false;
	if (enc_ns_key(&mk, ns, nslen, key, klen, cluster) != 0)
		goto out;
	rc = store_gc_meta_get(rd, mk.data, mk.len, &mv, &mvn);
	if (rc == -ENOENT) {
		drop = true; /* the key was deleted: DEL, expiry, FLUSHDB */
	} else if (rc == 0 && enc_meta_decode(mv, mvn, &m) == 0) {
		drop = ks_gc_sub_dead(&m, version, v, vn, now_ms());
		/* Kvrocks (2025+): a time-series chunk past the retention. */
		if (!drop && m.type == KV_TYPE_TIMESERIES && sublen == 9 && sub[0] == 0x00)
			drop = enc_ts_chunk_expired(m.tail, m.tail_len, v, vn);
	}
	/* A read error, a closing store or undecodable metadata: keep. */
out:
	buf_release(&mk);
	return drop;
}

/* A record of the index column family (Kvrocks's IndexFilter): only
 * time-series label records are judged. */
static bool index_drop(struct keyspace *ks, struct store_gc_read *rd, const void *k, size_t kn)
{
	const uint8_t *ns, *name, *val, *key;
	size_t nslen, nn, vn, klen, mvn;
	struct buf mk = BUF_INIT;
	const char *mv;
	struct enc_meta m;
	bool drop = false;
	if (enc_ts_label_index_decode(k, kn, &ns, &nslen, &name, &nn, &val, &vn, &key, &klen) != 0)
		return false;
	if (enc_ns_key(&mk, ns, nslen, key, klen, ks_cluster(ks)) == 0) {
		int rc = store_gc_meta_get(rd, mk.data, mk.len, &mv, &mvn);
		if (rc == -ENOENT)
			drop = true;
		else if (rc == 0 && enc_meta_decode(mv, mvn, &m) == 0)
			drop = enc_meta_is_expired(&m, now_ms());
	}
	buf_release(&mk);
	return drop;
}

bool ks_gc_attr_dead(const struct enc_meta *m, bool is_entry, uint64_t version, uint64_t now)
{
	uint64_t lazy = now > KS_GC_GRACE_MS ? now - KS_GC_GRACE_MS : 0;
	if (!m) /* key gone; a key record of version 0 may be an empty one's */
		return is_entry || version != 0;
	if (enc_meta_is_expired(m, lazy))
		return true;
	uint64_t cur = enc_type_is_inline(m->type) ? 0 : m->version;
	if (is_entry)
		return version != cur;
	return version != 0 && version != cur;
}

/* An attribute record of the reserved namespace (ks_attr.c). */
static bool attr_drop(struct keyspace *ks, struct store_gc_read *rd, const void *k, size_t kn,
		      const void *v, size_t vn)
{
	struct ks_key key;
	struct buf mk = BUF_INIT;
	struct enc_meta m;
	bool is_entry, drop = false;
	uint64_t version;
	const char *mv;
	size_t mvn;

	if (!ks_attr_record_parse(k, kn, &key, &is_entry, &version))
		return false;
	if (!is_entry)
		version = ks_attr_record_version(v, vn);
	if (ks_meta_key(ks, &key, &mk) != 0)
		goto out;
	int rc = store_gc_meta_get(rd, mk.data, mk.len, &mv, &mvn);
	if (rc == -ENOENT)
		drop = ks_gc_attr_dead(NULL, is_entry, version, now_ms());
	else if (rc == 0 && enc_meta_decode(mv, mvn, &m) == 0)
		drop = ks_gc_attr_dead(&m, is_entry, version, now_ms());
out:
	buf_release(&mk);
	return drop;
}

static bool gc_drop(void *ctx, struct store_gc_read *rd, enum store_cf cf, const void *k, size_t kn,
		    const void *v, size_t vn)
{
	switch (cf) {
	case STORE_CF_METADATA:
		return ks_gc_meta_dead(v, vn, now_ms()) || attr_drop(ctx, rd, k, kn, v, vn);
	case STORE_CF_DEFAULT:
	case STORE_CF_ZSET_SCORE:
	case STORE_CF_STREAM:
		return sub_drop(ctx, rd, k, kn, v, vn);
	case STORE_CF_INDEX:
		return index_drop(ctx, rd, k, kn);
	case STORE_CF_PUBSUB:
		return true;
	case STORE_CF_PROPAGATE:
		return kn == 6 && memcmp(k, "script", 6) == 0;
	default:
		return false;
	}
}

void ks_gc_hook(struct keyspace *ks, struct store_gc *out)
{
	out->drop = gc_drop;
	out->ctx = ks;
	out->cfs = 1u << STORE_CF_METADATA | 1u << STORE_CF_DEFAULT | 1u << STORE_CF_ZSET_SCORE |
		   1u << STORE_CF_STREAM | 1u << STORE_CF_PUBSUB | 1u << STORE_CF_PROPAGATE |
		   1u << STORE_CF_INDEX;
}

/* Metadata first, so that the sub-key filters that follow find the
 * expired records already gone. */
static const enum store_cf compact_order[] = {
    STORE_CF_METADATA, STORE_CF_DEFAULT,   STORE_CF_ZSET_SCORE, STORE_CF_STREAM,
    STORE_CF_PUBSUB,   STORE_CF_PROPAGATE, STORE_CF_INDEX,
};

int ks_compact(struct keyspace *ks)
{
	struct store *st = ks_store(ks);
	if (ks_is_read_only(ks))
		return -EROFS;
	for (size_t i = 0; i < sizeof(compact_order) / sizeof(compact_order[0]); i++) {
		int rc = store_compact(st, compact_order[i], NULL, 0, NULL, 0);
		if (rc && rc != -ENOENT)
			return rc;
	}
	return 0;
}
