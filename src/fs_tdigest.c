/*
 * fs_tdigest: a t-digest key is a directory holding its exact state in
 * three text files, listed only while they hold something (state: while
 * the digest is not blank):
 *   buffer     the samples not merged yet, one number a line
 *   centroids  "MEAN WEIGHT" a line, in mean order
 *   state      "NAME VALUE" lines: compression, capacity, unmerged_nodes,
 *              merged_nodes, total_weight, merged_weight, min, max,
 *              observations, merge_times (the metadata tail)
 * Numbers are written with the fewest digits that read back to the same
 * double, so a copy restores the state bit for bit. Writing a file
 * replaces that part after checking it (EINVAL, nothing changed);
 * removing it empties that part; rmdir of a digest that lists nothing
 * deletes the key. Unlisted inputs: .add (a number a line: TDIGEST.ADD),
 * .reset (any line: TDIGEST.RESET), .merge (a source key a line, one
 * TDIGEST.MERGE per write). Unlisted views (read-only): .quantile:Q[,Q..],
 * .cdf:X[,..], .rank:X[,..], .revrank:X[,..], .byrank:R[,..],
 * .byrevrank:R[,..], .min, .max, .trimmed-mean:LO..HI, .info.
 * See docs/mapping.md. Layer: fs.
 */
#include "fs_int.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "t_tdigest.h"

/* ---- small text helpers (kept local: fs_topk.c has its own) ------------ */

/* The fewest digits (15..17) that read back as the same double. */
static int add_double(struct buf *o, double d)
{
	char s[40];
	if (isnan(d))
		return buf_printf(o, "nan");
	if (isinf(d))
		return buf_printf(o, d > 0 ? "inf" : "-inf");
	for (int prec = 15; prec <= 17; prec++) {
		snprintf(s, sizeof(s), "%.*g", prec, d);
		if (strtod(s, NULL) == d)
			break;
	}
	return buf_printf(o, "%s", s);
}

/* Next line of d[0..n) from *off: its bytes without the newline. */
static bool next_line(const char *d, size_t n, size_t *off, const char **line, size_t *len)
{
	if (*off >= n)
		return false;
	const char *s = d + *off, *nl = memchr(s, '\n', n - *off);
	*line = s;
	*len = nl ? (size_t)(nl - s) : n - *off;
	*off += *len + (nl ? 1 : 0);
	return true;
}

static bool is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\r')
			return false;
	return true;
}

static bool has_prefix(const char *s, size_t n, const char *p)
{
	size_t pn = strlen(p);
	return n >= pn && memcmp(s, p, pn) == 0;
}

static bool is_name(const char *s, size_t n, const char *p)
{
	return n == strlen(p) && memcmp(s, p, n) == 0;
}

/* ---- names -------------------------------------------------------------- */

enum part { PART_NONE, PART_BUFFER, PART_CENTROIDS, PART_STATE };

static enum part part_of(const char *name, size_t n)
{
	if (is_name(name, n, "buffer"))
		return PART_BUFFER;
	if (is_name(name, n, "centroids"))
		return PART_CENTROIDS;
	if (is_name(name, n, "state"))
		return PART_STATE;
	return PART_NONE;
}

static const char *const view_prefixes[] = {
    ".quantile:", ".cdf:", ".rank:", ".revrank:", ".byrank:", ".byrevrank:", ".trimmed-mean:"};

static bool td_is_view(const char *name, size_t n)
{
	if (is_name(name, n, ".min") || is_name(name, n, ".max") || is_name(name, n, ".info"))
		return true;
	for (size_t i = 0; i < sizeof(view_prefixes) / sizeof(view_prefixes[0]); i++)
		if (has_prefix(name, n, view_prefixes[i]))
			return true;
	return false;
}

static bool td_is_input(const char *name, size_t n)
{
	return is_name(name, n, ".add") || is_name(name, n, ".reset") || is_name(name, n, ".merge");
}

