/*
 * tree_physical.c - the "physical" tree shape (seed 000): the group's
 * members arranged along the machine's collective network.
 *
 * Member nodes are the nodes hosting members.  The root node is the member
 * node nearest the physical root (least network depth, ties: lowest id);
 * every other member node hangs below its nearest member ancestor in the
 * network tree, or below the root node when no ancestor hosts a member.  On
 * each member node the lowest member is the local root and the others are
 * its children over shared memory.  Cost: O(members + nodes).
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

/*
 * Members are ranked by endpoint id, and a node's endpoints are one
 * contiguous id range (tasks are numbered in node order), so each member
 * node's members form one run of ranks, runs in ascending node order.
 *
 * scratch: up[v] for every node v, the local root (rank) of the nearest
 * member node among v and its ancestors, or -1.  Filled in one pass over
 * net_order, which lists parents before children.
 */
void topo__tree_physical(const topo_group *g, int32_t *parent, void *scratch)
{
	const topo_machine *m = g->m;
	const int32_t *mem = g->members;
	int32_t *up = scratch;
	int32_t n = g->size, root_node = -1, root_rank = -1;

	for (int32_t v = 0; v < m->nodes; v++)
		up[v] = -1;
	/* Pass 1, over runs: local roots, shm children, the root node.  A
	 * local root's parent is not known yet; it holds -2 - node so that
	 * pass 3 need not find the node again. */
	for (int32_t r = 0; r < n;) {
		int32_t v = m->task_node[mem[r] / m->eps_per_task];
		int64_t end =
		    (int64_t)m->node_first_task[v + 1] * m->eps_per_task;
		int32_t s = r;

		up[v] = s;
		if (root_node < 0 ||
		    m->net_depth[v] < m->net_depth[root_node]) {
			root_node = v;
			root_rank = s;
		}
		parent[r++] = -2 - v;
		while (r < n && mem[r] < end)
			parent[r++] = s;
	}
	/* Pass 2: nearest member node among each node and its ancestors. */
	for (int32_t i = 0; i < m->nodes; i++) {
		int32_t v = m->net_order[i], p = m->net_parent[v];

		if (up[v] < 0 && p >= 0)
			up[v] = up[p];
	}
	/* Pass 3: each local root below its parent node's nearest member
	 * ancestor-or-self, i.e. its own nearest member ancestor. */
	for (int32_t r = 0; r < n; r++) {
		int32_t v, p, above;

		if (parent[r] > -2)
			continue;
		v = -2 - parent[r];
		if (v == root_node) {
			parent[r] = -1;
			continue;
		}
		p = m->net_parent[v];
		above = p >= 0 ? up[p] : -1;
		parent[r] = above >= 0 ? above : root_rank;
	}
}
