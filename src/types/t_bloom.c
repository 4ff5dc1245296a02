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
 * size is sbbf_filter_bytes() of that. An add checks every filter
 * (newest first), appends a filter when the chain's capacity is reached
 * (a non-scaling chain is full instead) and inserts into the last one.
 * Every mutation is one transaction (ks_txn.h): one batch under the key's lock.
 */
#include "types/t_bloom.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#define TAIL_LEN 20

uint64_t bloom_state_capacity(const struct bloom_state *st)
{
	return sbbf_chain_capacity(st->base_capacity, st->expansion, st->n_filters);
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
	return sbbf_filter_bytes(sbbf_filter_capacity(st->base_capacity, st->expansion, i),
				 st->error_rate);
}

/* Stage filter i of k (NULL: delete it) in t. */
static void filter_stage(struct ks_txn *t, const struct ks_key *k, uint32_t i, const void *d,
			 size_t n)
{
	uint8_t sub[2];
	put_be16(sub, (uint16_t)i);
	if (d)
		ks_txn_sub_put(t, k, STORE_CF_DEFAULT, sub, sizeof(sub), d, n);
	else
		ks_txn_sub_del(t, k, STORE_CF_DEFAULT, sub, sizeof(sub));
}

/* The parameters of a bloom key from its metadata, checked but not its
 * chain (see chain_check): 0, -EUCLEAN. */
