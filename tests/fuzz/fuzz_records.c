/*
 * Fuzz harness: the type modules' decoders of stored records. Each run
 * plants a key's records as another writer (or a corrupt disk) could
 * have left them, in a temporary database, then calls the read verbs of
 * one type on it: they must answer or refuse (-EUCLEAN, -KV_EWRONGTYPE,
 * ...), never crash.
 *
 * Input: [verbs u8] [metadata record: u16 length, bytes] then any number
 * of sub-key records [cf u8] [sub-key: u16 length, bytes] [value: u16
 * length, bytes]. Sub-keys take the version of the planted metadata (if
 * it decodes). `verbs` picks the type whose verbs read the key, whatever
 * type the metadata says (so wrong-type paths run too).
 */
#include "fuzz.h"

#include <math.h>

#include "engine/encoding.h"
#include "types/t_bitmap.h"
#include "types/t_bloom.h"
#include "types/t_hash.h"
#include "types/t_hll.h"
#include "types/t_json.h"
#include "types/t_list.h"
#include "types/t_set.h"
#include "types/t_sortedint.h"
#include "types/t_stream.h"
#include "types/t_string.h"
#include "types/t_tdigest.h"
#include "types/t_timeseries.h"
#include "types/t_topk.h"
#include "types/t_zset.h"

/* At most this many records per input (the sub-key loop). */
#define MAX_RECORDS 64

static struct keyspace *ks;
static struct buf out = BUF_INIT;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static int list_cb(void *arg, uint64_t pos, const char *v, size_t vn)
{
	(void)arg;
	(void)pos;
	(void)v;
	(void)vn;
	return 0;
}

static int zset_cb(void *arg, const char *m, size_t mn, double score)
{
	(void)arg;
	(void)m;
	(void)mn;
	(void)score;
	return 0;
}

static int pel_cb(void *arg, const struct stream_id *id, const struct stream_pel *p,
		  uint64_t idle_ms)
{
	(void)arg;
	(void)id;
	(void)p;
	(void)idle_ms;
	return 0;
}

static int consumer_cb(void *arg, const char *name, size_t n, const struct stream_consumer *c)
{
	(void)arg;
	(void)name;
	(void)n;
	(void)c;
	return 0;
}

static int group_cb(void *arg, const char *name, size_t n, const struct stream_group *g)
{
	(void)g;
	(void)stream_consumers(ks, arg, name, n, consumer_cb, arg);
	(void)stream_pending(ks, arg, name, n, NULL, NULL, 0, NULL, 0, 0, pel_cb, NULL);
	return 0;
}

static int label_cb(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	(void)arg;
	(void)name;
	(void)nn;
	(void)v;
	(void)vn;
	return 0;
}

static int rule_cb(void *arg, const char *dst, size_t dn, const struct ts_rule *r)
{
	(void)arg;
	(void)dst;
	(void)dn;
	(void)r;
	return 0;
}

static void read_string(const struct ks_key *k)
{
	uint64_t n;
	(void)string_get(ks, k, &out);
	(void)string_getrange(ks, k, 1, -2, &out);
	(void)string_read(ks, k, 1, 100, &out);
	(void)string_strlen(ks, k, &n);
}

static void read_hash(const struct ks_key *k)
{
	uint64_t n;
	int err = 0;
	const char *f, *v;
	size_t fn, vn;
	(void)hash_len(ks, k, &n);
	(void)hash_get(ks, k, "f", 1, &out);
	(void)hash_exists(ks, k, "f", 1);
	(void)hash_strlen(ks, k, "f", 1, &n);
	struct hash_iter *it = hash_iter_new(ks, k, NULL, 0, &err);
	for (int i = 0; it && i < MAX_RECORDS * 2 && hash_iter_next(it, &f, &fn, &v, &vn) == 1; i++)
		;
	hash_iter_free(it);
}

static void read_list(const struct ks_key *k)
{
	uint64_t n, pos;
	int err = 0;
	const char *v;
	size_t vn;
	(void)list_len(ks, k, &n);
	(void)list_index(ks, k, 0, &out);
	(void)list_index(ks, k, -1, &out);
	(void)list_range(ks, k, 0, -1, list_cb, NULL);
	struct list_iter *it = list_iter_new(ks, k, 0, &err);
	if (it)
		(void)list_iter_len(it);
	for (int i = 0; it && i < MAX_RECORDS * 2 && list_iter_next(it, &pos, &v, &vn) == 1; i++)
		;
	list_iter_free(it);
}

static void read_set(const struct ks_key *k)
{
	uint64_t n;
	int err = 0;
	const char *m;
	size_t mn;
	(void)set_card(ks, k, &n);
	(void)set_ismember(ks, k, "m", 1);
	struct set_iter *it = set_iter_new(ks, k, NULL, 0, &err);
	for (int i = 0; it && i < MAX_RECORDS * 2 && set_iter_next(it, &m, &mn) == 1; i++)
		;
	set_iter_free(it);
}

