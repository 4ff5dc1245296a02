/*
 * t_stream_group: the consumer groups of a Redis stream in Kvrocks's
 * layout (kvrocks-encoding.md 6.9; the byte layouts are at the top of
 * t_stream.c): XGROUP, XREADGROUP, XACK, XCLAIM, XAUTOCLAIM, XPENDING,
 * XINFO GROUPS and CONSUMERS. Layer: types.
 *
 * Every mutation is one ks_txn on the stream's key (struct group_txn
 * below). The group, consumer and pending-entry records live under the
 * FF x8 prefix of the stream CF, after every entry.
 */
#include "types/t_stream.h"

#include "engine/store.h"
#include "types/t_stream_int.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#define GROUP_LEN    48
#define CONSUMER_LEN 24
#define PEL_MIN	     24

enum { SUB_GROUP = 1, SUB_CONSUMER = 2, SUB_PEL = 3 };

static bool same_name(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && (an == 0 || memcmp(a, b, an) == 0);
}

static uint64_t idle_ms(uint64_t now, const struct stream_pel *p)
{
	return now > p->delivery_ms ? now - p->delivery_ms : 0;
}

static int check_name(const struct ks_key *k, const char *what, const char *s, size_t n)
{
	if (n == 0 || isdigit((unsigned char)s[0])) {
		LOG_ERR("stream '%.*s': a %s name must be non-empty and not start with a digit "
			"(Kvrocks's rule): '%.*s'",
			(int)k->klen, k->key, what, (int)n, s);
		return -EINVAL;
	}
	return 0;
}

/* The sub-key FF x8 | type | u64 len(g) | g | extra into out (extra may
 * be NULL/0; g may be NULL for the prefix of all records of that type). */
