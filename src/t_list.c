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
 * Readers that combine the metadata with elements take the lock while
 * they read the metadata and open their iterator: a RocksDB iterator is
 * a snapshot, so what they return is one consistent state.
 *
 * NEEDSWORK: like Kvrocks, inserting or removing in the middle rewrites
 * up to half the list in one batch, so `rm l/3` on a list of a million
 * elements costs a batch of up to 500,000 puts. A sparse index layout
 * would avoid it but would no longer be Kvrocks's.
 */
#include "t_list.h"

#include "store.h"

#include <errno.h>
#include <stdlib.h>

/* A decoded list metadata record. m.tail points into the raw buffer it
 * was read from; bytes after head/tail (none in Kvrocks today) are kept. */
struct list_meta {
	struct enc_meta m;
	uint64_t head, tail;
};

static uint64_t lm_size(const struct list_meta *lm)
{
	return lm->tail - lm->head;
}

static int lmeta_get(struct keyspace *ks, const struct ks_key *k, struct buf *raw,
		     struct list_meta *lm)
{
	int rc = ks_meta_get(ks, k, KV_TYPE_LIST, raw, &lm->m);
	if (rc)
		return rc;
	if (lm->m.tail_len >= 16) {
		lm->head = get_be64(lm->m.tail);
		lm->tail = get_be64(lm->m.tail + 8);
		if (lm->tail >= lm->head && lm->tail - lm->head == lm->m.size)
			return 0;
	}
	return ks_corrupt(
	    k, "list metadata of size %llu, %zu tail bytes: head and tail do not give it",
	    (unsigned long long)lm->m.size, lm->m.tail_len);
}

static void lmeta_new(struct keyspace *ks, struct list_meta *lm)
{
	ks_meta_new(ks, &lm->m, KV_TYPE_LIST);
	lm->head = lm->tail = LIST_INITIAL_INDEX;
}

/* Put the metadata for the current head/tail, or, if the list is now
 * empty, delete it (remembering an empty list if asked). */
static int batch_finish(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			struct list_meta *lm, unsigned flags)
{
	struct buf tail = BUF_INIT;
	int rc;

	if (lm->head == lm->tail) {
		rc = ks_batch_del_meta(ks, b, k);
		if (!rc && (flags & LIST_KEEP_EMPTY))
			rc = ks_batch_empty_put(ks, b, k, KV_TYPE_LIST);
		return rc;
	}
	lm->m.size = lm_size(lm);
	rc = buf_add_be64(&tail, lm->head);
	if (!rc)
		rc = buf_add_be64(&tail, lm->tail);
	if (!rc && lm->m.tail_len > 16)
		rc = buf_add(&tail, lm->m.tail + 16, lm->m.tail_len - 16);
	if (!rc)
		rc = ks_batch_put_meta(ks, b, k, &lm->m, tail.data, tail.len);
	buf_release(&tail);
	return rc;
}

static int elem_key(struct keyspace *ks, const struct ks_key *k, uint64_t version, uint64_t idx,
		    struct buf *out)
{
	uint8_t sub[8];
	put_be64(sub, idx);
	buf_reset(out);
	return ks_sub_key(ks, k, version, sub, sizeof(sub), out);
}

/* Read the element at raw index idx. A live index without an element is
 * corruption. */
static int elem_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, uint64_t idx,
		    struct buf *out)
{
	struct buf sk = BUF_INIT;
	int rc = elem_key(ks, k, version, idx, &sk);
	if (!rc)
		rc = store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, out);
	if (rc == -ENOENT) {
		rc = ks_corrupt(k, "list element %llu is missing", (unsigned long long)idx);
	}
	buf_release(&sk);
	return rc;
}

static void batch_put_elem(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			   uint64_t version, uint64_t idx, const void *v, size_t vn, int *rc)
{
	struct buf sk = BUF_INIT;
	if (*rc)
		return;
	*rc = elem_key(ks, k, version, idx, &sk);
	if (!*rc)
		store_batch_put(b, STORE_CF_DEFAULT, sk.data, sk.len, v, vn);
	buf_release(&sk);
}

