/*
 * typelayer: the store's ceiling for `make bench`. The benchmark workloads
 * done in-process through the type layer (t_string.h, t_hash.h,
 * keyspace.h) with no FUSE in between; also fills databases for the mounted
 * runs. Timing with CLOCK_MONOTONIC; results as "VALUE UNIT" lines.
 * Layer: benchmark tool (links the kvfs objects; calls the types, keyspace
 * and store layers as main would).
 *
 *   typelayer small    DBDIR N SIZE     strings k000000... in __namespace and
 *                                       fields of hash __namespace/h:
 *                                       set, stat, get, iterate; lines
 *                                       "NAME VALUE UNIT"
 *   typelayer fillns   DBDIR NS N SIZE  N string keys k000000... in NS
 *   typelayer fillhash DBDIR NS KEY N SIZE
 *                                       a hash with N fields k000000...
 *   typelayer list     DBDIR NS [KEY]   iterate the keys of NS, or the
 *                                       fields of KEY: "SECONDS s COUNT"
 *   typelayer del      DBDIR NS KEY     DEL of one key: "MILLISECONDS ms"
 *   typelayer compact  DBDIR            compact every column family
 *   typelayer big      DBDIR MIB SECS   one MIB-MiB string: SET, GET, and
 *                                       random 4 KiB string_read for SECS
 * A fill prints "VALUE ops/s" and writes the key's WAL before it returns.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "keyspace/keyspace.h"
#include "engine/store.h"
#include "types/t_hash.h"
#include "types/t_string.h"
#include "engine/util.h"

#define NAME_MAX_LEN 32

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long arg_long(const char *s, const char *what)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "typelayer: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static int fail(const char *what, int rc)
{
	fprintf(stderr, "typelayer: %s: %s\n", what, strerror(-rc));
	return 1;
}

static struct keyspace *open_db(const char *dir)
{
	struct ks_options o = {0};
	struct keyspace *ks = NULL;
	int rc = ks_open(dir, &o, &ks);
	if (rc) {
		fprintf(stderr, "typelayer: cannot open %s: %s\n", dir, strerror(-rc));
		exit(1);
	}
	return ks;
}

static size_t name_of(char *out, long i)
{
	return (size_t)snprintf(out, NAME_MAX_LEN, "k%06ld", i);
}

static char *value_new(long size)
{
	char *v = malloc((size_t)size + 1);
	if (!v) {
		fprintf(stderr, "typelayer: out of memory\n");
		exit(1);
	}
	for (long j = 0; j < size; j++)
		v[j] = (char)('a' + j % 26);
	return v;
}

static struct ks_key key_of(const char *ns, const char *key, size_t klen)
{
	struct ks_key k = {ns, strlen(ns), key, klen, NULL, NULL};
	return k;
}

/* ---------------------------------------------------------- workloads */

/* N string keys k000000... in ns. Returns the rate or a negative errno. */
static int fill_strings(struct keyspace *ks, const char *ns, long n, long size, double *rate)
{
	char name[NAME_MAX_LEN];
	char *v = value_new(size);
	int rc = 0;
	double t0 = now_s();
	for (long i = 0; i < n && !rc; i++) {
		struct ks_key k = key_of(ns, name, name_of(name, i));
		rc = string_set(ks, &k, v, (size_t)size, 0);
	}
	*rate = (double)n / (now_s() - t0);
	free(v);
	return rc;
}

static int fill_hash(struct keyspace *ks, const char *ns, const char *key, long n, long size,
		     double *rate)
{
	char name[NAME_MAX_LEN];
	char *v = value_new(size);
	struct ks_key k = key_of(ns, key, strlen(key));
	int rc = 0;
	double t0 = now_s();
	for (long i = 0; i < n && !rc; i++)
		rc = hash_set(ks, &k, name, name_of(name, i), v, (size_t)size, NULL);
	*rate = (double)n / (now_s() - t0);
	free(v);
	return rc;
}

