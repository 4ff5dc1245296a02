/*
 * fs: FUSE low-level operations. Each handler resolves its inode to a
 * path (namespace, key, entry), asks the type layer, and replies once.
 * Files are the string value or a hash field's value, buffered per node
 * while open and committed atomically on flush/fsync/release.
 * Layer: fs. Directory listing lives in fs_dir.c, xattrs in fs_xattr.c.
 */
#include "fs.h"
#include "fs_int.h"

#include <errno.h>
#include <stdio.h> /* RENAME_NOREPLACE, RENAME_EXCHANGE */
#include <stdlib.h>
#include <sys/statvfs.h>

#include "t_hash.h"
#include "t_string.h"

struct fs *fs_new(struct keyspace *ks, const struct fs_options *opt)
{
	struct fs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return NULL;
	fs->ks = ks;
	fs->opt = *opt;
	fs->it = fs_itable_new();
	if (!fs->it) {
		free(fs);
		return NULL;
	}
	if (opt->ns) {
		fs->ns = opt->ns;
		fs->nslen = strlen(opt->ns);
	}
	clock_gettime(CLOCK_REALTIME, &fs->mount_time);
	return fs;
}

void fs_free(struct fs *fs)
{
	if (!fs)
		return;
	fs_itable_free(fs->it);
	free(fs);
}

void fs_set_session(struct fs *fs, struct fuse_session *se)
{
	fs->se = se;
}

/* ---- identities ------------------------------------------------------ */

enum fs_kind fs_child_kind(const struct fs *fs, const struct fs_node *parent)
{
	switch (parent->kind) {
	case FS_ROOT:
		return fs->ns ? FS_KEY : FS_NS;
	case FS_NS:
		return FS_KEY;
	default:
		return FS_ENTRY;
	}
}

void fs_path_key(const struct fs *fs, const struct fs_path *p, struct ks_key *k)
{
	if (fs->ns) {
		k->ns = fs->ns;
		k->nslen = fs->nslen;
	} else {
		k->ns = p->ns.data;
		k->nslen = p->ns.len;
	}
	k->key = p->key.data;
	k->klen = p->key.len;
}

/* The path of `name` inside `parent`. */
int fs_child_path(struct fs *fs, struct fs_node *parent, const char *name, size_t n,
		  struct fs_path *p)
{
	int rc = fs_itable_path(fs->it, parent, p);
	if (rc)
		return rc;
	switch (fs_child_kind(fs, parent)) {
	case FS_NS:
		return buf_set(&p->ns, name, n);
	case FS_KEY:
		return buf_set(&p->key, name, n);
	default:
		return buf_set(&p->entry, name, n);
	}
}

bool fs_type_is_file(enum kv_type t)
{
	return t == KV_TYPE_STRING || t == KV_TYPE_JSON || t == KV_TYPE_BITMAP;
}

/* Types whose contents this version of kvfs maps into the tree. */
bool fs_type_is_supported(enum kv_type t)
{
	return t == KV_TYPE_STRING || t == KV_TYPE_HASH;
}

static void ts_from_us(struct timespec *ts, uint64_t us)
{
	ts->tv_sec = (time_t)(us / 1000000u);
	ts->tv_nsec = (long)(us % 1000000u) * 1000;
}

void fs_stat_fill(const struct fs *fs, mode_t mode, uint64_t size, uint64_t version,
		  uint64_t expire_ms, struct stat *st, double *timeout)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = mode;
	st->st_nlink = 1;
	st->st_uid = fs->opt.uid;
	st->st_gid = fs->opt.gid;
	st->st_blksize = 4096;
	st->st_size = (off_t)size;
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
	st->st_mtim = fs->mount_time;
	if (version)
		ts_from_us(&st->st_mtim, version >> 11);
	st->st_ctim = st->st_atim = st->st_mtim;
	*timeout = fs->opt.timeout;
	if (expire_ms) {
		uint64_t now = now_ms();
		double left = expire_ms > now ? (double)(expire_ms - now) / 1000 : 0;
		if (left < *timeout)
			*timeout = left;
	}
}

/*
 * Attributes of the thing at path p, which is of kind `kind`. Times of
 * collections come from their Kvrocks version (its creation time); other
 * times are the mount time until they are set. The entry timeout is
 * capped at the key's remaining time to live.
 */
