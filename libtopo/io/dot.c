/*
 * dot.c - drawing a tree as a Graphviz digraph (collc dot), ready for
 * `dot -Tsvg`, member by member or node by node.
 *
 * The member view: one cluster per machine node holds that node's members,
 * so shared-memory edges stay inside a box and network edges cross between
 * boxes.  A vertex is labelled with the member's endpoint id and group
 * rank; the node is the cluster's label.  The tree root is a filled double
 * circle, and every member whose edge to its parent is a net edge, whatever
 * the tree's shape, is a box: in the physical and hierarchical trees those
 * are the node-local roots, one per node, but in the binomial, chain and
 * k-ary trees a node may hold several.  shm edges are thin and solid, net
 * edges bold, dashed and coloured.
 *
 * The node view: one vertex per node that hosts members, one edge per
 * (parent's node, child's node) pair joined by net edges, so that its size
 * follows the nodes, not the members, and dot lays out thousands of nodes
 * in seconds.  Left to right, column k holds the nodes first reached after
 * k net hops: each node is ranked by one incoming edge, the one that first
 * reaches it, as long as the hops between its ends (minlen), and its other
 * incoming edges (a binomial tree reaches a node several times) are drawn
 * without moving it (constraint=false).  Ranking by a tree also spares
 * dot's crossing minimisation most of its work.
 *
 * The output depends on the tree alone, so equal trees give equal files,
 * except that the member view marks the members whose route rows depart
 * from the rule (a table loaded hand-edited): the drawing and the table
 * then say the same thing.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "topo_internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NET_COLOR "#1f5fbf"
#define ROOT_FILL "gold"

/*
 * The node view caps dot's positioning at about this many network simplex
 * iterations (nslimit, which counts them per vertex) once it has more
 * vertices than that.  Uncapped, the iterations grow with the vertices and
 * each costs time linear in them: dot took 25 s of CPU for the physical
 * tree of a 32x16x16 torus (8192 nodes), 3 s capped; 2.2 s and 0.6 s for
 * 4096 nodes.  A capped layout has the same columns and order, with rows
 * less evenly spaced.
 */
#define NS_ITERATIONS 1000

/*
 * The inside of a DOT double-quoted string that Graphviz shows as a label.
 * Quotes are escaped; a backslash is doubled, because in labels \N, \G,
 * \l and friends are escapes of their own; newlines become label line
 * breaks, other control characters spaces; bytes that are not UTF-8 become
 * U+FFFD, since dot refuses invalid UTF-8.
 */
static void put_escaped(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s != '\0') {
		size_t n;

		if (*s == '"' || *s == '\\') {
			fputc('\\', f);
			fputc(*s, f);
			s++;
		} else if (*s == '\n') {
			fputs("\\n", f);
			s++;
		} else if (*s < 0x20 || *s == 0x7f) {
			fputc(' ', f);
			s++;
		} else if ((n = topo__utf8_len(s)) > 0) {
			fwrite(s, 1, n, f);
			s += n;
		} else {
			fputs("\xef\xbf\xbd", f);
			s++;
		}
	}
}

