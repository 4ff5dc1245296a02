/*
 * t_stream_state: the text of what a copy of a stream carries beside its
 * entries, the metadata counters (`state`) and the consumer groups
 * (`groups`), parsed and formatted here without storage; the verbs that
 * read and store them are stream_set_counters (t_stream.c) and
 * stream_gstate_read/replace (t_stream_group.c). Everything parsed is
 * untrusted: each line is checked, lengths come from the text itself, and
 * a refusal is one log line with the line number. Layer: types.
 */
#include "types/t_stream_state.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- The counters ---------------------------------------------------- */

enum { C_LAST_GENERATED, C_MAX_DELETED, C_ENTRIES_ADDED, C_RECORDED_FIRST, C_N };
static const char *const counter_names[C_N] = {"last-generated-id", "max-deleted-entry-id",
					       "entries-added", "recorded-first-entry-id"};

bool stream_counters_derived(const struct stream_info *i)
{
	static const struct stream_id zero = {0, 0};
	return i->entries_added == i->size && stream_id_cmp(&i->max_deleted, &zero) == 0 &&
	       stream_id_cmp(&i->last_generated, &i->last) == 0 &&
	       stream_id_cmp(&i->recorded_first, &i->first) == 0;
}

int stream_counters_format(const struct stream_info *i, struct buf *out)
{
	char a[STREAM_ID_MAX], b[STREAM_ID_MAX], r[STREAM_ID_MAX];
	stream_id_format(&i->last_generated, a);
	stream_id_format(&i->max_deleted, b);
	stream_id_format(&i->recorded_first, r);
	return buf_printf(out, "%s %s\n%s %s\n%s %" PRIu64 "\n%s %s\n",
			  counter_names[C_LAST_GENERATED], a, counter_names[C_MAX_DELETED], b,
			  counter_names[C_ENTRIES_ADDED], i->entries_added,
			  counter_names[C_RECORDED_FIRST], r);
}

static bool is_blank(char ch)
{
	return ch == ' ' || ch == '\t' || ch == '\r';
}

int stream_counters_parse(const char *d, size_t dn, struct stream_counters *out)
{
	bool seen[C_N] = {false};
	size_t start = 0, lineno = 0;
	memset(out, 0, sizeof(*out));
	for (size_t j = 0; d && j <= dn; j++) {
		if (j < dn && d[j] != '\n')
			continue;
		const char *l = d + start;
		size_t ln = j - start;
		start = j + 1;
		lineno++;
		while (ln && is_blank(l[ln - 1]))
			ln--;
		while (ln && is_blank(*l)) {
			l++;
			ln--;
		}
		if (!ln)
			continue;
		size_t k = 0;
		while (k < ln && !is_blank(l[k]))
			k++;
		const char *v = l + k;
		size_t vn = ln - k;
		while (vn && is_blank(*v)) {
			v++;
			vn--;
		}
		int c = 0;
		while (c < C_N &&
		       !(strlen(counter_names[c]) == k && !memcmp(counter_names[c], l, k)))
			c++;
		int rc = 0;
		if (c == C_N || seen[c]) {
			rc = -EINVAL;
		} else if (c == C_ENTRIES_ADDED) {
			rc = parse_u64(v, vn, &out->entries_added) ? -EINVAL : 0;
		} else {
			struct stream_id *id = c == C_LAST_GENERATED ? &out->last_generated
					       : c == C_MAX_DELETED  ? &out->max_deleted
								     : &out->recorded_first;
			rc = stream_id_parse(v, vn, false, id);
		}
		if (rc) {
			LOG_ERR(
			    "stream state, line %zu ('%.*s'): write each of last-generated-id ID, "
			    "max-deleted-entry-id ID, entries-added N, recorded-first-entry-id "
			    "ID once",
			    lineno, (int)(ln > 60 ? 60 : ln), l);
			return -EINVAL;
		}
		seen[c] = true;
	}
	for (int c = 0; c < C_N; c++) {
		if (!seen[c]) {
			LOG_ERR("stream state: %s is missing", counter_names[c]);
			return -EINVAL;
		}
	}
	return 0;
}

/* ---- The groups: building ---------------------------------------------- */

void stream_gstate_release(struct stream_gstate *gs)
{
	free(gs->g);
	free(gs->c);
	free(gs->p);
	buf_release(&gs->bytes);
	memset(gs, 0, sizeof(*gs));
}

