/*
 * test_allgather.c - allgather "tree", "ring", "recursive-doubling" and
 * "bruck" (libtopo/coll/allgather/).
 *
 * Every algorithm over groups of 1 to 16 members (powers of two and not),
 * uneven machines, strided and reversed groups, every tree shape for
 * "tree", blocks of 1, 3 and 1000 bytes (and one large): each plan is
 * checked for its structure (exact transport message counts, local steps
 * and only they without a receipt slot, slots expecting exactly the
 * transport messages, no race: two accesses to the same bytes, one a
 * write, are ordered by the DAG) and run by topo_plan_run with 2 and 4
 * threads, 2 iterations, which must verify.  Then: corrupted plans (a
 * message's length 0, its destination offset moved) fail and name the
 * member; every allocation failure is TOPO_ENOMEM; a root is refused;
 * predict-only plans build the same messages and predict.
 */
#define TOPO_INTERNAL
#include "algocheck.h"

static const char *label; /* what is being checked, for messages */

/* ---------------------------------------------------------------------- */
/* Plans and runs */

static topo_plan *plan(const topo_tree *t, const char *algo, size_t bytes,
		       int predict_only, int *rc, topo_error *err)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_ALLGATHER);
	pp.algorithm = algo;
	pp.bytes = bytes;
	pp.predict_only = predict_only;
	topo_error_clear(err);
	*rc = topo_plan_new(&p, t, &pp, err);
	return p;
}

/* Runs p (algocheck.h's run_checked): whether it verified; want_ep >= 0:
 * it must not, and some error must name that endpoint. */
static int run(const topo_plan *p, int threads, int32_t want_ep)
{
	return run_checked(label, p, threads, want_ep, NULL);
}

/* Transport messages the algorithm fixes for n members. */
static int64_t want_transport(const char *algo, int32_t n)
{
	int32_t P = 1, K = 0;

	if (strcmp(algo, "ring") == 0)
		return (int64_t)n * (n - 1);
	if (strcmp(algo, "bruck") == 0)
		return (int64_t)n * log2_ceil(n);
	if (strcmp(algo, "tree") == 0)
		return 2 * (int64_t)(n - 1);
	while (P <= n / 2) {
		P *= 2;
		K++;
	}
	return (int64_t)P * K + 2 * (int64_t)(n - P);
}

/* A corrupted message must fail the run at its destination. */
static void check_corrupt(topo_plan *p)
{
	int64_t i = last_recv_msg(p), size;
	struct topo__msg save;
	int32_t ep;

	if (i < 0)
		return;
	save = p->msg[i];
	ep = p->t->g->members[save.dst];
	p->msg[i].len = 0;
	run(p, 2, ep);
	p->msg[i] = save;
	size = topo__bufsize(p, save.dbuf, save.dst);
	if (save.doff + save.len + (int64_t)p->params.bytes <= size)
		p->msg[i].doff += (int64_t)p->params.bytes;
	else if (save.doff >= (int64_t)p->params.bytes)
		p->msg[i].doff -= (int64_t)p->params.bytes;
	if (p->msg[i].doff != save.doff)
		run(p, 4, ep);
	p->msg[i] = save;
	CHECK(run(p, 2, -1), "%s: restored plan fails", label);
}

static void check_one(const topo_tree *t, const char *algo, size_t bytes,
		      int corrupt)
{
	topo_plan *p, *q;
	topo_prediction *pr = NULL;
	topo_error err;
	int rc;

	p = plan(t, algo, bytes, 0, &rc, &err);
	CHECK(rc == 0 && p != NULL, "%s: plan: %s", label, err.text);
	if (p == NULL)
		return;
	check_counts(label, p, want_transport(algo, p->n));
	CHECK(run(p, 2, -1), "%s: not verified (2 threads)", label);
	CHECK(run(p, 4, -1), "%s: not verified (4 threads)", label);
	if (corrupt && p->n > 1)
		check_corrupt(p);
	/* The lean plan: the same messages, and a prediction. */
	q = plan(t, algo, bytes, 1, &rc, &err);
	CHECK(rc == 0 && q != NULL, "%s: predict-only plan: %s", label,
	      err.text);
	if (q != NULL) {
		CHECK_INT(q->nmsg, p->nmsg);
		CHECK_INT(topo_plan_messages(q), topo_plan_messages(p));
		rc = topo_plan_predict(q, NULL, &pr, &err);
		CHECK(rc == 0, "%s: predict: %s", label, err.text);
		topo_prediction_free(pr);
		topo_plan_free(q);
	}
	topo_plan_free(p);
}

static const char *const algos[] = {"tree", "ring", "recursive-doubling",
				    "bruck"};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))
