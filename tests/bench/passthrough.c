/*
 * passthrough: the FUSE yardstick of `make bench`. A minimal passthrough
 * file system over one directory, low-level API, multi-threaded loop; what
 * kvfs is compared with to separate the cost of FUSE from the cost of kvfs.
 * Layer: benchmark tool (not part of kvfs; uses libc and libfuse only).
 *
 *   passthrough [-f] [-d] [-o timeout=SEC] [-o threads=N] [-o maxfds=N]
 *               SOURCE MOUNTPOINT
 *
 * Inodes: as libfuse's passthrough_ll, each inode the kernel knows is a
 * struct pt_inode found by (st_dev, st_ino), counted by lookups and freed
 * by forget, and holds an O_PATH descriptor of the file; the FUSE inode
 * number is the struct's address. One difference: this machine caps open
 * descriptors at 20,000 and the benchmarks make more files than that, so
 * the O_PATH descriptors are a cache. Past `maxfds` of them, the oldest
 * ones not in use are closed, keeping a file handle (name_to_handle_at)
 * from which open_by_handle_at reopens them on the next use. Below the cap
 * nothing differs from passthrough_ll. An operation pins the descriptor it
 * uses, so a concurrent eviction never closes it under that operation.
 *
 * Tuning, the same as kvfs's where they share a knob: entry and attribute
 * timeouts (-o timeout, default 10 s), keep_cache on every open, no flush
 * for read-only opens, readdirplus in auto mode, no writeback cache.
 * Only what a plain directory tree needs: regular files and directories
 * (no symlinks, links, device nodes, xattrs or locks).
 */
#define FUSE_USE_VERSION 314
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse_lowlevel.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* One file or directory the kernel holds a reference to. */
struct pt_inode {
	struct pt_inode *hnext;		/* hash chain */
	struct pt_inode *fprev, *fnext; /* descriptor list, oldest first */
	dev_t dev;
	ino_t ino;
	int fd;			/* O_PATH descriptor, -1 while evicted */
	unsigned pins;		/* operations using fd right now */
	uint64_t nlookup;	/* kernel references; freed at zero */
	struct file_handle *fh; /* to reopen after an eviction, or NULL */
};

/* All daemon state. `lock` guards the table, the descriptor list, every
 * inode's nlookup, fd, pins and fh. */
struct pt {
	pthread_mutex_t lock;
	struct pt_inode root;	   /* never freed; FUSE_ROOT_ID */
	struct pt_inode **buckets; /* (dev, ino) hash table */
	size_t nbuckets;
	size_t ninodes;
	struct pt_inode *fhead, *ftail; /* inodes with an open fd */
	size_t nfds;
	size_t maxfds;	 /* evict above this many O_PATH descriptors */
	bool no_handles; /* the source cannot make file handles: never evict */
	int mount_fd;	 /* a plain (not O_PATH) descriptor of the source root,
			  * which open_by_handle_at needs */
	double timeout;
};

/* An open directory. */
struct pt_dir {
	DIR *dp;
	off_t offset;
	struct dirent *entry; /* read but not yet sent, or NULL */
};

static struct pt *pt_of(fuse_req_t req)
{
	return fuse_req_userdata(req);
}

static struct pt_inode *inode_of(struct pt *pt, fuse_ino_t ino)
{
	if (ino == FUSE_ROOT_ID)
		return &pt->root;
	return (struct pt_inode *)(uintptr_t)ino;
}

/* ---------------------------------------------------- the inode table */

static size_t bucket_of(const struct pt *pt, dev_t dev, ino_t ino)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ull ^ (uint64_t)dev;
	return (size_t)(h ^ (h >> 29)) & (pt->nbuckets - 1);
}

/* Double the table when it is full on average. Caller holds the lock. */
static void table_grow(struct pt *pt)
{
	size_t n = pt->nbuckets * 2;
	struct pt_inode **nb = calloc(n, sizeof(*nb));
	if (!nb)
		return; /* longer chains; still correct */
	struct pt_inode **old = pt->buckets;
	size_t oldn = pt->nbuckets;
	pt->buckets = nb;
	pt->nbuckets = n;
	for (size_t i = 0; i < oldn; i++) {
		struct pt_inode *in = old[i], *next;
		for (; in; in = next) {
			next = in->hnext;
			size_t b = bucket_of(pt, in->dev, in->ino);
			in->hnext = nb[b];
			nb[b] = in;
		}
	}
	free(old);
}

