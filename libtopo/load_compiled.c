/*
 * load_compiled.c - loading a collc-routes document (collc(5)) back into a
 * topo_compiled: the machine it was compiled for, its groups, their trees
 * and their route tables.
 *
 * Everything a reader relies on is checked: the machine section is
 * rebuilt and must agree with itself, members are ascending endpoint ids,
 * every tree spans its group and carries the edge labels its machine
 * implies.  The route tables are the exception on purpose: they are kept
 * as written, only checked to name members, so that a hand-edited table
 * can be loaded and replayed and its faults observed (collrun).  A tree
 * may leave its table out ("routes" is optional; topo_compiled_write's
 * TOPO_WRITE_NO_ROUTES): the table is then derived from "parent" by the
 * rules of collc(7), exactly as for a tree built by topo_tree_new.
 *
 * Errors follow the machine loader: JSON syntax with line and column,
 * everything else TOPO_EINVAL with a JSON pointer to the offending value.
 * Keys this version does not know are ignored: collc(5) lets later
 * versions add keys.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <jansson.h>
#include <stdarg.h>
#include <string.h>

/* Pointers here are built from fixed keys and array indexes, so they
 * never need RFC 6901 escaping. */
#define PTR_SIZE 256

struct ld {
	const char *source;
	topo_error *err;
	/* rank_of[ep]: ep's rank in the group being loaded, or -1.  A
	 * lookup table rather than a binary search, because every id in a
	 * route table is looked up. */
	int32_t *rank_of;
};

static int fail(struct ld *l, const char *ptr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int fail(struct ld *l, const char *ptr, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return topo__err(l->err, TOPO_EINVAL, l->source, ptr, "%s", text);
}

static int nomem(struct ld *l, const char *ptr)
{
	return topo__err(l->err, TOPO_ENOMEM, l->source, ptr,
			 "out of memory loading the compile output");
}

static void ptr_fmt(char *buf, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void ptr_fmt(char *buf, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, PTR_SIZE, fmt, ap);
	va_end(ap);
}

static const char *jtype(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "an object";
	case JSON_ARRAY:
		return "an array";
	case JSON_STRING:
		return "a string";
	case JSON_INTEGER:
		return "an integer";
	case JSON_REAL:
		return "a real number";
	case JSON_TRUE:
		return "true";
	case JSON_FALSE:
		return "false";
	case JSON_NULL:
		return "null";
	}
	return "something else";
}

/* obj[key], which must be there; what says what would be valid. */
static int need(struct ld *l, const json_t *obj, const char *objptr,
		const char *key, const char *what, json_t **out)
{
	*out = json_object_get(obj, key);
	if (*out == NULL)
		return fail(l, objptr, "missing \"%s\" (%s)", key, what);
	return 0;
}

static int need_type(struct ld *l, const json_t *v, const char *ptr,
		     json_type type, const char *what)
{
	if (json_typeof(v) != type)
		return fail(l, ptr, "must be %s (got %s)", what, jtype(v));
	return 0;
}

/*
 * An integer in min..max; what names it for the message.  The pointer is
 * a format and its arguments, formatted only on failure: the loops over
 * big arrays call this once per entry.
 */
static int get_int(struct ld *l, const json_t *v, int64_t min, int64_t max,
		   const char *what, int32_t *out, const char *pfmt, ...)
    __attribute__((format(printf, 7, 8)));

static int get_int(struct ld *l, const json_t *v, int64_t min, int64_t max,
		   const char *what, int32_t *out, const char *pfmt, ...)
{
	char ptr[PTR_SIZE];
	json_int_t x = 0;
	va_list ap;

	if (json_is_integer(v)) {
		x = json_integer_value(v);
		if (x >= min && x <= max) {
			*out = (int32_t)x;
			return 0;
		}
	}
	va_start(ap, pfmt);
	vsnprintf(ptr, sizeof(ptr), pfmt, ap);
	va_end(ap);
	if (!json_is_integer(v))
		return fail(l, ptr, "must be %s (got %s)", what, jtype(v));
	return fail(l, ptr, "must be %s (got %lld)", what, (long long)x);
}

/* A key whose value is an integer in min..max. */
static int key_int(struct ld *l, const json_t *obj, const char *objptr,
		   const char *key, int64_t min, int64_t max, const char *what,
		   int32_t *out)
{
	json_t *v;
	int rc = need(l, obj, objptr, key, what, &v);

	if (rc != 0)
		return rc;
	return get_int(l, v, min, max, what, out, "%s/%s", objptr, key);
}

static int key_string(struct ld *l, const json_t *obj, const char *objptr,
		      const char *key, const char **out)
{
	char ptr[PTR_SIZE];
	json_t *v;
	int rc = need(l, obj, objptr, key, "a string", &v);

	if (rc != 0)
		return rc;
	ptr_fmt(ptr, "%s/%s", objptr, key);
	rc = need_type(l, v, ptr, JSON_STRING, "a string");
	if (rc != 0)
		return rc;
	*out = json_string_value(v);
	return 0;
}

