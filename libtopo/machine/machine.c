/*
 * machine.c - loading a machine description (collc(5)): checking every
 * rule of the format on the document json_read.c has parsed, and handing
 * the checked values to topo__machine_build.  The common faults (a wrong
 * type, an unknown key, a missing member) are worded by jget.c, the same
 * as in the other documents libtopo reads.
 *
 * Every complaint says where (the file and line:column for JSON syntax,
 * from json_read.c; a JSON pointer for meaning), what is wrong and what
 * would be valid.  Checks run in a fixed order (unknown keys of an object
 * before its values, then the values in the order of the format's
 * description), so a file with several faults always gets the same first
 * complaint.
 */
#define TOPO_INTERNAL
#include "io/jget.h"
#include "machine/hosts.h"
#include "topo_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The torus generator keeps one coordinate per dimension on its stack. */
#define MAX_DIMS 32

/* One load in progress: where complaints go and what has been checked. */
struct load {
	struct topo__jget j; /* the source, the error record, the pointer */
	int32_t nodes;
	int64_t tasks;
	int32_t *node_tasks; /* [nodes] */
	int32_t eps;
	const char *net_type;
	int32_t *parent; /* [nodes] */
	int32_t fanout;	 /* kary */
	int ndims;	 /* torus */
	int32_t *dims;	 /* [ndims], torus */
	int32_t root;	 /* physical_root, kary and torus */
	struct topo_costs costs;
	uint32_t costs_given;
	json_t *hosts; /* NULL: nodes without names */
};

/* The keys of each object, as collc(5) lists them. */
/* clang-format off */
static const char *const top_keys[] = {
	"name", "nodes", "tasks_per_node", "endpoints_per_task", "hosts",
	"network", "groups", "costs", NULL};
static const char *const tree_keys[] = {"type", "parent", NULL};
static const char *const kary_keys[] = {"type", "fanout", "physical_root", NULL};
static const char *const torus_keys[] = {"type", "dims", "physical_root", NULL};
/* Before the type is known, any network key may be a typo of another. */
static const char *const any_net_keys[] = {
	"type", "parent", "fanout", "dims", "physical_root", NULL};
static const char *const net_types[] = {"tree", "kary", "torus", NULL};
/* clang-format on */

/* "0..7", or "0" for a machine of one node. */
static void node_range(int32_t nodes, char *buf, size_t size)
{
	if (nodes == 1)
		snprintf(buf, size, "0");
	else
		snprintf(buf, size, "0..%d", (int)(nodes - 1));
}

/* ---------------------------------------------------------------------- */
/* Checking values */

static int no_memory(struct load *ld)
{
	return topo__err(ld->j.err, TOPO_ENOMEM, ld->j.source, NULL,
			 "out of memory loading a machine of %d nodes",
			 (int)ld->nodes);
}

/* v must be an integer in lo..INT32_MAX. */
static int want_int(struct load *ld, const json_t *v, int32_t lo, int32_t *out)
{
	return topo__jget_int32(&ld->j, v, lo, INT32_MAX, NULL, out);
}

/* v must name a node (physical_root). */
static int want_node(struct load *ld, const json_t *v, int32_t *out)
{
	char got[128], range[32];

	node_range(ld->nodes, range, sizeof(range));
	if (!json_is_integer(v)) {
		topo__jget_show(v, got, sizeof(got));
		return topo__jget_fail(&ld->j, "must be a node id %s (got %s)",
				       range, got);
	}
	if (json_integer_value(v) < 0 || json_integer_value(v) >= ld->nodes)
		return topo__jget_fail(&ld->j,
				       "node %" JSON_INTEGER_FORMAT
				       " does not exist (nodes: %s)",
				       json_integer_value(v), range);
	*out = (int32_t)json_integer_value(v);
	return 0;
}

/* tasks_per_node: checks it and sums the tasks, allocating nothing (the
 * sum must pass check_limit first). */
