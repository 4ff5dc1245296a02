/*
 * t_json_path: the JSONPath of t_json.h: parsing, finding a definite
 * path's value in a cJSON tree or in stored JSON text (a scan that builds
 * no tree), and evaluating any path, wildcards, `..`, unions, slices and
 * filters included, as Kvrocks's JSONPath (jsoncons 0.177) does. Part of
 * the JSON module (t_json_int.h). Layer: types.
 */
#include "types/t_json.h"
#include "types/t_json_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- Filters ----------------------------------------------------------- */

enum jx_op { JX_OR, JX_AND, JX_EQ, JX_NE, JX_LT, JX_LE, JX_GT, JX_GE, JX_NOT, JX_PATH, JX_LIT };

/* A filter expression node. JX_PATH: a definite path from `@` (the value
 * tested) or `$` (the document); JX_LIT: a JSON literal. */
struct json_expr {
	enum jx_op op;
	struct json_expr *a, *b;
	bool from_root;
	struct json_path rel;
	cJSON *lit;
};

enum json_sel_kind {
	JSON_SEL_NAME,
	JSON_SEL_INDEX,
	JSON_SEL_SLICE,
	JSON_SEL_WILD,
	JSON_SEL_FILTER
};

/* One element of a bracket union. A slice is [start:stop:step], each part
 * optional (has_start, has_stop), step 1 by default and never 0. */
struct json_sel {
	enum json_sel_kind kind;
	char *name;
	int64_t i, stop, step;
	bool has_start, has_stop;
	struct json_expr *filter;
};

static void expr_free(struct json_expr *x)
{
	if (!x)
		return;
	expr_free(x->a);
	expr_free(x->b);
	json_path_free(&x->rel);
	cJSON_Delete(x->lit);
	free(x);
}

/* ---- Parsing ------------------------------------------------------------ */

void json_path_free(struct json_path *p)
{
	for (size_t i = 0; i < p->n; i++) {
		struct json_step *s = &p->v[i];
		free(s->name);
		for (size_t j = 0; j < s->nsel; j++) {
			free(s->sel[j].name);
			expr_free(s->sel[j].filter);
		}
		free(s->sel);
	}
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

/* A new step of `kind` at the end of p (zeroed), or NULL out of memory. */
static struct json_step *path_add(struct json_path *p, enum json_step_kind kind)
{
	struct json_step *v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return NULL;
	p->v = v;
	memset(&v[p->n], 0, sizeof(v[0]));
	v[p->n].kind = kind;
	v[p->n].index = kind == JSON_STEP_INDEX;
	if (kind != JSON_STEP_NAME && kind != JSON_STEP_INDEX)
		p->definite = false;
	return &v[p->n++];
}

static int path_push(struct json_path *p, bool index, int64_t i, const char *name, size_t nn)
{
	if (!index && memchr(name, '\0', nn))
		return -EINVAL;
	struct json_step *s = path_add(p, index ? JSON_STEP_INDEX : JSON_STEP_NAME);
	if (!s)
		return -ENOMEM;
	s->i = i;
	if (!index && !(s->name = strndup(name, nn)))
		return -ENOMEM;
	return 0;
}

/* The parser's state: the text, where it is, why it failed. */
struct pp {
	const char *s;
	size_t n, i;
	const char **why;
	int nest;
};

static void pp_ws(struct pp *x)
{
	while (x->i < x->n && json_is_ws(x->s[x->i]))
		x->i++;
}

static int pp_fail(struct pp *x, const char *why)
{
	*x->why = why;
	return -EINVAL;
}

/* A quoted name at s[i] ('...' or "..."; a backslash takes the next byte
 * as it is) into *out (malloc'd, NUL-terminated). */
static int pp_quoted(struct pp *x, char **out)
{
	char q = x->s[x->i];
	struct buf name = BUF_INIT;
	int rc = 0;
	for (x->i++; x->i < x->n && x->s[x->i] != q && !rc; x->i++) {
		if (x->s[x->i] == '\\' && x->i + 1 < x->n)
			x->i++;
		if (x->s[x->i] == '\0')
			rc = pp_fail(x, "NUL in a quoted name");
		else
			rc = buf_add(&name, x->s + x->i, 1);
	}
	if (!rc && x->i >= x->n)
		rc = pp_fail(x, "unterminated quoted name");
	if (!rc) {
		x->i++; /* the closing quote */
		*out = strndup(name.data ? name.data : "", name.len);
		if (!*out)
			rc = -ENOMEM;
	}
	buf_release(&name);
	return rc;
}

/* An integer at s[i] (an optional '-', then digits). *got: one was there. */
static int pp_int(struct pp *x, int64_t *v, bool *got)
{
	size_t st = x->i;
	if (x->i < x->n && x->s[x->i] == '-')
		x->i++;
	while (x->i < x->n && x->s[x->i] >= '0' && x->s[x->i] <= '9')
		x->i++;
	*got = x->i > st;
	if (*got && parse_i64(x->s + st, x->i - st, v))
		return pp_fail(x, "an index is an integer of 64 bits");
	return 0;
}

static bool is_ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_' || (unsigned char)c >= 0x80;
}

