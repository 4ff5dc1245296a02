/*
 * fs_node: the helpers every fs file uses, at the bottom of the layer
 * (over the inode table only): where a node is (its path, its key, the
 * kind of its children), the entry description a shape fills, the names
 * editors give their temp files, a node's attributes as stat shows them
 * (defaults, stored records, what the node itself holds), the store
 * counter, the one errno mapping, the thread that sends the kernel its
 * invalidations, and the hooks several shapes share (empty-file entries,
 * views, numbered cursors). Nothing here knows a type. Layer: fs.
 */
#include "fs/fs_int.h"

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/ks_attr.h"
#include "fs/fs_xval.h"

/*
 * The notifier thread: it alone talks to the kernel about changes the
 * kernel did not make (libfuse: a notification sent from a request
 * handler may deadlock with the request the kernel is serving; see
 * docs/architecture.md section 5). It sends, in order, the queue of
 * invalidations the handlers hand it, and watches the expiries kvfs knows
 * of: at a key's deadline it looks the key up, and a key that is gone is
 * deleted from the kernel's cache (a watcher of the key gets DELETE_SELF), one
 * whose expiry moved is watched again. Once stopped (the session ends) it
 * sends nothing more, and whatever is queued or watched is dropped.
 */
struct fs_expiry {
	uint64_t when; /* Unix ms: the key's expiry */
	uint64_t parent, ino;
	struct buf ns, key; /* the key's stored names (ns empty with -o ns=) */
};

struct fs_notifier {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct fs_inval queue;
	/* Batches handed in, and sent (fs_inval_ticket, fs_inval_wait);
	 * `sent` moves under lock, and `done` wakes its waiters. */
	uint64_t queued, sent;
	pthread_cond_t done;
	/* A binary min-heap of expiries by `when`, at most FS_EXPIRY_WATCH_MAX. */
	struct fs_expiry *heap;
	size_t nheap, capheap;
	bool full_logged;
	bool stop;
	bool running;
};

static void inval_send_now(struct fs *fs, struct fs_inval *iv)
{
	struct buf name = BUF_INIT;
	for (size_t i = 0; i < iv->len && fs->se; i++) {
		const struct fs_inval_item *x = &iv->v[i];
		bool named = x->parent && names_encode(x->name, x->n, &name) == 0;
		/* A delete fails (ENOENT) where the kernel has no such name,
		 * or not for this inode; it then forgets the name as it can. */
		if (named && !(x->gone && x->ino &&
			       fuse_lowlevel_notify_delete(fs->se, x->parent, x->ino, name.data,
							   name.len) == 0))
			fuse_lowlevel_notify_inval_entry(fs->se, x->parent, name.data, name.len);
		if (x->ino)
			fuse_lowlevel_notify_inval_inode(fs->se, x->ino, 0, 0);
	}
	buf_release(&name);
	fs_inval_release(iv);
}

static void expiry_release(struct fs_expiry *e)
{
	buf_release(&e->ns);
	buf_release(&e->key);
}

static void heap_swap(struct fs_expiry *h, size_t a, size_t b)
{
	struct fs_expiry t = h[a];
	h[a] = h[b];
	h[b] = t;
}

/* Add e (its buffers move into the heap). Notifier lock held. */
static int heap_push(struct fs_notifier *n, struct fs_expiry *e)
{
	struct fs_expiry *nh = array_grow(n->heap, &n->capheap, n->nheap, sizeof(*nh), 16);
	if (!nh)
		return -ENOMEM;
	n->heap = nh;
	size_t i = n->nheap++;
	nh[i] = *e;
	while (i > 0 && nh[(i - 1) / 2].when > nh[i].when) {
		heap_swap(nh, i, (i - 1) / 2);
		i = (i - 1) / 2;
	}
	return 0;
}

