/*
 * Unit tests for ks_txn, the write transaction of every type verb, on a
 * temporary database: lookup, lookup-or-create and create with the type checked
 * once, staged sub-key changes, the size step (delete when empty, keep
 * empty), head reads, renew and delete, the sticky error, two and n
 * keys, the empty-collection record and its pending expiry, attribute
 * changes riding on the key, and what commit writes, read back byte for
 * byte.
 */
#include "check.h"
#include "fixture.h"
#include "keyspace/ks_attr.h"
#include "keyspace/ks_int.h"
#include "keyspace/ks_txn.h"
#include "types/t_string.h"

static struct keyspace *ks;

static void fresh(void)
{
	ks = fixture_fresh(ks, false);
}

/* The stored metadata record of key k in the default namespace. */
static int meta_raw(const char *k, struct buf *out)
{
	return fixture_meta_raw(ks, KEY(DEFNS, k), out);
}

/* Sub-key `sub` of key k at `version` in cf: 0 and its value, -ENOENT. */
static int sub_raw(enum store_cf cf, const char *k, uint64_t version, const char *sub,
		   struct buf *out)
{
	return fixture_sub_raw(ks, cf, KEY(DEFNS, k), version, sub, strlen(sub), out);
}

/* Add field f = v to hash k in one transaction, as HSET does. */
static int hset(const struct ks_key *k, const char *f, const char *v)
{
	struct ks_txn t;
	struct enc_meta *m;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_open(&t, k, KV_TYPE_HASH, &m);
	if (!rc) {
		ks_txn_sub_put(&t, k, STORE_CF_DEFAULT, f, strlen(f), v, strlen(v));
		ks_txn_resize(&t, k, +1, 0);
		rc = ks_txn_commit(&t);
	}
	return ks_txn_end(&t, rc);
}

static void test_open_creates_what_commit_marks(void)
{
	struct buf raw = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	fresh();

	/* Opened, nothing marked: nothing written (no key of size 0). */
	ks_txn_begin(&t, ks, KEY(DEFNS, "h"));
	CHECK_INT(ks_txn_open(&t, KEY(DEFNS, "h"), KV_TYPE_HASH, &m), 0);
	CHECK(ks_txn_is_new(&t, KEY(DEFNS, "h")));
	CHECK_INT(m->size, 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("h", &raw), -ENOENT);

	/* One field: 82 | expire 0 | version | size 1, and the sub-key. */
	CHECK_INT(hset(KEY(DEFNS, "h"), "f", "v"), 0);
	CHECK_INT(meta_raw("h", &raw), 0);
	CHECK_INT(raw.len, 25);
	CHECK_INT((unsigned char)raw.data[0], 0x82);
	CHECK_INT(get_be64(raw.data + 1), 0);
	CHECK_INT(get_be64(raw.data + 17), 1);
	uint64_t ver = get_be64(raw.data + 9);
	CHECK(ver != 0);
	CHECK_INT(sub_raw(STORE_CF_DEFAULT, "h", ver, "f", &raw), 0);
	CHECK_MEM(raw.data, raw.len, "v", 1);

	/* Open again: found, not new, same version; size grows in place. */
	ks_txn_begin(&t, ks, KEY(DEFNS, "h"));
	CHECK_INT(ks_txn_open(&t, KEY(DEFNS, "h"), KV_TYPE_HASH, &m), 0);
	CHECK(!ks_txn_is_new(&t, KEY(DEFNS, "h")));
	CHECK_INT(m->version, ver);
	ks_txn_sub_put(&t, KEY(DEFNS, "h"), STORE_CF_DEFAULT, "g", 1, "w", 1);
	ks_txn_resize(&t, KEY(DEFNS, "h"), +1, 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("h", &raw), 0);
	CHECK_INT(get_be64(raw.data + 9), ver);
	CHECK_INT(get_be64(raw.data + 17), 2);
	buf_release(&raw);
}

static void test_type_checked_once(void)
{
	struct ks_txn t;
	struct enc_meta *m;
	fresh();
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "x", 1, 0), 0);

	ks_txn_begin(&t, ks, KEY(DEFNS, "s"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "s"), KV_TYPE_HASH, &m), -KV_EWRONGTYPE);
	CHECK(m == NULL);
	CHECK_INT(ks_txn_open(&t, KEY(DEFNS, "s"), KV_TYPE_HASH, &m), -KV_EWRONGTYPE);
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "s"), KV_TYPE_NONE, &m), 0);
	CHECK_INT(m->type, KV_TYPE_STRING);
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "absent"), KV_TYPE_HASH, &m), -EINVAL); /* not locked */
	CHECK_INT(ks_txn_end(&t, 0), 0);

	ks_txn_begin(&t, ks, KEY(DEFNS, "none"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "none"), KV_TYPE_HASH, &m), -ENOENT);
	CHECK_INT(ks_txn_end(&t, -ENOENT), -ENOENT);
}

