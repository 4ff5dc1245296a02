/*
 * t_json_tree: a JSON document as a tree of named nodes (KEY:tree in the
 * file system): reads of one node, listings of a container, and the
 * changes the tree's files and directories make, each one transaction
 * of t_json's (json_tree_doc_edit: the key's lock held from the read to
 * the write, so concurrent changes of different members all land).
 * Layer: types; part of the JSON module (cJSON, t_json_int.h).
 */
#include "types/t_json_tree.h"

#include "types/t_json.h"
#include "types/t_json_int.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* ---- Names ----------------------------------------------------------- */

static unsigned digits_of(uint64_t v)
{
	unsigned d = 1;
	while (v >= 10) {
		v /= 10;
		d++;
	}
	return d;
}

size_t json_tree_index_name(uint64_t i, uint64_t len, char *out)
{
	unsigned w = digits_of(len ? len - 1 : 0);
	return (size_t)snprintf(out, 21, "%0*" PRIu64, (int)w, i);
}

/* The number a name of digits spells (any zeros in front), or false. */
static bool name_number(const char *s, size_t n, uint64_t *v)
{
	if (n == 0 || n > 20)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (x > (UINT64_MAX - d) / 10)
			return false;
		x = x * 10 + d;
	}
	*v = x;
	return true;
}

static bool is_dir(const cJSON *c)
{
	return cJSON_IsObject(c) || cJSON_IsArray(c);
}

static uint64_t count_of(const cJSON *c)
{
	uint64_t n = 0;
	for (const cJSON *x = c->child; x; x = x->next)
		n++;
	return n;
}

/* The child of container c that name names (NULL: none), *pos its
 * position. */
static cJSON *child_find(cJSON *c, const char *name, size_t n, uint64_t *pos)
{
	uint64_t i = 0;
	if (cJSON_IsObject(c)) {
		for (cJSON *x = c->child; x; x = x->next, i++) {
			if (x->string && strlen(x->string) == n &&
			    memcmp(x->string, name, n) == 0) {
				*pos = i;
				return x;
			}
		}
		return NULL;
	}
	if (!cJSON_IsArray(c))
		return NULL;
	uint64_t want, len = count_of(c);
	char canon[24];
	if (!name_number(name, n, &want) || want >= len ||
	    json_tree_index_name(want, len, canon) != n || memcmp(canon, name, n) != 0)
		return NULL;
	cJSON *x = c->child;
	for (i = 0; i < want; i++)
		x = x->next;
	*pos = want;
	return x;
}

/*
 * Walk names[0, n) from root: *node the node (NULL: the last step names
 * nothing), *parent its container (NULL for the root). -ENOENT if a step
 * before the last names nothing, -ENOTDIR if one goes through a scalar.
 */
static int walk(cJSON *root, const struct iovec *names, size_t n, cJSON **parent, cJSON **node)
{
	cJSON *c = root, *up = NULL;
	uint64_t pos;
	if (n > JSON_TREE_MAX_DEPTH)
		return -ENOENT;
	for (size_t i = 0; i < n; i++) {
		if (!c)
			return -ENOENT;
		if (!is_dir(c))
			return -ENOTDIR;
		up = c;
		c = child_find(c, names[i].iov_base, names[i].iov_len, &pos);
	}
	*parent = up;
	*node = c;
	return 0;
}

/* A node that must exist. */
static int walk_found(cJSON *root, const struct iovec *names, size_t n, cJSON **parent,
		      cJSON **node)
{
	int rc = walk(root, names, n, parent, node);
	return rc ? rc : *node ? 0 : -ENOENT;
}

/* Add new node nw to container `parent` under name (an object's member,
 * or an array's next element). Takes nw on success. */
