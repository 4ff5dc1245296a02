/*
 * main: command line, mount, signals and the session loop.
 *   kvfs [-f] [-d] [-s] [-o OPTIONS] DBDIR MOUNTPOINT
 *   kvfs compact [-o cluster] DBDIR     (offline garbage collection)
 * Layer: main (may include everything).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fs.h"
#include "keyspace.h"
#include "util.h"

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
	char *ns;
	int cluster;
	int read_only;
	double timeout;
	int threads;
	unsigned uid, gid, umask;
	int nonopts;
};

enum { KEY_RO, KEY_HELP, KEY_VERSION };

#define OPT(t, p) { t, offsetof(struct options, p), 1 }
static const struct fuse_opt option_spec[] = {
	{ "ns=%s", offsetof(struct options, ns), 0 },
	OPT("cluster", cluster),
	{ "timeout=%lf", offsetof(struct options, timeout), 0 },
	{ "threads=%d", offsetof(struct options, threads), 0 },
	{ "uid=%u", offsetof(struct options, uid), 0 },
	{ "gid=%u", offsetof(struct options, gid), 0 },
	{ "umask=%o", offsetof(struct options, umask), 0 },
	FUSE_OPT_KEY("ro", KEY_RO),
	FUSE_OPT_END,
};

static void usage(const char *prog)
{
	printf("usage: %s [options] DBDIR MOUNTPOINT\n\n"
	       "Mount the Kvrocks-compatible RocksDB database in DBDIR (a Kvrocks data\n"
	       "directory holding db/, a plain RocksDB directory, or a new directory) at\n"
	       "MOUNTPOINT. See docs/mapping.md for the tree.\n\n"
	       "kvfs options:\n"
	       "    -o ro              read-only (RocksDB opened read-only)\n"
	       "    -o ns=NAME         mount only namespace NAME at the root\n"
	       "    -o cluster         keys carry Kvrocks cluster slots\n"
	       "    -o timeout=SEC     kernel attribute/entry cache time (default 10)\n"
	       "    -o threads=N       most FUSE worker threads (default 32)\n"
	       "    -o uid=N,gid=N     owner of files without a stored owner (default: yours)\n"
	       "    -o umask=M         permissions of files without stored ones (default 022)\n"
	       "    -v, --verbose      debug logging\n\n"
	       "usage: %s compact [-o cluster] DBDIR\n\n"
	       "Compact the database in DBDIR (not mounted) so that Kvrocks's compaction\n"
	       "filters drop deleted, re-created and expired data now; prints the size\n"
	       "before and after. See docs/architecture.md.\n\n",
	       prog, prog);
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
		if (strcmp(argv[i], "-o") == 0 && i + 1 < argc && strcmp(argv[i + 1], "cluster") == 0)
			kopt.cluster = true, i++;
		else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0)
			log_level_current = LOG_LEVEL_DEBUG;
		else if (argv[i][0] != '-' && !dir)
			dir = argv[i];
		else
			dir = NULL, i = argc; /* anything else is a usage error */
	}
	if (!dir) {
		fprintf(stderr, "usage: kvfs compact [-o cluster] DBDIR\n");
		return 2;
	}
	/* Never create a database here: only compact one that exists. */
	struct buf cur = BUF_INIT, cur2 = BUF_INIT;
	bool exists = buf_printf(&cur, "%s/db/CURRENT", dir) == 0 &&
		      buf_printf(&cur2, "%s/CURRENT", dir) == 0 &&
		      (access(cur.data, F_OK) == 0 || access(cur2.data, F_OK) == 0);
	buf_release(&cur);
	buf_release(&cur2);
	if (!exists) {
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

static int opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	(void)outargs;
	struct options *o = data;
	switch (key) {
	case KEY_RO:
		o->read_only = 1;
		return 1; /* the kernel mount is read-only too */
	case FUSE_OPT_KEY_NONOPT:
		if (o->nonopts++ == 0) {
			o->dbdir = absolute_path(arg);
			return o->dbdir ? 0 : -1;
		}
		return 1; /* the mount point: fuse_parse_cmdline takes it */
	default:
		if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0) {
			log_level_current = LOG_LEVEL_DEBUG;
			return 0;
		}
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
	if (fuse_opt_parse(&args, &o, option_spec, opt_proc) != 0)
		goto out_args;
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
	if (o.ns && (strlen(o.ns) == 0 || strlen(o.ns) > 255)) {
		fprintf(stderr, "kvfs: -o ns=NAME: the name must have 1 to 255 bytes\n");
		goto out_args;
	}
	if (o.ns && strcmp(o.ns, KS_RESERVED_NS) == 0) {
		fprintf(stderr, "kvfs: -o ns=%s: that namespace is kvfs's own\n", KS_RESERVED_NS);
		goto out_args;
	}
	if (o.timeout < 0)
		o.timeout = 0;

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

	if (!copts.foreground) {
		if (daemon_start(&report_fd) != 0) {
			perror("kvfs: fork");
			goto out_args;
		}
	}
	if (chdir("/") != 0)
		LOG_WARN("chdir /: %s", strerror(errno));
	struct ks_options kopt = { .cluster = o.cluster, .read_only = o.read_only };
	int rc = ks_open(o.dbdir, &kopt, &ks);
	if (rc) {
		LOG_ERR("cannot open database %s: %s", o.dbdir, strerror(-rc));
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
	};
	fs = fs_new(ks, &fopt);
	if (!fs) {
		fprintf(stderr, "kvfs: out of memory\n");
		goto out_ks;
	}
	se = fuse_session_new(&args, &fs_ops, sizeof(fs_ops), fs);
	if (!se)
		goto out_fs;
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
		unsigned threads = (unsigned)(o.threads > 0 ? o.threads : KVFS_THREADS);
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
	free(o.ns);
	fuse_opt_free_args(&args);
	return ret;
}
