/*
 * fs_dir: directory listings. A listing streams from the type layer's
 * ordered iterators: each readdir call seeks just past the entry its
 * offset came from (that entry's cursor, its sort key in the order the
 * iterator enumerates), so a namespace of any size lists in bounded
 * memory, and a reader that pauses, resumes mid-reply or seeks back sees
 * every name once. The offset of an entry whose cursor is a number (list
 * position, id, chunk, state file) carries that number; any other entry's
 * offset is a serial number of the handle, which keeps the cursors of the
 * serials it handed out last (docs/architecture.md section 7). Entries of
 * a key come from the shape of its type (fs_int.h), which picks the order
 * (list order, score order, ...) and the cursor. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <stdlib.h>

/*
 * Offsets: 0 is the start, 1 and 2 follow "." and "..". An entry whose
 * cursor is numbered (fs_child) carries DIR_NUMBERED + the number: any
 * handle resumes from it without state. Any other entry carries the
 * handle's next serial (3, 4, ...: its position when the handle lists
 * from the start) and the handle keeps its cursor as a mark. The kernel
 * resumes from an entry of the last reply (a small getdents buffer drops
 * the rest) and telldir values are recent, so the marks of the last
 * DIR_MARKS_MAX entries (at most DIR_MARK_BYTES of cursors, never the
 * current reply's) answer them exactly; an older serial or another
 * handle's is taken as a position and walked to from the start.
 */
#define DIR_NUMBERED   ((off_t)1 << 62)
#define DIR_MARKS_MAX  4096
#define DIR_MARK_BYTES ((size_t)1 << 20)

struct dir_mark {
	off_t off;
	size_t at, len; /* its cursor in fs_dir.mark_bytes */
};

struct fs_dir {
	pthread_mutex_t lock;
	struct fs_node *node;	   /* held: counted in its dir_opens */
	const struct fs_shape *sh; /* a key's, when it was opened */
	struct buf cursor;	   /* cursor of the entry the next call continues after */
	bool has_cursor;
	off_t next_off;		/* offset the next call continues from */
	off_t serial;		/* offset of the next entry that is not numbered */
	struct dir_mark *marks; /* ascending offsets, the last nmarks serials handed out */
	size_t nmarks, cap;
	struct buf mark_bytes;
	/* A key's listing reads at this snapshot, taken by the call that
	 * starts a pass (offset 0) and kept until the next such call or the
	 * close: one version of the key per pass, however many calls it
	 * takes and whatever is written meanwhile. NULL: none yet. */
	struct store_snap *snap;
	uint64_t snap_seq; /* fs_seq when snap was taken */
};

struct child_iter {
	struct ks_ns_iter *ns;
	struct ks_key_iter *keys;
	const struct fs_shape *sh; /* entries of a key, with it */
	void *it;
	struct fs_path p;	    /* the directory's path; k borrows from it */
	struct ks_key k;	    /* keys: the namespace; entries: the key */
	uint64_t version;	    /* entries: the key's version */
	struct fs_key_attrs kattrs; /* entries: the key's attributes, read once */
};

/* Open an iterator over the children of `node` after the cursor `after`
 * (the stored name, or for entries the shape's cursor). by_name: in
 * stored-name order. */
static int child_iter_open(struct fs *fs, struct fs_node *node, const char *after, size_t alen,
			   bool by_name, const struct store_snap *snap, struct child_iter *ci)
{
	struct fs_ctx c;
	int rc = 0;

	memset(ci, 0, sizeof(*ci));
	fs_path_init(&ci->p);
	struct fs_path *pp = &ci->p;
	struct ks_key k;
	rc = fs_itable_path(fs->it, node, pp);
	if (rc)
		goto out;
	fs_path_key(fs, pp, &k);
	ci->k = k;
	switch (fs_child_kind(fs, node)) {
	case FS_NS:
		ci->ns = ks_ns_iter_new(fs->ks, after, alen);
		rc = ci->ns ? 0 : -ENOMEM;
		break;
	case FS_KEY:
		/* In cluster mode a name is no position (the slot comes
		 * first): a name search starts from the first key. */
		if (by_name && ks_cluster(fs->ks))
			after = NULL;
		ci->keys = ks_key_iter_new(fs->ks, k.ns, k.nslen, after, alen);
		rc = ci->keys ? 0 : -ENOMEM;
		break;
	default:
		rc = fs_ctx_open_at(fs, node, pp, NULL, snap, &c, &ci->sh);
		if (!rc)
			rc = ci->sh->iter_open(&c, after, alen, by_name, &ci->it);
		if (rc)
			ci->sh = NULL;
		ci->version = c.info.version;
		break;
	}
out:
	if (rc)
		fs_path_release(&ci->p);
	return rc;
}

