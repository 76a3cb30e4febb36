/*
 * coll/reduce/reduce.h - reduce's phase up the tree (coll/reduce/tree.c),
 * shared with allreduce tree and hierarchical, and the check that a tree
 * is the hierarchical one.  Private to libtopo: define TOPO_INTERNAL
 * before including.
 */
#ifndef TOPO_COLL_REDUCE_H
#define TOPO_COLL_REDUCE_H

#include "plan/plan.h"

/* The messages of one segment of the reduce up the tree that others wait
 * for: init[v] is member v's copy into its accumulator (-1: none), up[v]
 * its REDUCE into its parent (-1: the tree root).  [n] each, the
 * caller's. */
struct topo__reduce_ids {
	int64_t *init, *up;
};

/* Emits the reduce of bytes [off, off + len) of every member's buffers
 * up p->t towards its root (and on to p->root's RECV when that is another
 * member), counted by receipt slots slot0 + rank: see reduce/tree.c.  A
 * member with children accumulates in its WORK (B bytes, the caller's to
 * size), the tree root in its RECV when it is the logical root. */
int topo__reduce_up_segment(struct topo_plan *p, struct topo__reduce_ids *ids,
			    int64_t off, int64_t len, int64_t slot0,
			    topo_error *err);

/* 0 when p->t is the hierarchical tree of its group (recomputed and
 * compared), else TOPO_EARG naming the first endpoint that differs and
 * suggesting algorithm tree; TOPO_ENOMEM.  op names the operation for
 * the out-of-memory text. */
int topo__check_hierarchical_tree(const struct topo_plan *p, const char *op,
				  topo_error *err);

#endif /* TOPO_COLL_REDUCE_H */
