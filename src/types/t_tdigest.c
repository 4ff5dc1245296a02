/*
 * t_tdigest: the Redis Stack t-digest in Kvrocks's layout
 * (kvrocks-encoding.md 6.12). Layer: types.
 *
 *   CF        key                                          value
 *   metadata  ns|key                                       header (type 12, size 0) | tail
 *   default   ns|key_len|key|version|00                    buffer: unmerged_nodes sortable doubles
 *   default   ns|key_len|key|version|01|mean (8)|seq u32   centroid weight (sortable double)
 *
 * Tail (72 bytes, big-endian): compression u32 | capacity u32 |
 * unmerged_nodes u64 | merged_nodes u64 | total_weight u64 | merged_weight
 * u64 | minimum (sortable) | maximum (sortable) | total_observations u64 |
 * merge_times u64. capacity = min(6 * compression + 10, 1024); an empty
 * digest has min DBL_MAX and max -DBL_MAX. seq is the centroid's position
 * (0, 1, ...), which keeps equal means apart.
 *
 * Invariants kept by every write (one transaction, ks_txn.h):
 * unmerged_nodes = samples in the buffer (no buffer record when 0),
 * merged_nodes = centroid records, merged_weight = their weight,
 * total_weight = merged_weight + unmerged_nodes. Rewriting the centroids
 * deletes every old centroid record first.
 */
#include "types/t_tdigest.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>

#define TD_TAIL	     72
#define SEG_BUFFER   0x00
#define SEG_CENTROID 0x01

static void tail_encode(uint8_t *p, const struct tdigest_info *in)
{
	put_be32(p, in->compression);
	put_be32(p + 4, in->capacity);
	put_be64(p + 8, in->unmerged_nodes);
	put_be64(p + 16, in->merged_nodes);
	put_be64(p + 24, in->total_weight);
	put_be64(p + 32, in->merged_weight);
	put_be64(p + 40, enc_double_to_sortable(in->min));
	put_be64(p + 48, enc_double_to_sortable(in->max));
	put_be64(p + 56, in->observations);
	put_be64(p + 64, in->merge_times);
}

static int tail_decode(const struct ks_key *k, const struct enc_meta *m, struct tdigest_info *o)
{
	const uint8_t *p = m->tail;
	if (m->tail_len < TD_TAIL)
		return ks_corrupt(k, "a t-digest metadata tail of %zu bytes (72 expected)",
				  m->tail_len);
	o->compression = get_be32(p);
	o->capacity = get_be32(p + 4);
	o->unmerged_nodes = get_be64(p + 8);
	o->merged_nodes = get_be64(p + 16);
	o->total_weight = get_be64(p + 24);
	o->merged_weight = get_be64(p + 32);
	o->min = enc_sortable_to_double(get_be64(p + 40));
	o->max = enc_sortable_to_double(get_be64(p + 48));
	o->observations = get_be64(p + 56);
	o->merge_times = get_be64(p + 64);
	/* unmerged_nodes sizes the buffer's array (8 bytes a sample) and the
	 * loop that reads it: Kvrocks merges before the buffer passes the
	 * capacity, which min(6 c + 10, 1024) keeps at most 1024. */
	if (o->compression < 1 || o->compression > TD_COMPRESSION_MAX ||
	    o->capacity > TD_CAPACITY_MAX || o->unmerged_nodes > o->capacity)
		return ks_corrupt(k, "a t-digest of compression %u, capacity %u, %llu unmerged",
				  o->compression, o->capacity,
				  (unsigned long long)o->unmerged_nodes);
	return 0;
}

static void info_new(struct tdigest_info *in, uint32_t compression)
{
	memset(in, 0, sizeof(*in));
	in->compression = compression;
	in->capacity = td_capacity(compression);
	in->min = DBL_MAX;
	in->max = -DBL_MAX;
}

