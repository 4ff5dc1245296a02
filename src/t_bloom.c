/*
 * t_bloom: Kvrocks's scalable bloom filter (kvrocks-encoding.md 6.10).
 * Layer: types.
 *
 *   metadata CF  ns|key -> flags 0x89 | expire u64 | version u64 | size u64 (items)
 *                          | n_filters u16 | expansion u16 | base_capacity u32
 *                          | error_rate (sortable double, 8) | bloom_bytes u32
 *   default CF   ns|key_len u32|key|version u64|i u16 BE -> filter i
 *
 * Filter i holds capacity base_capacity * expansion^i at error_rate; its
 * size is bloom_filter_bytes() of that. An add checks every filter
 * (newest first), appends a filter when the chain's capacity is reached
 * (a non-scaling chain is full instead) and inserts into the last one.
 * Every mutation is one batch under the key's lock.
 */
#include "t_bloom.h"

#include "store.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#define TAIL_LEN 20

uint64_t bloom_state_capacity(const struct bloom_state *st)
{
	return bloom_chain_capacity(st->base_capacity, st->expansion, st->n_filters);
}

int bloom_check_params(uint32_t capacity, double error_rate, const char *what)
{
	if (capacity < 1) {
		LOG_ERR("%s: a bloom filter's capacity must be at least 1", what);
		return -EINVAL;
	}
	if (!(error_rate > 0 && error_rate < 1)) {
		LOG_ERR(
		    "%s: a bloom filter's error rate must be between 0 and 1 (exclusive), not %g",
		    what, error_rate);
		return -EINVAL;
	}
	return 0;
}

static uint32_t filter_bytes(const struct bloom_state *st, uint32_t i)
{
	return bloom_filter_bytes(bloom_filter_capacity(st->base_capacity, st->expansion, i),
				  st->error_rate);
}

static int filter_key(struct keyspace *ks, const struct ks_key *k, uint64_t version, uint32_t i,
		      struct buf *out)
{
	uint8_t sub[2];
	put_be16(sub, (uint16_t)i);
	buf_reset(out);
	return ks_sub_key(ks, k, version, sub, sizeof(sub), out);
}

/* Metadata of a bloom key, its parameters checked but not its chain
 * (see meta_get): 0, -ENOENT, -KV_EWRONGTYPE, -EUCLEAN. */
static int meta_read(struct keyspace *ks, const struct ks_key *k, struct buf *raw,
		     struct enc_meta *m, struct bloom_state *st)
{
	int rc = ks_meta_get(ks, k, KV_TYPE_BLOOM, raw, m);
	if (rc)
		return rc;
	if (m->tail_len < TAIL_LEN)
		return ks_corrupt(k, "bloom metadata tail of %zu bytes, not %d", m->tail_len,
				  TAIL_LEN);
	st->size = m->size;
	st->n_filters = get_be16(m->tail);
	st->expansion = get_be16(m->tail + 2);
	st->base_capacity = get_be32(m->tail + 4);
	st->error_rate = enc_sortable_to_double(get_be64(m->tail + 8));
	st->bloom_bytes = get_be32(m->tail + 16);
	/* Every loop and allocation of a chain is sized by n_filters and the
	 * parameters: they must give exactly the bloom_bytes stored (at most
	 * 4 GiB), or a planted n_filters would load terabytes of zeros. */
	if (st->n_filters == 0 || st->base_capacity == 0 ||
	    !(st->error_rate > 0 && st->error_rate < 1))
		return ks_corrupt(k, "bloom with %u filters, capacity %u, error rate %g",
				  st->n_filters, st->base_capacity, st->error_rate);
	return 0;
}

/* Metadata of a bloom key, its chain checked against bloom_bytes (one
 * step per filter): 0, -ENOENT, -KV_EWRONGTYPE, -EUCLEAN. */
