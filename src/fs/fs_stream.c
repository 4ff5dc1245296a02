/*
 * fs_stream: a stream key's directory. Its entries are files named by
 * their IDs ("1700000000000-0"), listed in ID order; each holds the
 * entry's pairs as `field<TAB>value` lines with a reversible escape
 * (\\ \t \n \r \xHH). Creating a file named by an ID above the last one
 * adds it when closed (XADD with that ID); rm is XDEL; entries are
 * immutable. Names starting with "." are rsync's temp files, held in
 * memory until a rename onto an ID restores that entry (any order).
 * Unlisted inputs: .add (each line an entry, XADD *) and .ctl (commands:
 * trim, group, readgroup, ack, claim). Unlisted views: .log (all entries
 * as lines, growing: tail -f), .range:START..END[:COUNT] and
 * .revrange:END..START[:COUNT] (XRANGE, XREVRANGE: lines as .log's),
 * .info, .groups, .consumers:G, .pending:G and .pending:G:C. Listed
 * after the entries while they hold something, the state files "groups"
 * (consumer groups, consumers, pending entries) and "state" (the counters
 * no entry shows; t_stream_state.h), written whole, so a copy is the same
 * stream. See docs/mapping.md section 19. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "types/t_stream.h"
#include "types/t_stream_state.h"

#define V_LOG	    ".log"
#define V_INFO	    ".info"
#define V_GROUPS    ".groups"
#define V_CONSUMERS ".consumers:"
#define V_PENDING   ".pending:"
#define V_RANGE	    ".range:"
#define V_REVRANGE  ".revrange:"
#define IN_ADD	    ".add"
#define IN_CTL	    ".ctl"
#define CTL_WORDS   64 /* words in one .ctl line */
/* The state files: listed after the entries while they hold something
 * (docs/mapping.md section 19), in this order (their listing cursors). */
#define F_GROUPS "groups"
#define F_STATE	 "state"
enum { SF_GROUPS = 1, SF_STATE = 2 };

static bool is_name(const char *s, size_t n, const char *lit)
{
	return n == strlen(lit) && memcmp(s, lit, n) == 0;
}

/* A view named by a prefix and an argument (".pending:G"): one byte of
 * it at least. */
static bool is_arg_view(const char *name, size_t n, const char *p)
{
	return n > strlen(p) && has_prefix(name, n, p);
}

static bool st_is_view(const char *name, size_t n)
{
	return is_name(name, n, V_LOG) || is_name(name, n, V_INFO) || is_name(name, n, V_GROUPS) ||
	       is_arg_view(name, n, V_CONSUMERS) || is_arg_view(name, n, V_PENDING) ||
	       is_arg_view(name, n, V_RANGE) || is_arg_view(name, n, V_REVRANGE);
}

/* SF_GROUPS, SF_STATE, or 0: no state file. */
static int state_file(const char *name, size_t n)
{
	return is_name(name, n, F_GROUPS) ? SF_GROUPS : is_name(name, n, F_STATE) ? SF_STATE : 0;
}

static bool st_is_immutable(const char *name, size_t n)
{
	return !state_file(name, n);
}

static bool st_is_live(const char *name, size_t n)
{
	return is_name(name, n, V_LOG);
}

/*
 * ".add" and its options, each after a ':' (XADD's): "nomkstream",
 * "maxlen=N", "maxlen~N", "minid=ID", "minid~ID" (ID "MS" or "MS-SEQ";
 * one trim at most; "~" trims exactly, as Kvrocks does).
 */
struct add_opts {
	bool trim;
	struct stream_trim_opt t;
	unsigned flags;
};

static bool parse_add(const char *name, size_t n, struct add_opts *o)
{
	size_t at = strlen(IN_ADD);
	memset(o, 0, sizeof(*o));
	if (!has_prefix(name, n, IN_ADD))
		return false;
	while (at < n) {
		if (name[at++] != ':')
			return false;
		const char *w = name + at, *end = memchr(w, ':', n - at);
		size_t wn = end ? (size_t)(end - w) : n - at;
		size_t pn = 0;
		at += wn;
		if (is_name(w, wn, "nomkstream") && !(o->flags & STREAM_NOMKSTREAM)) {
			o->flags |= STREAM_NOMKSTREAM;
			continue;
		}
		if (o->trim)
			return false;
		if (has_prefix(w, wn, "maxlen=") || has_prefix(w, wn, "maxlen~"))
			pn = strlen("maxlen=");
		else if (has_prefix(w, wn, "minid=") || has_prefix(w, wn, "minid~"))
			pn = strlen("minid=");
		else
			return false;
		o->trim = true;
		o->t.how = w[1] == 'a' ? STREAM_TRIM_MAXLEN : STREAM_TRIM_MINID;
		if (o->t.how == STREAM_TRIM_MAXLEN
			? parse_u64(w + pn, wn - pn, &o->t.maxlen) != 0
			: stream_id_parse(w + pn, wn - pn, true, &o->t.minid))
			return false;
	}
	return true;
}

static bool st_is_input(const char *name, size_t n)
{
	struct add_opts o;
	return parse_add(name, n, &o) || is_name(name, n, IN_CTL);
}

static bool is_scratch_name(const char *name, size_t n)
{
	struct stream_id id;
	return fs_is_scratch_name(name, n) && !st_is_view(name, n) && !st_is_input(name, n) &&
	       !state_file(name, n) && stream_id_parse(name, n, false, &id) != 0;
}

/* ---- The text format ------------------------------------------------- */

/* Format a stored entry value as its file: one field<TAB>value line per
 * pair. */
static int entry_text(const char *val, size_t vn, struct buf *out)
{
	struct stream_str s;
	size_t pos = 0;
	int rc, j = 0;
	while ((rc = stream_value_next(val, vn, &pos, &s)) == 1) {
		rc = buf_add_escaped(out, s.p, s.n);
		if (!rc)
			rc = buf_add(out, j++ % 2 ? "\n" : "\t", 1);
		if (rc)
			return rc;
	}
	if (!rc && j % 2)
		rc = buf_add(out, "\n", 1); /* a field without a value (not from kvfs) */
	return rc;
}

/* Parsed pairs of some text: the strings point into `store`. */
struct pairs {
	struct stream_str *v;
	size_t n, cap;
	struct buf store;
	size_t *offs; /* offsets into store (store moves while it grows) */
};

