/*
 * test_predict.c - predicting what a plan costs (libtopo/plan/predict.c) and
 * the costs it uses (libtopo/machine/costs.c).
 *
 * Against closed forms, the way the literature writes them for LogP and
 * LogGP (Culler et al. 1993; Alexandrov et al. 1995; Pjesivac-Grbovic et
 * al., "Performance analysis of MPI collective operations", 2007), on
 * machines of one task per node so that every edge is a net edge, with
 * hop latency 0 and free local copies so that only L, o, g, G (and the
 * reduction's cost per byte, gamma) count:
 *   chain bcast      (P - 1)(L + 2o + (m - 1)G)
 *   flat bcast       (P - 2) max(o, g + (m - 1)G) + L + 2o + (m - 1)G
 *   binomial bcast   log2(P) (L + 2o + (m - 1)G), P a power of two (the
 *                    largest subtree first); any tree in general: T(v) =
 *                    max over v's i-th child c of i Delta + R + T(c)
 *   binomial reduce  log2(P) (L + 2o + (m - 1)G + m gamma)
 *   linear gather    L + 2o + (m - 1)G + (P - 2)(max(o, g) + (m - 1)G)
 * with each member's finish time where the form gives it, and the
 * critical path ending at the prediction.  Then the edge classes and
 * network hops (torus, tree, a tree deep enough for binary lifting),
 * predict-only plans against full ones, the costs' reading, writing and
 * overrides, allocation failures, and the timeout.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "exec_internal.h"

#include <math.h>
#include <stdbool.h>

struct lgp {
	double L, o, g, G, gamma;
};

static const struct lgp params[] = {
    {2500, 1500, 1000, 6, 0.5},  /* LogGOPSim's defaults */
    {1000, 200, 500, 0.5, 0.25}, /* g > o */
    {100, 50, 300, 1, 2},	     /* g much more than o */
    {5000, 10, 5, 0.01, 0.1},    /* latency-bound */
};

static topo_machine *machine_net(int32_t nodes, int32_t tasks, int32_t E,
				 const char *type, const int32_t *parent)
{
	int32_t *nt = malloc((size_t)nodes * sizeof(*nt));
	int32_t *par = malloc((size_t)nodes * sizeof(*par));
	topo_machine *m = NULL;
	topo_error err;
	int rc;

	for (int32_t i = 0; i < nodes; i++)
		nt[i] = tasks;
	if (parent != NULL)
		memcpy(par, parent, (size_t)nodes * sizeof(*par));
	else
		topo__network_kary(par, nodes, 2, 0);
	topo_error_clear(&err);
	rc = topo__machine_build(&m, "test", nodes, nt, E, type, par, &err);
	CHECK(rc == 0, "topo__machine_build: %s", err.text);
	free(nt);
	free(par);
	return m;
}

static void set_costs(struct topo_costs *c, const struct lgp *x)
{
	topo_costs_init(c, sizeof(*c));
	c->net.L = x->L;
	c->net.o = x->o;
	c->net.g = x->g;
	c->net.G = x->G;
	c->net.hop = 0;
	c->shm.L = c->shm.o = c->shm.g = c->shm.G = 0;
	for (int t = 0; t < TOPO_TYPE_COUNT; t++)
		c->reduce[t] = x->gamma;
}

/* Plans op over tree `tree` of m's world and predicts it. */
static topo_prediction *predict(const topo_machine *m, const char *tree,
				enum topo_op op, const char *algo, size_t bytes,
				const struct topo_costs *c, bool lean,
				topo_tree **tout, topo_group **gout)
{
	topo_group *g = NULL;
	topo_tree *t = NULL;
	topo_plan *p = NULL;
	topo_prediction *r = NULL;
	struct topo_plan_params pp;
	struct topo_predict_params q;
	topo_error err;
	int rc;

	topo_error_clear(&err);
	rc = topo_group_new(&g, m, "world", "all", &err);
	if (rc == 0)
		rc = topo_tree_new(&t, g, tree, &err);
	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = algo;
	pp.bytes = bytes;
	pp.type = TOPO_INT8;
	pp.chunk = op == TOPO_OP_GATHER && algo != NULL &&
			   strcmp(algo, "chunked") == 0
		       ? bytes
		       : 0;
	pp.predict_only = lean;
	if (rc == 0)
		rc = topo_plan_new(&p, t, &pp, &err);
	topo_predict_params_init(&q, sizeof(q));
	q.costs = c;
	if (rc == 0)
		rc = topo_plan_predict(p, &q, &r, &err);
	CHECK(rc == 0, "%s %s over %s: %s", topo_op_name(op),
	      algo != NULL ? algo : "", tree, err.text);
	topo_plan_free(p);
	if (tout != NULL && gout != NULL) {
		*tout = t;
		*gout = g;
	} else {
		topo_tree_free(t);
		topo_group_free(g);
	}
	return r;
}

