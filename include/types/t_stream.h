/*
 * t_stream: Redis streams as Kvrocks stores them (kvrocks-encoding.md
 * 6.9): XADD, XRANGE/XREVRANGE, XLEN, XDEL, XTRIM, XINFO, and consumer
 * groups (XGROUP, XREADGROUP, XACK, XPENDING, XCLAIM). Layer: types.
 * All verbs return 0 (or a documented count) or a negative errno:
 * -ENOENT (no such key, group or entry), -KV_EWRONGTYPE (another type),
 * -EEXIST (a group that exists), -EINVAL (bad input: logged once,
 * nothing changed), -EUCLEAN (corrupt records), -EROFS, -ENOMEM, -EIO.
 * A stream may have 0 entries and still exist (Kvrocks "emptyable").
 */
#ifndef KVFS_T_STREAM_H
#define KVFS_T_STREAM_H

#include "keyspace/keyspace.h"

/* An entry ID: milliseconds and sequence number. */
struct stream_id {
	uint64_t ms, seq;
};

/* Longest "ms-seq" text plus the NUL. */
#define STREAM_ID_MAX 42

int stream_id_cmp(const struct stream_id *a, const struct stream_id *b);
/* Parse "ms-seq" (both decimal, no sign, no leading zeros); with
 * allow_ms also a bare "ms" (seq 0). 0 or -EINVAL (not logged). */
int stream_id_parse(const char *s, size_t n, bool allow_ms, struct stream_id *id);
/* Write "ms-seq" and a NUL into out (STREAM_ID_MAX bytes); the length. */
size_t stream_id_format(const struct stream_id *id, char *out);

/* A field or value: stored bytes. */
struct stream_str {
	const char *p;
	size_t n;
};

/* Walk the strings of a stored entry value (varint32 length + bytes,
 * repeated: field, value, field, ...). Start with *pos = 0. 1 with the
 * next string borrowed from val, 0 at the end, -EUCLEAN if malformed. */
int stream_value_next(const char *val, size_t vn, size_t *pos, struct stream_str *s);
/* Check that entry id's stored value walks to its end: 0, or -EUCLEAN
 * after one log line naming k and the entry (ks_corrupt_entry). Pure
 * but for the log. */
int stream_value_check(const struct ks_key *k, const struct stream_id *id, const char *val,
		       size_t vn);

/* Encode nf strings (field, value, ...; nf even and >= 2, each below
 * 2^31 bytes) as a stored entry value into out (appended). 0, -EINVAL
 * (not logged), -ENOMEM. */
int stream_value_encode(const struct stream_str *fv, size_t nf, struct buf *out);

/* For t_convert: k, read in transaction t and renewed there as a stream
 * (ks_txn_renew; m its metadata), gets n entries ids[i] -> vals[i]
 * (stored values), ids ascending, distinct, none 0-0, the counters those
 * of adding them in order, or c (t_stream_state.h; NULL: those), and the
 * groups of gs (NULL: none); then t commits. n may be 0 with c or gs.
 * 0, what ks_txn_commit returns, or -EINVAL (logged for counters that
 * do not fit the entries; not committed). */
struct ks_txn;
struct stream_counters;
struct stream_gstate;
int stream_txn_create(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		      const struct stream_id *ids, const char *const *vals, const size_t *lens,
		      size_t n, const struct stream_counters *c, const struct stream_gstate *gs);

/* The metadata of a stream (XINFO STREAM), every counter as stored. */
struct stream_info {
	uint64_t size; /* entries */
	struct stream_id last_generated, recorded_first, max_deleted, first, last;
	uint64_t entries_added, group_number;
	uint64_t version;
};

/* How stream_add chooses the ID. */
enum stream_add_mode {
	STREAM_ADD_AUTO,    /* "*": now in ms, or the last ID + 1 */
	STREAM_ADD_ID,	    /* "ms-seq": must be greater than the last generated ID */
	STREAM_ADD_MS,	    /* "ms-*": that ms, the next sequence number */
	STREAM_ADD_RESTORE, /* any ID not yet present (kvfs's restore of a copied tree) */
};

/*
 * XADD key [NOMKSTREAM] <* | ms-* | id> field value [field value ...]:
 * nf strings (field, value, ...; nf even and >= 2). *out (may be NULL)
 * gets the new ID. flags: STREAM_NOMKSTREAM (-ENOENT for a missing key).
 * -EINVAL: an ID not above the last generated one (0-0 is never valid),
 * an odd or zero count of strings, a string over 2^31 bytes, or with
 * STREAM_ADD_RESTORE an ID that exists. Creating the key drops its
 * empty-collection record in the same batch.
 */
#define STREAM_NOMKSTREAM 0x1
int stream_add(struct keyspace *ks, const struct ks_key *k, enum stream_add_mode mode,
	       const struct stream_id *id, const struct stream_str *fv, size_t nf, unsigned flags,
	       struct stream_id *out);