static void batch_del_elem(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			   uint64_t version, uint64_t idx, int *rc)
{
	struct buf sk = BUF_INIT;
	if (*rc)
		return;
	*rc = elem_key(ks, k, version, idx, &sk);
	if (!*rc)
		store_batch_delete(b, STORE_CF_DEFAULT, sk.data, sk.len);
	buf_release(&sk);
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
		it = store_iter_new(ks_store(ks), STORE_CF_DEFAULT, lower.data, lower.len,
				    upper.data, upper.len);
		if (!it)
			*rc = -ENOMEM;
	}
	buf_release(&lower);
	buf_release(&upper);
	return it;
}

/* The raw index of the iterator's current element, checked to be `want`
 * (the elements of [head, tail) have no gaps). */
static int iter_index_check(const struct ks_key *k, struct store_iter *it, size_t plen,
			    uint64_t want)
{
	size_t kn;
	const char *key = store_iter_key(it, &kn);
	if (kn != plen + 8 || get_be64(key + plen) != want)
		return ks_corrupt(k, "list element %llu is missing or misplaced",
				  (unsigned long long)want);
	return 0;
}

/*
 * Bring the iterator to the element with raw index `want`, walking
 * forward (else backward) past records whose sub-key is no 8-byte index
 * (they name no position: skipped, logged). *present: it is there; if
 * not, the element is missing (logged) and the iterator stays on the
 * next record for a later index. 0 or a store error.
 */
static int iter_at(const struct ks_key *k, struct store_iter *it, size_t plen, uint64_t want,
		   bool forward, bool *present)
{
	size_t kn = 0;
	const char *key = NULL;
	*present = false;
	for (; store_iter_valid(it); forward ? store_iter_next(it) : store_iter_prev(it)) {
		key = store_iter_key(it, &kn);
		if (kn == plen + 8)
			break;
		ks_corrupt_entry(
		    k, key + plen, kn - plen,
		    "a list sub-key of %zu bytes where an 8-byte index belongs; skipped",
		    kn - plen);
	}
	int rc = store_iter_status(it);
	if (!rc && store_iter_valid(it) && get_be64(key + plen) == want)
		*present = true;
	else if (!rc)
		ks_corrupt(k, "list element %llu is missing", (unsigned long long)want);
	return rc;
}

/* Copy the elements with raw indexes [lo, hi) to index + delta (delta is
 * +1 or -1) in batch b. Each moved element is put once; nothing is
 * deleted (the caller knows which end became free). */
static int batch_shift(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
		       uint64_t version, uint64_t lo, uint64_t hi, int delta)
{
	size_t plen;
	int rc;
	uint64_t want = lo;
	struct store_iter *it;

	if (lo >= hi)
		return 0;
	it = elem_iter(ks, k, version, lo, hi, &plen, &rc);
	if (!it)
		return rc;
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it), want++) {
		size_t vn;
		const void *v;
		if ((rc = iter_index_check(k, it, plen, want)))
			break;
		v = store_iter_value(it, &vn);
		batch_put_elem(ks, b, k, version, delta > 0 ? want + 1 : want - 1, v, vn, &rc);
		if (rc)
			break;
	}
	if (!rc)
		rc = store_iter_status(it);
	if (!rc && want != hi)
		rc = iter_index_check(k, it, plen, want); /* ran out early: a gap */
	store_iter_free(it);
	return rc;
}

/* Insert v at position p (0 <= p <= size), moving the shorter side. */
static int batch_insert_pos(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			    struct list_meta *lm, uint64_t p, const void *v, size_t vn)
{
	uint64_t size = lm_size(lm), idx;
	int rc;

	if (size && p <= size - p) {
		/* Positions [0, p) move one index down; v goes just above. */
		if (lm->head == 0)
			return -EOVERFLOW;
		rc = batch_shift(ks, b, k, lm->m.version, lm->head, lm->head + p, -1);
		idx = lm->head + p - 1;
		lm->head--;
	} else {
		/* Positions [p, size) move one index up. */
		if (lm->tail == UINT64_MAX)
			return -EOVERFLOW;
		rc = batch_shift(ks, b, k, lm->m.version, lm->head + p, lm->tail, +1);
		idx = lm->head + p;
		lm->tail++;
	}
	batch_put_elem(ks, b, k, lm->m.version, idx, v, vn, &rc);
	return rc;
}