static int check_tasks(struct load *ld, json_t *v)
{
	char what[96];
	size_t count;
	int32_t t;
	int rc;

	if (json_is_integer(v)) {
		rc = want_int(ld, v, 1, &t);
		if (rc == 0)
			ld->tasks = (int64_t)t * ld->nodes;
		return rc;
	}
	snprintf(what, sizeof(what),
		 "an integer >= 1 or an array of %d integers >= 1",
		 (int)ld->nodes);
	rc = topo__jget_array(&ld->j, v, (size_t)ld->nodes, (size_t)ld->nodes,
			      what, " (one per node)", &count);
	for (size_t n = 0; rc == 0 && n < count; n++) {
		topo__jget_index(&ld->j, n);
		rc = want_int(ld, json_array_get(v, n), 1, &t);
		if (rc != 0)
			return rc;
		topo__jget_pop(&ld->j);
		ld->tasks += t;
	}
	return rc;
}

static int fill_tasks(struct load *ld, json_t *v)
{
	ld->node_tasks = topo__mallocarray((size_t)ld->nodes, sizeof(int32_t));
	if (ld->node_tasks == NULL)
		return no_memory(ld);
	for (int32_t n = 0; n < ld->nodes; n++)
		ld->node_tasks[n] = (int32_t)json_integer_value(
		    json_is_array(v) ? json_array_get(v, (size_t)n) : v);
	return 0;
}

/*
 * Refuses machines of more than 2^31-1 endpoints before anything of that
 * size is allocated, in topo__machine_build's words.  Tasks can reach
 * 2^62 and endpoints 2^93, so the product is printed from 128 bits.
 */
static int check_limit(struct load *ld)
{
	__extension__ typedef unsigned __int128 u128;
	u128 eps = (u128)ld->tasks * (u128)ld->eps;
	char digits[48];
	int i = (int)sizeof(digits) - 1;

	if (eps <= TOPO_MAX_ENDPOINTS)
		return 0;
	digits[i] = '\0';
	do {
		digits[--i] = (char)('0' + (int)(eps % 10));
		eps /= 10;
	} while (eps != 0);
	return topo__err(ld->j.err, TOPO_ELIMIT, ld->j.source, NULL,
			 "%lld tasks x %d endpoints = %s endpoints; at most "
			 "2147483647 are supported",
			 (long long)ld->tasks, (int)ld->eps, digits + i);
}

/* Explicit network, first pass (at /network/parent): the array and each
 * entry, allocating nothing. */
static int check_tree_entries(struct load *ld, json_t *v)
{
	char got[128], what[96], range[32];
	size_t count;
	int rc;

	node_range(ld->nodes, range, sizeof(range));
	snprintf(what, sizeof(what),
		 "an array of %d node ids, -1 for the physical root",
		 (int)ld->nodes);
	rc = topo__jget_array(&ld->j, v, (size_t)ld->nodes, (size_t)ld->nodes,
			      what, " (one per node)", &count);
	for (size_t n = 0; rc == 0 && n < count; n++) {
		json_t *e = json_array_get(v, n);
		json_int_t p = json_is_integer(e) ? json_integer_value(e) : 0;

		if (json_is_integer(e) && p >= -1 && p < ld->nodes)
			continue;
		topo__jget_index(&ld->j, n);
		topo__jget_show(e, got, sizeof(got));
		if (!json_is_integer(e) || p < -1)
			return topo__jget_fail(&ld->j,
					       "must be -1 (the physical root) "
					       "or a node id %s (got %s)",
					       range, got);
		return topo__jget_fail(&ld->j,
				       "node %" JSON_INTEGER_FORMAT
				       " does not exist (nodes: %s)",
				       p, range);
	}
	return rc;
}

/* The loop through node bad (its first steps) as "3 -> 5 -> 3", so that
 * the fix is obvious. */
static void show_cycle(const int32_t *parent, int32_t bad, char *path,
		       size_t size)
{
	size_t n = (size_t)snprintf(path, size, "%d", (int)bad);
	int32_t u = parent[bad];

	for (int steps = 0; steps < 8 && u != bad; steps++) {
		n += (size_t)snprintf(path + n, size - n, " -> %d", (int)u);
		u = parent[u];
	}
	if (u == bad)
		snprintf(path + n, size - n, " -> %d", (int)bad);
	else
		snprintf(path + n, size - n, " -> ...");
}