int fs_stat_path(struct fs *fs, enum fs_kind kind, const struct fs_path *p, struct stat *st,
		 double *timeout)
{
	struct ks_key k;
	struct ks_info info;
	uint64_t size = 0;
	int rc;

	fs_path_key(fs, p, &k);
	switch (kind) {
	case FS_ROOT:
		break;
	case FS_NS:
		rc = ks_ns_exists(fs->ks, p->ns.data, p->ns.len);
		if (rc <= 0)
			return rc < 0 ? rc : -ENOENT;
		break;
	case FS_KEY:
		rc = ks_lookup(fs->ks, &k, &info);
		if (rc)
			return rc;
		fs_stat_fill(fs, fs_type_is_file(info.type) ? S_IFREG | 0644 : S_IFDIR | 0755,
			     info.size, info.version, info.expire_ms, st, timeout);
		return 0;
	case FS_ENTRY:
		rc = hash_strlen(fs->ks, &k, p->entry.data, p->entry.len, &size);
		if (rc == -KV_EWRONGTYPE)
			rc = -ENOENT;
		if (rc)
			return rc;
		fs_stat_fill(fs, S_IFREG | 0644, size, 0, 0, st, timeout);
		return 0;
	}
	fs_stat_fill(fs, S_IFDIR | 0755, 0, 0, 0, st, timeout);
	return 0;
}

/* Overlay what only the node knows: buffered data and attributes set
 * during this mount. */
void fs_stat_overlay(struct fs_node *node, struct stat *st)
{
	pthread_mutex_lock(&node->lock);
	if (node->loaded && S_ISREG(st->st_mode)) {
		st->st_size = (off_t)node->data.len;
		st->st_blocks = (blkcnt_t)((node->data.len + 511) / 512);
	}
	if (node->mtime.tv_sec || node->mtime.tv_nsec)
		st->st_mtim = st->st_ctim = node->mtime;
	if (node->atime.tv_sec || node->atime.tv_nsec)
		st->st_atim = node->atime;
	if (node->has_mode)
		st->st_mode = (st->st_mode & S_IFMT) | (node->mode & 07777);
	if (node->has_owner) {
		st->st_uid = node->uid;
		st->st_gid = node->gid;
	}
	pthread_mutex_unlock(&node->lock);
	st->st_ino = node->ino;
}

static int node_stat(struct fs *fs, struct fs_node *node, struct stat *st, double *timeout)
{
	struct fs_path p;
	fs_path_init(&p);
	int rc = fs_itable_path(fs->it, node, &p);
	if (!rc)
		rc = p.unhashed ? -ENOENT : fs_stat_path(fs, node->kind, &p, st, timeout);
	fs_path_release(&p);
	if (!rc)
		fs_stat_overlay(node, st);
	return rc;
}

/*
 * Decode a file name into stored bytes. A long name (PREFIX%~HASH) is
 * resolved to the stored name it stands for among the children of
 * `parent`; -ENOENT if none matches.
 */
int fs_decode_name(struct fs *fs, struct fs_node *parent, const char *name, struct buf *out)
{
	uint64_t hash;
	int rc = names_decode(name, out, &hash);
	if (rc != NAMES_DECODED_LONG)
		return rc;
	return fs_dir_find_long(fs, parent, out, hash, name);
}

static void open_setup(struct fs_node *node, struct fuse_file_info *fi)
{
	pthread_mutex_lock(&node->lock);
	node->opens++;
	if (fi->flags & O_TRUNC) {
		buf_reset(&node->data);
		node->loaded = true;
		node->dirty = true;
	}
	pthread_mutex_unlock(&node->lock);
	/* The page cache stays valid across opens: every change to a node's
	 * data goes through the kernel or is invalidated explicitly. */
	fi->keep_cache = !(fi->flags & O_TRUNC);
	/* A close of a read-only open has nothing to commit. */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
}

/* Reply to a lookup-like request with the node for (parent, name). */
void fs_reply_entry(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *stored,
		    size_t n, struct stat *st, double timeout, struct fuse_file_info *fi)
{
	enum fs_kind kind = fs_child_kind(fs, parent);
	struct fs_node *node = fs_itable_lookup(fs->it, parent, kind, stored, n);
	if (!node) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	fs_stat_overlay(node, st);
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.ino = node->ino;
	e.attr = *st;
	e.attr_timeout = timeout;
	e.entry_timeout = timeout;
	int rc;
	if (fi) {
		/* The handle is complete before the reply: the kernel may send
		 * writes the moment it has it. */
		struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
		h->node = node;
		fs_itable_ref(fs->it, node);
		open_setup(node, fi);
		rc = fuse_reply_create(req, &e, fi);
		if (rc)
			fs_file_close(fs, h);
	} else {
		rc = fuse_reply_entry(req, &e);
	}
	if (rc)
		fs_itable_forget(fs->it, node->ino, 1);
}

