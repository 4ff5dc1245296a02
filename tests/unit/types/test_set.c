/*
 * Unit tests for t_set on a temporary database: every verb with a
 * success, wrong-type, missing-key and bad-input case, iteration from a
 * cursor, the stored bytes against kvrocks-encoding.md 6.4 (metadata 84
 * ... and an empty value per member), v0 metadata kept, and a
 * model-based run of random SADD/SREM checking that size always equals
 * the number of member sub-keys; SPOP and SRANDMEMBER (each member and
 * each pair as likely, counted over thousands of draws), SMOVE between
 * keys with both keys' bytes.
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

/* ---- SPOP, SRANDMEMBER, SMOVE ---- */

/* What a verb answered: members joined by '|', and how many. */
struct got {
	char s[4096];
	int n;
	int fail_at; /* the callback fails at this member (0: never) */
};

static int got_member(void *arg, const char *m, size_t mn)
{
	struct got *g = arg;
	if (++g->n == g->fail_at)
		return -ECANCELED;
	strncat(g->s, m, mn);
	strncat(g->s, "|", sizeof(g->s) - strlen(g->s) - 1);
	return 0;
}

static void got_reset(struct got *g)
{
	g->s[0] = '\0';
	g->n = 0;
	g->fail_at = 0;
}

static void add_members(const char *key, int n)
{
	char name[16];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "m%02d", i);
		CHECK_INT(set_add(ks, KEY(DEFNS, key), name, strlen(name), NULL), 0);
	}
}

static void test_pop(void)
{
	struct got g;
	struct ks_info info;
	char name[16];
	add_members("p", 10);
	uint64_t ver = fixture_version(ks, KEY("p"));
	/* One: a member, gone from the set, its record deleted; size 9. */
	got_reset(&g);
	CHECK_INT(set_pop(ks, KEY(DEFNS, "p"), 1, 0, got_member, &g), 0);
	CHECK_INT(g.n, 1);
	CHECK(strlen(g.s) == 4 && g.s[0] == 'm');
	memcpy(name, g.s, 3);
	name[3] = '\0';
	CHECK_INT(set_ismember(ks, KEY(DEFNS, "p"), name, 3), 0);
	check_member_raw("p", name, false);
	check_meta("p", 9);
	CHECK(fixture_version(ks, KEY("p")) == ver);
	/* Three: distinct members, size 6. */
	got_reset(&g);
	CHECK_INT(set_pop(ks, KEY(DEFNS, "p"), 3, 0, got_member, &g), 0);
	CHECK_INT(g.n, 3);
	CHECK(g.s[0] != '\0' && memcmp(g.s, g.s + 4, 3) != 0 && memcmp(g.s, g.s + 8, 3) != 0 &&
	      memcmp(g.s + 4, g.s + 8, 3) != 0);
	for (int i = 0; i < 3; i++) {
		memcpy(name, g.s + 4 * i, 3);
		CHECK_INT(set_ismember(ks, KEY(DEFNS, "p"), name, 3), 0);
	}
	check_meta("p", 6);
	/* A callback's error: nothing written. */
	got_reset(&g);
	g.fail_at = 2;
	CHECK_INT(set_pop(ks, KEY(DEFNS, "p"), 2, 0, got_member, &g), -ECANCELED);
	check_meta("p", 6);
	/* Count 0, a missing key: nothing, no call. */
	got_reset(&g);
	CHECK_INT(set_pop(ks, KEY(DEFNS, "p"), 0, 0, got_member, &g), 0);
	CHECK_INT(set_pop(ks, KEY(DEFNS, "nope"), 3, 0, got_member, &g), 0);
	CHECK_INT(g.n, 0);
	check_meta("p", 6);
	/* Wrong type, bad namespace: nothing written. */
	CHECK_INT(string_set(ks, KEY(DEFNS, "s"), "str", 3, 0), 0);
	CHECK_INT(set_pop(ks, KEY(DEFNS, "s"), 1, 0, got_member, &g), -KV_EWRONGTYPE);
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	CHECK_INT(set_pop(ks, BADKEY, 1, 0, got_member, &g), -EINVAL);
	CHECK_INT(g.n, 0);
	/* More than it has: every member, in byte order; the key goes. */
	CHECK_INT(set_pop(ks, KEY(DEFNS, "p"), 100, 0, got_member, &g), 0);
	CHECK_INT(g.n, 6);
	for (int i = 0; i + 1 < 6; i++)
		CHECK(memcmp(g.s + 4 * i, g.s + 4 * i + 4, 3) < 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("p"), &v), -ENOENT);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "p"), &info), -ENOENT);
	/* SET_KEEP_EMPTY: the last member leaves an empty set. */
	add_members("p", 2);
	got_reset(&g);
	CHECK_INT(set_pop(ks, KEY(DEFNS, "p"), 2, SET_KEEP_EMPTY, got_member, &g), 0);
	CHECK_MEM(g.s, strlen(g.s), "m00|m01|", 8);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "p"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_SET);
	CHECK_INT(set_pop(ks, KEY(DEFNS, "p"), 1, SET_KEEP_EMPTY, got_member, &g), 0);
	CHECK_INT(g.n, 2);
	/* One by one: every member exactly once. */
	add_members("p", 40);
	int seen[40] = {0};
	for (int i = 0; i < 40; i++) {
		got_reset(&g);
		CHECK_INT(set_pop(ks, KEY(DEFNS, "p"), 1, 0, got_member, &g), 0);
		int idx = atoi(g.s + 1);
		if (g.n == 1 && idx >= 0 && idx < 40)
			seen[idx]++;
	}
	for (int i = 0; i < 40; i++)
		CHECK_INT(seen[i], 1);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "p"), &info), -ENOENT);
}

