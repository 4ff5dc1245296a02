/*
 * fs_inode: the inode table of the FUSE layer. Layer: fs.
 *
 * A node is one name in the tree: the root, a namespace, a key, or an
 * entry of a key (a hash field). It is identified by (parent, name), the
 * name being the stored bytes (not the escaped file name). Inode numbers
 * are a hash of (parent inode, name) so a directory listing can report
 * the same d_ino a later stat will, without creating nodes; a collision
 * (two live identities, one number) is resolved by probing to the next
 * free number. Numbers are not reused while a node lives.
 *
 * Lifetime: a node lives while the kernel holds lookups on it (nlookup,
 * dropped by forget) or anything in the daemon holds a reference (refs:
 * children hold their parent, open handles hold their node, a local
 * entry holds itself). Unlinked or replaced nodes are unhashed from the
 * name index but stay reachable by inode number until both counts reach
 * zero.
 *
 * Local entries: a few entries exist only in the daemon, in their node's
 * buffer, until a rename or a close stores them: scratch files of a list
 * or sortedint directory (rsync's temp files), and zset members created
 * but not yet closed. Such a node is pinned (one reference) while it is
 * local, found by name like any other, and never listed.
 *
 * Each node keeps the list of its children in the table, so the entries
 * of one key can be unhashed and invalidated together when their names
 * change meaning (a list renumbered).
 */
#ifndef KVFS_FS_INODE_H
#define KVFS_FS_INODE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <sys/types.h>

#include "keyspace/keyspace.h"
#include "engine/util.h"

#define FS_ROOT_INO 1

enum fs_kind {
	FS_ROOT,  /* "/": namespaces (or, with -o ns=, the keys of one) */
	FS_NS,	  /* a namespace directory */
	FS_KEY,	  /* a key: a file or a directory, by its type */
	FS_ENTRY, /* an entry inside a key's directory (a hash field, a list element, ...) */
	FS_JTREE, /* a JSON document's tree view KEY:tree and every node below it (fs_jtree.c) */
};

/* An entry that exists only in the daemon (see above). */
enum fs_local {
	FS_LOCAL_NONE = 0,
	FS_LOCAL_SCRATCH, /* never stored; a rename onto a real name stores it */
	FS_LOCAL_PENDING, /* stored by its first commit (a new zset member) */
};

struct string_pin;

struct fs_node {
	uint64_t ino;
	enum fs_kind kind;
	/*
	 * name and parent change only in fs_itable_rename, under the table
	 * lock, and the caller holds this node's lock (fs_itable_lock_names).
	 * Read them holding either lock; fs_itable_path and fs_itable_parent
	 * copy or reference them for use after both are released.
	 */
	struct fs_node *parent; /* NULL for the root; a reference is held */
	char *name;		/* stored bytes, NUL-terminated copy */
	size_t namelen;
	bool unhashed;	     /* unlinked or replaced: no longer in the name index */
	uint64_t nlookup;    /* guarded by the table lock */
	uint64_t refs;	     /* guarded by the table lock */
	enum fs_local local; /* guarded by the table lock */
	struct fs_node *next_ino, *next_name;
	struct fs_node *kids, *sib_prev, *sib_next; /* children; guarded by the table lock */

