/*
 * coll/allgather/ring.c - allgather "ring": every member's block travels
 * once round the ring of ranks 0, 1, ..., n - 1, 0, each member passing on
 * the block it received the step before.
 *
 * Cost, n members, B bytes per member: n - 1 steps; n(n - 1) transport
 * messages of B bytes, moving n(n - 1)B bytes in all; time about
 * (n - 1)(alpha + B beta), every member sending one block and receiving
 * one at each step.  Local steps: one copy per member (its own block).
 *
 * Buffers: SEND (B) and RECV (n * B) per member; no WORK.  Member r copies
 * its SEND into RECV at r * B.  At step s (0 <= s < n - 1) member r sends
 * block b = (r - s) mod n to member r + 1 (mod n), RECV -> RECV at b * B;
 * at step 0 that is its own block, sent straight from SEND so that the
 * ring does not wait for the local copy.
 *
 * Dependencies: member r's step s >= 1 waits for the step s - 1 message
 * of member r - 1, which brought it block b.  Every block of a member's
 * RECV is written once (its own by the local copy, each other by one
 * message) and read only after that write, so nothing else needs
 * ordering.
 *
 * Receipt slots: one per member (slot0 + rank), expecting n - 1.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

int topo__plan_allgather_ring(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	int64_t *prev = NULL, *cur = NULL;
	struct topo__msg m;
	int rc = 0;

	rc = topo__bufs_each(p, B, (int64_t)n * B, 0, err);
	/* n(n - 1) messages and their n(n - 2) dependencies, n copies. */
	if (rc == 0)
		rc =
		    topo__plan_expect(p, (int64_t)n * n,
				      (int64_t)n * (n > 1 ? n - 2 : 0), n, err);
	if (rc == 0)
		rc = topo__slots_each(p, n - 1, &slot0, err);
	if (rc != 0)
		return rc;
	prev = topo__mallocarray((size_t)n, sizeof(int64_t));
	cur = topo__mallocarray((size_t)n, sizeof(int64_t));
	if (prev == NULL || cur == NULL) {
		rc = topo__nomem(err, "allgather ring", n);
		goto done;
	}

	/* Each member's own block. */
	for (int32_t r = 0; rc == 0 && r < n; r++)
		rc = topo__local_copy(p, r, TOPO__SEND, 0, TOPO__RECV,
				      (int64_t)r * B, B, NULL, err);
	for (int32_t s = 0; rc == 0 && s < n - 1; s++) {
		topo__msg_init(&m, TOPO__COPY,
			       s == 0 ? TOPO__SEND : TOPO__RECV, TOPO__RECV, B);
		for (int32_t r = 0; rc == 0 && r < n; r++) {
			int32_t b = (int32_t)(((int64_t)r - s + n) % n);
			int32_t left = r == 0 ? n - 1 : r - 1;

			m.src = r;
			m.dst = r == n - 1 ? 0 : r + 1;
			m.soff = s == 0 ? 0 : (int64_t)b * B;
			m.doff = (int64_t)b * B;
			m.slot = slot0 + m.dst;
			rc = topo__plan_msg(p, &m, &cur[r], err);
			if (rc == 0 && s > 0)
				rc = topo__plan_dep(p, prev[left], cur[r], err);
		}
		{
			int64_t *t = prev;

			prev = cur;
			cur = t;
		}
	}
done:
	topo__free(prev);
	topo__free(cur);
	return rc;
}
