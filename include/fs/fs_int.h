/*
 * fs_int: what the fs*.c files share and nobody else sees. Layer: fs.
 *
 * The files of the layer call only files below them (no circles; this
 * header follows the same order):
 *
 *   fs.c         the FUSE dispatcher: lookup, getattr, setattr, create,
 *                mknod, mkdir, unlink, rmdir, statfs; fs_ops
 *   fs_rename.c  rename (handler)
 *   fs_child.c   the child a tree operation names: its name and path,
 *                local keys, values kept for open files, backups
 *   fs_xattr.c   extended attributes (handlers)
 *   fs_dir.c     listings and long names (handlers)
 *   fs_file.c    open files: buffers, commits, inputs (handlers)
 *   fs_follow.c  a follower's catch-ups and the invalidations they need
 *   fs_stat.c    attributes of nodes, as stat shows them
 *   fs_attrs.c   storing mode, owner, times and user.* xattrs
 *   fs_shape.c   the one table of types and their shapes; fs_ctx_open;
 *                conversions between file types
 *   shapes       one file per type, what its keys are in the tree, over
 *                the type's module (t_*.c): fs_hash.c ... fs_stream.c,
 *                fs_timeseries.c, the sketches over fs_sketch.c; the file
 *                shapes fs_string.c (string, bitmap), fs_json.c and
 *                fs_counter.c (counters; its parser also serves fs_hash.c
 *                and fs_zset.c); fs_list.c also has the namespace's
 *                pushes (KEY:rpush), a file shape that is an input
 *   fs_node.c    helpers: paths, stat filling, errno, invalidations
 *   fs_xval.c    the values of user.kvfs.* attributes (pure parsers)
 *   fs_inode.c   the inode table
 *
 * A type's special cases live in its shape: a directory type's entries
 * in a struct fs_shape, a file type's contents in a struct fs_file_shape
 * (load, commit, stat, open, add, unlink, in-place access, conversion);
 * only fs_shape.c names the types.
 */
#ifndef KVFS_FS_INT_H
#define KVFS_FS_INT_H

#include <pthread.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "fs/fs.h"
#include "fs/fs_inode.h"
#include "keyspace/ks_attr.h"
#include "engine/names.h"
#include "types/t_convert.h"

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
	struct fs_follow *follow;     /* -o follow: the catch-up thread (fs_follow.c) */
	/* Counts the stores made through nodes (fs_seq_next): a stat that
	 * began before a node's last store may hold its old size. */
	uint64_t seq;
	/* Every open file's handle (fs_handle_new), for the ones the kernel
	 * never releases: a daemon stopped with files open frees them at
	 * exit (fs_file_release_all). */
	pthread_mutex_t handles_lock;
	struct fs_handle *handles;
	/* Actions waiting now (fs_act_wait), at most opt.threads / 2. */
	pthread_mutex_t wait_lock;
	unsigned waiting;
	/* The last file key of a type other than string that was renamed
	 * to a temp name (vim's NAME -> NAME~): a key created as NAME soon
	 * after takes its type (fs.c, rename_keys and create_key). */
	pthread_mutex_t backup_lock;
	struct {
		uint64_t parent; /* inode of its directory; 0: none */
		struct buf name;
		enum kv_type type;
		uint64_t at_ms;
	} backup;
};

/* An open file: the node whose buffer it reads and writes. */
struct fs_handle {
	struct fs_node *node;
	struct fs_handle *prev, *next; /* fs.handles */
	/* Opened O_APPEND: every write goes to the end of the node's value,
	 * whatever offset the kernel sends, which it takes from a size that
	 * another handle's O_TRUNC or write may have changed meanwhile. */
	bool append;
	bool writes; /* opened for writing: counted in the node's writers */
	/*
	 * Opened O_TRUNC, and the value not emptied yet: that happens at the
	 * handle's first request, under the node's lock with that request's
	 * write, so no other open's write lands between the emptying and the
	 * first write (an append there would be overwritten in part by it:
	 * a line of two values). Until then the file reads empty and stat
	 * shows size 0, as the kernel has it since the open. trunc_epoch:
	 * the node's when opened; if it moved, another O_TRUNC open emptied
	 * it meanwhile.
	 */
	bool trunc;
	uint64_t trunc_epoch;
	/* Opened O_APPEND on a file whose shape adds (a JSON file): writes
	 * collect in `added`, which each flush gives to adds->add. */
	const struct fs_file_shape *adds;
	struct buf added;
	/* Opened an action (fs_shape.is_action): what it answered, this
	 * open's alone; reads return it. An input's open: what the feeds of
	 * its writes answered (fs_ctx.reply), which its reads return from
	 * answer_read on, whatever the offset (its writes moved it). */
	bool action;
	struct buf answer;
	size_t answer_read;
	uint64_t inval_ticket; /* an action's invalidations (fs_inval_wait) */
	/* A read-only open of a file read in place (a bitmap): the snapshot
	 * its reads use, renewed by a read at offset 0 (fs_op_read), freed
	 * at the close. NULL: none yet. */
	struct store_snap *snap;
};

/* ---- fs_node.c: helpers (paths, attributes, errno, invalidations) ---- */

/* Kind of the children of `parent`. */
enum fs_kind fs_child_kind(const struct fs *fs, const struct fs_node *parent);
/* The key a path names (namespace from -o ns= when set). Borrowed. */
void fs_path_key(const struct fs *fs, const struct fs_path *p, struct ks_key *k);
/* The path of `name` inside `parent`. */
int fs_child_path(struct fs *fs, struct fs_node *parent, const char *name, size_t n,
		  struct fs_path *p);
/* Fill st for an object with this mode, size and Kvrocks version/expiry. */
void fs_stat_fill(const struct fs *fs, mode_t mode, uint64_t size, uint64_t version,
		  uint64_t expire_ms, struct stat *st, double *timeout);
/*
 * Overlay what only the node knows: buffered data, and attributes set
 * on a node that has no stored record. `since`: fs_seq() taken before st
 * was read from the store. true if the node stored its buffer after
 * that, so st may predate a write the kernel has had acknowledged: read
 * st again (fs_node_stat). A size older than an acknowledged write
 * makes the kernel place the next O_APPEND write at the old end.
 */
bool fs_stat_overlay(struct fs_node *node, uint64_t since, struct stat *st);
/* The store counter now, and one step of it for a store through a node
 * (taken under the node's lock, after the store). */
uint64_t fs_seq(struct fs *fs);
void fs_seq_store_locked(struct fs *fs, struct fs_node *node);
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
/* Map a type-layer error to what the file system should say. */
int fs_errno(int rc);
/* Send the invalidations a request collected, after its reply, and
 * release them. They are handed to a thread of their own: a request
 * handler that waited for the kernel (which may wait for the directory
 * lock a system call holds while it waits for another handler) could
 * leave no handler free. */
void fs_inval_send(struct fs *fs, struct fs_inval *iv);
/* What has been handed to that thread so far (0: no thread), and wait
 * at most max_ms until it has sent all of it: an action's reader waits
 * so that, once it has the answer, the kernel no longer shows what the
 * action removed. Bounded: the thread may wait for a directory lock a
 * system call holds while that call waits for a handler. */
uint64_t fs_inval_ticket(struct fs *fs);
void fs_inval_wait(struct fs *fs, uint64_t ticket, unsigned max_ms);
/* Start that thread (once a session exists), and stop it (the session
 * ends): nothing is sent after the stop returns, and invalidations and
 * expiries queued or handed in later are dropped. fs_notifier_free (from
 * fs_free, after every handler has returned) stops and frees it. */
void fs_notifier_start(struct fs *fs);
void fs_notifier_stop(struct fs *fs);
void fs_notifier_free(struct fs *fs);
/* The most expiries the notifier watches at once (about 100 bytes each
 * plus the names); beyond it a name leaves the kernel's cache when its
 * entry timeout ends, which is never past the expiry either. */
#define FS_EXPIRY_WATCH_MAX 16384u
/* Key k, named in directory node `parent` (inode ino, 0 if none), expires
 * at expire_ms (Unix ms; 0: nothing to do): at that moment the notifier
 * looks it up and, if it is gone, has the kernel delete the name
 * (DELETE_SELF for a watcher of the key); a moved expiry is watched again.
 * Copies what it keeps. Any thread, any lock (the notifier's is a leaf). */
