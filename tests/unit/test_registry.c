/*
 * test_registry.c - the algorithm registry as topo.h exports it
 * (topo_algorithm_count, _name, _flags, topo_op_default_tree): its
 * answers out of range, and that each flag says what planning does.
 */
#include "planfix.h"

/* Every operation has algorithms, one default, names unique within it,
 * and nothing past its last. */
static void test_lists(void)
{
	size_t total = 0;

	for (int op = 0; op < TOPO_OP_COUNT; op++) {
		size_t n = topo_algorithm_count(op);
		int defaults = 0, one_node = 0;

		CHECK(n > 0, "%s has no algorithm", topo_op_name(op));
		total += n;
		for (size_t i = 0; i < n; i++) {
			const char *name = topo_algorithm_name(op, i);
			unsigned f = topo_algorithm_flags(op, i);

			CHECK(name != NULL && *name != '\0', "%s %zu: no name",
			      topo_op_name(op), i);
			if (name == NULL)
				continue;
			defaults += (f & TOPO_ALG_DEFAULT) != 0;
			one_node += (f & TOPO_ALG_ONE_NODE) != 0;
			CHECK((f & ~0x3fu) == 0, "%s %s: unknown flags %#x",
			      topo_op_name(op), name, f);
			for (size_t k = 0; k < i; k++)
				CHECK(strcmp(topo_algorithm_name(op, k),
					     name) != 0,
				      "%s %s listed twice", topo_op_name(op),
				      name);
		}
		CHECK_INT(defaults, 1);
		CHECK(one_node <= 1, "%s: %d one-node defaults",
		      topo_op_name(op), one_node);
		CHECK(topo_algorithm_name(op, n) == NULL, "%s: a name past %zu",
		      topo_op_name(op), n);
		CHECK_INT(topo_algorithm_flags(op, n), 0);
		CHECK(topo_algorithm_name(op, (size_t)-1) == NULL,
		      "%s: a name at SIZE_MAX", topo_op_name(op));
	}
	/* (a new algorithm adds to these, and needs no change here) */
	CHECK(total >= 28, "%zu algorithms in all", total);
	CHECK_STR(topo_algorithm_name(TOPO_OP_BCAST, 0), "flood");
	CHECK_STR(topo_algorithm_name(TOPO_OP_ALLREDUCE, 4), "rabenseifner");
	CHECK_INT(topo_algorithm_flags(TOPO_OP_GATHER, 0),
		  TOPO_ALG_DEFAULT | TOPO_ALG_TREE | TOPO_ALG_CHUNK);
}

/* An operation out of range has nothing. */
static void test_out_of_range(void)
{
	enum topo_op bad[] = {TOPO_OP_COUNT, (enum topo_op)-1,
			      (enum topo_op)1000};

	for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
		CHECK_INT(topo_algorithm_count(bad[k]), 0);
		CHECK(topo_algorithm_name(bad[k], 0) == NULL, "op %d: a name",
		      (int)bad[k]);
		CHECK_INT(topo_algorithm_flags(bad[k], 0), 0);
		CHECK(topo_op_default_tree(bad[k]) == NULL,
		      "op %d: a default tree", (int)bad[k]);
	}
}

static void test_default_tree(void)
{
	for (int op = 0; op < TOPO_OP_COUNT; op++)
		CHECK_STR(topo_op_default_tree(op),
			  op == TOPO_OP_REDUCE || op == TOPO_OP_ALLREDUCE
			      ? "hierarchical"
			      : "physical");
}

/* The algorithm planned when none is named: nodes "2, ..." spans two
 * nodes, "1, ..." one. */
static void check_default(enum topo_op op, const char *nodes, unsigned flag)
{
	struct fixture f;
	const char *want = NULL;

	for (size_t i = 0; i < topo_algorithm_count(op); i++)
		if (topo_algorithm_flags(op, i) & flag)
			want = topo_algorithm_name(op, i);
	for (size_t i = 0; want == NULL && i < topo_algorithm_count(op); i++)
		if (topo_algorithm_flags(op, i) & TOPO_ALG_DEFAULT)
			want = topo_algorithm_name(op, i);
	if (fixture_new(&f, nodes, op, NULL, 64, 0) == 0)
		CHECK_STR(topo_plan_algorithm(f.p), want);
	fixture_free(&f);
}

/* A plan over tree shape of the machine of nodes: 0, or its error. */
static int plan_over(const char *nodes, const char *shape, enum topo_op op,
		     const char *alg, size_t chunk, int64_t *messages)
{
	struct topo_plan_params pp;
	topo_machine *m = fixture_machine(nodes);
	topo_group *g = NULL;
	topo_tree *t = NULL;
	topo_plan *p = NULL;
	topo_error err;
	int rc;

	topo_error_clear(&err);
	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = alg;
	pp.bytes = op == TOPO_OP_BARRIER ? 0 : 48;
	pp.chunk = chunk;
	rc = topo_group_new(&g, m, "world", "all", &err);
	if (rc == 0)
		rc = topo_tree_new(&t, g, shape, &err);
	if (rc == 0)
		rc = topo_plan_new(&p, t, &pp, &err);
	if (rc == 0 && messages != NULL)
		*messages = topo_plan_messages(p);
	topo_plan_free(p);
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
	return rc;
}

/* Each algorithm plans under its name over the default tree, and its
 * flags say what planning does with other trees and a chunk size. */
static void test_flags_hold(void)
{
	const char *nodes = "3, \"tasks_per_node\": 2";

	for (int op = 0; op < TOPO_OP_COUNT; op++) {
		for (size_t i = 0; i < topo_algorithm_count(op); i++) {
			const char *a = topo_algorithm_name(op, i);
			unsigned f = topo_algorithm_flags(op, i);
			int64_t m1 = -1, m2 = -2;
			struct fixture fx;

			if (fixture_new(&fx, nodes, op, a, 48, 0) == 0)
				CHECK_STR(topo_plan_algorithm(fx.p), a);
			fixture_free(&fx);
			CHECK_INT(plan_over(nodes, "physical", op, a, 0, NULL),
				  (f & TOPO_ALG_HIERARCHICAL) ? TOPO_EARG : 0);
			CHECK_INT(plan_over(nodes, topo_op_default_tree(op), op,
					    a, 8, NULL),
				  (f & TOPO_ALG_CHUNK) ? 0 : TOPO_EARG);
			if (f & TOPO_ALG_TREE)
				continue;
			/* without TREE: the same messages over any tree */
			plan_over(nodes, "chain", op, a, 0, &m1);
			plan_over(nodes, "binomial", op, a, 0, &m2);
			CHECK(m1 == m2 && m1 > 0,
			      "%s %s: %" PRId64 " messages over a chain, "
			      "%" PRId64 " over a binomial tree",
			      topo_op_name(op), a, m1, m2);
		}
		check_default(op, "3, \"tasks_per_node\": 2", 0);
		check_default(op, "1, \"tasks_per_node\": 4",
			      TOPO_ALG_ONE_NODE);
	}
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	CHECK_RUN(lists, test_lists());
	CHECK_RUN(out_of_range, test_out_of_range());
	CHECK_RUN(default_tree, test_default_tree());
	CHECK_RUN(flags_hold, test_flags_hold());
	return check_done("test_registry");
}
