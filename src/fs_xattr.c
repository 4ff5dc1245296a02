/*
 * fs_xattr: extended attributes. Every key carries user.kvfs.type (its
 * Kvrocks type), settable while the key is empty to choose what it holds;
 * a key with an expiry carries user.kvfs.ttl (remaining milliseconds):
 * setting it sets the expiry (0 drops the key at once, as PEXPIRE 0 does;
 * on an empty collection it waits for the first entry), removing it makes
 * the key persistent. Other user.* attributes of keys and stored entries
 * are kept in the reserved namespace (ks_xattr_*). Names outside user.*
 * answer ENODATA (reads) or ENOTSUP (writes) at once, without a read:
 * `ls -l` asks for two attributes per file and must not wait.
 *
 * Setting user.kvfs.type on a string or bitmap converts between the two
 * keeping the bytes, between a string and json through the JSON text,
 * and on a hash whose fields spell out a list, set, zset, sortedint,
 * stream or sketch converts the hash (what rsync and cp -a need: they
 * write content first and types after). Type parameters
 * (user.kvfs.TYPE.PARAM: user.kvfs.bloom.capacity, ...) come from the
 * shape of their type (fs_int.h xattr_*). A time series carries
 * user.kvfs.ts.* (retention, chunk_size, duplicate_policy,
 * last_timestamp, label.NAME, rule.DEST). Both sort before
 * user.kvfs.type: set on an empty directory they make it a key of their
 * type first, so rsync -X restores them in its sorted order.
 * Layer: fs.
 */
#include "fs_int.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <sys/xattr.h>

#include "ks_attr.h"
#include "t_timeseries.h"

#define XATTR_TYPE     "user.kvfs.type"
#define XATTR_TTL      "user.kvfs.ttl"
#define XATTR_USER     "user."
#define XATTR_KVFS     "user.kvfs."
#define XATTR_TS       "user.kvfs.ts."
#define XATTR_TS_LABEL XATTR_TS "label."
#define XATTR_TS_RULE  XATTR_TS "rule."

static bool has_prefix(const char *name, const char *p)
{
	return strncmp(name, p, strlen(p)) == 0;
}

/* Reply with a value or a name list: the size asked for, ERANGE, or it. */
static void reply_xattr(fuse_req_t req, const char *v, size_t n, size_t size)
{
	if (size == 0)
		fuse_reply_xattr(req, n);
	else if (size < n)
		fuse_reply_err(req, ERANGE);
	else
		fuse_reply_buf(req, n ? v : NULL, n);
}

/* The key a KEY node names, and what it is. */
static int node_key_info(struct fs *fs, struct fs_node *node, struct fs_path *p,
			 struct ks_info *info)
{
	struct ks_key k;
	int rc = fs_itable_path(fs->it, node, p);
	if (rc)
		return rc;
	if (p->unhashed)
		return -ENOENT;
	fs_path_key(fs, p, &k);
	return ks_lookup(fs->ks, &k, info);
}

/* ---- time-series parameters: user.kvfs.ts.* -------------------------- */

static const char *const ts_params[] = {"retention", "chunk_size", "duplicate_policy",
					"last_timestamp"};

/* A rule as its xattr shows it: "AGG BUCKET ALIGN latest=N u=N.. f=X..". */
static int rule_text(struct buf *out, const struct ts_rule *r)
{
	char v[40];
	int rc = buf_printf(out, "%s %llu %llu latest=%llu", ts_agg_name(r->agg),
			    (unsigned long long)r->bucket, (unsigned long long)r->align,
			    (unsigned long long)r->latest);
	for (int i = 0; i < r->nu && !rc; i++)
		rc = buf_printf(out, " u=%llu", (unsigned long long)r->u[i]);
	for (int i = 0; i < r->nf && !rc; i++) {
		if (isnan(r->f[i]))
			snprintf(v, sizeof(v), "nan");
		else
			snprintf(v, sizeof(v), "%.17g", r->f[i]);
		rc = buf_printf(out, " f=%s", v);
	}
	return rc;
}

