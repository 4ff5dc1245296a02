/*
 * fs_zset: the entries of a zset key's directory are its members, files
 * holding the score as text (the shortest decimal that reads back as the
 * same double, "inf" or "-inf", and a newline), listed in score order.
 * Writing a number sets the score (ZADD) when the file is closed;
 * anything that cannot become a number is refused at the write (EINVAL),
 * and then nothing is stored. A new member is added when its file is
 * closed, with score 0 if nothing was written; an empty file keeps an
 * existing member's score. rm is ZREM; a rename renames the member
 * keeping its score.
 *
 * Views (read-only, never listed; mapping.md has the user's version):
 *   .by-score            every member, lowest score first
 *   .by-score-rev        every member, highest score first
 *   .by-score:N          the first N of .by-score   (.by-score-rev:N: the top N)
 *   .by-score:MIN..MAX   members with MIN <= score <= MAX; "(" before a
 *                        bound makes it exclusive; inf, -inf allowed
 * one line per member: rank (ZRANK, or ZREVRANK for -rev) TAB score TAB
 * member (as its file name).
 *
 * Actions (read once per open, never listed): `.zpopmin[:COUNT]`,
 * `.zpopmax[:COUNT]` (ZPOPMIN, ZPOPMAX), `.bzpopmin:SECS`,
 * `.bzpopmax:SECS` (BZPOPMIN, BZPOPMAX): MEMBER TAB SCORE lines.
 *
 * Geo (fs_geo.c): the input `.geoadd[:nx|:xx][:ch]` (GEOADD) and the
 * views `.geopos:`, `.geodist:`, `.geohash:`, `.geosearch:`. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "fs/fs_xval.h"
#include "types/t_zset.h"

#define VIEW	 ".by-score"
#define VIEW_REV ".by-score-rev"
/* Longest text a member file may hold: any score fits many times over. */
#define SCORE_TEXT_MAX 128

/* The score as a member file shows it: the shortest text that parses
 * back to the same double ("1000", not "1e+03"; "0.1"), or inf/-inf,
 * then a newline. Returns the length. */
static size_t score_text(double d, char out[40])
{
	size_t n = fmt_double_shortest(d, out);
	out[n++] = '\n';
	out[n] = '\0';
	return n;
}

/* Could d[0, n) still become a number by appending bytes (or be one)?
 * Blanks, sign, digits with one point, an exponent, or "inf[inity]". */
static bool score_viable(const char *d, size_t n)
{
	size_t i = 0;
	bool digits = false;
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
		i++;
	if (i < n && (d[i] == '+' || d[i] == '-'))
		i++;
	if (i < n && (d[i] == 'i' || d[i] == 'I')) {
		static const char inf[] = "infinity";
		size_t j = 0;
		while (i < n && j < sizeof(inf) - 1 && (d[i] | 0x20) == inf[j]) {
			i++;
			j++;
		}
		if (i < n && j != 3 && j != 8)
			return false;
	} else {
		while (i < n && d[i] >= '0' && d[i] <= '9') {
			i++;
			digits = true;
		}
		if (i < n && d[i] == '.') {
			i++;
			while (i < n && d[i] >= '0' && d[i] <= '9') {
				i++;
				digits = true;
			}
		}
		if (i < n && digits && (d[i] == 'e' || d[i] == 'E')) {
			i++;
			if (i < n && (d[i] == '+' || d[i] == '-'))
				i++;
			if (i < n && !(d[i] >= '0' && d[i] <= '9'))
				return false;
			while (i < n && d[i] >= '0' && d[i] <= '9')
				i++;
		}
	}
	while (i < n && (d[i] == ' ' || d[i] == '\t' || d[i] == '\n' || d[i] == '\r'))
		i++;
	return i == n;
}

/* ---- views ----------------------------------------------------------- */

struct view {
	bool reverse;
	bool limited; /* :N */
	uint64_t limit;
	bool ranged; /* :MIN..MAX */
	struct zset_score_range r;
};

static bool score_is_view(const char *name, size_t n)
{
	return (n == strlen(VIEW) && has_prefix(name, n, VIEW)) ||
	       (n == strlen(VIEW_REV) && has_prefix(name, n, VIEW_REV)) ||
	       has_prefix(name, n, VIEW ":") || has_prefix(name, n, VIEW_REV ":");
}

static int parse_bound(const char *s, size_t n, double *v, bool *ex)
{
	*ex = n > 0 && s[0] == '(';
	if (*ex) {
		s++;
		n--;
	}
	return parse_double(s, n, v);
}

