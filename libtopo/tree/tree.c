/*
 * tree.c - logical trees over a group: shape names, construction from a
 * parent array (checked to be a spanning tree) and the accessors.  Route
 * tables are in routes.c.
 *
 * The shapes themselves are in tree_physical.c, tree_hierarchical.c and
 * tree_rank.c; this file only dispatches to them.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <string.h>

#define VALID_SHAPES                                                           \
	"physical, hierarchical, binomial, chain, kary:K with K in "           \
	"1..2147483647"

enum shape_kind {
	SHAPE_PHYSICAL,
	SHAPE_HIERARCHICAL,
	SHAPE_BINOMIAL,
	SHAPE_CHAIN,
	SHAPE_KARY
};

const char *topo_edge_name(enum topo_edge e)
{
	switch (e) {
	case TOPO_EDGE_ROOT:
		return "root";
	case TOPO_EDGE_SHM:
		return "shm";
	case TOPO_EDGE_NET:
		return "net";
	}
	return "?";
}

/*
 * K is written as plain decimal digits without sign, leading zeros or
 * trailing text, so that a shape has exactly one spelling: "kary:4" and
 * "kary:04" would otherwise be two names for one tree.
 */
static int parse_shape(const char *shape, enum shape_kind *kind, int32_t *k,
		       topo_error *err)
{
	static const struct {
		const char *name;
		enum shape_kind kind;
	} fixed[] = {
	    {"physical", SHAPE_PHYSICAL},
	    {"hierarchical", SHAPE_HIERARCHICAL},
	    {"binomial", SHAPE_BINOMIAL},
	    {"chain", SHAPE_CHAIN},
	};
	const char *digits;
	int64_t value = 0;

	if (shape == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "no tree shape given (valid: " VALID_SHAPES
				 ")");
	*k = 0;
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
		if (strcmp(shape, fixed[i].name) == 0) {
			*kind = fixed[i].kind;
			return 0;
		}
	}
	if (strncmp(shape, "kary:", 5) != 0)
		return topo__err(
		    err, TOPO_EARG, NULL, NULL,
		    "unknown tree shape \"%s\" (valid: " VALID_SHAPES ")",
		    shape);
	digits = shape + 5;
	if (digits[0] < '1' || digits[0] > '9')
		goto bad_k;
	for (const char *c = digits; *c != '\0'; c++) {
		if (*c < '0' || *c > '9')
			goto bad_k;
		value = value * 10 + (*c - '0');
		if (value > INT32_MAX)
			goto bad_k;
	}
	*kind = SHAPE_KARY;
	*k = (int32_t)value;
	return 0;
bad_k:
	return topo__err(err, TOPO_EARG, NULL, NULL,
			 "tree shape \"%s\": K must be an integer in "
			 "1..2147483647 written as plain digits",
			 shape);
}

int topo_tree_shape_check(const char *shape, topo_error *err)
{
	enum shape_kind kind;
	int32_t k;

	return parse_shape(shape, &kind, &k, err);
}

static int32_t member_node(const topo_machine *m, int32_t ep)
{
	return m->task_node[ep / m->eps_per_task];
}

void topo_tree_free(topo_tree *t)
{
	if (t == NULL)
		return;
	topo__free(t->name);
	topo__free(t->parent);
	topo__free(t->edge);
	topo__free(t->child_off);
	topo__free(t->child);
	topo__routes_x_free(t->routes_x);
	topo__free(t);
}

/* How far ahead the breadth-first walk below asks for a member's lines
 * (the misses a core keeps in flight; as the flood's simulate). */
#define TREE_AHEAD 16

/*
 * The check is topo__network_check's (a node tree and a member tree obey
 * the same rules), so *bad means the same thing there and here: the second
 * root, the rank whose parent is out of range or itself, a rank on a cycle,
 * or -1 when there is no root at all.  A caller wanting the reason in words
 * runs topo__network_check on its own copy first.
 */
/* Children in CSR form, and the root.  Counting into child_off[p + 1],
 * then using child_off[p] as p's write cursor and shifting back, needs no
 * second array; visiting ranks in order keeps each list ascending. */
