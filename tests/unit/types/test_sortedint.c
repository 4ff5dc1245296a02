/*
 * Unit tests for t_sortedint on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case, ranges from a
 * cursor in both directions with offset and limit, the stored bytes
 * against kvrocks-encoding.md 6.8 (metadata 87 ..., id u64 BE sub-keys
 * with empty values), v0 metadata kept, and a model-based run of random
 * operations checking that size equals the number of id sub-keys.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_sortedint.h"
#include "types/t_string.h"

#define BADKEY KEY("", "si")

static struct keyspace *ks;
static struct buf v = BUF_INIT;

static void check_meta(const char *key, uint64_t size)
{
	fixture_check_meta(ks, KEY(key), 0x87, size, "");
}

static size_t sub_key(const char *key, uint64_t ver, uint64_t id, unsigned char *k)
{
	unsigned char sub[8];
	put_be64(sub, id);
	return fixture_sub_key(key, ver, sub, 8, k);
}

/* sortedint_range into "1,2,3". */
static int range_str(const char *key, const uint64_t *after, uint64_t offset, bool reverse,
		     size_t limit, char *out, size_t cap)
{
	uint64_t ids[64];
	size_t n = 99;
	int rc = sortedint_range(ks, KEY(DEFNS, key), after, offset, reverse, ids, limit, &n);
	out[0] = '\0';
	for (size_t i = 0; !rc && i < n; i++)
		snprintf(out + strlen(out), cap - strlen(out), "%s%llu", i ? "," : "",
			 (unsigned long long)ids[i]);
	return rc;
}

