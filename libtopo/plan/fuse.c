/*
 * fuse.c - which of a reducing plan's copies may be fused with their
 * first combine (exec_internal.h, struct topo_plan's fuse), found once
 * when the plan is finished and read by every run of it.
 *
 * A reduction starts its accumulator as a member's own contribution, a
 * local COPY of its SEND, and then REDUCEs the others' into it: two passes
 * over the result where one would do.  A transport may instead hold such
 * a copy back and write, at the first of those REDUCEs to come, dst = own
 * OP other (transport_inproc.c does).  That is safe when:
 *   - the copy is local, out of a SEND, into another buffer, of more
 *     bytes than a run moves itself (TOPO__SMALL_COPY);
 *   - each of its successors is a REDUCE into exactly its bytes (a
 *     "combine", claimed by no other copy) or waits for one of them, so
 *     that every path on from the copy passes through a combine and
 *     nothing reads or writes the accumulator before the first one;
 *   - no message of the plan writes a SEND, so the copy's source is still
 *     as it was when the first combine comes.
 * The MPI engine decides the same over its two-sided schedules
 * (engine.c), where only received combines qualify.
 */
#define TOPO_INTERNAL
#include "run/transport.h"

/* Whether message f of p may be fused with copy c: a REDUCE into exactly
 * c's bytes, not claimed by another copy. */
static bool combine_of(const struct topo_plan *p, const int32_t *fuse,
		       const struct topo__msg *c, int32_t f)
{
	const struct topo__msg *m = &p->msg[f];

	return m->kind == TOPO__REDUCE && m->dst == c->dst &&
	       m->dbuf == c->dbuf && m->doff == c->doff && m->len == c->len &&
	       fuse[f] < 0;
}

/* Whether copy e may be fused (see the file comment). */
static bool fusable(const struct topo_plan *p, const int32_t *fuse, int64_t e)
{
	const struct topo__msg *c = &p->msg[e];
	const int64_t lo = p->succ_off[e], hi = p->succ_off[e + 1];
	int64_t ncomb = 0;

	if (c->kind != TOPO__COPY || c->src != c->dst ||
	    c->sbuf != TOPO__SEND || c->dbuf == TOPO__SEND ||
	    c->len <= TOPO__SMALL_COPY)
		return false;
	for (int64_t k = lo; k < hi; k++)
		ncomb += combine_of(p, fuse, c, p->succ[k]);
	if (ncomb == 0)
		return false;
	for (int64_t k = lo; k < hi; k++) {
		int32_t g = p->succ[k];
		bool after = combine_of(p, fuse, c, g);

		/* g also waits for one of the combines */
		for (int64_t j = lo; !after && j < hi; j++) {
			int32_t f = p->succ[j];

			if (!combine_of(p, fuse, c, f))
				continue;
			for (int64_t i = p->succ_off[f];
			     !after && i < p->succ_off[f + 1]; i++)
				after = p->succ[i] == g;
		}
		if (!after)
			return false;
	}
	return true;
}

int topo__plan_fuse(struct topo_plan *p, topo_error *err)
{
	int64_t nfused = 0;

	if (p->fuse != NULL || p->msg == NULL || p->succ_off == NULL ||
	    !topo_op_reduces(p->params.op))
		return 0;
	for (int64_t i = 0; i < p->nmsg; i++)
		if (p->msg[i].dbuf == TOPO__SEND)
			return 0;
	p->fuse = topo__mallocarray((size_t)p->nmsg + 1, TOPO__FUSE_BYTES);
	if (p->fuse == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory: the fused copies' table "
				 "needs %lld bytes",
				 (long long)(p->nmsg * TOPO__FUSE_BYTES));
	for (int64_t i = 0; i < p->nmsg; i++)
		p->fuse[i] = -1;
	for (int64_t e = 0; e < p->nmsg; e++) {
		if (!fusable(p, p->fuse, e))
			continue;
		nfused++;
		for (int64_t k = p->succ_off[e]; k < p->succ_off[e + 1]; k++)
			if (combine_of(p, p->fuse, &p->msg[e], p->succ[k]))
				p->fuse[p->succ[k]] = (int32_t)e;
		p->fuse[e] = (int32_t)e;
	}
	if (nfused == 0) {
		topo__free(p->fuse);
		p->fuse = NULL;
	}
	return 0;
}
