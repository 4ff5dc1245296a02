/*
 * fs_xattr: extended attributes. Every key carries user.kvfs.type (its
 * Kvrocks type), settable while the key is empty to choose what it holds;
 * a key with an expiry carries user.kvfs.ttl (remaining milliseconds):
 * setting it sets the expiry (0 drops the key at once, as PEXPIRE 0 does;
 * on an empty collection it waits for the first entry), removing it makes
 * the key persistent. user.kvfs.expireat is the same expiry as a Unix
 * time in milliseconds (PEXPIREAT, PEXPIRETIME; a time in the past
 * deletes the key); it is the one listed, so that a copy carries the
 * deadline itself and a restore never extends it (ttl is read by name).
 * Other user.* attributes of keys and stored entries are kept in the
 * reserved namespace (ks_xattr_*). Names outside user.*
 * answer ENODATA (reads) or ENOTSUP (writes) at once, without a read:
 * `ls -l` asks for two attributes per file and must not wait.
 *
 * Setting user.kvfs.type on a string or bitmap converts between the two
 * keeping the bytes, between a string and json through the JSON text,
 * and on a hash whose fields spell out a list, set, zset, sortedint,
 * stream or sketch converts the hash (what rsync and cp -a need: they
 * write content first and types after). Type parameters
 * (user.kvfs.TYPE.PARAM: user.kvfs.bloom.capacity, ...) come from the
 * shape of their type (fs_int.h xattr_*). A time series carries
 * user.kvfs.ts.* (retention, chunk_size, duplicate_policy,
 * last_timestamp, label.NAME, rule.DEST). Both sort before
 * user.kvfs.type: set on an empty directory they make it a key of their
 * type first, so rsync -X restores them in its sorted order.
 * Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "fs/fs_xval.h"
#include "keyspace/ks_attr.h"

/* Reply with a value or a name list: the size asked for, ERANGE, or it;
 * or the error rc. */
static void reply_xattr(fuse_req_t req, int rc, const char *v, size_t n, size_t size)
{
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else if (size == 0)
		fuse_reply_xattr(req, n);
	else if (size < n)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, n ? v : NULL, n);
}

/* The key a KEY node names, and what it is. */
static int node_key_info(struct fs *fs, struct fs_node *node, struct fs_path *p,
			 struct ks_info *info)
{
	struct ks_key k;
	int rc = fs_itable_path(fs->it, node, p);
	if (rc)
		return rc;
	if (p->unhashed)
		return -ENOENT;
	fs_path_key(fs, p, &k);
	return ks_lookup(fs->ks, &k, info);
}

/* A type's parameter, user.kvfs.NS.PARAM (user.kvfs.bloom.capacity,
 * user.kvfs.ts.retention): the shape whose parameters NS names (*param =
 * PARAM), else NULL. */
static const struct fs_shape *param_shape(const char *name, const char **param)
{
	if (!has_prefix(name, strlen(name), FS_XATTR_KVFS))
		return NULL;
	const char *t = name + strlen(FS_XATTR_KVFS), *dot = strchr(t, '.');
	if (!dot || !dot[1])
		return NULL;
	*param = dot + 1;
	return fs_shape_of_xattr(t, (size_t)(dot - t));
}

/* The entry context of a key node as read (info), for a shape's xattr
 * verbs. */
static void key_ctx(struct fs *fs, struct fs_node *node, const struct fs_path *p,
		    const struct ks_info *info, struct fs_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->fs = fs;
	c->dir = node;
	fs_path_key(fs, p, &c->k);
	c->info = *info;
	c->sh = fs_shape_of(info->type);
}

