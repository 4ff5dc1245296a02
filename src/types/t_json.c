/*
 * t_json: the RedisJSON document type, stored as Kvrocks stores it
 * (kvrocks-encoding.md 6.2): numbers, parsing and printing, stored
 * documents and the verbs. Layer: types. With t_json_path.c (paths) and
 * t_json_cbor.c (Kvrocks's CBOR format) the JSON module, the only one
 * that uses cJSON; they share t_json_int.h.
 *
 *   CF        key   value
 *   metadata  K     flags | expire | format u8 | payload
 *
 *   flags    0x8A (v1, type 10) or 0x0A (v0, kept when Kvrocks wrote one)
 *   expire   u64 BE absolute Unix ms (u32 seconds in v0), 0 = none
 *   format   0 = JSON text, compact (what kvfs always writes)
 *            1 = CBOR (Kvrocks's json-storage-format cbor; read only)
 *   payload  the document; no version, no size, no sub-keys
 *
 * Example: JSON.SET d $ '{"a":[1,2.5]}' ->
 *   NS 64 : 8A 00x8 00 7B 22 61 22 3A 5B 31 2C 32 2E 35 5D 7D
 *
 * A document in memory is a cJSON tree in which every number node also
 * holds its canonical literal in valuestring (cJSON keeps only a double,
 * which would round integers past 2^53 and print 1e15 as "1e+15"). The
 * literals come from a lexical scan of the text done before cJSON parses
 * it; the scan also enforces what cJSON lets through (leading zeros,
 * "1.", raw control characters in strings, \u0000). Printing turns the
 * number nodes into raw nodes, so cJSON prints the literals verbatim.
 */
#include "types/t_json.h"

#include "keyspace/ks_txn.h"
#include "engine/store.h"
#include "types/t_json_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define JSON_NUM_MAX 63 /* cJSON reads at most 63 characters of a number */

/* ---- Numbers ------------------------------------------------------- */

void json_fmt_double(double d, char out[40])
{
	if (!isfinite(d)) {
		strcpy(out, "null");
		return;
	}
	fmt_double_g17(d, out);
	if (!strpbrk(out, ".eE"))
		strcat(out, ".0");
}

/* Is lit (a valid JSON number) an integer literal? */
static bool lit_is_integer(const char *lit)
{
	return !strpbrk(lit, ".eE");
}

/*
 * Is the valid float literal s already what json_fmt_double would print? True
 * for plain decimals of at most 15 significant digits (which %.15g gives
 * back digit for digit) without an exponent, trailing fraction zeros
 * (except a lone ".0") or the leading zeros %g would write as an
 * exponent: "2.5", "1000.0", "0.001". Saves a strtod and printf per
 * number when a stored document is parsed again.
 */
static bool lit_float_is_canon(const char *s, size_t n)
{
	const char *dot = memchr(s, '.', n), *end = s + n;
	if (!dot || memchr(s, 'e', n) || memchr(s, 'E', n))
		return false;
	if (end[-1] == '0' && !(end - dot == 2))
		return false; /* "2.50" */
	const char *d = s + (s[0] == '-');
	size_t sig = 0, lead = 0;
	bool seen = false;
	for (const char *c = d; c < end; c++) {
		if (*c == '.')
			continue;
		if (*c != '0')
			seen = true;
		if (seen)
			sig++;
		else if (c > dot)
			lead++;
	}
	if (sig > 15 || (size_t)(dot - d) > 15 || lead > 3)
		return false;
	return seen || end - dot == 2; /* "0.0" is canonical, "0.00" is not */
}

/* The canonical literal of a valid JSON number literal: an integer stays
 * as written, anything else is a double in json_fmt_double's form. NULL on
 * ENOMEM; *range set if the value is not finite. */
static char *lit_canon(const char *s, size_t n, bool *range)
{
	char tmp[JSON_NUM_MAX + 1], out[40];
	*range = false;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	if (lit_is_integer(tmp) || lit_float_is_canon(tmp, n))
		return strdup(tmp);
	double d = strtod(tmp, NULL);
	if (!isfinite(d)) {
		*range = true;
		return NULL;
	}
	json_fmt_double(d, out);
	return strdup(out);
}

/* ---- Parsing --------------------------------------------------------- */

struct lits {
	char **v;
	size_t n, cap, next;
};

