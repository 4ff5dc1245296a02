/*
 * fs_set: the entries of a set key's directory are its members, empty
 * files listed in byte order. Creating a file adds the member when the
 * file is closed (SADD), unless data was written into it: that write is
 * refused (EINVAL) and the member is not added. rm is SREM (the last
 * member leaves an empty set behind); a rename within the set renames the
 * member in one batch, and one to another set key is SMOVE (one batch).
 * Actions (read once per open, never listed): `.spop[:COUNT]` (SPOP),
 * `.srandmember[:COUNT]` (SRANDMEMBER), one member per line in the
 * escaping of item lists (fs_items_encode). Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "types/t_set.h"

static int set_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	int rc = set_ismember(c->fs->ks, &c->k, name, n);
	if (rc == -KV_EWRONGTYPE || rc == 0)
		return -ENOENT;
	return rc < 0 ? rc : fs_entry_set(e, name, n, S_IFREG | 0644, 0);
}

static int set_open_iter(struct fs_ctx *c, const void *after, size_t alen, bool by_name, void **it)
{
	(void)by_name; /* members are listed in byte order anyway */
	int rc = 0;
	*it = set_iter_new(c->fs->ks, &c->k, after, alen, &rc);
	return *it ? 0 : (rc ? rc : -ENOMEM);
}

static int set_next(void *it, struct fs_child *ch)
{
	ch->mode = S_IFREG | 0644;
	return set_iter_next(it, &ch->name, &ch->n);
}

static void set_free_iter(void *it)
{
	set_iter_free(it);
}

static int set_check(const char *name, size_t n, const char *d, size_t dn)
{
	(void)d;
	return fs_shape_check_empty(name, n, dn, "members of a set");
}

static int set_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		      bool pending)
{
	(void)d;
	if (dn)
		return -EINVAL; /* set_check refused the write already */
	return pending ? set_add(c->fs->ks, &c->k, name, n, NULL) : 0;
}

static int set_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)e;
	int rc = set_ismember(c->fs->ks, &c->k, name, n);
	if (rc < 0)
		return rc;
	if (!rc && fs_is_swap_name(name, n))
		return FS_CREATE_SCRATCH;
	return rc ? -EEXIST : FS_CREATE_PENDING;
}

static int set_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	return set_rem(c->fs->ks, &c->k, name, n, SET_KEEP_EMPTY);
}

static int set_rename(struct fs_ctx *a, const char *from, size_t fn, struct fs_ctx *b,
		      const char *to, size_t tn, unsigned flags)
{
	(void)flags; /* RENAME_NOREPLACE is checked by the caller */
	return set_move(a->fs->ks, &a->k, from, fn, &b->k, to, tn, SET_KEEP_EMPTY);
}

static int set_from_field(void *arg, const char *f, size_t fn, const char *v, size_t vn,
			  struct convert_item *it)
{
	(void)arg;
	(void)v;
	(void)it;
	if (vn == 0)
		return 0;
	LOG_ERR("field '%.*s' holds data: the members of a set are empty files", (int)fn, f);
	return -EINVAL;
}

/* ---- actions: SPOP, SRANDMEMBER -------------------------------------- */

#define ACT_SPOP	".spop"
#define ACT_SRANDMEMBER ".srandmember"
/* Kvrocks reads COUNT as an int (ParseInt<int>). */
#define ACT_COUNT_MAX INT32_MAX

/* Is name ".spop" or ".srandmember", or one of them, ':' and anything (a
 * COUNT, checked when it runs)? Which one: *pop. */
static bool act_name(const char *name, size_t n, bool *pop)
{
	for (int i = 0; i < 2; i++) {
		const char *a = i ? ACT_SRANDMEMBER : ACT_SPOP;
		size_t an = strlen(a);
		if (has_prefix(name, n, a) && (n == an || name[an] == ':')) {
			*pop = i == 0;
			return true;
		}
	}
	return false;
}

static bool set_is_action(const char *name, size_t n)
{
	bool pop;
	return act_name(name, n, &pop);
}

/*
 * `cat S/.spop` pops one random member, `.spop:COUNT` up to COUNT (0 to
 * 2^31-1), in one batch: each open answers what it popped, one member per
 * line; an empty set answers an empty read, and stays an empty set when
 * its last member goes (a consumer keeps its path). `.srandmember` and
 * `.srandmember:COUNT` answer the same way and change nothing; a
 * negative COUNT (down to -SET_RAND_MAX) draws -COUNT times and may
 * repeat members. How members are chosen: t_set.h (as Kvrocks).
 */
static int set_act(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	bool pop = false;
	int64_t count = 1;
	if (!act_name(name, n, &pop))
		return -ENOENT;
	size_t an = strlen(pop ? ACT_SPOP : ACT_SRANDMEMBER);
	int rc = n == an ? 0
			 : fs_act_count(name, n, an + 1, pop ? 0 : -(int64_t)SET_RAND_MAX,
					ACT_COUNT_MAX, &count);
	buf_reset(out);
	if (!rc && pop)
		rc = set_pop(c->fs->ks, &c->k, (uint64_t)count, SET_KEEP_EMPTY, fs_items_line, out);
	else if (!rc)
		rc = set_randmember(c->fs->ks, &c->k, count, fs_items_line, out);
	if (rc)
		buf_reset(out);
	return rc;
}

static const struct fs_help set_help[] = {
    {"MEMBER", "a member: an empty file (touch is SADD, rm is SREM, mv to another set is SMOVE)",
     "touch s/m"},
    {".spop", "pops a random member: each open answers it and removes it (SPOP)", "cat s/.spop"},
    {".spop:COUNT", "pops up to COUNT random members, one per line (SPOP KEY COUNT)",
     "cat s/.spop:10"},
    {".srandmember", "a random member, left in the set (SRANDMEMBER)", "cat s/.srandmember"},
    {".srandmember:COUNT",
     "up to COUNT distinct random members, one per line; -COUNT: COUNT draws that may repeat",
     "cat s/.srandmember:-5"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_set_shape = {
    .type = KV_TYPE_SET,
    .lookup = set_lookup,
    .iter_open = set_open_iter,
    .iter_next = set_next,
    .iter_free = set_free_iter,
    .load = fs_shape_load_empty,
    .check = set_check,
    .commit = set_commit,
    .create = set_create,
    .unlink = set_unlink,
    .rename = set_rename,
    .rename_across = true,	    /* SMOVE */
    .adopt = fs_shape_adopt_commit, /* a swap file renamed onto a member adds it */
    .is_scratch = fs_is_swap_name,
    .from_field = set_from_field,
    .is_action = set_is_action,
    .act = set_act,
    .help = set_help,
};
