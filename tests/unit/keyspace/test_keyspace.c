/*
 * Unit tests for keyspace on a temporary database: expiry and size-0
 * records, stale versions, v0 metadata written by hand, versions, the
 * reserved namespace (empty collections, namespace records), namespace
 * and key iteration with resume, DEL, RENAME, PEXPIREAT, cluster keys,
 * and concurrent writers on one key.
 */
#include "check.h"
#include "fixture.h"
#include "keyspace/ks_int.h"
#include "types/t_hash.h"
#include "types/t_string.h"

#include <pthread.h>
#include <time.h>

/* A new database for each test (each closes its own at the end). */
static struct keyspace *fresh_ks(bool cluster)
{
	return fixture_fresh(NULL, cluster);
}

/* A v1 string record with expiry `expire` written as another writer would. */
static void put_string_meta(struct keyspace *ks, const struct ks_key *k, uint64_t expire,
			    const char *val)
{
	struct enc_meta m = {.type = KV_TYPE_STRING, .v1 = true, .expire_ms = expire};
	struct buf r = BUF_INIT;
	m.flags = (uint8_t)(ENC_FLAG_64BIT | KV_TYPE_STRING);
	CHECK_INT(enc_meta_encode(&r, &m), 0);
	CHECK_INT(buf_add(&r, val, strlen(val)), 0);
	fixture_put_meta(ks, k, r.data, r.len);
	buf_release(&r);
}

static void test_versions(void)
{
	struct keyspace *ks = fresh_ks(false);
	uint64_t before = now_us();
	uint64_t a = ks_version_new(ks), b = ks_version_new(ks);
	uint64_t after = now_us();
	CHECK(a != b);
	CHECK((a >> 11) >= before && (a >> 11) <= after);
	CHECK((b & 2047) == (((a & 2047) + 1) & 2047));
	struct enc_meta m;
	ks_meta_new(ks, &m, KV_TYPE_HASH);
	CHECK(m.v1 && m.type == KV_TYPE_HASH && m.size == 0 && m.expire_ms == 0);
	CHECK(m.version != 0 && m.version != b);
	ks_meta_new(ks, &m, KV_TYPE_STRING);
	CHECK(m.version == 0);
	CHECK(!ks_is_read_only(ks));
	CHECK(!ks_cluster(ks));
	CHECK_INT(ks_sync(ks), 0);
	uint64_t bytes, keys;
	CHECK_INT(ks_stats(ks, &bytes, &keys), 0);
	ks_close(ks);
	ks_close(NULL);
}

static void test_expiry(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct ks_info info;
	struct buf raw = BUF_INIT;
	struct enc_meta m;

	put_string_meta(ks, KEY(DEFNS, "live"), 0, "v");
	put_string_meta(ks, KEY(DEFNS, "soon"), now_ms() + 60000, "v");
	put_string_meta(ks, KEY(DEFNS, "gone"), now_ms() - 1, "v");
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "live"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_STRING);
	CHECK_INT(info.size, 1);
	CHECK(!info.empty);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "soon"), &info), 0);
	CHECK(info.expire_ms > now_ms());
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "gone"), &info), -ENOENT);
	/* Expired records are absent, not of the wrong type. */
	CHECK_INT(ks_meta_get(ks, KEY(DEFNS, "gone"), KV_TYPE_HASH, &raw, &m), -ENOENT);
	CHECK_INT(ks_meta_get(ks, KEY(DEFNS, "live"), KV_TYPE_HASH, &raw, &m), -KV_EWRONGTYPE);
	CHECK_INT(ks_meta_get(ks, KEY(DEFNS, "live"), KV_TYPE_STRING, &raw, &m), 0);
	CHECK_INT(ks_meta_get(ks, KEY(DEFNS, "live"), KV_TYPE_NONE, &raw, &m), 0);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "gone")), -ENOENT);
	CHECK_INT(string_get(ks, KEY(DEFNS, "gone"), &raw), -ENOENT);
	/* SET over an expired key makes a live key without the old expiry. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "gone"), "new", 3, STRING_SET_KEEPTTL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "gone"), &info), 0);
	CHECK_INT(info.expire_ms, 0);

	/* A hash with size 0 is absent, whatever it is asked as. */
	fixture_put_hex(
	    ks, STORE_CF_METADATA, NS_HEX " 68 30",
	    "82 00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 07  00 00 00 00 00 00 00 00");
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h0"), &info), -ENOENT);
	CHECK_INT(ks_meta_get(ks, KEY(DEFNS, "h0"), KV_TYPE_STRING, &raw, &m), -ENOENT);
	uint64_t n = 9;
	CHECK_INT(hash_len(ks, KEY(DEFNS, "h0"), &n), 0);
	CHECK_INT(n, 0);
	/* A size-0 stream is live (streams may be empty). */
	fixture_put_hex(
	    ks, STORE_CF_METADATA, NS_HEX " 73 30",
	    "88 00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 07  00 00 00 00 00 00 00 00"
	    " 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    " 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    " 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00"
	    " 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00");
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "s0"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_STREAM);
	CHECK_INT(info.version, 7);
	/* Corrupt metadata (unknown type 15) reads as -EUCLEAN and can be deleted. */
	fixture_put_hex(ks, STORE_CF_METADATA, NS_HEX " 78", "8F 00");
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "x"), &info), -EUCLEAN);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "x")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "x"), &info), -ENOENT);
	buf_release(&raw);
	ks_close(ks);
}