static void test_add_bytes(void)
{
	bool added = false;
	struct ks_info info;
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "si"), 5, &added), 0);
	CHECK(added);
	uint64_t ver = fixture_version(ks, KEY("si"));
	check_meta("si", 1);
	unsigned char k[128];
	size_t kn = unhex(NS_HEX " 00 00 00 02 73 69", k);
	put_be64(k + kn, ver);
	kn += 8;
	kn += unhex("00 00 00 00 00 00 00 05", k + kn);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), 0);
	CHECK_INT(v.len, 0);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "si"), 5, &added), 0);
	CHECK(!added);
	check_meta("si", 1);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "si"), 0, NULL), 0);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "si"), UINT64_MAX, NULL), 0);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "si"), 256, NULL), 0);
	check_meta("si", 4);
	kn = sub_key("si", ver, 256, k);
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), 0);
	/* Wrong type and bad input change nothing. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "str", 3, 0), 0);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "s"), 1, &added), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	CHECK_INT(sortedint_add(ks, BADKEY, 1, &added), -EINVAL);
	check_meta("si", 4);
	/* A remembered empty sortedint loses its record. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "esi"), KV_TYPE_SORTEDINT), 0);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "esi"), 7, NULL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "esi"), &info), 0);
	CHECK(!info.empty && info.type == KV_TYPE_SORTEDINT && info.size == 1);
}

static void test_rem_exists_card(void)
{
	struct ks_info info;
	uint64_t n = 0;
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "r"), 1, NULL), 0);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "r"), 2, NULL), 0);
	CHECK_INT(sortedint_rem(ks, KEY(DEFNS, "r"), 1, 0), 0);
	check_meta("r", 1);
	CHECK_INT(sortedint_rem(ks, KEY(DEFNS, "r"), 1, 0), -ENOENT);
	CHECK_INT(sortedint_rem(ks, KEY(DEFNS, "nope"), 1, 0), -ENOENT);
	CHECK_INT(sortedint_rem(ks, KEY(DEFNS, "s"), 1, 0), -KV_EWRONGTYPE);
	CHECK_INT(sortedint_rem(ks, BADKEY, 1, 0), -EINVAL);
	check_meta("r", 1);
	CHECK_INT(sortedint_rem(ks, KEY(DEFNS, "r"), 2, 0), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("r"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "r"), &info), -ENOENT);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "r"), 3, NULL), 0);
	CHECK_INT(sortedint_rem(ks, KEY(DEFNS, "r"), 3, SORTEDINT_KEEP_EMPTY), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "r"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_SORTEDINT);

	CHECK_INT(sortedint_exists(ks, KEY(DEFNS, "si"), 5), 1);
	CHECK_INT(sortedint_exists(ks, KEY(DEFNS, "si"), 6), 0);
	CHECK_INT(sortedint_exists(ks, KEY(DEFNS, "nope"), 5), 0);
	CHECK_INT(sortedint_exists(ks, KEY(DEFNS, "s"), 5), -KV_EWRONGTYPE);
	CHECK_INT(sortedint_exists(ks, BADKEY, 5), -EINVAL);
	CHECK_INT(sortedint_card(ks, KEY(DEFNS, "si"), &n), 0);
	CHECK_INT(n, 4);
	CHECK_INT(sortedint_card(ks, KEY(DEFNS, "nope"), &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(sortedint_card(ks, KEY(DEFNS, "s"), &n), -KV_EWRONGTYPE);
	CHECK_INT(sortedint_card(ks, BADKEY, &n), -EINVAL);
}

static void test_range(void)
{
	char got[512];
	uint64_t c;
	/* si holds 0, 5, 256, UINT64_MAX. */
	CHECK_INT(range_str("si", NULL, 0, false, 10, got, sizeof(got)), 0);
	CHECK(strcmp(got, "0,5,256,18446744073709551615") == 0);
	CHECK_INT(range_str("si", NULL, 0, true, 10, got, sizeof(got)), 0);
	CHECK(strcmp(got, "18446744073709551615,256,5,0") == 0);
	c = 5;
	CHECK_INT(range_str("si", &c, 0, false, 10, got, sizeof(got)), 0);
	CHECK(strcmp(got, "256,18446744073709551615") == 0);
	CHECK_INT(range_str("si", &c, 0, true, 10, got, sizeof(got)), 0);
	CHECK(strcmp(got, "0") == 0);
	c = 6; /* a cursor that is not an id */
	CHECK_INT(range_str("si", &c, 0, false, 1, got, sizeof(got)), 0);
	CHECK(strcmp(got, "256") == 0);
	CHECK_INT(range_str("si", &c, 0, true, 10, got, sizeof(got)), 0);
	CHECK(strcmp(got, "5,0") == 0);
	CHECK_INT(range_str("si", NULL, 1, false, 2, got, sizeof(got)), 0);
	CHECK(strcmp(got, "5,256") == 0);
	CHECK_INT(range_str("si", NULL, 9, false, 2, got, sizeof(got)), 0);
	CHECK(strcmp(got, "") == 0);
	c = UINT64_MAX;
	CHECK_INT(range_str("si", &c, 0, false, 10, got, sizeof(got)), 0);
	CHECK(strcmp(got, "") == 0);
	c = 0;
	CHECK_INT(range_str("si", &c, 0, true, 10, got, sizeof(got)), 0);
	CHECK(strcmp(got, "") == 0);
	CHECK_INT(range_str("nope", NULL, 0, false, 10, got, sizeof(got)), 0);
	CHECK(strcmp(got, "") == 0);
	CHECK_INT(range_str("s", NULL, 0, false, 10, got, sizeof(got)), -KV_EWRONGTYPE);
	CHECK_INT(range_str("si", NULL, 0, false, 0, got, sizeof(got)), -EINVAL);
	uint64_t ids[2];
	size_t n;
	CHECK_INT(sortedint_range(ks, BADKEY, NULL, 0, false, ids, 2, &n), -EINVAL);
	/* The iterator directly; neighbouring keys do not leak in. */
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "s"), 1, NULL), -KV_EWRONGTYPE);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "sj"), 1, NULL), 0);
	int err = 1;
	uint64_t id;
	struct sortedint_iter *it = sortedint_iter_new(ks, KEY(DEFNS, "si"), false, NULL, &err);
	int count = 0;
	while (it && sortedint_iter_next(it, &id) == 1)
		count++;
	CHECK_INT(count, 4);
	CHECK(it && sortedint_iter_next(it, &id) == 0);
	sortedint_iter_free(it);
	it = sortedint_iter_new(ks, KEY(DEFNS, "s"), false, NULL, &err);
	CHECK(!it);
	CHECK_INT(err, -KV_EWRONGTYPE);
}