/*
 * Remove the elements at positions d[0] < d[1] < ... < d[nd-1] (all <
 * size), closing the gaps by moving the shorter side as Kvrocks's LREM
 * does: either the elements before the last removed one move towards the
 * tail and head grows, or the elements after the first removed one move
 * towards the head and tail shrinks. The freed end indexes are deleted.
 */
static int batch_remove_pos(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			    struct list_meta *lm, const uint64_t *d, size_t nd)
{
	uint64_t size = lm_size(lm), lo = d[0], hi = d[nd - 1], ver = lm->m.version;
	bool to_tail = hi <= size - 1 - lo;
	/* Walk positions hi..0 (to_tail) or lo..size-1, packing kept ones. */
	uint64_t first = to_tail ? hi : lo, steps = to_tail ? hi + 1 : size - lo;
	uint64_t pos = first, w = first, walked = 0;
	size_t plen, di = to_tail ? nd : 0;
	struct store_iter *it;
	int rc = 0;

	if (nd == size) {
		for (uint64_t i = lm->head; i < lm->tail && !rc; i++)
			batch_del_elem(ks, b, k, ver, i, &rc);
		lm->head = lm->tail;
		return rc;
	}
	it = to_tail ? elem_iter(ks, k, ver, lm->head, lm->head + hi + 1, &plen, &rc)
		     : elem_iter(ks, k, ver, lm->head + lo, lm->tail, &plen, &rc);
	if (!it)
		return rc;
	if (to_tail)
		store_iter_seek_last(it);
	else
		store_iter_seek_first(it);
	/* A missing element (logged) is removed like any other, and one
	 * that moves stays missing at its new index: the list can still be
	 * emptied by name (encoding.md section 20). */
	while (walked < steps) {
		bool present;
		if ((rc = iter_at(k, it, plen, lm->head + pos, !to_tail, &present)))
			goto out;
		if (to_tail && di > 0 && d[di - 1] == pos) {
			di--;
		} else if (!to_tail && di < nd && d[di] == pos) {
			di++;
		} else {
			size_t vn;
			const void *v = present ? store_iter_value(it, &vn) : NULL;
			if (w != pos && present)
				batch_put_elem(ks, b, k, ver, lm->head + w, v, vn, &rc);
			else if (w != pos)
				batch_del_elem(ks, b, k, ver, lm->head + w, &rc);
			if (rc)
				goto out;
			if (to_tail)
				w--;
			else
				w++;
		}
		walked++;
		if (present && to_tail)
			store_iter_prev(it);
		else if (present)
			store_iter_next(it);
		if (to_tail)
			pos--;
		else
			pos++;
	}
	if ((rc = store_iter_status(it)))
		goto out;
	if (di != (to_tail ? 0 : nd)) {
		rc = ks_corrupt(k, "list elements missing");
		goto out;
	}
	for (uint64_t i = 0; i < nd && !rc; i++)
		batch_del_elem(ks, b, k, ver, to_tail ? lm->head + i : lm->tail - 1 - i, &rc);
	if (to_tail)
		lm->head += nd;
	else
		lm->tail -= nd;
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

/* Redis's LRANGE/LTRIM clamp of an inclusive [start, stop] against len.
 * Returns false for an empty range. */
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

int list_push(struct keyspace *ks, const struct ks_key *k, enum list_where where,
	      const struct list_value *vals, size_t n, uint64_t *newlen)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct list_meta lm;
	bool fresh = false;
	int rc;

	if (n == 0 || !vals || (where != LIST_HEAD && where != LIST_TAIL))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (vals[i].len > LIST_VALUE_MAX)
			return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (rc == -ENOENT) {
		lmeta_new(ks, &lm);
		fresh = true;
		rc = 0;
	}
	if (rc)
		goto out;
	if (where == LIST_HEAD ? lm.head < n : UINT64_MAX - lm.tail < n) {
		rc = -EOVERFLOW;
		goto out;
	}
	for (size_t i = 0; i < n && !rc; i++) {
		uint64_t idx = where == LIST_HEAD ? --lm.head : lm.tail++;
		batch_put_elem(ks, b, k, lm.m.version, idx, vals[i].data, vals[i].len, &rc);
	}
	if (!rc)
		rc = batch_finish(ks, b, k, &lm, 0);
	if (!rc && fresh)
		rc = ks_batch_empty_del(ks, b, k);
	if (!rc)
		rc = ks_write(ks, b);
	if (!rc && newlen)
		*newlen = lm_size(&lm);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

int list_pop(struct keyspace *ks, const struct ks_key *k, enum list_where where, unsigned flags,
	     struct buf *out)
{
	struct buf raw = BUF_INIT, tmp = BUF_INIT;
	struct store_batch *b = NULL;
	struct list_meta lm;
	uint64_t idx;
	int rc;

	if (where != LIST_HEAD && where != LIST_TAIL)
		return -EINVAL;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (rc)
		goto out;
	idx = where == LIST_HEAD ? lm.head : lm.tail - 1;
	rc = elem_get(ks, k, lm.m.version, idx, out ? out : &tmp);
	batch_del_elem(ks, b, k, lm.m.version, idx, &rc);
	if (rc)
		goto out;
	if (where == LIST_HEAD)
		lm.head++;
	else
		lm.tail--;
	rc = batch_finish(ks, b, k, &lm, flags);
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&tmp);
	return rc;
}

