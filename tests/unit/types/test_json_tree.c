/*
 * Unit tests for t_json_tree on a temporary database: every call with a
 * success, a missing-key, a wrong-type and a bad-input case (bad input
 * leaves the stored document as it was), array position names, moves,
 * type changes, and the expiry kept by every change.
 */
#include "check.h"
#include "fixture.h"
#include "types/t_json.h"
#include "types/t_json_tree.h"
#include "types/t_string.h"

#define P(s) (s), strlen(s)

static struct keyspace *ks;
static struct buf v = BUF_INIT;

/* Up to 8 steps from a '/'-separated string ("" = the root). */
struct steps {
	struct iovec v[8];
	size_t n;
	char text[256];
};

static struct steps *S(const char *path)
{
	static struct steps s[2];
	static int which;
	struct steps *st = &s[which++ & 1];
	st->n = 0;
	snprintf(st->text, sizeof(st->text), "%s", path);
	for (char *p = st->text; *p && st->n < 8;) {
		char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);
		st->v[st->n].iov_base = p;
		st->v[st->n].iov_len = len;
		st->n++;
		p += len + (slash ? 1 : 0);
	}
	return st;
}

#define ST(path) S(path)->v, S(path)->n

static void set_doc(const char *key, const char *text)
{
	CHECK_INT(json_set(ks, KEY(key), P("$"), P(text), 0), 0);
}

/* The document of key is text. */
static void check_doc(const char *key, const char *text)
{
	CHECK_INT(json_get(ks, KEY(key), P("$"), &v), 0);
	CHECK_MEM(v.data, v.len, text, strlen(text));
}

static int node(const char *key, const char *path, struct json_tree_node *jn)
{
	struct steps *s = S(path);
	return json_tree_stat(ks, KEY(key), s->v, s->n, jn);
}

static int read_node(const char *key, const char *path)
{
	struct steps *s = S(path);
	return json_tree_read(ks, KEY(key), s->v, s->n, &v);
}

static int write_node(const char *key, const char *path, const char *text, const char *type,
		      unsigned flags)
{
	struct steps *s = S(path);
	return json_tree_write(ks, KEY(key), s->v, s->n, P(text), type, flags);
}

static int mkdir_node(const char *key, const char *path, bool array)
{
	struct steps *s = S(path);
	return json_tree_mkdir(ks, KEY(key), s->v, s->n, array);
}

static int remove_node(const char *key, const char *path, bool dir)
{
	struct steps *s = S(path);
	return json_tree_remove(ks, KEY(key), s->v, s->n, dir);
}

static int move_node(const char *key, const char *from, const char *to)
{
	struct steps *a = S(from), *b = S(to);
	return json_tree_move(ks, KEY(key), a->v, a->n, b->v, b->n, 0);
}

static int retype_node(const char *key, const char *path, const char *type)
{
	struct steps *s = S(path);
	return json_tree_retype(ks, KEY(key), s->v, s->n, type);
}