static int add_bytes(struct stream_gstate *gs, const char *s, size_t n, struct stream_gs_str *out)
{
	out->off = gs->bytes.len;
	out->n = n;
	return n ? buf_add(&gs->bytes, s, n) : 0;
}

int stream_gstate_add_group(struct stream_gstate *gs, const char *name, size_t n,
			    const struct stream_id *last_delivered, int64_t entries_read,
			    uint64_t lag)
{
	void *nv = array_grow(gs->g, &gs->gcap, gs->ng, sizeof(*gs->g), 8);
	if (!nv)
		return -ENOMEM;
	gs->g = nv;
	struct stream_gs_group *g = &gs->g[gs->ng];
	memset(g, 0, sizeof(*g));
	g->last_delivered = *last_delivered;
	g->entries_read = entries_read;
	g->lag = lag;
	g->c0 = gs->nc;
	g->p0 = gs->np;
	int rc = add_bytes(gs, name, n, &g->name);
	if (!rc)
		gs->ng++;
	return rc;
}

int stream_gstate_add_consumer(struct stream_gstate *gs, const char *name, size_t n,
			       uint64_t seen_ms, uint64_t active_ms)
{
	if (!gs->ng)
		return -EINVAL;
	void *nv = array_grow(gs->c, &gs->ccap, gs->nc, sizeof(*gs->c), 8);
	if (!nv)
		return -ENOMEM;
	gs->c = nv;
	struct stream_gs_consumer *c = &gs->c[gs->nc];
	c->seen_ms = seen_ms;
	c->active_ms = active_ms;
	int rc = add_bytes(gs, name, n, &c->name);
	if (!rc) {
		gs->nc++;
		gs->g[gs->ng - 1].nc++;
	}
	return rc;
}

int stream_gstate_add_pel(struct stream_gstate *gs, const struct stream_id *id, const char *cname,
			  size_t cn, uint64_t delivery_ms, uint64_t deliveries)
{
	if (!gs->ng)
		return -EINVAL;
	void *nv = array_grow(gs->p, &gs->pcap, gs->np, sizeof(*gs->p), 16);
	if (!nv)
		return -ENOMEM;
	gs->p = nv;
	struct stream_gs_pel *p = &gs->p[gs->np];
	p->id = *id;
	p->delivery_ms = delivery_ms;
	p->deliveries = deliveries;
	int rc = add_bytes(gs, cname, cn, &p->consumer);
	if (!rc) {
		gs->np++;
		gs->g[gs->ng - 1].np++;
	}
	return rc;
}

/* ---- The groups: text ------------------------------------------------------ */

static int add_field(struct buf *out, const struct stream_gstate *gs, struct stream_gs_str s)
{
	int rc = buf_add(out, "\t", 1);
	return rc ? rc : buf_add_escaped(out, stream_gs_bytes(gs, s), s.n);
}

int stream_gstate_format(const struct stream_gstate *gs, struct buf *out)
{
	char a[STREAM_ID_MAX];
	int rc = 0;
	for (size_t j = 0; j < gs->ng && !rc; j++) {
		const struct stream_gs_group *g = &gs->g[j];
		stream_id_format(&g->last_delivered, a);
		rc = buf_add(out, "group", 5);
		if (!rc)
			rc = add_field(out, gs, g->name);
		if (!rc)
			rc = buf_printf(out, "\t%s\t%" PRId64 "\t%" PRIu64 "\n", a, g->entries_read,
					g->lag);
		for (size_t i = g->c0; i < g->c0 + g->nc && !rc; i++) {
			rc = buf_add(out, "consumer", 8);
			if (!rc)
				rc = add_field(out, gs, gs->c[i].name);
			if (!rc)
				rc = buf_printf(out, "\t%" PRIu64 "\t%" PRIu64 "\n",
						gs->c[i].seen_ms, gs->c[i].active_ms);
		}
		for (size_t i = g->p0; i < g->p0 + g->np && !rc; i++) {
			stream_id_format(&gs->p[i].id, a);
			rc = buf_printf(out, "pending\t%s", a);
			if (!rc)
				rc = add_field(out, gs, gs->p[i].consumer);
			if (!rc)
				rc = buf_printf(out, "\t%" PRIu64 "\t%" PRIu64 "\n",
						gs->p[i].delivery_ms, gs->p[i].deliveries);
		}
	}
	return rc;
}

#define GS_FIELDS 6 /* the most fields of a line, plus one to see more */

/* A name Kvrocks accepts for a group or a consumer. */
static bool good_name(const struct buf *b)
{
	return b->len > 0 && !isdigit((unsigned char)b->data[0]);
}

