/*
 * coll/reduce/tree.c - reduce "tree" and reduce "hierarchical" (seed 001, the
 * default): contributions are combined up the tree towards its
 * compile-time root; a --root other than the tree's gets the result
 * forwarded to it.
 *
 * Cost, n members, B bytes per member in S segments, tree depth d:
 * S(n - 1) transport REDUCE messages moving (n - 1)B bytes in all, plus S
 * COPY messages (B bytes) when the logical root is not the tree's root;
 * time about (d + S - 1)(alpha + (B/S)(beta + gamma)) once the segments
 * pipeline up the tree, a member with k children combining k contributions
 * to one segment one after another (the transport serialises reductions
 * into overlapping bytes) but different segments at once.  Local steps:
 * S copies per member with children (its SEND into its accumulator).
 *
 * Accumulators: a member with children accumulates in its WORK (a local
 * copy SEND -> WORK first), or in its RECV when it is the tree root and
 * the logical root (the result is then in place).  Each child REDUCEs its
 * accumulator into its parent's, after the parent's copy and after all of
 * the child's own children; a leaf REDUCEs straight from its SEND (the
 * same bytes an accumulator would hold, without the copy or the WORK).
 * The tree root's final WORK is then copied to the logical root's RECV.
 *
 * Segmentation: params.segment > 0 (a multiple of the type size) cuts B
 * into segments of that size; 0 picks topo__auto_segment bytes once B
 * reaches 256 KiB, as bcast does: 64 KiB, or for a group on one node 256
 * KiB, from 4 members half of B within 256 KiB and 1 MiB (below, and
 * plan.c).  Each segment is the plan above
 * over its own bytes [off, off + len) of every buffer, with its own
 * receipt slots, so a member's segment k goes up as soon as segment k of
 * its children is in, while segment k + 1 is still being combined below.
 *
 * "hierarchical" is this plan over the hierarchical tree (collc(7)), which
 * gives seed 001's three phases without any extra synchronisation:
 *   1. on every other node, members REDUCE into their node's local root
 *      through shared memory (shm edges, in parallel across nodes);
 *   2. each local root, once its node is in, REDUCEs into its parent on
 *      the identified node over the network (net edges, in parallel);
 *   3. the identified node's members REDUCE into the global root (shm).
 * Segments pipeline through the three phases.  It refuses any other tree:
 * its phases are the hierarchical shape's.
 *
 * Receipt slots: one per (segment, member), numbered slot0 + rank within a
 * segment, expecting the member's number of children, plus 1 at the
 * logical root when the result is forwarded.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "reduce.h"
#include "plan/plan.h"

/*
 * Automatic segmentation, as bcast's (topo__auto_segment): 64 KiB
 * segments once B reaches 256 KiB.  A segment of the accumulator stays in
 * a core's cache while all the children's contributions stream into it,
 * and different segments combine on different threads.  Below 32 KiB
 * the messages start to cost more than they spread (docs/CONSTANTS.md).
 * Within one node the segments are 256 KiB (plan.c, topo__auto_segment).
 */

/* More messages than this is refused (plan.c's limit too), here with a
 * hint at the segment size. */
#define REDUCE_MAX_MESSAGES ((int64_t)1 << 30)

/* Emits one segment: bytes [off, off + len) of every member's buffers,
 * counted by slots slot0 + rank (allreduce.h: allreduce tree and
 * hierarchical reduce the same way, then broadcast back down). */
int topo__reduce_up_segment(struct topo_plan *p, struct topo__reduce_ids *ids,
			    int64_t off, int64_t len, int64_t slot0,
			    topo_error *err)
{
	const topo_tree *t = p->t;
	int32_t n = p->n, R = t->root, L = p->root;
	int64_t *init = ids->init, *up = ids->up;
	struct topo__msg m;
	int rc = 0;

	/* Accumulators start as the member's own contribution. */
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		init[v] = -1;
		if (t->child_off[v + 1] == t->child_off[v] && v != R)
			continue;
		rc = topo__local_copy(
		    p, v, TOPO__SEND, off,
		    v == R && L == R ? TOPO__RECV : TOPO__WORK, off, len,
		    &init[v], err);
	}
	/* Each member's contribution into its parent's accumulator. */
	topo__msg_init(&m, TOPO__REDUCE, TOPO__SEND, TOPO__WORK, len);
	m.soff = m.doff = off;
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		int32_t pv = t->parent[v];

		up[v] = -1;
		if (pv < 0)
			continue;
		m.src = v;
		m.dst = pv;
		m.sbuf = init[v] >= 0 ? TOPO__WORK : TOPO__SEND;
		m.dbuf = pv == R && L == R ? TOPO__RECV : TOPO__WORK;
		m.slot = slot0 + pv;
		rc = topo__plan_msg(p, &m, &up[v], err);
		if (rc == 0)
			rc = topo__plan_dep(p, init[pv], up[v], err);
	}
	/* A member sends up once everything below it has come in (its own
	 * copy came first: its children waited for it). */
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		int32_t pv = t->parent[v];

		if (pv >= 0 && pv != R)
			rc = topo__plan_dep(p, up[v], up[pv], err);
	}
	/* A logical root other than the tree's gets the result. */
	if (rc == 0 && L != R) {
		int64_t fwd;

		m.src = R;
		m.dst = L;
		m.kind = TOPO__COPY;
		m.sbuf = TOPO__WORK;
		m.dbuf = TOPO__RECV;
		m.slot = slot0 + L;
		rc = topo__plan_msg(p, &m, &fwd, err);
		if (rc == 0)
			rc = topo__plan_dep(p, init[R], fwd, err);
		for (int32_t k = t->child_off[R];
		     rc == 0 && k < t->child_off[R + 1]; k++)
			rc = topo__plan_dep(p, up[t->child[k]], fwd, err);
	}
	return rc;
}

