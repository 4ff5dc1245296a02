/*
 * fs_geo: the geo names of a zset key (Redis's GEO commands; Kvrocks
 * keeps points as a zset whose scores are 52-bit geohashes, alg_geo.h).
 * The zset shape (fs_zset.c) hands them here; mapping.md section 14,
 * "Geo", has the user's version:
 *   .geoadd[:nx|:xx][:ch]      input: LON,LAT,MEMBER lines (GEOADD); each
 *                              write's lines one batch; the open that wrote
 *                              reads GEOADD's reply
 *   .geopos:M1,M2,...          view: LON,LAT a line (empty: no such member)
 *   .geodist:M1,M2[:UNIT]      view: GEODIST, %.4f
 *   .geohash:M1,M2,...         view: the 11-character geohashes
 *   .geosearch:SPEC            view: GEOSEARCH, one match a line
 * Members in names and lines are items (mapping.md section 7): %XX is a
 * byte, so a ':' inside a member is %3A, a ',' %2C. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "fs/fs_xval.h"
#include "types/alg_geo.h"
#include "types/t_zset.h"

#define GEOADD	  ".geoadd"
#define GEOPOS	  ".geopos:"
#define GEODIST	  ".geodist:"
#define GEOHASH	  ".geohash:"
#define GEOSEARCH ".geosearch:"

/* ---- names ----------------------------------------------------------- */

/* The ':'-separated fields of s[0, n) after `skip` bytes: how many, and
 * the want-th one in *f, *fn (when f is not NULL; empty past the last). */
static size_t fields(const char *s, size_t n, size_t skip, size_t want, const char **f, size_t *fn)
{
	size_t count = 0, from = skip;
	if (f) {
		*f = s + n;
		*fn = 0;
	}
	for (size_t i = skip; i <= n; i++) {
		if (i < n && s[i] != ':')
			continue;
		if (f && count == want) {
			*f = s + from;
			*fn = i - from;
		}
		count++;
		from = i + 1;
	}
	return count;
}

static bool word_is(const char *f, size_t fn, const char *w)
{
	return fn == strlen(w) && strncasecmp(f, w, fn) == 0;
}

/* A unit's metres (Redis's m, km, ft, mi, either case), or 0. */
static double unit_conv(const char *f, size_t fn)
{
	static const struct {
		const char *name;
		double m;
	} units[] = {{"m", 1}, {"km", 1000}, {"ft", 0.3048}, {"mi", 1609.34}};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (word_is(f, fn, units[i].name))
			return units[i].m;
	return 0;
}

/* Two numbers "A,B" (blanks around each allowed). */
static int parse_pair(const char *s, size_t n, double *a, double *b)
{
	const char *comma = memchr(s, ',', n);
	if (!comma)
		return -EINVAL;
	int rc = parse_double(s, (size_t)(comma - s), a);
	return rc ? rc : parse_double(comma + 1, n - (size_t)(comma - s) - 1, b);
}

bool fs_geo_is_view(const char *name, size_t n)
{
	return has_prefix(name, n, GEOPOS) || has_prefix(name, n, GEODIST) ||
	       has_prefix(name, n, GEOHASH) || has_prefix(name, n, GEOSEARCH);
}

bool fs_geo_is_input(const char *name, size_t n)
{
	return (n == strlen(GEOADD) && has_prefix(name, n, GEOADD)) ||
	       has_prefix(name, n, GEOADD ":");
}

/* The options of a .geoadd name: ZSET_ADD_NX, _XX, _CH. */
static int geoadd_flags(const char *name, size_t n, unsigned *flags)
{
	size_t nf = fields(name, n, 0, 0, NULL, NULL);
	*flags = 0;
	for (size_t i = 1; i < nf; i++) {
		const char *f;
		size_t fn;
		unsigned bit = 0;
		fields(name, n, 0, i, &f, &fn);
		if (word_is(f, fn, "nx"))
			bit = ZSET_ADD_NX;
		else if (word_is(f, fn, "xx"))
			bit = ZSET_ADD_XX;
		else if (word_is(f, fn, "ch"))
			bit = ZSET_ADD_CH;
		if (!bit || (*flags & bit)) {
			LOG_ERR("'%.*s': not an input: write .geoadd with :nx or :xx and :ch",
				(int)n, name);
			return -EINVAL;
		}
		*flags |= bit;
	}
	if ((*flags & ZSET_ADD_NX) && (*flags & ZSET_ADD_XX)) {
		LOG_ERR("'%.*s': XX and NX options at the same time are not compatible", (int)n,
			name);
		return -EINVAL;
	}
	return 0;
}