int list_index(struct keyspace *ks, const struct ks_key *k, int64_t index, struct buf *out)
{
	struct buf raw = BUF_INIT;
	struct list_meta lm;
	uint64_t pos = 0;
	int rc;

	/* Locked so a concurrent pop cannot look like a missing element. */
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (!rc)
		rc = pos_of(index, lm_size(&lm), &pos);
	if (!rc)
		rc = elem_get(ks, k, lm.m.version, lm.head + pos, out);
	ks_unlock(ks, k);
	buf_release(&raw);
	return rc;
}

int list_set(struct keyspace *ks, const struct ks_key *k, int64_t index, const void *v, size_t vn)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct list_meta lm;
	uint64_t pos = 0;
	int rc;

	if (vn > LIST_VALUE_MAX)
		return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (!rc)
		rc = pos_of(index, lm_size(&lm), &pos);
	if (!rc)
		batch_put_elem(ks, b, k, lm.m.version, lm.head + pos, v, vn, &rc);
	if (!rc)
		rc = ks_write(ks, b);
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

/* Position of the first element equal to v, scanning from the head.
 * 0 and *pos, -ESRCH if there is none. */
static int find_value(struct keyspace *ks, const struct ks_key *k, const struct list_meta *lm,
		      const void *v, size_t vn, uint64_t *pos)
{
	size_t plen;
	int rc;
	uint64_t p = 0;
	struct store_iter *it = elem_iter(ks, k, lm->m.version, lm->head, lm->tail, &plen, &rc);

	if (!it)
		return rc;
	rc = -ESRCH;
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it), p++) {
		size_t en;
		const void *e = store_iter_value(it, &en);
		if (en == vn && (vn == 0 || memcmp(e, v, vn) == 0)) {
			int crc = iter_index_check(k, it, plen, lm->head + p);
			rc = crc ? crc : 0;
			*pos = p;
			break;
		}
	}
	if (rc == -ESRCH && store_iter_status(it))
		rc = store_iter_status(it);
	store_iter_free(it);
	return rc;
}

int list_insert(struct keyspace *ks, const struct ks_key *k, bool before, const void *pivot,
		size_t pn, const void *v, size_t vn, uint64_t *newlen)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct list_meta lm;
	uint64_t pos = 0;
	int rc;

	if (vn > LIST_VALUE_MAX)
		return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (!rc)
		rc = find_value(ks, k, &lm, pivot, pn, &pos);
	if (!rc)
		rc = batch_insert_pos(ks, b, k, &lm, before ? pos : pos + 1, v, vn);
	if (!rc)
		rc = batch_finish(ks, b, k, &lm, 0);
	if (!rc)
		rc = ks_write(ks, b);
	if (!rc && newlen)
		*newlen = lm_size(&lm);
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

