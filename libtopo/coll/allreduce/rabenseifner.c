/*
 * coll/allreduce/rabenseifner.c - allreduce "rabenseifner": a
 * reduce-scatter by recursive halving, then an allgather by recursive
 * doubling (Rabenseifner 2004; MPICH's
 * MPIR_Allreduce_intra_reduce_scatter_allgather).  It ignores the tree.
 *
 * With pof2 the largest power of two <= n and rem = n - pof2, the fold of
 * allreduce.h first (among ranks 0 .. 2 rem - 1 each even one REDUCEs its
 * SEND into the next odd one's RECV and sits out), and last (each odd one
 * COPYs the result to the even one before it).  The pof2 others (new
 * ranks nr) cut B into pof2 blocks at element granularity (E = B / type
 * size elements, block i holding E / pof2 plus one for i < E % pof2: some
 * are empty when E < pof2) and each starts with all of them.
 * Reduce-scatter, steps k = 0 .. L - 1 (L = log2 pof2): nr and its
 * partner nr ^ 2^k hold the same range of blocks; the lower keeps its
 * lower half, the higher its upper half, and each REDUCEs the half the
 * other keeps into the other's RECV.  After L steps nr holds one block
 * reduced over everyone.  Allgather, steps k = L - 1 .. 0: the same pairs
 * in reverse, each COPYing the range it holds (its step-k half, complete)
 * into the other's RECV.
 *
 * One-sided, the halves make it simple: what a member sends at a step is
 * never what it keeps, so its partner REDUCEs straight into its RECV
 * (no WORK) while it reads the other half.  Every write into a member's
 * RECV waits for the one before it (writes into one RECV form a chain:
 * its copy, the fold's REDUCE, then one message per step), and every
 * read of it waits for the last write.  That covers the one
 * write-after-read too: a's allgather COPY at step k into the half b sent
 * away at the reduce-scatter's step k reads a's RECV, so it follows every
 * write into a, among them b's REDUCE of that step, the very message that
 * read the half.  A member the fold
 * did not touch sends its step-0 half from SEND (its RECV copy's bytes),
 * without waiting for the copy.  Messages of empty halves are not built.
 *
 * Cost, n members, B bytes: 2 pof2 L + 2 rem transport messages once
 * E >= pof2 (fewer when halves are empty), member nr sending
 * B/2 + B/4 + ... + B/pof2 bytes in each phase, about 2B in all; time
 * about 2L alpha + 2((pof2 - 1)/pof2)B beta + ((pof2 - 1)/pof2)B gamma,
 * plus the fold's 2(alpha + B beta) + B gamma when rem > 0: latency
 * logarithmic, bandwidth near-optimal.  Local steps: a copy SEND -> RECV
 * per member that takes part (n - rem).  At most 2 dependencies per
 * message.
 *
 * Buffers: SEND and RECV, B bytes each.
 *
 * Receipt slots: one per member, expecting every message into it (the
 * reduce-scatter's REDUCEs and the allgather's COPYs of non-empty halves,
 * the fold's).
 */
#define TOPO_INTERNAL
#include "allreduce.h"
#include "plan/plan.h"

/* What the two phases share: the fold, the blocks (E elements of ts
 * bytes cut into pof2), and per member the last write into its RECV
 * (cur), per new rank its message of the step (ids, -1 when its half is
 * empty) and the first block of the range it holds (lo). */
struct halves {
	struct topo_plan *p;
	struct topo__fold f;
	int64_t E, ts, slot0;
	int64_t *cur, *ids, *lo;
};

/* After the messages of the step of mask: each member's last write is
 * its partner's message into it, and the higher of each pair moves its
 * range by dlo (up a half while halving, down one while doubling). */
static void keep_half(struct halves *x, int32_t mask, int64_t dlo)
{
	for (int32_t nr = 0; nr < x->f.pof2; nr++) {
		if (x->ids[nr ^ mask] >= 0)
			x->cur[topo__fold_old(&x->f, nr)] = x->ids[nr ^ mask];
		if (nr & mask)
			x->lo[nr] += dlo;
	}
}

/* Blocks [first, first + half) from a to b (new ranks nr and nr ^ mask),
 * after the last writes into both; from SEND (no wait on a's own copy)
 * when send.  No message when the blocks are empty. */
