/*
 * t_timeseries: the RedisTimeSeries-compatible type, stored as Kvrocks
 * stores it (kvrocks-encoding.md 6.13). Layer: types.
 *
 *   metadata CF  ns|key -> header (type 13, size = number of chunks) +
 *                retention u64 | chunk_size u64 | chunk_type u8 |
 *                duplicate_policy u8 | source_key (u32 len + bytes) |
 *                last_timestamp u64                       (all BE)
 *   default CF   IK(00 | chunk_id u64 BE) -> flags u32 BE (bit 0 =
 *                compressed, never set here) | count u32 BE | count x
 *                {ts u64, value f64} in host order (little-endian)
 *                chunk_id = the timestamp of the chunk's first sample
 *                IK(01 | label name) -> label value
 *                IK(02 | destination key) -> aggregator u8 |
 *                bucket_duration u64 | alignment u64 | latest_bucket u64 |
 *                n_u64 u8 | n_f64 u8 | n_u64 x u64 | n_f64 x sortable f64
 *
 * Chunks (Kvrocks's UpsertSampleAndSplit): a sample goes to the last
 * chunk whose id is <= its timestamp (the first chunk if it is older than
 * all). The newest chunk is split into chunk_size pieces ("fixed"); an
 * older chunk only when it holds more than 2 x chunk_size, into equal
 * pieces. last_timestamp is Kvrocks's approximate newest timestamp: set
 * when the newest chunk splits, to the last timestamp of the last piece.
 *
 * Rules (downstream records): latest_bucket is the start of the bucket
 * still open; the auxiliaries hold its running state, per aggregator
 * (Kvrocks): sum {} {sum}; min, max {} {v, NaN when empty}; count {}
 * {count}; first {ts} {v}; last {ts} {v}; avg {count} {sum}; std/var
 * {count} {sum, sum of squares}; range {} {min, max}. A sample in the
 * open bucket folds into the state; one in a later bucket closes it (its
 * value is added to the destination) and opens the new one; a late one
 * (an older, closed bucket) recomputes that bucket from the source and
 * replaces its sample in the destination. latest 0 with a state just
 * reset means no bucket is open yet (a new rule starts at the next
 * sample, as Redis). All of it goes into the one batch of the add.
 *
 * The pure parts (aggregators, rule state, bucket alignment, label
 * filters) live in alg_tsagg.c. What stays here is one concern -- the
 * chunks of a series and the batch that changes them -- kept in one file
 * past the usual length because every verb shares struct series, which
 * no other module may see (one header per module).
 *
 * No Index CF: kvfs never adds a column family, so the label reverse
 * index of Kvrocks's Index CF is not written; TS.MRANGE/MGET scan the
 * namespace's metadata and the labels of each series instead.
 */
#include "t_timeseries.h"

#include "store.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

#define SUB_CHUNK    0x00
#define SUB_LABEL    0x01
#define SUB_RULE     0x02
#define CHUNK_HDR    8
#define SAMPLE_BYTES 16
#define RULE_FIXED   27 /* 1 + 3 x 8 + 2 */

/* ---- names ------------------------------------------------------------ */

static const char *const policy_names[] = {"block", "first", "last", "min", "max", "sum"};

const char *ts_policy_name(int p)
{
	return p >= 0 && p <= TS_DUP_SUM ? policy_names[p] : NULL;
}

int ts_policy_parse(const char *s, size_t n)
{
	for (int i = 0; i <= TS_DUP_SUM; i++)
		if (strlen(policy_names[i]) == n && strncasecmp(s, policy_names[i], n) == 0)
			return i;
	return -1;
}

/* ---- pure encodings --------------------------------------------------- */

static void put_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++, v >>= 8)
		p[i] = (uint8_t)v;
}

static uint64_t get_le64(const uint8_t *p)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

static uint64_t dbits(double d)
{
	uint64_t u;
	memcpy(&u, &d, 8);
	return u;
}

static double bitsd(uint64_t u)
{
	double d;
	memcpy(&d, &u, 8);
	return d;
}

int ts_meta_decode(const uint8_t *t, size_t n, struct ts_meta *m)
{
	if (n < 8 + 8 + 1 + 1 + 4 + 8)
		return -EUCLEAN;
	m->retention = get_be64(t);
	m->chunk_size = get_be64(t + 8);
	m->chunk_type = t[16];
	m->policy = t[17];
	uint32_t sl = get_be32(t + 18);
	if (n != 22 + (size_t)sl + 8)
		return -EUCLEAN;
	m->source = (const char *)t + 22;
	m->source_len = sl;
	m->last_ts = get_be64(t + 22 + sl);
	return 0;
}

static int meta_tail(struct buf *out, const struct ts_meta *m)
{
	buf_reset(out);
	int rc = buf_add_be64(out, m->retention);
	if (!rc)
		rc = buf_add_be64(out, m->chunk_size);
	if (!rc)
		rc = buf_add_u8(out, m->chunk_type);
	if (!rc)
		rc = buf_add_u8(out, m->policy);
	if (!rc)
		rc = buf_add_be32(out, (uint32_t)m->source_len);
	if (!rc)
		rc = buf_add(out, m->source, m->source_len);
	if (!rc)
		rc = buf_add_be64(out, m->last_ts);
	return rc;
}

static int chunk_encode(struct buf *out, const struct ts_sample *s, size_t n)
{
	buf_reset(out);
	int rc = buf_resize(out, CHUNK_HDR + n * SAMPLE_BYTES);
	if (rc)
		return rc;
	uint8_t *p = (uint8_t *)out->data;
	put_be32(p, 0);
	put_be32(p + 4, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		put_le64(p + CHUNK_HDR + i * SAMPLE_BYTES, s[i].ts);
		put_le64(p + CHUNK_HDR + i * SAMPLE_BYTES + 8, dbits(s[i].v));
	}
	return 0;
}

/* Decode a chunk value: count and a pointer to the samples. */
static bool chunk_check(const void *v, size_t n, uint32_t *count)
{
	const uint8_t *p = v;
	if (n < CHUNK_HDR || (get_be32(p) & 1))
		return false;
	*count = get_be32(p + 4);
	return n == CHUNK_HDR + (size_t)*count * SAMPLE_BYTES;
}

static struct ts_sample chunk_sample(const void *v, size_t i)
{
	const uint8_t *p = (const uint8_t *)v + CHUNK_HDR + i * SAMPLE_BYTES;
	struct ts_sample s = {get_le64(p), bitsd(get_le64(p + 8))};
	return s;
}

bool ts_chunk_last_ts(const void *v, size_t n, uint64_t *last, uint32_t *count)
{
	if (!chunk_check(v, n, count))
		return false;
	*last = *count ? chunk_sample(v, *count - 1).ts : 0;
	return true;
}

bool ts_chunk_is_expired(const struct ts_meta *m, const void *v, size_t n)
{
	struct buf t = BUF_INIT;
	bool r =
	    meta_tail(&t, m) == 0 && enc_ts_chunk_expired((const uint8_t *)t.data, t.len, v, n);
	buf_release(&t);
	return r;
}

static int rule_encode(struct buf *out, const struct ts_rule *r)
{
	buf_reset(out);
	int rc = buf_add_u8(out, (uint8_t)r->agg);
	if (!rc)
		rc = buf_add_be64(out, r->bucket);
	if (!rc)
		rc = buf_add_be64(out, r->align);
	if (!rc)
		rc = buf_add_be64(out, r->latest);
	if (!rc)
		rc = buf_add_u8(out, r->nu);
	if (!rc)
		rc = buf_add_u8(out, r->nf);
	for (int i = 0; i < r->nu && !rc; i++)
		rc = buf_add_be64(out, r->u[i]);
	for (int i = 0; i < r->nf && !rc; i++)
		rc = buf_add_double(out, r->f[i]);
	return rc;
}

static int rule_decode(const void *v, size_t n, struct ts_rule *r)
{
	const uint8_t *p = v;
	memset(r, 0, sizeof(*r));
	if (n < RULE_FIXED)
		return -EUCLEAN;
	r->agg = p[0];
	r->bucket = get_be64(p + 1);
	r->align = get_be64(p + 9);
	r->latest = get_be64(p + 17);
	r->nu = p[25];
	r->nf = p[26];
	if (r->nu > TS_AUX_MAX || r->nf > TS_AUX_MAX ||
	    n != RULE_FIXED + 8 * ((size_t)r->nu + r->nf) || r->agg < 1 || r->agg > TS_AGG_VAR_S ||
	    r->bucket == 0)
		return -EUCLEAN;
	for (int i = 0; i < r->nu; i++)
		r->u[i] = get_be64(p + RULE_FIXED + 8 * i);
	for (int i = 0; i < r->nf; i++)
		r->f[i] = enc_sortable_to_double(get_be64(p + RULE_FIXED + 8 * (r->nu + i)));
	return 0;
}

/* ---- samples ----------------------------------------------------------- */

struct ssamp {
	struct ts_sample s;
	size_t idx; /* position in the caller's array */
	int res;
};

static int ssamp_cmp(const void *a, const void *b)
{
	const struct ssamp *x = a, *y = b;
	if (x->s.ts != y->s.ts)
		return x->s.ts < y->s.ts ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx ? 1 : 0);
}

static int sample_cmp(const void *a, const void *b)
{
	const struct ts_sample *x = a, *y = b;
	return x->ts < y->ts ? -1 : (x->ts > y->ts ? 1 : 0);
}

/* Kvrocks's MergeSamplesValue: `to` exists, `from` arrives. */
static int merge_value(double *to, double from, int policy)
{
	double old = *to;
	switch (policy) {
	case TS_DUP_BLOCK:
		return TS_ADD_BLOCK;
	case TS_DUP_FIRST:
		return TS_ADD_SKIP;
	case TS_DUP_LAST:
		*to = from;
		return old == from ? TS_ADD_SKIP : TS_ADD_UPDATE;
	case TS_DUP_MAX:
		*to = from > old ? from : old;
		return from > old ? TS_ADD_UPDATE : TS_ADD_SKIP;
	case TS_DUP_MIN:
		*to = from < old ? from : old;
		return from < old ? TS_ADD_UPDATE : TS_ADD_SKIP;
	default:
		*to = old + from;
		return from == 0.0 ? TS_ADD_SKIP : TS_ADD_UPDATE;
	}
}

