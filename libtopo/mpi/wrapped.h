/*
 * wrapped.h - the one list of the collectives libcollc-mpi.so wraps, from
 * which collc_mpi.c makes every wrapper (blocking, nonblocking,
 * persistent), the hand-over to the MPI library and the names
 * (pmpi_common.c).  Adding a collective is a line here, its operation in
 * libtopo, and the checks of its arguments in collc_mpi.c (check).
 *
 * TOPO_MPI_WRAPPED(X) calls, once per collective (through one of the
 * signature macros below where collectives share their parameters),
 *
 *   X(OP, Name, name, ENV, ROOTED, (parameters), (arguments),
 *     (from call), fields...)
 *
 *   OP           its enum topo_op, without TOPO_OP_;
 *   Name, name   MPI_Name and the nonblocking MPI_Iname;
 *   ENV          its name in the COLLC_MPI_ENV_* variables;
 *   ROOTED       1 where it has a root;
 *   parameters   the blocking call's (the nonblocking one adds a request,
 *                the persistent one an info and a request), always
 *                naming the communicator comm;
 *   arguments    the same names, to call the MPI library's PMPI_Name;
 *   from call    the MPI library's arguments from a struct call *c;
 *   fields       the struct call members the parameters fill.
 *
 * A reduction's count and datatype are the receive side's (MPI requires
 * both sides alike).
 */
#ifndef TOPO_MPI_WRAPPED_H
#define TOPO_MPI_WRAPPED_H

#define TOPO_MPI_WRAPPED(X)                                                    \
	X(BCAST, Bcast, bcast, BCAST, 1,                                       \
	  (void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm),     \
	  (buf, count, t, root, comm),                                         \
	  (c->rbuf, c->rcount, c->rtype, c->root, c->comm), .rbuf = buf,       \
	  .rcount = count, .rtype = t, .root = root)                           \
	TOPO_MPI_ROOTED_EXCHANGE(X, SCATTER, Scatter, scatter, SCATTER)        \
	TOPO_MPI_ROOTED_EXCHANGE(X, GATHER, Gather, gather, GATHER)            \
	X(REDUCE, Reduce, reduce, REDUCE, 1,                                   \
	  (const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,      \
	   MPI_Op o, int root, MPI_Comm comm),                                 \
	  (sendbuf, recvbuf, count, t, o, root, comm),                         \
	  (c->sbuf, c->rbuf, c->rcount, c->rtype, c->mop, c->root, c->comm),   \
	  .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count, .rtype = t,       \
	  .mop = o, .root = root)                                              \
	TOPO_MPI_REDUCTION(X, ALLREDUCE, Allreduce, allreduce, ALLREDUCE)      \
	TOPO_MPI_EXCHANGE(X, ALLGATHER, Allgather, allgather, ALLGATHER)       \
	TOPO_MPI_REDUCTION(X, REDUCE_SCATTER, Reduce_scatter_block,            \
			   reduce_scatter_block, REDUCE_SCATTER_BLOCK)         \
	TOPO_MPI_EXCHANGE(X, ALLTOALL, Alltoall, alltoall, ALLTOALL)           \
	X(BARRIER, Barrier, barrier, BARRIER, 0, (MPI_Comm comm), (comm),      \
	  (c->comm), .root = -1)

/* The collectives that share a signature, each X(...) from what differs
 * (OP, Name, name, ENV).  A rooted exchange: a send and a receive buffer,
 * each with its count and datatype, and a root (MPI_Scatter,
 * MPI_Gather). */
#define TOPO_MPI_ROOTED_EXCHANGE(X, OP, Name, name, ENV)                       \
	X(OP, Name, name, ENV, 1,                                              \
	  (const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf, \
	   int rcount, MPI_Datatype rtype, int root, MPI_Comm comm),           \
	  (sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm),        \
	  (c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype,         \
	   c->root, c->comm),                                                  \
	  .sbuf = sendbuf, .scount = scount, .stype = stype, .rbuf = recvbuf,  \
	  .rcount = rcount, .rtype = rtype, .root = root)

/* The same without a root (MPI_Allgather, MPI_Alltoall). */
#define TOPO_MPI_EXCHANGE(X, OP, Name, name, ENV)                              \
	X(OP, Name, name, ENV, 0,                                              \
	  (const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf, \
	   int rcount, MPI_Datatype rtype, MPI_Comm comm),                     \
	  (sendbuf, scount, stype, recvbuf, rcount, rtype, comm),              \
	  (c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype,         \
	   c->comm),                                                           \
	  .sbuf = sendbuf, .scount = scount, .stype = stype, .rbuf = recvbuf,  \
	  .rcount = rcount, .rtype = rtype, .root = -1)

/* A reduction without a root: a send and a receive buffer of one count
 * and datatype, and an MPI_Op (MPI_Allreduce,
 * MPI_Reduce_scatter_block). */
#define TOPO_MPI_REDUCTION(X, OP, Name, name, ENV)                             \
	X(OP, Name, name, ENV, 0,                                              \
	  (const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,      \
	   MPI_Op o, MPI_Comm comm),                                           \
	  (sendbuf, recvbuf, count, t, o, comm),                               \
	  (c->sbuf, c->rbuf, c->rcount, c->rtype, c->mop, c->comm),            \
	  .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count, .rtype = t,       \
	  .mop = o, .root = -1)

/* A parenthesised list without its parentheses: UNPAREN (a, b) is a, b. */
#define TOPO_MPI_UNPAREN(...) __VA_ARGS__

#endif /* TOPO_MPI_WRAPPED_H */