/* Set "p0" as an old Kvrocks wrote it: v0 metadata (17 bytes: flags 04,
 * expiry 4 bytes, version 43, size 4 bytes) and members "a" and "b". */
static void plant_v0_p0(void)
{
	unsigned char k[128], val[64];
	const char *ms[] = {"a", "b"};
	size_t kn = unhex(NS_HEX " 70 30", k);
	size_t vn = unhex("04 00 00 00 00 00 00 00 00 00 00 00 2B 00 00 00 02", val);
	fixture_put(ks, STORE_CF_METADATA, k, kn, val, vn);
	for (int i = 0; i < 2; i++) {
		kn = fixture_sub_key("p0", 43, ms[i], 1, k);
		fixture_put(ks, STORE_CF_DEFAULT, k, kn, "", 0);
	}
}

/* A pop keeps v0 metadata; a size that says more than the set holds is
 * -EUCLEAN, nothing written. */
static void test_pop_v0_corrupt(void)
{
	struct got g;
	unsigned char k[128], val[64], want[64];
	size_t kn = unhex(NS_HEX " 70 30", k), vn;
	plant_v0_p0();
	/* A pop keeps v0: size 1 in the same 17 bytes. */
	got_reset(&g);
	CHECK_INT(set_pop(ks, KEY(DEFNS, "p0"), 1, 0, got_member, &g), 0);
	CHECK_INT(g.n, 1);
	CHECK_INT(fixture_meta_raw(ks, KEY("p0"), &v), 0);
	size_t wn = unhex("04 00 00 00 00 00 00 00 00 00 00 00 2B 00 00 00 01", want);
	CHECK_MEM(v.data, v.len, want, wn);
	/* Now it claims 3: a pop of all finds 1 (logged, nothing written). */
	vn = unhex("04 00 00 00 00 00 00 00 00 00 00 00 2B 00 00 00 03", val);
	fixture_put(ks, STORE_CF_METADATA, k, kn, val, vn);
	got_reset(&g);
	CHECK_INT(set_pop(ks, KEY(DEFNS, "p0"), 5, 0, got_member, &g), -EUCLEAN);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "p0"), 5, got_member, &g), -EUCLEAN);
	CHECK_INT(fixture_meta_raw(ks, KEY("p0"), &v), 0);
	CHECK_MEM(v.data, v.len, val, vn);
}

