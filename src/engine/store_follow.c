/*
 * store_follow: a follower, the store opened as a RocksDB secondary
 * instance of a database another process writes (a kvfs mount, a running
 * Kvrocks): its open, its catch-ups, the reopen a catch-up cannot replace,
 * and the column families it must not read. Layer: engine (util,
 * rocksdb/c.h), part of the store.
 *
 * Two limits of RocksDB 7.8's secondary instance shape this file:
 *
 * - Memtables. A secondary replays the primary's WAL files into memtables
 *   of its own, and drops one only when it finds a newer WAL with records
 *   for that column family. When the primary flushes and deletes a WAL
 *   the secondary read (a flush, a close) and writes nothing more to a
 *   column family, that memtable stays, and once a compaction has dropped
 *   the tombstones that hid its records, deleted keys came back in the
 *   follower (`rm k` in the writer, unmount, `kvfs compact`: k listed
 *   again). So a catch-up that finds the oldest WAL file it knew gone
 *   opens a new instance instead (store_catch_up): it reads the flushed
 *   tables and the live WAL files only.
 * - Blob files. Its wiki says BlobDB is not supported with secondary
 *   instances; 7.8 computes a blob's cache key from strings its version
 *   set no longer has, and crashed the first listing after the writer
 *   flushed a 200 KB value; and a MANIFEST in which blob files were
 *   deleted made it show the column family empty. So once blob files are
 *   seen (in the directory at the open, or by a catch-up) the follower
 *   follows through read-only instances instead, which read blob files:
 *   each catch-up that finds the database's files changed (the MANIFEST,
 *   the newest WAL file: files_sig) opens a new one, which reads what the
 *   writer has written, its WAL included. Until that switch (and for good
 *   only if no read-only instance opens) a column family holding blob
 *   files is not read (-EIO).
 *
 * Instances. The current one is s->inst (s->db, s->handles and s->cf are
 * its). Point reads and iterator creations hold follow_lock for reading;
 * a catch-up and the swap of a reopen hold it for writing. An iterator or
 * a pinned value outlives its read: it holds a reference on the instance
 * it came from, and the last reference of a retired instance closes it.
 */
#include "engine/store_int.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct store_inst {
	rocksdb_t *db;
	rocksdb_column_family_handle_t **handles;
	size_t nhandles;
	_Atomic unsigned refs; /* the store's own, iterators, pinned values */
};

static bool follow_blobs_seen(const struct store *s);
static int follow_switch_ro(struct store *s);

static void inst_close(struct store_inst *in)
{
	for (size_t i = 0; i < in->nhandles; i++)
		rocksdb_column_family_handle_destroy(in->handles[i]);
	if (in->db)
		rocksdb_close(in->db);
	free(in->handles);
	free(in);
}

struct store_inst *store_follow_ref(struct store *s)
{
	if (!s->inst)
		return NULL;
	atomic_fetch_add(&s->inst->refs, 1);
	return s->inst;
}

void store_follow_unref(struct store_inst *in)
{
	if (in && atomic_fetch_sub(&in->refs, 1) == 1)
		inst_close(in);
}

/* A new secondary instance of s->path with s->names: NULL and the
 * errno in *rc (said in one line). */
static struct store_inst *inst_open(struct store *s, int *rc)
{
	struct store_inst *in = calloc(1, sizeof(*in));
	const rocksdb_options_t **cfopts = calloc(s->nnames, sizeof(*cfopts));
	char *err = NULL;

	*rc = -ENOMEM;
	if (in)
		in->handles = calloc(s->nnames, sizeof(*in->handles));
	if (!in || !in->handles || !cfopts)
		goto fail;
	for (size_t i = 0; i < s->nnames; i++)
		cfopts[i] = s->opts; /* a secondary installs no compaction filter */
	if (s->follow_ro)	     /* reads blob files; replays the WAL at its open */
		in->db = rocksdb_open_for_read_only_column_families(
		    s->opts, s->path, (int)s->nnames, (const char *const *)s->names, cfopts,
		    in->handles, 0, &err);
	else
		in->db = rocksdb_open_as_secondary_column_families(
		    s->opts, s->path, s->secondary, (int)s->nnames, (const char *const *)s->names,
		    cfopts, in->handles, &err);
	if (err) {
		in->db = NULL;
		*rc = store_open_err(s, err);
		goto fail;
	}
	in->nhandles = s->nnames;
	atomic_init(&in->refs, 1);
	free(cfopts);
	*rc = 0;
	return in;
fail:
	free(cfopts);
	if (in) {
		free(in->handles);
		free(in);
	}
	return NULL;
}

