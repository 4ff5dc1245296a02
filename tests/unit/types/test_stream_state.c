/*
 * Unit tests for t_stream_state: the text of a stream's counters and
 * consumer groups round-trips every bit (binary names, extreme numbers),
 * hostile text (truncated lines, huge numbers, repeats, wrong field
 * counts) is refused with -EINVAL, and the verbs that store them replace
 * the state in one batch (read back equal; refused input changes
 * nothing), on a temporary database.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_convert.h"
#include "types/t_hash.h"
#include "types/t_stream.h"
#include "types/t_stream_state.h"

#include <inttypes.h>

static struct keyspace *ks;

static const char binname[] = "a\tb\nc\\d\x01"
			      "e\x7f";

/* A group state with every field at odd values and binary names. */
static void build(struct stream_gstate *gs)
{
	CHECK_INT(stream_gstate_add_group(gs, "g", 1, &(struct stream_id){5, 7}, -1, UINT64_MAX),
		  0);
	CHECK_INT(stream_gstate_add_consumer(gs, "alice", 5, 0, UINT64_MAX), 0);
	CHECK_INT(stream_gstate_add_consumer(gs, binname, sizeof(binname) - 1, 12, 13), 0);
	CHECK_INT(stream_gstate_add_pel(gs, &(struct stream_id){1, 0}, "alice", 5, 100, 1), 0);
	CHECK_INT(stream_gstate_add_pel(gs, &(struct stream_id){UINT64_MAX - 1, UINT64_MAX},
					binname, sizeof(binname) - 1, UINT64_MAX, UINT64_MAX),
		  0);
	CHECK_INT(stream_gstate_add_pel(gs, &(struct stream_id){2, 0}, "alice", 5, 7, 3), 0);
	CHECK_INT(stream_gstate_add_group(gs, binname, sizeof(binname) - 1,
					  &(struct stream_id){0, 0}, INT64_MIN, 0),
		  0);
	CHECK_INT(stream_gstate_add_group(gs, "zz", 2, &(struct stream_id){9, 9}, INT64_MAX, 4), 0);
	CHECK_INT(stream_gstate_add_consumer(gs, "c", 1, 1, 2), 0);
}

static void test_counters_text(void)
{
	struct stream_info i = {.size = 2,
				.last_generated = {UINT64_MAX - 1, UINT64_MAX},
				.max_deleted = {3, 4},
				.recorded_first = {5, 6},
				.entries_added = UINT64_MAX};
	struct stream_counters c;
	struct buf t = BUF_INIT;
	CHECK_INT(stream_counters_format(&i, &t), 0);
	CHECK_INT(stream_counters_parse(t.data, t.len, &c), 0);
	CHECK(c.last_generated.ms == UINT64_MAX - 1 && c.last_generated.seq == UINT64_MAX);
	CHECK(c.max_deleted.ms == 3 && c.max_deleted.seq == 4);
	CHECK(c.recorded_first.ms == 5 && c.recorded_first.seq == 6);
	CHECK(c.entries_added == UINT64_MAX);
	/* any order, blanks around, blank lines */
	const char ok[] = "\n entries-added 3 \nrecorded-first-entry-id 1-0\n\n"
			  "max-deleted-entry-id 0-0\r\nlast-generated-id\t9-9";
	CHECK_INT(stream_counters_parse(ok, sizeof(ok) - 1, &c), 0);
	CHECK(c.entries_added == 3 && c.last_generated.ms == 9);
	const char *bad[] = {
	    "",
	    "entries-added 3\n",
	    "entries-added 18446744073709551616\nlast-generated-id 1-0\nmax-deleted-entry-id "
	    "0-0\nrecorded-first-entry-id 0-0\n",
	    "entries-added -1\nlast-generated-id 1-0\nmax-deleted-entry-id 0-0\n"
	    "recorded-first-entry-id 0-0\n",
	    "entries-added 3\nentries-added 3\nlast-generated-id 1-0\nmax-deleted-entry-id "
	    "0-0\nrecorded-first-entry-id 0-0\n",
	    "entries-added 3\nlast-generated-id 1\nmax-deleted-entry-id 0-0\n"
	    "recorded-first-entry-id 0-0\n",
	    "entries-added 3\nlast-generated-id 1-0\nmax-deleted-entry-id 0-0\n"
	    "recorded-first-entry-id 0-0\nlength 3\n",
	    "entries-added 3 4\nlast-generated-id 1-0\nmax-deleted-entry-id 0-0\n"
	    "recorded-first-entry-id 0-0\n",
	};
	for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++)
		CHECK_INT(stream_counters_parse(bad[j], strlen(bad[j]), &c), -EINVAL);
	buf_release(&t);
}

