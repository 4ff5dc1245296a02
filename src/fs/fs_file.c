/*
 * fs_file: file contents. A file (a string key, or an entry of a key's
 * directory) is buffered per node while open: loaded whole on first use,
 * read and written in memory, committed atomically on flush/fsync/release
 * through the type (SET, or the shape of the key's type: HSET, LSET,
 * ZADD, ...). A bitmap key is the exception while nobody has buffered it:
 * reads and writes go straight to the bitmap (GETRANGE-like reads, one
 * batch per write), so a sparse 512 MiB bitmap never has to fit in memory.
 * Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <stdlib.h>

#include "keyspace/ks_attr.h"
#include "types/t_string.h" /* STRING_MAX */

/* The key of a KEY node, or of the directory an ENTRY node is in, plus
 * the shape for an entry. p is filled; c borrows from it. */
static int node_ctx(struct fs *fs, struct fs_node *node, struct fs_path *p, struct fs_ctx *c,
		    const struct fs_shape **sh)
{
	int rc = fs_itable_path(fs->it, node, p);
	if (rc)
		return rc;
	if (node->kind == FS_KEY) {
		memset(c, 0, sizeof(*c));
		c->fs = fs;
		fs_path_key(fs, p, &c->k);
		*sh = NULL;
		return 0;
	}
	rc = fs_ctx_open(fs, node->parent, p, NULL, c, sh);
	if (rc == -ENOTDIR || rc == -EOPNOTSUPP)
		rc = -KV_EWRONGTYPE; /* the key changed type under an open file */
	return rc;
}

/*
 * A write through an entry node holds its key's node too: a rename of
 * the key (which holds that node's lock) then comes wholly before or
 * after the write, which never lands under the key's old name. The
 * entry's lock is held, so its parent cannot change. NULL for a key.
 */
static struct fs_node *dir_lock(struct fs_node *node)
{
	if (node->kind != FS_ENTRY)
		return NULL;
	pthread_mutex_lock(&node->parent->lock);
	return node->parent;
}

static void dir_unlock(struct fs_node *dir)
{
	if (dir)
		pthread_mutex_unlock(&dir->lock);
}

void fs_node_set_empty(struct fs_node *node)
{
	fs_node_unpin_locked(node);
	buf_reset(&node->data);
	node->loaded = true;
}

/* Read the node's value into node->data. Node lock held. */
static int node_load_locked(struct fs *fs, struct fs_node *node)
{
	if (node->loaded)
		return 0;
	if (node->pin) {
		/* Read before, now written: copy what was borrowed. */
		int rc = buf_set(&node->data, node->pin_data, node->pin_len);
		if (rc)
			return rc;
		fs_node_unpin_locked(node);
		node->loaded = true;
		return 0;
	}
	struct fs_path p;
	struct fs_ctx c;
	const struct fs_shape *sh;
	fs_path_init(&p);
	int rc = node_ctx(fs, node, &p, &c, &sh);
	if (rc)
		goto out;
	if (node->kind == FS_KEY) {
		rc = fs_file_shape_for(c.k.key, c.k.klen, node->ktype)->load(fs, &c.k, &node->data);
	} else {
		rc = sh->load(&c, node->name, node->namelen, &node->data);
	}
	if (rc == -KV_EWRONGTYPE) {
		LOG_ERR("read of '%s': the key is not a %s any more", p.key.data,
			enc_type_name(node->ktype));
		rc = -EIO;
	}
	if (!rc)
		node->loaded = true;
out:
	fs_path_release(&p);
	return rc;
}

/*
 * Feed the first n bytes of an input node's buffer (whole lines, or a
 * last line at a close) to its shape and drop them from the buffer. On
 * an error nothing was stored; the caller decides what stays buffered.
 * Node lock held.
 */
static int input_feed_locked(struct fs *fs, struct fs_node *node, size_t n, struct buf *reply)
{
	struct fs_path p;
	struct fs_ctx c;
	const struct fs_shape *sh;
	if (n == 0)
		return 0;
	fs_path_init(&p);
	struct fs_node *dir = dir_lock(node);
	int rc = node_ctx(fs, node, &p, &c, &sh);
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
	if (!rc && sh && (sh->make_empty || sh->uncached))
		ch.flags |= KS_ATTR_RENUMBER; /* see below; a push shifts a list */
	const struct fs_file_shape *fsh =
	    !rc && node->kind == FS_KEY ? fs_file_shape_named(c.k.key, c.k.klen, false) : NULL;
	if (fsh && fsh->feed) {
		/* An input of the namespace (KEY:rpush): it logs its refusals.
		 * The list's positions shift, as for its own inputs. */
		ch.flags |= KS_ATTR_RENUMBER;
		c.k.attr = &ch;
		rc = fsh->feed(fs, node->parent, &c.k, node->data.data, n);
		c.k.attr = NULL;
	} else if (!rc && sh && sh->feed) {
		c.reply = reply;
		/* The key changed; an input has no times of its own. The state
		 * files of a sketch or a series change with it: times set on
		 * them (touch, rsync restoring them) are dropped, so they show
		 * the key's, this change's. */
		c.k.attr = &ch;
		rc = sh->feed(&c, node->name, node->namelen, node->data.data, n);
		c.k.attr = NULL;
	} else if (!rc) {
		rc = -EACCES;
	}
	if (rc && !(fsh && fsh->feed)) {
		LOG_ERR("lines written to '%s/%s' refused: %s", p.key.data, p.entry.data,
			strerror(-rc == KV_EWRONGTYPE ? EIO : -rc));
	}
	if (!rc) {
		memmove(node->data.data, node->data.data + n, node->data.len - n);
		buf_resize(&node->data, node->data.len - n);
		/* Entries made or changed by no system call on their names:
		 * the kernel's copies of the key's attributes (its size, times)
		 * and of its entries' go. */
		if (node->kind == FS_ENTRY && node->parent)
			fs_key_changed(fs, node->parent); /* KEY:rpush renews its list itself */
	}
	dir_unlock(dir);
	fs_path_release(&p);
	return rc;
}

/* Store file key k (a node of type t) whole, through its file shape. */
static int file_commit(struct fs *fs, const struct ks_key *k, enum kv_type t, const char *d,
		       size_t n)
{
	const struct fs_file_shape *fsh = fs_file_shape_for(k->key, k->klen, t);
	return fsh->commit ? fsh->commit(fs, k, d, n) : -EACCES;
}

/*
 * Commit buffered data: one atomic write of the whole value. Node lock
 * held. `last`: the last close (release). A new entry with nothing
 * written yet waits for it, since shells close a duplicate of the file
 * (a flush) before they write: `echo abc > zset/m` must not store m.
 */