static void lits_free(struct lits *l)
{
	for (size_t i = l->next; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
	memset(l, 0, sizeof(*l));
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Length of the strict JSON number at s (at most n bytes), 0 if none. */
static size_t number_len(const char *s, size_t n)
{
	size_t i = 0;
	if (i < n && s[i] == '-')
		i++;
	if (i < n && s[i] == '0')
		i++;
	else if (i < n && s[i] >= '1' && s[i] <= '9')
		while (i < n && is_digit(s[i]))
			i++;
	else
		return 0;
	if (i < n && s[i] == '.') {
		size_t d = ++i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == d)
			return 0;
	}
	if (i < n && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < n && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t d = i;
		while (i < n && is_digit(s[i]))
			i++;
		if (i == d)
			return 0;
	}
	return i;
}

/*
 * The lexical scan: strings and numbers as strict JSON wants them, and
 * the canonical literal of every number in text order (the order of a
 * depth-first walk of the tree cJSON builds). Structure is cJSON's job.
 * -EINVAL with *at and *why set, or -ENOMEM.
 */
static int lex_scan(const char *s, size_t n, struct lits *l, size_t *at, const char **why)
{
	size_t i = 0;
	if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
		i = 3; /* a UTF-8 byte order mark, which cJSON skips too */
	while (i < n) {
		char c = s[i];
		*at = i;
		if (c == '"') {
			for (i++;; i++) {
				if (i >= n) {
					*why = "unterminated string";
					return -EINVAL;
				}
				unsigned char b = (unsigned char)s[i];
				if (b == '"')
					break;
				if (b < 0x20) {
					*at = i;
					*why = "control character in a string";
					return -EINVAL;
				}
				if (b == '\\' && i + 5 < n && memcmp(s + i, "\\u0000", 6) == 0) {
					*at = i;
					*why = "\\u0000 in a string (kvfs cannot hold NUL in JSON "
					       "text)";
					return -EINVAL;
				}
				if (b == '\\')
					i++; /* the escaped byte; cJSON checks the escape */
			}
			i++;
		} else if (c == '-' || is_digit(c)) {
			size_t len = number_len(s + i, n - i);
			if (len == 0 ||
			    (i + len < n && (is_digit(s[i + len]) || s[i + len] == '.'))) {
				*why = "malformed number";
				return -EINVAL;
			}
			if (len > JSON_NUM_MAX) {
				*why = "number longer than 63 characters";
				return -EINVAL;
			}
			bool range;
			char *lit = lit_canon(s + i, len, &range);
			if (range) {
				*why = "number out of range";
				return -EINVAL;
			}
			if (!lit)
				return -ENOMEM;
			if (l->n == l->cap) {
				size_t cap = l->cap ? 2 * l->cap : 16;
				char **v = realloc(l->v, cap * sizeof(*v));
				if (!v) {
					free(lit);
					return -ENOMEM;
				}
				l->v = v;
				l->cap = cap;
			}
			l->v[l->n++] = lit;
			i += len;
		} else if (c == '\0') {
			*why = "NUL byte";
			return -EINVAL;
		} else {
			i++;
		}
	}
	return 0;
}

/* Give every number node of the tree its literal, in walk order. */
static int attach_lits(cJSON *c, struct lits *l)
{
	for (; c; c = c->next) {
		if ((c->type & 0xFF) == cJSON_Number) {
			if (l->next >= l->n)
				return -EINVAL;
			c->valuestring = l->v[l->next++];
		}
		if (c->child) {
			int rc = attach_lits(c->child, l);
			if (rc)
				return rc;
		}
	}
	return 0;
}

struct member {
	cJSON *c;
	size_t pos;
};

/* Sort members by name, then by position. */
static int member_cmp(const void *a, const void *b)
{
	const struct member *x = a, *y = b;
	int c = strcmp(x->c->string, y->c->string);
	if (c)
		return c;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

/* Are object c's member names strictly increasing (sorted, no name
 * twice)? What kvfs and Kvrocks store always is: one pass, no sort. */
static bool members_in_order(const cJSON *c)
{
	for (const cJSON *m = c->child; m && m->next; m = m->next)
		if (strcmp(m->string, m->next->string) >= 0)
			return false;
	return true;
}

/* Object c's members, sorted by name then position, into *v (free it):
 * their count, 0 for fewer than two or members already in order (nothing
 * to order or drop; *v NULL), or -1 out of memory. */
static long members_sorted(cJSON *c, struct member **v)
{
	size_t n = 0;
	*v = NULL;
	if (!cJSON_IsObject(c) || !c->child || !c->child->next || members_in_order(c))
		return 0;
	for (cJSON *m = c->child; m; m = m->next)
		n++;
	if (!(*v = malloc(n * sizeof(**v))))
		return -1;
	n = 0;
	for (cJSON *m = c->child; m; m = m->next, n++)
		(*v)[n] = (struct member){m, n};
	qsort(*v, n, sizeof(**v), member_cmp);
	return (long)n;
}

/*
 * A member name given twice keeps its first value, as Kvrocks's parser
 * (jsoncons, sorting the members by name and then position) does; cJSON
 * keeps both. Sorting a list of the members keeps this O(n log n) for
 * large objects. 0 or -ENOMEM.
 */
static int dedup_members(cJSON *c)
{
	for (; c; c = c->next) {
		struct member *v;
		if (c->child) {
			int rc = dedup_members(c->child);
			if (rc)
				return rc;
		}
		long n = members_sorted(c, &v);
		if (n < 0)
			return -ENOMEM;
		for (long i = 1, keep = 0; i < n; i++) {
			if (strcmp(v[i].c->string, v[keep].c->string) == 0)
				cJSON_Delete(cJSON_DetachItemViaPointer(c, v[i].c));
			else
				keep = i;
		}
		free(v);
	}
	return 0;
}

/*
 * Put every object's members in name order, as Kvrocks stores a document
 * (jsoncons's default `json` keeps members sorted): `{"b":1,"a":2}` is
 * stored as `{"a":2,"b":1}`. Names are unique (dedup_members, edits add
 * only missing names); equal ones would keep their order. Recursion is
 * bounded by the nesting limit doc_payload checks first. 0 or -ENOMEM.
 */
static int sort_members(cJSON *c)
{
	for (; c; c = c->next) {
		struct member *v;
		if (c->child) {
			int rc = sort_members(c->child);
			if (rc)
				return rc;
		}
		long n = members_sorted(c, &v);
		if (n < 0)
			return -ENOMEM;
		if (n == 0)
			continue;
		/* Relink: cJSON's first item's prev is the last one. */
		c->child = v[0].c;
		v[0].c->prev = v[n - 1].c;
		for (long i = 0; i + 1 < n; i++) {
			v[i].c->next = v[i + 1].c;
			v[i + 1].c->prev = v[i].c;
		}
		v[n - 1].c->next = NULL;
		free(v);
	}
	return 0;
}

/*
 * Parse text into values: exactly one (max 1) or one or more (max 0),
 * separated by whitespace. *vals = an array of owned trees (free each
 * with cJSON_Delete, the array with free). -EINVAL with *why and *at set
 * (the caller logs), -ENOMEM.
 */
static int parse_values(const char *s, size_t n, cJSON ***vals, size_t max, size_t *count,
			size_t *at, const char **why)
{
	struct lits l = {0};
	size_t got = 0, cap = 0;
	cJSON **v = NULL;
	size_t i = 0;
	int rc = lex_scan(s, n, &l, at, why);
	if (rc)
		goto fail;
	if (n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0)
		i = 3;
	for (;;) {
		while (i < n && json_is_ws(s[i]))
			i++;
		if (i == n)
			break;
		if (max && got == max) {
			*at = i;
			*why = "text after the value";
			rc = -EINVAL;
			goto fail;
		}
		const char *end = NULL;
		cJSON *c = cJSON_ParseWithLengthOpts(s + i, n - i, &end, false);
		if (!c) {
			const char *e = cJSON_GetErrorPtr();
			*at = e && e >= s && e <= s + n ? (size_t)(e - s) : i;
			*why = "not JSON";
			rc = -EINVAL;
			goto fail;
		}
		rc = attach_lits(c, &l);
		if (rc) {
			cJSON_Delete(c);
			*at = i;
			*why = "numbers do not match the text";
			goto fail;
		}
		if ((rc = dedup_members(c))) {
			cJSON_Delete(c);
			goto fail;
		}
		if (got == cap) {
			cap = cap ? 2 * cap : 4;
			cJSON **nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				cJSON_Delete(c);
				rc = -ENOMEM;
				goto fail;
			}
			v = nv;
		}
		v[got++] = c;
		i = (size_t)(end - s);
	}
	if (got == 0) {
		*at = n;
		*why = "no JSON value";
		rc = -EINVAL;
		goto fail;
	}
	lits_free(&l);
	*vals = v;
	*count = got;
	return 0;
fail:
	for (size_t j = 0; j < got; j++)
		cJSON_Delete(v[j]);
	free(v);
	lits_free(&l);
	return rc;
}

/* One JSON value from text a user gave; logs a refusal once. */
static int parse_one(const char *verb, const struct ks_key *k, const char *s, size_t n, cJSON **out)
{
	size_t at = 0, count;
	const char *why = "";
	cJSON **v;
	int rc = parse_values(s, n, &v, 1, &count, &at, &why);
	if (rc == -EINVAL)
		LOG_ERR("%s '%.*s': not one JSON value: %s at byte %zu", verb, (int)k->klen, k->key,
			why, at);
	if (!rc) {
		*out = v[0];
		free(v);
	}
	return rc;
}

/* ---- Printing -------------------------------------------------------- */

static void nums_raw(cJSON *c, bool raw)
{
	for (; c; c = c->next) {
		int t = c->type & 0xFF;
		if (raw && t == cJSON_Number && c->valuestring)
			c->type = cJSON_Raw;
		else if (!raw && t == cJSON_Raw)
			c->type = cJSON_Number;
		if (c->child)
			nums_raw(c->child, raw);
	}
}

/* Append the compact text of c to out. */
static int print_value(cJSON *c, struct buf *out)
{
	/* cJSON prints c alone (never its siblings): flip c and below. */
	cJSON *next = c->next;
	c->next = NULL;
	nums_raw(c, true);
	char *s = cJSON_PrintUnformatted(c);
	nums_raw(c, false);
	c->next = next;
	if (!s)
		return -ENOMEM;
	int rc = buf_add(out, s, strlen(s));
	cJSON_free(s);
	return rc;
}

static const char *value_type(const cJSON *c)
{
	if (cJSON_IsObject(c))
		return "object";
	if (cJSON_IsArray(c))
		return "array";
	if (cJSON_IsString(c))
		return "string";
	if (cJSON_IsNumber(c))
		return c->valuestring && !lit_is_integer(c->valuestring) ? "number" : "integer";
	if (cJSON_IsBool(c))
		return "boolean";
	return "null";
}

/* ---- Paths ----------------------------------------------------------- */

/* Parse a path a caller gave, logging a refusal once. */
static int path_get(const char *verb, const char *s, size_t n, struct json_path *p)
{
	const char *why = "";
	int rc = json_path_parse(s, n, p, &why);
	if (rc == -EINVAL)
		LOG_ERR("%s: bad JSONPath '%.*s': %s", verb, (int)n, s, why);
	return rc;
}

/* A verb's check of its path before it reads or writes: path_get's
 * answer, logged as it logs. */
static int path_check(const char *verb, const char *s, size_t n)
{
	struct json_path p;
	int rc = path_get(verb, s, n, &p);
	json_path_free(&p);
	return rc;
}

/* The match of path p, which must be of `want` type ("number" takes
 * integers too); a mismatch is logged. */
static int match_of(const char *verb, const struct ks_key *k, cJSON *root,
		    const struct json_path *p, const char *want, cJSON **c)
{
	*c = json_path_find(root, p, p->n);
	if (!*c)
		return -ENOENT;
	const char *t = value_type(*c);
	if (strcmp(t, want) != 0 && !(strcmp(want, "number") == 0 && strcmp(t, "integer") == 0)) {
		LOG_ERR("%s '%.*s': the value is %s %s, not %s %s", verb, (int)k->klen, k->key,
			t[0] == 'a' || t[0] == 'o' || t[0] == 'i' ? "an" : "a", t,
			want[0] == 'a' || want[0] == 'o' ? "an" : "a", want);
		return -EINVAL;
	}
	return 0;
}

/* Put `nw` where `old` is under parent (which keeps its member name:
 * cJSON_ReplaceItemViaPointer does not). Frees old. 0 or -ENOMEM. */
static int replace_item(cJSON *parent, cJSON *old, cJSON *nw)
{
	if (old->string) {
		char *name = strdup(old->string);
		if (!name)
			return -ENOMEM;
		cJSON_free(nw->string);
		nw->string = name;
	}
	return cJSON_ReplaceItemViaPointer(parent, old, nw) ? 0 : -ENOMEM;
}

/* Put nw where c, the match of p in *root, is (for the root path, in
 * place of the whole tree). nw is freed if that fails. */
static int replace_match(cJSON **root, const struct json_path *p, cJSON *c, cJSON *nw)
{
	cJSON *parent = p->n ? json_path_find(*root, p, p->n - 1) : NULL;
	int rc = 0;
	if (!parent) {
		cJSON_Delete(*root);
		*root = nw;
	} else if ((rc = replace_item(parent, c, nw))) {
		cJSON_Delete(nw);
	}
	return rc;
}

/* ---- Stored documents ------------------------------------------------ */

/* The document of a live JSON record as text (format 0: the payload as it
 * is; format 1: converted). */
static int doc_text(const struct ks_key *k, const struct enc_meta *m, struct buf *out)
{
	const unsigned char *t = m->tail;
	buf_reset(out);
	if (m->tail_len == 0 || t[0] > JSON_FORMAT_CBOR) {
		return ks_corrupt(k, "JSON storage format %d is not 0 (text) or 1 (CBOR)",
				  m->tail_len ? t[0] : -1);
	}
	if (t[0] == JSON_FORMAT_TEXT)
		return buf_set(out, t + 1, m->tail_len - 1);
	int rc = json_cbor_to_text(t + 1, m->tail_len - 1, out);
	if (rc == -EUCLEAN)
		ks_corrupt(k, "a JSON CBOR document of %zu bytes that does not decode",
			   m->tail_len - 1);
	return rc;
}

/* Parse the document of k, whose live record m holds. */
static int doc_parse(const struct ks_key *k, const struct enc_meta *m, cJSON **root)
{
	struct buf text = BUF_INIT;
	size_t at = 0, count;
	const char *why = "";
	cJSON **v;
	*root = NULL;
	int rc = doc_text(k, m, &text);
	if (!rc) {
		rc = parse_values(text.data, text.len, &v, 1, &count, &at, &why);
		if (!rc) {
			*root = v[0];
			free(v);
		}
		if (rc == -EINVAL)
			rc = ks_corrupt(k, "the stored JSON document is not JSON: %s at byte %zu",
					why, at);
	}
	buf_release(&text);
	return rc;
}

/* Read and parse the document of k. raw and m as ks_meta_get's. */
static int doc_load(struct keyspace *ks, const struct ks_key *k, struct buf *raw,
		    struct enc_meta *m, cJSON **root)
{
	*root = NULL;
	int rc = ks_meta_get(ks, k, KV_TYPE_JSON, raw, m);
	return rc ? rc : doc_parse(k, m, root);
}

/* How deep containers nest at c: 0 for a scalar, 1 for [] or {}, ... */
static size_t tree_depth(const cJSON *c)
{
	size_t most = 0;
	if (!cJSON_IsArray(c) && !cJSON_IsObject(c))
		return 0;
	for (const cJSON *x = c->child; x; x = x->next) {
		size_t d = tree_depth(x);
		if (d > most)
			most = d;
	}
	return most + 1;
}

/*
 * The record tail of document `root` of k: the format byte, then its
 * text. A tree an edit nested deeper than cJSON parses (a deep value put
 * at a deep path) is refused, -EINVAL: stored, it could not be read back.
 */
static int doc_payload(const struct ks_key *k, cJSON *root, struct buf *payload)
{
	size_t depth = tree_depth(root);
	if (depth > CJSON_NESTING_LIMIT) {
		LOG_ERR("'%.*s': the document would nest %zu levels deep, past the %d JSON "
			"text can be read back with",
			(int)k->klen, k->key, depth, CJSON_NESTING_LIMIT);
		return -EINVAL;
	}
	buf_reset(payload);
	int rc = sort_members(root);
	if (!rc)
		rc = buf_add_u8(payload, JSON_FORMAT_TEXT);
	if (!rc)
		rc = print_value(root, payload);
	if (!rc && payload->len - 1 > JSON_MAX)
		rc = -EFBIG;
	return rc;
}

/* ---- Verbs ----------------------------------------------------------- */

/*
 * Load k's document and find every match of indefinite path p, in
 * JSON.GET's order, duplicates kept. Members are put in name order first,
 * as Kvrocks holds them (a document stored in written order by an older
 * kvfs matches as Kvrocks would match it). *doc: free with cJSON_Delete;
 * *m: free.
 */
static int doc_matches(struct keyspace *ks, const struct ks_key *k, const char *verb,
		       const struct json_path *p, cJSON **doc, cJSON ***m, size_t *n)
{
	struct buf raw = BUF_INIT;
	struct enc_meta meta;
	*m = NULL;
	*n = 0;
	int rc = doc_load(ks, k, &raw, &meta, doc);
	if (!rc)
		rc = sort_members(*doc);
	if (!rc)
		rc = json_path_select(*doc, p, m, n);
	if (rc == -E2BIG)
		LOG_ERR("%s '%.*s': the path matches more than %u values or takes more than %u "
			"steps",
			verb, (int)k->klen, k->key, JSON_PATH_MAX_MATCHES, JSON_PATH_MAX_WORK);
	if (rc) {
		cJSON_Delete(*doc);
		*doc = NULL;
	}
	buf_release(&raw);
	return rc;
}

/*
 * Read-only verbs: the value `path` matches in k's document, as a tree of
 * that value alone (*root, free with cJSON_Delete; NULL with type_only,
 * which only sets *type). A match of another type than `want` (non-NULL)
 * is -EINVAL, logged.
 */
static int find_ro(struct keyspace *ks, const struct ks_key *k, const char *verb, const char *path,
		   size_t plen, cJSON **root, const char *want, const char **type)
{
	struct buf raw = BUF_INIT, conv = BUF_INIT;
	struct enc_meta m;
	struct json_path p;
	const char *text = NULL;
	size_t tlen = 0, start, len;
	*root = NULL;
	int rc = path_get(verb, path, plen, &p);
	if (rc)
		return rc;
	if (!p.definite) {
		/* The first match answers. */
		cJSON *doc, **mv;
		size_t nm;
		rc = doc_matches(ks, k, verb, &p, &doc, &mv, &nm);
		if (!rc && nm == 0)
			rc = -ENOENT;
		if (!rc && !(*root = cJSON_Duplicate(mv[0], true)))
			rc = -ENOMEM;
		free(mv);
		cJSON_Delete(doc);
		goto found;
	}
	rc = ks_meta_get(ks, k, KV_TYPE_JSON, &raw, &m);
	if (!rc && m.tail_len && ((const unsigned char *)m.tail)[0] == JSON_FORMAT_TEXT) {
		text = (const char *)m.tail + 1;
		tlen = m.tail_len - 1;
	} else if (!rc) {
		rc = doc_text(k, &m, &conv);
		text = conv.data;
		tlen = conv.len;
	}
	if (!rc)
		rc = json_scan_path(text, tlen, &p, &start, &len);
	if (rc == -EINVAL) {
		/* Text the scan does not follow: the full parse says why. */
		cJSON *doc;
		rc = doc_load(ks, k, &raw, &m, &doc);
		cJSON *c = rc ? NULL : json_path_find(doc, &p, p.n);
		if (!rc && !c)
			rc = -ENOENT;
		if (c && doc != c) {
			c = cJSON_DetachItemViaPointer(json_path_find(doc, &p, p.n - 1), c);
			cJSON_Delete(doc);
			doc = c;
		}
		*root = doc;
	} else if (!rc) {
		size_t at, count;
		const char *why;
		cJSON **v;
		if (type && !want) {
			*type = json_span_type(text + start, len);
			goto out;
		}
		rc = parse_values(text + start, len, &v, 1, &count, &at, &why);
		if (rc == -EINVAL)
			rc = ks_corrupt(k, "the stored JSON document is not JSON: %s at byte %zu",
					why, start + at);
		if (!rc) {
			*root = v[0];
			free(v);
		}
	}
found:
	if (!rc && type)
		*type = value_type(*root);
	if (!rc && want) {
		struct json_path none = {0};
		cJSON *c;
		rc = match_of(verb, k, *root, &none, want, &c);
	}
	if (rc) {
		cJSON_Delete(*root);
		*root = NULL;
	}
out:
	json_path_free(&p);
	buf_release(&raw);
	buf_release(&conv);
	return rc;
}

/*
 * The matches of an indefinite path (or any path) of k, each shown by
 * `show` into out after `open`, separated by `sep`, before `close`
 * (JSON.GET's array; JSON.TYPE's and JSON.OBJKEYS's lines). Returns the
 * count of matches.
 */
typedef int (*show_fn)(cJSON *c, struct buf *out);

static size_t count_lines(const struct buf *b)
{
	size_t n = 0;
	for (size_t i = 0; i < b->len; i++)
		n += b->data[i] == '\n';
	return n;
}

static int matches_show(struct keyspace *ks, const struct ks_key *k, const char *verb,
			const char *path, size_t plen, const char *open, const char *sep,
			const char *close, show_fn show, struct buf *out)
{
	struct json_path p;
	cJSON *doc = NULL, **mv = NULL;
	size_t nm = 0;
	buf_reset(out);
	int rc = path_get(verb, path, plen, &p);
	if (!rc)
		rc = doc_matches(ks, k, verb, &p, &doc, &mv, &nm);
	if (!rc)
		rc = buf_add(out, open, strlen(open));
	for (size_t i = 0; i < nm && !rc; i++) {
		if (i)
			rc = buf_add(out, sep, strlen(sep));
		if (!rc)
			rc = show(mv[i], out);
		if (!rc && out->len > JSON_MAX) {
			LOG_ERR("%s '%.*s': the answer passes %llu bytes", verb, (int)k->klen,
				k->key, (unsigned long long)JSON_MAX);
			rc = -EFBIG;
		}
	}
	if (!rc)
		rc = buf_add(out, close, strlen(close));
	free(mv);
	cJSON_Delete(doc);
	json_path_free(&p);
	if (rc)
		buf_reset(out);
	return rc ? rc : (int)(nm > INT32_MAX ? INT32_MAX : nm);
}

static int get_all(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		   struct buf *out)
{
	int rc = matches_show(ks, k, "JSON.GET", path, plen, "[", ",", "]", print_value, out);
	return rc < 0 ? rc : 0;
}

static int show_type(cJSON *c, struct buf *out)
{
	const char *t = value_type(c);
	return buf_add(out, t, strlen(t));
}

/* One line per match of path (show writes it): the number of lines. */
static int show_lines(struct keyspace *ks, const struct ks_key *k, const char *verb,
		      const char *path, size_t plen, int (*show)(cJSON *, struct buf *),
		      struct buf *out)
{
	int rc = matches_show(ks, k, verb, path, plen, "", "\n", "", show, out);
	if (rc > 0 && !(rc = buf_add(out, "\n", 1)))
		rc = (int)count_lines(out);
	return rc;
}

int json_types(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
	       struct buf *out)
{
	return show_lines(ks, k, "JSON.TYPE", path, plen, show_type, out);
}

static int show_keys(cJSON *c, struct buf *out)
{
	if (!cJSON_IsObject(c))
		return buf_add(out, "null", 4);
	cJSON *names = cJSON_CreateArray();
	int rc = names ? 0 : -ENOMEM;
	for (cJSON *m = c->child; m && !rc; m = m->next) {
		cJSON *n = cJSON_CreateString(m->string);
		if (!n || !cJSON_AddItemToArray(names, n)) {
			cJSON_Delete(n);
			rc = -ENOMEM;
		}
	}
	if (!rc)
		rc = print_value(names, out);
	cJSON_Delete(names);
	return rc;
}

int json_objkeys_each(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		      struct buf *out)
{
	return show_lines(ks, k, "JSON.OBJKEYS", path, plen, show_keys, out);
}

int json_get(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
	     struct buf *out)
{
	cJSON *root;
	buf_reset(out);
	if (plen == 1 && path[0] == '$') {
		/* The whole document: no parse. */
		struct store_value *v;
		struct enc_meta m;
		int rc = ks_meta_pin(ks, k, KV_TYPE_JSON, &v, &m);
		if (!rc) {
			rc = doc_text(k, &m, out);
			store_value_free(v);
		}
		return rc;
	}
	if (!json_path_is_definite(path, plen))
		return get_all(ks, k, path, plen, out);
	int rc = find_ro(ks, k, "JSON.GET", path, plen, &root, NULL, NULL);
	if (!rc)
		rc = print_value(root, out);
	cJSON_Delete(root);
	return rc;
}

int json_text_len(struct keyspace *ks, const struct ks_key *k, uint64_t *len)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	uint64_t vlen;
	int rc = ks_meta_head(ks, k, KV_TYPE_JSON, &raw, &m, &vlen);
	if (!rc && m.tail_len && ((const unsigned char *)m.tail)[0] == JSON_FORMAT_TEXT) {
		*len = vlen - (uint64_t)((const char *)m.tail - raw.data) - 1;
	} else if (!rc) {
		rc = json_get(ks, k, "$", 1, &raw);
		*len = raw.len;
	}
	buf_release(&raw);
	return rc;
}

