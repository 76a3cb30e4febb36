/*
 * repro_bench.c - what the fixed combine order of floating-point
 * reductions costs (libcollc-mpi(7), Reproducible results): MPI_Reduce
 * and MPI_Allreduce of doubles (MPI_SUM: their combines go in the plan's
 * order) beside the same bytes of 64-bit integers (any order gives the
 * same bits, so their plans leave it free), in one process, interleaved
 * (tests/bench/prod.py runs it with libcollc-mpi.so preloaded).
 *
 *   mpirun -np N repro_bench [ROUNDS]
 *
 * For 8 B to 16 MiB (x8) per process: ITER calls back to back after a
 * PMPI_Barrier, each type in turn, ROUNDS rounds (default 5), the first
 * type alternating; rank 0 prints "OP BYTES double|int64 T1 T2 ..."
 * (seconds per call, the slowest process's, one a round).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double timed(int reduce, MPI_Datatype t, void *in, void *out, int n,
		    int iters)
{
	double t0, dt, worst;

	PMPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++)
		if (reduce)
			MPI_Reduce(in, out, n, t, MPI_SUM, 0, MPI_COMM_WORLD);
		else
			MPI_Allreduce(in, out, n, t, MPI_SUM, MPI_COMM_WORLD);
	dt = (MPI_Wtime() - t0) / iters;
	PMPI_Allreduce(&dt, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return worst;
}

int main(int argc, char **argv)
{
	int rank, rounds;
	size_t max = (size_t)16 << 20;
	double *in, *out;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	rounds = argc > 1 ? atoi(argv[1]) : 5;
	in = malloc(max);
	out = malloc(max);
	for (size_t i = 0; i < max / 8; i++)
		in[i] = (double)((rank * 131 + (int)i) % 1000) * 0.001;
	for (int op = 0; op < 2; op++)
		for (size_t bytes = 8; bytes <= max; bytes *= 8) {
			int n = (int)(bytes / 8);
			int iters = bytes <= 65536 ? 2000 : bytes <= (1 << 20) ? 100
									 : 10;
			double t[2][64];

			/* warm: the plans made, the pages touched */
			timed(op, MPI_DOUBLE, in, out, n, 2);
			timed(op, MPI_INT64_T, in, out, n, 2);
			for (int r = 0; r < rounds && r < 64; r++)
				for (int k = 0; k < 2; k++) {
					int which = (k + r) % 2;

					t[which][r] = timed(
					    op, which ? MPI_INT64_T : MPI_DOUBLE,
					    in, out, n, iters);
				}
			for (int which = 0; rank == 0 && which < 2; which++) {
				printf("%s %zu %s", op ? "reduce" : "allreduce",
				       bytes, which ? "int64" : "double");
				for (int r = 0; r < rounds && r < 64; r++)
					printf(" %.9f", t[which][r]);
				printf("\n");
			}
		}
	free(in);
	free(out);
	MPI_Finalize();
	return 0;
}
