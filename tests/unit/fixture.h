/*
 * What the storage-backed unit tests share: a fresh temporary database,
 * keys, and raw access to the stored bytes (put, get and count records
 * by hex key, a key's metadata record and version, a key's sub-keys), so
 * that tests compare the bytes with kvrocks-encoding.md without going
 * through the code under test. Include after check.h. Everything is
 * static inline: a test uses what it needs.
 */
#ifndef KVFS_FIXTURE_H
#define KVFS_FIXTURE_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "keyspace/keyspace.h"
#include "engine/store.h"
#include "tmpdir.h"

#define DEFNS KS_DEFAULT_NS
/* A key (namespace n, name k; NUL-terminated strings) with no attribute
 * change: KEY(n, k), or KEY(k) in the default namespace. KEYA(n, k, ch)
 * is one whose write carries change ch (ks_key.attr). */
#define KEYA(n, k, ch)		   (&(struct ks_key){(n), strlen(n), (k), strlen(k), (ch), NULL})
#define KEY_NS_(n, k)		   KEYA(n, k, NULL)
#define KEY_DEF_(k)		   KEYA(DEFNS, k, NULL)
#define KEY_PICK_(a, b, name, ...) name
#define KEY(...)		   KEY_PICK_(__VA_ARGS__, KEY_NS_, KEY_DEF_, )(__VA_ARGS__)
/* ns_len | "__namespace" (the default namespace) and ns_len | "__kvfs". */
#define NS_HEX	"0B 5F 5F 6E 61 6D 65 73 70 61 63 65"
#define RES_HEX "06 5F 5F 6B 76 66 73"

static char *fixture_dir;

/* Close ks (if not NULL) and open a new empty database in a new temporary
 * directory; exits if it cannot. The last directory goes with
 * fixture_done(). */
static inline struct keyspace *fixture_fresh(struct keyspace *ks, bool cluster)
{
	struct ks_options o = {.cluster = cluster};
	ks_close(ks);
	tmpdir_remove(fixture_dir);
	fixture_dir = tmpdir_new();
	ks = NULL;
	if (!fixture_dir || ks_open(fixture_dir, &o, &ks) != 0 || !ks) {
		fprintf(stderr, "cannot open a test database\n");
		exit(1);
	}
	return ks;
}

/* Open a new empty database in a new temporary directory, the open
 * counted as a check: the keyspace, NULL if it failed. fixture_done()
 * closes it and removes the directory. */
static inline struct keyspace *fixture_open_checked(void)
{
	struct keyspace *ks = NULL;
	fixture_dir = tmpdir_new();
	CHECK_INT(ks_open(fixture_dir, NULL, &ks), 0);
	return ks;
}

/* Close ks (if not NULL) and open the current directory again with o
 * (NULL: the defaults), the open counted as a check: the keyspace, NULL
 * if it failed. */
static inline struct keyspace *fixture_reopen_checked(struct keyspace *ks,
						      const struct ks_options *o)
{
	ks_close(ks);
	ks = NULL;
	CHECK_INT(ks_open(fixture_dir, o, &ks), 0);
	return ks;
}

/* Reopen the current directory (after ks_close), e.g. read-only; exits
 * if it cannot. */
static inline struct keyspace *fixture_reopen(const struct ks_options *o)
{
	struct keyspace *ks = NULL;
	if (ks_open(fixture_dir, o, &ks) != 0 || !ks) {
		fprintf(stderr, "cannot reopen the test database\n");
		exit(1);
	}
	return ks;
}

static inline void fixture_done(struct keyspace *ks)
{
	ks_close(ks);
	tmpdir_remove(fixture_dir);
	fixture_dir = NULL;
}

/* Write one raw record, as another writer would: 0 or a negative errno
 * (-ENOMEM: no batch). Not a check: the caller checks what it needs. */
static inline int fixture_write(struct keyspace *ks, enum store_cf cf, const void *k, size_t kn,
				const void *v, size_t vn)
{
	struct store_batch *b = store_batch_new(ks_store(ks));
	if (!b)
		return -ENOMEM;
	store_batch_put(b, cf, k, kn, v, vn);
	int rc = store_write(ks_store(ks), b, false);
	store_batch_free(b);
	return rc;
}

