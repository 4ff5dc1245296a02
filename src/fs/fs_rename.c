/*
 * fs_rename: the rename handler. Keys move within and across namespaces
 * (Kvrocks RENAME); the entries of a key as its shape allows (hash fields
 * within and across hashes, set and zset members within their key, a
 * scratch file onto a list position or a sortedint id). Anything else is
 * EXDEV, so mv falls back to copy and delete, which gives the documented
 * result. Over fs_child.c, under fs.c (whose fs_ops holds it). Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <stdio.h> /* RENAME_NOREPLACE, RENAME_EXCHANGE */

/* Is k (which names no key) a file all the same (a JSON path name)? */
static bool is_name_file(struct fs *fs, const struct ks_key *k)
{
	const struct fs_file_shape *fsh = fs_file_shape_named(k->key, k->klen, false);
	bool view;
	return fsh && fsh->open(fs, k, false, &view) == 0;
}

/* Is path p of directory `parent` an input of its namespace (KEY:rpush)
 * that no key has? Asked before the names are locked: a push holds its
 * input's node while it locks its list's (fs_list.c), and a rename locks
 * both of its names' nodes. */
static bool is_input_name(struct fs *fs, struct fs_node *parent, const struct fs_path *p)
{
	struct ks_key k;
	if (fs_child_kind(fs, parent) != FS_KEY)
		return false;
	fs_path_key(fs, p, &k);
	return fs_key_is_input(fs, &k);
}

/*
 * The string key a, about to replace key b of file type `to`, takes that
 * type first (its open buffer committed, its node told). Two batches (the
 * conversion, then RENAME): a crash between leaves the temp file as a key
 * of the new type, never a half value. -EINVAL (logged) if no conversion
 * exists: nothing changed.
 */
static int rename_save_key(struct fs *fs, struct fs_node *parent, const struct buf *fname,
			   const struct ks_key *a, const struct ks_key *b, enum kv_type to)
{
	struct fs_node *node = fs_itable_find(fs->it, parent, fname->data, fname->len);
	int rc = node ? fs_file_commit(fs, node) : 0;
	if (!rc)
		rc = fs_file_convert(fs, a, fs_new_file_shape->type, to);
	if (rc == -EOPNOTSUPP) {
		LOG_ERR("rename '%.*s' -> '%.*s': a string cannot become a %s", (int)a->klen,
			a->key, (int)b->klen, b->key, enc_type_name(to));
		rc = -EINVAL;
	}
	if (!rc && node)
		fs_file_set_type(node, to);
	if (node)
		fs_itable_unref(fs->it, node);
	return rc;
}

static int rename_keys(struct fs *fs, struct fs_node *parent, const struct buf *fname,
		       const struct fs_path *from, const struct fs_path *to, unsigned flags,
		       enum kv_type *moved)
{
	struct ks_key a, b;
	struct ks_info ia, ib;
	fs_path_key(fs, from, &a);
	fs_path_key(fs, to, &b);
	int rc = ks_lookup(fs->ks, &a, &ia);
	if (rc == -ENOENT && is_name_file(fs, &a))
		rc = -EXDEV;
	if (rc)
		return rc;
	*moved = ia.type;
	rc = ks_lookup(fs->ks, &b, &ib);
	if (rc && rc != -ENOENT)
		return rc;
	if (rc == 0 && ks_key_eq(&a, &b))
		return 0; /* rename(x, x) does nothing */
	if (rc == -ENOENT && is_name_file(fs, &b) && fs_json_name_indefinite(fs, &b)) {
		/* mv would remove every match, then find none to set. */
		LOG_ERR("rename '%s' -> '%s': a JSON path of several matches cannot be a rename's "
			"target (write it: cp, cat >)",
			from->key.data, to->key.data);
		return -EINVAL;
	}
	if (rc == -ENOENT && is_name_file(fs, &b)) {
		/* mv copies into the path name: a JSON.SET. */
		LOG_INFO("rename '%s' -> '%s': a JSON path name: EXDEV", from->key.data,
			 to->key.data);
		return -EXDEV;
	}
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
		enum kv_type plain = fs_new_file_shape->type;
		if (fa && ia.type == plain && ib.type != plain) {
			/* A save: a new file (a string) replaces a key of another
			 * file type, which keeps its type with the new bytes. */
			rc = rename_save_key(fs, parent, fname, &a, &b, ib.type);
			if (rc)
				return rc;
		}
	}
	return ks_rename(fs->ks, &a, &b);
}

/* A local entry renamed: stored by the shape's adopt, or renamed as it is.
 * The node's lock is held, so a commit of a pending entry (its release,
 * which FUSE sends asynchronously) cannot store it under the old name
 * while it is renamed. */
