/*
 * machine.c - loading a machine description (collc(5)): checking every
 * rule of the format on the document json_read.c has parsed, and handing
 * the checked values to topo__machine_build.
 *
 * Every complaint says where (the file and line:column for JSON syntax,
 * from json_read.c; a JSON pointer for meaning), what is wrong and what
 * would be valid.  Checks run in a fixed order (unknown keys of an object
 * before its values, then the values in the order of the format's
 * description), so a file with several faults always gets the same first
 * complaint.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The torus generator keeps one coordinate per dimension on its stack. */
#define MAX_DIMS 32

/* Longest rendering of a string value or a key inside a message (as in
 * json_read.c's syntax errors). */
#define SHOW_MAX 40

/* One load in progress: where complaints go and what has been checked. */
struct load {
	const char *source;
	topo_error *err;
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
};

/* The keys of each object, as collc(5) lists them. */
/* clang-format off */
static const char *const top_keys[] = {
	"name", "nodes", "tasks_per_node", "endpoints_per_task", "network",
	"groups", "costs", NULL};
static const char *const tree_keys[] = {"type", "parent", NULL};
static const char *const kary_keys[] = {"type", "fanout", "physical_root", NULL};
static const char *const torus_keys[] = {"type", "dims", "physical_root", NULL};
/* Before the type is known, any network key may be a typo of another. */
static const char *const any_net_keys[] = {
	"type", "parent", "fanout", "dims", "physical_root", NULL};
/* clang-format on */

/* ---------------------------------------------------------------------- */
/* Describing values in messages */

/* Renders a string as a JSON string literal, shortened, on one line. */
static void show_string(const char *s, char *buf, size_t size)
{
	size_t n = 0, len = strlen(s), i;

	if (size < 16)
		return;
	buf[n++] = '"';
	for (i = 0; i < len && n + 10 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i >= SHOW_MAX && (c & 0xc0) != 0x80) {
			n += (size_t)snprintf(buf + n, size - n, "...");
			break;
		}
		if (c == '"' || c == '\\')
			n += (size_t)snprintf(buf + n, size - n, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, size - n, "\\u%04x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n++] = '"';
	buf[n] = '\0';
}

/* What a value is, for "(got ...)". */
static void show(const json_t *v, char *buf, size_t size)
{
	double d;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		snprintf(buf, size, "an object");
		break;
	case JSON_ARRAY:
		snprintf(buf, size, "an array");
		break;
	case JSON_STRING:
		show_string(json_string_value(v), buf, size);
		break;
	case JSON_INTEGER:
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		break;
	case JSON_REAL:
		/* Keep "4.0" recognisable as the non-integer it is. */
		d = json_real_value(v);
		snprintf(buf, size, "%.15g", d);
		if (strpbrk(buf, ".eEn") == NULL)
			snprintf(buf + strlen(buf), size - strlen(buf), ".0");
		break;
	case JSON_TRUE:
		snprintf(buf, size, "true");
		break;
	case JSON_FALSE:
		snprintf(buf, size, "false");
		break;
	case JSON_NULL:
		snprintf(buf, size, "null");
		break;
	}
}

/* Appends an object key to a JSON pointer.  Control characters become
 * '?' so that a message stays on one line. */
static void pointer_key(char *ptr, size_t size, const char *key)
{
	char clean[256];
	size_t i;

	for (i = 0; key[i] != '\0' && i + 1 < sizeof(clean); i++)
		clean[i] = ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
			       ? '?'
			       : key[i];
	clean[i] = '\0';
	topo__pointer_append(ptr, size, clean);
}

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

