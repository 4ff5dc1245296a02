/*
 * fs_shape: the one table that maps each type to what it is in the tree
 * (a directory of entries through its shape, or a file), and what is
 * asked of it: is a type a file, is it mapped, which shape lists and
 * changes a key's entries (fs_ctx_open). Over the shapes, under the
 * operation handlers. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>

/*
 * The table: each type kvfs maps into the tree, as a directory of
 * entries (a shape) or as a file (a file shape). A type in no row is
 * listed and removable but not opened (EOPNOTSUPP).
 */
static const struct {
	const struct fs_shape *dir;
	const struct fs_file_shape *file;
} types[KV_TYPE_MAX + 1] = {
    [KV_TYPE_STRING] = {NULL, &fs_string_file_shape},
    [KV_TYPE_BITMAP] = {NULL, &fs_bitmap_file_shape},
    [KV_TYPE_JSON] = {NULL, &fs_json_file_shape},
    [KV_TYPE_HASH] = {&fs_hash_shape, NULL},
    [KV_TYPE_LIST] = {&fs_list_shape, NULL},
    [KV_TYPE_SET] = {&fs_set_shape, NULL},
    [KV_TYPE_ZSET] = {&fs_zset_shape, NULL},
    [KV_TYPE_SORTEDINT] = {&fs_sortedint_shape, NULL},
    [KV_TYPE_STREAM] = {&fs_stream_shape, NULL},
    [KV_TYPE_TIMESERIES] = {&fs_timeseries_shape, NULL},
    [KV_TYPE_HLL] = {&fs_hll_shape, NULL},
    [KV_TYPE_BLOOM] = {&fs_bloom_shape, NULL},
    [KV_TYPE_TDIGEST] = {&fs_tdigest_shape, NULL},
    [KV_TYPE_TOPK] = {&fs_topk_shape, NULL},
};

/* File shapes that answer names of a namespace besides keys. */
static const struct fs_file_shape *const named[] = {
    &fs_ts_view_file_shape, &fs_ts_madd_file_shape, &fs_json_file_shape,
    &fs_counter_file_shape, &fs_bitops_file_shape,  &fs_list_push_file_shape,
};

/* What user.kvfs.help prints on a namespace: its keys and the names of
 * the shapes above that no type's help has (fs_xattr.c adds the rows
 * "KEY:..." of the file types' helps: counters, bit views, JSON paths). */
const struct fs_help fs_ns_help[] = {
    {"KEY", "a key: a file (string, bitmap, json) or a directory (every other type)",
     "echo v > s; mkdir h"},
    {"KEY:rpush", "input: each line pushed at the tail of list KEY, made if missing (RPUSH)",
     "echo job >> 'q:rpush'"},
    {"KEY:lpush", "input: lines pushed at the head, the last line first (LPUSH)",
     "echo job >> 'q:lpush'"},
    {"KEY:rpush0", "input: NUL-terminated elements (KEY:lpush0: at the head)",
     "find . -print0 >> 'q:rpush0'"},
    {".madd", "input: KEY,TIMESTAMP,VALUE lines, each write one TS.MADD across series",
     "echo 'temp,*,21.5' >> .madd"},
    {".madd:on_duplicate=POLICY", "input: as .madd, with ON_DUPLICATE for that write",
     "echo 'hits,*,1' >> .madd:on_duplicate=sum"},
    {".mget[:withlabels|:labels=A,B]?FILTERS",
     "view: TS.MGET of the series the label filters select, \"KEY,TS,VALUE\" lines; with "
     "labels, a \"NAME=VALUE\" CSV field each",
     "cat '.mget:withlabels?sensor=temp'"},
    {".mrange:FROM..TO[:OPT]...?FILTERS", "view: TS.MRANGE (.mrevrange:...: TS.MREVRANGE)",
     "cat '.mrange:-..+?sensor=temp'"},
    {".mrange:...:groupby=L:reduce=R?FILTERS",
     "view: GROUPBY L REDUCE R (avg sum min max range count std.p std.s var.p var.s): one "
     "series \"L=VALUE\" per value; also :withlabels or :labels=A,B",
     "cat '.mrange:-..+:groupby=room:reduce=max?sensor=temp'"},
    {".queryindex?FILTERS", "view: TS.QUERYINDEX, the keys of the selected series, one a line",
     "cat '.queryindex?sensor=temp'"},
    {NULL, NULL, NULL},
};

const struct fs_file_shape *const fs_new_file_shape = &fs_string_file_shape;
const struct fs_shape *const fs_new_dir_shape = &fs_hash_shape;

const struct fs_shape *fs_shape_of(enum kv_type t)
{
	return (unsigned)t <= KV_TYPE_MAX ? types[t].dir : NULL;
}

