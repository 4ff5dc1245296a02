/*
 * fs_bloom: a bloom filter key is a directory (a sketch shape,
 * fs_sketch.c). Listed: `chain`, its parameters and counters as text
 * ("capacity N", "error_rate X", "expansion N", "items N", "filters N",
 * one a line), and `filter.I` for each filter of the chain, its bitset as
 * stored. Writing `chain` replaces the parameters and counters (filters
 * that keep their size keep their bits); writing `filter.I` replaces that
 * bitset (it must have the size the parameters give it). Unlisted:
 * `.exists:ITEM` (BF.EXISTS: 1 or 0), `.mexists:A,B` (BF.MEXISTS), `.info` (BF.INFO), `.card`
 * (BF.CARD) and `.add` (each line written is BF.ADDed). Creation
 * parameters are the xattrs user.kvfs.bloom.capacity, .error_rate,
 * .expansion and .nonscaling. Layer: fs.
 */
#include "fs/fs_int.h"
#include "fs/fs_xval.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "types/t_bloom.h"

#define CHAIN  "chain"
#define FILTER "filter."
/* .add collects this many bytes of lines per BF.MADD: each one loads the
 * whole chain and rewrites the last filter (up to 128 MiB). */
#define BLOOM_FEED_BATCH (4u << 20)

static int exists_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *out)
{
	struct iovec item = {(void *)arg, an};
	int found = 0;
	int rc = bloom_exists(c->fs->ks, &c->k, &item, 1, &found);
	return rc ? rc : buf_printf(out, "%d\n", found);
}

/* BF.MEXISTS of an item list (fs_items_split): 1 or 0 a line, in order. */
static int mexists_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *out)
{
	struct fs_items it;
	int *found = NULL;
	int rc = fs_items_split(arg, an, "bloom filter .mexists:", &it);
	if (!rc && !(found = calloc(it.n, sizeof(*found))))
		rc = -ENOMEM;
	if (!rc)
		rc = bloom_exists(c->fs->ks, &c->k, it.v, it.n, found);
	for (size_t i = 0; !rc && i < it.n; i++)
		rc = buf_printf(out, "%d\n", found[i]);
	free(found);
	fs_items_release(&it);
	return rc;
}

static int info_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *out)
{
	(void)arg;
	(void)an;
	struct bloom_state st;
	int rc = bloom_info(c->fs->ks, &c->k, &st);
	if (rc)
		return rc;
	return buf_printf(out,
			  "Capacity\t%" PRIu64 "\nSize\t%u\nNumber of filters\t%u\n"
			  "Number of items inserted\t%" PRIu64 "\nExpansion rate\t%u\n",
			  bloom_state_capacity(&st), st.bloom_bytes, st.n_filters, st.size,
			  st.expansion);
}

static int card_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *out)
{
	(void)arg;
	(void)an;
	uint64_t n;
	int rc = bloom_card(c->fs->ks, &c->k, &n);
	return rc ? rc : buf_printf(out, "%" PRIu64 "\n", n);
}

static int add_feed(struct fs_ctx *c, const struct iovec *items, size_t n)
{
	return bloom_add(c->fs->ks, &c->k, items, n, NULL);
}

static int chain_text(const struct bloom_state *st, struct buf *out)
{
	int rc = buf_printf(out, "capacity %u\nerror_rate ", st->base_capacity);
	if (!rc)
		rc = fs_sketch_add_double(out, st->error_rate);
	if (!rc)
		rc = buf_printf(out, "\nexpansion %u\nitems %" PRIu64 "\nfilters %u\n",
				st->expansion, st->size, st->n_filters);
	return rc;
}

/* File 0 is `chain`, file i + 1 is `filter.i`. Names sort that way too
 * for rsync as long as `chain` comes first, which it does. */
static int bloom_file(struct fs_ctx *c, uint32_t i, struct buf *name, uint64_t *size,
		      uint64_t *version)
{
	(void)version;
	struct bloom_state st;
	struct buf t = BUF_INIT;
	/* A listing asks for every file in turn: the whole chain is checked
	 * once, with `chain`, not once per filter (a listing quadratic in
	 * the filters). */
	int rc = i == 0 ? bloom_info(c->fs->ks, &c->k, &st) : bloom_params(c->fs->ks, &c->k, &st);
	if (rc)
		return rc;
	buf_reset(name);
	if (i == 0) {
		rc = chain_text(&st, &t);
		*size = t.len;
		buf_release(&t);
		if (!rc)
			rc = buf_add(name, CHAIN, strlen(CHAIN));
	} else if (i - 1 < st.n_filters) {
		*size = sbbf_filter_bytes(
		    sbbf_filter_capacity(st.base_capacity, st.expansion, i - 1), st.error_rate);
		rc = buf_printf(name, FILTER "%u", i - 1);
	} else {
		return 0;
	}
	return rc ? rc : 1;
}

