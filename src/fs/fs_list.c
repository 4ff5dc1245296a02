/*
 * fs_list: the entries of a list key's directory are its elements, named
 * by position and listed in list order.
 *
 * Names. Position p of a list of n elements is written in decimal with
 * leading zeros to the width of n - 1 ("7" in a list of 8, "07" in a
 * list of 12, "0007" in a list of 1,200), so that a byte-order sort of
 * the names -- ls, shell globs, rsync, which creates files in that order
 * -- is list order. Any decimal spelling reaches an element ("7", "007"),
 * and a negative one counts from the end ("-1" is the last); such other
 * spellings reach the node of the canonical name but are never cached by
 * the kernel, since their meaning changes with the list.
 *
 * Changes. Writing an existing position replaces the element (LSET, at
 * close). Creating position n, the length, appends (an empty element at
 * create, its value at close); creating a position past that is refused
 * (EINVAL). rm removes the element and closes the gap (the later ones move
 * down). Whenever positions change meaning -- a removal, or the length
 * crossing a power of ten, which changes every name's width -- the nodes
 * of the renamed positions are unhashed and the kernel's cached names and
 * attributes of them are invalidated after the reply.
 *
 * Scratch files. A tool's temp name that is not a position (rsync's
 * ".0007.XXXXXX", sed's temp file: fs_is_scratch_name) is a scratch file
 * kept in the daemon's memory only (any other name is refused: EINVAL); a
 * rename of it onto position n appends its contents, onto an existing
 * position replaces that element, past the end is EINVAL. Scratch files
 * are never stored, never listed, and vanish at rm, rmdir of the list,
 * or unmount. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <pthread.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "types/t_list.h"

static bool list_is_input(const char *name, size_t n);

/* Digits of the largest position of a list of n elements (1 for n <= 10). */
static unsigned name_width(uint64_t n)
{
	unsigned w = 1;
	for (uint64_t x = n > 0 ? n - 1 : 0; x >= 10; x /= 10)
		w++;
	return w;
}

static size_t pos_name(uint64_t pos, unsigned w, char out[24])
{
	return (size_t)snprintf(out, 24, "%0*" PRIu64, (int)w, pos);
}

/* A typed name as a position: optional "-", decimal digits. -EINVAL if it
 * is no number, -ERANGE if it is out of range of an int64. */
static int parse_index(const char *name, size_t n, int64_t *idx)
{
	return parse_i64(name, n, idx);
}

/* ---- names while the directory is open: gaps ------------------------ */

/*
 * A name is a slot: a position in the numbering of when the directory
 * was opened (fs_inode.h, gaps). Slot f holds position f minus the gaps
 * below it; a gap holds nothing. With no gaps, slots are positions. All
 * of these run under the directory node's lock, which every list
 * operation holds from reading the length to its last write (lock order:
 * an entry's node, then its directory's node, then the key's stripe).
 */
int fs_gaps_pos(const struct fs_node *dir, uint64_t f, uint64_t *pos)
{
	size_t below = 0;
	for (size_t i = 0; i < dir->gaps.n && dir->gaps.v[i] <= f; i++) {
		if (dir->gaps.v[i] == f)
			return -ENOENT;
		below++;
	}
	*pos = f - below;
	return 0;
}

/* The slot of position pos. */
static uint64_t pos_slot(const uint64_t *gaps, size_t n, uint64_t pos)
{
	uint64_t f = pos;
	for (size_t i = 0; i < n && gaps[i] <= f; i++)
		f++;
	return f;
}