/* After DEL and re-creation the old version's fields are invisible. */
static void test_stale_versions(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct ks_info info;
	struct buf v = BUF_INIT;
	uint64_t n;

	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "old", 3, "1", 1, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "both", 4, "1", 1, NULL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), 0);
	uint64_t v1 = info.version;
	CHECK_INT(ks_del(ks, KEY(DEFNS, "h")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), -ENOENT);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "old", 3, &v), -ENOENT);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "both", 4, "2", 1, NULL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), 0);
	CHECK(info.version != v1);
	CHECK_INT(info.size, 1);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "old", 3, &v), -ENOENT);
	CHECK_INT(hash_exists(ks, KEY(DEFNS, "h"), "old", 3), 0);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "both", 4, &v), 0);
	CHECK_MEM(v.data, v.len, "2", 1);
	CHECK_INT(hash_len(ks, KEY(DEFNS, "h"), &n), 0);
	CHECK_INT(n, 1);
	int err = 1, count = 0;
	struct hash_iter *it = hash_iter_new(ks, KEY(DEFNS, "h"), NULL, 0, &err);
	CHECK_INT(err, 0);
	const char *f, *val;
	size_t fn, vn;
	while (hash_iter_next(it, &f, &fn, &val, &vn) == 1) {
		CHECK_MEM(f, fn, "both", 4);
		count++;
	}
	CHECK_INT(count, 1);
	hash_iter_free(it);

	/* Same after expiry and re-creation. */
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "h"), now_ms() + 1), 0);
	struct timespec ts = {0, 5 * 1000 * 1000};
	nanosleep(&ts, NULL);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), -ENOENT);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "new", 3, "3", 1, NULL), 0);
	CHECK_INT(hash_exists(ks, KEY(DEFNS, "h"), "both", 4), 0);
	CHECK_INT(hash_len(ks, KEY(DEFNS, "h"), &n), 0);
	CHECK_INT(n, 1);
	buf_release(&v);
	ks_close(ks);
}

/* Metadata encoding v0, written by hand: read, updated in place as v0. */
static void test_v0(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct ks_info info;
	struct buf v = BUF_INIT;
	unsigned char want[64];
	size_t wn;

	/* v0 hash "h": flags 02, expire u32 0, version 0x0102030405060708,
	 * size u32 1; field "f" -> "v". */
	fixture_put_hex(ks, STORE_CF_METADATA, NS_HEX " 68",
			"02 00 00 00 00 01 02 03 04 05 06 07 08 00 00 00 01");
	fixture_put_hex(ks, STORE_CF_DEFAULT, NS_HEX " 00 00 00 01 68 01 02 03 04 05 06 07 08 66",
			"76");
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_HASH);
	CHECK(info.version == 0x0102030405060708ull);
	CHECK_INT(info.size, 1);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "h"), "f", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "v", 1);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "g", 1, "w", 1, NULL), 0);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX " 68", &v), 0);
	wn = unhex("02 00 00 00 00 01 02 03 04 05 06 07 08 00 00 00 02", want);
	CHECK_MEM(v.data, v.len, want, wn);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_DEFAULT,
				  NS_HEX " 00 00 00 01 68 01 02 03 04 05 06 07 08 67", &v),
		  0);
	CHECK_MEM(v.data, v.len, "w", 1);

	/* PEXPIREAT keeps v0: expire in seconds, rounded. */
	uint64_t e = (now_ms() / 1000 + 3600) * 1000 + 600; /* rounds up */
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "h"), e), 0);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX " 68", &v), 0);
	CHECK_INT(v.len, 17);
	CHECK_INT((unsigned char)v.data[0], 0x02);
	CHECK_INT(get_be32(v.data + 1), e / 1000 + 1);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), 0);
	CHECK_INT(info.expire_ms, (e / 1000 + 1) * 1000);

	/* v0 string: flags 01, expire u32 seconds, value. */
	fixture_put_hex(ks, STORE_CF_METADATA, NS_HEX " 73", "01 00 00 00 00 61 62 63");
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "abc", 3);
	uint64_t len;
	CHECK_INT(string_append(ks, KEY(DEFNS, "s"), "d", 1, &len), 0);
	CHECK_INT(len, 4);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX " 73", &v), 0);
	wn = unhex("01 00 00 00 00 61 62 63 64", want);
	CHECK_MEM(v.data, v.len, want, wn);
	/* v0 string with an expiry in the past (1 s after the epoch). */
	fixture_put_hex(ks, STORE_CF_METADATA, NS_HEX " 74", "01 00 00 00 01 61");
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "t"), &info), -ENOENT);
	buf_release(&v);
	ks_close(ks);
}