static int bloom_file_index(const char *name, size_t n)
{
	uint64_t i;
	size_t fn = strlen(FILTER);
	if (n == strlen(CHAIN) && !memcmp(name, CHAIN, n))
		return 0;
	if (n > fn && n - fn <= 5 && has_prefix(name, n, FILTER) &&
	    (n == fn + 1 || name[fn] != '0') && !parse_u64(name + fn, n - fn, &i) && i < UINT16_MAX)
		return (int)i + 1;
	return -1;
}

static int bloom_file_load(struct fs_ctx *c, int idx, struct buf *out)
{
	if (idx > 0)
		return bloom_filter(c->fs->ks, &c->k, (uint32_t)idx - 1, out);
	struct bloom_state st;
	int rc = bloom_info(c->fs->ks, &c->k, &st);
	return rc ? rc : chain_text(&st, out);
}

/* Parsing `chain`: which of the five lines were seen. */
struct chain_parse {
	struct bloom_state st;
	unsigned seen;
};

static int chain_pair(void *arg, const char *nm, size_t nn, const char *v, size_t vn)
{
	static const char *const names[] = {"capacity", "error_rate", "expansion", "items",
					    "filters"};
	struct chain_parse *p = arg;
	uint64_t u = 0;
	int which = -1, rc;
	for (int i = 0; i < 5; i++)
		if (strlen(names[i]) == nn && !memcmp(names[i], nm, nn))
			which = i;
	if (which < 0 || (p->seen & (1u << which))) {
		LOG_ERR("bloom chain: '%.*s' is %s (lines: capacity, error_rate, expansion, items, "
			"filters)",
			nn > 40 ? 40 : (int)nn, nm, which < 0 ? "not a parameter" : "given twice");
		return -EINVAL;
	}
	p->seen |= 1u << which;
	switch (which) {
	case 0:
		rc = fs_xval_u64(v, vn, 1, UINT32_MAX, "bloom chain capacity", &u);
		p->st.base_capacity = (uint32_t)u;
		return rc;
	case 1:
		return fs_xval_double(v, vn, "bloom chain error_rate", &p->st.error_rate);
	case 2:
		rc = fs_xval_u64(v, vn, 0, UINT16_MAX, "bloom chain expansion", &u);
		p->st.expansion = (uint16_t)u;
		return rc;
	case 3:
		return fs_xval_u64(v, vn, 0, UINT64_MAX, "bloom chain items", &p->st.size);
	default:
		rc = fs_xval_u64(v, vn, 1, UINT16_MAX, "bloom chain filters", &u);
		p->st.n_filters = (uint16_t)u;
		return rc;
	}
}

/* Read the text of `chain`. 0 or -EINVAL (logged). */
static int chain_parse(const char *d, size_t dn, struct bloom_state *st)
{
	struct chain_parse p;
	memset(&p, 0, sizeof(p));
	int rc = fs_sketch_pairs(d, dn, chain_pair, &p);
	if (!rc && p.seen != 0x1f) {
		LOG_ERR("bloom chain: all of capacity, error_rate, expansion, items and filters "
			"must be given");
		rc = -EINVAL;
	}
	*st = p.st;
	return rc;
}

static int bloom_file_store(struct fs_ctx *c, int idx, const char *d, size_t dn)
{
	struct bloom_state st;
	if (idx > 0)
		return bloom_set_filter(c->fs->ks, &c->k, (uint32_t)idx - 1, d, dn);
	int rc = chain_parse(d, dn, &st);
	return rc ? rc : bloom_set_state(c->fs->ks, &c->k, &st);
}

/* A hash field as part of a bloom filter (cp -a sets the type last). */
static int s_from_field(void *arg, const char *f, size_t fn, const char *v, size_t vn,
			struct convert_item *it)
{
	(void)arg;
	int idx = bloom_file_index(f, fn);
	if (idx < 0) {
		LOG_ERR("field '%.*s': a bloom filter holds only '" CHAIN "' and '" FILTER "I'",
			(int)fn, f);
		return -EINVAL;
	}
	it->num = (uint64_t)idx;
	return idx == 0 ? chain_parse(v, vn, &it->bloom) : 0;
}

/* rm of a state file: an empty chain with the same parameters. */
static int sketch_clear(struct fs_ctx *c)
{
	return bloom_clear(c->fs->ks, &c->k);
}

static const struct fs_sketch_view bloom_views[] = {{".exists:", exists_read},
						    {".info", info_read},
						    {".card", card_read},
						    {".mexists:", mexists_read}};