static int rule_parse(const char *val, size_t n, struct ts_rule *r)
{
	char tmp[512], *save = NULL;
	int i = 0, nu = 0, nf = 0, rc = n >= sizeof(tmp) ? -EINVAL : 0;
	struct ts_rule st = {0}; /* a state without latest= has latest 0 */
	bool state = false;
	memcpy(tmp, val, rc ? 0 : n);
	tmp[rc ? 0 : n] = 0;
	memset(r, 0, sizeof(*r));
	for (char *t = strtok_r(tmp, " \t\n", &save); t && !rc;
	     t = strtok_r(NULL, " \t\n", &save), i++) {
		size_t tn = strlen(t);
		if (i == 0) {
			r->agg = ts_agg_parse(t, tn);
			rc = r->agg > 0 ? 0 : -EINVAL;
		} else if (i == 1) {
			rc = parse_u64(t, tn, &r->bucket) || r->bucket == 0 ? -EINVAL : 0;
		} else if (i == 2) {
			rc = parse_u64(t, tn, &r->align) ? -EINVAL : 0;
		} else if (strncmp(t, "latest=", 7) == 0) {
			state = true;
			rc = parse_u64(t + 7, tn - 7, &st.latest) ? -EINVAL : 0;
		} else if (strncmp(t, "u=", 2) == 0 && nu < TS_AUX_MAX) {
			state = true;
			rc = parse_u64(t + 2, tn - 2, &st.u[nu++]) ? -EINVAL : 0;
		} else if (strncmp(t, "f=", 2) == 0 && nf < TS_AUX_MAX) {
			state = true;
			if (strcmp(t + 2, "nan") == 0)
				st.f[nf++] = NAN;
			else
				rc = parse_double(t + 2, tn - 2, &st.f[nf++]) ? -EINVAL : 0;
		} else {
			rc = -EINVAL;
		}
	}
	if (!rc && i < 3)
		rc = -EINVAL;
	if (!rc) {
		struct ts_rule z;
		ts_rule_init(&z, r->agg, r->bucket, r->align);
		if (state && (nu != z.nu || nf != z.nf))
			rc = -EINVAL;
		if (!rc && state) {
			memcpy(z.u, st.u, sizeof(z.u));
			memcpy(z.f, st.f, sizeof(z.f));
			z.latest = st.latest;
		}
		*r = z;
	}
	if (rc)
		LOG_ERR(
		    "%s*: write \"AGG BUCKET ALIGN\" (AGG avg, sum, min, max, range, count, "
		    "first, last, std.p, std.s, var.p, var.s), optionally followed by the state "
		    "\"latest=N u=N.. f=X..\" as read; not '%.*s'",
		    XATTR_TS_RULE, (int)(n > 80 ? 80 : n), val);
	return rc;
}

struct ts_xlist {
	struct buf *out;
	bool names; /* listing names, else looking one up */
	const char *want;
	struct buf *val;
	bool found;
};

static int ts_x_label(void *arg, const char *name, size_t nn, const char *v, size_t vn)
{
	struct ts_xlist *l = arg;
	if (memchr(name, 0, nn))
		return 0; /* an xattr name cannot hold NUL: not shown */
	if (l->names) {
		int rc = buf_printf(l->out, XATTR_TS_LABEL "%.*s", (int)nn, name);
		return rc ? rc : buf_add_u8(l->out, 0);
	}
	const char *w = l->want + strlen(XATTR_TS_LABEL);
	if (strlen(w) == nn && memcmp(w, name, nn) == 0) {
		l->found = true;
		return buf_set(l->val, v, vn);
	}
	return 0;
}

static int ts_x_rule(void *arg, const char *dst, size_t dn, const struct ts_rule *r)
{
	struct ts_xlist *l = arg;
	struct buf fname = BUF_INIT;
	int rc = names_encode(dst, dn, &fname);
	if (!rc && l->names) {
		rc = buf_printf(l->out, XATTR_TS_RULE "%s", fname.data);
		if (!rc)
			rc = buf_add_u8(l->out, 0);
	} else if (!rc && strcmp(l->want + strlen(XATTR_TS_RULE), fname.data) == 0) {
		l->found = true;
		buf_reset(l->val);
		rc = rule_text(l->val, r);
	}
	buf_release(&fname);
	return rc;
}

/* The names of a time series' attributes (after the type's), NUL-ended. */
static int ts_xattr_names(struct fs *fs, const struct ks_key *k, struct buf *out)
{
	struct ts_xlist l = {out, true, NULL, NULL, false};
	int policy;
	/* A policy byte that names no policy (logged) has no value to
	 * show: the attribute is not listed, as getxattr finds none. */
	int rc = ts_policy(fs->ks, k, &policy);
	bool no_policy = rc == -EUCLEAN;
	rc = rc == -EUCLEAN || rc == -ENOENT ? 0 : rc; /* ENOENT: ts_labels answers */
	for (size_t i = 0; i < sizeof(ts_params) / sizeof(ts_params[0]) && !rc; i++) {
		if (no_policy && strcmp(ts_params[i], "duplicate_policy") == 0)
			continue;
		rc = buf_printf(out, XATTR_TS "%s", ts_params[i]);
		if (!rc)
			rc = buf_add_u8(out, 0);
	}
	if (!rc)
		rc = ts_labels(fs->ks, k, ts_x_label, &l);
	if (!rc)
		rc = ts_rules(fs->ks, k, ts_x_rule, &l);
	return rc;
}

