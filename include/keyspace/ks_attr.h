/*
 * ks_attr: what a file system keeps beside the data. Times, mode, owner
 * and user.* extended attributes of keys and of the entries of a key (a
 * hash field, a list position, a member, ...), stored as ordinary Kvrocks
 * string keys in the reserved namespace (records "@", see src/keyspace/ks_attr.c)
 * and written in the same batch as the change they describe.
 * Layer: keyspace (store, encoding, util, keyspace.h).
 *
 * Same batch, without code in the type modules: a caller that changes
 * content through a type verb points the key it passes at a struct
 * ks_attr_change (ks_key.attr). The verb's write transaction knows the
 * key's version as it read and wrote it, and its commit appends the
 * change's records to the verb's batch (ks_txn.h). Every type, present
 * or future, gets this for free.
 */
#ifndef KVFS_KS_ATTR_H
#define KVFS_KS_ATTR_H

#include <time.h>

#include "keyspace/keyspace.h"

/* What a content change does to the attributes (ks_key.attr). */
struct ks_attr_change {
	unsigned flags;
	const char *entry; /* the entry changed (NULL: only the key) */
	size_t elen;
	/* KS_ATTR_MOVE: the entry was renamed from (from, fentry). Pass a move
	 * to the one verb that renames: its batch moves the records. */
	const struct ks_key *from;
	const char *fentry;
	size_t flen;
	/* KS_ATTR_CREATE: what the new object's attributes record holds
	 * (KS_ATTR_HAS_MODE | KS_ATTR_HAS_UID | KS_ATTR_HAS_GID). */
	unsigned init;
	uint32_t mode, uid, gid;
	/* KS_ATTR_CTIME: the mtime (and atime) the key shows while it has no
	 * stored times (its creation, or the mount's), kept as they are. */
	struct timespec base;
};
/* flags 0 (ks_attr_none): the write changes no times. A verb's key
 * passed with attr NULL whose transaction changed it gets KS_ATTR_TOUCH
 * (ks_txn.h); a conversion or a parameter, which change no content, pass
 * &ks_attr_none. */
extern const struct ks_attr_change ks_attr_none;
/* Content changed: the key's mtime, and the entry's if one is named,
 * become now (atime and ctime too). */
#define KS_ATTR_TOUCH 1u
/* The entry was removed: its records go. */
#define KS_ATTR_DROP 2u
/* The entry was renamed from (from, fentry): its records move, replacing
 * the target's. */
#define KS_ATTR_MOVE 4u
/* The entry names of the key changed meaning (a list renumbered): every
 * entry record of the key goes (one range deletion). */
#define KS_ATTR_RENUMBER 8u
/* The key (or the entry named) was created now with the mode and owner of
 * `init`: its attributes record is written with them (blindly: a new
 * object has none). A verb that finds the object already there writes
 * nothing, so passing this to a create that may open is safe. */
#define KS_ATTR_CREATE 16u
/* The key's attributes changed, not its content (an expiry set or
 * removed): its ctime becomes now, its mtime and atime stay (`base` when
 * none are stored). Only for a key that is live after the batch. */
#define KS_ATTR_CTIME 32u

/* The stored attributes of a key or an entry. */
#define KS_ATTR_HAS_TIMES 1u
#define KS_ATTR_HAS_MODE  2u
#define KS_ATTR_HAS_UID	  4u
#define KS_ATTR_HAS_GID	  8u
struct ks_attr {
	unsigned has; /* KS_ATTR_HAS_*: what is stored (the rest: defaults) */
	struct timespec mtime, atime, ctime;
	uint32_t mode; /* permission bits only (07777) */
	uint32_t uid, gid;
	bool entry_attrs; /* a key's: some entry may have mode, owner or xattrs */
};

/*
 * Read the attributes of key k (entry NULL) or of one of its entries.
 * `version` is the key's current version (ks_info.version: 0 for strings
 * and empty collections). Records of another version are not seen. 0 with
 * out->has = what is stored (0: nothing), or -EIO. No lock; two point
 * reads, answered by the Bloom filter when nothing is stored.
 */
int ks_attr_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, const char *entry,
		size_t elen, struct ks_attr *out);

/* The same, reading the times record only: for an entry of a key whose
 * own record says no entry has attrs (ks_attr.entry_attrs). */
int ks_attr_get_times(struct keyspace *ks, const struct ks_key *k, uint64_t version,
		      const char *entry, size_t elen, struct ks_attr *out);

/* setattr: mask of KS_ATTR_SET_*; times are stored together (both given). */
#define KS_ATTR_SET_MODE  1u
#define KS_ATTR_SET_UID	  2u
#define KS_ATTR_SET_GID	  4u
#define KS_ATTR_SET_TIMES 8u
struct ks_attr_set {
	unsigned mask;
	uint32_t mode, uid, gid;
	struct timespec mtime, atime;
};
/* Store what s sets, for key k or one of its entries, in one batch under
 * the key's lock. 0, -ENOENT (no such key), -EROFS, -EIO. */
