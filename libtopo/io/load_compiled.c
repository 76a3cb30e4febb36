/*
 * load_compiled.c - loading a collc-routes document (collc(5)) back into a
 * topo_compiled: the machine it was compiled for, its groups, their trees
 * and their route tables.
 *
 * Everything a reader relies on is checked: the machine section is
 * rebuilt and must agree with itself, members are ascending endpoint ids,
 * every tree spans its group and carries the edge labels its machine
 * implies.  The route tables are the exception on purpose: they are kept
 * as written, only checked to name members (and never their own), so
 * that a hand-edited table can be loaded and replayed and its faults
 * observed (collrun).  Whether spelled out in full (version 1, and
 * version 2's "full") or rule-encoded (version 2's default), a table is
 * reduced to where it departs from the rule (routes.c).  A tree may leave
 * its table out ("routes" is optional; topo_compiled_write's
 * TOPO_WRITE_NO_ROUTES): the table is then derived from "parent" by the
 * rule of collc(7), exactly as for a tree built by topo_tree_new.
 *
 * Errors follow the machine loader: JSON syntax with line and column,
 * everything else TOPO_EINVAL with a JSON pointer to the offending value,
 * the common faults worded by jget.c as in every document libtopo reads.
 * Keys this version does not know are ignored: collc(5) lets later
 * versions add keys.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"
#include "io/jget.h"
#include "machine/hosts.h"

#include <jansson.h>
#include <stdarg.h>
#include <string.h>

/* Pointers here are built from fixed keys and array indexes, so they
 * never need RFC 6901 escaping. */
#define PTR_SIZE 256

struct ld {
	/* The source and the error record; load_compiled formats its own
	 * pointers (only when it complains) and hands them to jget. */
	struct topo__jget j;
	int version; /* the document's format version */
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
	topo__jget_at(&l->j, ptr);
	return topo__jget_fail(&l->j, "%s", text);
}

