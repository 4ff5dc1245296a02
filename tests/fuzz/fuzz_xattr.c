/*
 * Fuzz harness: the values of kvfs's own extended attributes, user.kvfs.*
 * (fs_xval.c: pure, no store). Input: [parser u8] [param: u16 length,
 * bytes] then the value. The parser byte picks:
 *   0  user.kvfs.type        a type name that reads back as the same type
 *   1  user.kvfs.ttl         milliseconds, printed and read back
 *   2  a whole number        in a range the param's first bytes give
 *   3  a double              printed shortest and read back
 *   4  user.kvfs.ts.PARAM    retention, chunk_size, duplicate_policy,
 *                            last_timestamp (PARAM: the param field)
 *   5  user.kvfs.ts.rule.D   a rule: what it reads as (fs_xval_ts_rule_text)
 *                            must read back as the same rule, state and all
 *   6  user.kvfs.bloom.PARAM on the default parameters
 *   7  user.kvfs.tdigest.compression
 *   8  user.kvfs.topk.PARAM  on the default parameters: valid if accepted
 *   9  the trimming of values (fs_xval_chomp, fs_xval_strip)
 *  10  an item list (fs_items_split): the items written back, every byte
 *      as %HH (the empty item as %), split again into the same items
 */
#include "fuzz.h"

#include <inttypes.h>
#include <math.h>

#include "fs/fs_xval.h"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static void type_name(const char *v, size_t n)
{
	enum kv_type t;
	if (fs_xval_type(v, n, &t))
		return;
	const char *name = enc_type_name(t);
	enum kv_type back;
	FUZZ_ASSERT(t != KV_TYPE_NONE);
	FUZZ_ASSERT(fs_xval_type(name, strlen(name), &back) == 0 && back == t);
}

static void ttl(const char *v, size_t n)
{
	uint64_t ms, back;
	char txt[24];
	if (fs_xval_ttl(v, n, &ms))
		return;
	FUZZ_ASSERT(ms <= UINT64_MAX / 2);
	int len = snprintf(txt, sizeof(txt), "%" PRIu64 "\n", ms);
	FUZZ_ASSERT(fs_xval_ttl(txt, (size_t)len, &back) == 0 && back == ms);
}

static void whole(const char *p, size_t pn, const char *v, size_t n)
{
	uint64_t min = pn > 0 ? (uint8_t)p[0] : 0, max = pn > 1 ? (uint64_t)(uint8_t)p[1] << 8 : 0;
	uint64_t u, back;
	char txt[24];
	if (pn > 2 && p[2])
		max = UINT64_MAX;
	if (fs_xval_u64(v, n, min, max, "fuzz", &u))
		return;
	FUZZ_ASSERT(u >= min && u <= max);
	int len = snprintf(txt, sizeof(txt), " %" PRIu64 "\n", u);
	FUZZ_ASSERT(fs_xval_u64(txt, (size_t)len, min, max, "fuzz", &back) == 0 && back == u);
}

static void number(const char *v, size_t n)
{
	double d, back;
	char txt[40];
	if (fs_xval_double(v, n, "fuzz", &d))
		return;
	FUZZ_ASSERT(!isnan(d));
	size_t len = fmt_double_shortest(d, txt);
	FUZZ_ASSERT(fs_xval_double(txt, len, "fuzz", &back) == 0 && back == d);
}

static void ts_param(const char *param, const char *v, size_t n)
{
	struct ts_options o;
	uint64_t num, back;
	n = fs_xval_chomp(v, n);
	int rc = fs_xval_ts_param(param, v, n, &o, &num);
	FUZZ_ASSERT(rc == 0 || rc == -EINVAL || rc == -ENOTSUP);
	if (rc)
		return;
	FUZZ_ASSERT(o.set == 0 || o.set == TS_OPT_RETENTION || o.set == TS_OPT_CHUNK_SIZE ||
		    o.set == TS_OPT_POLICY);
	FUZZ_ASSERT(o.labels == NULL && o.nlabels == 0);
	if (o.set == TS_OPT_POLICY) {
		/* What the attribute reads back sets the same policy. */
		const char *name = ts_policy_name(o.policy);
		struct ts_options again;
		FUZZ_ASSERT(name);
		FUZZ_ASSERT(fs_xval_ts_param(param, name, strlen(name), &again, &back) == 0);
		FUZZ_ASSERT(again.set == TS_OPT_POLICY && again.policy == o.policy);
	} else {
		char txt[24];
		int len = snprintf(txt, sizeof(txt), "%" PRIu64, num);
		struct ts_options again;
		FUZZ_ASSERT(fs_xval_ts_param(param, txt, (size_t)len, &again, &back) == 0);
		FUZZ_ASSERT(back == num && again.set == o.set);
	}
}

static bool same_double(double a, double b)
{
	return (isnan(a) && isnan(b)) || a == b;
}

