/*
 * ks_attr: times, mode, owner and user.* extended attributes of keys and
 * entries, kept in the reserved namespace "__kvfs" as ordinary Kvrocks v1
 * string keys (value 0x81 | expire u64 0 | payload) in the metadata CF.
 * Layer: keyspace.
 *
 *   record        user key inside __kvfs
 *   key times     "@" | ns_len u8 | ns | key_len u32 | key | "T"
 *   key attrs     "@" | ns_len u8 | ns | key_len u32 | key | "X"
 *   entry times   "@" | ns_len u8 | ns | key_len u32 | key | "t" | version u64 | entry
 *   entry attrs   "@" | ns_len u8 | ns | key_len u32 | key | "x" | version u64 | entry
 *   ns times      "@" | ns_len u8 | ns | FF FF FF FF       | "T"
 *   ns attrs      "@" | ns_len u8 | ns | FF FF FF FF       | "X"
 *
 *   payload       bytes
 *   times         ver u64 | mtime | atime | ctime, each: seconds i64 | nanoseconds u32
 *   attrs         ver u64 | has u8 | mode u32 | uid u32 | gid u32 |
 *                 { name_len u8 | name | value_len u32 | value }*
 *
 * `has` bits: 1 mode, 2 uid, 4 gid; in a key's record 8: some entry of the
 * key may have an attrs record (set when one is written or moved in, never
 * cleared), so a listing reads no entry attrs of keys that have none. All
 * integers big-endian.
 *
 * Every record of a key shares the prefix up to and including `key`, so
 * a rename finds them with one scan. Entry records carry the key's
 * version in their name: a deleted or re-created key's entry records are
 * never seen again (O(1) DEL stays O(1)) and ks_gc drops them. Key
 * records carry in `ver` the version of the key they were written for
 * (0 for a string or an empty collection: valid for any version), so
 * records of a key deleted by someone else and re-created are not
 * inherited; kvfs's own DEL and rmdir delete them.
 *
 * A namespace directory's own records are the key records of a key
 * whose key_len is FF FF FF FF and which has no key bytes: no user key
 * has that length (Redis caps keys at 512 MiB), so they never meet the
 * records of a real key, not even of the empty key "". They are
 * written with version 0 (ks_attr_ns_key).
 */
#include "keyspace/ks_attr.h"

#include "engine/store.h"

#include <errno.h>
#include <stdlib.h>

#define RES_NS	  KS_RESERVED_NS
#define RES_NSLEN (sizeof(KS_RESERVED_NS) - 1)
#define REC_TAG	  '@'

#define PART_KEY_TIMES	 'T'
#define PART_KEY_ATTRS	 'X'
#define PART_ENTRY_TIMES 't'
#define PART_ENTRY_ATTRS 'x'

#define TIMES_LEN (8 + 3 * 12)
#define ATTRS_HDR (8 + 1 + 12)

#define HAS_MODE	1u
#define HAS_UID		2u
#define HAS_GID		4u
#define HAS_ENTRY_ATTRS 8u

const struct ks_attr_change ks_attr_none;

/* key_len of a namespace's own records (ks_attr_ns_key). */
#define NS_SELF_LEN 0xffffffffu
/* The key pointer that marks a namespace's own records: its address is
 * the mark, not its contents. */
static const char ns_self[1];

void ks_attr_ns_key(struct ks_key *k, const char *ns, size_t n)
{
	k->ns = ns;
	k->nslen = n;
	k->key = ns_self;
	k->klen = 0;
	k->attr = NULL;
	k->snap = NULL;
}

bool ks_attr_is_ns_key(const struct ks_key *k)
{
	return k->key == ns_self;
}

/* ---- Record keys and values ---------------------------------------- */

/* "@" | ns_len | ns | key_len u32 | key: every record of k starts so. */
static int rec_prefix(struct buf *out, const struct ks_key *k)
{
	bool self = ks_attr_is_ns_key(k);
	if (k->nslen < 1 || k->nslen > ENC_MAX_NS || k->klen >= NS_SELF_LEN)
		return -EINVAL;
	int rc = enc_ns_key(out, RES_NS, RES_NSLEN, NULL, 0, false);
	if (!rc)
		rc = buf_add_u8(out, REC_TAG);
	if (!rc)
		rc = buf_add_u8(out, (uint8_t)k->nslen);
	if (!rc)
		rc = buf_add(out, k->ns, k->nslen);
	if (!rc)
		rc = buf_add_be32(out, self ? NS_SELF_LEN : (uint32_t)k->klen);
	if (!rc && !self)
		rc = buf_add(out, k->key, k->klen);
	return rc;
}

