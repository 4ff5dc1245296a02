/*
 * fs_inode: the inode table (see include/fs/fs_inode.h for the strategy).
 * Two chained hash indexes over the same nodes, one by inode number and
 * one by (parent inode, name), both guarded by one mutex: every table
 * operation is a handful of pointer moves, so one lock is cheaper than
 * finer ones. Layer: fs.
 */
#include "fs/fs_inode.h"

#include "types/t_string.h"

#include <errno.h>
#include <stdlib.h>

struct fs_itable {
	pthread_mutex_t lock;
	struct fs_node **by_ino;
	struct fs_node **by_name;
	size_t nbuckets; /* power of two, shared by both indexes */
	size_t count;
	struct fs_node *root;
};

static uint64_t name_hash(uint64_t parent_ino, const void *name, size_t n)
{
	uint64_t h = hash_bytes(name, n);
	return h ^ (parent_ino * 0x9e3779b97f4a7c15ull);
}

/* Inode numbers: never 0 and never the root's. */
static uint64_t ino_from_hash(uint64_t h)
{
	return h < 2 ? h + 2 : h;
}

static size_t ino_bucket(const struct fs_itable *t, uint64_t ino)
{
	return (size_t)((ino * 0x9e3779b97f4a7c15ull) >> 17) & (t->nbuckets - 1);
}

static size_t name_bucket(const struct fs_itable *t, uint64_t parent_ino, const void *name,
			  size_t n)
{
	return (size_t)name_hash(parent_ino, name, n) & (t->nbuckets - 1);
}

static struct fs_node *find_ino_locked(struct fs_itable *t, uint64_t ino)
{
	for (struct fs_node *n = t->by_ino[ino_bucket(t, ino)]; n; n = n->next_ino)
		if (n->ino == ino)
			return n;
	return NULL;
}

static struct fs_node *find_name_locked(struct fs_itable *t, struct fs_node *parent,
					const void *name, size_t len)
{
	for (struct fs_node *n = t->by_name[name_bucket(t, parent->ino, name, len)]; n;
	     n = n->next_name)
		if (n->parent == parent && n->namelen == len && memcmp(n->name, name, len) == 0)
			return n;
	return NULL;
}

static void name_insert_locked(struct fs_itable *t, struct fs_node *n)
{
	size_t b = name_bucket(t, n->parent->ino, n->name, n->namelen);
	n->next_name = t->by_name[b];
	t->by_name[b] = n;
	n->unhashed = false;
}

static void name_remove_locked(struct fs_itable *t, struct fs_node *n)
{
	if (n->unhashed || !n->parent)
		return;
	struct fs_node **pp = &t->by_name[name_bucket(t, n->parent->ino, n->name, n->namelen)];
	while (*pp && *pp != n)
		pp = &(*pp)->next_name;
	if (*pp)
		*pp = n->next_name;
	n->next_name = NULL;
	n->unhashed = true;
}

static void ino_remove_locked(struct fs_itable *t, struct fs_node *n)
{
	struct fs_node **pp = &t->by_ino[ino_bucket(t, n->ino)];
	while (*pp && *pp != n)
		pp = &(*pp)->next_ino;
	if (*pp)
		*pp = n->next_ino;
}

/* Double both indexes when the load passes 1. Failure to grow is harmless. */
static void grow_locked(struct fs_itable *t)
{
	if (t->count < t->nbuckets)
		return;
	size_t nb = t->nbuckets * 2;
	struct fs_node **bi = calloc(nb, sizeof(*bi));
	struct fs_node **bn = calloc(nb, sizeof(*bn));
	if (!bi || !bn) {
		free(bi);
		free(bn);
		return;
	}
	struct fs_node **oi = t->by_ino, **on = t->by_name;
	size_t ob = t->nbuckets;
	t->by_ino = bi;
	t->by_name = bn;
	t->nbuckets = nb;
	for (size_t i = 0; i < ob; i++) {
		for (struct fs_node *n = oi[i], *next; n; n = next) {
			next = n->next_ino;
			size_t b = ino_bucket(t, n->ino);
			n->next_ino = t->by_ino[b];
			t->by_ino[b] = n;
		}
		for (struct fs_node *n = on[i], *next; n; n = next) {
			next = n->next_name;
			size_t b = name_bucket(t, n->parent->ino, n->name, n->namelen);
			n->next_name = t->by_name[b];
			t->by_name[b] = n;
		}
	}
	free(oi);
	free(on);
}

static void kid_insert_locked(struct fs_node *n)
{
	struct fs_node *p = n->parent;
	n->sib_prev = NULL;
	n->sib_next = p->kids;
	if (p->kids)
		p->kids->sib_prev = n;
	p->kids = n;
}

