/*
 * util: growable buffers, one-line logging, clocks, hashing and number
 * parsing. Layer: util.
 */
#include "engine/util.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <syslog.h>
#include <time.h>
#include <xxhash.h>

int log_level_current = LOG_LEVEL_INFO;
static bool log_syslog;

void buf_init(struct buf *b)
{
	b->data = NULL;
	b->len = 0;
	b->cap = 0;
}

void buf_release(struct buf *b)
{
	free(b->data);
	buf_init(b);
}

int buf_reserve(struct buf *b, size_t extra)
{
	if (extra > SIZE_MAX - b->len - 1)
		return -ENOMEM;
	size_t need = b->len + extra + 1;
	if (need <= b->cap)
		return 0;
	size_t cap = b->cap ? b->cap : 64;
	while (cap < need)
		cap = cap > SIZE_MAX / 2 ? need : cap * 2;
	char *p = realloc(b->data, cap);
	if (!p)
		return -ENOMEM;
	if (!b->data)
		p[0] = '\0';
	b->data = p;
	b->cap = cap;
	return 0;
}

int buf_add(struct buf *b, const void *p, size_t n)
{
	int rc = buf_reserve(b, n);
	if (rc)
		return rc;
	if (n)
		memcpy(b->data + b->len, p, n);
	b->len += n;
	b->data[b->len] = '\0';
	return 0;
}

int buf_add_u8(struct buf *b, uint8_t v)
{
	return buf_add(b, &v, 1);
}

int buf_add_be16(struct buf *b, uint16_t v)
{
	uint8_t t[2];
	put_be16(t, v);
	return buf_add(b, t, 2);
}

int buf_add_be32(struct buf *b, uint32_t v)
{
	uint8_t t[4];
	put_be32(t, v);
	return buf_add(b, t, 4);
}

int buf_add_be64(struct buf *b, uint64_t v)
{
	uint8_t t[8];
	put_be64(t, v);
	return buf_add(b, t, 8);
}

int buf_set(struct buf *b, const void *p, size_t n)
{
	buf_reset(b);
	return buf_add(b, p, n);
}

int buf_resize(struct buf *b, size_t n)
{
	if (n > b->len) {
		int rc = buf_reserve(b, n - b->len);
		if (rc)
			return rc;
		memset(b->data + b->len, 0, n - b->len);
	}
	if (!b->data)
		return 0;
	b->len = n;
	b->data[n] = '\0';
	return 0;
}

int buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -EINVAL;
	int rc = buf_reserve(b, (size_t)n);
	if (rc)
		return rc;
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
	return 0;
}

void log_use_syslog(bool on)
{
	log_syslog = on;
	if (on)
		openlog("kvfs", LOG_PID, LOG_DAEMON);
}

void log_msg(enum log_level lvl, const char *fmt, ...)
{
	static const char *const names[] = {"error", "warning", "info", "debug"};
	static const int prio[] = {LOG_ERR, LOG_WARNING, LOG_INFO, LOG_DEBUG};
	if ((int)lvl > log_level_current)
		return;
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* One message, one line: never let a value with a newline split it. */
	for (char *p = line; *p; p++)
		if (*p == '\n' || *p == '\r')
			*p = ' ';
	if (log_syslog)
		syslog(prio[lvl], "%s", line);
	else
		fprintf(stderr, "kvfs: %s: %s\n", names[lvl], line);
}

uint64_t now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

uint64_t now_ms(void)
{
	return now_us() / 1000u;
}

