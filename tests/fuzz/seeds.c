/*
 * Writes the store-backed harnesses' seed corpora (make fuzz-seeds):
 * the keys the unit tests build (HSET h f v, RPUSH, ZADD, XADD with a
 * consumer group, TS.ADD with a label and a rule, PFADD, BF.ADD,
 * TDIGEST.ADD, TOPK.ADD, ...) made with the type verbs in a temporary
 * database, then dumped record by record in fuzz_records' input format,
 * and the sketch and time-series state files as the tree shows them, in
 * fuzz_tree's. Usage: fuzz-seeds CORPUS_DIR (tests/fuzz/corpus).
 */
#include "fuzz.h"

#include <sys/stat.h>

#include "engine/encoding.h"
#include "fs/fs_int.h"
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	(void)data;
	(void)size;
	return 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	return 0;
}

static const char *corpus;
static struct keyspace *ks;

#define KEY(s) (&(struct ks_key){KS_DEFAULT_NS, strlen(KS_DEFAULT_NS), (s), strlen(s), NULL, NULL})

static void write_seed(const char *harness, const char *name, const void *d, size_t n)
{
	struct buf p = BUF_INIT;
	if (buf_printf(&p, "%s/%s", corpus, harness))
		abort();
	mkdir(p.data, 0755);
	if (buf_printf(&p, "/%s", name))
		abort();
	FILE *f = fopen(p.data, "wb");
	if (!f || fwrite(d, 1, n, f) != n || fclose(f)) {
		perror(p.data);
		exit(1);
	}
	buf_release(&p);
}

static void add_field(struct buf *b, const void *p, size_t n)
{
	if (n > 0xffff)
		n = 0xffff;
	if (buf_add_be16(b, (uint16_t)n) || buf_add(b, p, n))
		abort();
}

/* Key `key`'s records in fuzz_records' format, read with verbs `verbs`. */
static void dump_key(const char *key, unsigned verbs, const char *seed)
{
	static const enum store_cf cfs[] = {STORE_CF_DEFAULT, STORE_CF_ZSET_SCORE, STORE_CF_STREAM};
	struct buf mk = BUF_INIT, meta = BUF_INIT, out = BUF_INIT, prefix = BUF_INIT,
		   upper = BUF_INIT;
	struct enc_meta m;
	if (ks_meta_key(ks, KEY(key), &mk) ||
	    store_get(ks_store(ks), STORE_CF_METADATA, mk.data, mk.len, &meta) ||
	    enc_meta_decode(meta.data, meta.len, &m)) {
		fprintf(stderr, "fuzz-seeds: no key %s\n", key);
		exit(1);
	}
	if (buf_add_u8(&out, (uint8_t)verbs))
		abort();
	add_field(&out, meta.data, meta.len);
	if (ks_sub_key(ks, KEY(key), m.version, NULL, 0, &prefix) ||
	    buf_set(&upper, prefix.data, prefix.len))
		abort();
	enc_prefix_successor(&upper);
	for (unsigned c = 0; c < 3; c++) {
		struct store_iter *it = store_iter_new(ks_store(ks), cfs[c], prefix.data,
						       prefix.len, upper.data, upper.len);
		for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it)) {
			size_t kn, vn;
			const char *k = store_iter_key(it, &kn);
			const char *v = store_iter_value(it, &vn);
			if (buf_add_u8(&out, (uint8_t)c))
				abort();
			add_field(&out, k + prefix.len, kn - prefix.len);
			add_field(&out, v, vn);
		}
		store_iter_free(it);
	}
	write_seed("fuzz_records", seed, out.data, out.len);
	buf_release(&mk);
	buf_release(&meta);
	buf_release(&out);
	buf_release(&prefix);
	buf_release(&upper);
}

static int entry_cb(void *arg, const struct stream_id *id, const char *val, size_t vn)
{
	(void)arg;
	(void)id;
	(void)val;
	(void)vn;
	return 0;
}