/*
 * The body of every write, one transaction: load the document (or, with
 * `create` and the root path, start from none: a missing key or a
 * remembered empty document), let `edit` change the tree, and store the
 * result with the header as read. edit gets c, the match of the path
 * (NULL: none), which must be of type `want` unless that is NULL
 * (match_of); it may replace *root; setting *root to NULL deletes the key.
 * That is for a definite path; for an indefinite one, `all` says what to
 * do at each match (edit_all) and edit is not called (doc_edit_multi).
 */
typedef int (*edit_fn)(cJSON **root, const struct json_path *p, cJSON *c, void *arg);

/* An indefinite path's change of one match c, a value under parent (a
 * match is never the root). It may replace or remove c. */
typedef int (*apply_fn)(cJSON *parent, cJSON *c, void *arg);

/* Is value c of type `want` ("number" takes integers too)? */
static bool type_is(const cJSON *c, const char *want)
{
	const char *t = value_type(c);
	return strcmp(t, want) == 0 || (strcmp(want, "number") == 0 && strcmp(t, "integer") == 0);
}

/* A walk of the document applying a change to every match of an
 * indefinite path. The matches are found first (m, sorted by address for
 * lookups); the walk then goes in document order and holds pointers, not
 * indexes, so removing several elements of one array removes the right
 * ones. `whole`: a match is replaced or removed whole (SET, DEL), so
 * matches inside it are not visited (DEL counts them, as Kvrocks does). */
