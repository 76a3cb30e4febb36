/*
 * test_algos.c - the collective algorithms as plans (bcast flood, scatter
 * tree, or-combine and direct, gather chunked and tree, reduce tree and
 * hierarchical) and the tree arithmetic behind them (coll/pattern.c).
 *
 * Each plan is checked for its structure (exact message counts, every
 * member's buffers and receipt slots, bounds of every message) and then
 * replayed by the tests' own sequential executor (algocheck.h, shared
 * with test_colls.c), independent of exec.c: in several topological orders
 * (first ready first, last ready first, random), with plain memmove and a
 * reference reduction, over test-owned buffers.  Every member must end with the
 * bytes the operation's definition gives, SEND untouched; every slot must
 * receive exactly what it expects.  Small plans are also checked for races: two
 * messages touching the same bytes, one of them writing, must be ordered by the
 * DAG (two REDUCEs into one buffer excepted: the transport serialises them).
 * Machines are uneven, groups strided, trees of every shape, roots first,
 * last, middle and off the tree root.  Hand-edited route tables that
 * deliver twice or miss members show it in their slots.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "exec_internal.h"

#include "algocheck.h"
#include "check.h"

#include <time.h>

/* ---------------------------------------------------------------------- */
/* Route tables (machines, groups, trees, the executor, the race checker
 * and the expected results: algocheck.h) */

/* Gives t an explicit route table: rows[i] = {at, from, count, to...},
 * all ranks, ended by at == -1: the whole table, as the loader reads one
 * spelled out in full. */
static void set_routes(topo_tree *t, const int32_t *rows)
{
	int32_t nrows = 0, ntargets = 0, k = 0;
	int32_t *at, *from, *to;
	int64_t *to_off;
	const int32_t *q;
	struct topo__routes_in in;

	for (q = rows; q[0] >= 0; q += 3 + q[2]) {
		nrows++;
		ntargets += q[2];
	}
	at = calloc((size_t)nrows + 1, sizeof(int32_t));
	from = calloc((size_t)nrows + 1, sizeof(int32_t));
	to_off = calloc((size_t)nrows + 1, sizeof(int64_t));
	to = calloc((size_t)ntargets + 1, sizeof(int32_t));
	for (q = rows; q[0] >= 0; q += 3 + q[2], k++) {
		at[k] = q[0];
		from[k] = q[1];
		to_off[k + 1] = to_off[k] + q[2];
		memcpy(to + to_off[k], q + 3, (size_t)q[2] * sizeof(int32_t));
	}
	memset(&in, 0, sizeof(in));
	in.rows = nrows;
	in.at = at;
	in.from = from;
	in.to_off = to_off;
	in.to = to;
	in.complete = true;
	if (topo__routes_x_build(t, &in) != 0) {
		fprintf(stderr, "set_routes: out of memory\n");
		exit(2);
	}
	free(at);
	free(from);
	free(to_off);
	free(to);
}

/* The derived table of t made explicit, each member's rows in reverse
 * order, so the planner's scan path must find the same rows. */
static void make_explicit(topo_tree *t)
{
	int32_t n = t->n, maxdeg = 1, *scratch, *rows, *w;
	size_t cap = 0;

	for (int32_t r = 0; r < n; r++) {
		int32_t d = topo_tree_degree(t, r);

		cap += (size_t)(d + 1) * (size_t)(3 + d);
		if (d > maxdeg)
			maxdeg = d;
	}
	scratch = calloc((size_t)maxdeg, sizeof(int32_t));
	rows = calloc(cap + 1, sizeof(int32_t));
	w = rows;
	for (int32_t r = 0; r < n; r++)
		for (int32_t i = topo_routes_rows(t, r) - 1; i >= 0; i--) {
			const int32_t *to;
			int32_t from,
			    c = topo_routes_row(t, r, i, &from, &to, scratch);

			*w++ = r;
			*w++ = from;
			*w++ = c;
			memcpy(w, to, (size_t)c * sizeof(int32_t));
			w += c;
		}
	*w = -1;
	set_routes(t, rows);
	free(rows);
	free(scratch);
}

/* ---------------------------------------------------------------------- */
/* The generic plan check */

static const char *label; /* what is being checked, for messages */
static int last_rc;	  /* what the last plan() returned */

static topo_plan *plan(const topo_tree *t, enum topo_op op, const char *algo,
		       int32_t root_ep, size_t bytes, topo_error *err)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;

	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = algo;
	pp.root = root_ep;
	pp.bytes = bytes; /* type: int32 for reduce, int8 otherwise */
	topo_error_clear(err);
	last_rc = topo_plan_new(&p, t, &pp, err);
	return p;
}

/*
 * Replays p three ways and checks: every message runs (the DAG is
 * acyclic), stays in bounds, local steps and only they have no slot,
 * every slot gets what it expects (when exact), every member ends right,
 * and (small plans) no race.
 */
static void check_replay(const struct topo_plan *p, int exact_slots)
{
	int64_t local = 0, noslot = 0, r1, r2, nr;

	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		local += m->src == m->dst;
		noslot += (m->src == m->dst) != (m->slot < 0);
	}
	CHECK_INT(p->ntransport, p->nmsg - local);
	CHECK(noslot == 0,
	      "%s: %lld messages with src == dst disagree with "
	      "slot < 0",
	      label, (long long)noslot);
	for (int mode = 0; mode < 3; mode++) {
		struct run x;
		int32_t bad;
		int64_t slot_bad = -1;

		replay(p, mode, &x);
		CHECK(x.done == p->nmsg,
		      "%s: mode %d: %lld of %lld messages ran (a cycle?)",
		      label, mode, (long long)x.done, (long long)p->nmsg);
		CHECK(x.bad_msg < 0, "%s: message %lld out of bounds", label,
		      (long long)x.bad_msg);
		for (int64_t s = 0; exact_slots && s < p->nslots; s++)
			if (x.count[s] != p->slot_expect[s] && slot_bad < 0)
				slot_bad = s;
		CHECK(slot_bad < 0,
		      "%s: mode %d: slot %lld of member %d got %lld, "
		      "expects %d",
		      label, mode, (long long)slot_bad,
		      slot_bad < 0 ? 0 : (int)p->slot_member[slot_bad],
		      slot_bad < 0 ? 0LL : (long long)x.count[slot_bad],
		      slot_bad < 0 ? 0 : (int)p->slot_expect[slot_bad]);
		bad = exact_slots ? wrong_member(p, &x) : -1;
		CHECK(bad < 0, "%s: mode %d: member rank %d ends wrong", label,
		      mode, (int)bad);
		run_free(&x);
	}
	nr = races(p, &r1, &r2);
	CHECK(nr <= 0, "%s: %lld races, first between messages %lld and %lld",
	      label, (long long)nr, (long long)r1, (long long)r2);
}

/* Undirected distances from root over t's edges (for byte counts). */
static int64_t depth_sum(const topo_tree *t, int32_t root)
{
	int32_t n = t->n, *dist = malloc((size_t)n * sizeof(int32_t)),
		*q = malloc((size_t)n * sizeof(int32_t)), head = 0, tail = 0;
	int64_t sum = 0;

	for (int32_t i = 0; i < n; i++)
		dist[i] = -1;
	dist[root] = 0;
	q[tail++] = root;
	while (head < tail) {
		int32_t v = q[head++];

		sum += dist[v];
		for (int32_t u = 0; u < n; u++)
			if ((t->parent[u] == v || t->parent[v] == u) &&
			    dist[u] < 0) {
				dist[u] = dist[v] + 1;
				q[tail++] = u;
			}
	}
	free(dist);
	free(q);
	return sum;
}

/* ---------------------------------------------------------------------- */
/* Tree arithmetic */