static void test_resize_to_zero(void)
{
	struct buf raw = BUF_INIT;
	struct ks_info info;
	struct ks_txn t;
	struct enc_meta *m;
	fresh();

	/* Delete when empty. */
	CHECK_INT(hset(KEY(DEFNS, "a"), "f", "v"), 0);
	ks_txn_begin(&t, ks, KEY(DEFNS, "a"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "a"), KV_TYPE_HASH, &m), 0);
	ks_txn_sub_del(&t, KEY(DEFNS, "a"), STORE_CF_DEFAULT, "f", 1);
	ks_txn_resize(&t, KEY(DEFNS, "a"), -1, 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("a", &raw), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "a"), &info), -ENOENT);

	/* Keep empty: the key stays as a remembered empty hash. */
	CHECK_INT(hset(KEY(DEFNS, "b"), "f", "v"), 0);
	ks_txn_begin(&t, ks, KEY(DEFNS, "b"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "b"), KV_TYPE_HASH, &m), 0);
	ks_txn_sub_del(&t, KEY(DEFNS, "b"), STORE_CF_DEFAULT, "f", 1);
	ks_txn_resize(&t, KEY(DEFNS, "b"), -1, KS_TXN_KEEP_EMPTY);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("b", &raw), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "b"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_HASH);

	/* The first entry of a remembered empty hash drops the record. */
	CHECK_INT(hset(KEY(DEFNS, "b"), "g", "w"), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "b"), &info), 0);
	CHECK(!info.empty && info.size == 1);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "b")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "b"), &info), -ENOENT);

	/* A size below what goes is a count gone wrong: the key goes. */
	CHECK_INT(hset(KEY(DEFNS, "c"), "f", "v"), 0);
	ks_txn_begin(&t, ks, KEY(DEFNS, "c"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "c"), KV_TYPE_HASH, &m), 0);
	ks_txn_resize(&t, KEY(DEFNS, "c"), -5, 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("c", &raw), -ENOENT);

	/* A size that would pass 2^64 - 1 is corrupt: nothing is written. */
	CHECK_INT(hset(KEY(DEFNS, "d"), "f", "v"), 0);
	ks_txn_begin(&t, ks, KEY(DEFNS, "d"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "d"), KV_TYPE_HASH, &m), 0);
	m->size = UINT64_MAX;
	ks_txn_sub_put(&t, KEY(DEFNS, "d"), STORE_CF_DEFAULT, "g", 1, "w", 1);
	ks_txn_resize(&t, KEY(DEFNS, "d"), +1, 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), -EUCLEAN);
	CHECK_INT(meta_raw("d", &raw), 0);
	CHECK_INT(get_be64(raw.data + 17), 1);
	CHECK_INT(sub_raw(STORE_CF_DEFAULT, "d", get_be64(raw.data + 9), "g", &raw), -ENOENT);
	buf_release(&raw);
}

static void test_sticky_error(void)
{
	struct buf raw = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	fresh();

	/* A change staged for a key the transaction never read fails the
	 * whole transaction, and the good change before it is not written. */
	ks_txn_begin(&t, ks, KEY(DEFNS, "h"));
	CHECK_INT(ks_txn_open(&t, KEY(DEFNS, "h"), KV_TYPE_HASH, &m), 0);
	ks_txn_sub_put(&t, KEY(DEFNS, "h"), STORE_CF_DEFAULT, "f", 1, "v", 1);
	ks_txn_resize(&t, KEY(DEFNS, "h"), +1, 0);
	ks_txn_sub_put(&t, KEY(DEFNS, "other"), STORE_CF_DEFAULT, "f", 1, "v", 1);
	ks_txn_resize(&t, KEY(DEFNS, "h"), +1, 0); /* no-op after the failure */
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), -EINVAL);
	CHECK_INT(meta_raw("h", &raw), -ENOENT);

	/* ks_txn_fail: the verb's own failure, first one kept. */
	ks_txn_begin(&t, ks, KEY(DEFNS, "h"));
	CHECK_INT(ks_txn_open(&t, KEY(DEFNS, "h"), KV_TYPE_HASH, &m), 0);
	ks_txn_fail(&t, -ERANGE);
	ks_txn_fail(&t, -EIO);
	ks_txn_resize(&t, KEY(DEFNS, "h"), +1, 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), -ERANGE);
	CHECK_INT(meta_raw("h", &raw), -ENOENT);
	buf_release(&raw);
}

