/*
 * reduce_rate.c - what applying a reduction operator costs per byte on
 * this host: the "reduce" defaults of libtopo/machine/costs.c (make bench, stage
 * "costs").
 *
 *   reduce_rate [REPS]
 *
 * It times libtopo's own kernel, topo__reduce (libtopo/run/redop.c: the one a
 * plan's REDUCE runs, built as libtopo.a is), on two buffers of 1 MiB,
 * dst[i] = dst[i] OP src[i], for every element type and arithmetic
 * operator, and once for the bitwise operators (one byte-wise kernel
 * whatever the type).  The buffers are the same every time and warm: the
 * working set, 2 MiB, lives in the last cache level that holds it (on a
 * host whose L2 is 1 MiB, the L3); the cache sizes are printed.  A plan's
 * reduction reads data another member wrote, which can be colder: these
 * figures are the kernel's, not the memory system's worst.
 *
 * The kernels take turns (REPS rounds, default 201, of every kernel once,
 * in an order that rotates each round), so that a slow stretch of the
 * machine is shared; for each kernel, the median over rounds of ns per
 * byte of one operand, with quartiles and extremes.  The last line is
 * JSON: {"bytes": ..., "reps": ..., "sum": {"int8": ns/B, ...},
 * "kernels": [{"type", "op", "median", "q1", "q3", "min", "max"}, ...]}.
 *
 * It includes libtopo's private header: the point is to time the very
 * function the library runs, not a copy of it that could drift.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#define TOPO_INTERNAL
#include "exec_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LEN (1u << 20)

struct kernel {
	enum topo_type type;
	enum topo_redop op;
	const char *type_name; /* "any" for the bitwise kernel */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double quantile(const double *v, int n, double q)
{
	double pos = q * (n - 1);
	int i = (int)pos;

	return i + 1 < n ? v[i] + (pos - i) * (v[i + 1] - v[i]) : v[i];
}

/* Operands that keep every kernel on ordinary numbers: 1 for the float
 * types (sums grow by one a round, products stay 1: no infinities, no
 * subnormals), a byte pattern for the integers (they wrap). */
static void fill(unsigned char *p, enum topo_type type)
{
	if (type == TOPO_FLOAT)
		for (size_t i = 0; i < LEN / sizeof(float); i++)
			((float *)p)[i] = 1.0f;
	else if (type == TOPO_DOUBLE)
		for (size_t i = 0; i < LEN / sizeof(double); i++)
			((double *)p)[i] = 1.0;
	else
		for (size_t i = 0; i < LEN; i++)
			p[i] = (unsigned char)(i * 7 + 1);
}

static void cache(const char *name, int which)
{
	long v = sysconf(which);

	if (v > 0)
		printf(" %s %ld KiB", name, v / 1024);
}

int main(int argc, char **argv)
{
	static const enum topo_redop arith[] = {TOPO_SUM, TOPO_PROD, TOPO_MIN,
						TOPO_MAX};
	static const enum topo_redop bits[] = {TOPO_BAND, TOPO_BOR, TOPO_BXOR};
	struct kernel k[TOPO_TYPE_COUNT * 4 + 3];
	int reps = argc > 1 ? atoi(argv[1]) : 201, nk = 0;
	unsigned char *dst = aligned_alloc(64, LEN),
		      *src = aligned_alloc(64, LEN);
	double *t;

	if (reps < 1) {
		fprintf(stderr, "usage: reduce_rate [REPS >= 1]\n");
		return 2;
	}
	for (int ty = 0; ty < TOPO_TYPE_COUNT; ty++)
		for (size_t o = 0; o < 4; o++)
			k[nk++] = (struct kernel){(enum topo_type)ty, arith[o],
						  topo_type_name(ty)};
	for (size_t o = 0; o < 3; o++)
		k[nk++] = (struct kernel){TOPO_UINT8, bits[o], "any"};
	t = malloc((size_t)nk * (size_t)reps * sizeof(double));
	if (dst == NULL || src == NULL || t == NULL) {
		fprintf(stderr, "reduce_rate: out of memory\n");
		return 1;
	}

	printf("reduce_rate: 2 x %u KiB, warm, %d rounds; cache:", LEN / 1024,
	       reps);
	cache("L1d", _SC_LEVEL1_DCACHE_SIZE);
	cache("L2", _SC_LEVEL2_CACHE_SIZE);
	cache("L3", _SC_LEVEL3_CACHE_SIZE);
	printf("\n");
	for (int r = -1; r < reps; r++) /* round -1: warm-up */
		for (int j = 0; j < nk; j++) {
			struct kernel *q = &k[(j + (r < 0 ? 0 : r)) % nk];
			double t0;

			/* The operands' values, untimed, so that a kernel
			 * never sees what another left. */
			fill(dst, q->type);
			fill(src, q->type);
			t0 = now();
			topo__reduce(q->type, q->op, dst, src, LEN);
			if (r >= 0)
				t[(size_t)(q - k) * (size_t)reps + (size_t)r] =
				    (now() - t0) / LEN;
		}

	printf("%-7s %-5s %9s %9s %9s %9s %9s  (ns per byte)\n", "type", "op",
	       "median", "q1", "q3", "min", "max");
	for (int j = 0; j < nk; j++) {
		double *v = t + (size_t)j * (size_t)reps;

		qsort(v, (size_t)reps, sizeof(double), cmp);
		printf("%-7s %-5s %9.4f %9.4f %9.4f %9.4f %9.4f\n",
		       k[j].type_name, topo_redop_name(k[j].op),
		       quantile(v, reps, 0.5), quantile(v, reps, 0.25),
		       quantile(v, reps, 0.75), v[0], v[reps - 1]);
	}
	printf("{\"bytes\": %u, \"reps\": %d, \"sum\": {", LEN, reps);
	for (int j = 0, first = 1; j < nk; j++)
		if (k[j].op == TOPO_SUM) {
			printf(
			    "%s\"%s\": %.5g", first ? "" : ", ", k[j].type_name,
			    quantile(t + (size_t)j * (size_t)reps, reps, 0.5));
			first = 0;
		}
	printf("}, \"kernels\": [");
	for (int j = 0; j < nk; j++) {
		double *v = t + (size_t)j * (size_t)reps;

		printf("%s{\"type\": \"%s\", \"op\": \"%s\", \"median\": %.5g, "
		       "\"q1\": %.5g, \"q3\": %.5g, \"min\": %.5g, "
		       "\"max\": %.5g}",
		       j > 0 ? ", " : "", k[j].type_name,
		       topo_redop_name(k[j].op), quantile(v, reps, 0.5),
		       quantile(v, reps, 0.25), quantile(v, reps, 0.75), v[0],
		       v[reps - 1]);
	}
	printf("]}\n");
	free(t);
	free(dst);
	free(src);
	return 0;
}
