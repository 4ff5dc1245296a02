/*
 * ks_open: opening and closing the keyspace: the store, with Kvrocks's
 * compaction filters (src/keyspace/ks_gc.c) installed, the lock stripes and the
 * version counter.
 * Layer: keyspace (keyspace.h, ks_int.h, ks_gc.h, store, util).
 */
#include "keyspace/keyspace.h"

#include "keyspace/ks_gc.h"
#include "keyspace/ks_int.h"

#include <errno.h>
#include <stdlib.h>
#include <time.h>

int ks_open(const char *dir, const struct ks_options *opt, struct keyspace **out)
{
	struct store_options so = {0};
	struct store_gc gc;
	struct keyspace *ks;
	int rc;

	*out = NULL;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return -ENOMEM;
	if (opt) {
		so.read_only = opt->read_only;
		so.block_cache_bytes = opt->block_cache_bytes;
		so.follow = opt->follow;
		so.follow_dir = opt->follow_dir;
		ks->cluster = opt->cluster;
	}
	/* Kvrocks's compaction filters (src/keyspace/ks_gc.c); the store installs
	 * nothing on a read-only database. They call back into ks, which
	 * ks_close frees only after store_close has stopped them. */
	ks_gc_hook(ks, &gc);
	so.gc = &gc;
	rc = store_open(dir, &so, &ks->st);
	if (rc) {
		free(ks);
		return rc;
	}
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* ks_wait's deadlines */
	for (int i = 0; i < KS_LOCKS; i++) {
		pthread_mutex_init(&ks->locks[i], NULL);
		pthread_cond_init(&ks->changed[i], &ca);
	}
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&ks->tsindex_lock, NULL);
	atomic_init(&ks->tsindex, 0);
	/* As Kvrocks: the counter starts at rand() seeded with the time, so a
	 * restarted process with a clock that went back is unlikely to reuse
	 * a version. */
	srand((unsigned)time(NULL));
	atomic_init(&ks->version_counter, (uint64_t)rand());
	*out = ks;
	return 0;
}

void ks_close(struct keyspace *ks)
{
	if (!ks)
		return;
	store_close(ks->st);
	for (int i = 0; i < KS_LOCKS; i++) {
		pthread_mutex_destroy(&ks->locks[i]);
		pthread_cond_destroy(&ks->changed[i]);
	}
	pthread_mutex_destroy(&ks->tsindex_lock);
	free(ks);
}

bool ks_is_follower(const struct keyspace *ks)
{
	return store_is_follower(ks->st);
}

int ks_catch_up(struct keyspace *ks, bool *changed)
{
	return store_catch_up(ks->st, changed);
}

int ks_checkpoint(struct keyspace *ks, const char *dest)
{
	/* Every mutation is one batch, and a checkpoint is one point of the
	 * WAL: no key is ever seen half-written. */
	return store_checkpoint(ks->st, dest);
}