static void test_two_and_n_keys(void)
{
	struct buf raw = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *ma, *mb;
	fresh();
	CHECK_INT(hset(KEY(DEFNS, "a"), "f", "v"), 0);

	/* A move: one field out of a, into a new b, in one write. */
	ks_txn_begin2(&t, ks, KEY(DEFNS, "a"), KEY(DEFNS, "b"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "a"), KV_TYPE_HASH, &ma), 0);
	CHECK_INT(ks_txn_open(&t, KEY(DEFNS, "b"), KV_TYPE_HASH, &mb), 0);
	CHECK(ma != mb && ma->version != mb->version);
	ks_txn_sub_del(&t, KEY(DEFNS, "a"), STORE_CF_DEFAULT, "f", 1);
	ks_txn_resize(&t, KEY(DEFNS, "a"), -1, 0);
	ks_txn_sub_put(&t, KEY(DEFNS, "b"), STORE_CF_DEFAULT, "f", 1, "v", 1);
	ks_txn_resize(&t, KEY(DEFNS, "b"), +1, 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("a", &raw), -ENOENT);
	CHECK_INT(meta_raw("b", &raw), 0);
	CHECK_INT(get_be64(raw.data + 17), 1);

	/* The same key twice is one key (one lock, one metadata). */
	ks_txn_begin2(&t, ks, KEY(DEFNS, "b"), KEY(DEFNS, "b"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "b"), KV_TYPE_HASH, &ma), 0);
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "b"), KV_TYPE_HASH, &mb), 0);
	CHECK(ma == mb);
	CHECK_INT(ks_txn_end(&t, 0), 0);

	/* n keys: each written, in one batch. */
	struct ks_key keys[3] = {*KEY(DEFNS, "x"), *KEY(DEFNS, "y"), *KEY(DEFNS, "z")};
	ks_txn_beginv(&t, ks, keys, 3);
	for (int i = 0; i < 3; i++) {
		CHECK_INT(ks_txn_open(&t, &keys[i], KV_TYPE_HASH, &ma), 0);
		ks_txn_sub_put(&t, &keys[i], STORE_CF_DEFAULT, "f", 1, "v", 1);
		ks_txn_resize(&t, &keys[i], +1, 0);
	}
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("x", &raw), 0);
	CHECK_INT(meta_raw("z", &raw), 0);
	CHECK_INT(get_be64(raw.data + 17), 1);

	/* More keys than can be locked at once: refused, nothing held. */
	static struct ks_key many[KS_LOCKV_MAX + 1];
	for (size_t i = 0; i <= KS_LOCKV_MAX; i++)
		many[i] = *KEY(DEFNS, "m");
	ks_txn_beginv(&t, ks, many, KS_LOCKV_MAX + 1);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), -E2BIG);
	buf_release(&raw);
}

static void test_pending_expiry_and_attrs(void)
{
	struct buf raw = BUF_INIT;
	struct ks_attr a;
	struct ks_txn t;
	struct enc_meta *m;
	fresh();

	/* mkdir, then a TTL: the record keeps it until the first entry. */
	uint64_t when = now_ms() + 3600 * 1000;
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "e"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "e"), when), 0);
	CHECK_INT(hset(KEY(DEFNS, "e"), "f", "v"), 0);
	CHECK_INT(meta_raw("e", &raw), 0);
	CHECK_INT(get_be64(raw.data + 1), when);

	/* The key's attribute change rides on it and is written with it. */
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH, .entry = "f", .elen = 1};
	struct ks_key k = *KEY(DEFNS, "t");
	k.attr = &ch;
	CHECK_INT(hset(&k, "f", "v"), 0);
	CHECK_INT(meta_raw("t", &raw), 0);
	uint64_t ver = get_be64(raw.data + 9);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "t"), ver, NULL, 0, &a), 0);
	CHECK(a.has & KS_ATTR_HAS_TIMES);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "t"), ver, "f", 1, &a), 0);
	CHECK(a.has & KS_ATTR_HAS_TIMES);
	/* A failing transaction writes no attribute record either. */
	struct ks_key k2 = *KEY(DEFNS, "u");
	k2.attr = &ch;
	ks_txn_begin(&t, ks, &k2);
	CHECK_INT(ks_txn_open(&t, &k2, KV_TYPE_HASH, &m), 0);
	ks_txn_resize(&t, &k2, +1, 0);
	ks_txn_fail(&t, -EIO);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), -EIO);
	CHECK_INT(ks_attr_get(ks, KEY(DEFNS, "u"), 0, NULL, 0, &a), 0);
	CHECK_INT(a.has, 0);
	buf_release(&raw);
}

