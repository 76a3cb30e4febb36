/*
 * mpi_coll.c - Open MPI's own collectives, timed the way collrun times its
 * replay, for the side-by-side benchmarks (tests/bench/replay.py, bench.py).
 *
 *   mpirun -np N mpi_coll OP BYTES ITERATIONS [--fresh | --back-to-back]
 *
 *   OP: bcast, scatter, gather, reduce, allreduce, allgather, reduce-scatter,
 *       alltoall, barrier
 *
 * BYTES is collrun's --bytes, per rank or per block as collrun(1) defines it,
 * so that both sides move the same data:
 *   bcast          every rank ends with the root's BYTES
 *   scatter        the root sends a block of BYTES to each rank
 *   gather         each rank sends BYTES to the root
 *   reduce         each rank contributes BYTES of int32 (MPI_SUM) to the root
 *   allreduce      each rank contributes BYTES of int32 (MPI_SUM), every rank
 *                  ends with the sum (MPI_Allreduce)
 *   allgather      each rank contributes BYTES, every rank ends with the N
 *                  blocks in rank order (MPI_Allgather, sendcount BYTES)
 *   reduce-scatter each rank contributes N blocks of BYTES of int32; rank r
 *                  ends with block r of the sum (MPI_Reduce_scatter_block,
 *                  recvcount BYTES / 4)
 *   alltoall       each rank sends block j of BYTES to rank j, and ends with
 *                  block r of every rank's, in rank order (MPI_Alltoall,
 *                  sendcount BYTES)
 *   barrier        no data: BYTES must be 0 (MPI_Barrier)
 * The root of bcast, scatter, gather and reduce is rank 0.  The reductions
 * need BYTES to be a multiple of 4.
 *
 * Timing, by default (OSU-style, and the convention of collrun's iterations:
 * each starts from idle buffers that were reset, untimed, in between): each
 * iteration resets the receive buffer (not timed), calls MPI_Barrier, times
 * the collective on every rank, and takes the maximum over ranks (the
 * collective is done when the last rank is done).  One untimed warm-up
 * iteration comes first.  Every iteration's result is checked afterwards (not
 * timed), so MPI is held to the same standard as collrun: wrong data ends the
 * run with exit 1.
 *
 * --back-to-back: after the warm-up (checked), ITERATIONS calls in a row on
 * the same buffers, no barrier or reset between them; each rank times the
 * whole loop, and the time per call is the maximum over ranks of loop time /
 * ITERATIONS (so min, median and max in the output are that one number).
 * The receive buffers are poisoned before the loop and checked after it: the
 * last call's result (every call writes the same one).  Back to back, a rank
 * may start the next call while another still finishes the previous one, so
 * this is throughput rather than the latency of one call.
 *
 * Buffers are reused across iterations by default (as collrun does); with
 * --fresh they are mapped anew and touched before every iteration, so neither
 * side of the comparison is flattered by warm caches or registration caches.
 *
 * The barrier is checked by what it guarantees: each rank reads
 * CLOCK_MONOTONIC (one clock for the whole host) just before entering it and
 * just after leaving it, and no rank may leave before the last one entered
 * (min over ranks of the leave stamps >= max of the enter stamps), for every
 * iteration.  The ranks must therefore share one host, as here.  Back to
 * back, the two stamps are read inside the timed loop (tens of ns a call).
 *
 * Output (rank 0, one line): {"op": ..., "ranks": N, "bytes": BYTES,
 * "iterations": I, "fresh": bool, "mode": "barrier"|"back-to-back",
 * "seconds": {"min", "median", "max"}, "verified": bool}
 */
#define _GNU_SOURCE
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum op {
	OP_BCAST,
	OP_SCATTER,
	OP_GATHER,
	OP_REDUCE,
	OP_ALLREDUCE,
	OP_ALLGATHER,
	OP_REDUCE_SCATTER,
	OP_ALLTOALL,
	OP_BARRIER
};

#define NOPS (OP_BARRIER + 1)

static const char *const op_names[NOPS] = {
    "bcast",	 "scatter",	    "gather",	"reduce",  "allreduce",
    "allgather", "reduce-scatter", "alltoall", "barrier"};

#define ROOT 0
#define POISON 0xA5

