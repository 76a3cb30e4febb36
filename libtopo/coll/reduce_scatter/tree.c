/*
 * coll/reduce_scatter/tree.c - reduce-scatter "tree": the whole vector of n
 * blocks is reduced up the tree into its root, as reduce "tree" does, and
 * the root scatters block r of the result to member r down the tree, as
 * scatter "tree" does.
 *
 * Cost, n members, B bytes per block (n B per member), the vector cut in
 * S segments, tree depth d: S(n - 1) transport REDUCE messages moving
 * (n - 1) n B bytes, then n - 1 COPY messages moving B * sum over members
 * v != root of |subtree(v)| bytes; time about
 * (d + S - 1)(alpha + (n B / S)(beta + gamma)) for the reduction and
 * d alpha plus the largest subtree's bytes * beta for the scatter.
 * Local steps: S copies per member with children (its SEND into its
 * accumulator), one copy per member with children (its block out of the
 * scattered ones), and at the root one per run it packs.
 *
 * Reduction (coll/reduce/tree.c): a member with children accumulates in
 * its WORK (n B, a local copy SEND -> WORK first, per segment); each child
 * REDUCEs its accumulator into its parent's, after the parent's copy and
 * after all of its own children; a leaf REDUCEs straight from its SEND.
 * The root's WORK ends with the reduced vector in rank order.
 *
 * Segmentation: params.segment > 0 (a multiple of the type size) cuts the
 * n B bytes into segments of that size; 0 picks 64 KiB segments once the
 * vector reaches 256 KiB, as reduce does.  Segments pipeline up the tree
 * independently, each with its own receipt slots.
 *
 * Scatter (coll/scatter/tree.c's layout), the tree-like choice: the tree
 * is numbered in preorder, children ascending; a member v with a subtree
 * of s > 1 members receives the s result blocks packed in preorder into
 * its WORK, keeps block 0 (WORK -> RECV) and sends each child c its
 * subtree's slice at (pre(c) - pre(v)) * B; a leaf receives its block
 * straight into RECV.  The root keeps its block first (WORK at root * B ->
 * RECV), a copy that waits for every child's last segment and so marks
 * the reduction complete; everything the root scatters waits for that
 * copy alone.  It sends a child's subtree straight from its accumulator
 * when the subtree is one run of consecutive ranks, else it packs the
 * runs first into WORK beyond the accumulator, at n B + (pre - 1) * B.
 * A member's scattered blocks overwrite the start of its accumulator:
 * they arrive after the root's copy, which waited (through the tree) for
 * every REDUCE out of and into that accumulator.
 *
 * Receipt slots: one per (segment, member) for the reduction, numbered
 * slot0 + rank within a segment, expecting the member's number of
 * children; one per member for the scatter (s0 + rank), expecting 1 (the
 * root's 0).
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* Automatic segmentation, as reduce "tree" (see there). */
#define RS_AUTO_MIN ((int64_t)256 << 10)
#define RS_AUTO_SEGMENT ((int64_t)64 << 10)
#define RS_MAX_MESSAGES ((int64_t)1 << 30)

/* The ids of one segment's messages that others wait for. */
struct rs_ids {
	int64_t *init, *up;
};

/* Bytes [off, off + len) of the vector, up the tree into the root's WORK,
 * counted by slots slot0 + rank; every REDUCE into the root is a
 * dependency of the root's keep. */
static int reduce_segment(struct topo_plan *p, const struct topo__layout *l,
			  struct rs_ids *ids, int64_t off, int64_t len,
			  int64_t slot0, int64_t keep, topo_error *err)
{
	int32_t n = p->n, root = p->t->root;
	const int32_t *par = l->par, *size = l->size;
	struct topo__msg m;
	int rc = 0;

	for (int32_t v = 0; rc == 0 && v < n; v++) {
		ids->init[v] = -1;
		if (size[v] == 1)
			continue;
		rc = topo__local_copy(p, v, TOPO__SEND, off, TOPO__WORK, off,
				      len, &ids->init[v], err);
	}
	topo__msg_init(&m, TOPO__REDUCE, TOPO__SEND, TOPO__WORK, len);
	m.soff = m.doff = off;
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		int32_t pv = par[v];

		ids->up[v] = -1;
		if (pv < 0)
			continue;
		m.src = v;
		m.dst = pv;
		m.sbuf = size[v] > 1 ? TOPO__WORK : TOPO__SEND;
		m.slot = slot0 + pv;
		rc = topo__plan_msg(p, &m, &ids->up[v], err);
		if (rc == 0)
			rc = topo__plan_dep(p, ids->init[pv], ids->up[v], err);
		if (rc == 0 && pv == root)
			rc = topo__plan_dep(p, ids->up[v], keep, err);
	}
	/* A member sends up once everything below it is in. */
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		int32_t pv = par[v];

		if (pv >= 0 && pv != root)
			rc = topo__plan_dep(p, ids->up[v], ids->up[pv], err);
	}
	return rc;
}

