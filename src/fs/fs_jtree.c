/*
 * fs_jtree: a JSON document as a tree of files and directories, the
 * unlisted name KEY:tree beside JSON key KEY (docs/mapping.md section 18,
 * "The document as a tree"). Objects are directories of their members,
 * arrays directories of positions padded to sort, scalars files of their
 * text and a newline (a string's raw bytes); user.kvfs.json.type names
 * each node's JSON type. Every change is one batch of t_json_tree's, in
 * the key's lock. Nothing of this view is cached by the kernel (timeouts
 * 0, direct I/O), so a change through the key, a path name or the tree
 * shows at once everywhere. Layer: fs; the FUSE handlers of FS_JTREE
 * nodes, called by fs.c, fs_dir.c, fs_file.c, fs_rename.c and fs_xattr.c.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <stdio.h> /* RENAME_NOREPLACE */
#include <stdlib.h>
#include <sys/xattr.h>

#include "types/t_json.h"
#include "types/t_json_tree.h"

#define JT_SUFFIX     ":tree"
#define JT_SUFFIX_LEN 5
#define JT_XATTR      "user.kvfs.json.type"

/*
 * Held from a node's name to its store: by a commit (jt_commit_locked),
 * from the path it resolves to its write, and by a removal or a move,
 * from its change to the unhashing of the array positions it moved, so
 * no commit stores by a position number that a removal has just given
 * to another element. Taken after node locks, before the key's lock and
 * the inode table's; nothing else is locked under it.
 */
static pthread_mutex_t jt_renumber_lock = PTHREAD_MUTEX_INITIALIZER;

/* Where a tree node is: caller-owned, jt_path_init/_release. */
struct jt_path {
	struct buf ns, raw;
	struct iovec *v; /* v[0]: the root's name KEY:tree; then the steps */
	size_t n;
	struct ks_key k; /* KEY (borrows raw and ns) */
	bool unhashed;
};

static void jt_path_init(struct jt_path *p)
{
	memset(p, 0, sizeof(*p));
	buf_init(&p->ns);
	buf_init(&p->raw);
}

static void jt_path_release(struct jt_path *p)
{
	buf_release(&p->ns);
	buf_release(&p->raw);
	free(p->v);
}

static const struct iovec *jt_steps(const struct jt_path *p)
{
	return p->v + 1;
}

static size_t jt_nsteps(const struct jt_path *p)
{
	return p->n - 1;
}

/* Fill p->v and p->k from p->raw (count names). */
static int jt_path_split(struct fs *fs, struct jt_path *p, size_t count)
{
	p->v = calloc(count ? count : 1, sizeof(*p->v));
	if (!p->v)
		return -ENOMEM;
	size_t at = 0;
	for (size_t i = 0; i < count; i++) {
		uint32_t len;
		memcpy(&len, p->raw.data + at, sizeof(len));
		at += sizeof(len);
		p->v[i].iov_base = p->raw.data + at;
		p->v[i].iov_len = len;
		at += len;
	}
	p->n = count;
	if (count == 0 || p->v[0].iov_len <= JT_SUFFIX_LEN)
		return -ENOENT;
	p->k = (struct ks_key){fs->ns ? fs->ns : p->ns.data,
			       fs->ns ? fs->nslen : p->ns.len,
			       p->v[0].iov_base,
			       p->v[0].iov_len - JT_SUFFIX_LEN,
			       NULL,
			       NULL};
	return 0;
}

/* The path of node, plus (child non-NULL) one more name. */
static int jt_path_get(struct fs *fs, struct fs_node *node, const char *child, size_t cn,
		       struct jt_path *p)
{
	size_t count;
	int rc = fs_itable_jtree_path(fs->it, node, &p->ns, &p->raw, &count, &p->unhashed);
	if (!rc && child) {
		uint32_t len = (uint32_t)cn;
		rc = buf_add(&p->raw, &len, sizeof(len));
		if (!rc)
			rc = buf_add(&p->raw, child, cn);
		count++;
	}
	if (!rc)
		rc = jt_path_split(fs, p, count);
	if (!rc && p->unhashed)
		rc = -ENOENT;
	return rc;
}

/* Is key name k (in a namespace) the tree of a JSON key holding a
 * document, and no key itself? */
static bool jt_is_root(struct fs *fs, const struct ks_key *k)
{
	struct ks_info info;
	if (k->klen <= JT_SUFFIX_LEN ||
	    memcmp(k->key + k->klen - JT_SUFFIX_LEN, JT_SUFFIX, JT_SUFFIX_LEN) != 0)
		return false;
	if (ks_lookup(fs->ks, k, &info) != -ENOENT)
		return false; /* a real key of that name wins */
	struct ks_key jk = *k;
	jk.klen -= JT_SUFFIX_LEN;
	return ks_lookup(fs->ks, &jk, &info) == 0 && info.type == KV_TYPE_JSON && !info.empty;
}

bool fs_jtree_is_name(const char *name, size_t n)
{
	return n > JT_SUFFIX_LEN && memcmp(name + n - JT_SUFFIX_LEN, JT_SUFFIX, JT_SUFFIX_LEN) == 0;
}

bool fs_jtree_root_named(struct fs *fs, struct fs_node *parent, const char *name)
{
	struct buf stored = BUF_INIT;
	struct fs_path p;
	struct ks_key k;
	uint64_t hash;
	bool is = false;
	if (!parent || fs_child_kind(fs, parent) != FS_KEY || parent->kind == FS_KEY ||
	    parent->kind == FS_JTREE)
		return false;
	fs_path_init(&p);
	if (names_decode(name, &stored, &hash) == 0 && fs_jtree_is_name(stored.data, stored.len) &&
	    fs_child_path(fs, parent, stored.data, stored.len, &p) == 0) {
		fs_path_key(fs, &p, &k);
		is = jt_is_root(fs, &k);
	}
	fs_path_release(&p);
	buf_release(&stored);
	return is;
}

/* Attributes of a node of this view: the key's owner, mode and times. */
static void jt_fill(struct fs *fs, const struct ks_key *k, uint64_t version, bool dir,
		    uint64_t size, struct stat *st)
{
	double t;
	fs_stat_fill(fs, dir ? S_IFDIR | 0755 : S_IFREG | 0644, dir ? 0 : size, version, 0, st, &t);
	fs_stat_attrs(fs, NULL, k, version, NULL, 0, st);
	mode_t perm = st->st_mode & 07777;
	if (dir)
		perm |= (perm & 0444) >> 2; /* readable: searchable */
	st->st_mode = (dir ? S_IFDIR : S_IFREG) | perm;
}

/* A scratch file the node holds (sed -i's temp, vim's swap). */
static bool jt_is_local(struct fs *fs, struct fs_node *node)
{
	return fs_itable_local(fs->it, node) != FS_LOCAL_NONE;
}

/*
 * Is a new name of a tree directory a tool's scratch file, kept in
 * the daemon until a rename stores it? The scratch names of every shape
 * but those that may well be a document's own: digits (an array's new
 * element, vim's probe 4913 in an object is made and removed) and
 * patch's NAME.orig and NAME.rej (left behind: stored).
 */
