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
#include "fs/fs_int.h"
#include "fs/fs_xval.h"

#include <errno.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "types/t_tdigest.h"

/* ---- the state files ----------------------------------------------------- */

enum part { PART_BUFFER, PART_CENTROIDS, PART_STATE };

static bool stats_default(const struct tdigest_info *in)
{
	return in->min == DBL_MAX && in->max == -DBL_MAX && in->observations == 0 &&
	       in->merge_times == 0;
}

/* Render part p; *listed = whether it holds something. */
static int part_render(struct fs_ctx *c, int p, struct buf *o, bool *listed)
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
			rc = fs_sketch_add_double(o, b[i]);
			if (!rc)
				rc = buf_add(o, "\n", 1);
		}
	} else if (!rc && p == PART_CENTROIDS) {
		*listed = d.n > 0;
		for (size_t i = 0; i < d.n && !rc; i++) {
			rc = fs_sketch_add_double(o, d.c[i].mean);
			if (!rc)
				rc = buf_add(o, " ", 1);
			if (!rc)
				rc = fs_sketch_add_double(o, d.c[i].weight);
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
			rc = fs_sketch_add_double(o, in.min);
		if (!rc)
			rc = buf_printf(o, "\nmax ");
		if (!rc)
			rc = fs_sketch_add_double(o, in.max);
		if (!rc)
			rc = buf_printf(o, "\nobservations %" PRIu64 "\nmerge_times %" PRIu64 "\n",
					in.observations, in.merge_times);
	}
	td_release(&d);
	free(b);
	return rc;
}

static int td_file_load(struct fs_ctx *c, int idx, struct buf *out)
{
	bool listed = false;
	int rc = part_render(c, idx, out, &listed);
	return rc ? rc : listed ? 0 : FS_SKETCH_ABSENT;
}

static int store_buffer(struct fs_ctx *c, const char *d, size_t dn)
{
	double *v;
	size_t n;
	int rc = fs_sketch_numbers(d, dn, "t-digest buffer", &v, &n);
	if (!rc && c)
		rc = tdigest_set_buffer(c->fs->ks, &c->k, v, n);
	free(v);
	return rc;
}

struct centroids {
	struct td_centroid *v;
	size_t n, cap;
};