/* The views of a zset: .by-score... and the geo views (fs_geo.c). */
static bool zset_is_view(const char *name, size_t n)
{
	return score_is_view(name, n) || fs_geo_is_view(name, n);
}

/* Parse a view name (score_is_view is true). -EINVAL for a bad spec. */
static int view_parse(const char *name, size_t n, struct view *v)
{
	memset(v, 0, sizeof(*v));
	v->reverse = has_prefix(name, n, VIEW_REV);
	size_t head = strlen(v->reverse ? VIEW_REV : VIEW);
	if (n == head)
		return 0;
	const char *spec = name + head + 1;
	size_t sn = n - head - 1;
	const char *dots = memmem(spec, sn, "..", 2);
	int rc;
	if (!dots) {
		v->limited = true;
		rc = parse_u64(spec, sn, &v->limit);
	} else {
		v->ranged = true;
		rc = parse_bound(spec, (size_t)(dots - spec), &v->r.min, &v->r.minex);
		if (!rc)
			rc = parse_bound(dots + 2, sn - (size_t)(dots - spec) - 2, &v->r.max,
					 &v->r.maxex);
	}
	if (rc) {
		LOG_ERR("'%.*s': not a view: write %s[-rev], %s:N or %s:MIN..MAX (\"(\" for an "
			"exclusive bound)",
			(int)n, name, VIEW, VIEW, VIEW);
		return -EINVAL;
	}
	return 0;
}

struct view_out {
	const struct view *v;
	struct buf *out;
	struct buf fname;
	uint64_t rank;
	int err;
};

#define VIEW_DONE 1 /* stop the range: past the last member wanted */

static int view_line(void *arg, const char *m, size_t mn, double score)
{
	struct view_out *o = arg;
	const struct view *v = o->v;
	char text[40];
	uint64_t rank = o->rank++;
	if (v->ranged) {
		const struct zset_score_range *r = &v->r;
		bool below = score < r->min || (r->minex && score == r->min);
		bool above = score > r->max || (r->maxex && score == r->max);
		if (v->reverse ? below : above)
			return VIEW_DONE;
		if (below || above)
			return 0;
	}
	size_t tn = score_text(score, text);
	int rc = names_encode(m, mn, &o->fname);
	if (!rc)
		rc = buf_printf(o->out, "%llu\t%.*s\t%s\n", (unsigned long long)rank, (int)tn - 1,
				text, o->fname.data);
	return rc;
}

/* The contents of a view. */
static int view_make(struct fs_ctx *c, const struct view *v, struct buf *out)
{
	struct view_out o = {v, out, BUF_INIT, 0, 0};
	int64_t stop = -1;
	buf_reset(out);
	if (v->limited) {
		if (v->limit == 0)
			return 0;
		stop = v->limit > INT64_MAX ? INT64_MAX : (int64_t)v->limit - 1;
	}
	/* Ranks need every member before the range: walk from the start
	 * (a view is for reading, not for speed). */
	int rc = zset_range_by_rank(c->fs->ks, &c->k, 0, stop, v->reverse, view_line, &o);
	if (rc == VIEW_DONE)
		rc = 0;
	buf_release(&o.fname);
	return rc;
}

/* ---- members --------------------------------------------------------- */

/* The contents of view `name`. */
static int view_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	struct view v;
	int rc = view_parse(name, n, &v);
	return rc ? rc : view_make(c, &v, out);
}

static int zset_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	char text[40];
	double score;
	if (fs_geo_is_input(name, n)) { /* an input holds nothing */
		buf_reset(out);
		return 0;
	}
	if (fs_geo_is_view(name, n))
		return fs_geo_view_load(c, name, n, out);
	if (score_is_view(name, n))
		return view_load(c, name, n, out);
	int rc = zset_score(c->fs->ks, &c->k, name, n, &score);
	if (!rc) {
		size_t tn = score_text(score, text);
		rc = buf_set(out, text, tn);
	}
	return rc;
}

