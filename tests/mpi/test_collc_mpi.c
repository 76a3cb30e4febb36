/*
 * test_collc_mpi.c - every collective libcollc-mpi.so wraps, checked
 * against the MPI library's own.
 *
 * A plain MPI program: each case runs the collective through MPI_ (which
 * libcollc-mpi.so, preloaded, takes) and again through PMPI_ (the MPI
 * library's own) on the same inputs, and compares every byte of both
 * results, the bytes around them (guards, and the holes of a strided
 * datatype) and the send buffers, which must come back untouched.
 *
 * The matrix: bcast, scatter, gather, reduce, allreduce, allgather,
 * reduce_scatter_block, alltoall and barrier x datatypes (every
 * predefined integer and floating type a reduction takes, MPI_BYTE,
 * contiguous and strided derived types for the collectives that move
 * bytes) x operators (the seven predefined ones, and MPI_LAND, MPI_MAXLOC
 * and a user-defined operator, which the library hands to MPI) x every
 * root x communicators (MPI_COMM_WORLD, halves, thirds of odd sizes,
 * reversed rank order, MPI_COMM_SELF, and an intercommunicator, handed
 * to MPI) x MPI_IN_PLACE where MPI allows it x counts from 0 up to
 * segmented sizes.  CHECK_QUICK=1 runs a deterministic part of the
 * matrix chosen by np (the whole of it for every communicator and
 * operation, a slice of the datatype x operator x count combinations:
 * one in N for CHECK_QUICK=N, one in four for CHECK_QUICK=1).
 *
 * The nonblocking and persistent forms of the nine (MPI_Ibcast ...,
 * MPI_Bcast_init ... under MPI 4.0, Open MPI's MPIX_Bcast_init ...), on
 * every communicator, each against the blocking PMPI_ form: the library
 * hands them to MPI and counts them.
 *
 * A plan's memory check counts this process's buffers only: an alltoall
 * whose members' buffers together exceed the memory left (RLIMIT_DATA set
 * just above what this process's own need) still takes collc's way.
 *
 * With the library loaded (collc_mpi_counts found), each call must also
 * have taken the way the library documents: collc's plans, or the MPI
 * library for what it hands over (among it every call on a communicator
 * of fewer members than COLLC_MPI_MIN_SIZE, read here as the library
 * reads it); EXPECT_OFF=1 expects every call handed over
 * (COLLC_MPI_DISABLE).  Without the library every comparison still
 * runs (the control run: MPI against itself).
 *
 * Prints "test_collc_mpi (np N, LIB): P passed, F failed" on rank 0;
 * TRACE=1 prints every case before its call (to find the one that hangs).
 */
#include <dlfcn.h>
#include <mpi.h>
#if MPI_VERSION >= 4
#define PERSISTENT 1
#define PNAME(x) "MPI_" x "_init"
#define PFN(x) MPI_##x##_init
#else
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PERSISTENT 1
#define PNAME(x) "MPIX_" x "_init"
#define PFN(x) MPIX_##x##_init
#else
#define PERSISTENT 0
#endif
#endif
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define GUARD 64
#define FILL 0x5a

static int (*counts_fn)(const char *, long long *, long long *);
static int lib_on; /* the library is loaded and on */
static int expect_off;
/* the library's COLLC_MPI_MIN_SIZE (3 unless set): communicators of
 * fewer members go to the MPI library; members: the communicator of the
 * case under way */
static int min_size = 3, members;
static long long pass, fail;
static int wrank, wsize, quick;
static int mpich; /* the MPI library is MPICH */
static unsigned long long combo;

