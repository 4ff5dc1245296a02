/*
 * Unit tests for ks_gc (Kvrocks's compaction filters) on a temporary
 * database: the pure decisions with a fixed clock (expiry, the 5-minute
 * grace, size-0 and emptyable types, versions, strings, zero bitmap
 * fragments, undecodable records), then a manual compaction over a
 * database holding deleted, re-created, overwritten and expired keys of
 * several types, counting records per column family through the store
 * iterator: exactly the dead ones go, live keys, kvfs's reserved
 * namespace and records the filters cannot decode stay. Also: a
 * read-only store compacts nothing, a reopened database reads the same,
 * and compactions running beside writers and a close are safe.
 */
#include "check.h"
#include "fixture.h"
#include "keyspace/ks_attr.h"
#include "keyspace/ks_gc.h"
#include "types/t_bitmap.h"
#include "types/t_hash.h"
#include "types/t_list.h"
#include "types/t_string.h"
#include "types/t_zset.h"

#include <pthread.h>

/* Writes that make no attribute records (ks_attr_none): the counts of
 * the reserved namespace below are of kvfs's own records only. */
#define KEYN(n, k) KEYA(n, k, &ks_attr_none)

#define NOW 1700000000000ull

static struct keyspace *ks;

/* ---- Helpers ------------------------------------------------------- */

/* A v1 metadata header: flags, expire, version, size. */
static size_t meta_v1(uint8_t *p, enum kv_type t, uint64_t expire, uint64_t ver, uint64_t size)
{
	p[0] = (uint8_t)(ENC_FLAG_64BIT | t);
	put_be64(p + 1, expire);
	if (enc_type_is_inline(t))
		return 9;
	put_be64(p + 9, ver);
	put_be64(p + 17, size);
	return 25;
}

static bool meta_dead(enum kv_type t, uint64_t expire, uint64_t size)
{
	uint8_t p[64] = {0};
	size_t n = meta_v1(p, t, expire, 7, size);
	if (t == KV_TYPE_LIST)
		n += 16;
	return ks_gc_meta_dead(p, n, NOW);
}

static bool sub_dead(enum kv_type t, uint64_t expire, uint64_t size, uint64_t subver, const void *v,
		     size_t vn)
{
	uint8_t p[64] = {0};
	struct enc_meta m;
	size_t n = meta_v1(p, t, expire, 7, size);
	if (enc_meta_decode(p, n, &m) != 0)
		return false;
	return ks_gc_sub_dead(&m, subver, v, vn, NOW);
}

/* Records of cf whose key starts with the sub-key prefix of (ns, key),
 * any version (ns_len|ns|key_len|key), or, with key NULL, all of them. */
static long count_sub(enum store_cf cf, const char *ns, const char *key)
{
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	long n = 0;
	if (key) {
		if (enc_sub_key(&lo, ns, strlen(ns), key, strlen(key), false, 0, NULL, 0) != 0)
			return -1;
		lo.len -= 8; /* drop the version */
		buf_set(&hi, lo.data, lo.len);
		enc_prefix_successor(&hi);
	}
	struct store_iter *it = store_iter_new(ks_store(ks), cf, lo.data, lo.len, hi.data, hi.len);
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it))
		n++;
	if (store_iter_status(it))
		n = -1;
	store_iter_free(it);
	buf_release(&lo);
	buf_release(&hi);
	return n;
}

/* Metadata records whose key starts with ns_len|ns. */
static long count_meta_ns(const char *ns)
{
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	long n = 0;
	enc_ns_key(&lo, ns, strlen(ns), NULL, 0, false);
	buf_set(&hi, lo.data, lo.len);
	enc_prefix_successor(&hi);
	struct store_iter *it =
	    store_iter_new(ks_store(ks), STORE_CF_METADATA, lo.data, lo.len, hi.data, hi.len);
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it))
		n++;
	store_iter_free(it);
	buf_release(&lo);
	buf_release(&hi);
	return n;
}