static bool jt_scratch_name(const char *name, size_t n)
{
	bool digits = n > 0;
	for (size_t i = 0; i < n && digits; i++)
		digits = name[i] >= '0' && name[i] <= '9';
	if (digits)
		return false;
	if ((n > 5 && memcmp(name + n - 5, ".orig", 5) == 0) ||
	    (n > 4 && memcmp(name + n - 4, ".rej", 4) == 0))
		return false;
	return fs_is_scratch_name(name, n);
}

/* Attributes of tree node p. */
static int jt_stat_path(struct fs *fs, const struct jt_path *p, struct stat *st,
			struct json_tree_node *jn)
{
	struct ks_info info;
	int rc = ks_lookup(fs->ks, &p->k, &info);
	if (!rc && info.type != KV_TYPE_JSON)
		rc = -ENOENT;
	if (!rc && jt_nsteps(p) == 0) {
		/* The root, looked up on every path through the tree: its type
		 * by a scan of the stored text, without parsing the document
		 * (a directory's size is 0 whatever it holds). */
		const char *type;
		rc = json_type(fs->ks, &p->k, "$", 1, &type);
		if (!rc) {
			jn->type = type;
			jn->dir = strcmp(type, "object") == 0 || strcmp(type, "array") == 0;
			jn->size = 0;
		}
		if (!rc && !jn->dir)
			rc = json_tree_stat(fs->ks, &p->k, NULL, 0, jn); /* a scalar's size */
	} else if (!rc) {
		rc = json_tree_stat(fs->ks, &p->k, jt_steps(p), jt_nsteps(p), jn);
	}
	if (rc == -ENOTDIR)
		rc = -ENOENT;
	if (!rc)
		jt_fill(fs, &p->k, info.version, jn->dir, jn->size, st);
	return rc;
}

int fs_jtree_stat(struct fs *fs, struct fs_node *node, struct stat *st)
{
	struct jt_path p;
	struct json_tree_node jn;
	double t;
	int rc = 0;
	if (jt_is_local(fs, node)) {
		fs_local_stat(fs, node, st, &t);
		st->st_ino = node->ino;
		return 0;
	}
	jt_path_init(&p);
	rc = jt_path_get(fs, node, NULL, 0, &p);
	if (!rc)
		rc = jt_stat_path(fs, &p, st, &jn);
	jt_path_release(&p);
	/* An open file shows what its buffer holds (written, not closed). */
	pthread_mutex_lock(&node->lock);
	if (node->loaded && node->opens) {
		if (rc == -ENOENT) {
			fs_local_stat(fs, node, st, &t);
			rc = 0;
		}
		st->st_size = (off_t)node->data.len;
	}
	pthread_mutex_unlock(&node->lock);
	st->st_ino = node->ino;
	return rc;
}

/* ---- removals while an array is listed ------------------------------------ */

/*
 * rm -r lists a directory, then removes the names it read; in an array
 * every removal moves the later elements down, so the names read would
 * soon name other elements or none. As for a list key (fs_list.c), while
 * an array's directory is open, and a moment after its last close, names
 * keep the numbering of when it was opened: dir->gaps holds the removed
 * positions (ascending, in that numbering), and a name is translated to
 * the element's position now. Under the directory node's lock.
 */
#define JT_GAPS_LINGER_MS 1000

static bool jt_frozen(const struct fs_node *dir)
{
	return dir->dir_opens > 0 || now_ms() < dir->gaps_until;
}

/* The digits of a position name, as a number. */
static bool jt_number(const char *s, size_t n, uint64_t *v)
{
	if (n == 0 || n > 19)
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return true;
}

/*
 * Translate `stored` (n bytes) in directory node dir (path p, dir lock
 * held) through its gaps: 0 with out = the name now (*old: the position
 * in the listing's numbering, *frozen: a numbering is kept), -ENOENT if
 * that element was removed. Other names are left as they are.
 */
static int jt_gap_name_locked(struct fs *fs, struct fs_node *dir, const struct jt_path *p,
			      const char *stored, size_t n, struct buf *out, uint64_t *old,
			      bool *frozen)
{
	uint64_t len, digest;
	*frozen = false;
	if (!jt_frozen(dir))
		dir->gaps.n = 0; /* settled: the numbering is today's */
	if (!jt_frozen(dir) || !jt_number(stored, n, old) ||
	    json_tree_array_digest(fs->ks, &p->k, jt_steps(p), jt_nsteps(p), &len, &digest))
		return buf_set(out, stored, n);
	if (dir->gaps.n && digest != dir->gaps_digest) {
		LOG_INFO("'%s' of a JSON tree changed from outside the tree: names number its "
			 "elements as they are now",
			 dir->name);
		dir->gaps.n = 0;
	}
	*frozen = true;
	uint64_t now;
	int rc = fs_gaps_pos(dir, *old, &now);
	if (rc || now == *old)
		return rc ? rc : buf_set(out, stored, n);
	char name[24];
	size_t nl = json_tree_index_name(now, len, name);
	return buf_set(out, name, nl);
}

/* The tree changed array dir (its lock held): with gaps, its digest now
 * (a change by the tree keeps its numbering). */
static void jt_gaps_rebase_locked(struct fs *fs, struct fs_node *dir)
{
	struct jt_path p;
	uint64_t len;
	if (!dir->gaps.n)
		return;
	jt_path_init(&p);
	if (jt_path_get(fs, dir, NULL, 0, &p) == 0)
		json_tree_array_digest(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), &len,
				       &dir->gaps_digest);
	jt_path_release(&p);
}

/* The same, taking dir's lock. A caller holding a child's lock (a
 * commit) only tries it: a rename holding both the child and dir (mv
 * X/c X) must not wait on it; then a later check drops the numbering. */
static void jt_dir_changed(struct fs *fs, struct fs_node *dir, bool child_held)
{
	if (!dir || dir->kind != FS_JTREE)
		return;
	if (child_held) {
		if (pthread_mutex_trylock(&dir->lock) != 0)
			return;
	} else {
		pthread_mutex_lock(&dir->lock);
	}
	jt_gaps_rebase_locked(fs, dir);
	pthread_mutex_unlock(&dir->lock);
}

/* Position old (listing numbering) of dir was removed. Lock held. */
static int jt_gap_add_locked(struct fs_node *dir, uint64_t old)
{
	int rc = fs_gaps_add(dir, old);
	if (!rc && dir->dir_opens == 0)
		dir->gaps_until = now_ms() + JT_GAPS_LINGER_MS;
	return rc;
}

/* ---- lookup ------------------------------------------------------------ */

struct long_find {
	uint64_t hash;
	struct buf *out;
	bool found;
};

static int long_find_cb(void *arg, uint64_t number, const char *name, size_t nlen,
			const struct json_tree_node *node)
{
	(void)number;
	(void)node;
	struct long_find *lf = arg;
	if (!names_long_matches(name, nlen, lf->hash))
		return 0;
	lf->found = true;
	return buf_set(lf->out, name, nlen) ? -ENOMEM : 1;
}

/* The stored name file name `name` means in tree directory `parent` (a
 * long name resolved among its children). */
