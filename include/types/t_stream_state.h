/*
 * t_stream_state: what a copy of a stream carries beside its entries
 * (docs/mapping.md section 19): the metadata counters no entry shows (the
 * text of the `state` file) and the consumer groups with their consumers
 * and pending entries (the text of the `groups` file), in a line format
 * that round-trips every stored bit, and the verbs that read and replace
 * them. The parsers and formatters are pure (no storage) but for their
 * log lines. Layer: types.
 */
#ifndef KVFS_T_STREAM_STATE_H
#define KVFS_T_STREAM_STATE_H

#include "types/t_stream.h"

/* ---- The metadata counters (the `state` file) ----------------------- */

/* What a stream's metadata holds that its entries do not say. */
struct stream_counters {
	struct stream_id last_generated, max_deleted, recorded_first;
	uint64_t entries_added;
};

/* Are i's counters those of adding its entries in ID order (then the
 * `state` file is not listed: it would carry nothing)? */
bool stream_counters_derived(const struct stream_info *i);
/* "NAME VALUE" lines: last-generated-id, max-deleted-entry-id,
 * entries-added, recorded-first-entry-id (appended to out). */
int stream_counters_format(const struct stream_info *i, struct buf *out);
/* Read that text: every name once, values an ID or a whole number, blank
 * lines skipped. 0, or -EINVAL (logged with the line number). */
int stream_counters_parse(const char *d, size_t dn, struct stream_counters *out);
/*
 * Set k's counters (XSETID with ENTRIESADDED and MAXDELETEDID, and the
 * recorded first ID), creating an empty stream if k has no record (a
 * remembered empty directory). Redis's rules: entries-added at least the
 * number of entries, last-generated-id at least the last entry's ID,
 * max-deleted-entry-id at most last-generated-id: else -EINVAL (logged),
 * nothing changed. c NULL: the counters of adding the entries in ID
 * order (rm of the `state` file). 0, -ENOENT (c NULL, no stream),
 * -KV_EWRONGTYPE, -EUCLEAN, -EIO.
 */
int stream_set_counters(struct keyspace *ks, const struct ks_key *k,
			const struct stream_counters *c);

/* ---- The consumer groups (the `groups` file) ------------------------- */

/* A string of a struct stream_gstate: bytes [off, off + n) of its `bytes`. */
struct stream_gs_str {
	size_t off, n;
};
struct stream_gs_group {
	struct stream_gs_str name;
	struct stream_id last_delivered;
	int64_t entries_read; /* as stored (-1: unknown) */
	uint64_t lag;	      /* as stored */
	size_t c0, nc;	      /* its consumers: c[c0 .. c0 + nc) */
	size_t p0, np;	      /* its pending entries: p[p0 .. p0 + np) */
};
struct stream_gs_consumer {
	struct stream_gs_str name;
	uint64_t seen_ms, active_ms;
};
struct stream_gs_pel {
	struct stream_id id;
	struct stream_gs_str consumer;
	uint64_t delivery_ms, deliveries;
};
/* Every group of a stream with its consumers and pending entries. The
 * counts the records hold (consumers and pending of a group, pending of
 * a consumer) are not kept: they are those of the lists. Zero it (or
 * STREAM_GSTATE_INIT) before use; stream_gstate_release frees it. */
struct stream_gstate {
	struct stream_gs_group *g;
	struct stream_gs_consumer *c;
	struct stream_gs_pel *p;
	size_t ng, nc, np;
	size_t gcap, ccap, pcap;
	struct buf bytes;
};
#define STREAM_GSTATE_INIT                                                                         \
	{                                                                                          \
		0                                                                                  \
	}
void stream_gstate_release(struct stream_gstate *gs);
/* The bytes of s in gs (borrowed until gs changes). */
static inline const char *stream_gs_bytes(const struct stream_gstate *gs, struct stream_gs_str s)
{
	return s.n ? gs->bytes.data + s.off : "";
}

/* Append a group, a consumer of the last group, a pending entry of the
 * last group (names copied). 0, -ENOMEM; -EINVAL without a group. */
int stream_gstate_add_group(struct stream_gstate *gs, const char *name, size_t n,
			    const struct stream_id *last_delivered, int64_t entries_read,
			    uint64_t lag);
int stream_gstate_add_consumer(struct stream_gstate *gs, const char *name, size_t n,
			       uint64_t seen_ms, uint64_t active_ms);
int stream_gstate_add_pel(struct stream_gstate *gs, const struct stream_id *id, const char *c,
			  size_t cn, uint64_t delivery_ms, uint64_t deliveries);

/*
 * The text: per group, in gs's order, the lines (fields TAB-separated,
 * names escaped as entry files are: \\ \t \n \r \xHH)
 *   group<TAB>NAME<TAB>LAST-DELIVERED-ID<TAB>ENTRIES-READ<TAB>LAG
 *   consumer<TAB>NAME<TAB>SEEN-MS<TAB>ACTIVE-MS           (each consumer)
 *   pending<TAB>ID<TAB>CONSUMER<TAB>DELIVERY-MS<TAB>DELIVERIES (each)
 * appended to out. 0, -ENOMEM.
 */
int stream_gstate_format(const struct stream_gstate *gs, struct buf *out);
/*
 * Read that text into gs (released first): consumer and pending lines
 * belong to the group line before them; blank lines are skipped. Refused
 * with -EINVAL (logged once, with the line number): an unknown line, a
 * wrong count of fields, a bad escape, number or ID, a group or consumer
 * name that is empty or starts with a digit (Kvrocks's rule), a group
 * named twice, a consumer or a pending ID twice in one group, a line
 * before the first group, a pending entry naming a consumer without a
 * line in its group (Kvrocks never stores one: its XCLAIM fails on it).
 * A pending entry may name an ID the stream does not hold. -ENOMEM.
 */
int stream_gstate_parse(const char *d, size_t dn, struct stream_gstate *gs);

/* k's groups as stored, read under its lock (one consistent state), in
 * stored order (name length, then name; pending entries by ID). 0 (no
 * group: gs empty), -ENOENT (no stream), -KV_EWRONGTYPE, -EUCLEAN, -EIO,
 * -ENOMEM. Records that do not decode are logged and left out. */
int stream_gstate_read(struct keyspace *ks, const struct ks_key *k, struct stream_gstate *gs);
/* Replace every group of k with gs in one batch (XGROUP DESTROY of each,
 * then the groups of gs with their records and counts; group_number
 * follows), creating an empty stream if k has no record. gs empty: every
 * group destroyed. 0, -KV_EWRONGTYPE, -EUCLEAN, -EIO, -ENOMEM. */
int stream_gstate_replace(struct keyspace *ks, const struct ks_key *k,
			  const struct stream_gstate *gs);

#endif
