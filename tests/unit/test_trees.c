/*
 * test_trees.c - tree shapes, route tables and the in-memory compile.
 *
 * Hand-computed cases first (exact parents for every shape on small uneven
 * machines and awkward groups), then random machines and member subsets
 * checked against the independent reference of treecheck.h, then the
 * failure paths: bad shape names, parent arrays that are not trees, route
 * requests from non-neighbours, compile argument errors and allocation
 * failures.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include "check.h"
#include "treecheck.h"

static topo_machine *machine(int32_t nodes, const int32_t *tasks, int32_t eps,
			     const char *type, const int32_t *parent)
{
	topo_machine *m = NULL;
	topo_error err;

	topo_error_clear(&err);
	if (topo__machine_build(&m, "test", nodes, tasks, eps, type, parent,
				&err) != 0) {
		fprintf(stderr, "machine_build: %s\n", err.text);
		exit(2);
	}
	return m;
}

/* A group of the given endpoint ids (ascending). */
static topo_group *group_of(const topo_machine *m, const int32_t *eps,
			    int32_t n)
{
	int32_t *mem = topo__mallocarray((size_t)n, sizeof(int32_t));
	topo_group *g = NULL;

	memcpy(mem, eps, (size_t)n * sizeof(int32_t));
	if (topo__group_from_members(&g, m, "g", "hand", mem, n) != 0)
		exit(2);
	return g;
}

static topo_group *world_of(const topo_machine *m)
{
	int32_t n = m->endpoints;
	int32_t *mem = topo__mallocarray((size_t)n, sizeof(int32_t));
	topo_group *g = NULL;

	for (int32_t i = 0; i < n; i++)
		mem[i] = i;
	if (topo__group_from_members(&g, m, "world", "all", mem, n) != 0)
		exit(2);
	return g;
}

/* Builds shape over g, checks every member's parent endpoint against
 * want[] (aligned with the members) and runs the full treecheck. */
static void expect(const topo_group *g, const char *shape, const int32_t *want,
		   int line)
{
	topo_tree *t = NULL;
	topo_error err;
	int32_t bad = -1;

	topo_error_clear(&err);
	CHECK(topo_tree_new(&t, g, shape, &err) == 0, "line %d: %s: %s", line,
	      shape, err.text);
	if (t == NULL)
		return;
	for (int32_t r = 0; r < g->size && bad < 0; r++) {
		int32_t p = t->parent[r];

		if ((p < 0 ? -1 : g->members[p]) != want[r])
			bad = r;
	}
	CHECK(bad < 0, "line %d: %s: member %d has parent %d, want %d", line,
	      shape, bad < 0 ? 0 : (int)g->members[bad],
	      bad < 0
		  ? 0
		  : (t->parent[bad] < 0 ? -1 : (int)g->members[t->parent[bad]]),
	      bad < 0 ? 0 : (int)want[bad]);
	CHECK_STR(topo_tree_name(t), shape);
	CHECK(topo_tree_group(t) == g, "line %d", line);
	treecheck(t, 1);
	topo_tree_free(t);
}

#define EXPECT(g, shape, ...)                                                  \
	expect(g, shape, (const int32_t[]){__VA_ARGS__}, __LINE__)

/*
 * Machine A (seed 001's point: uneven): tasks [2, 4, 1, 3], E = 1, network
 * node 0 <- 1, 2; 1 <- 3.  Endpoints: node 0: 0 1; node 1: 2..5; node 2: 6;
 * node 3: 7 8 9.
 */