struct sarr {
	struct ts_sample *s;
	size_t n, cap;
};

static int sarr_push(struct sarr *a, struct ts_sample s)
{
	if (a->n == a->cap) {
		size_t cap = a->cap ? a->cap * 2 : 64;
		void *p = realloc(a->s, cap * sizeof(*a->s));
		if (!p)
			return -ENOMEM;
		a->s = p;
		a->cap = cap;
	}
	a->s[a->n++] = s;
	return 0;
}

/* ---- one series being read or changed ------------------------------------ */

struct nchunk {
	uint64_t id;
	struct ts_sample *s;
	size_t n;
};

struct series {
	struct keyspace *ks;
	struct ks_key k;
	struct buf raw, pfx, src;
	struct enc_meta m;
	struct ts_meta tm;
	bool fresh, dirty;
	struct store_iter *it; /* over the chunk sub-keys */
	/* Changes not yet written: chunks gone and chunks (re)written. */
	uint64_t *dead;
	size_t ndead;
	struct nchunk *nc;
	size_t nnc;
};

static void series_release(struct series *s)
{
	buf_release(&s->raw);
	buf_release(&s->pfx);
	buf_release(&s->src);
	store_iter_free(s->it);
	free(s->dead);
	for (size_t i = 0; i < s->nnc; i++)
		free(s->nc[i].s);
	free(s->nc);
	memset(s, 0, sizeof(*s));
}

static int series_iter(struct series *s)
{
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	int rc = buf_set(&lo, s->pfx.data, s->pfx.len);
	if (!rc)
		rc = buf_add_u8(&lo, SUB_CHUNK);
	if (!rc)
		rc = buf_set(&hi, s->pfx.data, s->pfx.len);
	if (!rc)
		rc = buf_add_u8(&hi, SUB_CHUNK + 1);
	if (!rc && !(s->it = store_iter_new(ks_store(s->ks), STORE_CF_DEFAULT, lo.data, lo.len,
					    hi.data, hi.len)))
		rc = -ENOMEM;
	buf_release(&lo);
	buf_release(&hi);
	return rc;
}

/* Read k's metadata into s. create: a missing key becomes a new series
 * with the defaults and o. 0, -ENOENT, -KV_EWRONGTYPE, ... */
static int series_open(struct series *s, struct keyspace *ks, const struct ks_key *k, bool create,
		       const struct ts_options *o)
{
	memset(s, 0, sizeof(*s));
	s->ks = ks;
	s->k = *k;
	int rc = ks_meta_get(ks, k, KV_TYPE_TIMESERIES, &s->raw, &s->m);
	if (rc == 0) {
		rc = ts_meta_decode(s->m.tail, s->m.tail_len, &s->tm);
		if (rc)
			rc = ks_corrupt(k, "time-series metadata tail of %zu bytes does not decode",
					s->m.tail_len);
		else if (s->tm.chunk_size == 0)
			s->tm.chunk_size = TS_DEFAULT_CHUNK_SIZE;
		if (!rc)
			rc = buf_set(&s->src, s->tm.source, s->tm.source_len);
		s->tm.source = s->src.data;
	} else if (rc == -ENOENT && create) {
		ks_meta_new(ks, &s->m, KV_TYPE_TIMESERIES);
		s->tm.chunk_size = TS_DEFAULT_CHUNK_SIZE;
		s->tm.policy = TS_DUP_BLOCK;
		s->tm.source = "";
		if (o && (o->set & TS_OPT_RETENTION))
			s->tm.retention = o->retention;
		if (o && (o->set & TS_OPT_CHUNK_SIZE))
			s->tm.chunk_size = o->chunk_size;
		if (o && (o->set & TS_OPT_POLICY))
			s->tm.policy = (uint8_t)o->policy;
		s->fresh = s->dirty = true;
		rc = 0;
	}
	if (!rc)
		rc = ks_sub_key(ks, k, s->m.version, NULL, 0, &s->pfx);
	if (!rc)
		rc = series_iter(s);
	return rc;
}

static int sub_key(struct series *s, uint8_t type, const void *p, size_t n, struct buf *out)
{
	int rc = buf_set(out, s->pfx.data, s->pfx.len);
	if (!rc)
		rc = buf_add_u8(out, type);
	if (!rc)
		rc = buf_add(out, p, n);
	return rc;
}

static int chunk_key(struct series *s, uint64_t id, struct buf *out)
{
	uint8_t b[8];
	put_be64(b, id);
	return sub_key(s, SUB_CHUNK, b, 8, out);
}

static bool is_dead(const struct series *s, uint64_t id)
{
	for (size_t i = 0; i < s->ndead; i++)
		if (s->dead[i] == id)
			return true;
	return false;
}

static struct nchunk *find_new(struct series *s, uint64_t id)
{
	for (size_t i = 0; i < s->nnc; i++)
		if (s->nc[i].id == id)
			return &s->nc[i];
	return NULL;
}

/*
 * Is the series iterator on a chunk? A record of the chunk range whose
 * key is not 8 bytes of id (after the 00) is no chunk: its id cannot be
 * read, so no chunk name reaches it. It is skipped with a log line,
 * moving forward or back (docs/encoding.md section 20): what the tree
 * lists must be what a lookup finds.
 */
static bool chunk_valid(struct series *s, bool fwd)
{
	while (store_iter_valid(s->it)) {
		size_t n;
		const char *key = store_iter_key(s->it, &n);
		if (n == s->pfx.len + 1 + 8)
			return true;
		ks_corrupt_entry(&s->k, key + s->pfx.len + 1, n - s->pfx.len - 1,
				 "a time-series chunk key of %zu bytes, not 8; skipped",
				 n - s->pfx.len - 1);
		if (fwd)
			store_iter_next(s->it);
		else
			store_iter_prev(s->it);
	}
	return false;
}

/* The id of the chunk the iterator stands on (chunk_valid). */
static uint64_t iter_id(struct series *s)
{
	size_t n;
	const uint8_t *key = store_iter_key(s->it, &n);
	return get_be64(key + n - 8);
}

/*
 * Chunks as they are with the pending changes: the id of the greatest
 * chunk <= ts (or, if none, the first chunk) in *own, and the next chunk
 * after it in *next. Returns 1 if there is a chunk, 0 if the series has
 * none, or an errno.
 */
static int chunk_around(struct series *s, uint64_t ts, uint64_t *own, bool *has_next,
			uint64_t *next)
{
	struct buf key = BUF_INIT;
	bool found = false;
	uint64_t best = 0, first = UINT64_MAX;
	bool any = false;
	int rc = chunk_key(s, ts, &key);
	if (rc)
		return rc;
	store_iter_seek_for_prev(s->it, key.data, key.len);
	while (chunk_valid(s, false) && is_dead(s, iter_id(s)))
		store_iter_prev(s->it);
	if (chunk_valid(s, false)) {
		best = iter_id(s);
		found = true;
	}
	for (size_t i = 0; i < s->nnc; i++) {
		if (s->nc[i].id <= ts && (!found || s->nc[i].id > best)) {
			best = s->nc[i].id;
			found = true;
		}
	}
	if (!found) {
		/* Older than every chunk: the first one. */
		store_iter_seek_first(s->it);
		while (chunk_valid(s, true) && is_dead(s, iter_id(s)))
			store_iter_next(s->it);
		if (chunk_valid(s, true)) {
			first = iter_id(s);
			any = true;
		}
		for (size_t i = 0; i < s->nnc; i++)
			if (s->nc[i].id < first || !any) {
				first = s->nc[i].id;
				any = true;
			}
		if (!any) {
			buf_release(&key);
			return store_iter_status(s->it) ? -EIO : 0;
		}
		best = first;
	}
	*own = best;
	/* The next chunk after best. */
	*has_next = false;
	if (best < UINT64_MAX) {
		rc = chunk_key(s, best + 1, &key);
		if (rc) {
			buf_release(&key);
			return rc;
		}
		store_iter_seek(s->it, key.data, key.len);
		while (chunk_valid(s, true) && is_dead(s, iter_id(s)))
			store_iter_next(s->it);
		if (chunk_valid(s, true)) {
			*next = iter_id(s);
			*has_next = true;
		}
		for (size_t i = 0; i < s->nnc; i++)
			if (s->nc[i].id > best && (!*has_next || s->nc[i].id < *next)) {
				*next = s->nc[i].id;
				*has_next = true;
			}
	}
	buf_release(&key);
	return store_iter_status(s->it) ? -EIO : 1;
}

/* The samples of chunk id as pending changes leave it (copied). */
static int chunk_read(struct series *s, uint64_t id, struct sarr *out)
{
	struct nchunk *c = find_new(s, id);
	out->n = 0;
	if (c) {
		for (size_t i = 0; i < c->n; i++)
			if (sarr_push(out, c->s[i]))
				return -ENOMEM;
		return 0;
	}
	if (is_dead(s, id))
		return -ENOENT;
	struct buf key = BUF_INIT, v = BUF_INIT;
	uint32_t count;
	int rc = chunk_key(s, id, &key);
	if (!rc)
		rc = store_get(ks_store(s->ks), STORE_CF_DEFAULT, key.data, key.len, &v);
	if (!rc && !chunk_check(v.data, v.len, &count))
		rc = ks_corrupt(&s->k, "time-series chunk %llu does not decode (%zu bytes)",
				(unsigned long long)id, v.len);
	for (uint32_t i = 0; !rc && i < count; i++)
		rc = sarr_push(out, chunk_sample(v.data, i));
	buf_release(&key);
	buf_release(&v);
	return rc;
}

/* Replace chunk old (if had_old) by the samples a, split in pieces of
 * the given sizes. */
