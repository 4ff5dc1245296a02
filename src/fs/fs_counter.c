/*
 * fs_counter: counters (docs/mapping.md, "Counters"). A name ending in
 * ":incr", ":decr", ":incrby:N", ":decrby:N" or ":incrbyfloat:X" is an
 * action (a read with a side effect, never listed): of a namespace, on
 * the key named by the rest (INCR ... INCRBYFLOAT on a string, TS.INCRBY
 * and TS.DECRBY on a time series; fs_counter_file_shape), and of a hash
 * or zset, on the field or member named by the rest (HINCRBY,
 * HINCRBYFLOAT, ZINCRBY; fs_hash.c and fs_zset.c call the parser here).
 * Each open increments once, in one batch, and answers the new value and
 * a newline. Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>

#include "types/t_string.h"
#include "types/t_timeseries.h"

static const struct {
	const char *suffix; /* after the base name */
	bool arg;	    /* followed by ":N" */
	bool fl;	    /* N is a float (INCRBYFLOAT) */
	int sign;	    /* +1, -1 */
} counters[] = {
    {":incr", false, false, +1},  {":decr", false, false, -1},	    {":incrby", true, false, +1},
    {":decrby", true, false, -1}, {":incrbyfloat", true, true, +1},
};

int fs_counter_parse(const char *name, size_t n, struct fs_counter *ct)
{
	/* The argument is what follows the last ':' (numbers hold none). */
	const char *colon = memrchr(name, ':', n);
	size_t head = colon ? (size_t)(colon - name) : 0;
	for (size_t i = 0; colon && i < sizeof(counters) / sizeof(counters[0]); i++) {
		const char *s = counters[i].suffix;
		size_t sn = strlen(s);
		size_t end = counters[i].arg ? head : n; /* where the suffix ends */
		if (end <= sn || memcmp(name + end - sn, s, sn) != 0)
			continue;
		ct->base = end - sn;
		ct->fl = counters[i].fl;
		ct->sign = counters[i].sign;
		ct->arg = counters[i].arg ? colon + 1 : NULL;
		ct->an = counters[i].arg ? n - head - 1 : 0;
		return 1;
	}
	return 0;
}

int fs_counter_int(const struct fs_counter *ct, const char *name, size_t n, int64_t *by)
{
	int64_t v = 1;
	if (ct->arg && string_num_int(ct->arg, ct->an, 0, &v)) {
		LOG_ERR("'%.*s': '%.*s' is not a whole number from -2^63 to 2^63-1", (int)n, name,
			(int)ct->an, ct->arg);
		return -EINVAL;
	}
	if (ct->sign < 0 && v == INT64_MIN) {
		LOG_ERR("'%.*s': the decrement would overflow", (int)n, name);
		return -ERANGE;
	}
	*by = ct->sign * v;
	return 0;
}

int fs_counter_float(const struct fs_counter *ct, const char *name, size_t n, double *by)
{
	double v = 1;
	if (ct->arg && string_num_float(ct->arg, ct->an, 0, &v)) {
		LOG_ERR("'%.*s': '%.*s' is not a number", (int)n, name, (int)ct->an, ct->arg);
		return -EINVAL;
	}
	*by = ct->sign * v;
	return 0;
}

void fs_counter_refused(int rc, const char *name, size_t n, const char *what, bool fl)
{
	if (rc == -EINVAL)
		LOG_ERR("'%.*s': the %s is not %s; it is unchanged", (int)n, name, what,
			fl ? "a number" : "an integer");
	else if (rc == -ERANGE)
		LOG_ERR("'%.*s': the result would be %s; the %s is unchanged", (int)n, name,
			fl ? "infinite or not a number" : "out of the 64-bit range", what);
}

/* ---- The namespace's counters: string and time-series keys ---- */

static bool counter_is_name(const char *name, size_t n)
{
	struct fs_counter ct;
	return fs_counter_parse(name, n, &ct) == 1;
}

static size_t counter_act_key(const char *name, size_t n)
{
	struct fs_counter ct;
	return fs_counter_parse(name, n, &ct) == 1 ? ct.base : 0;
}

/* TS.INCRBY / TS.DECRBY at the clock on series b; its new value, as its
 * samples show it, into out. */
static int counter_ts(struct fs *fs, const struct fs_counter *ct, const struct ks_key *k,
		      const struct ks_key *b, struct buf *out)
{
	double by, v;
	char text[40];
	int rc = fs_counter_float(ct, k->key, k->klen, &by);
	if (rc) /* logged */
		return rc;
	rc = ts_incrby(fs->ks, b, TS_NOW, by, NULL, &v, NULL); /* logs its EINVAL */
	if (!rc) {
		size_t tn = fmt_double_shortest(v, text);
		text[tn++] = '\n';
		rc = buf_set(out, text, tn);
	}
	return rc;
}

static int counter_act(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	struct fs_counter ct;
	struct ks_info info;
	int64_t n;
	double d;
	if (fs_counter_parse(k->key, k->klen, &ct) != 1)
		return -ENOENT;
	struct ks_key b = *k; /* the key counted: the name's base */
	b.klen = ct.base;
	int rc = ks_lookup(fs->ks, &b, &info);
	if (rc == 0 && !info.empty && info.type == KV_TYPE_TIMESERIES)
		return counter_ts(fs, &ct, k, &b, out);
	if (rc == 0 && (info.empty || info.type != KV_TYPE_STRING)) {
		LOG_ERR("'%.*s': '%.*s' is a %s%s; counters are strings and time series%s",
			(int)k->klen, k->key, (int)b.klen, b.key,
			info.empty ? "remembered empty " : "", enc_type_name(info.type),
			info.type == KV_TYPE_JSON ? " (a JSON number adds with >> on its path name)"
						  : "");
		return -KV_EWRONGTYPE;
	}
	if (rc && rc != -ENOENT)
		return rc;
	rc = ct.fl ? fs_counter_float(&ct, k->key, k->klen, &d)
		   : fs_counter_int(&ct, k->key, k->klen, &n);
	if (rc) /* logged */
		return rc;
	if (ct.fl) {
		rc = string_incrbyfloat(fs->ks, &b, d, &d);
		if (!rc && !(rc = string_num_fmt_float(d, out)))
			rc = buf_add(out, "\n", 1);
	} else {
		rc = string_incrby(fs->ks, &b, n, &n);
		if (!rc)
			rc = buf_printf(out, "%" PRId64 "\n", n);
	}
	if (rc == -KV_EWRONGTYPE)
		LOG_ERR("'%.*s': '%.*s' changed type meanwhile", (int)k->klen, k->key, (int)b.klen,
			b.key);
	fs_counter_refused(rc, k->key, k->klen, "value", ct.fl);
	return rc;
}

const struct fs_file_shape fs_counter_file_shape = {
    .type = KV_TYPE_STRING,
    .is_name = counter_is_name,
    .stat = fs_action_file_stat,
    .open = fs_action_file_open,
    .load = fs_action_file_load,
    .act = counter_act,
    .act_key = counter_act_key,
};