/* getxattr of a creation parameter: only on a key of that type. */
static void get_param(fuse_req_t req, struct fs *fs, struct fs_node *node,
		      const struct fs_shape *sh, const char *param, size_t size)
{
	struct fs_path p;
	struct ks_info info;
	struct fs_ctx c;
	struct buf v = BUF_INIT;
	fs_path_init(&p);
	int rc = node_key_info(fs, node, &p, &info);
	if (!rc && info.type != sh->type)
		rc = -ENODATA;
	if (!rc) {
		key_ctx(fs, node, &p, &info, &c);
		rc = sh->xattr_get(&c, param, &v);
	}
	reply_xattr(req, rc, v.data, v.len, size);
	buf_release(&v);
	fs_path_release(&p);
}

/* A new key its node still holds (created, not flushed) is stored before
 * its attributes are read or changed: they are the stored key's. */
static int key_stored(struct fs *fs, struct fs_node *node)
{
	if (!node || node->kind != FS_KEY || fs->opt.read_only)
		return 0;
	return fs_file_store_pending(fs, node);
}

static int help_row(struct buf *out, const struct fs_help *h)
{
	return buf_printf(out, "%-26s %s; e.g. %s\n", h->name, h->what, h->example);
}

/* user.kvfs.help of a key: its type's help, one line per name, input or
 * view (struct fs_help of its shape); of a namespace, its names. */
static int help_text(struct fs *fs, struct fs_node *node, struct buf *out)
{
	struct fs_path p;
	struct ks_info info;
	const struct fs_help *h = NULL;
	bool ns = fs_child_kind(fs, node) == FS_KEY;
	int rc;
	fs_path_init(&p);
	if (ns) {
		/* A namespace (or the root of -o ns=): the names of its own. */
		rc = fs_itable_path(fs->it, node, &p);
		h = fs_ns_help;
		if (!rc)
			rc = buf_printf(out,
					"namespace '%s': its keys and the names beside them "
					"(CAPITALS: any such name; see kvfs-mapping(7))\n",
					fs->ns ? fs->ns : p.ns.data);
	} else {
		rc = node_key_info(fs, node, &p, &info);
		const struct fs_shape *sh = rc ? NULL : fs_shape_of(info.type);
		const struct fs_file_shape *fsh = rc ? NULL : fs_file_shape_of(info.type);
		h = sh ? sh->help : fsh ? fsh->help : NULL;
		if (!rc)
			rc = buf_printf(out,
					"%s '%s': what it holds, its inputs and views (CAPITALS: "
					"any such name; see kvfs-mapping(7))\n",
					enc_type_name(info.type), p.key.data);
	}
	for (; !rc && h && h->name; h++)
		rc = help_row(out, h);
	for (int t = 0; !rc && ns && t <= KV_TYPE_MAX; t++) {
		/* The names of a namespace a file type answers (KEY:incr). */
		const struct fs_file_shape *fsh = fs_file_shape_of(t);
		for (h = fsh ? fsh->help : NULL; !rc && h && h->name; h++)
			if (has_prefix(h->name, strlen(h->name), "KEY:"))
				rc = help_row(out, h);
	}
	fs_path_release(&p);
	return rc;
}