static int child_add(const struct ks_key *k, cJSON *parent, const char *name, size_t n, cJSON *nw)
{
	if (cJSON_IsObject(parent)) {
		if (memchr(name, '\0', n)) {
			LOG_ERR("'%.*s' tree: a member name cannot hold a NUL byte", (int)k->klen,
				k->key);
			return -EINVAL;
		}
		char *z = strndup(name, n);
		if (!z)
			return -ENOMEM;
		bool ok = cJSON_AddItemToObject(parent, z, nw);
		free(z);
		return ok ? 0 : -ENOMEM;
	}
	uint64_t i, len = count_of(parent);
	if (!name_number(name, n, &i) || i != len) {
		LOG_ERR("'%.*s' tree: '%.*s' is no new position of an array of %" PRIu64
			" (a new element is named by the length, %" PRIu64 ")",
			(int)k->klen, k->key, (int)(n > 64 ? 64 : n), name, len, len);
		return -EINVAL;
	}
	cJSON_free(nw->string);
	nw->string = NULL;
	return cJSON_AddItemToArray(parent, nw) ? 0 : -ENOMEM;
}

/* Put nw in place of old, a child of parent (old is freed). */
static int child_replace(cJSON *parent, cJSON *old, cJSON *nw)
{
	cJSON_free(nw->string);
	nw->string = NULL;
	if (old->string && !(nw->string = strdup(old->string)))
		return -ENOMEM;
	return cJSON_ReplaceItemViaPointer(parent, old, nw) ? 0 : -ENOMEM;
}

/* ---- Scalars as files ------------------------------------------------ */

/* The file text of scalar c: its text and a newline. */
static int file_text(cJSON *c, struct buf *out)
{
	int rc;
	buf_reset(out);
	if (cJSON_IsString(c))
		rc = buf_add(out, c->valuestring, strlen(c->valuestring));
	else
		rc = json_tree_print(c, out);
	return rc ? rc : buf_add(out, "\n", 1);
}

static int node_info(cJSON *c, struct json_tree_node *out)
{
	out->type = json_tree_type(c);
	out->dir = is_dir(c);
	if (out->dir) {
		out->size = count_of(c);
		return 0;
	}
	if (cJSON_IsString(c)) {
		out->size = strlen(c->valuestring) + 1;
		return 0;
	}
	struct buf t = BUF_INIT;
	int rc = file_text(c, &t);
	out->size = t.len;
	buf_release(&t);
	return rc;
}

/* Is s[0, n) well-formed UTF-8 (no overlong forms, no surrogates)? */
static bool utf8_valid(const unsigned char *s, size_t n)
{
	for (size_t i = 0; i < n;) {
		unsigned char c = s[i];
		size_t len;
		uint32_t cp;
		if (c < 0x80) {
			i++;
			continue;
		} else if ((c & 0xE0) == 0xC0) {
			len = 2;
			cp = c & 0x1F;
		} else if ((c & 0xF0) == 0xE0) {
			len = 3;
			cp = c & 0x0F;
		} else if ((c & 0xF8) == 0xF0) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (size_t j = 1; j < len; j++) {
			if ((s[i + j] & 0xC0) != 0x80)
				return false;
			cp = (cp << 6) | (s[i + j] & 0x3F);
		}
		if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) ||
		    (len == 4 && cp < 0x10000) || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += len;
	}
	return true;
}

/* Is integer literal lit within 64 bits? */
static bool int_fits(const char *lit)
{
	errno = 0;
	char *end;
	long long v = strtoll(lit, &end, 10);
	(void)v;
	return errno != ERANGE && *end == '\0';
}

/*
 * The node file text d (dn bytes, one final newline dropped) makes, read
 * as `type` ("string": raw bytes; any other: one JSON scalar, of that
 * type unless `any`). *out: free with cJSON_Delete.
 */
