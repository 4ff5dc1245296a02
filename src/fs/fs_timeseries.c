/*
 * fs_timeseries: a time-series key is a directory whose entries are its
 * chunks, CSV files of "timestamp,value" lines named by the chunk id (the
 * first timestamp) zero-padded to 20 digits with ".csv", so they list in
 * time order. Values are printed as the shortest decimal that reads back
 * as the same double (inf, -inf as such). Writing a chunk file (an edit,
 * or rsync's temp file renamed onto it) stores exactly its samples as
 * that chunk: they must increase, start at the chunk's id and not
 * overlap the neighbours (EINVAL, nothing changed); an empty chunk file
 * removes the chunk; rm removes it. An edit (a write to the chunk, or
 * any tool's temp file renamed onto it) recomputes the compaction
 * rules' buckets it touches; rsync's temp file renamed onto it is a
 * restore, which runs no rule (rsync sets the rules' state after).
 *
 * Input (never listed): .add takes "timestamp,value" lines (timestamp "*"
 * = now) as one TS.MADD per write, all or nothing; a bad line is logged
 * with its number. It runs the compaction rules.
 * Views (read-only, never listed), CSV "timestamp,value" lines:
 *   .last                        TS.GET
 *   .log                         TS.RANGE - +, growing (tail -f)
 *   .info                        TS.INFO as "name value" lines
 *   .range:FROM..TO[:OPT]...     TS.RANGE; FROM "-" or ms, TO "+" or ms
 *   .revrange:FROM..TO[:OPT]...  TS.REVRANGE
 * OPT: AGG:BUCKET (avg, sum, min, max, range, count, first, last, std.p,
 * std.s, var.p, var.s), count=N, align=N|start|end, bt=start|end|mid,
 * empty, value=MIN..MAX, ts=T1,T2,...
 * Layer: fs.
 */
#include "fs/fs_int.h"
#include "fs/fs_xval.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "types/t_timeseries.h"

#define CHUNK_DIGITS   20
#define CHUNK_EXT      ".csv"
#define CHUNK_NAME_LEN (CHUNK_DIGITS + 4)
#define INPUT	       ".add"
#define VIEW_LAST      ".last"
#define VIEW_INFO      ".info"
#define VIEW_LOG       ".log"
#define VIEW_RANGE     ".range:"
#define VIEW_REVRANGE  ".revrange:"

static bool is_name(const char *s, size_t n, const char *p)
{
	return n == strlen(p) && memcmp(s, p, n) == 0;
}

/* A chunk file name: 20 digits and ".csv". */
static bool chunk_name(const char *name, size_t n, uint64_t *id)
{
	if (n != CHUNK_NAME_LEN || memcmp(name + CHUNK_DIGITS, CHUNK_EXT, 4) != 0)
		return false;
	for (size_t i = 0; i < CHUNK_DIGITS; i++)
		if (name[i] < '0' || name[i] > '9')
			return false;
	return parse_u64(name, CHUNK_DIGITS, id) == 0;
}

/* chunk_name, for a name that must be one: -EINVAL, logged as "WHY'NAME':
 * a chunk file is named by ...HINT", if it is none. */
static int chunk_name_needed(const char *why, const char *name, size_t n, uint64_t *id,
			     const char *hint)
{
	if (chunk_name(name, n, id))
		return 0;
	LOG_ERR("%s'%.*s': a chunk file is named by its first timestamp, 20 digits and .csv%s", why,
		(int)n, name, hint);
	return -EINVAL;
}

static size_t chunk_fname(uint64_t id, char out[32])
{
	return (size_t)snprintf(out, 32, "%020" PRIu64 CHUNK_EXT, id);
}

int fs_ts_csv(struct buf *out, const struct ts_sample *s, size_t n)
{
	char v[40];
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		fmt_double_shortest(s[i].v, v);
		rc = buf_printf(out, "%" PRIu64 ",%s\n", s[i].ts, v);
	}
	return rc;
}

static size_t csv_len(const struct ts_sample *s, size_t n)
{
	char v[40], t[24];
	size_t len = 0;
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(t, sizeof(t), "%" PRIu64, s[i].ts) + 1 +
		       fmt_double_shortest(s[i].v, v) + 1;
	return len;
}

/* One "timestamp,value" line l (no newline, not blank); star: "*" is
 * the clock (TS_NOW). 0 or -EINVAL. */
static int sample_parse(const char *l, size_t len, bool star, struct ts_sample *x)
{
	size_t b = 0;
	while (b < len && (l[b] == ' ' || l[b] == '\t'))
		b++;
	const char *comma = memchr(l, ',', len);
	if (!comma)
		return -EINVAL;
	const char *t = l + b;
	size_t tn = comma > t ? (size_t)(comma - t) : 0;
	while (tn && (t[tn - 1] == ' ' || t[tn - 1] == '\t'))
		tn--;
	if (star && tn == 1 && t[0] == '*')
		x->ts = TS_NOW;
	else if (parse_u64(t, tn, &x->ts) || x->ts == TS_NOW)
		return -EINVAL;
	return parse_double(comma + 1, len - (size_t)(comma + 1 - l), &x->v) ? -EINVAL : 0;
}

/* The next line of d[*i, dn): its start and length (without "\n" and a
 * "\r" before it); false at the end. *blank: only spaces and tabs. */
static bool next_line(const char *d, size_t dn, size_t *i, const char **l, size_t *len, bool *blank)
{
	if (*i >= dn)
		return false;
	const char *nl = memchr(d + *i, '\n', dn - *i);
	*l = d + *i;
	*len = nl ? (size_t)(nl - *l) : dn - *i;
	*i += *len + (nl ? 1 : 0);
	if (*len && (*l)[*len - 1] == '\r')
		(*len)--;
	size_t b = 0;
	while (b < *len && ((*l)[b] == ' ' || (*l)[b] == '\t'))
		b++;
	*blank = b == *len;
	return true;
}

/*
 * Parse "timestamp,value" lines (a last line may lack its newline; blank
 * lines are skipped). star: "*" is the clock (TS_NOW). 0 with *out
 * (free it), or -EINVAL with *line = the bad line's number (1-based).
 */
static int csv_parse(const char *d, size_t dn, bool star, struct ts_sample **out, size_t *n,
		     size_t *line)
{
	struct ts_sample *s = NULL;
	size_t cap = 0, cnt = 0, ln = 0, i = 0, len;
	const char *l;
	bool blank;
	int rc = 0;
	while (!rc && next_line(d, dn, &i, &l, &len, &blank)) {
		struct ts_sample x;
		ln++;
		if (blank)
			continue;
		rc = sample_parse(l, len, star, &x);
		if (rc)
			break;
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			void *p = realloc(s, cap * sizeof(*s));
			if (!p) {
				rc = -ENOMEM;
				break;
			}
			s = p;
		}
		s[cnt++] = x;
	}
	if (rc) {
		*line = ln;
		free(s);
		return rc;
	}
	*out = s;
	*n = cnt;
	return 0;
}

/* ---- views ----------------------------------------------------------- */

static bool tsf_is_view(const char *name, size_t n)
{
	return is_name(name, n, VIEW_LAST) || is_name(name, n, VIEW_INFO) ||
	       is_name(name, n, VIEW_LOG) || has_prefix(name, n, VIEW_RANGE) ||
	       has_prefix(name, n, VIEW_REVRANGE);
}

