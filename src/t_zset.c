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
#include "t_zset.h"

#include "store.h"

#include <errno.h>
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
	struct buf sk = BUF_INIT, v = BUF_INIT;
	int rc = ks_sub_key(ks, k, version, m, mn, &sk);
	if (!rc)
		rc = store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, &v);
	if (!rc && !score_decode(v.data, v.len, score))
		rc = ks_corrupt_entry(k, m, mn, "a zset score of %zu bytes that does not decode",
				      v.len);
	buf_release(&sk);
	buf_release(&v);
	return rc;
}

/* Put (or delete, if put is false) both records of member m with score. */
static int batch_member(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			uint64_t version, const void *m, size_t mn, double score, bool put)
{
	struct buf sk = BUF_INIT, sub = BUF_INIT;
	uint8_t sv[8];
	int rc = ks_sub_key(ks, k, version, m, mn, &sk);
	if (!rc) {
		put_be64(sv, enc_double_to_sortable(score));
		if (put)
			store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, sv, sizeof(sv));
		else
			store_batch_delete(b, STORE_CF_DEFAULT, sk.data, sk.len);
		buf_reset(&sk);
		rc = score_sub(&sub, score, m, mn);
	}
	if (!rc)
		rc = ks_sub_key(ks, k, version, sub.data, sub.len, &sk);
	if (!rc) {
		if (put)
			store_batch_put(b, STORE_CF_ZSET_SCORE, sk.data, sk.len, "", 0);
		else
			store_batch_delete(b, STORE_CF_ZSET_SCORE, sk.data, sk.len);
	}
	buf_release(&sk);
	buf_release(&sub);
	return rc;
}

/* Delete the score-index record of m at its old score. */
static int batch_del_score(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			   uint64_t version, const void *m, size_t mn, double old)
{
	struct buf sk = BUF_INIT, sub = BUF_INIT;
	int rc = score_sub(&sub, old, m, mn);
	if (!rc)
		rc = ks_sub_key(ks, k, version, sub.data, sub.len, &sk);
	if (!rc)
		store_batch_delete(b, STORE_CF_ZSET_SCORE, sk.data, sk.len);
	buf_release(&sk);
	buf_release(&sub);
	return rc;
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
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct zadd_slot *slots = NULL;
	struct enc_meta meta;
	uint64_t added = 0, changed = 0;
	bool fresh = false;
	int rc;

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
	if (!(b = store_batch_new(ks_store(ks)))) {
		free(slots);
		return -ENOMEM;
	}
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_ZSET, &raw, &meta);
	if (rc == -ENOENT) {
		ks_meta_new(ks, &meta, KV_TYPE_ZSET);
		fresh = true;
		rc = 0;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		const struct zset_member *z = slots[i].m;
		double old = 0;
		int ex = -ENOENT;

		if (i > 0 &&
		    bytes_cmp(z->member, z->len, slots[i - 1].m->member, slots[i - 1].m->len) == 0)
			continue; /* an earlier duplicate: the last one wins */
		if (!fresh) {
			ex = score_get(ks, k, meta.version, z->member, z->len, &old);
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
			rc = batch_del_score(ks, b, k, meta.version, z->member, z->len, old);
			if (!rc)
				rc = batch_member(ks, b, k, meta.version, z->member, z->len,
						  z->score, true);
			changed++;
		} else {
			if (flags & ZSET_ADD_XX)
				continue;
			rc =
			    batch_member(ks, b, k, meta.version, z->member, z->len, z->score, true);
			added++;
		}
	}
	if (rc)
		goto out;
	if (added) {
		meta.size += added;
		rc = ks_batch_put_meta(ks, b, k, &meta, meta.tail, meta.tail_len);
		if (!rc && fresh)
			rc = ks_batch_empty_del(ks, b, k);
	}
	if (!rc && store_batch_count(b) > 0)
		rc = ks_write(ks, b);
	if (!rc && count)
		*count = added + ((flags & ZSET_ADD_CH) ? changed : 0);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	free(slots);
	return rc;
}

