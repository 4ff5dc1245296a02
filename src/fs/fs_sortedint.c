/*
 * fs_sortedint: the entries of a sortedint key's directory are its ids,
 * empty files named in decimal, listed in ascending order. Creating a
 * file named by a number from 0 to 2^64-1 adds the id when the file is
 * closed (SIADD); any other name is refused (EINVAL), except the temp
 * names of tools (fs_is_scratch_name: rsync's ".NAME.XXXXXX", "NAME~",
 * sed's "sedXXXXXX", ...), which are scratch files held in memory until a
 * rename onto an id adds it. Data written
 * into an id is refused (EINVAL). rm is SIREM. Another spelling of an id
 * ("007") reaches the id but is not cached by the kernel. Unlisted views:
 * .range:MIN..MAX[:OFFSET:COUNT] and .revrange:MAX..MIN[...]
 * (SIRANGEBYVALUE, SIREVRANGEBYVALUE), the ids one a line. Layer: fs.
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

#define V_RANGE	   ".range:"
#define V_REVRANGE ".revrange:"

static bool si_is_view(const char *name, size_t n)
{
	return (n > strlen(V_RANGE) && has_prefix(name, n, V_RANGE)) ||
	       (n > strlen(V_REVRANGE) && has_prefix(name, n, V_REVRANGE));
}

/* A temp name that is no id and no view: a scratch file. */
static bool is_scratch_name(const char *name, size_t n)
{
	uint64_t id;
	return fs_is_scratch_name(name, n) && parse_id(name, n, &id, NULL) != 0 &&
	       !si_is_view(name, n);
}

static int id_entry(struct fs_entry *e, const char *typed, size_t tn, uint64_t id)
{
	char canon[24];
	int cn = snprintf(canon, sizeof(canon), "%" PRIu64, id);
	e->alias = (size_t)cn != tn || memcmp(canon, typed, tn) != 0;
	return fs_entry_set(e, canon, (size_t)cn, S_IFREG | 0644, 0);
}

/* ---- Range views: SIRANGEBYVALUE, SIREVRANGEBYVALUE ------------------- */

/* What a range view's name asks: ids from min to max (each bound
 * inclusive unless its ex), skipping `offset`, at most `count` (0: all). */
struct si_range {
	uint64_t min, max, offset, count;
	bool minex, maxex;
};

/* One bound: "N", "(N", "-inf" or "+inf"/"inf" (low: the lower bound). */
static int range_bound(const char *s, size_t n, bool low, uint64_t *v, bool *ex)
{
	*ex = n > 0 && s[0] == '(';
	if (*ex) {
		s++;
		n--;
	}
	if (n == 4 && !memcmp(s, "-inf", 4) && low && !*ex) {
		*v = 0;
		return 0;
	}
	if (((n == 4 && !memcmp(s, "+inf", 4)) || (n == 3 && !memcmp(s, "inf", 3))) && !low &&
	    !*ex) {
		*v = UINT64_MAX;
		return 0;
	}
	return parse_u64(s, n, v) ? -EINVAL : 0;
}

/* Read ".range:MIN..MAX[:OFFSET:COUNT]" (".revrange:MAX..MIN[...]", the
 * order of SIREVRANGEBYVALUE) into r; *rev: a .revrange. 0 or -EINVAL,
 * logged. */
