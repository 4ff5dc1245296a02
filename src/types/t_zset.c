/*
 * t_zset: the Redis sorted-set type (kvrocks-encoding.md 6.5). Metadata
 * (type 5, size = number of members) in the metadata CF, and two records
 * per member:
 *
 *   CF          key                                          value
 *   default     ns|key_len|key|version|member                score (8, sortable)
 *   zset_score  ns|key_len|key|version|score (8, sortable)|member  (empty)
 *
 * Sortable double: IEEE bits as u64; negative -> all bits inverted, else
 * sign bit set; big-endian (enc_double_to_sortable). Layer: types.
 *
 * Every mutation holds the key's lock from the metadata read to the one
 * batch write; a member's two records are always put or deleted in the
 * same batch, and a score change deletes the old score-index key. Size
 * always equals the number of members. Updates keep the stored metadata
 * encoding (v0 stays v0); a new key gets fresh v1 metadata and loses its
 * empty-collection record in the same batch. Removing the last member
 * deletes the metadata, or with ZSET_KEEP_EMPTY replaces it by an
 * empty-collection record.
 */
#include "types/t_zset.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#define ZADD_KNOWN (ZSET_ADD_NX | ZSET_ADD_XX | ZSET_ADD_GT | ZSET_ADD_LT | ZSET_ADD_CH)

/* The zset_score sub-key bytes: sortable score | member. */
static int score_sub(struct buf *out, double score, const void *m, size_t mn)
{
	buf_reset(out);
	int rc = buf_add_double(out, score);
	if (!rc)
		rc = buf_add(out, m, mn);
	return rc;
}

/* A member record's value as a score; false if it does not decode (not
 * 8 bytes, or NaN, which ZADD never stores). */
static bool score_decode(const void *v, size_t n, double *score)
{
	*score = n == 8 ? enc_sortable_to_double(get_be64(v)) : NAN;
	return !isnan(*score);
}

/* Read member m's score from the default CF. 0, -ENOENT, -EUCLEAN (a
 * value that does not decode: logged, *score is NaN). */
static int score_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, const void *m,
		     size_t mn, double *score)
{
	struct buf v = BUF_INIT;
	int rc = ks_sub_get(ks, k, version, STORE_CF_DEFAULT, m, mn, &v);
	if (!rc && !score_decode(v.data, v.len, score))
		rc = ks_corrupt_entry(k, m, mn, "a zset score of %zu bytes that does not decode",
				      v.len);
	buf_release(&v);
	return rc;
}

/* Stage both records of member m with score: put, or delete. */
static void member_stage(struct ks_txn *t, const struct ks_key *k, const void *m, size_t mn,
			 double score, bool put)
{
	struct buf sub = BUF_INIT;
	uint8_t sv[8];
	put_be64(sv, enc_double_to_sortable(score));
	if (put)
		ks_txn_sub_put(t, k, STORE_CF_DEFAULT, m, mn, sv, sizeof(sv));
	else
		ks_txn_sub_del(t, k, STORE_CF_DEFAULT, m, mn);
	int rc = score_sub(&sub, score, m, mn);
	if (rc)
		ks_txn_fail(t, rc);
	else if (put)
		ks_txn_sub_put(t, k, STORE_CF_ZSET_SCORE, sub.data, sub.len, "", 0);
	else
		ks_txn_sub_del(t, k, STORE_CF_ZSET_SCORE, sub.data, sub.len);
	buf_release(&sub);
}

/* Stage the deletion of the score-index record of m at its old score. */
static void score_del(struct ks_txn *t, const struct ks_key *k, const void *m, size_t mn,
		      double old)
{
	struct buf sub = BUF_INIT;
	int rc = score_sub(&sub, old, m, mn);
	if (rc)
		ks_txn_fail(t, rc);
	else
		ks_txn_sub_del(t, k, STORE_CF_ZSET_SCORE, sub.data, sub.len);
	buf_release(&sub);
}

/* Members of a ZADD sorted by bytes, the last given first among equals. */
struct zadd_slot {
	const struct zset_member *m;
	size_t idx;
};

static int zadd_slot_cmp(const void *a, const void *b)
{
	const struct zadd_slot *x = a, *y = b;
	int c = bytes_cmp(x->m->member, x->m->len, y->m->member, y->m->len);
	if (c)
		return c;
	return x->idx < y->idx ? 1 : (x->idx > y->idx ? -1 : 0);
}