static bool same_gstate(const struct stream_gstate *a, const struct stream_gstate *b)
{
	if (a->ng != b->ng || a->nc != b->nc || a->np != b->np)
		return false;
	for (size_t j = 0; j < a->ng; j++) {
		const struct stream_gs_group *x = &a->g[j], *y = &b->g[j];
		if (x->name.n != y->name.n ||
		    memcmp(stream_gs_bytes(a, x->name), stream_gs_bytes(b, y->name), x->name.n) ||
		    stream_id_cmp(&x->last_delivered, &y->last_delivered) ||
		    x->entries_read != y->entries_read || x->lag != y->lag || x->nc != y->nc ||
		    x->np != y->np)
			return false;
	}
	for (size_t j = 0; j < a->nc; j++)
		if (a->c[j].name.n != b->c[j].name.n ||
		    memcmp(stream_gs_bytes(a, a->c[j].name), stream_gs_bytes(b, b->c[j].name),
			   a->c[j].name.n) ||
		    a->c[j].seen_ms != b->c[j].seen_ms || a->c[j].active_ms != b->c[j].active_ms)
			return false;
	for (size_t j = 0; j < a->np; j++)
		if (stream_id_cmp(&a->p[j].id, &b->p[j].id) ||
		    a->p[j].consumer.n != b->p[j].consumer.n ||
		    memcmp(stream_gs_bytes(a, a->p[j].consumer),
			   stream_gs_bytes(b, b->p[j].consumer), a->p[j].consumer.n) ||
		    a->p[j].delivery_ms != b->p[j].delivery_ms ||
		    a->p[j].deliveries != b->p[j].deliveries)
			return false;
	return true;
}

static void test_groups_text(void)
{
	struct stream_gstate a = STREAM_GSTATE_INIT, b = STREAM_GSTATE_INIT;
	struct buf t = BUF_INIT, t2 = BUF_INIT;
	build(&a);
	CHECK_INT(stream_gstate_format(&a, &t), 0);
	/* names are escaped: one line per record, TAB-separated */
	CHECK(strstr(t.data, "consumer\ta\\tb\\nc\\\\d\\x01e\\x7f\t12\t13\n") != NULL);
	CHECK(strstr(t.data, "group\tg\t5-7\t-1\t18446744073709551615\n") != NULL);
	CHECK(strstr(t.data, "group\tzz\t9-9\t9223372036854775807\t4\n") != NULL);
	CHECK_INT(stream_gstate_parse(t.data, t.len, &b), 0);
	CHECK(same_gstate(&a, &b));
	CHECK_INT(stream_gstate_format(&b, &t2), 0);
	CHECK_MEM(t.data, t.len, t2.data, t2.len);
	/* a pending entry of a consumer without a line in its group (one
	 * of another group's is no help) is refused */
	static const char ghost[] = "group\tg\t1-0\t1\t0\nconsumer\tc\t1\t1\n"
				    "group\th\t1-0\t1\t0\npending\t1-0\tc\t1000\t1\n";
	CHECK_INT(stream_gstate_parse(ghost, sizeof(ghost) - 1, &b), -EINVAL);
	CHECK(b.ng == 0);
	/* an empty text is no group */
	CHECK_INT(stream_gstate_parse("\n\n", 2, &b), 0);
	CHECK(b.ng == 0);
	/* every truncation of the text either reads or is refused: never
	 * more groups than the whole */
	for (size_t n = 0; n < t.len; n++) {
		int rc = stream_gstate_parse(t.data, n, &b);
		CHECK(rc == 0 || rc == -EINVAL);
		if (rc == 0)
			CHECK(b.ng <= a.ng && b.np <= a.np);
	}
	stream_gstate_release(&a);
	stream_gstate_release(&b);
	buf_release(&t);
	buf_release(&t2);
}

