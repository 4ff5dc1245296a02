/*
 * Unit tests for t_set on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case, iteration from a
 * cursor, the stored bytes against kvrocks-encoding.md 6.4 (metadata 84
 * ... and an empty value per member), v0 metadata kept, and a
 * model-based run of random SADD/SREM checking that size always equals
 * the number of member sub-keys.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_set.h"
#include "types/t_string.h"

#define BADKEY KEY("", "st")

static struct keyspace *ks;
static struct buf v = BUF_INIT;

static void check_meta(const char *key, uint64_t size)
{
	fixture_check_meta(ks, KEY(key), 0x84, size, "");
}

static void check_member_raw(const char *key, const char *m, bool present)
{
	unsigned char k[256];
	size_t kn = fixture_sub_key(key, fixture_version(ks, KEY(key)), m, strlen(m), k);
	int rc = store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v);
	CHECK_INT(rc, present ? 0 : -ENOENT);
	if (present)
		CHECK_INT(v.len, 0);
}

static void test_add(void)
{
	bool added = false;
	struct ks_info info;
	CHECK_INT(set_add(ks, KEY(DEFNS, "st"), "m", 1, &added), 0);
	CHECK(added);
	/* Metadata 84 | 0 x8 | V | 1; sub-key NS 00 00 00 02 "st" V "m" -> "". */
	uint64_t ver = fixture_version(ks, KEY("st"));
	CHECK((ver >> 11) <= now_us() && (ver >> 11) > now_us() - 60000000);
	check_meta("st", 1);
	unsigned char k[128];
	size_t kn = unhex(NS_HEX " 00 00 00 02 73 74", k);
	put_be64(k + kn, ver);
	kn += 8;
	k[kn++] = 0x6D;
	CHECK_INT(store_get(ks_store(ks), STORE_CF_DEFAULT, k, kn, &v), 0);
	CHECK_INT(v.len, 0);
	/* Again: not added, nothing changes. */
	CHECK_INT(set_add(ks, KEY(DEFNS, "st"), "m", 1, &added), 0);
	CHECK(!added);
	check_meta("st", 1);
	CHECK(fixture_version(ks, KEY("st")) == ver);
	/* Binary and empty members. */
	CHECK_INT(set_add(ks, KEY(DEFNS, "st"), "a\0b", 3, &added), 0);
	CHECK(added);
	CHECK_INT(set_add(ks, KEY(DEFNS, "st"), "", 0, NULL), 0);
	check_meta("st", 3);
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "st"), "a\0b", 3), 1);
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "st"), "a", 1), 0);
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "st"), "", 0), 1);
	/* Wrong type, bad input: nothing written. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "str", 3, 0), 0);
	CHECK_INT(set_add(ks, KEY(DEFNS, "s"), "m", 1, &added), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	CHECK_INT(set_add(ks, BADKEY, "m", 1, &added), -EINVAL);
	CHECK_INT(set_add(ks, KEY(DEFNS, "st"), "x", (size_t)SET_MEMBER_MAX + 1, &added), -EFBIG);
	CHECK_INT(set_add(ks, KEY(DEFNS, "new"), "x", (size_t)SET_MEMBER_MAX + 1, &added), -EFBIG);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "new"), &info), -ENOENT);
	check_meta("st", 3);
	/* A remembered empty set loses its record. */
	CHECK_INT(ks_empty_create(ks, KEY(DEFNS, "es"), KV_TYPE_SET), 0);
	CHECK_INT(set_add(ks, KEY(DEFNS, "es"), "x", 1, NULL), 0);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "es"), &info), 0);
	CHECK(!info.empty && info.size == 1);
}