static int group_sub(int type, const char *g, size_t gn, const void *extra, size_t en,
		     struct buf *out)
{
	static const uint8_t ff[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	int rc = buf_set(out, ff, sizeof(ff));
	if (!rc)
		rc = buf_add_u8(out, (uint8_t)type);
	if (!rc && g)
		rc = buf_add_be64(out, gn);
	if (!rc && g)
		rc = buf_add(out, g, gn);
	if (!rc && en)
		rc = buf_add(out, extra, en);
	return rc;
}

static int consumer_sub(const char *g, size_t gn, const char *c, size_t cn, struct buf *out)
{
	int rc = group_sub(SUB_CONSUMER, g, gn, NULL, 0, out);
	if (!rc)
		rc = buf_add_be64(out, cn);
	if (!rc)
		rc = buf_add(out, c, cn);
	return rc;
}

static int pel_sub(const char *g, size_t gn, const struct stream_id *id, struct buf *out)
{
	uint8_t x[16];
	stream_id_put(x, id);
	return group_sub(SUB_PEL, g, gn, x, sizeof(x), out);
}

/* Group g's record of k: 0, or -EUCLEAN (logged) when it is short.
 * Longer records are read: Kvrocks reads the fields in order too. */
static int group_decode(const struct ks_key *k, const char *g, size_t gn, const char *v, size_t n,
			struct stream_group *out)
{
	memset(out, 0, sizeof(*out));
	if (n < GROUP_LEN)
		return ks_corrupt_entry(k, g, gn, "a stream group record of %zu bytes, not %d", n,
					GROUP_LEN);
	struct stream_group *grp = out;
	grp->consumers = get_be64(v);
	grp->pending = get_be64(v + 8);
	grp->last_delivered.ms = get_be64(v + 16);
	grp->last_delivered.seq = get_be64(v + 24);
	grp->entries_read = (int64_t)get_be64(v + 32);
	grp->lag = get_be64(v + 40);
	return 0;
}

/* A consumer record of group g of k: 0, or -EUCLEAN (logged). */
static int consumer_decode(const struct ks_key *k, const char *g, size_t gn, const char *v,
			   size_t n, struct stream_consumer *c)
{
	memset(c, 0, sizeof(*c));
	if (n < CONSUMER_LEN)
		return ks_corrupt_entry(k, g, gn, "a stream consumer record of %zu bytes, not %d",
					n, CONSUMER_LEN);
	c->pending = get_be64(v);
	c->seen_ms = get_be64(v + 8);
	c->active_ms = get_be64(v + 16);
	return 0;
}

static int pel_decode(const char *v, size_t n, struct stream_pel *p)
{
	if (n < PEL_MIN)
		return -EUCLEAN;
	p->delivery_ms = get_be64(v);
	p->deliveries = get_be64(v + 8);
	uint64_t cn = get_be64(v + 16);
	if (cn > n - PEL_MIN)
		return -EUCLEAN;
	p->consumer.p = v + PEL_MIN;
	p->consumer.n = (size_t)cn;
	return 0;
}

/* A pending-entry record of group g of k met by an iteration (sub-key
 * sub of sn bytes, prefix plen bytes): its ID and value, or -EUCLEAN,
 * logged with the key and the group, for a caller that skips it. */
static int pel_read(const struct ks_key *k, const char *g, size_t gn, const char *sub, size_t sn,
		    size_t plen, const char *v, size_t vn, struct stream_id *id,
		    struct stream_pel *p)
{
	if (sn != plen + 16)
		return ks_corrupt_entry(k, g, gn,
					"a pending-entry sub-key of %zu bytes where a 16-byte ID "
					"belongs; skipped",
					sn - plen);
	stream_id_get((const uint8_t *)sub + plen, id);
	if (pel_decode(v, vn, p))
		return ks_corrupt_entry(k, g, gn,
					"pending entry %" PRIu64 "-%" PRIu64
					" of %zu bytes does not decode; skipped",
					id->ms, id->seq, vn);
	return 0;
}

/* An iterator over the stream-CF records of k's version `ver` whose
 * sub-key starts with px; their sub-keys start at *base in its keys. */
static struct store_iter *prefix_iter(struct keyspace *ks, const struct ks_key *k, uint64_t ver,
				      const struct buf *px, size_t *base)
{
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	struct store_iter *it = NULL;
	if (ks_sub_key(ks, k, ver, px->data, px->len, &lo) == 0 &&
	    buf_set(&hi, lo.data, lo.len) == 0) {
		bool bounded = enc_prefix_successor(&hi);
		it = store_iter_new(ks_store(ks), STORE_CF_STREAM, lo.data, lo.len,
				    bounded ? hi.data : NULL, bounded ? hi.len : 0);
		*base = lo.len - px->len;
	}
	buf_release(&lo);
	buf_release(&hi);
	return it;
}

/* The pending entries of group g of k's version `ver`, in ID order from
 * `from` (NULL: the first). Records that do not decode are logged and
 * skipped. */
struct pel_iter {
	struct store_iter *it;
	const struct ks_key *k;
	const char *g;
	size_t gn;
	size_t base, plen; /* where sub-keys start; the PEL prefix's length */
	bool started;
	const char *sub; /* the current record's sub-key, until the next step */
	size_t sn;
};

static int pel_iter_open(struct pel_iter *p, struct keyspace *ks, const struct ks_key *k,
			 uint64_t ver, const char *g, size_t gn, const struct stream_id *from)
{
	struct buf px = BUF_INIT, key = BUF_INIT;
	memset(p, 0, sizeof(*p));
	p->k = k;
	p->g = g;
	p->gn = gn;
	int rc = group_sub(SUB_PEL, g, gn, NULL, 0, &px);
	if (!rc && !(p->it = prefix_iter(ks, k, ver, &px, &p->base)))
		rc = -ENOMEM;
	p->plen = px.len;
	if (!rc && from) {
		rc = pel_sub(g, gn, from, &px);
		if (!rc)
			rc = ks_sub_key(ks, k, ver, px.data, px.len, &key);
		if (!rc)
			store_iter_seek(p->it, key.data, key.len);
	} else if (!rc) {
		store_iter_seek_first(p->it);
	}
	buf_release(&px);
	buf_release(&key);
	return rc;
}

/* 1 with the next entry, 0 at the end, or a negative errno. */
static int pel_iter_next(struct pel_iter *p, struct stream_id *id, struct stream_pel *e)
{
	while (store_iter_step(p->it, false, &p->started)) {
		size_t kn, vn;
		const char *key = store_iter_key(p->it, &kn);
		const char *v = store_iter_value(p->it, &vn);
		p->sub = key + p->base;
		p->sn = kn - p->base;
		if (!pel_read(p->k, p->g, p->gn, p->sub, p->sn, p->plen, v, vn, id, e))
			return 1;
	}
	return store_iter_status(p->it);
}

static void pel_iter_close(struct pel_iter *p)
{
	store_iter_free(p->it);
}

/* Read group g of the current version: 0, -ENOENT (logged as NOGROUP
 * when `verb` is given); *sub is its sub-key. */
static int group_read(struct keyspace *ks, const struct ks_key *k, uint64_t ver, const char *g,
		      size_t gn, struct buf *sub, struct stream_group *out, const char *verb)
{
	struct buf v = BUF_INIT;
	int rc = group_sub(SUB_GROUP, g, gn, NULL, 0, sub);
	if (!rc)
		rc = stream_rec_get(ks, k, ver, sub->data, sub->len, &v);
	if (!rc)
		rc = group_decode(k, g, gn, v.data, v.len, out);
	if (rc == -ENOENT && verb)
		LOG_INFO("%s '%.*s': no consumer group '%.*s'", verb, (int)k->klen, k->key, (int)gn,
			 g);
	buf_release(&v);
	return rc;
}

/* ---- A verb on one group ------------------------------------------- */

/* Pending counts of other consumers changed by one verb, applied at its
 * commit: several entries may move from one consumer, and reads do not
 * see the batch. */
struct delta {
	struct buf name;
	int64_t d;
};
struct deltas {
	struct delta *v;
	size_t n, cap;
};

/* A stored count less n, or plus d: counts read from disk may disagree
 * with the records (a corrupt or foreign write), and stop at 0 and at
 * 2^64 - 1 instead of wrapping. */
static uint64_t count_less(uint64_t v, uint64_t n)
{
	return v > n ? v - n : 0;
}

static uint64_t count_add(uint64_t v, int64_t d)
{
	if (d < 0)
		return count_less(v, (uint64_t)0 - (uint64_t)d);
	return v > UINT64_MAX - (uint64_t)d ? UINT64_MAX : v + (uint64_t)d;
}

/* The consumers of one verb are few and its records mostly repeat the
 * last one met: that is looked at first. */
static int deltas_add(struct deltas *ds, const char *c, size_t cn, int64_t d)
{
	for (size_t j = ds->n; j-- > 0;) {
		if (same_name(ds->v[j].name.data, ds->v[j].name.len, c, cn)) {
			ds->v[j].d += d;
			return 0;
		}
	}
	void *nv = array_grow(ds->v, &ds->cap, ds->n, sizeof(*ds->v), 4);
	if (!nv)
		return -ENOMEM;
	ds->v = nv;
	buf_init(&ds->v[ds->n].name);
	ds->v[ds->n].d = d;
	return buf_set(&ds->v[ds->n++].name, c, cn);
}

static void deltas_release(struct deltas *ds)
{
	for (size_t j = 0; j < ds->n; j++)
		buf_release(&ds->v[j].name);
	free(ds->v);
}

/*
 * What a verb on group g of stream k holds from group_begin to group_end:
 * the transaction on k, the stream's metadata, the group's record, the
 * acting consumer's (after group_consumer), and the deltas. The verb
 * changes grp, con and ds; group_commit writes them.
 */
struct group_txn {
	struct keyspace *ks;
	const struct ks_key *k;
	const char *g;
	size_t gn;
	struct ks_txn t;
	struct enc_meta *m; /* NULL: no such stream */
	struct stream_info i;
	struct buf gsub; /* the group record's sub-key */
	struct stream_group grp;
	const char *c; /* the acting consumer, or NULL */
	size_t cn;
	struct buf csub;
	struct stream_consumer con;
	struct deltas ds;
};

/* Lock k, read its metadata (with create, make a missing stream) and
 * group g: 0, -ENOENT (no stream: x->m is NULL; no group: logged as
 * NOGROUP when `verb` is given), -KV_EWRONGTYPE, -EUCLEAN, -EIO. End x
 * with group_end whatever this returns. */
static int group_begin(struct group_txn *x, struct keyspace *ks, const struct ks_key *k,
		       const char *g, size_t gn, const char *verb, bool create)
{
	memset(x, 0, sizeof(*x));
	x->ks = ks;
	x->k = k;
	x->g = g;
	x->gn = gn;
	ks_txn_begin(&x->t, ks, k);
	int rc = stream_meta_txn(&x->t, k, create, &x->m, &x->i);
	if (rc)
		return rc;
	return group_read(ks, k, x->m->version, g, gn, &x->gsub, &x->grp, verb);
}

/* The acting consumer c: its record, or a new one (counted in the
 * group; *created, which may be NULL). 0, -EINVAL (a name Kvrocks
 * refuses), -EUCLEAN, -EIO. */
static int group_consumer(struct group_txn *x, const char *c, size_t cn, bool *created)
{
	struct buf v = BUF_INIT;
	int rc = consumer_sub(x->g, x->gn, c, cn, &x->csub);
	if (!rc)
		rc = stream_rec_get(x->ks, x->k, x->m->version, x->csub.data, x->csub.len, &v);
	if (created)
		*created = false;
	if (rc == 0) {
		rc = consumer_decode(x->k, x->g, x->gn, v.data, v.len, &x->con);
	} else if (rc == -ENOENT) {
		rc = check_name(x->k, "consumer", c, cn);
		if (!rc) {
			x->con.pending = 0;
			x->con.seen_ms = x->con.active_ms = now_ms();
			x->grp.consumers = count_add(x->grp.consumers, 1);
			if (created)
				*created = true;
		}
	}
	if (!rc) {
		x->c = c;
		x->cn = cn;
	}
	buf_release(&v);
	return rc;
}

static void consumer_put(struct group_txn *x, const struct buf *sub,
			 const struct stream_consumer *c)
{
	uint8_t v[CONSUMER_LEN];
	put_be64(v, c->pending);
	put_be64(v + 8, c->seen_ms);
	put_be64(v + 16, c->active_ms);
	ks_txn_sub_put(&x->t, x->k, STORE_CF_STREAM, sub->data, sub->len, v, sizeof(v));
}

static void group_put(struct group_txn *x)
{
	uint8_t v[GROUP_LEN];
	put_be64(v, x->grp.consumers);
	put_be64(v + 8, x->grp.pending);
	stream_id_put(v + 16, &x->grp.last_delivered);
	put_be64(v + 32, (uint64_t)x->grp.entries_read);
	put_be64(v + 40, x->grp.lag);
	ks_txn_sub_put(&x->t, x->k, STORE_CF_STREAM, x->gsub.data, x->gsub.len, v, sizeof(v));
}

/* Stage the pending-entry record at sub: delivered at ms to the acting
 * consumer, count times. */
static int pel_put(struct group_txn *x, const char *sub, size_t sn, uint64_t ms, uint64_t count)
{
	struct buf v = BUF_INIT;
	int rc = buf_add_be64(&v, ms);
	if (!rc)
		rc = buf_add_be64(&v, count);
	if (!rc)
		rc = buf_add_be64(&v, x->cn);
	if (!rc)
		rc = buf_add(&v, x->c, x->cn);
	if (!rc)
		ks_txn_sub_put(&x->t, x->k, STORE_CF_STREAM, sub, sn, v.data, v.len);
	buf_release(&v);
	return rc;
}

/* Stage the group's record, the acting consumer's and the pending counts
 * the others lost (a consumer deleted under its entries has none to
 * change), then commit. */
static int group_commit(struct group_txn *x)
{
	struct buf sub = BUF_INIT, v = BUF_INIT;
	int rc = 0;
	for (size_t j = 0; j < x->ds.n && !rc; j++) {
		struct delta *d = &x->ds.v[j];
		struct stream_consumer c;
		if (x->c && same_name(d->name.data, d->name.len, x->c, x->cn)) {
			x->con.pending = count_add(x->con.pending, d->d);
			continue;
		}
		if (d->d == 0)
			continue;
		rc = consumer_sub(x->g, x->gn, d->name.data, d->name.len, &sub);
		if (!rc)
			rc = stream_rec_get(x->ks, x->k, x->m->version, sub.data, sub.len, &v);
		if (rc == -ENOENT) {
			rc = 0;
			continue;
		}
		if (!rc)
			rc = consumer_decode(x->k, x->g, x->gn, v.data, v.len, &c);
		if (!rc) {
			c.pending = count_add(c.pending, d->d);
			consumer_put(x, &sub, &c);
		}
	}
	if (!rc) {
		group_put(x);
		if (x->c)
			consumer_put(x, &x->csub, &x->con);
		rc = ks_txn_commit(&x->t);
	}
	buf_release(&sub);
	buf_release(&v);
	return rc;
}

static int group_end(struct group_txn *x, int rc)
{
	deltas_release(&x->ds);
	buf_release(&x->gsub);
	buf_release(&x->csub);
	return ks_txn_end(&x->t, rc);
}

/* ---- XGROUP -------------------------------------------------------- */

int stream_group_create(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
			const struct stream_id *id, int64_t entries_read, unsigned flags)
{
	struct group_txn x;
	int rc = check_name(k, "group", g, gn);
	if (rc)
		return rc;
	rc = group_begin(&x, ks, k, g, gn, NULL, (flags & STREAM_MKSTREAM) != 0);
	if (rc == -ENOENT && !x.m) {
		LOG_INFO("XGROUP CREATE '%.*s': no such stream (MKSTREAM creates one)",
			 (int)k->klen, k->key);
	} else if (rc == 0) {
		LOG_ERR("XGROUP CREATE '%.*s': group '%.*s' exists", (int)k->klen, k->key, (int)gn,
			g);
		rc = -EEXIST;
	} else if (rc == -ENOENT) {
		memset(&x.grp, 0, sizeof(x.grp));
		x.grp.last_delivered = id ? *id : x.i.last;
		if (entries_read != STREAM_ENTRIES_READ_UNSET)
			x.grp.entries_read = entries_read;
		else
			x.grp.entries_read = id ? -1 : (int64_t)x.i.entries_added;
		group_put(&x);
		x.i.group_number = count_add(x.i.group_number, 1);
		rc = stream_meta_commit(&x.t, k, x.m, &x.i);
	}
	return group_end(&x, rc);
}

/* Stage the deletion of every record of x's group of this type (its
 * consumers, its pending entries). */
static int group_del_all(struct group_txn *x, int type)
{
	struct buf px = BUF_INIT;
	struct store_iter *it = NULL;
	size_t base = 0;
	int rc = group_sub(type, x->g, x->gn, NULL, 0, &px);
	if (!rc && !(it = prefix_iter(x->ks, x->k, x->m->version, &px, &base)))
		rc = -ENOMEM;
	if (!rc) {
		for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it)) {
			size_t kn;
			const char *key = store_iter_key(it, &kn);
			ks_txn_sub_del(&x->t, x->k, STORE_CF_STREAM, key + base, kn - base);
		}
		rc = store_iter_status(it);
	}
	store_iter_free(it);
	buf_release(&px);
	return rc;
}

