/*
 * coll/allreduce/rabenseifner.c - allreduce "rabenseifner": a
 * reduce-scatter by recursive halving, then an allgather by recursive
 * doubling (Rabenseifner 2004; MPICH's
 * MPIR_Allreduce_intra_reduce_scatter_allgather).  It ignores the tree.
 *
 * With pof2 the largest power of two <= n and rem = n - pof2, the fold of
 * allreduce.h first (among ranks 0 .. 2 rem - 1 each even one REDUCEs its
 * SEND into the next odd one's RECV and sits out), and last (each odd one
 * COPYs the result to the even one before it).  The pof2 others (new
 * ranks nr) cut B into pof2 blocks at element granularity (E = B / type
 * size elements, block i holding E / pof2 plus one for i < E % pof2: some
 * are empty when E < pof2) and each starts with all of them.
 * Reduce-scatter, steps k = 0 .. L - 1 (L = log2 pof2): nr and its
 * partner nr ^ 2^k hold the same range of blocks; the lower keeps its
 * lower half, the higher its upper half, and each REDUCEs the half the
 * other keeps into the other's RECV.  After L steps nr holds one block
 * reduced over everyone.  Allgather, steps k = L - 1 .. 0: the same pairs
 * in reverse, each COPYing the range it holds (its step-k half, complete)
 * into the other's RECV.
 *
 * One-sided, the halves make it simple: what a member sends at a step is
 * never what it keeps, so its partner REDUCEs straight into its RECV
 * (no WORK) while it reads the other half.  Every write into a member's
 * RECV waits for the one before it (writes into one RECV form a chain:
 * its copy, the fold's REDUCE, then one message per step), and every
 * read of it waits for the last write.  That covers the one
 * write-after-read too: a's allgather COPY at step k into the half b sent
 * away at the reduce-scatter's step k reads a's RECV, so it follows every
 * write into a, among them b's REDUCE of that step, the very message that
 * read the half.  A member the fold
 * did not touch sends its step-0 half from SEND (its RECV copy's bytes),
 * without waiting for the copy.  Messages of empty halves are not built.
 *
 * Cost, n members, B bytes: 2 pof2 L + 2 rem transport messages once
 * E >= pof2 (fewer when halves are empty), member nr sending
 * B/2 + B/4 + ... + B/pof2 bytes in each phase, about 2B in all; time
 * about 2L alpha + 2((pof2 - 1)/pof2)B beta + ((pof2 - 1)/pof2)B gamma,
 * plus the fold's 2(alpha + B beta) + B gamma when rem > 0: latency
 * logarithmic, bandwidth near-optimal.  Local steps: a copy SEND -> RECV
 * per member that takes part (n - rem).  At most 2 dependencies per
 * message.
 *
 * Buffers: SEND and RECV, B bytes each.
 *
 * Receipt slots: one per member, expecting every message into it (the
 * reduce-scatter's REDUCEs and the allgather's COPYs of non-empty halves,
 * the fold's).
 */
#define TOPO_INTERNAL
#include "allreduce.h"
#include "exec_internal.h"

#include <string.h>

