/*
 * coll/allreduce/tree.c - allreduce "tree" (the default): reduce up the
 * tree to its root, as reduce "tree" does, then broadcast the root's
 * result back down the same tree into every member's RECV, in segments
 * that pipeline through both phases: segment k goes down as soon as it is
 * reduced at the root, while segment k + 1 is still coming up.  Allreduce
 * "hierarchical" (hierarchical.c) is this plan over the hierarchical tree.
 *
 * Cost, n members, B bytes per member in S segments, tree depth d:
 * 2S(n - 1) transport messages, S(n - 1) REDUCEs up and S(n - 1) COPYs
 * down, moving 2(n - 1)B bytes in all; time about
 * (2d + S - 1)(alpha + (B/S)(beta + gamma)) once the segments pipeline (a
 * member combines its children's contributions to one segment one after
 * another, and sends a segment to its children one after another).
 * Local steps, per segment: a copy SEND -> accumulator at every member
 * with children and at the root, and one step of 0 bytes at the root
 * (n > 1) that all its children's contributions come into and all the
 * copies down wait for, so that a root with k children costs k + 1
 * dependencies, not k * k.
 *
 * Up (coll/reduce/tree.c, shared): a member with children accumulates in
 * its WORK (a local copy SEND -> WORK first), the tree root in its RECV;
 * each child REDUCEs its accumulator (a leaf: its SEND) into its parent's
 * after the parent's copy and after all of its own children.  Down: the
 * root's RECV segment is final once its copy and its children's REDUCEs
 * are in (the 0-byte step); each member then COPYs its parent's RECV
 * segment into its own, after its parent got it.  A member's RECV is
 * written only by the copy down (the root's: by its copy and the REDUCEs,
 * all before anything reads it), and read only by its children's copies
 * down, which wait for it.
 *
 * Segmentation: params.segment > 0 (a multiple of the type size) cuts B
 * into segments of that size; 0 picks topo__auto_segment once B reaches
 * 256 KiB, as reduce does: 64 KiB, or for a group on one node 256 KiB,
 * from 4 members half of B within 256 KiB and 1 MiB (plan.c).
 *
 * Receipt slots: one per (segment, member), slot0 + rank within a
 * segment, expecting the member's number of children (the REDUCEs into
 * its accumulator) plus 1 for the copy down (none at the root).
 */
#define TOPO_INTERNAL
#include "allreduce.h"
#include "coll_pattern.h"
#include "plan/plan.h"

/* More messages than this is refused (plan.c's limit too), here with a
 * hint at the segment size. */
#define ALLREDUCE_MAX_MESSAGES ((int64_t)1 << 30)

/* The broadcast of one segment [off, off + len) down the tree, after the
 * reduce up (ids) into the root's RECV; order is the tree's breadth-first
 * order, down[] scratch of n ids. */
static int emit_down(struct topo_plan *p, const struct topo__reduce_ids *ids,
		     const int32_t *order, int64_t *down, int64_t off,
		     int64_t len, int64_t slot0, topo_error *err)
{
	const topo_tree *t = p->t;
	int32_t n = p->n, R = t->root;
	struct topo__msg m;
	int64_t join = -1;
	int rc;

	if (n == 1)
		return 0;
	/* The root's segment is final once its copy and every child's
	 * REDUCE are in. */
	rc = topo__local_copy(p, R, TOPO__RECV, off, TOPO__RECV, off, 0, &join,
			      err);
	if (rc == 0)
		rc = topo__plan_dep(p, ids->init[R], join, err);
	for (int32_t k = t->child_off[R]; rc == 0 && k < t->child_off[R + 1];
	     k++)
		rc = topo__plan_dep(p, ids->up[t->child[k]], join, err);
	down[R] = join;
	/* Parents before children. */
	topo__msg_init(&m, TOPO__COPY, TOPO__RECV, TOPO__RECV, len);
	m.soff = m.doff = off;
	for (int32_t i = 1; rc == 0 && i < n; i++) {
		int32_t v = order[i];

		m.src = t->parent[v];
		m.dst = v;
		m.slot = slot0 + v;
		rc = topo__plan_msg(p, &m, &down[v], err);
		if (rc == 0)
			rc = topo__plan_dep(p, down[m.src], down[v], err);
	}
	return rc;
}

int topo__allreduce_over_tree(struct topo_plan *p, const char *name,
			      topo_error *err)
{
	const topo_tree *t = p->t;
	int32_t n = p->n, R = t->root, *order = NULL;
	struct topo__reduce_ids ids = {NULL, NULL};
	int64_t B = (int64_t)p->params.bytes, seg, nseg, per_seg, *down = NULL;
	int rc = topo__plan_segment(p, B, TOPO__AUTO_SEGMENT_MIN,
				    topo__auto_segment(p), &seg, &nseg, err);

	if (rc != 0)
		return rc;
	/* Messages per segment: at most a copy and a REDUCE per member, the
	 * root's step and a copy down per member. */
	per_seg = 3 * (int64_t)n;
	rc = topo__plan_segments_fit(p, nseg, seg, per_seg, 0,
				     ALLREDUCE_MAX_MESSAGES, err);

	for (int32_t v = 0; rc == 0 && v < n; v++) {
		int32_t nc = t->child_off[v + 1] - t->child_off[v];

		rc = topo__plan_bufsize(p, TOPO__SEND, v, B, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, v, B, err);
		if (rc == 0 && nc > 0 && v != R)
			rc = topo__plan_bufsize(p, TOPO__WORK, v, B, err);
	}
	/* Per segment: per_seg messages; a dependency per member's copy, per
	 * tree edge up, per child of the root and per edge down: 4n. */
	if (rc == 0)
		rc = topo__plan_expect(p, nseg * per_seg, nseg * 4 * (int64_t)n,
				       nseg * n, err);
	if (rc != 0)
		return rc;
	ids.init = topo__mallocarray((size_t)n, sizeof(int64_t));
	ids.up = topo__mallocarray((size_t)n, sizeof(int64_t));
	down = topo__mallocarray((size_t)n, sizeof(int64_t));
	order = topo__mallocarray((size_t)n, sizeof(int32_t));
	if (ids.init == NULL || ids.up == NULL || down == NULL ||
	    order == NULL) {
		rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
			       "out of memory planning allreduce %s over %d "
			       "members",
			       name, (int)n);
		goto done;
	}
	topo__pattern_bfs(n, R, t->child_off, t->child, order);
	for (int64_t k = 0; rc == 0 && k < nseg; k++) {
		int64_t slot0 = -1, off = k * (int64_t)seg,
			len = B - off < (int64_t)seg ? B - off : (int64_t)seg;

		rc = topo__plan_slots(p, n, -1, &slot0, err);
		for (int32_t v = 0; rc == 0 && p->slot_expect != NULL && v < n;
		     v++)
			p->slot_expect[slot0 + v] =
			    t->child_off[v + 1] - t->child_off[v] + (v != R);
		if (rc == 0)
			rc = topo__reduce_up_segment(p, &ids, off, len, slot0,
						     err);
		if (rc == 0)
			rc = emit_down(p, &ids, order, down, off, len, slot0,
				       err);
	}
done:
	topo__free(ids.init);
	topo__free(ids.up);
	topo__free(down);
	topo__free(order);
	return rc;
}

int topo__plan_allreduce_tree(struct topo_plan *p, topo_error *err)
{
	return topo__allreduce_over_tree(p, "tree", err);
}
