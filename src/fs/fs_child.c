/*
 * fs_child: the child a tree operation names, for the handlers of fs.c
 * and fs_rename.c: its stored name and path (a long name resolved), the
 * start every change shares, the entry context of its key, a new key its
 * node still holds, the value an open file of it keeps when it goes, and
 * the type an editor's backup leaves for a file written anew. Over the
 * open files (fs_file.c) and listings (fs_dir.c), under the handlers.
 * Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>

int fs_entry_ctx(struct fs *fs, struct fs_node *dir, const struct fs_path *p, struct fs_inval *iv,
		 struct fs_ctx *c, const struct fs_shape **sh)
{
	int rc = fs_ctx_open(fs, dir, p, iv, c, sh);
	if (rc == -EOPNOTSUPP)
		LOG_WARN("'%.*s' is a %s: its entries cannot be changed yet", (int)c->k.klen,
			 c->k.key, enc_type_name(c->info.type));
	return rc;
}

/* A new key of directory `parent` that its node still holds (created,
 * not flushed yet), referenced; NULL if there is none. */
struct fs_node *fs_local_key(struct fs *fs, struct fs_node *parent, const char *name, size_t n)
{
	if (fs_child_kind(fs, parent) != FS_KEY)
		return NULL;
	return fs_itable_find_local(fs->it, parent, name, n);
}

bool fs_has_local_key(struct fs *fs, struct fs_node *parent, const char *name, size_t n)
{
	struct fs_node *l = fs_local_key(fs, parent, name, n);
	if (l)
		fs_itable_unref(fs->it, l);
	return l != NULL;
}

int fs_store_local_key(struct fs *fs, struct fs_node *parent, const char *name, size_t n)
{
	struct fs_node *l = fs_local_key(fs, parent, name, n);
	int rc = l ? fs_file_store_pending(fs, l) : 0;
	if (l)
		fs_itable_unref(fs->it, l);
	return rc;
}

int fs_decode_name(struct fs *fs, struct fs_node *parent, const char *name, struct buf *out)
{
	uint64_t hash;
	int rc = names_decode(name, out, &hash);
	if (rc != NAMES_DECODED_LONG)
		return rc;
	return fs_dir_find_long(fs, parent, out, hash, name);
}

int fs_child_begin(struct fs *fs, fuse_ino_t parent_ino, const char *name, struct fs_node **parent,
		   struct buf *stored, struct fs_path *p)
{
	*parent = fs_itable_get(fs->it, parent_ino);
	if (!*parent)
		return -ESTALE;
	if ((*parent)->kind == FS_ENTRY)
		return -ENOTDIR;
	int rc = fs_decode_name(fs, *parent, name, stored);
	if (!rc)
		rc = fs_child_path(fs, *parent, stored->data, stored->len, p);
	/* Every caller changes the tree: a read-only mount refuses it here. */
	if (!rc && fs->opt.read_only)
		rc = -EROFS;
	return rc;
}

/* How long a backup's type waits for the file written anew (ms). */
#define BACKUP_TYPE_MS 60000

void fs_backup_note(struct fs *fs, struct fs_node *parent, const char *name, size_t n,
		    enum kv_type t)
{
	pthread_mutex_lock(&fs->backup_lock);
	if (buf_set(&fs->backup.name, name, n) == 0) {
		fs->backup.parent = parent->ino;
		fs->backup.type = t;
		fs->backup.at_ms = now_ms();
	} else {
		fs->backup.parent = 0;
	}
	pthread_mutex_unlock(&fs->backup_lock);
}

enum kv_type fs_backup_type(struct fs *fs, struct fs_node *parent, const char *name, size_t n)
{
	enum kv_type t = KV_TYPE_NONE;
	pthread_mutex_lock(&fs->backup_lock);
	if (fs->backup.parent == parent->ino && fs->backup.name.len == n &&
	    memcmp(fs->backup.name.data, name, n) == 0) {
		if (now_ms() - fs->backup.at_ms < BACKUP_TYPE_MS)
			t = fs->backup.type;
		fs->backup.parent = 0;
	}
	pthread_mutex_unlock(&fs->backup_lock);
	return t;
}

int fs_keep_open(struct fs *fs, struct fs_node *parent, const char *name, size_t n)
{
	struct fs_node *node = fs_itable_find(fs->it, parent, name, n);
	if (!node)
		return 0;
	int rc = fs_file_keep(fs, node);
	fs_itable_unref(fs->it, node);
	return rc;
}