/* The record `part` of k (an entry part: of `entry` in `version`). */
static int rec_key(struct buf *out, const struct ks_key *k, char part, uint64_t version,
		   const char *entry, size_t elen)
{
	buf_reset(out);
	int rc = rec_prefix(out, k);
	if (!rc)
		rc = buf_add_u8(out, (uint8_t)part);
	if (!rc && (part == PART_ENTRY_TIMES || part == PART_ENTRY_ATTRS)) {
		rc = buf_add_be64(out, version);
		if (!rc)
			rc = buf_add(out, entry, elen);
	}
	return rc;
}

/* The v1 string header every reserved record starts with. */
static int rec_value_start(struct buf *out)
{
	struct enc_meta m = {.type = KV_TYPE_STRING, .v1 = true};
	buf_reset(out);
	return enc_meta_encode(out, &m);
}

/* Read a record: 0 with payload in *p (pointing into raw), -ENOENT. */
static int rec_get(struct keyspace *ks, const struct buf *key, struct buf *raw, const char **p,
		   size_t *n)
{
	struct enc_meta m;
	int rc = store_get(ks_store(ks), STORE_CF_METADATA, key->data, key->len, raw);
	if (rc)
		return rc;
	if (enc_meta_decode(raw->data, raw->len, &m) || m.type != KV_TYPE_STRING ||
	    enc_meta_is_expired(&m, now_ms()))
		return -ENOENT;
	*p = (const char *)m.tail;
	*n = m.tail_len;
	return 0;
}

static void ts_now(struct timespec *ts)
{
	clock_gettime(CLOCK_REALTIME, ts);
}

static int add_ts(struct buf *out, const struct timespec *ts)
{
	int rc = buf_add_be64(out, (uint64_t)(int64_t)ts->tv_sec);
	return rc ? rc : buf_add_be32(out, (uint32_t)ts->tv_nsec);
}

static void get_ts(const char *p, struct timespec *ts)
{
	ts->tv_sec = (time_t)(int64_t)get_be64(p);
	uint32_t ns = get_be32(p + 8);
	ts->tv_nsec = ns < 1000000000u ? (long)ns : 0;
}

static int times_value(struct buf *out, uint64_t ver, const struct timespec *mt,
		       const struct timespec *at, const struct timespec *ct)
{
	int rc = rec_value_start(out);
	if (!rc)
		rc = buf_add_be64(out, ver);
	if (!rc)
		rc = add_ts(out, mt);
	if (!rc)
		rc = add_ts(out, at);
	if (!rc)
		rc = add_ts(out, ct);
	return rc;
}

uint64_t ks_attr_record_version(const void *v, size_t vn)
{
	struct enc_meta m;
	if (enc_meta_decode(v, vn, &m) || m.type != KV_TYPE_STRING || m.tail_len < 8)
		return 0;
	return get_be64(m.tail);
}

/* A key record written for another version of the key is not its own. */
static bool ver_ok(const char *p, size_t n, uint64_t version)
{
	uint64_t v = n >= 8 ? get_be64(p) : 0;
	return v == 0 || v == version;
}

/* ---- The attrs payload --------------------------------------------- */

struct attrs {
	uint64_t ver;
	unsigned has;
	uint32_t mode, uid, gid;
	const char *x; /* the xattr list, borrowed */
	size_t xn;
};

static int attrs_decode(const char *p, size_t n, struct attrs *a)
{
	memset(a, 0, sizeof(*a));
	if (n < ATTRS_HDR)
		return -EUCLEAN;
	a->ver = get_be64(p);
	a->has = (uint8_t)p[8];
	a->mode = get_be32(p + 9);
	a->uid = get_be32(p + 13);
	a->gid = get_be32(p + 17);
	a->x = p + ATTRS_HDR;
	a->xn = n - ATTRS_HDR;
	return 0;
}

/* Step through an xattr list: 1 with one name/value, 0 at the end,
 * -EUCLEAN when malformed. *pos advances. */