int fs_gaps_add(struct fs_node *dir, uint64_t f)
{
	if (dir->gaps.n == dir->gaps.cap) {
		size_t nc = dir->gaps.cap ? dir->gaps.cap * 2 : 16;
		uint64_t *nv = realloc(dir->gaps.v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		dir->gaps.v = nv;
		dir->gaps.cap = nc;
	}
	size_t i = dir->gaps.n;
	while (i > 0 && dir->gaps.v[i - 1] > f) {
		dir->gaps.v[i] = dir->gaps.v[i - 1];
		i--;
	}
	dir->gaps.v[i] = f;
	dir->gaps.n++;
	return 0;
}

/* The list, as its directory names it: length and slots. */
struct view {
	uint64_t len;	/* elements */
	uint64_t slots; /* len + gaps */
	unsigned width; /* of every name */
};

/*
 * How long the numbering of a listing outlives its directory handle:
 * `rm l/[*]` is a shell listing the directory, closing it, then one rm
 * removing the names it saw, in order. Each removal in the window
 * extends it; a new listing, or a second without a removal, ends it.
 */
#define LIST_GAPS_LINGER_MS 1000

static bool gaps_frozen(const struct fs_node *dir)
{
	return dir->dir_opens > 0 || now_ms() < dir->gaps_until;
}

/* Close the gaps if nothing holds them any more: every later position
 * moves down. Directory lock held. */
static void gaps_settle(struct fs *fs, struct fs_node *dir)
{
	if (dir->gaps.n > 0 && !gaps_frozen(dir)) {
		dir->gaps.n = 0;
		fs_itable_unhash_kids(fs->it, dir, NULL, NULL, NULL);
	}
}

static int view_get(struct fs_ctx *c, struct view *v)
{
	gaps_settle(c->fs, c->dir);
	int rc = list_len(c->fs->ks, &c->k, &v->len);
	if (rc == -KV_EWRONGTYPE)
		rc = -ENOENT;
	v->slots = v->len + c->dir->gaps.n;
	v->width = name_width(v->slots);
	return rc;
}

/* The slot and position a typed index names: a negative one counts
 * elements from the end. -ENOENT if none (or a gap). */
static int resolve(const struct fs_node *dir, const struct view *v, int64_t idx, uint64_t *f,
		   uint64_t *pos)
{
	if (idx < 0) {
		uint64_t back = (uint64_t)(-(idx + 1)) + 1;
		if (back > v->len)
			return -ENOENT;
		*pos = v->len - back;
		*f = pos_slot(dir->gaps.v, dir->gaps.n, *pos);
		return 0;
	}
	*f = (uint64_t)idx;
	if (*f >= v->slots)
		return -ENOENT;
	return fs_gaps_pos(dir, *f, pos);
}

/* The view, and the slot and position of the element `name` names:
 * -ENOENT if it names none (no index, past the end, a gap). Dir lock
 * held. */
static int resolve_name_locked(struct fs_ctx *c, const char *name, size_t n, struct view *v,
			       uint64_t *f, uint64_t *pos)
{
	int64_t idx;
	int rc = parse_index(name, n, &idx) ? -ENOENT : view_get(c, v);
	return rc ? rc : resolve(c->dir, v, idx, f, pos);
}

/* Fill e for slot f, asked for as `typed`. */
static int slot_entry(struct fs_entry *e, const char *typed, size_t tn, uint64_t f,
		      const struct view *v, uint64_t size)
{
	char canon[24];
	size_t cn = pos_name(f, v->width, canon);
	e->alias = cn != tn || memcmp(canon, typed, tn) != 0;
	return fs_entry_set(e, canon, cn, S_IFREG | 0644, size);
}

struct stale_from {
	uint64_t pos;
};

/* A node named by a position >= arg->pos (or by no position: stale too,
 * but for an input, whose meaning never changes). */
static bool stale_pos(void *arg, const char *name, size_t n)
{
	const struct stale_from *sf = arg;
	uint64_t p;
	return parse_u64(name, n, &p) != 0 ? !list_is_input(name, n) : p >= sf->pos;
}

/* Names from slot `from` on changed meaning, or (a different width)
 * every name did: unhash their nodes, so each name resolves to a new
 * node (and inode, with an empty page cache). The kernel caches no list
 * names (fs_shape.uncached), so it needs no invalidation. */
static void renamed_from(struct fs_ctx *c, uint64_t from, unsigned oldw, unsigned neww)
{
	struct stale_from sf = {oldw != neww ? 0 : from};
	fs_itable_unhash_kids(c->fs->it, c->dir, stale_pos, &sf, NULL);
}

static void log_past_end(const struct fs_ctx *c, const char *name, size_t n, const struct view *v)
{
	LOG_ERR("'%.*s/%.*s': past the end of a list of %" PRIu64 " (only %" PRIu64 " appends)",
		(int)c->k.klen, c->k.key, (int)n, name, v->len, v->slots);
}

static void log_gap(const struct fs_ctx *c, const char *name, size_t n)
{
	LOG_ERR("'%.*s/%.*s': removed while the directory is open; the positions close up "
		"when it is closed",
		(int)c->k.klen, c->k.key, (int)n, name);
}

/* ---- operations ------------------------------------------------------ */

static int list_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	struct buf val = BUF_INIT;
	struct view v;
	uint64_t f, pos;
	if (list_is_input(name, n)) {
		e->blksize = FS_INPUT_BLKSIZE;
		return fs_entry_set(e, name, n, S_IFREG | 0200, 0);
	}
	pthread_mutex_lock(&c->dir->lock);
	int rc = resolve_name_locked(c, name, n, &v, &f, &pos);
	if (!rc)
		rc = list_index(c->fs->ks, &c->k, (int64_t)pos, &val);
	if (rc == -ERANGE)
		rc = -ENOENT; /* shrunk by another writer in between */
	if (rc == -EUCLEAN) { /* logged: an empty file, read as EIO, rm removes it */
		buf_reset(&val);
		rc = 0;
	}
	if (!rc)
		rc = slot_entry(e, name, n, f, &v, val.len);
	pthread_mutex_unlock(&c->dir->lock);
	buf_release(&val);
	return rc;
}

struct lit {
	struct list_iter *it;
	unsigned width;
	uint64_t *gaps; /* a copy: the iterator runs without the lock */
	size_t ngaps;
	char name[24];
	uint8_t cursor[8];
};