int stream_group_destroy(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn)
{
	struct group_txn x;
	int rc = group_begin(&x, ks, k, g, gn, NULL, false);
	if (rc == -ENOENT && x.m)
		return group_end(&x, 0); /* the key exists, the group does not */
	if (rc)
		return group_end(&x, rc);
	ks_txn_sub_del(&x.t, k, STORE_CF_STREAM, x.gsub.data, x.gsub.len);
	rc = group_del_all(&x, SUB_CONSUMER);
	if (!rc)
		rc = group_del_all(&x, SUB_PEL);
	if (!rc) {
		x.i.group_number = count_less(x.i.group_number, 1);
		rc = stream_meta_commit(&x.t, k, x.m, &x.i);
	}
	return group_end(&x, rc ? rc : 1);
}

int stream_group_setid(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		       const struct stream_id *id, int64_t entries_read)
{
	struct group_txn x;
	int rc = group_begin(&x, ks, k, g, gn, "XGROUP SETID", false);
	if (!rc) {
		x.grp.last_delivered = id ? *id : x.i.last;
		x.grp.entries_read = entries_read != STREAM_ENTRIES_READ_UNSET ? entries_read : -1;
		rc = group_commit(&x);
	}
	return group_end(&x, rc);
}

int stream_consumer_create(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
			   const char *c, size_t cn)
{
	struct group_txn x;
	bool created = false;
	int rc = group_begin(&x, ks, k, g, gn, "XGROUP CREATECONSUMER", false);
	if (!rc)
		rc = group_consumer(&x, c, cn, &created);
	if (!rc && created)
		rc = group_commit(&x);
	return group_end(&x, rc ? rc : created);
}