static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:3"};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* Every algorithm over g (every shape for "tree"), for each block size. */
static void check_group(const topo_group *g, const char *gname)
{
	static const size_t sizes[] = {1, 3, 1000};
	char buf[200];

	for (size_t k = 0; k < NSHAPES; k++) {
		topo_tree *t = tree(g, shapes[k]);

		for (size_t a = 0; a < NALGOS; a++) {
			/* The tree's shape matters to "tree" only. */
			if (a > 0 && k != (size_t)g->size % NSHAPES)
				continue;
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]);
			     s++) {
				snprintf(buf, sizeof(buf),
					 "%s, %s, %s, %zu bytes", gname,
					 shapes[k], algos[a], sizes[s]);
				label = buf;
				check_one(t, algos[a], sizes[s], s == 1);
			}
		}
		topo_tree_free(t);
	}
}

/* ---------------------------------------------------------------------- */
/* Failure paths */

static void test_nomem(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *t = tree(g, "hierarchical");

	for (size_t a = 0; a < NALGOS; a++) {
		int rc = -1, other = 0;
		long k;

		for (k = 0; k < 100000 && rc != 0; k++) {
			topo_error err;
			topo_plan *p;

			topo__alloc_fail_after(k);
			p = plan(t, algos[a], 8, 0, &rc, &err);
			if (rc != 0 &&
			    (rc != TOPO_ENOMEM || err.code != rc || p != NULL))
				other++;
			topo_plan_free(p);
		}
		topo__alloc_fail_after(-1);
		CHECK(rc == 0 && other == 0,
		      "allgather %s: %d failures other than TOPO_ENOMEM, last "
		      "%d",
		      algos[a], other, rc);
		CHECK(k > 3, "allgather %s: only %ld allocations", algos[a], k);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

static void test_refusals(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *t = tree(g, "binomial");

	for (size_t a = 0; a < NALGOS; a++) {
		struct topo_plan_params pp;
		topo_plan *p = NULL;
		topo_error err;

		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_ALLGATHER);
		pp.algorithm = algos[a];
		pp.root = g->members[1];
		topo_error_clear(&err);
		CHECK_INT(topo_plan_new(&p, t, &pp, &err), TOPO_EARG);
		CHECK(p == NULL && strstr(err.text, "no root") != NULL,
		      "allgather %s with a root: \"%s\"", algos[a], err.text);
		topo_plan_free(p);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

/* A large block over the tree's packed gather and every algorithm. */
static void test_large(const topo_machine *m)
{
	topo_group *g = group(m, "ep 0::2");
	topo_tree *t = tree(g, "hierarchical");

	for (size_t a = 0; a < NALGOS; a++) {
		char buf[100];

		snprintf(buf, sizeof(buf), "large, %s", algos[a]);
		label = buf;
		check_one(t, algos[a], 40000, 0);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	/* 16 endpoints on 4 nodes; uneven machines: 3, 1, 4, 2 tasks, and
	 * 2, 5, 1, 3, 2 tasks of 2 endpoints. */
	const int32_t t16[4] = {4, 4, 4, 4}, p16[4] = {-1, 0, 0, 1};
	const int32_t ta[4] = {3, 1, 4, 2}, pa[4] = {-1, 0, 0, 1};
	const int32_t tb[5] = {2, 5, 1, 3, 2}, pb[5] = {2, -1, 1, 1, 3};
	static const int32_t sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 13, 16};
	static const char *const uneven[] = {"all", "ep 0::2", "cols 9:0:-3",
					     "rows 1 + node 0"};
	topo_machine *m16 = machine(4, t16, 1, p16);
	topo_machine *ms[2] = {machine(4, ta, 1, pa), machine(5, tb, 2, pb)};

	check_args(argc, argv);
	if (check_want("groups")) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			char spec[40];
			topo_group *g;

			snprintf(spec, sizeof(spec), "ep 0:%d",
				 (int)sizes[i] - 1);
			g = group(m16, spec);
			check_group(g, spec);
			topo_group_free(g);
		}
	}
	if (check_want("uneven_groups")) {
		for (int i = 0; i < 2; i++)
			for (size_t j = 0;
			     j < sizeof(uneven) / sizeof(uneven[0]); j++) {
				char name[80];
				topo_group *g;

				if (topo_spec_check(ms[i], uneven[j], NULL) !=
				    0)
					continue;
				snprintf(name, sizeof(name),
					 "machine %d \"%s\"", i, uneven[j]);
				g = group(ms[i], uneven[j]);
				check_group(g, name);
				topo_group_free(g);
			}
	}
	CHECK_RUN(large, test_large(ms[1]));
	CHECK_RUN(nomem, test_nomem(ms[1]));
	CHECK_RUN(refusals, test_refusals(ms[0]));

	topo_machine_free(m16);
	topo_machine_free(ms[0]);
	topo_machine_free(ms[1]);
	return check_done("test_allgather");
}