static int halves_msg(struct halves *x, struct topo__msg *m, int32_t nr,
		      int32_t mask, int64_t first, int64_t half, bool send,
		      topo_error *err)
{
	int32_t a = topo__fold_old(&x->f, nr),
		b = topo__fold_old(&x->f, nr ^ mask);
	int rc;

	x->ids[nr] = -1;
	m->soff = m->doff = topo__block_off(x->E, x->f.pof2, first, x->ts);
	m->len =
	    topo__block_off(x->E, x->f.pof2, first + half, x->ts) - m->soff;
	if (m->len == 0)
		return 0;
	m->src = a;
	m->dst = b;
	m->sbuf = send ? TOPO__SEND : TOPO__RECV;
	rc = topo__allreduce_msg(x->p, m, x->slot0, &x->ids[nr], err);
	if (rc == 0 && !send)
		rc = topo__plan_dep(x->p, x->cur[a], x->ids[nr], err);
	if (rc == 0)
		rc = topo__plan_dep(x->p, x->cur[b], x->ids[nr], err);
	return rc;
}

/* The reduce-scatter, steps k = 0 .. L - 1: each REDUCEs the half of its
 * range its partner keeps into the partner's RECV. */
static int halving(struct halves *x, topo_error *err)
{
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__REDUCE, TOPO__RECV, TOPO__RECV, 0);
	for (int32_t nr = 0; nr < x->f.pof2; nr++)
		x->lo[nr] = 0;
	for (int32_t k = 0; rc == 0 && k < x->f.steps; k++) {
		int32_t mask = (int32_t)1 << k;
		int64_t half = (int64_t)x->f.pof2 >> (k + 1);

		for (int32_t nr = 0; rc == 0 && nr < x->f.pof2; nr++) {
			/* The partner's half: the upper one when nr is
			 * the lower of the two. */
			int64_t first = x->lo[nr] + ((nr & mask) ? 0 : half);
			bool send =
			    k == 0 && topo__fold_old(&x->f, nr) >= 2 * x->f.rem;

			rc =
			    halves_msg(x, &m, nr, mask, first, half, send, err);
		}
		keep_half(x, mask, half);
	}
	return rc;
}

/* The allgather, steps k = L - 1 .. 0: nr holds [lo, lo + half),
 * complete, and COPYs it to the partner, into the half the partner sent
 * away at step k. */
static int doubling(struct halves *x, topo_error *err)
{
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__RECV, TOPO__RECV, 0);
	for (int32_t k = x->f.steps - 1; rc == 0 && k >= 0; k--) {
		int32_t mask = (int32_t)1 << k;
		int64_t half = (int64_t)x->f.pof2 >> (k + 1);

		for (int32_t nr = 0; rc == 0 && nr < x->f.pof2; nr++)
			rc = halves_msg(x, &m, nr, mask, x->lo[nr], half, false,
					err);
		keep_half(x, mask, -half);
	}
	return rc;
}

int topo__plan_allreduce_rabenseifner(struct topo_plan *p, topo_error *err)
{
	struct halves x = {.p = p, .slot0 = -1};
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, msgs, deps;
	struct topo__fold *f = &x.f;
	int rc = 0;

	x.ts = (int64_t)p->type_size;
	x.E = B / x.ts;
	topo__fold_init(f, n);
	rc = topo__bufs_each(p, B, B, 0, err);
	/* Copies, the fold's 2 rem, 2 per new rank and step; a dependency
	 * per fold message, 2 per step's message. */
	msgs =
	    (int64_t)n + 2 * (int64_t)f->rem + 2 * (int64_t)f->pof2 * f->steps;
	deps = 2 * (int64_t)f->rem + 4 * (int64_t)f->pof2 * f->steps;
	if (rc == 0)
		rc = topo__plan_expect(p, msgs, deps, n, err);
	if (rc != 0)
		return rc;
	x.cur = topo__mallocarray((size_t)n, sizeof(int64_t));
	x.ids = topo__mallocarray((size_t)f->pof2, sizeof(int64_t));
	x.lo = topo__mallocarray((size_t)f->pof2, sizeof(int64_t));
	if (x.cur == NULL || x.ids == NULL || x.lo == NULL) {
		rc = topo__nomem(err, "allreduce rabenseifner", n);
		goto done;
	}
	rc = topo__plan_slots(p, n, -1, &x.slot0, err);
	/* cur[r]: the last write into r's RECV, after all the others. */
	if (rc == 0)
		rc = topo__fold_pre(p, f, B, x.slot0, x.cur, err);
	if (rc == 0)
		rc = halving(&x, err);
	if (rc == 0)
		rc = doubling(&x, err);
	if (rc == 0)
		rc = topo__fold_post(p, f, B, x.slot0, x.cur, err);
done:
	topo__free(x.cur);
	topo__free(x.ids);
	topo__free(x.lo);
	return rc;
}
