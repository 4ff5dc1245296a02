/*
 * alg_geo: geohash scores, positions, distances and the cells of a
 * radius or box search, written from the algorithm Redis's geohash.c and
 * geohash_helper.c describe, so every number matches redis-server's for
 * the same points. Layer: algorithms.
 */
#include "types/alg_geo.h"

#include <math.h>
#include <stdio.h>

#define GEO_MERCATOR_MAX 20037726.37
#define D_R		 (M_PI / 180.0)

struct range {
	double min, max;
};

static const struct range lon_mercator = {GEO_LON_MIN, GEO_LON_MAX};
static const struct range lat_mercator = {GEO_LAT_MIN, GEO_LAT_MAX};

/* A cell: the interleaved bits of `step` bits per coordinate. step 0
 * with bits 0 is "no cell" (a neighbour left out). */
struct hash {
	uint64_t bits;
	unsigned step;
};

struct area {
	struct range lon, lat;
};

bool geo_valid(double lon, double lat)
{
	return lon >= GEO_LON_MIN && lon <= GEO_LON_MAX && lat >= GEO_LAT_MIN && lat <= GEO_LAT_MAX;
}

/* lat's 32 bits at the even positions, lon's at the odd ones. */
static uint64_t interleave(uint32_t lat, uint32_t lon)
{
	uint64_t r = 0;
	for (unsigned i = 0; i < 32; i++) {
		r |= (uint64_t)((lat >> i) & 1) << (2 * i);
		r |= (uint64_t)((lon >> i) & 1) << (2 * i + 1);
	}
	return r;
}

static void deinterleave(uint64_t bits, uint32_t *lat, uint32_t *lon)
{
	*lat = 0;
	*lon = 0;
	for (unsigned i = 0; i < 32; i++) {
		*lat |= (uint32_t)((bits >> (2 * i)) & 1) << i;
		*lon |= (uint32_t)((bits >> (2 * i + 1)) & 1) << i;
	}
}

/* (lon, lat), inside both the ranges and the Mercator square, at step
 * bits per coordinate. The offsets are cut to whole cells as a double
 * converted to 32 bits is, so the top edge lands one past the last cell. */
static struct hash encode(const struct range *lonr, const struct range *latr, double lon,
			  double lat, unsigned step)
{
	double lat_off = (lat - latr->min) / (latr->max - latr->min);
	double lon_off = (lon - lonr->min) / (lonr->max - lonr->min);
	lat_off *= (double)(1ull << step);
	lon_off *= (double)(1ull << step);
	return (struct hash){interleave((uint32_t)lat_off, (uint32_t)lon_off), step};
}

static struct area decode(const struct range *lonr, const struct range *latr, struct hash h)
{
	uint32_t ilat, ilon;
	struct area a;
	double lat_scale = latr->max - latr->min, lon_scale = lonr->max - lonr->min;
	double cells = (double)(1ull << h.step);
	deinterleave(h.bits, &ilat, &ilon);
	a.lat.min = latr->min + (ilat * 1.0 / cells) * lat_scale;
	a.lat.max = latr->min + ((uint32_t)(ilat + 1) * 1.0 / cells) * lat_scale;
	a.lon.min = lonr->min + (ilon * 1.0 / cells) * lon_scale;
	a.lon.max = lonr->min + ((uint32_t)(ilon + 1) * 1.0 / cells) * lon_scale;
	return a;
}

static double clamp(double v, double lo, double hi)
{
	return v > hi ? hi : v < lo ? lo : v;
}

uint64_t geo_score(double lon, double lat)
{
	return encode(&lon_mercator, &lat_mercator, lon, lat, GEO_STEP_MAX).bits;
}

void geo_decode(uint64_t bits, double *lon, double *lat)
{
	struct area a = decode(&lon_mercator, &lat_mercator, (struct hash){bits, GEO_STEP_MAX});
	*lon = clamp((a.lon.min + a.lon.max) / 2, GEO_LON_MIN, GEO_LON_MAX);
	*lat = clamp((a.lat.min + a.lat.max) / 2, GEO_LAT_MIN, GEO_LAT_MAX);
}

static double deg_rad(double deg)
{
	return deg * D_R;
}

static double rad_deg(double rad)
{
	return rad / D_R;
}