/* Explicit network, second pass (at /network/parent): the parent array,
 * and that the whole is a tree (which needs a state per node). */
static int build_tree(struct load *ld, json_t *v)
{
	char path[160];
	int32_t *state = NULL, bad, root;
	const char *why;
	int rc = 0;

	for (int32_t n = 0; n < ld->nodes; n++)
		ld->parent[n] =
		    (int32_t)json_integer_value(json_array_get(v, (size_t)n));
	state = topo__mallocarray((size_t)ld->nodes, sizeof(int32_t));
	if (state == NULL)
		return no_memory(ld);
	if (topo__network_check(ld->parent, ld->nodes, state, &bad, &why) == 0)
		goto done;
	if (strcmp(why, "no root") == 0) {
		rc = topo__jget_fail(&ld->j, "no entry is -1 (one node must "
					     "be the physical root)");
		goto done;
	}
	topo__jget_index(&ld->j, (size_t)bad);
	if (strcmp(why, "second root") == 0) {
		for (root = 0; ld->parent[root] != -1; root++)
			;
		rc = topo__jget_fail(&ld->j,
				     "second root (node %d is already the "
				     "physical root)",
				     (int)root);
	} else if (strcmp(why, "own parent") == 0) {
		rc = topo__jget_fail(&ld->j, "node %d is its own parent",
				     (int)bad);
	} else if (strcmp(why, "cycle") == 0) {
		show_cycle(ld->parent, bad, path, sizeof(path));
		rc = topo__jget_fail(&ld->j, "cycle through node %d (%s)",
				     (int)bad, path);
	} else {
		rc = topo__jget_fail(&ld->j, "%s", why);
	}
done:
	topo__free(state);
	return rc;
}

/* Torus sizes (at /network/dims): 1..32 dimensions of at least 1 whose
 * product is nodes. */
static int load_dims(struct load *ld, json_t *v)
{
	char what[64];
	size_t count;
	int64_t product = 1;
	int rc;

	snprintf(what, sizeof(what), "an array of 1 to %d dimension sizes",
		 MAX_DIMS);
	rc = topo__jget_array(&ld->j, v, 1, MAX_DIMS, what, " dimension sizes",
			      &count);
	if (rc != 0)
		return rc;
	ld->ndims = (int)count;
	ld->dims = topo__mallocarray(count, sizeof(int32_t));
	if (ld->dims == NULL)
		return no_memory(ld);
	for (size_t i = 0; i < count; i++) {
		topo__jget_index(&ld->j, i);
		rc = want_int(ld, json_array_get(v, i), 1, &ld->dims[i]);
		if (rc != 0)
			return rc;
		topo__jget_pop(&ld->j);
	}
	/* Stop multiplying once past any possible node count: no overflow,
	 * and the answer is already known. */
	for (size_t i = 0; i < count && product <= INT32_MAX; i++)
		product *= ld->dims[i];
	if (product > INT32_MAX)
		return topo__jget_fail(&ld->j,
				       "product is more than 2147483647, want "
				       "%d (nodes)",
				       (int)ld->nodes);
	if (product != ld->nodes)
		return topo__jget_fail(&ld->j,
				       "product is %lld, want %d (nodes)",
				       (long long)product, (int)ld->nodes);
	return 0;
}

/* The type of the network (at /network) and the keys it allows. */
static int network_type(struct load *ld, json_t *net, const char *const **valid)
{
	static const char *const *const by_type[] = {tree_keys, kary_keys,
						     torus_keys};
	char context[32];
	json_t *type;
	int t, rc;

	rc = topo__jget_object(&ld->j, net,
			       "an object with \"type\": \"tree\", \"kary\" "
			       "or \"torus\"");
	if (rc != 0)
		return rc;
	if (json_object_get(net, "type") == NULL) {
		rc = topo__jget_keys(&ld->j, net, any_net_keys, "");
		if (rc != 0)
			return rc;
	}
	rc = topo__jget_member(&ld->j, net, "type",
			       "\"tree\", \"kary\" or \"torus\"", &type);
	if (rc == 0)
		rc = topo__jget_enum(&ld->j, type, net_types, &t);
	if (rc != 0)
		return rc;
	topo__jget_pop(&ld->j);
	ld->net_type = net_types[t];
	*valid = by_type[t];
	snprintf(context, sizeof(context), " for type \"%s\"", ld->net_type);
	return topo__jget_keys(&ld->j, net, *valid, context);
}