static int list_open_iter(struct fs_ctx *c, const void *after, size_t alen, bool by_name,
			  void **out)
{
	(void)by_name; /* positions have no long names */
	struct lit *it = calloc(1, sizeof(*it));
	int64_t start = 0;
	int rc = 0;
	if (!it)
		return -ENOMEM;
	pthread_mutex_lock(&c->dir->lock);
	gaps_settle(c->fs, c->dir);
	it->ngaps = c->dir->gaps.n;
	if (it->ngaps) {
		it->gaps = malloc(it->ngaps * sizeof(*it->gaps));
		if (it->gaps)
			memcpy(it->gaps, c->dir->gaps.v, it->ngaps * sizeof(*it->gaps));
		else
			rc = -ENOMEM;
	}
	uint64_t next, below = 0;
	if (!rc && fs_cursor_number(after, alen, &next)) {
		/* Resume at the first position whose slot is after the cursor. */
		next++;
		for (size_t i = 0; i < it->ngaps && it->gaps[i] < next; i++)
			below++;
		start = next - below >= INT64_MAX ? INT64_MAX : (int64_t)(next - below);
	}
	if (!rc)
		it->it = list_iter_new(c->fs->ks, &c->k, start, &rc);
	if (it->it)
		it->width = name_width(list_iter_len(it->it) + it->ngaps);
	pthread_mutex_unlock(&c->dir->lock);
	if (!it->it)
		free(it->gaps);
	return fs_shape_iter_opened(it, it->it != NULL, rc, out);
}

static int list_next(void *arg, struct fs_child *ch)
{
	struct lit *it = arg;
	uint64_t pos;
	const char *v;
	size_t vn;
	int rc = list_iter_next(it->it, &pos, &v, &vn);
	if (rc > 0) {
		uint64_t f = pos_slot(it->gaps, it->ngaps, pos);
		ch->name = it->name;
		ch->n = pos_name(f, it->width, it->name);
		fs_child_set_number(ch, it->cursor, f);
		ch->mode = S_IFREG | 0644;
		ch->size = vn;
	}
	return rc;
}

static void list_free_iter(void *arg)
{
	struct lit *it = arg;
	list_iter_free(it->it);
	free(it->gaps);
	free(it);
}

/* The position a node's name holds now. Directory lock held. */
static int node_pos(struct fs_ctx *c, const char *name, size_t n, uint64_t *pos)
{
	uint64_t f;
	if (parse_u64(name, n, &f))
		return -ENOENT;
	return fs_gaps_pos(c->dir, f, pos);
}

static int list_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	uint64_t pos;
	if (list_is_input(name, n)) { /* an input holds nothing */
		buf_reset(out);
		return 0;
	}
	pthread_mutex_lock(&c->dir->lock);
	int rc = node_pos(c, name, n, &pos);
	if (!rc)
		rc = list_index(c->fs->ks, &c->k, (int64_t)pos, out);
	pthread_mutex_unlock(&c->dir->lock);
	return rc == -ERANGE ? -ENOENT : rc;
}

static int list_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		       bool pending)
{
	(void)pending;
	uint64_t pos;
	if (list_is_input(name, n))
		return -EACCES;
	pthread_mutex_lock(&c->dir->lock);
	int rc = node_pos(c, name, n, &pos);
	if (!rc)
		rc = list_set(c->fs->ks, &c->k, (int64_t)pos, d, dn);
	pthread_mutex_unlock(&c->dir->lock);
	if (rc == -ERANGE || rc == -ENOENT) {
		LOG_ERR("'%.*s/%.*s': the list has no such element any more", (int)c->k.klen,
			c->k.key, (int)n, name);
		rc = -ENOENT;
	}
	return rc;
}

/*
 * Put v (a new empty element for create, a scratch file's contents for a
 * rename) at the slot `to` names: at the end it appends, on an element it
 * replaces (unless `create`: -EEXIST), past the end or on a gap it is
 * -EINVAL. *f = the slot; *v = the list after. Directory lock held.
 */
static int put_at(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		  bool create, uint64_t *f, struct view *v)
{
	uint64_t pos;
	int64_t idx;
	int rc = parse_index(to, tn, &idx);
	if (!rc)
		rc = view_get(c, v);
	if (rc)
		return rc;
	if (idx >= 0 && (uint64_t)idx == v->slots) {
		/* The end: append. */
		unsigned oldw = v->width;
		*f = (uint64_t)idx;
		rc = list_append_at(c->fs->ks, &c->k, v->len, d, dn, &v->len);
		if (rc == -EEXIST || rc == -ERANGE)
			rc = -EAGAIN; /* another writer changed the length */
		if (rc)
			return rc;
		v->slots = v->len + c->dir->gaps.n;
		v->width = name_width(v->slots);
		if (v->width != oldw)
			renamed_from(c, 0, oldw, v->width);
		return 0;
	}
	rc = resolve(c->dir, v, idx, f, &pos);
	if (rc == 0)
		return create ? -EEXIST : list_set(c->fs->ks, &c->k, (int64_t)pos, d, dn);
	if (idx >= 0 && (uint64_t)idx < v->slots)
		log_gap(c, to, tn);
	else if (idx >= 0)
		log_past_end(c, to, tn, v);
	else
		LOG_ERR("'%.*s/%.*s': before the start of a list of %" PRIu64, (int)c->k.klen,
			c->k.key, (int)tn, to, v->len);
	return -EINVAL;
}