static void test_uneven(void)
{
	const int32_t tasks[] = {2, 4, 1, 3}, net[] = {-1, 0, 0, 1};
	topo_machine *m = machine(4, tasks, 1, "tree", net);
	topo_group *g = world_of(m);
	topo_tree *t = NULL;
	const int32_t *c;
	int32_t out[16], from;
	const int32_t *to;
	int64_t shm, net_edges;

	EXPECT(g, "physical", -1, 0, 0, 2, 2, 2, 0, 2, 7, 7);
	/* Node 1 is identified (4 members): root 2, children 3 4 5; the
	 * other local roots 0, 6, 7 go to 3, 4, 5 in turn. */
	EXPECT(g, "hierarchical", 3, 0, -1, 2, 2, 2, 4, 5, 7, 7);
	EXPECT(g, "binomial", -1, 0, 0, 2, 0, 4, 4, 6, 0, 8);
	EXPECT(g, "kary:3", -1, 0, 0, 0, 1, 1, 1, 2, 2, 2);
	EXPECT(g, "kary:1", -1, 0, 1, 2, 3, 4, 5, 6, 7, 8);
	EXPECT(g, "chain", -1, 0, 1, 2, 3, 4, 5, 6, 7, 8);
	EXPECT(g, "kary:2147483647", -1, 0, 0, 0, 0, 0, 0, 0, 0, 0);

	/* Accessors and routes on the physical tree, by hand. */
	CHECK_INT(topo_tree_new(&t, g, "physical", NULL), 0);
	if (t == NULL)
		goto out;
	CHECK_INT(topo_tree_root(t), 0);
	CHECK_INT(topo_tree_depth(t), 3);
	topo_tree_edge_counts(t, &shm, &net_edges);
	CHECK_INT(shm, 6);
	CHECK_INT(net_edges, 3);
	CHECK_INT(topo_tree_edge(t, 0), TOPO_EDGE_ROOT);
	CHECK_INT(topo_tree_edge(t, 1), TOPO_EDGE_SHM);
	CHECK_INT(topo_tree_edge(t, 7), TOPO_EDGE_NET);
	CHECK_INT(topo_tree_children(t, 2, &c), 4);
	CHECK(c[0] == 3 && c[1] == 4 && c[2] == 5 && c[3] == 7,
	      "children of 2: %d %d %d %d", c[0], c[1], c[2], c[3]);
	CHECK_INT(topo_tree_children(t, 9, &c), 0);
	CHECK_INT(topo_tree_degree(t, 2), 5);
	CHECK_INT(topo_tree_degree(t, 0), 3);
	CHECK_INT(topo_tree_degree(t, 9), 1);
	CHECK_INT(topo_tree_route(t, 2, -1, out), 5);
	CHECK(out[0] == 0 && out[1] == 3 && out[2] == 4 && out[3] == 5 &&
		  out[4] == 7,
	      "2 from origin: %d %d %d %d %d", out[0], out[1], out[2], out[3],
	      out[4]);
	CHECK_INT(topo_tree_route(t, 2, 0, out), 4);
	CHECK(out[0] == 3 && out[3] == 7, "2 from 0: %d .. %d", out[0], out[3]);
	CHECK_INT(topo_tree_route(t, 2, 4, out), 4);
	CHECK(out[0] == 0 && out[1] == 3 && out[2] == 5 && out[3] == 7,
	      "2 from 4: %d %d %d %d", out[0], out[1], out[2], out[3]);
	CHECK_INT(topo_tree_route(t, 0, 6, out), 2);
	CHECK(out[0] == 1 && out[1] == 2, "0 from 6: %d %d", out[0], out[1]);
	CHECK_INT(topo_tree_route(t, 9, 7, out), 0);
	CHECK_INT(topo_tree_route(t, 9, -1, out), 1);
	CHECK_INT(out[0], 7);
	/* Not neighbours: 8 is 7's child, not 2's; 2 is not 0's child's
	 * child... and out-of-range ranks and members. */
	CHECK_INT(topo_tree_route(t, 2, 8, out), TOPO_EARG);
	CHECK_INT(topo_tree_route(t, 2, 10, out), TOPO_EARG);
	CHECK_INT(topo_tree_route(t, 2, -2, out), TOPO_EARG);
	CHECK_INT(topo_tree_route(t, 10, -1, out), TOPO_EARG);
	CHECK_INT(topo_tree_route(t, -1, -1, out), TOPO_EARG);
	/* Rows: origin, parent, children ascending; 3n - 2 in all. */
	CHECK_INT(topo_routes_rows(t, 0), 4);
	CHECK_INT(topo_routes_rows(t, 2), 6);
	CHECK_INT(topo_routes_row(t, 2, 1, &from, &to, out), 4);
	CHECK_INT(from, 0);
	CHECK_INT(topo_routes_row(t, 2, 5, &from, &to, out), 4);
	CHECK_INT(from, 7);
	CHECK(to[0] == 0 && to[1] == 3 && to[2] == 4 && to[3] == 5,
	      "2 row 5: %d %d %d %d", to[0], to[1], to[2], to[3]);
	CHECK_INT(topo_routes_row(t, 0, 1, &from, &to, out), 2);
	CHECK_INT(from, 1);
	CHECK_INT(topo_routes_row(t, 2, 6, &from, &to, out), TOPO_EARG);
	CHECK_INT(topo_routes_row(t, 2, -1, &from, &to, out), TOPO_EARG);
	{
		int64_t rows = 0;

		for (int32_t r = 0; r < 10; r++)
			rows += topo_routes_rows(t, r);
		CHECK_INT(rows, 3 * 10 - 2);
	}
out:
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
}

