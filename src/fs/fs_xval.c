/*
 * fs_xval: reading the values of user.kvfs.* attributes (fs_xval.h).
 * Pure: text in, numbers and options out, one log line per refusal.
 * Layer: fs.
 */
#include "fs/fs_xval.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/names.h"

size_t fs_xval_chomp(const char *v, size_t n)
{
	while (n > 0 && (v[n - 1] == '\n' || v[n - 1] == ' '))
		n--;
	return n;
}

void fs_xval_strip(const char **s, size_t *n)
{
	/* strchr also finds the terminating NUL: NUL bytes are blanks too. */
	while (*n && strchr(" \t\r\n", (*s)[0])) {
		(*s)++;
		(*n)--;
	}
	while (*n && strchr(" \t\r\n", (*s)[*n - 1]))
		(*n)--;
}

int fs_xval_type(const char *v, size_t n, enum kv_type *t)
{
	n = fs_xval_chomp(v, n);
	*t = enc_type_from_name(v, n);
	if (*t == KV_TYPE_NONE) {
		LOG_ERR("%s: unknown type '%.*s'", FS_XATTR_TYPE, (int)n, v);
		return -EINVAL;
	}
	return 0;
}

int fs_xval_ttl(const char *v, size_t n, uint64_t *ms)
{
	n = fs_xval_chomp(v, n);
	if (parse_u64(v, n, ms) || *ms > UINT64_MAX / 2) {
		LOG_ERR("%s: '%.*s' is not a number of milliseconds", FS_XATTR_TTL, (int)n, v);
		return -EINVAL;
	}
	return 0;
}

int fs_xval_expireat(const char *v, size_t n, int64_t *ms)
{
	n = fs_xval_chomp(v, n);
	if (parse_i64(v, n, ms)) {
		LOG_ERR("%s: '%.*s' is not a Unix time in milliseconds", FS_XATTR_EXPIREAT,
			n > 40 ? 40 : (int)n, v);
		return -EINVAL;
	}
	return 0;
}

int fs_xval_u64(const char *v, size_t n, uint64_t min, uint64_t max, const char *what,
		uint64_t *out)
{
	fs_xval_strip(&v, &n);
	if (parse_u64(v, n, out) || *out < min || *out > max) {
		LOG_ERR("%s: '%.*s' is not a whole number from %llu to %llu", what,
			n > 40 ? 40 : (int)n, v, (unsigned long long)min, (unsigned long long)max);
		return -EINVAL;
	}
	return 0;
}

int fs_xval_double(const char *v, size_t n, const char *what, double *out)
{
	if (parse_double(v, n, out)) {
		fs_xval_strip(&v, &n);
		LOG_ERR("%s: '%.*s' is not a number", what, n > 40 ? 40 : (int)n, v);
		return -EINVAL;
	}
	return 0;
}

/* ---- time series ------------------------------------------------------ */

int fs_xval_ts_param(const char *param, const char *v, size_t n, struct ts_options *o,
		     uint64_t *num)
{
	bool is_num = strcmp(param, "duplicate_policy") != 0;
	*num = 0;
	memset(o, 0, sizeof(*o));
	if (is_num && parse_u64(v, n, num)) {
		LOG_ERR("%s%s: '%.*s' is not a number", FS_XATTR_TS, param, (int)n, v);
		return -EINVAL;
	}
	if (strcmp(param, "retention") == 0) {
		o->set = TS_OPT_RETENTION;
		o->retention = *num;
	} else if (strcmp(param, "chunk_size") == 0) {
		o->set = TS_OPT_CHUNK_SIZE;
		o->chunk_size = *num;
	} else if (!is_num) {
		o->set = TS_OPT_POLICY;
		o->policy = ts_policy_parse(v, n);
		if (o->policy < 0) {
			LOG_ERR("%s%s: '%.*s' is not block, first, last, min, max or sum",
				FS_XATTR_TS, param, (int)n, v);
			return -EINVAL;
		}
	} else if (strcmp(param, "last_timestamp") != 0) {
		return -ENOTSUP;
	}
	return 0;
}