void fs_expiry_watch(struct fs *fs, uint64_t parent, uint64_t ino, const struct ks_key *k,
		     uint64_t expire_ms);
/* kvfs changed key node `node` (or the key named `key` in namespace node
 * `parent`) by no system call on it (an input, an action, a rule, another
 * key's move): the kernel forgets the attributes and pages of its node
 * and of every entry of it the table holds (a miss it remembers of the
 * name, when there is no node). Queued like fs_inval_send. */
void fs_key_changed(struct fs *fs, struct fs_node *node);
/* fs_expiry_watch for key node `node` in `parent`, once per expiry the
 * node is told of (a lookup, a listing, a TTL set). Takes node's lock. */
void fs_node_watch_expiry(struct fs *fs, struct fs_node *parent, struct fs_node *node,
			  const struct ks_key *k, uint64_t expire_ms);
void fs_key_changed_named(struct fs *fs, struct fs_node *parent, const char *key, size_t n);

/* One entry operation: the key whose directory it works in. */
struct fs_ctx {
	struct fs *fs;
	struct fs_node *dir; /* the key's node */
	struct ks_key k;     /* borrowed from a path */
	struct fs_inval *iv; /* invalidations to send after the reply (NULL: none wanted) */
	/* The key as fs_ctx_open read it: a read of one entry may use its
	 * version instead of reading the metadata again. */
	struct ks_info info;
	/* The shape of info.type (NULL: a file key). For a shape's own entry
	 * operations it is that shape; for its parameters (xattr_*) it may
	 * be another type's. */
	const struct fs_shape *sh;
	/* The request an action runs for (fs_act_wait ends its wait when the
	 * request is interrupted); NULL elsewhere. */
	fuse_req_t req;
	/* A feed's answer to the open that wrote the lines (TOPK.ADD's
	 * expelled items), which a read of that open returns: the feed
	 * replaces it. NULL: nobody can read it (a close's last line). */
	struct buf *reply;
	/* The scratch name whose contents an adopt stores (rename_local;
	 * NULL elsewhere): rsync's temp file restores, an editor's edits. */
	const char *adopt_from;
	size_t adopt_from_len;
};

/* What an entry name resolves to. Caller-owned: fs_entry_init/_release. */
struct fs_entry {
	struct buf name; /* the node's stored name (a list position's canonical spelling) */
	mode_t mode;
	uint64_t size;
	uint64_t version; /* a Kvrocks version whose time is the mtime (0: the mount time) */
	bool alias; /* the name asked for is not the node's name: the kernel must not cache it */
	bool view;  /* a read-only view */
	/* st_blksize to report (0: the default). Inputs say FS_INPUT_BLKSIZE,
	 * so stdio writers (`cut >> K/.add`) write in large chunks: each
	 * write is one feed, one batch. */
	blksize_t blksize;
};
#define FS_INPUT_BLKSIZE (128 * 1024)
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
	/* The cursor is a number, 8 bytes big-endian, that resumes the same
	 * listing whoever asks (a list position, an id, a chunk, a state
	 * file): the offset carries it (fs_dir.c). */
	bool numbered;
	bool recomputed; /* its attributes must not be cached (a JSON key) */
	mode_t mode;
	uint64_t size, version, expire_ms;
};

/* A numbered cursor: ch's cursor is num, 8 bytes big-endian in buf (the
 * iterator's, valid until its next step). */
void fs_child_set_number(struct fs_child *ch, uint8_t buf[8], uint64_t num);
/* Is cursor `after` (alen bytes; NULL: none) a numbered one? true with
 * *num its number. */
bool fs_cursor_number(const void *after, size_t alen, uint64_t *num);

/*
 * Scratch names: the names real tools give the files they write and
 * rename, or remove (docs/mapping.md, "Scratch names", lists them):
 * rsync's ".NAME.XXXXXX", sed -i's "sedXXXXXX", perl -i's "XXXXXXXX",
 * ln -f's "CuXXXXXX", patch's "NAME.oXXXXXX", "NAME.orig" and
 * "NAME.rej", vim's swap ".NAME.swp" (".swo", ... ".saa", ".swpx") and
 * probe "4913" (+ 123 k), backups "NAME~" and "NAME.~N~", emacs's
 * "#NAME#" and ".#NAME". A shape whose names are not all entries keeps a
 * file of such a name in memory (FS_CREATE_SCRATCH) unless the name is
 * one of its entries (vim's "4913" is a list position), and refuses any
 * other name (fs_shape_refuse_name).
 */
bool fs_is_scratch_name(const char *name, size_t n);
/* Which tool's name it is ("rsync's temp file", ...), for log lines; NULL
 * if none. */
const char *fs_scratch_tool(const char *name, size_t n);
/* Vim's swap files only (".NAME.swp" ... ".saa", ".swpx"): the scratch
 * names of a set or zset, where every other name is a member. */
bool fs_is_swap_name(const char *name, size_t n);
/* rsync's temp file ".NAME.XXXXXX" (not a vim swap file): its rename
 * onto an entry is a restore of stored state, not an edit. */
bool fs_is_rsync_temp(const char *name, size_t n);

/* ---- Directory shapes: the entries of a key, by its type (fs_TYPE.c) --- */

/*
 * One line of a type's help, what `getfattr -n user.kvfs.help KEY` prints
 * (fs_xattr.c): a name there (an entry, an input or a view; a word in
 * capitals stands for any such name), what it does, and an example. A
 * shape's table ends with a row whose name is NULL. The names of the
 * rows are also what a refused create says the directory accepts
 * (fs_shape_refuse_name).
 */