static int range_parse(const char *name, size_t n, struct si_range *r, bool *rev)
{
	*rev = has_prefix(name, n, V_REVRANGE);
	size_t pn = strlen(*rev ? V_REVRANGE : V_RANGE);
	const char *s = name + pn, *end = name + n;
	const char *dots = memmem(s, (size_t)(end - s), "..", 2);
	const char *colon = dots ? memchr(dots + 2, ':', (size_t)(end - dots - 2)) : NULL;
	const char *colon2 = colon ? memchr(colon + 1, ':', (size_t)(end - colon - 1)) : NULL;
	const char *hi = dots ? dots + 2 : NULL, *hend = colon ? colon : end;
	int rc = -EINVAL;
	memset(r, 0, sizeof(*r));
	if (dots && (!colon || colon2)) {
		/* the first bound written is MIN (MAX for .revrange) */
		rc = range_bound(s, (size_t)(dots - s), !*rev, *rev ? &r->max : &r->min,
				 *rev ? &r->maxex : &r->minex);
		if (!rc)
			rc = range_bound(hi, (size_t)(hend - hi), *rev, *rev ? &r->min : &r->max,
					 *rev ? &r->minex : &r->maxex);
		if (!rc && colon2 &&
		    (parse_u64(colon + 1, (size_t)(colon2 - colon - 1), &r->offset) ||
		     parse_u64(colon2 + 1, (size_t)(end - colon2 - 1), &r->count)))
			rc = -EINVAL;
	}
	if (rc)
		LOG_ERR(
		    "'%.*s': a sortedint range view is %sMIN..MAX[:OFFSET:COUNT] (%sMAX..MIN...), "
		    "bounds decimal ids, ( before one excludes it, -inf and +inf",
		    (int)n, name, V_RANGE, V_REVRANGE);
	return rc;
}

/* The ids of a range view, one a line, as SIRANGEBYVALUE (or
 * SIREVRANGEBYVALUE) with LIMIT OFFSET COUNT lists them. */
static int si_view_make(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	struct si_range r;
	bool rev;
	uint64_t id, from, pos = 0, got = 0;
	int rc = range_parse(name, n, &r, &rev);
	if (rc)
		return rc;
	buf_reset(out);
	/* start just before the first bound: strictly after `from` */
	bool start = rev ? (r.maxex || r.max < UINT64_MAX) : (r.minex || r.min > 0);
	from = rev ? (r.maxex ? r.max : r.max + 1) : (r.minex ? r.min : r.min - 1);
	struct sortedint_iter *it =
	    sortedint_iter_new(c->fs->ks, &c->k, rev, start ? &from : NULL, &rc);
	if (!it)
		return rc;
	while ((rc = sortedint_iter_next(it, &id)) == 1) {
		if (rev ? (id < r.min || (r.minex && id == r.min))
			: (id > r.max || (r.maxex && id == r.max)))
			break;
		if (pos++ < r.offset)
			continue;
		if ((rc = buf_printf(out, "%" PRIu64 "\n", id)))
			break;
		if (r.count && ++got == r.count)
			break;
	}
	sortedint_iter_free(it);
	return rc < 0 ? rc : 0;
}

static int si_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	uint64_t id;
	if (si_is_view(name, n))
		return fs_shape_view_entry(c, name, n, e, si_view_make);
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

static int si_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	if (si_is_view(name, n))
		return si_view_make(c, name, n, out);
	return fs_shape_load_empty(c, name, n, out);
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
    {".range:MIN..MAX", "view: SIRANGEBYVALUE, ids one a line; ( excludes, -inf, +inf",
     "cat 'i/.range:(10..+inf'"},
    {".range:MIN..MAX:OFFSET:COUNT", "view: the same with LIMIT OFFSET COUNT (COUNT 0: all)",
     "cat i/.range:-inf..+inf:0:10"},
    {".revrange:MAX..MIN", "view: SIREVRANGEBYVALUE, highest first (also :OFFSET:COUNT)",
     "cat i/.revrange:+inf..-inf:0:3"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_sortedint_shape = {
    .type = KV_TYPE_SORTEDINT,
    .lookup = si_lookup,
    .iter_open = si_open_iter,
    .iter_next = si_next,
    .iter_free = si_free_iter,
    .load = si_load,
    .check = si_check,
    .commit = si_commit,
    .create = si_create,
    .unlink = si_unlink,
    .adopt = si_adopt,
    .is_scratch = is_scratch_name,
    .from_field = si_from_field,
    .canon = si_canon,
    .is_view = si_is_view,
    .help = si_help,
};