static void test_empty_records(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct ks_info info;
	struct buf v = BUF_INIT;
	unsigned char want[128];
	size_t wn;

	CHECK_INT(ks_empty_create(ks, KEY("n", "h"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_lookup(ks, KEY("n", "h"), &info), 0);
	CHECK(info.empty);
	CHECK_INT(info.type, KV_TYPE_HASH);
	CHECK_INT(info.version, 0);
	CHECK_INT(info.size, 0);
	/* Stored as a v1 string in __kvfs: "E" | 01 "n" | "h" -> "hash". */
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, RES_HEX " 45 01 6E 68", &v), 0);
	wn = unhex("81 00 00 00 00 00 00 00 00 68 61 73 68", want);
	CHECK_MEM(v.data, v.len, want, wn);
	/* ... and the namespace is recorded: "N" | "n" -> "". */
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, RES_HEX " 4E 6E", &v), 0);
	wn = unhex("81 00 00 00 00 00 00 00 00", want);
	CHECK_MEM(v.data, v.len, want, wn);
	CHECK_INT(ks_ns_exists(ks, "n", 1), 1);

	CHECK_INT(ks_empty_create(ks, KEY("n", "h"), KV_TYPE_SET), -EEXIST);
	CHECK_INT(ks_empty_create(ks, KEY("n", "s"), KV_TYPE_STRING), -EINVAL);
	/* A file typed json before its first document is remembered too. */
	CHECK_INT(ks_empty_create(ks, KEY("n", "j"), KV_TYPE_JSON), 0);
	CHECK_INT(ks_lookup(ks, KEY("n", "j"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_JSON);
	CHECK(info.empty);
	CHECK_INT(ks_empty_remove(ks, KEY("n", "j")), 0);
	CHECK_INT(ks_empty_create(ks, KEY("n", "s"), KV_TYPE_NONE), -EINVAL);
	CHECK_INT(ks_empty_create(ks, KEY("n", "s"), (enum kv_type)15), -EINVAL);
	CHECK_INT(ks_empty_retype(ks, KEY("n", "h"), KV_TYPE_ZSET), 0);
	CHECK_INT(ks_lookup(ks, KEY("n", "h"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_ZSET);
	CHECK_INT(ks_empty_retype(ks, KEY("n", "h"), KV_TYPE_STRING), -EINVAL);
	CHECK_INT(ks_empty_retype(ks, KEY("n", "missing"), KV_TYPE_SET), -ENOENT);
	CHECK_INT(ks_empty_remove(ks, KEY("n", "missing")), -ENOENT);

	/* A live key is not an empty collection. */
	put_string_meta(ks, KEY("n", "str"), 0, "x");
	CHECK_INT(ks_empty_create(ks, KEY("n", "str"), KV_TYPE_HASH), -EEXIST);
	CHECK_INT(ks_empty_retype(ks, KEY("n", "str"), KV_TYPE_HASH), -ENOTEMPTY);
	CHECK_INT(ks_empty_remove(ks, KEY("n", "str")), -ENOTEMPTY);

	/* The first field turns the empty hash into a Kvrocks hash and drops
	 * the record in the same batch. */
	CHECK_INT(ks_empty_retype(ks, KEY("n", "h"), KV_TYPE_HASH), 0);
	CHECK_INT(hash_set(ks, KEY("n", "h"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, RES_HEX " 45 01 6E 68", &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY("n", "h"), &info), 0);
	CHECK(!info.empty);
	CHECK_INT(info.size, 1);
	/* Deleting the last field with HASH_KEEP_EMPTY brings it back. */
	CHECK_INT(hash_del(ks, KEY("n", "h"), "f", 1, HASH_KEEP_EMPTY), 0);
	CHECK_INT(ks_lookup(ks, KEY("n", "h"), &info), 0);
	CHECK(info.empty);
	CHECK_INT(info.type, KV_TYPE_HASH);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX, &v), -ENOENT);
	CHECK_INT(ks_empty_remove(ks, KEY("n", "h")), 0);
	CHECK_INT(ks_lookup(ks, KEY("n", "h"), &info), -ENOENT);
	CHECK_INT(ks_empty_remove(ks, KEY("n", "h")), -ENOENT);

	/* DEL removes an empty collection too. */
	CHECK_INT(ks_empty_create(ks, KEY("n", "e"), KV_TYPE_LIST), 0);
	CHECK_INT(ks_del(ks, KEY("n", "e")), 0);
	CHECK_INT(ks_lookup(ks, KEY("n", "e"), &info), -ENOENT);
	CHECK_INT(ks_del(ks, KEY("n", "e")), -ENOENT);
	/* SET over a remembered empty collection replaces it. */
	CHECK_INT(ks_empty_create(ks, KEY("n", "e"), KV_TYPE_SET), 0);
	CHECK_INT(string_set(ks, KEY("n", "e"), "x", 1, 0), 0);
	CHECK_INT(ks_lookup(ks, KEY("n", "e"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_STRING);
	CHECK(!info.empty);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, RES_HEX " 45 01 6E 65", &v), -ENOENT);
	/* A bad namespace length. */
	CHECK_INT(ks_empty_create(ks, &(struct ks_key){"", 0, "k", 1, NULL, NULL}, KV_TYPE_HASH),
		  -EINVAL);
	buf_release(&v);
	ks_close(ks);
}

/* Collect namespace names into "a,b,c". */
static void list_ns(struct keyspace *ks, const char *after, size_t alen, char *out, size_t cap)
{
	struct ks_ns_iter *it = ks_ns_iter_new(ks, after, alen);
	const char *ns;
	size_t n;
	int rc;
	out[0] = '\0';
	CHECK(it != NULL);
	if (!it)
		return;
	while ((rc = ks_ns_iter_next(it, &ns, &n)) == 1) {
		if (out[0])
			strncat(out, ",", cap - strlen(out) - 1);
		strncat(out, ns, n < cap - strlen(out) - 1 ? n : cap - strlen(out) - 1);
	}
	CHECK_INT(rc, 0);
	ks_ns_iter_free(it);
}

static void test_namespaces(void)
{
	struct keyspace *ks = fresh_ks(false);
	char got[1024];

	list_ns(ks, NULL, 0, got, sizeof(got));
	/* The default namespace always exists. */
	CHECK(strcmp(got, DEFNS) == 0);

	put_string_meta(ks, KEY("b", "k"), 0, "v");
	put_string_meta(ks, KEY("aa", "k"), 0, "v");
	put_string_meta(ks, KEY("a", "k"), 0, "v");
	put_string_meta(ks, KEY("a", "l"), 0, "v");
	put_string_meta(ks, KEY(DEFNS, "k"), 0, "v");
	put_string_meta(ks, KEY("ccc", "k"), 0, "v");
	/* Only dead keys: hidden. */
	put_string_meta(ks, KEY("dead", "a"), now_ms() - 10, "v");
	put_string_meta(ks, KEY("dead", "b"), now_ms() - 10, "v");
	fixture_put_hex(
	    ks, STORE_CF_METADATA, "04 64 65 61 64 63",
	    "82 00 00 00 00 00 00 00 00  00 00 00 00 00 00 00 07  00 00 00 00 00 00 00 00");
	/* Dead keys first, then a live one: shown. */
	put_string_meta(ks, KEY("mix", "a"), now_ms() - 10, "v");
	put_string_meta(ks, KEY("mix", "b"), 0, "v");
	CHECK_INT(ks_ns_exists(ks, "dead", 4), 0);
	CHECK_INT(ks_ns_exists(ks, "mix", 3), 1);
	/* Namespace records, one of them for a namespace with keys too. */
	CHECK_INT(ks_ns_create(ks, "ab", 2, NULL), 0);
	CHECK_INT(ks_ns_create(ks, "zz", 2, NULL), 0);
	CHECK_INT(ks_ns_create(ks, "ab", 2, NULL), -EEXIST);
	CHECK_INT(ks_ns_create(ks, "a", 1, NULL), -EEXIST); /* it has keys */
	CHECK_INT(ks_ns_create(ks, "b\xff", 2, NULL), 0);
	CHECK_INT(ks_ns_create(ks, KS_RESERVED_NS, strlen(KS_RESERVED_NS), NULL), -EPERM);
	CHECK_INT(ks_ns_create(ks, "", 0, NULL), -EINVAL);
	char big[257];
	memset(big, 'x', sizeof(big));
	CHECK_INT(ks_ns_create(ks, big, 256, NULL), -EINVAL);
	CHECK_INT(ks_ns_create(ks, big, 255, NULL), 0);
	/* The reserved namespace holds records now, but is never listed. */
	CHECK_INT(ks_ns_exists(ks, KS_RESERVED_NS, strlen(KS_RESERVED_NS)), 0);
	put_string_meta(ks, KEY(KS_RESERVED_NS, "Aother"), 0, "v");

	list_ns(ks, NULL, 0, got, sizeof(got));
	char want[1024];
	snprintf(want, sizeof(want), "__namespace,a,aa,ab,b,b\xff,ccc,mix,%.255s,zz", big);
	CHECK(strcmp(got, want) == 0);
	if (strcmp(got, want))
		fprintf(stderr, "    got %s\n", got);
	/* Resume after a name, present or not. */
	list_ns(ks, "a", 1, got, sizeof(got));
	snprintf(want, sizeof(want), "aa,ab,b,b\xff,ccc,mix,%.255s,zz", big);
	CHECK(strcmp(got, want) == 0);
	list_ns(ks, "aa", 2, got, sizeof(got));
	snprintf(want, sizeof(want), "ab,b,b\xff,ccc,mix,%.255s,zz", big);
	CHECK(strcmp(got, want) == 0);
	list_ns(ks, "ab", 2, got, sizeof(got));
	snprintf(want, sizeof(want), "b,b\xff,ccc,mix,%.255s,zz", big);
	CHECK(strcmp(got, want) == 0);
	list_ns(ks, "b0", 2, got, sizeof(got));
	snprintf(want, sizeof(want), "b\xff,ccc,mix,%.255s,zz", big);
	CHECK(strcmp(got, want) == 0);
	list_ns(ks, "mix", 3, got, sizeof(got));
	snprintf(want, sizeof(want), "%.255s,zz", big);
	CHECK(strcmp(got, want) == 0);
	list_ns(ks, "y", 1, got, sizeof(got));
	CHECK(strcmp(got, "zz") == 0);
	list_ns(ks, "zz", 2, got, sizeof(got));
	CHECK(strcmp(got, "") == 0);
	list_ns(ks, "0", 1, got, sizeof(got));
	CHECK(strncmp(got, "__namespace,a,", 14) == 0);

	/* Remove: only empty namespaces that were created. */
	CHECK_INT(ks_ns_remove(ks, "a", 1), -ENOTEMPTY);
	CHECK_INT(ks_ns_remove(ks, "nope", 4), -ENOENT);
	CHECK_INT(ks_ns_remove(ks, "dead", 4), -ENOENT);
	CHECK_INT(ks_ns_remove(ks, KS_RESERVED_NS, strlen(KS_RESERVED_NS)), -EPERM);
	CHECK_INT(ks_ns_remove(ks, "", 0), -EINVAL);
	CHECK_INT(ks_ns_exists(ks, "", 0), -EINVAL);
	CHECK_INT(ks_ns_remove(ks, "zz", 2), 0);
	CHECK_INT(ks_ns_exists(ks, "zz", 2), 0);
	CHECK_INT(ks_ns_remove(ks, "zz", 2), -ENOENT);
	CHECK_INT(ks_empty_create(ks, KEY("ab", "e"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_ns_remove(ks, "ab", 2), -ENOTEMPTY);
	CHECK_INT(ks_empty_remove(ks, KEY("ab", "e")), 0);
	CHECK_INT(ks_ns_remove(ks, "ab", 2), 0);
	/* A namespace with keys and a record: removing the record is refused
	 * while keys live. */
	CHECK_INT(ks_ns_remove(ks, "b", 1), -ENOTEMPTY);
	/* An empty collection makes its namespace exist. */
	CHECK_INT(ks_empty_create(ks, KEY("q", "e"), KV_TYPE_SET), 0);
	list_ns(ks, "mix", 3, got, sizeof(got));
	snprintf(want, sizeof(want), "q,%.255s", big);
	CHECK(strcmp(got, want) == 0);
	ks_close(ks);
}

/* Collect "key:type[e]" entries of a namespace. */
/* List the keys of ns after the key `after` (a position: in cluster
 * mode its slot, then its name). */
static void list_keys(struct keyspace *ks, const char *ns, const char *after, char *out, size_t cap)
{
	struct buf pos = BUF_INIT;
	if (after && ks_cluster(ks))
		CHECK_INT(buf_add_be16(&pos, enc_slot(after, strlen(after))), 0);
	if (after)
		CHECK_INT(buf_add(&pos, after, strlen(after)), 0);
	struct ks_key_iter *it =
	    ks_key_iter_new(ks, ns, strlen(ns), after ? pos.data : NULL, pos.len);
	const char *k, *r;
	size_t n, rn;
	struct ks_info info;
	int rc;
	out[0] = '\0';
	buf_release(&pos);
	CHECK(it != NULL);
	if (!it)
		return;
	while ((rc = ks_key_iter_next(it, &k, &n, &info)) == 1) {
		/* the position of a key stored where its name says */
		ks_key_iter_rank(it, &r, &rn);
		CHECK(rn == n + (ks_cluster(ks) ? 2 : 0) && !memcmp(r + rn - n, k, n));
		if (ks_cluster(ks))
			CHECK_INT(get_be16(r), enc_slot(k, n));
		char item[256];
		snprintf(item, sizeof(item), "%s%.*s:%s%s", out[0] ? "," : "", (int)n, k,
			 enc_type_name(info.type), info.empty ? "(e)" : "");
		strncat(out, item, cap - strlen(out) - 1);
	}
	CHECK_INT(rc, 0);
	ks_key_iter_free(it);
}

static void test_key_iteration(bool cluster)
{
	struct keyspace *ks = fresh_ks(cluster);
	char got[1024];

	list_keys(ks, "n", NULL, got, sizeof(got));
	CHECK(strcmp(got, "") == 0);
	put_string_meta(ks, KEY("n", "a"), 0, "hello");
	CHECK_INT(hash_set(ks, KEY("n", "b"), "f", 1, "v", 1, NULL), 0);
	put_string_meta(ks, KEY("n", "c"), now_ms() - 5, "old");
	CHECK_INT(hash_set(ks, KEY("n", "d"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(hash_del(ks, KEY("n", "d"), "f", 1, 0), 0);
	CHECK_INT(ks_empty_create(ks, KEY("n", "bb"), KV_TYPE_HASH), 0);
	CHECK_INT(ks_empty_create(ks, KEY("n", "e"), KV_TYPE_SET), 0);
	CHECK_INT(ks_empty_create(ks, KEY("n", ""), KV_TYPE_LIST), 0);
	/* Other namespaces stay out, including one that extends the name. */
	put_string_meta(ks, KEY("nn", "a"), 0, "x");
	put_string_meta(ks, KEY("m", "z"), 0, "x");
	CHECK_INT(ks_empty_create(ks, KEY("nn", "x"), KV_TYPE_HASH), 0);
	/* An empty record shadowed by a live key (written behind kvfs's back,
	 * as Kvrocks itself would): the live key wins. */
	{
		struct store_batch *b = store_batch_new(ks_store(ks));
		CHECK_INT(ks_empty_put(ks, b, NULL, KEY("n", "a"), KV_TYPE_HASH, 0), 0);
		CHECK_INT(store_write(ks_store(ks), b, false), 0);
		store_batch_free(b);
	}

	/* In cluster mode the order is (slot, key); compute what to expect. */
	const char *want_all = ":list(e),a:string,b:hash,bb:hash(e),e:set(e)";
	if (cluster) {
		/* slots: ""=0, a=15495, b=3300, bb=8279? computed below */
		const char *names[] = {"", "a", "b", "bb", "e"};
		const char *items[] = {":list(e)", "a:string", "b:hash", "bb:hash(e)", "e:set(e)"};
		int order[5] = {0, 1, 2, 3, 4};
		for (int i = 0; i < 5; i++)
			for (int j = i + 1; j < 5; j++) {
				uint16_t si = enc_slot(names[order[i]], strlen(names[order[i]]));
				uint16_t sj = enc_slot(names[order[j]], strlen(names[order[j]]));
				if (sj < si) {
					int t = order[i];
					order[i] = order[j];
					order[j] = t;
				}
			}
		static char buf[256];
		buf[0] = '\0';
		for (int i = 0; i < 5; i++) {
			if (i)
				strcat(buf, ",");
			strcat(buf, items[order[i]]);
		}
		want_all = buf;
	}
	list_keys(ks, "n", NULL, got, sizeof(got));
	CHECK(strcmp(got, want_all) == 0);
	if (strcmp(got, want_all))
		fprintf(stderr, "    got  %s\n    want %s\n", got, want_all);

	/* Resume from every cursor gives the tail of the full listing. */
	const char *cursors[] = {"", "a", "b", "bb", "e", "c", "zzz"};
	for (int i = 0; i < 7; i++) {
		char tail[1024] = "";
		/* the full listing after the cursor: entries that sort after it */
		const char *p = want_all;
		while (*p) {
			const char *end = strchr(p, ',');
			size_t len = end ? (size_t)(end - p) : strlen(p);
			const char *colon = memchr(p, ':', len);
			size_t kl = (size_t)(colon - p);
			const char *c = cursors[i];
			int cmp;
			if (cluster) {
				uint16_t a = enc_slot(p, kl), b = enc_slot(c, strlen(c));
				cmp = a != b ? (a < b ? -1 : 1) : bytes_cmp(p, kl, c, strlen(c));
			} else {
				cmp = bytes_cmp(p, kl, c, strlen(c));
			}
			if (cmp > 0) {
				if (tail[0])
					strcat(tail, ",");
				strncat(tail, p, len);
			}
			p = end ? end + 1 : p + len;
		}
		list_keys(ks, "n", cursors[i], got, sizeof(got));
		CHECK(strcmp(got, tail) == 0);
		if (strcmp(got, tail))
			fprintf(stderr, "    after \"%s\": got %s, want %s\n", cursors[i], got,
				tail);
	}

	/* Info of a live string: size = value length; of a hash: version and size. */
	struct ks_key_iter *it = ks_key_iter_new(ks, "n", 1, "a", 0);
	const char *k;
	size_t kn;
	struct ks_info info, li;
	int seen = 0;
	while (ks_key_iter_next(it, &k, &kn, &info) == 1) {
		if (kn == 1 && k[0] == 'a') {
			CHECK_INT(info.size, 5);
			CHECK_INT(info.version, 0);
			seen++;
		}
		if (kn == 1 && k[0] == 'b') {
			CHECK_INT(ks_lookup(ks, KEY("n", "b"), &li), 0);
			CHECK(info.version == li.version && info.version != 0);
			CHECK_INT(info.size, 1);
			seen++;
		}
	}
	CHECK_INT(seen, 2);
	ks_key_iter_free(it);
	CHECK(ks_key_iter_new(ks, "", 0, NULL, 0) == NULL);
	ks_close(ks);
}

static void test_cluster_bytes(void)
{
	struct keyspace *ks = fresh_ks(true);
	struct buf v = BUF_INIT;
	unsigned char want[64];
	size_t wn;
	CHECK(ks_cluster(ks));
	/* kvrocks-encoding.md 12: cluster key for foo = NS 2F 96 66 6F 6F. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "foo"), "bar", 3, 0), 0);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX " 2F 96 66 6F 6F", &v), 0);
	wn = unhex("81 00 00 00 00 00 00 00 00 62 61 72", want);
	CHECK_MEM(v.data, v.len, want, wn);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "foo"), "f", 1, "v", 1, NULL), -KV_EWRONGTYPE);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "foo")), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "foo"), "f", 1, "v", 1, NULL), 0);
	struct ks_info info;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "foo"), &info), 0);
	struct buf sk = BUF_INIT;
	CHECK_INT(ks_sub_key(ks, KEY(DEFNS, "foo"), info.version, "f", 1, &sk), 0);
	wn = unhex(NS_HEX " 2F 96 00 00 00 03 66 6F 6F", want);
	CHECK(sk.len == wn + 8 + 1);
	CHECK_MEM(sk.data, wn, want, wn);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, &v), 0);
	CHECK_MEM(v.data, v.len, "v", 1);
	/* Rename keeps working with slots (the slot changes with the name). */
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "foo"), KEY(DEFNS, "bar")), 0);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "bar"), "f", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "v", 1);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX " 13 C5 62 61 72", &v), 0);
	buf_release(&sk);
	buf_release(&v);
	ks_close(ks);
}