static int jt_decode(struct fs *fs, struct fs_node *parent, const char *name, struct buf *out)
{
	uint64_t hash;
	int rc = names_decode(name, out, &hash);
	if (rc != NAMES_DECODED_LONG)
		return rc;
	struct jt_path p;
	struct long_find lf = {hash, out, false};
	jt_path_init(&p);
	rc = jt_path_get(fs, parent, NULL, 0, &p);
	if (!rc)
		rc =
		    json_tree_list(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), 0, long_find_cb, &lf);
	jt_path_release(&p);
	return rc ? rc : lf.found ? 0 : -ENOENT;
}

static void jt_reply_entry(fuse_req_t req, struct fs *fs, struct fs_node *node,
			   const struct stat *st)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.ino = node->ino;
	e.attr = *st;
	e.attr.st_ino = node->ino;
	atomic_store(&node->kmode, (unsigned)st->st_mode & S_IFMT);
	pthread_mutex_lock(&node->lock);
	node->used_ms = now_ms();
	pthread_mutex_unlock(&node->lock);
	if (fuse_reply_entry(req, &e))
		fs_itable_forget(fs->it, node->ino, 1);
}

static void jt_reply_miss(fuse_req_t req)
{
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e)); /* a miss the kernel does not keep */
	fuse_reply_entry(req, &e);
}

bool fs_jtree_lookup_root(fuse_req_t req, struct fs *fs, struct fs_node *parent,
			  const struct ks_key *k)
{
	if (!jt_is_root(fs, k))
		return false;
	struct fs_node *node = fs_itable_lookup(fs->it, parent, FS_JTREE, k->key, k->klen);
	struct stat st;
	if (!node) {
		fuse_reply_err(req, ENOMEM);
		return true;
	}
	int rc = fs_jtree_stat(fs, node, &st);
	if (rc) {
		fs_itable_forget(fs->it, node->ino, 1);
		if (rc == -ENOENT)
			jt_reply_miss(req);
		else
			fuse_reply_err(req, fs_errno(rc));
		return true;
	}
	jt_reply_entry(req, fs, node, &st);
	return true;
}

/* Name `stored` of directory parent as its listing's numbering means it
 * (replaced in place; *old its number in that numbering, *frozen: one is
 * kept). 0 or -ENOENT (removed since the listing). */
static int jt_translate(struct fs *fs, struct fs_node *parent, struct buf *stored, uint64_t *old,
			bool *frozen)
{
	struct jt_path pp;
	struct buf now = BUF_INIT;
	*old = 0;
	*frozen = false;
	jt_path_init(&pp);
	pthread_mutex_lock(&parent->lock);
	int rc = jt_frozen(parent) ? jt_path_get(fs, parent, NULL, 0, &pp) : -EAGAIN;
	if (!rc)
		rc = jt_gap_name_locked(fs, parent, &pp, stored->data, stored->len, &now, old,
					frozen);
	pthread_mutex_unlock(&parent->lock);
	if (!rc)
		rc = buf_set(stored, now.data, now.len);
	if (rc == -EAGAIN)
		rc = 0; /* no numbering kept: the name as it is */
	buf_release(&now);
	jt_path_release(&pp);
	return rc;
}

void fs_jtree_lookup(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name)
{
	struct buf stored = BUF_INIT;
	struct jt_path p;
	struct json_tree_node jn;
	struct stat st;
	jt_path_init(&p);
	int rc = jt_is_local(fs, parent) ? -ENOTDIR : jt_decode(fs, parent, name, &stored);
	struct fs_node *local =
	    rc ? NULL : fs_itable_find_local(fs->it, parent, stored.data, stored.len);
	if (local) {
		double t;
		fs_local_stat(fs, local, &st, &t);
		fs_itable_unref(fs->it, local);
	} else {
		uint64_t old;
		bool frozen;
		if (!rc)
			rc = jt_translate(fs, parent, &stored, &old, &frozen);
		if (!rc)
			rc = jt_path_get(fs, parent, stored.data, stored.len, &p);
		if (!rc)
			rc = jt_stat_path(fs, &p, &st, &jn);
	}
	if (!rc) {
		struct fs_node *node =
		    fs_itable_lookup(fs->it, parent, FS_JTREE, stored.data, stored.len);
		if (node)
			jt_reply_entry(req, fs, node, &st);
		else
			fuse_reply_err(req, ENOMEM);
	} else if (rc == -ENOENT) {
		jt_reply_miss(req);
	} else {
		fuse_reply_err(req, fs_errno(rc));
	}
	jt_path_release(&p);
	buf_release(&stored);
}

/* ---- attributes ---------------------------------------------------------- */

/* Store the buffer of open file node (names p) now. Node lock held. */
static int jt_commit_locked(struct fs *fs, struct fs_node *node)
{
	struct jt_path p;
	struct buf now = BUF_INIT;
	if (node->bad)
		return node->bad; /* refused as stale: so are its later writes */
	jt_path_init(&p);
	pthread_mutex_lock(&jt_renumber_lock);
	int rc = jt_path_get(fs, node, NULL, 0, &p);
	if (rc == -ENOENT && p.unhashed) {
		/* Removed, or an array position a removal or a move gave to
		 * another element: the written bytes have no node. */
		LOG_ERR("'%.*s' of a JSON tree was removed or renumbered while open: its write "
			"is not stored",
			(int)node->namelen, node->name);
		rc = -ESTALE;
	}
	if (!rc && jt_nsteps(&p) == 0) {
		LOG_ERR("'%.*s': a document that is one scalar is written through its key",
			(int)node->namelen, node->name);
		rc = -EACCES;
	}
	if (!rc && node->jt_has_was)
		rc = json_tree_write_if(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), node->data.data,
					node->data.len, node->jt_was.data, node->jt_was.len, &now);
	else if (!rc)
		rc = json_tree_write(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), node->data.data,
				     node->data.len, NULL, 0);
	pthread_mutex_unlock(&jt_renumber_lock);
	if (!rc && node->jt_has_was) {
		/* The next commit of these open files stores over this. */
		buf_release(&node->jt_was);
		node->jt_was = now;
		buf_init(&now);
	}
	if (!rc)
		jt_dir_changed(fs, node->parent, true);
	if (!rc)
		fs_seq_store_locked(fs, node);
	if (rc == -ESTALE) {
		/* Logged. Until the last close, this file stores nothing
		 * more: a reload would read whatever node the name means
		 * now. close and fsync say EIO. */
		rc = -EIO;
		node->bad = rc;
	}
	buf_release(&now);
	jt_path_release(&p);
	return rc;
}

/* The file text of node now, as the base of its open files' commits.
 * Lock held. */
static int jt_was_load_locked(struct fs *fs, struct fs_node *node)
{
	struct jt_path p;
	jt_path_init(&p);
	int rc = jt_path_get(fs, node, NULL, 0, &p);
	if (!rc)
		rc = json_tree_read(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), &node->jt_was);
	node->jt_has_was = rc == 0;
	jt_path_release(&p);
	return rc;
}

