/*
 * store: the only code that includes rocksdb/c.h. Opens a Kvrocks data
 * directory (DIR/db) or a plain RocksDB directory with all of its column
 * families, and wraps point reads, write batches, bounded iterators, WAL
 * sync, statistics and compaction. Layer: store (util, rocksdb/c.h).
 *
 * RocksDB errors are translated in exactly one place, store_err(): the
 * message is logged as one line and -ENOSPC (the disk is full) or -EIO
 * returned. No RocksDB-allocated
 * memory is handed to callers: values are copied into struct buf, and
 * iterator slices are only borrowed until the next move.
 */
#include "engine/store.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

#include <rocksdb/c.h>

#define STORE_DEFAULT_CACHE (64u << 20)
#define STORE_BLOB_MIN	    (64u << 10) /* values from 64 KiB go to blob files */
/* The WAL kept alive at most (see store_make_options), and the write
 * buffer per column family (RocksDB's and Kvrocks's 64 MiB). */
#define STORE_MAX_WAL	   (128ull << 20)
#define STORE_WRITE_BUFFER (64u << 20)
/* On a small file system the write buffer is at most this part of it,
 * and at least STORE_WRITE_BUFFER_MIN (see store_write_buffer). */
#define STORE_WRITE_BUFFER_PART 8
#define STORE_WRITE_BUFFER_MIN	(4u << 20)
/* Room a writable open needs besides the WAL it replays: a new MANIFEST,
 * OPTIONS file, WAL and the LOG's header (see store_open_mode). */
#define STORE_OPEN_ROOM (1u << 20)
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
    [STORE_CF_SEARCH] = "search",
};

struct store {
	rocksdb_t *db;
	rocksdb_options_t *opts;
	rocksdb_cache_t *cache;
	rocksdb_readoptions_t *ropts;
	rocksdb_writeoptions_t *wopts;	    /* WAL on, not synced */
	rocksdb_writeoptions_t *wopts_sync; /* WAL on, synced */
	/* Every column family that is open (RocksDB requires all of them),
	 * and Kvrocks's ones by enum; a read-only store may lack some (NULL). */
	rocksdb_column_family_handle_t **handles;
	size_t nhandles;
	rocksdb_column_family_handle_t *cf[STORE_CF_COUNT];
	bool read_only;
	char *path;
	struct head_cache *heads;
	/* Compaction filters (store_gc): the hook, one factory state per
	 * filtered column family, and per-CF options carrying the factory.
	 * gc_on is true from the end of store_open to the start of
	 * store_close; filters that find it false keep everything and do
	 * not touch the handles. */
	struct store_gc gc;
	struct gc_cf {
		struct store *s;
		enum store_cf cf;
	} gc_cf[STORE_CF_COUNT];
	rocksdb_options_t *cf_opts[STORE_CF_COUNT];
	atomic_bool gc_on;
	/* A write failed because the disk is full, and none has worked
	 * since: later failures are not logged again (the fs layer names
	 * each file), the first write that works says so. */
	atomic_bool full;
};

/*
 * The heads of large values. A value from STORE_BLOB_MIN bytes lives in
 * a blob file, and RocksDB 7.8 cannot read the first bytes of a value
 * without reading all of it: a stat of a 256 MiB string would read 256
 * MiB. So store_get_head remembers the first HEAD_BYTES and the length
 * of large values, in a direct-mapped table of slots indexed by a hash
 * of (column family, key).
 *
 * kvfs is the only writer (RocksDB's lock), and every write goes through
 * store_write: a batch remembers the hash of each key it touches, and
 * store_write bumps those slots' epochs and empties them after the write.
 * A reader notes a slot's epoch before its read and fills the slot only
 * if the epoch is unchanged afterwards, so a value read before a write
 * can never be remembered after it.
 */
#define HEAD_SLOTS 256
#define HEAD_BYTES 512

struct head_slot {
	uint64_t epoch;
	bool valid;
	enum store_cf cf;
	char *key;
	size_t kn;
	char head[HEAD_BYTES];
	size_t n, full;
};

/*
 * Beside the heads, the last large value read whole for its head is kept
 * for KEPT_MS: a lookup (stat) of a big file is nearly always followed by
 * an open and a read of it, and store_value_get then takes the value
 * kept instead of reading the blob again (a cold `cat` of a 256 MiB file
 * read it twice). It is valid while its slot's epoch is unchanged; a
 * reaper thread frees it when its time is up (without the thread,
 * nothing is kept).
 */
#define KEPT_MS 1000

struct head_cache {
	pthread_mutex_t lock;
	struct head_slot slot[HEAD_SLOTS];
	rocksdb_pinnableslice_t *kept;
	enum store_cf kept_cf;
	char *kept_key;
	size_t kept_kn, kept_slot;
	uint64_t kept_epoch, kept_until;
	pthread_cond_t kept_cond; /* CLOCK_MONOTONIC: a value kept, or stop */
	pthread_t reaper;
	bool reaper_on, stop;
};

static rocksdb_pinnableslice_t *kept_out_locked(struct head_cache *hc);
static void reaper_start(struct head_cache *hc);
static void reaper_stop(struct head_cache *hc);

