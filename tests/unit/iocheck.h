/*
 * iocheck.h - helpers of the unit tests of the compile output (test_io.c,
 * test_routes.c): machines from JSON text, documents written to memory,
 * route tables compared row for row, documents edited as text.
 */
#ifndef IOCHECK_H
#define IOCHECK_H

#include "check.h"
#include "topo.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline topo_machine *machine(const char *json)
{
	topo_machine *m = NULL;
	topo_error err;
	char buf[1024];

	topo_error_clear(&err);
	if (topo_machine_load_string(&m, json, strlen(json), "m.json", &err) !=
	    0) {
		fprintf(stderr, "machine: %s\n",
			topo_error_format(&err, buf, sizeof(buf)));
		exit(2);
	}
	return m;
}

/* Writes c to memory with the given flags; returns the text (malloc'd)
 * or NULL. */
static inline char *write_mem_flags(const topo_compiled *c, unsigned flags,
			     size_t *len)
{
	char *text = NULL;
	size_t size = 0;
	topo_error err;
	FILE *f = open_memstream(&text, &size);
	int rc;

	topo_error_clear(&err);
	rc = topo_compiled_write(c, f, flags, &err);
	CHECK_INT(rc, 0);
	fclose(f);
	*len = size;
	return text;
}

/* Every row of a's and b's route tables, compared exactly. */
static inline void same_routes(const topo_tree *a, const topo_tree *b,
			const char *what)
{
	int32_t n = topo_group_size(topo_tree_group(a));
	int32_t *sa = malloc(sizeof(int32_t) * (size_t)(n + 1));
	int32_t *sb = malloc(sizeof(int32_t) * (size_t)(n + 1));
	long bad = 0;

	for (int32_t r = 0; r < n; r++) {
		int32_t rows = topo_routes_rows(a, r);

		if (rows != topo_routes_rows(b, r)) {
			bad++;
			continue;
		}
		for (int32_t i = 0; i < rows; i++) {
			int32_t fa, fb, na, nb;
			const int32_t *ta, *tb;

			na = topo_routes_row(a, r, i, &fa, &ta, sa);
			nb = topo_routes_row(b, r, i, &fb, &tb, sb);
			if (na != nb || fa != fb ||
			    (na > 0 &&
			     memcmp(ta, tb, sizeof(int32_t) * (size_t)na) != 0))
				bad++;
		}
	}
	CHECK(bad == 0, "%s: %ld route rows differ", what, bad);
	free(sa);
	free(sb);
}

/* doc with the first `from` replaced by `to`. */
static inline char *edit(const char *doc, const char *from, const char *to)
{
	const char *at = strstr(doc, from);
	size_t flen = strlen(from), tlen = strlen(to), dlen = strlen(doc);
	char *out;

	if (at == NULL) {
		fprintf(stderr, "edit: \"%s\" not found\n", from);
		exit(2);
	}
	out = malloc(dlen - flen + tlen + 1);
	memcpy(out, doc, (size_t)(at - doc));
	memcpy(out + (at - doc), to, tlen);
	memcpy(out + (at - doc) + tlen, at + flen,
	       dlen - (size_t)(at - doc) - flen + 1);
	return out;
}

#endif