struct fs_help {
	const char *name;
	const char *what;
	const char *example;
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
	/* Is stored entry `name` one that cannot be changed (a stream's
	 * entries, not its state files)? An open of it for writing is
	 * refused with EACCES (a truncate reaches commit, which refuses
	 * it). NULL: every entry can be changed. */
	bool (*is_immutable)(const char *name, size_t n);
	/* Names are numbers whose leading zeros only pad them to sort (list
	 * positions): attribute records take the number without them. */
	bool padded;
	/* Resolve `name`: 0 with e filled, -ENOENT, ... */
	int (*lookup)(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e);
	/* List the entries after the cursor (NULL: from the first); by_name
	 * asks for stored-name order, where the shape's own order differs
	 * (long-name resolution). */
	int (*iter_open)(struct fs_ctx *c, const void *after, size_t alen, bool by_name, void **it);
	int (*iter_next)(void *it, struct fs_child *ch);
	void (*iter_free)(void *it);
	/* Is `name` a view (read-only, never listed)? NULL: no views. */
	bool (*is_view)(const char *name, size_t n);
	/* Is view `name` one that grows while it is open (a stream's
	 * .log)? Its attributes are never cached and a read at or past
	 * what an open file loaded loads it again, so `tail -f` sees new
	 * lines. NULL: no such views. */
	bool (*is_live)(const char *name, size_t n);
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
	 * '\n' (or input_sep's byte) except possibly the last one at a
	 * close. One batch: an error stores nothing (log the line number). */
	int (*feed)(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn);
	/* The byte that ends a line of input `name` (a list's `.rpush0`:
	 * NUL, so lines may hold newlines). NULL: '\n' for every input. */
	char (*input_sep)(const char *name, size_t n);
	/* Inputs: collect complete lines until this many bytes wait before
	 * feeding them (0: feed each write's lines at once). For types whose
	 * every feed rewrites much (a bloom filter's bitset). The lines are
	 * fed at the latest when the file is closed or synced; a refused
	 * feed drops the lines collected since the last one. */
	size_t feed_batch;
	/* The file contents of an entry. */
	int (*load)(struct fs_ctx *c, const char *name, size_t n, struct buf *out);
	/* May an entry hold these bytes? Checked on every write and truncate
	 * with the contents as they would become. NULL: anything. */
	int (*check)(const char *name, size_t n, const char *d, size_t dn);
	/* A new entry (FS_CREATE_PENDING) is stored at its first flush even
	 * when nothing was written (`touch h/f; ls h` lists it). false: an
	 * empty one waits for the last close (a score or an ID written
	 * after a shell's redirection flushed). */
	bool store_new_at_flush;
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
	/* rename moves entries between two keys of this type (hash fields);
	 * false: within one key only. */
	bool rename_across;
	/* A scratch entry renamed onto `to`: store its contents there. 0 with
	 * canon = the node's new name, FS_ADOPT_LOCAL (`to` is another
	 * scratch name), or an errno. NULL: local entries rename locally. */
	int (*adopt)(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		     struct buf *canon);
	/* Is `name` a scratch name here: a file that lives in the daemon
	 * only (rsync's and editors' temp files), never stored by itself?
	 * NULL: every name is stored. A rename from outside the key onto a
	 * scratch name is EINVAL (a copy there would be lost); a rename of
	 * an entry onto one within the key, where the shape has no rename,
	 * leaves the entry and gives the scratch file its contents (an
	 * editor's backup; docs/mapping.md section 6). */
	bool (*is_scratch)(const char *name, size_t n);
	/* What a field of a hash means in this type, for converting a hash
	 * (cp -a sets a directory's type after filling it). NULL: no
	 * conversion. */
	convert_field_cb from_field;

	/* Types whose live keys can list nothing (sketches and time series,
	 * whose listed entries are the key's state; an emptied stream).
	 * is_blank: the key holds nothing, so rmdir deletes it (rm -r
	 * empties the state files first): 1 blank, 0 not, or the type's
	 * negative errno (-EUCLEAN: its state does not decode, and rmdir
	 * deletes it too: a list's head and tail). NULL: rmdir of a live
	 * key is ENOTEMPTY. */
	int (*is_blank)(struct fs_ctx *c);
	/* A key's directory was opened (its first open handle: dir_opens is
	 * 1) and closed (dir_opens counts those still open): a list's gaps
	 * (fs_list.c). NULL: nothing to do. */
	void (*dir_opened)(struct fs *fs, struct fs_node *dir);
	void (*dir_closed)(struct fs *fs, struct fs_node *dir);
	/* The canonical name of another spelling of an entry ("007" of a
	 * sortedint id 7), so a lookup finds a new entry not yet stored
	 * (FS_CREATE_PENDING) under any spelling. 0 with out set, or
	 * -ENOENT if the name spells no entry. NULL: names are canonical. */
	int (*canon)(const char *name, size_t n, struct buf *out);
	/* Emptyable types (sketches): make an empty key of this type in place
	 * of a remembered empty collection (setfattr user.kvfs.type). */
	int (*make_empty)(struct fs_ctx *c);
	/*
	 * Parameters as extended attributes user.kvfs.NS.PARAM, NS being
	 * xattr_ns or, if NULL, the type's name (enc_type_name). The hooks
	 * get the key's context with c->info and c->sh as read. Listed on a
	 * key of this type that is not empty: xattrs (NUL-separated with the
	 * last NUL, xattrs_len bytes), then what xattr_names appends (a
	 * series' labels and rules). get: on a key of this type; `param` is
	 * the part after "user.kvfs.NS.", the value into out; -ENODATA for no
	 * such param. set: on the key as read: one of this type, or a
	 * remembered empty collection (which becomes a key of this type), or
	 * another key, which the shape refuses (fs_sketch_param_key). remove:
	 * the same for a removal; NULL: the parameters cannot be removed
	 * (EPERM). NULL xattr_get: no parameters.
	 */
	const char *xattr_ns;
	const char *xattrs;
	size_t xattrs_len;
	int (*xattr_names)(struct fs_ctx *c, struct buf *out);
	int (*xattr_get)(struct fs_ctx *c, const char *param, struct buf *out);
	int (*xattr_set)(struct fs_ctx *c, const char *param, const char *v, size_t vn);
	int (*xattr_remove)(struct fs_ctx *c, const char *param);
	/*
	 * Is `name` an action: a read with a side effect (`cat L/.lpop`),
	 * never listed, reached only by its exact name? NULL: no actions.
	 * Each open of it runs act once, with no lock of the fs layer held,
	 * and what act put in `out` is that open's answer alone: its reads
	 * return it, the kernel caches none of it (no page cache, attributes
	 * and name looked up anew each time), and an open for writing is
	 * EACCES. An error fails the open (and changes nothing). An action
	 * that waits (BLPOP) waits through fs_act_wait. Its lookup answers
	 * an empty read-only file (fs_shape_action_entry).
	 */
	bool (*is_action)(const char *name, size_t n);
	int (*act)(struct fs_ctx *c, const char *name, size_t n, struct buf *out);
	/* What user.kvfs.help prints on a key of this type: its names, inputs
	 * and views, one row each (struct fs_help). NULL: nothing. */
	const struct fs_help *help;
};

/* The stat, open and load of a file shape whose names are actions of a
 * namespace (fs_file_shape.act: counters, bit views): an empty read-only
 * file, never cached; an open for writing is EACCES, logged. */
int fs_action_file_stat(struct fs *fs, const struct ks_key *k, const struct ks_info *info,
			struct stat *st, double *timeout);
int fs_action_file_open(struct fs *fs, const struct ks_key *k, bool write, bool *view);
int fs_action_file_load(struct fs *fs, const struct ks_key *k, struct buf *out);

/* lookup of action `name` (fs_shape.is_action): e is an empty read-only
 * file, never cached. */
int fs_shape_action_entry(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e);

/*
 * For an action that waits: ks_wait (keyspace.h) on key k of c for a
 * change after gen, until deadline (ks_wait_deadline; 0: none). Ends
 * early with -EINTR when c's request is interrupted (the reader was
 * killed) or the daemon stops. At most half the worker threads wait at
 * once (fs_options.threads), so the others serve the writes that end the
 * waits: beyond that -EAGAIN, logged. 0 once k changed, -ETIMEDOUT.
 */
int fs_act_wait(struct fs_ctx *c, const struct ks_key *k, uint64_t gen, uint64_t deadline);
/* The seconds a blocking action waits, name[pn, n) (".bzpopmin:SECS"
 * with pn the length of ".bzpopmin:"): a decimal number from 0 (for ever)
 * to FS_ACT_SECS_MAX, into *ms (a positive number at least 1 ms). 0, or
 * -EINVAL logged. */
#define FS_ACT_SECS_MAX 31536000.0 /* a year */
int fs_act_secs(const char *name, size_t n, size_t pn, uint64_t *ms);
/* An action's COUNT, name[pn, n): a decimal whole number from min to max
 * (no '+'). 0, or -EINVAL logged ("'NAME': COUNT is a whole number from
 * MIN to MAX"). */
int fs_act_count(const char *name, size_t n, size_t pn, int64_t min, int64_t max, int64_t *count);
/* Append item[0, n) to the struct buf out as one line of an answer: in
 * the escaping of item lists (fs_items_encode, fs_xval.h), then '\n'.
 * The signature of a type's member callback (set_member_cb). */
int fs_items_line(void *out, const char *item, size_t n);
/* xattrs and xattrs_len of a shape from one string constant X (its
 * names NUL-separated, the last NUL included by sizeof). */
#define FS_SHAPE_XATTRS(X) .xattrs = (X), .xattrs_len = sizeof(X)

/* Hooks and steps several shapes share (fs_node.c). */
/* load of entries that are empty files (set members, sortedint ids). */
int fs_shape_load_empty(struct fs_ctx *c, const char *name, size_t n, struct buf *out);
/* check of such entries: data written into one is -EINVAL, logged as
 * "'NAME': WHAT are empty files; ..." (what: "members of a set"). */
int fs_shape_check_empty(const char *name, size_t n, size_t dn, const char *what);
/* adopt of a shape whose scratch names are swap files and whose
 * contents a commit stores (set members, zset scores): a swap file
 * renamed onto entry `to` is checked and committed there as a new entry
 * (c->sh: the shape); onto another swap name it is FS_ADOPT_LOCAL. */
int fs_shape_adopt_commit(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
			  struct buf *canon);
/* A create of `name` (verb "create"; or "rename onto") in key c->k that
 * is no entry of its shape c->sh and no scratch name: -EINVAL, logged once
 * with the directory and the names the shape's help gives. */
int fs_shape_refuse_name(const struct fs_ctx *c, const char *verb, const char *name, size_t n);
/* The end of an iter_open that wraps the type's iterator in a struct of
 * its own, it: opened says the type's iterator was made (else rc is its
 * error, 0 for out of memory): 0 with *out = it, or the error with it
 * freed (free(), after the caller freed what it holds). */
int fs_shape_iter_opened(void *it, bool opened, int rc, void **out);
/* lookup of view `name`: e is a read-only file (e->view) the size of the
 * text make(c, name, n, text) gives (the shape's load of a view). */
int fs_shape_view_entry(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e,
			int (*make)(struct fs_ctx *c, const char *name, size_t n, struct buf *out));

/* ---- File shapes: file keys, by their type -------------------------------- */

struct string_pin;

/*
 * What a file key of one type is (fs_string.c: string and bitmap;
 * fs_json.c: json), beside the directory shapes above: how its bytes are
 * read and stored, and what else it does. Two also answer names of a
 * namespace that are no key: a JSON key's path names ("KEY:$.a", when no
 * key has that name) and the views of the time series of a namespace
 * (".mrange:...?FILTER", fs_timeseries.c: whatever key has that name).
 * The hooks get the key (or the name) as k, with the change the caller
 * staged in k->attr for those that write; they return 0 or a negative
 * errno, and log the refusals a user should hear about.
 */
struct fs_file_shape {
	enum kv_type type;
	/* What the file shows is made from what was stored (JSON text,
	 * compact): the kernel caches neither its pages nor its attributes,
	 * and a listing says so (fs_child.recomputed). */
	bool recomputed;
	/* A commit may refuse the contents (text that is no JSON: -EINVAL,
	 * logged): an empty file is stored by no flush before its last
	 * close (`echo x > doc` flushes before it writes, and would replace
	 * the document even when x is then refused), and a refused file is
	 * not tried again at its close. */
	bool parsed;
	/* Could `name`, which names no key, be one of this shape's (a cheap
	 * test of the name, no lookup)? NULL: the shape has no names. */
	bool (*is_name)(const char *name, size_t n);
	/* Such a name means this shape's file even when a key has it (a view
	 * of the namespace); else only when none does. */
	bool shadows;
	/* Attributes of key k (info: its ks_lookup) or, with info NULL, of
	 * name k: -ENOENT if it is none. NULL: a file of info->size bytes
	 * with the key's stored attributes. */
	int (*stat)(struct fs *fs, const struct ks_key *k, const struct ks_info *info,
		    struct stat *st, double *timeout);
	/* An open of name k: 0 (*view: read-only; for writing -EACCES,
	 * logged), -ENOENT if it is none. */
	int (*open)(struct fs *fs, const struct ks_key *k, bool write, bool *view);
	/* The contents of key (or name) k, into out. */
	int (*load)(struct fs *fs, const struct ks_key *k, struct buf *out);
	/* Store the contents whole (keeping the key's expiry). NULL: the file
	 * is read-only. */
	int (*commit)(struct fs *fs, const struct ks_key *k, const char *d, size_t n);
	/* Bytes an open with O_APPEND wrote, added to the stored value at
	 * each flush (JSON: ARRAPPEND, STRAPPEND, NUMINCRBY by what is
	 * there). NULL: they go to the end of the buffer like any write. */
	int (*add)(struct fs *fs, const struct ks_key *k, const char *d, size_t n);
	/* rm of name k (no key). NULL: -ENOENT. */
	int (*unlink)(struct fs *fs, const struct ks_key *k);
	/* Make key k, empty: -EEXIST if it exists (the new-file shape: a
	 * create that must be stored at once). */
	int (*create)(struct fs *fs, const struct ks_key *k);
	/* A value read and not written is borrowed from the store instead of
	 * copied (fs_node.pin; released by fs_node_unpin_locked). NULL: it is
	 * loaded. */
	int (*pin)(struct fs *fs, const struct ks_key *k, struct string_pin **pin, const char **d,
		   size_t *n);
	/* While no open file buffers it, the key is read and written in place
	 * (a sparse bitmap of 512 MiB never has to fit in memory): read at
	 * most size bytes at off, write d at off (one batch each), set the
	 * length (growing a remembered empty key makes it). NULL: buffered. */
	int (*read)(struct fs *fs, const struct ks_key *k, uint64_t off, size_t size,
		    struct buf *out);
	int (*write)(struct fs *fs, const struct ks_key *k, uint64_t off, const char *d, size_t n);
	int (*truncate)(struct fs *fs, const struct ks_key *k, uint64_t size);
	/* Key k, a file of the new-file type (a string), becomes one of this
	 * type, keeping its bytes (a bitmap) or through its text (JSON:
	 * -EINVAL, logged, if it is none); and back. One batch each. NULL: no
	 * such conversion. */
	int (*from_new)(struct fs *fs, const struct ks_key *k);
	int (*to_new)(struct fs *fs, const struct ks_key *k);
	/* Names of this shape are actions of the namespace (`cat 'KEY:incr'`):
	 * as fs_shape.act, run once per open of name k, its answer into out.
	 * NULL: the shape's names are files. */
	int (*act)(struct fs *fs, const struct ks_key *k, struct buf *out);
	/* What user.kvfs.help prints on a key of this type (struct fs_help).
	 * NULL: nothing. */
	const struct fs_help *help;
	/*
	 * Names of this shape are inputs of the namespace (`echo x >>
	 * 'KEY:rpush'`), as a directory's are (fs_shape.is_input): an open
	 * file of such a name reads empty, ignores truncation, cannot be
	 * removed or renamed (EACCES), and each write's complete lines (ended
	 * by input_sep's byte; NULL: '\n') go to feed at once, in one batch,
	 * a last line without its end at the close. k: the name, with the
	 * change (KS_ATTR_TOUCH) the caller staged; ns: the node of the
	 * namespace it is in (the input's node, whose lock is held, holds a
	 * reference). feed logs each refusal it returns (an error stores
	 * nothing). NULL feed: the names are no inputs.
	 */
	int (*feed)(struct fs *fs, struct fs_node *ns, const struct ks_key *k, const char *d,
		    size_t dn);
	char (*input_sep)(const char *name, size_t n);
	/* The key an action of name k changed, as the length of the name's
	 * first bytes that name it (`c` of `c:incr`): after act, its node
	 * and what the kernel keeps of it are invalidated
	 * (fs_action_changed). NULL or 0: none. */
	size_t (*act_key)(const char *name, size_t n);
};

/* fs_timeseries.c: samples as CSV "timestamp,value" lines (appended to
 * out), and the options of a range view ("FROM..TO[:OPT]..."; *fts is
 * allocated for ts=..., free it). 0, -EINVAL (logged), -ENOMEM. */
struct ts_sample;
struct ts_range_opt;
int fs_ts_csv(struct buf *out, const struct ts_sample *s, size_t n);
int fs_ts_range_parse(const char *spec, size_t n, struct ts_range_opt *o, uint64_t **fts);
/* fs_ts_view_file_shape: namespace views over the time series selected
 * by label filters, ".mrange:RANGE[:OPT]...?FILTERS", ".mrevrange:...",
 * ".mget?FILTERS" (a key of that name is shadowed): read-only files of
 * "key,timestamp,value" lines. fs_ts_madd_file_shape: the namespace
 * input ".madd" (".madd:on_duplicate=POLICY"), "KEY,TIMESTAMP,VALUE"
 * lines, each write one TS.MADD across keys, all or nothing. */

/* ---- Sketch keys (fs_sketch.c) ---------------------------------------
 *
 * What the sketch shapes (hyperloglog, bloom, t-digest, top-k) share. A
 * sketch key is a directory whose LISTED files are its exact state (each
 * written whole, validated, stored in one batch); its
 * unlisted names are read-only views (`cat K/.count`) and inputs whose
 * lines are items (`cut -f1 log >> K/.add`). A type describes itself in
 * a `struct fs_sketch` and fills its fs_shape with thin wrappers around
 * the fs_sketch_* functions below (a shape's callbacks get no pointer to
 * the shape itself). See docs/architecture.md, "Sketch shapes".
 */

/* A view: `name` exactly, or when it ends in ':' (".exists:") every
 * name with that prefix; `arg` is the rest of the name (stored bytes).
 * It is answered at lookup too (its size; a malformed arg is -EINVAL). */
struct fs_sketch_view {
	const char *name;
	int (*read)(struct fs_ctx *c, const char *arg, size_t an, struct buf *out);
};
/* An input: the lines of one write go to one of these, stored in one
 * batch; an error refuses them all (log the line number, i + 1).
 *   feed:         every line (without its '\n') is an item.
 *   feed_numbers: every line not blank is a number; one that does not
 *                 read refuses the write (logged). Called when n > 0.
 *   feed_keys:    every line not empty names a key of the namespace as
 *                 the tree spells it (decoded; same ns). n > 0. */
struct fs_sketch_input {
	const char *name;
	int (*feed)(struct fs_ctx *c, const struct iovec *items, size_t n);
	int (*feed_numbers)(struct fs_ctx *c, const double *v, size_t n);
	int (*feed_keys)(struct fs_ctx *c, const struct ks_key *srcs, size_t n);
};
/* file(), file_load(): state file number i holds nothing now, so it is
 * not listed (later numbers may be). */
#define FS_SKETCH_ABSENT 2
/* One of a fixed set of state files. */
struct fs_sketch_part {
	const char *name;
	/* Replace this part with d: validated first (-EINVAL, logged,
	 * nothing changed). With c NULL (text parts), only check the
	 * complete lines of a write (up to its last '\n'), so that a bad
	 * line fails at its write; a binary part returns 0 then. */
	int (*store)(struct fs_ctx *c, const char *d, size_t dn);
	/* Optional: rm empties this part only; the part is unlisted while
	 * it holds nothing (file_load says FS_SKETCH_ABSENT) and may be
	 * created then (it is stored at close). NULL: rm calls clear. */
	int (*clear)(struct fs_ctx *c);
};
struct fs_sketch {
	const char *what; /* the type, for log lines */
	const struct fs_sketch_view *views;
	size_t nviews;
	const struct fs_sketch_input *inputs;
	size_t ninputs;
	/* Either a fixed set of state files, in name order (file,
	 * file_index and file_store NULL): each is rendered by file_load to
	 * give its size (its times are the key's: every feed touches the
	 * key, ks_attr); */
	const struct fs_sketch_part *parts;
	size_t nparts;
	/* or state file number i of the key, listed in number order (the
	 * listing resumes by number, fs_sketch_iter_next): 1 with name,
	 * size and (optionally: it starts 0, the mount time) version set,
	 * FS_SKETCH_ABSENT, 0 past the last one, or an errno; */
	int (*file)(struct fs_ctx *c, uint32_t i, struct buf *name, uint64_t *size,
		    uint64_t *version);
	/* the number of the state file called name (it need not exist for
	 * this key), or -1; */
	int (*file_index)(const char *name, size_t n);
	/* and replace that part of the state with d: validated first
	 * (-EINVAL, logged, nothing changed). */
	int (*file_store)(struct fs_ctx *c, int idx, const char *d, size_t dn);
	/* The text of state file idx: 0, FS_SKETCH_ABSENT (it holds nothing,
	 * so it is not listed; out holds its text all the same), or an
	 * errno. */
	int (*file_load)(struct fs_ctx *c, int idx, struct buf *out);
	/* rm of a state file (but a part with its own clear): the sketch
	 * becomes empty (same parameters). */
	int (*clear)(struct fs_ctx *c);
};

/* A table of a struct fs_sketch and its length, from a static array T:
 * FS_SKETCH_TABLE(views, hll_views) sets views and nviews. */
#define FS_SKETCH_TABLE(field, T) .field = (T), .n##field = sizeof(T) / sizeof((T)[0])

bool fs_sketch_is_view(const struct fs_sketch *s, const char *name, size_t n);
bool fs_sketch_is_input(const struct fs_sketch *s, const char *name, size_t n);
/* The number of the state file called name, or -1. */
int fs_sketch_file_index(const struct fs_sketch *s, const char *name, size_t n);
/* Split d into lines (the last may lack its '\n'): *items is malloc'd
 * (free it), *n its length. 0 or -ENOMEM. */
int fs_sketch_lines(const char *d, size_t dn, struct iovec **items, size_t *n);
/* The lines of d that are not blank, each a number: *v is malloc'd (free
 * it, also on error), *n its length. A line that is not a number is
 * -EINVAL, logged as "WHAT: line N ('...') is not a number". */
int fs_sketch_numbers(const char *d, size_t dn, const char *what, double **v, size_t *n);
/* Append d in the shortest text that reads back as the same double
 * (NaN is "nan", infinities "inf" and "-inf"). */
int fs_sketch_add_double(struct buf *b, double d);
/* Split "NAME VALUE\n" lines (blanks between, empty lines skipped): for
 * each line, cb(arg, name, nn, value, vn); stops at its first error. */
int fs_sketch_pairs(const char *d, size_t dn,
		    int (*cb)(void *arg, const char *nm, size_t nn, const char *v, size_t vn),
		    void *arg);
/* A parameter of sketch type `type` (xattr_set) may be set on the key
 * as read (c->info): one of that type or a remembered empty collection.
 * 0, or -ENOTEMPTY (logged) for another key. */
int fs_sketch_param_key(const struct fs_ctx *c, enum kv_type type, const char *param);
/* The shape callbacks, given the type's description. */
int fs_sketch_lookup(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		     struct fs_entry *e);
int fs_sketch_iter_open(const struct fs_sketch *s, struct fs_ctx *c, const void *after, size_t alen,
			void **it);
int fs_sketch_iter_next(void *it, struct fs_child *ch);
void fs_sketch_iter_free(void *it);
int fs_sketch_feed(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		   const char *d, size_t dn);
int fs_sketch_load(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		   struct buf *out);
int fs_sketch_check(const struct fs_sketch *s, const char *name, size_t n, const char *d,
		    size_t dn);
int fs_sketch_commit(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		     const char *d, size_t dn);
int fs_sketch_create(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n);
int fs_sketch_unlink(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n);
int fs_sketch_adopt(const struct fs_sketch *s, struct fs_ctx *c, const char *to, size_t tn,
		    const char *d, size_t dn, struct buf *canon);

/* The shape callbacks of the sketch S (a static const struct fs_sketch),
 * as static functions sketch_*; FS_SKETCH_SHAPE_OPS fills a struct
 * fs_shape with them (a shape's callbacks get no pointer to the shape),
 * and says recomputed: a sketch's listed files are its state rendered. */
#define FS_SKETCH_SHAPE_FUNCS(S)                                                                   \
	static bool sketch_is_view(const char *name, size_t n)                                     \
	{                                                                                          \
		return fs_sketch_is_view(&(S), name, n);                                           \
	}                                                                                          \
	static bool sketch_is_input(const char *name, size_t n)                                    \
	{                                                                                          \
		return fs_sketch_is_input(&(S), name, n);                                          \
	}                                                                                          \
	static int sketch_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e) \
	{                                                                                          \
		return fs_sketch_lookup(&(S), c, name, n, e);                                      \
	}                                                                                          \
	static int sketch_iter_open(struct fs_ctx *c, const void *after, size_t alen,              \
				    bool by_name, void **it)                                       \
	{                                                                                          \
		/* no long names: a name search lists them all */                                  \
		return fs_sketch_iter_open(&(S), c, by_name ? NULL : after, alen, it);             \
	}                                                                                          \
	static int sketch_feed(struct fs_ctx *c, const char *name, size_t n, const char *d,        \
			       size_t dn)                                                          \
	{                                                                                          \
		return fs_sketch_feed(&(S), c, name, n, d, dn);                                    \
	}                                                                                          \
	static int sketch_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)      \
	{                                                                                          \
		return fs_sketch_load(&(S), c, name, n, out);                                      \
	}                                                                                          \
	static int sketch_check(const char *name, size_t n, const char *d, size_t dn)              \
	{                                                                                          \
		return fs_sketch_check(&(S), name, n, d, dn);                                      \
	}                                                                                          \
	static int sketch_commit(struct fs_ctx *c, const char *name, size_t n, const char *d,      \
				 size_t dn, bool pending)                                          \
	{                                                                                          \
		(void)pending;                                                                     \
		return fs_sketch_commit(&(S), c, name, n, d, dn);                                  \
	}                                                                                          \
	static int sketch_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e) \
	{                                                                                          \
		(void)e;                                                                           \
		return fs_sketch_create(&(S), c, name, n);                                         \
	}                                                                                          \
	static int sketch_unlink(struct fs_ctx *c, const char *name, size_t n)                     \
	{                                                                                          \
		return fs_sketch_unlink(&(S), c, name, n);                                         \
	}                                                                                          \
	static int sketch_adopt(struct fs_ctx *c, const char *to, size_t tn, const char *d,        \
				size_t dn, struct buf *canon)                                      \
	{                                                                                          \
		return fs_sketch_adopt(&(S), c, to, tn, d, dn, canon);                             \
	}
