/*
 * tree_rank.c - tree shapes that depend on group ranks only: binomial,
 * k-ary and chain (collc(7)).  Pure arithmetic; the caller owns parent[].
 * They ignore the machine, so they suit groups whose members the network
 * places arbitrarily, and serve as baselines for the topology-aware shapes.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

/* Rank r > 0 hangs below r with its lowest set bit cleared: depth is the
 * number of set bits, at most ceil(lg n). */
void topo__tree_binomial(int32_t n, int32_t *parent)
{
	if (n > 0)
		parent[0] = -1;
	for (int32_t r = 1; r < n; r++)
		parent[r] = r & (r - 1);
}

/* Heap order: the children of r are r*k+1 .. r*k+k. */
void topo__tree_kary(int32_t n, int32_t k, int32_t *parent)
{
	if (n > 0)
		parent[0] = -1;
	for (int32_t r = 1; r < n; r++)
		parent[r] = (r - 1) / k;
}

void topo__tree_chain(int32_t n, int32_t *parent)
{
	for (int32_t r = 0; r < n; r++)
		parent[r] = r - 1;
}