static int chunk_replace(struct series *s, bool had_old, uint64_t old, const struct sarr *a,
			 const size_t *sizes, size_t npieces)
{
	if (had_old) {
		struct nchunk *c = find_new(s, old);
		if (c) {
			free(c->s);
			*c = s->nc[--s->nnc];
		} else {
			void *p = realloc(s->dead, (s->ndead + 1) * sizeof(*s->dead));
			if (!p)
				return -ENOMEM;
			s->dead = p;
			s->dead[s->ndead++] = old;
		}
		s->m.size--;
	}
	size_t off = 0;
	for (size_t i = 0; i < npieces; i++) {
		void *p = realloc(s->nc, (s->nnc + 1) * sizeof(*s->nc));
		if (!p)
			return -ENOMEM;
		s->nc = p;
		struct nchunk *c = &s->nc[s->nnc];
		c->n = sizes[i];
		c->s = malloc(sizes[i] * sizeof(*c->s));
		if (!c->s)
			return -ENOMEM;
		memcpy(c->s, a->s + off, sizes[i] * sizeof(*c->s));
		c->id = c->s[0].ts;
		off += sizes[i];
		s->nnc++;
		s->m.size++;
	}
	s->dirty = true;
	return 0;
}

/* Kvrocks's split sizes. fixed: pieces of cs; else equal pieces when the
 * chunk holds more than 2 x cs. */
static size_t split_sizes(size_t total, uint64_t cs, bool fixed, size_t **out)
{
	size_t np = 1;
	if (fixed)
		np = total ? (size_t)((total + cs - 1) / cs) : 0;
	else if (total > 2 * cs)
		np = (size_t)(total / cs);
	size_t *sz = calloc(np ? np : 1, sizeof(*sz));
	if (!sz)
		return 0;
	if (fixed) {
		for (size_t i = 0, rem = total; i < np; i++, rem -= sz[i - 1])
			sz[i] = rem < cs ? rem : (size_t)cs;
	} else {
		for (size_t i = 0; i < np; i++)
			sz[i] = total / np + (i < total % np ? 1 : 0);
	}
	*out = sz;
	return np;
}

/* The newest sample's timestamp with the pending changes (0 if none). */
static int series_last(struct series *s, bool *any, struct ts_sample *last)
{
	uint64_t own, next;
	bool hn;
	struct sarr a = {0};
	int rc = chunk_around(s, UINT64_MAX, &own, &hn, &next);
	*any = false;
	if (rc == 1) {
		rc = chunk_read(s, own, &a);
		if (!rc && a.n) {
			*last = a.s[a.n - 1];
			*any = true;
		}
	}
	free(a.s);
	return rc < 0 ? rc : 0;
}

/* Samples with from <= ts <= to, in time order, pending changes included. */
static int series_collect(struct series *s, uint64_t from, uint64_t to, struct sarr *out)
{
	struct buf key = BUF_INIT;
	struct sarr a = {0};
	uint32_t count;
	int rc = chunk_key(s, from, &key);
	out->n = 0;
	if (rc)
		return rc;
	store_iter_seek_for_prev(s->it, key.data, key.len);
	if (!chunk_valid(s, false))
		store_iter_seek_first(s->it);
	for (; !rc && chunk_valid(s, true); store_iter_next(s->it)) {
		uint64_t id = iter_id(s);
		if (id > to)
			break;
		if (is_dead(s, id) || find_new(s, id))
			continue;
		size_t vn;
		const void *v = store_iter_value(s->it, &vn);
		if (!chunk_check(v, vn, &count)) {
			rc = ks_corrupt(&s->k, "time-series chunk %llu does not decode (%zu bytes)",
					(unsigned long long)id, vn);
			break;
		}
		for (uint32_t i = 0; i < count && !rc; i++) {
			struct ts_sample x = chunk_sample(v, i);
			if (x.ts >= from && x.ts <= to)
				rc = sarr_push(out, x);
		}
	}
	if (!rc && store_iter_status(s->it))
		rc = -EIO;
	for (size_t i = 0; i < s->nnc && !rc; i++)
		for (size_t j = 0; j < s->nc[i].n && !rc; j++)
			if (s->nc[i].s[j].ts >= from && s->nc[i].s[j].ts <= to)
				rc = sarr_push(out, s->nc[i].s[j]);
	if (!rc && out->n > 1)
		qsort(out->s, out->n, sizeof(*out->s), sample_cmp);
	free(a.s);
	buf_release(&key);
	return rc;
}

static int by_idx(const void *a, const void *b)
{
	const struct ssamp *x = *(struct ssamp *const *)a, *y = *(struct ssamp *const *)b;
	return x->idx < y->idx ? -1 : (x->idx > y->idx ? 1 : 0);
}

/*
 * Upsert sorted samples (results preset for duplicates inside the batch)
 * with the policy, as Kvrocks's upsertCommonInBatch: retention first,
 * then chunk by chunk with its split rule.
 */
static int series_upsert(struct series *s, struct ssamp *v, size_t n, int policy)
{
	struct ts_sample last;
	bool any;
	struct sarr a = {0};
	size_t *sizes = NULL;
	int rc = series_last(s, &any, &last);
	if (rc)
		return rc;
	if (s->tm.retention) {
		/* Kvrocks's Expire: in the caller's order, against a running newest. */
		uint64_t lt = any ? last.ts : 0;
		struct ssamp **order = malloc(n * sizeof(*order) + 1);
		if (!order)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			order[i] = &v[i];
		qsort(order, n, sizeof(*order), by_idx);
		for (size_t i = 0; i < n; i++) {
			struct ssamp *x = order[i];
			if (x->s.ts + s->tm.retention < lt)
				x->res = TS_ADD_OLD;
			else if (x->s.ts > lt)
				lt = x->s.ts;
		}
		free(order);
	}
	size_t i = 0;
	while (i < n && !rc) {
		if (v[i].res != TS_ADD_INSERT) {
			i++;
			continue;
		}
		uint64_t own = 0, next = 0;
		bool hn = false, had = false;
		rc = chunk_around(s, v[i].s.ts, &own, &hn, &next);
		if (rc < 0)
			break;
		had = rc == 1;
		a.n = 0;
		rc = had ? chunk_read(s, own, &a) : 0;
		if (rc)
			break;
		/* Merge the samples that belong to this chunk. */
		size_t j = i;
		bool changed = false;
		for (; j < n && (!hn || v[j].s.ts < next); j++) {
			struct ssamp *x = &v[j];
			if (x->res != TS_ADD_INSERT)
				continue;
			size_t lo = 0, hi = a.n;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (a.s[mid].ts < x->s.ts)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < a.n && a.s[lo].ts == x->s.ts) {
				x->res = merge_value(&a.s[lo].v, x->s.v, policy);
				x->s.v = a.s[lo].v;
				changed |= x->res == TS_ADD_UPDATE;
				continue;
			}
			if ((rc = sarr_push(&a, x->s)))
				break;
			memmove(a.s + lo + 1, a.s + lo, (a.n - 1 - lo) * sizeof(*a.s));
			a.s[lo] = x->s;
			changed = true;
		}
		if (rc)
			break;
		i = j;
		if (!changed)
			continue;
		size_t np = split_sizes(a.n, s->tm.chunk_size, !hn, &sizes);
		if (!np) {
			rc = -ENOMEM;
			break;
		}
		rc = chunk_replace(s, had, own, &a, sizes, np);
		if (!rc && !hn && np > 1)
			s->tm.last_ts = a.s[a.n - 1].ts;
		free(sizes);
		sizes = NULL;
	}
	free(a.s);
	return rc < 0 ? rc : 0;
}

/* Delete from <= ts <= to. *deleted counts; `gone` (may be NULL) gets the
 * deleted samples. */
static int series_delete(struct series *s, uint64_t from, uint64_t to, uint64_t *deleted,
			 struct sarr *gone)
{
	struct sarr a = {0}, keep = {0};
	uint64_t *ids = NULL;
	size_t nids = 0;
	struct buf key = BUF_INIT;
	int rc = chunk_key(s, from, &key);
	*deleted = 0;
	if (rc)
		return rc;
	/* The chunks that may hold samples in range (stored; nothing pending). */
	store_iter_seek_for_prev(s->it, key.data, key.len);
	if (!chunk_valid(s, false))
		store_iter_seek_first(s->it);
	for (; chunk_valid(s, true); store_iter_next(s->it)) {
		uint64_t id = iter_id(s);
		if (id > to)
			break;
		void *p = realloc(ids, (nids + 1) * sizeof(*ids));
		if (!p) {
			rc = -ENOMEM;
			goto out;
		}
		ids = p;
		ids[nids++] = id;
	}
	if (store_iter_status(s->it))
		rc = -EIO;
	for (size_t c = 0; c < nids && !rc; c++) {
		rc = chunk_read(s, ids[c], &a);
		keep.n = 0;
		for (size_t i = 0; i < a.n && !rc; i++) {
			if (a.s[i].ts >= from && a.s[i].ts <= to)
				rc = gone ? sarr_push(gone, a.s[i]) : 0;
			else
				rc = sarr_push(&keep, a.s[i]);
		}
		if (rc || keep.n == a.n)
			continue;
		*deleted += a.n - keep.n;
		size_t one = keep.n;
		rc = chunk_replace(s, true, ids[c], &keep, &one, keep.n ? 1 : 0);
	}
out:
	free(ids);
	free(a.s);
	free(keep.s);
	buf_release(&key);
	return rc;
}

/* Put the pending changes and the metadata into b. */
static int series_flush(struct series *s, struct store_batch *b)
{
	struct buf key = BUF_INIT, val = BUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < s->ndead && !rc; i++) {
		rc = chunk_key(s, s->dead[i], &key);
		if (!rc)
			store_batch_delete(b, STORE_CF_DEFAULT, key.data, key.len);
	}
	for (size_t i = 0; i < s->nnc && !rc; i++) {
		rc = chunk_key(s, s->nc[i].id, &key);
		if (!rc)
			rc = chunk_encode(&val, s->nc[i].s, s->nc[i].n);
		if (!rc)
			store_batch_put(b, STORE_CF_DEFAULT, key.data, key.len, val.data, val.len);
	}
	if (!rc && s->dirty) {
		rc = meta_tail(&val, &s->tm);
		if (!rc)
			rc = ks_batch_put_meta(s->ks, b, &s->k, &s->m, val.data, val.len);
		if (!rc && s->fresh)
			rc = ks_batch_empty_del(s->ks, b, &s->k);
	}
	buf_release(&key);
	buf_release(&val);
	return rc;
}

