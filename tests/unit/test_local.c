/*
 * test_local.c - a member's part of a plan (libtopo/plan/local.c) and the
 * tree views it is built from (libtopo/tree/tview.c), checked against the
 * whole plans and trees of topo_plan_new and topo_tree_new.
 *
 * 1. Views: over uneven machines and groups (strided, subsets of nodes,
 *    single-task nodes, one node), for the hierarchical, binomial and
 *    chain shapes: every member's parent and children equal the tree's,
 *    its height and flood time equal what the tree's arrays give, and
 *    "x below v" equals walking x's parents.
 * 2. Parts: for bcast flood (every root), reduce tree and hierarchical
 *    (every root), allreduce tree and hierarchical, whole and in segments
 *    (a last one shorter), int32 and double (chains of combines), and
 *    every member r: r's two-sided schedule of its part equals its
 *    schedule of the whole plan (a member per host): the same events in
 *    the same order, each the same kind, peer, wire number and message
 *    (ends, buffers, offsets, length, kind), the same waits, and r's
 *    buffer sizes the same.
 * 3. Refusals: other operations and algorithms, the hierarchical
 *    algorithm over another shape, members out of range, are TOPO_EARG;
 *    allocation failures are TOPO_ENOMEM with nothing leaked.
 * 4. Scale: over 8,192 nodes of 128 tasks (1,048,576 members), the parts
 *    of the global root, an identified member, a local root and a leaf
 *    hold as many messages as their degrees say, whatever the size.
 */
#define TOPO_INTERNAL
#include "algocheck.h"
#include "alloc_hook.h"

static long views, parts, events;

/* ---------------------------------------------------------------------- */
/* Views from groups */

/* The runs of g: first[j] the first rank on its j-th member node. */
static int32_t *runs_of(const topo_group *g, int32_t *nruns)
{
	int32_t *first = malloc(((size_t)g->size + 2) * sizeof(int32_t));
	int32_t n = 0, last = -1;

	for (int32_t r = 0; r < g->size; r++) {
		int32_t node = topo_machine_endpoint_node(g->m, g->members[r]);

		if (node != last)
			first[n++] = r;
		last = node;
	}
	first[n] = g->size;
	*nruns = n;
	return first;
}

static int view_of(struct topo__tview *tv, const topo_group *g,
		   const char *shape, int32_t **first)
{
	int32_t nruns = 0;

	*first = NULL;
	if (strcmp(shape, "hierarchical") == 0) {
		*first = runs_of(g, &nruns);
		return topo__tview_hierarchical(tv, g->size, *first, nruns);
	}
	topo__tview_simple(tv,
			   strcmp(shape, "binomial") == 0 ? TOPO__TV_BINOMIAL
							  : TOPO__TV_CHAIN,
			   g->size);
	return 0;
}

/* From the tree's arrays: height and flood time of v's subtree. */
static int32_t tree_height(const topo_tree *t, int32_t v)
{
	int32_t h = 0;

	for (int32_t k = t->child_off[v]; k < t->child_off[v + 1]; k++) {
		int32_t c = 1 + tree_height(t, t->child[k]);

		if (c > h)
			h = c;
	}
	return h;
}

static int cmp_desc(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x < y) - (x > y);
}

static int32_t tree_time(const topo_tree *t, int32_t v)
{
	int32_t n = t->child_off[v + 1] - t->child_off[v], best = 0;
	int32_t *ts = malloc(((size_t)n + 1) * sizeof(int32_t));

	for (int32_t i = 0; i < n; i++)
		ts[i] = tree_time(t, t->child[t->child_off[v] + i]);
	qsort(ts, (size_t)n, sizeof(int32_t), cmp_desc);
	for (int32_t i = 0; i < n; i++)
		if (i + 1 + ts[i] > best)
			best = i + 1 + ts[i];
	free(ts);
	return best;
}

