/*
 * collc_mpi.c - libcollc-mpi.so's wrapped calls (libcollc-mpi(7)): an
 * unmodified MPI program's collectives over collc's trees and algorithms.
 *
 * Every wrapper is made from one list (wrapped.h).  Each of the nine
 * blocking collectives is one call of the driver with its arguments
 * (struct call); the driver checks them, hands what it does
 * not run to the MPI library through its PMPI_ entry (mpi_call), and runs
 * the rest over the communicator's plan (pmpi_state.c) with the engine
 * (engine.c): SEND, RECV and WORK of the process's member are the
 * caller's send and receive buffers where they are contiguous, in group
 * order and not aliased, else scratch copied in and out.
 *
 * Every decision to hand a call over rests only on arguments MPI requires
 * every process to pass alike (the operator and datatype of a reduction,
 * the communicator, the byte counts), so that all processes of a
 * collective take the same way; a non-contiguous datatype of a
 * collective that only moves bytes is packed rather than handed over, as
 * another process may pass a contiguous type of the same signature.  The
 * nonblocking and persistent forms are the MPI library's, wrapped only to
 * be counted.
 */
#define TOPO_INTERNAL
#include "pmpi.h"
#include "wrapped.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A collective's arguments: the send side (sbuf, scount, stype), the
 * receive side (rbuf, rcount, rtype), the operator and the root where
 * the operation has them.  A reduction's count and datatype are the
 * receive side's (both sides pass the same). */
struct call {
	enum topo_op op;
	MPI_Comm comm;
	const void *sbuf;
	int scount;
	MPI_Datatype stype;
	void *rbuf;
	int rcount;
	MPI_Datatype rtype;
	MPI_Op mop;
	int root;
	/* found by check() */
	int rank, n;
	int64_t B; /* bytes per member, or per block */
};

/* The MPI library's own. */
static int mpi_call(const struct call *c)
{
#define HAND(OP, N, n, E, R, P, A, C, ...)                                        \
	case TOPO_OP_##OP:                                                     \
		return PMPI_##N C;
	switch (c->op) {
		TOPO_MPI_WRAPPED(HAND)
	default:
		return MPI_ERR_INTERN;
	}
#undef HAND
}

/* Whether an operation has a root. */
static bool rooted_op(enum topo_op op)
{
#define ROOTED(OP, N, n, E, R, ...) [TOPO_OP_##OP] = R,
	static const bool r[TOPO_OP_COUNT] = {TOPO_MPI_WRAPPED(ROOTED)};
#undef ROOTED

	return r[op];
}

/* ---------------------------------------------------------------------- */
/* Datatypes and operators */

/* Whether count elements of t are one run of bytes: then they start at
 * buf + *lb.  Sets *size to the bytes of one element. */
static bool contiguous(MPI_Datatype t, MPI_Aint *lb, int *size)
{
	/* The predefined elementary types are one run from 0, and never
	 * freed: known without asking (three calls into the MPI library
	 * otherwise, on every call). */
	static const MPI_Datatype elementary[] = {
	    MPI_BYTE,	       MPI_CHAR,	   MPI_SIGNED_CHAR,
	    MPI_UNSIGNED_CHAR, MPI_SHORT,	   MPI_UNSIGNED_SHORT,
	    MPI_INT,	       MPI_UNSIGNED,	   MPI_LONG,
	    MPI_UNSIGNED_LONG, MPI_LONG_LONG,	   MPI_UNSIGNED_LONG_LONG,
	    MPI_FLOAT,	       MPI_DOUBLE,	   MPI_INT8_T,
	    MPI_INT16_T,       MPI_INT32_T,	   MPI_INT64_T,
	    MPI_UINT8_T,       MPI_UINT16_T,	   MPI_UINT32_T,
	    MPI_UINT64_T,      MPI_AINT,	   MPI_OFFSET,
	    MPI_COUNT};
	MPI_Aint tlb = 0, text = 0, elb = 0, ext = 0;

	*size = 0;
	*lb = 0;
	for (size_t i = 0; i < sizeof(elementary) / sizeof(elementary[0]); i++)
		if (t == elementary[i])
			return PMPI_Type_size(t, size) == MPI_SUCCESS;
	if (PMPI_Type_size(t, size) != MPI_SUCCESS ||
	    PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS ||
	    PMPI_Type_get_extent(t, &elb, &ext) != MPI_SUCCESS)
		return false;
	*lb = tlb;
	return text == *size && ext == *size;
}