struct walk {
	cJSON **m;
	size_t nm;
	const char *want;
	bool whole, del;
	apply_fn apply;
	void *arg;
	uint64_t done, skipped;
	int rc;
};

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t) * (cJSON *const *)a, y = (uintptr_t) * (cJSON *const *)b;
	return x < y ? -1 : x > y;
}

static bool walk_is_match(const struct walk *w, cJSON *c)
{
	return bsearch(&c, w->m, w->nm, sizeof(*w->m), ptr_cmp) != NULL;
}

/* How many matches lie inside c. */
static uint64_t walk_inside(const struct walk *w, cJSON *c)
{
	uint64_t n = 0;
	for (cJSON *x = c->child; x; x = x->next)
		n += walk_is_match(w, x) + walk_inside(w, x);
	return n;
}

static void walk_apply(struct walk *w, cJSON *parent)
{
	cJSON *next;
	for (cJSON *c = parent->child; c && !w->rc; c = next) {
		next = c->next; /* c may be replaced or removed */
		bool hit = walk_is_match(w, c);
		if (hit && w->whole) {
			w->done += 1 + (w->del ? walk_inside(w, c) : 0);
			w->rc = w->apply(parent, c, w->arg);
			continue;
		}
		if (c->child)
			walk_apply(w, c);
		if (!hit || w->rc)
			continue;
		if (w->want && !type_is(c, w->want)) {
			w->skipped++;
			continue;
		}
		w->done++;
		w->rc = w->apply(parent, c, w->arg);
	}
}

