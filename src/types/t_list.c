/*
 * t_list: the Redis list type (kvrocks-encoding.md 6.6). Metadata (type
 * 3) in the metadata CF with a 16-byte tail, head u64 BE | tail u64 BE;
 * one sub-key per element in the default CF,
 * ns|key_len|key|version|index u64 BE -> element bytes, for every index
 * in [head, tail). size = tail - head. A new list starts with head = tail
 * = 0x7FFFFFFFFFFFFFFF. Layer: types.
 *
 * Every mutation holds the key's lock from the metadata read to the one
 * batch write, so [head, tail) stays contiguous and size always equals
 * tail - head. Updates keep the stored metadata encoding (v0 stays v0)
 * and carry any bytes after head/tail along unchanged. Removing the last
 * element deletes the metadata record (as Kvrocks's LPOP/LREM/LTRIM do),
 * or with LIST_KEEP_EMPTY replaces it by an empty-collection record in
 * the same batch. Inserting or removing in the middle rewrites the
 * shorter side, as Kvrocks's LINSERT and LREM do.
 *
 * Every mutation is one ks_txn. Readers that combine the metadata with
 * elements hold the lock the same way (a transaction they never commit)
 * while they read the metadata and open their iterator: a RocksDB
 * iterator is a snapshot, so what they return is one consistent state.
 *
 * NEEDSWORK: like Kvrocks, inserting or removing in the middle rewrites
 * up to half the list in one batch, so `rm l/3` on a list of a million
 * elements costs a batch of up to 500,000 puts. A sparse index layout
 * would avoid it but would no longer be Kvrocks's.
 */
#include "types/t_list.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

/* A decoded list metadata record. m points into the transaction (or
 * at a caller's struct); bytes after head/tail (none in Kvrocks today)
 * are kept. */
struct list_meta {
	struct enc_meta *m;
	uint64_t head, tail;
	struct buf tail_rec; /* the new tail lm_stage hands to the commit */
};

static uint64_t lm_size(const struct list_meta *lm)
{
	return lm->tail - lm->head;
}

/* Decode head and tail from m's tail; -EUCLEAN (logged) when they do
 * not give its size. */
static int lm_decode(const struct ks_key *k, struct enc_meta *m, struct list_meta *lm)
{
	lm->m = m;
	buf_init(&lm->tail_rec);
	if (m->tail_len >= 16) {
		lm->head = get_be64(m->tail);
		lm->tail = get_be64(m->tail + 8);
		if (lm->tail >= lm->head && lm->tail - lm->head == m->size)
			return 0;
	}
	return ks_corrupt(
	    k, "list metadata of size %llu, %zu tail bytes: head and tail do not give it",
	    (unsigned long long)m->size, m->tail_len);
}

/* The list k of transaction t: 0, -ENOENT, -KV_EWRONGTYPE, -EUCLEAN,
 * -EIO. With create, a missing list is made (empty, head = tail =
 * LIST_INITIAL_INDEX) and *fresh says so. */
static int lm_open(struct ks_txn *t, const struct ks_key *k, bool create, struct list_meta *lm,
		   bool *fresh)
{
	struct enc_meta *m;
	int rc = create ? ks_txn_open(t, k, KV_TYPE_LIST, &m) : ks_txn_get(t, k, KV_TYPE_LIST, &m);
	buf_init(&lm->tail_rec);
	if (rc)
		return rc;
	if (fresh)
		*fresh = ks_txn_is_new(t, k);
	if (!ks_txn_is_new(t, k))
		return lm_decode(k, m, lm);
	lm->m = m;
	lm->head = lm->tail = LIST_INITIAL_INDEX;
	return 0;
}

/* Stage the metadata for the current head/tail, or, if the list is now
 * empty, its deletion (remembering an empty list with LIST_KEEP_EMPTY). */