struct bufs {
	unsigned char *send;
	size_t send_len;
	unsigned char *recv;
	size_t recv_len;
	/* The result this rank must end with, computed from the input
	 * patterns alone (new operations; the old four compute it in check).
	 * Never touched by MPI. */
	unsigned char *want;
	size_t want_len;
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

/* Alltoall input: byte i of the block rank src sends to rank dst.  The base
 * 13 * (16 src + dst) differs for every (src, dst) pair of up to 16 ranks
 * (13 is odd, so it permutes the bytes), so a block from the wrong sender or
 * for the wrong receiver is caught. */
static unsigned char apattern(int src, int dst, size_t i)
{
	return (unsigned char)(13 * (16 * src + dst) + i * 7 + (i >> 8) + 1);
}

static int is_reduction(enum op op)
{
	return op == OP_REDUCE || op == OP_ALLREDUCE ||
	       op == OP_REDUCE_SCATTER;
}

static double mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
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
	case OP_ALLGATHER:
		for (i = 0; i < bytes; i++)
			b->send[i] = pattern(rank, i);
		break;
	case OP_REDUCE:
	case OP_ALLREDUCE:
	case OP_REDUCE_SCATTER:
		/* reduce-scatter: element k of the n blocks is rpattern(rank,
		 * k), k running over all of them. */
		for (i = 0; i < b->send_len / 4; i++)
			((int32_t *)b->send)[i] = rpattern(rank, i);
		break;
	case OP_ALLTOALL:
		for (r = 0; r < nranks; r++)
			for (i = 0; i < bytes; i++)
				b->send[(size_t)r * bytes + i] =
					apattern(rank, r, i);
		break;
	case OP_BARRIER:
		break;
	}
}

/* The expected result of the new operations, from the patterns alone (the
 * sums in rank order) - not from anything MPI computed. */
static void fill_want(enum op op, struct bufs *b, int rank, int nranks,
		      size_t bytes)
{
	size_t i, elems = bytes / 4;
	int r;

	switch (op) {
	case OP_ALLREDUCE:
	case OP_REDUCE_SCATTER:
		/* allreduce: element i; reduce-scatter: element i of block
		 * rank, that is element rank * elems + i of the inputs. */
		for (i = 0; i < elems; i++) {
			size_t k = op == OP_ALLREDUCE
					   ? i
					   : (size_t)rank * elems + i;
			int32_t want = 0;

			for (r = 0; r < nranks; r++)
				want += rpattern(r, k);
			((int32_t *)b->want)[i] = want;
		}
		break;
	case OP_ALLGATHER:
		for (r = 0; r < nranks; r++)
			for (i = 0; i < bytes; i++)
				b->want[(size_t)r * bytes + i] = pattern(r, i);
		break;
	case OP_ALLTOALL:
		for (r = 0; r < nranks; r++)
			for (i = 0; i < bytes; i++)
				b->want[(size_t)r * bytes + i] =
					apattern(r, rank, i);
		break;
	default:
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
	size_t all = (size_t)nranks * bytes;

	b->send_len = 0;
	b->recv_len = 0;
	b->want_len = 0;
	switch (op) {
	case OP_BCAST:
		b->recv_len = bytes;
		break;
	case OP_SCATTER:
		b->send_len = rank == ROOT ? all : 0;
		b->recv_len = bytes;
		break;
	case OP_GATHER:
		b->send_len = bytes;
		b->recv_len = rank == ROOT ? all : 0;
		break;
	case OP_REDUCE:
		b->send_len = bytes;
		b->recv_len = rank == ROOT ? bytes : 0;
		break;
	case OP_ALLREDUCE:
		b->send_len = bytes;
		b->recv_len = b->want_len = bytes;
		break;
	case OP_ALLGATHER:
		b->send_len = bytes;
		b->recv_len = b->want_len = all;
		break;
	case OP_REDUCE_SCATTER:
		b->send_len = all;
		b->recv_len = b->want_len = bytes;
		break;
	case OP_ALLTOALL:
		b->send_len = all;
		b->recv_len = b->want_len = all;
		break;
	case OP_BARRIER:
		break;
	}
	b->send = map(b->send_len);
	b->recv = map(b->recv_len);
	b->want = map(b->want_len);
	fill_send(op, b, rank, nranks, bytes);
	fill_want(op, b, rank, nranks, bytes);
}

static void free_bufs(struct bufs *b)
{
	unmap(b->send, b->send_len);
	unmap(b->recv, b->recv_len);
	unmap(b->want, b->want_len);
	b->send = b->recv = b->want = NULL;
}

static void collective(enum op op, struct bufs *b, size_t bytes)
{
	int n = (int)bytes;

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
	case OP_ALLREDUCE:
		MPI_Allreduce(b->send, b->recv, n / 4, MPI_INT32_T, MPI_SUM,
			      MPI_COMM_WORLD);
		break;
	case OP_ALLGATHER:
		MPI_Allgather(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE,
			      MPI_COMM_WORLD);
		break;
	case OP_REDUCE_SCATTER:
		MPI_Reduce_scatter_block(b->send, b->recv, n / 4, MPI_INT32_T,
					 MPI_SUM, MPI_COMM_WORLD);
		break;
	case OP_ALLTOALL:
		MPI_Alltoall(b->send, n, MPI_BYTE, b->recv, n, MPI_BYTE,
			     MPI_COMM_WORLD);
		break;
	case OP_BARRIER:
		MPI_Barrier(MPI_COMM_WORLD);
		break;
	}
}