static struct pt_inode *table_find(struct pt *pt, dev_t dev, ino_t ino)
{
	if (pt->root.dev == dev && pt->root.ino == ino)
		return &pt->root;
	for (struct pt_inode *in = pt->buckets[bucket_of(pt, dev, ino)]; in; in = in->hnext)
		if (in->dev == dev && in->ino == ino)
			return in;
	return NULL;
}

static void table_remove(struct pt *pt, struct pt_inode *victim)
{
	struct pt_inode **pp = &pt->buckets[bucket_of(pt, victim->dev, victim->ino)];
	for (; *pp; pp = &(*pp)->hnext) {
		if (*pp == victim) {
			*pp = victim->hnext;
			pt->ninodes--;
			return;
		}
	}
}

/* ------------------------------------------- the O_PATH descriptor cache */

static void fdlist_add(struct pt *pt, struct pt_inode *in)
{
	in->fnext = NULL;
	in->fprev = pt->ftail;
	if (pt->ftail)
		pt->ftail->fnext = in;
	else
		pt->fhead = in;
	pt->ftail = in;
	pt->nfds++;
}

static void fdlist_del(struct pt *pt, struct pt_inode *in)
{
	if (in->fprev)
		in->fprev->fnext = in->fnext;
	else
		pt->fhead = in->fnext;
	if (in->fnext)
		in->fnext->fprev = in->fprev;
	else
		pt->ftail = in->fprev;
	in->fprev = in->fnext = NULL;
	pt->nfds--;
}

/* Close the oldest unpinned descriptors until 1/16 of the cap is free.
 * An inode whose handle cannot be taken keeps its descriptor. Caller holds
 * the lock. */
static void fd_evict(struct pt *pt)
{
	size_t goal = pt->maxfds - pt->maxfds / 16;
	struct pt_inode *in = pt->fhead, *next;
	if (pt->no_handles)
		return;
	for (; in && pt->nfds > goal; in = next) {
		next = in->fnext;
		if (in->pins || in == &pt->root)
			continue;
		if (!in->fh) {
			struct file_handle *h = malloc(sizeof(*h) + MAX_HANDLE_SZ);
			int mount_id;
			if (!h)
				return;
			h->handle_bytes = MAX_HANDLE_SZ;
			if (name_to_handle_at(in->fd, "", h, &mount_id, AT_EMPTY_PATH) != 0) {
				if (errno == EOPNOTSUPP || errno == ENOSYS) {
					fprintf(stderr, "passthrough: no file handles on the "
							"source: keeping every descriptor\n");
					pt->no_handles = true;
				}
				free(h);
				if (pt->no_handles)
					return;
				continue;
			}
			in->fh = h;
		}
		fdlist_del(pt, in);
		close(in->fd);
		in->fd = -1;
	}
}

/* Give `in` the descriptor fd (it had none). Caller holds the lock. */
static void fd_adopt(struct pt *pt, struct pt_inode *in, int fd)
{
	in->fd = fd;
	if (in != &pt->root) {
		fdlist_add(pt, in);
		if (pt->nfds > pt->maxfds)
			fd_evict(pt);
	}
}

/* The O_PATH descriptor of ino, pinned until inode_unpin. >= 0 or -errno. */
static int inode_pin(struct pt *pt, fuse_ino_t ino)
{
	struct pt_inode *in = inode_of(pt, ino);
	int fd;
	pthread_mutex_lock(&pt->lock);
	if (in->fd < 0) {
		fd = in->fh ? open_by_handle_at(pt->mount_fd, in->fh, O_PATH | O_NOFOLLOW) : -1;
		if (fd < 0) {
			fd = -(in->fh ? errno : ESTALE);
			pthread_mutex_unlock(&pt->lock);
			return fd;
		}
		in->pins++; /* before the adoption may evict */
		fd_adopt(pt, in, fd);
	} else {
		in->pins++;
	}
	fd = in->fd;
	pthread_mutex_unlock(&pt->lock);
	return fd;
}

static void inode_unpin(struct pt *pt, fuse_ino_t ino)
{
	struct pt_inode *in = inode_of(pt, ino);
	pthread_mutex_lock(&pt->lock);
	in->pins--;
	pthread_mutex_unlock(&pt->lock);
}