int stream_consumer_del(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
			const char *c, size_t cn, uint64_t *pending)
{
	struct buf sub = BUF_INIT, v = BUF_INIT;
	struct pel_iter pi = {0};
	struct group_txn x;
	struct stream_pel p;
	struct stream_id id;
	uint64_t dropped = 0;

	*pending = 0;
	int rc = group_begin(&x, ks, k, g, gn, "XGROUP DELCONSUMER", false);
	if (!rc)
		rc = consumer_sub(g, gn, c, cn, &sub);
	if (!rc)
		rc = stream_rec_get(ks, k, x.m->version, sub.data, sub.len, &v);
	if (rc == -ENOENT && sub.len) {
		rc = 0; /* no such consumer: nothing to do */
		goto out;
	}
	if (!rc)
		rc = pel_iter_open(&pi, ks, k, x.m->version, g, gn, NULL);
	while (!rc && (rc = pel_iter_next(&pi, &id, &p)) == 1) {
		rc = 0;
		if (same_name(p.consumer.p, p.consumer.n, c, cn)) {
			ks_txn_sub_del(&x.t, k, STORE_CF_STREAM, pi.sub, pi.sn);
			dropped++;
		}
	}
	if (rc)
		goto out;
	ks_txn_sub_del(&x.t, k, STORE_CF_STREAM, sub.data, sub.len);
	x.grp.consumers = count_less(x.grp.consumers, 1);
	x.grp.pending = count_less(x.grp.pending, dropped);
	rc = group_commit(&x);
	if (!rc)
		*pending = dropped;
out:
	pel_iter_close(&pi);
	buf_release(&sub);
	buf_release(&v);
	return group_end(&x, rc);
}

/* ---- XREADGROUP, XACK, XCLAIM -------------------------------------- */

/* Kvrocks's StreamRangeHasTombstones / StreamEstimateDistanceFromFirstEverEntry
 * (Redis's rules for entries_read and lag). */
static bool has_tombstones(const struct stream_info *i, const struct stream_id *start)
{
	if (i->size == 0 || stream_id_is_zero(&i->max_deleted))
		return false;
	if (stream_id_cmp(&i->first, &i->max_deleted) > 0)
		return false;
	return stream_id_cmp(start, &i->max_deleted) <= 0;
}

static int64_t estimate_distance(const struct stream_info *i, const struct stream_id *id)
{
	if (i->entries_added == 0)
		return 0;
	if (i->size == 0 && stream_id_cmp(id, &i->last) < 0)
		return (int64_t)i->entries_added;
	int c = stream_id_cmp(id, &i->last);
	if (c == 0)
		return (int64_t)i->entries_added;
	if (c > 0)
		return -1;
	if (stream_id_is_zero(&i->max_deleted) || stream_id_cmp(&i->max_deleted, &i->first) < 0) {
		int f = stream_id_cmp(id, &i->first);
		if (f < 0)
			return (int64_t)(i->entries_added - i->size);
		if (f == 0)
			return (int64_t)(i->entries_added - i->size + 1);
	}
	return -1;
}

static void compute_lag(const struct stream_info *i, struct stream_group *g)
{
	if (i->entries_added == 0) {
		g->lag = 0;
	} else if (g->entries_read != -1 && !has_tombstones(i, &g->last_delivered)) {
		g->lag = i->entries_added - (uint64_t)g->entries_read;
	} else {
		int64_t er = estimate_distance(i, &g->last_delivered);
		g->lag = er != -1 ? i->entries_added - (uint64_t)er : UINT64_MAX;
	}
}

/* XREADGROUP ... >: the entries after the group's last delivered ID,
 * each pending for the acting consumer unless STREAM_NOACK. */
static int read_new(struct group_txn *x, uint64_t count, unsigned flags, uint64_t now,
		    stream_entry_cb cb, void *arg)
{
	struct buf sub = BUF_INIT, v = BUF_INIT;
	struct stream_id id;
	uint64_t n = 0;
	const char *val;
	size_t vn;
	int rc;
	struct stream_iter *it =
	    stream_iter_new(x->ks, x->k, false, &x->grp.last_delivered, true, NULL, false, &rc);
	if (!it)
		return rc;
	while ((!count || n < count) && (rc = stream_iter_next(it, &id, &val, &vn)) == 1) {
		n++;
		if (x->grp.entries_read != -1 && !has_tombstones(&x->i, &id))
			x->grp.entries_read +=
			    x->grp.entries_read < INT64_MAX; /* stored: any value */
		else if (x->i.entries_added)
			x->grp.entries_read = estimate_distance(&x->i, &id);
		x->grp.last_delivered = id;
		if (!(flags & STREAM_NOACK)) {
			struct stream_pel old;
			rc = pel_sub(x->g, x->gn, &id, &sub);
			if (!rc)
				rc = stream_rec_get(x->ks, x->k, x->m->version, sub.data, sub.len,
						    &v);
			if (rc == 0 && pel_decode(v.data, v.len, &old) == 0) {
				rc = deltas_add(&x->ds, old.consumer.p, old.consumer.n, -1);
			} else if (rc == -ENOENT || rc == 0) {
				/* a record that does not decode is replaced: logged */
				if (rc == 0)
					ks_corrupt_entry(x->k, x->g, x->gn,
							 "pending entry %" PRIu64 "-%" PRIu64
							 " of %zu bytes does not decode; replaced",
							 id.ms, id.seq, v.len);
				x->grp.pending = count_add(x->grp.pending, 1);
				rc = 0;
			}
			if (!rc)
				rc = pel_put(x, sub.data, sub.len, now, 1);
			if (rc)
				break;
			x->con.pending = count_add(x->con.pending, 1);
		}
		if (cb && (rc = cb(arg, &id, val, vn)))
			break;
	}
	stream_iter_free(it);
	buf_release(&sub);
	buf_release(&v);
	return rc == 1 ? 0 : rc; /* 1: stopped by count */
}