static void test_rename(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct ks_info info, src;
	struct buf v = BUF_INIT, raw_before = BUF_INIT;
	uint64_t n;

	/* String, to a new name. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "value", 5, 0), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "s"), now_ms() + 100000), 0);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX " 73", &raw_before), 0);
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "s"), KEY(DEFNS, "t")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "s"), &info), -ENOENT);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX " 74", &v), 0);
	CHECK_MEM(v.data, v.len, raw_before.data, raw_before.len); /* byte for byte */
	CHECK_INT(string_get(ks, KEY(DEFNS, "t"), &v), 0);
	CHECK_MEM(v.data, v.len, "value", 5);

	/* Hash, to a new name: same version, every field, source gone. */
	for (int i = 0; i < 50; i++) {
		char f[16];
		int fl = snprintf(f, sizeof(f), "f%02d", i);
		CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), f, (size_t)fl, f, (size_t)fl, NULL), 0);
	}
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &src), 0);
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "h"), KEY("other", "h2")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY("other", "h2"), &info), 0);
	CHECK(info.version == src.version);
	CHECK_INT(info.size, 50);
	CHECK_INT(hash_get(ks, KEY("other", "h2"), "f07", 3, &v), 0);
	CHECK_MEM(v.data, v.len, "f07", 3);
	int count = 0, err;
	struct hash_iter *it = hash_iter_new(ks, KEY("other", "h2"), NULL, 0, &err);
	const char *f, *val;
	size_t fn, vn;
	while (hash_iter_next(it, &f, &fn, &val, &vn) == 1) {
		CHECK_MEM(f, fn, val, vn);
		count++;
	}
	hash_iter_free(it);
	CHECK_INT(count, 50);
	/* The source's sub-keys are dropped too. */
	struct buf sk = BUF_INIT;
	CHECK_INT(ks_sub_key(ks, KEY(DEFNS, "h"), src.version, "f07", 3, &sk), 0);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, sk.data, sk.len, &v), -ENOENT);

	/* Onto an existing hash: the target is replaced, its fields gone. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "x"), "old", 3, "1", 1, NULL), 0);
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "t"), KEY(DEFNS, "x")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "x"), &info), 0);
	CHECK_INT(info.type, KV_TYPE_STRING);
	CHECK_INT(hash_get(ks, KEY(DEFNS, "x"), "old", 3, &v), -KV_EWRONGTYPE);
	/* A hash onto a string, and back: fields intact, no resurrection. */
	CHECK_INT(ks_rename(ks, KEY("other", "h2"), KEY(DEFNS, "x")), 0);
	CHECK_INT(hash_len(ks, KEY(DEFNS, "x"), &n), 0);
	CHECK_INT(n, 50);
	CHECK_INT(hash_exists(ks, KEY(DEFNS, "x"), "old", 3), 0);
	CHECK_INT(hash_del(ks, KEY(DEFNS, "x"), "f00", 3, 0), 0);
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "x"), KEY(DEFNS, "h")), 0);
	CHECK_INT(hash_exists(ks, KEY(DEFNS, "h"), "f00", 3), 0);
	CHECK_INT(hash_len(ks, KEY(DEFNS, "h"), &n), 0);
	CHECK_INT(n, 49);

	/* Onto itself: nothing changes. */
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "h"), KEY(DEFNS, "h")), 0);
	CHECK_INT(hash_len(ks, KEY(DEFNS, "h"), &n), 0);
	CHECK_INT(n, 49);
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "nope"), KEY(DEFNS, "nope")), -ENOENT);
	/* Missing source. */
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "nope"), KEY(DEFNS, "h")), -ENOENT);
	CHECK_INT(hash_len(ks, KEY(DEFNS, "h"), &n), 0);
	CHECK_INT(n, 49);

	/* Empty collections move as records and replace live targets. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "e"), KV_TYPE_SET), 0);
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "e"), KEY(DEFNS, "h")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "e"), &info), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), 0);
	CHECK(info.empty);
	CHECK_INT(info.type, KV_TYPE_SET);
	/* A live key onto an empty record: the record goes. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "s2"), "v", 1, 0), 0);
	CHECK_INT(ks_rename(ks, KEY(DEFNS, "s2"), KEY(DEFNS, "h")), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), 0);
	CHECK(!info.empty);
	CHECK_INT(info.type, KV_TYPE_STRING);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA,
				  RES_HEX " 45 0B 5F 5F 6E 61 6D 65 73 70 61 63 65 68", &v),
		  -ENOENT);
	buf_release(&sk);
	buf_release(&v);
	buf_release(&raw_before);
	ks_close(ks);
}

static void test_expire(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct ks_info info;
	struct buf v = BUF_INIT;
	unsigned char want[64];
	size_t wn;

	CHECK_INT(string_set(ks, KEY(DEFNS, "foo"), "bar", 3, 0), 0);
	/* SET foo bar PX...: 81 <E u64 BE> 62 61 72 */
	uint64_t e = now_ms() + 3600000;
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "foo"), e), 0);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX " 66 6F 6F", &v), 0);
	want[0] = 0x81;
	put_be64(want + 1, e);
	memcpy(want + 9, "bar", 3);
	CHECK_MEM(v.data, v.len, want, 12);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "foo"), &info), 0);
	CHECK(info.expire_ms == e);
	/* PERSIST */
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "foo"), 0), 0);
	CHECK_INT(fixture_get_hex(ks, STORE_CF_METADATA, NS_HEX " 66 6F 6F", &v), 0);
	wn = unhex("81 00 00 00 00 00 00 00 00 62 61 72", want);
	CHECK_MEM(v.data, v.len, want, wn);
	/* On a hash: version and size stay. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "v", 1, NULL), 0);
	struct ks_info before;
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &before), 0);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "h"), e), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), 0);
	CHECK(info.version == before.version && info.size == 1 && info.expire_ms == e);
	/* In the past: the key goes. */
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "h"), 1), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "h"), &info), -ENOENT);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "h"), e), -ENOENT);
	CHECK_INT(ks_expire(ks, KEY(DEFNS, "missing"), e), -ENOENT);
	buf_release(&v);
	ks_close(ks);
}

