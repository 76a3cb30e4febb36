/*
 * wrapped.h - the one list of the collectives libcollc-mpi.so wraps, from
 * which collc_mpi.c makes every wrapper (blocking, nonblocking,
 * persistent), the hand-over to the MPI library and the names
 * (pmpi_common.c).  Adding a collective is a line here, its operation in
 * libtopo, and the checks of its arguments in collc_mpi.c (check).
 *
 * TOPO_MPI_WRAPPED(X) calls, once per collective,
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
	X(BCAST, Bcast, bcast, BCAST, 1,                                              \
	  (void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm),     \
	  (buf, count, t, root, comm),                                         \
	  (c->rbuf, c->rcount, c->rtype, c->root, c->comm), .rbuf = buf,       \
	  .rcount = count, .rtype = t, .root = root)                           \
	X(SCATTER, Scatter, scatter, SCATTER, 1,                                        \
	  (const void *sendbuf, int scount, MPI_Datatype stype,                \
	   void *recvbuf, int rcount, MPI_Datatype rtype, int root,            \
	   MPI_Comm comm),                                                     \
	  (sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm),        \
	  (c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype,         \
	   c->root, c->comm),                                                  \
	  .sbuf = sendbuf, .scount = scount, .stype = stype, .rbuf = recvbuf,  \
	  .rcount = rcount, .rtype = rtype, .root = root)                      \
	X(GATHER, Gather, gather, GATHER, 1,                                           \
	  (const void *sendbuf, int scount, MPI_Datatype stype,                \
	   void *recvbuf, int rcount, MPI_Datatype rtype, int root,            \
	   MPI_Comm comm),                                                     \
	  (sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm),        \
	  (c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype,         \
	   c->root, c->comm),                                                  \
	  .sbuf = sendbuf, .scount = scount, .stype = stype, .rbuf = recvbuf,  \
	  .rcount = rcount, .rtype = rtype, .root = root)                      \
	X(REDUCE, Reduce, reduce, REDUCE, 1,                                           \
	  (const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,      \
	   MPI_Op o, int root, MPI_Comm comm),                                 \
	  (sendbuf, recvbuf, count, t, o, root, comm),                         \
	  (c->sbuf, c->rbuf, c->rcount, c->rtype, c->mop, c->root, c->comm),   \
	  .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count, .rtype = t,       \
	  .mop = o, .root = root)                                              \
	X(ALLREDUCE, Allreduce, allreduce, ALLREDUCE, 0,                                  \
	  (const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,      \
	   MPI_Op o, MPI_Comm comm),                                           \
	  (sendbuf, recvbuf, count, t, o, comm),                               \
	  (c->sbuf, c->rbuf, c->rcount, c->rtype, c->mop, c->comm),            \
	  .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count, .rtype = t,       \
	  .mop = o, .root = -1)                                                \
	X(ALLGATHER, Allgather, allgather, ALLGATHER, 0,                                  \
	  (const void *sendbuf, int scount, MPI_Datatype stype,                \
	   void *recvbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm),      \
	  (sendbuf, scount, stype, recvbuf, rcount, rtype, comm),              \
	  (c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype,         \
	   c->comm),                                                           \
	  .sbuf = sendbuf, .scount = scount, .stype = stype, .rbuf = recvbuf,  \
	  .rcount = rcount, .rtype = rtype, .root = -1)                        \
	X(REDUCE_SCATTER, Reduce_scatter_block, reduce_scatter_block, REDUCE_SCATTER_BLOCK, 0,       \
	  (const void *sendbuf, void *recvbuf, int count, MPI_Datatype t,      \
	   MPI_Op o, MPI_Comm comm),                                           \
	  (sendbuf, recvbuf, count, t, o, comm),                               \
	  (c->sbuf, c->rbuf, c->rcount, c->rtype, c->mop, c->comm),            \
	  .sbuf = sendbuf, .rbuf = recvbuf, .rcount = count, .rtype = t,       \
	  .mop = o, .root = -1)                                                \
	X(ALLTOALL, Alltoall, alltoall, ALLTOALL, 0,                                     \
	  (const void *sendbuf, int scount, MPI_Datatype stype,                \
	   void *recvbuf, int rcount, MPI_Datatype rtype, MPI_Comm comm),      \
	  (sendbuf, scount, stype, recvbuf, rcount, rtype, comm),              \
	  (c->sbuf, c->scount, c->stype, c->rbuf, c->rcount, c->rtype,         \
	   c->comm),                                                           \
	  .sbuf = sendbuf, .scount = scount, .stype = stype, .rbuf = recvbuf,  \
	  .rcount = rcount, .rtype = rtype, .root = -1)                        \
	X(BARRIER, Barrier, barrier, BARRIER, 0, (MPI_Comm comm), (comm), (c->comm),    \
	  .root = -1)

/* A parenthesised list without its parentheses: UNPAREN (a, b) is a, b. */
#define TOPO_MPI_UNPAREN(...) __VA_ARGS__

#endif /* TOPO_MPI_WRAPPED_H */
