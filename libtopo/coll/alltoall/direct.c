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
#include "coll_pattern.h"
#include "plan/plan.h"

/* pairwise's rounds without its chains (coll/alltoall/pairwise.c). */
int topo__plan_alltoall_direct(struct topo_plan *p, topo_error *err)
{
	return topo__alltoall_rounds(p, "alltoall direct", 0, err);
}