/* The file's value in node's buffer (open files share it). Lock held. */
static int jt_load_locked(struct fs *fs, struct fs_node *node)
{
	if (node->loaded)
		return 0;
	struct jt_path p;
	jt_path_init(&p);
	int rc = jt_path_get(fs, node, NULL, 0, &p);
	if (!rc)
		rc = json_tree_read(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), &node->data);
	if (!rc) {
		node->loaded = true;
		node->dirty = false;
		node->jt_has_was = buf_set(&node->jt_was, node->data.data, node->data.len) == 0;
		if (!node->jt_has_was)
			rc = -ENOMEM;
	}
	jt_path_release(&p);
	return rc;
}

void fs_jtree_setattr(fuse_req_t req, struct fs *fs, struct fs_node *node, struct stat *attr,
		      int to_set)
{
	struct stat st;
	int rc = 0;
	if ((to_set & FUSE_SET_ATTR_SIZE) && fs->opt.read_only)
		rc = -EROFS;
	else if (to_set & FUSE_SET_ATTR_SIZE) {
		/* truncate: through the buffer of an open file (stored at its
		 * close), else stored now. Mode, owner and times are the
		 * key's: set them on KEY (nothing else is stored). */
		pthread_mutex_lock(&node->lock);
		bool open = node->opens > 0;
		rc = jt_load_locked(fs, node);
		if (!rc && (uint64_t)attr->st_size > JSON_MAX)
			rc = -EFBIG;
		if (!rc)
			rc = buf_resize(&node->data, (size_t)attr->st_size);
		if (!rc) {
			node->dirty = true;
			if (!open && !jt_is_local(fs, node)) {
				rc = jt_commit_locked(fs, node);
				buf_reset(&node->data);
				node->loaded = node->dirty = false;
			}
		}
		pthread_mutex_unlock(&node->lock);
	}
	if (!rc)
		rc = fs_jtree_stat(fs, node, &st);
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		fuse_reply_attr(req, &st, 0);
}

/* ---- listing ---------------------------------------------------------- */

struct jt_list {
	fuse_req_t req;
	struct fs *fs;
	struct fs_node *dir;
	const struct ks_key *k;
	uint64_t version;
	bool plus;
	char *out;
	size_t size, used;
	struct buf fname;
	/* An array whose listing's numbering is kept: the removed positions
	 * (ascending) and its length in that numbering. */
	const uint64_t *gaps;
	size_t ngaps;
	uint64_t oldlen;
};

static int jt_list_cb(void *arg, uint64_t number, const char *name, size_t nlen,
		      const struct json_tree_node *jn)
{
	struct jt_list *l = arg;
	char oname[24];
	const char *shown = name;
	size_t shown_len = nlen;
	if (l->ngaps) {
		/* Named in the kept numbering, as lookups read names. */
		uint64_t old = number;
		for (size_t i = 0; i < l->ngaps; i++)
			if (l->gaps[i] <= old)
				old++;
		shown_len = json_tree_index_name(old, l->oldlen, oname);
		shown = oname;
	}
	int rc = names_encode(shown, shown_len, &l->fname);
	if (rc)
		return rc;
	off_t next = (off_t)number + 3;
	size_t need = l->plus ? fuse_add_direntry_plus(l->req, NULL, 0, l->fname.data, NULL, 0)
			      : fuse_add_direntry(l->req, NULL, 0, l->fname.data, NULL, 0);
	if (need > l->size - l->used)
		return 1;
	if (l->plus) {
		struct fuse_entry_param e;
		memset(&e, 0, sizeof(e));
		struct fs_node *child = fs_itable_lookup(l->fs->it, l->dir, FS_JTREE, name, nlen);
		if (!child)
			return -ENOMEM;
		jt_fill(l->fs, l->k, l->version, jn->dir, jn->size, &e.attr);
		e.ino = child->ino;
		e.attr.st_ino = child->ino;
		atomic_store(&child->kmode, (unsigned)e.attr.st_mode & S_IFMT);
		l->used += fuse_add_direntry_plus(l->req, l->out + l->used, l->size - l->used,
						  l->fname.data, &e, next);
	} else {
		struct stat st = {.st_mode = jn->dir ? S_IFDIR : S_IFREG};
		st.st_ino = fs_itable_peek_ino(l->fs->it, l->dir, name, nlen);
		l->used += fuse_add_direntry(l->req, l->out + l->used, l->size - l->used,
					     l->fname.data, &st, next);
	}
	return 0;
}

/* An open directory of the view: the document as its listing pass read
 * it (read again at offset 0), so each readdir call resumes in it. */
struct jt_dir {
	pthread_mutex_t lock;
	struct json_tree_iter *it;
	uint64_t version;
	uint64_t *gaps; /* the kept numbering's gaps at the pass's start */
	size_t ngaps;
	uint64_t oldlen;
};

/* One more open of node (its lock held). */
static void jt_opened_locked(struct fs_node *node, bool write)
{
	node->opens++;
	if (write)
		node->writers++;
	node->used_ms = now_ms();
}

/* The gaps of array node (path p) for a listing pass, into d. */
static int jt_dir_gaps(struct fs *fs, struct fs_node *node, const struct jt_path *p,
		       struct jt_dir *d)
{
	uint64_t len, digest;
	int rc = 0;
	free(d->gaps);
	d->gaps = NULL;
	d->ngaps = 0;
	pthread_mutex_lock(&node->lock);
	if (jt_frozen(node) && node->gaps.n &&
	    json_tree_array_digest(fs->ks, &p->k, jt_steps(p), jt_nsteps(p), &len, &digest) == 0) {
		if (digest != node->gaps_digest) {
			node->gaps.n = 0; /* changed from outside the tree */
		} else {
			d->gaps = malloc(node->gaps.n * sizeof(*d->gaps));
			if (d->gaps) {
				memcpy(d->gaps, node->gaps.v, node->gaps.n * sizeof(*d->gaps));
				d->ngaps = node->gaps.n;
				d->oldlen = len + node->gaps.n;
			} else {
				rc = -ENOMEM;
			}
		}
	}
	pthread_mutex_unlock(&node->lock);
	return rc;
}