/* .log grows as samples are added: a reader at its end loads it again
 * (tail -f), as a stream's .log. */
static bool tsf_is_live(const char *name, size_t n)
{
	return is_name(name, n, VIEW_LOG);
}

/* ".add", or ".add:on_duplicate=POLICY" (TS.ADD's ON_DUPLICATE for the
 * samples of each write: block, first, last, min, max, sum): the policy
 * into *dup (TS_DUP_NONE: the key's). */
static bool parse_input(const char *name, size_t n, int *dup)
{
	static const char opt[] = INPUT ":on_duplicate=";
	*dup = TS_DUP_NONE;
	if (is_name(name, n, INPUT))
		return true;
	if (!has_prefix(name, n, opt))
		return false;
	*dup = ts_policy_parse(name + strlen(opt), n - strlen(opt));
	return *dup >= 0;
}

static bool tsf_is_input(const char *name, size_t n)
{
	int dup;
	return parse_input(name, n, &dup);
}

/* Split the next ':' segment of s[*pos, n). */
static bool seg(const char *s, size_t n, size_t *pos, const char **p, size_t *pn)
{
	if (*pos >= n)
		return false;
	const char *c = memchr(s + *pos, ':', n - *pos);
	*p = s + *pos;
	*pn = c ? (size_t)(c - *p) : n - *pos;
	*pos += *pn + 1;
	return true;
}

static int parse_bound(const char *s, size_t n, const char *inf, uint64_t dflt, uint64_t *v)
{
	if (is_name(s, n, inf)) {
		*v = dflt;
		return 0;
	}
	return parse_u64(s, n, v) ? -EINVAL : 0;
}

int fs_ts_range_parse(const char *spec, size_t n, struct ts_range_opt *o, uint64_t **fts)
{
	size_t pos = 0, pn;
	const char *p, *dots;
	int rc = 0;
	bool align_start = false, align_end = false;
	ts_range_opt_init(o);
	*fts = NULL;
	if (!seg(spec, n, &pos, &p, &pn) || !(dots = memmem(p, pn, "..", 2)) ||
	    parse_bound(p, (size_t)(dots - p), "-", 0, &o->from) ||
	    parse_bound(dots + 2, pn - (size_t)(dots + 2 - p), "+", UINT64_MAX, &o->to)) {
		LOG_ERR("range '%.*s': write FROM..TO (FROM a timestamp or -, TO a timestamp or +)",
			(int)n, spec);
		return -EINVAL;
	}
	while (!rc && seg(spec, n, &pos, &p, &pn)) {
		int agg = tsagg_parse(p, pn);
		const char *eq = memchr(p, '=', pn);
		const char *v = eq ? eq + 1 : NULL;
		size_t vn = eq ? pn - (size_t)(v - p) : 0;
		if (agg > 0) {
			o->agg = agg;
			if (!seg(spec, n, &pos, &p, &pn) || parse_u64(p, pn, &o->bucket) ||
			    o->bucket == 0)
				rc = -EINVAL;
		} else if (is_name(p, pn, "empty")) {
			o->empty = true;
		} else if (has_prefix(p, pn, "count=")) {
			rc = parse_u64(v, vn, &o->count) ? -EINVAL : 0;
		} else if (has_prefix(p, pn, "align=")) {
			align_start = is_name(v, vn, "start") || is_name(v, vn, "-");
			align_end = is_name(v, vn, "end") || is_name(v, vn, "+");
			if (!align_start && !align_end)
				rc = parse_u64(v, vn, &o->align) ? -EINVAL : 0;
		} else if (has_prefix(p, pn, "bt=")) {
			if (is_name(v, vn, "start") || is_name(v, vn, "-"))
				o->bt = TS_BT_START;
			else if (is_name(v, vn, "end") || is_name(v, vn, "+"))
				o->bt = TS_BT_END;
			else if (is_name(v, vn, "mid") || is_name(v, vn, "~"))
				o->bt = TS_BT_MID;
			else
				rc = -EINVAL;
		} else if (has_prefix(p, pn, "value=")) {
			const char *d2 = memmem(v, vn, "..", 2);
			o->filter_value = true;
			if (!d2 || parse_double(v, (size_t)(d2 - v), &o->vmin) ||
			    parse_double(d2 + 2, vn - (size_t)(d2 + 2 - v), &o->vmax))
				rc = -EINVAL;
		} else if (has_prefix(p, pn, "ts=")) {
			size_t cnt = 1;
			for (size_t i = 0; i < vn; i++)
				cnt += v[i] == ',';
			free(*fts);
			if (!(*fts = calloc(cnt, sizeof(**fts))))
				return -ENOMEM;
			size_t k = 0, st = 0;
			for (size_t i = 0; i <= vn && !rc; i++)
				if (i == vn || v[i] == ',') {
					rc = parse_u64(v + st, i - st, &(*fts)[k++]) ? -EINVAL : 0;
					st = i + 1;
				}
			o->filter_ts = *fts;
			o->nfilter_ts = k;
		} else {
			rc = -EINVAL;
		}
	}
	if (!rc && (align_start || align_end))
		o->align = align_start ? o->from : (o->to == UINT64_MAX ? 0 : o->to);
	if (rc) {
		LOG_ERR("range '%.*s': options are AGG:BUCKET, count=N, align=N|start|end, "
			"bt=start|end|mid, empty, value=MIN..MAX, ts=T1,T2,..",
			(int)n, spec);
		free(*fts);
		*fts = NULL;
	}
	return rc;
}

struct info_out {
	struct buf *out;
};

static int info_label(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct buf *out = arg;
	return buf_printf(out, "label %.*s %.*s\n", (int)nn, name, (int)vn, v);
}

static int info_rule(void *arg, const char *dst, size_t dn, const struct ts_rule *r)
{
	struct buf *out = arg;
	return buf_printf(out, "rule %.*s %s %" PRIu64 " %" PRIu64 "\n", (int)dn, dst,
			  tsagg_name(r->agg), r->bucket, r->align);
}

static int view_make(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	struct ts_sample *s = NULL, last;
	size_t ns = 0;
	int rc;
	buf_reset(out);
	if (is_name(name, n, VIEW_LAST)) {
		rc = ts_get(c->fs->ks, &c->k, &last);
		return rc < 0 ? rc : fs_ts_csv(out, &last, (size_t)rc);
	}
	if (is_name(name, n, VIEW_INFO)) {
		struct ts_info i;
		rc = ts_info(c->fs->ks, &c->k, &i);
		if (rc)
			return rc;
		rc = buf_printf(
		    out,
		    "totalSamples %" PRIu64 "\nmemoryUsage %" PRIu64 "\nfirstTimestamp %" PRIu64
		    "\nlastTimestamp %" PRIu64 "\nretentionTime %" PRIu64 "\nchunkCount %" PRIu64
		    "\nchunkSize %" PRIu64 "\nchunkType %s\nduplicatePolicy %s\n"
		    "sourceKey %s\n",
		    i.total_samples, i.memory, i.first_ts, i.last_ts, i.m.retention, i.chunks,
		    i.m.chunk_size, i.m.chunk_type ? "compressed" : "uncompressed",
		    ts_policy_name(i.m.policy) ? ts_policy_name(i.m.policy) : "?",
		    i.source.len ? i.source.data : "");
		buf_release(&i.source);
		if (!rc)
			rc = ts_labels(c->fs->ks, &c->k, info_label, out);
		if (!rc)
			rc = ts_rules(c->fs->ks, &c->k, info_rule, out);
		return rc;
	}
	struct ts_range_opt o;
	uint64_t *fts = NULL;
	bool rev = has_prefix(name, n, VIEW_REVRANGE);
	size_t head = strlen(rev ? VIEW_REVRANGE : VIEW_RANGE);
	rc = 0;
	if (is_name(name, n, VIEW_LOG)) /* TS.RANGE - +: every sample kept */
		ts_range_opt_init(&o);
	else
		rc = fs_ts_range_parse(name + head, n - head, &o, &fts);
	if (!rc)
		rc = ts_range(c->fs->ks, &c->k, &o, rev, &s, &ns);
	if (!rc)
		rc = fs_ts_csv(out, s, ns);
	free(s);
	free(fts);
	return rc;
}

