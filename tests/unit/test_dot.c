/*
 * test_dot.c - the Graphviz node view (topo_tree_write_dot_nodes): its
 * exact text on small machines and on a hand-edited tree; its vertices,
 * edges and counts parsed back and compared with the tree over random
 * machines, groups and shapes; trees of thousands of members on one node
 * and of thousands of nodes; errors (arguments, write errors, every
 * allocation failing, nothing written); and, when Graphviz is installed,
 * `dot -Tsvg` accepting both views and the node view's columns coming out
 * ordered by net hops.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "topo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* Helpers */

static topo_machine *machine(const char *json)
{
	topo_machine *m = NULL;
	topo_error err;
	char buf[1024];

	topo_error_clear(&err);
	if (topo_machine_load_string(&m, json, strlen(json), "m.json", &err) !=
	    0) {
		fprintf(stderr, "machine: %s\n",
			topo_error_format(&err, buf, sizeof(buf)));
		exit(2);
	}
	return m;
}

static topo_group *group(const topo_machine *m, const char *name,
			 const char *spec)
{
	topo_group *g = NULL;
	topo_error err;

	topo_error_clear(&err);
	if (topo_group_new(&g, m, name, spec, &err) != 0) {
		fprintf(stderr, "group %s: %s\n", spec, err.text);
		exit(2);
	}
	return g;
}

static topo_tree *tree(const topo_group *g, const char *shape)
{
	topo_tree *t = NULL;
	topo_error err;

	topo_error_clear(&err);
	if (topo_tree_new(&t, g, shape, &err) != 0) {
		fprintf(stderr, "tree %s: %s\n", shape, err.text);
		exit(2);
	}
	return t;
}

/* The node view (nodes != 0) or the member view of t, as a string. */
static char *draw(const topo_tree *t, int nodes)
{
	char *text = NULL;
	size_t size = 0;
	topo_error err;
	FILE *f = open_memstream(&text, &size);

	topo_error_clear(&err);
	CHECK_INT(nodes ? topo_tree_write_dot_nodes(t, f, &err)
			: topo_tree_write_dot(t, f, &err),
		  0);
	fclose(f);
	return text;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = strstr(hay, needle); p != NULL;
	     p = strstr(p + 1, needle))
		n++;
	return n;
}

/* ---------------------------------------------------------------------- */
/* Reading the node view back */

struct pvertex {
	int node, members, shm, root_ep; /* root_ep -1: not the root's node */
};

struct pedge {
	int from, to, count, ranks, minlen;
};

struct parsed {
	int members, nodes, depth, hops, pairs;
	long long shm, net;
	long nslimit; /* millionths, -1 when absent */
	int nv, ne;
	struct pvertex *v;
	struct pedge *e;
};

/* Parses text line by line; every line must be one the node view writes.
 * Returns 0, or -1 with a reason printed. */
