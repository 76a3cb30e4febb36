/*
 * coll/allgather/recursive_doubling.c - allgather "recursive-doubling":
 * at step k every member exchanges everything it holds, a run of 2^k
 * blocks, with the member whose rank differs in bit k, so the runs double
 * until every member holds all n blocks.
 *
 * Non-powers of two (the variant MPICH's allreduce uses, rather than
 * MPICH allgather's extra sends into the subtrees whose partners are
 * missing): with P the largest power of two <= n and rem = n - P, the
 * first 2 rem ranks pair up; each even one of them sends its block to the
 * odd one above it and sits out.  The P remaining members, virtual ranks
 * v (odd rank 2v + 1 for v < rem, rank v + rem after), each hold a
 * contiguous run of real blocks: [2v, 2v + 2) or the one block v + rem,
 * so any aligned range of virtual ranks holds a contiguous run of blocks
 * and every exchange is one message.  At the end each odd rank of the
 * first 2 rem sends its whole RECV to the even rank below it.
 *
 * Cost, n members, B bytes per member, K = log2 P steps: P K transport
 * messages moving (P - 1) n B bytes (each of the P receives every block
 * it does not hold), plus 2 rem when n is not a power of two (rem blocks
 * of B in, rem whole results of n B out): P K + 2 rem messages in all;
 * time about K alpha + (n - 1)B beta, plus 2 alpha + (n + 1)B beta when n
 * is not a power of two.  Local steps: one copy per member that does not
 * sit out.
 *
 * Buffers: SEND (B) and RECV (n * B) per member; no WORK.  Blocks are
 * always at their final offset b * B.  A member copies its own block into
 * RECV; at step k virtual rank v sends RECV's run of its aligned group of
 * 2^k virtual ranks to v ^ 2^k, into the same offsets.
 *
 * Dependencies: step 0 waits for the sender's own copy and the block that
 * was folded into it; step k >= 1 waits for the sender's step k - 1 message
 * (which waited for everything before it) and for the step k - 1 message
 * it received.  The final message waits the same way on the last step.
 * Every block of a RECV is written once and read after, and the members
 * that sit out have no own copy (their block comes back with the rest),
 * so nothing else needs ordering.
 *
 * Receipt slots: one per member (slot0 + rank), expecting K (plus 1 for
 * the fold) at the P, 1 at those that sit out.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* The first 2 rem ranks fold, even into odd; then the own block of
 * every member that takes part. */
static int fold_and_own(struct topo_plan *p, const struct topo__fold *f,
			int64_t B, int64_t slot0, struct topo__fold_ids *ids,
			topo_error *err)
{
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__RECV, B);
	for (int32_t v = 0; rc == 0 && v < f->rem; v++) {
		m.src = 2 * v;
		m.dst = 2 * v + 1;
		m.doff = (int64_t)m.src * B;
		m.slot = slot0 + m.dst;
		rc = topo__plan_msg(p, &m, &ids->fold[v], err);
	}
	for (int32_t v = 0; rc == 0 && v < f->pof2; v++) {
		int32_t r = topo__fold_old(f, v);

		rc = topo__local_copy(p, r, TOPO__SEND, 0, TOPO__RECV,
				      (int64_t)r * B, B, &ids->own[v], err);
	}
	return rc;
}

/* The members that sat out get everything (K >= 1 here: rem > 0 means
 * n >= 3). */
static int give_back(struct topo_plan *p, const struct topo__fold *f, int64_t B,
		     int64_t slot0, const struct topo__fold_ids *ids,
		     topo_error *err)
{
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__RECV, TOPO__RECV,
		       (int64_t)f->n * B);
	for (int32_t v = 0; rc == 0 && v < f->rem; v++) {
		int64_t id;

		m.src = 2 * v + 1;
		m.dst = 2 * v;
		m.slot = slot0 + m.dst;
		rc = topo__plan_msg(p, &m, &id, err);
		if (rc == 0)
			rc = topo__plan_dep(p, ids->prev[v], id, err);
		if (rc == 0)
			rc = topo__plan_dep(p, ids->prev[v ^ (f->pof2 >> 1)],
					    id, err);
	}
	return rc;
}

int topo__plan_allgather_recursive_doubling(struct topo_plan *p,
					    topo_error *err)
{
	struct topo__fold f;
	struct topo__fold_ids ids;
	struct topo__msg m;
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	int rc = 0;

	topo__fold_init(&f, n);
	rc = topo__bufs_each(p, B, (int64_t)n * B, 0, err);
	if (rc == 0)
		rc = topo__plan_expect(
		    p, (int64_t)n + (int64_t)f.pof2 * f.steps,
		    2 * (int64_t)f.pof2 * (f.steps + 1) + 2 * f.rem, n, err);
	if (rc == 0)
		rc = topo__fold_slots(p, &f, &slot0, err);
	if (rc == 0)
		rc = topo__fold_ids_new(&ids, &f,
					"allgather recursive-doubling", err);
	if (rc != 0)
		return rc;
	/* Step k: v sends the run of its aligned group of 2^k new ranks to
	 * v ^ 2^k, into the same offsets of RECV. */
	topo__msg_init(&m, TOPO__COPY, TOPO__RECV, TOPO__RECV, 0);
	rc = fold_and_own(p, &f, B, slot0, &ids, err);
	for (int32_t k = 0; rc == 0 && k < f.steps; k++)
		rc = topo__fold_step(p, &f, &ids, &m, k, false, B, slot0, err);
	if (rc == 0)
		rc = give_back(p, &f, B, slot0, &ids, err);
	topo__fold_ids_free(&ids);
	return rc;
}
