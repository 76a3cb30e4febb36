/*
 * test_threads.c - libcollc-mpi under MPI_THREAD_MULTIPLE: several
 * threads run collectives at once, each on communicators of its own, and
 * make and free communicators while the others run.
 *
 *   mpirun -np N test_threads [THREADS [ROUNDS]]
 *
 * Each thread (default 4) has its own communicator over all processes:
 * even threads a duplicate of MPI_COMM_WORLD, odd ones a split in
 * reversed rank order (the same processes, so the same private
 * communicator of the library with a range of tags and a rank map of
 * their own).  For ROUNDS rounds (default 6) it runs every wrapped
 * collective at three sizes (one element, 4 KiB and 300 KiB per block,
 * so that the last runs in segments), through MPI_ (the library) and
 * through PMPI_ (the MPI library's own) on the same inputs, and compares
 * the results byte for byte; and once a round it duplicates its
 * communicator, runs an allreduce and a bcast on the duplicate, checks
 * them, and frees it, while the other threads do the same on theirs.
 *
 * Checked besides: MPI_THREAD_MULTIPLE was given (else the test says it
 * is skipped and passes nothing); with the library loaded (EXPECT_LIB=1)
 * every call ran over collc's plans (collc_mpi_counts), so that a pass
 * is the library's.  Prints "test_threads (np N, T threads): P passed, F
 * failed" on rank 0.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, nthreads = 4, rounds = 6;
static long long pass, fail;
static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;

static void check(int ok, int t, const char *what, int bytes)
{
	pthread_mutex_lock(&count_lock);
	if (ok)
		pass++;
	else if (fail++ < 10)
		fprintf(stderr, "FAIL (rank %d, thread %d): %s, %d bytes\n",
			rank, t, what, bytes);
	pthread_mutex_unlock(&count_lock);
}

struct thread {
	int t;
	MPI_Comm comm;
};

enum { BCAST, SCATTER, GATHER, REDUCE, ALLREDUCE, ALLGATHER, RSB, ALLTOALL,
       BARRIER, NOPS };
static const char *const names[NOPS] = {
    "bcast",	 "scatter",		 "gather",   "reduce", "allreduce",
    "allgather", "reduce_scatter_block", "alltoall", "barrier"};

/* Op op over comm, B bytes a block (ints), through MPI_ (pm 0) or
 * PMPI_; the inputs from seed. */
static void call(int op, MPI_Comm comm, int B, int pm, int *in, int *out,
		 int root)
{
	int n = B / 4;

	switch (op) {
	case BCAST:
		pm ? PMPI_Bcast(out, n, MPI_INT, root, comm)
		   : MPI_Bcast(out, n, MPI_INT, root, comm);
		break;
	case SCATTER:
		pm ? PMPI_Scatter(in, n, MPI_INT, out, n, MPI_INT, root, comm)
		   : MPI_Scatter(in, n, MPI_INT, out, n, MPI_INT, root, comm);
		break;
	case GATHER:
		pm ? PMPI_Gather(in, n, MPI_INT, out, n, MPI_INT, root, comm)
		   : MPI_Gather(in, n, MPI_INT, out, n, MPI_INT, root, comm);
		break;
	case REDUCE:
		pm ? PMPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, comm)
		   : MPI_Reduce(in, out, n, MPI_INT, MPI_SUM, root, comm);
		break;
	case ALLREDUCE:
		pm ? PMPI_Allreduce(in, out, n, MPI_INT, MPI_MAX, comm)
		   : MPI_Allreduce(in, out, n, MPI_INT, MPI_MAX, comm);
		break;
	case ALLGATHER:
		pm ? PMPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, comm)
		   : MPI_Allgather(in, n, MPI_INT, out, n, MPI_INT, comm);
		break;
	case RSB:
		pm ? PMPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_BXOR,
					       comm)
		   : MPI_Reduce_scatter_block(in, out, n, MPI_INT, MPI_BXOR,
					      comm);
		break;
	case ALLTOALL:
		pm ? PMPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT, comm)
		   : MPI_Alltoall(in, n, MPI_INT, out, n, MPI_INT, comm);
		break;
	default:
		pm ? PMPI_Barrier(comm) : MPI_Barrier(comm);
	}
}

static void fill(int *a, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		a[i] = (int)((seed * 2654435761u + (unsigned)i * 40503u) >> 3);
}