static int parse(const char *text, struct parsed *p)
{
	const char *line = text;
	int lineno = 0;

	memset(p, 0, sizeof(*p));
	p->nslimit = -1;
	p->v = calloc(strlen(text) / 16 + 1, sizeof(*p->v));
	p->e = calloc(strlen(text) / 16 + 1, sizeof(*p->e));
	while (*line != '\0') {
		const char *end = strchr(line, '\n');
		char buf[4096], word[6][16];
		int len, n = 0;

		if (end == NULL || end - line >= (long)sizeof(buf)) {
			fprintf(stderr, "line %d unterminated or too long\n",
				lineno + 1);
			return -1;
		}
		len = (int)(end - line);
		memcpy(buf, line, (size_t)len);
		buf[len] = '\0';
		line = end + 1;
		lineno++;
		if (lineno == 1) {
			if (strncmp(buf, "digraph \"", 9) != 0 ||
			    strcmp(buf + len - 3, "\" {") != 0)
				goto bad;
		} else if (lineno == 2) {
			const char *s = strstr(buf, " by node: ");
			const char *ns = strstr(buf, ", nslimit=0.");

			if (strncmp(buf, "  graph [labelloc=t, ", 21) != 0 ||
			    s == NULL ||
			    sscanf(s,
				   " by node: %d %15[a-z] on %d %15[a-z], "
				   "depth %d (at most %d net %15[a-z]), %lld "
				   "shm %15[a-z], %lld net %15[a-z] between "
				   "%d node %15[a-z]\\n%n",
				   &p->members, word[0], &p->nodes, word[1],
				   &p->depth, &p->hops, word[2], &p->shm,
				   word[3], &p->net, word[4], &p->pairs,
				   word[5], &n) != 13 ||
			    n == 0 ||
			    !strstr(buf, "\", rankdir=LR, newrank=true"))
				goto bad;
			if (ns != NULL) {
				char *rest;

				p->nslimit = strtol(ns + 12, &rest, 10);
				if (strcmp(rest, "];") != 0 ||
				    rest - (ns + 12) != 6)
					goto bad;
			} else if (strcmp(buf + len - 2, "];") != 0) {
				goto bad;
			}
		} else if (lineno == 3) {
			if (strcmp(buf, "  node [shape=box, fontname="
					"\"Helvetica\", fontsize=10];") != 0)
				goto bad;
		} else if (lineno == 4) {
			if (strcmp(buf, "  edge [arrowsize=0.7, style="
					"\"bold,dashed\", color=\"#1f5fbf\", "
					"fontname=\"Helvetica\", "
					"fontsize=10];") != 0)
				goto bad;
		} else if (strcmp(buf, "}") == 0) {
			if (*line != '\0')
				goto bad;
		} else if (strstr(buf, " -> ") != NULL) {
			struct pedge *e = &p->e[p->ne++];
			char *a;

			n = 0;
			if (sscanf(buf, "  n%d -> n%d%n", &e->from, &e->to,
				   &n) != 2)
				goto bad;
			a = buf + n;
			e->count = 1;
			e->ranks = 1;
			e->minlen = 1;
			if (strcmp(a, ";") == 0)
				continue;
			/* " [A, B];" with A, B among xlabel="N" (N > 1),
			 * then constraint=false or minlen=N (N > 1). */
			if (strncmp(a, " [", 2) != 0 ||
			    strcmp(buf + len - 2, "];") != 0)
				goto bad;
			buf[len - 2] = '\0';
			for (char *save = NULL,
				  *at = strtok_r(a + 2, ",", &save);
			     at != NULL; at = strtok_r(NULL, ",", &save)) {
				char *rest;

				at += *at == ' ';
				if (strncmp(at, "xlabel=\"", 8) == 0 &&
				    e->count == 1 && e->ranks &&
				    e->minlen == 1) {
					e->count =
					    (int)strtol(at + 8, &rest, 10);
					if (e->count < 2 ||
					    strcmp(rest, "\"") != 0)
						goto bad;
				} else if (strcmp(at, "constraint=false") ==
					       0 &&
					   e->ranks && e->minlen == 1) {
					e->ranks = 0;
				} else if (strncmp(at, "minlen=", 7) == 0 &&
					   e->ranks && e->minlen == 1) {
					e->minlen =
					    (int)strtol(at + 7, &rest, 10);
					if (e->minlen < 2 || *rest != '\0')
						goto bad;
				} else {
					goto bad;
				}
			}
		} else {
			struct pvertex *v = &p->v[p->nv++];
			int node2;

			n = 0;
			v->root_ep = -1;
			if (sscanf(buf,
				   "  n%d [label=\"node %d\\n%d %15[a-z], %d "
				   "shm %15[a-z]%n",
				   &v->node, &node2, &v->members, word[0],
				   &v->shm, word[1], &n) != 6 ||
			    n == 0 || node2 != v->node)
				goto bad;
			if (strcmp(word[0], v->members == 1 ? "member"
							    : "members") != 0 ||
			    strcmp(word[1], v->shm == 1 ? "edge" : "edges") !=
				0)
				goto bad;
			if (strcmp(buf + n, "\"];") == 0)
				continue;
			if (sscanf(buf + n, "\\nroot: ep %d%n", &v->root_ep,
				   &node2) != 1 ||
			    strcmp(buf + n + node2,
				   "\", style=filled, fillcolor=gold, "
				   "peripheries=2];") != 0)
				goto bad;
		}
		continue;
	bad:
		fprintf(stderr, "line %d not understood: %s\n", lineno, buf);
		return -1;
	}
	return 0;
}

static void parsed_free(struct parsed *p)
{
	free(p->v);
	free(p->e);
}

/*
 * Draws t node by node, reads it back and compares everything with what
 * the tree says, computed here independently: the vertices are the nodes
 * hosting members, ascending, with their member and shm edge counts; the
 * edges are the ordered (parent's node, child's node) pairs of net edges,
 * ascending, with their multiplicities; each node but the root's is ranked
 * by exactly one incoming edge, whose minlen is the difference of its ends'
 * fewest net hops from the root, so that dot's columns are those hops.
 * Returns the number of ranking edges longer than one column.
 */