static bool meta_present(const char *key)
{
	struct buf val = BUF_INIT;
	int rc = fixture_meta_raw(ks, KEY(key), &val);
	buf_release(&val);
	return rc == 0;
}

/* Rewrite a key's stored expiry (v1 metadata), bypassing PEXPIREAT's
 * "a past time deletes the key". */
static void set_expire_raw(const char *key, uint64_t expire)
{
	struct buf mk = BUF_INIT, val = BUF_INIT;
	CHECK_INT(ks_meta_key(ks, KEY(DEFNS, key), &mk), 0);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_METADATA, mk.data, mk.len, &val), 0);
	CHECK(val.len >= 9 && (val.data[0] & ENC_FLAG_64BIT));
	put_be64((uint8_t *)val.data + 1, expire);
	CHECK_INT(fixture_write(ks, STORE_CF_METADATA, mk.data, mk.len, val.data, val.len), 0);
	buf_release(&mk);
	buf_release(&val);
}

static void put_meta_raw(const char *key, const void *v, size_t vn)
{
	struct buf mk = BUF_INIT;
	ks_meta_key(ks, KEY(DEFNS, key), &mk);
	CHECK_INT(fixture_write(ks, STORE_CF_METADATA, mk.data, mk.len, v, vn), 0);
	buf_release(&mk);
}

static void hash_fill(const char *key, int n)
{
	char f[32];
	for (int i = 0; i < n; i++) {
		snprintf(f, sizeof(f), "f%05d", i);
		CHECK_INT(hash_set(ks, KEYN(DEFNS, key), f, strlen(f), "v", 1, NULL), 0);
	}
}

static void zset_fill(const char *key, int n)
{
	char m[32];
	for (int i = 0; i < n; i++) {
		snprintf(m, sizeof(m), "m%d", i);
		CHECK_INT(zset_add(ks, KEYN(DEFNS, key), m, strlen(m), i * 1.5, 0), 1);
	}
}

static void list_fill(const char *key, int n)
{
	struct list_value lv = {"e", 1};
	for (int i = 0; i < n; i++)
		CHECK_INT(list_push(ks, KEYN(DEFNS, key), LIST_TAIL, &lv, 1, NULL), 0);
}

/* ---- The decisions ------------------------------------------------- */

static void test_meta_rule(void)
{
	/* Expiry: strictly before now. */
	CHECK(!meta_dead(KV_TYPE_STRING, 0, 0));
	CHECK(!meta_dead(KV_TYPE_STRING, NOW, 0));
	CHECK(meta_dead(KV_TYPE_STRING, NOW - 1, 0));
	CHECK(!meta_dead(KV_TYPE_HASH, NOW + 1, 3));
	CHECK(meta_dead(KV_TYPE_HASH, NOW - 1, 3));
	/* Size 0: dead for hash, set, zset, list, bitmap, sortedint ... */
	CHECK(meta_dead(KV_TYPE_HASH, 0, 0));
	CHECK(meta_dead(KV_TYPE_SET, 0, 0));
	CHECK(meta_dead(KV_TYPE_ZSET, 0, 0));
	CHECK(meta_dead(KV_TYPE_LIST, 0, 0));
	CHECK(meta_dead(KV_TYPE_BITMAP, 0, 0));
	CHECK(meta_dead(KV_TYPE_SORTEDINT, 0, 0));
	/* ... live for the emptyable types and the inline ones. */
	CHECK(!meta_dead(KV_TYPE_STREAM, 0, 0));
	CHECK(!meta_dead(KV_TYPE_BLOOM, 0, 0));
	CHECK(!meta_dead(KV_TYPE_HLL, 0, 0));
	CHECK(!meta_dead(KV_TYPE_TDIGEST, 0, 0));
	CHECK(!meta_dead(KV_TYPE_TIMESERIES, 0, 0));
	CHECK(!meta_dead(KV_TYPE_TOPK, 0, 0)); /* kvfs's own type 14 */
	CHECK(!meta_dead(KV_TYPE_JSON, 0, 0));
	/* v0 (expire in seconds): 1699999999 s is before NOW. */
	uint8_t v0[17] = {KV_TYPE_HASH};
	put_be32(v0 + 1, (uint32_t)(NOW / 1000 - 1));
	put_be32(v0 + 13, 1);
	CHECK(ks_gc_meta_dead(v0, sizeof(v0), NOW));
	put_be32(v0 + 1, 0);
	CHECK(!ks_gc_meta_dead(v0, sizeof(v0), NOW));
	/* What does not decode is kept: too short, unknown type, reserved
	 * flag bits, nothing. */
	uint8_t bad[25] = {0x82};
	CHECK(!ks_gc_meta_dead(bad, 10, NOW));
	bad[0] = 0x8f;
	CHECK(!ks_gc_meta_dead(bad, sizeof(bad), NOW));
	bad[0] = 0x82 | 0x10;
	CHECK(!ks_gc_meta_dead(bad, sizeof(bad), NOW));
	CHECK(!ks_gc_meta_dead("", 0, NOW));
}

