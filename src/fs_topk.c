/*
 * fs_topk: a top-k key is a directory holding its exact state in three
 * text files, listed only while they hold something:
 *   buckets  one line per row: WIDTH entries "FP:COUNT" (fingerprint in 8
 *            hex digits, count in decimal) separated by spaces
 *   heap     "COUNT<TAB>ITEM" lines in heap-array order
 *   rng      the generator's draw counter
 * Items are escaped in files and views: \\ \t \n \r and \xHH for other
 * control bytes. Writing a file replaces that part after checking it
 * (EINVAL, nothing changed); removing it empties that part; rmdir of a
 * top-k that lists nothing deletes the key. Unlisted inputs: .add (an
 * item a line, as written: TOPK.ADD), .incrby ("ITEM<TAB>N" lines:
 * TOPK.INCRBY). Unlisted views: .list (ITEM<TAB>COUNT, highest first),
 * .query:ITEM, .count:ITEM, .info. The parameters are the attributes
 * user.kvfs.topk.k, .width, .depth and .decay. See docs/mapping.md.
 * Layer: fs.
 */
#include "fs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "t_topk.h"

/* ---- small text helpers (kept local: fs_tdigest.c has its own) --------- */

static bool next_line(const char *d, size_t n, size_t *off, const char **line, size_t *len)
{
	if (*off >= n)
		return false;
	const char *s = d + *off, *nl = memchr(s, '\n', n - *off);
	*line = s;
	*len = nl ? (size_t)(nl - s) : n - *off;
	*off += *len + (nl ? 1 : 0);
	return true;
}

static bool is_name(const char *s, size_t n, const char *p)
{
	return n == strlen(p) && memcmp(s, p, n) == 0;
}

static bool has_prefix(const char *s, size_t n, const char *p)
{
	size_t pn = strlen(p);
	return n >= pn && memcmp(s, p, pn) == 0;
}

static int add_escaped(struct buf *o, const char *s, size_t n)
{
	int rc = 0;
	for (size_t i = 0; i < n && !rc; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '\\')
			rc = buf_add(o, "\\\\", 2);
		else if (ch == '\t')
			rc = buf_add(o, "\\t", 2);
		else if (ch == '\n')
			rc = buf_add(o, "\\n", 2);
		else if (ch == '\r')
			rc = buf_add(o, "\\r", 2);
		else if (ch < 0x20 || ch == 0x7f)
			rc = buf_printf(o, "\\x%02x", ch);
		else
			rc = buf_add(o, s + i, 1);
	}
	return rc;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Undo add_escaped. -EINVAL for a bad escape. */
static int unescape(const char *s, size_t n, struct buf *o)
{
	int rc = 0;
	buf_reset(o);
	for (size_t i = 0; i < n && !rc; i++) {
		char ch = s[i];
		if (ch != '\\') {
			rc = buf_add(o, &ch, 1);
			continue;
		}
		if (++i == n)
			return -EINVAL;
		switch (s[i]) {
		case '\\':
			ch = '\\';
			break;
		case 't':
			ch = '\t';
			break;
		case 'n':
			ch = '\n';
			break;
		case 'r':
			ch = '\r';
			break;
		case 'x':
			if (i + 2 >= n || hexval(s[i + 1]) < 0 || hexval(s[i + 2]) < 0)
				return -EINVAL;
			ch = (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2]));
			i += 2;
			break;
		default:
			return -EINVAL;
		}
		rc = buf_add(o, &ch, 1);
	}
	return rc;
}

/* ---- names -------------------------------------------------------------- */

enum part { PART_NONE, PART_BUCKETS, PART_HEAP, PART_RNG };
static const char *const part_names[] = {"", "buckets", "heap", "rng"};

static enum part part_of(const char *name, size_t n)
{
	for (int p = PART_BUCKETS; p <= PART_RNG; p++)
		if (is_name(name, n, part_names[p]))
			return (enum part)p;
	return PART_NONE;
}

static bool tk_is_view(const char *name, size_t n)
{
	return is_name(name, n, ".list") || is_name(name, n, ".info") ||
	       has_prefix(name, n, ".query:") || has_prefix(name, n, ".count:");
}

static bool tk_is_input(const char *name, size_t n)
{
	return is_name(name, n, ".add") || is_name(name, n, ".incrby");
}