#define FS_SKETCH_SHAPE_OPS                                                                        \
	.recomputed = true, .lookup = sketch_lookup, .iter_open = sketch_iter_open,                \
	.iter_next = fs_sketch_iter_next, .iter_free = fs_sketch_iter_free,                        \
	.is_view = sketch_is_view, .is_input = sketch_is_input, .feed = sketch_feed,               \
	.load = sketch_load, .check = sketch_check, .commit = sketch_commit,                       \
	.create = sketch_create, .unlink = sketch_unlink, .adopt = sketch_adopt

/* ---- fs_geo.c: the geo names of a zset (GEOADD, GEOPOS, ...) ------------ */

/* Is `name` a geo view of a zset (.geopos:, .geodist:, .geohash:,
 * .geosearch:...)? Then fs_geo_view_check says whether it is well formed
 * (0 or -EINVAL, logged) and fs_geo_view_load makes its contents (at one
 * snapshot of c's key; -ENOENT for a search from a missing member). */
bool fs_geo_is_view(const char *name, size_t n);
int fs_geo_view_check(const char *name, size_t n);
int fs_geo_view_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out);
/* Is `name` the GEOADD input (.geoadd, .geoadd:OPTIONS)? Its options are
 * checked by fs_geo_input_check (0 or -EINVAL, logged); fs_geo_feed adds
 * LON,LAT,MEMBER lines in one batch (-EINVAL, logged, adds nothing) and
 * answers GEOADD's reply in c->reply. */
