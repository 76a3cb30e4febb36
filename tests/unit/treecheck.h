/*
 * treecheck.h - an independent check of libtopo's trees and route tables.
 *
 * treecheck_ref_parent() computes, from the words of collc(7) (SPEC 4)
 * and through the public API only, the parent (as an endpoint id) of every
 * member for a shape.  It shares no code with libtopo's builders and favours
 * plainness over speed: nearest member ancestors are found by walking up the
 * network, member nodes and local roots by scanning.
 *
 * treecheck() then checks a topo_tree against it:
 *   1. it is a spanning tree of its group (one root, every member reaches
 *      it, n - 1 edges, children lists consistent and ascending);
 *   2. its parent array equals the reference exactly;
 *   3. its edge labels, edge counts and depth are right;
 *   4. its route rows are exactly those of SPEC 5, in the decided order
 *      (origin, parent, children ascending; targets ascending);
 *   5. a broadcast over topo_routes_row() from every member, as logical
 *      root, reaches every member exactly once in n - 1 messages.
 * With full == 0 (big groups), 4 is limited to each member's row count and
 * its origin, parent and first and last child rows, and 5 is skipped.
 *
 * Each property is one CHECK per tree, naming the first member at fault.
 */
#ifndef TREECHECK_H
#define TREECHECK_H

#include "check.h"
#include "topo.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *tc_alloc(size_t count, size_t size)
{
	void *p = calloc(count == 0 ? 1 : count, size);

	if (p == NULL) {
		fprintf(stderr, "treecheck: out of memory\n");
		exit(2);
	}
	return p;
}

static int32_t tc_node(const topo_machine *m, int32_t ep)
{
	return topo_machine_endpoint_node(m, ep);
}

/* physical: SPEC 4, first bullet. */
static void tc_ref_physical(const topo_group *g, int32_t *pe)
{
	const topo_machine *m = topo_group_machine(g);
	const int32_t *mem = topo_group_members(g);
	const int32_t *net = topo_machine_network_parent(m);
	int32_t n = topo_group_size(g), nodes = topo_machine_nodes(m);
	int32_t *lowest = tc_alloc((size_t)nodes, sizeof(int32_t));
	int32_t root_node = -1;

	for (int32_t v = 0; v < nodes; v++)
		lowest[v] = -1;
	for (int32_t i = 0; i < n; i++) {
		int32_t v = tc_node(m, mem[i]);

		if (lowest[v] < 0 || mem[i] < lowest[v])
			lowest[v] = mem[i];
	}
	/* The member node closest to the physical root; ties: lowest id. */
	for (int32_t v = 0; v < nodes; v++) {
		if (lowest[v] < 0)
			continue;
		if (root_node < 0 || topo_machine_node_depth(m, v) <
					 topo_machine_node_depth(m, root_node))
			root_node = v;
	}
	for (int32_t i = 0; i < n; i++) {
		int32_t v = tc_node(m, mem[i]), a;

		if (mem[i] != lowest[v]) {
			pe[i] = lowest[v];
			continue;
		}
		if (v == root_node) {
			pe[i] = -1;
			continue;
		}
		for (a = net[v]; a >= 0 && lowest[a] < 0; a = net[a])
			;
		pe[i] = a >= 0 ? lowest[a] : lowest[root_node];
	}
	free(lowest);
}

/* hierarchical: SPEC 4, second bullet. */
static void tc_ref_hierarchical(const topo_group *g, int32_t *pe)
{
	const topo_machine *m = topo_group_machine(g);
	const int32_t *mem = topo_group_members(g);
	int32_t n = topo_group_size(g), nodes = topo_machine_nodes(m);
	int32_t *count = tc_alloc((size_t)nodes, sizeof(int32_t));
	int32_t *lowest = tc_alloc((size_t)nodes, sizeof(int32_t));
	int32_t *slots = tc_alloc((size_t)n, sizeof(int32_t));
	int32_t id = -1, nslots = 0, turn = 0, global_root;

	for (int32_t v = 0; v < nodes; v++)
		lowest[v] = -1;
	for (int32_t i = 0; i < n; i++) {
		int32_t v = tc_node(m, mem[i]);

		count[v]++;
		if (lowest[v] < 0 || mem[i] < lowest[v])
			lowest[v] = mem[i];
	}
	for (int32_t v = 0; v < nodes; v++)
		if (count[v] > 0 && (id < 0 || count[v] > count[id]))
			id = v;
	global_root = lowest[id];
	/* The identified node's non-root members, ascending (members are). */
	for (int32_t i = 0; i < n; i++)
		if (tc_node(m, mem[i]) == id && mem[i] != global_root)
			slots[nslots++] = mem[i];
	for (int32_t i = 0; i < n; i++) {
		int32_t v = tc_node(m, mem[i]);

		if (mem[i] == global_root)
			pe[i] = -1;
		else if (mem[i] != lowest[v] || v == id)
			pe[i] = lowest[v];
	}
	/* Other nodes' local roots in ascending node order, round-robin. */
	for (int32_t v = 0; v < nodes; v++) {
		int32_t i;

		if (count[v] == 0 || v == id)
			continue;
		i = topo_group_rank(g, lowest[v]);
		if (nslots == 0) {
			pe[i] = global_root;
		} else {
			pe[i] = slots[turn];
			turn = (turn + 1) % nslots;
		}
	}
	free(count);
	free(lowest);
	free(slots);
}