static void test_v0(void)
{
	unsigned char k[128], val[64], want[64];
	size_t kn = unhex(NS_HEX " 76", k);
	size_t vn = unhex("07 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 01", val);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_METADATA, k, kn, val, vn);
	size_t skn = sub_key("v", 42, 9, k + 64);
	store_batch_put(b, STORE_CF_DEFAULT, k + 64, skn, "", 0);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
	CHECK_INT(sortedint_add(ks, KEY(DEFNS, "v"), 10, NULL), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("v"), &v), 0);
	size_t wn = unhex("07 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 02", want);
	CHECK_MEM(v.data, v.len, want, wn);
	char got[64];
	CHECK_INT(range_str("v", NULL, 0, false, 10, got, sizeof(got)), 0);
	CHECK(strcmp(got, "9,10") == 0);
}

static uint64_t rng_state = 0x853c49e6748fea9bull;

#define NIDS 48
/* Model ids: 0..46 spread out, and UINT64_MAX. */
static uint64_t model_id(int i)
{
	return i == NIDS - 1 ? UINT64_MAX : (uint64_t)i * 1000003u;
}

static int check_exact(const bool *in)
{
	struct buf raw = BUF_INIT, prefix = BUF_INIT, upper = BUF_INIT;
	size_t want = 0, count = 0;
	int bad = 0, next = 0;
	for (int i = 0; i < NIDS; i++)
		want += in[i];
	if (fixture_meta_raw(ks, KEY("model"), &raw) != 0) {
		buf_release(&raw);
		return want != 0;
	}
	uint64_t ver = get_be64(raw.data + 9), size = get_be64(raw.data + 17);
	bad |= size != want;
	ks_sub_key(ks, KEY(DEFNS, "model"), ver, NULL, 0, &prefix);
	buf_set(&upper, prefix.data, prefix.len);
	enc_prefix_successor(&upper);
	struct store_iter *it = store_iter_new(ks_store(ks), STORE_CF_DEFAULT, prefix.data,
					       prefix.len, upper.data, upper.len);
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it), count++) {
		size_t kn, vn;
		const char *k = store_iter_key(it, &kn);
		store_iter_value(it, &vn);
		while (next < NIDS && !in[next])
			next++;
		if (next >= NIDS || kn != prefix.len + 8 || vn != 0 ||
		    get_be64(k + prefix.len) != model_id(next))
			bad = 1;
		next++;
	}
	bad |= count != want;
	store_iter_free(it);
	buf_release(&raw);
	buf_release(&prefix);
	buf_release(&upper);
	return bad;
}

static void test_model(void)
{
	bool in[NIDS] = {false};
	int fails = 0;
	for (int op = 0; op < 4000; op++) {
		int i = (int)check_rnd(&rng_state, NIDS), rc = 0;
		uint64_t id = model_id(i);
		bool added;
		switch (check_rnd(&rng_state, 4)) {
		case 0:
		case 1:
			rc = sortedint_add(ks, KEY(DEFNS, "model"), id, &added);
			if (!rc && added == in[i])
				rc = 1;
			in[i] = true;
			break;
		case 2:
			rc = sortedint_rem(ks, KEY(DEFNS, "model"), id, 0);
			rc = rc == (in[i] ? 0 : -ENOENT) ? 0 : 1;
			in[i] = false;
			break;
		default: {
			/* A range from a random cursor, compared with the model. */
			uint64_t ids[5];
			size_t n = 0, j = 0;
			bool rev = check_rnd(&rng_state, 2);
			rc = sortedint_range(ks, KEY(DEFNS, "model"), &id, 1, rev, ids, 5, &n);
			int skip = 1;
			for (int q = rev ? i - 1 : i + 1; q >= 0 && q < NIDS && j < 5;
			     q += rev ? -1 : 1) {
				if (!in[q])
					continue;
				if (skip) {
					skip = 0;
					continue;
				}
				if (j >= n || ids[j] != model_id(q))
					rc = 1;
				j++;
			}
			if (j != n)
				rc = 1;
			break;
		}
		}
		if (rc || check_exact(in))
			if (fails++ < 5)
				fprintf(stderr, "model: op %d rc %d\n", op, rc);
	}
	CHECK_INT(fails, 0);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_sortedint");
	test_add_bytes();
	test_rem_exists_card();
	test_range();
	test_v0();
	test_model();
	fixture_done(ks);
	buf_release(&v);
	return check_done("test_sortedint");
}