/* The matches of indefinite path p in root, each once. */
static int select_unique(const char *verb, const struct ks_key *k, cJSON *root,
			 const struct json_path *p, cJSON ***m, size_t *n)
{
	int rc = json_path_select(root, p, m, n);
	if (rc == -E2BIG)
		LOG_ERR("%s '%.*s': the path matches more than %u values or takes more than %u "
			"steps",
			verb, (int)k->klen, k->key, JSON_PATH_MAX_MATCHES, JSON_PATH_MAX_WORK);
	if (rc || *n < 2)
		return rc;
	qsort(*m, *n, sizeof(**m), ptr_cmp);
	size_t u = 1;
	for (size_t i = 1; i < *n; i++)
		if ((*m)[i] != (*m)[u - 1])
			(*m)[u++] = (*m)[i];
	*n = u;
	return 0;
}

/* What a verb does to the matches of an indefinite path; each: how many
 * bytes of text it may add at each (the copies are bounded before they
 * are made). */
struct multi {
	apply_fn apply;
	bool whole, del;
	uint64_t *done;
	size_t each;
};

/* doc_edit's body for an indefinite path: apply to every match. */
static int edit_all(const char *verb, const struct ks_key *k, cJSON *root,
		    const struct json_path *p, const char *want, const struct multi *all, void *arg)
{
	struct walk w = {
	    .want = want, .whole = all->whole, .del = all->del, .apply = all->apply, .arg = arg};
	int rc = select_unique(verb, k, root, p, &w.m, &w.nm);
	if (!rc && w.nm == 0)
		rc = -ENOENT; /* an indefinite path creates nothing */
	if (!rc && all->each && w.nm > JSON_MAX / all->each) {
		LOG_ERR("%s '%.*s': %zu copies of %zu bytes would pass %llu bytes", verb,
			(int)k->klen, k->key, w.nm, all->each, (unsigned long long)JSON_MAX);
		rc = -EFBIG;
	}
	if (!rc) {
		walk_apply(&w, root);
		rc = w.rc;
	}
	if (!rc && w.done == 0 && want) {
		LOG_ERR("%s '%.*s': no match of the path is %s %s", verb, (int)k->klen, k->key,
			want[0] == 'a' || want[0] == 'o' ? "an" : "a", want);
		rc = -EINVAL;
	}
	if (all->done)
		*all->done = w.done;
	free(w.m);
	return rc;
}

