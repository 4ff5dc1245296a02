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
/* A key (namespace n, name k; NUL-terminated literals) with no attribute
 * change, and one whose write carries change ch (ks_key.attr). */
#define KEY(n, k)      (&(struct ks_key){(n), strlen(n), (k), strlen(k), NULL})
#define KEYA(n, k, ch) (&(struct ks_key){(n), strlen(n), (k), strlen(k), (ch)})
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

/* Reopen the current directory (after ks_close), e.g. read-only. */
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

/* Write one raw record, as another writer would. */
static inline void fixture_put(struct keyspace *ks, enum store_cf cf, const void *k, size_t kn,
			       const void *v, size_t vn)
{
	struct store_batch *b = store_batch_new(ks_store(ks));
	CHECK(b != NULL);
	store_batch_put(b, cf, k, kn, v, vn);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
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

#endif
