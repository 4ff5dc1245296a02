/*
 * fs: the FUSE low-level operations that map the tree onto the type
 * verbs. See docs/mapping.md for the tree and docs/architecture.md for
 * the code. Layer: fs (may include types, keyspace's generic verbs, names,
 * util, libfuse; never store or encoding).
 */
#ifndef KVFS_FS_H
#define KVFS_FS_H

#include <fuse_lowlevel.h>
#include <sys/types.h>

#include "keyspace/keyspace.h"

struct fs_options {
	const char *ns;	   /* -o ns=NAME: one namespace at the root; NULL = all */
	const char *dbdir; /* for statfs */
	double timeout;	   /* kernel entry/attr cache, seconds */
	bool read_only;
	uid_t uid;    /* -o uid=: owner of objects without a stored one */
	gid_t gid;    /* -o gid= */
	mode_t umask; /* -o umask=: permissions of objects without stored ones */
	/* Worker threads the session runs at most (1: single-threaded): half
	 * of them may wait in an action (BLPOP) at once, so the others serve
	 * the writes that end the waits. */
	unsigned threads;
	/* -o follow=MS: a follower (the keyspace is a secondary instance)
	 * that catches up every MS milliseconds; 0: not following. */
	unsigned follow_ms;
};

struct fs;

/* NULL on ENOMEM. The keyspace stays the caller's. */
struct fs *fs_new(struct keyspace *ks, const struct fs_options *opt);
void fs_free(struct fs *fs);
/* The session, for cache invalidations. */
void fs_set_session(struct fs *fs, struct fuse_session *se);

extern const struct fuse_lowlevel_ops fs_ops;

#endif
