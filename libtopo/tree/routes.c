/*
 * routes.c - route tables (seed 000, collc(7)): the rule that derives a
 * member's rows from its tree, and a table's departures from that rule.
 *
 * A table that follows the rule is never stored: every row is computed
 * from the tree when asked for, so a member with d neighbours costs
 * nothing where its d + 1 rows would hold about d^2 targets.  A table
 * loaded from a file keeps only where it departs from the rule (a row
 * that differs, a row the rule does not have, a rule row that is absent),
 * as a sorted list of exceptions per member (struct topo__routes_x).
 * Both the in-memory size and the compact encoding of collc(5) version 2
 * are then linear in the members plus the departures, however wide the
 * tree.
 *
 * A member's rows are listed in one order whatever the table's history:
 * the rule's rows (from the origin -1, then the parent, then each child
 * ascending), each replaced by its exception when there is one and left
 * out when the exception says it is missing, then the rows the rule does
 * not have, ascending by origin.  The order carries no meaning (a row is
 * found by its origin); it only makes equal tables list equally.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <stdlib.h>
#include <string.h>

/*
 * collc(7): from the origin, forward to {p} u C; from the parent, to C;
 * from a child c, to {p} u C \ {c}.  All three are C with p merged in at
 * its place (to keep the list ascending) and possibly one child left out.
 * Always the tree's own rule, also for a tree whose table was loaded from a
 * file; topo_routes_row() is the way to see a loaded table as written.
 */
int32_t topo_tree_route(const topo_tree *t, int32_t r, int32_t from,
			int32_t *out)
{
	const int32_t *c;
	int32_t nc, p, skip = -1, count = 0;

	if (r < 0 || r >= t->n)
		return TOPO_EARG;
	p = t->parent[r];
	c = t->child + t->child_off[r];
	nc = t->child_off[r + 1] - t->child_off[r];
	if (from == -1) {
		/* origin: everything */
	} else if (from >= 0 && from == p) {
		p = -1;
	} else if (from >= 0 && from < t->n && t->parent[from] == r) {
		skip = from;
	} else {
		return TOPO_EARG;
	}
	for (int32_t i = 0; i < nc; i++) {
		if (p >= 0 && p < c[i]) {
			out[count++] = p;
			p = -1;
		}
		if (c[i] != skip)
			out[count++] = c[i];
	}
	if (p >= 0)
		out[count++] = p;
	return count;
}

int32_t topo__routes_rule_rows(const topo_tree *t, int32_t r)
{
	return 1 + topo_tree_degree(t, r);
}

int32_t topo__routes_rule_origin(const topo_tree *t, int32_t r, int32_t j)
{
	if (j == 0)
		return -1;
	if (t->parent[r] >= 0)
		return j == 1 ? t->parent[r]
			      : t->child[t->child_off[r] + j - 2];
	return t->child[t->child_off[r] + j - 1];
}

bool topo__routes_is_rule_origin(const topo_tree *t, int32_t r, int32_t from)
{
	return from == -1 || (from >= 0 && from < t->n &&
			      (from == t->parent[r] || t->parent[from] == r));
}

void topo__routes_x_free(struct topo__routes_x *x)
{
	if (x == NULL)
		return;
	topo__free(x->off);
	topo__free(x->from);
	topo__free(x->missing);
	topo__free(x->to_off);
	topo__free(x->to);
	topo__free(x);
}

/* Member r's exception from `from`, or -1.  Binary search: a member's
 * exceptions are ascending by origin. */