/*
 * Fills pe[0..n-1] with each member's expected parent endpoint id (-1 at
 * the root).  Returns 0, or -1 for a shape it does not know.
 */
static int treecheck_ref_parent(const topo_group *g, const char *shape,
				int32_t *pe)
{
	const int32_t *mem = topo_group_members(g);
	int32_t n = topo_group_size(g);

	if (strcmp(shape, "physical") == 0) {
		tc_ref_physical(g, pe);
		return 0;
	}
	if (strcmp(shape, "hierarchical") == 0) {
		tc_ref_hierarchical(g, pe);
		return 0;
	}
	for (int32_t r = 0; r < n; r++) {
		int64_t p;

		if (r == 0) {
			pe[r] = -1;
			continue;
		}
		if (strcmp(shape, "binomial") == 0) {
			/* r - lowbit(r), lowbit found by trial. */
			int64_t bit = 1;

			while ((r % (bit * 2)) == 0)
				bit *= 2;
			p = r - bit;
		} else if (strcmp(shape, "chain") == 0) {
			p = r - 1;
		} else if (strncmp(shape, "kary:", 5) == 0) {
			p = (r - 1) / strtoll(shape + 5, NULL, 10);
		} else {
			return -1;
		}
		pe[r] = mem[p];
	}
	return 0;
}