/* ---- entries --------------------------------------------------------- */

static int tsf_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	struct ts_sample *s = NULL;
	size_t ns = 0;
	uint64_t id;
	int rc;
	if (tsf_is_input(name, n)) {
		struct ts_sample last;
		rc = ts_get(c->fs->ks, &c->k, &last); /* the key is a time series */
		return rc < 0 ? rc : fs_entry_set(e, name, n, S_IFREG | 0200, 0);
	}
	if (tsf_is_view(name, n))
		return fs_shape_view_entry(c, name, n, e, view_make);
	if (!chunk_name(name, n, &id))
		return -ENOENT;
	rc = ts_chunk_get(c->fs->ks, &c->k, id, &s, &ns);
	if (rc == -KV_EWRONGTYPE)
		rc = -ENOENT;
	if (rc == -EUCLEAN) /* logged: listed as an empty file, read as EIO */
		rc = fs_entry_set(e, name, n, S_IFREG | 0644, 0);
	else if (!rc)
		rc = fs_entry_set(e, name, n, S_IFREG | 0644, csv_len(s, ns));
	free(s);
	return rc;
}

struct tsit {
	struct ts_chunk_iter *it;
	char name[32];
	uint8_t cursor[8];
};

static int tsf_open_iter(struct fs_ctx *c, const void *after, size_t alen, bool by_name, void **out)
{
	(void)by_name; /* chunk names sort as their ids */
	struct tsit *t = calloc(1, sizeof(*t));
	uint64_t a = 0;
	int rc = 0;
	if (!t)
		return -ENOMEM;
	if (!fs_cursor_number(after, alen, &a) && after && !chunk_name(after, alen, &a))
		after = NULL; /* NEEDSWORK: a cursor that is not a chunk restarts */
	t->it = ts_chunk_iter_new(c->fs->ks, &c->k, after ? &a : NULL, &rc);
	return fs_shape_iter_opened(t, t->it != NULL, rc, out);
}

static int tsf_next(void *arg, struct fs_child *ch)
{
	struct tsit *t = arg;
	uint64_t id;
	uint32_t count;
	const struct ts_sample *s;
	size_t n;
	int rc = ts_chunk_iter_next(t->it, &id, &count);
	if (rc <= 0)
		return rc;
	int r = ts_chunk_iter_samples(t->it, &s, &n);
	if (r == -EUCLEAN) /* logged by next(): an empty file, read as EIO */
		n = 0;
	else if (r)
		return r;
	ch->n = chunk_fname(id, t->name);
	ch->name = t->name;
	fs_child_set_number(ch, t->cursor, id);
	ch->mode = S_IFREG | 0644;
	ch->size = csv_len(s, n);
	return 1;
}

static void tsf_free_iter(void *arg)
{
	struct tsit *t = arg;
	ts_chunk_iter_free(t->it);
	free(t);
}

static int tsf_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	struct ts_sample *s = NULL;
	size_t ns = 0;
	uint64_t id;
	if (tsf_is_input(name, n)) {
		buf_reset(out);
		return 0;
	}
	if (tsf_is_view(name, n))
		return view_make(c, name, n, out);
	if (!chunk_name(name, n, &id))
		return -ENOENT;
	int rc = ts_chunk_get(c->fs->ks, &c->k, id, &s, &ns);
	buf_reset(out);
	if (!rc)
		rc = fs_ts_csv(out, s, ns);
	free(s);
	return rc;
}

/* Complete lines must parse as they are written; the last may be partial. */
static int tsf_check(const char *name, size_t n, const char *d, size_t dn)
{
	const char *nl = dn ? memrchr(d, '\n', dn) : NULL;
	struct ts_sample *s = NULL;
	size_t ns, line = 0;
	if (tsf_is_input(name, n) || !nl)
		return 0;
	int rc = csv_parse(d, (size_t)(nl - d) + 1, false, &s, &ns, &line);
	free(s);
	if (rc == -EINVAL)
		LOG_ERR("'%.*s': line %zu is not \"timestamp,value\"", (int)n, name, line);
	return rc;
}

static int rule_dest_changed(void *arg, const char *dst, size_t dn, const struct ts_rule *r);

/* Store chunk `name` with the CSV d: an edit (the rules recompute the
 * buckets it touches), or with edit false a restore (rsync's temp file
 * renamed onto it: the stored state as given, rules untouched). */
static int put_chunk(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		     bool edit)
{
	struct ts_sample *s = NULL;
	size_t ns = 0, line = 0;
	uint64_t id;
	int rc = chunk_name_needed("", name, n, &id, " (00000001700000000000.csv)");
	if (rc)
		return rc;
	rc = csv_parse(d, dn, false, &s, &ns, &line);
	if (rc == -EINVAL)
		LOG_ERR("'%.*s': line %zu is not \"timestamp,value\"", (int)n, name, line);
	if (!rc && edit)
		rc = ts_chunk_edit(c->fs->ks, &c->k, id, s, ns);
	else if (!rc)
		rc = ts_chunk_put(c->fs->ks, &c->k, id, s, ns);
	if (!rc && edit)
		ts_rules(c->fs->ks, &c->k, rule_dest_changed, c); /* nothing to undo if it fails */
	free(s);
	return rc;
}

static int tsf_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		      bool pending)
{
	(void)pending;
	if (tsf_is_view(name, n) || tsf_is_input(name, n))
		return -EACCES;
	return put_chunk(c, name, n, d, dn, true);
}

/* ts_rules callback: a rule's destination, which the samples just added
 * wrote by no system call on its name (fs_key_changed). */
static int rule_dest_changed(void *arg, const char *dst, size_t dn, const struct ts_rule *r)
{
	struct fs_ctx *c = arg;
	(void)r;
	struct fs_node *ns = c->dir ? fs_itable_parent(c->fs->it, c->dir) : NULL;
	if (ns) {
		fs_key_changed_named(c->fs, ns, dst, dn);
		fs_itable_unref(c->fs->it, ns);
	}
	return 0;
}

