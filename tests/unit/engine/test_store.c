/*
 * Unit tests for store: Kvrocks layout detection and column families,
 * point reads, batch atomicity, range deletes, bounded iterators,
 * read-only mode, plain RocksDB directories, stats and compaction,
 * checkpoints.
 * Column families are checked independently of RocksDB's API, by reading
 * the OPTIONS file RocksDB writes beside the data.
 */
#include "check.h"
#include "engine/store.h"
#include "tmpdir.h"

#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const kvrocks_cfs = "default,metadata,zset_score,pubsub,propagate,stream,search";

static bool path_exists(const char *dir, const char *name)
{
	char p[4096];
	struct stat st;
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return stat(p, &st) == 0;
}

/* The column families named in the newest OPTIONS-NNNNNN file of `db`,
 * comma-separated, in file order. */
static void options_cfs(const char *db, char *out, size_t cap)
{
	DIR *d = opendir(db);
	unsigned long best = 0;
	char name[512] = "";
	struct dirent *e;

	out[0] = '\0';
	if (!d)
		return;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "OPTIONS-", 8) != 0 || strstr(e->d_name, ".dbtmp"))
			continue;
		unsigned long n = strtoul(e->d_name + 8, NULL, 10);
		if (n >= best) {
			best = n;
			snprintf(name, sizeof(name), "%s/%s", db, e->d_name);
		}
	}
	closedir(d);
	FILE *f = fopen(name, "r");
	if (!f)
		return;
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		const char *tag = "[CFOptions \"";
		if (strncmp(line, tag, strlen(tag)) != 0)
			continue;
		char *s = line + strlen(tag), *q = strchr(s, '"');
		if (!q)
			continue;
		*q = '\0';
		if (out[0])
			strncat(out, ",", cap - strlen(out) - 1);
		strncat(out, s, cap - strlen(out) - 1);
	}
	fclose(f);
}

static int get_str(struct store *s, enum store_cf cf, const char *k, struct buf *out)
{
	return store_get(s, cf, k, strlen(k), out);
}

static void put_str(struct store_batch *b, enum store_cf cf, const char *k, const char *v)
{
	store_batch_put(b, cf, k, strlen(k), v, strlen(v));
}

static void test_names(void)
{
	CHECK(strcmp(store_cf_name(STORE_CF_DEFAULT), "default") == 0);
	CHECK(strcmp(store_cf_name(STORE_CF_METADATA), "metadata") == 0);
	CHECK(strcmp(store_cf_name(STORE_CF_ZSET_SCORE), "zset_score") == 0);
	CHECK(strcmp(store_cf_name(STORE_CF_PUBSUB), "pubsub") == 0);
	CHECK(strcmp(store_cf_name(STORE_CF_PROPAGATE), "propagate") == 0);
	CHECK(strcmp(store_cf_name(STORE_CF_STREAM), "stream") == 0);
	CHECK(strcmp(store_cf_name(STORE_CF_SEARCH), "search") == 0);
	CHECK(strcmp(store_cf_name(STORE_CF_INDEX), "index") == 0);
}

/* A new database: Kvrocks layout (DIR/db), exactly Kvrocks's seven column
 * families in Kvrocks's order, every one usable, and all still there on
 * reopen. */
static void test_new_database(void)
{
	char *dir = tmpdir_new();
	char sub[4096], cfs[1024];
	struct store *s = NULL;
	struct buf v = BUF_INIT;

	snprintf(sub, sizeof(sub), "%s/kv", dir); /* does not exist yet */
	CHECK_INT(store_open(sub, NULL, &s), 0);
	CHECK(s != NULL);
	if (!s)
		goto out;
	CHECK(!store_is_read_only(s));
	char want[4200];
	snprintf(want, sizeof(want), "%s/db", sub);
	CHECK(strcmp(store_path(s), want) == 0);
	CHECK(path_exists(sub, "db/CURRENT"));
	CHECK(!path_exists(sub, "CURRENT"));
	options_cfs(want, cfs, sizeof(cfs));
	CHECK(strcmp(cfs, kvrocks_cfs) == 0);
	if (strcmp(cfs, kvrocks_cfs) != 0)
		fprintf(stderr, "    column families: %s\n", cfs);

	struct store_batch *b = store_batch_new(s);
	for (int c = 0; c < STORE_CF_BASE; c++)
		put_str(b, (enum store_cf)c, "k", store_cf_name((enum store_cf)c));
	CHECK_INT(store_batch_count(b), STORE_CF_BASE);
	CHECK_INT(store_write(s, b, true), 0);
	store_batch_free(b);
	store_close(s);

	/* Reopen: the same seven, each holding its own value. */
	s = NULL;
	CHECK_INT(store_open(sub, NULL, &s), 0);
	if (!s)
		goto out;
	CHECK(strcmp(store_path(s), want) == 0);
	CHECK(!store_has_cf(s, STORE_CF_INDEX)); /* made only when needed */
	for (int c = 0; c < STORE_CF_BASE; c++) {
		CHECK_INT(get_str(s, (enum store_cf)c, "k", &v), 0);
		const char *name = store_cf_name((enum store_cf)c);
		CHECK_MEM(v.data, v.len, name, strlen(name));
	}
	store_close(s);
	options_cfs(want, cfs, sizeof(cfs));
	CHECK(strcmp(cfs, kvrocks_cfs) == 0);
out:
	buf_release(&v);
	tmpdir_remove(dir);
}

