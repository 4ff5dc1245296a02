/*
 * t_convert: a hash becomes the list, set, zset, sortedint, stream,
 * hyperloglog, bloom filter or time series its fields spell out (see
 * include/types/t_convert.h). Under the key's lock the hash is
 * read whole, each field is read by the caller's callback, the result is
 * checked (list positions 0..n-1 each once, distinct sortedint ids), and
 * one transaction renews the key as the target type (ks_txn_renew: a
 * fresh version, the old expiry; its attribute records follow it), the
 * target module's txn helpers staging its sub-keys and metadata, and
 * commits. The metadata record is overwritten in place, so no state
 * exists in which the key is missing or both. Layer: types.
 */
#include "types/t_convert.h"

#include "keyspace/ks_txn.h"
#include "types/t_hash.h"
#include "types/t_hll.h"
#include "types/t_list.h"
#include "types/t_set.h"
#include "types/t_sortedint.h"
#include "types/t_stream.h"
#include "types/t_stream_state.h"
#include "types/t_timeseries.h"
#include "types/t_zset.h"

#include <errno.h>
#include <stdlib.h>

struct field {
	char *f, *v; /* one allocation: f, then v */
	size_t fn, vn;
	struct convert_item it;
};

struct fields {
	struct buf mem; /* the array d */
	struct field *d;
	size_t n;
};

static void fields_release(struct fields *fs)
{
	for (size_t i = 0; i < fs->n; i++) {
		free(fs->d[i].f);
		buf_release(&fs->d[i].it.value);
	}
	buf_release(&fs->mem);
}

static int fields_add(struct fields *fs, const char *f, size_t fn, const char *v, size_t vn)
{
	struct field x = {.f = malloc(fn + vn + 1), .fn = fn, .vn = vn};
	if (!x.f)
		return -ENOMEM;
	memcpy(x.f, f, fn);
	x.v = x.f + fn;
	memcpy(x.v, v, vn);
	buf_init(&x.it.value);
	if (buf_add(&fs->mem, &x, sizeof(x))) {
		free(x.f);
		return -ENOMEM;
	}
	fs->d = (struct field *)fs->mem.data;
	fs->n++;
	return 0;
}

/* Every field of hash k, read by cb. The caller holds the key's lock. */
static int read_fields(struct keyspace *ks, const struct ks_key *k, convert_field_cb cb, void *arg,
		       struct fields *fs)
{
	const char *f, *v;
	size_t fn, vn;
	int rc = 0, more;
	struct hash_iter *it = hash_iter_new(ks, k, NULL, 0, &rc);
	if (!it)
		return rc ? rc : -ENOMEM;
	while ((more = hash_iter_next(it, &f, &fn, &v, &vn)) > 0) {
		rc = fields_add(fs, f, fn, v, vn);
		if (!rc)
			rc = cb(arg, f, fn, v, vn, &fs->d[fs->n - 1].it);
		if (rc)
			break;
	}
	if (!rc && more < 0)
		rc = more;
	hash_iter_free(it);
	return rc;
}

static void log_field(const struct ks_key *k, const struct field *x, const char *why)
{
	LOG_ERR("%.*s: field '%.*s' %s", (int)k->klen, k->key, (int)x->fn, x->f, why);
}

static int put_list(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		    const struct fields *fs)
{
	struct list_value *vals = calloc(fs->n, sizeof(*vals));
	bool *seen = calloc(fs->n, sizeof(*seen));
	int rc = vals && seen ? 0 : -ENOMEM;
	for (size_t i = 0; i < fs->n && !rc; i++) {
		const struct field *x = &fs->d[i];
		if (x->it.num >= fs->n || seen[x->it.num]) {
			log_field(k, x,
				  x->it.num >= fs->n ? "is past the end: positions are 0 to n-1"
						     : "repeats a position");
			rc = -EINVAL;
			break;
		}
		seen[x->it.num] = true;
		vals[x->it.num].data = x->v;
		vals[x->it.num].len = x->vn;
	}
	if (!rc)
		rc = list_txn_create(t, k, m, vals, fs->n);
	free(vals);
	free(seen);
	return rc;
}