/* ---- labels and rules ------------------------------------------------------ */

typedef int (*sub_cb)(void *arg, const char *name, size_t nn, const char *v, size_t vn);

/* Sub-keys of one type (labels, rules) of series s. */
static int series_subs(struct series *s, uint8_t type, sub_cb cb, void *arg)
{
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	struct store_iter *it = NULL;
	int rc = sub_key(s, type, NULL, 0, &lo);
	if (!rc)
		rc = sub_key(s, type + 1, NULL, 0, &hi);
	if (!rc && !(it = store_iter_new(ks_store(s->ks), STORE_CF_DEFAULT, lo.data, lo.len,
					 hi.data, hi.len)))
		rc = -ENOMEM;
	if (!rc)
		store_iter_seek_first(it);
	while (!rc && store_iter_valid(it)) {
		size_t kn, vn;
		const char *key = store_iter_key(it, &kn), *v = store_iter_value(it, &vn);
		rc = cb(arg, key + lo.len, kn - lo.len, v, vn);
		store_iter_next(it);
	}
	if (!rc && it && store_iter_status(it))
		rc = -EIO;
	store_iter_free(it);
	buf_release(&lo);
	buf_release(&hi);
	return rc;
}

static int put_label(struct series *s, struct store_batch *b, const struct ts_label *l)
{
	struct buf key = BUF_INIT;
	int rc = sub_key(s, SUB_LABEL, l->name, l->nn, &key);
	if (!rc)
		store_batch_put(b, STORE_CF_DEFAULT, key.data, key.len, l->value, l->vn);
	buf_release(&key);
	return rc;
}

static int del_label_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	(void)v;
	(void)vn;
	void **a = arg;
	struct series *s = a[0];
	struct buf key = BUF_INIT;
	int rc = sub_key(s, SUB_LABEL, name, nn, &key);
	if (!rc)
		store_batch_delete(a[1], STORE_CF_DEFAULT, key.data, key.len);
	buf_release(&key);
	return rc;
}

static int check_options(const struct ts_options *o)
{
	if (!o)
		return 0;
	if ((o->set & TS_OPT_CHUNK_SIZE) &&
	    (o->chunk_size == 0 || o->chunk_size > TS_CHUNK_SIZE_MAX)) {
		LOG_ERR("CHUNK_SIZE %llu: a number of samples from 1 to %u",
			(unsigned long long)o->chunk_size, TS_CHUNK_SIZE_MAX);
		return -EINVAL;
	}
	if ((o->set & TS_OPT_POLICY) && !ts_policy_name(o->policy)) {
		LOG_ERR("DUPLICATE_POLICY %d: not a policy", o->policy);
		return -EINVAL;
	}
	if (o->set & TS_OPT_LABELS)
		for (size_t i = 0; i < o->nlabels; i++)
			if (!o->labels[i].nn || !o->labels[i].vn) {
				LOG_ERR("LABELS: a label needs a name and a value");
				return -EINVAL;
			}
	return 0;
}

static int write_labels(struct series *s, struct store_batch *b, const struct ts_options *o)
{
	int rc = 0;
	if (!o || !(o->set & TS_OPT_LABELS))
		return 0;
	if (!s->fresh) {
		void *a[2] = {s, b};
		rc = series_subs(s, SUB_LABEL, del_label_cb, a);
	}
	for (size_t i = 0; i < o->nlabels && !rc; i++)
		rc = put_label(s, b, &o->labels[i]);
	return rc;
}

int ts_create(struct keyspace *ks, const struct ks_key *k, const struct ts_options *o)
{
	struct series s;
	struct ks_info info;
	struct store_batch *b = NULL;
	int rc = check_options(o);
	if (rc)
		return rc;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_lookup(ks, k, &info);
	if (rc == 0 && !info.empty)
		rc = -EEXIST;
	else if (rc == 0 || rc == -ENOENT)
		rc = series_open(&s, ks, k, true, o);
	if (!rc) {
		rc = write_labels(&s, b, o);
		if (!rc)
			rc = series_flush(&s, b);
		if (!rc)
			rc = ks_write(ks, b);
		series_release(&s);
	}
	ks_unlock(ks, k);
	store_batch_free(b);
	return rc;
}

int ts_alter(struct keyspace *ks, const struct ks_key *k, const struct ts_options *o)
{
	struct series s;
	struct store_batch *b = NULL;
	int rc = check_options(o);
	if (rc)
		return rc;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = series_open(&s, ks, k, false, NULL);
	if (!rc) {
		if (o->set & TS_OPT_RETENTION)
			s.tm.retention = o->retention;
		if (o->set & TS_OPT_CHUNK_SIZE)
			s.tm.chunk_size = o->chunk_size;
		if (o->set & TS_OPT_POLICY)
			s.tm.policy = (uint8_t)o->policy;
		s.dirty = true;
		rc = write_labels(&s, b, o);
		if (!rc)
			rc = series_flush(&s, b);
		if (!rc)
			rc = ks_write(ks, b);
	}
	series_release(&s);
	ks_unlock(ks, k);
	store_batch_free(b);
	return rc;
}

/* One rule of a source, read with its destination key. */
struct rule_ent {
	struct buf dst;
	struct ts_rule r;
	bool dirty;
};

struct rules {
	const struct ks_key *k; /* the source, for the log */
	struct rule_ent *e;
	size_t n;
	int err;
};

static int rules_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct rules *rs = arg;
	void *p = realloc(rs->e, (rs->n + 1) * sizeof(*rs->e));
	if (!p)
		return -ENOMEM;
	rs->e = p;
	struct rule_ent *e = &rs->e[rs->n];
	memset(e, 0, sizeof(*e));
	if (rule_decode(v, vn, &e->r))
		return ks_corrupt_entry(rs->k, name, nn,
					"time-series rule record of %zu bytes does not decode", vn);
	rs->n++;
	return buf_set(&e->dst, name, nn);
}

static void rules_release(struct rules *rs)
{
	for (size_t i = 0; i < rs->n; i++)
		buf_release(&rs->e[i].dst);
	free(rs->e);
	memset(rs, 0, sizeof(*rs));
}

/* Destination updates of one rule. */
struct dst_upd {
	struct sarr put; /* bucket samples to set (LAST) */
	struct sarr del; /* buckets whose sample goes (ts only) */
};

static int bucket_samples(struct series *src, const struct ts_rule *r, uint64_t b, struct sarr *a)
{
	uint64_t right = ts_bucket_right(b, r->bucket, r->align);
	return series_collect(src, b, right - 1, a);
}

/* Recompute the open bucket's state from the source. */
static int rule_refold(struct series *src, struct ts_rule *r)
{
	struct sarr a = {0};
	int rc = bucket_samples(src, r, r->latest, &a);
	ts_rule_reset(r);
	if (!rc)
		ts_rule_fold(r, a.s, a.n);
	free(a.s);
	return rc;
}

/* Close the open bucket: its value goes to the destination. */
static int rule_close(struct series *src, struct ts_rule *r, struct dst_upd *u)
{
	struct sarr a = {0};
	int rc = 0;
	if (ts_rule_is_reset(r)) {
		/* Nothing folded (or a sum of 0): ask the source. */
		rc = bucket_samples(src, r, r->latest, &a);
		if (!rc && a.n)
			rc = sarr_push(
			    &u->put, (struct ts_sample){r->latest, ts_aggregate(r->agg, a.s, a.n)});
	} else {
		rc = sarr_push(&u->put, (struct ts_sample){r->latest, ts_rule_value(r)});
	}
	free(a.s);
	ts_rule_reset(r);
	return rc;
}

/* Apply the changed samples c (time order, res INSERT or UPDATE) to rule r. */
static int rule_apply(struct series *src, struct ts_rule *r, const struct ssamp *c, size_t n,
		      struct dst_upd *u)
{
	struct sarr g = {0}, a = {0};
	int rc = 0;
	size_t i = 0;
	while (i < n && !rc) {
		uint64_t b = ts_bucket_left(c[i].s.ts, r->bucket, r->align);
		bool upd = false;
		g.n = 0;
		for (; i < n && ts_bucket_left(c[i].s.ts, r->bucket, r->align) == b && !rc; i++) {
			upd |= c[i].res == TS_ADD_UPDATE;
			rc = sarr_push(&g, c[i].s);
		}
		if (rc)
			break;
		bool open = !(r->latest == 0 && ts_rule_is_reset(r));
		if (open && b < r->latest) {
			/* A late sample: recompute the closed bucket. */
			rc = bucket_samples(src, r, b, &a);
			if (!rc && a.n)
				rc = sarr_push(
				    &u->put, (struct ts_sample){b, ts_aggregate(r->agg, a.s, a.n)});
			else if (!rc)
				rc = sarr_push(&u->del, (struct ts_sample){b, 0});
			continue;
		}
		if (open && b > r->latest)
			rc = rule_close(src, r, u);
		if (!open || b > r->latest) {
			ts_rule_reset(r);
			r->latest = b;
		}
		if (!rc && upd)
			rc = rule_refold(src, r);
		else if (!rc)
			ts_rule_fold(r, g.s, g.n);
	}
	free(g.s);
	free(a.s);
	return rc;
}