static int cmp_str(const struct stream_gstate *gs, struct stream_gs_str a, struct stream_gs_str b)
{
	size_t n = a.n < b.n ? a.n : b.n;
	int c = n ? memcmp(stream_gs_bytes(gs, a), stream_gs_bytes(gs, b), n) : 0;
	return c ? c : (a.n > b.n) - (a.n < b.n);
}

static int cmp_group(const void *x, const void *y, void *arg)
{
	const struct stream_gstate *gs = arg;
	return cmp_str(gs, gs->g[*(const size_t *)x].name, gs->g[*(const size_t *)y].name);
}

static int cmp_consumer(const void *x, const void *y, void *arg)
{
	const struct stream_gstate *gs = arg;
	return cmp_str(gs, gs->c[*(const size_t *)x].name, gs->c[*(const size_t *)y].name);
}

static int cmp_pel(const void *x, const void *y, void *arg)
{
	const struct stream_gstate *gs = arg;
	return stream_id_cmp(&gs->p[*(const size_t *)x].id, &gs->p[*(const size_t *)y].id);
}

/* Does any of the n items from `first` repeat (by cmp)? The item's index,
 * or SIZE_MAX. */
static size_t find_repeat(struct stream_gstate *gs, size_t first, size_t n, size_t *ix,
			  int (*cmp)(const void *, const void *, void *))
{
	for (size_t j = 0; j < n; j++)
		ix[j] = first + j;
	qsort_r(ix, n, sizeof(*ix), cmp, gs);
	for (size_t j = 1; j < n; j++)
		if (cmp(&ix[j - 1], &ix[j], gs) == 0)
			return ix[j];
	return SIZE_MAX;
}