/* The key's tail and (version not NULL) version, for a read. */
static int meta_read(struct keyspace *ks, const struct ks_key *k, struct tdigest_info *in,
		     uint64_t *version)
{
	uint8_t tail[TD_TAIL];
	struct enc_meta m;
	int rc = ks_meta_copy(ks, k, KV_TYPE_TDIGEST, &m, tail, sizeof(tail));
	if (!rc)
		rc = tail_decode(k, &m, in);
	if (!rc && version)
		*version = m.version;
	return rc;
}

/* The same under t's lock (*m is t's). */
static int txn_get(struct ks_txn *t, const struct ks_key *k, struct enc_meta **m,
		   struct tdigest_info *in)
{
	int rc = ks_txn_get(t, k, KV_TYPE_TDIGEST, m);
	return rc ? rc : tail_decode(k, *m, in);
}

/* Stage k's metadata with the tail of in; tail (the caller's) holds it
 * until the commit. */
static void meta_stage(struct ks_txn *t, const struct ks_key *k, const struct tdigest_info *in,
		       uint8_t tail[TD_TAIL])
{
	tail_encode(tail, in);
	ks_txn_meta_put(t, k, tail, TD_TAIL);
}

/* The sub-key after the version: a segment, and for a centroid its mean
 * and seq. Its length. */
static size_t sub_of(uint8_t sub[13], uint8_t seg, const double *mean, uint32_t seq)
{
	sub[0] = seg;
	if (!mean)
		return 1;
	put_be64(sub + 1, enc_double_to_sortable(*mean));
	put_be32(sub + 9, seq);
	return 13;
}

/* Read the buffer: in->unmerged_nodes samples (more stored bytes are
 * ignored, as Kvrocks reads; fewer are corruption). */
static int buffer_read(struct keyspace *ks, const struct ks_key *k, uint64_t version,
		       const struct tdigest_info *in, double *out)
{
	struct buf v = BUF_INIT;
	uint8_t sub = SEG_BUFFER;
	if (in->unmerged_nodes == 0)
		return 0;
	int rc = ks_sub_get(ks, k, version, STORE_CF_DEFAULT, &sub, 1, &v);
	if (rc == -ENOENT || (!rc && v.len / 8 < in->unmerged_nodes))
		rc = ks_corrupt(k, "t-digest buffer holds fewer than %llu samples",
				(unsigned long long)in->unmerged_nodes);
	for (uint64_t i = 0; !rc && i < in->unmerged_nodes; i++)
		out[i] = enc_sortable_to_double(get_be64(v.data + 8 * i));
	buf_release(&v);
	return rc;
}

/* Read the centroid records into d (in key order = mean order). With t,
 * also delete each of them in t. */
static int centroids_read(struct keyspace *ks, const struct ks_key *k,
			  const struct tdigest_info *in, struct td_digest *d, struct ks_txn *t)
{
	int rc = 0;
	uint8_t after = SEG_BUFFER;
	struct ks_sub_iter *it = ks_sub_iter_new(ks, k, KV_TYPE_TDIGEST, &after, 1, &rc);
	if (!it)
		return rc ? rc : -ENOMEM;
	const char *s, *v;
	size_t sn, vn;
	while ((rc = ks_sub_iter_next(it, &s, &sn, &v, &vn)) > 0) {
		if (sn < 1 || (uint8_t)s[0] != SEG_CENTROID)
			break;
		if ((sn != 13 && sn != 9) || vn != 8) { /* 9: no seq (early 2025) */
			rc = ks_corrupt(k, "a t-digest centroid record of %zu/%zu bytes", sn, vn);
			break;
		}
		rc = td_push(d, enc_sortable_to_double(get_be64(s + 1)),
			     enc_sortable_to_double(get_be64(v)));
		if (rc)
			break;
		if (t)
			ks_txn_sub_del(t, k, STORE_CF_DEFAULT, s, sn);
	}
	ks_sub_iter_free(it);
	if (rc > 0)
		rc = 0;
	if (!rc && d->n != in->merged_nodes)
		rc = ks_corrupt(k, "t-digest metadata counts %llu centroids, %zu stored",
				(unsigned long long)in->merged_nodes, d->n);
	d->min = in->min;
	d->max = in->max;
	d->total_weight = (double)in->merged_weight;
	return rc;
}