/* XLEN: a missing key has 0 entries. */
int stream_len(struct keyspace *ks, const struct ks_key *k, uint64_t *n);
/* The stored counters (XINFO STREAM without the entries): 0, -ENOENT,
 * -KV_EWRONGTYPE, -EUCLEAN (logged: a short metadata tail), -EIO. */
int stream_info(struct keyspace *ks, const struct ks_key *k, struct stream_info *out);
/* The stored value of entry id into out (see stream_value_next).
 * -ENOENT if the key or entry is missing. */
int stream_get(struct keyspace *ks, const struct ks_key *k, const struct stream_id *id,
	       struct buf *out);

/*
 * Iterate entries in ID order (reverse: descending) from `from` to `to`
 * inclusive (NULL: unbounded), strictly after `from` when excl_from (and
 * before `to` when excl_to): XRANGE/XREVRANGE with "(" bounds. A missing
 * key iterates nothing; another type gives NULL and -KV_EWRONGTYPE in
 * *err. next() returns 1 with the ID and the value borrowed until the
 * next call, 0 at the end, or a negative errno.
 */
struct stream_iter;
struct stream_iter *stream_iter_new(struct keyspace *ks, const struct ks_key *k, bool reverse,
				    const struct stream_id *from, bool excl_from,
				    const struct stream_id *to, bool excl_to, int *err);
int stream_iter_next(struct stream_iter *it, struct stream_id *id, const char **val, size_t *vn);
/* The iterator's own copy of its key (for a log line), valid until
 * stream_iter_free. */
const struct ks_key *stream_iter_key(const struct stream_iter *it);
void stream_iter_free(struct stream_iter *it);

/* XDEL: *deleted (may be NULL) = how many of the n IDs existed. A
 * missing key deletes nothing. The counters change as Kvrocks changes
 * them (max_deleted_entry_id, first/last, recorded_first). */
int stream_del(struct keyspace *ks, const struct ks_key *k, const struct stream_id *ids, size_t n,
	       uint64_t *deleted);

/* XTRIM MAXLEN n / MINID id (exact trimming). *deleted may be NULL. */
enum stream_trim { STREAM_TRIM_MAXLEN, STREAM_TRIM_MINID };
int stream_trim(struct keyspace *ks, const struct ks_key *k, enum stream_trim how, uint64_t maxlen,
		const struct stream_id *minid, uint64_t *deleted);

/*
 * n XADD key [NOMKSTREAM] [MAXLEN|MINID [=] X] * field value ... in one
 * batch, as the n commands one after the other leave the stream (trim
 * NULL: no trimming; Kvrocks trims exactly, and so does "~" here). *last
 * (may be NULL) gets the last ID generated, stored or not. -ENOENT with
 * STREAM_NOMKSTREAM on a missing key; -EINVAL as stream_add (nothing
 * stored).
 */
struct stream_entry_in {
	const struct stream_str *fv;
	size_t nf;
};
struct stream_trim_opt {
	enum stream_trim how;
	uint64_t maxlen;
	struct stream_id minid;
};
int stream_add_many(struct keyspace *ks, const struct ks_key *k, const struct stream_entry_in *e,
		    size_t n, const struct stream_trim_opt *trim, unsigned flags,
		    struct stream_id *last);

/* Delete the key if it is a stream with no entries (rmdir of an emptied
 * stream). -ENOTEMPTY if it has entries, -ENOENT, -KV_EWRONGTYPE. */
int stream_del_if_empty(struct keyspace *ks, const struct ks_key *k);

/* ---- Consumer groups ---------------------------------------------- */

/* A group as stored (6 u64) plus the lag XINFO GROUPS computes. */
struct stream_group {
	uint64_t consumers, pending;
	struct stream_id last_delivered;
	int64_t entries_read; /* -1: unknown */
	uint64_t lag;	      /* as computed for XINFO (UINT64_MAX: unknown) */
};
struct stream_consumer {
	uint64_t pending, seen_ms, active_ms; /* last attempted / successful interaction */
};
struct stream_pel {
	uint64_t delivery_ms, deliveries;
	struct stream_str consumer;
};

/*
 * XGROUP CREATE key group <id | $> [MKSTREAM] [ENTRIESREAD n]: id NULL
 * means "$" (the last entry). entries_read: -1 unless given (with "$",
 * Redis's rule: the entries added so far). -EEXIST (BUSYGROUP),
 * -ENOENT (no key and no STREAM_MKSTREAM), -EINVAL (a name starting
 * with a digit, as Kvrocks refuses, or empty).
 */
#define STREAM_MKSTREAM		  0x1
#define STREAM_ENTRIES_READ_UNSET INT64_MIN
int stream_group_create(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
			const struct stream_id *id, int64_t entries_read, unsigned flags);
