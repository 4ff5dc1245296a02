/*
 * fs_bitops: BITCOUNT, BITPOS and BITOP of bitmap keys as names of their
 * namespace (docs/mapping.md, "Counting and finding bits"):
 *
 *   KEY:bitcount                 BITCOUNT KEY
 *   KEY:bitcount:START:END       BITCOUNT KEY START END (bytes, inclusive,
 *                                negative from the end)
 *   KEY:bitpos:BIT               BITPOS KEY BIT (BIT: 0 or 1)
 *   KEY:bitpos:BIT:START[:END]   BITPOS KEY BIT START [END]
 *   DEST:bitop:OP:K1,K2,...      BITOP OP DEST K1 K2 ... (OP: and, or, xor,
 *                                not; the sources an item list)
 *
 * Never listed, answered only when no key has the exact name; each open
 * computes the answer anew (nothing of it is cached), a number and a
 * newline. BITOP is an action with a side effect: each open runs it once,
 * in one batch, and what the kernel kept of DEST is dropped. A key of
 * another type is EMEDIUMTYPE, a name whose numbers, operation or item
 * list do not parse EINVAL, both logged. Of several verbs in one name the
 * rightmost whose tail parses is the one (a ':' of a source is %3A).
 * Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fs/fs_xval.h"
#include "types/t_bitmap.h"

enum bit_verb { VERB_COUNT, VERB_POS, VERB_OP };

struct bitop_name {
	size_t base; /* the key's name: name[0, base) */
	enum bit_verb verb;
	bool bit;
	int nargs; /* numbers after the verb (BITPOS: after BIT) */
	int64_t arg[2];
	enum bitmap_op op; /* BITOP */
	const char *items; /* BITOP's sources: an item list (fs_items_split) */
	size_t itemlen;
};

static const struct {
	const char *name;
	enum bitmap_op op;
} bit_ops[] = {
    {"and", BITMAP_OP_AND},
    {"or", BITMAP_OP_OR},
    {"xor", BITMAP_OP_XOR},
    {"not", BITMAP_OP_NOT},
};

/* "OP:ITEMS" (OP in any case, as Redis; ITEMS not empty) into b. */
static bool parse_op(const char *s, size_t n, struct bitop_name *b)
{
	for (size_t i = 0; i < sizeof(bit_ops) / sizeof(bit_ops[0]); i++) {
		size_t on = strlen(bit_ops[i].name);
		if (n > on + 1 && s[on] == ':' && strncasecmp(s, bit_ops[i].name, on) == 0) {
			b->op = bit_ops[i].op;
			b->items = s + on + 1;
			b->itemlen = n - on - 1;
			return true;
		}
	}
	return false;
}

/* Parse s[0, n) as "N[:N]" (at most `most` numbers): 0, or -1. */
static int parse_nums(const char *s, size_t n, int most, struct bitop_name *b)
{
	b->nargs = 0;
	size_t start = 0;
	for (size_t i = 0; i <= n; i++) {
		if (i < n && s[i] != ':')
			continue;
		if (b->nargs == most || parse_i64(s + start, i - start, &b->arg[b->nargs]) != 0)
			return -1;
		b->nargs++;
		start = i + 1;
	}
	return 0;
}

/* 1 and *b if name is one of the names above (the rightmost verb whose
 * tail parses), 0 if it is none, -1 if its verb is there but the numbers
 * after it do not parse (the caller logs). */
static int bitop_parse(const char *name, size_t n, struct bitop_name *b)
{
	static const char cnt[] = ":bitcount", pos[] = ":bitpos:", op[] = ":bitop:";
	int seen = 0;
	memset(b, 0, sizeof(*b));
	for (size_t i = n; i-- > 0;) {
		if (name[i] != ':' || i == 0)
			continue;
		const char *t = name + i;
		size_t tn = n - i;
		if (tn >= sizeof(cnt) - 1 && memcmp(t, cnt, sizeof(cnt) - 1) == 0 &&
		    (tn == sizeof(cnt) - 1 || t[sizeof(cnt) - 1] == ':')) {
			seen = -1;
			size_t a = sizeof(cnt) - 1;
			b->base = i;
			b->verb = VERB_COUNT;
			if (tn == a)
				return 1;
			if (parse_nums(t + a + 1, tn - a - 1, 2, b) == 0 && b->nargs == 2)
				return 1;
		} else if (tn > sizeof(pos) - 1 && memcmp(t, pos, sizeof(pos) - 1) == 0) {
			seen = -1;
			const char *r = t + sizeof(pos) - 1;
			size_t rn = tn - (sizeof(pos) - 1);
			b->base = i;
			b->verb = VERB_POS;
			if ((r[0] == '0' || r[0] == '1') && (rn == 1 || r[1] == ':')) {
				b->bit = r[0] == '1';
				if (rn == 1 || parse_nums(r + 2, rn - 2, 2, b) == 0)
					return 1;
			}
		} else if (tn > sizeof(op) - 1 && memcmp(t, op, sizeof(op) - 1) == 0) {
			seen = -1;
			b->base = i;
			b->verb = VERB_OP;
			if (parse_op(t + sizeof(op) - 1, tn - (sizeof(op) - 1), b))
				return 1;
		}
	}
	return seen;
}