static bool close_to(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(1, fabs(b));
}

/* The path must be continuous in time and end at the prediction. */
static void check_path(const topo_prediction *r, const char *what)
{
	int64_t n = topo_prediction_path_length(r);
	const struct topo_path_step *last = topo_prediction_path_step(r, n - 1);

	CHECK(n > 0 && last != NULL, "%s: no critical path", what);
	if (n <= 0 || last == NULL)
		return;
	CHECK(close_to(last->end, topo_prediction_seconds(r)),
	      "%s: the path ends at %.9g s, the prediction is %.9g s", what,
	      last->end, topo_prediction_seconds(r));
	CHECK(strcmp(topo_prediction_path_step(r, 0)->after, "start") == 0,
	      "%s: the path starts after %s", what,
	      topo_prediction_path_step(r, 0)->after);
	for (int64_t i = 1; i < n; i++) {
		const struct topo_path_step *s = topo_prediction_path_step(r, i);
		const struct topo_path_step *b = topo_prediction_path_step(r, i - 1);

		CHECK(s->start >= b->start - 1e-15 && s->end >= s->start,
		      "%s: step %lld goes back in time", what, (long long)i);
	}
}

/* The tree formula: T(v) = max over v's i-th child c (in send order) of
 * i Delta + R + T(c). */
static double tree_time(const topo_tree *t, int32_t v, double delta, double R)
{
	const int32_t *ch;
	int32_t nc = topo_tree_children(t, v, &ch);
	double *sub = malloc((size_t)(nc + 1) * sizeof(*sub)), best = 0;

	/* Longest subtree first: the order the flood sends in. */
	for (int32_t i = 0; i < nc; i++)
		sub[i] = tree_time(t, ch[i], delta, R);
	for (int32_t i = 0; i < nc; i++)
		for (int32_t j = i + 1; j < nc; j++)
			if (sub[j] > sub[i]) {
				double x = sub[i];

				sub[i] = sub[j];
				sub[j] = x;
			}
	for (int32_t i = 0; i < nc; i++)
		if (i * delta + R + sub[i] > best)
			best = i * delta + R + sub[i];
	free(sub);
	return best;
}

static void test_bcast_forms(void)
{
	static const int32_t sizes[] = {2, 3, 5, 8, 16, 33, 64};
	static const size_t bytes[] = {1, 8, 1024, 65536};

	for (size_t pi = 0; pi < sizeof(params) / sizeof(params[0]); pi++)
		for (size_t si = 0; si < sizeof(sizes) / sizeof(sizes[0]); si++)
			for (size_t bi = 0; bi < 4; bi++) {
				const struct lgp *x = &params[pi];
				int32_t P = sizes[si];
				double m = (double)bytes[bi];
				double R = x->L + 2 * x->o + (m - 1) * x->G;
				double delta = fmax(x->o, x->g + (m - 1) * x->G);
				struct topo_costs c;
				topo_machine *mach;
				topo_prediction *r;
				topo_tree *t;
				topo_group *g;
				char kary[16], what[96];
				int32_t *chain = malloc((size_t)P * sizeof(int32_t));

				set_costs(&c, x);
				for (int32_t i = 0; i < P; i++)
					chain[i] = i - 1;
				/* chain: a chain network, its physical tree */
				mach = machine_net(P, 1, 1, "tree", chain);
				r = predict(mach, "physical", TOPO_OP_BCAST,
					    NULL, bytes[bi], &c, true, NULL,
					    NULL);
				snprintf(what, sizeof(what),
					 "chain bcast P %d m %zu set %zu", P,
					 bytes[bi], pi);
				if (r != NULL) {
					CHECK(close_to(topo_prediction_seconds(r) *
							   1e9,
						       (P - 1) * R),
					      "%s: %.3f ns, want %.3f", what,
					      topo_prediction_seconds(r) * 1e9,
					      (P - 1) * R);
					for (int32_t i = 0; i < P; i++)
						CHECK(close_to(
							  topo_prediction_finish(r, i) *
							      1e9,
							  i * R +
							      (i < P - 1 ? x->o : 0)),
						      "%s: member %d finishes at "
						      "%.3f ns",
						      what, (int)i,
						      topo_prediction_finish(r, i) *
							  1e9);
					check_path(r, what);
					CHECK_INT(topo_prediction_last(r),
						  P - 1);
				}
				topo_prediction_free(r);
				topo_machine_free(mach);
				free(chain);

				/* flat: every member a child of the root */
				mach = machine_net(P, 1, 1, "kary", NULL);
				snprintf(kary, sizeof(kary), "kary:%d",
					 P > 1 ? P - 1 : 1);
				r = predict(mach, kary, TOPO_OP_BCAST, NULL,
					    bytes[bi], &c, true, NULL, NULL);
				snprintf(what, sizeof(what),
					 "flat bcast P %d m %zu set %zu", P,
					 bytes[bi], pi);
				if (r != NULL) {
					CHECK(close_to(topo_prediction_seconds(r) *
							   1e9,
						       (P - 2) * delta + R),
					      "%s: %.3f ns, want %.3f", what,
					      topo_prediction_seconds(r) * 1e9,
					      (P - 2) * delta + R);
					check_path(r, what);
				}
				topo_prediction_free(r);

				/* binomial, and the tree formula for any P */
				r = predict(mach, "binomial", TOPO_OP_BCAST,
					    NULL, bytes[bi], &c, true, &t, &g);
				snprintf(what, sizeof(what),
					 "binomial bcast P %d m %zu set %zu", P,
					 bytes[bi], pi);
				if (r != NULL) {
					double want = tree_time(
					    t, topo_tree_root(t), delta, R);

					CHECK(close_to(topo_prediction_seconds(r) *
							   1e9,
						       want),
					      "%s: %.3f ns, want %.3f", what,
					      topo_prediction_seconds(r) * 1e9,
					      want);
					/* The form needs Delta <= R. */
					if ((P & (P - 1)) == 0 && delta <= R)
						CHECK(close_to(
							  topo_prediction_seconds(r) *
							      1e9,
							  log2(P) * R),
						      "%s: %.3f ns, want "
						      "log2(P) R = %.3f",
						      what,
						      topo_prediction_seconds(r) *
							  1e9,
						      log2(P) * R);
					check_path(r, what);
				}
				topo_prediction_free(r);
				topo_tree_free(t);
				topo_group_free(g);
				topo_machine_free(mach);
			}
}