/* The libtopo integer type of a C type of n bytes (a constant). */
#define SIZED(is_signed, n)                                                    \
	((n) == 1   ? ((is_signed) ? TOPO_INT8 : TOPO_UINT8)                   \
	 : (n) == 2 ? ((is_signed) ? TOPO_INT16 : TOPO_UINT16)                 \
	 : (n) == 4 ? ((is_signed) ? TOPO_INT32 : TOPO_UINT32)                 \
		    : ((is_signed) ? TOPO_INT64 : TOPO_UINT64))

/* A reduction's datatype and operator in libtopo's terms, or why not. */
static enum reason reduction(MPI_Datatype t, MPI_Op o, enum topo_type *type,
			     enum topo_redop *redop)
{
	/* static: built once, not on every call */
	static const struct {
		MPI_Datatype t;
		enum topo_type v;
	} types[] = {
	    {MPI_SIGNED_CHAR, TOPO_INT8},
	    {MPI_INT8_T, TOPO_INT8},
	    {MPI_SHORT, SIZED(1, sizeof(short))},
	    {MPI_INT16_T, TOPO_INT16},
	    {MPI_INT, SIZED(1, sizeof(int))},
	    {MPI_INT32_T, TOPO_INT32},
	    {MPI_LONG, SIZED(1, sizeof(long))},
	    {MPI_LONG_LONG, SIZED(1, sizeof(long long))},
	    {MPI_LONG_LONG_INT, SIZED(1, sizeof(long long))},
	    {MPI_INT64_T, TOPO_INT64},
	    {MPI_AINT, SIZED(1, sizeof(MPI_Aint))},
	    {MPI_OFFSET, SIZED(1, sizeof(MPI_Offset))},
	    {MPI_COUNT, SIZED(1, sizeof(MPI_Count))},
	    {MPI_UNSIGNED_CHAR, TOPO_UINT8},
	    {MPI_UINT8_T, TOPO_UINT8},
	    {MPI_BYTE, TOPO_UINT8},
	    {MPI_UNSIGNED_SHORT, SIZED(0, sizeof(unsigned short))},
	    {MPI_UINT16_T, TOPO_UINT16},
	    {MPI_UNSIGNED, SIZED(0, sizeof(unsigned))},
	    {MPI_UINT32_T, TOPO_UINT32},
	    {MPI_UNSIGNED_LONG, SIZED(0, sizeof(unsigned long))},
	    {MPI_UNSIGNED_LONG_LONG, SIZED(0, sizeof(unsigned long long))},
	    {MPI_UINT64_T, TOPO_UINT64},
	    {MPI_FLOAT, TOPO_FLOAT},
	    {MPI_DOUBLE, TOPO_DOUBLE},
	};
	static const struct {
		MPI_Op o;
		enum topo_redop v;
	} ops[] = {
	    {MPI_SUM, TOPO_SUM},   {MPI_PROD, TOPO_PROD}, {MPI_MIN, TOPO_MIN},
	    {MPI_MAX, TOPO_MAX},   {MPI_BAND, TOPO_BAND}, {MPI_BOR, TOPO_BOR},
	    {MPI_BXOR, TOPO_BXOR},
	};
	size_t i, j;
	bool bitwise;

	for (j = 0; j < sizeof(ops) / sizeof(ops[0]) && ops[j].o != o; j++)
		;
	if (j == sizeof(ops) / sizeof(ops[0]))
		return o == MPI_MINLOC || o == MPI_MAXLOC ? R_LOC : R_OP;
	for (i = 0; i < sizeof(types) / sizeof(types[0]) && types[i].t != t;
	     i++)
		;
	if (i == sizeof(types) / sizeof(types[0]))
		return R_TYPE;
	bitwise = ops[j].v == TOPO_BAND || ops[j].v == TOPO_BOR ||
		  ops[j].v == TOPO_BXOR;
	if (bitwise && (types[i].v == TOPO_FLOAT || types[i].v == TOPO_DOUBLE))
		return R_TYPEOP;
	/* MPI_BYTE takes the bitwise operators only */
	if (t == MPI_BYTE && !bitwise)
		return R_ARGS;
	*type = types[i].v;
	*redop = ops[j].v;
	return R_COUNT;
}