static void test_pattern(const topo_machine *m)
{
	topo_group *g = group(m, "cols 0:4");
	const int32_t chain[5] = {-1, 0, 1, 2, 3};
	topo_tree *t = tree_of(g, "chain", chain);
	int32_t par[5], off[6], ch[5], order[5], pre[5], size[5];
	const int32_t want_par[5] = {1, 2, -1, 2, 3};
	const int32_t want_order[5] = {2, 1, 0, 3, 4};
	const int32_t want_size[5] = {1, 2, 5, 2, 1};
	int32_t bin[8], boff[9], bch[8], border[8], bpre[8], bsz[8];

	topo__pattern_reroot(t, 2, par);
	CHECK(memcmp(par, want_par, sizeof(par)) == 0,
	      "reroot chain at 2: %d %d %d %d %d", par[0], par[1], par[2],
	      par[3], par[4]);
	topo__pattern_children(par, 5, off, ch);
	CHECK_INT(off[2], 1); /* 0 and 1 have children before 2's */
	CHECK_INT(off[3] - off[2], 2);
	CHECK_INT(ch[off[2]], 1);
	CHECK_INT(ch[off[2] + 1], 3);
	topo__pattern_preorder(5, 2, off, ch, order, pre, size);
	CHECK(memcmp(order, want_order, sizeof(order)) == 0,
	      "preorder from 2: %d %d %d %d %d", order[0], order[1], order[2],
	      order[3], order[4]);
	CHECK(memcmp(size, want_size, sizeof(size)) == 0,
	      "subtree sizes: %d %d %d %d %d", size[0], size[1], size[2],
	      size[3], size[4]);
	for (int32_t i = 0; i < 5; i++)
		CHECK_INT(pre[order[i]], i);
	CHECK_INT(topo__pattern_runs(order, 0, 5), 4);
	CHECK_INT(topo__pattern_runs(order, 3, 5), 1);
	CHECK_INT(topo__pattern_run_end(order, 3, 5), 5);
	CHECK_INT(topo__pattern_run_end(order, 0, 5), 1);
	topo__pattern_bfs(5, 2, off, ch, order);
	CHECK(order[0] == 2 && order[1] == 1 && order[2] == 3 &&
		  order[3] == 0 && order[4] == 4,
	      "bfs from 2: %d %d %d %d %d", order[0], order[1], order[2],
	      order[3], order[4]);
	/* Binomial rooted at 0: preorder is rank order, one run. */
	topo__tree_binomial(8, bin);
	topo__pattern_children(bin, 8, boff, bch);
	topo__pattern_preorder(8, 0, boff, bch, border, bpre, bsz);
	CHECK_INT(topo__pattern_runs(border, 0, 8), 1);
	CHECK_INT(bsz[0], 8);
	CHECK_INT(bsz[4], 4);
	CHECK_INT(bsz[6], 2);
	topo_tree_free(t);
	topo_group_free(g);
}

/* ---------------------------------------------------------------------- */
/* Every algorithm over machines x groups x trees x roots */

static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:3"};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* Roots to try: first, last, middle, the tree's, a leaf off the root. */
static int roots_of(const topo_tree *t, int32_t *out)
{
	int k = 0;

	out[k++] = 0;
	out[k++] = t->n - 1;
	out[k++] = t->n / 2;
	out[k++] = t->root;
	for (int32_t r = t->n - 1; r >= 0; r--)
		if (r != t->root && t->child_off[r + 1] == t->child_off[r]) {
			out[k++] = r;
			break;
		}
	return k;
}

static int32_t nchildren(const topo_tree *t, int32_t r)
{
	return t->child_off[r + 1] - t->child_off[r];
}

typedef void (*algo_check)(const topo_tree *t, int32_t L);

static void over_all(const topo_machine *const *ms, int nm,
		     const char *const *specs, algo_check f,
		     int hierarchical_only)
{
	char buf[200];

	for (int i = 0; i < nm; i++)
		for (int j = 0; specs[j] != NULL; j++) {
			topo_group *g;

			if (topo_spec_check(ms[i], specs[j], NULL) != 0)
				continue;
			g = group(ms[i], specs[j]);
			for (size_t k = 0; k < NSHAPES; k++) {
				topo_tree *t;
				int32_t roots[5];
				int nr;

				if (hierarchical_only && k != 1)
					continue;
				t = tree(g, shapes[k]);
				nr = roots_of(t, roots);
				for (int q = 0; q < nr; q++) {
					snprintf(buf, sizeof(buf),
						 "machine %d, \"%s\", %s, root "
						 "rank %d",
						 i, specs[j], shapes[k],
						 (int)roots[q]);
					label = buf;
					f(t, roots[q]);
				}
				topo_tree_free(t);
			}
			topo_group_free(g);
		}
}

static size_t flood_bytes, flood_segment;

/*
 * Whether flood plan p is numbered depth first, as exec.c's worker takes
 * it (coll/bcast/flood.c): per segment, the root's own copy, then its
 * forwards; then, as a LIFO stack of successor lists (each pushed in
 * order, the last popped first), each list popped must start where the
 * last one ended and be consecutive indices.
 */
static bool depth_first_order(const topo_plan *p)
{
	int64_t(*stk)[2] = malloc(sizeof(*stk) * (size_t)(p->nmsg + 1));
	int64_t i = 0;
	bool ok = stk != NULL;

	while (ok && i < p->nmsg) {
		int64_t a = i + 1, b = a, next = a, top = 0;

		/* the root's copy, waiting for nothing */
		ok = p->msg[i].src == p->msg[i].dst && p->msg[i].nwait == 0;
		while (b < p->nmsg && p->msg[b].nwait == 0 &&
		       p->msg[b].src != p->msg[b].dst)
			b++;
		if (b > a) {
			stk[top][0] = a;
			stk[top++][1] = b;
		}
		while (ok && top > 0) {
			int64_t s = stk[--top][0], e = stk[top][1];

			ok = s == next;
			next = e;
			for (int64_t j = s; ok && j < e; j++) {
				int64_t k0 = p->succ_off[j],
					k1 = p->succ_off[j + 1];

				for (int64_t k = k0; ok && k < k1; k++)
					ok = p->succ[k] ==
					     p->succ[k0] + (k - k0);
				if (k1 > k0) {
					stk[top][0] = p->succ[k0];
					stk[top++][1] = p->succ[k0] + (k1 - k0);
				}
			}
		}
		i = next;
	}
	free(stk);
	return ok;
}

static void check_flood(const topo_tree *t, int32_t L)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;
	int64_t S, bad = -1;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
	pp.root = t->g->members[L];
	pp.bytes = flood_bytes;
	pp.segment = flood_segment;
	topo_error_clear(&err);
	CHECK(topo_plan_new(&p, t, &pp, &err) == 0, "%s: %s", label, err.text);
	if (p == NULL)
		return;
	S = flood_segment == 0 ? (flood_bytes >= (256 << 10)
				      ? (int64_t)(flood_bytes + 65535) / 65536
				      : 1)
			       : (int64_t)(flood_bytes + flood_segment - 1) /
				     (int64_t)flood_segment;
	CHECK_INT(p->root, L);
	CHECK_INT(p->ntransport, S * (p->n - 1));
	CHECK_INT(p->nslots, S * p->n);
	CHECK_INT(transport_bytes(p),
		  (int64_t)(p->n - 1) * (int64_t)flood_bytes);
	for (int32_t r = 0; r < p->n; r++)
		if (expected_at(p, r) != (r == L ? 0 : S) && bad < 0)
			bad = r;
	CHECK(bad < 0, "%s: member %d expects %lld deliveries", label, (int)bad,
	      bad < 0 ? 0LL : (long long)expected_at(p, (int32_t)bad));
	CHECK_INT(bsize(p, TOPO__SEND, L), (int64_t)flood_bytes);
	CHECK_INT(bsize(p, TOPO__SEND, L == 0 ? 1 % p->n : 0),
		  p->n == 1 ? (int64_t)flood_bytes : 0);
	/* Numbered depth first when asked (every table here is correct),
	 * and from 5 members on, never by accident when not. */
	if (topo__tune.flood_depth_first == 0)
		CHECK(depth_first_order(p), "%s: not numbered depth first",
		      label);
	check_replay(p, 1);
	topo_plan_free(p);
}

/*
 * Depth-first numbering against breadth-first: the same messages (each
 * member's forwards in the same order), the same dependencies between
 * them, and the order told apart by depth_first_order, which a
 * breadth-first plan of a binomial tree over 16 members fails.  Below
 * the threshold nothing is renumbered; a table that delivers twice never
 * is (test_faulty_tables runs at threshold 0).
 */