/* ---- the listed files ----------------------------------------------------- */

static bool stats_default(const struct tdigest_info *in)
{
	return in->min == DBL_MAX && in->max == -DBL_MAX && in->observations == 0 &&
	       in->merge_times == 0;
}

/* Render part p; *listed = whether it holds something. */
static int part_render(struct fs_ctx *c, enum part p, struct buf *o, bool *listed)
{
	struct tdigest_info in;
	struct td_digest d;
	double *b;
	size_t nb;
	int rc = tdigest_state(c->fs->ks, &c->k, &in, &d, &b, &nb);
	buf_reset(o);
	if (!rc && p == PART_BUFFER) {
		*listed = nb > 0;
		for (size_t i = 0; i < nb && !rc; i++) {
			rc = add_double(o, b[i]);
			if (!rc)
				rc = buf_add(o, "\n", 1);
		}
	} else if (!rc && p == PART_CENTROIDS) {
		*listed = d.n > 0;
		for (size_t i = 0; i < d.n && !rc; i++) {
			rc = add_double(o, d.c[i].mean);
			if (!rc)
				rc = buf_add(o, " ", 1);
			if (!rc)
				rc = add_double(o, d.c[i].weight);
			if (!rc)
				rc = buf_add(o, "\n", 1);
		}
	} else if (!rc) {
		/* listed unless the digest is blank */
		*listed = in.unmerged_nodes || in.merged_nodes || !stats_default(&in);
		rc = buf_printf(o,
				"compression %" PRIu32 "\ncapacity %" PRIu32
				"\nunmerged_nodes %" PRIu64 "\nmerged_nodes %" PRIu64
				"\ntotal_weight %" PRIu64 "\nmerged_weight %" PRIu64 "\nmin ",
				in.compression, in.capacity, in.unmerged_nodes, in.merged_nodes,
				in.total_weight, in.merged_weight);
		if (!rc)
			rc = add_double(o, in.min);
		if (!rc)
			rc = buf_printf(o, "\nmax ");
		if (!rc)
			rc = add_double(o, in.max);
		if (!rc)
			rc = buf_printf(o, "\nobservations %" PRIu64 "\nmerge_times %" PRIu64 "\n",
					in.observations, in.merge_times);
	}
	td_release(&d);
	free(b);
	return rc;
}

/* Parse one number of a line (the whole line, blanks around allowed). */
static int line_number(const char *what, size_t lineno, const char *s, size_t n, double *v)
{
	if (parse_double(s, n, v) == 0)
		return 0;
	LOG_ERR("%s: line %zu ('%.*s') is not a number", what, lineno, (int)(n > 60 ? 60 : n), s);
	return -EINVAL;
}

static int store_buffer(struct fs_ctx *c, const char *d, size_t dn)
{
	size_t off = 0, len, lineno = 0, n = 0, cap = 0;
	const char *line;
	double *v = NULL;
	int rc = 0;
	while (!rc && next_line(d, dn, &off, &line, &len)) {
		lineno++;
		if (is_blank(line, len))
			continue;
		if (n == cap) {
			double *nv = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
		}
		rc = line_number("t-digest buffer", lineno, line, len, &v[n++]);
	}
	if (!rc && c)
		rc = tdigest_set_buffer(c->fs->ks, &c->k, v, n);
	free(v);
	return rc;
}

static int store_centroids(struct fs_ctx *c, const char *d, size_t dn)
{
	size_t off = 0, len, lineno = 0, n = 0, cap = 0;
	const char *line;
	struct td_centroid *v = NULL;
	int rc = 0;
	while (!rc && next_line(d, dn, &off, &line, &len)) {
		lineno++;
		if (is_blank(line, len))
			continue;
		const char *sp = memchr(line, ' ', len);
		if (!sp) {
			LOG_ERR("t-digest centroids: line %zu is not 'MEAN WEIGHT'", lineno);
			rc = -EINVAL;
			break;
		}
		if (n == cap) {
			struct td_centroid *nv =
			    realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
		}
		rc = line_number("t-digest centroid mean", lineno, line, (size_t)(sp - line),
				 &v[n].mean);
		if (!rc)
			rc = line_number("t-digest centroid weight", lineno, sp + 1,
					 len - (size_t)(sp - line) - 1, &v[n].weight);
		n++;
	}
	if (!rc && c)
		rc = tdigest_set_centroids(c->fs->ks, &c->k, v, n);
	free(v);
	return rc;
}

