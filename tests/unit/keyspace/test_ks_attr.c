/*
 * Unit tests for ks_attr on a temporary database: the record bytes,
 * records written in the verb's own batch (and not at all when the verb
 * fails), setattr and user.* xattrs with their errors, DEL / re-create /
 * RENAME / field renames / list renumbering, pending expiry of empty
 * collections, and the compaction rule for stale records.
 */
#include "check.h"
#include "fixture.h"
#include "keyspace/ks_attr.h"
#include "keyspace/ks_gc.h"
#include "types/t_hash.h"
#include "types/t_list.h"
#include "types/t_string.h"

/* 06 "__kvfs" "@" 0B "__namespace": the start of every attribute record of
 * a key of the default namespace. */
#define ATTR_HEX RES_HEX " 40 " NS_HEX

/* A key whose writes change no times (ks_attr_none). */
#define KEYN(n, k) KEYA(n, k, &ks_attr_none)

/* A new database for each test (each closes its own at the end). */
static struct keyspace *fresh_ks(void)
{
	return fixture_fresh(NULL, false);
}

static uint64_t version_of(struct keyspace *ks, const struct ks_key *k)
{
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, k, &info), 0);
	return info.version;
}

/* A string written with a staged TOUCH gets its times record, in bytes. */
static void test_record_bytes(void)
{
	struct keyspace *ks = fresh_ks();
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
	struct buf raw = BUF_INIT;
	struct ks_attr a;
	struct timespec before;
	clock_gettime(CLOCK_REALTIME, &before);

	CHECK_INT(string_set(ks, KEYA(DEFNS, "s", &ch), "v", 1, 0), 0);
	/* "@" | 0B __namespace | key_len 00000001 | "s" | "T" */
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 01 73 54", &raw), 0);
	/* v1 string header, ver 0, then three times of 12 bytes. */
	CHECK_INT(raw.len, 9 + 8 + 36);
	CHECK_MEM(raw.data, 17, "\x81\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 17);
	CHECK(get_be64(raw.data + 17) >= (uint64_t)before.tv_sec);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, &a), 0);
	CHECK(a.has == KS_ATTR_HAS_TIMES);
	CHECK(a.mtime.tv_sec >= before.tv_sec && a.mtime.tv_sec == a.ctime.tv_sec);
	/* Nothing staged: the key's times move all the same (a change made
	 * by any path is a change); ks_attr_none says the write changes no
	 * times, and nothing is written. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "t"), "v", 1, 0), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "t"), 0, NULL, 0, &a), 0);
	CHECK(a.has == KS_ATTR_HAS_TIMES);
	CHECK(a.mtime.tv_sec >= before.tv_sec && a.mtime.tv_sec == a.ctime.tv_sec);
	CHECK_INT(string_set(ks, KEYN(DEFNS, "u"), "v", 1, 0), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "u"), 0, NULL, 0, &a), 0);
	CHECK(a.has == 0);
	/* Nor in the reserved namespace. */
	CHECK_INT(string_set(ks, KEY("__kvfs", "r"), "v", 1, 0), 0);
	CHECK_INT(ks_attr_get(ks, KEY("__kvfs", "r"), 0, NULL, 0, &a), 0);
	CHECK(a.has == 0);
	/* A verb that fails writes no record. */
	CHECK_INT(hash_set(ks, KEYA(DEFNS, "s", &ch), "f", 1, "v", 1, NULL), -KV_EWRONGTYPE);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 01 73"), 1);
	buf_release(&raw);
	ks_close(ks);
}

/* An entry's record carries the key's version in its name. */
static void test_entry_same_batch(void)
{
	struct keyspace *ks = fresh_ks();
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH, .entry = "f", .elen = 1};
	struct buf raw = BUF_INIT;
	char hex[512];
	struct ks_attr a;

	CHECK_INT(hash_set(ks, KEYA(DEFNS, "h", &ch), "f", 1, "v", 1, NULL), 0);
	uint64_t v = version_of(ks, KEY(DEFNS, "h"));
	snprintf(hex, sizeof(hex), ATTR_HEX " 00 00 00 01 68 74 %016llx 66", (unsigned long long)v);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, hex, &raw), 0);
	CHECK_INT(raw.len, 9 + 8 + 36);
	/* The key's times record says which version it was written for. */
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 01 68 54", &raw), 0);
	CHECK(get_be64(raw.data + 9) == v);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v, "f", 1, &a), 0);
	CHECK(a.has == KS_ATTR_HAS_TIMES);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v, "g", 1, &a), 0);
	CHECK(a.has == 0);
	/* Records of another version are not seen. */
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v + 1, "f", 1, &a), 0);
	CHECK(a.has == 0);
	buf_release(&raw);
	ks_close(ks);
}