/*
 * Machine B: tasks [1, 3, 2, 1, 1, 2], E = 1, binary k-ary network from
 * node 0 (parents -1 0 0 1 1 2).  Endpoints: node 0: 0; node 1: 1 2 3;
 * node 2: 4 5; node 3: 6; node 4: 7; node 5: 8 9.
 */
static void test_round_robin(void)
{
	const int32_t tasks[] = {1, 3, 2, 1, 1, 2};
	int32_t net[6];
	topo_machine *m;
	topo_group *g;

	topo__network_kary(net, 6, 2, 0);
	m = machine(6, tasks, 1, "kary", net);
	g = world_of(m);
	/* Node 1 identified: root 1, children 2 3; local roots 0 4 6 7 8
	 * are dealt to 2 3 2 3 2. */
	EXPECT(g, "hierarchical", 2, -1, 1, 1, 3, 4, 2, 3, 2, 8);
	EXPECT(g, "physical", -1, 0, 1, 1, 0, 4, 1, 1, 4, 8);
	topo_group_free(g);

	/* One member per node: the identified node (lowest id, ties) has a
	 * single member, so the other local roots are the root's children. */
	g = group_of(m, (const int32_t[]){0, 4, 6, 8}, 4);
	EXPECT(g, "hierarchical", -1, 0, 0, 0);
	EXPECT(g, "physical", -1, 0, 0, 4);
	EXPECT(g, "binomial", -1, 0, 0, 6);
	topo_group_free(g);
	g = group_of(m, (const int32_t[]){4, 6, 8}, 3);
	EXPECT(g, "hierarchical", -1, 4, 4);
	topo_group_free(g);

	/* Members avoid the physical root's node 0.  Member nodes 1 2 (depth
	 * 1) and 3 5 (depth 2): root node 1 (tie broken by id); node 2 has no
	 * member ancestor, so it hangs below the root node; node 5 below 2. */
	g = group_of(m, (const int32_t[]){2, 3, 5, 6, 9}, 5);
	EXPECT(g, "physical", -1, 2, 2, 2, 5);
	EXPECT(g, "hierarchical", -1, 2, 3, 3, 3);
	EXPECT(g, "chain", -1, 2, 3, 5, 6);
	EXPECT(g, "kary:2", -1, 2, 2, 3, 3);
	topo_group_free(g);

	/* A single member: every shape is the lone root. */
	g = group_of(m, (const int32_t[]){5}, 1);
	EXPECT(g, "physical", -1);
	EXPECT(g, "hierarchical", -1);
	EXPECT(g, "binomial", -1);
	EXPECT(g, "chain", -1);
	EXPECT(g, "kary:4", -1);
	topo_group_free(g);
	topo_machine_free(m);

	/* The same tasks with the physical root at node 3: k-ary positions
	 * 3 4 5 0 1 2, so parents 4 4 5 -1 3 3. */
	topo__network_kary(net, 6, 2, 3);
	CHECK(net[0] == 4 && net[1] == 4 && net[2] == 5 && net[3] == -1 &&
		  net[4] == 3 && net[5] == 3,
	      "kary root 3: %d %d %d %d %d %d", net[0], net[1], net[2], net[3],
	      net[4], net[5]);
	m = machine(6, tasks, 1, "kary", net);
	g = world_of(m);
	EXPECT(g, "physical", 7, 7, 1, 1, 8, 4, -1, 6, 6, 8);
	topo_group_free(g);
	topo_machine_free(m);
}

/* Machine C: one task per node, network 0 <- 1 <- 2 and 0 <- 3 <- 4. */
static void test_no_member_ancestor(void)
{
	const int32_t tasks[] = {1, 1, 1, 1, 1}, net[] = {-1, 0, 1, 0, 3};
	topo_machine *m = machine(5, tasks, 1, "tree", net);
	topo_group *g;

	/* Root node 3 (depth 1); node 2 (depth 2) has no member ancestor
	 * and hangs below the root node; node 4 below 3. */
	g = group_of(m, (const int32_t[]){2, 3, 4}, 3);
	EXPECT(g, "physical", 3, -1, 3);
	EXPECT(g, "hierarchical", -1, 2, 2);
	topo_group_free(g);
	/* Nodes 1 and 3 both at depth 1: the lower id is the root node. */
	g = group_of(m, (const int32_t[]){1, 3, 4}, 3);
	EXPECT(g, "physical", -1, 1, 3);
	topo_group_free(g);
	/* A deep member with only the root node above it. */
	g = group_of(m, (const int32_t[]){0, 2, 4}, 3);
	EXPECT(g, "physical", -1, 0, 0);
	topo_group_free(g);
	topo_machine_free(m);
}