static void kid_remove_locked(struct fs_node *n)
{
	if (n->sib_prev)
		n->sib_prev->sib_next = n->sib_next;
	else if (n->parent)
		n->parent->kids = n->sib_next;
	if (n->sib_next)
		n->sib_next->sib_prev = n->sib_prev;
	n->sib_prev = n->sib_next = NULL;
}

/* Node locks are recursive: a rename or unlink holds the locks of the
 * nodes it changes for its whole length (fs_itable_lock_names) and calls
 * the file helpers that take them again. */
static void node_lock_init(struct fs_node *n)
{
	pthread_mutexattr_t a;
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&n->lock, &a);
	pthread_mutexattr_destroy(&a);
}

void fs_node_unpin_locked(struct fs_node *n)
{
	string_unpin(n->pin);
	n->pin = NULL;
	n->pin_data = NULL;
	n->pin_len = 0;
}

static void node_free(struct fs_node *n)
{
	pthread_mutex_destroy(&n->lock);
	buf_release(&n->data);
	buf_release(&n->xattrs);
	buf_release(&n->jt_was);
	fs_node_unpin_locked(n);
	free(n->gaps.v);
	free(n->name);
	free(n);
}

/* Free n and, up the chain, any parent it was the last holder of. */
static void maybe_free_locked(struct fs_itable *t, struct fs_node *n)
{
	while (n && n != t->root && n->nlookup == 0 && n->refs == 0) {
		struct fs_node *parent = n->parent;
		name_remove_locked(t, n);
		ino_remove_locked(t, n);
		kid_remove_locked(n);
		t->count--;
		node_free(n);
		n = parent;
		if (n)
			n->refs--;
	}
}

struct fs_itable *fs_itable_new(void)
{
	struct fs_itable *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	t->nbuckets = 1024;
	t->by_ino = calloc(t->nbuckets, sizeof(*t->by_ino));
	t->by_name = calloc(t->nbuckets, sizeof(*t->by_name));
	t->root = calloc(1, sizeof(*t->root));
	if (!t->by_ino || !t->by_name || !t->root) {
		free(t->by_ino);
		free(t->by_name);
		free(t->root);
		free(t);
		return NULL;
	}
	pthread_mutex_init(&t->lock, NULL);
	struct fs_node *r = t->root;
	r->ino = FS_ROOT_INO;
	r->kind = FS_ROOT;
	r->unhashed = true;
	r->nlookup = 1;
	node_lock_init(r);
	t->by_ino[ino_bucket(t, r->ino)] = r;
	t->count = 1;
	return t;
}

void fs_itable_free(struct fs_itable *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->nbuckets; i++)
		for (struct fs_node *n = t->by_ino[i], *next; n; n = next) {
			next = n->next_ino;
			node_free(n);
		}
	free(t->by_ino);
	free(t->by_name);
	pthread_mutex_destroy(&t->lock);
	free(t);
}

struct fs_node *fs_itable_get(struct fs_itable *t, uint64_t ino)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node *n = find_ino_locked(t, ino);
	pthread_mutex_unlock(&t->lock);
	return n;
}

/* The number (parent, name) gets: its hash, probed past numbers in use. */
static uint64_t pick_ino_locked(struct fs_itable *t, struct fs_node *parent, const void *name,
				size_t n)
{
	uint64_t ino = ino_from_hash(name_hash(parent->ino, name, n));
	while (find_ino_locked(t, ino))
		ino = ino_from_hash(ino + 1);
	return ino;
}

struct fs_node *fs_itable_lookup(struct fs_itable *t, struct fs_node *parent, enum fs_kind kind,
				 const void *name, size_t len)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node *n = find_name_locked(t, parent, name, len);
	if (n) {
		/* A key can change shape (a string replaced by a hash). */
		n->kind = kind;
		n->nlookup++;
		goto out;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		goto out;
	n->name = malloc(len + 1);
	if (!n->name) {
		free(n);
		n = NULL;
		goto out;
	}
	memcpy(n->name, name, len);
	n->name[len] = '\0';
	n->namelen = len;
	n->kind = kind;
	n->parent = parent;
	parent->refs++;
	kid_insert_locked(n);
	n->nlookup = 1;
	node_lock_init(n);
	n->ino = pick_ino_locked(t, parent, name, len);
	size_t b = ino_bucket(t, n->ino);
	n->next_ino = t->by_ino[b];
	t->by_ino[b] = n;
	name_insert_locked(t, n);
	t->count++;
	grow_locked(t);
out:
	pthread_mutex_unlock(&t->lock);
	return n;
}