/* A set or a zset: its members are the field names. */
static int put_members(struct ks_txn *t, const struct ks_key *k, enum kv_type to,
		       const struct fields *fs)
{
	int rc = 0;
	for (size_t i = 0; i < fs->n && !rc; i++) {
		const struct field *x = &fs->d[i];
		rc = to == KV_TYPE_SET ? set_txn_add(t, k, x->f, x->fn)
				       : zset_txn_add(t, k, x->f, x->fn, x->it.score);
	}
	return rc ? rc : ks_txn_commit(t);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int put_sortedint(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
			 const struct fields *fs)
{
	uint64_t *ids = calloc(fs->n, sizeof(*ids));
	int rc = 0;
	if (!ids)
		return -ENOMEM;
	for (size_t i = 0; i < fs->n; i++)
		ids[i] = fs->d[i].it.num;
	qsort(ids, fs->n, sizeof(*ids), u64_cmp);
	for (size_t i = 1; i < fs->n && !rc; i++) {
		if (ids[i] == ids[i - 1]) {
			LOG_ERR("%.*s: two fields name the id %llu", (int)k->klen, k->key,
				(unsigned long long)ids[i]);
			rc = -EINVAL;
		}
	}
	if (!rc)
		rc = sortedint_txn_create(t, k, m, ids, fs->n);
	free(ids);
	return rc;
}

static int put_hll(struct ks_txn *t, const struct ks_key *k, const struct fields *fs)
{
	if (fs->n != 1 || fs->d[0].it.num != 0) {
		LOG_ERR("%.*s: a hyperloglog is one field, its registers", (int)k->klen, k->key);
		return -EINVAL;
	}
	return hll_txn_create(t, k, fs->d[0].v, fs->d[0].vn);
}

static int put_bloom(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		     const struct fields *fs)
{
	const struct field *chain = NULL;
	for (size_t i = 0; i < fs->n; i++)
		if (fs->d[i].it.num == 0)
			chain = &fs->d[i];
	if (!chain) {
		LOG_ERR("%.*s: a bloom filter needs its chain (parameters and counters)",
			(int)k->klen, k->key);
		return -EINVAL;
	}
	uint32_t nf = chain->it.bloom.n_filters;
	struct iovec *filters = calloc(nf ? nf : 1, sizeof(*filters));
	int rc = filters ? 0 : -ENOMEM;
	for (size_t i = 0; i < fs->n && !rc; i++) {
		const struct field *x = &fs->d[i];
		if (x == chain)
			continue;
		if (x->it.num == 0 || x->it.num > nf || filters[x->it.num - 1].iov_base) {
			log_field(k, x,
				  x->it.num == 0   ? "repeats the chain"
				  : x->it.num > nf ? "is a filter past the chain's count"
						   : "repeats a filter");
			rc = -EINVAL;
			break;
		}
		/* A filter of zero length is a filter read as empty: never valid. */
		filters[x->it.num - 1].iov_base = x->vn ? x->v : x->f;
		filters[x->it.num - 1].iov_len = x->vn;
	}
	if (!rc)
		rc = bloom_txn_create(t, k, m, &chain->it.bloom, filters);
	free(filters);
	return rc;
}

static int id_cmp(const void *a, const void *b)
{
	const struct field *x = *(struct field *const *)a, *y = *(struct field *const *)b;
	if (x->it.num != y->it.num)
		return x->it.num < y->it.num ? -1 : 1;
	return x->it.seq < y->it.seq ? -1 : x->it.seq > y->it.seq;
}

static int put_stream(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		      const struct fields *fs)
{
	struct field **order = calloc(fs->n, sizeof(*order));
	struct stream_id *ids = calloc(fs->n, sizeof(*ids));
	const char **vals = calloc(fs->n, sizeof(*vals));
	size_t *lens = calloc(fs->n, sizeof(*lens));
	struct stream_gstate gs = STREAM_GSTATE_INIT;
	struct stream_counters c;
	bool has_c = false, has_g = false;
	int rc = 0;
	if (!order || !ids || !vals || !lens) {
		rc = -ENOMEM;
		goto out;
	}
	/* the state files sort last (ms 2^64 - 1: STREAM_CONVERT_STATE) */
	size_t n = 0;
	for (size_t i = 0; i < fs->n; i++)
		order[i] = &fs->d[i];
	qsort(order, fs->n, sizeof(*order), id_cmp);
	while (n < fs->n && order[n]->it.num != UINT64_MAX)
		n++;
	for (size_t i = n; i < fs->n && !rc; i++) {
		const struct buf *v = &order[i]->it.value;
		if (order[i]->it.seq == STREAM_CONVERT_COUNTERS && !has_c)
			rc = stream_counters_parse(v->data, v->len, &c);
		else if (order[i]->it.seq == STREAM_CONVERT_GROUPS && !has_g)
			rc = stream_gstate_parse(v->data, v->len, &gs);
		else
			rc = -EINVAL;
		has_c |= order[i]->it.seq == STREAM_CONVERT_COUNTERS;
		has_g |= order[i]->it.seq == STREAM_CONVERT_GROUPS;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		ids[i] = (struct stream_id){order[i]->it.num, order[i]->it.seq};
		vals[i] = order[i]->it.value.data;
		lens[i] = order[i]->it.value.len;
		if (i && id_cmp(&order[i], &order[i - 1]) == 0) {
			LOG_ERR("%.*s: two fields name the entry %llu-%llu", (int)k->klen, k->key,
				(unsigned long long)ids[i].ms, (unsigned long long)ids[i].seq);
			rc = -EINVAL;
		}
	}
	if (!rc)
		rc = stream_txn_create(t, k, m, ids, vals, lens, n, has_c ? &c : NULL,
				       has_g ? &gs : NULL);
out:
	stream_gstate_release(&gs);
	free(order);
	free(ids);
	free(vals);
	free(lens);
	return rc;
}

static int num_cmp(const void *a, const void *b)
{
	const struct field *x = *(struct field *const *)a, *y = *(struct field *const *)b;
	return x->it.num < y->it.num ? -1 : x->it.num > y->it.num;
}

/* A time series: chunk it->num holds the samples in it->value. */
static int put_timeseries(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
			  const struct fields *fs)
{
	struct field **order = calloc(fs->n, sizeof(*order));
	struct ts_chunk_in *c = calloc(fs->n, sizeof(*c));
	int rc = order && c ? 0 : -ENOMEM;
	for (size_t i = 0; i < fs->n && !rc; i++)
		order[i] = &fs->d[i];
	if (!rc)
		qsort(order, fs->n, sizeof(*order), num_cmp);
	for (size_t i = 0; i < fs->n && !rc; i++) {
		const struct buf *v = &order[i]->it.value;
		c[i] = (struct ts_chunk_in){order[i]->it.num, (const struct ts_sample *)v->data,
					    v->len / sizeof(struct ts_sample)};
	}
	if (!rc)
		rc = ts_txn_create(t, k, m, c, fs->n);
	free(order);
	free(c);
	return rc;
}

int convert_hash(struct keyspace *ks, const struct ks_key *k, enum kv_type to, convert_field_cb cb,
		 void *arg)
{
	struct fields fs = {BUF_INIT, NULL, 0};
	struct ks_txn t;
	struct enc_meta *m;

	if (to != KV_TYPE_LIST && to != KV_TYPE_SET && to != KV_TYPE_ZSET &&
	    to != KV_TYPE_SORTEDINT && to != KV_TYPE_STREAM && to != KV_TYPE_HLL &&
	    to != KV_TYPE_BLOOM && to != KV_TYPE_TIMESERIES)
		return -EOPNOTSUPP;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_HASH, &m);
	if (!rc)
		rc = read_fields(ks, k, cb, arg, &fs);
	if (!rc && fs.n == 0)
		rc = -ENOENT; /* size and sub-keys disagree: leave it alone */
	if (rc)
		goto out;
	uint64_t expire = m->expire_ms; /* the new key keeps it */
	rc = ks_txn_renew(&t, k, to, &m);
	if (rc)
		goto out;
	m->expire_ms = expire;
	switch (to) {
	case KV_TYPE_LIST:
		rc = put_list(&t, k, m, &fs);
		break;
	case KV_TYPE_SET:
	case KV_TYPE_ZSET:
		rc = put_members(&t, k, to, &fs);
		break;
	case KV_TYPE_HLL:
		rc = put_hll(&t, k, &fs);
		break;
	case KV_TYPE_BLOOM:
		rc = put_bloom(&t, k, m, &fs);
		break;
	case KV_TYPE_STREAM:
		rc = put_stream(&t, k, m, &fs);
		break;
	case KV_TYPE_TIMESERIES:
		rc = put_timeseries(&t, k, m, &fs);
		break;
	default:
		rc = put_sortedint(&t, k, m, &fs);
		break;
	}
out:
	fields_release(&fs);
	return ks_txn_end(&t, rc);
}