/* Take the earliest expiry into *out. Notifier lock held, heap not empty. */
static void heap_pop(struct fs_notifier *n, struct fs_expiry *out)
{
	struct fs_expiry *h = n->heap;
	*out = h[0];
	h[0] = h[--n->nheap];
	for (size_t i = 0;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < n->nheap && h[l].when < h[m].when)
			m = l;
		if (r < n->nheap && h[r].when < h[m].when)
			m = r;
		if (m == i)
			break;
		heap_swap(h, i, m);
		i = m;
	}
}

/* The deadline of e has come: is its key gone? No lock held. */
static void expiry_check(struct fs *fs, struct fs_expiry *e)
{
	struct ks_key k = {0};
	struct ks_info info;
	if (fs->ns) {
		k.ns = fs->ns;
		k.nslen = fs->nslen;
	} else {
		k.ns = e->ns.data;
		k.nslen = e->ns.len;
	}
	k.key = e->key.data;
	k.klen = e->key.len;
	int rc = ks_lookup(fs->ks, &k, &info);
	if (rc == 0 && info.expire_ms) {
		/* Moved (or this clock's millisecond is not over yet). */
		fs_expiry_watch(fs, e->parent, e->ino, &k,
				info.expire_ms > e->when ? info.expire_ms : e->when + 10);
		return;
	}
	if (rc != -ENOENT)
		return; /* persistent now, or unreadable: nothing to say */
	struct fs_inval iv;
	fs_inval_init(&iv);
	if (fs_inval_add_gone(&iv, e->parent, e->ino, e->key.data, e->key.len) == 0)
		inval_send_now(fs, &iv);
	fs_inval_release(&iv);
}

static void *notifier_main(void *arg)
{
	struct fs *fs = arg;
	struct fs_notifier *n = fs->notifier;
	pthread_mutex_lock(&n->lock);
	for (;;) {
		while (!n->stop && n->queue.len == 0 &&
		       (n->nheap == 0 || n->heap[0].when > now_ms())) {
			if (n->nheap == 0) {
				pthread_cond_wait(&n->cond, &n->lock);
				continue;
			}
			/* Expiries are Unix times: the condition's clock is
			 * CLOCK_REALTIME. */
			uint64_t when = n->heap[0].when;
			struct timespec ts = {.tv_sec = (time_t)(when / 1000),
					      .tv_nsec = (long)(when % 1000) * 1000000};
			pthread_cond_timedwait(&n->cond, &n->lock, &ts);
		}
		if (n->stop)
			break;
		struct fs_inval batch = n->queue;
		uint64_t upto = n->queued;
		fs_inval_init(&n->queue);
		bool due = n->nheap > 0 && n->heap[0].when <= now_ms();
		struct fs_expiry e;
		if (due)
			heap_pop(n, &e);
		pthread_mutex_unlock(&n->lock);
		inval_send_now(fs, &batch);
		if (due) {
			expiry_check(fs, &e);
			expiry_release(&e);
		}
		pthread_mutex_lock(&n->lock);
		n->sent = upto;
		pthread_cond_broadcast(&n->done);
	}
	n->sent = n->queued; /* nothing more is sent: nobody waits for it */
	pthread_cond_broadcast(&n->done);
	pthread_mutex_unlock(&n->lock);
	return NULL;
}

uint64_t fs_inval_ticket(struct fs *fs)
{
	struct fs_notifier *n = fs->notifier;
	if (!n)
		return 0;
	pthread_mutex_lock(&n->lock);
	uint64_t t = n->queued;
	pthread_mutex_unlock(&n->lock);
	return t;
}

void fs_inval_wait(struct fs *fs, uint64_t ticket, unsigned max_ms)
{
	struct fs_notifier *n = fs->notifier;
	if (!n || !ticket)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t ns = (uint64_t)ts.tv_nsec + (uint64_t)max_ms * 1000000u;
	ts.tv_sec += (time_t)(ns / 1000000000u);
	ts.tv_nsec = (long)(ns % 1000000000u);
	pthread_mutex_lock(&n->lock);
	while (!n->stop && n->sent < ticket && pthread_cond_timedwait(&n->done, &n->lock, &ts) == 0)
		;
	pthread_mutex_unlock(&n->lock);
}

