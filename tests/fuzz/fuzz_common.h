/*
 * fuzz_common.h - what the libFuzzer targets (tests/fuzz/fuzz_*.c) share:
 * the entry point's prototype, a check that aborts (so that libFuzzer
 * keeps the input as a crash), the error-record contract every failing
 * call must keep, and writing a compiled document to memory.
 *
 * Allocations above 64 MiB fail (ASan's max_allocation_size_mb, with
 * allocator_may_return_null): a fuzzed "nodes": 2000000000 is refused
 * with TOPO_ENOMEM like on a small machine, instead of costing gigabytes
 * and tripping libFuzzer's RSS limit.  That limit is not a library bug;
 * a crash, a leak or a missing error record on that path would be.
 */
#ifndef FUZZ_COMMON_H
#define FUZZ_COMMON_H

#include "topo.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
	return "allocator_may_return_null=1:max_allocation_size_mb=64";
}

/* A broken invariant: say which and abort, which libFuzzer reports as a
 * crash and saves the input for. */
#define FUZZ_CHECK(cond, ...)                                                  \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
			abort();                                               \
		}                                                              \
	} while (0)

/*
 * topo.h's contract for a call that returned rc: on failure a negative
 * TOPO_E* code, the same code in the record, a text saying what went
 * wrong (NUL-terminated within its buffer), and a record that formats.
 */
static inline void fuzz_check_error(int rc, const topo_error *err,
				    const char *what)
{
	char line[2048];

	if (rc == 0)
		return;
	FUZZ_CHECK(rc < 0 && rc >= TOPO_EARG, "%s: rc %d", what, rc);
	FUZZ_CHECK(err->code == rc, "%s: rc %d but err.code %d (%s)", what, rc,
		   err->code, err->text);
	FUZZ_CHECK(memchr(err->text, '\0', sizeof(err->text)) != NULL &&
		       err->text[0] != '\0',
		   "%s: rc %d with no error text", what, rc);
	FUZZ_CHECK(memchr(err->source, '\0', sizeof(err->source)) != NULL &&
		       memchr(err->pointer, '\0', sizeof(err->pointer)) !=
			   NULL &&
		       memchr(err->spec, '\0', sizeof(err->spec)) != NULL,
		   "%s: unterminated field in the error record", what);
	topo_error_format(err, line, sizeof(line));
	FUZZ_CHECK(strchr(line, '\n') == NULL,
		   "%s: error message spans lines: %s", what, line);
}

/* Writes c into a malloc'd buffer (*len bytes, NUL-terminated).  Returns
 * NULL when the library reports an error, which must be well formed. */
static inline char *fuzz_write(const topo_compiled *c, unsigned flags,
			       size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	topo_error err;
	FILE *f = open_memstream(&buf, &n);
	int rc;

	FUZZ_CHECK(f != NULL, "open_memstream failed");
	topo_error_clear(&err);
	rc = topo_compiled_write(c, f, flags, &err);
	fclose(f);
	fuzz_check_error(rc, &err, "topo_compiled_write");
	if (rc != 0) {
		/* Only memory can run out writing to memory. */
		FUZZ_CHECK(rc == TOPO_ENOMEM || rc == TOPO_EIO,
			   "topo_compiled_write: rc %d: %s", rc, err.text);
		free(buf);
		return NULL;
	}
	*len = n;
	return buf;
}

#endif /* FUZZ_COMMON_H */