int zset_add(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, double score,
	     unsigned flags)
{
	struct zset_member z = {m, mn, score};
	uint64_t count = 0;
	int rc = zset_add_multi(ks, k, &z, 1, flags, &count);
	return rc ? rc : (int)count;
}

static struct store_iter *version_iter(struct keyspace *ks, enum store_cf cf,
				       const struct buf *prefix);

/*
 * Delete member m whose score does not decode: its member record, and
 * its score-index record, which is keyed by the score, so found by
 * scanning the key's index for the member's bytes. O(size), but only
 * for a corrupt record, which ZREM through the tree must still remove.
 */
static int batch_member_unscored(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
				 uint64_t version, const void *m, size_t mn)
{
	struct buf sk = BUF_INIT;
	struct store_iter *it = NULL;
	int rc = ks_sub_key(ks, k, version, m, mn, &sk);
	if (!rc) {
		store_batch_delete(b, STORE_CF_DEFAULT, sk.data, sk.len);
		rc = ks_sub_key(ks, k, version, NULL, 0, &sk);
	}
	if (!rc && !(it = version_iter(ks, STORE_CF_ZSET_SCORE, &sk)))
		rc = -ENOMEM;
	if (!rc)
		store_iter_seek_first(it);
	for (; !rc && store_iter_valid(it); store_iter_next(it)) {
		size_t kn;
		const char *key = store_iter_key(it, &kn);
		if (kn == sk.len + 8 + mn && memcmp(key + sk.len + 8, m, mn) == 0)
			store_batch_delete(b, STORE_CF_ZSET_SCORE, key, kn);
	}
	if (!rc)
		rc = store_iter_status(it);
	store_iter_free(it);
	buf_release(&sk);
	return rc;
}

int zset_rem(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, unsigned flags)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta meta;
	double old = 0;
	int rc;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_ZSET, &raw, &meta);
	if (!rc)
		rc = score_get(ks, k, meta.version, m, mn, &old);
	if (!rc)
		rc = batch_member(ks, b, k, meta.version, m, mn, old, false);
	else if (rc == -EUCLEAN) /* logged: its index record is found by its name */
		rc = batch_member_unscored(ks, b, k, meta.version, m, mn);
	if (rc)
		goto out;
	if (meta.size > 1) {
		meta.size--;
		rc = ks_batch_put_meta(ks, b, k, &meta, meta.tail, meta.tail_len);
	} else {
		rc = ks_batch_del_meta(ks, b, k);
		if (!rc && (flags & ZSET_KEEP_EMPTY))
			rc = ks_batch_empty_put(ks, b, k, KV_TYPE_ZSET);
	}
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

int zset_rename_member(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fn,
		       const void *to, size_t tn)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct enc_meta meta;
	double score = 0, old = 0;
	int rc, exists;

	if (tn > ZSET_MEMBER_MAX)
		return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = ks_meta_get(ks, k, KV_TYPE_ZSET, &raw, &meta);
	if (!rc)
		rc = score_get(ks, k, meta.version, from, fn, &score);
	if (rc || (fn == tn && memcmp(from, to, fn) == 0))
		goto out;
	exists = score_get(ks, k, meta.version, to, tn, &old);
	if (exists && exists != -ENOENT) {
		rc = exists;
		goto out;
	}
	rc = batch_member(ks, b, k, meta.version, from, fn, score, false);
	if (!rc && exists == 0)
		rc = batch_del_score(ks, b, k, meta.version, to, tn, old);
	if (!rc)
		rc = batch_member(ks, b, k, meta.version, to, tn, score, true);
	if (!rc && exists == 0) {
		/* `to` is replaced: one member fewer. */
		meta.size--;
		rc = ks_batch_put_meta(ks, b, k, &meta, meta.tail, meta.tail_len);
	}
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

int zset_score(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, double *score)
{
	struct buf raw = BUF_INIT;
	struct enc_meta meta;
	int rc = ks_meta_get(ks, k, KV_TYPE_ZSET, &raw, &meta);
	if (!rc)
		rc = score_get(ks, k, meta.version, m, mn, score);
	buf_release(&raw);
	return rc;
}

