/*
 * store_rw: the store's reads (copied, pinned, or a value's head),
 * atomic write batches, WAL sync and bounded iterators.
 * Layer: engine (util, rocksdb/c.h), part of the store.
 */
#include "engine/store_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct store_iter {
	rocksdb_iterator_t *it;	 /* NULL: the column family is absent (empty) */
	int err;		 /* refused (a follower's column family with blob files) */
	struct store_inst *inst; /* a follower's instance it reads */
	/* Per iterator: RocksDB keeps pointers to the bound slices inside
	 * the read options, so both must live as long as the iterator. */
	rocksdb_readoptions_t *ropts;
	char *lower, *upper;
};

/* A snapshot: RocksDB's, and read options that read at it. */
struct store_snap {
	const rocksdb_snapshot_t *snap;
	rocksdb_readoptions_t *ropts;
	struct store_snap *prev, *next; /* store.snaps */
};

struct store_snap *store_snap_new(struct store *s)
{
	/* A follower's secondary instance reads no snapshot (RocksDB refuses
	 * one), and a reopen replaces its handle: its reads are of the last
	 * catch-up. NULL reads the latest, as without memory for one. */
	if (s->follower)
		return NULL;
	struct store_snap *sn = calloc(1, sizeof(*sn));
	if (!sn)
		return NULL;
	sn->ropts = rocksdb_readoptions_create();
	sn->snap = sn->ropts ? rocksdb_create_snapshot(s->db) : NULL;
	if (!sn->snap) {
		if (sn->ropts)
			rocksdb_readoptions_destroy(sn->ropts);
		free(sn);
		return NULL;
	}
	rocksdb_readoptions_set_snapshot(sn->ropts, sn->snap);
	atomic_fetch_add(&s->snaps_live, 1);
	pthread_mutex_lock(&s->snaps_lock);
	sn->next = s->snaps;
	if (sn->next)
		sn->next->prev = sn;
	s->snaps = sn;
	pthread_mutex_unlock(&s->snaps_lock);
	return sn;
}

void store_snap_free(struct store *s, struct store_snap *sn)
{
	if (!sn)
		return;
	pthread_mutex_lock(&s->snaps_lock);
	if (sn->prev)
		sn->prev->next = sn->next;
	else
		s->snaps = sn->next;
	if (sn->next)
		sn->next->prev = sn->prev;
	pthread_mutex_unlock(&s->snaps_lock);
	rocksdb_readoptions_destroy(sn->ropts);
	rocksdb_release_snapshot(s->db, sn->snap);
	free(sn);
	atomic_fetch_sub(&s->snaps_live, 1);
}

void store_snaps_release(struct store *s)
{
	size_t n = 0;
	pthread_mutex_lock(&s->snaps_lock);
	while (s->snaps) {
		struct store_snap *sn = s->snaps;
		s->snaps = sn->next;
		rocksdb_readoptions_destroy(sn->ropts);
		rocksdb_release_snapshot(s->db, sn->snap);
		free(sn);
		atomic_fetch_sub(&s->snaps_live, 1);
		n++;
	}
	pthread_mutex_unlock(&s->snaps_lock);
	if (n)
		LOG_INFO("%s: %zu snapshots still held at the close were released", s->path, n);
}

/* The point read under every store_get*: 0 with *v pinned (the caller
 * destroys it), -ENOENT (also: the column family is not open), or
 * store_err's errno. At snap (NULL: the latest). Between
 * store_follow_begin and _end. */
static int get_pinned(struct store *s, const struct store_snap *snap, enum store_cf cf,
		      const void *k, size_t kn, rocksdb_pinnableslice_t **v)
{
	rocksdb_column_family_handle_t *h = store_cf(s, cf);
	char *err = NULL;
	*v = NULL;
	if (!h)
		return -ENOENT; /* a read-only store without this column family */
	*v = rocksdb_get_pinned_cf(s->db, snap ? snap->ropts : s->ropts, h, k, kn, &err);
	if (err)
		return store_err("get", err);
	return *v ? 0 : -ENOENT;
}