static void test_depth_first(const topo_machine *m)
{
	static const char *const dshapes[] = {"binomial", "kary:3", "chain",
					      "physical", "hierarchical"};
	topo_group *g = group(m, "all");
	int64_t saved = topo__tune.flood_depth_first;
	char what[96];

	for (size_t s = 0; s < sizeof(dshapes) / sizeof(dshapes[0]); s++) {
		topo_tree *t = tree(g, dshapes[s]);
		struct topo_plan_params pp;
		topo_plan *bfs = NULL, *dfs = NULL;
		topo_error err;

		snprintf(what, sizeof(what), "depth first, %s tree of %d",
			 dshapes[s], (int)g->size);
		label = what;
		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
		pp.root = g->members[3];
		pp.bytes = 40;
		pp.segment = 16;
		topo__tune.flood_depth_first = INT64_MAX;
		topo_error_clear(&err);
		CHECK(topo_plan_new(&bfs, t, &pp, &err) == 0, "%s", err.text);
		/* at the threshold exactly: renumbered */
		topo__tune.flood_depth_first = g->size - 1;
		CHECK(topo_plan_new(&dfs, t, &pp, &err) == 0, "%s", err.text);
		if (bfs != NULL && dfs != NULL) {
			int64_t *pos =
			    calloc((size_t)bfs->nmsg, sizeof(int64_t));
			int64_t *seen =
			    calloc((size_t)bfs->nmsg, sizeof(int64_t));
			bool same = bfs->nmsg == dfs->nmsg && pos != NULL &&
				    seen != NULL;

			CHECK(depth_first_order(dfs), "%s: order", label);
			if (strcmp(dshapes[s], "binomial") == 0)
				CHECK(!depth_first_order(bfs),
				      "%s: breadth first passes", label);
			/* Each dfs message's bfs twin: the one with the
			 * same source, destination and bytes (a flood
			 * without duplicates has one per segment). */
			for (int64_t i = 0; same && i < dfs->nmsg; i++) {
				const struct topo__msg *d = &dfs->msg[i];
				int64_t j = 0;

				while (j < bfs->nmsg &&
				       (bfs->msg[j].src != d->src ||
					bfs->msg[j].dst != d->dst ||
					bfs->msg[j].soff != d->soff ||
					bfs->msg[j].sbuf != d->sbuf))
					j++;
				same = j < bfs->nmsg && seen[j] == 0 &&
				       memcmp(&bfs->msg[j], d, sizeof(*d)) == 0;
				if (same) {
					seen[j] = 1;
					pos[i] = j;
				}
			}
			CHECK(same, "%s: not the same messages", label);
			/* the same dependencies, and the same order of each
			 * member's forwards */
			for (int64_t i = 0; same && i < dfs->nmsg; i++) {
				int64_t a0 = dfs->succ_off[i],
					a1 = dfs->succ_off[i + 1],
					b0 = bfs->succ_off[pos[i]];

				same =
				    a1 - a0 == bfs->succ_off[pos[i] + 1] - b0;
				for (int64_t k = 0; same && k < a1 - a0; k++)
					same = pos[dfs->succ[a0 + k]] ==
					       bfs->succ[b0 + k];
			}
			CHECK(same, "%s: not the same dependencies", label);
			free(pos);
			free(seen);
		}
		/* one message short of the threshold: breadth first */
		if (strcmp(dshapes[s], "binomial") == 0) {
			topo_plan_free(dfs);
			dfs = NULL;
			topo__tune.flood_depth_first = g->size;
			CHECK(topo_plan_new(&dfs, t, &pp, &err) == 0, "%s",
			      err.text);
			CHECK(dfs != NULL && !depth_first_order(dfs),
			      "%s: renumbered below the threshold", label);
		}
		topo_plan_free(bfs);
		topo_plan_free(dfs);
		topo_tree_free(t);
	}
	topo__tune.flood_depth_first = saved;
	label = "depth first";
	topo_group_free(g);
}

/* A scatter's receipt counters: every member but the root expects its
 * block once, the root nothing. */
static void check_scatter_slots(const topo_plan *p, int32_t L)
{
	int32_t bad = -1;

	for (int32_t r = 0; r < p->n; r++)
		if (expected_at(p, r) != (r != L) && bad < 0)
			bad = r;
	CHECK(bad < 0, "%s: member %d expects %lld", label, (int)bad,
	      bad < 0 ? 0LL : (long long)expected_at(p, bad));
}

static void check_scatter_tree(const topo_tree *t, int32_t L)
{
	topo_error err;
	topo_plan *p =
	    plan(t, TOPO_OP_SCATTER, "tree", t->g->members[L], 12, &err);

	CHECK(p != NULL, "%s: %s", label, err.text);
	if (p == NULL)
		return;
	CHECK_STR(p->algorithm, "tree");
	CHECK_INT(p->ntransport, p->n - 1);
	CHECK_INT(transport_bytes(p), 12 * depth_sum(t, L));
	CHECK_INT(bsize(p, TOPO__SEND, L), 12 * (int64_t)p->n);
	check_scatter_slots(p, L);
	check_replay(p, 1);
	topo_plan_free(p);
}

static void check_scatter_or(const topo_tree *t, int32_t L)
{
	topo_error err;
	topo_plan *p =
	    plan(t, TOPO_OP_SCATTER, "or-combine", t->g->members[L], 5, &err);
	int64_t n;
	int32_t bad = -1;

	CHECK(p != NULL, "%s: %s", label, err.text);
	if (p == NULL)
		return;
	n = p->n;
	CHECK_INT(p->params.type, TOPO_UINT8);
	CHECK_INT(p->params.redop, TOPO_BOR);
	CHECK_INT(p->ntransport, 2 * n * (n - 1));
	CHECK_INT(transport_bytes(p), 10 * n * (n - 1));
	for (int32_t r = 0; r < p->n; r++)
		if (expected_at(p, r) !=
			n * nchildren(t, r) + (r != t->root ? n : 0) &&
		    bad < 0)
			bad = r;
	CHECK(bad < 0, "%s: member %d expects %lld", label, (int)bad,
	      bad < 0 ? 0LL : (long long)expected_at(p, bad));
	check_replay(p, 1);
	topo_plan_free(p);
}

/* scatter "direct": the root's n - 1 blocks straight to their members,
 * nothing waiting for anything, (n - 1) B bytes whatever the tree, one
 * local step (the root's own block); the run verifies. */
static void check_scatter_direct(const topo_tree *t, int32_t L)
{
	topo_error err;
	topo_plan *p =
	    plan(t, TOPO_OP_SCATTER, "direct", t->g->members[L], 12, &err);
	int32_t bad = -1;

	CHECK(p != NULL, "%s: %s", label, err.text);
	if (p == NULL)
		return;
	CHECK_STR(p->algorithm, "direct");
	CHECK_INT(p->nmsg, p->n);
	CHECK_INT(p->ntransport, p->n - 1);
	CHECK_INT(transport_bytes(p), 12 * ((int64_t)p->n - 1));
	CHECK_INT(bsize(p, TOPO__SEND, L), 12 * (int64_t)p->n);
	CHECK_INT(p->succ_off[p->nmsg], 0);
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if ((m->src != L || m->soff != 12 * (int64_t)m->dst ||
		     m->dbuf != TOPO__RECV || m->len != 12 || m->nwait != 0) &&
		    bad < 0)
			bad = m->dst;
	}
	CHECK(bad < 0, "%s: the message to member %d is not its block",
	      label, (int)bad);
	check_scatter_slots(p, L);
	check_replay(p, 1);
	topo_plan_free(p);
}

static size_t gather_chunk;

static void check_gather_chunked(const topo_tree *t, int32_t L)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;
	int64_t k = gather_chunk == 0 ? 1
				      : (24 + (int64_t)gather_chunk - 1) /
					    (int64_t)gather_chunk;
	int32_t bad = -1;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_GATHER);
	pp.root = t->g->members[L];
	pp.bytes = 24;
	pp.chunk = gather_chunk;
	topo_error_clear(&err);
	CHECK(topo_plan_new(&p, t, &pp, &err) == 0, "%s: %s", label, err.text);
	if (p == NULL)
		return;
	CHECK_STR(p->algorithm, "chunked");
	CHECK_INT(p->ntransport, k * (p->n - 1));
	CHECK_INT(transport_bytes(p), 24 * (int64_t)(p->n - 1));
	CHECK_INT(bsize(p, TOPO__RECV, L), 24 * (int64_t)p->n);
	for (int32_t r = 0; r < p->n; r++)
		if (expected_at(p, r) != (r == L ? k * (p->n - 1) : 0) &&
		    bad < 0)
			bad = r;
	CHECK(bad < 0, "%s: member %d expects %lld", label, (int)bad,
	      bad < 0 ? 0LL : (long long)expected_at(p, bad));
	/* No dependencies at all: every chunk starts at once. */
	CHECK_INT(p->succ_off[p->nmsg], 0);
	check_replay(p, 1);
	topo_plan_free(p);
}

