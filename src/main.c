/*
 * main: command line, mount, signals and the session loop.
 *   kvfs [-f] [-d] [-s] [-o OPTIONS] DBDIR MOUNTPOINT
 *   kvfs compact [-o cluster] DBDIR     (offline garbage collection)
 *   kvfs snapshot [-o cluster] DBDIR DEST   (a checkpoint, also of a mounted database)
 * Layer: main (may include everything).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/fs.h"
#include "keyspace/keyspace.h"
#include "engine/util.h"

#define KVFS_VERSION "0.1.0"

/*
 * FUSE worker threads. A close of a written file commits on the worker
 * that serves it, and RocksDB runs commits one group at a time: a 4 MiB
 * value took 30-110 ms under load. With 4 workers, four processes
 * closing big files held them all, and every request of `ls -l` (one
 * per entry, and two getxattr each) waited in the kernel queue behind
 * those commits: 1.2-3.8 s for 580 fields against 0.07 s quiet. Readers
 * take no lock a commit holds, so they only need a free worker; with 32,
 * the same listing took 0.1-0.3 s under 8 writers. Threads beyond the
 * idle ones exit when the load is gone.
 */
#define KVFS_THREADS	  32
#define KVFS_IDLE_THREADS 8

struct options {
	char *dbdir;
	char *mnt; /* the mount point as given, checked before libfuse sees it */
	char *ns;
	int cluster;
	int read_only;
	/* -o follow[=MS]: follow the database's writer; follow_dir=PATH */
	int follow;
	char *follow_dir;
	/* Numbers as given, parsed and range-checked by parse_numbers(). */
	char *timeout_arg, *threads_arg, *uid_arg, *gid_arg, *umask_arg, *follow_arg;
	double timeout;
	unsigned follow_ms;
	unsigned threads;
	unsigned uid, gid, umask;
	int allow_other, default_permissions, no_default_permissions;
	int nonopts;
	bool info; /* --help or --version: no mount */
};

enum { KEY_RO, KEY_HELP, KEY_VERSION, KEY_ALLOW_OTHER, KEY_DEFAULT_PERMISSIONS };

/*
 * Exit statuses of a mount that fails (docs/kvfs.1, docs/errors.md), so
 * that a script can tell a mistake from a database busy for now.
 */
enum {
	EXIT_FAIL = 1,	 /* anything else: libfuse, RocksDB, memory */
	EXIT_USAGE = 2,	 /* bad command line or option value */
	EXIT_NODB = 3,	 /* DBDIR missing or not a directory, no database with -o ro */
	EXIT_PERM = 4,	 /* permission denied on DBDIR or the mount point */
	EXIT_NOTKV = 5,	 /* not a RocksDB, a damaged one, or one without Kvrocks's families */
	EXIT_LOCKED = 6, /* the database is in use by another process */
	EXIT_MNT = 7,	 /* mount point missing, not a directory, or busy */
};

/* The most FUSE worker threads: 32 times the default. A burst of
 * requests starts up to that many, each with its stack and a RocksDB
 * reader; 100000 is a typo, not a tuning. */
#define THREADS_MAX 1024
/* The longest kernel cache time: libfuse turns it into whole seconds and
 * nanoseconds, which a larger double would overflow. */
#define TIMEOUT_MAX 31536000.0
/* -o follow=MS: the catch-up period, default and bounds (an hour). */
#define FOLLOW_MS     1000
#define FOLLOW_MS_MAX 3600000

/* One option a line, as libfuse writes its tables. */
/* clang-format off */
#define OPT(t, p) { t, offsetof(struct options, p), 1 }
static const struct fuse_opt option_spec[] = {
	{ "ns=%s", offsetof(struct options, ns), 0 },
	OPT("cluster", cluster),
	OPT("follow", follow),
	{ "follow=%s", offsetof(struct options, follow_arg), 0 },
	{ "follow_dir=%s", offsetof(struct options, follow_dir), 0 },
	{ "timeout=%s", offsetof(struct options, timeout_arg), 0 },
	{ "threads=%s", offsetof(struct options, threads_arg), 0 },
	{ "uid=%s", offsetof(struct options, uid_arg), 0 },
	{ "gid=%s", offsetof(struct options, gid_arg), 0 },
	{ "umask=%s", offsetof(struct options, umask_arg), 0 },
	OPT("no_default_permissions", no_default_permissions),
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_KEY("allow_other", KEY_ALLOW_OTHER),
	FUSE_OPT_KEY("default_permissions", KEY_DEFAULT_PERMISSIONS),
	FUSE_OPT_END,
};
/* clang-format on */