static double lat_distance(double lat1, double lat2)
{
	return GEO_EARTH_RADIUS * fabs(deg_rad(lat2) - deg_rad(lat1));
}

double geo_distance(double lon1, double lat1, double lon2, double lat2)
{
	double v = sin((deg_rad(lon2) - deg_rad(lon1)) / 2);
	/* The same longitude: the arc along the meridian (Redis's shortcut,
	 * which its answers carry to the last digit). */
	if (v == 0.0)
		return lat_distance(lat1, lat2);
	double lat1r = deg_rad(lat1), lat2r = deg_rad(lat2);
	double u = sin((lat2r - lat1r) / 2);
	double a = u * u + cos(lat1r) * cos(lat2r) * v * v;
	return 2.0 * GEO_EARTH_RADIUS * asin(sqrt(a));
}

void geo_hash_string(uint64_t bits, char out[GEO_HASH_CHARS + 1])
{
	static const char alphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
	static const struct range lon_std = {-180, 180}, lat_std = {-90, 90};
	double lon, lat;
	geo_decode(bits, &lon, &lat);
	uint64_t h = encode(&lon_std, &lat_std, lon, lat, GEO_STEP_MAX).bits;
	for (unsigned i = 0; i < GEO_HASH_CHARS; i++) {
		/* 52 bits make 10 characters and 2 bits; the 11th is '0'. */
		unsigned idx =
		    i == GEO_HASH_CHARS - 1 ? 0 : (unsigned)(h >> (52 - (i + 1) * 5)) & 0x1f;
		out[i] = alphabet[idx];
	}
	out[GEO_HASH_CHARS] = '\0';
}

size_t geo_fmt_coord(double d, char out[64])
{
	int n = snprintf(out, 64, "%.17Lf", (long double)d);
	if (n < 0 || n >= 64) { /* not a coordinate: never from a decode */
		n = snprintf(out, 64, "%.17g", d);
		return n < 0 ? 0 : (size_t)n;
	}
	size_t l = (size_t)n;
	bool point = false;
	for (size_t i = 0; i < l; i++)
		point |= out[i] == '.';
	if (point) {
		while (out[l - 1] == '0')
			l--;
		if (out[l - 1] == '.')
			l--;
	}
	if (l == 2 && out[0] == '-' && out[1] == '0') {
		out[0] = '0';
		l = 1;
	}
	out[l] = '\0';
	return l;
}

/* ---- search ---------------------------------------------------------- */

/* How many bits per coordinate a cell of about range_m metres has. */
static unsigned steps_for_radius(double range_m, double lat)
{
	int step = 1;
	if (range_m == 0)
		return GEO_STEP_MAX;
	while (range_m < GEO_MERCATOR_MAX) {
		range_m *= 2;
		step++;
	}
	step -= 2; /* so the area fits in most cases */
	/* Meridians come closer towards the poles: wider cells there. */
	if (lat > 66 || lat < -66) {
		step--;
		if (lat > 80 || lat < -80)
			step--;
	}
	if (step < 1)
		step = 1;
	if (step > GEO_STEP_MAX)
		step = GEO_STEP_MAX;
	return (unsigned)step;
}

/* The longitude and latitude bounds around the shape: [0] min lon,
 * [1] min lat, [2] max lon, [3] max lat. */
static void bounding_box(const struct geo_shape *s, double b[4])
{
	double height = s->conv * (s->box ? s->height / 2 : s->radius);
	double width = s->conv * (s->box ? s->width / 2 : s->radius);
	double lat_delta = rad_deg(height / GEO_EARTH_RADIUS);
	double lon_top = rad_deg(width / GEO_EARTH_RADIUS / cos(deg_rad(s->lat + lat_delta)));
	double lon_bottom = rad_deg(width / GEO_EARTH_RADIUS / cos(deg_rad(s->lat - lat_delta)));
	/* The wider edge is the one nearer the equator. */
	bool south = s->lat < 0;
	b[0] = s->lon - (south ? lon_bottom : lon_top);
	b[2] = s->lon + (south ? lon_bottom : lon_top);
	b[1] = s->lat - lat_delta;
	b[3] = s->lat + lat_delta;
}

/* The cell dlon, dlat cells away from h: a coordinate that moves wraps
 * around (modulo 2^step), one that does not keeps its bits, even one
 * past the top edge (a centre on the limit), as Redis's moves do. The
 * centre cell is h itself. */
