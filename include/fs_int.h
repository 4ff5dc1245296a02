/*
 * fs_int: what the fs*.c files share and nobody else sees: the daemon
 * context, open-file handles, helpers for paths, attributes and replies,
 * and the shape table through which fs.c dispatches an entry operation
 * to the module of the key's type (fs_hash.c, fs_list.c, fs_set.c,
 * fs_zset.c, fs_sortedint.c). Layer: fs.
 */
#ifndef KVFS_FS_INT_H
#define KVFS_FS_INT_H

#include <sys/stat.h>

#include "fs.h"
#include "fs_inode.h"
#include "ks_attr.h"
#include "names.h"
#include "t_convert.h"

struct fs_shape;

/* All daemon state hangs off this (fuse_req_userdata). */
struct fs {
	struct keyspace *ks;
	struct fs_itable *it;
	struct fs_options opt;
	struct fuse_session *se;
	struct timespec mount_time;
	const char *ns; /* -o ns=NAME, or NULL */
	size_t nslen;
	struct fs_notifier *notifier; /* sends kernel invalidations (fs.c) */
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
/* Attributes of the root, a namespace or a key (kind FS_ROOT, FS_NS or
 * FS_KEY) that path p names. 0, -ENOENT, or another errno. */
int fs_stat_path(struct fs *fs, enum fs_kind kind, const struct fs_path *p, struct stat *st,
		 double *timeout);
void fs_stat_overlay(struct fs_node *node, struct stat *st);
/* Overlay the stored attributes (ks_attr) of key k (entry NULL) or of
 * one of its entries (shape sh) on st; version: the key's. An entry
 * without times of its own shows its key's. */
void fs_stat_attrs(struct fs *fs, const struct fs_shape *sh, const struct ks_key *k,
		   uint64_t version, const char *entry, size_t elen, struct stat *st);
/* The same, for the entries of one listing: the key's attributes, read
 * once (zero-initialised by the caller). */
struct fs_key_attrs {
	bool loaded;
	struct ks_attr a;
};
void fs_stat_attrs_cached(struct fs *fs, const struct fs_shape *sh, const struct ks_key *k,
			  uint64_t version, const char *entry, size_t elen, struct stat *st,
			  struct fs_key_attrs *kc);
/* The entry name attribute records use (a list position without its
 * zero padding). */
void fs_attr_entry(const struct fs_shape *sh, const char *name, size_t n, const char **e,
		   size_t *en);
/* A local entry was stored: store the attributes set on it meanwhile
 * (locked: the caller holds the node's lock). */
void fs_node_attrs_flush(struct fs *fs, struct fs_node *node, bool locked);
/* fs_xattr.c: the same for user.* attributes set on a local entry. */
void fs_node_xattrs_flush(struct fs *fs, struct fs_node *node, bool locked);
/* Have the kernel drop node's cached attributes (after the reply). */
void fs_inval_attr(struct fs *fs, struct fs_node *node);
int fs_decode_name(struct fs *fs, struct fs_node *parent, const char *name, struct buf *out);

/* How fs_reply_entry answers. */
struct fs_reply {
	double entry_timeout, attr_timeout;
	enum fs_local local; /* a new local entry: the node holds it */
	enum kv_type ktype;  /* the node's type, for a create */
};
/* Reply with an entry for (parent, stored name); with fi, a create reply
 * whose handle (fi->fh) gets the node. */
void fs_reply_entry(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *stored,
		    size_t n, struct stat *st, const struct fs_reply *r, struct fuse_file_info *fi);
int fs_errno(int rc);
/* Send the invalidations a request collected, after its reply, and
 * release them. They are handed to a thread of their own: a request
 * handler that waited for the kernel (which may wait for the directory
 * lock a system call holds while it waits for another handler) could
 * leave no handler free. */
void fs_inval_send(struct fs *fs, struct fs_inval *iv);

/* ---- Entries of a key, by the key's type ---------------------------- */

/* One entry operation: the key whose directory it works in. */
struct fs_ctx {
	struct fs *fs;
	struct fs_node *dir; /* the key's node */
	struct ks_key k;     /* borrowed from a path */
	struct fs_inval *iv; /* invalidations to send after the reply (NULL: none wanted) */
};

/* What an entry name resolves to. Caller-owned: fs_entry_init/_release. */
struct fs_entry {
	struct buf name; /* the node's stored name (a list position's canonical spelling) */
	mode_t mode;
	uint64_t size;
	bool alias; /* the name asked for is not the node's name: the kernel must not cache it */
	bool view;  /* a read-only view */
};
void fs_entry_init(struct fs_entry *e);
void fs_entry_release(struct fs_entry *e);
/* A regular file of this size named name/n. 0 or -ENOMEM. */
int fs_entry_set(struct fs_entry *e, const char *name, size_t n, mode_t mode, uint64_t size);

/* One child of a listing, borrowed from the iterator until its next step. */
struct fs_child {
	const char *name;
	size_t n;
	const char *cursor; /* where the listing resumes after this child (NULL: the name) */
	size_t clen;
	mode_t mode;
	uint64_t size, version, expire_ms;
};

/* A shape's create that stores nothing: the node holds the entry. */
#define FS_CREATE_SCRATCH 1
#define FS_CREATE_PENDING 2
/* A shape's adopt for a name that is not a real entry: rename locally. */
#define FS_ADOPT_LOCAL 1

/*
 * What the entries of one directory type are. Names are stored bytes
 * (after names_decode); all operations return 0 or a negative errno and
 * log the refusals a user should hear about (docs/errors.md).
 */
struct fs_shape {
	enum kv_type type;
	/* Names that change meaning (list positions): the kernel caches
	 * none of them, found or missing, so no invalidation is needed. */
	bool uncached;
	/* Contents rewritten by the commit (a zset score reformatted): the
	 * kernel keeps neither the attributes nor the pages of an entry. */
	bool recomputed;
	/* Resolve `name`: 0 with e filled, -ENOENT, ... */
	int (*lookup)(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e);
	/* List the entries after the cursor (NULL: from the first); by_name
	 * asks for stored-name order, where the shape's own order differs
	 * (long-name resolution). */
	int (*iter_open)(struct fs_ctx *c, const void *after, size_t alen, bool by_name,
			 void **it);
	int (*iter_next)(void *it, struct fs_child *ch);
	void (*iter_free)(void *it);
	/* Is `name` a view (read-only, never listed)? NULL: no views. */
	bool (*is_view)(const char *name, size_t n);
	/*
	 * Is `name` an input (never listed, like a view, but written to:
	 * `cut -f1 log >> hll/.add`)? NULL: no inputs. An input holds
	 * nothing: it reads as empty, truncation is ignored, and it cannot
	 * be removed or renamed (EACCES). Each write's complete lines go to
	 * `feed` at once, all or nothing (a refused write applies nothing
	 * and leaves the partial line before it in place); a last line
	 * without a newline is fed when the file is closed (flush).
	 */
	bool (*is_input)(const char *name, size_t n);
	/* Feed lines to input `name`: d holds whole lines, each ending in
	 * '\n' except possibly the last one at a close. One batch: an
	 * error stores nothing (log the line number). */
	int (*feed)(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn);
	/* The file contents of an entry. */
	int (*load)(struct fs_ctx *c, const char *name, size_t n, struct buf *out);
	/* May an entry hold these bytes? Checked on every write and truncate
	 * with the contents as they would become. NULL: anything. */
	int (*check)(const char *name, size_t n, const char *d, size_t dn);
	/* Store the contents; pending: the entry is new (FS_CREATE_PENDING). */
	int (*commit)(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		      bool pending);
	/* Create an empty entry: 0 (stored; e filled), FS_CREATE_SCRATCH or
	 * FS_CREATE_PENDING (nothing stored), -EEXIST, ... */
	int (*create)(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e);
	int (*unlink)(struct fs_ctx *c, const char *name, size_t n);
	/* Rename between two stored entries, of one key or (hash) two. NULL:
	 * -EXDEV, so mv copies. */
	int (*rename)(struct fs_ctx *a, const char *from, size_t fn, struct fs_ctx *b,
		      const char *to, size_t tn, unsigned flags);
	/* A scratch entry renamed onto `to`: store its contents there. 0 with
	 * canon = the node's new name, FS_ADOPT_LOCAL (`to` is another
	 * scratch name), or an errno. NULL: local entries rename locally. */
	int (*adopt)(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		     struct buf *canon);
	/* What a field of a hash means in this type, for converting a hash
	 * (cp -a sets a directory's type after filling it). NULL: no
	 * conversion. */
	convert_field_cb from_field;
};

/* Is `name` a view or an input of shape sh (read-only for tree changes)? */
bool fs_shape_is_special(const struct fs_shape *sh, const char *name, size_t n);

/* fs_list.c: the last open handle of a key's directory closed: a list
 * closes the gaps removals left while it was open. */
void fs_list_dir_closed(struct fs *fs, struct fs_node *dir);

/* The shape of a directory type, or NULL (a file type, or not mapped). */
const struct fs_shape *fs_shape_of(enum kv_type t);
extern const struct fs_shape fs_hash_shape, fs_list_shape, fs_set_shape, fs_zset_shape,
    fs_sortedint_shape;

/* The key of directory node `dir` and its shape: c is set up (k borrows
 * from p, which the caller has filled with fs_itable_path or
 * fs_child_path) and *sh is the shape. 0; -ENOENT (no such key);
 * -ENOTDIR (a file key); -EOPNOTSUPP (a type not mapped yet, logged). */
int fs_ctx_open(struct fs *fs, struct fs_node *dir, const struct fs_path *p, struct fs_inval *iv,
		struct fs_ctx *c, const struct fs_shape **sh, struct ks_info *info);
/* Attributes of an entry node (local, view or stored). */
int fs_entry_stat(struct fs *fs, struct fs_node *node, struct stat *st, double *timeout);

/* fs_file.c */
/* Check that node is a file kvfs can open (for writing: `write`) and
 * note its type in the node; *view = a read-only view. 0 or errno. */
int fs_file_check(struct fs *fs, struct fs_node *node, bool write, bool *view);
/* Count an open of node and apply O_TRUNC; set the file's caching. */
void fs_file_open_setup(struct fs_node *node, struct fuse_file_info *fi, bool view);
void fs_file_close(struct fs *fs, struct fs_handle *h);
/* Truncate a file node (setattr): through its buffer when it is open,
 * committed now unless an open file will commit it. */
int fs_node_truncate(struct fs *fs, struct fs_node *node, uint64_t size, bool via_handle);
/* Commit the node's buffer now if it is dirty (before its key changes
 * type). 0 or the commit's error. */
int fs_file_commit(struct fs *fs, struct fs_node *node);
/* Make the node's buffer the empty file (a create, O_TRUNC, truncate to
 * 0): loaded, nothing borrowed. Node lock held. */
void fs_node_set_empty(struct fs_node *node);
/* The node's key changed type (string <-> bitmap) under it. */
void fs_file_set_type(struct fs_node *node, enum kv_type t);
void fs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off,
		struct fuse_file_info *fi);
void fs_op_write(fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off,
		 struct fuse_file_info *fi);
void fs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void fs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

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