int32_t topo__routes_x_find(const topo_tree *t, int32_t r, int32_t from)
{
	const struct topo__routes_x *x = t->routes_x;
	int32_t lo, hi;

	if (x == NULL)
		return -1;
	lo = x->off[r];
	hi = x->off[r + 1];
	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;

		if (x->from[mid] < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < x->off[r + 1] && x->from[lo] == from ? lo : -1;
}

int32_t topo__routes_find(const topo_tree *t, int32_t r, int32_t from,
			  const int32_t **to, int32_t *scratch)
{
	const struct topo__routes_x *x = t->routes_x;
	int32_t e = topo__routes_x_find(t, r, from);

	if (e >= 0) {
		if (x->missing[e])
			return -1;
		*to = x->to + x->to_off[e];
		return (int32_t)(x->to_off[e + 1] - x->to_off[e]);
	}
	if (!topo__routes_is_rule_origin(t, r, from))
		return -1;
	*to = scratch;
	return topo_tree_route(t, r, from, scratch);
}

int64_t topo_routes_departures(const topo_tree *t, int32_t r)
{
	const struct topo__routes_x *x = t->routes_x;

	if (x == NULL)
		return 0;
	if (r == -1)
		return x->count;
	if (r < 0 || r >= t->n)
		return TOPO_EARG;
	return x->off[r + 1] - x->off[r];
}

int32_t topo_routes_rows(const topo_tree *t, int32_t r)
{
	const struct topo__routes_x *x = t->routes_x;
	int32_t rows = topo__routes_rule_rows(t, r);

	if (x == NULL)
		return rows;
	/* A replacement keeps the count; a missing row lowers it; a row the
	 * rule does not have raises it. */
	for (int32_t e = x->off[r]; e < x->off[r + 1]; e++) {
		if (x->missing[e])
			rows--;
		else if (!topo__routes_is_rule_origin(t, r, x->from[e]))
			rows++;
	}
	return rows;
}

int32_t topo_routes_row(const topo_tree *t, int32_t r, int32_t i, int32_t *from,
			const int32_t **to, int32_t *scratch)
{
	const struct topo__routes_x *x = t->routes_x;
	int32_t rule, k = 0;

	if (r < 0 || r >= t->n || i < 0)
		return TOPO_EARG;
	rule = topo__routes_rule_rows(t, r);
	if (x == NULL || x->off[r] == x->off[r + 1]) {
		/* The rule's rows, numbered by rule: no search. */
		if (i >= rule)
			return TOPO_EARG;
		*from = topo__routes_rule_origin(t, r, i);
		*to = scratch;
		return topo_tree_route(t, r, *from, scratch);
	}
	/* A member with exceptions: walk its rows in their order (the file
	 * comment).  Linear in its rows; such members are the hand-edited
	 * few. */
	for (int32_t j = 0; j < rule; j++) {
		int32_t o = topo__routes_rule_origin(t, r, j);
		int32_t e = topo__routes_x_find(t, r, o);

		if (e >= 0 && x->missing[e])
			continue;
		if (k++ != i)
			continue;
		*from = o;
		if (e >= 0) {
			*to = x->to + x->to_off[e];
			return (int32_t)(x->to_off[e + 1] - x->to_off[e]);
		}
		*to = scratch;
		return topo_tree_route(t, r, o, scratch);
	}
	for (int32_t e = x->off[r]; e < x->off[r + 1]; e++) {
		if (x->missing[e] ||
		    topo__routes_is_rule_origin(t, r, x->from[e]))
			continue;
		if (k++ != i)
			continue;
		*from = x->from[e];
		*to = x->to + x->to_off[e];
		return (int32_t)(x->to_off[e + 1] - x->to_off[e]);
	}
	return TOPO_EARG;
}

/* An exception being collected: member, origin, and where its targets
 * are (row index into the caller's rows, or -1 for a missing row). */
struct pending {
	int32_t at, from, row;
};

static int cmp_pending(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return (x->from > y->from) - (x->from < y->from);
}

/* Is row i of the input exactly the rule's row for its member and
 * origin? */
static bool row_is_rule(const topo_tree *t, const struct topo__routes_in *in,
			int32_t i, int32_t *scratch)
{
	int32_t at = in->at[i], from = in->from[i];
	int64_t len = in->to_off[i + 1] - in->to_off[i];
	int32_t n;

	/* From the origin every neighbour, otherwise all but one. */
	if (!topo__routes_is_rule_origin(t, at, from) ||
	    len != topo_tree_degree(t, at) - (from != -1))
		return false;
	n = topo_tree_route(t, at, from, scratch);
	return n == len && memcmp(scratch, in->to + in->to_off[i],
				  (size_t)n * sizeof(int32_t)) == 0;
}

/* A complete table's missing rows: every rule row that no input row
 * gives, appended to pend (*np entries).  Rows grouped by member
 * (counting sort), then each member's origins stamped.  0 or
 * TOPO_ENOMEM. */
static int missing_rule_rows(const topo_tree *t,
			     const struct topo__routes_in *in,
			     struct pending *pend, int64_t *np)
{
	int32_t *stamp, *row_off, *by_at;
	int rc = TOPO_ENOMEM;

	stamp = topo__mallocarray((size_t)t->n + 1, sizeof(int32_t));
	row_off = topo__calloc((size_t)t->n + 1, sizeof(int32_t));
	by_at = topo__mallocarray((size_t)in->rows + 1, sizeof(int32_t));
	if (stamp == NULL || row_off == NULL || by_at == NULL)
		goto done;
	for (int32_t i = 0; i < in->rows; i++)
		row_off[in->at[i] + 1]++;
	for (int32_t r = 0; r < t->n; r++)
		row_off[r + 1] += row_off[r];
	for (int32_t i = 0; i < in->rows; i++)
		by_at[row_off[in->at[i]]++] = i;
	for (int32_t r = t->n; r > 0; r--)
		row_off[r] = row_off[r - 1];
	row_off[0] = 0;
	for (int32_t r = 0; r <= t->n; r++)
		stamp[r] = -1;
	for (int32_t r = 0; r < t->n; r++) {
		int32_t rule = topo__routes_rule_rows(t, r);

		for (int32_t s = row_off[r]; s < row_off[r + 1]; s++)
			stamp[in->from[by_at[s]] + 1] = r;
		for (int32_t j = 0; j < rule; j++) {
			int32_t o = topo__routes_rule_origin(t, r, j);

			if (stamp[o + 1] != r)
				pend[(*np)++] = (struct pending){r, o, -1};
		}
	}
	rc = 0;
done:
	topo__free(stamp);
	topo__free(row_off);
	topo__free(by_at);
	return rc;
}

/* The exceptions pend[0 .. np - 1], sorted, as a new struct
 * topo__routes_x (*out): by member, each with its origin and, for an
 * input row, its destinations (total in all).  0 or TOPO_ENOMEM. */
static int keep_exceptions(const topo_tree *t, const struct topo__routes_in *in,
			   const struct pending *pend, int64_t np,
			   int64_t total, struct topo__routes_x **out)
{
	struct topo__routes_x *x = topo__calloc(1, sizeof(*x));

	*out = NULL;
	if (x == NULL)
		return TOPO_ENOMEM;
	x->off = topo__calloc((size_t)t->n + 1, sizeof(int32_t));
	x->from = topo__mallocarray((size_t)np, sizeof(int32_t));
	x->missing = topo__malloc((size_t)np);
	x->to_off = topo__mallocarray((size_t)np + 1, sizeof(int64_t));
	x->to = topo__mallocarray((size_t)total + 1, sizeof(int32_t));
	if (x->off == NULL || x->from == NULL || x->missing == NULL ||
	    x->to_off == NULL || x->to == NULL) {
		topo__routes_x_free(x);
		return TOPO_ENOMEM;
	}
	x->count = (int32_t)np;
	x->to_off[0] = 0;
	for (int64_t k = 0; k < np; k++) {
		int32_t row = pend[k].row;
		int64_t len = 0;

		x->off[pend[k].at + 1]++;
		x->from[k] = pend[k].from;
		x->missing[k] = row < 0;
		if (row >= 0) {
			len = in->to_off[row + 1] - in->to_off[row];
			memcpy(x->to + x->to_off[k], in->to + in->to_off[row],
			       (size_t)len * sizeof(int32_t));
		}
		x->to_off[k + 1] = x->to_off[k] + len;
	}
	for (int32_t r = 0; r < t->n; r++)
		x->off[r + 1] += x->off[r];
	*out = x;
	return 0;
}

int topo__routes_x_build(topo_tree *t, const struct topo__routes_in *in)
{
	struct topo__routes_x *x = NULL;
	struct pending *pend = NULL;
	int32_t *scratch = NULL, maxdeg = 0;
	int64_t np = 0, cap, total = 0;
	int rc = TOPO_ENOMEM;

	for (int32_t r = 0; r < t->n; r++)
		if (topo_tree_degree(t, r) > maxdeg)
			maxdeg = topo_tree_degree(t, r);
	/* At most every row and every rule row is an exception. */
	cap = (int64_t)in->rows + in->nmissing;
	if (in->complete)
		cap += (int64_t)t->n + 2 * ((int64_t)t->n - 1);
	scratch = topo__mallocarray((size_t)maxdeg + 1, sizeof(int32_t));
	pend = topo__mallocarray((size_t)cap + 1, sizeof(*pend));
	if (scratch == NULL || pend == NULL)
		goto done;
	for (int32_t i = 0; i < in->rows; i++)
		if (!row_is_rule(t, in, i, scratch))
			pend[np++] = (struct pending){in->at[i], in->from[i], i};
	for (int32_t i = 0; i < in->nmissing; i++)
		pend[np++] =
		    (struct pending){in->missing_at[i], in->missing_from[i], -1};
	rc = in->complete ? missing_rule_rows(t, in, pend, &np) : 0;
	if (rc != 0 || np == 0)
		goto done; /* np == 0: the rule's table, nothing to keep */
	if (np > INT32_MAX) {
		rc = TOPO_ELIMIT;
		goto done;
	}
	qsort(pend, (size_t)np, sizeof(*pend), cmp_pending);
	for (int64_t k = 0; k < np; k++)
		if (pend[k].row >= 0)
			total += in->to_off[pend[k].row + 1] -
				 in->to_off[pend[k].row];
	rc = keep_exceptions(t, in, pend, np, total, &x);
	if (rc == 0) {
		topo__routes_x_free(t->routes_x);
		t->routes_x = x;
	}
done:
	topo__free(pend);
	topo__free(scratch);
	return rc;
}
