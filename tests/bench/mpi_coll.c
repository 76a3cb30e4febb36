/*
 * mpi_coll.c - Open MPI's own collectives, timed the way collrun times its
 * replay, for the side-by-side benchmark (tests/bench/replay.py).
 *
 *   mpirun -np N mpi_coll bcast|scatter|gather|reduce BYTES ITERATIONS [--fresh]
 *
 * BYTES is per rank, as collrun's --bytes: bcast - every rank ends with BYTES;
 * scatter - the root sends BYTES to each rank; gather - each rank sends BYTES
 * to the root; reduce - each rank contributes BYTES of int32 (MPI_SUM).
 * The root is rank 0.
 *
 * Each iteration: reset the receive buffer (not timed), MPI_Barrier, time the
 * collective on every rank, take the maximum over ranks (the collective is
 * done when the last rank is done). One untimed warm-up iteration comes first.
 * Every iteration's result is checked afterwards (not timed), so MPI is held
 * to the same standard as collrun: wrong data ends the run with exit 1.
 *
 * Buffers are reused across iterations by default (as collrun does); with
 * --fresh they are mapped anew and touched before every iteration, so neither
 * side of the comparison is flattered by warm caches or registration caches.
 *
 * Output (rank 0, one line): {"op": ..., "ranks": N, "bytes": BYTES,
 * "iterations": I, "fresh": bool, "seconds": {"min", "median", "max"},
 * "verified": true}
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum op { OP_BCAST, OP_SCATTER, OP_GATHER, OP_REDUCE };

static const char *const op_names[] = {"bcast", "scatter", "gather", "reduce"};

#define ROOT 0
#define POISON 0xA5

struct bufs {
	unsigned char *send;
	size_t send_len;
	unsigned char *recv;
	size_t recv_len;
};

/* Input byte i of rank r: varies with both, so a block landing at the wrong
 * rank or offset is caught. */
static unsigned char pattern(int rank, size_t i)
{
	return (unsigned char)(rank * 37 + i * 7 + (i >> 8) + 1);
}

/* Reduce input: small signed integers, so the sum of any number of ranks
 * we would run stays exact in int32. */
static int32_t rpattern(int rank, size_t i)
{
	return (int32_t)((rank * 5 + i * 3) % 17) - 8;
}

/* mmap rather than malloc: glibc would hand back the same warm chunk after a
 * free, which is exactly what --fresh must avoid. */
static unsigned char *map(size_t len)
{
	void *p;

	if (len == 0)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		 -1, 0);
	if (p == MAP_FAILED) {
		perror("mpi_coll: mmap");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	return p;
}

static void unmap(unsigned char *p, size_t len)
{
	if (p)
		munmap(p, len);
}

static void fill_send(enum op op, struct bufs *b, int rank, int nranks,
		      size_t bytes)
{
	size_t i;
	int r;

	switch (op) {
	case OP_BCAST:
		/* bcast works in place: the root's buffer is the data. */
		break;
	case OP_SCATTER:
		if (rank == ROOT)
			for (r = 0; r < nranks; r++)
				for (i = 0; i < bytes; i++)
					b->send[(size_t)r * bytes + i] =
						pattern(r, i);
		break;
	case OP_GATHER:
		for (i = 0; i < bytes; i++)
			b->send[i] = pattern(rank, i);
		break;
	case OP_REDUCE:
		for (i = 0; i < bytes / 4; i++)
			((int32_t *)b->send)[i] = rpattern(rank, i);
		break;
	}
}

/* Untimed, before every iteration: the root's bcast data is restored and
 * every result buffer is poisoned, so a result left from the previous
 * iteration cannot pass the check. */
static void reset_recv(enum op op, struct bufs *b, int rank, size_t bytes)
{
	size_t i;

	if (op == OP_BCAST && rank == ROOT) {
		for (i = 0; i < bytes; i++)
			b->recv[i] = pattern(ROOT, i);
		return;
	}
	if (b->recv)
		memset(b->recv, POISON, b->recv_len);
}

static void alloc_bufs(enum op op, struct bufs *b, int rank, int nranks,
		       size_t bytes)
{
	b->send_len = 0;
	b->recv_len = 0;
	switch (op) {
	case OP_BCAST:
		b->recv_len = bytes;
		break;
	case OP_SCATTER:
		b->send_len = rank == ROOT ? (size_t)nranks * bytes : 0;
		b->recv_len = bytes;
		break;
	case OP_GATHER:
		b->send_len = bytes;
		b->recv_len = rank == ROOT ? (size_t)nranks * bytes : 0;
		break;
	case OP_REDUCE:
		b->send_len = bytes;
		b->recv_len = rank == ROOT ? bytes : 0;
		break;
	}
	b->send = map(b->send_len);
	b->recv = map(b->recv_len);
	fill_send(op, b, rank, nranks, bytes);
}

static void free_bufs(struct bufs *b)
{
	unmap(b->send, b->send_len);
	unmap(b->recv, b->recv_len);
	b->send = b->recv = NULL;
}