/* Iterate ns's keys (key == NULL) or key's fields; *count = entries. */
static int list(struct keyspace *ks, const char *ns, const char *key, long *count)
{
	int rc;
	*count = 0;
	if (!key) {
		struct ks_key_iter *it = ks_key_iter_new(ks, ns, strlen(ns), NULL, 0);
		const char *kp;
		size_t kn;
		struct ks_info info;
		if (!it)
			return -ENOMEM;
		while ((rc = ks_key_iter_next(it, &kp, &kn, &info)) == 1)
			(*count)++;
		ks_key_iter_free(it);
		return rc;
	}
	struct ks_key k = key_of(ns, key, strlen(key));
	int err = 0;
	struct hash_iter *it = hash_iter_new(ks, &k, NULL, 0, &err);
	const char *f, *v;
	size_t fn, vn;
	if (!it)
		return err ? err : -ENOMEM;
	while ((rc = hash_iter_next(it, &f, &fn, &v, &vn)) == 1)
		(*count)++;
	hash_iter_free(it);
	return rc;
}

static void line(const char *name, double value, const char *unit)
{
	printf("%s %.1f %s\n", name, value, unit);
}

static int cmd_small(const char *dir, long n, long size)
{
	struct keyspace *ks = open_db(dir);
	const char *ns = KS_DEFAULT_NS;
	char name[NAME_MAX_LEN];
	struct buf out = BUF_INIT;
	struct ks_info info;
	struct ks_key h = key_of(ns, "h", 1);
	double rate, t0;
	long count;
	uint64_t len;
	int rc;

	if ((rc = fill_strings(ks, ns, n, size, &rate)))
		return fail("string_set", rc);
	line("string_set", rate, "ops/s");
	if ((rc = fill_hash(ks, ns, "h", n, size, &rate)))
		return fail("hash_set", rc);
	line("hash_set", rate, "ops/s");

	t0 = now_s();
	for (long i = 0; i < n; i++) {
		struct ks_key k = key_of(ns, name, name_of(name, i));
		if ((rc = ks_lookup(ks, &k, &info)))
			return fail("ks_lookup", rc);
	}
	line("ks_lookup", (double)n / (now_s() - t0), "ops/s");
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		if ((rc = hash_strlen(ks, &h, name, name_of(name, i), &len)))
			return fail("hash_strlen", rc);
	}
	line("hash_strlen", (double)n / (now_s() - t0), "ops/s");

	t0 = now_s();
	for (long i = 0; i < n; i++) {
		struct ks_key k = key_of(ns, name, name_of(name, i));
		if ((rc = string_get(ks, &k, &out)))
			return fail("string_get", rc);
	}
	line("string_get", (double)n / (now_s() - t0), "ops/s");
	t0 = now_s();
	for (long i = 0; i < n; i++) {
		if ((rc = hash_get(ks, &h, name, name_of(name, i), &out)))
			return fail("hash_get", rc);
	}
	line("hash_get", (double)n / (now_s() - t0), "ops/s");

	t0 = now_s();
	if ((rc = list(ks, ns, NULL, &count)) < 0)
		return fail("ks_key_iter", rc);
	line("ks_key_iter", (double)count / (now_s() - t0), "keys/s");
	t0 = now_s();
	if ((rc = list(ks, ns, "h", &count)) < 0)
		return fail("hash_iter", rc);
	line("hash_iter", (double)count / (now_s() - t0), "fields/s");

	buf_release(&out);
	ks_close(ks);
	return 0;
}