/* Drop n kernel references; free the inode at zero. */
static void inode_forget(struct pt *pt, fuse_ino_t ino, uint64_t n)
{
	struct pt_inode *in = inode_of(pt, ino);
	if (in == &pt->root)
		return;
	pthread_mutex_lock(&pt->lock);
	if (n > in->nlookup)
		n = in->nlookup; /* a kernel bug; never underflow */
	in->nlookup -= n;
	if (in->nlookup > 0) {
		pthread_mutex_unlock(&pt->lock);
		return;
	}
	table_remove(pt, in);
	if (in->fd >= 0)
		fdlist_del(pt, in);
	pthread_mutex_unlock(&pt->lock);
	if (in->fd >= 0)
		close(in->fd);
	free(in->fh);
	free(in);
}

/* ------------------------------------------------------------ helpers */

/* /proc/self/fd/N: how an O_PATH descriptor is reopened for I/O. */
static void proc_path(char *out, size_t n, int fd)
{
	snprintf(out, n, "/proc/self/fd/%d", fd);
}

/* Look `name` up in `parent`, taking one reference on its inode. 0 or an
 * errno; e filled for a reply. */
static int do_lookup(struct pt *pt, fuse_ino_t parent, const char *name, struct fuse_entry_param *e)
{
	int pfd, fd, err = 0;
	struct stat st;
	memset(e, 0, sizeof(*e));
	e->attr_timeout = pt->timeout;
	e->entry_timeout = pt->timeout;

	pfd = inode_pin(pt, parent);
	if (pfd < 0)
		return -pfd;
	fd = openat(pfd, name, O_PATH | O_NOFOLLOW);
	err = fd < 0 ? errno : 0;
	inode_unpin(pt, parent);
	if (err)
		return err;
	if (fstatat(fd, "", &st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0) {
		err = errno;
		close(fd);
		return err;
	}

	pthread_mutex_lock(&pt->lock);
	struct pt_inode *in = table_find(pt, st.st_dev, st.st_ino);
	if (in) {
		in->nlookup++;
		if (in->fd < 0) {
			fd_adopt(pt, in, fd);
			fd = -1;
		}
	} else {
		in = calloc(1, sizeof(*in));
		if (!in) {
			pthread_mutex_unlock(&pt->lock);
			close(fd);
			return ENOMEM;
		}
		in->dev = st.st_dev;
		in->ino = st.st_ino;
		in->nlookup = 1;
		in->fd = -1;
		size_t b = bucket_of(pt, in->dev, in->ino);
		in->hnext = pt->buckets[b];
		pt->buckets[b] = in;
		if (++pt->ninodes > pt->nbuckets)
			table_grow(pt);
		fd_adopt(pt, in, fd);
		fd = -1;
	}
	pthread_mutex_unlock(&pt->lock);
	if (fd >= 0)
		close(fd); /* the inode had one already */
	e->ino = in == &pt->root ? FUSE_ROOT_ID : (fuse_ino_t)(uintptr_t)in;
	e->attr = st;
	return 0;
}

static int stat_ino(struct pt *pt, fuse_ino_t ino, struct stat *st)
{
	int fd = inode_pin(pt, ino);
	if (fd < 0)
		return -fd;
	int err = fstatat(fd, "", st, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) ? errno : 0;
	inode_unpin(pt, ino);
	return err;
}

/* --------------------------------------------------------- operations */

static void pt_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO;
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	conn->want &= ~(unsigned)(FUSE_CAP_WRITEBACK_CACHE | FUSE_CAP_SPLICE_READ |
				  FUSE_CAP_SPLICE_WRITE | FUSE_CAP_SPLICE_MOVE);
}

static void pt_lookup(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct pt *pt = pt_of(req);
	struct fuse_entry_param e;
	int err = do_lookup(pt, parent, name, &e);
	if (err == ENOENT) {
		/* a negative entry, cached like a positive one */
		memset(&e, 0, sizeof(e));
		e.entry_timeout = pt->timeout;
		fuse_reply_entry(req, &e);
	} else if (err) {
		fuse_reply_err(req, err);
	} else {
		fuse_reply_entry(req, &e);
	}
}

static void pt_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	inode_forget(pt_of(req), ino, nlookup);
	fuse_reply_none(req);
}