static void test_sub_rule(void)
{
	/* Same version, live key: kept. */
	CHECK(!sub_dead(KV_TYPE_HASH, 0, 3, 7, "v", 1));
	/* Another version: a re-created key's old sub-key. */
	CHECK(sub_dead(KV_TYPE_HASH, 0, 3, 6, "v", 1));
	CHECK(sub_dead(KV_TYPE_HASH, 0, 3, 8, "v", 1));
	/* The key was overwritten by a string or JSON value. */
	CHECK(sub_dead(KV_TYPE_STRING, 0, 0, 7, "v", 1));
	CHECK(sub_dead(KV_TYPE_JSON, 0, 0, 0, "v", 1));
	/* Expired: kept for 5 minutes (grace), then dropped. */
	CHECK(!sub_dead(KV_TYPE_HASH, NOW - 1, 3, 7, "v", 1));
	CHECK(!sub_dead(KV_TYPE_HASH, NOW - KS_GC_GRACE_MS, 3, 7, "v", 1));
	CHECK(sub_dead(KV_TYPE_HASH, NOW - KS_GC_GRACE_MS - 1, 3, 7, "v", 1));
	/* Size 0 of a non-emptyable type: no grace. Emptyable: kept. */
	CHECK(sub_dead(KV_TYPE_SET, 0, 0, 7, "", 0));
	CHECK(!sub_dead(KV_TYPE_STREAM, 0, 0, 7, "x", 1));
	CHECK(!sub_dead(KV_TYPE_HLL, 0, 0, 7, "x", 1));
	/* Bitmap fragments: all-zero ones go, others stay; not for other
	 * types. */
	uint8_t zero[1024] = {0}, one[1024] = {0};
	one[1023] = 1;
	CHECK(sub_dead(KV_TYPE_BITMAP, 0, 10, 7, zero, sizeof(zero)));
	CHECK(sub_dead(KV_TYPE_BITMAP, 0, 10, 7, zero, 3));
	CHECK(!sub_dead(KV_TYPE_BITMAP, 0, 10, 7, one, sizeof(one)));
	CHECK(!sub_dead(KV_TYPE_HASH, 0, 10, 7, zero, sizeof(zero)));
}

/* ---- A real compaction --------------------------------------------- */

