/*
 * t_stream_int: what the two halves of the stream type share, private to
 * them: t_stream.c (metadata, entries: XADD, XRANGE, XDEL, XTRIM) and
 * t_stream_group.c (consumer groups: XGROUP, XREADGROUP, XACK, XCLAIM,
 * XPENDING, XINFO GROUPS). Nothing else includes it; the stream's API is
 * t_stream.h. Layer: types.
 */
#ifndef KVFS_T_STREAM_INT_H
#define KVFS_T_STREAM_INT_H

#include "keyspace/ks_txn.h"
#include "types/t_stream.h"
#include "types/t_stream_state.h"

/* An ID as stored: ms u64 BE | seq u64 BE (16 bytes). */
static inline void stream_id_get(const uint8_t *p, struct stream_id *id)
{
	id->ms = get_be64(p);
	id->seq = get_be64(p + 8);
}

static inline void stream_id_put(uint8_t *p, const struct stream_id *id)
{
	put_be64(p, id->ms);
	put_be64(p + 8, id->seq);
}

static inline bool stream_id_is_zero(const struct stream_id *id)
{
	return id->ms == 0 && id->seq == 0;
}

/* Is id among ids[0..n)? */
static inline bool stream_id_in(const struct stream_id *id, const struct stream_id *ids, size_t n)
{
	for (size_t j = 0; j < n; j++)
		if (stream_id_cmp(id, &ids[j]) == 0)
			return true;
	return false;
}

/* stream_info under transaction t (*m is t's, see ks_txn_get); with
 * create, a missing stream is made (ks_txn_open), every counter 0. */
int stream_meta_txn(struct ks_txn *t, const struct ks_key *k, bool create, struct enc_meta **m,
		    struct stream_info *i);
/* Stage k's metadata m with the counters of i (size and the 96-byte
 * tail), then commit t: ks_txn_commit's result. */
int stream_meta_commit(struct ks_txn *t, const struct ks_key *k, struct enc_meta *m,
		       const struct stream_info *i);
/* The stream-CF record of k's version `ver` at sub-key sub (the part
 * after the version) into out: 0, -ENOENT, -EIO. */
int stream_rec_get(struct keyspace *ks, const struct ks_key *k, uint64_t ver, const void *sub,
		   size_t sn, struct buf *out);

/* Check counters c against the entries of i (XSETID's rules: -EINVAL,
 * logged, i unchanged) and set them in i. */
int stream_counters_apply(const struct ks_key *k, struct stream_info *i,
			  const struct stream_counters *c);
/* Stage in t the deletion of every group record of k (i: its counters,
 * read in t) and the records of gs, with their counts; i->group_number
 * follows. 0, -EIO, -ENOMEM. */
int stream_gstate_stage(struct ks_txn *t, const struct ks_key *k, const struct stream_gstate *gs,
			struct stream_info *i);

#endif