static uint64_t rng_next(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static int cmd_big(const char *dir, long mib, long secs)
{
	struct keyspace *ks = open_db(dir);
	struct ks_key k = key_of(KS_DEFAULT_NS, "big", 3);
	size_t size = (size_t)mib << 20;
	struct buf out = BUF_INIT;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	long ops = 0;
	char *v = value_new((long)size);
	int rc;

	double t0 = now_s();
	if ((rc = string_set(ks, &k, v, size, 0)))
		return fail("string_set", rc);
	line("string_set", (double)size / (now_s() - t0) / 1e6, "MB/s");
	free(v);

	t0 = now_s();
	if ((rc = string_get(ks, &k, &out)))
		return fail("string_get", rc);
	line("string_get", (double)size / (now_s() - t0) / 1e6, "MB/s");

	uint64_t blocks = size / 4096;
	double dt = 0;
	t0 = now_s();
	do {
		uint64_t off = rng_next(&seed) % blocks * 4096;
		if ((rc = string_read(ks, &k, off, 4096, &out)))
			return fail("string_read", rc);
		ops++;
	} while ((dt = now_s() - t0) < (double)secs);
	line("string_read_4k", (double)ops / dt, "ops/s");

	buf_release(&out);
	ks_close(ks);
	return 0;
}

static int cmd_compact(const char *dir)
{
	struct keyspace *ks = open_db(dir);
	int rc = 0;
	double t0 = now_s();
	for (int cf = 0; cf < STORE_CF_COUNT && !rc; cf++)
		rc = store_compact(ks_store(ks), (enum store_cf)cf, NULL, 0, NULL, 0);
	if (rc)
		return fail("store_compact", rc);
	printf("%.3f s\n", now_s() - t0);
	ks_close(ks);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: typelayer small DBDIR N SIZE | fillns DBDIR NS N SIZE |\n"
			"       fillhash DBDIR NS KEY N SIZE | list DBDIR NS [KEY] |\n"
			"       del DBDIR NS KEY | compact DBDIR | big DBDIR MIB SECS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		usage();
	const char *cmd = argv[1], *dir = argv[2];
	struct keyspace *ks;
	double rate, t0;
	long count;
	int rc;

	if (strcmp(cmd, "small") == 0 && argc == 5)
		return cmd_small(dir, arg_long(argv[3], "N"), arg_long(argv[4], "SIZE"));
	if (strcmp(cmd, "big") == 0 && argc == 5)
		return cmd_big(dir, arg_long(argv[3], "MIB"), arg_long(argv[4], "SECS"));
	if (strcmp(cmd, "compact") == 0 && argc == 3)
		return cmd_compact(dir);
	if (strcmp(cmd, "fillns") == 0 && argc == 6) {
		ks = open_db(dir);
		rc = fill_strings(ks, argv[3], arg_long(argv[4], "N"), arg_long(argv[5], "SIZE"),
				  &rate);
		if (rc)
			return fail("string_set", rc);
		ks_close(ks);
		printf("%.1f ops/s\n", rate);
		return 0;
	}
	if (strcmp(cmd, "fillhash") == 0 && argc == 7) {
		ks = open_db(dir);
		rc = fill_hash(ks, argv[3], argv[4], arg_long(argv[5], "N"),
			       arg_long(argv[6], "SIZE"), &rate);
		if (rc)
			return fail("hash_set", rc);
		ks_close(ks);
		printf("%.1f ops/s\n", rate);
		return 0;
	}
	if (strcmp(cmd, "list") == 0 && (argc == 4 || argc == 5)) {
		ks = open_db(dir);
		t0 = now_s();
		rc = list(ks, argv[3], argc == 5 ? argv[4] : NULL, &count);
		if (rc < 0)
			return fail("iterate", rc);
		printf("%.4f s %ld\n", now_s() - t0, count);
		ks_close(ks);
		return 0;
	}
	if (strcmp(cmd, "del") == 0 && argc == 5) {
		ks = open_db(dir);
		struct ks_key k = key_of(argv[3], argv[4], strlen(argv[4]));
		t0 = now_s();
		rc = ks_del(ks, &k);
		double dt = now_s() - t0;
		if (rc)
			return fail("ks_del", rc);
		printf("%.3f ms\n", dt * 1e3);
		ks_close(ks);
		return 0;
	}
	usage();
	return 2;
}
