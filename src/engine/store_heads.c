/*
 * store_heads: the head cache of large values, the one value kept for
 * the read that follows a stat, its reaper thread, and what a batch notes
 * for the cache. Layer: engine (util, rocksdb/c.h), part of the store.
 */
#include "engine/store_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/*
 * The heads of large values. A value from STORE_BLOB_MIN bytes lives in
 * a blob file, and RocksDB 7.8 cannot read the first bytes of a value
 * without reading all of it: a stat of a 256 MiB string would read 256
 * MiB. So store_get_head remembers the first HEAD_BYTES and the length
 * of large values, in a direct-mapped table of slots indexed by a hash
 * of (column family, key).
 *
 * kvfs is the only writer (RocksDB's lock), and every write goes through
 * store_write: a batch remembers the hash of each key it touches, and
 * store_write bumps those slots' epochs and empties them after the write.
 * A follower (a secondary instance) sees another process's writes only
 * at a catch-up, which bumps every slot (store_heads_clear).
 * A reader notes a slot's epoch before its read and fills the slot only
 * if the epoch is unchanged afterwards, so a value read before a write
 * can never be remembered after it.
 */
#define HEAD_SLOTS 256

/*
 * Beside the heads, the last large value read whole for its head is kept
 * for KEPT_MS: a lookup (stat) of a big file is nearly always followed by
 * an open and a read of it, and store_value_get then takes the value
 * kept instead of reading the blob again (a cold `cat` of a 256 MiB file
 * read it twice). It is valid while its slot's epoch is unchanged; a
 * reaper thread frees it when its time is up (without the thread,
 * nothing is kept).
 */
#define KEPT_MS 1000

struct head_cache {
	pthread_mutex_t lock;
	struct head_slot slot[HEAD_SLOTS];
	rocksdb_pinnableslice_t *kept;
	enum store_cf kept_cf;
	char *kept_key;
	size_t kept_kn, kept_slot;
	uint64_t kept_epoch, kept_until;
	pthread_cond_t kept_cond; /* CLOCK_MONOTONIC: a value kept, or stop */
	pthread_t reaper;
	bool reaper_on, stop;
};

static uint64_t head_hash(enum store_cf cf, const void *k, size_t kn)
{
	return hash_bytes(k, kn) ^ ((uint64_t)cf * 0x9e3779b97f4a7c15ull);
}

/* A remembered head of (cf, k): 0 with out/full filled, or -ENOENT. */
int store_heads_find(struct head_cache *hc, enum store_cf cf, const void *k, size_t kn, size_t max,
		     struct buf *out, size_t *full, uint64_t *epoch)
{
	struct head_slot *sl = &hc->slot[head_hash(cf, k, kn) % HEAD_SLOTS];
	int rc = -ENOENT;
	pthread_mutex_lock(&hc->lock);
	*epoch = sl->epoch;
	if (sl->valid && sl->cf == cf && sl->kn == kn && memcmp(sl->key, k, kn) == 0 &&
	    (max <= sl->n || sl->n == sl->full)) {
		rc = out ? buf_set(out, sl->head, max < sl->n ? max : sl->n) : 0;
		if (full)
			*full = sl->full;
	}
	pthread_mutex_unlock(&hc->lock);
	return rc;
}

/* Remember the head of a large value read when the slot had `epoch`. */
void store_heads_fill(struct head_cache *hc, enum store_cf cf, const void *k, size_t kn,
		      const char *v, size_t vn, uint64_t epoch)
{
	struct head_slot *sl = &hc->slot[head_hash(cf, k, kn) % HEAD_SLOTS];
	pthread_mutex_lock(&hc->lock);
	if (sl->epoch == epoch) {
		char *key = sl->kn >= kn && sl->key ? sl->key : realloc(sl->key, kn ? kn : 1);
		if (key) {
			sl->key = key;
			memcpy(sl->key, k, kn);
			sl->kn = kn;
			sl->cf = cf;
			sl->n = vn < HEAD_BYTES ? vn : HEAD_BYTES;
			memcpy(sl->head, v, sl->n);
			sl->full = vn;
			sl->valid = true;
		}
	}
	pthread_mutex_unlock(&hc->lock);
}

uint64_t store_mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Take the kept value out (to free it outside the lock). Lock held. */
static rocksdb_pinnableslice_t *kept_out_locked(struct head_cache *hc)
{
	rocksdb_pinnableslice_t *v = hc->kept;
	hc->kept = NULL;
	free(hc->kept_key);
	hc->kept_key = NULL;
	return v;
}

/* Keep v, read when (cf, k)'s slot had `epoch`; frees what it replaces,
 * or v itself if a write came between. */
void store_heads_keep(struct head_cache *hc, enum store_cf cf, const void *k, size_t kn,
		      rocksdb_pinnableslice_t *v, uint64_t epoch)
{
	size_t slot = head_hash(cf, k, kn) % HEAD_SLOTS;
	char *key = malloc(kn ? kn : 1);
	rocksdb_pinnableslice_t *drop = v;
	pthread_mutex_lock(&hc->lock);
	if (key && hc->reaper_on && hc->slot[slot].epoch == epoch) {
		drop = kept_out_locked(hc);
		memcpy(key, k, kn);
		hc->kept = v;
		hc->kept_cf = cf;
		hc->kept_key = key;
		hc->kept_kn = kn;
		hc->kept_slot = slot;
		hc->kept_epoch = epoch;
		hc->kept_until = store_mono_ms() + KEPT_MS;
		key = NULL;
		pthread_cond_signal(&hc->kept_cond);
	}
	pthread_mutex_unlock(&hc->lock);
	free(key);
	rocksdb_pinnableslice_destroy(drop);
}

/* The kept value if it is (cf, k)'s and still valid, taken out; an
 * invalid one is dropped. NULL: read it. */
rocksdb_pinnableslice_t *store_heads_take(struct head_cache *hc, enum store_cf cf, const void *k,
					  size_t kn)
{
	rocksdb_pinnableslice_t *v = NULL, *drop = NULL;
	pthread_mutex_lock(&hc->lock);
	if (hc->kept) {
		bool valid = hc->slot[hc->kept_slot].epoch == hc->kept_epoch &&
			     store_mono_ms() < hc->kept_until;
		if (valid && hc->kept_cf == cf && hc->kept_kn == kn &&
		    memcmp(hc->kept_key, k, kn) == 0)
			v = kept_out_locked(hc);
		else if (!valid)
			drop = kept_out_locked(hc);
	}
	pthread_mutex_unlock(&hc->lock);
	rocksdb_pinnableslice_destroy(drop);
	return v;
}

/* Free a kept value when its time is up, so an idle daemon does not hold
 * 256 MiB for the stat it answered last. */
static void *reaper_main(void *arg)
{
	struct head_cache *hc = arg;
	pthread_mutex_lock(&hc->lock);
	while (!hc->stop) {
		uint64_t now = store_mono_ms();
		if (hc->kept && now >= hc->kept_until) {
			rocksdb_pinnableslice_t *v = kept_out_locked(hc);
			pthread_mutex_unlock(&hc->lock);
			rocksdb_pinnableslice_destroy(v);
			pthread_mutex_lock(&hc->lock);
		} else if (hc->kept) {
			struct timespec ts;
			clock_gettime(CLOCK_MONOTONIC, &ts);
			uint64_t ns = (uint64_t)ts.tv_nsec + (hc->kept_until - now) * 1000000u;
			ts.tv_sec += (time_t)(ns / 1000000000u);
			ts.tv_nsec = (long)(ns % 1000000000u);
			pthread_cond_timedwait(&hc->kept_cond, &hc->lock, &ts);
		} else {
			pthread_cond_wait(&hc->kept_cond, &hc->lock);
		}
	}
	pthread_mutex_unlock(&hc->lock);
	return NULL;
}

static void reaper_start(struct head_cache *hc)
{
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&hc->kept_cond, &ca);
	pthread_condattr_destroy(&ca);
	hc->reaper_on = pthread_create(&hc->reaper, NULL, reaper_main, hc) == 0;
}