static void test_setattr(void)
{
	struct keyspace *ks = fresh_ks();
	struct ks_attr a;
	struct ks_attr_set s = {
	    .mask = KS_ATTR_SET_MODE | KS_ATTR_SET_UID, .mode = 0100640, .uid = 7};

	CHECK_INT(string_set(ks, KEYN(DEFNS, "s"), "v", 1, 0), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "s"), NULL, 0, &s), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, &a), 0);
	CHECK(a.has == (KS_ATTR_HAS_MODE | KS_ATTR_HAS_UID));
	CHECK_INT(a.mode, 0640);
	CHECK_INT(a.uid, 7);
	s.mask = KS_ATTR_SET_GID | KS_ATTR_SET_TIMES;
	s.gid = 9;
	s.mtime = (struct timespec){981173106, 123456789};
	s.atime = (struct timespec){-86400, 5};
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "s"), NULL, 0, &s), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, &a), 0);
	CHECK(a.has == (KS_ATTR_HAS_MODE | KS_ATTR_HAS_UID | KS_ATTR_HAS_GID | KS_ATTR_HAS_TIMES));
	CHECK_INT(a.mode, 0640); /* kept */
	CHECK_INT(a.gid, 9);
	CHECK(a.mtime.tv_sec == 981173106 && a.mtime.tv_nsec == 123456789);
	CHECK(a.atime.tv_sec == -86400 && a.atime.tv_nsec == 5);
	/* An entry. */
	CHECK_INT(hash_set(ks, KEYN(DEFNS, "h"), "f", 1, "v", 1, NULL), 0);
	uint64_t v = version_of(ks, KEY(DEFNS, "h"));
	s.mask = KS_ATTR_SET_MODE;
	s.mode = 0600;
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "h"), "f", 1, &s), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v, "f", 1, &a), 0);
	CHECK(a.has == KS_ATTR_HAS_MODE && a.mode == 0600);
	/* The key's record now says an entry has attributes (a listing
	 * then reads them); it has no attributes of its own. */
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v, NULL, 0, &a), 0);
	CHECK(a.has == 0 && a.entry_attrs);
	CHECK_INT(ks_attr_get_times(ks, KEY(DEFNS, "h"), v, "f", 1, &a), 0);
	CHECK(a.has == 0);
	CHECK_INT(hash_set(ks, KEYN(DEFNS, "h2"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h2"), version_of(ks, KEY(DEFNS, "h2")), NULL, 0, &a),
		  0);
	CHECK(!a.entry_attrs);
	/* Missing key: -ENOENT, nothing written. */
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "nope"), NULL, 0, &s), -ENOENT);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 04 6E 6F 70 65"), 0);
	/* An entry of a string: -ENOENT. */
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "s"), "f", 1, &s), -ENOENT);
	/* An empty collection keeps attributes (version 0) into its life. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "e"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "e"), NULL, 0, &s), 0);
	CHECK_INT(hash_set(ks, KEYN(DEFNS, "e"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "e"), version_of(ks, KEY(DEFNS, "e")), NULL, 0, &a),
		  0);
	CHECK(a.has == KS_ATTR_HAS_MODE && a.mode == 0600);
	ks_close(ks);
}

static void test_xattr(void)
{
	struct keyspace *ks = fresh_ks();
	struct buf out = BUF_INIT;
	static char big[KS_XATTR_SIZE_MAX + 1];
	char name[300];

	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "v", 1, 0), 0);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, "user.a", 6, &out), -ENODATA);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.a", 6, "1", 1, 0), 0);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.b", 6, "", 0, 0), 0);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, "user.a", 6, &out), 0);
	CHECK_MEM(out.data, out.len, "1", 1);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, "user.b", 6, &out), 0);
	CHECK_INT(out.len, 0);
	buf_reset(&out);
	CHECK_INT(ks_xattr_list(ks, KEY(DEFNS, "s"), 0, NULL, 0, &out), 0);
	CHECK_MEM(out.data, out.len, "user.a\0user.b\0", 14);
	/* Replace keeps one copy. */
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.a", 6, "22", 2, 0), 0);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, "user.a", 6, &out), 0);
	CHECK_MEM(out.data, out.len, "22", 2);
	/* Errors change nothing. */
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.a", 6, "3", 1, KS_XATTR_CREATE),
		  -EEXIST);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.c", 6, "3", 1, KS_XATTR_REPLACE),
		  -ENODATA);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.c", 6, NULL, 0, 0), -ENODATA);
	memset(name, 'n', sizeof(name));
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, name, 256, "3", 1, 0), -ERANGE);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.c", 6, big, sizeof(big), 0),
		  -E2BIG);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.c", 6, big, sizeof(big) - 1, 0),
		  -ENOSPC);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "nope"), NULL, 0, "user.c", 6, "3", 1, 0), -ENOENT);
	buf_reset(&out);
	CHECK_INT(ks_xattr_list(ks, KEY(DEFNS, "s"), 0, NULL, 0, &out), 0);
	CHECK_MEM(out.data, out.len, "user.b\0user.a\0", 14);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, "user.a", 6, &out), 0);
	CHECK_MEM(out.data, out.len, "22", 2);
	/* Remove. */
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.a", 6, NULL, 0, 0), 0);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, "user.a", 6, &out), -ENODATA);
	/* An entry's xattrs are its own. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "v", 1, NULL), 0);
	uint64_t v = version_of(ks, KEY(DEFNS, "h"));
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "h"), "f", 1, "user.x", 6, "y", 1, 0), 0);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "h"), v, "f", 1, "user.x", 6, &out), 0);
	CHECK_MEM(out.data, out.len, "y", 1);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "h"), v, NULL, 0, "user.x", 6, &out), -ENODATA);
	/* ks_xattr_change stores the given mtime and atime with ctime now,
	 * in the same batch; a refused change stores no times either. */
	struct ks_attr_set t = {.mask = KS_ATTR_SET_TIMES | KS_ATTR_SET_MODE, .mode = 0777};
	struct ks_attr a;
	struct timespec before;
	t.mtime.tv_sec = 981173106;
	t.atime.tv_sec = 981173107;
	CHECK_INT(
	    ks_xattr_change(ks, KEY(DEFNS, "h"), "f", 1, "user.x", 6, "z", 1, KS_XATTR_CREATE, &t),
	    -EEXIST);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v, "f", 1, &a), 0);
	CHECK(!(a.has & KS_ATTR_HAS_TIMES));
	clock_gettime(CLOCK_REALTIME, &before);
	CHECK_INT(ks_xattr_change(ks, KEY(DEFNS, "h"), "f", 1, "user.x", 6, "z", 1, 0, &t), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v, "f", 1, &a), 0);
	CHECK(a.has & KS_ATTR_HAS_TIMES);
	CHECK(!(a.has & KS_ATTR_HAS_MODE)); /* times only: never a mode */
	CHECK_INT(a.mtime.tv_sec, 981173106);
	CHECK_INT(a.atime.tv_sec, 981173107);
	CHECK(a.ctime.tv_sec >= before.tv_sec);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "h"), v, "f", 1, "user.x", 6, &out), 0);
	CHECK_MEM(out.data, out.len, "z", 1);
	buf_release(&out);
	ks_close(ks);
}