/* Returns the first wrong byte offset of this rank's result, or -1.  The
 * barrier is checked in main, from the stamps of every rank. */
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
	case OP_ALLREDUCE:
	case OP_ALLGATHER:
	case OP_REDUCE_SCATTER:
	case OP_ALLTOALL:
		/* Every byte of every rank's result, against fill_want's. */
		if (memcmp(b->recv, b->want, b->want_len) != 0)
			for (i = 0; i < b->want_len; i++)
				if (b->recv[i] != b->want[i])
					return (long)i;
		break;
	case OP_BARRIER:
		break;
	}
	return -1;
}

/* The barrier's guarantee over iterations [0, n): the last rank to enter
 * entered before the first rank to leave left.  Collective; returns on
 * every rank the first iteration that broke it, or -1. */
static int check_barrier(const double *enter, const double *leave, int n)
{
	double *last_in = malloc((size_t)n * sizeof(double));
	double *first_out = malloc((size_t)n * sizeof(double));
	int k, bad = -1;

	if (!last_in || !first_out) {
		fprintf(stderr, "mpi_coll: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Allreduce(enter, last_in, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	MPI_Allreduce(leave, first_out, n, MPI_DOUBLE, MPI_MIN,
		      MPI_COMM_WORLD);
	for (k = 0; k < n && bad < 0; k++)
		if (first_out[k] < last_in[k])
			bad = k;
	free(last_in);
	free(first_out);
	return bad;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mpi_coll bcast|scatter|gather|reduce|allreduce|"
		"allgather|reduce-scatter|alltoall|barrier BYTES ITERATIONS "
		"[--fresh | --back-to-back]\n");
}

/* it: the iteration, -1 the warm-up, -2 the back-to-back loop. */
static void report_bad(enum op op, int rank, long off, int it)
{
	char when[64];

	if (it >= 0)
		snprintf(when, sizeof(when), "iteration %d", it);
	else
		snprintf(when, sizeof(when), "%s",
			 it == -1 ? "warm-up" : "after the back-to-back loop");
	fprintf(stderr, "mpi_coll: %s: rank %d: wrong data at byte %ld (%s)\n",
		op_names[op], rank, off, when);
}