static struct hash neighbour(struct hash h, int dlon, int dlat)
{
	uint32_t ilat, ilon;
	uint32_t mask = (uint32_t)((1ull << h.step) - 1);
	deinterleave(h.bits, &ilat, &ilon);
	if (dlat)
		ilat = (uint32_t)(ilat + (uint32_t)dlat) & mask;
	if (dlon)
		ilon = (uint32_t)(ilon + (uint32_t)dlon) & mask;
	return (struct hash){interleave(ilat, ilon), h.step};
}

enum { C_CENTRE, C_N, C_S, C_E, C_W, C_NE, C_NW, C_SE, C_SW, C_COUNT };

static void neighbours(struct hash h, struct hash c[C_COUNT])
{
	static const int d[C_COUNT][2] = {{0, 0}, {0, 1},  {0, -1}, {1, 0},  {-1, 0},
					  {1, 1}, {-1, 1}, {1, -1}, {-1, -1}};
	for (int i = 0; i < C_COUNT; i++)
		c[i] = neighbour(h, d[i][0], d[i][1]);
}

size_t geo_search_cells(const struct geo_shape *s, struct geo_cell out[9])
{
	static const struct hash none = {0, 0};
	struct hash c[C_COUNT];
	double b[4];
	double radius =
	    s->box ? sqrt((s->width / 2) * (s->width / 2) + (s->height / 2) * (s->height / 2))
		   : s->radius;
	radius *= s->conv;
	bounding_box(s, b);
	unsigned step = steps_for_radius(radius, s->lat);
	struct hash h = encode(&lon_mercator, &lat_mercator, s->lon, s->lat, step);
	neighbours(h, c);
	/* A cell too coarse still leaves the area's edge beyond the
	 * neighbours on some side: one step coarser then. */
	struct area n = decode(&lon_mercator, &lat_mercator, c[C_N]);
	struct area so = decode(&lon_mercator, &lat_mercator, c[C_S]);
	struct area e = decode(&lon_mercator, &lat_mercator, c[C_E]);
	struct area w = decode(&lon_mercator, &lat_mercator, c[C_W]);
	bool coarser =
	    n.lat.max < b[3] || so.lat.min > b[1] || e.lon.max < b[2] || w.lon.min > b[0];
	if (step > 1 && coarser) {
		step--;
		h = encode(&lon_mercator, &lat_mercator, s->lon, s->lat, step);
		neighbours(h, c);
	}
	/* Neighbours on a side the centre cell already covers are left out. */
	if (step >= 2) {
		struct area a = decode(&lon_mercator, &lat_mercator, h);
		if (a.lat.min < b[1])
			c[C_S] = c[C_SW] = c[C_SE] = none;
		if (a.lat.max > b[3])
			c[C_N] = c[C_NE] = c[C_NW] = none;
		if (a.lon.min < b[0])
			c[C_W] = c[C_SW] = c[C_NW] = none;
		if (a.lon.max > b[2])
			c[C_E] = c[C_SE] = c[C_NE] = none;
	}
	size_t n_out = 0;
	int last = 0; /* Redis compares with the cell read last, never with the centre */
	for (int i = 0; i < C_COUNT; i++) {
		if (c[i].bits == 0 && c[i].step == 0)
			continue;
		if (last && c[i].bits == c[last].bits && c[i].step == c[last].step)
			continue;
		unsigned shift = 52 - 2 * c[i].step;
		out[n_out].min = c[i].bits << shift;
		out[n_out].max = (c[i].bits + 1) << shift;
		n_out++;
		last = i;
	}
	return n_out;
}

bool geo_shape_contains(const struct geo_shape *s, double lon, double lat, double *dist)
{
	if (!s->box) {
		double d = geo_distance(s->lon, s->lat, lon, lat);
		if (d > s->radius * s->conv)
			return false;
		*dist = d;
		return true;
	}
	/* Redis's box test: the latitude gap first, then the longitude gap
	 * along the point's own parallel. */
	double width = s->width * s->conv, height = s->height * s->conv;
	if (lat_distance(lat, s->lat) > height / 2)
		return false;
	if (geo_distance(lon, lat, s->lon, lat) > width / 2)
		return false;
	*dist = geo_distance(s->lon, s->lat, lon, lat);
	return true;
}