/* Apply a destination's updates (in batch b; the lock is held). */
static int dst_write(struct keyspace *ks, const struct ks_key *dk, struct dst_upd *u,
		     struct store_batch *b)
{
	struct series d;
	struct ssamp *v = NULL;
	int rc;
	if (!u->put.n && !u->del.n)
		return 0;
	rc = series_open(&d, ks, dk, false, NULL);
	if (rc == -ENOENT || rc == -KV_EWRONGTYPE) {
		LOG_WARN("rule destination '%.*s' is gone: its samples are dropped", (int)dk->klen,
			 dk->key);
		series_release(&d);
		return 0;
	}
	for (size_t i = 0; i < u->del.n && !rc; i++) {
		uint64_t del;
		rc = series_delete(&d, u->del.s[i].ts, u->del.s[i].ts, &del, NULL);
	}
	if (!rc && u->put.n) {
		if (!(v = calloc(u->put.n, sizeof(*v))))
			rc = -ENOMEM;
		for (size_t i = 0; !rc && i < u->put.n; i++) {
			v[i].s = u->put.s[i];
			v[i].idx = i;
		}
		if (!rc) {
			qsort(v, u->put.n, sizeof(*v), ssamp_cmp);
			/* Later updates of one bucket win. */
			for (size_t i = 0; i + 1 < u->put.n; i++)
				if (v[i].s.ts == v[i + 1].s.ts)
					v[i].res = TS_ADD_SKIP;
			rc = series_upsert(&d, v, u->put.n, TS_DUP_LAST);
		}
	}
	if (!rc)
		rc = series_flush(&d, b);
	free(v);
	series_release(&d);
	return rc;
}

static int rule_put(struct series *s, struct store_batch *b, const char *dst, size_t dn,
		    const struct ts_rule *r)
{
	struct buf key = BUF_INIT, val = BUF_INIT;
	int rc = sub_key(s, SUB_RULE, dst, dn, &key);
	if (!rc)
		rc = rule_encode(&val, r);
	if (!rc)
		store_batch_put(b, STORE_CF_DEFAULT, key.data, key.len, val.data, val.len);
	buf_release(&key);
	buf_release(&val);
	return rc;
}

/* Lock k and every destination of its rules; re-read until the set of
 * rules is the one locked. On return (0) keys[0] = k and keys[1..n] are
 * the destinations, all locked; unlock with ks_unlockv. */
static int lock_with_rules(struct keyspace *ks, const struct ks_key *k, struct ks_key **keys,
			   size_t *nkeys, struct rules *rs)
{
	for (int tries = 0; tries < 8; tries++) {
		struct series s;
		int rc;
		ks_lock(ks, k);
		rs->k = k;
		rc = series_open(&s, ks, k, false, NULL);
		if (!rc)
			rc = series_subs(&s, SUB_RULE, rules_cb, rs);
		series_release(&s);
		ks_unlock(ks, k);
		if (rc == -ENOENT)
			rc = 0;
		if (rc) {
			rules_release(rs);
			return rc;
		}
		if (rs->n > TS_RULES_MAX) {
			LOG_ERR("%.*s: %zu rules, more than the %d kvfs can lock at once",
				(int)k->klen, k->key, rs->n, TS_RULES_MAX);
			rules_release(rs);
			return -ENOSPC;
		}
		struct ks_key *v = calloc(rs->n + 1, sizeof(*v));
		if (!v) {
			rules_release(rs);
			return -ENOMEM;
		}
		v[0] = *k;
		for (size_t i = 0; i < rs->n; i++) {
			v[i + 1] = *k;
			v[i + 1].key = rs->e[i].dst.data;
			v[i + 1].klen = rs->e[i].dst.len;
			v[i + 1].attr = NULL;
		}
		size_t locked = rs->n + 1;
		ks_lockv(ks, v, locked);
		/* The same rules now? */
		struct rules now = {.k = k};
		rc = series_open(&s, ks, k, false, NULL);
		if (!rc)
			rc = series_subs(&s, SUB_RULE, rules_cb, &now);
		series_release(&s);
		if (rc == -ENOENT)
			rc = 0;
		bool same = !rc && now.n == rs->n;
		for (size_t i = 0; same && i < now.n; i++)
			same = now.e[i].dst.len == rs->e[i].dst.len &&
			       memcmp(now.e[i].dst.data, rs->e[i].dst.data, now.e[i].dst.len) == 0;
		if (same) {
			/* v borrows the names of rs: keep rs, drop now. */
			for (size_t i = 0; i < now.n; i++)
				rs->e[i].r = now.e[i].r;
			rules_release(&now);
			*keys = v;
			*nkeys = locked;
			return 0;
		}
		ks_unlockv(ks, v, locked);
		free(v);
		rules_release(rs);
		rules_release(&now);
		if (rc)
			return rc;
	}
	return -EAGAIN;
}

/* ---- adding ---------------------------------------------------------------- */

#define MADD_INCR 0x100 /* internal: v[0] holds a delta for the newest value */

static int madd_locked(struct keyspace *ks, const struct ks_key *k, struct ssamp *v, size_t n,
		       unsigned flags, int on_dup, const struct ts_options *create,
		       struct rules *rs, struct store_batch *b, size_t *bad)
{
	struct series s;
	struct ssamp *c = NULL;
	size_t nc = 0;
	struct dst_upd *u = NULL;
	int rc = series_open(&s, ks, k, (flags & TS_MADD_CREATE) != 0, create);
	if (rc)
		goto out;
	if (s.fresh && create && (create->set & TS_OPT_LABELS))
		rc = write_labels(&s, b, create);
	int policy = on_dup >= 0 ? on_dup : s.tm.policy;
	if (!rc && (flags & MADD_INCR)) {
		struct ts_sample last;
		bool any = false;
		rc = series_last(&s, &any, &last);
		if (!rc && any && v[0].s.ts < last.ts) {
			LOG_ERR("%.*s: TS.INCRBY at %llu, older than the newest sample %llu",
				(int)k->klen, k->key, (unsigned long long)v[0].s.ts,
				(unsigned long long)last.ts);
			rc = -EINVAL;
		}
		if (!rc && any)
			v[0].s.v += last.v;
		policy = TS_DUP_LAST;
	}
	if (rc)
		goto out;
	qsort(v, n, sizeof(*v), ssamp_cmp);
	/* Duplicates inside the batch merge into the first (Kvrocks). */
	for (size_t i = 0, first = 0; i < n; i++) {
		v[i].res = TS_ADD_INSERT;
		if (i > 0 && v[i].s.ts == v[first].s.ts) {
			int r = merge_value(&v[first].s.v, v[i].s.v, policy);
			v[i].res = r == TS_ADD_BLOCK ? TS_ADD_BLOCK : TS_ADD_SKIP;
		} else {
			first = i;
		}
	}
	if (!rc)
		rc = series_upsert(&s, v, n, policy);
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++) {
		if ((flags & TS_MADD_ATOMIC) &&
		    (v[i].res == TS_ADD_BLOCK || v[i].res == TS_ADD_OLD)) {
			if (bad)
				*bad = v[i].idx;
			rc = v[i].res == TS_ADD_BLOCK ? -EEXIST : -EINVAL;
			goto out;
		}
	}
	if (rs->n) {
		if (!(c = calloc(n, sizeof(*c))) || !(u = calloc(rs->n, sizeof(*u)))) {
			rc = -ENOMEM;
			goto out;
		}
		for (size_t i = 0; i < n; i++)
			if (v[i].res == TS_ADD_INSERT || v[i].res == TS_ADD_UPDATE)
				c[nc++] = v[i];
		for (size_t i = 0; i < rs->n && !rc; i++) {
			if (!nc)
				break;
			rc = rule_apply(&s, &rs->e[i].r, c, nc, &u[i]);
			if (!rc)
				rc = rule_put(&s, b, rs->e[i].dst.data, rs->e[i].dst.len,
					      &rs->e[i].r);
		}
		for (size_t i = 0; i < rs->n && !rc; i++) {
			struct ks_key dk = *k;
			dk.key = rs->e[i].dst.data;
			dk.klen = rs->e[i].dst.len;
			dk.attr = NULL;
			rc = dst_write(ks, &dk, &u[i], b);
		}
	}
	if (!rc)
		rc = series_flush(&s, b);
out:
	if (u)
		for (size_t i = 0; i < rs->n; i++) {
			free(u[i].put.s);
			free(u[i].del.s);
		}
	free(u);
	free(c);
	series_release(&s);
	return rc;
}

static int madd(struct keyspace *ks, const struct ks_key *k, const struct ts_sample *in, size_t n,
		unsigned flags, int on_dup, const struct ts_options *create,
		enum ts_add_result *res, size_t *bad, double *stored)
{
	struct ssamp *v;
	struct rules rs = {0};
	struct ks_key *keys = NULL;
	size_t nkeys = 0;
	struct store_batch *b = NULL;
	int rc = check_options(create);
	if (rc)
		return rc;
	if (n == 0 || (on_dup != TS_DUP_NONE && !ts_policy_name(on_dup)))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (isnan(in[i].v)) {
			if (bad)
				*bad = i;
			LOG_ERR("%.*s: a sample value cannot be NaN", (int)k->klen, k->key);
			return -EINVAL;
		}
	if (!(v = calloc(n, sizeof(*v))))
		return -ENOMEM;
	uint64_t now = now_ms();
	for (size_t i = 0; i < n; i++) {
		v[i].s = in[i];
		if (v[i].s.ts == TS_NOW)
			v[i].s.ts = now;
		v[i].idx = i;
	}
	if (!(b = store_batch_new(ks_store(ks)))) {
		free(v);
		return -ENOMEM;
	}
	rc = lock_with_rules(ks, k, &keys, &nkeys, &rs);
	if (!rc) {
		rc = madd_locked(ks, k, v, n, flags, on_dup, create, &rs, b, bad);
		if (!rc)
			rc = ks_write(ks, b);
		ks_unlockv(ks, keys, nkeys);
	}
	if (!rc && res)
		for (size_t i = 0; i < n; i++)
			res[v[i].idx] = (enum ts_add_result)v[i].res;
	if (!rc && stored)
		*stored = v[0].s.v;
	free(keys);
	rules_release(&rs);
	store_batch_free(b);
	free(v);
	return rc;
}

int ts_madd(struct keyspace *ks, const struct ks_key *k, const struct ts_sample *s, size_t n,
	    unsigned flags, enum ts_add_result *res, size_t *bad)
{
	return madd(ks, k, s, n, flags & (TS_MADD_ATOMIC | TS_MADD_CREATE), TS_DUP_NONE, NULL, res,
		    bad, NULL);
}