static void usage(const char *prog)
{
	printf(
	    "usage: %s [options] DBDIR MOUNTPOINT\n\n"
	    "Mount the Kvrocks-compatible RocksDB database in DBDIR (a Kvrocks data\n"
	    "directory holding db/, a plain RocksDB directory, or a new directory) at\n"
	    "MOUNTPOINT. The tree is in kvfs-mapping(7) and docs/mapping.md; what the\n"
	    "names, inputs and views of a key are: getfattr -n user.kvfs.help KEY.\n\n"
	    "kvfs options:\n"
	    "    -o ro              read-only (RocksDB opened read-only)\n"
	    "    -o follow[=MS]     read-only, following the database's writer (a kvfs mount,\n"
	    "                       a running Kvrocks): catch up every MS ms, 1 to 3600000\n"
	    "                       (default 1000); see kvfs-mapping(7)\n"
	    "    -o follow_dir=PATH the follower's own directory (default: under\n"
	    "                       $XDG_CACHE_HOME or ~/.cache, kvfs/secondary/)\n"
	    "    -o ns=NAME         mount only namespace NAME at the root\n"
	    "    -o cluster         keys carry Kvrocks cluster slots\n"
	    "    -o timeout=SEC     kernel attribute/entry cache time, 0 to 31536000 (default 10)\n"
	    "    -o threads=N       most FUSE worker threads, 1 to 1024 (default 32)\n"
	    "    -o uid=N,gid=N     owner of files without a stored owner (default: yours)\n"
	    "    -o umask=M         permissions of files without stored ones, octal (default 022)\n"
	    "    -o allow_other     let other users in; implies -o default_permissions: the\n"
	    "                       kernel enforces the stored modes and owners\n"
	    "    -o no_default_permissions\n"
	    "                       UNSAFE with allow_other: every user may read, change and\n"
	    "                       remove every key, whatever its mode\n"
	    "    -v, --verbose      debug logging\n\n"
	    "usage: %s compact [-o cluster] DBDIR\n\n"
	    "Compact the database in DBDIR (not mounted) so that Kvrocks's compaction\n"
	    "filters drop deleted, re-created and expired data now; prints the size\n"
	    "before and after. See docs/architecture.md.\n\n"
	    "usage: %s snapshot [-o cluster] DBDIR DEST\n\n"
	    "Make a RocksDB checkpoint of the database in DBDIR in the new directory DEST\n"
	    "(hard links where the file system allows), also while kvfs has DBDIR\n"
	    "mounted: that daemon then makes it. Mount DEST with kvfs -o ro. A database a\n"
	    "running Kvrocks holds is refused: use Kvrocks's own backup. See\n"
	    "docs/mapping.md, \"Live databases and backups\".\n\n",
	    prog, prog, prog);
}

/* The options the commands share: -o cluster and -v. true if argv[*i]
 * is one (*i then at its last word). */
static bool sub_option(int argc, char *argv[], int *i, struct ks_options *kopt)
{
	if (strcmp(argv[*i], "-o") == 0 && *i + 1 < argc && strcmp(argv[*i + 1], "cluster") == 0) {
		kopt->cluster = true;
		(*i)++;
		return true;
	}
	if (strcmp(argv[*i], "-v") == 0 || strcmp(argv[*i], "--verbose") == 0) {
		log_level_current = LOG_LEVEL_DEBUG;
		return true;
	}
	return false;
}

/* Does dir hold a database (a Kvrocks DIR/db, or RocksDB's CURRENT)? */
static bool database_exists(const char *dir)
{
	struct buf cur = BUF_INIT, cur2 = BUF_INIT;
	bool exists = buf_printf(&cur, "%s/db/CURRENT", dir) == 0 &&
		      buf_printf(&cur2, "%s/CURRENT", dir) == 0 &&
		      (access(cur.data, F_OK) == 0 || access(cur2.data, F_OK) == 0);
	buf_release(&cur);
	buf_release(&cur2);
	return exists;
}

/*
 * kvfs compact [-o cluster] DBDIR: open the database (it must not be
 * mounted: RocksDB's lock), compact every column family with kvfs's
 * filters, report the live size before and after.
 */
