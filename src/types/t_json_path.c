/*
 * t_json_path: the paths of t_json.h (`$`, `.name`, `['name']`, `[N]`):
 * parsing, finding a path's value in a cJSON tree, and finding it in
 * stored JSON text by a scan that builds no tree. Part of the JSON module
 * (t_json_int.h). Layer: types.
 */
#include "types/t_json.h"
#include "types/t_json_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- Parsing and trees ------------------------------------------------ */

void json_path_free(struct json_path *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->v[i].name);
	free(p->v);
	p->v = NULL;
	p->n = 0;
}

static int path_push(struct json_path *p, bool index, int64_t i, const char *name, size_t nn)
{
	struct json_step *v = realloc(p->v, (p->n + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->v = v;
	struct json_step *s = &v[p->n];
	s->index = index;
	s->i = i;
	s->name = NULL;
	if (!index) {
		if (memchr(name, '\0', nn))
			return -EINVAL;
		if (!(s->name = strndup(name, nn)))
			return -ENOMEM;
	}
	p->n++;
	return 0;
}

int json_path_parse(const char *s, size_t n, struct json_path *p, const char **why)
{
	size_t i = 1;
	int rc = 0;
	memset(p, 0, sizeof(*p));
	*why = "a path starts with $";
	if (n == 0 || s[0] != '$')
		return -EINVAL;
	while (i < n && !rc) {
		if (s[i] == '.') {
			size_t st = ++i;
			while (i < n && s[i] != '.' && s[i] != '[')
				i++;
			if (i == st) {
				*why = i < n && s[i] == '.'
					   ? "recursive descent (..) is not supported"
					   : "empty member name";
				rc = -EINVAL;
			} else if (i - st == 1 && s[st] == '*') {
				*why = "wildcards are not supported";
				rc = -EINVAL;
			} else {
				rc = path_push(p, false, 0, s + st, i - st);
			}
		} else if (s[i] == '[' && i + 1 < n && (s[i + 1] == '\'' || s[i + 1] == '"')) {
			char q = s[i + 1];
			struct buf name = BUF_INIT;
			for (i += 2; i < n && s[i] != q && !rc; i++) {
				if (s[i] == '\\' && i + 1 < n)
					i++;
				rc = buf_add(&name, s + i, 1);
			}
			if (!rc && (i + 1 >= n || s[i] != q || s[i + 1] != ']')) {
				*why = "unterminated ['name']";
				rc = -EINVAL;
			}
			if (!rc) {
				*why = "NUL in a member name";
				rc = path_push(p, false, 0, name.data ? name.data : "", name.len);
			}
			buf_release(&name);
			i += 2;
		} else if (s[i] == '[') {
			size_t st = ++i;
			while (i < n && s[i] != ']')
				i++;
			int64_t idx;
			if (i >= n) {
				*why = "unterminated [";
				rc = -EINVAL;
			} else if (i == st || (s[st] == '+') || parse_i64(s + st, i - st, &idx)) {
				*why = "an index is an integer ([*], slices and filters are not "
				       "supported)";
				rc = -EINVAL;
			} else {
				rc = path_push(p, true, idx, NULL, 0);
			}
			i++;
		} else {
			*why = "a step starts with . or [";
			rc = -EINVAL;
		}
	}
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