int ts_add(struct keyspace *ks, const struct ks_key *k, uint64_t ts, double v,
	   const struct ts_options *create, int on_dup, uint64_t *out_ts)
{
	struct ts_sample s = {ts == TS_NOW ? now_ms() : ts, v};
	enum ts_add_result r;
	int rc =
	    madd(ks, k, &s, 1, TS_MADD_ATOMIC | TS_MADD_CREATE, on_dup, create, &r, NULL, NULL);
	if (rc == -EEXIST)
		LOG_INFO("%.*s: a sample at %llu exists (DUPLICATE_POLICY block)", (int)k->klen,
			 k->key, (unsigned long long)s.ts);
	else if (rc == -EINVAL && !isnan(v))
		LOG_INFO("%.*s: timestamp %llu is older than the retention window", (int)k->klen,
			 k->key, (unsigned long long)s.ts);
	if (!rc && out_ts)
		*out_ts = s.ts;
	return rc;
}

int ts_incrby(struct keyspace *ks, const struct ks_key *k, uint64_t ts, double delta,
	      const struct ts_options *create, double *out, uint64_t *out_ts)
{
	struct ts_sample s = {ts == TS_NOW ? now_ms() : ts, delta};
	enum ts_add_result r;
	double v = 0;
	int rc = madd(ks, k, &s, 1, TS_MADD_ATOMIC | TS_MADD_CREATE | MADD_INCR, TS_DUP_NONE,
		      create, &r, NULL, &v);
	if (!rc && out)
		*out = v;
	if (!rc && out_ts)
		*out_ts = s.ts;
	return rc;
}

int ts_del(struct keyspace *ks, const struct ks_key *k, uint64_t from, uint64_t to,
	   uint64_t *deleted)
{
	struct rules rs = {0};
	struct ks_key *keys = NULL;
	size_t nkeys = 0;
	struct store_batch *b = NULL;
	struct series s;
	struct sarr gone = {0};
	struct ssamp *c = NULL;
	struct dst_upd *u = NULL;
	uint64_t del = 0;
	int rc;
	if (from > to)
		return -EINVAL;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	rc = lock_with_rules(ks, k, &keys, &nkeys, &rs);
	if (rc) {
		store_batch_free(b);
		return rc;
	}
	rc = series_open(&s, ks, k, false, NULL);
	if (!rc)
		rc = series_delete(&s, from, to, &del, &gone);
	if (!rc && del) {
		s.dirty = true;
		/* Rules: every bucket that lost samples is recomputed. */
		if (rs.n && !(c = calloc(gone.n, sizeof(*c))))
			rc = -ENOMEM;
		if (rs.n && !rc && !(u = calloc(rs.n, sizeof(*u))))
			rc = -ENOMEM;
		for (size_t i = 0; i < rs.n && !rc; i++) {
			struct ts_rule *r = &rs.e[i].r;
			uint64_t prev = UINT64_MAX;
			for (size_t j = 0; j < gone.n && !rc; j++) {
				uint64_t bk = ts_bucket_left(gone.s[j].ts, r->bucket, r->align);
				if (bk == prev)
					continue;
				prev = bk;
				bool open = !(r->latest == 0 && ts_rule_is_reset(r));
				if (open && bk == r->latest) {
					rc = rule_refold(&s, r);
				} else if (open && bk < r->latest) {
					struct sarr a = {0};
					rc = bucket_samples(&s, r, bk, &a);
					if (!rc && a.n)
						rc = sarr_push(
						    &u[i].put,
						    (struct ts_sample){
							bk, ts_aggregate(r->agg, a.s, a.n)});
					else if (!rc)
						rc =
						    sarr_push(&u[i].del, (struct ts_sample){bk, 0});
					free(a.s);
				}
			}
			if (!rc)
				rc = rule_put(&s, b, rs.e[i].dst.data, rs.e[i].dst.len, r);
			struct ks_key dk = *k;
			dk.key = rs.e[i].dst.data;
			dk.klen = rs.e[i].dst.len;
			dk.attr = NULL;
			if (!rc)
				rc = dst_write(ks, &dk, &u[i], b);
		}
		if (!rc)
			rc = series_flush(&s, b);
		if (!rc)
			rc = ks_write(ks, b);
	}
	if (!rc && deleted)
		*deleted = del;
	series_release(&s);
	ks_unlockv(ks, keys, nkeys);
	if (u)
		for (size_t i = 0; i < rs.n; i++) {
			free(u[i].put.s);
			free(u[i].del.s);
		}
	free(u);
	free(c);
	free(gone.s);
	free(keys);
	rules_release(&rs);
	store_batch_free(b);
	return rc;
}

/* ---- reading ------------------------------------------------------------------ */

int ts_get(struct keyspace *ks, const struct ks_key *k, struct ts_sample *out)
{
	struct series s;
	bool any = false;
	int rc = series_open(&s, ks, k, false, NULL);
	if (!rc)
		rc = series_last(&s, &any, out);
	series_release(&s);
	return rc ? rc : (any ? 1 : 0);
}

void ts_range_opt_init(struct ts_range_opt *o)
{
	memset(o, 0, sizeof(*o));
	o->to = UINT64_MAX;
}

static bool ts_in(const struct ts_range_opt *o, uint64_t ts)
{
	if (!o->nfilter_ts)
		return true;
	for (size_t i = 0; i < o->nfilter_ts; i++)
		if (o->filter_ts[i] == ts)
			return true;
	return false;
}

/* Kvrocks's AggregateSamplesByRangeOption over samples a (time order). */
static int range_aggregate(const struct ts_range_opt *o, const struct sarr *a, struct sarr *out)
{
	int rc = 0;
	if (!a->n)
		return 0;
	uint64_t left = ts_bucket_left(a->s[0].ts, o->bucket, o->align);
	size_t i = 0;
	bool prev_empty = true;
	double prev_last = NAN;
	while (i < a->n && !rc) {
		uint64_t right = ts_bucket_right(left, o->bucket, o->align);
		size_t j = i;
		while (j < a->n && a->s[j].ts < right)
			j++;
		uint64_t ts = o->bt == TS_BT_END   ? left + o->bucket
			      : o->bt == TS_BT_MID ? left + o->bucket / 2
						   : left;
		if (j > i) {
			rc = sarr_push(
			    out, (struct ts_sample){ts, ts_aggregate(o->agg, a->s + i, j - i)});
			prev_empty = false;
			prev_last = a->s[j - 1].v;
		} else if (o->empty) {
			double v = NAN;
			if (o->agg == TS_AGG_SUM || o->agg == TS_AGG_COUNT)
				v = 0;
			else if (o->agg == TS_AGG_LAST && !prev_empty)
				v = prev_last; /* NEEDSWORK: Kvrocks reads the empty span here */
			rc = sarr_push(out, (struct ts_sample){ts, v});
			prev_empty = true;
		}
		i = j;
		if (right == UINT64_MAX)
			break;
		left = right;
	}
	return rc;
}

static int range_locked(struct series *s, const struct ts_range_opt *o, bool reverse,
			struct sarr *out)
{
	struct ts_sample last;
	bool any;
	struct sarr a = {0};
	int rc = series_last(s, &any, &last);
	if (rc || !any || o->to < o->from)
		return rc;
	uint64_t from = o->from, to = o->to < last.ts ? o->to : last.ts;
	if (s->tm.retention && last.ts > s->tm.retention && last.ts - s->tm.retention > from)
		from = last.ts - s->tm.retention;
	if (from > to)
		return 0;
	rc = series_collect(s, from, to, &a);
	/* Filters. */
	size_t w = 0;
	for (size_t i = 0; i < a.n && !rc; i++) {
		if (!ts_in(o, a.s[i].ts))
			continue;
		if (o->filter_value && (a.s[i].v < o->vmin || a.s[i].v > o->vmax))
			continue;
		a.s[w++] = a.s[i];
	}
	a.n = w;
	if (!rc && o->agg) {
		rc = range_aggregate(o, &a, out);
	} else if (!rc) {
		*out = a;
		a.s = NULL;
	}
	free(a.s);
	if (rc)
		return rc;
	if (reverse)
		for (size_t i = 0; i < out->n / 2; i++) {
			struct ts_sample t = out->s[i];
			out->s[i] = out->s[out->n - 1 - i];
			out->s[out->n - 1 - i] = t;
		}
	if (o->count && out->n > o->count)
		out->n = o->count;
	return 0;
}

static int check_range(const struct ts_range_opt *o)
{
	if (o->agg && (!ts_agg_name(o->agg) || o->bucket == 0)) {
		LOG_ERR("AGGREGATION: a known aggregator and a bucket duration > 0");
		return -EINVAL;
	}
	if (o->filter_value && (isnan(o->vmin) || isnan(o->vmax))) {
		LOG_ERR("FILTER_BY_VALUE: two numbers");
		return -EINVAL;
	}
	return 0;
}

int ts_range(struct keyspace *ks, const struct ks_key *k, const struct ts_range_opt *o,
	     bool reverse, struct ts_sample **out, size_t *n)
{
	struct series s;
	struct sarr r = {0};
	int rc = check_range(o);
	if (rc)
		return rc;
	rc = series_open(&s, ks, k, false, NULL);
	if (!rc)
		rc = range_locked(&s, o, reverse, &r);
	series_release(&s);
	if (rc) {
		free(r.s);
		return rc;
	}
	*out = r.s;
	*n = r.n;
	return 0;
}

struct info_acc {
	struct ts_info *i;
	bool first;
};

