/*
 * fs_xattr: extended attributes. Every key carries user.kvfs.type (its
 * Kvrocks type), settable while the key is empty to choose what it holds;
 * a key with an expiry carries user.kvfs.ttl (remaining milliseconds):
 * setting it sets the expiry (0 drops the key at once, as PEXPIRE 0 does;
 * on an empty collection it waits for the first entry), removing it makes
 * the key persistent. Other user.* attributes of keys and stored entries
 * are kept in the reserved namespace (ks_xattr_*). Names outside user.*
 * answer ENODATA (reads) or ENOTSUP (writes) at once, without a read:
 * `ls -l` asks for two attributes per file and must not wait. Setting
 * user.kvfs.type on a string or bitmap
 * converts between the two keeping the bytes, and on a hash whose fields
 * spell out a list, set, zset or sortedint converts the hash (what rsync
 * and cp -a need: they write content first and types after).
 * Layer: fs.
 */
#include "fs_int.h"

#include <errno.h>
#include <stdio.h>
#include <sys/xattr.h>

#include "ks_attr.h"
#include "t_bitmap.h"

#define XATTR_TYPE "user.kvfs.type"
#define XATTR_TTL "user.kvfs.ttl"
#define XATTR_USER "user."
#define XATTR_KVFS "user.kvfs."

static bool has_prefix(const char *name, const char *p)
{
	return strncmp(name, p, strlen(p)) == 0;
}

/* Reply with a value or a name list: the size asked for, ERANGE, or it. */
static void reply_xattr(fuse_req_t req, const char *v, size_t n, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, n);
	else if (size < n)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, n ? v : NULL, n);
}

/*
 * Where the user.* attributes of a node live: its key (k, borrowing from
 * p), the key's version, and for an entry its record name. 0; -ENOENT;
 * -ENOTSUP for the root, a namespace, a local entry or a view.
 */
static int xattr_obj(struct fs *fs, struct fs_node *node, struct fs_path *p, struct ks_key *k,
		     uint64_t *version, const char **entry, size_t *elen)
{
	struct ks_info info;
	*entry = NULL;
	*elen = 0;
	if (node->kind != FS_KEY && node->kind != FS_ENTRY)
		return -ENOTSUP;
	if (node->kind == FS_ENTRY && fs_itable_local(fs->it, node) != FS_LOCAL_NONE)
		return -ENOTSUP;
	int rc = fs_itable_path(fs->it, node, p);
	if (rc)
		return rc;
	if (p->unhashed)
		return -ENOENT;
	fs_path_key(fs, p, k);
	rc = ks_lookup(fs->ks, k, &info);
	if (rc)
		return rc;
	*version = info.version;
	if (node->kind == FS_ENTRY) {
		const struct fs_shape *sh = fs_shape_of(info.type);
		if (!sh)
			return -ENOENT;
		if (fs_shape_is_special(sh, p->entry.data, p->entry.len))
			return -ENOTSUP;
		fs_attr_entry(sh, p->entry.data, p->entry.len, entry, elen);
	}
	return 0;
}

/*
 * A local entry (a list or sortedint scratch file, rsync's temp file)
 * holds its user.* attributes in the node until it is stored
 * (fs_node_xattrs_flush). The layout is the records' (ks_attr.c).
 */
static bool is_local(struct fs *fs, struct fs_node *node)
{
	return node->kind == FS_ENTRY && fs_itable_local(fs->it, node) != FS_LOCAL_NONE;
}

/* Find name in a node's list: its offset and whole length, or false. */
static bool local_find(const struct buf *x, const char *name, size_t nlen, size_t *at,
		       size_t *len, const char **val, size_t *vlen)
{
	size_t i = 0;
	while (i + 1 <= x->len) {
		size_t nl = (uint8_t)x->data[i];
		size_t vl = get_be32(x->data + i + 1 + nl);
		size_t whole = 1 + nl + 4 + vl;
		if (nl == nlen && memcmp(x->data + i + 1, name, nl) == 0) {
			*at = i;
			*len = whole;
			*val = x->data + i + 1 + nl + 4;
			*vlen = vl;
			return true;
		}
		i += whole;
	}
	return false;
}