static int xattr_next(const char *x, size_t xn, size_t *pos, const char **name, size_t *nlen,
		      const char **val, size_t *vlen)
{
	size_t i = *pos;
	if (i >= xn)
		return 0;
	size_t nl = (uint8_t)x[i];
	if (i + 1 + nl + 4 > xn)
		return -EUCLEAN;
	size_t vl = get_be32(x + i + 1 + nl);
	if (i + 1 + nl + 4 + vl > xn)
		return -EUCLEAN;
	*name = x + i + 1;
	*nlen = nl;
	*val = x + i + 1 + nl + 4;
	*vlen = vl;
	*pos = i + 1 + nl + 4 + vl;
	return 1;
}

static int attrs_value_start(struct buf *out, const struct attrs *a)
{
	int rc = rec_value_start(out);
	if (!rc)
		rc = buf_add_be64(out, a->ver);
	if (!rc)
		rc = buf_add_u8(out, (uint8_t)a->has);
	if (!rc)
		rc = buf_add_be32(out, a->mode);
	if (!rc)
		rc = buf_add_be32(out, a->uid);
	if (!rc)
		rc = buf_add_be32(out, a->gid);
	return rc;
}

/* ---- Reading ------------------------------------------------------- */

/* The key and part of a record for (k, entry): key parts without one. */
static int part_key(struct buf *out, const struct ks_key *k, bool times, uint64_t version,
		    const char *entry)
{
	char part = entry ? (times ? PART_ENTRY_TIMES : PART_ENTRY_ATTRS)
			  : (times ? PART_KEY_TIMES : PART_KEY_ATTRS);
	return rec_key(out, k, part, version, entry, 0);
}

static int obj_key(struct buf *out, const struct ks_key *k, bool times, uint64_t version,
		   const char *entry, size_t elen)
{
	int rc = part_key(out, k, times, version, entry);
	if (!rc && entry)
		rc = buf_add(out, entry, elen);
	return rc;
}

/* Read the attrs record of an object: 0 (found, *a set, borrowing raw),
 * -ENOENT, or an errno. */
static int attrs_read(struct keyspace *ks, const struct ks_key *k, uint64_t version,
		      const char *entry, size_t elen, struct buf *raw, struct attrs *a)
{
	struct buf key = BUF_INIT;
	const char *p;
	size_t n;
	int rc = obj_key(&key, k, false, version, entry, elen);
	if (!rc)
		rc = rec_get(ks, &key, raw, &p, &n);
	if (!rc && !entry && !ver_ok(p, n, version))
		rc = -ENOENT;
	if (!rc && attrs_decode(p, n, a))
		rc = -ENOENT; /* a malformed record counts as none */
	buf_release(&key);
	return rc;
}

static int attr_get(struct keyspace *ks, const struct ks_key *k, uint64_t version,
		    const char *entry, size_t elen, struct ks_attr *out, bool times_only);

int ks_attr_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, const char *entry,
		size_t elen, struct ks_attr *out)
{
	return attr_get(ks, k, version, entry, elen, out, false);
}

int ks_attr_get_times(struct keyspace *ks, const struct ks_key *k, uint64_t version,
		      const char *entry, size_t elen, struct ks_attr *out)
{
	return attr_get(ks, k, version, entry, elen, out, true);
}

static int attr_get(struct keyspace *ks, const struct ks_key *k, uint64_t version,
		    const char *entry, size_t elen, struct ks_attr *out, bool times_only)
{
	struct buf key = BUF_INIT, raw = BUF_INIT;
	struct attrs a;
	const char *p;
	size_t n;
	memset(out, 0, sizeof(*out));
	if (entry && !version)
		return 0; /* a string or an empty collection has no entries */
	int rc = obj_key(&key, k, true, version, entry, elen);
	if (!rc)
		rc = rec_get(ks, &key, &raw, &p, &n);
	if (!rc && n >= TIMES_LEN && (entry || ver_ok(p, n, version))) {
		get_ts(p + 8, &out->mtime);
		get_ts(p + 20, &out->atime);
		get_ts(p + 32, &out->ctime);
		out->has |= KS_ATTR_HAS_TIMES;
	}
	if (rc == 0 || rc == -ENOENT)
		rc = times_only ? -ENOENT : attrs_read(ks, k, version, entry, elen, &raw, &a);
	if (rc == 0) {
		out->entry_attrs = !entry && (a.has & HAS_ENTRY_ATTRS);
		if (a.has & HAS_MODE) {
			out->has |= KS_ATTR_HAS_MODE;
			out->mode = a.mode & 07777;
		}
		if (a.has & HAS_UID) {
			out->has |= KS_ATTR_HAS_UID;
			out->uid = a.uid;
		}
		if (a.has & HAS_GID) {
			out->has |= KS_ATTR_HAS_GID;
			out->gid = a.gid;
		}
	}
	if (rc == -ENOENT)
		rc = 0;
	buf_release(&key);
	buf_release(&raw);
	return rc;
}