static int tsf_feed(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn)
{
	struct ts_sample *s = NULL;
	size_t ns = 0, line = 0, bad = 0;
	int rc = csv_parse(d, dn, true, &s, &ns, &line);
	if (rc == -EINVAL)
		LOG_ERR("'%.*s': line %zu of this write is not \"timestamp,value\" (timestamp a "
			"number of ms or *): nothing of it is added",
			(int)n, name, line);
	int dup;
	parse_input(name, n, &dup);
	if (!rc && ns)
		rc = ts_madd_dup(c->fs->ks, &c->k, s, ns, TS_MADD_ATOMIC | TS_MADD_CREATE, dup,
				 NULL, &bad);
	if (!rc && ns)
		ts_rules(c->fs->ks, &c->k, rule_dest_changed, c); /* nothing to undo if it fails */
	if (rc == -EEXIST)
		LOG_ERR("'%.*s': line %zu: a sample at that timestamp exists (DUPLICATE_POLICY "
			"block): nothing of this write is added",
			(int)n, name, bad + 1);
	else if (rc == -EINVAL && line == 0)
		LOG_ERR("'%.*s': line %zu: older than the retention window: nothing of this write "
			"is added",
			(int)n, name, bad + 1);
	free(s);
	return rc;
}

/* A hash field read as a chunk (tar and cp -a fill a directory, then set
 * its type): the name is the chunk's, the value its CSV. */
static int tsf_from_field(void *arg, const char *f, size_t fn, const char *v, size_t vn,
			  struct convert_item *it)
{
	(void)arg;
	struct ts_sample *s = NULL;
	size_t ns = 0, line = 0;
	uint64_t id;
	if (!chunk_name(f, fn, &id)) {
		LOG_ERR("field '%.*s': not a chunk name (00000001700000000000.csv)", (int)fn, f);
		return -EINVAL;
	}
	int rc = csv_parse(v, vn, false, &s, &ns, &line);
	if (rc == -EINVAL)
		LOG_ERR("field '%.*s': line %zu is not \"timestamp,value\"", (int)fn, f, line);
	else if (!rc && ns == 0) {
		LOG_ERR("field '%.*s': a chunk holds at least one sample", (int)fn, f);
		rc = -EINVAL;
	}
	if (!rc) {
		it->num = id;
		rc = buf_set(&it->value, s, ns * sizeof(*s));
	}
	free(s);
	return rc;
}

static bool is_scratch_name(const char *name, size_t n)
{
	uint64_t id;
	return fs_is_scratch_name(name, n) && !chunk_name(name, n, &id);
}

static int tsf_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)e;
	struct ts_sample *s = NULL;
	size_t ns;
	uint64_t id;
	if (tsf_is_view(name, n) || tsf_is_input(name, n))
		return -EEXIST;
	if (is_scratch_name(name, n))
		return FS_CREATE_SCRATCH;
	if (!chunk_name(name, n, &id))
		return fs_shape_refuse_name(c, "create", name, n);
	int rc = ts_chunk_get(c->fs->ks, &c->k, id, &s, &ns);
	free(s);
	if (rc == 0)
		return -EEXIST;
	return rc == -ENOENT ? FS_CREATE_PENDING : rc;
}

static int tsf_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	uint64_t id;
	struct ts_sample *s = NULL;
	size_t ns;
	if (!chunk_name(name, n, &id))
		return -ENOENT;
	int rc = ts_chunk_get(c->fs->ks, &c->k, id, &s, &ns);
	free(s);
	if (rc == -EUCLEAN) /* logged: removing it needs only its id */
		rc = 0;
	return rc ? rc : ts_chunk_put(c->fs->ks, &c->k, id, NULL, 0);
}

static int tsf_adopt(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		     struct buf *canon)
{
	uint64_t id;
	if (is_scratch_name(to, tn) && !tsf_is_view(to, tn) && !tsf_is_input(to, tn))
		return FS_ADOPT_LOCAL;
	if (tsf_is_view(to, tn) || tsf_is_input(to, tn))
		return -EACCES;
	if (!chunk_name(to, tn, &id))
		return fs_shape_refuse_name(c, "rename onto", to, tn);
	bool restore = c->adopt_from && fs_is_rsync_temp(c->adopt_from, c->adopt_from_len);
	int rc = put_chunk(c, to, tn, d, dn, !restore);
	return rc ? rc : buf_set(canon, to, tn);
}

/* A series without chunks lists nothing: rmdir deletes it (labels and
 * rules go with it). */
static int tsf_is_blank(struct fs_ctx *c)
{
	struct ks_info info;
	int rc = ks_lookup(c->fs->ks, &c->k, &info);
	return rc ? rc : !info.empty && info.type == KV_TYPE_TIMESERIES && info.size == 0;
}

/* Kvrocks keeps an empty time series: user.kvfs.type makes it at once. */
static int tsf_make_empty(struct fs_ctx *c)
{
	return ts_create(c->fs->ks, &c->k, NULL);
}

/* ---- parameters, labels and rules: user.kvfs.ts.* ---------------------- */

static const char *const ts_params[] = {"retention", "chunk_size", "duplicate_policy",
					"last_timestamp"};

/* A listing of the names (names) or a lookup of one label or rule
 * (want: the part after "label." or "rule."). */
struct ts_xlist {
	struct buf *out;
	bool names;
	const char *want;
	struct buf *val;
	bool found;
};

static int ts_x_label(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct ts_xlist *l = arg;
	if (memchr(name, 0, nn))
		return 0; /* an xattr name cannot hold NUL: not shown */
	if (l->names) {
		int rc = buf_printf(l->out, FS_XATTR_TS FS_XATTR_TS_LABEL "%.*s", (int)nn, name);
		return rc ? rc : buf_add_u8(l->out, 0);
	}
	if (strlen(l->want) == nn && memcmp(l->want, name, nn) == 0) {
		l->found = true;
		return buf_set(l->val, v, vn);
	}
	return 0;
}

static int ts_x_rule(void *arg, const char *dst, size_t dn, const struct ts_rule *r)
{
	struct ts_xlist *l = arg;
	struct buf fname = BUF_INIT;
	int rc = names_encode(dst, dn, &fname);
	if (!rc && l->names) {
		rc = buf_printf(l->out, FS_XATTR_TS FS_XATTR_TS_RULE "%s", fname.data);
		if (!rc)
			rc = buf_add_u8(l->out, 0);
	} else if (!rc && strcmp(l->want, fname.data) == 0) {
		l->found = true;
		buf_reset(l->val);
		rc = fs_xval_ts_rule_text(l->val, r);
	}
	buf_release(&fname);
	return rc;
}

/* The names of a series' attributes (after its type's), NUL-ended. */
static int tsx_names(struct fs_ctx *c, struct buf *out)
{
	struct ts_xlist l = {out, true, NULL, NULL, false};
	int policy;
	/* A policy byte that names no policy (logged) has no value to
	 * show: the attribute is not listed, as getxattr finds none. */
	int rc = ts_policy(c->fs->ks, &c->k, &policy);
	bool no_policy = rc == -EUCLEAN;
	rc = rc == -EUCLEAN || rc == -ENOENT ? 0 : rc; /* ENOENT: ts_labels answers */
	for (size_t i = 0; i < sizeof(ts_params) / sizeof(ts_params[0]) && !rc; i++) {
		if (no_policy && strcmp(ts_params[i], "duplicate_policy") == 0)
			continue;
		rc = buf_printf(out, FS_XATTR_TS "%s", ts_params[i]);
		if (!rc)
			rc = buf_add_u8(out, 0);
	}
	if (!rc)
		rc = ts_labels(c->fs->ks, &c->k, ts_x_label, &l);
	if (!rc)
		rc = ts_rules(c->fs->ks, &c->k, ts_x_rule, &l);
	return rc;
}

