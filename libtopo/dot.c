/*
 * dot.c - drawing a tree as a Graphviz digraph (collc dot), ready for
 * `dot -Tsvg`.
 *
 * One cluster per machine node holds that node's members, so shared-memory
 * edges stay inside a box and network edges cross between boxes.  A vertex
 * is labelled with the member's endpoint id and group rank; the node is the
 * cluster's label.  The tree root is a filled double circle, and every
 * member whose edge to its parent is a net edge, whatever the tree's shape,
 * is a box: in the physical and hierarchical trees those are the
 * node-local roots, one per node, but in the binomial, chain and k-ary
 * trees a node may hold several.  shm edges are thin and solid, net edges
 * bold, dashed and coloured.  The output depends on the tree alone, so
 * equal trees give equal files.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <errno.h>
#include <string.h>

#define NET_COLOR "#1f5fbf"
#define ROOT_FILL "gold"

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

int topo_tree_write_dot(const topo_tree *t, FILE *f, topo_error *err)
{
	const topo_group *g;
	const topo_machine *m;
	const int32_t *mem;
	int32_t cur = -1;
	int e;

	if (t == NULL || f == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_tree_write_dot: a tree and a stream "
				 "are required");
	g = t->g;
	m = g->m;
	mem = g->members;

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
	fprintf(f,
		": %d %s, depth %d, %lld shm %s, %lld net %s\\n"
		"root: double circle; members reached over the network: "
		"boxes; shm edges solid, net edges bold dashed\"];\n",
		(int)t->n, plural(t->n, "member", "members"), (int)t->depth,
		(long long)t->shm, plural(t->shm, "edge", "edges"),
		(long long)t->net, plural(t->net, "edge", "edges"));
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
			fprintf(f,
				"  subgraph cluster_node%d {\n    "
				"label=\"node %d\";\n    style=rounded;\n    "
				"color=gray60;\n",
				(int)node, (int)node);
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
	fputs("}\n", f);

	errno = 0;
	if (fflush(f) != 0 || ferror(f)) {
		e = errno;
		return topo__err(err, TOPO_EIO, NULL, NULL, "%s",
				 e != 0 ? strerror(e) : "write error");
	}
	return 0;
}