/* Make `in` the current instance (follow_lock held for writing, or no
 * reader yet). */
static void inst_use(struct store *s, struct store_inst *in)
{
	s->inst = in;
	s->db = in->db;
	s->handles = in->handles;
	s->nhandles = in->nhandles;
	memset(s->cf, 0, sizeof(s->cf));
	for (size_t i = 0; i < s->nnames; i++)
		for (int c = 0; c < STORE_CF_COUNT; c++)
			if (strcmp(s->names[i], store_cf_name((enum store_cf)c)) == 0)
				s->cf[c] = in->handles[i];
}

/* The number of the oldest WAL file (NNNNNN.log) in path; 0: none. */
static uint64_t wal_oldest(const char *path)
{
	uint64_t min = 0;
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d)) != NULL) {
		char *end;
		unsigned long long n = strtoull(e->d_name, &end, 10);
		if (end != e->d_name && strcmp(end, ".log") == 0 && (!min || n < min))
			min = n;
	}
	if (d)
		closedir(d);
	return min;
}

/* Does path hold a blob file (NNNNNN.blob)? */
static bool has_blob_files(const char *path)
{
	bool found = false;
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && !found && (e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		found = n > 5 && strcmp(e->d_name + n - 5, ".blob") == 0;
	}
	if (d)
		closedir(d);
	return found;
}

/* The MANIFEST file CURRENT names (at most n - 1 bytes; "" if unread). */
static void read_current(const char *path, char *out, size_t n)
{
	char *p = NULL;
	FILE *f = asprintf(&p, "%s/CURRENT", path) >= 0 ? fopen(p, "re") : NULL;
	out[0] = '\0';
	if (f && fgets(out, (int)n, f))
		out[strcspn(out, "\n")] = '\0';
	if (f)
		fclose(f);
	free(p);
}

/*
 * How the database's files are now, for a read-only follower: the
 * MANIFEST CURRENT names and its size (a flush, a compaction), and the
 * newest WAL file and its size (every write). Another string means the
 * writer changed something since.
 */
static void files_sig(const char *path, char *out, size_t n)
{
	char cur[64], *p = NULL;
	struct stat st;
	long long msize = -1, wsize = -1;
	uint64_t newest = 0;
	DIR *d = opendir(path);
	struct dirent *e;
	read_current(path, cur, sizeof(cur));
	while (d && (e = readdir(d)) != NULL) {
		char *end;
		unsigned long long num = strtoull(e->d_name, &end, 10);
		if (end != e->d_name && strcmp(end, ".log") == 0 && num > newest)
			newest = num;
	}
	if (d)
		closedir(d);
	if (cur[0] && asprintf(&p, "%s/%s", path, cur) >= 0 && stat(p, &st) == 0)
		msize = (long long)st.st_size;
	free(p);
	p = NULL;
	if (newest && asprintf(&p, "%s/%06llu.log", path, (unsigned long long)newest) >= 0 &&
	    stat(p, &st) == 0)
		wsize = (long long)st.st_size;
	free(p);
	snprintf(out, n, "%s %lld %llu %lld", cur, msize, (unsigned long long)newest, wsize);
}

/*
 * Which column families the follower must not read now (follow_lock
 * held for writing, or no reader yet): those holding blob files, and,
 * once they are gone, the same ones until the writer has written a new
 * MANIFEST. A secondary instance replays the MANIFEST from its start,
 * and one in which blob files were deleted made RocksDB 7.8 show the
 * column family empty (a new follower too, and ldb --secondary_path),
 * until the writer's next open wrote a new MANIFEST.
 */