static int tc_cmp(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

/* The expected SPEC 5 targets of member r arriving from `from`: {p} u C
 * minus `from`, ascending.  (From the parent that is C; from a child c it
 * is {p} u C \ {c}; from -1 it is all.)  Returns the count. */
static int32_t tc_expect_row(int32_t p, const int32_t *c, int32_t nc,
			     int32_t from, int32_t *out)
{
	int32_t k = 0;

	if (p >= 0 && p != from)
		out[k++] = p;
	for (int32_t i = 0; i < nc; i++)
		if (c[i] != from)
			out[k++] = c[i];
	qsort(out, (size_t)k, sizeof(int32_t), tc_cmp);
	return k;
}

struct tc_fromidx {
	int32_t from, row;
};

static int tc_cmp_from(const void *a, const void *b)
{
	const struct tc_fromidx *x = a, *y = b;

	return (x->from > y->from) - (x->from < y->from);
}

/* Checks t as described at the top of this file. */
static void treecheck(const topo_tree *t, int full)
{
	const topo_group *g = topo_tree_group(t);
	const topo_machine *m = topo_group_machine(g);
	const int32_t *mem = topo_group_members(g);
	const int32_t *par = topo_tree_parent(t);
	const char *tn = topo_tree_name(t), *gn = topo_group_name(g);
	int32_t n = topo_group_size(g), roots = 0, root = -1;
	int32_t *ref = tc_alloc((size_t)n, sizeof(int32_t));
	int32_t *state = tc_alloc((size_t)n, sizeof(int32_t));
	int32_t *depth = tc_alloc((size_t)n, sizeof(int32_t));
	int32_t *coff = tc_alloc((size_t)n + 1, sizeof(int32_t));
	int32_t *cfill = tc_alloc((size_t)n + 1, sizeof(int32_t));
	int32_t *kids = tc_alloc((size_t)n, sizeof(int32_t));
	int32_t *want = tc_alloc((size_t)n + 1, sizeof(int32_t));
	int32_t *scratch = tc_alloc((size_t)n + 1, sizeof(int32_t));
	int32_t bad = -1, maxdepth = 0;
	int64_t shm = 0, net = 0, tshm = -1, tnet = -1;

	/* 1. A spanning tree. */
	for (int32_t r = 0; r < n && bad < 0; r++) {
		if (par[r] == -1) {
			roots++;
			root = r;
		} else if (par[r] < 0 || par[r] >= n) {
			bad = r;
		}
	}
	CHECK(bad < 0 && roots == 1 && root == topo_tree_root(t),
	      "%s/%s: parent ranks: bad rank %d, %d roots, root %d vs %d", gn,
	      tn, (int)bad, (int)roots, (int)root, (int)topo_tree_root(t));
	if (bad >= 0 || roots != 1)
		goto out;
	/* Every member reaches the root; depths by walking up (state: 0
	 * unknown, 1 on the current walk, 2 done). */
	state[root] = 2;
	depth[root] = 0;
	for (int32_t r = 0; r < n && bad < 0; r++) {
		int32_t v = r, d;

		while (state[v] == 0) {
			state[v] = 1;
			v = par[v];
		}
		if (state[v] == 1) {
			bad = r;
			break;
		}
		/* Unwind: count the steps, then assign from the top down. */
		d = 0;
		for (int32_t u = r; state[u] == 1; u = par[u])
			d++;
		d += depth[v];
		for (int32_t u = r; state[u] == 1; u = par[u]) {
			state[u] = 2;
			depth[u] = d--;
		}
	}
	CHECK(bad < 0, "%s/%s: rank %d does not reach the root", gn, tn,
	      (int)bad);
	if (bad >= 0)
		goto out;
	for (int32_t r = 0; r < n; r++) {
		if (depth[r] > maxdepth)
			maxdepth = depth[r];
		if (par[r] >= 0)
			coff[par[r] + 1]++;
	}
	for (int32_t r = 0; r < n; r++)
		coff[r + 1] += coff[r];
	memcpy(cfill, coff, (size_t)(n + 1) * sizeof(int32_t));
	for (int32_t r = 0; r < n; r++)
		if (par[r] >= 0)
			kids[cfill[par[r]]++] = r;
	CHECK_INT(coff[n], n - 1);
	bad = -1;
	for (int32_t r = 0; r < n && bad < 0; r++) {
		const int32_t *c;
		int32_t nc = topo_tree_children(t, r, &c);

		if (nc != coff[r + 1] - coff[r] ||
		    memcmp(c, kids + coff[r], (size_t)nc * sizeof(int32_t)) !=
			0)
			bad = r;
		if (topo_tree_degree(t, r) != nc + (par[r] >= 0))
			bad = r;
	}
	CHECK(bad < 0, "%s/%s: children or degree of rank %d wrong", gn, tn,
	      (int)bad);

	/* 2. Parents equal the reference. */
	CHECK(treecheck_ref_parent(g, tn, ref) == 0, "%s: unknown shape %s", gn,
	      tn);
	bad = -1;
	for (int32_t r = 0; r < n && bad < 0; r++)
		if ((par[r] < 0 ? -1 : mem[par[r]]) != ref[r])
			bad = r;
	CHECK(bad < 0, "%s/%s: member %d has parent %d, want %d", gn, tn,
	      bad < 0 ? 0 : (int)mem[bad],
	      bad < 0 ? 0 : (par[bad] < 0 ? -1 : (int)mem[par[bad]]),
	      bad < 0 ? 0 : (int)ref[bad]);

	/* 3. Edge labels, counts, depth. */
	bad = -1;
	for (int32_t r = 0; r < n; r++) {
		enum topo_edge e = TOPO_EDGE_ROOT;

		if (par[r] >= 0) {
			int same =
			    tc_node(m, mem[r]) == tc_node(m, mem[par[r]]);

			e = same ? TOPO_EDGE_SHM : TOPO_EDGE_NET;
			shm += same;
			net += !same;
		}
		if (topo_tree_edge(t, r) != e && bad < 0)
			bad = r;
	}
	CHECK(bad < 0, "%s/%s: edge of rank %d is %s", gn, tn, (int)bad,
	      bad < 0 ? "" : topo_edge_name(topo_tree_edge(t, bad)));
	topo_tree_edge_counts(t, &tshm, &tnet);
	CHECK(tshm == shm && tnet == net,
	      "%s/%s: edge counts shm %lld net %lld, want %lld %lld", gn, tn,
	      (long long)tshm, (long long)tnet, (long long)shm, (long long)net);
	CHECK(topo_tree_depth(t) == maxdepth, "%s/%s: depth %d, want %d", gn,
	      tn, (int)topo_tree_depth(t), (int)maxdepth);

	/* 4. Route rows: origin, parent, children ascending. */
	bad = -1;
	for (int32_t r = 0; r < n && bad < 0; r++) {
		int32_t nc = coff[r + 1] - coff[r], p = par[r];
		int32_t rows = 1 + (p >= 0) + nc;

		if (topo_routes_rows(t, r) != rows) {
			bad = r;
			break;
		}
		for (int32_t i = 0; i < rows && bad < 0; i++) {
			int32_t from, k, got, idx;
			const int32_t *to = NULL;

			/* Big groups: a sample of rows that still covers
			 * every kind (origin, parent, first/last child). */
			if (!full && i > 2 && i < rows - 1)
				continue;
			if (i == 0)
				from = -1;
			else if (p >= 0 && i == 1)
				from = p;
			else
				from = kids[coff[r] + i - 1 - (p >= 0)];
			k = tc_expect_row(p, kids + coff[r], nc, from, want);
			got = topo_routes_row(t, r, i, &idx, &to, scratch);
			if (idx != from || got != k ||
			    memcmp(to, want, (size_t)k * sizeof(int32_t)) != 0)
				bad = r;
			/* topo_tree_route gives the same answer. */
			got = topo_tree_route(t, r, from, scratch);
			if (got != k ||
			    memcmp(scratch, want,
				   (size_t)k * sizeof(int32_t)) != 0)
				bad = r;
		}
		/* Arriving from a non-neighbour is refused. */
		if (topo_tree_route(t, r, r, scratch) != TOPO_EARG ||
		    topo_tree_route(t, r, n, scratch) != TOPO_EARG ||
		    topo_tree_route(t, r, -2, scratch) != TOPO_EARG)
			bad = r;
	}
	CHECK(bad < 0, "%s/%s: route rows of member %d wrong", gn, tn,
	      bad < 0 ? 0 : (int)mem[bad]);

	/* 5. Broadcast from every member over the table as data. */
	if (full) {
		int32_t *rowoff = tc_alloc((size_t)n + 1, sizeof(int32_t));
		struct tc_fromidx *fi;
		int32_t *recv = tc_alloc((size_t)n, sizeof(int32_t));
		int32_t *qat = tc_alloc((size_t)n + 1, sizeof(int32_t));
		int32_t *qfrom = tc_alloc((size_t)n + 1, sizeof(int32_t));
		int32_t fail_root = -1;
		const char *why = "";

		for (int32_t r = 0; r < n; r++)
			rowoff[r + 1] = rowoff[r] + topo_routes_rows(t, r);
		fi = tc_alloc((size_t)rowoff[n], sizeof(*fi));
		for (int32_t r = 0; r < n; r++) {
			for (int32_t i = 0; i < rowoff[r + 1] - rowoff[r];
			     i++) {
				const int32_t *to;

				fi[rowoff[r] + i].row = i;
				topo_routes_row(t, r, i,
						&fi[rowoff[r] + i].from, &to,
						scratch);
			}
			qsort(fi + rowoff[r],
			      (size_t)(rowoff[r + 1] - rowoff[r]), sizeof(*fi),
			      tc_cmp_from);
		}
		for (int32_t s = 0; s < n && fail_root < 0; s++) {
			int32_t head = 0, tail = 0;
			int64_t messages = 0;

			memset(recv, 0, (size_t)n * sizeof(int32_t));
			qat[tail] = s;
			qfrom[tail++] = -1;
			while (head < tail && fail_root < 0) {
				int32_t at = qat[head], from = qfrom[head++];
				struct tc_fromidx key = {from, 0}, *hit;
				const int32_t *to;
				int32_t k, dummy;

				hit = bsearch(
				    &key, fi + rowoff[at],
				    (size_t)(rowoff[at + 1] - rowoff[at]),
				    sizeof(*fi), tc_cmp_from);
				if (hit == NULL) {
					fail_root = s;
					why = "no row for an arrival";
					break;
				}
				k = topo_routes_row(t, at, hit->row, &dummy,
						    &to, scratch);
				for (int32_t j = 0; j < k; j++) {
					messages++;
					if (to[j] < 0 || to[j] >= n ||
					    to[j] == s || recv[to[j]]++ != 0) {
						fail_root = s;
						why = "a member received twice";
						break;
					}
					qat[tail] = to[j];
					qfrom[tail++] = at;
				}
			}
			if (fail_root < 0 && (messages != n - 1 || tail != n)) {
				fail_root = s;
				why = "not every member reached";
			}
		}
		CHECK(fail_root < 0, "%s/%s: broadcast from member %d: %s", gn,
		      tn, fail_root < 0 ? 0 : (int)mem[fail_root], why);
		free(rowoff);
		free(fi);
		free(recv);
		free(qat);
		free(qfrom);
	}
out:
	free(ref);
	free(state);
	free(depth);
	free(coff);
	free(cfill);
	free(kids);
	free(want);
	free(scratch);
}

#endif