static const struct fs_sketch_input bloom_inputs[] = {{.name = ".add", .feed = add_feed}};

static const struct fs_sketch bloom_sketch = {
    .what = "bloom filter",
    FS_SKETCH_TABLE(views, bloom_views),
    FS_SKETCH_TABLE(inputs, bloom_inputs),
    .file = bloom_file,
    .file_index = bloom_file_index,
    .file_load = bloom_file_load,
    .file_store = bloom_file_store,
    .clear = sketch_clear,
};

/* ---- creation parameters as xattrs ----------------------------------- */

static int param_get(struct fs_ctx *c, const char *param, struct buf *out)
{
	struct bloom_state st;
	int rc = bloom_info(c->fs->ks, &c->k, &st);
	if (rc)
		return rc;
	if (!strcmp(param, "capacity"))
		return buf_printf(out, "%u", st.base_capacity);
	if (!strcmp(param, "error_rate"))
		return fs_sketch_add_double(out, st.error_rate);
	if (!strcmp(param, "expansion"))
		return buf_printf(out, "%u", st.expansion);
	if (!strcmp(param, "nonscaling"))
		return buf_printf(out, "%d", st.expansion == 0);
	return -ENODATA;
}

/*
 * Set one parameter. A missing key (a remembered empty directory)
 * becomes an empty bloom filter with the defaults and this parameter; an
 * existing one takes it only while it holds no items (the chain starts
 * again with one filter), or when the value is the one it has. The other
 * parameters are the ones read here; the check for items is made under
 * the key's lock (bloom_set_params).
 */
static int param_set(struct fs_ctx *c, const char *param, const char *v, size_t vn)
{
	struct bloom_state st, now;
	int rc = fs_sketch_param_key(c, KV_TYPE_BLOOM, param);
	if (rc)
		return rc;
	rc = bloom_info(c->fs->ks, &c->k, &now);
	bool fresh = rc == -ENOENT;
	if (fresh) {
		memset(&now, 0, sizeof(now));
		now.base_capacity = BLOOM_DEFAULT_CAPACITY;
		now.error_rate = BLOOM_DEFAULT_ERROR_RATE;
		now.expansion = BLOOM_DEFAULT_EXPANSION;
		now.n_filters = 1;
	} else if (rc) {
		return rc;
	}
	st = now;
	rc = fs_xval_bloom(param, v, vn, &st);
	if (rc)
		return rc;
	/* Under the key's lock: refused if it holds items by now. */
	return bloom_set_params(c->fs->ks, &c->k, st.base_capacity, st.error_rate, st.expansion);
}

static const char bloom_xattrs[] = "user.kvfs.bloom.capacity\0user.kvfs.bloom.error_rate\0"
				   "user.kvfs.bloom.expansion";

/* ---- the shape -------------------------------------------------------- */

FS_SKETCH_SHAPE_FUNCS(bloom_sketch)

/* No item added since it was made or emptied: rmdir deletes the key. */
static int s_is_blank(struct fs_ctx *c)
{
	uint64_t n;
	int rc = bloom_card(c->fs->ks, &c->k, &n);
	return rc ? rc : n == 0;
}
static int s_make_empty(struct fs_ctx *c)
{
	return bloom_reserve(c->fs->ks, &c->k, BLOOM_DEFAULT_CAPACITY, BLOOM_DEFAULT_ERROR_RATE,
			     BLOOM_DEFAULT_EXPANSION);
}

static const struct fs_help bloom_help[] = {
    {"chain", "state: capacity, error_rate, expansion, items, filters", "cat b/chain"},
    {"filter.I", "state: filter I's bitset", "ls b"},
    {".add", "input: BF.ADD of each line", "cut -f1 log >> b/.add"},
    {".exists:ITEM", "view: BF.EXISTS, 1 or 0", "cat b/.exists:alice"},
    {".info", "view: BF.INFO", "cat b/.info"},
    {".mexists:A,B", "view: BF.MEXISTS, 1 or 0 a line (an item list, mapping.md 7)",
     "cat b/.mexists:alice,bob"},
    {".card", "view: BF.CARD", "cat b/.card"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_bloom_shape = {
    .type = KV_TYPE_BLOOM,
    .uncached = true,
    FS_SKETCH_SHAPE_OPS,
    .feed_batch = BLOOM_FEED_BATCH,
    .is_blank = s_is_blank,
    .make_empty = s_make_empty,
    .from_field = s_from_field,
    FS_SHAPE_XATTRS(bloom_xattrs),
    .xattr_get = param_get,
    .xattr_set = param_set,
    .help = bloom_help,
};