int zset_add_multi(struct keyspace *ks, const struct ks_key *k, const struct zset_member *ms,
		   size_t n, unsigned flags, uint64_t *count)
{
	struct ks_txn t;
	struct zadd_slot *slots = NULL;
	struct enc_meta *meta;
	uint64_t added = 0, changed = 0;

	if (n == 0 || !ms || (flags & ~ZADD_KNOWN))
		return -EINVAL;
	if ((flags & ZSET_ADD_NX) && (flags & (ZSET_ADD_XX | ZSET_ADD_GT | ZSET_ADD_LT)))
		return -EINVAL;
	if ((flags & ZSET_ADD_GT) && (flags & ZSET_ADD_LT))
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (isnan(ms[i].score))
			return -EINVAL;
		if (ms[i].len > ZSET_MEMBER_MAX)
			return -EFBIG;
	}
	if (!(slots = calloc(n, sizeof(*slots))))
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		slots[i].m = &ms[i];
		slots[i].idx = i;
	}
	qsort(slots, n, sizeof(*slots), zadd_slot_cmp);
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_ZSET, &meta);
	bool fresh = !rc && ks_txn_is_new(&t, k);
	for (size_t i = 0; i < n && !rc; i++) {
		const struct zset_member *z = slots[i].m;
		double old = 0;
		int ex = -ENOENT;

		if (i > 0 &&
		    bytes_cmp(z->member, z->len, slots[i - 1].m->member, slots[i - 1].m->len) == 0)
			continue; /* an earlier duplicate: the last one wins */
		if (!fresh) {
			ex = score_get(ks, k, meta->version, z->member, z->len, &old);
			if (ex && ex != -ENOENT) {
				rc = ex;
				break;
			}
		}
		if (ex == 0) {
			/* Kvrocks compares as doubles: -0.0 == +0.0 is no change. */
			if ((flags & ZSET_ADD_NX) || z->score == old)
				continue;
			if ((flags & ZSET_ADD_GT) && z->score <= old)
				continue;
			if ((flags & ZSET_ADD_LT) && z->score >= old)
				continue;
			score_del(&t, k, z->member, z->len, old);
			member_stage(&t, k, z->member, z->len, z->score, true);
			changed++;
		} else {
			if (flags & ZSET_ADD_XX)
				continue;
			member_stage(&t, k, z->member, z->len, z->score, true);
			added++;
		}
	}
	free(slots);
	if (rc)
		return ks_txn_end(&t, rc);
	if (added)
		ks_txn_resize(&t, k, (int64_t)added, 0);
	if (added || changed) /* else nothing to write */
		rc = ks_txn_commit(&t);
	if (!rc && count)
		*count = added + ((flags & ZSET_ADD_CH) ? changed : 0);
	return ks_txn_end(&t, rc);
}

int zset_add(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, double score,
	     unsigned flags)
{
	struct zset_member z = {m, mn, score};
	uint64_t count = 0;
	int rc = zset_add_multi(ks, k, &z, 1, flags, &count);
	return rc ? rc : (int)count;
}

/*
 * Stage the deletion of member m whose score does not decode: its member
 * record, and its score-index record, which is keyed by the score, so
 * found by scanning the key's index for the member's bytes. O(size), but
 * only for a corrupt record, which ZREM through the tree must still
 * remove.
 */
static void unscored_del(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
			 const void *m, size_t mn)
{
	struct ks_sub_iter_opts o = {.cf = STORE_CF_ZSET_SCORE};
	const char *sub, *v;
	size_t sn, vn;
	int rc;

	ks_txn_sub_del(t, k, STORE_CF_DEFAULT, m, mn);
	struct ks_sub_iter *it = ks_sub_iter_open(ks, k, KV_TYPE_ZSET, &o, &rc);
	while (it && (rc = ks_sub_iter_next(it, &sub, &sn, &v, &vn)) == 1)
		if (sn == 8 + mn && memcmp(sub + 8, m, mn) == 0)
			ks_txn_sub_del(t, k, STORE_CF_ZSET_SCORE, sub, sn);
	ks_sub_iter_free(it);
	ks_txn_fail(t, rc);
}