/* A GEOSEARCH as a view's name says it. */
struct search {
	struct buf member; /* from=member (has_member) */
	bool has_member, has_lonlat, has_radius, has_box;
	struct geo_shape shape;
	bool withdist, withcoord, withhash, any, asc, desc;
	uint64_t count; /* 0: all */
};

static void search_release(struct search *s)
{
	buf_release(&s->member);
}

static int search_bad(const char *name, size_t n, const char *why)
{
	LOG_ERR("'%.*s': not a search: %s (write .geosearch:member=M or :lonlat=LON,LAT, "
		":radius=R or :box=W,H, a unit m, km, ft or mi, and any of :withdist, "
		":withcoord, :withhash, :count=N, :any, :asc, :desc)",
		(int)n, name, why);
	return -EINVAL;
}

/* Does field f start with "key=" (either case)? The value then. */
static bool field_val(const char *f, size_t fn, const char *key, const char **v, size_t *vn)
{
	size_t kn = strlen(key);
	if (fn <= kn || f[kn] != '=' || strncasecmp(f, key, kn) != 0)
		return false;
	*v = f + kn + 1;
	*vn = fn - kn - 1;
	return true;
}

static int search_parse(const char *name, size_t n, struct search *s)
{
	size_t nf = fields(name, n, 0, 0, NULL, NULL);
	bool has_unit = false;
	memset(s, 0, sizeof(*s));
	buf_init(&s->member);
	for (size_t i = 1; i < nf; i++) {
		const char *f, *v;
		size_t fn, vn;
		double conv;
		bool dup = false;
		fields(name, n, 0, i, &f, &fn);
		if (field_val(f, fn, "member", &v, &vn)) {
			dup = s->has_member;
			s->has_member = true;
			if (fs_items_decode(v, vn, &s->member))
				return -ENOMEM;
		} else if (field_val(f, fn, "lonlat", &v, &vn)) {
			dup = s->has_lonlat;
			s->has_lonlat = true;
			if (parse_pair(v, vn, &s->shape.lon, &s->shape.lat))
				return search_bad(name, n, "lonlat= takes LON,LAT");
			if (!geo_valid(s->shape.lon, s->shape.lat)) {
				LOG_ERR("'%.*s': invalid longitude,latitude pair %f,%f", (int)n,
					name, s->shape.lon, s->shape.lat);
				return -EINVAL;
			}
		} else if (field_val(f, fn, "radius", &v, &vn)) {
			dup = s->has_radius;
			s->has_radius = true;
			if (parse_double(v, vn, &s->shape.radius))
				return search_bad(name, n, "radius= takes a number");
			if (s->shape.radius < 0) {
				LOG_ERR("'%.*s': radius cannot be negative", (int)n, name);
				return -EINVAL;
			}
		} else if (field_val(f, fn, "box", &v, &vn)) {
			dup = s->has_box;
			s->has_box = s->shape.box = true;
			if (parse_pair(v, vn, &s->shape.width, &s->shape.height))
				return search_bad(name, n, "box= takes WIDTH,HEIGHT");
			if (s->shape.width < 0 || s->shape.height < 0) {
				LOG_ERR("'%.*s': height or width cannot be negative", (int)n, name);
				return -EINVAL;
			}
		} else if (field_val(f, fn, "count", &v, &vn)) {
			dup = s->count != 0;
			if (parse_u64(v, vn, &s->count) || s->count == 0 ||
			    s->count > (uint64_t)INT64_MAX) {
				LOG_ERR("'%.*s': COUNT must be > 0", (int)n, name);
				return -EINVAL;
			}
		} else if ((conv = unit_conv(f, fn)) != 0) {
			dup = has_unit;
			has_unit = true;
			s->shape.conv = conv;
		} else if (word_is(f, fn, "withdist")) {
			dup = s->withdist;
			s->withdist = true;
		} else if (word_is(f, fn, "withcoord")) {
			dup = s->withcoord;
			s->withcoord = true;
		} else if (word_is(f, fn, "withhash")) {
			dup = s->withhash;
			s->withhash = true;
		} else if (word_is(f, fn, "any")) {
			dup = s->any;
			s->any = true;
		} else if (word_is(f, fn, "asc")) {
			dup = s->asc;
			s->asc = true;
		} else if (word_is(f, fn, "desc")) {
			dup = s->desc;
			s->desc = true;
		} else {
			return search_bad(name, n, "an unknown option");
		}
		if (dup)
			return search_bad(name, n, "an option given twice");
	}
	if (s->has_member == s->has_lonlat)
		return search_bad(name, n, "exactly one of member= and lonlat=");
	if (s->has_radius == s->has_box)
		return search_bad(name, n, "exactly one of radius= and box=");
	if (!has_unit)
		return search_bad(name, n, "no unit");
	if (s->asc && s->desc)
		return search_bad(name, n, "both asc and desc");
	if (s->any && !s->count) {
		LOG_ERR("'%.*s': the ANY argument requires COUNT argument", (int)n, name);
		return -EINVAL;
	}
	return 0;
}