static void test_compact(void)
{
	struct ks_info info;
	uint64_t now = now_ms();

	/* Deleted hash: 50 dead fields. A live hash: 20. */
	hash_fill("h_del", 50);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "h_del")), 0);
	hash_fill("h_live", 20);
	/* Re-created: 30 fields of the old version, 5 of the new. */
	hash_fill("re", 30);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "re")), 0);
	hash_fill("re", 5);
	/* Overwritten by SET: 6 dead fields under a live string. */
	hash_fill("h_str", 6);
	CHECK_INT(string_set(ks, KEYN(DEFNS, "h_str"), "s", 1, 0), 0);
	/* Sorted sets: members and score index. */
	zset_fill("z_del", 10);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "z_del")), 0);
	zset_fill("z_live", 7);
	/* Lists: one expired 10 minutes ago (past the grace), one live. */
	list_fill("l_exp", 12);
	set_expire_raw("l_exp", now - 600000);
	list_fill("l_live", 4);
	/* A hash that expired a second ago: inside the grace. */
	hash_fill("h_recent", 3);
	set_expire_raw("h_recent", now - 1000);
	/* A live hash with an expiry in the future. */
	hash_fill("h_future", 2);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "h_future"), now + 3600000), 0);
	/* Strings: expired and live. */
	CHECK_INT(string_set(ks, KEYN(DEFNS, "s_exp"), "x", 1, 0), 0);
	set_expire_raw("s_exp", now - 1);
	CHECK_INT(string_set(ks, KEYN(DEFNS, "s_live"), "y", 1, 0), 0);
	/* Bitmap: fragment "0" holds bit 9, fragment "1024" becomes zero. */
	CHECK_INT(bitmap_setbit(ks, KEYN(DEFNS, "bm"), 9, true), 0);
	CHECK_INT(bitmap_setbit(ks, KEYN(DEFNS, "bm"), 8192 + 5, true), 0);
	CHECK_INT(bitmap_setbit(ks, KEYN(DEFNS, "bm"), 8192 + 5, false), 1); /* the old bit */
	/* Kvrocks-written records: a hash of size 0 (dead), a HyperLogLog of
	 * size 0 (live: emptyable), metadata of an unknown type (kept). */
	uint8_t raw[64];
	put_meta_raw("h_zero", raw, meta_v1(raw, KV_TYPE_HASH, 0, 5, 0));
	put_meta_raw("hll", raw, meta_v1(raw, KV_TYPE_HLL, 0, 5, 0));
	memset(raw, 0, sizeof(raw));
	raw[0] = 0x8f;
	put_meta_raw("unknown", raw, 25);
	/* A sub-key the filter cannot parse: kept. */
	CHECK_INT(fixture_write(ks, STORE_CF_DEFAULT,
				"\x03"
				"abc",
				4, "v", 1),
		  0);
	/* kvfs's own namespace: an empty collection and a namespace. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "empty"), KV_TYPE_SET), 0);
	CHECK_INT(ks_ns_create(ks, "other", 5, NULL), 0);
	long reserved = count_meta_ns(KS_RESERVED_NS);
	CHECK(reserved >= 2);
	/* Kvrocks's other column families. */
	CHECK_INT(fixture_write(ks, STORE_CF_PUBSUB, "chan", 4, "msg", 3), 0);
	CHECK_INT(fixture_write(ks, STORE_CF_PROPAGATE, "script", 6, "x", 1), 0);
	CHECK_INT(fixture_write(ks, STORE_CF_PROPAGATE, "replication_id_", 15, "id", 2), 0);

	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "h_del"), 50);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "re"), 35);
	CHECK_INT(count_sub(STORE_CF_ZSET_SCORE, DEFNS, "z_del"), 10);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "bm"), 2);

	/* The sub-key column family alone first: the recently expired hash
	 * keeps its fields (grace, and its metadata is still there). */
	CHECK_INT(store_compact(ks_store(ks), STORE_CF_DEFAULT, NULL, 0, NULL, 0), 0);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "h_recent"), 3);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "h_del"), 0);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "l_exp"), 0);

	/* Everything, metadata first. */
	CHECK_INT(ks_compact(ks), 0);

	/* Dead sub-keys are gone ... */
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "h_del"), 0);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "h_str"), 0);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "z_del"), 0);
	CHECK_INT(count_sub(STORE_CF_ZSET_SCORE, DEFNS, "z_del"), 0);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "l_exp"), 0);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "h_recent"), 0);
	/* ... live ones stay, exactly. */
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "h_live"), 20);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "re"), 5);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "z_live"), 7);
	CHECK_INT(count_sub(STORE_CF_ZSET_SCORE, DEFNS, "z_live"), 7);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "l_live"), 4);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "h_future"), 2);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "bm"), 1);
	/* Whole column families: nothing else was kept or lost (the 1 is
	 * the record the filter cannot parse). */
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, NULL), 20 + 5 + 7 + 4 + 2 + 1 + 1);
	CHECK_INT(count_sub(STORE_CF_ZSET_SCORE, DEFNS, NULL), 7);
	CHECK_INT(count_sub(STORE_CF_PUBSUB, DEFNS, NULL), 0);
	CHECK_INT(count_sub(STORE_CF_PROPAGATE, DEFNS, NULL), 1);

	/* Metadata: expired and size-0 records dropped, the rest kept. */
	CHECK(!meta_present("l_exp"));
	CHECK(!meta_present("h_recent"));
	CHECK(!meta_present("s_exp"));
	CHECK(!meta_present("h_zero"));
	CHECK(meta_present("hll"));
	CHECK(meta_present("unknown"));
	CHECK(meta_present("s_live"));
	CHECK(meta_present("h_str"));
	CHECK(meta_present("h_future"));
	/* h_live re h_str z_live l_live h_future s_live bm hll unknown */
	CHECK_INT(count_meta_ns(DEFNS), 10);
	CHECK_INT(count_meta_ns(KS_RESERVED_NS), reserved);

	/* Reads are unchanged. */
	struct buf v = BUF_INIT;
	uint64_t n = 0;
	CHECK_INT(hash_len(ks, KEY(DEFNS, "h_live"), &n), 0);
	CHECK_INT(n, 20);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "re"), "f00004", 6, &v), 0);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "re"), "f00005", 6, &v), -ENOENT);
	CHECK_INT(string_get(ks, KEY(DEFNS, "h_str"), &v), 0);
	CHECK_MEM(v.data, v.len, "s", 1);
	CHECK_INT(zset_card(ks, KEY(DEFNS, "z_live"), &n), 0);
	CHECK_INT(n, 7);
	CHECK_INT(list_len(ks, KEY(DEFNS, "l_live"), &n), 0);
	CHECK_INT(n, 4);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "bm"), 9), 1);
	CHECK_INT(bitmap_getbit(ks, KEY(DEFNS, "bm"), 8192 + 5), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "empty"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_SET);
	CHECK_INT(ks_ns_exists(ks, "other", 5), 1);
	buf_release(&v);
}