void fs_jtree_opendir(fuse_req_t req, struct fs *fs, struct fs_node *node,
		      struct fuse_file_info *fi)
{
	struct stat st;
	int rc = jt_is_local(fs, node) ? -ENOTDIR : fs_jtree_stat(fs, node, &st);
	if (!rc && !S_ISDIR(st.st_mode))
		rc = -ENOTDIR;
	fi->fh = 0;
	if (rc) {
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	struct jt_dir *d = calloc(1, sizeof(*d));
	if (!d) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	pthread_mutex_init(&d->lock, NULL);
	fi->fh = (uintptr_t)d;
	pthread_mutex_lock(&node->lock);
	if (node->dir_opens++ == 0 && now_ms() >= node->gaps_until) {
		/* A new listing numbers the array afresh, but not one that
		 * comes while another's numbering is still in use (a glob
		 * rm): it lists that numbering. */
		node->gaps.n = 0;
		node->gaps_until = 0;
	}
	pthread_mutex_unlock(&node->lock);
	if (fuse_reply_open(req, fi))
		fs_jtree_releasedir(fs, node, fi);
}

void fs_jtree_releasedir(struct fs *fs, struct fs_node *node, struct fuse_file_info *fi)
{
	(void)fs;
	struct jt_dir *d = (struct jt_dir *)(uintptr_t)fi->fh;
	if (d) {
		json_tree_iter_free(d->it);
		free(d->gaps);
		pthread_mutex_destroy(&d->lock);
		free(d);
		fi->fh = 0;
	}
	pthread_mutex_lock(&node->lock);
	/* A shell glob (rm arr/[*]) lists, closes, then removes. */
	if (node->dir_opens && --node->dir_opens == 0)
		node->gaps_until = now_ms() + JT_GAPS_LINGER_MS;
	pthread_mutex_unlock(&node->lock);
}

/* Offsets: 1 after ".", 2 after "..", child number i: i + 3. The
 * document is read once per call and listed from the offset's child,
 * so a listing of a big array is not built whole per call. */
void fs_jtree_readdir(fuse_req_t req, struct fs *fs, struct fs_node *node, size_t size, off_t off,
		      bool plus, struct fuse_file_info *fi)
{
	struct jt_dir *d = (struct jt_dir *)(uintptr_t)fi->fh;
	struct jt_path p;
	struct ks_info info;
	struct jt_list l = {.req = req, .fs = fs, .dir = node, .plus = plus, .size = size};
	int rc;
	buf_init(&l.fname);
	jt_path_init(&p);
	l.out = malloc(size);
	if (!l.out) {
		fuse_reply_err(req, ENOMEM);
		return;
	}
	rc = jt_path_get(fs, node, NULL, 0, &p);
	if (rc)
		goto out;
	pthread_mutex_lock(&d->lock);
	if (off == 0 || !d->it) {
		/* A listing pass starts: the document as it is now. */
		json_tree_iter_free(d->it);
		d->it = NULL;
		rc = ks_lookup(fs->ks, &p.k, &info);
		if (!rc)
			rc = json_tree_iter_new(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), &d->it);
		if (!rc)
			rc = jt_dir_gaps(fs, node, &p, d);
		d->version = rc ? 0 : info.version;
	}
	l.k = &p.k;
	l.gaps = d->gaps;
	l.ngaps = d->ngaps;
	l.oldlen = d->oldlen;
	l.version = d->version;
	if (rc)
		goto unlock;
	if (off < 1) {
		size_t sz = fs_dir_add_dot(req, l.out, size, ".", node->ino, 1, plus);
		if (sz > size)
			goto unlock;
		l.used += sz;
		off = 1;
	}
	if (off < 2) {
		uint64_t pino = node->parent ? node->parent->ino : FS_ROOT_INO;
		size_t sz = fs_dir_add_dot(req, l.out + l.used, size - l.used, "..", pino, 2, plus);
		if (sz > size - l.used)
			goto unlock;
		l.used += sz;
		off = 2;
	}
	rc = json_tree_iter_list(d->it, (uint64_t)off - 2, jt_list_cb, &l);
	if (rc < 0 && l.used > 0) {
		LOG_ERR("listing stopped early: %s", strerror(-rc));
		rc = 0;
	}
unlock:
	pthread_mutex_unlock(&d->lock);
out:
	if (rc < 0)
		fuse_reply_err(req, fs_errno(rc));
	else
		fuse_reply_buf(req, l.out, l.used);
	free(l.out);
	buf_release(&l.fname);
	jt_path_release(&p);
}

/* ---- open files ---------------------------------------------------------- */