static int zset_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	char text[40];
	double score;
	uint64_t card;
	int rc;
	if (fs_geo_is_input(name, n)) {
		rc = fs_geo_input_check(name, n);
		if (!rc)
			rc = zset_card(c->fs->ks, &c->k, &card); /* the key is a zset */
		e->blksize = FS_INPUT_BLKSIZE;
		return rc ? rc : fs_entry_set(e, name, n, S_IFREG | 0200, 0);
	}
	if (fs_geo_is_view(name, n)) {
		rc = fs_geo_view_check(name, n); /* a bad name fails before a read */
		if (!rc)
			rc = zset_card(c->fs->ks, &c->k, &card);
		return rc ? rc : fs_shape_view_entry(c, name, n, e, fs_geo_view_load);
	}
	if (score_is_view(name, n)) {
		struct view v;
		rc = view_parse(name, n, &v); /* a bad name fails before a read */
		if (!rc)
			rc = zset_card(c->fs->ks, &c->k, &card); /* the key is a zset */
		return rc ? rc : fs_shape_view_entry(c, name, n, e, view_load);
	}
	rc = zset_score(c->fs->ks, &c->k, name, n, &score);
	if (rc == -KV_EWRONGTYPE)
		rc = -ENOENT;
	if (rc == -EUCLEAN) /* logged: listed as an empty file, read as EIO */
		return fs_entry_set(e, name, n, S_IFREG | 0644, 0);
	return rc ? rc : fs_entry_set(e, name, n, S_IFREG | 0644, score_text(score, text));
}

struct zit {
	struct zset_score_iter *by_score;
	struct zset_member_iter *by_name;
	struct buf cursor; /* score (8 bytes, host order) | member */
	char text[40];
};

static int zset_open_iter(struct fs_ctx *c, const void *after, size_t alen, bool by_name,
			  void **out)
{
	struct zit *it = calloc(1, sizeof(*it));
	int rc = 0;
	if (!it)
		return -ENOMEM;
	buf_init(&it->cursor);
	if (by_name) {
		it->by_name = zset_member_iter_new(c->fs->ks, &c->k, after, alen, &rc);
	} else {
		struct zset_cursor cur = {0, NULL, 0};
		if (after && alen >= sizeof(double)) {
			memcpy(&cur.score, after, sizeof(double));
			cur.member = (const char *)after + sizeof(double);
			cur.len = alen - sizeof(double);
		}
		it->by_score = zset_score_iter_new(
		    c->fs->ks, &c->k, false, after && alen >= sizeof(double) ? &cur : NULL, &rc);
	}
	return fs_shape_iter_opened(it, it->by_name || it->by_score, rc, out);
}

static int zset_next(void *arg, struct fs_child *ch)
{
	struct zit *it = arg;
	double score;
	int rc;
	if (it->by_name) {
		rc = zset_member_iter_next(it->by_name, &ch->name, &ch->n, &score);
	} else {
		rc = zset_score_iter_next(it->by_score, &ch->name, &ch->n, &score);
		if (rc > 0) {
			buf_reset(&it->cursor);
			int r = buf_add(&it->cursor, &score, sizeof(score));
			if (!r)
				r = buf_add(&it->cursor, ch->name, ch->n);
			if (r)
				return r;
			ch->cursor = it->cursor.data;
			ch->clen = it->cursor.len;
		}
	}
	if (rc > 0) {
		/* A score that does not decode (logged): an empty file that
		 * reads as EIO, as its lookup shows it, so rm can remove it. */
		bool bad = it->by_name ? zset_member_iter_bad(it->by_name)
				       : zset_score_iter_bad(it->by_score);
		ch->mode = S_IFREG | 0644;
		ch->size = bad ? 0 : score_text(score, it->text);
	}
	return rc;
}

static void zset_free_iter(void *arg)
{
	struct zit *it = arg;
	zset_score_iter_free(it->by_score);
	zset_member_iter_free(it->by_name);
	buf_release(&it->cursor);
	free(it);
}

static int zset_check(const char *name, size_t n, const char *d, size_t dn)
{
	if (dn <= SCORE_TEXT_MAX && score_viable(d, dn))
		return 0;
	LOG_ERR("'%.*s': a member file holds its score, a number (or inf, -inf); "
		"'%.*s' is not one",
		(int)n, name, dn > 40 ? 40 : (int)dn, d);
	return -EINVAL;
}

static int zset_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		       bool pending)
{
	double score = 0;
	if (zset_is_view(name, n) || fs_geo_is_input(name, n))
		return -EACCES;
	if (text_is_blank(d, dn)) {
		/* Nothing written: a new member gets 0, an old one keeps its score. */
		if (!pending)
			return 0;
	} else if (parse_double(d, dn, &score)) {
		LOG_ERR("'%.*s': '%.*s' is not a score", (int)n, name, dn > 40 ? 40 : (int)dn, d);
		return -EINVAL;
	}
	int rc = zset_add(c->fs->ks, &c->k, name, n, score, 0);
	return rc < 0 ? rc : 0;
}

static int zset_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)e;
	double score;
	if (zset_is_view(name, n) || fs_geo_is_input(name, n))
		return -EEXIST; /* there already: read or written, never made */
	if (fs_is_swap_name(name, n))
		return FS_CREATE_SCRATCH;
	int rc = zset_score(c->fs->ks, &c->k, name, n, &score);
	if (rc == 0)
		return -EEXIST;
	return rc == -ENOENT ? FS_CREATE_PENDING : rc;
}