static int ex_or(struct pp *x, struct json_expr **out);

static struct json_expr *ex_new(enum jx_op op, struct json_expr *a, struct json_expr *b)
{
	struct json_expr *e = calloc(1, sizeof(*e));
	if (e) {
		e->op = op;
		e->a = a;
		e->b = b;
		e->rel.definite = true;
	}
	return e;
}

/* A definite path in a filter, after its `@` or `$`: `.name` (letters,
 * digits, `_` and bytes past ASCII, as jsoncons reads them), `['name']`,
 * `[N]`. */
static int ex_path(struct pp *x, struct json_expr *e)
{
	int rc = 0;
	while (!rc && x->i < x->n) {
		if (x->s[x->i] == '.') {
			size_t st = ++x->i;
			while (x->i < x->n && is_ident(x->s[x->i]))
				x->i++;
			if (x->i == st)
				return pp_fail(x, "a filter's path takes .name, ['name'] or [N]");
			rc = path_push(&e->rel, false, 0, x->s + st, x->i - st);
		} else if (x->s[x->i] == '[') {
			x->i++;
			pp_ws(x);
			if (x->i < x->n && (x->s[x->i] == '\'' || x->s[x->i] == '"')) {
				char *name = NULL;
				rc = pp_quoted(x, &name);
				if (!rc)
					rc = path_push(&e->rel, false, 0, name, strlen(name));
				free(name);
			} else {
				int64_t v;
				bool got;
				rc = pp_int(x, &v, &got);
				if (!rc && !got)
					rc = pp_fail(
					    x, "a filter's path takes .name, ['name'] or [N]");
				if (!rc)
					rc = path_push(&e->rel, true, v, NULL, 0);
			}
			pp_ws(x);
			if (!rc && (x->i >= x->n || x->s[x->i++] != ']'))
				rc = pp_fail(x, "unterminated [ in a filter");
		} else {
			break;
		}
	}
	return rc;
}

/* A literal: a JSON number, a quoted string, true, false or null. */
static int ex_literal(struct pp *x, struct json_expr *e)
{
	const char *s = x->s + x->i;
	size_t left = x->n - x->i;
	static const char *const words[] = {"true", "false", "null"};
	for (size_t w = 0; w < 3; w++) {
		size_t wl = strlen(words[w]);
		if (left >= wl && memcmp(s, words[w], wl) == 0 &&
		    (left == wl || !is_ident(s[wl]))) {
			x->i += wl;
			e->lit = w == 0	  ? cJSON_CreateTrue()
				 : w == 1 ? cJSON_CreateFalse()
					  : cJSON_CreateNull();
			return e->lit ? 0 : -ENOMEM;
		}
	}
	if (s[0] == '\'' || s[0] == '"') {
		char *str = NULL;
		int rc = pp_quoted(x, &str);
		if (!rc && !(e->lit = cJSON_CreateString(str)))
			rc = -ENOMEM;
		free(str);
		return rc;
	}
	/* A number as JSON writes it. */
	size_t i = 0;
	if (i < left && s[i] == '-')
		i++;
	size_t d = i;
	while (i < left && s[i] >= '0' && s[i] <= '9')
		i++;
	if (i == d || (s[d] == '0' && i - d > 1))
		return pp_fail(x,
			       "a filter compares paths, numbers, 'strings', true, false or null");
	if (i < left && s[i] == '.') {
		size_t f = ++i;
		while (i < left && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == f)
			return pp_fail(x, "malformed number in a filter");
	}
	if (i < left && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < left && (s[i] == '+' || s[i] == '-'))
			i++;
		size_t f = i;
		while (i < left && s[i] >= '0' && s[i] <= '9')
			i++;
		if (i == f)
			return pp_fail(x, "malformed number in a filter");
	}
	if (i > 63)
		return pp_fail(x, "number longer than 63 characters in a filter");
	char lit[64];
	memcpy(lit, s, i);
	lit[i] = '\0';
	x->i += i;
	e->lit = cJSON_CreateNumber(strtod(lit, NULL));
	if (!e->lit || !(e->lit->valuestring = strdup(lit)))
		return -ENOMEM;
	return 0;
}

