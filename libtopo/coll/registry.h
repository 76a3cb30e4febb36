/*
 * registry.h - every algorithm, once: its operation, its name as
 * collrun(1) and topo_plan_new take it, what it needs and offers (the
 * TOPO_ALG_* flags of topo.h) and the builder that fills a plan with it
 * (one file each under coll/OP/).  Everything else that lists algorithms
 * (the planner's dispatch and defaults, collc predict's table, collrun
 * --list-algorithms, libcollc-mpi's defaults, the tests) reads this list,
 * so that a new algorithm is its file and one line below.
 */
#ifndef TOPO_COLL_REGISTRY_H
#define TOPO_COLL_REGISTRY_H

#include "topo.h"

#include <stdbool.h>
#include <stddef.h>

struct topo_plan;

/* Fills p (whose t, params, n, root and type_size are set) with buffers,
 * messages, dependencies and slots. */
typedef int (*topo__algorithm_fn)(struct topo_plan *p, topo_error *err);

/* Flags the library keeps to itself, above the TOPO_ALG_* ones: a
 * process can plan its own part of the plan alone (plan/local.c), which
 * libcollc-mpi does instead of planning the whole. */
#define TOPO__ALG_PART 0x10000u
#define TOPO__ALG_PUBLIC 0xffffu

/*
 * X(OP, NAME, BUILDER, FLAGS): the operation (TOPO_OP_ without its
 * prefix), the name, the builder (topo__plan_BUILDER) and the TOPO_ALG_
 * and TOPO__ALG_ flags (without their prefix, or 0).  Each operation's algorithms in the
 * order collrun(1) lists them, the first its default (DEFAULT).
 */
#define TOPO__ALGORITHMS(X)                                                    \
	X(BCAST, "flood", bcast_flood, DEFAULT | TREE | SEGMENT | PART)       \
	X(SCATTER, "tree", scatter_tree, DEFAULT | TREE)                       \
	X(SCATTER, "or-combine", scatter_or, TREE)                             \
	X(SCATTER, "direct", scatter_direct, 0)                                \
	X(GATHER, "chunked", gather_chunked, DEFAULT | TREE | CHUNK)           \
	X(GATHER, "tree", gather_tree, TREE)                                   \
	X(REDUCE, "hierarchical", reduce_hierarchical,                         \
	  DEFAULT | TREE | HIERARCHICAL | SEGMENT | PART)                      \
	X(REDUCE, "tree", reduce_tree, TREE | SEGMENT | PART)                  \
	X(REDUCE, "direct", reduce_direct, SEGMENT)                            \
	X(ALLREDUCE, "tree", allreduce_tree, DEFAULT | TREE | SEGMENT | PART)  \
	X(ALLREDUCE, "hierarchical", allreduce_hierarchical,                   \
	  TREE | HIERARCHICAL | SEGMENT | PART)                                \
	X(ALLREDUCE, "ring", allreduce_ring, 0)                                \
	X(ALLREDUCE, "recursive-doubling", allreduce_recursive_doubling, 0)    \
	X(ALLREDUCE, "rabenseifner", allreduce_rabenseifner, 0)                \
	X(ALLGATHER, "ring", allgather_ring, DEFAULT)                          \
	X(ALLGATHER, "tree", allgather_tree, TREE)                             \
	X(ALLGATHER, "recursive-doubling", allgather_recursive_doubling, 0)    \
	X(ALLGATHER, "bruck", allgather_bruck, 0)                              \
	X(ALLGATHER, "direct", allgather_direct, ONE_NODE)                     \
	X(REDUCE_SCATTER, "ring", reduce_scatter_ring, DEFAULT)                \
	X(REDUCE_SCATTER, "tree", reduce_scatter_tree, TREE | SEGMENT)         \
	X(REDUCE_SCATTER, "recursive-halving",                                 \
	  reduce_scatter_recursive_halving, 0)                                 \
	X(REDUCE_SCATTER, "direct", reduce_scatter_direct, ONE_NODE | SEGMENT) \
	X(ALLTOALL, "pairwise", alltoall_pairwise, DEFAULT)                    \
	X(ALLTOALL, "bruck", alltoall_bruck, 0)                                \
	X(ALLTOALL, "direct", alltoall_direct, 0)                              \
	X(BARRIER, "dissemination", barrier_dissemination, DEFAULT)            \
	X(BARRIER, "tree", barrier_tree, TREE)

#define TOPO__ALGORITHM_DECLARE(op, name, builder, flags)                      \
	int topo__plan_##builder(struct topo_plan *p, topo_error *err);
TOPO__ALGORITHMS(TOPO__ALGORITHM_DECLARE)
#undef TOPO__ALGORITHM_DECLARE

struct topo__algorithm {
	enum topo_op op;
	const char *name;
	topo__algorithm_fn fn;
	unsigned flags; /* TOPO_ALG_* */
};

/* The algorithm of op named name, or NULL (no such one, op out of
 * range). */
const struct topo__algorithm *topo__algorithm_find(enum topo_op op,
						   const char *name);
/* The i-th algorithm of op in the registry's order, or NULL. */
const struct topo__algorithm *topo__algorithm_at(enum topo_op op, size_t i);
/* The algorithm of op when none is named: the one flagged
 * TOPO_ALG_ONE_NODE when the group is on one node (one_node) and op has
 * one, else the one flagged TOPO_ALG_DEFAULT; NULL for op out of range. */
const struct topo__algorithm *topo__algorithm_default(enum topo_op op,
						      bool one_node);
/* The names of op's algorithms into buf, ", " between them ("tree,
 * or-combine, direct"), cut short to fit size. */
void topo__algorithm_list(char *buf, size_t size, enum topo_op op);

#endif /* TOPO_COLL_REGISTRY_H */