static int meta_get(struct keyspace *ks, const struct ks_key *k, struct buf *raw,
		    struct enc_meta *m, struct bloom_state *st)
{
	int rc = meta_read(ks, k, raw, m, st);
	if (rc)
		return rc;
	uint64_t total = 0;
	for (uint32_t i = 0; i < st->n_filters && total <= st->bloom_bytes; i++)
		total += filter_bytes(st, i);
	if (total != st->bloom_bytes)
		return ks_corrupt(k,
				  "bloom of %u filters stores bloom_bytes %u; they take %s%" PRIu64,
				  st->n_filters, st->bloom_bytes,
				  total > st->bloom_bytes ? "at least " : "", total);
	return 0;
}

static int meta_put(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
		    struct enc_meta *m, const struct bloom_state *st)
{
	uint8_t tail[TAIL_LEN];
	put_be16(tail, st->n_filters);
	put_be16(tail + 2, st->expansion);
	put_be32(tail + 4, st->base_capacity);
	put_be64(tail + 8, enc_double_to_sortable(st->error_rate));
	put_be32(tail + 16, st->bloom_bytes);
	m->size = st->size;
	return ks_batch_put_meta(ks, b, k, m, tail, sizeof(tail));
}

/* Read filter i of version `version` into out: the stored bytes, or
 * zeros of its expected size when missing. */
static int filter_read(struct keyspace *ks, const struct ks_key *k, uint64_t version,
		       const struct bloom_state *st, uint32_t i, struct buf *out)
{
	struct buf sk = BUF_INIT;
	int rc = filter_key(ks, k, version, i, &sk);
	if (!rc)
		rc = store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, out);
	buf_release(&sk);
	if (rc == -ENOENT) {
		buf_reset(out);
		return buf_resize(out, filter_bytes(st, i));
	}
	if (!rc && out->len != filter_bytes(st, i))
		rc = ks_corrupt(k, "bloom filter %u holds %zu bytes, not %u", i, out->len,
				filter_bytes(st, i));
	return rc;
}

static void new_state(struct bloom_state *st, uint32_t capacity, double error_rate,
		      uint16_t expansion)
{
	st->size = 0;
	st->n_filters = 1;
	st->expansion = expansion;
	st->base_capacity = capacity;
	st->error_rate = error_rate;
	st->bloom_bytes = filter_bytes(st, 0);
}

/* Put a fresh chain (metadata, one zero filter) at k into b. */
static int batch_create(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			struct enc_meta *m, const struct bloom_state *st, uint64_t expire_ms)
{
	struct buf sk = BUF_INIT, zero = BUF_INIT;
	ks_meta_new(ks, m, KV_TYPE_BLOOM);
	m->expire_ms = expire_ms;
	int rc = filter_key(ks, k, m->version, 0, &sk);
	if (!rc)
		rc = buf_resize(&zero, st->bloom_bytes);
	if (!rc) {
		store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, zero.data, zero.len);
		rc = meta_put(ks, b, k, m, st);
	}
	if (!rc)
		rc = ks_batch_empty_del(ks, b, k);
	buf_release(&sk);
	buf_release(&zero);
	return rc;
}

int bloom_reserve(struct keyspace *ks, const struct ks_key *k, uint32_t capacity, double error_rate,
		  uint16_t expansion)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b;
	struct enc_meta m;
	struct bloom_state st;
	int rc = bloom_check_params(capacity, error_rate, "BF.RESERVE");
	if (rc)
		return rc;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_NONE, &raw, &m);
	if (rc == 0)
		rc = -EEXIST;
	if (rc == -ENOENT) {
		new_state(&st, capacity, error_rate, expansion);
		rc = batch_create(ks, b, k, &m, &st, 0);
		if (!rc)
			rc = ks_write(ks, b);
	}
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

/* A chain loaded whole: its filters in memory, which ones changed. */
struct chain {
	struct bloom_state st;
	struct enc_meta m;
	struct buf raw;
	struct buf *f;
	bool *dirty;
	uint32_t n, cap;
	bool fresh;
};

static void chain_release(struct chain *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		buf_release(&c->f[i]);
	free(c->f);
	free(c->dirty);
	buf_release(&c->raw);
}

