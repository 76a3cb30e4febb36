/*
 * coll/alltoall/direct.c - alltoall "direct": every member sends each of
 * its blocks straight to the member it is for, all at once (MPICH's
 * MPIR_Alltoall_intra_scattered with an unlimited window, Open MPI's
 * "basic linear" alltoall).
 *
 * Cost, n members, B bytes per block: n(n - 1) transport messages of B
 * bytes, n(n - 1)B bytes in all, plus n local copies (B bytes each, a
 * member's own block); time about (n - 1)(alpha + B beta) at each member,
 * all of its sends and receives in flight together, so it is the fastest
 * for small n and the most exposed to contention for large n.
 *
 * Buffers: SEND (nB) and RECV (nB) per member, no WORK.  Member r's SEND
 * block j (bytes [jB, (j + 1)B)) goes to member j's RECV block r; its own
 * block r by a local copy SEND -> RECV.
 *
 * Dependencies: none.  Each RECV block is written by exactly one message
 * and SEND is only read, so no two accesses conflict: all n^2 messages
 * may start at once.  They are built in rounds (round s: every member r
 * sends to (r + s) mod n; round 0 is the local copies), so that the
 * run's first messages are spread over all destinations instead of all
 * aimed at member 0.
 *
 * Receipt slots: one per member (slot0 + rank), expecting n - 1; the
 * local copies name none.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include <string.h>

/* More messages than this is refused (plan.c's limit too). */
#define DIRECT_MAX_MESSAGES ((int64_t)1 << 30)

int topo__plan_alltoall_direct(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	int64_t msgs = (int64_t)n * n;
	struct topo__msg m;
	int rc = 0;

	if (msgs > DIRECT_MAX_MESSAGES)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "alltoall direct over %d members needs %lld "
				 "messages (n^2); at most %lld are planned",
				 (int)n, (long long)msgs,
				 (long long)DIRECT_MAX_MESSAGES);
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, r, (int64_t)n * B, err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, r,
						(int64_t)n * B, err);
	}
	if (rc == 0)
		rc = topo__plan_expect(p, msgs, 0, n, err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, &slot0, err);
	if (rc != 0)
		return rc;
	for (int32_t r = 0; p->slot_expect != NULL && r < n; r++)
		p->slot_expect[slot0 + r] = n - 1;

	memset(&m, 0, sizeof(m));
	m.kind = TOPO__COPY;
	m.sbuf = TOPO__SEND;
	m.dbuf = TOPO__RECV;
	m.len = B;
	for (int32_t s = 0; rc == 0 && s < n; s++)
		for (int32_t r = 0; rc == 0 && r < n; r++) {
			int32_t d = (int32_t)(((int64_t)r + s) % n);

			m.src = r;
			m.dst = d;
			m.soff = (int64_t)d * B;
			m.doff = (int64_t)r * B;
			m.slot = s == 0 ? -1 : slot0 + d;
			rc = topo__plan_msg(p, &m, NULL, err);
		}
	return rc;
}