static int local_get(struct fs_node *node, const char *name, struct buf *out)
{
	size_t at, len, vl;
	const char *v;
	pthread_mutex_lock(&node->lock);
	int rc = local_find(&node->xattrs, name, strlen(name), &at, &len, &v, &vl)
		     ? buf_set(out, v, vl)
		     : -ENODATA;
	pthread_mutex_unlock(&node->lock);
	return rc;
}

static int local_list(struct fs_node *node, struct buf *out)
{
	int rc = 0;
	pthread_mutex_lock(&node->lock);
	const struct buf *x = &node->xattrs;
	for (size_t i = 0; !rc && i < x->len;) {
		size_t nl = (uint8_t)x->data[i];
		rc = buf_add(out, x->data + i + 1, nl);
		if (!rc)
			rc = buf_add_u8(out, 0);
		i += 1 + nl + 4 + get_be32(x->data + i + 1 + nl);
	}
	pthread_mutex_unlock(&node->lock);
	return rc;
}

/* Bytes of names and values in a node's list. */
static size_t local_total(const struct buf *x)
{
	size_t total = 0;
	for (size_t i = 0; i < x->len;) {
		size_t nl = (uint8_t)x->data[i];
		size_t vl = get_be32(x->data + i + 1 + nl);
		total += nl + vl;
		i += 1 + nl + 4 + vl;
	}
	return total;
}

static int local_set(struct fs_node *node, const char *name, const char *value, size_t size,
		     int flags)
{
	size_t nlen = strlen(name), at, len, vl;
	const char *v;
	int rc = 0;
	if (nlen > KS_XATTR_NAME_MAX)
		return -ERANGE;
	if (value && size > KS_XATTR_SIZE_MAX)
		return -E2BIG;
	pthread_mutex_lock(&node->lock);
	bool found = local_find(&node->xattrs, name, nlen, &at, &len, &v, &vl);
	if ((flags & XATTR_CREATE) && found)
		rc = -EEXIST;
	else if (((flags & XATTR_REPLACE) || !value) && !found)
		rc = -ENODATA;
	else if (value && local_total(&node->xattrs) - (found ? len - 5 : 0) + nlen + size >
				  KS_XATTR_SIZE_MAX)
		rc = -ENOSPC; /* names and values together, as ks_xattr_set counts */
	if (!rc && found) {
		memmove(node->xattrs.data + at, node->xattrs.data + at + len,
			node->xattrs.len - at - len);
		buf_resize(&node->xattrs, node->xattrs.len - len);
	}
	if (!rc && value && !(rc = buf_add_u8(&node->xattrs, (uint8_t)nlen)) &&
	    !(rc = buf_add(&node->xattrs, name, nlen)) &&
	    !(rc = buf_add_be32(&node->xattrs, (uint32_t)size)))
		rc = buf_add(&node->xattrs, value, size);
	pthread_mutex_unlock(&node->lock);
	return rc;
}

/* getxattr of a stored user.* attribute. */
static void get_user(fuse_req_t req, struct fs *fs, struct fs_node *node, const char *name,
		     size_t size)
{
	struct fs_path p;
	struct ks_key k;
	struct buf val = BUF_INIT;
	uint64_t version = 0;
	const char *e;
	size_t en;
	fs_path_init(&p);
	int rc = is_local(fs, node) ? local_get(node, name, &val)
				    : xattr_obj(fs, node, &p, &k, &version, &e, &en);
	if (rc == -ENOTSUP)
		rc = -ENODATA;
	if (!rc && !is_local(fs, node))
		rc = ks_xattr_get(fs->ks, &k, version, e, en, name, strlen(name), &val);
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		reply_xattr(req, val.data, val.len, size);
	buf_release(&val);
	fs_path_release(&p);
}