static bool bitop_is_name(const char *name, size_t n)
{
	struct bitop_name b;
	return bitop_parse(name, n, &b) != 0;
}

/* Name the first source that is no bitmap (after -KV_EWRONGTYPE). */
static void op_wrongtype(struct fs *fs, const struct ks_key *k, const struct ks_key *srcs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		struct ks_info info;
		if (ks_lookup(fs->ks, &srcs[i], &info) == 0 && !info.empty &&
		    info.type != KV_TYPE_BITMAP) {
			LOG_ERR(
			    "'%.*s': source '%.*s' is a %s; BITOP reads bitmaps%s", (int)k->klen,
			    k->key, (int)srcs[i].klen, srcs[i].key, enc_type_name(info.type),
			    info.type == KV_TYPE_STRING ? " (convert with user.kvfs.type)" : "");
			return;
		}
	}
	LOG_ERR("'%.*s': a source is no bitmap", (int)k->klen, k->key);
}

/* BITOP b.op DEST (key) of the sources b names: DEST's length and a
 * newline into out. */
static int op_run(struct fs *fs, const struct ks_key *k, const struct ks_key *dest,
		  const struct bitop_name *b, struct buf *out)
{
	struct fs_items it;
	struct ks_key *srcs = NULL;
	uint64_t len = 0;
	int rc = fs_items_split(b->items, b->itemlen, "BITOP sources", &it);
	if (!rc && b->op == BITMAP_OP_NOT && it.n != 1) {
		LOG_ERR("'%.*s': BITOP NOT takes exactly one source, not %zu", (int)k->klen, k->key,
			it.n);
		rc = -EINVAL;
	}
	if (!rc && !(srcs = calloc(it.n, sizeof(*srcs))))
		rc = -ENOMEM;
	for (size_t i = 0; !rc && i < it.n; i++) {
		srcs[i] = *k;
		srcs[i].key = it.v[i].iov_base;
		srcs[i].klen = it.v[i].iov_len;
		srcs[i].attr = NULL;
	}
	if (!rc)
		rc = bitmap_bitop(fs->ks, b->op, dest, srcs, it.n, &len);
	if (!rc)
		rc = buf_printf(out, "%" PRIu64 "\n", len);
	else if (rc == -KV_EWRONGTYPE)
		op_wrongtype(fs, k, srcs, it.n);
	else if (rc == -E2BIG)
		LOG_ERR("'%.*s': BITOP locks at most %d distinct keys, the destination counted",
			(int)k->klen, k->key, BITMAP_BITOP_MAX_KEYS);
	free(srcs);
	fs_items_release(&it);
	return rc;
}

static int bitop_act(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	struct bitop_name b;
	int rc = bitop_parse(k->key, k->klen, &b);
	if (rc < 0) {
		LOG_ERR("'%.*s': write KEY:bitcount[:START:END], KEY:bitpos:0|1[:START[:END]] "
			"(START, END: byte offsets, negative from the end) or "
			"DEST:bitop:and|or|xor|not:KEY[,KEY]...",
			(int)k->klen, k->key);
		return -EINVAL;
	}
	if (rc == 0)
		return -ENOENT;
	struct ks_key key = *k; /* the bitmap (BITOP's destination): the name's base */
	key.klen = b.base;
	key.snap = NULL; /* the latest; a write never reads at a snapshot */
	if (b.verb == VERB_OP)
		return op_run(fs, k, &key, &b, out); /* dest keeps k's change: its times */
	key.attr = NULL;
	if (b.verb == VERB_POS) {
		int64_t p;
		rc = bitmap_bitpos(fs->ks, &key, b.bit, b.nargs > 0 ? b.arg[0] : 0,
				   b.nargs > 1 ? b.arg[1] : -1, b.nargs > 1, &p);
		if (!rc)
			rc = buf_printf(out, "%" PRId64 "\n", p);
	} else {
		uint64_t c;
		rc = bitmap_bitcount(fs->ks, &key, b.nargs ? b.arg[0] : 0, b.nargs ? b.arg[1] : -1,
				     &c);
		if (!rc)
			rc = buf_printf(out, "%" PRIu64 "\n", c);
	}
	if (rc == -KV_EWRONGTYPE)
		LOG_ERR("'%.*s': '%.*s' is no bitmap", (int)k->klen, k->key, (int)key.klen,
			key.key);
	return rc;
}

/* BITOP changes its destination: the name's base. */
static size_t bitop_act_key(const char *name, size_t n)
{
	struct bitop_name b;
	return bitop_parse(name, n, &b) == 1 && b.verb == VERB_OP ? b.base : 0;
}

const struct fs_file_shape fs_bitops_file_shape = {
    .type = KV_TYPE_BITMAP,
    .is_name = bitop_is_name,
    .stat = fs_action_file_stat,
    .open = fs_action_file_open,
    .load = fs_action_file_load,
    .act = bitop_act,
    .act_key = bitop_act_key,
};
