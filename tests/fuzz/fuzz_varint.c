/*
 * Fuzz harness: a stream entry's stored value (t_stream.c), a sequence of
 * varint32 lengths and bytes. Every string the walk returns lies inside
 * the value; a well-formed value of field/value pairs encodes back to
 * strings that walk the same way.
 */
#include "fuzz.h"

#include "types/t_stream.h"

#define MAX_STRS 4096

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct stream_str strs[MAX_STRS];
	char *v = malloc(size ? size : 1);
	if (!v)
		abort();
	if (size)
		memcpy(v, data, size);
	size_t pos = 0, nf = 0;
	struct stream_str s;
	int rc;
	while ((rc = stream_value_next(v, size, &pos, &s)) == 1) {
		FUZZ_ASSERT(s.p >= v && s.p + s.n <= v + size && pos <= size);
		if (nf < MAX_STRS)
			strs[nf] = s;
		nf++;
	}
	FUZZ_ASSERT(rc == 0 || rc == -EUCLEAN);
	if (rc == 0 && nf >= 2 && nf % 2 == 0 && nf <= MAX_STRS) {
		struct buf out = BUF_INIT;
		FUZZ_ASSERT(stream_value_encode(strs, nf, &out) == 0);
		size_t p2 = 0, i = 0;
		while (stream_value_next(out.data, out.len, &p2, &s) == 1) {
			FUZZ_ASSERT(i < nf && s.n == strs[i].n && !memcmp(s.p, strs[i].p, s.n));
			i++;
		}
		FUZZ_ASSERT(i == nf && p2 == out.len);
		buf_release(&out);
	}
	free(v);
	return 0;
}
