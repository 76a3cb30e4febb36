/*
 * coll/allgather/tree.c - allgather "tree": every member's block goes up
 * the tree to its root, as gather "tree" takes it there, and the root's
 * whole RECV, all n blocks in rank order, comes down the tree to every
 * member, as a broadcast.
 *
 * Cost, n members, B bytes per member: 2(n - 1) transport messages: the
 * n - 1 of the gather, moving B * sum over members v != root of
 * |subtree(v)| bytes, and the n - 1 of the broadcast, of n B bytes each;
 * time about 2 depth alpha plus the largest subtree's bytes and depth
 * times n B, times beta.  Local steps: one copy per member with children
 * (its own block into WORK), one at the root, and one per run the root
 * unpacks.
 *
 * Gather (coll/gather/tree.c's layout): the tree is numbered in preorder,
 * children ascending.  A member v with a subtree of s > 1 members gathers
 * the s blocks in its WORK packed in preorder, its own at 0 (a local copy
 * SEND -> WORK), each child c's subtree at (pre(c) - pre(v)) * B, written
 * there by c's one message; once they are in, v sends its WORK (s * B) to
 * its parent.  A leaf sends its SEND.  A child of the root whose subtree
 * is one run of consecutive ranks sends straight into the root's RECV at
 * the run's first rank * B; any other lands in the root's WORK at
 * (pre - 1) * B, and the root unpacks it into RECV with one local copy per
 * run.  Unpacking at the root alone is the cheapest place for it: every
 * other member receives the rank-ordered result whole and copies nothing.
 *
 * Broadcast: the root's copy of its own block into RECV at root * B waits
 * for every child's message (or the unpacking of it) and so marks its
 * RECV complete; the root then sends RECV (n * B) to each child, and every
 * member forwards its RECV, once in, to each of its children.  A member
 * other than the root gets its own block back with the others (the
 * broadcast writes the whole RECV once, which a local copy of the own
 * block would race with); its WORK, used by the gather, is untouched.
 *
 * Receipt slots: two per member: slot g0 + rank for the gather, expecting
 * as many arrivals as the member has children, slot b0 + rank for the
 * broadcast, expecting 1 (the root's 0).
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "exec_internal.h"

#include <string.h>

int topo__plan_allgather_tree(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n, root = p->t->root;
	struct topo__layout lay;
	int32_t *coff, *ch, *order, *pre, *size;
	int64_t *up = NULL, *arr = NULL, B = (int64_t)p->params.bytes;
	int64_t g0 = -1, b0 = -1, done_id = -1;
	struct topo__msg m;
	int packs, rc = TOPO_ENOMEM;

	if (topo__layout_new(&lay, p->t, n, root) != 0)
		goto nomem;
	coff = lay.coff;
	ch = lay.ch;
	order = lay.order;
	pre = lay.pre;
	size = lay.size;
	packs = lay.packs;
	up = topo__mallocarray((size_t)n, sizeof(int64_t));
	arr = topo__mallocarray((size_t)n, sizeof(int64_t));
	if (up == NULL || arr == NULL)
		goto nomem;

	rc = topo__plan_bufsize(p, TOPO__WORK, root,
				packs ? (int64_t)(n - 1) * B : 0, err);
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, v, B, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, v,
						(int64_t)n * B, err);
		if (rc == 0 && v != root && size[v] > 1)
			rc = topo__plan_bufsize(p, TOPO__WORK, v,
						(int64_t)size[v] * B, err);
	}
	/* Gather: a copy and a message per member, an unpacking per run at
	 * most; broadcast: a message per member.  Dependencies: one per
	 * tree edge and own copy up, per run and per child of the root at
	 * the join, per edge down. */
	if (rc == 0)
		rc = topo__plan_expect(p, 4 * (int64_t)n, 5 * (int64_t)n,
				       2 * (int64_t)n, err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, &g0, err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, &b0, err);
	for (int32_t v = 0; rc == 0 && p->slot_expect != NULL && v < n; v++) {
		p->slot_expect[g0 + v] = coff[v + 1] - coff[v];
		p->slot_expect[b0 + v] = v == root ? 0 : 1;
	}

	memset(&m, 0, sizeof(m));
	m.kind = TOPO__COPY;
	/* Gather (coll/gather/tree.c's). */
	if (rc == 0)
		rc = topo__gather_up(p, &lay, root, B, g0, up, err);

	/* The root's own block last: it waits for every block, so the
	 * broadcast need wait for it alone.  The unpacking first. */
	for (int32_t k = coff[root]; rc == 0 && k < coff[root + 1]; k++) {
		int32_t c = ch[k], lo = pre[c], hi = pre[c] + size[c];

		if (topo__pattern_runs(order, lo, hi) == 1)
			continue;
		m.src = m.dst = root;
		m.sbuf = TOPO__WORK;
		m.dbuf = TOPO__RECV;
		m.slot = -1;
		for (int32_t j = lo; rc == 0 && j < hi;) {
			int32_t e = topo__pattern_run_end(order, j, hi);

			m.soff = (int64_t)(j - 1) * B;
			m.doff = (int64_t)order[j] * B;
			m.len = (int64_t)(e - j) * B;
			/* up[c] now names the last unpacking of c's
			 * subtree, for the join below: the unpackings of
			 * one subtree wait for each other (cheap, local). */
			rc = topo__plan_msg(p, &m, &arr[c], err);
			if (rc == 0)
				rc = topo__plan_dep(p, up[c], arr[c], err);
			if (rc == 0)
				up[c] = arr[c];
			j = e;
		}
	}
	m.src = m.dst = root;
	m.sbuf = TOPO__SEND;
	m.dbuf = TOPO__RECV;
	m.soff = 0;
	m.doff = (int64_t)root * B;
	m.len = B;
	m.slot = -1;
	if (rc == 0)
		rc = topo__plan_msg(p, &m, &done_id, err);
	for (int32_t k = coff[root]; rc == 0 && k < coff[root + 1]; k++)
		rc = topo__plan_dep(p, up[ch[k]], done_id, err);

	/* Broadcast, in preorder: a member's arrival exists before its
	 * forwards. */
	m.sbuf = m.dbuf = TOPO__RECV;
	m.soff = m.doff = 0;
	m.len = (int64_t)n * B;
	for (int32_t i = 0; rc == 0 && i < n; i++) {
		int32_t v = order[i];

		for (int32_t k = coff[v]; rc == 0 && k < coff[v + 1]; k++) {
			int32_t c = ch[k];

			m.src = v;
			m.dst = c;
			m.slot = b0 + c;
			rc = topo__plan_msg(p, &m, &arr[c], err);
			if (rc == 0)
				rc = topo__plan_dep(
				    p, v == root ? done_id : arr[v], arr[c],
				    err);
		}
	}
	goto done;
nomem:
	rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
		       "out of memory planning allgather tree over %d members",
		       (int)n);
done:
	topo__layout_free(&lay);
	topo__free(up);
	topo__free(arr);
	return rc;
}