	/*
	 * Open-file state, guarded by `lock` (recursive: see
	 * fs_itable_lock_names): the value as the open files see it. Loaded on first read or write,
	 * shared by every handle of the node, committed when dirty on flush/fsync/release, freed
	 * when the last handle closes.
	 */
	pthread_mutex_t lock;
	struct buf data;
	/* A string key read and not written: its value borrowed from the
	 * store instead of copied into data (never both: pin => !loaded). */
	struct string_pin *pin;
	const char *pin_data;
	size_t pin_len;
	bool loaded;
	bool dirty;
	/* 0, or a write was refused: the next commits fail with this
	 * (negative) errno and store nothing; cleared at the last close. */
	int bad;
	bool input;	    /* an input entry (fs_shape.is_input): data holds a partial line */
	bool action;	    /* an action (fs_shape.is_action, fs_file_shape.act): opens run it */
	bool live;	    /* a growing view (fs_shape.is_live): reloaded at its end */
	enum kv_type ktype; /* type of the node's key (a file key's own, an entry's key's) */
	uint64_t stored;    /* fs.seq at this node's last store (fs_seq_store_locked) */
	uint64_t expire_ms; /* the key's expiry when it was opened (0: none) */
	uint64_t watched;   /* the expiry handed to fs_expiry_watch last (0: none) */
	unsigned opens;
	unsigned writers;  /* opens for writing (fs_file_open_setup) */
	uint64_t wrote_ms; /* when an open for writing last opened or closed */
	uint64_t used_ms;  /* when the kernel last got the node (lookup, create, open) */
	/* The file type (S_IFMT bits) the kernel was last given with the
	 * node's name (a lookup or a listing; 0: none): a follower that
	 * finds another one after a catch-up makes the kernel drop the name
	 * (fs_follow.c). */
	_Atomic unsigned kmode;
	/* A follower: fs_follow_gen() at the node's last open; a value
	 * loaded before a later changed catch-up is dropped at the next
	 * open (fs_file.c). Guarded by `lock`. */
	uint64_t follow_gen;
	/* An O_TRUNC open's emptying of the value, not applied yet
	 * (fs_handle.trunc); trunc_epoch counts those applied. */
	bool trunc_want;
	uint64_t trunc_epoch;
	/*
	 * A list key's directory (fs_list.c), guarded by `lock`: while it is
	 * open (dir_opens), a removed element leaves a gap instead of moving
	 * the later ones down, so names read from a listing stay valid for
	 * whoever is working through them (rm -r). gaps holds the removed
	 * positions, ascending, in the numbering of when the directory was
	 * opened; the gaps close when the last open handle closes.
	 */
	unsigned dir_opens;
	struct {
		uint64_t *v;
		size_t n, cap;
	} gaps;
	/* ... and after the last close, until this time (Unix ms): a shell
	 * glob (`rm l/[*]`) lists, closes, then removes (fs_list.c). */
	uint64_t gaps_until;
	/* A JSON tree's array with gaps (fs_jtree.c): json_tree_array_digest
	 * after the tree's last change of it; another digest means a change
	 * from outside the tree (the key, a path name), which ends the kept
	 * numbering. */
	uint64_t gaps_digest;
	/* Attributes set through setattr on a node without stored records
	 * (the root, a namespace, a local entry until it is stored); 0 =
	 * not set. */
	struct timespec mtime, atime;
	mode_t mode;
	uid_t uid;
	gid_t gid;
	bool has_mode, has_owner;
	/* When the buffer last changed (a write or an ftruncate through a
	 * handle): while it is dirty, stat shows this as mtime and ctime,
	 * as a local disk would, until the commit stores the change's. */
	struct timespec changed;
	/* A node of a JSON tree (fs_jtree.c): the file text its open files
	 * read (at the first open, O_TRUNC too, then as last stored); a
	 * commit stores only over that text. Guarded by `lock`. */
	struct buf jt_was;
	bool jt_has_was;
	/* user.* xattrs set on a local entry, stored with it (same layout as
	 * the records: name_len u8 | name | value_len u32 | value). */
	struct buf xattrs;
};

/* Give back the value a node borrowed from the store (pin), if any. Node
 * lock held. */
void fs_node_unpin_locked(struct fs_node *node);

struct fs_itable;

/* NULL on ENOMEM. The root node exists from the start. */
struct fs_itable *fs_itable_new(void);
void fs_itable_free(struct fs_itable *t);

/* The node with this inode number, or NULL. No reference is taken: the
 * kernel's lookup count keeps a node alive while it sends requests. */
struct fs_node *fs_itable_get(struct fs_itable *t, uint64_t ino);

/* Find or create the node (parent, name) of the given kind and add one
 * kernel lookup. NULL on ENOMEM. */
struct fs_node *fs_itable_lookup(struct fs_itable *t, struct fs_node *parent, enum fs_kind kind,
				 const void *name, size_t n);

/* The inode number (parent, name) has or would get, without creating a
 * node (for plain readdir). */
uint64_t fs_itable_peek_ino(struct fs_itable *t, struct fs_node *parent, const void *name,
			    size_t n);

/* Drop n kernel lookups (forget); frees the node when nothing holds it. */
void fs_itable_forget(struct fs_itable *t, uint64_t ino, uint64_t n);

/* Every node, each with a daemon reference: an array of *n the caller
 * unrefs one by one and frees with free(). NULL on ENOMEM. */
struct fs_node **fs_itable_nodes(struct fs_itable *t, size_t *n);

/* Daemon references (open handles). */
void fs_itable_ref(struct fs_itable *t, struct fs_node *node);
void fs_itable_unref(struct fs_itable *t, struct fs_node *node);

/* Unhash the node named (parent, name), if any (unlink, or the target of
 * a rename). */
void fs_itable_unlink(struct fs_itable *t, struct fs_node *parent, const void *name, size_t n);

/* Unhash this node (a local entry that is given up). */
void fs_itable_unhash(struct fs_itable *t, struct fs_node *node);

/* Move the node named (parent, name), if any, to (newparent, newname),
 * unhashing any node already there. The caller holds the locks of both
 * names' nodes (fs_itable_lock_names). 0 or -ENOMEM. */
int fs_itable_rename(struct fs_itable *t, struct fs_node *parent, const void *name, size_t n,
		     struct fs_node *newparent, const void *newname, size_t newn);

/* The hashed node named (parent, name), with a daemon reference the
 * caller drops with fs_itable_unref; NULL if none. */
struct fs_node *fs_itable_find(struct fs_itable *t, struct fs_node *parent, const void *name,
			       size_t n);
/* The same, only if that node is a local entry (see above). */
struct fs_node *fs_itable_find_local(struct fs_itable *t, struct fs_node *parent, const void *name,
				     size_t n);
/* The node's parent, with a daemon reference the caller drops with
 * fs_itable_unref (a rename may move the node meanwhile); NULL for the
 * root. */