bool fs_geo_is_input(const char *name, size_t n);
int fs_geo_input_check(const char *name, size_t n);
int fs_geo_feed(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn);

/* ---- fs_shape.c: the table of types and shapes --------------------------- */

/* The shapes, each defined by its file (fs_TYPE.c; fs_string.c: string
 * and bitmap; fs_json.c; fs_timeseries.c: also its namespace views). */
extern const struct fs_shape fs_hash_shape, fs_list_shape, fs_set_shape, fs_zset_shape,
    fs_sortedint_shape, fs_stream_shape, fs_timeseries_shape, fs_tdigest_shape, fs_topk_shape,
    fs_hll_shape, fs_bloom_shape;
extern const struct fs_file_shape fs_string_file_shape, fs_bitmap_file_shape, fs_json_file_shape,
    fs_ts_view_file_shape, fs_ts_madd_file_shape, fs_counter_file_shape, fs_bitops_file_shape,
    fs_list_push_file_shape;
/* Is k (a name that is no key) a JSON path name whose path is indefinite
 * (wildcards, `..`, slices, filters: several matches)? fs_json.c. */
bool fs_json_name_indefinite(struct fs *fs, const struct ks_key *k);
/* What user.kvfs.help prints on a namespace (its names besides keys). */
extern const struct fs_help fs_ns_help[];
/* What a new file and a new directory are (DESIGN.md section 5, rule 3:
 * a string and a hash, unless their type is set). */