/* XREADGROUP ... id: the acting consumer's pending entries after start,
 * delivered once more. */
static int read_pending(struct group_txn *x, const struct stream_id *start, uint64_t count,
			uint64_t now, stream_entry_cb cb, void *arg)
{
	struct buf v = BUF_INIT;
	struct pel_iter pi;
	struct stream_pel p;
	struct stream_id id;
	uint64_t n = 0;
	/* A pending entry deleted from the stream is delivered again as no
	 * value (Redis's nil; Kvrocks counts its delivery too), never a
	 * failure of the read. */
	int rc = pel_iter_open(&pi, x->ks, x->k, x->m->version, x->g, x->gn, start);
	while (!rc && (rc = pel_iter_next(&pi, &id, &p)) == 1) {
		rc = 0;
		if (stream_id_cmp(&id, start) <= 0 ||
		    !same_name(p.consumer.p, p.consumer.n, x->c, x->cn))
			continue;
		if (count && n >= count)
			break;
		n++;
		rc = pel_put(x, pi.sub, pi.sn, now, p.deliveries + 1);
		if (!rc)
			rc = stream_get(x->ks, x->k, &id, &v);
		if (rc && rc != -ENOENT)
			break;
		if (cb)
			rc = cb(arg, &id, rc ? NULL : v.data, rc ? 0 : v.len);
		else
			rc = 0;
	}
	pel_iter_close(&pi);
	buf_release(&v);
	return rc;
}

int stream_readgroup(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		     const char *c, size_t cn, const struct stream_id *start, uint64_t count,
		     unsigned flags, stream_entry_cb cb, void *arg)
{
	struct group_txn x;
	uint64_t now = now_ms();
	int rc = group_begin(&x, ks, k, g, gn, "XREADGROUP", false);
	if (!rc)
		rc = group_consumer(&x, c, cn, NULL);
	if (!rc) {
		x.con.seen_ms = x.con.active_ms = now;
		if (start)
			rc = read_pending(&x, start, count, now, cb, arg);
		else
			rc = read_new(&x, count, flags, now, cb, arg);
	}
	if (!rc)
		rc = group_commit(&x);
	return group_end(&x, rc);
}

int stream_ack(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
	       const struct stream_id *ids, size_t n, uint64_t *acked)
{
	struct buf sub = BUF_INIT, v = BUF_INIT;
	struct group_txn x;
	uint64_t done = 0;

	*acked = 0;
	int rc = group_begin(&x, ks, k, g, gn, NULL, false);
	if (rc == -ENOENT)
		return group_end(&x, 0); /* no key or no group: nothing pending */
	for (size_t j = 0; j < n && !rc; j++) {
		struct stream_pel p;
		if (stream_id_in(&ids[j], ids, j))
			continue; /* counted once */
		rc = pel_sub(g, gn, &ids[j], &sub);
		if (!rc)
			rc = stream_rec_get(ks, k, x.m->version, sub.data, sub.len, &v);
		if (rc == -ENOENT) {
			rc = 0;
			continue;
		}
		if (!rc && pel_decode(v.data, v.len, &p) == 0)
			rc = deltas_add(&x.ds, p.consumer.p, p.consumer.n, -1);
		else if (!rc) /* acked all the same: XACK needs only the ID */
			ks_corrupt_entry(k, g, gn,
					 "pending entry %" PRIu64 "-%" PRIu64
					 " of %zu bytes does not decode; removed",
					 ids[j].ms, ids[j].seq, v.len);
		if (!rc) {
			ks_txn_sub_del(&x.t, k, STORE_CF_STREAM, sub.data, sub.len);
			done++;
		}
	}
	if (!rc && done) {
		x.grp.pending = count_less(x.grp.pending, done);
		rc = group_commit(&x);
		if (!rc)
			*acked = done;
	}
	buf_release(&sub);
	buf_release(&v);
	return group_end(&x, rc);
}

int stream_claim(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		 const char *c, size_t cn, uint64_t min_idle, const struct stream_id *ids, size_t n,
		 unsigned flags, stream_entry_cb cb, void *arg)
{
	struct buf sub = BUF_INIT, v = BUF_INIT, ev = BUF_INIT;
	struct group_txn x;
	uint64_t now = now_ms();
	int rc = group_begin(&x, ks, k, g, gn, "XCLAIM", false);
	if (!rc)
		rc = group_consumer(&x, c, cn, NULL);
	if (rc)
		goto out;
	x.con.seen_ms = x.con.active_ms = now;
	for (size_t j = 0; j < n && !rc; j++) {
		struct stream_pel p = {0};
		bool had;
		if (stream_id_in(&ids[j], ids, j))
			continue;
		rc = pel_sub(g, gn, &ids[j], &sub);
		if (!rc)
			rc = stream_rec_get(ks, k, x.m->version, sub.data, sub.len, &v);
		had = rc == 0;
		if (rc == -ENOENT)
			rc = 0;
		if (rc)
			break;
		if (had && pel_decode(v.data, v.len, &p)) {
			rc = ks_corrupt_entry(k, g, gn,
					      "pending entry %" PRIu64 "-%" PRIu64
					      " of %zu bytes does not decode",
					      ids[j].ms, ids[j].seq, v.len);
			break;
		}
		rc = stream_get(ks, k, &ids[j], &ev);
		if (rc == -ENOENT) {
			/* gone from the stream: Redis 7 drops it from the PEL */
			rc = 0;
			if (had) {
				ks_txn_sub_del(&x.t, k, STORE_CF_STREAM, sub.data, sub.len);
				x.grp.pending = count_less(x.grp.pending, 1);
				rc = deltas_add(&x.ds, p.consumer.p, p.consumer.n, -1);
			}
			continue;
		}
		if (rc)
			break;
		if (!had && !(flags & STREAM_FORCE))
			continue;
		if (had && idle_ms(now, &p) < min_idle)
			continue;
		if (!had) {
			x.grp.pending = count_add(x.grp.pending, 1);
			x.con.pending = count_add(x.con.pending, 1);
		} else if (!same_name(p.consumer.p, p.consumer.n, c, cn)) {
			rc = deltas_add(&x.ds, p.consumer.p, p.consumer.n, -1);
			x.con.pending = count_add(x.con.pending, 1);
		}
		uint64_t count = p.deliveries + ((flags & STREAM_JUSTID) ? 0 : 1);
		if (!rc)
			rc = pel_put(&x, sub.data, sub.len, now, count);
		if (!rc && cb)
			rc = cb(arg, &ids[j], (flags & STREAM_JUSTID) ? NULL : ev.data,
				(flags & STREAM_JUSTID) ? 0 : ev.len);
	}
	if (!rc)
		rc = group_commit(&x);
out:
	buf_release(&sub);
	buf_release(&v);
	buf_release(&ev);
	return group_end(&x, rc);
}