/* The network (at /network), checked without allocating anything per
 * node: its type, its keys, its one required key and every value; an
 * explicit tree's entries one by one (whether they make a tree needs
 * memory per node: build_network).  Sets ld->net_type, ld->fanout,
 * ld->dims, ld->root. */
static int check_network(struct load *ld, json_t *net)
{
	const char *const *valid;
	char what[64];
	json_t *v;
	int rc;

	rc = network_type(ld, net, &valid);
	if (rc != 0)
		return rc;
	/* Each type's table lists its one required key second. */
	snprintf(what, sizeof(what), "required for type \"%s\"", ld->net_type);
	rc = topo__jget_member(&ld->j, net, valid[1], what, &v);
	if (rc != 0)
		return rc;
	if (valid == tree_keys)
		rc = check_tree_entries(ld, v);
	else if (valid == kary_keys)
		rc = want_int(ld, v, 1, &ld->fanout);
	else
		rc = load_dims(ld, v);
	if (rc != 0)
		return rc;
	topo__jget_pop(&ld->j);
	if (valid == tree_keys)
		return 0;
	rc = topo__jget_member(&ld->j, net, "physical_root", NULL, &v);
	if (rc == 0 && v != NULL)
		rc = want_node(ld, v, &ld->root);
	topo__jget_pop(&ld->j);
	return rc;
}

/* The node-level parent array, once everything cheap is checked. */
static int build_network(struct load *ld, json_t *net)
{
	int rc;

	ld->parent = topo__mallocarray((size_t)ld->nodes, sizeof(int32_t));
	if (ld->parent == NULL)
		return no_memory(ld);
	if (strcmp(ld->net_type, "tree") == 0) {
		topo__jget_key(&ld->j, "network");
		topo__jget_key(&ld->j, "parent");
		rc = build_tree(ld, json_object_get(net, "parent"));
		topo__jget_pop(&ld->j);
		topo__jget_pop(&ld->j);
		return rc;
	}
	if (strcmp(ld->net_type, "kary") == 0)
		topo__network_kary(ld->parent, ld->nodes, ld->fanout, ld->root);
	else
		topo__network_torus(ld->parent, ld->dims, ld->ndims, ld->root);
	return 0;
}

/* Puts the current pointer on an error record that a check below the
 * document's level (a stride spec's) filled without it. */
static void locate(struct load *ld)
{
	char ptr[512];

	topo__jget_pointer(&ld->j, ptr, sizeof(ptr));
	topo__err_locate(ld->j.err, ld->j.source, ptr);
}

/* The groups' shape, names and specs (at /groups, read against the
 * machine's sizes); what the specs select needs the built machine. */
static int check_groups(struct load *ld, json_t *groups)
{
	const char *name, *spec;
	json_t *v;
	int rc;

	rc = topo__jget_object(&ld->j, groups,
			       "an object of group name -> stride spec");
	if (rc != 0)
		return rc;
	json_object_foreach (groups, name, v) {
		topo__jget_key(&ld->j, name);
		if (name[0] == '\0')
			return topo__jget_fail(&ld->j, "group name is empty");
		if (strcmp(name, "world") == 0)
			return topo__jget_fail(&ld->j,
					       "the name \"world\" is reserved "
					       "(the group of all endpoints, "
					       "spec \"all\")");
		rc = topo__jget_string(&ld->j, v, 1,
				       "a non-empty stride spec string such "
				       "as \"cols 0::2\"",
				       &spec);
		if (rc != 0)
			return rc;
		/* Its words and indices, from the sizes alone; whether it
		 * selects anything is for add_groups. */
		rc = topo__spec_syntax(ld->eps, (int32_t)ld->tasks, ld->nodes,
				       (int32_t)(ld->tasks * ld->eps), spec,
				       ld->j.err);
		if (rc != 0) {
			locate(ld);
			return rc;
		}
		topo__jget_pop(&ld->j);
	}
	return 0;
}

