/*
 * fs_hll: a HyperLogLog key is a directory (a sketch shape, fs_sketch.c).
 * Listed: `registers`, the 12288-byte Redis dense register array (the
 * key's exact state; writing it replaces the registers). Unlisted:
 * `.count` (PFCOUNT, a decimal and a newline), `.count:K2,K3` (PFCOUNT of
 * this key and others of its namespace), `.add` (each line written
 * is PFADDed) and `.merge` (each line names a key of the same namespace,
 * as it appears in the tree, to PFMERGE into this one). Layer: fs.
 */
#include "fs/fs_int.h"
#include "fs/fs_xval.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "types/t_hll.h"

#define REGISTERS "registers"

static int count_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *out)
{
	(void)arg;
	(void)an;
	uint64_t n;
	int rc = hll_count(c->fs->ks, &c->k, 1, &n);
	return rc ? rc : buf_printf(out, "%" PRIu64 "\n", n);
}

/* PFCOUNT of this key and the keys of its namespace an item list names
 * (fs_items_split; as the tree spells them, like the lines of .merge):
 * the count of their union. */
static int count_keys_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *out)
{
	struct fs_items it;
	struct ks_key *keys = NULL;
	uint64_t n = 0;
	int rc = fs_items_split(arg, an, "hyperloglog .count:", &it);
	if (!rc && !(keys = calloc(it.n + 1, sizeof(*keys))))
		rc = -ENOMEM;
	if (!rc) {
		keys[0] = c->k;
		for (size_t i = 0; i < it.n; i++) {
			keys[i + 1] = c->k;
			keys[i + 1].key = it.v[i].iov_base;
			keys[i + 1].klen = it.v[i].iov_len;
			keys[i + 1].attr = NULL;
			keys[i + 1].snap = NULL;
		}
		rc = hll_count(c->fs->ks, keys, it.n + 1, &n);
		/* bad input, not this key's type (a lookup would say ENOENT) */
		if (rc == -KV_EWRONGTYPE) {
			LOG_ERR("'%.*s/.count:%.*s': a key named there is no hyperloglog: EINVAL",
				(int)c->k.klen, c->k.key, (int)an, arg);
			rc = -EINVAL;
		}
	}
	if (!rc)
		rc = buf_printf(out, "%" PRIu64 "\n", n);
	free(keys);
	fs_items_release(&it);
	return rc;
}

static int add_feed(struct fs_ctx *c, const struct iovec *items, size_t n)
{
	return hll_add(c->fs->ks, &c->k, items, n, NULL);
}

/* PFMERGE of the keys named a line each. */
static int merge_feed(struct fs_ctx *c, const struct ks_key *srcs, size_t n)
{
	return hll_merge(c->fs->ks, &c->k, srcs, n);
}

static int hll_file_load(struct fs_ctx *c, int idx, struct buf *out)
{
	(void)idx;
	int rc = buf_resize(out, HLL_DENSE_BYTES);
	return rc ? rc : hll_registers(c->fs->ks, &c->k, (uint8_t *)out->data);
}

/* Binary: checked whole when stored. */
static int registers_store(struct fs_ctx *c, const char *d, size_t dn)
{
	return c ? hll_set_registers(c->fs->ks, &c->k, d, dn) : 0;
}

static int hll_clear(struct fs_ctx *c)
{
	uint8_t *zero = calloc(1, HLL_DENSE_BYTES);
	if (!zero)
		return -ENOMEM;
	int rc = hll_set_registers(c->fs->ks, &c->k, zero, HLL_DENSE_BYTES);
	free(zero);
	return rc;
}

static const struct fs_sketch_view hll_views[] = {{.name = ".count", .read = count_read},
						  {.name = ".count:", .read = count_keys_read}};
static const struct fs_sketch_input hll_inputs[] = {{.name = ".add", .feed = add_feed},
						    {.name = ".merge", .feed_keys = merge_feed}};

/* rm empties the whole sketch (hll_clear). */
static const struct fs_sketch_part hll_parts[] = {{REGISTERS, registers_store, NULL}};

static const struct fs_sketch hll_sketch = {
    .what = "hyperloglog",
    FS_SKETCH_TABLE(views, hll_views),
    FS_SKETCH_TABLE(inputs, hll_inputs),
    FS_SKETCH_TABLE(parts, hll_parts),
    .file_load = hll_file_load,
    .clear = hll_clear,
};

FS_SKETCH_SHAPE_FUNCS(hll_sketch)

static int s_make_empty(struct fs_ctx *c)
{
	return hll_add(c->fs->ks, &c->k, NULL, 0, NULL);
}
/* Every register is zero (PFCOUNT 0): rmdir deletes the key. */
static int s_is_blank(struct fs_ctx *c)
{
	uint64_t n;
	int rc = hll_count(c->fs->ks, &c->k, 1, &n);
	return rc ? rc : n == 0;
}

/* A hash field as part of a hyperloglog (cp -a sets the type last). */
static int s_from_field(void *arg, const char *f, size_t fn, const char *v, size_t vn,
			struct convert_item *it)
{
	(void)arg;
	(void)v;
	(void)vn;
	if (fs_sketch_file_index(&hll_sketch, f, fn) == 0) {
		it->num = 0;
		return 0;
	}
	LOG_ERR("field '%.*s': a hyperloglog holds only '" REGISTERS "'", (int)fn, f);
	return -EINVAL;
}

static const struct fs_help hll_help[] = {
    {"registers", "state: the 12288 bytes of registers (Redis dense layout)",
     "cp h/registers /tmp/r"},
    {".add", "input: PFADD of each line", "cut -f1 log >> h/.add"},
    {".merge", "input: PFMERGE of the keys named one a line", "echo other >> h/.merge"},
    {".count", "view: PFCOUNT", "cat h/.count"},
    {".count:K2,K3", "view: PFCOUNT of this key and keys K2, K3 (an item list) together",
     "cat h/.count:h2,h3"},
    {NULL, NULL, NULL},
};

const struct fs_shape fs_hll_shape = {
    .type = KV_TYPE_HLL,
    FS_SKETCH_SHAPE_OPS,
    .is_blank = s_is_blank,
    .make_empty = s_make_empty,
    .from_field = s_from_field,
    .help = hll_help,
};
