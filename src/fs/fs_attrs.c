/*
 * fs_attrs: storing what chmod, chown, touch and setfattr user.* set on a
 * key or an entry (ks_attr records in kvfs's reserved namespace), and
 * what a node keeps of them while it has no record yet (the root, a
 * namespace, a local entry until it is stored). Over the shape table,
 * under the handlers (op_setattr, fs_xattr.c) and the commits of open
 * files (fs_file.c), which store what a new entry's node kept. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <sys/xattr.h>

#include "keyspace/ks_attr.h"

static struct timespec set_time(const struct timespec *cur, const struct timespec *v, int to_set,
				int bit, int now_bit)
{
	struct timespec ts = *cur;
	if (to_set & now_bit)
		clock_gettime(CLOCK_REALTIME, &ts);
	else if (to_set & bit)
		ts = *v;
	return ts;
}

int fs_attrs_store(struct fs *fs, struct fs_node *node, const struct stat *attr, int to_set,
		   const struct stat *cur)
{
	struct fs_path p;
	struct ks_key k;
	struct ks_info info;
	struct ks_attr_set s = {0};
	const struct fs_shape *sh = NULL;
	const char *e = NULL;
	size_t en = 0;
	int rc;

	bool ns_dir = node->kind == FS_NS || (node->kind == FS_ROOT && fs->ns);
	if (node->kind != FS_KEY && node->kind != FS_ENTRY && !ns_dir)
		return 1; /* the root: kept in the node */
	if (fs_itable_local(fs->it, node) != FS_LOCAL_NONE)
		return 1; /* a new key or entry: stored with it (fs_node_attrs_flush) */
	fs_path_init(&p);
	rc = fs_itable_path(fs->it, node, &p);
	if (!rc && p.unhashed)
		rc = -ENOENT;
	if (rc)
		goto out;
	fs_path_key(fs, &p, &k);
	if (node->kind == FS_KEY && fs_key_is_input(fs, &k)) {
		LOG_ERR("'%s' is an input (a push to a list): it has no mode, owner or times of "
			"its own",
			p.key.data);
		rc = -EACCES;
		goto out;
	}
	if (ns_dir) /* a namespace directory's own records */
		ks_attr_ns_key(&k, k.ns, k.nslen);
	if (node->kind == FS_ENTRY) {
		rc = ks_lookup(fs->ks, &k, &info);
		if (!rc)
			sh = fs_shape_of(info.type);
		if (!rc && !sh)
			rc = -ENOENT;
		if (rc)
			goto out;
		fs_attr_entry(sh, p.entry.data, p.entry.len, &e, &en);
	}
	if (to_set & FUSE_SET_ATTR_MODE) {
		s.mask |= KS_ATTR_SET_MODE;
		s.mode = attr->st_mode & 07777;
	}
	if (to_set & FUSE_SET_ATTR_UID) {
		s.mask |= KS_ATTR_SET_UID;
		s.uid = attr->st_uid;
	}
	if (to_set & FUSE_SET_ATTR_GID) {
		s.mask |= KS_ATTR_SET_GID;
		s.gid = attr->st_gid;
	}
	if (to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME)) {
		/* Times are stored together: one left out keeps its value. */
		s.mask |= KS_ATTR_SET_TIMES;
		s.mtime = set_time(&cur->st_mtim, &attr->st_mtim, to_set, FUSE_SET_ATTR_MTIME,
				   FUSE_SET_ATTR_MTIME_NOW);
		s.atime = set_time(&cur->st_atim, &attr->st_atim, to_set, FUSE_SET_ATTR_ATIME,
				   FUSE_SET_ATTR_ATIME_NOW);
	} else if (s.mask && cur) {
		/* chmod and chown move ctime, as on a disk: the times record
		 * keeps what the object shows, with ctime now. */
		s.mask |= KS_ATTR_SET_TIMES;
		s.mtime = cur->st_mtim;
		s.atime = cur->st_atim;
	}
	rc = ks_attr_set(fs->ks, &k, e, en, &s);
out:
	fs_path_release(&p);
	return rc;
}