static void pairs_release(struct pairs *p)
{
	free(p->v);
	free(p->offs);
	buf_release(&p->store);
	memset(p, 0, sizeof(*p));
}

static int pairs_push(struct pairs *p, const char *tok, size_t tn)
{
	struct buf one = BUF_INIT;
	int rc = buf_set_unescaped(&one, tok, tn);
	if (rc) {
		buf_release(&one);
		return rc;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 8;
		void *nv = realloc(p->v, cap * sizeof(*p->v));
		void *no = nv ? realloc(p->offs, cap * 2 * sizeof(*p->offs)) : NULL;
		if (nv)
			p->v = nv;
		if (!no) {
			buf_release(&one);
			return -ENOMEM;
		}
		p->offs = no;
		p->cap = cap;
	}
	p->offs[2 * p->n] = p->store.len;
	p->offs[2 * p->n + 1] = one.len;
	p->n++;
	rc = buf_add(&p->store, one.data ? one.data : "", one.len);
	buf_release(&one);
	return rc;
}

static void pairs_fix(struct pairs *p)
{
	for (size_t j = 0; j < p->n; j++) {
		p->v[j].p = p->store.data ? p->store.data + p->offs[2 * j] : "";
		p->v[j].n = p->offs[2 * j + 1];
	}
}

/*
 * Parse one line (no newline) of TAB-separated escaped strings: field,
 * value, field, value... appended to p. -EINVAL (logged with `what` and
 * the line number) for an odd count or a bad escape.
 */
static int parse_line(const char *what, size_t lineno, const char *l, size_t ln, struct pairs *p)
{
	size_t before = p->n, start = 0;
	int rc = 0;
	for (size_t j = 0; j <= ln && !rc; j++) {
		if (j == ln || l[j] == '\t') {
			rc = pairs_push(p, l + start, j - start);
			start = j + 1;
		}
	}
	if (!rc && (p->n - before) % 2)
		rc = -EINVAL;
	if (rc == -EINVAL)
		LOG_ERR("%s, line %zu: not field<TAB>value pairs (escapes: \\\\ \\t \\n \\r "
			"\\xHH)",
			what, lineno);
	return rc;
}

/* Parse a whole entry file: every non-empty line holds pairs. With
 * `whole` false the text after the last newline is not looked at (a
 * write in progress). */
static int parse_text(const char *what, const char *d, size_t dn, bool whole, struct pairs *p)
{
	size_t lineno = 0, start = 0;
	int rc = 0;
	for (size_t j = 0; j <= dn && !rc; j++) {
		if (j < dn && d[j] != '\n')
			continue;
		if (j == dn && !whole)
			break;
		lineno++;
		if (j > start)
			rc = parse_line(what, lineno, d + start, j - start, p);
		start = j + 1;
	}
	pairs_fix(p);
	return rc;
}

/* ---- Views ----------------------------------------------------------- */

/* What a range view asks (XRANGE, XREVRANGE): entries from `from` to
 * `to` in ID order (rev: descending), NULL bounds unbounded, at most
 * count of them (0: all). */
struct st_range {
	bool rev;
	struct stream_id from, to;
	bool has_from, has_to, excl_from, excl_to;
	uint64_t count;
};

/* The entries r asks for, one line each: ID<TAB>field<TAB>value... */
static int range_lines(struct fs_ctx *c, const struct st_range *r, struct buf *out)
{
	int rc = 0;
	uint64_t got = 0;
	struct stream_iter *it =
	    stream_iter_new(c->fs->ks, &c->k, r->rev, r->has_from ? &r->from : NULL, r->excl_from,
			    r->has_to ? &r->to : NULL, r->excl_to, &rc);
	struct stream_id id;
	const char *val;
	size_t vn;
	if (!it)
		return rc;
	while ((!r->count || got++ < r->count) &&
	       (rc = stream_iter_next(it, &id, &val, &vn)) == 1) {
		char s[STREAM_ID_MAX];
		size_t sn = stream_id_format(&id, s);
		size_t mark = out->len;
		if ((rc = stream_value_check(&c->k, &id, val, vn)))
			break;
		rc = buf_add(out, s, sn);
		if (!rc)
			rc = buf_add(out, "\t", 1);
		if (!rc)
			rc = entry_text(val, vn, out);
		if (rc)
			break;
		/* one line per entry: the pairs' newlines become TABs */
		for (size_t j = mark; j + 1 < out->len; j++)
			if (out->data[j] == '\n')
				out->data[j] = '\t';
	}
	stream_iter_free(it);
	return rc < 0 ? rc : 0;
}

static int log_view(struct fs_ctx *c, struct buf *out)
{
	struct st_range all = {0};
	return range_lines(c, &all, out);
}

/* One bound of a range view: "-" (low only), "+" (high only), "ID" or
 * "MS" (seq 0 low, the last seq high), "(" before an ID or MS excludes
 * it. *has: a bound at all. 0 or -EINVAL. */
static int range_bound(const char *s, size_t n, bool low, struct stream_id *id, bool *has,
		       bool *excl)
{
	*excl = n > 0 && s[0] == '(';
	*has = true;
	if (n == 1 && s[0] == (low ? '-' : '+')) {
		*has = false;
		return 0;
	}
	if (*excl) {
		s++;
		n--;
	}
	if (stream_id_parse(s, n, true, id))
		return -EINVAL;
	if (!low && !memchr(s, '-', n))
		id->seq = UINT64_MAX;
	return 0;
}

/* ".range:START..END[:COUNT]" or ".revrange:END..START[:COUNT]" (the
 * order of XREVRANGE's arguments) into r. 0 or -EINVAL, logged. */
