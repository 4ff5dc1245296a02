/*
 * ks_txn: the one way a type verb writes. A transaction holds the lock of
 * one key (or of two, for a move), reads and creates their metadata,
 * collects sub-key changes in one batch, and commits everything a write
 * of kvfs means (metadata, empty-collection record, attribute records,
 * expiry) with one rocksdb_write. In C what Kvrocks does with LockGuard +
 * GetMetadata + engine::Context, and Redis with lookupKeyWrite +
 * checkType + create.
 * Layer: keyspace (keyspace.h, ks_attr.h, store, encoding, util).
 *
 * A verb reads:
 *
 *	struct ks_txn t;
 *	struct enc_meta *m;
 *	ks_txn_begin(&t, ks, k);
 *	int rc = ks_txn_open(&t, k, KV_TYPE_HASH, &m);   (or ks_txn_get)
 *	if (!rc && ...)
 *		rc = ...;   (reads under the lock, decisions)
 *	ks_txn_sub_put(&t, k, STORE_CF_DEFAULT, field, fn, value, vn);
 *	ks_txn_resize(&t, k, +1);
 *	if (!rc)
 *		rc = ks_txn_commit(&t);
 *	return ks_txn_end(&t, rc);
 *
 * Lock scope: from ks_txn_begin to ks_txn_end. Every read a verb makes to
 * decide what to write (ks_txn_get/ks_txn_open, sub-key reads) happens in
 * that scope, so what it read is what it changes. Two keys are locked in
 * the stripe order of ks_lock_pair (no deadlock between two movers).
 *
 * Errors: the step functions that only stage (sub_put, sub_del, resize,
 * delete, touch, meta_put) return nothing; their first failure is kept
 * (sticky) and ks_txn_commit returns it without writing. The lookups
 * (get, head, open, lookup) return their result and do not make it
 * sticky (-ENOENT is an answer).
 *
 * What commit writes, per key, after the verb's sub-key changes:
 *   - a key that resize took to size 0, or that delete removed: its
 *     metadata deleted, and, with KS_TXN_KEEP_EMPTY, an empty-collection
 *     record of its type; a new key (open, renew) that delete removed
 *     without KS_TXN_KEEP_EMPTY loses its empty-collection record;
 *   - otherwise, when its metadata changed (open or renew made it,
 *     resize, touch or meta_put changed it): the metadata, header and
 *     tail; a new key also loses its empty-collection record, and takes
 *     over the expiry that record carried (not a string or JSON key,
 *     which never did);
 *   - the attribute records the key's change asks for (ks_key.attr: its
 *     times, mode and owner, entry records moved or dropped), for the
 *     version read or written, and its namespace's times when the key
 *     appeared or went. A key of a user namespace that a step changed
 *     (sub_put, sub_del, sub_clear, resize, delete, touch, meta_put,
 *     renew) and that is live after the write, passed with attr NULL,
 *     gets KS_ATTR_TOUCH: its mtime and ctime become now, whatever
 *     path changed it (a JSON path, a rule's destination, a second key
 *     of a move), so a backup never misses it. A verb whose change is
 *     no content change (a conversion, a parameter) passes an attr with
 *     flags 0;
 * then the batch, with one write (WAL on, not synced).
 *
 * Ownership: struct ks_txn is the caller's (on its stack); everything it
 * holds (the batch, metadata copies) is freed by ks_txn_end, which always
 * runs and unlocks. The struct enc_meta pointers it hands out point into
 * it and are valid until ks_txn_end; keys and tails are borrowed until
 * then too.
 */
#ifndef KVFS_KS_TXN_H
#define KVFS_KS_TXN_H

#include "keyspace/keyspace.h"
#include "engine/store.h"

/* One key of a transaction. Private: use the functions below. */
struct ks_txn_key {
	const struct ks_key *k;
	struct buf raw; /* the metadata record read; m.tail points into it */
	struct enc_meta m;
	const void *tail; /* meta_put's new tail (borrowed), when tail_set */
	size_t tail_len;
	bool tail_set;
	bool read;    /* ks_txn_get/open ran */
	bool fresh;   /* made by ks_txn_open, or renewed from nothing */
	bool found;   /* the last get/head saw a record (live, another type, corrupt) */
	bool cut;     /* read by ks_txn_head: m.tail is cut short */
	bool dirty;   /* m changed: commit writes it */
	bool gone;    /* resize took it to 0, or delete: commit deletes it */
	bool drop;    /* delete: a new key's empty-collection record goes too */
	bool noexp;   /* renewed by a verb that drops every expiry */
	bool changed; /* a change was staged: its times move (see the top) */
	unsigned flags;
};

