/*
 * ks_int: what the files of the keyspace layer share and nobody else
 * sees: the keyspace struct, and the records of kvfs's reserved namespace
 * (empty collections, namespace records; layout at the top of
 * src/keyspace/keyspace.c). The types and fs layers never include it
 * (tests/check-layers.sh).
 * Layer: keyspace (keyspace.h, store, encoding, util).
 */
#ifndef KVFS_KS_INT_H
#define KVFS_KS_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include "keyspace/keyspace.h"
#include "engine/store.h"

/*
 * Lock stripes. A key's stripe is hash(ns_len | ns | key) & (KS_LOCKS - 1).
 * Order rule: a thread takes the stripes it needs at once, in ascending
 * stripe index (ks_lock_pair for two keys, ks_lockv for a time series and
 * the destinations of its rules); it never takes a stripe while holding
 * one. Equal stripes are taken once.
 */
#define KS_LOCKS      1024
#define KS_STRIPE_BUF 1024 /* keys up to this hash as ns_len|ns|key directly */

#define RES_NS	      KS_RESERVED_NS
#define RES_NSLEN     (sizeof(KS_RESERVED_NS) - 1)
#define RES_EMPTY     'E'
#define RES_NAMESPACE 'N'
#define RES_TSINDEX   'I' /* "I" -> "": the label index is complete (ks_tsindex.c) */

struct keyspace {
	struct store *st;
	bool cluster;
	_Atomic uint64_t version_counter;
	pthread_mutex_t locks[KS_LOCKS];
	/* Per stripe, under its lock: how many writes committed to its keys,
	 * how many readers wait for one, and where they wait (ks_wait.c). */
	uint64_t gen[KS_LOCKS];
	unsigned waiting[KS_LOCKS];
	pthread_cond_t changed[KS_LOCKS];
	/* The time-series label index (ks_tsindex.c): KS_TSINDEX_* state,
	 * and the lock its first completion holds. */
	_Atomic int tsindex;
	pthread_mutex_t tsindex_lock;
};

/* A key's lock stripe. */
unsigned ks_stripe(const struct ks_key *k);
/* A write to k committed: the generation of its stripe moves and its
 * waiters wake (ks_wait.c). Called with that stripe locked. */
void ks_wait_commit(struct keyspace *ks, const struct ks_key *k);

/* Is ns the reserved namespace? */
bool ks_is_reserved_ns(const void *ns, size_t n);
/* A live (decodable, unexpired) metadata value? m (may be NULL) gets it. */
bool ks_meta_value_live(const void *v, size_t n, uint64_t now, struct enc_meta *m);
/* An iterator over every key of cf that starts with prefix; NULL on ENOMEM. */
struct store_iter *ks_prefix_iter(struct keyspace *ks, enum store_cf cf, const struct buf *prefix);
/* struct ks_info of live metadata m. */
void ks_info_from_meta(struct ks_info *out, const struct enc_meta *m);

/* Reserved records. Metadata-CF key prefix: 06 "__kvfs" tag [ns_len] ns. */
int ks_res_prefix(struct buf *out, char tag, const void *ns, size_t nslen, bool with_len);
/* The bytes that order a user key within its namespace ([slot u16] | key). */
int ks_key_rank(struct keyspace *ks, struct buf *out, const void *key, size_t klen);
/* The name of k's empty-collection record; of namespace ns's record. */
int ks_empty_key(struct keyspace *ks, const struct ks_key *k, struct buf *out);
int ks_ns_record_key(const char *ns, size_t n, struct buf *out);
/* A v1 string metadata value without expiry holding payload, into out. */
int ks_res_value(struct buf *out, const char *payload, size_t n);
/* Read a reserved record: 0 with *m (tail = payload), -ENOENT, <0. */
int ks_res_get(struct keyspace *ks, const struct buf *key, struct buf *raw, struct enc_meta *m);

/* Empty-collection records: the types that can be one; the type, pending
 * expiry (0: none) and whether it passed, of a decoded record. */
bool ks_type_can_be_empty(enum kv_type t);
enum kv_type ks_empty_type(const struct enc_meta *m);
uint64_t ks_empty_expire(const struct enc_meta *m);
bool ks_empty_expired(const struct enc_meta *m, uint64_t now);
/* 0 and *t (and *expire if not NULL) if k is remembered empty, -ENOENT,
 * -EUCLEAN (unknown type, logged), <0; noted in w (may be NULL). */
int ks_empty_get(struct keyspace *ks, struct ks_track *w, const struct ks_key *k, enum kv_type *t,
		 uint64_t *expire);
/* Write k's record as an empty collection of type t with a pending
 * expiry (0: none), and its namespace's record; noted in w. */
int ks_empty_put(struct keyspace *ks, struct store_batch *b, struct ks_track *w,
		 const struct ks_key *k, enum kv_type t, uint64_t expire);

/* The transaction's batch, and the state its commit's records are made
 * from for k (a key it locked), for the keyspace layer's own verbs
 * (ks_keys.c, ks_ns.c), which write reserved records through the
 * ks_track_* and ks_empty_* primitives. The batch is NULL if
 * ks_txn_begin* failed (its error is then sticky). */
struct ks_txn;
struct store_batch *ks_txn_batch(struct ks_txn *t);
struct ks_track *ks_txn_track(struct ks_txn *t, const struct ks_key *k);

#endif