static int range_parse(const char *name, size_t n, struct st_range *r)
{
	r->rev = has_prefix(name, n, V_REVRANGE);
	size_t pn = strlen(r->rev ? V_REVRANGE : V_RANGE);
	const char *s = name + pn, *end = name + n;
	const char *dots = memmem(s, (size_t)(end - s), "..", 2);
	const char *colon = dots ? memchr(dots + 2, ':', (size_t)(end - dots - 2)) : NULL;
	const char *hi = dots ? dots + 2 : NULL, *hend = colon ? colon : end;
	int rc = -EINVAL;
	r->count = 0;
	if (dots) {
		/* the first bound is where the iteration starts: the low one
		 * for .range, the high one for .revrange */
		rc = range_bound(s, (size_t)(dots - s), !r->rev, &r->from, &r->has_from,
				 &r->excl_from);
		if (!rc)
			rc = range_bound(hi, (size_t)(hend - hi), r->rev, &r->to, &r->has_to,
					 &r->excl_to);
		if (!rc && colon &&
		    (parse_u64(colon + 1, (size_t)(end - colon - 1), &r->count) || !r->count))
			rc = -EINVAL;
	}
	if (rc)
		LOG_ERR("'%.*s': a stream range view is " V_RANGE
			"START..END[:COUNT] or " V_REVRANGE
			"END..START[:COUNT]: bounds IDs (MS-SEQ or MS), - and +, ( before one "
			"excludes it, COUNT at least 1",
			(int)n, name);
	return rc;
}

static int info_view(struct fs_ctx *c, struct buf *out)
{
	struct stream_info i;
	char a[5][STREAM_ID_MAX];
	int rc = stream_info(c->fs->ks, &c->k, &i);
	if (rc == -ENOENT) {
		memset(&i, 0, sizeof(i)); /* a remembered empty stream */
		rc = 0;
	}
	if (rc)
		return rc;
	stream_id_format(&i.last_generated, a[0]);
	stream_id_format(&i.max_deleted, a[1]);
	stream_id_format(&i.recorded_first, a[2]);
	stream_id_format(&i.first, a[3]);
	stream_id_format(&i.last, a[4]);
	return buf_printf(out,
			  "length\t%" PRIu64 "\nlast-generated-id\t%s\nmax-deleted-entry-id\t%s\n"
			  "entries-added\t%" PRIu64
			  "\nrecorded-first-entry-id\t%s\ngroups\t%" PRIu64
			  "\nfirst-entry\t%s\nlast-entry\t%s\n",
			  i.size, a[0], a[1], i.entries_added, a[2], i.group_number,
			  i.size ? a[3] : "-", i.size ? a[4] : "-");
}

static int group_line(void *arg, const char *name, size_t n, const struct stream_group *g)
{
	struct buf *out = arg;
	char id[STREAM_ID_MAX], er[24] = "-", lag[24] = "-";
	stream_id_format(&g->last_delivered, id);
	if (g->entries_read != -1)
		snprintf(er, sizeof(er), "%" PRId64, g->entries_read);
	if (g->lag != UINT64_MAX)
		snprintf(lag, sizeof(lag), "%" PRIu64, g->lag);
	int rc = buf_add_escaped(out, name, n);
	if (!rc)
		rc = buf_printf(out, "\t%" PRIu64 "\t%" PRIu64 "\t%s\t%s\t%s\n", g->consumers,
				g->pending, id, er, lag);
	return rc;
}

static int consumer_line(void *arg, const char *name, size_t n, const struct stream_consumer *co)
{
	struct buf *out = arg;
	uint64_t now = now_ms();
	int rc = buf_add_escaped(out, name, n);
	if (!rc)
		rc = buf_printf(out, "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\n", co->pending,
				now > co->seen_ms ? now - co->seen_ms : 0,
				now > co->active_ms ? now - co->active_ms : 0);
	return rc;
}

static int pending_line(void *arg, const struct stream_id *id, const struct stream_pel *p,
			uint64_t idle)
{
	struct buf *out = arg;
	char s[STREAM_ID_MAX];
	stream_id_format(id, s);
	int rc = buf_printf(out, "%s\t", s);
	if (!rc)
		rc = buf_add_escaped(out, p->consumer.p, p->consumer.n);
	if (!rc)
		rc = buf_printf(out, "\t%" PRIu64 "\t%" PRIu64 "\n", idle, p->deliveries);
	return rc;
}

/* ".pending:G" or ".pending:G:C": the whole rest is a group if it is
 * one; otherwise the last ':' splits group and consumer. */
static int pending_view(struct fs_ctx *c, const char *spec, size_t sn, struct buf *out)
{
	struct buf g = BUF_INIT, co = BUF_INIT;
	int rc = buf_set_unescaped(&g, spec, sn);
	if (!rc)
		rc = stream_pending(c->fs->ks, &c->k, g.data, g.len, NULL, NULL, 0, NULL, 0, 0,
				    pending_line, out);
	if (rc == -ENOENT) {
		const char *colon = memrchr(spec, ':', sn);
		if (colon) {
			size_t gn = (size_t)(colon - spec);
			buf_reset(out);
			rc = buf_set_unescaped(&g, spec, gn);
			if (!rc)
				rc = buf_set_unescaped(&co, colon + 1, sn - gn - 1);
			if (!rc)
				rc = stream_pending(c->fs->ks, &c->k, g.data, g.len, NULL, NULL, 0,
						    co.data ? co.data : "", co.len, 0, pending_line,
						    out);
		}
	}
	buf_release(&g);
	buf_release(&co);
	return rc == -EINVAL ? -ENOENT : rc;
}

static int view_make(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	buf_reset(out);
	if (is_name(name, n, V_LOG))
		return log_view(c, out);
	if (is_name(name, n, V_INFO))
		return info_view(c, out);
	if (is_name(name, n, V_GROUPS)) {
		int rc = stream_groups(c->fs->ks, &c->k, group_line, out);
		return rc == -ENOENT ? 0 : rc;
	}
	if (is_arg_view(name, n, V_CONSUMERS)) {
		struct buf g = BUF_INIT;
		size_t pn = strlen(V_CONSUMERS);
		int rc = buf_set_unescaped(&g, name + pn, n - pn);
		if (!rc)
			rc = stream_consumers(c->fs->ks, &c->k, g.data, g.len, consumer_line, out);
		buf_release(&g);
		return rc == -EINVAL ? -ENOENT : rc;
	}
	if (is_arg_view(name, n, V_RANGE) || is_arg_view(name, n, V_REVRANGE)) {
		struct st_range r;
		int rc = range_parse(name, n, &r);
		return rc ? rc : range_lines(c, &r, out);
	}
	size_t pn = strlen(V_PENDING);
	return pending_view(c, name + pn, n - pn, out);
}

/* ---- The state files ------------------------------------------------- */