int ks_xattr_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, const char *entry,
		 size_t elen, const char *name, size_t nlen, struct buf *out)
{
	struct buf raw = BUF_INIT;
	struct attrs a;
	if (entry && !version)
		return -ENODATA;
	int rc = attrs_read(ks, k, version, entry, elen, &raw, &a);
	if (rc == -ENOENT)
		rc = -ENODATA;
	if (!rc) {
		size_t pos = 0, nl, vl;
		const char *nm, *v;
		rc = -ENODATA;
		while (xattr_next(a.x, a.xn, &pos, &nm, &nl, &v, &vl) == 1) {
			if (nl == nlen && memcmp(nm, name, nl) == 0) {
				rc = buf_set(out, v, vl);
				break;
			}
		}
	}
	buf_release(&raw);
	return rc;
}

int ks_xattr_list(struct keyspace *ks, const struct ks_key *k, uint64_t version, const char *entry,
		  size_t elen, struct buf *out)
{
	struct buf raw = BUF_INIT;
	struct attrs a;
	if (entry && !version)
		return 0;
	int rc = attrs_read(ks, k, version, entry, elen, &raw, &a);
	if (rc == -ENOENT)
		rc = 0;
	else if (!rc) {
		size_t pos = 0, nl, vl;
		const char *nm, *v;
		while (!rc && xattr_next(a.x, a.xn, &pos, &nm, &nl, &v, &vl) == 1) {
			rc = buf_add(out, nm, nl);
			if (!rc)
				rc = buf_add_u8(out, 0);
		}
	}
	buf_release(&raw);
	return rc;
}

/* ---- Writing: setattr and xattrs ----------------------------------- */

/* Under k's lock: the key's version now, -ENOENT if it is absent. */
static int locked_version(struct keyspace *ks, const struct ks_key *k, const char *entry,
			  uint64_t *version)
{
	struct ks_info info;
	if (ks_attr_is_ns_key(k)) {
		/* A namespace: no version, no entries. */
		int rc = entry ? -ENOENT : ks_ns_exists(ks, k->ns, k->nslen);
		*version = 0;
		return rc == 1 ? 0 : (rc ? rc : -ENOENT);
	}
	int rc = ks_lookup(ks, k, &info);
	if (rc)
		return rc;
	if (entry && !info.version)
		return -ENOENT;
	*version = info.version;
	return 0;
}

/* Set HAS_ENTRY_ATTRS in k's own attrs record (made if missing), in b. */
static int mark_entry_attrs(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			    uint64_t version)
{
	struct buf raw = BUF_INIT, key = BUF_INIT, val = BUF_INIT;
	struct attrs a;
	int rc = attrs_read(ks, k, version, NULL, 0, &raw, &a);
	if (rc == 0 && (a.has & HAS_ENTRY_ATTRS))
		goto out;
	if (rc == -ENOENT) {
		memset(&a, 0, sizeof(a));
		a.ver = version;
		rc = 0;
	}
	if (rc)
		goto out;
	a.has |= HAS_ENTRY_ATTRS;
	rc = attrs_value_start(&val, &a);
	if (!rc && a.xn)
		rc = buf_add(&val, a.x, a.xn);
	if (!rc)
		rc = obj_key(&key, k, false, 0, NULL, 0);
	if (!rc)
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
out:
	buf_release(&raw);
	buf_release(&key);
	buf_release(&val);
	return rc;
}

/* The attrs record of an object with one change applied: the caller's
 * `edit` rewrites the xattr list. */
