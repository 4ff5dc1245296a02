/*
 * fs_sketch: what the directory shapes of sketch types share (see the
 * "Sketch keys" part of fs_int.h). A sketch key's listed files are its
 * exact state, each replaced whole and validated on commit or on the
 * rename of a scratch file (rsync's .NAME.XXXXXX), a fixed set of parts
 * (each maybe listed only while it holds something) or a set the state
 * decides; its unlisted names are views (answered by a function of the
 * type) and inputs (lines written are items, numbers or key names, fed as
 * they complete). Also the text helpers the types share. Layer: fs.
 */
#include "fs/fs_int.h"
#include "fs/fs_xval.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static const struct fs_sketch_view *find_view(const struct fs_sketch *s, const char *name, size_t n,
					      const char **arg, size_t *an)
{
	for (size_t i = 0; i < s->nviews; i++) {
		const char *v = s->views[i].name;
		size_t vn = strlen(v);
		bool prefix = vn && v[vn - 1] == ':';
		if (prefix ? has_prefix(name, n, v) : (n == vn && !memcmp(name, v, n))) {
			if (arg) {
				*arg = name + vn;
				*an = n - vn;
			}
			return &s->views[i];
		}
	}
	return NULL;
}

static const struct fs_sketch_input *find_input(const struct fs_sketch *s, const char *name,
						size_t n)
{
	for (size_t i = 0; i < s->ninputs; i++)
		if (strlen(s->inputs[i].name) == n && !memcmp(s->inputs[i].name, name, n))
			return &s->inputs[i];
	return NULL;
}

bool fs_sketch_is_view(const struct fs_sketch *s, const char *name, size_t n)
{
	return find_view(s, name, n, NULL, NULL) != NULL;
}

bool fs_sketch_is_input(const struct fs_sketch *s, const char *name, size_t n)
{
	return find_input(s, name, n) != NULL;
}

int fs_sketch_lines(const char *d, size_t dn, struct iovec **items, size_t *n)
{
	size_t count = 0, cap = 0;
	struct iovec *v = NULL;
	const char *p = d, *end = d + dn;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *stop = nl ? nl : end;
		if (count == cap) {
			cap = cap ? 2 * cap : 64;
			struct iovec *nv = realloc(v, cap * sizeof(*nv));
			if (!nv) {
				free(v);
				return -ENOMEM;
			}
			v = nv;
		}
		v[count].iov_base = (void *)p;
		v[count].iov_len = (size_t)(stop - p);
		count++;
		p = nl ? nl + 1 : end;
	}
	*items = v;
	*n = count;
	return 0;
}

int fs_sketch_add_double(struct buf *b, double d)
{
	char t[40];
	if (isnan(d))
		return buf_add(b, "nan", 3);
	return buf_add(b, t, fmt_double_g17(d, t));
}

/* A line of blanks (text_is_blank), where a NUL byte counts as one too,
 * as it did in the strchr(" \t\r", c) test this was. NEEDSWORK: refuse
 * a NUL as any other byte that is no number? (a behaviour change) */
static bool blank_line(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] && !text_is_blank(s + i, 1))
			return false;
	return true;
}

int fs_sketch_numbers(const char *d, size_t dn, const char *what, double **v, size_t *n)
{
	struct iovec *lines = NULL;
	size_t count = 0, got = 0;
	int rc = fs_sketch_lines(d, dn, &lines, &count);
	*v = rc ? NULL : malloc((count ? count : 1) * sizeof(**v));
	if (!rc && !*v)
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < count; i++) {
		const char *l = lines[i].iov_base;
		size_t ln = lines[i].iov_len;
		if (blank_line(l, ln))
			continue;
		if (parse_double(l, ln, &(*v)[got])) {
			LOG_ERR("%s: line %zu ('%.*s') is not a number", what, i + 1,
				(int)(ln > 60 ? 60 : ln), l);
			rc = -EINVAL;
		}
		got++;
	}
	free(lines);
	*n = got;
	return rc;
}