/* The text of state file f of k: 0, FS_SKETCH_ABSENT (it holds nothing:
 * not listed), -ENOENT (no stream), ... */
static int state_text(struct keyspace *ks, const struct ks_key *k, int f, struct buf *out)
{
	buf_reset(out);
	if (f == SF_STATE) {
		struct stream_info i;
		int rc = stream_info(ks, k, &i);
		if (!rc && stream_counters_derived(&i))
			return FS_SKETCH_ABSENT;
		return rc ? rc : stream_counters_format(&i, out);
	}
	struct stream_gstate gs = STREAM_GSTATE_INIT;
	int rc = stream_gstate_read(ks, k, &gs);
	if (!rc && gs.ng == 0)
		rc = FS_SKETCH_ABSENT;
	else if (!rc)
		rc = stream_gstate_format(&gs, out);
	stream_gstate_release(&gs);
	return rc;
}

/* Replace what state file f holds with its text d (one batch): -EINVAL
 * (logged) for text that does not read or fit, nothing changed. A file
 * closed with nothing written changes nothing. */
static int state_store(struct fs_ctx *c, int f, const char *d, size_t dn)
{
	if (dn == 0)
		return 0;
	if (f == SF_STATE) {
		struct stream_counters sc;
		int rc = stream_counters_parse(d, dn, &sc);
		return rc ? rc : stream_set_counters(c->fs->ks, &c->k, &sc);
	}
	struct stream_gstate gs = STREAM_GSTATE_INIT;
	int rc = stream_gstate_parse(d, dn, &gs);
	if (!rc)
		rc = stream_gstate_replace(c->fs->ks, &c->k, &gs);
	stream_gstate_release(&gs);
	return rc;
}

/* rm of a state file: the groups go (XGROUP DESTROY of each); the
 * counters become those of adding the entries in ID order. */
static int state_clear(struct fs_ctx *c, int f)
{
	if (f == SF_STATE)
		return stream_set_counters(c->fs->ks, &c->k, NULL);
	struct stream_gstate none = STREAM_GSTATE_INIT;
	return stream_gstate_replace(c->fs->ks, &c->k, &none);
}

/* ---- Entries --------------------------------------------------------- */

static int parse_id(const char *name, size_t n, struct stream_id *id, const char *why)
{
	int rc = stream_id_parse(name, n, false, id);
	if (rc && why)
		LOG_ERR("%s '%.*s': a stream entry is named by its ID, MS-SEQ in decimal "
			"(e.g. 1700000000000-0)",
			why, (int)n, name);
	return rc;
}

static int st_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	struct buf val = BUF_INIT, text = BUF_INIT;
	struct stream_id id;
	int rc;
	if (st_is_input(name, n))
		return fs_entry_set(e, name, n, S_IFREG | 0200, 0);
	if (st_is_view(name, n)) {
		uint64_t len;
		rc = stream_len(c->fs->ks, &c->k, &len); /* the key is a stream */
		return rc ? rc : fs_shape_view_entry(c, name, n, e, view_make);
	}
	if (state_file(name, n)) {
		rc = state_text(c->fs->ks, &c->k, state_file(name, n), &text);
		if (!rc)
			rc = fs_entry_set(e, name, n, S_IFREG | 0644, text.len);
		buf_release(&text);
		return rc == FS_SKETCH_ABSENT || rc == -KV_EWRONGTYPE ? -ENOENT : rc;
	}
	if (parse_id(name, n, &id, NULL))
		return -ENOENT;
	rc = stream_get(c->fs->ks, &c->k, &id, &val);
	if (!rc)
		rc = stream_value_check(&c->k, &id, val.data, val.len);
	if (!rc)
		rc = entry_text(val.data, val.len, &text);
	if (rc == -EUCLEAN) /* logged: listed as an empty file, read as EIO */
		rc = fs_entry_set(e, name, n, S_IFREG | 0444, 0);
	else if (!rc)
		rc = fs_entry_set(e, name, n, S_IFREG | 0444, text.len);
	buf_release(&val);
	buf_release(&text);
	return rc == -KV_EWRONGTYPE ? -ENOENT : rc;
}

struct stit {
	struct stream_iter *it;
	struct fs_ctx *c;
	struct keyspace *ks;
	struct ks_key k; /* the key (its bytes are the iterator's) */
	int sf;		 /* the last state file looked at (0: the entries first) */
	char name[STREAM_ID_MAX];
	uint8_t cursor[16];
	struct buf text;
};

static int st_open_iter(struct fs_ctx *c, const void *after, size_t alen, bool by_name, void **out)
{
	(void)by_name; /* IDs have no long names */
	struct stit *it = calloc(1, sizeof(*it));
	struct stream_id cur;
	int rc = 0;
	if (!it)
		return -ENOMEM;
	bool from = after && alen == 16;
	if (from) {
		cur.ms = get_be64(after);
		cur.seq = get_be64((const char *)after + 8);
	}
	it->c = c;
	it->ks = c->fs->ks;
	it->it =
	    stream_iter_new(c->fs->ks, &c->k, false, from ? &cur : NULL, true, NULL, false, &rc);
	if (it->it)
		it->k = *stream_iter_key(it->it);
	if (it->it && after && alen == 1) {
		/* past the entries: resume after that state file */
		it->sf = *(const uint8_t *)after;
	}
	return fs_shape_iter_opened(it, it->it != NULL, rc, out);
}

/* After the entries, the state files that hold something. */
static int st_next_state(struct stit *it, struct fs_child *ch)
{
	while (it->sf < SF_STATE) {
		int f = ++it->sf;
		int rc = state_text(it->ks, &it->k, f, &it->text);
		if (rc == FS_SKETCH_ABSENT)
			continue;
		if (rc)
			return rc == -ENOENT || rc == -KV_EWRONGTYPE ? 0 : rc;
		ch->name = f == SF_GROUPS ? F_GROUPS : F_STATE;
		ch->n = strlen(ch->name);
		it->cursor[0] = (uint8_t)f;
		ch->cursor = (const char *)it->cursor;
		ch->clen = 1;
		ch->mode = S_IFREG | 0644;
		ch->size = it->text.len;
		return 1;
	}
	return 0;
}

