/*
 * test_repro.c - floating-point reductions give the same bits from call
 * to call, whatever order the contributions arrive in (libcollc-mpi(7),
 * Reproducible results).
 *
 *   mpirun -np N test_repro [CALLS [COUNT]]
 *
 * Every process holds COUNT doubles (and floats) of magnitudes from 1e-8
 * to 1e8 and both signs, whose sums round; CALLS times (default 1000)
 * it calls MPI_Reduce, MPI_Allreduce and MPI_Reduce_scatter_block with
 * MPI_SUM (doubles, floats) and MPI_PROD (doubles), and one process,
 * another each call, sleeps first (20 us, every sixteenth call 1 ms), so
 * that its contribution comes last, or first, as the calls go.  Checked:
 *  - every call's result has the bits of the first call's (at the root,
 *    at every process for allreduce, and each process's block);
 *  - allreduce gives every process the same bits;
 *  - with the library loaded (EXPECT_LIB=1), every call ran over its
 *    plans (collc_mpi_counts), so that a pass is the library's, not the
 *    MPI library's.
 * Rank 0 prints one line per operation, "repro OP TYPE N: HASH", the
 * result's hash, so that two runs of the same job can be compared (the
 * driver, tests/mpi/pmpi.py, runs each case twice), then "test_repro
 * (np N): P passed, F failed".
 */
#include <dlfcn.h>
#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static long long pass, fail;
static int rank, size;

static void check(int ok, const char *what, const char *op, int call)
{
	if (ok) {
		pass++;
		return;
	}
	if (fail++ < 10)
		fprintf(stderr, "FAIL (rank %d): %s: %s, call %d\n", rank, op,
			what, call);
}

static uint64_t fnv(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ULL;
	return h;
}

/* Process r's element i: the same in every run. */
static double value(int r, size_t i, int prod)
{
	uint64_t h = ((uint64_t)r * 0x9e3779b97f4a7c15ULL) ^
		     ((uint64_t)(i + 1) * 0xbf58476d1ce4e5b9ULL);
	double v;

	h ^= h >> 31;
	h *= 0x94d049bb133111ebULL;
	h ^= h >> 29;
	v = ((double)(h >> 11) / 9007199254740992.0 - 0.5) *
	    pow(10.0, (double)((h >> 3) % 17) - 8.0);
	return prod ? 1.0 + v * 1e-9 : v;
}

static void skew(int call)
{
	struct timespec ts = {0, call % 16 == 15 ? 1000000 : 20000};

	/* another process each call, the last one every other time */
	if (rank == (call % 2 ? size - 1 : call % size))
		nanosleep(&ts, NULL);
}

enum { REDUCE, ALLREDUCE, RSB, NOPS };
static const char *const opname[NOPS] = {"reduce", "allreduce",
					 "reduce_scatter_block"};

/* One operation in one type and operator, CALLS times. */
static void run(int op, MPI_Datatype t, MPI_Op o, int calls, int count)
{
	size_t es = t == MPI_FLOAT ? 4 : 8, n = (size_t)count * size;
	int prod = o == MPI_PROD;
	unsigned char *in = malloc(n * es), *out = malloc(n * es),
		      *first = malloc(n * es);
	size_t rlen = (size_t)count * es; /* a root's, or a block */
	const char *tn = t == MPI_FLOAT ? "float" : "double";
	char label[80];
	int differ = 0;
	uint64_t h, lo, hi;

	snprintf(label, sizeof(label), "%s %s %s", opname[op], tn,
		 prod ? "prod" : "sum");
	for (size_t i = 0; i < n; i++) {
		double v = value(rank, i, prod);
		float f = (float)v;

		if (es == 4)
			memcpy(in + i * 4, &f, 4);
		else
			memcpy(in + i * 8, &v, 8);
	}
	for (int c = 0; c < calls; c++) {
		memset(out, 0, n * es);
		skew(c);
		if (op == REDUCE)
			MPI_Reduce(in, out, count, t, o, 0, MPI_COMM_WORLD);
		else if (op == ALLREDUCE)
			MPI_Allreduce(in, out, count, t, o, MPI_COMM_WORLD);
		else
			MPI_Reduce_scatter_block(in, out, count, t, o,
						 MPI_COMM_WORLD);
		if (c == 0)
			memcpy(first, out, rlen);
		else
			differ += memcmp(first, out, rlen) != 0;
	}
	check(differ == 0, "a call gave other bits than the first", label,
	      differ);
	/* allreduce: every process the same bits */
	h = fnv(first, rlen);
	PMPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD);
	PMPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
	if (op == ALLREDUCE)
		check(lo == hi, "processes got other bits", label, 0);
	/* the hash of what every process holds, for the run's line */
	{
		uint64_t *all = malloc((size_t)size * sizeof(uint64_t));

		PMPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0,
			    MPI_COMM_WORLD);
		if (rank == 0) {
			uint64_t sum = op == REDUCE ? h : fnv(all, (size_t)size * 8);

			printf("repro %s %d: %016llx\n", label, size,
			       (unsigned long long)sum);
		}
		free(all);
	}
	free(in);
	free(out);
	free(first);
}

int main(int argc, char **argv)
{
	int calls, count;
	int (*counts)(const char *, long long *, long long *);
	long long ours0 = 0, ours1 = 0, total = 0;
	const char *e = getenv("EXPECT_LIB");

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	calls = argc > 1 ? atoi(argv[1]) : 1000;
	count = argc > 2 ? atoi(argv[2]) : 97;
	counts = (int (*)(const char *, long long *, long long *))dlsym(
	    RTLD_DEFAULT, "collc_mpi_counts");
	if (counts != NULL)
		counts(NULL, &ours0, NULL);
	for (int op = 0; op < NOPS; op++) {
		run(op, MPI_DOUBLE, MPI_SUM, calls, count);
		run(op, MPI_FLOAT, MPI_SUM, calls, count);
		run(op, MPI_DOUBLE, MPI_PROD, calls / 4 + 1, count);
		total += 2 * calls + calls / 4 + 1;
	}
	if (e != NULL && strcmp(e, "1") == 0) {
		check(counts != NULL, "collc_mpi_counts not found", "library", 0);
		if (counts != NULL) {
			counts(NULL, &ours1, NULL);
			check(ours1 - ours0 == total,
			      "not every call ran over collc's plans", "library",
			      (int)(ours1 - ours0));
		}
	}
	{
		long long p = 0, f = 0;

		PMPI_Reduce(&pass, &p, 1, MPI_LONG_LONG, MPI_SUM, 0,
			    MPI_COMM_WORLD);
		PMPI_Reduce(&fail, &f, 1, MPI_LONG_LONG, MPI_SUM, 0,
			    MPI_COMM_WORLD);
		if (rank == 0)
			printf("test_repro (np %d): %lld passed, %lld failed\n",
			       size, p, f);
	}
	MPI_Finalize();
	return fail > 0;
}
