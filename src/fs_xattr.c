/*
 * fs_xattr: extended attributes. Every key carries user.kvfs.type (its
 * Kvrocks type), settable while the key is empty to choose what it holds.
 * Anything else answers ENODATA (reads) or ENOTSUP (writes) at once:
 * `ls -l` asks for two attributes per file and must not wait. Layer: fs.
 */
#include "fs_int.h"

#include <errno.h>
#include <sys/xattr.h>

#define XATTR_TYPE "user.kvfs.type"

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
	if (!node || node->kind != FS_KEY || strcmp(name, XATTR_TYPE) != 0) {
		fuse_reply_err(req, node ? ENODATA : ESTALE);
		return;
	}
	struct fs_path p;
	struct ks_info info;
	fs_path_init(&p);
	int rc = node_key_info(fs, node, &p, &info);
	fs_path_release(&p);
	if (rc) {
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	const char *t = enc_type_name(info.type);
	size_t n = strlen(t);
	if (size == 0)
		fuse_reply_xattr(req, n);
	else if (size < n)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, t, n);
}

void fs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	static const char list[] = XATTR_TYPE; /* with its NUL */
	size_t n = node && node->kind == FS_KEY ? sizeof(list) : 0;
	if (size == 0)
		fuse_reply_xattr(req, n);
	else if (size < n)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, list, n);
}

/* Choose the type of an empty key. */
static int set_type(struct fs *fs, struct fs_node *node, const char *value, size_t size,
		    int flags)
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
	} else if (!(info.empty || (fs_type_is_file(info.type) && info.size == 0))) {
		LOG_ERR("%s: '%s' is not empty; its type can only change while it is empty",
			XATTR_TYPE, p.key.data);
		rc = -ENOTEMPTY;
	} else if (!fs_type_is_supported(t)) {
		LOG_ERR("%s: type %s is not mapped into files yet", XATTR_TYPE, enc_type_name(t));
		rc = -ENOTSUP;
	} else {
		rc = ks_empty_retype(fs->ks, &k, t);
	}
out:
	fs_path_release(&p);
	return rc;
}

void fs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		    size_t size, int flags)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	int rc;
	if (!node)
		rc = -ESTALE;
	else if (fs->opt.read_only)
		rc = -EROFS;
	else if (node->kind == FS_KEY && strcmp(name, XATTR_TYPE) == 0)
		rc = set_type(fs, node, value, size, flags);
	else
		rc = -ENOTSUP;
	fuse_reply_err(req, fs_errno(rc));
}

void fs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	if (node && node->kind == FS_KEY && strcmp(name, XATTR_TYPE) == 0) {
		LOG_ERR("%s cannot be removed: every key has a type", XATTR_TYPE);
		fuse_reply_err(req, fs->opt.read_only ? EROFS : EPERM);
		return;
	}
	fuse_reply_err(req, node ? ENODATA : ESTALE);
}