int fs_xval_ts_rule(const char *v, size_t n, struct ts_rule *r)
{
	char tmp[512], *save = NULL;
	int i = 0, nu = 0, nf = 0, rc = n >= sizeof(tmp) ? -EINVAL : 0;
	struct ts_rule st = {0}; /* a state without latest= has latest 0 */
	bool state = false;
	memcpy(tmp, v, rc ? 0 : n);
	tmp[rc ? 0 : n] = 0;
	memset(r, 0, sizeof(*r));
	for (char *t = strtok_r(tmp, " \t\n", &save); t && !rc;
	     t = strtok_r(NULL, " \t\n", &save), i++) {
		size_t tn = strlen(t);
		if (i == 0) {
			r->agg = tsagg_parse(t, tn);
			rc = r->agg > 0 ? 0 : -EINVAL;
		} else if (i == 1) {
			rc = parse_u64(t, tn, &r->bucket) || r->bucket == 0 ? -EINVAL : 0;
		} else if (i == 2) {
			rc = parse_u64(t, tn, &r->align) ? -EINVAL : 0;
		} else if (has_prefix(t, tn, "latest=")) {
			state = true;
			rc = parse_u64(t + 7, tn - 7, &st.latest) ? -EINVAL : 0;
		} else if (has_prefix(t, tn, "u=") && nu < TS_AUX_MAX) {
			state = true;
			rc = parse_u64(t + 2, tn - 2, &st.u[nu++]) ? -EINVAL : 0;
		} else if (has_prefix(t, tn, "f=") && nf < TS_AUX_MAX) {
			state = true;
			if (strcmp(t + 2, "nan") == 0)
				st.f[nf++] = NAN;
			else
				rc = parse_double(t + 2, tn - 2, &st.f[nf++]) ? -EINVAL : 0;
		} else {
			rc = -EINVAL;
		}
	}
	if (!rc && i < 3)
		rc = -EINVAL;
	if (!rc) {
		struct ts_rule z;
		tsagg_rule_init(&z, r->agg, r->bucket, r->align);
		if (state && (nu != z.nu || nf != z.nf))
			rc = -EINVAL;
		if (!rc && state) {
			memcpy(z.u, st.u, sizeof(z.u));
			memcpy(z.f, st.f, sizeof(z.f));
			z.latest = st.latest;
		}
		*r = z;
	}
	if (rc)
		LOG_ERR(
		    "%s%s*: write \"AGG BUCKET ALIGN\" (AGG avg, sum, min, max, range, count, "
		    "first, last, std.p, std.s, var.p, var.s), optionally followed by the state "
		    "\"latest=N u=N.. f=X..\" as read; not '%.*s'",
		    FS_XATTR_TS, FS_XATTR_TS_RULE, (int)(n > 80 ? 80 : n), v);
	return rc;
}

int fs_xval_ts_rule_text(struct buf *out, const struct ts_rule *r)
{
	char v[40];
	int rc = buf_printf(out, "%s %llu %llu latest=%llu", tsagg_name(r->agg),
			    (unsigned long long)r->bucket, (unsigned long long)r->align,
			    (unsigned long long)r->latest);
	for (int i = 0; i < r->nu && !rc; i++)
		rc = buf_printf(out, " u=%llu", (unsigned long long)r->u[i]);
	for (int i = 0; i < r->nf && !rc; i++) {
		fmt_double_shortest(r->f[i], v); /* "nan", as the parser reads it */
		rc = buf_printf(out, " f=%s", v);
	}
	return rc;
}

/* ---- sketches --------------------------------------------------------- */

