/*
 * fs_sketch: what the directory shapes of sketch types share (see the
 * "Sketch keys" part of fs_int.h). A sketch key's listed files are its
 * exact state, each replaced whole and validated on commit or on the
 * rename of a scratch file (rsync's .NAME.XXXXXX); its unlisted names are
 * views (answered by a function of the type) and inputs (lines written
 * are items, fed as they complete). Layer: fs.
 */
#include "fs_int.h"

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
		if (prefix ? (n >= vn && !memcmp(name, v, vn)) : (n == vn && !memcmp(name, v, n))) {
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

static void trim(const char **s, size_t *n)
{
	while (*n && strchr(" \t\r\n", (*s)[0])) {
		(*s)++;
		(*n)--;
	}
	while (*n && strchr(" \t\r\n", (*s)[*n - 1]))
		(*n)--;
}

int fs_sketch_u64(const char *s, size_t n, uint64_t min, uint64_t max, const char *what,
		  uint64_t *out)
{
	trim(&s, &n);
	if (parse_u64(s, n, out) || *out < min || *out > max) {
		LOG_ERR("%s: '%.*s' is not a whole number from %llu to %llu", what,
			n > 40 ? 40 : (int)n, s, (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	return 0;
}

int fs_sketch_double(const char *s, size_t n, const char *what, double *out)
{
	if (parse_double(s, n, out)) {
		trim(&s, &n);
		LOG_ERR("%s: '%.*s' is not a number", what, n > 40 ? 40 : (int)n, s);
		return -EINVAL;
	}
	return 0;
}

int fs_sketch_add_double(struct buf *b, double d)
{
	char t[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(t, sizeof(t), "%.*g", prec, d);
		if (strtod(t, NULL) == d || isnan(d))
			break;
	}
	return buf_add(b, t, strlen(t));
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
		trim(&l, &ln);
		if (!ln)
			continue;
		size_t k = 0;
		while (k < ln && l[k] != ' ' && l[k] != '\t')
			k++;
		const char *v = l + k;
		size_t vn = ln - k;
		trim(&v, &vn);
		rc = cb(arg, l, k, v, vn);
	}
	free(lines);
	return rc;
}

int fs_sketch_lookup(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		     struct fs_entry *e)
{
	if (fs_sketch_is_view(s, name, n)) {
		e->view = true;
		return fs_entry_set(e, name, n, S_IFREG | 0444, 0);
	}
	if (fs_sketch_is_input(s, name, n)) {
		e->blksize = FS_INPUT_BLKSIZE;
		return fs_entry_set(e, name, n, S_IFREG | 0644, 0);
	}
	int idx = s->file_index(name, n);
	if (idx < 0)
		return -ENOENT;
	struct buf nm = BUF_INIT;
	uint64_t size;
	int rc = s->file(c, (uint32_t)idx, &nm, &size);
	if (rc == 1)
		rc = fs_entry_set(e, name, n, S_IFREG | 0644, size);
	else if (rc == 0)
		rc = -ENOENT;
	buf_release(&nm);
	return rc;
}

/* A listing: the state files after the cursor, read at open (a sketch
 * has a handful). */
struct skit {
	struct buf names; /* NUL-separated */
	uint64_t *sizes;
	size_t n, next, off;
};

int fs_sketch_iter_open(const struct fs_sketch *s, struct fs_ctx *c, const void *after, size_t alen,
			void **out)
{
	struct skit *it = calloc(1, sizeof(*it));
	struct buf nm = BUF_INIT;
	size_t cap = 0;
	int rc = 0;
	if (!it)
		return -ENOMEM;
	buf_init(&it->names);
	for (uint32_t i = 0;; i++) {
		uint64_t size;
		rc = s->file(c, i, &nm, &size);
		if (rc <= 0)
			break;
		rc = 0;
		if (after && bytes_cmp(nm.data, nm.len, after, alen) <= 0)
			continue;
		if (it->n == cap) {
			cap = cap ? 2 * cap : 8;
			uint64_t *ns = realloc(it->sizes, cap * sizeof(*ns));
			if (!ns) {
				rc = -ENOMEM;
				break;
			}
			it->sizes = ns;
		}
		it->sizes[it->n++] = size;
		rc = buf_add(&it->names, nm.data, nm.len + 1);
		if (rc)
			break;
	}
	buf_release(&nm);
	if (rc == -ENOENT)
		rc = 0; /* the key went away: nothing to list */
	if (rc) {
		fs_sketch_iter_free(it);
		return rc;
	}
	*out = it;
	return 0;
}

int fs_sketch_iter_next(void *arg, struct fs_child *ch)
{
	struct skit *it = arg;
	if (it->next >= it->n)
		return 0;
	ch->name = it->names.data + it->off;
	ch->n = strlen(ch->name);
	ch->cursor = NULL;
	ch->mode = S_IFREG | 0644;
	ch->size = it->sizes[it->next++];
	it->off += ch->n + 1;
	return 1;
}

void fs_sketch_iter_free(void *arg)
{
	struct skit *it = arg;
	buf_release(&it->names);
	free(it->sizes);
	free(it);
}

int fs_sketch_feed(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		   const char *d, size_t dn)
{
	const struct fs_sketch_input *in = find_input(s, name, n);
	struct iovec *items;
	size_t count;
	if (!in)
		return -EACCES;
	int rc = fs_sketch_lines(d, dn, &items, &count);
	if (rc)
		return rc;
	rc = in->feed(c, items, count);
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
	int idx = s->file_index(name, n);
	return idx < 0 ? -ENOENT : s->file_load(c, idx, out);
}

int fs_sketch_commit(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n,
		     const char *d, size_t dn)
{
	if (fs_sketch_is_view(s, name, n) || fs_sketch_is_input(s, name, n))
		return -EACCES;
	int idx = s->file_index(name, n);
	if (idx < 0)
		return -ENOENT;
	/* Nothing written yet (a shell closes a duplicate of the file before
	 * it writes): no state file is empty, so this changes nothing. */
	if (dn == 0)
		return 0;
	return s->file_store(c, idx, d, dn);
}

static bool is_scratch(const struct fs_sketch *s, const char *name, size_t n)
{
	return n > 0 && name[0] == '.' && !fs_sketch_is_view(s, name, n) &&
	       !fs_sketch_is_input(s, name, n);
}

int fs_sketch_create(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n)
{
	(void)c;
	if (is_scratch(s, name, n))
		return FS_CREATE_SCRATCH;
	if (fs_sketch_is_view(s, name, n) || fs_sketch_is_input(s, name, n))
		return -EEXIST;
	if (s->file_index(name, n) >= 0) {
		/* A state file this key does not have (the kernel found none). */
		LOG_ERR("create '%.*s': this %s has no such file (its state decides which exist)",
			(int)n, name, s->what);
		return -ENOENT;
	}
	LOG_ERR("create '%.*s': a %s holds only its state files (see docs/mapping.md)", (int)n,
		name, s->what);
	return -EINVAL;
}

int fs_sketch_unlink(const struct fs_sketch *s, struct fs_ctx *c, const char *name, size_t n)
{
	struct fs_entry e;
	fs_entry_init(&e);
	int rc = fs_sketch_lookup(s, c, name, n, &e);
	fs_entry_release(&e);
	return rc ? rc : s->clear(c);
}

int fs_sketch_adopt(const struct fs_sketch *s, struct fs_ctx *c, const char *to, size_t tn,
		    const char *d, size_t dn, struct buf *canon)
{
	if (is_scratch(s, to, tn))
		return FS_ADOPT_LOCAL;
	int idx = s->file_index(to, tn);
	if (idx < 0) {
		LOG_ERR("rename onto '%.*s': a %s holds only its state files", (int)tn, to,
			s->what);
		return -EINVAL;
	}
	int rc = s->file_store(c, idx, d, dn);
	return rc ? rc : buf_set(canon, to, tn);
}