static void check_view(const topo_group *g, const char *shape,
		       const char *label)
{
	topo_tree *t = tree(g, shape);
	struct topo__tview tv;
	int32_t *first, *ch = malloc(((size_t)g->size + 1) * sizeof(int32_t));
	int32_t *scratch;

	CHECK(view_of(&tv, g, shape, &first) == 0, "%s: no view", label);
	scratch = malloc(((size_t)topo__tview_scratch(&tv) + 1) *
			 sizeof(int32_t));
	CHECK_INT(tv.root, t->root);
	for (int32_t v = 0; v < g->size; v++) {
		int32_t nc = topo__tview_children(&tv, v, ch),
			want = t->child_off[v + 1] - t->child_off[v];

		views++;
		CHECK(topo__tview_parent(&tv, v) == t->parent[v],
		      "%s: member %d's parent %d, tree's %d", label, (int)v,
		      (int)topo__tview_parent(&tv, v), (int)t->parent[v]);
		CHECK(nc == want &&
			  memcmp(ch, t->child + t->child_off[v],
				 (size_t)nc * sizeof(int32_t)) == 0,
		      "%s: member %d's children differ (%d, tree's %d)", label,
		      (int)v, (int)nc, (int)want);
		CHECK(topo__tview_height(&tv, v, scratch) == tree_height(t, v),
		      "%s: member %d's height %d, tree's %d", label, (int)v,
		      (int)topo__tview_height(&tv, v, scratch),
		      (int)tree_height(t, v));
		CHECK(topo__tview_time(&tv, v, scratch) == tree_time(t, v),
		      "%s: member %d's flood time %d, tree's %d", label,
		      (int)v, (int)topo__tview_time(&tv, v, scratch),
		      (int)tree_time(t, v));
		for (int32_t x = 0; x < g->size; x++) {
			int32_t u = x;

			while (u >= 0 && u != v)
				u = t->parent[u];
			CHECK(topo__tview_below(&tv, v, x) == (u == v),
			      "%s: is %d below %d? view %d, tree %d", label,
			      (int)x, (int)v, topo__tview_below(&tv, v, x),
			      u == v);
		}
	}
	free(ch);
	free(scratch);
	free(first);
	topo_tree_free(t);
}

/* ---------------------------------------------------------------------- */
/* Parts against whole plans */

/* Whether events e of (p, s) and f of (q, z) are the same: kind, peer,
 * wire number, and their message's ends, buffers, offsets, length,
 * kind and mark. */
static int same_event(const struct topo_plan *p, const struct topo__sched *s,
		      int64_t e, const struct topo_plan *q,
		      const struct topo__sched *z, int64_t f)
{
	const struct topo__ev *a = &s->ev[e], *b = &z->ev[f];
	const struct topo__msg *m = &p->msg[a->msg], *n = &q->msg[b->msg];

	return a->kind == b->kind && a->peer == b->peer && a->seq == b->seq &&
	       a->nwait == b->nwait && m->src == n->src && m->dst == n->dst &&
	       m->sbuf == n->sbuf && m->dbuf == n->dbuf &&
	       m->kind == n->kind && m->mark == n->mark &&
	       m->soff == n->soff && m->doff == n->doff && m->len == n->len;
}

