/*
 * keyspace: keys as Kvrocks sees them. Metadata lookup with type check and
 * expiry, version generation, per-key striped locks, generic key verbs
 * (TYPE, DEL, RENAME, PEXPIREAT, SCAN), namespaces, and the empty
 * collections kvfs remembers in its reserved namespace.
 * Layer: keyspace (may include store, encoding, util).
 *
 * The fs layer may call the generic verbs (the "ks_" functions above the
 * "For type modules" line); the functions below that line exist for the
 * type modules and take store batches.
 */
#ifndef KVFS_KEYSPACE_H
#define KVFS_KEYSPACE_H

#include "engine/encoding.h"
#include "engine/util.h"

/*
 * kvfs's reserved namespace. It holds ordinary Kvrocks string keys:
 *   "E" | ns_len u8 | ns | key  -> type name   an empty collection
 *   "N" | ns                    -> ""          a namespace made by mkdir
 * It is hidden from the tree and never user-writable.
 */
#define KS_RESERVED_NS "__kvfs"
#define KS_DEFAULT_NS  "__namespace"

struct keyspace;
struct store;
struct store_batch;
struct store_snap;

struct ks_attr_change;

/*
 * A key: namespace and user key, both binary (not NUL-terminated), and
 * what the write it is passed to means for the file system's records of
 * it (its times, mode, owner; src/keyspace/ks_attr.c), or NULL for nothing. The
 * change travels with the key it concerns, so a verb on two keys (a move)
 * carries one per key, and the verb's transaction applies it in the
 * verb's own batch (ks_txn.h). It is borrowed for the call.
 */
struct ks_key {
	const char *ns;
	size_t nslen;
	const char *key;
	size_t klen;
	const struct ks_attr_change *attr;
	/* Read at this snapshot (ks_snap_new), not the latest: every read of
	 * the key's metadata and sub-keys made with this ks_key sees the
	 * database as it was then. NULL for the latest; always NULL for a
	 * write (a verb that writes must read what it changes). Borrowed. */
	const struct store_snap *snap;
};

/* Do a and b name the same key (namespace and name; attr aside)? */
bool ks_key_eq(const struct ks_key *a, const struct ks_key *b);

struct ks_options {
	bool cluster;		  /* slot-encoded keys (Kvrocks cluster mode) */
	bool read_only;		  /* open RocksDB read-only */
	size_t block_cache_bytes; /* 0 = default */
	/* Follow the database's writer (a mount, a running Kvrocks) as a
	 * read-only secondary instance, with follow_dir as its own directory
	 * (NULL: under the user's cache; see store_options). */
	bool follow;
	const char *follow_dir;
};

/* Open the database in `dir` (see store_open). Free with ks_close. */
int ks_open(const char *dir, const struct ks_options *opt, struct keyspace **out);
void ks_close(struct keyspace *ks);
bool ks_is_read_only(const struct keyspace *ks);
/* Opened with ks_options.follow? */
bool ks_is_follower(const struct keyspace *ks);
/* A follower: read what the writer wrote since the last call; *changed:
 * whether anything may read differently now. Callers serialise the
 * calls. 0, -EINVAL (not a follower), -EIO (logged). */
int ks_catch_up(struct keyspace *ks, bool *changed);
/* Sync the WAL (fsync). */
int ks_sync(struct keyspace *ks);
/* statfs numbers: bytes used and number of keys (estimates). */
int ks_stats(struct keyspace *ks, uint64_t *bytes, uint64_t *keys);

/* Compact the whole database now (metadata first, then the sub-key
 * column families), so that Kvrocks's compaction filters drop deleted,
 * re-created and expired data and the space comes back. Blocks; safe
 * beside other operations. 0, -EROFS, -EIO. (src/keyspace/ks_gc.c) */
int ks_compact(struct keyspace *ks);

/* A snapshot of the whole database in the new directory `dest` (an
 * absolute path; see store_checkpoint): what a later open of dest shows
 * is the state at the call, every key whole. Blocks; safe beside other
 * operations. 0, -EINVAL, -EEXIST, -ENOENT, -EACCES, -ENOSPC, -EIO
 * (logged). (src/keyspace/ks_open.c) */