static int text_value(const struct ks_key *k, const char *d, size_t dn, const char *type, bool any,
		      cJSON **out)
{
	*out = NULL;
	if (dn && d[dn - 1] == '\n')
		dn--;
	if (strcmp(type, "string") == 0) {
		if (memchr(d, '\0', dn) || !utf8_valid((const unsigned char *)d, dn)) {
			LOG_ERR("'%.*s' tree: a string holds UTF-8 text without NUL bytes",
				(int)k->klen, k->key);
			return -EINVAL;
		}
		char *z = strndup(d, dn);
		if (!z)
			return -ENOMEM;
		*out = cJSON_CreateString(z);
		free(z);
		return *out ? 0 : -ENOMEM;
	}
	if (strcmp(type, "null") == 0 && !any) {
		*out = cJSON_CreateNull();
		return *out ? 0 : -ENOMEM;
	}
	cJSON *c;
	int rc = json_tree_parse("tree write", k, d, dn, &c);
	if (rc)
		return rc;
	const char *got = json_tree_type(c);
	if (is_dir(c)) {
		LOG_ERR("'%.*s' tree: a file holds one scalar, not %s %s (make a directory)",
			(int)k->klen, k->key, got[0] == 'o' ? "an" : "an", got);
		rc = -EINVAL;
	} else if (strcmp(got, "integer") == 0 && !int_fits(c->valuestring)) {
		LOG_ERR("'%.*s' tree: the integer %s is out of the 64-bit range", (int)k->klen,
			k->key, c->valuestring);
		rc = -ERANGE;
	} else if (!any && strcmp(type, "number") == 0 && strcmp(got, "integer") == 0) {
		/* A number of integral value: its float form (5 -> 5.0). */
		struct buf t = BUF_INIT;
		rc = buf_printf(&t, "%s.0", c->valuestring);
		cJSON_Delete(c);
		c = NULL;
		if (!rc)
			rc = json_tree_parse("tree write", k, t.data, t.len, &c);
		buf_release(&t);
	} else if (!any && strcmp(type, got) != 0) {
		LOG_ERR("'%.*s' tree: '%.*s' is %s %s, not %s %s", (int)k->klen, k->key,
			(int)(dn > 64 ? 64 : dn), d, got[0] == 'i' ? "an" : "a", got,
			type[0] == 'i' ? "an" : "a", type);
		rc = -EINVAL;
	}
	if (rc)
		cJSON_Delete(c);
	else
		*out = c;
	return rc;
}

static bool type_is_scalar(const char *t)
{
	static const char *const names[] = {"string", "integer", "number", "boolean", "null"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(t, names[i]) == 0)
			return true;
	return false;
}

/* ---- Reads ------------------------------------------------------------ */

int json_tree_stat(struct keyspace *ks, const struct ks_key *k, const struct iovec *names, size_t n,
		   struct json_tree_node *out)
{
	cJSON *root, *parent, *c;
	int rc = json_tree_doc_load(ks, k, &root);
	if (!rc)
		rc = walk_found(root, names, n, &parent, &c);
	if (!rc)
		rc = node_info(c, out);
	cJSON_Delete(root);
	return rc;
}

int json_tree_read(struct keyspace *ks, const struct ks_key *k, const struct iovec *names, size_t n,
		   struct buf *out)
{
	cJSON *root, *parent, *c;
	int rc = json_tree_doc_load(ks, k, &root);
	if (!rc)
		rc = walk_found(root, names, n, &parent, &c);
	if (!rc)
		rc = is_dir(c) ? -EISDIR : file_text(c, out);
	cJSON_Delete(root);
	return rc;
}

static uint64_t fnv_add(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++) {
		h ^= b[i];
		h *= 1099511628211ULL;
	}
	return h;
}

int json_tree_array_digest(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
			   size_t n, uint64_t *len, uint64_t *digest)
{
	cJSON *root, *parent, *c;
	struct buf t = BUF_INIT;
	int rc = json_tree_doc_load(ks, k, &root);
	if (!rc)
		rc = walk_found(root, names, n, &parent, &c);
	if (!rc && !cJSON_IsArray(c))
		rc = -ENOTDIR;
	if (!rc) {
		uint64_t h = 14695981039346656037ULL, count = count_of(c);
		h = fnv_add(h, &count, sizeof(count));
		for (cJSON *x = c->child; x && !rc; x = x->next) {
			const char *type = json_tree_type(x);
			h = fnv_add(h, type, strlen(type) + 1);
			if (!is_dir(x) && (rc = file_text(x, &t)) == 0)
				h = fnv_add(fnv_add(h, &t.len, sizeof(t.len)), t.data, t.len);
		}
		*len = count;
		*digest = h;
	}
	buf_release(&t);
	cJSON_Delete(root);
	return rc;
}

struct json_tree_iter {
	cJSON *root, *dir;
	cJSON *cur; /* the child numbered cur_i, where the last listing stopped (NULL: none) */
	uint64_t cur_i, len;
};

