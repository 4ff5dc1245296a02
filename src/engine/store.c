/*
 * store: the only code that includes rocksdb/c.h, in four files. This one
 * opens a Kvrocks data directory (DIR/db) or a plain RocksDB directory
 * with all of its column families (options, column families, compaction
 * filters), closes it, and answers statistics and compaction; store_dir.c
 * picks the directory and says why one cannot be opened, store_heads.c
 * keeps the heads of large values, store_rw.c reads, writes and iterates.
 * Layer: engine (util, rocksdb/c.h).
 *
 * RocksDB errors are translated in exactly one place, store_err(): the
 * message is logged as one line and -ENOSPC (the disk is full) or -EIO
 * returned. No RocksDB-allocated
 * memory is handed to callers: values are copied into struct buf, and
 * iterator slices are only borrowed until the next move.
 */
#include "engine/store_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define STORE_DEFAULT_CACHE (64u << 20)
/* The WAL kept alive at most (see store_make_options). */
#define STORE_MAX_WAL (128ull << 20)
/* RocksDB's HEADER_LEVEL: the LOG gets the header written at open and
 * nothing else (see store_make_options). */
#define STORE_LOG_HEADER_ONLY 5
#define STORE_BLOOM_BITS      10.0
#define STORE_FORMAT_VERSION  5 /* what Kvrocks pins; RocksDB 7.8 reads it */

/* Kvrocks's column families in Kvrocks's creation order (enum store_cf). */
static const char *const cf_names[STORE_CF_COUNT] = {
    [STORE_CF_DEFAULT] = "default",	  [STORE_CF_METADATA] = "metadata",
    [STORE_CF_ZSET_SCORE] = "zset_score", [STORE_CF_PUBSUB] = "pubsub",
    [STORE_CF_PROPAGATE] = "propagate",	  [STORE_CF_STREAM] = "stream",
    [STORE_CF_SEARCH] = "search",	  [STORE_CF_INDEX] = "index",
};

const char *store_cf_name(enum store_cf cf)
{
	if ((unsigned)cf >= STORE_CF_COUNT)
		return "?";
	return cf_names[cf];
}

/* A full disk, as RocksDB words it (its POSIX file system's IOError
 * with subcode kNoSpace carries strerror(ENOSPC)); the C API has no
 * status codes, only the message. */
static bool is_no_space(const char *err)
{
	return strstr(err, "No space left on device") != NULL;
}

/* The one translation of a RocksDB error: log it, free it, and return
 * -ENOSPC for a full disk, -EIO for anything else. */
int store_err(const char *what, char *err)
{
	int rc = is_no_space(err) ? -ENOSPC : -EIO;
	LOG_ERR("rocksdb: %s: %s", what, err);
	rocksdb_free(err);
	return rc;
}

/*
 * The same for a write (or WAL sync) the disk was too full for. The
 * first failure is a background error inside RocksDB: every write after
 * it fails at once with the same message, until RocksDB's recovery (its
 * SstFileManager, which 7.8 always has, polls every 5 s) sees enough
 * free space, flushes the memtables to a new WAL and clears the error.
 * One line says the disk is full, not one per write.
 */
int store_write_err(struct store *s, const char *what, char *err)
{
	if (!is_no_space(err))
		return store_err(what, err);
	if (atomic_exchange(&s->full, true)) {
		rocksdb_free(err);
		return -ENOSPC;
	}
	LOG_ERR("%s: the disk is full: writes fail with ENOSPC until space is freed "
		"(rocksdb: %s: %s)",
		s->path, what, err);
	rocksdb_free(err);
	return -ENOSPC;
}

void store_write_ok(struct store *s)
{
	if (atomic_load(&s->full) && atomic_exchange(&s->full, false))
		LOG_INFO("%s: writes work again", s->path);
}