/*
 * A batch is a RocksDB write batch plus the store whose column families
 * it names. A put into a column family that is not open (possible only on
 * a read-only store, which refuses every write anyway) is remembered as
 * a sticky error that store_write() returns.
 */
struct store_batch {
	struct store *s;
	rocksdb_writebatch_t *wb;
	int err;
	/* Head-cache slots of the keys written (see struct head_cache). */
	uint64_t *touched;
	size_t ntouched, captouched;
	bool touched_all; /* a range delete */
	/* The heads of the large values it puts, for the head cache once
	 * written: a stat after writing a big file reads nothing. `at` is
	 * the put's index in touched; a later touch of the key cancels. */
	struct head_fill {
		struct head_slot h;
		size_t at;
	} * fills;
	size_t nfills, capfills;
};

struct store_iter {
	rocksdb_iterator_t *it; /* NULL: the column family is absent (empty) */
	/* Per iterator: RocksDB keeps pointers to the bound slices inside
	 * the read options, so both must live as long as the iterator. */
	rocksdb_readoptions_t *ropts;
	char *lower, *upper;
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
static int store_err(const char *what, char *err)
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
static int store_write_err(struct store *s, const char *what, char *err)
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

static void store_write_ok(struct store *s)
{
	if (atomic_load(&s->full) && atomic_exchange(&s->full, false))
		LOG_INFO("%s: writes work again", s->path);
}

static bool file_exists(const char *dir, const char *name)
{
	struct stat st;
	char *p = NULL;
	bool ok = false;
	if (asprintf(&p, "%s/%s", dir, name) < 0)
		return false;
	ok = stat(p, &st) == 0;
	free(p);
	return ok;
}

/*
 * Is dir empty but for what may stand beside a new database: an empty db/
 * (the directory RocksDB creates) and lost+found (dir is a file system's
 * root)? 1 yes, 0 no, or a negative errno if it cannot be read.
 */
static int dir_is_blank(const char *dir, bool top)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	int rc = 1;
	if (!d)
		return -errno;
	while (rc == 1 && (de = readdir(d))) {
		const char *n = de->d_name;
		char *sub = NULL;
		if (strcmp(n, ".") == 0 || strcmp(n, "..") == 0 ||
		    (top && strcmp(n, "lost+found") == 0))
			continue;
		if (top && strcmp(n, "db") == 0 && asprintf(&sub, "%s/db", dir) >= 0) {
			rc = dir_is_blank(sub, false) == 1 ? 1 : 0;
			free(sub);
			continue;
		}
		rc = 0;
	}
	closedir(d);
	return rc;
}

/* EACCES from access(2) on p is "permission denied", said once. */
static int store_check_access(const char *p, int how, bool read_only)
{
	if (access(p, how) == 0 || errno != EACCES)
		return 0;
	LOG_ERR("%s: permission denied (kvfs, uid %u, needs %s permission there)", p,
		(unsigned)geteuid(), read_only ? "read and search" : "read, write and search");
	return -EACCES;
}

/*
 * Decide which directory to open. *fresh = true for a new database. Every
 * refusal is said in one line, and its errno tells main the exit status:
 * ENOENT and ENOTDIR (nothing to open), EACCES, EMEDIUMTYPE (a directory
 * holding something else than a database: kvfs makes a new one only in an
 * empty directory, so that a mistyped path never gets one beside other
 * files).
 */
static int store_pick_path(const char *dir, bool read_only, char **path, bool *fresh)
{
	struct stat st;
	int how = read_only ? R_OK | X_OK : R_OK | W_OK | X_OK;
	int rc;

	*fresh = false;
	*path = NULL;
	if (stat(dir, &st) != 0) {
		int e = errno;
		/* RocksDB creates dir/db itself, but not its parent. */
		if (e == ENOENT && !read_only && mkdir(dir, 0755) == 0)
			goto fresh;
		if (e == ENOENT && !read_only)
			e = errno;
		if (e == ENOENT && read_only)
			LOG_ERR("%s: no such directory (-o ro opens only an existing database)",
				dir);
		else if (e == ENOENT)
			LOG_ERR(
			    "%s: no such directory, and its parent does not exist to make it in",
			    dir);
		else if (e == EACCES)
			LOG_ERR("%s: permission denied (kvfs, uid %u, cannot %s it)", dir,
				(unsigned)geteuid(), read_only ? "reach" : "reach or create");
		else
			LOG_ERR("%s: %s", dir, strerror(e));
		return -e;
	}
	if (!S_ISDIR(st.st_mode)) {
		LOG_ERR("%s: not a directory", dir);
		return -ENOTDIR;
	}
	if ((rc = store_check_access(dir, R_OK | X_OK, read_only)) != 0)
		return rc;
	if (file_exists(dir, "db/CURRENT")) {
		if (asprintf(path, "%s/db", dir) < 0)
			return -ENOMEM;
		return store_check_access(*path, how, read_only);
	}
	if (file_exists(dir, "CURRENT")) {
		if (!(*path = strdup(dir)))
			return -ENOMEM;
		return store_check_access(*path, how, read_only);
	}
	rc = dir_is_blank(dir, true);
	if (rc < 0) {
		LOG_ERR("%s: %s", dir, strerror(-rc));
		return rc;
	}
	if (!rc) {
		LOG_ERR(
		    "%s: not a RocksDB database (neither %s/db/CURRENT nor %s/CURRENT), and not "
		    "empty: kvfs makes a new database only in an empty directory",
		    dir, dir, dir);
		return -EMEDIUMTYPE;
	}
	if (read_only) {
		LOG_ERR("%s: no database there (neither %s/db/CURRENT nor %s/CURRENT)", dir, dir,
			dir);
		return -ENOENT;
	}
	if ((rc = store_check_access(dir, how, read_only)) != 0)
		return rc;
fresh:
	if (asprintf(path, "%s/db", dir) < 0)
		return -ENOMEM;
	*fresh = true;
	return file_exists(dir, "db") ? store_check_access(*path, how, read_only) : 0;
}