void fs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_getxattr(req, fuse_req_userdata(req), jt, name, size);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	int src = has_prefix(name, strlen(name), FS_XATTR_USER) ? key_stored(fs, node) : 0;
	if (src) {
		fuse_reply_err(req, fs_errno(src));
		return;
	}
	bool is_type = strcmp(name, FS_XATTR_TYPE) == 0, is_ttl = strcmp(name, FS_XATTR_TTL) == 0;
	bool is_at = strcmp(name, FS_XATTR_EXPIREAT) == 0;
	if (node && (node->kind == FS_KEY || fs_child_kind(fs, node) == FS_KEY) &&
	    strcmp(name, FS_XATTR_HELP) == 0) {
		struct buf text = BUF_INIT;
		int rc = help_text(fs, node, &text);
		reply_xattr(req, rc, text.data, text.len, size);
		buf_release(&text);
		return;
	}
	const char *param;
	const struct fs_shape *psh = param_shape(name, &param);
	if (node && node->kind == FS_KEY && psh) {
		get_param(req, fs, node, psh, param, size);
		return;
	}
	if (!node || !has_prefix(name, strlen(name), FS_XATTR_USER) ||
	    (has_prefix(name, strlen(name), FS_XATTR_KVFS) &&
	     !((is_type || is_ttl || is_at) && node->kind == FS_KEY))) {
		/* security.*, system.* (ls -l asks): answered without a read. */
		fuse_reply_err(req, node ? ENODATA : ESTALE);
		return;
	}
	if (!is_type && !is_ttl && !is_at) {
		struct buf val = BUF_INIT;
		int rc = fs_user_xattr_get(fs, node, name, &val);
		reply_xattr(req, rc, val.data, val.len, size);
		buf_release(&val);
		return;
	}
	struct fs_path p;
	struct ks_info info;
	char ttl[24];
	fs_path_init(&p);
	int rc = node_key_info(fs, node, &p, &info);
	fs_path_release(&p);
	if (!rc && (is_ttl || is_at) && !info.expire_ms)
		rc = -ENODATA;
	if (rc) {
		fuse_reply_err(req, fs_errno(rc));
	} else if (is_at) {
		snprintf(ttl, sizeof(ttl), "%llu", (unsigned long long)info.expire_ms);
		reply_xattr(req, 0, ttl, strlen(ttl), size);
	} else if (is_ttl) {
		uint64_t now = now_ms();
		snprintf(ttl, sizeof(ttl), "%llu",
			 (unsigned long long)(info.expire_ms > now ? info.expire_ms - now : 0));
		reply_xattr(req, 0, ttl, strlen(ttl), size);
	} else {
		const char *t = enc_type_name(info.type);
		reply_xattr(req, 0, t, strlen(t), size);
	}
}

void fs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_listxattr(req, fuse_req_userdata(req), jt, size);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	struct buf list = BUF_INIT;
	struct fs_path p;
	int rc = node ? key_stored(fs, node) : -ESTALE;
	fs_path_init(&p);
	if (!rc && node && node->kind == FS_KEY) {
		struct ks_info info;
		struct fs_ctx c;
		rc = node_key_info(fs, node, &p, &info);
		if (!rc)
			rc = buf_add(&list, FS_XATTR_TYPE, sizeof(FS_XATTR_TYPE));
		/* The absolute deadline, not the time left: a copy restored
		 * later keeps the key's deadline (user.kvfs.ttl, for people,
		 * answers by name but is not listed, so that no copy tool
		 * sets both, in whatever order). */
		if (!rc && info.expire_ms)
			rc = buf_add(&list, FS_XATTR_EXPIREAT, sizeof(FS_XATTR_EXPIREAT));
		/* The type's parameters, which rsync -X copies (it sets them in
		 * sorted order: see fs_bloom.c). */
		const struct fs_shape *sh = rc ? NULL : fs_shape_of(info.type);
		if (!rc && sh && sh->xattrs && !info.empty)
			rc = buf_add(&list, sh->xattrs, sh->xattrs_len);
		if (!rc && sh && sh->xattr_names && !info.empty) {
			key_ctx(fs, node, &p, &info, &c);
			rc = sh->xattr_names(&c, &list);
		}
	}
	if (!rc)
		rc = fs_user_xattr_list(fs, node, &list);
	reply_xattr(req, rc, list.data, list.len, size);
	buf_release(&list);
	fs_path_release(&p);
}

/* A file key becomes another file type: string <-> bitmap with the same
 * bytes, string <-> json through the text (a string must hold JSON, and
 * is stored compact). That is what rsync and cp need, which write a new
 * file (a string) and set its type afterwards. An open file's buffer is
 * committed first; it stays valid for a bitmap, and the kernel forgets
 * what it cached of a file whose bytes a JSON conversion changed. */