/* setxattr (value) or removexattr (NULL) of a stored user.* attribute. */
static int set_user(struct fs *fs, struct fs_node *node, const char *name, const char *value,
		    size_t size, int flags)
{
	struct fs_path p;
	struct ks_key k;
	uint64_t version = 0;
	const char *e;
	size_t en;
	int kf = (flags & XATTR_CREATE ? KS_XATTR_CREATE : 0) |
		 (flags & XATTR_REPLACE ? KS_XATTR_REPLACE : 0);
	if (is_local(fs, node) && !has_prefix(name, XATTR_KVFS))
		return local_set(node, name, value, size, flags);
	fs_path_init(&p);
	int rc = xattr_obj(fs, node, &p, &k, &version, &e, &en);
	if (rc == -ENOTSUP)
		LOG_INFO("%s: '%s' keeps no extended attributes", name, node->name);
	if (!rc && has_prefix(name, XATTR_KVFS)) {
		LOG_ERR("%s: names under %s are kvfs's own", name, XATTR_KVFS);
		rc = -ENOTSUP;
	}
	if (!rc)
		rc = ks_xattr_set(fs->ks, &k, e, en, name, strlen(name), value, size, kf);
	if (rc == -ERANGE || rc == -E2BIG || rc == -ENOSPC)
		LOG_ERR("%s on '%s': %s", name, node->name, strerror(-rc));
	fs_path_release(&p);
	return rc;
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

void fs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	bool is_type = strcmp(name, XATTR_TYPE) == 0, is_ttl = strcmp(name, XATTR_TTL) == 0;
	if (!node || !has_prefix(name, XATTR_USER) ||
	    (has_prefix(name, XATTR_KVFS) && !((is_type || is_ttl) && node->kind == FS_KEY))) {
		/* security.*, system.* (ls -l asks): answered without a read. */
		fuse_reply_err(req, node ? ENODATA : ESTALE);
		return;
	}
	if (!is_type && !is_ttl) {
		get_user(req, fs, node, name, size);
		return;
	}
	struct fs_path p;
	struct ks_info info;
	char ttl[24];
	fs_path_init(&p);
	int rc = node_key_info(fs, node, &p, &info);
	fs_path_release(&p);
	if (!rc && is_ttl && !info.expire_ms)
		rc = -ENODATA;
	if (rc) {
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	const char *t = enc_type_name(info.type);
	if (is_ttl) {
		uint64_t now = now_ms();
		snprintf(ttl, sizeof(ttl), "%llu",
			 (unsigned long long)(info.expire_ms > now ? info.expire_ms - now : 0));
		t = ttl;
	}
	reply_xattr(req, t, strlen(t), size);
}

void fs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	struct buf list = BUF_INIT;
	struct fs_path p;
	struct ks_key k;
	uint64_t version = 0;
	const char *e;
	size_t en;
	int rc = node ? 0 : -ESTALE;
	fs_path_init(&p);
	if (node && node->kind == FS_KEY) {
		struct ks_info info;
		rc = node_key_info(fs, node, &p, &info);
		if (!rc)
			rc = buf_add(&list, XATTR_TYPE, sizeof(XATTR_TYPE));
		if (!rc && info.expire_ms)
			rc = buf_add(&list, XATTR_TTL, sizeof(XATTR_TTL));
		fs_path_release(&p);
		fs_path_init(&p);
	}
	if (!rc && is_local(fs, node)) {
		rc = local_list(node, &list);
	} else if (!rc) {
		rc = xattr_obj(fs, node, &p, &k, &version, &e, &en);
		if (!rc)
			rc = ks_xattr_list(fs->ks, &k, version, e, en, &list);
		else if (rc == -ENOTSUP)
			rc = 0; /* nothing stored there */
	}
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		reply_xattr(req, list.data, list.len, size);
	buf_release(&list);
	fs_path_release(&p);
}

/* A file key becomes the other file type with the same bytes (string
 * <-> bitmap): what rsync and cp need, which write a new file (a string)
 * and set its type afterwards. An open file's buffer is committed first,
 * and stays valid: the bytes do not change. */
