/*
 * coll/reduce_scatter/ring.c - reduce-scatter "ring": each block's partial
 * reduction travels round the ring of ranks 0, 1, ..., n - 1, 0, every
 * member adding its contribution, and ends at the member that owns it.
 *
 * Cost, n members, B bytes per block (n B per member): n - 1 steps;
 * n(n - 1) transport REDUCE messages of B bytes, moving n(n - 1)B bytes;
 * time about (n - 1)(alpha + B(beta + gamma)), every member sending one
 * block and combining one at each step.  Local steps: one copy per member
 * (its own block's contribution into RECV) and, for n > 2, one or two
 * copies of the blocks it accumulates into WORK.
 *
 * At step s (0 <= s < n - 1) member r REDUCEs its partial of block
 * b = (r - s - 1) mod n into member r + 1's accumulator of block b.  Block
 * b starts at member b + 1 and ends, after n - 1 steps, at member b with
 * every contribution in.
 *
 * Buffers: SEND (n B), RECV (B) and, for n > 2, WORK (n B) per member.
 * Member q's accumulator of its own block is its RECV (a local copy of
 * SEND block q first), so the last step REDUCEs straight into the result
 * and no final copy is needed; its accumulator of block b != q is WORK at
 * b B.  Member q receives every block but q - 1, the one it sends first:
 * the blocks q + 1 .. q + n - 2 (mod n) go into WORK by one local copy,
 * two when the run wraps round.  A member's step 0 partial is its own
 * contribution alone and goes straight from SEND; later steps send from
 * WORK.
 *
 * Dependencies: a REDUCE into an accumulator waits for the copy that
 * initialised it (a REDUCE may not overtake the COPY it combines with);
 * member r's step s >= 1 waits for the step s - 1 REDUCE of member r - 1,
 * which completed its partial (the accumulator's copy came before that).
 * Each accumulator receives one REDUCE and is read once after it, so
 * nothing else needs ordering.
 *
 * Receipt slots: one per member (slot0 + rank), expecting n - 1.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* The accumulators: member q's own block into its RECV (initr[q]) and,
 * for n > 2, blocks q + 1 .. q + n - 2 into its WORK in one or two
 * copies, [q + 1, min(n, q + n - 1)) (initw[2 q]) then [0, q - 1) when
 * it wraps (initw[2 q + 1]); -1 for a copy not made. */
static int accumulators(struct topo_plan *p, int64_t *initr, int64_t *initw,
			topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes;
	int rc = 0;

	for (int32_t q = 0; rc == 0 && q < n; q++) {
		/* the first run's blocks, q + 1 up to n - 1 at most */
		int32_t cnt = n - q - 1 < n - 2 ? n - q - 1 : n - 2;
		int64_t lo = (int64_t)(q + 1) * B;

		rc = topo__local_copy(p, q, TOPO__SEND, (int64_t)q * B,
				      TOPO__RECV, 0, B, &initr[q], err);
		initw[2 * q] = initw[2 * q + 1] = -1;
		if (n <= 2)
			continue;
		if (rc == 0 && q + 1 < n)
			rc = topo__local_copy(p, q, TOPO__SEND, lo, TOPO__WORK,
					      lo, (int64_t)cnt * B,
					      &initw[2 * q], err);
		if (rc == 0 && q >= 2)
			rc = topo__local_copy(p, q, TOPO__SEND, 0, TOPO__WORK,
					      0, (int64_t)(q - 1) * B,
					      &initw[2 * q + 1], err);
	}
	return rc;
}

/* Step s: member r REDUCEs block (r - s - 1) mod n into r + 1's
 * accumulator of it, after that accumulator's copy and r - 1's REDUCE of
 * the step before (prev), which completed r's partial. */
static int step(struct topo_plan *p, int32_t s, int64_t slot0,
		const int64_t *initr, const int64_t *initw, const int64_t *prev,
		int64_t *cur, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes;
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__REDUCE, s == 0 ? TOPO__SEND : TOPO__WORK,
		       TOPO__WORK, B);
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		int32_t b =
		    (int32_t)(((int64_t)r - s - 1 + 2 * (int64_t)n) % n);
		int32_t d = r == n - 1 ? 0 : r + 1;
		int32_t left = r == 0 ? n - 1 : r - 1;
		int64_t init;

		m.src = r;
		m.dst = d;
		m.soff = (int64_t)b * B;
		if (b == d) {
			m.dbuf = TOPO__RECV;
			m.doff = 0;
			init = initr[d];
		} else {
			m.dbuf = TOPO__WORK;
			m.doff = (int64_t)b * B;
			init = b > d ? initw[2 * d] : initw[2 * d + 1];
		}
		m.slot = slot0 + d;
		rc = topo__plan_msg(p, &m, &cur[r], err);
		if (rc == 0)
			rc = topo__plan_dep(p, init, cur[r], err);
		if (rc == 0 && s > 0)
			rc = topo__plan_dep(p, prev[left], cur[r], err);
	}
	return rc;
}

int topo__plan_reduce_scatter_ring(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	int64_t *initr = NULL, *initw = NULL, *prev = NULL, *cur = NULL;
	int rc = 0;

	rc = topo__bufs_each(p, (int64_t)n * B, B, n > 2 ? (int64_t)n * B : 0,
			     err);
	/* n(n - 1) REDUCEs with two dependencies each, three copies per
	 * member. */
	if (rc == 0)
		rc = topo__plan_expect(p, (int64_t)n * (n + 2),
				       2 * (int64_t)n * n, n, err);
	if (rc == 0)
		rc = topo__slots_each(p, n - 1, &slot0, err);
	if (rc != 0)
		return rc;
	initr = topo__mallocarray((size_t)n, sizeof(int64_t));
	initw = topo__mallocarray(2 * (size_t)n, sizeof(int64_t));
	prev = topo__mallocarray((size_t)n, sizeof(int64_t));
	cur = topo__mallocarray((size_t)n, sizeof(int64_t));
	if (initr == NULL || initw == NULL || prev == NULL || cur == NULL) {
		rc = topo__nomem(err, "reduce-scatter ring", n);
		goto done;
	}
	rc = accumulators(p, initr, initw, err);
	for (int32_t s = 0; rc == 0 && s < n - 1; s++) {
		int64_t *t = prev;

		rc = step(p, s, slot0, initr, initw, prev, cur, err);
		prev = cur;
		cur = t;
	}
done:
	topo__free(initr);
	topo__free(initw);
	topo__free(prev);
	topo__free(cur);
	return rc;
}
