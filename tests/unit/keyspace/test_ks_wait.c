/*
 * ks_wait: a reader waits for a write to a key (BLPOP's wait). A commit to
 * the key wakes it, also one made between its look and its wait; a
 * deadline and a stop callback end the wait; a write to a key of another
 * stripe does not.
 */
#include "check.h"
#include "fixture.h"
#include "keyspace/ks_int.h"
#include "types/t_hash.h"
#include "types/t_set.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

static struct keyspace *ks;

static uint64_t mono_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

struct writer {
	const char *key;
	unsigned delay_ms;
	int rc;
};

static void *write_later(void *arg)
{
	struct writer *w = arg;
	usleep(w->delay_ms * 1000);
	w->rc = hash_set(ks, KEY(w->key), "f", 1, "v", 1, NULL);
	return NULL;
}

static void test_commit_wakes(void)
{
	uint64_t g = ks_gen(ks, KEY("q"));
	struct writer w = {"q", 50, -1};
	pthread_t th;
	pthread_create(&th, NULL, write_later, &w);
	uint64_t t0 = mono_ms();
	CHECK_INT(ks_wait(ks, KEY("q"), g, ks_wait_deadline(5000), NULL, NULL), 0);
	uint64_t took = mono_ms() - t0;
	pthread_join(th, NULL);
	CHECK_INT(w.rc, 0);
	CHECK(took >= 40 && took < 4000);
	CHECK(ks_gen(ks, KEY("q")) != g);
}

static void test_write_before_wait(void)
{
	/* A write between the look and the wait: no wait at all. */
	uint64_t g = ks_gen(ks, KEY("q"));
	CHECK_INT(hash_set(ks, KEY("q"), "g", 1, "v", 1, NULL), 0);
	uint64_t t0 = mono_ms();
	CHECK_INT(ks_wait(ks, KEY("q"), g, 0, NULL, NULL), 0);
	CHECK(mono_ms() - t0 < 1000);
	/* A refused write (the wrong type) commits nothing and moves nothing. */
	g = ks_gen(ks, KEY("q"));
	CHECK_INT(set_add(ks, KEY("q"), "m", 1, NULL), -KV_EWRONGTYPE);
	CHECK(ks_gen(ks, KEY("q")) == g);
}

static void test_deadline(void)
{
	uint64_t g = ks_gen(ks, KEY("idle"));
	uint64_t t0 = mono_ms();
	CHECK_INT(ks_wait(ks, KEY("idle"), g, ks_wait_deadline(120), NULL, NULL), -ETIMEDOUT);
	uint64_t took = mono_ms() - t0;
	CHECK(took >= 110 && took < 3000);
	CHECK(ks_wait_deadline(0) == 0);
}

static bool stop_after(void *arg)
{
	int *calls = arg;
	return ++*calls >= 3;
}

static void test_stop(void)
{
	int calls = 0;
	uint64_t g = ks_gen(ks, KEY("idle"));
	CHECK_INT(ks_wait(ks, KEY("idle"), g, 0, stop_after, &calls), -EINTR);
	CHECK_INT(calls, 3);
}

/* A key of another stripe: its write is no wake-up. */
static void test_other_stripe(void)
{
	char other[32];
	unsigned s = ks_stripe(KEY("idle"));
	for (int i = 0;; i++) {
		snprintf(other, sizeof(other), "other%d", i);
		if (ks_stripe(KEY(other)) != s)
			break;
	}
	uint64_t g = ks_gen(ks, KEY("idle"));
	struct writer w = {other, 10, -1};
	pthread_t th;
	pthread_create(&th, NULL, write_later, &w);
	CHECK_INT(ks_wait(ks, KEY("idle"), g, ks_wait_deadline(300), NULL, NULL), -ETIMEDOUT);
	pthread_join(th, NULL);
	CHECK_INT(w.rc, 0);
}

int main(void)
{
	ks = fixture_open_checked();
	test_commit_wakes();
	test_write_before_wait();
	test_deadline();
	test_stop();
	test_other_stripe();
	fixture_done(ks);
	return check_done("test_ks_wait");
}
