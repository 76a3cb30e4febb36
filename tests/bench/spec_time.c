/*
 * spec_time.c - the cost of evaluating one stride spec (make bench, stage
 * "spec"): loads MACHINE.json, then times topo_group_new on SPEC (or the
 * text of file @FILE) alone, loading excluded, and prints one JSON line:
 * {"seconds": S, "members": N}.
 *
 *   spec_time MACHINE.json SPEC|@FILE
 *
 * Built by bench.py against build/libtopo.a; exit 1 when the spec fails.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo.h"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	if (f == NULL)
		return NULL;
	do {
		if (len + 65536 > cap) {
			cap = 2 * cap + 65536;
			buf = realloc(buf, cap + 1);
			if (buf == NULL)
				return NULL;
		}
		n = fread(buf + len, 1, cap - len, f);
		len += n;
	} while (n > 0);
	fclose(f);
	while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
		len--;
	buf[len] = '\0';
	return buf;
}

int main(int argc, char **argv)
{
	topo_machine *m = NULL;
	topo_group *g = NULL;
	topo_error err;
	struct timespec t0, t1;
	const char *spec;
	char *text = NULL;
	int rc;

	if (argc != 3) {
		fprintf(stderr, "usage: spec_time MACHINE.json SPEC|@FILE\n");
		return 2;
	}
	topo_error_clear(&err);
	if (topo_machine_load_file(&m, argv[1], &err) != 0) {
		fprintf(stderr, "spec_time: %s\n", err.text);
		return 1;
	}
	spec = argv[2];
	if (spec[0] == '@') {
		text = slurp(spec + 1);
		if (text == NULL) {
			perror(spec + 1);
			return 1;
		}
		spec = text;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	rc = topo_group_new(&g, m, "bench", spec, &err);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (rc != 0) {
		fprintf(stderr, "spec_time: %s\n", err.text);
		return 1;
	}
	printf("{\"seconds\": %.6f, \"members\": %d}\n",
	       (double)(t1.tv_sec - t0.tv_sec) +
		   (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9,
	       (int)topo_group_size(g));
	topo_group_free(g);
	topo_machine_free(m);
	free(text);
	return 0;
}
