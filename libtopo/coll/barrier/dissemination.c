/*
 * coll/barrier/dissemination.c - barrier "dissemination" (the default;
 * Hensgen, Finkel and Manber, "Two algorithms for barrier
 * synchronization", IJPP 17(1), 1988; MPICH's
 * MPIR_Barrier_intra_dissemination): K = ceil(log2 n) rounds for any n.
 *
 * In round k (0 <= k < K) member r sends a 0-byte message to member
 * (r + 2^k) mod n and receives one from (r - 2^k) mod n; it starts round
 * k once round k - 1's send and receive are done (MPICH's sendrecv).
 * After round k a member has heard, directly or not, from the 2^(k+1)
 * members before it, so after K rounds from all n.
 *
 * Cost, n members: nK transport messages of 0 bytes; time about K alpha.
 * Local steps: each member's ENTER and LEAVE (2n).
 *
 * Buffers: none (0-byte COPY messages RECV -> RECV at offset 0 over
 * buffers of 0 bytes carry the synchronisation).
 *
 * Dependencies (member r, s_k = r - 2^k): its round 0 send waits for its
 * ENTER; its round k >= 1 send for its round k - 1 send and for the
 * round k - 1 message it received (s_(k-1)'s); its LEAVE for its last
 * send and the last message it received (n = 1: for its ENTER).  Every
 * message it receives precedes one of those, so its LEAVE follows all
 * of them, and every member's ENTER: the round k send of r carries the
 * ENTERs of members r - 2^k + 1 .. r.  n(2K + 1) dependencies (n for
 * n = 1).
 *
 * Receipt slots, per member: its ENTER's and its LEAVE's, expecting 1
 * each, and one for the messages it receives, expecting K.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

int topo__plan_barrier_dissemination(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int K = 0;
	int64_t enter0 = -1, leave0 = -1, recv0 = -1, enter, round0;
	struct topo__msg m;
	int rc = 0;

	while (K < 31 && ((int64_t)1 << K) < n)
		K++;
	rc = topo__barrier_setup(p, (int64_t)n * (K + 2),
				 (int64_t)n * (2 * (int64_t)K + 1), &enter0,
				 &leave0, &recv0, err);
	if (rc != 0)
		return rc;
	for (int32_t r = 0; p->slot_expect != NULL && r < n; r++)
		p->slot_expect[recv0 + r] = K;

	topo__msg_init(&m, TOPO__COPY, TOPO__RECV, TOPO__RECV, 0);
	/* Ids: member r's ENTER is enter + r, its round k send round0 +
	 * kn + r; the LEAVEs come last. */
	enter = p->nmsg;
	round0 = enter + n;
	rc = topo__barrier_marks(p, TOPO__MARK_ENTER, enter0, err);
	for (int k = 0; rc == 0 && k < K; k++) {
		int64_t h = (int64_t)1 << k, id;

		for (int32_t r = 0; rc == 0 && r < n; r++) {
			m.src = r;
			m.dst = (int32_t)((r + h) % n);
			m.slot = recv0 + m.dst;
			rc = topo__plan_msg(p, &m, &id, err);
			if (rc == 0 && k == 0)
				rc = topo__plan_dep(p, enter + r, id, err);
			/* its own last send, and what it received */
			if (rc == 0 && k > 0)
				rc = topo__plan_dep(p, id - n, id, err);
			if (rc == 0 && k > 0)
				rc = topo__plan_dep(
				    p, id - n - r + (r - h / 2 + n) % n, id,
				    err);
		}
	}
	m.mark = TOPO__MARK_LEAVE;
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		int64_t id, last = round0 + (int64_t)(K - 1) * n,
			    h = K > 0 ? (int64_t)1 << (K - 1) : 0;

		m.src = m.dst = r;
		m.slot = leave0 + r;
		rc = topo__plan_msg(p, &m, &id, err);
		if (rc == 0 && K == 0)
			rc = topo__plan_dep(p, enter + r, id, err);
		if (rc == 0 && K > 0)
			rc = topo__plan_dep(p, last + r, id, err);
		if (rc == 0 && K > 0)
			rc = topo__plan_dep(p, last + (r - h + n) % n, id, err);
	}
	return rc;
}