static void test_groups_hostile(void)
{
	struct stream_gstate gs = STREAM_GSTATE_INIT;
	const char *bad[] = {
	    "consumer\tc\t1\t2\n",			    /* no group before */
	    "pending\t1-0\tc\t1\t1\n",			    /* no group before */
	    "group\tg\t1-0\t-1\t18446744073709551616\n",    /* lag over 2^64 - 1 */
	    "group\tg\t1-0\t9223372036854775808\t0\n",	    /* entries-read over */
	    "group\tg\t1-0\t-1\n",			    /* a field short */
	    "group\tg\t1-0\t-1\t0\t0\n",		    /* a field more */
	    "group\tg\t1-0\t-1\t0\t0\t0\t0\t0\t0\t0\t0\n",  /* many more */
	    "group\t\t1-0\t-1\t0\n",			    /* empty name */
	    "group\t7g\t1-0\t-1\t0\n",			    /* a digit first */
	    "group\tg\t1-0-0\t-1\t0\n",			    /* bad ID */
	    "group\tg\t01-0\t-1\t0\n",			    /* leading zero */
	    "group\tg\\x\t1-0\t-1\t0\n",		    /* bad escape */
	    "group\tg\t1-0\t-1\t0\ngroup\tg\t2-0\t-1\t0\n", /* group twice */
	    "group\tg\t1-0\t-1\t0\nconsumer\tc\t1\t-2\n",   /* negative time */
	    "group\tg\t1-0\t-1\t0\nconsumer\tc\t1\t1\nconsumer\tc\t1\t1\n",
	    "group\tg\t1-0\t-1\t0\npending\t1-0\tc\t1\t1\npending\t1-0\tc\t1\t1\n",
	    "group\tg\t1-0\t-1\t0\npending\t1-0\t\t1\t1\n",    /* empty consumer */
	    "group\tg\t1-0\t-1\t0\npending\t1-0\tc\t1\n",      /* truncated */
	    "group\tg\t1-0\t-1\t0\nPENDING\t1-0\tc\t1\t1\n",   /* case matters */
	    "group\tg\t1-0\t-1\t0\npending\t1-0\tc\t1\t +1\n", /* not a number */
	    "group\tg\t1-0\t-1\t0\npending\t1-0\tc\t1\t99999999999999999999\n",
	};
	for (size_t j = 0; j < sizeof(bad) / sizeof(bad[0]); j++) {
		CHECK_INT(stream_gstate_parse(bad[j], strlen(bad[j]), &gs), -EINVAL);
		CHECK(gs.ng == 0 && gs.nc == 0 && gs.np == 0);
	}
	/* a raw control byte reads as itself (as in entry files), and is
	 * written back escaped */
	const char nul[] = "group\tg\0\t1-0\t-1\t0\n";
	struct buf t = BUF_INIT;
	CHECK_INT(stream_gstate_parse(nul, sizeof(nul) - 1, &gs), 0);
	CHECK(gs.ng == 1 && gs.g[0].name.n == 2);
	CHECK_INT(stream_gstate_format(&gs, &t), 0);
	CHECK(t.len > 9 && memcmp(t.data, "group\tg\\x00\t", 12) == 0);
	buf_release(&t);
	/* the same consumer in two groups, the same ID in two: fine */
	const char ok[] = "group\ta\t1-0\t-1\t0\nconsumer\tc\t1\t1\npending\t1-0\tc\t1\t1\n"
			  "group\tb\t1-0\t-1\t0\nconsumer\tc\t1\t1\npending\t1-0\tc\t1\t1\n";
	CHECK_INT(stream_gstate_parse(ok, sizeof(ok) - 1, &gs), 0);
	CHECK(gs.ng == 2 && gs.nc == 2 && gs.np == 2);
	stream_gstate_release(&gs);
}