int main(int argc, char **argv)
{
	int rank, nranks, it, iterations, fresh = 0, b2b = 0, o, bad, anybad;
	int bk, nstamps;
	enum op op = OP_BCAST;
	struct bufs b = {0};
	double *times = NULL, *enter = NULL, *leave = NULL, t0, el, mx, median;
	unsigned long long ull;
	size_t bytes;
	char *end;
	long off;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &nranks);

	/* Every rank parses the same argv, so all of them agree to stop. */
	if (argc == 5) {
		fresh = strcmp(argv[4], "--fresh") == 0;
		b2b = strcmp(argv[4], "--back-to-back") == 0;
	}
	if (argc < 4 || argc > 5 || (argc == 5 && !fresh && !b2b)) {
		if (rank == ROOT)
			usage();
		MPI_Finalize();
		return 2;
	}
	for (o = 0; o < NOPS && strcmp(argv[1], op_names[o]) != 0; o++)
		;
	ull = strtoull(argv[2], &end, 10);
	iterations = atoi(argv[3]);
	if (o == NOPS || *end || end == argv[2] ||
	    (o == OP_BARRIER ? ull != 0 : ull == 0 || ull > INT32_MAX) ||
	    iterations < 1 || (is_reduction((enum op)o) && ull % 4)) {
		if (rank == ROOT) {
			usage();
			fprintf(stderr,
				"mpi_coll: BYTES must be 1..%d (a "
				"multiple of 4 for the reductions; 0 for "
				"barrier), ITERATIONS >= 1\n",
				INT32_MAX);
		}
		MPI_Finalize();
		return 2;
	}
	op = (enum op)o;
	bytes = (size_t)ull;
	nstamps = b2b ? iterations : iterations + 1;
	times = calloc((size_t)iterations, sizeof(*times));
	enter = calloc((size_t)nstamps, sizeof(*enter));
	leave = calloc((size_t)nstamps, sizeof(*leave));
	if (!times || !enter || !leave) {
		fprintf(stderr, "mpi_coll: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}

	if (!fresh)
		alloc_bufs(op, &b, rank, nranks, bytes);
	anybad = 0;
	/* it == -1 is the warm-up: checked, not recorded.  Back to back, only
	 * the warm-up runs here. */
	for (it = -1; it < (b2b ? 0 : iterations); it++) {
		if (fresh)
			alloc_bufs(op, &b, rank, nranks, bytes);
		reset_recv(op, &b, rank, bytes);
		MPI_Barrier(MPI_COMM_WORLD);
		enter[it + 1] = mono();
		t0 = MPI_Wtime();
		collective(op, &b, bytes);
		el = MPI_Wtime() - t0;
		leave[it + 1] = mono();
		MPI_Reduce(&el, &mx, 1, MPI_DOUBLE, MPI_MAX, ROOT,
			   MPI_COMM_WORLD);
		if (rank == ROOT && it >= 0)
			times[it] = mx;
		off = check(op, &b, rank, nranks, bytes);
		if (off >= 0) {
			report_bad(op, rank, off, it);
			anybad = 1;
		}
		if (fresh)
			free_bufs(&b);
	}
	if (b2b) {
		/* The warm-up's barrier stamps first, then the loop's. */
		if (op == OP_BARRIER) {
			bk = check_barrier(enter, leave, 1);
			if (bk >= 0) {
				if (rank == ROOT)
					fprintf(stderr,
						"mpi_coll: barrier: a rank "
						"left before the last one "
						"entered (warm-up)\n");
				anybad = 1;
			}
		}
		reset_recv(op, &b, rank, bytes);
		MPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		if (op == OP_BARRIER)
			for (it = 0; it < iterations; it++) {
				enter[it] = mono();
				MPI_Barrier(MPI_COMM_WORLD);
				leave[it] = mono();
			}
		else
			for (it = 0; it < iterations; it++)
				collective(op, &b, bytes);
		el = (MPI_Wtime() - t0) / iterations;
		MPI_Reduce(&el, &mx, 1, MPI_DOUBLE, MPI_MAX, ROOT,
			   MPI_COMM_WORLD);
		for (it = 0; it < iterations; it++)
			times[it] = mx;
		off = check(op, &b, rank, nranks, bytes);
		if (off >= 0) {
			report_bad(op, rank, off, -2);
			anybad = 1;
		}
	}
	if (op == OP_BARRIER) {
		bk = check_barrier(enter, leave, nstamps);
		if (bk >= 0) {
			if (rank == ROOT)
				fprintf(stderr,
					"mpi_coll: barrier: a rank left "
					"before the last one entered "
					"(iteration %d)\n",
					b2b ? bk : bk - 1);
			anybad = 1;
		}
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
		       "\"iterations\": %d, \"fresh\": %s, \"mode\": \"%s\", "
		       "\"seconds\": {\"min\": %.9f, \"median\": %.9f, "
		       "\"max\": %.9f}, \"verified\": %s}\n",
		       op_names[op], nranks, bytes, iterations,
		       fresh ? "true" : "false",
		       b2b ? "back-to-back" : "barrier", times[0], median,
		       times[iterations - 1], bad ? "false" : "true");
		fflush(stdout);
	}
	free(times);
	free(enter);
	free(leave);
	MPI_Finalize();
	return bad ? 1 : 0;
}