uint64_t hash_bytes(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

uint64_t hash_xxh64(const void *p, size_t n, uint64_t seed)
{
	return XXH64(p, n, seed);
}

int bytes_cmp(const void *a, size_t an, const void *b, size_t bn)
{
	size_t n = an < bn ? an : bn;
	int c = n ? memcmp(a, b, n) : 0;
	if (c)
		return c;
	return an < bn ? -1 : an > bn ? 1 : 0;
}

bool rank_range_clamp(int64_t start, int64_t stop, uint64_t len, uint64_t *from, uint64_t *to)
{
	if (len == 0 || len > INT64_MAX)
		return false;
	int64_t n = (int64_t)len;
	if (start < 0)
		start += n; /* no overflow: n >= 0 > start */
	if (stop < 0)
		stop += n;
	if (start < 0)
		start = 0;
	if (start > stop || start >= n)
		return false;
	if (stop >= n)
		stop = n - 1;
	*from = (uint64_t)start;
	*to = (uint64_t)stop;
	return true;
}

int parse_u64(const char *s, size_t n, uint64_t *out)
{
	if (n == 0)
		return -EINVAL;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -EINVAL;
		unsigned d = (unsigned)(s[i] - '0');
		if (v > (UINT64_MAX - d) / 10)
			return -ERANGE;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

int parse_i64(const char *s, size_t n, int64_t *out)
{
	bool neg = n > 0 && s[0] == '-';
	uint64_t u;
	int rc = parse_u64(s + neg, n - neg, &u);
	if (rc)
		return rc;
	if (neg ? u > (uint64_t)INT64_MAX + 1 : u > (uint64_t)INT64_MAX)
		return -ERANGE;
	*out = neg ? (int64_t)(0 - u) : (int64_t)u;
	return 0;
}

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

size_t fmt_double_shortest(double d, char out[40])
{
	char tmp[40];
	int n, best = -1;
	if (isnan(d))
		return (size_t)snprintf(out, 40, "nan");
	if (isinf(d))
		return (size_t)snprintf(out, 40, "%s", d > 0 ? "inf" : "-inf");
	for (int prec = 1; prec <= 17; prec++) {
		n = snprintf(tmp, sizeof(tmp), "%.*g", prec, d);
		if (strtod(tmp, NULL) != d)
			continue;
		if (best < 0 || n < best) {
			memcpy(out, tmp, (size_t)n + 1);
			best = n;
		}
		/* Past the first exact text only a switch from the exponent
		 * form to the fixed one can be shorter ("1e+02" -> "100"); a
		 * fixed text is as short as it gets. */
		if (!strchr(tmp, 'e'))
			break;
	}
	return (size_t)best;
}

size_t fmt_double_g17(double d, char out[40])
{
	int n = 0;
	for (int prec = 15; prec <= 17; prec++) {
		n = snprintf(out, 40, "%.*g", prec, d);
		if (strtod(out, NULL) == d)
			break;
	}
	return (size_t)n;
}

int hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int buf_add_escaped(struct buf *b, const void *p, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *s = p;
	int rc = buf_reserve(b, n);
	for (size_t i = 0; i < n && !rc; i++) {
		unsigned char ch = s[i];
		char e[4] = {'\\', 0, 0, 0};
		size_t en = 2;
		if (ch == '\\')
			e[1] = '\\';
		else if (ch == '\t')
			e[1] = 't';
		else if (ch == '\n')
			e[1] = 'n';
		else if (ch == '\r')
			e[1] = 'r';
		else if (ch < 0x20 || ch == 0x7f) {
			e[1] = 'x';
			e[2] = hex[ch >> 4];
			e[3] = hex[ch & 15];
			en = 4;
		} else {
			e[0] = (char)ch;
			en = 1;
		}
		rc = buf_add(b, e, en);
	}
	return rc;
}

int buf_set_unescaped(struct buf *b, const char *s, size_t n)
{
	buf_reset(b);
	int rc = buf_reserve(b, n);
	for (size_t i = 0; i < n && !rc; i++) {
		char ch = s[i];
		if (ch == '\\') {
			if (++i >= n)
				return -EINVAL;
			switch (s[i]) {
			case '\\':
				break;
			case 't':
				ch = '\t';
				break;
			case 'n':
				ch = '\n';
				break;
			case 'r':
				ch = '\r';
				break;
			case 'x': {
				int hi = i + 2 < n ? hex_digit((unsigned char)s[i + 1]) : -1;
				int lo = hi >= 0 ? hex_digit((unsigned char)s[i + 2]) : -1;
				if (lo < 0)
					return -EINVAL;
				ch = (char)(hi << 4 | lo);
				i += 2;
				break;
			}
			default:
				return -EINVAL;
			}
		}
		rc = buf_add(b, &ch, 1);
	}
	return rc;
}

int parse_double(const char *s, size_t n, double *out)
{
	char tmp[128], *end;
	while (n > 0 && is_blank(s[0])) {
		s++;
		n--;
	}
	while (n > 0 && is_blank(s[n - 1]))
		n--;
	/* strtod needs a C string: copy. 127 bytes hold any double in any
	 * sensible spelling. */
	if (n == 0 || n >= sizeof(tmp))
		return -EINVAL;
	memcpy(tmp, s, n);
	tmp[n] = '\0';
	errno = 0;
	double d = strtod(tmp, &end);
	if (end != tmp + n || isnan(d) || (errno == ERANGE && isinf(d)))
		return -EINVAL;
	*out = d;
	return 0;
}

bool has_prefix(const char *s, size_t n, const char *p)
{
	size_t pn = strlen(p);
	return n >= pn && memcmp(s, p, pn) == 0;
}

bool text_is_blank(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!is_blank(s[i]))
			return false;
	return true;
}

void *array_grow(void *v, size_t *cap, size_t len, size_t size, size_t first)
{
	if (len < *cap)
		return v;
	size_t nc = *cap ? *cap * 2 : first;
	void *nv = realloc(v, nc * size);
	if (nv)
		*cap = nc;
	return nv;
}