static int zset_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	return zset_rem(c->fs->ks, &c->k, name, n, ZSET_KEEP_EMPTY);
}

static int zset_rename(struct fs_ctx *a, const char *from, size_t fn, struct fs_ctx *b,
		       const char *to, size_t tn, unsigned flags)
{
	(void)b; /* the same key: the caller sends other moves to EXDEV */
	(void)flags;
	return zset_rename_member(a->fs->ks, &a->k, from, fn, to, tn);
}

static int zset_from_field(void *arg, const char *f, size_t fn, const char *v, size_t vn,
			   struct convert_item *it)
{
	(void)arg;
	it->score = 0;
	if (text_is_blank(v, vn) || parse_double(v, vn, &it->score) == 0)
		return 0;
	LOG_ERR("field '%.*s' holds '%.*s', which is not a score", (int)fn, f,
		vn > 40 ? 40 : (int)vn, v);
	return -EINVAL;
}

/* ---- actions: ZPOPMIN, ZPOPMAX, BZPOPMIN, BZPOPMAX ------------------- */

/* Kvrocks reads COUNT as an int (ParseInt<int>). */
#define ZPOP_COUNT_MAX INT32_MAX

static const struct zpop {
	const char *name;
	bool max;
	bool block; /* NAME:SECS; the others are NAME or NAME:COUNT */
} zpops[] = {{".zpopmin", false, false},
	     {".zpopmax", true, false},
	     {".bzpopmin", false, true},
	     {".bzpopmax", true, true}};

/* The pop a name is (a blocking one with ':' and anything, a plain one
 * alone or with ':' and anything: SECS and COUNT are checked when it
 * runs), or NULL. */
static const struct zpop *zpop_of(const char *name, size_t n)
{
	for (size_t i = 0; i < sizeof(zpops) / sizeof(zpops[0]); i++) {
		size_t an = strlen(zpops[i].name);
		if (has_prefix(name, n, zpops[i].name) &&
		    (n > an ? name[an] == ':' : !zpops[i].block))
			return &zpops[i];
	}
	return NULL;
}

static bool zpop_is_action(const char *name, size_t n)
{
	return zpop_of(name, n) != NULL;
}

/* One line of a pop's answer: the member as an item (fs_items_encode),
 * a tab, its score as its file shows it. */
static int zpop_line(void *arg, const char *m, size_t mn, double score)
{
	struct buf *out = arg;
	char text[40];
	size_t tn = score_text(score, text);
	int rc = fs_items_encode(out, m, mn);
	if (!rc)
		rc = buf_add(out, "\t", 1);
	return rc ? rc : buf_add(out, text, tn);
}

/*
 * `cat Z/.zpopmin` pops the member of the lowest score, `.zpopmin:COUNT`
 * up to COUNT of them (0 to 2^31-1), lowest first, in one batch;
 * `.zpopmax` the highest. `.bzpopmin:SECS`, `.bzpopmax:SECS` wait up to
 * SECS seconds (0: for ever) for a member and pop one (ETIMEDOUT when
 * none came). An empty zset answers an empty read and stays an empty
 * zset when its last member goes.
 */
static int zpop_act(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	const struct zpop *p = zpop_of(name, n);
	int64_t count = 1;
	uint64_t ms = 0;
	int rc = 0;
	if (!p)
		return -ENOENT;
	size_t an = strlen(p->name);
	if (p->block)
		rc = fs_act_secs(name, n, an + 1, &ms);
	else if (n > an)
		rc = fs_act_count(name, n, an + 1, 0, ZPOP_COUNT_MAX, &count);
	uint64_t deadline = p->block ? ks_wait_deadline(ms) : 0;
	while (!rc) {
		uint64_t gen = ks_gen(c->fs->ks, &c->k);
		buf_reset(out);
		rc = zset_pop(c->fs->ks, &c->k, (uint64_t)count, p->max, ZSET_KEEP_EMPTY, zpop_line,
			      out);
		if (rc || out->len || !p->block)
			break;
		/* Wait for a write to the zset, then look again. */
		rc = fs_act_wait(c, &c->k, gen, deadline);
		if (rc == -ETIMEDOUT)
			LOG_INFO("'%.*s' of '%.*s': no member came in time", (int)n, name,
				 (int)c->k.klen, c->k.key);
	}
	if (rc)
		buf_reset(out);
	return rc;
}

/* The actions of a zset: its pops (above), and the counters MEMBER:incr, MEMBER:incrby:X, ... of a
 * member (fs_counter.c): ZINCRBY, whatever the suffix (scores are doubles). */