/* One time-series attribute's value. -ENODATA if there is none. */
static int ts_xattr_get(struct fs *fs, const struct ks_key *k, const char *name, struct buf *val)
{
	struct ts_info i;
	int rc;
	if (has_prefix(name, XATTR_TS_LABEL) || has_prefix(name, XATTR_TS_RULE)) {
		struct ts_xlist l = {NULL, false, name, val, false};
		rc = has_prefix(name, XATTR_TS_LABEL) ? ts_labels(fs->ks, k, ts_x_label, &l)
						      : ts_rules(fs->ks, k, ts_x_rule, &l);
		return rc ? rc : (l.found ? 0 : -ENODATA);
	}
	const char *p = name + strlen(XATTR_TS);
	rc = ts_info(fs->ks, k, &i);
	if (rc)
		return rc;
	buf_release(&i.source);
	if (strcmp(p, "retention") == 0)
		return buf_printf(val, "%llu", (unsigned long long)i.m.retention);
	if (strcmp(p, "chunk_size") == 0)
		return buf_printf(val, "%llu", (unsigned long long)i.m.chunk_size);
	if (strcmp(p, "last_timestamp") == 0)
		return buf_printf(val, "%llu", (unsigned long long)i.m.last_ts);
	if (strcmp(p, "duplicate_policy") == 0 && ts_policy_name(i.m.policy))
		return buf_printf(val, "%s", ts_policy_name(i.m.policy));
	return -ENODATA;
}

/*
 * Set (value) or remove (value NULL) a time-series attribute. A
 * remembered empty directory becomes an empty time series first (rsync
 * sets these attributes, which sort before user.kvfs.type, first).
 */
static int ts_xattr_set(struct fs *fs, const struct ks_key *k, const struct ks_info *info,
			const char *name, const char *value, size_t size)
{
	const char *p = name + strlen(XATTR_TS);
	struct ts_options o = {0};
	int rc = 0;
	if (value)
		while (size > 0 && (value[size - 1] == '\n' || value[size - 1] == ' '))
			size--;
	if (info->type != KV_TYPE_TIMESERIES && !info->empty) {
		LOG_ERR("%s: '%.*s' is a %s, not a time series", name, (int)k->klen, k->key,
			enc_type_name(info->type));
		return -EINVAL;
	}
	if (has_prefix(name, XATTR_TS_LABEL)) {
		const char *l = name + strlen(XATTR_TS_LABEL);
		if (value && !size) {
			LOG_ERR("%s: a label needs a value (remove the attribute to drop it)",
				name);
			return -EINVAL;
		}
		if (!*l) {
			LOG_ERR("%s: a label needs a name", name);
			return -EINVAL;
		}
		if (info->empty && !value)
			return -ENODATA; /* an empty directory has no labels */
		if (info->empty) {
			/* An empty time series with this label: one batch. */
			struct ts_label lb = {l, strlen(l), value, size};
			o.set = TS_OPT_LABELS;
			o.labels = &lb;
			o.nlabels = 1;
			return ts_create(fs->ks, k, &o);
		}
		return ts_label_set(fs->ks, k, l, strlen(l), value, size);
	}
	if (has_prefix(name, XATTR_TS_RULE)) {
		struct buf dn = BUF_INIT;
		struct ts_rule r;
		uint64_t hash;
		const char *d = name + strlen(XATTR_TS_RULE);
		if (names_decode(d, &dn, &hash) != 0 || !dn.len) {
			buf_release(&dn);
			LOG_ERR("%s: not a destination key name", name);
			return -EINVAL;
		}
		struct ks_key dk = *k;
		dk.key = dn.data;
		dk.klen = dn.len;
		dk.attr = NULL;
		if (!value) {
			rc = ts_deleterule(fs->ks, k, &dk);
			buf_release(&dn);
			return rc == -ENOENT ? -ENODATA : rc;
		}
		rc = rule_parse(value, size, &r);
		/* What ts_createrule would refuse, refused before either key is
		 * made a time series. */
		struct ks_info di;
		int r2 = rc ? 0 : ks_lookup(fs->ks, &dk, &di);
		if (!rc && dk.klen == k->klen && memcmp(dk.key, k->key, k->klen) == 0) {
			LOG_ERR("%s: a rule cannot aggregate a time series into itself", name);
			rc = -EINVAL;
		} else if (!rc && r2 == 0 && !di.empty && di.type != KV_TYPE_TIMESERIES) {
			LOG_ERR("%s: '%s' is a %s, not a time series", name, dn.data,
				enc_type_name(di.type));
			rc = -KV_EWRONGTYPE;
		} else if (!rc && r2 && r2 != -ENOENT) {
			rc = r2;
		}
		/* An empty source, and a missing destination (rsync makes it
		 * later), become empty time series in the rule's batch. */
		if (!rc)
			rc = ts_createrule(fs->ks, k, &dk, r.agg, r.bucket, r.align, &r);
		buf_release(&dn);
		return rc;
	}
	if (!value) {
		LOG_ERR("%s cannot be removed; set it instead", name);
		return -EPERM;
	}
	uint64_t num = 0;
	bool is_num = strcmp(p, "duplicate_policy") != 0;
	if (is_num && parse_u64(value, size, &num)) {
		LOG_ERR("%s: '%.*s' is not a number", name, (int)size, value);
		return -EINVAL;
	}
	if (strcmp(p, "retention") == 0) {
		o.set = TS_OPT_RETENTION;
		o.retention = num;
	} else if (strcmp(p, "chunk_size") == 0) {
		o.set = TS_OPT_CHUNK_SIZE;
		o.chunk_size = num;
	} else if (strcmp(p, "duplicate_policy") == 0) {
		o.set = TS_OPT_POLICY;
		o.policy = ts_policy_parse(value, size);
		if (o.policy < 0) {
			LOG_ERR("%s: '%.*s' is not block, first, last, min, max or sum", name,
				(int)size, value);
			return -EINVAL;
		}
	} else if (strcmp(p, "last_timestamp") != 0) {
		return -ENOTSUP;
	}
	if (info->empty) {
		rc = ts_create(fs->ks, k, &o);
		if (rc || !o.set)
			return rc ? rc : ts_set_last_timestamp(fs->ks, k, num);
		return 0;
	}
	return o.set ? ts_alter(fs->ks, k, &o) : ts_set_last_timestamp(fs->ks, k, num);
}