int zset_rem(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, unsigned flags)
{
	struct ks_txn t;
	struct enc_meta *meta;
	double old = 0;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_ZSET, &meta);
	if (rc)
		return ks_txn_end(&t, rc);
	rc = score_get(ks, k, meta->version, m, mn, &old);
	if (!rc)
		member_stage(&t, k, m, mn, old, false);
	else if (rc == -EUCLEAN) /* logged: its index record is found by its name */
		unscored_del(&t, ks, k, m, mn);
	else
		return ks_txn_end(&t, rc);
	ks_txn_resize(&t, k, -1, (flags & ZSET_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
	return ks_txn_end(&t, ks_txn_commit(&t));
}

int zset_rename_member(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fn,
		       const void *to, size_t tn)
{
	struct ks_txn t;
	struct enc_meta *meta;
	double score = 0, old = 0;

	if (tn > ZSET_MEMBER_MAX)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_ZSET, &meta);
	if (!rc)
		rc = score_get(ks, k, meta->version, from, fn, &score);
	if (rc || (fn == tn && memcmp(from, to, fn) == 0))
		return ks_txn_end(&t, rc); /* an error, or onto itself: nothing to do */
	int exists = score_get(ks, k, meta->version, to, tn, &old);
	if (exists && exists != -ENOENT)
		return ks_txn_end(&t, exists);
	member_stage(&t, k, from, fn, score, false);
	if (exists == 0)
		score_del(&t, k, to, tn, old);
	member_stage(&t, k, to, tn, score, true);
	if (exists == 0)
		ks_txn_resize(&t, k, -1, 0); /* `to` is replaced: size stays >= 1 */
	return ks_txn_end(&t, ks_txn_commit(&t));
}

int zset_score(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, double *score)
{
	uint64_t version;
	int rc = ks_version_get(ks, k, KV_TYPE_ZSET, &version);
	return rc ? rc : score_get(ks, k, version, m, mn, score);
}

int zset_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	return ks_card(ks, k, KV_TYPE_ZSET, n);
}

/* ---- Score-order iteration ----------------------------------------- */

/* What both iterators are: the keyspace's sub-key iterator, and whether
 * the current member's record does not decode. */
struct zset_member_iter {
	struct ks_sub_iter *si;
	bool bad;
};

/* The score iterator runs over the score index, each record checked
 * against its member record. */
struct zset_score_iter {
	struct zset_member_iter m; /* first: freed as a member iterator */
	struct keyspace *ks;
	uint64_t size;	  /* members in the snapshot (0: a missing key) */
	uint64_t version; /* of the snapshot */
	const char *sub;  /* the current index sub-key: score | member */
	size_t sn;
};

/* An iterator of `size` bytes that starts with a struct zset_member_iter,
 * its sub-key iterator opened with o. */
static void *iter_open(struct keyspace *ks, const struct ks_key *k, size_t size,
		       const struct ks_sub_iter_opts *o, int *err)
{
	struct zset_member_iter *it = calloc(1, size);
	if (!it) {
		*err = -ENOMEM;
		return NULL;
	}
	if (!(it->si = ks_sub_iter_open(ks, k, KV_TYPE_ZSET, o, err))) {
		free(it);
		return NULL;
	}
	return it;
}

/*
 * Open a score iterator positioned at the first entry in its direction,
 * or (after) strictly after score|member `after` (inclusive: at it). The
 * caller holds the key's lock, so the size and the iterator's snapshot
 * agree.
 */
static struct zset_score_iter *score_iter_open_locked(struct keyspace *ks, const struct ks_key *k,
						      bool reverse, const void *after, size_t alen,
						      bool inclusive, int *err)
{
	struct enc_meta meta;
	struct ks_sub_iter_opts o = {.cf = STORE_CF_ZSET_SCORE,
				     .reverse = reverse,
				     .after = after,
				     .alen = alen,
				     .inclusive = inclusive,
				     .meta = &meta};
	struct zset_score_iter *it = iter_open(ks, k, sizeof(*it), &o, err);
	if (it) {
		it->ks = ks;
		it->size = meta.size;
		it->version = meta.version;
	}
	return it;
}

static struct zset_score_iter *score_iter_open(struct keyspace *ks, const struct ks_key *k,
					       bool reverse, const void *after, size_t alen,
					       bool inclusive, int *err)
{
	struct ks_txn t; /* for the lock: nothing is written */
	ks_txn_begin_read(&t, ks, k);
	struct zset_score_iter *it =
	    score_iter_open_locked(ks, k, reverse, after, alen, inclusive, err);
	ks_txn_end(&t, 0);
	return it;
}

