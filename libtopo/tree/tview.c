/*
 * tview.c - tree views: a member's parent, children, subtree and the two
 * measures of its subtree that plans order by, computed where they are
 * asked for rather than from parent and child arrays over the whole group
 * (topo_internal.h, struct topo__tview).  A process of a job of a million
 * ranks builds its own part of a plan (plan/local.c) from these, in time
 * and memory that follow its degree and the tree's depth.
 *
 * The shapes are those of tree.c, given by what defines them:
 *  - hierarchical (seed 001, tree_hierarchical.c): the group as runs of
 *    consecutive ranks, one per member node in ascending node order;
 *  - binomial: rank r > 0 has parent r - lowbit(r), root 0, so the
 *    subtree of r is the ranks [r, r + lowbit(r)) that exist;
 *  - chain: rank r > 0 has parent r - 1.
 * Children come in ascending rank, as a tree's child lists do.
 *
 * The measures: height, the longest path down to a leaf (0 for a leaf),
 * which orders a reduction's combines (plan/order.c: a REDUCE's level is
 * 1 + its sender's height); and the flood time, the sends it takes to
 * cover a subtree when each member sends to its children one after
 * another, the longest first (T(v) = max over v's i-th send of
 * i + 1 + T(child)), which orders a bcast flood's forwards
 * (coll/bcast/flood.c).
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <stdlib.h>

/* ---------------------------------------------------------------------- */
/* Hierarchical */

