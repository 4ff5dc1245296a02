/*
 * store: the only module that talks to RocksDB. Opens a plain RocksDB
 * directory or a Kvrocks data directory (DIR/db) with every column family
 * it has, and offers point reads, atomic write batches, bounded iterators
 * and WAL sync. RocksDB errors are translated here, once: the message is
 * logged and -ENOSPC (the disk is full) or -EIO returned.
 * Layer: store (may include util, rocksdb/c.h).
 */
#ifndef KVFS_STORE_H
#define KVFS_STORE_H

#include "engine/util.h"

/* Kvrocks's column families, in Kvrocks's open order. The first
 * STORE_CF_BASE are made on a new database and added to one that lacks
 * them; "index" (Kvrocks's time-series label index, 2025+) is opened when
 * the database has it and made only by store_cf_create (docs/encoding.md
 * says when). A database may have still more: those are opened and left
 * alone. */
enum store_cf {
	STORE_CF_DEFAULT = 0, /* "default": sub-keys */
	STORE_CF_METADATA,    /* "metadata": one record per key */
	STORE_CF_ZSET_SCORE,  /* "zset_score": score index */
	STORE_CF_PUBSUB,      /* "pubsub" */
	STORE_CF_PROPAGATE,   /* "propagate" */
	STORE_CF_STREAM,      /* "stream": stream sub-keys */
	STORE_CF_SEARCH,      /* "search" */
	STORE_CF_INDEX,	      /* "index": the time-series label index */
	STORE_CF_COUNT
};
#define STORE_CF_BASE STORE_CF_INDEX /* those made at every writable open */

/* Name of a column family ("default", "metadata", ...). Static storage. */
const char *store_cf_name(enum store_cf cf);

struct store;
struct store_batch;
struct store_iter;

/*
 * Compaction-filter hook. The store knows nothing about what a record
 * means; the layer above decides, per record, whether a compaction keeps
 * or drops it (Kvrocks's MetadataFilter / SubKeyFilter rules live in the
 * keyspace). `drop` runs on RocksDB's background threads, for several
 * compactions at once: it must be thread-safe, must not write and must
 * not wait for a lock a foreground writer holds while it waits for
 * RocksDB. It may read the metadata column family through `rd` (see
 * store_gc_meta_get). It is never called before store_open() returns or
 * after store_close() has begun.
 */
struct store_gc_read;
struct store_gc {
	/* true = drop the record. Records of column families not in `cfs`
	 * are never shown. */
	bool (*drop)(void *ctx, struct store_gc_read *rd, enum store_cf cf, const void *k,
		     size_t kn, const void *v, size_t vn);
	void *ctx;
	unsigned cfs; /* bit (1u << cf) for each column family to filter */
};

/*
 * From inside `drop`: read the metadata-CF record `k`. Each compaction
 * caches the last key it read (a run of sub-keys of one key costs one
 * read). 0 with *v, *vn borrowed until the next call on rd; -ENOENT if
 * absent; -EIO (logged) or -ESHUTDOWN (the store is closing): the
 * caller should keep the record.
 */
int store_gc_meta_get(struct store_gc_read *rd, const void *k, size_t kn, const char **v,
		      size_t *vn);

struct store_options {
	bool read_only; /* open with RocksDB's read-only mode */
	/* Open as a RocksDB secondary instance that follows the primary
	 * holding the database (a mount, a running Kvrocks): read-only, and
	 * store_catch_up() brings it up to date. */
	bool follow;
	/* The secondary's own directory (its LOG); NULL: under the user's
	 * cache, $XDG_CACHE_HOME or ~/.cache, kvfs/secondary/HASH (HASH of
	 * the database's path). Made if missing; refused inside the
	 * database's directory. */
	const char *follow_dir;
	size_t block_cache_bytes; /* 0 = default (64 MiB) */
	/* Compaction filters to install (copied; NULL = none). Ignored on a
	 * read-only store, which never compacts. */
	const struct store_gc *gc;
};

/*
 * Open `dir`. If dir/db/CURRENT exists, dir is a Kvrocks data directory
 * and dir/db is opened; else if dir/CURRENT exists, dir is opened as a
 * plain RocksDB directory; else (not read-only) a new Kvrocks-layout
 * database is created in dir/db with exactly Kvrocks's column families.
 * 0 and *out set, or -ENOENT (read-only and nothing there), -EBUSY
 * (another process holds the database's LOCK: a mount, Kvrocks), -EIO.
 * A database on a disk too full to open it for writing is opened
 * read-only instead (logged; store_is_read_only() says so).
 * With opt->follow: as read-only (nothing is created), opened as a
 * secondary instance beside whoever holds the lock; -EINVAL (logged)
 * for a follow_dir inside the database's directory, -errno if the
 * secondary directory cannot be made.
 * Free with store_close().
 */