/* The last communicator this thread called a collective on: its size
 * and whether it is an intercommunicator, valid while no communicator
 * this process's threads remember was freed since.  A handle freed and
 * made again may name another communicator, and a stale answer would
 * send this process one way and the others another: every communicator
 * remembered carries an attribute (G.seen) whose deletion, on whatever
 * path the communicator is freed (C, Fortran, MPI_Comm_disconnect),
 * counts in G.freed before the handle can be used again. */
static TLS struct {
	MPI_Comm comm;
	int n, inter;
	int64_t freed;
} last_comm = {MPI_COMM_NULL, 0, 0, -1};

int topo__pmpi_forget(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	(void)comm;
	(void)keyval;
	(void)attr;
	(void)extra;
	__atomic_fetch_add(&G.freed, 1, __ATOMIC_RELEASE);
	return MPI_SUCCESS;
}

/* Remembers comm as this thread's last (freed: G.freed read before its
 * size was asked). */
static void remember(MPI_Comm comm, int n, int inter, int64_t freed)
{
	void *v = NULL;
	int flag = 0;

	if (PMPI_Comm_get_attr(comm, G.seen, &v, &flag) != MPI_SUCCESS)
		return;
	if (!flag && PMPI_Comm_set_attr(comm, G.seen, &G) != MPI_SUCCESS)
		return;
	last_comm.comm = comm;
	last_comm.n = n;
	last_comm.inter = inter;
	last_comm.freed = freed;
}

/* Whether comm can take collc's way at all (the reason when not); sets
 * c->n. */
static enum reason usable(struct call *c)
{
	int64_t freed = __atomic_load_n(&G.freed, __ATOMIC_ACQUIRE);
	int inter = 0;

	if (!G.on)
		return R_OFF;
	/* the size first: a small communicator's call goes to MPI at the
	 * cost of one query at most (an intercommunicator's local group
	 * counts), and none when it is the last one's */
	if (c->comm == MPI_COMM_WORLD) {
		c->n = G.world_size;
	} else if (c->comm == MPI_COMM_SELF) {
		c->n = 1;
	} else if (c->comm == MPI_COMM_NULL) {
		return R_ARGS;
	} else if (c->comm == last_comm.comm && freed == last_comm.freed) {
		c->n = last_comm.n;
		inter = last_comm.inter;
	} else {
		if (PMPI_Comm_size(c->comm, &c->n) != MPI_SUCCESS)
			return R_ARGS;
		if (c->n >= G.set.min_size &&
		    PMPI_Comm_test_inter(c->comm, &inter) != MPI_SUCCESS)
			return R_ARGS;
		remember(c->comm, c->n, inter, freed);
	}
	return c->n < G.set.min_size ? R_SMALL : inter ? R_INTER : R_COUNT;
}

/* The bytes of count elements of t (R_ARGS when MPI would refuse). */
static enum reason bytes_of(int count, MPI_Datatype t, int64_t *B)
{
	int size = 0;

	if (count < 0 || t == MPI_DATATYPE_NULL ||
	    PMPI_Type_size(t, &size) != MPI_SUCCESS)
		return R_ARGS;
	*B = (int64_t)count * size;
	return R_COUNT;
}

/* The checks of c's arguments, and its plan's key. */
static enum reason check(struct call *c, struct pkey *k)
{
	enum topo_type type = TOPO_INT8;
	enum topo_redop redop = TOPO_SUM;
	enum reason why = R_COUNT;
	int64_t blocks = 1;
	bool rooted = rooted_op(c->op);