static void test_stat_read(void)
{
	struct json_tree_node jn;
	set_doc("d",
		"{\"s\":\"a\\nb\",\"i\":12,\"f\":2.5,\"b\":true,\"n\":null,\"o\":{\"x\":[1,2]}}");
	CHECK_INT(node("d", "", &jn), 0);
	CHECK(jn.dir && strcmp(jn.type, "object") == 0 && jn.size == 6);
	CHECK_INT(node("d", "s", &jn), 0);
	CHECK(!jn.dir && strcmp(jn.type, "string") == 0 && jn.size == 4);
	CHECK_INT(node("d", "i", &jn), 0);
	CHECK(strcmp(jn.type, "integer") == 0 && jn.size == 3);
	CHECK_INT(node("d", "f", &jn), 0);
	CHECK(strcmp(jn.type, "number") == 0 && jn.size == 4);
	CHECK_INT(node("d", "o/x", &jn), 0);
	CHECK(jn.dir && strcmp(jn.type, "array") == 0 && jn.size == 2);
	CHECK_INT(read_node("d", "s"), 0);
	CHECK_MEM(v.data, v.len, "a\nb\n", 4);
	CHECK_INT(read_node("d", "n"), 0);
	CHECK_MEM(v.data, v.len, "null\n", 5);
	CHECK_INT(read_node("d", "o/x/1"), 0);
	CHECK_MEM(v.data, v.len, "2\n", 2);
	CHECK_INT(read_node("d", "o"), -EISDIR);
	CHECK_INT(node("d", "missing", &jn), -ENOENT);
	CHECK_INT(node("d", "s/below", &jn), -ENOTDIR);
	CHECK_INT(node("d", "o/x/01", &jn), -ENOENT); /* not the padded spelling */
	CHECK_INT(node("d", "o/x/2", &jn), -ENOENT);
	CHECK_INT(node("nokey", "a", &jn), -ENOENT);
	CHECK_INT(string_set(ks, KEY("str"), P("x"), 0), 0);
	CHECK_INT(node("str", "a", &jn), -KV_EWRONGTYPE);
}

struct listed {
	char names[16][24];
	uint64_t numbers[16];
	size_t n;
	size_t stop_after;
};

static int list_cb(void *arg, uint64_t number, const char *name, size_t nlen,
		   const struct json_tree_node *jn)
{
	(void)jn;
	struct listed *l = arg;
	if (l->n >= 16 || nlen >= 24)
		return -EINVAL;
	memcpy(l->names[l->n], name, nlen);
	l->names[l->n][nlen] = '\0';
	l->numbers[l->n++] = number;
	return l->stop_after && l->n == l->stop_after ? 1 : 0;
}

static void test_list(void)
{
	struct listed l = {0};
	struct steps *s;
	set_doc("l", "{\"b\":1,\"a\":2,\"arr\":[0,1,2,3,4,5,6,7,8,9,10]}");
	s = S("");
	CHECK_INT(json_tree_list(ks, KEY("l"), s->v, s->n, 0, list_cb, &l), 0);
	CHECK_INT(l.n, 3);
	CHECK(strcmp(l.names[0], "a") == 0 && strcmp(l.names[1], "arr") == 0 &&
	      strcmp(l.names[2], "b") == 0);
	memset(&l, 0, sizeof(l));
	s = S("arr");
	CHECK_INT(json_tree_list(ks, KEY("l"), s->v, s->n, 9, list_cb, &l), 0);
	CHECK_INT(l.n, 2);
	CHECK(strcmp(l.names[0], "09") == 0 && strcmp(l.names[1], "10") == 0);
	CHECK_INT(l.numbers[1], 10);
	memset(&l, 0, sizeof(l));
	l.stop_after = 3;
	CHECK_INT(json_tree_list(ks, KEY("l"), s->v, s->n, 0, list_cb, &l), 0);
	CHECK_INT(l.n, 3);
	/* In parts, over one reading: each part resumes, or starts over. */
	struct json_tree_iter *it;
	s = S("arr");
	CHECK_INT(json_tree_iter_new(ks, KEY("l"), s->v, s->n, &it), 0);
	memset(&l, 0, sizeof(l));
	l.stop_after = 4;
	CHECK_INT(json_tree_iter_list(it, 0, list_cb, &l), 0);
	CHECK_INT(l.n, 4);
	CHECK(strcmp(l.names[3], "03") == 0);
	set_doc("l", "{\"arr\":[]}"); /* the part after reads the same reading */
	l.stop_after = 0;
	CHECK_INT(json_tree_iter_list(it, 3, list_cb, &l), 0);
	CHECK_INT(l.n, 12);
	CHECK(strcmp(l.names[4], "03") == 0 && strcmp(l.names[11], "10") == 0);
	memset(&l, 0, sizeof(l));
	CHECK_INT(json_tree_iter_list(it, 1, list_cb, &l), 0);
	CHECK_INT(l.n, 10);
	CHECK(strcmp(l.names[0], "01") == 0);
	CHECK_INT(l.numbers[9], 10);
	json_tree_iter_free(it);
	s = S("arr");
	CHECK_INT(json_tree_iter_new(ks, KEY("l"), s->v, s->n, &it), 0);
	memset(&l, 0, sizeof(l));
	CHECK_INT(json_tree_iter_list(it, 0, list_cb, &l), 0);
	CHECK_INT(l.n, 0);
	json_tree_iter_free(it);
	s = S("nope");
	CHECK_INT(json_tree_iter_new(ks, KEY("l"), s->v, s->n, &it), -ENOENT);
	CHECK(it == NULL);
	set_doc("l", "{\"b\":1}");
	s = S("b");
	CHECK_INT(json_tree_list(ks, KEY("l"), s->v, s->n, 0, list_cb, &l), -ENOTDIR);
	char name[24];
	CHECK_INT(json_tree_index_name(7, 1000, name), 3);
	CHECK(strcmp(name, "007") == 0);
	CHECK_INT(json_tree_index_name(0, 1, name), 1);
	CHECK_INT(json_tree_index_name(9, 10, name), 1);
	CHECK_INT(json_tree_index_name(10, 11, name), 2);
}