static void tree_children(topo_tree *t)
{
	const int32_t *parent = t->parent;
	int32_t n = t->n;

	for (int32_t r = 0; r < n; r++) {
		if (parent[r] < 0)
			t->root = r;
		else
			t->child_off[parent[r] + 1]++;
	}
	for (int32_t r = 0; r < n; r++)
		t->child_off[r + 1] += t->child_off[r];
	for (int32_t r = 0; r < n; r++)
		if (parent[r] >= 0)
			t->child[t->child_off[parent[r]]++] = r;
	for (int32_t r = n; r > 0; r--)
		t->child_off[r] = t->child_off[r - 1];
	t->child_off[0] = 0;
}

/* Edge labels: shm when both ends share a node.  Endpoints are tasks
 * when each task has one (the usual case), which spares two divisions
 * per member. */
static void tree_edges(topo_tree *t)
{
	const topo_machine *m = t->g->m;
	const int32_t *mem = t->g->members, *parent = t->parent;

	for (int32_t r = 0; r < t->n; r++) {
		if (parent[r] < 0) {
			t->edge[r] = TOPO_EDGE_ROOT;
		} else if (m->eps_per_task == 1
			       ? m->task_node[mem[r]] ==
				     m->task_node[mem[parent[r]]]
			       : member_node(m, mem[r]) ==
				     member_node(m, mem[parent[r]])) {
			t->edge[r] = TOPO_EDGE_SHM;
			t->shm++;
		} else {
			t->edge[r] = TOPO_EDGE_NET;
			t->net++;
		}
	}
}

/* Depth: breadth-first from the root, one level at a time, in queue (n
 * entries). */
static int32_t tree_depth(const topo_tree *t, int32_t *queue)
{
	int32_t head = 0, tail = 0, level_end, depth = -1;

	queue[tail++] = t->root;
	while (head < tail) {
		level_end = tail;
		depth++;
		for (; head < level_end; head++) {
			int32_t v = queue[head];

			/* The members a few places on lie anywhere: their
			 * entries first, then their lists of children. */
			if (head + TREE_AHEAD < tail)
				__builtin_prefetch(
				    &t->child_off[queue[head + TREE_AHEAD]]);
			if (head + TREE_AHEAD / 2 < tail)
				__builtin_prefetch(
				    &t->child[t->child_off
						  [queue[head + TREE_AHEAD / 2]]]);
			for (int32_t i = t->child_off[v];
			     i < t->child_off[v + 1]; i++)
				queue[tail++] = t->child[i];
		}
	}
	return depth;
}

int topo__tree_from_parent(topo_tree **out, const topo_group *g,
			   const char *name, int32_t *parent, int32_t *bad)
{
	int32_t n = g->size, *queue = NULL;
	const char *why;
	topo_tree *t;
	struct topo__populate populate = {0};
	int rc = TOPO_ENOMEM;

	*out = NULL;
	*bad = -1;
	t = topo__calloc(1, sizeof(*t));
	if (t == NULL) {
		topo__free(parent);
		return TOPO_ENOMEM;
	}
	t->g = g;
	t->n = n;
	t->root = -1;
	t->parent = parent;
	t->name = topo__strdup(name != NULL ? name : "");
	t->edge = topo__malloc((size_t)n);
	t->child_off = topo__calloc((size_t)n + 1, sizeof(int32_t));
	t->child =
	    topo__mallocarray(n > 1 ? (size_t)n - 1 : 1, sizeof(int32_t));
	queue = topo__mallocarray((size_t)n, sizeof(int32_t));
	if (t->name == NULL || t->edge == NULL || t->child_off == NULL ||
	    t->child == NULL || queue == NULL)
		goto fail;
	/* The arrays filled below fault in on the other CPU while the
	 * check runs (alloc.c). */
	topo__populate_add(&populate, t->child_off,
			   ((size_t)n + 1) * sizeof(int32_t));
	topo__populate_add(&populate, t->child,
			   (n > 1 ? (size_t)n - 1 : 1) * sizeof(int32_t));
	topo__populate_start(&populate);
	rc = TOPO_EINVAL;
	if (topo__network_check(parent, n, queue, bad, &why) != 0)
		goto fail;
	topo__populate_wait(&populate);

	tree_children(t);
	tree_edges(t);
	t->depth = tree_depth(t, queue);
	topo__free(queue);
	*out = t;
	return 0;
fail:
	topo__populate_stop(&populate);
	topo__free(queue);
	topo_tree_free(t);
	return rc;
}