	c->B = 0;
	if (c->op != TOPO_OP_BARRIER)
		PMPI_Comm_rank(c->comm, &c->rank);
	if (rooted && (c->root < 0 || c->root >= c->n))
		return R_ARGS;
	switch (c->op) {
	case TOPO_OP_BCAST:
	case TOPO_OP_ALLGATHER:
	case TOPO_OP_ALLTOALL:
		why = bytes_of(c->rcount, c->rtype, &c->B);
		blocks = c->op == TOPO_OP_BCAST ? 1 : c->n;
		break;
	case TOPO_OP_SCATTER:
	case TOPO_OP_GATHER: {
		/* the root passes the n blocks' side, every process its own
		 * block's (but the root in place) */
		bool scatter = c->op == TOPO_OP_SCATTER, root = c->rank == c->root;
		int nc = scatter ? c->scount : c->rcount;
		MPI_Datatype nt = scatter ? c->stype : c->rtype;
		int oc = scatter ? c->rcount : c->scount;
		MPI_Datatype ot = scatter ? c->rtype : c->stype;
		bool place = scatter ? c->rbuf == MPI_IN_PLACE
				     : c->sbuf == MPI_IN_PLACE;
		int64_t own = 0;

		if (root)
			why = bytes_of(nc, nt, &c->B);
		if (why == R_COUNT && !(root && place))
			why = bytes_of(oc, ot, &own);
		if (!root)
			c->B = own;
		blocks = c->n;
		break;
	}
	case TOPO_OP_REDUCE:
	case TOPO_OP_ALLREDUCE:
	case TOPO_OP_REDUCE_SCATTER:
		why = bytes_of(c->rcount, c->rtype, &c->B);
		if (why == R_COUNT)
			why = reduction(c->rtype, c->mop, &type, &redop);
		if (why == R_COUNT && c->op == TOPO_OP_REDUCE &&
		    c->sbuf == MPI_IN_PLACE && c->rank != c->root)
			why = R_ARGS;
		blocks = c->op == TOPO_OP_REDUCE_SCATTER ? c->n : 1;
		break;
	default:
		break;
	}
	if (why == R_COUNT && c->B * blocks > INT_MAX)
		why = R_LARGE;
	memset(k, 0, sizeof(*k));
	k->op = c->op;
	k->bytes = c->B;
	k->root = rooted ? c->root : -1;
	k->type = topo_op_reduces(c->op) ? (int)type : (int)TOPO_INT8;
	k->redop = topo_op_reduces(c->op) ? (int)redop : (int)TOPO_SUM;
	return why;
}

/* ---------------------------------------------------------------------- */
/* The user's bytes */

/* count elements of t at buf as one run of bytes: buf itself where they
 * are one run (and copy is false), else packed into scratch k. */
static unsigned char *bytes_in(struct cstate *s, int k, const void *buf,
			       int count, MPI_Datatype t, int64_t len,
			       bool copy)
{
	MPI_Aint lb;
	int size, pos = 0;
	unsigned char *d;

	if (contiguous(t, &lb, &size) && !copy)
		return (unsigned char *)buf + lb;
	d = topo__pmpi_scratch(s, k, len);
	if (d == NULL)
		return NULL;
	if (contiguous(t, &lb, &size))
		memcpy(d, (const unsigned char *)buf + lb, (size_t)len);
	else
		PMPI_Pack(buf, count, t, d, (int)len, &pos, s->user);
	return d;
}

/* Where a result of count elements of t for buf goes: buf itself where
 * they are one run of bytes, else scratch k (bytes_out moves it). */
static unsigned char *bytes_at(struct cstate *s, int k, void *buf,
			       MPI_Datatype t, int64_t len)
{
	MPI_Aint lb;
	int size;

	if (contiguous(t, &lb, &size))
		return (unsigned char *)buf + lb;
	return topo__pmpi_scratch(s, k, len);
}

static void bytes_out(struct cstate *s, const unsigned char *from, void *buf,
		      int count, MPI_Datatype t, int64_t len)
{
	MPI_Aint lb;
	int size, pos = 0;

	if (!contiguous(t, &lb, &size))
		PMPI_Unpack(from, (int)len, &pos, buf, count, t, s->user);
}

/* The communicator rank of group rank g. */
static int host_of(const struct cstate *s, int g)
{
	return s->L->host != NULL ? s->L->host[g] : g;
}

/* s->size blocks of count elements of t at buf (in communicator rank
 * order, block i at buf + i * count * extent) as one run of B-byte blocks
 * in group rank order: buf itself when it is that already (and copy is
 * false), else scratch k. */
