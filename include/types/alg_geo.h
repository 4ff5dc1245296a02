/*
 * alg_geo: the geohash arithmetic of Redis's GEO commands (Kvrocks stores
 * the same scores): a point is a sorted-set member whose score is the
 * 52-bit interleaved geohash of its longitude and latitude over the Web
 * Mercator square (longitude -180..180, latitude -85.05112878..
 * 85.05112878), latitude bits at even positions, longitude bits at odd
 * ones. Distances are haversine over a sphere of radius 6372797.560856 m.
 * Written from the algorithm so that scores, positions, distances and the
 * cells a search scans are the ones redis-server has for the same input.
 * Pure: no storage. Layer: algorithms (may include util only).
 */
#ifndef KVFS_ALG_GEO_H
#define KVFS_ALG_GEO_H

#include "engine/util.h"

#define GEO_LON_MIN	 -180.0
#define GEO_LON_MAX	 180.0
#define GEO_LAT_MIN	 -85.05112878
#define GEO_LAT_MAX	 85.05112878
#define GEO_STEP_MAX	 26 /* bits per coordinate: 52 in all */
#define GEO_EARTH_RADIUS 6372797.560856
/* The length of a geohash string (GEOHASH's 11 characters). */
#define GEO_HASH_CHARS 11

/* Is (lon, lat) a point GEOADD accepts? */
bool geo_valid(double lon, double lat);

/* The score GEOADD gives (lon, lat) (geo_valid true): the 52-bit hash
 * (longitude 180 or latitude GEO_LAT_MAX carry past bit 51, as in
 * Redis: still a valid score, decoded to the limit). */
uint64_t geo_score(double lon, double lat);

/* The position a score stands for: the centre of its 26-step cell,
 * clamped to the Mercator square. A score is a whole number 0 <=
 * score < 2^64 (the views refuse others before). */
void geo_decode(uint64_t bits, double *lon, double *lat);

/* The distance in metres between two points, as Redis computes it. */
double geo_distance(double lon1, double lat1, double lon2, double lat2);

/* GEOHASH: the standard 11-character geohash of the position a score
 * stands for (over latitude -90..90; the last character is always '0',
 * since 52 bits fill only 10 characters). out gets a NUL too. */
void geo_hash_string(uint64_t bits, char out[GEO_HASH_CHARS + 1]);

/* A number as redis-cli shows a GEOPOS or WITHCOORD coordinate: "%.17Lf"
 * with trailing zeros (and a bare point) removed. Returns the length. */
size_t geo_fmt_coord(double d, char out[64]);

/* A search area (GEOSEARCH BYRADIUS / BYBOX). Sizes are in the unit
 * asked for, conv its metres (1, 1000, 0.3048, 1609.34): Redis converts
 * in the same places, and the last bit of a bound depends on where. */
struct geo_shape {
	double lon, lat; /* the centre */
	bool box;
	double radius;	      /* !box */
	double width, height; /* box: full width and height */
	double conv;
};

/* A half-open score interval [min, max) of one cell a search scans. */
struct geo_cell {
	uint64_t min, max;
};

/*
 * The cells a search reads, in the order Redis reads them (the centre
 * cell, then north, south, east, west, north-east, north-west,
 * south-east, south-west), without the ones Redis leaves out (beyond
 * the area, or a repeat of the cell before). Returns how many (1..9).
 */
size_t geo_search_cells(const struct geo_shape *s, struct geo_cell out[9]);

/* Is the point (lon, lat) inside shape s? *dist = its distance from the
 * centre in metres (set when true; divide by conv for the unit). */
bool geo_shape_contains(const struct geo_shape *s, double lon, double lat, double *dist);

#endif