static int invalid(struct load *ld, const char *ptr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int invalid(struct load *ld, const char *ptr, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return topo__err(ld->err, TOPO_EINVAL, ld->source, ptr, "%s", text);
}

static int no_memory(struct load *ld)
{
	return topo__err(ld->err, TOPO_ENOMEM, ld->source, NULL,
			 "out of memory loading a machine of %d nodes",
			 (int)ld->nodes);
}

/* v must be an integer in lo..INT32_MAX. */
static int want_int(struct load *ld, const json_t *v, const char *ptr,
		    int32_t lo, int32_t *out)
{
	char got[128];

	if (json_is_integer(v) && json_integer_value(v) >= lo &&
	    json_integer_value(v) <= INT32_MAX) {
		*out = (int32_t)json_integer_value(v);
		return 0;
	}
	show(v, got, sizeof(got));
	if (json_is_integer(v) && json_integer_value(v) > INT32_MAX)
		return invalid(ld, ptr,
			       "must be an integer from %d to 2147483647 "
			       "(got %s)",
			       (int)lo, got);
	return invalid(ld, ptr, "must be an integer >= %d (got %s)", (int)lo,
		       got);
}

/* v must name a node (physical_root). */
static int want_node(struct load *ld, const json_t *v, const char *ptr,
		     int32_t *out)
{
	char got[128], range[32];

	node_range(ld->nodes, range, sizeof(range));
	if (!json_is_integer(v)) {
		show(v, got, sizeof(got));
		return invalid(ld, ptr, "must be a node id %s (got %s)", range,
			       got);
	}
	if (json_integer_value(v) < 0 || json_integer_value(v) >= ld->nodes)
		return invalid(ld, ptr,
			       "node %" JSON_INTEGER_FORMAT
			       " does not exist (nodes: %s)",
			       json_integer_value(v), range);
	*out = (int32_t)json_integer_value(v);
	return 0;
}

/* Refuses any key of obj that is not in valid and does not start with
 * "x-" (the place for users' own annotations). */
static int check_keys(struct load *ld, json_t *obj, const char *at,
		      const char *const *valid, const char *context)
{
	const char *key;
	json_t *v;
	char ptr[256], list[256];
	size_t n = 0;

	json_object_foreach (obj, key, v) {
		size_t i;

		if (strncmp(key, "x-", 2) == 0)
			continue;
		for (i = 0; valid[i] != NULL; i++)
			if (strcmp(key, valid[i]) == 0)
				break;
		if (valid[i] != NULL)
			continue;
		for (i = 0; valid[i] != NULL; i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n,
					      "%s, ", valid[i]);
		snprintf(ptr, sizeof(ptr), "%s", at);
		pointer_key(ptr, sizeof(ptr), key);
		return invalid(ld, ptr, "unknown key%s (valid: %sor x-*)",
			       context, list);
	}
	return 0;
}

/* tasks_per_node: checks it and sums the tasks, allocating nothing (the
 * sum must pass check_limit first). */
static int check_tasks(struct load *ld, json_t *v)
{
	char got[128], ptr[64];
	size_t count;
	int32_t t;
	int rc;

	if (json_is_integer(v)) {
		rc = want_int(ld, v, "/tasks_per_node", 1, &t);
		if (rc == 0)
			ld->tasks = (int64_t)t * ld->nodes;
		return rc;
	}
	if (!json_is_array(v)) {
		show(v, got, sizeof(got));
		return invalid(ld, "/tasks_per_node",
			       "must be an integer >= 1 or an array of %d "
			       "integers >= 1 (got %s)",
			       (int)ld->nodes, got);
	}
	count = json_array_size(v);
	if (count != (size_t)ld->nodes)
		return invalid(ld, "/tasks_per_node",
			       "has %zu entries, want %d (one per node)", count,
			       (int)ld->nodes);
	for (size_t n = 0; n < count; n++) {
		snprintf(ptr, sizeof(ptr), "/tasks_per_node/%zu", n);
		rc = want_int(ld, json_array_get(v, n), ptr, 1, &t);
		if (rc != 0)
			return rc;
		ld->tasks += t;
	}
	return 0;
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
	return topo__err(ld->err, TOPO_ELIMIT, ld->source, NULL,
			 "%lld tasks x %d endpoints = %s endpoints; at most "
			 "2147483647 are supported",
			 (long long)ld->tasks, (int)ld->eps, digits + i);
}

/* Explicit network, first pass: the array and each entry, allocating
 * nothing. */
static int check_tree_entries(struct load *ld, json_t *v)
{
	char got[128], ptr[64], range[32];
	size_t count;

	node_range(ld->nodes, range, sizeof(range));
	if (!json_is_array(v)) {
		show(v, got, sizeof(got));
		return invalid(ld, "/network/parent",
			       "must be an array of %d node ids, -1 for the "
			       "physical root (got %s)",
			       (int)ld->nodes, got);
	}
	count = json_array_size(v);
	if (count != (size_t)ld->nodes)
		return invalid(ld, "/network/parent",
			       "has %zu entries, want %d (one per node)", count,
			       (int)ld->nodes);
	for (int32_t n = 0; n < ld->nodes; n++) {
		json_t *e = json_array_get(v, (size_t)n);
		json_int_t p = json_is_integer(e) ? json_integer_value(e) : 0;

		snprintf(ptr, sizeof(ptr), "/network/parent/%d", (int)n);
		if (!json_is_integer(e) || p < -1) {
			show(e, got, sizeof(got));
			return invalid(ld, ptr,
				       "must be -1 (the physical root) or a "
				       "node id %s (got %s)",
				       range, got);
		}
		if (p >= ld->nodes)
			return invalid(ld, ptr,
				       "node %" JSON_INTEGER_FORMAT
				       " does not exist (nodes: %s)",
				       p, range);
	}
	return 0;
}

/* Explicit network, second pass: the parent array, and that the whole is
 * a tree (which needs a state per node). */
static int build_tree(struct load *ld, json_t *v)
{
	char ptr[64], path[160];
	int32_t *state = NULL, bad, root;
	const char *why;
	int rc = 0;

	for (int32_t n = 0; n < ld->nodes; n++)
		ld->parent[n] = (int32_t)json_integer_value(
		    json_array_get(v, (size_t)n));
	state = topo__mallocarray((size_t)ld->nodes, sizeof(int32_t));
	if (state == NULL)
		return no_memory(ld);
	if (topo__network_check(ld->parent, ld->nodes, state, &bad, &why) == 0)
		goto done;
	snprintf(ptr, sizeof(ptr), "/network/parent/%d", (int)bad);
	if (strcmp(why, "no root") == 0) {
		rc = invalid(ld, "/network/parent",
			     "no entry is -1 (one node must be the physical "
			     "root)");
	} else if (strcmp(why, "second root") == 0) {
		for (root = 0; ld->parent[root] != -1; root++)
			;
		rc = invalid(ld, ptr,
			     "second root (node %d is already the physical "
			     "root)",
			     (int)root);
	} else if (strcmp(why, "own parent") == 0) {
		rc = invalid(ld, ptr, "node %d is its own parent", (int)bad);
	} else if (strcmp(why, "cycle") == 0) {
		/* Show the loop (its first steps), so the fix is obvious. */
		size_t n = (size_t)snprintf(path, sizeof(path), "%d", (int)bad);
		int32_t u = ld->parent[bad];

		for (int steps = 0; steps < 8 && u != bad; steps++) {
			n += (size_t)snprintf(path + n, sizeof(path) - n,
					      " -> %d", (int)u);
			u = ld->parent[u];
		}
		if (u == bad)
			snprintf(path + n, sizeof(path) - n, " -> %d",
				 (int)bad);
		else
			snprintf(path + n, sizeof(path) - n, " -> ...");
		rc = invalid(ld, ptr, "cycle through node %d (%s)", (int)bad,
			     path);
	} else {
		rc = invalid(ld, ptr, "%s", why);
	}
done:
	topo__free(state);
	return rc;
}

/* Torus sizes: 1..32 dimensions of at least 1 whose product is nodes. */
static int load_dims(struct load *ld, json_t *v)
{
	char got[128], ptr[64];
	size_t count;
	int64_t product = 1;
	int rc;

	if (!json_is_array(v)) {
		show(v, got, sizeof(got));
		return invalid(ld, "/network/dims",
			       "must be an array of 1 to %d dimension sizes "
			       "(got %s)",
			       MAX_DIMS, got);
	}
	count = json_array_size(v);
	if (count == 0 || count > MAX_DIMS)
		return invalid(ld, "/network/dims",
			       "has %zu entries, want 1 to %d dimension sizes",
			       count, MAX_DIMS);
	ld->ndims = (int)count;
	ld->dims = topo__mallocarray(count, sizeof(int32_t));
	if (ld->dims == NULL)
		return no_memory(ld);
	for (size_t i = 0; i < count; i++) {
		snprintf(ptr, sizeof(ptr), "/network/dims/%zu", i);
		rc = want_int(ld, json_array_get(v, i), ptr, 1, &ld->dims[i]);
		if (rc != 0)
			return rc;
	}
	/* Stop multiplying once past any possible node count: no overflow,
	 * and the answer is already known. */
	for (size_t i = 0; i < count && product <= INT32_MAX; i++)
		product *= ld->dims[i];
	if (product > INT32_MAX)
		return invalid(ld, "/network/dims",
			       "product is more than 2147483647, want %d "
			       "(nodes)",
			       (int)ld->nodes);
	if (product != ld->nodes)
		return invalid(ld, "/network/dims",
			       "product is %lld, want %d (nodes)",
			       (long long)product, (int)ld->nodes);
	return 0;
}

/* The network, checked without allocating anything per node: its type,
 * its keys, its one required key and every value; an explicit tree's
 * entries one by one (whether they make a tree needs memory per node:
 * build_network).  Sets ld->net_type, ld->fanout, ld->dims, ld->root. */
static int check_network(struct load *ld, json_t *net)
{
	const char *const *valid;
	json_t *type, *v;
	char got[128], context[32];
	int rc;

	if (!json_is_object(net)) {
		show(net, got, sizeof(got));
		return invalid(ld, "/network",
			       "must be an object with \"type\": \"tree\", "
			       "\"kary\" or \"torus\" (got %s)",
			       got);
	}
	type = json_object_get(net, "type");
	if (type == NULL) {
		rc = check_keys(ld, net, "/network", any_net_keys, "");
		if (rc != 0)
			return rc;
		return invalid(ld, "/network",
			       "missing \"type\" (\"tree\", \"kary\" or "
			       "\"torus\")");
	}
	if (json_is_string(type) &&
	    strcmp(json_string_value(type), "tree") == 0) {
		valid = tree_keys;
	} else if (json_is_string(type) &&
		   strcmp(json_string_value(type), "kary") == 0) {
		valid = kary_keys;
	} else if (json_is_string(type) &&
		   strcmp(json_string_value(type), "torus") == 0) {
		valid = torus_keys;
	} else {
		show(type, got, sizeof(got));
		return invalid(ld, "/network/type",
			       "must be \"tree\", \"kary\" or \"torus\" (got "
			       "%s)",
			       got);
	}
	ld->net_type = json_string_value(type);
	snprintf(context, sizeof(context), " for type \"%s\"", ld->net_type);
	rc = check_keys(ld, net, "/network", valid, context);
	if (rc != 0)
		return rc;

	/* Each type's table lists its one required key second. */
	v = json_object_get(net, valid[1]);
	if (v == NULL)
		return invalid(ld, "/network",
			       "missing \"%s\" (required for type \"%s\")",
			       valid[1], ld->net_type);
	if (valid == tree_keys)
		return check_tree_entries(ld, v);
	if (valid == kary_keys)
		rc = want_int(ld, v, "/network/fanout", 1, &ld->fanout);
	else
		rc = load_dims(ld, v);
	if (rc != 0)
		return rc;
	v = json_object_get(net, "physical_root");
	if (v != NULL)
		return want_node(ld, v, "/network/physical_root", &ld->root);
	return 0;
}

/* The node-level parent array, once everything cheap is checked. */
static int build_network(struct load *ld, json_t *net)
{
	ld->parent = topo__mallocarray((size_t)ld->nodes, sizeof(int32_t));
	if (ld->parent == NULL)
		return no_memory(ld);
	if (strcmp(ld->net_type, "tree") == 0)
		return build_tree(ld, json_object_get(net, "parent"));
	if (strcmp(ld->net_type, "kary") == 0)
		topo__network_kary(ld->parent, ld->nodes, ld->fanout, ld->root);
	else
		topo__network_torus(ld->parent, ld->dims, ld->ndims, ld->root);
	return 0;
}

/* The groups' shape, names and specs (read against the machine's sizes);
 * what the specs select needs the built machine. */
static int check_groups(struct load *ld, json_t *groups)
{
	const char *name;
	json_t *v;
	char got[128], ptr[256];
	int rc;

	if (!json_is_object(groups)) {
		show(groups, got, sizeof(got));
		return invalid(ld, "/groups",
			       "must be an object of group name -> stride "
			       "spec (got %s)",
			       got);
	}
	json_object_foreach (groups, name, v) {
		snprintf(ptr, sizeof(ptr), "/groups");
		pointer_key(ptr, sizeof(ptr), name);
		if (name[0] == '\0')
			return invalid(ld, ptr, "group name is empty");
		if (strcmp(name, "world") == 0)
			return invalid(ld, ptr,
				       "the name \"world\" is reserved (the "
				       "group of all endpoints, spec \"all\")");
		if (!json_is_string(v) || json_string_length(v) == 0) {
			show(v, got, sizeof(got));
			return invalid(ld, ptr,
				       "must be a non-empty stride spec "
				       "string such as \"cols 0::2\" (got %s)",
				       got);
		}
		/* Its words and indices, from the sizes alone; whether it
		 * selects anything is for add_groups. */
		rc = topo__spec_syntax(ld->eps, (int32_t)ld->tasks, ld->nodes,
				       (int32_t)(ld->tasks * ld->eps),
				       json_string_value(v), ld->err);
		if (rc != 0) {
			topo__err_locate(ld->err, ld->source, ptr);
			return rc;
		}
	}
	return 0;
}

static int add_groups(struct load *ld, topo_machine *m, json_t *groups)
{
	const char *name;
	json_t *v;
	char ptr[256];
	int rc;

	json_object_foreach (groups, name, v) {
		rc = topo_spec_check(m, json_string_value(v), ld->err);
		if (rc != 0) {
			snprintf(ptr, sizeof(ptr), "/groups");
			pointer_key(ptr, sizeof(ptr), name);
			topo__err_locate(ld->err, ld->source, ptr);
			return rc;
		}
		if (topo__machine_add_group(m, name, json_string_value(v)) != 0)
			return no_memory(ld);
	}
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

/* Checks a parsed document and builds the machine. */
static int load_doc(topo_machine **out, struct load *ld, json_t *doc,
		    const char *name_source)
{
	topo_machine *m = NULL;
	json_t *v, *tasks, *groups, *costs;
	char got[128];
	char *name = NULL;
	int rc;

	if (!json_is_object(doc)) {
		show(doc, got, sizeof(got));
		return invalid(ld, "",
			       "a machine description must be a JSON object "
			       "(got %s)",
			       got);
	}
	rc = check_keys(ld, doc, "", top_keys, "");
	if (rc != 0)
		return rc;

	v = json_object_get(doc, "name");
	if (v != NULL && (!json_is_string(v) || json_string_length(v) == 0)) {
		show(v, got, sizeof(got));
		return invalid(ld, "/name",
			       "must be a non-empty string (got %s)", got);
	}
	name = v != NULL ? topo__strdup(json_string_value(v))
			 : default_name(name_source);
	if (name == NULL)
		return no_memory(ld);

	v = json_object_get(doc, "nodes");
	if (v == NULL) {
		rc = invalid(ld, "",
			     "missing \"nodes\" (the number of compute "
			     "nodes, an integer >= 1)");
		goto done;
	}
	rc = want_int(ld, v, "/nodes", 1, &ld->nodes);
	if (rc != 0)
		goto done;

	v = json_object_get(doc, "tasks_per_node");
	if (v == NULL) {
		rc = invalid(ld, "",
			     "missing \"tasks_per_node\" (an integer "
			     ">= 1, or an array of one per node)");
		goto done;
	}
	tasks = v;
	rc = check_tasks(ld, tasks);
	if (rc != 0)
		goto done;

	ld->eps = 1;
	v = json_object_get(doc, "endpoints_per_task");
	if (v != NULL) {
		rc = want_int(ld, v, "/endpoints_per_task", 1, &ld->eps);
		if (rc != 0)
			goto done;
	}
	rc = check_limit(ld);
	if (rc != 0)
		goto done;

	v = json_object_get(doc, "network");
	if (v == NULL) {
		rc = invalid(ld, "",
			     "missing \"network\" (an object with "
			     "\"type\": \"tree\", \"kary\" or "
			     "\"torus\")");
		goto done;
	}
	rc = check_network(ld, v);
	if (rc != 0)
		goto done;

	groups = json_object_get(doc, "groups");
	if (groups != NULL) {
		rc = check_groups(ld, groups);
		if (rc != 0)
			goto done;
	}

	costs = json_object_get(doc, "costs");
	if (costs != NULL) {
		rc = topo__costs_from_json(costs, ld->source, "/costs",
					   &ld->costs, &ld->costs_given,
					   ld->err);
		if (rc != 0)
			goto done;
	} else {
		topo__costs_default(&ld->costs);
	}

	/* Everything that can be checked without memory in proportion to
	 * the machine has been: a wrong file of 41 bytes that claims half a
	 * billion nodes gets its real error at once, not after gigabytes
	 * (or "out of memory" under a limit).  Now the per-node work. */
	rc = fill_tasks(ld, tasks);
	if (rc == 0)
		rc = build_network(ld, v);
	if (rc != 0)
		goto done;

	rc = topo__machine_build(&m, name, ld->nodes, ld->node_tasks, ld->eps,
				 ld->net_type, ld->parent, ld->err);
	if (rc != 0) {
		topo__err_locate(ld->err, ld->source, "");
		goto done;
	}
	m->fanout = ld->fanout;
	m->costs = ld->costs;
	m->costs_given = ld->costs_given;
	m->ndims = ld->ndims;
	m->dims = ld->dims;
	ld->dims = NULL;
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
	struct load ld = {.source = source, .err = err};
	json_t *doc;
	int rc;

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