/* user.kvfs.ts.* on node: set, remove (value NULL), with the node's key. */
static int ts_xattr_node_set(struct fs *fs, struct fs_node *node, const char *name,
			     const char *value, size_t size, struct fs_inval *iv)
{
	struct fs_path p;
	struct ks_info info;
	struct ks_key k;
	fs_path_init(&p);
	int rc = fs_itable_path(fs->it, node, &p);
	if (!rc && p.unhashed)
		rc = -ENOENT;
	if (!rc) {
		fs_path_key(fs, &p, &k);
		rc = ks_lookup(fs->ks, &k, &info);
	}
	if (!rc && fs_type_is_file(info.type)) {
		LOG_ERR("%s: '%s' is a file, not a time series", name, p.key.data);
		rc = -EINVAL;
	}
	if (!rc)
		rc = ts_xattr_set(fs, &k, &info, name, value, size);
	if (!rc && info.empty)
		fs_itable_unhash_kids(fs->it, node, NULL, NULL, iv);
	fs_path_release(&p);
	return rc;
}

/* A type's creation parameter, user.kvfs.TYPE.PARAM: the shape of TYPE
 * if it has parameters (*param = PARAM), else NULL. */
static const struct fs_shape *param_shape(const char *name, const char **param)
{
	static const char pre[] = "user.kvfs.";
	if (strncmp(name, pre, sizeof(pre) - 1))
		return NULL;
	const char *t = name + sizeof(pre) - 1, *dot = strchr(t, '.');
	if (!dot || !dot[1])
		return NULL;
	const struct fs_shape *sh = fs_shape_of(enc_type_from_name(t, (size_t)(dot - t)));
	*param = dot + 1;
	return sh && sh->xattr_get ? sh : NULL;
}

/* The entry context of a key node, for a shape's xattr verbs. */
static void key_ctx(struct fs *fs, struct fs_node *node, const struct fs_path *p, struct fs_ctx *c)
{
	memset(c, 0, sizeof(*c));
	c->fs = fs;
	c->dir = node;
	fs_path_key(fs, p, &c->k);
}

/* getxattr of a creation parameter: only on a key of that type. */
static void get_param(fuse_req_t req, struct fs *fs, struct fs_node *node,
		      const struct fs_shape *sh, const char *param, size_t size)
{
	struct fs_path p;
	struct ks_info info;
	struct fs_ctx c;
	struct buf v = BUF_INIT;
	fs_path_init(&p);
	int rc = node_key_info(fs, node, &p, &info);
	if (!rc && info.type != sh->type)
		rc = -ENODATA;
	if (!rc) {
		key_ctx(fs, node, &p, &c);
		rc = sh->xattr_get(&c, param, &v);
	}
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		reply_xattr(req, v.data, v.len, size);
	buf_release(&v);
	fs_path_release(&p);
}