int stream_autoclaim(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		     const char *c, size_t cn, uint64_t min_idle, const struct stream_id *start,
		     uint64_t count, unsigned flags, stream_entry_cb cb, stream_entry_cb gone,
		     void *arg, struct stream_id *next)
{
	struct buf ev = BUF_INIT;
	struct pel_iter pi = {0};
	struct group_txn x;
	struct stream_pel p;
	struct stream_id id;
	uint64_t now = now_ms(), claimed = 0, attempts;

	*next = (struct stream_id){0, 0};
	if (count == 0)
		count = 100;
	attempts = count > UINT64_MAX / 10 ? UINT64_MAX : count * 10;
	int rc = group_begin(&x, ks, k, g, gn, "XAUTOCLAIM", false);
	if (!rc)
		rc = group_consumer(&x, c, cn, NULL);
	if (!rc)
		rc = pel_iter_open(&pi, ks, k, x.m->version, g, gn, start);
	if (!rc)
		x.con.seen_ms = x.con.active_ms = now;
	while (!rc && (rc = pel_iter_next(&pi, &id, &p)) == 1) {
		rc = 0;
		if (claimed >= count || attempts == 0) {
			*next = id; /* where the next call goes on */
			break;
		}
		attempts--;
		if (idle_ms(now, &p) < min_idle)
			continue;
		rc = stream_get(ks, k, &id, &ev);
		if (rc == -ENOENT) {
			ks_txn_sub_del(&x.t, k, STORE_CF_STREAM, pi.sub, pi.sn);
			x.grp.pending = count_less(x.grp.pending, 1);
			rc = deltas_add(&x.ds, p.consumer.p, p.consumer.n, -1);
			claimed++;
			if (!rc && gone)
				rc = gone(arg, &id, NULL, 0);
			continue;
		}
		if (rc)
			break;
		claimed++;
		if (!same_name(p.consumer.p, p.consumer.n, c, cn)) {
			rc = deltas_add(&x.ds, p.consumer.p, p.consumer.n, -1);
			x.con.pending = count_add(x.con.pending, 1);
		}
		if (!rc)
			rc = pel_put(&x, pi.sub, pi.sn, now,
				     p.deliveries + ((flags & STREAM_JUSTID) ? 0 : 1));
		if (!rc && cb)
			rc = cb(arg, &id, (flags & STREAM_JUSTID) ? NULL : ev.data,
				(flags & STREAM_JUSTID) ? 0 : ev.len);
	}
	if (!rc)
		rc = group_commit(&x);
	pel_iter_close(&pi);
	buf_release(&ev);
	return group_end(&x, rc);
}

/* ---- Reads: XPENDING, XINFO ---------------------------------------- */

/* The stream metadata of k and group g's record, for a read: 0, -ENOENT
 * (no key or group), -KV_EWRONGTYPE, -EUCLEAN, -EIO. */
static int group_look(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		      struct stream_info *i, struct stream_group *grp)
{
	struct buf sub = BUF_INIT;
	int rc = stream_info(ks, k, i);
	if (!rc)
		rc = group_read(ks, k, i->version, g, gn, &sub, grp, NULL);
	buf_release(&sub);
	return rc;
}

int stream_pending(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		   const struct stream_id *from, const struct stream_id *to, uint64_t count,
		   const char *c, size_t cn, uint64_t min_idle, stream_pel_cb cb, void *arg)
{
	struct pel_iter pi = {0};
	struct stream_info i;
	struct stream_group grp;
	struct stream_pel p;
	struct stream_id id;
	uint64_t n = 0, now = now_ms();
	int rc = group_look(ks, k, g, gn, &i, &grp);
	if (!rc)
		rc = pel_iter_open(&pi, ks, k, i.version, g, gn, from);
	while (!rc && (!count || n < count) && (rc = pel_iter_next(&pi, &id, &p)) == 1) {
		rc = 0;
		if (to && stream_id_cmp(&id, to) > 0)
			break;
		if (c && !same_name(p.consumer.p, p.consumer.n, c, cn))
			continue;
		uint64_t idle = idle_ms(now, &p);
		if (idle < min_idle)
			continue;
		n++;
		rc = cb(arg, &id, &p, idle);
	}
	pel_iter_close(&pi);
	return rc;
}

struct summary_cb {
	stream_consumer_cb cb;
	void *arg;
};

static int summary_consumer(void *arg, const char *name, size_t n, const struct stream_consumer *c)
{
	struct summary_cb *s = arg;
	return c->pending && s->cb ? s->cb(s->arg, name, n, c) : 0;
}

int stream_pending_summary(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
			   uint64_t *count, struct stream_id *min, struct stream_id *max,
			   stream_consumer_cb cb, void *arg)
{
	struct buf px = BUF_INIT;
	struct store_iter *it = NULL;
	struct stream_info i;
	struct stream_group grp;
	struct summary_cb s = {cb, arg};
	size_t base = 0;

	*count = 0;
	*min = *max = (struct stream_id){0, 0};
	int rc = group_look(ks, k, g, gn, &i, &grp);
	if (!rc)
		rc = group_sub(SUB_PEL, g, gn, NULL, 0, &px);
	if (!rc && !(it = prefix_iter(ks, k, i.version, &px, &base)))
		rc = -ENOMEM;
	if (rc)
		goto out;
	*count = grp.pending;
	for (int end = 0; end < 2; end++) {
		size_t kn;
		if (end)
			store_iter_seek_last(it);
		else
			store_iter_seek_first(it);
		if (!store_iter_valid(it))
			break;
		const char *key = store_iter_key(it, &kn);
		if (kn - base == px.len + 16)
			stream_id_get((const uint8_t *)key + base + px.len, end ? max : min);
	}
	rc = store_iter_status(it);
	if (!rc)
		rc = stream_consumers(ks, k, g, gn, summary_consumer, &s);
out:
	store_iter_free(it);
	buf_release(&px);
	return rc;
}