static void lm_stage(struct ks_txn *t, const struct ks_key *k, struct list_meta *lm, unsigned flags)
{
	if (lm->head == lm->tail) {
		ks_txn_resize(t, k, -(int64_t)lm->m->size,
			      (flags & LIST_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
		return;
	}
	lm->m->size = lm_size(lm);
	buf_reset(&lm->tail_rec);
	int rc = buf_add_be64(&lm->tail_rec, lm->head);
	if (!rc)
		rc = buf_add_be64(&lm->tail_rec, lm->tail);
	if (!rc && lm->m->tail_len > 16)
		rc = buf_add(&lm->tail_rec, lm->m->tail + 16, lm->m->tail_len - 16);
	if (rc)
		ks_txn_fail(t, rc);
	else
		ks_txn_meta_put(t, k, lm->tail_rec.data, lm->tail_rec.len);
}

static void lm_release(struct list_meta *lm)
{
	buf_release(&lm->tail_rec);
}

/* The end of a list write: unless rc, stage the metadata (lm_stage) and
 * commit; then the new length in *newlen (may be NULL), lm released and
 * t ended. rc or what the commit returned. */
static int lm_finish(struct ks_txn *t, const struct ks_key *k, struct list_meta *lm, unsigned flags,
		     int rc, uint64_t *newlen)
{
	if (!rc) {
		lm_stage(t, k, lm, flags);
		rc = ks_txn_commit(t);
	}
	if (!rc && newlen)
		*newlen = lm_size(lm);
	lm_release(lm);
	return ks_txn_end(t, rc);
}

/* The sub-key bytes of raw index idx, in sub[8]. */
static const uint8_t *idx_sub(uint8_t sub[8], uint64_t idx)
{
	put_be64(sub, idx);
	return sub;
}

static void elem_put(struct ks_txn *t, const struct ks_key *k, uint64_t idx, const void *v,
		     size_t vn)
{
	uint8_t sub[8];
	ks_txn_sub_put(t, k, STORE_CF_DEFAULT, idx_sub(sub, idx), sizeof(sub), v, vn);
}

static void elem_del(struct ks_txn *t, const struct ks_key *k, uint64_t idx)
{
	uint8_t sub[8];
	ks_txn_sub_del(t, k, STORE_CF_DEFAULT, idx_sub(sub, idx), sizeof(sub));
}

/*
 * Report the elements with raw indexes [idx, end) of the list with head
 * `head` as missing: ONE line, naming the first one's position as its
 * file name (its entry) and its index. -EUCLEAN.
 */
static int holes_report(const struct ks_key *k, uint64_t head, uint64_t idx, uint64_t end)
{
	char name[24];
	int n = snprintf(name, sizeof(name), "%llu", (unsigned long long)(idx - head));
	if (end - idx > 1)
		return ks_corrupt_entry(k, name, (size_t)n,
					"list elements %llu to %llu are missing",
					(unsigned long long)idx, (unsigned long long)(end - 1));
	return ks_corrupt_entry(k, name, (size_t)n, "list element %llu is missing",
				(unsigned long long)idx);
}

static int elem_key(struct keyspace *ks, const struct ks_key *k, uint64_t version, uint64_t idx,
		    struct buf *out)
{
	uint8_t sub[8];
	buf_reset(out);
	return ks_sub_key(ks, k, version, idx_sub(sub, idx), sizeof(sub), out);
}

/* Read the element at raw index idx. A live index without an element is
 * corruption (logged, -EUCLEAN). */
static int elem_get(struct keyspace *ks, const struct ks_key *k, const struct list_meta *lm,
		    uint64_t idx, struct buf *out)
{
	uint8_t sub[8];
	int rc = ks_sub_get(ks, k, lm->m->version, STORE_CF_DEFAULT, idx_sub(sub, idx), sizeof(sub),
			    out);
	return rc == -ENOENT ? holes_report(k, lm->head, idx, idx + 1) : rc;
}

/*
 * An iterator over the elements with raw indexes in [lo, hi) of one
 * version; *plen = the length of the sub-key prefix (the index follows).
 * NULL with *rc set on failure.
 */
static struct store_iter *elem_iter(struct keyspace *ks, const struct ks_key *k, uint64_t version,
				    uint64_t lo, uint64_t hi, size_t *plen, int *rc)
{
	struct buf lower = BUF_INIT, upper = BUF_INIT;
	struct store_iter *it = NULL;

	*rc = elem_key(ks, k, version, lo, &lower);
	if (!*rc)
		*rc = elem_key(ks, k, version, hi, &upper);
	if (!*rc) {
		*plen = lower.len - 8;
		it = store_iter_new_at(ks_store(ks), k->snap, STORE_CF_DEFAULT, lower.data,
				       lower.len, upper.data, upper.len);
		if (!it)
			*rc = -ENOMEM;
	}
	buf_release(&lower);
	buf_release(&upper);
	return it;
}

/*
 * Bring the iterator, walking forward (else backward), to the next
 * record that names an index, skipping (and logging) records whose
 * sub-key is no 8-byte index: they name no position. 1 with *idx, 0 at
 * the end, or a store error.
 */
static int elem_seek(const struct ks_key *k, struct store_iter *it, size_t plen, bool forward,
		     uint64_t *idx)
{
	for (; store_iter_valid(it); forward ? store_iter_next(it) : store_iter_prev(it)) {
		size_t kn;
		const char *key = store_iter_key(it, &kn);
		if (kn == plen + 8) {
			*idx = get_be64(key + plen);
			return 1;
		}
		ks_corrupt_entry(
		    k, key + plen, kn - plen,
		    "a list sub-key of %zu bytes where an 8-byte index belongs; skipped",
		    kn - plen);
	}
	return store_iter_status(it);
}

/*
 * The iterator at the element with raw index `want` of the list with
 * head `head`, walking forward (else backward) from where it is: 0 when
 * it is there; else -EUCLEAN, the element missing (logged once).
 */
static int elem_at(const struct ks_key *k, struct store_iter *it, size_t plen, uint64_t head,
		   uint64_t want, bool forward)
{
	uint64_t idx;
	int rc = elem_seek(k, it, plen, forward, &idx);
	if (rc == 1 && idx == want)
		return 0;
	return rc < 0 ? rc : holes_report(k, head, want, want + 1);
}

/* Copy the elements with raw indexes [lo, hi) to index + delta (delta is
 * n or -n: a room of n indexes). Each moved element is put once; nothing
 * is deleted (the caller knows which end became free). A missing one is
 * -EUCLEAN. */
static int shift_stage(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
		       const struct list_meta *lm, uint64_t lo, uint64_t hi, int64_t delta)
{
	size_t plen;
	int rc = 0;
	struct store_iter *it;

	if (lo >= hi)
		return 0;
	it = elem_iter(ks, k, lm->m->version, lo, hi, &plen, &rc);
	if (!it)
		return rc;
	store_iter_seek_first(it);
	for (uint64_t want = lo; want < hi && !rc; want++) {
		size_t vn;
		if ((rc = elem_at(k, it, plen, lm->head, want, true)))
			break;
		const void *v = store_iter_value(it, &vn);
		elem_put(t, k, want + (uint64_t)delta, v, vn);
		store_iter_next(it);
	}
	store_iter_free(it);
	return rc;
}

/* Insert vals[0..n) at positions p .. p + n - 1 (0 <= p <= size), in
 * order, moving the shorter side by n once. */
static int insert_vals_stage(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
			     struct list_meta *lm, uint64_t p, const struct list_value *vals,
			     size_t n)
{
	uint64_t size = lm_size(lm), idx;
	int rc;

	if (size && p <= size - p) {
		/* Positions [0, p) move n indexes down; vals go just above. */
		if (lm->head < n)
			return -EOVERFLOW;
		rc = shift_stage(t, ks, k, lm, lm->head, lm->head + p, -(int64_t)n);
		lm->head -= n;
		idx = lm->head + p;
	} else {
		/* Positions [p, size) move n indexes up. */
		if (UINT64_MAX - lm->tail < n)
			return -EOVERFLOW;
		rc = shift_stage(t, ks, k, lm, lm->head + p, lm->tail, (int64_t)n);
		idx = lm->head + p;
		lm->tail += n;
	}
	for (size_t i = 0; i < n && !rc; i++)
		elem_put(t, k, idx + i, vals[i].data, vals[i].len);
	return rc;
}

/* Insert v at position p (0 <= p <= size), moving the shorter side. */
static int insert_stage(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
			struct list_meta *lm, uint64_t p, const void *v, size_t vn)
{
	struct list_value one = {v, vn};
	return insert_vals_stage(t, ks, k, lm, p, &one, 1);
}

/*
 * Remove the elements at positions d[0] < d[1] < ... < d[nd-1] (all <
 * size), closing the gaps by moving the shorter side as Kvrocks's LREM
 * does: either the elements before the last removed one move towards the
 * tail and head grows, or the elements after the first removed one move
 * towards the head and tail shrinks. The freed end indexes are deleted.
 *
 * A missing element (logged, once per run of them) is removed like any
 * other, and one that moves stays missing at its new index, so the list
 * can still be emptied by name (encoding.md section 20). A run of
 * missing elements costs one step, not one per position: the metadata's
 * size, not the records, sets its length.
 */
static int remove_stage(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
			struct list_meta *lm, const uint64_t *d, size_t nd)
{
	uint64_t size = lm_size(lm), lo = d[0], hi = d[nd - 1];
	bool fwd = !(hi <= size - 1 - lo); /* the later elements move down */
	/* Walk positions hi..0 (backward) or lo..size-1, packing kept ones
	 * at w. Before pos, every slot on the far side of w has been read. */
	uint64_t pos = fwd ? lo : hi, w = pos, left = fwd ? size - lo : hi + 1;
	size_t plen, di = fwd ? 0 : nd;
	struct store_iter *it;
	int rc = 0;

	if (nd == size) {
		for (uint64_t i = lm->head; i < lm->tail; i++)
			elem_del(t, k, i);
		lm->head = lm->tail;
		return 0;
	}
	it = fwd ? elem_iter(ks, k, lm->m->version, lm->head + lo, lm->tail, &plen, &rc)
		 : elem_iter(ks, k, lm->m->version, lm->head, lm->head + hi + 1, &plen, &rc);
	if (!it)
		return rc;
	if (fwd)
		store_iter_seek_first(it);
	else
		store_iter_seek_last(it);
	while (left > 0) {
		uint64_t idx, run = 1;
		if ((rc = elem_seek(k, it, plen, fwd, &idx)) < 0)
			goto out;
		bool present = rc == 1 && idx == lm->head + pos;
		if (!present) {
			/* Positions up to the next element (or to the end) are missing. */
			uint64_t next = rc == 0 ? (fwd ? size : 0) : idx - lm->head;
			run = fwd ? next - pos : (rc == 0 ? pos + 1 : pos - next);
			if (run > left)
				run = left;
			holes_report(k, lm->head, lm->head + (fwd ? pos : pos - run + 1),
				     lm->head + (fwd ? pos + run : pos + 1));
		}
		/* The removed positions among the run's; the kept ones go to w
		 * on, a hole where they are missing. Slots past the run's start
		 * are holes already: only those behind it need the delete. */
		uint64_t gone = 0;
		while (fwd ? (di < nd && d[di] < pos + run) : (di > 0 && d[di - 1] + run > pos)) {
			gone++;
			fwd ? di++ : di--;
		}
		uint64_t kept = run - gone;
		if (present && kept) {
			size_t vn;
			const void *v = store_iter_value(it, &vn);
			if (w != pos)
				elem_put(t, k, lm->head + w, v, vn);
		} else if (kept) {
			uint64_t real = fwd ? pos - w : w - pos; /* slots behind the run */
			for (uint64_t i = 0; i < kept && i < real; i++)
				elem_del(t, k, lm->head + (fwd ? w + i : w - i));
		}
		w = fwd ? w + kept : w - kept;
		if (present)
			fwd ? store_iter_next(it) : store_iter_prev(it);
		pos = fwd ? pos + run : pos - run;
		left -= run;
	}
	rc = 0;
	for (uint64_t i = 0; i < nd; i++)
		elem_del(t, k, fwd ? lm->tail - 1 - i : lm->head + i);
	if (fwd)
		lm->tail -= nd;
	else
		lm->head += nd;
out:
	store_iter_free(it);
	return rc;
}

/* A signed position against a size: 0 and *pos, or -ERANGE. */
static int pos_of(int64_t index, uint64_t size, uint64_t *pos)
{
	if (index < 0) {
		uint64_t back = (uint64_t)(-(index + 1)) + 1;
		if (back > size)
			return -ERANGE;
		*pos = size - back;
		return 0;
	}
	if ((uint64_t)index >= size)
		return -ERANGE;
	*pos = (uint64_t)index;
	return 0;
}

/* lm_open of an existing list, and the position of index in it. 0,
 * -ENOENT, -ERANGE, ... */
static int lm_open_at(struct ks_txn *t, const struct ks_key *k, int64_t index, struct list_meta *lm,
		      uint64_t *pos)
{
	int rc = lm_open(t, k, false, lm, NULL);
	return rc ? rc : pos_of(index, lm_size(lm), pos);
}

/* n >= 1 values, none over LIST_VALUE_MAX: 0, -EINVAL, -EFBIG. */
static int vals_check(const struct list_value *vals, size_t n)
{
	if (n == 0 || !vals)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (vals[i].len > LIST_VALUE_MAX)
			return -EFBIG;
	return 0;
}

/* The list a push goes to, made if missing. typed: a remembered empty
 * collection of another type is -KV_EWRONGTYPE, as a live key of another
 * type is (else it becomes the list). */
static int push_open(struct ks_txn *t, const struct ks_key *k, bool typed, struct list_meta *lm)
{
	struct ks_info info;
	if (!typed)
		return lm_open(t, k, true, lm, NULL);
	int rc = lm_open(t, k, false, lm, NULL);
	if (rc != -ENOENT)
		return rc;
	rc = ks_txn_lookup(t, k, &info); /* missing, or remembered empty */
	if (rc == 0 && info.type != KV_TYPE_LIST)
		return -KV_EWRONGTYPE;
	if (rc && rc != -ENOENT)
		return rc;
	return lm_open(t, k, true, lm, NULL);
}

static int push(struct keyspace *ks, const struct ks_key *k, enum list_where where,
		const struct list_value *vals, size_t n, bool typed, uint64_t *newlen)
{
	struct ks_txn t;
	struct list_meta lm;

	if (where != LIST_HEAD && where != LIST_TAIL)
		return -EINVAL;
	int rc = vals_check(vals, n);
	if (rc)
		return rc;
	ks_txn_begin(&t, ks, k);
	rc = push_open(&t, k, typed, &lm);
	if (!rc && (where == LIST_HEAD ? lm.head < n : UINT64_MAX - lm.tail < n))
		rc = -EOVERFLOW;
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t idx = where == LIST_HEAD ? --lm.head : lm.tail++;
		elem_put(&t, k, idx, vals[i].data, vals[i].len);
	}
	return lm_finish(&t, k, &lm, 0, rc, newlen);
}

int list_push(struct keyspace *ks, const struct ks_key *k, enum list_where where,
	      const struct list_value *vals, size_t n, uint64_t *newlen)
{
	return push(ks, k, where, vals, n, false, newlen);
}

int list_push_typed(struct keyspace *ks, const struct ks_key *k, enum list_where where,
		    const struct list_value *vals, size_t n, uint64_t *newlen)
{
	return push(ks, k, where, vals, n, true, newlen);
}

int list_pop(struct keyspace *ks, const struct ks_key *k, enum list_where where, unsigned flags,
	     struct buf *out)
{
	struct buf tmp = BUF_INIT;
	struct ks_txn t;
	struct list_meta lm;
	uint64_t idx = 0;

	if (where != LIST_HEAD && where != LIST_TAIL)
		return -EINVAL;
	ks_txn_begin(&t, ks, k);
	int rc = lm_open(&t, k, false, &lm, NULL);
	if (!rc) {
		idx = where == LIST_HEAD ? lm.head : lm.tail - 1;
		rc = elem_get(ks, k, &lm, idx, out ? out : &tmp);
	}
	if (!rc) {
		elem_del(&t, k, idx);
		if (where == LIST_HEAD)
			lm.head++;
		else
			lm.tail--;
	}
	buf_release(&tmp);
	return lm_finish(&t, k, &lm, flags, rc, NULL);
}

int list_index(struct keyspace *ks, const struct ks_key *k, int64_t index, struct buf *out)
{
	struct ks_txn t; /* a read under the lock: a concurrent pop
			  * cannot look like a missing element */
	struct list_meta lm;
	uint64_t pos = 0;

	ks_txn_begin_read(&t, ks, k);
	int rc = lm_open_at(&t, k, index, &lm, &pos);
	if (!rc)
		rc = elem_get(ks, k, &lm, lm.head + pos, out);
	lm_release(&lm);
	return ks_txn_end(&t, rc);
}

int list_set(struct keyspace *ks, const struct ks_key *k, int64_t index, const void *v, size_t vn)
{
	struct ks_txn t;
	struct list_meta lm;
	uint64_t pos = 0;

	if (vn > LIST_VALUE_MAX)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	int rc = lm_open_at(&t, k, index, &lm, &pos);
	if (!rc) {
		/* LSET reads nothing: a missing element is written anew. */
		elem_put(&t, k, lm.head + pos, v, vn);
		rc = ks_txn_commit(&t);
	}
	lm_release(&lm);
	return ks_txn_end(&t, rc);
}

/* Positions of the elements equal to v: up to `limit` (0 = all), from the
 * head or the tail; returned ascending in a malloc'd array. -EUCLEAN
 * (logged) if a missing element comes before the last one wanted. */
static int find_all(struct keyspace *ks, const struct ks_key *k, const struct list_meta *lm,
		    const void *v, size_t vn, bool from_tail, uint64_t limit, uint64_t **out,
		    size_t *nout)
{
	size_t plen, n = 0, cap = 0;
	uint64_t *d = NULL;
	int rc;
	uint64_t size = lm_size(lm), p = from_tail ? size - 1 : 0;
	struct store_iter *it = elem_iter(ks, k, lm->m->version, lm->head, lm->tail, &plen, &rc);

	if (!it)
		return rc;
	if (from_tail)
		store_iter_seek_last(it);
	else
		store_iter_seek_first(it);
	/* Each step reads a record or ends: the records bound the steps
	 * and the array. */
	for (;; from_tail ? store_iter_prev(it) : store_iter_next(it)) {
		size_t en;
		if ((rc = elem_at(k, it, plen, lm->head, lm->head + p, !from_tail)))
			goto fail;
		const void *e = store_iter_value(it, &en);
		if (en == vn && (vn == 0 || memcmp(e, v, vn) == 0)) {
			if (n == cap) {
				size_t nc = cap ? cap * 2 : 16;
				uint64_t *nd = realloc(d, nc * sizeof(*d));
				if (!nd) {
					rc = -ENOMEM;
					goto fail;
				}
				d = nd;
				cap = nc;
			}
			d[n++] = p;
			if (limit && n == limit)
				break;
		}
		if (from_tail ? p == 0 : p == size - 1)
			break;
		if (from_tail)
			p--;
		else
			p++;
	}
	if (from_tail) /* collected descending */
		for (size_t i = 0; i < n / 2; i++) {
			uint64_t t = d[i];
			d[i] = d[n - 1 - i];
			d[n - 1 - i] = t;
		}
	store_iter_free(it);
	*out = d;
	*nout = n;
	return 0;
fail:
	store_iter_free(it);
	free(d);
	return rc;
}

int list_insert(struct keyspace *ks, const struct ks_key *k, bool before, const void *pivot,
		size_t pn, const void *v, size_t vn, uint64_t *newlen)
{
	struct list_value one = {v, vn};
	return list_insert_vals(ks, k, before, pivot, pn, &one, 1, newlen);
}

int list_insert_at(struct keyspace *ks, const struct ks_key *k, int64_t index, const void *v,
		   size_t vn, uint64_t *newlen)
{
	struct ks_txn t;
	struct list_meta lm;
	bool fresh = false;
	uint64_t size, pos = 0;

	if (vn > LIST_VALUE_MAX)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	int rc = lm_open(&t, k, true, &lm, &fresh);
	if (!rc && fresh && index != 0)
		rc = -ERANGE; /* nothing to insert before */
	if (rc)
		goto out;
	size = lm_size(&lm);
	if (index < 0) {
		rc = pos_of(index, size, &pos);
	} else if ((uint64_t)index > size) {
		rc = -ERANGE;
	} else {
		pos = (uint64_t)index;
	}
	if (!rc)
		rc = insert_stage(&t, ks, k, &lm, pos, v, vn);
out:
	return lm_finish(&t, k, &lm, 0, rc, newlen);
}

int list_append_at(struct keyspace *ks, const struct ks_key *k, uint64_t pos, const void *v,
		   size_t vn, uint64_t *newlen)
{
	struct ks_txn t;
	struct list_meta lm;

	if (vn > LIST_VALUE_MAX)
		return -EFBIG;
	ks_txn_begin(&t, ks, k);
	int rc = lm_open(&t, k, true, &lm, NULL);
	if (!rc && lm_size(&lm) != pos)
		rc = lm_size(&lm) > pos ? -EEXIST : -ERANGE;
	else if (!rc && lm.tail == UINT64_MAX)
		rc = -EOVERFLOW;
	if (!rc)
		elem_put(&t, k, lm.tail++, v, vn);
	return lm_finish(&t, k, &lm, 0, rc, newlen);
}

int list_remove_at(struct keyspace *ks, const struct ks_key *k, int64_t index, unsigned flags,
		   struct buf *out)
{
	struct ks_txn t;
	struct list_meta lm;
	uint64_t pos = 0;

	ks_txn_begin(&t, ks, k);
	int rc = lm_open_at(&t, k, index, &lm, &pos);
	if (!rc && out)
		rc = elem_get(ks, k, &lm, lm.head + pos, out);
	if (!rc)
		rc = remove_stage(&t, ks, k, &lm, &pos, 1);
	return lm_finish(&t, k, &lm, flags, rc, NULL);
}

int list_rem(struct keyspace *ks, const struct ks_key *k, int64_t count, const void *v, size_t vn,
	     unsigned flags, uint64_t *removed)
{
	struct ks_txn t;
	struct list_meta lm;
	uint64_t *d = NULL;
	size_t nd = 0;
	uint64_t limit = count < 0 ? (uint64_t)(-(count + 1)) + 1 : (uint64_t)count;

	ks_txn_begin(&t, ks, k);
	int rc = lm_open(&t, k, false, &lm, NULL);
	if (!rc)
		rc = find_all(ks, k, &lm, v, vn, count < 0, limit, &d, &nd);
	if (!rc && nd > 0)
		rc = remove_stage(&t, ks, k, &lm, d, nd);
	if (!rc && nd > 0) {
		lm_stage(&t, k, &lm, flags);
		rc = ks_txn_commit(&t);
	}
	if (!rc && removed)
		*removed = nd;
	free(d);
	lm_release(&lm);
	return ks_txn_end(&t, rc);
}

/* Stage the deletion of the elements with raw indexes in [lo, hi): of
 * the records there, so that the work is bounded by what is stored, not
 * by a size the metadata may overstate. */
static int drop_stage(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
		      const struct list_meta *lm, uint64_t lo, uint64_t hi)
{
	size_t plen;
	uint64_t idx;
	int rc;
	struct store_iter *it;

	if (lo >= hi)
		return 0;
	if (!(it = elem_iter(ks, k, lm->m->version, lo, hi, &plen, &rc)))
		return rc;
	store_iter_seek_first(it);
	while ((rc = elem_seek(k, it, plen, true, &idx)) == 1) {
		elem_del(t, k, idx);
		store_iter_next(it);
	}
	store_iter_free(it);
	return rc;
}

int list_trim(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t stop,
	      unsigned flags)
{
	struct ks_txn t;
	struct list_meta lm;
	uint64_t from, to;

	ks_txn_begin(&t, ks, k);
	int rc = lm_open(&t, k, false, &lm, NULL);
	if (rc)
		goto out;
	if (!rank_range_clamp(start, stop, lm_size(&lm), &from, &to)) {
		/* Everything goes: like Kvrocks, drop the metadata only; the
		 * elements are unreachable garbage for compaction. */
		lm.head = lm.tail;
	} else {
		uint64_t keep_lo = lm.head + from, keep_hi = lm.head + to + 1;
		if (keep_lo == lm.head && keep_hi == lm.tail)
			goto out; /* nothing to trim */
		rc = drop_stage(&t, ks, k, &lm, lm.head, keep_lo);
		if (!rc)
			rc = drop_stage(&t, ks, k, &lm, keep_hi, lm.tail);
		lm.head = keep_lo;
		lm.tail = keep_hi;
	}
	if (!rc) {
		lm_stage(&t, k, &lm, flags);
		rc = ks_txn_commit(&t);
	}
out:
	lm_release(&lm);
	return ks_txn_end(&t, rc);
}

int list_len(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	struct list_meta lm;
	int rc = ks_meta_get(ks, k, KV_TYPE_LIST, &raw, &m);
	if (!rc)
		rc = lm_decode(k, &m, &lm);
	if (rc == 0) {
		*n = lm_size(&lm);
	} else if (rc == -ENOENT) {
		*n = 0;
		rc = 0;
	}
	buf_release(&raw);
	return rc;
}

/* ---- Iteration ----------------------------------------------------- */

struct list_iter {
	struct store_iter *si; /* NULL: nothing to iterate */
	size_t plen;	       /* sub-key prefix length */
	uint64_t head;	       /* raw index of position 0 */
	uint64_t want;	       /* raw index expected next */
	uint64_t len;	       /* the list's length in the snapshot */
	uint64_t hole_end;     /* [want, hole_end) are missing (reported) */
	bool started;
	bool held;	 /* the store iterator is on the element handed out last */
	struct buf name; /* ns | key: k points into it, for the log */
	struct ks_key k;
};

/*
 * Open an iterator under the key's lock, so the metadata and the
 * iterator's snapshot agree. ranged: Redis's LRANGE clamp of [start,
 * stop]; else from `start` (negative from the end, clamped to 0) to the
 * end. *to = the last position to return.
 */
static struct list_iter *iter_open(struct keyspace *ks, const struct ks_key *k, bool ranged,
				   int64_t start, int64_t stop, uint64_t *to, int *err)
{
	struct list_iter *it = calloc(1, sizeof(*it));
	struct ks_txn t; /* for the lock: nothing is written */
	struct list_meta lm;
	uint64_t size, from;
	int rc;

	if (!it) {
		*err = -ENOMEM;
		return NULL;
	}
	ks_txn_begin_read(&t, ks, k);
	rc = lm_open(&t, k, false, &lm, NULL);
	if (rc == -ENOENT) {
		rc = 0; /* a missing key iterates nothing */
		goto out;
	}
	if (rc)
		goto out;
	size = lm_size(&lm);
	it->len = size;
	if (ranged) {
		if (!rank_range_clamp(start, stop, size, &from, to))
			goto out;
	} else {
		if (start < 0) {
			uint64_t back = (uint64_t)(-(start + 1)) + 1;
			from = back > size ? 0 : size - back;
		} else {
			from = (uint64_t)start;
		}
		if (from >= size)
			goto out;
		*to = size - 1;
	}
	it->head = lm.head;
	it->want = lm.head + from;
	it->hole_end = it->want;
	if ((rc = ks_key_dup(k, &it->name, &it->k)))
		goto out;
	it->si = elem_iter(ks, k, lm.m->version, lm.head + from, lm.tail, &it->plen, &rc);
	if (it->si)
		store_iter_seek_first(it->si);
out:
	lm_release(&lm);
	ks_txn_end(&t, 0);
	if (rc) {
		list_iter_free(it);
		it = NULL;
	}
	*err = rc;
	return it;
}

struct list_iter *list_iter_new(struct keyspace *ks, const struct ks_key *k, int64_t start,
				int *err)
{
	uint64_t to;
	return iter_open(ks, k, false, start, 0, &to, err);
}

int list_iter_next(struct list_iter *it, uint64_t *pos, const char **v, size_t *vn)
{
	uint64_t idx;
	int rc;
	if (!it->si)
		return 0;
	/* The slices handed out last time stay valid until this move. */
	if (it->started) {
		if (it->held && store_iter_valid(it->si))
			store_iter_next(it->si);
		it->want++;
	}
	it->started = true;
	it->held = false;
	if (it->want - it->head >= it->len)
		return store_iter_status(it->si);
	*pos = it->want - it->head;
	*v = NULL;
	*vn = 0;
	if (it->want < it->hole_end)
		return 1; /* in a run of missing elements, reported */
	if ((rc = elem_seek(&it->k, it->si, it->plen, true, &idx)) < 0)
		return rc;
	if (rc == 1 && idx == it->want) {
		*v = store_iter_value(it->si, vn);
		it->held = true;
		return 1;
	}
	/* Missing up to the next element, or to the end. */
	it->hole_end = rc == 1 ? idx : it->head + it->len;
	holes_report(&it->k, it->head, it->want, it->hole_end);
	return 1;
}

uint64_t list_iter_len(const struct list_iter *it)
{
	return it->len;
}

void list_iter_free(struct list_iter *it)
{
	if (!it)
		return;
	store_iter_free(it->si);
	buf_release(&it->name);
	free(it);
}

int list_range(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t stop,
	       list_range_cb cb, void *arg)
{
	uint64_t to = 0, pos = 0;
	const char *v = NULL;
	size_t vn = 0;
	int rc;
	struct list_iter *it = iter_open(ks, k, true, start, stop, &to, &rc);

	if (!it)
		return rc;
	while ((rc = list_iter_next(it, &pos, &v, &vn)) == 1) {
		if (pos > to) {
			rc = 0;
			break;
		}
		if (!v) {
			rc = -EUCLEAN; /* a missing element, logged */
			break;
		}
		if ((rc = cb(arg, pos, v, vn)))
			break;
	}
	list_iter_free(it);
	return rc;
}

/* ---- For t_convert --------------------------------------------------- */

int list_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		    const struct list_value *vals, size_t n)
{
	uint8_t tail[16], sub[8];

	if (n == 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (vals[i].len > LIST_VALUE_MAX)
			return -EFBIG;
		put_be64(sub, LIST_INITIAL_INDEX + i);
		ks_txn_sub_put(t, k, STORE_CF_DEFAULT, sub, sizeof(sub), vals[i].data, vals[i].len);
	}
	m->size = n;
	put_be64(tail, LIST_INITIAL_INDEX);
	put_be64(tail + 8, LIST_INITIAL_INDEX + n);
	ks_txn_meta_put(t, k, tail, sizeof(tail));
	return ks_txn_commit(t);
}

