/*
 * fs_json: JSON keys as files, and the unlisted names that reach inside a
 * document (docs/mapping.md section 18). Layer: fs.
 *
 * A JSON key is a regular file holding its document as compact text and
 * a newline; a remembered empty JSON key is an empty file. Next to it, a
 * name KEY:PATH, where KEY is a JSON key and PATH a JSONPath of t_json.h,
 * is the value at PATH ("path name"; for a path of several matches, the
 * JSON array of them, and writes change every match), and KEY:PATH:type and
 * KEY:PATH:keys are read-only views (JSON.TYPE, JSON.OBJKEYS). Such names
 * are never listed, never cached by the kernel, and only mean this while
 * no key has that exact name. Writing a path name is JSON.SET, removing
 * it JSON.DEL; appending (O_APPEND, `>>`) to a JSON file or path name
 * adds to the value there: ARRAPPEND, NUMINCRBY or STRAPPEND by its type.
 */
#include "fs/fs_int.h"

#include <errno.h>

#include "types/t_json.h"

enum jview { JVIEW_VALUE, JVIEW_TYPE, JVIEW_KEYS };

/* A path name resolved: caller-owned, jalias_init/_release. */
struct jalias {
	struct buf key;	  /* the JSON key's name */
	struct ks_key k;  /* that key (borrows key and the namespace) */
	const char *path; /* the JSONPath, borrowed from the name resolved */
	size_t plen;
	enum jview view;
	uint64_t version; /* the key's, for its stored attributes */
};

static void jalias_init(struct jalias *a)
{
	memset(a, 0, sizeof(*a));
	buf_init(&a->key);
}

static void jalias_release(struct jalias *a)
{
	buf_release(&a->key);
}

/* A view suffix at the end of a path name. */
static enum jview view_suffix(const char *s, size_t *n)
{
	static const struct {
		const char *suffix;
		enum jview view;
	} views[] = {{":type", JVIEW_TYPE}, {":keys", JVIEW_KEYS}};
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		size_t sl = strlen(views[i].suffix);
		if (*n > sl && memcmp(s + *n - sl, views[i].suffix, sl) == 0) {
			*n -= sl;
			return views[i].view;
		}
	}
	return JVIEW_VALUE;
}

/* Is k (a name that is no key) a path name of a JSON key? The first
 * ":$" after which a valid path follows and before which a JSON key is
 * named decides. 0 with a filled, -ENOENT, <0. */
static int jalias_find(struct fs *fs, const struct ks_key *k, struct jalias *a)
{
	const char *name = k->key, *end = k->key + k->klen;
	for (const char *c = name; (c = memmem(c, (size_t)(end - c), ":$", 2)); c++) {
		const char *path = c + 1;
		size_t plen = (size_t)(end - path);
		enum jview view = view_suffix(path, &plen);
		if (json_path_check(path, plen))
			continue;
		struct ks_key jk = {k->ns, k->nslen, name, (size_t)(c - name), NULL, NULL};
		struct ks_info info;
		int rc = ks_lookup(fs->ks, &jk, &info);
		if (rc == -ENOENT || (!rc && info.type != KV_TYPE_JSON))
			continue;
		if (rc)
			return rc;
		rc = buf_set(&a->key, jk.key, jk.klen);
		if (rc)
			return rc;
		a->k = (struct ks_key){k->ns, k->nslen, a->key.data, a->key.len, NULL, NULL};
		a->path = path;
		a->plen = plen;
		a->view = view;
		a->version = info.version;
		return 0;
	}
	return -ENOENT;
}

bool fs_json_name_indefinite(struct fs *fs, const struct ks_key *k)
{
	struct jalias a;
	jalias_init(&a);
	bool yes = jalias_find(fs, k, &a) == 0 && !json_path_is_definite(a.path, a.plen);
	jalias_release(&a);
	return yes;
}

/* Could `name` be a path name (it holds ":$")? A cheap test, no lookup. */
static bool jalias_maybe(const char *name, size_t n)
{
	return memmem(name, n, ":$", 2) != NULL;
}

/* The keys of an object, one per line, `\` and newline escaped. */
static int keys_text(const struct buf *keys, struct buf *out)
{
	int rc = 0;
	for (size_t i = 0; i < keys->len && !rc; i++) {
		char c = keys->data[i];
		if (c == '\0')
			rc = buf_add(out, "\n", 1);
		else if (c == '\\')
			rc = buf_add(out, "\\\\", 2);
		else if (c == '\n')
			rc = buf_add(out, "\\n", 2);
		else
			rc = buf_add(out, &c, 1);
	}
	return rc;
}