static int list_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	struct view v;
	uint64_t f;
	int64_t idx;
	if (list_is_input(name, n))
		return -EEXIST; /* there already: it is written, never made */
	if (parse_index(name, n, &idx))
		return fs_is_scratch_name(name, n) ? FS_CREATE_SCRATCH
						   : fs_shape_refuse_name(c, "create", name, n);
	pthread_mutex_lock(&c->dir->lock);
	int rc = put_at(c, name, n, "", 0, true, &f, &v);
	if (!rc)
		rc = slot_entry(e, name, n, f, &v, 0);
	pthread_mutex_unlock(&c->dir->lock);
	return rc;
}

static int list_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	struct view v;
	uint64_t f, pos;
	char canon[24];
	pthread_mutex_lock(&c->dir->lock);
	int rc = resolve_name_locked(c, name, n, &v, &f, &pos);
	/* While the directory is open (or just listed), the slot becomes a
	 * gap: remember it before the element goes, so a failure leaves
	 * both as they were. */
	bool frozen = !rc && gaps_frozen(c->dir);
	if (frozen && c->dir->dir_opens == 0)
		c->dir->gaps_until = now_ms() + LIST_GAPS_LINGER_MS;
	if (frozen)
		rc = fs_gaps_add(c->dir, f);
	if (!rc) {
		rc = list_remove_at(c->fs->ks, &c->k, (int64_t)pos, LIST_KEEP_EMPTY, NULL);
		if (rc && frozen) {
			for (size_t i = 0; i < c->dir->gaps.n; i++)
				if (c->dir->gaps.v[i] == f) {
					memmove(c->dir->gaps.v + i, c->dir->gaps.v + i + 1,
						(c->dir->gaps.n - i - 1) * sizeof(uint64_t));
					c->dir->gaps.n--;
					break;
				}
		}
	}
	if (rc == -ERANGE)
		rc = -ENOENT;
	if (!rc && frozen) {
		/* Only the removed slot's name is gone. */
		fs_itable_unlink(c->fs->it, c->dir, canon, pos_name(f, v.width, canon));
	} else if (!rc) {
		renamed_from(c, pos, v.width, name_width(v.len - 1));
	}
	pthread_mutex_unlock(&c->dir->lock);
	return rc;
}

static int list_adopt(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		      struct buf *canon)
{
	struct view v;
	uint64_t f;
	int64_t idx;
	char s[24];
	if (parse_index(to, tn, &idx))
		return fs_is_scratch_name(to, tn) ? FS_ADOPT_LOCAL
						  : fs_shape_refuse_name(c, "rename onto", to, tn);
	pthread_mutex_lock(&c->dir->lock);
	int rc = put_at(c, to, tn, d, dn, false, &f, &v);
	if (!rc)
		rc = buf_set(canon, s, pos_name(f, v.width, s));
	pthread_mutex_unlock(&c->dir->lock);
	return rc;
}

/* The last open handle of a list's directory closed: its gaps (and its
 * numbering for removals) linger a moment, then close; a first open of
 * it starts a fresh numbering. */
static void list_dir_closed(struct fs *fs, struct fs_node *dir)
{
	(void)fs;
	pthread_mutex_lock(&dir->lock);
	if (dir->dir_opens == 0)
		dir->gaps_until = now_ms() + LIST_GAPS_LINGER_MS;
	pthread_mutex_unlock(&dir->lock);
}

static void list_dir_opened(struct fs *fs, struct fs_node *dir)
{
	pthread_mutex_lock(&dir->lock);
	if (dir->dir_opens == 1 && dir->gaps.n > 0) {
		/* A new listing numbers the list afresh. */
		dir->gaps_until = 0;
		dir->gaps.n = 0;
		fs_itable_unhash_kids(fs->it, dir, NULL, NULL, NULL);
	}
	pthread_mutex_unlock(&dir->lock);
}

static bool list_is_scratch(const char *name, size_t n)
{
	int64_t idx;
	return parse_index(name, n, &idx) != 0 && fs_is_scratch_name(name, n);
}

static int list_from_field(void *arg, const char *f, size_t fn, const char *v, size_t vn,
			   struct convert_item *it)
{
	(void)arg;
	(void)v;
	(void)vn;
	if (parse_u64(f, fn, &it->num) == 0)
		return 0;
	LOG_ERR("field '%.*s' is not a list position (0, 1, 2, ...)", (int)fn, f);
	return -EINVAL;
}

/* A live list is never blank (Kvrocks has no empty lists), but its head
 * and tail may not decode (-EUCLEAN, logged): rmdir deletes it then, as
 * rm -r met EIO listing it. */
static int list_is_blank(struct fs_ctx *c)
{
	uint64_t n;
	int rc = list_len(c->fs->ks, &c->k, &n);
	return rc < 0 ? rc : 0;
}