static void test_write(void)
{
	set_doc("w", "{\"s\":\"x\",\"i\":1,\"a\":[1]}");
	CHECK_INT(write_node("w", "s", "hello \"you\"\n", NULL, 0), 0);
	CHECK_INT(write_node("w", "i", "42\n", NULL, 0), 0);
	CHECK_INT(write_node("w", "new", "7\n", NULL, 0), 0); /* a new node: a string */
	CHECK_INT(write_node("w", "a/1", "y", NULL, 0), 0);   /* appended */
	check_doc("w", "{\"a\":[1,\"y\"],\"i\":42,\"new\":\"7\",\"s\":\"hello \\\"you\\\"\"}");
	/* A number member takes any JSON scalar; its type follows. */
	CHECK_INT(write_node("w", "i", "2.5", NULL, 0), 0);
	CHECK_INT(write_node("w", "i", "\"q\"", NULL, 0), 0);
	check_doc("w", "{\"a\":[1,\"y\"],\"i\":\"q\",\"new\":\"7\",\"s\":\"hello \\\"you\\\"\"}");
	/* Bad input changes nothing. */
	set_doc("w", "{\"i\":1,\"s\":\"x\",\"a\":[]}");
	CHECK_INT(write_node("w", "i", "eighty", NULL, 0), -EINVAL);
	CHECK_INT(write_node("w", "i", "99999999999999999999", NULL, 0), -ERANGE);
	CHECK_INT(write_node("w", "i", "{\"a\":1}", NULL, 0), -EINVAL);
	CHECK_INT(write_node("w", "i", "1 2", NULL, 0), -EINVAL);
	CHECK_INT(write_node("w", "s", "\xff\xfe", NULL, 0), -EINVAL); /* not UTF-8 */
	CHECK_INT(json_tree_write(ks, KEY("w"), ST("s"), "a\0b", 3, NULL, 0), -EINVAL);
	CHECK_INT(write_node("w", "a/5", "x", NULL, 0), -EINVAL); /* past the end */
	CHECK_INT(write_node("w", "a/x", "x", NULL, 0), -EINVAL);
	CHECK_INT(write_node("w", "a", "x", NULL, 0), -EISDIR);
	CHECK_INT(write_node("w", "", "x", NULL, 0), -EISDIR);
	CHECK_INT(write_node("w", "s", "y", NULL, JSON_TREE_NEW), -EEXIST);
	CHECK_INT(write_node("w", "no/such", "y", NULL, 0), -ENOENT);
	CHECK_INT(write_node("w", "s/below", "y", NULL, 0), -ENOTDIR);
	CHECK_INT(write_node("w", "i", "1", "object", 0), -EINVAL);
	check_doc("w", "{\"a\":[],\"i\":1,\"s\":\"x\"}");
	CHECK_INT(write_node("nokey", "a", "1", NULL, 0), -ENOENT);
	CHECK_INT(write_node("str", "a", "1", NULL, 0), -KV_EWRONGTYPE);
	/* An explicit type reads the text as that type. */
	CHECK_INT(write_node("w", "s", "5", "integer", 0), 0);
	CHECK_INT(write_node("w", "s", "true", "integer", 0), -EINVAL);
	check_doc("w", "{\"a\":[],\"i\":1,\"s\":5}");
}