static int store_make_options(struct store *s, const struct store_options *opt)
{
	size_t cache_bytes =
	    opt && opt->block_cache_bytes ? opt->block_cache_bytes : STORE_DEFAULT_CACHE;
	s->opts = rocksdb_options_create();
	s->cache = rocksdb_cache_create_lru(cache_bytes);
	s->ropts = rocksdb_readoptions_create();
	s->wopts = rocksdb_writeoptions_create();
	s->wopts_sync = rocksdb_writeoptions_create();
	if (!s->opts || !s->cache || !s->ropts || !s->wopts || !s->wopts_sync)
		return -ENOMEM;
	rocksdb_writeoptions_set_sync(s->wopts_sync, 1);

	rocksdb_options_set_create_if_missing(s->opts, !s->read_only);
	rocksdb_options_set_create_missing_column_families(s->opts, !s->read_only);
	/* As Kvrocks: no compression in the two levels that are written most
	 * (flushes of large values then cost a copy, not a compression), a
	 * cheap one below. Any of these is readable by every RocksDB. */
	int levels[] = {rocksdb_no_compression,	 rocksdb_no_compression,  rocksdb_lz4_compression,
			rocksdb_lz4_compression, rocksdb_lz4_compression, rocksdb_lz4_compression,
			rocksdb_lz4_compression};
	rocksdb_options_set_compression_per_level(s->opts, levels,
						  sizeof(levels) / sizeof(levels[0]));
	/* Flush and compaction in the background on both cores. */
	rocksdb_options_set_max_background_jobs(s->opts, 2);
	/* Large values (a big string, a big field) go to blob files at flush,
	 * leaving a small reference in the SST: a key iterator then never
	 * walks through a block it cannot cache, and a read of a large value
	 * is one pread of its bytes. Kvrocks can turn the same option on
	 * (rocksdb.enable_blob_files); any RocksDB >= 6.18 reads blob files
	 * whatever the option says. Blob GC lets compaction reclaim the
	 * blobs of deleted values. */
	rocksdb_options_set_enable_blob_files(s->opts, 1);
	rocksdb_options_set_min_blob_size(s->opts, STORE_BLOB_MIN);
	rocksdb_options_set_enable_blob_gc(s->opts, 1);
	/*
	 * A bound on the WAL. Every column family's memtable pins the WAL
	 * files it has records in until it is flushed, and RocksDB's default
	 * bound is four times all write buffers (7 column families x 2 x 64
	 * MiB x 4 = 3.5 GiB): a few small writes to one column family (a
	 * hash's fields in "default") while big strings fill and flush
	 * "metadata" kept every WAL file of the big values, 2.4 GiB after 15 s
	 * of four writers, and the next open replayed all of it (11 s). Past
	 * this bound RocksDB flushes the column families that hold the oldest
	 * WAL file: the WAL, and what an open after a crash replays, stays
	 * near two write buffers.
	 */
	size_t wbuf = store_write_buffer(s->path);
	rocksdb_options_set_write_buffer_size(s->opts, wbuf);
	rocksdb_options_set_max_total_wal_size(s->opts, STORE_MAX_WAL / STORE_WRITE_BUFFER * wbuf);
	/*
	 * RocksDB's own LOG (DIR/db/LOG) keeps only the header of each open
	 * (version, options). Its logger in 7.8 aborts the process (an
	 * assertion, on in Debian's build) on the next line after a write
	 * of the LOG failed, which a full disk makes certain: the "free
	 * space is less than needed" line recovery logs every 5 s did it.
	 * The C API of 7.8 cannot install another logger. Every RocksDB
	 * error a call returns is logged by kvfs (store_err).
	 */
	rocksdb_options_set_info_log_level(s->opts, STORE_LOG_HEADER_ONLY);
	if (s->follower) {
		/* A secondary instance keeps every table file open (RocksDB
		 * requires it: the primary's compactions delete the files the
		 * secondary's current version still reads). Its LOG lives in
		 * its own directory; a remount rotates it, keep two old ones. */
		rocksdb_options_set_max_open_files(s->opts, -1);
		rocksdb_options_set_keep_log_file_num(s->opts, 3);
	}

	rocksdb_block_based_table_options_t *t = rocksdb_block_based_options_create();
	if (!t)
		return -ENOMEM;
	rocksdb_block_based_options_set_block_cache(t, s->cache);
	/* The table options take ownership of the filter policy. */
	rocksdb_block_based_options_set_filter_policy(
	    t, rocksdb_filterpolicy_create_bloom(STORE_BLOOM_BITS));
	rocksdb_block_based_options_set_format_version(t, STORE_FORMAT_VERSION);
	/* The factory copies the table options (and shares cache and policy). */
	rocksdb_options_set_block_based_table_factory(s->opts, t);
	rocksdb_block_based_options_destroy(t);
	return 0;
}