static void test_reduce_gather_forms(void)
{
	static const int32_t sizes[] = {2, 4, 8, 16, 32};
	static const size_t bytes[] = {8, 1024, 65536};

	for (size_t pi = 0; pi < sizeof(params) / sizeof(params[0]); pi++)
		for (size_t si = 0; si < 5; si++)
			for (size_t bi = 0; bi < 3; bi++) {
				const struct lgp *x = &params[pi];
				int32_t P = sizes[si];
				double m = (double)bytes[bi];
				double R = x->L + 2 * x->o + (m - 1) * x->G;
				double want;
				struct topo_costs c;
				topo_machine *mach = machine_net(P, 1, 1, "kary",
								 NULL);
				topo_prediction *r;
				char what[96];

				set_costs(&c, x);
				r = predict(mach, "binomial", TOPO_OP_REDUCE,
					    "tree", bytes[bi], &c, true, NULL,
					    NULL);
				want = log2(P) * (R + m * x->gamma);
				snprintf(what, sizeof(what),
					 "binomial reduce P %d m %zu set %zu", P,
					 bytes[bi], pi);
				/* The form holds where the receive gap does
				 * not bind: children's contributions reach a
				 * parent R + m gamma apart. */
				if (r != NULL &&
				    x->g > 2 * x->o + x->L + m * x->gamma)
					check_path(r, what);
				else if (r != NULL) {
					CHECK(close_to(topo_prediction_seconds(r) *
							   1e9,
						       want),
					      "%s: %.3f ns, want %.3f", what,
					      topo_prediction_seconds(r) * 1e9,
					      want);
					check_path(r, what);
				}
				topo_prediction_free(r);

				r = predict(mach, "physical", TOPO_OP_GATHER,
					    "chunked", bytes[bi], &c, true,
					    NULL, NULL);
				want = R + (P - 2) * (fmax(x->o, x->g) +
						      (m - 1) * x->G);
				snprintf(what, sizeof(what),
					 "linear gather P %d m %zu set %zu", P,
					 bytes[bi], pi);
				if (r != NULL) {
					CHECK(close_to(topo_prediction_seconds(r) *
							   1e9,
						       want),
					      "%s: %.3f ns, want %.3f", what,
					      topo_prediction_seconds(r) * 1e9,
					      want);
					check_path(r, what);
				}
				topo_prediction_free(r);
				topo_machine_free(mach);
			}
}

/* One message between two members: 2o + L(edge) + (m - 1)G. */
static void one_message(const topo_machine *mach, const char *spec,
			const struct topo_costs *c, double want,
			const char *what)
{
	topo_group *g = NULL;
	topo_tree *t = NULL;
	topo_plan *p = NULL;
	topo_prediction *r = NULL;
	struct topo_plan_params pp;
	struct topo_predict_params q;
	topo_error err;
	int rc;

	topo_error_clear(&err);
	rc = topo_group_new(&g, mach, "two", spec, &err);
	if (rc == 0)
		rc = topo_tree_new(&t, g, "binomial", &err);
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
	pp.bytes = 100;
	pp.predict_only = 1;
	if (rc == 0)
		rc = topo_plan_new(&p, t, &pp, &err);
	topo_predict_params_init(&q, sizeof(q));
	q.costs = c;
	if (rc == 0)
		rc = topo_plan_predict(p, &q, &r, &err);
	CHECK(rc == 0, "%s: %s", what, err.text);
	if (rc == 0) {
		CHECK(close_to(topo_prediction_seconds(r) * 1e9, want),
		      "%s: %.3f ns, want %.3f", what,
		      topo_prediction_seconds(r) * 1e9, want);
		CHECK_INT(topo_prediction_path_length(r), 2);
		if (topo_prediction_path_length(r) == 2)
			CHECK_STR(topo_prediction_path_step(r, 1)->after,
				  "arrival");
	}
	topo_prediction_free(r);
	topo_plan_free(p);
	topo_tree_free(t);
	topo_group_free(g);
}

