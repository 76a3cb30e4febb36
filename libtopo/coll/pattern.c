/*
 * coll/pattern.c - tree arithmetic for the collective algorithms: which
 * member talks to which, in what order, and where each member's block sits
 * in a packed message.  Kept apart from the plan builders (as UCC keeps its
 * coll_patterns) so the arithmetic can be read, and tested, on its own.
 * Allocates nothing, does no I/O; every function is linear in n.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"

#include <string.h>

void topo__pattern_reroot(const topo_tree *t, int32_t root, int32_t *parent)
{
	int32_t prev = -1, v = root;

	memcpy(parent, t->parent, (size_t)t->n * sizeof(int32_t));
	/* Walk from the new root up to the old one, pointing each member on
	 * the path at the one below it; everything else keeps its parent. */
	while (v >= 0) {
		int32_t up = t->parent[v];

		parent[v] = prev;
		prev = v;
		v = up;
	}
}

void topo__pattern_children(const int32_t *parent, int32_t n,
			    int32_t *child_off, int32_t *child)
{
	/* Counting sort by parent; visiting ranks in order keeps each list
	 * ascending.  child_off[p] serves as p's cursor, then shifts back. */
	memset(child_off, 0, ((size_t)n + 1) * sizeof(int32_t));
	for (int32_t r = 0; r < n; r++)
		if (parent[r] >= 0)
			child_off[parent[r] + 1]++;
	for (int32_t r = 0; r < n; r++)
		child_off[r + 1] += child_off[r];
	for (int32_t r = 0; r < n; r++)
		if (parent[r] >= 0)
			child[child_off[parent[r]]++] = r;
	for (int32_t r = n; r > 0; r--)
		child_off[r] = child_off[r - 1];
	child_off[0] = 0;
}

void topo__pattern_bfs(int32_t n, int32_t root, const int32_t *child_off,
		       const int32_t *child, int32_t *order)
{
	int32_t head = 0, tail = 0;

	if (n <= 0)
		return;
	order[tail++] = root;
	while (head < tail) {
		int32_t v = order[head++];

		for (int32_t i = child_off[v]; i < child_off[v + 1]; i++)
			order[tail++] = child[i];
	}
}

void topo__pattern_preorder(int32_t n, int32_t root, const int32_t *child_off,
			    const int32_t *child, int32_t *order, int32_t *pre,
			    int32_t *size)
{
	if (n <= 0)
		return;
	/* order[] holds a breadth-first order until the last step. */
	topo__pattern_bfs(n, root, child_off, child, order);
	for (int32_t i = n - 1; i >= 0; i--) {
		int32_t v = order[i];

		size[v] = 1;
		for (int32_t k = child_off[v]; k < child_off[v + 1]; k++)
			size[v] += size[child[k]];
	}
	/* A child's subtree starts right after its elder siblings'. */
	pre[root] = 0;
	for (int32_t i = 0; i < n; i++) {
		int32_t v = order[i], next = pre[v] + 1;

		for (int32_t k = child_off[v]; k < child_off[v + 1]; k++) {
			pre[child[k]] = next;
			next += size[child[k]];
		}
	}
	for (int32_t r = 0; r < n; r++)
		order[pre[r]] = r;
}

int32_t topo__pattern_run_end(const int32_t *order, int32_t i, int32_t end)
{
	int32_t j = i + 1;

	while (j < end && order[j] == order[j - 1] + 1)
		j++;
	return j;
}

int32_t topo__pattern_runs(const int32_t *order, int32_t lo, int32_t hi)
{
	int32_t runs = 0;

	for (int32_t i = lo; i < hi; i = topo__pattern_run_end(order, i, hi))
		runs++;
	return runs;
}