static int retype_file(struct fs *fs, struct fs_node *node, const struct ks_key *k,
		       enum kv_type from, enum kv_type to)
{
	if (!fs_type_is_supported(to) || !fs_type_is_supported(from)) {
		LOG_ERR("%s: type %s is not mapped into files yet", XATTR_TYPE,
			enc_type_name(fs_type_is_supported(to) ? from : to));
		return -ENOTSUP;
	}
	int rc = fs_file_commit(fs, node);
	if (rc)
		return rc;
	rc = to == KV_TYPE_BITMAP ? bitmap_from_string(fs->ks, k) : bitmap_to_string(fs->ks, k);
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
		LOG_ERR("%s: type %s is not mapped into files yet", XATTR_TYPE, enc_type_name(to));
		return -ENOTSUP;
	}
	if (info->empty) {
		rc = ks_empty_retype(fs->ks, k, to);
	} else if (info->type == KV_TYPE_HASH && sh && sh->from_field) {
		rc = convert_hash(fs->ks, k, to, sh->from_field, NULL);
		if (rc == -EINVAL)
			LOG_ERR("%s: hash '%.*s' does not hold a %s: it keeps its type", XATTR_TYPE,
				(int)k->klen, k->key, enc_type_name(to));
	} else {
		const char *why = info->type == KV_TYPE_HASH
				      ? " (or from a hash to a list, set, zset or sortedint)"
				      : "";
		LOG_ERR("%s: '%.*s' is not empty; its type can only change while it is empty%s",
			XATTR_TYPE, (int)k->klen, k->key, why);
		return -ENOTEMPTY;
	}
	if (!rc)
		fs_itable_unhash_kids(fs->it, node, NULL, NULL, iv);
	return rc;
}

/* Choose the type of a key: see retype_file and retype_dir. */
static int set_type(struct fs *fs, struct fs_node *node, const char *value, size_t size,
		    int flags, struct fs_inval *iv)
{
	struct fs_path p;
	struct ks_info info;
	struct ks_key k;
	int rc;

	while (size > 0 && (value[size - 1] == '\n' || value[size - 1] == ' '))
		size--;
	enum kv_type t = enc_type_from_name(value, size);
	if (t == KV_TYPE_NONE) {
		LOG_ERR("%s: unknown type '%.*s'", XATTR_TYPE, (int)size, value);
		return -EINVAL;
	}
	if (flags & XATTR_CREATE)
		return -EEXIST; /* every key has a type */
	fs_path_init(&p);
	rc = node_key_info(fs, node, &p, &info);
	if (rc || t == info.type)
		goto out;
	fs_path_key(fs, &p, &k);
	if (fs_type_is_file(t) != fs_type_is_file(info.type)) {
		LOG_ERR("%s: '%s' is a %s and cannot become a %s", XATTR_TYPE, p.key.data,
			fs_type_is_file(info.type) ? "file" : "directory",
			fs_type_is_file(t) ? "file" : "directory");
		rc = -EINVAL;
	} else if (fs_type_is_file(t)) {
		rc = retype_file(fs, node, &k, info.type, t);
	} else {
		rc = retype_dir(fs, node, &k, &info, t, iv);
	}
out:
	fs_path_release(&p);
	return rc;
}

/*
 * Set (ms > 0) or drop (ms == 0, or `remove`: make persistent) the
 * expiry. *gone is set when the key was deleted, so the caller can tell
 * the kernel its name is gone.
 */
static int set_ttl(struct fs *fs, struct fs_node *node, const char *value, size_t size,
		   bool remove, bool *gone)
{
	struct fs_path p;
	struct ks_info info;
	struct ks_key k;
	uint64_t ms = 0;
	int rc = 0;

	if (!remove) {
		while (size > 0 && (value[size - 1] == '\n' || value[size - 1] == ' '))
			size--;
		rc = parse_u64(value, size, &ms);
		if (rc || ms > UINT64_MAX / 2) {
			LOG_ERR("%s: '%.*s' is not a number of milliseconds", XATTR_TTL,
				(int)size, value);
			return -EINVAL;
		}
	}
	fs_path_init(&p);
	rc = node_key_info(fs, node, &p, &info);
	if (rc)
		goto out;
	fs_path_key(fs, &p, &k);
	if (remove) {
		rc = info.expire_ms ? ks_expire(fs->ks, &k, 0) : -ENODATA;
	} else if (ms == 0) {
		rc = ks_del(fs->ks, &k);
		*gone = rc == 0;
	} else {
		/* An empty collection keeps it pending until its first entry. */
		rc = ks_expire(fs->ks, &k, now_ms() + ms);
	}
out:
	fs_path_release(&p);
	return rc;
}

