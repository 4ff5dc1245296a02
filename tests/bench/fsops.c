/*
 * fsops: the file-system workload driver of `make bench`. Runs one workload
 * through ordinary system calls on any directory (tmpfs, the passthrough,
 * kvfs), times it with CLOCK_MONOTONIC and prints one line:
 *     VALUE UNIT        e.g. "7012.3 files/s", "1534.2 MB/s" (MB = 10^6 bytes)
 * Any failed call stops it with a message on stderr and exit status 1.
 * Layer: benchmark tool (libc only).
 *
 *   fsops create   DIR N SIZE        create+write+close DIR/k000000..., SIZE bytes
 *   fsops stat     DIR N             stat() each of them
 *   fsops cat      DIR N             open+read to EOF+close each of them
 *   fsops seqwrite FILE MIB          write FILE in 128 KiB writes, then close
 *   fsops seqread  FILE              read FILE to EOF in 128 KiB reads
 *   fsops randread FILE SECS MAXOPS [direct]
 *                                    random aligned 4 KiB preads for SECS seconds
 *                                    or MAXOPS reads, whichever ends first;
 *                                    `direct` opens with O_DIRECT (every read
 *                                    reaches the file system), else readahead is
 *                                    turned off with POSIX_FADV_RANDOM
 *   fsops setxattr FILE NAME VALUE   milliseconds of one setxattr(2) call (kvfs's
 *                                    O(1) drop of a whole key: user.kvfs.ttl 0),
 *                                    without starting a setfattr process
 *   fsops memtouch - MIB             seconds to fault in and fill MIB of fresh
 *                                    anonymous memory (the median of 5 rounds,
 *                                    each mapping unmapped before the next): what
 *                                    every new copy of a large value costs here
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/xattr.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define IO_CHUNK   (128 * 1024)
#define RAND_BLOCK 4096

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *path)
{
	fprintf(stderr, "fsops: %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

static long arg_long(const char *s, const char *what)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || v < 0) {
		fprintf(stderr, "fsops: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

static void name_of(char *out, size_t n, const char *dir, long i)
{
	snprintf(out, n, "%s/k%06ld", dir, i);
}

static void report(double value, const char *unit)
{
	printf("%.1f %s\n", value, unit);
}

static int do_create(const char *dir, long n, long size)
{
	char path[4096];
	char *data = malloc((size_t)size + 1);
	if (!data)
		die("malloc", "");
	for (long j = 0; j < size; j++)
		data[j] = (char)('a' + j % 26);
	double t0 = now_s();
	for (long i = 0; i < n; i++) {
		name_of(path, sizeof(path), dir, i);
		int fd = open(path, O_CREAT | O_WRONLY | O_TRUNC, 0644);
		if (fd < 0)
			die("open", path);
		if (write(fd, data, (size_t)size) != size)
			die("write", path);
		if (close(fd) != 0)
			die("close", path);
	}
	double dt = now_s() - t0;
	free(data);
	report((double)n / dt, "files/s");
	return 0;
}

static int do_stat(const char *dir, long n)
{
	char path[4096];
	struct stat st;
	double t0 = now_s();
	for (long i = 0; i < n; i++) {
		name_of(path, sizeof(path), dir, i);
		if (stat(path, &st) != 0)
			die("stat", path);
	}
	report((double)n / (now_s() - t0), "stats/s");
	return 0;
}

static int do_cat(const char *dir, long n)
{
	char path[4096];
	static char buf[65536];
	long long total = 0;
	double t0 = now_s();
	for (long i = 0; i < n; i++) {
		name_of(path, sizeof(path), dir, i);
		int fd = open(path, O_RDONLY);
		if (fd < 0)
			die("open", path);
		ssize_t r;
		while ((r = read(fd, buf, sizeof(buf))) > 0)
			total += r;
		if (r < 0)
			die("read", path);
		if (close(fd) != 0)
			die("close", path);
	}
	double dt = now_s() - t0;
	if (n > 0 && total == 0) {
		fprintf(stderr, "fsops: cat of %ld files in %s read nothing\n", n, dir);
		return 1;
	}
	report((double)n / dt, "files/s");
	return 0;
}

static int do_seqwrite(const char *file, long mib)
{
	char *buf = malloc(IO_CHUNK);
	if (!buf)
		die("malloc", "");
	for (int j = 0; j < IO_CHUNK; j++)
		buf[j] = (char)(j * 7 + 1);
	long long total = (long long)mib << 20;
	double t0 = now_s();
	int fd = open(file, O_CREAT | O_WRONLY | O_TRUNC, 0644);
	if (fd < 0)
		die("open", file);
	for (long long done = 0; done < total; done += IO_CHUNK) {
		buf[0] = (char)(done >> 17); /* not all chunks alike */
		if (write(fd, buf, IO_CHUNK) != IO_CHUNK)
			die("write", file);
	}
	if (close(fd) != 0) /* kvfs commits here: part of the cost */
		die("close", file);
	double dt = now_s() - t0;
	free(buf);
	report((double)total / dt / 1e6, "MB/s");
	return 0;
}