/* Stage the centroids c[0..n) (old ones already deleted). */
static void centroids_put(struct ks_txn *t, const struct ks_key *k, const struct td_centroid *c,
			  size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint8_t sub[13], w[8];
		size_t sn = sub_of(sub, SEG_CENTROID, &c[i].mean, (uint32_t)i);
		put_be64(w, enc_double_to_sortable(c[i].weight));
		ks_txn_sub_put(t, k, STORE_CF_DEFAULT, sub, sn, w, sizeof(w));
	}
}

/* Stage the buffer record: put (n > 0) or delete. */
static void buffer_put(struct ks_txn *t, const struct ks_key *k, const double *v, size_t n)
{
	struct buf val = BUF_INIT;
	uint8_t sub = SEG_BUFFER;
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = buf_add_double(&val, v[i]);
	if (rc)
		ks_txn_fail(t, rc);
	else if (n)
		ks_txn_sub_put(t, k, STORE_CF_DEFAULT, &sub, 1, val.data, val.len);
	else
		ks_txn_sub_del(t, k, STORE_CF_DEFAULT, &sub, 1);
	buf_release(&val);
}

static bool all_finite(const struct ks_key *k, const double *v, size_t n, const char *what)
{
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i])) {
			LOG_ERR("%.*s: %s %zu is not a finite number", (int)k->klen, k->key, what,
				i + 1);
			return false;
		}
	}
	return true;
}

int tdigest_create(struct keyspace *ks, const struct ks_key *k, uint32_t compression)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct tdigest_info in;
	uint8_t tail[TD_TAIL];

	if (compression == 0)
		compression = TD_COMPRESSION_DEFAULT;
	if (compression > TD_COMPRESSION_MAX) {
		LOG_ERR("%.*s: t-digest compression %u is over %d", (int)k->klen, k->key,
			compression, TD_COMPRESSION_MAX);
		return -EINVAL;
	}
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_create(&t, k, KV_TYPE_TDIGEST, &m);
	if (!rc) {
		info_new(&in, compression);
		meta_stage(&t, k, &in, tail);
		rc = ks_txn_commit(&t);
	}
	return ks_txn_end(&t, rc);
}

/* Merge the stored buffer (plus `extra`) into the centroids, in t:
 * Kvrocks's mergeCurrentBuffer. */
static int merge_buffer(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
			const struct enc_meta *m, struct tdigest_info *in, const double *extra,
			size_t nextra)
{
	struct td_digest d;
	size_t nb = in->unmerged_nodes + nextra;
	double *all = malloc((nb ? nb : 1) * sizeof(*all));
	int rc = all ? 0 : -ENOMEM;
	td_init(&d, in->compression);
	if (!rc)
		rc = buffer_read(ks, k, m->version, in, all);
	if (!rc)
		rc = centroids_read(ks, k, in, &d, t);
	if (!rc) {
		if (nextra)
			memcpy(all + in->unmerged_nodes, extra, nextra * sizeof(*all));
		rc = td_merge_input(&d, all, nb);
	}
	if (!rc) {
		buffer_put(t, k, NULL, 0);
		centroids_put(t, k, d.c, d.n);
		in->merge_times++;
		in->merged_nodes = d.n;
		in->unmerged_nodes = 0;
		in->min = d.min;
		in->max = d.max;
		in->merged_weight = (uint64_t)d.total_weight;
	}
	td_release(&d);
	free(all);
	return rc;
}