/* Map a type-layer error to what the file system should say. */
int fs_errno(int rc)
{
	/* A corrupt record is an I/O error for the file system; a wrong type
	 * (a key changed shape between a check and the act) stays
	 * EMEDIUMTYPE, documented in docs/errors.md. */
	if (rc == -EUCLEAN)
		return EIO;
	return -rc;
}

/* ---- lookup, attributes ---------------------------------------------- */

static void op_lookup(fuse_req_t req, fuse_ino_t parent_ino, const char *name)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *parent = fs_itable_get(fs->it, parent_ino);
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct stat st;
	double timeout;
	int rc;

	fs_path_init(&p);
	if (!parent) {
		rc = -ESTALE;
		goto out;
	}
	if (parent->kind == FS_ENTRY) {
		rc = -ENOTDIR;
		goto out;
	}
	rc = fs_decode_name(fs, parent, name, &stored);
	if (rc)
		goto out;
	rc = fs_child_path(fs, parent, stored.data, stored.len, &p);
	if (rc)
		goto out;
	if (fs_child_kind(fs, parent) == FS_NS &&
	    bytes_cmp(stored.data, stored.len, KS_RESERVED_NS, strlen(KS_RESERVED_NS)) == 0) {
		rc = -ENOENT;
		goto out;
	}
	rc = fs_stat_path(fs, fs_child_kind(fs, parent), &p, &st, &timeout);
	if (rc)
		goto out;
	fs_reply_entry(req, fs, parent, stored.data, stored.len, &st, timeout, NULL);
out:
	if (rc == -ENOENT) {
		/* A negative entry: the kernel remembers the miss. */
		struct fuse_entry_param e;
		memset(&e, 0, sizeof(e));
		e.entry_timeout = fs->opt.timeout;
		fuse_reply_entry(req, &e);
	} else if (rc) {
		fuse_reply_err(req, fs_errno(rc));
	}
	buf_release(&stored);
	fs_path_release(&p);
}

static void op_forget(fuse_req_t req, fuse_ino_t ino, uint64_t nlookup)
{
	struct fs *fs = fuse_req_userdata(req);
	fs_itable_forget(fs->it, ino, nlookup);
	fuse_reply_none(req);
}

static void op_forget_multi(fuse_req_t req, size_t count, struct fuse_forget_data *forgets)
{
	struct fs *fs = fuse_req_userdata(req);
	for (size_t i = 0; i < count; i++)
		fs_itable_forget(fs->it, forgets[i].ino, forgets[i].nlookup);
	fuse_reply_none(req);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	struct stat st;
	double timeout;
	int rc = node ? node_stat(fs, node, &st, &timeout) : -ESTALE;
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		fuse_reply_attr(req, &st, timeout);
}

/* ---- file data --------------------------------------------------------- */

/* Read the node's value into node->data. Node lock held. */
static int node_load_locked(struct fs *fs, struct fs_node *node)
{
	if (node->loaded)
		return 0;
	struct fs_path p;
	struct ks_key k;
	fs_path_init(&p);
	int rc = fs_itable_path(fs->it, node, &p);
	if (rc)
		goto out;
	fs_path_key(fs, &p, &k);
	if (node->kind == FS_KEY)
		rc = string_get(fs->ks, &k, &node->data);
	else
		rc = hash_get(fs->ks, &k, p.entry.data, p.entry.len, &node->data);
	if (rc == -KV_EWRONGTYPE) {
		LOG_ERR("read of '%s': the key is not a file any more", p.key.data);
		rc = -EIO;
	}
	if (!rc)
		node->loaded = true;
out:
	fs_path_release(&p);
	return rc;
}

/* Commit buffered data: one atomic write of the whole value. Node lock held. */
static int node_commit_locked(struct fs *fs, struct fs_node *node)
{
	if (!node->dirty)
		return 0;
	struct fs_path p;
	struct ks_key k;
	fs_path_init(&p);
	int rc = fs_itable_path(fs->it, node, &p);
	if (rc)
		goto out;
	if (p.unhashed) {
		/* Unlinked or replaced while open: the data has no home. */
		node->dirty = false;
		goto out;
	}
	fs_path_key(fs, &p, &k);
	if (node->kind == FS_KEY)
		rc = string_set(fs->ks, &k, node->data.data, node->data.len, STRING_SET_KEEPTTL);
	else
		rc = hash_set(fs->ks, &k, p.entry.data, p.entry.len, node->data.data,
			      node->data.len, NULL);
	if (!rc) {
		node->dirty = false;
		clock_gettime(CLOCK_REALTIME, &node->mtime);
	} else {
		LOG_ERR("commit of '%s%s%s' failed: %s", p.key.data, p.entry.len ? "/" : "",
			p.entry.len ? p.entry.data : "", strerror(-rc));
	}
out:
	fs_path_release(&p);
	return rc;
}