void fs_notifier_stop(struct fs *fs)
{
	struct fs_notifier *n = fs->notifier;
	if (!n)
		return;
	pthread_mutex_lock(&n->lock);
	bool running = n->running;
	n->stop = true;
	n->running = false;
	pthread_cond_signal(&n->cond);
	pthread_mutex_unlock(&n->lock);
	if (running)
		pthread_join(n->thread, NULL);
	/* Handlers still running may queue more: it is dropped (the lock
	 * and the stop flag live until fs_notifier_free). */
	pthread_mutex_lock(&n->lock);
	fs_inval_release(&n->queue);
	for (size_t i = 0; i < n->nheap; i++)
		expiry_release(&n->heap[i]);
	n->nheap = 0;
	pthread_mutex_unlock(&n->lock);
}

void fs_notifier_free(struct fs *fs)
{
	struct fs_notifier *n = fs->notifier;
	if (!n)
		return;
	fs_notifier_stop(fs);
	free(n->heap);
	pthread_cond_destroy(&n->cond);
	pthread_cond_destroy(&n->done);
	pthread_mutex_destroy(&n->lock);
	free(n);
	fs->notifier = NULL;
}

void fs_inval_send(struct fs *fs, struct fs_inval *iv)
{
	struct fs_notifier *n = fs->notifier;
	if (iv->len == 0 || !n) {
		fs_inval_release(iv); /* no session: nothing to tell */
		return;
	}
	pthread_mutex_lock(&n->lock);
	for (size_t i = 0; i < iv->len && !n->stop; i++) {
		struct fs_inval_item *x = &iv->v[i];
		if (fs_inval_add(&n->queue, x->parent, x->ino, x->name, x->n))
			break; /* out of memory: the entry timeout bounds the damage */
		n->queue.v[n->queue.len - 1].gone = x->gone;
	}
	if (!n->stop)
		n->queued++;
	pthread_cond_signal(&n->cond);
	pthread_mutex_unlock(&n->lock);
	fs_inval_release(iv);
}

void fs_expiry_watch(struct fs *fs, uint64_t parent, uint64_t ino, const struct ks_key *k,
		     uint64_t expire_ms)
{
	struct fs_notifier *n = fs->notifier;
	if (!n || !expire_ms || !parent)
		return;
	struct fs_expiry e = {.when = expire_ms, .parent = parent, .ino = ino};
	buf_init(&e.ns);
	buf_init(&e.key);
	if ((!fs->ns && buf_set(&e.ns, k->ns, k->nslen)) || buf_set(&e.key, k->key, k->klen)) {
		expiry_release(&e);
		return; /* out of memory: the entry timeout bounds the damage */
	}
	pthread_mutex_lock(&n->lock);
	int rc = -ENOSPC;
	if (!n->stop && n->nheap < FS_EXPIRY_WATCH_MAX)
		rc = heap_push(n, &e);
	bool first = rc == 0 && n->heap[0].when == expire_ms;
	if (rc == -ENOSPC && !n->full_logged) {
		n->full_logged = true;
		LOG_WARN("%u expiries are watched already: '%.*s' and later ones leave the "
			 "kernel's cache when their entry timeout ends (at the latest at expiry)",
			 FS_EXPIRY_WATCH_MAX, (int)k->klen, k->key);
	}
	if (first)
		pthread_cond_signal(&n->cond); /* a new earliest deadline */
	pthread_mutex_unlock(&n->lock);
	if (rc)
		expiry_release(&e);
}

void fs_notifier_start(struct fs *fs)
{
	if (fs->notifier)
		return;
	struct fs_notifier *n = calloc(1, sizeof(*n));
	if (!n)
		return; /* invalidations are dropped; entry timeouts still hold */
	pthread_mutex_init(&n->lock, NULL);
	pthread_cond_init(&n->cond, NULL);
	pthread_cond_init(&n->done, NULL);
	fs_inval_init(&n->queue);
	fs->notifier = n;
	n->running = pthread_create(&n->thread, NULL, notifier_main, fs) == 0;
	n->stop = !n->running;
}

