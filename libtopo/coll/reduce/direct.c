/*
 * coll/reduce/direct.c - reduce "direct": the logical root combines every
 * member's contribution straight into its receive buffer, segment by
 * segment (reduce-scatter direct's chains, for the root's one block; the
 * linear reduce of MPI libraries, with the contributions read where they
 * lie).  It uses no tree: any is accepted.
 *
 * Cost, n members, B bytes per member in S segments: (n - 1)S transport
 * REDUCE messages moving (n - 1)B bytes, the fewest any reduce moves: no
 * partial result is written anywhere but the root's RECV, or read again.
 * Time about (n - 1)(alpha + (B/S)(beta + gamma)) per segment at the root,
 * whose REDUCEs into one segment come one after another; the S chains run
 * at once.  Local steps: S copies at the root (its own SEND into RECV).
 *
 * The root's RECV, segment by segment: first a local copy of the root's
 * own SEND segment, then a REDUCE of the same segment of members L + 1,
 * L + 2, ..., L + n - 1 (mod n), each waiting for the one before: a REDUCE
 * may not overtake the copy it combines with, and two into the same bytes
 * may not run at once.  A participant runs a chain from start to end
 * while its segment stays in its cache; every source is read once.  (The
 * in-process transport fuses the copy with the first REDUCE, plan/fuse.c.)
 *
 * Segmentation: params.segment > 0 (a multiple of the type size) cuts B
 * into segments of that size.  0 (the default) leaves B whole below
 * DIRECT_AUTO_MIN, and from there cuts it into segments of a quarter of B,
 * at least DIRECT_AUTO_MIN_SEGMENT and at most DIRECT_AUTO_MAX_SEGMENT, so
 * that there are chains for several threads and each segment still fits a
 * core's cache.  Measured in-process, 16 members on 2 threads, int32 sum,
 * medians of 3-5 interleaved rounds: at 1 MiB, 64 KiB segments 1.00, 128
 * KiB 0.85, 256 KiB 0.88, 512 KiB (2 chains) 0.73, whole (1 chain) 1.80;
 * at 16 MiB, 64 KiB 1.00, 256 KiB 0.75, 512 KiB-1 MiB 0.70, 4 MiB 0.73;
 * at 256 KiB, whole 1.30 and 64-128 KiB 0.61-0.63 of the tree's time; at
 * 128 KiB, 64 KiB segments 0.32 of it, whole 0.56.
 *
 * Buffers: SEND (B) per member, RECV (B) at the logical root, no WORK.
 *
 * Receipt slots: one, the root's, expecting (n - 1)S; the copies name
 * none.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* More messages than this is refused (plan.c's limit too), here with a
 * hint at the segment size. */
#define DIRECT_MAX_MESSAGES ((int64_t)1 << 30)
/* Automatic segmentation (see the file comment). */
#define DIRECT_AUTO_MIN ((int64_t)128 << 10)
#define DIRECT_AUTO_MIN_SEGMENT ((int64_t)64 << 10)
#define DIRECT_AUTO_MAX_SEGMENT ((int64_t)256 << 10)

int topo__plan_reduce_direct(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n, L = p->root;
	int64_t B = (int64_t)p->params.bytes, seg, nseg, slot0 = -1;
	struct topo__msg m;
	int rc = topo__plan_segment(p, B, INT64_MAX, B, &seg, &nseg, err);

	if (rc != 0)
		return rc;
	/* the default (see the file comment) */
	if (p->params.segment == 0 && B >= DIRECT_AUTO_MIN) {
		int64_t ts = (int64_t)p->type_size;

		seg = B / 4 < DIRECT_AUTO_MIN_SEGMENT ? DIRECT_AUTO_MIN_SEGMENT
						      : B / 4;
		seg = seg > DIRECT_AUTO_MAX_SEGMENT ? DIRECT_AUTO_MAX_SEGMENT
						    : seg;
		seg -= seg % ts;
		nseg = (B + seg - 1) / seg;
	}
	rc = topo__plan_segments_fit(p, nseg, seg, n, 0, DIRECT_MAX_MESSAGES,
				     err);
	for (int32_t r = 0; rc == 0 && r < n; r++)
		rc = topo__plan_bufsize(p, TOPO__SEND, r, B, err);
	if (rc == 0)
		rc = topo__plan_bufsize(p, TOPO__RECV, L, B, err);
	if (rc == 0)
		rc = topo__plan_expect(p, (int64_t)n * nseg,
				       (int64_t)(n - 1) * nseg, 1, err);
	if (rc == 0)
		rc = topo__plan_slots(p, 1, L, &slot0, err);
	if (rc != 0)
		return rc;
	if (p->slot_expect != NULL)
		p->slot_expect[slot0] = (int32_t)((n - 1) * nseg);
	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__RECV, 0);
	m.dst = L;
	for (int64_t k = 0; rc == 0 && k < nseg; k++) {
		int64_t off = k * seg;

		m.soff = m.doff = off;
		m.len = B - off < seg ? B - off : seg;
		rc = topo__plan_chain(p, &m, L, n, slot0, err);
	}
	return rc;
}