/* ---- the listed files ----------------------------------------------------- */

static bool buckets_empty(const struct topk *t)
{
	for (size_t i = 0; i < (size_t)t->width * t->depth; i++)
		if (t->b[i].fp || t->b[i].count)
			return false;
	return true;
}

static int part_render(struct fs_ctx *c, enum part p, struct buf *o, bool *listed)
{
	struct topk t;
	int rc = topk_state(c->fs->ks, &c->k, &t);
	buf_reset(o);
	if (!rc && p == PART_BUCKETS) {
		*listed = !buckets_empty(&t);
		for (uint32_t r = 0; r < t.depth && !rc; r++) {
			for (uint32_t col = 0; col < t.width && !rc; col++) {
				const struct topk_bucket *b = &t.b[(size_t)r * t.width + col];
				rc = buf_printf(o, "%s%08" PRIx32 ":%" PRIu32, col ? " " : "",
						b->fp, b->count);
			}
			if (!rc)
				rc = buf_add(o, "\n", 1);
		}
	} else if (!rc && p == PART_HEAP) {
		*listed = t.n > 0;
		for (size_t i = 0; i < t.n && !rc; i++) {
			rc = buf_printf(o, "%" PRIu32 "\t", t.heap[i].count);
			if (!rc)
				rc = add_escaped(o, t.heap[i].item, t.heap[i].len);
			if (!rc)
				rc = buf_add(o, "\n", 1);
		}
	} else if (!rc) {
		*listed = t.draws > 0;
		rc = buf_printf(o, "%" PRIu64 "\n", t.draws);
	}
	topk_release(&t);
	return rc;
}

/* One row: exactly `width` entries FP:COUNT (b NULL: any number, not kept). */
static int bucket_line(const char *line, size_t len, struct topk_bucket *b, uint32_t width,
		       size_t row)
{
	size_t col = 0, i = 0;
	while (i < len) {
		uint32_t fp = 0;
		size_t j = i, hex = 0;
		for (; j < len && hexval(line[j]) >= 0 && hex < 8; j++, hex++)
			fp = fp << 4 | (uint32_t)hexval(line[j]);
		uint64_t cnt = 0;
		size_t k = j + 1, e = k;
		while (e < len && line[e] != ' ')
			e++;
		if (hex != 8 || j >= len || line[j] != ':' || col == width ||
		    parse_u64(line + k, e - k, &cnt) || cnt > UINT32_MAX) {
			LOG_ERR("top-k buckets: row %zu, entry %zu is not FP:COUNT (8 hex digits, "
				"a count) or the row is longer than %" PRIu32,
				row, col + 1, width);
			return -EINVAL;
		}
		if (b)
			b[col] = (struct topk_bucket){fp, (uint32_t)cnt};
		col++;
		i = e + 1;
	}
	if (b && col != width) {
		LOG_ERR("top-k buckets: row %zu has %zu entries, not %" PRIu32, row, col, width);
		return -EINVAL;
	}
	return 0;
}

static int store_buckets(struct fs_ctx *c, const char *d, size_t dn)
{
	struct topk_params p = {1, 1, 1, 1};
	struct topk_bucket *b = NULL;
	size_t off = 0, len, row = 0;
	const char *line;
	int rc = c ? topk_info(c->fs->ks, &c->k, &p) : 0;
	if (rc)
		return rc;
	if (!c) {
		while (!rc && next_line(d, dn, &off, &line, &len))
			rc = bucket_line(line, len, NULL, UINT32_MAX, ++row);
		return rc;
	}
	if (!(b = calloc((size_t)p.width * p.depth, sizeof(*b))))
		return -ENOMEM;
	while (!rc && next_line(d, dn, &off, &line, &len)) {
		if (row == p.depth) {
			LOG_ERR("top-k buckets: more than %" PRIu32 " rows", p.depth);
			rc = -EINVAL;
			break;
		}
		rc = bucket_line(line, len, &b[row * p.width], p.width, row + 1);
		row++;
	}
	if (!rc && row != 0 && row != p.depth) {
		LOG_ERR("top-k buckets: %zu rows, not %" PRIu32, row, p.depth);
		rc = -EINVAL;
	}
	if (!rc)
		rc = topk_set_buckets(c->fs->ks, &c->k, b, (size_t)p.width * p.depth);
	free(b);
	return rc;
}

