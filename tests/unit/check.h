/*
 * A tiny unit-test harness: CHECK* macros count passes and failures, and
 * check_done() prints "NAME: N passed, N failed" and gives the exit code.
 */
#ifndef KVFS_CHECK_H
#define KVFS_CHECK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_passed, check_failed;

#define CHECK(cond)                                                                                \
	do {                                                                                       \
		if (cond) {                                                                        \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);   \
		}                                                                                  \
	} while (0)

#define CHECK_INT(a, b)                                                                            \
	do {                                                                                       \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b);                    \
		if (check_a_ == check_b_) {                                                        \
			check_passed++;                                                            \
		} else {                                                                           \
			check_failed++;                                                            \
			fprintf(stderr, "%s:%d: %s == %lld, expected %s == %lld\n", __FILE__,      \
				__LINE__, #a, check_a_, #b, check_b_);                             \
		}                                                                                  \
	} while (0)

/* Compare bytes; on failure print both in hex. */
#define CHECK_MEM(p, n, q, m) check_mem_(__FILE__, __LINE__, #p, (p), (n), (q), (m))

static inline void check_hex_(const char *label, const void *p, size_t n)
{
	const unsigned char *b = p;
	fprintf(stderr, "    %s:", label);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %02X", b[i]);
	fprintf(stderr, "\n");
}

static inline void check_mem_(const char *file, int line, const char *what, const void *p, size_t n,
			      const void *q, size_t m)
{
	if (n == m && (n == 0 || memcmp(p, q, n) == 0)) {
		check_passed++;
		return;
	}
	check_failed++;
	fprintf(stderr, "%s:%d: bytes of %s differ\n", file, line, what);
	check_hex_("got     ", p, n);
	check_hex_("expected", q, m);
}

/* Parse "0B 5F 5F ..." (spaces ignored) into out; returns the length. */
static inline size_t check_unhex(const char *hex, unsigned char *out, size_t cap)
{
	size_t n = 0;
	while (*hex && n < cap) {
		if (*hex == ' ') {
			hex++;
			continue;
		}
		unsigned v;
		if (sscanf(hex, "%2x", &v) != 1)
			break;
		out[n++] = (unsigned char)v;
		hex += 2;
	}
	return n;
}

/* check_unhex() into a buffer that holds what the test's literal says
 * (at most 4096 bytes are written). */
static inline size_t unhex(const char *hex, unsigned char *out)
{
	return check_unhex(hex, out, 4096);
}

/* The next number below n (0 if n is 0) of the xorshift64 sequence in
 * *state: reproducible runs of the model-based tests. */
static inline uint64_t check_rnd(uint64_t *state, uint64_t n)
{
	*state ^= *state << 13;
	*state ^= *state >> 7;
	*state ^= *state << 17;
	return n ? *state % n : 0;
}

/*
 * Cap the address space at what the process maps now plus `extra` bytes
 * (RLIMIT_AS), so that a test of a corrupt record fails when the code
 * under test tries to allocate gigabytes (malloc then returns NULL and
 * the verb answers -ENOMEM instead of the -EUCLEAN the test expects).
 * Returns the old limit, for check_unlimit_as().
 */
#include <sys/resource.h>
#include <unistd.h>
static inline struct rlimit check_limit_as(size_t extra)
{
	struct rlimit old, lim;
	unsigned long pages = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	getrlimit(RLIMIT_AS, &old);
	if (f) {
		if (fscanf(f, "%lu", &pages) != 1)
			pages = 0;
		fclose(f);
	}
	lim = old;
	lim.rlim_cur = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + extra;
	if (pages && lim.rlim_cur < old.rlim_cur)
		setrlimit(RLIMIT_AS, &lim);
	return old;
}
static inline void check_unlimit_as(struct rlimit old)
{
	setrlimit(RLIMIT_AS, &old);
}

static inline int check_done(const char *name)
{
	printf("%s: %d passed, %d failed\n", name, check_passed, check_failed);
	return check_failed ? 1 : 0;
}

#endif