int ts_info(struct keyspace *ks, const struct ks_key *k, struct ts_info *out)
{
	struct series s;
	struct buf key = BUF_INIT;
	memset(out, 0, sizeof(*out));
	int rc = series_open(&s, ks, k, false, NULL);
	if (rc) {
		series_release(&s);
		return rc;
	}
	out->m = s.tm;
	rc = buf_set(&out->source, s.tm.source, s.tm.source_len);
	out->m.source = out->source.data;
	out->chunks = s.m.size;
	/* The samples inside the retention window, as TS.INFO counts them. */
	struct ts_sample last;
	bool any = false;
	if (!rc)
		rc = series_last(&s, &any, &last);
	uint64_t bound = 0;
	if (any && s.tm.retention && last.ts > s.tm.retention)
		bound = last.ts - s.tm.retention;
	store_iter_seek_first(s.it);
	bool first = true;
	for (; !rc && any && chunk_valid(&s, true); store_iter_next(s.it)) {
		size_t vn;
		uint32_t count;
		const void *v = store_iter_value(s.it, &vn);
		if (!chunk_check(v, vn, &count)) {
			rc = ks_corrupt(&s.k, "time-series chunk %llu does not decode (%zu bytes)",
					(unsigned long long)iter_id(&s), vn);
			break;
		}
		out->memory += vn;
		for (uint32_t i = 0; i < count; i++) {
			struct ts_sample x = chunk_sample(v, i);
			if (x.ts < bound)
				continue;
			if (first)
				out->first_ts = x.ts;
			first = false;
			out->total_samples++;
		}
	}
	if (any)
		out->last_ts = last.ts;
	buf_release(&key);
	series_release(&s);
	if (rc)
		buf_release(&out->source);
	return rc;
}

int ts_labels(struct keyspace *ks, const struct ks_key *k, ts_label_cb cb, void *arg)
{
	struct series s;
	int rc = series_open(&s, ks, k, false, NULL);
	if (!rc)
		rc = series_subs(&s, SUB_LABEL, cb, arg);
	series_release(&s);
	return rc;
}

static int label_find_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	(void)v;
	(void)vn;
	const struct ts_label *l = arg;
	return nn == l->nn && memcmp(name, l->name, nn) == 0 ? 1 : 0;
}

int ts_label_set(struct keyspace *ks, const struct ks_key *k, const char *name, size_t nn,
		 const char *v, size_t vn)
{
	struct series s;
	struct store_batch *b;
	struct buf key = BUF_INIT;
	if (!nn || (v && !vn)) {
		LOG_ERR("a label needs a name and a value");
		return -EINVAL;
	}
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	int rc = series_open(&s, ks, k, false, NULL);
	if (!rc && !v) {
		struct ts_label l = {name, nn, NULL, 0};
		rc = series_subs(&s, SUB_LABEL, label_find_cb, &l);
		rc = rc == 1 ? 0 : (rc ? rc : -ENODATA);
	}
	if (!rc)
		rc = sub_key(&s, SUB_LABEL, name, nn, &key);
	if (!rc) {
		if (v)
			store_batch_put(b, STORE_CF_DEFAULT, key.data, key.len, v, vn);
		else
			store_batch_delete(b, STORE_CF_DEFAULT, key.data, key.len);
		rc = ks_write(ks, b);
	}
	series_release(&s);
	ks_unlock(ks, k);
	buf_release(&key);
	store_batch_free(b);
	return rc;
}

/* ---- rules -------------------------------------------------------------------- */

struct rule_find {
	const char *dst;
	size_t dn;
	bool found;
	size_t n; /* rules seen */
};

static int rule_find_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	(void)v;
	(void)vn;
	struct rule_find *f = arg;
	if (nn == f->dn && memcmp(name, f->dst, nn) == 0)
		f->found = true;
	f->n++;
	return 0;
}

static int any_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	(void)name;
	(void)nn;
	(void)v;
	(void)vn;
	*(bool *)arg = true;
	return 0;
}

int ts_createrule(struct keyspace *ks, const struct ks_key *src, const struct ks_key *dst, int agg,
		  uint64_t bucket, uint64_t align, const struct ts_rule *state)
{
	struct series s, d;
	struct store_batch *b;
	struct ts_rule r;
	bool has_rules = false;
	int rc;
	if (!ts_agg_name(agg) || bucket == 0) {
		LOG_ERR("TS.CREATERULE: a known aggregator and a bucket duration > 0");
		return -EINVAL;
	}
	if (src->nslen != dst->nslen || memcmp(src->ns, dst->ns, src->nslen) != 0 ||
	    (src->klen == dst->klen && memcmp(src->key, dst->key, src->klen) == 0)) {
		LOG_ERR("TS.CREATERULE: source and destination must be two keys of one namespace");
		return -EINVAL;
	}
	if (state)
		r = *state;
	else
		ts_rule_init(&r, agg, bucket, align);
	r.agg = agg;
	r.bucket = bucket;
	r.align = align;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock2(ks, src, dst);
	memset(&d, 0, sizeof(d));
	/* A restore makes a missing source or destination in the same batch. */
	rc = series_open(&s, ks, src, state != NULL, NULL);
	if (!rc)
		rc = series_open(&d, ks, dst, state != NULL, NULL);
	if (!rc && s.tm.source_len) {
		LOG_ERR("TS.CREATERULE: the source '%.*s' is itself a destination", (int)src->klen,
			src->key);
		rc = -EINVAL;
	}
	if (!rc && d.tm.source_len &&
	    !(d.tm.source_len == src->klen && memcmp(d.tm.source, src->key, src->klen) == 0)) {
		LOG_ERR("TS.CREATERULE: '%.*s' already has a source", (int)dst->klen, dst->key);
		rc = -EINVAL;
	}
	if (!rc) {
		rc = series_subs(&d, SUB_RULE, any_cb, &has_rules);
		if (!rc && has_rules) {
			LOG_ERR("TS.CREATERULE: the destination '%.*s' has rules of its own",
				(int)dst->klen, dst->key);
			rc = -EINVAL;
		}
	}
	if (!rc) {
		struct rule_find f = {dst->key, dst->klen, false, 0};
		rc = series_subs(&s, SUB_RULE, rule_find_cb, &f);
		if (!rc && f.found && !state)
			rc = -EEXIST;
		if (!rc && !f.found && f.n >= TS_RULES_MAX) {
			/* an add locks the source and every destination at once */
			LOG_ERR("TS.CREATERULE: '%.*s' has %d rules, the most kvfs keeps",
				(int)src->klen, src->key, TS_RULES_MAX);
			rc = -ENOSPC;
		}
	}
	if (!rc)
		rc = rule_put(&s, b, dst->key, dst->klen, &r);
	if (!rc && s.fresh)
		rc = series_flush(&s, b);
	if (!rc) {
		d.tm.source = src->key;
		d.tm.source_len = src->klen;
		d.dirty = true;
		rc = series_flush(&d, b);
	}
	if (!rc)
		rc = ks_write(ks, b);
	series_release(&s);
	series_release(&d);
	ks_unlock2(ks, src, dst);
	store_batch_free(b);
	return rc;
}

int ts_deleterule(struct keyspace *ks, const struct ks_key *src, const struct ks_key *dst)
{
	struct series s, d;
	struct store_batch *b;
	struct buf key = BUF_INIT;
	int rc;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock2(ks, src, dst);
	memset(&d, 0, sizeof(d));
	rc = series_open(&s, ks, src, false, NULL);
	if (!rc) {
		struct rule_find f = {dst->key, dst->klen, false, 0};
		rc = series_subs(&s, SUB_RULE, rule_find_cb, &f);
		if (!rc && !f.found)
			rc = -ENOENT;
	}
	if (!rc)
		rc = sub_key(&s, SUB_RULE, dst->key, dst->klen, &key);
	if (!rc) {
		store_batch_delete(b, STORE_CF_DEFAULT, key.data, key.len);
		int r = series_open(&d, ks, dst, false, NULL);
		if (r == 0 && d.tm.source_len == src->klen &&
		    memcmp(d.tm.source, src->key, src->klen) == 0) {
			d.tm.source = "";
			d.tm.source_len = 0;
			d.dirty = true;
			rc = series_flush(&d, b);
		}
	}
	if (!rc)
		rc = ks_write(ks, b);
	series_release(&s);
	series_release(&d);
	ks_unlock2(ks, src, dst);
	buf_release(&key);
	store_batch_free(b);
	return rc;
}

struct rules_user {
	const struct ks_key *k;
	ts_rule_cb cb;
	void *arg;
};

static int rules_user_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct rules_user *u = arg;
	struct ts_rule r;
	if (rule_decode(v, vn, &r))
		return ks_corrupt_entry(u->k, name, nn,
					"time-series rule record of %zu bytes does not decode", vn);
	return u->cb(u->arg, name, nn, &r);
}

int ts_rules(struct keyspace *ks, const struct ks_key *k, ts_rule_cb cb, void *arg)
{
	struct series s;
	struct rules_user u = {k, cb, arg};
	int rc = series_open(&s, ks, k, false, NULL);
	if (!rc)
		rc = series_subs(&s, SUB_RULE, rules_user_cb, &u);
	series_release(&s);
	return rc;
}

/* ---- label filters (alg_tsagg.c matches) ----------------------------------- */
struct lab {
	struct buf *names, *vals;
	size_t n;
};

static int lab_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct lab *l = arg;
	void *p = realloc(l->names, (l->n + 1) * sizeof(*l->names));
	if (!p)
		return -ENOMEM;
	l->names = p;
	p = realloc(l->vals, (l->n + 1) * sizeof(*l->vals));
	if (!p)
		return -ENOMEM;
	l->vals = p;
	buf_init(&l->names[l->n]);
	buf_init(&l->vals[l->n]);
	l->n++;
	int rc = buf_set(&l->names[l->n - 1], name, nn);
	return rc ? rc : buf_set(&l->vals[l->n - 1], v, vn);
}

/* Do the labels l pass filter f? (false when out of memory: no match) */
static bool lab_match(const struct ts_filter *f, const struct lab *l)
{
	struct ts_label *v = calloc(l->n + 1, sizeof(*v));
	if (!v)
		return false;
	for (size_t i = 0; i < l->n; i++) {
		v[i].name = l->names[i].data;
		v[i].nn = l->names[i].len;
		v[i].value = l->vals[i].data;
		v[i].vn = l->vals[i].len;
	}
	bool ok = ts_filter_match(f, v, l->n);
	free(v);
	return ok;
}

static void lab_release(struct lab *l)
{
	for (size_t i = 0; i < l->n; i++) {
		buf_release(&l->names[i]);
		buf_release(&l->vals[i]);
	}
	free(l->names);
	free(l->vals);
	memset(l, 0, sizeof(*l));
}