static int attrs_update(struct keyspace *ks, const struct ks_key *k, const char *entry, size_t elen,
			const struct ks_attr_set *s, const char *xname, size_t xnlen,
			const void *xval, size_t xvlen, int xflags, bool xattr)
{
	struct buf raw = BUF_INIT, key = BUF_INIT, val = BUF_INIT;
	struct store_batch *b = store_batch_new(ks_store(ks));
	struct attrs a;
	uint64_t version = 0;
	bool found = false;
	int rc;

	if (!b)
		return -ENOMEM;
	ks_lock_pair(ks, k, NULL);
	rc = locked_version(ks, k, entry, &version);
	if (rc)
		goto out;
	rc = attrs_read(ks, k, version, entry, elen, &raw, &a);
	if (rc == -ENOENT) {
		memset(&a, 0, sizeof(a));
		rc = 0;
	} else if (rc) {
		goto out;
	}
	a.ver = entry ? 0 : version;
	if (s && (s->mask & KS_ATTR_SET_MODE)) {
		a.has |= HAS_MODE;
		a.mode = s->mode & 07777;
	}
	if (s && (s->mask & KS_ATTR_SET_UID)) {
		a.has |= HAS_UID;
		a.uid = s->uid;
	}
	if (s && (s->mask & KS_ATTR_SET_GID)) {
		a.has |= HAS_GID;
		a.gid = s->gid;
	}
	rc = attrs_value_start(&val, &a);
	/* The xattr list: copied, without xname, which is added at the end. */
	size_t pos = 0, nl, vl, total = 0;
	const char *nm, *v;
	while (!rc && (rc = xattr_next(a.x, a.xn, &pos, &nm, &nl, &v, &vl)) == 1) {
		rc = 0;
		if (xattr && nl == xnlen && memcmp(nm, xname, nl) == 0) {
			found = true;
			continue;
		}
		total += nl + vl;
		if (!(rc = buf_add_u8(&val, (uint8_t)nl)) && !(rc = buf_add(&val, nm, nl)) &&
		    !(rc = buf_add_be32(&val, (uint32_t)vl)))
			rc = buf_add(&val, v, vl);
	}
	if (rc == -EUCLEAN) {
		ks_corrupt(k, "an extended attributes record that does not decode: rewritten");
		rc = 0;
	}
	if (rc)
		goto out;
	if (xattr) {
		if ((xflags & KS_XATTR_CREATE) && found) {
			rc = -EEXIST;
			goto out;
		}
		if ((xflags & KS_XATTR_REPLACE || !xval) && !found) {
			rc = -ENODATA;
			goto out;
		}
		if (xval) {
			if (total + xnlen + xvlen > KS_XATTR_SIZE_MAX) {
				LOG_ERR("%.*s: extended attributes of one file are limited to %d "
					"bytes in all",
					(int)k->klen, k->key, KS_XATTR_SIZE_MAX);
				rc = -ENOSPC;
				goto out;
			}
			if (!(rc = buf_add_u8(&val, (uint8_t)xnlen)) &&
			    !(rc = buf_add(&val, xname, xnlen)) &&
			    !(rc = buf_add_be32(&val, (uint32_t)xvlen)))
				rc = buf_add(&val, xval, xvlen);
		}
	}
	if (!rc)
		rc = obj_key(&key, k, false, version, entry, elen);
	if (rc)
		goto out;
	store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
	if (entry)
		rc = mark_entry_attrs(ks, b, k, version);
	if (rc)
		goto out;
	if (s && (s->mask & KS_ATTR_SET_TIMES)) {
		struct timespec now;
		ts_now(&now);
		rc = obj_key(&key, k, true, version, entry, elen);
		if (!rc)
			rc = times_value(&val, entry ? 0 : version, &s->mtime, &s->atime, &now);
		if (rc)
			goto out;
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
	}
	/* Attributes only: nothing else to add (no ks_txn, which sits above
	 * this module and applies attribute changes itself). */
	rc = store_write(ks_store(ks), b, false);
out:
	ks_unlock_pair(ks, k, NULL);
	store_batch_free(b);
	buf_release(&raw);
	buf_release(&key);
	buf_release(&val);
	return rc;
}

int ks_attr_set(struct keyspace *ks, const struct ks_key *k, const char *entry, size_t elen,
		const struct ks_attr_set *s)
{
	return attrs_update(ks, k, entry, elen, s, NULL, 0, NULL, 0, 0, false);
}

int ks_xattr_change(struct keyspace *ks, const struct ks_key *k, const char *entry, size_t elen,
		    const char *name, size_t nlen, const void *value, size_t vlen, int flags,
		    const struct ks_attr_set *times)
{
	struct ks_attr_set t = {0};
	if (nlen == 0 || nlen > KS_XATTR_NAME_MAX)
		return -ERANGE;
	if (value && vlen > KS_XATTR_SIZE_MAX)
		return -E2BIG;
	if (times && (times->mask & KS_ATTR_SET_TIMES)) {
		t.mask = KS_ATTR_SET_TIMES; /* never a mode or owner here */
		t.mtime = times->mtime;
		t.atime = times->atime;
	}
	return attrs_update(ks, k, entry, elen, &t, name, nlen, value, vlen, flags, true);
}