/*
 * Visit the records under the sub-key prefix px of k's version `ver`
 * whose sub-key continues with exactly u64 len | name (groups, or the
 * consumers of a group): fn(arg, name, len, value, vn) until it returns
 * nonzero, which is returned.
 */
static int named_walk(struct keyspace *ks, const struct ks_key *k, uint64_t ver,
		      const struct buf *px,
		      int (*fn)(void *arg, const char *name, size_t nn, const char *v, size_t vn),
		      void *arg)
{
	size_t base = 0;
	struct store_iter *it = prefix_iter(ks, k, ver, px, &base);
	int rc = 0;
	if (!it)
		return -ENOMEM;
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it)) {
		size_t kn, vn;
		const char *key = store_iter_key(it, &kn);
		const char *val = store_iter_value(it, &vn);
		key += base + px->len;
		kn -= base + px->len;
		if (kn < 8 || get_be64(key) != kn - 8) {
			/* names no group or consumer: not listed (encoding.md 20) */
			ks_corrupt_entry(k, key, kn,
					 "a stream group or consumer sub-key of %zu bytes whose "
					 "length prefix disagrees; skipped",
					 kn);
			continue;
		}
		if ((rc = fn(arg, key + 8, kn - 8, val, vn)))
			break;
	}
	if (!rc)
		rc = store_iter_status(it);
	store_iter_free(it);
	return rc;
}

struct group_walk {
	const struct ks_key *k;
	const char *g; /* the group of consumer_visit */
	size_t gn;
	const struct stream_info *info;
	stream_group_cb cb;
	stream_consumer_cb ccb;
	void *arg;
};

static int group_visit(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct group_walk *w = arg;
	struct stream_group grp;
	int rc = group_decode(w->k, name, nn, v, vn, &grp);
	if (rc)
		return rc;
	compute_lag(w->info, &grp);
	return w->cb(w->arg, name, nn, &grp);
}

static int consumer_visit(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct group_walk *w = arg;
	struct stream_consumer con;
	int rc = consumer_decode(w->k, w->g, w->gn, v, vn, &con);
	if (rc)
		return rc;
	return w->ccb(w->arg, name, nn, &con);
}

int stream_groups(struct keyspace *ks, const struct ks_key *k, stream_group_cb cb, void *arg)
{
	struct buf px = BUF_INIT;
	struct stream_info i;
	struct group_walk w = {k, NULL, 0, &i, cb, NULL, arg};
	int rc = stream_info(ks, k, &i);
	if (!rc)
		rc = group_sub(SUB_GROUP, NULL, 0, NULL, 0, &px);
	if (!rc)
		rc = named_walk(ks, k, i.version, &px, group_visit, &w);
	buf_release(&px);
	return rc;
}

int stream_consumers(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		     stream_consumer_cb cb, void *arg)
{
	struct buf px = BUF_INIT;
	struct stream_info i;
	struct stream_group grp;
	struct group_walk w = {k, g, gn, &i, NULL, cb, arg};
	int rc = group_look(ks, k, g, gn, &i, &grp);
	if (!rc)
		rc = group_sub(SUB_CONSUMER, g, gn, NULL, 0, &px);
	if (!rc)
		rc = named_walk(ks, k, i.version, &px, consumer_visit, &w);
	buf_release(&px);
	return rc;
}

/* ---- The whole group state (a copy's `groups` file) ------------------ */

struct gs_walk {
	const struct ks_key *k;
	struct stream_gstate *gs;
	const char *g; /* the group whose consumers are walked */
	size_t gn;
};

static int gs_consumer_visit(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct gs_walk *w = arg;
	struct stream_consumer con;
	if (consumer_decode(w->k, w->g, w->gn, v, vn, &con))
		return 0; /* logged: left out */
	return stream_gstate_add_consumer(w->gs, name, nn, con.seen_ms, con.active_ms);
}

/* Group `name`'s record, its consumers and its pending entries into gs. */
static int gs_group_visit(void *arg, const char *name, size_t nn, const char *v, size_t vn,
			  struct keyspace *ks, uint64_t ver)
{
	struct gs_walk *w = arg;
	struct stream_group grp;
	struct buf px = BUF_INIT;
	struct pel_iter pi;
	struct stream_id id;
	struct stream_pel p;
	if (group_decode(w->k, name, nn, v, vn, &grp))
		return 0; /* logged: left out */
	int rc = stream_gstate_add_group(w->gs, name, nn, &grp.last_delivered, grp.entries_read,
					 grp.lag);
	struct gs_walk cw = {w->k, w->gs, name, nn};
	if (!rc)
		rc = group_sub(SUB_CONSUMER, name, nn, NULL, 0, &px);
	if (!rc)
		rc = named_walk(ks, w->k, ver, &px, gs_consumer_visit, &cw);
	buf_release(&px);
	if (rc)
		return rc;
	rc = pel_iter_open(&pi, ks, w->k, ver, name, nn, NULL);
	while (!rc && (rc = pel_iter_next(&pi, &id, &p)) == 1)
		rc = stream_gstate_add_pel(w->gs, &id, p.consumer.p, p.consumer.n, p.delivery_ms,
					   p.deliveries);
	pel_iter_close(&pi);
	return rc;
}

/* The group records, collected first (the walk of a group's consumers
 * and entries needs its own iterators): each name as a group of raw, its
 * value as that group's one consumer. */
static int gs_collect(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct stream_gstate *raw = arg;
	/* name and value kept as a "group" and a "consumer" string */
	struct stream_id z = {0, 0};
	int rc = stream_gstate_add_group(raw, name, nn, &z, 0, 0);
	if (!rc)
		rc = stream_gstate_add_consumer(raw, v, vn, 0, 0);
	return rc;
}