static int node_commit_locked(struct fs *fs, struct fs_node *node, bool last)
{
	if (node->input) {
		int rc = input_feed_locked(fs, node, node->data.len, NULL);
		if (rc) /* a last line at a close is not kept for another try */
			buf_reset(&node->data);
		return rc;
	}
	if (!node->dirty && !node->bad)
		return 0;
	struct fs_path p;
	struct fs_ctx c;
	const struct fs_shape *sh = NULL;
	struct fs_node *dir = NULL;
	enum fs_local local = fs_itable_local(fs->it, node);
	int rc;

	const struct fs_shape *esh = node->kind == FS_ENTRY ? fs_shape_of(node->ktype) : NULL;
	/* A new key, like a new hash field, is stored by any first flush. */
	if (local == FS_LOCAL_PENDING && !last && !node->bad && node->data.len == 0 &&
	    node->kind != FS_KEY && !(esh && esh->store_new_at_flush))
		return 0;
	/* Nor does a file whose commit may refuse it (JSON): `echo x > doc`
	 * flushes before it writes, and an empty document there would
	 * replace the old one even when x is then refused. */
	const struct fs_file_shape *fsh =
	    node->kind == FS_KEY ? fs_file_shape_of(node->ktype) : NULL;
	bool parsed = fsh && fsh->parsed;
	if (parsed && !last && node->data.len == 0)
		return 0;
	/* Nor does a sketch's or series' state file (`cat x > hll/registers`):
	 * empty state is refused, and a refusal drops the buffer. */
	if (esh && esh->make_empty && !last && !node->bad && node->data.len == 0)
		return 0;

	fs_path_init(&p);
	if (node->bad) {
		/* A write was refused: nothing of this file is stored. */
		node->dirty = false;
		if (local == FS_LOCAL_PENDING) {
			/* The kernel cached the name at the create: it goes. */
			struct fs_inval iv;
			fs_inval_init(&iv);
			if (node->parent &&
			    fs_inval_add(&iv, node->parent->ino, 0, node->name, node->namelen) == 0)
				fs_inval_send(fs, &iv);
			fs_inval_release(&iv);
			fs_itable_unhash(fs->it, node);
			fs_itable_set_local(fs->it, node, FS_LOCAL_NONE);
		}
		rc = node->bad;
		goto out;
	}
	if (local == FS_LOCAL_SCRATCH) {
		node->dirty = false; /* the buffer is all there is */
		rc = 0;
		goto out;
	}
	dir = dir_lock(node);
	rc = node_ctx(fs, node, &p, &c, &sh);
	if (rc)
		goto fail;
	if (p.unhashed) {
		/* Unlinked or replaced while open: the data has no home. */
		node->dirty = false;
		goto out;
	}
	/* The new mtime goes in the same batch as the content. */
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
	if (node->kind == FS_ENTRY)
		fs_attr_entry(sh, node->name, node->namelen, &ch.entry, &ch.elen);
	if (local == FS_LOCAL_PENDING) /* and its creation's mode and owner */
		fs_node_attrs_stage(node, &ch);
	c.k.attr = &ch;
	if (node->kind == FS_KEY)
		rc = file_commit(fs, &c.k, node->ktype, node->data.data, node->data.len);
	else
		rc = sh->commit(&c, node->name, node->namelen, node->data.data, node->data.len,
				local == FS_LOCAL_PENDING);
	c.k.attr = NULL;
fail:
	if (!rc) {
		fs_seq_store_locked(fs, node);
		node->dirty = false;
		if (local == FS_LOCAL_PENDING) {
			fs_itable_set_local(fs->it, node, FS_LOCAL_NONE);
			fs_node_attrs_stored(node);
			fs_node_attrs_flush(fs, node, true);
		}
	} else if (parsed && rc == -EINVAL) {
		/* Not JSON: t_json said why. It will not parse at release
		 * either: only a new write makes the file dirty again. */
		node->dirty = false;
	} else {
		LOG_ERR("commit of '%s%s%s' failed: %s", p.key.data, p.entry.len ? "/" : "",
			p.entry.len ? p.entry.data : "", strerror(-rc));
		if (sh && sh->make_empty && rc == -EINVAL) {
			/* Refused state (a sketch file of the wrong size): the
			 * key is unchanged, and so is what the file reads. */
			node->dirty = false;
			fs_node_set_empty(node);
			node->loaded = false;
		}
		if (local == FS_LOCAL_PENDING && rc == -EINVAL) {
			/* Never stored and never will be: the entry is gone. */
			node->dirty = false;
			fs_itable_unhash(fs->it, node);
			fs_itable_set_local(fs->it, node, FS_LOCAL_NONE);
		}
	}
out:
	dir_unlock(dir);
	fs_path_release(&p);
	return rc;
}

/* Empty the value for the O_TRUNC opens not applied yet (see struct
 * fs_handle). Node lock held. */
static void trunc_apply_locked(struct fs_node *node)
{
	if (!node->trunc_want)
		return;
	node->trunc_want = false;
	node->trunc_epoch++;
	fs_node_set_empty(node);
	node->dirty = true;
	clock_gettime(CLOCK_REALTIME, &node->changed);
}

/* The first request of an O_TRUNC open. Node lock held. */
static void handle_trunc_locked(struct fs_handle *h)
{
	if (!h->trunc)
		return;
	h->trunc = false;
	if (h->trunc_epoch == h->node->trunc_epoch)
		trunc_apply_locked(h->node);
}

/* Drop the buffer when nothing uses it. A removed or replaced file's
 * kept value stays until the node goes: the kernel may still open it
 * (fs_file_open_gone_locked), and it cannot be read again. Node lock
 * held. */
static void node_unload_locked(struct fs *fs, struct fs_node *node)
{
	if (node->opens == 0 && !node->dirty && fs_itable_local(fs->it, node) == FS_LOCAL_NONE &&
	    !fs_itable_gone(fs->it, node)) {
		fs_node_unpin_locked(node);
		buf_release(&node->data);
		node->loaded = false;
		node->bad = 0;
	}
}

/* Add what an O_APPEND handle of a file that adds (JSON) collected.
 * Node lock held. */
static int handle_add_locked(struct fs *fs, struct fs_handle *h)
{
	struct fs_node *node = h->node;
	struct fs_path p;
	struct ks_key k;
	if (!h->adds || h->added.len == 0)
		return 0;
	fs_path_init(&p);
	int rc = fs_itable_path(fs->it, node, &p);
	if (!rc && !p.unhashed) {
		fs_path_key(fs, &p, &k);
		rc = h->adds->add(fs, &k, h->added.data, h->added.len);
	}
	if (!rc) {
		fs_seq_store_locked(fs, node);
		clock_gettime(CLOCK_REALTIME, &node->mtime);
	} else if (rc != -EINVAL) { /* EINVAL: t_json said why */
		LOG_ERR("append to '%s' failed: %s", p.key.data, strerror(-rc));
	}
	/* Added, or refused for good: nothing is tried twice. */
	buf_reset(&h->added);
	/* The node's buffer, if any, no longer shows the value. */
	if (!node->dirty && fs_itable_local(fs->it, node) == FS_LOCAL_NONE && !rc) {
		buf_release(&node->data);
		node->loaded = false;
	}
	fs_path_release(&p);
	return rc;
}

void fs_file_close(struct fs *fs, struct fs_handle *h)
{
	struct fs_node *node = h->node;
	if (node) {
		pthread_mutex_lock(&node->lock);
		handle_trunc_locked(h);
		handle_add_locked(fs, h);
		int rc = node_commit_locked(fs, node, node->opens == 1);
		node->opens--;
		node->writers -= h->writes;
		if (h->writes)
			node->wrote_ms = now_ms();
		/* A failed commit is not retried forever: the error was
		 * reported by flush and logged. A commit left for later (a
		 * new empty entry while another handle is open: its last
		 * close or a rename stores it) stays due. */
		if (rc)
			node->dirty = false;
		if (node->opens == 0)
			node->bad = 0;
		node_unload_locked(fs, node);
		buf_release(&h->answer); /* an action's reply ends under the lock */
		pthread_mutex_unlock(&node->lock);
		fs_itable_unref(fs->it, node);
	}
	pthread_mutex_lock(&fs->handles_lock);
	if (h->prev)
		h->prev->next = h->next;
	else if (fs->handles == h)
		fs->handles = h->next;
	if (h->next)
		h->next->prev = h->prev;
	pthread_mutex_unlock(&fs->handles_lock);
	ks_snap_free(fs->ks, h->snap);
	buf_release(&h->added);
	buf_release(&h->answer);
	free(h);
}