static void test_edges(void)
{
	struct topo_costs c;
	topo_machine *mach;
	int32_t *par;
	double net2 = 2 * 1500 + 99 * 6; /* 2o + (m - 1)G, net */

	topo_costs_init(&c, sizeof(c));
	c.net = (struct topo_loggp){2500, 1500, 1000, 6, 300};
	c.shm = (struct topo_loggp){200, 100, 100, 0.5, 0};

	/* shm: two tasks of one node */
	mach = machine_net(1, 2, 1, "kary", NULL);
	one_message(mach, "all", &c, 2 * 100 + 200 + 99 * 0.5, "shm edge");
	topo_machine_free(mach);

	/* torus of 8 x 4 nodes: node 0 to node 5 * 4 + 3 = 23 is 3 + 1
	 * hops (around the ring of 8, and of 4) */
	{
		topo_machine *t = NULL;
		topo_error err;
		int rc;
		const char *json = "{\"nodes\": 32, \"tasks_per_node\": 1, "
				   "\"network\": {\"type\": \"torus\", "
				   "\"dims\": [8, 4]}}";

		topo_error_clear(&err);
		rc = topo_machine_load_string(&t, json, strlen(json), NULL,
					      &err);
		CHECK(rc == 0, "torus: %s", err.text);
		if (rc == 0) {
			one_message(t, "node 0,23", &c, net2 + 2500 + 3 * 300,
				    "torus, 4 hops");
			one_message(t, "node 0,1", &c, net2 + 2500,
				    "torus, 1 hop");
			one_message(t, "node 0,31", &c, net2 + 2500 + 300,
				    "torus, 2 hops across both wraps");
		}
		topo_machine_free(t);
	}

	/* binary tree network of 15 nodes: 7 to 14 is 7-3-1-0-2-6-14 */
	mach = machine_net(15, 1, 1, "kary", NULL);
	one_message(mach, "node 7,14", &c, net2 + 2500 + 5 * 300,
		    "tree, 6 hops");
	one_message(mach, "node 7,8", &c, net2 + 2500 + 300, "tree, 2 hops");
	topo_machine_free(mach);

	/* a chain network of 200 nodes (deep: binary lifting) */
	par = malloc(200 * sizeof(*par));
	for (int32_t i = 0; i < 200; i++)
		par[i] = i - 1;
	mach = machine_net(200, 1, 1, "tree", par);
	one_message(mach, "node 3,190", &c, net2 + 2500 + 186 * 300,
		    "deep chain, 187 hops");
	one_message(mach, "node 150,199", &c, net2 + 2500 + 48 * 300,
		    "deep chain, 49 hops");
	topo_machine_free(mach);
	/* a branching tree deeper than 64: 0 - 1 - ... - 99, and 100 ..
	 * 149 hanging from node 40 */
	for (int32_t i = 0; i < 150; i++)
		par[i] = i < 100 ? i - 1 : i == 100 ? 40 : i - 1;
	mach = machine_net(150, 1, 1, "tree", par);
	/* 149 to 90: up 50 to node 40, down 50 to 90 */
	one_message(mach, "node 90,149", &c, net2 + 2500 + 99 * 300,
		    "deep branches, 100 hops");
	topo_machine_free(mach);
	free(par);
}

/* A predict-only plan and a full one predict the same; the lean one
 * cannot be run. */