int zset_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	struct buf raw = BUF_INIT;
	struct enc_meta meta;
	int rc = ks_meta_get(ks, k, KV_TYPE_ZSET, &raw, &meta);
	if (rc == 0) {
		*n = meta.size;
	} else if (rc == -ENOENT) {
		*n = 0;
		rc = 0;
	}
	buf_release(&raw);
	return rc;
}

/* ---- Score-order iteration ----------------------------------------- */

struct zset_score_iter {
	struct store_iter *si; /* NULL: nothing to iterate */
	struct buf prefix;     /* sub-key prefix of the version */
	uint64_t size;	       /* members in the snapshot */
	bool reverse;
	bool started; /* false: the current position is the next to return */
	bool bad;     /* the member record of the current one does not decode */
	/* Each index record is checked against its member record. */
	struct keyspace *ks;
	struct buf name; /* ns | key: k points into it */
	struct ks_key k;
	uint64_t version;
};

/* An iterator over a CF's sub-keys of one key version, bounded to them. */
static struct store_iter *version_iter(struct keyspace *ks, enum store_cf cf,
				       const struct buf *prefix)
{
	struct buf upper = BUF_INIT;
	struct store_iter *it = NULL;
	if (buf_set(&upper, prefix->data, prefix->len) == 0) {
		bool bounded = enc_prefix_successor(&upper);
		it = store_iter_new(ks_store(ks), cf, prefix->data, prefix->len,
				    bounded ? upper.data : NULL, bounded ? upper.len : 0);
	}
	buf_release(&upper);
	return it;
}

/* Open an unpositioned score iterator; the caller holds the key's lock,
 * so the size and the iterator's snapshot agree. *m = the metadata
 * (m->tail points into raw). A missing key gives an iterator without
 * si. */
static struct zset_score_iter *score_iter_open_locked(struct keyspace *ks, const struct ks_key *k,
						      bool reverse, struct buf *raw,
						      struct enc_meta *meta, int *err)
{
	struct zset_score_iter *it = calloc(1, sizeof(*it));
	int rc;

	if (!it) {
		*err = -ENOMEM;
		return NULL;
	}
	buf_init(&it->prefix);
	buf_init(&it->name);
	it->reverse = reverse;
	it->ks = ks;
	rc = ks_meta_get(ks, k, KV_TYPE_ZSET, raw, meta);
	if (rc == -ENOENT) {
		rc = 0; /* a missing key iterates nothing */
		goto out;
	}
	if (!rc)
		rc = ks_sub_key(ks, k, meta->version, NULL, 0, &it->prefix);
	if (!rc)
		rc = ks_key_dup(k, &it->name, &it->k);
	if (rc)
		goto out;
	it->size = meta->size;
	it->version = meta->version;
	if (!(it->si = version_iter(ks, STORE_CF_ZSET_SCORE, &it->prefix)))
		rc = -ENOMEM;
out:
	if (rc) {
		zset_score_iter_free(it);
		it = NULL;
	}
	*err = rc;
	return it;
}

static struct zset_score_iter *score_iter_open(struct keyspace *ks, const struct ks_key *k,
					       bool reverse, int *err)
{
	struct buf raw = BUF_INIT;
	struct enc_meta meta;
	struct zset_score_iter *it;

	ks_lock(ks, k);
	it = score_iter_open_locked(ks, k, reverse, &raw, &meta, err);
	ks_unlock(ks, k);
	buf_release(&raw);
	return it;
}

/* Position at the first entry in the iterator's direction. */
static void score_iter_rewind(struct zset_score_iter *it)
{
	if (it->reverse)
		store_iter_seek_last(it->si);
	else
		store_iter_seek_first(it->si);
	it->started = false;
}

/* Position at the first entry strictly after prefix|sub in the iterator's
 * direction (or at it, if inclusive). */