static void records(void)
{
	uint64_t n;
	/* The readers' order of fuzz_records.c. */
	enum {
		R_STRING,
		R_HASH,
		R_LIST,
		R_SET,
		R_ZSET,
		R_SORTEDINT,
		R_BITMAP,
		R_JSON,
		R_STREAM,
		R_TS,
		R_HLL,
		R_BLOOM,
		R_TDIGEST,
		R_TOPK
	};

	string_set(ks, KEY("foo"), "bar", 3, 0);
	dump_key("foo", R_STRING, "string-set-foo-bar");
	hash_set(ks, KEY("h"), "f", 1, "v", 1, NULL);
	hash_set(ks, KEY("h"), "g", 1, "12", 2, NULL);
	dump_key("h", R_HASH, "hash-hset");
	struct list_value lv[3] = {{"a", 1}, {"b", 1}, {"c", 1}};
	list_push(ks, KEY("l"), LIST_TAIL, lv, 3, &n);
	list_push(ks, KEY("l"), LIST_HEAD, lv, 1, &n);
	dump_key("l", R_LIST, "list-push");
	set_add(ks, KEY("s"), "m", 1, NULL);
	set_add(ks, KEY("s"), "x", 1, NULL);
	dump_key("s", R_SET, "set-sadd");
	zset_add(ks, KEY("z"), "m", 1, 1.5, 0);
	zset_add(ks, KEY("z"), "n", 1, -2, 0);
	dump_key("z", R_ZSET, "zset-zadd");
	sortedint_add(ks, KEY("si"), 1, NULL);
	sortedint_add(ks, KEY("si"), 1000, NULL);
	dump_key("si", R_SORTEDINT, "sortedint-siadd");
	bitmap_setbit(ks, KEY("bm"), 5, true);
	bitmap_setbit(ks, KEY("bm"), 8192 * 2 + 3, true);
	dump_key("bm", R_BITMAP, "bitmap-setbit");
	const char *doc = "{\"a\":[1,2.50,{\"b\":null}],\"k\":[true]}";
	json_set(ks, KEY("j"), "$", 1, doc, strlen(doc), 0);
	dump_key("j", R_JSON, "json-set");

	struct stream_str fv[4] = {{"f", 1}, {"v", 1}, {"g", 1}, {"w", 1}};
	struct stream_id id = {1, 0}, id2 = {5, 1}, zero = {0, 0};
	stream_add(ks, KEY("x"), STREAM_ADD_ID, &id, fv, 2, 0, NULL);
	stream_add(ks, KEY("x"), STREAM_ADD_ID, &id2, fv, 4, 0, NULL);
	stream_group_create(ks, KEY("x"), "g", 1, &zero, -1, 0);
	stream_readgroup(ks, KEY("x"), "g", 1, "alice", 5, NULL, 1, 0, entry_cb, NULL);
	dump_key("x", R_STREAM, "stream-xadd-group");

	ts_add(ks, KEY("t"), 1000, 1.5, NULL, 0, NULL);
	ts_add(ks, KEY("t"), 2000, -3, NULL, 0, NULL);
	ts_add(ks, KEY("t2"), 1000, 0, NULL, 0, NULL);
	ts_label_set(ks, KEY("t"), "room", 4, "kitchen", 7);
	ts_createrule(ks, KEY("t"), KEY("t2"), tsagg_parse("avg", 3), 1000, 0, NULL);
	ts_add(ks, KEY("t"), 3500, 7, NULL, 0, NULL);
	dump_key("t", R_TS, "timeseries-add-label-rule");

	struct iovec items[3] = {{"a", 1}, {"b", 1}, {"hello", 5}};
	hll_add(ks, KEY("hl"), items, 3, NULL);
	dump_key("hl", R_HLL, "hll-pfadd");
	bloom_add(ks, KEY("b"), items, 3, NULL);
	dump_key("b", R_BLOOM, "bloom-add");
	double v[5] = {1, 2, 3, 4, 100};
	tdigest_create(ks, KEY("td"), 10);
	tdigest_add(ks, KEY("td"), v, 5);
	dump_key("td", R_TDIGEST, "tdigest-add");
	for (int i = 0; i < 70; i++)
		tdigest_add(ks, KEY("td"), v, 1);
	dump_key("td", R_TDIGEST, "tdigest-merged");
	struct topk_params p = {3, 8, 7, 0.9};
	struct topk_item ti[3] = {{"a", 1, 1}, {"b", 1, 5}, {"c", 1, 2}};
	topk_reserve(ks, KEY("tk"), &p);
	topk_add(ks, KEY("tk"), ti, 3, NULL, NULL);
	dump_key("tk", R_TOPK, "topk-add");
}

/* fuzz_tree's format: shape index, operation, name, data. */
static void tree_seed(unsigned shape, unsigned op, const char *name, const void *d, size_t n,
		      const char *seed)
{
	struct buf out = BUF_INIT;
	if (buf_add_u8(&out, (uint8_t)shape) || buf_add_u8(&out, (uint8_t)op))
		abort();
	add_field(&out, name, strlen(name));
	if (buf_add(&out, d, n))
		abort();
	write_seed("fuzz_tree", seed, out.data, out.len);
	buf_release(&out);
}