static int add_groups(struct load *ld, topo_machine *m, json_t *groups)
{
	const char *name;
	json_t *v;
	int rc;

	topo__jget_key(&ld->j, "groups");
	json_object_foreach (groups, name, v) {
		topo__jget_key(&ld->j, name);
		rc = topo_spec_check(m, json_string_value(v), ld->j.err);
		if (rc != 0) {
			locate(ld);
			return rc;
		}
		if (topo__machine_add_group(m, name, json_string_value(v)) != 0)
			return no_memory(ld);
		topo__jget_pop(&ld->j);
	}
	topo__jget_pop(&ld->j);
	return 0;
}

/* The default name: the source's base name without ".json". */
static char *default_name(const char *source)
{
	const char *base;
	char *name;
	size_t len;

	if (source == NULL)
		return topo__strdup("machine");
	base = strrchr(source, '/');
	base = base != NULL ? base + 1 : source;
	len = strlen(base);
	if (len >= 5 && strcmp(base + len - 5, ".json") == 0)
		len -= 5;
	if (len == 0)
		return topo__strdup("machine");
	name = topo__malloc(len + 1);
	if (name != NULL) {
		memcpy(name, base, len);
		name[len] = '\0';
	}
	return name;
}

/* The members that size the machine (nodes, tasks_per_node, whose value
 * goes to *tasks, endpoints_per_task), and that their product fits. */
static int check_sizes(struct load *ld, json_t *doc, json_t **tasks)
{
	json_t *v;
	int rc;

	rc = topo__jget_member(&ld->j, doc, "nodes",
			       "the number of compute nodes, an integer >= 1",
			       &v);
	if (rc == 0)
		rc = want_int(ld, v, 1, &ld->nodes);
	topo__jget_pop(&ld->j);
	if (rc != 0)
		return rc;
	rc = topo__jget_member(&ld->j, doc, "tasks_per_node",
			       "an integer >= 1, or an array of one per node",
			       tasks);
	if (rc == 0)
		rc = check_tasks(ld, *tasks);
	topo__jget_pop(&ld->j);
	if (rc != 0)
		return rc;
	ld->eps = 1;
	rc = topo__jget_member(&ld->j, doc, "endpoints_per_task", NULL, &v);
	if (rc == 0 && v != NULL)
		rc = want_int(ld, v, 1, &ld->eps);
	topo__jget_pop(&ld->j);
	if (rc != 0)
		return rc;
	return check_limit(ld);
}

/*
 * Checks everything that can be checked without memory in proportion to
 * the machine, in the format's order: a wrong file of 41 bytes that claims
 * half a billion nodes gets its real error at once, not after gigabytes
 * (or "out of memory" under a limit).  *name, *tasks, *net and *groups get
 * those members (*name and *groups NULL when absent).
 */
static int check_doc(struct load *ld, json_t *doc, const char **name,
		     json_t **tasks, json_t **net, json_t **groups)
{
	char got[128];
	json_t *v;
	int rc;

	if (!json_is_object(doc)) {
		topo__jget_show(doc, got, sizeof(got));
		return topo__jget_fail(&ld->j,
				       "a machine description must be a JSON "
				       "object (got %s)",
				       got);
	}
	rc = topo__jget_keys(&ld->j, doc, top_keys, "");
	if (rc != 0)
		return rc;
	rc = topo__jget_member(&ld->j, doc, "name", NULL, &v);
	if (rc == 0 && v != NULL)
		rc = topo__jget_string(&ld->j, v, 1, NULL, name);
	topo__jget_pop(&ld->j);
	if (rc == 0)
		rc = check_sizes(ld, doc, tasks);
	if (rc == 0)
		rc = topo__jget_member(&ld->j, doc, "hosts", NULL, &ld->hosts);
	if (rc == 0 && ld->hosts != NULL)
		rc = topo__hosts_check(&ld->j, ld->hosts, ld->nodes);
	topo__jget_pop(&ld->j);
	if (rc != 0)
		return rc;
	rc = topo__jget_member(&ld->j, doc, "network",
			       "an object with \"type\": \"tree\", \"kary\" or "
			       "\"torus\"",
			       net);
	if (rc == 0)
		rc = check_network(ld, *net);
	topo__jget_pop(&ld->j);
	if (rc == 0)
		rc = topo__jget_member(&ld->j, doc, "groups", NULL, groups);
	if (rc == 0 && *groups != NULL)
		rc = check_groups(ld, *groups);
	topo__jget_pop(&ld->j);
	if (rc != 0)
		return rc;
	v = json_object_get(doc, "costs");
	if (v == NULL) {
		topo__costs_default(&ld->costs);
		return 0;
	}
	topo__jget_key(&ld->j, "costs");
	rc = topo__costs_from_json(&ld->j, v, &ld->costs, &ld->costs_given);
	topo__jget_pop(&ld->j);
	return rc;
}