const struct fs_shape *fs_shape_of_xattr(const char *ns, size_t n)
{
	for (int t = 0; t <= KV_TYPE_MAX; t++) {
		const struct fs_shape *sh = types[t].dir;
		if (!sh || !sh->xattr_get)
			continue;
		const char *x = sh->xattr_ns ? sh->xattr_ns : enc_type_name(sh->type);
		if (strlen(x) == n && memcmp(x, ns, n) == 0)
			return sh;
	}
	return NULL;
}

const struct fs_file_shape *fs_file_shape_of(enum kv_type t)
{
	return (unsigned)t <= KV_TYPE_MAX ? types[t].file : NULL;
}

const struct fs_file_shape *fs_file_shape_named(const char *name, size_t n, bool shadows)
{
	for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
		if (named[i]->shadows == shadows && named[i]->is_name(name, n))
			return named[i];
	return NULL;
}

bool fs_key_is_input(struct fs *fs, const struct ks_key *k)
{
	struct ks_info info;
	const struct fs_file_shape *fsh = fs_file_shape_named(k->key, k->klen, false);
	return fsh && fsh->feed && ks_lookup(fs->ks, k, &info) == -ENOENT;
}

const struct fs_file_shape *fs_file_shape_for(const char *name, size_t n, enum kv_type t)
{
	const struct fs_file_shape *fsh = fs_file_shape_named(name, n, true);
	if (!fsh)
		fsh = fs_file_shape_of(t);
	return fsh ? fsh : fs_new_file_shape;
}

int fs_file_convert(struct fs *fs, const struct ks_key *k, enum kv_type from, enum kv_type to)
{
	const struct fs_file_shape *a = fs_file_shape_of(from), *b = fs_file_shape_of(to);
	/* A new type, not new content: the times stay (rsync and cp -a set
	 * a file's times, then its type). */
	struct ks_key same = *k;
	if (!same.attr)
		same.attr = &ks_attr_none;
	if (from == to)
		return 0;
	if (!a || !b)
		return -EOPNOTSUPP;
	if (a == fs_new_file_shape && b->from_new)
		return b->from_new(fs, &same);
	if (b == fs_new_file_shape && a->to_new)
		return a->to_new(fs, &same);
	return -EOPNOTSUPP;
}

bool fs_type_is_file(enum kv_type t)
{
	return fs_file_shape_of(t) != NULL;
}

bool fs_corrupt_is_file(enum kv_type t)
{
	return t == KV_TYPE_NONE || fs_type_is_file(t);
}

/* Types whose contents this version of kvfs maps into the tree. */
bool fs_type_is_supported(enum kv_type t)
{
	return fs_file_shape_of(t) || fs_shape_of(t);
}

int fs_shape_lookup(struct fs_ctx *c, const struct fs_shape *sh, const char *name, size_t n,
		    struct fs_entry *e)
{
	int rc = sh->lookup(c, name, n, e);
	if (rc == -ENOENT && sh->is_action && sh->is_action(name, n))
		rc = fs_shape_action_entry(c, name, n, e);
	return rc;
}

bool fs_shape_acts(struct fs_ctx *c, const struct fs_shape *sh, const char *name, size_t n)
{
	if (!sh->is_action || !sh->is_action(name, n))
		return false;
	struct fs_entry e;
	fs_entry_init(&e);
	bool none = sh->lookup(c, name, n, &e) == -ENOENT;
	fs_entry_release(&e);
	return none;
}

bool fs_shape_is_special(const struct fs_shape *sh, const char *name, size_t n)
{
	return (sh->is_view && sh->is_view(name, n)) || (sh->is_input && sh->is_input(name, n));
}

int fs_ctx_open(struct fs *fs, struct fs_node *dir, const struct fs_path *p, struct fs_inval *iv,
		struct fs_ctx *c, const struct fs_shape **sh)
{
	return fs_ctx_open_at(fs, dir, p, iv, NULL, c, sh);
}

int fs_ctx_open_at(struct fs *fs, struct fs_node *dir, const struct fs_path *p, struct fs_inval *iv,
		   const struct store_snap *snap, struct fs_ctx *c, const struct fs_shape **sh)
{
	memset(c, 0, sizeof(*c));
	c->fs = fs;
	c->dir = dir;
	c->iv = iv;
	fs_path_key(fs, p, &c->k);
	c->k.snap = snap;
	int rc = ks_lookup(fs->ks, &c->k, &c->info);
	if (rc)
		return rc;
	if (fs_type_is_file(c->info.type))
		return -ENOTDIR;
	*sh = c->sh = fs_shape_of(c->info.type);
	return *sh ? 0 : -EOPNOTSUPP;
}