int store_open(const char *dir, const struct store_options *opt, struct store **out);
/* Sync the WAL, flush every memtable (so the next open replays no WAL),
 * wait for background work, close; logs one line with how long that
 * took. NULL is fine. */
void store_close(struct store *s);
bool store_is_read_only(const struct store *s);
/* Is column family cf open (the database has it)? */
bool store_has_cf(struct store *s, enum store_cf cf);
/*
 * Make column family cf (one of those after STORE_CF_BASE) in the open
 * database, with the compaction filter the store was opened with, unless
 * it exists: one caller makes it, the others wait and find it. 0 (made or
 * there), -EROFS (a read-only store or a follower), -ENOSPC, -EIO
 * (logged), -EINVAL (a base family: every writable open makes those).
 */
int store_cf_create(struct store *s, enum store_cf cf);
/* Opened with opt->follow (a secondary instance)? */
bool store_is_follower(const struct store *s);
/*
 * A follower: read what the primary wrote since the last call (its
 * MANIFEST and WAL: rocksdb_try_catch_up_with_primary). *changed says
 * whether the latest sequence number moved, i.e. whether anything
 * written can read differently (a flush or a compaction of the primary
 * changes no data and says false); the head cache is then emptied. Safe
 * beside reads on other threads; callers serialise catch-ups. 0, -EINVAL
 * (not a follower), -EIO (logged).
 */
int store_catch_up(struct store *s, bool *changed);
/* The RocksDB directory actually opened (dir or dir/db). */
const char *store_path(const struct store *s);

/*
 * A snapshot: reads made at it (the *_at calls) see the database as it
 * was when it was taken, whatever is written later. It pins what it sees
 * in RocksDB (old versions are not compacted away) until it is freed, so
 * holders keep it short (one listing, one pass of a read). NULL on ENOMEM.
 * Free with store_snap_free() before store_close(); the close releases
 * and frees those left (an open directory the kernel never released),
 * and their pointers are then dangling.
 */
struct store_snap;
struct store_snap *store_snap_new(struct store *s);
void store_snap_free(struct store *s, struct store_snap *snap); /* NULL is fine */

/* Point read. 0 and out = value, -ENOENT if absent, -EIO. The _at forms
 * read at snap (NULL: the latest), as do the other _at calls below. */
int store_get(struct store *s, enum store_cf cf, const void *k, size_t kn, struct buf *out);
int store_get_at(struct store *s, const struct store_snap *snap, enum store_cf cf, const void *k,
		 size_t kn, struct buf *out);

/* Point read of at most the first `max` bytes of a value (out may be
 * NULL), with its full length in *full: a header or a length without
 * copying a large value. 0, -ENOENT, -EIO. */
int store_get_head(struct store *s, enum store_cf cf, const void *k, size_t kn, size_t max,
		   struct buf *out, size_t *full);
int store_get_head_at(struct store *s, const struct store_snap *snap, enum store_cf cf,
		      const void *k, size_t kn, size_t max, struct buf *out, size_t *full);

/*
 * A value read without copying: RocksDB's pinned memory, borrowed until
 * store_value_free(). 0 and *out, -ENOENT, -EIO, -ENOMEM.
 */
struct store_value;
int store_value_get(struct store *s, enum store_cf cf, const void *k, size_t kn,
		    struct store_value **out);
int store_value_get_at(struct store *s, const struct store_snap *snap, enum store_cf cf,
		       const void *k, size_t kn, struct store_value **out);
const char *store_value_data(const struct store_value *v, size_t *n);
void store_value_free(struct store_value *v);

/* The bytes of the large value a head read keeps for the read that
 * usually follows (at most one value, for about a second): 0 if none. */
size_t store_kept_bytes(struct store *s);

/* Write batches: a batch is applied atomically by store_write() to the
 * store it was made for. The data is copied into the batch. */
struct store_batch *store_batch_new(struct store *s); /* NULL on ENOMEM; store_batch_free */
void store_batch_free(struct store_batch *b);
void store_batch_put(struct store_batch *b, enum store_cf cf, const void *k, size_t kn,
		     const void *v, size_t vn);