static void ts_rule(const char *v, size_t n)
{
	struct ts_rule r, back;
	struct buf txt = BUF_INIT;
	if (fs_xval_ts_rule(v, n, &r))
		return;
	FUZZ_ASSERT(r.bucket > 0 && r.nu <= TS_AUX_MAX && r.nf <= TS_AUX_MAX);
	FUZZ_ASSERT(fs_xval_ts_rule_text(&txt, &r) == 0);
	/* What getfattr shows, setfattr takes back (rsync -X copies it). */
	FUZZ_ASSERT(fs_xval_ts_rule(txt.data, txt.len, &back) == 0);
	FUZZ_ASSERT(back.agg == r.agg && back.bucket == r.bucket && back.align == r.align);
	FUZZ_ASSERT(back.latest == r.latest && back.nu == r.nu && back.nf == r.nf);
	for (int i = 0; i < r.nu; i++)
		FUZZ_ASSERT(back.u[i] == r.u[i]);
	for (int i = 0; i < r.nf; i++)
		FUZZ_ASSERT(same_double(back.f[i], r.f[i]));
	buf_release(&txt);
}

static void bloom(const char *param, const char *v, size_t n)
{
	struct bloom_state st = {.n_filters = 1,
				 .base_capacity = BLOOM_DEFAULT_CAPACITY,
				 .error_rate = BLOOM_DEFAULT_ERROR_RATE,
				 .expansion = BLOOM_DEFAULT_EXPANSION};
	int rc = fs_xval_bloom(param, v, n, &st);
	FUZZ_ASSERT(rc == 0 || rc == -EINVAL || rc == -ENOTSUP);
	if (rc)
		return;
	FUZZ_ASSERT(st.base_capacity >= 1);
	FUZZ_ASSERT(bloom_check_params(st.base_capacity, st.error_rate, "fuzz") == 0);
}

static void tdigest(const char *param, const char *v, size_t n)
{
	uint32_t comp;
	int rc = fs_xval_tdigest(param, v, n, &comp);
	FUZZ_ASSERT(rc == 0 || rc == -EINVAL || rc == -ENOTSUP);
	if (!rc)
		FUZZ_ASSERT(comp >= 1 && comp <= TD_COMPRESSION_MAX);
}

static void topk(const char *param, const char *v, size_t n)
{
	struct topk_params p = {TOPK_K_DEFAULT, TOPK_WIDTH_DEFAULT, TOPK_DEPTH_DEFAULT,
				TOPK_DECAY_DEFAULT};
	int rc = fs_xval_topk(param, v, n, &p);
	FUZZ_ASSERT(rc == 0 || rc == -EINVAL || rc == -ENOTSUP);
	if (!rc)
		FUZZ_ASSERT(hk_params_ok(p.k, p.width, p.depth, p.decay));
}

static void trims(const char *v, size_t n)
{
	size_t c = fs_xval_chomp(v, n);
	FUZZ_ASSERT(c <= n && (c == 0 || (v[c - 1] != ' ' && v[c - 1] != '\n')));
	const char *s = v;
	size_t sn = n;
	fs_xval_strip(&s, &sn);
	FUZZ_ASSERT(s >= v && s + sn <= v + n);
	FUZZ_ASSERT(sn == 0 || (!strchr(" \t\r\n", s[0]) && !strchr(" \t\r\n", s[sn - 1])));
}

static void items(const char *v, size_t n)
{
	struct fs_items a, b;
	struct buf text = BUF_INIT;
	size_t commas = 0;
	for (size_t i = 0; i < n; i++)
		commas += v[i] == ',';
	if (fs_items_split(v, n, "fuzz", &a)) {
		fs_items_release(&a);
		return;
	}
	FUZZ_ASSERT(a.n >= 1 && a.n <= commas + 1);
	for (size_t i = 0; i < a.n; i++) {
		const uint8_t *p = a.v[i].iov_base;
		if (i && buf_add(&text, ",", 1))
			abort();
		if (a.v[i].iov_len == 0 && buf_add(&text, "%", 1))
			abort();
		for (size_t j = 0; j < a.v[i].iov_len; j++)
			if (buf_printf(&text, "%%%02X", p[j]))
				abort();
	}
	FUZZ_ASSERT(fs_items_split(text.data, text.len, "fuzz", &b) == 0 && b.n == a.n);
	for (size_t i = 0; i < a.n; i++)
		FUZZ_ASSERT(a.v[i].iov_len == b.v[i].iov_len &&
			    !memcmp(a.v[i].iov_base, b.v[i].iov_base, a.v[i].iov_len));
	fs_items_release(&a);
	fs_items_release(&b);
	buf_release(&text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	unsigned op = fuzz_u8(&in) % 11;
	size_t pn;
	const uint8_t *pp = fuzz_field(&in, &pn);
	char *param = fuzz_strdup(pp, pn);
	/* A copy of its own, without a NUL after it: a read past the value
	 * is caught. */
	size_t n = in.n;
	char *v = malloc(n ? n : 1);
	if (!v)
		abort();
	if (n)
		memcpy(v, in.p, n);

	switch (op) {
	case 0:
		type_name(v, n);
		break;
	case 1:
		ttl(v, n);
		break;
	case 2:
		whole(param, pn, v, n);
		break;
	case 3:
		number(v, n);
		break;
	case 4:
		ts_param(param, v, n);
		break;
	case 5:
		ts_rule(v, n);
		break;
	case 6:
		bloom(param, v, n);
		break;
	case 7:
		tdigest(param, v, n);
		break;
	case 8:
		topk(param, v, n);
		break;
	case 9:
		trims(v, n);
		break;
	case 10:
		items(v, n);
		break;
	}
	free(param);
	free(v);
	return 0;
}