/* Machine D: E = 2 (seed 003's endpoint table).  tasks [1, 2], network
 * 0 <- 1.  Endpoints: task 0 (node 0): 0 1; tasks 1, 2 (node 1): 2..5. */
static void test_endpoints(void)
{
	const int32_t tasks[] = {1, 2}, net[] = {-1, 0};
	topo_machine *m = machine(2, tasks, 2, "tree", net);
	topo_group *g;

	g = world_of(m);
	EXPECT(g, "physical", -1, 0, 0, 2, 2, 2);
	EXPECT(g, "hierarchical", 3, 0, -1, 2, 2, 2);
	topo_group_free(g);
	/* Row 1 of the table: 1 3 5. */
	g = group_of(m, (const int32_t[]){1, 3, 5}, 3);
	EXPECT(g, "physical", -1, 1, 3);
	EXPECT(g, "hierarchical", 5, -1, 3);
	topo_group_free(g);
	topo_machine_free(m);
}

static void test_shape_names(void)
{
	static const char *const good[] = {
	    "physical", "hierarchical", "binomial",	  "chain",
	    "kary:1",	"kary:16",	"kary:2147483647"};
	static const char *const bad[] = {"",
					  "Physical",
					  "physical ",
					  "kary",
					  "kary:",
					  "kary:0",
					  "kary:-1",
					  "kary:+3",
					  "kary: 3",
					  "kary:3x",
					  "kary:04",
					  "kary:2147483648",
					  "kary:99999999999999999999",
					  "kary:3:4",
					  "binomial:2"};
	const int32_t tasks[] = {1}, net[] = {-1};
	topo_machine *m = machine(1, tasks, 1, "tree", net);
	topo_group *g = world_of(m);
	topo_tree *t = (topo_tree *)&t;
	topo_error err;

	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		CHECK(topo_tree_shape_check(good[i], NULL) == 0, "%s", good[i]);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		topo_error_clear(&err);
		CHECK(topo_tree_shape_check(bad[i], &err) == TOPO_EARG &&
			  err.code == TOPO_EARG,
		      "\"%s\" accepted", bad[i]);
	}
	topo_error_clear(&err);
	CHECK_INT(topo_tree_shape_check("ring", &err), TOPO_EARG);
	CHECK_STR(err.text, "unknown tree shape \"ring\" (valid: physical, "
			    "hierarchical, binomial, chain, kary:K with K in "
			    "1..2147483647)");
	topo_error_clear(&err);
	CHECK_INT(topo_tree_shape_check("kary:0", &err), TOPO_EARG);
	CHECK_STR(err.text, "tree shape \"kary:0\": K must be an integer in "
			    "1..2147483647 written as plain digits");
	topo_error_clear(&err);
	CHECK_INT(topo_tree_shape_check(NULL, &err), TOPO_EARG);

	topo_error_clear(&err);
	CHECK_INT(topo_tree_new(&t, g, "kary:x", &err), TOPO_EARG);
	CHECK(t == NULL, "tree set on failure");
	CHECK_STR(err.text, "tree shape \"kary:x\": K must be an integer in "
			    "1..2147483647 written as plain digits");
	topo_error_clear(&err);
	CHECK_INT(topo_tree_new(&t, NULL, "chain", &err), TOPO_EARG);
	CHECK_STR(topo_edge_name(TOPO_EDGE_ROOT), "root");
	CHECK_STR(topo_edge_name(TOPO_EDGE_SHM), "shm");
	CHECK_STR(topo_edge_name(TOPO_EDGE_NET), "net");
	topo_tree_free(NULL);
	topo_group_free(g);
	topo_machine_free(m);
}

/* Parent arrays that are not spanning trees are refused, naming the
 * rank at fault (topo__network_check's meaning of *bad). */