static int retype_file(struct fs *fs, struct fs_node *node, const struct ks_key *k,
		       enum kv_type from, enum kv_type to, struct fs_inval *iv)
{
	if (!fs_type_is_supported(to) || !fs_type_is_supported(from)) {
		LOG_ERR("%s: type %s is not mapped into files yet", FS_XATTR_TYPE,
			enc_type_name(fs_type_is_supported(to) ? from : to));
		return -ENOTSUP;
	}
	int rc = fs_file_commit(fs, node);
	if (rc)
		return rc;
	rc = fs_file_convert(fs, k, from, to);
	if (rc == -EOPNOTSUPP) {
		LOG_ERR("%s: a %s cannot become a %s (convert through a string)", FS_XATTR_TYPE,
			enc_type_name(from), enc_type_name(to));
		rc = -EINVAL;
	}
	/* Text made anew (compact JSON): the kernel's pages are wrong. */
	struct fs_node *parent = NULL;
	if (!rc && (fs_file_shape_of(from)->recomputed || fs_file_shape_of(to)->recomputed))
		parent = fs_itable_parent(fs->it, node);
	if (parent) {
		fs_inval_add(iv, parent->ino, node->ino, k->key, k->klen);
		fs_itable_unref(fs->it, parent);
	}
	if (!rc)
		fs_file_set_type(node, to);
	return rc;
}

/* A directory key takes another directory type: an empty one by its
 * record; a hash whose fields spell out the new type is converted (cp -a
 * fills a directory before it sets the type). Every cached entry name
 * goes: its meaning changes with the type. */
static int retype_dir(struct fs *fs, struct fs_node *node, const struct ks_key *k,
		      const struct ks_info *info, enum kv_type to, struct fs_inval *iv)
{
	const struct fs_shape *sh = fs_shape_of(to);
	int rc;
	if (info->empty && !sh) {
		LOG_ERR("%s: type %s is not mapped into files yet", FS_XATTR_TYPE,
			enc_type_name(to));
		return -ENOTSUP;
	}
	if (info->empty && sh->make_empty) {
		/* An emptyable type (a sketch): an empty one is a real key. */
		struct fs_ctx c;
		memset(&c, 0, sizeof(c));
		c.fs = fs;
		c.dir = node;
		c.k = *k;
		rc = sh->make_empty(&c);
	} else if (info->empty) {
		rc = ks_empty_retype(fs->ks, k, to);
	} else if (info->type == fs_new_dir_shape->type && sh && sh->from_field) {
		struct ks_key same = *k; /* a new type, not new content */
		same.attr = &ks_attr_none;
		rc = convert_hash(fs->ks, &same, to, sh->from_field, NULL);
		if (rc == -EINVAL)
			LOG_ERR("%s: hash '%.*s' does not hold a %s: it keeps its type",
				FS_XATTR_TYPE, (int)k->klen, k->key, enc_type_name(to));
	} else {
		const char *why = info->type == fs_new_dir_shape->type
				      ? " (or from a hash to a list, set, zset, "
					"sortedint, stream, hyperloglog, bloom or time series)"
				      : "";
		LOG_ERR("%s: '%.*s' is not empty; its type can only change while it is empty%s",
			FS_XATTR_TYPE, (int)k->klen, k->key, why);
		return -ENOTEMPTY;
	}
	/* A sketch made from a hash of its state files: every name keeps its
	 * meaning and its bytes, and the kernel may keep what it has (an
	 * invalidation arrives after the reply, later than the next call). */
	if (!rc && !(sh->make_empty && !info->empty))
		fs_itable_unhash_kids(fs->it, node, NULL, NULL, iv);
	return rc;
}

/* Choose the type of a key: see retype_file and retype_dir. */
static int set_type(struct fs *fs, struct fs_node *node, const char *value, size_t size, int flags,
		    struct fs_inval *iv)
{
	struct fs_path p;
	struct ks_info info;
	struct ks_key k;
	int rc;