static void test_get_put_delete(void)
{
	char *dir = tmpdir_new();
	struct store *s = NULL;
	struct buf v = BUF_INIT;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	CHECK_INT(get_str(s, STORE_CF_METADATA, "nope", &v), -ENOENT);

	struct store_batch *b = store_batch_new(s);
	/* Binary keys and values, including NUL bytes and an empty value. */
	store_batch_put(b, STORE_CF_METADATA, "a\0b", 3, "x\0y", 3);
	store_batch_put(b, STORE_CF_METADATA, "empty", 5, "", 0);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_get(s, STORE_CF_METADATA, "a\0b", 3, &v), 0);
	CHECK_MEM(v.data, v.len, "x\0y", 3);
	CHECK_INT(store_get(s, STORE_CF_METADATA, "a", 1, &v), -ENOENT);
	CHECK_INT(store_get(s, STORE_CF_METADATA, "empty", 5, &v), 0);
	CHECK_INT(v.len, 0);
	/* Column families are separate key spaces. */
	CHECK_INT(store_get(s, STORE_CF_DEFAULT, "a\0b", 3, &v), -ENOENT);

	store_batch_clear(b);
	CHECK_INT(store_batch_count(b), 0);
	store_batch_delete(b, STORE_CF_METADATA, "a\0b", 3);
	CHECK_INT(store_batch_count(b), 1);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_get(s, STORE_CF_METADATA, "a\0b", 3, &v), -ENOENT);
	CHECK_INT(store_get(s, STORE_CF_METADATA, "empty", 5, &v), 0);

	/* An empty batch is fine. */
	store_batch_clear(b);
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_free(b);
	store_batch_free(NULL);
	CHECK_INT(store_sync(s), 0);
	store_close(s);
out:
	buf_release(&v);
	tmpdir_remove(dir);
}

/* store_get_head of large values (remembered by the store) follows
 * every kind of write: put, putv, delete, range delete, a flush to a
 * blob file and a reopen. */
static void test_get_head_large(void)
{
	char *dir = tmpdir_new();
	struct store *s = NULL;
	struct buf v = BUF_INIT;
	size_t big = 1u << 20, full = 0;
	char *a = malloc(big), *c = malloc(big);
	memset(a, 'a', big);
	memset(c, 'c', big);
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	struct store_batch *b = store_batch_new(s);
	store_batch_put(b, STORE_CF_METADATA, "k", 1, a, big);
	CHECK_INT(store_write(s, b, false), 0);
	for (int i = 0; i < 2; i++) { /* the second is answered from memory */
		CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4, &v, &full), 0);
		CHECK_MEM(v.data, v.len, "aaaa", 4);
		CHECK_INT(full, big);
	}
	/* Another column family, the same key: not the same value. */
	CHECK_INT(store_get_head(s, STORE_CF_DEFAULT, "k", 1, 4, &v, &full), -ENOENT);
	store_batch_clear(b);
	const void *parts[2] = {"xy", c};
	size_t lens[2] = {2, big - 1};
	store_batch_putv(b, STORE_CF_METADATA, "k", 1, parts, lens, 2);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4, &v, &full), 0);
	CHECK_MEM(v.data, v.len, "xycc", 4);
	CHECK_INT(full, big + 1);
	/* More than the remembered head: read through. */
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4096, &v, &full), 0);
	CHECK_INT(v.len, 4096);
	CHECK_INT(v.data[4095], 'c');
	store_batch_clear(b);
	store_batch_delete(b, STORE_CF_METADATA, "k", 1);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4, &v, &full), -ENOENT);
	store_batch_clear(b);
	store_batch_put(b, STORE_CF_METADATA, "k", 1, a, big);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4, &v, &full), 0);
	store_batch_clear(b);
	store_batch_delete_range(b, STORE_CF_METADATA, "a", 1, "z", 1);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4, &v, &full), -ENOENT);
	/* Through a flush into a blob file and a reopen. */
	store_batch_clear(b);
	store_batch_put(b, STORE_CF_METADATA, "k", 1, c, big);
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_free(b);
	CHECK_INT(store_compact(s, STORE_CF_METADATA, NULL, 0, NULL, 0), 0);
	store_close(s);
	s = NULL;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4, &v, &full), 0);
	CHECK_MEM(v.data, v.len, "cccc", 4);
	CHECK_INT(full, big);
	CHECK_INT(store_get(s, STORE_CF_METADATA, "k", 1, &v), 0);
	CHECK(v.len == big && memcmp(v.data, c, big) == 0);
	store_close(s);
out:
	free(a);
	free(c);
	buf_release(&v);
	tmpdir_remove(dir);
}

/* A large value's batch: the records after it (a key's attributes) and
 * the head remembered at the write; a later change of the key in the
 * same batch wins over that head. The value kept from a head read goes
 * to the next store_value_get of that key only, and never once the key
 * was written. */