/* What a path name shows. */
static int alias_text(struct fs *fs, const struct jalias *a, struct buf *out)
{
	struct buf tmp = BUF_INIT;
	const char *type;
	int rc;
	buf_reset(out);
	switch (a->view) {
	case JVIEW_TYPE:
		if (!json_path_is_definite(a->path, a->plen)) {
			rc = json_types(fs->ks, &a->k, a->path, a->plen, out); /* a line each */
			rc = rc > 0 ? 0 : rc;
			break;
		}
		rc = json_type(fs->ks, &a->k, a->path, a->plen, &type);
		if (!rc)
			rc = buf_printf(out, "%s\n", type);
		break;
	case JVIEW_KEYS:
		if (!json_path_is_definite(a->path, a->plen)) {
			rc = json_objkeys_each(fs->ks, &a->k, a->path, a->plen, out);
			rc = rc > 0 ? 0 : rc;
			break;
		}
		rc = json_objkeys(fs->ks, &a->k, a->path, a->plen, &tmp);
		if (rc >= 0)
			rc = keys_text(&tmp, out);
		break;
	default:
		rc = json_get(fs->ks, &a->k, a->path, a->plen, out);
		if (!rc)
			rc = buf_add(out, "\n", 1);
		break;
	}
	buf_release(&tmp);
	return rc;
}

/* Attributes of JSON key k (info: its ks_lookup) or, with info NULL, of
 * path name k, which shows its key's stored mode, owner and times (a view
 * without write permission). The timeout is 0: contents are recomputed. */
static int jf_stat(struct fs *fs, const struct ks_key *k, const struct ks_info *info,
		   struct stat *st, double *timeout)
{
	uint64_t size = 0;
	int rc = 0;
	if (info) {
		/* The key itself: its text and a newline, or nothing. */
		if (!info->empty && !(rc = json_text_len(fs->ks, k, &size)))
			size++;
		if (!rc) {
			fs_stat_fill(fs, S_IFREG | 0644, size, info->version, info->expire_ms, st,
				     timeout);
			fs_stat_attrs(fs, NULL, k, info->version, NULL, 0, st);
		}
	} else {
		struct jalias a;
		struct buf text = BUF_INIT;
		jalias_init(&a);
		rc = jalias_find(fs, k, &a);
		if (!rc)
			rc = alias_text(fs, &a, &text);
		/* A path name reaches into its key: the key's mode and owner
		 * guard it too (a 0600 document must not be read through
		 * one), and its times are the document's. */
		if (!rc) {
			fs_stat_fill(fs, S_IFREG | 0644, text.len, a.version, 0, st, timeout);
			fs_stat_attrs(fs, NULL, &a.k, a.version, NULL, 0, st);
			if (a.view != JVIEW_VALUE)
				st->st_mode &= ~(mode_t)0222;
		}
		buf_release(&text);
		jalias_release(&a);
	}
	*timeout = 0; /* what a write stores is recomputed; paths change meaning */
	return rc;
}

/* Open of path name k: 0 (*view: a read-only view; EACCES for writing
 * one), -ENOENT. */
static int jf_open(struct fs *fs, const struct ks_key *k, bool write, bool *view)
{
	struct jalias a;
	jalias_init(&a);
	int rc = jalias_find(fs, k, &a);
	*view = !rc && a.view != JVIEW_VALUE;
	if (*view && write) {
		LOG_ERR("'%.*s' is a read-only view", (int)k->klen, k->key);
		rc = -EACCES;
	}
	jalias_release(&a);
	return rc;
}

/* Contents of a JSON key or path name file (a path being created: ""). */
static int jf_load(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	struct jalias a;
	buf_reset(out);
	int rc = json_get(fs->ks, k, "$", 1, out);
	if (!rc)
		return buf_add(out, "\n", 1);
	if (rc != -ENOENT)
		return rc;
	struct ks_info info;
	if (ks_lookup(fs->ks, k, &info) == 0)
		return info.type == KV_TYPE_JSON ? 0 : -KV_EWRONGTYPE; /* an empty key */
	jalias_init(&a);
	rc = jalias_find(fs, k, &a);
	if (!rc)
		rc = alias_text(fs, &a, out);
	if (rc == -ENOENT && a.key.len && a.view == JVIEW_VALUE)
		rc = 0; /* a path being created: empty until written */
	jalias_release(&a);
	return rc;
}

/* Store a JSON key's or path name's file: JSON.SET (empty: the empty
 * document for a key, EINVAL for a path). */
static int jf_commit(struct fs *fs, const struct ks_key *k, const char *d, size_t n)
{
	struct ks_info info;
	int rc = ks_lookup(fs->ks, k, &info);
	if (rc == -ENOENT) {
		struct jalias a;
		jalias_init(&a);
		rc = jalias_find(fs, k, &a);
		if (!rc && a.view != JVIEW_VALUE)
			rc = -EACCES;
		else if (!rc)
			rc = json_set(fs->ks, &a.k, a.path, a.plen, d, n, 0);
		bool alias = a.key.len > 0;
		jalias_release(&a);
		if (alias || rc != -ENOENT)
			return rc;
		/* Neither a key nor a path name: the key went while open, and
		 * the file stores it anew (as a string file would). */
		return n ? json_set(fs->ks, k, "$", 1, d, n, 0) : 0;
	}
	if (rc)
		return rc;
	if (info.type != KV_TYPE_JSON)
		return -KV_EWRONGTYPE;
	return n ? json_set(fs->ks, k, "$", 1, d, n, 0) : json_clear(fs->ks, k);
}