/* One attribute's value. -ENODATA if there is none (an empty directory
 * has none). */
static int tsx_get(struct fs_ctx *c, const char *param, struct buf *val)
{
	struct ts_info i;
	int rc;
	if (c->info.empty)
		return -ENODATA;
	bool label = has_prefix(param, strlen(param), FS_XATTR_TS_LABEL);
	if (label || has_prefix(param, strlen(param), FS_XATTR_TS_RULE)) {
		const char *want = param + strlen(label ? FS_XATTR_TS_LABEL : FS_XATTR_TS_RULE);
		struct ts_xlist l = {NULL, false, want, val, false};
		rc = label ? ts_labels(c->fs->ks, &c->k, ts_x_label, &l)
			   : ts_rules(c->fs->ks, &c->k, ts_x_rule, &l);
		return rc ? rc : (l.found ? 0 : -ENODATA);
	}
	rc = ts_info(c->fs->ks, &c->k, &i);
	if (rc)
		return rc;
	buf_release(&i.source);
	if (strcmp(param, "retention") == 0)
		return buf_printf(val, "%llu", (unsigned long long)i.m.retention);
	if (strcmp(param, "chunk_size") == 0)
		return buf_printf(val, "%llu", (unsigned long long)i.m.chunk_size);
	if (strcmp(param, "last_timestamp") == 0)
		return buf_printf(val, "%llu", (unsigned long long)i.m.last_ts);
	if (strcmp(param, "duplicate_policy") == 0 && ts_policy_name(i.m.policy))
		return buf_printf(val, "%s", ts_policy_name(i.m.policy));
	return -ENODATA;
}

/* Set (value) or remove (NULL) label l. */
static int tsx_label(struct fs_ctx *c, const char *l, const char *value, size_t size)
{
	if (value && !size) {
		LOG_ERR("%s%s%s: a label needs a value (remove the attribute to drop it)",
			FS_XATTR_TS, FS_XATTR_TS_LABEL, l);
		return -EINVAL;
	}
	if (!*l) {
		LOG_ERR("%s%s: a label needs a name", FS_XATTR_TS, FS_XATTR_TS_LABEL);
		return -EINVAL;
	}
	if (c->info.empty && !value)
		return -ENODATA; /* an empty directory has no labels */
	if (c->info.empty) {
		/* An empty time series with this label: one batch. */
		struct ts_label lb = {l, strlen(l), value, size};
		struct ts_options o = {.set = TS_OPT_LABELS, .labels = &lb, .nlabels = 1};
		return ts_create(c->fs->ks, &c->k, &o);
	}
	return ts_label_set(c->fs->ks, &c->k, l, strlen(l), value, size);
}

/* Set (value) or remove (NULL) the rule into file name d. */
static int tsx_rule(struct fs_ctx *c, const char *d, const char *value, size_t size)
{
	struct buf dn = BUF_INIT;
	struct ts_rule r;
	uint64_t hash;
	int rc;
	if (names_decode(d, &dn, &hash) != 0 || !dn.len) {
		buf_release(&dn);
		LOG_ERR("%s%s%s: not a destination key name", FS_XATTR_TS, FS_XATTR_TS_RULE, d);
		return -EINVAL;
	}
	struct ks_key dk = c->k;
	dk.key = dn.data;
	dk.klen = dn.len;
	dk.attr = NULL;
	dk.snap = NULL;
	if (!value) {
		rc = ts_deleterule(c->fs->ks, &c->k, &dk);
		buf_release(&dn);
		return rc == -ENOENT ? -ENODATA : rc;
	}
	rc = fs_xval_ts_rule(value, size, &r);
	/* What ts_createrule would refuse, refused before either key is
	 * made a time series. */
	struct ks_info di;
	int r2 = rc ? 0 : ks_lookup(c->fs->ks, &dk, &di);
	if (!rc && ks_key_eq(&dk, &c->k)) {
		LOG_ERR("%s%s%s: a rule cannot aggregate a time series into itself", FS_XATTR_TS,
			FS_XATTR_TS_RULE, d);
		rc = -EINVAL;
	} else if (!rc && r2 == 0 && !di.empty && di.type != KV_TYPE_TIMESERIES) {
		LOG_ERR("%s%s%s: '%s' is a %s, not a time series", FS_XATTR_TS, FS_XATTR_TS_RULE, d,
			dn.data, enc_type_name(di.type));
		rc = -KV_EWRONGTYPE;
	} else if (!rc && r2 && r2 != -ENOENT) {
		rc = r2;
	}
	/* An empty source, and a missing destination (rsync makes it
	 * later), become empty time series in the rule's batch. */
	if (!rc)
		rc = ts_createrule(c->fs->ks, &c->k, &dk, r.agg, r.bucket, r.align, &r);
	buf_release(&dn);
	return rc;
}

/*
 * Set (value) or remove (NULL) an attribute, on a series or a remembered
 * empty directory, which becomes an empty series first (rsync sets these
 * attributes, which sort before user.kvfs.type, first). A file, or a key
 * of another type that is not empty, is refused (EINVAL).
 */
static int tsx_change(struct fs_ctx *c, const char *param, const char *value, size_t size)
{
	struct ts_options o;
	uint64_t num;
	int rc;
	if (!c->sh) {
		LOG_ERR("%s%s: '%.*s' is a file, not a time series", FS_XATTR_TS, param,
			(int)c->k.klen, c->k.key);
		return -EINVAL;
	}
	if (value)
		size = fs_xval_chomp(value, size);
	if (c->info.type != KV_TYPE_TIMESERIES && !c->info.empty) {
		LOG_ERR("%s%s: '%.*s' is a %s, not a time series", FS_XATTR_TS, param,
			(int)c->k.klen, c->k.key, enc_type_name(c->info.type));
		return -EINVAL;
	}
	if (has_prefix(param, strlen(param), FS_XATTR_TS_LABEL))
		return tsx_label(c, param + strlen(FS_XATTR_TS_LABEL), value, size);
	if (has_prefix(param, strlen(param), FS_XATTR_TS_RULE))
		return tsx_rule(c, param + strlen(FS_XATTR_TS_RULE), value, size);
	if (!value) {
		LOG_ERR("%s%s cannot be removed; set it instead", FS_XATTR_TS, param);
		return -EPERM;
	}
	rc = fs_xval_ts_param(param, value, size, &o, &num);
	if (rc)
		return rc;
	if (c->info.empty) {
		rc = ts_create(c->fs->ks, &c->k, &o);
		if (rc || !o.set)
			return rc ? rc : ts_set_last_timestamp(c->fs->ks, &c->k, num);
		return 0;
	}
	return o.set ? ts_alter(c->fs->ks, &c->k, &o)
		     : ts_set_last_timestamp(c->fs->ks, &c->k, num);
}

static int tsx_set(struct fs_ctx *c, const char *param, const char *v, size_t vn)
{
	return tsx_change(c, param, v, vn);
}

static int tsx_remove(struct fs_ctx *c, const char *param)
{
	return tsx_change(c, param, NULL, 0);
}