static void collective(enum op op, struct bufs *b, int nranks, size_t bytes)
{
	int n = (int)bytes;

	(void)nranks;
	switch (op) {
	case OP_BCAST:
		MPI_Bcast(b->recv, n, MPI_BYTE, ROOT, MPI_COMM_WORLD);
		break;
	case OP_SCATTER:
		MPI_Scatter(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, ROOT,
			    MPI_COMM_WORLD);
		break;
	case OP_GATHER:
		MPI_Gather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE, ROOT,
			   MPI_COMM_WORLD);
		break;
	case OP_REDUCE:
		MPI_Reduce(b->send, b->recv, n / 4, MPI_INT32_T, MPI_SUM, ROOT,
			   MPI_COMM_WORLD);
		break;
	}
}

/* Returns the first wrong byte offset of this rank's result, or -1. */
static long check(enum op op, const struct bufs *b, int rank, int nranks,
		  size_t bytes)
{
	size_t i;
	int r;

	switch (op) {
	case OP_BCAST:
		for (i = 0; i < bytes; i++)
			if (b->recv[i] != pattern(ROOT, i))
				return (long)i;
		break;
	case OP_SCATTER:
		for (i = 0; i < bytes; i++)
			if (b->recv[i] != pattern(rank, i))
				return (long)i;
		break;
	case OP_GATHER:
		if (rank != ROOT)
			break;
		for (r = 0; r < nranks; r++)
			for (i = 0; i < bytes; i++)
				if (b->recv[(size_t)r * bytes + i] !=
				    pattern(r, i))
					return (long)((size_t)r * bytes + i);
		break;
	case OP_REDUCE:
		if (rank != ROOT)
			break;
		/* The expectation is summed here, in rank order, from the
		 * pattern alone - not from anything MPI computed. */
		for (i = 0; i < bytes / 4; i++) {
			int32_t want = 0;

			for (r = 0; r < nranks; r++)
				want += rpattern(r, i);
			if (((const int32_t *)b->recv)[i] != want)
				return (long)(i * 4);
		}
		break;
	}
	return -1;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr, "usage: mpi_coll bcast|scatter|gather|reduce BYTES "
			"ITERATIONS [--fresh]\n");
}

int main(int argc, char **argv)
{
	int rank, nranks, it, iterations, fresh = 0, o, bad, anybad;
	enum op op = OP_BCAST;
	struct bufs b = {0};
	double *times = NULL, t0, el, mx, median;
	unsigned long long ull;
	size_t bytes;
	char *end;
	long off;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	/* Every rank parses the same argv, so all of them agree to stop. */
	if (argc < 4 || argc > 5 ||
	    (argc == 5 && strcmp(argv[4], "--fresh") != 0)) {
		if (rank == ROOT)
			usage();
		MPI_Finalize();
		return 2;
	}
	fresh = argc == 5;
	for (o = 0; o < 4 && strcmp(argv[1], op_names[o]) != 0; o++)
		;
	ull = strtoull(argv[2], &end, 10);
	iterations = atoi(argv[3]);
	if (o == 4 || *end || end == argv[2] || ull == 0 || ull > INT32_MAX ||
	    iterations < 1 || (o == OP_REDUCE && ull % 4)) {
		if (rank == ROOT) {
			usage();
			fprintf(stderr, "mpi_coll: BYTES must be 1..%d (a "
					"multiple of 4 for reduce), "
					"ITERATIONS >= 1\n",
				INT32_MAX);
		}
		MPI_Finalize();
		return 2;
	}
	op = (enum op)o;
	bytes = (size_t)ull;
	times = calloc((size_t)iterations, sizeof(*times));
	if (!times) {
		fprintf(stderr, "mpi_coll: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	if (!fresh)
		alloc_bufs(op, &b, rank, nranks, bytes);
	anybad = 0;
	/* it == -1 is the warm-up: checked, not recorded. */
	for (it = -1; it < iterations; it++) {
		if (fresh)
			alloc_bufs(op, &b, rank, nranks, bytes);
		reset_recv(op, &b, rank, bytes);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		collective(op, &b, nranks, bytes);
		el = MPI_Wtime() - t0;
		MPI_Reduce(&el, &mx, 1, MPI_DOUBLE, MPI_MAX, ROOT,
			   MPI_COMM_WORLD);
		if (rank == ROOT && it >= 0)
			times[it] = mx;
		off = check(op, &b, rank, nranks, bytes);
		if (off >= 0) {
			fprintf(stderr,
				"mpi_coll: %s: rank %d: wrong data at byte "
				"%ld (iteration %d)\n",
				op_names[op], rank, off, it);
			anybad = 1;
		}
		if (fresh)
			free_bufs(&b);
	}
	if (!fresh)
		free_bufs(&b);
	MPI_Allreduce(&anybad, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);

	if (rank == ROOT) {
		qsort(times, (size_t)iterations, sizeof(*times), cmp_double);
		/* Same median as Python's statistics.median. */
		median = iterations % 2
				 ? times[iterations / 2]
				 : (times[iterations / 2 - 1] +
				    times[iterations / 2]) /
					   2;
		printf("{\"op\": \"%s\", \"ranks\": %d, \"bytes\": %zu, "
		       "\"iterations\": %d, \"fresh\": %s, \"seconds\": "
		       "{\"min\": %.9f, \"median\": %.9f, \"max\": %.9f}, "
		       "\"verified\": %s}\n",
		       op_names[op], nranks, bytes, iterations,
		       fresh ? "true" : "false", times[0], median,
		       times[iterations - 1], bad ? "false" : "true");
		fflush(stdout);
	}
	free(times);
	MPI_Finalize();
	return bad ? 1 : 0;
}
