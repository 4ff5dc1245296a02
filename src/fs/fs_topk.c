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
 * .query:ITEM, .count:ITEM, .mquery:A,B, .mcount:A,B (item lists), .info. The parameters are the
 * attributes user.kvfs.topk.k, .width, .depth and .decay. See docs/mapping.md. Layer: fs.
 */
#include "fs/fs_int.h"
#include "fs/fs_xval.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "types/t_topk.h"

/* ---- item escapes ---------------------------------------------------- */

/* ---- the state files ----------------------------------------------------- */

enum part { PART_BUCKETS, PART_HEAP, PART_RNG };

static bool buckets_empty(const struct hk *t)
{
	for (size_t i = 0; i < (size_t)t->width * t->depth; i++)
		if (t->b[i].fp || t->b[i].count)
			return false;
	return true;
}

static int part_render(struct fs_ctx *c, int p, struct buf *o, bool *listed)
{
	struct hk t;
	int rc = topk_state(c->fs->ks, &c->k, &t);
	buf_reset(o);
	if (!rc && p == PART_BUCKETS) {
		*listed = !buckets_empty(&t);
		for (uint32_t r = 0; r < t.depth && !rc; r++) {
			for (uint32_t col = 0; col < t.width && !rc; col++) {
				const struct hk_bucket *b = &t.b[(size_t)r * t.width + col];
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
				rc = buf_add_escaped(o, t.heap[i].item, t.heap[i].len);
			if (!rc)
				rc = buf_add(o, "\n", 1);
		}
	} else if (!rc) {
		*listed = t.draws > 0;
		rc = buf_printf(o, "%" PRIu64 "\n", t.draws);
	}
	hk_release(&t);
	return rc;
}

static int tk_file_load(struct fs_ctx *c, int idx, struct buf *out)
{
	bool listed = false;
	int rc = part_render(c, idx, out, &listed);
	return rc ? rc : listed ? 0 : FS_SKETCH_ABSENT;
}

/* One row: exactly `width` entries FP:COUNT (b NULL: any number, not kept). */
static int bucket_line(const char *line, size_t len, struct hk_bucket *b, uint32_t width,
		       size_t row)
{
	size_t col = 0, i = 0;
	while (i < len) {
		uint32_t fp = 0;
		size_t j = i, hex = 0;
		for (; j < len && hex_digit((unsigned char)line[j]) >= 0 && hex < 8; j++, hex++)
			fp = fp << 4 | (uint32_t)hex_digit((unsigned char)line[j]);
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
			b[col] = (struct hk_bucket){fp, (uint32_t)cnt};
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
	struct hk_bucket *b = NULL;
	struct iovec *rows;
	size_t nrows;
	int rc = c ? topk_info(c->fs->ks, &c->k, &p) : 0;
	if (!rc)
		rc = fs_sketch_lines(d, dn, &rows, &nrows);
	if (rc)
		return rc;
	if (c && !(b = calloc((size_t)p.width * p.depth, sizeof(*b))))
		rc = -ENOMEM;
	/* a syntax check (c NULL) takes any number of rows of any width */
	for (size_t r = 0; r < nrows && !rc; r++) {
		if (c && r == p.depth) {
			LOG_ERR("top-k buckets: more than %" PRIu32 " rows", p.depth);
			rc = -EINVAL;
		} else {
			rc = bucket_line(rows[r].iov_base, rows[r].iov_len,
					 b ? &b[r * p.width] : NULL, c ? p.width : UINT32_MAX,
					 r + 1);
		}
	}
	if (!rc && c && nrows != 0 && nrows != p.depth) {
		LOG_ERR("top-k buckets: %zu rows, not %" PRIu32, nrows, p.depth);
		rc = -EINVAL;
	}
	if (!rc && c)
		rc = topk_set_buckets(c->fs->ks, &c->k, b, (size_t)p.width * p.depth);
	free(b);
	free(rows);
	return rc;
}

static int store_heap(struct fs_ctx *c, const char *d, size_t dn)
{
	struct buf item = BUF_INIT;
	struct iovec *lines;
	size_t n = 0, nl;
	int rc = fs_sketch_lines(d, dn, &lines, &nl);
	if (rc)
		return rc;
	struct hk_entry *h = calloc(nl ? nl : 1, sizeof(*h));
	if (!h)
		rc = -ENOMEM;
	for (size_t i = 0; i < nl && !rc; i++) {
		const char *line = lines[i].iov_base;
		size_t len = lines[i].iov_len;
		const char *tab = memchr(line, '\t', len);
		uint64_t count;
		if (!tab || parse_u64(line, (size_t)(tab - line), &count) || count > UINT32_MAX ||
		    buf_set_unescaped(&item, tab + 1, len - (size_t)(tab - line) - 1)) {
			LOG_ERR("top-k heap: line %zu is not COUNT<TAB>ITEM (with \\\\, \\t, \\n, "
				"\\r, \\xHH escapes)",
				i + 1);
			rc = -EINVAL;
			break;
		}
		char *copy = malloc(item.len ? item.len : 1);
		if (!copy) {
			rc = -ENOMEM;
			break;
		}
		memcpy(copy, item.data, item.len);
		h[n++] = (struct hk_entry){(uint32_t)count, 0, copy, item.len};
	}
	if (!rc && c)
		rc = topk_set_heap(c->fs->ks, &c->k, h, n);
	for (size_t i = 0; i < n; i++)
		free(h[i].item);
	free(h);
	free(lines);
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

static int clear_buckets(struct fs_ctx *c)
{
	struct topk_params p;
	int rc = topk_info(c->fs->ks, &c->k, &p);
	struct hk_bucket *b = rc ? NULL : calloc((size_t)p.width * p.depth, sizeof(*b));
	if (!rc && !b)
		rc = -ENOMEM;
	if (!rc)
		rc = topk_set_buckets(c->fs->ks, &c->k, b, (size_t)p.width * p.depth);
	free(b);
	return rc;
}

static int clear_heap(struct fs_ctx *c)
{
	return topk_set_heap(c->fs->ks, &c->k, NULL, 0);
}

static int clear_rng(struct fs_ctx *c)
{
	return topk_set_draws(c->fs->ks, &c->k, 0);
}

/* ---- views ------------------------------------------------------------------ */

enum tview { V_INFO, V_LIST, V_QUERY, V_COUNT };

static int view(struct fs_ctx *c, enum tview v, const char *arg, size_t an, struct buf *o)
{
	struct hk t;
	int rc = topk_state(c->fs->ks, &c->k, &t);
	if (rc)
		goto out;
	if (v == V_INFO) {
		rc =
		    buf_printf(o, "k %" PRIu32 "\nwidth %" PRIu32 "\ndepth %" PRIu32 "\ndecay %g\n",
			       t.k, t.width, t.depth, t.decay);
	} else if (v == V_LIST) {
		const struct hk_entry **l = malloc((t.n ? t.n : 1) * sizeof(*l));
		if (!l) {
			rc = -ENOMEM;
			goto out;
		}
		hk_list(&t, l);
		for (size_t i = 0; i < t.n && !rc; i++) {
			rc = buf_add_escaped(o, l[i]->item, l[i]->len);
			if (!rc)
				rc = buf_printf(o, "\t%" PRIu32 "\n", l[i]->count);
		}
		free(l);
	} else if (v == V_QUERY) {
		rc = buf_printf(o, "%d\n", hk_query(&t, arg, an) ? 1 : 0);
	} else {
		rc = buf_printf(o, "%" PRIu32 "\n", hk_count(&t, arg, an));
	}
out:
	hk_release(&t);
	return rc;
}

#define TOPK_VIEW(fn, kind)                                                                        \
	static int fn(struct fs_ctx *c, const char *arg, size_t an, struct buf *o)                 \
	{                                                                                          \
		return view(c, kind, arg, an, o);                                                  \
	}
TOPK_VIEW(info_read, V_INFO)
TOPK_VIEW(list_read, V_LIST)
TOPK_VIEW(query_read, V_QUERY)
TOPK_VIEW(count_read, V_COUNT)

/* TOPK.QUERY (count false) or TOPK.COUNT of an item list
 * (fs_items_split): one answer a line, in order. */
static int mview(struct fs_ctx *c, bool count, const char *arg, size_t an, struct buf *o)
{
	struct fs_items it;
	struct hk t;
	int rc = fs_items_split(arg, an, count ? "top-k .mcount:" : "top-k .mquery:", &it);
	bool have = !rc && !(rc = topk_state(c->fs->ks, &c->k, &t));
	for (size_t i = 0; have && !rc && i < it.n; i++) {
		const char *item = it.v[i].iov_base;
		size_t len = it.v[i].iov_len;
		if (count)
			rc = buf_printf(o, "%" PRIu32 "\n", hk_count(&t, item, len));
		else
			rc = buf_printf(o, "%d\n", hk_query(&t, item, len) ? 1 : 0);
	}
	if (have)
		hk_release(&t);
	fs_items_release(&it);
	return rc;
}

static int mquery_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *o)
{
	return mview(c, false, arg, an, o);
}

static int mcount_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *o)
{
	return mview(c, true, arg, an, o);
}

/* ---- inputs ------------------------------------------------------------------ */

/* TOPK.ADD's reply, to the open that wrote (fs_ctx.reply): a line per
 * item added, the item it expelled from the top k or empty. */
struct expelled {
	struct buf *out;
	int rc;
};

static void expelled_line(void *arg, size_t i, const char *item, size_t len)
{
	struct expelled *e = arg;
	(void)i;
	if (!e->rc)
		e->rc = buf_add(e->out, item ? item : "", item ? len : 0);
	if (!e->rc)
		e->rc = buf_add(e->out, "\n", 1);
}

/* .add: each non-empty line is an item; .incrby: ITEM<TAB>N (the last tab). */
static int add_items(struct fs_ctx *c, const struct iovec *lines, size_t n, bool incrby)
{
	struct topk_item *items = calloc(n ? n : 1, sizeof(*items));
	size_t cnt = 0;
	int rc = items ? 0 : -ENOMEM;
	for (size_t i = 0; i < n && !rc; i++) {
		const char *line = lines[i].iov_base;
		size_t len = lines[i].iov_len;
		uint64_t incr = 1;
		if (len == 0)
			continue;
		if (incrby) {
			const char *tab = memrchr(line, '\t', len);
			if (!tab || parse_u64(tab + 1, len - (size_t)(tab - line) - 1, &incr) ||
			    incr < 1 || incr > TOPK_INCR_MAX) {
				LOG_ERR(
				    "top-k .incrby: line %zu is not ITEM<TAB>N with N from 1 to "
				    "%d",
				    i + 1, TOPK_INCR_MAX);
				rc = -EINVAL;
				break;
			}
			len = (size_t)(tab - line);
		}
		items[cnt++] = (struct topk_item){line, len, (uint32_t)incr};
	}
	struct expelled e = {c->reply, 0};
	if (!rc && cnt)
		rc = topk_add(c->fs->ks, &c->k, items, cnt, c->reply ? expelled_line : NULL, &e);
	if (!rc && e.rc) { /* added; only the reply is short of memory */
		LOG_WARN("top-k '%.*s': the expelled items of this add could not be kept: %s",
			 (int)c->k.klen, c->k.key, strerror(-e.rc));
		buf_reset(c->reply);
	}
	free(items);
	return rc;
}

static int add_feed(struct fs_ctx *c, const struct iovec *lines, size_t n)
{
	return add_items(c, lines, n, false);
}

static int incrby_feed(struct fs_ctx *c, const struct iovec *lines, size_t n)
{
	return add_items(c, lines, n, true);
}

/* ---- the shape ---------------------------------------------------------------- */

static const struct fs_sketch_view tk_views[] = {
    {".list", list_read},    {".info", info_read},	{".query:", query_read},
    {".count:", count_read}, {".mquery:", mquery_read}, {".mcount:", mcount_read}};
static const struct fs_sketch_input tk_inputs[] = {{.name = ".add", .feed = add_feed},
						   {.name = ".incrby", .feed = incrby_feed}};

/* Each listed only while it holds something; rm empties that part. */
static const struct fs_sketch_part tk_parts[] = {{"buckets", store_buckets, clear_buckets},
						 {"heap", store_heap, clear_heap},
						 {"rng", store_rng, clear_rng}};

static const struct fs_sketch tk_sketch = {
    .what = "top-k",
    FS_SKETCH_TABLE(views, tk_views),
    FS_SKETCH_TABLE(inputs, tk_inputs),
    FS_SKETCH_TABLE(parts, tk_parts),
    .file_load = tk_file_load,
};

FS_SKETCH_SHAPE_FUNCS(tk_sketch)

static int tk_is_blank(struct fs_ctx *c)
{
	struct hk t;
	int rc = topk_state(c->fs->ks, &c->k, &t);
	if (!rc)
		rc = t.n == 0 && t.draws == 0 && buckets_empty(&t);
	hk_release(&t);
	return rc;
}

/* ---- parameters ------------------------------------------------------------ */

/* The parameters as user.kvfs.topk.PARAM, in sorted order, with the last NUL. */
static const char tk_xattrs[] =
    "user.kvfs.topk.decay\0user.kvfs.topk.depth\0user.kvfs.topk.k\0user.kvfs.topk.width";

static const struct topk_params defaults = {TOPK_K_DEFAULT, TOPK_WIDTH_DEFAULT, TOPK_DEPTH_DEFAULT,
					    TOPK_DECAY_DEFAULT};

static int tk_make_empty(struct fs_ctx *c)
{
	return topk_reserve(c->fs->ks, &c->k, &defaults);
}

static int tk_xattr_get(struct fs_ctx *c, const char *param, struct buf *out)
{
	struct topk_params p;
	bool decay = strcmp(param, "decay") == 0;
	if (!decay && !fs_xval_topk_field(&p, param))
		return -ENODATA;
	int rc = topk_info(c->fs->ks, &c->k, &p);
	if (rc)
		return rc;
	if (decay)
		return fs_sketch_add_double(out, p.decay);
	return buf_printf(out, "%" PRIu32, *fs_xval_topk_field(&p, param));
}

/* On a remembered empty directory the sketch is made with it (and the
 * defaults for the others: rsync sets them one by one). */
static int tk_xattr_set(struct fs_ctx *c, const char *param, const char *v, size_t n)
{
	struct topk_params p = defaults;
	struct ks_info ki;
	int rc = fs_sketch_param_key(c, KV_TYPE_TOPK, param);
	if (rc)
		return rc;
	if (strcmp(param, "decay") != 0 && !fs_xval_topk_field(&p, param))
		return -ENOTSUP;
	rc = ks_lookup(c->fs->ks, &c->k, &ki);
	bool create = rc == -ENOENT || (!rc && ki.empty);
	if (!create && (rc || (rc = topk_info(c->fs->ks, &c->k, &p))))
		return rc;
	struct topk_params q = p;
	rc = fs_xval_topk(param, v, n, &q);
	if (rc)
		return rc;
	if (create)
		return topk_reserve(c->fs->ks, &c->k, &q);
	if (p.k == q.k && p.width == q.width && p.depth == q.depth && p.decay == q.decay)
		return 0;
	return topk_set_params(c->fs->ks, &c->k, &q);
}

static const struct fs_help tk_help[] = {
    {"buckets", "state: the HeavyKeeper buckets, FP:COUNT per entry", "cat k/buckets"},
    {"heap", "state: COUNT<TAB>ITEM lines of the top k", "cat k/heap"},
    {"rng", "state: the decay draw counter", "cat k/rng"},
    {".add",
     "input: TOPK.ADD of each line; read back on the same open: per item, what it expelled "
     "(or an empty line)",
     "exec 3<>k/.add; echo x >&3; read -r gone <&3"},
    {".incrby", "input: TOPK.INCRBY, ITEM<TAB>N lines", "printf \"a\\t5\\n\" >> k/.incrby"},
    {".list", "view: TOPK.LIST, ITEM<TAB>COUNT", "cat k/.list"},
    {".query:ITEM", "view: TOPK.QUERY, 1 or 0", "cat k/.query:a"},
    {".count:ITEM", "view: TOPK.COUNT", "cat k/.count:a"},
    {".mquery:A,B", "view: TOPK.QUERY of an item list, 1 or 0 a line", "cat k/.mquery:a,b"},
    {".mcount:A,B", "view: TOPK.COUNT of an item list, one a line", "cat k/.mcount:a,b"},
    {".info", "view: TOPK.INFO", "cat k/.info"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_topk_shape = {
    .type = KV_TYPE_TOPK,
    .uncached = true,
    FS_SKETCH_SHAPE_OPS,
    .is_blank = tk_is_blank,
    .make_empty = tk_make_empty,
    FS_SHAPE_XATTRS(tk_xattrs),
    .xattr_get = tk_xattr_get,
    .xattr_set = tk_xattr_set,
    .help = tk_help,
};
