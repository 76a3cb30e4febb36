/*
 * coll/allgather/bruck.c - allgather "bruck" (Bruck, Ho, Kipnis, Upfal and
 * Weathersby, "Efficient algorithms for all-to-all communications in
 * multiport message-passing systems", IEEE TPDS 8(11), 1997; MPICH's
 * MPIR_Allgather_intra_brucks): ceil(log2 n) steps for any n, each member
 * doubling the run of blocks it holds at every step.
 *
 * Cost, n members, B bytes per member, K = ceil(log2 n) steps: at step k
 * (0 <= k < K) every member sends c_k = min(2^k, n - 2^k) blocks, so nK
 * transport messages moving n(n - 1)B bytes in all; time about
 * K alpha + (n - 1)B beta.  Local steps: a copy of the own block into
 * WORK and one or two copies (one for rank 0) rotating WORK into RECV.
 *
 * Buffers: SEND (B), WORK (n * B) and RECV (n * B) per member.  Member r's
 * WORK holds the blocks rotated so that its own comes first: WORK block j
 * is member (r + j) mod n's block.  It starts with a local copy SEND ->
 * WORK at 0.  At step k member r sends its first c_k WORK blocks to member
 * (r - 2^k) mod n, which stores them at 2^k * B of its WORK: they are the
 * blocks of members (r - 2^k) + 2^k + j for j < c_k, in its rotation.
 * Step 0's message, the own block alone, goes straight from SEND, so it
 * does not wait for the copy.  After step K - 1 every WORK holds all n
 * blocks; member r copies WORK [0, (n - r)B) to RECV at r * B and WORK
 * [(n - r)B, nB) to RECV at 0.
 *
 * Dependencies: member r's step k >= 1 reads WORK [0, c_k B), which holds
 * the own copy and the blocks received at steps 0 .. k - 1 (c_k <= 2^k):
 * it waits for its own step k - 1 message (which waited for those before
 * it, and for the own copy at k = 1) and for the step k - 1 message it
 * received.  The rotation waits for the own copy and for every message
 * received.  Each WORK block is written once and read after, so nothing
 * else needs ordering.
 *
 * Receipt slots: one per member (slot0 + rank), expecting K.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

/* Message ids by member: own[r] its own block's copy into WORK,
 * prev[r] and cur[r] its sends of the step before and of this one, and
 * in[k * n + r] the message it received at step k. */
struct ids {
	int64_t *own, *prev, *cur, *in;
};

/* Step k: member r sends its first c_k WORK blocks (step 0: its SEND) to
 * member (r - 2^k) mod n, at 2^k blocks into that one's WORK. */
static int step(struct topo_plan *p, int64_t slot0, struct ids *x, int32_t k,
		topo_error *err)
{
	int32_t n = p->n, d = (int32_t)1 << k, c = d < n - d ? d : n - d;
	int64_t B = (int64_t)p->params.bytes;
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, k == 0 ? TOPO__SEND : TOPO__WORK,
		       TOPO__WORK, (int64_t)c * B);
	m.doff = (int64_t)d * B;
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		int32_t to = r - d < 0 ? r - d + n : r - d;

		m.src = r;
		m.dst = to;
		m.slot = slot0 + to;
		rc = topo__plan_msg(p, &m, &x->cur[r], err);
		x->in[(size_t)k * (size_t)n + (size_t)to] = x->cur[r];
		if (rc == 0 && k == 1)
			rc = topo__plan_dep(p, x->own[r], x->cur[r], err);
		if (rc == 0 && k > 1)
			rc = topo__plan_dep(p, x->prev[r], x->cur[r], err);
		/* what r received at step k - 1, from r + d / 2 */
		if (rc == 0 && k > 0)
			rc =
			    topo__plan_dep(p, x->prev[((int64_t)r + d / 2) % n],
					   x->cur[r], err);
	}
	{
		int64_t *t = x->prev;

		x->prev = x->cur;
		x->cur = t;
	}
	return rc;
}

/* The rotation into rank order: WORK [0, (n - r)B) to RECV at r * B and
 * (but at rank 0) WORK [(n - r)B, nB) to RECV at 0, after the own copy
 * and everything received. */
static int rotate(struct topo_plan *p, int32_t K, const struct ids *x,
		  topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes;
	int rc = 0;

	for (int32_t r = 0; rc == 0 && r < n; r++) {
		/* WORK's first head bytes hold blocks r .. n - 1, its last
		 * tail bytes blocks 0 .. r - 1 */
		int64_t head = (int64_t)(n - r) * B, tail = (int64_t)r * B;

		for (int part = 0; rc == 0 && part < 2; part++) {
			int64_t id;

			if (part == 1 && r == 0)
				break;
			rc = topo__local_copy(p, r, TOPO__WORK,
					      part == 0 ? 0 : head, TOPO__RECV,
					      part == 0 ? tail : 0,
					      part == 0 ? head : tail, &id,
					      err);
			if (rc == 0)
				rc = topo__plan_dep(p, x->own[r], id, err);
			for (int32_t k = 0; rc == 0 && k < K; k++)
				rc = topo__plan_dep(
				    p, x->in[(size_t)k * (size_t)n + (size_t)r],
				    id, err);
		}
	}
	return rc;
}

/* Buffers, the expected size and the receipt slots (K each). */
static int setup(struct topo_plan *p, int32_t K, int64_t *slot0,
		 topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes;
	int rc = 0;

	rc = topo__bufs_each(p, B, (int64_t)n * B, n > 1 ? (int64_t)n * B : 0,
			     err);
	/* nK messages with 2 dependencies each, and per member a copy, two
	 * rotation copies with K + 1 dependencies each. */
	if (rc == 0)
		rc = topo__plan_expect(p, (int64_t)n * (K + 3),
				       (int64_t)n * (4 * (int64_t)K + 2), n,
				       err);
	if (rc == 0)
		rc = topo__slots_each(p, K, slot0, err);
	return rc;
}

int topo__plan_allgather_bruck(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n, K = 0;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1;
	struct ids x = {NULL, NULL, NULL, NULL};
	int rc;

	while (K < 31 && ((int64_t)1 << K) < n)
		K++;
	rc = setup(p, K, &slot0, err);
	if (rc != 0)
		return rc;
	if (n == 1)
		return topo__local_copy(p, 0, TOPO__SEND, 0, TOPO__RECV, 0, B,
					NULL, err);
	x.own = topo__mallocarray((size_t)n, sizeof(int64_t));
	x.prev = topo__mallocarray((size_t)n, sizeof(int64_t));
	x.cur = topo__mallocarray((size_t)n, sizeof(int64_t));
	x.in = topo__mallocarray((size_t)n * (size_t)K, sizeof(int64_t));
	if (x.own == NULL || x.prev == NULL || x.cur == NULL || x.in == NULL) {
		rc = topo__nomem(err, "allgather bruck", n);
		goto done;
	}
	/* Each member's own block first in its WORK. */
	for (int32_t r = 0; rc == 0 && r < n; r++)
		rc = topo__local_copy(p, r, TOPO__SEND, 0, TOPO__WORK, 0, B,
				      &x.own[r], err);
	for (int32_t k = 0; rc == 0 && k < K; k++)
		rc = step(p, slot0, &x, k, err);
	if (rc == 0)
		rc = rotate(p, K, &x, err);
done:
	topo__free(x.own);
	topo__free(x.prev);
	topo__free(x.cur);
	topo__free(x.in);
	return rc;
}