static void test_meta_put(void)
{
	struct buf raw = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	fresh();

	/* An inline value: the tail is the value. 81 | expire 0 | "abc". */
	ks_txn_begin(&t, ks, KEY(DEFNS, "s"));
	CHECK_INT(ks_txn_open(&t, KEY(DEFNS, "s"), KV_TYPE_STRING, &m), 0);
	ks_txn_meta_put(&t, KEY(DEFNS, "s"), "abc", 3);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("s", &raw), 0);
	CHECK_MEM(raw.data, raw.len, "\x81\0\0\0\0\0\0\0\0abc", 12);

	/* ks_txn_touch: a field of *m changed in place (the expiry). */
	ks_txn_begin(&t, ks, KEY(DEFNS, "s"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "s"), KV_TYPE_STRING, &m), 0);
	m->expire_ms = 4102444800000ull;
	ks_txn_touch(&t, KEY(DEFNS, "s"));
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("s", &raw), 0);
	CHECK_INT(raw.len, 12);
	CHECK_INT(get_be64(raw.data + 1), 4102444800000ull);
	CHECK_MEM(raw.data + 9, 3, "abc", 3);
	buf_release(&raw);
}

static void test_read_only_txn(void)
{
	struct buf raw = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	fresh();
	CHECK_INT(hset(KEY(DEFNS, "h"), "f", "v"), 0);

	/* Reads work; any change is refused at commit, nothing written. */
	ks_txn_begin_read(&t, ks, KEY(DEFNS, "h"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "h"), KV_TYPE_HASH, &m), 0);
	CHECK_INT(m->size, 1);
	ks_txn_sub_put(&t, KEY(DEFNS, "h"), STORE_CF_DEFAULT, "g", 1, "w", 1);
	ks_txn_resize(&t, KEY(DEFNS, "h"), +1, 0);
	CHECK(ks_txn_batch(&t) == NULL);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), -EINVAL);
	CHECK_INT(meta_raw("h", &raw), 0);
	CHECK_INT(get_be64(raw.data + 17), 1);
	/* The lock was released: a writer gets it. */
	CHECK_INT(hset(KEY(DEFNS, "h"), "g", "w"), 0);
	buf_release(&raw);
}

