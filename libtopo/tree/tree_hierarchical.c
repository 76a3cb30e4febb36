/*
 * tree_hierarchical.c - the "hierarchical" tree shape (seed 001), built
 * for machines whose nodes run different numbers of tasks.
 *
 * The identified node is the member node with the most members (ties:
 * lowest id).  Its lowest member is the global root and its other members
 * the global root's children.  On every other member node the lowest member
 * is the local root, the others its children; those local roots, in
 * ascending node order, are dealt round-robin to the identified node's
 * non-root members in ascending order (to the global root when it is the
 * identified node's only member).  So a reduction funnels each node through
 * shared memory, then all nodes in parallel into the identified node.
 * Cost: O(members).
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

/* Members are ranked by endpoint id and a node's endpoints are contiguous,
 * so a member node's members are one run of ranks, and runs ascend by node.
 * Returns the end (exclusive) of the run starting at rank r. */
static int32_t run_end(const topo_machine *m, const int32_t *mem, int32_t n,
		       int32_t r)
{
	int32_t v = m->task_node[mem[r] / m->eps_per_task];
	int64_t end = (int64_t)m->node_first_task[v + 1] * m->eps_per_task;

	while (r < n && mem[r] < end)
		r++;
	return r;
}

/* scratch is not used (the shape needs none); it may be NULL. */
void topo__tree_hierarchical(const topo_group *g, int32_t *parent,
			     void *scratch)
{
	const topo_machine *m = g->m;
	const int32_t *mem = g->members;
	int32_t n = g->size, id_first = 0, id_count = 0, next;

	(void)scratch;
	/* The identified node: strictly more members wins, so ties keep the
	 * lowest node (runs come in ascending node order). */
	for (int32_t r = 0, e; r < n; r = e) {
		e = run_end(m, mem, n, r);
		if (e - r > id_count) {
			id_first = r;
			id_count = e - r;
		}
	}
	next = id_first + 1;
	for (int32_t r = 0, e; r < n; r = e) {
		e = run_end(m, mem, n, r);
		for (int32_t c = r + 1; c < e; c++)
			parent[c] = r;
		if (r == id_first) {
			parent[r] = -1;
		} else if (id_count == 1) {
			parent[r] = id_first;
		} else {
			parent[r] = next;
			if (++next == id_first + id_count)
				next = id_first + 1;
		}
	}
}