static int nomem(struct ld *l, const char *ptr)
{
	topo__jget_at(&l->j, ptr);
	return topo__jget_err(&l->j, TOPO_ENOMEM,
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

/* What v is, for "(got ...)": jget's wording. */
static const char *shown(const json_t *v, char *buf)
{
	topo__jget_show(v, buf, PTR_SIZE);
	return buf;
}

/* obj[key], which must be there; what says what would be valid. */
static int need(struct ld *l, const json_t *obj, const char *objptr,
		const char *key, const char *what, json_t **out)
{
	topo__jget_at(&l->j, objptr);
	return topo__jget_member(&l->j, obj, key, what, out);
}

static int need_object(struct ld *l, const json_t *v, const char *ptr)
{
	topo__jget_at(&l->j, ptr);
	return topo__jget_object(&l->j, v, NULL);
}

/*
 * An integer in min..max; what names it for the message (NULL: jget's
 * words from the bounds).  The pointer is a format and its arguments,
 * formatted only on failure: the loops over big arrays call this once
 * per entry.
 */
static int get_int(struct ld *l, const json_t *v, int32_t min, int32_t max,
		   const char *what, int32_t *out, const char *pfmt, ...)
    __attribute__((format(printf, 7, 8)));

static int get_int(struct ld *l, const json_t *v, int32_t min, int32_t max,
		   const char *what, int32_t *out, const char *pfmt, ...)
{
	char ptr[PTR_SIZE];
	va_list ap;

	if (json_is_integer(v) && json_integer_value(v) >= min &&
	    json_integer_value(v) <= max) {
		*out = (int32_t)json_integer_value(v);
		return 0;
	}
	va_start(ap, pfmt);
	vsnprintf(ptr, sizeof(ptr), pfmt, ap);
	va_end(ap);
	topo__jget_at(&l->j, ptr);
	return topo__jget_int32(&l->j, v, min, max, what, out);
}

/* A key whose value is an integer in min..max. */
static int key_int(struct ld *l, const json_t *obj, const char *objptr,
		   const char *key, int32_t min, int32_t max, const char *what,
		   int32_t *out)
{
	json_t *v;
	int rc = need(l, obj, objptr, key,
		      what != NULL ? what : "an integer >= 1", &v);

	if (rc == 0)
		rc = topo__jget_int32(&l->j, v, min, max, what, out);
	return rc;
}

static int key_string(struct ld *l, const json_t *obj, const char *objptr,
		      const char *key, const char **out)
{
	json_t *v;
	int rc = need(l, obj, objptr, key, "a string", &v);

	if (rc == 0)
		rc = topo__jget_string(&l->j, v, 0, NULL, out);
	return rc;
}

/* An array of exactly n entries (n < 0: any length); unit ends the
 * complaint about its length ("has 3 entries, want 4" + unit). */
static int key_array(struct ld *l, const json_t *obj, const char *objptr,
		     const char *key, int64_t n, const char *what,
		     const char *unit, json_t **out)
{
	size_t len;
	int rc = need(l, obj, objptr, key, what, out);

	if (rc != 0)
		return rc;
	return topo__jget_array(&l->j, *out, n >= 0 ? (size_t)n : 0,
				n >= 0 ? (size_t)n : SIZE_MAX, what, unit,
				&len);
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
		rc = get_int(l, v, 1, INT32_MAX, NULL, &m->fanout,
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
				     NULL, &m->dims[i],
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

/* What the machine section holds, as read so far. */
struct msec {
	const char *name, *type;
	int32_t nodes, tasks, eps, endpoints, proot;
	int32_t *node_tasks, *parent, *scratch; /* [nodes] */
	json_t *net;
};

/* The machine's sizes and its tasks per node. */
static int load_sizes(struct ld *l, const json_t *mj, struct msec *s)
{
	char what[96];
	int64_t sum = 0;
	json_t *arr;
	int rc;

	rc = key_string(l, mj, "/machine", "name", &s->name);
	if (rc == 0)
		rc = key_int(l, mj, "/machine", "nodes", 1, INT32_MAX, NULL,
			     &s->nodes);
	if (rc == 0)
		rc = key_int(l, mj, "/machine", "tasks", 1, INT32_MAX, NULL,
			     &s->tasks);
	if (rc == 0)
		rc = key_int(l, mj, "/machine", "endpoints_per_task", 1,
			     INT32_MAX, NULL, &s->eps);
	if (rc == 0)
		rc = key_int(l, mj, "/machine", "endpoints", 1, INT32_MAX,
			     NULL, &s->endpoints);
	if (rc != 0)
		return rc;
	snprintf(what, sizeof(what), "an array of %d integers >= 1",
		 (int)s->nodes);
	rc = key_array(l, mj, "/machine", "tasks_per_node", s->nodes, what,
		       " (one per node)", &arr);
	if (rc != 0)
		return rc;
	s->node_tasks = topo__mallocarray((size_t)s->nodes, sizeof(int32_t));
	s->parent = topo__mallocarray((size_t)s->nodes, sizeof(int32_t));
	s->scratch = topo__mallocarray((size_t)s->nodes, sizeof(int32_t));
	if (s->node_tasks == NULL || s->parent == NULL || s->scratch == NULL)
		return nomem(l, "/machine");
	for (int32_t n = 0; n < s->nodes; n++) {
		rc = get_int(l, json_array_get(arr, (size_t)n), 1, INT32_MAX,
			     NULL, &s->node_tasks[n],
			     "/machine/tasks_per_node/%d", (int)n);
		if (rc != 0)
			return rc;
		sum += s->node_tasks[n];
	}
	if (sum != s->tasks)
		return fail(l, "/machine/tasks",
			    "%d does not match tasks_per_node, which sums to "
			    "%lld",
			    (int)s->tasks, (long long)sum);
	return 0;
}

/* The network's parent array, checked to be a tree rooted at the
 * physical root. */
static int load_net_parent(struct ld *l, struct msec *s)
{
	char ptr[PTR_SIZE], got[PTR_SIZE], what[96];
	int32_t bad;
	const char *why;
	json_t *arr;
	int rc;

	snprintf(what, sizeof(what),
		 "an array of %d node ids (-1 at the physical root)",
		 (int)s->nodes);
	rc = key_array(l, s->net, "/machine/network", "parent", s->nodes, what,
		       " (one per node)", &arr);
	if (rc != 0)
		return rc;
	for (int32_t n = 0; n < s->nodes; n++) {
		json_t *v = json_array_get(arr, (size_t)n);

		if (json_is_integer(v) && json_integer_value(v) >= -1 &&
		    json_integer_value(v) < s->nodes) {
			s->parent[n] = (int32_t)json_integer_value(v);
			continue;
		}
		ptr_fmt(ptr, "/machine/network/parent/%d", (int)n);
		if (!json_is_integer(v))
			return fail(l, ptr, "must be a node id or -1 (got %s)",
				    shown(v, got));
		return fail(l, ptr,
			    "node %lld does not exist (nodes: 0..%d, or -1 at "
			    "the physical root)",
			    (long long)json_integer_value(v),
			    (int)s->nodes - 1);
	}
	if (topo__network_check(s->parent, s->nodes, s->scratch, &bad, &why) !=
	    0) {
		if (bad < 0)
			return fail(l, "/machine/network/parent",
				    "no node has parent -1 (exactly one, the "
				    "physical root, must)");
		ptr_fmt(ptr, "/machine/network/parent/%d", (int)bad);
		return fail(l, ptr, "node %d %s", (int)bad, network_why(why));
	}
	if (s->parent[s->proot] != -1) {
		for (int32_t n = 0; n < s->nodes; n++)
			if (s->parent[n] == -1)
				bad = n;
		return fail(l, "/machine/network/physical_root",
			    "%d is not the root of the network's parent "
			    "array (node %d is)",
			    (int)s->proot, (int)bad);
	}
	return 0;
}

/* The network: its type, physical root and parent array. */
static int load_network(struct ld *l, const json_t *mj, struct msec *s)
{
	static const char *const types[] = {"tree", "kary", "torus", NULL};
	char what[96];
	json_t *v;
	int t, rc;

	rc = need(l, mj, "/machine", "network", "an object", &s->net);
	if (rc == 0)
		rc = need_object(l, s->net, "/machine/network");
	if (rc == 0)
		rc = need(l, s->net, "/machine/network", "type", "a string",
			  &v);
	if (rc == 0)
		rc = topo__jget_enum(&l->j, v, types, &t);
	if (rc != 0)
		return rc;
	s->type = types[t];
	snprintf(what, sizeof(what), "a node id in 0..%d", (int)s->nodes - 1);
	rc = key_int(l, s->net, "/machine/network", "physical_root", 0,
		     s->nodes - 1, what, &s->proot);
	if (rc != 0)
		return rc;
	return load_net_parent(l, s);
}

/* The node names, optional: checked and refused as in a description. */
static int load_hosts(struct ld *l, const json_t *mj, topo_machine *m)
{
	json_t *v = json_object_get(mj, "hosts");
	int rc;

	if (v == NULL)
		return 0;
	topo__jget_at(&l->j, "/machine/hosts");
	rc = topo__hosts_check(&l->j, v, m->nodes);
	if (rc == 0)
		rc = topo__hosts_set(&l->j, m, v);
	return rc;
}

static int load_machine(struct ld *l, const json_t *root, topo_machine **out)
{
	struct msec s = {0};
	topo_machine *m = NULL;
	json_t *mj, *costs;
	int rc;

	*out = NULL;
	rc = need(l, root, "", "machine", "an object", &mj);
	if (rc == 0)
		rc = need_object(l, mj, "/machine");
	if (rc == 0)
		rc = load_sizes(l, mj, &s);
	if (rc == 0)
		rc = load_network(l, mj, &s);
	if (rc != 0)
		goto done;
	rc = topo__machine_build(&m, s.name, s.nodes, s.node_tasks, s.eps,
				 s.type, s.parent, l->j.err);
	if (rc != 0) {
		topo__err_locate(l->j.err, l->j.source, "/machine");
		goto done;
	}
	if (m->endpoints != s.endpoints) {
		rc = fail(l, "/machine/endpoints",
			  "%d does not match tasks x endpoints_per_task "
			  "(%d x %d = %d)",
			  (int)s.endpoints, (int)m->tasks, (int)m->eps_per_task,
			  (int)m->endpoints);
		goto done;
	}
	rc = load_shape(l, m, s.net);
	if (rc == 0)
		rc = load_hosts(l, mj, m);
	if (rc == 0 && (costs = json_object_get(mj, "costs")) != NULL) {
		topo__jget_at(&l->j, "/machine/costs");
		rc = topo__costs_from_json(&l->j, costs, &m->costs,
					   &m->costs_given);
	}
	if (rc != 0)
		goto done;
	*out = m;
	m = NULL;
done:
	topo_machine_free(m);
	topo__free(s.node_tasks);
	topo__free(s.parent);
	topo__free(s.scratch);
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
	char ptr[PTR_SIZE], got[PTR_SIZE];
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
			    allow_none ? " or -1" : "", shown(v, got));
	return fail(l, ptr, "endpoint %lld is not a member of group \"%s\"",
		    (long long)x, g->name);
}

static int load_members(struct ld *l, const topo_machine *m, const json_t *gj,
			const char *gptr, int32_t **out, int32_t *count)
{
	int32_t *mem = NULL, size;
	char ptr[PTR_SIZE], got[PTR_SIZE];
	json_t *arr, *v;
	size_t n;
	int rc;

	*out = NULL;
	rc = key_array(l, gj, gptr, "members", -1,
		       "an array of endpoint ids, ascending", NULL, &arr);
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
				  shown(v, got));
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
		rc = get_int(l, v, 1, INT32_MAX, NULL, &size,
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
	rc = key_array(l, tj, tptr, "parent", n, what, " (one per member)",
		       &arr);
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
	static const char *const labels[] = {"root", "shm", "net", NULL};
	char ptr[PTR_SIZE], what[96];
	json_t *arr;
	int label, rc;

	snprintf(what, sizeof(what),
		 "an array of %d edge labels aligned "
		 "with members",
		 (int)t->n);
	rc = key_array(l, tj, tptr, "edge", t->n, what, " (one per member)",
		       &arr);
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
		topo__jget_at(&l->j, ptr);
		rc = topo__jget_enum(&l->j, v, labels, &label);
		if (rc != 0)
			return rc;
		got = labels[label];
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
		rc = get_int(l, v, 0, INT32_MAX, NULL, &x,
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
	rc = need_object(l, e, ptr);
	if (rc != 0)
		return rc;
	for (int k = 0; k < 2; k++) {
		int64_t have = k == 0 ? t->shm : t->net;

		if ((v = json_object_get(e, kinds[k])) == NULL)
			continue;
		rc = get_int(l, v, 0, INT32_MAX, NULL, &x,
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
 * Route rows [at, from, [to...]] of one array (a version 1 or "full"
 * table, or the "rows" of a rule-encoded one), checked for structure, not
 * meaning: each row names members (from may be -1), no member forwards to
 * itself or has a row for what arrives from itself (a member does not
 * send to itself: such a row could never be followed as written), and no
 * member has two rows for one origin, which would make the table
 * ambiguous rather than wrong.  Rows are collected as ranks into *in,
 * whose arrays the caller frees (struct rows_buf).
 */
struct rows_buf {
	int32_t *at, *from, *to, *mat, *mfrom;
	int64_t *to_off;
};

static void rows_buf_free(struct rows_buf *b)
{
	topo__free(b->at);
	topo__free(b->from);
	topo__free(b->to);
	topo__free(b->to_off);
	topo__free(b->mat);
	topo__free(b->mfrom);
}

static int load_rows(struct ld *l, const topo_tree *t, const json_t *arr,
		     const char *aptr, struct rows_buf *b,
		     struct topo__routes_in *in)
{
	const topo_group *g = t->g;
	char ptr[PTR_SIZE], got[PTR_SIZE];
	size_t nrows = json_array_size(arr);
	int64_t total = 0;
	int32_t rows;
	int rc;

	if (nrows > INT32_MAX)
		return topo__err(l->j.err, TOPO_ELIMIT, l->j.source, aptr,
				 "%zu rows; at most 2147483647 are supported",
				 nrows);
	rows = (int32_t)nrows;
	for (int32_t i = 0; i < rows; i++)
		total += (int64_t)json_array_size(
		    json_array_get(json_array_get(arr, (size_t)i), 2));
	b->at = topo__mallocarray((size_t)rows + 1, sizeof(int32_t));
	b->from = topo__mallocarray((size_t)rows + 1, sizeof(int32_t));
	b->to_off = topo__mallocarray((size_t)rows + 1, sizeof(int64_t));
	b->to = topo__mallocarray((size_t)total + 1, sizeof(int32_t));
	if (b->at == NULL || b->from == NULL || b->to_off == NULL ||
	    b->to == NULL)
		return nomem(l, aptr);
	b->to_off[0] = 0;
	for (int32_t i = 0; i < rows; i++) {
		json_t *row = json_array_get(arr, (size_t)i), *tl;
		int64_t k = b->to_off[i];

		if (!json_is_array(row) || json_array_size(row) != 3) {
			ptr_fmt(ptr, "%s/%d", aptr, (int)i);
			return fail(l, ptr,
				    "must be a row [at, from, [to...]] "
				    "(got %s%s)",
				    shown(row, got),
				    json_is_array(row) ? " of another length"
						       : "");
		}
		rc = get_member(l, json_array_get(row, 0), g, 0, &b->at[i],
				"%s/%d/0", aptr, (int)i);
		if (rc == 0)
			rc = get_member(l, json_array_get(row, 1), g, 1,
					&b->from[i], "%s/%d/1", aptr, (int)i);
		if (rc != 0)
			return rc;
		if (b->from[i] == b->at[i]) {
			ptr_fmt(ptr, "%s/%d/1", aptr, (int)i);
			return fail(l, ptr,
				    "a row for endpoint %d arriving from "
				    "itself (a member never sends to itself)",
				    (int)g->members[b->at[i]]);
		}
		tl = json_array_get(row, 2);
		if (!json_is_array(tl)) {
			ptr_fmt(ptr, "%s/%d/2", aptr, (int)i);
			return fail(l, ptr,
				    "must be an array of endpoint ids "
				    "to forward to (got %s)",
				    shown(tl, got));
		}
		for (size_t j = 0; j < json_array_size(tl); j++) {
			rc = get_member(l, json_array_get(tl, j), g, 0,
					&b->to[k], "%s/%d/2/%zu", aptr, (int)i,
					j);
			if (rc != 0)
				return rc;
			if (b->to[k] == b->at[i]) {
				ptr_fmt(ptr, "%s/%d/2/%zu", aptr, (int)i, j);
				return fail(l, ptr,
					    "endpoint %d forwards to itself "
					    "(a member never sends to itself)",
					    (int)g->members[b->at[i]]);
			}
			k++;
		}
		b->to_off[i + 1] = k;
	}
	in->rows = rows;
	in->at = b->at;
	in->from = b->from;
	in->to_off = b->to_off;
	in->to = b->to;
	return 0;
}

/* [at, from] pairs of a rule-encoded table's "missing": rule rows the
 * table does not have, so each from must be a rule origin of at. */
static int load_missing(struct ld *l, const topo_tree *t, const json_t *arr,
			const char *aptr, struct rows_buf *b,
			struct topo__routes_in *in)
{
	const topo_group *g = t->g;
	size_t n = json_array_size(arr);
	char ptr[PTR_SIZE], got[PTR_SIZE];
	int rc;

	if (n > INT32_MAX)
		return topo__err(l->j.err, TOPO_ELIMIT, l->j.source, aptr,
				 "%zu entries; at most 2147483647 are "
				 "supported",
				 n);
	b->mat = topo__mallocarray(n + 1, sizeof(int32_t));
	b->mfrom = topo__mallocarray(n + 1, sizeof(int32_t));
	if (b->mat == NULL || b->mfrom == NULL)
		return nomem(l, aptr);
	for (size_t i = 0; i < n; i++) {
		json_t *pair = json_array_get(arr, i);

		if (!json_is_array(pair) || json_array_size(pair) != 2) {
			ptr_fmt(ptr, "%s/%zu", aptr, i);
			return fail(l, ptr,
				    "must be a pair [at, from] (got %s%s)",
				    shown(pair, got),
				    json_is_array(pair) ? " of another length"
							: "");
		}
		rc = get_member(l, json_array_get(pair, 0), g, 0, &b->mat[i],
				"%s/%zu/0", aptr, i);
		if (rc == 0)
			rc = get_member(l, json_array_get(pair, 1), g, 1,
					&b->mfrom[i], "%s/%zu/1", aptr, i);
		if (rc != 0)
			return rc;
		if (!topo__routes_is_rule_origin(t, b->mat[i], b->mfrom[i])) {
			ptr_fmt(ptr, "%s/%zu/1", aptr, i);
			return fail(l, ptr,
				    "endpoint %d has no rule row from "
				    "endpoint %d to be missing (the rule "
				    "gives rows from -1 and the tree "
				    "neighbours only)",
				    (int)g->members[b->mat[i]],
				    (int)g->members[b->mfrom[i]]);
		}
	}
	in->nmissing = (int32_t)n;
	in->missing_at = b->mat;
	in->missing_from = b->mfrom;
	return 0;
}

/* The pointer to input row i: rows first, then the missing pairs. */
static void row_ptr(char *ptr, const char *rows_ptr, const char *miss_ptr,
		    const struct topo__routes_in *in, int32_t i)
{
	if (i < in->rows)
		ptr_fmt(ptr, "%s/%d", rows_ptr, (int)i);
	else
		ptr_fmt(ptr, "%s/%d", miss_ptr, (int)(i - in->rows));
}

/* No two entries (rows, or a row and a missing pair) for one member and
 * origin.  Entries are grouped by member with a counting sort; stamp[f +
 * 1] holds the last member that had an entry from f, first[f + 1] that
 * entry. */
static int check_unique(struct ld *l, const topo_tree *t,
			const struct topo__routes_in *in, const char *rows_ptr,
			const char *miss_ptr)
{
	const int32_t *mem = t->g->members;
	int32_t n = t->n, total = in->rows + in->nmissing;
	int32_t *off = NULL, *order = NULL, *stamp = NULL, *first = NULL;
	char ptr[PTR_SIZE], was[PTR_SIZE];
	int rc = 0;

	off = topo__calloc((size_t)n + 1, sizeof(int32_t));
	order = topo__mallocarray((size_t)total + 1, sizeof(int32_t));
	stamp = topo__mallocarray((size_t)n + 1, sizeof(int32_t));
	first = topo__mallocarray((size_t)n + 1, sizeof(int32_t));
	if (off == NULL || order == NULL || stamp == NULL || first == NULL) {
		rc = nomem(l, rows_ptr);
		goto done;
	}
#define AT(i) ((i) < in->rows ? in->at[i] : in->missing_at[(i) - in->rows])
#define FROM(i)                                                                \
	((i) < in->rows ? in->from[i] : in->missing_from[(i) - in->rows])
	for (int32_t i = 0; i < total; i++)
		off[AT(i) + 1]++;
	for (int32_t r = 0; r < n; r++)
		off[r + 1] += off[r];
	for (int32_t i = 0; i < total; i++)
		order[off[AT(i)]++] = i;
	for (int32_t r = n; r > 0; r--)
		off[r] = off[r - 1];
	off[0] = 0;
	for (int32_t r = 0; r <= n; r++)
		stamp[r] = -1;
	for (int32_t r = 0; r < n && rc == 0; r++) {
		for (int32_t s = off[r]; s < off[r + 1]; s++) {
			int32_t i = order[s], f = FROM(i) + 1;

			if (stamp[f] != r) {
				stamp[f] = r;
				first[f] = i;
				continue;
			}
			row_ptr(ptr, rows_ptr, miss_ptr, in, i);
			row_ptr(was, rows_ptr, miss_ptr, in, first[f]);
			if (f == 0)
				rc = fail(l, ptr,
					  "a second origin row for endpoint "
					  "%d (the first is %s)",
					  (int)mem[r], was);
			else
				rc = fail(l, ptr,
					  "a second row for endpoint %d "
					  "arriving from endpoint %d (the "
					  "first is %s)",
					  (int)mem[r], (int)mem[f - 1], was);
			break;
		}
	}
#undef AT
#undef FROM
done:
	topo__free(off);
	topo__free(order);
	topo__free(stamp);
	topo__free(first);
	return rc;
}

/*
 * The route table.  Three forms (collc(5)): absent (the rule's table,
 * derived from "parent"), an array of every row (version 1, and version
 * 2's "full"), or, in version 2, an object {"encoding": "rule", "rows":
 * [...], "missing": [...]}: the rule's table with rows replaced or added
 * and rule rows left out.  Whatever the form, the tree keeps only where
 * the table departs from the rule (routes.c), so a table round-trips
 * exactly, row for row, through every encoding.
 */
static int load_routes(struct ld *l, topo_tree *t, const json_t *tj,
		       const char *tptr)
{
	struct topo__routes_in in = {0};
	struct rows_buf b = {0};
	char rows_ptr[PTR_SIZE], miss_ptr[PTR_SIZE], ptr[PTR_SIZE];
	static const char *const encodings[] = {"rule", NULL};
	static const char *const table_keys[] = {"encoding", "rows", "missing",
						 NULL};
	char got[PTR_SIZE];
	json_t *v, *val;
	int encoding, rc;

	if ((v = json_object_get(tj, "routes")) == NULL)
		return 0;
	ptr_fmt(rows_ptr, "%s/routes", tptr);
	miss_ptr[0] = '\0';
	if (json_is_array(v)) {
		in.complete = true;
		rc = load_rows(l, t, v, rows_ptr, &b, &in);
		goto rows_loaded;
	}
	if (!json_is_object(v) || l->version < 2) {
		rc = fail(l, rows_ptr,
			  "must be an array of rows [at, from, [to...]]%s "
			  "(got %s)",
			  l->version < 2 ? "" : " or a rule-encoded table",
			  shown(v, got));
		goto done;
	}
	/* Unknown keys are refused here, unlike elsewhere: a misspelt
	 * "missing" would silently turn a hand-edited table back into the
	 * rule's. */
	ptr_fmt(ptr, "%s/routes", tptr);
	topo__jget_at(&l->j, ptr);
	rc = topo__jget_keys(&l->j, v, table_keys, " in a rule-encoded table");
	if (rc == 0)
		rc = need(l, v, ptr, "encoding", "\"rule\"", &val);
	if (rc == 0)
		rc = topo__jget_enum(&l->j, val, encodings, &encoding);
	if (rc != 0)
		goto done;
	ptr_fmt(rows_ptr, "%s/routes/rows", tptr);
	ptr_fmt(miss_ptr, "%s/routes/missing", tptr);
	if ((val = json_object_get(v, "rows")) != NULL) {
		if (!json_is_array(val)) {
			rc = fail(l, rows_ptr,
				  "must be an array of rows [at, from, "
				  "[to...]] (got %s)",
				  shown(val, got));
			goto done;
		}
		rc = load_rows(l, t, val, rows_ptr, &b, &in);
		if (rc != 0)
			goto done;
	}
	if ((val = json_object_get(v, "missing")) != NULL) {
		if (!json_is_array(val)) {
			rc = fail(l, miss_ptr,
				  "must be an array of pairs [at, from] "
				  "(got %s)",
				  shown(val, got));
			goto done;
		}
		rc = load_missing(l, t, val, miss_ptr, &b, &in);
	}
rows_loaded:
	if (rc == 0)
		rc = check_unique(l, t, &in, rows_ptr, miss_ptr);
	if (rc == 0) {
		rc = topo__routes_x_build(t, &in);
		if (rc == TOPO_ENOMEM)
			rc = nomem(l, rows_ptr);
		else if (rc != 0)
			rc = topo__err(l->j.err, rc, l->j.source, rows_ptr,
				       "more than 2147483647 rows depart "
				       "from the rule");
	}
done:
	rows_buf_free(&b);
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
	rc = need_object(l, tj, tptr);
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

	rc = key_array(l, gj, gptr, "trees", -1, "an array of trees", NULL,
		       &trees);
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
	rc = need_object(l, gj, gptr);
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
	static const char *const formats[] = {"collc-routes", NULL};
	char got[PTR_SIZE];
	json_t *v, *groups;
	size_t ng;
	int format, rc;

	if (!json_is_object(root))
		return fail(l, "",
			    "must be a collc-routes document, "
			    "a JSON object (got %s)",
			    shown(root, got));
	rc = need(l, root, "", "format", "\"collc-routes\"", &v);
	if (rc == 0)
		rc = topo__jget_enum(&l->j, v, formats, &format);
	if (rc != 0)
		return rc;
	rc = need(l, root, "", "version", "an integer", &v);
	if (rc != 0)
		return rc;
	if (!json_is_integer(v))
		return fail(l, "/version",
			    "must be an integer (got %s; "
			    "supported: 1 to %d)",
			    shown(v, got), TOPO_FORMAT_VERSION);
	if (json_integer_value(v) < 1 ||
	    json_integer_value(v) > TOPO_FORMAT_VERSION)
		return fail(l, "/version",
			    "version %lld is not supported "
			    "(supported: 1 to %d)",
			    (long long)json_integer_value(v),
			    TOPO_FORMAT_VERSION);
	l->version = (int)json_integer_value(v);
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
	rc = key_array(l, root, "", "groups", -1, "an array of groups", NULL,
		       &groups);
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
	struct ld l = {0};
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
	topo__jget_init(&l.j, source != NULL ? source : "<string>", err);
	rc = topo__json_parse(json != NULL ? json : "", len, l.j.source, &root,
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