static void check_gather_tree(const topo_tree *t, int32_t L)
{
	topo_error err;
	topo_plan *p =
	    plan(t, TOPO_OP_GATHER, "tree", t->g->members[L], 12, &err);
	int32_t bad = -1;

	CHECK(p != NULL, "%s: %s", label, err.text);
	if (p == NULL)
		return;
	CHECK_INT(p->ntransport, p->n - 1);
	CHECK_INT(transport_bytes(p), 12 * depth_sum(t, L));
	for (int32_t r = 0; r < p->n; r++)
		if (expected_at(p, r) !=
			topo_tree_degree(t, r) - (r != L ? 1 : 0) &&
		    bad < 0)
			bad = r;
	CHECK(bad < 0, "%s: member %d expects %lld", label, (int)bad,
	      bad < 0 ? 0LL : (long long)expected_at(p, bad));
	check_replay(p, 1);
	topo_plan_free(p);
}

static const char *reduce_algo;
static enum topo_type reduce_type;
static enum topo_redop reduce_op;

static void check_reduce(const topo_tree *t, int32_t L)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;
	size_t B = 4 * tsize(reduce_type);
	int32_t bad = -1, R = t->root;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
	pp.algorithm = reduce_algo;
	pp.root = t->g->members[L];
	pp.bytes = B;
	pp.type = reduce_type;
	pp.redop = reduce_op;
	topo_error_clear(&err);
	CHECK(topo_plan_new(&p, t, &pp, &err) == 0, "%s: %s", label, err.text);
	if (p == NULL)
		return;
	CHECK_INT(p->ntransport, p->n - 1 + (L != R));
	CHECK_INT(transport_bytes(p), (int64_t)B * (p->n - 1 + (L != R)));
	for (int32_t r = 0; r < p->n; r++)
		if (expected_at(p, r) != nchildren(t, r) + (r == L && L != R) &&
		    bad < 0)
			bad = r;
	CHECK(bad < 0, "%s: member %d expects %lld", label, (int)bad,
	      bad < 0 ? 0LL : (long long)expected_at(p, bad));
	/* Every transport message goes up a tree edge, but the last. */
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if (m->src != m->dst && bad < 0 &&
		    !(m->kind == TOPO__REDUCE && t->parent[m->src] == m->dst) &&
		    !(m->kind == TOPO__COPY && m->src == R && m->dst == L))
			bad = (int32_t)i;
	}
	CHECK(bad < 0, "%s: message %d is not an up-edge REDUCE", label,
	      (int)bad);
	check_replay(p, 1);
	topo_plan_free(p);
}

/*
 * Segmented reduce: reduce_elems elements cut into segments of
 * reduce_segment bytes (0: automatic).  Each segment is the whole plan
 * over its own bytes: S times the messages, slots and receipts of
 * check_reduce, the same bytes in all, every message inside one segment,
 * and no dependency from one segment to another (so they pipeline).
 */
static size_t reduce_elems, reduce_segment;

static void check_reduce_segments(const topo_tree *t, int32_t L)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;
	size_t ts = tsize(reduce_type), B = reduce_elems * ts,
	       seg = reduce_segment == 0 ? (B >= (256 << 10) ? 65536 : B)
					 : reduce_segment;
	int64_t S, bad = -1;
	int32_t R = t->root;

	if (seg > B)
		seg = B;
	S = (int64_t)((B + seg - 1) / seg);
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
	pp.algorithm = reduce_algo;
	pp.root = t->g->members[L];
	pp.bytes = B;
	pp.type = reduce_type;
	pp.redop = reduce_op;
	pp.segment = reduce_segment;
	topo_error_clear(&err);
	CHECK(topo_plan_new(&p, t, &pp, &err) == 0, "%s: %s", label, err.text);
	if (p == NULL)
		return;
	CHECK_INT(p->ntransport, S * (p->n - 1 + (L != R)));
	CHECK_INT(transport_bytes(p), (int64_t)B * (p->n - 1 + (L != R)));
	CHECK_INT(p->nslots, S * p->n);
	for (int32_t r = 0; r < p->n; r++)
		if (expected_at(p, r) !=
			S * (nchildren(t, r) + (r == L && L != R)) &&
		    bad < 0)
			bad = r;
	CHECK(bad < 0, "%s: member %d expects %lld", label, (int)bad,
	      bad < 0 ? 0LL : (long long)expected_at(p, (int32_t)bad));
	/* Buffers are whole: B bytes, however many segments. */
	CHECK_INT(bsize(p, TOPO__SEND, 0), (int64_t)B);
	CHECK_INT(bsize(p, TOPO__RECV, L), (int64_t)B);
	for (int64_t i = 0; i < p->nmsg && bad < 0; i++) {
		const struct topo__msg *m = &p->msg[i];
		int64_t k = m->doff / (int64_t)seg;

		if (m->soff != m->doff || m->doff % (int64_t)seg != 0 ||
		    m->len != ((int64_t)B - m->doff < (int64_t)seg
				   ? (int64_t)B - m->doff
				   : (int64_t)seg) ||
		    (m->slot >= 0 && m->slot / p->n != k))
			bad = i;
		for (int64_t j = p->succ_off[i]; j < p->succ_off[i + 1]; j++)
			if (p->msg[p->succ[j]].doff / (int64_t)seg != k &&
			    bad < 0)
				bad = i;
	}
	CHECK(bad < 0,
	      "%s: message %lld is not inside one segment of %zu "
	      "bytes",
	      label, (long long)bad, seg);
	check_replay(p, 1);
	topo_plan_free(p);
}

/* ---------------------------------------------------------------------- */
/* Hand-edited route tables */

/* Plans a flood over a 5-member chain with the given rows from root rank
 * 0 in S segments, replays it once and returns each member's receipts
 * (summed over segments) in got[]. */
static topo_plan *faulty(const topo_group *g, const int32_t *rows, size_t bytes,
			 size_t segment, int64_t got[5], int32_t *wrong,
			 topo_tree **tp)
{
	const int32_t chain[5] = {-1, 0, 1, 2, 3};
	topo_tree *t = tree_of(g, "chain", chain);
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;
	struct run x;

	set_routes(t, rows);
	*tp = t;
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
	pp.root = g->members[0];
	pp.bytes = bytes;
	pp.segment = segment;
	topo_error_clear(&err);
	CHECK(topo_plan_new(&p, t, &pp, &err) == 0, "%s: %s", label, err.text);
	if (p == NULL)
		return NULL;
	replay(p, 2, &x);
	CHECK(x.done == p->nmsg, "%s: %lld of %lld ran", label,
	      (long long)x.done, (long long)p->nmsg);
	for (int32_t r = 0; r < 5; r++) {
		got[r] = 0;
		for (int64_t s = 0; s < p->nslots; s++)
			if (p->slot_member[s] == r)
				got[r] += x.count[s];
	}
	*wrong = wrong_member(p, &x);
	run_free(&x);
	return p;
}