/* ---- Threads, close, read-only ------------------------------------- */

static void *compactor(void *arg)
{
	int *rounds = arg;
	for (int i = 0; i < *rounds; i++)
		if (ks_compact(ks) != 0)
			return (void *)1;
	return NULL;
}

/* Writers re-create keys while compactions run: nothing live is lost. */
static void test_concurrent(void)
{
	pthread_t t;
	int rounds = 5;
	CHECK_INT(pthread_create(&t, NULL, compactor, &rounds), 0);
	for (int r = 0; r < 20; r++) {
		CHECK_INT(ks_del(ks, KEY(DEFNS, "churn")) == 0 || r == 0, 1);
		hash_fill("churn", 10);
		zset_fill("zchurn", 3);
		CHECK_INT(ks_del(ks, KEY(DEFNS, "zchurn")), 0);
	}
	void *res = NULL;
	pthread_join(t, &res);
	CHECK(res == NULL);
	CHECK_INT(ks_compact(ks), 0);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "churn"), 10);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "zchurn"), 0);
	CHECK_INT(count_sub(STORE_CF_ZSET_SCORE, DEFNS, "zchurn"), 0);
	uint64_t n = 0;
	CHECK_INT(hash_len(ks, KEY(DEFNS, "churn"), &n), 0);
	CHECK_INT(n, 10);
}