static void follow_blobs(struct store *s)
{
	bool now[STORE_CF_COUNT], any = false;
	if (s->follow_ro) { /* a read-only instance reads them */
		memset(s->blob_cf, 0, sizeof(s->blob_cf));
		s->blob_wait = false;
		return;
	}
	for (int c = 0; c < STORE_CF_COUNT; c++) {
		now[c] = s->cf[c] && store_prop(s, s->cf[c], "rocksdb.num-blob-files") > 0;
		any |= now[c];
	}
	if (any) {
		s->blob_wait = true;
		s->blob_gone[0] = '\0';
	} else if (s->blob_wait) {
		char cur[sizeof(s->blob_gone)];
		read_current(s->path, cur, sizeof(cur));
		if (!s->blob_gone[0] && cur[0]) {
			memcpy(s->blob_gone, cur, sizeof(cur)); /* gone now: under this one */
			LOG_INFO("%s: no blob file left; reads stay refused until the writer opens "
				 "the database again (a secondary instance misreads %s, which "
				 "saw them go)",
				 s->path, cur);
		}
		if (strcmp(cur, s->blob_gone) == 0 || !cur[0])
			return; /* the same MANIFEST: still refused */
		s->blob_wait = false;
	}
	/* Refused until the switch to read-only instances (follow_switch_ro),
	 * which logs; for good only if that fails. */
	memcpy(s->blob_cf, now, sizeof(now));
}

int store_follow_open(struct store *s, char **names, size_t n)
{
	int rc;
	s->names = calloc(n ? n : 1, sizeof(*s->names));
	if (!s->names)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		if (!(s->names[s->nnames++] = strdup(names[i])))
			return -ENOMEM;
	/* Before the open: a WAL deleted after it is one it may have read. */
	s->wal_min = wal_oldest(s->path);
	/* Blob files there: read-only instances from the start (a secondary
	 * one crashed reading them). */
	s->follow_ro = has_blob_files(s->path);
	if (s->follow_ro)
		files_sig(s->path, s->ro_sig, sizeof(s->ro_sig));
	struct store_inst *in = inst_open(s, &rc);
	if (!in)
		return rc;
	free(s->handles); /* store_open's: the instance has its own */
	inst_use(s, in);
	follow_blobs(s);
	if (follow_blobs_seen(s) && (rc = follow_switch_ro(s)) != 0)
		return rc;
	LOG_INFO("%s: following the database's writer (%s)", s->path,
		 s->follow_ro
		     ? "read-only instances, opened anew at each change: it holds blob files"
		     : "a secondary instance");
	return 0;
}

void store_follow_close(struct store *s)
{
	if (!s->follower)
		return;
	if (s->inst) {
		/* Iterators and pinned values are gone by now: this is the
		 * last reference. */
		store_follow_unref(s->inst);
		s->inst = NULL;
		s->db = NULL;
		s->handles = NULL;
		s->nhandles = 0;
	}
	for (size_t i = 0; i < s->nnames; i++)
		free(s->names[i]);
	free(s->names);
	s->names = NULL;
	free(s->secondary);
	s->secondary = NULL;
}

int store_follow_begin(struct store *s, enum store_cf cf)
{
	if (!s->follower)
		return 0;
	pthread_rwlock_rdlock(&s->follow_lock);
	if ((unsigned)cf < STORE_CF_COUNT && s->blob_cf[cf]) {
		pthread_rwlock_unlock(&s->follow_lock);
		return -EIO;
	}
	return 0;
}

void store_follow_end(struct store *s)
{
	if (s->follower)
		pthread_rwlock_unlock(&s->follow_lock);
}

/* The secondary's memtables may hold what the writer flushed and has
 * since compacted away: open a new instance and retire the old one.
 * Failing that, keep the old one (logged). */
static int follow_reopen(struct store *s, uint64_t wal_min)
{
	int rc;
	struct store_inst *in = inst_open(s, &rc);
	if (!in)
		return rc;
	pthread_rwlock_wrlock(&s->follow_lock);
	struct store_inst *old = s->inst;
	inst_use(s, in);
	follow_blobs(s);
	s->wal_min = wal_min;
	pthread_rwlock_unlock(&s->follow_lock);
	store_follow_unref(old);
	LOG_DEBUG("%s: the writer flushed a WAL file: opened the follower anew", s->path);
	return 0;
}