/* A primary: ( expr ), !unary, a path, a literal. */
static int ex_unary(struct pp *x, struct json_expr **out)
{
	int rc;
	*out = NULL;
	pp_ws(x);
	if (x->i >= x->n)
		return pp_fail(x, "unterminated filter");
	char c = x->s[x->i];
	if ((c == '!' && !(x->i + 1 < x->n && x->s[x->i + 1] == '=')) || c == '(') {
		if (++x->nest > JSON_PATH_MAX_NEST)
			return pp_fail(x, "a filter nests deeper than 32");
		x->i++;
		if (c == '!') {
			struct json_expr *a;
			rc = ex_unary(x, &a);
			if (!rc && !(*out = ex_new(JX_NOT, a, NULL))) {
				expr_free(a);
				rc = -ENOMEM;
			}
		} else {
			rc = ex_or(x, out);
			pp_ws(x);
			if (!rc && (x->i >= x->n || x->s[x->i++] != ')')) {
				rc = pp_fail(x, "a ( in a filter without its )");
				expr_free(*out);
				*out = NULL;
			}
		}
		x->nest--;
		return rc;
	}
	struct json_expr *e = ex_new(c == '@' || c == '$' ? JX_PATH : JX_LIT, NULL, NULL);
	if (!e)
		return -ENOMEM;
	if (e->op == JX_PATH) {
		e->from_root = c == '$';
		x->i++;
		rc = ex_path(x, e);
	} else {
		rc = ex_literal(x, e);
	}
	if (rc)
		expr_free(e);
	else
		*out = e;
	return rc;
}

/* The binary operator at s[i] of precedence level `lvl` (0 ||, 1 &&,
 * 2 == !=, 3 < <= > >=), consumed; or -1. */
static int ex_binop(struct pp *x, int lvl)
{
	static const struct {
		const char *t;
		int lvl;
		enum jx_op op;
	} ops[] = {{"||", 0, JX_OR}, {"&&", 1, JX_AND}, {"==", 2, JX_EQ}, {"!=", 2, JX_NE},
		   {"<=", 3, JX_LE}, {">=", 3, JX_GE},	{"<", 3, JX_LT},  {">", 3, JX_GT}};
	pp_ws(x);
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t l = strlen(ops[k].t);
		if (ops[k].lvl == lvl && x->n - x->i >= l &&
		    memcmp(x->s + x->i, ops[k].t, l) == 0) {
			x->i += l;
			return (int)ops[k].op;
		}
	}
	return -1;
}

/* Left-associative levels, loosest first (jsoncons's precedences). */
static int ex_level(struct pp *x, int lvl, struct json_expr **out)
{
	struct json_expr *l = NULL, *r;
	int rc = lvl == 3 ? ex_unary(x, &l) : ex_level(x, lvl + 1, &l);
	int op;
	while (!rc && (op = ex_binop(x, lvl)) >= 0) {
		r = NULL;
		rc = lvl == 3 ? ex_unary(x, &r) : ex_level(x, lvl + 1, &r);
		if (rc)
			break;
		struct json_expr *e = ex_new((enum jx_op)op, l, r);
		if (!e) {
			expr_free(r);
			rc = -ENOMEM;
			break;
		}
		l = e;
	}
	if (rc) {
		expr_free(l);
		return rc;
	}
	*out = l;
	return 0;
}

static int ex_or(struct pp *x, struct json_expr **out)
{
	return ex_level(x, 0, out);
}

/* One union element at s[i]. */
static int pp_sel(struct pp *x, struct json_sel *e)
{
	char c = x->s[x->i];
	bool got;
	int rc;
	if (c == '\'' || c == '"') {
		e->kind = JSON_SEL_NAME;
		return pp_quoted(x, &e->name);
	}
	if (c == '*') {
		e->kind = JSON_SEL_WILD;
		x->i++;
		return 0;
	}
	if (c == '?') {
		if (x->n > JSON_PATH_MAX_LEN)
			return pp_fail(x, "a path with a filter is longer than 4096 bytes");
		e->kind = JSON_SEL_FILTER;
		x->i++;
		return ex_or(x, &e->filter);
	}
	e->kind = JSON_SEL_INDEX;
	e->step = 1;
	if ((rc = pp_int(x, &e->i, &got)))
		return rc;
	e->has_start = got;
	pp_ws(x);
	if (x->i >= x->n || x->s[x->i] != ':') {
		if (!got)
			return pp_fail(x, "a [ step holds indexes, slices, 'names', * or ?filters");
		return 0;
	}
	e->kind = JSON_SEL_SLICE;
	x->i++;
	pp_ws(x);
	if ((rc = pp_int(x, &e->stop, &e->has_stop)))
		return rc;
	pp_ws(x);
	if (x->i < x->n && x->s[x->i] == ':') {
		x->i++;
		pp_ws(x);
		if ((rc = pp_int(x, &e->step, &got)))
			return rc;
		if (!got)
			e->step = 1;
		else if (e->step == 0)
			return pp_fail(x, "a slice's step cannot be 0");
	}
	return 0;
}