/* Close while a compaction of a lot of garbage may still be running in
 * the background (RocksDB's own, after many flushes): close waits, and
 * no filter calls into the freed keyspace (ASan would see it). */
static void test_close_busy(void)
{
	for (int r = 0; r < 4; r++) {
		hash_fill("busy", 300);
		CHECK_INT(ks_del(ks, KEY(DEFNS, "busy")), 0);
		store_compact(ks_store(ks), STORE_CF_METADATA, NULL, 0, NULL, 0);
	}
	ks = fixture_reopen_checked(ks, NULL);
}

static void test_read_only(void)
{
	struct ks_options o = {.read_only = true};
	struct keyspace *ro = fixture_reopen_checked(ks, &o);
	ks = NULL;
	if (!ro)
		return;
	CHECK_INT(ks_compact(ro), -EROFS);
	uint64_t n = 0;
	CHECK_INT(hash_len(ro, KEY(DEFNS, "h_live"), &n), 0);
	CHECK_INT(n, 20);
	/* Reopened writable: the same data. */
	ks = fixture_reopen_checked(ro, NULL);
	CHECK_INT(count_sub(STORE_CF_DEFAULT, DEFNS, "h_live"), 20);
	CHECK_INT(count_sub(STORE_CF_ZSET_SCORE, DEFNS, "z_live"), 7);
}

/* Kvrocks's IndexFilter on the label index: a TS_LABEL record goes when
 * its key is missing or expired (no grace); a live key's stays, as do
 * another index type's and a record that does not decode. */
static void put_index(const char *key, int type)
{
	struct buf ik = BUF_INIT;
	CHECK_INT(
	    enc_ts_label_index_key(&ik, DEFNS, strlen(DEFNS), "room", 4, "k", 1, key, strlen(key)),
	    0);
	ik.data[1 + strlen(DEFNS)] = (char)type;
	CHECK_INT(fixture_write(ks, STORE_CF_INDEX, ik.data, ik.len, "", 0), 0);
	buf_release(&ik);
}

static void test_index_rule(void)
{
	uint64_t now = now_ms();
	CHECK_INT(store_cf_create(ks_store(ks), STORE_CF_INDEX), 0);
	CHECK_INT(string_set(ks, KEYN(DEFNS, "ix_live"), "v", 1, 0), 0);
	CHECK_INT(string_set(ks, KEYN(DEFNS, "ix_exp"), "v", 1, 0), 0);
	set_expire_raw("ix_exp", now - 1000);
	put_index("ix_live", ENC_INDEX_TS_LABEL);
	put_index("ix_exp", ENC_INDEX_TS_LABEL);
	put_index("ix_gone", ENC_INDEX_TS_LABEL);
	put_index("ix_other_type", 7);
	CHECK_INT(fixture_write(ks, STORE_CF_INDEX, "\x09x", 2, "", 0), 0);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_INDEX, ""), 5);
	CHECK_INT(store_compact(ks_store(ks), STORE_CF_INDEX, NULL, 0, NULL, 0), 0);
	CHECK_INT(fixture_count_hex(ks, STORE_CF_INDEX, ""), 3);
	struct buf ik = BUF_INIT, v = BUF_INIT;
	CHECK_INT(
	    enc_ts_label_index_key(&ik, DEFNS, strlen(DEFNS), "room", 4, "k", 1, "ix_live", 7), 0);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_INDEX, ik.data, ik.len, &v), 0);
	buf_release(&ik);
	buf_release(&v);
}

int main(void)
{
	test_meta_rule();
	test_sub_rule();

	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_gc");
	test_compact();
	test_index_rule();
	test_concurrent();
	test_close_busy();
	test_read_only();
	fixture_done(ks);
	return check_done("test_gc");
}
