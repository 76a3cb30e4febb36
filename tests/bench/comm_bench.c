/*
 * comm_bench.c - what a fresh communicator's first collectives cost, and
 * what the same collectives cost on one communicator called again and
 * again, through libcollc-mpi.so (MPI_) and the MPI library's own (PMPI_)
 * in the same processes, in interleaved blocks (tests/bench/prod.py runs
 * it with the library preloaded).
 *
 *   mpirun -np N comm_bench fresh|same ITERS BLOCKS
 *
 * fresh: ITERS times MPI_Comm_dup of MPI_COMM_WORLD, an allreduce of one
 * double, a bcast of one int and a barrier on the duplicate,
 * MPI_Comm_free; same: the three collectives ITERS times on one duplicate
 * made first.  Each block runs three sides, one after the other (which
 * goes first rotates), each from a PMPI_Barrier: the library's, the MPI
 * library's, and the MPI library's again (mpi2: what MPI against itself
 * varies by, for "no slower"); rank 0 prints one line per block and side,
 * the slowest process's seconds per iteration:
 * "comm_bench MODE N collc|mpi|mpi2 SECONDS".  The MPI_ side pays all the
 * library does (a state and an agreement per fresh communicator, the
 * plans); the PMPI_ side none of it: MPI_COMM_WORLD, the duplicates'
 * parent, carries no state of the library's (no collective of the
 * library's runs on it), so its duplicates copy nothing.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size;

static void check(int ok)
{
	if (!ok) {
		fprintf(stderr, "comm_bench: wrong result\n");
		PMPI_Abort(MPI_COMM_WORLD, 1);
	}
}

/* One block of one side (pm: PMPI_); c the communicator of "same". */
static double block(int fresh, int pm, int iters, MPI_Comm same)
{
	double x = rank, y, t0, t, worst;
	int b;
	MPI_Comm c = same;

	PMPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (int i = 0; i < iters; i++) {
		if (fresh)
			pm ? PMPI_Comm_dup(MPI_COMM_WORLD, &c)
			   : MPI_Comm_dup(MPI_COMM_WORLD, &c);
		b = rank == 0 ? i : -1;
		if (pm) {
			PMPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
			PMPI_Bcast(&b, 1, MPI_INT, 0, c);
			PMPI_Barrier(c);
		} else {
			MPI_Allreduce(&x, &y, 1, MPI_DOUBLE, MPI_SUM, c);
			MPI_Bcast(&b, 1, MPI_INT, 0, c);
			MPI_Barrier(c);
		}
		if (fresh)
			pm ? PMPI_Comm_free(&c) : MPI_Comm_free(&c);
		check(b == i && y == (double)size * (size - 1) / 2);
	}
	t = (MPI_Wtime() - t0) / iters;
	PMPI_Reduce(&t, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
	return worst;
}

int main(int argc, char **argv)
{
	static const char *const side[3] = {"collc", "mpi", "mpi2"};
	int iters, blocks, fresh;
	MPI_Comm same[3] = {MPI_COMM_NULL, MPI_COMM_NULL, MPI_COMM_NULL};

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
	if (!fresh) {
		/* a communicator for each side: the library's state on one
		 * only */
		for (int k = 0; k < 3; k++)
			PMPI_Comm_dup(MPI_COMM_WORLD, &same[k]);
	}
	/* one untimed block: the first calls' plans, the MPI library's
	 * connections */
	for (int k = -1; k < blocks; k++)
		for (int s = 0; s < 3; s++) {
			int w = (s + (k < 0 ? 0 : k)) % 3;
			double t = block(fresh, w > 0, iters, same[w]);

			if (rank == 0 && k >= 0)
				printf("comm_bench %s %d %s %.9f\n", argv[1],
				       size, side[w], t);
		}
	for (int k = 0; !fresh && k < 3; k++)
		PMPI_Comm_free(&same[k]);
	MPI_Finalize();
	return 0;
}