/* A conversion (operation 5) of a hash with n fields f[i] = v[i]. */
static void conv_seed(unsigned shape, const char *const *f, const struct buf *v, size_t n,
		      const char *seed)
{
	struct buf out = BUF_INIT;
	for (size_t i = 0; i < n; i++) {
		add_field(&out, f[i], strlen(f[i]));
		add_field(&out, v[i].data, v[i].len);
	}
	tree_seed(shape, 5, "", out.data, out.len, seed);
	buf_release(&out);
}

static void conv_text(unsigned shape, const char *const *f, const char *const *v, size_t n,
		      const char *seed)
{
	struct buf vb[8];
	for (size_t i = 0; i < n; i++) {
		buf_init(&vb[i]);
		if (buf_set(&vb[i], v[i], strlen(v[i])))
			abort();
	}
	conv_seed(shape, f, vb, n, seed);
	for (size_t i = 0; i < n; i++)
		buf_release(&vb[i]);
}

/* The state file `name` of key `key` as the tree shows it, as a commit;
 * its text into text (may be NULL). */
static void state_file_text(unsigned shape, const struct fs_shape *sh, const char *key,
			    const char *name, const char *seed, struct buf *text)
{
	struct fs fs = {.ks = ks};
	struct fs_ctx c = {.fs = &fs, .k = *KEY(key)};
	struct buf out = BUF_INIT;
	if (ks_lookup(ks, &c.k, &c.info) || sh->load(&c, name, strlen(name), &out)) {
		fprintf(stderr, "fuzz-seeds: no %s/%s\n", key, name);
		exit(1);
	}
	struct buf check = BUF_INIT;
	if (buf_printf(&check, "%s-check", seed))
		abort();
	tree_seed(shape, 1, name, out.data, out.len, seed);
	tree_seed(shape, 0, name, out.data, out.len, check.data);
	buf_release(&check);
	if (text && buf_set(text, out.data, out.len))
		abort();
	buf_release(&out);
}

static void state_file(unsigned shape, const struct fs_shape *sh, const char *key, const char *name,
		       const char *seed)
{
	state_file_text(shape, sh, key, name, seed, NULL);
}

