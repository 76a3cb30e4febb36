/*
 * coll/allreduce/recursive_doubling.c - allreduce "recursive-doubling":
 * log2 n steps of pairwise exchange of the whole vector (MPICH's
 * MPIR_Allreduce_intra_recursive_doubling).  It ignores the tree.
 *
 * With pof2 the largest power of two <= n and rem = n - pof2, the fold of
 * allreduce.h first: among ranks 0 .. 2 rem - 1 each even one REDUCEs its
 * SEND into the next odd one's RECV and sits out.  The other pof2 members
 * (new ranks 0 .. pof2 - 1) then, at steps k = 0 .. log2 pof2 - 1, each
 * exchange their current vector with new rank nr ^ 2^k and combine the
 * two.  Last, each odd rank below 2 rem COPYs the result to the even one
 * before it.
 *
 * The exchange, one-sided: both partners must combine the other's vector
 * as it was before either changed it, so each COPYs its RECV into its
 * partner's WORK, and the partner then REDUCEs its WORK into its RECV
 * (a local step).  Member a's COPY at step k reads a's RECV after a's
 * last REDUCE (or its copy, or the fold's REDUCE into it) and writes b's
 * WORK after b's REDUCE of step k - 1 read it; b's REDUCE of step k
 * waits for the COPY into its WORK and for its own COPY out of its RECV
 * (which it overwrites).  Step 0 of a member the fold did not touch reads
 * its SEND (the bytes its RECV copy holds), so it need not wait for that
 * copy; its REDUCE then waits for the copy.
 *
 * Cost, n members, B bytes, L = log2 pof2: pof2 L + 2 rem transport
 * messages (n log2 n for a power of two), each of B bytes: pof2 L COPYs
 * of the exchange, rem REDUCEs and rem COPYs of the fold; time about
 * (L + 2 [rem > 0])(alpha + B beta) + (L + [rem > 0]) B gamma: latency
 * optimal, for small B.  Local steps: pof2 L REDUCEs WORK -> RECV, and a
 * copy SEND -> RECV per member that takes part (n - rem).
 *
 * Buffers: SEND and RECV, B bytes each; WORK, B bytes, at the members
 * that exchange (n > 1).
 *
 * Receipt slots: one per member, expecting every message into it: L
 * exchange COPYs (into WORK, whence its RECV's result), plus 1 for the
 * fold's REDUCE at an odd rank below 2 rem, and for an even rank below
 * 2 rem just the final COPY of the result.
 */
#define TOPO_INTERNAL
#include "allreduce.h"
#include "plan/plan.h"

int topo__plan_allreduce_recursive_doubling(struct topo_plan *p,
					    topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	int64_t *cur = NULL, *x = NULL, msgs, deps;
	struct topo__fold f;
	struct topo__msg cp, red;
	int rc = 0;

	topo__fold_init(&f, n);
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, r, B, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, r, B, err);
		if (rc == 0 && f.steps > 0 && topo__fold_new(&f, r) >= 0)
			rc = topo__plan_bufsize(p, TOPO__WORK, r, B, err);
	}
	/* Copies, the fold's REDUCEs and COPYs, and per step a COPY and a
	 * REDUCE per new rank; a dependency per fold message, 2 per COPY,
	 * 3 per REDUCE. */
	msgs = (int64_t)n + (int64_t)f.rem + 2 * (int64_t)f.pof2 * f.steps;
	deps = 2 * (int64_t)f.rem + 5 * (int64_t)f.pof2 * f.steps;
	if (rc == 0)
		rc = topo__plan_expect(p, msgs, deps, n, err);
	if (rc != 0)
		return rc;
	cur = topo__mallocarray((size_t)n, sizeof(int64_t));
	x = topo__mallocarray((size_t)f.pof2, sizeof(int64_t));
	if (cur == NULL || x == NULL) {
		rc = topo__nomem(err, "allreduce recursive-doubling", n);
		goto done;
	}
	rc = topo__plan_slots(p, n, -1, &slot0, err);
	/* cur[r]: the last write into r's RECV, after all the others. */
	if (rc == 0)
		rc = topo__fold_pre(p, &f, B, slot0, cur, err);
	topo__msg_init(&cp, TOPO__COPY, TOPO__RECV, TOPO__WORK, B);
	topo__msg_init(&red, TOPO__REDUCE, TOPO__WORK, TOPO__RECV, B);
	for (int32_t k = 0; rc == 0 && k < f.steps; k++) {
		int32_t mask = (int32_t)1 << k;

		/* x[nr]: new rank nr's COPY of its vector to its partner. */
		for (int32_t nr = 0; rc == 0 && nr < f.pof2; nr++) {
			int32_t a = topo__fold_old(&f, nr),
				b = topo__fold_old(&f, nr ^ mask);
			bool send = k == 0 && a >= 2 * f.rem;

			cp.src = a;
			cp.dst = b;
			cp.sbuf = send ? TOPO__SEND : TOPO__RECV;
			rc = topo__allreduce_msg(p, &cp, slot0, &x[nr], err);
			if (rc == 0 && !send)
				rc = topo__plan_dep(p, cur[a], x[nr], err);
			/* b's REDUCE of the step before read its WORK. */
			if (rc == 0 && k > 0)
				rc = topo__plan_dep(p, cur[b], x[nr], err);
		}
		for (int32_t nr = 0; rc == 0 && nr < f.pof2; nr++) {
			int32_t b = topo__fold_old(&f, nr);
			int64_t id;

			red.src = red.dst = b;
			rc = topo__allreduce_msg(p, &red, slot0, &id, err);
			if (rc == 0)
				rc = topo__plan_dep(p, x[nr ^ mask], id, err);
			if (rc == 0)
				rc = topo__plan_dep(p, x[nr], id, err);
			/* A COPY out of SEND did not wait for the RECV copy. */
			if (rc == 0 && k == 0 && b >= 2 * f.rem)
				rc = topo__plan_dep(p, cur[b], id, err);
			cur[b] = id;
		}
	}
	if (rc == 0)
		rc = topo__fold_post(p, &f, B, slot0, cur, err);
done:
	topo__free(cur);
	topo__free(x);
	return rc;
}