static int rename_local(struct fs *fs, struct fs_ctx *c, const struct fs_shape *sh,
			struct fs_node *node, struct fs_node *parent, const struct buf *from,
			const struct buf *to)
{
	struct buf canon = BUF_INIT;
	int rc = FS_ADOPT_LOCAL;
	if (sh->adopt && fs_itable_local(fs->it, node) == FS_LOCAL_SCRATCH) {
		struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
		fs_attr_entry(sh, to->data, to->len, &ch.entry, &ch.elen);
		c->k.attr = &ch;
		c->adopt_from = from->data;
		c->adopt_from_len = from->len;
		rc = sh->adopt(c, to->data, to->len, node->data.data, node->data.len, &canon);
		c->adopt_from = NULL;
		c->k.attr = NULL;
	}
	if (rc == FS_ADOPT_LOCAL) {
		bool pending = fs_itable_local(fs->it, node) == FS_LOCAL_PENDING;
		rc = fs_itable_rename(fs->it, parent, from->data, from->len, parent, to->data,
				      to->len);
		/* A new member renamed after its close (rsync's temp file) is
		 * stored now under its new name: its release arrives in the
		 * background, and until then a listing would not show it. A
		 * later write through a handle still open stores it again. */
		if (!rc && pending)
			rc = fs_file_store_locked(fs, node);
	} else if (rc == 0) {
		rc = fs_itable_rename(fs->it, parent, from->data, from->len, parent, canon.data,
				      canon.len);
		fs_itable_set_local(fs->it, node, FS_LOCAL_NONE);
		if (!rc)
			fs_node_attrs_flush(fs, node, true); /* the caller holds its lock */
		bool same = canon.len == to->len && memcmp(canon.data, to->data, to->len) == 0;
		/* The kernel moved the scratch file's dentry, with the timeout
		 * of a scratch name, to `to`; another spelling of the name or
		 * a name that changes meaning (a list position) must be looked
		 * up anew, and so must the canonical name of a replaced one. */
		if (!rc && (!same || sh->uncached))
			fs_inval_add(c->iv, parent->ino, 0, to->data, to->len);
		if (!rc && !same)
			fs_inval_add(c->iv, parent->ino, 0, canon.data, canon.len);
	}
	buf_release(&canon);
	return rc;
}

/*
 * An entry of a shape without renames (a list position, a sortedint id)
 * renamed onto a scratch name of its key: the entry stays and the scratch
 * file gets its contents. This is an editor's backup (vim renames FILE to
 * FILE~, writes FILE anew, removes FILE~); a real move would renumber a
 * list under the editor. The node moves with the name, as the kernel
 * expects; the entry gets a new node at its next lookup.
 */
static int rename_to_backup(struct fs *fs, struct fs_ctx *c, const struct fs_shape *sh,
			    struct fs_node *parent, const struct buf *from, const struct buf *to,
			    struct fs_node *lto)
{
	struct buf v = BUF_INIT;
	struct fs_node *node = fs_itable_find(fs->it, parent, from->data, from->len);
	int rc = node ? fs_file_commit(fs, node) : 0;
	if (!rc)
		rc = sh->load(c, from->data, from->len, &v);
	if (!rc && lto) {
		fs_itable_unhash(fs->it, lto);
		fs_itable_set_local(fs->it, lto, FS_LOCAL_NONE); /* replaced */
	}
	if (!rc && node)
		rc = fs_itable_rename(fs->it, parent, from->data, from->len, parent, to->data,
				      to->len);
	if (!rc && node) {
		pthread_mutex_lock(&node->lock);
		fs_node_set_empty(node);
		struct buf old = node->data; /* the empty buffer, given to v */
		node->data = v;
		v = old;
		node->dirty = false;
		node->bad = 0;
		pthread_mutex_unlock(&node->lock);
		fs_itable_set_local(fs->it, node, FS_LOCAL_SCRATCH);
		fs_inval_add(c->iv, parent->ino, 0, from->data, from->len);
		LOG_INFO("rename '%s' -> '%s' in a %s: the entry stays, '%s' is a scratch copy",
			 from->data, to->data, enc_type_name(sh->type), to->data);
	}
	if (node)
		fs_itable_unref(fs->it, node);
	buf_release(&v);
	return rc;
}