static void test_lean_same(void)
{
	static const struct {
		enum topo_op op;
		const char *algo, *tree;
	} cases[] = {
	    {TOPO_OP_BCAST, NULL, "physical"},
	    {TOPO_OP_SCATTER, "tree", "binomial"},
	    {TOPO_OP_SCATTER, "or-combine", "physical"},
	    {TOPO_OP_GATHER, "tree", "hierarchical"},
	    {TOPO_OP_GATHER, "chunked", "physical"},
	    {TOPO_OP_REDUCE, "tree", "kary:3"},
	    {TOPO_OP_REDUCE, "hierarchical", "hierarchical"},
	    {TOPO_OP_REDUCE, "direct", "physical"},
	    {TOPO_OP_ALLREDUCE, "tree", "binomial"},
	    {TOPO_OP_ALLREDUCE, "hierarchical", "hierarchical"},
	    {TOPO_OP_ALLREDUCE, "ring", "physical"},
	    {TOPO_OP_ALLREDUCE, "recursive-doubling", "physical"},
	    {TOPO_OP_ALLREDUCE, "rabenseifner", "physical"},
	    {TOPO_OP_ALLGATHER, "ring", "physical"},
	    {TOPO_OP_ALLGATHER, "tree", "chain"},
	    {TOPO_OP_ALLGATHER, "recursive-doubling", "physical"},
	    {TOPO_OP_ALLGATHER, "bruck", "physical"},
	    {TOPO_OP_REDUCE_SCATTER, "ring", "physical"},
	    {TOPO_OP_REDUCE_SCATTER, "tree", "kary:3"},
	    {TOPO_OP_REDUCE_SCATTER, "recursive-halving", "physical"},
	    {TOPO_OP_REDUCE_SCATTER, "direct", "physical"},
	    {TOPO_OP_ALLTOALL, "pairwise", "physical"},
	    {TOPO_OP_ALLTOALL, "bruck", "physical"},
	    {TOPO_OP_ALLTOALL, "direct", "physical"},
	    {TOPO_OP_BARRIER, "dissemination", "physical"},
	    {TOPO_OP_BARRIER, "tree", "binomial"},
	};
	static const int32_t uneven[] = {3, 1, 4, 2, 2};
	int32_t par[5] = {-1, 0, 0, 1, 1};
	topo_machine *mach = NULL;
	topo_error err;

	topo_error_clear(&err);
	CHECK_INT(topo__machine_build(&mach, "u", 5, uneven, 2, "tree", par,
				      &err),
		  0);
	if (mach == NULL)
		return;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size_t by = cases[i].op == TOPO_OP_BARRIER ? 0 : 4096;
		topo_prediction *a = predict(mach, cases[i].tree, cases[i].op,
					     cases[i].algo, by, NULL, false,
					     NULL, NULL);
		topo_prediction *b = predict(mach, cases[i].tree, cases[i].op,
					     cases[i].algo, by, NULL, true,
					     NULL, NULL);

		if (a != NULL && b != NULL) {
			CHECK(topo_prediction_seconds(a) ==
				      topo_prediction_seconds(b) &&
				  topo_prediction_events(a) ==
				      topo_prediction_events(b) &&
				  topo_prediction_path_length(a) ==
				      topo_prediction_path_length(b),
			      "%s %s: full %.9g s, lean %.9g s",
			      topo_op_name(cases[i].op),
			      cases[i].algo != NULL ? cases[i].algo : "",
			      topo_prediction_seconds(a),
			      topo_prediction_seconds(b));
			check_path(a, topo_op_name(cases[i].op));
			{
				int64_t x[4], y[4];

				topo_prediction_messages(a, &x[0], &x[1], &x[2],
							 &x[3]);
				topo_prediction_messages(b, &y[0], &y[1], &y[2],
							 &y[3]);
				/* (a barrier moves no bytes) */
				CHECK(memcmp(x, y, sizeof(x)) == 0 &&
					  x[0] + x[1] > 0 &&
					  (x[2] + x[3] > 0) ==
					      (cases[i].op != TOPO_OP_BARRIER),
				      "messages full %lld+%lld, lean %lld+%lld",
				      (long long)x[0], (long long)x[1],
				      (long long)y[0], (long long)y[1]);
			}
			for (int32_t r = 0; r < 24; r++)
				CHECK(topo_prediction_finish(a, r) ==
					  topo_prediction_finish(b, r),
				      "member %d", (int)r);
		}
		topo_prediction_free(a);
		topo_prediction_free(b);
	}
	/* The lean plan refuses to run. */
	{
		topo_group *g = NULL;
		topo_tree *t = NULL;
		topo_plan *p = NULL;
		topo_report *rep = NULL;
		struct topo_plan_params pp;

		topo_group_new(&g, mach, "world", "all", &err);
		topo_tree_new(&t, g, "physical", &err);
		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
		pp.predict_only = 1;
		CHECK_INT(topo_plan_new(&p, t, &pp, &err), 0);
		topo_error_clear(&err);
		CHECK_INT(topo_plan_run(p, NULL, &rep, &err), TOPO_EARG);
		CHECK(strstr(err.text, "prediction only") != NULL, "%s",
		      err.text);
		CHECK_INT(topo_plan_buffer_bytes(p), 0);
		topo_plan_free(p);
		topo_tree_free(t);
		topo_group_free(g);
	}
	topo_machine_free(mach);
}

