/*
 * Temporary directories for unit tests that need a database: created with
 * mkdtemp under /tmp, removed recursively at the end.
 */
#ifndef KVFS_TMPDIR_H
#define KVFS_TMPDIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A new empty directory; free with tmpdir_remove(). NULL on failure. */
static inline char *tmpdir_new(void)
{
	char *p = strdup("/tmp/kvfs-unit-XXXXXX");
	if (p && !mkdtemp(p)) {
		perror("mkdtemp");
		free(p);
		p = NULL;
	}
	return p;
}

static inline int tmpdir_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/* Remove the directory and everything below it, and free the name. */
static inline void tmpdir_remove(char *p)
{
	if (!p)
		return;
	nftw(p, tmpdir_rm_one, 16, FTW_DEPTH | FTW_PHYS);
	free(p);
}

#endif