static int check_node_view(const topo_tree *t, const char *what)
{
	const topo_group *g = topo_tree_group(t);
	const topo_machine *m = topo_group_machine(g);
	const int32_t *mem = topo_group_members(g), *par = topo_tree_parent(t);
	int32_t n = topo_group_size(g), N = topo_machine_nodes(m);
	int32_t root = topo_tree_root(t);
	int *members = calloc((size_t)N, sizeof(int));
	int *shm = calloc((size_t)N, sizeof(int));
	int *minhops = malloc((size_t)N * sizeof(int));
	int *hops = malloc((size_t)n * sizeof(int));
	int *pairs = calloc((size_t)N * (size_t)N, sizeof(int));
	int *ranked = calloc((size_t)N, sizeof(int));
	int *via = malloc((size_t)N * sizeof(int));
	int nodes = 0, npairs = 0, maxhops = 0, long_edges = 0, last = -1;
	int64_t nshm, nnet;
	char *text = draw(t, 1);
	struct parsed p;

	topo_tree_edge_counts(t, &nshm, &nnet);
	for (int32_t i = 0; i < N; i++)
		minhops[i] = via[i] = -1;
	for (int32_t r = 0; r < n; r++)
		hops[r] = -1;
	for (int32_t r = 0; r < n; r++) {
		int32_t node = topo_machine_endpoint_node(m, mem[r]);
		int32_t up = r, h = 0;

		/* Net hops: walk up to the root, counting net edges. */
		while (up != root) {
			h += topo_tree_edge(t, up) == TOPO_EDGE_NET;
			up = par[up];
		}
		hops[r] = h;
		maxhops = h > maxhops ? h : maxhops;
		if (members[node]++ == 0)
			nodes++;
		/* The node is ranked through the parent of its member
		 * reached in the fewest net hops, the lowest rank on ties. */
		if (minhops[node] < 0 || h < minhops[node]) {
			minhops[node] = h;
			via[node] =
			    r == root
				? -1
				: topo_machine_endpoint_node(m, mem[par[r]]);
		}
		if (topo_tree_edge(t, r) == TOPO_EDGE_SHM)
			shm[node]++;
		if (topo_tree_edge(t, r) == TOPO_EDGE_NET) {
			int32_t from =
			    topo_machine_endpoint_node(m, mem[par[r]]);

			if (pairs[(size_t)from * (size_t)N + (size_t)node]++ ==
			    0)
				npairs++;
		}
	}

	if (parse(text, &p) != 0) {
		CHECK(0, "%s: the node view does not parse", what);
		goto done;
	}
	CHECK(p.members == n && p.nodes == nodes &&
		  p.depth == topo_tree_depth(t) && p.hops == maxhops &&
		  p.shm == nshm && p.net == nnet && p.pairs == npairs,
	      "%s: label %d members on %d nodes, depth %d, %d hops, %lld "
	      "shm, %lld net, %d pairs; want %d, %d, %d, %d, %lld, %lld, %d",
	      what, p.members, p.nodes, p.depth, p.hops, p.shm, p.net, p.pairs,
	      (int)n, nodes, (int)topo_tree_depth(t), maxhops, (long long)nshm,
	      (long long)nnet, npairs);
	CHECK(p.nslimit == (nodes > 1000 ? 1000000000L / nodes : -1),
	      "%s: nslimit %ld for %d nodes", what, p.nslimit, nodes);
	CHECK(p.nv == nodes, "%s: %d vertices, %d nodes host members", what,
	      p.nv, nodes);
	{
		long sum = 0;
		int roots = 0;

		for (int i = 0; i < p.nv; i++) {
			const struct pvertex *v = &p.v[i];

			CHECK(v->node > last && v->node < N &&
				  members[v->node] == v->members &&
				  shm[v->node] == v->shm,
			      "%s: vertex %d: node %d, %d members, %d shm",
			      what, i, v->node, v->members, v->shm);
			if (v->node <= last || v->node >= N)
				goto done;
			last = v->node;
			sum += v->members;
			if (v->root_ep >= 0) {
				roots++;
				CHECK(v->root_ep == mem[root] &&
					  v->node == topo_machine_endpoint_node(
							 m, mem[root]),
				      "%s: root ep %d on node %d", what,
				      v->root_ep, v->node);
			}
		}
		CHECK(sum == n, "%s: member counts sum to %ld, want %d", what,
		      sum, (int)n);
		CHECK_INT(roots, 1);
	}
	CHECK(p.ne == npairs, "%s: %d edges, %d node pairs", what, p.ne,
	      npairs);
	{
		long sum = 0;
		long long prev = -1;

		for (int i = 0; i < p.ne; i++) {
			const struct pedge *e = &p.e[i];
			long long key;

			if (e->from < 0 || e->from >= N || e->to < 0 ||
			    e->to >= N) {
				CHECK(0, "%s: edge n%d -> n%d", what, e->from,
				      e->to);
				goto done;
			}
			key = (long long)e->from * N + e->to;
			CHECK(key > prev, "%s: edges ascending", what);
			prev = key;
			CHECK(pairs[key] == e->count,
			      "%s: n%d -> n%d counts %d, want %d", what,
			      e->from, e->to, e->count, pairs[key]);
			sum += e->count;
			if (e->ranks) {
				ranked[e->to]++;
				CHECK(via[e->to] == e->from,
				      "%s: n%d ranked from n%d, want n%d", what,
				      e->to, e->from, via[e->to]);
				CHECK(e->minlen ==
					  minhops[e->to] - minhops[e->from],
				      "%s: n%d -> n%d minlen %d, hops %d -> "
				      "%d",
				      what, e->from, e->to, e->minlen,
				      minhops[e->from], minhops[e->to]);
				long_edges += e->minlen > 1;
			}
		}
		CHECK(sum == nnet, "%s: edge counts sum to %ld, want %lld",
		      what, sum, (long long)nnet);
	}
	for (int i = 0; i < p.nv; i++) {
		int node = p.v[i].node;

		CHECK(ranked[node] == (p.v[i].root_ep >= 0 ? 0 : 1),
		      "%s: node %d ranked by %d edges", what, node,
		      ranked[node]);
	}
done:
	parsed_free(&p);
	free(text);
	free(members);
	free(shm);
	free(minhops);
	free(hops);
	free(pairs);
	free(ranked);
	free(via);
	return long_edges;
}

