/*
 * fs_stat: the attributes of a node, as getattr, lookup and readdirplus
 * answer them: the root, a namespace, a key (by its type), an entry (by
 * its key's shape), a local entry or key (what its node holds), a file
 * removed while open; never older than a write acknowledged before the
 * call. Over the shape table, under the handlers. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>

#include "keyspace/ks_attr.h"

/* A local entry: a file of whatever its buffer holds. */
void fs_local_stat(struct fs *fs, struct fs_node *node, struct stat *st, double *timeout)
{
	pthread_mutex_lock(&node->lock);
	uint64_t size = node->data.len;
	pthread_mutex_unlock(&node->lock);
	fs_stat_fill(fs, S_IFREG | 0644, size, 0, 0, st, timeout);
	/* Being written: its times are now (not the mount's) until it is
	 * stored with the times of that change; set ones show over these. */
	clock_gettime(CLOCK_REALTIME, &st->st_mtim);
	st->st_atim = st->st_ctim = st->st_mtim;
}

/* A namespace directory's stored mode, owner and times (ks_attr_ns_key):
 * times of its last key created or removed, or of its mkdir. */
static void stat_ns_attrs(struct fs *fs, const char *ns, size_t n, struct stat *st)
{
	struct ks_key k;
	ks_attr_ns_key(&k, ns, n);
	fs_stat_attrs(fs, NULL, &k, 0, NULL, 0, st);
}

/*
 * Attributes of the root, a namespace or a key at path p. Times of
 * collections come from their Kvrocks version (its creation time); other
 * times are the mount time until they are set. The entry timeout is
 * capped at the key's remaining time to live.
 */
int fs_stat_path(struct fs *fs, enum fs_kind kind, const struct fs_path *p, struct stat *st,
		 double *timeout)
{
	return fs_stat_path_exp(fs, kind, p, st, timeout, NULL);
}

int fs_stat_path_exp(struct fs *fs, enum fs_kind kind, const struct fs_path *p, struct stat *st,
		     double *timeout, uint64_t *expire_ms)
{
	struct ks_key k;
	struct ks_info info;
	const struct fs_file_shape *fsh;
	int rc;

	fs_path_key(fs, p, &k);
	switch (kind) {
	case FS_NS:
		rc = ks_ns_exists(fs->ks, p->ns.data, p->ns.len);
		if (rc <= 0)
			return rc < 0 ? rc : -ENOENT;
		fs_stat_fill(fs, S_IFDIR | 0755, 0, 0, 0, st, timeout);
		stat_ns_attrs(fs, p->ns.data, p->ns.len, st);
		return 0;
	case FS_KEY:
		/* A file of the namespace whatever key has its name (a view of
		 * its time series). */
		fsh = fs_file_shape_named(k.key, k.klen, true);
		if (fsh)
			return fsh->stat(fs, &k, NULL, st, timeout);
		rc = ks_lookup(fs->ks, &k, &info);
		if (rc == -ENOENT) {
			/* A name no key has may be a file all the same (a JSON
			 * path name). */
			fsh = fs_file_shape_named(k.key, k.klen, false);
			return fsh ? fsh->stat(fs, &k, NULL, st, timeout) : -ENOENT;
		}
		if (rc == -EUCLEAN) {
			/* Metadata that does not decode (logged): the key is not
			 * listed, but its name answers, in the shape its type
			 * byte gives (a file if none), so that rm, rm -r and
			 * user.kvfs.ttl 0 can delete it; its contents are EIO. */
			fs_stat_fill(
			    fs, fs_corrupt_is_file(info.type) ? S_IFREG | 0644 : S_IFDIR | 0755, 0,
			    0, 0, st, timeout);
			*timeout = 0;
			return 0;
		}
		if (rc)
			return rc;
		if (expire_ms)
			*expire_ms = info.expire_ms;
		fsh = fs_file_shape_of(info.type);
		if (fsh && fsh->stat)
			return fsh->stat(fs, &k, &info, st, timeout);
		fs_stat_fill(fs, fsh ? S_IFREG | 0644 : S_IFDIR | 0755, info.size, info.version,
			     info.expire_ms, st, timeout);
		fs_stat_attrs(fs, NULL, &k, info.version, NULL, 0, st);
		return 0;
	case FS_ENTRY:
		return -EINVAL; /* entries: fs_entry_stat */
	default:
		break;
	}
	fs_stat_fill(fs, S_IFDIR | 0755, 0, 0, 0, st, timeout);
	if (fs->ns) /* -o ns=: the root is that namespace */
		stat_ns_attrs(fs, fs->ns, fs->nslen, st);
	return 0;
}