/* fixture_write() as two checks: the batch, the write. */
static inline void fixture_put(struct keyspace *ks, enum store_cf cf, const void *k, size_t kn,
			       const void *v, size_t vn)
{
	int rc = fixture_write(ks, cf, k, kn, v, vn);
	CHECK(rc != -ENOMEM);
	CHECK_INT(rc, 0);
}

static inline void fixture_put_hex(struct keyspace *ks, enum store_cf cf, const char *khex,
				   const char *vhex)
{
	unsigned char k[4096], v[4096];
	size_t kn = check_unhex(khex, k, sizeof(k)), vn = check_unhex(vhex, v, sizeof(v));
	fixture_put(ks, cf, k, kn, v, vn);
}

/* The record under the raw key khex (hex) in cf: 0, -ENOENT. */
static inline int fixture_get_hex(struct keyspace *ks, enum store_cf cf, const char *khex,
				  struct buf *out)
{
	unsigned char k[4096];
	size_t kn = check_unhex(khex, k, sizeof(k));
	return store_get(ks_store(ks), cf, k, kn, out);
}

/* The number of records of cf whose key starts with hex. */
static inline long fixture_count_hex(struct keyspace *ks, enum store_cf cf, const char *hex)
{
	unsigned char p[4096];
	size_t pn = check_unhex(hex, p, sizeof(p));
	struct store_iter *it = store_iter_new(ks_store(ks), cf, NULL, 0, NULL, 0);
	long n = 0;
	for (store_iter_seek(it, p, pn); store_iter_valid(it); store_iter_next(it)) {
		size_t kn;
		const char *k = store_iter_key(it, &kn);
		if (kn < pn || memcmp(k, p, pn) != 0)
			break;
		n++;
	}
	store_iter_free(it);
	return n;
}

/* The stored metadata record of k: 0, -ENOENT. */
static inline int fixture_meta_raw(struct keyspace *ks, const struct ks_key *k, struct buf *out)
{
	struct buf mk = BUF_INIT;
	int rc = ks_meta_key(ks, k, &mk);
	if (!rc)
		rc = store_get(ks_store(ks), STORE_CF_METADATA, mk.data, mk.len, out);
	buf_release(&mk);
	return rc;
}

/* Check k's whole stored metadata record against hex. */
static inline void fixture_check_meta_hex(struct keyspace *ks, const struct ks_key *k,
					  const char *hex)
{
	unsigned char want[4096];
	size_t wn = check_unhex(hex, want, sizeof(want));
	struct buf r = BUF_INIT;
	CHECK_INT(fixture_meta_raw(ks, k, &r), 0);
	CHECK_MEM(r.data, r.len, want, wn);
	buf_release(&r);
}

/* Write k's metadata record raw. */
static inline void fixture_put_meta(struct keyspace *ks, const struct ks_key *k, const void *v,
				    size_t vn)
{
	struct buf mk = BUF_INIT;
	CHECK_INT(ks_meta_key(ks, k, &mk), 0);
	fixture_put(ks, STORE_CF_METADATA, mk.data, mk.len, v, vn);
	buf_release(&mk);
}

/* The version in k's stored v1 collection metadata (0 if none). */
static inline uint64_t fixture_version(struct keyspace *ks, const struct ks_key *k)
{
	struct buf r = BUF_INIT;
	uint64_t ver = 0;
	if (fixture_meta_raw(ks, k, &r) == 0 && r.len >= 17 && (r.data[0] & 0x80))
		ver = get_be64(r.data + 9);
	buf_release(&r);
	return ver;
}

/* Check k's stored metadata byte for byte: a v1 collection header
 * (flags, no expiry, the version it holds, size) followed by the bytes
 * of tailhex (hex, "" for none). The version is the stored one: what is
 * checked is every other byte. */