/* A bracket step at s[i] ('['). */
static int pp_bracket(struct pp *x, struct json_path *p)
{
	struct json_sel *sel = NULL;
	size_t n = 0;
	int rc = 0;
	x->i++;
	for (;;) {
		pp_ws(x);
		if (x->i >= x->n) {
			rc = pp_fail(x, "unterminated [");
			break;
		}
		struct json_sel *v = realloc(sel, (n + 1) * sizeof(*v));
		if (!v) {
			rc = -ENOMEM;
			break;
		}
		sel = v;
		memset(&sel[n], 0, sizeof(sel[0]));
		rc = pp_sel(x, &sel[n++]);
		if (rc)
			break;
		pp_ws(x);
		if (x->i < x->n && x->s[x->i] == ',') {
			x->i++;
			continue;
		}
		if (x->i < x->n && x->s[x->i] == ']') {
			x->i++;
			break;
		}
		rc = pp_fail(x, "a [ step holds indexes, slices, 'names', * or ?filters, then ]");
		break;
	}
	if (!rc && n == 1 && sel[0].kind == JSON_SEL_NAME) {
		rc = path_push(p, false, 0, sel[0].name, strlen(sel[0].name));
	} else if (!rc && n == 1 && sel[0].kind == JSON_SEL_INDEX) {
		rc = path_push(p, true, sel[0].i, NULL, 0);
	} else if (!rc && n == 1 && sel[0].kind == JSON_SEL_WILD) {
		rc = path_add(p, JSON_STEP_WILD) ? 0 : -ENOMEM;
	} else if (!rc) {
		struct json_step *s = path_add(p, JSON_STEP_UNION);
		if (!s) {
			rc = -ENOMEM;
		} else {
			s->sel = sel;
			s->nsel = n;
			return 0;
		}
	}
	for (size_t j = 0; j < n; j++) {
		free(sel[j].name);
		expr_free(sel[j].filter);
	}
	free(sel);
	return rc;
}

int json_path_parse(const char *s, size_t n, struct json_path *p, const char **why)
{
	struct pp x = {s, n, 1, why, 0};
	int rc = 0;
	memset(p, 0, sizeof(*p));
	p->definite = true;
	*why = "a path starts with $";
	if (n == 0 || s[0] != '$')
		return -EINVAL;
	while (x.i < n && !rc) {
		if (s[x.i] == '.' && x.i + 1 < n && s[x.i + 1] == '.') {
			/* `..` then a name, * or a bracket, applied at every level */
			if (!path_add(p, JSON_STEP_DESC)) {
				rc = -ENOMEM;
				break;
			}
			x.i++; /* at the second dot: a name follows, or a bracket */
			if (x.i + 1 < n && s[x.i + 1] == '[') {
				x.i++;
				continue;
			}
		}
		if (s[x.i] == '.') {
			size_t st = ++x.i;
			while (x.i < n && s[x.i] != '.' && s[x.i] != '[')
				x.i++;
			if (x.i == st)
				rc = pp_fail(&x, "empty member name");
			else if (x.i - st == 1 && s[st] == '*')
				rc = path_add(p, JSON_STEP_WILD) ? 0 : -ENOMEM;
			else if ((rc = path_push(p, false, 0, s + st, x.i - st)) == -EINVAL)
				*why = "NUL in a member name";
		} else if (s[x.i] == '[') {
			rc = pp_bracket(&x, p);
		} else {
			rc = pp_fail(&x, "a step starts with . or [");
		}
	}
	if (!rc && !p->definite && n > JSON_PATH_MAX_LEN)
		rc = pp_fail(&x, "a path with wildcards, .., slices or filters is longer than 4096 "
				 "bytes");
	if (rc)
		json_path_free(p);
	return rc;
}

int json_path_check(const char *path, size_t n)
{
	struct json_path p;
	const char *why;
	int rc = json_path_parse(path, n, &p, &why);
	json_path_free(&p);
	return rc;
}