int ks_checkpoint(struct keyspace *ks, const char *dest);

/* What a key is. For inline types (string, json) size is the value length. */
struct ks_info {
	enum kv_type type;
	bool empty;	    /* a remembered empty collection (no Kvrocks metadata) */
	uint64_t expire_ms; /* absolute Unix ms, 0 = none */
	uint64_t version;   /* 0 for inline types and empty collections */
	uint64_t size;
};

/* TYPE: a live key, or a remembered empty collection. 0, -ENOENT, -EIO,
 * or -EUCLEAN (logged) when its metadata does not decode: out->type is
 * then the type its flags byte names, or KV_TYPE_NONE, and the rest of
 * out is zero. */
int ks_lookup(struct keyspace *ks, const struct ks_key *k, struct ks_info *out);
/* DEL: drop the key (metadata only; sub-keys are garbage for compaction)
 * and its empty-collection record. O(1). 0, -ENOENT, -EROFS, -EIO. */
int ks_del(struct keyspace *ks, const struct ks_key *k);
/* RENAME within or across namespaces, replacing `to` atomically (Kvrocks
 * RENAME: sub-keys are copied with the source version). Empty collections
 * move too. 0, -ENOENT (no source), -EROFS, -EIO. */
int ks_rename(struct keyspace *ks, const struct ks_key *from, const struct ks_key *to);
/* PEXPIREAT: set (ms > 0) or remove (ms == 0) the expiry. 0, -ENOENT. */
int ks_expire(struct keyspace *ks, const struct ks_key *k, uint64_t expire_ms);

/* Remember an empty collection of type t (mkdir), or an empty JSON key.
 * 0, -EEXIST if the key is live or already remembered, -EINVAL for a
 * string (an empty string is a string record). */
int ks_empty_create(struct keyspace *ks, const struct ks_key *k, enum kv_type t);
/* Change the type of a remembered empty collection. 0, -ENOENT,
 * -ENOTEMPTY if the key is live. */
int ks_empty_retype(struct keyspace *ks, const struct ks_key *k, enum kv_type t);
/* Forget an empty collection (rmdir). 0, -ENOENT, -ENOTEMPTY if live. */
int ks_empty_remove(struct keyspace *ks, const struct ks_key *k);

/* Namespaces. The default namespace (KS_DEFAULT_NS) always exists and
 * cannot be removed (-EBUSY). Another namespace exists while it has a
 * live key or was created with ks_ns_create and not removed. The reserved
 * namespace is never listed and cannot be created or removed (-EPERM). */
/* Create namespace ns; init, if not NULL, is what its own attribute
 * records start with (mkdir's mode and owner, KS_ATTR_CREATE). */
int ks_ns_create(struct keyspace *ks, const char *ns, size_t n,
		 const struct ks_attr_change *init);		 /* -EEXIST */
int ks_ns_remove(struct keyspace *ks, const char *ns, size_t n); /* -ENOTEMPTY, -ENOENT */
int ks_ns_exists(struct keyspace *ks, const char *ns, size_t n); /* 1, 0, <0 */

/* Namespace iteration in byte order, starting after `after` (NULL/0 = from
 * the start). A skip-scan: one seek per namespace, never a full scan.
 * next() returns 1 and a borrowed name (valid until the next call), 0 at
 * the end, or a negative errno. NULL on ENOMEM. */
struct ks_ns_iter;
struct ks_ns_iter *ks_ns_iter_new(struct keyspace *ks, const char *after, size_t alen);
int ks_ns_iter_next(struct ks_ns_iter *it, const char **ns, size_t *n);
void ks_ns_iter_free(struct ks_ns_iter *it);

/* Key iteration within one namespace in stored order (cluster mode: by
 * slot, then name; else by name), starting after the position `after`:
 * live keys merged with remembered empty collections; expired and size-0
 * keys are skipped. next() returns 1 with a borrowed key and its info, 0
 * at the end, or a negative errno; rank() then gives that key's position
 * (borrowed the same way): the bytes after the namespace in its stored
 * key, the slot it is stored under and the name, which need not be the
 * slot its name hashes to. Without cluster mode a position is the name.
 * Memory use is constant. */