void fs_node_watch_expiry(struct fs *fs, struct fs_node *parent, struct fs_node *node,
			  const struct ks_key *k, uint64_t expire_ms)
{
	if (!expire_ms)
		return;
	pthread_mutex_lock(&node->lock);
	bool anew = node->watched != expire_ms;
	node->watched = expire_ms;
	pthread_mutex_unlock(&node->lock);
	if (anew)
		fs_expiry_watch(fs, parent->ino, node->ino, k, expire_ms);
}

void fs_key_changed(struct fs *fs, struct fs_node *node)
{
	struct fs_inval iv;
	fs_inval_init(&iv);
	if (fs_inval_add(&iv, 0, node->ino, "", 0) == 0)
		fs_itable_kids_inval(fs->it, node, &iv);
	fs_inval_send(fs, &iv);
}

void fs_key_changed_named(struct fs *fs, struct fs_node *parent, const char *key, size_t n)
{
	struct fs_node *node = fs_itable_find(fs->it, parent, key, n);
	if (node) {
		fs_key_changed(fs, node);
		fs_itable_unref(fs->it, node);
		return;
	}
	/* No node: at most a miss the kernel remembers. */
	struct fs_inval iv;
	fs_inval_init(&iv);
	fs_inval_add(&iv, parent->ino, 0, key, n);
	fs_inval_send(fs, &iv);
}

/* ---- identities ------------------------------------------------------ */

enum fs_kind fs_child_kind(const struct fs *fs, const struct fs_node *parent)
{
	switch (parent->kind) {
	case FS_ROOT:
		return fs->ns ? FS_KEY : FS_NS;
	case FS_NS:
		return FS_KEY;
	default:
		return FS_ENTRY;
	}
}

void fs_path_key(const struct fs *fs, const struct fs_path *p, struct ks_key *k)
{
	if (fs->ns) {
		k->ns = fs->ns;
		k->nslen = fs->nslen;
	} else {
		k->ns = p->ns.data;
		k->nslen = p->ns.len;
	}
	k->key = p->key.data;
	k->klen = p->key.len;
	k->attr = NULL;
	k->snap = NULL;
}

/* The path of `name` inside `parent`. */
int fs_child_path(struct fs *fs, struct fs_node *parent, const char *name, size_t n,
		  struct fs_path *p)
{
	int rc = fs_itable_path(fs->it, parent, p);
	if (rc)
		return rc;
	switch (fs_child_kind(fs, parent)) {
	case FS_NS:
		return buf_set(&p->ns, name, n);
	case FS_KEY:
		return buf_set(&p->key, name, n);
	default:
		return buf_set(&p->entry, name, n);
	}
}

/* ---- scratch names: the temp and backup names of real tools ---------- */

/* n bytes at p, all of them letters or digits (what mkstemp's XXXXXX
 * becomes). */
static bool all_alnum(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)p[i]))
			return false;
	return true;
}

static bool has_suffix(const char *name, size_t n, const char *suf)
{
	size_t sn = strlen(suf);
	return n > sn && memcmp(name + n - sn, suf, sn) == 0;
}

/* rsync: ".NAME.XXXXXX" */
static bool is_rsync_temp(const char *name, size_t n)
{
	return n >= 9 && name[0] == '.' && name[n - 7] == '.' && all_alnum(name + n - 6, 6);
}

/* sed -i: "sedXXXXXX"; ln -f, cp -l and cp -s over a file: "CuXXXXXX";
 * perl -i: "XXXXXXXX" (mkstemp fills the last six). */
static bool is_prefixed_temp(const char *name, size_t n)
{
	return (n == 9 && has_prefix(name, n, "sed") && all_alnum(name + 3, 6)) ||
	       (n == 8 && (has_prefix(name, n, "Cu") || has_prefix(name, n, "XX")) &&
		all_alnum(name + 2, 6));
}

/* Python's tempfile (mkstemp, NamedTemporaryFile, the usual
 * write-then-os.replace): "tmp" and eight of [a-z0-9_]. */