int ks_attr_set(struct keyspace *ks, const struct ks_key *k, const char *entry, size_t elen,
		const struct ks_attr_set *s);

/*
 * user.* extended attributes of a key or an entry (names are whole, e.g.
 * "user.note"; the caller checks the namespace). Limits: a name of at
 * most KS_XATTR_NAME_MAX bytes, a value of at most KS_XATTR_SIZE_MAX, all
 * of one object's together at most KS_XATTR_SIZE_MAX.
 */
#define KS_XATTR_NAME_MAX 255
#define KS_XATTR_SIZE_MAX 65536
#define KS_XATTR_CREATE	  1 /* fail with -EEXIST if it exists */
#define KS_XATTR_REPLACE  2 /* fail with -ENODATA if it does not */
/* The value into out. 0, -ENODATA, -EIO. */
int ks_xattr_get(struct keyspace *ks, const struct ks_key *k, uint64_t version, const char *entry,
		 size_t elen, const char *name, size_t nlen, struct buf *out);
/* Append every stored name, each followed by a NUL, to out. 0, -EIO. */
int ks_xattr_list(struct keyspace *ks, const struct ks_key *k, uint64_t version, const char *entry,
		  size_t elen, struct buf *out);
/* Set (value) or remove (value NULL) one. 0, -EEXIST, -ENODATA, -ERANGE
 * (name too long), -E2BIG (value too large), -ENOSPC (all together too
 * large), -ENOENT (no such key), -EROFS, -EIO. One batch, key locked. */
int ks_xattr_set(struct keyspace *ks, const struct ks_key *k, const char *entry, size_t elen,
		 const char *name, size_t nlen, const void *value, size_t vlen, int flags);
/* The same, with the times of `times` (KS_ATTR_SET_TIMES: the mtime and
 * atime the object shows) in the same batch, ctime now: as on a disk, a
 * changed extended attribute moves ctime. */
int ks_xattr_change(struct keyspace *ks, const struct ks_key *k, const char *entry, size_t elen,
		    const char *name, size_t nlen, const void *value, size_t vlen, int flags,
		    const struct ks_attr_set *times);

/*
 * A namespace's own attributes (the namespace directory's mode, owner and
 * times) are the key records of a key no user key can be: fill *k so that
 * ks_attr_get and ks_attr_set work on
 * them. k borrows ns. Version 0; a namespace has no entries here.
 */
void ks_attr_ns_key(struct ks_key *k, const char *ns, size_t n);
bool ks_attr_is_ns_key(const struct ks_key *k);

/* ---- For keyspace.c ------------------------------------------------ */

/* A key of namespace ns was created or removed: the namespace's mtime and
 * ctime become now (its times record, written blindly into b). */
int ks_attr_batch_ns_touch(struct store_batch *b, const char *ns, size_t n);

/* Append to b the records change c makes for key k, whose version is
 * `version` (as read or written under the lock) and which is live after
 * the batch or not. */
int ks_attr_batch_change(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			 uint64_t version, bool live, const struct ks_attr_change *c);
/* Move the records of entry (from, fentry) to (to, tentry), replacing
 * the target's (KS_ATTR_MOVE), each key at its version. */
int ks_attr_batch_move(struct keyspace *ks, struct store_batch *b, const struct ks_key *from,
		       uint64_t from_version, const char *fentry, size_t flen,
		       const struct ks_key *to, uint64_t to_version, const char *tentry,
		       size_t tlen);
/* The key was made again with version `to` in this batch (a conversion):
 * its key records written for `from` are written for `to`. One read per
 * record; only conversions do this. */
int ks_attr_batch_restamp(struct keyspace *ks, struct store_batch *b, const struct ks_key *k,
			  uint64_t from, uint64_t to);
/* The key is deleted (DEL, rmdir): its key records go. Entry records of
 * its version are garbage for ks_gc. */
int ks_attr_batch_drop_key(struct keyspace *ks, struct store_batch *b, const struct ks_key *k);
/* RENAME: move the key records and the entry records of `version` from
 * `from` to `to`, replacing `to`'s. */
int ks_attr_batch_rename(struct keyspace *ks, struct store_batch *b, const struct ks_key *from,
			 const struct ks_key *to, uint64_t version);

/*
 * For ks_gc: is metadata-CF key mk (of the reserved namespace) an
 * attribute record? If so, *k names the key it describes (borrowing from
 * mk), *entry_version is the version in an entry record's key and
 * *is_entry tells which. Key records carry the version in their value
 * (ks_attr_record_version).
 */
bool ks_attr_record_parse(const void *mk, size_t mkn, struct ks_key *k, bool *is_entry,
			  uint64_t *entry_version);
/* The version a record's value was written for (0: any). */
uint64_t ks_attr_record_version(const void *v, size_t vn);

#endif