static int cmd_compact(int argc, char *argv[])
{
	struct ks_options kopt = {0};
	const char *dir = NULL;
	struct keyspace *ks = NULL;
	uint64_t before = 0, after = 0, keys = 0;

	for (int i = 1; i < argc; i++) {
		if (sub_option(argc, argv, &i, &kopt))
			continue;
		if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else
			dir = NULL, i = argc; /* anything else is a usage error */
	}
	if (!dir) {
		fprintf(stderr, "usage: kvfs compact [-o cluster] DBDIR\n");
		return 2;
	}
	/* Never create a database here: only compact one that exists. */
	if (!database_exists(dir)) {
		fprintf(stderr, "kvfs compact: %s: no database there\n", dir);
		return 1;
	}
	int rc = ks_open(dir, &kopt, &ks);
	if (rc == -EBUSY) {
		/* Compacting under a running daemon would need a way to ask it;
		 * RocksDB's lock refuses a second opener anyway. */
		fprintf(stderr,
			"kvfs compact: %s is in use (mounted, or open in Kvrocks): unmount it "
			"first\n",
			dir);
		return 1;
	}
	if (rc) {
		fprintf(stderr, "kvfs compact: cannot open %s: %s\n", dir, strerror(-rc));
		return 1;
	}
	ks_stats(ks, &before, &keys);
	rc = ks_compact(ks);
	if (!rc)
		rc = ks_stats(ks, &after, &keys);
	ks_close(ks);
	if (rc) {
		fprintf(stderr, "kvfs compact: %s: %s\n", dir, strerror(-rc));
		return 1;
	}
	printf("%s: %" PRIu64 " bytes before, %" PRIu64 " after\n", dir, before, after);
	return 0;
}

/* The daemon runs in "/": the database path must not be relative, also
 * when it does not exist yet. NULL on ENOMEM. */
static char *absolute_path(const char *arg)
{
	char *p = realpath(arg, NULL);
	if (p || arg[0] == '/')
		return p ? p : strdup(arg);
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	struct buf b = BUF_INIT;
	if (buf_printf(&b, "%s/%s", cwd, arg)) {
		buf_release(&b);
		return NULL;
	}
	return b.data;
}

/*
 * Go to the background before anything starts threads (RocksDB does):
 * the parent waits until the child reports that the database is open and
 * the file system mounted, and exits with the child's status, so errors
 * still reach the shell that ran kvfs.
 */
static int daemon_start(int *report_fd)
{
	int fds[2];
	if (pipe(fds) != 0)
		return -1;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid > 0) {
		char status = 1;
		close(fds[1]);
		if (read(fds[0], &status, 1) != 1)
			status = 1;
		_exit(status);
	}
	close(fds[0]);
	setsid();
	*report_fd = fds[1];
	return 0;
}

/* Tell the waiting parent how the start went; detach from the terminal. */
static void daemon_ready(int *report_fd, char status)
{
	if (*report_fd < 0)
		return;
	if (status == 0) {
		log_use_syslog(true); /* errors until now went to the terminal */
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
	}
	if (write(*report_fd, &status, 1) != 1)
		LOG_WARN("could not report the start to the parent process");
	close(*report_fd);
	*report_fd = -1;
}

/* Say why `-o NAME=VALUE` is refused; always -1. */
static int bad_value(const char *name, const char *value, const char *want)
{
	fprintf(stderr, "kvfs: -o %s=%s: %s\n", name, value, want);
	return -1;
}

/* A whole number in `base`, digits only (no sign, no blank), at most max. */
static bool parse_ulong(const char *s, int base, unsigned long max, unsigned long *out)
{
	char *end;
	if (!isdigit((unsigned char)s[0]))
		return false;
	errno = 0;
	unsigned long v = strtoul(s, &end, base);
	if (errno || *end || v > max)
		return false;
	*out = v;
	return true;
}

/*
 * The numeric options, taken as strings so that a bad value is refused
 * with its reason instead of being cut, clamped or replaced by a default.
 * 0, or -1 having said why.
 */
static int parse_numbers(struct options *o)
{
	unsigned long v;
	if (o->timeout_arg) {
		char *end;
		errno = 0;
		double t = strtod(o->timeout_arg, &end);
		/* The comparisons also refuse nan. */
		if (!o->timeout_arg[0] || *end || errno || !(t >= 0 && t <= TIMEOUT_MAX))
			return bad_value("timeout", o->timeout_arg,
					 "needs a number of seconds from 0 to 31536000");
		o->timeout = t;
	}
	if (o->threads_arg) {
		if (!parse_ulong(o->threads_arg, 10, THREADS_MAX, &v) || v == 0)
			return bad_value("threads", o->threads_arg,
					 "needs a whole number from 1 to 1024");
		o->threads = (unsigned)v;
	}
	/* (uid_t)-1 means "no change" to chown: no file can have it. */
	if (o->uid_arg) {
		if (!parse_ulong(o->uid_arg, 10, UINT32_MAX - 1, &v))
			return bad_value("uid", o->uid_arg,
					 "needs a user id, a number from 0 to 4294967294");
		o->uid = (unsigned)v;
	}
	if (o->gid_arg) {
		if (!parse_ulong(o->gid_arg, 10, UINT32_MAX - 1, &v))
			return bad_value("gid", o->gid_arg,
					 "needs a group id, a number from 0 to 4294967294");
		o->gid = (unsigned)v;
	}
	if (o->follow_arg) {
		if (!parse_ulong(o->follow_arg, 10, FOLLOW_MS_MAX, &v) || v == 0)
			return bad_value("follow", o->follow_arg,
					 "needs a whole number of milliseconds from 1 to 3600000");
		o->follow = 1;
		o->follow_ms = (unsigned)v;
	}
	if (o->umask_arg) {
		if (!parse_ulong(o->umask_arg, 8, 0777, &v))
			return bad_value("umask", o->umask_arg,
					 "needs an octal mask from 0 to 0777");
		o->umask = (unsigned)v;
	}
	return 0;
}