static bool name_in(char **names, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], name) == 0)
			return true;
	return false;
}

/*
 * The column families to open: every one the database has, plus (when
 * writable) Kvrocks's that are missing. A fresh database gets exactly
 * Kvrocks's set, in Kvrocks's order. names[] are heap copies.
 */
static int store_cf_list(struct store *s, bool fresh, char ***out, size_t *nout)
{
	char **listed = NULL, **names = NULL;
	size_t nlisted = 0, n = 0;
	char *err = NULL;
	int rc = 0;
	struct buf missing = BUF_INIT;
	bool foreign = false; /* a RocksDB without Kvrocks's families */

	if (!fresh) {
		listed = rocksdb_list_column_families(s->opts, s->path, &nlisted, &err);
		if (err) {
			rc = store_open_err(s, err);
			goto out;
		}
		/* Every Kvrocks database has "metadata"; a RocksDB without it is
		 * some other program's, which could no longer open it read-write
		 * once kvfs added families (RocksDB wants every one named). So
		 * only -o ro opens it, adding nothing. */
		foreign = !name_in(listed, nlisted, cf_names[STORE_CF_METADATA]);
		if (foreign && s->read_only) {
			LOG_WARN("%s: a RocksDB without Kvrocks's column families (no \"%s\"): not "
				 "Kvrocks data; -o ro adds none, and no key shows",
				 s->path, cf_names[STORE_CF_METADATA]);
		} else if (foreign) {
			LOG_ERR(
			    "%s: a RocksDB without Kvrocks's column families (no \"%s\"): not "
			    "Kvrocks data; kvfs adds none to it (its own program could no longer "
			    "open it): mount it with -o ro to look",
			    s->path, cf_names[STORE_CF_METADATA]);
			rc = -EMEDIUMTYPE;
			goto out;
		}
	}
	names = calloc(nlisted + STORE_CF_COUNT, sizeof(*names));
	if (!names) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < nlisted; i++) {
		if (!(names[n++] = strdup(listed[i]))) {
			rc = -ENOMEM;
			goto out;
		}
	}
	for (int c = 0; c < STORE_CF_BASE; c++) {
		if (name_in(names, n, cf_names[c]))
			continue;
		if (!fresh && (rc = buf_printf(&missing, " %s", cf_names[c])) != 0)
			goto out;
		if (s->read_only && !fresh)
			continue;
		if (!(names[n++] = strdup(cf_names[c]))) {
			rc = -ENOMEM;
			goto out;
		}
	}
	/* Those of a newer Kvrocks than the one that wrote the database. */
	if (missing.len && s->read_only && !foreign)
		LOG_WARN("%s: without Kvrocks's column families%s (-o ro: not added; nothing is "
			 "read from them)",
			 s->path, missing.data);
	else if (missing.len)
		LOG_INFO("%s: adding Kvrocks's missing column families%s, as Kvrocks does", s->path,
			 missing.data);
out:
	buf_release(&missing);
	if (listed)
		rocksdb_list_column_families_destroy(listed, nlisted);
	if (rc && names) {
		for (size_t i = 0; i < n; i++)
			free(names[i]);
		free(names);
		names = NULL;
		n = 0;
	}
	*out = names;
	*nout = n;
	return rc;
}

/* ---- Compaction filters -------------------------------------------- */

/*
 * RocksDB makes one filter per (sub)compaction through a factory, and uses
 * each filter from one thread only; so the metadata cache of a filter
 * needs no lock. The filter (and its state) is owned by RocksDB, which
 * calls gc_filter_free when the compaction ends.
 */