int list_insert_vals(struct keyspace *ks, const struct ks_key *k, bool before, const void *pivot,
		     size_t pn, const struct list_value *vals, size_t n, uint64_t *newlen)
{
	struct ks_txn t;
	struct list_meta lm;
	uint64_t *pos = NULL;
	size_t found = 0;
	struct list_value *rev = NULL;

	int rc = vals_check(vals, n);
	if (rc)
		return rc;
	ks_txn_begin(&t, ks, k);
	rc = lm_open(&t, k, false, &lm, NULL);
	if (!rc)
		rc = find_all(ks, k, &lm, pivot, pn, false, 1, &pos, &found);
	if (!rc && found == 0)
		rc = -ESRCH;
	if (!rc && !before) {
		/* Each value right after the pivot in turn: the last first. */
		rev = malloc(n * sizeof(*rev));
		if (!rev)
			rc = -ENOMEM;
		for (size_t i = 0; i < n && rev; i++)
			rev[i] = vals[n - 1 - i];
	}
	if (!rc)
		rc = insert_vals_stage(&t, ks, k, &lm, before ? pos[0] : pos[0] + 1,
				       before ? vals : rev, n);
	free(rev);
	free(pos);
	return lm_finish(&t, k, &lm, 0, rc, newlen);
}

int list_move(struct keyspace *ks, const struct ks_key *src, const struct ks_key *dst,
	      enum list_where from, enum list_where to, unsigned flags, struct buf *out)
{
	struct buf tmp = BUF_INIT;
	struct ks_txn t;
	struct list_meta ls, ld;
	bool same;
	uint64_t idx = 0;

