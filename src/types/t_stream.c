/*
 * t_stream: Redis streams in Kvrocks's layout (kvrocks-encoding.md 6.9).
 * Layer: types.
 *
 * metadata CF, key K: header (type 8, size = entries) then 12 x u64 BE:
 *   last_generated_id.ms .seq | recorded_first_entry_id.ms .seq |
 *   max_deleted_entry_id.ms .seq | first_entry_id.ms .seq |
 *   last_entry_id.ms .seq | entries_added | group_number
 *   (read: the first 11 are required, group_number is optional)
 * stream CF, sub-keys IK(...) = ns|key_len|key|version|...:
 *   entry     IK(ms u64 | seq u64)                  -> (varint32 len | bytes)*
 *                                                     field, value, field, ...
 *   group     IK(FF x8 | 01 | u64 len(g) | g)       -> consumers, pending,
 *             last_delivered.ms, .seq, entries_read (i64), lag: 6 x u64
 *   consumer  IK(FF x8 | 02 | u64 len(g) | g | u64 len(c) | c)
 *                                                   -> pending, seen_ms, active_ms
 *   pending   IK(FF x8 | 03 | u64 len(g) | g | ms | seq)
 *                                                   -> delivery_ms, deliveries,
 *                                                      u64 len(c) | c
 * Entry IDs have ms < 2^64-1, so every entry sorts before the FF x8
 * prefix of the group records.
 *
 * Every mutation is one ks_txn: the key's lock from the metadata read to
 * the one batch write. The counters change as Kvrocks's redis_stream.cc
 * changes them (XADD, XDEL, XTRIM, XGROUP); see docs/encoding.md. The
 * consumer groups are in t_stream_group.c; what both files share is in
 * t_stream_int.h.
 */
#include "types/t_stream.h"

#include "engine/store.h"
#include "types/t_stream_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define TAIL_LEN 96
#define TAIL_MIN 88

static const struct stream_id id_zero = {0, 0};

/* ---- IDs and values ------------------------------------------------ */

int stream_id_cmp(const struct stream_id *a, const struct stream_id *b)
{
	if (a->ms != b->ms)
		return a->ms < b->ms ? -1 : 1;
	if (a->seq != b->seq)
		return a->seq < b->seq ? -1 : 1;
	return 0;
}

static int parse_part(const char *s, size_t n, uint64_t *v)
{
	if (n == 0 || (n > 1 && s[0] == '0'))
		return -EINVAL;
	return parse_u64(s, n, v) ? -EINVAL : 0;
}

int stream_id_parse(const char *s, size_t n, bool allow_ms, struct stream_id *id)
{
	const char *dash = memchr(s, '-', n);
	if (!dash) {
		id->seq = 0;
		return allow_ms ? parse_part(s, n, &id->ms) : -EINVAL;
	}
	size_t an = (size_t)(dash - s);
	if (parse_part(s, an, &id->ms) || parse_part(dash + 1, n - an - 1, &id->seq))
		return -EINVAL;
	return 0;
}

size_t stream_id_format(const struct stream_id *id, char *out)
{
	int n = snprintf(out, STREAM_ID_MAX, "%" PRIu64 "-%" PRIu64, id->ms, id->seq);
	return (size_t)n;
}

int stream_value_next(const char *val, size_t vn, size_t *pos, struct stream_str *s)
{
	uint32_t len = 0;
	size_t p = *pos;
	if (p >= vn)
		return 0;
	for (int shift = 0;; shift += 7) {
		if (p >= vn || shift > 28)
			return -EUCLEAN;
		uint8_t b = (uint8_t)val[p++];
		len |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
	}
	if (len > vn - p)
		return -EUCLEAN;
	s->p = val + p;
	s->n = len;
	*pos = p + len;
	return 1;
}

int stream_value_check(const struct ks_key *k, const struct stream_id *id, const char *val,
		       size_t vn)
{
	struct stream_str s;
	size_t pos = 0;
	int rc;
	while ((rc = stream_value_next(val, vn, &pos, &s)) == 1)
		;
	if (rc) {
		char name[STREAM_ID_MAX];
		size_t n = stream_id_format(id, name);
		rc = ks_corrupt_entry(k, name, n,
				      "a stream entry value of %zu bytes that does not decode at "
				      "byte %zu",
				      vn, pos);
	}
	return rc;
}

