/*
 * compile.c - compiling a machine in memory: its groups (world, the
 * description's, the caller's extras) and one tree per requested shape
 * for each, with the accessors of the result.  Writing the result is
 * write.c's job and loading one back is the compiled-file loader's; both
 * share struct topo_compiled and topo_compiled_free().
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <string.h>

static const char *const default_shapes[] = {"physical", "hierarchical",
					     "binomial"};

struct entry {
	const char *name;
	const char *spec;
};

void topo_compiled_free(topo_compiled *c)
{
	if (c == NULL)
		return;
	for (size_t i = 0; i < c->ngroups; i++) {
		if (c->trees != NULL && c->trees[i] != NULL) {
			for (size_t j = 0; j < c->ntrees[i]; j++)
				topo_tree_free(c->trees[i][j]);
			topo__free(c->trees[i]);
		}
		if (c->groups != NULL)
			topo_group_free(c->groups[i]);
	}
	topo__free(c->trees);
	topo__free(c->ntrees);
	topo__free(c->groups);
	topo_machine_free(c->owned);
	topo__free(c);
}

/* Every shape valid and none twice: two trees of one name in a group
 * could not be told apart by name (collc -t, collrun -t). */
static int check_shapes(const char *const *shapes, size_t nshapes,
			topo_error *err)
{
	if (nshapes == 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "no tree shapes given (valid: physical, "
				 "hierarchical, binomial, chain, kary:K)");
	for (size_t i = 0; i < nshapes; i++) {
		int rc = topo_tree_shape_check(shapes[i], err);

		if (rc != 0)
			return rc;
		for (size_t j = 0; j < i; j++)
			if (strcmp(shapes[i], shapes[j]) == 0)
				return topo__err(err, TOPO_EARG, NULL, NULL,
						 "tree shape \"%s\" is listed "
						 "twice",
						 shapes[i]);
	}
	return 0;
}

/*
 * The groups to build, in output order: world, the description's groups,
 * then the extras; an extra whose name is taken replaces that group in
 * place (the later definition wins, as with -g given twice).  The number of
 * groups is small, so the name lookups are a plain scan.
 */
static int plan_groups(struct entry *list, size_t *count, const topo_machine *m,
		       const char *const *names, const char *const *specs,
		       size_t nextra, topo_error *err)
{
	size_t n = 0;

	list[n++] = (struct entry){"world", "all"};
	for (size_t i = 0; i < m->ngroups; i++) {
		if (strcmp(m->group_names[i], "world") == 0)
			return topo__err(err, TOPO_EARG, NULL, NULL,
					 "group name \"world\" is reserved");
		list[n++] =
		    (struct entry){m->group_names[i], m->group_specs[i]};
	}
	for (size_t i = 0; i < nextra; i++) {
		const char *spec = specs != NULL ? specs[i] : NULL;
		const char *name =
		    names != NULL && names[i] != NULL ? names[i] : spec;
		size_t j;

		if (spec == NULL)
			return topo__err(err, TOPO_EARG, NULL, NULL,
					 "extra group %zu has no spec", i);
		if (strcmp(name, "world") == 0)
			return topo__err(err, TOPO_EARG, NULL, NULL,
					 "group name \"world\" is reserved");
		for (j = 1; j < n; j++)
			if (strcmp(list[j].name, name) == 0)
				break;
		list[j] = (struct entry){name, spec};
		if (j == n)
			n++;
	}
	*count = n;
	return 0;
}

int topo_compile(topo_compiled **out, const topo_machine *m,
		 const char *const *names, const char *const *specs,
		 size_t nextra, const char *const *shapes, size_t nshapes,
		 topo_error *err)
{
	struct topo__node_memo memo = {NULL, 0, 0};
	struct entry *list = NULL;
	topo_compiled *c = NULL;
	size_t count = 0;
	int rc;

	*out = NULL;
	if (m == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_compile: a machine is required");
	if (shapes == NULL) {
		shapes = default_shapes;
		nshapes = sizeof(default_shapes) / sizeof(default_shapes[0]);
	}
	rc = check_shapes(shapes, nshapes, err);
	if (rc != 0)
		return rc;
	rc = TOPO_ENOMEM;
	list = topo__mallocarray(1 + m->ngroups + nextra, sizeof(*list));
	if (list == NULL)
		goto nomem;
	rc = plan_groups(list, &count, m, names, specs, nextra, err);
	if (rc != 0)
		goto fail;

	rc = TOPO_ENOMEM;
	c = topo__calloc(1, sizeof(*c));
	/* One node memo for every physical tree: a group's tree then costs
	 * its members, not the machine's nodes. */
	if (c == NULL || topo__node_memo_new(&memo, m) != 0)
		goto nomem;
	c->m = m;
	c->groups = topo__calloc(count, sizeof(*c->groups));
	c->ntrees = topo__calloc(count, sizeof(*c->ntrees));
	c->trees = topo__calloc(count, sizeof(*c->trees));
	if (c->groups == NULL || c->ntrees == NULL || c->trees == NULL)
		goto nomem;
	c->ngroups = count;
	for (size_t i = 0; i < count; i++) {
		rc = topo_group_new(&c->groups[i], m, list[i].name,
				    list[i].spec, err);
		if (rc != 0)
			goto fail;
		c->trees[i] = topo__calloc(nshapes, sizeof(topo_tree *));
		if (c->trees[i] == NULL) {
			rc = TOPO_ENOMEM;
			goto nomem;
		}
		for (size_t j = 0; j < nshapes; j++) {
			rc = topo__tree_new(&c->trees[i][j], c->groups[i],
					    shapes[j], &memo, err);
			if (rc != 0)
				goto fail;
			c->ntrees[i]++;
		}
	}
	topo__free(list);
	topo__node_memo_free(&memo);
	*out = c;
	return 0;
nomem:
	topo__err(err, TOPO_ENOMEM, NULL, NULL,
		  "out of memory compiling "
		  "machine \"%s\"",
		  m->name);
fail:
	topo__free(list);
	topo__node_memo_free(&memo);
	topo_compiled_free(c);
	return rc;
}

const topo_machine *topo_compiled_machine(const topo_compiled *c)
{
	return c->m;
}

size_t topo_compiled_group_count(const topo_compiled *c)
{
	return c->ngroups;
}

const topo_group *topo_compiled_group(const topo_compiled *c, size_t i)
{
	return i < c->ngroups ? c->groups[i] : NULL;
}

const topo_group *topo_compiled_find_group(const topo_compiled *c,
					   const char *name)
{
	for (size_t i = 0; name != NULL && i < c->ngroups; i++)
		if (strcmp(c->groups[i]->name, name) == 0)
			return c->groups[i];
	return NULL;
}

size_t topo_compiled_tree_count(const topo_compiled *c, size_t group)
{
	return group < c->ngroups ? c->ntrees[group] : 0;
}

const topo_tree *topo_compiled_tree(const topo_compiled *c, size_t group,
				    size_t i)
{
	if (group >= c->ngroups || i >= c->ntrees[group])
		return NULL;
	return c->trees[group][i];
}

const topo_tree *topo_compiled_find_tree(const topo_compiled *c,
					 const topo_group *g, const char *name)
{
	for (size_t i = 0; name != NULL && i < c->ngroups; i++) {
		if (c->groups[i] != g)
			continue;
		for (size_t j = 0; j < c->ntrees[i]; j++)
			if (strcmp(c->trees[i][j]->name, name) == 0)
				return c->trees[i][j];
	}
	return NULL;
}
