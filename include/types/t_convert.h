/*
 * t_convert: changing the type of a hash whose fields spell out another
 * collection, keeping its content: what `cp -a` needs, which makes a
 * directory (a new hash), fills it, and only then sets its
 * user.kvfs.type. The callback (the file system's reading of a field)
 * says what each field means in the target type; the new key replaces
 * the hash in one batch. Layer: types.
 */
#ifndef KVFS_T_CONVERT_H
#define KVFS_T_CONVERT_H

#include "keyspace/keyspace.h"
#include "types/t_bloom.h"

/* What one field of the hash becomes. */
struct convert_item {
	uint64_t num;		  /* list: the element's position; sortedint: the id;
				   * stream: ID ms; sketches: which state file (hyperloglog:
				   * 0 registers; bloom: 0 chain, i + 1 filter i) */
	uint64_t seq;		  /* stream: ID seq */
	double score;		  /* zset: the member's score */
	struct bloom_state bloom; /* bloom: what the chain field says */
	struct buf value;	  /* stream: the entry's stored value (stream_value_encode);
				   * timeseries: the chunk's samples (struct ts_sample); freed
				   * by convert_hash */
};

/* The stream state files' items (it->num UINT64_MAX). */
enum { STREAM_CONVERT_COUNTERS = 0, STREAM_CONVERT_GROUPS = 1 };

/* Read field f (value v) as an item of the target type: 0 with *it
 * filled, or a negative errno (-EINVAL: this field does not fit, which
 * the callback logs) that stops the conversion and is returned. */
typedef int (*convert_field_cb)(void *arg, const char *f, size_t fn, const char *v, size_t vn,
				struct convert_item *it);

/*
 * Turn hash k into type `to` (list, set, zset, sortedint, stream,
 * hyperloglog, bloom or timeseries), keeping its expiry, in one batch (a fresh
 * version; the hash's fields become garbage for compaction, as after DEL):
 *   list:      the values, in the order of it->num, which must be
 *              0 .. n-1, each once
 *   set:       the field names
 *   zset:      the field names with it->score
 *   sortedint: it->num, which must be distinct
 *   stream:    entries it->num-it->seq (distinct, not 0-0) holding
 *              it->value, with the counters of adding them in ID order;
 *              an item with it->num UINT64_MAX is a state file: it->seq
 *              STREAM_CONVERT_COUNTERS (it->value the text of the
 *              counters) or STREAM_CONVERT_GROUPS (the text of the
 *              groups), at most one of each (t_stream_state.h)
 *   hyperloglog: one field, it->num 0, its value the register array
 *   bloom:     one field with it->num 0 (it->bloom: the state) and any
 *              of the filters (it->num = i + 1, each once, i below the
 *              state's n_filters; a missing filter is zeros)
 *   timeseries: chunks named by it->num (their first timestamps), each
 *              holding the samples in it->value, not overlapping; the
 *              series takes the defaults (parameters, labels and rules
 *              come as attributes)
 * The whole hash is read into memory first. 0, or -ENOENT (no key; a
 * remembered empty hash has nothing to convert), -KV_EWRONGTYPE (not a
 * hash), -EINVAL (a field that does not fit, or positions/ids that
 * repeat or leave a gap; logged), -EOPNOTSUPP (another target type),
 * -ENOMEM, -EIO.
 */
int convert_hash(struct keyspace *ks, const struct ks_key *k, enum kv_type to, convert_field_cb cb,
		 void *arg);

#endif
