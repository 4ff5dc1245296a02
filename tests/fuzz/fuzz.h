/*
 * Shared by the fuzz harnesses (tests/fuzz/fuzz_*.c): the libFuzzer entry
 * points, a temporary database per process for the harnesses that plant
 * records, and a reader that splits one input into fields. Built two
 * ways (docs/testing.md, "Fuzzing"): with libFuzzer (make fuzz) and with
 * replay.c's main(), which feeds every corpus file once (make test).
 */
#ifndef KVFS_FUZZ_H
#define KVFS_FUZZ_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "keyspace/keyspace.h"
#include "engine/store.h"
#include "engine/util.h"
#include "../unit/tmpdir.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

/* A property a harness checks on decoded input broke: abort, so
 * libFuzzer records the input and the replay counts a failure. */
#define FUZZ_ASSERT(cond)                                                                          \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			fprintf(stderr, "%s:%d: FUZZ_ASSERT failed: %s\n", __FILE__, __LINE__,     \
				#cond);                                                            \
			abort();                                                                   \
		}                                                                                  \
	} while (0)

/* Decoders log what they refuse; a fuzzer refuses millions of inputs.
 * KVFS_FUZZ_LOG=1 keeps the log. */
static inline void fuzz_quiet(void)
{
	const char *e = getenv("KVFS_FUZZ_LOG");
	if (!e || !*e || *e == '0')
		log_level_current = -1;
}

/* ---- Reading an input field by field --------------------------------- */

struct fuzz_in {
	const uint8_t *p;
	size_t n;
};

static inline uint8_t fuzz_u8(struct fuzz_in *in)
{
	if (!in->n)
		return 0;
	in->n--;
	return *in->p++;
}

static inline uint16_t fuzz_u16(struct fuzz_in *in)
{
	uint16_t hi = fuzz_u8(in);
	return (uint16_t)(hi << 8 | fuzz_u8(in));
}

/* The next field: a u16 length (cut to what is left), then its bytes. */
static inline const uint8_t *fuzz_field(struct fuzz_in *in, size_t *n)
{
	size_t want = fuzz_u16(in);
	if (want > in->n)
		want = in->n;
	const uint8_t *p = in->p;
	in->p += want;
	in->n -= want;
	*n = want;
	return p;
}

/* A NUL-terminated copy of p/n (free it). */
static inline char *fuzz_strdup(const void *p, size_t n)
{
	char *s = malloc(n + 1);
	if (!s)
		abort();
	if (n)
		memcpy(s, p, n);
	s[n] = '\0';
	return s;
}

/* ---- A temporary database ------------------------------------------- */

/*
 * One database per process, made afresh every FUZZ_DB_RUNS runs so it
 * never grows large; each run uses a key of its own (fuzz_key_next), so
 * nothing one run planted is seen by the next. The directory is removed
 * at exit.
 */
#define FUZZ_DB_RUNS 2000

static struct keyspace *fuzz_ks;
static char *fuzz_dir;
static unsigned long fuzz_runs;
static char fuzz_keybuf[32];

static inline void fuzz_db_close(void)
{
	if (fuzz_ks)
		ks_close(fuzz_ks);
	fuzz_ks = NULL;
	tmpdir_remove(fuzz_dir);
	fuzz_dir = NULL;
}

static inline struct keyspace *fuzz_db(void)
{
	static bool registered;
	if (!fuzz_ks) {
		/* Named apart from the unit tests' directories: a crashed
		 * fuzzing process leaves its directory behind. */
		fuzz_dir = strdup("/tmp/kvfs-fuzz-XXXXXX");
		if (fuzz_dir && !mkdtemp(fuzz_dir)) {
			free(fuzz_dir);
			fuzz_dir = NULL;
		}
		if (!fuzz_dir || ks_open(fuzz_dir, NULL, &fuzz_ks) != 0) {
			fprintf(stderr, "fuzz: cannot open a temporary database\n");
			abort();
		}
		if (!registered)
			atexit(fuzz_db_close);
		registered = true;
	}
	return fuzz_ks;
}

/* A key in the default namespace not used before in this database
 * (every FUZZ_DB_RUNS keys, a fresh database). */
static inline struct ks_key fuzz_key_next(void)
{
	if (fuzz_ks && fuzz_runs % FUZZ_DB_RUNS == 0)
		fuzz_db_close();
	fuzz_db();
	int n = snprintf(fuzz_keybuf, sizeof(fuzz_keybuf), "fz%lu", fuzz_runs % FUZZ_DB_RUNS);
	fuzz_runs++;
	return (struct ks_key){KS_DEFAULT_NS, strlen(KS_DEFAULT_NS), fuzz_keybuf, (size_t)n, NULL,
			       NULL};
}

/* Plant raw records as another writer would: the metadata record of k,
 * and a sub-key of k (version, sub bytes) in column family cf. */
static inline void fuzz_put_meta(const struct ks_key *k, const void *v, size_t vn)
{
	struct buf mk = BUF_INIT;
	struct store_batch *b = store_batch_new(ks_store(fuzz_ks));
	if (!b || ks_meta_key(fuzz_ks, k, &mk))
		abort();
	store_batch_put(b, STORE_CF_METADATA, mk.data, mk.len, v, vn);
	if (store_write(ks_store(fuzz_ks), b, false))
		abort();
	store_batch_free(b);
	buf_release(&mk);
}

static inline void fuzz_put_sub(const struct ks_key *k, enum store_cf cf, uint64_t version,
				const void *sub, size_t sn, const void *v, size_t vn)
{
	struct buf sk = BUF_INIT;
	struct store_batch *b = store_batch_new(ks_store(fuzz_ks));
	if (!b || ks_sub_key(fuzz_ks, k, version, sub, sn, &sk))
		abort();
	store_batch_put(b, cf, sk.data, sk.len, v, vn);
	if (store_write(ks_store(fuzz_ks), b, false))
		abort();
	store_batch_free(b);
	buf_release(&sk);
}

#endif