/* The member list of .geopos:, .geohash: and the two of .geodist:. */
static int member_list(const char *name, size_t n, size_t skip, size_t nfields,
		       struct fs_items *items, double *conv)
{
	const char *f;
	size_t fn, nf = fields(name, n, skip, 0, NULL, NULL);
	*conv = 1;
	items->v = NULL;
	items->n = 0;
	buf_init(&items->store);
	if (nf > nfields) {
		LOG_ERR("'%.*s': a ':' inside a member is written %%3A", (int)n, name);
		return -EINVAL;
	}
	if (nf == 2) {
		fields(name, n, skip, 1, &f, &fn);
		*conv = unit_conv(f, fn);
		if (*conv == 0) {
			LOG_ERR("'%.*s': unsupported unit provided. please use M, KM, FT, MI",
				(int)n, name);
			return -EINVAL;
		}
	}
	fields(name, n, skip, 0, &f, &fn);
	return fs_items_split(f, fn, "member", items);
}

/* The length of a members view's prefix (.geopos:, .geodist:, .geohash:). */
static size_t members_skip(const char *name, size_t n)
{
	return has_prefix(name, n, GEODIST)   ? strlen(GEODIST)
	       : has_prefix(name, n, GEOHASH) ? strlen(GEOHASH)
					      : strlen(GEOPOS);
}

/* Check a view's name: 0 or -EINVAL (logged). */
int fs_geo_view_check(const char *name, size_t n)
{
	struct fs_items items;
	struct search s;
	double conv;
	int rc;
	if (has_prefix(name, n, GEOSEARCH)) {
		rc = search_parse(name, n, &s);
		search_release(&s);
		return rc;
	}
	bool dist = has_prefix(name, n, GEODIST);
	rc = member_list(name, n, members_skip(name, n), dist ? 2 : 1, &items, &conv);
	if (!rc && dist && items.n != 2) {
		LOG_ERR("'%.*s': GEODIST takes two members", (int)n, name);
		rc = -EINVAL;
	}
	fs_items_release(&items);
	return rc;
}

/* ---- views ----------------------------------------------------------- */

/* The position of member m: 0, -ENOENT (no such member, or a score that
 * is no geohash: negative, infinite, 2^64 or more), or an errno. */
static int member_pos(struct fs_ctx *c, const struct ks_key *k, const void *m, size_t mn,
		      uint64_t *bits, double *lon, double *lat)
{
	double score;
	int rc = zset_score(c->fs->ks, k, m, mn, &score);
	if (rc)
		return rc;
	if (!(score >= 0 && score < 18446744073709551616.0))
		return -ENOENT;
	*bits = (uint64_t)score; /* a fraction is cut, as Redis's cast does */
	geo_decode(*bits, lon, lat);
	return 0;
}

static int add_coord(struct buf *out, double lon, double lat)
{
	char a[64], b[64];
	geo_fmt_coord(lon, a);
	geo_fmt_coord(lat, b);
	return buf_printf(out, "%s,%s", a, b);
}