static int add_varint32(struct buf *b, uint32_t v)
{
	uint8_t tmp[5];
	size_t n = 0;
	while (v >= 0x80) {
		tmp[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	tmp[n++] = (uint8_t)v;
	return buf_add(b, tmp, n);
}

/* ---- Records ------------------------------------------------------- */

/* The counters of k's metadata m: 0, or -EUCLEAN (logged) for a short
 * tail. */
static int meta_decode(const struct ks_key *k, const struct enc_meta *m, struct stream_info *i)
{
	if (m->tail_len < TAIL_MIN) {
		return ks_corrupt(k, "stream metadata tail of %zu bytes, at least %d expected",
				  m->tail_len, TAIL_MIN);
	}
	const uint8_t *t = m->tail;
	i->size = m->size;
	i->version = m->version;
	stream_id_get(t, &i->last_generated);
	stream_id_get(t + 16, &i->recorded_first);
	stream_id_get(t + 32, &i->max_deleted);
	stream_id_get(t + 48, &i->first);
	stream_id_get(t + 64, &i->last);
	i->entries_added = get_be64(t + 80);
	i->group_number = m->tail_len >= TAIL_LEN ? get_be64(t + 88) : 0;
	return 0;
}

int stream_info(struct keyspace *ks, const struct ks_key *k, struct stream_info *out)
{
	uint8_t tail[TAIL_LEN];
	struct enc_meta m;
	int rc = ks_meta_copy(ks, k, KV_TYPE_STREAM, &m, tail, sizeof(tail));
	return rc ? rc : meta_decode(k, &m, out);
}

/* The same under transaction t; with create, a missing stream is made
 * (ks_txn_open), every counter 0. */
int stream_meta_txn(struct ks_txn *t, const struct ks_key *k, bool create, struct enc_meta **m,
		    struct stream_info *i)
{
	int rc =
	    create ? ks_txn_open(t, k, KV_TYPE_STREAM, m) : ks_txn_get(t, k, KV_TYPE_STREAM, m);
	if (rc)
		return rc;
	if (!ks_txn_is_new(t, k))
		return meta_decode(k, *m, i);
	memset(i, 0, sizeof(*i));
	i->version = (*m)->version;
	return 0;
}

static void tail_encode(const struct stream_info *i, uint8_t *t)
{
	stream_id_put(t, &i->last_generated);
	stream_id_put(t + 16, &i->recorded_first);
	stream_id_put(t + 32, &i->max_deleted);
	stream_id_put(t + 48, &i->first);
	stream_id_put(t + 64, &i->last);
	put_be64(t + 80, i->entries_added);
	put_be64(t + 88, i->group_number);
}

/* Stage k's metadata m with the counters of i (the whole 96-byte tail),
 * then commit t. */
int stream_meta_commit(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		       const struct stream_info *i)
{
	uint8_t tail[TAIL_LEN];
	tail_encode(i, tail);
	m->size = i->size;
	ks_txn_meta_put(t, k, tail, sizeof(tail));
	return ks_txn_commit(t);
}

/* The stream-CF record of k's version `ver` at sub-key sub: 0, -ENOENT,
 * -EIO. */
int stream_rec_get(struct keyspace *ks, const struct ks_key *k, uint64_t ver, const void *sub,
		   size_t sn, struct buf *out)
{
	return ks_sub_get(ks, k, ver, STORE_CF_STREAM, sub, sn, out);
}

int stream_value_encode(const struct stream_str *fv, size_t nf, struct buf *out)
{
	int rc = 0;
	if (nf < 2 || nf % 2)
		return -EINVAL;
	for (size_t j = 0; j < nf && !rc; j++) {
		if (fv[j].n > INT32_MAX)
			return -EINVAL;
		rc = add_varint32(out, (uint32_t)fv[j].n);
		if (!rc)
			rc = buf_add(out, fv[j].p, fv[j].n);
	}
	return rc;
}

int stream_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		      const struct stream_id *ids, const char *const *vals, const size_t *lens,
		      size_t n, const struct stream_counters *c, const struct stream_gstate *gs)
{
	struct stream_info i = {0};
	uint8_t sub[16];
	if (n == 0 && !c && !gs)
		return -EINVAL;
	for (size_t j = 0; j < n; j++) {
		if (stream_id_is_zero(&ids[j]) || ids[j].ms == UINT64_MAX ||
		    (j && stream_id_cmp(&ids[j - 1], &ids[j]) >= 0))
			return -EINVAL;
		stream_id_put(sub, &ids[j]);
		ks_txn_sub_put(t, k, STORE_CF_STREAM, sub, sizeof(sub), vals[j], lens[j]);
	}
	i.size = i.entries_added = n;
	i.version = m->version;
	if (n) {
		i.first = i.recorded_first = ids[0];
		i.last = i.last_generated = ids[n - 1];
	}
	int rc = c ? stream_counters_apply(k, &i, c) : 0;
	if (!rc && gs)
		rc = stream_gstate_stage(t, k, gs, &i);
	return rc ? rc : stream_meta_commit(t, k, m, &i);
}

int stream_counters_apply(const struct ks_key *k, struct stream_info *i,
			  const struct stream_counters *c)
{
	char a[STREAM_ID_MAX], b[STREAM_ID_MAX];
	const char *why = NULL;
	if (c->entries_added < i->size)
		why = "entries-added is below the number of entries";
	else if (i->size && stream_id_cmp(&c->last_generated, &i->last) < 0)
		why = "last-generated-id is below the last entry's ID";
	else if (stream_id_cmp(&c->max_deleted, &c->last_generated) > 0)
		why = "max-deleted-entry-id is above last-generated-id";
	if (why) {
		stream_id_format(&c->last_generated, a);
		stream_id_format(&i->last, b);
		LOG_ERR("stream '%.*s': %s (XSETID's rules; last-generated-id %s, last entry %s, "
			"%" PRIu64 " entries): the state is not set",
			(int)k->klen, k->key, why, a, b, i->size);
		return -EINVAL;
	}
	i->last_generated = c->last_generated;
	i->max_deleted = c->max_deleted;
	i->recorded_first = c->recorded_first;
	i->entries_added = c->entries_added;
	return 0;
}

int stream_set_counters(struct keyspace *ks, const struct ks_key *k,
			const struct stream_counters *c)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct stream_info i;
	ks_txn_begin(&t, ks, k);
	int rc = stream_meta_txn(&t, k, c != NULL, &m, &i);
	if (!rc && c) {
		rc = stream_counters_apply(k, &i, c);
	} else if (!rc) {
		/* those of adding the entries in ID order */
		i.entries_added = i.size;
		i.max_deleted = id_zero;
		i.last_generated = i.last;
		i.recorded_first = i.first;
	}
	if (!rc)
		rc = stream_meta_commit(&t, k, m, &i);
	return ks_txn_end(&t, rc);
}