struct worker {
	struct keyspace *ks;
	int id;
	int fails;
};

#define PER_THREAD 200

static void *worker_run(void *arg)
{
	struct worker *w = arg;
	for (int i = 0; i < PER_THREAD; i++) {
		char f[32];
		int n = snprintf(f, sizeof(f), "t%d-f%d", w->id, i);
		bool created = false;
		if (hash_set(w->ks, KEY(DEFNS, "shared"), f, (size_t)n, "v", 1, &created) != 0 ||
		    !created)
			w->fails++;
	}
	return NULL;
}

static void test_concurrent(void)
{
	struct keyspace *ks = fresh_ks(false);
	pthread_t th[8];
	struct worker w[8];
	for (int i = 0; i < 8; i++) {
		w[i] = (struct worker){ks, i, 0};
		pthread_create(&th[i], NULL, worker_run, &w[i]);
	}
	int fails = 0;
	for (int i = 0; i < 8; i++) {
		pthread_join(th[i], NULL);
		fails += w[i].fails;
	}
	CHECK_INT(fails, 0);
	uint64_t n = 0;
	CHECK_INT(hash_len(ks, KEY(DEFNS, "shared"), &n), 0);
	CHECK_INT(n, 8 * PER_THREAD);
	int err, count = 0;
	struct hash_iter *it = hash_iter_new(ks, KEY(DEFNS, "shared"), NULL, 0, &err);
	const char *f, *v;
	size_t fn, vn;
	while (hash_iter_next(it, &f, &fn, &v, &vn) == 1)
		count++;
	hash_iter_free(it);
	CHECK_INT(count, 8 * PER_THREAD);
	ks_close(ks);
}