static int centroid_pair(void *arg, const char *m, size_t mn, const char *w, size_t wn)
{
	struct centroids *cs = arg;
	if (cs->n == cs->cap) {
		cs->cap = cs->cap ? cs->cap * 2 : 64;
		struct td_centroid *nv = realloc(cs->v, cs->cap * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		cs->v = nv;
	}
	struct td_centroid *ce = &cs->v[cs->n++];
	int rc = fs_xval_double(m, mn, "t-digest centroid mean", &ce->mean);
	return rc ? rc : fs_xval_double(w, wn, "t-digest centroid weight", &ce->weight);
}

static int store_centroids(struct fs_ctx *c, const char *d, size_t dn)
{
	struct centroids cs = {NULL, 0, 0};
	int rc = fs_sketch_pairs(d, dn, centroid_pair, &cs);
	if (!rc && c)
		rc = tdigest_set_centroids(c->fs->ks, &c->k, cs.v, cs.n);
	free(cs.v);
	return rc;
}

static const char *const state_names[] = {
    "compression", "capacity", "unmerged_nodes", "merged_nodes", "total_weight", "merged_weight",
    "min",	   "max",      "observations",	 "merge_times"};
enum { NSTATE = sizeof(state_names) / sizeof(state_names[0]), S_MIN = 6, S_MAX = 7 };

struct state_parse {
	double num[NSTATE];
	uint64_t u[NSTATE];
	bool seen[NSTATE];
};

static int state_pair(void *arg, const char *nm, size_t nn, const char *v, size_t vn)
{
	struct state_parse *p = arg;
	size_t i = 0;
	while (i < NSTATE && !(strlen(state_names[i]) == nn && !memcmp(state_names[i], nm, nn)))
		i++;
	if (i == NSTATE || p->seen[i]) {
		LOG_ERR("t-digest state: '%.*s' is not one of the names, once, followed by a "
			"value",
			(int)(nn > 60 ? 60 : nn), nm);
		return -EINVAL;
	}
	p->seen[i] = true;
	if (i == S_MIN || i == S_MAX)
		return fs_xval_double(v, vn, "t-digest state", &p->num[i]);
	return fs_xval_u64(v, vn, 0, UINT64_MAX, state_names[i], &p->u[i]);
}

/* The state file: every name once; the counters must agree with the
 * stored buffer and centroids (written before it, in name order); the
 * compression may change only while the digest holds nothing. */
static int store_state(struct fs_ctx *c, const char *d, size_t dn)
{
	struct state_parse p;
	struct tdigest_info now;
	memset(&p, 0, sizeof(p));
	int rc = fs_sketch_pairs(d, dn, state_pair, &p);
	if (!c)
		return rc; /* a syntax check of complete lines */
	for (size_t i = 0; i < NSTATE && !rc; i++) {
		if (!p.seen[i]) {
			LOG_ERR("t-digest state: %s is missing", state_names[i]);
			rc = -EINVAL;
		}
	}
	if (!rc)
		rc = tdigest_info(c->fs->ks, &c->k, &now);
	if (rc)
		return rc;
	const uint64_t *u = p.u;
	if (u[0] > UINT32_MAX || u[1] != td_capacity((uint32_t)u[0]) ||
	    u[2] != now.unmerged_nodes || u[3] != now.merged_nodes || u[4] != now.total_weight ||
	    u[5] != now.merged_weight) {
		LOG_ERR("t-digest state: compression/capacity or the node counts and weights do "
			"not match the key (capacity = min(6 x compression + 10, 1024); write "
			"buffer and centroids first)");
		return -EINVAL;
	}
	/* The compression and the stats in one batch. */
	rc = tdigest_set_stats(c->fs->ks, &c->k, (uint32_t)u[0], p.num[S_MIN], p.num[S_MAX], u[8],
			       u[9]);
	return rc == -ENOTEMPTY ? -EINVAL : rc;
}

static int clear_buffer(struct fs_ctx *c)
{
	return tdigest_set_buffer(c->fs->ks, &c->k, NULL, 0);
}

static int clear_centroids(struct fs_ctx *c)
{
	return tdigest_set_centroids(c->fs->ks, &c->k, NULL, 0);
}

/* min, max, observations and merge_times back to the empty values. */
static int clear_state(struct fs_ctx *c)
{
	struct tdigest_info in;
	int rc = tdigest_info(c->fs->ks, &c->k, &in);
	return rc ? rc
		  : tdigest_set_stats(c->fs->ks, &c->k, in.compression, DBL_MAX, -DBL_MAX, 0, 0);
}

/* ---- views ------------------------------------------------------------------ */

enum qkind { Q_QUANTILE, Q_CDF, Q_RANK, Q_REVRANK, Q_BYRANK, Q_BYREVRANK, Q_TRIMMED };
static const char *const qnames[] = {
    ".quantile:", ".cdf:", ".rank:", ".revrank:", ".byrank:", ".byrevrank:", ".trimmed-mean:"};

static int one_double(struct buf *o, double v)
{
	int rc = fs_sketch_add_double(o, v);
	return rc ? rc : buf_add(o, "\n", 1);
}

/* LO..HI */
static int trimmed(const struct td_digest *d, const char *s, size_t n, struct buf *o)
{
	const char *end = s + n, *dots = memmem(s, n, "..", 2);
	double lo, hi;
	if (!dots || parse_double(s, (size_t)(dots - s), &lo) ||
	    parse_double(dots + 2, (size_t)(end - dots - 2), &hi) || !(lo >= 0) || !(hi <= 1) ||
	    !(lo < hi)) {
		LOG_ERR("'.trimmed-mean:%.*s': write .trimmed-mean:LO..HI with 0 <= LO < HI <= 1",
			(int)n, s);
		return -EINVAL;
	}
	return one_double(o, td_trimmed_mean(d, lo, hi));
}

/* The answers for a comma-separated list, one a line (LO..HI for a
 * trimmed mean). */
static int query(struct fs_ctx *c, enum qkind k, const char *arg, size_t an, struct buf *o)
{
	struct td_digest d;
	struct tdigest_info in;
	const char *s = arg, *end = arg + an;
	int rc = tdigest_digest(c->fs->ks, &c->k, &d, &in);
	if (!rc && k == Q_TRIMMED)
		rc = trimmed(&d, arg, an, o);
	else
		while (!rc) {
			const char *comma = memchr(s, ',', (size_t)(end - s));
			const char *e = comma ? comma : end;
			double x;
			if (parse_double(s, (size_t)(e - s), &x) ||
			    (k == Q_QUANTILE && !(x >= 0 && x <= 1)) ||
			    ((k == Q_BYRANK || k == Q_BYREVRANK) && !(x >= 0))) {
				LOG_ERR("'%s%.*s': '%.*s' is not a %s", qnames[k], (int)an, arg,
					(int)(e - s), s,
					k == Q_QUANTILE ? "fraction from 0 to 1"
					: k == Q_BYRANK || k == Q_BYREVRANK
					    ? "rank (a number from 0)"
					    : "number");
				rc = -EINVAL;
				break;
			}
			switch (k) {
			case Q_QUANTILE:
				rc = one_double(o, td_quantile(&d, x));
				break;
			case Q_CDF:
				rc = one_double(o, td_cdf(&d, x));
				break;
			case Q_RANK:
				rc = buf_printf(o, "%" PRId64 "\n", td_rank(&d, x));
				break;
			case Q_REVRANK:
				rc = buf_printf(o, "%" PRId64 "\n", td_revrank(&d, x));
				break;
			case Q_BYRANK:
				rc = one_double(o, td_byrank(&d, x));
				break;
			default:
				rc = one_double(o, td_byrevrank(&d, x));
			}
			if (!comma)
				break;
			s = comma + 1;
		}
	td_release(&d);
	return rc;
}

#define QUERY_VIEW(fn, kind)                                                                       \
	static int fn(struct fs_ctx *c, const char *arg, size_t an, struct buf *o)                 \
	{                                                                                          \
		return query(c, kind, arg, an, o);                                                 \
	}
QUERY_VIEW(quantile_read, Q_QUANTILE)
QUERY_VIEW(cdf_read, Q_CDF)
QUERY_VIEW(rank_read, Q_RANK)
QUERY_VIEW(revrank_read, Q_REVRANK)
QUERY_VIEW(byrank_read, Q_BYRANK)
QUERY_VIEW(byrevrank_read, Q_BYREVRANK)
QUERY_VIEW(trimmed_read, Q_TRIMMED)

/* .min, .max: nan while the digest is empty. */
static int minmax(struct fs_ctx *c, bool max, struct buf *o)
{
	struct td_digest d;
	int rc = tdigest_digest(c->fs->ks, &c->k, &d, NULL);
	if (!rc)
		rc = one_double(o, d.n == 0 ? NAN : max ? d.max : d.min);
	td_release(&d);
	return rc;
}

static int min_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *o)
{
	(void)arg;
	(void)an;
	return minmax(c, false, o);
}