static void test_faulty_tables(const topo_machine *m)
{
	topo_group *g = group(m, "cols 0:4");
	/* {at, from, count, to...}: 2 hears from 0 and from 1. */
	const int32_t twice[] = {0, -1, 2, 1, 2, 1, 0, 1, 2, 2, 0, 1, 3,
				 2, 1,	1, 3, 3, 2, 1, 4, 4, 3, 0, -1};
	/* 4 sends back to the root. */
	const int32_t back[] = {0, -1, 1, 1, 1, 0, 1, 2, 2, 1, 1,
				3, 3,  2, 1, 4, 4, 3, 1, 0, -1};
	/* 2 has no row for arrivals from 1: 3 and 4 never hear. */
	const int32_t miss[] = {0, -1, 1, 1, 1, 0, 1, 2, 2, -1, 2, 1, 3,
				2, 3,  1, 1, 3, 2, 1, 4, 4, 3,	0, -1};
	/* The root has no origin row at all. */
	const int32_t mute[] = {0, 1, 0, 1, 0, 1, 2, -1};
	/* 1 and 2 send to each other, 2 also to itself: no endless flood. */
	const int32_t loop[] = {0, -1, 1, 1, 1, 0, 2, 2, 2, 2, 1, 2, 1,
				3, 3,  2, 1, 4, 4, 3, 0, 1, 2, 1, 2, -1};
	int64_t got[5];
	int32_t wrong;
	topo_tree *t;
	topo_plan *p;
	int64_t r1, r2;

	label = "table delivering twice";
	p = faulty(g, twice, 8, 0, got, &wrong, &t);
	if (p != NULL) {
		CHECK_INT(p->ntransport, 5);
		CHECK(got[0] == 0 && got[1] == 1 && got[2] == 2 &&
			  got[3] == 1 && got[4] == 1,
		      "receipts %lld %lld %lld %lld %lld", (long long)got[0],
		      (long long)got[1], (long long)got[2], (long long)got[3],
		      (long long)got[4]);
		CHECK_INT(expected_at(p, 2), 1);
		CHECK_INT(wrong, -1); /* the data is still right */
		CHECK_INT(races(p, &r1, &r2), 0);
		topo_plan_free(p);
	}
	topo_tree_free(t);

	label = "table delivering twice, 3 segments";
	p = faulty(g, twice, 7, 3, got, &wrong, &t);
	if (p != NULL) {
		CHECK_INT(p->ntransport, 15);
		CHECK_INT(p->nslots, 15);
		CHECK(got[1] == 3 && got[2] == 6 && got[4] == 3,
		      "receipts %lld %lld %lld", (long long)got[1],
		      (long long)got[2], (long long)got[4]);
		CHECK_INT(races(p, &r1, &r2), 0);
		topo_plan_free(p);
	}
	topo_tree_free(t);

	label = "table sending back to the root";
	p = faulty(g, back, 8, 0, got, &wrong, &t);
	if (p != NULL) {
		CHECK_INT(p->ntransport, 5);
		CHECK_INT(got[0], 1);
		CHECK_INT(expected_at(p, 0), 0);
		CHECK_INT(wrong, -1);
		CHECK_INT(races(p, &r1, &r2), 0);
		topo_plan_free(p);
	}
	topo_tree_free(t);

	label = "table missing a row";
	p = faulty(g, miss, 8, 0, got, &wrong, &t);
	if (p != NULL) {
		CHECK_INT(p->ntransport, 2);
		CHECK(got[1] == 1 && got[2] == 1 && got[3] == 0 && got[4] == 0,
		      "receipts %lld %lld %lld %lld", (long long)got[1],
		      (long long)got[2], (long long)got[3], (long long)got[4]);
		CHECK_INT(expected_at(p, 3), 1);
		CHECK_INT(expected_at(p, 4), 1);
		CHECK_INT(wrong, 3);
		topo_plan_free(p);
	}
	topo_tree_free(t);

	label = "table without an origin row";
	p = faulty(g, mute, 8, 0, got, &wrong, &t);
	if (p != NULL) {
		CHECK_INT(p->ntransport, 0);
		CHECK_INT(p->nmsg, 1); /* the root's own copy */
		CHECK(got[1] + got[2] + got[3] + got[4] == 0, "receipts");
		CHECK_INT(wrong, 1);
		topo_plan_free(p);
	}
	topo_tree_free(t);

	label = "table with a loop";
	p = faulty(g, loop, 8, 0, got, &wrong, &t);
	if (p != NULL) {
		/* 0>1, 1>2, 1>2 (dup, listed twice), 2>1 (dup), 2>3, 3>4.
		 * (A row naming its own member never reaches a plan: the
		 * loader refuses it.) */
		CHECK_INT(p->ntransport, 6);
		CHECK(got[1] == 2 && got[2] == 2 && got[3] == 1 && got[4] == 1,
		      "receipts %lld %lld %lld %lld", (long long)got[1],
		      (long long)got[2], (long long)got[3], (long long)got[4]);
		CHECK_INT(wrong, -1);
		CHECK_INT(races(p, &r1, &r2), 0);
		topo_plan_free(p);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

/* A derived table written out explicitly (rows in another order) plans
 * the same flood. */
static void test_explicit_tables(const topo_machine *m)
{
	topo_group *g = group(m, "all");

	for (size_t k = 0; k < NSHAPES; k++) {
		topo_tree *t = tree(g, shapes[k]), *u = tree(g, shapes[k]);
		int32_t roots[5];
		int nr = roots_of(t, roots);

		make_explicit(u);
		for (int q = 0; q < nr; q++) {
			topo_error err;
			topo_plan *a = plan(t, TOPO_OP_BCAST, NULL,
					    g->members[roots[q]], 16, &err);
			topo_plan *b = plan(u, TOPO_OP_BCAST, NULL,
					    g->members[roots[q]], 16, &err);
			int same = a != NULL && b != NULL && a->nmsg == b->nmsg;

			for (int64_t i = 0; same && i < a->nmsg; i++)
				same = a->msg[i].src == b->msg[i].src &&
				       a->msg[i].dst == b->msg[i].dst;
			CHECK(same,
			      "%s from rank %d: explicit table plans "
			      "another flood",
			      shapes[k], (int)roots[q]);
			label = "explicit table";
			if (b != NULL)
				check_replay(b, 1);
			topo_plan_free(a);
			topo_plan_free(b);
		}
		topo_tree_free(t);
		topo_tree_free(u);
	}
	topo_group_free(g);
}

/* ---------------------------------------------------------------------- */
/* Sizes, segments, chunks and refusals */

static void test_sizes(const topo_machine *m)
{
	topo_group *g = group(m, "all"), *g3 = group(m, "cols 0:2");
	topo_tree *t = tree(g, "physical"), *t3 = tree(g3, "binomial");
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;

	/* bcast: automatic segments from 256 KiB: 64 KiB each. */
	flood_bytes = 256 << 10;
	flood_segment = 0;
	label = "bcast 256 KiB, automatic segments";
	check_flood(t3, 1);
	flood_bytes = (256 << 10) - 1;
	label = "bcast 256 KiB - 1, whole";
	check_flood(t3, 2);
	flood_bytes = 1000;
	flood_segment = 1;
	label = "bcast 1000 segments of 1 byte";
	check_flood(t3, 0);
	flood_segment = 5000;
	label = "bcast segment larger than the message";
	check_flood(t3, 0);

	/* gather chunked: automatic chunks. */
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_GATHER);
	pp.bytes = 1 << 20;
	pp.type = TOPO_DOUBLE;
	topo_error_clear(&err);
	CHECK(topo_plan_new(&p, t3, &pp, &err) == 0, "%s", err.text);
	if (p != NULL) {
		CHECK_INT(p->ntransport, 4 * (p->n - 1));
		CHECK_INT(p->msg[1].len, 256 << 10);
		topo_plan_free(p);
	}
	pp.bytes = 100 << 10;
	CHECK(topo_plan_new(&p, t3, &pp, &err) == 0, "%s", err.text);
	if (p != NULL) {
		CHECK_INT(p->ntransport, 2 * (p->n - 1));
		CHECK_INT(p->msg[1].len, 64 << 10);
		CHECK_INT(p->msg[p->nmsg - 1].len, 36 << 10);
		topo_plan_free(p);
	}
	pp.bytes = 40;
	CHECK(topo_plan_new(&p, t3, &pp, &err) == 0, "%s", err.text);
	if (p != NULL) {
		CHECK_INT(p->ntransport, p->n - 1);
		topo_plan_free(p);
	}
	pp.chunk = 1000;
	CHECK(topo_plan_new(&p, t3, &pp, &err) == 0, "%s", err.text);
	if (p != NULL) {
		CHECK_INT(p->ntransport, p->n - 1);
		topo_plan_free(p);
	}
	pp.chunk = 8;
	CHECK(topo_plan_new(&p, t3, &pp, &err) == 0, "%s", err.text);
	if (p != NULL) {
		CHECK_INT(p->ntransport, 5 * (p->n - 1));
		label = "gather 5 chunks of doubles";
		check_replay(p, 1);
		topo_plan_free(p);
	}
	/* Chunks must hold whole elements. */
	pp.chunk = 12;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, t3, &pp, &err), TOPO_EARG);
	CHECK(p == NULL, "no plan on error");
	CHECK_STR(err.text, "gather chunked: chunk size 12 is not a multiple "
			    "of the double size (8 bytes)");
	pp.chunk = 0;
	pp.bytes = 44;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, t3, &pp, &err), TOPO_EARG);
	CHECK(strstr(err.text, "44 bytes is not a multiple of") != NULL, "%s",
	      err.text);

	/* reduce: bytes in whole elements. */
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
	pp.algorithm = "tree";
	pp.bytes = 6;
	pp.type = TOPO_INT32;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, t, &pp, &err), TOPO_EARG);
	CHECK(strstr(err.text, "6 bytes is not a multiple of") != NULL, "%s",
	      err.text);

	topo_tree_free(t);
	topo_tree_free(t3);
	topo_group_free(g);
	topo_group_free(g3);
}