static void test_locks(void)
{
	struct keyspace *ks = fresh_ks(false);
	/* Same stripe twice through ks_lock_pair must not self-deadlock. */
	ks_lock_pair(ks, KEY(DEFNS, "a"), KEY(DEFNS, "a"));
	ks_unlock_pair(ks, KEY(DEFNS, "a"), KEY(DEFNS, "a"));
	ks_lock_pair(ks, KEY(DEFNS, "a"), KEY(DEFNS, "b"));
	ks_unlock_pair(ks, KEY(DEFNS, "a"), KEY(DEFNS, "b"));
	ks_lock_pair(ks, KEY(DEFNS, "a"), NULL);
	ks_unlock_pair(ks, KEY(DEFNS, "a"), NULL);
	/* Long keys hash too. */
	char big[5000];
	memset(big, 'k', sizeof(big));
	struct ks_key lk = {DEFNS, strlen(DEFNS), big, sizeof(big), NULL, NULL};
	ks_lock_pair(ks, &lk, NULL);
	ks_unlock_pair(ks, &lk, NULL);
	CHECK(1);
	ks_close(ks);
}

static void test_read_only(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct ks_info info;
	CHECK_INT(string_set(ks, KEY(DEFNS, "k"), "v", 1, 0), 0);
	ks_close(ks);
	struct ks_options o = {.read_only = true};
	ks = fixture_reopen(&o);
	CHECK(ks_is_read_only(ks));
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "k"), &info), 0);
	CHECK_INT(ks_del(ks, KEY(DEFNS, "k")), -EROFS);
	CHECK_INT(string_set(ks, KEY(DEFNS, "k"), "w", 1, 0), -EROFS);
	CHECK_INT(ks_ns_create(ks, "n", 1, NULL), -EROFS);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "k"), &info), 0);
	ks_close(ks);
}