/* A mountinfo field with its octal escapes (\040 for a blank) undone, in
 * place. */
static void mountinfo_unescape(char *s)
{
	char *w = s;
	for (char *r = s; *r; r++) {
		if (r[0] == '\\' && r[1] >= '0' && r[1] <= '3' && r[2] >= '0' && r[2] <= '7' &&
		    r[3] >= '0' && r[3] <= '7') {
			*w++ = (char)((r[1] - '0') * 64 + (r[2] - '0') * 8 + (r[3] - '0'));
			r += 3;
		} else {
			*w++ = *r;
		}
	}
	*w = '\0';
}

/* One line of /proc/self/mountinfo, its fields unescaped. */
struct mount_line {
	const char *point, *opts, *type, *src;
};

/*
 * Call match on each mount of /proc/self/mountinfo until it answers true:
 * true then, false if none did (or the file cannot be read). Each line is
 * "ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [TAGS...] - TYPE SOURCE ...".
 */
static bool mountinfo_find(bool (*match)(const struct mount_line *m, void *arg), void *arg)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	char *line = NULL;
	size_t cap = 0;
	bool found = false;
	if (!f)
		return false;
	while (!found && getline(&line, &cap, f) > 0) {
		char *save = NULL, *sep = strstr(line, " - ");
		char *fields[6] = {0};
		if (!sep)
			continue;
		*sep = '\0';
		fields[0] = strtok_r(line, " ", &save);
		for (int i = 1; fields[i - 1] && i < 6; i++)
			fields[i] = strtok_r(NULL, " ", &save);
		char *type = strtok_r(sep + 3, " ", &save);
		char *src = type ? strtok_r(NULL, " \n", &save) : NULL;
		if (!fields[5] || !type)
			continue;
		mountinfo_unescape(fields[4]);
		if (src)
			mountinfo_unescape(src);
		struct mount_line m = {fields[4], fields[5], type, src ? src : "?"};
		found = match(&m, arg);
	}
	free(line);
	fclose(f);
	return found;
}

struct mounted_at {
	const char *dir;
	char *what;
	size_t n;
};

static bool match_point(const struct mount_line *m, void *arg)
{
	struct mounted_at *a = arg;
	if (strcmp(m->point, a->dir) != 0)
		return false;
	snprintf(a->what, a->n, "%s %s", m->type, m->src);
	return true;
}

/* Is something mounted at the absolute path `dir`? Fills `what` with its
 * type and source. */
static bool is_mounted(const char *dir, char *what, size_t n)
{
	struct mounted_at a = {dir, what, n};
	return mountinfo_find(match_point, &a);
}

/*
 * Check the mount point before libfuse resolves it (which says only "bad
 * mount point"): an existing directory, writable (fusermount3 requires it
 * of other users than root), with nothing mounted on it. 0, or the exit
 * status having said why in one line.
 */
static int check_mountpoint(const char *mnt)
{
	struct stat st;
	char what[PATH_MAX + 80];
	if (strncmp(mnt, "/dev/fd/", 8) == 0)
		return 0; /* a /dev/fuse descriptor passed by a parent process */
	if (stat(mnt, &st) != 0) {
		int e = errno;
		if (e == ENOTCONN) {
			fprintf(stderr,
				"kvfs: %s: mount point busy: a FUSE mount whose daemon has gone is "
				"still there (fusermount3 -u %s)\n",
				mnt, mnt);
		} else if (e == EACCES) {
			fprintf(stderr, "kvfs: %s: mount point: permission denied\n", mnt);
			return EXIT_PERM;
		} else if (e == ENOENT) {
			fprintf(stderr,
				"kvfs: %s: no such mount point (create the directory first)\n",
				mnt);
		} else {
			fprintf(stderr, "kvfs: %s: mount point: %s\n", mnt, strerror(e));
		}
		return EXIT_MNT;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, "kvfs: %s: the mount point is not a directory\n", mnt);
		return EXIT_MNT;
	}
	/* Root may mount on a read-only file system (EROFS): only EACCES. */
	if (access(mnt, W_OK) != 0 && errno == EACCES) {
		fprintf(stderr, "kvfs: %s: mount point: permission denied (it must be writable)\n",
			mnt);
		return EXIT_PERM;
	}
	char *abs = realpath(mnt, NULL);
	bool busy = abs && is_mounted(abs, what, sizeof(what));
	free(abs);
	if (busy) {
		fprintf(stderr,
			"kvfs: %s: mount point busy: %s is mounted there (unmount it first)\n", mnt,
			what);
		return EXIT_MNT;
	}
	return 0;
}