/* A new key its node still holds (created, not flushed) is stored before
 * its attributes are read or changed: they are the stored key's. */
static int key_stored(struct fs *fs, struct fs_node *node)
{
	if (!node || node->kind != FS_KEY || fs->opt.read_only)
		return 0;
	return fs_file_store_pending(fs, node);
}

void fs_op_getxattr(fuse_req_t req, fuse_ino_t ino, const char *name, size_t size)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	int src = has_prefix(name, XATTR_USER) ? key_stored(fs, node) : 0;
	if (src) {
		fuse_reply_err(req, fs_errno(src));
		return;
	}
	bool is_type = strcmp(name, XATTR_TYPE) == 0, is_ttl = strcmp(name, XATTR_TTL) == 0;
	bool is_ts = has_prefix(name, XATTR_TS);
	const char *param;
	const struct fs_shape *psh = param_shape(name, &param);
	if (node && node->kind == FS_KEY && psh) {
		get_param(req, fs, node, psh, param, size);
		return;
	}
	if (!node || !has_prefix(name, XATTR_USER) ||
	    (has_prefix(name, XATTR_KVFS) &&
	     !((is_type || is_ttl || is_ts) && node->kind == FS_KEY))) {
		/* security.*, system.* (ls -l asks): answered without a read. */
		fuse_reply_err(req, node ? ENODATA : ESTALE);
		return;
	}
	if (!is_type && !is_ttl && !is_ts) {
		struct buf val = BUF_INIT;
		int rc = fs_user_xattr_get(fs, node, name, &val);
		if (rc)
			fuse_reply_err(req, fs_errno(rc));
		else
			reply_xattr(req, val.data, val.len, size);
		buf_release(&val);
		return;
	}
	struct fs_path p;
	struct ks_info info;
	struct buf val = BUF_INIT;
	char ttl[24];
	fs_path_init(&p);
	int rc = node_key_info(fs, node, &p, &info);
	if (!rc && is_ts) {
		struct ks_key k;
		if (info.type != KV_TYPE_TIMESERIES || info.empty) {
			rc = -ENODATA;
		} else {
			fs_path_key(fs, &p, &k);
			rc = ts_xattr_get(fs, &k, name, &val);
		}
	}
	fs_path_release(&p);
	if (!rc && is_ttl && !info.expire_ms)
		rc = -ENODATA;
	if (rc) {
		fuse_reply_err(req, fs_errno(rc));
	} else if (is_ts) {
		reply_xattr(req, val.data, val.len, size);
	} else if (is_ttl) {
		uint64_t now = now_ms();
		snprintf(ttl, sizeof(ttl), "%llu",
			 (unsigned long long)(info.expire_ms > now ? info.expire_ms - now : 0));
		reply_xattr(req, ttl, strlen(ttl), size);
	} else {
		const char *t = enc_type_name(info.type);
		reply_xattr(req, t, strlen(t), size);
	}
	buf_release(&val);
}

void fs_op_listxattr(fuse_req_t req, fuse_ino_t ino, size_t size)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	struct buf list = BUF_INIT;
	struct fs_path p;
	struct ks_key k;
	int rc = node ? key_stored(fs, node) : -ESTALE;
	fs_path_init(&p);
	if (!rc && node && node->kind == FS_KEY) {
		struct ks_info info;
		rc = node_key_info(fs, node, &p, &info);
		if (!rc)
			rc = buf_add(&list, XATTR_TYPE, sizeof(XATTR_TYPE));
		if (!rc && info.expire_ms)
			rc = buf_add(&list, XATTR_TTL, sizeof(XATTR_TTL));
		/* The type's parameters, which rsync -X copies (it sets them in
		 * sorted order: see fs_bloom.c). */
		const struct fs_shape *sh = rc ? NULL : fs_shape_of(info.type);
		if (!rc && sh && sh->xattrs && !info.empty)
			rc = buf_add(&list, sh->xattrs, sh->xattrs_len);
		if (!rc && info.type == KV_TYPE_TIMESERIES && !info.empty) {
			fs_path_key(fs, &p, &k);
			rc = ts_xattr_names(fs, &k, &list);
		}
		fs_path_release(&p);
		fs_path_init(&p);
	}
	if (!rc)
		rc = fs_user_xattr_list(fs, node, &list);
	if (rc)
		fuse_reply_err(req, fs_errno(rc));
	else
		reply_xattr(req, list.data, list.len, size);
	buf_release(&list);
	fs_path_release(&p);
}

