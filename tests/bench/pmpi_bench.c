/*
 * pmpi_bench.c - latency of every collective libcollc-mpi.so wraps, through
 * the library (MPI_) and the MPI library's own (PMPI_), in one process, in
 * interleaved rounds (tests/bench/pmpi.py runs it with the library
 * preloaded).
 *
 *   mpirun -np N pmpi_bench [ROUNDS [MAX_BYTES]]
 *
 * For each operation and each size from 8 B to 16 MiB (x8), bytes per
 * process as OSU's micro-benchmarks count them (per block for scatter,
 * gather, allgather, alltoall and reduce-scatter; every process's
 * contribution for the reductions, int32 sums), both ways of measuring:
 *
 *   osu   PMPI_Barrier, then the call timed on every process; the average
 *         over the iterations, then over the processes (OSU's "Avg").
 *   b2b   ITER calls back to back after a PMPI_Barrier; each process's
 *         loop time / ITER, averaged over the processes.
 *
 * Each round measures both sides, alternating which goes first, so that
 * drift of the machine falls on both alike.  Sizes whose buffers would
 * exceed MAX_BYTES per process (default 256 MiB) are skipped.  Prints one
 * line per (operation, size, way, side) on rank 0:
 *
 *   OP BYTES osu|b2b collc|mpi T1 T2 ... (seconds per call, one a round)
 *
 * "collc" is MPI_ (the library's when it is loaded), "mpi" is PMPI_.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum op {
	BCAST,
	SCATTER,
	GATHER,
	REDUCE,
	ALLREDUCE,
	ALLGATHER,
	REDSCAT,
	ALLTOALL,
	BARRIER,
	NOPS
};
static const char *const names[NOPS] = {
    "bcast",	 "scatter",	   "gather",   "reduce", "allreduce",
    "allgather", "reduce-scatter", "alltoall", "barrier"};

static int rank, size;
static char *sbuf, *rbuf;

/* One call; pm: through PMPI_. */
static void call(enum op op, int bytes, int pm)
{
	int n4 = bytes / 4;
	MPI_Comm w = MPI_COMM_WORLD;

	switch (op) {
	case BCAST:
		pm ? PMPI_Bcast(rbuf, bytes, MPI_BYTE, 0, w)
		   : MPI_Bcast(rbuf, bytes, MPI_BYTE, 0, w);
		break;
	case SCATTER:
		pm ? PMPI_Scatter(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE,
				  0, w)
		   : MPI_Scatter(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE,
				 0, w);
		break;
	case GATHER:
		pm ? PMPI_Gather(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE,
				 0, w)
		   : MPI_Gather(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE, 0,
				w);
		break;
	case REDUCE:
		pm ? PMPI_Reduce(sbuf, rbuf, n4, MPI_INT, MPI_SUM, 0, w)
		   : MPI_Reduce(sbuf, rbuf, n4, MPI_INT, MPI_SUM, 0, w);
		break;
	case ALLREDUCE:
		pm ? PMPI_Allreduce(sbuf, rbuf, n4, MPI_INT, MPI_SUM, w)
		   : MPI_Allreduce(sbuf, rbuf, n4, MPI_INT, MPI_SUM, w);
		break;
	case ALLGATHER:
		pm ? PMPI_Allgather(sbuf, bytes, MPI_BYTE, rbuf, bytes,
				    MPI_BYTE, w)
		   : MPI_Allgather(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE,
				   w);
		break;
	case REDSCAT:
		pm ? PMPI_Reduce_scatter_block(sbuf, rbuf, n4, MPI_INT, MPI_SUM,
					       w)
		   : MPI_Reduce_scatter_block(sbuf, rbuf, n4, MPI_INT, MPI_SUM,
					      w);
		break;
	case ALLTOALL:
		pm ? PMPI_Alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE,
				   w)
		   : MPI_Alltoall(sbuf, bytes, MPI_BYTE, rbuf, bytes, MPI_BYTE,
				  w);
		break;
	default:
		pm ? PMPI_Barrier(w) : MPI_Barrier(w);
	}
}

/* Bytes each of the two buffers needs. */
static size_t need(enum op op, size_t bytes)
{
	switch (op) {
	case SCATTER:
	case GATHER:
	case ALLGATHER:
	case REDSCAT:
	case ALLTOALL:
		return bytes * (size_t)size;
	default:
		return bytes;
	}
}

/* Seconds per call, averaged over the processes. */
static double measure(enum op op, int bytes, int pm, int iters, int osu)
{
	double t = 0, sum = 0;

	if (osu) {
		for (int i = 0; i < iters; i++) {
			double t0;

			PMPI_Barrier(MPI_COMM_WORLD);
			t0 = MPI_Wtime();
			call(op, bytes, pm);
			t += MPI_Wtime() - t0;
		}
	} else {
		double t0;

		PMPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			call(op, bytes, pm);
		t = MPI_Wtime() - t0;
	}
	t /= iters;
	PMPI_Allreduce(&t, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	return sum / size;
}

int main(int argc, char **argv)
{
	int rounds;
	double maxb;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rounds = argc > 1 ? atoi(argv[1]) : 5;
	maxb = argc > 2 ? atof(argv[2]) : 256.0 * 1024 * 1024;
	if (rounds < 1)
		rounds = 1;
	for (int op = 0; op < NOPS; op++)
		for (size_t bytes = op == BARRIER ? 0 : 8;
		     bytes <= (op == BARRIER ? 0 : (size_t)16 << 20);
		     bytes *= 8) {
			size_t len = need((enum op)op, bytes);
			/* about 2 ms of copying per measurement, 3 to 1000
			 * calls */
			long it = (long)(4e6 / ((double)len + 4096));
			int iters = it < 3 ? 3 : it > 1000 ? 1000 : (int)it;
			double t[2][2][64];

			if ((double)len > maxb)
				continue;
			sbuf = malloc(len + 64);
			rbuf = malloc(len + 64);
			if (sbuf == NULL || rbuf == NULL) {
				fprintf(stderr, "pmpi_bench: out of memory\n");
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
			memset(sbuf, 1, len + 64);
			memset(rbuf, 0, len + 64);
			/* warm up both: plans made, pages touched */
			for (int pm = 0; pm < 2; pm++)
				for (int i = 0; i < 2; i++)
					call((enum op)op, (int)bytes, pm);
			for (int r = 0; r < rounds && r < 64; r++)
				for (int k = 0; k < 2; k++) {
					int pm = (r + k) % 2;

					t[0][pm][r] = measure((enum op)op,
							      (int)bytes, pm,
							      iters, 1);
					t[1][pm][r] = measure((enum op)op,
							      (int)bytes, pm,
							      iters, 0);
				}
			if (rank == 0)
				for (int way = 0; way < 2; way++)
					for (int pm = 0; pm < 2; pm++) {
						printf("%s %zu %s %s", names[op],
						       bytes,
						       way ? "b2b" : "osu",
						       pm ? "mpi" : "collc");
						for (int r = 0;
						     r < rounds && r < 64; r++)
							printf(" %.9f",
							       t[way][pm][r]);
						printf("\n");
					}
			fflush(stdout);
			free(sbuf);
			free(rbuf);
			if (op == BARRIER)
				break;
		}
	MPI_Finalize();
	return 0;
}