static int rename_entries(struct fs *fs, struct fs_node *parent, struct fs_node *newparent,
			  const struct fs_path *from, const struct fs_path *to,
			  const struct buf *fname, const struct buf *tname, unsigned flags,
			  struct fs_inval *iv)
{
	struct fs_ctx a, b;
	const struct fs_shape *sa, *sb;
	struct fs_entry e;
	struct fs_node *lfrom = NULL, *lto = NULL;
	int rc = fs_entry_ctx(fs, parent, from, iv, &a, &sa);
	if (!rc)
		rc = fs_entry_ctx(fs, newparent, to, iv, &b, &sb);
	if (rc)
		return rc;
	fs_entry_init(&e);
	lfrom = fs_itable_find_local(fs->it, parent, fname->data, fname->len);
	if (lfrom) {
		/* Held to the end: the entry stays local, or was stored just now
		 * (a release committed it) and renames as a stored one. */
		pthread_mutex_lock(&lfrom->lock);
		if (fs_itable_local(fs->it, lfrom) == FS_LOCAL_NONE) {
			pthread_mutex_unlock(&lfrom->lock);
			fs_itable_unref(fs->it, lfrom);
			lfrom = NULL;
		}
	}
	lto = fs_itable_find_local(fs->it, newparent, tname->data, tname->len);
	if ((!lfrom && fs_shape_is_special(sa, fname->data, fname->len)) ||
	    (!lto && fs_shape_is_special(sb, tname->data, tname->len))) {
		LOG_ERR("rename '%s' -> '%s': a view or an input cannot be renamed", fname->data,
			tname->data);
		rc = -EACCES;
		goto out;
	}
	if (flags & RENAME_NOREPLACE) {
		rc = lto ? 0 : sb->lookup(&b, tname->data, tname->len, &e);
		if (rc == 0) {
			rc = -EEXIST;
			goto out;
		}
		if (rc != -ENOENT)
			goto out;
		rc = 0;
	}
	bool same_key = sa == sb && ks_key_eq(&a.k, &b.k);
	if (!same_key && !lto && sb->is_scratch && sb->is_scratch(tname->data, tname->len)) {
		LOG_ERR("rename '%s' -> '%s': '%s' would be a scratch file in the %s, and a copy "
			"there would be lost",
			fname->data, tname->data, tname->data, enc_type_name(sb->type));
		rc = -EINVAL;
		goto out;
	}
	if (!same_key && (sa != sb || lfrom || !sa->rename || !sa->rename_across)) {
		LOG_INFO("rename '%s' -> '%s' moves an entry between keys: EXDEV", fname->data,
			 tname->data);
		rc = -EXDEV;
		goto out;
	}
	if (lfrom) {
		rc = rename_local(fs, &a, sa, lfrom, parent, fname, tname);
	} else if (!sa->rename && sa->is_scratch && sa->is_scratch(tname->data, tname->len)) {
		rc = rename_to_backup(fs, &a, sa, parent, fname, tname, lto);
	} else if (!sa->rename) {
		LOG_INFO("rename '%s' -> '%s' in a %s: EXDEV, so mv copies", fname->data,
			 tname->data, enc_type_name(sa->type));
		rc = -EXDEV;
	} else {
		/* The entry's records move with it, in the rename's batch. */
		struct ks_attr_change ca = {.flags = KS_ATTR_TOUCH};
		struct ks_attr_change cb = {.flags = KS_ATTR_TOUCH | KS_ATTR_MOVE, .from = &a.k};
		fs_attr_entry(sb, tname->data, tname->len, &cb.entry, &cb.elen);
		fs_attr_entry(sa, fname->data, fname->len, &cb.fentry, &cb.flen);
		b.k.attr = &cb;
		a.k.attr = ks_key_eq(&a.k, &b.k) ? &cb : &ca; /* one key: the move is its change */
		rc = sa->rename(&a, fname->data, fname->len, &b, tname->data, tname->len, flags);
		a.k.attr = b.k.attr = NULL;
		if (!rc)
			rc = fs_itable_rename(fs->it, parent, fname->data, fname->len, newparent,
					      tname->data, tname->len);
	}
	if (!rc && lto && lto != lfrom && fs_itable_local(fs->it, lto) != FS_LOCAL_NONE)
		fs_itable_set_local(fs->it, lto, FS_LOCAL_NONE); /* replaced */
out:
	if (lfrom) {
		pthread_mutex_unlock(&lfrom->lock);
		fs_itable_unref(fs->it, lfrom);
	}
	if (lto)
		fs_itable_unref(fs->it, lto);
	fs_entry_release(&e);
	return rc;
}

/* A rename across kinds of directory: EXDEV (mv copies and removes), or
 * EINVAL onto a scratch name, where the copy would be lost. */
static int cross_kind_errno(struct fs *fs, struct fs_node *newparent, const struct fs_path *to,
			    const struct buf *tname, struct fs_inval *iv)
{
	struct fs_ctx b;
	const struct fs_shape *sb;
	if (fs_child_kind(fs, newparent) != FS_ENTRY ||
	    fs_entry_ctx(fs, newparent, to, iv, &b, &sb) != 0 || !sb->is_scratch ||
	    !sb->is_scratch(tname->data, tname->len))
		return -EXDEV;
	struct fs_node *lto = fs_itable_find_local(fs->it, newparent, tname->data, tname->len);
	if (lto) {
		fs_itable_unref(fs->it, lto);
		return -EXDEV; /* a scratch file there already: mv replaces it */
	}
	LOG_ERR("rename onto '%s': it would be a scratch file in the %s, and a copy there would "
		"be lost",
		tname->data, enc_type_name(sb->type));
	return -EINVAL;
}