static bool zset_is_action(const char *name, size_t n)
{
	struct fs_counter ct;
	return zpop_is_action(name, n) || fs_counter_parse(name, n, &ct) == 1;
}

static int zset_act(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	struct fs_counter ct;
	char text[40];
	double d;
	if (zpop_is_action(name, n))
		return zpop_act(c, name, n, out);
	if (fs_counter_parse(name, n, &ct) != 1)
		return -ENOENT;
	int rc = fs_counter_float(&ct, name, n, &d);
	if (rc) /* logged */
		return rc;
	/* The member's own times move with its score. */
	struct ks_attr_change ch = {.flags = KS_ATTR_TOUCH, .entry = name, .elen = ct.base};
	struct ks_key k = c->k;
	k.attr = &ch;
	rc = zset_incrby(c->fs->ks, &k, name, ct.base, d, &d);
	if (!rc)
		rc = buf_set(out, text, score_text(d, text));
	fs_counter_refused(rc, name, n, "score", true);
	if (!rc)
		fs_action_changed(c->fs, c->dir, name, ct.base);
	return rc;
}

static const struct fs_help zset_help[] = {
    {"MEMBER", "a member: the file holds its score (ZADD at close, rm is ZREM)", "echo 2.5 > z/m"},
    {".by-score", "view: rank, score, member lines, lowest score first", "cat z/.by-score"},
    {".by-score-rev", "view: the same, highest score first", "cat z/.by-score-rev"},
    {".by-score:N", "view: the N lowest (.by-score-rev:N: the top N)", "cat z/.by-score-rev:3"},
    {".by-score:MIN..MAX", "view: scores in MIN..MAX, ( before a bound excludes it",
     "cat \"z/.by-score:(1..inf\""},
    {".zpopmin",
     "pops the member of the lowest score: each open answers MEMBER<TAB>SCORE (ZPOPMIN)",
     "cat z/.zpopmin"},
    {".zpopmin:COUNT", "pops up to COUNT members, lowest first, one line each", "cat z/.zpopmin:3"},
    {".zpopmax", "pops the member of the highest score (ZPOPMAX; :COUNT as above)",
     "cat z/.zpopmax:3"},
    {".bzpopmin:SECS",
     "waits up to SECS seconds (0: for ever) for a member and pops the lowest "
     "(BZPOPMIN); ETIMEDOUT when none came",
     "while x=$(cat z/.bzpopmin:0); do ...; done"},
    {".bzpopmax:SECS", "the same, the highest (BZPOPMAX)", "cat z/.bzpopmax:5"},
    {".geoadd",
     "input: LON,LAT,MEMBER lines (GEOADD; :nx, :xx, :ch as options); a read-write open "
     "reads the reply",
     "echo 13.361389,38.115556,Palermo >> z/.geoadd"},
    {".geopos:M1,M2", "view: LON,LAT of each member (GEOPOS), an empty line for none",
     "cat z/.geopos:Palermo,Catania"},
    {".geodist:M1,M2[:UNIT]", "view: GEODIST in m, km, ft or mi (4 decimals)",
     "cat z/.geodist:Palermo,Catania:km"},
    {".geohash:M1,M2", "view: the 11-character geohash of each member (GEOHASH)",
     "cat z/.geohash:Palermo"},
    {".geosearch:SPEC",
     "view: GEOSEARCH: member=M or lonlat=LON,LAT; radius=R or box=W,H; a unit; "
     "withdist, withcoord, withhash, count=N, any, asc, desc",
     "cat z/.geosearch:member=Palermo:radius=200:km:withdist"},
    {"MEMBER:incrby:X",
     "ZINCRBY X (also :incr, :decr, :decrby:X), print the new score; a "
     "missing member is added",
     "cat 'z/alice:incrby:2.5'"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_zset_shape = {
    .type = KV_TYPE_ZSET,
    .recomputed = true,
    .lookup = zset_lookup,
    .iter_open = zset_open_iter,
    .iter_next = zset_next,
    .iter_free = zset_free_iter,
    .is_view = zset_is_view,
    .is_input = fs_geo_is_input,
    .feed = fs_geo_feed,
    .load = zset_load,
    .check = zset_check,
    .commit = zset_commit,
    .create = zset_create,
    .unlink = zset_unlink,
    .rename = zset_rename,
    .adopt = fs_shape_adopt_commit, /* a swap file's contents: the score */
    .is_scratch = fs_is_swap_name,
    .from_field = zset_from_field,
    .is_action = zset_is_action,
    .act = zset_act,
    .help = zset_help,
};