static void read_zset(const struct ks_key *k)
{
	uint64_t n;
	double score;
	int err = 0;
	const char *m;
	size_t mn;
	(void)zset_card(ks, k, &n);
	(void)zset_score(ks, k, "m", 1, &score);
	(void)zset_rank(ks, k, "m", 1, false, &n);
	(void)zset_rank(ks, k, "m", 1, true, &n);
	(void)zset_range_by_rank(ks, k, 0, -1, false, zset_cb, NULL);
	(void)zset_range_by_rank(ks, k, 0, -1, true, zset_cb, NULL);
	struct zset_score_range r = {-INFINITY, INFINITY, false, false};
	(void)zset_range_by_score(ks, k, &r, false, 0, -1, zset_cb, NULL);
	(void)zset_range_by_score(ks, k, &r, true, 1, 2, zset_cb, NULL);
	for (int rev = 0; rev < 2; rev++) {
		struct zset_score_iter *it = zset_score_iter_new(ks, k, rev, NULL, &err);
		for (int i = 0;
		     it && i < MAX_RECORDS * 2 && zset_score_iter_next(it, &m, &mn, &score) == 1;
		     i++)
			;
		zset_score_iter_free(it);
	}
	struct zset_member_iter *it = zset_member_iter_new(ks, k, NULL, 0, &err);
	for (int i = 0;
	     it && i < MAX_RECORDS * 2 && zset_member_iter_next(it, &m, &mn, &score) == 1; i++)
		;
	zset_member_iter_free(it);
}

static void read_sortedint(const struct ks_key *k)
{
	uint64_t n, id, ids[8];
	size_t got;
	int err = 0;
	(void)sortedint_card(ks, k, &n);
	(void)sortedint_exists(ks, k, 1);
	(void)sortedint_range(ks, k, NULL, 0, false, ids, 8, &got);
	(void)sortedint_range(ks, k, NULL, 1, true, ids, 8, &got);
	for (int rev = 0; rev < 2; rev++) {
		struct sortedint_iter *it = sortedint_iter_new(ks, k, rev, NULL, &err);
		for (int i = 0; it && i < MAX_RECORDS * 2 && sortedint_iter_next(it, &id) == 1; i++)
			;
		sortedint_iter_free(it);
	}
}

static void read_bitmap(const struct ks_key *k)
{
	uint64_t n;
	int64_t pos;
	(void)bitmap_getbit(ks, k, 5);
	(void)bitmap_getbit(ks, k, 8192 * 3 + 1);
	(void)bitmap_bitcount(ks, k, 0, -1, &n);
	(void)bitmap_bitpos(ks, k, true, 0, -1, false, &pos);
	(void)bitmap_bitpos(ks, k, false, 1, -2, true, &pos);
	(void)bitmap_getrange(ks, k, 0, -1, &out);
	(void)bitmap_read(ks, k, 0, 5000, &out);
	(void)bitmap_strlen(ks, k, &n);
}

static void read_json(const struct ks_key *k)
{
	uint64_t n;
	const char *type;
	(void)json_get(ks, k, "$", 1, &out);
	(void)json_get(ks, k, "$.a", 3, &out);
	(void)json_get(ks, k, "$[0]", 4, &out);
	(void)json_text_len(ks, k, &n);
	(void)json_type(ks, k, "$", 1, &type);
	(void)json_objkeys(ks, k, "$", 1, &out);
}

static void read_stream(const struct ks_key *k)
{
	uint64_t n;
	struct stream_info info;
	struct stream_id id = {1, 0}, got;
	int err = 0;
	const char *v;
	size_t vn;
	(void)stream_len(ks, k, &n);
	(void)stream_info(ks, k, &info);
	(void)stream_get(ks, k, &id, &out);
	for (int rev = 0; rev < 2; rev++) {
		struct stream_iter *it =
		    stream_iter_new(ks, k, rev, NULL, false, NULL, false, &err);
		for (int i = 0;
		     it && i < MAX_RECORDS * 2 && stream_iter_next(it, &got, &v, &vn) == 1; i++) {
			size_t pos = 0;
			struct stream_str s;
			while (stream_value_next(v, vn, &pos, &s) == 1)
				;
		}
		stream_iter_free(it);
	}
	(void)stream_groups(ks, k, group_cb, (void *)k);
	(void)stream_pending(ks, k, "g", 1, NULL, NULL, 0, NULL, 0, 0, pel_cb, NULL);
}