	enum kv_type t;
	rc = fs_xval_type(value, size, &t);
	if (rc)
		return rc;
	if (flags & XATTR_CREATE)
		return -EEXIST; /* every key has a type */
	fs_path_init(&p);
	rc = node_key_info(fs, node, &p, &info);
	if (rc || t == info.type)
		goto out;
	fs_path_key(fs, &p, &k);
	if (fs_type_is_file(t) != fs_type_is_file(info.type)) {
		LOG_ERR("%s: '%s' is a %s and cannot become a %s", FS_XATTR_TYPE, p.key.data,
			fs_type_is_file(info.type) ? "file" : "directory",
			fs_type_is_file(t) ? "file" : "directory");
		rc = -EINVAL;
	} else if (fs_type_is_file(t) && info.empty && t != fs_new_file_shape->type) {
		rc = ks_empty_retype(fs->ks, &k, t); /* an empty bitmap <-> an empty JSON key */
		if (!rc)
			fs_file_set_type(node, t);
	} else if (fs_type_is_file(t)) {
		rc = retype_file(fs, node, &k, info.type, t, iv);
	} else {
		rc = retype_dir(fs, node, &k, &info, t, iv);
	}
out:
	fs_path_release(&p);
	return rc;
}

/*
 * Set (value) or remove (NULL) a type's parameter, user.kvfs.NS.PARAM,
 * through its shape: on a key of that type, on a remembered empty
 * collection, which becomes a key of that type (rsync -X sets a
 * directory's attributes in sorted name order, so the parameters come
 * before user.kvfs.type), or on another key, which the shape refuses.
 * Cached entry names go: the key's shape may have changed.
 */
static int set_param(struct fs *fs, struct fs_node *node, const struct fs_shape *sh,
		     const char *param, const char *value, size_t size, struct fs_inval *iv)
{
	struct fs_path p;
	struct ks_info info;
	struct fs_ctx c;
	fs_path_init(&p);
	int rc = node_key_info(fs, node, &p, &info);
	bool emptied = !rc && info.empty;
	if (!rc && !info.empty && info.type == fs_new_dir_shape->type && sh->from_field) {
		/* cp -a fills a directory (a hash) and then sets its attributes,
		 * in no fixed order: a hash holding this type's state files
		 * becomes that type first. */
		key_ctx(fs, node, &p, &info, &c);
		c.k.attr = &ks_attr_none; /* a new type, not new content */
		rc = convert_hash(fs->ks, &c.k, sh->type, sh->from_field, NULL);
		if (rc == -EINVAL)
			LOG_ERR("user.kvfs.%s.%s: hash '%s' does not hold a %s",
				enc_type_name(sh->type), param, p.key.data,
				enc_type_name(sh->type));
		if (!rc)
			info.type = sh->type; /* names keep their meaning: no unhashing */
	}
	if (!rc) {
		/* A parameter, label or rule is no content: as on a disk,
		 * setting an attribute leaves mtime alone. */
		key_ctx(fs, node, &p, &info, &c);
		c.k.attr = &ks_attr_none;
		rc = value ? sh->xattr_set(&c, param, value, size) : sh->xattr_remove(&c, param);
	}
	if (!rc && emptied)
		fs_itable_unhash_kids(fs->it, node, NULL, NULL, iv);
	fs_path_release(&p);
	return rc;
}

/*
 * Set (ms > 0) or drop (ms == 0, or `remove`: make persistent) the
 * expiry; with `absolute`, value is the deadline (PEXPIREAT: one not after now
 * deletes the key). *gone is set when the key was deleted, so the caller
 * can tell the kernel its name is gone.
 */