static int score_iter_seek(struct zset_score_iter *it, const void *sub, size_t sn, bool inclusive)
{
	struct buf key = BUF_INIT;
	int rc = buf_set(&key, it->prefix.data, it->prefix.len);
	if (!rc)
		rc = buf_add(&key, sub, sn);
	if (rc)
		goto out;
	if (it->reverse)
		store_iter_seek_for_prev(it->si, key.data, key.len);
	else
		store_iter_seek(it->si, key.data, key.len);
	if (!inclusive && store_iter_valid(it->si)) {
		size_t kn;
		const char *cur = store_iter_key(it->si, &kn);
		if (kn == key.len && memcmp(cur, key.data, kn) == 0) {
			if (it->reverse)
				store_iter_prev(it->si);
			else
				store_iter_next(it->si);
		}
	}
	it->started = false;
out:
	buf_release(&key);
	return rc;
}

struct zset_score_iter *zset_score_iter_new(struct keyspace *ks, const struct ks_key *k,
					    bool reverse, const struct zset_cursor *after, int *err)
{
	struct buf sub = BUF_INIT;
	struct zset_score_iter *it;

	if (after && isnan(after->score)) {
		*err = -EINVAL;
		return NULL;
	}
	it = score_iter_open(ks, k, reverse, err);
	if (!it || !it->si)
		return it;
	if (!after) {
		score_iter_rewind(it);
		return it;
	}
	*err = score_sub(&sub, after->score, after->member, after->len);
	if (!*err)
		*err = score_iter_seek(it, sub.data, sub.len, false);
	buf_release(&sub);
	if (*err) {
		zset_score_iter_free(it);
		it = NULL;
	}
	return it;
}

/*
 * Is the current index record (score s of member m) the member's? 1 yes
 * (it->bad if the member record does not decode: logged, shown, read as
 * EIO), 0 no (skip it), or a negative errno. ZSCORE, ZREM and the
 * lookup of a name read the member record, so an index record without
 * it, or with another score, is a name no lookup finds: it is skipped
 * with a log line (docs/encoding.md section 20).
 */
static int index_check(struct zset_score_iter *it, const char *m, size_t mn)
{
	size_t kn;
	const char *key = store_iter_key(it->si, &kn);
	struct buf v = BUF_INIT;
	double now;
	int rc = score_get(it->ks, &it->k, it->version, m, mn, &now);
	it->bad = rc == -EUCLEAN;
	if (it->bad || (!rc && enc_double_to_sortable(now) == get_be64(key + it->prefix.len)))
		return 1;
	if (rc != -ENOENT && rc != 0)
		return rc;
	/* The iterator reads a snapshot and score_get the present: a
	 * writer may have come between. Under the key's lock, which every
	 * writer holds, both records are current. */
	ks_lock(it->ks, &it->k);
	rc = store_get(ks_store(it->ks), STORE_CF_ZSET_SCORE, key, kn, &v);
	int mrc = rc ? rc : score_get(it->ks, &it->k, it->version, m, mn, &now);
	ks_unlock(it->ks, &it->k);
	if (rc == -ENOENT) {
		rc = 0; /* removed or rescored since the snapshot: not listed */
	} else if (!rc && mrc == 0 &&
		   enc_double_to_sortable(now) == get_be64(key + it->prefix.len)) {
		rc = 1; /* a writer put it back as it was */
	} else if (!rc && (mrc == 0 || mrc == -ENOENT)) {
		ks_corrupt_entry(&it->k, m, mn,
				 mrc ? "a score-index record without its member record; not listed"
				     : "a score-index record at another score than its member "
				       "record's; not listed");
		rc = 0;
	} else if (!rc) {
		it->bad = mrc == -EUCLEAN;
		rc = it->bad ? 1 : mrc;
	}
	buf_release(&v);
	return rc;
}

int zset_score_iter_next(struct zset_score_iter *it, const char **m, size_t *mn, double *score)
{
	size_t kn, plen = it->prefix.len;
	const char *key;
	int rc = 0;

	if (!it->si)
		return 0;
	while (rc == 0) {
		/* The slice handed out last time stays valid until this move. */
		if (!store_iter_step(it->si, it->reverse, &it->started))
			return store_iter_status(it->si);
		key = store_iter_key(it->si, &kn);
		if (kn < plen + 8) {
			ks_corrupt(&it->k, "a score-index sub-key of %zu bytes; not listed",
				   kn - plen);
			continue;
		}
		*score = enc_sortable_to_double(get_be64(key + plen));
		*m = key + plen + 8;
		*mn = kn - plen - 8;
		rc = index_check(it, *m, *mn);
	}
	return rc;
}