/* Drop the buffer when nothing uses it. Node lock held. */
static void node_unload_locked(struct fs_node *node)
{
	if (node->opens == 0 && !node->dirty) {
		buf_release(&node->data);
		node->loaded = false;
	}
}

void fs_file_close(struct fs *fs, struct fs_handle *h)
{
	struct fs_node *node = h->node;
	if (node) {
		pthread_mutex_lock(&node->lock);
		node_commit_locked(fs, node);
		node->opens--;
		/* A failed commit is not retried forever: the error was
		 * reported by flush and logged. */
		node->dirty = false;
		node_unload_locked(node);
		pthread_mutex_unlock(&node->lock);
		fs_itable_unref(fs->it, node);
	}
	free(h);
}

/* Check that the node is a file kvfs can open; 0 or errno. */
static int file_check(struct fs *fs, struct fs_node *node)
{
	if (node->kind == FS_ROOT || node->kind == FS_NS)
		return -EISDIR;
	if (node->kind == FS_ENTRY)
		return 0;
	struct fs_path p;
	struct ks_key k;
	struct ks_info info;
	fs_path_init(&p);
	int rc = fs_itable_path(fs->it, node, &p);
	if (!rc) {
		fs_path_key(fs, &p, &k);
		rc = ks_lookup(fs->ks, &k, &info);
	}
	if (!rc && !fs_type_is_file(info.type))
		rc = -EISDIR;
	else if (!rc && !fs_type_is_supported(info.type)) {
		LOG_WARN("open of '%s': type %s is not mapped into files yet", p.key.data,
			 enc_type_name(info.type));
		rc = -EOPNOTSUPP;
	}
	fs_path_release(&p);
	return rc;
}

static void op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	if (!node) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	int rc = file_check(fs, node);
	if (!rc && fs->opt.read_only && (fi->flags & (O_ACCMODE | O_TRUNC)) != O_RDONLY)
		rc = -EROFS;
	if (rc) {
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	struct fs_handle *h = calloc(1, sizeof(*h));
	if (!h) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	h->node = node;
	fs_itable_ref(fs->it, node);
	open_setup(node, fi);
	fi->fh = (uintptr_t)h;
	if (fuse_reply_open(req, fi))
		fs_file_close(fs, h);
}

static void op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		    struct fuse_file_info *fi)
{
	(void)ino;
	struct fs *fs = fuse_req_userdata(req);
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	struct fs_node *node = h->node;
	pthread_mutex_lock(&node->lock);
	int rc = node_load_locked(fs, node);
	if (rc) {
		pthread_mutex_unlock(&node->lock);
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	size_t len = node->data.len;
	size_t start = (uint64_t)off < len ? (size_t)off : len;
	size_t n = len - start < size ? len - start : size;
	fuse_reply_buf(req, n ? node->data.data + start : NULL, n);
	pthread_mutex_unlock(&node->lock);
}

static void op_write(fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off,
		     struct fuse_file_info *fi)
{
	(void)ino;
	struct fs *fs = fuse_req_userdata(req);
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	struct fs_node *node = h->node;
	if (off < 0 || (uint64_t)off + size > STRING_MAX) {
		LOG_ERR("write past %llu bytes refused (kvfs values are at most that long)",
			(unsigned long long)STRING_MAX);
		fuse_reply_err(req, EFBIG);
		return;
	}
	pthread_mutex_lock(&node->lock);
	int rc = node_load_locked(fs, node);
	if (!rc && (size_t)off + size > node->data.len)
		rc = buf_resize(&node->data, (size_t)off + size);
	if (!rc) {
		memcpy(node->data.data + off, data, size);
		node->dirty = true;
	}
	pthread_mutex_unlock(&node->lock);
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		fuse_reply_write(req, size);
}

static void op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct fs *fs = fuse_req_userdata(req);
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	pthread_mutex_lock(&h->node->lock);
	int rc = node_commit_locked(fs, h->node);
	pthread_mutex_unlock(&h->node->lock);
	fuse_reply_err(req, fs_errno(rc));
}

static void op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	struct fs *fs = fuse_req_userdata(req);
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	pthread_mutex_lock(&h->node->lock);
	int rc = node_commit_locked(fs, h->node);
	pthread_mutex_unlock(&h->node->lock);
	if (!rc)
		rc = ks_sync(fs->ks);
	fuse_reply_err(req, fs_errno(rc));
}