static void test_costs(void)
{
	struct topo_costs c;
	topo_error err;
	const char *cls, *key;
	double v;
	size_t n = 0;

	CHECK_INT(topo_costs_init(&c, sizeof(c)), 0);
	CHECK(c.net.L == 2500 && c.net.o == 1500 && c.net.g == 1000 &&
		  c.net.G == 6,
	      "net defaults are LogGOPSim's");
	CHECK_INT(topo_costs_set(&c, "net.L=1234.5", &err), 0);
	CHECK(c.net.L == 1234.5, "net.L %g", c.net.L);
	CHECK_INT(topo_costs_set(&c, "reduce.double=0.75", &err), 0);
	CHECK(c.reduce[TOPO_DOUBLE] == 0.75, "reduce.double");
	topo_error_clear(&err);
	CHECK_INT(topo_costs_set(&c, "shm.hop=1", &err), TOPO_EARG);
	CHECK_STR(err.text,
		  "unknown cost \"shm.hop\" (valid in shm: L, o, g, G)");
	topo_error_clear(&err);
	CHECK_INT(topo_costs_set(&c, "gpu.L=1", &err), TOPO_EARG);
	CHECK_STR(err.text,
		  "unknown cost class \"gpu\" (valid: shm, net, reduce)");
	topo_error_clear(&err);
	CHECK_INT(topo_costs_set(&c, "net.L=0x10", &err), TOPO_EARG);
	topo_error_clear(&err);
	CHECK_INT(topo_costs_set(&c, "net.L=-1", &err), TOPO_EARG);
	topo_error_clear(&err);
	CHECK_INT(topo_costs_set(&c, "net.L", &err), TOPO_EARG);
	topo_error_clear(&err);
	CHECK_INT(topo_costs_set(&c, "net.G=nan", &err), TOPO_EARG);
	CHECK(c.net.L == 1234.5, "a refused assignment changed nothing");
	while (topo_costs_key(&c, n, &cls, &key, &v))
		n++;
	CHECK_INT(n, 9 + TOPO_TYPE_COUNT);
	CHECK(topo_costs_key(&c, 4, &cls, &key, &v) && strcmp(cls, "net") == 0 &&
		  strcmp(key, "L") == 0 && v == 1234.5,
	      "key 4 is net.L");

	/* From a machine description, into a compile output and back. */
	{
		const char *json =
		    "{\"nodes\": 2, \"tasks_per_node\": 1, \"network\": "
		    "{\"type\": \"kary\", \"fanout\": 2}, \"costs\": {\"net\": "
		    "{\"L\": 700, \"hop\": 20, \"x-note\": 1}, \"reduce\": "
		    "{\"float\": 0.125}, \"x-by\": \"me\"}}";
		topo_machine *m = NULL;
		struct topo_costs mc;

		topo_error_clear(&err);
		CHECK_INT(topo_machine_load_string(&m, json, strlen(json), NULL,
						   &err),
			  0);
		topo_costs_init(&mc, sizeof(mc));
		if (m != NULL) {
			CHECK_INT(topo_machine_costs(m, &mc, &err), 0);
			CHECK(mc.net.L == 700 && mc.net.hop == 20 &&
				  mc.net.o == 1500 &&
				  mc.reduce[TOPO_FLOAT] == 0.125,
			      "the machine's costs over the defaults");
			CHECK(m->costs_given != 0, "given keys recorded");
		}
		topo_machine_free(m);
	}
}

/* Every allocation of a prediction fails once: TOPO_ENOMEM, no result,
 * nothing leaked (the sanitizer builds). */
static void test_enomem(void)
{
	static const int32_t uneven[] = {3, 1, 4, 2};
	int32_t par[4] = {-1, 0, 0, 1};
	topo_machine *mach = NULL;
	topo_group *g = NULL;
	topo_tree *t = NULL;
	topo_plan *p = NULL;
	struct topo_plan_params pp;
	topo_error err;
	long k;

	topo_error_clear(&err);
	topo__machine_build(&mach, "u", 4, uneven, 2, "tree", par, &err);
	topo_group_new(&g, mach, "world", "all", &err);
	topo_tree_new(&t, g, "hierarchical", &err);
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
	pp.bytes = 64;
	CHECK_INT(topo_plan_new(&p, t, &pp, &err), 0);
	for (k = 0; p != NULL && k < 200; k++) {
		topo_prediction *r = (topo_prediction *)1;
		int rc;

		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo_plan_predict(p, NULL, &r, &err);
		topo__alloc_fail_after(-1);
		if (rc == 0) {
			topo_prediction_free(r);
			break;
		}
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK(r == NULL, "failure %ld left a prediction", k);
		CHECK(strstr(err.text, "out of memory") != NULL, "%s",
		      err.text);
	}
	CHECK(k > 10 && k < 200, "succeeded after %ld failures", k);
	topo_plan_free(p);
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(mach);
}