int ks_xattr_set(struct keyspace *ks, const struct ks_key *k, const char *entry, size_t elen,
		 const char *name, size_t nlen, const void *value, size_t vlen, int flags)
{
	return ks_xattr_change(ks, k, entry, elen, name, nlen, value, vlen, flags, NULL);
}

/* ---- Records in other batches (keyspace.c) ------------------------- */

static int put_times_now(struct store_batch *b, const struct buf *key, uint64_t ver)
{
	struct buf val = BUF_INIT;
	struct timespec now;
	ts_now(&now);
	int rc = times_value(&val, ver, &now, &now, &now);
	if (!rc)
		store_batch_put(b, STORE_CF_METADATA, key->data, key->len, val.data, val.len);
	buf_release(&val);
	return rc;
}

/* Move one record from `fk` to `tk` (or delete tk if there is none),
 * rewriting its `ver` to `ver` (times: ctime now). */
static int move_record(struct keyspace *ks, struct store_batch *b, const struct buf *fk,
		       const struct buf *tk, bool times, uint64_t ver, bool *moved)
{
	struct buf raw = BUF_INIT, val = BUF_INIT;
	const char *p;
	size_t n;
	int rc = rec_get(ks, fk, &raw, &p, &n);
	if (rc == -ENOENT) {
		store_batch_delete(b, STORE_CF_METADATA, tk->data, tk->len);
		rc = 0;
		goto out;
	}
	if (rc)
		goto out;
	rc = rec_value_start(&val);
	if (!rc)
		rc = buf_add_be64(&val, ver);
	if (!rc && n > 8)
		rc = buf_add(&val, p + 8, n - 8);
	if (!rc && times && val.len >= 9 + TIMES_LEN) {
		struct timespec now;
		ts_now(&now);
		buf_resize(&val, 9 + 8 + 24);
		rc = add_ts(&val, &now);
	}
	if (rc)
		goto out;
	store_batch_delete(b, STORE_CF_METADATA, fk->data, fk->len);
	store_batch_put(b, STORE_CF_METADATA, tk->data, tk->len, val.data, val.len);
	if (moved)
		*moved = true;
out:
	buf_release(&raw);
	buf_release(&val);
	return rc;
}

/* Delete every entry record of `part` in `version` of k (a range). */
static int drop_entries(struct store_batch *b, const struct ks_key *k, char part, uint64_t version)
{
	struct buf lo = BUF_INIT, hi = BUF_INIT;
	int rc = rec_key(&lo, k, part, version, NULL, 0);
	if (!rc)
		rc = buf_set(&hi, lo.data, lo.len);
	if (!rc && enc_prefix_successor(&hi))
		store_batch_delete_range(b, STORE_CF_METADATA, lo.data, lo.len, hi.data, hi.len);
	buf_release(&lo);
	buf_release(&hi);
	return rc;
}

/* The attributes record of an object just created (KS_ATTR_CREATE). */
static int put_created(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
		       uint64_t version, bool live, const struct ks_attr_change *c)
{
	struct buf key = BUF_INIT, val = BUF_INIT;
	struct attrs a;
	memset(&a, 0, sizeof(a));
	/* As ks_attr_set writes it: an entry's record without a version
	 * of its own, a key's with the version it is made with. */
	a.ver = c->entry || !live ? 0 : version;
	if (c->init & KS_ATTR_HAS_MODE) {
		a.has |= HAS_MODE;
		a.mode = c->mode & 07777;
	}
	if (c->init & KS_ATTR_HAS_UID) {
		a.has |= HAS_UID;
		a.uid = c->uid;
	}
	if (c->init & KS_ATTR_HAS_GID) {
		a.has |= HAS_GID;
		a.gid = c->gid;
	}
	int rc = attrs_value_start(&val, &a);
	if (!rc)
		rc = obj_key(&key, k, false, version, c->entry, c->elen);
	if (!rc)
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
	/* Listings of the key must now read entry attributes. */
	if (!rc && c->entry)
		rc = mark_entry_attrs(ks, b, k, version);
	buf_release(&key);
	buf_release(&val);
	return rc;
}

/* KS_ATTR_CTIME: k's times record with ctime now, mtime and atime kept
 * (base when k has none of its version). */