int topo__plan_reduce_scatter_tree(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n, root = p->t->root;
	struct topo__layout lay;
	struct rs_ids ids = {NULL, NULL};
	int64_t *arrival = NULL, B = (int64_t)p->params.bytes;
	int64_t V = (int64_t)n * B, seg, nseg, keep = -1, s0 = -1;
	int rc = topo__plan_segment(p, V, RS_AUTO_MIN, RS_AUTO_SEGMENT, &seg,
				    &nseg, err);

	if (rc != 0)
		return rc;
	rc = topo__plan_segments_fit(p, nseg, seg, 2 * (int64_t)n,
				     3 * (int64_t)n, RS_MAX_MESSAGES, err);
	if (rc != 0)
		return rc;
	if (topo__layout_new(&lay, p->t, n, root) != 0)
		return topo__nomem(err, "reduce-scatter tree", n);

	for (int32_t v = 0; rc == 0 && v < n; v++) {
		int64_t work = lay.size[v] > 1 ? V : 0;

		if (v == root && lay.packs)
			work += (int64_t)(n - 1) * B;
		rc = topo__plan_bufsize(p, TOPO__SEND, v, V, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, v, B, err);
		if (rc == 0 && work > 0)
			rc = topo__plan_bufsize(p, TOPO__WORK, v, work, err);
	}
	/* Per segment a copy and a REDUCE per member with three
	 * dependencies; the scatter: a message, a keep and a packing per
	 * member at most, with four dependencies. */
	if (rc == 0)
		rc = topo__plan_expect(p, nseg * 2 * n + 3 * (int64_t)n,
				       nseg * 3 * n + 4 * (int64_t)n,
				       nseg * n + n, err);
	if (rc != 0)
		goto done;
	if (n == 1) {
		rc = topo__local_copy(p, 0, TOPO__SEND, 0, TOPO__RECV, 0, B,
				      NULL, err);
		goto done;
	}
	ids.init = topo__mallocarray((size_t)n, sizeof(int64_t));
	ids.up = topo__mallocarray((size_t)n, sizeof(int64_t));
	arrival = topo__mallocarray((size_t)n, sizeof(int64_t));
	if (ids.init == NULL || ids.up == NULL || arrival == NULL) {
		rc = topo__nomem(err, "reduce-scatter tree", n);
		goto done;
	}
	/* The root's own block, planned first so that each segment can
	 * make it wait for its last REDUCEs into the root. */
	rc = topo__local_copy(p, root, TOPO__WORK, (int64_t)root * B,
			      TOPO__RECV, 0, B, &keep, err);
	for (int64_t k = 0; rc == 0 && k < nseg; k++) {
		int64_t slot0 = -1, off = k * seg;

		rc = topo__plan_slots(p, n, -1, &slot0, err);
		for (int32_t v = 0; rc == 0 && p->slot_expect != NULL && v < n;
		     v++)
			p->slot_expect[slot0 + v] =
			    lay.coff[v + 1] - lay.coff[v];
		if (rc == 0)
			rc = reduce_segment(p, &lay, &ids, off,
					    V - off < seg ? V - off : seg,
					    slot0, keep, err);
	}
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, &s0, err);
	for (int32_t v = 0; rc == 0 && p->slot_expect != NULL && v < n; v++)
		p->slot_expect[s0 + v] = v == root ? 0 : 1;
	if (rc == 0)
		rc = topo__scatter_down(p, &lay, root, B, TOPO__WORK,
					(int64_t)n * B, keep, s0, arrival, err);
done:
	topo__layout_free(&lay);
	topo__free(ids.init);
	topo__free(ids.up);
	topo__free(arrival);
	return rc;
}