static int child_iter_next(struct child_iter *ci, struct fs_child *c)
{
	int rc;
	memset(c, 0, sizeof(*c));
	if (ci->ns) {
		rc = ks_ns_iter_next(ci->ns, &c->name, &c->n);
		c->mode = S_IFDIR | 0755;
	} else if (ci->keys) {
		struct ks_info info;
		rc = ks_key_iter_next(ci->keys, &c->name, &c->n, &info);
		c->mode = fs_type_is_file(info.type) ? S_IFREG | 0644 : S_IFDIR | 0755;
		c->size = info.size;
		const struct fs_file_shape *fsh = fs_file_shape_of(info.type);
		c->recomputed = fsh && fsh->recomputed;
		c->version = info.version;
		c->expire_ms = info.expire_ms;
		if (rc > 0)
			ks_key_iter_rank(ci->keys, &c->cursor, &c->clen);
	} else {
		rc = ci->sh->iter_next(ci->it, c);
	}
	if (rc > 0 && !c->cursor) {
		c->cursor = c->name;
		c->clen = c->n;
	}
	if (c->clen != 8)
		c->numbered = false;
	return rc;
}

static void child_iter_close(struct child_iter *ci)
{
	if (ci->ns)
		ks_ns_iter_free(ci->ns);
	if (ci->keys)
		ks_key_iter_free(ci->keys);
	if (ci->sh)
		ci->sh->iter_free(ci->it);
	fs_path_release(&ci->p);
}

int fs_dir_find_long(struct fs *fs, struct fs_node *parent, struct buf *name, uint64_t hash,
		     const char *typed)
{
	struct buf prefix = BUF_INIT, enc = BUF_INIT;
	struct child_iter ci;
	struct fs_child c;
	int rc = buf_set(&prefix, name->data, name->len);
	if (rc)
		return rc;
	/* Start just before the prefix: after it minus its last byte. */
	rc = child_iter_open(fs, parent, prefix.data, prefix.len ? prefix.len - 1 : 0, true, NULL,
			     &ci);
	if (rc)
		goto out;
	rc = -ENOENT;
	int more;
	while ((more = child_iter_next(&ci, &c)) > 0) {
		/* (has_prefix takes a C string; a stored name may hold NULs) */
		if (c.n >= prefix.len && memcmp(c.name, prefix.data, prefix.len) == 0) {
			/* Only the canonical long name reaches it, not every
			 * shorter prefix with the same hash. */
			if (names_long_matches(c.name, c.n, hash) &&
			    names_encode(c.name, c.n, &enc) == 0 && strcmp(enc.data, typed) == 0) {
				rc = buf_set(name, c.name, c.n);
				break;
			}
		} else if (!ks_cluster(fs->ks) &&
			   bytes_cmp(c.name, c.n, prefix.data, prefix.len) > 0) {
			break; /* past every name with this prefix */
		}
	}
	if (more < 0)
		rc = more;
	child_iter_close(&ci);
out:
	buf_release(&prefix);
	buf_release(&enc);
	return rc;
}

/* The key's shape hears of the close (a list's last one closes the gaps
 * its removals left, fs_list.c). */
static void dir_close(struct fs *fs, struct fs_dir *d)
{
	struct fs_node *node = d->node;
	pthread_mutex_lock(&node->lock);
	node->dir_opens--;
	pthread_mutex_unlock(&node->lock);
	if (d->sh && d->sh->dir_closed)
		d->sh->dir_closed(fs, node);
	fs_itable_unref(fs->it, node);
	ks_snap_free(fs->ks, d->snap);
	buf_release(&d->cursor);
	buf_release(&d->mark_bytes);
	free(d->marks);
	pthread_mutex_destroy(&d->lock);
	free(d);
}