	if ((from != LIST_HEAD && from != LIST_TAIL) || (to != LIST_HEAD && to != LIST_TAIL))
		return -EINVAL;
	same = ks_key_eq(src, dst);
	/* One key twice is one key to the transaction: its calls get src. */
	const struct ks_key *dk = same ? src : dst;
	struct list_meta *d = same ? &ls : &ld;
	if (!out)
		out = &tmp;
	buf_init(&ld.tail_rec);
	ks_txn_begin2(&t, ks, src, dst);
	/* A missing source moves nothing, whatever the destination is (Redis
	 * answers nil before it looks at it). */
	int rc = lm_open(&t, src, false, &ls, NULL);
	if (!rc && !same)
		rc = lm_open(&t, dst, true, &ld, NULL);
	if (!rc) {
		idx = from == LIST_HEAD ? ls.head : ls.tail - 1;
		rc = elem_get(ks, src, &ls, idx, out);
	}
	if (!rc) {
		elem_del(&t, src, idx);
		if (from == LIST_HEAD)
			ls.head++;
		else
			ls.tail--;
		if (to == LIST_HEAD ? d->head == 0 : d->tail == UINT64_MAX)
			rc = -EOVERFLOW;
	}
	if (!rc) {
		elem_put(&t, dk, to == LIST_HEAD ? --d->head : d->tail++, out->data, out->len);
		lm_stage(&t, src, &ls, flags);
		if (!same)
			lm_stage(&t, dst, &ld, 0);
		rc = ks_txn_commit(&t);
	}
	lm_release(&ls);
	lm_release(&ld);
	buf_release(&tmp);
	return ks_txn_end(&t, rc);
}