static void pt_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct pt *pt = pt_of(req);
	for (size_t i = 0; i < count; i++)
		inode_forget(pt, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void pt_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	struct pt *pt = pt_of(req);
	struct stat st;
	int err = stat_ino(pt, ino, &st);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_attr(req, &st, pt->timeout);
}

static void pt_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int valid,
		       struct fuse_file_info *fi)
{
	struct pt *pt = pt_of(req);
	char path[64];
	int err = 0;
	int fd = inode_pin(pt, ino);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	proc_path(path, sizeof(path), fd);

	if (valid & FUSE_SET_ATTR_MODE) {
		if ((fi ? fchmod((int)fi->fh, attr->st_mode) : chmod(path, attr->st_mode)) != 0)
			goto fail;
	}
	if (valid & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		uid_t uid = valid & FUSE_SET_ATTR_UID ? attr->st_uid : (uid_t)-1;
		gid_t gid = valid & FUSE_SET_ATTR_GID ? attr->st_gid : (gid_t)-1;
		if (fchownat(fd, "", uid, gid, AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW) != 0)
			goto fail;
	}
	if (valid & FUSE_SET_ATTR_SIZE) {
		if ((fi ? ftruncate((int)fi->fh, attr->st_size) : truncate(path, attr->st_size)) !=
		    0)
			goto fail;
	}
	if (valid & (FUSE_SET_ATTR_ATIME | FUSE_SET_ATTR_MTIME)) {
		struct timespec tv[2] = {{.tv_nsec = UTIME_OMIT}, {.tv_nsec = UTIME_OMIT}};
		if (valid & FUSE_SET_ATTR_ATIME_NOW)
			tv[0].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_ATIME)
			tv[0] = attr->st_atim;
		if (valid & FUSE_SET_ATTR_MTIME_NOW)
			tv[1].tv_nsec = UTIME_NOW;
		else if (valid & FUSE_SET_ATTR_MTIME)
			tv[1] = attr->st_mtim;
		if ((fi ? futimens((int)fi->fh, tv) : utimensat(AT_FDCWD, path, tv, 0)) != 0)
			goto fail;
	}
	goto out;
fail:
	err = errno;
out:
	inode_unpin(pt, ino);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	pt_getattr(req, ino, fi);
}

/* Shared tail of mkdir and create: look the new name up and reply. */
static void reply_new_entry(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	struct fuse_entry_param e;
	int err = do_lookup(pt_of(req), parent, name, &e);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_entry(req, &e);
}

static void pt_mkdir(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode)
{
	struct pt *pt = pt_of(req);
	int pfd = inode_pin(pt, parent);
	if (pfd < 0) {
		fuse_reply_err(req, -pfd);
		return;
	}
	int err = mkdirat(pfd, name, mode) ? errno : 0;
	inode_unpin(pt, parent);
	if (err)
		fuse_reply_err(req, err);
	else
		reply_new_entry(req, parent, name);
}

static void remove_entry(fuse_req_t req, fuse_ino_t parent, const char *name, int flags)
{
	struct pt *pt = pt_of(req);
	int pfd = inode_pin(pt, parent);
	if (pfd < 0) {
		fuse_reply_err(req, -pfd);
		return;
	}
	int err = unlinkat(pfd, name, flags) ? errno : 0;
	inode_unpin(pt, parent);
	fuse_reply_err(req, err);
}

static void pt_unlink(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, 0);
}

static void pt_rmdir(fuse_req_t req, fuse_ino_t parent, const char *name)
{
	remove_entry(req, parent, name, AT_REMOVEDIR);
}

static void pt_rename(fuse_req_t req, fuse_ino_t parent, const char *name, fuse_ino_t newparent,
		      const char *newname, unsigned int flags)
{
	struct pt *pt = pt_of(req);
	int err = 0;
	int pfd = inode_pin(pt, parent);
	if (pfd < 0) {
		fuse_reply_err(req, -pfd);
		return;
	}
	int npfd = inode_pin(pt, newparent);
	if (npfd < 0) {
		err = -npfd;
	} else {
		if (renameat2(pfd, name, npfd, newname, flags) != 0)
			err = errno;
		inode_unpin(pt, newparent);
	}
	inode_unpin(pt, parent);
	fuse_reply_err(req, err);
}

