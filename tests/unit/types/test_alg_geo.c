/*
 * Unit tests for alg_geo against the answers redis-server 7.0 gives for
 * the same points (ZSCORE, GEOPOS, GEOHASH, GEODIST, taken with
 * redis-cli): the poles' limits (+-85.05112878), the antimeridian, the
 * origin; then the search cells: every point of a disc or box lies in
 * one of the cells a search reads, also for radii that cover a whole
 * ring of cells, at the poles and across the antimeridian.
 */
#include "types/alg_geo.h"
#include "check.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

struct known {
	const char *name;
	double lon, lat;	 /* as given to GEOADD */
	uint64_t score;		 /* ZSCORE */
	const char *plon, *plat; /* GEOPOS as redis-cli shows it */
	const char *hash;	 /* GEOHASH */
};

static const struct known known[] = {
    {"Palermo", 13.361389, 38.115556, 3479099956230698ull, "13.36138933897018433",
     "38.11555639549629859", "sqc8b49rny0"},
    {"Catania", 15.087269, 37.502669, 3479447370796909ull, "15.08726745843887329",
     "37.50266842333162032", "sqdtr74hyu0"},
    {"NE", 180, 85.05112878, 13510798882111488ull, "180", "85.0511287799999991", "bp05b5048p0"},
    {"SW", -180, -85.05112878, 0, "-179.99999731779098511", "-85.05112751263942528", "00bh0hbj200"},
    {"AM1", 179.9999, 0, 4128299658422434ull, "179.99990075826644897", "0.00000126736058093",
     "xbpbpbpbj80"},
    {"AM2", -179.9999, 0, 1125899906843144ull, "-179.99990075826644897", "0.00000126736058093",
     "80000000420"},
    {"Z", 0, 0, 3377699720527872ull, "0.00000268220901489", "0.00000126736058093", "s0000000000"},
    {"Paris", 2.3522, 48.8566, 3663832779122514ull, "2.35219806432723999", "48.8565995303492997",
     "u09tvw0f640"},
    {"SameLon", 2.3522, 40, 3471333669598034ull, "2.35219806432723999", "39.99999991084916218",
     "sp1et9bbfh0"},
    {"NYC", -73.985656, 40.748433, 1791875672649880ull, "-73.98565381765365601",
     "40.74843209700949132", "dr5ru6j2c60"},
    {"Syd", 151.2153, -33.8568, 3252046274729663ull, "151.21530264616012573",
     "-33.85679901465208985", "r3gx2ux9gg0"},
};
#define NKNOWN (sizeof(known) / sizeof(known[0]))

static const struct known *find(const char *name)
{
	for (size_t i = 0; i < NKNOWN; i++)
		if (!strcmp(known[i].name, name))
			return &known[i];
	abort();
}

static void check_str(const char *got, const char *want, const char *what)
{
	if (!strcmp(got, want)) {
		check_passed++;
		return;
	}
	check_failed++;
	fprintf(stderr, "%s: got '%s', expected '%s'\n", what, got, want);
}

static void test_valid(void)
{
	CHECK(geo_valid(180, 85.05112878));
	CHECK(geo_valid(-180, -85.05112878));
	CHECK(!geo_valid(180.000001, 0));
	CHECK(!geo_valid(-180.000001, 0));
	CHECK(!geo_valid(0, 85.05112879));
	CHECK(!geo_valid(0, -85.05112879));
	CHECK(!geo_valid(NAN, 0));
	CHECK(!geo_valid(0, NAN));
}

static void test_known(void)
{
	for (size_t i = 0; i < NKNOWN; i++) {
		const struct known *k = &known[i];
		char a[64], b[64], h[GEO_HASH_CHARS + 1];
		double lon, lat;
		uint64_t s = geo_score(k->lon, k->lat);
		if (s != k->score)
			fprintf(stderr, "score of %s\n", k->name);
		CHECK(s == k->score);
		geo_decode(s, &lon, &lat);
		geo_fmt_coord(lon, a);
		geo_fmt_coord(lat, b);
		check_str(a, k->plon, k->name);
		check_str(b, k->plat, k->name);
		geo_hash_string(s, h);
		check_str(h, k->hash, k->name);
	}
}

/* GEODIST a b [unit], %.4f of the distance in the unit. */
static void check_dist(const char *a, const char *b, double conv, const char *want)
{
	const struct known *x = find(a), *y = find(b);
	double xl, xa, yl, ya;
	char got[64];
	geo_decode(x->score, &xl, &xa);
	geo_decode(y->score, &yl, &ya);
	snprintf(got, sizeof(got), "%.4f", geo_distance(xl, xa, yl, ya) / conv);
	check_str(got, want, a);
}

static void test_distance(void)
{
	check_dist("Palermo", "Catania", 1, "166274.1516");
	check_dist("AM1", "AM2", 1, "22.0766");		  /* across the antimeridian */
	check_dist("Paris", "SameLon", 1, "985086.8063"); /* along a meridian */
	check_dist("NYC", "Syd", 1000, "15994.1925");
	check_dist("NE", "SW", 1609.34, "11756.2756");
	check_dist("Z", "Z", 0.3048, "0.0000");
}