/* ---------------------------------------------------------------------- */
/* Exact text */

static void test_exact(void)
{
	topo_machine *m =
	    machine("{\"name\": \"three\", \"nodes\": 3, \"tasks_per_node\": "
		    "[2, 1, 3], \"network\": {\"type\": \"tree\", \"parent\": "
		    "[-1, 0, 0]}}");
	topo_group *g = group(m, "we\"ird\\N\x01", "all - ep 0");
	topo_tree *phys = tree(g, "physical"), *bin = tree(g, "binomial");
	char *text;

	/* Members eps 1..5: ep 1 on node 0, ep 2 on node 1, eps 3..5 on
	 * node 2.  The physical tree enters each node once. */
	text = draw(phys, 1);
	CHECK_STR(
	    text,
	    "digraph \"we\\\"ird\\\\N /physical\" {\n"
	    "  graph [labelloc=t, fontname=\"Helvetica\", label=\"group "
	    "we\\\"ird\\\\N  (all - ep 0), tree physical by node: 5 "
	    "members on 3 nodes, depth 2 (at most 1 net hop), 2 shm "
	    "edges, 2 net edges between 2 node pairs\\nbox: a node, its "
	    "members and the shm edges inside; gold: the root's node; "
	    "arrow: the net edges from a parent's node to a child's, "
	    "counted when more than one\", rankdir=LR, newrank=true];\n"
	    "  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n"
	    "  edge [arrowsize=0.7, style=\"bold,dashed\", "
	    "color=\"#1f5fbf\", fontname=\"Helvetica\", fontsize=10];\n"
	    "  n0 [label=\"node 0\\n1 member, 0 shm edges\\nroot: ep 1\", "
	    "style=filled, fillcolor=gold, peripheries=2];\n"
	    "  n1 [label=\"node 1\\n1 member, 0 shm edges\"];\n"
	    "  n2 [label=\"node 2\\n3 members, 2 shm edges\"];\n"
	    "  n0 -> n1;\n"
	    "  n0 -> n2;\n"
	    "}\n");
	free(text);

	/* binomial over ranks 0..4: 1 <- 0, 2 <- 0, 3 <- 2, 4 <- 0: node 2
	 * is entered twice from node 0 (eps 3 and 5), and ep 4 hangs
	 * below ep 3 inside it. */
	text = draw(bin, 1);
	CHECK(strstr(text, "tree binomial by node: 5 members on 3 nodes, "
			   "depth 2 (at most 1 net hop), 1 shm edge, 3 net "
			   "edges between 2 node pairs\\n") != NULL,
	      "binomial label: %.300s", text);
	CHECK(strstr(text, "  n2 [label=\"node 2\\n3 members, 1 shm edge\"];\n"
			   "  n0 -> n1;\n"
			   "  n0 -> n2 [xlabel=\"2\"];\n"
			   "}\n") != NULL,
	      "binomial: two net edges from node 0 to node 2");
	free(text);
	topo_tree_free(phys);
	topo_tree_free(bin);
	topo_group_free(g);
	topo_machine_free(m);
}