static void test_from_parent(void)
{
	static const struct {
		int32_t parent[5];
		int32_t bad;
	} cases[] = {
	    {{-1, 0, -1, 0, 0}, 2}, /* second root */
	    {{1, 2, 0, 0, 0}, -1},  /* no root */
	    {{-1, 5, 0, 0, 0}, 1},  /* out of range */
	    {{-1, 0, -3, 0, 0}, 2}, /* negative, not -1 */
	    {{-1, 1, 0, 0, 0}, 1},  /* own parent */
	    {{-1, 2, 3, 1, 0}, 1},  /* cycle 1 -> 2 -> 3 -> 1 */
	    {{3, 0, -1, 4, 0}, 0},  /* cycle 0 -> 3 -> 4 -> 0 */
	};
	const int32_t tasks[] = {2, 3}, net[] = {-1, 0};
	topo_machine *m = machine(2, tasks, 1, "tree", net);
	topo_group *g = world_of(m);
	topo_tree *t;
	int32_t bad, *p;
	const int32_t *c;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = topo__mallocarray(5, sizeof(int32_t));
		memcpy(p, cases[i].parent, sizeof(cases[i].parent));
		t = (topo_tree *)&t;
		CHECK_INT(topo__tree_from_parent(&t, g, "x", p, &bad),
			  TOPO_EINVAL);
		CHECK(t == NULL, "case %zu: tree set", i);
		CHECK(bad == cases[i].bad, "case %zu: bad %d, want %d", i,
		      (int)bad, (int)cases[i].bad);
	}
	/* A hand-made tree (as a loader makes one): root 3, edges labelled
	 * from the machine (members 0 1 on node 0, 2 3 4 on node 1). */
	p = topo__mallocarray(5, sizeof(int32_t));
	memcpy(p, (const int32_t[]){2, 0, 3, -1, 3}, 5 * sizeof(int32_t));
	CHECK_INT(topo__tree_from_parent(&t, g, "mine", p, &bad), 0);
	CHECK_INT(topo_tree_root(t), 3);
	CHECK_INT(topo_tree_depth(t), 3);
	CHECK_STR(topo_tree_name(t), "mine");
	CHECK_INT(topo_tree_edge(t, 0), TOPO_EDGE_NET);
	CHECK_INT(topo_tree_edge(t, 1), TOPO_EDGE_SHM);
	CHECK_INT(topo_tree_edge(t, 2), TOPO_EDGE_SHM);
	CHECK_INT(topo_tree_edge(t, 3), TOPO_EDGE_ROOT);
	CHECK_INT(topo_tree_children(t, 3, &c), 2);
	CHECK(c[0] == 2 && c[1] == 4, "children of 3: %d %d", c[0], c[1]);

	/* An explicit table (as loaded from a file) is returned as it is,
	 * however wrong, and freed with the tree: member 3 (the root) has a
	 * row from child 4 to 0 1 2 and an empty origin row, none from its
	 * child 2; member 4 a row from -1 to 0; members 0, 1 and 2 none. */
	{
		const int32_t at[] = {3, 3, 4}, from_of[] = {4, -1, -1};
		const int64_t to_off[] = {0, 3, 3, 4};
		const int32_t to_all[] = {0, 1, 2, 0};
		struct topo__routes_in in = {3,	     at,   from_of, to_off,
					     to_all, 0,	   NULL,    NULL,
					     true};
		int32_t from = 9, scratch[4];
		const int32_t *to = NULL;

		CHECK_INT(topo__routes_x_build(t, &in), 0);
		CHECK_INT(topo_routes_rows(t, 0), 0);
		CHECK_INT(topo_routes_rows(t, 3), 2);
		CHECK_INT(topo_routes_rows(t, 4), 1);
		/* The rule's origins first (-1, then the children 2 and 4:
		 * 2 is missing), then any others. */
		CHECK_INT(topo_routes_row(t, 3, 0, &from, &to, scratch), 0);
		CHECK_INT(from, -1);
		CHECK_INT(topo_routes_row(t, 3, 1, &from, &to, scratch), 3);
		CHECK(from == 4 && to[0] == 0 && to[1] == 1 && to[2] == 2,
		      "row 3/1: from %d to %d %d %d", from, to[0], to[1],
		      to[2]);
		CHECK_INT(topo_routes_row(t, 4, 0, &from, &to, scratch), 1);
		CHECK_INT(to[0], 0);
		CHECK_INT(topo_routes_row(t, 0, 0, &from, &to, scratch),
			  TOPO_EARG);
		/* Departures: 0 lacks its 3 rule rows, 1 its 2, 2 its 3; 3
		 * replaces two and lacks one; 4 replaces its origin row and
		 * lacks the one from its parent 3. */
		CHECK_INT(topo_routes_departures(t, 0), 3);
		CHECK_INT(topo_routes_departures(t, 1), 2);
		CHECK_INT(topo_routes_departures(t, 2), 3);
		CHECK_INT(topo_routes_departures(t, 3), 3);
		CHECK_INT(topo_routes_departures(t, 4), 2);
		CHECK_INT(topo_routes_departures(t, -1), 13);
		/* topo_tree_route stays the tree's own rule. */
		CHECK_INT(topo_tree_route(t, 3, -1, scratch), 2);
	}
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
}

