/*
 * t_list: the Redis list type (LPUSH/RPUSH, LPOP/RPOP, LMOVE, LINDEX, LSET,
 * LINSERT, LREM, LRANGE, LTRIM, LLEN) plus insert/remove at a position
 * and an in-order iterator, which the file system needs.
 * Layout (kvrocks-encoding.md 6.6): metadata tail = head u64 BE | tail
 * u64 BE, live elements at sub-keys = index u64 BE in [head, tail),
 * size = tail - head. Layer: types.
 *
 * Positions are 0-based from the head; where a verb takes a signed
 * position, -1 is the last element (Redis's rule). Elements are binary.
 * All verbs return 0 (or a documented count) or a negative errno:
 * -ENOENT (no such key), -KV_EWRONGTYPE (another type), -ERANGE (position
 * out of range), -EINVAL (bad argument), -EFBIG (element over
 * LIST_VALUE_MAX), -EOVERFLOW (head/tail would wrap), -EUCLEAN (corrupt
 * metadata or a missing element), -EROFS, -ENOMEM, -EIO.
 */
#ifndef KVFS_T_LIST_H
#define KVFS_T_LIST_H

#include "keyspace/keyspace.h"

/* When the last element goes, remember the key as an empty list (in the
 * same batch) instead of letting it vanish. */
#define LIST_KEEP_EMPTY 0x1

/* Kvrocks's initial head and tail: UINT64_MAX / 2. The first RPUSH
 * writes index 0x7FFFFFFFFFFFFFFF, the first LPUSH 0x7FFFFFFFFFFFFFFE. */
#define LIST_INITIAL_INDEX 0x7fffffffffffffffull

/* Largest element: Redis's proto-max-bulk-len, as STRING_MAX. */
#define LIST_VALUE_MAX (512ull << 20)

enum list_where { LIST_HEAD = 0, LIST_TAIL = 1 };

/* One element for list_push: borrowed bytes. */
struct list_value {
	const void *data;
	size_t len;
};

/* LPUSH (LIST_HEAD) / RPUSH (LIST_TAIL) of n >= 1 values, in order (so
 * LPUSH a b leaves b first). Creates the key and drops its empty-record
 * in the same batch. *newlen (may be NULL) = the new length. -EINVAL if
 * n == 0. */
int list_push(struct keyspace *ks, const struct ks_key *k, enum list_where where,
	      const struct list_value *vals, size_t n, uint64_t *newlen);
/* list_push for a key named by a user who asked for a list without
 * knowing what is there (`echo x >> 'KEY:rpush'`): a remembered empty
 * collection of another type (an empty hash, set, ...) is -KV_EWRONGTYPE,
 * as a live key of another type is, and stays as it was; list_push makes
 * it the list (a directory whose type is list already). A missing key or
 * a remembered empty list is made a list in the push's batch. */
int list_push_typed(struct keyspace *ks, const struct ks_key *k, enum list_where where,
		    const struct list_value *vals, size_t n, uint64_t *newlen);
/* LPOP / RPOP of one element into out (may be NULL). flags:
 * LIST_KEEP_EMPTY. -ENOENT if the key is missing. */
int list_pop(struct keyspace *ks, const struct ks_key *k, enum list_where where, unsigned flags,
	     struct buf *out);
/* LINDEX. -ENOENT (no key), -ERANGE (no element at that position). */
int list_index(struct keyspace *ks, const struct ks_key *k, int64_t index, struct buf *out);
/* LSET. -ENOENT (no key), -ERANGE. It reads no element: a missing one
 * is written anew. */
int list_set(struct keyspace *ks, const struct ks_key *k, int64_t index, const void *v, size_t vn);
/* LINSERT BEFORE (before = true) / AFTER the first element equal to
 * pivot. Shifts whichever side is shorter, as Kvrocks does. *newlen (may
 * be NULL) = the new length. -ENOENT (no key), -ESRCH (no such pivot;
 * Redis replies -1). */
int list_insert(struct keyspace *ks, const struct ks_key *k, bool before, const void *pivot,
		size_t pn, const void *v, size_t vn, uint64_t *newlen);
/* Insert v so that it ends up at position `index` (0 <= index <= length;
 * index == length appends; a negative index counts from the end as in
 * Python's list.insert, -1 = before the last). The shorter side moves.
 * A missing key is created by index 0 (as RPUSH would) and is -ERANGE
 * for any other index. -ERANGE out of range. */
int list_insert_at(struct keyspace *ks, const struct ks_key *k, int64_t index, const void *v,
		   size_t vn, uint64_t *newlen);
/* Append v only if the list's length is exactly `pos` (so it becomes
 * position pos), in one batch: what creating file `pos` of a list needs,
 * without racing another appender. A missing key is created by pos 0.
 * -EEXIST if the length is greater (position pos exists), -ERANGE if it
 * is smaller. *newlen (may be NULL) = the new length. */