static void reaper_stop(struct head_cache *hc)
{
	if (hc->reaper_on) {
		pthread_mutex_lock(&hc->lock);
		hc->stop = true;
		pthread_cond_signal(&hc->kept_cond);
		pthread_mutex_unlock(&hc->lock);
		pthread_join(hc->reaper, NULL);
		hc->reaper_on = false;
	}
}

/* Is the batch's touch `at` the last one of its key? */
static bool last_touch(const struct store_batch *b, size_t at)
{
	for (size_t j = at + 1; j < b->ntouched; j++)
		if (b->touched[j] == b->touched[at])
			return false;
	return true;
}

/* After a write: forget what the batch touched; if it was written,
 * remember the heads of the large values it put. */
void store_heads_invalidate(struct head_cache *hc, struct store_batch *b, bool written)
{
	pthread_mutex_lock(&hc->lock);
	if (b->touched_all) {
		for (size_t i = 0; i < HEAD_SLOTS; i++) {
			hc->slot[i].epoch++;
			hc->slot[i].valid = false;
		}
	} else {
		for (size_t i = 0; i < b->ntouched; i++) {
			struct head_slot *sl = &hc->slot[b->touched[i] % HEAD_SLOTS];
			sl->epoch++;
			sl->valid = false;
		}
	}
	for (size_t i = 0; written && !b->touched_all && i < b->nfills; i++) {
		struct head_fill *f = &b->fills[i];
		if (!last_touch(b, f->at))
			continue;
		struct head_slot *sl = &hc->slot[b->touched[f->at] % HEAD_SLOTS];
		free(sl->key); /* the slot takes the fill's key */
		uint64_t epoch = sl->epoch;
		*sl = f->h;
		sl->epoch = epoch;
		sl->valid = true;
		f->h.key = NULL;
	}
	pthread_mutex_unlock(&hc->lock);
}