bool json_path_is_definite(const char *path, size_t n)
{
	struct json_path p;
	const char *why;
	bool yes = json_path_parse(path, n, &p, &why) == 0 && p.definite;
	json_path_free(&p);
	return yes;
}

/* The array element or object member one step names, or NULL. */
static cJSON *step_find(cJSON *c, const struct json_step *s)
{
	if (s->index) {
		if (!cJSON_IsArray(c))
			return NULL;
		int64_t len = cJSON_GetArraySize(c), i = s->i < 0 ? s->i + len : s->i;
		return i >= 0 && i < len ? cJSON_GetArrayItem(c, (int)i) : NULL;
	}
	return cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, s->name) : NULL;
}

cJSON *json_path_find(cJSON *root, const struct json_path *p, size_t upto)
{
	cJSON *c = root;
	for (size_t i = 0; c && i < upto; i++)
		c = step_find(c, &p->v[i]);
	return c;
}

/* ---- Evaluating --------------------------------------------------------- */

struct jp_eval {
	cJSON *root;
	cJSON **v;
	size_t n, cap, work;
	int rc;
};

/* What filters compute with: values of the document or literals, and
 * these (jsoncons's results of comparisons and of a missing path). */
static cJSON jx_true = {.type = cJSON_True};
static cJSON jx_false = {.type = cJSON_False};
static cJSON jx_null = {.type = cJSON_NULL};

/* jsoncons's truth: false, null, "", [] and {} are false; 0 is true. */
static bool jx_is_false(const cJSON *c)
{
	if (cJSON_IsFalse(c) || cJSON_IsNull(c))
		return true;
	if (cJSON_IsString(c))
		return c->valuestring[0] == '\0';
	if (cJSON_IsArray(c) || cJSON_IsObject(c))
		return c->child == NULL;
	return false;
}

/* Compare two numbers: exactly when both are 64-bit integers. */
static int num_cmp(const cJSON *a, const cJSON *b)
{
	int64_t x, y;
	const char *la = a->valuestring, *lb = b->valuestring;
	if (la && lb && !strpbrk(la, ".eE") && !strpbrk(lb, ".eE") &&
	    !parse_i64(la, strlen(la), &x) && !parse_i64(lb, strlen(lb), &y))
		return x < y ? -1 : x > y;
	return a->valuedouble < b->valuedouble ? -1 : a->valuedouble > b->valuedouble;
}

/* Deep equality, as jsoncons's ==: numbers by value (1 == 1.0), objects
 * whatever their members' order. */
static bool jx_equal(const cJSON *a, const cJSON *b, int depth)
{
	if (depth > 2 * CJSON_NESTING_LIMIT)
		return false;
	if (cJSON_IsNumber(a) && cJSON_IsNumber(b))
		return num_cmp(a, b) == 0;
	if ((a->type & 0xFF) != (b->type & 0xFF))
		return false;
	if (cJSON_IsString(a))
		return strcmp(a->valuestring, b->valuestring) == 0;
	if (cJSON_IsArray(a)) {
		const cJSON *x = a->child, *y = b->child;
		for (; x && y; x = x->next, y = y->next)
			if (!jx_equal(x, y, depth + 1))
				return false;
		return !x && !y;
	}
	if (cJSON_IsObject(a)) {
		size_t na = 0, nb = 0;
		for (const cJSON *x = a->child; x; x = x->next, na++) {
			const cJSON *y = cJSON_GetObjectItemCaseSensitive(b, x->string);
			if (!y || !jx_equal(x, y, depth + 1))
				return false;
		}
		for (const cJSON *y = b->child; y; y = y->next)
			nb++;
		return na == nb;
	}
	return true; /* true, false, null */
}

/* step_find, each child passed counted as a step of the evaluation (a
 * name looked up in a large object costs its size: `$['a','a',...]` or a
 * filter's `$.x` repeated for every element must not escape the bound). */
static cJSON *ev_find(struct jp_eval *e, cJSON *c, const struct json_step *s)
{
	if (s->index ? !cJSON_IsArray(c) : !cJSON_IsObject(c))
		return NULL;
	int64_t i = s->i, k = 0;
	if (s->index && i < 0) {
		for (cJSON *x = c->child; x; x = x->next)
			k++;
		e->work += (size_t)k;
		i += k;
		if (i < 0)
			return NULL;
	}
	k = 0;
	cJSON *x = c->child;
	for (; x; x = x->next, k++) {
		e->work++;
		if (s->index ? k == i : strcmp(x->string, s->name) == 0)
			break;
	}
	if (e->work > JSON_PATH_MAX_WORK) {
		e->rc = -E2BIG;
		return NULL;
	}
	return x;
}