static bool is_python_temp(const char *name, size_t n)
{
	if (n != 11 || !has_prefix(name, n, "tmp"))
		return false;
	for (size_t i = 3; i < n; i++)
		if (!((name[i] >= 'a' && name[i] <= 'z') || (name[i] >= '0' && name[i] <= '9') ||
		      name[i] == '_'))
			return false;
	return true;
}

/* patch: its output "NAME.oXXXXXX" and rejects "NAME.rXXXXXX" (renamed
 * onto NAME and NAME.rej), its backup "NAME.orig", its rejects
 * "NAME.rej". */
static bool is_patch_name(const char *name, size_t n)
{
	if (n >= 9 && name[n - 8] == '.' && (name[n - 7] == 'o' || name[n - 7] == 'r') &&
	    all_alnum(name + n - 6, 6))
		return true;
	return has_suffix(name, n, ".orig") || has_suffix(name, n, ".rej");
}

/* vim's swap file ".NAME.swp", then ".swo" ... ".swa", ".svz" ... ".saa"
 * while others exist, and its probe ".NAME.swpx". */
static bool is_vim_swap(const char *name, size_t n)
{
	if (n < 3 || name[0] != '.')
		return false;
	if (n >= 7 && has_suffix(name, n, ".swpx"))
		return true;
	if (n < 6 || memcmp(name + n - 4, ".s", 2) != 0)
		return false;
	char a = name[n - 2], b = name[n - 1];
	return a >= 'a' && a <= 'w' && b >= 'a' && b <= 'z' && !(a == 'w' && b > 'p');
}

/* vim's test of whether it may create a file here: "4913", or 4913 plus
 * a multiple of 123 while that name exists. */
static bool is_vim_probe(const char *name, size_t n)
{
	uint64_t v;
	return n >= 4 && name[0] != '0' && parse_u64(name, n, &v) == 0 && v >= 4913 &&
	       (v - 4913) % 123 == 0;
}

/* Backups: "NAME~" (vim, emacs, cp/mv/install -b, rsync -b) and
 * "NAME.~N~" (numbered, the same tools). */
static bool is_backup(const char *name, size_t n)
{
	return n >= 2 && name[n - 1] == '~';
}

/* emacs: its auto-save file "#NAME#" and its lock ".#NAME". */
static bool is_emacs_name(const char *name, size_t n)
{
	return (n >= 3 && name[0] == '#' && name[n - 1] == '#') ||
	       (n >= 3 && name[0] == '.' && name[1] == '#');
}

/* The one table of scratch names (docs/mapping.md, "Scratch names"). */
static const struct {
	const char *tool;
	bool (*match)(const char *name, size_t n);
} scratch_names[] = {
    {"vim's swap file", is_vim_swap}, /* first: ".f.swp" before rsync's */
    {"rsync's temp file", is_rsync_temp},
    {"a temp file of sed -i, perl -i or ln -f", is_prefixed_temp},
    {"python's temp file", is_python_temp},
    {"patch's file", is_patch_name},
    {"vim's probe", is_vim_probe},
    {"a backup", is_backup},
    {"emacs's file", is_emacs_name},
};

const char *fs_scratch_tool(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(scratch_names) / sizeof(scratch_names[0]); i++)
		if (scratch_names[i].match(name, n))
			return scratch_names[i].tool;
	return NULL;
}

bool fs_is_scratch_name(const char *name, size_t n)
{
	return fs_scratch_tool(name, n) != NULL;
}

bool fs_is_rsync_temp(const char *name, size_t n)
{
	return !is_vim_swap(name, n) && is_rsync_temp(name, n);
}

bool fs_is_swap_name(const char *name, size_t n)
{
	return is_vim_swap(name, n);
}

void fs_entry_init(struct fs_entry *e)
{
	memset(e, 0, sizeof(*e));
	buf_init(&e->name);
}

void fs_entry_release(struct fs_entry *e)
{
	buf_release(&e->name);
}