/* ---- XADD ---------------------------------------------------------- */
static int next_auto(const struct stream_id *last, struct stream_id *id)
{
	uint64_t now = now_ms();
	if (last->ms == UINT64_MAX - 1 && last->seq == UINT64_MAX)
		return -EINVAL;
	if (now > last->ms) {
		id->ms = now;
		id->seq = 0;
	} else if (last->seq == UINT64_MAX) {
		id->ms = last->ms + 1;
		id->seq = 0;
	} else {
		id->ms = last->ms;
		id->seq = last->seq + 1;
	}
	return 0;
}

/* The ID stream_add stores: 0 or -EINVAL (logged). */
static int choose_id(const struct ks_key *k, enum stream_add_mode mode,
		     const struct stream_id *want, bool fresh, const struct stream_info *i,
		     struct stream_id *id)
{
	char a[STREAM_ID_MAX], b[STREAM_ID_MAX];
	const struct stream_id *lg = &i->last_generated;
	switch (mode) {
	case STREAM_ADD_AUTO:
		if (next_auto(lg, id)) {
			LOG_ERR("XADD '%.*s': the stream has exhausted its IDs", (int)k->klen,
				k->key);
			return -EINVAL;
		}
		return 0;
	case STREAM_ADD_MS:
		id->ms = want->ms;
		if (fresh) {
			id->seq = want->ms ? 0 : 1;
		} else if (want->ms < lg->ms || (want->ms == lg->ms && lg->seq == UINT64_MAX)) {
			stream_id_format(lg, b);
			LOG_ERR("XADD '%.*s': %" PRIu64 "-* is not above the last ID %s",
				(int)k->klen, k->key, want->ms, b);
			return -EINVAL;
		} else {
			id->seq = want->ms == lg->ms ? lg->seq + 1 : 0;
		}
		break;
	case STREAM_ADD_ID:
	case STREAM_ADD_RESTORE:
		*id = *want;
		if (stream_id_is_zero(id)) {
			LOG_ERR("XADD '%.*s': 0-0 is not a valid stream ID", (int)k->klen, k->key);
			return -EINVAL;
		}
		if (mode == STREAM_ADD_ID && !fresh && stream_id_cmp(id, lg) <= 0) {
			stream_id_format(id, a);
			stream_id_format(lg, b);
			LOG_ERR("XADD '%.*s': ID %s is not greater than the last ID %s",
				(int)k->klen, k->key, a, b);
			return -EINVAL;
		}
		break;
	}
	if (id->ms == UINT64_MAX) {
		LOG_ERR("XADD '%.*s': an ID's milliseconds must be below 2^64-1", (int)k->klen,
			k->key);
		return -EINVAL;
	}
	return 0;
}