static const struct fs_help ts_help[] = {
    {"CHUNK",
     "a chunk: 20-digit first timestamp and .csv, timestamp,value lines; an edit "
     "(sed -i, vim) recomputes the rules' buckets",
     "cat t/00000001700000000000.csv"},
    {".add", "input: timestamp,value lines (timestamp * is now), TS.MADD",
     "echo \"*,22.5\" >> t/.add"},
    {".add:on_duplicate=POLICY",
     "input: as .add, with TS.ADD's ON_DUPLICATE (block first last min max sum)",
     "echo \"*,1\" >> t/.add:on_duplicate=sum"},
    {".last", "view: the newest sample (TS.GET)", "cat t/.last"},
    {".info", "view: TS.INFO", "cat t/.info"},
    {".log", "view: every sample (TS.RANGE - +), grows as samples are added (tail -f)",
     "tail -f t/.log"},
    {".range:FROM..TO[:OPT]...", "view: TS.RANGE (- and + for the ends; agg=, count=, ...)",
     "cat t/.range:-..+:agg=avg:bucket=60000"},
    {".revrange:FROM..TO[:OPT]...", "view: TS.REVRANGE", "cat t/.revrange:-..+:count=10"},
    {"T:incrby:X",
     "a name beside the key: TS.INCRBY X now (T:decrby:X: TS.DECRBY), prints the value",
     "cat 'temp:incrby:1'"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_timeseries_shape = {
    .type = KV_TYPE_TIMESERIES,
    .is_blank = tsf_is_blank,
    .make_empty = tsf_make_empty,
    .recomputed = true,
    .lookup = tsf_lookup,
    .iter_open = tsf_open_iter,
    .iter_next = tsf_next,
    .iter_free = tsf_free_iter,
    .is_view = tsf_is_view,
    .is_live = tsf_is_live,
    .is_input = tsf_is_input,
    .feed = tsf_feed,
    .load = tsf_load,
    .check = tsf_check,
    .commit = tsf_commit,
    .create = tsf_create,
    .unlink = tsf_unlink,
    .adopt = tsf_adopt,
    .xattr_ns = "ts",
    .xattr_names = tsx_names,
    .xattr_get = tsx_get,
    .xattr_set = tsx_set,
    .xattr_remove = tsx_remove,
    .help = ts_help,
    .from_field = tsf_from_field,
};

/* ---- namespace views: .mrange, .mrevrange, .mget, .queryindex ---------- */

#define NSVIEW_MRANGE	 ".mrange:"
#define NSVIEW_MREVRANGE ".mrevrange:"
#define NSVIEW_MGET	 ".mget"
#define NSVIEW_QUERY	 ".queryindex?"

static bool ns_view_is_name(const char *name, size_t n)
{
	bool mget = has_prefix(name, n, NSVIEW_MGET) && n > strlen(NSVIEW_MGET) &&
		    (name[strlen(NSVIEW_MGET)] == '?' || name[strlen(NSVIEW_MGET)] == ':');
	return (has_prefix(name, n, NSVIEW_MRANGE) || has_prefix(name, n, NSVIEW_MREVRANGE) ||
		mget || has_prefix(name, n, NSVIEW_QUERY)) &&
	       memchr(name, '?', n) != NULL;
}

/* Parse "F1,F2,..." (commas inside parentheses or quotes do not split). */
static int filters_parse(const char *s, size_t n, struct tsagg_filter *f)
{
	size_t start = 0;
	int depth = 0, rc = 0;
	char q = 0;
	for (size_t i = 0; i <= n && !rc; i++) {
		if (i < n && (s[i] == '"' || s[i] == '\''))
			q = q == 0 ? s[i] : (q == s[i] ? 0 : q);
		else if (i < n && !q && s[i] == '(')
			depth++;
		else if (i < n && !q && s[i] == ')' && depth > 0)
			depth--;
		if (i == n || (!q && !depth && s[i] == ',')) {
			rc = tsagg_filter_parse(f, s + start, i - start);
			start = i + 1;
		}
	}
	return rc ? rc : tsagg_filter_check(f);
}

/* One CSV field, quoted (RFC 4180) when it holds a comma, a quote or a
 * line break. */
static int csv_field(struct buf *out, const char *a, size_t an, const char *b, size_t bn)
{
	bool quote = false;
	int rc = 0;
	for (size_t i = 0; i < an + bn; i++) {
		char c = i < an ? a[i] : b[i - an];
		quote |= c == ',' || c == '"' || c == '\n' || c == '\r';
	}
	if (quote)
		rc = buf_add(out, "\"", 1);
	for (size_t i = 0; i < an + bn && !rc; i++) {
		char c = i < an ? a[i] : b[i - an];
		rc = c == '"' && quote ? buf_add(out, "\"\"", 2) : buf_add(out, &c, 1);
	}
	if (!rc && quote)
		rc = buf_add(out, "\"", 1);
	return rc;
}

/* The labels of a result as ",NAME=VALUE" fields. */
static int label_fields(struct buf *out, const struct ts_series_result *r)
{
	int rc = 0;
	for (size_t j = 0; j < r->nlabels && !rc; j++) {
		struct buf f = BUF_INIT;
		rc = buf_add(&f, r->labels[j].name, r->labels[j].nn);
		if (!rc)
			rc = buf_add(&f, "=", 1);
		if (!rc)
			rc = buf_add(out, ",", 1);
		if (!rc)
			rc = csv_field(out, f.data, f.len, r->labels[j].value, r->labels[j].vn);
		buf_release(&f);
	}
	return rc;
}

/* Where the lines go; quote: label fields are asked for, so the key
 * field is CSV-quoted too when it needs it (else it is the bare name). */
struct ns_out {
	struct buf *out;
	bool quote;
};

static int ns_line(void *arg, const struct ts_series_result *r)
{
	struct ns_out *o = arg;
	struct buf fname = BUF_INIT, line = BUF_INIT;
	char v[40];
	int rc = names_encode(r->key, r->klen, &fname);
	for (size_t i = 0; i < r->n && !rc; i++) {
		buf_reset(&line);
		fmt_double_shortest(r->s[i].v, v);
		rc = o->quote ? csv_field(&line, fname.data, fname.len, "", 0)
			      : buf_add(&line, fname.data, fname.len);
		if (!rc)
			rc = buf_printf(&line, ",%" PRIu64 ",%s", r->s[i].ts, v);
		if (!rc)
			rc = label_fields(&line, r);
		if (!rc)
			rc = buf_add(&line, "\n", 1);
		if (!rc)
			rc = buf_add(o->out, line.data, line.len);
	}
	buf_release(&fname);
	buf_release(&line);
	return rc;
}

static int key_line(void *arg, const char *key, size_t klen)
{
	struct buf *out = arg, fname = BUF_INIT;
	int rc = names_encode(key, klen, &fname);
	if (!rc)
		rc = buf_printf(out, "%s\n", fname.data);
	buf_release(&fname);
	return rc;
}

/* The namespace options among the ':' segments of spec (groupby=L,
 * reduce=R, withlabels, labels=A,B) go into *m and sel (the names, borrowed
 * from spec); the other segments, joined by ':', into rest. -EINVAL
 * (logged) for a bad one. */
static int ns_opts_parse(const char *spec, size_t n, struct ts_mopt *m, struct ts_label **sel,
			 struct buf *rest)
{
	size_t i = 0;
	int rc = 0;
	memset(m, 0, sizeof(*m));
	*sel = NULL;
	buf_reset(rest);
	while (i <= n && !rc) {
		const char *e = memchr(spec + i, ':', n - i);
		size_t sn = e ? (size_t)(e - (spec + i)) : n - i;
		const char *p = spec + i;
		if (has_prefix(p, sn, "groupby=") && sn > 8) {
			m->groupby = p + 8;
			m->gn = sn - 8;
		} else if (has_prefix(p, sn, "reduce=")) {
			m->reduce = tsagg_reducer_parse(p + 7, sn - 7);
			if (m->reduce < 0) {
				LOG_ERR("'%.*s': reducers are avg, sum, min, max, range, count, "
					"std.p, std.s, var.p, var.s",
					(int)sn, p);
				rc = -EINVAL;
			}
		} else if (is_name(p, sn, "withlabels")) {
			m->withlabels = true;
		} else if (has_prefix(p, sn, "labels=")) {
			size_t st = 7;
			for (size_t j = 7; j <= sn && !rc; j++) {
				if (j < sn && p[j] != ',')
					continue;
				if (j == st) {
					LOG_ERR("'%.*s': labels=NAME,NAME,... (no empty name)",
						(int)sn, p);
					rc = -EINVAL;
					break;
				}
				void *q = realloc(*sel, (m->nsel + 1) * sizeof(**sel));
				if (!q) {
					rc = -ENOMEM;
					break;
				}
				*sel = q;
				(*sel)[m->nsel++] = (struct ts_label){p + st, j - st, NULL, 0};
				st = j + 1;
			}
			m->sel = *sel;
		} else if (sn || e) {
			if (rest->len)
				rc = buf_add(rest, ":", 1);
			if (!rc)
				rc = buf_add(rest, p, sn);
		}
		if (!e)
			break;
		i += sn + 1;
	}
	if (!rc && m->withlabels && m->nsel) {
		LOG_ERR("withlabels or labels=..., not both");
		rc = -EINVAL;
	}
	if (rc) {
		free(*sel);
		*sel = NULL;
	}
	return rc;
}

/* The lines of view k->key (a name) in namespace k->ns. */
static int ns_view_load(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	const char *name = k->key, *q = memchr(k->key, '?', k->klen);
	size_t n = k->klen;
	struct tsagg_filter *f = tsagg_filter_new();
	struct ts_range_opt o;
	struct ts_mopt m;
	struct ts_label *sel = NULL;
	struct buf rest = BUF_INIT;
	uint64_t *fts = NULL;
	int rc = f ? 0 : -ENOMEM;
	buf_reset(out);
	if (!rc)
		rc = filters_parse(q + 1, n - (size_t)(q + 1 - name), f);
	if (rc == -EINVAL)
		LOG_ERR("'%.*s': filters after '?' are LABEL=VALUE, LABEL!=VALUE, LABEL=, LABEL!=, "
			"LABEL=(V1,V2), LABEL!=(V1,V2), separated by commas, at least one "
			"LABEL=VALUE",
			(int)n, name);
	if (!rc && has_prefix(name, n, NSVIEW_QUERY)) {
		rc = ts_queryindex(fs->ks, k->ns, k->nslen, f, key_line, out);
	} else if (!rc && has_prefix(name, n, NSVIEW_MGET)) {
		size_t head = strlen(NSVIEW_MGET);
		const char *sp = name + head + (name[head] == ':');
		rc = ns_opts_parse(sp, (size_t)(q - sp), &m, &sel, &rest);
		if (!rc && (rest.len || m.groupby || m.reduce)) {
			LOG_ERR("'%.*s': .mget takes withlabels or labels=A,B", (int)n, name);
			rc = -EINVAL;
		}
		struct ns_out no = {out, m.withlabels || m.nsel};
		if (!rc)
			rc = ts_mget(fs->ks, k->ns, k->nslen, f, &m, ns_line, &no);
	} else if (!rc) {
		bool rev = has_prefix(name, n, NSVIEW_MREVRANGE);
		size_t head = strlen(rev ? NSVIEW_MREVRANGE : NSVIEW_MRANGE);
		rc = ns_opts_parse(name + head, (size_t)(q - name) - head, &m, &sel, &rest);
		if (!rc)
			rc = fs_ts_range_parse(rest.data ? rest.data : "", rest.len, &o, &fts);
		struct ns_out no = {out, m.withlabels || m.nsel};
		if (!rc)
			rc = ts_mrange(fs->ks, k->ns, k->nslen, f, &o, rev, &m, ns_line, &no);
	}
	free(fts);
	free(sel);
	buf_release(&rest);
	tsagg_filter_free(f);
	return rc;
}

/* A view's size is its text's: it is made now, and again at each open. */
static int ns_view_stat(struct fs *fs, const struct ks_key *k, const struct ks_info *info,
			struct stat *st, double *timeout)
{
	(void)info;
	struct buf out = BUF_INIT;
	int rc = ns_view_load(fs, k, &out);
	if (!rc)
		fs_stat_fill(fs, S_IFREG | 0444, out.len, 0, 0, st, timeout);
	*timeout = 0;
	buf_release(&out);
	return rc;
}

static int ns_view_open(struct fs *fs, const struct ks_key *k, bool write, bool *view)
{
	(void)fs;
	*view = true;
	if (write) {
		LOG_ERR("'%.*s' is a read-only view", (int)k->klen, k->key);
		return -EACCES;
	}
	return 0;
}

/* The views are files of the namespace, whatever key has their name. */
const struct fs_file_shape fs_ts_view_file_shape = {
    .type = KV_TYPE_TIMESERIES,
    .is_name = ns_view_is_name,
    .shadows = true,
    .stat = ns_view_stat,
    .open = ns_view_open,
    .load = ns_view_load,
};

/* ---- the namespace input .madd: TS.MADD across keys ------------------- */

#define NSINPUT_MADD ".madd"

/* ".madd", or ".madd:on_duplicate=POLICY": the policy into *dup. */
static bool madd_parse_name(const char *name, size_t n, int *dup)
{
	static const char opt[] = NSINPUT_MADD ":on_duplicate=";
	*dup = TS_DUP_NONE;
	if (is_name(name, n, NSINPUT_MADD))
		return true;
	if (!has_prefix(name, n, opt))
		return false;
	*dup = ts_policy_parse(name + strlen(opt), n - strlen(opt));
	return *dup >= 0;
}

/* Any ".madd:on_duplicate=" name is the input's: one with no policy is
 * refused at open (EINVAL) instead of becoming a string key. */
static bool madd_is_name(const char *name, size_t n)
{
	return is_name(name, n, NSINPUT_MADD) || has_prefix(name, n, NSINPUT_MADD ":on_duplicate=");
}

/* One series of a write: its key, its samples and their line numbers. */
struct madd_key {
	struct buf key;
	struct ts_sample *s;
	size_t *line;
	size_t n, cap;
};

struct madd_write {
	struct madd_key *k;
	size_t n;
};

static void madd_write_release(struct madd_write *w)
{
	for (size_t i = 0; i < w->n; i++) {
		buf_release(&w->k[i].key);
		free(w->k[i].s);
		free(w->k[i].line);
	}
	free(w->k);
}

/* Add sample x of line ln to key (the decoded name) in w. */
static int madd_push(struct madd_write *w, const struct buf *key, struct ts_sample x, size_t ln)
{
	size_t i = 0;
	while (i < w->n &&
	       !(w->k[i].key.len == key->len && memcmp(w->k[i].key.data, key->data, key->len) == 0))
		i++;
	if (i == w->n) {
		if (w->n == KS_LOCKV_MAX)
			return -E2BIG;
		void *p = realloc(w->k, (w->n + 1) * sizeof(*w->k));
		if (!p)
			return -ENOMEM;
		w->k = p;
		memset(&w->k[i], 0, sizeof(w->k[i]));
		w->n++;
		if (buf_set(&w->k[i].key, key->data, key->len))
			return -ENOMEM;
	}
	struct madd_key *k = &w->k[i];
	if (k->n == k->cap) {
		size_t cap = k->cap ? k->cap * 2 : 16;
		void *p = realloc(k->s, cap * sizeof(*k->s)), *q;
		if (!p)
			return -ENOMEM;
		k->s = p;
		if (!(q = realloc(k->line, cap * sizeof(*k->line))))
			return -ENOMEM;
		k->line = q;
		k->cap = cap;
	}
	k->s[k->n] = x;
	k->line[k->n++] = ln;
	return 0;
}

/* The lines "KEY,TIMESTAMP,VALUE" of d into w (KEY a file name, which
 * may hold commas: the last two fields are the sample). 0, or an error
 * with *line the line's number. */
static int madd_lines(const char *d, size_t dn, struct madd_write *w, size_t *line)
{
	struct buf name = BUF_INIT, key = BUF_INIT;
	size_t i = 0, len, ln = 0;
	const char *l;
	bool blank;
	int rc = 0;
	while (!rc && next_line(d, dn, &i, &l, &len, &blank)) {
		struct ts_sample x;
		uint64_t hash;
		ln++;
		if (blank)
			continue;
		const char *vc = memrchr(l, ',', len);
		const char *tc = vc ? memrchr(l, ',', (size_t)(vc - l)) : NULL;
		rc = tc && tc > l ? sample_parse(tc + 1, len - (size_t)(tc + 1 - l), true, &x)
				  : -EINVAL;
		if (!rc)
			rc = buf_set(&name, l, (size_t)(tc - l));
		if (!rc && (memchr(name.data, 0, name.len) ||
			    names_decode(name.data, &key, &hash) || !key.len))
			rc = -EINVAL;
		if (!rc)
			rc = madd_push(w, &key, x, ln);
	}
	*line = ln;
	buf_release(&name);
	buf_release(&key);
	return rc;
}

/* madd_changed: ts_rules callback, a destination the write changed. */
struct madd_ns {
	struct fs *fs;
	struct fs_node *ns;
};

static int madd_dest_changed(void *arg, const char *dst, size_t dn, const struct ts_rule *r)
{
	struct madd_ns *a = arg;
	(void)r;
	fs_key_changed_named(a->fs, a->ns, dst, dn);
	return 0;
}

static int madd_feed(struct fs *fs, struct fs_node *ns, const struct ks_key *k, const char *d,
		     size_t dn)
{
	struct madd_write w = {0};
	struct ts_madd_in *in = NULL;
	size_t line = 0, bk = 0, bs = 0;
	int dup;
	if (!madd_parse_name(k->key, k->klen, &dup))
		return -EACCES;
	int rc = madd_lines(d, dn, &w, &line);
	if (rc == -EINVAL)
		LOG_ERR("'%.*s': line %zu of this write is not \"KEY,TIMESTAMP,VALUE\" (KEY a file "
			"name, timestamp a number of ms or *): nothing of it is added",
			(int)k->klen, k->key, line);
	else if (rc == -E2BIG)
		LOG_ERR(
		    "'%.*s': line %zu: more than %d series in one write: nothing of it is added",
		    (int)k->klen, k->key, line, KS_LOCKV_MAX);
	if (rc || !w.n)
		goto out;
	if (!(in = calloc(w.n, sizeof(*in)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < w.n; i++) {
		in[i].k = *k; /* the namespace, and the change the caller staged */
		in[i].k.key = w.k[i].key.data;
		in[i].k.klen = w.k[i].key.len;
		in[i].s = w.k[i].s;
		in[i].n = w.k[i].n;
	}
	rc = ts_madd_keys(fs->ks, in, w.n, dup, &bk, &bs);
	if (rc && bk >= w.n && rc != -EINVAL && rc != -E2BIG) /* else logged */
		LOG_ERR("'%.*s': nothing of this write is added: %s", (int)k->klen, k->key,
			strerror(-rc));
	if (rc && bk < w.n && bs < w.k[bk].n) {
		const struct madd_key *b = &w.k[bk];
		const char *why = rc == -ENOENT		 ? "no such time series (TS.MADD adds to "
							   "existing series only)"
				  : rc == -KV_EWRONGTYPE ? "the key is not a time series"
				  : rc == -EEXIST	 ? "a sample at that timestamp exists "
							   "(DUPLICATE_POLICY block)"
				  : rc == -EINVAL	 ? "refused (older than the retention "
							   "window, or logged above)"
							 : strerror(-rc);
		LOG_ERR("'%.*s': line %zu, key '%.*s': %s: nothing of this write is added",
			(int)k->klen, k->key, b->line[bs], (int)b->key.len, b->key.data, why);
	}
	if (!rc) {
		struct madd_ns a = {fs, ns};
		for (size_t i = 0; i < w.n; i++) {
			fs_key_changed_named(fs, ns, in[i].k.key, in[i].k.klen);
			ts_rules(fs->ks, &in[i].k, madd_dest_changed, &a); /* nothing to undo */
		}
	}
out:
	free(in);
	madd_write_release(&w);
	return rc;
}

/* An input: an empty write-only file, looked up anew each time. */
static int madd_stat(struct fs *fs, const struct ks_key *k, const struct ks_info *info,
		     struct stat *st, double *timeout)
{
	int dup;
	(void)info;
	if (!madd_parse_name(k->key, k->klen, &dup))
		return -ENOENT;
	fs_stat_fill(fs, S_IFREG | 0200, 0, 0, 0, st, timeout);
	st->st_blksize = FS_INPUT_BLKSIZE;
	*timeout = 0;
	return 0;
}

static int madd_open(struct fs *fs, const struct ks_key *k, bool write, bool *view)
{
	int dup;
	(void)fs;
	(void)write;
	*view = false;
	if (madd_parse_name(k->key, k->klen, &dup))
		return 0;
	LOG_ERR("'%.*s': ON_DUPLICATE is block, first, last, min, max or sum", (int)k->klen,
		k->key);
	return -EINVAL;
}

static int madd_load(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	(void)fs;
	(void)k;
	buf_reset(out); /* an input holds nothing */
	return 0;
}

static int madd_unlink(struct fs *fs, const struct ks_key *k)
{
	(void)fs;
	LOG_ERR("rm '%.*s': an input (TS.MADD) cannot be removed", (int)k->klen, k->key);
	return -EACCES;
}

/* .madd is a name of the namespace while no key has it (as KEY:rpush). */
const struct fs_file_shape fs_ts_madd_file_shape = {
    .type = KV_TYPE_STRING, /* a file: what fs_file_check asks of a name */
    .is_name = madd_is_name,
    .stat = madd_stat,
    .open = madd_open,
    .load = madd_load,
    .unlink = madd_unlink,
    .feed = madd_feed,
};