static void test_store(void)
{
	struct stream_gstate a = STREAM_GSTATE_INIT, b = STREAM_GSTATE_INIT;
	struct stream_info i;
	struct stream_str fv[2] = {{"f", 1}, {"v", 1}};
	build(&a);
	/* a missing key: replace makes an empty stream holding the groups */
	CHECK_INT(stream_gstate_replace(ks, KEY(DEFNS, "s"), &a), 0);
	CHECK_INT(stream_info(ks, KEY(DEFNS, "s"), &i), 0);
	CHECK(i.size == 0 && i.group_number == 3);
	CHECK_INT(stream_gstate_read(ks, KEY(DEFNS, "s"), &b), 0);
	/* stored order: name length, then name; pending entries by ID */
	CHECK(b.ng == 3 && b.np == 3 && b.nc == 3);
	CHECK(b.g[0].name.n == 1 && b.g[1].name.n == 2);
	CHECK(b.p[0].id.ms == 1 && b.p[1].id.ms == 2 && b.p[2].id.ms == UINT64_MAX - 1);
	/* the counts follow the lists: alice has 1 pending, the binary one 1 */
	uint64_t total = 0;
	CHECK_INT(stream_pending_summary(ks, KEY(DEFNS, "s"), "g", 1, &total,
					 &(struct stream_id){0}, &(struct stream_id){0}, NULL,
					 NULL),
		  0);
	CHECK(total == 3);
	/* XGROUP and XREADGROUP work on the restored groups */
	CHECK_INT(stream_add(ks, KEY(DEFNS, "s"), STREAM_ADD_ID, &(struct stream_id){10, 0}, fv, 2,
			     0, NULL),
		  0);
	CHECK_INT(stream_readgroup(ks, KEY(DEFNS, "s"), "zz", 2, "c", 1, NULL, 0, 0, NULL, NULL),
		  0);
	CHECK_INT(stream_gstate_read(ks, KEY(DEFNS, "s"), &b), 0);
	CHECK(b.np == 4);
	/* replacing with nothing destroys every group */
	struct stream_gstate none = STREAM_GSTATE_INIT;
	CHECK_INT(stream_gstate_replace(ks, KEY(DEFNS, "s"), &none), 0);
	CHECK_INT(stream_gstate_read(ks, KEY(DEFNS, "s"), &b), 0);
	CHECK(b.ng == 0 && b.np == 0);
	CHECK_INT(stream_info(ks, KEY(DEFNS, "s"), &i), 0);
	CHECK(i.group_number == 0 && i.size == 1);
	/* counters: XSETID's rules, a refusal changes nothing */
	struct stream_counters c = {{10, 0}, {11, 0}, {10, 0}, 5};
	CHECK_INT(stream_set_counters(ks, KEY(DEFNS, "s"), &c), -EINVAL); /* deleted > last */
	c = (struct stream_counters){{9, 0}, {0, 0}, {10, 0}, 5};
	CHECK_INT(stream_set_counters(ks, KEY(DEFNS, "s"), &c), -EINVAL); /* below the entry */
	c = (struct stream_counters){{20, 0}, {0, 0}, {10, 0}, 0};
	CHECK_INT(stream_set_counters(ks, KEY(DEFNS, "s"), &c), -EINVAL); /* added < size */
	CHECK_INT(stream_info(ks, KEY(DEFNS, "s"), &i), 0);
	CHECK(i.entries_added == 1 && i.last_generated.ms == 10);
	c = (struct stream_counters){{20, 3}, {15, 0}, {10, 0}, 9};
	CHECK_INT(stream_set_counters(ks, KEY(DEFNS, "s"), &c), 0);
	CHECK_INT(stream_info(ks, KEY(DEFNS, "s"), &i), 0);
	CHECK(i.entries_added == 9 && i.last_generated.ms == 20 && i.last_generated.seq == 3 &&
	      i.max_deleted.ms == 15 && i.first.ms == 10);
	/* NULL: the counters of the entries */
	CHECK_INT(stream_set_counters(ks, KEY(DEFNS, "s"), NULL), 0);
	CHECK_INT(stream_info(ks, KEY(DEFNS, "s"), &i), 0);
	CHECK(stream_counters_derived(&i));
	CHECK_INT(stream_set_counters(ks, KEY(DEFNS, "missing"), NULL), -ENOENT);
	/* another type */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(stream_gstate_replace(ks, KEY(DEFNS, "h"), &a), -KV_EWRONGTYPE);
	CHECK_INT(stream_gstate_read(ks, KEY(DEFNS, "h"), &b), -KV_EWRONGTYPE);
	CHECK_INT(stream_set_counters(ks, KEY(DEFNS, "h"), &c), -KV_EWRONGTYPE);
	stream_gstate_release(&a);
	stream_gstate_release(&b);
}