/* The state file: every name once; the counters must agree with the
 * stored buffer and centroids (written before it, in name order); the
 * compression may change only while the digest holds nothing. */
static int store_state(struct fs_ctx *c, const char *d, size_t dn)
{
	static const char *const names[] = {"compression",  "capacity",	    "unmerged_nodes",
					    "merged_nodes", "total_weight", "merged_weight",
					    "min",	    "max",	    "observations",
					    "merge_times"};
	enum { NNAMES = sizeof(names) / sizeof(names[0]) };
	double num[NNAMES];
	uint64_t u[NNAMES];
	bool seen[NNAMES] = {false};
	size_t off = 0, len, lineno = 0;
	const char *line;
	struct tdigest_info now;
	int rc = 0;

	while (!rc && next_line(d, dn, &off, &line, &len)) {
		lineno++;
		if (is_blank(line, len))
			continue;
		const char *sp = memchr(line, ' ', len);
		size_t nn = sp ? (size_t)(sp - line) : len, i;
		for (i = 0; i < NNAMES; i++)
			if (is_name(line, nn, names[i]))
				break;
		if (!sp || i == NNAMES || seen[i]) {
			LOG_ERR("t-digest state: line %zu ('%.*s') is not one of the names, once, "
				"followed by a space and a value",
				lineno, (int)(len > 60 ? 60 : len), line);
			rc = -EINVAL;
			break;
		}
		seen[i] = true;
		const char *val = sp + 1;
		size_t vn = len - nn - 1;
		if (i == 6 || i == 7) {
			rc = line_number("t-digest state", lineno, val, vn, &num[i]);
		} else if (parse_u64(val, vn, &u[i])) {
			LOG_ERR("t-digest state: line %zu: %s needs a whole number", lineno,
				names[i]);
			rc = -EINVAL;
		}
	}
	if (!c)
		return rc; /* a syntax check of complete lines */
	for (size_t i = 0; i < NNAMES && !rc; i++) {
		if (!seen[i]) {
			LOG_ERR("t-digest state: %s is missing", names[i]);
			rc = -EINVAL;
		}
	}
	if (!rc)
		rc = tdigest_info(c->fs->ks, &c->k, &now);
	if (rc)
		return rc;
	if (u[0] > UINT32_MAX || u[1] != td_capacity((uint32_t)u[0]) ||
	    u[2] != now.unmerged_nodes || u[3] != now.merged_nodes || u[4] != now.total_weight ||
	    u[5] != now.merged_weight) {
		LOG_ERR("t-digest state: compression/capacity or the node counts and weights do "
			"not match the key (capacity = min(6 x compression + 10, 1024); write "
			"buffer and centroids first)");
		return -EINVAL;
	}
	rc = tdigest_set_stats(c->fs->ks, &c->k, (uint32_t)u[0], num[6], num[7], u[8], u[9]);
	return rc == -ENOTEMPTY ? -EINVAL : rc;
}

/* Store part p; with c NULL only check the syntax. */
static int part_store(struct fs_ctx *c, enum part p, const char *d, size_t dn)
{
	switch (p) {
	case PART_BUFFER:
		return store_buffer(c, d, dn);
	case PART_CENTROIDS:
		return store_centroids(c, d, dn);
	case PART_STATE:
		return store_state(c, d, dn);
	default:
		return -EINVAL;
	}
}

/* ---- views ------------------------------------------------------------------ */

