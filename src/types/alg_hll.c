/*
 * alg_hll: Redis's HyperLogLog, dense representation, written from the
 * description in Redis's hyperloglog.c so that registers and counts are
 * identical to Redis's for the same items. Layer: algorithms.
 */
#include "types/alg_hll.h"

#include <math.h>

uint64_t hll_dense_murmur64a(const void *key, size_t len, uint32_t seed)
{
	const uint64_t m = 0xc6a4a7935bd1e995ULL;
	const int r = 47;
	const uint8_t *data = key;
	const uint8_t *end = data + (len - (len & 7));
	/* Redis passes the length as an int; items are far below 2^31. */
	uint64_t h = seed ^ ((uint64_t)(int)len * m);

	while (data != end) {
		uint64_t k = 0;
		for (int i = 7; i >= 0; i--)
			k = (k << 8) | data[i];
		k *= m;
		k ^= k >> r;
		k *= m;
		h ^= k;
		h *= m;
		data += 8;
	}
	/* The 1 to 7 bytes left, little-endian (the reference's falling
	 * switch). */
	for (size_t i = 0; i < (len & 7); i++)
		h ^= (uint64_t)data[i] << (8 * i);
	if (len & 7)
		h *= m;
	h ^= h >> r;
	h *= m;
	h ^= h >> r;
	return h;
}

void hll_dense_pat_len(const void *item, size_t len, uint32_t *index, uint8_t *value)
{
	uint64_t hash = hll_dense_murmur64a(item, len, HLL_SEED);
	*index = (uint32_t)(hash & (HLL_REGISTERS - 1));
	hash >>= HLL_P;
	hash |= (uint64_t)1 << HLL_Q; /* the loop ends by bit Q at the latest */
	uint8_t count = 1;
	while (!(hash & 1)) {
		count++;
		hash >>= 1;
	}
	*value = count;
}

uint8_t hll_dense_get(const uint8_t *regs, uint32_t r)
{
	size_t byte = (size_t)r * HLL_BITS / 8;
	unsigned fb = (r * HLL_BITS) & 7, fb8 = 8 - fb;
	unsigned b0 = regs[byte];
	unsigned b1 = byte + 1 < HLL_DENSE_BYTES ? regs[byte + 1] : 0;
	return (uint8_t)(((b0 >> fb) | (b1 << fb8)) & HLL_REGISTER_MAX);
}

void hll_dense_set(uint8_t *regs, uint32_t r, uint8_t v)
{
	size_t byte = (size_t)r * HLL_BITS / 8;
	unsigned fb = (r * HLL_BITS) & 7, fb8 = 8 - fb;
	regs[byte] &= (uint8_t) ~(HLL_REGISTER_MAX << fb);
	regs[byte] |= (uint8_t)(v << fb);
	if (byte + 1 < HLL_DENSE_BYTES) {
		regs[byte + 1] &= (uint8_t) ~(HLL_REGISTER_MAX >> fb8);
		regs[byte + 1] |= (uint8_t)(v >> fb8);
	}
}

int hll_dense_add(uint8_t *regs, const void *item, size_t len)
{
	uint32_t index;
	uint8_t v;
	hll_dense_pat_len(item, len, &index, &v);
	if (hll_dense_get(regs, index) >= v)
		return 0;
	hll_dense_set(regs, index, v);
	return 1;
}

int hll_dense_merge(uint8_t *dst, const uint8_t *src)
{
	int changed = 0;
	for (uint32_t r = 0; r < HLL_REGISTERS; r++) {
		uint8_t v = hll_dense_get(src, r);
		if (v > hll_dense_get(dst, r)) {
			hll_dense_set(dst, r, v);
			changed = 1;
		}
	}
	return changed;
}

/* Ertl's sigma and tau, computed exactly as Redis does (same order of
 * floating-point operations, so the same rounding). */
static double hll_sigma(double x)
{
	if (x == 1.)
		return INFINITY;
	double zp, y = 1, z = x;
	do {
		x *= x;
		zp = z;
		z += x * y;
		y += y;
	} while (zp != z);
	return z;
}

static double hll_tau(double x)
{
	if (x == 0. || x == 1.)
		return 0.;
	double zp, y = 1.0, z = 1 - x;
	do {
		x = sqrt(x);
		zp = z;
		y *= 0.5;
		z -= pow(1 - x, 2) * y;
	} while (zp != z);
	return z / 3;
}

uint64_t hll_dense_count(const uint8_t *regs)
{
	const double alpha_inf = 0.721347520444481703680; /* 1 / (2 ln 2) */
	int histo[64] = {0};
	double m = HLL_REGISTERS;

	for (uint32_t r = 0; r < HLL_REGISTERS; r++)
		histo[hll_dense_get(regs, r)]++;
	double z = m * hll_tau((m - histo[HLL_Q + 1]) / m);
	for (int j = HLL_Q; j >= 1; --j) {
		z += histo[j];
		z *= 0.5;
	}
	z += m * hll_sigma(histo[0] / m);
	return (uint64_t)llroundl(alpha_inf * m * m / z);
}