void fs_op_rename(fuse_req_t req, fuse_ino_t parent_ino, const char *name, fuse_ino_t newparent_ino,
		  const char *newname, unsigned int flags)
{
	{
		struct fs *jfs = fuse_req_userdata(req);
		struct fs_node *a = fs_itable_get(jfs->it, parent_ino);
		struct fs_node *b = fs_itable_get(jfs->it, newparent_ino);
		if (a && b && (a->kind == FS_JTREE || b->kind == FS_JTREE)) {
			/* A JSON document's tree (fs_jtree.c). */
			fs_jtree_rename(req, jfs, a, name, b, newname, flags);
			return;
		}
		if (fs_jtree_root_named(jfs, a, name) || fs_jtree_root_named(jfs, b, newname)) {
			LOG_ERR("rename '%s' -> '%s': a JSON document's tree is a view of its key "
				"(rename the key)",
				name, newname);
			fuse_reply_err(req, EBUSY);
			return;
		}
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *parent, *newparent;
	struct buf stored = BUF_INIT, newstored = BUF_INIT;
	struct fs_path from, to;
	struct fs_inval iv;
	struct fs_locked held = {0};
	int rc;

	fs_inval_init(&iv);
	fs_path_init(&from);
	fs_path_init(&to);
	rc = fs_child_begin(fs, parent_ino, name, &parent, &stored, &from);
	if (!rc)
		rc = fs_child_begin(fs, newparent_ino, newname, &newparent, &newstored, &to);
	if (rc)
		goto out;
	if (is_input_name(fs, parent, &from) || is_input_name(fs, newparent, &to)) {
		LOG_ERR("rename '%s' -> '%s': an input (a push to a list) cannot be renamed", name,
			newname);
		rc = -EACCES;
		goto out;
	}
	/* No commit of either file between here and the end (fs_inode.h). */
	fs_itable_lock_names(fs->it, parent, stored.data, stored.len, newparent, newstored.data,
			     newstored.len, &held);
	if (flags & ~(unsigned)RENAME_NOREPLACE) {
		LOG_ERR("rename '%s': %s is not supported", name,
			flags & RENAME_EXCHANGE ? "RENAME_EXCHANGE" : "RENAME_WHITEOUT");
		rc = -EINVAL;
		goto out;
	}
	enum fs_kind ka = fs_child_kind(fs, parent), kb = fs_child_kind(fs, newparent);
	if (ka != kb || ka == FS_NS) {
		rc = cross_kind_errno(fs, newparent, &to, &newstored, &iv);
		if (rc == -EXDEV)
			LOG_INFO("rename '%s' -> '%s' crosses kinds of directory: EXDEV", name,
				 newname);
		goto out;
	}
	/* New keys not stored yet are stored first: a rename works on keys. */
	if (ka == FS_KEY) {
		rc = fs_store_local_key(fs, parent, stored.data, stored.len);
		if (!rc)
			rc = fs_store_local_key(fs, newparent, newstored.data, newstored.len);
		if (rc)
			goto out;
	}
	/* A file this rename replaces lives on for its open files. */
	rc = fs_keep_open(fs, newparent, newstored.data, newstored.len);
	if (rc)
		goto out;
	if (ka == FS_KEY) {
		enum kv_type t = KV_TYPE_NONE;
		rc = rename_keys(fs, parent, &stored, &from, &to, flags, &t);
		if (!rc)
			rc = fs_itable_rename(fs->it, parent, stored.data, stored.len, newparent,
					      newstored.data, newstored.len);
		/* An editor's backup (vim: NAME -> NAME~) of a typed file: NAME
		 * written anew takes the type back (docs/mapping.md section 6). */
		if (!rc && parent == newparent && fs_type_is_file(t) &&
		    t != fs_new_file_shape->type &&
		    fs_is_scratch_name(newstored.data, newstored.len) &&
		    !fs_is_scratch_name(stored.data, stored.len))
			fs_backup_note(fs, parent, stored.data, stored.len, t);
	} else {
		rc = rename_entries(fs, parent, newparent, &from, &to, &stored, &newstored, flags,
				    &iv);
	}
out:
	fs_itable_unlock_names(fs->it, &held);
	fuse_reply_err(req, fs_errno(rc));
	fs_inval_send(fs, &iv);
	buf_release(&stored);
	buf_release(&newstored);
	fs_path_release(&from);
	fs_path_release(&to);
}