struct fs_node *fs_itable_parent(struct fs_itable *t, struct fs_node *node);

/*
 * The nodes a rename or an unlink changes: the ones named (pa, a) and
 * (pb, b) (pb NULL: only the first), whichever exist, referenced and
 * locked, in inode-number order, and still named so once locked. A
 * commit holds its node's lock from reading the node's name to its
 * write, so with these held no commit of either file can land under a
 * name the rename or unlink is changing, and no name is freed under a
 * reader. Release with fs_itable_unlock_names.
 */
struct fs_locked {
	struct fs_node *a, *b;
};
void fs_itable_lock_names(struct fs_itable *t, struct fs_node *pa, const void *a, size_t an,
			  struct fs_node *pb, const void *b, size_t bn, struct fs_locked *out);
void fs_itable_unlock_names(struct fs_itable *t, struct fs_locked *l);

/* A node's local state; setting it pins (local) or unpins (none) it. */
enum fs_local fs_itable_local(struct fs_itable *t, struct fs_node *node);
void fs_itable_set_local(struct fs_itable *t, struct fs_node *node, enum fs_local l);

/*
 * Kernel invalidations a request causes, sent after its reply: an entry
 * name in a directory and the inode it named (0: only the name). Names
 * are stored bytes; caller-owned: fs_inval_init/fs_inval_release.
 */
struct fs_inval_item {
	uint64_t parent, ino;
	char *name;
	size_t n;
	/* The name is gone from the store (expired, deleted by kvfs): the
	 * kernel is told with a delete notification, which a watcher of the
	 * object itself sees as DELETE_SELF (its directory's watcher sees
	 * nothing: docs/mapping.md section 27) (fs_inval_add_gone). */
	bool gone;
};
struct fs_inval {
	struct fs_inval_item *v;
	size_t len, cap;
};
void fs_inval_init(struct fs_inval *iv);
void fs_inval_release(struct fs_inval *iv);
int fs_inval_add(struct fs_inval *iv, uint64_t parent, uint64_t ino, const void *name, size_t n);
/* The same for a name whose object is gone (see fs_inval_item.gone). */
int fs_inval_add_gone(struct fs_inval *iv, uint64_t parent, uint64_t ino, const void *name,
		      size_t n);
/* Record the inode of every hashed, stored child of `parent` (0 for the
 * name: their attributes and pages, not their names). 0 or -ENOMEM. */
int fs_itable_kids_inval(struct fs_itable *t, struct fs_node *parent, struct fs_inval *iv);

/* Does the kernel hold lookups on the node? */
bool fs_itable_is_known(struct fs_itable *t, struct fs_node *node);
/* Add the node to iv if the kernel holds lookups on it: its inode, and
 * with `entry` its name in its parent too (when it still has one). 0 or
 * -ENOMEM. */
int fs_itable_inval_known(struct fs_itable *t, struct fs_node *node, bool entry,
			  struct fs_inval *iv);

/* Unhash every child of `parent` that is not local and for which
 * stale(arg, name, n) is true (NULL: every one), recording each in iv.
 * The nodes live on for open handles and the kernel's lookups, but their
 * names must be resolved anew. 0 or -ENOMEM (the unhashing still
 * happened; some names may be missing from iv). */
int fs_itable_unhash_kids(struct fs_itable *t, struct fs_node *parent,
			  bool (*stale)(void *arg, const char *name, size_t n), void *arg,
			  struct fs_inval *iv);
/* Forget every local child of `parent` (its key was removed). */
void fs_itable_drop_local_kids(struct fs_itable *t, struct fs_node *parent);
/* Has `parent` a local child (a new key of a namespace not stored yet)? */
bool fs_itable_has_local_kids(struct fs_itable *t, struct fs_node *parent);

/* Where a node is: the names of its namespace, key and entry (each left
 * empty where the node has none; with -o ns= the root is the namespace
 * and `ns` stays empty). Copied under the table lock, since renames may
 * move a node concurrently. Caller-owned: fs_path_init/fs_path_release. */
struct fs_path {
	struct buf ns, key, entry;
	bool unhashed; /* the node was unlinked or replaced */
};
/* Was the node, or a directory above it, unlinked or replaced? */
bool fs_itable_gone(struct fs_itable *t, struct fs_node *node);
void fs_path_init(struct fs_path *p);
void fs_path_release(struct fs_path *p);
int fs_itable_path(struct fs_itable *t, struct fs_node *node, struct fs_path *out);
/* The path of FS_JTREE node `node`: ns = its namespace's name (empty with
 * -o ns=), names = the names from the tree's root node (KEY:tree) down to
 * node, each as a u32 (host order) length and its bytes, *count of them;
 * *unhashed: the node or one above it was unlinked or replaced. Copied
 * under the table lock. 0 or -ENOMEM. */
int fs_itable_jtree_path(struct fs_itable *t, struct fs_node *node, struct buf *ns,
			 struct buf *names, size_t *count, bool *unhashed);

#endif