static void test_rem(void)
{
	struct ks_info info;
	CHECK_INT(set_add(ks, KEY(DEFNS, "r"), "a", 1, NULL), 0);
	CHECK_INT(set_add(ks, KEY(DEFNS, "r"), "b", 1, NULL), 0);
	CHECK_INT(set_rem(ks, KEY(DEFNS, "r"), "a", 1, 0), 0);
	check_meta("r", 1);
	check_member_raw("r", "a", false);
	check_member_raw("r", "b", true);
	CHECK_INT(set_rem(ks, KEY(DEFNS, "r"), "a", 1, 0), -ENOENT);
	CHECK_INT(set_rem(ks, KEY(DEFNS, "nope"), "a", 1, 0), -ENOENT);
	CHECK_INT(set_rem(ks, KEY(DEFNS, "s"), "a", 1, 0), -KV_EWRONGTYPE);
	CHECK_INT(set_rem(ks, BADKEY, "a", 1, 0), -EINVAL);
	check_meta("r", 1);
	/* The last member: the metadata goes. */
	CHECK_INT(set_rem(ks, KEY(DEFNS, "r"), "b", 1, 0), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("r"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "r"), &info), -ENOENT);
	/* With SET_KEEP_EMPTY it stays as an empty set. */
	CHECK_INT(set_add(ks, KEY(DEFNS, "r"), "c", 1, NULL), 0);
	CHECK_INT(set_rem(ks, KEY(DEFNS, "r"), "c", 1, SET_KEEP_EMPTY), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("r"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "r"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_SET);
	uint64_t n = 5;
	CHECK_INT(set_card(ks, KEY(DEFNS, "r"), &n), 0);
	CHECK_INT(n, 0);
}

static void test_ismember_card(void)
{
	uint64_t n = 0;
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "st"), "m", 1), 1);
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "nope"), "m", 1), 0);
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "s"), "m", 1), -KV_EWRONGTYPE);
	CHECK_INT(set_ismember(ks, BADKEY, "m", 1), -EINVAL);
	CHECK_INT(set_card(ks, KEY(DEFNS, "st"), &n), 0);
	CHECK_INT(n, 3);
	CHECK_INT(set_card(ks, KEY(DEFNS, "nope"), &n), 0);
	CHECK_INT(n, 0);
	CHECK_INT(set_card(ks, KEY(DEFNS, "s"), &n), -KV_EWRONGTYPE);
	CHECK_INT(set_card(ks, BADKEY, &n), -EINVAL);
}

static int list_members(const struct ks_key *k, const char *after, char *out, size_t cap)
{
	int err = 1, rc;
	const char *m;
	size_t mn;
	struct set_iter *it = set_iter_new(ks, k, after, after ? strlen(after) : 0, &err);
	out[0] = '\0';
	if (!it)
		return err;
	CHECK_INT(err, 0);
	while ((rc = set_iter_next(it, &m, &mn)) == 1) {
		if (out[0])
			strncat(out, ",", cap - strlen(out) - 1);
		strncat(out, m, mn);
	}
	CHECK_INT(rc, 0);
	CHECK_INT(set_iter_next(it, &m, &mn), 0);
	set_iter_free(it);
	return 0;
}

