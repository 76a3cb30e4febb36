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
 * and SEND is only read.  Blocks below 4 KiB are built in rounds (round
 * s: every member r sends to (r + s) mod n; round 0 is the local copies),
 * so that the run's first messages are spread over all destinations;
 * from 4 KiB (TOPO__ALLGATHER_BY_MEMBER) member by member, each member's
 * block to every member in round order, so that the n copies of a block
 * read it in a row, from the cache (the copies of one source go to one
 * thread: exec.c's homes split the RECVs by block).  Member by member
 * gained from 4 KiB and lost on small blocks, hence rounds below 4 KiB
 * (docs/CONSTANTS.md).
 *
 * Pieces: on one node, a block of 512 KiB or more goes as pieces of 256
 * KiB (TOPO__ALLGATHER_PIECE, the last one shorter), built piece by piece,
 * member by member, each member's piece to every member in round order:
 * n copies of 256 KiB read in a row, from the cache, where whole blocks
 * read each block n times over from beyond a typical L2: at 2 members
 * this brings a block of 1 MiB to the copy limit (docs/CONSTANTS.md).
 * Each piece is a message of its own: n(n - 1) ceil(B / 256 KiB) in all.
 * Across nodes, where messages cost latency and no cache is shared, the
 * blocks go whole.
 *
 * Receipt slots: one per member (slot0 + rank), expecting n - 1 (times
 * the pieces); the local copies name none.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* alltoall direct's rounds, with the one block for all. */
int topo__plan_allgather_direct(struct topo_plan *p, topo_error *err)
{
	return topo__alltoall_rounds(p, "allgather direct", ROUNDS_ONE_BLOCK,
				     err);
}