enum qkind { Q_QUANTILE, Q_CDF, Q_RANK, Q_REVRANK, Q_BYRANK, Q_BYREVRANK, Q_TRIMMED };

/* The text of a view (name is one, td_is_view). -EINVAL for a bad spec. */
static int view_make(struct fs_ctx *c, const char *name, size_t n, struct buf *o)
{
	struct td_digest d;
	struct tdigest_info in;
	int rc = tdigest_digest(c->fs->ks, &c->k, &d, &in);
	buf_reset(o);
	if (rc)
		goto out;
	if (is_name(name, n, ".min") || is_name(name, n, ".max")) {
		double v = d.n == 0 ? NAN : (name[2] == 'i' ? d.min : d.max);
		rc = add_double(o, v);
		if (!rc)
			rc = buf_add(o, "\n", 1);
		goto out;
	}
	if (is_name(name, n, ".info")) {
		rc = buf_printf(o,
				"compression %" PRIu32 "\ncapacity %" PRIu32
				"\nmerged_nodes %" PRIu64 "\nunmerged_nodes %" PRIu64
				"\nmerged_weight %" PRIu64 "\nunmerged_weight %" PRIu64
				"\nobservations %" PRIu64 "\ntotal_compressions %" PRIu64 "\n",
				in.compression, in.capacity, in.merged_nodes, in.unmerged_nodes,
				in.merged_weight, in.unmerged_nodes, in.observations,
				in.merge_times);
		goto out;
	}
	enum qkind k = Q_QUANTILE;
	size_t pre = 0;
	for (size_t i = 0; i < sizeof(view_prefixes) / sizeof(view_prefixes[0]); i++) {
		if (has_prefix(name, n, view_prefixes[i])) {
			k = (enum qkind)i;
			pre = strlen(view_prefixes[i]);
		}
	}
	const char *s = name + pre, *end = name + n;
	if (k == Q_TRIMMED) {
		const char *dots = memmem(s, (size_t)(end - s), "..", 2);
		double lo, hi;
		if (!dots || parse_double(s, (size_t)(dots - s), &lo) ||
		    parse_double(dots + 2, (size_t)(end - dots - 2), &hi) || !(lo >= 0) ||
		    !(hi <= 1) || !(lo < hi)) {
			LOG_ERR("'%.*s': write .trimmed-mean:LO..HI with 0 <= LO < HI <= 1", (int)n,
				name);
			rc = -EINVAL;
			goto out;
		}
		rc = add_double(o, td_trimmed_mean(&d, lo, hi));
		if (!rc)
			rc = buf_add(o, "\n", 1);
		goto out;
	}
	while (!rc) {
		const char *comma = memchr(s, ',', (size_t)(end - s));
		const char *e = comma ? comma : end;
		double x;
		if (parse_double(s, (size_t)(e - s), &x) ||
		    (k == Q_QUANTILE && !(x >= 0 && x <= 1)) ||
		    ((k == Q_BYRANK || k == Q_BYREVRANK) && !(x >= 0))) {
			LOG_ERR("'%.*s': '%.*s' is not a %s", (int)n, name, (int)(e - s), s,
				k == Q_QUANTILE			    ? "fraction from 0 to 1"
				: k == Q_BYRANK || k == Q_BYREVRANK ? "rank (a number from 0)"
								    : "number");
			rc = -EINVAL;
			break;
		}
		switch (k) {
		case Q_QUANTILE:
			rc = add_double(o, td_quantile(&d, x));
			break;
		case Q_CDF:
			rc = add_double(o, td_cdf(&d, x));
			break;
		case Q_RANK:
			rc = buf_printf(o, "%" PRId64, td_rank(&d, x));
			break;
		case Q_REVRANK:
			rc = buf_printf(o, "%" PRId64, td_revrank(&d, x));
			break;
		case Q_BYRANK:
			rc = add_double(o, td_byrank(&d, x));
			break;
		default:
			rc = add_double(o, td_byrevrank(&d, x));
		}
		if (!rc)
			rc = buf_add(o, "\n", 1);
		if (!comma)
			break;
		s = comma + 1;
	}
out:
	td_release(&d);
	return rc;
}