/* The run holding rank v: the last i with first[i] <= v. */
static int32_t run_of(const struct topo__tview *tv, int32_t v)
{
	int32_t lo = 0, hi = tv->nruns - 1;

	while (lo < hi) {
		int32_t mid = lo + (hi - lo + 1) / 2;

		if (tv->first[mid] <= v)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

static int32_t run_count(const struct topo__tview *tv, int32_t j)
{
	return tv->first[j + 1] - tv->first[j];
}

/* The place t of run j among the runs other than the identified one. */
static int32_t other_index(const struct topo__tview *tv, int32_t j)
{
	return j < tv->ident ? j : j - 1;
}

static int32_t other_run(const struct topo__tview *tv, int32_t t)
{
	return t < tv->ident ? t : t + 1;
}

/* The identified node's members beside the global root. */
static int32_t ident_others(const struct topo__tview *tv)
{
	return run_count(tv, tv->ident) - 1;
}

static int32_t hier_parent(const struct topo__tview *tv, int32_t v)
{
	int32_t j = run_of(tv, v), k = ident_others(tv), g = tv->first[tv->ident];

	if (v != tv->first[j])
		return tv->first[j]; /* to the node's local root */
	if (j == tv->ident)
		return -1;
	return k > 0 ? g + 1 + other_index(tv, j) % k : g;
}

static int32_t hier_children(const struct topo__tview *tv, int32_t v,
			     int32_t *out)
{
	int32_t j = run_of(tv, v), k = ident_others(tv), g = tv->first[tv->ident];
	int32_t n = 0;

	if (v == tv->first[j]) {
		/* a local root: its node's other members; the global root
		 * also the other local roots when it is alone on its node */
		for (int32_t c = v + 1; c < tv->first[j + 1]; c++, n++)
			if (out != NULL)
				out[n] = c;
		if (j == tv->ident && k == 0)
			for (int32_t t = 0; t < tv->nruns - 1; t++, n++)
				if (out != NULL)
					out[n] = tv->first[other_run(tv, t)];
		return n;
	}
	if (j != tv->ident)
		return 0;
	/* an identified member: the local roots dealt to it */
	for (int32_t t = v - g - 1; t < tv->nruns - 1; t += k, n++)
		if (out != NULL)
			out[n] = tv->first[other_run(tv, t)];
	return n;
}

/* Height and flood time of a non-identified local root of run j. */
static int32_t lroot_height(const struct topo__tview *tv, int32_t j)
{
	return run_count(tv, j) > 1;
}

static int32_t lroot_time(const struct topo__tview *tv, int32_t j)
{
	return run_count(tv, j) - 1;
}

static int cmp_desc(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x < y) - (x > y);
}

/* T of a member whose children have times ts[0..n-1] (sorted here). */
static int32_t time_of(int32_t *ts, int32_t n)
{
	int32_t t = 0;

	qsort(ts, (size_t)n, sizeof(int32_t), cmp_desc);
	for (int32_t i = 0; i < n; i++)
		if (i + 1 + ts[i] > t)
			t = i + 1 + ts[i];
	return t;
}

/* hier_measure over the local roots other_run(t) for t = first,
 * first + step, ...: the time their subtrees take, or 1 + the highest. */
static int32_t lroots_measure(const struct topo__tview *tv, int32_t first,
			      int32_t step, int time, int32_t *scratch)
{
	int32_t n = 0, h = 0;

	for (int32_t t = first; t < tv->nruns - 1; t += step) {
		int32_t r = other_run(tv, t);

		if (time)
			scratch[n++] = lroot_time(tv, r);
		else if (1 + lroot_height(tv, r) > h)
			h = 1 + lroot_height(tv, r);
	}
	return time ? time_of(scratch, n) : h;
}

/* Height or flood time (time) of rank v; scratch of v's degree. */
static int32_t hier_measure(const struct topo__tview *tv, int32_t v, int time,
			    int32_t *scratch)
{
	int32_t j = run_of(tv, v), k = ident_others(tv), g = tv->first[tv->ident];
	int32_t n = 0, h = 0;

	if (v != tv->first[j] && j != tv->ident)
		return 0; /* a leaf */
	if (j != tv->ident)
		return time ? lroot_time(tv, j) : lroot_height(tv, j);
	if (v != g) {
		/* an identified member: over the local roots dealt to it */
		if (v == g || k == 0)
			return 0;
		return lroots_measure(tv, v - g - 1, k, time, scratch);
	}
	/* the global root: over its node's other members, each a leaf or
	 * an identified member, or over the other local roots */
	if (k > 0) {
		for (int32_t c = g + 1; c < tv->first[tv->ident + 1]; c++) {
			int32_t m = time ? 0 : 1;

			if (c - g - 1 < tv->nruns - 1) {
				int32_t *sub = scratch + k;

				m = time ? hier_measure(tv, c, 1, sub)
					 : 1 + hier_measure(tv, c, 0, sub);
			}
			if (time)
				scratch[n++] = m;
			else if (m > h)
				h = m;
		}
		return time ? time_of(scratch, n) : h;
	}
	return lroots_measure(tv, 0, 1, time, scratch);
}

static bool hier_below(const struct topo__tview *tv, int32_t v, int32_t x)
{
	int32_t j = run_of(tv, v), k = ident_others(tv), g = tv->first[tv->ident];
	int32_t jx;

	if (v == x || v == g)
		return true;
	if (v != tv->first[j] && j != tv->ident)
		return false; /* a leaf */
	jx = run_of(tv, x);
	if (j != tv->ident)
		return jx == j; /* a local root: its node */
	/* an identified member: the nodes dealt to it */
	return jx != tv->ident && k > 0 && other_index(tv, jx) % k == v - g - 1;
}

/* ---------------------------------------------------------------------- */
/* Binomial and chain */

static int32_t lowbit(int32_t r)
{
	return r & -r;
}

/* The ranks of r's binomial subtree: [r, r + size). */
static int32_t binom_size(const struct topo__tview *tv, int32_t r)
{
	int64_t end = r == 0 ? tv->n : (int64_t)r + lowbit(r);

	return (int32_t)(end < tv->n ? end - r : tv->n - r);
}

/* The greatest popcount among 0 .. x. */
static int32_t max_pop(int32_t x)
{
	int32_t k = 0;

	if (x <= 0)
		return 0;
	while (((int64_t)2 << k) - 1 <= x)
		k++;
	/* 2^k - 1 <= x < 2^(k+1) - 1 */
	if (x >= ((int64_t)1 << k)) {
		int32_t rest = 1 + max_pop(x - (1 << k));

		return rest > k ? rest : k;
	}
	return k;
}

/* ceil(log2(m)) for m >= 1. */
static int32_t log2_up(int32_t m)
{
	int32_t k = 0;

	while (((int64_t)1 << k) < m)
		k++;
	return k;
}

/* ---------------------------------------------------------------------- */

int32_t topo__tview_parent(const struct topo__tview *tv, int32_t v)
{
	switch (tv->shape) {
	case TOPO__TV_HIERARCHICAL:
		return hier_parent(tv, v);
	case TOPO__TV_BINOMIAL:
		return v == 0 ? -1 : v - lowbit(v);
	default:
		return v - 1;
	}
}

int32_t topo__tview_children(const struct topo__tview *tv, int32_t v,
			     int32_t *out)
{
	int32_t n = 0;

	switch (tv->shape) {
	case TOPO__TV_HIERARCHICAL:
		return hier_children(tv, v, out);
	case TOPO__TV_BINOMIAL: {
		int32_t lim = v == 0 ? tv->n : lowbit(v);

		for (int64_t d = 1; d < lim && v + d < tv->n; d *= 2, n++)
			if (out != NULL)
				out[n] = v + (int32_t)d;
		return n;
	}
	default:
		if (v + 1 < tv->n && out != NULL)
			out[0] = v + 1;
		return v + 1 < tv->n;
	}
}

int32_t topo__tview_height(const struct topo__tview *tv, int32_t v,
			   int32_t *scratch)
{
	switch (tv->shape) {
	case TOPO__TV_HIERARCHICAL:
		return hier_measure(tv, v, 0, scratch);
	case TOPO__TV_BINOMIAL:
		return max_pop(binom_size(tv, v) - 1);
	default:
		return tv->n - 1 - v;
	}
}

int32_t topo__tview_time(const struct topo__tview *tv, int32_t v,
			 int32_t *scratch)
{
	switch (tv->shape) {
	case TOPO__TV_HIERARCHICAL:
		return hier_measure(tv, v, 1, scratch);
	case TOPO__TV_BINOMIAL:
		return log2_up(binom_size(tv, v));
	default:
		return tv->n - 1 - v;
	}
}

bool topo__tview_below(const struct topo__tview *tv, int32_t v, int32_t x)
{
	switch (tv->shape) {
	case TOPO__TV_HIERARCHICAL:
		return hier_below(tv, v, x);
	case TOPO__TV_BINOMIAL:
		return x >= v && x - v < binom_size(tv, v);
	default:
		return x >= v;
	}
}

int32_t topo__tview_scratch(const struct topo__tview *tv)
{
	/* the global root's measure: its k children, and under each the
	 * local roots dealt to it */
	if (tv->shape == TOPO__TV_HIERARCHICAL)
		return tv->nruns + run_count(tv, tv->ident) + 1;
	return 1;
}

int topo__tview_hierarchical(struct topo__tview *tv, int32_t n,
			     const int32_t *first, int32_t nruns)
{
	int32_t best = -1;

	tv->shape = TOPO__TV_HIERARCHICAL;
	tv->n = n;
	tv->first = first;
	tv->nruns = nruns;
	if (nruns < 1 || first[0] != 0 || first[nruns] != n)
		return TOPO_EARG;
	/* the identified node: the most members, ties to the lowest */
	tv->ident = 0;
	for (int32_t j = 0; j < nruns; j++) {
		if (first[j + 1] <= first[j])
			return TOPO_EARG;
		if (first[j + 1] - first[j] > best) {
			best = first[j + 1] - first[j];
			tv->ident = j;
		}
	}
	tv->root = first[tv->ident];
	return 0;
}

void topo__tview_simple(struct topo__tview *tv, int shape, int32_t n)
{
	tv->shape = shape;
	tv->n = n;
	tv->root = 0;
	tv->first = NULL;
	tv->nruns = 0;
	tv->ident = 0;
}