/* ------------------------------------------------------------ random */

static const char *const all_shapes[] = {"physical", "hierarchical", "binomial",
					 "chain",    "kary:1",	     "kary:2",
					 "kary:3",   "kary:4",	     "kary:5"};

static topo_machine *random_machine(void)
{
	int32_t tasks[64], parent[64], perm[64], dims[3], nodes, eps;
	int type = (int)check_rand_range(0, 2), uniform;
	const char *name = "tree";

	if (type == 2) {
		int nd = (int)check_rand_range(1, 3);

		nodes = 1;
		for (int i = 0; i < nd; i++) {
			dims[i] = (int32_t)check_rand_range(1, 4);
			nodes *= dims[i];
		}
		topo__network_torus(parent, dims, nd,
				    (int32_t)check_rand_range(0, nodes - 1));
		name = "torus";
	} else {
		nodes = (int32_t)check_rand_range(1, 40);
	}
	if (type == 1) {
		topo__network_kary(parent, nodes,
				   (int32_t)check_rand_range(1, 4),
				   (int32_t)check_rand_range(0, nodes - 1));
		name = "kary";
	} else if (type == 0) {
		/* A random tree: a random order, each node below a random
		 * earlier one. */
		for (int32_t i = 0; i < nodes; i++)
			perm[i] = i;
		for (int32_t i = nodes - 1; i > 0; i--) {
			int32_t j = (int32_t)check_rand_range(0, i),
				x = perm[i];

			perm[i] = perm[j];
			perm[j] = x;
		}
		parent[perm[0]] = -1;
		for (int32_t i = 1; i < nodes; i++)
			parent[perm[i]] = perm[check_rand_range(0, i - 1)];
	}
	uniform = check_rand_range(0, 3) == 0;
	for (int32_t i = 0; i < nodes; i++)
		tasks[i] = uniform ? (i == 0 ? (int32_t)check_rand_range(1, 5)
					     : tasks[0])
				   : (int32_t)check_rand_range(1, 5);
	eps = (int32_t)check_rand_range(1, 3);
	return machine(nodes, tasks, eps, name, parent);
}

static topo_group *random_group(const topo_machine *m)
{
	int32_t n = 0, total = m->endpoints;
	int32_t *mem = topo__mallocarray((size_t)total, sizeof(int32_t));
	long percent = (long[]){100, 70, 30, 5}[check_rand_range(0, 3)];
	topo_group *g = NULL;

	for (int32_t e = 0; e < total; e++)
		if (check_rand_range(1, 100) <= percent)
			mem[n++] = e;
	if (n == 0)
		mem[n++] = (int32_t)check_rand_range(0, total - 1);
	if (topo__group_from_members(&g, m, "random", "random", mem, n) != 0)
		exit(2);
	return g;
}

static void test_random(void)
{
	for (int round = 0; round < 300; round++) {
		topo_machine *m = random_machine();

		for (int k = 0; k < 3; k++) {
			topo_group *g = random_group(m);

			for (size_t s = 0;
			     s < sizeof(all_shapes) / sizeof(all_shapes[0]);
			     s++) {
				topo_tree *t = NULL;
				topo_error err;

				topo_error_clear(&err);
				CHECK(topo_tree_new(&t, g, all_shapes[s],
						    &err) == 0,
				      "%s: %s", all_shapes[s], err.text);
				if (t != NULL)
					treecheck(t, 1);
				topo_tree_free(t);
			}
			topo_group_free(g);
		}
		topo_machine_free(m);
	}
}

/* One node memo shared by many physical trees (as a compile shares it),
 * across the wrap of its stamps: every tree as a fresh memo builds it. */