static inline void fixture_check_meta(struct keyspace *ks, const struct ks_key *k, uint8_t flags,
				      uint64_t size, const char *tailhex)
{
	struct buf r = BUF_INIT;
	unsigned char want[4096];
	want[0] = flags;
	put_be64(want + 1, 0);
	put_be64(want + 9, fixture_version(ks, k));
	put_be64(want + 17, size);
	size_t n = 25 + check_unhex(tailhex, want + 25, sizeof(want) - 25);
	CHECK_INT(fixture_meta_raw(ks, k, &r), 0);
	CHECK_MEM(r.data, r.len, want, n);
	buf_release(&r);
}

/* Sub-key sub of k's version ver in cf: 0 and its value, -ENOENT. */
static inline int fixture_sub_raw(struct keyspace *ks, enum store_cf cf, const struct ks_key *k,
				  uint64_t ver, const void *sub, size_t sn, struct buf *out)
{
	struct buf sk = BUF_INIT;
	int rc = ks_sub_key(ks, k, ver, sub, sn, &sk);
	if (!rc)
		rc = store_get(ks_store(ks), cf, sk.data, sk.len, out);
	buf_release(&sk);
	return rc;
}

/*
 * The sub-key NS | key_len u32 | key | ver | sub of `key` in the default
 * namespace, built by hand (not by the code under test) into k, which
 * holds 24 + strlen(key) + sn bytes: its length.
 */
static inline size_t fixture_sub_key(const char *key, uint64_t ver, const void *sub, size_t sn,
				     unsigned char *k)
{
	size_t kn = check_unhex(NS_HEX, k, 12);
	put_be32(k + kn, (uint32_t)strlen(key));
	kn += 4;
	memcpy(k + kn, key, strlen(key));
	kn += strlen(key);
	put_be64(k + kn, ver);
	kn += 8;
	if (sn)
		memcpy(k + kn, sub, sn);
	return kn + sn;
}

/* The value of sub-key subhex (hex) of k's stored version in cf: 0,
 * -ENOENT. */
static inline int fixture_sub_raw_hex(struct keyspace *ks, enum store_cf cf, const struct ks_key *k,
				      const char *subhex, struct buf *out)
{
	unsigned char sub[4096];
	size_t sn = check_unhex(subhex, sub, sizeof(sub));
	return fixture_sub_raw(ks, cf, k, fixture_version(ks, k), sub, sn, out);
}

/* Check that value against valhex (hex). */
static inline void fixture_check_sub_hex(struct keyspace *ks, enum store_cf cf,
					 const struct ks_key *k, const char *subhex,
					 const char *valhex)
{
	struct buf v = BUF_INIT;
	unsigned char want[4096];
	size_t wn = check_unhex(valhex, want, sizeof(want));
	CHECK_INT(fixture_sub_raw_hex(ks, cf, k, subhex, &v), 0);
	CHECK_MEM(v.data, v.len, want, wn);
	buf_release(&v);
}

/* Everything stored for k, into out: its metadata record, then each
 * sub-key and value of its version, to compare after a refused change. */
static inline void fixture_snapshot(struct keyspace *ks, const struct ks_key *k, struct buf *out)
{
	struct buf r = BUF_INIT;
	int rc = 0;
	buf_reset(out);
	if (fixture_meta_raw(ks, k, &r) == 0)
		buf_add(out, r.data, r.len);
	struct ks_sub_iter *it = ks_sub_iter_new(ks, k, KV_TYPE_NONE, NULL, 0, &rc);
	const char *s, *v;
	size_t sn, vn;
	while (it && ks_sub_iter_next(it, &s, &sn, &v, &vn) > 0) {
		buf_add(out, s, sn);
		buf_add(out, v, vn);
	}
	ks_sub_iter_free(it);
	buf_release(&r);
}

/* Whether what is stored for k is still the fixture_snapshot() before. */
static inline bool fixture_unchanged(struct keyspace *ks, const struct ks_key *k,
				     const struct buf *before)
{
	struct buf now = BUF_INIT;
	fixture_snapshot(ks, k, &now);
	bool same = now.len == before->len && memcmp(now.data, before->data, now.len) == 0;
	buf_release(&now);
	return same;
}

#endif
