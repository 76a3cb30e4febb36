/*
 * pset.h - sets of integers as runs of periodic patterns (pset.c), the
 * representation stride specifications are evaluated in (spec.c).
 *
 * Private to libtopo (TOPO_INTERNAL).  A set over [0, size) is a sorted
 * list of disjoint runs [lo, hi); a run either holds every integer in it or
 * those x for which bit (x + off) mod period of a shared pattern is set.
 * "ep 0::2" over 2^31 endpoints is one run with a 2-bit pattern, "node 7" is
 * one run holding everything, so the cost of working with a set follows the
 * spec that made it, not the size of the machine.  A pattern whose period
 * would exceed topo__tune.pset.cap (lcm of coprime strides) is kept
 * literally over the stretch it covers instead: that is the worst case, the
 * cost of a bitmap over that stretch.
 */
#ifndef TOPO_PSET_H
#define TOPO_PSET_H

#ifndef TOPO_INTERNAL
#error "pset.h is private to libtopo"
/* For tests: NULL when s is well formed over [0, size), else what is
 * wrong with it. */
const char *topo__pset_invalid(const struct pset *s, int64_t size);

#endif

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pset_pat;

struct pset_run {
	int64_t lo, hi;	      /* [lo, hi), lo < hi */
	int64_t off;	      /* in [0, period) */
	struct pset_pat *pat; /* NULL: every x in [lo, hi) */
};

struct pset {
	struct pset_run *v;
	size_t n, cap;
};

/* Scratch shared by the operations of one evaluation (caches and the
 * combining buffers); zero-initialise, release with topo__pset_work_free. */
struct pset_work;

struct pset_work *topo__pset_work_new(void);
void topo__pset_work_free(struct pset_work *w);

void topo__pset_free(struct pset *s);
/* Moves src into dst (dst freed first); src becomes empty. */
void topo__pset_move(struct pset *dst, struct pset *src);

/* Appends [lo, hi) holding every integer (lo < hi, after the last run). */
int topo__pset_push_full(struct pset *s, int64_t lo, int64_t hi);

/*
 * The union of progressions lo[i], lo[i] + step[i], ..., last[i] (step >=
 * 1, last reached exactly) over [0, size), as a set.  Reorders the arrays.
 */
struct pset_prog {
	int64_t lo, last, step;
};
int topo__pset_union_progs(struct pset_work *w, struct pset_prog *v, size_t n,
			   int64_t size, struct pset *out);

/* out = a & b. */
int topo__pset_and(struct pset_work *w, const struct pset *a,
		   const struct pset *b, struct pset *out);

/*
 * Left to right, as a stride spec reads: out = ((s0 op1 s1) op2 s2) ...
 * with op i '+' (union) unless minus[i] ('-', difference); minus[0] is
 * ignored.  Evaluated in one sweep: x is in the result when the last set
 * that holds x is added.
 */
int topo__pset_chain(struct pset_work *w, const struct pset *sets,
		     const bool *minus, size_t n, struct pset *out);

/*
 * Maps a set over units to the set over their parts when every unit i has
 * the parts [i * unit, (i + 1) * unit): rows == NULL keeps every part,
 * else only the parts whose offset within the unit is in rows (a set over
 * [0, unit)).  Tasks to endpoints (unit E), nodes to tasks when every node
 * runs the same number of tasks.
 */
int topo__pset_expand(struct pset_work *w, const struct pset *in, int64_t unit,
		      const struct pset *rows, struct pset *out);
/* The same for units of any sizes: unit i is [first[i], first[i + 1]). */
int topo__pset_widen(const struct pset *in, const int32_t *first,
		     struct pset *out);

/* Whether s is exactly every integer of [lo, hi). */
bool topo__pset_is_range(const struct pset *s, int64_t lo, int64_t hi);
int64_t topo__pset_count(const struct pset *s);
/* Writes the members in ascending order (topo__pset_count of them); 0 or
 * TOPO_ENOMEM. */
int topo__pset_members(const struct pset *s, int32_t *out);

/* For tests: NULL when s is well formed over [0, size), else what is
 * wrong with it. */
const char *topo__pset_invalid(const struct pset *s, int64_t size);

#endif