struct fs_handle *fs_handle_new(struct fs *fs)
{
	struct fs_handle *h = calloc(1, sizeof(*h));
	if (!h)
		return NULL;
	pthread_mutex_lock(&fs->handles_lock);
	h->next = fs->handles;
	if (h->next)
		h->next->prev = h;
	fs->handles = h;
	pthread_mutex_unlock(&fs->handles_lock);
	return h;
}

void fs_file_release_all(struct fs *fs)
{
	pthread_mutex_lock(&fs->handles_lock);
	struct fs_handle *h = fs->handles;
	fs->handles = NULL;
	pthread_mutex_unlock(&fs->handles_lock);
	while (h) {
		struct fs_handle *next = h->next;
		ks_snap_free(fs->ks, h->snap);
		buf_release(&h->added);
		buf_release(&h->answer);
		free(h);
		h = next;
	}
}

int fs_file_check(struct fs *fs, struct fs_node *node, bool write, bool *view)
{
	struct fs_path p;
	struct fs_ctx c;
	struct ks_info info;
	const struct fs_shape *sh;
	bool input = false, live = false, stored = false, action = false;
	int rc = 0;

	*view = false;
	if (node->kind == FS_ROOT || node->kind == FS_NS)
		return -EISDIR;
	fs_path_init(&p);
	rc = fs_itable_path(fs->it, node, &p);
	if (rc)
		goto out;
	const struct fs_file_shape *named = NULL;
	if (node->kind == FS_KEY) {
		fs_path_key(fs, &p, &c.k);
		named = fs_file_shape_named(c.k.key, c.k.klen, true);
	}
	if (named) {
		/* A file of the namespace whatever key has its name (a view). */
		memset(&info, 0, sizeof(info));
		info.type = named->type; /* its load goes by the name */
		rc = named->open(fs, &c.k, write, view);
		action = named->act != NULL;
	} else if (node->kind == FS_KEY && fs_itable_local(fs->it, node) == FS_LOCAL_PENDING) {
		memset(&info, 0, sizeof(info)); /* a new string, stored at a flush */
		info.type = fs_new_file_shape->type;
	} else if (node->kind == FS_KEY) {
		fs_path_key(fs, &p, &c.k);
		rc = ks_lookup(fs->ks, &c.k, &info);
		named = rc == -ENOENT && !p.unhashed ? fs_file_shape_named(c.k.key, c.k.klen, false)
						     : NULL;
		if (named) {
			/* A file that is no key (a JSON path name, a push). */
			rc = named->open(fs, &c.k, write, view);
			info.type = named->type;
			action = named->act != NULL;
			input = named->feed != NULL;
		}
		if (!rc && !fs_type_is_file(info.type)) {
			rc = -EISDIR;
		} else if (!rc && !fs_type_is_supported(info.type)) {
			LOG_WARN("open of '%s': type %s is not mapped into files yet", p.key.data,
				 enc_type_name(info.type));
			rc = -EOPNOTSUPP;
		}
	} else {
		struct fs_node *dir = fs_itable_parent(fs->it, node);
		rc = fs_ctx_open(fs, dir, &p, NULL, &c, &sh);
		fs_itable_unref(fs->it, dir);
		info = c.info;
		stored = fs_itable_local(fs->it, node) == FS_LOCAL_NONE;
		input = !rc && stored && sh->is_input && sh->is_input(p.entry.data, p.entry.len);
		action =
		    !rc && !input && stored && fs_shape_acts(&c, sh, p.entry.data, p.entry.len);
		if (action) {
			*view = true;
			if (write) {
				LOG_ERR("'%s/%s' is an action: it is read, not written", p.key.data,
					p.entry.data);
				rc = -EACCES;
			}
		} else if (!rc && !input && stored && sh->is_view &&
			   sh->is_view(p.entry.data, p.entry.len)) {
			*view = true;
			if (write) {
				LOG_ERR("'%s/%s' is a read-only view", p.key.data, p.entry.data);
				rc = -EACCES;
			}
			live = sh->is_live && sh->is_live(p.entry.data, p.entry.len);
		} else if (!rc && !input && stored && write && sh->is_immutable &&
			   sh->is_immutable(p.entry.data, p.entry.len)) {
			LOG_ERR("'%s/%s': the entries of a %s cannot be changed", p.key.data,
				p.entry.data, enc_type_name(info.type));
			rc = -EACCES;
		}
	}
	if (!rc) {
		pthread_mutex_lock(&node->lock);
		node->ktype = info.type;
		node->expire_ms = info.expire_ms;
		node->input = input;
		node->live = live;
		node->action = action;
		/* A stored entry opened to read is read now: one whose record
		 * does not decode is listed with size 0 (docs/encoding.md
		 * section 20), and the kernel would answer a read of it from
		 * that size, as an empty file, without asking. */
		if (node->kind != FS_KEY && stored && !input && !*view && !write)
			rc = node_load_locked(fs, node);
		pthread_mutex_unlock(&node->lock);
	}
out:
	fs_path_release(&p);
	return rc;
}

void fs_file_open_setup(struct fs_handle *h, struct fuse_file_info *fi, bool view, bool fresh)
{
	struct fs_node *node = h->node;
	pthread_mutex_lock(&node->lock);
	/* Shared by a writer and another open: see below. */
	h->writes = (fi->flags & (O_ACCMODE | O_TRUNC)) != O_RDONLY;
	uint64_t now = now_ms();
	bool shared = node->writers > 0 || (h->writes && node->opens > 0) ||
		      now - node->wrote_ms < FS_RECENT_MS;
	node->opens++;
	node->writers += h->writes;
	node->used_ms = now;
	if (h->writes)
		node->wrote_ms = now;
	bool input = node->input;
	/* JSON files show what was stored, which may not be what was
	 * written: no page cache, and `>>` adds to the value. */
	const struct fs_file_shape *fsh =
	    node->kind == FS_KEY ? fs_file_shape_of(node->ktype) : NULL;
	bool recomputed = fsh && fsh->recomputed;
	if (fsh && fsh->add && (fi->flags & O_APPEND) && !(fi->flags & O_TRUNC))
		h->adds = fsh;
	h->append = fi->flags & O_APPEND;
	/* A key that expires is never served from the page cache: each read
	 * asks the daemon, which checks the expiry. */
	bool expires = node->expire_ms != 0;
	if ((fi->flags & O_TRUNC) && !input) {
		h->trunc = true;
		h->trunc_epoch = node->trunc_epoch;
		node->trunc_want = true;
	} else if (view && node->loaded && !node->dirty) {
		/* A view is made anew by each open, also while the release of
		 * an earlier open (sent in the background) has not arrived. */
		fs_node_set_empty(node);
		node->loaded = false;
	}
	pthread_mutex_unlock(&node->lock);
	/* The page cache stays valid across opens: every change to a node's
	 * data goes through the kernel or is invalidated explicitly. A view
	 * is made anew by each open, whatever size a stat said. */
	fi->keep_cache = !(fi->flags & O_TRUNC) && !view && !input && !recomputed && !expires;
	/* A write-only open that starts the value anew (a new file, O_TRUNC)
	 * goes around the page cache: nothing can be read or mapped through
	 * it, and the kernel then neither copies each write into pages of its
	 * own nor asks GETXATTR security.capability before each write (one
	 * round trip in six for a small new file; docs/performance.md). The
	 * kernel drops pages other opens read of the range each write
	 * covers, so they see the new bytes. */
	bool anew = (fresh || (fi->flags & O_TRUNC)) && (fi->flags & O_ACCMODE) == O_WRONLY;
	/*
	 * A file that a writer shares with another open, or had open a
	 * moment ago, goes around the page cache for this open: the kernel
	 * fills and trusts its pages and size per page and per request, so a
	 * read racing another open's write could mix pages of two values or
	 * show zeros past a size that had grown (an open just before a
	 * writer's is the case "a moment ago" covers). The daemon applies
	 * each request whole, under the node's lock: a read returns one
	 * state of the value.
	 */
	fi->direct_io = view || input || recomputed || expires || anew || shared;
	/* A close of a read-only open has nothing to commit. */
	fi->noflush = (fi->flags & O_ACCMODE) == O_RDONLY;
}

