/*
 * group.c - groups of endpoints: construction from a stride spec (the
 * evaluation itself is spec.c's) or from a list of endpoints, and lookups
 * by rank and endpoint id.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <stdio.h>
#include <stdlib.h>

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

static int compare_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return (x > y) - (x < y);
}

/* The "ep" spec of ids[0..n-1] (ascending, distinct): three or more ids at
 * one stride as a triplet first:last[:stride], two adjacent ones as
 * first:last, the others one by one.  NULL when out of memory. */
static char *list_spec(const int32_t *ids, int32_t n)
{
	/* "ep " and, per id, at most "2147483647:2147483647:2147483647," */
	char *spec = topo__mallocarray((size_t)n + 1, 36), *p = spec;

	if (spec == NULL)
		return NULL;
	p += sprintf(p, "ep ");
	for (int32_t i = 0; i < n;) {
		int32_t j = i;
		int64_t d = i + 1 < n ? (int64_t)ids[i + 1] - ids[i] : 0;

		while (j + 1 < n && (int64_t)ids[j + 1] - ids[j] == d)
			j++;
		if (i > 0)
			*p++ = ',';
		if (j - i >= 2 || (j - i == 1 && d == 1)) {
			p += sprintf(p, "%d:%d", (int)ids[i], (int)ids[j]);
			if (d != 1)
				p += sprintf(p, ":%lld", (long long)d);
			i = j + 1;
		} else {
			p += sprintf(p, "%d", (int)ids[i]);
			i++;
		}
	}
	*p = '\0';
	return spec;
}

int topo_group_new_list(topo_group **out, const topo_machine *m,
			const char *name, const int32_t *endpoints, int32_t n,
			topo_error *err)
{
	int64_t *key;
	int32_t *members;
	char *spec;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (out == NULL || m == NULL || endpoints == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_group_new_list: out, machine and "
				 "endpoints are required");
	if (n < 1)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_group_new_list: a group needs at least "
				 "one endpoint (got %d)",
				 (int)n);
	for (int32_t i = 0; i < n; i++)
		if (endpoints[i] < 0 || endpoints[i] >= m->endpoints)
			return topo__err(err, TOPO_EARG, NULL, NULL,
					 "topo_group_new_list: endpoint %d "
					 "(item %d) is not in the machine "
					 "(endpoints 0..%d)",
					 (int)endpoints[i], (int)i,
					 (int)m->endpoints - 1);
	/* id and place together, so that a repeat names both places */
	key = topo__mallocarray((size_t)n, sizeof(*key));
	members = topo__mallocarray((size_t)n, sizeof(*members));
	if (key == NULL || members == NULL) {
		topo__free(key);
		topo__free(members);
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	}
	for (int32_t i = 0; i < n; i++)
		key[i] = (int64_t)endpoints[i] << 32 | (int64_t)i;
	qsort(key, (size_t)n, sizeof(*key), compare_i64);
	for (int32_t i = 0; i < n; i++) {
		members[i] = (int32_t)(key[i] >> 32);
		if (i > 0 && members[i] == members[i - 1]) {
			rc = topo__err(err, TOPO_EARG, NULL, NULL,
				       "topo_group_new_list: endpoint %d is "
				       "listed twice (items %d and %d)",
				       (int)members[i],
				       (int)(key[i - 1] & 0x7fffffff),
				       (int)(key[i] & 0x7fffffff));
			topo__free(key);
			topo__free(members);
			return rc;
		}
	}
	topo__free(key);
	spec = list_spec(members, n);
	if (spec == NULL) {
		topo__free(members);
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	}
	rc = topo__group_from_members(out, m, name, spec, members, n);
	topo__free(spec);
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
