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
#include "exec_internal.h"

#include <string.h>

int topo__plan_allgather_recursive_doubling(struct topo_plan *p,
					    topo_error *err)
{
	struct topo__fold f;
	int32_t n = p->n, P, K, rem;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	int64_t *own = NULL, *fold = NULL, *prev = NULL, *cur = NULL;
	struct topo__msg m;
	int rc = 0;

	topo__fold_init(&f, n);
	P = f.pof2;
	K = f.steps;
	rem = f.rem;
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, r, B, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, r,
						(int64_t)n * B, err);
	}
	if (rc == 0)
		rc = topo__plan_expect(p, (int64_t)n + (int64_t)P * K,
				       2 * (int64_t)P * (K + 1) + 2 * rem, n,
				       err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, &slot0, err);
	if (rc != 0)
		return rc;
	for (int32_t r = 0; p->slot_expect != NULL && r < n; r++)
		p->slot_expect[slot0 + r] =
		    r < 2 * rem ? (r % 2 == 0 ? 1 : K + 1) : K;
	own = topo__mallocarray((size_t)P, sizeof(int64_t));
	fold = topo__mallocarray((size_t)rem + 1, sizeof(int64_t));
	prev = topo__mallocarray((size_t)P, sizeof(int64_t));
	cur = topo__mallocarray((size_t)P, sizeof(int64_t));
	if (own == NULL || fold == NULL || prev == NULL || cur == NULL) {
		rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
			       "out of memory planning allgather "
			       "recursive-doubling over %d members",
			       (int)n);
		goto done;
	}

	memset(&m, 0, sizeof(m));
	m.kind = TOPO__COPY;
	/* The first 2 rem ranks fold: even into odd. */
	for (int32_t v = 0; rc == 0 && v < rem; v++) {
		m.src = 2 * v;
		m.dst = 2 * v + 1;
		m.sbuf = TOPO__SEND;
		m.dbuf = TOPO__RECV;
		m.soff = 0;
		m.doff = (int64_t)m.src * B;
		m.len = B;
		m.slot = slot0 + m.dst;
		rc = topo__plan_msg(p, &m, &fold[v], err);
	}
	/* The own block of every member that takes part. */
	for (int32_t v = 0; rc == 0 && v < P; v++) {
		m.src = m.dst = topo__fold_old(&f, v);
		m.sbuf = TOPO__SEND;
		m.dbuf = TOPO__RECV;
		m.soff = 0;
		m.doff = (int64_t)m.src * B;
		m.len = B;
		m.slot = -1;
		rc = topo__plan_msg(p, &m, &own[v], err);
	}
	for (int32_t k = 0; rc == 0 && k < K; k++) {
		int32_t mask = (int32_t)1 << k;

		for (int32_t v = 0; rc == 0 && v < P; v++) {
			int32_t w = v ^ mask, a = v & ~(mask - 1);
			int64_t lo = topo__fold_run_lo(&f, a),
				hi = topo__fold_run_lo(&f, a + mask);

			m.src = topo__fold_old(&f, v);
			m.dst = topo__fold_old(&f, w);
			m.sbuf = m.dbuf = TOPO__RECV;
			m.soff = m.doff = lo * B;
			m.len = (hi - lo) * B;
			m.slot = slot0 + m.dst;
			rc = topo__plan_msg(p, &m, &cur[v], err);
			if (rc == 0 && k == 0)
				rc = topo__plan_dep(p, own[v], cur[v], err);
			if (rc == 0 && k == 0 && v < rem)
				rc = topo__plan_dep(p, fold[v], cur[v], err);
			if (rc == 0 && k > 0)
				rc = topo__plan_dep(p, prev[v], cur[v], err);
			if (rc == 0 && k > 0)
				rc = topo__plan_dep(p, prev[v ^ (mask >> 1)],
						    cur[v], err);
		}
		{
			int64_t *t = prev;

			prev = cur;
			cur = t;
		}
	}
	/* The members that sat out get everything (K >= 1 here: rem > 0
	 * means n >= 3). */
	for (int32_t v = 0; rc == 0 && v < rem; v++) {
		int64_t id;

		m.src = 2 * v + 1;
		m.dst = 2 * v;
		m.sbuf = m.dbuf = TOPO__RECV;
		m.soff = m.doff = 0;
		m.len = (int64_t)n * B;
		m.slot = slot0 + m.dst;
		rc = topo__plan_msg(p, &m, &id, err);
		if (rc == 0)
			rc = topo__plan_dep(p, prev[v], id, err);
		if (rc == 0)
			rc = topo__plan_dep(p, prev[v ^ (P >> 1)], id, err);
	}
done:
	topo__free(own);
	topo__free(fold);
	topo__free(prev);
	topo__free(cur);
	return rc;
}