static int state_decode(const struct ks_key *k, const struct enc_meta *m, struct bloom_state *st)
{
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

/* The chain of st checked against its bloom_bytes (one step per filter):
 * 0, -EUCLEAN. */
static int chain_check(const struct ks_key *k, const struct bloom_state *st)
{
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

/* The state of a bloom key from its metadata, its chain checked: 0,
 * -EUCLEAN. */
static int meta_state(const struct ks_key *k, const struct enc_meta *m, struct bloom_state *st)
{
	int rc = state_decode(k, m, st);
	return rc ? rc : chain_check(k, st);
}

/* Metadata of a bloom key (m->tail points into tail) and its state:
 * with chain, its chain checked against bloom_bytes (meta_state), else
 * its parameters only (state_decode). 0, -ENOENT, -KV_EWRONGTYPE,
 * -EUCLEAN. */
static int meta_read(struct keyspace *ks, const struct ks_key *k, bool chain, struct enc_meta *m,
		     uint8_t tail[TAIL_LEN], struct bloom_state *st)
{
	int rc = ks_meta_copy(ks, k, KV_TYPE_BLOOM, m, tail, TAIL_LEN);
	if (rc)
		return rc;
	return chain ? meta_state(k, m, st) : state_decode(k, m, st);
}

static void tail_encode(uint8_t tail[TAIL_LEN], const struct bloom_state *st)
{
	put_be16(tail, st->n_filters);
	put_be16(tail + 2, st->expansion);
	put_be32(tail + 4, st->base_capacity);
	put_be64(tail + 8, enc_double_to_sortable(st->error_rate));
	put_be32(tail + 16, st->bloom_bytes);
}

/* Stage k's metadata for state st; tail (the caller's) holds it until
 * the commit. */
static void meta_stage(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		       const struct bloom_state *st, uint8_t tail[TAIL_LEN])
{
	tail_encode(tail, st);
	m->size = st->size;
	ks_txn_meta_put(t, k, tail, TAIL_LEN);
}

/* Read filter i of version `version` into out: the stored bytes, or
 * zeros of its expected size when missing. */
static int filter_read(struct keyspace *ks, const struct ks_key *k, uint64_t version,
		       const struct bloom_state *st, uint32_t i, struct buf *out)
{
	uint8_t sub[2];
	put_be16(sub, (uint16_t)i);
	int rc = ks_sub_get(ks, k, version, STORE_CF_DEFAULT, sub, sizeof(sub), out);
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

/* A chain loaded whole: its filters in memory, which ones changed. */
struct chain {
	struct bloom_state st;
	struct chain_filter {
		struct buf b;
		bool dirty; /* to be written */
	} * f;
	uint32_t n;
	uint8_t tail[TAIL_LEN]; /* the metadata chain_stage stages */
};

static void chain_release(struct chain *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		buf_release(&c->f[i].b);
	free(c->f);
}

/* Grow c to n filters, the new ones empty and clean. 0, -ENOMEM. */
static int chain_grow(struct chain *c, uint32_t n)
{
	struct chain_filter *f = realloc(c->f, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	c->f = f;
	for (; c->n < n; c->n++) {
		buf_init(&f[c->n].b);
		f[c->n].dirty = false;
	}
	return 0;
}

/* A new chain at state st in c (empty): one zero filter, to be written. */
static int chain_new(struct chain *c, const struct bloom_state *st)
{
	memset(c, 0, sizeof(*c));
	c->st = *st;
	int rc = chain_grow(c, 1);
	if (!rc) {
		rc = buf_resize(&c->f[0].b, c->st.bloom_bytes);
		c->f[0].dirty = true;
	}
	return rc;
}

/* Load the filters of c->st (checked) of version `version` of k. */
static int chain_fill(struct keyspace *ks, const struct ks_key *k, uint64_t version,
		      struct chain *c)
{
	int rc = chain_grow(c, c->st.n_filters);
	for (uint32_t i = 0; !rc && i < c->st.n_filters; i++)
		rc = filter_read(ks, k, version, &c->st, i, &c->f[i].b);
	return rc;
}

static bool chain_find(const struct chain *c, uint64_t h)
{
	for (uint32_t i = c->n; i-- > 0;)
		if (sbbf_find((const uint8_t *)c->f[i].b.data, (uint32_t)c->f[i].b.len, h))
			return true;
	return false;
}

/* Stage the changed filters of c and its metadata in t. */
static void chain_stage(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
			struct chain *c)
{
	for (uint32_t i = 0; i < c->n; i++)
		if (c->f[i].dirty)
			filter_stage(t, k, i, c->f[i].b.data, c->f[i].b.len);
	meta_stage(t, k, m, &c->st, c->tail);
}

int bloom_reserve(struct keyspace *ks, const struct ks_key *k, uint32_t capacity, double error_rate,
		  uint16_t expansion)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct bloom_state st;
	struct chain c;
	int rc = bloom_check_params(capacity, error_rate, "BF.RESERVE");
	if (rc)
		return rc;
	new_state(&st, capacity, error_rate, expansion);
	ks_txn_begin(&t, ks, k);
	rc = ks_txn_create(&t, k, KV_TYPE_BLOOM, &m);
	if (!rc)
		rc = chain_new(&c, &st);
	if (!rc) {
		chain_stage(&t, k, m, &c);
		rc = ks_txn_commit(&t);
		chain_release(&c);
	}
	return ks_txn_end(&t, rc);
}

/* Add one item (hash h) to c: 1 if it was new, 0 if (probably) there,
 * -ENOSPC (logged) if the chain is full, -ENOMEM. */
static int chain_add(const struct ks_key *k, struct chain *c, uint64_t h)
{
	if (chain_find(c, h))
		return 0;
	if (c->st.size + 1 > bloom_state_capacity(&c->st)) {
		uint32_t bytes = filter_bytes(&c->st, c->n);
		if (c->st.expansion == 0 || c->n >= UINT16_MAX ||
		    (uint64_t)c->st.bloom_bytes + bytes > UINT32_MAX) {
			LOG_ERR("bloom '%.*s' is full (%" PRIu64 " items%s)", (int)k->klen, k->key,
				c->st.size, c->st.expansion ? "" : ", non-scaling");
			return -ENOSPC;
		}
		int rc = chain_grow(c, c->n + 1);
		if (!rc)
			rc = buf_resize(&c->f[c->n - 1].b, bytes);
		if (rc)
			return rc;
		c->f[c->n - 1].dirty = true;
		c->st.n_filters++;
		c->st.bloom_bytes += bytes;
	}
	struct buf *last = &c->f[c->n - 1].b;
	sbbf_insert((uint8_t *)last->data, (uint32_t)last->len, h);
	c->f[c->n - 1].dirty = true;
	c->st.size++;
	return 1;
}

int bloom_add(struct keyspace *ks, const struct ks_key *k, const struct iovec *items, size_t n,
	      int *added)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct bloom_state st;
	struct chain c = {0};
	bool any = false;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_BLOOM, &m);
	bool fresh = !rc && ks_txn_is_new(&t, k);
	if (fresh) {
		new_state(&st, BLOOM_DEFAULT_CAPACITY, BLOOM_DEFAULT_ERROR_RATE,
			  BLOOM_DEFAULT_EXPANSION);
		rc = chain_new(&c, &st);
	} else if (!rc) {
		rc = meta_state(k, m, &c.st);
		if (!rc)
			rc = chain_fill(ks, k, m->version, &c);
	}
	for (size_t j = 0; !rc && j < n; j++) {
		int r = chain_add(k, &c, sbbf_hash(items[j].iov_base, items[j].iov_len));
		if (r < 0)
			rc = r;
		else if (added)
			added[j] = r;
		any |= r > 0;
	}
	if (!rc && (any || fresh)) {
		chain_stage(&t, k, m, &c);
		rc = ks_txn_commit(&t);
	}
	chain_release(&c);
	return ks_txn_end(&t, rc);
}

int bloom_exists(struct keyspace *ks, const struct ks_key *k, const struct iovec *items, size_t n,
		 int *found)
{
	uint8_t tail[TAIL_LEN];
	struct enc_meta m;
	struct chain c = {0};
	int rc = meta_read(ks, k, true, &m, tail, &c.st);
	if (!rc)
		rc = chain_fill(ks, k, m.version, &c);
	if (rc == -ENOENT) {
		memset(found, 0, n * sizeof(*found));
		rc = 0;
	} else if (!rc) {
		for (size_t j = 0; j < n; j++)
			found[j] = chain_find(&c, sbbf_hash(items[j].iov_base, items[j].iov_len));
	}
	chain_release(&c);
	return rc;
}

int bloom_info(struct keyspace *ks, const struct ks_key *k, struct bloom_state *st)
{
	uint8_t tail[TAIL_LEN];
	struct enc_meta m;
	return meta_read(ks, k, true, &m, tail, st);
}

int bloom_params(struct keyspace *ks, const struct ks_key *k, struct bloom_state *st)
{
	uint8_t tail[TAIL_LEN];
	struct enc_meta m;
	return meta_read(ks, k, false, &m, tail, st);
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
	uint8_t tail[TAIL_LEN];
	struct enc_meta m;
	struct bloom_state st;
	int rc = meta_read(ks, k, true, &m, tail, &st);
	if (!rc && i >= st.n_filters)
		rc = -ENOENT;
	if (!rc)
		rc = filter_read(ks, k, m.version, &st, i, out);
	return rc;
}

int bloom_set_filter(struct keyspace *ks, const struct ks_key *k, uint32_t i, const void *d,
		     size_t n)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct bloom_state st;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_BLOOM, &m);
	if (!rc)
		rc = meta_state(k, m, &st);
	if (!rc && i >= st.n_filters)
		rc = -ENOENT;
	if (!rc && n != filter_bytes(&st, i)) {
		LOG_ERR("bloom '%.*s': filter %u is %u bytes at these parameters, not %zu",
			(int)k->klen, k->key, i, filter_bytes(&st, i), n);
		rc = -EINVAL;
	}
	if (!rc) {
		filter_stage(&t, k, i, d, n);
		rc = ks_txn_commit(&t);
	}
	return ks_txn_end(&t, rc);
}