static void op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)ino;
	struct fs *fs = fuse_req_userdata(req);
	fs_file_close(fs, (struct fs_handle *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* Truncate a file node to `size`: through the open buffer when it is
 * open, committed now unless an open file will commit it. */
static int node_truncate(struct fs *fs, struct fs_node *node, uint64_t size, bool via_handle)
{
	if (size > STRING_MAX)
		return -EFBIG;
	pthread_mutex_lock(&node->lock);
	int rc = 0;
	if (size == 0) {
		buf_reset(&node->data);
		node->loaded = true;
	} else {
		rc = node_load_locked(fs, node);
	}
	if (!rc)
		rc = buf_resize(&node->data, (size_t)size);
	if (!rc) {
		node->dirty = true;
		if (!via_handle)
			rc = node_commit_locked(fs, node);
		if (rc && !via_handle)
			node->dirty = false; /* nobody else may commit it later */
	}
	node_unload_locked(node);
	pthread_mutex_unlock(&node->lock);
	return rc;
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	struct stat st;
	double timeout;
	int rc = node ? node_stat(fs, node, &st, &timeout) : -ESTALE;
	if (rc)
		goto out;
	if (fs->opt.read_only) {
		rc = -EROFS;
		goto out;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		if (!S_ISREG(st.st_mode)) {
			rc = -EISDIR;
			goto out;
		}
		rc = file_check(fs, node);
		if (!rc)
			rc = node_truncate(fs, node, (uint64_t)attr->st_size, fi != NULL);
		if (rc)
			goto out;
	}
	/* NEEDSWORK: mode, owner and times are kept for the life of the
	 * mount only; persisting them is issue 5. */
	pthread_mutex_lock(&node->lock);
	if (to_set & FUSE_SET_ATTR_MODE) {
		node->mode = attr->st_mode;
		node->has_mode = true;
	}
	if (to_set & (FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID)) {
		node->uid = (to_set & FUSE_SET_ATTR_UID) ? attr->st_uid : st.st_uid;
		node->gid = (to_set & FUSE_SET_ATTR_GID) ? attr->st_gid : st.st_gid;
		node->has_owner = true;
	}
	if (to_set & FUSE_SET_ATTR_MTIME_NOW)
		clock_gettime(CLOCK_REALTIME, &node->mtime);
	else if (to_set & FUSE_SET_ATTR_MTIME)
		node->mtime = attr->st_mtim;
	if (to_set & FUSE_SET_ATTR_ATIME_NOW)
		clock_gettime(CLOCK_REALTIME, &node->atime);
	else if (to_set & FUSE_SET_ATTR_ATIME)
		node->atime = attr->st_atim;
	pthread_mutex_unlock(&node->lock);
	rc = node_stat(fs, node, &st, &timeout);
out:
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		fuse_reply_attr(req, &st, timeout);
}

/* ---- creating and removing --------------------------------------------- */

/* Common start of create/mkdir/unlink/rmdir/mknod: resolve the parent and
 * the stored name, and build the child's path. */
static int child_begin(struct fs *fs, fuse_ino_t parent_ino, const char *name,
		       struct fs_node **parent, struct buf *stored, struct fs_path *p)
{
	*parent = fs_itable_get(fs->it, parent_ino);
	if (!*parent)
		return -ESTALE;
	if ((*parent)->kind == FS_ENTRY)
		return -ENOTDIR;
	int rc = fs_decode_name(fs, *parent, name, stored);
	if (rc)
		return rc;
	return fs_child_path(fs, *parent, stored->data, stored->len, p);
}

/* Key info of the parent directory of an entry: it must be a hash. */
static int entry_parent_check(struct fs *fs, const struct ks_key *k)
{
	struct ks_info info;
	int rc = ks_lookup(fs->ks, k, &info);
	if (rc)
		return rc;
	if (info.type != KV_TYPE_HASH) {
		LOG_WARN("'%.*s' is a %s: its entries cannot be changed yet", (int)k->klen,
			 k->key, enc_type_name(info.type));
		return -EOPNOTSUPP;
	}
	return 0;
}

static void op_create(fuse_req_t req, fuse_ino_t parent_ino, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	(void)mode;
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *parent;
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct ks_key k;
	struct stat st;
	double timeout;
	struct fs_handle *h = NULL;
	int rc;

	fs_path_init(&p);
	rc = child_begin(fs, parent_ino, name, &parent, &stored, &p);
	if (rc)
		goto out;
	if (fs->opt.read_only) {
		rc = -EROFS;
		goto out;
	}
	enum fs_kind kind = fs_child_kind(fs, parent);
	fs_path_key(fs, &p, &k);
	if (kind == FS_NS) {
		LOG_ERR("'%s': the root holds namespaces, which are directories (use mkdir)",
			name);
		rc = -EPERM;
		goto out;
	}
	if (kind == FS_KEY) {
		rc = string_set(fs->ks, &k, "", 0, STRING_SET_NX);
	} else {
		rc = entry_parent_check(fs, &k);
		if (!rc)
			rc = hash_setnx(fs->ks, &k, p.entry.data, p.entry.len, "", 0);
	}
	if (rc == -EEXIST && !(fi->flags & O_EXCL))
		rc = 0; /* open the existing file */
	if (rc)
		goto out;
	rc = fs_stat_path(fs, kind, &p, &st, &timeout);
	if (!rc && !S_ISREG(st.st_mode))
		rc = -EISDIR;
	if (rc)
		goto out;
	h = calloc(1, sizeof(*h));
	if (!h) {
		rc = -ENOMEM;
		goto out;
	}
	fi->fh = (uintptr_t)h;
	/* fs_reply_entry attaches the node to the handle and counts the open. */
	fs_reply_entry(req, fs, parent, stored.data, stored.len, &st, timeout, fi);
out:
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	buf_release(&stored);
	fs_path_release(&p);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent, const char *name, mode_t mode, dev_t rdev)
{
	(void)rdev;
	if (!S_ISREG(mode)) {
		LOG_ERR("mknod '%s': only regular files can be stored", name);
		fuse_reply_err(req, EPERM);
		return;
	}
	/* A regular mknod is a create whose handle is closed at once. */
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *pnode;
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct ks_key k;
	struct stat st;
	double timeout;
	fs_path_init(&p);
	int rc = child_begin(fs, parent, name, &pnode, &stored, &p);
	if (!rc && fs->opt.read_only)
		rc = -EROFS;
	if (!rc && fs_child_kind(fs, pnode) == FS_NS)
		rc = -EPERM;
	if (!rc) {
		fs_path_key(fs, &p, &k);
		if (fs_child_kind(fs, pnode) == FS_KEY) {
			rc = string_set(fs->ks, &k, "", 0, STRING_SET_NX);
		} else {
			rc = entry_parent_check(fs, &k);
			if (!rc)
				rc = hash_setnx(fs->ks, &k, p.entry.data, p.entry.len, "", 0);
		}
	}
	if (!rc)
		rc = fs_stat_path(fs, fs_child_kind(fs, pnode), &p, &st, &timeout);
	if (!rc)
		fs_reply_entry(req, fs, pnode, stored.data, stored.len, &st, timeout, NULL);
	else
		fuse_reply_err(req, fs_errno(rc));
	buf_release(&stored);
	fs_path_release(&p);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent_ino, const char *name, mode_t mode)
{
	(void)mode;
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *parent;
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct ks_key k;
	struct stat st;
	double timeout;
	int rc;

	fs_path_init(&p);
	rc = child_begin(fs, parent_ino, name, &parent, &stored, &p);
	if (rc)
		goto out;
	if (fs->opt.read_only) {
		rc = -EROFS;
		goto out;
	}
	switch (fs_child_kind(fs, parent)) {
	case FS_NS:
		if (stored.len > ENC_MAX_NS) {
			rc = -ENAMETOOLONG;
			LOG_ERR("mkdir '%s': a namespace name has at most %d bytes", name,
				ENC_MAX_NS);
		} else {
			rc = ks_ns_create(fs->ks, stored.data, stored.len);
		}
		break;
	case FS_KEY:
		fs_path_key(fs, &p, &k);
		rc = ks_empty_create(fs->ks, &k, KV_TYPE_HASH);
		break;
	default:
		LOG_ERR("mkdir '%s': entries of a key are files, not directories", name);
		rc = -EPERM;
		break;
	}
	if (!rc)
		rc = fs_stat_path(fs, fs_child_kind(fs, parent), &p, &st, &timeout);
	if (!rc)
		fs_reply_entry(req, fs, parent, stored.data, stored.len, &st, timeout, NULL);
out:
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	buf_release(&stored);
	fs_path_release(&p);
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent_ino, const char *name)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *parent;
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct ks_key k;
	struct ks_info info;
	int rc;

	fs_path_init(&p);
	rc = child_begin(fs, parent_ino, name, &parent, &stored, &p);
	if (rc)
		goto out;
	if (fs->opt.read_only) {
		rc = -EROFS;
		goto out;
	}
	fs_path_key(fs, &p, &k);
	switch (fs_child_kind(fs, parent)) {
	case FS_NS:
		rc = -EISDIR;
		break;
	case FS_KEY:
		rc = ks_lookup(fs->ks, &k, &info);
		if (!rc && !fs_type_is_file(info.type))
			rc = -EISDIR;
		if (!rc)
			rc = ks_del(fs->ks, &k);
		break;
	default:
		rc = entry_parent_check(fs, &k);
		if (!rc)
			rc = hash_del(fs->ks, &k, p.entry.data, p.entry.len, HASH_KEEP_EMPTY);
		break;
	}
	if (!rc)
		fs_itable_unlink(fs->it, parent, stored.data, stored.len);
out:
	fuse_reply_err(req, fs_errno(rc));
	buf_release(&stored);
	fs_path_release(&p);
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent_ino, const char *name)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *parent;
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct ks_key k;
	struct ks_info info;
	int rc;

	fs_path_init(&p);
	rc = child_begin(fs, parent_ino, name, &parent, &stored, &p);
	if (rc)
		goto out;
	if (fs->opt.read_only) {
		rc = -EROFS;
		goto out;
	}
	fs_path_key(fs, &p, &k);
	switch (fs_child_kind(fs, parent)) {
	case FS_NS:
		rc = ks_ns_remove(fs->ks, stored.data, stored.len);
		break;
	case FS_KEY:
		rc = ks_lookup(fs->ks, &k, &info);
		if (!rc && fs_type_is_file(info.type))
			rc = -ENOTDIR;
		else if (!rc && !info.empty)
			rc = -ENOTEMPTY;
		else if (!rc)
			rc = ks_empty_remove(fs->ks, &k);
		break;
	default:
		rc = -ENOTDIR;
		break;
	}
	if (!rc)
		fs_itable_unlink(fs->it, parent, stored.data, stored.len);
out:
	fuse_reply_err(req, fs_errno(rc));
	buf_release(&stored);
	fs_path_release(&p);
}

