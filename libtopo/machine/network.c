/*
 * network.c - node-level network trees: the k-ary and torus generators,
 * the check that an explicit parent array is a tree, and breadth-first
 * order and depths.  Pure arithmetic: callers own every array.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

void topo__network_kary(int32_t *parent, int32_t nodes, int32_t k,
			int32_t root)
{
	for (int64_t i = 0; i < nodes; i++) {
		int64_t p = (i - root + nodes) % nodes;

		parent[i] = p == 0 ? -1
				   : (int32_t)(((p - 1) / k + root) % nodes);
	}
}

/*
 * Torus: every node is reached from the physical root by a shortest torus
 * path, so depth is the torus distance.  Let d_i be the displacement of a
 * node from the root in dimension i, taken in (-D_i/2, D_i/2] (a tie on an
 * even dimension goes the positive way).  The path from the root walks
 * dimension 0 first, then 1, and so on; so a node's parent is one step back
 * towards the root in the highest dimension whose displacement is not 0.
 * Each step shortens the distance by exactly one, hence least depth.
 */
void topo__network_torus(int32_t *parent, const int32_t *dims, int ndims,
			 int32_t root)
{
	int64_t nodes = 1;
	int32_t rc[32];

	for (int i = 0; i < ndims; i++)
		nodes *= dims[i];
	/* Root coordinates, row-major with the last dimension fastest. */
	for (int i = ndims - 1, r = root; i >= 0; i--) {
		rc[i] = r % dims[i];
		r /= dims[i];
	}
	for (int64_t id = 0; id < nodes; id++) {
		int64_t rest = id, stride = 1;
		int32_t result = -1;

		for (int i = ndims - 1; i >= 0; i--) {
			int32_t size = dims[i];
			int32_t c = (int32_t)(rest % size);
			int32_t d = (c - rc[i] + size) % size;

			rest /= size;
			if (d != 0) {
				/* d in 1..size-1; d > size/2 is shorter backwards. */
				int32_t step = (2 * (int64_t)d > size) ? +1 : -1;
				int32_t pc = (c + step + size) % size;

				result = (int32_t)(id + (int64_t)(pc - c) * stride);
				break;
			}
			stride *= size;
		}
		parent[id] = result;
	}
}

int topo__network_check(const int32_t *parent, int32_t nodes,
			int32_t *state, int32_t *bad, const char **why)
{
	int32_t root = -1;

	for (int32_t i = 0; i < nodes; i++) {
		if (parent[i] == -1) {
			if (root >= 0) {
				*bad = i;
				*why = "second root";
				return -1;
			}
			root = i;
		} else if (parent[i] < 0 || parent[i] >= nodes) {
			*bad = i;
			*why = "no such node";
			return -1;
		} else if (parent[i] == i) {
			*bad = i;
			*why = "own parent";
			return -1;
		}
		state[i] = 0;
	}
	if (root < 0) {
		*bad = -1;
		*why = "no root";
		return -1;
	}
	/* state: 0 unseen, 1 on the path being walked, 2 known to reach the
	 * root.  Each node is walked once, so this is linear. */
	state[root] = 2;
	for (int32_t i = 0; i < nodes; i++) {
		int32_t v = i;

		while (state[v] == 0) {
			state[v] = 1;
			v = parent[v];
		}
		if (state[v] == 1) {
			*bad = v;
			*why = "cycle";
			return -1;
		}
		for (v = i; state[v] == 1; v = parent[v])
			state[v] = 2;
	}
	return 0;
}

void topo__network_order(const int32_t *parent, int32_t nodes, int32_t *order,
			 int32_t *depth, int32_t *count)
{
	int32_t maxdepth = 0;

	for (int32_t i = 0; i < nodes; i++)
		depth[i] = -1;
	/* Depths: walk up to a node of known depth, using order[] as the
	 * stack of the nodes passed, then unwind. */
	for (int32_t i = 0; i < nodes; i++) {
		int32_t top = 0, v = i, d;

		while (v >= 0 && depth[v] < 0) {
			order[top++] = v;
			v = parent[v];
		}
		d = v < 0 ? -1 : depth[v];
		while (top > 0) {
			depth[order[--top]] = ++d;
			if (d > maxdepth)
				maxdepth = d;
		}
	}
	/* Stable counting sort by depth: parents (depth d) come before
	 * children (d + 1), ids ascending within a level. */
	for (int32_t d = 0; d <= maxdepth + 1; d++)
		count[d] = 0;
	for (int32_t i = 0; i < nodes; i++)
		count[depth[i] + 1]++;
	for (int32_t d = 1; d <= maxdepth + 1; d++)
		count[d] += count[d - 1];
	for (int32_t i = 0; i < nodes; i++)
		order[count[depth[i]]++] = i;
}