static int reduce_over_tree(struct topo_plan *p, const char *name,
			    topo_error *err)
{
	const topo_tree *t = p->t;
	int32_t n = p->n, R = t->root, L = p->root;
	struct topo__reduce_ids ids = {NULL, NULL};
	int64_t B = (int64_t)p->params.bytes, seg, nseg, per_seg;
	int rc = topo__plan_segment(p, B, TOPO__AUTO_SEGMENT_MIN,
				    topo__auto_segment(p), &seg, &nseg, err);

	if (rc != 0)
		return rc;
	/* Messages per segment: at most a copy and a REDUCE per member, and
	 * the forward. */
	per_seg = 2 * (int64_t)n + 1;
	rc = topo__plan_segments_fit(p, nseg, seg, per_seg, 0,
				     REDUCE_MAX_MESSAGES, err);

	/* Buffers first (plan.c checks them against memory before the first
	 * message is built). */
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		int32_t nc = t->child_off[v + 1] - t->child_off[v];

		rc = topo__plan_bufsize(p, TOPO__SEND, v, B, err);
		if (rc == 0 && nc > 0 && !(v == R && L == R))
			rc = topo__plan_bufsize(p, TOPO__WORK, v, B, err);
	}
	if (rc == 0)
		rc = topo__plan_bufsize(p, TOPO__RECV, L, B, err);
	/* Per segment: per_seg messages, at most a dependency per member's
	 * copy, per tree edge and per child of the forward, and a counter
	 * per member. */
	if (rc == 0)
		rc = topo__plan_expect(p, nseg * per_seg, nseg * 3 * (int64_t)n,
				       nseg * n, err);
	if (rc != 0)
		return rc;
	ids.init = topo__mallocarray((size_t)n, sizeof(int64_t));
	ids.up = topo__mallocarray((size_t)n, sizeof(int64_t));
	if (ids.init == NULL || ids.up == NULL) {
		rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
			       "out of memory planning reduce %s over %d "
			       "members",
			       name, (int)n);
		goto done;
	}
	for (int64_t k = 0; rc == 0 && k < nseg; k++) {
		int64_t slot0 = -1, off = k * (int64_t)seg;

		/* topo__reduce_up_segment names slots slot0 + rank. */
		rc = topo__plan_slots(p, n, -1, &slot0, err);
		for (int32_t v = 0; rc == 0 && p->slot_expect != NULL && v < n; v++)
			p->slot_expect[slot0 + v] = t->child_off[v + 1] -
						    t->child_off[v] +
						    (v == L && L != R);
		if (rc == 0)
			rc = topo__reduce_up_segment(
			    p, &ids, off,
			    B - off < (int64_t)seg ? B - off : (int64_t)seg,
			    slot0, err);
	}
done:
	topo__free(ids.init);
	topo__free(ids.up);
	return rc;
}

int topo__plan_reduce_tree(struct topo_plan *p, topo_error *err)
{
	return reduce_over_tree(p, "tree", err);
}

/*
 * The hierarchical algorithm's phases are those of the hierarchical
 * shape, so the tree must be that shape over its group: the parents are
 * recomputed (tree_hierarchical.c) and compared, which also catches a tree
 * loaded from a file under the name "hierarchical" but edited since.
 * Allreduce hierarchical checks its tree the same way (allreduce.h).
 */
int topo__check_hierarchical_tree(const struct topo_plan *p, const char *op,
				  topo_error *err)
{
	const topo_tree *t = p->t;
	const int32_t *mem = t->g->members;
	int32_t *want, bad = -1;

	want = topo__mallocarray((size_t)p->n, sizeof(int32_t));
	if (want == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory planning %s hierarchical "
				 "over %d members",
				 op, (int)p->n);
	topo__tree_hierarchical(t->g, want, NULL);
	for (int32_t v = 0; v < p->n && bad < 0; v++)
		if (want[v] != t->parent[v])
			bad = v;
	if (bad >= 0) {
		int32_t got = t->parent[bad], exp = want[bad];

		topo__free(want);
		return topo__err(
		    err, TOPO_EARG, NULL, NULL,
		    "algorithm hierarchical needs the hierarchical tree "
		    "(-t hierarchical); tree \"%s\" differs from it at "
		    "endpoint %d (parent %d, hierarchical: %d); algorithm "
		    "tree (--algorithm tree) reduces over any tree",
		    t->name, (int)mem[bad], got < 0 ? -1 : (int)mem[got],
		    exp < 0 ? -1 : (int)mem[exp]);
	}
	topo__free(want);
	return 0;
}

int topo__plan_reduce_hierarchical(struct topo_plan *p, topo_error *err)
{
	int rc = topo__check_hierarchical_tree(p, "reduce", err);

	return rc != 0 ? rc : reduce_over_tree(p, "hierarchical", err);
}
