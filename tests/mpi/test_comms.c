/*
 * test_comms.c - communicators made and freed by the thousand under
 * libcollc-mpi: every collective on them right, and the library's own
 * communicators few (libcollc-mpi(7), Communicators).
 *
 *   mpirun -np N test_comms [quick]
 *
 * Each part runs collectives through MPI_ (the library) and PMPI_ (the
 * MPI library's own) on the same inputs and compares the results:
 *  1. 300 times MPI_Comm_dup of MPI_COMM_WORLD, an allreduce, a bcast, a
 *     barrier, MPI_Comm_free: the library makes one communicator of its
 *     own for all of them (the family of all processes);
 *  2. duplicates of duplicates, and a split in reversed rank order: the
 *     same processes, so no communicator of the library's;
 *  3. two duplicates alive at once, their collectives interleaved;
 *  4. 100 times a split by parity (two sets of processes): one more
 *     communicator of the library's on each process, made once;
 *  5. 1100 duplicates alive at once, each used: beyond the family's 1024
 *     ranges of tags (some already taken) the library makes
 *     communicators of its own, every collective still right; once they
 *     are freed, a new duplicate takes a range again (no new one);
 *  6. an intercommunicator and a duplicate of MPI_COMM_WORLD made and
 *     freed in turn, so that one's handle names the other next (the MPI
 *     libraries reuse handles): a call on the intercommunicator goes to
 *     the MPI library, one on the duplicate over collc's plans, whatever
 *     the handle named before (the library remembers the last
 *     communicator a thread used, and must know when it is freed);
 *  7. MPI_Comm_create_group from a duplicate that has run collectives
 *     (so carries the library's state): the even processes, and all of
 *     them in reversed order.  MPI copies attributes at MPI_Comm_dup
 *     alone, but Open MPI 4.1 copies them here too, so the new
 *     communicator starts with its parent's state: every collective on
 *     it must still be right (before the library checked the copy, the
 *     even processes' first collective crashed).
 * With the library loaded (EXPECT_LIB=1) the counts of its own
 * communicators are checked (collc_mpi_counts's
 * "libcollc-mpi:communicators"), and that the calls ran over its plans;
 * the driver sets COLLC_MPI_MIN_SIZE=1.  quick: a sixth of the loops of
 * parts 1 and 4, a fifth of part 3, and not part 5 (for MPICH 4.0 on
 * more processes than CPUs, whose own collectives, the checks', spin).
 * Prints "test_comms (np N): P passed, F failed" on rank 0.
 */
#include <dlfcn.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, lib;
static long long pass, fail;
static int (*counts)(const char *, long long *, long long *);