/* fs_itable_unhash_kids's test: every name but the shape's actions and
 * inputs (a writer between its lookup and its open of an unhashed input
 * would write to a node that has no home any more). */
static bool not_action(void *arg, const char *name, size_t n)
{
	const struct fs_shape *sh = arg;
	return !sh->is_action(name, n) && !fs_shape_is_special(sh, name, n);
}

/* Run the action node names (fs_shape.is_action, fs_file_shape.act) for
 * the open that req makes: its answer into out. No lock held. */
static int action_run(struct fs *fs, fuse_req_t req, struct fs_node *node, struct buf *out)
{
	struct fs_path p;
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
	fs_path_init(&p);
	int rc = fs_itable_path(fs->it, node, &p);
	if (!rc && p.unhashed)
		rc = -ENOENT;
	if (!rc && node->kind == FS_KEY) {
		struct ks_key k;
		fs_path_key(fs, &p, &k);
		const struct fs_file_shape *named = fs_file_shape_named(k.key, k.klen, true);
		if (!named)
			named = fs_file_shape_named(k.key, k.klen, false);
		k.attr = &ch;
		rc = named && named->act ? named->act(fs, &k, out) : -ENOENT;
		size_t kn = !rc && named->act_key ? named->act_key(k.key, k.klen) : 0;
		if (kn) {
			struct fs_node *dir = fs_itable_parent(fs->it, node);
			fs_action_changed(fs, dir, k.key, kn);
			fs_itable_unref(fs->it, dir);
		}
	} else if (!rc) {
		struct fs_node *dir = fs_itable_parent(fs->it, node);
		struct fs_ctx c;
		const struct fs_shape *sh;
		rc = fs_ctx_open(fs, dir, &p, NULL, &c, &sh);
		if (!rc) {
			c.req = req;
			/* A pop or a move renumbers a list: times set on its
			 * positions named other elements. */
			if (sh->uncached)
				ch.flags |= KS_ATTR_RENUMBER;
			c.k.attr = &ch;
			rc = sh->act ? sh->act(&c, p.entry.data, p.entry.len, out) : -ENOENT;
		}
		if (!rc) {
			/* The action changed entries (a pop renumbers a list): the
			 * names the table holds of the key are resolved anew, and
			 * the kernel forgets what it kept of them. */
			struct fs_inval iv;
			fs_inval_init(&iv);
			pthread_mutex_lock(&dir->lock);
			fs_itable_unhash_kids(fs->it, dir, not_action, (void *)sh, &iv);
			pthread_mutex_unlock(&dir->lock);
			fs_inval_add(&iv, 0, dir->ino, "", 0); /* its size and times */
			fs_inval_send(fs, &iv);
		}
		fs_itable_unref(fs->it, dir);
	}
	fs_path_release(&p);
	return rc;
}

void fs_action_changed(struct fs *fs, struct fs_node *dir, const char *name, size_t n)
{
	struct fs_inval iv;
	struct fs_node *node = fs_itable_find(fs->it, dir, name, n);
	fs_inval_init(&iv);
	fs_inval_add(&iv, dir->ino, node ? node->ino : 0, name, n);
	if (node) {
		pthread_mutex_lock(&node->lock);
		if (node->pin || (node->loaded && !node->dirty &&
				  fs_itable_local(fs->it, node) == FS_LOCAL_NONE)) {
			fs_node_unpin_locked(node);
			buf_release(&node->data);
			node->loaded = false;
		}
		pthread_mutex_unlock(&node->lock);
		fs_itable_unref(fs->it, node);
	}
	fs_inval_send(fs, &iv);
}

static bool act_stop(void *arg)
{
	struct fs_ctx *c = arg;
	return (c->req && fuse_req_interrupted(c->req)) ||
	       (c->fs->se && fuse_session_exited(c->fs->se));
}

int fs_act_wait(struct fs_ctx *c, const struct ks_key *k, uint64_t gen, uint64_t deadline)
{
	struct fs *fs = c->fs;
	unsigned most = fs->opt.threads / 2;
	pthread_mutex_lock(&fs->wait_lock);
	bool room = fs->waiting < most;
	fs->waiting += room;
	pthread_mutex_unlock(&fs->wait_lock);
	if (!room) {
		LOG_ERR("'%.*s': %u readers wait already, the most -o threads=%u lets wait: EAGAIN",
			(int)k->klen, k->key, most, fs->opt.threads);
		return -EAGAIN;
	}
	int rc = ks_wait(fs->ks, k, gen, deadline, act_stop, c);
	pthread_mutex_lock(&fs->wait_lock);
	fs->waiting--;
	pthread_mutex_unlock(&fs->wait_lock);
	return rc;
}

/*
 * A follower's open: a value loaded (or borrowed) before a catch-up that
 * changed something is dropped, so this open reads the current one (a
 * poller's opens overlap the releases of the ones before, and would
 * otherwise share one value for as long as they do). Other opens of the
 * node load anew at their next read, as with a view. Node lock held.
 */
static void follow_open_locked(struct fs *fs, struct fs_node *node)
{
	if (!fs->opt.follow_ms)
		return;
	uint64_t gen = fs_follow_gen(fs);
	if (node->follow_gen != gen && !node->dirty && (node->loaded || node->pin)) {
		fs_node_set_empty(node);
		node->loaded = false;
	}
	node->follow_gen = gen;
}