struct store_gc_read {
	struct gc_cf *c;
	struct buf key; /* the metadata key last read */
	struct buf val; /* its value, if found */
	int cached;	/* 0 nothing cached, 1 found, -ENOENT absent */
};

int store_gc_meta_get(struct store_gc_read *rd, const void *k, size_t kn, const char **v,
		      size_t *vn)
{
	struct store *s = rd->c->s;
	int rc;

	if (!atomic_load(&s->gc_on) || !s->cf[STORE_CF_METADATA])
		return -ESHUTDOWN;
	if (!rd->cached || rd->key.len != kn || memcmp(rd->key.data, k, kn) != 0) {
		rd->cached = 0;
		if ((rc = buf_set(&rd->key, k, kn)) != 0)
			return rc;
		rc = store_get(s, STORE_CF_METADATA, k, kn, &rd->val);
		if (rc && rc != -ENOENT)
			return rc; /* not cached: the next record tries again */
		rd->cached = rc ? rc : 1;
	}
	if (rd->cached < 0)
		return rd->cached;
	*v = rd->val.data;
	*vn = rd->val.len;
	return 0;
}

static unsigned char gc_filter(void *state, int level, const char *k, size_t kn, const char *v,
			       size_t vn, char **new_value, size_t *new_len,
			       unsigned char *value_changed)
{
	(void)level;
	(void)new_value;
	(void)new_len;
	struct store_gc_read *rd = state;
	struct store *s = rd->c->s;
	*value_changed = 0;
	/* A snapshot read (one listing pass) may still need what the
	 * filter would drop: it goes at a compaction after the last one. */
	if (!atomic_load(&s->gc_on) || atomic_load(&s->snaps_live) > 0)
		return 0;
	return s->gc.drop(s->gc.ctx, rd, rd->c->cf, k, kn, v, vn) ? 1 : 0;
}

static void gc_filter_free(void *state)
{
	struct store_gc_read *rd = state;
	buf_release(&rd->key);
	buf_release(&rd->val);
	free(rd);
}

static const char *gc_filter_name(void *state)
{
	(void)state;
	return "kvfs.Filter";
}

static rocksdb_compactionfilter_t *gc_factory_create(void *state,
						     rocksdb_compactionfiltercontext_t *ctx)
{
	(void)ctx;
	struct store_gc_read *rd = calloc(1, sizeof(*rd));
	if (!rd)
		return NULL; /* RocksDB then compacts without a filter */
	rd->c = state;
	buf_init(&rd->key);
	buf_init(&rd->val);
	return rocksdb_compactionfilter_create(rd, gc_filter_free, gc_filter, gc_filter_name);
}

/* The factory's state is a gc_cf inside struct store, freed with it. */
static void gc_factory_free(void *state)
{
	(void)state;
}

static const char *gc_factory_name(void *state)
{
	(void)state;
	return "kvfs.FilterFactory";
}

/* Per-CF options carrying a filter factory for each filtered column
 * family. Nothing on a read-only store: it never compacts. */
static int store_gc_options(struct store *s, const struct store_options *opt)
{
	if (s->read_only || !opt || !opt->gc || !opt->gc->drop)
		return 0;
	s->gc = *opt->gc;
	for (int c = 0; c < STORE_CF_COUNT; c++) {
		if (!(s->gc.cfs & (1u << c)))
			continue;
		s->gc_cf[c].s = s;
		s->gc_cf[c].cf = (enum store_cf)c;
		rocksdb_compactionfilterfactory_t *f = rocksdb_compactionfilterfactory_create(
		    &s->gc_cf[c], gc_factory_free, gc_factory_create, gc_factory_name);
		s->cf_opts[c] = rocksdb_options_create_copy(s->opts);
		if (!f || !s->cf_opts[c]) {
			if (f)
				rocksdb_compactionfilterfactory_destroy(f);
			return -ENOMEM;
		}
		/* The options take ownership of the factory. */
		rocksdb_options_set_compaction_filter_factory(s->cf_opts[c], f);
	}
	return 0;
}

