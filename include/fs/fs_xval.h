/*
 * fs_xval: the values of kvfs's own extended attributes, user.kvfs.*
 * (docs/mapping.md): pure functions from the text a user sets to numbers
 * and options, and back where a value is read as it was written. No
 * FUSE, no store: they are fuzzed on their own (tests/fuzz/fuzz_xattr.c).
 * Each refusal is logged once, naming the attribute, and returns -EINVAL
 * (-ENOTSUP: no such parameter); on an error the outputs hold nothing to
 * use. Values are bytes (v, n), not NUL-terminated. Also the escaping of
 * item lists (several members or items in one answer or one name). Layer:
 * fs (the bottom: it includes only type headers for their option
 * structs).
 */
#ifndef KVFS_FS_XVAL_H
#define KVFS_FS_XVAL_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "engine/util.h"

#include "types/t_bloom.h"
#include "types/t_tdigest.h"
#include "types/t_timeseries.h"
#include "types/t_topk.h"

#define FS_XATTR_TYPE	  "user.kvfs.type"
#define FS_XATTR_TTL	  "user.kvfs.ttl"
#define FS_XATTR_EXPIREAT "user.kvfs.expireat"
#define FS_XATTR_HELP	  "user.kvfs.help"     /* read-only, never listed */
#define FS_XATTR_SNAPSHOT "user.kvfs.snapshot" /* write-only, on the root: kvfs snapshot */
#define FS_XATTR_TS	  "user.kvfs.ts."
#define FS_XATTR_TS_LABEL "label."
#define FS_XATTR_TS_RULE  "rule."

/* The length of v without the blanks and newlines `setfattr -v "5\n"`
 * leaves at its end. */
size_t fs_xval_chomp(const char *v, size_t n);
/* Step *s, *n past blanks (space, tab, CR, LF, NUL) on both sides. */
void fs_xval_strip(const char **s, size_t *n);

/* user.kvfs.type: a type's name (enc_type_name), ending blanks dropped. */
int fs_xval_type(const char *v, size_t n, enum kv_type *t);
/* user.kvfs.ttl: milliseconds to live, at most UINT64_MAX / 2. */
int fs_xval_ttl(const char *v, size_t n, uint64_t *ms);
/* user.kvfs.expireat: a Unix time in milliseconds, as PEXPIREAT takes it
 * (a whole number from -2^63 to 2^63-1; 0 and below are in the past). */
int fs_xval_expireat(const char *v, size_t n, int64_t *ms);

/* A whole number from min to max, blanks around it; `what` names the
 * value in the log line. */
int fs_xval_u64(const char *v, size_t n, uint64_t min, uint64_t max, const char *what,
		uint64_t *out);
/* A number as parse_double reads it (blanks around it). */
int fs_xval_double(const char *v, size_t n, const char *what, double *out);

/* user.kvfs.ts.PARAM (v without its ending blanks): retention,
 * chunk_size and duplicate_policy into o (o->set says which);
 * last_timestamp sets nothing in o. *num: the number read (0 for the
 * policy). -ENOTSUP for another PARAM whose value is a number. */
int fs_xval_ts_param(const char *param, const char *v, size_t n, struct ts_options *o,
		     uint64_t *num);
/* user.kvfs.ts.rule.DEST: "AGG BUCKET ALIGN" (AGG avg, sum, min, max,
 * range, count, first, last, std.p, std.s, var.p, var.s), optionally the
 * running state "latest=N u=N.. f=X.." as read. r is the rule with that
 * state (tsagg_rule_init's without one). */
int fs_xval_ts_rule(const char *v, size_t n, struct ts_rule *r);
/* A rule as its attribute reads, appended to out (0 or -ENOMEM). */
int fs_xval_ts_rule_text(struct buf *out, const struct ts_rule *r);

/* user.kvfs.bloom.PARAM (capacity, error_rate, expansion, nonscaling)
 * set in st, whose other parameters are the filter's. */
int fs_xval_bloom(const char *param, const char *v, size_t n, struct bloom_state *st);
/* user.kvfs.tdigest.compression: 1 to TD_COMPRESSION_MAX. */
int fs_xval_tdigest(const char *param, const char *v, size_t n, uint32_t *compression);
/* user.kvfs.topk.PARAM (k, width, depth, decay) set in p, whose other
 * parameters are the sketch's; the result must pass hk_params_ok. */
int fs_xval_topk(const char *param, const char *v, size_t n, struct topk_params *p);
/* The field of p that top-k parameter `param` names (k, width, depth), or
 * NULL (decay is the double). */
uint32_t *fs_xval_topk_field(struct topk_params *p, const char *param);

/*
 * An item list, the part of a view's name that carries several items
 * (`b/.mexists:a,b`, `h/.count:h2,h3`; docs/mapping.md section 7, "Item
 * lists"): items separated by ',', each one a file name as section 7
 * escapes it ("%2C" a ',' inside an item, "%0A" a newline, "%" alone the
 * empty item) and decoded by names_decode. The name a view gets is
 * decoded once already (its stored bytes): in a path a ',' inside an item
 * is typed "%252C". Refused (-EINVAL, logged naming `what`): an empty
 * list, an empty text between commas, a long-name reference ("%~HASH").
 * On success items->v[i] (items->n of them, in order) point into
 * items->store; release with fs_items_release, also after an error.
 */
struct fs_items {
	struct iovec *v;
	size_t n;
	struct buf store;
};
int fs_items_split(const char *s, size_t n, const char *what, struct fs_items *items);
void fs_items_release(struct fs_items *items);

/*
 * Answers of several items (`cat S/.spop:3`: one per line; a zset pop:
 * MEMBER<TAB>SCORE) show each item in the same escaping, with newline,
 * tab and comma escaped too (%0A, %09, %2C), whole (never cut to a long
 * name): a line of an answer is the file name of that member when it
 * fits in 255 bytes.
 */
/* Append item[0, n) escaped to out (no separator). 0 or -ENOMEM. */
int fs_items_encode(struct buf *out, const void *item, size_t n);
/* The bytes of one escaped item s[0, n) into out (reset first): "%" is
 * the empty item, %XX (hex, either case) a byte, any other '%' itself
 * (lenient, as names_decode; no long names). 0 or -ENOMEM. */
int fs_items_decode(const char *s, size_t n, struct buf *out);

#endif
