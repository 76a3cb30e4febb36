/*
 * coll/slots.c - the receipt counters the algorithms share: one per
 * member with one expectation for all (the rings, bruck, pairwise), and
 * the fold to a power of two's (recursive doubling and halving).  Counter
 * *slot0 + rank is member rank's, as topo__plan_slots numbers them.  And
 * the buffers of the algorithms whose members all size theirs alike.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

int topo__slots_each(struct topo_plan *p, int32_t expect, int64_t *slot0,
		     topo_error *err)
{
	int rc = topo__plan_slots(p, p->n, -1, slot0, err);

	if (rc != 0)
		return rc;
	for (int32_t r = 0; p->slot_expect != NULL && r < p->n; r++)
		p->slot_expect[*slot0 + r] = expect;
	return 0;
}

int topo__fold_slots(struct topo_plan *p, const struct topo__fold *f,
		     int64_t *slot0, topo_error *err)
{
	int32_t rem = f->rem, K = f->steps;
	int rc = topo__plan_slots(p, f->n, -1, slot0, err);

	if (rc != 0)
		return rc;
	for (int32_t r = 0; p->slot_expect != NULL && r < f->n; r++)
		p->slot_expect[*slot0 + r] =
		    r < 2 * rem ? (r % 2 == 0 ? 1 : K + 1) : K;
	return 0;
}

int topo__bufs_each(struct topo_plan *p, int64_t send, int64_t recv,
		    int64_t work, topo_error *err)
{
	int rc = 0;

	/* A WORK of 0 bytes is what a member has unsized. */
	for (int32_t r = 0; rc == 0 && r < p->n; r++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, r, send, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, r, recv, err);
		if (rc == 0 && work > 0)
			rc = topo__plan_bufsize(p, TOPO__WORK, r, work, err);
	}
	return rc;
}
