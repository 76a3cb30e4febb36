/*
 * test_mismatch.c - an erroneous program: the processes pass different
 * arguments to one collective.  Under libcollc-mpi every process must
 * return MPI_ERR_ARG from it (the communicator's handler set to
 * MPI_ERRORS_RETURN), after one message from the communicator's rank 0
 * naming the ranks that differ, where running the mismatched plans would
 * give wrong results and hang; and the next, correct, collectives on the
 * same communicator must work.
 *
 *   mpirun -np N test_mismatch
 *
 * The last rank passes one more element to MPI_Bcast (then root 1 to
 * MPI_Reduce instead of 0) than the others.  Prints "test_mismatch (np
 * N): P passed, F failed" on rank 0; pmpi.py checks the message.
 */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	int rank, size, rc, cls = 0, x = 3, y = 0, buf[8] = {0};
	long long pass = 0, fail = 0, p = 0, f = 0;
	MPI_Comm c;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_dup(MPI_COMM_WORLD, &c);
	MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
	/* a correct call first: the communicator's first agreement */
	MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, c);
	if (y == 3 * size) pass++; else fail++;
	rc = MPI_Bcast(buf, rank == size - 1 ? 5 : 4, MPI_INT, 0, c);
	MPI_Error_class(rc, &cls);
	if (cls == MPI_ERR_ARG) pass++; else fail++;
	if (cls != MPI_ERR_ARG)
		fprintf(stderr, "rank %d: MPI_Bcast returned class %d\n", rank,
			cls);
	rc = MPI_Reduce(&x, &y, 1, MPI_INT, MPI_SUM,
			rank == size - 1 ? 1 % size : 0, c);
	MPI_Error_class(rc, &cls);
	if (cls == MPI_ERR_ARG) pass++; else fail++;
	/* and on */
	y = 0;
	rc = MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, c);
	if (rc == MPI_SUCCESS && y == 3) pass++; else fail++;
	for (int i = 0; i < 8; i++)
		buf[i] = rank == 0 ? i : -1;
	rc = MPI_Bcast(buf, 8, MPI_INT, 0, c);
	if (rc == MPI_SUCCESS && buf[7] == 7) pass++; else fail++;
	MPI_Comm_free(&c);
	PMPI_Reduce(&pass, &p, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	PMPI_Reduce(&fail, &f, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (rank == 0)
		printf("test_mismatch (np %d): %lld passed, %lld failed\n", size,
		       p, f);
	MPI_Finalize();
	return fail > 0;
}