static void test_large_batch_and_kept(void)
{
	char *dir = tmpdir_new();
	struct store *s = NULL;
	struct buf v = BUF_INIT;
	size_t big = 1u << 20, full = 0, n = 0;
	char *a = malloc(big), *c = malloc(big);
	for (size_t i = 0; i < big; i++) {
		a[i] = (char)('a' + i % 23);
		c[i] = (char)('c' + i % 19);
	}
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	struct store_batch *b = store_batch_new(s);
	put_str(b, STORE_CF_METADATA, "before", "1");
	store_batch_put(b, STORE_CF_METADATA, "k", 1, a, big);
	for (int i = 0; i < 100; i++) { /* more than the room left after it */
		char key[24], val[1024];
		snprintf(key, sizeof(key), "after%03d", i);
		memset(val, 'v', sizeof(val));
		store_batch_put(b, STORE_CF_METADATA, key, strlen(key), val, sizeof(val));
	}
	CHECK_INT(store_batch_count(b), 102);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_get(s, STORE_CF_METADATA, "k", 1, &v), 0);
	CHECK(v.len == big && memcmp(v.data, a, big) == 0);
	CHECK_INT(store_get(s, STORE_CF_METADATA, "after099", 8, &v), 0);
	CHECK_INT(v.len, 1024);
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 8, &v, &full), 0);
	CHECK_MEM(v.data, v.len, a, 8);
	CHECK_INT(full, big);
	/* Put and then deleted in one batch: no head remembered. */
	store_batch_clear(b);
	store_batch_put(b, STORE_CF_METADATA, "k", 1, c, big);
	store_batch_delete(b, STORE_CF_METADATA, "k", 1);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 8, &v, &full), -ENOENT);
	/* Put twice: the second one's head. */
	store_batch_clear(b);
	store_batch_put(b, STORE_CF_METADATA, "k", 1, a, big);
	store_batch_put(b, STORE_CF_METADATA, "k", 1, c, big - 1);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 8, &v, &full), 0);
	CHECK_MEM(v.data, v.len, c, 8);
	CHECK_INT(full, big - 1);
	/* A reopen forgets every head: the head read keeps the value. */
	store_batch_put(b, STORE_CF_METADATA, "j", 1, a, big);
	store_batch_free(b);
	b = NULL;
	store_close(s);
	s = NULL;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	struct store_value *sv = NULL;
	const char *d;
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 8, &v, &full), 0);
	CHECK_INT(store_value_get(s, STORE_CF_METADATA, "j", 1, &sv), -ENOENT);
	CHECK_INT(store_value_get(s, STORE_CF_METADATA, "k", 1, &sv), 0);
	d = sv ? store_value_data(sv, &n) : NULL;
	CHECK(d && n == big - 1 && memcmp(d, c, n) == 0);
	store_value_free(sv);
	/* Read for its head, then written: the next read sees the write. */
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4096, &v, &full), 0);
	b = store_batch_new(s);
	store_batch_put(b, STORE_CF_METADATA, "k", 1, a, big);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_value_get(s, STORE_CF_METADATA, "k", 1, &sv), 0);
	d = sv ? store_value_data(sv, &n) : NULL;
	CHECK(d && n == big && memcmp(d, a, n) == 0);
	store_value_free(sv);
	/* Kept, then deleted: gone. */
	store_batch_clear(b);
	store_batch_put(b, STORE_CF_METADATA, "k2", 2, c, big);
	CHECK_INT(store_write(s, b, false), 0);
	store_close(s); /* with nothing kept */
	s = NULL;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k2", 2, 8, &v, &full), 0);
	store_batch_free(b);
	b = store_batch_new(s);
	store_batch_delete(b, STORE_CF_METADATA, "k2", 2);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(store_value_get(s, STORE_CF_METADATA, "k2", 2, &sv), -ENOENT);
	/* Kept for about a second, then freed with nothing else going on. */
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4096, &v, &full), 0);
	CHECK_INT(store_kept_bytes(s), big);
	usleep(1300 * 1000);
	CHECK_INT(store_kept_bytes(s), 0);
	/* Kept at close: freed before the database closes (asan sees). */
	CHECK_INT(store_get_head(s, STORE_CF_METADATA, "k", 1, 4096, &v, &full), 0);
	CHECK_INT(store_kept_bytes(s), big);
	store_batch_free(b);
	store_close(s);
out:
	free(a);
	free(c);
	buf_release(&v);
	tmpdir_remove(dir);
}

/* Nothing of a batch is visible before store_write, all of it after, and
 * later operations in a batch win over earlier ones on the same key. */
static void test_batch_atomic(void)
{
	char *dir = tmpdir_new();
	struct store *s = NULL;
	struct buf v = BUF_INIT;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	struct store_batch *b = store_batch_new(s);
	put_str(b, STORE_CF_METADATA, "old", "1");
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_clear(b);

	put_str(b, STORE_CF_METADATA, "m", "meta");
	put_str(b, STORE_CF_DEFAULT, "d1", "one");
	put_str(b, STORE_CF_DEFAULT, "d2", "two");
	put_str(b, STORE_CF_ZSET_SCORE, "z", "");
	store_batch_delete(b, STORE_CF_METADATA, "old", 3);
	put_str(b, STORE_CF_DEFAULT, "d1", "uno"); /* overrides the first put */
	CHECK_INT(store_batch_count(b), 6);
	CHECK_INT(get_str(s, STORE_CF_METADATA, "m", &v), -ENOENT);
	CHECK_INT(get_str(s, STORE_CF_DEFAULT, "d1", &v), -ENOENT);
	CHECK_INT(get_str(s, STORE_CF_METADATA, "old", &v), 0);
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(get_str(s, STORE_CF_METADATA, "m", &v), 0);
	CHECK_MEM(v.data, v.len, "meta", 4);
	CHECK_INT(get_str(s, STORE_CF_DEFAULT, "d1", &v), 0);
	CHECK_MEM(v.data, v.len, "uno", 3);
	CHECK_INT(get_str(s, STORE_CF_DEFAULT, "d2", &v), 0);
	CHECK_INT(get_str(s, STORE_CF_ZSET_SCORE, "z", &v), 0);
	CHECK_INT(get_str(s, STORE_CF_METADATA, "old", &v), -ENOENT);
	store_batch_free(b);
	store_close(s);

	/* Durable across reopen (WAL replay). */
	s = NULL;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	CHECK_INT(get_str(s, STORE_CF_DEFAULT, "d1", &v), 0);
	CHECK_MEM(v.data, v.len, "uno", 3);
	store_close(s);
out:
	buf_release(&v);
	tmpdir_remove(dir);
}

static void test_delete_range(void)
{
	char *dir = tmpdir_new();
	struct store *s = NULL;
	struct buf v = BUF_INIT;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	struct store_batch *b = store_batch_new(s);
	const char *keys[] = {"a", "b", "b\x01", "c", "d"};
	for (int i = 0; i < 5; i++)
		put_str(b, STORE_CF_DEFAULT, keys[i], "x");
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_clear(b);
	store_batch_delete_range(b, STORE_CF_DEFAULT, "b", 1, "d", 1); /* [b, d) */
	CHECK_INT(store_write(s, b, false), 0);
	CHECK_INT(get_str(s, STORE_CF_DEFAULT, "a", &v), 0);
	CHECK_INT(get_str(s, STORE_CF_DEFAULT, "b", &v), -ENOENT);
	CHECK_INT(get_str(s, STORE_CF_DEFAULT, "b\x01", &v), -ENOENT);
	CHECK_INT(get_str(s, STORE_CF_DEFAULT, "c", &v), -ENOENT);
	CHECK_INT(get_str(s, STORE_CF_DEFAULT, "d", &v), 0);
	store_batch_free(b);
	store_close(s);
out:
	buf_release(&v);
	tmpdir_remove(dir);
}