static void tree(void)
{
	/* The shapes' order of fuzz_tree.c. */
	enum {
		S_HASH,
		S_SET,
		S_ZSET,
		S_SORTEDINT,
		S_STREAM,
		S_TS,
		S_HLL,
		S_BLOOM,
		S_TDIGEST,
		S_TOPK,
		S_LIST
	};
#define T(shape, op, name, text, seed) tree_seed(shape, op, name, text, sizeof(text) - 1, seed)
	T(S_HASH, 1, "f", "value", "hash-commit");
	T(S_SET, 0, "m", "", "set-check");
	T(S_ZSET, 1, "m", "1.5\n", "zset-commit");
	T(S_ZSET, 0, "m", "-inf", "zset-check");
	T(S_SORTEDINT, 0, "7", "", "sortedint-check");
	T(S_STREAM, 1, "9-1", "f\tv\nfield\\twith tab\tvalue\\n\n", "stream-entry");
	T(S_STREAM, 2, ".add", "a\t1\tb\t2\n", "stream-add");
	T(S_STREAM, 2, ".ctl",
	  "group create g 0\nreadgroup g alice count 2\nack g 5-0\ntrim maxlen 3\n"
	  "trim minid 5\ngroup setid g $\ngroup delconsumer g alice\ngroup destroy g\n",
	  "stream-ctl");
	T(S_TS, 1, "00000000000000001000.csv", "1000,1.5\n2000,-3\n2500,1e300\n", "ts-chunk");
	T(S_TS, 2, ".add", "1000,1\n*,2.5\n3000,-inf\n", "ts-add");
	T(S_HLL, 2, ".add", "a\nb\nhello\n", "hll-add");
	T(S_HLL, 2, ".merge", "hl\nother\n", "hll-merge");
	T(S_BLOOM, 2, ".add", "a\nb\n", "bloom-add");
	T(S_BLOOM, 3, "capacity", "1000", "bloom-xattr-capacity");
	T(S_BLOOM, 3, "error_rate", "0.001", "bloom-xattr-error-rate");
	T(S_BLOOM, 3, "expansion", "4", "bloom-xattr-expansion");
	T(S_TDIGEST, 2, ".add", "1\n2.5\n-3e5\n", "tdigest-add");
	T(S_TDIGEST, 2, ".reset", "\n", "tdigest-reset");
	T(S_TDIGEST, 3, "compression", "200", "tdigest-xattr");
	T(S_TOPK, 2, ".add", "a\nb\na\n", "topk-add");
	T(S_TOPK, 2, ".incrby", "a\t5\nb\t2\n", "topk-incrby");
	T(S_TOPK, 3, "k", "10", "topk-xattr-k");
	T(S_TOPK, 3, "decay", "0.95", "topk-xattr-decay");
	T(S_TOPK, 1, "heap", "1\tx\n4\ty\\ty\n2\tz\n", "topk-heap");
	/* Names: views and other spellings (operation 4). */
	static const struct {
		unsigned shape;
		const char *name;
	} views[] = {
	    {S_ZSET, ".by-score"},
	    {S_ZSET, ".by-score:(1..+inf"},
	    {S_ZSET, ".by-score-rev:10"},
	    {S_SORTEDINT, "007"},
	    {S_STREAM, ".log"},
	    {S_STREAM, ".info"},
	    {S_STREAM, ".groups"},
	    {S_STREAM, ".consumers:g"},
	    {S_STREAM, ".pending:g"},
	    {S_STREAM, ".pending:g:c"},
	    {S_STREAM, "5-0"},
	    {S_TS, ".range:-..+:avg:1000:bt=mid"},
	    {S_TS, ".revrange:-..+:count=2"},
	    {S_TS, ".last"},
	    {S_TS, ".info"},
	    {S_TS, "00000000000000001000.csv"},
	    {S_HLL, ".count"},
	    {S_BLOOM, ".exists:a"},
	    {S_BLOOM, ".info"},
	    {S_TDIGEST, ".quantile:0.5"},
	    {S_TDIGEST, ".trimmed-mean:0.1..0.9"},
	    {S_TDIGEST, ".byrank:1"},
	    {S_TOPK, ".list"},
	    {S_TOPK, ".query:a"},
	};
	for (size_t i = 0; i < sizeof(views) / sizeof(views[0]); i++) {
		char seed[32];
		snprintf(seed, sizeof(seed), "name-%02zu", i);
		tree_seed(views[i].shape, 4, views[i].name, "", 0, seed);
	}
#undef T
	struct buf st[2] = {BUF_INIT, BUF_INIT};
	state_file_text(S_BLOOM, &fs_bloom_shape, "b", "chain", "bloom-chain", &st[0]);
	state_file_text(S_BLOOM, &fs_bloom_shape, "b", "filter.0", "bloom-filter0", &st[1]);
	conv_seed(S_BLOOM, (const char *const[]){"chain", "filter.0"}, st, 2, "convert-bloom");
	state_file_text(S_HLL, &fs_hll_shape, "hl", "registers", "hll-registers", &st[0]);
	conv_seed(S_HLL, (const char *const[]){"registers"}, st, 1, "convert-hll");
	buf_release(&st[0]);
	buf_release(&st[1]);
	conv_text(S_LIST, (const char *const[]){"0", "1", "2"},
		  (const char *const[]){"a", "b", "c"}, 3, "convert-list");
	conv_text(S_SET, (const char *const[]){"a", "b"}, (const char *const[]){"", ""}, 2,
		  "convert-set");
	conv_text(S_ZSET, (const char *const[]){"m", "n"}, (const char *const[]){"1.5\n", "-inf"},
		  2, "convert-zset");
	conv_text(S_SORTEDINT, (const char *const[]){"7", "1000"}, (const char *const[]){"", ""}, 2,
		  "convert-sortedint");
	conv_text(S_STREAM, (const char *const[]){"1-0", "5-1"},
		  (const char *const[]){"f\tv\n", "a\t1\nb\\t\t2\n"}, 2, "convert-stream");
	state_file(S_TDIGEST, &fs_tdigest_shape, "td", "buffer", "tdigest-buffer");
	state_file(S_TDIGEST, &fs_tdigest_shape, "td", "centroids", "tdigest-centroids");
	state_file(S_TDIGEST, &fs_tdigest_shape, "td", "state", "tdigest-state");
	state_file(S_TOPK, &fs_topk_shape, "tk", "buckets", "topk-buckets");
	state_file(S_TOPK, &fs_topk_shape, "tk", "rng", "topk-rng");
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
		return 2;
	}
	corpus = argv[1];
	ks = fuzz_db();
	records();
	tree();
	return 0;
}