static unsigned char *blocks_in(struct cstate *s, int k, const void *buf,
				int count, MPI_Datatype t, int64_t B, bool copy)
{
	MPI_Aint lb, elb, ext;
	int size;
	bool contig = contiguous(t, &lb, &size);
	unsigned char *d;

	if (contig && s->L->host == NULL && !copy)
		return (unsigned char *)buf + lb;
	d = topo__pmpi_scratch(s, k, B * s->size);
	if (d == NULL)
		return NULL;
	PMPI_Type_get_extent(t, &elb, &ext);
	for (int g = 0; g < s->size; g++) {
		const unsigned char *from = (const unsigned char *)buf +
					    (MPI_Aint)host_of(s, g) * count * ext;
		int pos = 0;

		if (contig)
			memcpy(d + g * B, from + lb, (size_t)B);
		else
			PMPI_Pack(from, count, t, d + g * B, (int)B, &pos,
				  s->user);
	}
	return d;
}

/* Where s->size blocks of a result go: buf itself when it takes them in
 * group order, else scratch k (blocks_out moves them). */
static unsigned char *blocks_at(struct cstate *s, int k, void *buf,
				MPI_Datatype t, int64_t B)
{
	MPI_Aint lb;
	int size;

	if (contiguous(t, &lb, &size) && s->L->host == NULL)
		return (unsigned char *)buf + lb;
	return topo__pmpi_scratch(s, k, B * s->size);
}

static void blocks_out(struct cstate *s, const unsigned char *from, void *buf,
		       int count, MPI_Datatype t, int64_t B)
{
	MPI_Aint lb, elb, ext;
	int size;
	bool contig = contiguous(t, &lb, &size);

	if (contig && s->L->host == NULL)
		return;
	PMPI_Type_get_extent(t, &elb, &ext);
	for (int g = 0; g < s->size; g++) {
		unsigned char *to = (unsigned char *)buf +
				    (MPI_Aint)host_of(s, g) * count * ext;
		int pos = 0;

		if (contig)
			memcpy(to + lb, from + g * B, (size_t)B);
		else
			PMPI_Unpack(from + g * B, (int)B, &pos, to, count, t,
				    s->user);
	}
}

static void no_memory(const void *a)
{
	if (a == NULL)
		topo__pmpi_fatal("scratch memory", NULL);
}

/* ---------------------------------------------------------------------- */
/* Running */

/* Runs plan e with this process's SEND and RECV at send and recv.
 * Returns MPI_SUCCESS or the MPI library's code of a failed call (the
 * communicator's error handler called). */
static int run(struct cstate *s, struct pentry *e, struct engine *g,
	       const unsigned char *send, unsigned char *recv)
{
	struct topo__mx *x = &g->x;
	const struct topo_plan *p = e->p;
	int32_t me = s->L->grank != NULL ? s->L->grank[s->rank] : s->rank;
	int64_t slen = topo__bufsize(p, TOPO__SEND, me),
		rlen = topo__bufsize(p, TOPO__RECV, me),
		wlen = topo__bufsize(p, TOPO__WORK, me);
	unsigned char *work = NULL;
	int rc;

	/* Buffers the operation does not give this process but the
	 * algorithm has: a send of zeros (a scatter "or-combine" member's
	 * contribution), a receive dropped. */
	if (send == NULL && slen > 0) {
		unsigned char *t = topo__pmpi_scratch(s, 3, slen);

		no_memory(t);
		memset(t, 0, (size_t)slen);
		send = t;
	}
	if (recv == NULL && rlen > 0)
		no_memory(recv = topo__pmpi_scratch(s, 4, rlen));
	if (e->writes_send && slen > 0) {
		/* never the caller's: a copy (scratch 3) */
		unsigned char *t = topo__pmpi_scratch(s, 3, slen);

		no_memory(t);
		memcpy(t, send, (size_t)slen);
		send = t;
	}
	if (wlen > 0)
		no_memory(work = topo__pmpi_scratch(s, 2, wlen));
	x->bp[TOPO__SEND] = (unsigned char *)send;
	x->bp[TOPO__RECV] = recv;
	x->bp[TOPO__WORK] = work;
	topo__mx_reset(x);
	rc = topo__mx_run(x, INFINITY);
	if (rc != 0) {
		topo__mx_abandon(x);
		topo__pmpi_done(s, e, g, true);
		if (x->mpi_rc != MPI_SUCCESS) {
			PMPI_Comm_call_errhandler(s->user, x->mpi_rc);
			return x->mpi_rc;
		}
		topo__pmpi_fatal("running a plan", NULL);
	}
	topo__pmpi_done(s, e, g, false);
	topo__pmpi_count(&G.ours[p->params.op]);
	return MPI_SUCCESS;
}

