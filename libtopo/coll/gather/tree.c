/*
 * coll/gather/tree.c - gather "tree": every member's block goes up the tree,
 * re-rooted at the logical root, to land at rank * B in the root's RECV.
 *
 * Cost, n members, B bytes per member: n - 1 transport messages moving
 * B * sum over members v != root of |subtree(v)| bytes (the scatter tree's
 * traffic, reversed); time about depth * alpha plus the largest subtree's
 * bytes * beta.  Local steps: one copy per member with children (its own
 * block into WORK), one at the root, and one per run the root unpacks.
 *
 * Layout (the scatter tree's, see coll/scatter/tree.c): the re-rooted tree is
 * numbered in preorder, children ascending.  A member v with a subtree of
 * s members gathers s blocks in its WORK packed in preorder: its own at 0
 * (a local copy SEND -> WORK), each child c's subtree at
 * (pre(c) - pre(v)) * B, written there by c's one message.  Once the own
 * copy and every child's message are in, v sends its WORK (s * B bytes) to
 * its parent.  A leaf sends its SEND directly.
 *
 * The root keeps its block (SEND -> RECV at root * B).  A child whose
 * subtree is one run of consecutive ranks sends straight into the root's
 * RECV at the run's first rank * B; any other child's subtree lands in the
 * root's WORK at (pre - 1) * B and is unpacked into RECV by one local copy
 * per run.
 *
 * Receipt slots: one per member (slot0 + rank), expecting as many arrivals
 * as the member has children in the re-rooted tree.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* The gather up the packed layout l (rooted at root), blocks of B bytes:
 * every member's block reaches root's RECV (or its WORK, to be unpacked)
 * as described above, counted by slots slot0 + rank; up[v] is the id of
 * member v's message to its parent ([n], the caller's).  Shared with
 * allgather "tree". */
int topo__gather_up(struct topo_plan *p, const struct topo__layout *l,
		    int32_t root, int64_t B, int64_t slot0, int64_t *up,
		    topo_error *err)
{
	const int32_t *par = l->par, *coff = l->coff, *ch = l->ch,
		      *order = l->order, *pre = l->pre, *size = l->size;
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__WORK, 0);
	/* Reverse preorder: a member's whole subtree is planned before it,
	 * so its children's messages exist when it waits for them. */
	for (int32_t i = p->n - 1; rc == 0 && i > 0; i--) {
		int32_t v = order[i], pv = par[v];
		int64_t own = -1;

		if (size[v] > 1)
			rc = topo__local_copy(p, v, TOPO__SEND, 0, TOPO__WORK,
					      0, B, &own, err);
		m.src = v;
		m.dst = pv;
		m.sbuf = size[v] > 1 ? TOPO__WORK : TOPO__SEND;
		m.soff = 0;
		m.len = (int64_t)size[v] * B;
		m.slot = slot0 + pv;
		if (pv != root) {
			m.dbuf = TOPO__WORK;
			m.doff = (int64_t)(pre[v] - pre[pv]) * B;
		} else if (topo__pattern_runs(order, pre[v],
					      pre[v] + size[v]) == 1) {
			m.dbuf = TOPO__RECV;
			m.doff = (int64_t)v * B; /* order[pre[v]] == v */
		} else {
			m.dbuf = TOPO__WORK;
			m.doff = (int64_t)(pre[v] - 1) * B;
		}
		if (rc == 0)
			rc = topo__plan_msg(p, &m, &up[v], err);
		if (rc == 0 && own >= 0)
			rc = topo__plan_dep(p, own, up[v], err);
		for (int32_t k = coff[v]; rc == 0 && k < coff[v + 1]; k++)
			rc = topo__plan_dep(p, up[ch[k]], up[v], err);
	}
	return rc;
}

int topo__plan_gather_tree(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n, root = p->root;
	struct topo__layout lay;
	const int32_t *coff, *order, *pre, *size;
	int64_t *up, B = (int64_t)p->params.bytes, slot0 = -1;
	struct topo__msg m;
	int rc;

	rc = topo__layout_setup(p, &lay, &up, TOPO__RECV, TOPO__SEND, "gather",
				err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, &slot0, err);
	if (rc != 0)
		goto done;
	coff = lay.coff;
	order = lay.order;
	pre = lay.pre;
	size = lay.size;
	for (int32_t v = 0; p->slot_expect != NULL && v < n; v++)
		p->slot_expect[slot0 + v] = coff[v + 1] - coff[v];
	rc = topo__gather_up(p, &lay, root, B, slot0, up, err);

	/* The root: its own block, then each packed child's runs. */
	if (rc == 0)
		rc = topo__local_copy(p, root, TOPO__SEND, 0, TOPO__RECV,
				      (int64_t)root * B, B, NULL, err);
	topo__msg_init(&m, TOPO__COPY, TOPO__WORK, TOPO__RECV, 0);
	m.src = m.dst = root;
	for (int32_t k = coff[root]; rc == 0 && k < coff[root + 1]; k++) {
		int32_t c = lay.ch[k], lo = pre[c], hi = pre[c] + size[c];
		int64_t id;

		if (topo__pattern_runs(order, lo, hi) == 1)
			continue;
		for (int32_t j = lo; rc == 0 && j < hi;) {
			int32_t e = topo__pattern_run_end(order, j, hi);

			m.soff = (int64_t)(j - 1) * B;
			m.doff = (int64_t)order[j] * B;
			m.len = (int64_t)(e - j) * B;
			rc = topo__plan_msg(p, &m, &id, err);
			if (rc == 0)
				rc = topo__plan_dep(p, up[c], id, err);
			j = e;
		}
	}
done:
	topo__layout_free(&lay);
	topo__free(up);
	return rc;
}
