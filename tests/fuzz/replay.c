/*
 * A main() for the fuzz harnesses without libFuzzer: feed every file of
 * the corpus to LLVMFuzzerTestOneInput once, so `make test` replays the
 * seeds and every crash ever found, built with the ordinary compiler.
 * Usage: test_fuzz_AREA [FILE|DIR]...   (default: the harness's corpus,
 * FUZZ_CORPUS, set by the Makefile). Prints "NAME: N passed, 0 failed";
 * an input that crashes the decoder kills the process, which the unit
 * runner counts as a failure.
 *
 * A reproducer may make a decoder allocate what a corrupt length says
 * (terabytes): memory is capped at FUZZ_REPLAY_MEM_MB so `make test`
 * never takes the machine's memory. Without AddressSanitizer the address
 * space is limited (malloc fails, the decoder must cope); under it (whose
 * shadow memory needs the address space) the resident size is, and going
 * past it is a failure.
 */
#include "fuzz.h"

#include <dirent.h>
#include <errno.h>
#include <sys/resource.h>
#include <sys/stat.h>

#define FUZZ_REPLAY_MEM_MB 2048
#define STR_(x)		   #x
#define STR(x)		   STR_(x)

#ifdef __SANITIZE_ADDRESS__
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "hard_rss_limit_mb=" STR(FUZZ_REPLAY_MEM_MB);
}
#endif

static void limit_memory(void)
{
#ifndef __SANITIZE_ADDRESS__
	struct rlimit r = {(rlim_t)FUZZ_REPLAY_MEM_MB << 20, (rlim_t)FUZZ_REPLAY_MEM_MB << 20};
	struct rlimit cur;
	if (getrlimit(RLIMIT_AS, &cur) == 0 && cur.rlim_cur != RLIM_INFINITY &&
	    cur.rlim_cur < r.rlim_cur)
		return;
	if (setrlimit(RLIMIT_AS, &r))
		perror("setrlimit");
#endif
}

#ifndef FUZZ_CORPUS
#define FUZZ_CORPUS "."
#endif

int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

static int replayed, failed;

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void replay_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		failed++;
		return;
	}
	struct buf b = BUF_INIT;
	char chunk[65536];
	size_t n;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_add(&b, chunk, n))
			abort();
	fclose(f);
	/* Its own copy of exactly its size, so ASan sees reads past the end. */
	uint8_t *data = malloc(b.len ? b.len : 1);
	if (!data)
		abort();
	if (b.len)
		memcpy(data, b.data, b.len);
	LLVMFuzzerTestOneInput(data, b.len);
	free(data);
	buf_release(&b);
	replayed++;
}

static void replay_path(const char *path)
{
	struct stat st;
	if (stat(path, &st)) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		failed++;
		return;
	}
	if (!S_ISDIR(st.st_mode)) {
		replay_file(path);
		return;
	}
	DIR *d = opendir(path);
	if (!d) {
		fprintf(stderr, "%s: %s\n", path, strerror(errno));
		failed++;
		return;
	}
	char **names = NULL;
	size_t nn = 0;
	struct dirent *de;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		names = realloc(names, (nn + 1) * sizeof(*names));
		if (!names)
			abort();
		names[nn++] = fuzz_strdup(de->d_name, strlen(de->d_name));
	}
	closedir(d);
	qsort(names, nn, sizeof(*names), cmp_names);
	for (size_t i = 0; i < nn; i++) {
		struct buf p = BUF_INIT;
		if (buf_printf(&p, "%s/%s", path, names[i]))
			abort();
		replay_file(p.data);
		buf_release(&p);
		free(names[i]);
	}
	free(names);
}

int main(int argc, char **argv)
{
	const char *name = strrchr(argv[0], '/');
	name = name ? name + 1 : argv[0];
	limit_memory();
	if (LLVMFuzzerInitialize)
		LLVMFuzzerInitialize(&argc, &argv);
	if (argc < 2)
		replay_path(FUZZ_CORPUS);
	for (int i = 1; i < argc; i++)
		replay_path(argv[i]);
	if (replayed == 0) {
		fprintf(stderr, "%s: no corpus files\n", name);
		failed++;
	}
	printf("%s: %d passed, %d failed\n", name, replayed, failed);
	return failed ? 1 : 0;
}
