/*
 * t_hll: Kvrocks's HyperLogLog (kvrocks-encoding.md 6.11). Layer: types.
 *
 *   metadata CF  ns|key -> flags 0x8b | expire u64 | version u64 | size u64 (0)
 *                          | encode_type u8 (0 = dense; anything else: -EUCLEAN)
 *   default CF   ns|key_len u32|key|version u64|"0".."15" -> 768 bytes
 *                (registers 1024 s .. 1024 s + 1023 of the dense array)
 *
 * Every mutation reads the registers, changes them in memory and writes
 * the changed segments and (for a new key) the metadata in one
 * transaction (ks_txn.h). The registers and the estimator are alg_hll's.
 */
#include "types/t_hll.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* Stage segment s of k (NULL: delete it) in t. */
static void seg_stage(struct ks_txn *t, const struct ks_key *k, int s, const uint8_t *seg)
{
	char sub[4];
	int n = snprintf(sub, sizeof(sub), "%d", s);
	if (seg)
		ks_txn_sub_put(t, k, STORE_CF_DEFAULT, sub, (size_t)n, seg, HLL_SEGMENT_BYTES);
	else
		ks_txn_sub_del(t, k, STORE_CF_DEFAULT, sub, (size_t)n);
}

/* The segment number a sub-key spells ("0".."15"), or -1. */
static int seg_of(const char *s, size_t n)
{
	uint64_t v;
	if (n == 0 || n > 2 || (n == 2 && s[0] == '0') || parse_u64(s, n, &v) || v >= HLL_SEGMENTS)
		return -1;
	return (int)v;
}

/* Is m the metadata of a dense HLL (the only form kvfs reads)? 0,
 * -EUCLEAN. */
static int meta_check(const struct ks_key *k, const struct enc_meta *m)
{
	if (m->tail_len < 1 || m->tail[0] != 0)
		return ks_corrupt(k, "hyperloglog encode_type %d is not the dense form (0)",
				  m->tail_len ? m->tail[0] : -1);
	return 0;
}

/* Metadata of an HLL key: 0, -ENOENT, -KV_EWRONGTYPE, -EUCLEAN. */
static int meta_get(struct keyspace *ks, const struct ks_key *k)
{
	uint8_t tail[1];
	struct enc_meta m;
	int rc = ks_meta_copy(ks, k, KV_TYPE_HLL, &m, tail, sizeof(tail));
	return rc ? rc : meta_check(k, &m);
}

/* Read the registers of the key's current version into regs (zeros
 * first). */
static int regs_read(struct keyspace *ks, const struct ks_key *k, uint8_t *regs)
{
	int rc = 0;
	const char *sub, *v;
	size_t sn, vn;
	memset(regs, 0, HLL_DENSE_BYTES);
	struct ks_sub_iter *it = ks_sub_iter_new(ks, k, KV_TYPE_HLL, NULL, 0, &rc);
	if (!it)
		return rc ? rc : -ENOMEM;
	while ((rc = ks_sub_iter_next(it, &sub, &sn, &v, &vn)) > 0) {
		int s = seg_of(sub, sn);
		if (s < 0)
			continue; /* not a segment: garbage Kvrocks would not read either */
		if (vn != HLL_SEGMENT_BYTES) {
			rc = ks_corrupt(k, "hyperloglog segment %d holds %zu bytes, not %d", s, vn,
					HLL_SEGMENT_BYTES);
			break;
		}
		memcpy(regs + (size_t)s * HLL_SEGMENT_BYTES, v, vn);
	}
	ks_sub_iter_free(it);
	return rc < 0 ? rc : 0;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/*
 * Under k's lock: read the key (or start a new one), let `change` alter
 * the registers, and write what changed in one batch. *changed = a
 * register changed or the key was created.
 */
typedef int (*regs_change_fn)(uint8_t *regs, void *arg);

static int regs_update(struct keyspace *ks, const struct ks_key *k, regs_change_fn change,
		       void *arg, bool *changed)
{
	static const uint8_t dense = 0; /* a new key's tail: encode_type */
	struct ks_txn t;
	struct enc_meta *m;
	bool any = false;
	uint8_t *old = malloc(HLL_DENSE_BYTES), *regs = malloc(HLL_DENSE_BYTES);

	if (!old || !regs) {
		free(old);
		free(regs);
		return -ENOMEM;
	}
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_HLL, &m);
	bool fresh = !rc && ks_txn_is_new(&t, k);
	if (!rc && !fresh)
		rc = meta_check(k, m);
	if (!rc && !fresh)
		rc = regs_read(ks, k, old);
	if (fresh)
		memset(old, 0, HLL_DENSE_BYTES);
	if (!rc) {
		memcpy(regs, old, HLL_DENSE_BYTES);
		rc = change(regs, arg);
	}
	for (int s = 0; s < HLL_SEGMENTS && !rc; s++) {
		const uint8_t *seg = regs + (size_t)s * HLL_SEGMENT_BYTES;
		if (!memcmp(seg, old + (size_t)s * HLL_SEGMENT_BYTES, HLL_SEGMENT_BYTES))
			continue;
		any = true;
		seg_stage(&t, k, s, all_zero(seg, HLL_SEGMENT_BYTES) ? NULL : seg);
	}
	if (!rc && fresh)
		ks_txn_meta_put(&t, k, &dense, 1);
	if (!rc && (any || fresh))
		rc = ks_txn_commit(&t);
	if (!rc && changed)
		*changed = any || fresh;
	free(old);
	free(regs);
	return ks_txn_end(&t, rc);
}