static int doc_edit_multi(struct keyspace *ks, const struct ks_key *k, const char *verb,
			  const char *path, size_t plen, bool create, const char *want,
			  edit_fn edit, const struct multi *all, void *arg);

static int doc_edit_multi(struct keyspace *ks, const struct ks_key *k, const char *verb,
			  const char *path, size_t plen, bool create, const char *want,
			  edit_fn edit, const struct multi *all, void *arg)
{
	struct buf payload = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	struct json_path p;
	cJSON *root = NULL, *c = NULL;
	int rc = path_get(verb, path, plen, &p);
	if (rc)
		return rc;
	ks_txn_begin(&t, ks, k);
	if (create && p.n == 0)
		rc = ks_txn_open(&t, k, KV_TYPE_JSON, &m);
	else
		rc = ks_txn_get(&t, k, KV_TYPE_JSON, &m);
	if (!rc && !ks_txn_is_new(&t, k))
		rc = doc_parse(k, m, &root);
	if (!rc && !p.definite) {
		/* Matched in the stored order, which is name order. */
		rc = all ? sort_members(root) : -EINVAL;
		if (!rc)
			rc = edit_all(verb, k, root, &p, want, all, arg);
	} else if (!rc && want) {
		rc = match_of(verb, k, root, &p, want, &c);
	} else if (!rc && root) {
		c = json_path_find(root, &p, p.n);
	}
	if (!rc && p.definite)
		rc = edit(&root, &p, c, arg);
	if (!rc && root)
		rc = doc_payload(k, root, &payload);
	if (!rc) {
		if (root)
			ks_txn_meta_put(&t, k, payload.data, payload.len);
		else
			ks_txn_delete(&t, k, 0);
		rc = ks_txn_commit(&t);
	}
	cJSON_Delete(root);
	buf_release(&payload);
	json_path_free(&p);
	return ks_txn_end(&t, rc);
}

struct set_arg {
	cJSON *value;
	unsigned flags;
};

static int edit_set(cJSON **root, const struct json_path *p, cJSON *old, void *arg)
{
	struct set_arg *a = arg;
	if ((a->flags & JSON_SET_NX) && old)
		return -EEXIST;
	if ((a->flags & JSON_SET_XX) && !old)
		return -ENOENT;
	if (p->n == 0) {
		cJSON_Delete(*root);
		*root = a->value;
	} else if (old) {
		int rc = replace_item(json_path_find(*root, p, p->n - 1), old, a->value);
		if (rc)
			return rc;
	} else {
		cJSON *parent = json_path_find(*root, p, p->n - 1);
		const struct json_step *last = &p->v[p->n - 1];
		if (!parent || last->index || !cJSON_IsObject(parent))
			return -ENOENT;
		if (!cJSON_AddItemToObject(parent, last->name, a->value))
			return -ENOMEM;
	}
	a->value = NULL; /* the tree owns it */
	return 0;
}

/* SET at one match of an indefinite path: a copy of the value each. */
static int apply_set(cJSON *parent, cJSON *c, void *arg)
{
	struct set_arg *a = arg;
	if (a->flags & JSON_SET_NX)
		return -EEXIST;
	cJSON *nw = cJSON_Duplicate(a->value, true);
	if (!nw)
		return -ENOMEM;
	int rc = replace_item(parent, c, nw);
	if (rc)
		cJSON_Delete(nw);
	return rc;
}

int json_set(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
	     const char *text, size_t n, unsigned flags)
{
	struct set_arg a = {.flags = flags};
	const struct multi all = {apply_set, true, false, NULL, n};
	if (n > JSON_MAX)
		return -EFBIG;
	int rc = path_check("JSON.SET", path, plen);
	if (!rc)
		rc = parse_one("JSON.SET", k, text, n, &a.value);
	if (!rc)
		rc = doc_edit_multi(ks, k, "JSON.SET", path, plen, true, NULL, edit_set, &all, &a);
	cJSON_Delete(a.value);
	return rc;
}

static int edit_del(cJSON **root, const struct json_path *p, cJSON *c, void *arg)
{
	(void)arg;
	if (!c)
		return -ENOENT;
	if (p->n == 0) {
		cJSON_Delete(*root);
		*root = NULL; /* the key goes */
		return 0;
	}
	cJSON_Delete(cJSON_DetachItemViaPointer(json_path_find(*root, p, p->n - 1), c));
	return 0;
}

static int apply_del(cJSON *parent, cJSON *c, void *arg)
{
	(void)arg;
	cJSON_Delete(cJSON_DetachItemViaPointer(parent, c));
	return 0;
}