int fs_entry_stat(struct fs *fs, struct fs_node *node, struct stat *st, double *timeout)
{
	struct fs_path p;
	struct fs_ctx c;
	struct fs_entry e;
	const struct fs_shape *sh;
	int rc;

	if (fs_itable_local(fs->it, node) != FS_LOCAL_NONE) {
		fs_local_stat(fs, node, st, timeout);
		pthread_mutex_lock(&node->lock);
		sh = fs_shape_of(node->ktype);
		pthread_mutex_unlock(&node->lock);
		if (sh && sh->recomputed)
			*timeout = 0; /* the commit will rewrite it */
		return 0;
	}
	fs_path_init(&p);
	fs_entry_init(&e);
	rc = fs_itable_path(fs->it, node, &p);
	if (!rc && p.unhashed)
		rc = -ENOENT;
	struct fs_node *dir = fs_itable_parent(fs->it, node);
	if (!rc)
		rc = fs_ctx_open(fs, dir, &p, NULL, &c, &sh);
	if (rc == -ENOTDIR || rc == -EOPNOTSUPP)
		rc = -ENOENT; /* no entries in a key of that type */
	if (!rc)
		rc = fs_shape_lookup(&c, sh, p.entry.data, p.entry.len, &e);
	fs_itable_unref(fs->it, dir);
	if (!rc) {
		fs_stat_fill(fs, e.mode, e.size, e.version, 0, st, timeout);
		fs_stat_attrs(fs, sh, &c.k, c.info.version, e.name.data, e.name.len, st);
	}
	if (!rc && e.blksize)
		st->st_blksize = e.blksize;
	if (!rc && (sh->recomputed || (sh->is_live && sh->is_live(p.entry.data, p.entry.len))))
		*timeout = 0;
	fs_entry_release(&e);
	fs_path_release(&p);
	return rc;
}

/* Is node a file removed or replaced while open, whose buffer holds its
 * value (fs_file_keep)? Its open files still stat and read it. */
static bool node_orphan(struct fs *fs, struct fs_node *node)
{
	struct fs_path p;
	fs_path_init(&p);
	bool gone = fs_itable_path(fs->it, node, &p) == 0 && p.unhashed;
	fs_path_release(&p);
	if (!gone)
		return false;
	pthread_mutex_lock(&node->lock);
	bool kept = node->opens > 0 && node->loaded;
	pthread_mutex_unlock(&node->lock);
	return kept;
}

static int node_stat_since(struct fs *fs, struct fs_node *node, uint64_t since, struct stat *st,
			   double *timeout, bool *stale)
{
	int rc;
	if (node->kind == FS_JTREE) {
		*timeout = 0; /* never cached: any write may change it */
		*stale = false;
		return fs_jtree_stat(fs, node, st);
	}
	if ((node->kind == FS_KEY || node->kind == FS_ENTRY) &&
	    fs_itable_local(fs->it, node) == FS_LOCAL_NONE && node_orphan(fs, node)) {
		fs_local_stat(fs, node, st, timeout);
		st->st_nlink = 0;
		*stale = fs_stat_overlay(node, since, st);
		return 0;
	}
	if (node->kind == FS_ENTRY) {
		rc = fs_entry_stat(fs, node, st, timeout);
	} else if (node->kind == FS_KEY && fs_itable_local(fs->it, node) != FS_LOCAL_NONE) {
		fs_local_stat(fs, node, st, timeout);
		rc = 0;
	} else {
		struct fs_path p;
		fs_path_init(&p);
		rc = fs_itable_path(fs->it, node, &p);
		if (!rc)
			rc = p.unhashed ? -ENOENT : fs_stat_path(fs, node->kind, &p, st, timeout);
		bool unhashed = p.unhashed;
		fs_path_release(&p);
		if (rc == -ENOENT && node->kind == FS_KEY && !unhashed) {
			/* A name that is no key created and open, not written
			 * yet (a JSON path name): a file of what its buffer
			 * holds. */
			pthread_mutex_lock(&node->lock);
			const struct fs_file_shape *fsh = fs_file_shape_of(node->ktype);
			bool open_name = node->opens && fsh && fsh->open;
			pthread_mutex_unlock(&node->lock);
			if (open_name) {
				fs_local_stat(fs, node, st, timeout);
				*timeout = 0;
				rc = 0;
			}
		}
	}
	if (!rc)
		*stale = fs_stat_overlay(node, since, st);
	return rc;
}

int fs_node_stat(struct fs *fs, struct fs_node *node, struct stat *st, double *timeout)
{
	bool stale = false;
	int rc = node_stat_since(fs, node, fs_seq(fs), st, timeout, &stale);
	if ((!rc && stale) || rc == -ENOENT) {
		/* The node stored a write while we read, or was renamed over
		 * or removed (its open files still stat it): read again holding
		 * its lock, so that neither can come between. */
		pthread_mutex_lock(&node->lock);
		rc = node_stat_since(fs, node, fs_seq(fs), st, timeout, &stale);
		pthread_mutex_unlock(&node->lock);
	}
	return rc;
}