static const char *plural(int64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* The opening both views share, up to the tree's name in the graph's
 * label: `digraph "G/T" {`, then `graph [... label="group G (S), tree T`. */
static void put_head(FILE *f, const topo_tree *t)
{
	const topo_group *g = t->g;

	fputs("digraph \"", f);
	put_escaped(f, g->name);
	fputc('/', f);
	put_escaped(f, t->name);
	fputs("\" {\n  graph [labelloc=t, fontname=\"Helvetica\", "
	      "label=\"group ",
	      f);
	put_escaped(f, g->name);
	fputs(" (", f);
	put_escaped(f, g->spec);
	fputs("), tree ", f);
	put_escaped(f, t->name);
}

/* The closing brace, and whether everything reached f. */
static int put_tail(FILE *f, topo_error *err)
{
	int e;

	fputs("}\n", f);
	errno = 0;
	if (fflush(f) != 0 || ferror(f)) {
		e = errno;
		return topo__err(err, TOPO_EIO, NULL, NULL, "%s",
				 e != 0 ? strerror(e) : "write error");
	}
	return 0;
}

int topo_tree_write_dot(const topo_tree *t, FILE *f, topo_error *err)
{
	const topo_machine *m;
	const int32_t *mem;
	int32_t cur = -1;

	if (t == NULL || f == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_tree_write_dot: a tree and a stream "
				 "are required");
	m = t->g->m;
	mem = t->g->members;

	put_head(f, t);
	fprintf(f,
		": %d %s, depth %d, %lld shm %s, %lld net %s\\n"
		"root: double circle; members reached over the network: "
		"boxes; shm edges solid, net edges bold dashed",
		(int)t->n, plural(t->n, "member", "members"), (int)t->depth,
		(long long)t->shm, plural(t->shm, "edge", "edges"),
		(long long)t->net, plural(t->net, "edge", "edges"));
	/* A route table that departs from the rule (loaded hand-edited)
	 * says so, and where: the drawing shows the tree, the table is not
	 * the tree's. */
	if (topo_routes_departures(t, -1) > 0)
		fprintf(f,
			"\\nroute table edited: %lld %s depart from the rule "
			"(red outline: members whose rows do)",
			(long long)topo_routes_departures(t, -1),
			plural(topo_routes_departures(t, -1), "row", "rows"));
	fputs("\"];\n", f);
	fputs("  node [shape=ellipse, fontname=\"Helvetica\", "
	      "fontsize=10];\n  edge [arrowsize=0.7];\n",
	      f);

	/* Members are ascending endpoint ids, and endpoint ids follow task
	 * and so node order: each node's members are one run. */
	for (int32_t r = 0; r < t->n; r++) {
		int32_t node = topo_machine_endpoint_node(m, mem[r]);

		if (node != cur) {
			if (cur >= 0)
				fputs("  }\n", f);
			/* A named node shows its name after its id; a
			 * name needs no escaping (collc(5)). */
			fprintf(
			    f,
			    "  subgraph cluster_node%d {\n    "
			    "label=\"node %d%s%s\";\n    style=rounded;\n    "
			    "color=gray60;\n",
			    (int)node, (int)node, m->hosts != NULL ? " " : "",
			    m->hosts != NULL ? m->hosts[node] : "");
			cur = node;
		}
		fprintf(f, "    e%d [label=\"ep %d\\nrank %d\"", (int)mem[r],
			(int)mem[r], (int)r);
		if (r == t->root)
			fputs(", shape=doublecircle, style=filled, "
			      "fillcolor=" ROOT_FILL,
			      f);
		else if (t->edge[r] == TOPO_EDGE_NET)
			fputs(", shape=box", f);
		if (topo_routes_departures(t, r) > 0)
			fputs(", color=red, penwidth=2", f);
		fputs("];\n", f);
	}
	if (cur >= 0)
		fputs("  }\n", f);

	for (int32_t r = 0; r < t->n; r++) {
		if (t->parent[r] < 0)
			continue;
		fprintf(f, "  e%d -> e%d [%s];\n", (int)mem[t->parent[r]],
			(int)mem[r],
			t->edge[r] == TOPO_EDGE_NET
			    ? "style=\"bold,dashed\", color=\"" NET_COLOR "\""
			    : "style=solid, color=black");
	}
	return put_tail(f, err);
}

/* ---------------------------------------------------------------------- */
/* The node view */

/* A net edge as (parent's node, child's node), one integer so that
 * sorting brings the edges between one pair of nodes together. */
static uint64_t pair_key(int32_t from, int32_t to)
{
	return (uint64_t)(uint32_t)from << 32 | (uint32_t)to;
}

static int cmp_key(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

/* A vertex of the node view: a node that hosts members. */
struct vertex {
	int32_t node;  /* its id */
	int32_t first; /* its first member's rank (members are one run) */
	int32_t shm;   /* shm edges inside it */
	int32_t hops;  /* fewest net hops from the root to one of its members */
	int32_t via;   /* the node of the parent of the member reached in
			  that many hops (the lowest rank on ties), -1 for
			  the root's node: the edge that ranks it */
};

/* The vertex of node id `node` (which hosts members): v is sorted by node. */
static const struct vertex *find_vertex(const struct vertex *v, int32_t nv,
					int32_t node)
{
	int32_t lo = 0, hi = nv - 1;

	while (lo < hi) {
		int32_t mid = lo + (hi - lo) / 2;

		if (v[mid].node < node)
			lo = mid + 1;
		else
			hi = mid;
	}
	return &v[lo];
}

/* The tree by node, counted before anything is written so that running
 * out of memory leaves the stream untouched. */
struct by_node {
	struct vertex *v; /* [nv] */
	int32_t nv, max_hops;
	int32_t *order, *hops, *node_of; /* [t->n] */
	uint64_t *keys;			 /* [nkeys]: net edges, sorted */
	size_t nkeys, pairs;		 /* pairs: distinct keys */
};

static void by_node_free(struct by_node *b)
{
	topo__free(b->v);
	topo__free(b->node_of);
	topo__free(b->order);
	topo__free(b->hops);
	topo__free(b->keys);
}

/* The vertices (a node each, its members one run of ranks: see the
 * member view) and the net edges between them. */
static void collect_vertices(const topo_tree *t, struct by_node *b)
{
	b->nv = 0;
	for (int32_t r = 0; r < t->n; r++) {
		struct vertex *x;

		if (r == 0 || b->node_of[r] != b->node_of[r - 1])
			b->v[b->nv++] = (struct vertex){b->node_of[r], r, 0,
							INT32_MAX, -1};
		x = &b->v[b->nv - 1];
		if (r == t->root) {
			x->hops = 0;
			x->via = -1;
		} else if (t->edge[r] == TOPO_EDGE_SHM) {
			x->shm++;
		} else {
			int32_t p = b->node_of[t->parent[r]];

			b->keys[b->nkeys++] = pair_key(p, b->node_of[r]);
			/* Ties go to the lowest rank: r ascends. */
			if (b->hops[r] < x->hops) {
				x->hops = b->hops[r];
				x->via = p;
			}
		}
	}
	qsort(b->keys, b->nkeys, sizeof(*b->keys), cmp_key);
	for (size_t i = 0; i < b->nkeys; i++)
		if (i == 0 || b->keys[i] != b->keys[i - 1])
			b->pairs++;
}

/* Fills b; 0 or -1 when out of memory. */
static int count_by_node(const topo_tree *t, struct by_node *b)
{
	const topo_machine *m = t->g->m;

	b->node_of = topo__mallocarray((size_t)t->n, sizeof(*b->node_of));
	b->order = topo__mallocarray((size_t)t->n, sizeof(*b->order));
	b->hops = topo__mallocarray((size_t)t->n, sizeof(*b->hops));
	b->keys = topo__mallocarray(t->net > 0 ? (size_t)t->net : 1,
				    sizeof(*b->keys));
	if (b->node_of == NULL || b->order == NULL || b->hops == NULL ||
	    b->keys == NULL)
		return -1;
	for (int32_t r = 0; r < t->n; r++) {
		b->node_of[r] = topo_machine_endpoint_node(m, t->g->members[r]);
		if (r == 0 || b->node_of[r] != b->node_of[r - 1])
			b->nv++;
	}
	b->v = topo__mallocarray((size_t)b->nv, sizeof(*b->v));
	if (b->v == NULL)
		return -1;
	/* Net hops from the root to every member, parents first. */
	topo__pattern_bfs(t->n, t->root, t->child_off, t->child, b->order);
	for (int32_t i = 0; i < t->n; i++) {
		int32_t r = b->order[i];

		b->hops[r] = t->parent[r] < 0
				 ? 0
				 : b->hops[t->parent[r]] +
				       (t->edge[r] == TOPO_EDGE_NET);
		if (b->hops[r] > b->max_hops)
			b->max_hops = b->hops[r];
	}
	collect_vertices(t, b);
	return 0;
}

/* The graph's head and one box per node. */
static void put_node_boxes(FILE *f, const topo_tree *t,
			   const struct by_node *b)
{
	const struct vertex *v = b->v;
	int32_t nv = b->nv;

	put_head(f, t);
	fprintf(f,
		" by node: %d %s on %d %s, depth %d (at most %d net %s), "
		"%lld shm %s, %lld net %s between %zu node %s\\nbox: a node, "
		"its members and the shm edges inside; gold: the root's node; "
		"arrow: the net edges from a parent's node to a child's, "
		"counted when more than one\", rankdir=LR, newrank=true",
		(int)t->n, plural(t->n, "member", "members"), (int)nv,
		plural(nv, "node", "nodes"), (int)t->depth, (int)b->max_hops,
		plural(b->max_hops, "hop", "hops"), (long long)t->shm,
		plural(t->shm, "edge", "edges"), (long long)t->net,
		plural(t->net, "edge", "edges"), b->pairs,
		plural((int64_t)b->pairs, "pair", "pairs"));
	/* nslimit is per vertex; written in integers, so that no locale
	 * can turn its decimal point into a comma. */
	if (nv > NS_ITERATIONS) {
		int64_t millionths = (int64_t)NS_ITERATIONS * 1000000 / nv;

		fprintf(f, ", nslimit=0.%06d",
			(int)(millionths > 0 ? millionths : 1));
	}
	fputs("];\n", f);
	fputs("  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
	      "  edge [arrowsize=0.7, style=\"bold,dashed\", color=\"" NET_COLOR
	      "\", fontname=\"Helvetica\", fontsize=10];\n",
	      f);
	for (int32_t i = 0; i < nv; i++) {
		int32_t size =
		    (i + 1 < nv ? v[i + 1].first : t->n) - v[i].first;

		fprintf(f, "  n%d [label=\"node %d%s%s\\n%d %s, %d shm %s",
			(int)v[i].node, (int)v[i].node,
			t->g->m->hosts != NULL ? " " : "",
			t->g->m->hosts != NULL ? t->g->m->hosts[v[i].node] : "",
			(int)size, plural(size, "member", "members"),
			(int)v[i].shm, plural(v[i].shm, "edge", "edges"));
		if (v[i].node == b->node_of[t->root])
			fprintf(f,
				"\\nroot: ep %d\", style=filled, "
				"fillcolor=" ROOT_FILL ", peripheries=2];\n",
				(int)t->g->members[t->root]);
		else
			fputs("\"];\n", f);
	}
}

/* One arrow per pair of nodes with net edges between them. */
static void put_node_edges(FILE *f, const struct by_node *b)
{
	const uint64_t *keys = b->keys;

	for (size_t i = 0, j; i < b->nkeys; i = j) {
		int32_t p = (int32_t)(keys[i] >> 32), c = (int32_t)keys[i];
		const struct vertex *to = find_vertex(b->v, b->nv, c);
		int attrs = 0;

		for (j = i + 1; j < b->nkeys && keys[j] == keys[i]; j++)
			;
		fprintf(f, "  n%d -> n%d", (int)p, (int)c);
		if (j - i > 1)
			fprintf(f, "%sxlabel=\"%zu\"", attrs++ ? ", " : " [",
				j - i);
		/* Only the edge that first reaches a node ranks it, spanning
		 * as many columns as net hops lie between its ends' columns
		 * (more than one when it leaves a member its node received
		 * late). */
		if (to->via != p) {
			fprintf(f, "%sconstraint=false", attrs++ ? ", " : " [");
		} else {
			int32_t span =
			    to->hops - find_vertex(b->v, b->nv, p)->hops;

			if (span > 1)
				fprintf(f, "%sminlen=%d", attrs++ ? ", " : " [",
					(int)span);
		}
		fputs(attrs > 0 ? "];\n" : ";\n", f);
	}
}

int topo_tree_write_dot_nodes(const topo_tree *t, FILE *f, topo_error *err)
{
	struct by_node b = {0};
	int rc;

	if (t == NULL || f == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_tree_write_dot_nodes: a tree and a "
				 "stream are required");
	if (count_by_node(t, &b) != 0) {
		by_node_free(&b);
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory drawing %d members by node",
				 (int)t->n);
	}
	put_node_boxes(f, t, &b);
	put_node_edges(f, &b);
	rc = put_tail(f, err);
	by_node_free(&b);
	return rc;
}