int json_del_count(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		   uint64_t *count)
{
	const struct multi all = {apply_del, true, true, count, 0};
	*count = 0;
	int rc = doc_edit_multi(ks, k, "JSON.DEL", path, plen, false, NULL, edit_del, &all, NULL);
	if (!rc && json_path_is_definite(path, plen))
		*count = 1;
	return rc;
}

int json_del(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen)
{
	uint64_t count;
	return json_del_count(ks, k, path, plen, &count);
}

int json_type(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
	      const char **name)
{
	cJSON *root;
	int rc = find_ro(ks, k, "JSON.TYPE", path, plen, &root, NULL, name);
	cJSON_Delete(root);
	return rc;
}

struct append_arg {
	cJSON **vals;
	size_t n;
	uint64_t len;
};

static int edit_arrappend(cJSON **root, const struct json_path *p, cJSON *c, void *arg)
{
	(void)root;
	(void)p;
	struct append_arg *a = arg;
	for (size_t i = 0; i < a->n; i++) {
		if (!cJSON_AddItemToArray(c, a->vals[i]))
			return -ENOMEM; /* the rest is freed by the caller */
		a->vals[i] = NULL;
	}
	a->len = (uint64_t)cJSON_GetArraySize(c);
	return 0;
}

/* ARRAPPEND at one match of an indefinite path: copies of the values. */
static int apply_arrappend(cJSON *parent, cJSON *c, void *arg)
{
	(void)parent;
	struct append_arg *a = arg;
	for (size_t i = 0; i < a->n; i++) {
		cJSON *v = cJSON_Duplicate(a->vals[i], true);
		if (!v || !cJSON_AddItemToArray(c, v)) {
			cJSON_Delete(v);
			return -ENOMEM;
		}
	}
	a->len = (uint64_t)cJSON_GetArraySize(c);
	return 0;
}

int json_arrappend(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		   const char *text, size_t n, uint64_t *newlen)
{
	struct append_arg a = {0};
	const struct multi all = {apply_arrappend, false, false, NULL, n};
	size_t at = 0;
	const char *why = "";
	int rc = path_check("JSON.ARRAPPEND", path, plen);
	if (rc)
		return rc;
	rc = parse_values(text, n, &a.vals, 0, &a.n, &at, &why);
	if (rc == -EINVAL)
		LOG_ERR("JSON.ARRAPPEND '%.*s': not JSON values: %s at byte %zu", (int)k->klen,
			k->key, why, at);
	if (!rc)
		rc = doc_edit_multi(ks, k, "JSON.ARRAPPEND", path, plen, false, "array",
				    edit_arrappend, &all, &a);
	if (!rc)
		*newlen = a.len;
	for (size_t i = 0; i < a.n; i++)
		cJSON_Delete(a.vals[i]);
	free(a.vals);
	return rc;
}

struct str_arg {
	cJSON *value;
	uint64_t len;
};

static int edit_strappend(cJSON **root, const struct json_path *p, cJSON *c, void *arg)
{
	struct str_arg *a = arg;
	int rc;
	size_t n1 = strlen(c->valuestring), n2 = strlen(a->value->valuestring);
	char *s = malloc(n1 + n2 + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, c->valuestring, n1);
	memcpy(s + n1, a->value->valuestring, n2 + 1);
	cJSON *ns = cJSON_CreateString("");
	if (!ns) {
		free(s);
		return -ENOMEM;
	}
	cJSON_free(ns->valuestring);
	ns->valuestring = s;
	if ((rc = replace_match(root, p, c, ns)))
		return rc;
	a->len = n1 + n2;
	return 0;
}

/* STRAPPEND at one match of an indefinite path, in place. */
static int apply_strappend(cJSON *parent, cJSON *c, void *arg)
{
	(void)parent;
	struct str_arg *a = arg;
	size_t n1 = strlen(c->valuestring), n2 = strlen(a->value->valuestring);
	char *s = malloc(n1 + n2 + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, c->valuestring, n1);
	memcpy(s + n1, a->value->valuestring, n2 + 1);
	cJSON_free(c->valuestring);
	c->valuestring = s;
	a->len = n1 + n2;
	return 0;
}

int json_strappend(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		   const char *text, size_t n, uint64_t *newlen)
{
	struct str_arg a = {0};
	const struct multi all = {apply_strappend, false, false, NULL, n};
	int rc = path_check("JSON.STRAPPEND", path, plen);
	if (!rc)
		rc = parse_one("JSON.STRAPPEND", k, text, n, &a.value);
	if (!rc && !cJSON_IsString(a.value)) {
		LOG_ERR("JSON.STRAPPEND '%.*s': the value to append is not a JSON string",
			(int)k->klen, k->key);
		rc = -EINVAL;
	}
	if (!rc)
		rc = doc_edit_multi(ks, k, "JSON.STRAPPEND", path, plen, false, "string",
				    edit_strappend, &all, &a);
	if (!rc)
		*newlen = a.len;
	cJSON_Delete(a.value);
	return rc;
}

struct incr_arg {
	const struct ks_key *k; /* for the log */
	const char *by;		/* canonical literal of the increment */
	struct buf *out;
};

/* The literal of number c plus the increment. */
static int incr_lit(const struct incr_arg *a, const cJSON *c, char lit[40])
{
	int64_t x, y, z;
	const char *cur = c->valuestring;
	if (lit_is_integer(cur) && lit_is_integer(a->by) && !parse_i64(cur, strlen(cur), &x) &&
	    !parse_i64(a->by, strlen(a->by), &y)) {
		if (__builtin_add_overflow(x, y, &z)) {
			LOG_ERR("JSON.NUMINCRBY '%.*s': %s + %s is out of 64-bit range",
				(int)a->k->klen, a->k->key, cur, a->by);
			return -EOVERFLOW;
		}
		snprintf(lit, 40, "%lld", (long long)z);
	} else {
		double d = strtod(cur, NULL) + strtod(a->by, NULL);
		if (!isfinite(d)) {
			LOG_ERR("JSON.NUMINCRBY '%.*s': %s + %s is not a finite number",
				(int)a->k->klen, a->k->key, cur, a->by);
			return -EOVERFLOW;
		}
		json_fmt_double(d, lit);
	}
	return 0;
}

/* NUMINCRBY at one match, in place (the number's text and value). */
static int apply_numincrby(cJSON *parent, cJSON *c, void *arg)
{
	(void)parent;
	struct incr_arg *a = arg;
	char lit[40];
	int rc = incr_lit(a, c, lit);
	if (rc)
		return rc;
	char *dup = strdup(lit);
	if (!dup)
		return -ENOMEM;
	free(c->valuestring);
	c->valuestring = dup;
	cJSON_SetNumberHelper(c, strtod(lit, NULL));
	return a->out ? buf_set(a->out, lit, strlen(lit)) : 0;
}

