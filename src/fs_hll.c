/*
 * fs_hll: a HyperLogLog key is a directory (a sketch shape, fs_sketch.c).
 * Listed: `registers`, the 12288-byte Redis dense register array (the
 * key's exact state; writing it replaces the registers). Unlisted:
 * `.count` (PFCOUNT, a decimal and a newline), `.add` (each line written
 * is PFADDed) and `.merge` (each line names a key of the same namespace,
 * as it appears in the tree, to PFMERGE into this one). Layer: fs.
 */
#include "fs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "t_hll.h"

#define REGISTERS "registers"

static int count_read(struct fs_ctx *c, const char *arg, size_t an, struct buf *out)
{
	(void)arg;
	(void)an;
	uint64_t n;
	int rc = hll_count(c->fs->ks, &c->k, 1, &n);
	return rc ? rc : buf_printf(out, "%" PRIu64 "\n", n);
}

static int add_feed(struct fs_ctx *c, const struct iovec *items, size_t n)
{
	return hll_add(c->fs->ks, &c->k, items, n, NULL);
}

/* PFMERGE: every line is a source key (a name as listed, decoded). */
static int merge_feed(struct fs_ctx *c, const struct iovec *items, size_t n)
{
	struct ks_key *srcs = calloc(n ? n : 1, sizeof(*srcs));
	struct buf *names = calloc(n ? n : 1, sizeof(*names));
	struct buf typed = BUF_INIT;
	size_t got = 0;
	int rc = srcs && names ? 0 : -ENOMEM;
	for (size_t i = 0; !rc && i < n; i++) {
		uint64_t hash = 0;
		buf_init(&names[i]);
		got = i + 1;
		rc = buf_set(&typed, items[i].iov_base, items[i].iov_len);
		if (!rc && (memchr(typed.data, 0, typed.len) || typed.len == 0 ||
			    names_decode(typed.data, &names[i], &hash) || hash)) {
			LOG_ERR(".merge: line %zu, '%s', is not a key name of this namespace",
				i + 1, typed.data);
			rc = -EINVAL;
		}
		if (!rc) {
			srcs[i] = c->k;
			srcs[i].key = names[i].data;
			srcs[i].klen = names[i].len;
		}
	}
	if (!rc)
		rc = hll_merge(c->fs->ks, &c->k, srcs, n);
	if (rc == -KV_EWRONGTYPE)
		LOG_ERR(".merge: a source key is not a hyperloglog");
	for (size_t i = 0; i < got; i++)
		buf_release(&names[i]);
	buf_release(&typed);
	free(names);
	free(srcs);
	return rc;
}

static int hll_file(struct fs_ctx *c, uint32_t i, struct buf *name, uint64_t *size)
{
	(void)c;
	if (i > 0)
		return 0;
	*size = HLL_DENSE_BYTES;
	int rc = buf_set(name, REGISTERS, strlen(REGISTERS));
	return rc ? rc : 1;
}

static int hll_file_index(const char *name, size_t n)
{
	return n == strlen(REGISTERS) && !memcmp(name, REGISTERS, n) ? 0 : -1;
}

static int hll_file_load(struct fs_ctx *c, int idx, struct buf *out)
{
	(void)idx;
	int rc = buf_resize(out, HLL_DENSE_BYTES);
	return rc ? rc : hll_registers(c->fs->ks, &c->k, (uint8_t *)out->data);
}

static int hll_file_store(struct fs_ctx *c, int idx, const char *d, size_t dn)
{
	(void)idx;
	return hll_set_registers(c->fs->ks, &c->k, d, dn);
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

static const struct fs_sketch_view hll_views[] = {{".count", count_read}};
static const struct fs_sketch_input hll_inputs[] = {{".add", add_feed}, {".merge", merge_feed}};

static const struct fs_sketch hll_sketch = {
    .what = "hyperloglog",
    .views = hll_views,
    .nviews = sizeof(hll_views) / sizeof(hll_views[0]),
    .inputs = hll_inputs,
    .ninputs = sizeof(hll_inputs) / sizeof(hll_inputs[0]),
    .file = hll_file,
    .file_index = hll_file_index,
    .file_load = hll_file_load,
    .file_store = hll_file_store,
    .clear = hll_clear,
};

static bool s_is_view(const char *name, size_t n)
{
	return fs_sketch_is_view(&hll_sketch, name, n);
}
static bool s_is_input(const char *name, size_t n)
{
	return fs_sketch_is_input(&hll_sketch, name, n);
}
static int s_lookup(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	return fs_sketch_lookup(&hll_sketch, c, name, n, e);
}
static int s_iter_open(struct fs_ctx *c, const void *after, size_t alen, bool by_name, void **it)
{
	(void)by_name;
	return fs_sketch_iter_open(&hll_sketch, c, after, alen, it);
}
static int s_feed(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn)
{
	return fs_sketch_feed(&hll_sketch, c, name, n, d, dn);
}
static int s_load(struct fs_ctx *c, const char *name, size_t n, struct buf *out)
{
	return fs_sketch_load(&hll_sketch, c, name, n, out);
}
static int s_commit(struct fs_ctx *c, const char *name, size_t n, const char *d, size_t dn,
		    bool pending)
{
	(void)pending;
	return fs_sketch_commit(&hll_sketch, c, name, n, d, dn);
}
static int s_create(struct fs_ctx *c, const char *name, size_t n, struct fs_entry *e)
{
	(void)e;
	return fs_sketch_create(&hll_sketch, c, name, n);
}
static int s_unlink(struct fs_ctx *c, const char *name, size_t n)
{
	return fs_sketch_unlink(&hll_sketch, c, name, n);
}
static int s_adopt(struct fs_ctx *c, const char *to, size_t tn, const char *d, size_t dn,
		   struct buf *canon)
{
	return fs_sketch_adopt(&hll_sketch, c, to, tn, d, dn, canon);
}
static int s_make_empty(struct fs_ctx *c)
{
	return hll_add(c->fs->ks, &c->k, NULL, 0, NULL);
}
/* Every register is zero (PFCOUNT 0): rmdir deletes the key. */
static bool s_is_blank(struct fs_ctx *c)
{
	uint64_t n;
	return hll_count(c->fs->ks, &c->k, 1, &n) == 0 && n == 0;
}

/* A hash field as part of a hyperloglog (cp -a sets the type last). */
static int s_from_field(void *arg, const char *f, size_t fn, const char *v, size_t vn,
			struct convert_item *it)
{
	(void)arg;
	(void)v;
	(void)vn;
	if (hll_file_index(f, fn) == 0) {
		it->num = 0;
		return 0;
	}
	LOG_ERR("field '%.*s': a hyperloglog holds only '" REGISTERS "'", (int)fn, f);
	return -EINVAL;
}

const struct fs_shape fs_hll_shape = {
    .type = KV_TYPE_HLL,
    .recomputed = true,
    .lookup = s_lookup,
    .iter_open = s_iter_open,
    .iter_next = fs_sketch_iter_next,
    .iter_free = fs_sketch_iter_free,
    .is_view = s_is_view,
    .is_input = s_is_input,
    .feed = s_feed,
    .load = s_load,
    .commit = s_commit,
    .create = s_create,
    .unlink = s_unlink,
    .adopt = s_adopt,
    .is_blank = s_is_blank,
    .make_empty = s_make_empty,
    .from_field = s_from_field,
};
