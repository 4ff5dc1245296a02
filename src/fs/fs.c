/*
 * fs: FUSE low-level operations, the dispatcher, at the top of the fs
 * layer (fs_int.h draws the layer). Each handler resolves its inode to a
 * path (namespace, key, entry), and asks the keyspace (for namespaces and
 * keys), the key's file shape (a name that is no key) or the shape of the
 * key's type (for the entries of a key's directory) what to do, replies
 * once, and only then sends the kernel the invalidations the change
 * requires. File contents live in fs_file.c, listings in fs_dir.c, xattrs
 * in fs_xattr.c, renames in fs_rename.c. Layer: fs.
 */
#include "fs/fs.h"
#include "fs/fs_int.h"
#include "keyspace/ks_attr.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/statvfs.h>

struct fs *fs_new(struct keyspace *ks, const struct fs_options *opt)
{
	struct fs *fs = calloc(1, sizeof(*fs));
	if (!fs)
		return NULL;
	fs->ks = ks;
	fs->opt = *opt;
	/* A store opened read-only for want of disk space (store_open)
	 * refuses every change as -o ro does. */
	fs->opt.read_only = opt->read_only || ks_is_read_only(ks);
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
	pthread_mutex_init(&fs->backup_lock, NULL);
	pthread_mutex_init(&fs->handles_lock, NULL);
	pthread_mutex_init(&fs->wait_lock, NULL);
	buf_init(&fs->backup.name);
	return fs;
}

void fs_free(struct fs *fs)
{
	if (!fs)
		return;
	fs_follow_stop(fs); /* it hands the notifier invalidations */
	fs_notifier_free(fs);
	fs_file_release_all(fs);
	fs_itable_free(fs->it);
	buf_release(&fs->backup.name);
	pthread_mutex_destroy(&fs->backup_lock);
	pthread_mutex_destroy(&fs->handles_lock);
	pthread_mutex_destroy(&fs->wait_lock);
	free(fs);
}

void fs_set_session(struct fs *fs, struct fuse_session *se)
{
	if (!se) { /* the session goes: nothing may use it after this */
		fs_follow_stop(fs);
		fs_notifier_stop(fs);
	}
	fs->se = se;
	if (se) {
		fs_notifier_start(fs);
		fs_follow_start(fs);
	}
}

/* A local entry's node takes the mode and owner of its create, as a
 * chmod or chown of it would set them (fs_node_attrs_stage stores them
 * with it). Node lock held. */
static void node_set_created(struct fs_node *node, const struct ks_attr_change *init)
{
	node->has_mode = init->init & KS_ATTR_HAS_MODE;
	node->mode = (mode_t)init->mode;
	node->has_owner = init->init & (KS_ATTR_HAS_UID | KS_ATTR_HAS_GID);
	node->uid = (uid_t)init->uid;
	node->gid = (gid_t)init->gid;
}

/* How reply_entry answers. */
struct fs_reply {
	double entry_timeout, attr_timeout;
	enum fs_local local; /* a new local entry: the node holds it */
	enum kv_type ktype;  /* the node's type, for a create */
	bool input;	     /* a create of a name that is an input (KEY:rpush) */
	uint64_t since;	     /* fs_seq() before the attributes were read */
	/* A create of a local entry: the mode and owner its node keeps until
	 * it is stored (KS_ATTR_CREATE; NULL or no flag: none). */
	const struct ks_attr_change *init;
	/* A key with an expiry: the notifier watches it (fs_expiry_watch). */
	uint64_t expire_ms;
	const struct ks_key *key;
};

/* Reply to a lookup-like request with the node for (parent, stored
 * name); with fi, a create reply whose handle (fi->fh) gets the node. */
static void reply_entry(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *stored,
			size_t n, struct stat *st, const struct fs_reply *r,
			struct fuse_file_info *fi)
{
	enum fs_kind kind = fs_child_kind(fs, parent);
	struct fs_node *node = fs_itable_lookup(fs->it, parent, kind, stored, n);
	if (!node) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	if (r->local != FS_LOCAL_NONE) {
		/* The entry lives in the node until a commit or rename stores it. */
		pthread_mutex_lock(&node->lock);
		fs_node_set_empty(node);
		node->dirty = r->local == FS_LOCAL_PENDING;
		node->bad = 0;
		if (r->init && (r->init->flags & KS_ATTR_CREATE))
			node_set_created(node, r->init);
		pthread_mutex_unlock(&node->lock);
		fs_itable_set_local(fs->it, node, r->local);
	}
	if (r->ktype != KV_TYPE_NONE) {
		pthread_mutex_lock(&node->lock);
		node->ktype = r->ktype;
		/* Its writes are fed, never stored as a file's (open sets it
		 * too; a create's handle is made without an open). */
		if (r->input)
			node->input = true;
		pthread_mutex_unlock(&node->lock);
	}
	double attr_timeout = r->attr_timeout;
	if (fs_stat_overlay(node, r->since, st)) {
		/* The node stored a write while we looked: look again. */
		struct stat fresh;
		if (fs_node_stat(fs, node, &fresh, &attr_timeout) == 0)
			*st = fresh;
		else
			attr_timeout = 0; /* and it is gone: nothing to cache */
	}
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.ino = node->ino;
	e.attr = *st;
	atomic_store(&node->kmode, (unsigned)st->st_mode & S_IFMT);
	e.attr_timeout = attr_timeout;
	e.entry_timeout = r->entry_timeout;
	int rc;
	if (fi) {
		/* The handle is complete before the reply: the kernel may send
		 * writes the moment it has it. The node's lock is held to the
		 * reply, as in open: a removal of the name comes wholly before
		 * (and the node opens as what was there, or not at all) or
		 * after (and keeps the value for this open). */
		struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
		bool gone;
		pthread_mutex_lock(&node->lock);
		node->used_ms = now_ms();
		rc = fs_file_open_gone_locked(fs, node, fi->flags, &gone);
		if (rc) {
			pthread_mutex_unlock(&node->lock);
			fuse_reply_err(req, -rc);
			fs_file_close(fs, h); /* no node yet: frees the handle */
			fs_itable_forget(fs->it, node->ino, 1);
			return;
		}
		h->node = node;
		fs_itable_ref(fs->it, node);
		fs_file_open_setup(h, fi, false, r->local == FS_LOCAL_PENDING);
		rc = fuse_reply_create(req, &e, fi);
		if (rc)
			fs_file_close(fs, h);
		pthread_mutex_unlock(&node->lock);
	} else {
		pthread_mutex_lock(&node->lock);
		node->used_ms = now_ms();
		pthread_mutex_unlock(&node->lock);
		rc = fuse_reply_entry(req, &e);
	}
	if (rc)
		fs_itable_forget(fs->it, node->ino, 1);
	else if (r->expire_ms && r->key)
		fs_node_watch_expiry(fs, parent, node, r->key, r->expire_ms);
}