/* DEL drops a key's records; a re-created key starts without any. */
static void test_del_recreate(void)
{
	struct keyspace *ks = fresh_ks();
	struct ks_attr_set s = {.mask = KS_ATTR_SET_MODE, .mode = 0600};
	struct ks_attr a;
	struct buf out = BUF_INIT;

	CHECK_INT(string_set(ks, KEYN(DEFNS, "s"), "v", 1, 0), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "s"), NULL, 0, &s), 0);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "s"), NULL, 0, "user.a", 6, "1", 1, 0), 0);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "s")), 0);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 01 73"), 0);
	CHECK_INT(string_set(ks, KEYN(DEFNS, "s"), "v", 1, 0), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "s"), 0, NULL, 0, &a), 0);
	CHECK(a.has == 0);
	/* A hash's field records are of its version: DEL leaves them as
	 * garbage, and the re-created hash does not see them. */
	CHECK_INT(hash_set(ks, KEYN(DEFNS, "h"), "f", 1, "v", 1, NULL), 0);
	uint64_t v1 = version_of(ks, KEY(DEFNS, "h"));
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "h"), "f", 1, &s), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "h"), NULL, 0, &s), 0);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "h")), 0);
	CHECK_INT(hash_set(ks, KEYN(DEFNS, "h"), "f", 1, "v", 1, NULL), 0);
	uint64_t v2 = version_of(ks, KEY(DEFNS, "h"));
	CHECK(v1 != v2);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v2, "f", 1, &a), 0);
	CHECK(a.has == 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v2, NULL, 0, &a), 0);
	CHECK(a.has == 0);
	/* A key record of another version (the key deleted and made again by
	 * someone else) is not the new key's. */
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "h"), NULL, 0, &s), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v2 + 1, NULL, 0, &a), 0);
	CHECK(a.has == 0);
	/* A key that expired (or was deleted by someone else) and is made
	 * again starts without the dead key's records. */
	CHECK_INT(string_set(ks, KEYN(DEFNS, "x"), "v", 1, 0), 0);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "x"), NULL, 0, "user.a", 6, "1", 1, 0), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "x"), now_ms() + 20), 0);
	struct timespec ts = {0, 50 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "x"), 0, NULL, 0, "user.a", 6, &out), 0);
	CHECK_INT(string_set(ks, KEYN(DEFNS, "x"), "w", 1, 0), 0);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "x"), 0, NULL, 0, "user.a", 6, &out), -ENODATA);
	/* rmdir of an empty collection drops its records; mkdir starts fresh. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "e"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "e"), NULL, 0, &s), 0);
	CHECK_INT(ks_empty_remove(ks, KEY(DEFNS, "e")), 0);
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "e"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "e"), 0, NULL, 0, &a), 0);
	CHECK(a.has == 0);
	buf_release(&out);
	ks_close(ks);
}

static void test_rename(void)
{
	struct keyspace *ks = fresh_ks();
	struct ks_attr_set s = {.mask = KS_ATTR_SET_MODE, .mode = 0600};
	struct ks_attr a;
	struct buf out = BUF_INIT;

	/* A key rename moves key and entry records and replaces the
	 * target's. */
	CHECK_INT(hash_set(ks, KEYN(DEFNS, "a"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "a"), NULL, 0, &s), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "a"), "f", 1, &s), 0);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "a"), "f", 1, "user.x", 6, "y", 1, 0), 0);
	CHECK_INT(string_set(ks, KEYN(DEFNS, "b"), "v", 1, 0), 0);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "b"), NULL, 0, "user.old", 8, "o", 1, 0), 0);
	uint64_t v = version_of(ks, KEY(DEFNS, "a"));
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "a"), KEY(DEFNS, "b")), 0);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 01 61"), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "b"), v, NULL, 0, &a), 0);
	CHECK(a.has == KS_ATTR_HAS_MODE && a.mode == 0600);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "b"), v, NULL, 0, "user.old", 8, &out), -ENODATA);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "b"), v, "f", 1, "user.x", 6, &out), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "b"), v, "f", 1, &a), 0);
	CHECK(a.has == KS_ATTR_HAS_MODE);
	/* A field rename with a staged MOVE moves the field's records in
	 * the rename's batch, replacing the target's. */
	CHECK_INT(hash_set(ks, KEYN(DEFNS, "b"), "g", 1, "w", 1, NULL), 0);
	CHECK_INT(ks_xattr_set(ks, KEY(DEFNS, "b"), "g", 1, "user.g", 6, "g", 1, 0), 0);
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH | KS_ATTR_MOVE,
				    .entry = "g",
				    .elen = 1,
				    .from = KEY(DEFNS, "b"),
				    .fentry = "f",
				    .flen = 1};
	CHECK_INT(hash_rename_field(ks, KEYA(DEFNS, "b", &ch), "f", 1, "g", 1), 0);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "b"), v, "g", 1, "user.x", 6, &out), 0);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "b"), v, "g", 1, "user.g", 6, &out), -ENODATA);
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "b"), v, "f", 1, "user.x", 6, &out), -ENODATA);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "b"), v, "g", 1, &a), 0);
	CHECK(a.has == KS_ATTR_HAS_MODE); /* f had no times: g's went */
	/* Between two hashes. */
	CHECK_INT(hash_set(ks, KEYN(DEFNS, "c"), "z", 1, "w", 1, NULL), 0);
	struct ks_attr_change cm = ch, ct = {.flags = KS_ATTR_TOUCH};
	cm.from = KEY(DEFNS, "b");
	cm.fentry = "g";
	cm.entry = "h";
	CHECK_INT(
	    hash_move_field(ks, KEYA(DEFNS, "b", &ct), "g", 1, KEYA(DEFNS, "c", &cm), "h", 1, 0),
	    0);
	uint64_t vc = version_of(ks, KEY(DEFNS, "c"));
	CHECK_INT(ks_xattr_get(ks, KEY(DEFNS, "c"), vc, "h", 1, "user.x", 6, &out), 0);
	CHECK_MEM(out.data, out.len, "y", 1);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "c"), vc, NULL, 0, &a), 0);
	CHECK(a.entry_attrs); /* moved in: listings of c look at entry attrs */
	buf_release(&out);
	ks_close(ks);
}