/* GEOPOS, GEOHASH (hash), GEODIST (dist). */
static int members_view(struct fs_ctx *c, const struct ks_key *k, const char *name, size_t n,
			struct buf *out)
{
	struct fs_items items;
	bool dist = has_prefix(name, n, GEODIST), hash = has_prefix(name, n, GEOHASH);
	double conv, lon[2], lat[2];
	int rc = member_list(name, n, members_skip(name, n), dist ? 2 : 1, &items, &conv);
	bool all = true;
	for (size_t i = 0; !rc && i < items.n; i++) {
		uint64_t bits;
		double x, y;
		char h[GEO_HASH_CHARS + 1];
		rc = member_pos(c, k, items.v[i].iov_base, items.v[i].iov_len, &bits, &x, &y);
		if (rc == -ENOENT) {
			all = false;
			rc = dist ? 0 : buf_add(out, "\n", 1);
			continue;
		}
		if (rc)
			break;
		if (dist && i < 2) {
			lon[i] = x;
			lat[i] = y;
		} else if (hash) {
			geo_hash_string(bits, h);
			rc = buf_printf(out, "%s\n", h);
		} else {
			rc = add_coord(out, x, y);
			if (!rc)
				rc = buf_add(out, "\n", 1);
		}
	}
	if (!rc && dist && items.n != 2)
		rc = -EINVAL; /* checked at the lookup */
	if (!rc && dist && all)
		rc = buf_printf(out, "%.4f\n", geo_distance(lon[0], lat[0], lon[1], lat[1]) / conv);
	fs_items_release(&items);
	return rc;
}

struct match {
	size_t moff, mlen; /* the member: at moff of the search's store */
	size_t seq;	   /* the order found */
	uint64_t bits;
	double lon, lat, dist;
};

struct found {
	const struct search *s;
	struct match *v;
	size_t n, cap;
	struct buf store; /* the members, back to back */
};

#define FOUND_ENOUGH 1 /* stop: COUNT ANY has its matches */