static void pt_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pt *pt = pt_of(req);
	struct pt_dir *d = calloc(1, sizeof(*d));
	int err = 0, fd = -1;
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	int ifd = inode_pin(pt, ino);
	if (ifd < 0) {
		err = -ifd;
		goto out;
	}
	fd = openat(ifd, ".", O_RDONLY | O_DIRECTORY);
	if (fd < 0)
		err = errno;
	inode_unpin(pt, ino);
	if (err)
		goto out;
	d->dp = fdopendir(fd);
	if (!d->dp) {
		err = errno;
		close(fd);
		goto out;
	}
	/* no cache_readdir: kvfs has none, so every listing is served here */
	fi->fh = (uint64_t)(uintptr_t)d;
	fuse_reply_open(req, fi);
	return;
out:
	free(d);
	fuse_reply_err(req, err);
}

static bool is_dot_or_dotdot(const char *name)
{
	return name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'));
}

static void do_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi, bool plus)
{
	struct pt *pt = pt_of(req);
	struct pt_dir *d = (struct pt_dir *)(uintptr_t)fi->fh;
	char *buf = malloc(size), *p = buf;
	size_t rem = size;
	int err = 0;
	if (!buf) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (off != d->offset) {
		seekdir(d->dp, off);
		d->entry = NULL;
		d->offset = off;
	}
	for (;;) {
		if (!d->entry) {
			errno = 0;
			d->entry = readdir(d->dp);
			if (!d->entry) {
				err = errno; /* 0 at the end */
				break;
			}
		}
		const char *name = d->entry->d_name;
		off_t next = d->entry->d_off;
		size_t n;
		if (plus) {
			struct fuse_entry_param e;
			if (is_dot_or_dotdot(name)) {
				/* no reference taken: a zero ino tells the
				 * kernel not to make an entry of it */
				memset(&e, 0, sizeof(e));
				e.attr.st_ino = d->entry->d_ino;
				e.attr.st_mode = (mode_t)d->entry->d_type << 12;
			} else {
				err = do_lookup(pt, ino, name, &e);
				if (err == ENOENT) { /* removed since readdir saw it */
					err = 0;
					d->entry = NULL;
					d->offset = next;
					continue;
				}
				if (err)
					break;
			}
			n = fuse_add_direntry_plus(req, p, rem, name, &e, next);
			if (n > rem) {
				if (e.ino)
					inode_forget(pt, e.ino, 1);
				break;
			}
		} else {
			struct stat st = {
			    .st_ino = d->entry->d_ino,
			    .st_mode = (mode_t)d->entry->d_type << 12,
			};
			n = fuse_add_direntry(req, p, rem, name, &st, next);
			if (n > rem)
				break;
		}
		p += n;
		rem -= n;
		d->entry = NULL;
		d->offset = next;
	}
	/* An error after some entries: send those; the next call sees it. */
	if (err && rem == size)
		fuse_reply_err(req, err);
	else
		fuse_reply_buf(req, buf, size - rem);
	free(buf);
}

static void pt_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, false);
}

static void pt_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
			   struct fuse_file_info *fi)
{
	do_readdir(req, ino, size, off, fi, true);
}

static void pt_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct pt_dir *d = (struct pt_dir *)(uintptr_t)fi->fh;
	closedir(d->dp);
	free(d);
	fuse_reply_err(req, 0);
}

static void pt_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	struct pt_dir *d = (struct pt_dir *)(uintptr_t)fi->fh;
	int fd = dirfd(d->dp);
	int rc = datasync ? fdatasync(fd) : fsync(fd);
	fuse_reply_err(req, rc ? errno : 0);
}

/* O_DIRECT is dropped: libfuse's buffers are not aligned for it, and the
 * source is a page-cache file system anyway. */
static int open_flags(int flags)
{
	return flags & ~(O_NOFOLLOW | O_DIRECT);
}

static void set_open_flags(struct fuse_file_info *fi)
{
	fi->keep_cache = 1;
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
}

static void pt_create(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct pt *pt = pt_of(req);
	struct fuse_entry_param e;
	int pfd = inode_pin(pt, parent);
	if (pfd < 0) {
		fuse_reply_err(req, -pfd);
		return;
	}
	int fd = openat(pfd, name, open_flags(fi->flags) | O_CREAT, mode);
	int err = fd < 0 ? errno : 0;
	inode_unpin(pt, parent);
	if (!err)
		err = do_lookup(pt, parent, name, &e);
	if (err) {
		if (fd >= 0)
			close(fd);
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)fd;
	set_open_flags(fi);
	if (fuse_reply_create(req, &e, fi) != 0) {
		/* the kernel never saw it: undo both */
		close(fd);
		inode_forget(pt, e.ino, 1);
	}
}