static int store_heap(struct fs_ctx *c, const char *d, size_t dn)
{
	struct topk_entry *h = NULL;
	struct buf item = BUF_INIT;
	size_t off = 0, len, n = 0, cap = 0, lineno = 0;
	const char *line;
	int rc = 0;
	while (!rc && next_line(d, dn, &off, &line, &len)) {
		lineno++;
		const char *tab = memchr(line, '\t', len);
		uint64_t count;
		if (!tab || parse_u64(line, (size_t)(tab - line), &count) || count > UINT32_MAX ||
		    unescape(tab + 1, len - (size_t)(tab - line) - 1, &item)) {
			LOG_ERR("top-k heap: line %zu is not COUNT<TAB>ITEM (with \\\\, \\t, \\n, "
				"\\r, \\xHH escapes)",
				lineno);
			rc = -EINVAL;
			break;
		}
		if (n == cap) {
			struct topk_entry *nh = realloc(h, (cap = cap ? cap * 2 : 16) * sizeof(*h));
			if (!nh) {
				rc = -ENOMEM;
				break;
			}
			h = nh;
		}
		char *copy = malloc(item.len ? item.len : 1);
		if (!copy) {
			rc = -ENOMEM;
			break;
		}
		memcpy(copy, item.data, item.len);
		h[n++] = (struct topk_entry){(uint32_t)count, 0, copy, item.len};
	}
	if (!rc && c)
		rc = topk_set_heap(c->fs->ks, &c->k, h, n);
	for (size_t i = 0; i < n; i++)
		free(h[i].item);
	free(h);
	buf_release(&item);
	return rc;
}

static int store_rng(struct fs_ctx *c, const char *d, size_t dn)
{
	uint64_t draws = 0;
	while (dn > 0 && (d[dn - 1] == '\n' || d[dn - 1] == ' '))
		dn--;
	if (dn && parse_u64(d, dn, &draws)) {
		LOG_ERR("top-k rng: '%.*s' is not a whole number", (int)(dn > 40 ? 40 : dn), d);
		return -EINVAL;
	}
	return c ? topk_set_draws(c->fs->ks, &c->k, draws) : 0;
}

static int part_store(struct fs_ctx *c, enum part p, const char *d, size_t dn)
{
	switch (p) {
	case PART_BUCKETS:
		return store_buckets(c, d, dn);
	case PART_HEAP:
		return store_heap(c, d, dn);
	case PART_RNG:
		return store_rng(c, d, dn);
	default:
		return -EINVAL;
	}
}

/* ---- views ------------------------------------------------------------------ */

static int view_make(struct fs_ctx *c, const char *name, size_t n, struct buf *o)
{
	struct topk t;
	int rc = topk_state(c->fs->ks, &c->k, &t);
	buf_reset(o);
	if (rc)
		goto out;
	if (is_name(name, n, ".info")) {
		rc =
		    buf_printf(o, "k %" PRIu32 "\nwidth %" PRIu32 "\ndepth %" PRIu32 "\ndecay %g\n",
			       t.k, t.width, t.depth, t.decay);
	} else if (is_name(name, n, ".list")) {
		const struct topk_entry **l = malloc((t.n ? t.n : 1) * sizeof(*l));
		if (!l) {
			rc = -ENOMEM;
			goto out;
		}
		topk_list(&t, l);
		for (size_t i = 0; i < t.n && !rc; i++) {
			rc = add_escaped(o, l[i]->item, l[i]->len);
			if (!rc)
				rc = buf_printf(o, "\t%" PRIu32 "\n", l[i]->count);
		}
		free(l);
	} else {
		bool query = name[1] == 'q';
		size_t pre = query ? strlen(".query:") : strlen(".count:");
		const char *item = name + pre;
		size_t in = n - pre;
		if (query)
			rc = buf_printf(o, "%d\n", topk_query(&t, item, in) ? 1 : 0);
		else
			rc = buf_printf(o, "%" PRIu32 "\n", topk_count(&t, item, in));
	}
out:
	topk_release(&t);
	return rc;
}

/* ---- the shape ---------------------------------------------------------------- */