static void test_iter(void)
{
	char got[256];
	const char *ms[] = {"b", "a", "ab", "c", "B"};
	for (int i = 0; i < 5; i++)
		CHECK_INT(set_add(ks, KEY(DEFNS, "it"), ms[i], strlen(ms[i]), NULL), 0);
	CHECK_INT(set_add(ks, KEY(DEFNS, "i"), "zz", 2, NULL), 0);
	CHECK_INT(set_add(ks, KEY(DEFNS, "itx"), "zz", 2, NULL), 0);
	CHECK_INT(list_members(KEY(DEFNS, "it"), NULL, got, sizeof(got)), 0);
	CHECK(strcmp(got, "B,a,ab,b,c") == 0);
	CHECK_INT(list_members(KEY(DEFNS, "it"), "a", got, sizeof(got)), 0);
	CHECK(strcmp(got, "ab,b,c") == 0);
	CHECK_INT(list_members(KEY(DEFNS, "it"), "aa", got, sizeof(got)), 0);
	CHECK(strcmp(got, "ab,b,c") == 0);
	CHECK_INT(list_members(KEY(DEFNS, "it"), "c", got, sizeof(got)), 0);
	CHECK(strcmp(got, "") == 0);
	CHECK_INT(list_members(KEY(DEFNS, "nope"), NULL, got, sizeof(got)), 0);
	CHECK(strcmp(got, "") == 0);
	CHECK_INT(list_members(KEY(DEFNS, "s"), NULL, got, sizeof(got)), -KV_EWRONGTYPE);
	CHECK_INT(list_members(BADKEY, NULL, got, sizeof(got)), -EINVAL);
	/* After DEL and re-creation, old members are not iterated. */
	CHECK_INT(ks_del(ks, KEY(DEFNS, "it")), 0);
	CHECK_INT(set_add(ks, KEY(DEFNS, "it"), "new", 3, NULL), 0);
	CHECK_INT(list_members(KEY(DEFNS, "it"), NULL, got, sizeof(got)), 0);
	CHECK(strcmp(got, "new") == 0);
}

static void test_v0(void)
{
	unsigned char k[128], val[64], want[64];
	size_t kn = unhex(NS_HEX " 76", k);
	size_t vn = unhex("04 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 01", val);
	struct store_batch *b = store_batch_new(ks_store(ks));
	store_batch_put(b, STORE_CF_METADATA, k, kn, val, vn);
	size_t skn = fixture_sub_key("v", 42, "f", 1, k + 64);
	store_batch_put(b, STORE_CF_DEFAULT, k + 64, skn, "", 0);
	CHECK_INT(store_write(ks_store(ks), b, false), 0);
	store_batch_free(b);
	CHECK_INT(set_add(ks, KEY(DEFNS, "v"), "g", 1, NULL), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("v"), &v), 0);
	size_t wn = unhex("04 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 02", want);
	CHECK_MEM(v.data, v.len, want, wn);
	CHECK_INT(set_rem(ks, KEY(DEFNS, "v"), "f", 1, 0), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("v"), &v), 0);
	wn = unhex("04 00 00 00 00 00 00 00 00 00 00 00 2A 00 00 00 01", want);
	CHECK_MEM(v.data, v.len, want, wn);
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "v"), "g", 1), 1);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;

#define NMEM 40

/* size == number of sub-keys == the model's members, in byte order. */
static int check_exact(const char *key, const bool *in)
{
	struct buf raw = BUF_INIT, prefix = BUF_INIT, upper = BUF_INIT;
	size_t want = 0;
	int bad = 0;
	for (int i = 0; i < NMEM; i++)
		want += in[i];
	if (fixture_meta_raw(ks, KEY(key), &raw) != 0) {
		buf_release(&raw);
		return want != 0;
	}
	uint64_t ver = get_be64(raw.data + 9), size = get_be64(raw.data + 17);
	bad |= size != want || raw.len != 25;
	ks_sub_key(ks, KEY(DEFNS, key), ver, NULL, 0, &prefix);
	buf_set(&upper, prefix.data, prefix.len);
	enc_prefix_successor(&upper);
	struct store_iter *it = store_iter_new(ks_store(ks), STORE_CF_DEFAULT, prefix.data,
					       prefix.len, upper.data, upper.len);
	int next = 0;
	size_t count = 0;
	for (store_iter_seek_first(it); store_iter_valid(it); store_iter_next(it), count++) {
		size_t kn;
		const char *k = store_iter_key(it, &kn);
		char name[16];
		while (next < NMEM && !in[next])
			next++;
		snprintf(name, sizeof(name), "m%02d", next);
		if (next >= NMEM || kn != prefix.len + 3 || memcmp(k + prefix.len, name, 3) != 0)
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
	bool in[NMEM] = {false};
	int fails = 0;
	for (int op = 0; op < 4000; op++) {
		int i = (int)check_rnd(&rng_state, NMEM), rc, want;
		char name[16];
		bool added = false;
		snprintf(name, sizeof(name), "m%02d", i);
		switch (check_rnd(&rng_state, 3)) {
		case 0:
			rc = set_add(ks, KEY(DEFNS, "model"), name, 3, &added);
			if (!rc && added == in[i])
				rc = 1;
			in[i] = true;
			break;
		case 1:
			rc = set_rem(ks, KEY(DEFNS, "model"), name, 3, 0);
			want = in[i] ? 0 : -ENOENT;
			rc = rc == want ? 0 : 1;
			in[i] = false;
			break;
		default:
			rc = set_ismember(ks, KEY(DEFNS, "model"), name, 3) == (int)in[i] ? 0 : 1;
			break;
		}
		if (rc || check_exact("model", in))
			if (fails++ < 5)
				fprintf(stderr, "model: op %d rc %d\n", op, rc);
	}
	CHECK_INT(fails, 0);
}

static void test_read_only(void)
{
	struct ks_options o = {.read_only = true};
	ks = fixture_reopen_checked(ks, &o);
	if (!ks)
		return;
	CHECK_INT(set_add(ks, KEY(DEFNS, "st"), "q", 1, NULL), -EROFS);
	CHECK_INT(set_rem(ks, KEY(DEFNS, "st"), "m", 1, 0), -EROFS);
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "st"), "m", 1), 1);
}