static int do_seqread(const char *file)
{
	char *buf = malloc(IO_CHUNK);
	long long total = 0;
	ssize_t r;
	if (!buf)
		die("malloc", "");
	double t0 = now_s();
	int fd = open(file, O_RDONLY);
	if (fd < 0)
		die("open", file);
	while ((r = read(fd, buf, IO_CHUNK)) > 0)
		total += r;
	if (r < 0)
		die("read", file);
	close(fd);
	double dt = now_s() - t0;
	free(buf);
	if (total == 0) {
		fprintf(stderr, "fsops: %s is empty\n", file);
		return 1;
	}
	report((double)total / dt / 1e6, "MB/s");
	return 0;
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64*: fixed seed, so every system reads the same offsets */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static int do_randread(const char *file, double secs, long maxops, int direct)
{
	struct stat st;
	void *buf;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	long ops = 0;
	int fd = open(file, O_RDONLY | (direct ? O_DIRECT : 0));
	if (fd < 0)
		die("open", file);
	if (fstat(fd, &st) != 0)
		die("fstat", file);
	if (st.st_size < RAND_BLOCK) {
		fprintf(stderr, "fsops: %s is smaller than %d bytes\n", file, RAND_BLOCK);
		return 1;
	}
	if (!direct)
		posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM);
	if (posix_memalign(&buf, RAND_BLOCK, RAND_BLOCK) != 0)
		die("posix_memalign", "");
	uint64_t blocks = (uint64_t)st.st_size / RAND_BLOCK;
	double t0 = now_s(), dt = 0;
	while (ops < maxops) {
		off_t off = (off_t)(rng_next(&seed) % blocks) * RAND_BLOCK;
		if (pread(fd, buf, RAND_BLOCK, off) != RAND_BLOCK)
			die("pread", file);
		ops++;
		if ((ops & 255) == 0 && (dt = now_s() - t0) >= secs)
			break;
	}
	dt = now_s() - t0;
	close(fd);
	free(buf);
	report((double)ops / dt, "IOPS");
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static int do_memtouch(long mib)
{
	enum { ROUNDS = 5 };
	double t[ROUNDS];
	size_t n = (size_t)mib << 20;
	for (int r = 0; r < ROUNDS; r++) {
		double t0 = now_s();
		char *p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			die("mmap", "");
		memset(p, r + 1, n);
		t[r] = now_s() - t0;
		munmap(p, n);
	}
	qsort(t, ROUNDS, sizeof(t[0]), cmp_double);
	printf("%.3f s\n", t[ROUNDS / 2]);
	return 0;
}

static int do_setxattr(const char *file, const char *name, const char *value)
{
	double t0 = now_s();
	if (setxattr(file, name, value, strlen(value), 0) != 0)
		die("setxattr", file);
	printf("%.3f ms\n", (now_s() - t0) * 1e3);
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: fsops create DIR N SIZE | stat DIR N | cat DIR N |\n"
			"       seqwrite FILE MIB | seqread FILE |\n"
			"       randread FILE SECS MAXOPS [direct] | memtouch - MIB |\n"
			"       setxattr FILE NAME VALUE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	if (argc < 3)
		usage();
	const char *cmd = argv[1], *path = argv[2];
	if (strcmp(cmd, "create") == 0 && argc == 5)
		return do_create(path, arg_long(argv[3], "N"), arg_long(argv[4], "SIZE"));
	if (strcmp(cmd, "stat") == 0 && argc == 4)
		return do_stat(path, arg_long(argv[3], "N"));
	if (strcmp(cmd, "cat") == 0 && argc == 4)
		return do_cat(path, arg_long(argv[3], "N"));
	if (strcmp(cmd, "seqwrite") == 0 && argc == 4)
		return do_seqwrite(path, arg_long(argv[3], "MIB"));
	if (strcmp(cmd, "seqread") == 0 && argc == 3)
		return do_seqread(path);
	if (strcmp(cmd, "setxattr") == 0 && argc == 5)
		return do_setxattr(path, argv[3], argv[4]);
	if (strcmp(cmd, "memtouch") == 0 && argc == 4)
		return do_memtouch(arg_long(argv[3], "MIB"));
	if (strcmp(cmd, "randread") == 0 && (argc == 5 || argc == 6)) {
		int direct = argc == 6 && strcmp(argv[5], "direct") == 0;
		if (argc == 6 && !direct)
			usage();
		return do_randread(path, (double)arg_long(argv[3], "SECS"),
				   arg_long(argv[4], "MAXOPS"), direct);
	}
	usage();
	return 2;
}