static void test_head_renew_delete_lookup(void)
{
	struct buf raw = BUF_INIT, val = BUF_INIT;
	struct ks_info info;
	struct ks_txn t;
	struct enc_meta *m;
	uint64_t vlen;
	fresh();

	/* ks_txn_head: the head of a long string, and its whole length. */
	CHECK_INT(buf_resize(&val, 3000), 0);
	memset(val.data, 'x', val.len);
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), val.data, val.len, 0), 0);
	ks_txn_begin(&t, ks, KEY(DEFNS, "s"));
	CHECK_INT(ks_txn_head(&t, KEY(DEFNS, "s"), KV_TYPE_STRING, &m, &vlen), 0);
	CHECK_INT(vlen, 9 + 3000);
	CHECK(m->tail_len < 3000);
	/* A record read by its head is never written whole. */
	m->expire_ms = 4102444800000ull;
	ks_txn_touch(&t, KEY(DEFNS, "s"));
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), -EINVAL);
	CHECK_INT(meta_raw("s", &raw), 0);
	CHECK_INT(raw.len, 9 + 3000);
	CHECK_INT(get_be64(raw.data + 1), 0);

	/* ks_txn_renew over a live key of another type: a new key of the
	 * type asked for, not new to the transaction (no empty record). */
	CHECK_INT(hset(KEY(DEFNS, "h"), "f", "v"), 0);
	ks_txn_begin(&t, ks, KEY(DEFNS, "h"));
	CHECK_INT(ks_txn_head(&t, KEY(DEFNS, "h"), KV_TYPE_NONE, &m, &vlen), 0);
	CHECK_INT(m->type, KV_TYPE_HASH);
	CHECK_INT(ks_txn_renew(&t, KEY(DEFNS, "h"), KV_TYPE_STRING, &m), 0);
	CHECK(!ks_txn_is_new(&t, KEY(DEFNS, "h")));
	CHECK_INT(m->type, KV_TYPE_STRING);
	ks_txn_meta_put(&t, KEY(DEFNS, "h"), "ab", 2);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("h", &raw), 0);
	CHECK_MEM(raw.data, raw.len, "\x81\0\0\0\0\0\0\0\0ab", 11);

	/* ks_txn_lookup and ks_txn_renew of a remembered empty collection:
	 * new, and its record goes at commit. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "e"), KV_TYPE_BITMAP), 0);
	ks_txn_begin(&t, ks, KEY(DEFNS, "e"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "e"), KV_TYPE_BITMAP, &m), -ENOENT);
	CHECK_INT(ks_txn_lookup(&t, KEY(DEFNS, "e"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_BITMAP);
	CHECK_INT(ks_txn_renew(&t, KEY(DEFNS, "e"), KV_TYPE_STRING, &m), 0);
	CHECK(ks_txn_is_new(&t, KEY(DEFNS, "e")));
	ks_txn_meta_put(&t, KEY(DEFNS, "e"), "", 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "e"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_STRING);
	ks_txn_begin(&t, ks, KEY(DEFNS, "none"));
	CHECK_INT(ks_txn_lookup(&t, KEY(DEFNS, "none"), &info), -ENOENT);
	ks_txn_end(&t, 0);

	/* ks_txn_delete: a live key goes, whatever its size; with
	 * KS_TXN_KEEP_EMPTY it is remembered empty, of its type. */
	CHECK_INT(hset(KEY(DEFNS, "d"), "f", "v"), 0);
	CHECK_INT(hset(KEY(DEFNS, "d"), "g", "v"), 0);
	ks_txn_begin(&t, ks, KEY(DEFNS, "d"));
	CHECK_INT(ks_txn_get(&t, KEY(DEFNS, "d"), KV_TYPE_HASH, &m), 0);
	ks_txn_delete(&t, KEY(DEFNS, "d"), KS_TXN_KEEP_EMPTY);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(meta_raw("d", &raw), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "d"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_HASH);
	/* A new key deleted without it: the empty record goes too. */
	ks_txn_begin(&t, ks, KEY(DEFNS, "d"));
	CHECK_INT(ks_txn_open(&t, KEY(DEFNS, "d"), KV_TYPE_HASH, &m), 0);
	ks_txn_delete(&t, KEY(DEFNS, "d"), 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "d"), &info), -ENOENT);
	/* Deleting a key the transaction did not read is a bug: sticky. */
	ks_txn_begin(&t, ks, KEY(DEFNS, "s"));
	ks_txn_delete(&t, KEY(DEFNS, "s"), 0);
	CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), -EINVAL);
	CHECK_INT(meta_raw("s", &raw), 0);
	buf_release(&raw);
	buf_release(&val);
}

static void test_create(void)
{
	struct buf raw = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	fresh();
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "x", 1, 0), 0);
	CHECK_INT(hset(KEY(DEFNS, "h"), "f", "v"), 0);
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "e"), KV_TYPE_SET), 0);

	/* A live key of any type is -EEXIST, its own type included. */
	const char *live[] = {"s", "h"};
	for (size_t i = 0; i < 2; i++) {
		ks_txn_begin(&t, ks, KEY(DEFNS, live[i]));
		CHECK_INT(ks_txn_create(&t, KEY(DEFNS, live[i]), KV_TYPE_HASH, &m), -EEXIST);
		CHECK(m == NULL);
		CHECK_INT(ks_txn_end(&t, -EEXIST), -EEXIST);
	}
	/* Absent, or remembered empty: new, and commit replaces the record. */
	const char *absent[] = {"n", "e"};
	for (size_t i = 0; i < 2; i++) {
		ks_txn_begin(&t, ks, KEY(DEFNS, absent[i]));
		CHECK_INT(ks_txn_create(&t, KEY(DEFNS, absent[i]), KV_TYPE_HASH, &m), 0);
		CHECK(ks_txn_is_new(&t, KEY(DEFNS, absent[i])));
		ks_txn_sub_put(&t, KEY(DEFNS, absent[i]), STORE_CF_DEFAULT, "f", 1, "v", 1);
		ks_txn_resize(&t, KEY(DEFNS, absent[i]), +1, 0);
		CHECK_INT(ks_txn_end(&t, ks_txn_commit(&t)), 0);
		CHECK_INT(meta_raw(absent[i], &raw), 0);
		CHECK_INT((unsigned char)raw.data[0], 0x82);
	}
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "e"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_HASH);
	buf_release(&raw);
}

