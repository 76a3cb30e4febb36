/*
 * coll/allreduce/hierarchical.c - allreduce "hierarchical": allreduce
 * "tree" (tree.c) over the hierarchical tree (collc(7)) only, which gives
 * seed 001's node-aware reduce and its mirror image without any extra
 * synchronisation:
 *   1. on every other node, members REDUCE into their node's local root
 *      through shared memory (shm edges, in parallel across nodes);
 *   2. each local root, once its node is in, REDUCEs into its parent, a
 *      member of the identified node, over the network (net edges);
 *   3. the identified node's members REDUCE into the global root (shm);
 *   4-6. the result goes back the same way: the global root COPYs it to
 *      the identified node's members (shm), they to the local roots dealt
 *      to them (net), and each local root to its node (shm).
 * Segments pipeline through the six phases.
 *
 * Cost, n members, B bytes in S segments: 2S(n - 1) transport messages,
 * of which 2S(N - 1) cross the network for N nodes, moving 2(n - 1)B
 * bytes; buffers, dependencies and receipt slots as tree.c says.
 *
 * It refuses any other tree, as reduce "hierarchical" does (the parents
 * are recomputed and compared: coll/reduce/tree.c), naming the first
 * endpoint that differs and pointing at algorithm "tree", which runs the
 * same plan over any tree.
 */
#define TOPO_INTERNAL
#include "allreduce.h"
#include "plan/plan.h"

int topo__plan_allreduce_hierarchical(struct topo_plan *p, topo_error *err)
{
	int rc = topo__check_hierarchical_tree(p, "allreduce", err);

	return rc != 0 ? rc : topo__allreduce_over_tree(p, "hierarchical", err);
}