static int put_ctime_now(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			 uint64_t version, const struct timespec *base)
{
	struct buf key = BUF_INIT, raw = BUF_INIT, val = BUF_INIT;
	struct timespec mt = *base, at = *base, now;
	const char *p;
	size_t n;
	int rc = obj_key(&key, k, true, 0, NULL, 0);
	if (!rc)
		rc = rec_get(ks, &key, &raw, &p, &n);
	if (!rc && n >= TIMES_LEN && ver_ok(p, n, version)) {
		get_ts(p + 8, &mt);
		get_ts(p + 20, &at);
	}
	if (rc == -ENOENT || !rc) {
		ts_now(&now);
		rc = times_value(&val, version, &mt, &at, &now);
	}
	if (!rc)
		store_batch_put(b, STORE_CF_METADATA, key.data, key.len, val.data, val.len);
	buf_release(&key);
	buf_release(&raw);
	buf_release(&val);
	return rc;
}

int ks_attr_batch_ns_touch(struct store_batch *b, const char *ns, size_t n)
{
	struct ks_key k;
	struct buf key = BUF_INIT;
	ks_attr_ns_key(&k, ns, n);
	int rc = obj_key(&key, &k, true, 0, NULL, 0);
	if (!rc)
		rc = put_times_now(b, &key, 0);
	buf_release(&key);
	return rc;
}

int ks_attr_batch_change(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			 uint64_t version, bool live, const struct ks_attr_change *c)
{
	struct buf key = BUF_INIT;
	int rc = 0;

	if (c->flags & KS_ATTR_RENUMBER && version) {
		rc = drop_entries(b, k, PART_ENTRY_TIMES, version);
		if (!rc)
			rc = drop_entries(b, k, PART_ENTRY_ATTRS, version);
	}
	if (!rc && (c->flags & KS_ATTR_CTIME) && !(c->flags & KS_ATTR_TOUCH) && live)
		rc = put_ctime_now(ks, b, k, version, &c->base);
	if (!rc && c->flags & KS_ATTR_TOUCH) {
		rc = obj_key(&key, k, true, 0, NULL, 0);
		if (!rc)
			rc = put_times_now(b, &key, live ? version : 0);
		if (!rc && c->entry && live && version &&
		    !(c->flags & (KS_ATTR_MOVE | KS_ATTR_DROP))) {
			rc = obj_key(&key, k, true, version, c->entry, c->elen);
			if (!rc)
				rc = put_times_now(b, &key, 0);
		}
	}
	/* An entry's records need the key's version: a created entry of a
	 * key that is not live (nothing was stored) gets none. */
	if (!rc && c->flags & KS_ATTR_CREATE && c->init && (!c->entry || (live && version)))
		rc = put_created(ks, b, k, version, live, c);
	if (!rc && c->flags & KS_ATTR_DROP && c->entry && version) {
		for (int t = 0; t < 2 && !rc; t++) {
			rc = obj_key(&key, k, t == 0, version, c->entry, c->elen);
			if (!rc)
				store_batch_delete(b, STORE_CF_METADATA, key.data, key.len);
		}
	}
	buf_release(&key);
	return rc;
}

int ks_attr_batch_move(struct keyspace *ks, struct store_batch *b, const struct ks_key *from,
		       uint64_t from_version, const char *fentry, size_t flen,
		       const struct ks_key *to, uint64_t to_version, const char *tentry,
		       size_t tlen)
{
	struct buf fk = BUF_INIT, tk = BUF_INIT;
	bool moved = false;
	int rc = 0;
	if (!from_version || !to_version)
		return 0;
	for (int t = 0; t < 2 && !rc; t++) {
		rc = obj_key(&fk, from, t == 0, from_version, fentry, flen);
		if (!rc)
			rc = obj_key(&tk, to, t == 0, to_version, tentry, tlen);
		if (!rc)
			rc = move_record(ks, b, &fk, &tk, t == 0, 0, t == 0 ? NULL : &moved);
	}
	/* The target key's listings must now look at entry attrs. */
	if (!rc && moved)
		rc = mark_entry_attrs(ks, b, to, to_version);
	buf_release(&fk);
	buf_release(&tk);
	return rc;
}

int ks_attr_batch_restamp(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			  uint64_t from, uint64_t to)
{
	struct buf key = BUF_INIT, raw = BUF_INIT;
	const char *p;
	size_t n;
	int rc = 0;
	for (int t = 0; t < 2 && !rc; t++) {
		rc = obj_key(&key, k, t == 0, 0, NULL, 0);
		if (!rc)
			rc = rec_get(ks, &key, &raw, &p, &n);
		if (rc == -ENOENT) {
			rc = 0;
			continue;
		}
		if (!rc && n >= 8 && get_be64(p) == from) {
			/* The version sits right after the 9-byte header. */
			put_be64(raw.data + (p - raw.data), to);
			store_batch_put(b, STORE_CF_METADATA, key.data, key.len, raw.data, raw.len);
		}
	}
	buf_release(&key);
	buf_release(&raw);
	return rc;
}