void fs_op_open(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_open(req, fuse_req_userdata(req), jt, fi);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	bool view;
	if (!node) {
		fuse_reply_err(req, ESTALE);
		return;
	}
	fs_follow_fresh(fs);
	/* Held to the reply: an unlink or a rename of the file (which hold
	 * its lock) comes wholly before the open or after it. */
	pthread_mutex_lock(&node->lock);
	bool write = (fi->flags & (O_ACCMODE | O_TRUNC)) != O_RDONLY;
	bool gone;
	view = false;
	int rc = fs_file_open_gone_locked(fs, node, fi->flags, &gone);
	if (!rc && !gone)
		rc = fs_file_check(fs, node, write, &view);
	if (!rc && fs->opt.read_only && write)
		rc = -EROFS;
	if (rc) {
		pthread_mutex_unlock(&node->lock);
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	follow_open_locked(fs, node);
	struct fs_handle *h = fs_handle_new(fs);
	if (!h) {
		pthread_mutex_unlock(&node->lock);
		fuse_reply_err(req, ENOMEM);
		return;
	}
	h->node = node;
	fs_itable_ref(fs->it, node);
	fs_file_open_setup(h, fi, view, false);
	if (fs->opt.follow_ms)
		fi->keep_cache = 0; /* the writer may have changed it since */
	if (node->action) {
		/* Run with no lock held: it may wait (BLPOP), and it changes
		 * the key through the type layer's own locks. An action's name
		 * can be neither removed nor renamed, so nothing of the node
		 * changes meanwhile. */
		pthread_mutex_unlock(&node->lock);
		h->action = true;
		fi->direct_io = 1;
		fi->keep_cache = 0;
		fi->fh = (uintptr_t)h;
		rc = action_run(fs, req, node, &h->answer);
		h->inval_ticket = rc ? 0 : fs_inval_ticket(fs);
		if (rc) {
			fs_file_close(fs, h);
			fuse_reply_err(req, fs_errno(rc));
		} else if (fuse_reply_open(req, fi)) {
			fs_file_close(fs, h);
		}
		return;
	}
	if (node->kind == FS_ENTRY) {
		/* An entry whose name changes meaning (a list position) is read
		 * now: the open file keeps what it opened, whatever moves. One
		 * whose contents the commit rewrites keeps no pages. */
		const struct fs_shape *sh = fs_shape_of(node->ktype);
		if (sh && sh->recomputed)
			fi->keep_cache = 0;
		if (sh && sh->uncached)
			rc = node_load_locked(fs, node);
	}
	fi->fh = (uintptr_t)h;
	if (rc) {
		fs_file_close(fs, h);
		fuse_reply_err(req, fs_errno(rc));
	} else if (fuse_reply_open(req, fi)) {
		fs_file_close(fs, h);
	}
	pthread_mutex_unlock(&node->lock);
}

/* A key of a file shape that reads and writes in place (a bitmap),
 * which nobody has buffered: its shape. NULL: buffered. Node lock held. */
static const struct fs_file_shape *direct_shape(const struct fs_node *node)
{
	const struct fs_file_shape *fsh =
	    node->kind == FS_KEY && !node->loaded ? fs_file_shape_of(node->ktype) : NULL;
	return fsh && fsh->read ? fsh : NULL;
}

/* The key of a file node (to pin it, check its expiry, read or write it
 * in place). */
static int direct_key(struct fs *fs, struct fs_node *node, struct fs_path *p, struct ks_key *k)
{
	int rc = fs_itable_path(fs->it, node, p);
	if (!rc)
		fs_path_key(fs, p, k);
	return rc;
}

/*
 * A key that is only read borrows its value from the store if its shape
 * can (a string: no copy of a 256 MiB value into a buffer of our own). 0
 * with node->pin set, 0 without it (load instead), or an errno. Node lock
 * held, node not loaded.
 */
static int node_pin_locked(struct fs *fs, struct fs_node *node)
{
	const struct fs_file_shape *fsh =
	    node->kind == FS_KEY ? fs_file_shape_of(node->ktype) : NULL;
	if (!fsh || !fsh->pin)
		return 0;
	struct fs_path p;
	struct ks_key k;
	fs_path_init(&p);
	int rc = direct_key(fs, node, &p, &k);
	if (!rc)
		rc = fsh->pin(fs, &k, &node->pin, &node->pin_data, &node->pin_len);
	if (rc == -KV_EWRONGTYPE) {
		LOG_ERR("read of '%s': the key is not a %s any more", p.key.data,
			enc_type_name(node->ktype));
		rc = -EIO;
	}
	fs_path_release(&p);
	return rc;
}

/*
 * Has the node's key expired since it was opened? A read never returns
 * an expired value: the key is looked up again once its expiry has
 * passed (the expiry may have been moved), and a gone key drops what the
 * node holds. Node lock held. 0 or -ENOENT.
 */
static int node_check_expiry(struct fs *fs, struct fs_node *node)
{
	if (!node->expire_ms || now_ms() < node->expire_ms)
		return 0;
	struct fs_path p;
	struct ks_key k;
	struct ks_info info;
	fs_path_init(&p);
	int rc = direct_key(fs, node, &p, &k);
	if (!rc)
		rc = ks_lookup(fs->ks, &k, &info);
	fs_path_release(&p);
	if (rc == 0) {
		node->expire_ms = info.expire_ms;
		return 0;
	}
	LOG_INFO("read of '%s': its key has expired", node->name);
	fs_node_unpin_locked(node);
	buf_reset(&node->data);
	node->loaded = false;
	node->dirty = false;
	return -ENOENT;
}

void fs_op_read(fuse_req_t req, fuse_ino_t ino, size_t size, off_t off, struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_read(req, fuse_req_userdata(req), jt, size, off);
		return;
	}
	(void)ino;
	struct fs *fs = fuse_req_userdata(req);
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	struct fs_node *node = h->node;
	int rc;
	if (h->action) {
		/* Not before the kernel has forgotten what the action removed
		 * (a popped member), so that the reader, once answered, sees
		 * it gone. */
		pthread_mutex_lock(&node->lock);
		uint64_t ticket = h->inval_ticket;
		h->inval_ticket = 0;
		pthread_mutex_unlock(&node->lock);
		fs_inval_wait(fs, ticket, 200);
		/* This open's answer: nobody else's, never changed. Replied
		 * under the node's lock, which the release that frees it takes:
		 * the reader, woken by the reply, may close before
		 * fuse_reply_buf returns (and ASan checks the bytes after). */
		pthread_mutex_lock(&node->lock);
		size_t start = (uint64_t)off < h->answer.len ? (size_t)off : h->answer.len;
		size_t n = h->answer.len - start < size ? h->answer.len - start : size;
		fuse_reply_buf(req, n ? h->answer.data + start : NULL, n);
		pthread_mutex_unlock(&node->lock);
		return;
	}
	pthread_mutex_lock(&node->lock);
	if (node->input) {
		/* What the feeds of this open's writes answered (an input
		 * holds nothing else), each byte once. */
		size_t n =
		    h->answer.len - h->answer_read < size ? h->answer.len - h->answer_read : size;
		fuse_reply_buf(req, n ? h->answer.data + h->answer_read : NULL, n);
		h->answer_read += n;
		pthread_mutex_unlock(&node->lock);
		return;
	}
	handle_trunc_locked(h);
	rc = node_check_expiry(fs, node);
	if (rc) {
		pthread_mutex_unlock(&node->lock);
		fuse_reply_err(req, -rc);
		return;
	}
	if (node->trunc_want) {
		/* Another open's O_TRUNC, not applied yet: the file is empty,
		 * as the kernel shows it to the opens it serves from pages. */
		pthread_mutex_unlock(&node->lock);
		fuse_reply_buf(req, NULL, 0);
		return;
	}
	const struct fs_file_shape *direct = direct_shape(node);
	if (direct) {
		struct fs_path p;
		struct ks_key k;
		struct buf out = BUF_INIT;
		fs_path_init(&p);
		rc = direct_key(fs, node, &p, &k);
		if (!rc && !h->writes) {
			/* A pass of a read-only open, from offset 0 on, reads one
			 * version (a bitmap replaced meanwhile, by a rename or a
			 * batch, shows no mix of both). Without memory for a
			 * snapshot, each read reads the latest. */
			if (off == 0 || !h->snap) {
				ks_snap_free(fs->ks, h->snap);
				h->snap = ks_snap_new(fs->ks);
			}
			k.snap = h->snap;
		}
		if (!rc)
			rc = direct->read(fs, &k, (uint64_t)off, size, &out);
		pthread_mutex_unlock(&node->lock);
		if (rc)
			fuse_reply_err(req, fs_errno(rc));
		else
			fuse_reply_buf(req, out.len ? out.data : NULL, out.len);
		buf_release(&out);
		fs_path_release(&p);
		return;
	}
	if (node->input) {
		pthread_mutex_unlock(&node->lock);
		fuse_reply_buf(req, NULL, 0); /* an input holds nothing */
		return;
	}
	if (node->live && node->loaded && (uint64_t)off >= node->data.len) {
		/* a growing view read to its end: look again (tail -f) */
		buf_reset(&node->data);
		node->loaded = false;
	}
	rc = node->loaded || node->pin ? 0 : node_pin_locked(fs, node);
	if (!rc && !node->pin)
		rc = node_load_locked(fs, node);
	if (rc) {
		pthread_mutex_unlock(&node->lock);
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	const char *data = node->pin ? node->pin_data : node->data.data;
	size_t len = node->pin ? node->pin_len : node->data.len;
	size_t start = (uint64_t)off < len ? (size_t)off : len;
	size_t n = len - start < size ? len - start : size;
	fuse_reply_buf(req, n ? data + start : NULL, n);
	pthread_mutex_unlock(&node->lock);
}

/* The shape whose check applies to node's contents: an entry's, unless it
 * is a scratch file, which holds anything until a rename stores it (the
 * shape's adopt checks it then). NULL: no check. */
static const struct fs_shape *check_shape(struct fs *fs, struct fs_node *node)
{
	if (node->kind != FS_ENTRY || fs_itable_local(fs->it, node) == FS_LOCAL_SCRATCH)
		return NULL;
	return fs_shape_of(node->ktype);
}

/* Apply a write to the buffer; for entries whose shape restricts what a
 * file may hold, check the result first and refuse it whole. Node lock
 * held, node loaded. */
static int buffer_write_locked(struct fs *fs, struct fs_node *node, const char *data, size_t size,
			       size_t off)
{
	const struct fs_shape *sh = check_shape(fs, node);
	if (sh && sh->check) {
		struct buf tmp = BUF_INIT;
		size_t len = off + size > node->data.len ? off + size : node->data.len;
		int rc = buf_resize(&tmp, len);
		if (rc)
			return rc;
		if (node->data.len)
			memcpy(tmp.data, node->data.data, node->data.len);
		memcpy(tmp.data + off, data, size);
		rc = sh->check(node->name, node->namelen, tmp.data, tmp.len);
		if (rc) {
			node->bad = -EINVAL;
			buf_release(&tmp);
			return rc;
		}
		buf_release(&node->data);
		node->data = tmp;
		node->dirty = true;
		return 0;
	}
	if (off + size > node->data.len) {
		/* Only a hole before the write needs zeros: an append (the
		 * common case, sequential writes) touches each byte once. */
		int rc = off > node->data.len ? buf_resize(&node->data, off) : 0;
		if (!rc)
			rc = buf_reserve(&node->data, off + size - node->data.len);
		if (rc)
			return rc;
		memcpy(node->data.data + off, data, size);
		node->data.len = off + size;
		node->data.data[node->data.len] = '\0';
	} else {
		memcpy(node->data.data + off, data, size);
	}
	node->dirty = true;
	return 0;
}

/*
 * A write to an input: every line it completes is fed now, in one
 * batch; the offset is ignored (an input is a stream). A refused write
 * leaves the buffer as it was. Node lock held.
 *
 * A shape with feed_batch collects complete lines until that many bytes
 * are waiting (or the file is closed or synced), since each of its feeds
 * costs more than the lines do (a bloom filter rewrites its bitset). A
 * refused feed then drops every line collected since the last one: the
 * buffer keeps only the incomplete line that came before them.
 */
static int input_write_locked(struct fs *fs, struct fs_node *node, const char *data, size_t size,
			      struct fs_handle *h)
{
	const struct fs_shape *sh = node->kind == FS_ENTRY ? fs_shape_of(node->ktype) : NULL;
	const struct fs_file_shape *fsh =
	    node->kind == FS_KEY ? fs_file_shape_named(node->name, node->namelen, false) : NULL;
	/* A line ends in the input's own byte (NUL for binary-safe ones). */
	char sep = sh && sh->input_sep	   ? sh->input_sep(node->name, node->namelen)
		   : fsh && fsh->input_sep ? fsh->input_sep(node->name, node->namelen)
					   : '\n';
	size_t before = node->data.len;
	int rc = buf_add(&node->data, data, size);
	if (rc)
		return rc;
	const char *nl = memrchr(node->data.data + before, sep, size);
	if (!nl)
		return 0;
	size_t upto = (size_t)(nl - node->data.data) + 1;
	if (sh && sh->feed_batch && upto < sh->feed_batch)
		return 0;
	/* The answer of this open's last fed write replaces the one before. */
	buf_reset(&h->answer);
	h->answer_read = 0;
	rc = input_feed_locked(fs, node, upto, &h->answer);
	if (rc) {
		const char *old = before ? memrchr(node->data.data, sep, before) : NULL;
		size_t keep_from = old ? (size_t)(old - node->data.data) + 1 : 0;
		memmove(node->data.data, node->data.data + keep_from, before - keep_from);
		buf_resize(&node->data, before - keep_from);
	}
	return rc;
}

/*
 * A write that would make the value longer than STRING_MAX. A file is
 * stored whole at its close, so refusing only this write would still
 * store what came before it: `cp` of a 1 GiB file would replace the
 * value with its first 512 MiB, or create the key. The node turns bad
 * instead: its buffer goes (another open reads the stored value again),
 * later writes are refused at once, and the commits at flush and close
 * fail with EFBIG and store nothing. A bitmap written in place keeps
 * what earlier writes stored, each its own batch. Node lock held.
 */
static int node_refuse_big_locked(struct fs *fs, struct fs_node *node)
{
	if (node->bad == -EFBIG)
		return -EFBIG; /* said once */
	struct fs_path p;
	fs_path_init(&p);
	if (fs_itable_path(fs->it, node, &p) == 0)
		LOG_ERR("'%s%s%s' would pass %llu bytes, the most a value holds: refused, and "
			"nothing of this file is stored",
			p.key.data, p.entry.len ? "/" : "", p.entry.len ? p.entry.data : "",
			(unsigned long long)STRING_MAX);
	fs_path_release(&p);
	if (!direct_shape(node) && !node->input) {
		node->bad = -EFBIG;
		fs_node_set_empty(node);
		node->loaded = false;
	}
	return -EFBIG;
}

void fs_op_write(fuse_req_t req, fuse_ino_t ino, const char *data, size_t size, off_t off,
		 struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_write(req, fuse_req_userdata(req), jt, data, size, off, fi);
		return;
	}
	struct fs *fs = fuse_req_userdata(req);
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	struct fs_node *node = h->node;
	const struct fs_file_shape *direct;
	bool moved = false;
	int rc;
	pthread_mutex_lock(&node->lock);
	handle_trunc_locked(h);
	if (off < 0 || (uint64_t)off + size > STRING_MAX || node->bad == -EFBIG) {
		rc = node_refuse_big_locked(fs, node);
	} else if ((direct = direct_shape(node)) != NULL) {
		struct fs_path p;
		struct ks_key k;
		fs_path_init(&p);
		rc = direct_key(fs, node, &p, &k);
		/* An unlinked file's writes have no home (as a buffered one's). */
		struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
		k.attr = &ch;
		if (!rc && !p.unhashed)
			rc = direct->write(fs, &k, (uint64_t)off, data, size);
		k.attr = NULL;
		if (!rc)
			fs_seq_store_locked(fs, node);
		fs_path_release(&p);
	} else if (node->input) {
		rc = input_write_locked(fs, node, data, size, h);
	} else if (h->adds) {
		rc = buf_add(&h->added, data, size); /* the offset is the file's end */
	} else {
		rc = node_load_locked(fs, node);
		if (!rc && h->append && (uint64_t)off != node->data.len) {
			off = (off_t)node->data.len; /* see struct fs_handle */
			moved = true;
		}
		if (!rc)
			rc = buffer_write_locked(fs, node, data, size, (size_t)off);
		if (!rc)
			clock_gettime(CLOCK_REALTIME, &node->changed);
	}
	pthread_mutex_unlock(&node->lock);
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		fuse_reply_write(req, size);
	if (!rc && moved) {
		/* The kernel placed the write elsewhere: its size and pages of
		 * the file are wrong until it asks again. */
		struct fs_inval iv;
		fs_inval_init(&iv);
		if (fs_inval_add(&iv, 0, ino, "", 0) == 0)
			fs_inval_send(fs, &iv);
		fs_inval_release(&iv);
	}
}