int fs_entry_set(struct fs_entry *e, const char *name, size_t n, mode_t mode, uint64_t size)
{
	e->mode = mode;
	e->size = size;
	return buf_set(&e->name, name, n);
}

/* ---- attributes ------------------------------------------------------ */

static void timespec_from_us(struct timespec *ts, uint64_t us)
{
	ts->tv_sec = (time_t)(us / 1000000u);
	ts->tv_nsec = (long)(us % 1000000u) * 1000;
}

/* The permission bits of an object without stored ones: from -o umask,
 * keeping a read-only object (a view) read-only. */
static mode_t default_perm(const struct fs *fs, mode_t mode)
{
	mode_t perm = (S_ISDIR(mode) ? 0777 : 0666) & ~fs->opt.umask;
	if (!(mode & 0222))
		perm &= ~(mode_t)0222;
	return perm;
}

void fs_stat_fill(const struct fs *fs, mode_t mode, uint64_t size, uint64_t version,
		  uint64_t expire_ms, struct stat *st, double *timeout)
{
	memset(st, 0, sizeof(*st));
	st->st_mode = (mode & S_IFMT) | default_perm(fs, mode);
	st->st_nlink = 1;
	st->st_uid = fs->opt.uid;
	st->st_gid = fs->opt.gid;
	st->st_blksize = 4096;
	st->st_size = (off_t)size;
	st->st_blocks = (blkcnt_t)((size + 511) / 512);
	st->st_mtim = fs->mount_time;
	if (version)
		timespec_from_us(&st->st_mtim, version >> 11);
	st->st_ctim = st->st_atim = st->st_mtim;
	*timeout = fs->opt.timeout;
	if (expire_ms) {
		uint64_t now = now_ms();
		double left = expire_ms > now ? (double)(expire_ms - now) / 1000 : 0;
		if (left < *timeout)
			*timeout = left;
	}
}

void fs_attr_entry(const struct fs_shape *sh, const char *name, size_t n, const char **e,
		   size_t *en)
{
	/* A list position is one record whatever width its name has now. */
	if (sh && sh->padded)
		while (n > 1 && name[0] == '0') {
			name++;
			n--;
		}
	*e = name;
	*en = n;
}

static void apply_times(struct stat *st, const struct ks_attr *a)
{
	st->st_mtim = a->mtime;
	st->st_atim = a->atime;
	st->st_ctim = a->ctime;
}

void fs_stat_attrs(struct fs *fs, const struct fs_shape *sh, const struct ks_key *k,
		   uint64_t version, const char *entry, size_t elen, struct stat *st)
{
	fs_stat_attrs_cached(fs, sh, k, version, entry, elen, st, NULL);
}

void fs_stat_attrs_cached(struct fs *fs, const struct fs_shape *sh, const struct ks_key *k,
			  uint64_t version, const char *entry, size_t elen, struct stat *st,
			  struct fs_key_attrs *kc)
{
	struct ks_attr a;
	const char *e = NULL;
	size_t en = 0;
	int rc;
	if (entry)
		fs_attr_entry(sh, entry, elen, &e, &en);
	if (entry && kc) {
		/* A listing: the key's record, read once, says whether any
		 * entry has more than times. */
		if (!kc->loaded)
			kc->loaded = ks_attr_get(fs->ks, k, version, NULL, 0, &kc->a) == 0;
		rc = kc->loaded && !kc->a.entry_attrs
			 ? ks_attr_get_times(fs->ks, k, version, e, en, &a)
			 : ks_attr_get(fs->ks, k, version, e, en, &a);
	} else {
		rc = ks_attr_get(fs->ks, k, version, e, en, &a);
	}
	if (rc)
		return;
	if (a.has & KS_ATTR_HAS_TIMES) {
		apply_times(st, &a);
	} else if (entry) {
		/* An entry without times of its own: its key's (the last
		 * change to the key), else the key's creation. */
		struct fs_key_attrs local = {0};
		if (!kc)
			kc = &local;
		if (version)
			timespec_from_us(&st->st_mtim, version >> 11);
		st->st_atim = st->st_ctim = st->st_mtim;
		if (!kc->loaded)
			kc->loaded = ks_attr_get(fs->ks, k, version, NULL, 0, &kc->a) == 0;
		if (kc->loaded && (kc->a.has & KS_ATTR_HAS_TIMES))
			apply_times(st, &kc->a);
	}
	if (a.has & KS_ATTR_HAS_MODE)
		st->st_mode = (st->st_mode & S_IFMT) | (mode_t)a.mode;
	if (a.has & KS_ATTR_HAS_UID)
		st->st_uid = a.uid;
	if (a.has & KS_ATTR_HAS_GID)
		st->st_gid = a.gid;
}