/* A file key becomes another file type: string <-> bitmap with the same
 * bytes, string <-> json through the text (a string must hold JSON, and
 * is stored compact). That is what rsync and cp need, which write a new
 * file (a string) and set its type afterwards. An open file's buffer is
 * committed first; it stays valid for a bitmap, and the kernel forgets
 * what it cached of a file whose bytes a JSON conversion changed. */
static int retype_file(struct fs *fs, struct fs_node *node, const struct ks_key *k,
		       enum kv_type from, enum kv_type to, struct fs_inval *iv)
{
	if (!fs_type_is_supported(to) || !fs_type_is_supported(from)) {
		LOG_ERR("%s: type %s is not mapped into files yet", XATTR_TYPE,
			enc_type_name(fs_type_is_supported(to) ? from : to));
		return -ENOTSUP;
	}
	int rc = fs_file_commit(fs, node);
	if (rc)
		return rc;
	rc = fs_file_convert(fs, k, from, to);
	if (rc == -EOPNOTSUPP) {
		LOG_ERR("%s: a %s cannot become a %s (convert through a string)", XATTR_TYPE,
			enc_type_name(from), enc_type_name(to));
		rc = -EINVAL;
	}
	/* Text made anew (compact JSON): the kernel's pages are wrong. */
	struct fs_node *parent = NULL;
	if (!rc && (fs_file_shape_of(from)->recomputed || fs_file_shape_of(to)->recomputed))
		parent = fs_itable_parent(fs->it, node);
	if (parent) {
		fs_inval_add(iv, parent->ino, node->ino, k->key, k->klen);
		fs_itable_unref(fs->it, parent);
	}
	if (!rc)
		fs_file_set_type(node, to);
	return rc;
}

/* A directory key takes another directory type: an empty one by its
 * record; a hash whose fields spell out the new type is converted (cp -a
 * fills a directory before it sets the type). Every cached entry name
 * goes: its meaning changes with the type. */
static int retype_dir(struct fs *fs, struct fs_node *node, const struct ks_key *k,
		      const struct ks_info *info, enum kv_type to, struct fs_inval *iv)
{
	const struct fs_shape *sh = fs_shape_of(to);
	int rc;
	if (info->empty && !sh) {
		LOG_ERR("%s: type %s is not mapped into files yet", XATTR_TYPE, enc_type_name(to));
		return -ENOTSUP;
	}
	if (info->empty && sh->make_empty) {
		/* An emptyable type (a sketch): an empty one is a real key. */
		struct fs_ctx c;
		memset(&c, 0, sizeof(c));
		c.fs = fs;
		c.dir = node;
		c.k = *k;
		rc = sh->make_empty(&c);
	} else if (info->empty) {
		rc = ks_empty_retype(fs->ks, k, to);
	} else if (info->type == fs_new_dir_shape->type && sh && sh->from_field) {
		rc = convert_hash(fs->ks, k, to, sh->from_field, NULL);
		if (rc == -EINVAL)
			LOG_ERR("%s: hash '%.*s' does not hold a %s: it keeps its type", XATTR_TYPE,
				(int)k->klen, k->key, enc_type_name(to));
	} else {
		const char *why = info->type == fs_new_dir_shape->type
				      ? " (or from a hash to a list, set, zset, "
					"sortedint, stream, hyperloglog or bloom)"
				      : "";
		LOG_ERR("%s: '%.*s' is not empty; its type can only change while it is empty%s",
			XATTR_TYPE, (int)k->klen, k->key, why);
		return -ENOTEMPTY;
	}
	/* A sketch made from a hash of its state files: every name keeps its
	 * meaning and its bytes, and the kernel may keep what it has (an
	 * invalidation arrives after the reply, later than the next call). */
	if (!rc && !(sh->make_empty && !info->empty))
		fs_itable_unhash_kids(fs->it, node, NULL, NULL, iv);
	return rc;
}

/* Choose the type of a key: see retype_file and retype_dir. */
static int set_type(struct fs *fs, struct fs_node *node, const char *value, size_t size, int flags,
		    struct fs_inval *iv)
{
	struct fs_path p;
	struct ks_info info;
	struct ks_key k;
	int rc;

