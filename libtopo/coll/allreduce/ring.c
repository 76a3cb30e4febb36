/*
 * coll/allreduce/ring.c - allreduce "ring": a reduce-scatter and then an
 * allgather around the ring of ranks 0, 1, ..., n - 1, 0 (Patarasuk and
 * Yuan 2009; MPICH's MPIR_Allreduce_intra_ring).  It ignores the tree.
 *
 * B is cut into n blocks at element granularity: E = B / type size
 * elements, block b holding E / n elements plus one for b < E % n (so
 * sizes differ by one element at most, and E < n leaves n - E blocks
 * empty).  Reduce-scatter, steps s = 0 .. n - 2: member r REDUCEs its
 * block (r - s) mod n into member r + 1's RECV, so that after the last
 * step member r holds block (r + 1) mod n reduced over everyone.
 * Allgather, steps s = 0 .. n - 2: member r COPYs its block
 * (r + 1 - s) mod n into member r + 1's RECV.
 *
 * Cost, n members, B bytes, e = min(E, n) non-empty blocks: 2(n - 1)e
 * transport messages (2n(n - 1) once E >= n; messages of empty blocks are
 * not built), (n - 1)e REDUCEs and as many COPYs, each of about B/n bytes,
 * 2(n - 1)B/n bytes sent per member; time about
 * 2(n - 1)(alpha + (B/n)beta) + (n - 1)(B/n)gamma, bandwidth-optimal for
 * large B, latency linear in n.  Local steps: one copy SEND -> RECV per
 * member.  Planning is O(n^2): the plan is that many messages.
 *
 * Buffers: SEND and RECV, B bytes each; RECV accumulates (the local copy
 * first).  Step 0 of the reduce-scatter reads SEND (the same bytes the
 * RECV copy holds), so it need not wait for the sender's copy.
 *
 * Dependencies: the messages carrying one block form a chain around the
 * ring, reduce-scatter then allgather (each waits for the one before it,
 * which wrote the bytes it reads), and every access to block b of a
 * member's RECV is one of that chain's; so the chain orders them all:
 * member x's block b is read by x's message after the one into x, and is
 * written again (by the allgather) only after x's reduce-scatter message
 * has passed it on.  What is left is the local copy: the first message of
 * a chain into each member (a REDUCE of the reduce-scatter, or the
 * allgather's at step 0 into the block's own member) waits for its
 * destination's copy.  At most 2 dependencies per message.
 *
 * Receipt slots: one per member, expecting every message into it: its
 * final RECV is written by the reduce-scatter's last REDUCE (its own
 * block) and by the allgather's COPYs (the others).
 */
#define TOPO_INTERNAL
#include "allreduce.h"
#include "plan/plan.h"

#include <string.h>

/* More messages than this is refused (plan.c's limit too), here with a
 * hint at the algorithms whose message count is not quadratic. */
#define RING_MAX_MESSAGES ((int64_t)1 << 30)

/* One phase of n - 1 steps around the ring, r sending to r + 1: the
 * reduce-scatter (gather false), block (r - s) mod n REDUCEd, or the
 * allgather (gather true), block (r + 1 - s) mod n copied.  prev[r]:
 * member r's message of the step before (-1: none, or an empty block),
 * on entry the phase before's last. */
static int ring_phase(struct topo_plan *p, const int64_t *copy, int64_t *prev,
		      int64_t *cur, int64_t slot0, bool gather, topo_error *err)
{
	int32_t n = p->n;
	int64_t ts = (int64_t)p->type_size, E = (int64_t)p->params.bytes / ts;
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, gather ? TOPO__COPY : TOPO__REDUCE, TOPO__RECV,
		       TOPO__RECV, 0);
	for (int32_t s = 0; rc == 0 && s < n - 1; s++) {
		m.sbuf = !gather && s == 0 ? TOPO__SEND : TOPO__RECV;
		for (int32_t r = 0; rc == 0 && r < n; r++) {
			int64_t b = ((int64_t)r + gather - s + n) % n;
			int32_t to = r + 1 < n ? r + 1 : 0;
			int32_t from = r > 0 ? r - 1 : n - 1;

			cur[r] = -1;
			m.len = topo__block_len(E, n, b, ts);
			if (m.len == 0)
				continue;
			m.src = r;
			m.dst = to;
			m.soff = m.doff = topo__block_off(E, n, b, ts);
			rc = topo__allreduce_msg(p, &m, slot0, &cur[r], err);
			if (gather) {
				/* Step 0: r's block, reduced by r - 1's last
				 * REDUCE, over r + 1's own copy, which
				 * nothing else wrote. */
				if (rc == 0)
					rc = topo__allreduce_dep(p, prev[from],
								 cur[r], err);
				if (rc == 0 && s == 0)
					rc = topo__plan_dep(p, copy[to], cur[r],
							    err);
				continue;
			}
			if (rc == 0)
				rc = topo__plan_dep(p, copy[to], cur[r], err);
			/* r - 1 reduced this block into r the step before. */
			if (rc == 0 && s > 0)
				rc = topo__allreduce_dep(p, prev[from], cur[r],
							 err);
		}
		memcpy(prev, cur, (size_t)n * sizeof(int64_t));
	}
	return rc;
}

int topo__plan_allreduce_ring(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, ts = (int64_t)p->type_size;
	int64_t E, nonempty, msgs, slot0 = -1;
	int64_t *copy = NULL, *prev = NULL, *cur = NULL;
	struct topo__msg m;
	int rc = 0;

	E = B / ts;
	nonempty = E < n ? E : n;
	msgs = 2 * (int64_t)(n - 1) * nonempty;
	if (msgs > RING_MAX_MESSAGES - n)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "allreduce ring over %d members needs %lld "
				 "messages (2(n - 1) per block of %lld); at "
				 "most %lld are planned: use allreduce "
				 "\"rabenseifner\"",
				 (int)n, (long long)msgs, (long long)nonempty,
				 (long long)RING_MAX_MESSAGES);
	rc = topo__bufs_each(p, B, B, 0, err);
	if (rc == 0)
		rc = topo__plan_expect(p, msgs + n, 2 * msgs, n, err);
	if (rc != 0)
		return rc;
	copy = topo__mallocarray((size_t)n, sizeof(int64_t));
	prev = topo__mallocarray((size_t)n, sizeof(int64_t));
	cur = topo__mallocarray((size_t)n, sizeof(int64_t));
	if (copy == NULL || prev == NULL || cur == NULL) {
		rc = topo__nomem(err, "allreduce ring", n);
		goto done;
	}
	rc = topo__plan_slots(p, n, -1, &slot0, err);
	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__RECV, B);
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		m.src = m.dst = r;
		rc = topo__allreduce_msg(p, &m, slot0, &copy[r], err);
	}
	for (int32_t r = 0; r < n; r++)
		prev[r] = -1;
	if (rc == 0)
		rc = ring_phase(p, copy, prev, cur, slot0, false, err);
	if (rc == 0)
		rc = ring_phase(p, copy, prev, cur, slot0, true, err);
done:
	topo__free(copy);
	topo__free(prev);
	topo__free(cur);
	return rc;
}