int topo__tree_new(topo_tree **out, const topo_group *g, const char *shape,
		   struct topo__node_memo *memo, topo_error *err)
{
	struct topo__node_memo own = {NULL, 0, 0};
	enum shape_kind kind;
	int32_t k, bad, *parent = NULL;
	int rc;

	*out = NULL;
	if (g == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_tree_new: a group is required");
	rc = parse_shape(shape, &kind, &k, err);
	if (rc != 0)
		return rc;
	parent = topo__mallocarray((size_t)g->size, sizeof(int32_t));
	if (parent == NULL)
		goto nomem;
	switch (kind) {
	case SHAPE_PHYSICAL:
		if (memo == NULL) {
			if (topo__node_memo_new(&own, g->m) != 0)
				goto nomem;
			memo = &own;
		}
		topo__tree_physical(g, parent, memo);
		break;
	case SHAPE_HIERARCHICAL:
		/* Needs no scratch: two passes over the members. */
		topo__tree_hierarchical(g, parent, NULL);
		break;
	case SHAPE_BINOMIAL:
		topo__tree_binomial(g->size, parent);
		break;
	case SHAPE_CHAIN:
		topo__tree_chain(g->size, parent);
		break;
	case SHAPE_KARY:
		topo__tree_kary(g->size, k, parent);
		break;
	}
	topo__node_memo_free(&own);
	rc = topo__tree_from_parent(out, g, shape, parent, &bad);
	if (rc == TOPO_EINVAL)
		/* A builder bug, not the caller's: say which. */
		return topo__err(err, TOPO_EINVAL, NULL, NULL,
				 "internal error: shape \"%s\" over group "
				 "\"%s\" is not a spanning tree (rank %d)",
				 shape, g->name, (int)bad);
	if (rc != 0)
		return topo__err(err, rc, NULL, NULL,
				 "out of memory building tree \"%s\" over "
				 "group \"%s\" (%d members)",
				 shape, g->name, (int)g->size);
	return 0;
nomem:
	topo__node_memo_free(&own);
	topo__free(parent);
	return topo__err(err, TOPO_ENOMEM, NULL, NULL,
			 "out of memory building tree \"%s\" over group "
			 "\"%s\" (%d members)",
			 shape, g->name, (int)g->size);
}

int topo_tree_new(topo_tree **out, const topo_group *g, const char *shape,
		  topo_error *err)
{
	return topo__tree_new(out, g, shape, NULL, err);
}

const char *topo_tree_name(const topo_tree *t)
{
	return t->name;
}
const topo_group *topo_tree_group(const topo_tree *t)
{
	return t->g;
}
int32_t topo_tree_root(const topo_tree *t)
{
	return t->root;
}
const int32_t *topo_tree_parent(const topo_tree *t)
{
	return t->parent;
}
int32_t topo_tree_depth(const topo_tree *t)
{
	return t->depth;
}

enum topo_edge topo_tree_edge(const topo_tree *t, int32_t r)
{
	return (enum topo_edge)t->edge[r];
}

int32_t topo_tree_children(const topo_tree *t, int32_t r, const int32_t **out)
{
	*out = t->child + t->child_off[r];
	return t->child_off[r + 1] - t->child_off[r];
}

void topo_tree_edge_counts(const topo_tree *t, int64_t *shm, int64_t *net)
{
	if (shm != NULL)
		*shm = t->shm;
	if (net != NULL)
		*net = t->net;
}

int32_t topo_tree_degree(const topo_tree *t, int32_t r)
{
	return (t->parent[r] >= 0) + t->child_off[r + 1] - t->child_off[r];
}
