/*
 * ks_wait: readers that wait for a key to change (BLPOP, BLMOVE, BZPOPMIN).
 *
 * Each lock stripe counts the writes committed to its keys (gen) under its
 * lock; ks_txn_commit moves the count of the stripes it holds and wakes
 * their waiters (ks_wait_commit). A reader takes the count before it
 * looks (ks_gen), and if what it wants is not there waits for the count to
 * move (ks_wait): a write between its look and its wait has moved it
 * already, so no write is missed. Keys share stripes, so a wake-up may
 * come from another key's write: the reader looks again and waits again.
 */
#include "keyspace/keyspace.h"
#include "keyspace/ks_int.h"
#include "engine/util.h"

#include <errno.h>
#include <pthread.h>
#include <time.h>

/* How often a waiter asks its stop callback (an interrupted request). */
#define KS_WAIT_SLICE_MS 100

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

uint64_t ks_wait_deadline(uint64_t timeout_ms)
{
	if (timeout_ms == 0)
		return 0;
	uint64_t now = mono_ms();
	return UINT64_MAX - now < timeout_ms ? UINT64_MAX : now + timeout_ms;
}

uint64_t ks_gen(struct keyspace *ks, const struct ks_key *k)
{
	unsigned s = ks_stripe(k);
	pthread_mutex_lock(&ks->locks[s]);
	uint64_t g = ks->gen[s];
	pthread_mutex_unlock(&ks->locks[s]);
	return g;
}

int ks_wait(struct keyspace *ks, const struct ks_key *k, uint64_t gen, uint64_t deadline,
	    bool (*stop)(void *arg), void *arg)
{
	unsigned s = ks_stripe(k);
	int rc = 0;
	pthread_mutex_lock(&ks->locks[s]);
	ks->waiting[s]++;
	while (ks->gen[s] == gen) {
		uint64_t now = mono_ms();
		if (deadline && now >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		if (stop && stop(arg)) {
			rc = -EINTR;
			break;
		}
		uint64_t until = now + KS_WAIT_SLICE_MS;
		if (deadline && deadline < until)
			until = deadline;
		struct timespec ts = {.tv_sec = (time_t)(until / 1000),
				      .tv_nsec = (long)(until % 1000) * 1000000};
		pthread_cond_timedwait(&ks->changed[s], &ks->locks[s], &ts);
	}
	ks->waiting[s]--;
	pthread_mutex_unlock(&ks->locks[s]);
	return rc;
}

void ks_wait_commit(struct keyspace *ks, const struct ks_key *k)
{
	unsigned s = ks_stripe(k);
	ks->gen[s]++;
	if (ks->waiting[s])
		pthread_cond_broadcast(&ks->changed[s]);
}