static void check_part(const topo_plan *whole, const struct topo__tview *tv,
		       int32_t r, bool one_node, const char *label)
{
	struct topo__sched *s = NULL, *z = NULL;
	topo_plan *q = NULL;
	topo_error err;
	int rc;

	parts++;
	topo_error_clear(&err);
	rc = topo__sched_new(&s, whole, NULL, whole->n, r, &err);
	CHECK(rc == 0, "%s: whole schedule: %s", label, err.text);
	rc = topo__plan_local(&q, tv, &whole->params, whole->root, r, one_node,
			      &err);
	CHECK(rc == 0, "%s: member %d's part: %s", label, (int)r, err.text);
	if (rc == 0)
		rc = topo__sched_new(&z, q, NULL, q->n, r, &err);
	CHECK(rc == 0, "%s: member %d's part's schedule: %s", label, (int)r,
	      err.text);
	if (s == NULL || z == NULL)
		goto out;
	CHECK(s->nev == z->nev, "%s: member %d: %lld events, whole %lld",
	      label, (int)r, (long long)z->nev, (long long)s->nev);
	for (int64_t e = 0; e < s->nev && e < z->nev; e++) {
		events++;
		if (!same_event(whole, s, e, q, z, e)) {
			CHECK(0, "%s: member %d: event %lld differs", label,
			      (int)r, (long long)e);
			break;
		}
		CHECK(s->succ_off[e + 1] - s->succ_off[e] ==
				  z->succ_off[e + 1] - z->succ_off[e] &&
			  memcmp(s->succ + s->succ_off[e],
				 z->succ + z->succ_off[e],
				 (size_t)(s->succ_off[e + 1] - s->succ_off[e]) *
				     sizeof(int64_t)) == 0,
		      "%s: member %d: event %lld's successors differ", label,
		      (int)r, (long long)e);
	}
	CHECK(s->max_seq == z->max_seq && s->nsend == z->nsend &&
		  s->nrecv == z->nrecv,
	      "%s: member %d: wire counts differ", label, (int)r);
	for (int b = 0; b < TOPO__NBUF; b++)
		CHECK(topo__bufsize(whole, b, r) == topo__bufsize(q, b, r),
		      "%s: member %d's buffer %d: %lld bytes, whole %lld", label,
		      (int)r, b, (long long)topo__bufsize(q, b, r),
		      (long long)topo__bufsize(whole, b, r));
out:
	topo__sched_free(s);
	topo__sched_free(z);
	topo_plan_free(q);
}

static topo_plan *whole_plan(const topo_tree *t, enum topo_op op,
			     const char *alg, size_t bytes, size_t seg,
			     enum topo_type type, int32_t root)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;

	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = alg;
	pp.bytes = bytes;
	pp.segment = seg;
	if (topo_op_reduces(op)) {
		pp.type = type;
		pp.redop = TOPO_SUM;
	}
	if (root >= 0)
		pp.root = t->g->members[root];
	topo_error_clear(&err);
	if (topo_plan_new(&p, t, &pp, &err) != 0) {
		CHECK(0, "%s %s: %s", topo_op_name(op), alg, err.text);
		return NULL;
	}
	return p;
}

static void check_parts(const topo_group *g, const char *shape,
			const char *glabel, int quick)
{
	static const struct {
		enum topo_op op;
		const char *alg;
	} algs[] = {{TOPO_OP_BCAST, "flood"},
		    {TOPO_OP_REDUCE, "tree"},
		    {TOPO_OP_REDUCE, "hierarchical"},
		    {TOPO_OP_ALLREDUCE, "tree"},
		    {TOPO_OP_ALLREDUCE, "hierarchical"}};
	static const struct {
		size_t bytes, seg;
		enum topo_type type;
	} sizes[] = {{8, 0, TOPO_INT32}, {72, 16, TOPO_DOUBLE},
		     {24, 0, TOPO_DOUBLE}};
	topo_tree *t = tree(g, shape);
	struct topo__tview tv;
	int32_t *first;
	bool one = topo__group_on_one_node(g);

	view_of(&tv, g, shape, &first);
	for (size_t a = 0; a < sizeof(algs) / sizeof(algs[0]); a++) {
		bool rooted = algs[a].op != TOPO_OP_ALLREDUCE;

		if (strcmp(algs[a].alg, "hierarchical") == 0 &&
		    strcmp(shape, "hierarchical") != 0)
			continue;
		for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++)
			for (int32_t root = -1; root < (rooted ? g->size : 0);
			     root++) {
				char label[200];
				topo_plan *p;

				if (quick && root >= 0 && root % 3 != 1)
					continue;
				p = whole_plan(t, algs[a].op, algs[a].alg,
					       sizes[z].bytes, sizes[z].seg,
					       sizes[z].type, root);
				if (p == NULL)
					continue;
				snprintf(label, sizeof(label),
					 "%s %s over %s (%s), %zu B%s %s, root "
					 "%d",
					 topo_op_name(algs[a].op), algs[a].alg,
					 glabel, shape, sizes[z].bytes,
					 sizes[z].seg ? " in segments" : "",
					 topo_type_name(sizes[z].type),
					 (int)p->root);
				for (int32_t r = 0; r < g->size; r++)
					check_part(p, &tv, r, one, label);
				topo_plan_free(p);
			}
	}
	free(first);
	topo_tree_free(t);
}