/* A definite path from c, counted. */
static cJSON *ev_path(struct jp_eval *e, cJSON *c, const struct json_path *p)
{
	for (size_t i = 0; c && i < p->n; i++)
		c = ev_find(e, c, &p->v[i]);
	return c;
}

static const cJSON *jx_eval(struct jp_eval *e, const struct json_expr *x, cJSON *cur)
{
	const cJSON *l, *r;
	if (++e->work > JSON_PATH_MAX_WORK) {
		e->rc = -E2BIG;
		return &jx_null;
	}
	switch (x->op) {
	case JX_LIT:
		return x->lit;
	case JX_PATH:
		l = ev_path(e, x->from_root ? e->root : cur, &x->rel);
		return l ? l : &jx_null; /* a missing value is null, as in jsoncons */
	case JX_NOT:
		return jx_is_false(jx_eval(e, x->a, cur)) ? &jx_true : &jx_false;
	case JX_AND:
		l = jx_eval(e, x->a, cur);
		return jx_is_false(l) ? l : jx_eval(e, x->b, cur);
	case JX_OR:
		l = jx_eval(e, x->a, cur);
		return !jx_is_false(l) ? l : jx_eval(e, x->b, cur);
	case JX_EQ:
	case JX_NE:
		l = jx_eval(e, x->a, cur);
		r = jx_eval(e, x->b, cur);
		return jx_equal(l, r, 0) == (x->op == JX_EQ) ? &jx_true : &jx_false;
	default: {
		int c;
		l = jx_eval(e, x->a, cur);
		r = jx_eval(e, x->b, cur);
		if (cJSON_IsNumber(l) && cJSON_IsNumber(r))
			c = num_cmp(l, r);
		else if (cJSON_IsString(l) && cJSON_IsString(r))
			c = strcmp(l->valuestring, r->valuestring);
		else
			return &jx_null; /* jsoncons: no order between other types */
		bool t = x->op == JX_LT	  ? c < 0
			 : x->op == JX_LE ? c <= 0
			 : x->op == JX_GT ? c > 0
					  : c >= 0;
		return t ? &jx_true : &jx_false;
	}
	}
}

static void ev_step(struct jp_eval *e, const struct json_path *p, size_t k, cJSON *cur);

/* Apply union element s to cur, then the steps after k. */
static void ev_sel(struct jp_eval *e, const struct json_path *p, size_t k, cJSON *cur,
		   const struct json_sel *s)
{
	struct json_step one = {.kind = JSON_STEP_NAME, .name = s->name, .i = s->i};
	switch (s->kind) {
	case JSON_SEL_INDEX:
		one.index = true;
		/* fall through */
	case JSON_SEL_NAME: {
		cJSON *c = ev_find(e, cur, &one);
		if (c)
			ev_step(e, p, k + 1, c);
		return;
	}
	case JSON_SEL_WILD:
		if (cJSON_IsArray(cur) || cJSON_IsObject(cur))
			for (cJSON *c = cur->child; c && !e->rc; c = c->next)
				ev_step(e, p, k + 1, c);
		return;
	case JSON_SEL_FILTER:
		if (cJSON_IsArray(cur) || cJSON_IsObject(cur))
			for (cJSON *c = cur->child; c && !e->rc; c = c->next)
				if (!jx_is_false(jx_eval(e, s->filter, c)) && !e->rc)
					ev_step(e, p, k + 1, c);
		return;
	case JSON_SEL_SLICE:
		break;
	}
	if (!cJSON_IsArray(cur))
		return;
	/* jsoncons's slice: bounds from the end when negative, clamped to
	 * the array; a negative step walks down from start. */
	int64_t len = cJSON_GetArraySize(cur), start, stop, step = s->step;
	if (s->has_start)
		start =
		    s->i >= 0 ? (s->i < len ? s->i : len) : (s->i + len < len ? s->i + len : len);
	else
		start = step > 0 ? 0 : len;
	if (s->has_stop)
		stop = s->stop >= 0 ? (s->stop < len ? s->stop : len) : s->stop + len;
	else
		stop = step > 0 ? len : -1;
	if (len == 0)
		return;
	e->work += (size_t)len; /* the array is listed whole */
	if (e->work > JSON_PATH_MAX_WORK) {
		e->rc = -E2BIG;
		return;
	}
	cJSON **el = malloc((size_t)len * sizeof(*el));
	if (!el) {
		e->rc = -ENOMEM;
		return;
	}
	int64_t j = 0;
	for (cJSON *c = cur->child; c && j < len; c = c->next)
		el[j++] = c;
	if (step > 0) {
		if (start < 0)
			start = 0;
		for (int64_t i = start; i < stop && !e->rc;) {
			ev_step(e, p, k + 1, el[i]);
			if (stop - i <= step) /* the next one is past stop: no overflow */
				break;
			i += step;
		}
	} else {
		if (start >= len)
			start = len - 1;
		if (stop < -1)
			stop = -1;
		for (int64_t i = start; i > stop && !e->rc;) {
			if (i >= 0 && i < len)
				ev_step(e, p, k + 1, el[i]);
			if ((uint64_t)(i - stop) <= (uint64_t)0 - (uint64_t)step)
				break;
			i += step;
		}
	}
	free(el);
}