/*
 * Rename. Keys move within and across namespaces (Kvrocks RENAME), and
 * hash fields within and across hashes. Anything else (a namespace, a
 * field becoming a key) is EXDEV, so mv falls back to copy and delete,
 * which gives the documented result.
 */
static int rename_keys(struct fs *fs, const struct fs_path *from, const struct fs_path *to,
		       unsigned flags)
{
	struct ks_key a, b;
	struct ks_info ia, ib;
	fs_path_key(fs, from, &a);
	fs_path_key(fs, to, &b);
	int rc = ks_lookup(fs->ks, &a, &ia);
	if (rc)
		return rc;
	rc = ks_lookup(fs->ks, &b, &ib);
	if (rc && rc != -ENOENT)
		return rc;
	if (rc == 0) {
		if (flags & RENAME_NOREPLACE)
			return -EEXIST;
		bool fa = fs_type_is_file(ia.type), fb = fs_type_is_file(ib.type);
		if (fa && !fb)
			return -EISDIR;
		if (!fa && fb)
			return -ENOTDIR;
		if (!fb && !ib.empty)
			return -ENOTEMPTY;
	}
	return ks_rename(fs->ks, &a, &b);
}

static int rename_entries(struct fs *fs, const struct fs_path *from, const struct fs_path *to,
			  unsigned flags)
{
	struct ks_key a, b;
	fs_path_key(fs, from, &a);
	fs_path_key(fs, to, &b);
	int rc = entry_parent_check(fs, &a);
	if (!rc)
		rc = entry_parent_check(fs, &b);
	if (rc)
		return rc;
	if (flags & RENAME_NOREPLACE) {
		rc = hash_exists(fs->ks, &b, to->entry.data, to->entry.len);
		if (rc < 0)
			return rc;
		if (rc)
			return -EEXIST;
	}
	if (bytes_cmp(a.ns, a.nslen, b.ns, b.nslen) == 0 &&
	    bytes_cmp(a.key, a.klen, b.key, b.klen) == 0)
		return hash_rename_field(fs->ks, &a, from->entry.data, from->entry.len,
					 to->entry.data, to->entry.len);
	return hash_move_field(fs->ks, &a, from->entry.data, from->entry.len, &b, to->entry.data,
			       to->entry.len, HASH_KEEP_EMPTY);
}