static const struct fs_help list_help[] = {
    {"POSITION", "an element: 0 .. length-1 (zero-padded when listed), -1 .. from the end",
     "cat l/-1"},
    {"LENGTH", "the position after the last: creating it appends (RPUSH)", "echo x > l/3"},
    {".lpop", "pops the first element: each open answers it and removes it (LPOP)", "cat l/.lpop"},
    {".rpop", "pops the last element (RPOP)", "cat l/.rpop"},
    {".blpop:SECS",
     "waits up to SECS seconds (0: for ever) for a first element and pops it "
     "(BLPOP); ETIMEDOUT when none came",
     "while x=$(cat l/.blpop:0); do ...; done"},
    {".brpop:SECS", "the same from the tail (BRPOP)", "cat l/.brpop:5"},
    {".rpush",
     "input: each line written is an element pushed at the tail, one write one batch "
     "(RPUSH)",
     "printf 'a\\nb\\n' >> l/.rpush"},
    {".lpush", "input: lines pushed at the head, the last line first (LPUSH)",
     "echo x >> l/.lpush"},
    {".rpush0", "input: NUL-terminated elements (they may hold newlines) pushed at the tail",
     "find . -print0 >> l/.rpush0"},
    {".lpush0", "input: NUL-terminated elements pushed at the head", "printf 'a\\0' >> l/.lpush0"},
    {".linsert:before:PIVOT",
     "input: lines inserted in order before the first element equal to PIVOT (LINSERT); "
     "ENOENT if there is none",
     "echo x >> l/.linsert:before:b"},
    {".linsert:after:PIVOT", "the same after it; .linsert0:...: NUL-terminated elements",
     "echo x >> l/.linsert:after:b"},
    {".lmove:FROM:TO:DEST",
     "pops from the FROM end (left, right) and pushes onto the TO end of list DEST in one "
     "batch, answers the element (LMOVE)",
     "cat l/.lmove:left:right:work"},
    {".blmove:FROM:TO:DEST:SECS", "the same, waiting up to SECS seconds as .blpop (BLMOVE)",
     "cat l/.blmove:left:right:work:0"},
    {NULL, NULL, NULL},
};

/*
 * The pops: `cat L/.lpop` (LPOP), `.rpop` (RPOP), `.blpop:SECS`,
 * `.brpop:SECS` (BLPOP, BRPOP: wait up to SECS seconds, a decimal number,
 * for an element; 0 waits for ever). Each open pops one element and
 * answers its bytes as stored; an empty list answers an empty read, and a
 * blocking pop whose time ran out fails the open with ETIMEDOUT. The list
 * stays when its last element goes (an empty directory, as `rm` of its
 * last element leaves it), so a consumer loop keeps its path.
 */

struct pop {
	enum list_where where;
	bool block;
	uint64_t ms;
	/* A move (parse_move): onto the `to` end of list dest (dn bytes, of
	 * the same namespace; borrowed from the name). */
	bool move;
	enum list_where to;
	const char *dest;
	size_t dn;
};

/* *ms for the SECS at the end of a blocking name, from s on: 1, or
 * -EINVAL (logged) when it is no decimal number from 0 to
 * FS_ACT_SECS_MAX (fs_act_secs, as the zset's blocking pops). */
static int parse_secs(const char *name, size_t n, const char *s, uint64_t *ms)
{
	int rc = fs_act_secs(name, n, (size_t)(s - name), ms);
	return rc ? rc : 1;
}

/* 1 and *p for a pop's name, 0 for another name, -EINVAL for a blocking
 * pop whose SECS does not parse (logged). */
static int parse_pop(const char *name, size_t n, struct pop *p)
{
	static const struct {
		const char *name;
		enum list_where where;
		bool block;
	} pops[] = {{".lpop", LIST_HEAD, false},
		    {".rpop", LIST_TAIL, false},
		    {".blpop:", LIST_HEAD, true},
		    {".brpop:", LIST_TAIL, true}};
	for (size_t i = 0; i < sizeof(pops) / sizeof(pops[0]); i++) {
		size_t pn = strlen(pops[i].name);
		if (pops[i].block ? n < pn || memcmp(name, pops[i].name, pn) != 0
				  : n != pn || memcmp(name, pops[i].name, pn) != 0)
			continue;
		memset(p, 0, sizeof(*p));
		p->where = pops[i].where;
		p->block = pops[i].block;
		if (!p->block)
			return 1;
		return parse_secs(name, n, name + pn, &p->ms);
	}
	return 0;
}

static int parse_move(const char *name, size_t n, struct pop *p);
static int move_once(struct fs_ctx *c, const char *name, size_t n, const struct pop *p,
		     struct buf *out);

static bool list_is_action(const char *name, size_t n)
{
	struct pop p;
	return parse_pop(name, n, &p) != 0 || parse_move(name, n, &p) != 0;
}

static int list_act(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	struct pop p;
	int rc = parse_pop(name, n, &p);
	if (rc == 0)
		rc = parse_move(name, n, &p);
	if (rc <= 0)
		return rc ? rc : -ENOENT;
	uint64_t deadline = p.block ? ks_wait_deadline(p.ms) : 0;
	for (;;) {
		uint64_t gen = ks_gen(c->fs->ks, &c->k);
		rc = p.move ? move_once(c, name, n, &p, out)
			    : list_pop(c->fs->ks, &c->k, p.where, LIST_KEEP_EMPTY, out);
		if (rc != -ENOENT)
			return rc;
		if (!p.block) {
			buf_reset(out);
			return 0; /* an empty list: an empty read */
		}
		/* Wait for a write to the list, then look again. */
		rc = fs_act_wait(c, &c->k, gen, deadline);
		if (rc == -ETIMEDOUT)
			LOG_INFO("'%.*s' of '%.*s': no element came in time", (int)n, name,
				 (int)c->k.klen, c->k.key);
		if (rc)
			return rc;
	}
}