/* Apply step k of p to cur; past the last step, cur is a match. */
static void ev_step(struct jp_eval *e, const struct json_path *p, size_t k, cJSON *cur)
{
	if (e->rc)
		return;
	if (++e->work > JSON_PATH_MAX_WORK) {
		e->rc = -E2BIG;
		return;
	}
	if (k == p->n) {
		if (e->n == JSON_PATH_MAX_MATCHES) {
			e->rc = -E2BIG;
			return;
		}
		if (e->n == e->cap) {
			size_t cap = e->cap ? 2 * e->cap : 16;
			cJSON **v = realloc(e->v, cap * sizeof(*v));
			if (!v) {
				e->rc = -ENOMEM;
				return;
			}
			e->v = v;
			e->cap = cap;
		}
		e->v[e->n++] = cur;
		return;
	}
	const struct json_step *s = &p->v[k];
	cJSON *c;
	switch (s->kind) {
	case JSON_STEP_NAME:
	case JSON_STEP_INDEX:
		if ((c = ev_find(e, cur, s)))
			ev_step(e, p, k + 1, c);
		break;
	case JSON_STEP_WILD:
		if (cJSON_IsArray(cur) || cJSON_IsObject(cur))
			for (c = cur->child; c && !e->rc; c = c->next)
				ev_step(e, p, k + 1, c);
		break;
	case JSON_STEP_DESC:
		/* The next step here, then `..` again in every container below. */
		if (cJSON_IsArray(cur) || cJSON_IsObject(cur)) {
			ev_step(e, p, k + 1, cur);
			for (c = cur->child; c && !e->rc; c = c->next)
				if (cJSON_IsArray(c) || cJSON_IsObject(c))
					ev_step(e, p, k, c);
		}
		break;
	case JSON_STEP_UNION:
		for (size_t j = 0; j < s->nsel && !e->rc; j++)
			ev_sel(e, p, k, cur, &s->sel[j]);
		break;
	}
}

int json_path_select(cJSON *root, const struct json_path *p, cJSON ***v, size_t *n)
{
	struct jp_eval e = {.root = root};
	*v = NULL;
	*n = 0;
	if (p->definite) {
		cJSON *c = json_path_find(root, p, p->n);
		if (!c)
			return 0;
		if (!(*v = malloc(sizeof(**v))))
			return -ENOMEM;
		(*v)[0] = c;
		*n = 1;
		return 0;
	}
	ev_step(&e, p, 0, root);
	if (e.rc) {
		free(e.v);
		return e.rc;
	}
	*v = e.v;
	*n = e.n;
	return 0;
}

/* ---- Reading without a tree -------------------------------------------
 *
 * A read at a path scans the stored text for the value the path names
 * and parses only that value: a member of a 1 MiB document costs one pass
 * over its bytes, not a tree of every node. Text the scan does not
 * understand sends the caller back to the full parse.
 */

static size_t skip_ws(const char *s, size_t n, size_t i)
{
	while (i < n && json_is_ws(s[i]))
		i++;
	return i;
}

/* The end of the value that starts at s[i], or 0 if it is malformed. */
static size_t skip_value(const char *s, size_t n, size_t i)
{
	if (i >= n)
		return 0;
	if (s[i] == '"') {
		for (i++; i < n; i++) {
			if (s[i] == '\\')
				i++;
			else if (s[i] == '"')
				return i + 1;
		}
		return 0;
	}
	if (s[i] == '{' || s[i] == '[') {
		size_t depth = 0;
		for (; i < n; i++) {
			if (s[i] == '"') {
				size_t e = skip_value(s, n, i);
				if (!e)
					return 0;
				i = e - 1;
			} else if (s[i] == '{' || s[i] == '[') {
				depth++;
			} else if ((s[i] == '}' || s[i] == ']') && --depth == 0) {
				return i + 1;
			}
		}
		return 0;
	}
	size_t st = i;
	while (i < n && !json_is_ws(s[i]) && !strchr(",:]}[{\"", s[i]))
		i++;
	return i > st ? i : 0;
}