/* NEEDSWORK: kvfs keeps no times of entries yet (issue 5). So that rsync's
 * size-and-mtime check (whole seconds) sees every change of a part, its
 * mtime is the key's creation second minus a hash of the contents (up to
 * 2^20 s, about 12 days: never in the future), given as a Kvrocks version
 * (fs_stat_fill reads its time). */
static uint64_t part_version(struct fs_ctx *c, const struct buf *content)
{
	struct ks_info info;
	if (ks_lookup(c->fs->ks, &c->k, &info) || !info.version)
		return 0;
	uint64_t s = (info.version >> 11) / 1000000;
	uint64_t back = hash_bytes(content->data, content->len) % (1u << 20);
	return s > back ? ((s - back) * 1000000) << 11 : 0;
}

static int tk_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	struct buf o = BUF_INIT;
	bool listed = true;
	int rc;
	if (tk_is_input(name, n)) {
		struct topk_params p;
		rc = topk_info(c->fs->ks, &c->k, &p);
		return rc ? (rc == -KV_EWRONGTYPE ? -ENOENT : rc)
			  : fs_entry_set(e, name, n, S_IFREG | 0644, 0);
	}
	enum part p = part_of(name, n);
	if (tk_is_view(name, n))
		rc = view_make(c, name, n, &o);
	else if (p != PART_NONE)
		rc = part_render(c, p, &o, &listed);
	else
		rc = -ENOENT;
	if (rc == -KV_EWRONGTYPE || (!rc && !listed))
		rc = -ENOENT;
	if (!rc)
		rc = fs_entry_set(e, name, n, p == PART_NONE ? S_IFREG | 0444 : S_IFREG | 0644,
				  o.len);
	if (!rc && p != PART_NONE)
		e->version = part_version(c, &o);
	e->view = p == PART_NONE;
	buf_release(&o);
	return rc;
}

/* The key is copied: the path it was borrowed from goes before the listing. */
struct tkit {
	struct fs_ctx c;
	struct buf ns, key;
	int next;
};

static int tk_open_iter(struct fs_ctx *c, const void *after, size_t alen, bool by_name, void **out)
{
	(void)by_name; /* the parts list in name order */
	struct tkit *it = calloc(1, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->c = *c;
	if (buf_set(&it->ns, c->k.ns, c->k.nslen) || buf_set(&it->key, c->k.key, c->k.klen)) {
		buf_release(&it->ns);
		free(it);
		return -ENOMEM;
	}
	it->c.k.ns = it->ns.data;
	it->c.k.key = it->key.data;
	it->next = PART_BUCKETS;
	while (after && it->next <= PART_RNG &&
	       bytes_cmp(part_names[it->next], strlen(part_names[it->next]), after, alen) <= 0)
		it->next++;
	*out = it;
	return 0;
}

static int tk_next(void *arg, struct fs_child *ch)
{
	struct tkit *it = arg;
	struct buf o = BUF_INIT;
	int rc = 0;
	while (it->next <= PART_RNG) {
		bool listed = false;
		enum part p = (enum part)it->next++;
		rc = part_render(&it->c, p, &o, &listed);
		if (rc == -ENOENT || rc == -KV_EWRONGTYPE) {
			rc = 0;
			break;
		}
		if (rc)
			break;
		if (listed) {
			ch->name = part_names[p];
			ch->n = strlen(part_names[p]);
			ch->mode = S_IFREG | 0644;
			ch->size = o.len;
			ch->version = part_version(&it->c, &o);
			rc = 1;
			break;
		}
	}
	buf_release(&o);
	return rc;
}

static void tk_free_iter(void *arg)
{
	struct tkit *it = arg;
	buf_release(&it->ns);
	buf_release(&it->key);
	free(it);
}

static int tk_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	bool listed;
	if (tk_is_input(name, n)) {
		buf_reset(out);
		return 0;
	}
	if (tk_is_view(name, n))
		return view_make(c, name, n, out);
	enum part p = part_of(name, n);
	return p == PART_NONE ? -ENOENT : part_render(c, p, out, &listed);
}

static int tk_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		     bool pending)
{
	(void)pending;
	return part_store(c, part_of(name, n), d, dn);
}

/* Every write: the complete lines must read (the rest is checked when the
 * file is stored), so `echo x > tk/heap` fails at the write. */