int tdigest_add(struct keyspace *ks, const struct ks_key *k, const double *v, size_t n)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct tdigest_info in;
	uint8_t tail[TD_TAIL];

	if (n == 0 || !all_finite(k, v, n, "sample"))
		return -EINVAL;
	ks_txn_begin(&t, ks, k);
	int rc = txn_get(&t, k, &m, &in);
	if (rc)
		return ks_txn_end(&t, rc);
	in.observations += n;
	in.total_weight += n;
	for (size_t i = 0; i < n; i++) { /* as Kvrocks's Add: at every add, not only a merge */
		in.min = v[i] < in.min ? v[i] : in.min;
		in.max = v[i] > in.max ? v[i] : in.max;
	}
	if (in.unmerged_nodes + n <= in.capacity) {
		double *all = malloc((in.unmerged_nodes + n) * sizeof(*all));
		rc = all ? buffer_read(ks, k, m->version, &in, all) : -ENOMEM;
		if (!rc) {
			memcpy(all + in.unmerged_nodes, v, n * sizeof(*v));
			buffer_put(&t, k, all, in.unmerged_nodes + n);
		}
		free(all);
		in.unmerged_nodes += n;
	} else {
		rc = merge_buffer(&t, ks, k, m, &in, v, n);
	}
	if (!rc) {
		meta_stage(&t, k, &in, tail);
		rc = ks_txn_commit(&t);
	}
	return ks_txn_end(&t, rc);
}

/* The queries' digest of one key (its lock held by the caller, for one
 * moment's records). */
static int digest_read(struct keyspace *ks, const struct ks_key *k, struct td_digest *d,
		       struct tdigest_info *in)
{
	uint64_t version;
	double *all = NULL;
	int rc = meta_read(ks, k, in, &version);
	if (rc)
		return rc;
	d->compression = in->compression;
	rc = centroids_read(ks, k, in, d, NULL);
	if (!rc && in->unmerged_nodes) {
		all = malloc(in->unmerged_nodes * sizeof(*all));
		rc = all ? buffer_read(ks, k, version, in, all) : -ENOMEM;
		if (!rc)
			rc = td_merge_input(d, all, in->unmerged_nodes);
	}
	free(all);
	return rc;
}

int tdigest_digest(struct keyspace *ks, const struct ks_key *k, struct td_digest *d,
		   struct tdigest_info *info)
{
	struct tdigest_info in;
	struct ks_txn t;
	td_init(d, 0);
	ks_txn_begin_read(&t, ks, k); /* centroids and buffer of one moment */
	int rc = digest_read(ks, k, d, info ? info : &in);
	return ks_txn_end(&t, rc);
}

int tdigest_info(struct keyspace *ks, const struct ks_key *k, struct tdigest_info *out)
{
	return meta_read(ks, k, out, NULL);
}

int tdigest_merge(struct keyspace *ks, const struct ks_key *dest, const struct ks_key *src,
		  size_t nsrc, uint32_t compression, bool override)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct td_digest *ds = NULL, out;
	const struct td_digest **dp = NULL;
	struct tdigest_info din, sin;
	uint8_t tail[TD_TAIL];
	size_t nd = 0;
	uint64_t observations = 0;
	int rc = 0;

	td_init(&out, 0);
	if (nsrc == 0 || compression > TD_COMPRESSION_MAX) {
		LOG_ERR("%.*s: TDIGEST.MERGE needs sources and a compression up to %d",
			(int)dest->klen, dest->key, TD_COMPRESSION_MAX);
		return -EINVAL;
	}
	ds = calloc(nsrc + 1, sizeof(*ds));
	dp = calloc(nsrc + 1, sizeof(*dp));
	if (!ds || !dp) {
		free(ds);
		free(dp);
		return -ENOMEM;
	}
	/* One source (the common case): both locks, in ks_lock_pair's order.
	 * NEEDSWORK: with more, only dest's lock is held and the sources
	 * are read as any read is (a concurrent write to one may or may not
	 * be seen). */
	if (nsrc == 1)
		ks_txn_begin2(&t, ks, dest, &src[0]);
	else
		ks_txn_begin(&t, ks, dest);

	rc = ks_txn_open(&t, dest, KV_TYPE_TDIGEST, &m);
	bool dest_exists = !rc && !ks_txn_is_new(&t, dest);
	if (dest_exists)
		rc = tail_decode(dest, m, &din);
	if (!rc && dest_exists && !override) {
		td_init(&ds[nd], 0);
		rc = digest_read(ks, dest, &ds[nd], &din);
		observations += din.observations;
		nd++;
	}
	uint32_t cmax = 0;
	for (size_t i = 0; i < nsrc && !rc; i++) {
		td_init(&ds[nd], 0);
		rc = digest_read(ks, &src[i], &ds[nd], &sin);
		nd++;
		if (!rc) {
			observations += sin.observations;
			cmax = sin.compression > cmax ? sin.compression : cmax;
		}
	}
	if (rc)
		goto out;
	if (compression == 0)
		compression = dest_exists && !override ? din.compression : cmax;
	for (size_t i = 0; i < nd; i++)
		dp[i] = &ds[i];
	out.compression = compression;
	rc = td_merge_digests(&out, dp, nd);
	if (rc)
		goto out;
	uint64_t times = dest_exists && !override ? din.merge_times + 1 : 1;
	if (dest_exists)
		ks_txn_sub_clear(&t, dest, STORE_CF_DEFAULT);
	info_new(&din, compression);
	din.merged_nodes = out.n;
	din.merged_weight = din.total_weight = (uint64_t)out.total_weight;
	din.min = out.min;
	din.max = out.max;
	din.observations = observations;
	din.merge_times = times;
	centroids_put(&t, dest, out.c, out.n);
	meta_stage(&t, dest, &din, tail);
	rc = ks_txn_commit(&t);