int fs_sketch_pairs(const char *d, size_t dn,
		    int (*cb)(void *arg, const char *nm, size_t nn, const char *v, size_t vn),
		    void *arg)
{
	struct iovec *lines = NULL;
	size_t n = 0;
	int rc = fs_sketch_lines(d, dn, &lines, &n);
	for (size_t i = 0; !rc && i < n; i++) {
		const char *l = lines[i].iov_base;
		size_t ln = lines[i].iov_len;
		fs_xval_strip(&l, &ln);
		if (!ln)
			continue;
		size_t k = 0;
		while (k < ln && l[k] != ' ' && l[k] != '\t')
			k++;
		const char *v = l + k;
		size_t vn = ln - k;
		fs_xval_strip(&v, &vn);
		rc = cb(arg, l, k, v, vn);
	}
	free(lines);
	return rc;
}

int fs_sketch_file_index(const struct fs_sketch *s, const char *name, size_t n)
{
	if (s->file_index)
		return s->file_index(name, n);
	for (size_t i = 0; i < s->nparts; i++)
		if (n == strlen(s->parts[i].name) && !memcmp(name, s->parts[i].name, n))
			return (int)i;
	return -1;
}

/* State file i: the type's, or one of its fixed names, rendered. */
static int file_at(const struct fs_sketch *s, struct fs_ctx *c, uint32_t i, struct buf *name,
		   uint64_t *size, uint64_t *version)
{
	if (s->file)
		return s->file(c, i, name, size, version);
	if (i >= s->nparts)
		return 0;
	struct buf o = BUF_INIT;
	int rc = s->file_load(c, (int)i, &o);
	if (rc == 0) {
		*size = o.len;
		*version = 0; /* times: the key's (each feed touches it) */
		rc = buf_set(name, s->parts[i].name, strlen(s->parts[i].name));
		if (!rc)
			rc = 1;
	}
	buf_release(&o);
	return rc;
}

int fs_sketch_lookup(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		     struct fs_entry *e)
{
	struct buf nm = BUF_INIT;
	uint64_t size = 0, version = 0;
	int rc;
	if (fs_sketch_is_view(s, name, n)) {
		/* answered now: its size, and a malformed name fails here */
		rc = fs_sketch_load(s, c, name, n, &nm);
		size = nm.len;
		if (!rc)
			rc = fs_entry_set(e, name, n, S_IFREG | 0444, size);
		e->view = true;
	} else if (fs_sketch_is_input(s, name, n)) {
		e->blksize = FS_INPUT_BLKSIZE;
		rc = fs_entry_set(e, name, n, S_IFREG | 0644, 0);
	} else {
		int idx = fs_sketch_file_index(s, name, n);
		rc = idx < 0 ? -ENOENT : file_at(s, c, (uint32_t)idx, &nm, &size, &version);
		if (rc == 1)
			rc = fs_entry_set(e, name, n, S_IFREG | 0644, size);
		else if (rc >= 0)
			rc = -ENOENT; /* none now */
		e->version = version;
	}
	buf_release(&nm);
	return rc == -KV_EWRONGTYPE ? -ENOENT : rc; /* it changed type meanwhile */
}

/* A listing: the state files after the cursor, in number order, each
 * read when it is reached. The cursor is the file's number: names do not
 * sort as numbers ("filter.10" < "filter.2"), so a name cannot say where
 * the enumeration stands. */
struct skit {
	const struct fs_sketch *s;
	struct fs_ctx c;
	uint32_t next; /* the number of the next file to look at */
	bool done;
	struct buf name;
	uint8_t cursor[8];
};