/* Is the string token s[i, e) (quotes included) the member name `name`? */
static int key_is(const char *s, size_t i, size_t e, const char *name, bool *yes)
{
	if (!memchr(s + i, '\\', e - i)) {
		*yes = e - i - 2 == strlen(name) && memcmp(s + i + 1, name, e - i - 2) == 0;
		return 0;
	}
	cJSON *c = cJSON_ParseWithLength(s + i, e - i);
	if (!c)
		return -EINVAL;
	*yes = cJSON_IsString(c) && strcmp(c->valuestring, name) == 0;
	cJSON_Delete(c);
	return 0;
}

/* The member (the last one, if the name repeats) of the object at s[i]. */
static int scan_member(const char *s, size_t n, size_t *i, size_t *e, const char *name)
{
	size_t j = skip_ws(s, n, *i + 1), found = 0, fend = 0;
	if (j < n && s[j] == '}')
		return -ENOENT;
	for (;;) {
		size_t ke = j < n && s[j] == '"' ? skip_value(s, n, j) : 0;
		if (!ke)
			return -EINVAL;
		bool yes;
		int rc = key_is(s, j, ke, name, &yes);
		if (rc)
			return rc;
		j = skip_ws(s, n, ke);
		if (j >= n || s[j] != ':')
			return -EINVAL;
		j = skip_ws(s, n, j + 1);
		size_t ve = skip_value(s, n, j);
		if (!ve)
			return -EINVAL;
		if (yes) {
			found = j;
			fend = ve;
		}
		j = skip_ws(s, n, ve);
		if (j < n && s[j] == '}')
			break;
		if (j >= n || s[j] != ',')
			return -EINVAL;
		j = skip_ws(s, n, j + 1);
	}
	if (!fend)
		return -ENOENT;
	*i = found;
	*e = fend;
	return 0;
}

/* Element `idx` of the array at s[i]; negative counts from the end. */
static int scan_element(const char *s, size_t n, size_t *i, size_t *e, int64_t idx)
{
	for (int pass = idx < 0 ? 0 : 1; pass < 2; pass++) {
		size_t j = skip_ws(s, n, *i + 1);
		int64_t k = 0;
		if (j < n && s[j] == ']') {
			if (pass == 0 || idx >= 0)
				return -ENOENT;
		}
		while (j < n && s[j] != ']') {
			size_t ve = skip_value(s, n, j);
			if (!ve)
				return -EINVAL;
			if (pass == 1 && k == idx) {
				*i = j;
				*e = ve;
				return 0;
			}
			k++;
			j = skip_ws(s, n, ve);
			if (j < n && s[j] == ',')
				j = skip_ws(s, n, j + 1);
			else if (j >= n || s[j] != ']')
				return -EINVAL;
		}
		if (pass == 0) {
			idx += k; /* the count is known now */
			if (idx < 0)
				return -ENOENT;
		}
	}
	return -ENOENT;
}

int json_scan_path(const char *s, size_t n, const struct json_path *p, size_t *start, size_t *len)
{
	size_t i = n >= 3 && memcmp(s, "\xEF\xBB\xBF", 3) == 0 ? 3 : 0, e;
	i = skip_ws(s, n, i);
	if (!(e = skip_value(s, n, i)))
		return -EINVAL;
	for (size_t k = 0; k < p->n; k++) {
		const struct json_step *st = &p->v[k];
		int rc;
		if (!st->index && s[i] == '{')
			rc = scan_member(s, n, &i, &e, st->name);
		else if (st->index && s[i] == '[')
			rc = scan_element(s, n, &i, &e, st->i);
		else
			rc = -ENOENT; /* a member of an array, an element of an object, a scalar */
		if (rc)
			return rc;
	}
	*start = i;
	*len = e - i;
	return 0;
}

/* A valid value: its first byte tells. */
const char *json_span_type(const char *s, size_t n)
{
	switch (s[0]) {
	case '{':
		return "object";
	case '[':
		return "array";
	case '"':
		return "string";
	case 't':
	case 'f':
		return "boolean";
	case 'n':
		return "null";
	default:
		return memchr(s, '.', n) || memchr(s, 'e', n) || memchr(s, 'E', n) ? "number"
										   : "integer";
	}
}