static void pt_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct pt *pt = pt_of(req);
	char path[64];
	int ifd = inode_pin(pt, ino);
	if (ifd < 0) {
		fuse_reply_err(req, -ifd);
		return;
	}
	proc_path(path, sizeof(path), ifd);
	int fd = open(path, open_flags(fi->flags));
	int err = fd < 0 ? errno : 0;
	inode_unpin(pt, ino);
	if (err) {
		fuse_reply_err(req, err);
		return;
	}
	fi->fh = (uint64_t)fd;
	set_open_flags(fi);
	if (fuse_reply_open(req, fi) != 0)
		close(fd);
}

static void pt_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	struct fuse_bufvec bv = FUSE_BUFVEC_INIT(size);
	bv.buf[0].flags = FUSE_BUF_IS_FD | FUSE_BUF_FD_SEEK;
	bv.buf[0].fd = (int)fi->fh;
	bv.buf[0].pos = off;
	fuse_reply_data(req, &bv, FUSE_BUF_NO_SPLICE);
}

static void pt_write(fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)ino;
	size_t done = 0;
	while (done < size) {
		ssize_t n = pwrite((int)fi->fh, data + done, size - done, off + (off_t)done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (done == 0) {
				fuse_reply_err(req, errno);
				return;
			}
			break;
		}
		if (n == 0)
			break;
		done += (size_t)n;
	}
	fuse_reply_write(req, done);
}

static void pt_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	/* close a duplicate: reports what close(2) of the original would */
	int rc = close(dup((int)fi->fh));
	fuse_reply_err(req, rc ? errno : 0);
}

static void pt_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	close((int)fi->fh);
	fuse_reply_err(req, 0);
}

static void pt_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	int fd = (int)fi->fh;
	int rc = datasync ? fdatasync(fd) : fsync(fd);
	fuse_reply_err(req, rc ? errno : 0);
}

static void pt_statfs(fuse_req_t req, fuse_ino_t ino)
{
	struct pt *pt = pt_of(req);
	struct statvfs sv;
	int fd = inode_pin(pt, ino);
	if (fd < 0) {
		fuse_reply_err(req, -fd);
		return;
	}
	int err = fstatvfs(fd, &sv) ? errno : 0;
	inode_unpin(pt, ino);
	if (err)
		fuse_reply_err(req, err);
	else
		fuse_reply_statfs(req, &sv);
}

static const struct fuse_lowlevel_ops pt_ops = {
    .init = pt_init,
    .lookup = pt_lookup,
    .forget = pt_forget,
    .forget_multi = pt_forget_multi,
    .getattr = pt_getattr,
    .setattr = pt_setattr,
    .mkdir = pt_mkdir,
    .unlink = pt_unlink,
    .rmdir = pt_rmdir,
    .rename = pt_rename,
    .opendir = pt_opendir,
    .readdir = pt_readdir,
    .readdirplus = pt_readdirplus,
    .releasedir = pt_releasedir,
    .fsyncdir = pt_fsyncdir,
    .create = pt_create,
    .open = pt_open,
    .read = pt_read,
    .write = pt_write,
    .flush = pt_flush,
    .release = pt_release,
    .fsync = pt_fsync,
    .statfs = pt_statfs,
};

/* ---------------------------------------------------------------- main */

struct pt_options {
	char *source;
	double timeout;
	int threads;
	long maxfds;
};

static const struct fuse_opt pt_opt_spec[] = {
    {"timeout=%lf", offsetof(struct pt_options, timeout), 0},
    {"threads=%d", offsetof(struct pt_options, threads), 0},
    {"maxfds=%ld", offsetof(struct pt_options, maxfds), 0},
    FUSE_OPT_END,
};

static int pt_opt_proc(void *data, const char *arg, int key, struct fuse_args *outargs)
{
	(void)outargs;
	struct pt_options *o = data;
	if (key == FUSE_OPT_KEY_NONOPT && !o->source) {
		o->source = strdup(arg);
		return 0;
	}
	return 1;
}

/* Raise the soft descriptor limit to the hard one; the O_PATH cache gets
 * all of it but a reserve for open files, directories and libfuse. */