/* Store what open file fi holds (flush, fsync): its pending O_TRUNC, its
 * appends and its buffer. */
static int handle_flush(struct fs *fs, struct fuse_file_info *fi)
{
	struct fs_handle *h = (struct fs_handle *)(uintptr_t)fi->fh;
	pthread_mutex_lock(&h->node->lock);
	handle_trunc_locked(h);
	int rc = handle_add_locked(fs, h);
	if (!rc)
		rc = node_commit_locked(fs, h->node, false);
	pthread_mutex_unlock(&h->node->lock);
	return rc;
}

void fs_op_flush(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_flush(req, fuse_req_userdata(req), jt, false);
		return;
	}
	(void)ino;
	fuse_reply_err(req, fs_errno(handle_flush(fuse_req_userdata(req), fi)));
}

void fs_op_fsync(fuse_req_t req, fuse_ino_t ino, int datasync, struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_flush(req, fuse_req_userdata(req), jt, true);
		return;
	}
	(void)ino;
	(void)datasync;
	struct fs *fs = fuse_req_userdata(req);
	int rc = handle_flush(fs, fi);
	if (!rc)
		rc = ks_sync(fs->ks);
	fuse_reply_err(req, fs_errno(rc));
}

void fs_op_release(fuse_req_t req, fuse_ino_t ino, struct fuse_file_info *fi)
{
	struct fs_node *jt = fs_itable_get(((struct fs *)fuse_req_userdata(req))->it, ino);
	if (jt && jt->kind != FS_JTREE)
		jt = NULL;
	if (jt) {
		fs_jtree_release(req, fuse_req_userdata(req), jt, fi);
		return;
	}
	(void)ino;
	struct fs *fs = fuse_req_userdata(req);
	fs_file_close(fs, (struct fs_handle *)(uintptr_t)fi->fh);
	fuse_reply_err(req, 0);
}

