/*
 * Fuzz harness: what users write into the tree, through the shapes of
 * the fs layer (fs_*.c) on a temporary database, without a mount: an
 * entry's or state file's text checked (shape->check) and stored
 * (shape->commit: CSV chunks of a time series, a stream entry's
 * field/value lines, sketch state files, zset scores, ...), lines fed to
 * an input (shape->feed: .add, .ctl, .incrby, .reset, .merge) and the
 * type parameters set as xattrs (shape->xattr_set), and names: the
 * shape's name predicates, other spellings (shape->canon) and the views
 * a name asks for (shape->load of ".by-score:...", ".range:...",
 * ".exists:...", ".pending:G:C", ...).
 *
 * Operation 5 converts a hash into the shape's type (user.kvfs.type on a
 * directory cp -a filled): the data is the hash's fields, each [field:
 * u16 length, bytes] [value: u16 length, bytes], read by the shape's
 * from_field.
 *
 * Input: [shape u8] [operation u8] [name: u16 length, bytes] then the
 * data. The list shape needs a directory node (its gaps) for everything
 * but a conversion, so it does only that.
 */
#include "fuzz.h"

#include "fs/fs_int.h"
#include "types/t_hash.h"
#include "types/t_set.h"
#include "types/t_sortedint.h"
#include "types/t_stream.h"
#include "types/t_timeseries.h"
#include "types/t_topk.h"
#include "types/t_zset.h"

static const struct fs_shape *const shapes[] = {
    &fs_hash_shape,	  &fs_set_shape, &fs_zset_shape,  &fs_sortedint_shape, &fs_stream_shape,
    &fs_timeseries_shape, &fs_hll_shape, &fs_bloom_shape, &fs_tdigest_shape,   &fs_topk_shape,
};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static struct fs fs;
static struct buf out = BUF_INIT;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static int entry_cb(void *arg, const struct stream_id *id, const char *val, size_t vn)
{
	(void)arg;
	(void)id;
	(void)val;
	(void)vn;
	return 0;
}

/* A key of the shape's type, as mkdir makes it (a stream: with one
 * entry); with full, holding an entry or a few samples and a consumer
 * group (so views and lookups have something to read). */
static void make_key(const struct fs_shape *sh, struct fs_ctx *c, bool full)
{
	struct keyspace *ks = c->fs->ks;
	struct stream_str fv[2] = {{"f", 1}, {"v", 1}};
	struct stream_id id = {5, 0}, zero = {0, 0};
	struct topk_params p = {TOPK_K_DEFAULT, TOPK_WIDTH_DEFAULT, TOPK_DEPTH_DEFAULT,
				TOPK_DECAY_DEFAULT};

	if (sh->make_empty)
		(void)sh->make_empty(c);
	switch (full ? sh->type : KV_TYPE_NONE) {
	case KV_TYPE_HASH:
		(void)hash_set(ks, &c->k, "f", 1, "v", 1, NULL);
		break;
	case KV_TYPE_SET:
		(void)set_add(ks, &c->k, "m", 1, NULL);
		break;
	case KV_TYPE_ZSET:
		(void)zset_add(ks, &c->k, "m", 1, 1.5, 0);
		break;
	case KV_TYPE_SORTEDINT:
		(void)sortedint_add(ks, &c->k, 7, NULL);
		break;
	case KV_TYPE_STREAM:
		(void)stream_add(ks, &c->k, STREAM_ADD_ID, &id, fv, 2, 0, NULL);
		(void)stream_group_create(ks, &c->k, "g", 1, &zero, -1, 0);
		(void)stream_readgroup(ks, &c->k, "g", 1, "c", 1, NULL, 1, 0, entry_cb, NULL);
		break;
	case KV_TYPE_TIMESERIES:
		(void)ts_add(ks, &c->k, 1000, 1.5, NULL, TS_DUP_NONE, NULL);
		(void)ts_add(ks, &c->k, 2000, -3, NULL, TS_DUP_NONE, NULL);
		break;
	case KV_TYPE_TOPK:
		(void)topk_reserve(ks, &c->k, &p);
		break;
	default:
		break;
	}
	if (!full && sh->type == KV_TYPE_STREAM)
		(void)stream_add(ks, &c->k, STREAM_ADD_ID, &id, fv, 2, 0, NULL);
	if (!full && sh->type == KV_TYPE_TOPK)
		(void)topk_reserve(ks, &c->k, &p);
	(void)ks_lookup(ks, &c->k, &c->info);
	c->sh = fs_shape_of(c->info.type);
}