void fs_node_attrs_stage(struct fs_node *node, struct ks_attr_change *ch)
{
	if (node->has_mode) {
		ch->init |= KS_ATTR_HAS_MODE;
		ch->mode = node->mode & 07777;
	}
	if (node->has_owner) {
		ch->init |= KS_ATTR_HAS_UID | KS_ATTR_HAS_GID;
		ch->uid = node->uid;
		ch->gid = node->gid;
	}
	if (ch->init)
		ch->flags |= KS_ATTR_CREATE;
}

void fs_node_attrs_stored(struct fs_node *node)
{
	node->has_mode = node->has_owner = false;
}

static void node_xattrs_flush(struct fs *fs, struct fs_node *node, bool locked);

void fs_node_attrs_flush(struct fs *fs, struct fs_node *node, bool locked)
{
	struct stat attr;
	int to_set = 0;
	memset(&attr, 0, sizeof(attr));
	if (!locked)
		pthread_mutex_lock(&node->lock);
	if (node->has_mode) {
		attr.st_mode = node->mode;
		to_set |= FUSE_SET_ATTR_MODE;
	}
	if (node->has_owner) {
		attr.st_uid = node->uid;
		attr.st_gid = node->gid;
		to_set |= FUSE_SET_ATTR_UID | FUSE_SET_ATTR_GID;
	}
	/* Times are stored together: one never set takes the other. */
	bool mt = node->mtime.tv_sec || node->mtime.tv_nsec;
	bool at = node->atime.tv_sec || node->atime.tv_nsec;
	if (mt || at) {
		attr.st_mtim = mt ? node->mtime : node->atime;
		attr.st_atim = at ? node->atime : node->mtime;
		to_set |= FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME;
	}
	node->has_mode = node->has_owner = false;
	memset(&node->mtime, 0, sizeof(node->mtime));
	memset(&node->atime, 0, sizeof(node->atime));
	if (!locked)
		pthread_mutex_unlock(&node->lock);
	node_xattrs_flush(fs, node, locked);
	if (!to_set)
		return;
	/* Set before its first store: its creation is its ctime. */
	bool times = to_set & (FUSE_SET_ATTR_MTIME | FUSE_SET_ATTR_ATIME);
	int rc = fs_attrs_store(fs, node, &attr, to_set, times ? &attr : NULL);
	pthread_mutex_lock(&node->lock); /* its name (fs_inode.h) */
	if (rc < 0)
		LOG_WARN("attributes set before '%s' was stored are lost: %s", node->name,
			 strerror(-rc));
	pthread_mutex_unlock(&node->lock);
}

/*
 * Where the user.* attributes of a node live: its key (k, borrowing from
 * p), the key's version, and for an entry its record name. 0; -ENOENT;
 * -ENOTSUP for the root, a namespace, a local entry or a view.
 */
static int xattr_obj(struct fs *fs, struct fs_node *node, struct fs_path *p, struct ks_key *k,
		     uint64_t *version, const char **entry, size_t *elen)
{
	struct ks_info info;
	*entry = NULL;
	*elen = 0;
	if (node->kind != FS_KEY && node->kind != FS_ENTRY)
		return -ENOTSUP;
	if (node->kind == FS_ENTRY && fs_itable_local(fs->it, node) != FS_LOCAL_NONE)
		return -ENOTSUP;
	int rc = fs_itable_path(fs->it, node, p);
	if (rc)
		return rc;
	if (p->unhashed)
		return -ENOENT;
	fs_path_key(fs, p, k);
	rc = ks_lookup(fs->ks, k, &info);
	if (rc)
		return rc;
	*version = info.version;
	if (node->kind == FS_ENTRY) {
		const struct fs_shape *sh = fs_shape_of(info.type);
		if (!sh)
			return -ENOENT;
		if (fs_shape_is_special(sh, p->entry.data, p->entry.len))
			return -ENOTSUP;
		fs_attr_entry(sh, p->entry.data, p->entry.len, entry, elen);
	}
	return 0;
}

/*
 * A local entry (a list or sortedint scratch file, rsync's temp file)
 * holds its user.* attributes in the node until it is stored
 * (fs_node_xattrs_flush). The layout is the records' (ks_attr.c).
 */