/* Put a value given in parts (a header and a payload), without joining
 * them first: large values are copied once, into the batch. */
void store_batch_putv(struct store_batch *b, enum store_cf cf, const void *k, size_t kn,
		      const void *const *parts, const size_t *lens, int nparts);
void store_batch_delete(struct store_batch *b, enum store_cf cf, const void *k, size_t kn);
/* Delete every key in [begin, end). */
void store_batch_delete_range(struct store_batch *b, enum store_cf cf, const void *begin, size_t bn,
			      const void *end, size_t en);
int store_batch_count(struct store_batch *b);
void store_batch_clear(struct store_batch *b);

/* Apply a batch with the WAL on; `sync` also syncs the WAL.
 * 0, -EROFS on a read-only store, -ENOSPC (the disk is full: so is
 * every write until RocksDB has recovered), -EIO. */
int store_write(struct store *s, struct store_batch *b, bool sync);
/* Sync the WAL to disk (what fsync means). 0, -ENOSPC or -EIO. */
int store_sync(struct store *s);

/*
 * Iterators over one column family, limited to [lower, upper) (either
 * bound may be NULL/0 = unbounded; both are copied). A new iterator is
 * unpositioned: call a seek first. Key and value slices are borrowed and
 * valid until the next move or free. NULL on ENOMEM.
 */
struct store_iter *store_iter_new(struct store *s, enum store_cf cf, const void *lower, size_t ln,
				  const void *upper, size_t un);
struct store_iter *store_iter_new_at(struct store *s, const struct store_snap *snap,
				     enum store_cf cf, const void *lower, size_t ln,
				     const void *upper, size_t un);
void store_iter_free(struct store_iter *it);
void store_iter_seek(struct store_iter *it, const void *k, size_t kn);		/* first >= k */
void store_iter_seek_for_prev(struct store_iter *it, const void *k, size_t kn); /* last <= k */
void store_iter_seek_first(struct store_iter *it);
void store_iter_seek_last(struct store_iter *it);
bool store_iter_valid(struct store_iter *it);
void store_iter_next(struct store_iter *it);
void store_iter_prev(struct store_iter *it);
/* One step of a walk that was seeked to its first record: the first call
 * (*started false) stays there, later ones move on, backwards if reverse.
 * true while the iterator is on a record (else see store_iter_status). */
bool store_iter_step(struct store_iter *it, bool reverse, bool *started);
const void *store_iter_key(struct store_iter *it, size_t *n);
const void *store_iter_value(struct store_iter *it, size_t *n);
/* 0 if the iterator stopped cleanly, -EIO (logged) on a RocksDB error. */
int store_iter_status(struct store_iter *it);

/*
 * A RocksDB checkpoint of the open database in `dest`: a new directory
 * (its parent must exist) holding a plain RocksDB database of the state
 * at the call, which opens read-only or read-write on its own. Table and
 * blob files are hard links where dest's file system allows (copies
 * otherwise); MANIFEST, OPTIONS and the WAL's tail are copies. A writable
 * store flushes its memtables first (the checkpoint then replays little
 * WAL); a read-only store copies the WAL instead (RocksDB cannot flush
 * it, and would wait for ever if asked to). RocksDB stages the files in
 * dest.tmp and renames that to dest. Blocks; safe beside reads and
 * writes, which go on meanwhile.
 * 0, or -EINVAL (dest not absolute), -EEXIST (dest, or the staging
 * dest.tmp, exists: RocksDB would empty a dest.tmp), -ENOENT (no parent
 * directory), -EACCES, -ENOSPC, -EIO; each logged in one line.
 */
int store_checkpoint(struct store *s, const char *dest);

/* Sizes for statfs: live data bytes (SST + memtables, all CFs) and the
 * estimated number of keys in the metadata CF. 0 or -EIO. */
int store_stats(struct store *s, uint64_t *bytes, uint64_t *keys);
/* Compact one column family over [begin, end) (NULL = everything),
 * down to the last level, so that the compaction filters see every
 * record (memtables are flushed first), with blob GC for every blob file
 * (the live values of a blob file that holds deleted ones are moved and
 * the file goes). Blocks until done.
 * 0, -EROFS on a read-only store, -ENOENT if the column family is not
 * open. */
int store_compact(struct store *s, enum store_cf cf, const void *begin, size_t bn, const void *end,
		  size_t en);

#endif
