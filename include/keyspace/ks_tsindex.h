/*
 * ks_tsindex: Kvrocks's time-series label index (the "index" column
 * family: label name = value -> key, docs/encoding.md), which kvfs keeps
 * as Kvrocks does and reads instead of scanning a namespace, once it is
 * known to be complete.
 *
 * Complete means: every label of every time series has its record. kvfs
 * knows that from a marker of its reserved namespace ("I"), written after
 * it made the index complete: at the first label a mount writes, if the
 * marker is missing, ks_tsindex_prepare makes the column family (when the
 * database lacks it), writes the records of every label stored so far
 * (each key under its lock), then the marker. Every later label put of
 * kvfs stages its record in the same batch (ks_txn_ts_index), and is made
 * only after ks_tsindex_prepare, so nothing written after the marker is
 * missing from the index. Records that no longer hold (a deleted,
 * expired, retyped or renamed key; a changed label written by another
 * program) are allowed: readers check every key they find against its own
 * labels, as Kvrocks's TS.MGET/MRANGE do, and the compaction filter drops
 * those of deleted and expired keys (Kvrocks's IndexFilter).
 * Layer: keyspace.
 */
#ifndef KVFS_KS_TSINDEX_H
#define KVFS_KS_TSINDEX_H

#include "keyspace/keyspace.h"

/* Is the index complete and open (the column family and the marker are
 * there)? Answered from the database once per mount, then remembered. */
bool ks_tsindex_ready(struct keyspace *ks);
/*
 * Make the index complete if it is not (see the top); a no-op once it
 * is. Call it before a transaction that puts a label, never with a key
 * lock held (it takes them). 0, -EROFS (read-only or a follower), -ENOMEM,
 * -ENOSPC, -EIO.
 */
int ks_tsindex_prepare(struct keyspace *ks);
/*
 * Call cb(arg, key, klen) for every key of namespace ns that the index
 * lists under label name = value, in key byte order; the key is borrowed
 * for the call; a non-zero return of cb stops and is returned. Reads the
 * latest state. 0, -ENOENT (no index column family), -ENOMEM, -EIO.
 */
int ks_tsindex_keys(struct keyspace *ks, const char *ns, size_t nslen, const void *name, size_t nn,
		    const void *value, size_t vn,
		    int (*cb)(void *arg, const char *key, size_t klen), void *arg);
/* Stage in batch b (of the transaction that renames `from` to `to`, a
 * time series of version `version`) the records of `to` for the labels
 * `from` has, and drop those of `from`: a rename keeps the index right.
 * Nothing when the index is not complete (see ks_rename). 0, -ENOMEM,
 * -EIO. */
struct store_batch;
int ks_tsindex_rename(struct keyspace *ks, struct store_batch *b, const struct ks_key *from,
		      const struct ks_key *to, uint64_t version);
/* Does the time series k (read without a lock) have a label? false for
 * anything else, or on an error. */
bool ks_tsindex_has_labels(struct keyspace *ks, const struct ks_key *k);

#endif