int stream_add(struct keyspace *ks, const struct ks_key *k, enum stream_add_mode mode,
	       const struct stream_id *want, const struct stream_str *fv, size_t nf, unsigned flags,
	       struct stream_id *out)
{
	struct buf val = BUF_INIT, tmp = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	struct stream_info i;
	struct stream_id id = {0, 0};
	uint8_t sub[16];

	if (nf < 2 || nf % 2) {
		LOG_ERR("XADD '%.*s': an entry needs field/value pairs (%zu strings given)",
			(int)k->klen, k->key, nf);
		return -EINVAL;
	}
	int rc = stream_value_encode(fv, nf, &val);
	if (rc) {
		if (rc == -EINVAL)
			LOG_ERR("XADD '%.*s': a field or value over 2^31-1 bytes", (int)k->klen,
				k->key);
		buf_release(&val);
		return rc;
	}
	ks_txn_begin(&t, ks, k);
	rc = stream_meta_txn(&t, k, !(flags & STREAM_NOMKSTREAM), &m, &i);
	bool fresh = !rc && ks_txn_is_new(&t, k);
	if (!rc)
		rc = choose_id(k, mode, want, fresh, &i, &id);
	stream_id_put(sub, &id);
	if (!rc && mode == STREAM_ADD_RESTORE && !fresh) {
		rc = stream_rec_get(ks, k, m->version, sub, sizeof(sub), &tmp);
		if (rc == 0) {
			char a[STREAM_ID_MAX];
			stream_id_format(&id, a);
			LOG_ERR("'%.*s': entry %s exists; entries cannot be replaced", (int)k->klen,
				k->key, a);
			rc = -EEXIST;
		} else if (rc == -ENOENT) {
			rc = 0;
		}
	}
	if (rc)
		goto out;
	ks_txn_sub_put(&t, k, STORE_CF_STREAM, sub, sizeof(sub), val.data, val.len);
	i.size++;
	i.entries_added++;
	if (mode != STREAM_ADD_RESTORE) {
		i.last_generated = id;
		i.last = id;
		if (i.size == 1)
			i.first = i.recorded_first = id;
	} else {
		/* A restore may come in any order (rsync's name order). */
		if (i.size == 1 || stream_id_cmp(&id, &i.first) < 0)
			i.first = i.recorded_first = id;
		if (i.size == 1 || stream_id_cmp(&id, &i.last) > 0)
			i.last = id;
		if (stream_id_cmp(&id, &i.last_generated) > 0)
			i.last_generated = id;
	}
	rc = stream_meta_commit(&t, k, m, &i);
	if (!rc && out)
		*out = id;
out:
	buf_release(&val);
	buf_release(&tmp);
	return ks_txn_end(&t, rc);
}

/* ---- Reads --------------------------------------------------------- */

int stream_len(struct keyspace *ks, const struct ks_key *k, uint64_t *n)
{
	return ks_card(ks, k, KV_TYPE_STREAM, n);
}

int stream_get(struct keyspace *ks, const struct ks_key *k, const struct stream_id *id,
	       struct buf *out)
{
	struct stream_info i;
	uint8_t sub[16];
	int rc = stream_info(ks, k, &i);
	if (!rc && id->ms == UINT64_MAX)
		rc = -ENOENT;
	stream_id_put(sub, id);
	if (!rc)
		rc = stream_rec_get(ks, k, i.version, sub, sizeof(sub), out);
	return rc;
}

/* The sub-keys of the group records start with FF x8: every entry sorts
 * before them (its ms is below 2^64-1). */