/* The process holding the fcntl lock RocksDB takes on path/LOCK: its pid
 * (0 if unknown) and name. */
static pid_t lock_holder(const char *path, char *name, size_t n)
{
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	char *p = NULL;
	pid_t pid = 0;
	snprintf(name, n, "?");
	if (asprintf(&p, "%s/LOCK", path) < 0)
		return 0;
	/* A probe only: this process holds no lock there that closing the
	 * descriptor could drop. */
	int fd = open(p, O_RDONLY | O_CLOEXEC);
	free(p);
	if (fd < 0)
		return 0;
	if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK)
		pid = fl.l_pid;
	close(fd);
	if (pid > 0 && asprintf(&p, "/proc/%d/comm", (int)pid) >= 0) {
		FILE *f = fopen(p, "re");
		if (f && fgets(name, (int)n, f))
			name[strcspn(name, "\n")] = '\0';
		if (f)
			fclose(f);
		free(p);
	}
	return pid;
}

/*
 * RocksDB refused to open the database at s->path. Opening is where the
 * kind of failure matters to the user (main turns it into an exit
 * status), so it is said in one line and given its own errno: EBUSY for
 * the lock, EMEDIUMTYPE for no or a damaged database, EACCES; else EIO.
 */
static int store_open_err(struct store *s, char *err)
{
	int rc = -EIO;
	char name[64];
	if (strstr(err, "While lock file") || strstr(err, "lock hold by current process")) {
		pid_t pid = lock_holder(s->path, name, sizeof(name));
		if (pid > 0)
			LOG_ERR(
			    "%s: in use by another process: %d (%s) holds its lock; unmount that "
			    "kvfs or stop that Kvrocks first",
			    s->path, (int)pid, name);
		else
			LOG_ERR("%s: in use by another process (its LOCK file is locked); unmount "
				"that kvfs or stop that Kvrocks first",
				s->path);
		rc = -EBUSY;
	} else if (strncmp(err, "Corruption:", 11) == 0 || strstr(err, "MANIFEST")) {
		LOG_ERR("%s: not a RocksDB database, or a damaged one (rocksdb: %s)", s->path, err);
		rc = -EMEDIUMTYPE;
	} else if (strstr(err, "Permission denied")) {
		LOG_ERR("%s: permission denied (rocksdb: %s)", s->path, err);
		rc = -EACCES;
	} else {
		LOG_ERR("rocksdb: %s: %s", s->path, err);
	}
	rocksdb_free(err);
	return rc;
}

/* Size and free bytes of the file system holding path (or, for a new
 * database not made yet, its parent). -errno if neither can be asked. */
static int store_fs_space(const char *path, uint64_t *size, uint64_t *avail)
{
	struct statvfs sv;
	int rc = statvfs(path, &sv) == 0 ? 0 : -errno;
	if (rc == -ENOENT) {
		char *parent = strdup(path);
		char *slash = parent ? strrchr(parent, '/') : NULL;
		if (slash && slash != parent) {
			*slash = '\0';
			rc = statvfs(parent, &sv) == 0 ? 0 : -errno;
		}
		free(parent);
	}
	if (!rc) {
		*size = (uint64_t)sv.f_blocks * sv.f_frsize;
		*avail = (uint64_t)sv.f_bavail * sv.f_frsize;
	}
	return rc;
}

/*
 * The write buffer per column family: 64 MiB (Kvrocks's), or an eighth
 * of a smaller file system. RocksDB's recovery from a full disk waits
 * until a write buffer's worth of space is free (SstFileManager's
 * reserved disk buffer) before it flushes the memtables: with 64 MiB on
 * a 48 MiB disk, writes would never work again; and a memtable larger
 * than the disk could never be flushed at all.
 */