/* Checks a parsed document and builds the machine. */
static int load_doc(topo_machine **out, struct load *ld, json_t *doc,
		    const char *name_source)
{
	topo_machine *m = NULL;
	json_t *tasks = NULL, *net = NULL, *groups = NULL;
	const char *given = NULL;
	char *name = NULL;
	int rc;

	rc = check_doc(ld, doc, &given, &tasks, &net, &groups);
	if (rc != 0)
		return rc;
	name = given != NULL ? topo__strdup(given) : default_name(name_source);
	if (name == NULL)
		return no_memory(ld);
	/* Now the per-node work. */
	rc = fill_tasks(ld, tasks);
	if (rc == 0)
		rc = build_network(ld, net);
	if (rc != 0)
		goto done;
	rc = topo__machine_build(&m, name, ld->nodes, ld->node_tasks, ld->eps,
				 ld->net_type, ld->parent, ld->j.err);
	if (rc != 0) {
		topo__err_locate(ld->j.err, ld->j.source, "");
		goto done;
	}
	m->fanout = ld->fanout;
	m->costs = ld->costs;
	m->costs_given = ld->costs_given;
	m->ndims = ld->ndims;
	m->dims = ld->dims;
	ld->dims = NULL;
	if (ld->hosts != NULL) {
		/* Names first: the groups' "hosts" selectors look them up. */
		topo__jget_key(&ld->j, "hosts");
		rc = topo__hosts_set(&ld->j, m, ld->hosts);
		topo__jget_pop(&ld->j);
		if (rc != 0)
			goto done;
	}
	if (groups != NULL) {
		rc = add_groups(ld, m, groups);
		if (rc != 0)
			goto done;
	}
	*out = m;
	m = NULL;
done:
	topo_machine_free(m);
	topo__free(name);
	return rc;
}

/* Parses len bytes of buf; source names them in errors, name_source
 * gives the default machine name (NULL: "machine"). */
static int load(topo_machine **out, const char *buf, size_t len,
		const char *source, const char *name_source, topo_error *err)
{
	struct load ld = {0};
	json_t *doc;
	int rc;

	topo__jget_init(&ld.j, source, err);
	rc = topo__json_parse(buf, len, source, &doc, err);
	if (rc != 0)
		return rc;
	rc = load_doc(out, &ld, doc, name_source);
	json_decref(doc);
	topo__free(ld.node_tasks);
	topo__free(ld.parent);
	topo__free(ld.dims);
	return rc;
}

int topo_machine_load_file(topo_machine **out, const char *path,
			   topo_error *err)
{
	char *buf = NULL;
	size_t len;
	int rc;

	if (out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_machine_load_file: out is required");
	*out = NULL;
	if (path == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_machine_load_file: path is required");
	rc = topo__read_file(path, &buf, &len, err);
	if (rc == 0)
		rc = load(out, buf, len, path, path, err);
	topo__free(buf);
	return rc;
}

int topo_machine_load_string(topo_machine **out, const char *json, size_t len,
			     const char *source, topo_error *err)
{
	if (out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_machine_load_string: out is required");
	*out = NULL;
	if (json == NULL && len > 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_machine_load_string: text is NULL");
	return load(out, json != NULL ? json : "", len,
		    source != NULL ? source : "<string>", source, err);
}