/*
 * The moves: `cat L/.lmove:FROM:TO:DEST` (LMOVE), `.blmove:FROM:TO:DEST:SECS`
 * (BLMOVE): FROM and TO are `left` or `right`, DEST a list of the same
 * namespace (made if missing; DEST == L rotates), its name as the tree
 * spells it (the fs layer has decoded it with the rest of the name: it
 * may hold ':'). Each open moves one element in one batch and answers it;
 * an empty L answers an empty read, or waits as the blocking pops do.
 */

/* "left:" / "right:" at *s (before end): 1 with *w and *s past it. */
static int parse_end(const char **s, const char *end, enum list_where *w)
{
	static const struct {
		const char *word;
		enum list_where where;
	} ends[] = {{"left:", LIST_HEAD}, {"right:", LIST_TAIL}};
	for (size_t i = 0; i < sizeof(ends) / sizeof(ends[0]); i++) {
		size_t wn = strlen(ends[i].word);
		if ((size_t)(end - *s) >= wn && memcmp(*s, ends[i].word, wn) == 0) {
			*w = ends[i].where;
			*s += wn;
			return 1;
		}
	}
	return 0;
}

/* 1 and *p for a move's name, 0 for another name, -EINVAL (logged) for a
 * bad FROM, TO, DEST or SECS. */
static int parse_move(const char *name, size_t n, struct pop *p)
{
	static const char lmove[] = ".lmove:", blmove[] = ".blmove:";
	const char *s = name, *end = name + n;
	memset(p, 0, sizeof(*p));
	if (n >= sizeof(lmove) - 1 && memcmp(name, lmove, sizeof(lmove) - 1) == 0)
		s += sizeof(lmove) - 1;
	else if (n >= sizeof(blmove) - 1 && memcmp(name, blmove, sizeof(blmove) - 1) == 0)
		s += sizeof(blmove) - 1, p->block = true;
	else
		return 0;
	p->move = true;
	const char *dend = end;
	if (p->block)
		while (dend > s && dend[-1] != ':')
			dend--;
	bool ok = parse_end(&s, end, &p->where) && parse_end(&s, end, &p->to) &&
		  (!p->block || dend > s + 1);
	if (ok) {
		p->dest = s;
		p->dn = (size_t)((p->block ? dend - 1 : end) - s);
	}
	if (!ok || p->dn == 0) {
		LOG_ERR("'%.*s': not %s:FROM:TO:DEST%s (FROM and TO: left or right; DEST: a list "
			"of this namespace)",
			(int)n, name, p->block ? ".blmove" : ".lmove", p->block ? ":SECS" : "");
		return -EINVAL;
	}
	return p->block ? parse_secs(name, n, dend, &p->ms) : 1;
}

/* Is `name` a position (a node whose meaning a push or a move changes)? */
static bool is_position(void *arg, const char *name, size_t n)
{
	(void)arg;
	uint64_t pos;
	return parse_u64(name, n, &pos) == 0;
}

/*
 * List `name` of namespace node ns was changed by a verb that did not go
 * through its directory (a move's DEST, a namespace's push): the table's
 * nodes of its positions are resolved anew and the kernel forgets the
 * list's attributes; a list the table has no node of may be a miss the
 * kernel remembers (made by this verb): it forgets the miss. The name of
 * a known list is not invalidated: a shell whose working directory it is
 * would find that directory "deleted". skip: a node left alone (the
 * verb's own list, which its caller renumbers). Locks: none of the list's;
 * a push holds its input's node (fs_list_push_file_shape).
 */
static void list_key_changed(struct fs *fs, struct fs_node *ns, const char *name, size_t n,
			     const struct fs_node *skip)
{
	struct fs_inval iv;
	struct fs_node *d = fs_itable_find(fs->it, ns, name, n);
	fs_inval_init(&iv);
	if (d && d != skip) {
		pthread_mutex_lock(&d->lock);
		fs_itable_unhash_kids(fs->it, d, is_position, NULL, &iv);
		pthread_mutex_unlock(&d->lock);
		fs_inval_add(&iv, 0, d->ino, "", 0); /* its size and times */
	} else if (!d) {
		fs_inval_add(&iv, ns->ino, 0, name, n);
	}
	fs_inval_send(fs, &iv); /* out of memory: the timeouts bound the damage */
	if (d)
		fs_itable_unref(fs->it, d);
}

/* A move's DEST changed. No lock held. */
static void move_dest_changed(struct fs_ctx *c, const struct pop *p)
{
	struct fs_node *ns = fs_itable_parent(c->fs->it, c->dir);
	if (!ns)
		return;
	list_key_changed(c->fs, ns, p->dest, p->dn, c->dir);
	fs_itable_unref(c->fs->it, ns);
}

/* One LMOVE of a move's name: -ENOENT when L is empty. */
static int move_once(struct fs_ctx *c, const char *name, size_t n, const struct pop *p,
		     struct buf *out)
{
	/* A push at the head of DEST renumbers it too. */
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH | KS_ATTR_RENUMBER};
	struct ks_key dk = {c->k.ns, c->k.nslen, p->dest, p->dn, &ch, NULL};
	int rc = list_move(c->fs->ks, &c->k, &dk, p->where, p->to, LIST_KEEP_EMPTY, out);
	if (rc == -KV_EWRONGTYPE)
		LOG_ERR("'%.*s/%.*s': '%.*s' is no list: nothing moved", (int)c->k.klen, c->k.key,
			(int)n, name, (int)p->dn, p->dest);
	if (!rc)
		move_dest_changed(c, p);
	return rc;
}