uint64_t fs_itable_peek_ino(struct fs_itable *t, struct fs_node *parent, const void *name,
			    size_t len)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node *n = find_name_locked(t, parent, name, len);
	uint64_t ino = n ? n->ino : pick_ino_locked(t, parent, name, len);
	pthread_mutex_unlock(&t->lock);
	return ino;
}

void fs_itable_forget(struct fs_itable *t, uint64_t ino, uint64_t count)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node *n = find_ino_locked(t, ino);
	if (n && n != t->root) {
		n->nlookup = count > n->nlookup ? 0 : n->nlookup - count;
		maybe_free_locked(t, n);
	}
	pthread_mutex_unlock(&t->lock);
}

struct fs_node **fs_itable_nodes(struct fs_itable *t, size_t *n)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node **v = malloc((t->count ? t->count : 1) * sizeof(*v));
	size_t k = 0;
	for (size_t i = 0; v && i < t->nbuckets; i++)
		for (struct fs_node *node = t->by_ino[i]; node && k < t->count;
		     node = node->next_ino) {
			node->refs++;
			v[k++] = node;
		}
	pthread_mutex_unlock(&t->lock);
	*n = k;
	return v;
}

void fs_itable_ref(struct fs_itable *t, struct fs_node *node)
{
	pthread_mutex_lock(&t->lock);
	node->refs++;
	pthread_mutex_unlock(&t->lock);
}

void fs_itable_unref(struct fs_itable *t, struct fs_node *node)
{
	pthread_mutex_lock(&t->lock);
	node->refs--;
	maybe_free_locked(t, node);
	pthread_mutex_unlock(&t->lock);
}

void fs_itable_unlink(struct fs_itable *t, struct fs_node *parent, const void *name, size_t len)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node *n = find_name_locked(t, parent, name, len);
	if (n)
		name_remove_locked(t, n);
	pthread_mutex_unlock(&t->lock);
}

void fs_itable_unhash(struct fs_itable *t, struct fs_node *node)
{
	pthread_mutex_lock(&t->lock);
	name_remove_locked(t, node);
	pthread_mutex_unlock(&t->lock);
}

int fs_itable_rename(struct fs_itable *t, struct fs_node *parent, const void *name, size_t len,
		     struct fs_node *newparent, const void *newname, size_t newlen)
{
	int rc = 0;
	char *copy = malloc(newlen + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, newname, newlen);
	copy[newlen] = '\0';
	pthread_mutex_lock(&t->lock);
	struct fs_node *target = find_name_locked(t, newparent, newname, newlen);
	struct fs_node *n = find_name_locked(t, parent, name, len);
	if (target && target != n)
		name_remove_locked(t, target);
	if (n) {
		name_remove_locked(t, n);
		if (n->parent != newparent) {
			newparent->refs++;
			n->parent->refs--;
			/* The old parent is still looked up by the kernel (it
			 * sent this rename), so it cannot be freed here. */
			kid_remove_locked(n);
			n->parent = newparent;
			kid_insert_locked(n);
		}
		free(n->name);
		n->name = copy;
		n->namelen = newlen;
		copy = NULL;
		name_insert_locked(t, n);
	}
	pthread_mutex_unlock(&t->lock);
	free(copy);
	return rc;
}

struct fs_node *fs_itable_find(struct fs_itable *t, struct fs_node *parent, const void *name,
			       size_t n)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node *node = find_name_locked(t, parent, name, n);
	if (node)
		node->refs++;
	pthread_mutex_unlock(&t->lock);
	return node;
}

struct fs_node *fs_itable_parent(struct fs_itable *t, struct fs_node *node)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node *p = node->parent;
	if (p)
		p->refs++;
	pthread_mutex_unlock(&t->lock);
	return p;
}

/* Lock one node, or two in inode-number order (once if they are one). */
static void lock_pair(struct fs_node *a, struct fs_node *b)
{
	if (a && b && a != b && b->ino < a->ino) {
		struct fs_node *x = a;
		a = b;
		b = x;
	}
	if (a)
		pthread_mutex_lock(&a->lock);
	if (b && b != a)
		pthread_mutex_lock(&b->lock);
}

