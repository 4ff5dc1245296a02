/*
 * t_json_tree: a JSON document as a tree of named nodes, for the file
 * system's KEY:tree view (docs/mapping.md section 18): objects and arrays
 * are containers, everything else a scalar whose "file" is its text and a
 * newline (a string's raw bytes, others their JSON text). Layer: types;
 * over t_json's stored documents (every change is one JSON.SET/JSON.DEL
 * batch of the key, its expiry kept).
 *
 * A node is named by the names of its steps from the root, each as
 * stored bytes (an iovec each): a member name in an object (any bytes but
 * NUL), a position in an array written in decimal with zeros in front to
 * the array's width: the digits of its last index (0 to 9 in an array of
 * up to 10 elements, 00 to 10 in one of 11, ...), so names sort in
 * order. Only that spelling names an element; a new element (a create, a
 * mkdir, a rename's target) is named by the array's length in any
 * spelling of digits and is appended.
 *
 * All calls return 0 or a negative errno: -ENOENT (no key, or no such
 * node), -KV_EWRONGTYPE (not a JSON key), -ENOTDIR (a step goes through a
 * scalar), -EISDIR / -ENOTDIR (a file operation on a container, a
 * directory operation on a scalar), -EEXIST, -ENOTEMPTY, -EINVAL (text
 * that does not fit the node, a name that is no member or position;
 * logged once), -ERANGE (an integer past 64 bits, logged), plus t_json's
 * errors of a store (-EFBIG, -EUCLEAN, -EROFS, -ENOMEM, -EIO). A failing
 * call changes nothing.
 */
#ifndef KVFS_T_JSON_TREE_H
#define KVFS_T_JSON_TREE_H

#include <sys/uio.h>

#include "keyspace/keyspace.h"

/* The most steps a node's name may have (cJSON's nesting limit). */
#define JSON_TREE_MAX_DEPTH 1000

/* What a node is. */
struct json_tree_node {
	const char *type; /* JSON.TYPE's name: "object", "array", "string", ... (static) */
	bool dir;	  /* an object or an array */
	/* A scalar: its file's length in bytes (text and newline); a
	 * container: its number of members or elements. */
	uint64_t size;
};

/* The node `names` (n steps; 0: the root) of JSON key k. */
int json_tree_stat(struct keyspace *ks, const struct ks_key *k, const struct iovec *names, size_t n,
		   struct json_tree_node *out);
/* The file of scalar node `names`: its text and a newline (a string: its
 * raw bytes). -EISDIR for a container. */
int json_tree_read(struct keyspace *ks, const struct ks_key *k, const struct iovec *names, size_t n,
		   struct buf *out);
/*
 * The children of container `names`, in order (members by name, as
 * stored; elements by position), from the one numbered `from` (0: the
 * first): cb(arg, number, name, nlen, node) for each, name as the tree
 * names it (a member's name, an element's padded position), borrowed for
 * the call; a cb that returns non-zero stops the listing with that value
 * (1: stop without error). -ENOTDIR for a scalar. One read of the
 * document.
 */
typedef int (*json_tree_list_fn)(void *arg, uint64_t number, const char *name, size_t nlen,
				 const struct json_tree_node *node);
int json_tree_list(struct keyspace *ks, const struct ks_key *k, const struct iovec *names, size_t n,
		   uint64_t from, json_tree_list_fn cb, void *arg);
/*
 * The same in parts, over one reading of the document (a listing pass):
 * json_tree_iter_new reads it (*it: free with json_tree_iter_free), each
 * json_tree_iter_list lists from child `from` on, resuming where the last
 * call stopped without walking from the first child. Errors as above.
 */
struct json_tree_iter;
int json_tree_iter_new(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		       size_t n, struct json_tree_iter **it);
int json_tree_iter_list(struct json_tree_iter *it, uint64_t from, json_tree_list_fn cb, void *arg);
void json_tree_iter_free(struct json_tree_iter *it);

/* json_tree_write flags */
#define JSON_TREE_NEW 0x1 /* the node must not exist (-EEXIST): a new string */
/*
 * Store the file text d (dn bytes; one final newline is dropped) into the
 * scalar node `names`, in one batch. `type` (NULL: by the node) decides
 * how d reads: "string" takes the bytes as they are (UTF-8, no NUL byte);
 * any other type takes one JSON scalar, whose own type the node then has
 * (an integer must fit in 64 bits). Without `type`, an existing string
 * and a new node read d as a string, any other scalar as JSON. A missing
 * node is made in its parent (a member, or an element appended).
 * -EISDIR if the node is a container.
 */
int json_tree_write(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		    size_t n, const char *d, size_t dn, const char *type, unsigned flags);
/*
 * json_tree_write of an open file (type by the node): stored only if the
 * node still holds file text `was` (wasn bytes), the text its writer
 * read, else -ESTALE (logged; nothing is stored): the name now means
 * another node, or a change through the key, a path name or another
 * name came first. A missing node is -ESTALE too. *now (if not NULL):
 * the file text of the node as stored.
 */
int json_tree_write_if(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		       size_t n, const char *d, size_t dn, const char *was, size_t wasn,
		       struct buf *now);
/* A new empty container `names`: an array if `array`, else an object.
 * -EEXIST if the node exists. */
int json_tree_mkdir(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		    size_t n, bool array);
/* Remove node `names` (n >= 1): dir false: a scalar (-EISDIR for a
 * container); dir true: an empty container (-ENOTDIR for a scalar,
 * -ENOTEMPTY). A removed element moves the later ones down. */
int json_tree_remove(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		     size_t n, bool dir);
/*
 * rename(2) of node `from` to `to` inside one document, in one batch:
 * an existing `to` (as named before the move) is replaced (a scalar over
 * a scalar, a container over an empty container; else -EISDIR, -ENOTDIR,
 * -ENOTEMPTY; -EEXIST with JSON_TREE_NEW in flags: rename's NOREPLACE),
 * else the source is made in `to`'s parent: a member, or the last
 * element of an array (`to` then is the array's length before the move;
 * an element moved within its array goes to its end). -EINVAL: `to`
 * inside `from`.
 */
int json_tree_move(struct keyspace *ks, const struct ks_key *k, const struct iovec *from, size_t fn,
		   const struct iovec *to, size_t tn, unsigned flags);
/*
 * Change the type of node `names` (user.kvfs.json.type): a scalar to
 * another scalar type, reading its file text as json_tree_write does
 * (to "string": its file text as a string; to "null": always);
 * an empty container to the other container type. -EINVAL for a scalar
 * made a container or the reverse or an unknown type name; -ENOTEMPTY
 * for a container with children. The same type: nothing is written.
 */
int json_tree_retype(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
		     size_t n, const char *type);

/*
 * A digest of array `names` as positions see it: its length, each
 * element's type and a scalar's file text (not what a container holds),
 * and *len its length. -ENOTDIR if the node is no array.
 */
int json_tree_array_digest(struct keyspace *ks, const struct ks_key *k, const struct iovec *names,
			   size_t n, uint64_t *len, uint64_t *digest);

/* The padded name of position i in an array of len elements, in out
 * (at least 21 bytes); its length. Pure. */
size_t json_tree_index_name(uint64_t i, uint64_t len, char *out);

#endif