static int chain_grow(struct chain *c)
{
	if (c->n == c->cap) {
		uint32_t cap = c->cap ? 2 * c->cap : 4;
		struct buf *f = realloc(c->f, cap * sizeof(*f));
		if (!f)
			return -ENOMEM;
		c->f = f;
		bool *d = realloc(c->dirty, cap * sizeof(*d));
		if (!d)
			return -ENOMEM;
		c->dirty = d;
		c->cap = cap;
	}
	buf_init(&c->f[c->n]);
	c->dirty[c->n] = false;
	c->n++;
	return 0;
}

/* Load k's chain (-ENOENT if missing, unless `create`: then a default
 * chain with one zero filter, fresh). */
static int chain_load(struct keyspace *ks, const struct ks_key *k, struct chain *c, bool create)
{
	memset(c, 0, sizeof(*c));
	buf_init(&c->raw);
	int rc = meta_get(ks, k, &c->raw, &c->m, &c->st);
	if (rc == -ENOENT && create) {
		new_state(&c->st, BLOOM_DEFAULT_CAPACITY, BLOOM_DEFAULT_ERROR_RATE,
			  BLOOM_DEFAULT_EXPANSION);
		ks_meta_new(ks, &c->m, KV_TYPE_BLOOM);
		c->fresh = true;
		rc = chain_grow(c);
		if (!rc) {
			rc = buf_resize(&c->f[0], c->st.bloom_bytes);
			c->dirty[0] = true;
		}
		return rc;
	}
	for (uint32_t i = 0; !rc && i < c->st.n_filters; i++) {
		rc = chain_grow(c);
		if (!rc)
			rc = filter_read(ks, k, c->m.version, &c->st, i, &c->f[i]);
	}
	return rc;
}

static bool chain_find(const struct chain *c, uint64_t h)
{
	for (uint32_t i = c->n; i-- > 0;)
		if (bloom_find((const uint8_t *)c->f[i].data, (uint32_t)c->f[i].len, h))
			return true;
	return false;
}

static int chain_write(struct keyspace *ks, const struct ks_key *k, struct chain *c)
{
	struct buf sk = BUF_INIT;
	struct store_batch *b = store_batch_new(ks_store(ks));
	int rc = b ? 0 : -ENOMEM;
	for (uint32_t i = 0; !rc && i < c->n; i++) {
		if (!c->dirty[i])
			continue;
		rc = filter_key(ks, k, c->m.version, i, &sk);
		if (!rc)
			store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, c->f[i].data,
					c->f[i].len);
	}
	if (!rc)
		rc = meta_put(ks, b, k, &c->m, &c->st);
	if (!rc && c->fresh)
		rc = ks_batch_empty_del(ks, b, k);
	if (!rc)
		rc = ks_write(ks, b);
	store_batch_free(b);
	buf_release(&sk);
	return rc;
}

int bloom_add(struct keyspace *ks, const struct ks_key *k, const struct iovec *items, size_t n,
	      int *added)
{
	struct chain c;
	bool any = false;
	ks_lock(ks, k);
	int rc = chain_load(ks, k, &c, true);
	for (size_t j = 0; !rc && j < n; j++) {
		uint64_t h = bloom_hash(items[j].iov_base, items[j].iov_len);
		if (chain_find(&c, h)) {
			if (added)
				added[j] = 0;
			continue;
		}
		if (c.st.size + 1 > bloom_state_capacity(&c.st)) {
			uint32_t bytes = filter_bytes(&c.st, c.n);
			if (c.st.expansion == 0 || c.n >= UINT16_MAX ||
			    (uint64_t)c.st.bloom_bytes + bytes > UINT32_MAX) {
				LOG_ERR("bloom '%.*s' is full (%" PRIu64 " items%s)", (int)k->klen,
					k->key, c.st.size, c.st.expansion ? "" : ", non-scaling");
				rc = -ENOSPC;
				break;
			}
			rc = chain_grow(&c);
			if (!rc)
				rc = buf_resize(&c.f[c.n - 1], bytes);
			if (rc)
				break;
			c.dirty[c.n - 1] = true;
			c.st.n_filters++;
			c.st.bloom_bytes += bytes;
		}
		struct buf *last = &c.f[c.n - 1];
		bloom_insert((uint8_t *)last->data, (uint32_t)last->len, h);
		c.dirty[c.n - 1] = true;
		c.st.size++;
		any = true;
		if (added)
			added[j] = 1;
	}
	if (!rc && (any || c.fresh))
		rc = chain_write(ks, k, &c);
	ks_unlock(ks, k);
	chain_release(&c);
	return rc;
}