	while (size > 0 && (value[size - 1] == '\n' || value[size - 1] == ' '))
		size--;
	enum kv_type t = enc_type_from_name(value, size);
	if (t == KV_TYPE_NONE) {
		LOG_ERR("%s: unknown type '%.*s'", XATTR_TYPE, (int)size, value);
		return -EINVAL;
	}
	if (flags & XATTR_CREATE)
		return -EEXIST; /* every key has a type */
	fs_path_init(&p);
	rc = node_key_info(fs, node, &p, &info);
	if (rc || t == info.type)
		goto out;
	fs_path_key(fs, &p, &k);
	if (fs_type_is_file(t) != fs_type_is_file(info.type)) {
		LOG_ERR("%s: '%s' is a %s and cannot become a %s", XATTR_TYPE, p.key.data,
			fs_type_is_file(info.type) ? "file" : "directory",
			fs_type_is_file(t) ? "file" : "directory");
		rc = -EINVAL;
	} else if (fs_type_is_file(t) && info.empty && t != fs_new_file_shape->type) {
		rc = ks_empty_retype(fs->ks, &k, t); /* an empty bitmap <-> an empty JSON key */
		if (!rc)
			fs_file_set_type(node, t);
	} else if (fs_type_is_file(t)) {
		rc = retype_file(fs, node, &k, info.type, t, iv);
	} else {
		rc = retype_dir(fs, node, &k, &info, t, iv);
	}
out:
	fs_path_release(&p);
	return rc;
}

/*
 * Set a creation parameter (user.kvfs.TYPE.PARAM) on a key of that type,
 * or on a remembered empty collection, which becomes a key of that type
 * (rsync -X sets a directory's attributes in sorted name order, so the
 * parameters come before user.kvfs.type). The shape refuses a non-empty
 * key. Cached entry names go: the key's shape may have changed.
 */
static int set_param(struct fs *fs, struct fs_node *node, const struct fs_shape *sh,
		     const char *param, const char *value, size_t size, struct fs_inval *iv)
{
	struct fs_path p;
	struct ks_info info;
	struct fs_ctx c;
	fs_path_init(&p);
	int rc = node_key_info(fs, node, &p, &info);
	bool emptied = !rc && info.empty;
	if (!rc && !info.empty && info.type == fs_new_dir_shape->type && sh->from_field) {
		/* cp -a fills a directory (a hash) and then sets its attributes,
		 * in no fixed order: a hash holding this type's state files
		 * becomes that type first. */
		key_ctx(fs, node, &p, &c);
		rc = convert_hash(fs->ks, &c.k, sh->type, sh->from_field, NULL);
		if (rc == -EINVAL)
			LOG_ERR("user.kvfs.%s.%s: hash '%s' does not hold a %s",
				enc_type_name(sh->type), param, p.key.data,
				enc_type_name(sh->type));
		if (!rc)
			info.type = sh->type; /* names keep their meaning: no unhashing */
	}
	if (!rc && !info.empty && info.type != sh->type) {
		/* As for user.kvfs.type: a key's type changes only while it is
		 * empty. */
		LOG_ERR("user.kvfs.%s.%s: '%s' is a %s, not a %s, and not empty",
			enc_type_name(sh->type), param, p.key.data, enc_type_name(info.type),
			enc_type_name(sh->type));
		rc = -ENOTEMPTY;
	}
	if (!rc) {
		key_ctx(fs, node, &p, &c);
		rc = sh->xattr_set(&c, param, value, size);
	}
	if (!rc && emptied)
		fs_itable_unhash_kids(fs->it, node, NULL, NULL, iv);
	fs_path_release(&p);
	return rc;
}

/*
 * Set (ms > 0) or drop (ms == 0, or `remove`: make persistent) the
 * expiry. *gone is set when the key was deleted, so the caller can tell
 * the kernel its name is gone.
 */
static int set_ttl(struct fs *fs, struct fs_node *node, const char *value, size_t size, bool remove,
		   bool *gone)
{
	struct fs_path p;
	struct ks_info info;
	struct ks_key k;
	uint64_t ms = 0;
	int rc = 0;

	if (!remove) {
		while (size > 0 && (value[size - 1] == '\n' || value[size - 1] == ' '))
			size--;
		rc = parse_u64(value, size, &ms);
		if (rc || ms > UINT64_MAX / 2) {
			LOG_ERR("%s: '%.*s' is not a number of milliseconds", XATTR_TTL, (int)size,
				value);
			return -EINVAL;
		}
	}
	fs_path_init(&p);
	rc = node_key_info(fs, node, &p, &info);
	if (rc == -EUCLEAN && !remove && ms == 0)
		rc = 0; /* corrupt metadata (logged): DEL needs nothing else */
	if (rc)
		goto out;
	fs_path_key(fs, &p, &k);
	if (remove) {
		rc = info.expire_ms ? ks_expire(fs->ks, &k, 0) : -ENODATA;
	} else if (ms == 0) {
		rc = ks_del(fs->ks, &k);
		*gone = rc == 0;
	} else {
		/* An empty collection keeps it pending until its first entry. */
		rc = ks_expire(fs->ks, &k, now_ms() + ms);
	}
out:
	fs_path_release(&p);
	return rc;
}