/* The sub-keys ks_sub_iter_open hands out, joined with ',' into out. */
static int sub_walk(struct keyspace *ks, const struct ks_key *k, const struct ks_sub_iter_opts *o,
		    struct buf *out)
{
	const char *sub, *v;
	size_t sn, vn;
	int rc;
	struct ks_sub_iter *it = ks_sub_iter_open(ks, k, KV_TYPE_HASH, o, &rc);
	buf_reset(out);
	buf_add(out, "", 0);
	while (it && (rc = ks_sub_iter_next(it, &sub, &sn, &v, &vn)) == 1) {
		if (out->len)
			buf_add(out, ",", 1);
		buf_add(out, sub, sn);
	}
	ks_sub_iter_free(it);
	return rc;
}

/* ks_sub_iter's options: direction, start, column family, metadata. */
static void test_sub_iter(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct buf out = BUF_INIT, raw = BUF_INIT, sk = BUF_INIT;
	struct enc_meta m;
	int rc;
	for (const char *f = "abc"; *f; f++)
		CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), f, 1, "v", 1, NULL), 0);
	struct ks_sub_iter_opts o = {0};
	CHECK_INT(sub_walk(ks, KEY(DEFNS, "h"), &o, &out), 0);
	CHECK(strcmp(out.data, "a,b,c") == 0);
	o.reverse = true;
	CHECK_INT(sub_walk(ks, KEY(DEFNS, "h"), &o, &out), 0);
	CHECK(strcmp(out.data, "c,b,a") == 0);
	o.after = "b";
	o.alen = 1;
	CHECK_INT(sub_walk(ks, KEY(DEFNS, "h"), &o, &out), 0);
	CHECK(strcmp(out.data, "a") == 0);
	o.inclusive = true;
	CHECK_INT(sub_walk(ks, KEY(DEFNS, "h"), &o, &out), 0);
	CHECK(strcmp(out.data, "b,a") == 0);
	o.reverse = false;
	CHECK_INT(sub_walk(ks, KEY(DEFNS, "h"), &o, &out), 0);
	CHECK(strcmp(out.data, "b,c") == 0);
	o.after = "bb"; /* not there: inclusive or not, the next one */
	o.alen = 2;
	CHECK_INT(sub_walk(ks, KEY(DEFNS, "h"), &o, &out), 0);
	CHECK(strcmp(out.data, "c") == 0);
	o.reverse = true;
	o.inclusive = false;
	CHECK_INT(sub_walk(ks, KEY(DEFNS, "h"), &o, &out), 0);
	CHECK(strcmp(out.data, "b,a") == 0);
	/* The metadata read, and the iterator's own key. */
	o = (struct ks_sub_iter_opts){.meta = &m};
	struct ks_sub_iter *it = ks_sub_iter_open(ks, KEY(DEFNS, "h"), KV_TYPE_HASH, &o, &rc);
	CHECK(it && rc == 0 && m.size == 3 && m.type == KV_TYPE_HASH && m.tail == NULL);
	CHECK(it && ks_key_eq(ks_sub_iter_key(it), KEY(DEFNS, "h")));
	CHECK(it && ks_sub_iter_key(it)->attr == NULL);
	ks_sub_iter_free(it);
	CHECK_INT(ks_meta_get(ks, KEY(DEFNS, "h"), KV_TYPE_HASH, &raw, &m), 0);
	uint64_t ver = m.version;
	/* Another column family: records of the same version there. */
	CHECK_INT(ks_sub_key(ks, KEY(DEFNS, "h"), ver, "z", 1, &sk), 0);
	fixture_put(ks, STORE_CF_ZSET_SCORE, sk.data, sk.len, "", 0);
	o = (struct ks_sub_iter_opts){.cf = STORE_CF_ZSET_SCORE};
	CHECK_INT(sub_walk(ks, KEY(DEFNS, "h"), &o, &out), 0);
	CHECK(strcmp(out.data, "z") == 0);
	/* A missing key: nothing, and zero metadata; another type: NULL. */
	memset(&m, 0xff, sizeof(m));
	o = (struct ks_sub_iter_opts){.meta = &m, .reverse = true};
	CHECK_INT(sub_walk(ks, KEY(DEFNS, "nope"), &o, &out), 0);
	CHECK(strcmp(out.data, "") == 0 && m.size == 0 && m.version == 0);
	put_string_meta(ks, KEY(DEFNS, "s"), 0, "x");
	CHECK(ks_sub_iter_open(ks, KEY(DEFNS, "s"), KV_TYPE_HASH, &o, &rc) == NULL);
	CHECK_INT(rc, -KV_EWRONGTYPE);
	buf_release(&out);
	buf_release(&raw);
	buf_release(&sk);
	ks_close(ks);
}

