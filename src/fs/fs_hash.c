/*
 * fs_hash: the entries of a hash key's directory are its fields, files
 * holding the values, listed in byte order. A new field is pending from
 * its create to its first flush (the close of `touch` or `echo x >`),
 * which stores it with its value in one batch (HSET); later commits are
 * HSETs too; rm is HDEL (the last field leaves an empty hash behind); a
 * rename moves a stored field within or between hashes in one batch.
 * Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "types/t_hash.h"
#include "types/t_string.h"

static int hash_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	uint64_t size = 0;
	int rc = hash_strlen_in(c->fs->ks, &c->k, &c->info, name, n, &size);
	if (rc == -KV_EWRONGTYPE)
		rc = -ENOENT;
	return rc ? rc : fs_entry_set(e, name, n, S_IFREG | 0644, size);
}

static int hash_open_iter(struct fs_ctx *c, const void *after, size_t alen, bool by_name, void **it)
{
	(void)by_name; /* fields are listed in byte order anyway */
	int rc = 0;
	*it = hash_iter_new(c->fs->ks, &c->k, after, alen, &rc);
	return *it ? 0 : (rc ? rc : -ENOMEM);
}

static int hash_next(void *it, struct fs_child *ch)
{
	const char *v;
	size_t vn;
	int rc = hash_iter_next(it, &ch->name, &ch->n, &v, &vn);
	ch->mode = S_IFREG | 0644;
	ch->size = vn;
	return rc;
}

static void hash_free_iter(void *it)
{
	hash_iter_free(it);
}

static int hash_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	return hash_get(c->fs->ks, &c->k, name, n, out);
}

static int hash_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		       bool pending)
{
	(void)pending;
	return hash_set(c->fs->ks, &c->k, name, n, d, dn, NULL);
}

/* One batch per new file instead of two (HSETNX "" at create, HSET at
 * close): 16 % more creates of small fields (docs/performance.md). */
static int hash_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)e;
	uint64_t size;
	int rc = hash_strlen_in(c->fs->ks, &c->k, &c->info, name, n, &size);
	if (rc == -ENOENT)
		return FS_CREATE_PENDING;
	return rc ? rc : -EEXIST;
}

static int hash_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	return hash_del(c->fs->ks, &c->k, name, n, HASH_KEEP_EMPTY);
}

static int hash_rename(struct fs_ctx *a, const char *from, size_t fn, struct fs_ctx *b,
		       const char *to, size_t tn, unsigned flags)
{
	(void)flags; /* RENAME_NOREPLACE is checked by the caller */
	return hash_move_field(a->fs->ks, &a->k, from, fn, &b->k, to, tn, HASH_KEEP_EMPTY);
}

/* Counters FIELD:incr, FIELD:incrby:N, FIELD:incrbyfloat:X, ... of a
 * field (fs_counter.c): HINCRBY, HINCRBYFLOAT. */
static bool hash_is_action(const char *name, size_t n)
{
	struct fs_counter ct;
	return fs_counter_parse(name, n, &ct) == 1;
}

static int hash_act(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	struct fs_counter ct;
	int64_t i;
	double d;
	if (fs_counter_parse(name, n, &ct) != 1)
		return -ENOENT;
	int rc = ct.fl ? fs_counter_float(&ct, name, n, &d) : fs_counter_int(&ct, name, n, &i);
	if (rc) /* logged */
		return rc;
	/* The field's own times move with its value. */
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH, .entry = name, .elen = ct.base};
	struct ks_key k = c->k;
	k.attr = &ch;
	if (ct.fl)
		rc = hash_incrbyfloat(c->fs->ks, &k, name, ct.base, d, &d);
	else
		rc = hash_incrby(c->fs->ks, &k, name, ct.base, i, &i);
	if (!rc && ct.fl && !(rc = string_num_fmt_float(d, out)))
		rc = buf_add(out, "\n", 1);
	else if (!rc && !ct.fl)
		rc = buf_printf(out, "%" PRId64 "\n", i);
	fs_counter_refused(rc, name, n, "field", ct.fl);
	if (!rc)
		fs_action_changed(c->fs, c->dir, name, ct.base);
	return rc;
}

static const struct fs_help hash_help[] = {
    {"FIELD", "a field: the file holds its value (HSET at close, rm is HDEL)", "echo v > h/f"},
    {"FIELD:incr", "HINCRBY 1 (FIELD:decr: -1), print the new value; a missing field starts at 0",
     "cat 'h/visits:incr'"},
    {"FIELD:incrby:N", "HINCRBY a whole N (FIELD:decrby:N: -N)", "cat 'h/visits:incrby:5'"},
    {"FIELD:incrbyfloat:X", "HINCRBYFLOAT: add a float X", "cat 'h/price:incrbyfloat:0.5'"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_hash_shape = {
    .type = KV_TYPE_HASH,
    .lookup = hash_lookup,
    .iter_open = hash_open_iter,
    .iter_next = hash_next,
    .iter_free = hash_free_iter,
    .load = hash_load,
    .commit = hash_commit,
    .create = hash_create,
    .store_new_at_flush = true,
    .unlink = hash_unlink,
    .rename = hash_rename,
    .rename_across = true,
    .is_action = hash_is_action,
    .act = hash_act,
    .help = hash_help,
};
