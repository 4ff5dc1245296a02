/*
 * ks_gc: Kvrocks's compaction filters for kvfs's store, and the manual
 * compaction (ks_compact, declared in keyspace.h). The store calls the
 * hook on its background threads; the rules are Kvrocks's
 * (kvrocks-encoding.md sections 8 and 9). Layer: keyspace (store,
 * encoding, util).
 */
#ifndef KVFS_KS_GC_H
#define KVFS_KS_GC_H

#include "engine/encoding.h"
#include "engine/util.h"

struct keyspace;
struct store_gc;

/* How long after its expiry a key's sub-keys survive (Kvrocks's lazy
 * delete, against a race between EXPIRE and compaction). */
#define KS_GC_GRACE_MS 300000u

/* The hook for store_open: filters on metadata, default, zset_score,
 * stream, pubsub and propagate, deciding for ks (its cluster flag).
 * ks must outlive the store. */
void ks_gc_hook(struct keyspace *ks, struct store_gc *out);

/*
 * The decisions, pure (no I/O) so they can be tested with any clock.
 * Metadata (MetadataFilter): drop a record that decodes and is expired
 * at now (expire < now, or size 0 of a type that cannot be empty); keep
 * what does not decode.
 */
bool ks_gc_meta_dead(const void *v, size_t vn, uint64_t now_ms);
/*
 * Sub-key (SubKeyFilter), given its key's decoded metadata m: drop it if
 * m is a string or JSON (the key was overwritten by SET), m is expired at
 * now - KS_GC_GRACE_MS, the versions differ (re-created key), or it is
 * an all-zero bitmap fragment. (A sub-key whose metadata is missing is
 * dropped too; that needs no decision.)
 */
bool ks_gc_sub_dead(const struct enc_meta *m, uint64_t sub_version, const void *v, size_t vn,
		    uint64_t now_ms);
/*
 * An attribute record (ks_attr.c) of a key whose metadata is m (NULL:
 * none): an entry's record (of key version `version`) is dead when the key
 * is missing, expired at now - KS_GC_GRACE_MS, or of another version; a
 * key's record (written for `version`, 0: any) when it names another
 * version or the key expired. A key record of version 0 without metadata
 * is kept: it may be an empty collection's.
 */
bool ks_gc_attr_dead(const struct enc_meta *m, bool is_entry, uint64_t version, uint64_t now_ms);

#endif
