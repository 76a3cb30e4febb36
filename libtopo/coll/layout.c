/*
 * coll/layout.c - the packed block layout shared by scatter "tree" and
 * gather "tree": the tree re-rooted at the logical root, its children, and
 * its preorder, in which every subtree's blocks are one contiguous range.
 * Allocates the arrays coll/pattern.c's pure arithmetic fills.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"

#include <string.h>

int topo__layout_new(struct topo__layout *l, const topo_tree *t, int32_t n,
		     int32_t root)
{
	memset(l, 0, sizeof(*l));
	l->par = topo__mallocarray((size_t)n, sizeof(int32_t));
	l->coff = topo__mallocarray((size_t)n + 1, sizeof(int32_t));
	l->ch = topo__mallocarray((size_t)n, sizeof(int32_t));
	l->order = topo__mallocarray((size_t)n, sizeof(int32_t));
	l->pre = topo__mallocarray((size_t)n, sizeof(int32_t));
	l->size = topo__mallocarray((size_t)n, sizeof(int32_t));
	if (l->par == NULL || l->coff == NULL || l->ch == NULL ||
	    l->order == NULL || l->pre == NULL || l->size == NULL) {
		topo__layout_free(l);
		return TOPO_ENOMEM;
	}
	topo__pattern_reroot(t, root, l->par);
	topo__pattern_children(l->par, n, l->coff, l->ch);
	topo__pattern_preorder(n, root, l->coff, l->ch, l->order, l->pre,
			       l->size);
	/* The root packs (or unpacks) only for a child whose subtree is not
	 * one run of consecutive ranks. */
	for (int32_t i = l->coff[root]; i < l->coff[root + 1]; i++) {
		int32_t c = l->ch[i];

		if (topo__pattern_runs(l->order, l->pre[c],
				       l->pre[c] + l->size[c]) > 1)
			l->packs = 1;
	}
	return 0;
}

void topo__layout_free(struct topo__layout *l)
{
	topo__free(l->par);
	topo__free(l->coff);
	topo__free(l->ch);
	topo__free(l->order);
	topo__free(l->pre);
	topo__free(l->size);
	memset(l, 0, sizeof(*l));
}
