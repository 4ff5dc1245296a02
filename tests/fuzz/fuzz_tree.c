/*
 * Fuzz harness: what users write into the tree, through the shapes of
 * the fs layer (fs_*.c) on a temporary database, without a mount: an
 * entry's or state file's text checked (shape->check) and stored
 * (shape->commit: CSV chunks of a time series, a stream entry's
 * field/value lines, sketch state files, zset scores, ...), lines fed to
 * an input (shape->feed: .add, .ctl, .incrby, .reset, .merge) and the
 * type parameters set as xattrs (shape->xattr_set).
 *
 * Input: [shape u8] [operation u8] [name: u16 length, bytes] then the
 * data. The list shape needs a directory node (its gaps) and is left out.
 */
#include "fuzz.h"

#include "fs_int.h"
#include "t_bloom.h"
#include "t_stream.h"
#include "t_topk.h"

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

/* A key of the shape's type, as mkdir (and a first entry) makes it. */
static void make_key(const struct fs_shape *sh, struct fs_ctx *c)
{
	if (sh->make_empty) {
		(void)sh->make_empty(c);
	} else if (sh->type == KV_TYPE_STREAM) {
		struct stream_str fv[2] = {{"f", 1}, {"v", 1}};
		struct stream_id id = {5, 0};
		(void)stream_add(c->fs->ks, &c->k, STREAM_ADD_ID, &id, fv, 2, 0, NULL);
	} else if (sh->type == KV_TYPE_TOPK) {
		struct topk_params p = {TOPK_K_DEFAULT, TOPK_WIDTH_DEFAULT, TOPK_DEPTH_DEFAULT,
					TOPK_DECAY_DEFAULT};
		(void)topk_reserve(c->fs->ks, &c->k, &p);
	}
	(void)ks_lookup(c->fs->ks, &c->k, &c->info);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	struct fs_ctx c = {.fs = &fs};
	c.k = fuzz_key_next();
	fs.ks = fuzz_db();
	const struct fs_shape *sh = shapes[fuzz_u8(&in) % NSHAPES];
	unsigned op = fuzz_u8(&in) % 4;
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
		make_key(sh, &c);
		if (sh->check && sh->check(name, nn, d, dn))
			break;
		if (sh->commit && sh->commit(&c, name, nn, d, dn, true) == 0 && sh->load)
			(void)sh->load(&c, name, nn, &out);
		break;
	case 2:
		make_key(sh, &c);
		if (sh->feed && sh->is_input && sh->is_input(name, nn))
			(void)sh->feed(&c, name, nn, d, dn);
		break;
	case 3:
		make_key(sh, &c);
		if (sh->xattr_set && sh->xattr_set(&c, name, d, dn) == 0 && sh->xattr_get)
			(void)sh->xattr_get(&c, name, &out);
		break;
	}
	free(name);
	free(d);
	buf_reset(&out);
	return 0;
}