/* A list's removal renumbers: every position's records go at once. */
static void test_renumber(void)
{
	struct keyspace *ks = fresh_ks();
	struct ks_attr_set s = {.mask = KS_ATTR_SET_MODE, .mode = 0600};
	struct list_value vals[3] = {{"a", 1}, {"b", 1}, {"c", 1}};
	struct ks_attr a;

	CHECK_INT(list_push(ks, KEY(DEFNS, "l"), LIST_TAIL, vals, 3, NULL), 0);
	uint64_t v = version_of(ks, KEY(DEFNS, "l"));
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "l"), "0", 1, &s), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "l"), "2", 1, &s), 0);
	struct ks_attr_change ch = {
	    .flags = KS_ATTR_TOUCH | KS_ATTR_DROP | KS_ATTR_RENUMBER, .entry = "0", .elen = 1};
	CHECK_INT(list_pop(ks, KEYA(DEFNS, "l", &ch), LIST_HEAD, 0, NULL), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "l"), v, "2", 1, &a), 0);
	CHECK(a.has == 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "l"), v, NULL, 0, &a), 0);
	CHECK(a.has == KS_ATTR_HAS_TIMES);
	ks_close(ks);
}

/* An empty collection holds an expiry until its first entry. */
static void test_pending_expiry(void)
{
	struct keyspace *ks = fresh_ks();
	struct ks_info info;
	uint64_t exp = now_ms() + 100000;

	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "z"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "z"), exp), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "z"), &info), 0);
	CHECK(info.empty && info.expire_ms == exp && info.type == KV_TYPE_HASH);
	CHECK_INT(ks_empty_retype(ks, KEY(DEFNS, "z"), KV_TYPE_SET), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "z"), &info), 0);
	CHECK(info.empty && info.expire_ms == exp && info.type == KV_TYPE_SET);
	CHECK_INT(ks_empty_retype(ks, KEY(DEFNS, "z"), KV_TYPE_HASH), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "z"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "z"), &info), 0);
	CHECK(!info.empty && info.expire_ms == exp && info.size == 1);
	/* Persist an empty one: the pending expiry goes. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "y"), KV_TYPE_LIST), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "y"), exp), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "y"), 0), 0);
	struct list_value one = {"a", 1};
	CHECK_INT(list_push(ks, KEY(DEFNS, "y"), LIST_TAIL, &one, 1, NULL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "y"), &info), 0);
	CHECK(info.expire_ms == 0 && info.size == 1);
	/* A pending expiry that passes: the empty collection is gone. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "x"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "x"), now_ms() + 30), 0);
	struct timespec ts = {0, 60 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "x"), &info), -ENOENT);
	struct ks_key_iter *it = ks_key_iter_new(ks, DEFNS, strlen(DEFNS), NULL, 0);
	const char *k;
	size_t kn;
	int n = 0;
	while (ks_key_iter_next(it, &k, &kn, &info) == 1)
		n += kn == 1 && k[0] == 'x';
	ks_key_iter_free(it);
	CHECK_INT(n, 0);
	/* A time in the past removes an empty collection at once. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "w"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "w"), 1), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "w"), &info), -ENOENT);
	ks_close(ks);
}

static void test_gc(void)
{
	struct keyspace *ks = fresh_ks();
	struct ks_attr_set s = {.mask = KS_ATTR_SET_MODE, .mode = 0600};
	struct enc_meta m = {.type = KV_TYPE_HASH, .v1 = true, .version = 42, .size = 1};
	uint64_t now = 1700000000000;

	/* The decisions. */
	CHECK(ks_gc_attr_dead(NULL, true, 42, now));
	CHECK(!ks_gc_attr_dead(NULL, false, 0, now));
	CHECK(ks_gc_attr_dead(NULL, false, 42, now));
	CHECK(!ks_gc_attr_dead(&m, true, 42, now));
	CHECK(ks_gc_attr_dead(&m, true, 41, now));
	CHECK(!ks_gc_attr_dead(&m, false, 0, now));
	CHECK(!ks_gc_attr_dead(&m, false, 42, now));
	CHECK(ks_gc_attr_dead(&m, false, 41, now));
	m.expire_ms = now - 1;
	CHECK(!ks_gc_attr_dead(&m, true, 42, now)); /* the grace */
	m.expire_ms = now - KS_GC_GRACE_MS - 1;
	CHECK(ks_gc_attr_dead(&m, true, 42, now));

	/* Parsing a record's name. */
	struct ks_key k;
	bool is_entry;
	uint64_t ver;
	unsigned char raw[256];
	size_t n =
	    check_unhex(ATTR_HEX " 00 00 00 01 68 74 00 00 00 00 00 00 00 2A 66", raw, sizeof(raw));
	CHECK(ks_attr_record_parse(raw, n, &k, &is_entry, &ver));
	CHECK(is_entry && ver == 42 && k.klen == 1 && k.key[0] == 'h' && k.nslen == 11);
	n = check_unhex(ATTR_HEX " 00 00 00 01 68 54", raw, sizeof(raw));
	CHECK(ks_attr_record_parse(raw, n, &k, &is_entry, &ver));
	CHECK(!is_entry);
	n = check_unhex("06 5F 5F 6B 76 66 73 45 0B", raw, sizeof(raw));
	CHECK(!ks_attr_record_parse(raw, n, &k, &is_entry, &ver));

	/* A compaction drops the field records of a deleted hash and keeps
	 * the live one's. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "d"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "d"), "f", 1, &s), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "l"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "l"), "f", 1, &s), 0);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "d")), 0);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 01 64 78"), 1);
	CHECK_INT(ks_compact(ks), 0);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 01 64 78"), 0);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 01 6C 78"), 1);
	ks_close(ks);
}

/* KS_ATTR_CTIME (an expiry set): ctime now, mtime and atime kept, or
 * `base` for a key without stored times; nothing for a key deleted. */