/* ---- the shape ---------------------------------------------------------------- */

/* NEEDSWORK: kvfs keeps no times of entries yet (issue 5). So that rsync's
 * size-and-mtime check (whole seconds) sees every change of a part, its
 * mtime is the key's creation second minus a hash of the contents (up to
 * 2^20 s, about 12 days: never in the future), given as a Kvrocks version
 * (fs_stat_fill reads its time). */
static uint64_t part_version(struct fs_ctx *c, const struct buf *content)
{
	struct ks_info info;
	if (ks_lookup(c->fs->ks, &c->k, &info) || !info.version)
		return 0;
	uint64_t s = (info.version >> 11) / 1000000;
	uint64_t back = hash_bytes(content->data, content->len) % (1u << 20);
	return s > back ? ((s - back) * 1000000) << 11 : 0;
}

static int td_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	struct buf o = BUF_INIT;
	bool listed = true;
	int rc;
	if (td_is_input(name, n)) {
		struct tdigest_info in;
		rc = tdigest_info(c->fs->ks, &c->k, &in); /* the key is a t-digest */
		return rc ? (rc == -KV_EWRONGTYPE ? -ENOENT : rc)
			  : fs_entry_set(e, name, n, S_IFREG | 0644, 0);
	}
	enum part p = part_of(name, n);
	if (td_is_view(name, n))
		rc = view_make(c, name, n, &o);
	else if (p != PART_NONE)
		rc = part_render(c, p, &o, &listed);
	else
		rc = -ENOENT;
	if (rc == -KV_EWRONGTYPE || (!rc && !listed))
		rc = -ENOENT;
	if (!rc)
		rc = fs_entry_set(e, name, n, p == PART_NONE ? S_IFREG | 0444 : S_IFREG | 0644,
				  o.len);
	if (!rc && p != PART_NONE)
		e->version = part_version(c, &o);
	e->view = p == PART_NONE;
	buf_release(&o);
	return rc;
}

/* The key is copied: the path it was borrowed from goes before the listing. */
struct tdit {
	struct fs_ctx c;
	struct buf ns, key;
	int next; /* part to look at next */
	const char *name;
};

static int td_open_iter(struct fs_ctx *c, const void *after, size_t alen, bool by_name, void **out)
{
	(void)by_name; /* the parts list in name order */
	struct tdit *it = calloc(1, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->c = *c;
	if (buf_set(&it->ns, c->k.ns, c->k.nslen) || buf_set(&it->key, c->k.key, c->k.klen)) {
		buf_release(&it->ns);
		free(it);
		return -ENOMEM;
	}
	it->c.k.ns = it->ns.data;
	it->c.k.key = it->key.data;
	it->next = PART_BUFFER;
	if (after)
		while (it->next <= PART_STATE) {
			static const char *const nm[] = {"", "buffer", "centroids", "state"};
			int cmp = bytes_cmp(nm[it->next], strlen(nm[it->next]), after, alen);
			if (cmp > 0)
				break;
			it->next++;
		}
	*out = it;
	return 0;
}

static int td_next(void *arg, struct fs_child *ch)
{
	static const char *const nm[] = {"", "buffer", "centroids", "state"};
	struct tdit *it = arg;
	struct buf o = BUF_INIT;
	int rc = 0;
	while (it->next <= PART_STATE) {
		bool listed = false;
		enum part p = (enum part)it->next++;
		rc = part_render(&it->c, p, &o, &listed);
		if (rc == -ENOENT || rc == -KV_EWRONGTYPE) {
			rc = 0;
			break;
		}
		if (rc)
			break;
		if (listed) {
			ch->name = nm[p];
			ch->n = strlen(nm[p]);
			ch->mode = S_IFREG | 0644;
			ch->size = o.len;
			ch->version = part_version(&it->c, &o);
			rc = 1;
			break;
		}
	}
	buf_release(&o);
	return rc;
}

static void td_free_iter(void *arg)
{
	struct tdit *it = arg;
	buf_release(&it->ns);
	buf_release(&it->key);
	free(it);
}

static int td_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	bool listed;
	if (td_is_input(name, n)) {
		buf_reset(out);
		return 0;
	}
	if (td_is_view(name, n))
		return view_make(c, name, n, out);
	enum part p = part_of(name, n);
	return p == PART_NONE ? -ENOENT : part_render(c, p, out, &listed);
}