static bool is_local(struct fs *fs, struct fs_node *node)
{
	return node->kind == FS_ENTRY && fs_itable_local(fs->it, node) != FS_LOCAL_NONE;
}

/* Find name in a node's list: its offset and whole length, or false. */
static bool local_find(const struct buf *x, const char *name, size_t nlen, size_t *at, size_t *len,
		       const char **val, size_t *vlen)
{
	size_t i = 0;
	while (i + 1 <= x->len) {
		size_t nl = (uint8_t)x->data[i];
		size_t vl = get_be32(x->data + i + 1 + nl);
		size_t whole = 1 + nl + 4 + vl;
		if (nl == nlen && memcmp(x->data + i + 1, name, nl) == 0) {
			*at = i;
			*len = whole;
			*val = x->data + i + 1 + nl + 4;
			*vlen = vl;
			return true;
		}
		i += whole;
	}
	return false;
}

static int local_get(struct fs_node *node, const char *name, struct buf *out)
{
	size_t at, len, vl;
	const char *v;
	pthread_mutex_lock(&node->lock);
	int rc = local_find(&node->xattrs, name, strlen(name), &at, &len, &v, &vl)
		     ? buf_set(out, v, vl)
		     : -ENODATA;
	pthread_mutex_unlock(&node->lock);
	return rc;
}

static int local_list(struct fs_node *node, struct buf *out)
{
	int rc = 0;
	pthread_mutex_lock(&node->lock);
	const struct buf *x = &node->xattrs;
	for (size_t i = 0; !rc && i < x->len;) {
		size_t nl = (uint8_t)x->data[i];
		rc = buf_add(out, x->data + i + 1, nl);
		if (!rc)
			rc = buf_add_u8(out, 0);
		i += 1 + nl + 4 + get_be32(x->data + i + 1 + nl);
	}
	pthread_mutex_unlock(&node->lock);
	return rc;
}

/* Bytes of names and values in a node's list. */
static size_t local_total(const struct buf *x)
{
	size_t total = 0;
	for (size_t i = 0; i < x->len;) {
		size_t nl = (uint8_t)x->data[i];
		size_t vl = get_be32(x->data + i + 1 + nl);
		total += nl + vl;
		i += 1 + nl + 4 + vl;
	}
	return total;
}

static int local_set(struct fs_node *node, const char *name, const char *value, size_t size,
		     int flags)
{
	size_t nlen = strlen(name), at, len, vl;
	const char *v;
	int rc = 0;
	if (nlen > KS_XATTR_NAME_MAX)
		return -ERANGE;
	if (value && size > KS_XATTR_SIZE_MAX)
		return -E2BIG;
	pthread_mutex_lock(&node->lock);
	bool found = local_find(&node->xattrs, name, nlen, &at, &len, &v, &vl);
	if ((flags & XATTR_CREATE) && found)
		rc = -EEXIST;
	else if (((flags & XATTR_REPLACE) || !value) && !found)
		rc = -ENODATA;
	else if (value && local_total(&node->xattrs) - (found ? len - 5 : 0) + nlen + size >
			      KS_XATTR_SIZE_MAX)
		rc = -ENOSPC; /* names and values together, as ks_xattr_set counts */
	if (!rc && found) {
		memmove(node->xattrs.data + at, node->xattrs.data + at + len,
			node->xattrs.len - at - len);
		buf_resize(&node->xattrs, node->xattrs.len - len);
	}
	if (!rc && value && !(rc = buf_add_u8(&node->xattrs, (uint8_t)nlen)) &&
	    !(rc = buf_add(&node->xattrs, name, nlen)) &&
	    !(rc = buf_add_be32(&node->xattrs, (uint32_t)size)))
		rc = buf_add(&node->xattrs, value, size);
	pthread_mutex_unlock(&node->lock);
	return rc;
}