int list_append_at(struct keyspace *ks, const struct ks_key *k, uint64_t pos, const void *v,
		   size_t vn, uint64_t *newlen);
/* Remove the element at `index` (negatives from the end); the later
 * elements move down one position. Internally the shorter side is moved
 * so [head, tail) stays contiguous. out (may be NULL) = the removed
 * element. flags: LIST_KEEP_EMPTY. -ENOENT (no key), -ERANGE. */
int list_remove_at(struct keyspace *ks, const struct ks_key *k, int64_t index, unsigned flags,
		   struct buf *out);
/* LREM: remove up to |count| elements equal to v, from the head (count >
 * 0), the tail (count < 0) or all (count == 0). *removed (may be NULL) =
 * how many went (0 is not an error). flags: LIST_KEEP_EMPTY. -ENOENT if
 * the key is missing. */
int list_rem(struct keyspace *ks, const struct ks_key *k, int64_t count, const void *v, size_t vn,
	     unsigned flags, uint64_t *removed);
/* LTRIM with Redis's inclusive, possibly negative, start/stop. Trimming
 * everything deletes the key (or keeps it as an empty list with
 * LIST_KEEP_EMPTY). -ENOENT if the key is missing. */
int list_trim(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t stop,
	      unsigned flags);
/* LLEN: a missing key has length 0. */
int list_len(struct keyspace *ks, const struct ks_key *k, uint64_t *n);

/*
 * LRANGE with Redis's inclusive, possibly negative, start/stop: cb is
 * called for each element in order with its position and borrowed bytes
 * (valid during the call). A non-zero return from cb stops the range and
 * is returned. A missing key calls nothing and returns 0. The elements
 * come from one consistent snapshot.
 */
typedef int (*list_range_cb)(void *arg, uint64_t pos, const char *v, size_t vn);
int list_range(struct keyspace *ks, const struct ks_key *k, int64_t start, int64_t stop,
	       list_range_cb cb, void *arg);

/*
 * In-order iteration from position `start` (negative: from the end,
 * clamped to 0), over one consistent snapshot taken at list_iter_new. A
 * missing key iterates nothing; another type gives NULL and
 * -KV_EWRONGTYPE in *err. next() returns 1 with the position and a
 * borrowed value (valid until the next call), 0 at the end, or a
 * negative errno. A position whose element record is missing (corrupt,
 * logged once per run of them) gives 1 with *v NULL and *vn 0; records
 * whose sub-key is no 8-byte index are skipped (logged). Free with
 * list_iter_free.
 */
struct list_iter;
struct list_iter *list_iter_new(struct keyspace *ks, const struct ks_key *k, int64_t start,
				int *err);
int list_iter_next(struct list_iter *it, uint64_t *pos, const char **v, size_t *vn);
/* The length of the list in the iterator's snapshot (0 for a missing key). */
uint64_t list_iter_len(const struct list_iter *it);
void list_iter_free(struct list_iter *it);

/* LINSERT of n >= 1 values, one after the other, in one batch: the
 * result of LINSERT k BEFORE|AFTER pivot vals[i] for i = 0 .. n - 1, so
 * it does not matter how values are split into calls: BEFORE leaves them
 * in order right before the first element equal to pivot (a b p), AFTER
 * in reverse order right after it (p b a), as LPUSH does. *newlen (may
 * be NULL) = the new length. -ENOENT (no key), -ESRCH (no such pivot;
 * nothing inserted), -EINVAL (n == 0), -EFBIG. */
int list_insert_vals(struct keyspace *ks, const struct ks_key *k, bool before, const void *pivot,
		     size_t pn, const struct list_value *vals, size_t n, uint64_t *newlen);
/*
 * LMOVE: pop one element from the `from` end of src and push it onto the
 * `to` end of dst, both keys locked (ks_txn_begin2) and written in one
 * batch; dst is made if missing; src == dst rotates (or, from == to,
 * leaves the list as it was). out (may be NULL) = the element. flags
 * (LIST_KEEP_EMPTY) apply to src losing its last element. -ENOENT (src
 * missing or empty: nothing changes, dst is not made), -KV_EWRONGTYPE
 * (either key), -EINVAL, -EOVERFLOW.
 */
int list_move(struct keyspace *ks, const struct ks_key *src, const struct ks_key *dst,
	      enum list_where from, enum list_where to, unsigned flags, struct buf *out);

/* For t_convert: k, read in transaction t and renewed there as a list
 * (ks_txn_renew; m its metadata), gets n >= 1 elements, head at
 * LIST_INITIAL_INDEX; then t commits. 0, what ks_txn_commit returns, or
 * -EINVAL/-EFBIG (not committed). */
struct ks_txn;
int list_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		    const struct list_value *vals, size_t n);

#endif