struct ks_key_iter;
struct ks_key_iter *ks_key_iter_new(struct keyspace *ks, const char *ns, size_t nslen,
				    const char *after, size_t alen);
int ks_key_iter_next(struct ks_key_iter *it, const char **key, size_t *klen, struct ks_info *info);
void ks_key_iter_rank(const struct ks_key_iter *it, const char **rank, size_t *n);
void ks_key_iter_free(struct ks_key_iter *it);

/* A snapshot of the whole database for consistent reads (ks_key.snap):
 * NULL on ENOMEM; free with ks_snap_free() (NULL is fine). It keeps what
 * it sees from compactions while it lives: hold it for one listing or
 * one pass of a read, not for ever (engine/store.h). */
struct store_snap *ks_snap_new(struct keyspace *ks);
void ks_snap_free(struct keyspace *ks, struct store_snap *snap);

/* ---- For type modules ---------------------------------------------- */

/*
 * Report a record of k that does not decode: logs ONE error line,
 *   corrupt record of 'NS/KEY': WHAT
 * with the namespace and the key escaped as the tree spells them
 * (names_encode), so the user can `rm` that very name; then returns
 * -EUCLEAN, so a decoder can `return ks_corrupt(k, "...", ...)`. Every
 * corruption of every type is reported through here (docs/errors.md).
 */