/*
 * The inputs: `L/.rpush`, `L/.lpush` (RPUSH, LPUSH: one element per
 * line), `L/.rpush0`, `L/.lpush0` (NUL-terminated elements, which may
 * hold newlines), `L/.linsert:before:PIVOT`, `.linsert:after:PIVOT`
 * (LINSERT: the lines go in order right before or after the first
 * element equal to PIVOT, as the tree spells it; `.linsert0:...` with
 * NUL-terminated elements). Each write's complete elements are one
 * batch; an empty line is an empty element; a last element without its
 * terminator goes at the close. The push is one step: no reader ever
 * sees a half-made element (a create of position n is two).
 */
struct push {
	bool insert; /* LINSERT, else a push */
	enum list_where where;
	bool before;
	const char *pivot; /* borrowed from the name */
	size_t pn;
	char sep;
};

/* A push's word (w: wn bytes), after the '.' of a list's input
 * (`L/.rpush`) or the ':' of a namespace's (`KEY:rpush`): true with p
 * filled. */
static bool push_word(const char *w, size_t wn, struct push *p)
{
	static const struct {
		const char *word;
		enum list_where where;
		char sep;
	} pushes[] = {{"rpush", LIST_TAIL, '\n'},
		      {"lpush", LIST_HEAD, '\n'},
		      {"rpush0", LIST_TAIL, '\0'},
		      {"lpush0", LIST_HEAD, '\0'}};
	memset(p, 0, sizeof(*p));
	for (size_t i = 0; i < sizeof(pushes) / sizeof(pushes[0]); i++) {
		if (wn == strlen(pushes[i].word) && memcmp(w, pushes[i].word, wn) == 0) {
			p->where = pushes[i].where;
			p->sep = pushes[i].sep;
			return true;
		}
	}
	return false;
}

static bool parse_push(const char *name, size_t n, struct push *p)
{
	size_t pn, wn;
	memset(p, 0, sizeof(*p));
	if (n > 1 && name[0] == '.' && push_word(name + 1, n - 1, p))
		return true;
	if (has_prefix(name, n, ".linsert:"))
		p->sep = '\n', pn = strlen(".linsert:");
	else if (has_prefix(name, n, ".linsert0:"))
		p->sep = '\0', pn = strlen(".linsert0:");
	else
		return false;
	p->insert = true;
	if (has_prefix(name + pn, n - pn, "before:"))
		p->before = true, wn = strlen("before:");
	else if (has_prefix(name + pn, n - pn, "after:"))
		wn = strlen("after:");
	else
		return false;
	p->pivot = name + pn + wn;
	p->pn = n - pn - wn;
	return true;
}

/* The elements of one feed: d holds elements each ended by sep, the last
 * one possibly not (at a close). *vals is malloc'd (free it; NULL when
 * *nv is 0). 0 or -ENOMEM. */
static int push_values(const char *d, size_t dn, char sep, struct list_value **vals, size_t *nv)
{
	size_t n = 0, i, from;
	for (i = 0; i < dn; i++)
		n += d[i] == sep;
	n += dn > 0 && d[dn - 1] != sep; /* the last one, at a close */
	*vals = NULL;
	*nv = 0;
	if (n == 0)
		return 0;
	*vals = malloc(n * sizeof(**vals));
	if (!*vals)
		return -ENOMEM;
	for (i = 0, from = 0; i <= dn; i++) {
		if (i < dn ? d[i] != sep : i == from)
			continue;
		(*vals)[(*nv)++] = (struct list_value){d + from, i - from};
		from = i + 1;
	}
	return 0;
}

static bool list_is_input(const char *name, size_t n)
{
	struct push p;
	return parse_push(name, n, &p);
}

static char list_input_sep(const char *name, size_t n)
{
	struct push p;
	return parse_push(name, n, &p) ? p.sep : '\n';
}

/* NEEDSWORK: a push to the head (or an insert) while the directory is
 * open with gaps (fs_list.c, gaps) shifts the positions under the
 * numbering of that listing, as a pop does. */
static int list_feed(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn)
{
	struct push p;
	struct list_value *vals;
	size_t nv;
	if (!parse_push(name, n, &p))
		return -EACCES;
	int rc = push_values(d, dn, p.sep, &vals, &nv);
	if (rc || nv == 0)
		return rc;
	rc = p.insert ? list_insert_vals(c->fs->ks, &c->k, p.before, p.pivot, p.pn, vals, nv, NULL)
		      : list_push(c->fs->ks, &c->k, p.where, vals, nv, NULL);
	if (rc == -ESRCH || (p.insert && rc == -ENOENT)) {
		LOG_ERR("'%.*s/%.*s': no element equals the pivot (LINSERT answers -1): nothing of "
			"this write is inserted",
			(int)c->k.klen, c->k.key, (int)n, name);
		rc = -ENOENT;
	} else if (rc == -EFBIG) {
		LOG_ERR("'%.*s/%.*s': an element over 512 MiB: nothing of this write is stored",
			(int)c->k.klen, c->k.key, (int)n, name);
	}
	if (!rc) /* the positions mean other elements now (dir lock held) */
		fs_itable_unhash_kids(c->fs->it, c->dir, is_position, NULL, NULL);
	free(vals);
	return rc;
}