/* The exit status for a database that ks_open() refused with rc. */
static int open_status(int rc)
{
	switch (rc) {
	case -ENOENT:
	case -ENOTDIR:
		return EXIT_NODB;
	case -EACCES:
	case -EPERM:
		return EXIT_PERM;
	case -EMEDIUMTYPE:
		return EXIT_NOTKV;
	case -EBUSY:
		return EXIT_LOCKED;
	case -EINVAL:
		return EXIT_USAGE; /* a -o follow_dir= that cannot be */
	default:
		return EXIT_FAIL;
	}
}

/* Do the database directories a and b name the same RocksDB directory
 * (DIR and DIR/db of a Kvrocks data directory do)? */
static bool same_database(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	struct buf cur = BUF_INIT;
	bool same = strcmp(a, b) == 0;
	if (!same && na == nb + 3 && strncmp(a, b, nb) == 0 && strcmp(a + nb, "/db") == 0)
		same = buf_printf(&cur, "%s/CURRENT", a) == 0 && access(cur.data, F_OK) == 0;
	else if (!same && nb == na + 3 && strncmp(b, a, na) == 0 && strcmp(b + na, "/db") == 0)
		same = buf_printf(&cur, "%s/CURRENT", b) == 0 && access(cur.data, F_OK) == 0;
	buf_release(&cur);
	return same;
}

struct kvfs_mount {
	const char *dbdir;
	char **mnt;
	bool *ro;
};

/* A read-write mount ends the walk; a read-only one (-o ro, a follower)
 * is kept while none is found. */
static bool match_kvfs(const struct mount_line *m, void *arg)
{
	struct kvfs_mount *a = arg;
	if (strcmp(m->type, "fuse.kvfs") != 0 || strncmp(m->src, "kvfs:", 5) != 0 ||
	    !same_database(m->src + 5, a->dbdir))
		return false;
	/* The per-mount options: "ro,..." or "rw,...". */
	bool ro = strncmp(m->opts, "ro", 2) == 0 && (m->opts[2] == ',' || !m->opts[2]);
	if (ro && *a->mnt)
		return false;
	char *p = strdup(m->point);
	if (!p)
		return false;
	free(*a->mnt);
	*a->mnt = p;
	*a->ro = ro;
	return !ro;
}

/*
 * The kvfs mount of the database dbdir (an absolute, resolved path: what
 * the daemon names its mount "kvfs:DBDIR" with; DIR and DIR/db are the
 * same database), from mountinfo: true with its mount point (malloc'd,
 * *mnt) and whether it is read-only.
 */
static bool find_kvfs_mount(const char *dbdir, char **mnt, bool *ro)
{
	struct kvfs_mount a = {dbdir, mnt, ro};
	*mnt = NULL;
	return mountinfo_find(match_kvfs, &a) || *mnt != NULL;
}

/* Does a process hold RocksDB's lock (an fcntl lock on LOCK) of the
 * database in dbdir (DIR/db or DIR)? A probe: this process holds no lock
 * there that closing the descriptor could drop. */
static bool database_is_locked(const char *dbdir)
{
	struct buf p = BUF_INIT;
	struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
	bool locked = false;
	bool kvrocks = buf_printf(&p, "%s/db/CURRENT", dbdir) == 0 && access(p.data, F_OK) == 0;
	buf_reset(&p);
	int rc = buf_printf(&p, kvrocks ? "%s/db/LOCK" : "%s/LOCK", dbdir);
	int fd = rc == 0 ? open(p.data, O_RDONLY | O_CLOEXEC) : -1;
	if (fd >= 0) {
		locked = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK;
		close(fd);
	}
	buf_release(&p);
	return locked;
}