static size_t store_write_buffer(const char *path)
{
	uint64_t size = 0, avail = 0;
	if (store_fs_space(path, &size, &avail) != 0 ||
	    size / STORE_WRITE_BUFFER_PART >= STORE_WRITE_BUFFER)
		return STORE_WRITE_BUFFER;
	if (size / STORE_WRITE_BUFFER_PART < STORE_WRITE_BUFFER_MIN)
		return STORE_WRITE_BUFFER_MIN;
	return (size_t)(size / STORE_WRITE_BUFFER_PART);
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
	for (int c = 0; c < STORE_CF_COUNT; c++) {
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
	if (!atomic_load(&s->gc_on))
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

/* Bytes in the WAL files of a RocksDB directory (what an open replays). */
static uint64_t store_wal_bytes(const char *path)
{
	uint64_t n = 0;
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		struct stat st;
		if (len > 4 && strcmp(e->d_name + len - 4, ".log") == 0 &&
		    fstatat(dirfd(d), e->d_name, &st, 0) == 0)
			n += (uint64_t)st.st_size;
	}
	if (d)
		closedir(d);
	return n;
}

/*
 * Can a writable open work on this disk? It writes a new MANIFEST, an
 * OPTIONS file, a WAL and the LOG's header, and first writes what the
 * old WAL holds into tables. Without that room it fails, or worse: the
 * LOG's writer aborts the process on its second line after a failed
 * write (see store_make_options). So a database on a disk too full for
 * it is opened read-only, and the log says why.
 */
static bool store_too_full(struct store *s)
{
	uint64_t size, avail, wal = store_wal_bytes(s->path);
	if (store_fs_space(s->path, &size, &avail) != 0 || avail >= wal + STORE_OPEN_ROOM)
		return false;
	LOG_WARN("%s: mounted read-only: the disk is full (%llu KiB free; opening for writing "
		 "needs about %llu KiB); free space and mount again to write",
		 s->path, (unsigned long long)(avail >> 10),
		 (unsigned long long)((wal + STORE_OPEN_ROOM) >> 10));
	return true;
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
	if (!(s->heads = calloc(1, sizeof(*s->heads)))) {
		free(s);
		return -ENOMEM;
	}
	pthread_mutex_init(&s->heads->lock, NULL);
	reaper_start(s->heads);
	s->read_only = opt && opt->read_only;
	rc = store_pick_path(dir, s->read_only, &s->path, &fresh);
	if (rc)
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
	s->handles = calloc(n, sizeof(*s->handles));
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

static uint64_t mono_ms(void);
static int store_sync_wal(struct store *s, const char *what);
static uint64_t store_prop(struct store *s, rocksdb_column_family_handle_t *h, const char *name);

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
	if (s->heads) { /* a kept value may pin the database's memory */
		reaper_stop(s->heads);
		pthread_mutex_lock(&s->heads->lock);
		rocksdb_pinnableslice_t *v = kept_out_locked(s->heads);
		pthread_mutex_unlock(&s->heads->lock);
		rocksdb_pinnableslice_destroy(v);
	}
	if (s->db) {
		/* Filters stop consulting the metadata first; then wait for
		 * running compactions, which may still be inside a filter and
		 * use a handle, before the handles go. */
		atomic_store(&s->gc_on, false);
		if (!s->read_only) {
			uint64_t t0 = mono_ms();
			uint64_t mem = store_memtable_bytes(s);
			/* With the disk still full, a flush cannot work either: the
			 * WAL keeps what the memtables hold for the next open. */
			bool ok = store_sync_wal(s, "sync WAL on close") == 0;
			if (ok)
				store_flush_all(s);
			rocksdb_cancel_all_background_work(s->db, 1);
			if (ok)
				LOG_INFO("%s: closed in %llu ms (%llu MiB of memtables flushed)",
					 s->path, (unsigned long long)(mono_ms() - t0),
					 (unsigned long long)(mem >> 20));
			else
				LOG_WARN("%s: closed without flushing (the disk is full): the next "
					 "open replays %llu MiB of WAL",
					 s->path, (unsigned long long)(mem >> 20));
		}
		/* Handles go before the database they belong to. */
		for (size_t i = 0; i < s->nhandles; i++)
			rocksdb_column_family_handle_destroy(s->handles[i]);
		rocksdb_close(s->db);
	}
	free(s->handles);
	if (s->heads) {
		for (size_t i = 0; i < HEAD_SLOTS; i++)
			free(s->heads->slot[i].key);
		pthread_mutex_destroy(&s->heads->lock);
		pthread_cond_destroy(&s->heads->kept_cond);
		free(s->heads);
	}
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
	free(s);
}

bool store_is_read_only(const struct store *s)
{
	return s->read_only;
}

const char *store_path(const struct store *s)
{
	return s->path;
}

static rocksdb_column_family_handle_t *store_cf(struct store *s, enum store_cf cf)
{
	return (unsigned)cf < STORE_CF_COUNT ? s->cf[cf] : NULL;
}

int store_get(struct store *s, enum store_cf cf, const void *k, size_t kn, struct buf *out)
{
	rocksdb_column_family_handle_t *h = store_cf(s, cf);
	char *err = NULL;
	int rc = 0;

	if (!h)
		return -ENOENT; /* a read-only store without this column family */
	rocksdb_pinnableslice_t *v = rocksdb_get_pinned_cf(s->db, s->ropts, h, k, kn, &err);
	if (err)
		return store_err("get", err);
	if (!v)
		return -ENOENT;
	size_t vn;
	const char *p = rocksdb_pinnableslice_value(v, &vn);
	rc = buf_set(out, p, vn);
	rocksdb_pinnableslice_destroy(v);
	return rc;
}

static uint64_t head_hash(enum store_cf cf, const void *k, size_t kn)
{
	return hash_bytes(k, kn) ^ ((uint64_t)cf * 0x9e3779b97f4a7c15ull);
}

/* A remembered head of (cf, k): 0 with out/full filled, or -ENOENT. */
static int head_find(struct head_cache *hc, enum store_cf cf, const void *k, size_t kn, size_t max,
		     struct buf *out, size_t *full, uint64_t *epoch)
{
	struct head_slot *sl = &hc->slot[head_hash(cf, k, kn) % HEAD_SLOTS];
	int rc = -ENOENT;
	pthread_mutex_lock(&hc->lock);
	*epoch = sl->epoch;
	if (sl->valid && sl->cf == cf && sl->kn == kn && memcmp(sl->key, k, kn) == 0 &&
	    (max <= sl->n || sl->n == sl->full)) {
		rc = out ? buf_set(out, sl->head, max < sl->n ? max : sl->n) : 0;
		if (full)
			*full = sl->full;
	}
	pthread_mutex_unlock(&hc->lock);
	return rc;
}

/* Remember the head of a large value read when the slot had `epoch`. */
static void head_fill(struct head_cache *hc, enum store_cf cf, const void *k, size_t kn,
		      const char *v, size_t vn, uint64_t epoch)
{
	struct head_slot *sl = &hc->slot[head_hash(cf, k, kn) % HEAD_SLOTS];
	pthread_mutex_lock(&hc->lock);
	if (sl->epoch == epoch) {
		char *key = sl->kn >= kn && sl->key ? sl->key : realloc(sl->key, kn ? kn : 1);
		if (key) {
			sl->key = key;
			memcpy(sl->key, k, kn);
			sl->kn = kn;
			sl->cf = cf;
			sl->n = vn < HEAD_BYTES ? vn : HEAD_BYTES;
			memcpy(sl->head, v, sl->n);
			sl->full = vn;
			sl->valid = true;
		}
	}
	pthread_mutex_unlock(&hc->lock);
}

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Take the kept value out (to free it outside the lock). Lock held. */
static rocksdb_pinnableslice_t *kept_out_locked(struct head_cache *hc)
{
	rocksdb_pinnableslice_t *v = hc->kept;
	hc->kept = NULL;
	free(hc->kept_key);
	hc->kept_key = NULL;
	return v;
}

/* Keep v, read when (cf, k)'s slot had `epoch`; frees what it replaces,
 * or v itself if a write came between. */
static void kept_put(struct head_cache *hc, enum store_cf cf, const void *k, size_t kn,
		     rocksdb_pinnableslice_t *v, uint64_t epoch)
{
	size_t slot = head_hash(cf, k, kn) % HEAD_SLOTS;
	char *key = malloc(kn ? kn : 1);
	rocksdb_pinnableslice_t *drop = v;
	pthread_mutex_lock(&hc->lock);
	if (key && hc->reaper_on && hc->slot[slot].epoch == epoch) {
		drop = kept_out_locked(hc);
		memcpy(key, k, kn);
		hc->kept = v;
		hc->kept_cf = cf;
		hc->kept_key = key;
		hc->kept_kn = kn;
		hc->kept_slot = slot;
		hc->kept_epoch = epoch;
		hc->kept_until = mono_ms() + KEPT_MS;
		key = NULL;
		pthread_cond_signal(&hc->kept_cond);
	}
	pthread_mutex_unlock(&hc->lock);
	free(key);
	rocksdb_pinnableslice_destroy(drop);
}

/* The kept value if it is (cf, k)'s and still valid, taken out; an
 * invalid one is dropped. NULL: read it. */
static rocksdb_pinnableslice_t *kept_take(struct head_cache *hc, enum store_cf cf, const void *k,
					  size_t kn)
{
	rocksdb_pinnableslice_t *v = NULL, *drop = NULL;
	pthread_mutex_lock(&hc->lock);
	if (hc->kept) {
		bool valid =
		    hc->slot[hc->kept_slot].epoch == hc->kept_epoch && mono_ms() < hc->kept_until;
		if (valid && hc->kept_cf == cf && hc->kept_kn == kn &&
		    memcmp(hc->kept_key, k, kn) == 0)
			v = kept_out_locked(hc);
		else if (!valid)
			drop = kept_out_locked(hc);
	}
	pthread_mutex_unlock(&hc->lock);
	rocksdb_pinnableslice_destroy(drop);
	return v;
}

/* Free a kept value when its time is up, so an idle daemon does not hold
 * 256 MiB for the stat it answered last. */
static void *reaper_main(void *arg)
{
	struct head_cache *hc = arg;
	pthread_mutex_lock(&hc->lock);
	while (!hc->stop) {
		uint64_t now = mono_ms();
		if (hc->kept && now >= hc->kept_until) {
			rocksdb_pinnableslice_t *v = kept_out_locked(hc);
			pthread_mutex_unlock(&hc->lock);
			rocksdb_pinnableslice_destroy(v);
			pthread_mutex_lock(&hc->lock);
		} else if (hc->kept) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			uint64_t ns = (uint64_t)ts.tv_nsec + (hc->kept_until - now) * 1000000u;
			ts.tv_sec += (time_t)(ns / 1000000000u);
			ts.tv_nsec = (long)(ns % 1000000000u);
			pthread_cond_timedwait(&hc->kept_cond, &hc->lock, &ts);
		} else {
			pthread_cond_wait(&hc->kept_cond, &hc->lock);
		}
	}
	pthread_mutex_unlock(&hc->lock);
	return NULL;
}