static void test_shared_memo(void)
{
	long differ = 0, trees = 0;

	for (int round = 0; round < 100; round++) {
		topo_machine *m = random_machine();
		struct topo__node_memo memo;

		CHECK_INT(topo__node_memo_new(&memo, m), 0);
		/* Half the rounds start just before the stamps wrap. */
		if (round % 2)
			memo.stamp = UINT32_MAX - 5;
		for (int k = 0; k < 12; k++) {
			topo_group *g = random_group(m);
			int32_t *parent =
			    topo__mallocarray((size_t)g->size, sizeof(int32_t));
			topo_tree *fresh = NULL;
			topo_error err;

			topo__tree_physical(g, parent, &memo);
			topo_error_clear(&err);
			CHECK_INT(topo_tree_new(&fresh, g, "physical", &err), 0);
			if (fresh != NULL &&
			    memcmp(parent, topo_tree_parent(fresh),
				   (size_t)g->size * sizeof(int32_t)) != 0)
				differ++;
			trees++;
			topo_tree_free(fresh);
			topo__free(parent);
			topo_group_free(g);
		}
		CHECK(round % 2 == 0 || memo.stamp < 100,
		      "round %d: the stamps did not wrap (%u)", round,
		      (unsigned)memo.stamp);
		topo__node_memo_free(&memo);
		topo_machine_free(m);
	}
	CHECK(differ == 0, "%ld of %ld trees built with a shared memo differ",
	      differ, trees);
}

/* ------------------------------------------------------------ compile */

static void test_compile(void)
{
	const int32_t tasks[] = {2, 4, 1, 3}, net[] = {-1, 0, 0, 1};
	topo_machine *m = machine(4, tasks, 1, "tree", net);
	topo_compiled *c = (topo_compiled *)&c;
	const topo_group *g;
	topo_error err;
	int rc;

	topo__machine_add_group(m, "evens", "cols 0::2");
	topo__machine_add_group(m, "n1", "node 1");

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, NULL, 0, &err), 0);
	CHECK(c != NULL && topo_compiled_machine(c) == m, "machine");
	CHECK_INT(topo_compiled_group_count(c), 3);
	CHECK_STR(topo_group_name(topo_compiled_group(c, 0)), "world");
	CHECK_STR(topo_group_spec(topo_compiled_group(c, 0)), "all");
	CHECK_INT(topo_group_size(topo_compiled_group(c, 0)), 10);
	CHECK_STR(topo_group_name(topo_compiled_group(c, 1)), "evens");
	CHECK_INT(topo_group_size(topo_compiled_group(c, 1)), 5);
	CHECK_STR(topo_group_name(topo_compiled_group(c, 2)), "n1");
	CHECK_INT(topo_group_size(topo_compiled_group(c, 2)), 4);
	CHECK(topo_compiled_group(c, 3) == NULL, "group 3");
	for (size_t i = 0; i < topo_compiled_group_count(c); i++) {
		CHECK_INT(topo_compiled_tree_count(c, i), 3);
		CHECK_STR(topo_tree_name(topo_compiled_tree(c, i, 0)),
			  "physical");
		CHECK_STR(topo_tree_name(topo_compiled_tree(c, i, 1)),
			  "hierarchical");
		CHECK_STR(topo_tree_name(topo_compiled_tree(c, i, 2)),
			  "binomial");
		CHECK(topo_compiled_tree(c, i, 3) == NULL, "tree 3");
		for (size_t j = 0; j < 3; j++)
			treecheck(topo_compiled_tree(c, i, j), 1);
	}
	CHECK_INT(topo_compiled_tree_count(c, 3), 0);
	CHECK(topo_compiled_tree(c, 3, 0) == NULL, "tree of group 3");
	g = topo_compiled_find_group(c, "n1");
	CHECK(g == topo_compiled_group(c, 2), "find n1");
	CHECK(topo_compiled_find_group(c, "nope") == NULL, "find nope");
	CHECK(topo_compiled_find_tree(c, g, "hierarchical") ==
		  topo_compiled_tree(c, 2, 1),
	      "find tree");
	CHECK(topo_compiled_find_tree(c, g, "chain") == NULL, "find chain");
	CHECK(topo_compiled_find_tree(c, NULL, "physical") == NULL,
	      "find in no group");
	topo_compiled_free(c);

	/* Extras: one replaces "evens" in place, one is appended, and a
	 * second "x" replaces the first; chosen shapes in the given order. */
	{
		const char *names[] = {"x", "evens", "x"};
		const char *specs[] = {"node 0", "node 3", "node 2"};
		const char *shapes[] = {"chain", "kary:2", "physical"};

		topo_error_clear(&err);
		CHECK_INT(topo_compile(&c, m, names, specs, 3, shapes, 3, &err),
			  0);
		CHECK_INT(topo_compiled_group_count(c), 4);
		CHECK_STR(topo_group_name(topo_compiled_group(c, 1)), "evens");
		CHECK_STR(topo_group_spec(topo_compiled_group(c, 1)), "node 3");
		CHECK_STR(topo_group_name(topo_compiled_group(c, 2)), "n1");
		CHECK_STR(topo_group_name(topo_compiled_group(c, 3)), "x");
		CHECK_STR(topo_group_spec(topo_compiled_group(c, 3)), "node 2");
		CHECK_STR(topo_tree_name(topo_compiled_tree(c, 3, 1)),
			  "kary:2");
		for (size_t i = 0; i < 4; i++)
			for (size_t j = 0; j < 3; j++)
				treecheck(topo_compiled_tree(c, i, j), 1);
		topo_compiled_free(c);
	}

	/* Failures leave *out NULL and say why. */
	{
		const char *world[] = {"world"}, *spec[] = {"all"};
		const char *bad_spec[] = {"cols 0::0"};
		const char *dup[] = {"chain", "kary:2", "chain"};
		const char *unknown[] = {"physical", "star"};

		c = (topo_compiled *)&c;
		topo_error_clear(&err);
		CHECK_INT(topo_compile(&c, m, world, spec, 1, NULL, 0, &err),
			  TOPO_EARG);
		CHECK(c == NULL, "out set");
		CHECK_STR(err.text, "group name \"world\" is reserved");
		topo_error_clear(&err);
		CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, dup, 3, &err),
			  TOPO_EARG);
		CHECK_STR(err.text, "tree shape \"chain\" is listed twice");
		topo_error_clear(&err);
		CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, unknown, 2, &err),
			  TOPO_EARG);
		CHECK_STR(err.text, "unknown tree shape \"star\" (valid: "
				    "physical, hierarchical, binomial, chain, "
				    "kary:K with K in 1..2147483647)");
		topo_error_clear(&err);
		CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, dup, 0, &err),
			  TOPO_EARG);
		topo_error_clear(&err);
		rc = topo_compile(&c, m, NULL, bad_spec, 1, NULL, 0, &err);
		CHECK_INT(rc, TOPO_ESPEC);
		CHECK(c == NULL, "out set");
		CHECK_STR(err.spec, "cols 0::0");
		CHECK_INT(err.position, 7);
		topo_error_clear(&err);
		CHECK_INT(topo_compile(&c, NULL, NULL, NULL, 0, NULL, 0, &err),
			  TOPO_EARG);
	}

	/* Every allocation failing in turn: TOPO_ENOMEM, nothing leaked
	 * (the sanitizer build checks the latter). */
	for (long k = 0;; k++) {
		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo_compile(&c, m, NULL, NULL, 0, NULL, 0, &err);
		topo__alloc_fail_after(-1);
		if (rc == 0) {
			CHECK(k > 10, "only %ld allocations", k);
			topo_compiled_free(c);
			break;
		}
		CHECK(rc == TOPO_ENOMEM && err.code == TOPO_ENOMEM && c == NULL,
		      "failing allocation %ld: rc %d (%s)", k, rc, err.text);
		if (k > 100000)
			break;
	}
	topo_machine_free(m);
}