int fs_user_xattr_get(struct fs *fs, struct fs_node *node, const char *name, struct buf *val)
{
	struct fs_path p;
	struct ks_key k;
	uint64_t version = 0;
	const char *e;
	size_t en;
	fs_path_init(&p);
	int rc = is_local(fs, node) ? local_get(node, name, val)
				    : xattr_obj(fs, node, &p, &k, &version, &e, &en);
	if (rc == -ENOTSUP)
		rc = -ENODATA;
	if (!rc && !is_local(fs, node))
		rc = ks_xattr_get(fs->ks, &k, version, e, en, name, strlen(name), val);
	fs_path_release(&p);
	return rc;
}

int fs_user_xattr_list(struct fs *fs, struct fs_node *node, struct buf *list)
{
	struct fs_path p;
	struct ks_key k;
	uint64_t version = 0;
	const char *e;
	size_t en;
	if (is_local(fs, node))
		return local_list(node, list);
	fs_path_init(&p);
	int rc = xattr_obj(fs, node, &p, &k, &version, &e, &en);
	if (!rc)
		rc = ks_xattr_list(fs->ks, &k, version, e, en, list);
	else if (rc == -ENOTSUP)
		rc = 0; /* nothing stored there */
	fs_path_release(&p);
	return rc;
}

int fs_user_xattr_set(struct fs *fs, struct fs_node *node, const char *name, const char *value,
		      size_t size, int flags)
{
	struct fs_path p;
	struct ks_key k;
	uint64_t version = 0;
	const char *e;
	size_t en;
	int kf = (flags & XATTR_CREATE ? KS_XATTR_CREATE : 0) |
		 (flags & XATTR_REPLACE ? KS_XATTR_REPLACE : 0);
	if (is_local(fs, node) && !has_prefix(name, strlen(name), FS_XATTR_KVFS))
		return local_set(node, name, value, size, flags);
	fs_path_init(&p);
	int rc = xattr_obj(fs, node, &p, &k, &version, &e, &en);
	/* The node's lock keeps its name from a rename while it is logged. */
	pthread_mutex_lock(&node->lock);
	if (rc == -ENOTSUP)
		LOG_INFO("%s: '%s' keeps no extended attributes", name, node->name);
	if (!rc && has_prefix(name, strlen(name), FS_XATTR_KVFS)) {
		LOG_ERR("%s: names under %s are kvfs's own", name, FS_XATTR_KVFS);
		rc = -ENOTSUP;
	}
	if (!rc) {
		/* The times the node shows, kept; ctime moves (ks_xattr_change). */
		struct stat st;
		double timeout;
		struct ks_attr_set times = {0};
		if (fs_node_stat(fs, node, &st, &timeout) == 0) {
			times.mask = KS_ATTR_SET_TIMES;
			times.mtime = st.st_mtim;
			times.atime = st.st_atim;
		}
		rc =
		    ks_xattr_change(fs->ks, &k, e, en, name, strlen(name), value, size, kf, &times);
	}
	if (rc == -ERANGE || rc == -E2BIG || rc == -ENOSPC)
		LOG_ERR("%s on '%s': %s", name, node->name, strerror(-rc));
	pthread_mutex_unlock(&node->lock);
	fs_path_release(&p);
	return rc;
}

static void node_xattrs_flush(struct fs *fs, struct fs_node *node, bool locked)
{
	struct buf x = BUF_INIT;
	struct buf name = BUF_INIT;
	if (!locked)
		pthread_mutex_lock(&node->lock);
	x = node->xattrs;
	buf_init(&node->xattrs);
	if (!locked)
		pthread_mutex_unlock(&node->lock);
	for (size_t i = 0; i < x.len;) {
		size_t nl = (uint8_t)x.data[i];
		size_t vl = get_be32(x.data + i + 1 + nl);
		if (buf_set(&name, x.data + i + 1, nl) == 0) {
			int rc =
			    fs_user_xattr_set(fs, node, name.data, x.data + i + 1 + nl + 4, vl, 0);
			pthread_mutex_lock(&node->lock); /* its name, see fs_user_xattr_set */
			if (rc)
				LOG_WARN("%s set before '%s' was stored is lost: %s", name.data,
					 node->name, strerror(-rc));
			pthread_mutex_unlock(&node->lock);
		}
		i += 1 + nl + 4 + vl;
	}
	buf_release(&x);
	buf_release(&name);
}