void fs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_opendir(req, fuse_req_userdata(req), jt, fi);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	const struct fs_shape *sh = NULL;
	int rc = 0;

	if (!node) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	if (node->kind == FS_ENTRY) {
		fuse_reply_err(req, ENOTDIR);
		return;
	}
	if (node->kind == FS_KEY) {
		struct fs_path p;
		struct ks_key k;
		struct ks_info info;
		fs_path_init(&p);
		rc = fs_itable_path(fs->it, node, &p);
		if (!rc) {
			fs_path_key(fs, &p, &k);
			rc = ks_lookup(fs->ks, &k, &info);
		}
		if (!rc && fs_type_is_file(info.type))
			rc = -ENOTDIR;
		else if (!rc && !(sh = fs_shape_of(info.type))) {
			LOG_WARN("listing '%s': type %s is not mapped into files yet", p.key.data,
				 enc_type_name(info.type));
			rc = -EOPNOTSUPP;
		}
		fs_path_release(&p);
	}
	if (rc) {
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	struct fs_dir *d = calloc(1, sizeof(*d));
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_init(&d->lock, NULL);
	d->node = node;
	d->sh = sh;
	fs_itable_ref(fs->it, node);
	pthread_mutex_lock(&node->lock);
	node->dir_opens++;
	pthread_mutex_unlock(&node->lock);
	if (sh && sh->dir_opened)
		sh->dir_opened(fs, node);
	fi->fh = (uintptr_t)d;
	if (fuse_reply_open(req, fi))
		dir_close(fs, d);
}

static void marks_clear(struct fs_dir *d)
{
	d->nmarks = 0;
	buf_reset(&d->mark_bytes);
}

/* Keep room for a reply's marks: past the limits, forget the older half
 * (never the marks of the reply being built: called before it). */
static void marks_trim(struct fs_dir *d)
{
	if (d->nmarks < DIR_MARKS_MAX && d->mark_bytes.len < DIR_MARK_BYTES)
		return;
	size_t drop = (d->nmarks + 1) / 2;
	size_t from = drop < d->nmarks ? d->marks[drop].at : d->mark_bytes.len;
	memmove(d->marks, d->marks + drop, (d->nmarks - drop) * sizeof(*d->marks));
	d->nmarks -= drop;
	for (size_t i = 0; i < d->nmarks; i++)
		d->marks[i].at -= from;
	memmove(d->mark_bytes.data, d->mark_bytes.data + from, d->mark_bytes.len - from);
	buf_resize(&d->mark_bytes, d->mark_bytes.len - from); /* shrinks: cannot fail */
}

static int marks_add(struct fs_dir *d, off_t off, const char *cursor, size_t clen)
{
	struct dir_mark *marks = array_grow(d->marks, &d->cap, d->nmarks, sizeof(*marks), 64);
	if (!marks)
		return -ENOMEM;
	d->marks = marks;
	struct dir_mark *m = &d->marks[d->nmarks];
	m->off = off;
	m->at = d->mark_bytes.len;
	m->len = clen;
	int rc = buf_add(&d->mark_bytes, cursor, clen);
	if (!rc)
		d->nmarks++;
	return rc;
}