/* An array of exactly n entries (n < 0: any length). */
static int key_array(struct ld *l, const json_t *obj, const char *objptr,
		     const char *key, int64_t n, const char *what, json_t **out)
{
	char ptr[PTR_SIZE];
	int rc = need(l, obj, objptr, key, what, out);

	if (rc != 0)
		return rc;
	ptr_fmt(ptr, "%s/%s", objptr, key);
	if (!json_is_array(*out))
		return fail(l, ptr, "must be %s (got %s)", what, jtype(*out));
	if (n >= 0 && (int64_t)json_array_size(*out) != n)
		return fail(l, ptr, "must be %s (got %zu entries)", what,
			    json_array_size(*out));
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The machine section */

static const char *network_why(const char *why)
{
	if (strcmp(why, "cycle") == 0)
		return "is on a cycle (its parent chain never reaches the "
		       "physical root)";
	if (strcmp(why, "own parent") == 0)
		return "is its own parent";
	if (strcmp(why, "second root") == 0)
		return "is a second root (exactly one node has parent -1)";
	return why;
}

/* The shape parameters, when given, must generate the parent array that
 * is written: a "kary" network that is not k-ary would mislead every
 * reader of the file. */
static int check_generated(struct ld *l, const topo_machine *m,
			   const int32_t *want, const char *shape)
{
	char ptr[PTR_SIZE];

	for (int32_t i = 0; i < m->nodes; i++) {
		if (m->net_parent[i] == want[i])
			continue;
		ptr_fmt(ptr, "/machine/network/parent/%d", (int)i);
		return fail(l, ptr, "node %d has parent %d, but %s gives %d",
			    (int)i, (int)m->net_parent[i], shape, (int)want[i]);
	}
	return 0;
}

static int load_shape(struct ld *l, topo_machine *m, const json_t *net)
{
	const char *base = "/machine/network";
	int32_t *want = NULL;
	char shape[256];
	size_t len;
	json_t *v;
	int rc = 0;

	if (strcmp(m->net_type, "kary") == 0 &&
	    (v = json_object_get(net, "fanout")) != NULL) {
		rc = get_int(l, v, 1, INT32_MAX, "an integer >= 1", &m->fanout,
			     "/machine/network/fanout");
		if (rc != 0)
			goto done;
		want = topo__mallocarray((size_t)m->nodes, sizeof(int32_t));
		if (want == NULL) {
			rc = nomem(l, base);
			goto done;
		}
		topo__network_kary(want, m->nodes, m->fanout, m->physical_root);
		snprintf(shape, sizeof(shape),
			 "a kary network of fanout %d rooted at node %d",
			 (int)m->fanout, (int)m->physical_root);
		rc = check_generated(l, m, want, shape);
	} else if (strcmp(m->net_type, "torus") == 0 &&
		   (v = json_object_get(net, "dims")) != NULL) {
		size_t nd = json_is_array(v) ? json_array_size(v) : 0;
		int64_t product = 1;

		if (!json_is_array(v) || nd < 1 || nd > 32) {
			rc = fail(l, "/machine/network/dims",
				  "must be an array of 1 to 32 integers >= 1");
			goto done;
		}
		m->dims = topo__mallocarray(nd, sizeof(int32_t));
		want = topo__mallocarray((size_t)m->nodes, sizeof(int32_t));
		if (m->dims == NULL || want == NULL) {
			rc = nomem(l, base);
			goto done;
		}
		m->ndims = (int)nd;
		for (size_t i = 0; i < nd; i++) {
			rc = get_int(l, json_array_get(v, i), 1, INT32_MAX,
				     "an integer >= 1", &m->dims[i],
				     "/machine/network/dims/%zu", i);
			if (rc != 0)
				goto done;
			if (product <= INT32_MAX)
				product *= m->dims[i];
		}
		if (product != m->nodes) {
			rc = fail(l, "/machine/network/dims",
				  "the product of dims is %lld, not the %d "
				  "nodes",
				  (long long)product, (int)m->nodes);
			goto done;
		}
		topo__network_torus(want, m->dims, m->ndims, m->physical_root);
		len = (size_t)snprintf(shape, sizeof(shape),
				       "a torus network of dims [");
		for (int i = 0; i < m->ndims && len < sizeof(shape); i++)
			len += (size_t)snprintf(
			    shape + len, sizeof(shape) - len, "%s%d",
			    i > 0 ? ", " : "", (int)m->dims[i]);
		if (len < sizeof(shape))
			snprintf(shape + len, sizeof(shape) - len,
				 "] rooted at node %d", (int)m->physical_root);
		rc = check_generated(l, m, want, shape);
	}
done:
	topo__free(want);
	return rc;
}

static int load_machine(struct ld *l, const json_t *root, topo_machine **out)
{
	static const char *const types[] = {"tree", "kary", "torus"};
	const char *name, *type;
	int32_t nodes, tasks, eps, endpoints, proot, bad;
	int32_t *node_tasks = NULL, *parent = NULL, *scratch = NULL;
	int64_t sum = 0;
	json_t *mj, *net, *arr;
	const char *why;
	char ptr[PTR_SIZE];
	topo_machine *m = NULL;
	size_t t;
	int rc;

	*out = NULL;
	rc = need(l, root, "", "machine", "an object", &mj);
	if (rc == 0)
		rc = need_type(l, mj, "/machine", JSON_OBJECT, "an object");
	if (rc == 0)
		rc = key_string(l, mj, "/machine", "name", &name);
	if (rc == 0)
		rc = key_int(l, mj, "/machine", "nodes", 1, INT32_MAX,
			     "an integer >= 1", &nodes);
	if (rc == 0)
		rc = key_int(l, mj, "/machine", "tasks", 1, INT32_MAX,
			     "an integer >= 1", &tasks);
	if (rc == 0)
		rc = key_int(l, mj, "/machine", "endpoints_per_task", 1,
			     INT32_MAX, "an integer >= 1", &eps);
	if (rc == 0)
		rc = key_int(l, mj, "/machine", "endpoints", 1, INT32_MAX,
			     "an integer >= 1", &endpoints);
	if (rc != 0)
		goto done;

	snprintf(ptr, sizeof(ptr),
		 "an array of %d integers >= 1 (one per "
		 "node)",
		 (int)nodes);
	rc = key_array(l, mj, "/machine", "tasks_per_node", nodes, ptr, &arr);
	if (rc != 0)
		goto done;
	node_tasks = topo__mallocarray((size_t)nodes, sizeof(int32_t));
	parent = topo__mallocarray((size_t)nodes, sizeof(int32_t));
	scratch = topo__mallocarray((size_t)nodes, sizeof(int32_t));
	if (node_tasks == NULL || parent == NULL || scratch == NULL) {
		rc = nomem(l, "/machine");
		goto done;
	}
	for (int32_t n = 0; n < nodes; n++) {
		rc = get_int(l, json_array_get(arr, (size_t)n), 1, INT32_MAX,
			     "an integer >= 1", &node_tasks[n],
			     "/machine/tasks_per_node/%d", (int)n);
		if (rc != 0)
			goto done;
		sum += node_tasks[n];
	}
	if (sum != tasks) {
		rc = fail(l, "/machine/tasks",
			  "%d does not match tasks_per_node, which sums to "
			  "%lld",
			  (int)tasks, (long long)sum);
		goto done;
	}

	rc = need(l, mj, "/machine", "network", "an object", &net);
	if (rc == 0)
		rc = need_type(l, net, "/machine/network", JSON_OBJECT,
			       "an object");
	if (rc == 0)
		rc = key_string(l, net, "/machine/network", "type", &type);
	if (rc != 0)
		goto done;
	for (t = 0; t < 3; t++)
		if (strcmp(type, types[t]) == 0)
			break;
	if (t == 3) {
		rc = fail(l, "/machine/network/type",
			  "\"%s\" is not a network type (valid: tree, kary, "
			  "torus)",
			  type);
		goto done;
	}
	snprintf(ptr, sizeof(ptr), "a node id in 0..%d", (int)nodes - 1);
	rc = key_int(l, net, "/machine/network", "physical_root", 0, nodes - 1,
		     ptr, &proot);
	if (rc != 0)
		goto done;
	snprintf(ptr, sizeof(ptr),
		 "an array of %d node ids (-1 at the "
		 "physical root)",
		 (int)nodes);
	rc = key_array(l, net, "/machine/network", "parent", nodes, ptr, &arr);
	if (rc != 0)
		goto done;
	for (int32_t n = 0; n < nodes; n++) {
		json_t *v = json_array_get(arr, (size_t)n);

		if (json_is_integer(v) && json_integer_value(v) >= -1 &&
		    json_integer_value(v) < nodes) {
			parent[n] = (int32_t)json_integer_value(v);
			continue;
		}
		ptr_fmt(ptr, "/machine/network/parent/%d", (int)n);
		if (!json_is_integer(v))
			rc = fail(l, ptr, "must be a node id or -1 (got %s)",
				  jtype(v));
		else
			rc = fail(l, ptr,
				  "node %lld does not exist (nodes: "
				  "0..%d, or -1 at the physical root)",
				  (long long)json_integer_value(v),
				  (int)nodes - 1);
		goto done;
	}
	if (topo__network_check(parent, nodes, scratch, &bad, &why) != 0) {
		if (bad < 0) {
			rc = fail(l, "/machine/network/parent",
				  "no node has parent -1 (exactly one, the "
				  "physical root, must)");
		} else {
			ptr_fmt(ptr, "/machine/network/parent/%d", (int)bad);
			rc = fail(l, ptr, "node %d %s", (int)bad,
				  network_why(why));
		}
		goto done;
	}
	if (parent[proot] != -1) {
		for (int32_t n = 0; n < nodes; n++)
			if (parent[n] == -1)
				bad = n;
		rc = fail(l, "/machine/network/physical_root",
			  "%d is not the root of the network's parent array "
			  "(node %d is)",
			  (int)proot, (int)bad);
		goto done;
	}

	rc = topo__machine_build(&m, name, nodes, node_tasks, eps, type, parent,
				 l->err);
	if (rc != 0) {
		topo__err_locate(l->err, l->source, "/machine");
		goto done;
	}
	if (m->endpoints != endpoints) {
		rc = fail(l, "/machine/endpoints",
			  "%d does not match tasks x endpoints_per_task "
			  "(%d x %d = %d)",
			  (int)endpoints, (int)m->tasks, (int)m->eps_per_task,
			  (int)m->endpoints);
		goto done;
	}
	rc = load_shape(l, m, net);
	if (rc != 0)
		goto done;
	*out = m;
	m = NULL;
done:
	topo_machine_free(m);
	topo__free(node_tasks);
	topo__free(parent);
	topo__free(scratch);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Groups */

/* An endpoint id that must be a member of g (or -1 when allow_none):
 * its rank, through *rank.  The pointer is formatted only on failure. */
static int get_member(struct ld *l, const json_t *v, const topo_group *g,
		      int allow_none, int32_t *rank, const char *pfmt, ...)
    __attribute__((format(printf, 6, 7)));

static int get_member(struct ld *l, const json_t *v, const topo_group *g,
		      int allow_none, int32_t *rank, const char *pfmt, ...)
{
	char ptr[PTR_SIZE];
	json_int_t x = 0;
	va_list ap;

	if (json_is_integer(v)) {
		x = json_integer_value(v);
		if (allow_none && x == -1) {
			*rank = -1;
			return 0;
		}
		if (x >= 0 && x < g->m->endpoints &&
		    (*rank = l->rank_of[x]) >= 0)
			return 0;
	}
	va_start(ap, pfmt);
	vsnprintf(ptr, sizeof(ptr), pfmt, ap);
	va_end(ap);
	if (!json_is_integer(v))
		return fail(l, ptr, "must be an endpoint id%s (got %s)",
			    allow_none ? " or -1" : "", jtype(v));
	return fail(l, ptr, "endpoint %lld is not a member of group \"%s\"",
		    (long long)x, g->name);
}

static int load_members(struct ld *l, const topo_machine *m, const json_t *gj,
			const char *gptr, int32_t **out, int32_t *count)
{
	int32_t *mem = NULL, size;
	char ptr[PTR_SIZE];
	json_t *arr, *v;
	size_t n;
	int rc;

	*out = NULL;
	rc = key_array(l, gj, gptr, "members", -1,
		       "an array of endpoint ids, ascending", &arr);
	if (rc != 0)
		return rc;
	n = json_array_size(arr);
	ptr_fmt(ptr, "%s/members", gptr);
	if (n == 0)
		return fail(l, ptr, "a group has at least one member");
	if (n > (size_t)m->endpoints)
		return fail(l, ptr,
			    "%zu members, but the machine has only "
			    "%d endpoints",
			    n, (int)m->endpoints);
	mem = topo__mallocarray(n, sizeof(int32_t));
	if (mem == NULL)
		return nomem(l, ptr);
	for (size_t i = 0; i < n; i++) {
		v = json_array_get(arr, i);
		if (json_is_integer(v) && json_integer_value(v) >= 0 &&
		    json_integer_value(v) < m->endpoints &&
		    (i == 0 || json_integer_value(v) > mem[i - 1])) {
			mem[i] = (int32_t)json_integer_value(v);
			continue;
		}
		ptr_fmt(ptr, "%s/members/%zu", gptr, i);
		if (!json_is_integer(v)) {
			rc = fail(l, ptr, "must be an endpoint id (got %s)",
				  jtype(v));
			goto fail;
		}
		if (json_integer_value(v) < 0 ||
		    json_integer_value(v) >= m->endpoints) {
			rc = fail(l, ptr,
				  "endpoint %lld does not exist "
				  "(endpoints: 0..%d)",
				  (long long)json_integer_value(v),
				  (int)m->endpoints - 1);
			goto fail;
		}
		mem[i] = (int32_t)json_integer_value(v);
		if (i > 0 && mem[i] <= mem[i - 1]) {
			rc = fail(l, ptr,
				  "%d follows %d (members are "
				  "strictly ascending)",
				  (int)mem[i], (int)mem[i - 1]);
			goto fail;
		}
	}
	if ((v = json_object_get(gj, "size")) != NULL) {
		rc = get_int(l, v, 1, INT32_MAX, "an integer >= 1", &size,
			     "%s/size", gptr);
		if (rc != 0)
			goto fail;
		ptr_fmt(ptr, "%s/size", gptr);
		if ((size_t)size != n) {
			rc = fail(l, ptr, "%d does not match the %zu members",
				  (int)size, n);
			goto fail;
		}
	}
	*out = mem;
	*count = (int32_t)n;
	return 0;
fail:
	topo__free(mem);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Trees */

/* The parent array in ranks, checked to make a spanning tree rooted at
 * `root` (a rank), with a reason in words for each way it can fail. */
static int load_parent(struct ld *l, const topo_group *g, const json_t *tj,
		       const char *tptr, int32_t root, int32_t **out)
{
	const int32_t *mem = g->members;
	int32_t n = g->size, *parent = NULL, *scratch = NULL, bad;
	const char *why;
	char ptr[PTR_SIZE], what[96];
	json_t *arr;
	int rc;

	*out = NULL;
	snprintf(what, sizeof(what),
		 "an array of %d endpoint ids aligned "
		 "with members",
		 (int)n);
	rc = key_array(l, tj, tptr, "parent", n, what, &arr);
	if (rc != 0)
		return rc;
	parent = topo__mallocarray((size_t)n, sizeof(int32_t));
	scratch = topo__mallocarray((size_t)n, sizeof(int32_t));
	if (parent == NULL || scratch == NULL) {
		rc = nomem(l, tptr);
		goto fail;
	}
	for (int32_t r = 0; r < n; r++) {
		rc = get_member(l, json_array_get(arr, (size_t)r), g, 1,
				&parent[r], "%s/parent/%d", tptr, (int)r);
		if (rc != 0)
			goto fail;
		if ((r == root) == (parent[r] == -1) && parent[r] != r)
			continue;
		ptr_fmt(ptr, "%s/parent/%d", tptr, (int)r);
		if (r == root)
			rc = fail(l, ptr,
				  "endpoint %d is the root, so its "
				  "parent is -1, not %d",
				  (int)mem[r], (int)mem[parent[r]]);
		else if (parent[r] == -1)
			rc = fail(l, ptr,
				  "endpoint %d has parent -1, but the "
				  "root is endpoint %d",
				  (int)mem[r], (int)mem[root]);
		else
			rc = fail(l, ptr, "endpoint %d is its own parent",
				  (int)mem[r]);
		goto fail;
	}
	/* One root and parents in range are settled above; what is left for
	 * the check to find is a cycle. */
	if (topo__network_check(parent, n, scratch, &bad, &why) != 0) {
		ptr_fmt(ptr, "%s/parent/%d", tptr, (int)(bad < 0 ? 0 : bad));
		rc = fail(l, ptr,
			  "endpoint %d is on a cycle (its parent "
			  "chain never reaches the root, endpoint %d)",
			  (int)mem[bad < 0 ? 0 : bad], (int)mem[root]);
		goto fail;
	}
	topo__free(scratch);
	*out = parent;
	return 0;
fail:
	topo__free(scratch);
	topo__free(parent);
	return rc;
}

static int check_edges(struct ld *l, const topo_tree *t, const json_t *tj,
		       const char *tptr)
{
	const topo_machine *m = t->g->m;
	const int32_t *mem = t->g->members;
	char ptr[PTR_SIZE], what[96];
	json_t *arr;
	int rc;

	snprintf(what, sizeof(what),
		 "an array of %d edge labels aligned "
		 "with members",
		 (int)t->n);
	rc = key_array(l, tj, tptr, "edge", t->n, what, &arr);
	if (rc != 0)
		return rc;
	for (int32_t r = 0; r < t->n; r++) {
		json_t *v = json_array_get(arr, (size_t)r);
		const char *want = topo_edge_name((enum topo_edge)t->edge[r]);
		const char *got;
		int32_t p = t->parent[r], node, pnode;

		if (json_is_string(v) &&
		    strcmp(json_string_value(v), want) == 0)
			continue;
		ptr_fmt(ptr, "%s/edge/%d", tptr, (int)r);
		if (!json_is_string(v))
			return fail(l, ptr,
				    "must be an edge label: root, "
				    "shm or net (got %s)",
				    jtype(v));
		got = json_string_value(v);
		if (strcmp(got, "root") != 0 && strcmp(got, "shm") != 0 &&
		    strcmp(got, "net") != 0)
			return fail(l, ptr,
				    "\"%s\" is not an edge label "
				    "(valid: root, shm, net)",
				    got);
		if (p < 0)
			return fail(l, ptr,
				    "\"%s\" is wrong: endpoint %d is "
				    "the root, so its edge is \"root\"",
				    got, (int)mem[r]);
		node = topo_machine_endpoint_node(m, mem[r]);
		pnode = topo_machine_endpoint_node(m, mem[p]);
		if (node == pnode)
			return fail(l, ptr,
				    "\"%s\" is wrong: endpoint %d and "
				    "its parent %d are both on node %d, so "
				    "the edge is \"shm\"",
				    got, (int)mem[r], (int)mem[p], (int)node);
		return fail(l, ptr,
			    "\"%s\" is wrong: endpoint %d is on node "
			    "%d and its parent %d on node %d, so the edge is "
			    "\"net\"",
			    got, (int)mem[r], (int)node, (int)mem[p],
			    (int)pnode);
	}
	return 0;
}

/* "depth" and "edges" are derived data: optional, but never wrong. */
static int check_summary(struct ld *l, const topo_tree *t, const json_t *tj,
			 const char *tptr)
{
	static const char *const kinds[] = {"shm", "net"};
	char ptr[PTR_SIZE];
	json_t *v, *e;
	int32_t x;
	int rc;

	if ((v = json_object_get(tj, "depth")) != NULL) {
		rc = get_int(l, v, 0, INT32_MAX, "an integer >= 0", &x,
			     "%s/depth", tptr);
		if (rc != 0)
			return rc;
		ptr_fmt(ptr, "%s/depth", tptr);
		if (x != t->depth)
			return fail(l, ptr,
				    "%d does not match the tree, whose "
				    "depth is %d",
				    (int)x, (int)t->depth);
	}
	if ((e = json_object_get(tj, "edges")) == NULL)
		return 0;
	ptr_fmt(ptr, "%s/edges", tptr);
	rc = need_type(l, e, ptr, JSON_OBJECT, "an object");
	if (rc != 0)
		return rc;
	for (int k = 0; k < 2; k++) {
		int64_t have = k == 0 ? t->shm : t->net;

		if ((v = json_object_get(e, kinds[k])) == NULL)
			continue;
		rc = get_int(l, v, 0, INT32_MAX, "an integer >= 0", &x,
			     "%s/edges/%s", tptr, kinds[k]);
		if (rc != 0)
			return rc;
		ptr_fmt(ptr, "%s/edges/%s", tptr, kinds[k]);
		if (x != have)
			return fail(l, ptr,
				    "%d does not match the tree, which "
				    "has %lld %s edges",
				    (int)x, (long long)have, kinds[k]);
	}
	return 0;
}

/*
 * The route table, kept as written but grouped by the member it belongs
 * to (a stable counting sort, so each member's rows stay in file order).
 * Structure is checked, meaning is not: every row is [at, from, [to...]]
 * naming members (from may be -1), and no member has two rows for one
 * origin, which would make the table ambiguous rather than wrong.
 * Without "routes" the tree keeps no table (row_off NULL): it is derived.
 */
static int load_routes(struct ld *l, topo_tree *t, const json_t *tj,
		       const char *tptr)
{
	const topo_group *g = t->g;
	int32_t n = t->n, rows;
	int32_t *at = NULL, *from = NULL, *to = NULL, *slot_row = NULL;
	int32_t *stamp = NULL, *first = NULL;
	int64_t *to_off = NULL, total = 0;
	char ptr[PTR_SIZE];
	json_t *arr;
	int rc;

	if (json_object_get(tj, "routes") == NULL)
		return 0;
	rc = key_array(l, tj, tptr, "routes", -1,
		       "an array of rows [at, from, [to...]]", &arr);
	if (rc != 0)
		return rc;
	if (json_array_size(arr) > INT32_MAX) {
		ptr_fmt(ptr, "%s/routes", tptr);
		return topo__err(l->err, TOPO_ELIMIT, l->source, ptr,
				 "%zu rows; at most 2147483647 are supported",
				 json_array_size(arr));
	}
	rows = (int32_t)json_array_size(arr);
	for (int32_t i = 0; i < rows; i++)
		total += (int64_t)json_array_size(
		    json_array_get(json_array_get(arr, (size_t)i), 2));
	at = topo__mallocarray((size_t)rows + 1, sizeof(int32_t));
	from = topo__mallocarray((size_t)rows + 1, sizeof(int32_t));
	to_off = topo__mallocarray((size_t)rows + 1, sizeof(int64_t));
	to = topo__mallocarray((size_t)total + 1, sizeof(int32_t));
	t->row_off = topo__calloc((size_t)n + 1, sizeof(int32_t));
	t->row_from = topo__mallocarray((size_t)rows + 1, sizeof(int32_t));
	t->row_to_off = topo__mallocarray((size_t)rows + 1, sizeof(int64_t));
	t->row_to = topo__mallocarray((size_t)total + 1, sizeof(int32_t));
	slot_row = topo__mallocarray((size_t)rows + 1, sizeof(int32_t));
	if (at == NULL || from == NULL || to_off == NULL || to == NULL ||
	    t->row_off == NULL || t->row_from == NULL ||
	    t->row_to_off == NULL || t->row_to == NULL || slot_row == NULL) {
		rc = nomem(l, tptr);
		goto done;
	}

	/* Pass 1, file order: check each row, note its member and origin,
	 * and collect its targets as ranks. */
	to_off[0] = 0;
	for (int32_t i = 0; i < rows; i++) {
		json_t *row = json_array_get(arr, (size_t)i), *tl;
		int64_t k = to_off[i];

		if (!json_is_array(row) || json_array_size(row) != 3) {
			ptr_fmt(ptr, "%s/routes/%d", tptr, (int)i);
			rc = fail(l, ptr,
				  "must be a row [at, from, [to...]] "
				  "(got %s%s)",
				  jtype(row),
				  json_is_array(row) ? " of another length"
						     : "");
			goto done;
		}
		rc = get_member(l, json_array_get(row, 0), g, 0, &at[i],
				"%s/routes/%d/0", tptr, (int)i);
		if (rc != 0)
			goto done;
		rc = get_member(l, json_array_get(row, 1), g, 1, &from[i],
				"%s/routes/%d/1", tptr, (int)i);
		if (rc != 0)
			goto done;
		tl = json_array_get(row, 2);
		if (!json_is_array(tl)) {
			ptr_fmt(ptr, "%s/routes/%d/2", tptr, (int)i);
			rc = fail(l, ptr,
				  "must be an array of endpoint ids "
				  "to forward to (got %s)",
				  jtype(tl));
			goto done;
		}
		for (size_t j = 0; j < json_array_size(tl); j++) {
			rc =
			    get_member(l, json_array_get(tl, j), g, 0, &to[k++],
				       "%s/routes/%d/2/%zu", tptr, (int)i, j);
			if (rc != 0)
				goto done;
		}
		to_off[i + 1] = k;
		t->row_off[at[i] + 1]++;
	}

	/* Pass 2: each member's rows together, in file order. */
	for (int32_t r = 0; r < n; r++)
		t->row_off[r + 1] += t->row_off[r];
	for (int32_t i = 0; i < rows; i++)
		slot_row[t->row_off[at[i]]++] = i;
	for (int32_t r = n; r > 0; r--)
		t->row_off[r] = t->row_off[r - 1];
	t->row_off[0] = 0;
	t->row_to_off[0] = 0;
	for (int32_t s = 0; s < rows; s++) {
		int32_t i = slot_row[s];
		int64_t len = to_off[i + 1] - to_off[i];

		t->row_from[s] = from[i];
		memcpy(t->row_to + t->row_to_off[s], to + to_off[i],
		       (size_t)len * sizeof(int32_t));
		t->row_to_off[s + 1] = t->row_to_off[s] + len;
	}

	/* No two rows of a member for one origin.  stamp[f + 1] holds the
	 * last member that had a row from f, first[f + 1] that row. */
	stamp = topo__mallocarray((size_t)n + 1, sizeof(int32_t));
	first = topo__mallocarray((size_t)n + 1, sizeof(int32_t));
	if (stamp == NULL || first == NULL) {
		rc = nomem(l, tptr);
		goto done;
	}
	for (int32_t r = 0; r <= n; r++)
		stamp[r] = -1;
	for (int32_t r = 0; r < n; r++) {
		for (int32_t s = t->row_off[r]; s < t->row_off[r + 1]; s++) {
			int32_t f = t->row_from[s] + 1;

			if (stamp[f] != r) {
				stamp[f] = r;
				first[f] = slot_row[s];
				continue;
			}
			ptr_fmt(ptr, "%s/routes/%d", tptr, (int)slot_row[s]);
			if (f == 0)
				rc = fail(l, ptr,
					  "a second origin row for "
					  "endpoint %d (the first is row %d)",
					  (int)g->members[r], (int)first[f]);
			else
				rc =
				    fail(l, ptr,
					 "a second row for endpoint "
					 "%d arriving from endpoint %d (the "
					 "first is row %d)",
					 (int)g->members[r],
					 (int)g->members[f - 1], (int)first[f]);
			goto done;
		}
	}
	rc = 0;
done:
	topo__free(at);
	topo__free(from);
	topo__free(to_off);
	topo__free(to);
	topo__free(slot_row);
	topo__free(stamp);
	topo__free(first);
	return rc;
}

static int load_tree(struct ld *l, const topo_group *g, const json_t *tj,
		     const char *tptr, topo_tree **out)
{
	int32_t root, *parent = NULL, bad;
	const char *name;
	json_t *v;
	topo_tree *t = NULL;
	int rc;

	*out = NULL;
	rc = need_type(l, tj, tptr, JSON_OBJECT, "an object");
	if (rc == 0)
		rc = key_string(l, tj, tptr, "name", &name);
	if (rc == 0)
		rc = need(l, tj, tptr, "root", "the root's endpoint id", &v);
	if (rc != 0)
		return rc;
	rc = get_member(l, v, g, 0, &root, "%s/root", tptr);
	if (rc == 0)
		rc = load_parent(l, g, tj, tptr, root, &parent);
	if (rc != 0)
		return rc;
	rc = topo__tree_from_parent(&t, g, name, parent, &bad);
	if (rc == TOPO_ENOMEM)
		return nomem(l, tptr);
	if (rc != 0)
		/* load_parent has ruled out everything the check finds. */
		return fail(l, tptr,
			    "internal error: not a spanning tree at "
			    "rank %d",
			    (int)bad);
	rc = check_edges(l, t, tj, tptr);
	if (rc == 0)
		rc = check_summary(l, t, tj, tptr);
	if (rc == 0)
		rc = load_routes(l, t, tj, tptr);
	if (rc != 0) {
		topo_tree_free(t);
		return rc;
	}
	*out = t;
	return 0;
}

/* Names by index, for first_duplicate(). */
static const char *tree_name(const void *items, size_t i)
{
	return ((topo_tree *const *)items)[i]->name;
}

static const char *group_name(const void *items, size_t i)
{
	return ((topo_group *const *)items)[i]->name;
}

struct named {
	const char *name;
	size_t index;
};

static int cmp_named(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c != 0)
		return c;
	return x->index < y->index ? -1 : x->index > y->index;
}

/*
 * Finds the first item (in index order) whose name an earlier item already
 * has: *dup is its index, *first the earlier one's.  Sorting keeps this
 * O(n log n) where comparing every pair would let a hostile file with many
 * groups take quadratic time.  Returns 1 when found, 0 when the names are
 * unique, -1 when out of memory.
 */
static int first_duplicate(size_t n,
			   const char *(*name)(const void *items, size_t i),
			   const void *items, size_t *dup, size_t *first)
{
	struct named *v;
	int found = 0;

	if (n < 2)
		return 0;
	v = topo__mallocarray(n, sizeof(*v));
	if (v == NULL)
		return -1;
	for (size_t i = 0; i < n; i++) {
		v[i].name = name(items, i);
		v[i].index = i;
	}
	qsort(v, n, sizeof(*v), cmp_named);
	/* In a run of equal names the first entry has the lowest index, the
	 * second is that name's first repeat; the earliest repeat wins. */
	for (size_t i = 1; i < n; i++) {
		if (strcmp(v[i].name, v[i - 1].name) != 0 ||
		    (i >= 2 && strcmp(v[i - 1].name, v[i - 2].name) == 0))
			continue;
		if (!found || v[i].index < *dup) {
			*dup = v[i].index;
			*first = v[i - 1].index;
			found = 1;
		}
	}
	topo__free(v);
	return found;
}

static int load_trees(struct ld *l, topo_compiled *c, size_t gi,
		      const json_t *gj, const char *gptr)
{
	const char *name = c->groups[gi]->name;
	const char *spec = c->groups[gi]->spec;
	char ptr[PTR_SIZE];
	json_t *trees;
	size_t nt;
	int rc;

	/* The machine remembers the description's groups, so that
	 * compiling it again gives the same groups; "world" is implied. */
	if (strcmp(name, "world") != 0 &&
	    topo__machine_add_group(c->owned, name, spec) != 0)
		return nomem(l, gptr);

	rc = key_array(l, gj, gptr, "trees", -1, "an array of trees", &trees);
	if (rc != 0)
		return rc;
	nt = json_array_size(trees);
	c->trees[gi] = topo__calloc(nt, sizeof(topo_tree *));
	if (c->trees[gi] == NULL)
		return nomem(l, gptr);
	for (size_t j = 0; j < nt; j++) {
		topo_tree *t;

		ptr_fmt(ptr, "%s/trees/%zu", gptr, j);
		rc = load_tree(l, c->groups[gi], json_array_get(trees, j), ptr,
			       &t);
		if (rc != 0)
			return rc;
		c->trees[gi][c->ntrees[gi]++] = t;
	}
	{
		size_t dup, first;

		rc = first_duplicate(nt, tree_name, c->trees[gi], &dup, &first);
		if (rc < 0)
			return nomem(l, gptr);
		if (rc > 0) {
			ptr_fmt(ptr, "%s/trees/%zu/name", gptr, dup);
			return fail(l, ptr,
				    "tree \"%s\" is already defined "
				    "at %s/trees/%zu (tree names are unique "
				    "in a group)",
				    c->trees[gi][dup]->name, gptr, first);
		}
	}
	return 0;
}

static int load_group(struct ld *l, topo_compiled *c, size_t gi,
		      const json_t *gj)
{
	topo_machine *m = c->owned;
	const char *name, *spec;
	int32_t *mem = NULL, n = 0;
	char gptr[PTR_SIZE];
	int rc;

	ptr_fmt(gptr, "/groups/%zu", gi);
	rc = need_type(l, gj, gptr, JSON_OBJECT, "an object");
	if (rc == 0)
		rc = key_string(l, gj, gptr, "name", &name);
	if (rc == 0)
		rc = key_string(l, gj, gptr, "spec", &spec);
	if (rc != 0)
		return rc;
	rc = load_members(l, m, gj, gptr, &mem, &n);
	if (rc != 0)
		return rc;
	if (topo__group_from_members(&c->groups[gi], m, name, spec, mem, n) !=
	    0)
		return nomem(l, gptr);
	for (int32_t r = 0; r < n; r++)
		l->rank_of[mem[r]] = r;
	rc = load_trees(l, c, gi, gj, gptr);
	/* Back to all -1 for the next group, in time linear in this one. */
	for (int32_t r = 0; r < n; r++)
		l->rank_of[mem[r]] = -1;
	return rc;
}

/* ---------------------------------------------------------------------- */
/* The document */

static int load_document(struct ld *l, const json_t *root, topo_compiled *c)
{
	json_t *v, *groups;
	size_t ng;
	int rc;

	if (!json_is_object(root))
		return fail(l, "",
			    "must be a collc-routes document, "
			    "a JSON object (got %s)",
			    jtype(root));
	rc = need(l, root, "", "format", "\"collc-routes\"", &v);
	if (rc != 0)
		return rc;
	if (!json_is_string(v) ||
	    strcmp(json_string_value(v), "collc-routes") != 0) {
		if (json_is_string(v))
			return fail(l, "/format",
				    "\"%s\" is not a compile "
				    "output (expected \"collc-routes\")",
				    json_string_value(v));
		return fail(l, "/format", "must be \"collc-routes\" (got %s)",
			    jtype(v));
	}
	rc = need(l, root, "", "version", "an integer", &v);
	if (rc != 0)
		return rc;
	if (!json_is_integer(v))
		return fail(l, "/version",
			    "must be an integer (got %s; "
			    "supported: %d)",
			    jtype(v), TOPO_FORMAT_VERSION);
	if (json_integer_value(v) != TOPO_FORMAT_VERSION)
		return fail(l, "/version",
			    "version %lld is not supported "
			    "(supported: %d)",
			    (long long)json_integer_value(v),
			    TOPO_FORMAT_VERSION);
	rc = load_machine(l, root, &c->owned);
	if (rc != 0)
		return rc;
	c->m = c->owned;
	l->rank_of =
	    topo__mallocarray((size_t)c->m->endpoints, sizeof(int32_t));
	if (l->rank_of == NULL)
		return nomem(l, "");
	for (int32_t e = 0; e < c->m->endpoints; e++)
		l->rank_of[e] = -1;
	rc =
	    key_array(l, root, "", "groups", -1, "an array of groups", &groups);
	if (rc != 0)
		return rc;
	ng = json_array_size(groups);
	c->groups = topo__calloc(ng, sizeof(*c->groups));
	c->ntrees = topo__calloc(ng, sizeof(*c->ntrees));
	c->trees = topo__calloc(ng, sizeof(*c->trees));
	if (c->groups == NULL || c->ntrees == NULL || c->trees == NULL)
		return nomem(l, "/groups");
	c->ngroups = ng;
	for (size_t i = 0; i < ng; i++) {
		rc = load_group(l, c, i, json_array_get(groups, i));
		if (rc != 0)
			return rc;
	}
	/* Groups are looked up by name (collc -g, collrun -g). */
	{
		size_t dup, first;
		char ptr[PTR_SIZE];

		rc = first_duplicate(ng, group_name, c->groups, &dup, &first);
		if (rc < 0)
			return nomem(l, "/groups");
		if (rc > 0) {
			ptr_fmt(ptr, "/groups/%zu/name", dup);
			return fail(l, ptr,
				    "group \"%s\" is already defined at "
				    "/groups/%zu (group names are unique)",
				    c->groups[dup]->name, first);
		}
	}
	return 0;
}

int topo_compiled_load_string(topo_compiled **out, const char *json, size_t len,
			      const char *source, topo_error *err)
{
	struct ld l = {source != NULL ? source : "<string>", err, NULL};
	topo_compiled *c = NULL;
	json_t *root = NULL;
	int rc;

	if (out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_compiled_load_string: out is required");
	*out = NULL;
	if (json == NULL && len > 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_compiled_load_string: text is NULL");
	rc = topo__json_parse(json != NULL ? json : "", len, l.source, &root,
			      err);
	if (rc != 0)
		return rc;
	c = topo__calloc(1, sizeof(*c));
	if (c == NULL) {
		rc = nomem(&l, "");
		goto done;
	}
	rc = load_document(&l, root, c);
	if (rc == 0) {
		*out = c;
		c = NULL;
	}
done:
	topo__free(l.rank_of);
	topo_compiled_free(c);
	json_decref(root);
	return rc;
}

int topo_compiled_load_file(topo_compiled **out, const char *path,
			    topo_error *err)
{
	char *text = NULL;
	size_t len;
	int rc;

	if (out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_compiled_load_file: out is required");
	*out = NULL;
	if (path == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_compiled_load_file: path is required");
	rc = topo__read_file(path, &text, &len, err);
	if (rc == 0)
		rc = topo_compiled_load_string(out, text, len, path, err);
	topo__free(text);
	return rc;
}