static void read_timeseries(const struct ks_key *k)
{
	struct ts_info info = {0};
	struct ts_sample last, *s = NULL;
	size_t n = 0;
	int err = 0;
	(void)ts_get(ks, k, &last);
	if (ts_info(ks, k, &info) == 0)
		buf_release(&info.source);
	struct ts_range_opt o;
	ts_range_opt_init(&o);
	if (ts_range(ks, k, &o, false, &s, &n) == 0)
		free(s);
	s = NULL;
	o.agg = tsagg_parse("avg", 3);
	o.bucket = 10;
	if (o.agg >= 0 && ts_range(ks, k, &o, true, &s, &n) == 0)
		free(s);
	(void)ts_labels(ks, k, label_cb, NULL);
	(void)ts_rules(ks, k, rule_cb, NULL);
	struct ts_chunk_iter *it = ts_chunk_iter_new(ks, k, NULL, &err);
	uint64_t id;
	uint32_t count;
	for (int i = 0; it && i < MAX_RECORDS * 2 && ts_chunk_iter_next(it, &id, &count) == 1;
	     i++) {
		const struct ts_sample *cs;
		(void)ts_chunk_iter_samples(it, &cs, &n);
		struct ts_sample *copy = NULL;
		if (ts_chunk_get(ks, k, id, &copy, &n) == 0)
			free(copy);
	}
	ts_chunk_iter_free(it);
}

static void read_hll(const struct ks_key *k)
{
	static uint8_t regs[HLL_DENSE_BYTES];
	uint64_t n;
	(void)hll_registers(ks, k, regs);
	(void)hll_count(ks, k, 1, &n);
}

static void read_bloom(const struct ks_key *k)
{
	struct bloom_state st;
	uint64_t n;
	int found[2];
	struct iovec items[2] = {{"a", 1}, {"hello", 5}};
	if (bloom_info(ks, k, &st) == 0)
		(void)bloom_state_capacity(&st);
	(void)bloom_card(ks, k, &n);
	(void)bloom_exists(ks, k, items, 2, found);
	(void)bloom_filter(ks, k, 0, &out);
	(void)bloom_filter(ks, k, 1, &out);
}

static void read_tdigest(const struct ks_key *k)
{
	struct tdigest_info info;
	struct td_digest d;
	double *buf = NULL;
	size_t nbuf = 0;
	(void)tdigest_info(ks, k, &info);
	if (tdigest_digest(ks, k, &d, &info) == 0) {
		(void)td_quantile(&d, 0.5);
		(void)td_cdf(&d, 1.0);
		(void)td_rank(&d, 1.0);
		(void)td_byrank(&d, 1);
		(void)td_trimmed_mean(&d, 0.1, 0.9);
	}
	td_release(&d);
	(void)tdigest_state(ks, k, &info, &d, &buf, &nbuf);
	td_release(&d);
	free(buf);
}

static void read_topk(const struct ks_key *k)
{
	struct topk_params p;
	struct hk t;
	uint32_t count;
	(void)topk_info(ks, k, &p);
	(void)topk_has(ks, k, "a", 1);
	(void)topk_count_of(ks, k, "a", 1, &count);
	if (topk_state(ks, k, &t) == 0) {
		/* hk_list fills t.n pointers. */
		const struct hk_entry **e = calloc(t.n ? t.n : 1, sizeof(*e));
		if (!e)
			abort();
		hk_list(&t, e);
		free(e);
		hk_release(&t);
	}
}

static void (*const readers[])(const struct ks_key *) = {
    read_string, read_hash,   read_list,       read_set, read_zset,  read_sortedint, read_bitmap,
    read_json,	 read_stream, read_timeseries, read_hll, read_bloom, read_tdigest,   read_topk,
};
#define NREADERS (sizeof(readers) / sizeof(readers[0]))

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	struct ks_key k = fuzz_key_next();
	ks = fuzz_db();
	unsigned verbs = fuzz_u8(&in) % NREADERS;
	size_t mn;
	const uint8_t *mv = fuzz_field(&in, &mn);
	struct enc_meta m;
	uint64_t version = enc_meta_decode(mv, mn, &m) == 0 ? m.version : 0;
	fuzz_put_meta(&k, mv, mn);
	for (int i = 0; i < MAX_RECORDS && in.n > 0; i++) {
		static const enum store_cf cfs[] = {STORE_CF_DEFAULT, STORE_CF_ZSET_SCORE,
						    STORE_CF_STREAM};
		enum store_cf cf = cfs[fuzz_u8(&in) % 3];
		size_t sn, vn;
		const uint8_t *sub = fuzz_field(&in, &sn);
		const uint8_t *v = fuzz_field(&in, &vn);
		fuzz_put_sub(&k, cf, version, sub, sn, v, vn);
	}
	readers[verbs](&k);
	buf_reset(&out);
	return 0;
}