int list_insert_at(struct keyspace *ks, const struct ks_key *k, int64_t index, const void *v,
		   size_t vn, uint64_t *newlen)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct list_meta lm;
	bool fresh = false;
	uint64_t size, pos = 0;
	int rc;

	if (vn > LIST_VALUE_MAX)
		return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (rc == -ENOENT && index == 0) {
		lmeta_new(ks, &lm);
		fresh = true;
		rc = 0;
	} else if (rc == -ENOENT) {
		rc = -ERANGE; /* nothing to insert before */
	}
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
		rc = batch_insert_pos(ks, b, k, &lm, pos, v, vn);
	if (!rc)
		rc = batch_finish(ks, b, k, &lm, 0);
	if (!rc && fresh)
		rc = ks_batch_empty_del(ks, b, k);
	if (!rc)
		rc = ks_write(ks, b);
	if (!rc && newlen)
		*newlen = lm_size(&lm);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

int list_append_at(struct keyspace *ks, const struct ks_key *k, uint64_t pos, const void *v,
		   size_t vn, uint64_t *newlen)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct list_meta lm;
	bool fresh = false;
	int rc;

	if (vn > LIST_VALUE_MAX)
		return -EFBIG;
	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (rc == -ENOENT) {
		lmeta_new(ks, &lm);
		fresh = true;
		rc = 0;
	}
	if (rc)
		goto out;
	if (lm_size(&lm) != pos) {
		rc = lm_size(&lm) > pos ? -EEXIST : -ERANGE;
		goto out;
	}
	if (lm.tail == UINT64_MAX) {
		rc = -EOVERFLOW;
		goto out;
	}
	batch_put_elem(ks, b, k, lm.m.version, lm.tail++, v, vn, &rc);
	if (!rc)
		rc = batch_finish(ks, b, k, &lm, 0);
	if (!rc && fresh)
		rc = ks_batch_empty_del(ks, b, k);
	if (!rc)
		rc = ks_write(ks, b);
	if (!rc && newlen)
		*newlen = lm_size(&lm);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

int list_remove_at(struct keyspace *ks, const struct ks_key *k, int64_t index, unsigned flags,
		   struct buf *out)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct list_meta lm;
	uint64_t pos = 0;
	int rc;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (!rc)
		rc = pos_of(index, lm_size(&lm), &pos);
	if (!rc && out)
		rc = elem_get(ks, k, lm.m.version, lm.head + pos, out);
	if (!rc)
		rc = batch_remove_pos(ks, b, k, &lm, &pos, 1);
	if (!rc)
		rc = batch_finish(ks, b, k, &lm, flags);
	if (!rc)
		rc = ks_write(ks, b);
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

/* Positions of the elements equal to v: up to `limit` (0 = all), from the
 * head or the tail; returned ascending in a malloc'd array. */