static int edit_numincrby(cJSON **root, const struct json_path *p, cJSON *c, void *arg)
{
	(void)root;
	(void)p;
	return apply_numincrby(NULL, c, arg);
}

int json_numincrby(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		   const char *text, size_t n, struct buf *out)
{
	const struct multi all = {apply_numincrby, false, false, NULL, 0};
	cJSON *v = NULL;
	int rc = path_check("JSON.NUMINCRBY", path, plen);
	if (!rc)
		rc = parse_one("JSON.NUMINCRBY", k, text, n, &v);
	if (!rc && !cJSON_IsNumber(v)) {
		LOG_ERR("JSON.NUMINCRBY '%.*s': the increment is not a number", (int)k->klen,
			k->key);
		rc = -EINVAL;
	}
	if (!rc) {
		struct incr_arg a = {k, v->valuestring, out};
		rc = doc_edit_multi(ks, k, "JSON.NUMINCRBY", path, plen, false, "number",
				    edit_numincrby, &all, &a);
	}
	cJSON_Delete(v);
	return rc;
}

int json_objkeys(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen,
		 struct buf *out)
{
	cJSON *root;
	int count = 0;
	buf_reset(out);
	int rc = find_ro(ks, k, "JSON.OBJKEYS", path, plen, &root, "object", NULL);
	for (cJSON *m = rc ? NULL : root->child; m && !rc; m = m->next, count++)
		rc = buf_add(out, m->string, strlen(m->string) + 1);
	cJSON_Delete(root);
	return rc ? rc : count;
}

/* ---- The file system's helpers ---------------------------------------- */

int json_clear(struct keyspace *ks, const struct ks_key *k)
{
	struct ks_txn t;
	struct enc_meta *m;
	struct ks_info info;
	uint64_t vlen;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_head(&t, k, KV_TYPE_JSON, &m, &vlen);
	if (rc == -ENOENT) {
		/* A remembered empty document stays as it is. */
		rc = ks_txn_lookup(&t, k, &info);
		if (!rc && (!info.empty || info.type != KV_TYPE_JSON))
			rc = info.type == KV_TYPE_JSON ? -ENOENT : -KV_EWRONGTYPE;
		return ks_txn_end(&t, rc);
	}
	if (!rc && m->expire_ms) {
		LOG_ERR("JSON key '%.*s' has an expiry: it cannot become an empty document "
			"(an empty key has no record to carry it)",
			(int)k->klen, k->key);
		rc = -EINVAL;
	}
	if (!rc) {
		ks_txn_delete(&t, k, KS_TXN_KEEP_EMPTY);
		rc = ks_txn_commit(&t);
	}
	return ks_txn_end(&t, rc);
}

int json_from_string(struct keyspace *ks, const struct ks_key *k)
{
	struct buf payload = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	cJSON *root = NULL;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_STRING, &m);
	if (rc)
		return ks_txn_end(&t, rc);
	bool v1 = m->v1;
	uint64_t expire = m->expire_ms;
	if (m->tail_len == 0 && expire) {
		LOG_ERR("'%.*s' is empty and has an expiry: an empty JSON key has no "
			"record to carry it",
			(int)k->klen, k->key);
		rc = -EINVAL;
	} else if (m->tail_len) {
		rc = parse_one("JSON from string", k, (const char *)m->tail, m->tail_len, &root);
		if (!rc)
			rc = doc_payload(k, root, &payload);
	}
	if (!rc)
		rc = ks_txn_renew(&t, k, KV_TYPE_JSON, &m);
	if (!rc) {
		if (root) {
			m->v1 = v1;
			m->expire_ms = expire;
			ks_txn_meta_put(&t, k, payload.data, payload.len);
		} else {
			/* An empty string: a remembered empty document. */
			ks_txn_delete(&t, k, KS_TXN_KEEP_EMPTY);
		}
		rc = ks_txn_commit(&t);
	}
	cJSON_Delete(root);
	buf_release(&payload);
	return ks_txn_end(&t, rc);
}

int json_to_string(struct keyspace *ks, const struct ks_key *k, unsigned flags)
{
	struct buf text = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	struct ks_info info;
	bool v1 = true;
	uint64_t expire = 0;

	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_JSON, &m);
	if (rc == -ENOENT) {
		/* A remembered empty document becomes an empty string. */
		rc = ks_txn_lookup(&t, k, &info);
		if (!rc && (!info.empty || info.type != KV_TYPE_JSON))
			rc = -KV_EWRONGTYPE;
	} else if (!rc) {
		v1 = m->v1;
		expire = m->expire_ms;
		rc = doc_text(k, m, &text);
		if (!rc && (flags & JSON_NEWLINE))
			rc = buf_add(&text, "\n", 1);
	}
	if (!rc)
		rc = ks_txn_renew(&t, k, KV_TYPE_STRING, &m);
	if (!rc) {
		m->v1 = v1;
		m->expire_ms = expire;
		ks_txn_meta_put(&t, k, text.data, text.len);
		rc = ks_txn_commit(&t);
	}
	buf_release(&text);
	return ks_txn_end(&t, rc);
}

/* ---- For t_json_tree.c (t_json_int.h) -------------------------------- */

int json_tree_doc_edit(struct keyspace *ks, const struct ks_key *k,
		       int (*edit)(cJSON *root, void *arg), void *arg)
{
	struct buf payload = BUF_INIT;
	struct ks_txn t;
	struct enc_meta *m;
	cJSON *root = NULL;
	ks_txn_begin(&t, ks, k);
	int rc = ks_txn_get(&t, k, KV_TYPE_JSON, &m);
	if (!rc)
		rc = doc_parse(k, m, &root);
	if (!rc)
		rc = edit(root, arg);
	if (!rc)
		rc = doc_payload(k, root, &payload);
	if (!rc) {
		ks_txn_meta_put(&t, k, payload.data, payload.len);
		rc = ks_txn_commit(&t);
	}
	cJSON_Delete(root);
	buf_release(&payload);
	return ks_txn_end(&t, rc);
}

int json_tree_doc_load(struct keyspace *ks, const struct ks_key *k, cJSON **root)
{
	struct buf raw = BUF_INIT;
	struct enc_meta m;
	int rc = doc_load(ks, k, &raw, &m, root);
	buf_release(&raw);
	return rc;
}

int json_tree_parse(const char *verb, const struct ks_key *k, const char *s, size_t n, cJSON **out)
{
	return parse_one(verb, k, s, n, out);
}

int json_tree_print(cJSON *c, struct buf *out)
{
	return print_value(c, out);
}

const char *json_tree_type(const cJSON *c)
{
	return value_type(c);
}