static void test_rename(void)
{
	struct ks_info info;
	CHECK_INT(set_add(ks, KEY(DEFNS, "rn"), "a", 1, NULL), 0);
	CHECK_INT(set_add(ks, KEY(DEFNS, "rn"), "b", 1, NULL), 0);
	uint64_t ver = fixture_version(ks, KEY("rn"));
	/* To a new name: the count stays, the version stays. */
	CHECK_INT(set_rename_member(ks, KEY(DEFNS, "rn"), "a", 1, "c", 1), 0);
	check_meta("rn", 2);
	CHECK(fixture_version(ks, KEY("rn")) == ver);
	check_member_raw("rn", "a", false);
	check_member_raw("rn", "c", true);
	/* Onto another member: it is replaced, one member fewer. */
	CHECK_INT(set_rename_member(ks, KEY(DEFNS, "rn"), "c", 1, "b", 1), 0);
	check_meta("rn", 1);
	check_member_raw("rn", "c", false);
	check_member_raw("rn", "b", true);
	/* To itself: nothing changes. */
	CHECK_INT(set_rename_member(ks, KEY(DEFNS, "rn"), "b", 1, "b", 1), 0);
	check_meta("rn", 1);
	/* Missing member, missing key, wrong type, bad input: nothing written. */
	CHECK_INT(set_rename_member(ks, KEY(DEFNS, "rn"), "zz", 2, "y", 1), -ENOENT);
	CHECK_INT(set_rename_member(ks, KEY(DEFNS, "nope"), "a", 1, "y", 1), -ENOENT);
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "str", 3, 0), 0);
	CHECK_INT(set_rename_member(ks, KEY(DEFNS, "s"), "a", 1, "y", 1), -KV_EWRONGTYPE);
	CHECK_INT(set_rename_member(ks, BADKEY, "a", 1, "y", 1), -EINVAL);
	CHECK_INT(set_rename_member(ks, KEY(DEFNS, "rn"), "b", 1, "y", (size_t)SET_MEMBER_MAX + 1),
		  -EFBIG);
	check_meta("rn", 1);
	check_member_raw("rn", "b", true);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "nope"), &info), -ENOENT);
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_set");
	test_add();
	test_rem();
	test_ismember_card();
	test_iter();
	test_rename();
	test_v0();
	test_model();
	test_read_only();
	fixture_done(ks);
	buf_release(&v);
	return check_done("test_set");
}