/* Reduce segments: automatic from 256 KiB, explicit, partial last
 * segment, and the refusals. */
static void test_reduce_segments(const topo_machine *m)
{
	topo_group *g = group(m, "all"), *g3 = group(m, "cols 0:2");
	topo_tree *t = tree(g, "hierarchical"), *t3 = tree(g3, "binomial");
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;
	char want[200];

	reduce_type = TOPO_INT32;
	reduce_op = TOPO_SUM;
	reduce_algo = "tree";
	reduce_elems = 64 << 10; /* 256 KiB: four automatic segments */
	reduce_segment = 0;
	label = "reduce 256 KiB, automatic segments";
	check_reduce_segments(t3, 1);
	reduce_elems = (64 << 10) - 1;
	label = "reduce 256 KiB - 4, whole";
	check_reduce_segments(t3, 2);
	reduce_elems = 1000;
	reduce_segment = 4;
	label = "reduce 1000 segments of one element";
	check_reduce_segments(t3, 0);
	reduce_segment = 5000;
	label = "reduce segment larger than the message";
	check_reduce_segments(t3, 0);
	reduce_algo = "hierarchical";
	reduce_type = TOPO_DOUBLE;
	reduce_op = TOPO_MAX;
	reduce_elems = 100;
	reduce_segment = 24;
	label = "reduce hierarchical, 100 doubles in segments of 3";
	check_reduce_segments(t, g->size - 1);

	/* Exact counts for the automatic case: 1 MiB in 16 segments. */
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
	pp.algorithm = "tree";
	pp.bytes = 1 << 20;
	pp.type = TOPO_INT32;
	pp.root = g3->members[0];
	topo_error_clear(&err);
	CHECK(topo_plan_new(&p, t3, &pp, &err) == 0, "%s", err.text);
	if (p != NULL) {
		CHECK_INT(p->ntransport, 16 * (p->n - 1));
		CHECK_INT(p->msg[0].len, 64 << 10);
		CHECK_INT(p->msg[p->nmsg - 1].doff, 15 << 16);
		topo_plan_free(p);
	}

	/* A segment must hold whole elements. */
	pp.segment = 6;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, t3, &pp, &err), TOPO_EARG);
	CHECK(p == NULL, "no plan on error");
	CHECK_STR(err.text, "reduce tree: segment size 6 is not a multiple of "
			    "the int32 size (4 bytes)");
	pp.algorithm = "hierarchical";
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, t, &pp, &err), TOPO_EARG);
	CHECK_STR(err.text, "reduce hierarchical: segment size 6 is not a "
			    "multiple of the int32 size (4 bytes)");
	/* Too many segments: refused with a hint, before any buffer. */
	pp.algorithm = "tree";
	pp.bytes = (size_t)1 << 34;
	pp.segment = 4;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, t3, &pp, &err), TOPO_ELIMIT);
	CHECK(p == NULL, "no plan on error");
	snprintf(want, sizeof(want),
		 "reduce tree: 4294967296 segments of 4 bytes over %d members "
		 "need more than 1073741824 messages (use a larger segment)",
		 (int)g3->size);
	CHECK_STR(err.text, want);
	/* Every segmented algorithm refuses the same way (one helper). */
	{
		static const struct {
			enum topo_op op;
			const char *algo, *opname;
		} seg_cases[] = {
		    {TOPO_OP_BCAST, "flood", "bcast"},
		    {TOPO_OP_REDUCE, "hierarchical", "reduce"},
		    {TOPO_OP_REDUCE, "direct", "reduce"},
		    {TOPO_OP_ALLREDUCE, "tree", "allreduce"},
		    {TOPO_OP_ALLREDUCE, "hierarchical", "allreduce"},
		    {TOPO_OP_REDUCE_SCATTER, "tree", "reduce-scatter"},
		    {TOPO_OP_REDUCE_SCATTER, "direct", "reduce-scatter"},
		};
		for (size_t i = 0; i < sizeof(seg_cases) / sizeof(seg_cases[0]);
		     i++) {
			topo_plan_params_init(&pp, sizeof(pp), seg_cases[i].op);
			pp.algorithm = seg_cases[i].algo;
			pp.type = TOPO_INT32;
			bool hier =
			    strcmp(seg_cases[i].algo, "hierarchical") == 0;
			const topo_tree *tt = hier ? t : t3;
			const topo_group *gg = hier ? g : g3;

			if (seg_cases[i].op == TOPO_OP_BCAST ||
			    seg_cases[i].op == TOPO_OP_REDUCE)
				pp.root = gg->members[0];
			pp.bytes = (size_t)1 << 34;
			pp.segment = 4;
			topo_error_clear(&err);
			CHECK_INT(topo_plan_new(&p, tt, &pp, &err),
				  TOPO_ELIMIT);
			CHECK(p == NULL, "no plan on error");
			/* reduce-scatter tree cuts all n blocks at once */
			long long nseg = (long long)1 << 32;

			if (seg_cases[i].op == TOPO_OP_REDUCE_SCATTER &&
			    strcmp(seg_cases[i].algo, "tree") == 0)
				nseg *= gg->size;
			snprintf(want, sizeof(want),
				 "%s %s: %lld segments of 4 bytes over %d "
				 "members need more than 1073741824 messages "
				 "(use a larger segment)",
				 seg_cases[i].opname, seg_cases[i].algo, nseg,
				 (int)gg->size);
			/* reduce-scatter direct names the segment that
			 * fits: n^2 messages per segment */
			if (seg_cases[i].op == TOPO_OP_REDUCE_SCATTER &&
			    strcmp(seg_cases[i].algo, "direct") == 0) {
				long long n2 = (long long)gg->size * gg->size;
				long long most = ((long long)1 << 30) / n2;
				long long least =
				    (((long long)1 << 34) + most - 1) / most;

				snprintf(want, sizeof(want),
					 "reduce-scatter direct: %lld segments "
					 "of 4 bytes over %d members need more "
					 "than 1073741824 messages: use "
					 "segments of at least %lld bytes, or "
					 "0 for whole blocks",
					 nseg, (int)gg->size,
					 (least + 3) / 4 * 4);
			}
			CHECK_STR(err.text, want);
		}
	}

	topo_tree_free(t);
	topo_tree_free(t3);
	topo_group_free(g);
	topo_group_free(g3);
}

static void test_hierarchical_refusal(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *b = tree(g, "binomial"), *h = tree(g, "hierarchical"), *e;
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;
	char want[300];
	int32_t bad = -1, *edited;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
	pp.algorithm = "hierarchical";
	pp.bytes = 8;
	pp.type = TOPO_INT32;
	for (int32_t r = 0; r < g->size && bad < 0; r++)
		if (b->parent[r] != h->parent[r])
			bad = r;
	snprintf(want, sizeof(want),
		 "algorithm hierarchical needs the hierarchical tree (-t "
		 "hierarchical); tree \"binomial\" differs from it at "
		 "endpoint %d (parent %d, hierarchical: %d); algorithm tree "
		 "(--algorithm tree) reduces over any tree",
		 (int)g->members[bad],
		 b->parent[bad] < 0 ? -1 : (int)g->members[b->parent[bad]],
		 h->parent[bad] < 0 ? -1 : (int)g->members[h->parent[bad]]);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, b, &pp, &err), TOPO_EARG);
	CHECK_STR(err.text, want);
	/* The default algorithm is hierarchical too. */
	pp.algorithm = NULL;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, b, &pp, &err), TOPO_EARG);
	/* A tree named "hierarchical" but edited is refused as well. */
	edited = malloc((size_t)g->size * sizeof(int32_t));
	memcpy(edited, h->parent, (size_t)g->size * sizeof(int32_t));
	for (int32_t r = 0; r < g->size; r++)
		if (edited[r] >= 0 && edited[r] != h->root &&
		    edited[edited[r]] >= 0) {
			edited[r] = h->root; /* move r under the root */
			snprintf(want, sizeof(want),
				 "tree \"hierarchical\" differs from it at "
				 "endpoint %d (parent %d, hierarchical: %d)",
				 (int)g->members[r], (int)g->members[h->root],
				 (int)g->members[h->parent[r]]);
			break;
		}
	e = tree_of(g, "hierarchical", edited);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, e, &pp, &err), TOPO_EARG);
	CHECK(strstr(err.text, want) != NULL, "%s\nwant ...%s", err.text, want);
	free(edited);
	topo_tree_free(e);
	topo_tree_free(b);
	topo_tree_free(h);
	topo_group_free(g);
}