static int tk_check(const char *name, size_t n, const char *d, size_t dn)
{
	enum part p = part_of(name, n);
	const char *nl = dn ? memrchr(d, '\n', dn) : NULL;
	if (p == PART_NONE || !nl)
		return 0;
	return part_store(NULL, p, d, (size_t)(nl - d) + 1);
}

static bool is_scratch(const char *name, size_t n)
{
	return n > 0 && name[0] == '.';
}

static int tk_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)e;
	if (part_of(name, n) != PART_NONE) {
		struct fs_entry cur;
		fs_entry_init(&cur);
		int rc = tk_lookup(c, name, n, &cur);
		fs_entry_release(&cur);
		return rc == 0 ? -EEXIST : (rc == -ENOENT ? FS_CREATE_PENDING : rc);
	}
	if (is_scratch(name, n))
		return FS_CREATE_SCRATCH;
	LOG_ERR("'%.*s': a top-k holds only buckets, heap and rng", (int)n, name);
	return -EINVAL;
}

static int tk_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	struct topk_params p;
	int rc;
	switch (part_of(name, n)) {
	case PART_BUCKETS: {
		rc = topk_info(c->fs->ks, &c->k, &p);
		struct topk_bucket *b = rc ? NULL : calloc((size_t)p.width * p.depth, sizeof(*b));
		if (!rc && !b)
			rc = -ENOMEM;
		if (!rc)
			rc = topk_set_buckets(c->fs->ks, &c->k, b, (size_t)p.width * p.depth);
		free(b);
		return rc;
	}
	case PART_HEAP:
		return topk_set_heap(c->fs->ks, &c->k, NULL, 0);
	case PART_RNG:
		return topk_set_draws(c->fs->ks, &c->k, 0);
	default:
		return -ENOENT;
	}
}

static int tk_adopt(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		    struct buf *canon)
{
	enum part p = part_of(to, tn);
	if (p == PART_NONE && is_scratch(to, tn))
		return FS_ADOPT_LOCAL;
	if (p == PART_NONE) {
		LOG_ERR("rename onto '%.*s': a top-k holds only buckets, heap and rng", (int)tn,
			to);
		return -EINVAL;
	}
	int rc = part_store(c, p, d, dn);
	return rc ? rc : buf_set(canon, to, tn);
}

/* .add: each non-empty line is an item; .incrby: ITEM<TAB>N (the last tab). */
static int tk_feed(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn)
{
	bool incrby = is_name(name, n, ".incrby");
	size_t off = 0, len, lineno = 0, cnt = 0, cap = 0;
	const char *line;
	struct topk_item *items = NULL;
	int rc = 0;
	while (!rc && next_line(d, dn, &off, &line, &len)) {
		lineno++;
		if (len == 0)
			continue;
		uint64_t incr = 1;
		if (incrby) {
			const char *tab = memrchr(line, '\t', len);
			if (!tab || parse_u64(tab + 1, len - (size_t)(tab - line) - 1, &incr) ||
			    incr < 1 || incr > TOPK_INCR_MAX) {
				LOG_ERR(
				    "top-k .incrby: line %zu is not ITEM<TAB>N with N from 1 to "
				    "%d",
				    lineno, TOPK_INCR_MAX);
				rc = -EINVAL;
				break;
			}
			len = (size_t)(tab - line);
		}
		if (cnt == cap) {
			struct topk_item *ni =
			    realloc(items, (cap = cap ? cap * 2 : 256) * sizeof(*items));
			if (!ni) {
				rc = -ENOMEM;
				break;
			}
			items = ni;
		}
		items[cnt++] = (struct topk_item){line, len, (uint32_t)incr};
	}
	if (!rc && cnt)
		rc = topk_add(c->fs->ks, &c->k, items, cnt, NULL, NULL);
	free(items);
	return rc;
}

static bool tk_is_blank(struct fs_ctx *c)
{
	struct topk t;
	bool blank =
	    topk_state(c->fs->ks, &c->k, &t) == 0 && t.n == 0 && t.draws == 0 && buckets_empty(&t);
	topk_release(&t);
	return blank;
}

/* ---- parameters ------------------------------------------------------------ */