struct zset_score_iter *zset_score_iter_new(struct keyspace *ks, const struct ks_key *k,
					    bool reverse, const struct zset_cursor *after, int *err)
{
	struct buf sub = BUF_INIT;
	struct zset_score_iter *it = NULL;

	if (after && isnan(after->score)) {
		*err = -EINVAL;
		return NULL;
	}
	if (after && (*err = score_sub(&sub, after->score, after->member, after->len)))
		goto out;
	it = score_iter_open(ks, k, reverse, after ? sub.data : NULL, sub.len, false, err);
out:
	buf_release(&sub);
	return it;
}

/*
 * Is the current index record (score s of member m) the member's? 1 yes
 * (it->m.bad if the member record does not decode: logged, shown, read as
 * EIO), 0 no (skip it), or a negative errno. ZSCORE, ZREM and the
 * lookup of a name read the member record, so an index record without
 * it, or with another score, is a name no lookup finds: it is skipped
 * with a log line (docs/encoding.md section 20).
 */
static int index_check(struct zset_score_iter *it, const char *m, size_t mn)
{
	const struct ks_key *k = ks_sub_iter_key(it->m.si);
	uint64_t s = get_be64(it->sub);
	struct buf v = BUF_INIT;
	struct ks_txn t;
	double now;
	int rc = score_get(it->ks, k, it->version, m, mn, &now);
	it->m.bad = rc == -EUCLEAN;
	if (it->m.bad || (!rc && enc_double_to_sortable(now) == s))
		return 1;
	if (rc != -ENOENT && rc != 0)
		return rc;
	/* The iterator reads a snapshot and score_get the present: a
	 * writer may have come between. Under the key's lock, which every
	 * writer holds, both records are current. */
	ks_txn_begin_read(&t, it->ks, k);
	rc = ks_sub_get(it->ks, k, it->version, STORE_CF_ZSET_SCORE, it->sub, it->sn, &v);
	int mrc = rc ? rc : score_get(it->ks, k, it->version, m, mn, &now);
	ks_txn_end(&t, 0);
	if (rc == -ENOENT) {
		rc = 0; /* removed or rescored since the snapshot: not listed */
	} else if (!rc && mrc == 0 && enc_double_to_sortable(now) == s) {
		rc = 1; /* a writer put it back as it was */
	} else if (!rc && (mrc == 0 || mrc == -ENOENT)) {
		ks_corrupt_entry(k, m, mn,
				 mrc ? "a score-index record without its member record; not listed"
				     : "a score-index record at another score than its member "
				       "record's; not listed");
		rc = 0;
	} else if (!rc) {
		it->m.bad = mrc == -EUCLEAN;
		rc = it->m.bad ? 1 : mrc;
	}
	buf_release(&v);
	return rc;
}

int zset_score_iter_next(struct zset_score_iter *it, const char **m, size_t *mn, double *score)
{
	const char *v;
	size_t vn;
	int rc = 0;

	while (rc == 0) {
		/* The slice handed out last time stays valid until this move. */
		rc = ks_sub_iter_next(it->m.si, &it->sub, &it->sn, &v, &vn);
		if (rc != 1)
			return rc;
		if (it->sn < 8) {
			ks_corrupt(ks_sub_iter_key(it->m.si),
				   "a score-index sub-key of %zu bytes; not listed", it->sn);
			rc = 0;
			continue;
		}
		*score = enc_sortable_to_double(get_be64(it->sub));
		*m = it->sub + 8;
		*mn = it->sn - 8;
		rc = index_check(it, *m, *mn);
	}
	return rc;
}

bool zset_score_iter_bad(const struct zset_score_iter *it)
{
	return it->m.bad;
}

void zset_score_iter_free(struct zset_score_iter *it)
{
	zset_member_iter_free(it ? &it->m : NULL);
}