int bloom_exists(struct keyspace *ks, const struct ks_key *k, const struct iovec *items, size_t n,
		 int *found)
{
	struct chain c;
	int rc = chain_load(ks, k, &c, false);
	if (rc == -ENOENT) {
		memset(found, 0, n * sizeof(*found));
		rc = 0;
	} else if (!rc) {
		for (size_t j = 0; j < n; j++)
			found[j] = chain_find(&c, bloom_hash(items[j].iov_base, items[j].iov_len));
	}
	chain_release(&c);
	return rc;
}

int bloom_info(struct keyspace *ks, const struct ks_key *k, struct bloom_state *st)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = meta_get(ks, k, &raw, &m, st);
	buf_release(&raw);
	return rc;
}

int bloom_params(struct keyspace *ks, const struct ks_key *k, struct bloom_state *st)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = meta_read(ks, k, &raw, &m, st);
	buf_release(&raw);
	return rc;
}

int bloom_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	struct bloom_state st;
	int rc = bloom_info(ks, k, &st);
	*n = rc ? 0 : st.size;
	return rc == -ENOENT ? 0 : rc;
}

int bloom_filter(struct keyspace *ks, const struct ks_key *k, uint32_t i, struct buf *out)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	struct bloom_state st;
	int rc = meta_get(ks, k, &raw, &m, &st);
	if (!rc && i >= st.n_filters)
		rc = -ENOENT;
	if (!rc)
		rc = filter_read(ks, k, m.version, &st, i, out);
	buf_release(&raw);
	return rc;
}

int bloom_set_filter(struct keyspace *ks, const struct ks_key *k, uint32_t i, const void *d,
		     size_t n)
{
	struct buf raw = BUF_INIT, sk = BUF_INIT;
	struct store_batch *b = store_batch_new(ks_store(ks));
	struct enc_meta m;
	struct bloom_state st;
	if (!b)
		return -ENOMEM;
	ks_lock(ks, k);
	int rc = meta_get(ks, k, &raw, &m, &st);
	if (!rc && i >= st.n_filters)
		rc = -ENOENT;
	if (!rc && n != filter_bytes(&st, i)) {
		LOG_ERR("bloom '%.*s': filter %u is %u bytes at these parameters, not %zu",
			(int)k->klen, k->key, i, filter_bytes(&st, i), n);
		rc = -EINVAL;
	}
	if (!rc)
		rc = filter_key(ks, k, m.version, i, &sk);
	if (!rc) {
		store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, d, n);
		rc = ks_write(ks, b);
	}
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&sk);
	return rc;
}

int bloom_clear(struct keyspace *ks, const struct ks_key *k)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = store_batch_new(ks_store(ks));
	struct enc_meta m;
	struct bloom_state st;
	if (!b)
		return -ENOMEM;
	ks_lock(ks, k);
	int rc = meta_get(ks, k, &raw, &m, &st);
	if (!rc) {
		/* A new version: the old filter records are garbage, and a
		 * missing filter reads as zeros of its size. */
		uint64_t expire = m.expire_ms;
		ks_meta_new(ks, &m, KV_TYPE_BLOOM);
		m.expire_ms = expire;
		st.size = 0;
		rc = meta_put(ks, b, k, &m, &st);
	}
	if (!rc)
		rc = ks_write(ks, b);
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

/* Check a whole state (parameters, at least one filter, at most 4 GiB of
 * filters) and set its bloom_bytes. 0 or -EINVAL, logged. */
static int state_check(struct bloom_state *st)
{
	uint64_t total = 0;
	int rc = bloom_check_params(st->base_capacity, st->error_rate, "bloom state");
	if (rc)
		return rc;
	if (st->n_filters == 0) {
		LOG_ERR("bloom state: a chain has at least one filter");
		return -EINVAL;
	}
	for (uint32_t i = 0; i < st->n_filters; i++)
		total += filter_bytes(st, i);
	if (total > UINT32_MAX) {
		LOG_ERR("bloom state: %u filters would take %" PRIu64 " bytes (at most 4 GiB)",
			st->n_filters, total);
		return -EINVAL;
	}
	st->bloom_bytes = (uint32_t)total;
	return 0;
}