static void test_ctime(void)
{
	struct keyspace *ks = fresh_ks();
	struct ks_attr_change ch = {.flags = KS_ATTR_CTIME, .base = {1000, 5}};
	struct ks_attr_set s = {
	    .mask = KS_ATTR_SET_TIMES, .mtime = {981173106, 7}, .atime = {981173106, 8}};
	struct timespec before;
	struct ks_attr a;
	clock_gettime(CLOCK_REALTIME, &before);

	CHECK_INT(string_set(ks, KEYN(DEFNS, "bare"), "v", 1, 0), 0);
	CHECK_INT(ks_expire(ks, KEYA(DEFNS, "bare", &ch), now_ms() + 100000), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "bare"), 0, NULL, 0, &a), 0);
	CHECK(a.has == KS_ATTR_HAS_TIMES);
	CHECK(a.mtime.tv_sec == 1000 && a.mtime.tv_nsec == 5);
	CHECK(a.atime.tv_sec == 1000 && a.atime.tv_nsec == 5);
	CHECK(a.ctime.tv_sec >= before.tv_sec);

	CHECK_INT(hash_set(ks, KEYN(DEFNS, "h"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(ks_attr_set(ks, KEY(DEFNS, "h"), NULL, 0, &s), 0);
	uint64_t v = version_of(ks, KEY(DEFNS, "h"));
	CHECK_INT(ks_expire(ks, KEYA(DEFNS, "h", &ch), 0), 0);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "h"), v, NULL, 0, &a), 0);
	CHECK(a.mtime.tv_sec == 981173106 && a.mtime.tv_nsec == 7);
	CHECK(a.atime.tv_sec == 981173106 && a.atime.tv_nsec == 8);
	CHECK(a.ctime.tv_sec >= before.tv_sec);

	/* A deadline in the past deletes: no record is left. */
	CHECK_INT(string_set(ks, KEYN(DEFNS, "gone"), "v", 1, 0), 0);
	CHECK_INT(ks_expire(ks, KEYA(DEFNS, "gone", &ch), 1), 0);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_METADATA, ATTR_HEX " 00 00 00 04 67 6F 6E 65"), 0);
	ks_close(ks);
}

int main(void)
{
	log_level_current = -1; /* expected errors stay quiet */
	test_record_bytes();
	test_entry_same_batch();
	test_setattr();
	test_xattr();
	test_del_recreate();
	test_rename();
	test_renumber();
	test_pending_expiry();
	test_gc();
	test_ctime();
	fixture_done(NULL);
	return check_done("attr");
}