/* NEEDSWORK: O(rank), as Kvrocks's ZRANK: the score index has no counts. */
int zset_rank(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, bool reverse,
	      uint64_t *rank)
{
	struct buf sub = BUF_INIT;
	struct zset_score_iter *it;
	struct ks_txn t; /* for the lock: nothing is written */
	double score = 0, es = 0;
	uint64_t before = 0;
	const char *em = NULL;
	size_t emn = 0;
	int rc;

	/* The score and the iterator's snapshot agree: both under the lock. */
	ks_txn_begin_read(&t, ks, k);
	it = score_iter_open_locked(ks, k, false, NULL, 0, false, &rc);
	if (it && it->size == 0)
		rc = -ENOENT;
	if (!rc)
		rc = score_get(ks, k, it->version, m, mn, &score);
	ks_txn_end(&t, 0);
	if (!rc)
		rc = score_sub(&sub, score, m, mn);
	if (rc)
		goto out;
	/* Count the entries before score|member. */
	while ((rc = zset_score_iter_next(it, &em, &emn, &es)) == 1) {
		if (bytes_cmp(it->sub, it->sn, sub.data, sub.len) >= 0)
			break;
		before++;
	}
	if (rc == 0) {
		rc = ks_corrupt(k, "a zset member without its score-index record");
	}
	if (rc == 1 && before >= it->size) /* more index records than members */
		rc = ks_corrupt(
		    k, "the score index holds %" PRIu64 " records before a member of %" PRIu64,
		    before, it->size);
	if (rc == 1) {
		rc = 0;
		*rank = reverse ? it->size - 1 - before : before;
	}
out:
	zset_score_iter_free(it);
	buf_release(&sub);
	return rc;
}

int zset_range_by_rank(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t stop,
		       bool reverse, zset_range_cb cb, void *arg)
{
	struct zset_score_iter *it;
	uint64_t from, to, rank = 0;
	const char *m = NULL;
	size_t mn = 0;
	double score = 0;
	int rc;

	if (!(it = score_iter_open(ks, k, reverse, NULL, 0, false, &rc)))
		return rc;
	if (!rank_range_clamp(start, stop, it->size, &from, &to))
		goto out;
	while ((rc = zset_score_iter_next(it, &m, &mn, &score)) == 1) {
		if (rank > to) {
			rc = 0;
			break;
		}
		if (rank++ < from)
			continue;
		if ((rc = cb(arg, m, mn, score)))
			break;
	}
out:
	zset_score_iter_free(it);
	return rc;
}

int zset_range_by_score(struct keyspace *ks, const struct ks_key *k,
			const struct zset_score_range *r, bool reverse, uint64_t offset,
			int64_t count, zset_range_cb cb, void *arg)
{
	struct zset_score_iter *it;
	uint64_t skipped = 0, given = 0;
	uint8_t start[8];
	bool from_end = false;
	const char *m = NULL;
	size_t mn = 0;
	double score = 0;
	int rc;

	if (isnan(r->min) || isnan(r->max))
		return -EINVAL;
	if (r->min > r->max || (r->min == r->max && (r->minex || r->maxex)) || count == 0)
		return 0;
	/*
	 * Start at the first candidate, then filter by value: -0.0 sorts
	 * below +0.0 although they are equal, so a bound of zero starts at
	 * the outer zero.
	 */
	if (!reverse) {
		put_be64(start, enc_double_to_sortable(r->min == 0 ? -0.0 : r->min));
	} else {
		uint64_t u = enc_double_to_sortable(r->max == 0 ? 0.0 : r->max);
		from_end = u == UINT64_MAX;
		put_be64(start, u + 1);
	}
	if (!(it = score_iter_open(ks, k, reverse, from_end ? NULL : start, sizeof(start), true,
				   &rc)))
		return rc;
	while ((rc = zset_score_iter_next(it, &m, &mn, &score)) == 1) {
		bool below = score < r->min || (r->minex && score == r->min);
		bool above = score > r->max || (r->maxex && score == r->max);
		if (reverse ? below : above) {
			rc = 0;
			break;
		}
		if (reverse ? above : below)
			continue;
		if (skipped < offset) {
			skipped++;
			continue;
		}
		if ((rc = cb(arg, m, mn, score)))
			break;
		if (count > 0 && ++given == (uint64_t)count) {
			rc = 0;
			break;
		}
	}
	zset_score_iter_free(it);
	return rc;
}

/* ---- ZPOPMIN, ZPOPMAX -------------------------------------------- */

