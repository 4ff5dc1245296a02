/*
 * store_int: what the store's files share and nobody else sees: struct
 * store, a batch's insides, the error translation and the calls one file
 * makes into another (the files: store.c, store_dir.c, store_heads.c,
 * store_rw.c). Private to them (tests/check-layers.sh).
 * Layer: engine (store.h, util, rocksdb/c.h).
 */
#ifndef KVFS_STORE_INT_H
#define KVFS_STORE_INT_H

#include <pthread.h>
#include <stdatomic.h>

#include <rocksdb/c.h>

#include "engine/store.h"

#define STORE_BLOB_MIN (64u << 10) /* values from 64 KiB go to blob files */
/* The write buffer per column family (RocksDB's and Kvrocks's 64 MiB;
 * see store_write_buffer). */
#define STORE_WRITE_BUFFER (64u << 20)

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
	/* Read without a lock (atomic loads: store_cf): store_cf_create
	 * sets a missing one, under cf_lock, in a slot handles[] kept free
	 * for it (room for STORE_CF_COUNT - STORE_CF_BASE more). */
	rocksdb_column_family_handle_t *cf[STORE_CF_COUNT];
	pthread_mutex_t cf_lock;
	bool read_only;
	bool follower; /* a secondary instance (store_options.follow) */
	char *path;
	char *secondary; /* a follower's own directory */
	/*
	 * A follower: catch-ups hold follow_lock for writing, point reads
	 * and iterator creations for reading, so none sees a version between
	 * a catch-up and its look at the blob files. blob_cf: the column
	 * family holds blob files, which a secondary instance cannot read
	 * (store_follow_blobs); its reads fail with -EIO.
	 */
	pthread_rwlock_t follow_lock;
	bool blob_cf[STORE_CF_COUNT];
	/* Blob files were seen, and the MANIFEST under which they were seen
	 * gone ("": not yet): reads stay refused until CURRENT names
	 * another one (store_follow.c). */
	bool blob_wait;
	char blob_gone[64];
	/* Blob files were seen: the follower reads through read-only
	 * instances instead (they read blob files), each opened anew when
	 * the database's files changed since the last (ro_sig says how they
	 * were). */
	bool follow_ro;
	char ro_sig[160];
	/* A follower's current instance (owns db and handles), the column
	 * families it opens again at a reopen, and the oldest WAL file
	 * there was at its open or last look (store_follow.c). */
	struct store_inst *inst;
	char **names;
	size_t nnames;
	uint64_t wal_min;
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
	/* The snapshots not freed yet (store_snap_new), so that a close
	 * while a holder still has one (an open directory the kernel never
	 * released) releases them before the database goes. */
	pthread_mutex_t snaps_lock;
	struct store_snap *snaps;
	/* How many: while any lives, the compaction filter drops nothing
	 * (RocksDB runs filters on records a snapshot still sees; what it
	 * keeps goes at a later compaction). */
	_Atomic unsigned snaps_live;
};

/* The head of a large value (store_heads.c). */
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

/* ---- store.c ------------------------------------------------------- */

/* The one translation of a RocksDB error (logged, freed): -ENOSPC for a
 * full disk, -EIO for anything else. */
int store_err(const char *what, char *err);
/* The same for a write or WAL sync: a full disk is said once, until
 * store_write_ok sees a write work again. */
int store_write_err(struct store *s, const char *what, char *err);
void store_write_ok(struct store *s);
/* A numeric property of one column family; 0 if RocksDB has none. */
uint64_t store_prop(struct store *s, rocksdb_column_family_handle_t *h, const char *name);
/* The handle of an open column family, or NULL. */
rocksdb_column_family_handle_t *store_cf(struct store *s, enum store_cf cf);

/* ---- store_dir.c: the directory, its refusals, the disk's room ----- */

int store_pick_path(const char *dir, bool read_only, char **path, bool *fresh);
/* A follower's secondary directory (store_options.follow_dir), made if
 * missing, never inside dir or path: 0 and *out (malloc'd), or a
 * negative errno, logged. */
int store_secondary_dir(const char *dir, const char *path, const char *given, char **out);
int store_open_err(struct store *s, char *err);
size_t store_write_buffer(const char *path);
bool store_too_full(struct store *s);

/* ---- store_follow.c: a follower (a secondary instance) --------------- */

/* Open s->path as a secondary instance with these column families (the
 * names are copied): s->db, handles and cf set. 0 or store_open_err's
 * errno. */
int store_follow_open(struct store *s, char **names, size_t n);
/* Close a follower's instances (s->db with them); nothing for others. */
void store_follow_close(struct store *s);
/* A follower's read of cf begins (0, follow_lock held for reading, so
 * s->db and its handles stay) or is refused (-EIO: cf holds blob files,
 * said once); end it with store_follow_end. A cf of STORE_CF_COUNT
 * refuses nothing. Nothing on other stores. */
int store_follow_begin(struct store *s, enum store_cf cf);
void store_follow_end(struct store *s);
/* Between begin and end: a reference on the current instance, for what
 * outlives the read (an iterator, a pinned value); NULL for others.
 * The last unref of a retired instance closes it. */
struct store_inst *store_follow_ref(struct store *s);
void store_follow_unref(struct store_inst *in);

/* ---- store_heads.c: the head cache and the value kept --------------- */

/* A new head cache (its reaper started), or NULL without memory. */
struct head_cache *store_heads_new(void);
/* Stop the reaper and free the value kept (before the database closes:
 * it may pin the database's memory); free the cache (NULL: nothing). */
void store_heads_stop(struct head_cache *hc);
void store_heads_free(struct head_cache *hc);
/* Forget every head and the value kept (a follower caught up: any value
 * may have changed). */
void store_heads_clear(struct head_cache *hc);
uint64_t store_mono_ms(void);
int store_heads_find(struct head_cache *hc, enum store_cf cf, const void *k, size_t kn, size_t max,
		     struct buf *out, size_t *full, uint64_t *epoch);
void store_heads_fill(struct head_cache *hc, enum store_cf cf, const void *k, size_t kn,
		      const char *v, size_t vn, uint64_t epoch);
void store_heads_keep(struct head_cache *hc, enum store_cf cf, const void *k, size_t kn,
		      rocksdb_pinnableslice_t *v, uint64_t epoch);
rocksdb_pinnableslice_t *store_heads_take(struct head_cache *hc, enum store_cf cf, const void *k,
					  size_t kn);
/* What a batch notes for the head cache, and what the cache does with
 * it after the batch's write. */
void store_heads_touch(struct store_batch *b, enum store_cf cf, const void *k, size_t kn);
void store_heads_note(struct store_batch *b, enum store_cf cf, const char *k, size_t kn,
		      const char *const *parts, const size_t *lens, int nparts, size_t full);
void store_heads_drop_fills(struct store_batch *b);
void store_heads_invalidate(struct head_cache *hc, struct store_batch *b, bool written);

/* ---- store_rw.c ----------------------------------------------------- */

/* Sync the WAL through the write path (see there). */
int store_sync_wal(struct store *s, const char *what);

/* Release and free every snapshot still held (store_close: its holders
 * can free nothing after the close). */
void store_snaps_release(struct store *s);

#endif