int fs_xval_bloom(const char *param, const char *v, size_t n, struct bloom_state *st)
{
	char what[64];
	uint64_t u = 0;
	int rc;
	snprintf(what, sizeof(what), "user.kvfs.bloom.%s", param);
	if (!strcmp(param, "capacity")) {
		rc = fs_xval_u64(v, n, 1, UINT32_MAX, what, &u);
		st->base_capacity = (uint32_t)u;
	} else if (!strcmp(param, "error_rate")) {
		rc = fs_xval_double(v, n, what, &st->error_rate);
		if (!rc)
			rc = bloom_check_params(st->base_capacity, st->error_rate, what);
	} else if (!strcmp(param, "expansion")) {
		rc = fs_xval_u64(v, n, 0, UINT16_MAX, what, &u);
		st->expansion = (uint16_t)u;
	} else if (!strcmp(param, "nonscaling")) {
		rc = fs_xval_u64(v, n, 0, 1, what, &u);
		if (u == 1)
			st->expansion = 0;
		else if (st->expansion == 0)
			st->expansion = BLOOM_DEFAULT_EXPANSION;
	} else {
		LOG_ERR("%s: no such bloom parameter (capacity, error_rate, expansion, nonscaling)",
			what);
		return -ENOTSUP;
	}
	return rc;
}

int fs_xval_tdigest(const char *param, const char *v, size_t n, uint32_t *compression)
{
	uint64_t comp;
	if (strcmp(param, "compression") != 0)
		return -ENOTSUP;
	n = fs_xval_chomp(v, n);
	if (parse_u64(v, n, &comp) || comp < 1 || comp > TD_COMPRESSION_MAX) {
		LOG_ERR("user.kvfs.tdigest.compression: '%.*s' is not a compression from 1 to %d",
			(int)n, v, TD_COMPRESSION_MAX);
		return -EINVAL;
	}
	*compression = (uint32_t)comp;
	return 0;
}

uint32_t *fs_xval_topk_field(struct topk_params *p, const char *param)
{
	return strcmp(param, "k") == 0	     ? &p->k
	       : strcmp(param, "width") == 0 ? &p->width
	       : strcmp(param, "depth") == 0 ? &p->depth
					     : NULL;
}

int fs_xval_topk(const char *param, const char *v, size_t n, struct topk_params *p)
{
	bool decay = strcmp(param, "decay") == 0;
	uint32_t *field = fs_xval_topk_field(p, param);
	int rc;
	if (!decay && !field)
		return -ENOTSUP;
	n = fs_xval_chomp(v, n);
	if (decay) {
		rc = parse_double(v, n, &p->decay);
	} else {
		uint64_t u = 0;
		rc = parse_u64(v, n, &u);
		if (!rc && u > UINT32_MAX)
			rc = -EINVAL;
		*field = (uint32_t)u;
	}
	if (rc || !hk_params_ok(p->k, p->width, p->depth, p->decay)) {
		LOG_ERR("user.kvfs.topk.%s: '%.*s' is out of range (k 1..%d, width 1..%u, depth "
			"1..%d, width x depth up to %u, decay in (0, 1])",
			param, (int)n, v, TOPK_K_MAX, TOPK_WIDTH_MAX, TOPK_DEPTH_MAX,
			TOPK_CELLS_MAX);
		return -EINVAL;
	}
	return 0;
}

/* ---- item lists ---------------------------------------------------------- */

void fs_items_release(struct fs_items *items)
{
	free(items->v);
	buf_release(&items->store);
	memset(items, 0, sizeof(*items));
}

/* Decode one item (its file-name text t, tn bytes, no NUL) onto the end of
 * items->store; its offset and length go in items->v[items->n++] (made
 * pointers once the store stops moving). */