/* Collect the keys an iterator yields forwards from its position. */
static void iter_keys(struct store_iter *it, char *out, size_t cap)
{
	out[0] = '\0';
	for (; store_iter_valid(it); store_iter_next(it)) {
		size_t n;
		const char *k = store_iter_key(it, &n);
		strncat(out, k, n < cap - strlen(out) - 1 ? n : cap - strlen(out) - 1);
		strncat(out, " ", cap - strlen(out) - 1);
	}
}

static void test_iterators(void)
{
	char *dir = tmpdir_new();
	struct store *s = NULL;
	char got[256];
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	struct store_batch *b = store_batch_new(s);
	const char *keys[] = {"a", "b", "ba", "c", "d", "e"};
	for (int i = 0; i < 6; i++)
		put_str(b, STORE_CF_METADATA, keys[i], keys[i]);
	put_str(b, STORE_CF_DEFAULT, "c", "other cf");
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_free(b);

	/* Bounds [b, d), given in buffers that change right after: the
	 * iterator must have copied them. */
	char lo[2] = "b", hi[2] = "d";
	struct store_iter *it = store_iter_new(s, STORE_CF_METADATA, lo, 1, hi, 1);
	lo[0] = 'z';
	hi[0] = 'a';
	CHECK(it != NULL);
	if (!it)
		goto out_close;
	CHECK(!store_iter_valid(it)); /* unpositioned */
	store_iter_seek_first(it);
	iter_keys(it, got, sizeof(got));
	CHECK(strcmp(got, "b ba c ") == 0);
	store_iter_seek(it, "a", 1);
	iter_keys(it, got, sizeof(got));
	CHECK(strcmp(got, "b ba c ") == 0);
	store_iter_seek(it, "bb", 2);
	iter_keys(it, got, sizeof(got));
	CHECK(strcmp(got, "c ") == 0);
	store_iter_seek(it, "x", 1);
	CHECK(!store_iter_valid(it));

	store_iter_seek_last(it);
	CHECK(store_iter_valid(it));
	size_t n, vn;
	const char *k = store_iter_key(it, &n);
	CHECK_MEM(k, n, "c", 1);
	const char *val = store_iter_value(it, &vn);
	CHECK_MEM(val, vn, "c", 1);
	store_iter_prev(it);
	k = store_iter_key(it, &n);
	CHECK_MEM(k, n, "ba", 2);
	store_iter_seek_for_prev(it, "bz", 2);
	k = store_iter_key(it, &n);
	CHECK_MEM(k, n, "ba", 2);
	store_iter_seek_for_prev(it, "zz", 2);
	k = store_iter_key(it, &n);
	CHECK_MEM(k, n, "c", 1);
	store_iter_prev(it);
	store_iter_prev(it);
	store_iter_prev(it);
	CHECK(!store_iter_valid(it)); /* below the lower bound */
	CHECK_INT(store_iter_status(it), 0);
	store_iter_free(it);

	/* Unbounded on one side. */
	it = store_iter_new(s, STORE_CF_METADATA, NULL, 0, "c", 1);
	store_iter_seek_first(it);
	iter_keys(it, got, sizeof(got));
	CHECK(strcmp(got, "a b ba ") == 0);
	store_iter_free(it);
	it = store_iter_new(s, STORE_CF_METADATA, "d", 1, NULL, 0);
	store_iter_seek_first(it);
	iter_keys(it, got, sizeof(got));
	CHECK(strcmp(got, "d e ") == 0);
	store_iter_free(it);
	it = store_iter_new(s, STORE_CF_DEFAULT, NULL, 0, NULL, 0);
	store_iter_seek_first(it);
	iter_keys(it, got, sizeof(got));
	CHECK(strcmp(got, "c ") == 0);
	store_iter_free(it);
	store_iter_free(NULL);
out_close:
	store_close(s);
out:
	tmpdir_remove(dir);
}

/* A snapshot's reads see the database as it was when it was taken:
 * point reads (whole, head, pinned) and iterators, whatever a later
 * batch changed, added or deleted; the latest reads see the batch. */
