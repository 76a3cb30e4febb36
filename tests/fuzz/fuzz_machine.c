/*
 * fuzz_machine.c - libFuzzer target: the machine loader.
 *
 * The input is a machine description (collc(5)) for
 * topo_machine_load_string.  A failure must come with a well-formed
 * error record.  A machine that loads must be consistent (tasks, nodes,
 * endpoints, a network tree), and a small one (at most MAX_COMPILE
 * endpoints, so that each input stays fast) is compiled with the default
 * trees, checked, written, and, when the output is small, loaded back and
 * written again: the two outputs must be byte for byte the same.  It is
 * also compiled with the chain and kary:3 shapes, and those trees of the
 * world are drawn (topo_tree_write_dot, topo_tree_write_dot_nodes).
 */
#include "fuzz_common.h"

/* Compile only machines this small: the work is linear, but a fuzzer
 * wants thousands of inputs a second. */
#define MAX_COMPILE 4096
/* Write full route tables (about sum(degree^2) targets) only up to this. */
#define MAX_ROUTES 256
/* Load the output back only when it is at most this long. */
#define MAX_ROUNDTRIP (256 << 10)

static const char *const other_shapes[] = {"chain", "kary:3"};

static void check_machine(const topo_machine *m)
{
	int32_t nodes = topo_machine_nodes(m), tasks = 0, roots = 0;
	const int32_t *parent = topo_machine_network_parent(m);

	FUZZ_CHECK(nodes >= 1, "nodes %d", (int)nodes);
	for (int32_t n = 0; n < nodes; n++) {
		int32_t nt = topo_machine_node_tasks(m, n);

		FUZZ_CHECK(nt >= 1, "node %d has %d tasks", (int)n, (int)nt);
		FUZZ_CHECK(topo_machine_node_first_task(m, n) == tasks,
			   "node %d first task %d, want %d", (int)n,
			   (int)topo_machine_node_first_task(m, n), (int)tasks);
		tasks += nt;
		FUZZ_CHECK(parent[n] >= -1 && parent[n] < nodes,
			   "node %d parent %d", (int)n, (int)parent[n]);
		roots += parent[n] == -1;
		if (parent[n] >= 0)
			FUZZ_CHECK(topo_machine_node_depth(m, n) ==
				       topo_machine_node_depth(m, parent[n]) +
					   1,
				   "node %d depth", (int)n);
	}
	FUZZ_CHECK(roots == 1, "%d roots", (int)roots);
	FUZZ_CHECK(parent[topo_machine_physical_root(m)] == -1,
		   "physical root %d has a parent",
		   (int)topo_machine_physical_root(m));
	FUZZ_CHECK(tasks == topo_machine_tasks(m), "tasks %d, sum %d",
		   (int)topo_machine_tasks(m), (int)tasks);
	FUZZ_CHECK((int64_t)tasks * topo_machine_endpoints_per_task(m) ==
		       topo_machine_endpoints(m),
		   "endpoints %d", (int)topo_machine_endpoints(m));
	for (size_t i = 0; i < topo_machine_group_count(m); i++)
		FUZZ_CHECK(topo_machine_group_name(m, i)[0] != '\0' &&
			       topo_machine_group_spec(m, i)[0] != '\0',
			   "group %zu", i);
}

static void check_tree(const topo_tree *t)
{
	const topo_group *g = topo_tree_group(t);
	const int32_t *parent = topo_tree_parent(t);
	int32_t n = topo_group_size(g), links = 0;
	int64_t shm, net;

	FUZZ_CHECK(parent[topo_tree_root(t)] == -1, "root has a parent");
	for (int32_t r = 0; r < n; r++) {
		const int32_t *c;
		int32_t nc = topo_tree_children(t, r, &c);

		FUZZ_CHECK(parent[r] >= -1 && parent[r] < n, "parent %d",
			   (int)parent[r]);
		for (int32_t i = 0; i < nc; i++)
			FUZZ_CHECK(parent[c[i]] == r &&
				       (i == 0 || c[i - 1] < c[i]),
				   "children of %d", (int)r);
		links += nc;
	}
	FUZZ_CHECK(links == n - 1, "%d child links for %d members", (int)links,
		   (int)n);
	topo_tree_edge_counts(t, &shm, &net);
	FUZZ_CHECK(shm + net == n - 1, "edge counts %lld + %lld",
		   (long long)shm, (long long)net);
}