extern const struct fs_file_shape *const fs_new_file_shape;
extern const struct fs_shape *const fs_new_dir_shape;

/* The shape of a directory type, or NULL (a file type, or not mapped). */
const struct fs_shape *fs_shape_of(enum kv_type t);
/* The file shape of type t, or NULL (a directory type, or not mapped). */
const struct fs_file_shape *fs_file_shape_of(enum kv_type t);
/* Is t a file type (it has a file shape)? */
bool fs_type_is_file(enum kv_type t);
/* How a key whose metadata does not decode is shown: true (a file) for
 * file types and an unknown type (KV_TYPE_NONE), else a directory. */
bool fs_corrupt_is_file(enum kv_type t);
/* Is t mapped into the tree (as a file or a directory)? */
bool fs_type_is_supported(enum kv_type t);
/* The file shape of file key `name` whose node says type t: a view of
 * the namespace by that name, else t's, else the new-file shape (a node
 * whose type is not known yet reads and stores as a string). */
const struct fs_file_shape *fs_file_shape_for(const char *name, size_t n, enum kv_type t);
/* The file shape whose names include `name` (no lookup): one that
 * shadows keys (a namespace view) or, with shadows false, one that
 * answers a name no key has (a JSON path name). NULL: none. */
const struct fs_file_shape *fs_file_shape_named(const char *name, size_t n, bool shadows);
/* Is key k an input of its namespace (a name of a file shape with feed,
 * KEY:rpush) that no key has? One lookup when the name is one. */
bool fs_key_is_input(struct fs *fs, const struct ks_key *k);
/* The shape whose parameters are user.kvfs.NS.*, NS being ns (n bytes),
 * or NULL. */
const struct fs_shape *fs_shape_of_xattr(const char *ns, size_t n);
/* Turn file key k of type `from` into type `to` keeping its bytes or its
 * text, in one batch: through the new-file type (a string) on one side.
 * 0, -EOPNOTSUPP (no such conversion: bitmap <-> json), or the type's
 * errno. */
int fs_file_convert(struct fs *fs, const struct ks_key *k, enum kv_type from, enum kv_type to);
/* Is `name` a view or an input of shape sh (read-only for tree changes)? */
bool fs_shape_is_special(const struct fs_shape *sh, const char *name, size_t n);
/* sh->lookup, and where it finds no entry an action of that name
 * (fs_shape.is_action): an entry of the very same name wins. */
int fs_shape_lookup(struct fs_ctx *c, const struct fs_shape *sh, const char *name, size_t n,
		    struct fs_entry *e);
/* Is `name` an action of c's key: one of the shape's, and no entry? */
bool fs_shape_acts(struct fs_ctx *c, const struct fs_shape *sh, const char *name, size_t n);
/* The key of directory node `dir` and its shape: c is set up (k borrows
 * from p, which the caller has filled with fs_itable_path or
 * fs_child_path) and *sh is the shape. 0; -ENOENT (no such key);
 * -ENOTDIR (a file key); -EOPNOTSUPP (a type not mapped yet, logged).
 * c->info is the key as read, c->sh its shape. */
int fs_ctx_open(struct fs *fs, struct fs_node *dir, const struct fs_path *p, struct fs_inval *iv,
		struct fs_ctx *c, const struct fs_shape **sh);
/* fs_ctx_open reading at a snapshot (ks_snap_new; NULL: the latest):
 * c->k.snap is set, so the key and every entry the context reads are
 * those of that moment (a listing's one version). For reads only. */
int fs_ctx_open_at(struct fs *fs, struct fs_node *dir, const struct fs_path *p, struct fs_inval *iv,
		   const struct store_snap *snap, struct fs_ctx *c, const struct fs_shape **sh);

/* ---- fs_counter.c: counters (INCR ... ZINCRBY, TS.INCRBY) ------------------ */

/* A counter name BASE:incr, BASE:decr, BASE:incrby:N, BASE:decrby:N or
 * BASE:incrbyfloat:X, split (borrowed from the name): base is BASE's
 * length (at least 1), arg the N or X (NULL: incr, decr), sign -1 for the
 * decrements, fl for incrbyfloat. */
struct fs_counter {
	size_t base;
	const char *arg;
	size_t an;
	int sign;
	bool fl;
};
/* 1 if name is a counter name (ct filled), 0 if not; the argument is not
 * read yet. */
int fs_counter_parse(const char *name, size_t n, struct fs_counter *ct);
/* The signed amount of counter ct, named name: a whole number (INCRBY,
 * HINCRBY) or any number (INCRBYFLOAT, ZINCRBY, TS.INCRBY). 0, or
 * -EINVAL (the argument does not read, logged), -ERANGE (DECRBY of
 * -2^63, logged). */
