/*
 * names: reversible escaping between stored bytes (keys, fields,
 * namespaces: any bytes) and file names (no '/', no NUL, not "." or "..",
 * at most 255 bytes). Layer: names (may include util).
 *
 * Rules (docs/mapping.md has the user's version):
 *   - "/" -> %2F, NUL -> %00, a name "." -> %2E, ".." -> %2E%2E,
 *     the empty name -> "%".
 *   - "%" stays as it is unless the stored bytes after it would read as an
 *     escape: before two hex digits, before "~", or at the very end it is
 *     written %25. So "50%off" is unchanged, "%41" is shown as "%2541".
 *   - A name whose escaped form is longer than 255 bytes is shown as
 *     PREFIX%~HHHHHHHHHHHHHHHH: the escaped form cut to at most
 *     NAMES_LONG_PREFIX bytes (at an escape boundary) and the XXH3-64 of
 *     the whole stored name in 16 lower-case hex digits.
 * Every other byte, including UTF-8 and spaces, is shown unchanged.
 * Decoding is lenient: "%" not followed by two hex digits or "~" is a
 * literal "%", so names users type never fail to decode.
 */
#ifndef KVFS_NAMES_H
#define KVFS_NAMES_H

#include "engine/util.h"

#define NAMES_MAX	  255
#define NAMES_LONG_PREFIX 200

/* Escape stored bytes into a file name (NUL-terminated in out->data, at
 * most NAMES_MAX bytes). 0 or -ENOMEM. */
int names_encode(const void *raw, size_t n, struct buf *out);

/* Decode a file name (a C string). Returns 0 with out = the stored bytes;
 * or NAMES_DECODED_LONG with out = the stored prefix and *hash = the
 * hash of the whole stored name (the caller resolves it by scanning names
 * that start with the prefix, see names_long_matches); -ENAMETOOLONG if
 * the name is over NAMES_MAX bytes; -ENOMEM. */
#define NAMES_DECODED_LONG 1
int names_decode(const char *name, struct buf *out, uint64_t *hash);

/* True if stored name raw/n is the one a long name with this hash means. */
bool names_long_matches(const void *raw, size_t n, uint64_t hash);

#endif