static void reaper_start(struct head_cache *hc)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hc->kept_cond, &ca);
	pthread_condattr_destroy(&ca);
	hc->reaper_on = pthread_create(&hc->reaper, NULL, reaper_main, hc) == 0;
}

static void reaper_stop(struct head_cache *hc)
{
	if (hc->reaper_on) {
		pthread_mutex_lock(&hc->lock);
		hc->stop = true;
		pthread_cond_signal(&hc->kept_cond);
		pthread_mutex_unlock(&hc->lock);
		pthread_join(hc->reaper, NULL);
		hc->reaper_on = false;
	}
}

/* Is the batch's touch `at` the last one of its key? */
static bool last_touch(const struct store_batch *b, size_t at)
{
	for (size_t j = at + 1; j < b->ntouched; j++)
		if (b->touched[j] == b->touched[at])
			return false;
	return true;
}

/* After a write: forget what the batch touched; if it was written,
 * remember the heads of the large values it put. */
static void head_invalidate(struct head_cache *hc, struct store_batch *b, bool written)
{
	pthread_mutex_lock(&hc->lock);
	if (b->touched_all) {
		for (size_t i = 0; i < HEAD_SLOTS; i++) {
			hc->slot[i].epoch++;
			hc->slot[i].valid = false;
		}
	} else {
		for (size_t i = 0; i < b->ntouched; i++) {
			struct head_slot *sl = &hc->slot[b->touched[i] % HEAD_SLOTS];
			sl->epoch++;
			sl->valid = false;
		}
	}
	for (size_t i = 0; written && !b->touched_all && i < b->nfills; i++) {
		struct head_fill *f = &b->fills[i];
		if (!last_touch(b, f->at))
			continue;
		struct head_slot *sl = &hc->slot[b->touched[f->at] % HEAD_SLOTS];
		free(sl->key); /* the slot takes the fill's key */
		uint64_t epoch = sl->epoch;
		*sl = f->h;
		sl->epoch = epoch;
		sl->valid = true;
		f->h.key = NULL;
	}
	pthread_mutex_unlock(&hc->lock);
}