/* The mark of serial `off`, or NULL. */
static const struct dir_mark *marks_find(const struct fs_dir *d, off_t off)
{
	size_t lo = 0, hi = d->nmarks;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->marks[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->nmarks && d->marks[lo].off == off ? &d->marks[lo] : NULL;
}

/* Move the cursor to just after entry number `skip` (0-based) from the
 * start: only for a serial this handle has no mark of (an old telldir,
 * another handle's offset). Exact if nothing changed since it was handed
 * out. */
static int dir_walk(struct fs *fs, struct fs_node *node, struct fs_dir *d, off_t skip)
{
	struct child_iter ci;
	struct fs_child c;
	int rc = child_iter_open(fs, node, NULL, 0, false, d->snap, &ci);
	if (rc)
		return rc;
	for (off_t i = 0; i < skip && (rc = child_iter_next(&ci, &c)) > 0; i++) {
		rc = buf_set(&d->cursor, c.cursor, c.clen);
		if (rc)
			break;
		d->has_cursor = true;
	}
	child_iter_close(&ci);
	return rc < 0 ? rc : 0;
}

/* Set the cursor to continue after the entry that carried `off`. */
static int dir_resume(struct fs *fs, struct fs_node *node, struct fs_dir *d, off_t off)
{
	const struct dir_mark *m;
	int rc = 0;
	if (off == d->next_off && off != 0)
		return 0; /* the cursor is already there */
	d->has_cursor = false;
	buf_reset(&d->cursor);
	if (off <= 2) {
		marks_clear(d);
		d->serial = 3;
	} else if (off >= DIR_NUMBERED) {
		rc = buf_resize(&d->cursor, 8);
		if (!rc) {
			put_be64(d->cursor.data, (uint64_t)(off - DIR_NUMBERED));
			d->has_cursor = true;
		}
	} else if ((m = marks_find(d, off))) {
		/* What followed it was dropped by the reader: its serials
		 * are handed out again, maybe to other entries. */
		rc = buf_set(&d->cursor, d->mark_bytes.data + m->at, m->len);
		if (!rc) {
			d->has_cursor = true;
			d->nmarks = (size_t)(m - d->marks) + 1;
			d->mark_bytes.len = m->at + m->len;
			d->serial = off + 1;
		}
	} else {
		marks_clear(d);
		rc = dir_walk(fs, node, d, off - 2);
		d->serial = off + 1;
	}
	return rc;
}

size_t fs_dir_add_dot(fuse_req_t req, char *p, size_t rem, const char *name, fuse_ino_t ino,
		      off_t next, bool plus)
{
	if (!plus) {
		struct stat st = {.st_ino = ino, .st_mode = S_IFDIR};
		return fuse_add_direntry(req, p, rem, name, &st, next);
	}
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.attr.st_ino = ino;
	e.attr.st_mode = S_IFDIR;
	return fuse_add_direntry_plus(req, p, rem, name, &e, next);
}

static void dir_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		     struct fuse_file_info *fi, bool plus)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_dir *d = (struct fs_dir *)(uintptr_t)fi->fh;
	struct fs_node *node = fs_itable_get(fs->it, ino);
	struct buf fname = BUF_INIT;
	struct child_iter ci;
	bool ci_open = false;
	size_t used = 0;
	int rc = 0;
	char *out = malloc(size);

	if (!out || !node) {
		fuse_reply_err(req, out ? ESTALE : ENOMEM);
		free(out);
		return;
	}
	fs_follow_fresh(fs);
	pthread_mutex_lock(&d->lock);
	/* A later call of a pass lists its snapshot's version, which the
	 * kernel must not cache as the names' attributes now. */
	bool old_snap = d->sh && d->snap && off != 0;
	if (d->sh && (off == 0 || !d->snap)) {
		/* A pass over a key's entries starts: its one version. Without
		 * memory for it, the listing reads the latest (as before). */
		ks_snap_free(fs->ks, d->snap);
		d->snap_seq = fs_seq(fs);
		d->snap = ks_snap_new(fs->ks);
	}
	rc = dir_resume(fs, node, d, off);
	if (rc)
		goto out;
	marks_trim(d);
	if (off < 1) {
		size_t sz = fs_dir_add_dot(req, out + used, size - used, ".", ino, 1, plus);
		if (sz > size - used)
			goto done;
		used += sz;
		off = 1;
	}
	if (off < 2) {
		uint64_t pino = node->parent ? node->parent->ino : FS_ROOT_INO;
		size_t sz = fs_dir_add_dot(req, out + used, size - used, "..", pino, 2, plus);
		if (sz > size - used)
			goto done;
		used += sz;
		off = 2;
	}
	/* Before the iterator reads (at the snapshot: when it was taken). */
	uint64_t since = d->snap ? d->snap_seq : fs_seq(fs);
	rc = child_iter_open(fs, node, d->has_cursor ? d->cursor.data : NULL,
			     d->has_cursor ? d->cursor.len : 0, false, d->snap, &ci);
	if (rc)
		goto out;
	ci_open = true;
	struct fs_child c;
	while ((rc = child_iter_next(&ci, &c)) > 0) {
		off_t eoff = d->serial;
		if (c.numbered && get_be64(c.cursor) < (uint64_t)DIR_NUMBERED)
			eoff = DIR_NUMBERED + (off_t)get_be64(c.cursor);
		rc = names_encode(c.name, c.n, &fname);
		if (rc)
			break;
		size_t need = plus ? fuse_add_direntry_plus(req, NULL, 0, fname.data, NULL, 0)
				   : fuse_add_direntry(req, NULL, 0, fname.data, NULL, 0);
		if (need > size - used)
			break;
		if (plus) {
			struct fuse_entry_param e;
			double timeout;
			memset(&e, 0, sizeof(e));
			struct fs_node *child =
			    fs_itable_lookup(fs->it, node, fs_child_kind(fs, node), c.name, c.n);
			if (!child) {
				rc = -ENOMEM;
				break;
			}
			fs_stat_fill(fs, c.mode, c.size, c.version, c.expire_ms, &e.attr, &timeout);
			if (ci.keys) {
				struct ks_key ck = ci.k;
				ck.key = c.name;
				ck.klen = c.n;
				fs_stat_attrs(fs, NULL, &ck, c.version, NULL, 0, &e.attr);
				fs_node_watch_expiry(fs, node, child, &ck, c.expire_ms);
			} else if (ci.sh) {
				fs_stat_attrs_cached(fs, ci.sh, &ci.k, ci.version, c.name, c.n,
						     &e.attr, &ci.kattrs);
			}
			uint64_t cino = child->ino;
			e.ino = cino;
			atomic_store(&child->kmode, (unsigned)e.attr.st_mode & S_IFMT);
			/* Stored anew while we listed: its attributes again. */
			if (fs_stat_overlay(child, since, &e.attr) &&
			    fs_node_stat(fs, child, &e.attr, &timeout)) {
				/* ... and gone since: the name without attributes
				 * (node id 0: the kernel takes no lookup). */
				fs_itable_forget(fs->it, cino, 1);
				e.ino = 0;
				e.attr.st_ino = cino;
			}
			e.attr_timeout = e.entry_timeout = timeout;
			if ((ci.sh && ci.sh->uncached) || old_snap)
				e.entry_timeout = 0;
			if (old_snap)
				e.attr_timeout = 0;
			if ((ci.sh && ci.sh->recomputed) || c.recomputed)
				e.attr_timeout = 0;
			used += fuse_add_direntry_plus(req, out + used, size - used, fname.data, &e,
						       eoff);
		} else {
			struct stat st = {.st_mode = c.mode};
			st.st_ino = fs_itable_peek_ino(fs->it, node, c.name, c.n);
			used +=
			    fuse_add_direntry(req, out + used, size - used, fname.data, &st, eoff);
		}
		off = eoff;
		if (eoff == d->serial) {
			d->serial++;
			rc = marks_add(d, eoff, c.cursor, c.clen);
		}
		if (!rc)
			rc = buf_set(&d->cursor, c.cursor, c.clen);
		if (rc)
			break;
		d->has_cursor = true;
	}
	if (rc < 0 && used > 0) {
		/* Hand out what we have; the error comes back on the next call. */
		LOG_ERR("listing stopped early: %s", strerror(-rc));
		rc = 0;
	}
done:
	d->next_off = off;
out:
	if (ci_open)
		child_iter_close(&ci);
	pthread_mutex_unlock(&d->lock);
	if (rc < 0)
		fuse_reply_err(req, fs_errno(rc));
	else
		fuse_reply_buf(req, out, used);
	free(out);
	buf_release(&fname);
}

void fs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_readdir(req, fuse_req_userdata(req), jt, size, off, false, fi);
		return;
	}
	dir_read(req, ino, size, off, fi, false);
}

void fs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_readdir(req, fuse_req_userdata(req), jt, size, off, true, fi);
		return;
	}
	dir_read(req, ino, size, off, fi, true);
}

void fs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_releasedir(fuse_req_userdata(req), jt, fi);
		fuse_reply_err(req, 0);
		return;
	}
	(void)ino;
	struct fs *fs = fuse_req_userdata(req);
	dir_close(fs, (struct fs_dir *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

void fs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	(void)ino;
	(void)datasync;
	(void)fi;
	struct fs *fs = fuse_req_userdata(req);
	fuse_reply_err(req, fs_errno(ks_sync(fs->ks)));
}