/* XGROUP DESTROY: 1 destroyed, 0 no such group; -ENOENT without key. */
int stream_group_destroy(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn);
/* XGROUP SETID key group <id | $> [ENTRIESREAD n]. -ENOENT. */
int stream_group_setid(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		       const struct stream_id *id, int64_t entries_read);
/* XGROUP CREATECONSUMER: 1 created, 0 existed. -ENOENT (key, group). */
int stream_consumer_create(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
			   const char *c, size_t cn);
/* XGROUP DELCONSUMER: *pending = its pending entries (dropped); 0 and
 * *pending = 0 if there is no such consumer. -ENOENT (key, group). */
int stream_consumer_del(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
			const char *c, size_t cn, uint64_t *pending);

/* Called per entry a group verb returns: value NULL when the entry was
 * deleted from the stream (XREADGROUP history, XCLAIM) or not asked for
 * (JUSTID). Return 0, or a negative errno to stop (it is returned). */
typedef int (*stream_entry_cb)(void *arg, const struct stream_id *id, const char *val, size_t vn);

/*
 * XREADGROUP GROUP g c [COUNT n] [NOACK] STREAMS key <> | id>: start NULL
 * is ">" (new entries after the group's last delivered ID, recorded as
 * pending for c unless STREAM_NOACK); otherwise c's pending entries
 * after start (their delivery count and time are updated). count 0 = no
 * limit. The consumer is created if missing. -ENOENT (key or group).
 */
#define STREAM_NOACK 0x1
int stream_readgroup(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		     const char *c, size_t cn, const struct stream_id *start, uint64_t count,
		     unsigned flags, stream_entry_cb cb, void *arg);
/* XACK: *acked = how many of the ids were pending. -ENOENT never: a
 * missing key or group acknowledges 0. */
int stream_ack(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
	       const struct stream_id *ids, size_t n, uint64_t *acked);

/* Called per pending entry (XPENDING extended) or per consumer. */
typedef int (*stream_pel_cb)(void *arg, const struct stream_id *id, const struct stream_pel *p,
			     uint64_t idle_ms);
typedef int (*stream_consumer_cb)(void *arg, const char *name, size_t n,
				  const struct stream_consumer *c);
typedef int (*stream_group_cb)(void *arg, const char *name, size_t n, const struct stream_group *g);

/*
 * XPENDING key group [[IDLE min] start end count [consumer]]: the pending
 * entries of group g from `from` to `to` (NULL: unbounded), at most count
 * (0: all), only of consumer c (NULL: all), idle at least min_idle ms.
 * -ENOENT (key or group).
 */
int stream_pending(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		   const struct stream_id *from, const struct stream_id *to, uint64_t count,
		   const char *c, size_t cn, uint64_t min_idle, stream_pel_cb cb, void *arg);

/*
 * XPENDING key group (the summary): *count pending entries of group g
 * (the group's counter), the smallest and largest pending IDs (0-0 when
 * none), and cb (may be NULL) per consumer with pending entries, with its
 * count. -ENOENT (key or group).
 */
int stream_pending_summary(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
			   uint64_t *count, struct stream_id *min, struct stream_id *max,
			   stream_consumer_cb cb, void *arg);

/*
 * XCLAIM key group consumer min-idle id... [JUSTID] [FORCE]: entries
 * pending for at least min_idle ms move to consumer c (created if
 * missing), delivery count + 1 (not with JUSTID), delivery time now.
 * An ID no longer in the stream is dropped from the PEL. cb (may be NULL)
 * gets each claimed entry. -ENOENT (key or group).
 */
#define STREAM_JUSTID 0x1
#define STREAM_FORCE  0x2
int stream_claim(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		 const char *c, size_t cn, uint64_t min_idle, const struct stream_id *ids, size_t n,
		 unsigned flags, stream_entry_cb cb, void *arg);

/*
 * XAUTOCLAIM key group consumer min-idle start [COUNT count] [JUSTID]:
 * walk group g's pending entries from `start` (inclusive), looking at up
 * to 10 x count of them, and claim (as stream_claim) up to count that
 * are idle at least min_idle ms; cb gets each claimed entry, gone (may be
 * NULL) each pending ID no longer in the stream, which is dropped from
 * the PEL. *next = the pending ID to continue from, 0-0 when the walk
 * reached the end. count 0 means 100. -ENOENT (key or group).
 */
int stream_autoclaim(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		     const char *c, size_t cn, uint64_t min_idle, const struct stream_id *start,
		     uint64_t count, unsigned flags, stream_entry_cb cb, stream_entry_cb gone,
		     void *arg, struct stream_id *next);

/* XINFO GROUPS / XINFO CONSUMERS, in stored order: by name length, then
 * by name (the u64 length comes first in the sub-key). -ENOENT. */
int stream_groups(struct keyspace *ks, const struct ks_key *k, stream_group_cb cb, void *arg);
int stream_consumers(struct keyspace *ks, const struct ks_key *k, const char *g, size_t gn,
		     stream_consumer_cb cb, void *arg);

#endif