static void batch_drop_fills(struct store_batch *b)
{
	for (size_t i = 0; i < b->nfills; i++)
		free(b->fills[i].h.key);
	b->nfills = 0;
}

/* Note the head of a large value the batch puts (at its next touch).
 * Without memory it is simply not remembered. */
static void batch_note_head(struct store_batch *b, enum store_cf cf, const char *k, size_t kn,
			    const char *const *parts, const size_t *lens, int nparts, size_t full)
{
	if (b->nfills == b->capfills) {
		size_t cap = b->capfills ? 2 * b->capfills : 2;
		struct head_fill *f = realloc(b->fills, cap * sizeof(*f));
		if (!f)
			return;
		b->fills = f;
		b->capfills = cap;
	}
	struct head_fill *f = &b->fills[b->nfills];
	memset(f, 0, sizeof(*f));
	f->h.key = malloc(kn ? kn : 1);
	if (!f->h.key)
		return;
	memcpy(f->h.key, k, kn);
	f->h.kn = kn;
	f->h.cf = cf;
	f->h.full = full;
	for (int i = 0; i < nparts && f->h.n < HEAD_BYTES; i++) {
		size_t n = lens[i] < HEAD_BYTES - f->h.n ? lens[i] : HEAD_BYTES - f->h.n;
		memcpy(f->h.head + f->h.n, parts[i], n);
		f->h.n += n;
	}
	f->at = b->ntouched;
	b->nfills++;
}

/* Note a key the batch writes; without memory, forget every head. */
static void batch_touch(struct store_batch *b, enum store_cf cf, const void *k, size_t kn)
{
	if (b->touched_all)
		return;
	if (b->ntouched == b->captouched) {
		size_t cap = b->captouched ? 2 * b->captouched : 8;
		uint64_t *t = realloc(b->touched, cap * sizeof(*t));
		if (!t) {
			b->touched_all = true;
			return;
		}
		b->touched = t;
		b->captouched = cap;
	}
	b->touched[b->ntouched++] = head_hash(cf, k, kn);
}

int store_get_head(struct store *s, enum store_cf cf, const void *k, size_t kn, size_t max,
		   struct buf *out, size_t *full)
{
	rocksdb_column_family_handle_t *h = store_cf(s, cf);
	char *err = NULL;
	uint64_t epoch;

	if (!h)
		return -ENOENT;
	if (head_find(s->heads, cf, k, kn, max, out, full, &epoch) == 0)
		return 0;
	rocksdb_pinnableslice_t *v = rocksdb_get_pinned_cf(s->db, s->ropts, h, k, kn, &err);
	if (err)
		return store_err("get", err);
	if (!v)
		return -ENOENT;
	size_t vn;
	const char *p = rocksdb_pinnableslice_value(v, &vn);
	int rc = out ? buf_set(out, p, vn < max ? vn : max) : 0;
	if (full)
		*full = vn;
	if (vn >= STORE_BLOB_MIN) {
		head_fill(s->heads, cf, k, kn, p, vn, epoch);
		kept_put(s->heads, cf, k, kn, v, epoch); /* for the read to come */
		return rc;
	}
	rocksdb_pinnableslice_destroy(v);
	return rc;
}

