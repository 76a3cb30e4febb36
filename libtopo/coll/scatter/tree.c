/*
 * coll/scatter/tree.c - scatter "tree" (the default): block r of the root's
 * SEND goes to member rank r down the tree, re-rooted at the logical root;
 * each member receives only the blocks of the members beyond it.
 *
 * Cost, n members, B bytes per member: n - 1 transport messages moving
 * B * sum over members v != root of |subtree(v)| bytes (= B times the sum
 * of the members' depths below the root: (n - 1)B on a star, about
 * B n log2(n) / 2 on a binomial tree); time about depth * alpha plus the
 * largest subtree's bytes * beta.  Local steps: one copy per member that
 * has children, plus at the root one per run it packs (below).
 *
 * Layout: the tree is re-rooted at the logical root (coll/pattern.c) and
 * numbered in preorder, children ascending.  A member v with a subtree of
 * s members receives s blocks, packed in preorder (its own first, then each
 * child's subtree in turn), into its WORK, keeps block 0 (WORK -> RECV) and
 * sends each child c the contiguous slice of its WORK at
 * (pre(c) - pre(v)) * B of size(c) * B bytes.  A leaf receives its one
 * block straight into RECV (no WORK, no copy).
 *
 * The root's SEND is in rank order.  For each child c it sends the
 * subtree's blocks straight from SEND when they are one run of consecutive
 * ranks (a binomial tree rooted at rank 0, any chain or k-ary tree rooted
 * at 0, every leaf); otherwise it first packs them into its WORK (at
 * (pre - 1) * B) with one local copy per run, and sends from there.
 *
 * Receipt slots: one per member (slot0 + rank), expecting 1 arrival; the
 * root's expects 0.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* The blocks down the packed layout l (rooted at root), B bytes each:
 * root's blocks in rank order at offset rank * B of its buffer src
 * (TOPO__SEND for scatter, TOPO__WORK for reduce-scatter "tree"), a child
 * subtree that is not one run of ranks packed first into root's WORK at
 * pack0 + (pre - 1) * B; every member with a subtree keeps its own block
 * (WORK -> RECV) once in.  keep >= 0: root's packing and sends wait for
 * message keep.  Slots slot0 + rank; arrival[v] is the id of v's message
 * from its parent ([n], the caller's).  Shared with reduce-scatter. */
int topo__scatter_down(struct topo_plan *p, const struct topo__layout *l,
		       int32_t root, int64_t B, int src, int64_t pack0,
		       int64_t keep, int64_t slot0, int64_t *arrival,
		       topo_error *err)
{
	const int32_t *coff = l->coff, *ch = l->ch, *order = l->order,
		      *pre = l->pre, *size = l->size;
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__WORK, TOPO__WORK, 0);
	/* Preorder visits a parent before its children, so every member's
	 * arrival exists when its forwards are planned. */
	for (int32_t i = 0; rc == 0 && i < p->n; i++) {
		int32_t v = order[i];
		int64_t own = -1;

		if (v != root && size[v] > 1) {
			rc = topo__local_copy(p, v, TOPO__WORK, 0, TOPO__RECV,
					      0, B, &own, err);
			if (rc == 0)
				rc = topo__plan_dep(p, arrival[v], own, err);
		}
		for (int32_t k = coff[v]; rc == 0 && k < coff[v + 1]; k++) {
			int32_t c = ch[k], lo = pre[c], hi = pre[c] + size[c];
			int64_t first_pack = -1, npack = 0;

			m.len = (int64_t)size[c] * B;
			if (v != root) {
				m.sbuf = TOPO__WORK;
				m.soff = (int64_t)(lo - pre[v]) * B;
			} else if (topo__pattern_runs(order, lo, hi) == 1) {
				m.sbuf = (uint8_t)src;
				m.soff = (int64_t)order[lo] * B;
			} else {
				/* Pack the subtree's runs into the root's
				 * WORK, in preorder. */
				for (int32_t j = lo; rc == 0 && j < hi;) {
					int32_t e =
					    topo__pattern_run_end(order, j, hi);
					int64_t pk;

					rc = topo__local_copy(
					    p, root, src, (int64_t)order[j] * B,
					    TOPO__WORK,
					    pack0 + (int64_t)(j - 1) * B,
					    (int64_t)(e - j) * B, &pk, err);
					if (rc == 0 && keep >= 0)
						rc = topo__plan_dep(p, keep, pk,
								    err);
					if (npack++ == 0)
						first_pack = pk;
					j = e;
				}
				m.sbuf = TOPO__WORK;
				m.soff = pack0 + (int64_t)(lo - 1) * B;
			}
			m.src = v;
			m.dst = c;
			m.dbuf = size[c] > 1 ? TOPO__WORK : TOPO__RECV;
			m.doff = 0;
			m.slot = slot0 + c;
			if (rc == 0)
				rc = topo__plan_msg(p, &m, &arrival[c], err);
			if (rc == 0 && (v != root || keep >= 0))
				rc = topo__plan_dep(
				    p, v == root ? keep : arrival[v],
				    arrival[c], err);
			for (int64_t q = 0; rc == 0 && q < npack; q++)
				rc = topo__plan_dep(p, first_pack + q,
						    arrival[c], err);
		}
	}
	return rc;
}

int topo__scatter_slots(struct topo_plan *p, int64_t *slot0, topo_error *err)
{
	int rc = topo__plan_slots(p, p->n, -1, slot0, err);

	for (int32_t v = 0; rc == 0 && p->slot_expect != NULL && v < p->n; v++)
		p->slot_expect[*slot0 + v] = v == p->root ? 0 : 1;
	return rc;
}

int topo__plan_scatter_tree(struct topo_plan *p, topo_error *err)
{
	int32_t root = p->root;
	struct topo__layout lay;
	int64_t *arrival, B = (int64_t)p->params.bytes, slot0 = -1;
	int rc;

	rc = topo__layout_setup(p, &lay, &arrival, TOPO__SEND, TOPO__RECV,
				"scatter", err);
	if (rc == 0)
		rc = topo__scatter_slots(p, &slot0, err);
	/* The root keeps its own block. */
	if (rc == 0)
		rc = topo__local_copy(p, root, TOPO__SEND, (int64_t)root * B,
				      TOPO__RECV, 0, B, NULL, err);
	if (rc == 0)
		rc = topo__scatter_down(p, &lay, root, B, TOPO__SEND, 0, -1,
					slot0, arrival, err);
	topo__layout_free(&lay);
	topo__free(arrival);
	return rc;
}