static int st_next(void *arg, struct fs_child *ch)
{
	struct stit *it = arg;
	struct stream_id id;
	const char *val;
	size_t vn;
	if (it->sf)
		return st_next_state(it, ch);
	int rc = stream_iter_next(it->it, &id, &val, &vn);
	if (rc == 0)
		return st_next_state(it, ch);
	if (rc > 0) {
		buf_reset(&it->text);
		/* it->c is the opener's, gone by now: log by the iterator's key */
		int erc = stream_value_check(stream_iter_key(it->it), &id, val, vn);
		if (!erc)
			erc = entry_text(val, vn, &it->text);
		if (erc == -EUCLEAN) /* logged: an empty file, read as EIO, rm removes it */
			buf_reset(&it->text);
		else if (erc)
			return erc;
		ch->name = it->name;
		ch->n = stream_id_format(&id, it->name);
		put_be64(it->cursor, id.ms);
		put_be64(it->cursor + 8, id.seq);
		ch->cursor = (const char *)it->cursor;
		ch->clen = sizeof(it->cursor);
		ch->mode = S_IFREG | 0444;
		ch->size = it->text.len;
	}
	return rc;
}

static void st_free_iter(void *arg)
{
	struct stit *it = arg;
	stream_iter_free(it->it);
	buf_release(&it->text);
	free(it);
}

static int st_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	struct buf val = BUF_INIT;
	struct stream_id id;
	int rc;
	buf_reset(out);
	if (st_is_input(name, n))
		return 0;
	if (st_is_view(name, n))
		return view_make(c, name, n, out);
	if (state_file(name, n)) {
		rc = state_text(c->fs->ks, &c->k, state_file(name, n), out);
		return rc == FS_SKETCH_ABSENT ? 0 : rc;
	}
	if (parse_id(name, n, &id, "read of"))
		return -ENOENT;
	rc = stream_get(c->fs->ks, &c->k, &id, &val);
	if (!rc)
		rc = stream_value_check(&c->k, &id, val.data, val.len);
	if (!rc)
		rc = entry_text(val.data, val.len, out);
	buf_release(&val);
	return rc;
}

static int st_check(const char *name, size_t n, const char *d, size_t dn)
{
	struct pairs p = {0};
	char what[64 + STREAM_ID_MAX];
	if (state_file(name, n) == SF_GROUPS) {
		/* the complete lines read, so a bad one fails its write */
		struct stream_gstate gs = STREAM_GSTATE_INIT;
		const char *nl = dn ? memrchr(d, '\n', dn) : NULL;
		int rc = nl ? stream_gstate_parse(d, (size_t)(nl - d) + 1, &gs) : 0;
		stream_gstate_release(&gs);
		return rc;
	}
	if (state_file(name, n))
		return 0; /* read whole when it is stored */
	snprintf(what, sizeof(what), "entry '%.*s'", (int)(n < 64 ? n : 64), name);
	int rc = parse_text(what, d, dn, false, &p);
	pairs_release(&p);
	return rc;
}

/* Add an entry from its file text. */
static int add_text(struct fs_ctx *c, enum stream_add_mode mode, const struct stream_id *id,
		    const char *what, const char *d, size_t dn)
{
	struct pairs p = {0};
	int rc = parse_text(what, d, dn, true, &p);
	if (!rc && p.n == 0) {
		LOG_ERR("%s: an entry needs at least one field<TAB>value line", what);
		rc = -EINVAL;
	}
	if (!rc)
		rc = stream_add(c->fs->ks, &c->k, mode, id, p.v, p.n, 0, NULL);
	pairs_release(&p);
	return rc;
}

static int st_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		     bool pending)
{
	struct stream_id id;
	char what[64 + STREAM_ID_MAX];
	if (state_file(name, n))
		return state_store(c, state_file(name, n), d, dn);
	if (!pending) {
		LOG_ERR("'%.*s': stream entries cannot be changed (Redis has no XSET); "
			"rm it and add a new one",
			(int)n, name);
		return -EACCES;
	}
	int rc = parse_id(name, n, &id, "commit of");
	if (rc)
		return rc;
	snprintf(what, sizeof(what), "entry '%.*s'", (int)n, name);
	return add_text(c, STREAM_ADD_ID, &id, what, d, dn);
}

static int st_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)e;
	struct stream_id id;
	struct stream_info i;
	struct buf val = BUF_INIT;
	if (is_scratch_name(name, n))
		return FS_CREATE_SCRATCH;
	if (state_file(name, n))
		return FS_CREATE_PENDING; /* stored at the close */
	if (parse_id(name, n, &id, NULL))
		return fs_shape_refuse_name(c, "create", name, n);
	int rc;
	if ((id.ms == 0 && id.seq == 0) || id.ms == UINT64_MAX) {
		LOG_ERR("create '%.*s': not a valid entry ID (0-0, or ms 2^64-1)", (int)n, name);
		return -EINVAL;
	}
	rc = stream_get(c->fs->ks, &c->k, &id, &val);
	buf_release(&val);
	if (rc == 0)
		return -EEXIST;
	if (rc != -ENOENT)
		return rc;
	rc = stream_info(c->fs->ks, &c->k, &i);
	if (rc == -ENOENT)
		return FS_CREATE_PENDING; /* a new stream: any ID but 0-0 */
	if (rc)
		return rc;
	if (stream_id_cmp(&id, &i.last_generated) <= 0 || id.ms == UINT64_MAX) {
		char a[STREAM_ID_MAX];
		stream_id_format(&i.last_generated, a);
		LOG_ERR("create '%.*s': a new entry's ID must be greater than the last ID %s",
			(int)n, name, a);
		return -EINVAL;
	}
	return FS_CREATE_PENDING;
}

static int st_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	struct stream_id id;
	uint64_t deleted;
	struct fs_entry e;
	if (state_file(name, n)) {
		fs_entry_init(&e);
		int rc = st_lookup(c, name, n, &e); /* -ENOENT while it is not listed */
		fs_entry_release(&e);
		return rc ? rc : state_clear(c, state_file(name, n));
	}
	if (parse_id(name, n, &id, NULL))
		return -ENOENT;
	int rc = stream_del(c->fs->ks, &c->k, &id, 1, &deleted);
	return rc ? rc : deleted ? 0 : -ENOENT;
}