static void op_rename(fuse_req_t req, fuse_ino_t parent_ino, const char *name,
		      fuse_ino_t newparent_ino, const char *newname, unsigned int flags)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *parent, *newparent;
	struct buf stored = BUF_INIT, newstored = BUF_INIT;
	struct fs_path from, to;
	int rc;

	fs_path_init(&from);
	fs_path_init(&to);
	rc = child_begin(fs, parent_ino, name, &parent, &stored, &from);
	if (!rc)
		rc = child_begin(fs, newparent_ino, newname, &newparent, &newstored, &to);
	if (rc)
		goto out;
	if (fs->opt.read_only) {
		rc = -EROFS;
		goto out;
	}
	if (flags & RENAME_EXCHANGE) {
		LOG_ERR("rename '%s': RENAME_EXCHANGE is not supported", name);
		rc = -EINVAL;
		goto out;
	}
	enum fs_kind ka = fs_child_kind(fs, parent), kb = fs_child_kind(fs, newparent);
	if (ka != kb || ka == FS_NS) {
		LOG_INFO("rename '%s' -> '%s' crosses kinds of directory: EXDEV", name, newname);
		rc = -EXDEV;
		goto out;
	}
	rc = ka == FS_KEY ? rename_keys(fs, &from, &to, flags)
			  : rename_entries(fs, &from, &to, flags);
	if (!rc)
		rc = fs_itable_rename(fs->it, parent, stored.data, stored.len, newparent,
				      newstored.data, newstored.len);