bool zset_score_iter_bad(const struct zset_score_iter *it)
{
	return it->bad;
}

void zset_score_iter_free(struct zset_score_iter *it)
{
	if (!it)
		return;
	store_iter_free(it->si);
	buf_release(&it->prefix);
	buf_release(&it->name);
	free(it);
}

/* NEEDSWORK: O(rank), as Kvrocks's ZRANK: the score index has no counts. */
int zset_rank(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, bool reverse,
	      uint64_t *rank)
{
	struct buf raw = BUF_INIT, sub = BUF_INIT;
	struct zset_score_iter *it;
	struct enc_meta meta;
	double score = 0, es = 0;
	uint64_t before = 0;
	const char *em = NULL;
	size_t emn = 0;
	int rc;

	/* The score and the iterator's snapshot agree: both under the lock. */
	ks_lock(ks, k);
	it = score_iter_open_locked(ks, k, false, &raw, &meta, &rc);
	if (it && !it->si)
		rc = -ENOENT;
	if (!rc)
		rc = score_get(ks, k, meta.version, m, mn, &score);
	ks_unlock(ks, k);
	if (!rc)
		rc = score_sub(&sub, score, m, mn);
	if (rc)
		goto out;
	/* Count the entries before score|member. */
	score_iter_rewind(it);
	while ((rc = zset_score_iter_next(it, &em, &emn, &es)) == 1) {
		size_t kn;
		const char *key = store_iter_key(it->si, &kn);
		if (bytes_cmp(key + it->prefix.len, kn - it->prefix.len, sub.data, sub.len) >= 0)
			break;
		before++;
	}
	if (rc == 0) {
		rc = ks_corrupt(k, "a zset member without its score-index record");
	}
	if (rc == 1) {
		rc = 0;
		*rank = reverse ? it->size - 1 - before : before;
	}
out:
	zset_score_iter_free(it);
	buf_release(&raw);
	buf_release(&sub);
	return rc;
}

/* Redis's ZRANGE clamp of an inclusive [start, stop] against len. */
static bool range_clamp(int64_t start, int64_t stop, uint64_t len, uint64_t *from, uint64_t *to)
{
	if (len == 0 || len > INT64_MAX)
		return false;
	int64_t n = (int64_t)len;
	if (start < 0)
		start += n; /* no overflow: n >= 0 > start */
	if (stop < 0)
		stop += n;
	if (start < 0)
		start = 0;
	if (start > stop || start >= n)
		return false;
	if (stop >= n)
		stop = n - 1;
	*from = (uint64_t)start;
	*to = (uint64_t)stop;
	return true;
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

	if (!(it = score_iter_open(ks, k, reverse, &rc)))
		return rc;
	if (!it->si || !range_clamp(start, stop, it->size, &from, &to))
		goto out;
	score_iter_rewind(it);
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
	const char *m = NULL;
	size_t mn = 0;
	double score = 0;
	int rc;

	if (isnan(r->min) || isnan(r->max))
		return -EINVAL;
	if (r->min > r->max || (r->min == r->max && (r->minex || r->maxex)) || count == 0)
		return 0;
	if (!(it = score_iter_open(ks, k, reverse, &rc)))
		return rc;
	if (!it->si)
		goto out;
	/*
	 * Seek to the first candidate, then filter by value: -0.0 sorts
	 * below +0.0 although they are equal, so a bound of zero starts at
	 * the outer zero.
	 */
	if (!reverse) {
		put_be64(start, enc_double_to_sortable(r->min == 0 ? -0.0 : r->min));
		rc = score_iter_seek(it, start, 8, true);
	} else {
		uint64_t u = enc_double_to_sortable(r->max == 0 ? 0.0 : r->max);
		if (u == UINT64_MAX) {
			score_iter_rewind(it);
		} else {
			put_be64(start, u + 1);
			rc = score_iter_seek(it, start, 8, true);
		}
	}
	if (rc)
		goto out;
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
out:
	zset_score_iter_free(it);
	return rc;
}