static const uint8_t groups_start[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};

struct stream_iter {
	struct ks_sub_iter *si;
	bool reverse, has_to, excl_to;
	struct stream_id to;
};

struct stream_iter *stream_iter_new(struct keyspace *ks, const struct ks_key *k, bool reverse,
				    const struct stream_id *from, bool excl_from,
				    const struct stream_id *to, bool excl_to, int *err)
{
	struct ks_sub_iter_opts o = {
	    .cf = STORE_CF_STREAM, .reverse = reverse, .inclusive = !excl_from};
	struct stream_iter *it = calloc(1, sizeof(*it));
	struct stream_info i;
	uint8_t sub[16];

	if (!it) {
		*err = -ENOMEM;
		return NULL;
	}
	it->reverse = reverse;
	if (to) {
		it->has_to = true;
		it->to = *to;
		it->excl_to = excl_to;
	}
	if (from && from->ms != UINT64_MAX) {
		stream_id_put(sub, from);
		o.after = sub;
		o.alen = sizeof(sub);
	} else if (from || reverse) {
		/* beyond every entry: where the group records start */
		o.after = groups_start;
		o.alen = sizeof(groups_start);
		o.inclusive = false;
	}
	int rc = stream_info(ks, k, &i); /* a short metadata tail is corruption */
	if (!rc || rc == -ENOENT)
		it->si = ks_sub_iter_open(ks, k, KV_TYPE_STREAM, &o, &rc);
	if (rc) {
		stream_iter_free(it);
		it = NULL;
	}
	*err = rc;
	return it;
}

int stream_iter_next(struct stream_iter *it, struct stream_id *id, const char **val, size_t *vn)
{
	const char *sub;
	size_t sn;
	for (;;) {
		int rc = ks_sub_iter_next(it->si, &sub, &sn, val, vn);
		if (rc <= 0)
			return rc;
		if (sn >= sizeof(groups_start) && !memcmp(sub, groups_start, sizeof(groups_start)))
			return 0; /* past the last entry */
		if (sn == 16)
			break;
		/* It names no entry a lookup finds (every lookup builds a
		 * 16-byte ID): skipped wherever it is met (encoding.md 20). */
		ks_corrupt_entry(stream_iter_key(it), sub, sn,
				 "a stream sub-key of %zu bytes where a 16-byte entry ID belongs; "
				 "skipped",
				 sn);
	}
	stream_id_get((const uint8_t *)sub, id);
	if (it->has_to) {
		int c = stream_id_cmp(id, &it->to);
		if (it->reverse ? (c < 0 || (c == 0 && it->excl_to))
				: (c > 0 || (c == 0 && it->excl_to)))
			return 0;
	}
	return 1;
}

const struct ks_key *stream_iter_key(const struct stream_iter *it)
{
	return ks_sub_iter_key(it->si);
}

void stream_iter_free(struct stream_iter *it)
{
	if (!it)
		return;
	ks_sub_iter_free(it->si);
	free(it);
}

/* ---- XDEL, XTRIM --------------------------------------------------- */

/* The first entry after (or, reverse, before) `from` whose ID is not in
 * gone[0..ng). 1 found, 0 none, <0 error. */
static int next_alive(struct keyspace *ks, const struct ks_key *k, const struct stream_id *from,
		      bool reverse, const struct stream_id *gone, size_t ng, struct stream_id *out)
{
	int rc;
	struct stream_iter *it = stream_iter_new(ks, k, reverse, from, true, NULL, false, &rc);
	const char *v;
	size_t vn;
	if (!it)
		return rc;
	while ((rc = stream_iter_next(it, out, &v, &vn)) == 1)
		if (!stream_id_in(out, gone, ng))
			break;
	stream_iter_free(it);
	return rc;
}

