/*
 * coll/barrier/tree.c - barrier "tree": a fan-in up the tree to its root,
 * then a fan-out back down (the gather-broadcast barrier; MPICH's and
 * Open MPI's tree barriers have this shape).
 *
 * Fan-in: each member sends a 0-byte message to its parent once it has
 * entered and every one of its children's messages is in.  The root,
 * once it has entered and all its children's messages are in, knows that
 * everyone has entered: it leaves.  Fan-out: the root's release goes to
 * its children, each member forwards it to its own children once it has
 * arrived, and leaves.
 *
 * Cost, n members, tree depth d: 2(n - 1) transport messages of 0 bytes;
 * time about 2d alpha, plus at a member with c children the c receipts
 * of the fan-in and the c sends of the fan-out one after another.  Local
 * steps: each member's ENTER and LEAVE (2n).
 *
 * Buffers: none (0-byte COPY messages RECV -> RECV at offset 0 over
 * buffers of 0 bytes carry the synchronisation).
 *
 * Dependencies: member v's fan-in message waits for its ENTER and for its
 * children's fan-in messages; the root's LEAVE for its ENTER and its
 * children's fan-in messages; the fan-out message to a child of the root
 * for the root's LEAVE (the root leaves once its fan-in is complete and
 * releases its children from there: one dependency per child instead of
 * one per child and grandchild), to any other member for the fan-out
 * message that reached its parent; a member's LEAVE for the fan-out
 * message that reached it.  Every member's sends thus follow its ENTER,
 * everything it receives precedes its LEAVE, and every LEAVE follows the
 * root's, which follows every ENTER.  4(n - 1) + 1 dependencies.
 *
 * Receipt slots, per member: its ENTER's and its LEAVE's, expecting 1
 * each, and one for the messages it receives, expecting its number of
 * children, plus 1 for the fan-out unless it is the root.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* The expectation and receipt slots every barrier has (coll_pattern.h). */
int topo__barrier_setup(struct topo_plan *p, int64_t msgs, int64_t deps,
			int64_t *enter0, int64_t *leave0, int64_t *recv0,
			topo_error *err)
{
	int32_t n = p->n;
	int rc = topo__plan_expect(p, msgs, deps, 3 * (int64_t)n, err);

	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, enter0, err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, leave0, err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, recv0, err);
	for (int32_t r = 0; rc == 0 && p->slot_expect != NULL && r < n; r++) {
		p->slot_expect[*enter0 + r] = 1;
		p->slot_expect[*leave0 + r] = 1;
	}
	return rc;
}

/* Every member's ENTER or LEAVE step (coll_pattern.h). */
int topo__barrier_marks(struct topo_plan *p, int mark, int64_t slot0,
			topo_error *err)
{
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__RECV, TOPO__RECV, 0);
	m.mark = (uint8_t)mark;
	for (int32_t r = 0; rc == 0 && r < p->n; r++) {
		m.src = m.dst = r;
		m.slot = slot0 + r;
		rc = topo__plan_msg(p, &m, NULL, err);
	}
	return rc;
}

int topo__plan_barrier_tree(struct topo_plan *p, topo_error *err)
{
	const topo_tree *t = p->t;
	int32_t n = p->n, R = t->root;
	int64_t enter0 = -1, leave0 = -1, recv0 = -1, enter, up, leave, down;
	struct topo__msg m;
	int rc = 0;

	rc = topo__barrier_setup(p, 4 * (int64_t)n - 2, 4 * (int64_t)n,
				 &enter0, &leave0, &recv0, err);
	if (rc != 0)
		return rc;
	for (int32_t r = 0; p->slot_expect != NULL && r < n; r++)
		p->slot_expect[recv0 + r] =
		    t->child_off[r + 1] - t->child_off[r] + (r != R);

	/* Ids: member r's ENTER is enter + r and its LEAVE leave + r; the
	 * fan-in message of member v != R is up + rank(v) and the fan-out
	 * message to it down + rank(v), rank(v) = v - (v > R).  All the
	 * messages first, then the dependencies between them. */
	topo__msg_init(&m, TOPO__COPY, TOPO__RECV, TOPO__RECV, 0);
	enter = p->nmsg;
	up = enter + n;
	leave = up + n - 1;
	down = leave + n;
	rc = topo__barrier_marks(p, TOPO__MARK_ENTER, enter0, err);
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		if (v == R)
			continue;
		m.src = v;
		m.dst = t->parent[v];
		m.slot = recv0 + m.dst;
		rc = topo__plan_msg(p, &m, NULL, err);
	}
	if (rc == 0)
		rc = topo__barrier_marks(p, TOPO__MARK_LEAVE, leave0, err);
	for (int32_t v = 0; rc == 0 && v < n; v++) {
		if (v == R)
			continue;
		m.src = t->parent[v];
		m.dst = v;
		m.slot = recv0 + v;
		rc = topo__plan_msg(p, &m, NULL, err);
	}

	for (int32_t v = 0; rc == 0 && v < n; v++) {
		int64_t in = v == R ? leave + R : up + v - (v > R);

		/* Fan-in: v's ENTER and its children's messages, before its
		 * own message up (the root: before its LEAVE). */
		rc = topo__plan_dep(p, enter + v, in, err);
		for (int32_t k = t->child_off[v];
		     rc == 0 && k < t->child_off[v + 1]; k++) {
			int32_t c = t->child[k];

			rc = topo__plan_dep(p, up + c - (c > R), in, err);
		}
		if (rc != 0 || v == R)
			continue;
		/* Fan-out: from the parent once released, then v leaves. */
		{
			int32_t u = t->parent[v];
			int64_t out = down + v - (v > R);

			rc = topo__plan_dep(
			    p, u == R ? leave + R : down + u - (u > R), out,
			    err);
			if (rc == 0)
				rc = topo__plan_dep(p, out, leave + v, err);
		}
	}
	return rc;
}