static void test_randmember(void)
{
	struct got g;
	add_members("rm", 4);
	struct buf before = BUF_INIT;
	fixture_snapshot(ks, KEY("rm"), &before);
	/* Uniform: 8000 single draws, each of 4 members near 2000. */
	int hits[4] = {0};
	for (int i = 0; i < 8000; i++) {
		got_reset(&g);
		CHECK_INT(set_randmember(ks, KEY(DEFNS, "rm"), 1, got_member, &g), 0);
		if (g.n == 1 && g.s[0] == 'm')
			hits[atoi(g.s + 1) & 3]++;
	}
	for (int i = 0; i < 4; i++)
		CHECK(hits[i] > 1700 && hits[i] < 2300);
	/* Two distinct: the 6 pairs near 1000 each of 6000, either order. */
	int pairs[4][4] = {{0}};
	int first_lower = 0;
	for (int i = 0; i < 6000; i++) {
		got_reset(&g);
		CHECK_INT(set_randmember(ks, KEY(DEFNS, "rm"), 2, got_member, &g), 0);
		int a = atoi(g.s + 1) & 3, c = atoi(g.s + 5) & 3;
		CHECK(g.n == 2 && a != c);
		pairs[a < c ? a : c][a < c ? c : a]++;
		first_lower += a < c;
	}
	for (int a = 0; a < 4; a++)
		for (int c = a + 1; c < 4; c++)
			CHECK(pairs[a][c] > 800 && pairs[a][c] < 1200);
	CHECK(first_lower > 2700 && first_lower < 3300);
	/* As many or more: all, in byte order. */
	got_reset(&g);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "rm"), 4, got_member, &g), 0);
	CHECK_MEM(g.s, strlen(g.s), "m00|m01|m02|m03|", 16);
	got_reset(&g);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "rm"), INT64_MAX, got_member, &g), 0);
	CHECK_INT(g.n, 4);
	/* Negative: that many draws, repeats allowed. */
	got_reset(&g);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "rm"), -20, got_member, &g), 0);
	CHECK_INT(g.n, 20);
	CHECK_INT(strlen(g.s), 80);
	CHECK_INT(set_add(ks, KEY(DEFNS, "one"), "x", 1, NULL), 0);
	got_reset(&g);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "one"), -3, got_member, &g), 0);
	CHECK_MEM(g.s, strlen(g.s), "x|x|x|", 6);
	/* None, missing, wrong type, too many draws, bad namespace. */
	got_reset(&g);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "rm"), 0, got_member, &g), 0);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "nope"), 3, got_member, &g), 0);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "nope"), -3, got_member, &g), 0);
	CHECK_INT(g.n, 0);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "s"), 1, got_member, &g), -KV_EWRONGTYPE);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "rm"), -(int64_t)SET_RAND_MAX - 1, got_member, &g),
		  -EINVAL);
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "rm"), INT64_MIN, got_member, &g), -EINVAL);
	CHECK_INT(set_randmember(ks, BADKEY, 1, got_member, &g), -EINVAL);
	g.fail_at = 1;
	CHECK_INT(set_randmember(ks, KEY(DEFNS, "rm"), 1, got_member, &g), -ECANCELED);
	/* Nothing of it wrote anything. */
	CHECK(fixture_unchanged(ks, KEY("rm"), &before));
	buf_release(&before);
}