/* ks_member_put, ks_member_del, ks_member_rename: the records and sizes
 * they leave. */
static void test_member_verbs(void)
{
	struct buf raw = BUF_INIT, v = BUF_INIT;
	struct ks_info info;
	bool added = false;
	fresh();
	const struct ks_key *h = KEY(DEFNS, "h");
	CHECK_INT(ks_member_put(ks, h, KV_TYPE_HASH, "f", 1, "v1", 2, 0, &added), 0);
	CHECK(added);
	CHECK_INT(ks_member_put(ks, h, KV_TYPE_HASH, "f", 1, "v2", 2, 0, &added), 0);
	CHECK(!added);
	CHECK_INT(ks_member_put(ks, h, KV_TYPE_HASH, "f", 1, "v3", 2, KS_MEMBER_NX, &added),
		  -EEXIST);
	CHECK_INT(ks_member_put(ks, h, KV_TYPE_HASH, "f", 1, "v4", 2, KS_MEMBER_KEEP, &added), 0);
	CHECK(!added);
	CHECK_INT(ks_member_put(ks, h, KV_TYPE_HASH, "g", 1, "w", 1, KS_MEMBER_NX, NULL), 0);
	CHECK_INT(ks_lookup(ks, h, &info), 0);
	CHECK_INT(info.size, 2);
	CHECK_INT(sub_raw(STORE_CF_DEFAULT, "h", info.version, "f", &v), 0);
	CHECK(v.len == 2 && memcmp(v.data, "v2", 2) == 0);
	CHECK_INT(ks_member_put(ks, h, KV_TYPE_SET, "f", 1, "", 0, 0, NULL), -KV_EWRONGTYPE);

	/* Rename: onto itself, onto another member (replaced), missing. */
	CHECK_INT(ks_member_rename(ks, h, KV_TYPE_HASH, "f", 1, "f", 1), 0);
	CHECK_INT(ks_member_rename(ks, h, KV_TYPE_HASH, "f", 1, "g", 1), 0);
	CHECK_INT(ks_lookup(ks, h, &info), 0);
	CHECK_INT(info.size, 1);
	CHECK_INT(sub_raw(STORE_CF_DEFAULT, "h", info.version, "f", &v), -ENOENT);
	CHECK_INT(sub_raw(STORE_CF_DEFAULT, "h", info.version, "g", &v), 0);
	CHECK(v.len == 2 && memcmp(v.data, "v2", 2) == 0);
	CHECK_INT(ks_member_rename(ks, h, KV_TYPE_HASH, "f", 1, "x", 1), -ENOENT);
	CHECK_INT(ks_member_rename(ks, h, KV_TYPE_HASH, "g", 1, "x", 1), 0);
	CHECK_INT(ks_lookup(ks, h, &info), 0);
	CHECK_INT(info.size, 1);

	/* Delete: missing, then the last member, kept as an empty hash. */
	CHECK_INT(ks_member_del(ks, h, KV_TYPE_HASH, "g", 1, 0), -ENOENT);
	CHECK_INT(ks_member_del(ks, KEY(DEFNS, "none"), KV_TYPE_HASH, "g", 1, 0), -ENOENT);
	CHECK_INT(ks_member_del(ks, h, KV_TYPE_HASH, "x", 1, KS_TXN_KEEP_EMPTY), 0);
	CHECK_INT(meta_raw("h", &raw), -ENOENT);
	CHECK_INT(ks_lookup(ks, h, &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_HASH);
	buf_release(&raw);
	buf_release(&v);
}

int main(void)
{
	test_open_creates_what_commit_marks();
	test_type_checked_once();
	test_resize_to_zero();
	test_sticky_error();
	test_two_and_n_keys();
	test_pending_expiry_and_attrs();
	test_meta_put();
	test_read_only_txn();
	test_head_renew_delete_lookup();
	test_create();
	test_member_verbs();
	fixture_done(ks);
	return check_done("ks_txn");
}