/* ---------------------------------------------------------------------- */

static void test_groups(void)
{
	static const char *const shapes[] = {"hierarchical", "binomial",
					     "chain"};
	const int32_t ta[6] = {3, 1, 4, 2, 1, 5}, pa[6] = {-1, 0, 0, 1, 1, 2};
	const int32_t tb[4] = {1, 1, 1, 1}, pb[4] = {-1, 0, 0, 0};
	const int32_t tc[1] = {7}, pc[1] = {-1};
	const int32_t td[5] = {4, 4, 2, 4, 1}, pd[5] = {-1, 0, 0, 1, 1};
	topo_machine *ms[4] = {machine(6, ta, 1, pa), machine(4, tb, 1, pb),
			       machine(1, tc, 1, pc), machine(5, td, 2, pd)};
	static const struct {
		int m;
		const char *spec;
	} gs[] = {{0, "all"},	   {0, "all - node 2"}, {0, "ep 0:15:2"},
		  {0, "node 5"},   {0, "ep 4"},		{1, "all"},
		  {2, "all"},	   {2, "ep 1:6:2"},	{3, "all"},
		  {3, "row 1"},	   {3, "node 0,3"},	{3, "ep 3:25:3"}};
	int quick = check_quick();

	for (size_t i = 0; i < sizeof(gs) / sizeof(gs[0]); i++) {
		topo_group *g = group(ms[gs[i].m], gs[i].spec);
		char label[80];

		snprintf(label, sizeof(label), "machine %d, \"%s\"", gs[i].m,
			 gs[i].spec);
		for (size_t s = 0; s < 3; s++) {
			check_view(g, shapes[s], label);
			check_parts(g, shapes[s], label, quick);
		}
		topo_group_free(g);
	}
	for (int i = 0; i < 4; i++)
		topo_machine_free(ms[i]);
	printf("test_local: %ld members' views, %ld parts of plans, %ld "
	       "events compared\n",
	       views, parts, events);
	CHECK(parts > (quick ? 1000 : 5000), "only %ld parts checked", parts);
}

static void test_refusals(void)
{
	int32_t first[3] = {0, 2, 5};
	struct topo__tview tv, bin;
	struct topo_plan_params pp;
	topo_plan *p = (topo_plan *)1;
	topo_error err;
	static const struct {
		enum topo_op op;
		const char *alg;
	} no[] = {{TOPO_OP_SCATTER, NULL},     {TOPO_OP_BCAST, "tree"},
		  {TOPO_OP_REDUCE, "direct"},  {TOPO_OP_ALLREDUCE, "ring"},
		  {TOPO_OP_BARRIER, NULL},     {TOPO_OP_ALLGATHER, NULL},
		  {TOPO_OP_REDUCE_SCATTER, NULL}};

	topo__tview_hierarchical(&tv, 5, first, 2);
	topo__tview_simple(&bin, TOPO__TV_BINOMIAL, 5);
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++) {
		topo_plan_params_init(&pp, sizeof(pp), no[i].op);
		pp.algorithm = no[i].alg;
		pp.bytes = 8;
		topo_error_clear(&err);
		CHECK(topo__plan_local(&p, &tv, &pp, -1, 0, false, &err) ==
			      TOPO_EARG &&
			  p == NULL,
		      "%s %s: not refused", topo_op_name(no[i].op),
		      no[i].alg ? no[i].alg : "(default)");
	}
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
	pp.algorithm = "hierarchical";
	CHECK(topo__plan_local(&p, &bin, &pp, -1, 0, false, &err) == TOPO_EARG,
	      "reduce hierarchical over a binomial view");
	pp.algorithm = "tree";
	CHECK(topo__plan_local(&p, &tv, &pp, -1, 5, false, &err) == TOPO_EARG,
	      "a member out of range");
	CHECK(topo__plan_local(&p, &tv, &pp, 7, 0, false, &err) == TOPO_EARG,
	      "a root out of range");
	{
		int32_t bad[3] = {0, 3, 2};

		CHECK(topo__tview_hierarchical(&tv, 5, bad, 2) == TOPO_EARG,
		      "runs out of order");
	}
	/* every allocation failing in turn */
	topo__tview_hierarchical(&tv, 5, first, 2);
	pp.algorithm = NULL;
	pp.type = TOPO_DOUBLE;
	pp.bytes = 64;
	pp.segment = 16;
	for (int op = 0; op < 3; op++) {
		topo_plan_params_init(&pp, sizeof(pp),
				      op == 0	? TOPO_OP_BCAST
				      : op == 1 ? TOPO_OP_REDUCE
						: TOPO_OP_ALLREDUCE);
		pp.bytes = 64;
		pp.segment = 16;
		if (op > 0)
			pp.type = TOPO_DOUBLE;
		for (long k = 0;; k++) {
			int rc;

			topo__alloc_fail_after(k);
			topo_error_clear(&err);
			rc = topo__plan_local(&p, &tv, &pp, -1, 2, false, &err);
			topo__alloc_fail_after(-1);
			if (rc == 0) {
				topo_plan_free(p);
				break;
			}
			CHECK(rc == TOPO_ENOMEM && p == NULL,
			      "op %d, allocation %ld failing: %d", op, k, rc);
			if (k > 200)
				break;
		}
	}
}