/* Did the secondary instance meet blob files (now, or gone under the
 * MANIFEST it reads)? */
static bool follow_blobs_seen(const struct store *s)
{
	if (s->follow_ro)
		return false;
	for (int c = 0; c < STORE_CF_COUNT; c++)
		if (s->blob_cf[c])
			return true;
	return s->blob_wait;
}

/* Follow through read-only instances from now on: open one in place of
 * the secondary instance. Failing that, the secondary stays, and its
 * blob column families refused (follow_blobs). */
static int follow_switch_ro(struct store *s)
{
	s->follow_ro = true;
	files_sig(s->path, s->ro_sig, sizeof(s->ro_sig));
	int rc = follow_reopen(s, wal_oldest(s->path));
	if (rc) {
		s->follow_ro = false;
		LOG_ERR(
		    "%s: the database holds blob files (values of 64 KiB or more kept apart, "
		    "as kvfs and Kvrocks with rocksdb.enable_blob_files store them), which a "
		    "secondary instance cannot read, and no read-only instance opened: reads of "
		    "those column families fail with EIO; the next catch-up tries again",
		    s->path);
		return rc;
	}
	LOG_INFO("%s: the database holds blob files, which a secondary instance cannot read: "
		 "following it through read-only instances, opened anew at each change",
		 s->path);
	return 0;
}

int store_catch_up(struct store *s, bool *changed)
{
	char *err = NULL;
	*changed = false;
	if (!s->follower)
		return -EINVAL;
	uint64_t wal_min = wal_oldest(s->path);
	if (s->follow_ro) {
		/* The files as they are before the open: a change made during
		 * it shows as another string next time, and opens again. */
		char sig[sizeof(s->ro_sig)];
		files_sig(s->path, sig, sizeof(sig));
		if (strcmp(sig, s->ro_sig) == 0)
			return 0;
		int rc = follow_reopen(s, wal_min);
		if (rc)
			return rc; /* the old instance stays; the next catch-up tries again */
		memcpy(s->ro_sig, sig, sizeof(sig));
		store_heads_clear(s->heads);
		*changed = true;
		return 0;
	}
	if (s->blob_wait && s->blob_gone[0]) {
		/* Under the MANIFEST that saw blob files go, a catch-up of this
		 * instance failed an assertion of RocksDB 7.8 (version_builder.cc,
		 * `version_ != cfd->current()`) once the writer had opened the
		 * database again: none is tried; a new MANIFEST means a reopen. */
		char cur[sizeof(s->blob_gone)];
		read_current(s->path, cur, sizeof(cur));
		if (!cur[0] || strcmp(cur, s->blob_gone) == 0)
			return 0;
		int rc = follow_reopen(s, wal_min);
		if (rc)
			return rc;
		store_heads_clear(s->heads);
		*changed = true;
		return 0;
	}
	if (s->wal_min && wal_min != s->wal_min) {
		/* The oldest WAL file it knew is gone (a new one older than it
		 * cannot appear): a flush or a restart of the writer. */
		int rc = follow_reopen(s, wal_min);
		if (rc)
			return rc;
		store_heads_clear(s->heads);
		*changed = true;
		return 0;
	}
	pthread_rwlock_wrlock(&s->follow_lock);
	uint64_t before = rocksdb_get_latest_sequence_number(s->db);
	rocksdb_try_catch_up_with_primary(s->db, &err);
	follow_blobs(s);
	uint64_t after = rocksdb_get_latest_sequence_number(s->db);
	pthread_rwlock_unlock(&s->follow_lock);
	/* Opened with no WAL file there: the oldest one now is the first
	 * it may have read. */
	if (!s->wal_min)
		s->wal_min = wal_oldest(s->path);
	if (err)
		return store_err("catch up with the primary", err);
	if (follow_blobs_seen(s)) {
		int rc = follow_switch_ro(s);
		if (rc)
			return rc;
		store_heads_clear(s->heads);
		*changed = true;
		return 0;
	}
	if (after != before) {
		/* Emptied after the catch-up: a head read before it and kept
		 * after would be stale (the epochs move, store_heads_fill
		 * refuses it). */
		store_heads_clear(s->heads);
		*changed = true;
	}
	return 0;
}
