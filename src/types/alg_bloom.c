/*
 * alg_bloom: Kvrocks's split-block Bloom filter (kvrocks-encoding.md
 * 6.10), written from that description. Words are read and written in
 * little-endian byte order explicitly, which is the host order Kvrocks
 * stores on x86-64 and ARM64, so the bytes are the same on any host.
 * Layer: algorithms.
 */
#include "types/alg_bloom.h"

#include <math.h>

static const uint32_t SALT[8] = {0x47b6137bU, 0x44974d91U, 0x8824ad5bU, 0xa2b7289dU,
				 0x705495c7U, 0x2df1424bU, 0x9efc4947U, 0x5c6bfb31U};

uint64_t sbbf_hash(const void *item, size_t len)
{
	return hash_xxh64(item, len, 0);
}

uint32_t sbbf_filter_bytes(uint32_t capacity, double fpp)
{
	const uint64_t max_bits = (uint64_t)SBBF_MAX_BYTES * 8, min_bits = SBBF_MIN_BYTES * 8;
	double m = -8.0 * capacity / log(1 - pow(fpp, 1.0 / 8));
	uint64_t bits = (m < 0 || m > (double)max_bits) ? max_bits : (uint64_t)m;
	if (bits < min_bits)
		bits = min_bits;
	uint64_t p = min_bits;
	while (p < bits)
		p <<= 1;
	if (p > max_bits)
		p = max_bits;
	return (uint32_t)(p / 8);
}

uint32_t sbbf_filter_capacity(uint32_t base, uint16_t expansion, uint32_t i)
{
	double c = base * pow(expansion ? expansion : 1, i);
	return c >= (double)UINT32_MAX ? UINT32_MAX : (uint32_t)c;
}

uint64_t sbbf_chain_capacity(uint32_t base, uint16_t expansion, uint32_t n)
{
	if (expansion == 0)
		return base;
	if (expansion == 1)
		return (uint64_t)base * n;
	double c = base * (1 - pow(expansion, n)) / (1 - expansion);
	return c >= 1.8e19 ? UINT64_MAX : (uint64_t)c;
}

uint32_t sbbf_block_of(uint64_t h, uint32_t bytes)
{
	return (uint32_t)(((h >> 32) * (bytes / SBBF_BLOCK_BYTES)) >> 32);
}

void sbbf_bits_of(uint64_t h, uint8_t bits[8])
{
	uint32_t key = (uint32_t)h;
	for (int i = 0; i < 8; i++)
		bits[i] = (uint8_t)((key * SALT[i]) >> 27);
}

static uint32_t get_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

bool sbbf_find(const uint8_t *filter, uint32_t bytes, uint64_t h)
{
	const uint8_t *block = filter + (size_t)sbbf_block_of(h, bytes) * SBBF_BLOCK_BYTES;
	uint8_t bits[8];
	sbbf_bits_of(h, bits);
	for (int i = 0; i < 8; i++)
		if (!(get_le32(block + 4 * i) & (1U << bits[i])))
			return false;
	return true;
}

bool sbbf_insert(uint8_t *filter, uint32_t bytes, uint64_t h)
{
	uint8_t *block = filter + (size_t)sbbf_block_of(h, bytes) * SBBF_BLOCK_BYTES;
	uint8_t bits[8];
	bool changed = false;
	sbbf_bits_of(h, bits);
	for (int i = 0; i < 8; i++) {
		/* Bit b of a little-endian word is bit b % 8 of byte b / 8. */
		uint8_t *p = block + 4 * i + bits[i] / 8, mask = (uint8_t)(1u << (bits[i] % 8));
		changed |= !(*p & mask);
		*p |= mask;
	}
	return changed;
}