/* The nodes a communicator's members are on. */
static int32_t count_nodes(const struct cstate *s)
{
	return s->L->nruns;
}

/* What this process sends in a gather: sbuf, or in place its own block,
 * block `at` of rbuf. */
static const unsigned char *own_block_in(struct cstate *s,
					 const struct call *c, bool place,
					 int at)
{
	MPI_Aint elb, ext;

	if (!place)
		return bytes_in(s, 0, c->sbuf, c->scount, c->stype, c->B,
				false);
	PMPI_Type_get_extent(c->rtype, &elb, &ext);
	return bytes_in(s, 0,
			(unsigned char *)c->rbuf +
			    (MPI_Aint)at * c->rcount * ext,
			c->rcount, c->rtype, c->B, true);
}

/* Runs e into scratch, one block per member, and on success puts the
 * blocks where c's rbuf wants them. */
static int run_to_blocks(const struct call *c, struct cstate *s,
			 struct pentry *e, struct engine *g,
			 const unsigned char *send)
{
	unsigned char *recv;
	int rc;

	no_memory(recv = blocks_at(s, 1, c->rbuf, c->rtype, c->B));
	rc = run(s, e, g, send, recv);
	if (rc == MPI_SUCCESS)
		blocks_out(s, recv, c->rbuf, c->rcount, c->rtype, c->B);
	return rc;
}

/* The buffers of c's operation, the run, and the results back where the
 * caller wants them. */
static int exchange(const struct call *c, struct cstate *s, struct pentry *e,
		    struct engine *g)
{
	const unsigned char *send = NULL;
	unsigned char *recv = NULL;
	bool root = c->rank == c->root;
	int64_t B = c->B;
	int rc;

	switch (c->op) {
	case TOPO_OP_BCAST:
		recv = root ? bytes_in(s, 0, c->rbuf, c->rcount, c->rtype, B,
				       false)
			    : bytes_at(s, 1, c->rbuf, c->rtype, B);
		no_memory(recv);
		rc = run(s, e, g, recv, recv);
		if (rc == MPI_SUCCESS && !root)
			bytes_out(s, recv, c->rbuf, c->rcount, c->rtype, B);
		return rc;
	case TOPO_OP_SCATTER: {
		bool place = root && c->rbuf == MPI_IN_PLACE;

		if (root)
			no_memory(send = blocks_in(s, 0, c->sbuf, c->scount,
						   c->stype, B, false));
		/* in place, the root's block stays where it is: received
		 * into scratch and dropped */
		recv = place ? topo__pmpi_scratch(s, 1, B)
			     : bytes_at(s, 1, c->rbuf, c->rtype, B);
		no_memory(recv);
		rc = run(s, e, g, send, recv);
		if (rc == MPI_SUCCESS && !place)
			bytes_out(s, recv, c->rbuf, c->rcount, c->rtype, B);
		return rc;
	}
	case TOPO_OP_GATHER:
		/* in place, the root's own block is at its place in rbuf */
		send = own_block_in(s, c, root && c->sbuf == MPI_IN_PLACE,
				    c->root);
		no_memory(send);
		return root ? run_to_blocks(c, s, e, g, send)
			    : run(s, e, g, send, NULL);
	case TOPO_OP_REDUCE:
	case TOPO_OP_ALLREDUCE:
		/* in place: the input is copied out of rbuf first */
		send = c->sbuf == MPI_IN_PLACE
			   ? bytes_in(s, 0, c->rbuf, c->rcount, c->rtype, B, true)
			   : bytes_in(s, 0, c->sbuf, c->rcount, c->rtype, B,
				      false);
		no_memory(send);
		return run(s, e, g, send,
			   c->op == TOPO_OP_ALLREDUCE || root ? c->rbuf : NULL);
	case TOPO_OP_REDUCE_SCATTER:
		/* in place, the n blocks are in rbuf, whose first block
		 * takes the result */
		send = c->sbuf == MPI_IN_PLACE
			   ? blocks_in(s, 0, c->rbuf, c->rcount, c->rtype, B,
				       true)
			   : blocks_in(s, 0, c->sbuf, c->rcount, c->rtype, B,
				       false);
		no_memory(send);
		return run(s, e, g, send, c->rbuf);
	case TOPO_OP_ALLGATHER:
		send = own_block_in(s, c, c->sbuf == MPI_IN_PLACE, c->rank);
		no_memory(send);
		return run_to_blocks(c, s, e, g, send);
	case TOPO_OP_ALLTOALL:
		/* in place, the blocks to send are in rbuf: copied out
		 * first */
		send = c->sbuf == MPI_IN_PLACE
			   ? blocks_in(s, 0, c->rbuf, c->rcount, c->rtype, B,
				       true)
			   : blocks_in(s, 0, c->sbuf, c->scount, c->stype, B,
				       false);
		no_memory(send);
		return run_to_blocks(c, s, e, g, send);
	default:
		return run(s, e, g, NULL, NULL);
	}
}

