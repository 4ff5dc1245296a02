/*
 * alg_bloom: the split-block Bloom filter Kvrocks uses (the Parquet /
 * Impala design, kvrocks-encoding.md 6.10): XXH64 (seed 0) of the item
 * picks a 32-byte block of eight 32-bit words (host order, little-endian
 * here) and sets one bit in each word; sizing and the capacity of a
 * scaling chain. Pure: no storage. Layer: algorithms (may include util only).
 */
#ifndef KVFS_ALG_BLOOM_H
#define KVFS_ALG_BLOOM_H

#include "engine/util.h"

#define SBBF_BLOCK_BYTES 32
#define SBBF_MIN_BYTES	 32u
#define SBBF_MAX_BYTES	 (128u * 1024 * 1024)

/* The hash of an item (XXH64, seed 0). */
uint64_t sbbf_hash(const void *item, size_t len);
/* Bytes of a filter for `capacity` items at false-positive rate `fpp`:
 * bits = -8 n / ln(1 - fpp^(1/8)), clamped to [256, 2^30] and rounded up
 * to a power of two; a power of two from 32 to 128 MiB. */
uint32_t sbbf_filter_bytes(uint32_t capacity, double fpp);
/* Capacity of filter i of a chain: base * expansion^i (expansion 0: base),
 * saturated at UINT32_MAX. */
uint32_t sbbf_filter_capacity(uint32_t base, uint16_t expansion, uint32_t i);
/* Capacity of a chain of n filters: base (expansion 0), base * n
 * (expansion 1), else base * (1 - e^n) / (1 - e). */
uint64_t sbbf_chain_capacity(uint32_t base, uint16_t expansion, uint32_t n);
/* The block (index) and the eight bit numbers (0..31, one per word) an
 * item with hash h sets in a filter of `bytes` bytes. */
uint32_t sbbf_block_of(uint64_t h, uint32_t bytes);
void sbbf_bits_of(uint64_t h, uint8_t bits[8]);
/* Set / test the item with hash h in a filter of `bytes` bytes (a
 * multiple of 32). find: true if all eight bits are set. insert: true if
 * a bit changed. */
bool sbbf_find(const uint8_t *filter, uint32_t bytes, uint64_t h);
bool sbbf_insert(uint8_t *filter, uint32_t bytes, uint64_t h);

#endif