int json_tree_iter_new(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		       size_t n, struct json_tree_iter **out)
{
	cJSON *root, *parent, *c;
	*out = NULL;
	int rc = json_tree_doc_load(ks, k, &root);
	if (!rc)
		rc = walk_found(root, names, n, &parent, &c);
	if (!rc && !is_dir(c))
		rc = -ENOTDIR;
	struct json_tree_iter *it = rc ? NULL : calloc(1, sizeof(*it));
	if (!rc && !it)
		rc = -ENOMEM;
	if (rc) {
		cJSON_Delete(root);
		return rc;
	}
	it->root = root;
	it->dir = c;
	it->len = count_of(c);
	*out = it;
	return 0;
}

void json_tree_iter_free(struct json_tree_iter *it)
{
	if (it) {
		cJSON_Delete(it->root);
		free(it);
	}
}

int json_tree_iter_list(struct json_tree_iter *it, uint64_t from, json_tree_list_fn cb, void *arg)
{
	cJSON *x = it->dir->child;
	uint64_t i = 0;
	int rc = 0;
	if (it->cur && it->cur_i <= from) {
		/* Resume where the last call stopped: no walk from the start. */
		x = it->cur;
		i = it->cur_i;
	}
	for (; x && i < from; x = x->next)
		i++;
	bool array = cJSON_IsArray(it->dir);
	for (; x && !rc; x = x->next, i++) {
		struct json_tree_node node;
		char num[24];
		rc = node_info(x, &node);
		if (rc)
			break;
		it->cur = x;
		it->cur_i = i;
		if (array) {
			size_t nl = json_tree_index_name(i, it->len, num);
			rc = cb(arg, i, num, nl, &node);
		} else {
			rc = cb(arg, i, x->string, strlen(x->string), &node);
		}
	}
	return rc == 1 ? 0 : rc;
}

int json_tree_list(struct keyspace *ks, const struct ks_key *k, const struct iovec *names, size_t n,
		   uint64_t from, json_tree_list_fn cb, void *arg)
{
	struct json_tree_iter *it;
	int rc = json_tree_iter_new(ks, k, names, n, &it);
	if (!rc)
		rc = json_tree_iter_list(it, from, cb, arg);
	json_tree_iter_free(it);
	return rc;
}

/* ---- Changes ----------------------------------------------------------- */

struct tree_op {
	const struct ks_key *k;
	const struct iovec *names, *to;
	size_t n, tn;
	const char *d;
	size_t dn;
	const char *type;
	unsigned flags;
	bool flag;	 /* mkdir: an array; remove: a directory */
	const char *was; /* write: the node's file text expected (NULL: any) */
	size_t wasn;
	struct buf *now; /* write: the stored node's file text (NULL: not wanted) */
};

static int edit_write(cJSON *root, void *arg)
{
	struct tree_op *op = arg;
	cJSON *parent, *c, *nw;
	if (op->n == 0)
		return -EISDIR;
	int rc = walk(root, op->names, op->n, &parent, &c);
	if (rc)
		return rc;
	if (c && (op->flags & JSON_TREE_NEW))
		return -EEXIST;
	if (c && is_dir(c))
		return -EISDIR;
	if (op->was) {
		/* The node must still hold what the writer read: else the
		 * name now means another node (a removal moved the elements)
		 * or another writer changed it. */
		struct buf cur = BUF_INIT;
		rc = c ? file_text(c, &cur) : 0;
		bool same =
		    !rc && c && cur.len == op->wasn && memcmp(cur.data, op->was, cur.len) == 0;
		buf_release(&cur);
		if (rc)
			return rc;
		if (!same) {
			LOG_ERR(
			    "'%.*s' tree: a file changed or moved since it was opened (a change "
			    "through the key, a path name or another name): the write is refused",
			    (int)op->k->klen, op->k->key);
			return -ESTALE;
		}
	}
	const char *type = op->type;
	if (!type)
		type = c ? json_tree_type(c) : "string";
	rc = text_value(op->k, op->d, op->dn, type, !op->type && strcmp(type, "string") != 0, &nw);
	if (rc)
		return rc;
	if (op->now && (rc = file_text(nw, op->now)) != 0) {
		cJSON_Delete(nw);
		return rc;
	}
	const struct iovec *last = &op->names[op->n - 1];
	rc = c ? child_replace(parent, c, nw)
	       : child_add(op->k, parent, last->iov_base, last->iov_len, nw);
	if (rc)
		cJSON_Delete(nw);
	return rc;
}