/* Truncate a key in place (its shape's direct): shrink or grow it. */
static int direct_truncate(struct fs *fs, struct fs_node *node, const struct fs_file_shape *direct,
			   uint64_t size)
{
	struct fs_path p;
	struct ks_key k;
	fs_path_init(&p);
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH};
	int rc = direct_key(fs, node, &p, &k);
	k.attr = &ch;
	if (!rc)
		rc = direct->truncate(fs, &k, size);
	k.attr = NULL;
	fs_path_release(&p);
	return rc;
}

int fs_node_truncate(struct fs *fs, struct fs_node *node, uint64_t size, struct fs_handle *h)
{
	bool via_handle = h != NULL;
	if (size > STRING_MAX && !h)
		return -EFBIG;
	pthread_mutex_lock(&node->lock);
	if (h)
		handle_trunc_locked(h);
	if (size > STRING_MAX || (h && node->bad == -EFBIG)) {
		/* Through an open file, as a write past the limit: `cp` of a
		 * sparse file extends it with ftruncate, and what it wrote
		 * before must not be stored either. */
		int rc = node_refuse_big_locked(fs, node);
		pthread_mutex_unlock(&node->lock);
		return rc;
	}
	trunc_apply_locked(node); /* a size is set on the emptied file */
	int rc = 0;
	if (node->input) {
		pthread_mutex_unlock(&node->lock);
		return 0; /* an input holds nothing to truncate */
	}
	const struct fs_file_shape *direct = direct_shape(node);
	if (direct) {
		rc = direct_truncate(fs, node, direct, size);
		if (!rc)
			fs_seq_store_locked(fs, node);
		pthread_mutex_unlock(&node->lock);
		return rc;
	}
	if (size == 0) {
		fs_node_set_empty(node);
	} else {
		rc = node_load_locked(fs, node);
	}
	const struct fs_shape *sh = check_shape(fs, node);
	if (!rc && sh && sh->check && size > node->data.len) {
		/* Growing adds zero bytes: ask the shape about the result. */
		struct buf tmp = BUF_INIT;
		rc = buf_set(&tmp, node->data.data, node->data.len);
		if (!rc)
			rc = buf_resize(&tmp, (size_t)size);
		if (!rc)
			rc = sh->check(node->name, node->namelen, tmp.data, tmp.len);
		buf_release(&tmp);
	} else if (!rc && sh && sh->check) {
		rc = sh->check(node->name, node->namelen, node->data.data, (size_t)size);
	}
	if (!rc)
		rc = buf_resize(&node->data, (size_t)size);
	if (!rc) {
		node->dirty = true;
		clock_gettime(CLOCK_REALTIME, &node->changed);
		if (!via_handle)
			rc = node_commit_locked(fs, node, true);
		if (rc && !via_handle)
			node->dirty = false; /* nobody else may commit it later */
	}
	node_unload_locked(fs, node);
	pthread_mutex_unlock(&node->lock);
	return rc;
}

int fs_file_store_locked(struct fs *fs, struct fs_node *node)
{
	return node_commit_locked(fs, node, true);
}

int fs_file_store_pending(struct fs *fs, struct fs_node *node)
{
	pthread_mutex_lock(&node->lock);
	int rc = fs_itable_local(fs->it, node) == FS_LOCAL_PENDING
		     ? node_commit_locked(fs, node, true)
		     : 0;
	pthread_mutex_unlock(&node->lock);
	return rc;
}

/* The node's name as the tree shows it (NS/KEY/ENTRY, escaped), for
 * the log. */