static void test_meta_copy(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct buf raw = BUF_INIT;
	struct enc_meta m, g;
	char tail[16];
	put_string_meta(ks, KEY(DEFNS, "s"), 0, "hello");
	CHECK_INT(ks_meta_copy(ks, KEY(DEFNS, "s"), KV_TYPE_STRING, &m, tail, 3), 0);
	CHECK(m.tail == (const uint8_t *)tail && m.tail_len == 3 && !memcmp(tail, "hel", 3));
	CHECK_INT(ks_meta_copy(ks, KEY(DEFNS, "s"), KV_TYPE_STRING, &m, tail, sizeof(tail)), 0);
	CHECK(m.tail_len == 5 && !memcmp(tail, "hello", 5));
	CHECK_INT(ks_meta_copy(ks, KEY(DEFNS, "s"), KV_TYPE_HASH, &m, tail, 3), -KV_EWRONGTYPE);
	CHECK_INT(ks_meta_copy(ks, KEY(DEFNS, "no"), KV_TYPE_NONE, &m, tail, 3), -ENOENT);
	/* The header is ks_meta_get's; a tail of 0 bytes copies nothing. */
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "v", 1, NULL), 0);
	CHECK_INT(ks_meta_get(ks, KEY(DEFNS, "h"), KV_TYPE_HASH, &raw, &g), 0);
	CHECK_INT(ks_meta_copy(ks, KEY(DEFNS, "h"), KV_TYPE_HASH, &m, NULL, 0), 0);
	CHECK(m.version == g.version && m.size == 1 && m.tail_len == 0);
	buf_release(&raw);
	ks_close(ks);
}

/* ks_version_get, ks_sub_len, ks_sub_exists, ks_sub_has: one sub-key of a
 * live key. */
static void test_sub_reads(void)
{
	struct keyspace *ks = fresh_ks(false);
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	uint64_t ver = 0, len = 0;
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "f", 1, "value", 5, NULL), 0);
	CHECK_INT(hash_set(ks, KEY(DEFNS, "h"), "e", 1, "", 0, NULL), 0);
	CHECK_INT(ks_meta_get(ks, KEY(DEFNS, "h"), KV_TYPE_HASH, &raw, &m), 0);
	CHECK_INT(ks_version_get(ks, KEY(DEFNS, "h"), KV_TYPE_HASH, &ver), 0);
	CHECK(ver == m.version);
	CHECK_INT(ks_version_get(ks, KEY(DEFNS, "h"), KV_TYPE_SET, &ver), -KV_EWRONGTYPE);
	CHECK_INT(ks_version_get(ks, KEY(DEFNS, "nope"), KV_TYPE_HASH, &ver), -ENOENT);
	CHECK_INT(ks_sub_len(ks, KEY(DEFNS, "h"), m.version, STORE_CF_DEFAULT, "f", 1, &len), 0);
	CHECK_INT(len, 5);
	CHECK_INT(ks_sub_len(ks, KEY(DEFNS, "h"), m.version, STORE_CF_DEFAULT, "e", 1, &len), 0);
	CHECK_INT(len, 0);
	CHECK_INT(ks_sub_len(ks, KEY(DEFNS, "h"), m.version, STORE_CF_DEFAULT, "g", 1, &len),
		  -ENOENT);
	CHECK_INT(ks_sub_exists(ks, KEY(DEFNS, "h"), m.version, STORE_CF_DEFAULT, "e", 1), 1);
	CHECK_INT(ks_sub_exists(ks, KEY(DEFNS, "h"), m.version, STORE_CF_DEFAULT, "g", 1), 0);
	/* Another version, another column family: not there. */
	CHECK_INT(ks_sub_exists(ks, KEY(DEFNS, "h"), m.version + 1, STORE_CF_DEFAULT, "f", 1), 0);
	CHECK_INT(ks_sub_exists(ks, KEY(DEFNS, "h"), m.version, STORE_CF_ZSET_SCORE, "f", 1), 0);
	CHECK_INT(ks_sub_has(ks, KEY(DEFNS, "h"), KV_TYPE_HASH, "f", 1), 1);
	CHECK_INT(ks_sub_has(ks, KEY(DEFNS, "h"), KV_TYPE_HASH, "g", 1), 0);
	CHECK_INT(ks_sub_has(ks, KEY(DEFNS, "nope"), KV_TYPE_HASH, "f", 1), 0);
	CHECK_INT(ks_sub_has(ks, KEY(DEFNS, "h"), KV_TYPE_SET, "f", 1), -KV_EWRONGTYPE);
	buf_release(&raw);
	ks_close(ks);
}

int main(void)
{
	log_level_current = -1; /* expected errors stay quiet */
	test_versions();
	test_expiry();
	test_stale_versions();
	test_v0();
	test_empty_records();
	test_namespaces();
	test_key_iteration(false);
	test_key_iteration(true);
	test_cluster_bytes();
	test_rename();
	test_expire();
	test_concurrent();
	test_locks();
	test_read_only();
	test_sub_iter();
	test_meta_copy();
	test_sub_reads();
	fixture_done(NULL);
	return check_done("test_keyspace");
}