out:
	for (size_t i = 0; i < nd; i++)
		td_release(&ds[i]);
	td_release(&out);
	free(ds);
	free(dp);
	return ks_txn_end(&t, rc);
}

/* ---- The exact state ------------------------------------------------------ */

int tdigest_state(struct keyspace *ks, const struct ks_key *k, struct tdigest_info *info,
		  struct td_digest *d, double **buf, size_t *nbuf)
{
	struct ks_txn t;
	struct enc_meta *m;
	td_init(d, 0);
	*buf = NULL;
	*nbuf = 0;
	ks_txn_begin_read(&t, ks, k); /* centroids and buffer of one moment */
	int rc = txn_get(&t, k, &m, info);
	if (!rc) {
		d->compression = info->compression;
		rc = centroids_read(ks, k, info, d, NULL);
	}
	if (!rc && info->unmerged_nodes) {
		*buf = malloc(info->unmerged_nodes * sizeof(**buf));
		rc = *buf ? buffer_read(ks, k, m->version, info, *buf) : -ENOMEM;
		if (!rc)
			*nbuf = info->unmerged_nodes;
	}
	return ks_txn_end(&t, rc);
}

/* One edit of the state under the key's lock: what = 'b'uffer,
 * 'c'entroids, 's'tats, compressio'n' or 'r'eset. */
struct edit {
	char what;
	const double *v;
	const struct td_centroid *c;
	size_t n;
	double min, max;
	uint64_t observations, merge_times;
	uint32_t compression;
};

/* The compression (and capacity) of an empty digest; -ENOTEMPTY else. */
static int compression_change(const struct ks_key *k, struct tdigest_info *in, uint32_t c)
{
	if (in->merged_nodes || in->unmerged_nodes) {
		LOG_ERR("%.*s: the compression of a t-digest can only change while it is empty",
			(int)k->klen, k->key);
		return -ENOTEMPTY;
	}
	in->compression = c;
	in->capacity = td_capacity(c);
	return 0;
}

static int compression_ok(const struct ks_key *k, uint32_t compression)
{
	if (compression >= 1 && compression <= TD_COMPRESSION_MAX)
		return 0;
	LOG_ERR("%.*s: t-digest compression %u is not within 1..%d", (int)k->klen, k->key,
		compression, TD_COMPRESSION_MAX);
	return -EINVAL;
}