int store_get(struct store *s, enum store_cf cf, const void *k, size_t kn, struct buf *out)
{
	return store_get_at(s, NULL, cf, k, kn, out);
}

int store_get_at(struct store *s, const struct store_snap *snap, enum store_cf cf, const void *k,
		 size_t kn, struct buf *out)
{
	rocksdb_pinnableslice_t *v;
	int rc = 0;

	if ((rc = store_follow_begin(s, cf)) != 0)
		return rc;
	/* The slice pins the instance's memory: copied before a reopen
	 * (after store_follow_end) may close that instance. */
	rc = get_pinned(s, snap, cf, k, kn, &v);
	if (!rc) {
		size_t vn;
		const char *p = rocksdb_pinnableslice_value(v, &vn);
		rc = buf_set(out, p, vn);
		rocksdb_pinnableslice_destroy(v);
	}
	store_follow_end(s);
	return rc;
}

int store_get_head(struct store *s, enum store_cf cf, const void *k, size_t kn, size_t max,
		   struct buf *out, size_t *full)
{
	return store_get_head_at(s, NULL, cf, k, kn, max, out, full);
}

int store_get_head_at(struct store *s, const struct store_snap *snap, enum store_cf cf,
		      const void *k, size_t kn, size_t max, struct buf *out, size_t *full)
{
	rocksdb_pinnableslice_t *v;
	uint64_t epoch;
	int rc;

	/* The head cache holds the latest values only. */
	if (!snap && store_heads_find(s->heads, cf, k, kn, max, out, full, &epoch) == 0)
		return 0;
	if ((rc = store_follow_begin(s, cf)) != 0)
		return rc;
	rc = get_pinned(s, snap, cf, k, kn, &v);
	if (rc) {
		store_follow_end(s);
		return rc;
	}
	/* Copied before store_follow_end (a reopen may then close the
	 * instance the slice pins). */
	size_t vn;
	const char *p = rocksdb_pinnableslice_value(v, &vn);
	rc = out ? buf_set(out, p, vn < max ? vn : max) : 0;
	if (full)
		*full = vn;
	if (!snap && vn >= STORE_BLOB_MIN) { /* epoch: heads_find's */
		store_heads_fill(s->heads, cf, k, kn, p, vn, epoch);
		/* For the read to come; not a follower's: the value would pin
		 * an instance a reopen may close. */
		if (!s->follower) {
			store_heads_keep(s->heads, cf, k, kn, v, epoch);
			store_follow_end(s);
			return rc;
		}
	}
	rocksdb_pinnableslice_destroy(v);
	store_follow_end(s);
	return rc;
}

/* A pinned value, and a follower's instance it pins. */
struct store_value {
	rocksdb_pinnableslice_t *v;
	struct store_inst *inst;
};

int store_value_get(struct store *s, enum store_cf cf, const void *k, size_t kn,
		    struct store_value **out)
{
	return store_value_get_at(s, NULL, cf, k, kn, out);
}

int store_value_get_at(struct store *s, const struct store_snap *snap, enum store_cf cf,
		       const void *k, size_t kn, struct store_value **out)
{
	struct store_value *sv = calloc(1, sizeof(*sv));
	int rc = 0;

	*out = NULL;
	if (!sv)
		return -ENOMEM;
	sv->v = snap ? NULL : store_heads_take(s->heads, cf, k, kn);
	if (!sv->v && (rc = store_follow_begin(s, cf)) == 0) {
		rc = get_pinned(s, snap, cf, k, kn, &sv->v);
		if (!rc)
			sv->inst = store_follow_ref(s);
		store_follow_end(s);
	}
	if (rc) {
		free(sv);
		return rc;
	}
	*out = sv;
	return 0;
}

const char *store_value_data(const struct store_value *v, size_t *n)
{
	return rocksdb_pinnableslice_value(v->v, n);
}

