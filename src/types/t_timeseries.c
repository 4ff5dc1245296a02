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
 * The module is four files around one private header
 * (t_timeseries_int.h, struct ts_series: one series being read or
 * changed): this one (the chunks of a series, TS.CREATE/ALTER, the adds,
 * TS.DEL, TS.GET/INFO, the chunk-level access of the tree), t_ts_range.c
 * (TS.RANGE), t_ts_rules.c (compaction rules) and t_ts_labels.c (labels,
 * MRANGE, MGET). The pure parts (aggregators, rule state, bucket
 * alignment, label filters) live in alg_tsagg.c. Every write is one
 * transaction (ks_txn.h): an add or a delete locks the series and the
 * destinations of its rules, and writes them all with one batch.
 */
#include "types/t_timeseries_int.h"

#include "engine/store.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <strings.h>

#define CHUNK_HDR    8
#define SAMPLE_BYTES 16

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

/* The tail ts_meta_decode reads, at the same offsets. */
static int meta_tail(struct buf *out, const struct ts_meta *m)
{
	buf_reset(out);
	int rc = buf_resize(out, 22 + m->source_len + 8);
	if (rc)
		return rc;
	uint8_t *t = (uint8_t *)out->data;
	put_be64(t, m->retention);
	put_be64(t + 8, m->chunk_size);
	t[16] = m->chunk_type;
	t[17] = m->policy;
	put_be32(t + 18, (uint32_t)m->source_len);
	if (m->source_len)
		memcpy(t + 22, m->source, m->source_len);
	put_be64(t + 22 + m->source_len, m->last_ts);
	return 0;
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

/* ---- samples ----------------------------------------------------------- */

int ts_ssamp_cmp(const void *a, const void *b)
{
	const struct ts_ssamp *x = a, *y = b;
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

int ts_sarr_push(struct ts_sarr *a, struct ts_sample s)
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

void ts_series_release(struct ts_series *s)
{
	buf_release(&s->raw);
	buf_release(&s->pfx);
	buf_release(&s->src);
	buf_release(&s->tail);
	store_iter_free(s->it);
	free(s->dead);
	for (size_t i = 0; i < s->nnc; i++)
		free(s->nc[i].s);
	free(s->nc);
	memset(s, 0, sizeof(*s));
}

static int series_iter(struct ts_series *s)
{
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	int rc = buf_set(&lo, s->pfx.data, s->pfx.len);
	if (!rc)
		rc = buf_add_u8(&lo, TS_SUB_CHUNK);
	if (!rc)
		rc = buf_set(&hi, s->pfx.data, s->pfx.len);
	if (!rc)
		rc = buf_add_u8(&hi, TS_SUB_CHUNK + 1);
	if (!rc && !(s->it = store_iter_new_at(ks_store(s->ks), s->k.snap, STORE_CF_DEFAULT,
					       lo.data, lo.len, hi.data, hi.len)))
		rc = -ENOMEM;
	buf_release(&lo);
	buf_release(&hi);
	return rc;
}

/* A new series: the defaults, and what o sets. */
static void series_defaults(struct ts_series *s, const struct ts_options *o)
{
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
}

int ts_series_open(struct ts_series *s, struct keyspace *ks, struct ks_txn *t,
		   const struct ks_key *k, bool create, const struct ts_options *o)
{
	int rc;
	memset(s, 0, sizeof(*s));
	s->ks = ks;
	s->t = t;
	s->tk = k;
	s->k = *k;
	s->m = &s->own;
	if (!t)
		rc = ks_meta_get(ks, k, KV_TYPE_TIMESERIES, &s->raw, s->m);
	else if (create)
		rc = ks_txn_open(t, k, KV_TYPE_TIMESERIES, &s->m);
	else
		rc = ks_txn_get(t, k, KV_TYPE_TIMESERIES, &s->m);
	if (rc) {
		s->m = &s->own;
		return rc;
	}
	if (t && ks_txn_is_new(t, k)) {
		series_defaults(s, o);
	} else {
		rc = ts_meta_decode(s->m->tail, s->m->tail_len, &s->tm);
		if (rc)
			rc = ks_corrupt(k, "time-series metadata tail of %zu bytes does not decode",
					s->m->tail_len);
		else if (s->tm.chunk_size == 0)
			s->tm.chunk_size = TS_DEFAULT_CHUNK_SIZE;
		if (!rc)
			rc = buf_set(&s->src, s->tm.source, s->tm.source_len);
		s->tm.source = s->src.data;
	}
	if (!rc)
		rc = ks_sub_key(ks, k, s->m->version, NULL, 0, &s->pfx);
	if (!rc)
		rc = series_iter(s);
	return rc;
}

static int sub_key(struct ts_series *s, uint8_t type, const void *p, size_t n, struct buf *out)
{
	int rc = buf_set(out, s->pfx.data, s->pfx.len);
	if (!rc)
		rc = buf_add_u8(out, type);
	if (!rc)
		rc = buf_add(out, p, n);
	return rc;
}

static int chunk_key(struct ts_series *s, uint64_t id, struct buf *out)
{
	uint8_t b[8];
	put_be64(b, id);
	return sub_key(s, TS_SUB_CHUNK, b, 8, out);
}

/* The stored record of chunk id (pending changes aside) into v: 0,
 * -ENOENT, -EIO. */
static int chunk_get(struct ts_series *s, uint64_t id, struct buf *v)
{
	uint8_t sub[9];
	sub[0] = TS_SUB_CHUNK;
	put_be64(sub + 1, id);
	return ks_sub_get(s->ks, &s->k, s->m->version, STORE_CF_DEFAULT, sub, sizeof(sub), v);
}

int ts_series_subs(struct ts_series *s, uint8_t type, ts_label_cb cb, void *arg)
{
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	struct store_iter *it = NULL;
	int rc = sub_key(s, type, NULL, 0, &lo);
	if (!rc)
		rc = sub_key(s, type + 1, NULL, 0, &hi);
	if (!rc && !(it = store_iter_new_at(ks_store(s->ks), s->k.snap, STORE_CF_DEFAULT, lo.data,
					    lo.len, hi.data, hi.len)))
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

void ts_series_sub_put(struct ts_series *s, uint8_t type, const void *p, size_t n, const void *v,
		       size_t vn)
{
	struct buf sub = BUF_INIT;
	int rc = buf_add_u8(&sub, type);
	if (!rc)
		rc = buf_add(&sub, p, n);
	if (rc)
		ks_txn_fail(s->t, rc);
	else if (v)
		ks_txn_sub_put(s->t, s->tk, STORE_CF_DEFAULT, sub.data, sub.len, v, vn);
	else
		ks_txn_sub_del(s->t, s->tk, STORE_CF_DEFAULT, sub.data, sub.len);
	buf_release(&sub);
}

static bool is_dead(const struct ts_series *s, uint64_t id)
{
	for (size_t i = 0; i < s->ndead; i++)
		if (s->dead[i] == id)
			return true;
	return false;
}

static struct ts_nchunk *find_new(struct ts_series *s, uint64_t id)
{
	for (size_t i = 0; i < s->nnc; i++)
		if (s->nc[i].id == id)
			return &s->nc[i];
	return NULL;
}

static void iter_step(struct ts_series *s, bool fwd)
{
	if (fwd)
		store_iter_next(s->it);
	else
		store_iter_prev(s->it);
}

/*
 * Is the series iterator on a chunk? A record of the chunk range whose
 * key is not 8 bytes of id (after the 00) is no chunk: its id cannot be
 * read, so no chunk name reaches it. It is skipped with a log line,
 * moving forward or back (docs/encoding.md section 20): what the tree
 * lists must be what a lookup finds.
 */
static bool chunk_valid(struct ts_series *s, bool fwd)
{
	while (store_iter_valid(s->it)) {
		size_t n;
		const char *key = store_iter_key(s->it, &n);
		if (n == s->pfx.len + 1 + 8)
			return true;
		ks_corrupt_entry(&s->k, key + s->pfx.len + 1, n - s->pfx.len - 1,
				 "a time-series chunk key of %zu bytes, not 8; skipped",
				 n - s->pfx.len - 1);
		iter_step(s, fwd);
	}
	return false;
}

/* Report chunk id, whose value of vn bytes does not decode. -EUCLEAN. */
static int chunk_corrupt(struct ts_series *s, uint64_t id, size_t vn)
{
	return ks_corrupt(&s->k, "time-series chunk %llu does not decode (%zu bytes)",
			  (unsigned long long)id, vn);
}

/* The id of the chunk the iterator stands on (chunk_valid). */
static uint64_t iter_id(struct ts_series *s)
{
	size_t n;
	const uint8_t *key = store_iter_key(s->it, &n);
	return get_be64(key + n - 8);
}

/* Put the iterator on the chunk that may hold `from`: the greatest one
 * <= from, else the first. */
static int chunk_seek(struct ts_series *s, uint64_t from)
{
	struct buf key = BUF_INIT;
	int rc = chunk_key(s, from, &key);
	if (!rc) {
		store_iter_seek_for_prev(s->it, key.data, key.len);
		if (!chunk_valid(s, false))
			store_iter_seek_first(s->it);
	}
	buf_release(&key);
	return rc;
}

/* chunk_valid, past the chunks pending deletion: true with its id. */
static bool chunk_live(struct ts_series *s, bool fwd, uint64_t *id)
{
	for (; chunk_valid(s, fwd); iter_step(s, fwd))
		if (!is_dead(s, iter_id(s))) {
			*id = iter_id(s);
			return true;
		}
	return false;
}

/*
 * Chunks as they are with the pending changes: the id of the greatest
 * chunk <= ts (or, if none, the first chunk) in *own, and the next chunk
 * after it in *next. Returns 1 if there is a chunk, 0 if the series has
 * none, or an errno.
 */
static int chunk_around(struct ts_series *s, uint64_t ts, uint64_t *own, bool *has_next,
			uint64_t *next)
{
	struct buf key = BUF_INIT;
	uint64_t best = 0, first = UINT64_MAX;
	bool found, any;
	int rc = chunk_key(s, ts, &key);
	if (rc)
		return rc;
	store_iter_seek_for_prev(s->it, key.data, key.len);
	found = chunk_live(s, false, &best);
	for (size_t i = 0; i < s->nnc; i++) {
		if (s->nc[i].id <= ts && (!found || s->nc[i].id > best)) {
			best = s->nc[i].id;
			found = true;
		}
	}
	if (!found) {
		/* Older than every chunk: the first one. */
		store_iter_seek_first(s->it);
		any = chunk_live(s, true, &first);
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
		*has_next = chunk_live(s, true, next);
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
static int chunk_read(struct ts_series *s, uint64_t id, struct ts_sarr *out)
{
	struct ts_nchunk *c = find_new(s, id);
	out->n = 0;
	if (c) {
		for (size_t i = 0; i < c->n; i++)
			if (ts_sarr_push(out, c->s[i]))
				return -ENOMEM;
		return 0;
	}
	if (is_dead(s, id))
		return -ENOENT;
	struct buf v = BUF_INIT;
	uint32_t count;
	int rc = chunk_get(s, id, &v);
	if (!rc && !chunk_check(v.data, v.len, &count))
		rc = chunk_corrupt(s, id, v.len);
	for (uint32_t i = 0; !rc && i < count; i++)
		rc = ts_sarr_push(out, chunk_sample(v.data, i));
	buf_release(&v);
	return rc;
}

/* Replace chunk old (if had_old) by the samples a, split in pieces of
 * the given sizes. */
static int chunk_replace(struct ts_series *s, bool had_old, uint64_t old, const struct ts_sarr *a,
			 const size_t *sizes, size_t npieces)
{
	if (had_old) {
		struct ts_nchunk *c = find_new(s, old);
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
		s->m->size--;
	}
	size_t off = 0;
	for (size_t i = 0; i < npieces; i++) {
		void *p = realloc(s->nc, (s->nnc + 1) * sizeof(*s->nc));
		if (!p)
			return -ENOMEM;
		s->nc = p;
		struct ts_nchunk *c = &s->nc[s->nnc];
		c->n = sizes[i];
		c->s = malloc(sizes[i] * sizeof(*c->s));
		if (!c->s)
			return -ENOMEM;
		memcpy(c->s, a->s + off, sizes[i] * sizeof(*c->s));
		c->id = c->s[0].ts;
		off += sizes[i];
		s->nnc++;
		s->m->size++;
	}
	s->dirty = true;
	return 0;
}

/* Kvrocks's split sizes. fixed: pieces of cs; else equal pieces when the
 * chunk holds more than 2 x cs. cs is the stored chunk_size, any number
 * from 1 up: nothing here may overflow (there are at most total pieces). */
static size_t split_sizes(size_t total, uint64_t cs, bool fixed, size_t **out)
{
	size_t np = 1;
	if (fixed)
		np = (size_t)(total / cs + (total % cs != 0));
	else if (total > cs && total - cs > cs)
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
int ts_series_last(struct ts_series *s, bool *any, struct ts_sample *last)
{
	uint64_t own, next;
	bool hn;
	struct ts_sarr a = {0};
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
int ts_series_collect(struct ts_series *s, uint64_t from, uint64_t to, struct ts_sarr *out)
{
	uint32_t count;
	int rc = chunk_seek(s, from);
	out->n = 0;
	for (; !rc && chunk_valid(s, true); store_iter_next(s->it)) {
		uint64_t id = iter_id(s);
		if (id > to)
			break;
		if (is_dead(s, id) || find_new(s, id))
			continue;
		size_t vn;
		const void *v = store_iter_value(s->it, &vn);
		if (!chunk_check(v, vn, &count)) {
			rc = chunk_corrupt(s, id, vn);
			break;
		}
		for (uint32_t i = 0; i < count && !rc; i++) {
			struct ts_sample x = chunk_sample(v, i);
			if (x.ts >= from && x.ts <= to)
				rc = ts_sarr_push(out, x);
		}
	}
	if (!rc && store_iter_status(s->it))
		rc = -EIO;
	for (size_t i = 0; i < s->nnc && !rc; i++)
		for (size_t j = 0; j < s->nc[i].n && !rc; j++)
			if (s->nc[i].s[j].ts >= from && s->nc[i].s[j].ts <= to)
				rc = ts_sarr_push(out, s->nc[i].s[j]);
	if (!rc && out->n > 1)
		qsort(out->s, out->n, sizeof(*out->s), sample_cmp);
	return rc;
}

static int by_idx(const void *a, const void *b)
{
	const struct ts_ssamp *x = *(struct ts_ssamp *const *)a, *y = *(struct ts_ssamp *const *)b;
	return x->idx < y->idx ? -1 : (x->idx > y->idx ? 1 : 0);
}

/*
 * Upsert sorted samples (results preset for duplicates inside the batch)
 * with the policy, as Kvrocks's upsertCommonInBatch: retention first,
 * then chunk by chunk with its split rule.
 */
int ts_series_upsert(struct ts_series *s, struct ts_ssamp *v, size_t n, int policy)
{
	struct ts_sample last;
	bool any;
	struct ts_sarr a = {0};
	size_t *sizes = NULL;
	int rc = ts_series_last(s, &any, &last);
	if (rc)
		return rc;
	if (s->tm.retention) {
		/* Kvrocks's Expire: in the caller's order, against a running newest. */
		uint64_t lt = any ? last.ts : 0;
		struct ts_ssamp **order = malloc(n * sizeof(*order) + 1);
		if (!order)
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			order[i] = &v[i];
		qsort(order, n, sizeof(*order), by_idx);
		for (size_t i = 0; i < n; i++) {
			struct ts_ssamp *x = order[i];
			if (lt > x->s.ts && lt - x->s.ts > s->tm.retention) /* no wrap */
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
			struct ts_ssamp *x = &v[j];
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
			if ((rc = ts_sarr_push(&a, x->s)))
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

/* Append id to the array *ids of *n (capacity *cap). 0, -ENOMEM. */
static int ids_push(uint64_t **ids, size_t *n, size_t *cap, uint64_t id)
{
	if (*n == *cap) {
		size_t nc = *cap ? *cap * 2 : 16;
		void *p = realloc(*ids, nc * sizeof(**ids));
		if (!p)
			return -ENOMEM;
		*ids = p;
		*cap = nc;
	}
	(*ids)[(*n)++] = id;
	return 0;
}

/* Delete from <= ts <= to. *deleted counts; `gone` (may be NULL) gets the
 * deleted samples. */
int ts_series_delete(struct ts_series *s, uint64_t from, uint64_t to, uint64_t *deleted,
		     struct ts_sarr *gone)
{
	struct ts_sarr a = {0}, keep = {0};
	uint64_t *ids = NULL;
	size_t nids = 0, cap = 0;
	int rc = chunk_seek(s, from);
	*deleted = 0;
	/* The chunks that may hold samples in range: stored ones not pending
	 * deletion, and pending ones (a rule's destination losing two
	 * buckets of one chunk in one write: the first delete rewrote it). */
	for (; !rc && chunk_valid(s, true); store_iter_next(s->it)) {
		uint64_t id = iter_id(s);
		if (id > to)
			break;
		if (is_dead(s, id))
			continue;
		rc = ids_push(&ids, &nids, &cap, id);
	}
	if (!rc && store_iter_status(s->it))
		rc = -EIO;
	for (size_t i = 0; i < s->nnc && !rc; i++) {
		if (s->nc[i].id <= to)
			rc = ids_push(&ids, &nids, &cap, s->nc[i].id);
	}
	for (size_t c = 0; c < nids && !rc; c++) {
		rc = chunk_read(s, ids[c], &a);
		keep.n = 0;
		for (size_t i = 0; i < a.n && !rc; i++) {
			if (a.s[i].ts >= from && a.s[i].ts <= to)
				rc = gone ? ts_sarr_push(gone, a.s[i]) : 0;
			else
				rc = ts_sarr_push(&keep, a.s[i]);
		}
		if (rc || keep.n == a.n)
			continue;
		*deleted += a.n - keep.n;
		size_t one = keep.n;
		rc = chunk_replace(s, true, ids[c], &keep, &one, keep.n ? 1 : 0);
	}
	free(ids);
	free(a.s);
	free(keep.s);
	return rc;
}

void ts_series_flush(struct ts_series *s)
{
	struct buf val = BUF_INIT;
	uint8_t id[8];
	int rc = 0;
	for (size_t i = 0; i < s->ndead; i++) {
		put_be64(id, s->dead[i]);
		ts_series_sub_put(s, TS_SUB_CHUNK, id, 8, NULL, 0);
	}
	for (size_t i = 0; i < s->nnc && !rc; i++) {
		put_be64(id, s->nc[i].id);
		rc = chunk_encode(&val, s->nc[i].s, s->nc[i].n);
		if (!rc)
			ts_series_sub_put(s, TS_SUB_CHUNK, id, 8, val.data, val.len);
	}
	if (!rc && s->dirty) {
		rc = meta_tail(&s->tail, &s->tm);
		if (!rc)
			ks_txn_meta_put(s->t, s->tk, s->tail.data, s->tail.len);
	}
	ks_txn_fail(s->t, rc);
	buf_release(&val);
}

int ts_series_end(struct ks_txn *t, struct ts_series *s, struct ts_series *also, int rc)
{
	if (!rc) {
		ts_series_flush(s);
		if (also)
			ts_series_flush(also);
		rc = ks_txn_commit(t);
	}
	ts_series_release(s);
	if (also)
		ts_series_release(also);
	return ks_txn_end(t, rc);
}

/* ---- creating and altering -------------------------------------------------- */

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

/* TS.CREATE (create: a new series with o) or TS.ALTER (the options o
 * sets, on a series that exists), under k's lock. */
static int series_set(struct keyspace *ks, const struct ks_key *k, const struct ts_options *o,
		      bool create)
{
	struct ts_series s = {0};
	struct ks_info info;
	struct ks_txn t;
	int rc = check_options(o);
	if (!rc)
		rc = ts_labels_prepare(ks, o);
	if (rc)
		return rc;
	ks_txn_begin(&t, ks, k);
	if (create) {
		rc = ks_lookup(ks, k, &info);
		if (rc == 0 && !info.empty)
			rc = -EEXIST;
		else if (rc == 0 || rc == -ENOENT)
			rc = ts_series_open(&s, ks, &t, k, true, o);
	} else {
		rc = ts_series_open(&s, ks, &t, k, false, NULL);
		if (!rc) {
			if (o->set & TS_OPT_RETENTION)
				s.tm.retention = o->retention;
			if (o->set & TS_OPT_CHUNK_SIZE)
				s.tm.chunk_size = o->chunk_size;
			if (o->set & TS_OPT_POLICY)
				s.tm.policy = (uint8_t)o->policy;
			s.dirty = true;
		}
	}
	if (!rc)
		rc = ts_labels_write(&s, o);
	return ts_series_end(&t, &s, NULL, rc);
}

int ts_create(struct keyspace *ks, const struct ks_key *k, const struct ts_options *o)
{
	return series_set(ks, k, o, true);
}

int ts_alter(struct keyspace *ks, const struct ks_key *k, const struct ts_options *o)
{
	return series_set(ks, k, o, false);
}

/* ---- adding and deleting ------------------------------------------------------ */

#define MADD_INCR 0x100 /* internal: v[0] holds a delta for the newest value */

int ts_series_madd(struct ts_series *s, struct ts_ssamp *v, size_t n, unsigned flags, int on_dup,
		   const struct ts_options *create, struct ts_rule_set *rs, size_t *bad)
{
	struct ts_ssamp *c = NULL;
	size_t nc = 0;
	int rc = 0;
	if (s->fresh && create && (create->set & TS_OPT_LABELS))
		rc = ts_labels_write(s, create);
	int policy = on_dup >= 0 ? on_dup : s->tm.policy;
	if (!rc && (flags & MADD_INCR)) {
		struct ts_sample last;
		bool any = false;
		rc = ts_series_last(s, &any, &last);
		if (!rc && any && v[0].s.ts < last.ts) {
			LOG_ERR("%.*s: TS.INCRBY at %llu, older than the newest sample %llu",
				(int)s->k.klen, s->k.key, (unsigned long long)v[0].s.ts,
				(unsigned long long)last.ts);
			rc = -EINVAL;
		}
		if (!rc && any)
			v[0].s.v += last.v;
		policy = TS_DUP_LAST;
	}
	if (rc)
		return rc;
	qsort(v, n, sizeof(*v), ts_ssamp_cmp);
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
	rc = ts_series_upsert(s, v, n, policy);
	for (size_t i = 0; i < n && !rc; i++) {
		if ((flags & TS_MADD_ATOMIC) &&
		    (v[i].res == TS_ADD_BLOCK || v[i].res == TS_ADD_OLD)) {
			if (bad)
				*bad = v[i].idx;
			rc = v[i].res == TS_ADD_BLOCK ? -EEXIST : -EINVAL;
		}
	}
	if (!rc && rs->n) {
		if (!(c = calloc(n, sizeof(*c))))
			return -ENOMEM;
		for (size_t i = 0; i < n; i++)
			if (v[i].res == TS_ADD_INSERT || v[i].res == TS_ADD_UPDATE)
				c[nc++] = v[i];
		if (nc)
			rc = ts_rule_set_added(rs, s, c, nc);
	}
	free(c);
	return rc;
}

static int madd(struct keyspace *ks, const struct ks_key *k, const struct ts_sample *in, size_t n,
		unsigned flags, int on_dup, const struct ts_options *create,
		enum ts_add_result *res, size_t *bad, double *stored)
{
	struct ts_ssamp *v;
	struct ts_rule_set rs = {0};
	struct ts_series s = {0};
	struct ks_txn t;
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
	rc = ts_labels_prepare(ks, (flags & TS_MADD_CREATE) ? create : NULL);
	if (!rc)
		rc = ts_rule_set_begin(&t, ks, k, &rs);
	if (!rc) {
		rc = ts_series_open(&s, ks, &t, &rs.keys[0], (flags & TS_MADD_CREATE) != 0, create);
		if (!rc)
			rc = ts_series_madd(&s, v, n, flags, on_dup, create, &rs, bad);
		rc = ts_series_end(&t, &s, NULL, rc);
	}
	if (!rc && res)
		for (size_t i = 0; i < n; i++)
			res[v[i].idx] = (enum ts_add_result)v[i].res;
	if (!rc && stored)
		*stored = v[0].s.v;
	ts_rule_set_release(&rs);
	free(v);
	return rc;
}

int ts_madd(struct keyspace *ks, const struct ks_key *k, const struct ts_sample *s, size_t n,
	    unsigned flags, enum ts_add_result *res, size_t *bad)
{
	return ts_madd_dup(ks, k, s, n, flags, TS_DUP_NONE, res, bad);
}

int ts_madd_dup(struct keyspace *ks, const struct ks_key *k, const struct ts_sample *s, size_t n,
		unsigned flags, int on_dup, enum ts_add_result *res, size_t *bad)
{
	return madd(ks, k, s, n, flags & (TS_MADD_ATOMIC | TS_MADD_CREATE), on_dup, NULL, res, bad,
		    NULL);
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
	struct ts_rule_set rs = {0};
	struct ts_series s = {0};
	struct ts_sarr gone = {0};
	struct ks_txn t;
	uint64_t del = 0;
	if (from > to)
		return -EINVAL;
	int rc = ts_rule_set_begin(&t, ks, k, &rs);
	if (rc)
		return rc;
	rc = ts_series_open(&s, ks, &t, &rs.keys[0], false, NULL);
	if (!rc)
		rc = ts_series_delete(&s, from, to, &del, &gone);
	if (!rc && del) {
		s.dirty = true;
		rc = ts_rule_set_deleted(&rs, &s, &gone);
		if (!rc) {
			ts_series_flush(&s);
			rc = ks_txn_commit(&t);
		}
	}
	if (!rc && deleted)
		*deleted = del;
	ts_series_release(&s);
	rc = ks_txn_end(&t, rc);
	ts_rule_set_release(&rs);
	free(gone.s);
	return rc;
}

/* ---- reading ------------------------------------------------------------------ */

int ts_get(struct keyspace *ks, const struct ks_key *k, struct ts_sample *out)
{
	struct ts_series s;
	bool any = false;
	int rc = ts_series_open(&s, ks, NULL, k, false, NULL);
	if (!rc)
		rc = ts_series_last(&s, &any, out);
	ts_series_release(&s);
	return rc ? rc : (any ? 1 : 0);
}

int ts_info(struct keyspace *ks, const struct ks_key *k, struct ts_info *out)
{
	struct ts_series s;
	memset(out, 0, sizeof(*out));
	int rc = ts_series_open(&s, ks, NULL, k, false, NULL);
	if (rc) {
		ts_series_release(&s);
		return rc;
	}
	out->m = s.tm;
	rc = buf_set(&out->source, s.tm.source, s.tm.source_len);
	out->m.source = out->source.data;
	out->chunks = s.m->size;
	/* The samples inside the retention window, as TS.INFO counts them. */
	struct ts_sample last;
	bool any = false;
	if (!rc)
		rc = ts_series_last(&s, &any, &last);
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
			rc = chunk_corrupt(&s, iter_id(&s), vn);
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
	ts_series_release(&s);
	if (rc)
		buf_release(&out->source);
	return rc;
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
	struct ts_series s;
	bool started, empty;
	struct ts_sarr cur;
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
	rc = ts_series_open(&it->s, ks, NULL, k, false, NULL);
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
		ts_series_release(&it->s);
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
		chunk_corrupt(&it->s, *id, vn);
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
		if (ts_sarr_push(&it->cur, chunk_sample(v, i)))
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
	ts_series_release(&it->s);
	free(it);
}

int ts_chunk_get(struct keyspace *ks, const struct ks_key *k, uint64_t id, struct ts_sample **out,
		 size_t *n)
{
	struct ts_series s;
	struct ts_sarr a = {0};
	int rc = ts_series_open(&s, ks, NULL, k, false, NULL);
	if (!rc)
		rc = chunk_read(&s, id, &a);
	ts_series_release(&s);
	if (rc) {
		free(a.s);
		return rc;
	}
	*out = a.s;
	*n = a.n;
	return 0;
}

/* The samples of chunk id as ts_chunk_put takes them: increasing, numbers,
 * the first at id. 0 or -EINVAL (logged). */
static int samples_check(uint64_t id, const struct ts_sample *in, size_t n)
{
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
	return 0;
}

/* The timestamps (sorted) whose sample differs between a and b, both
 * in time order: in one only, or with another value. */
static int samples_diff(const struct ts_sample *a, size_t na, const struct ts_sample *b, size_t nb,
			uint64_t **out, size_t *n)
{
	uint64_t *v = calloc(na + nb ? na + nb : 1, sizeof(*v));
	size_t i = 0, j = 0, m = 0;
	if (!v)
		return -ENOMEM;
	while (i < na || j < nb) {
		if (j == nb || (i < na && a[i].ts < b[j].ts)) {
			v[m++] = a[i++].ts;
		} else if (i == na || b[j].ts < a[i].ts) {
			v[m++] = b[j++].ts;
		} else {
			if (dbits(a[i].v) != dbits(b[j].v))
				v[m++] = a[i].ts;
			i++;
			j++;
		}
	}
	*out = v;
	*n = m;
	return 0;
}

/* ts_chunk_put (edit false: a restore, the stored state as given) and
 * ts_chunk_edit (edit: the rules' buckets the change touches are
 * recomputed, in the same batch). */
static int chunk_store(struct keyspace *ks, const struct ks_key *k, uint64_t id,
		       const struct ts_sample *in, size_t n, bool edit)
{
	struct ts_rule_set rs = {0};
	struct ts_series s;
	struct ts_sarr old = {0};
	struct ks_txn t;
	struct buf key = BUF_INIT, val = BUF_INIT;
	uint64_t *ch = NULL;
	size_t nch = 0;
	uint8_t idb[8];
	int rc = samples_check(id, in, n);
	if (rc)
		return rc;
	if (edit) {
		rc = ts_rule_set_begin(&t, ks, k, &rs);
		if (rc)
			return rc;
	} else {
		ks_txn_begin(&t, ks, k);
	}
	rc = ts_series_open(&s, ks, &t, edit ? &rs.keys[0] : k, false, NULL);
	bool exists = false;
	if (!rc && edit) {
		/* A chunk that does not decode (logged) is replaced; its
		 * samples are unknown, so only the new ones count as changed. */
		rc = chunk_read(&s, id, &old);
		exists = rc == 0 || rc == -EUCLEAN;
		rc = rc == -ENOENT || rc == -EUCLEAN ? 0 : rc;
		if (!exists || rc)
			old.n = 0;
	} else if (!rc) {
		struct buf v = BUF_INIT;
		rc = chunk_get(&s, id, &v);
		exists = rc == 0;
		rc = rc == -ENOENT ? 0 : rc;
		buf_release(&v);
	}
	/* Neighbours: the chunk before must end before id, the next one
	 * must start after the last sample. */
	if (!rc && n) {
		struct ts_sarr prev = {0};
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
	if (!rc && (n || exists) && edit) {
		/* Pending in s, so the rules read the source as it will be. */
		struct ts_sarr a = {(struct ts_sample *)in, n, n};
		size_t one = n;
		rc = chunk_replace(&s, exists, id, &a, &one, n ? 1 : 0);
		if (!rc)
			rc = samples_diff(old.s, old.n, in, n, &ch, &nch);
		if (!rc)
			rc = ts_rule_set_edited(&rs, &s, ch, nch);
		if (!rc)
			ts_series_flush(&s);
		if (!rc)
			rc = ks_txn_commit(&t);
	} else if (!rc && (n || exists)) {
		put_be64(idb, id);
		if (n) {
			rc = chunk_encode(&val, in, n);
			if (!rc)
				ts_series_sub_put(&s, TS_SUB_CHUNK, idb, 8, val.data, val.len);
			if (!exists)
				s.m->size++;
		} else {
			ts_series_sub_put(&s, TS_SUB_CHUNK, idb, 8, NULL, 0);
			s.m->size--;
		}
		s.dirty = true;
		ts_series_flush(&s);
		if (!rc)
			rc = ks_txn_commit(&t);
	}
	ts_series_release(&s);
	buf_release(&key);
	buf_release(&val);
	free(old.s);
	free(ch);
	rc = ks_txn_end(&t, rc);
	ts_rule_set_release(&rs);
	return rc;
}

int ts_chunk_put(struct keyspace *ks, const struct ks_key *k, uint64_t id,
		 const struct ts_sample *in, size_t n)
{
	return chunk_store(ks, k, id, in, n, false);
}

int ts_chunk_edit(struct keyspace *ks, const struct ks_key *k, uint64_t id,
		  const struct ts_sample *in, size_t n)
{
	return chunk_store(ks, k, id, in, n, true);
}

int ts_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		  const struct ts_chunk_in *c, size_t n)
{
	/* k was renewed in t (its metadata is the new one, not yet stored):
	 * the series is staged here, not opened (an open would read the
	 * stored record, the hash's). */
	struct ts_series s;
	struct buf val = BUF_INIT;
	uint8_t idb[8];
	int rc = 0;
	memset(&s, 0, sizeof(s));
	s.t = t;
	s.tk = k;
	series_defaults(&s, NULL);
	for (size_t i = 0; i < n && !rc; i++) {
		rc = c[i].n ? samples_check(c[i].id, c[i].s, c[i].n) : -EINVAL;
		if (!rc && i && c[i].id <= c[i - 1].s[c[i - 1].n - 1].ts) {
			LOG_ERR("chunk %llu: its samples overlap another chunk",
				(unsigned long long)c[i].id);
			rc = -EINVAL;
		}
		if (!rc)
			rc = chunk_encode(&val, c[i].s, c[i].n);
		if (rc)
			break;
		put_be64(idb, c[i].id);
		ts_series_sub_put(&s, TS_SUB_CHUNK, idb, 8, val.data, val.len);
		s.tm.last_ts = c[i].s[c[i].n - 1].ts;
	}
	if (!rc && (rc = meta_tail(&s.tail, &s.tm)) == 0) {
		m->size = n; /* its chunks, as every write of a series counts them */
		ks_txn_meta_put(t, k, s.tail.data, s.tail.len);
	}
	if (!rc)
		rc = ks_txn_commit(t);
	buf_release(&s.tail);
	buf_release(&val);
	return rc;
}

int ts_set_last_timestamp(struct keyspace *ks, const struct ks_key *k, uint64_t ts)
{
	struct ts_series s;
	struct ks_txn t;
	ks_txn_begin(&t, ks, k);
	int rc = ts_series_open(&s, ks, &t, k, false, NULL);
	if (!rc) {
		s.tm.last_ts = ts;
		s.dirty = true;
	}
	return ts_series_end(&t, &s, NULL, rc);
}
