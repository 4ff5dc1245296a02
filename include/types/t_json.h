/*
 * t_json: the RedisJSON document type as Kvrocks stores it (JSON.GET,
 * JSON.SET, JSON.DEL, JSON.TYPE, JSON.ARRAPPEND, JSON.STRAPPEND,
 * JSON.NUMINCRBY, JSON.OBJKEYS), plus what the file system needs: the
 * whole document as text, its length, an empty document remembered in
 * __kvfs, and conversions from and to a string. Layer: types; the only
 * module that uses cJSON.
 *
 * Paths are JSONPath as Kvrocks (jsoncons) reads it: `$` (the root),
 * then steps `.name` (any bytes but `.` and `[`), `['name']` or
 * `["name"]` (backslash escapes the quote and itself), `[N]` (an array
 * index, negative from the end), `.*` and `[*]` (every member or
 * element), `..` before a name, `*` or bracket (that step at every
 * level), and brackets holding a union of names, indexes, slices
 * `[start:stop:step]` and filters `?expr` (`@` the value tested, `$` the
 * document; definite paths, numbers, 'strings', true, false, null; ==
 * != < <= > >= && || ! and parentheses). A path of only names and
 * indexes is definite: it matches at most one value, and the verbs
 * answer for that value. Any other path is indefinite: JSON.GET answers
 * the JSON array of every match ([] for none); writes apply to every
 * match and never create one (-ENOENT when nothing matches).
 *
 * Numbers keep their form: an integer literal is stored exactly as
 * written (beyond 64 bits too, up to 63 characters), any other number is
 * a double printed in its shortest round-trip form with a `.0` when
 * integral (`1e3` -> `1000.0`), so a value reads back identical and an
 * integer never becomes a float.
 *
 * All verbs return 0 (or a documented count) or a negative errno:
 * -ENOENT (no such key, or the path matches nothing), -KV_EWRONGTYPE
 * (the key is not a JSON document), -EINVAL (text that is not JSON, a bad
 * path, or a value of the wrong JSON type for the verb; logged once),
 * -EEXIST (NX), -EOVERFLOW (NUMINCRBY out of range), -EFBIG (over
 * JSON_MAX), -E2BIG (an indefinite path over its bounds), -EUCLEAN (a
 * stored document that cannot be read), -EROFS, -ENOMEM, -EIO. A failing
 * write changes nothing. Writes keep the key's expiry and metadata
 * encoding, as Kvrocks's JSON writes do, and always store format 0
 * (compact JSON text).
 */
#ifndef KVFS_T_JSON_H
#define KVFS_T_JSON_H

#include "keyspace/keyspace.h"

/* Largest stored document (Redis's proto-max-bulk-len). */
#define JSON_MAX (512ull << 20)

/* json_set flags */
#define JSON_SET_NX 0x1 /* only if the path matches nothing (-EEXIST) */
#define JSON_SET_XX 0x2 /* only if the path matches (-ENOENT) */

/* json_to_string flag: the string ends with a newline, as files show it. */
#define JSON_NEWLINE 0x1

/* Stored formats (the byte after the metadata header). */
#define JSON_FORMAT_TEXT 0
#define JSON_FORMAT_CBOR 1

/* Is `path` a path as above? 0 or -EINVAL. Pure, logs nothing. */
int json_path_check(const char *path, size_t n);
/* Is `path` a valid, definite path? Pure. */
bool json_path_is_definite(const char *path, size_t n);

/* JSON.GET key path: out = the compact text of the value (no newline);
 * for an indefinite path, of the array of every match in Kvrocks's order
 * (duplicates kept: `$[0,0]` lists one element twice), `[]` for none.
 * For the root of a format-0 document this is the stored text as it is.
 * -E2BIG: the path matches more than JSON_PATH_MAX_MATCHES values or
 * takes more than JSON_PATH_MAX_WORK steps (t_json_int.h); -EFBIG: the
 * answer would be larger than JSON_MAX. */
int json_get(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
	     struct buf *out);
/* The length json_get would give for the root (a format-0 document is not
 * read whole). */