static int set_ttl(struct fs *fs, struct fs_node *node, const char *value, size_t size, bool remove,
		   bool absolute, bool *gone)
{
	uint64_t at = 0; /* the deadline set */
	struct fs_path p;
	struct ks_info info;
	struct ks_key k;
	uint64_t ms = 0, deadline = 0;
	int rc = 0;

	if (!remove && absolute) {
		int64_t when;
		if ((rc = fs_xval_expireat(value, size, &when)) != 0)
			return rc;
		uint64_t now = now_ms();
		/* Past (0 and below too): ms 0 deletes, as PEXPIREAT does. */
		ms = when > 0 && (uint64_t)when > now ? (uint64_t)when - now : 0;
		deadline = ms ? (uint64_t)when : 0;
	} else if (!remove && (rc = fs_xval_ttl(value, size, &ms)) != 0) {
		return rc;
	}
	fs_path_init(&p);
	rc = node_key_info(fs, node, &p, &info);
	if (rc == -EUCLEAN && !remove && ms == 0)
		rc = 0; /* corrupt metadata (logged): DEL needs nothing else */
	if (rc)
		goto out;
	fs_path_key(fs, &p, &k);
	/* As on a disk, an attribute set moves ctime, not mtime; a key
	 * without stored times keeps showing what it showed (fs_stat_fill). */
	struct ks_attr_change ch = {.flags = KS_ATTR_CTIME, .base = fs->mount_time};
	if (info.version) {
		uint64_t us = info.version >> 11;
		ch.base.tv_sec = (time_t)(us / 1000000u);
		ch.base.tv_nsec = (long)(us % 1000000u) * 1000;
	}
	k.attr = &ch;
	if (remove) {
		rc = info.expire_ms ? ks_expire(fs->ks, &k, 0) : -ENODATA;
	} else if (ms == 0) {
		rc = ks_del(fs->ks, &k);
		*gone = rc == 0;
	} else {
		/* An empty collection keeps it pending until its first entry. */
		at = deadline ? deadline : now_ms() + ms;
		rc = ks_expire(fs->ks, &k, at);
	}
	if (!rc && at) {
		/* The kernel may keep the name longer than that (the timeout
		 * of its lookup): the notifier tells it at the expiry. */
		struct fs_node *parent = fs_itable_parent(fs->it, node);
		if (parent) {
			fs_node_watch_expiry(fs, parent, node, &k, at);
			fs_itable_unref(fs->it, parent);
		}
	}
out:
	fs_path_release(&p);
	return rc;
}

/* A key the kernel may have cached is gone: unhash its node, and have
 * the kernel forget the name after the reply. */
static void forget_name(struct fs *fs, struct fs_node *node, struct fs_inval *iv)
{
	struct fs_node *parent = fs_itable_parent(fs->it, node);
	if (!parent)
		return;
	struct fs_path p;
	fs_path_init(&p);
	/* The node's name, read under the table lock (renames move it). */
	if (fs_itable_path(fs->it, node, &p) == 0 && p.key.len) {
		fs_itable_unlink(fs->it, parent, p.key.data, p.key.len);
		/* A delete: a watcher of the key gets DELETE_SELF. */
		fs_inval_add_gone(iv, parent->ino, node->ino, p.key.data, p.key.len);
	}
	fs_path_release(&p);
	fs_itable_unref(fs->it, parent);
}

/*
 * user.kvfs.snapshot on the root: `kvfs snapshot` of a database this
 * daemon holds (RocksDB's lock keeps every other opener out) asks here,
 * and the daemon makes the checkpoint into the absolute path the value
 * names. Only the mount's owner (the daemon's user) and root may: with
 * allow_other, other users reach the root too, and a snapshot copies
 * every key whatever its mode.
 */
static int take_snapshot(fuse_req_t req, struct fs *fs, const char *value, size_t size)
{
	const struct fuse_ctx *ctx = fuse_req_ctx(req);
	char dest[PATH_MAX];
	if (ctx->uid != 0 && ctx->uid != geteuid()) {
		LOG_ERR("%s: uid %u may not take a snapshot: only the mount's owner (uid %u) or "
			"root may",
			FS_XATTR_SNAPSHOT, (unsigned)ctx->uid, (unsigned)geteuid());
		return -EPERM;
	}
	if (size == 0 || size >= sizeof(dest) || memchr(value, '\0', size) || value[0] != '/') {
		LOG_ERR("%s: the value must be the absolute path of a new directory",
			FS_XATTR_SNAPSHOT);
		return -EINVAL;
	}
	memcpy(dest, value, size);
	dest[size] = '\0';
	return ks_checkpoint(fs->ks, dest);
}