static void *work(void *arg)
{
	struct thread *th = arg;
	static const int sizes[] = {4, 4096, 300 * 1024};
	int crank;

	MPI_Comm_rank(th->comm, &crank);
	for (int r = 0; r < rounds; r++) {
		for (int op = 0; op < NOPS; op++)
			for (int k = 0; k < 3; k++) {
				int B = sizes[k], root = (r + op) % size;
				size_t n = (size_t)B / 4 * size;
				int *in = malloc(n * 4), *a = malloc(n * 4),
				    *b = malloc(n * 4);

				fill(in, n, (unsigned)(crank * 131 + th->t * 17 +
						       r * 7 + op));
				/* bcast's buffer is its input at the root */
				fill(a, n, (unsigned)(crank + 1000));
				memcpy(b, a, n * 4);
				if (op == BCAST && crank == root)
					memcpy(a, in, (size_t)B), memcpy(b, in, (size_t)B);
				call(op, th->comm, B, 0, in, a, root);
				call(op, th->comm, B, 1, in, b, root);
				check(memcmp(a, b, n * 4) == 0, th->t, names[op],
				      B);
				free(in);
				free(a);
				free(b);
			}
		{
			/* a duplicate while the others run theirs */
			MPI_Comm d;
			int x = crank + th->t, y = -1, z = -1, v = crank == 0 ? 77 : 0;

			MPI_Comm_dup(th->comm, &d);
			MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, d);
			PMPI_Allreduce(&x, &z, 1, MPI_INT, MPI_SUM, th->comm);
			MPI_Bcast(&v, 1, MPI_INT, 0, d);
			check(y == z && v == 77, th->t, "a duplicate", 4);
			MPI_Comm_free(&d);
		}
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided = 0;
	int (*counts)(const char *, long long *, long long *);
	long long ours0 = 0, ours1 = 0, comms = 0;
	const char *e = getenv("EXPECT_LIB");
	pthread_t *tid;
	struct thread *th;

	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc > 1)
		nthreads = atoi(argv[1]);
	if (argc > 2)
		rounds = atoi(argv[2]);
	if (provided != MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			printf("test_threads: skipped: the MPI library gives "
			       "thread level %d\n",
			       provided);
		MPI_Finalize();
		return 0;
	}
	counts = (int (*)(const char *, long long *, long long *))dlsym(
	    RTLD_DEFAULT, "collc_mpi_counts");
	if (counts != NULL)
		counts(NULL, &ours0, NULL);
	tid = calloc((size_t)nthreads, sizeof(*tid));
	th = calloc((size_t)nthreads, sizeof(*th));
	/* the communicators, made in one order on every process */
	for (int t = 0; t < nthreads; t++) {
		th[t].t = t;
		if (t % 2 == 0)
			MPI_Comm_dup(MPI_COMM_WORLD, &th[t].comm);
		else
			MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank,
				       &th[t].comm);
	}
	for (int t = 0; t < nthreads; t++)
		pthread_create(&tid[t], NULL, work, &th[t]);
	for (int t = 0; t < nthreads; t++)
		pthread_join(tid[t], NULL);
	for (int t = 0; t < nthreads; t++)
		MPI_Comm_free(&th[t].comm);
	if (e != NULL && strcmp(e, "1") == 0) {
		check(counts != NULL, -1, "collc_mpi_counts not found", 0);
		if (counts != NULL) {
			counts(NULL, &ours1, NULL);
			counts("libcollc-mpi:communicators", &comms, NULL);
			/* every MPI_ call of the threads (the driver sets
			 * COLLC_MPI_MIN_SIZE=1) */
			check(ours1 - ours0 ==
				  (long long)nthreads * rounds * (NOPS * 3 + 2),
			      -1, "calls did not run over collc's plans",
			      (int)(ours1 - ours0));
			/* at most a family and one of its own per
			 * communicator made */
			check(comms <= 1 + nthreads * (rounds + 1), -1,
			      "the library made too many communicators",
			      (int)comms);
		}
	}
	{
		long long p = 0, f = 0;

		PMPI_Reduce(&pass, &p, 1, MPI_LONG_LONG, MPI_SUM, 0,
			    MPI_COMM_WORLD);
		PMPI_Reduce(&fail, &f, 1, MPI_LONG_LONG, MPI_SUM, 0,
			    MPI_COMM_WORLD);
		if (rank == 0)
			printf("test_threads (np %d, %d threads): %lld passed, "
			       "%lld failed\n",
			       size, nthreads, p, f);
	}
	free(tid);
	free(th);
	MPI_Finalize();
	return fail > 0;
}
