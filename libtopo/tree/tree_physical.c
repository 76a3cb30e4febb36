/*
 * tree_physical.c - the "physical" tree shape (seed 000): the group's
 * members arranged along the machine's collective network.
 *
 * Member nodes are the nodes hosting members.  The root node is the member
 * node nearest the physical root (least network depth, ties: lowest id);
 * every other member node hangs below its nearest member ancestor in the
 * network tree, or below the root node when no ancestor hosts a member.  On
 * each member node the lowest member is the local root and the others are
 * its children over shared memory.  Cost: O(members + the ancestors of
 * member nodes), whatever the size of the machine.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <string.h>

int topo__node_memo_new(struct topo__node_memo *memo, const topo_machine *m)
{
	memo->nodes = m->nodes;
	memo->stamp = 0;
	memo->cell = topo__calloc((size_t)m->nodes, sizeof(uint64_t));
	return memo->cell != NULL ? 0 : TOPO_ENOMEM;
}

void topo__node_memo_free(struct topo__node_memo *memo)
{
	if (memo != NULL)
		topo__free(memo->cell);
}

/* A value not (yet) known this round. */
#define UNKNOWN INT32_MIN

static int32_t memo_get(const struct topo__node_memo *memo, int32_t v)
{
	uint64_t c = memo->cell[v];

	return (uint32_t)(c >> 32) == memo->stamp ? (int32_t)(uint32_t)c - 1
						   : UNKNOWN;
}

static void memo_set(struct topo__node_memo *memo, int32_t v, int32_t value)
{
	memo->cell[v] = (uint64_t)memo->stamp << 32 | (uint32_t)(value + 1);
}

/* The local root (rank) of the nearest member node among u and its
 * ancestors, or -1.  Walks up until a node whose answer is known, then
 * records the answer on every node of the way, so each node is walked
 * once per tree. */
static int32_t nearest(struct topo__node_memo *memo, const topo_machine *m,
		       int32_t u)
{
	int32_t ans = -1, w;

	for (w = u; w >= 0; w = m->net_parent[w]) {
		int32_t k = memo_get(memo, w);

		if (k != UNKNOWN) {
			ans = k;
			break;
		}
	}
	for (w = u; w >= 0 && memo_get(memo, w) == UNKNOWN;
	     w = m->net_parent[w])
		memo_set(memo, w, ans);
	return ans;
}

/*
 * Members are ranked by endpoint id, and a node's endpoints are one
 * contiguous id range (tasks are numbered in node order), so each member
 * node's members form one run of ranks, runs in ascending node order.
 *
 * memo: for the member nodes their local root, for the nodes walked
 * through their nearest member ancestor-or-self; nothing for the others.
 * Cost: O(members + the nodes on member nodes' paths up), not O(nodes).
 */
void topo__tree_physical(const topo_group *g, int32_t *parent,
			 struct topo__node_memo *memo)
{
	const topo_machine *m = g->m;
	const int32_t *mem = g->members;
	int32_t n = g->size, root_node = -1, root_rank = -1;

	/* A new round: cells of earlier trees no longer count.  After 2^32
	 * rounds the stamps would repeat, so start over. */
	if (++memo->stamp == 0) {
		memset(memo->cell, 0, (size_t)memo->nodes * sizeof(uint64_t));
		memo->stamp = 1;
	}
	/* Pass 1, over runs: local roots, shm children, the root node.  A
	 * local root's parent is not known yet; it holds -2 - node so that
	 * pass 2 need not find the node again. */
	for (int32_t r = 0; r < n;) {
		int32_t v = m->task_node[mem[r] / m->eps_per_task];
		int64_t end =
		    (int64_t)m->node_first_task[v + 1] * m->eps_per_task;
		int32_t s = r;

		memo_set(memo, v, s);
		if (root_node < 0 ||
		    m->net_depth[v] < m->net_depth[root_node]) {
			root_node = v;
			root_rank = s;
		}
		parent[r++] = -2 - v;
		while (r < n && mem[r] < end)
			parent[r++] = s;
	}
	/* Pass 2: each local root below its nearest member ancestor (that
	 * of its parent node), or the root's when it has none. */
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
		above = p >= 0 ? nearest(memo, m, p) : -1;
		parent[r] = above >= 0 ? above : root_rank;
	}
}