int ks_corrupt(const struct ks_key *k, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Copy k's bytes into store (ns | key) and point *out at them, for an
 * iterator that outlives its caller's key and logs by it. 0, -ENOMEM. */
int ks_key_dup(const struct ks_key *k, struct buf *store, struct ks_key *out);
/* The same for one entry of k (a member, a field, an id: the bytes as the
 * type stores them): 'NS/KEY/ENTRY', the entry escaped as its file name. */
int ks_corrupt_entry(const struct ks_key *k, const void *entry, size_t en, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The most keys one transaction locks (ks_txn_beginv): a time series and
 * the destinations of its rules. */
#define KS_LOCKV_MAX 64

/*
 * Read the live metadata of k. `want` = KV_TYPE_NONE accepts any type.
 * 0 with *m decoded from `raw` (m->tail points into raw), -ENOENT if the
 * key is absent, expired or an empty collection of size 0,
 * -KV_EWRONGTYPE if it holds another type, -EUCLEAN if corrupt, -EIO.
 */
int ks_meta_get(struct keyspace *ks, const struct ks_key *k, enum kv_type want, struct buf *raw,
		struct enc_meta *m);
/* The size field of k's metadata (HLEN, SCARD, ZCARD, ...): a key of
 * type `want`. 0 with *n (0 for an absent key), -KV_EWRONGTYPE,
 * -EUCLEAN, -EIO. */
int ks_card(struct keyspace *ks, const struct ks_key *k, enum kv_type want, uint64_t *n);
/* Like ks_meta_get, without copying the record: *v holds it (pinned) and
 * m->tail points into it until store_value_free(*v). *v is NULL unless 0
 * is returned. */
struct store_value;
int ks_meta_pin(struct keyspace *ks, const struct ks_key *k, enum kv_type want,
		struct store_value **v, struct enc_meta *m);
/* Like ks_meta_get, but reads at most the first few hundred bytes of a
 * string or JSON value (m->tail is then cut short) and sets *vlen to the
 * whole record's length: for callers that need the header, not the value. */
int ks_meta_head(struct keyspace *ks, const struct ks_key *k, enum kv_type want, struct buf *raw,
		 struct enc_meta *m, uint64_t *vlen);
/* Fill m for a new key of type t: v1, no expiry, size 0, fresh version. */
void ks_meta_new(struct keyspace *ks, struct enc_meta *m, enum kv_type t);
/* A fresh Kvrocks version (µs clock << 11 + counter). */
uint64_t ks_version_new(struct keyspace *ks);

/* The record of k's version `version` at sub-key sub in column family cf
 * (an enum store_cf): 0 and its value in out, -ENOENT, -EIO. */
int ks_sub_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, int cf,
	       const void *sub, size_t sn, struct buf *out);
/* Key builders honouring the cluster flag. 0 or -ENOMEM/-EINVAL. */
int ks_meta_key(struct keyspace *ks, const struct ks_key *k, struct buf *out);
int ks_sub_key(struct keyspace *ks, const struct ks_key *k, uint64_t version, const void *sub,
	       size_t sublen, struct buf *out);

/*
 * Iterate the sub-keys of the current version of k (a key of type
 * `want`) in the default column family, in byte order, strictly after
 * `after` (NULL = from the first). A missing key iterates nothing; another
 * type gives NULL and *err = -KV_EWRONGTYPE. next() returns 1 with the
 * sub-key (without the prefix) and value borrowed until the next call, 0
 * at the end, or a negative errno. The shared body of the hash, set,
 * sortedint, zset ... iterators.
 */
struct ks_sub_iter;
struct ks_sub_iter *ks_sub_iter_new(struct keyspace *ks, const struct ks_key *k, enum kv_type want,
				    const void *after, size_t alen, int *err);
/*
 * The same with options; all zero is ks_sub_iter_new from the first
 * sub-key. The metadata is read once, so a caller holding k's lock
 * (ks_txn) gets a size and a snapshot that agree.
 */
struct ks_sub_iter_opts {
	int cf;		   /* an enum store_cf (store.h): 0 is the default CF */
	bool reverse;	   /* descending byte order */
	const void *after; /* start strictly after this sub-key (NULL: at the first) */
	size_t alen;
	bool inclusive;	       /* start at `after` itself when it is there */
	struct enc_meta *meta; /* if not NULL: the metadata read (without its
				* tail); all zero for a missing key */
};
struct ks_sub_iter *ks_sub_iter_open(struct keyspace *ks, const struct ks_key *k, enum kv_type want,
				     const struct ks_sub_iter_opts *o, int *err);
int ks_sub_iter_next(struct ks_sub_iter *it, const char **sub, size_t *sn, const char **v,
		     size_t *vn);
/* The iterator's own copy of k (attr NULL), for log lines about what it
 * meets (ks_corrupt_entry); valid until ks_sub_iter_free. */
const struct ks_key *ks_sub_iter_key(const struct ks_sub_iter *it);
void ks_sub_iter_free(struct ks_sub_iter *it);

struct store *ks_store(struct keyspace *ks);
bool ks_cluster(const struct keyspace *ks);

/* ---- For ks_txn.c -------------------------------------------------- */

/*
 * What a write tracks of one key it holds the lock of, for the records
 * its commit adds (ks_txn_commit): the version read or written, whether
 * the key is live after the batch and was before, its empty-collection
 * record, and the attribute change its caller asked for (ks_key.attr).
 * The batch helpers ks_track_* update it; a write transaction (ks_txn.h)
 * owns one per key. Fields are private to keyspace.c.
 */
struct ks_track {
	const struct ks_key *k;
	const struct ks_attr_change *attr; /* k->attr */
	uint64_t version;
	uint64_t read_version; /* the version first read, if the verb makes another */
	bool live;
	bool was_live;	/* live metadata was read: the key existed */
	bool was_empty; /* its empty-collection record was deleted */
	/* An empty-collection record of it was read (or found and deleted),
	 * or written: with the above, whether the key existed before the
	 * batch and does after, so that its namespace is touched. */
	bool empty_seen, empty_made;
	uint64_t pending_expire; /* the deleted empty record's expiry */
};
void ks_track_init(struct ks_track *w, const struct ks_key *k);
/* The metadata read (as ks_meta_get) and the batch steps of a write
 * (the metadata put or deleted as header(m) + tail, k remembered as an
 * empty collection of type t or forgotten), noting what they saw and did
 * in w (NULL: nothing noted). */
int ks_track_meta_get(struct keyspace *ks, struct ks_track *w, const struct ks_key *k,
		      enum kv_type want, struct buf *raw, struct enc_meta *m);
/* ks_meta_head, noting what it saw in w. */
int ks_track_meta_head(struct keyspace *ks, struct ks_track *w, const struct ks_key *k,
		       enum kv_type want, struct buf *raw, struct enc_meta *m, uint64_t *vlen);
int ks_track_put_meta(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		      const struct ks_key *k, const struct enc_meta *m, const void *tail,
		      size_t tlen);
int ks_track_del_meta(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		      const struct ks_key *k);
int ks_track_empty_put(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		       const struct ks_key *k, enum kv_type t);
int ks_track_empty_del(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		       const struct ks_key *k);
/*
 * Per-key locks: a fixed array of mutexes indexed by hash(ns, key) (the
 * order rule is at the array, ks_int.h). Every read-modify-write of a key
 * holds its lock, through its transaction. ks_lock_pair takes the stripes
 * of a and b (b may be NULL) in ascending index order, once if they are
 * the same; ks_lockv those of n keys (n <= KS_LOCKV_MAX) so.
 */
void ks_lock_pair(struct keyspace *ks, const struct ks_key *a, const struct ks_key *b);
void ks_unlock_pair(struct keyspace *ks, const struct ks_key *a, const struct ks_key *b);
void ks_lockv(struct keyspace *ks, const struct ks_key *keys, size_t n);
void ks_unlockv(struct keyspace *ks, const struct ks_key *keys, size_t n);

/* ---- For type modules: a metadata read into the caller's memory ------ */

/*
 * Like ks_meta_get, for a type whose metadata tail has a fixed layout:
 * the first cap bytes of the tail are copied into tail[cap] and m->tail
 * points there (m->tail_len is at most cap), so nothing is left to
 * release. 0, -ENOENT, -KV_EWRONGTYPE, -EUCLEAN, -EIO.
 */
int ks_meta_copy(struct keyspace *ks, const struct ks_key *k, enum kv_type want, struct enc_meta *m,
		 void *tail, size_t cap);

/* ---- For type modules: one sub-key of a live key -------------------- */

/* The version of k's live metadata, a key of type `want` (as ks_meta_get
 * reads it): 0 and *version, -ENOENT, -KV_EWRONGTYPE, -EUCLEAN, -EIO. For
 * a reader that goes on to one of its sub-keys (ks_sub_get, ...). */
int ks_version_get(struct keyspace *ks, const struct ks_key *k, enum kv_type want,
		   uint64_t *version);
/* The length of the record ks_sub_get would read, without copying its
 * value: 0 and *len, -ENOENT, -EIO. */
int ks_sub_len(struct keyspace *ks, const struct ks_key *k, uint64_t version, int cf,
	       const void *sub, size_t sn, uint64_t *len);
/* Is that record there? 1, 0, or a negative errno. */
int ks_sub_exists(struct keyspace *ks, const struct ks_key *k, uint64_t version, int cf,
		  const void *sub, size_t sn);
/* Has live key k, of type `want`, a record at sub in the default column
 * family (a hash's field, a set's member, ...)? 1, 0 (also for a missing
 * key), -KV_EWRONGTYPE, -EUCLEAN, -EIO. */
int ks_sub_has(struct keyspace *ks, const struct ks_key *k, enum kv_type want, const void *sub,
	       size_t sn);

/* ---- Waiting for a key to change (BLPOP; ks_wait.c) ------------------ */

/*
 * A reader that waits for a write to k: g = ks_gen(ks, k) before it looks
 * (a pop that finds the list empty), then ks_wait(ks, k, g, ...) if what
 * it wants was not there. ks_wait returns 0 once a write to k (or to a key
 * that shares its lock stripe: look again) committed since ks_gen,
 * -ETIMEDOUT at the deadline (a CLOCK_MONOTONIC time in ms from
 * ks_wait_deadline; 0: never), -EINTR when stop(arg) says true (asked at
 * least every 100 ms; stop may be NULL). Holds no lock while it waits.
 */
uint64_t ks_gen(struct keyspace *ks, const struct ks_key *k);
int ks_wait(struct keyspace *ks, const struct ks_key *k, uint64_t gen, uint64_t deadline,
	    bool (*stop)(void *arg), void *arg);
/* The deadline timeout_ms from now (0: none, wait for ever). */
uint64_t ks_wait_deadline(uint64_t timeout_ms);

#endif