int bloom_clear(struct keyspace *ks, const struct ks_key *k)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct bloom_state st;
	uint8_t tail[TAIL_LEN];
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_BLOOM, &m);
	if (!rc)
		rc = meta_state(k, m, &st);
	if (!rc) {
		/* A new version: the old filter records are garbage, and a
		 * missing filter reads as zeros of its size. */
		uint64_t expire = m->expire_ms;
		rc = ks_txn_renew(&t, k, KV_TYPE_BLOOM, &m);
		if (!rc) {
			m->expire_ms = expire;
			st.size = 0;
			meta_stage(&t, k, m, &st, tail);
			rc = ks_txn_commit(&t);
		}
	}
	return ks_txn_end(&t, rc);
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

int bloom_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		     const struct bloom_state *want, const struct iovec *filters)
{
	struct bloom_state st = *want;
	uint8_t tail[TAIL_LEN];
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
	for (uint32_t i = 0; i < st.n_filters; i++)
		if (filters[i].iov_base) /* a missing filter reads as zeros */
			filter_stage(t, k, i, filters[i].iov_base, filters[i].iov_len);
	meta_stage(t, k, m, &st, tail);
	return ks_txn_commit(t);
}

/* bloom_set_state, or with if_empty bloom_set_params. */
static int set_state(struct keyspace *ks, const struct ks_key *k, const struct bloom_state *want,
		     bool if_empty)
{
	struct buf zero = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	struct bloom_state old = {0}, st = *want;
	uint8_t tail[TAIL_LEN];
	int rc = state_check(&st);
	if (rc)
		return rc;
	ks_txn_begin(&t, ks, k);
	rc = ks_txn_open(&t, k, KV_TYPE_BLOOM, &m);
	bool fresh = !rc && ks_txn_is_new(&t, k);
	if (!rc && !fresh)
		rc = meta_state(k, m, &old);
	if (rc)
		goto out;
	if (!fresh && if_empty && old.base_capacity == st.base_capacity &&
	    old.error_rate == st.error_rate && old.expansion == st.expansion)
		goto out; /* the parameters it has: nothing to do */
	if (!fresh && if_empty && old.size) {
		LOG_ERR("bloom '%.*s' holds %" PRIu64
			" items; parameters are set on an empty filter",
			(int)k->klen, k->key, old.size);
		rc = -ENOTEMPTY;
		goto out;
	}
	uint32_t top = st.n_filters > old.n_filters ? st.n_filters : old.n_filters;
	for (uint32_t i = 0; !rc && i < top; i++) {
		if (i >= st.n_filters) {
			filter_stage(&t, k, i, NULL, 0);
			continue;
		}
		uint32_t bytes = filter_bytes(&st, i);
		if (!fresh && i < old.n_filters && filter_bytes(&old, i) == bytes)
			continue; /* same size: the bits stay */
		buf_reset(&zero);
		rc = buf_resize(&zero, bytes);
		if (!rc)
			filter_stage(&t, k, i, zero.data, zero.len);
	}
	if (!rc) {
		meta_stage(&t, k, m, &st, tail);
		rc = ks_txn_commit(&t);
	}
out:
	buf_release(&zero);
	return ks_txn_end(&t, rc);
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