static int max_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *o)
{
	(void)arg;
	(void)an;
	return minmax(c, true, o);
}

static int info_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *o)
{
	(void)arg;
	(void)an;
	struct tdigest_info in;
	int rc = tdigest_info(c->fs->ks, &c->k, &in);
	if (rc)
		return rc;
	return buf_printf(o,
			  "compression %" PRIu32 "\ncapacity %" PRIu32 "\nmerged_nodes %" PRIu64
			  "\nunmerged_nodes %" PRIu64 "\nmerged_weight %" PRIu64
			  "\nunmerged_weight %" PRIu64 "\nobservations %" PRIu64
			  "\ntotal_compressions %" PRIu64 "\n",
			  in.compression, in.capacity, in.merged_nodes, in.unmerged_nodes,
			  in.merged_weight, in.unmerged_nodes, in.observations, in.merge_times);
}

/* ---- inputs ------------------------------------------------------------------ */

static int add_numbers(struct fs_ctx *c, const double *v, size_t n)
{
	return tdigest_add(c->fs->ks, &c->k, v, n);
}

static int reset_feed(struct fs_ctx *c, const struct iovec *items, size_t n)
{
	(void)items;
	(void)n;
	return tdigest_reset(c->fs->ks, &c->k);
}

static int merge_keys(struct fs_ctx *c, const struct ks_key *srcs, size_t n)
{
	return tdigest_merge(c->fs->ks, &c->k, srcs, n, 0, false);
}