static void test_timeout(void)
{
	topo_machine *mach = machine_net(4096, 16, 1, "kary", NULL);
	topo_group *g = NULL;
	topo_tree *t = NULL;
	topo_plan *p = NULL;
	topo_prediction *r = NULL;
	struct topo_plan_params pp;
	struct topo_predict_params q;
	topo_error err;

	topo_error_clear(&err);
	topo_group_new(&g, mach, "world", "all", &err);
	topo_tree_new(&t, g, "physical", &err);
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
	pp.predict_only = 1;
	pp.bytes = 1 << 20;
	pp.segment = 1024;
	CHECK_INT(topo_plan_new(&p, t, &pp, &err), 0);
	topo_predict_params_init(&q, sizeof(q));
	q.timeout = 0.01;
	if (p != NULL) {
		CHECK_INT(topo_plan_predict(p, &q, &r, &err), TOPO_ETIMEDOUT);
		CHECK(strstr(err.text, "did not finish within 0.01 s "
				       "(predicting: ") != NULL,
		      "%s", err.text);
		CHECK(r == NULL, "a prediction after a timeout");
	}
	topo_prediction_free(r);
	topo_plan_free(p);
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(mach);
}

/* The simulation's shortcuts (a dissemination's member-at-a-time order,
 * ready sends queued together) change nothing: every result is the same
 * as in plain time order, over random machines, every operation and
 * algorithm, trees, sizes and segments. */