uint64_t fs_seq(struct fs *fs)
{
	return __atomic_load_n(&fs->seq, __ATOMIC_SEQ_CST);
}

void fs_seq_store_locked(struct fs *fs, struct fs_node *node)
{
	node->stored = __atomic_add_fetch(&fs->seq, 1, __ATOMIC_SEQ_CST);
}

/* The node's attributes set during this mount on a node without stored
 * records: the root, a namespace, a local entry. */
bool fs_stat_overlay(struct fs_node *node, uint64_t since, struct stat *st)
{
	pthread_mutex_lock(&node->lock);
	bool stale = !node->loaded && node->stored > since;
	if (node->trunc_want && S_ISREG(st->st_mode)) {
		st->st_size = 0; /* as the kernel has it since the O_TRUNC open */
		st->st_blocks = 0;
	} else if (node->loaded && S_ISREG(st->st_mode) && !node->live) {
		st->st_size = (off_t)node->data.len;
		st->st_blocks = (blkcnt_t)((node->data.len + 511) / 512);
	}
	/* Buffered, not committed yet: the times of that change. */
	if (node->dirty && (node->changed.tv_sec || node->changed.tv_nsec))
		st->st_mtim = st->st_ctim = node->changed;
	if (node->mtime.tv_sec || node->mtime.tv_nsec)
		st->st_mtim = st->st_ctim = node->mtime;
	if (node->atime.tv_sec || node->atime.tv_nsec)
		st->st_atim = node->atime;
	if (node->has_mode)
		st->st_mode = (st->st_mode & S_IFMT) | (node->mode & 07777);
	if (node->has_owner) {
		st->st_uid = node->uid;
		st->st_gid = node->gid;
	}
	pthread_mutex_unlock(&node->lock);
	st->st_ino = node->ino;
	return stale;
}

/* Map a type-layer error to what the file system should say. */
int fs_errno(int rc)
{
	/* A corrupt record is an I/O error for the file system; a wrong type
	 * (a key changed shape between a check and the act) stays
	 * EMEDIUMTYPE, documented in docs/errors.md. */
	if (rc == -EUCLEAN)
		return EIO;
	return -rc;
}

int fs_shape_load_empty(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	(void)c;
	(void)name;
	(void)n;
	buf_reset(out);
	return 0;
}

int fs_shape_check_empty(const char *name, size_t n, size_t dn, const char *what)
{
	if (dn == 0)
		return 0;
	LOG_ERR("'%.*s': %s are empty files; data cannot be written into them", (int)n, name, what);
	return -EINVAL;
}

int fs_shape_adopt_commit(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
			  struct buf *canon)
{
	if (fs_is_swap_name(to, tn))
		return FS_ADOPT_LOCAL;
	int rc = c->sh->check(to, tn, d, dn);
	if (!rc)
		rc = c->sh->commit(c, to, tn, d, dn, true);
	return rc < 0 ? rc : buf_set(canon, to, tn);
}

int fs_shape_refuse_name(const struct fs_ctx *c, const char *verb, const char *name, size_t n)
{
	struct buf names = BUF_INIT;
	for (const struct fs_help *h = c->sh->help; h && h->name; h++)
		buf_printf(&names, "%s%s", names.len ? ", " : "", h->name);
	LOG_ERR("%s '%.*s/%.*s': no name a %s holds, nor a tool's temp name; it accepts %s "
		"(getfattr -n user.kvfs.help says more)",
		verb, (int)c->k.klen, c->k.key, (int)n, name, enc_type_name(c->sh->type),
		names.len ? names.data : "its entries");
	buf_release(&names);
	return -EINVAL;
}

