/*
 * coll/layout.c - the packed block layout shared by scatter "tree" and
 * gather "tree": the tree re-rooted at the logical root, its children, and
 * its preorder, in which every subtree's blocks are one contiguous range.
 * Allocates the arrays coll/pattern.c's pure arithmetic fills, and sizes
 * the buffers the layout asks for.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

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

int topo__layout_setup(struct topo_plan *p, struct topo__layout *l,
		       int64_t **ids, int all, int own, const char *what,
		       topo_error *err)
{
	int32_t n = p->n, root = p->root;
	int64_t B = (int64_t)p->params.bytes;
	int rc;

	memset(l, 0, sizeof(*l));
	*ids = NULL;
	if (p->params.bytes > (size_t)INT64_MAX / (size_t)n)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "%s: %d blocks of %zu bytes do not fit in a "
				 "64-bit size",
				 what, (int)n, p->params.bytes);
	if (topo__layout_new(l, p->t, n, root) != 0 ||
	    (*ids = topo__mallocarray((size_t)n, sizeof(int64_t))) == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory planning %s tree over %d "
				 "members",
				 what, (int)n);
	rc = topo__plan_bufsize(p, all, root, (int64_t)n * B, err);
	if (rc == 0 && l->packs)
		rc = topo__plan_bufsize(p, TOPO__WORK, root,
					(int64_t)(n - 1) * B, err);
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		rc = topo__plan_bufsize(p, own, v, B, err);
		if (rc == 0 && v != root && l->size[v] > 1)
			rc = topo__plan_bufsize(p, TOPO__WORK, v,
						(int64_t)l->size[v] * B, err);
	}
	/* A message, a dependency and a packing step per member at most,
	 * twice over: linear in the members. */
	if (rc == 0)
		rc = topo__plan_expect(p, 3 * (int64_t)n, 3 * (int64_t)n, n,
				       err);
	return rc;
}