/* A hand-edited tree (a compile output's "parent" is kept as written):
 * ep 0 on node 0 -> ep 2 on node 1 -> ep 1 back on node 0 -> ep 4 on
 * node 2.  Node 2 is first reached after 3 net hops, through node 0, whose
 * column is 0: its ranking edge spans 3 columns; the edge back into the
 * root's node ranks nothing. */
static void test_hand_edited(void)
{
	static const char doc[] =
	    "{\"format\": \"collc-routes\", \"version\": 1, \"machine\": "
	    "{\"name\": \"h\", \"nodes\": 3, \"tasks\": 6, "
	    "\"endpoints_per_task\": 1, \"endpoints\": 6, \"tasks_per_node\": "
	    "[2, 2, 2], \"network\": {\"type\": \"tree\", \"physical_root\": "
	    "0, \"parent\": [-1, 0, 0]}}, \"groups\": [{\"name\": \"world\", "
	    "\"spec\": \"all\", \"members\": [0, 1, 2, 3, 4, 5], \"trees\": "
	    "[{\"name\": \"physical\", \"root\": 0, \"parent\": [-1, 2, 0, 2, "
	    "1, 4], \"edge\": [\"root\", \"net\", \"net\", \"shm\", \"net\", "
	    "\"shm\"]}]}]}";
	topo_compiled *c = NULL;
	topo_error err;
	char *text;

	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_string(&c, doc, strlen(doc), "h", &err),
		  0);
	if (c == NULL) {
		fprintf(stderr, "hand-edited: %s\n", err.text);
		return;
	}
	text = draw(topo_compiled_tree(c, 0, 0), 1);
	CHECK(strstr(text, "depth 4 (at most 3 net hops), 2 shm edges, 3 net "
			   "edges between 3 node pairs\\n") != NULL,
	      "hand-edited label: %.300s", text);
	CHECK(strstr(text, "  n0 [label=\"node 0\\n2 members, 0 shm edges\\n"
			   "root: ep 0\", style=filled, fillcolor=gold, "
			   "peripheries=2];\n"
			   "  n1 [label=\"node 1\\n2 members, 1 shm edge\"];\n"
			   "  n2 [label=\"node 2\\n2 members, 1 shm edge\"];\n"
			   "  n0 -> n1;\n"
			   "  n0 -> n2 [minlen=3];\n"
			   "  n1 -> n0 [constraint=false];\n"
			   "}\n") != NULL,
	      "hand-edited vertices and edges: %s", text);
	CHECK_INT(check_node_view(topo_compiled_tree(c, 0, 0), "hand-edited"),
		  1);
	free(text);
	topo_compiled_free(c);
}

/* ---------------------------------------------------------------------- */
/* Random machines */

static topo_machine *random_machine(int max_nodes)
{
	char json[8192];
	int nodes = (int)check_rand_range(1, max_nodes), len, type;

	len = snprintf(json, sizeof(json),
		       "{\"nodes\": %d, \"endpoints_per_task\": %ld, "
		       "\"tasks_per_node\": [",
		       nodes, check_rand_range(1, 3));
	for (int i = 0; i < nodes; i++)
		len += snprintf(json + len, sizeof(json) - (size_t)len, "%s%ld",
				i ? ", " : "", check_rand_range(1, 5));
	type = (int)check_rand_range(0, 2);
	if (type == 0) {
		len += snprintf(json + len, sizeof(json) - (size_t)len,
				"], \"network\": {\"type\": \"kary\", "
				"\"fanout\": %ld, \"physical_root\": %ld}}",
				check_rand_range(1, 4),
				check_rand_range(0, nodes - 1));
	} else if (type == 1 && nodes % 2 == 0) {
		len += snprintf(json + len, sizeof(json) - (size_t)len,
				"], \"network\": {\"type\": \"torus\", "
				"\"dims\": [2, %d]}}",
				nodes / 2);
	} else {
		/* A random tree: each node below a random lower one. */
		len += snprintf(json + len, sizeof(json) - (size_t)len,
				"], \"network\": {\"type\": \"tree\", "
				"\"parent\": [-1");
		for (int i = 1; i < nodes; i++)
			len += snprintf(json + len, sizeof(json) - (size_t)len,
					", %ld", check_rand_range(0, i - 1));
		len += snprintf(json + len, sizeof(json) - (size_t)len, "]}}");
	}
	return machine(json);
}