#define KS_TXN_SMALL 2
struct ks_txn {
	struct keyspace *ks;
	struct store_batch *b;
	int rc;	  /* the first failure of a staging step */
	size_t n; /* keys */
	bool locked;
	const struct ks_key *keys; /* ks_txn_beginv's (locked by ks_lockv) */
	struct ks_txn_key *key;	   /* n of them: small[] or allocated */
	struct ks_track *track;	   /* n, what the attribute records need */
	struct ks_txn_key key_small[KS_TXN_SMALL];
	struct ks_track track_small[KS_TXN_SMALL];
};

/* ks_txn_resize: a key taken to size 0 is remembered as an empty
 * collection of its type (a directory that stays, rmdir removes it). */
#define KS_TXN_KEEP_EMPTY 1u

/*
 * Begin a transaction on k (ks_txn_begin2: on a and b; the same key twice
 * is one key), taking the lock(s). Never fails: an allocation failure is
 * kept and returned by ks_txn_commit. k (a, b) must outlive the
 * transaction; the verb passes these very pointers to the calls below.
 */
void ks_txn_begin(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k);
void ks_txn_begin2(struct ks_txn *t, struct keyspace *ks, const struct ks_key *a,
		   const struct ks_key *b);
/* A transaction that only reads under k's lock (a read that must see no
 * writer halfway: an index and its element, a snapshot and the present):
 * no batch is made; ks_txn_get/open work, a staged change or a commit is
 * -EINVAL. End it with ks_txn_end like any other. */
void ks_txn_begin_read(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k);
/* On n keys (n <= KS_LOCKV_MAX; a time series and its rules'
 * destinations), locked as ks_lockv locks them. keys[] is borrowed, and a
 * verb passes &keys[i] to the calls below. */
void ks_txn_beginv(struct ks_txn *t, struct keyspace *ks, const struct ks_key *keys, size_t n);

/*
 * The live metadata of k, of type `want` (KV_TYPE_NONE: any). 0 with *m
 * (owned by t; the verb may change it, then mark it with ks_txn_touch),
 * -ENOENT (absent, expired, or an empty collection), -KV_EWRONGTYPE,
 * -EUCLEAN (logged), -EIO.
 */
int ks_txn_get(struct ks_txn *t, const struct ks_key *k, enum kv_type want, struct enc_meta **m);
/* The same, creating what is absent: a new key of type `want` (fresh v1
 * metadata, size 0, a new version) that commit writes. 0 (and
 * ks_txn_is_new says which), -KV_EWRONGTYPE, -EUCLEAN, -EIO. */
int ks_txn_open(struct ks_txn *t, const struct ks_key *k, enum kv_type want, struct enc_meta **m);
/* Did ks_txn_open (or ks_txn_renew, from nothing) make k? */
bool ks_txn_is_new(const struct ks_txn *t, const struct ks_key *k);
/* ks_txn_open for a key that must not exist yet (BF.RESERVE,
 * TDIGEST.CREATE, TOPK.RESERVE): -EEXIST when k is live, whatever its
 * type; else as ks_txn_open, and k is new. */
int ks_txn_create(struct ks_txn *t, const struct ks_key *k, enum kv_type want, struct enc_meta **m);
/*
 * ks_txn_get reading only the head of a string or JSON record (the whole
 * record of another type): m->tail is cut short and *vlen is the whole
 * record's length. For a verb that replaces the value (SET) or needs only
 * the header; a key read so is written only with a new tail (meta_put),
 * renewed or deleted (commit refuses it otherwise, -EINVAL).
 */
int ks_txn_head(struct ks_txn *t, const struct ks_key *k, enum kv_type want, struct enc_meta **m,
		uint64_t *vlen);
/* ks_lookup under the transaction's lock, for a verb that found k absent
 * (ks_txn_get: -ENOENT) and asks whether it is a remembered empty
 * collection, and of which type: commit then counts that record as the
 * key's existence before the write (its namespace's times). 0 with
 * *info, -ENOENT, -EUCLEAN, -EIO. */
int ks_txn_lookup(struct ks_txn *t, const struct ks_key *k, struct ks_info *info);
/*
 * k becomes a new key of type `type`, whatever it held (SET, a
 * conversion): *m is fresh metadata (v1, no expiry, size 0, a new
 * version) that the verb may adjust (expiry, v1, size) and commit writes.
 * Call it after ks_txn_get/ks_txn_head (any result): a key they found
 * nothing of is new (ks_txn_is_new) and loses its empty-collection
 * record, as ks_txn_open's does. What *m pointed to before is gone; the
 * record read (m->tail) stays valid. 0, or -EINVAL (sticky) for a key the
 * transaction does not hold.
 */
