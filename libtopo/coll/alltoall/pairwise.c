/*
 * coll/alltoall/pairwise.c - alltoall "pairwise" (the default): n - 1
 * steps of pairwise exchange, as MPICH's MPIR_Alltoall_intra_pairwise.
 *
 * Partners: at step s (1 <= s < n) member r sends its block for member
 * d_s(r) and receives from member e_s(r), where for n a power of two
 * d_s(r) = e_s(r) = r XOR s (members exchange in pairs, as MPICH does),
 * and otherwise d_s(r) = (r + s) mod n, e_s(r) = (r - s) mod n.  Either
 * way every member sends to every other member exactly once and receives
 * from each exactly once.
 *
 * Cost, n members, B bytes per block: n(n - 1) transport messages of B
 * bytes, n(n - 1)B bytes in all, plus n local copies (a member's own
 * block); time about (n - 1)(alpha + B beta), one message in flight per
 * member at a time.
 *
 * Buffers: SEND (nB) and RECV (nB) per member, no WORK.  Member r's SEND
 * block d goes to member d's RECV block r; its own block by a local copy
 * SEND -> RECV, made first as MPICH makes it.
 *
 * Dependencies: a message writes straight into the destination's RECV, at
 * a block no other message writes, and reads SEND, which nothing writes:
 * no access conflicts, so the dependencies only give the plan the
 * algorithm's order.  Each member's sends form a chain, as a real
 * implementation issues them: its step-s send waits for its step s - 1
 * send (step 1 for the local copy).  A step does not wait for the message
 * received at the step before: in the one-sided model that receipt does
 * not hold the sender back.  n(n - 1) dependencies.
 *
 * Receipt slots: one per member (slot0 + rank), expecting n - 1; the
 * local copies name none.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* More messages than this is refused (plan.c's limit too). */
#define ALLTOALL_MAX_MESSAGES ((int64_t)1 << 30)

int topo__alltoall_rounds(struct topo_plan *p, const char *name, int flags,
			  topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	int64_t msgs = (int64_t)n * n, pieces = 1, piece = B;
	bool chained = flags & ROUNDS_CHAINED, one = flags & ROUNDS_ONE_BLOCK;
	bool pow2 = chained && (n & (n - 1)) == 0;
	bool by_member = one && B >= TOPO__ALLGATHER_BY_MEMBER;
	struct topo__msg m;
	int rc = 0;

	/* allgather direct on one node: blocks cut into pieces
	 * (coll_pattern.h; across nodes they would only add messages) */
	if (one && B >= 2 * TOPO__ALLGATHER_PIECE && p->t != NULL &&
	    topo__group_on_one_node(p->t->g) &&
	    msgs <= ALLTOALL_MAX_MESSAGES /
			(B / TOPO__ALLGATHER_PIECE + 1)) {
		piece = TOPO__ALLGATHER_PIECE;
		pieces = (B + piece - 1) / piece;
		msgs *= pieces;
	}

	if (msgs > ALLTOALL_MAX_MESSAGES)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "%s over %d members needs %lld "
				 "messages (n^2); at most %lld are planned",
				 name, (int)n, (long long)msgs,
				 (long long)ALLTOALL_MAX_MESSAGES);
	rc = topo__bufs_each(p, one ? B : (int64_t)n * B, (int64_t)n * B, 0,
			     err);
	if (rc == 0)
		rc = topo__plan_expect(p, msgs, chained ? msgs - n : 0, n, err);
	if (rc == 0)
		rc = topo__slots_each(p, (int32_t)((n - 1) * pieces), &slot0,
				      err);
	if (rc != 0)
		return rc;

	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__RECV, B);
	/* Member by member (allgather direct from 4 KiB): each member's
	 * block, or piece c of it, to every member in round order, so that
	 * it goes out n times in a row, from the cache. */
	for (int64_t c = 0; rc == 0 && by_member && c < pieces; c++)
		for (int32_t r = 0; rc == 0 && r < n; r++)
			for (int32_t s = 0; rc == 0 && s < n; s++) {
				int64_t at = c * piece;

				m.src = r;
				m.dst = (int32_t)(((int64_t)r + s) % n);
				m.soff = at;
				m.doff = (int64_t)r * B + at;
				m.len = B - at < piece ? B - at : piece;
				m.slot = s == 0 ? -1 : slot0 + m.dst;
				rc = topo__plan_msg(p, &m, NULL, err);
			}
	if (by_member)
		return rc;
	/* Built step by step, n messages a step in member order: member
	 * r's step s - 1 message is n ids before its step s one. */
	for (int32_t s = 0; rc == 0 && s < n; s++)
		for (int32_t r = 0; rc == 0 && r < n; r++) {
			int32_t d =
			    pow2 ? r ^ s : (int32_t)(((int64_t)r + s) % n);
			int64_t id;

			m.src = r;
			m.dst = d;
			m.soff = one ? 0 : (int64_t)d * B;
			m.doff = (int64_t)r * B;
			m.slot = s == 0 ? -1 : slot0 + d;
			rc = topo__plan_msg(p, &m, &id, err);
			if (rc == 0 && chained && s > 0)
				rc = topo__plan_dep(p, id - n, id, err);
		}
	return rc;
}

int topo__plan_alltoall_pairwise(struct topo_plan *p, topo_error *err)
{
	return topo__alltoall_rounds(p, "alltoall pairwise", ROUNDS_CHAINED,
				     err);
}