static topo_group *random_group(const topo_machine *m)
{
	int32_t n = 0, total = topo_machine_endpoints(m);
	int32_t *mem = topo__mallocarray((size_t)total, sizeof(int32_t));
	long percent = (long[]){100, 70, 30, 5}[check_rand_range(0, 3)];
	topo_group *g = NULL;

	for (int32_t e = 0; e < total; e++)
		if (check_rand_range(1, 100) <= percent)
			mem[n++] = e;
	if (n == 0)
		mem[n++] = (int32_t)check_rand_range(0, total - 1);
	if (topo__group_from_members(&g, m, "random", "random", mem, n) != 0)
		exit(2);
	return g;
}

static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain",	 "kary:1",	 "kary:2",
				     "kary:3",	 "kary:5",	 "kary:100"};

static void test_random(void)
{
	int trees = 0, long_edges = 0;

	for (int round = 0; round < 150; round++) {
		topo_machine *m = random_machine(round < 100 ? 12 : 60);
		topo_group *g = random_group(m);

		for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]);
		     s++) {
			topo_tree *t = tree(g, shapes[s]);
			char what[64], *text;
			int64_t shm, net;

			snprintf(what, sizeof(what), "round %d %s", round,
				 shapes[s]);
			long_edges += check_node_view(t, what);
			/* The member view boxes exactly the members reached
			 * over the network, as its legend says. */
			text = draw(t, 0);
			topo_tree_edge_counts(t, &shm, &net);
			CHECK(count(text, "shape=box") == net,
			      "%s: %d boxes, %lld net edges", what,
			      count(text, "shape=box"), (long long)net);
			free(text);
			topo_tree_free(t);
			trees++;
		}
		topo_group_free(g);
		topo_machine_free(m);
	}
	printf("test_dot: %d random trees, %d ranking edges longer than one "
	       "column\n",
	       trees, long_edges);
}

/* ---------------------------------------------------------------------- */
/* Large trees: the view grows with the nodes, never with the members */

static void test_large(void)
{
	topo_machine *one = machine("{\"nodes\": 1, \"tasks_per_node\": 6000, "
				    "\"network\": {\"type\": \"kary\", "
				    "\"fanout\": 2}}");
	topo_machine *wide = machine("{\"nodes\": 1500, \"tasks_per_node\": 3, "
				     "\"network\": {\"type\": \"kary\", "
				     "\"fanout\": 4}}");
	topo_machine *edge = machine("{\"nodes\": 1001, \"tasks_per_node\": 1, "
				     "\"network\": {\"type\": \"kary\", "
				     "\"fanout\": 2}}");
	topo_machine *below = machine("{\"nodes\": 1000, \"tasks_per_node\": "
				      "1, \"network\": {\"type\": \"kary\", "
				      "\"fanout\": 2}}");
	topo_group *g1 = group(one, NULL, "all"),
		   *gw = group(wide, NULL, "all");
	topo_group *ge = group(edge, NULL, "all"),
		   *gb = group(below, NULL, "all");
	static const char *const big[] = {"chain", "binomial", "kary:100000"};
	char *text;

	/* 6000 members on one node, whatever the shape: one vertex. */
	for (size_t s = 0; s < 3; s++) {
		topo_tree *t = tree(g1, big[s]);

		text = draw(t, 1);
		CHECK(strstr(text, "\n  n0 [label=\"node 0\\n6000 members, "
				   "5999 shm edges\\nroot: ep 0\", "
				   "style=filled, fillcolor=gold, "
				   "peripheries=2];\n}\n") != NULL,
		      "%s: one vertex for 6000 members", big[s]);
		CHECK_INT(count(text, "\n"), 6);
		check_node_view(t, big[s]);
		free(text);
		topo_tree_free(t);
	}
	/* The root with 4499 member children on 1499 other nodes: one edge
	 * per node, counting 3, and dot's positioning capped. */
	{
		topo_tree *t = tree(gw, "kary:100000");

		text = draw(t, 1);
		CHECK_INT(count(text, " [label=\"node "), 1500);
		CHECK_INT(count(text, " -> "), 1499);
		CHECK_INT(count(text, " [xlabel=\"3\"];\n"), 1499);
		CHECK(strstr(text, ", nslimit=0.666666];\n") != NULL,
		      "nslimit for 1500 nodes");
		check_node_view(t, "wide kary:100000");
		free(text);
		topo_tree_free(t);
	}
	{
		topo_tree *te = tree(ge, "physical"),
			  *tb = tree(gb, "physical");
		char *tx = draw(tb, 1);

		text = draw(te, 1);
		CHECK(strstr(text, ", rankdir=LR, newrank=true, "
				   "nslimit=0.999000];\n") != NULL,
		      "nslimit from 1001 nodes on");
		CHECK(strstr(tx, ", rankdir=LR, newrank=true];\n") != NULL,
		      "no nslimit at 1000 nodes");
		free(text);
		free(tx);
		topo_tree_free(te);
		topo_tree_free(tb);
	}
	topo_group_free(g1);
	topo_group_free(gw);
	topo_group_free(ge);
	topo_group_free(gb);
	topo_machine_free(one);
	topo_machine_free(wide);
	topo_machine_free(edge);
	topo_machine_free(below);
}