/* The parameters as user.kvfs.topk.PARAM, in sorted order, with the last NUL. */
static const char tk_xattrs[] =
    "user.kvfs.topk.decay\0user.kvfs.topk.depth\0user.kvfs.topk.k\0user.kvfs.topk.width";

static const struct topk_params defaults = {TOPK_K_DEFAULT, TOPK_WIDTH_DEFAULT, TOPK_DEPTH_DEFAULT,
					    TOPK_DECAY_DEFAULT};

/* The field of p a parameter names, or NULL (decay is the double). */
static uint32_t *param_field(struct topk_params *p, const char *param)
{
	return strcmp(param, "k") == 0 ? &p->k
	       : strcmp(param, "width") == 0 ? &p->width
	       : strcmp(param, "depth") == 0 ? &p->depth
					     : NULL;
}

static int tk_make_empty(struct fs_ctx *c)
{
	return topk_reserve(c->fs->ks, &c->k, &defaults);
}

static int tk_xattr_get(struct fs_ctx *c, const char *param, struct buf *out)
{
	struct topk_params p;
	bool decay = strcmp(param, "decay") == 0;
	if (!decay && !param_field(&p, param))
		return -ENODATA;
	int rc = topk_info(c->fs->ks, &c->k, &p);
	if (rc)
		return rc;
	if (decay) {
		char s[40];
		for (int prec = 15; prec <= 17; prec++) {
			snprintf(s, sizeof(s), "%.*g", prec, p.decay);
			if (strtod(s, NULL) == p.decay)
				break;
		}
		return buf_printf(out, "%s", s);
	}
	return buf_printf(out, "%" PRIu32, *param_field(&p, param));
}

/* On a remembered empty directory the sketch is made with it (and the
 * defaults for the others: rsync sets them one by one). */
static int tk_xattr_set(struct fs_ctx *c, const char *param, const char *v, size_t n)
{
	struct topk_params p = defaults;
	struct ks_info ki;
	bool decay = strcmp(param, "decay") == 0;
	if (!decay && !param_field(&p, param))
		return -ENOTSUP;
	while (n > 0 && (v[n - 1] == '\n' || v[n - 1] == ' '))
		n--;
	int rc = ks_lookup(c->fs->ks, &c->k, &ki);
	bool create = rc == -ENOENT || (!rc && ki.empty);
	if (!create && (rc || (rc = topk_info(c->fs->ks, &c->k, &p))))
		return rc;
	struct topk_params q = p;
	if (decay) {
		rc = parse_double(v, n, &q.decay);
	} else {
		uint64_t u;
		rc = parse_u64(v, n, &u);
		if (!rc && u > UINT32_MAX)
			rc = -EINVAL;
		*param_field(&q, param) = (uint32_t)u;
	}
	if (rc || !topk_params_ok(q.k, q.width, q.depth, q.decay)) {
		LOG_ERR("user.kvfs.topk.%s: '%.*s' is out of range (k 1..%d, width 1..%u, depth "
			"1..%d, width x depth up to %u, decay in (0, 1])",
			param, (int)n, v, TOPK_K_MAX, TOPK_WIDTH_MAX, TOPK_DEPTH_MAX,
			TOPK_CELLS_MAX);
		return -EINVAL;
	}
	if (create)
		return topk_reserve(c->fs->ks, &c->k, &q);
	if (p.k == q.k && p.width == q.width && p.depth == q.depth && p.decay == q.decay)
		return 0;
	return topk_set_params(c->fs->ks, &c->k, &q);
}

const struct fs_shape fs_topk_shape = {
    .type = KV_TYPE_TOPK,
    .uncached = true,
    .recomputed = true,
    .lookup = tk_lookup,
    .iter_open = tk_open_iter,
    .iter_next = tk_next,
    .iter_free = tk_free_iter,
    .is_view = tk_is_view,
    .is_input = tk_is_input,
    .feed = tk_feed,
    .load = tk_load,
    .check = tk_check,
    .commit = tk_commit,
    .create = tk_create,
    .unlink = tk_unlink,
    .adopt = tk_adopt,
    .is_blank = tk_is_blank,
    .make_empty = tk_make_empty,
    .xattrs = tk_xattrs,
    .xattrs_len = sizeof(tk_xattrs),
    .xattr_get = tk_xattr_get,
    .xattr_set = tk_xattr_set,
};
