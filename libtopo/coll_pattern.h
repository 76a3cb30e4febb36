/*
 * coll_pattern.h - tree arithmetic shared by the collective algorithms
 * (coll/pattern.c): re-rooting a tree at a logical root, children lists,
 * breadth-first and preorder numbering, subtree sizes.  Pure arithmetic:
 * it allocates nothing and moves no data; callers own every array.
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_COLL_PATTERN_H
#define TOPO_COLL_PATTERN_H

#include "topo_internal.h"

/* The same undirected tree as t, rooted at rank root: parent[r] for every
 * rank, -1 at root.  Only the path from root to t's root turns round.
 * O(n). */
void topo__pattern_reroot(const topo_tree *t, int32_t root, int32_t *parent);

/* Children in CSR form from a parent array of n ranks (one -1): the
 * children of r are child[child_off[r] .. child_off[r + 1] - 1], ascending.
 * child_off holds n + 1 entries, child n - 1 (at least 1).  O(n). */
void topo__pattern_children(const int32_t *parent, int32_t n,
			    int32_t *child_off, int32_t *child);

/* Breadth-first order from root over a CSR tree: order[0] = root, parents
 * before children, siblings ascending.  O(n). */
void topo__pattern_bfs(int32_t n, int32_t root, const int32_t *child_off,
		       const int32_t *child, int32_t *order);

/*
 * Preorder of a CSR tree from root, children visited in ascending rank:
 * order[i] is the rank visited i-th, pre[r] its inverse, size[r] the
 * number of members in r's subtree (r included).  So r's subtree is
 * order[pre[r] .. pre[r] + size[r] - 1], r first, then each child's
 * subtree in turn: the packed layout of scatter and gather "tree".  No
 * stack: sizes bottom-up over a breadth-first order, then positions
 * top-down.  O(n).
 */
void topo__pattern_preorder(int32_t n, int32_t root, const int32_t *child_off,
			    const int32_t *child, int32_t *order, int32_t *pre,
			    int32_t *size);

/* The end (exclusive) of the run of consecutive ranks in order[] that
 * starts at position i and stays below position end: the largest j <= end
 * with order[k + 1] == order[k] + 1 for i <= k < j - 1.  A run is one
 * contiguous range of rank-ordered blocks, so it moves as one copy. */
int32_t topo__pattern_run_end(const int32_t *order, int32_t i, int32_t end);

/* Number of such runs in order[lo .. hi - 1]. */
int32_t topo__pattern_runs(const int32_t *order, int32_t lo, int32_t hi);

/* The packed layout of scatter and gather "tree" (coll/layout.c, which
 * allocates): t re-rooted at root, its children in CSR form, its preorder
 * (order, pre, size as topo__pattern_preorder), and whether the root must
 * pack because some child's subtree is not one run of ranks. */
struct topo__layout {
	int32_t *par, *coff, *ch, *order, *pre, *size;
	int packs;
};

/* Returns 0 or TOPO_ENOMEM (nothing left allocated). */
int topo__layout_new(struct topo__layout *l, const topo_tree *t, int32_t n,
		     int32_t root);
void topo__layout_free(struct topo__layout *l);

#endif /* TOPO_COLL_PATTERN_H */
