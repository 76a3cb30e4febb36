/*
 * coll/allreduce/allreduce.h - what the allreduce algorithms share: the
 * parameter check, blocks at element granularity, messages that count
 * their own receipt slots, the non-power-of-two fold of recursive
 * doubling and Rabenseifner, and allreduce tree's plan, which allreduce
 * hierarchical is too (the reduce phase it starts with: coll/reduce/
 * reduce.h).
 * Private to libtopo: define TOPO_INTERNAL before including.
 */
#ifndef TOPO_COLL_ALLREDUCE_H
#define TOPO_COLL_ALLREDUCE_H

#include "coll_pattern.h"
#include "plan/plan.h"

#include "../reduce/reduce.h"

/* Defined in coll/allreduce/tree.c: allreduce "tree" over p->t, which
 * allreduce "hierarchical" also is once its tree is checked. */
int topo__allreduce_over_tree(struct topo_plan *p, const char *name,
			      topo_error *err);

/* ---------------------------------------------------------------------- */
/* Blocks: E elements in nb blocks, the first E % nb of them one element
 * longer; some are empty when E < nb. */

static inline int64_t topo__block_off(int64_t elems, int64_t nb, int64_t b,
				      int64_t ts)
{
	int64_t q = elems / nb, r = elems % nb;

	return (b * q + (b < r ? b : r)) * ts;
}

static inline int64_t topo__block_len(int64_t elems, int64_t nb, int64_t b,
				      int64_t ts)
{
	return (elems / nb + (b < elems % nb)) * ts;
}

/* ---------------------------------------------------------------------- */
/* Messages */

/* Appends m; a message between members names its destination's receipt
 * slot slot0 + dst and adds one to what that slot expects (a local step
 * names none).  *id gets its index. */
static inline int topo__allreduce_msg(struct topo_plan *p, struct topo__msg *m,
				      int64_t slot0, int64_t *id,
				      topo_error *err)
{
	m->slot = m->src != m->dst ? slot0 + m->dst : -1;
	if (m->slot >= 0 && p->slot_expect != NULL)
		p->slot_expect[m->slot]++;
	return topo__plan_msg(p, m, id, err);
}

/* A dependency, when before exists (>= 0). */
static inline int topo__allreduce_dep(struct topo_plan *p, int64_t before,
				      int64_t after, topo_error *err)
{
	return before < 0 ? 0 : topo__plan_dep(p, before, after, err);
}

/* ---------------------------------------------------------------------- */
/* The fold of recursive doubling and Rabenseifner (MPICH's): with pof2
 * the largest power of two <= n and rem = n - pof2, among the first 2 rem
 * ranks each even one REDUCEs its SEND into the next odd one's RECV and
 * sits out; the odd ones and the ranks from 2 rem up, pof2 in all, run the
 * power-of-two algorithm under new ranks 0..pof2 - 1; at the end each odd
 * one copies its RECV, the result, to the even one before it. */

/* struct topo__fold and its ranks: coll_pattern.h. */

/*
 * The start: every member that takes part copies its SEND into its RECV
 * (cur[r] = that copy; -1 for those sitting out), and each even rank below
 * 2 rem REDUCEs its SEND into the next rank's RECV after that copy
 * (cur[r + 1] = that REDUCE, which all later writes to and reads from
 * r + 1's RECV follow).  len bytes from offset 0.
 */
static inline int topo__fold_pre(struct topo_plan *p,
				 const struct topo__fold *f, int64_t len,
				 int64_t slot0, int64_t *cur, topo_error *err)
{
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__RECV, len);
	for (int32_t r = 0; rc == 0 && r < f->n; r++) {
		cur[r] = -1;
		if (topo__fold_new(f, r) < 0)
			continue;
		m.src = m.dst = r;
		rc = topo__allreduce_msg(p, &m, slot0, &cur[r], err);
	}
	m.kind = TOPO__REDUCE;
	for (int32_t r = 0; rc == 0 && r < 2 * f->rem; r += 2) {
		int64_t id;

		m.src = r;
		m.dst = r + 1;
		rc = topo__allreduce_msg(p, &m, slot0, &id, err);
		if (rc == 0)
			rc = topo__plan_dep(p, cur[r + 1], id, err);
		cur[r + 1] = id;
	}
	return rc;
}

/* The end: each odd rank below 2 rem copies its RECV (final once cur[r]
 * is done) into the even rank before it. */
static inline int topo__fold_post(struct topo_plan *p,
				  const struct topo__fold *f, int64_t len,
				  int64_t slot0, const int64_t *cur,
				  topo_error *err)
{
	struct topo__msg m;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__RECV, TOPO__RECV, len);
	for (int32_t r = 1; rc == 0 && r < 2 * f->rem; r += 2) {
		int64_t id;

		m.src = r;
		m.dst = r - 1;
		rc = topo__allreduce_msg(p, &m, slot0, &id, err);
		if (rc == 0)
			rc = topo__allreduce_dep(p, cur[r], id, err);
	}
	return rc;
}

#endif /* TOPO_COLL_ALLREDUCE_H */
