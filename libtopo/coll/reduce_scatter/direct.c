/*
 * coll/reduce_scatter/direct.c - reduce-scatter "direct": every member
 * combines the other members' contributions to its own block straight
 * into its receive buffer, each block reduced where it ends (MPICH's
 * pairwise reduce-scatter, MPIR_Reduce_scatter_block_intra_pairwise, in
 * which at step i each rank receives rank - i's contribution to its block
 * and combines it into its result; here all steps may be in flight, and
 * a member reads the others' send buffers where they lie).
 *
 * Cost, n members, B bytes per block (n B per member), each block cut in
 * S segments: n(n - 1)S transport REDUCE messages of B / S bytes, moving
 * n(n - 1)B bytes, the fewest any reduce-scatter moves: no partial result
 * is ever sent on.  Time about (n - 1)(alpha + B(beta + gamma)) at each
 * member, whose n - 1 REDUCEs arrive one after another; the n members'
 * chains run at once.  Local steps: S copies per member (its own
 * contribution into RECV).
 *
 * Member q's RECV, segment by segment: first a local copy of its own SEND
 * block q, then a REDUCE of SEND block q of members q + 1, q + 2, ...,
 * q + n - 1 (mod n), each waiting for the one before: a REDUCE may not
 * overtake the copy it combines with, and two into the same bytes may not
 * run at once.  So each segment's destination is written by one chain of
 * n messages, which a participant runs from start to end while the
 * segment stays in its cache; the sources are read once each.  Member q's
 * chain starts at q + 1, so that the members' first REDUCEs read n
 * different members' buffers.
 *
 * Segmentation: params.segment > 0 (a multiple of the type size) cuts
 * each block into segments of that size, each with its own chain, for
 * more chains than the n members give; 0 (the default) leaves every
 * block whole.  The n chains keep the threads of a run busy already, and
 * cutting them was slower in-process: 16 members on 2 threads, 1 MiB
 * blocks, 64 KiB segments 1.30x the time of whole blocks, 256 KiB 1.07x;
 * 2 members, 1 and 16 MiB, 64 KiB segments 1.17x.
 *
 * Buffers: SEND (n B) and RECV (B) per member, no WORK.
 *
 * Receipt slots: one per member (slot0 + rank), expecting (n - 1)S; the
 * copies name none.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

#define RSD_MAX_MESSAGES ((int64_t)1 << 30)

/*
 * Refuses (TOPO_ELIMIT) a plan of more than RSD_MAX_MESSAGES messages,
 * n^2 per segment, with the advice that would help.  Whole blocks (the
 * default) take the fewest, so past 32768 members no segment helps, and
 * of the other algorithms ring needs as many messages (n(n - 1));
 * recursive-halving and tree need n log n and n.  Below that, segments of
 * B / (RSD_MAX_MESSAGES / n^2) bytes or more, or whole blocks, fit.
 */
static int too_many(const struct topo_plan *p, int64_t nseg, int64_t seg,
		    topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, per = (int64_t)n * n, most;
	int64_t ts = (int64_t)p->type_size, least;

	if (per > RSD_MAX_MESSAGES)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "reduce-scatter direct: %d members need "
				 "%lld messages even with whole blocks (one "
				 "per pair of members), more than %lld: use "
				 "recursive-halving or tree, or a group of at "
				 "most 32768 members",
				 (int)n, (long long)per,
				 (long long)RSD_MAX_MESSAGES);
	most = RSD_MAX_MESSAGES / per;
	if (nseg <= most)
		return 0;
	least = (B + most - 1) / most;
	least = (least + ts - 1) / ts * ts;
	return topo__err(err, TOPO_ELIMIT, NULL, NULL,
			 "reduce-scatter direct: %lld segments of %lld bytes "
			 "over %d members need more than %lld messages: use "
			 "segments of at least %lld bytes, or 0 for whole "
			 "blocks",
			 (long long)nseg, (long long)seg, (int)n,
			 (long long)RSD_MAX_MESSAGES, (long long)least);
}

int topo__plan_reduce_scatter_direct(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, seg, nseg, slot0 = -1;
	struct topo__msg m;
	/* Whole blocks unless asked: cutting was slower in-process. */
	int rc = topo__plan_segment(p, B, INT64_MAX, B, &seg, &nseg, err);

	if (rc != 0)
		return rc;
	rc = too_many(p, nseg, seg, err);
	if (rc == 0)
		rc = topo__bufs_each(p, (int64_t)n * B, B, 0, err);
	/* Per member and segment a copy and n - 1 REDUCEs, each waiting
	 * for the message before it. */
	if (rc == 0)
		rc = topo__plan_expect(p, (int64_t)n * n * nseg,
				       (int64_t)n * (n - 1) * nseg, n, err);
	if (rc == 0)
		rc = topo__plan_slots(p, n, -1, &slot0, err);
	if (rc != 0)
		return rc;
	for (int32_t q = 0; p->slot_expect != NULL && q < n; q++)
		p->slot_expect[slot0 + q] = (int32_t)((n - 1) * nseg);

	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__RECV, 0);
	for (int64_t k = 0; rc == 0 && k < nseg; k++) {
		int64_t off = k * seg, len = B - off < seg ? B - off : seg;

		for (int32_t q = 0; rc == 0 && q < n; q++) {
			m.dst = q;
			m.soff = (int64_t)q * B + off;
			m.doff = off;
			m.len = len;
			rc = topo__plan_chain(p, &m, q, n, slot0 + q, err);
		}
	}
	return rc;
}
