/*
 * all_algos.h - every operation and each of its algorithms, by the names
 * collrun(1) and topo_plan_new take, for the tests that run them all
 * (test_homes.c, test_exec.c).  A new algorithm added here is run by both.
 */
#ifndef ALL_ALGOS_H
#define ALL_ALGOS_H

#include "topo.h"

static const struct {
	enum topo_op op;
	const char *algorithms[6]; /* NULL after the last */
} all_algos[] = {
    {TOPO_OP_BCAST, {"flood"}},
    {TOPO_OP_SCATTER, {"tree", "or-combine", "direct"}},
    {TOPO_OP_GATHER, {"chunked", "tree"}},
    {TOPO_OP_REDUCE, {"hierarchical", "tree", "direct"}},
    {TOPO_OP_ALLREDUCE,
     {"tree", "hierarchical", "ring", "recursive-doubling", "rabenseifner"}},
    {TOPO_OP_ALLGATHER,
     {"ring", "tree", "recursive-doubling", "bruck", "direct"}},
    {TOPO_OP_REDUCE_SCATTER, {"ring", "tree", "recursive-halving", "direct"}},
    {TOPO_OP_ALLTOALL, {"pairwise", "bruck", "direct"}},
    {TOPO_OP_BARRIER, {"dissemination", "tree"}},
};

#endif /* ALL_ALGOS_H */