/* topo_tree_new alone under allocation failure, each shape. */
static void test_tree_nomem(void)
{
	const int32_t tasks[] = {2, 4, 1, 3}, net[] = {-1, 0, 0, 1};
	topo_machine *m = machine(4, tasks, 1, "tree", net);
	topo_group *g = world_of(m);

	for (size_t s = 0; s < sizeof(all_shapes) / sizeof(all_shapes[0]);
	     s++) {
		for (long k = 0;; k++) {
			topo_tree *t = (topo_tree *)&t;
			topo_error err;
			int rc;

			topo_error_clear(&err);
			topo__alloc_fail_after(k);
			rc = topo_tree_new(&t, g, all_shapes[s], &err);
			topo__alloc_fail_after(-1);
			if (rc == 0) {
				treecheck(t, 1);
				topo_tree_free(t);
				break;
			}
			CHECK(rc == TOPO_ENOMEM && t == NULL &&
				  strstr(err.text, "out of memory") != NULL,
			      "%s, failing allocation %ld: rc %d",
			      all_shapes[s], k, rc);
		}
	}
	topo_group_free(g);
	topo_machine_free(m);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_trees", 20240601);
	CHECK_RUN(uneven, test_uneven());
	CHECK_RUN(round_robin, test_round_robin());
	CHECK_RUN(no_member_ancestor, test_no_member_ancestor());
	CHECK_RUN(endpoints, test_endpoints());
	CHECK_RUN(shape_names, test_shape_names());
	CHECK_RUN(from_parent, test_from_parent());
	CHECK_RUN(random, test_random());
	CHECK_RUN(shared_memo, test_shared_memo());
	CHECK_RUN(compile, test_compile());
	CHECK_RUN(tree_nomem, test_tree_nomem());
	return check_done("test_trees");
}