int fs_shape_iter_opened(void *it, bool opened, int rc, void **out)
{
	if (!opened) {
		free(it);
		return rc ? rc : -ENOMEM;
	}
	*out = it;
	return 0;
}

int fs_shape_view_entry(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e,
			int (*make)(struct fs_ctx *c, const char *name, size_t n, struct buf *out))
{
	struct buf text = BUF_INIT;
	int rc = make(c, name, n, &text);
	if (!rc)
		rc = fs_entry_set(e, name, n, S_IFREG | 0444, text.len);
	e->view = true;
	buf_release(&text);
	return rc;
}

int fs_action_file_stat(struct fs *fs, const struct ks_key *k, const struct ks_info *info,
			struct stat *st, double *timeout)
{
	(void)k;
	(void)info;
	fs_stat_fill(fs, S_IFREG | 0444, 0, 0, 0, st, timeout);
	*timeout = 0; /* an action: looked up anew each time */
	return 0;
}

int fs_action_file_open(struct fs *fs, const struct ks_key *k, bool write, bool *view)
{
	(void)fs;
	*view = true;
	if (write) {
		LOG_ERR("'%.*s' is an action: it is read (cat), not written", (int)k->klen, k->key);
		return -EACCES;
	}
	return 0;
}

int fs_action_file_load(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	(void)fs;
	(void)k;
	buf_reset(out);
	return 0;
}

int fs_shape_action_entry(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)c;
	int rc = fs_entry_set(e, name, n, S_IFREG | 0444, 0);
	e->view = true;
	e->alias = true; /* never cached: each name is looked up anew */
	return rc;
}

void fs_child_set_number(struct fs_child *ch, uint8_t buf[8], uint64_t num)
{
	put_be64(buf, num);
	ch->cursor = (const char *)buf;
	ch->clen = 8;
	ch->numbered = true;
}

bool fs_cursor_number(const void *after, size_t alen, uint64_t *num)
{
	if (!after || alen != 8)
		return false;
	*num = get_be64(after);
	return true;
}

/* ---- the parameters and answers of actions ---------------------------- */

int fs_act_secs(const char *name, size_t n, size_t pn, uint64_t *ms)
{
	char secs[32];
	char *end;
	size_t sn = n - pn;
	double d = -1;
	if (pn < n && sn < sizeof(secs) && name[pn] >= '0' && name[pn] <= '9') {
		memcpy(secs, name + pn, sn);
		secs[sn] = 0;
		errno = 0;
		d = strtod(secs, &end);
		if (*end || errno)
			d = -1;
	}
	if (!(d >= 0 && d <= FS_ACT_SECS_MAX)) {
		LOG_ERR(
		    "'%.*s': the seconds to wait are a decimal number from 0 (for ever) to %.0f",
		    (int)n, name, FS_ACT_SECS_MAX);
		return -EINVAL;
	}
	*ms = (uint64_t)(d * 1000.0 + 0.5);
	if (*ms == 0 && d > 0)
		*ms = 1;
	return 0;
}

int fs_act_count(const char *name, size_t n, size_t pn, int64_t min, int64_t max, int64_t *count)
{
	int64_t v = 0;
	if (pn < n && name[pn] != '+' && parse_i64(name + pn, n - pn, &v) == 0 && v >= min &&
	    v <= max) {
		*count = v;
		return 0;
	}
	LOG_ERR("'%.*s': COUNT is a whole number from %lld to %lld", (int)n, name, (long long)min,
		(long long)max);
	return -EINVAL;
}

int fs_items_line(void *out, const char *item, size_t n)
{
	int rc = fs_items_encode(out, item, n);
	return rc ? rc : buf_add(out, "\n", 1);
}