int json_tree_write(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		    size_t n, const char *d, size_t dn, const char *type, unsigned flags)
{
	struct tree_op op = {
	    .k = k, .names = names, .n = n, .d = d, .dn = dn, .type = type, .flags = flags};
	if (dn > JSON_MAX)
		return -EFBIG;
	if (type && !type_is_scalar(type))
		return -EINVAL;
	return json_tree_doc_edit(ks, k, edit_write, &op);
}

int json_tree_write_if(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		       size_t n, const char *d, size_t dn, const char *was, size_t wasn,
		       struct buf *now)
{
	struct tree_op op = {.k = k,
			     .names = names,
			     .n = n,
			     .d = d,
			     .dn = dn,
			     .was = was ? was : "",
			     .wasn = wasn,
			     .now = now};
	if (dn > JSON_MAX)
		return -EFBIG;
	return json_tree_doc_edit(ks, k, edit_write, &op);
}

static int edit_mkdir(cJSON *root, void *arg)
{
	struct tree_op *op = arg;
	cJSON *parent, *c;
	if (op->n == 0)
		return -EEXIST;
	int rc = walk(root, op->names, op->n, &parent, &c);
	if (rc)
		return rc;
	if (c)
		return -EEXIST;
	cJSON *nw = op->flag ? cJSON_CreateArray() : cJSON_CreateObject();
	if (!nw)
		return -ENOMEM;
	const struct iovec *last = &op->names[op->n - 1];
	rc = child_add(op->k, parent, last->iov_base, last->iov_len, nw);
	if (rc)
		cJSON_Delete(nw);
	return rc;
}

int json_tree_mkdir(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		    size_t n, bool array)
{
	struct tree_op op = {.k = k, .names = names, .n = n, .flag = array};
	return json_tree_doc_edit(ks, k, edit_mkdir, &op);
}

static int edit_remove(cJSON *root, void *arg)
{
	struct tree_op *op = arg;
	cJSON *parent, *c;
	if (op->n == 0)
		return -EBUSY;
	int rc = walk_found(root, op->names, op->n, &parent, &c);
	if (rc)
		return rc;
	if (!op->flag && is_dir(c))
		return -EISDIR;
	if (op->flag && !is_dir(c))
		return -ENOTDIR;
	if (op->flag && c->child)
		return -ENOTEMPTY;
	cJSON_Delete(cJSON_DetachItemViaPointer(parent, c));
	return 0;
}

int json_tree_remove(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		     size_t n, bool dir)
{
	struct tree_op op = {.k = k, .names = names, .n = n, .flag = dir};
	return json_tree_doc_edit(ks, k, edit_remove, &op);
}

/* Does path a (an steps) lead to b or below it, as names? */
static bool names_prefix(const struct iovec *a, size_t an, const struct iovec *b, size_t bn)
{
	if (an > bn)
		return false;
	for (size_t i = 0; i < an; i++)
		if (a[i].iov_len != b[i].iov_len ||
		    memcmp(a[i].iov_base, b[i].iov_base, a[i].iov_len))
			return false;
	return true;
}