static void test_snapshot(void)
{
	char *dir = tmpdir_new();
	struct store *s = NULL;
	struct buf v = BUF_INIT;
	char got[256];
	size_t full = 0;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	struct store_batch *b = store_batch_new(s);
	put_str(b, STORE_CF_DEFAULT, "a", "old");
	put_str(b, STORE_CF_DEFAULT, "b", "old");
	CHECK_INT(store_write(s, b, false), 0);
	struct store_snap *snap = store_snap_new(s);
	CHECK(snap != NULL);
	store_batch_clear(b);
	put_str(b, STORE_CF_DEFAULT, "a", "new!");
	store_batch_delete(b, STORE_CF_DEFAULT, "b", 1);
	put_str(b, STORE_CF_DEFAULT, "c", "new");
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_free(b);

	CHECK_INT(store_get_at(s, snap, STORE_CF_DEFAULT, "a", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "old", 3);
	CHECK_INT(store_get_at(s, snap, STORE_CF_DEFAULT, "c", 1, &v), -ENOENT);
	CHECK_INT(store_get_head_at(s, snap, STORE_CF_DEFAULT, "b", 1, 2, &v, &full), 0);
	CHECK_MEM(v.data, v.len, "ol", 2);
	CHECK_INT((int)full, 3);
	struct store_value *pv = NULL;
	CHECK_INT(store_value_get_at(s, snap, STORE_CF_DEFAULT, "a", 1, &pv), 0);
	if (pv) {
		size_t n;
		const char *p = store_value_data(pv, &n);
		CHECK_MEM(p, n, "old", 3);
	}
	store_value_free(pv);
	CHECK_INT(store_get(s, STORE_CF_DEFAULT, "a", 1, &v), 0);
	CHECK_MEM(v.data, v.len, "new!", 4);

	struct store_iter *it = store_iter_new_at(s, snap, STORE_CF_DEFAULT, NULL, 0, NULL, 0);
	CHECK(it != NULL);
	if (it) {
		store_iter_seek_first(it);
		iter_keys(it, got, sizeof(got));
		CHECK(strcmp(got, "a b ") == 0);
		store_iter_free(it);
	}
	it = store_iter_new(s, STORE_CF_DEFAULT, NULL, 0, NULL, 0);
	if (it) {
		store_iter_seek_first(it);
		iter_keys(it, got, sizeof(got));
		CHECK(strcmp(got, "a c ") == 0);
		store_iter_free(it);
	}
	store_snap_free(s, snap);
	store_snap_free(s, NULL);
	/* One left to the close (a holder that never freed it): released
	 * and freed there; the database reopens. */
	CHECK(store_snap_new(s) != NULL);
	store_close(s);
	s = NULL;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (s)
		CHECK_INT(store_get(s, STORE_CF_DEFAULT, "a", 1, &v), 0);
	store_close(s);
out:
	buf_release(&v);
	tmpdir_remove(dir);
}

/* The label index's family: made in the open database when asked
 * (once), usable at once, opened again with the others, refused on a
 * read-only store; a base family cannot be asked for. */
static void test_index_cf(void)
{
	char *dir = tmpdir_new();
	char db[4200], cfs[1024];
	struct store *s = NULL;
	struct buf v = BUF_INIT;
	struct store_options ro = {.read_only = true};

	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	CHECK(!store_has_cf(s, STORE_CF_INDEX));
	CHECK_INT(store_cf_create(s, STORE_CF_SEARCH), -EINVAL);
	CHECK_INT(store_cf_create(s, STORE_CF_INDEX), 0);
	CHECK_INT(store_cf_create(s, STORE_CF_INDEX), 0);
	CHECK(store_has_cf(s, STORE_CF_INDEX));
	struct store_batch *b = store_batch_new(s);
	put_str(b, STORE_CF_INDEX, "i", "x");
	put_str(b, STORE_CF_METADATA, "k", "v");
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_free(b);
	CHECK_INT(get_str(s, STORE_CF_INDEX, "i", &v), 0);
	store_close(s);
	snprintf(db, sizeof(db), "%s/db", dir);
	options_cfs(db, cfs, sizeof(cfs));
	char want[256];
	snprintf(want, sizeof(want), "%s,index", kvrocks_cfs);
	CHECK(strcmp(cfs, want) == 0);
	if (strcmp(cfs, want) != 0)
		fprintf(stderr, "    column families: %s\n", cfs);

	s = NULL;
	CHECK_INT(store_open(dir, &ro, &s), 0);
	if (!s)
		goto out;
	CHECK(store_has_cf(s, STORE_CF_INDEX));
	CHECK_INT(get_str(s, STORE_CF_INDEX, "i", &v), 0);
	CHECK_MEM(v.data, v.len, "x", 1);
	store_close(s);

	/* A read-only store without it cannot make it. */
	char other[4200];
	snprintf(other, sizeof(other), "%s/other", dir);
	s = NULL;
	CHECK_INT(store_open(other, NULL, &s), 0);
	store_close(s);
	s = NULL;
	CHECK_INT(store_open(other, &ro, &s), 0);
	if (s) {
		CHECK_INT(store_cf_create(s, STORE_CF_INDEX), -EROFS);
		CHECK(!store_has_cf(s, STORE_CF_INDEX));
		store_close(s);
	}
out:
	buf_release(&v);
	tmpdir_remove(dir);
}

static void test_read_only(void)
{
	char *dir = tmpdir_new();
	char sub[4096];
	struct store *s = NULL;
	struct buf v = BUF_INIT;
	struct store_options ro = {.read_only = true};

	/* Nothing there: read-only does not create. */
	snprintf(sub, sizeof(sub), "%s/none", dir);
	CHECK_INT(store_open(sub, &ro, &s), -ENOENT);
	CHECK(s == NULL);
	CHECK(!path_exists(sub, "."));

	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	struct store_batch *b = store_batch_new(s);
	put_str(b, STORE_CF_METADATA, "k", "v");
	CHECK_INT(store_write(s, b, false), 0);
	store_close(s);

	s = NULL;
	CHECK_INT(store_open(dir, &ro, &s), 0);
	if (!s) {
		store_batch_free(b);
		goto out;
	}
	CHECK(store_is_read_only(s));
	CHECK_INT(get_str(s, STORE_CF_METADATA, "k", &v), 0); /* from the WAL */
	CHECK_MEM(v.data, v.len, "v", 1);
	store_batch_free(b); /* a batch belongs to the store it was made for */
	b = store_batch_new(s);
	put_str(b, STORE_CF_METADATA, "k", "changed");
	CHECK_INT(store_write(s, b, false), -EROFS);
	CHECK_INT(store_compact(s, STORE_CF_METADATA, NULL, 0, NULL, 0), -EROFS);
	CHECK_INT(store_sync(s), 0);
	CHECK_INT(get_str(s, STORE_CF_METADATA, "k", &v), 0);
	CHECK_MEM(v.data, v.len, "v", 1);
	store_batch_free(b);
	store_close(s);
out:
	buf_release(&v);
	tmpdir_remove(dir);
}

/*
 * A follower (a secondary instance) beside a writer holding the lock:
 * it sees the writes at a catch-up, which says whether anything changed;
 * a flush of the writer (a WAL file deleted) makes it open anew without
 * losing anything; it writes nothing; its directory is refused inside
 * the database's; a directory without a database is -ENOENT.
 */
static void test_follower(void)
{
	char *dir = tmpdir_new(), *sec = tmpdir_new();
	char sub[4096];
	struct store *w = NULL, *f = NULL;
	struct buf v = BUF_INIT;
	bool changed = true;

	CHECK_INT(store_open(dir, NULL, &w), 0);
	if (!w)
		goto out;
	struct store_batch *b = store_batch_new(w);
	put_str(b, STORE_CF_METADATA, "k", "1");
	CHECK_INT(store_write(w, b, false), 0);
	store_batch_clear(b);

	snprintf(sub, sizeof(sub), "%s/db/sec", dir);
	struct store_options fo = {.follow = true, .follow_dir = sub};
	CHECK_INT(store_open(dir, &fo, &f), -EINVAL);
	CHECK(!path_exists(sub, "."));
	snprintf(sub, sizeof(sub), "%s/none", dir);
	fo.follow_dir = sec;
	CHECK_INT(store_open(sub, &fo, &f), -ENOENT);
	CHECK_INT(store_open(dir, &fo, &f), 0);
	if (!f)
		goto out_w;
	CHECK(store_is_follower(f) && store_is_read_only(f));
	CHECK(!store_is_follower(w));
	CHECK_INT(store_catch_up(w, &changed), -EINVAL);
	CHECK_INT(get_str(f, STORE_CF_METADATA, "k", &v), 0);
	CHECK_MEM(v.data, v.len, "1", 1);

	CHECK_INT(store_catch_up(f, &changed), 0);
	CHECK(!changed);
	put_str(b, STORE_CF_METADATA, "k", "2");
	put_str(b, STORE_CF_DEFAULT, "x", "y");
	CHECK_INT(store_write(w, b, false), 0);
	store_batch_clear(b);
	CHECK_INT(get_str(f, STORE_CF_METADATA, "k", &v), 0);
	CHECK_MEM(v.data, v.len, "1", 1); /* not before a catch-up */
	CHECK_INT(store_catch_up(f, &changed), 0);
	CHECK(changed);
	CHECK_INT(get_str(f, STORE_CF_METADATA, "k", &v), 0);
	CHECK_MEM(v.data, v.len, "2", 1);
	CHECK_INT(get_str(f, STORE_CF_DEFAULT, "x", &v), 0);

	/* An iterator opened before a reopen reads on after it. */
	struct store_iter *it = store_iter_new(f, STORE_CF_METADATA, NULL, 0, NULL, 0);
	CHECK(it != NULL);
	/* The writer deletes and closes: its memtables are flushed and its
	 * WAL files go; the follower opens anew and sees the deletion. */
	store_batch_delete(b, STORE_CF_METADATA, "k", 1);
	CHECK_INT(store_write(w, b, false), 0);
	store_batch_free(b);
	store_close(w);
	w = NULL;
	CHECK_INT(store_catch_up(f, &changed), 0);
	CHECK(changed);
	CHECK_INT(get_str(f, STORE_CF_METADATA, "k", &v), -ENOENT);
	CHECK_INT(get_str(f, STORE_CF_DEFAULT, "x", &v), 0);
	if (it) {
		store_iter_seek_first(it);
		CHECK(store_iter_valid(it)); /* the old instance: k still there */
		CHECK_INT(store_iter_status(it), 0);
		store_iter_free(it);
	}
	b = store_batch_new(f);
	put_str(b, STORE_CF_METADATA, "k", "3");
	CHECK_INT(store_write(f, b, false), -EROFS);
	store_batch_free(b);
	store_close(f);
	goto out;
out_w:
	store_batch_free(b);
	store_close(w);
out:
	buf_release(&v);
	tmpdir_remove(dir);
	tmpdir_remove(sec);
}

/*
 * A follower of a database holding blob files (the writer flushed a
 * value of 64 KiB or more) reads through read-only instances: the big
 * value from the start, and each catch-up after a change opens anew and
 * sees the writer's later writes, unflushed ones (its WAL) included.
 */
static void test_follower_blobs(void)
{
	char *dir = tmpdir_new(), *sec = tmpdir_new();
	struct store *w = NULL, *f = NULL;
	struct buf v = BUF_INIT;
	bool changed = false;
	size_t bn = 100000;
	char *big = malloc(bn);

	CHECK_INT(store_open(dir, NULL, &w), 0);
	if (!w || !big)
		goto out;
	for (size_t i = 0; i < bn; i++)
		big[i] = (char)('a' + i % 26);
	struct store_batch *b = store_batch_new(w);
	store_batch_put(b, STORE_CF_METADATA, "big", 3, big, bn);
	CHECK_INT(store_write(w, b, false), 0);
	store_batch_free(b);
	store_close(w); /* the flush: a blob file */
	w = NULL;
	CHECK_INT(store_open(dir, NULL, &w), 0);
	struct store_options fo = {.follow = true, .follow_dir = sec};
	CHECK_INT(store_open(dir, &fo, &f), 0);
	if (!f || !w)
		goto out;
	b = store_batch_new(w);
	CHECK_INT(store_get(f, STORE_CF_METADATA, "big", 3, &v), 0);
	CHECK(v.len == bn && memcmp(v.data, big, bn) == 0);
	CHECK_INT(store_catch_up(f, &changed), 0);
	CHECK(!changed);
	put_str(b, STORE_CF_METADATA, "k", "1");
	CHECK_INT(store_write(w, b, false), 0);
	store_batch_free(b);
	CHECK_INT(get_str(f, STORE_CF_METADATA, "k", &v), -ENOENT); /* not before a catch-up */
	CHECK_INT(store_catch_up(f, &changed), 0);
	CHECK(changed);
	buf_reset(&v);
	CHECK_INT(get_str(f, STORE_CF_METADATA, "k", &v), 0);
	CHECK(v.len == 1 && v.data[0] == '1');
	CHECK_INT(store_get(f, STORE_CF_METADATA, "big", 3, &v), 0);
	CHECK(v.len == bn && memcmp(v.data, big, bn) == 0);
out:
	store_close(f);
	store_close(w);
	free(big);
	buf_release(&v);
	tmpdir_remove(dir);
	tmpdir_remove(sec);
}

static bool have_ldb(void)
{
	return system("ldb --help >/dev/null 2>&1") == 0 || access("/usr/bin/ldb", X_OK) == 0;
}

static int run(const char *fmt, const char *arg)
{
	char cmd[8192];
	snprintf(cmd, sizeof(cmd), fmt, arg);
	return system(cmd);
}

/*
 * A plain RocksDB directory (DIR/CURRENT): opened in place. One made by
 * another tool with only "default" and an extra "index" family: read-only
 * opens what is there and creates nothing; read-write refuses it
 * (-EMEDIUMTYPE), adding nothing. Once it has Kvrocks's "metadata" (an
 * older Kvrocks's database), read-write adds the missing families and
 * keeps the extra one.
 */
static void test_plain_rocksdb(void)
{
	char *dir = tmpdir_new();
	char db[4096], cfs[1024];
	struct store *s = NULL;
	struct buf v = BUF_INIT;
	struct store_options ro = {.read_only = true};

	/* A Kvrocks layout's db directory is itself a plain RocksDB dir. */
	CHECK_INT(store_open(dir, NULL, &s), 0);
	store_close(s);
	snprintf(db, sizeof(db), "%s/db", dir);
	s = NULL;
	CHECK_INT(store_open(db, NULL, &s), 0);
	if (s) {
		CHECK(strcmp(store_path(s), db) == 0);
		CHECK(!path_exists(db, "db"));
		store_close(s);
	}

	if (!have_ldb()) {
		fprintf(stderr, "    (ldb not installed: foreign-database checks skipped)\n");
		goto out;
	}
	snprintf(db, sizeof(db), "%s/plain", dir);
	CHECK_INT(run("ldb --db=%s --create_if_missing put hello world >/dev/null 2>&1", db), 0);
	CHECK_INT(run("ldb --db=%s create_column_family index >/dev/null 2>&1", db), 0);
	options_cfs(db, cfs, sizeof(cfs));
	CHECK(strcmp(cfs, "default,index") == 0);

	s = NULL;
	CHECK_INT(store_open(db, &ro, &s), 0);
	if (s) {
		CHECK(strcmp(store_path(s), db) == 0);
		CHECK_INT(get_str(s, STORE_CF_DEFAULT, "hello", &v), 0);
		CHECK_MEM(v.data, v.len, "world", 5);
		/* An absent family reads as empty. */
		CHECK_INT(get_str(s, STORE_CF_METADATA, "hello", &v), -ENOENT);
		struct store_iter *it = store_iter_new(s, STORE_CF_METADATA, NULL, 0, NULL, 0);
		CHECK(it != NULL);
		if (it) {
			store_iter_seek_first(it);
			CHECK(!store_iter_valid(it));
			CHECK_INT(store_iter_status(it), 0);
			store_iter_free(it);
		}
		store_close(s);
	}
	options_cfs(db, cfs, sizeof(cfs));
	CHECK(strcmp(cfs, "default,index") == 0);

	/* Read-write: refused, and still nothing added (its own program
	 * would have to name every family kvfs added). */
	s = NULL;
	CHECK_INT(store_open(db, NULL, &s), -EMEDIUMTYPE);
	CHECK(s == NULL);
	store_close(s);
	options_cfs(db, cfs, sizeof(cfs));
	CHECK(strcmp(cfs, "default,index") == 0);

	/* A Kvrocks database of an older Kvrocks (metadata, not the newer
	 * families): read-write adds them, as Kvrocks does, and keeps the
	 * extra one. */
	CHECK_INT(run("ldb --db=%s create_column_family metadata >/dev/null 2>&1", db), 0);
	s = NULL;
	CHECK_INT(store_open(db, NULL, &s), 0);
	if (s) {
		CHECK_INT(get_str(s, STORE_CF_DEFAULT, "hello", &v), 0);
		struct store_batch *b = store_batch_new(s);
		put_str(b, STORE_CF_STREAM, "s", "1");
		CHECK_INT(store_write(s, b, false), 0);
		store_batch_free(b);
		store_close(s);
	}
	options_cfs(db, cfs, sizeof(cfs));
	CHECK(strcmp(cfs, "default,index,metadata,zset_score,pubsub,propagate,stream,search") == 0);
	if (strcmp(cfs, "default,index,metadata,zset_score,pubsub,propagate,stream,search"))
		fprintf(stderr, "    column families: %s\n", cfs);
out:
	buf_release(&v);
	tmpdir_remove(dir);
}

static void test_stats_compact(void)
{
	char *dir = tmpdir_new();
	struct store *s = NULL;
	struct store_options opt = {.block_cache_bytes = 8u << 20};
	uint64_t bytes = 0, keys = 0;
	CHECK_INT(store_open(dir, &opt, &s), 0);
	if (!s)
		goto out;
	struct store_batch *b = store_batch_new(s);
	char k[32];
	for (int i = 0; i < 1000; i++) {
		int n = snprintf(k, sizeof(k), "key%04d", i);
		store_batch_put(b, STORE_CF_METADATA, k, (size_t)n, "0123456789", 10);
	}
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_free(b);
	CHECK_INT(store_stats(s, &bytes, &keys), 0);
	CHECK(bytes > 0);
	CHECK(keys > 0);
	CHECK_INT(store_compact(s, STORE_CF_METADATA, NULL, 0, NULL, 0), 0);
	CHECK_INT(store_compact(s, STORE_CF_DEFAULT, "a", 1, "b", 1), 0);
	CHECK_INT(store_stats(s, &bytes, &keys), 0);
	CHECK(bytes > 0);
	CHECK(keys >= 900 && keys <= 1100);
	store_close(s);
	store_close(NULL);
out:
	tmpdir_remove(dir);
}

/* A database RocksDB refuses to open comes back with an errno saying
 * why (and one log line): -EBUSY for its lock, -EMEDIUMTYPE for one that
 * is damaged; other RocksDB errors are -EIO. */
static void test_errors(void)
{
	char *dir = tmpdir_new();
	char p[4200];
	struct store *s = NULL, *s2 = NULL;
	CHECK_INT(store_open(dir, NULL, &s), 0);
	/* The same database twice: RocksDB's LOCK refuses. */
	CHECK_INT(store_open(dir, NULL, &s2), -EBUSY);
	CHECK(s2 == NULL);
	store_close(s);
	/* A CURRENT file naming a missing MANIFEST. */
	snprintf(p, sizeof(p), "%s/db/CURRENT", dir);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs("MANIFEST-999999\n", f);
		fclose(f);
	}
	s = NULL;
	CHECK_INT(store_open(dir, NULL, &s), -EMEDIUMTYPE);
	CHECK(s == NULL);
	tmpdir_remove(dir);
}