static int td_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		     bool pending)
{
	(void)pending;
	return part_store(c, part_of(name, n), d, dn);
}

/* Every write: the complete lines must read (the rest is checked when the
 * file is stored), so `echo x > td/buffer` fails at the write. */
static int td_check(const char *name, size_t n, const char *d, size_t dn)
{
	enum part p = part_of(name, n);
	const char *nl = dn ? memrchr(d, '\n', dn) : NULL;
	if (p == PART_NONE || !nl)
		return 0;
	return part_store(NULL, p, d, (size_t)(nl - d) + 1);
}

static bool is_scratch(const char *name, size_t n)
{
	return n > 0 && name[0] == '.';
}

static int td_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)e;
	enum part p = part_of(name, n);
	if (p != PART_NONE) {
		struct fs_entry cur;
		fs_entry_init(&cur);
		int rc = td_lookup(c, name, n, &cur);
		fs_entry_release(&cur);
		return rc == 0 ? -EEXIST : (rc == -ENOENT ? FS_CREATE_PENDING : rc);
	}
	if (is_scratch(name, n))
		return FS_CREATE_SCRATCH;
	LOG_ERR("'%.*s': a t-digest holds only buffer, centroids and state", (int)n, name);
	return -EINVAL;
}

static int td_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	struct tdigest_info in;
	switch (part_of(name, n)) {
	case PART_BUFFER:
		return tdigest_set_buffer(c->fs->ks, &c->k, NULL, 0);
	case PART_CENTROIDS:
		return tdigest_set_centroids(c->fs->ks, &c->k, NULL, 0);
	case PART_STATE: {
		int rc = tdigest_info(c->fs->ks, &c->k, &in);
		return rc ? rc
			  : tdigest_set_stats(c->fs->ks, &c->k, in.compression, DBL_MAX, -DBL_MAX,
					      0, 0);
	}
	default:
		return -ENOENT;
	}
}

static int td_adopt(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		    struct buf *canon)
{
	enum part p = part_of(to, tn);
	if (p == PART_NONE && is_scratch(to, tn))
		return FS_ADOPT_LOCAL;
	if (p == PART_NONE) {
		LOG_ERR("rename onto '%.*s': a t-digest holds only buffer, centroids and state",
			(int)tn, to);
		return -EINVAL;
	}
	int rc = part_store(c, p, d, dn);
	return rc ? rc : buf_set(canon, to, tn);
}

static int feed_add(struct fs_ctx *c, const char *d, size_t dn)
{
	size_t off = 0, len, lineno = 0, n = 0, cap = 0;
	const char *line;
	double *v = NULL;
	int rc = 0;
	while (!rc && next_line(d, dn, &off, &line, &len)) {
		lineno++;
		if (is_blank(line, len))
			continue;
		if (n == cap) {
			double *nv = realloc(v, (cap = cap ? cap * 2 : 256) * sizeof(*v));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
		}
		rc = line_number("t-digest .add", lineno, line, len, &v[n++]);
	}
	if (!rc && n)
		rc = tdigest_add(c->fs->ks, &c->k, v, n);
	free(v);
	return rc;
}

