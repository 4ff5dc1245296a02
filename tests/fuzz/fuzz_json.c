/*
 * Fuzz harness: the JSON module (t_json.c) on a temporary database: its
 * text parser with the number pre-scan and the printer, its JSONPaths,
 * and its reading of a stored JSON record (format byte, then JSON text or
 * CBOR). The first byte picks:
 *   0  the rest is a stored JSON record's value after the metadata header
 *      (format byte + payload), read through the verbs;
 *   1  the rest is a document: JSON.SET $, and what JSON.GET $ prints
 *      must read back to the same text;
 *   2  [path: u16 length, bytes] then a value: the path verbs on a small
 *      document (wildcards, .., slices and filters too: the verbs'
 *      answers agree on the number of matches);
 *   3  the rest is a JSON file's text written through the tree
 *      (the JSON file shape's commit) or appended to (its add).
 */
#include "fuzz.h"

#include "engine/encoding.h"
#include "fs/fs_int.h"
#include "types/t_json.h"

static struct buf out = BUF_INIT, again = BUF_INIT;
static struct fs fs;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

static void read_all(struct keyspace *ks, const struct ks_key *k, const char *path, size_t plen)
{
	uint64_t n;
	const char *type;
	(void)json_get(ks, k, path, plen, &out);
	(void)json_type(ks, k, path, plen, &type);
	(void)json_objkeys(ks, k, path, plen, &out);
	(void)json_text_len(ks, k, &n);
}

static void planted(struct keyspace *ks, const struct ks_key *k, const char *d, size_t n)
{
	struct buf rec = BUF_INIT;
	if (buf_add_u8(&rec, ENC_FLAG_64BIT | KV_TYPE_JSON) || buf_add_be64(&rec, 0) ||
	    buf_add(&rec, d, n))
		abort();
	fuzz_put_meta(k, rec.data, rec.len);
	buf_release(&rec);
	read_all(ks, k, "$", 1);
	read_all(ks, k, "$.a", 3);
	read_all(ks, k, "$[1]", 4);
	read_all(ks, k, "$['k'][-1]", 10);
	(void)json_to_string(ks, k, JSON_NEWLINE);
}

static void document(struct keyspace *ks, const struct ks_key *k, const char *d, size_t n)
{
	if (json_set(ks, k, "$", 1, d, n, 0))
		return;
	FUZZ_ASSERT(json_get(ks, k, "$", 1, &out) == 0);
	/* What kvfs prints, it reads back as the same text. */
	FUZZ_ASSERT(json_set(ks, k, "$", 1, out.data, out.len, JSON_SET_XX) == 0);
	FUZZ_ASSERT(json_get(ks, k, "$", 1, &again) == 0);
	FUZZ_ASSERT(again.len == out.len && memcmp(again.data, out.data, out.len) == 0);
	uint64_t len;
	FUZZ_ASSERT(json_text_len(ks, k, &len) == 0 && len == out.len);
}

/* An indefinite path: JSON.GET's array, JSON.TYPE's and JSON.OBJKEYS's
 * lines agree on the number of matches. */
static void matches(struct keyspace *ks, const struct ks_key *k, const char *p, size_t pn)
{
	if (json_path_check(p, pn) || json_path_is_definite(p, pn))
		return;
	int nt = json_types(ks, k, p, pn, &out);
	int no = json_objkeys_each(ks, k, p, pn, &again);
	FUZZ_ASSERT(nt == no);
	if (json_get(ks, k, p, pn, &out) == 0)
		FUZZ_ASSERT(out.len >= 2 && out.data[0] == '[' && out.data[out.len - 1] == ']' &&
			    (nt > 0) == (out.len > 2));
}

static void paths(struct keyspace *ks, const struct ks_key *k, struct fuzz_in *in)
{
	static const char doc[] = "{\"a\":[1,2,{\"b\":\"x\",\"a\":[0,{\"n\":2}]}],\"n\":1.5,"
				  "\"s\":\"str\",\"o\":{\"n\":-1,\"t\":true,\"z\":null}}";
	size_t pn;
	const char *p = (const char *)fuzz_field(in, &pn);
	const char *v = (const char *)in->p;
	size_t vn = in->n;
	uint64_t len;
	if (json_set(ks, k, "$", 1, doc, sizeof(doc) - 1, 0))
		abort();
	(void)json_path_check(p, pn);
	read_all(ks, k, p, pn);
	matches(ks, k, p, pn);
	(void)json_set(ks, k, p, pn, v, vn, 0);
	(void)json_set(ks, k, p, pn, v, vn, JSON_SET_NX);
	(void)json_arrappend(ks, k, p, pn, v, vn, &len);
	(void)json_strappend(ks, k, p, pn, v, vn, &len);
	(void)json_numincrby(ks, k, p, pn, v, vn, &out);
	read_all(ks, k, "$", 1);
	uint64_t count;
	(void)json_del_count(ks, k, p, pn, &count);
	read_all(ks, k, "$", 1);
}

static void tree(struct keyspace *ks, const struct ks_key *k, const char *d, size_t n)
{
	fs.ks = ks;
	(void)fs_json_file_shape.commit(&fs, k, d, n);
	(void)fs_json_file_shape.load(&fs, k, &out);
	(void)fs_json_file_shape.add(&fs, k, d, n);
	(void)fs_json_file_shape.load(&fs, k, &out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fuzz_in in = {data, size};
	struct ks_key k = fuzz_key_next();
	struct keyspace *ks = fuzz_db();
	unsigned mode = fuzz_u8(&in) % 4;
	char *d = malloc(in.n ? in.n : 1);
	if (!d)
		abort();
	if (in.n)
		memcpy(d, in.p, in.n);
	switch (mode) {
	case 0:
		planted(ks, &k, d, in.n);
		break;
	case 1:
		document(ks, &k, d, in.n);
		break;
	case 2:
		paths(ks, &k, &in);
		break;
	case 3:
		tree(ks, &k, d, in.n);
		break;
	}
	free(d);
	buf_reset(&out);
	buf_reset(&again);
	return 0;
}
