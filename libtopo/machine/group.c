/*
 * group.c - groups of endpoints: construction from a stride spec (the
 * evaluation itself is spec.c's) and lookups by rank and endpoint id.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

int topo__group_from_members(topo_group **out, const topo_machine *m,
			     const char *name, const char *spec,
			     int32_t *members, int32_t n)
{
	topo_group *g = topo__calloc(1, sizeof(*g));

	*out = NULL;
	if (g == NULL) {
		topo__free(members);
		return TOPO_ENOMEM;
	}
	g->m = m;
	g->members = members;
	g->size = n;
	g->spec = topo__strdup(spec);
	g->name = topo__strdup(name != NULL ? name : spec);
	if (g->spec == NULL || g->name == NULL) {
		topo_group_free(g);
		return TOPO_ENOMEM;
	}
	*out = g;
	return 0;
}

int topo_group_new(topo_group **out, const topo_machine *m, const char *name,
		   const char *spec, topo_error *err)
{
	int32_t *members = NULL, n = 0;
	int rc;

	*out = NULL;
	if (m == NULL || spec == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_group_new: machine and spec are required");
	rc = topo__spec_eval(m, spec, &members, &n, err);
	if (rc != 0)
		return rc;
	rc = topo__group_from_members(out, m, name, spec, members, n);
	if (rc != 0)
		return topo__err(err, rc, NULL, NULL, "out of memory");
	return 0;
}

int topo_spec_check(const topo_machine *m, const char *spec, topo_error *err)
{
	int32_t *members = NULL, n = 0;
	int rc = topo__spec_eval(m, spec, &members, &n, err);

	topo__free(members);
	return rc;
}

void topo_group_free(topo_group *g)
{
	if (g == NULL)
		return;
	topo__free(g->members);
	topo__free(g->name);
	topo__free(g->spec);
	topo__free(g);
}

const char *topo_group_name(const topo_group *g) { return g->name; }
const char *topo_group_spec(const topo_group *g) { return g->spec; }
const topo_machine *topo_group_machine(const topo_group *g) { return g->m; }
int32_t topo_group_size(const topo_group *g) { return g->size; }
const int32_t *topo_group_members(const topo_group *g) { return g->members; }

int32_t topo_group_rank(const topo_group *g, int32_t ep)
{
	int32_t lo = 0, hi = g->size - 1;

	while (lo <= hi) {
		int32_t mid = lo + (hi - lo) / 2;

		if (g->members[mid] == ep)
			return mid;
		if (g->members[mid] < ep)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}
