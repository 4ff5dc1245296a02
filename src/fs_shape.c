/*
 * fs_shape: the one table that maps each type to what it is in the tree
 * (a directory of entries through its shape, or a file), and what is
 * asked of it: is a type a file, is it mapped, which shape lists and
 * changes a key's entries (fs_ctx_open). Over the shapes, under the
 * operation handlers. Layer: fs.
 */
#include "fs_int.h"

#include <errno.h>

bool fs_type_is_file(enum kv_type t)
{
	return t == KV_TYPE_STRING || t == KV_TYPE_JSON || t == KV_TYPE_BITMAP;
}

bool fs_corrupt_is_file(enum kv_type t)
{
	return t == KV_TYPE_NONE || fs_type_is_file(t);
}

/* Types whose contents this version of kvfs maps into the tree. */
bool fs_type_is_supported(enum kv_type t)
{
	return t == KV_TYPE_STRING || t == KV_TYPE_BITMAP || t == KV_TYPE_JSON ||
	       fs_shape_of(t) != NULL;
}

const struct fs_shape *fs_shape_of(enum kv_type t)
{
	switch (t) {
	case KV_TYPE_HASH:
		return &fs_hash_shape;
	case KV_TYPE_LIST:
		return &fs_list_shape;
	case KV_TYPE_SET:
		return &fs_set_shape;
	case KV_TYPE_ZSET:
		return &fs_zset_shape;
	case KV_TYPE_SORTEDINT:
		return &fs_sortedint_shape;
	case KV_TYPE_TIMESERIES:
		return &fs_timeseries_shape;
	case KV_TYPE_TDIGEST:
		return &fs_tdigest_shape;
	case KV_TYPE_TOPK:
		return &fs_topk_shape;
	case KV_TYPE_HLL:
		return &fs_hll_shape;
	case KV_TYPE_BLOOM:
		return &fs_bloom_shape;
	case KV_TYPE_STREAM:
		return &fs_stream_shape;
	default:
		return NULL;
	}
}

bool fs_shape_is_special(const struct fs_shape *sh, const char *name, size_t n)
{
	return (sh->is_view && sh->is_view(name, n)) || (sh->is_input && sh->is_input(name, n));
}

int fs_ctx_open(struct fs *fs, struct fs_node *dir, const struct fs_path *p, struct fs_inval *iv,
		struct fs_ctx *c, const struct fs_shape **sh)
{
	memset(c, 0, sizeof(*c));
	c->fs = fs;
	c->dir = dir;
	c->iv = iv;
	fs_path_key(fs, p, &c->k);
	int rc = ks_lookup(fs->ks, &c->k, &c->info);
	if (rc)
		return rc;
	if (fs_type_is_file(c->info.type))
		return -ENOTDIR;
	*sh = fs_shape_of(c->info.type);
	return *sh ? 0 : -EOPNOTSUPP;
}