static int feed_merge(struct fs_ctx *c, const char *d, size_t dn)
{
	size_t off = 0, len, n = 0, cap = 0;
	const char *line;
	struct ks_key *src = NULL;
	int rc = 0;
	while (!rc && next_line(d, dn, &off, &line, &len)) {
		if (len == 0)
			continue;
		if (n == cap) {
			struct ks_key *ns = realloc(src, (cap = cap ? cap * 2 : 8) * sizeof(*src));
			if (!ns) {
				rc = -ENOMEM;
				break;
			}
			src = ns;
		}
		src[n++] = (struct ks_key){c->k.ns, c->k.nslen, line, len};
	}
	if (!rc && n)
		rc = tdigest_merge(c->fs->ks, &c->k, src, n, 0, false);
	free(src);
	return rc;
}

static int td_feed(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn)
{
	if (is_name(name, n, ".add"))
		return feed_add(c, d, dn);
	if (is_name(name, n, ".merge"))
		return feed_merge(c, d, dn);
	return tdigest_reset(c->fs->ks, &c->k);
}

static bool td_is_blank(struct fs_ctx *c)
{
	struct tdigest_info in;
	return tdigest_info(c->fs->ks, &c->k, &in) == 0 && in.unmerged_nodes == 0 &&
	       in.merged_nodes == 0 && stats_default(&in);
}

/* ---- parameters ------------------------------------------------------------ */

static const char td_xattrs[] = "user.kvfs.tdigest.compression"; /* with its NUL */

static int td_make_empty(struct fs_ctx *c)
{
	return tdigest_create(c->fs->ks, &c->k, 0);
}

static int td_xattr_get(struct fs_ctx *c, const char *param, struct buf *out)
{
	struct tdigest_info in;
	if (strcmp(param, "compression") != 0)
		return -ENODATA;
	int rc = tdigest_info(c->fs->ks, &c->k, &in);
	return rc ? rc : buf_printf(out, "%" PRIu32, in.compression);
}

/* On a remembered empty directory the digest is made with it. */
static int td_xattr_set(struct fs_ctx *c, const char *param, const char *v, size_t n)
{
	uint64_t comp;
	struct tdigest_info in;
	struct ks_info ki;
	if (strcmp(param, "compression") != 0)
		return -ENOTSUP;
	while (n > 0 && (v[n - 1] == '\n' || v[n - 1] == ' '))
		n--;
	if (parse_u64(v, n, &comp) || comp < 1 || comp > TD_COMPRESSION_MAX) {
		LOG_ERR("user.kvfs.tdigest.compression: '%.*s' is not a compression from 1 to %d",
			(int)n, v, TD_COMPRESSION_MAX);
		return -EINVAL;
	}
	int rc = ks_lookup(c->fs->ks, &c->k, &ki);
	if (rc == -ENOENT || (!rc && ki.empty))
		return tdigest_create(c->fs->ks, &c->k, (uint32_t)comp);
	if (!rc)
		rc = tdigest_info(c->fs->ks, &c->k, &in);
	if (!rc && in.compression != comp)
		rc = tdigest_set_compression(c->fs->ks, &c->k, (uint32_t)comp);
	return rc;
}

const struct fs_shape fs_tdigest_shape = {
    .type = KV_TYPE_TDIGEST,
    .uncached = true,
    .recomputed = true,
    .lookup = td_lookup,
    .iter_open = td_open_iter,
    .iter_next = td_next,
    .iter_free = td_free_iter,
    .is_view = td_is_view,
    .is_input = td_is_input,
    .feed = td_feed,
    .load = td_load,
    .check = td_check,
    .commit = td_commit,
    .create = td_create,
    .unlink = td_unlink,
    .adopt = td_adopt,
    .is_blank = td_is_blank,
    .make_empty = td_make_empty,
    .xattrs = td_xattrs,
    .xattrs_len = sizeof(td_xattrs),
    .xattr_get = td_xattr_get,
    .xattr_set = td_xattr_set,
};