static int st_adopt(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		    struct buf *canon)
{
	struct stream_id id;
	char what[64 + STREAM_ID_MAX];
	if (is_scratch_name(to, tn))
		return FS_ADOPT_LOCAL;
	if (state_file(to, tn)) {
		int rc = state_store(c, state_file(to, tn), d, dn);
		return rc ? rc : buf_set(canon, to, tn);
	}
	if (parse_id(to, tn, &id, NULL))
		return fs_shape_refuse_name(c, "rename onto", to, tn);
	int rc;
	snprintf(what, sizeof(what), "entry '%.*s'", (int)tn, to);
	rc = add_text(c, STREAM_ADD_RESTORE, &id, what, d, dn);
	if (rc == -EEXIST) {
		/* the same entry again (a second rsync): fine if identical */
		struct buf val = BUF_INIT, text = BUF_INIT;
		rc = stream_get(c->fs->ks, &c->k, &id, &val);
		if (!rc)
			rc = entry_text(val.data, val.len, &text);
		if (!rc && (text.len != dn || memcmp(text.data, d, dn) != 0))
			rc = -EACCES;
		buf_release(&val);
		buf_release(&text);
	}
	if (!rc) {
		char s[STREAM_ID_MAX];
		size_t sn = stream_id_format(&id, s);
		rc = buf_set(canon, s, sn);
	}
	return rc;
}

/* ---- Inputs ---------------------------------------------------------- */

/* Split a command line into escaped words (spaces or TABs). */
struct words {
	struct buf w[CTL_WORDS];
	size_t n;
};

static void words_release(struct words *ws)
{
	for (size_t j = 0; j < ws->n; j++)
		buf_release(&ws->w[j]);
	ws->n = 0;
}

static int words_split(const char *l, size_t ln, struct words *ws)
{
	size_t j = 0;
	ws->n = 0;
	while (j < ln) {
		while (j < ln && (l[j] == ' ' || l[j] == '\t'))
			j++;
		size_t s = j;
		while (j < ln && l[j] != ' ' && l[j] != '\t')
			j++;
		if (j == s)
			break;
		if (ws->n == CTL_WORDS)
			return -EINVAL;
		buf_init(&ws->w[ws->n]);
		if (buf_set_unescaped(&ws->w[ws->n++], l + s, j - s))
			return -EINVAL;
		if (!ws->w[ws->n - 1].data)
			buf_set(&ws->w[ws->n - 1], "", 0);
	}
	return 0;
}

static bool word_is(const struct buf *w, const char *lit)
{
	return w->len == strlen(lit) && strncasecmp(w->data, lit, w->len) == 0;
}

/* An ID word: "$" gives *dollar (when allowed). */
static int word_id(const struct buf *w, struct stream_id *id, bool *dollar)
{
	if (dollar) {
		*dollar = word_is(w, "$");
		if (*dollar)
			return 0;
	}
	return stream_id_parse(w->data, w->len, true, id);
}

static int ctl_trim(struct fs_ctx *c, struct words *ws)
{
	uint64_t maxlen = 0;
	struct stream_id id;
	/* "trim maxlen ~ N", "trim minid = ID": XTRIM's "=" (exact) and "~"
	 * (approximate) before the threshold. Kvrocks keeps every entry in
	 * a record of its own, no nodes of many entries: there is nothing
	 * whole to keep, and "~" trims exactly (as much as Redis may). */
	size_t at = ws->n == 4 && (word_is(&ws->w[2], "~") || word_is(&ws->w[2], "=")) ? 3 : 2;
	if (ws->n != at + 1)
		return -EINVAL;
	if (word_is(&ws->w[1], "maxlen") && !parse_u64(ws->w[at].data, ws->w[at].len, &maxlen))
		return stream_trim(c->fs->ks, &c->k, STREAM_TRIM_MAXLEN, maxlen, NULL, NULL);
	if (word_is(&ws->w[1], "minid") && !word_id(&ws->w[at], &id, NULL))
		return stream_trim(c->fs->ks, &c->k, STREAM_TRIM_MINID, 0, &id, NULL);
	return -EINVAL;
}

static int ctl_group(struct fs_ctx *c, struct words *ws)
{
	struct keyspace *ks = c->fs->ks;
	struct stream_id id;
	bool dollar;
	int64_t er = STREAM_ENTRIES_READ_UNSET;
	unsigned flags = 0;
	uint64_t n;
	if (ws->n < 3)
		return -EINVAL;
	const struct buf *g = &ws->w[2];
	if (word_is(&ws->w[1], "destroy") && ws->n == 3) {
		int rc = stream_group_destroy(ks, &c->k, g->data, g->len);
		return rc > 0 ? 0 : rc == 0 ? -ENOENT : rc;
	}
	if (word_is(&ws->w[1], "createconsumer") && ws->n == 4) {
		int rc =
		    stream_consumer_create(ks, &c->k, g->data, g->len, ws->w[3].data, ws->w[3].len);
		return rc > 0 ? 0 : rc;
	}
	if (word_is(&ws->w[1], "delconsumer") && ws->n == 4)
		return stream_consumer_del(ks, &c->k, g->data, g->len, ws->w[3].data, ws->w[3].len,
					   &n);
	bool create = word_is(&ws->w[1], "create"), setid = word_is(&ws->w[1], "setid");
	if ((!create && !setid) || ws->n < 4 || word_id(&ws->w[3], &id, &dollar))
		return -EINVAL;
	for (size_t j = 4; j < ws->n; j++) {
		if (create && word_is(&ws->w[j], "mkstream"))
			flags |= STREAM_MKSTREAM;
		else if (word_is(&ws->w[j], "entriesread") && j + 1 < ws->n &&
			 !parse_i64(ws->w[j + 1].data, ws->w[j + 1].len, &er) && er >= -1)
			j++;
		else
			return -EINVAL;
	}
	if (create)
		return stream_group_create(ks, &c->k, g->data, g->len, dollar ? NULL : &id, er,
					   flags);
	return stream_group_setid(ks, &c->k, g->data, g->len, dollar ? NULL : &id, er);
}