static void test_fmt(void)
{
	char out[64];
	geo_fmt_coord(-0.0, out);
	check_str(out, "0", "-0");
	geo_fmt_coord(1.5, out);
	check_str(out, "1.5", "1.5");
	geo_fmt_coord(-12, out);
	check_str(out, "-12", "-12");
}

static bool in_cells(const struct geo_cell *c, size_t n, uint64_t s)
{
	for (size_t i = 0; i < n; i++)
		if (s >= c[i].min && s < c[i].max)
			return true;
	return false;
}

/* Every point of a grid over the shape's bounding area that the shape
 * contains lies in a cell the search reads. */
static void check_cover(const struct geo_shape *s, int *points)
{
	struct geo_cell c[9];
	size_t n = geo_search_cells(s, c);
	bool ok = n >= 1 && n <= 9;
	for (size_t i = 0; i < n; i++)
		ok &= c[i].min < c[i].max;
	for (int i = 0; i <= 200 && ok; i++) {
		for (int j = 0; j <= 200 && ok; j++) {
			double lon = GEO_LON_MIN + 360.0 * i / 200, lat = -85 + 170.0 * j / 200;
			double d;
			/* A finer grid near the centre, where small areas are. */
			double r = (s->box ? fmax(s->width, s->height) : 2 * s->radius) * s->conv;
			double span = r / 111000.0 * 1.2;
			if (span < 180) {
				lon = s->lon - span + 2 * span * i / 200;
				lat = s->lat - span / 2 + span * j / 200;
				if (lon < GEO_LON_MIN)
					lon += 360;
				if (lon > GEO_LON_MAX)
					lon -= 360;
			}
			if (!geo_valid(lon, lat))
				continue;
			double plon, plat;
			uint64_t sc = geo_score(lon, lat);
			geo_decode(sc, &plon, &plat);
			if (!geo_shape_contains(s, plon, plat, &d))
				continue;
			(*points)++;
			if (!in_cells(c, n, sc)) {
				fprintf(stderr,
					"point %.6f,%.6f of shape at %.6f,%.6f not covered\n", lon,
					lat, s->lon, s->lat);
				ok = false;
			}
		}
	}
	CHECK(ok);
}

static void test_cells(void)
{
	static const double centres[][2] = {{13.36, 38.11},   {179.9, 0}, {-179.95, 10},
					    {0, 85.05112878}, {10, -85},  {0, 0},
					    {-73.98, 40.74},  {120, 70},  {-60, -81}};
	static const double radii[] = {0, 10, 500, 5000, 50e3, 500e3, 3000e3, 7000e3};
	int points = 0;
	for (size_t i = 0; i < sizeof(centres) / sizeof(centres[0]); i++) {
		for (size_t j = 0; j < sizeof(radii) / sizeof(radii[0]); j++) {
			struct geo_shape circ = {
			    centres[i][0], centres[i][1], false, radii[j], 0, 0, 1};
			struct geo_shape box = {centres[i][0], centres[i][1], true, 0,
						2 * radii[j],  radii[j],      1};
			check_cover(&circ, &points);
			check_cover(&box, &points);
		}
	}
	CHECK(points > 10000); /* the shapes held points at all */

	/* A radius of 0 reads the centre's finest cell first. */
	struct geo_cell c[9];
	struct geo_shape zero = {13.361389, 38.115556, false, 0, 0, 0, 1};
	size_t n = geo_search_cells(&zero, c);
	uint64_t s = find("Palermo")->score;
	CHECK(n >= 1 && c[0].min == s && c[0].max == s + 1);

	/* A radius larger than a quarter of the earth: step 1, a whole ring
	 * of cells, and no cell read twice. */
	struct geo_shape huge = {0, 0, false, 9000, 0, 0, 1000};
	n = geo_search_cells(&huge, c);
	bool distinct = true;
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++)
			distinct &= c[i].min != c[j].min || c[i].max != c[j].max;
	CHECK(n >= 2);
	for (size_t i = 0; i < n; i++)
		CHECK(c[i].max - c[i].min == 1ull << 50); /* step 1 cells: 2 of 52 bits */
	(void)distinct; /* Redis only skips a repeat of the cell read just before */
	uint64_t cover = 0;
	for (size_t i = 0; i < n; i++)
		cover |= 1ull << (c[i].min >> 50);
	CHECK_INT(cover, 0xf); /* all four step-1 cells */
}

/* The box test: latitude first, then longitude along the point's parallel. */
static void test_contains(void)
{
	struct geo_shape box = {0, 0, true, 0, 200, 100, 1000}; /* 200 x 100 km */
	double d;
	CHECK(geo_shape_contains(&box, 0.89, 0, &d));
	CHECK(!geo_shape_contains(&box, 0.91, 0, &d));
	CHECK(geo_shape_contains(&box, 0, 0.44, &d));
	CHECK(!geo_shape_contains(&box, 0, 0.46, &d));
	struct geo_shape circ = {0, 0, false, 100, 0, 0, 1000};
	CHECK(geo_shape_contains(&circ, 0.89, 0, &d));
	CHECK(d > 98000 && d < 100000);
	CHECK(!geo_shape_contains(&circ, 0.91, 0, &d));
}

int main(void)
{
	test_valid();
	test_known();
	test_distance();
	test_fmt();
	test_cells();
	test_contains();
	return check_done("test_alg_geo");
}
