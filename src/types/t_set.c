/*
 * t_set: the Redis set type (kvrocks-encoding.md 6.4). Metadata (type 4,
 * size = number of members) in the metadata CF; one sub-key per member
 * in the default CF, ns|key_len|key|version|member -> empty value.
 * Layer: types.
 *
 * Every mutation holds the key's lock from the metadata read to the one
 * batch write, so size always equals the number of members of the
 * current version. Updates keep the stored metadata encoding (v0 stays
 * v0); a new key gets fresh v1 metadata and a fresh version and loses
 * its empty-collection record in the same batch. Removing the last
 * member deletes the metadata (as Kvrocks's SREM does), or with
 * SET_KEEP_EMPTY replaces it by an empty-collection record.
 */
#include "types/t_set.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/random.h>

int set_add(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, bool *added)
{
	if (mn > SET_MEMBER_MAX)
		return -EFBIG;
	return ks_member_put(ks, k, KV_TYPE_SET, m, mn, "", 0, KS_MEMBER_KEEP, added);
}

int set_rem(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn, unsigned flags)
{
	return ks_member_del(ks, k, KV_TYPE_SET, m, mn,
			     (flags & SET_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
}

int set_rename_member(struct keyspace *ks, const struct ks_key *k, const void *from, size_t fn,
		      const void *to, size_t tn)
{
	if (tn > SET_MEMBER_MAX)
		return -EFBIG;
	return ks_member_rename(ks, k, KV_TYPE_SET, from, fn, to, tn);
}

int set_ismember(struct keyspace *ks, const struct ks_key *k, const void *m, size_t mn)
{
	return ks_sub_has(ks, k, KV_TYPE_SET, m, mn);
}

int set_card(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	return ks_card(ks, k, KV_TYPE_SET, n);
}

/* ---- Iteration ----------------------------------------------------- */

/* A set iterator is the keyspace's sub-key iterator (values are empty). */
struct set_iter *set_iter_new(struct keyspace *ks, const struct ks_key *k, const void *after,
			      size_t alen, int *err)
{
	return (struct set_iter *)ks_sub_iter_new(ks, k, KV_TYPE_SET, after, alen, err);
}

int set_iter_next(struct set_iter *it, const char **m, size_t *mn)
{
	const char *v;
	size_t vn;
	return ks_sub_iter_next((struct ks_sub_iter *)it, m, mn, &v, &vn);
}

void set_iter_free(struct set_iter *it)
{
	ks_sub_iter_free((struct ks_sub_iter *)it);
}

/* ---- SPOP, SRANDMEMBER ---------------------------------------------- */

/* splitmix64, seeded by the kernel at each call (as Kvrocks seeds its
 * std::mt19937 from std::random_device at each call). */
struct rng {
	uint64_t s;
};

static void rng_init(struct rng *r)
{
	if (getrandom(&r->s, sizeof(r->s), GRND_NONBLOCK) != (ssize_t)sizeof(r->s))
		r->s = now_us() ^ ((uint64_t)(uintptr_t)r << 16);
}

static uint64_t rng_next(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n), n > 0: draws below 2^64 mod n are drawn again, so
 * no member is likelier than another. */
static uint64_t rng_below(struct rng *r, uint64_t n)
{
	uint64_t min = -n % n, x;
	do
		x = rng_next(r);
	while (x < min);
	return x % n;
}

/* The members chosen, in answer order: slot i is data[off, off + len). */
struct chosen {
	struct buf data;
	struct chosen_slot {
		size_t off, len;
	} * slot;
	size_t n;
};

/* One draw of a member by its place in byte order. */
struct draw {
	uint64_t idx;
	size_t pos; /* in the answer */
};

static int draw_cmp(const void *a, const void *b)
{
	const struct draw *x = a, *y = b;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * Choose members of a set of `size` from it (members in byte order), as
 * set.h says: count > 0 distinct ones, count < 0 -count draws; into ch.
 * Draws (count < 0, or 1) pick places, sorted to be met in one pass;
 * distinct ones are sampled in that pass (Knuth's algorithm S: member i
 * is taken with probability need / (size - i), which makes every subset
 * as likely), then shuffled (Fisher-Yates). Reads up to the last member
 * chosen. -EUCLEAN if the set has fewer members than its size says.
 */
static int choose(struct ks_sub_iter *it, const struct ks_key *k, uint64_t size, int64_t count,
		  struct chosen *ch)
{
	bool all = count > 0 && (uint64_t)count >= size;
	bool draw = count < 0 || count == 1;
	uint64_t want = all ? size : count < 0 ? (uint64_t)-count : (uint64_t)count;
	uint64_t need = want, i = 0;
	struct draw *d = NULL;
	const char *m, *v;
	size_t mn, vn, j = 0;
	struct rng r;
	int rc = 0;

	if (size == 0 || want == 0)
		return 0;
	if (want > SIZE_MAX / sizeof(*d) || !(ch->slot = calloc(want, sizeof(*ch->slot))))
		return -ENOMEM;
	rng_init(&r);
	if (draw) {
		if (!(d = malloc(want * sizeof(*d))))
			return -ENOMEM;
		for (size_t x = 0; x < want; x++)
			d[x] = (struct draw){rng_below(&r, size), x};
		qsort(d, want, sizeof(*d), draw_cmp);
	}
	while (need > 0 && (rc = ks_sub_iter_next(it, &m, &mn, &v, &vn)) == 1) {
		bool take = draw ? d[j].idx == i : all || rng_below(&r, size - i) < need;
		rc = 0;
		if (take) {
			struct chosen_slot s = {ch->data.len, mn};
			if ((rc = buf_add(&ch->data, m, mn)))
				break;
			for (; draw && j < want && d[j].idx == i; j++, need--)
				ch->slot[d[j].pos] = s;
			if (!draw)
				ch->slot[want - need--] = s;
		}
		i++;
	}
	free(d);
	if (rc < 0)
		return rc;
	if (need > 0)
		return ks_corrupt(k, "a set of size %llu with %llu members",
				  (unsigned long long)size, (unsigned long long)i);
	ch->n = want;
	for (size_t x = want - 1; !draw && !all && x > 0; x--) {
		size_t y = rng_below(&r, x + 1);
		struct chosen_slot t = ch->slot[x];
		ch->slot[x] = ch->slot[y];
		ch->slot[y] = t;
	}
	return 0;
}

static const char *chosen_member(const struct chosen *ch, size_t i)
{
	return ch->data.data ? ch->data.data + ch->slot[i].off : "";
}

static void chosen_release(struct chosen *ch)
{
	buf_release(&ch->data);
	free(ch->slot);
}

int set_pop(struct keyspace *ks, const struct ks_key *k, uint64_t count, unsigned flags,
	    set_member_cb cb, void *arg)
{
	struct chosen ch = {BUF_INIT, NULL, 0};
	struct ks_sub_iter *it = NULL;
	struct enc_meta *m;
	struct ks_txn t;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_SET, &m);
	if (rc == -ENOENT)
		rc = 0; /* nothing to pop */
	else if (!rc && count > 0 && (it = ks_sub_iter_new(ks, k, KV_TYPE_SET, NULL, 0, &rc)))
		rc = choose(it, k, m->size, count > INT64_MAX ? INT64_MAX : (int64_t)count, &ch);
	for (size_t i = 0; !rc && i < ch.n; i++) {
		ks_txn_sub_del(&t, k, STORE_CF_DEFAULT, chosen_member(&ch, i), ch.slot[i].len);
		rc = cb(arg, chosen_member(&ch, i), ch.slot[i].len);
	}
	if (!rc && ch.n) {
		ks_txn_resize(&t, k, -(int64_t)ch.n,
			      (flags & SET_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
		rc = ks_txn_commit(&t);
	}
	ks_sub_iter_free(it);
	chosen_release(&ch);
	return ks_txn_end(&t, rc);
}

int set_randmember(struct keyspace *ks, const struct ks_key *k, int64_t count, set_member_cb cb,
		   void *arg)
{
	struct chosen ch = {BUF_INIT, NULL, 0};
	struct enc_meta meta;
	struct ks_sub_iter_opts o = {.meta = &meta};
	struct ks_txn t; /* the size and the snapshot agree: both under the lock */
	int rc = 0;

	if (count < -(int64_t)SET_RAND_MAX)
		return -EINVAL;
	ks_txn_begin_read(&t, ks, k);
	struct ks_sub_iter *it = ks_sub_iter_open(ks, k, KV_TYPE_SET, &o, &rc);
	ks_txn_end(&t, 0);
	if (!it)
		return rc;
	rc = choose(it, k, meta.size, count, &ch);
	for (size_t i = 0; !rc && i < ch.n; i++)
		rc = cb(arg, chosen_member(&ch, i), ch.slot[i].len);
	ks_sub_iter_free(it);
	chosen_release(&ch);
	return rc;
}

/* ---- SMOVE ----------------------------------------------------------- */

int set_move(struct keyspace *ks, const struct ks_key *src, const void *m, size_t mn,
	     const struct ks_key *dst, const void *t, size_t tn, unsigned flags)
{
	struct enc_meta *sm, *dm;
	struct ks_txn tx;
	int exists = 0;

	if (tn > SET_MEMBER_MAX)
		return -EFBIG;
	if (ks_key_eq(src, dst))
		return set_rename_member(ks, src, m, mn, t, tn);
	ks_txn_begin2(&tx, ks, src, dst);
	int rc = ks_txn_get(&tx, src, KV_TYPE_SET, &sm);
	if (!rc)
		rc = ks_sub_exists(ks, src, sm->version, STORE_CF_DEFAULT, m, mn);
	if (rc == 0)
		rc = -ENOENT; /* no such member */
	else if (rc == 1)
		rc = ks_txn_open(&tx, dst, KV_TYPE_SET, &dm);
	if (!rc && !ks_txn_is_new(&tx, dst))
		rc = exists = ks_sub_exists(ks, dst, dm->version, STORE_CF_DEFAULT, t, tn);
	if (rc < 0)
		return ks_txn_end(&tx, rc);
	ks_txn_sub_del(&tx, src, STORE_CF_DEFAULT, m, mn);
	ks_txn_resize(&tx, src, -1, (flags & SET_KEEP_EMPTY) ? KS_TXN_KEEP_EMPTY : 0);
	if (!exists) {
		ks_txn_sub_put(&tx, dst, STORE_CF_DEFAULT, t, tn, "", 0);
		ks_txn_resize(&tx, dst, +1, 0);
	}
	return ks_txn_end(&tx, ks_txn_commit(&tx));
}

/* ---- For t_convert --------------------------------------------------- */

int set_txn_add(struct ks_txn *t, const struct ks_key *k, const void *m, size_t mn)
{
	if (mn > SET_MEMBER_MAX)
		return -EFBIG;
	ks_txn_sub_put(t, k, STORE_CF_DEFAULT, m, mn, "", 0);
	ks_txn_resize(t, k, +1, 0);
	return 0;
}