/* Whether a call on comm goes straight to the MPI library, a
 * communicator below COLLC_MPI_MIN_SIZE that this thread called last
 * (the default hands those of 2 over): counted, and no more asked. */
static inline bool small_again(MPI_Comm comm, enum topo_op op)
{
	if (comm == MPI_COMM_WORLD || comm != last_comm.comm ||
	    last_comm.n >= G.set.min_size || !G.on ||
	    last_comm.freed != __atomic_load_n(&G.freed, __ATOMIC_ACQUIRE))
		return false;
	topo__pmpi_hand_over(op, R_SMALL);
	return true;
}

/* Hands c to the MPI library, counted (and said) under why. */
static int hand(const struct call *c, enum reason why)
{
	topo__pmpi_hand_over(c->op, why);
	return mpi_call(c);
}

/* Every wrapped collective: collc's way, or the MPI library's. */
static int drive(struct call *c)
{
	enum reason why = usable(c);
	struct cstate *s;
	struct pentry *e;
	struct engine *g;
	struct pkey k;

	if (why == R_COUNT)
		why = check(c, &k);
	if (why != R_COUNT)
		return hand(c, why);
	if (c->B == 0 && c->op != TOPO_OP_BARRIER) {
		/* nothing to move: done */
		topo__pmpi_count(&G.ours[c->op]);
		return MPI_SUCCESS;
	}
	s = topo__pmpi_state(c->comm);
	e = topo__pmpi_plan(s, c->comm, &k, &g, &why);
	if (e == NULL && why == R_ARGS) {
		/* the processes disagree on the arguments: every process
		 * knows it, and fails the call alike */
		topo__pmpi_count(&G.theirs[c->op]);
		PMPI_Comm_call_errhandler(c->comm, MPI_ERR_ARG);
		return MPI_ERR_ARG;
	}
	if (e == NULL)
		return hand(c, why);
	if (G.set.report && s->rank == 0 && !(s->reported >> c->op & 1u)) {
		s->reported |= 1u << c->op;
		topo__pmpi_say("%s on a communicator of %d process%s (%d "
			       "node%s): tree %s, algorithm %s",
			       topo__pmpi_mpi_name[c->op], s->size,
			       s->size == 1 ? "" : "es", (int)count_nodes(s),
			       count_nodes(s) == 1 ? "" : "s",
			       G.set.tree[c->op], topo_plan_algorithm(e->p));
	}
	return exchange(c, s, e, g);
}

/* ---------------------------------------------------------------------- */
/* The collectives, one wrapper each from wrapped.h: a call on a small
 * communicator this thread used last goes straight to the MPI library,
 * every other to the driver. */