static void test_or_limit(void)
{
	const int32_t tasks[1] = {3000}, parent[1] = {-1};
	topo_machine *m = machine(1, tasks, 1, parent);
	topo_group *g = group(m, "all");
	topo_tree *t = tree(g, "physical");
	topo_error err;
	topo_plan *p = plan(t, TOPO_OP_SCATTER, "or-combine", -1, 8, &err);

	CHECK(p == NULL, "or-combine over 3000 members is refused");
	CHECK_INT(err.code, TOPO_ELIMIT);
	/* physical on one node: the root has 2999 children, one member has
	 * children: 3000 * (1 + 2 * 2999 + 1) + 1 messages. */
	CHECK_STR(err.text, "scatter or-combine over 3000 members needs "
			    "18000001 messages (2n(n-1) = 17994000 between "
			    "members); at most 16777216 are planned: use "
			    "scatter \"tree\"");
	topo_plan_free(p);
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
}

/* Every allocation of every builder may fail: TOPO_ENOMEM, no leak (the
 * sanitizer checks that), and a later plan works. */
static void test_nomem(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *t = tree(g, "hierarchical");
	/* (the flood twice: the second numbered depth first) */
	static const struct {
		enum topo_op op;
		const char *algo;
	} a[] = {
	    {TOPO_OP_BCAST, "flood"},	     {TOPO_OP_BCAST, "flood"},
	    {TOPO_OP_SCATTER, "tree"},	     {TOPO_OP_SCATTER, "or-combine"},
	    {TOPO_OP_SCATTER, "direct"},     {TOPO_OP_GATHER, "chunked"},
	    {TOPO_OP_GATHER, "tree"},	     {TOPO_OP_REDUCE, "tree"},
	    {TOPO_OP_REDUCE, "hierarchical"}};
	int64_t saved = topo__tune.flood_depth_first;

	for (size_t i = 0; i < sizeof(a) / sizeof(a[0]); i++) {
		int rc = -1, other = 0;
		long k;

		topo__tune.flood_depth_first = i == 1 ? 0 : saved;
		for (k = 0; k < 100000 && rc != 0; k++) {
			topo_error err;
			topo_plan *p;

			topo__alloc_fail_after(k);
			p = plan(t, a[i].op, a[i].algo, g->members[1], 8, &err);
			rc = last_rc;
			if (rc != 0 &&
			    (rc != TOPO_ENOMEM || err.code != rc || p != NULL))
				other++;
			topo_plan_free(p);
		}
		topo__alloc_fail_after(-1);
		CHECK(rc == 0 && other == 0,
		      "%s %s: %d failures other than TOPO_ENOMEM, last %d",
		      topo_op_name(a[i].op), a[i].algo, other, rc);
		CHECK(k > 3, "%s: only %ld allocations", a[i].algo, k);
	}
	topo__tune.flood_depth_first = saved;
	topo_tree_free(t);
	topo_group_free(g);
}

/* ---------------------------------------------------------------------- */

/* The automatic segment (topo__auto_segment), from 256 KiB per member,
 * whole below, a segment asked for kept: across nodes 64 KiB; on one node
 * 256 KiB, but for a reduction of 4 members or more half the bytes,
 * rounded down to 4 KiB, within 256 KiB and 1 MiB.  Seen in the plans of
 * bcast flood, reduce and allreduce over the tree and the hierarchical
 * tree: the longest message, and how many segments (distinct destination
 * offsets) cut B. */
static void test_auto_segments(const topo_machine *m)
{
	static const struct {
		enum topo_op op;
		const char *algo, *shape;
	} cases[] = {{TOPO_OP_BCAST, "flood", "physical"},
		     {TOPO_OP_REDUCE, "tree", "binomial"},
		     {TOPO_OP_REDUCE, "hierarchical", "hierarchical"},
		     {TOPO_OP_ALLREDUCE, "tree", "binomial"},
		     {TOPO_OP_ALLREDUCE, "hierarchical", "hierarchical"}};
	/* bytes, segment asked for, and the segment wanted: on node 2 (4
	 * members) for a reduction and for bcast, on node 0 (3 members), and
	 * across nodes */
	static const int64_t sizes[][6] = {
	    {1 << 20, 0, 512 << 10, 256 << 10, 256 << 10, 64 << 10},
	    {4 << 20, 0, 1 << 20, 256 << 10, 256 << 10, 64 << 10},
	    {2 << 20, 0, 1 << 20, 256 << 10, 256 << 10, 64 << 10},
	    {(1 << 20) + (12 << 10) + 4, 0, 516 << 10, 256 << 10, 256 << 10,
	     64 << 10},
	    {(512 << 10) + 8188, 0, 256 << 10, 256 << 10, 256 << 10, 64 << 10},
	    {512 << 10, 0, 256 << 10, 256 << 10, 256 << 10, 64 << 10},
	    {256 << 10, 0, 256 << 10, 256 << 10, 256 << 10, 64 << 10},
	    {(256 << 10) - 4, 0, (256 << 10) - 4, (256 << 10) - 4,
	     (256 << 10) - 4, (256 << 10) - 4},
	    {1 << 20, 64 << 10, 64 << 10, 64 << 10, 64 << 10, 64 << 10},
	    {4 << 20, 256 << 10, 256 << 10, 256 << 10, 256 << 10, 256 << 10},
	    {1 << 20, 512 << 10, 512 << 10, 512 << 10, 512 << 10, 512 << 10}};
	/* machine a: node 2 has 4 tasks, node 0 3; all: 4 nodes */
	const char *specs[3] = {"node 2", "node 0", "all"};

	for (int sp = 0; sp < 3; sp++) {
		topo_group *g = group(m, specs[sp]);

		CHECK(topo__group_on_one_node(g) == (sp < 2), "%s on one node",
		      specs[sp]);
		CHECK_INT(g->size, sp == 0 ? 4 : sp == 1 ? 3 : 10);
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			topo_tree *t = tree(g, cases[c].shape);

			for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]);
			     z++) {
				struct topo_plan_params pp;
				topo_plan *p = NULL;
				topo_error err;
				int64_t B = sizes[z][0], longest = 0,
					nseg = 0, offs[64],
					want = sp == 0 ? sizes[z][cases[c].op ==
								  TOPO_OP_BCAST
							      ? 3
							      : 2]
					       : sizes[z][3 + sp];

				topo_plan_params_init(&pp, sizeof(pp),
						      cases[c].op);
				pp.algorithm = cases[c].algo;
				pp.bytes = (size_t)B;
				pp.segment = (size_t)sizes[z][1];
				if (cases[c].op != TOPO_OP_BCAST)
					pp.type = TOPO_INT32;
				if (cases[c].op != TOPO_OP_ALLREDUCE)
					pp.root = g->members[0];
				topo_error_clear(&err);
				CHECK(topo_plan_new(&p, t, &pp, &err) == 0,
				      "%s %s: %s", topo_op_name(cases[c].op),
				      cases[c].algo, err.text);
				if (p == NULL)
					continue;
				/* every message lies within one segment, at
				 * that segment's offset in every buffer:
				 * count the distinct offsets */
				for (int64_t i = 0; i < p->nmsg; i++) {
					int64_t k = 0;

					if (p->msg[i].len > longest)
						longest = p->msg[i].len;
					while (k < nseg &&
					       offs[k] != p->msg[i].doff)
						k++;
					if (k == nseg && nseg < 64)
						offs[nseg++] = p->msg[i].doff;
				}
				CHECK(longest == want,
				      "%s %s over %s, %lld bytes, segment "
				      "%lld: longest message %lld, want %lld",
				      topo_op_name(cases[c].op), cases[c].algo,
				      specs[sp], (long long)B,
				      (long long)sizes[z][1],
				      (long long)longest, (long long)want);
				CHECK(nseg == (B + want - 1) / want,
				      "%s %s over %s, %lld bytes: %lld "
				      "segments, want %lld",
				      topo_op_name(cases[c].op), cases[c].algo,
				      specs[sp], (long long)B, (long long)nseg,
				      (long long)((B + want - 1) / want));
				topo_plan_free(p);
			}
			topo_tree_free(t);
		}
		topo_group_free(g);
	}
}