static void node_display(const struct fs_path *p, struct buf *out)
{
	const struct buf *part[] = {&p->ns, &p->key, &p->entry};
	struct buf esc = BUF_INIT;
	for (size_t i = 0; i < 3; i++) {
		if (part[i]->len == 0 || names_encode(part[i]->data, part[i]->len, &esc) != 0)
			continue;
		if (out->len)
			buf_add(out, "/", 1);
		buf_add(out, esc.data, esc.len);
	}
	buf_release(&esc);
	if (!out->data)
		buf_add(out, "?", 1);
}

void fs_file_scratch_discarded_locked(struct fs *fs, struct fs_node *node, const char *when)
{
	struct fs_path p;
	struct buf name = BUF_INIT;
	const char *tool = fs_scratch_tool(node->name, node->namelen);
	fs_path_init(&p);
	if (fs_itable_path(fs->it, node, &p) == 0)
		node_display(&p, &name);
	LOG_INFO("'%s' (%s), a scratch file no rename stored, is discarded %s: its %zu bytes "
		 "were never stored",
		 name.data ? name.data : node->name, tool ? tool : "a temp file", when,
		 node->data.len);
	buf_release(&name);
	fs_path_release(&p);
}

/*
 * What an open file holds when the daemon exits (SIGTERM, SIGINT,
 * SIGHUP, an unmount with files open): the kernel sends no release for
 * them any more, so their buffers would go unstored without a word. A
 * local file system keeps written data at unmount; so does this. Node
 * lock held.
 */
static void node_commit_at_exit_locked(struct fs *fs, struct fs_node *node)
{
	struct fs_path p;
	struct buf name = BUF_INIT;
	size_t len = node->data.len;
	enum fs_local local = fs_itable_local(fs->it, node);
	fs_path_init(&p);
	int rc = fs_itable_path(fs->it, node, &p);
	node_display(&p, &name);
	if (rc) {
		LOG_ERR("at exit: a file still open is lost: %s", strerror(-rc));
	} else if (local == FS_LOCAL_SCRATCH || p.unhashed) {
		LOG_WARN("at exit: '%s' was still open: its %zu bytes are dropped (%s)", name.data,
			 len,
			 p.unhashed ? "its name was removed" : "a scratch file no rename stored");
	} else if ((rc = node_commit_locked(fs, node, true)) != 0) {
		LOG_ERR("at exit: '%s' was still open: its %zu bytes are lost: %s", name.data, len,
			strerror(-rc == KV_EWRONGTYPE ? EIO : -rc));
	} else {
		LOG_INFO("at exit: '%s' was still open: its %zu bytes are stored", name.data, len);
	}
	node->dirty = false;
	buf_release(&name);
	fs_path_release(&p);
}

/*
 * What an O_APPEND handle of a file that adds (JSON) collected when the
 * daemon exits: added as its flush would have, and logged by name. Node
 * lock held.
 */
static void handle_add_at_exit_locked(struct fs *fs, struct fs_handle *h)
{
	struct fs_path p;
	struct buf name = BUF_INIT;
	size_t len = h->added.len;
	fs_path_init(&p);
	int rc = fs_itable_path(fs->it, h->node, &p);
	node_display(&p, &name);
	if (rc) {
		LOG_ERR("at exit: a file still open is lost: %s", strerror(-rc));
	} else if (p.unhashed) {
		LOG_WARN("at exit: '%s' was still open: its %zu appended bytes are dropped (its "
			 "name was removed)",
			 name.data, len);
	} else if ((rc = handle_add_locked(fs, h)) != 0) {
		LOG_ERR("at exit: '%s' was still open: its %zu appended bytes are lost: %s",
			name.data, len, strerror(-rc == KV_EWRONGTYPE ? EIO : -rc));
	} else {
		LOG_INFO("at exit: '%s' was still open: its %zu appended bytes are added",
			 name.data, len);
	}
	buf_reset(&h->added);
	buf_release(&name);
	fs_path_release(&p);
}

void fs_file_commit_all(struct fs *fs)
{
	/* Appends a handle holds first, as its flush would add them before
	 * the node's commit. */
	pthread_mutex_lock(&fs->handles_lock);
	for (struct fs_handle *h = fs->handles; h; h = h->next) {
		if (!h->node || !h->adds || h->added.len == 0)
			continue;
		pthread_mutex_lock(&h->node->lock);
		handle_add_at_exit_locked(fs, h);
		pthread_mutex_unlock(&h->node->lock);
	}
	pthread_mutex_unlock(&fs->handles_lock);

	size_t n = 0;
	struct fs_node **v = fs_itable_nodes(fs->it, &n);
	if (!v) {
		LOG_ERR("at exit: out of memory: what files still open hold is lost");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct fs_node *node = v[i];
		pthread_mutex_lock(&node->lock);
		if (node->kind == FS_JTREE)
			fs_jtree_commit_at_exit_locked(fs, node); /* a JSON tree's file */
		else if (node->dirty || node->bad || (node->input && node->data.len))
			node_commit_at_exit_locked(fs, node);
		else if (fs_itable_local(fs->it, node) == FS_LOCAL_SCRATCH)
			fs_file_scratch_discarded_locked(fs, node, "at exit");
		pthread_mutex_unlock(&node->lock);
		fs_itable_unref(fs->it, node);
	}
	free(v);
}

int fs_file_commit(struct fs *fs, struct fs_node *node)
{
	pthread_mutex_lock(&node->lock);
	int rc = node_commit_locked(fs, node, false);
	pthread_mutex_unlock(&node->lock);
	return rc;
}

/* The most a node not open keeps of a removed value for an open that
 * may be on its way (fs_file_keep). */
#define FS_KEEP_RECENT_MAX (1u << 20)

int fs_file_keep(struct fs *fs, struct fs_node *node)
{
	int rc = 0;
	pthread_mutex_lock(&node->lock);
	bool keep = node->opens > 0;
	if (!keep && now_ms() - node->used_ms < FS_RECENT_MS && !node->loaded) {
		/* Not open: nothing is lost without it (an open of it is then
		 * ESTALE, and the kernel looks again), so only a small one. */
		struct stat st;
		double t;
		keep = fs_node_stat(fs, node, &st, &t) == 0 && S_ISREG(st.st_mode) &&
		       st.st_size <= FS_KEEP_RECENT_MAX;
	}
	if (keep && !node->loaded && !node->input &&
	    fs_itable_local(fs->it, node) == FS_LOCAL_NONE) {
		rc = node_load_locked(fs, node);
		if (node->opens == 0)
			rc = 0; /* see above */
	}
	pthread_mutex_unlock(&node->lock);
	return rc;
}

int fs_file_open_gone_locked(struct fs *fs, struct fs_node *node, int flags, bool *gone)
{
	*gone = node->kind != FS_ROOT && fs_itable_local(fs->it, node) == FS_LOCAL_NONE &&
		fs_itable_gone(fs->it, node);
	if (!*gone || node->loaded)
		return 0;
	if ((flags & O_ACCMODE) == O_WRONLY) {
		fs_node_set_empty(node);
		return 0;
	}
	LOG_INFO("open of inode %llu: its name was removed or replaced: ESTALE",
		 (unsigned long long)node->ino);
	return -ESTALE;
}

void fs_file_set_type(struct fs_node *node, enum kv_type t)
{
	pthread_mutex_lock(&node->lock);
	node->ktype = t;
	pthread_mutex_unlock(&node->lock);
}