int store_open(const char *dir, const struct store_options *opt, struct store **out)
{
	struct store *s = calloc(1, sizeof(*s));
	char **names = NULL;
	size_t n = 0;
	const rocksdb_options_t **cfopts = NULL;
	char *err = NULL;
	bool fresh = false;
	int rc;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	pthread_mutex_init(&s->snaps_lock, NULL);
	pthread_mutex_init(&s->cf_lock, NULL);
	if (!(s->heads = store_heads_new())) {
		free(s);
		return -ENOMEM;
	}
	s->follower = opt && opt->follow;
	pthread_rwlock_init(&s->follow_lock, NULL);
	s->read_only = (opt && opt->read_only) || s->follower;
	rc = store_pick_path(dir, s->read_only, &s->path, &fresh);
	if (rc)
		goto out;
	if (s->follower &&
	    (rc = store_secondary_dir(dir, s->path, opt->follow_dir, &s->secondary)) != 0)
		goto out;
	if (!s->read_only && !fresh && store_too_full(s))
		s->read_only = true;
	rc = store_make_options(s, opt);
	if (rc)
		goto out;
	rc = store_cf_list(s, fresh, &names, &n);
	if (rc)
		goto out;
	cfopts = calloc(n, sizeof(*cfopts));
	/* Room for the families store_cf_create may add. */
	s->handles = calloc(n + STORE_CF_COUNT - STORE_CF_BASE, sizeof(*s->handles));
	if (!cfopts || !s->handles) {
		rc = -ENOMEM;
		goto out;
	}
	rc = store_gc_options(s, opt);
	if (rc)
		goto out;
	for (size_t i = 0; i < n; i++) {
		cfopts[i] = s->opts;
		for (int c = 0; c < STORE_CF_COUNT; c++)
			if (s->cf_opts[c] && strcmp(names[i], cf_names[c]) == 0)
				cfopts[i] = s->cf_opts[c];
	}
	if (!s->read_only) {
		s->db = rocksdb_open_column_families(
		    s->opts, s->path, (int)n, (const char *const *)names, cfopts, s->handles, &err);
		if (err && is_no_space(err) && !fresh) {
			/* More was needed than store_too_full counted. */
			LOG_WARN("%s: mounted read-only: the disk is full (rocksdb: %s); free "
				 "space and mount again to write",
				 s->path, err);
			rocksdb_free(err);
			err = NULL;
			s->read_only = true;
		}
	}
	if (s->follower) {
		rc = store_follow_open(s, names, n);
		goto out;
	}
	if (s->read_only && !err)
		s->db = rocksdb_open_for_read_only_column_families(s->opts, s->path, (int)n,
								   (const char *const *)names,
								   cfopts, s->handles, 0, &err);
	if (err) {
		s->db = NULL;
		rc = store_open_err(s, err);
		goto out;
	}
	s->nhandles = n;
	for (size_t i = 0; i < n; i++)
		for (int c = 0; c < STORE_CF_COUNT; c++)
			if (strcmp(names[i], cf_names[c]) == 0)
				s->cf[c] = s->handles[i];
	atomic_store(&s->gc_on, s->gc.drop != NULL);
	LOG_DEBUG("%s: opened %s with %zu column families", s->path,
		  s->read_only ? "read-only" : "read-write", n);
out:
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(cfopts);
	if (rc) {
		store_close(s);
		s = NULL;
	}
	*out = s;
	return rc;
}

/* Bytes in all memtables (active and immutable) of all column families. */
static uint64_t store_memtable_bytes(struct store *s)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->nhandles; i++)
		n += store_prop(s, s->handles[i], "rocksdb.cur-size-all-mem-tables");
	return n;
}

