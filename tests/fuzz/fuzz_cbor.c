/*
 * Fuzz harness: the CBOR (JSON format 1) to JSON text converter of
 * t_json.c, pure. (A stored CBOR document read through the verbs is
 * fuzz_json's.)
 */
#include "fuzz.h"

#include "types/t_json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct buf out = BUF_INIT;
	uint8_t *d = malloc(size ? size : 1);
	if (!d)
		abort();
	if (size)
		memcpy(d, data, size);
	int rc = json_cbor_to_text(d, size, &out);
	FUZZ_ASSERT(rc == 0 || rc == -EUCLEAN || rc == -ENOMEM);
	if (rc == 0)
		FUZZ_ASSERT(out.len > 0 && strlen(out.data) <= out.len);
	buf_release(&out);
	free(d);
	return 0;
}