void fs_itable_lock_names(struct fs_itable *t, struct fs_node *pa, const void *a, size_t an,
			  struct fs_node *pb, const void *b, size_t bn, struct fs_locked *out)
{
	for (;;) {
		struct fs_node *na = fs_itable_find(t, pa, a, an);
		struct fs_node *nb = pb ? fs_itable_find(t, pb, b, bn) : NULL;
		lock_pair(na, nb);
		/* A rename of either name may have moved another node there
		 * between the look-up and the lock: then try again. */
		pthread_mutex_lock(&t->lock);
		bool same = find_name_locked(t, pa, a, an) == na &&
			    (!pb || find_name_locked(t, pb, b, bn) == nb);
		pthread_mutex_unlock(&t->lock);
		out->a = na;
		out->b = nb;
		if (same)
			return;
		fs_itable_unlock_names(t, out);
	}
}

void fs_itable_unlock_names(struct fs_itable *t, struct fs_locked *l)
{
	if (l->b && l->b != l->a)
		pthread_mutex_unlock(&l->b->lock);
	if (l->a)
		pthread_mutex_unlock(&l->a->lock);
	if (l->b)
		fs_itable_unref(t, l->b);
	if (l->a)
		fs_itable_unref(t, l->a);
	l->a = l->b = NULL;
}

struct fs_node *fs_itable_find_local(struct fs_itable *t, struct fs_node *parent, const void *name,
				     size_t n)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node *node = find_name_locked(t, parent, name, n);
	if (node && node->local != FS_LOCAL_NONE)
		node->refs++;
	else
		node = NULL;
	pthread_mutex_unlock(&t->lock);
	return node;
}

enum fs_local fs_itable_local(struct fs_itable *t, struct fs_node *node)
{
	pthread_mutex_lock(&t->lock);
	enum fs_local l = node->local;
	pthread_mutex_unlock(&t->lock);
	return l;
}

void fs_itable_set_local(struct fs_itable *t, struct fs_node *node, enum fs_local l)
{
	pthread_mutex_lock(&t->lock);
	if (node->local == FS_LOCAL_NONE && l != FS_LOCAL_NONE)
		node->refs++;
	enum fs_local was = node->local;
	node->local = l;
	if (was != FS_LOCAL_NONE && l == FS_LOCAL_NONE) {
		node->refs--;
		maybe_free_locked(t, node);
	}
	pthread_mutex_unlock(&t->lock);
}

void fs_inval_init(struct fs_inval *iv)
{
	iv->v = NULL;
	iv->len = iv->cap = 0;
}

void fs_inval_release(struct fs_inval *iv)
{
	for (size_t i = 0; i < iv->len; i++)
		free(iv->v[i].name);
	free(iv->v);
	fs_inval_init(iv);
}

int fs_inval_add(struct fs_inval *iv, uint64_t parent, uint64_t ino, const void *name, size_t n)
{
	struct fs_inval_item *nv = array_grow(iv->v, &iv->cap, iv->len, sizeof(*nv), 16);
	if (!nv)
		return -ENOMEM;
	iv->v = nv;
	char *copy = malloc(n + 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, name, n);
	copy[n] = '\0';
	iv->v[iv->len++] = (struct fs_inval_item){parent, ino, copy, n, false};
	return 0;
}

bool fs_itable_is_known(struct fs_itable *t, struct fs_node *node)
{
	pthread_mutex_lock(&t->lock);
	bool known = node->nlookup > 0;
	pthread_mutex_unlock(&t->lock);
	return known;
}

