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
#include "plan/plan.h"

/* Buffers, the expected size, and the gather's (g0) and broadcast's
 * (b0) receipt slots. */
static int setup(struct topo_plan *p, const struct topo__layout *l, int64_t *g0,
		 int64_t *b0, topo_error *err)
{
	int32_t n = p->n, root = p->t->root;
	int64_t B = (int64_t)p->params.bytes;
	int rc;

	rc = topo__plan_bufsize(p, TOPO__WORK, root,
				l->packs ? (int64_t)(n - 1) * B : 0, err);
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, v, B, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, v,
						(int64_t)n * B, err);
		if (rc == 0 && v != root && l->size[v] > 1)
			rc = topo__plan_bufsize(p, TOPO__WORK, v,
						(int64_t)l->size[v] * B, err);
	}
	/* Gather: a copy and a message per member, an unpacking per run at
	 * most; broadcast: a message per member.  Dependencies: one per
	 * tree edge and own copy up, per run and per child of the root at
	 * the join, per edge down. */
	if (rc == 0)
		rc = topo__plan_expect(p, 4 * (int64_t)n, 5 * (int64_t)n,
				       2 * (int64_t)n, err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, g0, err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, b0, err);
	for (int32_t v = 0; rc == 0 && p->slot_expect != NULL && v < n; v++) {
		p->slot_expect[*g0 + v] = l->coff[v + 1] - l->coff[v];
		p->slot_expect[*b0 + v] = v == root ? 0 : 1;
	}
	return rc;
}

/* The join at the root: the unpacking of every child's subtree that is not
 * one run (up[c] then names its last unpacking: the unpackings of one
 * subtree wait for each other, cheap and local), then the root's own block
 * last, *done, which waits for every block so that the broadcast need wait
 * for it alone. */
static int join(struct topo_plan *p, const struct topo__layout *l, int64_t *up,
		int64_t *arr, int64_t *done, topo_error *err)
{
	int32_t root = p->t->root;
	int64_t B = (int64_t)p->params.bytes;
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__WORK, TOPO__RECV, 0);
	m.src = m.dst = root;
	for (int32_t k = l->coff[root]; rc == 0 && k < l->coff[root + 1]; k++) {
		int32_t c = l->ch[k], lo = l->pre[c],
			hi = l->pre[c] + l->size[c];

		if (topo__pattern_runs(l->order, lo, hi) == 1)
			continue;
		for (int32_t j = lo; rc == 0 && j < hi;) {
			int32_t e = topo__pattern_run_end(l->order, j, hi);

			m.soff = (int64_t)(j - 1) * B;
			m.doff = (int64_t)l->order[j] * B;
			m.len = (int64_t)(e - j) * B;
			rc = topo__plan_msg(p, &m, &arr[c], err);
			if (rc == 0)
				rc = topo__plan_dep(p, up[c], arr[c], err);
			if (rc == 0)
				up[c] = arr[c];
			j = e;
		}
	}
	if (rc == 0)
		rc = topo__local_copy(p, root, TOPO__SEND, 0, TOPO__RECV,
				      (int64_t)root * B, B, done, err);
	for (int32_t k = l->coff[root]; rc == 0 && k < l->coff[root + 1]; k++)
		rc = topo__plan_dep(p, up[l->ch[k]], *done, err);
	return rc;
}

/* The broadcast of the root's RECV, in preorder: a member's arrival
 * (arr[v]) exists before its forwards. */
static int bcast_down(struct topo_plan *p, const struct topo__layout *l,
		      int64_t b0, int64_t done, int64_t *arr, topo_error *err)
{
	int32_t n = p->n, root = p->t->root;
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__RECV, TOPO__RECV,
		       (int64_t)n * (int64_t)p->params.bytes);
	for (int32_t i = 0; rc == 0 && i < n; i++) {
		int32_t v = l->order[i];

		for (int32_t k = l->coff[v]; rc == 0 && k < l->coff[v + 1];
		     k++) {
			int32_t c = l->ch[k];

			m.src = v;
			m.dst = c;
			m.slot = b0 + c;
			rc = topo__plan_msg(p, &m, &arr[c], err);
			if (rc == 0)
				rc = topo__plan_dep(
				    p, v == root ? done : arr[v], arr[c], err);
		}
	}
	return rc;
}

int topo__plan_allgather_tree(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n, root = p->t->root;
	struct topo__layout lay;
	int64_t *up = NULL, *arr = NULL, B = (int64_t)p->params.bytes;
	int64_t g0 = -1, b0 = -1, done_id = -1;
	int rc = TOPO_ENOMEM;

	if (topo__layout_new(&lay, p->t, n, root) != 0)
		goto nomem;
	up = topo__mallocarray((size_t)n, sizeof(int64_t));
	arr = topo__mallocarray((size_t)n, sizeof(int64_t));
	if (up == NULL || arr == NULL)
		goto nomem;
	rc = setup(p, &lay, &g0, &b0, err);
	/* Gather (coll/gather/tree.c's). */
	if (rc == 0)
		rc = topo__gather_up(p, &lay, root, B, g0, up, err);
	if (rc == 0)
		rc = join(p, &lay, up, arr, &done_id, err);
	if (rc == 0)
		rc = bcast_down(p, &lay, b0, done_id, arr, err);
	goto done;
nomem:
	rc = topo__nomem(err, "allgather tree", n);
done:
	topo__layout_free(&lay);
	topo__free(up);
	topo__free(arr);
	return rc;
}
