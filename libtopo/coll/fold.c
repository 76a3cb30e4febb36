/*
 * coll/fold.c - the planning steps that the recursive algorithms over the
 * fold to a power of two (coll_pattern.h, struct topo__fold) share:
 * allgather recursive-doubling and reduce-scatter recursive-halving
 * number their members, count their receipts and chain their steps the
 * same way, and differ only in which half each step moves, and how
 * (their receipt counters: coll/slots.c).
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

int topo__fold_ids_new(struct topo__fold_ids *ids, const struct topo__fold *f,
		       const char *what, topo_error *err)
{
	ids->own = topo__mallocarray((size_t)f->pof2, sizeof(int64_t));
	ids->fold = topo__mallocarray((size_t)f->rem + 1, sizeof(int64_t));
	ids->prev = topo__mallocarray((size_t)f->pof2, sizeof(int64_t));
	ids->cur = topo__mallocarray((size_t)f->pof2, sizeof(int64_t));
	if (ids->own != NULL && ids->fold != NULL && ids->prev != NULL &&
	    ids->cur != NULL)
		return 0;
	topo__fold_ids_free(ids);
	return topo__nomem(err, what, f->n);
}

void topo__fold_ids_free(struct topo__fold_ids *ids)
{
	topo__free(ids->own);
	topo__free(ids->fold);
	topo__free(ids->prev);
	topo__free(ids->cur);
	ids->own = ids->fold = ids->prev = ids->cur = NULL;
}

int topo__fold_step_deps(struct topo_plan *p, const struct topo__fold *f,
			 const struct topo__fold_ids *ids, int32_t k, int32_t v,
			 int32_t pw, int64_t id, topo_error *err)
{
	int rc;

	if (k == 0) {
		rc = topo__plan_dep(p, ids->own[v], id, err);
		if (rc == 0 && v < f->rem)
			rc = topo__plan_dep(p, ids->fold[v], id, err);
		return rc;
	}
	rc = topo__plan_dep(p, ids->prev[v], id, err);
	if (rc == 0)
		rc = topo__plan_dep(p, ids->prev[pw], id, err);
	return rc;
}

int topo__fold_step(struct topo_plan *p, const struct topo__fold *f,
		    struct topo__fold_ids *ids, const struct topo__msg *tmpl,
		    int32_t k, bool halving, int64_t B, int64_t slot0,
		    topo_error *err)
{
	/* Doubling pairs bit k, then the bit above; halving the other way
	 * round, from the top bit down. */
	int32_t mask = halving ? f->pof2 >> (k + 1) : (int32_t)1 << k,
		pmask = halving ? mask << 1 : mask >> 1;
	struct topo__msg m = *tmpl;
	int rc = 0;

	for (int32_t v = 0; rc == 0 && v < f->pof2; v++) {
		int32_t w = v ^ mask, a = (halving ? w : v) & ~(mask - 1);
		int64_t lo = topo__fold_run_lo(f, a),
			hi = topo__fold_run_lo(f, a + mask);

		m.src = topo__fold_old(f, v);
		m.dst = topo__fold_old(f, w);
		m.soff = m.doff = lo * B;
		m.len = (hi - lo) * B;
		m.slot = slot0 + m.dst;
		rc = topo__plan_msg(p, &m, &ids->cur[v], err);
		if (rc == 0 && halving)
			rc = topo__plan_dep(p, ids->own[w], ids->cur[v], err);
		if (rc == 0)
			rc = topo__fold_step_deps(p, f, ids, k, v, v ^ pmask,
						  ids->cur[v], err);
	}
	topo__fold_ids_next(ids);
	return rc;
}