/* The node of ino if it is one of a JSON tree view (fs_jtree.c), whose
 * handlers then answer; NULL otherwise. */
static struct fs_node *jtree_node(fuse_req_t req, fuse_ino_t ino)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	return node && node->kind == FS_JTREE ? node : NULL;
}

/* ---- lookup, attributes ---------------------------------------------- */

/* Resolve an entry name in a key's directory: a local entry, or what the
 * key's shape says. *nodename = the name the node has. */
static int lookup_entry(struct fs *fs, struct fs_node *parent, const struct fs_path *p,
			const char *stored, size_t n, struct stat *st, struct fs_reply *r,
			struct buf *nodename)
{
	struct fs_node *local = fs_itable_find_local(fs->it, parent, stored, n);
	struct fs_ctx c;
	struct fs_entry e;
	const struct fs_shape *sh;
	double timeout;
	int rc;

	if (local) {
		fs_local_stat(fs, local, st, &timeout);
		fs_itable_unref(fs->it, local);
		r->entry_timeout = r->attr_timeout = timeout;
		return buf_set(nodename, stored, n);
	}
	fs_entry_init(&e);
	rc = fs_ctx_open(fs, parent, p, NULL, &c, &sh);
	if (rc == -EOPNOTSUPP)
		rc = -ENOENT; /* a field looked up in a key of another type */
	if (!rc && sh->canon) {
		/* Another spelling of a new entry the node still holds. */
		struct buf cn = BUF_INIT;
		if (sh->canon(stored, n, &cn) == 0 && (cn.len != n || memcmp(cn.data, stored, n)))
			local = fs_itable_find_local(fs->it, parent, cn.data, cn.len);
		if (local) {
			fs_local_stat(fs, local, st, &timeout);
			fs_itable_unref(fs->it, local);
			r->attr_timeout = timeout;
			r->entry_timeout = 0; /* not the node's own name */
			rc = buf_set(nodename, cn.data, cn.len);
		}
		buf_release(&cn);
		if (local) {
			fs_entry_release(&e);
			return rc;
		}
	}
	if (!rc)
		rc = fs_shape_lookup(&c, sh, stored, n, &e);
	if (!rc) {
		fs_stat_fill(fs, e.mode, e.size, e.version, 0, st, &timeout);
		fs_stat_attrs(fs, sh, &c.k, c.info.version, e.name.data, e.name.len, st);
		if (e.blksize)
			st->st_blksize = e.blksize;
		bool live = (sh->is_live && sh->is_live(stored, n)) ||
			    (sh->is_action && sh->is_action(stored, n));
		r->attr_timeout = sh->recomputed || live ? 0 : timeout;
		/* Another spelling of the node's name (a list position
		 * counted from the end), or a name whose meaning changes:
		 * resolve it anew every time. */
		r->entry_timeout = e.alias || sh->uncached ? 0 : timeout;
		rc = buf_set(nodename, e.name.data, e.name.len);
	} else if (rc == -ENOENT && sh && sh->uncached) {
		r->entry_timeout = 0; /* not even the miss may be cached */
	}
	fs_entry_release(&e);
	return rc;
}