int fs_sketch_iter_open(const struct fs_sketch *s, struct fs_ctx *c, const void *after, size_t alen,
			void **out)
{
	struct skit *it = calloc(1, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->s = s;
	it->c = *c;
	buf_init(&it->name);
	/* Anything else (a name prefix, fs_dir_find_long) lists from the
	 * first: state files have no long names. */
	uint64_t i;
	if (fs_cursor_number(after, alen, &i)) {
		it->next = i < UINT32_MAX ? (uint32_t)i + 1 : UINT32_MAX;
		it->done = i >= UINT32_MAX;
	}
	*out = it;
	return 0;
}

int fs_sketch_iter_next(void *arg, struct fs_child *ch)
{
	struct skit *it = arg;
	int rc = 0;
	while (!it->done) {
		uint64_t size = 0, version = 0;
		uint32_t i = it->next++;
		rc = file_at(it->s, &it->c, i, &it->name, &size, &version);
		if (rc == FS_SKETCH_ABSENT)
			continue;
		if (rc <= 0 || i == UINT32_MAX)
			it->done = true;
		if (rc != 1)
			break;
		ch->name = it->name.data;
		ch->n = it->name.len;
		fs_child_set_number(ch, it->cursor, i);
		ch->mode = S_IFREG | 0644;
		ch->version = version;
		ch->size = size;
		return 1;
	}
	/* The key went away or changed type: nothing more to list. */
	return rc == -ENOENT || rc == -KV_EWRONGTYPE ? 0 : rc;
}

void fs_sketch_iter_free(void *arg)
{
	struct skit *it = arg;
	buf_release(&it->name);
	free(it);
}

/* Every line not empty names a key of this namespace as the tree spells
 * it. */
static int feed_keys(const struct fs_sketch *s, const struct fs_sketch_input *in, struct fs_ctx *c,
		     const struct iovec *items, size_t n)
{
	struct ks_key *srcs = calloc(n ? n : 1, sizeof(*srcs));
	struct buf *names = calloc(n ? n : 1, sizeof(*names));
	struct buf typed = BUF_INIT;
	size_t got = 0;
	int rc = srcs && names ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++) {
		uint64_t hash = 0;
		if (items[i].iov_len == 0)
			continue;
		buf_init(&names[got]);
		rc = buf_set(&typed, items[i].iov_base, items[i].iov_len);
		if (!rc && (memchr(typed.data, 0, typed.len) ||
			    names_decode(typed.data, &names[got], &hash) || hash)) {
			LOG_ERR("%s: line %zu, '%s', is not a key name of this namespace", in->name,
				i + 1, typed.data);
			rc = -EINVAL;
		}
		srcs[got] = c->k;
		srcs[got].key = names[got].data;
		srcs[got].klen = names[got].len;
		srcs[got].attr = NULL;
		srcs[got].snap = NULL;
		got++;
	}
	if (!rc && got)
		rc = in->feed_keys(c, srcs, got);
	if (rc == -KV_EWRONGTYPE)
		LOG_ERR("%s: a source key is not a %s", in->name, s->what);
	for (size_t i = 0; i < got; i++)
		buf_release(&names[i]);
	buf_release(&typed);
	free(names);
	free(srcs);
	return rc;
}

int fs_sketch_feed(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		   const char *d, size_t dn)
{
	const struct fs_sketch_input *in = find_input(s, name, n);
	struct iovec *items;
	size_t count;
	if (!in)
		return -EACCES;
	if (in->feed_numbers) {
		char what[80];
		double *v;
		snprintf(what, sizeof(what), "%s %s", s->what, in->name);
		int rc = fs_sketch_numbers(d, dn, what, &v, &count);
		if (!rc && count)
			rc = in->feed_numbers(c, v, count);
		free(v);
		return rc;
	}
	int rc = fs_sketch_lines(d, dn, &items, &count);
	if (rc)
		return rc;
	rc = in->feed_keys ? feed_keys(s, in, c, items, count) : in->feed(c, items, count);
	free(items);
	return rc;
}

int fs_sketch_load(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		   struct buf *out)
{
	const char *arg;
	size_t an;
	const struct fs_sketch_view *v = find_view(s, name, n, &arg, &an);
	buf_reset(out);
	if (v)
		return v->read(c, arg, an, out);
	if (fs_sketch_is_input(s, name, n))
		return 0; /* an input reads as empty */
	int idx = fs_sketch_file_index(s, name, n);
	int rc = idx < 0 ? -ENOENT : s->file_load(c, idx, out);
	return rc == FS_SKETCH_ABSENT ? 0 : rc;
}

