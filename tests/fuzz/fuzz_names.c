/*
 * Fuzz harness: names.c, both ways. The input as a file name must decode
 * without harm; the input as stored bytes must encode to a valid file
 * name that decodes back to it (or, for a long name, to its prefix and a
 * hash that names_long_matches accepts).
 */
#include "fuzz.h"

#include "engine/names.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf out = BUF_INIT, back = BUF_INIT;
	uint64_t hash = 0;

	/* As a file name (NUL-terminated; a NUL inside ends it). */
	char *name = fuzz_strdup(data, size);
	int rc = names_decode(name, &out, &hash);
	FUZZ_ASSERT(rc == 0 || rc == NAMES_DECODED_LONG || rc == -ENAMETOOLONG);
	free(name);

	/* As stored bytes. */
	FUZZ_ASSERT(names_encode(data, size, &out) == 0);
	FUZZ_ASSERT(out.len <= NAMES_MAX && out.len > 0);
	FUZZ_ASSERT(strlen(out.data) == out.len && !memchr(out.data, '/', out.len));
	FUZZ_ASSERT(strcmp(out.data, ".") && strcmp(out.data, ".."));
	rc = names_decode(out.data, &back, &hash);
	if (rc == NAMES_DECODED_LONG) {
		FUZZ_ASSERT(back.len <= size && memcmp(back.data, data, back.len) == 0);
		FUZZ_ASSERT(names_long_matches(data, size, hash));
	} else {
		FUZZ_ASSERT(rc == 0);
		FUZZ_ASSERT(back.len == size && (size == 0 || memcmp(back.data, data, size) == 0));
	}
	buf_release(&out);
	buf_release(&back);
	return 0;
}