int topo__plan_allreduce_rabenseifner(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, ts = (int64_t)p->type_size;
	int64_t E = 0, slot0 = -1, msgs, deps;
	int64_t *cur = NULL, *ids = NULL, *lo = NULL;
	struct topo__fold f;
	struct topo__msg m;
	int rc = 0;

	E = B / ts;
	topo__fold_init(&f, n);
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, r, B, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, r, B, err);
	}
	/* Copies, the fold's 2 rem, 2 per new rank and step; a dependency
	 * per fold message, 2 per step's message. */
	msgs = (int64_t)n + 2 * (int64_t)f.rem + 2 * (int64_t)f.pof2 * f.steps;
	deps = 2 * (int64_t)f.rem + 4 * (int64_t)f.pof2 * f.steps;
	if (rc == 0)
		rc = topo__plan_expect(p, msgs, deps, n, err);
	if (rc != 0)
		return rc;
	cur = topo__mallocarray((size_t)n, sizeof(int64_t));
	ids = topo__mallocarray((size_t)f.pof2, sizeof(int64_t));
	lo = topo__mallocarray((size_t)f.pof2, sizeof(int64_t));
	if (cur == NULL || ids == NULL || lo == NULL) {
		rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
			       "out of memory planning allreduce rabenseifner "
			       "over %d members",
			       (int)n);
		goto done;
	}
	rc = topo__plan_slots(p, n, -1, &slot0, err);
	/* cur[r]: the last write into r's RECV, after all the others. */
	if (rc == 0)
		rc = topo__fold_pre(p, &f, B, slot0, cur, err);
	memset(&m, 0, sizeof(m));
	m.kind = TOPO__REDUCE;
	m.dbuf = TOPO__RECV;
	/* lo[nr]: the first block of the range nr holds (of size half * 2
	 * before step k). */
	for (int32_t nr = 0; nr < f.pof2; nr++)
		lo[nr] = 0;
	for (int32_t k = 0; rc == 0 && k < f.steps; k++) {
		int32_t mask = (int32_t)1 << k;
		int64_t half = (int64_t)f.pof2 >> (k + 1);

		for (int32_t nr = 0; rc == 0 && nr < f.pof2; nr++) {
			int32_t a = topo__fold_old(&f, nr),
				b = topo__fold_old(&f, nr ^ mask);
			/* The partner's half: the upper one when nr is
			 * the lower of the two. */
			int64_t first = lo[nr] + ((nr & mask) ? 0 : half);
			bool send = k == 0 && a >= 2 * f.rem;

			ids[nr] = -1;
			m.soff = m.doff = topo__block_off(E, f.pof2, first, ts);
			m.len = topo__block_off(E, f.pof2, first + half, ts) -
				m.soff;
			if (m.len == 0)
				continue;
			m.src = a;
			m.dst = b;
			m.sbuf = send ? TOPO__SEND : TOPO__RECV;
			rc = topo__allreduce_msg(p, &m, slot0, &ids[nr], err);
			if (rc == 0 && !send)
				rc = topo__plan_dep(p, cur[a], ids[nr], err);
			if (rc == 0)
				rc = topo__plan_dep(p, cur[b], ids[nr], err);
		}
		/* Each keeps its half. */
		for (int32_t nr = 0; nr < f.pof2; nr++) {
			if (ids[nr ^ mask] >= 0)
				cur[topo__fold_old(&f, nr)] = ids[nr ^ mask];
			if (nr & mask)
				lo[nr] += half;
		}
	}
	m.kind = TOPO__COPY;
	m.sbuf = TOPO__RECV;
	for (int32_t k = f.steps - 1; rc == 0 && k >= 0; k--) {
		int32_t mask = (int32_t)1 << k;
		int64_t half = (int64_t)f.pof2 >> (k + 1);

		/* nr holds [lo, lo + half), complete: it goes to the
		 * partner, into the half the partner sent away at step k. */
		for (int32_t nr = 0; rc == 0 && nr < f.pof2; nr++) {
			int32_t a = topo__fold_old(&f, nr),
				b = topo__fold_old(&f, nr ^ mask);

			ids[nr] = -1;
			m.soff = m.doff =
			    topo__block_off(E, f.pof2, lo[nr], ts);
			m.len = topo__block_off(E, f.pof2, lo[nr] + half, ts) -
				m.soff;
			if (m.len == 0)
				continue;
			m.src = a;
			m.dst = b;
			rc = topo__allreduce_msg(p, &m, slot0, &ids[nr], err);
			if (rc == 0)
				rc = topo__plan_dep(p, cur[a], ids[nr], err);
			if (rc == 0)
				rc = topo__plan_dep(p, cur[b], ids[nr], err);
		}
		for (int32_t nr = 0; nr < f.pof2; nr++) {
			if (ids[nr ^ mask] >= 0)
				cur[topo__fold_old(&f, nr)] = ids[nr ^ mask];
			if (nr & mask)
				lo[nr] -= half;
		}
	}
	if (rc == 0)
		rc = topo__fold_post(p, &f, B, slot0, cur, err);
done:
	topo__free(cur);
	topo__free(ids);
	topo__free(lo);
	return rc;
}