/* ---- the shape ---------------------------------------------------------------- */

static const struct fs_sketch_view td_views[] = {{".quantile:", quantile_read},
						 {".cdf:", cdf_read},
						 {".rank:", rank_read},
						 {".revrank:", revrank_read},
						 {".byrank:", byrank_read},
						 {".byrevrank:", byrevrank_read},
						 {".trimmed-mean:", trimmed_read},
						 {".min", min_read},
						 {".max", max_read},
						 {".info", info_read}};
static const struct fs_sketch_input td_inputs[] = {{.name = ".add", .feed_numbers = add_numbers},
						   {.name = ".reset", .feed = reset_feed},
						   {.name = ".merge", .feed_keys = merge_keys}};

/* Each listed only while it holds something (state: while the digest is
 * not blank); rm empties that part. */
static const struct fs_sketch_part td_parts[] = {{"buffer", store_buffer, clear_buffer},
						 {"centroids", store_centroids, clear_centroids},
						 {"state", store_state, clear_state}};

static const struct fs_sketch td_sketch = {
    .what = "t-digest",
    FS_SKETCH_TABLE(views, td_views),
    FS_SKETCH_TABLE(inputs, td_inputs),
    FS_SKETCH_TABLE(parts, td_parts),
    .file_load = td_file_load,
};

FS_SKETCH_SHAPE_FUNCS(td_sketch)

static int td_is_blank(struct fs_ctx *c)
{
	struct tdigest_info in;
	int rc = tdigest_info(c->fs->ks, &c->k, &in);
	return rc ? rc : in.unmerged_nodes == 0 && in.merged_nodes == 0 && stats_default(&in);
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
	uint32_t comp;
	struct tdigest_info in;
	struct ks_info ki;
	int rc = fs_sketch_param_key(c, KV_TYPE_TDIGEST, param);
	if (!rc)
		rc = fs_xval_tdigest(param, v, n, &comp);
	if (rc)
		return rc;
	rc = ks_lookup(c->fs->ks, &c->k, &ki);
	if (rc == -ENOENT || (!rc && ki.empty))
		return tdigest_create(c->fs->ks, &c->k, comp);
	if (!rc)
		rc = tdigest_info(c->fs->ks, &c->k, &in);
	if (!rc && in.compression != comp)
		rc = tdigest_set_compression(c->fs->ks, &c->k, comp);
	return rc;
}

static const struct fs_help td_help[] = {
    {"buffer", "state: the samples not merged yet, one a line", "cat d/buffer"},
    {"centroids", "state: MEAN WEIGHT lines", "cat d/centroids"},
    {"state", "state: NAME VALUE lines (counts, min, max, ...)", "cat d/state"},
    {".add", "input: TDIGEST.ADD of each number", "seq 100 >> d/.add"},
    {".reset", "input: TDIGEST.RESET on any write", "echo >> d/.reset"},
    {".merge", "input: TDIGEST.MERGE of the keys named one a line", "echo other >> d/.merge"},
    {".quantile:Q[,Q...]", "view: TDIGEST.QUANTILE", "cat d/.quantile:0.5,0.99"},
    {".cdf:X[,X...]", "view: TDIGEST.CDF", "cat d/.cdf:10"},
    {".rank:X[,...]", "view: TDIGEST.RANK (.revrank: REVRANK)", "cat d/.rank:10"},
    {".byrank:R[,...]", "view: TDIGEST.BYRANK (.byrevrank: BYREVRANK)", "cat d/.byrank:0"},
    {".trimmed-mean:LO..HI", "view: TDIGEST.TRIMMED_MEAN", "cat d/.trimmed-mean:0.1..0.9"},
    {".min", "view: TDIGEST.MIN (.max: MAX)", "cat d/.min"},
    {".info", "view: TDIGEST.INFO", "cat d/.info"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_tdigest_shape = {
    .type = KV_TYPE_TDIGEST,
    .uncached = true,
    FS_SKETCH_SHAPE_OPS,
    .is_blank = td_is_blank,
    .make_empty = td_make_empty,
    FS_SHAPE_XATTRS(td_xattrs),
    .xattr_get = td_xattr_get,
    .xattr_set = td_xattr_set,
    .help = td_help,
};