int bloom_batch_create(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
		       uint64_t expire_ms, const struct bloom_state *want,
		       const struct iovec *filters)
{
	struct buf sk = BUF_INIT;
	struct enc_meta m;
	struct bloom_state st = *want;
	int rc = state_check(&st);
	for (uint32_t i = 0; !rc && i < st.n_filters; i++) {
		if (filters[i].iov_base && filters[i].iov_len != filter_bytes(&st, i)) {
			LOG_ERR("bloom '%.*s': filter %u is %u bytes at these parameters, not %zu",
				(int)k->klen, k->key, i, filter_bytes(&st, i), filters[i].iov_len);
			rc = -EINVAL;
		}
	}
	if (rc)
		return rc;
	ks_meta_new(ks, &m, KV_TYPE_BLOOM);
	m.expire_ms = expire_ms;
	for (uint32_t i = 0; !rc && i < st.n_filters; i++) {
		if (!filters[i].iov_base)
			continue; /* a missing filter reads as zeros */
		rc = filter_key(ks, k, m.version, i, &sk);
		if (!rc)
			store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, filters[i].iov_base,
					filters[i].iov_len);
	}
	if (!rc)
		rc = meta_put(ks, b, k, &m, &st);
	buf_release(&sk);
	return rc;
}

/* bloom_set_state, or with if_empty bloom_set_params. */
static int set_state(struct keyspace *ks, const struct ks_key *k, const struct bloom_state *want,
		     bool if_empty)
{
	struct buf raw = BUF_INIT, sk = BUF_INIT, zero = BUF_INIT;
	struct store_batch *b;
	struct enc_meta m;
	struct bloom_state old = {0}, st = *want;
	bool fresh = false;
	int rc = state_check(&st);
	if (rc)
		return rc;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = meta_get(ks, k, &raw, &m, &old);
	if (rc == -ENOENT) {
		ks_meta_new(ks, &m, KV_TYPE_BLOOM);
		fresh = true;
		rc = ks_batch_empty_del(ks, b, k);
	} else if (!rc && if_empty && old.base_capacity == st.base_capacity &&
		   old.error_rate == st.error_rate && old.expansion == st.expansion) {
		goto out; /* the parameters it has: nothing to do */
	} else if (!rc && if_empty && old.size) {
		LOG_ERR("bloom '%.*s' holds %" PRIu64
			" items; parameters are set on an empty filter",
			(int)k->klen, k->key, old.size);
		rc = -ENOTEMPTY;
	}
	uint32_t top = st.n_filters > old.n_filters ? st.n_filters : old.n_filters;
	for (uint32_t i = 0; !rc && i < top; i++) {
		rc = filter_key(ks, k, m.version, i, &sk);
		if (rc)
			break;
		if (i >= st.n_filters) {
			store_batch_delete(b, STORE_CF_DEFAULT, sk.data, sk.len);
			continue;
		}
		uint32_t bytes = filter_bytes(&st, i);
		if (!fresh && i < old.n_filters && filter_bytes(&old, i) == bytes)
			continue; /* same size: the bits stay */
		buf_reset(&zero);
		rc = buf_resize(&zero, bytes);
		if (!rc)
			store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, zero.data, zero.len);
	}
	if (!rc)
		rc = meta_put(ks, b, k, &m, &st);
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&sk);
	buf_release(&zero);
	return rc;
}

int bloom_set_state(struct keyspace *ks, const struct ks_key *k, const struct bloom_state *want)
{
	return set_state(ks, k, want, false);
}

int bloom_set_params(struct keyspace *ks, const struct ks_key *k, uint32_t capacity,
		     double error_rate, uint16_t expansion)
{
	struct bloom_state st = {.n_filters = 1,
				 .expansion = expansion,
				 .base_capacity = capacity,
				 .error_rate = error_rate};
	return set_state(ks, k, &st, true);
}