static int found_one(void *arg, const char *m, size_t mn, double score)
{
	struct found *f = arg;
	struct match x;
	if (!(score >= 0 && score < 18446744073709551616.0))
		return 0; /* not in any cell */
	x.bits = (uint64_t)score;
	geo_decode(x.bits, &x.lon, &x.lat);
	if (!geo_shape_contains(&f->s->shape, x.lon, x.lat, &x.dist))
		return 0;
	if (f->n == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;
		struct match *v = realloc(f->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		f->v = v;
		f->cap = cap;
	}
	x.moff = f->store.len;
	x.mlen = mn;
	x.seq = f->n;
	int rc = buf_add(&f->store, m, mn);
	if (rc)
		return rc;
	f->v[f->n++] = x;
	return f->s->any && f->n >= f->s->count ? FOUND_ENOUGH : 0;
}

static int by_dist_asc(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	if (x->dist != y->dist)
		return x->dist < y->dist ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int by_dist_desc(const void *a, const void *b)
{
	const struct match *x = a, *y = b;
	if (x->dist != y->dist)
		return x->dist > y->dist ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int search_view(struct fs_ctx *c, const struct ks_key *k, const char *name, size_t n,
		       struct buf *out)
{
	struct search s;
	struct found f = {&s, NULL, 0, 0, BUF_INIT};
	struct geo_cell cells[9];
	int rc = search_parse(name, n, &s);
	if (!rc && s.has_member) {
		uint64_t bits;
		rc = member_pos(c, k, s.member.data, s.member.len, &bits, &s.shape.lon,
				&s.shape.lat);
		if (rc == -ENOENT)
			LOG_ERR("'%.*s': could not decode requested zset member", (int)n, name);
	}
	size_t nc = rc ? 0 : geo_search_cells(&s.shape, cells);
	for (size_t i = 0; i < nc && !rc; i++) {
		/* Redis reads each cell [min, max) in score order. */
		struct zset_score_range r = {(double)cells[i].min, (double)cells[i].max, false,
					     true};
		rc = zset_range_by_score(c->fs->ks, k, &r, false, 0, -1, found_one, &f);
	}
	if (rc == FOUND_ENOUGH)
		rc = 0;
	/* Without asc or desc: nearest first all the same (Redis's own order
	 * is the cells'); COUNT without ANY takes the nearest, as Redis. */
	if (!rc && f.n > 1)
		qsort(f.v, f.n, sizeof(*f.v), s.desc ? by_dist_desc : by_dist_asc);
	size_t shown = s.count && s.count < f.n ? (size_t)s.count : f.n;
	for (size_t i = 0; !rc && i < shown; i++) {
		const struct match *x = &f.v[i];
		rc = fs_items_encode(out, f.store.data + x->moff, x->mlen);
		if (!rc && s.withdist)
			rc = buf_printf(out, "\t%.4f", x->dist / s.shape.conv);
		if (!rc && s.withhash)
			rc = buf_printf(out, "\t%llu", (unsigned long long)x->bits);
		if (!rc && s.withcoord) {
			rc = buf_add(out, "\t", 1);
			if (!rc)
				rc = add_coord(out, x->lon, x->lat);
		}
		if (!rc)
			rc = buf_add(out, "\n", 1);
	}
	free(f.v);
	buf_release(&f.store);
	search_release(&s);
	return rc;
}

int fs_geo_view_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	/* Several reads of one key: one snapshot, so a writer between them
	 * cannot make the answer a mix of two versions. */
	struct ks_key k = c->k;
	struct store_snap *snap = ks_snap_new(c->fs->ks);
	int rc;
	if (!snap)
		return -ENOMEM;
	k.snap = snap;
	buf_reset(out);
	if (has_prefix(name, n, GEOSEARCH))
		rc = search_view(c, &k, name, n, out);
	else
		rc = members_view(c, &k, name, n, out);
	ks_snap_free(c->fs->ks, snap);
	if (rc)
		buf_reset(out);
	return rc;
}

/* ---- the input: GEOADD ----------------------------------------------- */

int fs_geo_input_check(const char *name, size_t n)
{
	unsigned flags;
	return geoadd_flags(name, n, &flags);
}

int fs_geo_feed(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn)
{
	struct zset_member *ms = NULL;
	struct buf store = BUF_INIT;
	size_t lines = 0, nm = 0, *offs = NULL;
	unsigned flags;
	uint64_t count = 0;
	int rc = geoadd_flags(name, n, &flags);
	if (rc)
		return rc;
	for (size_t i = 0; i < dn; i++)
		lines += d[i] == '\n';
	lines += dn > 0 && d[dn - 1] != '\n'; /* the last one, at a close */
	if (lines == 0)
		return 0;
	ms = calloc(lines, sizeof(*ms));
	offs = calloc(lines, sizeof(*offs));
	if (!ms || !offs) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t from = 0, i = 0; from < dn; i++) {
		const char *line = d + from, *nl = memchr(line, '\n', dn - from);
		size_t ln = nl ? (size_t)(nl - line) : dn - from;
		const char *c1 = memchr(line, ',', ln);
		const char *c2 = c1 ? memchr(c1 + 1, ',', ln - (size_t)(c1 + 1 - line)) : NULL;
		double lon, lat;
		struct buf m = BUF_INIT;
		from += ln + 1;
		if (!c2 || parse_double(line, (size_t)(c1 - line), &lon) ||
		    parse_double(c1 + 1, (size_t)(c2 - c1 - 1), &lat)) {
			LOG_ERR("'%.*s/%.*s': line %zu is not LON,LAT,MEMBER: nothing of this "
				"write is added",
				(int)c->k.klen, c->k.key, (int)n, name, i + 1);
			rc = -EINVAL;
			goto out;
		}
		if (!geo_valid(lon, lat)) {
			LOG_ERR("'%.*s/%.*s': line %zu: invalid longitude,latitude pair %f,%f: "
				"nothing of this write is added",
				(int)c->k.klen, c->k.key, (int)n, name, i + 1, lon, lat);
			rc = -EINVAL;
			goto out;
		}
		rc = fs_items_decode(c2 + 1, ln - (size_t)(c2 + 1 - line), &m);
		if (!rc) {
			offs[nm] = store.len;
			rc = buf_add(&store, m.data, m.len);
		}
		buf_release(&m);
		if (rc)
			goto out;
		ms[nm].len = store.len - offs[nm];
		ms[nm].score = (double)geo_score(lon, lat);
		nm++;
	}
	for (size_t i = 0; i < nm; i++) /* the store moved while it grew */
		ms[i].member = store.data + offs[i];
	rc = zset_add_multi(c->fs->ks, &c->k, ms, nm, flags, &count);
	if (rc == -EFBIG)
		LOG_ERR("'%.*s/%.*s': a member over 512 MiB: nothing of this write is added",
			(int)c->k.klen, c->k.key, (int)n, name);
	if (!rc && c->reply) {
		/* GEOADD's reply, read back by the open that wrote. */
		buf_reset(c->reply);
		rc = buf_printf(c->reply, "%llu\n", (unsigned long long)count);
		if (rc) { /* added; only the reply is short of memory */
			buf_reset(c->reply);
			rc = 0;
		}
	}
out:
	free(ms);
	free(offs);
	buf_release(&store);
	return rc;
}