static int ctl_readgroup(struct fs_ctx *c, struct words *ws)
{
	struct stream_id id;
	bool latest = true;
	uint64_t count = 0;
	unsigned flags = 0;
	if (ws->n < 3)
		return -EINVAL;
	for (size_t j = 3; j < ws->n; j++) {
		if (word_is(&ws->w[j], "count") && j + 1 < ws->n &&
		    !parse_u64(ws->w[j + 1].data, ws->w[j + 1].len, &count))
			j++;
		else if (word_is(&ws->w[j], "noack"))
			flags |= STREAM_NOACK;
		else if (word_is(&ws->w[j], ">"))
			latest = true;
		else if (!word_id(&ws->w[j], &id, NULL))
			latest = false;
		else
			return -EINVAL;
	}
	return stream_readgroup(c->fs->ks, &c->k, ws->w[1].data, ws->w[1].len, ws->w[2].data,
				ws->w[2].len, latest ? NULL : &id, count, flags, NULL, NULL);
}

static int ctl_ids(struct words *ws, size_t from, struct stream_id *ids, size_t *n, unsigned *flags)
{
	*n = 0;
	for (size_t j = from; j < ws->n; j++) {
		if (flags && word_is(&ws->w[j], "justid"))
			*flags |= STREAM_JUSTID;
		else if (flags && word_is(&ws->w[j], "force"))
			*flags |= STREAM_FORCE;
		else if (word_id(&ws->w[j], &ids[(*n)++], NULL))
			return -EINVAL;
	}
	return *n ? 0 : -EINVAL;
}

/* autoclaim G C MIN-IDLE-MS START [count N] [justid] */
static int ctl_autoclaim(struct fs_ctx *c, struct words *ws)
{
	struct stream_id start, next;
	uint64_t idle, count = 0;
	unsigned flags = 0;
	if (ws->n < 5 || parse_u64(ws->w[3].data, ws->w[3].len, &idle) ||
	    word_id(&ws->w[4], &start, NULL))
		return -EINVAL;
	for (size_t j = 5; j < ws->n; j++) {
		if (word_is(&ws->w[j], "count") && j + 1 < ws->n &&
		    !parse_u64(ws->w[j + 1].data, ws->w[j + 1].len, &count) && count)
			j++;
		else if (word_is(&ws->w[j], "justid"))
			flags |= STREAM_JUSTID;
		else
			return -EINVAL;
	}
	return stream_autoclaim(c->fs->ks, &c->k, ws->w[1].data, ws->w[1].len, ws->w[2].data,
				ws->w[2].len, idle, &start, count, flags, NULL, NULL, NULL, &next);
}

static int ctl_line(struct fs_ctx *c, struct words *ws)
{
	struct stream_id ids[CTL_WORDS];
	size_t n;
	unsigned flags = 0;
	uint64_t u;
	const char *verb = ws->w[0].data;
	if (word_is(&ws->w[0], "trim"))
		return ctl_trim(c, ws);
	if (word_is(&ws->w[0], "group"))
		return ctl_group(c, ws);
	if (word_is(&ws->w[0], "readgroup"))
		return ctl_readgroup(c, ws);
	if (word_is(&ws->w[0], "ack") && ws->n >= 3 && !ctl_ids(ws, 2, ids, &n, NULL))
		return stream_ack(c->fs->ks, &c->k, ws->w[1].data, ws->w[1].len, ids, n, &u);
	if (word_is(&ws->w[0], "claim") && ws->n >= 5 &&
	    !parse_u64(ws->w[3].data, ws->w[3].len, &u) && !ctl_ids(ws, 4, ids, &n, &flags))
		return stream_claim(c->fs->ks, &c->k, ws->w[1].data, ws->w[1].len, ws->w[2].data,
				    ws->w[2].len, u, ids, n, flags, NULL, NULL);
	if (word_is(&ws->w[0], "autoclaim"))
		return ctl_autoclaim(c, ws);
	(void)verb;
	return -EINVAL;
}

/* Add the lines as entries (.add, one batch) or run each as a command
 * (.ctl). Lines are parsed first; a bad one refuses the write before
 * anything runs. */
/* .add: the lines' entries in one batch (stream_add_many), with the
 * name's options. A bad line refuses the write; nothing is stored. */
static int feed_add(struct fs_ctx *c, const char *name, size_t n, const struct add_opts *o,
		    const char *d, size_t dn)
{
	struct pairs p = {0};
	struct stream_entry_in *e = NULL;
	size_t *first = NULL, ne = 0, cap = 0, start = 0, lineno = 0;
	char what[48];
	int rc = 0;
	snprintf(what, sizeof(what), "%.*s", (int)(n < 40 ? n : 40), name);
	for (size_t j = 0; j <= dn && !rc; j++) {
		if (j < dn && d[j] != '\n')
			continue;
		const char *l = d + start;
		size_t ln = j - start, before = p.n;
		start = j + 1;
		lineno++;
		if (ln == 0)
			continue;
		rc = parse_line(what, lineno, l, ln, &p);
		if (!rc) {
			size_t *nf = array_grow(first, &cap, ne, sizeof(*first), 16);
			if (!nf)
				rc = -ENOMEM;
			else
				(first = nf)[ne++] = before;
		}
	}
	if (!rc && ne) {
		pairs_fix(&p);
		e = malloc(ne * sizeof(*e));
		rc = e ? 0 : -ENOMEM;
	}
	for (size_t j = 0; !rc && j < ne; j++)
		e[j] = (struct stream_entry_in){p.v + first[j],
						(j + 1 < ne ? first[j + 1] : p.n) - first[j]};
	if (!rc && ne)
		rc = stream_add_many(c->fs->ks, &c->k, e, ne, o->trim ? &o->t : NULL, o->flags,
				     NULL);
	if (rc == -ENOENT && (o->flags & STREAM_NOMKSTREAM))
		LOG_ERR("'%.*s/%.*s': the stream has no record (NOMKSTREAM): nothing is added",
			(int)c->k.klen, c->k.key, (int)n, name);
	free(e);
	free(first);
	pairs_release(&p);
	return rc;
}