static void test_mkdir_remove(void)
{
	set_doc("m", "{\"a\":1,\"l\":[\"x\",\"y\",\"z\"]}");
	CHECK_INT(mkdir_node("m", "o", false), 0);
	CHECK_INT(mkdir_node("m", "o/arr", true), 0);
	CHECK_INT(mkdir_node("m", "l/3", false), 0);
	check_doc("m", "{\"a\":1,\"l\":[\"x\",\"y\",\"z\",{}],\"o\":{\"arr\":[]}}");
	CHECK_INT(mkdir_node("m", "o", false), -EEXIST);
	CHECK_INT(mkdir_node("m", "l/9", false), -EINVAL);
	CHECK_INT(mkdir_node("m", "a/b", false), -ENOTDIR);
	CHECK_INT(remove_node("m", "o", true), -ENOTEMPTY);
	CHECK_INT(remove_node("m", "o", false), -EISDIR);
	CHECK_INT(remove_node("m", "a", true), -ENOTDIR);
	CHECK_INT(remove_node("m", "zz", false), -ENOENT);
	CHECK_INT(remove_node("m", "", true), -EBUSY);
	check_doc("m", "{\"a\":1,\"l\":[\"x\",\"y\",\"z\",{}],\"o\":{\"arr\":[]}}");
	CHECK_INT(remove_node("m", "o/arr", true), 0);
	CHECK_INT(remove_node("m", "l/0", false), 0);
	CHECK_INT(remove_node("m", "l/2", true), 0);
	CHECK_INT(remove_node("m", "a", false), 0);
	check_doc("m", "{\"l\":[\"y\",\"z\"],\"o\":{}}");
}

static void test_move(void)
{
	set_doc("mv", "{\"a\":{\"b\":1},\"c\":[1,2],\"d\":\"s\",\"e\":{}}");
	CHECK_INT(move_node("mv", "a/b", "top"), 0);
	check_doc("mv", "{\"a\":{},\"c\":[1,2],\"d\":\"s\",\"e\":{},\"top\":1}");
	CHECK_INT(move_node("mv", "d", "c/2"), 0); /* appended */
	CHECK_INT(move_node("mv", "c/0", "c/1"), 0);
	/* the element named 1 (2) is replaced, before 0 left: [1,"s"] */
	check_doc("mv", "{\"a\":{},\"c\":[1,\"s\"],\"e\":{},\"top\":1}");
	/* the length (2) appends, after the source left its own array */
	CHECK_INT(move_node("mv", "c/0", "c/2"), 0);
	check_doc("mv", "{\"a\":{},\"c\":[\"s\",1],\"e\":{},\"top\":1}");
	CHECK_INT(move_node("mv", "c/0", "c/1"), 0);
	check_doc("mv", "{\"a\":{},\"c\":[\"s\"],\"e\":{},\"top\":1}");
	CHECK_INT(move_node("mv", "top", "c/0"), 0);
	check_doc("mv", "{\"a\":{},\"c\":[1],\"e\":{}}");
	CHECK_INT(move_node("mv", "c/0", "c/2"), -EINVAL); /* no new position */
	set_doc("mv", "{\"a\":{},\"c\":[2,1],\"e\":{},\"top\":1}");
	CHECK_INT(move_node("mv", "a", "e"), 0); /* over an empty directory */
	CHECK_INT(move_node("mv", "top", "top"), 0);
	check_doc("mv", "{\"c\":[2,1],\"e\":{},\"top\":1}");
	/* Refusals change nothing. */
	CHECK_INT(move_node("mv", "e", "e/x"), -EINVAL);
	CHECK_INT(move_node("mv", "top", "e"), -EISDIR);
	CHECK_INT(move_node("mv", "e", "top"), -ENOTDIR);
	CHECK_INT(move_node("mv", "c", "e"), 0); /* e is empty: replaced */
	check_doc("mv", "{\"e\":[2,1],\"top\":1}");
	/* rename's NOREPLACE: an existing target is refused in the edit */
	struct steps *a = S("top"), *b = S("e/0");
	CHECK_INT(json_tree_move(ks, KEY("mv"), a->v, a->n, b->v, b->n, JSON_TREE_NEW), -EEXIST);
	a = S("top"), b = S("e/2");
	CHECK_INT(json_tree_move(ks, KEY("mv"), a->v, a->n, b->v, b->n, JSON_TREE_NEW), 0);
	check_doc("mv", "{\"e\":[2,1,1]}");
	set_doc("mv", "{\"e\":[2,1],\"top\":1}");
	set_doc("mv", "{\"full\":{\"x\":1},\"o\":{}}");
	CHECK_INT(move_node("mv", "o", "full"), -ENOTEMPTY);
	CHECK_INT(move_node("mv", "none", "x"), -ENOENT);
	CHECK_INT(move_node("mv", "o", "no/where"), -ENOENT);
	check_doc("mv", "{\"full\":{\"x\":1},\"o\":{}}");
}