/* ---------------------------------------------------------------------- */
/* Errors */

static void test_errors(void)
{
	topo_machine *m = machine("{\"nodes\": 3, \"tasks_per_node\": 2, "
				  "\"network\": {\"type\": \"kary\", "
				  "\"fanout\": 2}}");
	topo_group *g = group(m, NULL, "all");
	topo_tree *t = tree(g, "binomial");
	topo_error err;
	char *text, *want = draw(t, 1);
	size_t size;
	long k;
	FILE *f;
	int rc;

	topo_error_clear(&err);
	CHECK_INT(topo_tree_write_dot_nodes(NULL, stdout, &err), TOPO_EARG);
	CHECK_STR(err.text, "topo_tree_write_dot_nodes: a tree and a stream "
			    "are required");
	topo_error_clear(&err);
	CHECK_INT(topo_tree_write_dot_nodes(t, NULL, &err), TOPO_EARG);
	CHECK_INT(topo_tree_write_dot_nodes(t, NULL, NULL), TOPO_EARG);

	f = fopen("/dev/full", "w");
	if (f != NULL) {
		topo_error_clear(&err);
		CHECK_INT(topo_tree_write_dot_nodes(t, f, &err), TOPO_EIO);
		CHECK_STR(err.text, "No space left on device");
		fclose(f);
	}
	f = tmpfile();
	if (f != NULL) {
		FILE *r = fdopen(dup(fileno(f)), "r");

		topo_error_clear(&err);
		CHECK_INT(topo_tree_write_dot_nodes(t, r, &err), TOPO_EIO);
		fclose(r);
		fclose(f);
	}

	/* Every allocation may fail: TOPO_ENOMEM, nothing written, nothing
	 * leaked (the sanitizer build checks that), and the next call
	 * draws the same as before. */
	for (k = 0; k < 100; k++) {
		text = NULL;
		size = 0;
		f = open_memstream(&text, &size);
		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo_tree_write_dot_nodes(t, f, &err);
		topo__alloc_fail_after(-1);
		fclose(f);
		if (rc == 0) {
			CHECK_STR(text, want);
			free(text);
			break;
		}
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK_STR(err.text, "out of memory drawing 6 members by node");
		CHECK(size == 0, "%zu bytes written before running out", size);
		free(text);
	}
	CHECK(k > 0 && k < 100, "%ld allocations", k);
	free(want);
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* Graphviz */

/* Runs dot on text: SVG (which must come without a word on standard
 * error) and, for the node view, the plain format, whose vertex positions
 * must put every node in the column of its fewest net hops (rankdir LR:
 * one x per column, x growing with the hops).  Returns 0 or -1. */
static int render(const char *text, const topo_tree *node_tree,
		  const char *what)
{
	char dir[] = "/tmp/test_dot.XXXXXX", cmd[512], path[256];
	FILE *f;
	int rc = -1, status;

	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(path, sizeof(path), "%s/in.dot", dir);
	f = fopen(path, "w");
	if (f == NULL)
		goto done;
	fputs(text, f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "cd %s && dot -Tsvg -o out.svg -Tplain -o out.plain in.dot "
		 "2>err && test -s out.svg && ! test -s err",
		 dir);
	status = system(cmd);
	CHECK(status == 0, "%s: dot failed or complained (status %d)", what,
	      status);
	if (status != 0) {
		snprintf(cmd, sizeof(cmd), "cat %s/err >&2", dir);
		if (system(cmd) != 0)
			fprintf(stderr, "(no dot error output)\n");
		goto done;
	}
	rc = 0;
	if (node_tree != NULL) {
		const topo_group *g = topo_tree_group(node_tree);
		const topo_machine *m = topo_group_machine(g);
		const int32_t *mem = topo_group_members(g);
		const int32_t *par = topo_tree_parent(node_tree);
		int32_t N = topo_machine_nodes(m), n = topo_group_size(g);
		int *minhops = malloc((size_t)N * sizeof(int));
		double *colx = calloc((size_t)n + 1, sizeof(double));
		char line[1024];
		int ok = 1, seen = 0;

		for (int32_t i = 0; i < N; i++)
			minhops[i] = -1;
		for (int32_t r = 0; r < n; r++) {
			int32_t node = topo_machine_endpoint_node(m, mem[r]);
			int h = 0;

			for (int32_t up = r; par[up] >= 0; up = par[up])
				h += topo_tree_edge(node_tree, up) ==
				     TOPO_EDGE_NET;
			if (minhops[node] < 0 || h < minhops[node])
				minhops[node] = h;
		}
		for (int32_t i = 0; i <= n; i++)
			colx[i] = -1;
		snprintf(path, sizeof(path), "%s/out.plain", dir);
		f = fopen(path, "r");
		while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
			int node;
			double x;

			if (sscanf(line, "node n%d %lf", &node, &x) != 2)
				continue;
			seen++;
			if (node < 0 || node >= N || minhops[node] < 0) {
				ok = 0;
				continue;
			}
			if (colx[minhops[node]] < 0)
				colx[minhops[node]] = x;
			else if (colx[minhops[node]] != x)
				ok = 0;
		}
		if (f != NULL)
			fclose(f);
		for (int32_t i = 1, prev = 0; i <= n; i++) {
			if (colx[i] < 0)
				continue;
			if (colx[i] <= colx[prev])
				ok = 0;
			prev = i;
		}
		CHECK(ok && seen > 0,
		      "%s: dot's columns are not the net hops (%d vertices)",
		      what, seen);
		rc = ok ? 0 : -1;
		free(minhops);
		free(colx);
	}
done:
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return rc;
}

