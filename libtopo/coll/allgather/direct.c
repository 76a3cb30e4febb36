/*
 * coll/allgather/direct.c - allgather "direct": every member sends its
 * block straight to every other member, all at once (Open MPI's "basic
 * linear" allgather without its gather to a root; alltoall "direct" with
 * one block for all).
 *
 * Cost, n members, B bytes per member: n(n - 1) transport messages of B
 * bytes, n(n - 1)B bytes in all, as the ring moves, plus n local copies
 * (a member's own block); time about (n - 1)(alpha + B beta) at each
 * member, all of its sends and receives in flight together.  Unlike the
 * ring's, every message reads the sender's SEND, never a block another
 * message wrote, so within one memory each block is read from where it
 * was made (a cache can keep the n blocks of SEND while the n^2 copies of
 * them stream into the receive buffers), and nothing waits for anything.
 *
 * Buffers: SEND (B) and RECV (n * B) per member; no WORK.  Member r's
 * SEND goes to block r of every member's RECV, its own by a local copy.
 *
 * Dependencies: none.  Each RECV block is written by exactly one message
 * and SEND is only read.  The messages are built in rounds (round s:
 * every member r sends to (r + s) mod n; round 0 is the local copies), so
 * that the run's first messages are spread over all destinations.
 *
 * Receipt slots: one per member (slot0 + rank), expecting n - 1; the
 * local copies name none.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include <string.h>

/* As alltoall's: n^2 messages of 48 bytes each are planned at most. */
#define ALLGATHER_MAX_MESSAGES ((int64_t)1 << 30)

int topo__plan_allgather_direct(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	int64_t msgs = (int64_t)n * n;
	struct topo__msg m;
	int rc = 0;

	if (msgs > ALLGATHER_MAX_MESSAGES)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "allgather direct over %d members needs %lld "
				 "messages (n^2); at most %lld are planned",
				 (int)n, (long long)msgs,
				 (long long)ALLGATHER_MAX_MESSAGES);
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, r, B, err);
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
	m.soff = 0;
	m.len = B;
	for (int32_t s = 0; rc == 0 && s < n; s++)
		for (int32_t r = 0; rc == 0 && r < n; r++) {
			m.src = r;
			m.dst = (int32_t)(((int64_t)r + s) % n);
			m.doff = (int64_t)r * B;
			m.slot = s == 0 ? -1 : slot0 + m.dst;
			rc = topo__plan_msg(p, &m, NULL, err);
		}
	return rc;
}
