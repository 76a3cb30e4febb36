/*
 * coll/reduce_scatter/recursive_halving.c - reduce-scatter
 * "recursive-halving" (MPICH's MPIR_Reduce_scatter_block_intra_recursive_
 * halving, for commutative operators): at each step every member gives
 * away half of the blocks it is still responsible for, reduced, to the
 * partner that keeps them, and keeps the other half, so the range halves
 * until each member holds its own block fully reduced.
 *
 * Non-powers of two, as MPICH: with P the largest power of two <= n and
 * rem = n - P, each even rank r < 2 rem first REDUCEs its whole vector
 * into rank r + 1 and sits out.  The P remaining members, virtual ranks v
 * (odd rank 2v + 1 for v < rem, rank v + rem after), are each responsible
 * for a contiguous run of real blocks, [2v, 2v + 2) or the one block
 * v + rem, so any aligned range of virtual ranks is a contiguous run of
 * blocks.  At the end each odd rank r < 2 rem sends block r - 1 to r - 1.
 *
 * Cost, n members, B bytes per block (n B per member), K = log2 P steps:
 * at step k (mask = P / 2^(k + 1)) each of the P REDUCEs the blocks of
 * mask virtual ranks; P K transport REDUCE messages moving (P - 1) n B
 * bytes when n = P, plus rem REDUCEs of n B and rem COPYs of B when it is
 * not; time about K alpha + (n - 1)B(beta + gamma), plus
 * 2 alpha + (n + 1)B beta + n B gamma when n is not a power of two.
 * Local steps per member that takes part: a copy SEND -> WORK and a copy
 * of its block WORK -> RECV.
 *
 * Buffers: SEND (n B) and RECV (B) per member, WORK (n B) per member that
 * takes part: it holds the member's partial reduction of the whole
 * vector, blocks at their rank order offsets.  One-sided exchange: at a
 * step, v REDUCEs the half it gives away straight from its WORK into its
 * partner's WORK, while the partner REDUCEs the other half into v's: the
 * two touch disjoint halves of each WORK, so neither needs a copy of the
 * other's data.  A member sitting out REDUCEs straight from its SEND.
 *
 * Dependencies: every REDUCE into a WORK waits for the copy that
 * initialised it; v's step 0 waits for its own copy and the fold into it;
 * v's step k >= 1 waits for its own step k - 1 REDUCE (which waited for
 * everything into v before it) and for the step k - 1 REDUCE into v.  The
 * final copy and the send back wait the same way on step K - 1.  A
 * member's WORK bytes are never written after they have been read (the
 * ranges only shrink), and REDUCEs into the same bytes may run in any
 * order, so nothing else needs ordering.
 *
 * Receipt slots: one per member (slot0 + rank), expecting K (plus 1 for
 * the fold) at the P, 1 at those that sit out.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* Partial reductions start as the member's own vector (V bytes); then
 * the first 2 rem ranks fold, even into odd. */
static int init_and_fold(struct topo_plan *p, const struct topo__fold *f,
			 int64_t V, int64_t slot0, struct topo__fold_ids *ids,
			 topo_error *err)
{
	struct topo__msg m;
	int rc = 0;

	for (int32_t v = 0; rc == 0 && v < f->pof2; v++)
		rc = topo__local_copy(p, topo__fold_old(f, v), TOPO__SEND, 0,
				      TOPO__WORK, 0, V, &ids->own[v], err);
	topo__msg_init(&m, TOPO__REDUCE, TOPO__SEND, TOPO__WORK, V);
	for (int32_t v = 0; rc == 0 && v < f->rem; v++) {
		m.src = 2 * v;
		m.dst = 2 * v + 1;
		m.slot = slot0 + m.dst;
		rc = topo__plan_msg(p, &m, &ids->fold[v], err);
		if (rc == 0)
			rc = topo__plan_dep(p, ids->own[v], ids->fold[v], err);
	}
	return rc;
}

/* Each member's block into its RECV; the odd ranks of the fold also send
 * their partner's. */
static int blocks_out(struct topo_plan *p, const struct topo__fold *f,
		      int64_t B, int64_t slot0,
		      const struct topo__fold_ids *ids, topo_error *err)
{
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__WORK, TOPO__RECV, B);
	for (int32_t v = 0; rc == 0 && v < f->pof2; v++) {
		for (int part = 0; rc == 0 && part < 1 + (v < f->rem); part++) {
			int64_t id;

			m.src = topo__fold_old(f, v);
			m.dst = part == 0 ? m.src : m.src - 1;
			m.soff = (int64_t)m.dst * B;
			m.slot = part == 0 ? -1 : slot0 + m.dst;
			rc = topo__plan_msg(p, &m, &id, err);
			if (rc == 0)
				rc = topo__plan_dep(p, ids->prev[v], id, err);
			if (rc == 0)
				rc = topo__plan_dep(p, ids->prev[v ^ 1], id,
						    err);
		}
	}
	return rc;
}

int topo__plan_reduce_scatter_recursive_halving(struct topo_plan *p,
						topo_error *err)
{
	struct topo__fold f;
	struct topo__fold_ids ids;
	struct topo__msg m;
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, V = (int64_t)n * B, slot0 = -1;
	int rc = 0;

	topo__fold_init(&f, n);
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, r, V, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, r, B, err);
		if (rc == 0 && n > 1 && topo__fold_new(&f, r) >= 0)
			rc = topo__plan_bufsize(p, TOPO__WORK, r, V, err);
	}
	if (rc == 0)
		rc = topo__plan_expect(
		    p, 2 * (int64_t)n + (int64_t)f.pof2 * f.steps + f.rem,
		    3 * (int64_t)f.pof2 * f.steps + f.rem + 2 * (int64_t)n, n,
		    err);
	if (rc == 0)
		rc = topo__fold_slots(p, &f, &slot0, err);
	if (rc != 0)
		return rc;
	if (n == 1)
		return topo__local_copy(p, 0, TOPO__SEND, 0, TOPO__RECV, 0, B,
					NULL, err);
	rc = topo__fold_ids_new(&ids, &f, "reduce-scatter recursive-halving",
				err);
	if (rc != 0)
		return rc;
	/* Step k: v gives away the half its partner w = v ^ mask keeps
	 * (mask = P / 2^(k + 1)), REDUCEd from its WORK into w's. */
	topo__msg_init(&m, TOPO__REDUCE, TOPO__WORK, TOPO__WORK, 0);
	rc = init_and_fold(p, &f, V, slot0, &ids, err);
	for (int32_t k = 0; rc == 0 && k < f.steps; k++)
		rc = topo__fold_step(p, &f, &ids, &m, k, true, B, slot0, err);
	if (rc == 0)
		rc = blocks_out(p, &f, B, slot0, &ids, err);
	topo__fold_ids_free(&ids);
	return rc;
}