static int store(const struct fs_sketch *s, struct fs_ctx *c, int idx, const char *d, size_t dn)
{
	return s->parts ? s->parts[idx].store(c, d, dn) : s->file_store(c, idx, d, dn);
}

int fs_sketch_check(const struct fs_sketch *s, const char *name, size_t n, const char *d, size_t dn)
{
	int idx = s->parts ? fs_sketch_file_index(s, name, n) : -1;
	const char *nl = dn ? memrchr(d, '\n', dn) : NULL;
	if (idx < 0 || !nl)
		return 0; /* the rest is checked when the file is stored */
	return s->parts[idx].store(NULL, d, (size_t)(nl - d) + 1);
}

int fs_sketch_commit(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		     const char *d, size_t dn)
{
	if (fs_sketch_is_view(s, name, n) || fs_sketch_is_input(s, name, n))
		return -EACCES;
	int idx = fs_sketch_file_index(s, name, n);
	if (idx < 0)
		return -ENOENT;
	/* Nothing written yet (a shell closes a duplicate of the file before
	 * it writes): this changes nothing (rm empties a part). */
	if (dn == 0)
		return 0;
	return store(s, c, idx, d, dn);
}

static bool is_scratch(const struct fs_sketch *s, const char *name, size_t n)
{
	return fs_is_scratch_name(name, n) && !fs_sketch_is_view(s, name, n) &&
	       !fs_sketch_is_input(s, name, n) && fs_sketch_file_index(s, name, n) < 0;
}

int fs_sketch_create(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n)
{
	if (is_scratch(s, name, n))
		return FS_CREATE_SCRATCH;
	if (fs_sketch_is_view(s, name, n) || fs_sketch_is_input(s, name, n))
		return -EEXIST;
	int idx = fs_sketch_file_index(s, name, n);
	if (idx >= 0 && s->parts && s->parts[idx].clear) {
		/* An empty part (the kernel found none), written at close. */
		struct fs_entry e;
		fs_entry_init(&e);
		int rc = fs_sketch_lookup(s, c, name, n, &e);
		fs_entry_release(&e);
		return rc == 0 ? -EEXIST : rc == -ENOENT ? FS_CREATE_PENDING : rc;
	}
	if (idx >= 0) {
		/* A state file this key does not have (the kernel found none). */
		LOG_ERR("create '%.*s': this %s has no such file (its state decides which exist)",
			(int)n, name, s->what);
		return -ENOENT;
	}
	return fs_shape_refuse_name(c, "create", name, n);
}

int fs_sketch_unlink(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n)
{
	if (fs_sketch_is_view(s, name, n) || fs_sketch_is_input(s, name, n))
		return -EACCES;
	struct fs_entry e;
	fs_entry_init(&e);
	int rc = fs_sketch_lookup(s, c, name, n, &e);
	fs_entry_release(&e);
	if (rc)
		return rc;
	int idx = fs_sketch_file_index(s, name, n);
	return s->parts && s->parts[idx].clear ? s->parts[idx].clear(c) : s->clear(c);
}

int fs_sketch_adopt(const struct fs_sketch *s, struct fs_ctx *c, const char *to, size_t tn,
		    const char *d, size_t dn, struct buf *canon)
{
	if (is_scratch(s, to, tn))
		return FS_ADOPT_LOCAL;
	int idx = fs_sketch_file_index(s, to, tn);
	if (idx < 0)
		return fs_shape_refuse_name(c, "rename onto", to, tn);
	int rc = store(s, c, idx, d, dn);
	return rc ? rc : buf_set(canon, to, tn);
}

int fs_sketch_param_key(const struct fs_ctx *c, enum kv_type type, const char *param)
{
	if (c->info.empty || c->info.type == type)
		return 0;
	/* As for user.kvfs.type: a key's type changes only while it is empty. */
	LOG_ERR("user.kvfs.%s.%s: '%.*s' is a %s, not a %s, and not empty", enc_type_name(type),
		param, (int)c->k.klen, c->k.key, enc_type_name(c->info.type), enc_type_name(type));
	return -ENOTEMPTY;
}
