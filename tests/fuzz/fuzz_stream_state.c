/*
 * Fuzz harness: the text of a stream's state files (t_stream_state.c),
 * the `groups` file (consumer groups, consumers, pending entries) and the
 * `state` file (the metadata counters), both read from untrusted copies.
 * The first byte picks the parser, the rest is the text. What reads
 * formats to text that reads back to the very same state (the format is
 * canonical after one round); what is refused leaves nothing behind.
 */
#include "fuzz.h"

#include "types/t_stream_state.h"

static void groups(const char *s, size_t n)
{
	struct stream_gstate a = STREAM_GSTATE_INIT, b = STREAM_GSTATE_INIT;
	struct buf t = BUF_INIT, t2 = BUF_INIT;
	int rc = stream_gstate_parse(s, n, &a);
	FUZZ_ASSERT(rc == 0 || rc == -EINVAL);
	if (rc) {
		FUZZ_ASSERT(a.ng == 0 && a.nc == 0 && a.np == 0);
		return;
	}
	size_t nc = 0, np = 0;
	for (size_t j = 0; j < a.ng; j++) {
		FUZZ_ASSERT(a.g[j].c0 == nc && a.g[j].p0 == np);
		nc += a.g[j].nc;
		np += a.g[j].np;
	}
	FUZZ_ASSERT(nc == a.nc && np == a.np);
	FUZZ_ASSERT(stream_gstate_format(&a, &t) == 0);
	FUZZ_ASSERT(stream_gstate_parse(t.data, t.len, &b) == 0);
	FUZZ_ASSERT(b.ng == a.ng && b.nc == a.nc && b.np == a.np);
	FUZZ_ASSERT(stream_gstate_format(&b, &t2) == 0);
	FUZZ_ASSERT(t.len == t2.len && (t.len == 0 || memcmp(t.data, t2.data, t.len) == 0));
	stream_gstate_release(&a);
	stream_gstate_release(&b);
	buf_release(&t);
	buf_release(&t2);
}

static void counters(const char *s, size_t n)
{
	struct stream_counters c, c2;
	struct stream_info i = {0};
	struct buf t = BUF_INIT;
	int rc = stream_counters_parse(s, n, &c);
	FUZZ_ASSERT(rc == 0 || rc == -EINVAL);
	if (rc)
		return;
	i.last_generated = c.last_generated;
	i.max_deleted = c.max_deleted;
	i.recorded_first = c.recorded_first;
	i.entries_added = c.entries_added;
	FUZZ_ASSERT(stream_counters_format(&i, &t) == 0);
	FUZZ_ASSERT(stream_counters_parse(t.data, t.len, &c2) == 0);
	FUZZ_ASSERT(memcmp(&c, &c2, sizeof(c)) == 0);
	buf_release(&t);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	fuzz_quiet();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	char *s = malloc(size);
	if (!s)
		abort();
	memcpy(s, data + 1, size - 1);
	if (data[0] & 1)
		counters(s, size - 1);
	else
		groups(s, size - 1);
	free(s);
	return 0;
}
