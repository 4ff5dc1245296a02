/*
 * fs_bitops: BITCOUNT and BITPOS of a bitmap key as names of its
 * namespace (docs/mapping.md, "Counting and finding bits"):
 *
 *   KEY:bitcount                 BITCOUNT KEY
 *   KEY:bitcount:START:END       BITCOUNT KEY START END (bytes, inclusive,
 *                                negative from the end)
 *   KEY:bitpos:BIT               BITPOS KEY BIT (BIT: 0 or 1)
 *   KEY:bitpos:BIT:START[:END]   BITPOS KEY BIT START [END]
 *
 * Read-only, never listed, answered only when no key has the exact name;
 * each open computes the answer anew (an action without a side effect, so
 * nothing of it is cached), a number and a newline. A key of another type
 * is EMEDIUMTYPE, a name whose numbers do not parse EINVAL, both logged.
 * Layer: fs.
 */
#include "fs/fs_int.h"

#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "types/t_bitmap.h"

struct bitop_name {
	size_t base; /* the key's name: name[0, base) */
	bool pos;    /* BITPOS, else BITCOUNT */
	bool bit;
	int nargs; /* numbers after the verb (BITPOS: after BIT) */
	int64_t arg[2];
};

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
	static const char cnt[] = ":bitcount", pos[] = ":bitpos:";
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
			b->pos = false;
			if (tn == a)
				return 1;
			if (parse_nums(t + a + 1, tn - a - 1, 2, b) == 0 && b->nargs == 2)
				return 1;
		} else if (tn > sizeof(pos) - 1 && memcmp(t, pos, sizeof(pos) - 1) == 0) {
			seen = -1;
			const char *r = t + sizeof(pos) - 1;
			size_t rn = tn - (sizeof(pos) - 1);
			b->base = i;
			b->pos = true;
			if ((r[0] == '0' || r[0] == '1') && (rn == 1 || r[1] == ':')) {
				b->bit = r[0] == '1';
				if (rn == 1 || parse_nums(r + 2, rn - 2, 2, b) == 0)
					return 1;
			}
		}
	}
	return seen;
}

static bool bitop_is_name(const char *name, size_t n)
{
	struct bitop_name b;
	return bitop_parse(name, n, &b) != 0;
}

static int bitop_act(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	struct bitop_name b;
	int rc = bitop_parse(k->key, k->klen, &b);
	if (rc < 0) {
		LOG_ERR("'%.*s': write KEY:bitcount[:START:END] or KEY:bitpos:0|1[:START[:END]] "
			"(START, END: byte offsets, negative from the end)",
			(int)k->klen, k->key);
		return -EINVAL;
	}
	if (rc == 0)
		return -ENOENT;
	struct ks_key key = *k; /* the bitmap: the name's base */
	key.klen = b.base;
	key.attr = NULL;
	key.snap = NULL;
	if (b.pos) {
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

const struct fs_file_shape fs_bitops_file_shape = {
    .type = KV_TYPE_BITMAP,
    .is_name = bitop_is_name,
    .stat = fs_action_file_stat,
    .open = fs_action_file_open,
    .load = fs_action_file_load,
    .act = bitop_act,
};