static int st_feed(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn)
{
	struct add_opts o;
	if (parse_add(name, n, &o))
		return feed_add(c, name, n, &o, d, dn);
	size_t start = 0, lineno = 0;
	int rc = 0;
	for (int pass = 0; pass < 2 && !rc; pass++) {
		start = 0;
		lineno = 0;
		for (size_t j = 0; j <= dn && !rc; j++) {
			if (j < dn && d[j] != '\n')
				continue;
			size_t ln = j - start;
			const char *l = d + start;
			start = j + 1;
			lineno++;
			if (ln == 0)
				continue;
			struct words ws = {0};
			rc = words_split(l, ln, &ws);
			if (!rc && ws.n == 0) {
				words_release(&ws);
				continue;
			}
			if (!rc && pass == 1)
				rc = ctl_line(c, &ws);
			else if (!rc &&
				 !(word_is(&ws.w[0], "trim") || word_is(&ws.w[0], "group") ||
				   word_is(&ws.w[0], "readgroup") || word_is(&ws.w[0], "ack") ||
				   word_is(&ws.w[0], "claim") || word_is(&ws.w[0], "autoclaim")))
				rc = -EINVAL;
			if (rc == -EINVAL)
				LOG_ERR(
				    "%s, line %zu: not a command: trim maxlen [~|=] N | trim minid "
				    "[~|=] ID "
				    "| group create G ID|$ [mkstream] [entriesread N] | group "
				    "setid G ID|$ | group destroy G | group createconsumer G C "
				    "| group delconsumer G C | readgroup G C [count N] [noack] "
				    "[>|ID] | ack G ID... | claim G C MIN-IDLE-MS ID... "
				    "[justid] [force] | autoclaim G C MIN-IDLE-MS START [count N] "
				    "[justid]",
				    IN_CTL, lineno);
			words_release(&ws);
		}
	}
	return rc;
}

/* A hash field read as an entry (cp -a fills a directory, then sets its
 * type): the name is the ID, the value the entry's text. */
static int st_from_field(void *arg, const char *f, size_t fn, const char *v, size_t vn,
			 struct convert_item *it)
{
	(void)arg;
	struct stream_id id;
	struct pairs p = {0};
	char what[64 + STREAM_ID_MAX];
	if (state_file(f, fn)) {
		/* read now (a bad one is refused here, logged), applied with
		 * the entries (t_convert) */
		struct stream_counters sc;
		struct stream_gstate gs = STREAM_GSTATE_INIT;
		int rc = state_file(f, fn) == SF_STATE ? stream_counters_parse(v, vn, &sc)
						       : stream_gstate_parse(v, vn, &gs);
		stream_gstate_release(&gs);
		it->num = UINT64_MAX;
		it->seq =
		    state_file(f, fn) == SF_STATE ? STREAM_CONVERT_COUNTERS : STREAM_CONVERT_GROUPS;
		return rc ? rc : buf_set(&it->value, v, vn);
	}
	int rc = parse_id(f, fn, &id, "field");
	if (!rc && (id.ms == UINT64_MAX || (id.ms == 0 && id.seq == 0))) {
		LOG_ERR("field '%.*s': not a valid entry ID", (int)fn, f);
		rc = -EINVAL;
	}
	if (rc)
		return -EINVAL;
	snprintf(what, sizeof(what), "field '%.*s'", (int)(fn < 64 ? fn : 64), f);
	rc = parse_text(what, v, vn, true, &p);
	if (!rc && p.n == 0) {
		LOG_ERR("%s: an entry needs at least one field<TAB>value line", what);
		rc = -EINVAL;
	}
	if (!rc) {
		it->num = id.ms;
		it->seq = id.seq;
		rc = stream_value_encode(p.v, p.n, &it->value);
	}
	pairs_release(&p);
	return rc;
}

/* An emptied stream stays a live key (Kvrocks keeps its last ID), which
 * lists nothing: rmdir deletes it; so it does one whose tail does not
 * decode (-EUCLEAN, logged). */
static int st_is_blank(struct fs_ctx *c)
{
	struct stream_info i;
	int rc = stream_info(c->fs->ks, &c->k, &i);
	return rc < 0 ? rc : i.size == 0 && i.group_number == 0;
}

static const struct fs_help stream_help[] = {
    {"MS-SEQ", "an entry: field<TAB>value lines; a new ID above the last adds one (XADD)",
     "printf \"f\\tv\\n\" > s/1700000000000-1"},
    {"groups",
     "state: the consumer groups, their consumers and pending entries (listed while there "
     "are groups); writing replaces them all, rm destroys them",
     "cat s/groups"},
    {"state",
     "state: last-generated-id, max-deleted-entry-id, entries-added, recorded-first-entry-id "
     "(listed when not those of the entries); writing sets them (XSETID)",
     "cat s/state"},
    {".add", "input: each line is an entry (field<TAB>value...) added with ID *, one batch",
     "printf \"f\\tv\\n\" >> s/.add"},
    {".add:maxlen=N, .add:minid=ID, .add:nomkstream",
     "input: XADD's MAXLEN, MINID (= or ~, both exact) and NOMKSTREAM, joined with :",
     "printf \"f\\tv\\n\" >> s/.add:maxlen=1000"},
    {".ctl", "input: group, readgroup, ack, claim, autoclaim, trim (maxlen|minid [~|=] N|ID)",
     "echo \"group create g $\" >> s/.ctl"},
    {".log", "view: every entry, ID<TAB>field<TAB>value..., grows (tail -f)", "tail -f s/.log"},
    {".range:START..END[:COUNT]", "view: XRANGE, lines as .log; - + ID MS, ( excludes",
     "cat s/.range:-..+:10"},
    {".revrange:END..START[:COUNT]", "view: XREVRANGE, newest first", "cat s/.revrange:+..-:1"},
    {".info", "view: XINFO STREAM", "cat s/.info"},
    {".groups", "view: XINFO GROUPS", "cat s/.groups"},
    {".consumers:GROUP", "view: XINFO CONSUMERS", "cat s/.consumers:g"},
    {".pending:GROUP[:CONSUMER]", "view: XPENDING", "cat s/.pending:g"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_stream_shape = {
    .type = KV_TYPE_STREAM,
    .is_immutable = st_is_immutable,
    .lookup = st_lookup,
    .iter_open = st_open_iter,
    .iter_next = st_next,
    .iter_free = st_free_iter,
    .is_view = st_is_view,
    .is_live = st_is_live,
    .is_input = st_is_input,
    .feed = st_feed,
    .load = st_load,
    .check = st_check,
    .commit = st_commit,
    .create = st_create,
    .unlink = st_unlink,
    .adopt = st_adopt,
    .from_field = st_from_field,
    .is_blank = st_is_blank,
    .help = stream_help,
};