/* An open file's write: stored only over the text its writer read. */
static void test_write_if(void)
{
	struct buf now = BUF_INIT;
	set_doc("wi", "{\"arr\":[\"a\",\"b\",\"c\"],\"n\":5}");
	struct steps *s = S("arr/1");
	CHECK_INT(json_tree_write_if(ks, KEY("wi"), s->v, s->n, P("X\n"), P("b\n"), &now), 0);
	CHECK_MEM(now.data, now.len, "X\n", 2);
	check_doc("wi", "{\"arr\":[\"a\",\"X\",\"c\"],\"n\":5}");
	/* element 0 removed behind the writer's back: 1 now holds "c" */
	CHECK_INT(remove_node("wi", "arr/0", false), 0);
	s = S("arr/1");
	CHECK_INT(json_tree_write_if(ks, KEY("wi"), s->v, s->n, P("Y\n"), P("X\n"), &now), -ESTALE);
	/* the array shrank to that length: no append either */
	s = S("arr/2");
	CHECK_INT(json_tree_write_if(ks, KEY("wi"), s->v, s->n, P("Y\n"), P("c\n"), NULL), -ESTALE);
	check_doc("wi", "{\"arr\":[\"X\",\"c\"],\"n\":5}");
	s = S("n");
	CHECK_INT(json_tree_write_if(ks, KEY("wi"), s->v, s->n, P("7"), P("5\n"), &now), 0);
	CHECK_MEM(now.data, now.len, "7\n", 2);
	check_doc("wi", "{\"arr\":[\"X\",\"c\"],\"n\":7}");
	buf_release(&now);
}

/* The array digest: positions, types and scalar texts, not what a
 * container element holds. */