#define BLOCKING(OP, N, n, E, R, P, A, C, ...)                                    \
	API int MPI_##N P                                                      \
	{                                                                      \
		if (small_again(comm, TOPO_OP_##OP))                           \
			return PMPI_##N A;                                     \
		{                                                              \
			struct call c = {.op = TOPO_OP_##OP, .comm = comm,     \
					 __VA_ARGS__};                         \
                                                                               \
			return drive(&c);                                      \
		}                                                              \
	}
TOPO_MPI_WRAPPED(BLOCKING)
#undef BLOCKING

/* ---------------------------------------------------------------------- */
/* The nonblocking and persistent forms: the MPI library's own, counted
 * and reported, so that COLLC_MPI_REPORT and collc_mpi_counts can say
 * what did not take collc's way.  The persistent ones are MPI 4.0's
 * (MPICH 4.0), or Open MPI's MPIX_ extension of them (pcollreq). */

#if MPI_VERSION >= 4
#define PERSISTENT 1
#define PNAME(x) "MPI_" x "_init"
#define PFN(x) MPI_##x##_init
#define PPFN(x) PMPI_##x##_init
#else
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PERSISTENT 1
#define PNAME(x) "MPIX_" x "_init"
#define PFN(x) MPIX_##x##_init
#define PPFN(x) PMPIX_##x##_init
#else
#define PERSISTENT 0
#define PNAME(x) NULL
#endif
#endif

#define LATER_NAMES(OP, N, n, ...) [TOPO_OP_##OP] = "MPI_I" #n,
#define PLATER_NAMES(OP, N, n, ...) [TOPO_OP_##OP] = PNAME(#N),
static const char *const later_name[2][TOPO_OP_COUNT] = {
    {TOPO_MPI_WRAPPED(LATER_NAMES)}, {TOPO_MPI_WRAPPED(PLATER_NAMES)}};
#undef LATER_NAMES
#undef PLATER_NAMES

static void later(int persistent, enum topo_op op)
{
	topo__pmpi_later(persistent, op, later_name[persistent][op]);
}

#define NONBLOCKING(OP, N, n, E, R, P, A, ...)                                    \
	API int MPI_I##n(TOPO_MPI_UNPAREN P, MPI_Request *req)                 \
	{                                                                      \
		later(0, TOPO_OP_##OP);                                        \
		return PMPI_I##n(TOPO_MPI_UNPAREN A, req);                     \
	}
TOPO_MPI_WRAPPED(NONBLOCKING)
#undef NONBLOCKING

#if PERSISTENT
#define PERSISTENT_FORM(OP, N, n, E, R, P, A, ...)                                \
	API int PFN(N)(TOPO_MPI_UNPAREN P, MPI_Info info, MPI_Request *req)    \
	{                                                                      \
		later(1, TOPO_OP_##OP);                                        \
		return PPFN(N)(TOPO_MPI_UNPAREN A, info, req);                 \
	}
TOPO_MPI_WRAPPED(PERSISTENT_FORM)
#undef PERSISTENT_FORM
#endif

/* ---------------------------------------------------------------------- */
/* The query (libcollc-mpi(7)) */

API int collc_mpi_counts(const char *name, long long *ours, long long *theirs);

API int collc_mpi_counts(const char *name, long long *ours, long long *theirs)
{
	long long a = 0, b = 0;
	int found = name == NULL;

	if (name != NULL && strcmp(name, "libcollc-mpi:communicators") == 0) {
		/* the library's own duplicates, made so far */
		if (ours != NULL)
			*ours = __atomic_load_n(&G.shadows, __ATOMIC_RELAXED);
		if (theirs != NULL)
			*theirs = 0;
		return G.on ? 1 : 0;
	}
	for (int op = 0; op < TOPO_OP_COUNT; op++) {
		if (name == NULL || strcmp(name, topo__pmpi_mpi_name[op]) == 0) {
			a += __atomic_load_n(&G.ours[op], __ATOMIC_RELAXED);
			b += __atomic_load_n(&G.theirs[op], __ATOMIC_RELAXED);
			found = 1;
		}
		for (int k = 0; k < 2; k++)
			if (later_name[k][op] != NULL &&
			    (name == NULL ||
			     strcmp(name, later_name[k][op]) == 0)) {
				b += __atomic_load_n(&G.later[k][op],
						     __ATOMIC_RELAXED);
				found = 1;
			}
	}
	if (ours != NULL)
		*ours = a;
	if (theirs != NULL)
		*theirs = b;
	return found ? (G.on ? 1 : 0) : -1;
}