int fs_itable_inval_known(struct fs_itable *t, struct fs_node *node, bool entry,
			  struct fs_inval *iv)
{
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	if (node->nlookup) {
		bool named = entry && node->parent && !node->unhashed;
		rc = fs_inval_add(iv, named ? node->parent->ino : 0, node->ino,
				  named ? node->name : "", named ? node->namelen : 0);
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int fs_inval_add_gone(struct fs_inval *iv, uint64_t parent, uint64_t ino, const void *name,
		      size_t n)
{
	int rc = fs_inval_add(iv, parent, ino, name, n);
	if (!rc)
		iv->v[iv->len - 1].gone = true;
	return rc;
}

int fs_itable_kids_inval(struct fs_itable *t, struct fs_node *parent, struct fs_inval *iv)
{
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	for (struct fs_node *n = parent->kids; n && !rc; n = n->sib_next)
		if (!n->unhashed && n->local == FS_LOCAL_NONE)
			rc = fs_inval_add(iv, 0, n->ino, "", 0); /* a leaf lock: short */
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int fs_itable_unhash_kids(struct fs_itable *t, struct fs_node *parent,
			  bool (*stale)(void *arg, const char *name, size_t n), void *arg,
			  struct fs_inval *iv)
{
	int rc = 0;
	pthread_mutex_lock(&t->lock);
	for (struct fs_node *n = parent->kids; n; n = n->sib_next) {
		if (n->unhashed || n->local != FS_LOCAL_NONE)
			continue;
		if (stale && !stale(arg, n->name, n->namelen))
			continue;
		name_remove_locked(t, n);
		/* Allocation under the table lock: a leaf lock, and short. */
		int r = iv ? fs_inval_add(iv, parent->ino, n->ino, n->name, n->namelen) : 0;
		if (r)
			rc = r;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

bool fs_itable_has_local_kids(struct fs_itable *t, struct fs_node *parent)
{
	bool any = false;
	pthread_mutex_lock(&t->lock);
	for (struct fs_node *n = parent->kids; n && !any; n = n->sib_next)
		any = n->local != FS_LOCAL_NONE && !n->unhashed;
	pthread_mutex_unlock(&t->lock);
	return any;
}

void fs_itable_drop_local_kids(struct fs_itable *t, struct fs_node *parent)
{
	pthread_mutex_lock(&t->lock);
	struct fs_node *n = parent->kids;
	while (n) {
		struct fs_node *next = n->sib_next;
		if (n->local != FS_LOCAL_NONE) {
			if (n->local == FS_LOCAL_SCRATCH)
				LOG_INFO("'%.*s/%.*s', a scratch file no rename stored, is "
					 "discarded with its directory",
					 (int)parent->namelen, parent->name, (int)n->namelen,
					 n->name);
			name_remove_locked(t, n);
			n->local = FS_LOCAL_NONE;
			n->refs--;
			/* The parent is held by the caller, so this frees at most n. */
			if (n->nlookup == 0 && n->refs == 0) {
				ino_remove_locked(t, n);
				kid_remove_locked(n);
				t->count--;
				parent->refs--;
				node_free(n);
			}
		}
		n = next;
	}
	pthread_mutex_unlock(&t->lock);
}

void fs_path_init(struct fs_path *p)
{
	buf_init(&p->ns);
	buf_init(&p->key);
	buf_init(&p->entry);
	p->unhashed = false;
}

void fs_path_release(struct fs_path *p)
{
	buf_release(&p->ns);
	buf_release(&p->key);
	buf_release(&p->entry);
}

bool fs_itable_gone(struct fs_itable *t, struct fs_node *node)
{
	bool gone = false;
	pthread_mutex_lock(&t->lock);
	for (struct fs_node *n = node; n && n->kind != FS_ROOT && !gone; n = n->parent)
		gone = n->unhashed;
	pthread_mutex_unlock(&t->lock);
	return gone;
}

int fs_itable_path(struct fs_itable *t, struct fs_node *node, struct fs_path *out)
{
	int rc = 0;
	buf_reset(&out->ns);
	buf_reset(&out->key);
	buf_reset(&out->entry);
	pthread_mutex_lock(&t->lock);
	out->unhashed = node->kind != FS_ROOT && node->unhashed;
	for (struct fs_node *n = node; n && n->kind != FS_ROOT && !rc; n = n->parent) {
		struct buf *dst = n->kind == FS_NS    ? &out->ns
				  : n->kind == FS_KEY ? &out->key
						      : &out->entry;
		rc = buf_set(dst, n->name, n->namelen);
		if (n != node && n->unhashed)
			out->unhashed = true;
	}
	pthread_mutex_unlock(&t->lock);
	return rc;
}

int fs_itable_jtree_path(struct fs_itable *t, struct fs_node *node, struct buf *ns,
			 struct buf *names, size_t *count, bool *unhashed)
{
	int rc = 0;
	size_t n = 0;
	buf_reset(ns);
	buf_reset(names);
	pthread_mutex_lock(&t->lock);
	*unhashed = false;
	struct fs_node *top = node;
	for (struct fs_node *x = node; x && x->kind == FS_JTREE; x = x->parent) {
		n++;
		top = x;
		if (x->unhashed)
			*unhashed = true;
	}
	if (top->parent && top->parent->kind == FS_NS) {
		rc = buf_set(ns, top->parent->name, top->parent->namelen);
		if (top->parent->unhashed)
			*unhashed = true;
	}
	/* Top down: the i-th name from the top is n - 1 - i steps up. */
	for (size_t i = 0; i < n && !rc; i++) {
		struct fs_node *x = node;
		for (size_t up = n - 1 - i; up; up--)
			x = x->parent;
		uint32_t len = (uint32_t)x->namelen;
		rc = buf_add(names, &len, sizeof(len));
		if (!rc)
			rc = buf_add(names, x->name, x->namelen);
	}
	pthread_mutex_unlock(&t->lock);
	*count = n;
	return rc;
}