/* allgather direct's order and pieces: on one node, blocks of 512 KiB or
 * more go as pieces of 256 KiB (the last one shorter), piece c of member
 * r to every member in round order before member r + 1's, each RECV block
 * covered once per destination, n - 1 receipts a piece; from 4 KiB one
 * message a block, member by member; below, in rounds (round k: every
 * member r to r + k); across nodes no pieces.  The plans replay right
 * (every member's result, every slot). */
static void test_allgather_pieces(const topo_machine *m)
{
	static const int64_t sizes[] = {(512 << 10) + 8, 512 << 10,
					(512 << 10) - 8, 1 << 20, 4096, 4088,
					8};
	topo_group *g = group(m, "node 2"); /* 4 members */
	topo_tree *t = tree(g, "physical");
	int32_t n = g->size;

	label = "allgather direct pieces";
	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		int64_t B = sizes[z], piece = B >= (512 << 10) ? 256 << 10 : B;
		int64_t pieces = (B + piece - 1) / piece, i = 0;
		int64_t *covered = calloc((size_t)(n * n), sizeof(int64_t));
		topo_error err;
		topo_plan *p =
		    plan(t, TOPO_OP_ALLGATHER, "direct", -1, (size_t)B, &err);

		CHECK(p != NULL, "allgather direct %lld: %s", (long long)B,
		      err.text);
		if (p == NULL) {
			free(covered);
			continue;
		}
		CHECK_INT(p->nmsg, (int64_t)n * n * pieces);
		for (int64_t c = 0; c < pieces && i < p->nmsg; c++)
			for (int32_t r = 0; r < n; r++)
				for (int32_t k = 0; k < n && i < p->nmsg;
				     k++, i++) {
					const struct topo__msg *g2 = &p->msg[i];
					int64_t at = c * piece,
						len = B - at < piece ? B - at
								     : piece;

					if (B < 4096) /* rounds: k, r */
						g2 = &p->msg[(int64_t)k * n + r];
					CHECK(g2->src == r &&
						  g2->dst == (r + k) % n &&
						  g2->soff == at &&
						  g2->doff == r * B + at &&
						  g2->len == len &&
						  (k == 0) == (g2->slot < 0),
					      "%lld bytes: message %lld is %d->%d "
					      "at %lld+%lld, want %d->%d at "
					      "%lld+%lld",
					      (long long)B, (long long)i,
					      g2->src, g2->dst,
					      (long long)g2->soff,
					      (long long)g2->len, r, (r + k) % n,
					      (long long)at, (long long)len);
					covered[g2->dst * n + r] += g2->len;
				}
		for (int32_t k = 0; k < n * n; k++)
			CHECK(covered[k] == B,
			      "%lld bytes: block %d of member %d's RECV "
			      "covered %lld bytes",
			      (long long)B, k % n, k / n, (long long)covered[k]);
		for (int64_t sl = 0; sl < p->nslots; sl++)
			CHECK_INT(p->slot_expect[sl], (n - 1) * pieces);
		check_replay(p, 1);
		free(covered);
		topo_plan_free(p);
	}
	topo_tree_free(t);
	topo_group_free(g);
	/* Across nodes no pieces: one message a block, member by member. */
	{
		topo_group *ga = group(m, "all");
		topo_tree *ta = tree(ga, "physical");
		topo_error err;
		topo_plan *p =
		    plan(ta, TOPO_OP_ALLGATHER, "direct", -1, 1 << 20, &err);

		CHECK(p != NULL, "allgather direct across nodes: %s", err.text);
		if (p != NULL) {
			CHECK_INT(p->nmsg, (int64_t)ga->size * ga->size);
			CHECK(p->msg[1].src == 0 && p->msg[1].dst == 1 &&
				  p->msg[1].len == 1 << 20,
			      "across nodes: message 1 is %d->%d, %lld bytes",
			      p->msg[1].src, p->msg[1].dst,
			      (long long)p->msg[1].len);
			topo_plan_free(p);
		}
		topo_tree_free(ta);
		topo_group_free(ga);
	}
}

int main(int argc, char **argv)
{
	/* Uneven: 3, 1, 4, 2 tasks; and 2, 5, 1, 3, 2 tasks of 2 endpoints
	 * with the physical root in the middle of the network. */
	const int32_t ta[4] = {3, 1, 4, 2}, pa[4] = {-1, 0, 0, 1};
	const int32_t tb[5] = {2, 5, 1, 3, 2}, pb[5] = {2, -1, 1, 1, 3};
	topo_machine *ms[2];
	/* Strided, unions, a reversed stride, one node, one member. */
	static const char *const specs[] = {
	    "all",  "cols 0::2", "rows 1 + node 0", "cols 9:0:-3", "node 2",
	    "ep 3", NULL};
	static const struct {
		enum topo_type type;
		enum topo_redop op;
	} red[] = {{TOPO_INT32, TOPO_SUM},   {TOPO_DOUBLE, TOPO_SUM},
		   {TOPO_INT64, TOPO_PROD},  {TOPO_FLOAT, TOPO_PROD},
		   {TOPO_INT16, TOPO_MIN},   {TOPO_DOUBLE, TOPO_MAX},
		   {TOPO_UINT8, TOPO_BOR},   {TOPO_UINT32, TOPO_BAND},
		   {TOPO_UINT64, TOPO_BXOR}, {TOPO_INT8, TOPO_SUM}};

	check_args(argc, argv);
	check_seed("test_algos", 20240611);
	ms[0] = machine(4, ta, 1, pa);
	ms[1] = machine(5, tb, 2, pb);

	CHECK_RUN(pattern, test_pattern(ms[0]));

	/* Floods as numbered by default (breadth first at this size), then
	 * numbered depth first (as floods of 65,536 messages and more are):
	 * the same checks and replays, and then the order. */
	flood_bytes = 24;
	for (int df = 0; df < 2; df++) {
		int64_t saved = topo__tune.flood_depth_first;

		topo__tune.flood_depth_first = df ? 0 : saved;
		if (check_want("flood")) {
			flood_segment = 0;
			over_all((const topo_machine *const *)ms, 2, specs,
				 check_flood, 0);
			flood_segment = 5;
			over_all((const topo_machine *const *)ms, 2, specs,
				 check_flood, 0);
		}
		CHECK_RUN(faulty_tables, test_faulty_tables(ms[0]));
		CHECK_RUN(explicit_tables, test_explicit_tables(ms[1]));
		topo__tune.flood_depth_first = saved;
	}
	CHECK_RUN(depth_first, test_depth_first(ms[1]));

	if (check_want("scatter")) {
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_scatter_tree, 0);
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_scatter_or, 0);
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_scatter_direct, 0);
	}
	if (check_want("gather")) {
		gather_chunk = 0;
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_gather_chunked, 0);
		gather_chunk = 5;
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_gather_chunked, 0);
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_gather_tree, 0);
	}
	for (size_t i = 0; i < sizeof(red) / sizeof(red[0]); i++) {
		if (!check_want("reduce"))
			break;
		reduce_type = red[i].type;
		reduce_op = red[i].op;
		reduce_algo = "tree";
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_reduce, 0);
		reduce_algo = "hierarchical";
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_reduce, 1);
	}
	for (size_t i = 0; i < 3; i++) {
		if (!check_want("reduce_segment_types"))
			break;
		reduce_type = red[i].type;
		reduce_op = red[i].op;
		reduce_elems = 7;
		reduce_segment = 2 * tsize(reduce_type);
		reduce_algo = "tree";
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_reduce_segments, 0);
		reduce_algo = "hierarchical";
		over_all((const topo_machine *const *)ms, 2, specs,
			 check_reduce_segments, 1);
	}

	CHECK_RUN(sizes, test_sizes(ms[1]));
	CHECK_RUN(reduce_segments, test_reduce_segments(ms[1]));
	CHECK_RUN(auto_segments, test_auto_segments(ms[0]));
	CHECK_RUN(allgather_pieces, test_allgather_pieces(ms[0]));
	CHECK_RUN(hierarchical_refusal, test_hierarchical_refusal(ms[1]));
	CHECK_RUN(or_limit, test_or_limit());
	CHECK_RUN(nomem, test_nomem(ms[1]));

	topo_machine_free(ms[0]);
	topo_machine_free(ms[1]);
	return check_done("test_algos");
}
