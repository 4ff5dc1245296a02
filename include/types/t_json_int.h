/*
 * t_json_int: what the files of the JSON module share and nobody else
 * sees: the paths of t_json.h as parsed steps, and the one number printer.
 * Private to the JSON module (t_json.c, the documents and verbs;
 * t_json_path.c, paths in trees and in stored text; t_json_cbor.c,
 * Kvrocks's CBOR format): no other file includes it (tests/check-layers.sh).
 * Layer: types.
 */
#ifndef KVFS_T_JSON_INT_H
#define KVFS_T_JSON_INT_H

#include "engine/util.h"

struct cJSON;

/* Shortest text that reads back as d, with ".0" if it would look like an
 * integer; "null" for NaN and infinities (JSON has neither). Every number
 * kvfs prints into JSON (t_json.c, t_json_cbor.c) goes through here. */
void json_fmt_double(double d, char out[40]);

/* JSON's whitespace. */
static inline bool json_is_ws(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* ---- Paths (t_json_path.c) ------------------------------------------ */

/* Bounds on what a path may ask of an untrusted document (docs/mapping.md
 * section 18): an indefinite path's length (which bounds its steps, union
 * elements and filter terms), how deep a filter nests, how many values
 * a path may match, and how many steps an evaluation may take (`$..*..*`
 * is quadratic). Past them: -EINVAL (parsing) or -E2BIG (evaluating). */
#define JSON_PATH_MAX_LEN     4096
#define JSON_PATH_MAX_NEST    32
#define JSON_PATH_MAX_MATCHES (1u << 20)
#define JSON_PATH_MAX_WORK    (1u << 24)

enum json_step_kind {
	JSON_STEP_NAME,	 /* .name, ['name'] */
	JSON_STEP_INDEX, /* [N] */
	JSON_STEP_WILD,	 /* .*, [*] */
	JSON_STEP_DESC,	 /* .. (the step after it applies at every level) */
	JSON_STEP_UNION, /* [a,b,...]: slices, filters, several names or indexes */
};

struct json_sel;

/* One step. A definite path has only names and indexes. */
struct json_step {
	enum json_step_kind kind;
	bool index; /* kind == JSON_STEP_INDEX */
	int64_t i;
	char *name;	      /* NUL-terminated; names hold no NUL (cJSON keys cannot) */
	struct json_sel *sel; /* JSON_STEP_UNION: nsel elements */
	size_t nsel;
};

/* A parsed path: n steps after `$` (0: the root). definite: only names
 * and indexes, so at most one match. */
struct json_path {
	struct json_step *v;
	size_t n;
	bool definite;
};

/* Parse a path (t_json.h) into p (free with json_path_free, also after a
 * failure). 0, -EINVAL (*why set, static), -ENOMEM. Logs nothing. */
int json_path_parse(const char *s, size_t n, struct json_path *p, const char **why);
void json_path_free(struct json_path *p);
/* The value the first `upto` steps of definite path p lead to in the tree
 * at root, or NULL. */
struct cJSON *json_path_find(struct cJSON *root, const struct json_path *p, size_t upto);
/*
 * Every match of path p in the tree at root, in the order Kvrocks's
 * JSON.GET lists them (jsoncons's evaluation order: `..` visits a
 * container, then its children in order; a union its elements in order),
 * duplicates kept (`[0,0]` matches twice). *v = the matches (free it; the
 * nodes are root's), *n their count (0: none, *v NULL). 0, -E2BIG (more
 * than JSON_PATH_MAX_MATCHES matches or JSON_PATH_MAX_WORK steps), -ENOMEM.
 */
int json_path_select(struct cJSON *root, const struct json_path *p, struct cJSON ***v, size_t *n);

/*
 * The span [*start, *start + *len) of JSON text s[0, n) holding the value
 * p names, found by scanning the text, without a tree: 0, -ENOENT, or
 * -EINVAL if the scan does not understand the text (the caller then
 * parses it whole, which says why).
 */
int json_scan_path(const char *s, size_t n, const struct json_path *p, size_t *start, size_t *len);
/* The type name (as json_type's) of the valid value s[0, n). */
const char *json_span_type(const char *s, size_t n);

/* ---- For the document tree (t_json_tree.c; defined in t_json.c) ------ */

struct keyspace;
struct ks_key;

/* One write of k's document in one transaction under the key's lock:
 * load and parse it, edit(root, arg) changes the tree in place (it must
 * not replace the root), store it with the header as read (expiry kept).
 * 0 or the edit's or the store's errno; nothing changes on an error. */
int json_tree_doc_edit(struct keyspace *ks, const struct ks_key *k,
		       int (*edit)(struct cJSON *root, void *arg), void *arg);
/* k's document parsed (*root: free with cJSON_Delete). */
int json_tree_doc_load(struct keyspace *ks, const struct ks_key *k, struct cJSON **root);
/* One JSON value from text a user gave (numbers keep their literal);
 * logs a refusal once, as verb. */
int json_tree_parse(const char *verb, const struct ks_key *k, const char *s, size_t n,
		    struct cJSON **out);
/* Append the compact text of c (c alone, not its siblings). */
int json_tree_print(struct cJSON *c, struct buf *out);
/* JSON.TYPE's name of c (static). */
const char *json_tree_type(const struct cJSON *c);

#endif
