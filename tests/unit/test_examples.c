/*
 * test_examples.c - every shipped example machine compiles, and every tree
 * of every group passes treecheck.h's independent check.
 *
 * Usage: test_examples [--list | NAME...], from the top of the tree (as
 * tests/check.sh runs it): each examples/NAME.json, or those named, is
 * loaded, compiled with the default trees and again with kary:3 and chain,
 * and each group x tree is checked: exact parents against the reference,
 * edge labels and route rows; the broadcast from every member is simulated
 * for groups of up to 5,000 members (600 under CHECK_QUICK).  No examples
 * at all fails: an empty glob must not pass for a green run.
 */
#include "check.h"
#include "topo.h"
#include "treecheck.h"

#include <glob.h>

/* Groups up to this size get the full check (every member's broadcast
 * simulated, quadratic); under CHECK_QUICK (valgrind), up to 600. */
#define FULL_CHECK_LIMIT (check_quick() ? 600 : 5000)

static void check_compiled(const char *path, const topo_compiled *c,
			   size_t want_trees)
{
	size_t ngroups = topo_compiled_group_count(c);

	CHECK(ngroups >= 1, "%s: no groups", path);
	CHECK_STR(topo_group_name(topo_compiled_group(c, 0)), "world");
	for (size_t i = 0; i < ngroups; i++) {
		const topo_group *g = topo_compiled_group(c, i);
		int full = topo_group_size(g) <= FULL_CHECK_LIMIT;

		CHECK(topo_compiled_tree_count(c, i) == want_trees,
		      "%s: group %s has %zu trees, want %zu", path,
		      topo_group_name(g), topo_compiled_tree_count(c, i),
		      want_trees);
		for (size_t j = 0; j < topo_compiled_tree_count(c, i); j++)
			treecheck(topo_compiled_tree(c, i, j), full);
	}
}

static void check_example(const char *path)
{
	static const char *const extra[] = {"kary:3", "chain"};
	topo_machine *m = NULL;
	topo_compiled *c = NULL;
	topo_error err;
	char msg[1024];
	int rc;

	topo_error_clear(&err);
	rc = topo_machine_load_file(&m, path, &err);
	CHECK(rc == 0, "%s: %s", path,
	      topo_error_format(&err, msg, sizeof(msg)));
	if (rc != 0)
		return;
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, NULL, 0, &err), 0);
	if (c != NULL) {
		CHECK(topo_compiled_group_count(c) ==
			  1 + topo_machine_group_count(m),
		      "%s: %zu groups", path, topo_compiled_group_count(c));
		check_compiled(path, c, 3);
		topo_compiled_free(c);
		c = NULL;
	}
	topo_error_clear(&err);
	rc = topo_compile(&c, m, NULL, NULL, 0, extra, 2, &err);
	CHECK(rc == 0, "%s: -t kary:3,chain: %s", path,
	      topo_error_format(&err, msg, sizeof(msg)));
	if (c != NULL) {
		check_compiled(path, c, 2);
		topo_compiled_free(c);
	}
	topo_machine_free(m);
	printf("test_examples: %s checked\n", path);
}

/* Each example is a test of its own, named by its file's name. */
int main(int argc, char **argv)
{
	const char *pattern = "examples/*.json";
	glob_t found;
	int rc;

	check_args(argc, argv);
	rc = glob(pattern, 0, NULL, &found);
	CHECK(rc == 0 && found.gl_pathc > 0, "no examples match %s", pattern);
	for (size_t i = 0; rc == 0 && i < found.gl_pathc; i++) {
		const char *name = strrchr(found.gl_pathv[i], '/') + 1;

		if (check_want(name))
			check_example(found.gl_pathv[i]);
	}
	if (rc == 0)
		globfree(&found);
	return check_done("test_examples");
}