static int item_add(struct fs_items *items, size_t cap, const char *t, size_t tn, const char *what)
{
	struct buf one = BUF_INIT;
	uint64_t hash;
	int rc = -EINVAL;
	char *z = NULL;
	if (tn == 0) {
		LOG_ERR("%s: item %zu is empty (the empty item is written %%)", what, items->n + 1);
		return -EINVAL;
	}
	if (items->n == cap)
		return -ENOMEM; /* counted before: cannot happen */
	z = strndup(t, tn);
	if (!z)
		return -ENOMEM;
	rc = memchr(t, '\0', tn) ? -EINVAL : names_decode(z, &one, &hash);
	if (rc == NAMES_DECODED_LONG || rc == -EINVAL || rc == -ENAMETOOLONG) {
		LOG_ERR("%s: item %zu ('%.*s') is a long-name reference or not a name", what,
			items->n + 1, tn > 40 ? 40 : (int)tn, t);
		rc = -EINVAL;
	}
	if (!rc) {
		items->v[items->n].iov_base = (void *)(uintptr_t)items->store.len;
		items->v[items->n].iov_len = one.len;
		items->n++;
		rc = one.len ? buf_add(&items->store, one.data, one.len) : 0;
	}
	free(z);
	buf_release(&one);
	return rc;
}

/* Must byte p[i] of an item be escaped? The file-name rules (names.c):
 * '/', NUL, and a '%' that would read as an escape; and the separators
 * of item lists: newline, tab, comma. */
static bool item_needs_escape(const uint8_t *p, size_t n, size_t i)
{
	switch (p[i]) {
	case '/':
	case '\0':
	case '\n':
	case '\t':
	case ',':
		return true;
	case '%':
		return i + 1 == n || p[i + 1] == '~' ||
		       (i + 2 < n && hex_digit(p[i + 1]) >= 0 && hex_digit(p[i + 2]) >= 0);
	default:
		return false;
	}
}

int fs_items_encode(struct buf *out, const void *item, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	const uint8_t *p = item;
	if (n == 0)
		return buf_add(out, "%", 1);
	if (n == 1 && p[0] == '.')
		return buf_add(out, "%2E", 3);
	if (n == 2 && p[0] == '.' && p[1] == '.')
		return buf_add(out, "%2E%2E", 6);
	int rc = buf_reserve(out, n);
	for (size_t i = 0, run = 0; !rc && i <= n; i++) {
		if (i < n && !item_needs_escape(p, n, i))
			continue;
		/* The bytes since the last escape as they are, then this one's. */
		rc = buf_add(out, p + run, i - run);
		if (!rc && i < n) {
			char e[3] = {'%', hex[p[i] >> 4], hex[p[i] & 0x0f]};
			rc = buf_add(out, e, sizeof(e));
		}
		run = i + 1;
	}
	return rc;
}

int fs_items_decode(const char *s, size_t n, struct buf *out)
{
	buf_reset(out);
	if (n == 1 && s[0] == '%')
		return 0; /* the empty item */
	int rc = buf_reserve(out, n);
	for (size_t i = 0; !rc && i < n; i++) {
		int hi = i + 2 < n && s[i] == '%' ? hex_digit((uint8_t)s[i + 1]) : -1;
		int lo = hi >= 0 ? hex_digit((uint8_t)s[i + 2]) : -1;
		if (lo >= 0) {
			rc = buf_add_u8(out, (uint8_t)(hi << 4 | lo));
			i += 2;
		} else {
			rc = buf_add(out, s + i, 1);
		}
	}
	return rc;
}

int fs_items_split(const char *s, size_t n, const char *what, struct fs_items *items)
{
	size_t cap = 1, start = 0;
	int rc = 0;
	memset(items, 0, sizeof(*items));
	if (n == 0) {
		LOG_ERR("%s: no items (give them separated by ',')", what);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		cap += s[i] == ',';
	items->v = calloc(cap, sizeof(*items->v));
	if (!items->v)
		return -ENOMEM;
	for (size_t i = 0; i <= n && !rc; i++) {
		if (i < n && s[i] != ',')
			continue;
		rc = item_add(items, cap, s + start, i - start, what);
		start = i + 1;
	}
	/* every item empty: nothing stored, no data to point into */
	char *base = items->store.data ? items->store.data : (char *)"";
	for (size_t i = 0; !rc && i < items->n; i++)
		items->v[i].iov_base = base + (uintptr_t)items->v[i].iov_base;
	return rc;
}