int fs_counter_int(const struct fs_counter *ct, const char *name, size_t n, int64_t *by);
int fs_counter_float(const struct fs_counter *ct, const char *name, size_t n, double *by);
/* Log the refusal rc of a counter's verb on the thing `what` ("value",
 * "field", "score"), a float one if fl: -EINVAL (it holds no number),
 * -ERANGE (the result is out of range). Other errors: nothing. */
void fs_counter_refused(int rc, const char *name, size_t n, const char *what, bool fl);
/* fs_counter_file_shape: the counters of a namespace (KEY:incr, ...; a key
 * of that exact name wins), on string and time-series keys. */
/* A directory's gaps (fs_inode.h; fs_list.c, and the JSON tree's arrays),
 * under its node's lock: the position now of slot f (a name in the
 * numbering of the listing), -ENOENT if f is a gap; add gap f (kept in
 * order). 0, -ENOENT, -ENOMEM. */
int fs_gaps_pos(const struct fs_node *dir, uint64_t f, uint64_t *pos);
int fs_gaps_add(struct fs_node *dir, uint64_t f);
/* fs_list_push_file_shape (fs_list.c): the pushes of a namespace,
 * inputs KEY:rpush, KEY:lpush, KEY:rpush0, KEY:lpush0 (a key of that
 * exact name wins) on list KEY, made if missing. */

/* ---- fs_stat.c: attributes of nodes ------------------------------------ */

/* Attributes of the root, a namespace or a key (kind FS_ROOT, FS_NS or
 * FS_KEY) that path p names. 0, -ENOENT, or another errno. */
int fs_stat_path(struct fs *fs, enum fs_kind kind, const struct fs_path *p, struct stat *st,
		 double *timeout);
/* The same, with the key's expiry (Unix ms, 0: none) in *expire_ms when
 * p names a key (left as it is otherwise). */
int fs_stat_path_exp(struct fs *fs, enum fs_kind kind, const struct fs_path *p, struct stat *st,
		     double *timeout, uint64_t *expire_ms);
/* Attributes of a node (getattr): never older than a write acknowledged
 * before the call. */
int fs_node_stat(struct fs *fs, struct fs_node *node, struct stat *st, double *timeout);
/* A local key or entry: a file of whatever its buffer holds, its times
 * now. */
void fs_local_stat(struct fs *fs, struct fs_node *node, struct stat *st, double *timeout);
/* Attributes of an entry node (local, view or stored). */
int fs_entry_stat(struct fs *fs, struct fs_node *node, struct stat *st, double *timeout);

/* ---- fs_attrs.c: stored attributes -------------------------------------- */

/* Store mode, owner and times (to_set: FUSE_SET_ATTR_*, times left out
 * keep cur's) set on a key, a stored entry or a namespace, in one batch;
 * a mode or owner change moves ctime, keeping cur's mtime and atime (cur
 * NULL: no times unless set, for a node's first store). 0, an errno, or
 * 1: the node has no record (the caller keeps them in the node). */
int fs_attrs_store(struct fs *fs, struct fs_node *node, const struct stat *attr, int to_set,
		   const struct stat *cur);
/* A local entry was stored: store the attributes and user.* xattrs set
 * on it meanwhile (locked: the caller holds the node's lock). */
void fs_node_attrs_flush(struct fs *fs, struct fs_node *node, bool locked);
/* The commit that first stores a local entry or key: add the mode and
 * owner its node holds (its creation's, or set since) to the change ch
 * staged for that commit (KS_ATTR_CREATE), so they go in its batch. After
 * the commit succeeded, fs_node_attrs_stored() forgets them in the node.
 * Node lock held. */
void fs_node_attrs_stage(struct fs_node *node, struct ks_attr_change *ch);
void fs_node_attrs_stored(struct fs_node *node);
/* The user.* xattrs (not user.kvfs.*) of a key or a stored entry
 * (ks_xattr_*), or those a local entry holds until it is stored: get one
 * (-ENODATA), list the names (appended, NUL-ended; none for the root, a
 * namespace or a view), set one (value) or remove it (NULL; XATTR_CREATE,
 * XATTR_REPLACE in flags). */
#define FS_XATTR_USER "user."
#define FS_XATTR_KVFS "user.kvfs."
int fs_user_xattr_get(struct fs *fs, struct fs_node *node, const char *name, struct buf *val);
int fs_user_xattr_list(struct fs *fs, struct fs_node *node, struct buf *list);
int fs_user_xattr_set(struct fs *fs, struct fs_node *node, const char *name, const char *value,
		      size_t size, int flags);

/* ---- fs_follow.c: a follower's catch-ups (-o follow) ---------------------- */

/*
 * Start the catch-up thread (a follower with a session; after the
 * notifier) and stop it. It catches up every follow_ms, and after a
 * catch-up that changed something (its own or fs_follow_fresh's) tells
 * the kernel to drop what it keeps of the nodes it holds: attributes and
 * pages of each, and the name of each that is gone or changed type. It
 * holds no lock while it asks the store or queues the invalidations,
 * which the notifier thread sends.
 */
void fs_follow_start(struct fs *fs);
void fs_follow_stop(struct fs *fs);
/* Before a lookup, listing, getattr or open: catch up now if the last
 * catch-up is older than follow_ms (waits for one already running).
 * Nothing on a mount that does not follow. Any lock may be held but a
 * node's: it reads the store and signals the thread, nothing more. */
void fs_follow_fresh(struct fs *fs);
/* How many catch-ups have changed something (0: none, or no follower):
 * a node's value loaded under an older count may be stale. */
uint64_t fs_follow_gen(struct fs *fs);

/* ---- fs_file.c: open files (handlers open ... release) --------------------- */

/* Check that node is a file kvfs can open (for writing: `write`) and
 * note its type in the node; *view = a read-only view. 0 or errno. */
int fs_file_check(struct fs *fs, struct fs_node *node, bool write, bool *view);
/* Count an open of h's node and apply O_TRUNC; set the file's caching.
 * fresh: the open created the file. */
void fs_file_open_setup(struct fs_handle *h, struct fuse_file_info *fi, bool view, bool fresh);
/* A new handle of an open file (no node yet), linked in fs.handles; NULL
 * on ENOMEM. fs_file_close commits, unlinks and frees it. */
struct fs_handle *fs_handle_new(struct fs *fs);
void fs_file_close(struct fs *fs, struct fs_handle *h);
/* At exit, after fs_file_commit_all: free the handles the kernel never
 * released (their buffers were committed or logged already). */
void fs_file_release_all(struct fs *fs);
/* Truncate a file node (setattr): through its buffer when it is open,
 * committed now unless an open file will commit it (h: the setattr came
 * through that open file; NULL: by name). */
int fs_node_truncate(struct fs *fs, struct fs_node *node, uint64_t size, struct fs_handle *h);
/* Commit the node's buffer now if it is dirty (before its key changes
 * type). 0 or the commit's error. */
int fs_file_commit(struct fs *fs, struct fs_node *node);
/* At exit (the session ended, no request runs): store what files still
 * open hold, as their last close would (a JSON file's appends too), and
 * log each by name with what became of its data. */
void fs_file_commit_all(struct fs *fs);
/* Log that scratch file node (FS_LOCAL_SCRATCH), which no rename stored,
 * is dropped now (when: "at rm", "at exit"), with its tool and size.
 * Node lock held. */
void fs_file_scratch_discarded_locked(struct fs *fs, struct fs_node *node, const char *when);
/* Store the node's buffer now as at its last close (a new entry not yet
 * stored is stored even if empty). Node lock held. 0 or the commit's
 * error. */
int fs_file_store_locked(struct fs *fs, struct fs_node *node);
/* A new key or entry its node still holds (FS_LOCAL_PENDING), needed in
 * the database by an operation (a rename, an xattr): stored now as its
 * buffer holds it. 0 (also when nothing was pending) or the commit's
 * error. */
int fs_file_store_pending(struct fs *fs, struct fs_node *node);
/* Make the node's buffer the empty file (a create, O_TRUNC, truncate to
 * 0): loaded, nothing borrowed. Node lock held. */