/* A name: what kind it is, its canonical spelling, and the view or entry
 * it loads on a key holding one sample entry. */
static void names(const struct fs_shape *sh, struct fs_ctx *c, const char *name, size_t n)
{
	if (sh->is_view)
		(void)sh->is_view(name, n);
	if (sh->is_live)
		(void)sh->is_live(name, n);
	if (sh->is_input)
		(void)sh->is_input(name, n);
	if (sh->is_scratch)
		(void)sh->is_scratch(name, n);
	(void)fs_shape_is_special(sh, name, n);
	if (sh->canon)
		(void)sh->canon(name, n, &out);
	make_key(sh, c, true);
	if (sh->lookup) {
		struct fs_entry e;
		fs_entry_init(&e);
		(void)sh->lookup(c, name, n, &e);
		fs_entry_release(&e);
	}
	if (sh->load)
		(void)sh->load(c, name, n, &out);
}

/* A hash of the fields in the input, converted to the shape's type. */
static void convert(const struct fs_shape *sh, struct fs_ctx *c, struct fuzz_in *in)
{
	for (int i = 0; i < 64 && in->n > 0; i++) {
		size_t fn, vn;
		const uint8_t *f = fuzz_field(in, &fn);
		const uint8_t *v = fuzz_field(in, &vn);
		(void)hash_set(c->fs->ks, &c->k, f, fn, v, vn, NULL);
	}
	if (sh->from_field && convert_hash(c->fs->ks, &c->k, sh->type, sh->from_field, NULL) == 0 &&
	    sh->iter_open && sh != &fs_list_shape) {
		void *it = NULL;
		struct fs_child ch;
		(void)ks_lookup(c->fs->ks, &c->k, &c->info);
		if (sh->iter_open(c, NULL, 0, false, &it) == 0) {
			for (int i = 0; i < 128 && sh->iter_next(it, &ch) == 1; i++)
				if (sh->load)
					(void)sh->load(c, ch.name, ch.n, &out);
			sh->iter_free(it);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	struct fs_ctx c = {.fs = &fs};
	c.k = fuzz_key_next();
	fs.ks = fuzz_db();
	const struct fs_shape *sh = shapes[fuzz_u8(&in) % NSHAPES];
	unsigned op = fuzz_u8(&in) % 6;
	if (sh == &fs_list_shape && op != 5)
		op = 0;
	size_t nn;
	const uint8_t *np = fuzz_field(&in, &nn);
	char *name = fuzz_strdup(np, nn);
	char *d = fuzz_strdup(in.p, in.n);
	size_t dn = in.n;

	switch (op) {
	case 0:
		if (sh->check)
			(void)sh->check(name, nn, d, dn);
		break;
	case 1:
		make_key(sh, &c, false);
		if (sh->check && sh->check(name, nn, d, dn))
			break;
		if (sh->commit && sh->commit(&c, name, nn, d, dn, true) == 0 && sh->load)
			(void)sh->load(&c, name, nn, &out);
		break;
	case 2:
		make_key(sh, &c, false);
		if (sh->feed && sh->is_input && sh->is_input(name, nn))
			(void)sh->feed(&c, name, nn, d, dn);
		break;
	case 3:
		make_key(sh, &c, false);
		if (sh->xattr_set && sh->xattr_set(&c, name, d, dn) == 0 && sh->xattr_get)
			(void)sh->xattr_get(&c, name, &out);
		break;
	case 4:
		names(sh, &c, name, nn);
		break;
	case 5:
		convert(sh, &c, &in);
		break;
	}
	free(name);
	free(d);
	buf_reset(&out);
	return 0;
}