const struct fs_shape fs_list_shape = {
    .type = KV_TYPE_LIST,
    .uncached = true,
    .padded = true,
    .lookup = list_lookup,
    .iter_open = list_open_iter,
    .iter_next = list_next,
    .iter_free = list_free_iter,
    .load = list_load,
    .commit = list_commit,
    .create = list_create,
    .unlink = list_unlink,
    .adopt = list_adopt,
    .is_scratch = list_is_scratch,
    .from_field = list_from_field,
    .is_blank = list_is_blank,
    .dir_opened = list_dir_opened,
    .is_action = list_is_action,
    .act = list_act,
    .is_input = list_is_input,
    .feed = list_feed,
    .input_sep = list_input_sep,
    .dir_closed = list_dir_closed,
    .help = list_help,
};

/*
 * The pushes of a namespace: `KEY:rpush`, `KEY:lpush`, `KEY:rpush0`,
 * `KEY:lpush0` (a name no key has) are inputs like a list's `.rpush` ...
 * (the same words, lines and batches), on list KEY, which the push makes
 * when it is missing, in its batch (RPUSH). A key of another type, a
 * remembered empty one too, takes nothing (EMEDIUMTYPE). Never listed,
 * reached by exact name: a writer needs no mkdir first.
 */

/* true, with p and *base (KEY's length, at least 1), if name is KEY:WORD. */
static bool parse_key_push(const char *name, size_t n, struct push *p, size_t *base)
{
	const char *colon = memrchr(name, ':', n);
	if (!colon || colon == name)
		return false;
	*base = (size_t)(colon - name);
	return push_word(colon + 1, n - *base - 1, p);
}

static bool key_push_is_name(const char *name, size_t n)
{
	struct push p;
	size_t base;
	return parse_key_push(name, n, &p, &base);
}

static char key_push_sep(const char *name, size_t n)
{
	struct push p;
	size_t base;
	return parse_key_push(name, n, &p, &base) ? p.sep : '\n';
}

/* An input: an empty write-only file, looked up anew each time (a key of
 * its name may come). */
static int key_push_stat(struct fs *fs, const struct ks_key *k, const struct ks_info *info,
			 struct stat *st, double *timeout)
{
	(void)k;
	(void)info;
	fs_stat_fill(fs, S_IFREG | 0200, 0, 0, 0, st, timeout);
	st->st_blksize = FS_INPUT_BLKSIZE;
	*timeout = 0;
	return 0;
}

static int key_push_open(struct fs *fs, const struct ks_key *k, bool write, bool *view)
{
	(void)fs;
	(void)k;
	(void)write;
	*view = false;
	return 0;
}

static int key_push_load(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	(void)fs;
	(void)k;
	buf_reset(out); /* an input holds nothing */
	return 0;
}

static int key_push_unlink(struct fs *fs, const struct ks_key *k)
{
	(void)fs;
	LOG_ERR("rm '%.*s': an input (a push to a list) cannot be removed", (int)k->klen, k->key);
	return -EACCES;
}

static int key_push_feed(struct fs *fs, struct fs_node *ns, const struct ks_key *k, const char *d,
			 size_t dn)
{
	struct push p;
	struct list_value *vals;
	struct ks_info info;
	size_t nv, base;
	if (!parse_key_push(k->key, k->klen, &p, &base))
		return -EACCES;
	struct ks_key b = *k; /* the list: the name's KEY, with k's change */
	b.klen = base;
	int rc = push_values(d, dn, p.sep, &vals, &nv);
	if (rc || nv == 0)
		return rc;
	rc = list_push_typed(fs->ks, &b, p.where, vals, nv, NULL);
	free(vals);
	if (rc == -KV_EWRONGTYPE) {
		bool known = ks_lookup(fs->ks, &b, &info) == 0;
		LOG_ERR("'%.*s': '%.*s' is a %s%s, not a list: nothing of this write is pushed",
			(int)k->klen, k->key, (int)b.klen, b.key,
			known && info.empty ? "remembered empty " : "",
			known ? enc_type_name(info.type) : "key of another type");
	} else if (rc == -EFBIG) {
		LOG_ERR("'%.*s': an element over 512 MiB: nothing of this write is pushed",
			(int)k->klen, k->key);
	} else if (rc) {
		LOG_ERR("'%.*s': nothing of this write is pushed: %s", (int)k->klen, k->key,
			strerror(-rc));
	} else {
		list_key_changed(fs, ns, b.key, b.klen, NULL);
	}
	return rc;
}

const struct fs_file_shape fs_list_push_file_shape = {
    .type = KV_TYPE_STRING, /* a file: what fs_file_check asks of a name */
    .is_name = key_push_is_name,
    .stat = key_push_stat,
    .open = key_push_open,
    .load = key_push_load,
    .unlink = key_push_unlink,
    .feed = key_push_feed,
    .input_sep = key_push_sep,
};