int stream_gstate_read(struct keyspace *ks, const struct ks_key *k, struct stream_gstate *gs)
{
	struct stream_gstate raw = STREAM_GSTATE_INIT;
	struct buf px = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	struct stream_info i;
	stream_gstate_release(gs);
	ks_txn_begin_read(&t, ks, k);
	int rc = stream_meta_txn(&t, k, false, &m, &i);
	if (!rc)
		rc = group_sub(SUB_GROUP, NULL, 0, NULL, 0, &px);
	if (!rc)
		rc = named_walk(ks, k, m->version, &px, gs_collect, &raw);
	struct gs_walk w = {k, gs, NULL, 0};
	for (size_t j = 0; j < raw.ng && !rc; j++) {
		struct stream_gs_str name = raw.g[j].name, val = raw.c[j].name;
		rc = gs_group_visit(&w, stream_gs_bytes(&raw, name), name.n,
				    stream_gs_bytes(&raw, val), val.n, ks, m->version);
	}
	buf_release(&px);
	stream_gstate_release(&raw);
	if (rc)
		stream_gstate_release(gs);
	return ks_txn_end(&t, rc);
}

static int gs_name_cmp(const struct stream_gstate *gs, struct stream_gs_str a, const char *b,
		       size_t bn)
{
	size_t n = a.n < bn ? a.n : bn;
	int c = n ? memcmp(stream_gs_bytes(gs, a), b, n) : 0;
	return c ? c : (a.n > bn) - (a.n < bn);
}

static int gs_ix_cmp(const void *x, const void *y, void *arg)
{
	const struct stream_gstate *gs = arg;
	struct stream_gs_str b = gs->c[*(const size_t *)y].name;
	return gs_name_cmp(gs, gs->c[*(const size_t *)x].name, stream_gs_bytes(gs, b), b.n);
}

/* Stage group g of gs: its record, its consumers' (with the pending
 * entries each has) and its pending entries'. */
static int gs_stage_group(struct ks_txn *t, const struct ks_key *k, const struct stream_gstate *gs,
			  const struct stream_gs_group *g)
{
	struct buf sub = BUF_INIT, val = BUF_INIT;
	const char *gname = stream_gs_bytes(gs, g->name);
	uint64_t *pending = calloc(g->nc ? g->nc : 1, sizeof(*pending));
	size_t *ix = malloc((g->nc ? g->nc : 1) * sizeof(*ix));
	int rc = pending && ix ? 0 : -ENOMEM;
	for (size_t j = 0; j < g->nc; j++)
		ix[j] = g->c0 + j;
	if (!rc)
		qsort_r(ix, g->nc, sizeof(*ix), gs_ix_cmp, (void *)gs);
	for (size_t j = g->p0; j < g->p0 + g->np && !rc; j++) {
		const struct stream_gs_pel *p = &gs->p[j];
		const char *cn = stream_gs_bytes(gs, p->consumer);
		size_t lo = 0, hi = g->nc;
		while (lo < hi) { /* the consumer, if it has a line */
			size_t mid = lo + (hi - lo) / 2;
			int c = gs_name_cmp(gs, gs->c[ix[mid]].name, cn, p->consumer.n);
			if (c == 0) {
				pending[ix[mid] - g->c0]++;
				break;
			}
			if (c < 0)
				lo = mid + 1;
			else
				hi = mid;
		}
		buf_reset(&val);
		rc = pel_sub(gname, g->name.n, &p->id, &sub);
		if (!rc)
			rc = buf_add_be64(&val, p->delivery_ms);
		if (!rc)
			rc = buf_add_be64(&val, p->deliveries);
		if (!rc)
			rc = buf_add_be64(&val, p->consumer.n);
		if (!rc)
			rc = buf_add(&val, cn, p->consumer.n);
		if (!rc)
			ks_txn_sub_put(t, k, STORE_CF_STREAM, sub.data, sub.len, val.data, val.len);
	}
	for (size_t j = 0; j < g->nc && !rc; j++) {
		const struct stream_gs_consumer *c = &gs->c[g->c0 + j];
		uint8_t v[CONSUMER_LEN];
		rc = consumer_sub(gname, g->name.n, stream_gs_bytes(gs, c->name), c->name.n, &sub);
		put_be64(v, pending[j]);
		put_be64(v + 8, c->seen_ms);
		put_be64(v + 16, c->active_ms);
		if (!rc)
			ks_txn_sub_put(t, k, STORE_CF_STREAM, sub.data, sub.len, v, sizeof(v));
	}
	if (!rc) {
		uint8_t v[GROUP_LEN];
		put_be64(v, g->nc);
		put_be64(v + 8, g->np);
		stream_id_put(v + 16, &g->last_delivered);
		put_be64(v + 32, (uint64_t)g->entries_read);
		put_be64(v + 40, g->lag);
		rc = group_sub(SUB_GROUP, gname, g->name.n, NULL, 0, &sub);
		if (!rc)
			ks_txn_sub_put(t, k, STORE_CF_STREAM, sub.data, sub.len, v, sizeof(v));
	}
	free(pending);
	free(ix);
	buf_release(&sub);
	buf_release(&val);
	return rc;
}

int stream_gstate_stage(struct ks_txn *t, const struct ks_key *k, const struct stream_gstate *gs,
			struct stream_info *i)
{
	static const uint8_t ff[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	struct buf px = BUF_INIT;
	struct store_iter *it = NULL;
	size_t base = 0;
	int rc = buf_set(&px, ff, sizeof(ff));
	/* every record of every group goes: the batch puts the new ones after */
	if (!rc && !(it = prefix_iter(t->ks, k, i->version, &px, &base)))
		rc = -ENOMEM;
	if (!rc) {
		for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it)) {
			size_t kn;
			const char *key = store_iter_key(it, &kn);
			ks_txn_sub_del(t, k, STORE_CF_STREAM, key + base, kn - base);
		}
		rc = store_iter_status(it);
	}
	store_iter_free(it);
	buf_release(&px);
	for (size_t j = 0; j < gs->ng && !rc; j++)
		rc = gs_stage_group(t, k, gs, &gs->g[j]);
	if (!rc)
		i->group_number = gs->ng;
	return rc;
}

int stream_gstate_replace(struct keyspace *ks, const struct ks_key *k,
			  const struct stream_gstate *gs)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct stream_info i;
	ks_txn_begin(&t, ks, k);
	int rc = stream_meta_txn(&t, k, true, &m, &i);
	if (!rc)
		rc = stream_gstate_stage(&t, k, gs, &i);
	if (!rc)
		rc = stream_meta_commit(&t, k, m, &i);
	return ks_txn_end(&t, rc);
}