static size_t fd_budget(long want)
{
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	getrlimit(RLIMIT_NOFILE, &rl);
	long avail = rl.rlim_cur == RLIM_INFINITY ? 1 << 20 : (long)rl.rlim_cur;
	avail = avail > 1088 ? avail - 1024 : 64;
	if (want > 0 && want < avail)
		avail = want;
	return (size_t)(avail < 64 ? 64 : avail);
}

int main(int argc, char *argv[])
{
	struct fuse_args args = FUSE_ARGS_INIT(argc, argv);
	struct fuse_cmdline_opts copts;
	struct pt_options o = {.timeout = 10.0, .threads = 4};
	struct fuse_loop_config *lcfg = NULL;
	struct fuse_session *se = NULL;
	struct pt pt;
	struct stat st;
	int ret = 1;

	memset(&copts, 0, sizeof(copts));
	memset(&pt, 0, sizeof(pt));
	pthread_mutex_init(&pt.lock, NULL);
	pt.root.fd = -1;
	pt.mount_fd = -1;
	umask(0); /* the kernel has applied the caller's umask */

	if (fuse_opt_parse(&args, &o, pt_opt_spec, pt_opt_proc) != 0)
		goto out;
	if (fuse_parse_cmdline(&args, &copts) != 0)
		goto out;
	if (copts.show_help || copts.show_version || !o.source || !copts.mountpoint) {
		printf("usage: %s [-f] [-d] [-o timeout=SEC] [-o threads=N] [-o maxfds=N] "
		       "SOURCE MOUNTPOINT\n",
		       argv[0]);
		if (copts.show_help)
			fuse_lowlevel_help();
		ret = copts.show_help || copts.show_version ? 0 : 1;
		goto out;
	}
	pt.timeout = o.timeout < 0 ? 0 : o.timeout;
	pt.maxfds = fd_budget(o.maxfds);
	pt.nbuckets = 1024;
	pt.buckets = calloc(pt.nbuckets, sizeof(*pt.buckets));
	if (!pt.buckets)
		goto out;
	pt.root.fd = open(o.source, O_PATH | O_DIRECTORY);
	if (pt.root.fd < 0 || fstat(pt.root.fd, &st) != 0) {
		fprintf(stderr, "passthrough: %s: %s\n", o.source, strerror(errno));
		goto out;
	}
	pt.mount_fd = open(o.source, O_RDONLY | O_DIRECTORY);
	if (pt.mount_fd < 0) {
		fprintf(stderr, "passthrough: %s: %s\n", o.source, strerror(errno));
		goto out;
	}
	pt.root.dev = st.st_dev;
	pt.root.ino = st.st_ino;
	pt.root.nlookup = 2;

	se = fuse_session_new(&args, &pt_ops, sizeof(pt_ops), &pt);
	if (!se)
		goto out;
	if (fuse_set_signal_handlers(se) != 0)
		goto out_session;
	if (fuse_session_mount(se, copts.mountpoint) != 0)
		goto out_signals;
	fuse_daemonize(copts.foreground);

	if (copts.singlethread) {
		ret = fuse_session_loop(se);
	} else {
		unsigned n = (unsigned)(o.threads > 0 ? o.threads : 4);
		lcfg = fuse_loop_cfg_create();
		if (!lcfg)
			goto out_unmount;
		fuse_loop_cfg_set_clone_fd(lcfg, copts.clone_fd);
		fuse_loop_cfg_set_max_threads(lcfg, n);
		fuse_loop_cfg_set_idle_threads(lcfg, n);
		ret = fuse_session_loop_mt(se, lcfg);
	}
	ret = (ret == 0 || ret == -EINTR || ret > 0) ? 0 : 1;
out_unmount:
	fuse_session_unmount(se);
out_signals:
	fuse_remove_signal_handlers(se);
out_session:
	fuse_session_destroy(se);
out:
	if (lcfg)
		fuse_loop_cfg_destroy(lcfg);
	/* inodes the kernel still held at unmount are freed with the process */
	free(pt.buckets);
	if (pt.root.fd >= 0)
		close(pt.root.fd);
	if (pt.mount_fd >= 0)
		close(pt.mount_fd);
	free(copts.mountpoint);
	free(o.source);
	fuse_opt_free_args(&args);
	return ret;
}