/* Appended bytes (O_APPEND) of a JSON key or path name: ARRAPPEND,
 * STRAPPEND or NUMINCRBY by the type of the value there; JSON.SET where
 * there is none. */
static int jf_add(struct fs *fs, const struct ks_key *k, const char *d, size_t n)
{
	struct jalias a;
	struct ks_info info;
	const char *type;
	uint64_t len;
	jalias_init(&a);
	struct ks_key jk = *k;
	const char *path = "$";
	size_t plen = 1;
	int rc = ks_lookup(fs->ks, k, &info);
	if (rc == -ENOENT) {
		rc = jalias_find(fs, k, &a);
		if (!rc && a.view != JVIEW_VALUE)
			rc = -EACCES;
		jk = a.k;
		path = a.path;
		plen = a.plen;
	}
	if (!rc)
		rc = json_type(fs->ks, &jk, path, plen, &type);
	if (rc == -ENOENT) {
		/* Nothing there yet: appending sets it. */
		rc = json_set(fs->ks, &jk, path, plen, d, n, 0);
	} else if (!rc && strcmp(type, "array") == 0) {
		rc = json_arrappend(fs->ks, &jk, path, plen, d, n, &len);
	} else if (!rc && strcmp(type, "string") == 0) {
		rc = json_strappend(fs->ks, &jk, path, plen, d, n, &len);
	} else if (!rc && (strcmp(type, "integer") == 0 || strcmp(type, "number") == 0)) {
		rc = json_numincrby(fs->ks, &jk, path, plen, d, n, NULL);
	} else if (!rc) {
		LOG_ERR("append to '%.*s': nothing can be added to %s %s (write the whole value "
			"or a member's path name)",
			(int)k->klen, k->key, type[0] == 'o' ? "an" : "a", type);
		rc = -EINVAL;
	}
	jalias_release(&a);
	return rc;
}

/* rm of path name k: JSON.DEL. -ENOENT if k is none. */
static int jf_unlink(struct fs *fs, const struct ks_key *k)
{
	struct jalias a;
	jalias_init(&a);
	int rc = jalias_find(fs, k, &a);
	if (!rc && a.view != JVIEW_VALUE) {
		LOG_ERR("'%.*s' is a read-only view: it cannot be removed", (int)k->klen, k->key);
		rc = -EACCES;
	} else if (!rc) {
		rc = json_del(fs->ks, &a.k, a.path, a.plen);
	}
	jalias_release(&a);
	return rc;
}

static int json_from_new(struct fs *fs, const struct ks_key *k)
{
	return json_from_string(fs->ks, k); /* EINVAL if it is no JSON */
}

static int json_to_new(struct fs *fs, const struct ks_key *k)
{
	return json_to_string(fs->ks, k, JSON_NEWLINE);
}

static const struct fs_help json_help[] = {
    {"KEY", "the document as JSON text; a write that does not parse is refused",
     "echo '{\"a\":1}' > j"},
    {"KEY:PATH", "JSON.GET, JSON.SET at close, rm is JSON.DEL", "cat \"j:$.a\""},
    {"KEY:PATH (>>)", "adds by type: ARRAPPEND, NUMINCRBY, STRAPPEND", "echo 2 >> \"j:$.a\""},
    {"KEY:PATH:type", "view: JSON.TYPE", "cat \"j:$.a:type\""},
    {"KEY:PATH:keys", "view: JSON.OBJKEYS", "cat \"j:$:keys\""},
    {"KEY:$..a[?(@.n>1)]",
     "wildcards, .., slices [1:3], unions [0,2], filters: cat shows the array of every match; "
     ">, >>, rm change them all; :type and :keys a line each",
     "rm 'j:$.l[?(@.done==true)]'"},
    {"KEY:tree", "the document as a tree: objects and arrays are directories, scalars files",
     "grep -r web j:tree"},
    {"KEY:tree/.../NAME", "a scalar's text and a newline (a string raw); a write is one JSON.SET",
     "echo 8080 > j:tree/server/port"},
    {NULL, NULL, NULL},
};

const struct fs_file_shape fs_json_file_shape = {
    .type = KV_TYPE_JSON,
    .recomputed = true,
    .parsed = true,
    .is_name = jalias_maybe,
    .stat = jf_stat,
    .open = jf_open,
    .load = jf_load,
    .commit = jf_commit,
    .add = jf_add,
    .unlink = jf_unlink,
    .from_new = json_from_new,
    .to_new = json_to_new,
    .help = json_help,
};