/* A key the kernel may have cached is gone: unhash its node, and have
 * the kernel forget the name after the reply. */
static void forget_name(struct fs *fs, struct fs_node *node, struct fs_inval *iv)
{
	struct fs_node *parent = fs_itable_parent(fs->it, node);
	if (!parent)
		return;
	struct fs_path p;
	fs_path_init(&p);
	/* The node's name, read under the table lock (renames move it). */
	if (fs_itable_path(fs->it, node, &p) == 0 && p.key.len) {
		fs_itable_unlink(fs->it, parent, p.key.data, p.key.len);
		fs_inval_add(iv, parent->ino, 0, p.key.data, p.key.len);
	}
	fs_path_release(&p);
	fs_itable_unref(fs->it, parent);
}

void fs_op_setxattr(fuse_req_t req, fuse_ino_t ino, const char *name, const char *value,
		    size_t size, int flags)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	struct fs_inval iv;
	bool gone = false;
	const char *param;
	const struct fs_shape *psh;
	int rc;
	fs_inval_init(&iv);
	if (!node)
		rc = -ESTALE;
	else if (fs->opt.read_only)
		rc = -EROFS;
	else if ((rc = key_stored(fs, node)) != 0)
		;
	else if (node->kind == FS_KEY && strcmp(name, XATTR_TYPE) == 0)
		rc = set_type(fs, node, value, size, flags, &iv);
	else if (node->kind == FS_KEY && strcmp(name, XATTR_TTL) == 0)
		rc = set_ttl(fs, node, value, size, false, &gone);
	else if (node->kind == FS_KEY && has_prefix(name, XATTR_TS))
		rc = ts_xattr_node_set(fs, node, name, value, size, &iv);
	else if (node->kind == FS_KEY && (psh = param_shape(name, &param)) != NULL)
		rc = set_param(fs, node, psh, param, value, size, &iv);
	else if (has_prefix(name, XATTR_USER) && !has_prefix(name, XATTR_KVFS))
		rc = fs_user_xattr_set(fs, node, name, value, size, flags);
	else
		rc = -ENOTSUP;
	if (gone)
		forget_name(fs, node, &iv);
	fuse_reply_err(req, fs_errno(rc));
	fs_inval_send(fs, &iv);
}

void fs_op_removexattr(fuse_req_t req, fuse_ino_t ino, const char *name)
{
	struct fs *fs = fuse_req_userdata(req);
	struct fs_node *node = fs_itable_get(fs->it, ino);
	bool gone = false;
	int src = key_stored(fs, node);
	if (src) {
		fuse_reply_err(req, fs_errno(src));
		return;
	}
	if (node && node->kind == FS_KEY && strcmp(name, XATTR_TYPE) == 0) {
		LOG_ERR("%s cannot be removed: every key has a type", XATTR_TYPE);
		fuse_reply_err(req, fs->opt.read_only ? EROFS : EPERM);
		return;
	}
	const char *param;
	if (node && node->kind == FS_KEY && param_shape(name, &param)) {
		LOG_ERR("%s cannot be removed: set it instead", name);
		fuse_reply_err(req, fs->opt.read_only ? EROFS : EPERM);
		return;
	}
	if (node && node->kind == FS_KEY && strcmp(name, XATTR_TTL) == 0) {
		int rc = fs->opt.read_only ? -EROFS : set_ttl(fs, node, NULL, 0, true, &gone);
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	if (node && node->kind == FS_KEY && has_prefix(name, XATTR_TS)) {
		struct fs_inval iv;
		fs_inval_init(&iv);
		int rc =
		    fs->opt.read_only ? -EROFS : ts_xattr_node_set(fs, node, name, NULL, 0, &iv);
		fuse_reply_err(req, fs_errno(rc));
		fs_inval_send(fs, &iv);
		return;
	}
	if (node && has_prefix(name, XATTR_USER) && !has_prefix(name, XATTR_KVFS)) {
		int rc = fs->opt.read_only ? -EROFS : fs_user_xattr_set(fs, node, name, NULL, 0, 0);
		if (rc == -ENOTSUP)
			rc = -ENODATA;
		fuse_reply_err(req, fs_errno(rc));
		return;
	}
	fuse_reply_err(req, node ? ENODATA : ESTALE);
}