/* cp -a: a hash of entries and both state files converts at once. */
static int field_cb(void *arg, const char *f, size_t fn, const char *v, size_t vn,
		    struct convert_item *it)
{
	(void)arg;
	struct stream_str fv[2] = {{"k", 1}, {v, vn}};
	if (fn == 5 && !memcmp(f, "state", 5)) {
		it->num = UINT64_MAX;
		it->seq = STREAM_CONVERT_COUNTERS;
		return buf_set(&it->value, v, vn);
	}
	if (fn == 6 && !memcmp(f, "groups", 6)) {
		it->num = UINT64_MAX;
		it->seq = STREAM_CONVERT_GROUPS;
		return buf_set(&it->value, v, vn);
	}
	struct stream_id id;
	if (stream_id_parse(f, fn, false, &id))
		return -EINVAL;
	it->num = id.ms;
	it->seq = id.seq;
	return stream_value_encode(fv, 2, &it->value);
}

static void test_convert(void)
{
	const char st[] = "last-generated-id 9-0\nmax-deleted-entry-id 8-0\nentries-added 7\n"
			  "recorded-first-entry-id 2-0\n";
	const char gr[] = "group\tg\t3-0\t2\t0\nconsumer\tc\t5\t6\npending\t3-0\tc\t7\t2\n";
	struct stream_info i;
	struct stream_gstate gs = STREAM_GSTATE_INIT;
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hc"), "2-0", 3, "a", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hc"), "3-0", 3, "b", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hc"), "state", 5, st, sizeof(st) - 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hc"), "groups", 6, gr, sizeof(gr) - 1, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "hc"), KV_TYPE_STREAM, field_cb, NULL), 0);
	CHECK_INT(stream_info(ks, KEY(DEFNS, "hc"), &i), 0);
	CHECK(i.size == 2 && i.entries_added == 7 && i.last_generated.ms == 9 &&
	      i.max_deleted.ms == 8 && i.first.ms == 2 && i.last.ms == 3 && i.group_number == 1);
	CHECK_INT(stream_gstate_read(ks, KEY(DEFNS, "hc"), &gs), 0);
	CHECK(gs.ng == 1 && gs.nc == 1 && gs.np == 1 && gs.p[0].deliveries == 2 &&
	      gs.c[0].seen_ms == 5 && gs.g[0].entries_read == 2);
	/* counters that do not fit the entries: the hash stays */
	const char low[] = "last-generated-id 1-0\nmax-deleted-entry-id 0-0\nentries-added 7\n"
			   "recorded-first-entry-id 2-0\n";
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hd"), "2-0", 3, "a", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "hd"), "state", 5, low, sizeof(low) - 1, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "hd"), KV_TYPE_STREAM, field_cb, NULL), -EINVAL);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "hd"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_HASH);
	/* only groups, no entry */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "he"), "groups", 6, gr, sizeof(gr) - 1, NULL), 0);
	CHECK_INT(convert_hash(ks, KEY(DEFNS, "he"), KV_TYPE_STREAM, field_cb, NULL), 0);
	CHECK_INT(stream_info(ks, KEY(DEFNS, "he"), &i), 0);
	CHECK(i.size == 0 && i.group_number == 1);
	stream_gstate_release(&gs);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_fresh(NULL, false);
	test_counters_text();
	test_groups_text();
	test_groups_hostile();
	test_store();
	test_convert();
	fixture_done(ks);
	return check_done("test_stream_state");
}