void fs_jtree_open(fuse_req_t req, struct fs *fs, struct fs_node *node, struct fuse_file_info *fi)
{
	bool write = (fi->flags & O_ACCMODE) != O_RDONLY;
	int rc = 0;
	if (write && fs->opt.read_only) {
		fuse_reply_err(req, EROFS);
		return;
	}
	pthread_mutex_lock(&node->lock);
	if ((fi->flags & O_TRUNC) && !jt_is_local(fs, node) && !node->dirty && !node->trunc_want)
		rc = jt_was_load_locked(fs, node); /* what the stores replace */
	if (rc) {
		/* not opened */
	} else if (fi->flags & O_TRUNC) {
		/* Emptied now; stored at a flush after a write or at the
		 * last close (a shell's early flush of its duplicate stores
		 * nothing). */
		fs_node_set_empty(node);
		node->trunc_want = true;
	} else if (!jt_is_local(fs, node) && !node->dirty && !node->trunc_want) {
		/* Read afresh unless an open file holds unstored writes: a
		 * change made through the key or a path name shows. */
		node->loaded = false;
		buf_reset(&node->data);
		rc = jt_load_locked(fs, node);
	}
	if (!rc)
		jt_opened_locked(node, write);
	pthread_mutex_unlock(&node->lock);
	if (rc) {
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	fi->fh = 0;
	fi->direct_io = 1; /* no page cache: the value changes under it */
	fi->keep_cache = 0;
	if (fuse_reply_open(req, fi)) {
		pthread_mutex_lock(&node->lock);
		node->opens--;
		if (write)
			node->writers--;
		pthread_mutex_unlock(&node->lock);
	}
}

void fs_jtree_read(fuse_req_t req, struct fs *fs, struct fs_node *node, size_t size, off_t off)
{
	pthread_mutex_lock(&node->lock);
	if (off == 0 && !jt_is_local(fs, node) && !node->dirty && !node->trunc_want)
		node->loaded = false; /* a read from the start sees the value now */
	int rc = jt_is_local(fs, node) ? 0 : jt_load_locked(fs, node);
	if (rc) {
		pthread_mutex_unlock(&node->lock);
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	size_t len = node->data.len, from = (uint64_t)off < len ? (size_t)off : len;
	size_t n = len - from < size ? len - from : size;
	fuse_reply_buf(req, node->data.data + from, n);
	pthread_mutex_unlock(&node->lock);
}

void fs_jtree_write(fuse_req_t req, struct fs *fs, struct fs_node *node, const char *data,
		    size_t size, off_t off, struct fuse_file_info *fi)
{
	pthread_mutex_lock(&node->lock);
	int rc = jt_is_local(fs, node) ? 0 : jt_load_locked(fs, node);
	if (!rc && (fi->flags & O_APPEND))
		off = (off_t)node->data.len;
	if (!rc && (uint64_t)off + size > JSON_MAX)
		rc = -EFBIG;
	if (!rc && (size_t)off + size > node->data.len)
		rc = buf_resize(&node->data, (size_t)off + size);
	if (!rc) {
		memcpy(node->data.data + off, data, size);
		node->dirty = true;
		node->loaded = true;
		clock_gettime(CLOCK_REALTIME, &node->changed);
	}
	pthread_mutex_unlock(&node->lock);
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		fuse_reply_write(req, size);
}

/* Store a written buffer (flush, fsync, the last close). Lock held. */
static int jt_flush_locked(struct fs *fs, struct fs_node *node, bool last)
{
	if (jt_is_local(fs, node))
		return 0; /* a scratch file: a rename stores it */
	if (node->bad) {
		node->dirty = node->trunc_want = false;
		return node->bad; /* refused as stale: every flush says so */
	}
	if (!node->dirty && !(last && node->trunc_want))
		return 0;
	int rc = jt_commit_locked(fs, node);
	/* Stored, or refused (logged): either way this buffer is done;
	 * a refused one is not tried again. */
	node->dirty = false;
	node->trunc_want = false;
	if (rc) {
		buf_reset(&node->data);
		node->loaded = false;
	}
	return rc;
}

void fs_jtree_commit_at_exit_locked(struct fs *fs, struct fs_node *node)
{
	size_t len = node->data.len;
	if (jt_is_local(fs, node)) {
		if (len)
			LOG_WARN(
			    "at exit: a scratch file '%s' of a JSON tree was never renamed: its "
			    "%zu bytes are dropped",
			    node->name, len);
		return;
	}
	if (!node->dirty && !node->trunc_want)
		return;
	int rc = jt_flush_locked(fs, node, true);
	if (rc)
		LOG_ERR("at exit: '%s' of a JSON tree was still open: its %zu bytes are lost: %s",
			node->name, len, strerror(-rc == KV_EWRONGTYPE ? EIO : -rc));
	else
		LOG_INFO("at exit: '%s' of a JSON tree was still open: its %zu bytes are stored",
			 node->name, len);
}

void fs_jtree_flush(fuse_req_t req, struct fs *fs, struct fs_node *node, bool sync)
{
	pthread_mutex_lock(&node->lock);
	int rc = jt_flush_locked(fs, node, false);
	pthread_mutex_unlock(&node->lock);
	if (!rc && sync)
		rc = ks_sync(fs->ks);
	fuse_reply_err(req, rc ? fs_errno(rc) : 0);
}

void fs_jtree_release(fuse_req_t req, struct fs *fs, struct fs_node *node,
		      struct fuse_file_info *fi)
{
	bool write = (fi->flags & O_ACCMODE) != O_RDONLY;
	pthread_mutex_lock(&node->lock);
	if (node->opens)
		node->opens--;
	if (write && node->writers)
		node->writers--;
	if (!node->opens) {
		jt_flush_locked(fs, node, true);
		node->bad = 0;
		if (!jt_is_local(fs, node)) {
			buf_reset(&node->data);
			node->loaded = false;
			buf_reset(&node->jt_was);
			node->jt_has_was = false;
		} else if (write && node->data.len) {
			const char *tool = fs_scratch_tool(node->name, node->namelen);
			LOG_WARN("'%s' of a JSON tree is a scratch name (%s): its %zu bytes stay "
				 "in memory until a rename stores them, and are dropped at unmount",
				 node->name, tool ? tool : "a temp file", node->data.len);
		}
	}
	pthread_mutex_unlock(&node->lock);
	fuse_reply_err(req, 0);
}

/* ---- creating and removing -------------------------------------------- */

/* The parent and stored name of a change: a tree directory of this
 * mount that may be changed. */
static int jt_change_begin(struct fs *fs, struct fs_node *parent, const char *name,
			   struct buf *stored, struct jt_path *p)
{
	if (fs->opt.read_only)
		return -EROFS;
	if (jt_is_local(fs, parent))
		return -ENOTDIR;
	uint64_t hash;
	int rc = names_decode(name, stored, &hash);
	if (rc == NAMES_DECODED_LONG)
		rc = jt_decode(fs, parent, name, stored);
	if (!rc)
		rc = jt_path_get(fs, parent, stored->data, stored->len, p);
	return rc;
}

/*
 * A change's name `stored` (path p) in directory parent, as the kept
 * numbering of a listing means it (lookup and rm apply it too): p is
 * made again if the name changed. A name removed since the listing stays
 * as it is if `keep_removed` (a new name), else -ENOENT.
 */
static int jt_change_translate(struct fs *fs, struct fs_node *parent, struct buf *stored,
			       struct jt_path *p, bool keep_removed, uint64_t *old, bool *frozen)
{
	struct buf was = BUF_INIT;
	int rc = buf_set(&was, stored->data, stored->len);
	if (!rc)
		rc = jt_translate(fs, parent, stored, old, frozen);
	if (rc == -ENOENT && keep_removed) {
		rc = buf_set(stored, was.data, was.len);
		*frozen = false;
	}
	if (!rc && (stored->len != was.len || memcmp(stored->data, was.data, was.len) != 0)) {
		jt_path_release(p);
		jt_path_init(p);
		rc = jt_path_get(fs, parent, stored->data, stored->len, p);
	}
	buf_release(&was);
	return rc;
}

void fs_jtree_create(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name,
		     struct fuse_file_info *fi, bool open)
{
	struct buf stored = BUF_INIT;
	struct jt_path p;
	struct json_tree_node jn;
	struct stat st;
	bool scratch = false, frozen;
	uint64_t old;
	jt_path_init(&p);
	int rc = jt_change_begin(fs, parent, name, &stored, &p);
	if (!rc)
		rc = jt_change_translate(fs, parent, &stored, &p, true, &old, &frozen);
	if (!rc) {
		rc = json_tree_stat(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), &jn);
		if (!rc && jn.dir)
			rc = -EISDIR;
		else if (!rc && open && (fi->flags & O_EXCL))
			rc = -EEXIST;
		else if (rc == -ENOENT && jt_scratch_name(stored.data, stored.len))
			scratch = true, rc = 0; /* kept in the daemon until a rename */
		else if (rc == -ENOENT)
		/* A new member: an empty string, stored now. */
		{
			rc = json_tree_write(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), "", 0, NULL,
					     JSON_TREE_NEW);
			if (!rc)
				jt_dir_changed(fs, parent, false);
		}
	}
	struct fs_node *node = NULL;
	if (!rc) {
		node = fs_itable_lookup(fs->it, parent, FS_JTREE, stored.data, stored.len);
		if (!node)
			rc = -ENOMEM;
	}
	if (!rc && scratch) {
		pthread_mutex_lock(&node->lock);
		fs_node_set_empty(node);
		node->dirty = false;
		pthread_mutex_unlock(&node->lock);
		fs_itable_set_local(fs->it, node, FS_LOCAL_SCRATCH);
	}
	if (!rc)
		rc = fs_jtree_stat(fs, node, &st);
	if (rc) {
		if (node)
			fs_itable_forget(fs->it, node->ino, 1);
		fuse_reply_err(req, fs_errno(rc));
		goto out;
	}
	if (!open) {
		jt_reply_entry(req, fs, node, &st);
		goto out;
	}
	struct fuse_entry_param e;
	memset(&e, 0, sizeof(e));
	e.ino = node->ino;
	e.attr = st;
	e.attr.st_ino = node->ino;
	atomic_store(&node->kmode, (unsigned)st.st_mode & S_IFMT);
	bool write = (fi->flags & O_ACCMODE) != O_RDONLY;
	pthread_mutex_lock(&node->lock);
	if (!jt_is_local(fs, node)) {
		/* Existing or just made: its value, or empty for O_TRUNC. */
		if ((fi->flags & O_TRUNC) && !node->dirty && !node->trunc_want)
			rc = jt_was_load_locked(fs, node);
		if (rc) {
			/* not opened */
		} else if (fi->flags & O_TRUNC) {
			fs_node_set_empty(node);
			node->trunc_want = true;
		} else if (!node->dirty && !node->trunc_want) {
			node->loaded = false;
			rc = jt_load_locked(fs, node);
		}
	}
	if (!rc)
		jt_opened_locked(node, write);
	pthread_mutex_unlock(&node->lock);
	if (rc) {
		fs_itable_forget(fs->it, node->ino, 1);
		fuse_reply_err(req, fs_errno(rc));
		goto out;
	}
	fi->fh = 0;
	fi->direct_io = 1;
	if (fuse_reply_create(req, &e, fi)) {
		pthread_mutex_lock(&node->lock);
		node->opens--;
		if (write)
			node->writers--;
		pthread_mutex_unlock(&node->lock);
		fs_itable_forget(fs->it, node->ino, 1);
	}
out:
	jt_path_release(&p);
	buf_release(&stored);
}

