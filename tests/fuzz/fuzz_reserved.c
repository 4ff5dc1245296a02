/*
 * Fuzz harness: the records kvfs keeps in its reserved namespace
 * "__kvfs" (src/keyspace/keyspace.c, src/keyspace/ks_attr.c): a key's times, mode, owner
 * and extended attributes and those of its entries ("@" records), and
 * its empty-collection record ("E"). Each run plants such records for a
 * key of its own, as a corrupt disk or another writer could have left
 * them, then reads and rewrites them through the keyspace: TYPE, the
 * attribute and xattr readers, a chmod and an xattr set over them, key
 * iteration, and DEL. They must answer or refuse, never crash; a setter
 * that succeeds must leave what it set readable.
 *
 * Input: [flags u8] [metadata record: u16 length, bytes] [empty record
 * value: u16 length, bytes] then up to MAX_RECORDS times [part: u16
 * length, bytes after the key's "@" prefix] [value: u16 length, bytes].
 * flags: bit 0 plants the metadata, bit 1 the empty record, bit 2 sets
 * a mode, bit 3 sets an xattr, bit 4 deletes the key at the end.
 */
#include "fuzz.h"

#include "engine/encoding.h"
#include "keyspace/ks_attr.h"
#include "keyspace/ks_int.h"

#define MAX_RECORDS 16

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

/* The bytes every "@" record of k starts with (see src/keyspace/ks_attr.c). */
static void attr_prefix(const struct ks_key *k, struct buf *out)
{
	if (enc_ns_key(out, KS_RESERVED_NS, strlen(KS_RESERVED_NS), NULL, 0, false) ||
	    buf_add_u8(out, '@') || buf_add_u8(out, (uint8_t)k->nslen) ||
	    buf_add(out, k->ns, k->nslen) || buf_add_be32(out, (uint32_t)k->klen) ||
	    buf_add(out, k->key, k->klen))
		abort();
}

static void put_raw(const struct buf *key, const void *v, size_t vn)
{
	struct store_batch *b = store_batch_new(ks_store(fuzz_ks));
	if (!b)
		abort();
	store_batch_put(b, STORE_CF_METADATA, key->data, key->len, v, vn);
	if (store_write(ks_store(fuzz_ks), b, false))
		abort();
	store_batch_free(b);
}

static void read_all(struct keyspace *ks, const struct ks_key *k, uint64_t version)
{
	struct buf out = BUF_INIT;
	struct ks_attr a;
	(void)ks_attr_get(ks, k, version, NULL, 0, &a);
	(void)ks_attr_get(ks, k, version, "e", 1, &a);
	(void)ks_attr_get_times(ks, k, version, "e", 1, &a);
	(void)ks_xattr_list(ks, k, version, NULL, 0, &out);
	(void)ks_xattr_list(ks, k, version, "e", 1, &out);
	(void)ks_xattr_get(ks, k, version, NULL, 0, "user.a", 6, &out);
	(void)ks_xattr_get(ks, k, version, "e", 1, "user.a", 6, &out);
	buf_release(&out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	/* A namespace of its own ("fzN", key "k"): the iteration below sees
	 * this run's records only. */
	struct ks_key k = fuzz_key_next();
	k = (struct ks_key){k.key, k.klen, "k", 1, NULL, NULL};
	struct keyspace *ks = fuzz_ks;
	struct buf key = BUF_INIT, pre = BUF_INIT, out = BUF_INIT;
	struct ks_info info;
	size_t mn, en;

	uint8_t flags = fuzz_u8(&in);
	const uint8_t *meta = fuzz_field(&in, &mn);
	const uint8_t *empty = fuzz_field(&in, &en);
	if (flags & 1)
		fuzz_put_meta(&k, meta, mn);
	if (flags & 2) {
		if (ks_empty_key(ks, &k, &key))
			abort();
		put_raw(&key, empty, en);
	}
	attr_prefix(&k, &pre);
	for (int i = 0; i < MAX_RECORDS && in.n; i++) {
		size_t pn, vn;
		const uint8_t *part = fuzz_field(&in, &pn);
		const uint8_t *v = fuzz_field(&in, &vn);
		if (buf_set(&key, pre.data, pre.len) || buf_add(&key, part, pn))
			abort();
		put_raw(&key, v, vn);
	}

	/* TYPE reads the metadata and the empty record; the version it
	 * gives is the one the attribute records are read for. */
	uint64_t version = 0;
	if (ks_lookup(ks, &k, &info) == 0)
		version = info.version;
	read_all(ks, &k, version);
	read_all(ks, &k, 0);

	if (flags & 4) {
		struct ks_attr_set s = {.mask = KS_ATTR_SET_MODE, .mode = 0640};
		if (ks_attr_set(ks, &k, NULL, 0, &s) == 0) {
			struct ks_attr a;
			FUZZ_ASSERT(ks_attr_get(ks, &k, version, NULL, 0, &a) == 0);
			FUZZ_ASSERT((a.has & KS_ATTR_HAS_MODE) && a.mode == 0640);
		}
	}
	if (flags & 8) {
		if (ks_xattr_set(ks, &k, NULL, 0, "user.z", 6, "v", 1, 0) == 0) {
			FUZZ_ASSERT(ks_xattr_get(ks, &k, version, NULL, 0, "user.z", 6, &out) == 0);
			FUZZ_ASSERT(out.len == 1 && out.data[0] == 'v');
		}
	}

	/* Key iteration merges live keys with empty records: one key at
	 * most here, and it must end. */
	struct ks_key_iter *it = ks_key_iter_new(ks, k.ns, k.nslen, NULL, 0);
	if (it) {
		const char *name;
		size_t n;
		int steps = 0;
		while (ks_key_iter_next(it, &name, &n, &info) == 1)
			FUZZ_ASSERT(++steps <= 1 && n == 1 && name[0] == 'k');
		ks_key_iter_free(it);
	}
	if (flags & 16)
		(void)ks_del(ks, &k);

	buf_release(&key);
	buf_release(&pre);
	buf_release(&out);
	return 0;
}
