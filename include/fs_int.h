/*
 * fs_int: what the fs*.c files share and nobody else sees: the daemon
 * context, open-file handles, and helpers for paths, attributes and
 * replies. Layer: fs.
 */
#ifndef KVFS_FS_INT_H
#define KVFS_FS_INT_H

#include <sys/stat.h>

#include "fs.h"
#include "fs_inode.h"
#include "names.h"

/* All daemon state hangs off this (fuse_req_userdata). */
struct fs {
	struct keyspace *ks;
	struct fs_itable *it;
	struct fs_options opt;
	struct fuse_session *se;
	struct timespec mount_time;
	const char *ns; /* -o ns=NAME, or NULL */
	size_t nslen;
};

/* An open file: the node whose buffer it reads and writes. */
struct fs_handle {
	struct fs_node *node;
};

/* Kind of the children of `parent`. */
enum fs_kind fs_child_kind(const struct fs *fs, const struct fs_node *parent);
/* The key a path names (namespace from -o ns= when set). Borrowed. */
void fs_path_key(const struct fs *fs, const struct fs_path *p, struct ks_key *k);
int fs_child_path(struct fs *fs, struct fs_node *parent, const char *name, size_t n,
		  struct fs_path *p);
bool fs_type_is_file(enum kv_type t);
bool fs_type_is_supported(enum kv_type t);
/* Fill st for an object with this mode, size and Kvrocks version/expiry. */
void fs_stat_fill(const struct fs *fs, mode_t mode, uint64_t size, uint64_t version,
		  uint64_t expire_ms, struct stat *st, double *timeout);
/* Attributes of what path p names. 0, -ENOENT, or another errno. */
int fs_stat_path(struct fs *fs, enum fs_kind kind, const struct fs_path *p, struct stat *st,
		 double *timeout);
void fs_stat_overlay(struct fs_node *node, struct stat *st);
int fs_decode_name(struct fs *fs, struct fs_node *parent, const char *name, struct buf *out);
/* Reply with an entry for (parent, stored name); with fi, a create reply
 * whose handle (fi->fh) gets the node. */
void fs_reply_entry(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *stored,
		    size_t n, struct stat *st, double timeout, struct fuse_file_info *fi);
int fs_errno(int rc);
void fs_file_close(struct fs *fs, struct fs_handle *h);

/* fs_dir.c */
/* Resolve a long name (PREFIX%~HASH, typed in full as `typed`): name holds
 * the decoded prefix on entry and the stored name on success. -ENOENT. */
int fs_dir_find_long(struct fs *fs, struct fs_node *parent, struct buf *name, uint64_t hash,
		     const char *typed);
void fs_op_opendir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_op_readdir(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		   struct fuse_file_info *fi);
void fs_op_readdirplus(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		       struct fuse_file_info *fi);
void fs_op_releasedir(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

/* fs_xattr.c */
void fs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		    size_t size, int flags);
void fs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void fs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void fs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