static void failure(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void failure(const char *fmt, ...)
{
	va_list ap;

	fail++;
	if (fail > 20)
		return;
	fprintf(stderr, "FAIL (world rank %d): ", wrank);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

static void check(int ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void check(int ok, const char *fmt, ...)
{
	va_list ap;
	char line[400];

	if (ok) {
		pass++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	failure("%s", line);
}

/* In quick mode, whether this combination runs at this np: one in
 * CHECK_QUICK (1: one in four), a different slice at each np. */
static int chosen(void)
{
	combo++;
	return quick <= 1 || (combo * 2654435761u >> 7) % (unsigned)quick ==
				 (unsigned)wsize % (unsigned)quick;
}

/* ---------------------------------------------------------------------- */
/* Datatypes */

enum kind { SIGNED, UNSIGNED, FLOATING, OPAQUE };

struct dtype {
	MPI_Datatype t;
	const char *name;
	enum kind kind;
	int size; /* of one element (bytes of data) */
	int reduces;
};

static struct dtype rtypes[32], ctypes[8];
static int nrtypes, nctypes;

static void add(struct dtype *list, int *n, MPI_Datatype t, const char *name,
		enum kind kind, int reduces)
{
	int size;

	MPI_Type_size(t, &size);
	list[*n] = (struct dtype){t, name, kind, size, reduces};
	(*n)++;
}

static void make_types(void)
{
	MPI_Datatype contig, vec;

#define R(t, k) add(rtypes, &nrtypes, t, #t, k, 1)
	R(MPI_INT8_T, SIGNED);
	R(MPI_INT16_T, SIGNED);
	R(MPI_INT32_T, SIGNED);
	R(MPI_INT64_T, SIGNED);
	R(MPI_UINT8_T, UNSIGNED);
	R(MPI_UINT16_T, UNSIGNED);
	R(MPI_UINT32_T, UNSIGNED);
	R(MPI_UINT64_T, UNSIGNED);
	R(MPI_FLOAT, FLOATING);
	R(MPI_DOUBLE, FLOATING);
	R(MPI_SIGNED_CHAR, SIGNED);
	R(MPI_SHORT, SIGNED);
	R(MPI_INT, SIGNED);
	R(MPI_LONG, SIGNED);
	R(MPI_LONG_LONG, SIGNED);
	R(MPI_UNSIGNED_CHAR, UNSIGNED);
	R(MPI_UNSIGNED_SHORT, UNSIGNED);
	R(MPI_UNSIGNED, UNSIGNED);
	R(MPI_UNSIGNED_LONG, UNSIGNED);
	R(MPI_UNSIGNED_LONG_LONG, UNSIGNED);
	R(MPI_BYTE, OPAQUE);
#undef R
	MPI_Type_contiguous(3, MPI_SHORT, &contig);
	MPI_Type_commit(&contig);
	/* two ints with a hole of one between: not contiguous */
	MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
	MPI_Type_commit(&vec);
	add(ctypes, &nctypes, MPI_BYTE, "MPI_BYTE", OPAQUE, 0);
	add(ctypes, &nctypes, MPI_CHAR, "MPI_CHAR", OPAQUE, 0);
	add(ctypes, &nctypes, MPI_INT, "MPI_INT", OPAQUE, 0);
	add(ctypes, &nctypes, MPI_DOUBLE, "MPI_DOUBLE", OPAQUE, 0);
	add(ctypes, &nctypes, contig, "contiguous(3, MPI_SHORT)", OPAQUE, 0);
	add(ctypes, &nctypes, vec, "vector(2, 1, 2, MPI_INT)", OPAQUE, 0);
}

static MPI_Aint extent(MPI_Datatype t)
{
	MPI_Aint lb, ext;

	MPI_Type_get_extent(t, &lb, &ext);
	return ext;
}

/* Element i of a reduction input on comm rank r: small values, so that
 * sums and products stay exact and within every type, whatever the
 * order of combining. */
static void put(const struct dtype *d, void *buf, long i, int r, int op_kind,
		int seed)
{
	unsigned char *p = (unsigned char *)buf + (size_t)i * d->size;
	long long v;

	switch (op_kind) {
	case 1: /* product: mostly 1, a few -1 and 2 */
		v = (i + r + seed) % 5 == 0 ? 2 : (i * 7 + r) % 3 == 0 ? -1 : 1;
		if (d->kind == UNSIGNED || d->kind == OPAQUE)
			v = v < 0 ? 1 : v;
		break;
	case 2: /* bitwise: any bits of the low byte */
		v = (i * 37 + r * 11 + seed * 5) & 0x7f;
		break;
	default: /* sum, min, max */
		v = (i * 31 + r * 17 + seed) % 21;
		if (d->kind == SIGNED || d->kind == FLOATING)
			v -= 10;
	}
	if (d->kind == FLOATING) {
		if (d->size == 4) {
			float f = (float)v;

			memcpy(p, &f, 4);
		} else {
			double f = (double)v;

			memcpy(p, &f, 8);
		}
		return;
	}
	switch (d->size) {
	case 1: {
		int8_t x = (int8_t)v;
		memcpy(p, &x, 1);
		break;
	}
	case 2: {
		int16_t x = (int16_t)v;
		memcpy(p, &x, 2);
		break;
	}
	case 4: {
		int32_t x = (int32_t)v;
		memcpy(p, &x, 4);
		break;
	}
	default: {
		int64_t x = (int64_t)v;
		memcpy(p, &x, 8);
	}
	}
}

/* Bytes of a copying collective's input: any pattern of r and seed. */
static void bytes(unsigned char *p, size_t len, int r, int seed)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(i * 131 + (size_t)r * 29 + (size_t)seed);
}

/* ---------------------------------------------------------------------- */
/* Buffers: each with GUARD bytes before and after */

struct buf {
	unsigned char *mem;
	size_t len; /* of the payload */
};

static void *payload(struct buf *b)
{
	return b->mem + GUARD;
}

static void buf_alloc(struct buf *b, size_t len)
{
	b->len = len;
	b->mem = malloc(len + 2 * GUARD);
	if (b->mem == NULL) {
		fprintf(stderr, "out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(b->mem, FILL, len + 2 * GUARD);
}

static void buf_copy(struct buf *to, const struct buf *from)
{
	buf_alloc(to, from->len);
	memcpy(to->mem, from->mem, from->len + 2 * GUARD);
}

static int buf_same(const struct buf *a, const struct buf *b)
{
	return memcmp(a->mem, b->mem, a->len + 2 * GUARD) == 0;
}

static void buf_free(struct buf *b)
{
	free(b->mem);
	b->mem = NULL;
}

/* ---------------------------------------------------------------------- */
/* The way each call must take */

static long long snap[2];
/* the case under way, for messages */
static char cur[200];

static void before(const char *name)
{
	if (getenv("TRACE") != NULL)
		fprintf(stderr, "[%d] %s %s\n", wrank, name, cur);
	if (counts_fn != NULL)
		counts_fn(name, &snap[0], &snap[1]);
}

/* ours: the library takes the call (else it hands it to MPI) */
static void after(const char *name, int ours, const char *what)
{
	long long now[2];

	if (counts_fn == NULL)
		return;
	counts_fn(name, &now[0], &now[1]);
	if (!lib_on || expect_off || members < min_size)
		ours = 0;
	check(now[0] - snap[0] == (ours ? 1 : 0) &&
		  now[1] - snap[1] == (ours ? 0 : 1),
	      "%s: %s (%s): expected %s, got %lld over collc and %lld handed "
	      "over",
	      name, what, cur, ours ? "collc's plans" : "the MPI library",
	      now[0] - snap[0], now[1] - snap[1]);
}

/* ---------------------------------------------------------------------- */
/* Communicators */

struct comm {
	MPI_Comm c;
	char name[40];
	int rank, size;
};

static struct comm comms[8];
static int ncomms;

static void add_comm(MPI_Comm c, const char *name)
{
	struct comm *k = &comms[ncomms++];

	k->c = c;
	snprintf(k->name, sizeof(k->name), "%s", name);
	MPI_Comm_rank(c, &k->rank);
	MPI_Comm_size(c, &k->size);
}

static void make_comms(void)
{
	MPI_Comm c;

	add_comm(MPI_COMM_WORLD, "world");
	MPI_Comm_split(MPI_COMM_WORLD, wrank < wsize / 2, wrank, &c);
	add_comm(c, "halves");
	MPI_Comm_split(MPI_COMM_WORLD, wrank % 3, wrank, &c);
	add_comm(c, "thirds");
	MPI_Comm_split(MPI_COMM_WORLD, 0, wsize - wrank, &c);
	add_comm(c, "reversed");
	/* every other rank, in reverse: members not in node order */
	MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &c);
	add_comm(c, "odd-even-reversed");
	add_comm(MPI_COMM_SELF, "self");
}

/* ---------------------------------------------------------------------- */
/* The copying collectives */

static const int ccounts[] = {0, 1, 3, 100, 20000};
#define NCC (int)(sizeof(ccounts) / sizeof(ccounts[0]))

static void test_bcast(const struct comm *k, const struct dtype *d, int count,
		       int seed)
{
	for (int root = 0; root < k->size; root++) {
		struct buf a, b;
		size_t len = (size_t)count * (size_t)extent(d->t);

		if (!chosen())
			continue;
		buf_alloc(&a, len);
		if (k->rank == root)
			bytes(payload(&a), len, root, seed);
		buf_copy(&b, &a);
		snprintf(cur, sizeof(cur), "%s x %d root %d", d->name, count,
			 root);
		before("MPI_Bcast");
		MPI_Bcast(payload(&a), count, d->t, root, k->c);
		after("MPI_Bcast", 1, k->name);
		PMPI_Bcast(payload(&b), count, d->t, root, k->c);
		check(buf_same(&a, &b), "MPI_Bcast %s x %d root %d on %s",
		      d->name, count, root, k->name);
		buf_free(&a);
		buf_free(&b);
	}
}

static void test_scatter(const struct comm *k, const struct dtype *d, int count,
			 int seed, int in_place)
{
	for (int root = 0; root < k->size; root++) {
		size_t blk = (size_t)count * (size_t)extent(d->t);
		struct buf s, r1, r2, s0;
		int me = k->rank == root;
		void *rb1, *rb2;

		if (!chosen())
			continue;
		buf_alloc(&s, me ? blk * (size_t)k->size : 0);
		if (me)
			bytes(payload(&s), s.len, root, seed);
		buf_copy(&s0, &s);
		buf_alloc(&r1, blk);
		buf_copy(&r2, &r1);
		rb1 = in_place && me ? MPI_IN_PLACE : payload(&r1);
		rb2 = in_place && me ? MPI_IN_PLACE : payload(&r2);
		snprintf(cur, sizeof(cur), "%s x %d root %d%s", d->name, count,
			 root, in_place ? " in place" : "");
		before("MPI_Scatter");
		MPI_Scatter(payload(&s), count, d->t, rb1, count, d->t, root,
			    k->c);
		after("MPI_Scatter", 1, k->name);
		check(buf_same(&s, &s0),
		      "MPI_Scatter %s x %d root %d on %s: the send buffer "
		      "changed",
		      d->name, count, root, k->name);
		PMPI_Scatter(payload(&s0), count, d->t, rb2, count, d->t, root,
			     k->c);
		check(buf_same(&r1, &r2), "MPI_Scatter %s x %d root %d on %s%s",
		      d->name, count, root, k->name,
		      in_place ? " in place" : "");
		buf_free(&s);
		buf_free(&s0);
		buf_free(&r1);
		buf_free(&r2);
	}
}

static void test_gather(const struct comm *k, const struct dtype *d, int count,
			int seed, int in_place)
{
	for (int root = 0; root < k->size; root++) {
		size_t blk = (size_t)count * (size_t)extent(d->t);
		struct buf s, s0, r1, r2;
		int me = k->rank == root;
		const void *sb1, *sb2;

		if (!chosen())
			continue;
		buf_alloc(&s, blk);
		bytes(payload(&s), blk, k->rank, seed);
		buf_copy(&s0, &s);
		buf_alloc(&r1, me ? blk * (size_t)k->size : 0);
		if (me && in_place)
			/* the root's own block in its place */
			memcpy((unsigned char *)payload(&r1) +
				   (size_t)root * blk,
			       payload(&s), blk);
		buf_copy(&r2, &r1);
		sb1 = in_place && me ? MPI_IN_PLACE : payload(&s);
		sb2 = in_place && me ? MPI_IN_PLACE : payload(&s0);
		snprintf(cur, sizeof(cur), "%s x %d root %d%s", d->name, count,
			 root, in_place ? " in place" : "");
		before("MPI_Gather");
		MPI_Gather(sb1, count, d->t, payload(&r1), count, d->t, root,
			   k->c);
		after("MPI_Gather", 1, k->name);
		check(buf_same(&s, &s0),
		      "MPI_Gather %s x %d root %d on %s: the send buffer "
		      "changed",
		      d->name, count, root, k->name);
		PMPI_Gather(sb2, count, d->t, payload(&r2), count, d->t, root,
			    k->c);
		check(buf_same(&r1, &r2), "MPI_Gather %s x %d root %d on %s%s",
		      d->name, count, root, k->name,
		      in_place ? " in place" : "");
		buf_free(&s);
		buf_free(&s0);
		buf_free(&r1);
		buf_free(&r2);
	}
}

static void test_allgather(const struct comm *k, const struct dtype *d,
			   int count, int seed, int in_place)
{
	size_t blk = (size_t)count * (size_t)extent(d->t);
	struct buf s, s0, r1, r2;

	if (!chosen())
		return;
	buf_alloc(&s, blk);
	bytes(payload(&s), blk, k->rank, seed);
	buf_copy(&s0, &s);
	buf_alloc(&r1, blk * (size_t)k->size);
	if (in_place)
		memcpy((unsigned char *)payload(&r1) + (size_t)k->rank * blk,
		       payload(&s), blk);
	buf_copy(&r2, &r1);
	snprintf(cur, sizeof(cur), "%s x %d%s", d->name, count,
		 in_place ? " in place" : "");
	before("MPI_Allgather");
	MPI_Allgather(in_place ? MPI_IN_PLACE : payload(&s), count, d->t,
		      payload(&r1), count, d->t, k->c);
	after("MPI_Allgather", 1, k->name);
	check(buf_same(&s, &s0),
	      "MPI_Allgather %s x %d on %s: the send "
	      "buffer changed",
	      d->name, count, k->name);
	PMPI_Allgather(in_place ? MPI_IN_PLACE : payload(&s0), count, d->t,
		       payload(&r2), count, d->t, k->c);
	check(buf_same(&r1, &r2), "MPI_Allgather %s x %d on %s%s", d->name,
	      count, k->name, in_place ? " in place" : "");
	buf_free(&s);
	buf_free(&s0);
	buf_free(&r1);
	buf_free(&r2);
}

static void test_alltoall(const struct comm *k, const struct dtype *d,
			  int count, int seed, int in_place)
{
	size_t blk = (size_t)count * (size_t)extent(d->t),
	       all = blk * (size_t)k->size;
	struct buf s, s0, r1, r2;

	if (!chosen())
		return;
	buf_alloc(&s, all);
	bytes(payload(&s), all, k->rank, seed);
	buf_copy(&s0, &s);
	buf_alloc(&r1, all);
	if (in_place)
		memcpy(payload(&r1), payload(&s), all);
	buf_copy(&r2, &r1);
	snprintf(cur, sizeof(cur), "%s x %d%s", d->name, count,
		 in_place ? " in place" : "");
	before("MPI_Alltoall");
	MPI_Alltoall(in_place ? MPI_IN_PLACE : payload(&s), count, d->t,
		     payload(&r1), count, d->t, k->c);
	after("MPI_Alltoall", 1, k->name);
	check(buf_same(&s, &s0),
	      "MPI_Alltoall %s x %d on %s: the send buffer changed", d->name,
	      count, k->name);
	PMPI_Alltoall(in_place ? MPI_IN_PLACE : payload(&s0), count, d->t,
		      payload(&r2), count, d->t, k->c);
	check(buf_same(&r1, &r2), "MPI_Alltoall %s x %d on %s%s", d->name,
	      count, k->name, in_place ? " in place" : "");
	buf_free(&s);
	buf_free(&s0);
	buf_free(&r1);
	buf_free(&r2);
}

/* ---------------------------------------------------------------------- */
/* The reductions */

struct rop {
	MPI_Op op;
	const char *name;
	int kind; /* 0 sum/min/max, 1 product, 2 bitwise */
};

static const int rcounts[] = {0, 1, 7, 1000, 70000};
#define NRC (int)(sizeof(rcounts) / sizeof(rcounts[0]))

/* Whether MPI defines op on d (else the case is not run at all). */
static int defined(const struct dtype *d, const struct rop *o)
{
	if (d->kind == OPAQUE)
		return o->kind == 2;
	return !(d->kind == FLOATING && o->kind == 2);
}

enum red { RED, ALLRED, REDSCAT };
static const char *const red_name[] = {"MPI_Reduce", "MPI_Allreduce",
				       "MPI_Reduce_scatter_block"};

static void one_reduction(const struct comm *k, enum red which,
			  const struct dtype *d, MPI_Op op, int kind,
			  const char *opname, int count, int root, int in_place,
			  int ours)
{
	size_t blk = (size_t)count * (size_t)d->size;
	size_t in = which == REDSCAT ? blk * (size_t)k->size : blk;
	size_t out = which == REDSCAT && in_place ? in : blk;
	struct buf s, s0, r1, r2;
	int me = which != RED || k->rank == root;
	int ip = in_place && me;

	/* MPICH's own crash (below): not called where MPICH takes it (the
	 * library off, or the communicator below its minimum size) */
	if (mpich && (!lib_on || k->size < min_size) && which == RED && in_place && root != 0 &&
	    blk > 2048)
		return;

	buf_alloc(&s, in);
	for (size_t i = 0; i < in / (size_t)d->size; i++)
		put(d, payload(&s), (long)i, k->rank, kind, count);
	buf_copy(&s0, &s);
	buf_alloc(&r1, out);
	if (ip)
		memcpy(payload(&r1), payload(&s), in);
	buf_copy(&r2, &r1);
	snprintf(cur, sizeof(cur), "%s %s x %d root %d%s", opname, d->name,
		 count, root, ip ? " in place" : "");
	before(red_name[which]);
	switch (which) {
	case RED:
		MPI_Reduce(ip ? MPI_IN_PLACE : payload(&s), payload(&r1), count,
			   d->t, op, root, k->c);
		break;
	case ALLRED:
		MPI_Allreduce(ip ? MPI_IN_PLACE : payload(&s), payload(&r1),
			      count, d->t, op, k->c);
		break;
	case REDSCAT:
		MPI_Reduce_scatter_block(ip ? MPI_IN_PLACE : payload(&s),
					 payload(&r1), count, d->t, op, k->c);
	}
	after(red_name[which], ours, k->name);
	check(buf_same(&s, &s0), "%s %s %s x %d on %s: the send buffer changed",
	      red_name[which], opname, d->name, count, k->name);
	/* MPI's result, always from a separate send buffer: MPICH 4.0's
	 * MPI_Reduce crashes in place at a root other than 0 above 2048
	 * bytes up (ch4:ucx, Debian 12), and the reference must not */
	switch (which) {
	case RED:
		PMPI_Reduce(payload(&s0), payload(&r2), count, d->t, op, root,
			    k->c);
		break;
	case ALLRED:
		PMPI_Allreduce(payload(&s0), payload(&r2), count, d->t, op,
			       k->c);
		break;
	case REDSCAT:
		PMPI_Reduce_scatter_block(payload(&s0), payload(&r2), count,
					  d->t, op, k->c);
	}
	/* in place, the rest of MPI_Reduce_scatter_block's buffer is left
	 * as it was (the input) */
	if (ip && out > blk)
		memcpy((unsigned char *)payload(&r2) + blk,
		       (unsigned char *)payload(&s0) + blk, out - blk);
	check(buf_same(&r1, &r2), "%s %s %s x %d root %d on %s%s",
	      red_name[which], opname, d->name, count, root, k->name,
	      ip ? " in place" : "");
	buf_free(&s);
	buf_free(&s0);
	buf_free(&r1);
	buf_free(&r2);
}

static void user_sum(void *in, void *inout, int *len, MPI_Datatype *t)
{
	(void)t;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

static void test_reductions(const struct comm *k)
{
	static const struct rop rops[] = {
	    {MPI_SUM, "MPI_SUM", 0},   {MPI_PROD, "MPI_PROD", 1},
	    {MPI_MIN, "MPI_MIN", 0},   {MPI_MAX, "MPI_MAX", 0},
	    {MPI_BAND, "MPI_BAND", 2}, {MPI_BOR, "MPI_BOR", 2},
	    {MPI_BXOR, "MPI_BXOR", 2},
	};
	MPI_Op user;

	for (int which = RED; which <= REDSCAT; which++)
		for (int ti = 0; ti < nrtypes; ti++)
			for (size_t oi = 0; oi < sizeof(rops) / sizeof(rops[0]);
			     oi++)
				for (int ci = 0; ci < NRC; ci++)
					for (int ip = 0; ip < 2; ip++) {
						const struct dtype *d =
						    &rtypes[ti];
						int nroots =
						    which == RED ? k->size : 1;

						if (!defined(d, &rops[oi]))
							continue;
						/* the largest count: int32
						 * and double sums only */
						if (ci == NRC - 1 &&
						    !(oi == 0 &&
						      (d->t == MPI_INT32_T ||
						       d->t == MPI_DOUBLE)))
							continue;
						for (int root = 0;
						     root < nroots; root++) {
							if (!chosen())
								continue;
							one_reduction(
							    k, (enum red)which,
							    d, rops[oi].op,
							    rops[oi].kind,
							    rops[oi].name,
							    rcounts[ci], root,
							    ip, 1);
						}
					}
	/* what the library hands to MPI: logical and user-defined
	 * operators, MINLOC/MAXLOC */
	MPI_Op_create(user_sum, 1, &user);
	for (int which = RED; which <= REDSCAT; which++) {
		const struct dtype *i32 = &rtypes[12]; /* MPI_INT */
		struct dtype two = {MPI_2INT, "MPI_2INT", SIGNED, 8, 1};

		one_reduction(k, (enum red)which, i32, MPI_LAND, 1, "MPI_LAND",
			      7, 0, 0, 0);
		one_reduction(k, (enum red)which, i32, user, 0, "user sum", 7,
			      k->size - 1, 0, 0);
		one_reduction(k, (enum red)which, &two, MPI_MAXLOC, 1,
			      "MPI_MAXLOC", 5, 0, 1, 0);
	}
	MPI_Op_free(&user);
}

static void test_copies(const struct comm *k)
{
	for (int ti = 0; ti < nctypes; ti++)
		for (int ci = 0; ci < NCC; ci++) {
			const struct dtype *d = &ctypes[ti];
			int count = ccounts[ci];

			/* the largest count: bytes and the strided type */
			if (ci == NCC - 1 && ti != 0 && ti != nctypes - 1)
				continue;
			test_bcast(k, d, count, ti);
			for (int ip = 0; ip < 2; ip++) {
				test_scatter(k, d, count, ti, ip);
				test_gather(k, d, count, ti, ip);
				test_allgather(k, d, count, ti, ip);
				/* alltoall moves size^2 blocks: not the
				 * largest */
				if (ci < NCC - 1)
					test_alltoall(k, d, count, ti, ip);
			}
		}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A barrier's guarantee: no process leaves before every process entered.
 * The last process of the communicator enters 5 ms late; every process
 * notes when it entered and left (one host: one clock), and no leave may
 * come before the latest entry. */
static void test_barrier(const struct comm *k, int late)
{
	double t[2], *all = malloc(sizeof(double) * 2 * (size_t)k->size);
	double last_in = 0, first_out = 1e300;

	if (late >= 0 && k->rank == late) {
		struct timespec ts = {0, 5000000};

		nanosleep(&ts, NULL);
	}
	before("MPI_Barrier");
	t[0] = now();
	MPI_Barrier(k->c);
	t[1] = now();
	after("MPI_Barrier", 1, k->name);
	PMPI_Allgather(t, 2, MPI_DOUBLE, all, 2, MPI_DOUBLE, k->c);
	for (int i = 0; i < k->size; i++) {
		if (all[2 * i] > last_in)
			last_in = all[2 * i];
		if (all[2 * i + 1] < first_out)
			first_out = all[2 * i + 1];
	}
	check(first_out >= last_in,
	      "MPI_Barrier on %s: a process left %.6f s before the last "
	      "entered",
	      k->name, last_in - first_out);
	free(all);
}

/* The nonblocking and persistent forms: MPI's own, through the library
 * (which counts them), against the blocking PMPI_ forms. */
static void later_check(const char *name, MPI_Request *req, const int *got,
			const int *want, int n, const struct comm *k)
{
	int same = 1;

	MPI_Wait(req, MPI_STATUS_IGNORE);
	if (*req != MPI_REQUEST_NULL)
		MPI_Request_free(req);
	after(name, 0, "a nonblocking or persistent form");
	for (int i = 0; i < n; i++)
		same &= got[i] == want[i];
	check(same, "%s on %s: results differ from the blocking form", name,
	      k->name);
}

static void test_later(const struct comm *k)
{
	int n = k->size, root = n - 1, me = k->rank;
	int *in = malloc((size_t)(2 * n + 2) * sizeof(int)),
	    *got = calloc((size_t)(2 * n + 2), sizeof(int)),
	    *want = calloc((size_t)(2 * n + 2), sizeof(int));
	MPI_Request req;
	MPI_Comm c = k->c;

	snprintf(cur, sizeof(cur), "%s", k->name);
	for (int i = 0; i < 2 * n + 2; i++)
		in[i] = 1000 * me + i + 1;
	for (int persistent = 0; persistent <= PERSISTENT; persistent++) {
		const char *nm;
#define LATER(nb, pname, icall, pcall, wantcall, len)                          \
	do {                                                                   \
		nm = persistent ? pname : nb;                                  \
		memset(got, 0, (size_t)(2 * n + 2) * sizeof(int));             \
		memset(want, 0, (size_t)(2 * n + 2) * sizeof(int));            \
		wantcall;                                                      \
		before(nm);                                                    \
		if (persistent) {                                              \
			pcall;                                                 \
			MPI_Start(&req);                                       \
		} else {                                                       \
			icall;                                                 \
		}                                                              \
		later_check(nm, &req, got, want, len, k);                      \
	} while (0)
#if PERSISTENT
#define P(x) x
#else
#define P(x) (void)0
#define PNAME(x) NULL
#endif
		LATER("MPI_Ibcast", PNAME("Bcast"),
		      (memcpy(got, in, 2 * sizeof(int)),
		       MPI_Ibcast(got, 2, MPI_INT, root, c, &req)),
		      (memcpy(got, in, 2 * sizeof(int)),
		       P(PFN(Bcast)(got, 2, MPI_INT, root, c, MPI_INFO_NULL,
				    &req))),
		      (memcpy(want, in, 2 * sizeof(int)),
		       PMPI_Bcast(want, 2, MPI_INT, root, c)),
		      2);
		LATER("MPI_Iscatter", PNAME("Scatter"),
		      MPI_Iscatter(in, 1, MPI_INT, got, 1, MPI_INT, root, c,
				   &req),
		      P(PFN(Scatter)(in, 1, MPI_INT, got, 1, MPI_INT, root, c,
				     MPI_INFO_NULL, &req)),
		      PMPI_Scatter(in, 1, MPI_INT, want, 1, MPI_INT, root, c),
		      1);
		LATER("MPI_Igather", PNAME("Gather"),
		      MPI_Igather(in, 1, MPI_INT, got, 1, MPI_INT, 0, c, &req),
		      P(PFN(Gather)(in, 1, MPI_INT, got, 1, MPI_INT, 0, c,
				    MPI_INFO_NULL, &req)),
		      PMPI_Gather(in, 1, MPI_INT, want, 1, MPI_INT, 0, c), n);
		LATER("MPI_Ireduce", PNAME("Reduce"),
		      MPI_Ireduce(in, got, 2, MPI_INT, MPI_SUM, root, c, &req),
		      P(PFN(Reduce)(in, got, 2, MPI_INT, MPI_SUM, root, c,
				    MPI_INFO_NULL, &req)),
		      PMPI_Reduce(in, want, 2, MPI_INT, MPI_SUM, root, c), 2);
		LATER("MPI_Iallreduce", PNAME("Allreduce"),
		      MPI_Iallreduce(in, got, 2, MPI_INT, MPI_MAX, c, &req),
		      P(PFN(Allreduce)(in, got, 2, MPI_INT, MPI_MAX, c,
				       MPI_INFO_NULL, &req)),
		      PMPI_Allreduce(in, want, 2, MPI_INT, MPI_MAX, c), 2);
		LATER("MPI_Iallgather", PNAME("Allgather"),
		      MPI_Iallgather(in, 2, MPI_INT, got, 2, MPI_INT, c, &req),
		      P(PFN(Allgather)(in, 2, MPI_INT, got, 2, MPI_INT, c,
				       MPI_INFO_NULL, &req)),
		      PMPI_Allgather(in, 2, MPI_INT, want, 2, MPI_INT, c),
		      2 * n);
		LATER("MPI_Ireduce_scatter_block", PNAME("Reduce_scatter_block"),
		      MPI_Ireduce_scatter_block(in, got, 2, MPI_INT, MPI_SUM, c,
						&req),
		      P(PFN(Reduce_scatter_block)(in, got, 2, MPI_INT, MPI_SUM,
						  c, MPI_INFO_NULL, &req)),
		      PMPI_Reduce_scatter_block(in, want, 2, MPI_INT, MPI_SUM,
						c),
		      2);
		LATER("MPI_Ialltoall", PNAME("Alltoall"),
		      MPI_Ialltoall(in, 2, MPI_INT, got, 2, MPI_INT, c, &req),
		      P(PFN(Alltoall)(in, 2, MPI_INT, got, 2, MPI_INT, c,
				      MPI_INFO_NULL, &req)),
		      PMPI_Alltoall(in, 2, MPI_INT, want, 2, MPI_INT, c), 2 * n);
		LATER("MPI_Ibarrier", PNAME("Barrier"),
		      MPI_Ibarrier(c, &req),
		      P(PFN(Barrier)(c, MPI_INFO_NULL, &req)), (void)0, 0);
#undef LATER
#undef P
	}
	free(in);
	free(got);
	free(want);
}

/* VmData of this process, in bytes (-1: unknown). */
static long long vm_data(void)
{
	FILE *f = fopen("/proc/self/status", "r");
	char line[256];
	long long kb = -1;

	while (f != NULL && fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmData: %lld kB", &kb) == 1)
			break;
	if (f != NULL)
		fclose(f);
	return kb < 0 ? -1 : kb * 1024;
}

/* The memory check counts this process's buffers, not every member's. */
static void test_memory(void)
{
	const size_t B = 2u << 20;
	size_t n = (size_t)wsize, own = 2 * n * B, all = 2 * n * n * B;
	unsigned char *in = malloc(n * B), *out = malloc(n * B),
		      *ref = malloc(n * B);
	struct rlimit old, tight;
	long long data;
	int ok = 0, set = 0, lower = 0, skip = 0;

	if (wsize < 2 || wsize < min_size || !lib_on || expect_off ||
	    in == NULL || out == NULL || ref == NULL) {
		free(in);
		free(out);
		free(ref);
		return;
	}
	bytes(in, n * B, wrank, 7);
	memset(out, 0, n * B);
	memset(ref, 1, n * B);
	snprintf(cur, sizeof(cur), "%zu MiB blocks, RLIMIT_DATA tight",
		 B >> 20);
	data = vm_data();
	/* room for this process's buffers and a margin, not for every
	 * member's */
	if (data > 0 && getrlimit(RLIMIT_DATA, &old) == 0) {
		tight = old;
		tight.rlim_cur = (rlim_t)data + (own + all) / 2 + (1u << 20);
		if (old.rlim_cur == RLIM_INFINITY || tight.rlim_cur < old.rlim_cur)
			set = setrlimit(RLIMIT_DATA, &tight) == 0;
		else
			lower = 1;
	}
	/* a job already held below that limit cannot run the case: said,
	 * not failed */
	PMPI_Allreduce(&lower, &skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (skip) {
		if (set)
			setrlimit(RLIMIT_DATA, &old);
		if (wrank == 0)
			printf("test_collc_mpi: skipped MPI_Alltoall (%s): the "
			       "job's RLIMIT_DATA is lower already\n",
			       cur);
		free(in);
		free(out);
		free(ref);
		return;
	}
	PMPI_Allreduce(&set, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!ok) {
		if (set)
			setrlimit(RLIMIT_DATA, &old);
		check(0, "MPI_Alltoall (%s): RLIMIT_DATA could not be set", cur);
		free(in);
		free(out);
		free(ref);
		return;
	}
	before("MPI_Alltoall");
	MPI_Alltoall(in, (int)B, MPI_BYTE, out, (int)B, MPI_BYTE,
		     MPI_COMM_WORLD);
	after("MPI_Alltoall", 1, "buffers of every member over the limit");
	setrlimit(RLIMIT_DATA, &old);
	PMPI_Alltoall(in, (int)B, MPI_BYTE, ref, (int)B, MPI_BYTE,
		      MPI_COMM_WORLD);
	check(memcmp(out, ref, n * B) == 0,
	      "MPI_Alltoall (%s): results differ from MPI's", cur);
	free(in);
	free(out);
	free(ref);
}

/* An intercommunicator: the library hands its collectives to MPI. */
static void test_inter(void)
{
	MPI_Comm half, inter;
	int low = wrank < wsize / 2, in = 0, a = 0, b = 0;

	if (wsize < 2)
		return;
	MPI_Comm_split(MPI_COMM_WORLD, low, wrank, &half);
	MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, low ? wsize / 2 : 0, 5,
			     &inter);
	in = wrank + 1;
	before("MPI_Allreduce");
	MPI_Allreduce(&in, &a, 1, MPI_INT, MPI_SUM, inter);
	after("MPI_Allreduce", 0, "an intercommunicator");
	PMPI_Allreduce(&in, &b, 1, MPI_INT, MPI_SUM, inter);
	check(a == b, "MPI_Allreduce on an intercommunicator: %d, not %d", a,
	      b);
	before("MPI_Barrier");
	MPI_Barrier(inter);
	after("MPI_Barrier", 0, "an intercommunicator");
	MPI_Comm_free(&inter);
	MPI_Comm_free(&half);
}

int main(int argc, char **argv)
{
	long long tot[2], mine[2];
	const char *q = getenv("CHECK_QUICK");

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	quick = q != NULL ? atoi(q) : 0;
	if (quick == 1)
		quick = 4;
	expect_off = getenv("EXPECT_OFF") != NULL;
	if (getenv("COLLC_MPI_MIN_SIZE") != NULL &&
	    *getenv("COLLC_MPI_MIN_SIZE") != '\0')
		min_size = atoi(getenv("COLLC_MPI_MIN_SIZE"));
	*(void **)&counts_fn = dlsym(RTLD_DEFAULT, "collc_mpi_counts");
	if (counts_fn != NULL)
		lib_on = counts_fn(NULL, NULL, NULL) == 1;
	if (getenv("EXPECT_LIB") != NULL)
		check(counts_fn != NULL && (lib_on || expect_off),
		      "libcollc-mpi.so was to be loaded%s",
		      expect_off ? "" : " and on");
	{
		char v[MPI_MAX_LIBRARY_VERSION_STRING];
		int len = 0;

		MPI_Get_library_version(v, &len);
		mpich = strstr(v, "MPICH") != NULL;
	}
	make_types();
	make_comms();
	for (int i = 0; i < ncomms; i++) {
		/* the same choices on every member of the communicator */
		combo = (unsigned long long)i * 1000003u;
		members = comms[i].size;
		test_barrier(&comms[i], comms[i].size - 1);
		test_copies(&comms[i]);
		test_reductions(&comms[i]);
		test_later(&comms[i]);
		test_barrier(&comms[i], 0);
	}
	members = wsize;
	test_inter();
	test_memory();
	for (int i = 1; i < ncomms - 1; i++)
		MPI_Comm_free(&comms[i].c);
	MPI_Type_free(&ctypes[nctypes - 2].t);
	MPI_Type_free(&ctypes[nctypes - 1].t);
	mine[0] = pass;
	mine[1] = fail;
	PMPI_Reduce(mine, tot, 2, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	if (wrank == 0)
		printf("test_collc_mpi (np %d, %s): %lld passed, %lld failed\n",
		       wsize,
		       counts_fn == NULL ? "MPI alone"
		       : lib_on		 ? "libcollc-mpi"
					 : "libcollc-mpi off",
		       tot[0], tot[1]);
	MPI_Finalize();
	return wrank == 0 && tot[1] > 0 ? 1 : 0;
}