void store_heads_clear(struct head_cache *hc)
{
	pthread_mutex_lock(&hc->lock);
	for (size_t i = 0; i < HEAD_SLOTS; i++) {
		hc->slot[i].epoch++;
		hc->slot[i].valid = false;
	}
	rocksdb_pinnableslice_t *v = kept_out_locked(hc);
	pthread_mutex_unlock(&hc->lock);
	rocksdb_pinnableslice_destroy(v);
}

void store_heads_drop_fills(struct store_batch *b)
{
	for (size_t i = 0; i < b->nfills; i++)
		free(b->fills[i].h.key);
	b->nfills = 0;
}

/* Note the head of a large value the batch puts (at its next touch).
 * Without memory it is simply not remembered. */
void store_heads_note(struct store_batch *b, enum store_cf cf, const char *k, size_t kn,
		      const char *const *parts, const size_t *lens, int nparts, size_t full)
{
	if (b->nfills == b->capfills) {
		size_t cap = b->capfills ? 2 * b->capfills : 2;
		struct head_fill *f = realloc(b->fills, cap * sizeof(*f));
		if (!f)
			return;
		b->fills = f;
		b->capfills = cap;
	}
	struct head_fill *f = &b->fills[b->nfills];
	memset(f, 0, sizeof(*f));
	f->h.key = malloc(kn ? kn : 1);
	if (!f->h.key)
		return;
	memcpy(f->h.key, k, kn);
	f->h.kn = kn;
	f->h.cf = cf;
	f->h.full = full;
	for (int i = 0; i < nparts && f->h.n < HEAD_BYTES; i++) {
		size_t n = lens[i] < HEAD_BYTES - f->h.n ? lens[i] : HEAD_BYTES - f->h.n;
		memcpy(f->h.head + f->h.n, parts[i], n);
		f->h.n += n;
	}
	f->at = b->ntouched;
	b->nfills++;
}

/* Note a key the batch writes; without memory, forget every head. */
void store_heads_touch(struct store_batch *b, enum store_cf cf, const void *k, size_t kn)
{
	if (b->touched_all)
		return;
	if (b->ntouched == b->captouched) {
		size_t cap = b->captouched ? 2 * b->captouched : 8;
		uint64_t *t = realloc(b->touched, cap * sizeof(*t));
		if (!t) {
			b->touched_all = true;
			return;
		}
		b->touched = t;
		b->captouched = cap;
	}
	b->touched[b->ntouched++] = head_hash(cf, k, kn);
}

struct head_cache *store_heads_new(void)
{
	struct head_cache *hc = calloc(1, sizeof(*hc));
	if (!hc)
		return NULL;
	pthread_mutex_init(&hc->lock, NULL);
	reaper_start(hc);
	return hc;
}

void store_heads_stop(struct head_cache *hc)
{
	reaper_stop(hc);
	pthread_mutex_lock(&hc->lock);
	rocksdb_pinnableslice_t *v = kept_out_locked(hc);
	pthread_mutex_unlock(&hc->lock);
	rocksdb_pinnableslice_destroy(v);
}

void store_heads_free(struct head_cache *hc)
{
	if (!hc)
		return;
	for (size_t i = 0; i < HEAD_SLOTS; i++)
		free(hc->slot[i].key);
	pthread_mutex_destroy(&hc->lock);
	pthread_cond_destroy(&hc->kept_cond);
	free(hc);
}

size_t store_kept_bytes(struct store *s)
{
	size_t n = 0;
	pthread_mutex_lock(&s->heads->lock);
	if (s->heads->kept)
		rocksdb_pinnableslice_value(s->heads->kept, &n);
	pthread_mutex_unlock(&s->heads->lock);
	return n;
}