static void test_array_digest(void)
{
	uint64_t len, d1, d2;
	set_doc("ad", "{\"a\":[1,\"x\",{\"k\":1}],\"o\":{}}");
	struct steps *s = S("a");
	CHECK_INT(json_tree_array_digest(ks, KEY("ad"), s->v, s->n, &len, &d1), 0);
	CHECK(len == 3);
	set_doc("ad", "{\"a\":[1,\"x\",{\"k\":2,\"m\":[]}],\"o\":{}}");
	CHECK_INT(json_tree_array_digest(ks, KEY("ad"), s->v, s->n, &len, &d2), 0);
	CHECK(d1 == d2);
	set_doc("ad", "{\"a\":[1,\"y\",{}],\"o\":{}}");
	CHECK_INT(json_tree_array_digest(ks, KEY("ad"), s->v, s->n, &len, &d2), 0);
	CHECK(d1 != d2);
	set_doc("ad", "{\"a\":[\"1\",\"x\",{}],\"o\":{}}");
	CHECK_INT(json_tree_array_digest(ks, KEY("ad"), s->v, s->n, &len, &d2), 0);
	CHECK(d1 != d2); /* a string "1" is not the integer 1 */
	s = S("o");
	CHECK_INT(json_tree_array_digest(ks, KEY("ad"), s->v, s->n, &len, &d2), -ENOTDIR);
}

static void test_retype(void)
{
	set_doc("t", "{\"s\":\"8080\",\"i\":5,\"o\":{},\"f\":{\"x\":1},\"b\":\"yes\"}");
	CHECK_INT(retype_node("t", "s", "integer"), 0);
	CHECK_INT(retype_node("t", "i", "number"), 0);
	CHECK_INT(retype_node("t", "o", "array"), 0);
	check_doc("t", "{\"b\":\"yes\",\"f\":{\"x\":1},\"i\":5.0,\"o\":[],\"s\":8080}");
	CHECK_INT(retype_node("t", "i", "string"), 0);
	CHECK_INT(retype_node("t", "s", "integer"), 0); /* the same: nothing */
	check_doc("t", "{\"b\":\"yes\",\"f\":{\"x\":1},\"i\":\"5.0\",\"o\":[],\"s\":8080}");
	CHECK_INT(retype_node("t", "b", "boolean"), -EINVAL);
	CHECK_INT(retype_node("t", "b", "object"), -EINVAL);
	CHECK_INT(retype_node("t", "o", "string"), -EINVAL);
	CHECK_INT(retype_node("t", "f", "array"), -ENOTEMPTY);
	CHECK_INT(retype_node("t", "b", "bogus"), -EINVAL);
	CHECK_INT(retype_node("t", "x", "string"), -ENOENT);
	check_doc("t", "{\"b\":\"yes\",\"f\":{\"x\":1},\"i\":\"5.0\",\"o\":[],\"s\":8080}");
	CHECK_INT(retype_node("t", "b", "null"), 0);
	check_doc("t", "{\"b\":null,\"f\":{\"x\":1},\"i\":\"5.0\",\"o\":[],\"s\":8080}");
	set_doc("t", "{}");
	CHECK_INT(retype_node("t", "", "array"), 0); /* an empty root */
	check_doc("t", "[]");
}

static void test_expiry_kept(void)
{
	struct ks_info info;
	set_doc("ttl", "{\"a\":1,\"b\":{}}");
	uint64_t at = now_ms() + 3600000;
	CHECK_INT(ks_expire(ks, KEY("ttl"), at), 0);
	CHECK_INT(write_node("ttl", "a", "2", NULL, 0), 0);
	CHECK_INT(mkdir_node("ttl", "c", false), 0);
	CHECK_INT(move_node("ttl", "a", "c/a"), 0);
	CHECK_INT(remove_node("ttl", "b", true), 0);
	CHECK_INT(retype_node("ttl", "c/a", "string"), 0);
	CHECK_INT(ks_lookup(ks, KEY("ttl"), &info), 0);
	CHECK_INT(info.expire_ms, at);
	check_doc("ttl", "{\"c\":{\"a\":\"2\"}}");
}

int main(void)
{
	log_level_current = -1;
	ks = fixture_open_checked();
	if (!ks)
		return check_done("test_json_tree");
	test_stat_read();
	test_list();
	test_write();
	test_mkdir_remove();
	test_move();
	test_write_if();
	test_array_digest();
	test_retype();
	test_expiry_kept();
	fixture_done(ks);
	buf_release(&v);
	return check_done("test_json_tree");
}
