/*
 * comm_bench.c - what a fresh communicator's first collectives cost, and
 * what the same collectives cost on one communicator called again and
 * again (tests/bench/prod.py runs it with libcollc-mpi.so preloaded and
 * without, in interleaved rounds).
 *
 *   mpirun -np N comm_bench fresh|same ITERS BLOCKS
 *
 * fresh: ITERS times MPI_Comm_dup of MPI_COMM_WORLD, an MPI_Allreduce of
 * one double, an MPI_Bcast of one int and an MPI_Barrier on the
 * duplicate, MPI_Comm_free; same: the three collectives ITERS times on one
 * duplicate made first.  BLOCKS blocks of ITERS, each started from a
 * PMPI_Barrier; rank 0 prints one line per block, the slowest process's
 * seconds per iteration: "comm_bench MODE N SECONDS".
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, iters, blocks, fresh, b = 0;
	double x, y;
	MPI_Comm c = MPI_COMM_NULL;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc < 4) {
		if (rank == 0)
			fprintf(stderr, "usage: comm_bench fresh|same ITERS "
					"BLOCKS\n");
		MPI_Finalize();
		return 2;
	}
	fresh = strcmp(argv[1], "fresh") == 0;
	iters = atoi(argv[2]);
	blocks = atoi(argv[3]);
	x = rank;
	if (!fresh)
		MPI_Comm_dup(MPI_COMM_WORLD, &c);
	/* one untimed block: the first calls' plans, the MPI library's
	 * connections */
	for (int k = -1; k < blocks; k++) {
		double t0, t, worst;

		PMPI_Barrier(MPI_COMM_WORLD);
		t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++) {
			if (fresh)
				MPI_Comm_dup(MPI_COMM_WORLD, &c);
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
			b = rank == 0 ? i : -1;
			MPI_Bcast(&b, 1, MPI_INT, 0, c);
			MPI_Barrier(c);
			if (fresh)
				MPI_Comm_free(&c);
			if (b != i || y != (double)size * (size - 1) / 2) {
				fprintf(stderr, "comm_bench: wrong result\n");
				PMPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
		t = (MPI_Wtime() - t0) / iters;
		PMPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0,
			    MPI_COMM_WORLD);
		if (rank == 0 && k >= 0)
			printf("comm_bench %s %d %.9f\n", argv[1], size, worst);
	}
	if (!fresh)
		MPI_Comm_free(&c);
	MPI_Finalize();
	return 0;
}