static void test_graphviz(void)
{
	topo_machine *m;
	topo_group *g;
	int runs = 0;

	if (system("command -v dot >/dev/null 2>&1") != 0) {
		check_skip("test_dot: rendering: Graphviz dot is not "
			   "installed (make deps installs it)");
		return;
	}
	/* Names with every kind of byte the escaping must handle. */
	m = machine("{\"nodes\": 5, \"tasks_per_node\": [3, 1, 4, 1, 5], "
		    "\"network\": {\"type\": \"tree\", \"parent\": [-1, 0, 1, "
		    "1, 0]}}");
	g = group(m, "q\"uote \\back\nline\x01\x7f bad\xff\xfe utf8 \xc3\xa9",
		  "all - ep 0");
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		topo_tree *t = tree(g, shapes[s]);
		char *text = draw(t, 1), what[64];

		for (const unsigned char *p = (const unsigned char *)text; *p;
		     p++)
			if ((*p < 0x20 && *p != '\n') || *p == 0x7f) {
				CHECK(0, "%s: control character %#x", shapes[s],
				      *p);
				break;
			}
		snprintf(what, sizeof(what), "node view %s", shapes[s]);
		render(text, t, what);
		free(text);
		text = draw(t, 0);
		snprintf(what, sizeof(what), "member view %s", shapes[s]);
		render(text, NULL, what);
		free(text);
		topo_tree_free(t);
		runs += 2;
	}
	topo_group_free(g);
	topo_machine_free(m);

	for (int round = 0; round < 12; round++) {
		topo_tree *t;
		char *text, what[64];

		m = random_machine(40);
		g = random_group(m);
		t = tree(g, shapes[check_rand_range(0, 8)]);
		text = draw(t, 1);
		snprintf(what, sizeof(what), "random %d %s", round,
			 topo_tree_name(t));
		render(text, t, what);
		free(text);
		topo_tree_free(t);
		topo_group_free(g);
		topo_machine_free(m);
		runs++;
	}

	/* Past 1000 nodes, with nslimit: still valid, still in columns. */
	m = machine("{\"nodes\": 1200, \"tasks_per_node\": 2, \"network\": "
		    "{\"type\": \"torus\", \"dims\": [10, 12, 10]}}");
	g = group(m, NULL, "all");
	{
		topo_tree *t = tree(g, "binomial");
		char *text = draw(t, 1);

		render(text, t, "1200 nodes binomial");
		free(text);
		topo_tree_free(t);
		runs++;
	}
	topo_group_free(g);
	topo_machine_free(m);
	printf("test_dot: %d drawings rendered by dot\n", runs);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_dot", 20261123);
	CHECK_RUN(exact, test_exact());
	CHECK_RUN(hand_edited, test_hand_edited());
	CHECK_RUN(random, test_random());
	CHECK_RUN(large, test_large());
	CHECK_RUN(errors, test_errors());
	CHECK_RUN(graphviz, test_graphviz());
	return check_done("test_dot");
}