static int edit(struct keyspace *ks, const struct ks_key *k, const struct edit *e)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct tdigest_info in;
	uint8_t tail[TD_TAIL];

	ks_txn_begin(&t, ks, k);
	int rc = txn_get(&t, k, &m, &in);
	if (rc)
		return ks_txn_end(&t, rc);
	switch (e->what) {
	case 'b':
		if (e->n > in.capacity) {
			LOG_ERR("%.*s: %zu samples do not fit the t-digest buffer of %u",
				(int)k->klen, k->key, e->n, in.capacity);
			rc = -EINVAL;
			break;
		}
		buffer_put(&t, k, e->v, e->n);
		in.unmerged_nodes = e->n;
		break;
	case 'c': {
		struct td_digest old;
		double w = 0;
		td_init(&old, 0);
		rc = centroids_read(ks, k, &in, &old, &t);
		td_release(&old);
		for (size_t i = 0; i < e->n; i++)
			w += e->c[i].weight;
		centroids_put(&t, k, e->c, e->n);
		in.merged_nodes = e->n;
		in.merged_weight = (uint64_t)w;
		break;
	}
	case 'r': { /* compression and capacity kept */
		uint32_t capacity = in.capacity;
		info_new(&in, in.compression);
		in.capacity = capacity;
		ks_txn_sub_clear(&t, k, STORE_CF_DEFAULT);
		break;
	}
	case 's':
		if (e->compression != in.compression)
			rc = compression_change(k, &in, e->compression);
		in.min = e->min;
		in.max = e->max;
		in.observations = e->observations;
		in.merge_times = e->merge_times;
		break;
	default:
		rc = compression_change(k, &in, e->compression);
	}
	in.total_weight = in.merged_weight + in.unmerged_nodes;
	if (!rc) {
		meta_stage(&t, k, &in, tail);
		rc = ks_txn_commit(&t);
	}
	return ks_txn_end(&t, rc);
}

int tdigest_reset(struct keyspace *ks, const struct ks_key *k)
{
	return edit(ks, k, &(struct edit){.what = 'r'});
}

int tdigest_set_buffer(struct keyspace *ks, const struct ks_key *k, const double *v, size_t n)
{
	if (!all_finite(k, v, n, "sample"))
		return -EINVAL;
	return edit(ks, k, &(struct edit){.what = 'b', .v = v, .n = n});
}

int tdigest_set_centroids(struct keyspace *ks, const struct ks_key *k, const struct td_centroid *c,
			  size_t n)
{
	double total = 0;
	for (size_t i = 0; i < n; i++) {
		const char *why = NULL;
		if (!isfinite(c[i].mean))
			why = "a mean that is not a finite number";
		else if (i > 0 && c[i].mean < c[i - 1].mean)
			why = "a mean below the one before";
		else if (!(c[i].weight >= 1 && c[i].weight <= 0x1p53) ||
			 c[i].weight != floor(c[i].weight))
			why = "a weight that is not a whole number from 1";
		/* merged_weight is a u64 and total_weight adds the buffer to
		 * it: the sum stays where doubles count exactly (2^53). */
		else if ((total += c[i].weight) > 0x1p53)
			why = "a weight that brings the total past 2^53";
		if (why) {
			LOG_ERR("%.*s: centroid %zu has %s", (int)k->klen, k->key, i + 1, why);
			return -EINVAL;
		}
	}
	return edit(ks, k, &(struct edit){.what = 'c', .c = c, .n = n});
}

int tdigest_set_stats(struct keyspace *ks, const struct ks_key *k, uint32_t compression, double min,
		      double max, uint64_t observations, uint64_t merge_times)
{
	if (compression_ok(k, compression))
		return -EINVAL;
	if (isnan(min) || isnan(max)) {
		LOG_ERR("%.*s: a t-digest min or max cannot be NaN", (int)k->klen, k->key);
		return -EINVAL;
	}
	return edit(ks, k,
		    &(struct edit){.what = 's',
				   .compression = compression,
				   .min = min,
				   .max = max,
				   .observations = observations,
				   .merge_times = merge_times});
}

int tdigest_set_compression(struct keyspace *ks, const struct ks_key *k, uint32_t compression)
{
	if (compression_ok(k, compression))
		return -EINVAL;
	return edit(ks, k, &(struct edit){.what = 'n', .compression = compression});
}