static int find_all(struct keyspace *ks, const struct ks_key *k, const struct list_meta *lm,
		    const void *v, size_t vn, bool from_tail, uint64_t limit, uint64_t **out,
		    size_t *nout)
{
	size_t plen, n = 0, cap = 0;
	uint64_t *d = NULL;
	int rc;
	uint64_t size = lm_size(lm), p = from_tail ? size - 1 : 0;
	struct store_iter *it = elem_iter(ks, k, lm->m.version, lm->head, lm->tail, &plen, &rc);

	if (!it)
		return rc;
	if (from_tail)
		store_iter_seek_last(it);
	else
		store_iter_seek_first(it);
	for (; store_iter_valid(it); from_tail ? store_iter_prev(it) : store_iter_next(it)) {
		size_t en;
		const void *e = store_iter_value(it, &en);
		if ((rc = iter_index_check(k, it, plen, lm->head + p)))
			goto fail;
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
	if ((rc = store_iter_status(it)))
		goto fail;
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

int list_rem(struct keyspace *ks, const struct ks_key *k, int64_t count, const void *v, size_t vn,
	     unsigned flags, uint64_t *removed)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct list_meta lm;
	uint64_t *d = NULL;
	size_t nd = 0;
	uint64_t limit = count < 0 ? (uint64_t)(-(count + 1)) + 1 : (uint64_t)count;
	int rc;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (!rc)
		rc = find_all(ks, k, &lm, v, vn, count < 0, limit, &d, &nd);
	if (rc || nd == 0)
		goto out;
	rc = batch_remove_pos(ks, b, k, &lm, d, nd);
	if (!rc)
		rc = batch_finish(ks, b, k, &lm, flags);
	if (!rc)
		rc = ks_write(ks, b);
out:
	if (!rc && removed)
		*removed = nd;
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	free(d);
	return rc;
}

int list_trim(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t stop,
	      unsigned flags)
{
	struct buf raw = BUF_INIT;
	struct store_batch *b = NULL;
	struct list_meta lm;
	uint64_t from, to, ver;
	int rc;

	if (!(b = store_batch_new(ks_store(ks))))
		return -ENOMEM;
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (rc)
		goto out;
	ver = lm.m.version;
	if (!range_clamp(start, stop, lm_size(&lm), &from, &to)) {
		/* Everything goes: like Kvrocks, drop the metadata only; the
		 * elements are unreachable garbage for compaction. */
		lm.head = lm.tail;
	} else {
		uint64_t keep_lo = lm.head + from, keep_hi = lm.head + to + 1;
		if (keep_lo == lm.head && keep_hi == lm.tail)
			goto out; /* nothing to trim */
		for (uint64_t i = lm.head; i < keep_lo && !rc; i++)
			batch_del_elem(ks, b, k, ver, i, &rc);
		for (uint64_t i = keep_hi; i < lm.tail && !rc; i++)
			batch_del_elem(ks, b, k, ver, i, &rc);
		lm.head = keep_lo;
		lm.tail = keep_hi;
	}
	if (!rc)
		rc = batch_finish(ks, b, k, &lm, flags);
	if (!rc)
		rc = ks_write(ks, b);
out:
	ks_unlock(ks, k);
	store_batch_free(b);
	buf_release(&raw);
	return rc;
}

int list_len(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	struct buf raw = BUF_INIT;
	struct list_meta lm;
	int rc = lmeta_get(ks, k, &raw, &lm);
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
	struct buf raw = BUF_INIT;
	struct list_iter *it = calloc(1, sizeof(*it));
	struct list_meta lm;
	uint64_t size, from;
	int rc;

	if (!it) {
		*err = -ENOMEM;
		return NULL;
	}
	ks_lock(ks, k);
	rc = lmeta_get(ks, k, &raw, &lm);
	if (rc == -ENOENT) {
		rc = 0; /* a missing key iterates nothing */
		goto out;
	}
	if (rc)
		goto out;
	size = lm_size(&lm);
	it->len = size;
	if (ranged) {
		if (!range_clamp(start, stop, size, &from, to))
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
	if ((rc = ks_key_dup(k, &it->name, &it->k)))
		goto out;
	it->si = elem_iter(ks, k, lm.m.version, lm.head + from, lm.tail, &it->plen, &rc);
	if (it->si)
		store_iter_seek_first(it->si);
out:
	ks_unlock(ks, k);
	buf_release(&raw);
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
	bool present;
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
	if ((rc = iter_at(&it->k, it->si, it->plen, it->want, true, &present)))
		return rc;
	*pos = it->want - it->head;
	*v = NULL;
	*vn = 0;
	if (present) {
		*v = store_iter_value(it->si, vn);
		it->held = true;
	}
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

int list_batch_create(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
		      uint64_t expire_ms, const struct list_value *vals, size_t n)
{
	struct list_meta lm;
	int rc = 0;

	if (n == 0)
		return -EINVAL;
	lmeta_new(ks, &lm);
	lm.m.expire_ms = expire_ms;
	for (size_t i = 0; i < n && !rc; i++) {
		if (vals[i].len > LIST_VALUE_MAX)
			return -EFBIG;
		batch_put_elem(ks, b, k, lm.m.version, lm.tail++, vals[i].data, vals[i].len, &rc);
	}
	if (!rc)
		rc = batch_finish(ks, b, k, &lm, 0);
	return rc;
}
