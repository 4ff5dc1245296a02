/*
 * t_set: the Redis set type (SADD, SREM, SISMEMBER, SCARD, SPOP,
 * SRANDMEMBER, SMOVE, and ordered member iteration after a cursor).
 * Layout (kvrocks-encoding.md 6.4): metadata (type 4, size = member count), one sub-key per member
 * in the default CF with an empty value. Layer: types. Members are binary. All verbs return 0 (or a
 * documented count) or a negative errno: -ENOENT (no such key or member), -KV_EWRONGTYPE (another
 * type), -EFBIG (member over SET_MEMBER_MAX), -EROFS, -ENOMEM, -EIO, -EINVAL (bad namespace).
 */
#ifndef KVFS_T_SET_H
#define KVFS_T_SET_H

#include "keyspace/keyspace.h"

/* SREM option: when the last member goes, remember the key as an empty
 * set (in the same batch) instead of letting it vanish. */
#define SET_KEEP_EMPTY 0x1

/* Largest member: Redis's proto-max-bulk-len. */
#define SET_MEMBER_MAX (512ull << 20)

/* SADD of one member; creates the key and drops its empty-collection
 * record in the same batch. *added (may be NULL) = true if it was new;
 * adding a present member writes nothing. */
int set_add(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, bool *added);
/* SREM of one member. flags: SET_KEEP_EMPTY. -ENOENT if the key or the
 * member is missing. */
int set_rem(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, unsigned flags);
/* Rename member `from` to `to` in one batch; if `to` is a member too it
 * is replaced (the set loses one member). from == to is 0 if it exists.
 * -ENOENT if the key or `from` is missing. */
int set_rename_member(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fn,
		      const void *to, size_t tn);
/* SISMEMBER: 1, 0 (also for a missing key), or a negative errno. */
int set_ismember(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn);
/* SCARD: a missing key has 0 members. */
int set_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n);

/*
 * Members of the key's current version in byte order, starting after
 * `after` (NULL = from the first member). A missing key iterates
 * nothing; another type gives NULL and -KV_EWRONGTYPE in *err. next()
 * returns 1 with a borrowed member (valid until the next call), 0 at the
 * end, or a negative errno. Free with set_iter_free.
 */
struct set_iter;
struct set_iter *set_iter_new(struct keyspace *ks, const struct ks_key *k, const void *after,
			      size_t alen, int *err);
int set_iter_next(struct set_iter *it, const char **m, size_t *mn);
void set_iter_free(struct set_iter *it);

/*
 * SPOP and SRANDMEMBER choose as Kvrocks does (redis_set.cc Set::Take,
 * sample_helper.h): every member, and every set of COUNT members, is as
 * likely as any other, from a generator seeded by the kernel at each call
 * (Kvrocks: std::mt19937 from std::random_device). One member: uniform
 * over the size. COUNT members, fewer than the set holds: each chosen
 * without repetition, given in a random order. COUNT at least the size:
 * every member, in byte order. Negative COUNT (SRANDMEMBER only): -COUNT
 * independent draws, repeats allowed, in the order drawn. Unlike
 * Kvrocks, a verb reads members only up to the last one chosen (one
 * random member reads half the set on average, not all of it) and keeps
 * only the chosen ones in memory.
 *
 * cb gets each chosen member (borrowed bytes, valid during the call), in
 * answer order; a non-zero return stops the verb with that error and
 * nothing is written.
 */
typedef int (*set_member_cb)(void *arg, const char *m, size_t mn);

/* Most draws of one SRANDMEMBER with a negative COUNT (each may repeat a
 * member, so the answer is not bounded by the set). */
#define SET_RAND_MAX 1000000

/* SPOP key COUNT: remove up to count members chosen at random in one
 * batch, giving each to cb before the batch is written (on an error of
 * the write the caller drops what cb got: nothing was popped). flags:
 * SET_KEEP_EMPTY (the last member leaves an empty set). A missing key or
 * count 0 pops nothing: 0, cb not called. -KV_EWRONGTYPE, -EUCLEAN (the
 * size disagrees with the members: logged), -EROFS, -EIO, -ENOMEM. */
int set_pop(struct keyspace *ks, const struct ks_key *k, uint64_t count, unsigned flags,
	    set_member_cb cb, void *arg);
/* SRANDMEMBER key COUNT: count > 0 up to count distinct members, count <
 * 0 -count draws that may repeat (at most SET_RAND_MAX: -EINVAL beyond),
 * 0 none; nothing written. A missing key gives none: 0. Errors as
 * set_pop's. One consistent snapshot. */
int set_randmember(struct keyspace *ks, const struct ks_key *k, int64_t count, set_member_cb cb,
		   void *arg);
/* SMOVE src dst m, and a rename on the way: member m of src becomes
 * member t of dst, in one batch under both keys' locks. dst is made if
 * missing (its empty-collection record dropped); if it has t already,
 * src only loses m (Redis's SMOVE). src == dst is set_rename_member.
 * flags: SET_KEEP_EMPTY for src's last member. -ENOENT (no src or no m),
 * -KV_EWRONGTYPE (src or dst is another type; nothing written), -EFBIG
 * (t over SET_MEMBER_MAX). */
int set_move(struct keyspace *ks, const struct ks_key *src, const void *m, size_t mn,
	     const struct ks_key *dst, const void *t, size_t tn, unsigned flags);

/* For t_convert: k, read in transaction t and renewed there as a set
 * (ks_txn_renew), gets member m, one it does not have yet; the caller
 * commits. 0, or -EFBIG (nothing staged). */
struct ks_txn;
int set_txn_add(struct ks_txn *t, const struct ks_key *k, const void *m, size_t mn);

#endif