static void check(int ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void check(int ok, const char *fmt, ...)
{
	va_list ap;

	if (ok) {
		pass++;
		return;
	}
	if (fail++ < 10) {
		fprintf(stderr, "FAIL (rank %d): ", rank);
		va_start(ap, fmt);
		vfprintf(stderr, fmt, ap);
		va_end(ap);
		fputc('\n', stderr);
	}
}

static long long made(void)
{
	long long n = 0;

	if (counts != NULL)
		counts("libcollc-mpi:communicators", &n, NULL);
	return n;
}

static long long ours(void)
{
	long long n = 0;

	if (counts != NULL)
		counts(NULL, &n, NULL);
	return n;
}

/* An allreduce, a bcast from the last rank and a barrier on c, each
 * checked against the MPI library's own. */
static void use(MPI_Comm c, int seed)
{
	int cr, cs, x[3], y[3] = {0}, z[3] = {0}, v[2], w[2];

	MPI_Comm_rank(c, &cr);
	MPI_Comm_size(c, &cs);
	for (int i = 0; i < 3; i++)
		x[i] = cr * 7 + seed + i;
	MPI_Allreduce(x, y, 3, MPI_INT, MPI_SUM, c);
	PMPI_Allreduce(x, z, 3, MPI_INT, MPI_SUM, c);
	check(memcmp(y, z, sizeof(y)) == 0, "allreduce (seed %d)", seed);
	v[0] = w[0] = cr == cs - 1 ? seed : -1;
	v[1] = w[1] = cr;
	MPI_Bcast(v, 2, MPI_INT, cs - 1, c);
	PMPI_Bcast(w, 2, MPI_INT, cs - 1, c);
	check(memcmp(v, w, sizeof(v)) == 0 && v[0] == seed,
	      "bcast (seed %d)", seed);
	check(MPI_Barrier(c) == MPI_SUCCESS, "barrier (seed %d)", seed);
}

int main(int argc, char **argv)
{
	long long m0, m, o0;
	const char *e = getenv("EXPECT_LIB");
	int quick;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	quick = argc > 1 && strcmp(argv[1], "quick") == 0;
	counts = (int (*)(const char *, long long *, long long *))dlsym(
	    RTLD_DEFAULT, "collc_mpi_counts");
	lib = e != NULL && strcmp(e, "1") == 0 && counts != NULL;
	if (e != NULL && strcmp(e, "1") == 0)
		check(counts != NULL, "collc_mpi_counts not found");
	m0 = made();
	o0 = ours();

	/* 1 */
	for (int i = 0; i < (quick ? 50 : 300); i++) {
		MPI_Comm d;

		MPI_Comm_dup(MPI_COMM_WORLD, &d);
		use(d, i);
		MPI_Comm_free(&d);
	}
	m = made();
	if (lib) {
		check(m - m0 == 1, "duplicates in a loop: %lld communicators "
				   "of the library's, want 1",
		      m - m0);
		check(ours() - o0 == (quick ? 150 : 900),
		      "duplicates in a loop: %lld collectives over collc's "
		      "plans, want 3 each",
		      ours() - o0);
	}

	/* 2 */
	{
		MPI_Comm a, b, c, r;

		MPI_Comm_dup(MPI_COMM_WORLD, &a);
		MPI_Comm_dup(a, &b);
		MPI_Comm_dup(b, &c);
		MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &r);
		use(c, 1);
		use(r, 2);
		use(b, 3);
		use(a, 4);
		use(r, 5);
		MPI_Comm_free(&c);
		MPI_Comm_free(&b);
		MPI_Comm_free(&r);
		MPI_Comm_free(&a);
		if (lib)
			check(made() == m, "duplicates and a reversed split: "
					   "%lld new communicators of the "
					   "library's, want 0",
			      made() - m);
	}

	/* 3 */
	{
		MPI_Comm a, b;

		MPI_Comm_dup(MPI_COMM_WORLD, &a);
		MPI_Comm_dup(MPI_COMM_WORLD, &b);
		for (int i = 0; i < (quick ? 10 : 50); i++) {
			use(i % 2 ? a : b, 1000 + i);
			use(i % 3 ? b : a, 2000 + i);
		}
		MPI_Comm_free(&a);
		MPI_Comm_free(&b);
	}

	/* 4 */
	m = made();
	for (int i = 0; i < (quick ? 16 : 100); i++) {
		MPI_Comm h;

		MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &h);
		use(h, 3000 + i);
		MPI_Comm_free(&h);
	}
	if (lib)
		check(made() - m == (size > 1 ? 1 : 0),
		      "splits by parity in a loop: %lld new communicators of "
		      "the library's",
		      made() - m);

	/* 5 */
	if (!quick) {
		enum { K = 1100 };
		MPI_Comm *d = malloc(K * sizeof(MPI_Comm));
		MPI_Comm x;

		m = made();
		for (int i = 0; i < K; i++) {
			MPI_Comm_dup(MPI_COMM_WORLD, &d[i]);
			use(d[i], 4000 + i);
		}
		if (lib)
			check(made() - m >= K - 1024 && made() - m < K - 900,
			      "1100 duplicates at once: %lld new "
			      "communicators of the library's",
			      made() - m);
		for (int i = 0; i < K; i++)
			MPI_Comm_free(&d[i]);
		m = made();
		MPI_Comm_dup(MPI_COMM_WORLD, &x);
		use(x, 9000);
		MPI_Comm_free(&x);
		if (lib)
			check(made() == m, "a duplicate after 1100 were freed: "
					   "%lld new communicators, want 0",
			      made() - m);
		free(d);
	}
	/* 6 */
	if (size > 1) {
		int reused = 0, loops = quick ? 20 : 100;

		for (int i = 0; i < loops; i++) {
			MPI_Comm local, inter, d;
			MPI_Comm was;
			long long a0 = 0, b0 = 0, a = 0, b = 0;

			MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
			MPI_Intercomm_create(local, 0, MPI_COMM_WORLD,
					     rank % 2 ? 0 : 1, 77, &inter);
			MPI_Comm_free(&local);
			if (counts != NULL)
				counts("MPI_Barrier", &a0, &b0);
			check(MPI_Barrier(inter) == MPI_SUCCESS,
			      "barrier on an intercommunicator (%d)", i);
			if (counts != NULL)
				counts("MPI_Barrier", &a, &b);
			if (lib)
				check(a == a0 && b == b0 + 1,
				      "barrier on an intercommunicator (%d): "
				      "%lld over collc's plans, %lld handed "
				      "over, want 0 and 1",
				      i, a - a0, b - b0);
			was = inter;
			MPI_Comm_free(&inter);
			MPI_Comm_dup(MPI_COMM_WORLD, &d);
			reused += d == was;
			o0 = ours();
			use(d, 5000 + i);
			if (lib)
				check(ours() - o0 == 3,
				      "a duplicate after an intercommunicator "
				      "(%d): %lld collectives over collc's "
				      "plans, want 3",
				      i, ours() - o0);
			/* the group first, so that the handle freed goes to
			 * the intercommunicator */
			MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &local);
			was = d;
			MPI_Comm_free(&d);
			MPI_Intercomm_create(local, 0, MPI_COMM_WORLD,
					     rank % 2 ? 0 : 1, 78, &inter);
			MPI_Comm_free(&local);
			reused += inter == was;
			o0 = ours();
			check(MPI_Barrier(inter) == MPI_SUCCESS,
			      "barrier on an intercommunicator after a "
			      "duplicate (%d)",
			      i);
			if (lib)
				check(ours() == o0,
				      "an intercommunicator after a duplicate "
				      "(%d): its barrier over collc's plans",
				      i);
			MPI_Comm_free(&inter);
		}
		/* that the handles were reused, else the part proves little */
		if (rank == 0)
			printf("test_comms (np %d): %d of %d handles reused\n",
			       size, reused, 2 * loops);
	}
	/* 7 */
	{
		MPI_Comm d, c;
		MPI_Group g, sub;
		int *r = malloc(size * sizeof(int)), k = 0;

		MPI_Comm_dup(MPI_COMM_WORLD, &d);
		use(d, 6000);
		MPI_Comm_group(d, &g);
		for (int i = 0; i < size; i += 2)
			r[k++] = i;
		MPI_Group_incl(g, k, r, &sub);
		if (rank % 2 == 0) {
			MPI_Comm_create_group(d, sub, 7, &c);
			use(c, 6001);
			use(c, 6002);
			MPI_Comm_free(&c);
		}
		MPI_Group_free(&sub);
		for (int i = 0; i < size; i++)
			r[i] = size - 1 - i;
		MPI_Group_incl(g, size, r, &sub);
		MPI_Comm_create_group(d, sub, 8, &c);
		use(c, 6003);
		use(c, 6004);
		MPI_Comm_free(&c);
		MPI_Group_free(&sub);
		MPI_Group_free(&g);
		MPI_Comm_free(&d);
		free(r);
	}
	{
		long long p = 0, f = 0;

		PMPI_Reduce(&pass, &p, 1, MPI_LONG_LONG, MPI_SUM, 0,
			    MPI_COMM_WORLD);
		PMPI_Reduce(&fail, &f, 1, MPI_LONG_LONG, MPI_SUM, 0,
			    MPI_COMM_WORLD);
		if (rank == 0)
			printf("test_comms (np %d): %lld passed, %lld failed\n",
			       size, p, f);
	}
	MPI_Finalize();
	return fail > 0;
}