struct add_arg {
	const struct iovec *items;
	size_t n;
};

static int add_change(uint8_t *regs, void *arg)
{
	struct add_arg *a = arg;
	for (size_t i = 0; i < a->n; i++)
		hll_dense_add(regs, a->items[i].iov_base, a->items[i].iov_len);
	return 0;
}

int hll_add(struct keyspace *ks, const struct ks_key *k, const struct iovec *items, size_t n,
	    bool *changed)
{
	struct add_arg a = {items, n};
	return regs_update(ks, k, add_change, &a, changed);
}

/* Registers of a key for reading: zeros for a missing key. */
static int regs_get(struct keyspace *ks, const struct ks_key *k, uint8_t *regs)
{
	int rc = meta_get(ks, k);
	if (rc == -ENOENT) {
		memset(regs, 0, HLL_DENSE_BYTES);
		return 0;
	}
	return rc ? rc : regs_read(ks, k, regs);
}

/* Union of n keys into u (zeros first). */
static int regs_union(struct keyspace *ks, const struct ks_key *keys, size_t n, uint8_t *u)
{
	uint8_t *one = malloc(HLL_DENSE_BYTES);
	int rc = 0;
	if (!one)
		return -ENOMEM;
	memset(u, 0, HLL_DENSE_BYTES);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = regs_get(ks, &keys[i], one);
		if (!rc)
			hll_dense_merge(u, one);
	}
	free(one);
	return rc;
}

int hll_count(struct keyspace *ks, const struct ks_key *keys, size_t n, uint64_t *count)
{
	if (n == 0)
		return -EINVAL;
	uint8_t *u = malloc(HLL_DENSE_BYTES);
	if (!u)
		return -ENOMEM;
	int rc = regs_union(ks, keys, n, u);
	if (!rc)
		*count = hll_dense_count(u);
	free(u);
	return rc;
}

static int merge_change(uint8_t *regs, void *arg)
{
	hll_dense_merge(regs, arg);
	return 0;
}

int hll_merge(struct keyspace *ks, const struct ks_key *dst, const struct ks_key *srcs, size_t n)
{
	uint8_t *u = malloc(HLL_DENSE_BYTES);
	if (!u)
		return -ENOMEM;
	int rc = regs_union(ks, srcs, n, u);
	if (!rc)
		rc = regs_update(ks, dst, merge_change, u, NULL);
	free(u);
	return rc;
}

int hll_registers(struct keyspace *ks, const struct ks_key *k, uint8_t *regs)
{
	int rc = meta_get(ks, k);
	return rc ? rc : regs_read(ks, k, regs);
}

static int set_change(uint8_t *regs, void *arg)
{
	memcpy(regs, arg, HLL_DENSE_BYTES);
	return 0;
}

static int check_size(const struct ks_key *k, size_t n)
{
	if (n == HLL_DENSE_BYTES)
		return 0;
	LOG_ERR("hyperloglog '%.*s': registers are %d bytes (Redis's dense array), not %zu",
		(int)k->klen, k->key, HLL_DENSE_BYTES, n);
	return -EINVAL;
}

int hll_txn_create(struct ks_txn *t, const struct ks_key *k, const void *regs, size_t n)
{
	static const uint8_t dense = 0; /* the tail: encode_type */
	int rc = check_size(k, n);
	if (rc)
		return rc;
	for (int s = 0; s < HLL_SEGMENTS; s++) {
		const uint8_t *seg = (const uint8_t *)regs + (size_t)s * HLL_SEGMENT_BYTES;
		if (!all_zero(seg, HLL_SEGMENT_BYTES))
			seg_stage(t, k, s, seg);
	}
	ks_txn_meta_put(t, k, &dense, 1);
	return ks_txn_commit(t);
}

int hll_set_registers(struct keyspace *ks, const struct ks_key *k, const void *regs, size_t n)
{
	int rc = check_size(k, n);
	if (rc)
		return rc;
	return regs_update(ks, k, set_change, (void *)regs, NULL);
}