static int edit_move(cJSON *root, void *arg)
{
	struct tree_op *op = arg;
	cJSON *parent, *c, *tparent, *t;
	if (op->n == 0 || op->tn == 0)
		return -EBUSY;
	int rc = walk_found(root, op->names, op->n, &parent, &c);
	if (rc)
		return rc;
	if (op->n == op->tn && names_prefix(op->names, op->n, op->to, op->tn))
		return 0; /* onto itself */
	if (names_prefix(op->names, op->n, op->to, op->tn)) {
		LOG_ERR("'%.*s' tree: a node cannot move inside itself", (int)op->k->klen,
			op->k->key);
		return -EINVAL;
	}
	/* An existing target is the node the name means now, before the
	 * source leaves; a name that exists nowhere (an array's length: an
	 * append) is read after the source left. */
	rc = walk(root, op->to, op->tn, &tparent, &t);
	if (rc)
		return rc;
	if (t && (op->flags & JSON_TREE_NEW))
		return -EEXIST;
	if (t) {
		if (is_dir(c) && !is_dir(t))
			return -ENOTDIR;
		if (!is_dir(c) && is_dir(t))
			return -EISDIR;
		if (is_dir(t) && t->child)
			return -ENOTEMPTY;
	}
	const struct iovec *last = &op->to[op->tn - 1];
	uint64_t at;
	bool append = !t && cJSON_IsArray(tparent);
	if (append &&
	    (!name_number(last->iov_base, last->iov_len, &at) || at != count_of(tparent))) {
		LOG_ERR("'%.*s' tree: '%.*s' is no new position of an array of %" PRIu64
			" (a new element is named by the length, %" PRIu64 ")",
			(int)op->k->klen, op->k->key,
			(int)(last->iov_len > 64 ? 64 : last->iov_len),
			(const char *)last->iov_base, count_of(tparent), count_of(tparent));
		return -EINVAL;
	}
	cJSON_DetachItemViaPointer(parent, c);
	if (t) {
		rc = child_replace(tparent, t, c);
	} else if (append) {
		/* After the array's last element as the name saw it (its
		 * length then): the source may have left the same array. */
		cJSON_free(c->string);
		c->string = NULL;
		rc = cJSON_AddItemToArray(tparent, c) ? 0 : -ENOMEM;
	} else {
		rc = child_add(op->k, tparent, last->iov_base, last->iov_len, c);
	}
	if (rc)
		cJSON_Delete(c); /* the edit fails: the tree is dropped unstored */
	return rc;
}

int json_tree_move(struct keyspace *ks, const struct ks_key *k, const struct iovec *from, size_t fn,
		   const struct iovec *to, size_t tn, unsigned flags)
{
	struct tree_op op = {.k = k, .names = from, .n = fn, .to = to, .tn = tn, .flags = flags};
	return json_tree_doc_edit(ks, k, edit_move, &op);
}

static int edit_retype(cJSON *root, void *arg)
{
	struct tree_op *op = arg;
	cJSON *parent, *c, *nw = NULL;
	struct buf t = BUF_INIT;
	int rc = walk_found(root, op->names, op->n, &parent, &c);
	if (rc)
		return rc;
	const char *cur = json_tree_type(c);
	bool want_dir = strcmp(op->type, "object") == 0 || strcmp(op->type, "array") == 0;
	if (strcmp(cur, op->type) == 0)
		return 1; /* nothing to write */
	if (!want_dir && !type_is_scalar(op->type)) {
		LOG_ERR("'%.*s' tree: '%s' is no JSON type", (int)op->k->klen, op->k->key,
			op->type);
		return -EINVAL;
	}
	if (want_dir != is_dir(c)) {
		LOG_ERR("'%.*s' tree: %s %s cannot become %s %s (a file stays a file, a "
			"directory a directory)",
			(int)op->k->klen, op->k->key,
			cur[0] == 'a' || cur[0] == 'o' || cur[0] == 'i' ? "an" : "a", cur,
			op->type[0] == 'a' || op->type[0] == 'o' || op->type[0] == 'i' ? "an" : "a",
			op->type);
		return -EINVAL;
	}
	if (want_dir) {
		if (c->child)
			return -ENOTEMPTY;
		/* Empty: the node changes in place (the root too). */
		c->type = (c->type & ~0xFF) | (op->type[0] == 'a' ? cJSON_Array : cJSON_Object);
		return 0;
	} else {
		/* The file text, minus its newline; a string's as it is. */
		rc = file_text(c, &t);
		if (!rc)
			rc = text_value(op->k, t.data, t.len, op->type, false, &nw);
	}
	buf_release(&t);
	if (!rc && !parent) {
		LOG_ERR("'%.*s' tree: a document that is one scalar changes type through its key "
			"(JSON.SET)",
			(int)op->k->klen, op->k->key);
		rc = -EINVAL;
	}
	if (!rc)
		rc = child_replace(parent, c, nw);
	if (rc)
		cJSON_Delete(nw);
	return rc;
}

int json_tree_retype(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		     size_t n, const char *type)
{
	struct tree_op op = {.k = k, .names = names, .n = n, .type = type};
	int rc = json_tree_doc_edit(ks, k, edit_retype, &op);
	return rc == 1 ? 0 : rc;
}