int stream_del(struct keyspace *ks, const struct ks_key *k, const struct stream_id *ids, size_t n,
	       uint64_t *deleted)
{
	struct buf v = BUF_INIT;
	struct stream_id *gone = NULL;
	struct ks_txn t;
	struct enc_meta *m;
	struct stream_info i;
	size_t ng = 0;

	if (deleted)
		*deleted = 0;
	if (n && !(gone = calloc(n, sizeof(*gone))))
		return -ENOMEM;
	ks_txn_begin(&t, ks, k);
	int rc = stream_meta_txn(&t, k, false, &m, &i);
	if (rc == -ENOENT) {
		rc = 0;
		goto out;
	}
	for (size_t j = 0; j < n && !rc; j++) {
		uint8_t sub[16];
		if (ids[j].ms == UINT64_MAX || stream_id_in(&ids[j], gone, ng))
			continue;
		stream_id_put(sub, &ids[j]);
		rc = stream_rec_get(ks, k, m->version, sub, sizeof(sub), &v);
		if (rc == -ENOENT) {
			rc = 0;
			continue;
		}
		if (rc)
			break;
		ks_txn_sub_del(&t, k, STORE_CF_STREAM, sub, sizeof(sub));
		gone[ng++] = ids[j];
		if (stream_id_cmp(&i.max_deleted, &ids[j]) < 0)
			i.max_deleted = ids[j];
	}
	if (rc || ng == 0)
		goto out;
	if (ng >= i.size) {
		i.first = i.last = i.recorded_first = id_zero;
	} else {
		struct stream_id nx;
		if (stream_id_in(&i.first, gone, ng)) {
			rc = next_alive(ks, k, &i.first, false, gone, ng, &nx);
			if (rc == 1)
				i.first = i.recorded_first = nx;
			else if (rc == 0)
				i.first = i.recorded_first = id_zero;
		}
		if (rc >= 0 && stream_id_in(&i.last, gone, ng)) {
			rc = next_alive(ks, k, &i.last, true, gone, ng, &nx);
			if (rc == 1)
				i.last = nx;
			else if (rc == 0)
				i.last = id_zero;
		}
		if (rc > 0)
			rc = 0;
		if (rc)
			goto out;
	}
	i.size -= ng;
	rc = stream_meta_commit(&t, k, m, &i);
	if (!rc && deleted)
		*deleted = ng;
out:
	free(gone);
	buf_release(&v);
	return ks_txn_end(&t, rc);
}

/*
 * Kvrocks's trim(): drop entries from the front of k (its records as
 * committed; t holds k's lock) while MAXLEN leaves more than maxlen, or
 * MINID finds the first below minid. first and recorded_first follow;
 * *ret counts the drops, *last_deleted is the last one dropped.
 */
static int trim_front(struct ks_txn *t, struct keyspace *ks, const struct ks_key *k,
		      struct stream_info *i, enum stream_trim how, uint64_t maxlen,
		      const struct stream_id *minid, uint64_t *ret, struct stream_id *last_deleted)
{
	struct stream_id id;
	const char *v;
	size_t vn;
	int rc = 0;
	struct stream_iter *it = stream_iter_new(ks, k, false, NULL, false, NULL, false, &rc);
	if (!it)
		return rc;
	rc = stream_iter_next(it, &id, &v, &vn);
	while (rc == 1 && i->size > 0) {
		uint8_t sub[16];
		if (how == STREAM_TRIM_MAXLEN && i->size <= maxlen)
			break;
		if (how == STREAM_TRIM_MINID && stream_id_cmp(&i->first, minid) >= 0)
			break;
		stream_id_put(sub, &id);
		ks_txn_sub_del(t, k, STORE_CF_STREAM, sub, sizeof(sub));
		(*ret)++;
		i->size--;
		*last_deleted = id;
		rc = stream_iter_next(it, &id, &v, &vn);
		if (rc == 1)
			i->first = i->recorded_first = id;
		else if (rc == 0)
			i->first = i->recorded_first = id_zero;
	}
	stream_iter_free(it);
	return rc < 0 ? rc : 0;
}

int stream_trim(struct keyspace *ks, const struct ks_key *k, enum stream_trim how, uint64_t maxlen,
		const struct stream_id *minid, uint64_t *deleted)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct stream_info i;
	struct stream_id last_deleted = id_zero;
	uint64_t ret = 0;

	if (deleted)
		*deleted = 0;
	if (how == STREAM_TRIM_MINID && !minid)
		return -EINVAL;
	ks_txn_begin(&t, ks, k);
	int rc = stream_meta_txn(&t, k, false, &m, &i);
	if (rc == -ENOENT)
		return ks_txn_end(&t, 0); /* nothing to trim */
	if (!rc)
		rc = trim_front(&t, ks, k, &i, how, maxlen, minid, &ret, &last_deleted);
	if (rc || ret == 0)
		return ks_txn_end(&t, rc);
	if (i.size == 0)
		i.first = i.last = i.recorded_first = id_zero;
	i.max_deleted = last_deleted;
	rc = stream_meta_commit(&t, k, m, &i);
	if (!rc && deleted)
		*deleted = ret;
	return ks_txn_end(&t, rc);
}