int ks_attr_batch_drop_key(struct keyspace *ks, struct store_batch *b, const struct ks_key *k)
{
	(void)ks;
	struct buf key = BUF_INIT;
	int rc = 0;
	for (int t = 0; t < 2 && !rc; t++) {
		rc = obj_key(&key, k, t == 0, 0, NULL, 0);
		if (!rc)
			store_batch_delete(b, STORE_CF_METADATA, key.data, key.len);
	}
	buf_release(&key);
	return rc;
}

int ks_attr_batch_rename(struct keyspace *ks, struct store_batch *b, const struct ks_key *from,
			 const struct ks_key *to, uint64_t version)
{
	struct buf fk = BUF_INIT, tk = BUF_INIT, hi = BUF_INIT;
	struct store_iter *it = NULL;
	int rc = 0;

	for (int t = 0; t < 2 && !rc; t++) {
		rc = obj_key(&fk, from, t == 0, 0, NULL, 0);
		if (!rc)
			rc = obj_key(&tk, to, t == 0, 0, NULL, 0);
		if (!rc)
			rc = move_record(ks, b, &fk, &tk, false, version, NULL);
	}
	/* The target's entry records are of another key: garbage already
	 * (another version), or of the same version only if to == from. */
	for (int t = 0; t < 2 && !rc && version; t++) {
		char part = t == 0 ? PART_ENTRY_TIMES : PART_ENTRY_ATTRS;
		rc = rec_key(&fk, from, part, version, NULL, 0);
		if (!rc)
			rc = buf_set(&hi, fk.data, fk.len);
		if (rc || !enc_prefix_successor(&hi))
			break;
		it = store_iter_new(ks_store(ks), STORE_CF_METADATA, fk.data, fk.len, hi.data,
				    hi.len);
		if (!it) {
			rc = -ENOMEM;
			break;
		}
		size_t plen = fk.len;
		for (store_iter_seek(it, fk.data, fk.len); store_iter_valid(it);
		     store_iter_next(it)) {
			size_t kn, vn;
			const char *key = store_iter_key(it, &kn);
			const void *v = store_iter_value(it, &vn);
			rc = rec_key(&tk, to, part, version, key + plen, kn - plen);
			if (rc)
				break;
			store_batch_put(b, STORE_CF_METADATA, tk.data, tk.len, v, vn);
		}
		if (!rc)
			rc = store_iter_status(it);
		store_iter_free(it);
		it = NULL;
		if (!rc)
			store_batch_delete_range(b, STORE_CF_METADATA, fk.data, fk.len, hi.data,
						 hi.len);
	}
	buf_release(&fk);
	buf_release(&tk);
	buf_release(&hi);
	return rc;
}

/* ---- Garbage ------------------------------------------------------- */

bool ks_attr_record_parse(const void *mk, size_t mkn, struct ks_key *k, bool *is_entry,
			  uint64_t *entry_version)
{
	const uint8_t *p = mk;
	size_t pre = 1 + RES_NSLEN;
	if (mkn < pre + 2 || p[0] != RES_NSLEN || memcmp(p + 1, RES_NS, RES_NSLEN) != 0 ||
	    p[pre] != REC_TAG)
		return false;
	size_t i = pre + 1;
	size_t nslen = p[i++];
	if (nslen < 1 || i + nslen + 4 > mkn)
		return false;
	const uint8_t *ns = p + i;
	i += nslen;
	size_t klen = get_be32(p + i);
	i += 4;
	if (i + klen + 1 > mkn)
		return false;
	memset(k, 0, sizeof(*k));
	k->ns = (const char *)ns;
	k->nslen = nslen;
	k->key = (const char *)p + i;
	k->klen = klen;
	i += klen;
	char part = (char)p[i++];
	if (part == PART_KEY_TIMES || part == PART_KEY_ATTRS) {
		*is_entry = false;
		*entry_version = 0;
		return i == mkn;
	}
	if ((part != PART_ENTRY_TIMES && part != PART_ENTRY_ATTRS) || i + 8 > mkn)
		return false;
	*is_entry = true;
	*entry_version = get_be64(p + i);
	return true;
}