void fs_node_set_empty(struct fs_node *node);
/* Node's key or entry is about to be removed or replaced: if it is open,
 * or the kernel got it a moment ago (an open of it may be on its way),
 * its value is read into its buffer now, so the open files keep reading
 * it (POSIX: an unlinked file lives on while open). 0 or the load's errno
 * (then nothing may be removed). */
int fs_file_keep(struct fs *fs, struct fs_node *node);
/* An open of `node` (open or create) with these open flags, node lock
 * held: 0 to go on, or -ESTALE. A node removed or replaced since the
 * kernel looked it up opens as what was there: its kept value
 * (fs_file_keep), or an empty buffer for a write-only open, whose writes
 * have no home; else -ESTALE, and the kernel looks the name up again.
 * *gone: it is such a node. */
int fs_file_open_gone_locked(struct fs *fs, struct fs_node *node, int flags, bool *gone);
/* How long "a moment ago" is (ms): see fs_file_keep and
 * fs_file_open_setup. */
#define FS_RECENT_MS 1000
/* An action changed key or entry `name` (stored bytes) of directory
 * node `dir` without going through its node: that node, if any, drops a
 * buffer no open file has changed, and the kernel forgets the name (a
 * miss it may have cached) and the node's pages and attributes. No lock
 * held. */
void fs_action_changed(struct fs *fs, struct fs_node *dir, const char *name, size_t n);
/* The node's key changed type (string <-> bitmap) under it. */
void fs_file_set_type(struct fs_node *node, enum kv_type t);
void fs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi);
void fs_op_write(fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off,
		 struct fuse_file_info *fi);
void fs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);
void fs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);
void fs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi);

/* ---- fs_dir.c: listings (handlers opendir ... releasedir) ----------------- */

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
/* Add "." or ".." (inode ino, next offset next) to a listing buffer of rem
 * bytes at p, plain or plus; no lookup is taken for them. The bytes used
 * (more than rem: it did not fit). */
size_t fs_dir_add_dot(fuse_req_t req, char *p, size_t rem, const char *name, fuse_ino_t ino,
		      off_t next, bool plus);
void fs_op_fsyncdir(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi);

/* ---- fs_child.c: the child a tree operation names ------------------------- */

/* Decode a file name into stored bytes. A long name (PREFIX%~HASH) is
 * resolved to the stored name it stands for among the children of
 * `parent`; -ENOENT if none matches. */
int fs_decode_name(struct fs *fs, struct fs_node *parent, const char *name, struct buf *out);
/* Common start of create/mkdir/unlink/rmdir/mknod/rename: resolve the
 * parent and the stored name, build the child's path, and refuse a
 * read-only mount. */
int fs_child_begin(struct fs *fs, fuse_ino_t parent_ino, const char *name, struct fs_node **parent,
		   struct buf *stored, struct fs_path *p);
/* fs_ctx_open for a change to an entry: a type not mapped yet is logged. */
int fs_entry_ctx(struct fs *fs, struct fs_node *dir, const struct fs_path *p, struct fs_inval *iv,
		 struct fs_ctx *c, const struct fs_shape **sh);
/* A new key of directory `parent` that its node still holds (created,
 * not flushed yet), referenced; NULL if there is none. Is there one?
 * Store it now, if there is (0 or the commit's error). */
struct fs_node *fs_local_key(struct fs *fs, struct fs_node *parent, const char *name, size_t n);
bool fs_has_local_key(struct fs *fs, struct fs_node *parent, const char *name, size_t n);
int fs_store_local_key(struct fs *fs, struct fs_node *parent, const char *name, size_t n);
/* The node of (parent, name), if any, keeps its value for its open files
 * (fs_file_keep). */
int fs_keep_open(struct fs *fs, struct fs_node *parent, const char *name, size_t n);
/* File key `name` of type t in directory `parent` was renamed to a temp
 * name (an editor's backup): remember it. The type a new file key `name`
 * in `parent` takes from such a backup, made within a minute (and forget
 * it), or KV_TYPE_NONE. */
void fs_backup_note(struct fs *fs, struct fs_node *parent, const char *name, size_t n,
		    enum kv_type t);
enum kv_type fs_backup_type(struct fs *fs, struct fs_node *parent, const char *name, size_t n);

/* ---- fs_jtree.c: a JSON document as a tree (KEY:tree; FS_JTREE nodes) ---- */

/* Does `name` end as a tree's name (KEY:tree)? No lookup. */
bool fs_jtree_is_name(const char *name, size_t n);
/* Is file name `name` in directory node `parent` (a namespace) the tree
 * of a JSON key? rmdir and rename of it are EBUSY: it is a view of its
 * key (remove or rename the key). */
bool fs_jtree_root_named(struct fs *fs, struct fs_node *parent, const char *name);
/* Lookup of key name k in namespace directory `parent`, which no key
 * has: if it is the tree of a JSON key, reply and return true. */
bool fs_jtree_lookup_root(fuse_req_t req, struct fs *fs, struct fs_node *parent,
			  const struct ks_key *k);
/* Attributes of FS_JTREE node `node` (timeout 0: never cached). */
int fs_jtree_stat(struct fs *fs, struct fs_node *node, struct stat *st);
/* The handlers for FS_JTREE nodes (node) or directories (parent); each
 * replies. fi->fh is 0 for every open file of the view; an open
 * directory's is fs_jtree.c's (its listing pass). */
void fs_jtree_lookup(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name);
void fs_jtree_setattr(fuse_req_t req, struct fs *fs, struct fs_node *node, struct stat *attr,
		      int to_set);
void fs_jtree_opendir(fuse_req_t req, struct fs *fs, struct fs_node *node,
		      struct fuse_file_info *fi);
void fs_jtree_releasedir(struct fs *fs, struct fs_node *node, struct fuse_file_info *fi);
void fs_jtree_readdir(fuse_req_t req, struct fs *fs, struct fs_node *node, size_t size, off_t off,
		      bool plus, struct fuse_file_info *fi);
void fs_jtree_open(fuse_req_t req, struct fs *fs, struct fs_node *node, struct fuse_file_info *fi);
void fs_jtree_read(fuse_req_t req, struct fs *fs, struct fs_node *node, size_t size, off_t off);
void fs_jtree_write(fuse_req_t req, struct fs *fs, struct fs_node *node, const char *data,
		    size_t size, off_t off, struct fuse_file_info *fi);
void fs_jtree_flush(fuse_req_t req, struct fs *fs, struct fs_node *node, bool sync);
/* At exit (fs_file_commit_all): store what an open file of the view
 * still holds unstored, as its last close would, and log it by name.
 * Node lock held. */
void fs_jtree_commit_at_exit_locked(struct fs *fs, struct fs_node *node);
void fs_jtree_release(fuse_req_t req, struct fs *fs, struct fs_node *node,
		      struct fuse_file_info *fi);
/* create (open true: with fi) and mknod (open false). */
void fs_jtree_create(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name,
		     struct fuse_file_info *fi, bool open);
void fs_jtree_mkdir(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name);
/* unlink (dir false) and rmdir (dir true). */
void fs_jtree_remove(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name,
		     bool dir);
/* A rename where either directory is a tree's: EXDEV unless both are
 * in the same document. */
void fs_jtree_rename(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name,
		     struct fs_node *newparent, const char *newname, unsigned int flags);
void fs_jtree_getxattr(fuse_req_t req, struct fs *fs, struct fs_node *node, const char *name,
		       size_t size);
void fs_jtree_listxattr(fuse_req_t req, struct fs *fs, struct fs_node *node, size_t size);
void fs_jtree_setxattr(fuse_req_t req, struct fs *fs, struct fs_node *node, const char *name,
		       const char *value, size_t size, int flags);
void fs_jtree_removexattr(fuse_req_t req, struct fs *fs, struct fs_node *node, const char *name);

/* ---- fs_rename.c ------------------------------------------------------------ */

void fs_op_rename(fuse_req_t req, fuse_ino_t parent_ino, const char *name, fuse_ino_t newparent_ino,
		  const char *newname, unsigned int flags);

/* ---- fs_xattr.c: extended attributes (handlers) --------------------------- */

void fs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		    size_t size, int flags);
void fs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size);
void fs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size);
void fs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name);

#endif
