/*
 * fs_sortedint: the entries of a sortedint key's directory are its ids,
 * empty files named in decimal, listed in ascending order. Creating a
 * file named by a number from 0 to 2^64-1 adds the id when the file is
 * closed (SIADD); any other name is refused (EINVAL), except the temp
 * names of tools (fs_is_scratch_name: rsync's ".NAME.XXXXXX", "NAME~",
 * sed's "sedXXXXXX", ...), which are scratch files held in memory until a
 * rename onto an id adds it. Data written
 * into an id is refused (EINVAL). rm is SIREM. Another spelling of an id
 * ("007") reaches the id but is not cached by the kernel. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "types/t_sortedint.h"

/* The id a name spells: 0, or -EINVAL (logged when `why` is given). */
static int parse_id(const char *name, size_t n, uint64_t *id, const char *why)
{
	int rc = parse_u64(name, n, id);
	if (rc && why)
		LOG_ERR("%s '%.*s': a sortedint holds ids, decimal numbers from 0 to %" PRIu64, why,
			(int)n, name, UINT64_MAX);
	return rc ? -EINVAL : 0;
}

/* A temp name that is no id: a scratch file. */
static bool is_scratch_name(const char *name, size_t n)
{
	uint64_t id;
	return fs_is_scratch_name(name, n) && parse_id(name, n, &id, NULL) != 0;
}

static int id_entry(struct fs_entry *e, const char *typed, size_t tn, uint64_t id)
{
	char canon[24];
	int cn = snprintf(canon, sizeof(canon), "%" PRIu64, id);
	e->alias = (size_t)cn != tn || memcmp(canon, typed, tn) != 0;
	return fs_entry_set(e, canon, (size_t)cn, S_IFREG | 0644, 0);
}

static int si_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	uint64_t id;
	if (parse_id(name, n, &id, NULL))
		return -ENOENT;
	int rc = sortedint_exists(c->fs->ks, &c->k, id);
	if (rc == -KV_EWRONGTYPE || rc == 0)
		return -ENOENT;
	return rc < 0 ? rc : id_entry(e, name, n, id);
}

/* Another spelling of an id ("007"): its canonical name ("7"). */
static int si_canon(const char *name, size_t n, struct buf *out)
{
	uint64_t id;
	if (parse_id(name, n, &id, NULL))
		return -ENOENT;
	return buf_printf(out, "%" PRIu64, id);
}

struct siit {
	struct sortedint_iter *it;
	char name[24];
	uint8_t cursor[8];
};

static int si_open_iter(struct fs_ctx *c, const void *after, size_t alen, bool by_name, void **out)
{
	(void)by_name; /* ids have no long names */
	struct siit *it = calloc(1, sizeof(*it));
	uint64_t cur = 0;
	int rc = 0;
	if (!it)
		return -ENOMEM;
	bool from = fs_cursor_number(after, alen, &cur);
	it->it = sortedint_iter_new(c->fs->ks, &c->k, false, from ? &cur : NULL, &rc);
	return fs_shape_iter_opened(it, it->it != NULL, rc, out);
}

static int si_next(void *arg, struct fs_child *ch)
{
	struct siit *it = arg;
	uint64_t id;
	int rc = sortedint_iter_next(it->it, &id);
	if (rc > 0) {
		ch->name = it->name;
		ch->n = (size_t)snprintf(it->name, sizeof(it->name), "%" PRIu64, id);
		fs_child_set_number(ch, it->cursor, id);
		ch->mode = S_IFREG | 0644;
	}
	return rc;
}

static void si_free_iter(void *arg)
{
	struct siit *it = arg;
	sortedint_iter_free(it->it);
	free(it);
}

static int si_check(const char *name, size_t n, const char *d, size_t dn)
{
	(void)d;
	return fs_shape_check_empty(name, n, dn, "the ids of a sortedint");
}

static int si_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		     bool pending)
{
	(void)d;
	uint64_t id;
	if (dn)
		return -EINVAL; /* si_check refused the write already */
	if (!pending)
		return 0;
	int rc = parse_id(name, n, &id, "commit of");
	return rc ? rc : sortedint_add(c->fs->ks, &c->k, id, NULL);
}

static int si_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)e;
	uint64_t id;
	if (is_scratch_name(name, n))
		return FS_CREATE_SCRATCH;
	if (parse_id(name, n, &id, NULL))
		return fs_shape_refuse_name(c, "create", name, n);
	int rc = sortedint_exists(c->fs->ks, &c->k, id);
	if (rc < 0)
		return rc;
	return rc ? -EEXIST : FS_CREATE_PENDING;
}

static int si_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	uint64_t id;
	if (parse_id(name, n, &id, NULL))
		return -ENOENT;
	return sortedint_rem(c->fs->ks, &c->k, id, SORTEDINT_KEEP_EMPTY);
}

static int si_adopt(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		    struct buf *canon)
{
	uint64_t id;
	if (is_scratch_name(to, tn))
		return FS_ADOPT_LOCAL;
	if (parse_id(to, tn, &id, NULL))
		return fs_shape_refuse_name(c, "rename onto", to, tn);
	int rc;
	if (dn) {
		si_check(to, tn, d, dn);
		return -EINVAL;
	}
	rc = sortedint_add(c->fs->ks, &c->k, id, NULL);
	if (!rc) {
		char s[24];
		int sn = snprintf(s, sizeof(s), "%" PRIu64, id);
		rc = buf_set(canon, s, (size_t)sn);
	}
	return rc;
}

static int si_from_field(void *arg, const char *f, size_t fn, const char *v, size_t vn,
			 struct convert_item *it)
{
	(void)arg;
	(void)v;
	if (parse_id(f, fn, &it->num, "field"))
		return -EINVAL;
	if (vn == 0)
		return 0;
	LOG_ERR("field '%.*s' holds data: the ids of a sortedint are empty files", (int)fn, f);
	return -EINVAL;
}

static const struct fs_help si_help[] = {
    {"ID", "an id, a decimal number: an empty file (touch is SIADD, rm is SIREM)", "touch i/42"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_sortedint_shape = {
    .type = KV_TYPE_SORTEDINT,
    .lookup = si_lookup,
    .iter_open = si_open_iter,
    .iter_next = si_next,
    .iter_free = si_free_iter,
    .load = fs_shape_load_empty,
    .check = si_check,
    .commit = si_commit,
    .create = si_create,
    .unlink = si_unlink,
    .adopt = si_adopt,
    .is_scratch = is_scratch_name,
    .from_field = si_from_field,
    .canon = si_canon,
    .help = si_help,
};
