/*
 * Fuzz harness: the pure decoders of stored keys and metadata records
 * (encoding.c, ks_gc.c, ks_attr.c, t_timeseries.c's pure helpers). The
 * first byte picks the decoder, the rest is the record. Properties
 * checked beside "no crash": a v1 metadata record re-encodes to the same
 * bytes, decoded key parts lie inside the input.
 */
#include "fuzz.h"

#include "engine/encoding.h"
#include "keyspace/ks_attr.h"
#include "keyspace/ks_gc.h"
#include "types/t_timeseries.h"

static bool inside(const uint8_t *p, size_t pn, const uint8_t *base, size_t n)
{
	return pn == 0 || (p >= base && p + pn <= base + n);
}

static void meta(const uint8_t *d, size_t n)
{
	struct enc_meta m;
	if (enc_meta_decode(d, n, &m))
		return;
	FUZZ_ASSERT(inside(m.tail, m.tail_len, d, n));
	(void)enc_meta_is_expired(&m, 0);
	(void)enc_meta_is_expired(&m, UINT64_MAX);
	(void)ks_gc_meta_dead(d, n, 1700000000000ull);
	(void)ks_gc_sub_dead(&m, m.version, d, n, 1700000000000ull);
	(void)ks_gc_attr_dead(&m, true, m.version, 1700000000000ull);
	(void)ks_gc_attr_dead(&m, false, 0, 1700000000000ull);
	if (m.v1) {
		struct buf out = BUF_INIT;
		FUZZ_ASSERT(enc_meta_encode(&out, &m) == 0);
		FUZZ_ASSERT(buf_add(&out, m.tail, m.tail_len) == 0);
		FUZZ_ASSERT(out.len == n && memcmp(out.data, d, n) == 0);
		buf_release(&out);
	}
	if (m.type == KV_TYPE_TIMESERIES) {
		struct ts_meta tm;
		if (ts_meta_decode(m.tail, m.tail_len, &tm) == 0)
			FUZZ_ASSERT(inside((const uint8_t *)tm.source, tm.source_len, d, n));
	}
}

static void keys(const uint8_t *d, size_t n, bool cluster)
{
	const uint8_t *ns, *key, *sub;
	size_t nsn, kn, sn;
	uint64_t ver;
	if (enc_ns_key_decode(d, n, cluster, &ns, &nsn, &key, &kn) == 0) {
		FUZZ_ASSERT(inside(ns, nsn, d, n) && inside(key, kn, d, n));
		struct buf again = BUF_INIT;
		if (nsn > 0 && enc_ns_key(&again, ns, nsn, key, kn, cluster) == 0 && !cluster)
			FUZZ_ASSERT(again.len == n && memcmp(again.data, d, n) == 0);
		buf_release(&again);
	}
	if (enc_sub_key_decode(d, n, cluster, &ns, &nsn, &key, &kn, &ver, &sub, &sn) == 0)
		FUZZ_ASSERT(inside(ns, nsn, d, n) && inside(key, kn, d, n) &&
			    inside(sub, sn, d, n));
}

static void attr(const uint8_t *d, size_t n)
{
	struct ks_key k;
	bool is_entry;
	uint64_t ver;
	if (ks_attr_record_parse(d, n, &k, &is_entry, &ver))
		FUZZ_ASSERT(inside((const uint8_t *)k.ns, k.nslen, d, n) &&
			    inside((const uint8_t *)k.key, k.klen, d, n));
	(void)ks_attr_record_version(d, n);
}

/* A time-series metadata tail and a chunk value, split by the first u16. */
static void ts(const uint8_t *d, size_t n)
{
	struct fuzz_in in = {d, n};
	size_t tn;
	const uint8_t *tail = fuzz_field(&in, &tn);
	struct ts_meta m;
	uint64_t last;
	uint32_t count;
	(void)ts_chunk_last_ts(in.p, in.n, &last, &count);
	(void)enc_ts_chunk_expired(tail, tn, in.p, in.n);
	if (ts_meta_decode(tail, tn, &m) == 0)
		(void)ts_chunk_is_expired(&m, in.p, in.n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static bool quiet;
	if (!quiet)
		fuzz_quiet();
	quiet = true;
	if (size == 0)
		return 0;
	/* An exact-size copy: decoders must not read past the record. */
	uint8_t *d = malloc(size - 1 ? size - 1 : 1);
	if (!d)
		abort();
	memcpy(d, data + 1, size - 1);
	size_t n = size - 1;
	switch (data[0] % 5) {
	case 0:
		meta(d, n);
		break;
	case 1:
		keys(d, n, false);
		break;
	case 2:
		keys(d, n, true);
		break;
	case 3:
		attr(d, n);
		break;
	case 4:
		ts(d, n);
		break;
	}
	free(d);
	return 0;
}
