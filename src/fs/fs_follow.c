/*
 * fs_follow: a follower's catch-ups (-o follow=MS). The keyspace is a
 * RocksDB secondary instance of a database another process writes (a
 * kvfs mount, a running Kvrocks); a thread catches it up every MS, and so
 * does a request (lookup, listing, getattr, open) that finds the last
 * catch-up older than MS. After a catch-up that changed something, the
 * kernel is told to drop what it keeps of the nodes it holds. Layer: fs.
 *
 * What the kernel keeps, and how each is bounded:
 *   names and attributes   entry/attr timeouts no longer than MS (main.c),
 *                          misses never cached (fs.c), and after a changed
 *                          catch-up every node the kernel holds is
 *                          re-read: gone or of another file type, its name
 *                          is invalidated, and its inode (attributes,
 *                          pages) always;
 *   pages                  no keep_cache (fs_file.c), and the inode
 *                          invalidation above;
 *   the daemon             the store's head cache is emptied by the
 *                          catch-up itself (store_catch_up); a node's
 *                          value loaded before a changed catch-up is
 *                          dropped at its next open (fs_follow_gen).
 *
 * Locks: the catch-up holds only catch_lock (taken by nothing else), the
 * re-reads take a node's lock for a moment as getattr does, and the
 * invalidations go to the notifier thread (fs_inval_send), so this
 * thread never holds a lock while the kernel may wait for a request.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

struct fs_follow {
	unsigned ms;
	pthread_t thread;
	/* One catch-up at a time; last_ms (monotonic) is when the last one
	 * ended, failing whether it failed (said once until one works). */
	pthread_mutex_t catch_lock;
	_Atomic uint64_t last_ms;
	bool failing;
	_Atomic uint64_t gen; /* catch-ups that changed something */
	/* The thread's state: a changed catch-up to invalidate, stop. */
	pthread_mutex_t lock;
	pthread_cond_t cond; /* CLOCK_MONOTONIC */
	bool inval_due, stop;
};

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Catch up if the last catch-up is at least `age` ms old (0: always). */
static void catch_up(struct fs *fs, struct fs_follow *f, uint64_t age)
{
	bool changed = false;
	pthread_mutex_lock(&f->catch_lock);
	if (age && mono_ms() - atomic_load(&f->last_ms) < age) {
		pthread_mutex_unlock(&f->catch_lock);
		return; /* another thread just did it */
	}
	int rc = ks_catch_up(fs->ks, &changed);
	if (rc && !f->failing)
		LOG_ERR("%s: catching up with the database's writer failed (%s): the mount "
			"shows the data as of the last catch-up that worked",
			fs->opt.dbdir, strerror(-rc));
	else if (!rc && f->failing)
		LOG_INFO("%s: catching up works again", fs->opt.dbdir);
	f->failing = rc != 0;
	atomic_store(&f->last_ms, mono_ms());
	if (changed)
		atomic_fetch_add(&f->gen, 1);
	pthread_mutex_unlock(&f->catch_lock);
	if (changed) {
		pthread_mutex_lock(&f->lock);
		f->inval_due = true;
		pthread_cond_signal(&f->cond);
		pthread_mutex_unlock(&f->lock);
	}
}

uint64_t fs_follow_gen(struct fs *fs)
{
	return fs->follow ? atomic_load(&fs->follow->gen) : 0;
}

void fs_follow_fresh(struct fs *fs)
{
	struct fs_follow *f = fs->follow;
	if (f && mono_ms() - atomic_load(&f->last_ms) >= f->ms)
		catch_up(fs, f, f->ms);
}

/*
 * Every node the kernel holds, re-read (NEEDSWORK: all of them, at each
 * catch-up that changed anything: the WAL records a catch-up applied
 * would say which keys changed, which the C API does not give): its name goes if it is gone or
 * is now of another file type than the kernel was told (the kernel
 * would otherwise keep a name the writer removed until its entry
 * timeout, or find a directory turned into a file); its attributes and
 * pages go in any case.
 */
static void invalidate_known(struct fs *fs)
{
	size_t n = 0;
	struct fs_node **v = fs_itable_nodes(fs->it, &n);
	struct fs_inval iv;
	fs_inval_init(&iv);
	for (size_t i = 0; v && i < n; i++) {
		struct fs_node *node = v[i];
		struct stat st;
		double timeout;
		bool entry = false;
		if (!fs_itable_is_known(fs->it, node))
			continue; /* the kernel holds nothing of it */
		if (node->kind != FS_ROOT) {
			int rc = fs_node_stat(fs, node, &st, &timeout);
			unsigned told = atomic_load(&node->kmode);
			entry = rc == -ENOENT ||
				(!rc && told && told != ((unsigned)st.st_mode & S_IFMT));
		}
		if (fs_itable_inval_known(fs->it, node, entry, &iv))
			break; /* out of memory: the timeouts bound the rest */
	}
	for (size_t i = 0; v && i < n; i++)
		fs_itable_unref(fs->it, v[i]);
	free(v);
	fs_inval_send(fs, &iv);
}

static void *follow_main(void *arg)
{
	struct fs *fs = arg;
	struct fs_follow *f = fs->follow;
	pthread_mutex_lock(&f->lock);
	while (!f->stop) {
		if (f->inval_due) {
			f->inval_due = false;
			pthread_mutex_unlock(&f->lock);
			invalidate_known(fs);
			pthread_mutex_lock(&f->lock);
			continue;
		}
		uint64_t due = atomic_load(&f->last_ms) + f->ms, now = mono_ms();
		if (now >= due) {
			pthread_mutex_unlock(&f->lock);
			catch_up(fs, f, f->ms);
			pthread_mutex_lock(&f->lock);
			continue;
		}
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		uint64_t ns = (uint64_t)ts.tv_nsec + (due - now) * 1000000u;
		ts.tv_sec += (time_t)(ns / 1000000000u);
		ts.tv_nsec = (long)(ns % 1000000000u);
		pthread_cond_timedwait(&f->cond, &f->lock, &ts);
	}
	pthread_mutex_unlock(&f->lock);
	return NULL;
}

void fs_follow_start(struct fs *fs)
{
	if (fs->follow || !fs->opt.follow_ms || !ks_is_follower(fs->ks))
		return;
	struct fs_follow *f = calloc(1, sizeof(*f));
	if (!f) {
		LOG_ERR("%s: out of memory: the mount does not follow its writer", fs->opt.dbdir);
		return;
	}
	f->ms = fs->opt.follow_ms;
	pthread_mutex_init(&f->catch_lock, NULL);
	pthread_mutex_init(&f->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&f->cond, &ca);
	pthread_condattr_destroy(&ca);
	atomic_init(&f->last_ms, mono_ms());
	fs->follow = f;
	if (pthread_create(&f->thread, NULL, follow_main, fs)) {
		LOG_ERR("%s: cannot start the catch-up thread: only lookups and listings catch up",
			fs->opt.dbdir);
		f->stop = true; /* fs_follow_fresh still works; no thread to join */
	}
}

void fs_follow_stop(struct fs *fs)
{
	struct fs_follow *f = fs->follow;
	if (!f)
		return;
	pthread_mutex_lock(&f->lock);
	bool running = !f->stop;
	f->stop = true;
	pthread_cond_signal(&f->cond);
	pthread_mutex_unlock(&f->lock);
	if (running)
		pthread_join(f->thread, NULL);
	fs->follow = NULL;
	pthread_cond_destroy(&f->cond);
	pthread_mutex_destroy(&f->lock);
	pthread_mutex_destroy(&f->catch_lock);
	free(f);
}
