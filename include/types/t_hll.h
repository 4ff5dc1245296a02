/*
 * t_hll: Kvrocks's HyperLogLog type (PFADD, PFCOUNT, PFMERGE) and the
 * whole-state access the file system needs. Layout (kvrocks-encoding.md
 * 6.11): metadata type 11, size 0, tail encode_type u8 = 0 (dense); one
 * sub-key per segment in the default CF, ns|key_len|key|version|"0".."15"
 * (decimal ASCII) -> exactly 768 bytes = 1024 six-bit registers; a
 * missing segment is all zeros. Segments 0..15 concatenated are Redis's
 * 12288-byte dense register array. HyperLogLog is "emptyable": a key
 * without registers is a live key. Layer: types.
 * All verbs return 0 or a negative errno: -ENOENT, -KV_EWRONGTYPE,
 * -EINVAL, -EUCLEAN (encode_type not 0, a segment not 768 bytes), -EROFS,
 * -ENOMEM, -EIO.
 */
#ifndef KVFS_T_HLL_H
#define KVFS_T_HLL_H

#include <sys/uio.h>

#include "types/alg_hll.h"
#include "keyspace/keyspace.h"

#define HLL_SEGMENTS	  16
#define HLL_SEGMENT_BYTES (HLL_DENSE_BYTES / HLL_SEGMENTS) /* 768 */

/* PFADD of n items (n may be 0: creates the key, as PFADD key does).
 * Creates a missing key (dropping its empty-collection record in the same
 * batch); writes only the segments that changed. *changed (may be NULL) =
 * PFADD's answer: a register changed or the key was created. */
int hll_add(struct keyspace *ks, const struct ks_key *k, const struct iovec *items, size_t n,
	    bool *changed);
/* PFCOUNT of one key or the union of n >= 1 keys; missing keys are empty. */
int hll_count(struct keyspace *ks, const struct ks_key *keys, size_t n, uint64_t *count);
/* PFMERGE: dst becomes the union of itself and the n sources (created if
 * missing). Sources are read without their locks; dst's lock is held. */
int hll_merge(struct keyspace *ks, const struct ks_key *dst, const struct ks_key *srcs, size_t n);
/* The whole register array (HLL_DENSE_BYTES bytes into regs). -ENOENT for
 * a missing key. */
int hll_registers(struct keyspace *ks, const struct ks_key *k, uint8_t *regs);
/* Replace the whole register array (n must be HLL_DENSE_BYTES, else
 * -EINVAL, logged). Creates a missing key; writes only changed segments
 * (a segment that becomes all zeros is deleted). */
int hll_set_registers(struct keyspace *ks, const struct ks_key *k, const void *regs, size_t n);

/* For t_convert: k, read in transaction t and renewed there as a
 * hyperloglog (ks_txn_renew), gets these registers (n must be
 * HLL_DENSE_BYTES), its non-zero segments stored; then t commits. 0, what
 * ks_txn_commit returns, or -EINVAL (logged) with nothing staged. */
struct ks_txn;
int hll_txn_create(struct ks_txn *t, const struct ks_key *k, const void *regs, size_t n);

#endif
