/*
 * Fuzz harness: the pure parsers of text a user writes into the tree.
 * The first byte picks one, the rest is the text: whole numbers and
 * doubles (util.c), the escaped line text of stream entries
 * (buf_set_unescaped), the sketch inputs' numbers, "NAME VALUE" pairs and
 * lines (fs_sketch.c), stream IDs (t_stream.c), JSONPaths (t_json.c), the
 * time-series range view options, label filters, aggregator and policy
 * names (fs_timeseries.c, alg_tsagg.c, t_timeseries.c).
 */
#include "fuzz.h"

#include <inttypes.h>
#include <math.h>

#include "types/alg_tsagg.h"
#include "fs/fs_int.h"
#include "fs/fs_xval.h"
#include "types/t_json.h"
#include "types/t_stream.h"
#include "types/t_timeseries.h"

static void numbers(const char *s, size_t n)
{
	uint64_t u;
	int64_t i;
	double d;
	char txt[40];
	if (parse_u64(s, n, &u) == 0) {
		/* Digits only (leading zeros allowed); the value reads back. */
		uint64_t back;
		int len = snprintf(txt, sizeof(txt), "%" PRIu64, u);
		FUZZ_ASSERT((size_t)len <= n && !memchr(s, '-', n) && !memchr(s, ' ', n));
		FUZZ_ASSERT(parse_u64(txt, (size_t)len, &back) == 0 && back == u);
	}
	if (parse_i64(s, n, &i) == 0) {
		uint64_t back;
		if (i >= 0 && s[0] != '-') /* "-0" is 0 to parse_i64 only */
			FUZZ_ASSERT(parse_u64(s, n, &back) == 0 && back == (uint64_t)i);
	}
	if (parse_double(s, n, &d) == 0) {
		FUZZ_ASSERT(!isnan(d));
		size_t len = fmt_double_shortest(d, txt);
		double again;
		FUZZ_ASSERT(parse_double(txt, len, &again) == 0 && again == d);
		if (isfinite(d)) {
			len = fmt_double_g17(d, txt);
			FUZZ_ASSERT(parse_double(txt, len, &again) == 0 && again == d);
		}
	}
	(void)fs_xval_u64(s, n, 0, UINT64_MAX, "fuzz", &u);
	(void)fs_xval_u64(s, n, 1, 1000, "fuzz", &u);
	(void)fs_xval_double(s, n, "fuzz", &d);
}

static void escaped(const char *s, size_t n)
{
	struct buf raw = BUF_INIT, again = BUF_INIT, back = BUF_INIT;
	/* Any bytes escape to text that unescapes to them. */
	FUZZ_ASSERT(buf_add_escaped(&again, s, n) == 0);
	FUZZ_ASSERT(!memchr(again.data, '\n', again.len) && !memchr(again.data, '\t', again.len));
	FUZZ_ASSERT(buf_set_unescaped(&back, again.data, again.len) == 0);
	FUZZ_ASSERT(back.len == n && (n == 0 || memcmp(back.data, s, n) == 0));
	(void)buf_set_unescaped(&raw, s, n);
	buf_release(&raw);
	buf_release(&again);
	buf_release(&back);
}

static int pair_cb(void *arg, const char *nm, size_t nn, const char *v, size_t vn)
{
	const struct fuzz_in *in = arg;
	const char *end = (const char *)in->p + in->n;
	FUZZ_ASSERT(nm >= (const char *)in->p && nm + nn <= end);
	FUZZ_ASSERT(v >= (const char *)in->p && v + vn <= end);
	return nn == 3 && !memcmp(nm, "bad", 3) ? -EINVAL : 0;
}

static void sketch_text(const char *s, size_t n)
{
	struct iovec *items = NULL;
	size_t ni = 0, total = 0;
	if (fs_sketch_lines(s, n, &items, &ni) == 0) {
		for (size_t i = 0; i < ni; i++) {
			FUZZ_ASSERT((const char *)items[i].iov_base >= s);
			FUZZ_ASSERT((const char *)items[i].iov_base + items[i].iov_len <= s + n);
			total += items[i].iov_len;
		}
		FUZZ_ASSERT(total <= n);
	}
	free(items);
	double *v = NULL;
	(void)fs_sketch_numbers(s, n, "fuzz", &v, &ni);
	free(v);
	struct fuzz_in in = {(const uint8_t *)s, n};
	(void)fs_sketch_pairs(s, n, pair_cb, &in);
}

static void stream_ids(const char *s, size_t n)
{
	struct stream_id id;
	char txt[STREAM_ID_MAX];
	for (int allow = 0; allow < 2; allow++) {
		if (stream_id_parse(s, n, allow, &id))
			continue;
		size_t len = stream_id_format(&id, txt);
		FUZZ_ASSERT(len < STREAM_ID_MAX && txt[len] == '\0');
		struct stream_id back;
		FUZZ_ASSERT(stream_id_parse(txt, len, false, &back) == 0);
		FUZZ_ASSERT(stream_id_cmp(&id, &back) == 0);
	}
}

static void ts_text(const char *s, size_t n)
{
	struct ts_range_opt o;
	uint64_t *fts = NULL;
	(void)fs_ts_range_parse(s, n, &o, &fts);
	free(fts);
	(void)fs_ts_view_file_shape.is_name(s, n);
	struct tsagg_filter *f = tsagg_filter_new();
	FUZZ_ASSERT(f);
	if (tsagg_filter_parse(f, s, n) == 0) {
		(void)tsagg_filter_check(f);
		struct ts_label l[2] = {{"a", 1, "b", 1}, {(const char *)s, n, (const char *)s, n}};
		(void)tsagg_filter_match(f, l, 2);
	}
	tsagg_filter_free(f);
	int a = tsagg_parse(s, n);
	if (a >= 0)
		FUZZ_ASSERT(tsagg_name(a) != NULL);
	int p = ts_policy_parse(s, n);
	if (p >= 0)
		FUZZ_ASSERT(ts_policy_name(p) != NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet;
	if (!quiet)
		fuzz_quiet();
	quiet = true;
	if (size == 0)
		return 0;
	size_t n = size - 1;
	char *s = malloc(n ? n : 1);
	if (!s)
		abort();
	memcpy(s, data + 1, n);
	switch (data[0] % 6) {
	case 0:
		numbers(s, n);
		break;
	case 1:
		escaped(s, n);
		break;
	case 2:
		sketch_text(s, n);
		break;
	case 3:
		stream_ids(s, n);
		break;
	case 4:
		(void)json_path_check(s, n);
		break;
	case 5:
		ts_text(s, n);
		break;
	}
	free(s);
	return 0;
}