static void op_lookup(fuse_req_t req, fuse_ino_t parent_ino, const char *name)
{
	struct fs_node *jt = jtree_node(req, parent_ino);
	if (jt) {
		fs_jtree_lookup(req, fuse_req_userdata(req), jt, name);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *parent = fs_itable_get(fs->it, parent_ino);
	struct buf stored = BUF_INIT, nodename = BUF_INIT;
	struct fs_path p;
	struct stat st;
	struct fs_reply r = {0};
	int rc;

	/* For a miss; a follower's writer may make the name any time. */
	r.entry_timeout = fs->opt.follow_ms ? 0 : fs->opt.timeout;
	fs_follow_fresh(fs);
	r.since = fs_seq(fs);
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
	enum fs_kind kind = fs_child_kind(fs, parent);
	if (kind == FS_NS &&
	    bytes_cmp(stored.data, stored.len, KS_RESERVED_NS, strlen(KS_RESERVED_NS)) == 0) {
		rc = -ENOENT;
		goto out;
	}
	struct fs_node *local =
	    kind == FS_KEY ? fs_local_key(fs, parent, stored.data, stored.len) : NULL;
	if (kind == FS_ENTRY) {
		rc = lookup_entry(fs, parent, &p, stored.data, stored.len, &st, &r, &nodename);
	} else if (local) {
		fs_local_stat(fs, local, &st, &r.attr_timeout);
		fs_itable_unref(fs->it, local);
		r.entry_timeout = r.attr_timeout;
		rc = buf_set(&nodename, stored.data, stored.len);
	} else {
		rc = fs_stat_path_exp(fs, kind, &p, &st, &r.attr_timeout, &r.expire_ms);
		r.entry_timeout = r.attr_timeout;
		if (!rc)
			rc = buf_set(&nodename, stored.data, stored.len);
		struct ks_key tk;
		fs_path_key(fs, &p, &tk);
		if (rc == -ENOENT && kind == FS_KEY && fs_jtree_is_name(stored.data, stored.len) &&
		    fs_jtree_lookup_root(req, fs, parent, &tk)) {
			rc = 0;
			goto done; /* a JSON document's tree: answered */
		}
	}
	if (rc)
		goto out;
	struct ks_key k;
	if (kind == FS_KEY) {
		fs_path_key(fs, &p, &k);
		r.key = &k;
	}
	reply_entry(req, fs, parent, nodename.data, nodename.len, &st, &r, NULL);
out:
	if (rc == -ENOENT) {
		/* A negative entry: the kernel remembers the miss (but not of
		 * a name that may be a file that is no key, a JSON path name:
		 * a write may make it). */
		struct fuse_entry_param e;
		memset(&e, 0, sizeof(e));
		e.entry_timeout = r.entry_timeout;
		if (parent && fs_child_kind(fs, parent) == FS_KEY &&
		    (fs_file_shape_named(stored.data, stored.len, false) ||
		     fs_jtree_is_name(stored.data, stored.len)))
			e.entry_timeout = 0; /* (or a JSON key's tree, KEY:tree) */
		fuse_reply_entry(req, &e);
	} else if (rc) {
		fuse_reply_err(req, fs_errno(rc));
	}
done:
	buf_release(&stored);
	buf_release(&nodename);
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

/* Attributes of the node of ino, or -ESTALE; *node: it (NULL: none). */
static int ino_stat(struct fs *fs, fuse_ino_t ino, struct fs_node **node, struct stat *st,
		    double *timeout)
{
	*node = fs_itable_get(fs->it, ino);
	return *node ? fs_node_stat(fs, *node, st, timeout) : -ESTALE;
}

static void reply_attr(fuse_req_t req, int rc, const struct stat *st, double timeout)
{
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		fuse_reply_attr(req, st, timeout);
}

static void op_getattr(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	(void)fi;
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node;
	struct stat st;
	double timeout;
	fs_follow_fresh(fs);
	int rc = ino_stat(fs, ino, &node, &st, &timeout);
	reply_attr(req, rc, &st, timeout);
}

static void op_setattr(fuse_req_t req, fuse_ino_t ino, struct stat *attr, int to_set,
		       struct fuse_file_info *fi)
{
	struct fs_node *jt = jtree_node(req, ino);
	if (jt) {
		fs_jtree_setattr(req, fuse_req_userdata(req), jt, attr, to_set);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node;
	struct stat st;
	double timeout;
	int rc = ino_stat(fs, ino, &node, &st, &timeout);
	if (rc)
		goto out;
	if (fs->opt.read_only) {
		rc = -EROFS;
		goto out;
	}
	if (to_set & FUSE_SET_ATTR_SIZE) {
		bool view;
		if (!S_ISREG(st.st_mode)) {
			rc = -EISDIR;
			goto out;
		}
		rc = fs_file_check(fs, node, true, &view);
		if (!rc)
			rc = fs_node_truncate(fs, node, (uint64_t)attr->st_size,
					      fi ? (struct fs_handle *)(uintptr_t)fi->fh : NULL);
		if (rc)
			goto out;
	}
	if (to_set & (FUSE_SET_ATTR_MODE | FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID |
		      FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME)) {
		rc = fs_attrs_store(fs, node, attr, to_set, &st);
		if (rc != 1)
			goto done;
	}
	/* The root and local entries have no record: their attributes
	 * live in the node for the life of the mount (a local entry's are
	 * stored with it). */
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
	rc = 0;
done:
	if (!rc)
		rc = fs_node_stat(fs, node, &st, &timeout);
out:
	reply_attr(req, rc, &st, timeout);
}

/* ---- creating and removing --------------------------------------------- */

/* What a create or mknod made, for the reply. */
struct made {
	struct buf name; /* the node's name */
	struct stat st;
	struct fs_reply r;
	bool made; /* created by this request (not an existing file opened) */
};

/*
 * The mode and owner a create, mknod or mkdir gives its object, for
 * KS_ATTR_CREATE in *ch: stored like a later chmod and chown would store
 * them, as far as they differ from what the object shows without a
 * record (fs_stat_fill: -o umask, uid, gid), so that the usual creation
 * writes nothing more. `mode` has the caller's umask applied already:
 * the kernel does that, since kvfs does not ask for FUSE_CAP_DONT_MASK
 * (op_init). The owner is the caller's fsuid and fsgid.
 */
static void creation_attrs(fuse_req_t req, const struct fs *fs, mode_t mode,
			   struct ks_attr_change *ch)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	memset(ch, 0, sizeof(*ch));
	ch->mode = mode & 07777;
	ch->uid = ctx->uid;
	ch->gid = ctx->gid;
	/* Not default_perm: that keeps views read-only, and a file made
	 * 0444 must keep its mode. */
	if (ch->mode != ((S_ISDIR(mode) ? 0777u : 0666u) & ~fs->opt.umask))
		ch->init |= KS_ATTR_HAS_MODE;
	/* An owner is stored whole, as chown shows it. */
	if (ctx->uid != fs->opt.uid || ctx->gid != fs->opt.gid)
		ch->init |= KS_ATTR_HAS_UID | KS_ATTR_HAS_GID;
	if (ch->init)
		ch->flags = KS_ATTR_CREATE;
}

/* Show a created object's mode and owner in its reply. */
static void created_stat(const struct ks_attr_change *init, struct stat *st)
{
	if (init->init & KS_ATTR_HAS_MODE)
		st->st_mode = (st->st_mode & S_IFMT) | (mode_t)init->mode;
	if (init->init & KS_ATTR_HAS_UID)
		st->st_uid = (uid_t)init->uid;
	if (init->init & KS_ATTR_HAS_GID)
		st->st_gid = (gid_t)init->gid;
}

/* ch (a TOUCH of the create) with the creation's mode and owner. */
static void stage_created(struct ks_attr_change *ch, const struct ks_attr_change *init)
{
	ch->flags |= init->flags & KS_ATTR_CREATE;
	ch->init = init->init;
	ch->mode = init->mode;
	ch->uid = init->uid;
	ch->gid = init->gid;
}

/* Create (or, without excl, find) name k that is no key but a file of
 * shape fsh (a JSON path name): nothing is stored before the file's
 * commit. -ENOENT if k is none of its names. */
static int create_name(struct fs *fs, const struct fs_file_shape *fsh, const struct ks_key *k,
		       const struct fs_path *p, bool excl, struct made *m)
{
	bool view;
	int rc = fsh->open(fs, k, true, &view);
	if (rc)
		return rc;
	rc = fsh->stat(fs, k, NULL, &m->st, &m->r.attr_timeout);
	if (rc == 0 && excl)
		rc = -EEXIST;
	if (rc == -ENOENT) {
		fs_stat_fill(fs, S_IFREG | 0644, 0, 0, 0, &m->st, &m->r.attr_timeout);
		rc = 0;
	}
	m->r.attr_timeout = m->r.entry_timeout = 0;
	m->r.ktype = fsh->type;
	m->r.input = fsh->feed != NULL;
	return rc ? rc : buf_set(&m->name, p->key.data, p->key.len);
}

/* Create (or, without excl, find) key k as a file. A remembered empty
 * bitmap counts as existing, so it is never replaced by a string. */
/* An open with O_CREAT never fails with ENOENT because another process
 * removed the name between our look and our open of what was there: we
 * try again, this many times. */
#define CREATE_TRIES 8

/*
 * Create (or, without excl, find) a file key. A new string is pending:
 * its node holds it until its first flush stores it with what was
 * written, in one batch (one batch per new file instead of two); `now`
 * (mknod: nothing will be flushed) stores it at once.
 */
static int create_key(struct fs *fs, struct fs_node *parent, const struct fs_path *p, bool excl,
		      bool now, const struct ks_attr_change *init, struct made *m)
{
	struct ks_key k;
	struct ks_info info;
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
	struct fs_node *local = fs_local_key(fs, parent, p->key.data, p->key.len);
	if (local) {
		double timeout;
		fs_local_stat(fs, local, &m->st, &timeout);
		fs_itable_unref(fs->it, local);
		if (excl)
			return -EEXIST;
		m->r.attr_timeout = m->r.entry_timeout = timeout;
		m->r.ktype = fs_new_file_shape->type;
		return buf_set(&m->name, p->key.data, p->key.len);
	}
	fs_path_key(fs, p, &k);
	int tries = 0;
again:;
	int rc = ks_lookup(fs->ks, &k, &info);
	if (rc == -ENOENT) {
		const struct fs_file_shape *named = fs_file_shape_named(k.key, k.klen, false);
		rc = named ? create_name(fs, named, &k, p, excl, m) : -ENOENT;
		if (rc != -ENOENT)
			return rc;
		enum kv_type t = fs_backup_type(fs, parent, p->key.data, p->key.len);
		if (t == KV_TYPE_NONE && !now) {
			/* Default attributes, times now: nothing to read back. */
			fs_stat_fill(fs, S_IFREG | 0644, 0, 0, 0, &m->st, &m->r.attr_timeout);
			clock_gettime(CLOCK_REALTIME, &m->st.st_mtim);
			m->st.st_atim = m->st.st_ctim = m->st.st_mtim;
			m->r.ktype = fs_new_file_shape->type;
			m->r.entry_timeout = m->r.attr_timeout;
			m->r.local = FS_LOCAL_PENDING;
			m->r.init = init; /* the node keeps them until it is stored */
			m->made = true;
			return buf_set(&m->name, p->key.data, p->key.len);
		}
		stage_created(&ch, init);
		k.attr = &ch;
		rc = fs_new_file_shape->create(fs, &k);
		k.attr = NULL;
		m->made = rc == 0;
		if (!rc && t != KV_TYPE_NONE &&
		    fs_file_convert(fs, &k, fs_new_file_shape->type, t) == 0)
			LOG_INFO("'%s' written anew after its backup: it keeps its type, %s",
				 p->key.data, enc_type_name(t));
	} else if (rc == 0) {
		rc = -EEXIST;
	}
	if (rc == -EEXIST && !excl)
		rc = 0; /* open the existing file */
	if (rc)
		return rc;
	rc = fs_stat_path(fs, FS_KEY, p, &m->st, &m->r.attr_timeout);
	if (rc == -ENOENT && ++tries < CREATE_TRIES)
		goto again; /* removed or renamed away since: make it */
	if (!rc && !S_ISREG(m->st.st_mode))
		rc = -EISDIR;
	if (!rc && ks_lookup(fs->ks, &k, &info) == 0) {
		m->r.ktype = info.type;
		if (!fs_type_is_supported(info.type))
			rc = -EOPNOTSUPP;
	}
	m->r.entry_timeout = m->r.attr_timeout;
	if (!rc)
		rc = buf_set(&m->name, p->key.data, p->key.len);
	return rc;
}

/* Create (or, without excl, find) an entry of directory `parent`. write:
 * the caller opens it for writing. */
static int create_entry(struct fs *fs, struct fs_node *parent, const struct fs_path *p,
			const char *stored, size_t n, bool excl, bool write,
			const struct ks_attr_change *init, struct fs_inval *iv, struct made *m)
{
	struct fs_ctx c;
	struct fs_entry e;
	const struct fs_shape *sh;
	double timeout;
	int rc = fs_entry_ctx(fs, parent, p, iv, &c, &sh);
	if (rc)
		return rc;
	m->r.ktype = sh->type;
	struct fs_node *local = fs_itable_find_local(fs->it, parent, stored, n);
	if (local) {
		fs_itable_unref(fs->it, local);
		if (excl)
			return -EEXIST;
		fs_local_stat(fs, local, &m->st, &timeout);
		m->r.entry_timeout = timeout;
		m->r.attr_timeout = sh->recomputed ? 0 : timeout;
		return buf_set(&m->name, stored, n);
	}
	fs_entry_init(&e);
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
	fs_attr_entry(sh, stored, n, &ch.entry, &ch.elen);
	stage_created(&ch, init);
	int tries = 0;
again:
	c.k.attr = &ch;
	rc = sh->create(&c, stored, n, &e);
	c.k.attr = NULL;
	/* Made just now (or to be stored at its flush), with the default
	 * attributes and this change's times: nothing to read back (as for
	 * a new key, create_key). */
	bool made = rc == 0 || rc == FS_CREATE_PENDING;
	m->made = made || rc == FS_CREATE_SCRATCH;
	if (rc == FS_CREATE_SCRATCH || rc == FS_CREATE_PENDING)
		m->r.init = init; /* the node keeps them until it is stored */
	if (rc == -EEXIST && !excl) {
		rc = fs_shape_lookup(&c, sh, stored, n, &e);
		if (rc == -ENOENT && ++tries < CREATE_TRIES)
			goto again; /* removed since: make it (see create_key) */
		if (!rc && e.view && write) {
			LOG_ERR("'%s/%s' is a read-only view", p->key.data, stored);
			rc = -EACCES;
		}
	}
	if (rc == FS_CREATE_SCRATCH || rc == FS_CREATE_PENDING) {
		m->r.local = rc == FS_CREATE_SCRATCH ? FS_LOCAL_SCRATCH : FS_LOCAL_PENDING;
		rc = fs_entry_set(&e, stored, n, S_IFREG | 0644, 0);
	}
	if (!rc) {
		struct ks_info info;
		fs_stat_fill(fs, e.mode, e.size, e.version, 0, &m->st, &timeout);
		if (made) {
			clock_gettime(CLOCK_REALTIME, &m->st.st_mtim);
			m->st.st_atim = m->st.st_ctim = m->st.st_mtim;
		} else if (!m->r.local && ks_lookup(fs->ks, &c.k, &info) == 0) {
			fs_stat_attrs(fs, sh, &c.k, info.version, e.name.data, e.name.len, &m->st);
		}
		m->r.attr_timeout = sh->recomputed ? 0 : timeout;
		m->r.entry_timeout = e.alias || (sh->uncached && !m->r.local) ? 0 : timeout;
		rc = buf_set(&m->name, e.name.data, e.name.len);
	}
	fs_entry_release(&e);
	return rc;
}

static void op_create(fuse_req_t req, fuse_ino_t parent_ino, const char *name, mode_t mode,
		      struct fuse_file_info *fi)
{
	struct fs_node *jt = jtree_node(req, parent_ino);
	if (jt) {
		fs_jtree_create(req, fuse_req_userdata(req), jt, name, fi, true);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct ks_attr_change init;
	struct fs_node *parent;
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct fs_inval iv;
	struct made m;
	struct fs_handle *h = NULL;
	int rc;

	memset(&m, 0, sizeof(m));
	m.r.since = fs_seq(fs);
	buf_init(&m.name);
	fs_inval_init(&iv);
	fs_path_init(&p);
	creation_attrs(req, fs, S_IFREG | (mode & 07777), &init);
	rc = fs_child_begin(fs, parent_ino, name, &parent, &stored, &p);
	if (rc)
		goto out;
	bool excl = fi->flags & O_EXCL;
	switch (fs_child_kind(fs, parent)) {
	case FS_NS:
		LOG_ERR("'%s': the root holds namespaces, which are directories (use mkdir)", name);
		rc = -EPERM;
		break;
	case FS_KEY:
		rc = create_key(fs, parent, &p, excl, false, &init, &m);
		break;
	default:
		rc = create_entry(fs, parent, &p, stored.data, stored.len, excl,
				  (fi->flags & (O_ACCMODE | O_TRUNC)) != O_RDONLY, &init, &iv, &m);
		break;
	}
	if (rc)
		goto out;
	if (m.made)
		created_stat(&init, &m.st);
	h = fs_handle_new(fs);
	if (!h) {
		rc = -ENOMEM;
		goto out;
	}
	fi->fh = (uintptr_t)h;
	/* reply_entry attaches the node to the handle and counts the open. */
	reply_entry(req, fs, parent, m.name.data, m.name.len, &m.st, &m.r, fi);
out:
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	fs_inval_send(fs, &iv);
	buf_release(&stored);
	buf_release(&m.name);
	fs_path_release(&p);
}

static void op_mknod(fuse_req_t req, fuse_ino_t parent_ino, const char *name, mode_t mode,
		     dev_t rdev)
{
	struct fs_node *jt = jtree_node(req, parent_ino);
	if (jt && S_ISREG(mode)) {
		fs_jtree_create(req, fuse_req_userdata(req), jt, name, NULL, false);
		return;
	}
	(void)rdev;
	if (!S_ISREG(mode)) {
		LOG_ERR("mknod '%s': only regular files can be stored", name);
		fuse_reply_err(req, EPERM);
		return;
	}
	/* A regular mknod is a create whose handle is closed at once. */
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *parent;
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct fs_inval iv;
	struct made m;
	struct ks_attr_change init;
	memset(&m, 0, sizeof(m));
	m.r.since = fs_seq(fs);
	buf_init(&m.name);
	fs_inval_init(&iv);
	fs_path_init(&p);
	creation_attrs(req, fs, mode, &init);
	int rc = fs_child_begin(fs, parent_ino, name, &parent, &stored, &p);
	if (!rc && fs_child_kind(fs, parent) == FS_NS)
		rc = -EPERM;
	if (!rc && fs_child_kind(fs, parent) == FS_KEY) {
		rc = create_key(fs, parent, &p, true, true, &init, &m);
	} else if (!rc) {
		rc = create_entry(fs, parent, &p, stored.data, stored.len, true, false, &init, &iv,
				  &m);
		if (!rc && m.r.local == FS_LOCAL_PENDING) {
			/* Nothing will be written or closed: store it empty now,
			 * with its times, mode and owner in the same batch. */
			struct fs_ctx c;
			const struct fs_shape *sh;
			struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
			rc = fs_entry_ctx(fs, parent, &p, NULL, &c, &sh);
			if (!rc) {
				fs_attr_entry(sh, stored.data, stored.len, &ch.entry, &ch.elen);
				stage_created(&ch, &init);
				c.k.attr = &ch;
				rc = sh->commit(&c, stored.data, stored.len, "", 0, true);
				c.k.attr = NULL;
			}
			m.r.local = FS_LOCAL_NONE;
			m.r.init = NULL;
		}
	}
	if (!rc && m.made)
		created_stat(&init, &m.st);
	if (!rc)
		reply_entry(req, fs, parent, m.name.data, m.name.len, &m.st, &m.r, NULL);
	else
		fuse_reply_err(req, fs_errno(rc));
	fs_inval_send(fs, &iv);
	buf_release(&stored);
	buf_release(&m.name);
	fs_path_release(&p);
}

static void op_mkdir(fuse_req_t req, fuse_ino_t parent_ino, const char *name, mode_t mode)
{
	struct fs_node *jt = jtree_node(req, parent_ino);
	if (jt) {
		fs_jtree_mkdir(req, fuse_req_userdata(req), jt, name);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct ks_attr_change init;
	struct fs_node *parent;
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct ks_key k;
	struct stat st;
	struct fs_reply r = {.since = fs_seq(fs)};
	int rc;

	fs_path_init(&p);
	/* The mode of mkdir carries no file type. */
	creation_attrs(req, fs, S_IFDIR | (mode & 07777), &init);
	rc = fs_child_begin(fs, parent_ino, name, &parent, &stored, &p);
	if (rc)
		goto out;
	switch (fs_child_kind(fs, parent)) {
	case FS_NS:
		if (stored.len > ENC_MAX_NS) {
			rc = -ENAMETOOLONG;
			LOG_ERR("mkdir '%s': a namespace name has at most %d bytes", name,
				ENC_MAX_NS);
		} else {
			/* The namespace's own records, in its creation's batch. */
			rc = ks_ns_create(fs->ks, stored.data, stored.len, &init);
		}
		break;
	case FS_KEY: {
		struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
		if (fs_has_local_key(fs, parent, stored.data, stored.len)) {
			rc = -EEXIST; /* a new file, not stored yet */
			break;
		}
		fs_path_key(fs, &p, &k);
		stage_created(&ch, &init);
		k.attr = &ch;
		rc = ks_empty_create(fs->ks, &k, fs_new_dir_shape->type);
		k.attr = NULL;
		break;
	}
	default:
		LOG_ERR("mkdir '%s': entries of a key are files, not directories", name);
		rc = -EPERM;
		break;
	}
	if (!rc)
		rc = fs_stat_path(fs, fs_child_kind(fs, parent), &p, &st, &r.attr_timeout);
	r.entry_timeout = r.attr_timeout;
	if (!rc)
		reply_entry(req, fs, parent, stored.data, stored.len, &st, &r, NULL);
out:
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	buf_release(&stored);
	fs_path_release(&p);
}

/*
 * Forget a local key or entry (an unlink) and drop the reference the
 * caller holds. Under its lock: a flush or release may be storing a
 * pending one now, and then it is removed as a stored one (false).
 */
static bool forget_local(struct fs *fs, struct fs_node *local)
{
	pthread_mutex_lock(&local->lock);
	enum fs_local was = fs_itable_local(fs->it, local);
	bool still = was != FS_LOCAL_NONE;
	if (was == FS_LOCAL_SCRATCH)
		fs_file_scratch_discarded_locked(fs, local, "at rm");
	if (still) {
		fs_itable_unhash(fs->it, local);
		fs_itable_set_local(fs->it, local, FS_LOCAL_NONE);
	}
	pthread_mutex_unlock(&local->lock);
	fs_itable_unref(fs->it, local);
	return still;
}

/* Remove an entry: a local one is just forgotten. */
static int unlink_entry(struct fs *fs, struct fs_node *parent, const struct fs_path *p,
			const char *stored, size_t n, struct fs_inval *iv)
{
	struct fs_ctx c;
	const struct fs_shape *sh;
	int rc = fs_entry_ctx(fs, parent, p, iv, &c, &sh);
	if (rc == -ENOTDIR)
		return -ENOTDIR;
	struct fs_node *local = fs_itable_find_local(fs->it, parent, stored, n);
	struct buf cn = BUF_INIT;
	if (!local && !rc && sh->canon && sh->canon(stored, n, &cn) == 0 &&
	    (cn.len != n || memcmp(cn.data, stored, n)))
		local = fs_itable_find_local(fs->it, parent, cn.data, cn.len); /* "007" of 7 */
	buf_release(&cn);
	if (local && forget_local(fs, local))
		return 0;
	if (rc)
		return rc;
	if (fs_shape_is_special(sh, stored, n)) {
		LOG_ERR("'%s/%s' is a view or an input: it cannot be removed", p->key.data, stored);
		return -EACCES;
	}
	/* The entry's records go with it; a list's later positions change
	 * meaning, so every position's records go. */
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH | KS_ATTR_DROP};
	if (sh->uncached)
		ch.flags |= KS_ATTR_RENUMBER;
	fs_attr_entry(sh, stored, n, &ch.entry, &ch.elen);
	rc = fs_keep_open(fs, parent, stored, n);
	c.k.attr = &ch;
	if (!rc)
		rc = sh->unlink(&c, stored, n);
	c.k.attr = NULL;
	if (!rc)
		fs_itable_unlink(fs->it, parent, stored, n);
	return rc;
}

/* Remove a new key its node still holds: true if there was one. */
static bool unlink_local_key(struct fs *fs, struct fs_node *parent, const char *name, size_t n)
{
	struct fs_node *local = fs_local_key(fs, parent, name, n);
	return local && forget_local(fs, local);
}

/* rm of name k that no key has: a file of a shape's all the same (a JSON
 * path name: JSON.DEL; an input: EACCES)? */
static int unlink_name(struct fs *fs, const struct ks_key *k)
{
	const struct fs_file_shape *fsh = fs_file_shape_named(k->key, k->klen, false);
	return fsh && fsh->unlink ? fsh->unlink(fs, k) : -ENOENT;
}

/*
 * What unlink and rmdir hold: the child's parent, stored name, path and
 * key, and its name's lock, so that no commit of the file and no write
 * of an entry of it lands after its removal (fs_inode.h, fs_file.c).
 * removal_run sets it up, calls remove_child and replies once.
 */
struct removal {
	struct fs_node *parent;
	struct buf stored;
	struct fs_path p;
	struct ks_key k;
	struct fs_inval iv;
	struct fs_locked held;
};

static void removal_run(fuse_req_t req, fuse_ino_t parent_ino, const char *name,
			int (*remove_child)(struct fs *fs, struct removal *r))
{
	struct fs *fs = fuse_req_userdata(req);
	struct removal r;
	memset(&r, 0, sizeof(r));
	buf_init(&r.stored);
	fs_inval_init(&r.iv);
	fs_path_init(&r.p);
	int rc = fs_child_begin(fs, parent_ino, name, &r.parent, &r.stored, &r.p);
	if (!rc) {
		fs_itable_lock_names(fs->it, r.parent, r.stored.data, r.stored.len, NULL, NULL, 0,
				     &r.held);
		fs_path_key(fs, &r.p, &r.k);
		rc = remove_child(fs, &r);
	}
	fs_itable_unlock_names(fs->it, &r.held);
	fuse_reply_err(req, fs_errno(rc));
	fs_inval_send(fs, &r.iv);
	buf_release(&r.stored);
	fs_path_release(&r.p);
}

/* unlink of the child r names. */
static int unlink_child(struct fs *fs, struct removal *r)
{
	struct ks_info info;
	int rc = 0;
	switch (fs_child_kind(fs, r->parent)) {
	case FS_NS:
		rc = -EISDIR;
		break;
	case FS_KEY:
		if (unlink_local_key(fs, r->parent, r->stored.data, r->stored.len))
			break; /* a new file, never stored: forgotten */
		rc = ks_lookup(fs->ks, &r->k, &info);
		if (rc == -EUCLEAN) /* corrupt metadata: DEL needs nothing else */
			rc = fs_corrupt_is_file(info.type) ? 0 : -EISDIR;
		if (rc == -ENOENT) {
			rc = unlink_name(fs, &r->k); /* a JSON path name: JSON.DEL */
		} else if (!rc && !fs_corrupt_is_file(info.type)) {
			rc = -EISDIR;
		} else if (!rc) {
			rc = fs_keep_open(fs, r->parent, r->stored.data, r->stored.len);
			if (!rc)
				rc = ks_del(fs->ks, &r->k);
		}
		if (!rc)
			fs_itable_unlink(fs->it, r->parent, r->stored.data, r->stored.len);
		break;
	default:
		rc = unlink_entry(fs, r->parent, &r->p, r->stored.data, r->stored.len, &r->iv);
		break;
	}
	return rc;
}

static void op_unlink(fuse_req_t req, fuse_ino_t parent_ino, const char *name)
{
	struct fs_node *jt = jtree_node(req, parent_ino);
	if (jt) {
		fs_jtree_remove(req, fuse_req_userdata(req), jt, name, false);
		return;
	}
	struct fs *jfs = fuse_req_userdata(req);
	if (fs_jtree_root_named(jfs, fs_itable_get(jfs->it, parent_ino), name)) {
		LOG_ERR("unlink '%s': a JSON document's tree is a view of its key (rm the key)",
			name);
		fuse_reply_err(req, EBUSY);
		return;
	}
	removal_run(req, parent_ino, name, unlink_child);
}

/* rmdir of a live key: one that lists nothing goes (DEL: a sketch, an
 * emptied stream); so does a key whose state does not decode (-EUCLEAN,
 * logged by the type): rm -r met EIO listing it, and DEL needs only the
 * metadata. Anything else is not empty (the shape's is_blank says). */
static int rmdir_blank(struct fs *fs, const struct ks_key *k, const struct ks_info *info)
{
	const struct fs_shape *sh = fs_shape_of(info->type);
	struct fs_ctx c = {.fs = fs, .dir = NULL, .k = *k, .iv = NULL, .info = *info, .sh = sh};
	int rc = sh && sh->is_blank ? sh->is_blank(&c) : 0;
	if (rc == 1 || rc == -EUCLEAN)
		return ks_del(fs->ks, k);
	return rc < 0 ? rc : -ENOTEMPTY;
}

/* rmdir of the child r names. */
static int rmdir_child(struct fs *fs, struct removal *r)
{
	struct ks_info info;
	int rc = 0;
	switch (fs_child_kind(fs, r->parent)) {
	case FS_NS: {
		/* New files not stored yet are files of the namespace too. */
		struct fs_node *ns =
		    fs_itable_find(fs->it, r->parent, r->stored.data, r->stored.len);
		rc = ns && fs_itable_has_local_kids(fs->it, ns) ? -ENOTEMPTY : 0;
		if (ns)
			fs_itable_unref(fs->it, ns);
		if (!rc)
			rc = ks_ns_remove(fs->ks, r->stored.data, r->stored.len);
		break;
	}
	case FS_KEY:
		rc = fs_has_local_key(fs, r->parent, r->stored.data, r->stored.len)
			 ? -ENOTDIR
			 : ks_lookup(fs->ks, &r->k, &info);
		if (rc == -EUCLEAN) { /* corrupt metadata: DEL needs nothing else */
			rc = fs_corrupt_is_file(info.type) ? -ENOTDIR : ks_del(fs->ks, &r->k);
		} else if (!rc && fs_type_is_file(info.type)) {
			rc = -ENOTDIR;
		} else if (!rc && !info.empty) {
			rc = rmdir_blank(fs, &r->k, &info);
		} else if (!rc) {
			rc = ks_empty_remove(fs->ks, &r->k);
		}
		if (!rc) {
			/* Scratch files of the directory go with it. */
			struct fs_node *dir =
			    fs_itable_find(fs->it, r->parent, r->stored.data, r->stored.len);
			if (dir) {
				fs_itable_drop_local_kids(fs->it, dir);
				fs_itable_unref(fs->it, dir);
			}
		}
		break;
	default:
		rc = -ENOTDIR;
		break;
	}
	if (!rc)
		fs_itable_unlink(fs->it, r->parent, r->stored.data, r->stored.len);
	return rc;
}

static void op_rmdir(fuse_req_t req, fuse_ino_t parent_ino, const char *name)
{
	struct fs_node *jt = jtree_node(req, parent_ino);
	if (jt) {
		fs_jtree_remove(req, fuse_req_userdata(req), jt, name, true);
		return;
	}
	struct fs *jfs = fuse_req_userdata(req);
	if (fs_jtree_root_named(jfs, fs_itable_get(jfs->it, parent_ino), name)) {
		LOG_ERR("rmdir '%s': a JSON document's tree is a view of its key (rm the key)",
			name);
		fuse_reply_err(req, EBUSY);
		return;
	}
	removal_run(req, parent_ino, name, rmdir_child);
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

/* The session ends: no invalidation may be sent after this. What open
 * files hold is stored then (its invalidations are dropped). */
static void op_destroy(void *userdata)
{
	fs_notifier_stop(userdata);
	fs_file_commit_all(userdata);
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
	/* The kernel applies the caller's umask to the mode of create,
	 * mknod and mkdir (kvfs has no ACLs that would need it done here),
	 * so creation_attrs takes the mode as it comes. */
	conn->want &= ~(unsigned)FUSE_CAP_DONT_MASK;
}

const struct fuse_lowlevel_ops fs_ops = {
    .init = op_init,
    .destroy = op_destroy,
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
    .rename = fs_op_rename,
    .link = op_link,
    .open = fs_op_open,
    .read = fs_op_read,
    .write = fs_op_write,
    .flush = fs_op_flush,
    .release = fs_op_release,
    .fsync = fs_op_fsync,
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