/* Is name among the n consumers ix lists in name order? */
static bool has_consumer(const struct stream_gstate *gs, const size_t *ix, size_t n,
			 struct stream_gs_str name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = cmp_str(gs, gs->c[ix[mid]].name, name);
		if (c == 0)
			return true;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Names and IDs that repeat, a pending entry of a consumer without a
 * line: -EINVAL, logged. */
static int check_repeats(struct stream_gstate *gs)
{
	size_t most = gs->ng;
	for (size_t j = 0; j < gs->ng; j++) {
		if (gs->g[j].nc > most)
			most = gs->g[j].nc;
		if (gs->g[j].np > most)
			most = gs->g[j].np;
	}
	size_t *ix = malloc((most ? most : 1) * sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	int rc = 0;
	size_t r = find_repeat(gs, 0, gs->ng, ix, cmp_group);
	if (r != SIZE_MAX) {
		LOG_ERR("stream groups: group '%.*s' is written twice", (int)gs->g[r].name.n,
			stream_gs_bytes(gs, gs->g[r].name));
		rc = -EINVAL;
	}
	for (size_t j = 0; j < gs->ng && !rc; j++) {
		const struct stream_gs_group *g = &gs->g[j];
		r = find_repeat(gs, g->c0, g->nc, ix, cmp_consumer);
		if (r != SIZE_MAX) {
			LOG_ERR("stream groups: consumer '%.*s' of group '%.*s' is written twice",
				(int)gs->c[r].name.n, stream_gs_bytes(gs, gs->c[r].name),
				(int)g->name.n, stream_gs_bytes(gs, g->name));
			rc = -EINVAL;
			break;
		}
		/* ix: the group's consumers in name order. A pending entry of a
		 * consumer without a line is a state Kvrocks never makes (its
		 * DELCONSUMER drops the entries too) and its XCLAIM fails on. */
		for (size_t q = g->p0; q < g->p0 + g->np && !rc; q++) {
			if (has_consumer(gs, ix, g->nc, gs->p[q].consumer))
				continue;
			LOG_ERR(
			    "stream groups: pending entry %" PRIu64 "-%" PRIu64
			    " of group '%.*s' names consumer '%.*s', which has no consumer line",
			    gs->p[q].id.ms, gs->p[q].id.seq, (int)g->name.n,
			    stream_gs_bytes(gs, g->name), (int)gs->p[q].consumer.n,
			    stream_gs_bytes(gs, gs->p[q].consumer));
			rc = -EINVAL;
		}
		if (rc)
			break;
		r = find_repeat(gs, g->p0, g->np, ix, cmp_pel);
		if (r != SIZE_MAX) {
			LOG_ERR("stream groups: pending entry %" PRIu64 "-%" PRIu64
				" of group '%.*s' is written twice",
				gs->p[r].id.ms, gs->p[r].id.seq, (int)g->name.n,
				stream_gs_bytes(gs, g->name));
			rc = -EINVAL;
		}
	}
	free(ix);
	return rc;
}

/* One line split into at most GS_FIELDS unescaped fields: *nf fields, or
 * -EINVAL for a bad escape. */
static int split_fields(const char *l, size_t ln, struct buf *f, size_t *nf)
{
	size_t start = 0;
	*nf = 0;
	for (size_t j = 0; j <= ln; j++) {
		if (j < ln && l[j] != '\t')
			continue;
		if (*nf == GS_FIELDS)
			return -EINVAL;
		if (buf_set_unescaped(&f[*nf], l + start, j - start))
			return -EINVAL;
		if (!f[*nf].data && buf_set(&f[*nf], "", 0))
			return -ENOMEM;
		(*nf)++;
		start = j + 1;
	}
	return 0;
}

static bool field_is(const struct buf *b, const char *lit)
{
	return b->len == strlen(lit) && memcmp(b->data, lit, b->len) == 0;
}

static bool field_u64(const struct buf *b, uint64_t *v)
{
	return parse_u64(b->data, b->len, v) == 0 && b->len > 0 &&
	       isdigit((unsigned char)b->data[0]);
}

static bool field_id(const struct buf *b, struct stream_id *id)
{
	return stream_id_parse(b->data, b->len, false, id) == 0;
}

/* One line of the text, its fields f[0..nf): 0, -EINVAL (the caller logs
 * the line with *why), -ENOMEM. */
static int parse_one(struct stream_gstate *gs, struct buf *f, size_t nf, const char **why)
{
	struct stream_id id;
	uint64_t a, b;
	int64_t er;
	*why = "not a group, consumer or pending line of the right number of fields";
	if (field_is(&f[0], "group") && nf == 5) {
		*why = "group NAME LAST-DELIVERED-ID ENTRIES-READ LAG: a bad name, ID or number";
		if (!good_name(&f[1]) || !field_id(&f[2], &id) ||
		    parse_i64(f[3].data, f[3].len, &er) || !field_u64(&f[4], &a))
			return -EINVAL;
		return stream_gstate_add_group(gs, f[1].data, f[1].len, &id, er, a);
	}
	if (field_is(&f[0], "consumer") && nf == 4) {
		*why = "consumer NAME SEEN-MS ACTIVE-MS: a bad name or number, or no group "
		       "line before it";
		if (!gs->ng || !good_name(&f[1]) || !field_u64(&f[2], &a) || !field_u64(&f[3], &b))
			return -EINVAL;
		return stream_gstate_add_consumer(gs, f[1].data, f[1].len, a, b);
	}
	if (field_is(&f[0], "pending") && nf == 5) {
		*why =
		    "pending ID CONSUMER DELIVERY-MS DELIVERIES: a bad ID, name or number, or no "
		    "group line before it";
		if (!gs->ng || !field_id(&f[1], &id) || !good_name(&f[2]) ||
		    !field_u64(&f[3], &a) || !field_u64(&f[4], &b))
			return -EINVAL;
		return stream_gstate_add_pel(gs, &id, f[2].data, f[2].len, a, b);
	}
	return -EINVAL;
}

int stream_gstate_parse(const char *d, size_t dn, struct stream_gstate *gs)
{
	struct buf f[GS_FIELDS];
	size_t start = 0, lineno = 0;
	int rc = 0;
	stream_gstate_release(gs);
	if (dn == 0)
		return 0; /* no group (d may be NULL) */
	for (int j = 0; j < GS_FIELDS; j++)
		buf_init(&f[j]);
	for (size_t j = 0; j <= dn && !rc; j++) {
		if (j < dn && d[j] != '\n')
			continue;
		const char *l = d + start, *why = "a bad escape or more than 5 fields";
		size_t ln = j - start, nf = 0;
		start = j + 1;
		lineno++;
		if (ln == 0)
			continue;
		rc = split_fields(l, ln, f, &nf);
		if (!rc)
			rc = parse_one(gs, f, nf, &why);
		if (rc == -EINVAL)
			LOG_ERR("stream groups, line %zu ('%.*s'): %s", lineno,
				(int)(ln > 60 ? 60 : ln), l, why);
	}
	for (int j = 0; j < GS_FIELDS; j++)
		buf_release(&f[j]);
	if (!rc)
		rc = check_repeats(gs);
	if (rc)
		stream_gstate_release(gs);
	return rc;
}
