/*
 * coll/scatter/direct.c - scatter "direct": the root sends every member's
 * block straight from its SEND to that member's RECV, all at once (seed
 * 004's chunked gather run backwards; MPICH's and Open MPI's "linear"
 * scatter).
 *
 * Cost, n members, B bytes per member: n - 1 transport messages of B
 * bytes, (n - 1)B bytes in all, the least any scatter can move (scatter
 * "tree" moves B times the sum of the members' depths); time about (n -
 * 1)(alpha + B beta) at the root, whose link carries every block, against
 * depth * alpha plus the largest subtree's bytes for "tree".  So it wins
 * where the root's sends can go out in parallel (threads of one process,
 * shared memory) and loses where one link serialises them.  One local
 * step: the root keeps its own block (SEND -> RECV).
 *
 * Buffers: the root's SEND (nB, block r at rB) and every member's RECV
 * (B); no WORK.  Dependencies: none (SEND is only read, and each RECV is
 * written once).  Messages are built in rank order from root + 1 round to
 * root - 1, so that the run's first messages do not all go to rank 0.
 *
 * Receipt slots: one per member (slot0 + rank), expecting 1 arrival; the
 * root's expects 0, as scatter "tree".
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

int topo__plan_scatter_direct(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n, root = p->root;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	struct topo__msg m;
	int rc;

	if (p->params.bytes > (size_t)INT64_MAX / (size_t)n)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "scatter: %d blocks of %zu bytes do not fit "
				 "in a 64-bit size",
				 (int)n, p->params.bytes);
	rc = topo__plan_bufsize(p, TOPO__SEND, root, (int64_t)n * B, err);
	for (int32_t v = 0; rc == 0 && v < n; v++)
		rc = topo__plan_bufsize(p, TOPO__RECV, v, B, err);
	if (rc == 0)
		rc = topo__plan_expect(p, n, 0, n, err);
	if (rc == 0)
		rc = topo__scatter_slots(p, &slot0, err);

	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__RECV, B);
	m.src = root;
	for (int32_t k = 0; rc == 0 && k < n; k++) {
		int32_t v = (int32_t)(((int64_t)root + 1 + k) % n);

		m.dst = v;
		m.soff = (int64_t)v * B;
		/* The root's own block, last: a local step, no receipt. */
		m.slot = v == root ? -1 : slot0 + v;
		rc = topo__plan_msg(p, &m, NULL, err);
	}
	return rc;
}
