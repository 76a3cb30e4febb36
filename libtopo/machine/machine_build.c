/*
 * machine_build.c - assembling a topo_machine from validated parameters,
 * and its accessors.  Loading and validating JSON is machine.c's job; the
 * compile-output loader and the tests build machines through here too.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <string.h>

void topo_machine_free(topo_machine *m)
{
	if (m == NULL)
		return;
	for (size_t i = 0; i < m->ngroups; i++) {
		topo__free(m->group_names[i]);
		topo__free(m->group_specs[i]);
	}
	topo__free(m->group_names);
	topo__free(m->group_specs);
	topo__free(m->hosts);
	topo__free(m->host_text);
	topo__free(m->host_sorted);
	topo__free(m->name);
	topo__free(m->node_tasks);
	topo__free(m->node_first_task);
	topo__free(m->task_node);
	topo__free(m->dims);
	topo__free(m->net_parent);
	topo__free(m->net_depth);
	topo__free(m->net_order);
	topo__free(m);
}

int topo__machine_build(topo_machine **out, const char *name, int32_t nodes,
			const int32_t *node_tasks, int32_t eps_per_task,
			const char *net_type, const int32_t *net_parent,
			topo_error *err)
{
	topo_machine *m = NULL;
	int32_t *count = NULL;
	int64_t tasks = 0;
	int rc = TOPO_ENOMEM;

	*out = NULL;
	for (int32_t n = 0; n < nodes; n++)
		tasks += node_tasks[n];
	/* tasks <= 2^62 here, so test it alone first: tasks * eps could
	 * overflow int64 itself. */
	if (tasks > TOPO_MAX_ENDPOINTS ||
	    tasks * (int64_t)eps_per_task > TOPO_MAX_ENDPOINTS)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "%lld tasks x %d endpoints = %lld endpoints; "
				 "at most 2147483647 are supported",
				 (long long)tasks, (int)eps_per_task,
				 tasks > TOPO_MAX_ENDPOINTS
					 ? (long long)tasks * (eps_per_task > 0)
					 : (long long)(tasks * eps_per_task));
	m = topo__calloc(1, sizeof(*m));
	if (m == NULL)
		goto fail;
	m->nodes = nodes;
	m->tasks = (int32_t)tasks;
	m->eps_per_task = eps_per_task;
	m->endpoints = (int32_t)(tasks * eps_per_task);
	m->physical_root = -1;
	snprintf(m->net_type, sizeof(m->net_type), "%s", net_type);
	m->name = topo__strdup(name != NULL ? name : "");
	m->node_tasks = topo__mallocarray((size_t)nodes, sizeof(int32_t));
	m->node_first_task =
		topo__mallocarray((size_t)nodes + 1, sizeof(int32_t));
	m->task_node = topo__mallocarray((size_t)tasks, sizeof(int32_t));
	m->net_parent = topo__mallocarray((size_t)nodes, sizeof(int32_t));
	m->net_depth = topo__mallocarray((size_t)nodes, sizeof(int32_t));
	m->net_order = topo__mallocarray((size_t)nodes, sizeof(int32_t));
	count = topo__mallocarray((size_t)nodes + 1, sizeof(int32_t));
	if (m->name == NULL || m->node_tasks == NULL ||
	    m->node_first_task == NULL || m->task_node == NULL ||
	    m->net_parent == NULL || m->net_depth == NULL ||
	    m->net_order == NULL || count == NULL)
		goto fail;
	memcpy(m->node_tasks, node_tasks, (size_t)nodes * sizeof(int32_t));
	memcpy(m->net_parent, net_parent, (size_t)nodes * sizeof(int32_t));
	m->node_first_task[0] = 0;
	for (int32_t n = 0; n < nodes; n++) {
		int32_t first = m->node_first_task[n];

		m->node_first_task[n + 1] = first + node_tasks[n];
		for (int32_t t = 0; t < node_tasks[n]; t++)
			m->task_node[first + t] = n;
		if (net_parent[n] == -1)
			m->physical_root = n;
	}
	topo__costs_default(&m->costs);
	m->uniform_tasks = node_tasks[0];
	for (int32_t n = 1; n < nodes && m->uniform_tasks != 0; n++)
		if (node_tasks[n] != node_tasks[0])
			m->uniform_tasks = 0;
	topo__network_order(m->net_parent, nodes, m->net_order, m->net_depth,
			    count);
	topo__free(count);
	*out = m;
	return 0;
fail:
	topo__free(count);
	topo_machine_free(m);
	return topo__err(err, rc, NULL, NULL, "out of memory building a "
			 "machine of %d nodes", (int)nodes);
}

int topo__machine_add_group(topo_machine *m, const char *name,
			    const char *spec)
{
	char **names, **specs;
	char *n, *s;

	names = topo__realloc(m->group_names,
			      (m->ngroups + 1) * sizeof(char *));
	if (names == NULL)
		return TOPO_ENOMEM;
	m->group_names = names;
	specs = topo__realloc(m->group_specs,
			      (m->ngroups + 1) * sizeof(char *));
	if (specs == NULL)
		return TOPO_ENOMEM;
	m->group_specs = specs;
	n = topo__strdup(name);
	s = topo__strdup(spec);
	if (n == NULL || s == NULL) {
		topo__free(n);
		topo__free(s);
		return TOPO_ENOMEM;
	}
	m->group_names[m->ngroups] = n;
	m->group_specs[m->ngroups] = s;
	m->ngroups++;
	return 0;
}

const char *topo_machine_name(const topo_machine *m) { return m->name; }
int32_t topo_machine_nodes(const topo_machine *m) { return m->nodes; }
int32_t topo_machine_tasks(const topo_machine *m) { return m->tasks; }
int32_t topo_machine_endpoints_per_task(const topo_machine *m)
{
	return m->eps_per_task;
}
int32_t topo_machine_endpoints(const topo_machine *m) { return m->endpoints; }
int32_t topo_machine_node_tasks(const topo_machine *m, int32_t n)
{
	return m->node_tasks[n];
}
int32_t topo_machine_node_first_task(const topo_machine *m, int32_t n)
{
	return m->node_first_task[n];
}
int32_t topo_machine_task_node(const topo_machine *m, int32_t task)
{
	return m->task_node[task];
}
int32_t topo_machine_endpoint_node(const topo_machine *m, int32_t ep)
{
	return m->task_node[ep / m->eps_per_task];
}
const char *topo_machine_network_type(const topo_machine *m)
{
	return m->net_type;
}
int32_t topo_machine_physical_root(const topo_machine *m)
{
	return m->physical_root;
}
const int32_t *topo_machine_network_parent(const topo_machine *m)
{
	return m->net_parent;
}
int32_t topo_machine_node_depth(const topo_machine *m, int32_t n)
{
	return m->net_depth[n];
}
int32_t topo_machine_network_fanout(const topo_machine *m)
{
	return m->fanout;
}
int topo_machine_torus_dims(const topo_machine *m, const int32_t **out)
{
	*out = m->dims;
	return m->ndims;
}
size_t topo_machine_group_count(const topo_machine *m) { return m->ngroups; }
const char *topo_machine_group_name(const topo_machine *m, size_t i)
{
	return m->group_names[i];
}
const char *topo_machine_group_spec(const topo_machine *m, size_t i)
{
	return m->group_specs[i];
}