void store_value_free(struct store_value *v)
{
	if (!v)
		return;
	rocksdb_pinnableslice_destroy(v->v);
	store_follow_unref(v->inst); /* after the value it pins */
	free(v);
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
	store_heads_drop_fills(b);
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
		store_heads_note(b, cf, key, kn, (const char *const *)parts, lens, nparts, vn);
	store_heads_touch(b, cf, k, kn);
}

void store_batch_delete(struct store_batch *b, enum store_cf cf, const void *k, size_t kn)
{
	rocksdb_column_family_handle_t *h = batch_cf(b, cf);
	if (h)
		rocksdb_writebatch_delete_cf(b->wb, h, k, kn);
	store_heads_touch(b, cf, k, kn);
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
	store_heads_drop_fills(b);
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
	store_heads_invalidate(s->heads, b, !err);
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
int store_sync_wal(struct store *s, const char *what)
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
	return store_iter_new_at(s, NULL, cf, lower, ln, upper, un);
}

struct store_iter *store_iter_new_at(struct store *s, const struct store_snap *snap,
				     enum store_cf cf, const void *lower, size_t ln,
				     const void *upper, size_t un)
{
	struct store_iter *it = calloc(1, sizeof(*it));
	rocksdb_column_family_handle_t *h;

	if (!it)
		return NULL;
	/* An absent column family iterates nothing: looked at under
	 * follow_lock below (a follower's reopen refills s->cf). */
	it->ropts = rocksdb_readoptions_create();
	if (!it->ropts)
		goto fail;
	/* A scan does not fill the block cache (Kvrocks's scan options too):
	 * `ls` of a 1,000,000-field hash would fill all 64 MiB of it, push
	 * out what point reads keep there, and grow the daemon by as much. */
	rocksdb_readoptions_set_fill_cache(it->ropts, 0);
	if (snap)
		rocksdb_readoptions_set_snapshot(it->ropts, snap->snap);
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
	if ((it->err = store_follow_begin(s, cf)) != 0)
		return it;   /* iterates nothing; store_iter_status says why */
	h = store_cf(s, cf); /* the current instance's */
	if (h && (it->it = rocksdb_create_iterator_cf(s->db, it->ropts, h)) != NULL)
		it->inst = store_follow_ref(s);
	store_follow_end(s);
	if (h && !it->it)
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
	store_follow_unref(it->inst);
	free(it->lower);
	free(it->upper);
	free(it);
}

/* An iterator of an absent column family (it->it NULL) is always at
 * its end: the moves and seeks do nothing. */
static void iter_move(struct store_iter *it, void (*move)(rocksdb_iterator_t *))
{
	if (it->it)
		move(it->it);
}

static void iter_seek(struct store_iter *it, const void *k, size_t kn,
		      void (*seek)(rocksdb_iterator_t *, const char *, size_t))
{
	if (it->it)
		seek(it->it, k, kn);
}

void store_iter_seek(struct store_iter *it, const void *k, size_t kn)
{
	iter_seek(it, k, kn, rocksdb_iter_seek);
}

void store_iter_seek_for_prev(struct store_iter *it, const void *k, size_t kn)
{
	iter_seek(it, k, kn, rocksdb_iter_seek_for_prev);
}

void store_iter_seek_first(struct store_iter *it)
{
	iter_move(it, rocksdb_iter_seek_to_first);
}

void store_iter_seek_last(struct store_iter *it)
{
	iter_move(it, rocksdb_iter_seek_to_last);
}

bool store_iter_valid(struct store_iter *it)
{
	return it->it && rocksdb_iter_valid(it->it);
}

void store_iter_next(struct store_iter *it)
{
	iter_move(it, rocksdb_iter_next);
}

void store_iter_prev(struct store_iter *it)
{
	iter_move(it, rocksdb_iter_prev);
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
		return it->err;
	rocksdb_iter_get_error(it->it, &err);
	return err ? store_err("iterator", err) : 0;
}
