/*
 * util: growable byte buffers, logging, clocks, hashing and big-endian
 * helpers. Layer: util (may include libc and xxhash only).
 */
#ifndef KVFS_UTIL_H
#define KVFS_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Error returned by a type verb when the key holds another type (Redis
 * WRONGTYPE). The fs layer maps it to EISDIR/ENOTDIR where that fits. */
#define KV_EWRONGTYPE EMEDIUMTYPE

/*
 * A growable byte buffer. Invariant: data is NULL iff cap == 0; when
 * data != NULL, data[len] is a NUL byte (so text can be used as a C
 * string), and len < cap. Bytes in [0, len) may contain NULs.
 * Caller-owned: buf_init() before use, buf_release() when done.
 */
struct buf {
	char *data;
	size_t len;
	size_t cap;
};

#define BUF_INIT                                                                                   \
	{                                                                                          \
		NULL, 0, 0                                                                         \
	}

void buf_init(struct buf *b);
void buf_release(struct buf *b);
/* Make room for at least `extra` more bytes (plus the NUL). -ENOMEM. */
int buf_reserve(struct buf *b, size_t extra);
/* Append n bytes. 0 or -ENOMEM. */
int buf_add(struct buf *b, const void *p, size_t n);
int buf_add_u8(struct buf *b, uint8_t v);
int buf_add_be16(struct buf *b, uint16_t v);
int buf_add_be32(struct buf *b, uint32_t v);
int buf_add_be64(struct buf *b, uint64_t v);
/* Replace the contents with n bytes. 0 or -ENOMEM. */
int buf_set(struct buf *b, const void *p, size_t n);
/* Set the length to n; bytes added by growth are zero. 0 or -ENOMEM. */
int buf_resize(struct buf *b, size_t n);
/* Drop the contents but keep the memory. */
static inline void buf_reset(struct buf *b)
{
	b->len = 0;
	if (b->data)
		b->data[0] = '\0';
}
/* printf-style append. 0 or -ENOMEM. */
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Logging: one line per message to stderr (and syslog when daemonised). */
enum log_level { LOG_LEVEL_ERR = 0, LOG_LEVEL_WARN, LOG_LEVEL_INFO, LOG_LEVEL_DEBUG };
extern int log_level_current;
void log_msg(enum log_level lvl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_use_syslog(bool on);
#define LOG_ERR(...)  log_msg(LOG_LEVEL_ERR, __VA_ARGS__)
#define LOG_WARN(...) log_msg(LOG_LEVEL_WARN, __VA_ARGS__)
#define LOG_INFO(...) log_msg(LOG_LEVEL_INFO, __VA_ARGS__)
#define LOG_DEBUG(...)                                                                             \
	do {                                                                                       \
		if (log_level_current >= LOG_LEVEL_DEBUG)                                          \
			log_msg(LOG_LEVEL_DEBUG, __VA_ARGS__);                                     \
	} while (0)

/* Wall clock in Unix milliseconds / microseconds. */
uint64_t now_ms(void);
uint64_t now_us(void);

/* 64-bit hash of bytes (XXH3-64, seed 0): used for names and lock stripes. */
uint64_t hash_bytes(const void *p, size_t n);

/* XXH64 of bytes with a seed (the bloom filter's hash). */
uint64_t hash_xxh64(const void *p, size_t n, uint64_t seed);

/* Big-endian loads and stores on unaligned memory. */
static inline void put_be16(void *p, uint16_t v)
{
	uint8_t *b = p;
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}
static inline void put_be32(void *p, uint32_t v)
{
	uint8_t *b = p;
	for (int i = 3; i >= 0; i--, v >>= 8)
		b[i] = (uint8_t)v;
}
static inline void put_be64(void *p, uint64_t v)
{
	uint8_t *b = p;
	for (int i = 7; i >= 0; i--, v >>= 8)
		b[i] = (uint8_t)v;
}
static inline uint16_t get_be16(const void *p)
{
	const uint8_t *b = p;
	return (uint16_t)((b[0] << 8) | b[1]);
}
static inline uint32_t get_be32(const void *p)
{
	const uint8_t *b = p;
	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) | ((uint32_t)b[2] << 8) | b[3];
}
static inline uint64_t get_be64(const void *p)
{
	const uint8_t *b = p;
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = (v << 8) | b[i];
	return v;
}

/* Compare two byte strings the way RocksDB's bytewise comparator does. */
int bytes_cmp(const void *a, size_t an, const void *b, size_t bn);

/* Redis's LRANGE / LTRIM / ZRANGE clamp of an inclusive [start, stop],
 * negatives from the end, against len: true with the inclusive *from and
 * *to, false for an empty range. */
bool rank_range_clamp(int64_t start, int64_t stop, uint64_t len, uint64_t *from, uint64_t *to);

/* Parse a whole decimal unsigned / signed integer (no sign for unsigned,
 * no spaces, no trailing bytes). 0 or -EINVAL / -ERANGE. */
int parse_u64(const char *s, size_t n, uint64_t *out);
int parse_i64(const char *s, size_t n, int64_t *out);
/* Parse a whole floating-point number as strtod reads it ("1.5", "-2e3",
 * "inf", "-inf", "0x1p3"), with blanks (space, tab, CR, LF) allowed
 * around it. 0, or -EINVAL for an empty or blank string, NaN, a number
 * too large for a double, more than 127 bytes between the blanks, or any
 * other byte. */
int parse_double(const char *s, size_t n, double *out);

/* Doubles as text that reads back as the same double (out holds 40 bytes;
 * the length is returned):
 *   fmt_double_shortest: the shortest of %.1g .. %.17g ("1000", "0.1",
 *     "1e+21"), or "nan", "inf", "-inf";
 *   fmt_double_g17: %.15g, or %.16g / %.17g where 15 digits do not read
 *     back ("100000", "0.1"); a finite d only. */
size_t fmt_double_shortest(double d, char out[40]);
size_t fmt_double_g17(double d, char out[40]);

/* The value of a hexadecimal digit (either case), or -1. */
int hex_digit(int c);

/* Line text that any bytes survive: backslash, TAB, LF, CR and the other
 * control bytes become \\ \t \n \r \xHH (lower-case hex); everything
 * else, UTF-8 included, is kept. buf_add_escaped appends; 0 or -ENOMEM.
 * buf_set_unescaped undoes it into b, replacing b's contents: 0, -EINVAL
 * for a bad escape (b then holds a part), -ENOMEM. */
int buf_add_escaped(struct buf *b, const void *p, size_t n);
int buf_set_unescaped(struct buf *b, const char *s, size_t n);

/* Do the n bytes at s begin with the C string p (all of it)? */
bool has_prefix(const char *s, size_t n, const char *p);
/* Is every one of the n bytes at s a blank (space, tab, CR or LF)? true
 * for n == 0. */
bool text_is_blank(const char *s, size_t n);

/*
 * Room for one more element in an array of elements of `size` bytes that
 * holds len of *cap: when it is full (len == *cap), it is reallocated to
 * twice *cap elements, or `first` if *cap is 0, and *cap updated. The
 * array to use (v itself, or where it moved), or NULL on out of memory:
 * then v and *cap are unchanged, and v is still the caller's to free.
 */
void *array_grow(void *v, size_t *cap, size_t len, size_t size, size_t first);

#endif