int zset_pop(struct keyspace *ks, const struct ks_key *k, uint64_t count, bool max, unsigned flags,
	     zset_range_cb cb, void *arg)
{
	struct ks_sub_iter_opts o = {.cf = STORE_CF_ZSET_SCORE, .reverse = max};
	struct ks_sub_iter *it = NULL;
	struct enc_meta *meta;
	const char *sub, *v;
	size_t sn, vn;
	uint64_t popped = 0;
	struct ks_txn t;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_ZSET, &meta);
	if (rc == -ENOENT)
		rc = 0; /* nothing to pop */
	else if (!rc && count > 0)
		it = ks_sub_iter_open(ks, k, KV_TYPE_ZSET, &o, &rc);
	/* Under the lock the index and the member records agree, but for
	 * corrupt ones: each is checked as a listing checks it. */
	while (it && popped < count && (rc = ks_sub_iter_next(it, &sub, &sn, &v, &vn)) == 1) {
		double score = 0;
		if (sn < 8) {
			rc = ks_corrupt(k, "a score-index sub-key of %zu bytes; not popped", sn);
			continue;
		}
		double is = enc_sortable_to_double(get_be64(sub));
		rc = score_get(ks, k, meta->version, sub + 8, sn - 8, &score);
		if (rc == 0 && enc_double_to_sortable(score) != get_be64(sub)) {
			rc = ks_corrupt_entry(k, sub + 8, sn - 8,
					      "a score-index record at another score than its "
					      "member record's; not popped");
			continue;
		}
		if (rc == -ENOENT) {
			rc = ks_corrupt_entry(k, sub + 8, sn - 8,
					      "a score-index record without its member record; "
					      "not popped");
			continue;
		}
		if (rc && rc != -EUCLEAN) /* -EUCLEAN: logged; popped at the index's score */
			break;
		member_stage(&t, k, sub + 8, sn - 8, is, false);
		popped++;
		if ((rc = cb(arg, sub + 8, sn - 8, is)))
			break;
	}
	if (!rc && popped) {
		ks_txn_resize(&t, k, -(int64_t)popped,
			      (flags & ZSET_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
		rc = ks_txn_commit(&t);
	}
	ks_sub_iter_free(it);
	return ks_txn_end(&t, rc);
}

/* ---- Member-order iteration ---------------------------------------- */

/* The member iterator runs over the member records. */
struct zset_member_iter *zset_member_iter_new(struct keyspace *ks, const struct ks_key *k,
					      const void *after, size_t alen, int *err)
{
	struct ks_sub_iter_opts o = {.after = after, .alen = alen};
	return iter_open(ks, k, sizeof(struct zset_member_iter), &o, err);
}

int zset_member_iter_next(struct zset_member_iter *it, const char **m, size_t *mn, double *score)
{
	const char *val;
	size_t vn;
	int rc = ks_sub_iter_next(it->si, m, mn, &val, &vn);
	if (rc != 1)
		return rc;
	/* Shown all the same (its lookup answers, its read is EIO), so that
	 * rm and rm -r remove it. */
	it->bad = !score_decode(val, vn, score);
	if (it->bad)
		ks_corrupt_entry(ks_sub_iter_key(it->si), *m, *mn,
				 "a zset score of %zu bytes that does not decode", vn);
	return 1;
}

bool zset_member_iter_bad(const struct zset_member_iter *it)
{
	return it->bad;
}

void zset_member_iter_free(struct zset_member_iter *it)
{
	if (!it)
		return;
	ks_sub_iter_free(it->si);
	free(it);
}

/* ---- For t_convert --------------------------------------------------- */

int zset_txn_add(struct ks_txn *t, const struct ks_key *k, const void *m, size_t mn, double score)
{
	if (isnan(score))
		return -EINVAL;
	if (mn > ZSET_MEMBER_MAX)
		return -EFBIG;
	member_stage(t, k, m, mn, score, true);
	ks_txn_resize(t, k, +1, 0);
	return 0;
}

int zset_incrby(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, double by,
		double *out)
{
	struct ks_txn t;
	struct enc_meta *meta;
	double old = 0;
	int ex = -ENOENT;

	if (isnan(by))
		return -EINVAL;
	if (mn > ZSET_MEMBER_MAX)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_ZSET, &meta);
	if (!rc && !ks_txn_is_new(&t, k)) {
		ex = score_get(ks, k, meta->version, m, mn, &old);
		if (ex && ex != -ENOENT)
			rc = ex;
	}
	if (rc)
		return ks_txn_end(&t, rc);
	double score = ex == 0 ? old + by : by; /* a new member: by itself, as Kvrocks */
	if (isnan(score)) /* inf + -inf: Redis's "resulting score is not a number" */
		return ks_txn_end(&t, -ERANGE);
	if (ex == 0 && score == old) {
		*out = old; /* no change (also -0.0 for +0.0): nothing written */
		return ks_txn_end(&t, 0);
	}
	if (ex == 0)
		score_del(&t, k, m, mn, old);
	else
		ks_txn_resize(&t, k, +1, 0);
	member_stage(&t, k, m, mn, score, true);
	rc = ks_txn_commit(&t);
	if (!rc)
		*out = score;
	return ks_txn_end(&t, rc);
}