void fs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		    size_t size, int flags)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_setxattr(req, fuse_req_userdata(req), jt, name, value, size, flags);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	struct fs_inval iv;
	bool gone = false;
	const char *param;
	const struct fs_shape *psh;
	int rc;
	fs_inval_init(&iv);
	if (!node)
		rc = -ESTALE;
	else if (fs->opt.read_only)
		rc = -EROFS;
	else if ((rc = key_stored(fs, node)) != 0)
		;
	else if (ino == FUSE_ROOT_ID && strcmp(name, FS_XATTR_SNAPSHOT) == 0)
		rc = take_snapshot(req, fs, value, size);
	else if (node->kind == FS_KEY && strcmp(name, FS_XATTR_TYPE) == 0)
		rc = set_type(fs, node, value, size, flags, &iv);
	else if (node->kind == FS_KEY && strcmp(name, FS_XATTR_TTL) == 0)
		rc = set_ttl(fs, node, value, size, false, false, &gone);
	else if (node->kind == FS_KEY && strcmp(name, FS_XATTR_EXPIREAT) == 0)
		rc = set_ttl(fs, node, value, size, false, true, &gone);
	else if (node->kind == FS_KEY && (psh = param_shape(name, &param)) != NULL)
		rc = set_param(fs, node, psh, param, value, size, &iv);
	else if (has_prefix(name, strlen(name), FS_XATTR_USER) &&
		 !has_prefix(name, strlen(name), FS_XATTR_KVFS))
		rc = fs_user_xattr_set(fs, node, name, value, size, flags);
	else
		rc = -ENOTSUP;
	if (gone)
		forget_name(fs, node, &iv);
	fuse_reply_err(req, fs_errno(rc));
	fs_inval_send(fs, &iv);
}

void fs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_removexattr(req, fuse_req_userdata(req), jt, name);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	bool gone = false;
	int src = key_stored(fs, node);
	if (src) {
		fuse_reply_err(req, fs_errno(src));
		return;
	}
	if (node && node->kind == FS_KEY && strcmp(name, FS_XATTR_TYPE) == 0) {
		LOG_ERR("%s cannot be removed: every key has a type", FS_XATTR_TYPE);
		fuse_reply_err(req, fs->opt.read_only ? EROFS : EPERM);
		return;
	}
	const char *param;
	const struct fs_shape *psh =
	    node && node->kind == FS_KEY ? param_shape(name, &param) : NULL;
	if (psh && !psh->xattr_remove) {
		LOG_ERR("%s cannot be removed: set it instead", name);
		fuse_reply_err(req, fs->opt.read_only ? EROFS : EPERM);
		return;
	}
	if (psh) {
		struct fs_inval iv;
		fs_inval_init(&iv);
		int rc = fs->opt.read_only ? -EROFS : set_param(fs, node, psh, param, NULL, 0, &iv);
		fuse_reply_err(req, fs_errno(rc));
		fs_inval_send(fs, &iv);
		return;
	}
	if (node && node->kind == FS_KEY &&
	    (strcmp(name, FS_XATTR_TTL) == 0 || strcmp(name, FS_XATTR_EXPIREAT) == 0)) {
		int rc =
		    fs->opt.read_only ? -EROFS : set_ttl(fs, node, NULL, 0, true, false, &gone);
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	if (node && has_prefix(name, strlen(name), FS_XATTR_USER) &&
	    !has_prefix(name, strlen(name), FS_XATTR_KVFS)) {
		int rc = fs->opt.read_only ? -EROFS : fs_user_xattr_set(fs, node, name, NULL, 0, 0);
		if (rc == -ENOTSUP)
			rc = -ENODATA;
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	fuse_reply_err(req, node ? ENODATA : ESTALE);
}