/* Every time series of the namespace whose labels match. */
static int each_series(struct keyspace *ks, const char *ns, size_t nslen, const struct ts_filter *f,
		       int (*fn)(void *arg, struct series *s), void *arg)
{
	struct ks_key_iter *it;
	const char *key;
	size_t klen;
	struct ks_info info;
	int rc = ts_filter_check(f);
	if (rc)
		return rc;
	if (!(it = ks_key_iter_new(ks, ns, nslen, NULL, 0)))
		return -ENOMEM;
	while (!rc && (rc = ks_key_iter_next(it, &key, &klen, &info)) == 1) {
		rc = 0;
		if (info.type != KV_TYPE_TIMESERIES || info.empty)
			continue;
		struct ks_key k = {ns, nslen, key, klen, NULL};
		struct series s;
		struct lab l = {0};
		rc = series_open(&s, ks, &k, false, NULL);
		if (!rc)
			rc = series_subs(&s, SUB_LABEL, lab_cb, &l);
		if (!rc && lab_match(f, &l))
			rc = fn(arg, &s);
		else if (rc == -ENOENT)
			rc = 0; /* gone meanwhile */
		lab_release(&l);
		series_release(&s);
	}
	ks_key_iter_free(it);
	return rc < 0 ? rc : (rc > 0 && rc != 1 ? rc : 0);
}

struct mq {
	const struct ts_range_opt *o;
	bool reverse, get;
	ts_series_cb cb;
	void *arg;
};

static int mq_fn(void *arg, struct series *s)
{
	struct mq *q = arg;
	struct sarr r = {0};
	struct ts_sample last;
	bool any = false;
	int rc;
	if (q->get) {
		rc = series_last(s, &any, &last);
		if (!rc && any)
			rc = sarr_push(&r, last);
	} else {
		rc = range_locked(s, q->o, q->reverse, &r);
	}
	if (!rc) {
		struct ts_series_result res = {s->k.key, s->k.klen, r.s, r.n};
		rc = q->cb(q->arg, &res);
	}
	free(r.s);
	return rc;
}

int ts_mrange(struct keyspace *ks, const char *ns, size_t nslen, const struct ts_filter *f,
	      const struct ts_range_opt *o, bool reverse, ts_series_cb cb, void *arg)
{
	struct mq q = {o, reverse, false, cb, arg};
	int rc = check_range(o);
	return rc ? rc : each_series(ks, ns, nslen, f, mq_fn, &q);
}

int ts_mget(struct keyspace *ks, const char *ns, size_t nslen, const struct ts_filter *f,
	    ts_series_cb cb, void *arg)
{
	struct mq q = {NULL, false, true, cb, arg};
	return each_series(ks, ns, nslen, f, mq_fn, &q);
}

int ts_policy(struct keyspace *ks, const struct ks_key *k, int *policy)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	struct ts_meta tm;
	int rc = ks_meta_get(ks, k, KV_TYPE_TIMESERIES, &raw, &m);
	if (!rc && ts_meta_decode(m.tail, m.tail_len, &tm))
		rc = ks_corrupt(k, "time-series metadata tail of %zu bytes does not decode",
				m.tail_len);
	if (!rc) {
		*policy = tm.policy;
		if (!ts_policy_name(tm.policy))
			rc = ks_corrupt(k, "time-series duplicate policy %u names no policy",
					tm.policy);
	}
	buf_release(&raw);
	return rc;
}

/* ---- chunks, for the tree ------------------------------------------------------ */

struct ts_chunk_iter {
	struct series s;
	bool started, empty;
	struct sarr cur;
};

struct ts_chunk_iter *ts_chunk_iter_new(struct keyspace *ks, const struct ks_key *k,
					const uint64_t *after, int *err)
{
	struct ts_chunk_iter *it = calloc(1, sizeof(*it));
	struct buf key = BUF_INIT;
	int rc;
	*err = 0;
	if (!it) {
		*err = -ENOMEM;
		return NULL;
	}
	rc = series_open(&it->s, ks, k, false, NULL);
	if (rc == -ENOENT) {
		it->empty = true;
		return it;
	}
	if (!rc && after && *after == UINT64_MAX)
		it->empty = true;
	else if (!rc && after)
		rc = chunk_key(&it->s, *after + 1, &key);
	if (!rc && !it->empty) {
		if (after)
			store_iter_seek(it->s.it, key.data, key.len);
		else
			store_iter_seek_first(it->s.it);
	}
	buf_release(&key);
	if (rc) {
		series_release(&it->s);
		free(it);
		*err = rc;
		return NULL;
	}
	return it;
}

int ts_chunk_iter_next(struct ts_chunk_iter *it, uint64_t *id, uint32_t *count)
{
	if (it->empty)
		return 0;
	if (it->started)
		store_iter_next(it->s.it);
	it->started = true;
	if (!chunk_valid(&it->s, true))
		return store_iter_status(it->s.it) ? -EIO : 0;
	size_t vn;
	const void *v = store_iter_value(it->s.it, &vn);
	*id = iter_id(&it->s);
	/* A value that does not decode is listed all the same (samples()
	 * says -EUCLEAN): its lookup answers, its read is EIO, rm removes
	 * it. */
	if (!chunk_check(v, vn, count)) {
		*count = 0;
		ks_corrupt(&it->s.k, "time-series chunk %llu does not decode (%zu bytes)",
			   (unsigned long long)*id, vn);
	}
	return 1;
}

int ts_chunk_iter_samples(struct ts_chunk_iter *it, const struct ts_sample **out, size_t *n)
{
	size_t vn;
	uint32_t count;
	const void *v = store_iter_value(it->s.it, &vn);
	it->cur.n = 0;
	if (!chunk_check(v, vn, &count))
		return -EUCLEAN;
	for (uint32_t i = 0; i < count; i++)
		if (sarr_push(&it->cur, chunk_sample(v, i)))
			return -ENOMEM;
	*out = it->cur.s;
	*n = it->cur.n;
	return 0;
}

void ts_chunk_iter_free(struct ts_chunk_iter *it)
{
	if (!it)
		return;
	free(it->cur.s);
	series_release(&it->s);
	free(it);
}

int ts_chunk_get(struct keyspace *ks, const struct ks_key *k, uint64_t id, struct ts_sample **out,
		 size_t *n)
{
	struct series s;
	struct sarr a = {0};
	int rc = series_open(&s, ks, k, false, NULL);
	if (!rc)
		rc = chunk_read(&s, id, &a);
	series_release(&s);
	if (rc) {
		free(a.s);
		return rc;
	}
	*out = a.s;
	*n = a.n;
	return 0;
}

int ts_chunk_put(struct keyspace *ks, const struct ks_key *k, uint64_t id,
		 const struct ts_sample *in, size_t n)
{
	struct series s;
	struct store_batch *b;
	struct buf key = BUF_INIT, val = BUF_INIT;
	int rc = 0;
	for (size_t i = 0; i < n; i++) {
		if (isnan(in[i].v) || (i > 0 && in[i].ts <= in[i - 1].ts)) {
			LOG_ERR("chunk %llu: line %zu: timestamps must increase and values be "
				"numbers",
				(unsigned long long)id, i + 1);
			return -EINVAL;
		}
	}
	if (n && in[0].ts != id) {
		LOG_ERR("chunk %llu: its first sample must be at %llu (a chunk is named by its "
			"first timestamp), not %llu",
			(unsigned long long)id, (unsigned long long)id,
			(unsigned long long)in[0].ts);
		return -EINVAL;
	}
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = series_open(&s, ks, k, false, NULL);
	bool exists = false;
	if (!rc) {
		struct buf v = BUF_INIT;
		rc = chunk_key(&s, id, &key);
		if (!rc) {
			rc = store_get(ks_store(ks), STORE_CF_DEFAULT, key.data, key.len, &v);
			exists = rc == 0;
			rc = rc == -ENOENT ? 0 : rc;
		}
		buf_release(&v);
	}
	/* Neighbours: the chunk before must end before id, the next one
	 * must start after the last sample. */
	if (!rc && n) {
		struct sarr prev = {0};
		if (id > 0)
			rc = chunk_key(&s, id - 1, &key);
		if (!rc && id > 0) {
			store_iter_seek_for_prev(s.it, key.data, key.len);
			if (chunk_valid(&s, false) && chunk_read(&s, iter_id(&s), &prev) == 0 &&
			    prev.n && prev.s[prev.n - 1].ts >= id)
				rc = -EINVAL;
		}
		if (!rc && id < UINT64_MAX)
			rc = chunk_key(&s, id + 1, &key);
		if (!rc && id < UINT64_MAX) {
			store_iter_seek(s.it, key.data, key.len);
			if (chunk_valid(&s, true) && iter_id(&s) <= in[n - 1].ts)
				rc = -EINVAL;
		}
		if (rc == -EINVAL)
			LOG_ERR("chunk %llu: its samples overlap another chunk",
				(unsigned long long)id);
		free(prev.s);
	}
	if (!rc && !n && !exists)
		rc = 0;
	else if (!rc) {
		rc = chunk_key(&s, id, &key);
		if (!rc && n) {
			rc = chunk_encode(&val, in, n);
			if (!rc)
				store_batch_put(b, STORE_CF_DEFAULT, key.data, key.len, val.data,
						val.len);
			if (!exists)
				s.m.size++;
		} else if (!rc) {
			store_batch_delete(b, STORE_CF_DEFAULT, key.data, key.len);
			s.m.size--;
		}
		s.dirty = true;
		if (!rc)
			rc = series_flush(&s, b);
		if (!rc)
			rc = ks_write(ks, b);
	}
	series_release(&s);
	ks_unlock(ks, k);
	buf_release(&key);
	buf_release(&val);
	store_batch_free(b);
	return rc;
}

int ts_set_last_timestamp(struct keyspace *ks, const struct ks_key *k, uint64_t ts)
{
	struct series s;
	struct store_batch *b;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	int rc = series_open(&s, ks, k, false, NULL);
	if (!rc) {
		s.tm.last_ts = ts;
		s.dirty = true;
		rc = series_flush(&s, b);
	}
	if (!rc)
		rc = ks_write(ks, b);
	series_release(&s);
	ks_unlock(ks, k);
	store_batch_free(b);
	return rc;
}