static void same_prediction(const topo_prediction *a, const topo_prediction *b,
			    int32_t n, const char *what)
{
	bool same = topo_prediction_seconds(a) == topo_prediction_seconds(b) &&
		    topo_prediction_last(a) == topo_prediction_last(b) &&
		    topo_prediction_path_length(a) ==
			topo_prediction_path_length(b);

	for (int32_t r = 0; same && r < n; r++)
		same = topo_prediction_finish(a, r) == topo_prediction_finish(b, r);
	for (int64_t i = 0; same && i < topo_prediction_path_length(a); i++) {
		const struct topo_path_step *x = topo_prediction_path_step(a, i);
		const struct topo_path_step *y = topo_prediction_path_step(b, i);

		same = strcmp(x->op, y->op) == 0 && x->src == y->src &&
		       x->dst == y->dst && x->start == y->start &&
		       x->end == y->end && strcmp(x->after, y->after) == 0;
	}
	CHECK(same, "%s: %.9g s (last %d) against %.9g s (last %d)", what,
	      topo_prediction_seconds(a), topo_prediction_last(a),
	      topo_prediction_seconds(b), topo_prediction_last(b));
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* Quantiles by the nearest rank, against a sorted copy. */
static void check_quantiles(const topo_prediction *r, int32_t n,
			    const char *what)
{
	static const double q[] = {0, 0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 1};
	double got[9], *v = malloc((size_t)n * sizeof(*v));
	topo_error err;

	for (int32_t i = 0; i < n; i++)
		v[i] = topo_prediction_finish(r, i);
	qsort(v, (size_t)n, sizeof(*v), cmp_d);
	topo_error_clear(&err);
	CHECK_INT(topo_prediction_quantiles(r, q, 9, got, &err), 0);
	for (int i = 0; i < 9; i++) {
		double pos = ceil(q[i] * n);
		int32_t k = pos < 1 ? 0 : (int32_t)pos - 1;

		CHECK(got[i] == v[k < n ? k : n - 1],
		      "%s: quantile %g is %.9g, want %.9g", what, q[i], got[i],
		      v[k < n ? k : n - 1]);
	}
	free(v);
}

static void test_shortcuts(void)
{
	static const struct {
		enum topo_op op;
		const char *algo;
	} ops[] = {{TOPO_OP_BCAST, NULL},
		   {TOPO_OP_SCATTER, "tree"},
		   {TOPO_OP_SCATTER, "or-combine"},
		   {TOPO_OP_GATHER, "tree"},
		   {TOPO_OP_GATHER, "chunked"},
		   {TOPO_OP_REDUCE, "tree"},
		   {TOPO_OP_REDUCE, "hierarchical"},
		   {TOPO_OP_REDUCE, "direct"},
		   {TOPO_OP_ALLREDUCE, "tree"},
		   {TOPO_OP_ALLREDUCE, "hierarchical"},
		   {TOPO_OP_ALLREDUCE, "ring"},
		   {TOPO_OP_ALLREDUCE, "recursive-doubling"},
		   {TOPO_OP_ALLREDUCE, "rabenseifner"},
		   {TOPO_OP_ALLGATHER, "ring"},
		   {TOPO_OP_ALLGATHER, "tree"},
		   {TOPO_OP_ALLGATHER, "recursive-doubling"},
		   {TOPO_OP_ALLGATHER, "bruck"},
		   {TOPO_OP_REDUCE_SCATTER, "ring"},
		   {TOPO_OP_REDUCE_SCATTER, "tree"},
		   {TOPO_OP_REDUCE_SCATTER, "recursive-halving"},
		   {TOPO_OP_REDUCE_SCATTER, "direct"},
		   {TOPO_OP_ALLTOALL, "pairwise"},
		   {TOPO_OP_ALLTOALL, "bruck"},
		   {TOPO_OP_ALLTOALL, "direct"},
		   {TOPO_OP_BARRIER, "dissemination"},
		   {TOPO_OP_BARRIER, "tree"}};
	static const char *const trees[] = {"physical", "binomial", "chain",
					    "kary:3", "hierarchical"};
	static const size_t bytes[] = {8, 4096, 1 << 19};

	/* CHECK_QUICK (valgrind): 24 machines, ties in half. */
	for (int iter = 0; iter < (check_quick() ? 24 : 120); iter++) {
		int32_t nodes = (int32_t)check_rand_range(1, 9), tasks[9];
		int32_t par[9];
		topo_machine *mach = NULL;
		topo_error err;
		struct topo_costs c;

		for (int32_t i = 0; i < nodes; i++) {
			tasks[i] = (int32_t)check_rand_range(1, 4);
			par[i] = i == 0 ? -1 : (int32_t)check_rand_range(0, i - 1);
		}
		topo_error_clear(&err);
		topo__machine_build(&mach, "r", nodes, tasks,
				    (int32_t)check_rand_range(1, 2), "tree", par,
				    &err);
		topo_costs_init(&c, sizeof(c));
		/* Costs where ties happen (round numbers, o = g) and where
		 * they do not. */
		if (iter % 2 == 0) {
			c.net = (struct topo_loggp){1000, 500, 500, 1, 100};
			c.shm = (struct topo_loggp){100, 100, 100, 0, 0};
		}
		for (size_t oi = 0;
		     mach != NULL && oi < sizeof(ops) / sizeof(ops[0]); oi++) {
			const char *tree = trees[check_rand_range(0, 4)];
			size_t by = ops[oi].op == TOPO_OP_BARRIER
					? 0
					: bytes[check_rand_range(0, 2)];
			topo_prediction *r[4];
			char what[256];

			if ((ops[oi].op == TOPO_OP_REDUCE ||
			     ops[oi].op == TOPO_OP_ALLREDUCE) &&
			    strcmp(ops[oi].algo, "hierarchical") == 0)
				tree = "hierarchical";
			{
				int len = snprintf(
				    what, sizeof(what), "%s %s over %s, %zu B, "
				    "costs %d, tasks",
				    topo_op_name(ops[oi].op),
				    ops[oi].algo != NULL ? ops[oi].algo : "flood",
				    tree, by, iter % 2);

				for (int32_t i = 0; i < nodes; i++)
					len += snprintf(what + len,
							sizeof(what) - (size_t)len,
							" %d/%d", (int)tasks[i],
							(int)par[i]);
				snprintf(what + len, sizeof(what) - (size_t)len,
					 " E %d", (int)mach->eps_per_task);
			}
			for (int mode = 0; mode < 4; mode++) {
				topo__tune.predict.no_dissemination = mode & 1;
				topo__tune.predict.no_batch = mode & 2;
				r[mode] = predict(mach, tree, ops[oi].op,
						  ops[oi].algo, by, &c, true,
						  NULL, NULL);
			}
			topo__tune.predict.no_dissemination = false;
			topo__tune.predict.no_batch = false;
			for (int mode = 1; mode < 4; mode++)
				if (r[0] != NULL && r[mode] != NULL)
					same_prediction(r[mode], r[0],
							mach->endpoints, what);
			if (r[0] != NULL) {
				check_path(r[0], what);
				check_quantiles(r[0], mach->endpoints, what);
			}
			for (int mode = 0; mode < 4; mode++)
				topo_prediction_free(r[mode]);
		}
		topo_machine_free(mach);
	}
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_predict", 1010);
	CHECK_RUN(bcast_forms, test_bcast_forms());
	CHECK_RUN(reduce_gather_forms, test_reduce_gather_forms());
	CHECK_RUN(edges, test_edges());
	CHECK_RUN(lean_same, test_lean_same());
	CHECK_RUN(shortcuts, test_shortcuts());
	/* Again with every array of trees, plans and predictions populated
	 * in the background (alloc.c), as only machines of millions of
	 * members have them otherwise: the same closed forms, and the same
	 * predictions in every mode. */
	{
		size_t was = topo__tune.populate_min;

		topo__tune.populate_min = 1;
		CHECK_RUN(bcast_forms, test_bcast_forms());
		CHECK_RUN(lean_same, test_lean_same());
		CHECK_RUN(shortcuts, test_shortcuts());
		topo__tune.populate_min = was;
	}
	CHECK_RUN(costs, test_costs());
	CHECK_RUN(enomem, test_enomem());
	CHECK_RUN(timeout, test_timeout());
	return check_done("test_predict");
}