/*
 * XADD with "*" of n entries in one batch, each trimmed as Kvrocks's Add
 * trims (to MAXLEN - 1 before the add, an entry below MINID or under
 * MAXLEN 0 never stored: it only counts as added and deleted). What n
 * such XADDs one after the other leave is computed at once: the old
 * entries that would be dropped go from the front, and of the new ones
 * the first that a later add would drop are never put.
 */
int stream_add_many(struct keyspace *ks, const struct ks_key *k, const struct stream_entry_in *e,
		    size_t n, const struct stream_trim_opt *trim, unsigned flags,
		    struct stream_id *last)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct stream_info i;
	struct stream_id last_deleted = id_zero;
	struct buf val = BUF_INIT;
	struct stream_id *ids = NULL;
	uint64_t ret = 0;
	size_t j, keep = n; /* the new entries stored: the last keep */
	int rc = 0;

	if (n == 0)
		return 0;
	for (j = 0; j < n; j++) {
		if (e[j].nf < 2 || e[j].nf % 2) {
			LOG_ERR("XADD '%.*s': an entry needs field/value pairs (%zu strings given)",
				(int)k->klen, k->key, e[j].nf);
			return -EINVAL;
		}
	}
	ids = malloc(n * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	ks_txn_begin(&t, ks, k);
	rc = stream_meta_txn(&t, k, !(flags & STREAM_NOMKSTREAM), &m, &i);
	bool fresh = !rc && ks_txn_is_new(&t, k);
	struct stream_info gen = i; /* the IDs come from the last generated */
	for (j = 0; j < n && !rc; j++) {
		rc = choose_id(k, STREAM_ADD_AUTO, NULL, fresh, &gen, &ids[j]);
		gen.last_generated = ids[j];
	}
	if (!rc && trim && trim->how == STREAM_TRIM_MAXLEN) {
		keep = n < trim->maxlen ? n : (size_t)trim->maxlen;
		rc = trim_front(&t, ks, k, &i, STREAM_TRIM_MAXLEN, trim->maxlen - keep, NULL, &ret,
				&last_deleted);
	} else if (!rc && trim) {
		rc = trim_front(&t, ks, k, &i, STREAM_TRIM_MINID, 0, &trim->minid, &ret,
				&last_deleted);
		while (keep > 0 && stream_id_cmp(&ids[n - keep], &trim->minid) < 0)
			keep--;
	}
	if (keep < n)
		last_deleted = ids[n - keep - 1]; /* above every old entry */
	for (j = n - keep; j < n && !rc; j++) {
		uint8_t sub[16];
		buf_reset(&val); /* stream_value_encode appends */
		rc = stream_value_encode(e[j].fv, e[j].nf, &val);
		if (rc == -EINVAL)
			LOG_ERR("XADD '%.*s': a field or value over 2^31-1 bytes", (int)k->klen,
				k->key);
		if (rc)
			break;
		stream_id_put(sub, &ids[j]);
		ks_txn_sub_put(&t, k, STORE_CF_STREAM, sub, sizeof(sub), val.data, val.len);
		if (i.size++ == 0)
			i.first = i.recorded_first = ids[j];
		i.last = ids[j];
	}
	if (rc)
		goto out;
	i.entries_added += n;
	i.last_generated = ids[n - 1];
	if (i.size == 0)
		i.first = i.last = i.recorded_first = id_zero;
	if (ret || keep < n)
		i.max_deleted = last_deleted;
	rc = stream_meta_commit(&t, k, m, &i);
	if (!rc && last)
		*last = ids[n - 1];
out:
	free(ids);
	buf_release(&val);
	return ks_txn_end(&t, rc);
}

int stream_del_if_empty(struct keyspace *ks, const struct ks_key *k)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct stream_info i;
	ks_txn_begin(&t, ks, k);
	int rc = stream_meta_txn(&t, k, false, &m, &i);
	if (!rc && i.size > 0)
		rc = -ENOTEMPTY;
	if (!rc) {
		ks_txn_resize(&t, k, 0, 0); /* size 0: commit deletes the key */
		rc = ks_txn_commit(&t);
	}
	return ks_txn_end(&t, rc);
}
