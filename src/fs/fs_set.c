/*
 * fs_set: the entries of a set key's directory are its members, empty
 * files listed in byte order. Creating a file adds the member when the
 * file is closed (SADD), unless data was written into it: that write is
 * refused (EINVAL) and the member is not added. rm is SREM (the last
 * member leaves an empty set behind); a rename within the set renames the
 * member in one batch. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <stdlib.h>

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
	(void)b; /* the same key: the caller sends other moves to EXDEV */
	(void)flags;
	return set_rename_member(a->fs->ks, &a->k, from, fn, to, tn);
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

static const struct fs_help set_help[] = {
    {"MEMBER", "a member: an empty file (touch is SADD, rm is SREM)", "touch s/m"},
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
    .adopt = fs_shape_adopt_commit, /* a swap file renamed onto a member adds it */
    .is_scratch = fs_is_swap_name,
    .from_field = set_from_field,
    .help = set_help,
};