/* A pinned value: the struct is only a name for RocksDB's pinnable slice. */
struct store_value;

int store_value_get(struct store *s, enum store_cf cf, const void *k, size_t kn,
		    struct store_value **out)
{
	rocksdb_column_family_handle_t *h = store_cf(s, cf);
	char *err = NULL;

	*out = NULL;
	if (!h)
		return -ENOENT;
	rocksdb_pinnableslice_t *v = kept_take(s->heads, cf, k, kn);
	if (v) {
		*out = (struct store_value *)v;
		return 0;
	}
	v = rocksdb_get_pinned_cf(s->db, s->ropts, h, k, kn, &err);
	if (err)
		return store_err("get", err);
	if (!v)
		return -ENOENT;
	*out = (struct store_value *)v;
	return 0;
}

const char *store_value_data(const struct store_value *v, size_t *n)
{
	return rocksdb_pinnableslice_value((const rocksdb_pinnableslice_t *)v, n);
}

size_t store_kept_bytes(struct store *s)
{
	size_t n = 0;
	pthread_mutex_lock(&s->heads->lock);
	if (s->heads->kept)
		rocksdb_pinnableslice_value(s->heads->kept, &n);
	pthread_mutex_unlock(&s->heads->lock);
	return n;
}

void store_value_free(struct store_value *v)
{
	if (v)
		rocksdb_pinnableslice_destroy((rocksdb_pinnableslice_t *)v);
}

/* ---- Batches ------------------------------------------------------- */

struct store_batch *store_batch_new(struct store *s)
{
	struct store_batch *b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	b->s = s;
	b->wb = rocksdb_writebatch_create();
	if (!b->wb) {
		free(b);
		return NULL;
	}
	return b;
}

void store_batch_free(struct store_batch *b)
{
	if (!b)
		return;
	rocksdb_writebatch_destroy(b->wb);
	free(b->touched);
	batch_drop_fills(b);
	free(b->fills);
	free(b);
}

/* The handle for cf, or NULL with the batch's sticky error set. */
static rocksdb_column_family_handle_t *batch_cf(struct store_batch *b, enum store_cf cf)
{
	rocksdb_column_family_handle_t *h = store_cf(b->s, cf);
	if (!h && !b->err) {
		LOG_ERR("%s: write to column family \"%s\", which is not open", b->s->path,
			store_cf_name(cf));
		b->err = b->s->read_only ? -EROFS : -EIO;
	}
	return h;
}

void store_batch_put(struct store_batch *b, enum store_cf cf, const void *k, size_t kn,
		     const void *v, size_t vn)
{
	store_batch_putv(b, cf, k, kn, &v, &vn, 1);
}

void store_batch_putv(struct store_batch *b, enum store_cf cf, const void *k, size_t kn,
		      const void *const *parts, const size_t *lens, int nparts)
{
	rocksdb_column_family_handle_t *h = batch_cf(b, cf);
	const char *key = k;
	size_t vn = 0;
	for (int i = 0; i < nparts; i++)
		vn += lens[i];
	if (h)
		rocksdb_writebatch_putv_cf(b->wb, h, 1, &key, &kn, nparts,
					   (const char *const *)parts, lens);
	if (h && vn >= STORE_BLOB_MIN)
		batch_note_head(b, cf, key, kn, (const char *const *)parts, lens, nparts, vn);
	batch_touch(b, cf, k, kn);
}

void store_batch_delete(struct store_batch *b, enum store_cf cf, const void *k, size_t kn)
{
	rocksdb_column_family_handle_t *h = batch_cf(b, cf);
	if (h)
		rocksdb_writebatch_delete_cf(b->wb, h, k, kn);
	batch_touch(b, cf, k, kn);
}

void store_batch_delete_range(struct store_batch *b, enum store_cf cf, const void *begin, size_t bn,
			      const void *end, size_t en)
{
	rocksdb_column_family_handle_t *h = batch_cf(b, cf);
	if (h)
		rocksdb_writebatch_delete_range_cf(b->wb, h, begin, bn, end, en);
	b->touched_all = true;
}

int store_batch_count(struct store_batch *b)
{
	return rocksdb_writebatch_count(b->wb);
}

void store_batch_clear(struct store_batch *b)
{
	rocksdb_writebatch_clear(b->wb);
	b->err = 0;
	b->ntouched = 0;
	b->touched_all = false;
	batch_drop_fills(b);
}

int store_write(struct store *s, struct store_batch *b, bool sync)
{
	char *err = NULL;

	if (s->read_only)
		return -EROFS;
	if (b->err)
		return b->err;
	if (rocksdb_writebatch_count(b->wb) == 0)
		return 0;
	rocksdb_write(s->db, sync ? s->wopts_sync : s->wopts, b->wb, &err);
	head_invalidate(s->heads, b, !err);
	if (err)
		return store_write_err(s, "write", err);
	store_write_ok(s);
	return 0;
}