/* ---- Member-order iteration ---------------------------------------- */

struct zset_member_iter {
	struct store_iter *si; /* NULL: nothing to iterate */
	size_t plen;	       /* sub-key prefix length */
	bool started;
	bool bad;	 /* the current score does not decode */
	struct buf name; /* ns | key: k points into it, for the log */
	struct ks_key k;
};

struct zset_member_iter *zset_member_iter_new(struct keyspace *ks, const struct ks_key *k,
					      const void *after, size_t alen, int *err)
{
	struct buf raw = BUF_INIT, prefix = BUF_INIT;
	struct zset_member_iter *it = calloc(1, sizeof(*it));
	struct enc_meta meta;
	int rc;

	if (!it) {
		rc = -ENOMEM;
		goto out;
	}
	buf_init(&it->name);
	rc = ks_meta_get(ks, k, KV_TYPE_ZSET, &raw, &meta);
	if (rc == -ENOENT) {
		rc = 0; /* a missing key iterates nothing */
		goto out;
	}
	if (!rc)
		rc = ks_sub_key(ks, k, meta.version, NULL, 0, &prefix);
	if (!rc)
		rc = ks_key_dup(k, &it->name, &it->k);
	if (rc)
		goto out;
	it->plen = prefix.len;
	if (!(it->si = version_iter(ks, STORE_CF_DEFAULT, &prefix))) {
		rc = -ENOMEM;
		goto out;
	}
	if (after && (rc = buf_add(&prefix, after, alen)))
		goto out;
	store_iter_seek(it->si, prefix.data, prefix.len);
	if (after && store_iter_valid(it->si)) {
		size_t kn;
		const char *key = store_iter_key(it->si, &kn);
		if (kn == prefix.len && memcmp(key, prefix.data, kn) == 0)
			store_iter_next(it->si); /* strictly after the cursor */
	}
out:
	if (rc) {
		zset_member_iter_free(it);
		it = NULL;
	}
	*err = rc;
	buf_release(&raw);
	buf_release(&prefix);
	return it;
}

int zset_member_iter_next(struct zset_member_iter *it, const char **m, size_t *mn, double *score)
{
	size_t kn, vn;
	const char *key, *val;

	if (!it->si)
		return 0;
	if (it->started && store_iter_valid(it->si))
		store_iter_next(it->si);
	it->started = true;
	if (!store_iter_valid(it->si))
		return store_iter_status(it->si);
	key = store_iter_key(it->si, &kn);
	val = store_iter_value(it->si, &vn);
	*m = key + it->plen;
	*mn = kn - it->plen;
	/* Shown all the same (its lookup answers, its read is EIO), so that
	 * rm and rm -r remove it. */
	it->bad = !score_decode(val, vn, score);
	if (it->bad)
		ks_corrupt_entry(&it->k, *m, *mn, "a zset score of %zu bytes that does not decode",
				 vn);
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
	store_iter_free(it->si);
	buf_release(&it->name);
	free(it);
}

/* ---- For t_convert --------------------------------------------------- */

int zset_batch_create(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
		      uint64_t expire_ms, const struct zset_member *ms, size_t n)
{
	struct enc_meta meta;
	int rc = 0;

	if (n == 0)
		return -EINVAL;
	ks_meta_new(ks, &meta, KV_TYPE_ZSET);
	meta.expire_ms = expire_ms;
	meta.size = n;
	for (size_t i = 0; i < n && !rc; i++) {
		if (isnan(ms[i].score))
			return -EINVAL;
		if (ms[i].len > ZSET_MEMBER_MAX)
			return -EFBIG;
		rc = batch_member(ks, b, k, meta.version, ms[i].member, ms[i].len, ms[i].score,
				  true);
	}
	if (!rc)
		rc = ks_batch_put_meta(ks, b, k, &meta, NULL, 0);
	return rc;
}