void fs_jtree_mkdir(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name)
{
	struct buf stored = BUF_INIT;
	struct jt_path p;
	struct stat st;
	jt_path_init(&p);
	int rc = jt_change_begin(fs, parent, name, &stored, &p);
	if (!rc)
		rc = json_tree_mkdir(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), false);
	if (!rc)
		jt_dir_changed(fs, parent, false);
	struct fs_node *node = NULL;
	if (!rc) {
		node = fs_itable_lookup(fs->it, parent, FS_JTREE, stored.data, stored.len);
		rc = node ? fs_jtree_stat(fs, node, &st) : -ENOMEM;
	}
	if (rc) {
		if (node)
			fs_itable_forget(fs->it, node->ino, 1);
		fuse_reply_err(req, fs_errno(rc));
	} else {
		jt_reply_entry(req, fs, node, &st);
	}
	jt_path_release(&p);
	buf_release(&stored);
}

/* A removal or a move changed directory node dir: if it is an array,
 * the later elements moved down, so the nodes of its positions resolve
 * anew (the kernel caches none of them); an object's other members keep
 * their nodes (an open file of one still stores there). */
static void jt_renumbered(struct fs *fs, struct fs_node *dir)
{
	struct jt_path p;
	struct json_tree_node jn;
	jt_path_init(&p);
	if (jt_path_get(fs, dir, NULL, 0, &p) == 0 &&
	    json_tree_stat(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), &jn) == 0 &&
	    strcmp(jn.type, "array") == 0) {
		struct fs_inval iv;
		fs_inval_init(&iv);
		fs_itable_unhash_kids(fs->it, dir, NULL, NULL, &iv);
		fs_inval_release(&iv);
	}
	jt_path_release(&p);
}

/* A scratch file of parent by that name: forgotten. true if there was. */
static bool jt_forget_local(struct fs *fs, struct fs_node *parent, const char *name, size_t n)
{
	struct fs_node *local = fs_itable_find_local(fs->it, parent, name, n);
	if (!local)
		return false;
	pthread_mutex_lock(&local->lock);
	if (fs_itable_local(fs->it, local) != FS_LOCAL_NONE) {
		fs_itable_unhash(fs->it, local);
		fs_itable_set_local(fs->it, local, FS_LOCAL_NONE);
	}
	pthread_mutex_unlock(&local->lock);
	fs_itable_unref(fs->it, local);
	return true;
}

/* rm (dir false) and rmdir (dir true) of a member or an element. */
void fs_jtree_remove(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name,
		     bool dir)
{
	struct buf stored = BUF_INIT;
	struct jt_path p;
	jt_path_init(&p);
	struct jt_path pp;
	struct buf now = BUF_INIT;
	uint64_t old = 0;
	bool frozen = false;
	jt_path_init(&pp);
	int rc = jt_change_begin(fs, parent, name, &stored, &p);
	if (!rc && !dir && jt_forget_local(fs, parent, stored.data, stored.len))
		goto out;
	pthread_mutex_lock(&parent->lock);
	if (!rc && jt_frozen(parent)) {
		/* A name from a listing: translated through the removals
		 * made since (rm -r). */
		rc = jt_path_get(fs, parent, NULL, 0, &pp);
		if (!rc)
			rc = jt_gap_name_locked(fs, parent, &pp, stored.data, stored.len, &now,
						&old, &frozen);
		jt_path_release(&p);
		jt_path_init(&p);
		if (!rc)
			rc = jt_path_get(fs, parent, now.data, now.len, &p);
	}
	pthread_mutex_lock(&jt_renumber_lock);
	if (!rc)
		rc = json_tree_remove(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), dir);
	if (!rc) {
		/* Before any commit resolves a name again. */
		fs_itable_unlink(fs->it, parent, stored.data, stored.len);
		jt_renumbered(fs, parent);
	}
	pthread_mutex_unlock(&jt_renumber_lock);
	if (!rc && frozen)
		rc = jt_gap_add_locked(parent, old);
	if (!rc)
		jt_gaps_rebase_locked(fs, parent);
	pthread_mutex_unlock(&parent->lock);
out:
	fuse_reply_err(req, rc ? fs_errno(rc) : 0);
	jt_path_release(&p);
	jt_path_release(&pp);
	buf_release(&now);
	buf_release(&stored);
}

/* ---- rename ------------------------------------------------------------- */