int json_text_len(struct keyspace *ks, const struct ks_key *k, uint64_t *len);
/*
 * JSON.SET key path value [NX|XX]: text holds exactly one JSON value
 * (whitespace around it is fine). The root path creates or replaces the
 * document (a missing key or a remembered empty document is created);
 * another path needs the key, replaces a matched value, or adds a member
 * to an existing object (not an array element). -ENOENT when the key is
 * missing (for a non-root path) or the parent is missing or a scalar.
 * An indefinite path replaces every match (one where another match is
 * inside it takes the value whole) and adds nothing: -ENOENT when it
 * matches nothing, -EEXIST with NX when it matches.
 */
int json_set(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
	     const char *text, size_t n, unsigned flags);
/* JSON.DEL key path: removes the matched value; the root deletes the key.
 * -ENOENT if nothing matches. */
int json_del(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen);
/* The same, *count = how many values went, as Kvrocks's JSON.DEL answers
 * (an indefinite path removes every match, in one batch; a match inside
 * another counts too). */
int json_del_count(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		   uint64_t *count);
/* JSON.TYPE key path: *name = "object", "array", "string", "integer",
 * "number", "boolean" or "null" (static); for an indefinite path, the
 * type of its first match (-ENOENT: none). */
int json_type(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
	      const char **name);
/* JSON.TYPE of every match: out = each type name and a newline, in
 * JSON.GET's order; returns the count (0: no match). */
int json_types(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
	       struct buf *out);
/* JSON.ARRAPPEND key path value...: text holds one or more JSON values
 * separated by whitespace, appended in order; *newlen = the array's new
 * length. -EINVAL if the match is not an array.
 *
 * With an indefinite path, this and STRAPPEND and NUMINCRBY change every
 * match of their type in one batch and leave the others as they are (as
 * Kvrocks, which answers null for them): -ENOENT if nothing matches,
 * -EINVAL if no match has the type; *newlen (out) is of the last match
 * changed in document order (a container after what it holds). */
int json_arrappend(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		   const char *text, size_t n, uint64_t *newlen);
/* JSON.STRAPPEND key path value: text is one JSON string; *newlen = the
 * new length in bytes. -EINVAL if the match is not a string. */
int json_strappend(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		   const char *text, size_t n, uint64_t *newlen);
/* JSON.NUMINCRBY key path number: two integers give an integer (64-bit;
 * -EOVERFLOW past it), anything else a double (-EOVERFLOW if not finite).
 * out (may be NULL) = the new value's text. -EINVAL if the match is not a
 * number or text is not one number. */
int json_numincrby(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		   const char *text, size_t n, struct buf *out);
/* JSON.OBJKEYS key path: out = the member names in order, each followed
 * by a NUL byte; returns their count. -EINVAL if the match is not an
 * object. An indefinite path answers for its first match (-ENOENT: none). */
int json_objkeys(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		 struct buf *out);
/* JSON.OBJKEYS of every match of a path: out = one line per match in
 * JSON.GET's order, the compact JSON array of its member names or `null`
 * if it is no object (Kvrocks's nil); returns the count. */
int json_objkeys_each(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		      struct buf *out);

/*
 * An empty document: the key becomes a remembered empty JSON key (no
 * Kvrocks record; kvfs's reserved namespace remembers it, as it does an
 * empty hash), replacing a document or a remembered empty one. -ENOENT if
 * there is neither, -KV_EWRONGTYPE for another type, -EINVAL if the
 * document has an expiry (an empty record cannot carry it).
 */
int json_clear(struct keyspace *ks, const struct ks_key *k);
/*
 * String key k becomes a JSON document parsed from its bytes, in one
 * batch, keeping the expiry; an empty string becomes a remembered empty
 * document (-EINVAL with an expiry). -EINVAL (logged) if the bytes are
 * not JSON, -ENOENT, -KV_EWRONGTYPE (not a string).
 */
int json_from_string(struct keyspace *ks, const struct ks_key *k);
/* The reverse: the document's text (with JSON_NEWLINE a final newline)
 * becomes a string, keeping the expiry; an empty document becomes an
 * empty string. -ENOENT, -KV_EWRONGTYPE. */
int json_to_string(struct keyspace *ks, const struct ks_key *k, unsigned flags);

/* CBOR (format 1) to compact JSON text, appended to out. 0 or -EUCLEAN
 * (not well-formed CBOR, or a map key JSON cannot hold). Pure. */
int json_cbor_to_text(const void *cbor, size_t n, struct buf *out);

#endif