/* A million members: each part as large as its member's degree. */
static void test_scale(void)
{
	enum { NODES = 8192, PER = 128 };
	int32_t *first = malloc((NODES + 1) * sizeof(int32_t));
	struct topo__tview tv;
	struct topo_plan_params pp;
	/* the global root, an identified member, a local root, a leaf */
	const int32_t who[4] = {0, 5, 3 * PER, 3 * PER + 7};
	topo_error err;

	for (int32_t j = 0; j <= NODES; j++)
		first[j] = j * PER;
	CHECK(topo__tview_hierarchical(&tv, NODES * PER, first, NODES) == 0,
	      "a million members' view");
	for (int op = 0; op < 3; op++) {
		enum topo_op o = op == 0   ? TOPO_OP_BCAST
				 : op == 1 ? TOPO_OP_REDUCE
					   : TOPO_OP_ALLREDUCE;

		for (int w = 0; w < 4; w++) {
			int32_t r = who[w], deg = topo__tview_children(&tv, r,
									NULL);
			topo_plan *p = NULL;
			int64_t want;

			topo_plan_params_init(&pp, sizeof(pp), o);
			pp.bytes = 8;
			pp.type = TOPO_DOUBLE;
			topo_error_clear(&err);
			CHECK(topo__plan_local(&p, &tv, &pp, -1, r, false,
					       &err) == 0,
			      "%s for member %d: %s", topo_op_name(o), (int)r,
			      err.text);
			if (p == NULL)
				continue;
			/* bcast: the root's copy or the arrival, and a
			 * forward per child; reduce: the copy when it has
			 * children, its children's and its own REDUCE;
			 * allreduce: and the join or its copy down, and
			 * one per child */
			want = o == TOPO_OP_BCAST ? 1 + deg
			       : (deg > 0 || r == 0) + deg + (r != 0) +
				     (o == TOPO_OP_ALLREDUCE ? 1 + deg : 0);
			CHECK(p->nmsg == want,
			      "%s for member %d of %d (degree %d): %lld "
			      "messages, want %lld",
			      topo_op_name(o), (int)r, NODES * PER, (int)deg,
			      (long long)p->nmsg, (long long)want);
			topo_plan_free(p);
		}
	}
	free(first);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_local", 1);
	CHECK_RUN(groups, test_groups());
	CHECK_RUN(refusals, test_refusals());
	CHECK_RUN(scale, test_scale());
	return check_done("test_local");
}