void fs_jtree_rename(fuse_req_t req, struct fs *fs, struct fs_node *parent, const char *name,
		     struct fs_node *newparent, const char *newname, unsigned int flags)
{
	struct buf from = BUF_INIT, to = BUF_INIT;
	struct jt_path pf, pt;
	jt_path_init(&pf);
	jt_path_init(&pt);
	int rc = 0;
	if (parent->kind != FS_JTREE || newparent->kind != FS_JTREE) {
		rc = -EXDEV; /* in or out of a document: mv copies */
		goto out;
	}
	if (flags & ~(unsigned)RENAME_NOREPLACE) {
		LOG_ERR("rename '%s': a JSON tree cannot exchange two nodes (RENAME_EXCHANGE)",
			name);
		rc = -EINVAL;
		goto out;
	}
	uint64_t from_old = 0, to_old;
	bool from_frozen = false, to_frozen;
	rc = jt_change_begin(fs, parent, name, &from, &pf);
	if (!rc)
		rc = jt_change_begin(fs, newparent, newname, &to, &pt);
	/* Names from a listing: as its kept numbering means them. */
	if (!rc)
		rc = jt_change_translate(fs, parent, &from, &pf, false, &from_old, &from_frozen);
	if (!rc)
		rc = jt_change_translate(fs, newparent, &to, &pt, true, &to_old, &to_frozen);
	if (rc)
		goto out;
	if (pf.k.nslen != pt.k.nslen || memcmp(pf.k.ns, pt.k.ns, pf.k.nslen) ||
	    pf.k.klen != pt.k.klen || memcmp(pf.k.key, pt.k.key, pf.k.klen)) {
		rc = -EXDEV; /* another document */
		goto out;
	}
	/* mv -n: the target's absence is checked in the change, under the
	 * key's lock. */
	unsigned noreplace = (flags & RENAME_NOREPLACE) ? JSON_TREE_NEW : 0;
	struct fs_node *local = fs_itable_find_local(fs->it, parent, from.data, from.len);
	if (local) {
		/* A scratch file (sed -i's, rsync's temp) onto a member: one
		 * JSON.SET of the member, by the member's type. */
		pthread_mutex_lock(&local->lock);
		rc = json_tree_write(fs->ks, &pt.k, jt_steps(&pt), jt_nsteps(&pt), local->data.data,
				     local->data.len, NULL, noreplace);
		if (!rc) {
			fs_itable_unlink(fs->it, newparent, to.data, to.len);
			rc = fs_itable_rename(fs->it, parent, from.data, from.len, newparent,
					      to.data, to.len);
			fs_itable_set_local(fs->it, local, FS_LOCAL_NONE);
			buf_reset(&local->data);
			local->loaded = local->dirty = false;
		}
		pthread_mutex_unlock(&local->lock);
		fs_itable_unref(fs->it, local);
		if (!rc)
			jt_dir_changed(fs, newparent, false);
		goto out;
	}
	struct buf probe = BUF_INIT;
	bool backup =
	    jt_scratch_name(to.data, to.len) &&
	    json_tree_read(fs->ks, &pt.k, jt_steps(&pt), jt_nsteps(&pt), &probe) == -ENOENT;
	buf_release(&probe);
	if (backup) {
		/* A member renamed to a scratch name (an editor's backup,
		 * NAME~): the scratch file gets a copy, the member stays
		 * for the editor's write of NAME. */
		struct buf text = BUF_INIT;
		rc = json_tree_read(fs->ks, &pf.k, jt_steps(&pf), jt_nsteps(&pf), &text);
		struct fs_node *node =
		    rc ? NULL : fs_itable_lookup(fs->it, newparent, FS_JTREE, to.data, to.len);
		if (!rc && !node)
			rc = -ENOMEM;
		if (node) {
			pthread_mutex_lock(&node->lock);
			fs_node_set_empty(node);
			rc = buf_set(&node->data, text.data, text.len);
			pthread_mutex_unlock(&node->lock);
			fs_itable_set_local(fs->it, node, FS_LOCAL_SCRATCH);
			fs_itable_forget(fs->it, node->ino, 1);
		}
		buf_release(&text);
		goto out;
	}
	/* The moved node follows (its open files store at the new name);
	 * no commit of either file comes between (fs_itable_lock_names). */
	struct fs_locked held = {0};
	fs_itable_lock_names(fs->it, parent, from.data, from.len, newparent, to.data, to.len,
			     &held);
	pthread_mutex_lock(&jt_renumber_lock);
	rc = json_tree_move(fs->ks, &pf.k, jt_steps(&pf), jt_nsteps(&pf), jt_steps(&pt),
			    jt_nsteps(&pt), noreplace);
	bool same =
	    parent == newparent && from.len == to.len && memcmp(from.data, to.data, from.len) == 0;
	if (!rc && !same)
		rc = fs_itable_rename(fs->it, parent, from.data, from.len, newparent, to.data,
				      to.len);
	if (!rc) {
		/* Before any commit resolves a name again. */
		jt_renumbered(fs, parent);
		if (newparent != parent)
			jt_renumbered(fs, newparent);
	}
	pthread_mutex_unlock(&jt_renumber_lock);
	fs_itable_unlock_names(fs->it, &held);
	if (!rc && from_frozen && !same) {
		/* The source left its array: the kept numbering skips it. */
		pthread_mutex_lock(&parent->lock);
		rc = jt_frozen(parent) ? jt_gap_add_locked(parent, from_old) : 0;
		pthread_mutex_unlock(&parent->lock);
	}
	if (!rc) {
		jt_dir_changed(fs, parent, false);
		if (newparent != parent)
			jt_dir_changed(fs, newparent, false);
	}
out:
	fuse_reply_err(req, rc ? fs_errno(rc) : 0);
	jt_path_release(&pf);
	jt_path_release(&pt);
	buf_release(&from);
	buf_release(&to);
}

/* ---- extended attributes --------------------------------------------------- */

static int jt_type(struct fs *fs, struct fs_node *node, const char **type)
{
	struct jt_path p;
	struct json_tree_node jn;
	jt_path_init(&p);
	int rc = jt_path_get(fs, node, NULL, 0, &p);
	if (!rc)
		rc = json_tree_stat(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), &jn);
	if (!rc)
		*type = jn.type;
	jt_path_release(&p);
	return rc;
}

static void jt_reply_value(fuse_req_t req, const char *v, size_t n, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, n);
	else if (size < n)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, v, n);
}

void fs_jtree_getxattr(fuse_req_t req, struct fs *fs, struct fs_node *node, const char *name,
		       size_t size)
{
	const char *type;
	if (strcmp(name, JT_XATTR) != 0 || jt_is_local(fs, node)) {
		fuse_reply_err(req, ENODATA);
		return;
	}
	int rc = jt_type(fs, node, &type);
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		jt_reply_value(req, type, strlen(type), size);
}

void fs_jtree_listxattr(fuse_req_t req, struct fs *fs, struct fs_node *node, size_t size)
{
	static const char names[] = JT_XATTR;
	if (jt_is_local(fs, node))
		jt_reply_value(req, "", 0, size);
	else
		jt_reply_value(req, names, sizeof(names), size);
}

void fs_jtree_setxattr(fuse_req_t req, struct fs *fs, struct fs_node *node, const char *name,
		       const char *value, size_t size, int flags)
{
	struct jt_path p;
	char type[16];
	int rc = 0;
	jt_path_init(&p);
	if (strcmp(name, JT_XATTR) != 0 || jt_is_local(fs, node)) {
		/* Only the type is an attribute of a node here. */
		rc = strncmp(name, "user.", 5) == 0 ? -ENOTSUP : -EOPNOTSUPP;
		goto out;
	}
	if (fs->opt.read_only) {
		rc = -EROFS;
		goto out;
	}
	if (flags & XATTR_CREATE) {
		rc = -EEXIST; /* every node has a type */
		goto out;
	}
	while (size && (value[size - 1] == '\n' || value[size - 1] == '\0'))
		size--;
	if (size == 0 || size >= sizeof(type)) {
		LOG_ERR("%s: '%.*s' is no JSON type", JT_XATTR, (int)(size > 32 ? 32 : size),
			value);
		rc = -EINVAL;
		goto out;
	}
	memcpy(type, value, size);
	type[size] = '\0';
	rc = jt_path_get(fs, node, NULL, 0, &p);
	if (!rc) {
		/* An open file's written bytes go first, then the type. */
		pthread_mutex_lock(&node->lock);
		if (node->dirty)
			rc = jt_flush_locked(fs, node, false);
		if (!rc)
			rc = json_tree_retype(fs->ks, &p.k, jt_steps(&p), jt_nsteps(&p), type);
		if (!rc)
			jt_dir_changed(fs, node->parent, true);
		if (!rc && node->loaded) {
			buf_reset(&node->data);
			node->loaded = false;
			if (node->opens)
				rc = jt_load_locked(fs, node);
		}
		pthread_mutex_unlock(&node->lock);
	}
out:
	fuse_reply_err(req, rc ? fs_errno(rc) : 0);
	jt_path_release(&p);
}

void fs_jtree_removexattr(fuse_req_t req, struct fs *fs, struct fs_node *node, const char *name)
{
	(void)fs;
	(void)node;
	/* The type cannot go: every node has one. */
	fuse_reply_err(req, strcmp(name, JT_XATTR) == 0 ? ENOTSUP : ENODATA);
}
