/*
 * alg_hll: the HyperLogLog core of Redis (hyperloglog.c), dense form only:
 * MurmurHash64A with seed 0xadc83b19, 16384 six-bit registers packed
 * LSB-first (register r at bit 6r), and Redis's cardinality estimator
 * (register histogram with the sigma/tau corrections of Ertl's paper).
 * Pure: no storage. Layer: algorithms (may include util only).
 */
#ifndef KVFS_ALG_HLL_H
#define KVFS_ALG_HLL_H

#include "engine/util.h"

#define HLL_P		 14
#define HLL_Q		 (64 - HLL_P)  /* 50 */
#define HLL_REGISTERS	 (1u << HLL_P) /* 16384 */
#define HLL_BITS	 6
#define HLL_REGISTER_MAX 63
#define HLL_DENSE_BYTES	 (HLL_REGISTERS * HLL_BITS / 8) /* 12288 */
#define HLL_SEED	 0xadc83b19u

/* Redis's MurmurHash64A (little-endian 8-byte reads). */
uint64_t hll_dense_murmur64a(const void *key, size_t len, uint32_t seed);
/* The register an item lands in and the value it offers (1..51). */
void hll_dense_pat_len(const void *item, size_t len, uint32_t *index, uint8_t *value);
/* Register r of a dense array of HLL_DENSE_BYTES bytes. */
uint8_t hll_dense_get(const uint8_t *regs, uint32_t r);
void hll_dense_set(uint8_t *regs, uint32_t r, uint8_t v);
/* PFADD of one item into a dense array: 1 if a register grew, else 0. */
int hll_dense_add(uint8_t *regs, const void *item, size_t len);
/* PFMERGE: raise every register of dst to src's where src's is larger.
 * 1 if dst changed, else 0. */
int hll_dense_merge(uint8_t *dst, const uint8_t *src);
/* Redis's hllCount of a dense array (what PFCOUNT answers). */
uint64_t hll_dense_count(const uint8_t *regs);

#endif