/* Say why a snapshot into dest failed with errno e, in one line. */
static void snapshot_failed(const char *dest, const char *mnt, int e)
{
	switch (e) {
	case EEXIST:
		fprintf(stderr, "kvfs snapshot: %s exists (or %s.tmp does): give a new directory\n",
			dest, dest);
		break;
	case ENOENT:
	case ENOTDIR:
		fprintf(stderr, "kvfs snapshot: %s: its parent directory does not exist\n", dest);
		break;
	case EPERM:
		fprintf(stderr,
			"kvfs snapshot: only the owner of the mount %s (the user its kvfs runs as) "
			"or root may take a snapshot of it\n",
			mnt ? mnt : "?");
		break;
	case EACCES:
		if (mnt)
			fprintf(
			    stderr,
			    "kvfs snapshot: %s: permission denied: only the owner of the mount %s "
			    "or root may take a snapshot of it, and the daemon (running as the "
			    "owner) must be able to write in DEST's directory\n",
			    dest, mnt);
		else
			fprintf(stderr,
				"kvfs snapshot: %s: permission denied (cannot write there)\n",
				dest);
		break;
	case ENOTSUP:
		fprintf(stderr,
			"kvfs snapshot: the kvfs mounted at %s takes no snapshots (an older "
			"kvfs): unmount it, or remount it with this one\n",
			mnt ? mnt : "?");
		break;
	default:
		fprintf(stderr, "kvfs snapshot: %s: %s%s\n", dest, strerror(e),
			mnt ? " (the daemon's log says more)" : "");
	}
}

/*
 * kvfs snapshot [-o cluster] DBDIR DEST: a RocksDB checkpoint of DBDIR in
 * the new directory DEST. RocksDB's lock lets one process open a
 * database for writing: when a kvfs daemon has DBDIR mounted read-write,
 * that daemon is asked (user.kvfs.snapshot on its root) and makes it; a
 * read-only mount holds no lock, and the database is opened read-only
 * here beside it; else it is opened here, which takes the lock and so
 * also finds a running Kvrocks.
 */