/*
 * Flush every column family's memtables and wait. On close this empties
 * the WAL (RocksDB deletes the files no memtable needs), so the next open
 * replays nothing: RocksDB does not flush at close when the WAL is on,
 * and an open replays and then flushes the whole WAL itself, after an
 * unmount under load, seconds before the mount comes up. The flush
 * costs what the memtables hold (bounded by STORE_MAX_WAL and the write
 * buffers), written at disk speed. Errors are logged: the WAL still has
 * the data.
 */
static void store_flush_all(struct store *s)
{
	rocksdb_flushoptions_t *fo = rocksdb_flushoptions_create();
	if (!fo)
		return;
	rocksdb_flushoptions_set_wait(fo, 1);
	for (size_t i = 0; i < s->nhandles; i++) {
		char *err = NULL;
		rocksdb_flush_cf(s->db, fo, s->handles[i], &err);
		if (err)
			store_err("flush on close", err);
	}
	rocksdb_flushoptions_destroy(fo);
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->heads) /* a kept value may pin the database's memory */
		store_heads_stop(s->heads);
	store_follow_close(s); /* a follower's instances: s->db and its handles too */
	if (s->db) {
		/* Filters stop consulting the metadata first; then wait for
		 * running compactions, which may still be inside a filter and
		 * use a handle, before the handles go. */
		atomic_store(&s->gc_on, false);
		if (!s->read_only) {
			uint64_t t0 = store_mono_ms();
			uint64_t mem = store_memtable_bytes(s);
			/* With the disk still full, a flush cannot work either: the
			 * WAL keeps what the memtables hold for the next open. */
			bool ok = store_sync_wal(s, "sync WAL on close") == 0;
			if (ok)
				store_flush_all(s);
			rocksdb_cancel_all_background_work(s->db, 1);
			if (ok)
				LOG_INFO("%s: closed in %llu ms (%llu MiB of memtables flushed)",
					 s->path, (unsigned long long)(store_mono_ms() - t0),
					 (unsigned long long)(mem >> 20));
			else
				LOG_WARN("%s: closed without flushing (the disk is full): the next "
					 "open replays %llu MiB of WAL",
					 s->path, (unsigned long long)(mem >> 20));
		}
		store_snaps_release(s);
		/* Handles go before the database they belong to. */
		for (size_t i = 0; i < s->nhandles; i++)
			rocksdb_column_family_handle_destroy(s->handles[i]);
		rocksdb_close(s->db);
	}
	free(s->handles);
	store_heads_free(s->heads);
	if (s->ropts)
		rocksdb_readoptions_destroy(s->ropts);
	if (s->wopts)
		rocksdb_writeoptions_destroy(s->wopts);
	if (s->wopts_sync)
		rocksdb_writeoptions_destroy(s->wopts_sync);
	/* The options own the filter factories; their states live in s. */
	for (int c = 0; c < STORE_CF_COUNT; c++)
		if (s->cf_opts[c])
			rocksdb_options_destroy(s->cf_opts[c]);
	if (s->opts)
		rocksdb_options_destroy(s->opts);
	if (s->cache)
		rocksdb_cache_destroy(s->cache);
	free(s->path);
	pthread_rwlock_destroy(&s->follow_lock);
	pthread_mutex_destroy(&s->snaps_lock);
	pthread_mutex_destroy(&s->cf_lock);
	free(s);
}

bool store_is_read_only(const struct store *s)
{
	return s->read_only;
}

bool store_is_follower(const struct store *s)
{
	return s->follower;
}

const char *store_path(const struct store *s)
{
	return s->path;
}

rocksdb_column_family_handle_t *store_cf(struct store *s, enum store_cf cf)
{
	return (unsigned)cf < STORE_CF_COUNT ? __atomic_load_n(&s->cf[cf], __ATOMIC_ACQUIRE) : NULL;
}

bool store_has_cf(struct store *s, enum store_cf cf)
{
	return store_cf(s, cf) != NULL;
}