/*
 * Sync the WAL through the write path: an empty batch written with
 * sync. Not rocksdb_flush_wal(): its SyncWAL() does not look at the
 * background error, and syncs the WAL file whose write failed when the
 * disk filled up; that file's writer then aborts the process (the
 * assertion `sync_without_flush_called_` in WritableFileWriter, seen at
 * an unmount on a full disk). A write checks the background error
 * first and fails with it; once RocksDB has recovered, the failed WAL
 * file is gone.
 */
static int store_sync_wal(struct store *s, const char *what)
{
	char *err = NULL;
	rocksdb_writebatch_t *wb = rocksdb_writebatch_create();
	if (!wb)
		return -ENOMEM;
	rocksdb_write(s->db, s->wopts_sync, wb, &err);
	rocksdb_writebatch_destroy(wb);
	if (err)
		return store_write_err(s, what, err);
	store_write_ok(s);
	return 0;
}

int store_sync(struct store *s)
{
	if (s->read_only)
		return 0;
	return store_sync_wal(s, "sync WAL");
}

/* ---- Iterators ----------------------------------------------------- */

static char *dup_bytes(const void *p, size_t n)
{
	char *d = malloc(n ? n : 1);
	if (d && n)
		memcpy(d, p, n);
	return d;
}

struct store_iter *store_iter_new(struct store *s, enum store_cf cf, const void *lower, size_t ln,
				  const void *upper, size_t un)
{
	struct store_iter *it = calloc(1, sizeof(*it));
	rocksdb_column_family_handle_t *h = store_cf(s, cf);

	if (!it)
		return NULL;
	if (!h)
		return it; /* an absent column family iterates nothing */
	it->ropts = rocksdb_readoptions_create();
	if (!it->ropts)
		goto fail;
	/* A scan does not fill the block cache (Kvrocks's scan options too):
	 * `ls` of a 1,000,000-field hash would fill all 64 MiB of it, push
	 * out what point reads keep there, and grow the daemon by as much. */
	rocksdb_readoptions_set_fill_cache(it->ropts, 0);
	if (lower && ln) {
		if (!(it->lower = dup_bytes(lower, ln)))
			goto fail;
		rocksdb_readoptions_set_iterate_lower_bound(it->ropts, it->lower, ln);
	}
	if (upper && un) {
		if (!(it->upper = dup_bytes(upper, un)))
			goto fail;
		rocksdb_readoptions_set_iterate_upper_bound(it->ropts, it->upper, un);
	}
	it->it = rocksdb_create_iterator_cf(s->db, it->ropts, h);
	if (!it->it)
		goto fail;
	return it;
fail:
	store_iter_free(it);
	return NULL;
}

void store_iter_free(struct store_iter *it)
{
	if (!it)
		return;
	/* The iterator first: it points at the read options and bounds. */
	if (it->it)
		rocksdb_iter_destroy(it->it);
	if (it->ropts)
		rocksdb_readoptions_destroy(it->ropts);
	free(it->lower);
	free(it->upper);
	free(it);
}

void store_iter_seek(struct store_iter *it, const void *k, size_t kn)
{
	if (it->it)
		rocksdb_iter_seek(it->it, k, kn);
}

void store_iter_seek_for_prev(struct store_iter *it, const void *k, size_t kn)
{
	if (it->it)
		rocksdb_iter_seek_for_prev(it->it, k, kn);
}

void store_iter_seek_first(struct store_iter *it)
{
	if (it->it)
		rocksdb_iter_seek_to_first(it->it);
}

void store_iter_seek_last(struct store_iter *it)
{
	if (it->it)
		rocksdb_iter_seek_to_last(it->it);
}

bool store_iter_valid(struct store_iter *it)
{
	return it->it && rocksdb_iter_valid(it->it);
}

void store_iter_next(struct store_iter *it)
{
	if (it->it)
		rocksdb_iter_next(it->it);
}

void store_iter_prev(struct store_iter *it)
{
	if (it->it)
		rocksdb_iter_prev(it->it);
}

bool store_iter_step(struct store_iter *it, bool reverse, bool *started)
{
	if (*started && store_iter_valid(it)) {
		if (reverse)
			store_iter_prev(it);
		else
			store_iter_next(it);
	}
	*started = true;
	return store_iter_valid(it);
}

const void *store_iter_key(struct store_iter *it, size_t *n)
{
	return rocksdb_iter_key(it->it, n);
}

const void *store_iter_value(struct store_iter *it, size_t *n)
{
	return rocksdb_iter_value(it->it, n);
}

int store_iter_status(struct store_iter *it)
{
	char *err = NULL;
	if (!it->it)
		return 0;
	rocksdb_iter_get_error(it->it, &err);
	return err ? store_err("iterator", err) : 0;
}

/* ---- Statistics and compaction ------------------------------------- */

/* A numeric property of one column family; 0 if RocksDB has none. */
static uint64_t store_prop(struct store *s, rocksdb_column_family_handle_t *h, const char *name)
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
	for (size_t i = 0; i < s->nhandles; i++) {
		b += store_prop(s, s->handles[i], "rocksdb.total-sst-files-size");
		b += store_prop(s, s->handles[i], "rocksdb.cur-size-all-mem-tables");
	}
	*bytes = b;
	*keys = s->cf[STORE_CF_METADATA]
		    ? store_prop(s, s->cf[STORE_CF_METADATA], "rocksdb.estimate-num-keys")
		    : 0;
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