static int cmd_snapshot(int argc, char *argv[])
{
	struct ks_options kopt = {0};
	const char *args[2] = {NULL, NULL};
	int nargs = 0, ret = EXIT_USAGE;
	char *dbdir = NULL, *dest = NULL, *mnt = NULL;
	struct keyspace *ks = NULL;
	bool ro = false;

	/* The one line printed says what was made; the store's "made in N ms"
	 * and "closed" lines are for -v (a cron job mails what it prints). */
	log_level_current = LOG_LEVEL_WARN;
	for (int i = 1; i < argc; i++) {
		if (sub_option(argc, argv, &i, &kopt))
			continue;
		if (argv[i][0] != '-' && nargs < 2)
			args[nargs++] = argv[i];
		else
			nargs = 3, i = argc; /* anything else is a usage error */
	}
	if (nargs != 2 || !args[0][0] || !args[1][0]) {
		fprintf(stderr, "usage: kvfs snapshot [-o cluster] DBDIR DEST\n");
		return EXIT_USAGE;
	}
	ret = EXIT_FAIL;
	dbdir = realpath(args[0], NULL);
	if (!dbdir) {
		int e = errno;
		fprintf(stderr, "kvfs snapshot: %s: %s\n", args[0],
			e == ENOENT ? "no such directory" : strerror(e));
		ret = e == ENOENT || e == ENOTDIR ? EXIT_NODB : e == EACCES ? EXIT_PERM : EXIT_FAIL;
		goto out;
	}
	if (!(dest = absolute_path(args[1]))) {
		fprintf(stderr, "kvfs snapshot: out of memory\n");
		goto out;
	}
	struct stat st;
	if (lstat(dest, &st) == 0) {
		snapshot_failed(dest, NULL, EEXIST);
		goto out;
	}
	if (find_kvfs_mount(dbdir, &mnt, &ro) && !ro) {
		if (setxattr(mnt, "user.kvfs.snapshot", dest, strlen(dest), 0) != 0) {
			int e = errno;
			snapshot_failed(dest, mnt, e);
			ret = e == EPERM || e == EACCES ? EXIT_PERM : EXIT_FAIL;
			goto out;
		}
		printf("%s: snapshot in %s (made by the kvfs mounted at %s)\n", dbdir, dest, mnt);
		ret = 0;
		goto out;
	}
	/* Never create a database here: a snapshot of one that exists. */
	if (!database_exists(dbdir)) {
		fprintf(stderr, "kvfs snapshot: %s: no database there\n", dbdir);
		ret = EXIT_NODB;
		goto out;
	}
	/* A read-only open takes no lock, and would not see a writer that
	 * deletes the files it is about to link. */
	kopt.read_only = ro;
	int rc = ro && database_is_locked(dbdir) ? -EBUSY : ks_open(dbdir, &kopt, &ks);
	if (rc == -EBUSY) {
		fprintf(stderr,
			"kvfs snapshot: %s is held by another process, and no kvfs has it mounted: "
			"for a running Kvrocks use its own backup (BGSAVE writes a checkpoint to "
			"its backup-dir) and mount that with kvfs -o ro\n",
			dbdir);
		ret = EXIT_LOCKED;
		goto out;
	}
	if (rc) {
		fprintf(stderr, "kvfs snapshot: cannot open %s: %s\n", dbdir, strerror(-rc));
		ret = open_status(rc);
		goto out;
	}
	rc = ks_checkpoint(ks, dest);
	if (rc) {
		snapshot_failed(dest, NULL, -rc);
		ret = rc == -EACCES ? EXIT_PERM : EXIT_FAIL;
		goto out;
	}
	printf("%s: snapshot in %s\n", dbdir, dest);
	ret = 0;
out:
	ks_close(ks);
	free(mnt);
	free(dest);
	free(dbdir);
	return ret;
}

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	(void)outargs;
	struct options *o = data;
	switch (key) {
	case KEY_RO:
		o->read_only = 1;
		return 1; /* the kernel mount is read-only too */
	case KEY_ALLOW_OTHER:
		o->allow_other = 1;
		return 1; /* for the kernel */
	case KEY_DEFAULT_PERMISSIONS:
		o->default_permissions = 1;
		return 1;
	case FUSE_OPT_KEY_NONOPT:
		if (o->nonopts++ == 0) {
			o->dbdir = absolute_path(arg);
			return o->dbdir ? 0 : -1;
		}
		if (o->nonopts == 2 && !(o->mnt = strdup(arg)))
			return -1;
		return 1; /* the mount point: fuse_parse_cmdline takes it */
	default:
		if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
			log_level_current = LOG_LEVEL_DEBUG;
			return 0;
		}
		if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0 ||
		    strcmp(arg, "-V") == 0 || strcmp(arg, "--version") == 0)
			o->info = true;
		return 1;
	}
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts copts;
	struct options o = {
	    .timeout = 10.0,
	    .threads = KVFS_THREADS,
	    .uid = getuid(),
	    .gid = getgid(),
	    .umask = 022,
	    .follow_ms = FOLLOW_MS,
	};
	struct fuse_loop_config *lcfg = NULL;
	struct fuse_session *se = NULL;
	struct keyspace *ks = NULL;
	struct fs *fs = NULL;
	int report_fd = -1; /* to the waiting parent, until the mount is up */
	int ret = 1;

	memset(&copts, 0, sizeof(copts));
	if (argc >= 2 && strcmp(argv[1], "compact") == 0) {
		fuse_opt_free_args(&args);
		return cmd_compact(argc - 1, argv + 1);
	}
	if (argc >= 2 && strcmp(argv[1], "snapshot") == 0) {
		fuse_opt_free_args(&args);
		return cmd_snapshot(argc - 1, argv + 1);
	}
	ret = EXIT_USAGE;
	if (fuse_opt_parse(&args, &o, option_spec, opt_proc) != 0)
		goto out_args;
	if (parse_numbers(&o) != 0)
		goto out_args;
	if (o.ns && (strlen(o.ns) == 0 || strlen(o.ns) > 255)) {
		fprintf(stderr, "kvfs: -o ns=NAME: the name must have 1 to 255 bytes\n");
		goto out_args;
	}
	if (o.ns && strcmp(o.ns, KS_RESERVED_NS) == 0) {
		fprintf(stderr, "kvfs: -o ns=%s: that namespace is kvfs's own\n", KS_RESERVED_NS);
		goto out_args;
	}
	if (o.follow_dir && !o.follow) {
		fprintf(stderr, "kvfs: -o follow_dir=PATH needs -o follow\n");
		goto out_args;
	}
	/* A follower is read-only, for the kernel too; its caches keep
	 * nothing longer than a catch-up period. */
	if (o.follow) {
		if (!o.read_only && fuse_opt_add_arg(&args, "-oro") != 0)
			goto out_args;
		o.read_only = 1;
		if (o.timeout > o.follow_ms / 1000.0)
			o.timeout = o.follow_ms / 1000.0;
	}
	/* kvfs stores modes and owners: with other users in, the kernel must
	 * enforce them (kvfs checks no permission itself). */
	if (o.allow_other && !o.default_permissions && !o.no_default_permissions &&
	    fuse_opt_add_arg(&args, "-odefault_permissions") != 0)
		goto out_args;
	if (o.allow_other && o.no_default_permissions && !o.default_permissions)
		fprintf(stderr, "kvfs: warning: -o allow_other,no_default_permissions: every user "
				"may read, change and remove every key, whatever its mode\n");
	/* Before libfuse, which resolves the mount point at once. */
	if (o.mnt && o.dbdir && !o.info && (ret = check_mountpoint(o.mnt)) != 0)
		goto out_args;
	ret = EXIT_USAGE;
	if (fuse_parse_cmdline(&args, &copts) != 0)
		goto out_args;
	if (copts.show_help) {
		usage(argv[0]);
		fuse_cmdline_help();
		fuse_lowlevel_help();
		ret = 0;
		goto out_args;
	}
	if (copts.show_version) {
		printf("kvfs %s (libfuse %s)\n", KVFS_VERSION, fuse_pkgversion());
		ret = 0;
		goto out_args;
	}
	if (!o.dbdir || !copts.mountpoint) {
		fprintf(stderr, "usage: %s [options] DBDIR MOUNTPOINT (--help for more)\n",
			argv[0]);
		goto out_args;
	}

	char fsname[PATH_MAX + 16];
	snprintf(fsname, sizeof(fsname), "-ofsname=kvfs:%s,subtype=kvfs", o.dbdir);
	/* Commas in the path would split the option; escape them. */
	struct buf esc = BUF_INIT;
	for (const char *c = fsname; *c; c++) {
		if (*c == ',' && c > fsname + 9 && strncmp(c, ",subtype=kvfs", 13) != 0)
			buf_add(&esc, "\\", 1);
		buf_add(&esc, c, 1);
	}
	fuse_opt_add_arg(&args, esc.data);
	buf_release(&esc);

	ret = EXIT_FAIL;
	if (!copts.foreground) {
		if (daemon_start(&report_fd) != 0) {
			perror("kvfs: fork");
			goto out_args;
		}
	}
	if (chdir("/") != 0)
		LOG_WARN("chdir /: %s", strerror(errno));
	struct ks_options kopt = {
	    .cluster = o.cluster,
	    .read_only = o.read_only,
	    .follow = o.follow,
	    .follow_dir = o.follow_dir,
	};
	int rc = ks_open(o.dbdir, &kopt, &ks);
	if (rc) {
		/* The store said what is wrong, in one line, but for this. */
		if (rc == -ENOMEM)
			LOG_ERR("cannot open database %s: %s", o.dbdir, strerror(-rc));
		ret = open_status(rc);
		goto out_args;
	}
	struct fs_options fopt = {
	    .ns = o.ns,
	    .dbdir = o.dbdir,
	    .timeout = o.timeout,
	    .read_only = o.read_only,
	    .uid = o.uid,
	    .gid = o.gid,
	    .umask = o.umask & 0777,
	    .threads = copts.singlethread ? 1 : o.threads,
	    .follow_ms = o.follow ? o.follow_ms : 0,
	};
	fs = fs_new(ks, &fopt);
	if (!fs) {
		fprintf(stderr, "kvfs: out of memory\n");
		goto out_ks;
	}
	se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), fs);
	if (!se) {
		ret = EXIT_USAGE; /* libfuse said which option it does not know */
		goto out_fs;
	}
	fs_set_session(fs, se);
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, copts.mountpoint) != 0)
		goto out_signals;
	daemon_ready(&report_fd, 0);
	LOG_INFO("mounted %s on %s", o.dbdir, copts.mountpoint);

	if (copts.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		lcfg = fuse_loop_cfg_create();
		if (!lcfg) {
			ret = 1;
			goto out_unmount;
		}
		fuse_loop_cfg_set_clone_fd(lcfg, copts.clone_fd);
		unsigned threads = o.threads;
		fuse_loop_cfg_set_max_threads(lcfg, threads);
		fuse_loop_cfg_set_idle_threads(
		    lcfg, threads < KVFS_IDLE_THREADS ? threads : KVFS_IDLE_THREADS);
		ret = fuse_session_loop_mt(se, lcfg);
	}
	/* A signal-requested exit is a clean one. */
	if (ret > 0 || ret == -EINTR)
		ret = 0;
	ret = ret ? 1 : 0;
	LOG_INFO("unmounting %s", copts.mountpoint);
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	/* A session that ended before INIT had no destroy: the threads that
	 * send notifications stop before it goes. */
	fs_set_session(fs, NULL);
	fuse_session_destroy(se);
out_fs:
	fs_free(fs);
out_ks:
	ks_close(ks);
out_args:
	daemon_ready(&report_fd, (char)(ret ? ret : 1));
	if (lcfg)
		fuse_loop_cfg_destroy(lcfg);
	free(copts.mountpoint);
	free(o.dbdir);
	free(o.mnt);
	free(o.ns);
	free(o.timeout_arg);
	free(o.threads_arg);
	free(o.uid_arg);
	free(o.gid_arg);
	free(o.umask_arg);
	free(o.follow_arg);
	free(o.follow_dir);
	fuse_opt_free_args(&args);
	return ret;
}
