/*
 * store_dir: which directory the store opens (DIR/db, DIR itself, or a
 * new database in an empty DIR), each refusal said in one line with its
 * own errno, and the room the disk has (the write buffer, a writable
 * open). Layer: engine (util, rocksdb/c.h), part of the store.
 */
#include "engine/store_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

/* On a small file system the write buffer is at most this part of it,
 * and at least STORE_WRITE_BUFFER_MIN (see store_write_buffer). */
#define STORE_WRITE_BUFFER_PART 8
#define STORE_WRITE_BUFFER_MIN	(4u << 20)
/* Room a writable open needs besides the WAL it replays: a new MANIFEST,
 * OPTIONS file, WAL and the LOG's header (see store_too_full). */
#define STORE_OPEN_ROOM (1u << 20)

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
int store_pick_path(const char *dir, bool read_only, char **path, bool *fresh)
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
			LOG_ERR("%s: no such directory (-o ro and -o follow open only an existing "
				"database)",
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
int store_open_err(struct store *s, char *err)
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
size_t store_write_buffer(const char *path)
{
	uint64_t size = 0, avail = 0;
	if (store_fs_space(path, &size, &avail) != 0 ||
	    size / STORE_WRITE_BUFFER_PART >= STORE_WRITE_BUFFER)
		return STORE_WRITE_BUFFER;
	if (size / STORE_WRITE_BUFFER_PART < STORE_WRITE_BUFFER_MIN)
		return STORE_WRITE_BUFFER_MIN;
	return (size_t)(size / STORE_WRITE_BUFFER_PART);
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
bool store_too_full(struct store *s)
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

/* mkdir -p of an absolute path, mode 0700 for what it makes (a user's
 * cache). 0 or -errno. */
static int make_dirs(const char *path)
{
	char *p = strdup(path);
	int rc = 0;
	if (!p)
		return -ENOMEM;
	for (char *c = p + 1; !rc; c++) {
		bool end = *c == '\0';
		if (*c != '/' && !end)
			continue;
		*c = '\0';
		if (mkdir(p, 0700) != 0 && errno != EEXIST)
			rc = -errno;
		if (end)
			break;
		*c = '/';
	}
	free(p);
	return rc;
}

/* Is `inner` (a real path) `outer` or below it? */
static bool path_within(const char *inner, const char *outer)
{
	size_t n = strlen(outer);
	if (n && outer[n - 1] == '/')
		n--;
	return strncmp(inner, outer, n) == 0 && (inner[n] == '\0' || inner[n] == '/');
}

/* Has the path a ".." component? */
static bool has_dotdot(const char *p)
{
	for (const char *c = p; (c = strstr(c, "..")) != NULL; c += 2)
		if ((c == p || c[-1] == '/') && (c[2] == '\0' || c[2] == '/'))
			return true;
	return false;
}

/* The real path of the deepest existing directory on an absolute path
 * (malloc'd), or NULL. */
static char *real_ancestor(const char *path)
{
	char *p = strdup(path), *r = NULL;
	while (p && !(r = realpath(p, NULL))) {
		char *slash = strrchr(p, '/');
		if (!slash || (slash == p && p[1] == '\0'))
			break;
		slash[slash == p ? 1 : 0] = '\0';
	}
	free(p);
	return r;
}

/*
 * The secondary instance writes its own files (its LOG) into a directory
 * of its own, which must never be the primary's: the default is under the
 * user's cache, one directory per database path, so a remount reuses it.
 */
int store_secondary_dir(const char *dir, const char *path, const char *given, char **out)
{
	char *want = NULL, *real = NULL, *rdir = NULL, *rpath = NULL;
	int rc = 0;

	*out = NULL;
	if (given) {
		want = strdup(given);
	} else {
		const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
		rpath = realpath(path, NULL);
		const char *id = rpath ? rpath : path;
		unsigned long long h = (unsigned long long)hash_bytes(id, strlen(id));
		if (xdg && xdg[0] == '/') {
			if (asprintf(&want, "%s/kvfs/secondary/%016llx", xdg, h) < 0)
				want = NULL;
		} else if (home && home[0] == '/') {
			if (asprintf(&want, "%s/.cache/kvfs/secondary/%016llx", home, h) < 0)
				want = NULL;
		} else {
			LOG_ERR(
			    "%s: -o follow needs a directory of its own: neither $XDG_CACHE_HOME "
			    "nor $HOME is set; give one with -o follow_dir=PATH",
			    dir);
			rc = -EINVAL;
			goto out;
		}
		free(rpath);
		rpath = NULL;
	}
	if (!want) {
		rc = -ENOMEM;
		goto out;
	}
	if (want[0] != '/' || has_dotdot(want)) {
		LOG_ERR("-o follow_dir=%s: needs an absolute path without '..'", want);
		rc = -EINVAL;
		goto out;
	}
	rdir = realpath(dir, NULL);
	rpath = realpath(path, NULL);
	if (!rdir || !rpath) {
		rc = errno ? -errno : -ENOMEM;
		LOG_ERR("%s: %s", dir, strerror(-rc));
		goto out;
	}
	/* Checked before anything is made (the deepest part that exists,
	 * resolved), and again once made. */
	real = real_ancestor(want);
	if (real && !path_within(real, rdir) && !path_within(real, rpath)) {
		free(real);
		if ((rc = make_dirs(want)) != 0) {
			LOG_ERR("%s: cannot make the follower's directory: %s", want,
				strerror(-rc));
			real = NULL;
			goto out;
		}
		real = realpath(want, NULL);
	}
	if (!real) {
		rc = errno ? -errno : -ENOMEM;
		LOG_ERR("%s: %s", want, strerror(-rc));
		goto out;
	}
	if (path_within(real, rdir) || path_within(real, rpath)) {
		LOG_ERR("-o follow_dir=%s: inside the database's directory %s: the follower "
			"writes nothing there; give a directory elsewhere",
			want, rdir);
		rc = -EINVAL;
		goto out;
	}
	*out = real;
	real = NULL;
out:
	free(want);
	free(real);
	free(rdir);
	free(rpath);
	return rc;
}

/* May dest be made: absolute, neither it nor its staging directory
 * dest.tmp there, its parent a directory this process may write? 0 or a
 * negative errno, said in one line. */
static int checkpoint_check_dest(const char *dest)
{
	struct stat st;
	char *tmp = NULL, *parent = NULL;
	int rc = 0;
	if (dest[0] != '/') {
		LOG_ERR("snapshot %s: the destination must be an absolute path", dest);
		return -EINVAL;
	}
	if (lstat(dest, &st) == 0) {
		LOG_ERR("snapshot %s: it exists (a snapshot goes into a new directory)", dest);
		return -EEXIST;
	}
	if (asprintf(&tmp, "%s.tmp", dest) < 0 || !(parent = strdup(dest))) {
		free(tmp);
		return -ENOMEM;
	}
	/* RocksDB would delete what a dest.tmp holds before staging there. */
	if (lstat(tmp, &st) == 0) {
		LOG_ERR("snapshot %s: %s exists (RocksDB stages a snapshot there and would empty "
			"it): remove it first",
			dest, tmp);
		rc = -EEXIST;
		goto out;
	}
	size_t n = strlen(parent);
	while (n > 1 && parent[n - 1] == '/')
		parent[--n] = '\0';
	char *slash = strrchr(parent, '/');
	if (slash == parent)
		slash[1] = '\0';
	else if (slash)
		*slash = '\0';
	if (stat(parent, &st) != 0 || !S_ISDIR(st.st_mode)) {
		rc = stat(parent, &st) != 0 ? -errno : -ENOTDIR;
		LOG_ERR("snapshot %s: its parent directory %s: %s", dest, parent, strerror(-rc));
		goto out;
	}
	if (access(parent, W_OK | X_OK) != 0 && errno == EACCES) {
		LOG_ERR("snapshot %s: permission denied (kvfs, uid %u, cannot write in %s)", dest,
			(unsigned)geteuid(), parent);
		rc = -EACCES;
	}
out:
	free(tmp);
	free(parent);
	return rc;
}

int store_checkpoint(struct store *s, const char *dest)
{
	char *err = NULL;
	int rc = checkpoint_check_dest(dest);
	if (rc)
		return rc;
	uint64_t t0 = store_mono_ms();
	rocksdb_checkpoint_t *cp = rocksdb_checkpoint_object_create(s->db, &err);
	if (!err) {
		/* 0: flush first, always. A read-only database cannot flush:
		 * UINT64_MAX makes RocksDB copy the WAL without asking. */
		rocksdb_checkpoint_create(cp, dest, s->read_only ? UINT64_MAX : 0, &err);
		rocksdb_checkpoint_object_destroy(cp);
	}
	if (err) {
		if (strstr(err, "Permission denied")) {
			LOG_ERR("snapshot %s: permission denied (rocksdb: %s)", dest, err);
			rocksdb_free(err);
			return -EACCES;
		}
		return store_err("snapshot", err);
	}
	LOG_INFO("%s: snapshot in %s made in %llu ms", s->path, dest,
		 (unsigned long long)(store_mono_ms() - t0));
	return 0;
}