static void test_move(void)
{
	struct ks_info info;
	CHECK_INT(set_add(ks, KEY(DEFNS, "ma"), "a", 1, NULL), 0);
	CHECK_INT(set_add(ks, KEY(DEFNS, "ma"), "b", 1, NULL), 0);
	CHECK_INT(set_add(ks, KEY(DEFNS, "mb"), "c", 1, NULL), 0);
	uint64_t va = fixture_version(ks, KEY("ma")), vb = fixture_version(ks, KEY("mb"));
	/* a: ma -> mb, one batch; versions stay. */
	CHECK_INT(set_move(ks, KEY(DEFNS, "ma"), "a", 1, KEY(DEFNS, "mb"), "a", 1, 0), 0);
	check_meta("ma", 1);
	check_meta("mb", 2);
	check_member_raw("ma", "a", false);
	check_member_raw("mb", "a", true);
	CHECK(fixture_version(ks, KEY("ma")) == va && fixture_version(ks, KEY("mb")) == vb);
	/* Onto a member dst has: src only loses it. */
	CHECK_INT(set_add(ks, KEY(DEFNS, "mb"), "b", 1, NULL), 0);
	CHECK_INT(set_move(ks, KEY(DEFNS, "ma"), "b", 1, KEY(DEFNS, "mb"), "b", 1, SET_KEEP_EMPTY),
		  0);
	check_meta("mb", 3);
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ma"), &info), 0);
	CHECK(info.empty && info.type == KV_TYPE_SET); /* kept empty */
	/* Into the remembered empty set: it becomes a set again. */
	CHECK_INT(set_move(ks, KEY(DEFNS, "mb"), "c", 1, KEY(DEFNS, "ma"), "c", 1, 0), 0);
	check_meta("ma", 1);
	check_member_raw("ma", "c", true);
	check_meta("mb", 2);
	/* To a missing key, renamed on the way: a new set. */
	CHECK_INT(set_move(ks, KEY(DEFNS, "ma"), "c", 1, KEY(DEFNS, "mc"), "z", 1, 0), 0);
	CHECK_INT(fixture_meta_raw(ks, KEY("ma"), &v), -ENOENT); /* its last member, no flag */
	CHECK_INT(ks_lookup(ks, KEY(DEFNS, "ma"), &info), -ENOENT);
	check_meta("mc", 1);
	check_member_raw("mc", "z", true);
	/* Within one key: a rename. */
	CHECK_INT(set_move(ks, KEY(DEFNS, "mc"), "z", 1, KEY(DEFNS, "mc"), "y", 1, 0), 0);
	check_member_raw("mc", "y", true);
	check_meta("mc", 1);
	/* Refusals change nothing. */
	struct buf sb = BUF_INIT, sc = BUF_INIT;
	fixture_snapshot(ks, KEY("mb"), &sb);
	fixture_snapshot(ks, KEY("mc"), &sc);
	CHECK_INT(set_move(ks, KEY(DEFNS, "mb"), "nope", 4, KEY(DEFNS, "mc"), "x", 1, 0), -ENOENT);
	CHECK_INT(set_move(ks, KEY(DEFNS, "none"), "a", 1, KEY(DEFNS, "mc"), "a", 1, 0), -ENOENT);
	CHECK_INT(set_move(ks, KEY(DEFNS, "mb"), "a", 1, KEY(DEFNS, "s"), "a", 1, 0),
		  -KV_EWRONGTYPE);
	CHECK_INT(set_move(ks, KEY(DEFNS, "s"), "a", 1, KEY(DEFNS, "mb"), "a", 1, 0),
		  -KV_EWRONGTYPE);
	CHECK_INT(
	    set_move(ks, KEY(DEFNS, "mb"), "a", 1, KEY(DEFNS, "mc"), "x", SET_MEMBER_MAX + 1, 0),
	    -EFBIG);
	CHECK_INT(set_move(ks, KEY(DEFNS, "mb"), "a", 1, BADKEY, "a", 1, 0), -EINVAL);
	CHECK(fixture_unchanged(ks, KEY("mb"), &sb));
	CHECK(fixture_unchanged(ks, KEY("mc"), &sc));
	CHECK_INT(string_get(ks, KEY(DEFNS, "s"), &v), 0);
	CHECK_MEM(v.data, v.len, "str", 3);
	buf_release(&sb);
	buf_release(&sc);
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
	test_pop();
	test_pop_v0_corrupt();
	test_randmember();
	test_move();
	test_model();
	test_read_only();
	fixture_done(ks);
	buf_release(&v);
	return check_done("test_set");
}