int ks_txn_renew(struct ks_txn *t, const struct ks_key *k, enum kv_type type, struct enc_meta **m);

/* After ks_txn_renew: k starts with no expiry (or the one the verb sets
 * in *m) even when it replaces a remembered empty collection that kept
 * one for it (BITOP's destination: Kvrocks drops its expiry). */
void ks_txn_renew_no_expiry(struct ks_txn *t, const struct ks_key *k);

/* Stage a sub-key put / delete under k's current version (the version of
 * the metadata got or opened; sub is the part after it). */
void ks_txn_sub_put(struct ks_txn *t, const struct ks_key *k, enum store_cf cf, const void *sub,
		    size_t sn, const void *v, size_t vn);
void ks_txn_sub_del(struct ks_txn *t, const struct ks_key *k, enum store_cf cf, const void *sub,
		    size_t sn);
/*
 * Stage a put (put true) or delete of k's record in Kvrocks's time-series
 * label index (the "index" column family: label name = value -> key;
 * encoding.h), as Kvrocks's TS.CREATE/TS.ALTER do beside the label
 * sub-key. A put makes the column family if the database lacks it
 * (store_cf_create: a failure is sticky); a delete without it stages
 * nothing.
 */
void ks_txn_ts_index(struct ks_txn *t, const struct ks_key *k, const void *name, size_t nn,
		     const void *v, size_t vn, bool put);
/* Stage the deletion of every sub-key record of k's current version in
 * cf (one range delete), as a verb that rebuilds a key's records does. */
void ks_txn_sub_clear(struct ks_txn *t, const struct ks_key *k, enum store_cf cf);

/* The number of members of k changes by delta: commit writes the new
 * size, or, at 0, deletes the key (flags: KS_TXN_KEEP_EMPTY). A size
 * that would go below 0 or past UINT64_MAX is an error (-EUCLEAN). */
void ks_txn_resize(struct ks_txn *t, const struct ks_key *k, int64_t delta, unsigned flags);
/* k goes, whatever its size (DEL, a value emptied): commit deletes its
 * metadata, or with KS_TXN_KEEP_EMPTY keeps it as an empty collection of
 * its type (*m's); see the top. */
void ks_txn_delete(struct ks_txn *t, const struct ks_key *k, unsigned flags);
/* The verb changed *m (its expiry, a type's own fields): commit writes it. */
void ks_txn_touch(struct ks_txn *t, const struct ks_key *k);
/* The same, with a new tail (a string's value, a type's own fields after
 * the common header); tail is borrowed until commit. */
void ks_txn_meta_put(struct ks_txn *t, const struct ks_key *k, const void *tail, size_t tlen);

/* Keep the first failure of a step the verb made itself. */
void ks_txn_fail(struct ks_txn *t, int rc);

/* Write everything (see the top). 0, the sticky error, -ENOMEM, -EROFS,
 * -ENOSPC, -EIO; nothing is written unless 0. */
int ks_txn_commit(struct ks_txn *t);
/* Unlock and free; returns rc, so a verb ends with `return
 * ks_txn_end(&t, rc);`. */
int ks_txn_end(struct ks_txn *t, int rc);

/* ---- Whole verbs of member collections ------------------------------- */

/*
 * A collection whose members are one record each in the default column
 * family, its size their count: a hash's fields, a set's members, a
 * sortedint's ids (sub: the member's sub-key bytes; v: its value, empty
 * but for a hash). Each verb is one transaction on k, of type `type`,
 * and returns what its steps return (see above) or the answer below.
 */
/* ks_member_put flags: */
#define KS_MEMBER_NX   1u /* a present member is -EEXIST (HSETNX) */
#define KS_MEMBER_KEEP 2u /* a present member stays: nothing is written (SADD) */
/* Put member sub = v, making k if it is missing. 0 and *added (may be
 * NULL): whether the member is new. */
int ks_member_put(struct keyspace *ks, const struct ks_key *k, enum kv_type type, const void *sub,
		  size_t sn, const void *v, size_t vn, unsigned flags, bool *added);
/* Remove member sub; its last member takes k with it (flags:
 * KS_TXN_KEEP_EMPTY). 0, -ENOENT (no key or no such member). */
int ks_member_del(struct keyspace *ks, const struct ks_key *k, enum kv_type type, const void *sub,
		  size_t sn, unsigned flags);
/* Rename member `from` to `to`, keeping its value and replacing a member
 * `to`. 0 (also onto itself: nothing written), -ENOENT (no `from`). */
int ks_member_rename(struct keyspace *ks, const struct ks_key *k, enum kv_type type,
		     const void *from, size_t fn, const void *to, size_t tn);

#endif