out:
	fuse_reply_err(req, fs_errno(rc));
	buf_release(&stored);
	buf_release(&newstored);
	fs_path_release(&from);
	fs_path_release(&to);
}

static void op_link(fuse_req_t req, fuse_ino_t ino, fuse_ino_t newparent, const char *newname)
{
	(void)ino;
	(void)newparent;
	LOG_ERR("link '%s': kvfs has no hard links", newname);
	fuse_reply_err(req, EPERM);
}

static void op_symlink(fuse_req_t req, const char *link, fuse_ino_t parent, const char *name)
{
	(void)link;
	(void)parent;
	LOG_ERR("symlink '%s': kvfs has no symbolic links", name);
	fuse_reply_err(req, EPERM);
}

static void op_statfs(fuse_req_t req, fuse_ino_t ino)
{
	(void)ino;
	struct fs *fs = fuse_req_userdata(req);
	struct statvfs sv;
	uint64_t bytes = 0, keys = 0;
	memset(&sv, 0, sizeof(sv));
	if (fs->opt.dbdir)
		statvfs(fs->opt.dbdir, &sv);
	ks_stats(fs->ks, &bytes, &keys);
	struct statvfs out;
	memset(&out, 0, sizeof(out));
	out.f_bsize = 4096;
	out.f_frsize = 4096;
	uint64_t avail = (uint64_t)sv.f_bavail * sv.f_frsize / 4096;
	uint64_t freeb = (uint64_t)sv.f_bfree * sv.f_frsize / 4096;
	uint64_t used = (bytes + 4095) / 4096;
	out.f_blocks = used + freeb;
	out.f_bfree = freeb;
	out.f_bavail = avail;
	out.f_files = keys + freeb;
	out.f_ffree = freeb;
	out.f_favail = freeb;
	out.f_namemax = NAMES_MAX;
	fuse_reply_statfs(req, &out);
}

static void op_init(void *userdata, struct fuse_conn_info *conn)
{
	(void)userdata;
	/* O_TRUNC arrives with open, so `>` replaces a value in one commit. */
	if (conn->capable & FUSE_CAP_ATOMIC_O_TRUNC)
		conn->want |= FUSE_CAP_ATOMIC_O_TRUNC;
	/* readdirplus when the kernel expects stats to follow (ls -l), plain
	 * readdir otherwise (ls -f of a million fields stays small). */
	if (conn->capable & FUSE_CAP_READDIRPLUS)
		conn->want |= FUSE_CAP_READDIRPLUS | FUSE_CAP_READDIRPLUS_AUTO;
	conn->want &= ~(unsigned)FUSE_CAP_WRITEBACK_CACHE;
}

const struct fuse_lowlevel_ops fs_ops = {
	.init = op_init,
	.lookup = op_lookup,
	.forget = op_forget,
	.forget_multi = op_forget_multi,
	.getattr = op_getattr,
	.setattr = op_setattr,
	.mknod = op_mknod,
	.mkdir = op_mkdir,
	.unlink = op_unlink,
	.rmdir = op_rmdir,
	.symlink = op_symlink,
	.rename = op_rename,
	.link = op_link,
	.open = op_open,
	.read = op_read,
	.write = op_write,
	.flush = op_flush,
	.release = op_release,
	.fsync = op_fsync,
	.opendir = fs_op_opendir,
	.readdir = fs_op_readdir,
	.readdirplus = fs_op_readdirplus,
	.releasedir = fs_op_releasedir,
	.fsyncdir = fs_op_fsyncdir,
	.statfs = op_statfs,
	.setxattr = fs_op_setxattr,
	.getxattr = fs_op_getxattr,
	.listxattr = fs_op_listxattr,
	.removexattr = fs_op_removexattr,
	.create = op_create,
};