/*
 * store_checkpoint: a checkpoint of a writable store holds what was
 * written before it (also what only the memtable had) and nothing after;
 * its tables are hard links; a read-only store checkpoints by copying its
 * WAL (the data was never flushed); refusals: a relative path, DEST or
 * DEST.tmp existing (left as they were), a missing parent.
 */
static void test_checkpoint(void)
{
	char *dir = tmpdir_new();
	char cp[4200], cp2[4200], p[4200 + 256 + 2];
	struct store *s = NULL, *c = NULL;
	struct buf v = BUF_INIT;
	struct store_options ro = {.read_only = true};
	struct stat st;

	CHECK_INT(store_open(dir, NULL, &s), 0);
	if (!s)
		goto out;
	struct store_batch *b = store_batch_new(s);
	put_str(b, STORE_CF_METADATA, "before", "1");
	put_str(b, STORE_CF_DEFAULT, "sub", "x");
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_free(b);
	snprintf(cp, sizeof(cp), "%s/cp", dir);
	CHECK_INT(store_checkpoint(s, cp), 0);
	b = store_batch_new(s);
	put_str(b, STORE_CF_METADATA, "after", "2");
	CHECK_INT(store_write(s, b, false), 0);
	store_batch_free(b);
	/* The flush made a table, and the checkpoint links it. */
	DIR *d = opendir(cp);
	struct dirent *e;
	int tables = 0;
	while (d && (e = readdir(d))) {
		size_t n = strlen(e->d_name);
		if (n > 4 && strcmp(e->d_name + n - 4, ".sst") == 0) {
			snprintf(p, sizeof(p), "%s/%s", cp, e->d_name);
			CHECK(stat(p, &st) == 0 && st.st_nlink >= 2);
			tables++;
		}
	}
	if (d)
		closedir(d);
	CHECK(tables >= 1);
	/* Refusals change nothing. */
	CHECK_INT(store_checkpoint(s, "relative"), -EINVAL);
	CHECK_INT(store_checkpoint(s, cp), -EEXIST);
	snprintf(cp2, sizeof(cp2), "%s/no/such", dir);
	CHECK_INT(store_checkpoint(s, cp2), -ENOENT);
	snprintf(cp2, sizeof(cp2), "%s/cp2", dir);
	snprintf(p, sizeof(p), "%s.tmp", cp2);
	CHECK(mkdir(p, 0755) == 0);
	snprintf(p, sizeof(p), "%s.tmp/mine", cp2);
	FILE *f = fopen(p, "w");
	if (f)
		fclose(f);
	CHECK_INT(store_checkpoint(s, cp2), -EEXIST);
	CHECK(stat(p, &st) == 0); /* RocksDB would have removed it */
	CHECK(!path_exists(cp2, "."));
	store_close(s);
	s = NULL;

	CHECK_INT(store_open(cp, &ro, &c), 0);
	if (c) {
		CHECK_INT(get_str(c, STORE_CF_METADATA, "before", &v), 0);
		CHECK_MEM(v.data, v.len, "1", 1);
		CHECK_INT(get_str(c, STORE_CF_DEFAULT, "sub", &v), 0);
		CHECK_INT(get_str(c, STORE_CF_METADATA, "after", &v), -ENOENT);
		store_close(c);
		c = NULL;
	}

	/* A read-only store: "wal" is written, synced, by a writer that keeps
	 * the database open, so it is in the WAL only; a read-only open
	 * beside it reads it from there, and its checkpoint copies the WAL
	 * (RocksDB cannot flush a read-only database). */
	CHECK_INT(store_open(cp, NULL, &s), 0);
	if (!s)
		goto out;
	b = store_batch_new(s);
	put_str(b, STORE_CF_METADATA, "wal", "3");
	CHECK_INT(store_write(s, b, true), 0);
	store_batch_free(b);
	CHECK_INT(store_open(cp, &ro, &c), 0); /* beside it: no lock */
	if (c) {
		snprintf(cp2, sizeof(cp2), "%s/cp-ro", dir);
		CHECK_INT(store_checkpoint(c, cp2), 0);
		store_close(c);
		c = NULL;
	}
	store_close(s);
	s = NULL;
	CHECK_INT(store_open(cp2, &ro, &c), 0);
	if (c) {
		CHECK_INT(get_str(c, STORE_CF_METADATA, "wal", &v), 0);
		CHECK_MEM(v.data, v.len, "3", 1);
		CHECK_INT(get_str(c, STORE_CF_METADATA, "before", &v), 0);
		store_close(c);
	}
out:
	buf_release(&v);
	tmpdir_remove(dir);
}

int main(void)
{
	log_level_current = LOG_LEVEL_ERR - 1; /* expected errors stay quiet */
	test_names();
	test_new_database();
	test_get_put_delete();
	test_get_head_large();
	test_large_batch_and_kept();
	test_batch_atomic();
	test_delete_range();
	test_iterators();
	test_snapshot();
	test_read_only();
	test_index_cf();
	test_follower();
	test_follower_blobs();
	test_plain_rocksdb();
	test_stats_compact();
	test_errors();
	test_checkpoint();
	return check_done("test_store");
}
