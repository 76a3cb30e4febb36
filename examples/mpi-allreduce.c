/*
 * mpi-allreduce.c - an ordinary MPI program, for libcollc-mpi(7): it knows
 * nothing of collc.  Run it under the PMPI library and its collectives go
 * over collc's trees:
 *
 *   mpicc -o mpi-allreduce examples/mpi-allreduce.c
 *   mpirun -np 5 -x LD_PRELOAD=build/libcollc-mpi.so \
 *       -x COLLC_MPI_NODES=3,2 -x COLLC_MPI_REPORT=1 ./mpi-allreduce
 */
#include <mpi.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	int rank, size, sum = 0, all[64];
	double x, total = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	x = rank + 1;
	MPI_Allreduce(&x, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	MPI_Reduce(&rank, &sum, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
	if (size <= 64)
		MPI_Gather(&rank, 1, MPI_INT, all, 1, MPI_INT, size - 1,
			   MPI_COMM_WORLD);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("%d processes: allreduce %g, reduce %d\n", size, total,
		       sum);
	MPI_Finalize();
	return 0;
}