/* A key the kernel may have cached is gone: unhash its node, and have
 * the kernel forget the name after the reply. */
static void forget_name(struct fs *fs, struct fs_node *node, struct fs_inval *iv)
{
	struct fs_node *parent = node->parent;
	if (!parent)
		return;
	struct fs_path p;
	fs_path_init(&p);
	/* The node's name, read under the table lock (renames move it). */
	if (fs_itable_path(fs->it, node, &p) == 0 && p.key.len) {
		fs_itable_unlink(fs->it, parent, p.key.data, p.key.len);
		fs_inval_add(iv, parent->ino, 0, p.key.data, p.key.len);
	}
	fs_path_release(&p);
}

void fs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		    size_t size, int flags)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	struct fs_inval iv;
	bool gone = false;
	int rc;
	fs_inval_init(&iv);
	if (!node)
		rc = -ESTALE;
	else if (fs->opt.read_only)
		rc = -EROFS;
	else if (node->kind == FS_KEY && strcmp(name, XATTR_TYPE) == 0)
		rc = set_type(fs, node, value, size, flags, &iv);
	else if (node->kind == FS_KEY && strcmp(name, XATTR_TTL) == 0)
		rc = set_ttl(fs, node, value, size, false, &gone);
	else if (has_prefix(name, XATTR_USER))
		rc = set_user(fs, node, name, value, size, flags);
	else
		rc = -ENOTSUP;
	if (gone)
		forget_name(fs, node, &iv);
	fuse_reply_err(req, fs_errno(rc));
	fs_inval_send(fs, &iv);
}

void fs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	bool gone = false;
	if (node && node->kind == FS_KEY && strcmp(name, XATTR_TYPE) == 0) {
		LOG_ERR("%s cannot be removed: every key has a type", XATTR_TYPE);
		fuse_reply_err(req, fs->opt.read_only ? EROFS : EPERM);
		return;
	}
	if (node && node->kind == FS_KEY && strcmp(name, XATTR_TTL) == 0) {
		int rc = fs->opt.read_only ? -EROFS : set_ttl(fs, node, NULL, 0, true, &gone);
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	if (node && has_prefix(name, XATTR_USER) && !has_prefix(name, XATTR_KVFS)) {
		int rc = fs->opt.read_only ? -EROFS : set_user(fs, node, name, NULL, 0, 0);
		if (rc == -ENOTSUP)
			rc = -ENODATA;
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	fuse_reply_err(req, node ? ENODATA : ESTALE);
}

void fs_node_xattrs_flush(struct fs *fs, struct fs_node *node, bool locked)
{
	struct buf x = BUF_INIT;
	struct buf name = BUF_INIT;
	if (!locked)
		pthread_mutex_lock(&node->lock);
	x = node->xattrs;
	buf_init(&node->xattrs);
	if (!locked)
		pthread_mutex_unlock(&node->lock);
	for (size_t i = 0; i < x.len;) {
		size_t nl = (uint8_t)x.data[i];
		size_t vl = get_be32(x.data + i + 1 + nl);
		if (buf_set(&name, x.data + i + 1, nl) == 0) {
			int rc = set_user(fs, node, name.data, x.data + i + 1 + nl + 4, vl, 0);
			if (rc)
				LOG_WARN("%s set before '%s' was stored is lost: %s", name.data,
					 node->name, strerror(-rc));
		}
		i += 1 + nl + 4 + vl;
	}
	buf_release(&x);
	buf_release(&name);
}