int store_cf_create(struct store *s, enum store_cf cf)
{
	char *err = NULL;
	int rc = 0;
	if ((unsigned)cf >= STORE_CF_COUNT || cf < STORE_CF_BASE)
		return -EINVAL;
	if (store_cf(s, cf))
		return 0;
	if (s->read_only || s->follower)
		return -EROFS;
	pthread_mutex_lock(&s->cf_lock);
	if (!s->cf[cf]) {
		const rocksdb_options_t *o = s->cf_opts[cf] ? s->cf_opts[cf] : s->opts;
		rocksdb_column_family_handle_t *h =
		    rocksdb_create_column_family(s->db, o, cf_names[cf], &err);
		if (err) {
			rc = store_write_err(s, "create column family", err);
		} else {
			s->handles[s->nhandles++] = h;
			__atomic_store_n(&s->cf[cf], h, __ATOMIC_RELEASE);
			LOG_INFO("%s: made Kvrocks's column family \"%s\"", s->path, cf_names[cf]);
		}
	}
	pthread_mutex_unlock(&s->cf_lock);
	return rc;
}

/* ---- Statistics and compaction ------------------------------------- */

/* A numeric property of one column family; 0 if RocksDB has none. */
uint64_t store_prop(struct store *s, rocksdb_column_family_handle_t *h, const char *name)
{
	char *v = rocksdb_property_value_cf(s->db, h, name);
	uint64_t n = 0;
	if (v) {
		n = strtoull(v, NULL, 10);
		rocksdb_free(v);
	}
	return n;
}

int store_stats(struct store *s, uint64_t *bytes, uint64_t *keys)
{
	uint64_t b = 0;
	store_follow_begin(s, STORE_CF_COUNT); /* no reopen meanwhile */
	for (size_t i = 0; i < s->nhandles; i++) {
		b += store_prop(s, s->handles[i], "rocksdb.total-sst-files-size");
		b += store_prop(s, s->handles[i], "rocksdb.cur-size-all-mem-tables");
	}
	*bytes = b;
	*keys = s->cf[STORE_CF_METADATA]
		    ? store_prop(s, s->cf[STORE_CF_METADATA], "rocksdb.estimate-num-keys")
		    : 0;
	store_follow_end(s);
	return 0;
}

/* Change one column family's blob GC age cutoff (a mutable option). A
 * failure is logged: the compaction then only collects less. */
static void store_set_blob_cutoff(struct store *s, rocksdb_column_family_handle_t *h,
				  const char *cutoff)
{
	const char *key = "blob_garbage_collection_age_cutoff";
	char *err = NULL;
	rocksdb_set_options_cf(s->db, h, 1, &key, &cutoff, &err);
	if (err)
		store_err("set blob_garbage_collection_age_cutoff", err);
}

int store_compact(struct store *s, enum store_cf cf, const void *begin, size_t bn, const void *end,
		  size_t en)
{
	rocksdb_column_family_handle_t *h = store_cf(s, cf);
	if (s->read_only)
		return -EROFS;
	if (!h)
		return -ENOENT;
	rocksdb_compactoptions_t *o = rocksdb_compactoptions_create();
	if (!o)
		return -ENOMEM;
	/* kForce: the last level too, so every record meets the filter. */
	rocksdb_compactoptions_set_bottommost_level_compaction(o, 2);
	/*
	 * Blob GC for every blob file, not only the oldest quarter (the
	 * cutoff background compactions keep, Kvrocks's default too). A
	 * blob file goes only when none of its values is referenced any
	 * more; one that still holds a live value is rewritten only if it
	 * is under the cutoff. After deleting all but 28 of 2,800 files,
	 * a compaction with the default cutoff left 7 blob files (323 MiB)
	 * for 8 MiB of live values; with 1.0 the live values move to a new
	 * file and the old ones go.
	 */
	char old_cutoff[32];
	snprintf(old_cutoff, sizeof(old_cutoff), "%g",
		 rocksdb_options_get_blob_gc_age_cutoff(s->opts));
	store_set_blob_cutoff(s, h, "1.0");
	rocksdb_compact_range_cf_opt(s->db, h, o, begin, begin ? bn : 0, end, end ? en : 0);
	store_set_blob_cutoff(s, h, old_cutoff);
	rocksdb_compactoptions_destroy(o);
	return 0;
}