static void check_compiled(const topo_compiled *c, const topo_machine *m,
			   size_t ntrees)
{
	FUZZ_CHECK(topo_compiled_group_count(c) ==
		       1 + topo_machine_group_count(m),
		   "%zu groups", topo_compiled_group_count(c));
	for (size_t i = 0; i < topo_compiled_group_count(c); i++) {
		const topo_group *g = topo_compiled_group(c, i);
		const int32_t *mem = topo_group_members(g);

		for (int32_t r = 0; r < topo_group_size(g); r++)
			FUZZ_CHECK(mem[r] >= 0 &&
				       mem[r] < topo_machine_endpoints(m) &&
				       (r == 0 || mem[r - 1] < mem[r]),
				   "group %zu member %d", i, (int)r);
		FUZZ_CHECK(topo_compiled_tree_count(c, i) == ntrees, "trees");
		for (size_t j = 0; j < ntrees; j++)
			check_tree(topo_compiled_tree(c, i, j));
	}
}

/* Output -> load -> output must give the same bytes. */
static void roundtrip(const char *text, size_t len, unsigned flags)
{
	topo_compiled *back = NULL;
	topo_error err;
	char *again;
	size_t len2 = 0;
	int rc;

	topo_error_clear(&err);
	rc = topo_compiled_load_string(&back, text, len, "out.json", &err);
	fuzz_check_error(rc, &err, "reloading the compile output");
	if (rc == TOPO_ENOMEM)
		return;
	FUZZ_CHECK(rc == 0, "the compile output does not load: %s: %s",
		   err.pointer, err.text);
	again = fuzz_write(back, flags, &len2);
	if (again != NULL)
		FUZZ_CHECK(len2 == len && memcmp(again, text, len) == 0,
			   "writing the reloaded output differs (%zu bytes, "
			   "then %zu)",
			   len, len2);
	free(again);
	topo_compiled_free(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_machine *m = (topo_machine *)1;
	topo_compiled *c = (topo_compiled *)1;
	topo_error err;
	unsigned flags;
	char *text;
	size_t len = 0;
	int rc;

	topo_error_clear(&err);
	rc = topo_machine_load_string(&m, (const char *)data, size, "fuzz.json",
				      &err);
	fuzz_check_error(rc, &err, "topo_machine_load_string");
	if (rc != 0) {
		FUZZ_CHECK(m == NULL, "*out set on failure");
		return 0;
	}
	check_machine(m);
	if (topo_machine_endpoints(m) > MAX_COMPILE)
		goto done;

	topo_error_clear(&err);
	rc = topo_compile(&c, m, NULL, NULL, 0, NULL, 0, &err);
	fuzz_check_error(rc, &err, "topo_compile");
	/* The groups were checked at load: only memory can fail now. */
	FUZZ_CHECK(rc == 0 || rc == TOPO_ENOMEM, "topo_compile: rc %d: %s", rc,
		   err.text);
	if (rc != 0) {
		FUZZ_CHECK(c == NULL, "*out set on failure");
		goto done;
	}
	check_compiled(c, m, 3);
	flags =
	    topo_machine_endpoints(m) <= MAX_ROUTES ? 0 : TOPO_WRITE_NO_ROUTES;
	text = fuzz_write(c, flags, &len);
	if (text != NULL && len <= MAX_ROUNDTRIP)
		roundtrip(text, len, flags);
	free(text);
	topo_compiled_free(c);

	/* The other shapes, drawn as well. */
	topo_error_clear(&err);
	rc = topo_compile(&c, m, NULL, NULL, 0, other_shapes, 2, &err);
	fuzz_check_error(rc, &err, "topo_compile");
	FUZZ_CHECK(rc == 0 || rc == TOPO_ENOMEM, "topo_compile: rc %d: %s", rc,
		   err.text);
	if (rc == 0) {
		FILE *dot = fopen("/dev/null", "w");

		FUZZ_CHECK(dot != NULL, "/dev/null");
		check_compiled(c, m, 2);
		for (size_t j = 0; j < 2; j++) {
			topo_error_clear(&err);
			rc = topo_tree_write_dot(topo_compiled_tree(c, 0, j),
						 dot, &err);
			fuzz_check_error(rc, &err, "topo_tree_write_dot");
			topo_error_clear(&err);
			rc = topo_tree_write_dot_nodes(
			    topo_compiled_tree(c, 0, j), dot, &err);
			fuzz_check_error(rc, &err, "topo_tree_write_dot_nodes");
		}
		fclose(dot);
		topo_compiled_free(c);
	}
done:
	topo_machine_free(m);
	return 0;
}
