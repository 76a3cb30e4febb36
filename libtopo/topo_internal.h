/*
 * topo_internal.h - libtopo's private structures and cross-file helpers.
 *
 * Not installed.  Names shared between the library's files are topo__*;
 * file-local helpers are static.  Only libtopo's own sources and its unit
 * tests may include this header: they define TOPO_INTERNAL first.
 */
#ifndef TOPO_INTERNAL_H
#define TOPO_INTERNAL_H

#ifndef TOPO_INTERNAL
#error "topo_internal.h is private to libtopo; include <topo.h> instead"
#endif

#include "topo.h"
#include "tune.h"

#include <stdarg.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Largest number of endpoints (ids are int32_t >= 0). */
#define TOPO_MAX_ENDPOINTS INT32_MAX

/* ---------------------------------------------------------------------- */
/* Allocation.  Every allocation in the library goes through these, so a
 * test can make the Nth one fail (topo__alloc_fail_after). */
void *topo__malloc(size_t size);
void *topo__calloc(size_t count, size_t size);

/* Populates up to four large fresh arrays in a background thread while the
 * caller works (alloc.c): add them, start, and wait before freeing them
 * or returning.  Only an optimisation (nothing happens without a CPU to
 * spare); the arrays' contents are never changed.  topo__populate_wait
 * lets the thread finish; topo__populate_stop makes it stop within a few
 * megabytes, for arrays the caller no longer needs populated (complete,
 * about to move, or to be freed on an error or a deadline). */
struct topo__populate {
	void *p[4];
	size_t len[4];
	size_t n;
	pthread_t th;
	bool started;
	_Atomic bool stop;
};
void topo__populate_add(struct topo__populate *pp, void *p, size_t len);
void topo__populate_start(struct topo__populate *pp);
void topo__populate_wait(struct topo__populate *pp);
void topo__populate_stop(struct topo__populate *pp);
void *topo__realloc(void *p, size_t size);
/* A large buffer straight from the kernel (alloc.c): blocks of at least
 * topo__tune.map_min bytes are anonymous mappings of their own, aligned to
 * 2 MiB, advised to use huge pages, zeroed, and followed by an
 * inaccessible guard page; smaller ones come from topo__malloc.  Failure
 * injection counts each like any allocation.  topo__block_free(b) on a
 * block that failed or was never allocated (zeroed) does nothing. */
struct topo__block {
	void *p;
	size_t mapped; /* bytes mapped, guard page included; 0: malloc's */
};
void *topo__block_alloc(struct topo__block *b, size_t size);
void topo__block_free(struct topo__block *b);
/* Mapped blocks not yet freed: leak checkers see the heap only, so tests
 * check this instead. */
long topo__blocks_mapped(void);
/* count * size with overflow checking; NULL on overflow or failure. */
void *topo__mallocarray(size_t count, size_t size);
char *topo__strdup(const char *s);
void topo__free(void *p);
/* Test hook: the allocation after `n` more successful ones fails (n < 0:
 * never).  Returns the number of allocations made so far. */
long topo__alloc_fail_after(long n);

/* ---------------------------------------------------------------------- */
/* Errors.  All return `code` so a caller can `return topo__err(...)`.
 * They fill only a record whose code is still 0 (the first error wins). */

/* Plain error with optional source (file) and JSON pointer. */
int topo__err(topo_error *err, int code, const char *source,
	      const char *pointer, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));
/* JSON syntax error at line/column of source. */
int topo__err_syntax(topo_error *err, const char *source, int line,
		     int column, const char *text);
/* Stride spec error at 0-based character position pos of spec. */
int topo__err_spec(topo_error *err, const char *spec, int pos,
		   const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Adds source and pointer to an already-set record that lacks them (for a
 * spec error found while loading a file's groups). */
void topo__err_locate(topo_error *err, const char *source,
		      const char *pointer);
/* Quotes one character for a message: "x", "\"" or "\x01"; returns buf. */
const char *topo__show_char(char c, char buf[8]);
/* Appends a JSON-pointer token to buf (escaping ~ and /). */
void topo__pointer_append(char *buf, size_t size, const char *token);

/* ---------------------------------------------------------------------- */
/* Reading JSON documents (json_read.c), shared by the machine loader and
 * the compile-output loader so both read files and report syntax the same
 * way.  jansson's types stay out of this header: only the files that parse
 * include <jansson.h>, where struct json_t is jansson's json_t. */

struct json_t;

/*
 * Reads the whole file at path (also a pipe or /dev/stdin: it reads to the
 * end rather than trusting a size) into *out, allocated with topo__malloc
 * and followed by a NUL that *len does not count.  Returns 0, TOPO_EIO
 * ("cannot open: ...", "cannot read: ...", source = path) or TOPO_ENOMEM;
 * on failure *out is NULL and *len 0.
 */
int topo__read_file(const char *path, char **out, size_t *len,
		    topo_error *err);

/*
 * Parses len bytes of buf as one JSON document into *out (the caller
 * json_decref()s it).  A leading UTF-8 byte order mark is skipped; empty
 * and all-white-space texts, duplicate object keys and every jansson
 * complaint become TOPO_ESYNTAX with source, 1-based line and column of
 * the start of the offending token (columns count characters), and a
 * plain message ("trailing comma before '}'", "duplicate object key
 * \"nodes\"", ...).  Any JSON value is accepted at the top: the caller says
 * what it wanted instead.  Returns 0, TOPO_ESYNTAX or TOPO_ENOMEM; on
 * failure *out is NULL.
 */
int topo__json_parse(const char *buf, size_t len, const char *source,
		     struct json_t **out, topo_error *err);

/* ---------------------------------------------------------------------- */
/* Costs (costs.c) */

void topo__costs_default(struct topo_costs *c);
/* A caller's struct of any size as this library's: *q gets its fields,
 * the defaults beyond them (c NULL: all defaults).  0 or TOPO_EARG. */
int topo__costs_read(struct topo_costs *q, const struct topo_costs *c,
		     topo_error *err);
/* Reads a "costs" object at the current pointer of j (io/jget.h): *c
 * gets the defaults with its values over them, *given a bit per key it
 * holds (in topo_costs_key's order).  0 or TOPO_EINVAL naming the key. */
struct topo__jget;
int topo__costs_from_json(struct topo__jget *j, const struct json_t *obj,
			  struct topo_costs *c, uint32_t *given);
/* The keys of `given` as a JSON object, nested lines indented by
 * `indent`.  0, or TOPO_ELIMIT when buf is too small. */
int topo__costs_to_text(const struct topo_costs *c, uint32_t given,
			const char *indent, char *buf, size_t size);
/* Every key's bit. */
uint32_t topo__costs_all(void);

/* ---------------------------------------------------------------------- */
/* UTF-8 (utf8.c) */

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0 when s does not
 * start one.  s must be NUL-terminated (it never reads past a NUL). */
size_t topo__utf8_len(const unsigned char *s);
/* Writes s to f for a line of a comment: control characters (C0 with tab,
 * DEL, C1) and bytes that are not UTF-8 as \xNN, so that a name can
 * neither end the comment's line and start a line of its own, nor reach a
 * terminal or an editor as a control. */
void topo__put_clean(FILE *f, const char *s);

/* ---------------------------------------------------------------------- */
/* Machines */

struct topo_machine {
	char *name;
	int32_t nodes;
	int32_t tasks;
	int32_t eps_per_task;
	int32_t endpoints;
	int32_t *node_tasks;      /* [nodes] */
	int32_t *node_first_task; /* [nodes + 1], prefix sums */
	int32_t *task_node;       /* [tasks] */
	int32_t uniform_tasks;    /* tasks of every node when equal, else 0 */
	struct topo_costs costs;  /* the defaults, and "costs" over them */
	uint32_t costs_given;     /* which keys "costs" gave (costs.c) */
	char net_type[8];         /* "tree", "kary", "torus" */
	int32_t physical_root;
	int32_t fanout;  /* kary only */
	int ndims;       /* torus only */
	int32_t *dims;   /* [ndims], torus only */
	int32_t *net_parent; /* [nodes], -1 at the physical root */
	int32_t *net_depth;  /* [nodes] */
	int32_t *net_order;  /* [nodes], parents before children (BFS) */
	size_t ngroups;
	char **group_names; /* [ngroups] */
	char **group_specs; /* [ngroups] */
	/* Node names ("hosts"), NULL when unnamed: hosts[n] points into
	 * host_text; host_sorted holds the nodes in name order (hosts.c). */
	char **hosts;         /* [nodes] */
	char *host_text;
	int32_t *host_sorted; /* [nodes] */
};

/*
 * Builds a machine from validated parameters (copies everything).  The
 * network parent array must already be a tree (topo__network_check).
 * node_tasks: [nodes] tasks per node, each >= 1.  Computes the task tables,
 * depths and order.  Returns 0, TOPO_ELIMIT (more than 2^31-1 endpoints,
 * err->text says how many) or TOPO_ENOMEM.
 */
int topo__machine_build(topo_machine **out, const char *name, int32_t nodes,
			const int32_t *node_tasks, int32_t eps_per_task,
			const char *net_type, const int32_t *net_parent,
			topo_error *err);
/* Adds a named group spec to the machine's list (copies both). */
int topo__machine_add_group(topo_machine *m, const char *name,
			    const char *spec);

/* ---------------------------------------------------------------------- */
/* Network arithmetic (network.c).  Allocates nothing: callers pass arrays. */

/* kary: node i sits at position p = (i - root) mod nodes; its parent is the
 * node at position (p - 1) / k. */
void topo__network_kary(int32_t *parent, int32_t nodes, int32_t k,
			int32_t root);
/* torus: least-depth tree over torus links, see network.c for the rule. */
void topo__network_torus(int32_t *parent, const int32_t *dims, int ndims,
			 int32_t root);
/* Checks that parent[0..nodes-1] is a tree: exactly one -1, every other
 * entry a node id, no cycles.  Returns 0, or -1 with *bad the offending
 * index and *why a static explanation.  scratch: [nodes] int32_t. */
int topo__network_check(const int32_t *parent, int32_t nodes,
			int32_t *scratch, int32_t *bad, const char **why);
/* Fills order (parents before children: by depth, ids ascending within a
 * level) and depth for a valid tree.  count: scratch of nodes + 1. */
void topo__network_order(const int32_t *parent, int32_t nodes,
			 int32_t *order, int32_t *depth, int32_t *count);

/* ---------------------------------------------------------------------- */
/* Groups */

struct topo_group {
	const topo_machine *m;
	char *name;
	char *spec;
	int32_t size;
	int32_t *members; /* [size], ascending endpoint ids */
};

/* Evaluates spec over m: *members (allocated, ascending) and *n.  Errors:
 * TOPO_ESPEC (err->spec, err->position), TOPO_ENOMEM. */
int topo__spec_eval(const topo_machine *m, const char *spec,
		    int32_t **members, int32_t *n, topo_error *err);
/* Reads spec and checks its words and indices against the axes' sizes
 * (rows = endpoints per task), selecting nothing: no memory in proportion
 * to the machine, so a machine description's groups are checked before
 * the machine is built.  Whether a spec selects anything is known only
 * from topo__spec_eval.  Errors as topo__spec_eval's. */
int topo__spec_syntax(int32_t rows, int32_t tasks, int32_t nodes,
		      int32_t endpoints, const char *spec, topo_error *err);
/* Wraps an ascending member array in a group; takes ownership of members
 * (also on failure). */
int topo__group_from_members(topo_group **out, const topo_machine *m,
			     const char *name, const char *spec,
			     int32_t *members, int32_t n);

/* ---------------------------------------------------------------------- */
/* Trees */

struct topo_tree {
	const topo_group *g;
	char *name;
	int32_t n;          /* group size */
	int32_t root;       /* rank */
	int32_t depth;
	int32_t *parent;    /* [n], ranks, -1 at the root */
	uint8_t *edge;      /* [n], enum topo_edge */
	int32_t *child_off; /* [n + 1] */
	int32_t *child;     /* [n - 1], ascending per member */
	int64_t shm, net;   /* edge counts */
	/* Where the route table departs from the rule of collc(7), or NULL
	 * when it follows it (always for trees built by topo_tree_new). */
	struct topo__routes_x *routes_x;
};

/*
 * A tree view (tree/tview.c): a member's parent, children, subtree and
 * their measures, computed when asked from what defines the shape, not
 * from arrays over the whole group, so that one member's part of a plan
 * costs what its neighbourhood does (plan/local.c).  Shapes: the
 * hierarchical tree of a group given as runs (first[j] .. first[j + 1] - 1
 * the ranks on the j-th member node, ascending nodes; first[nruns] == n,
 * the caller's array), binomial, chain.
 */
enum { TOPO__TV_HIERARCHICAL = 0, TOPO__TV_BINOMIAL = 1, TOPO__TV_CHAIN = 2 };
struct topo__tview {
	int shape;
	int32_t n, root;
	const int32_t *first; /* hierarchical: [nruns + 1] */
	int32_t nruns, ident; /* ident: the identified node's run */
};
/* Sets tv up as the hierarchical tree over runs first[0..nruns]: 0, or
 * TOPO_EARG when the runs do not cover 0..n - 1 in order. */
int topo__tview_hierarchical(struct topo__tview *tv, int32_t n,
			     const int32_t *first, int32_t nruns);
/* Sets tv up as the binomial tree or chain over n ranks. */
void topo__tview_simple(struct topo__tview *tv, int shape, int32_t n);
/* Rank v's parent (-1 at the root); its children, ascending, into out
 * (which may be NULL) and their count. */
int32_t topo__tview_parent(const struct topo__tview *tv, int32_t v);
int32_t topo__tview_children(const struct topo__tview *tv, int32_t v,
			     int32_t *out);
/* The height of v's subtree (0 for a leaf) and its flood time (the sends
 * that cover it, each member sending to its children one after another,
 * the longest first); scratch holds topo__tview_scratch(tv) entries. */
int32_t topo__tview_height(const struct topo__tview *tv, int32_t v,
			   int32_t *scratch);
int32_t topo__tview_time(const struct topo__tview *tv, int32_t v,
			 int32_t *scratch);
int32_t topo__tview_scratch(const struct topo__tview *tv);
/* Whether x is in v's subtree (v itself included). */
bool topo__tview_below(const struct topo__tview *tv, int32_t v, int32_t x);

/*
 * Per-node scratch of the physical tree, reusable from tree to tree: a
 * cell counts only when its stamp is the current one, so a tree touches
 * the cells of its member nodes and their ancestors, never all of them,
 * and many small groups over a big machine cost what their members cost.
 * cell[v] = stamp << 32 | (value + 1).
 */
struct topo__node_memo {
	uint64_t *cell; /* [nodes], zeroed when allocated */
	int32_t nodes;
	uint32_t stamp;
};

/* Allocates a memo for m (TOPO_ENOMEM), frees one (NULL allowed). */
int topo__node_memo_new(struct topo__node_memo *memo, const topo_machine *m);
void topo__node_memo_free(struct topo__node_memo *memo);

/*
 * Shape builders (tree_*.c): fill parent[0..n-1] with group ranks (-1 at the
 * root) for g's members.  Pure arithmetic except where scratch is needed:
 * the physical tree takes a node memo of g's machine.
 */
void topo__tree_physical(const topo_group *g, int32_t *parent,
			 struct topo__node_memo *memo);
/* topo_tree_new with the caller's memo for a physical tree (NULL: one of
 * its own), so that a compile shares one among its groups. */
int topo__tree_new(topo_tree **out, const topo_group *g, const char *shape,
		   struct topo__node_memo *memo, topo_error *err);
void topo__tree_hierarchical(const topo_group *g, int32_t *parent,
			     void *scratch);
void topo__tree_binomial(int32_t n, int32_t *parent);
void topo__tree_kary(int32_t n, int32_t k, int32_t *parent);
void topo__tree_chain(int32_t n, int32_t *parent);

/*
 * Makes a tree from a parent array of ranks; takes ownership of parent
 * (also on failure).  Checks that it is a spanning tree of g (one root, no
 * cycles, ranks in range): TOPO_EINVAL with *bad the offending rank.
 * Computes children, edge labels from the machine, depth and counts.
 */
int topo__tree_from_parent(topo_tree **out, const topo_group *g,
			   const char *name, int32_t *parent, int32_t *bad);

/* ---------------------------------------------------------------------- */
/* Route tables (routes.c) */

/*
 * A table's departures from the rule, kept per member: member r's
 * exceptions are entries off[r] .. off[r + 1] - 1, ascending by origin
 * (-1 first).  An exception either replaces the rule's row from that
 * origin, adds a row the rule does not have (an origin that is not a tree
 * neighbour), or (missing[e]) says the rule's row is absent.  Targets are
 * ranks, as written.
 */
struct topo__routes_x {
	int32_t *off;     /* [n + 1] */
	int32_t *from;    /* [count] origin rank or -1 */
	uint8_t *missing; /* [count] */
	int64_t *to_off;  /* [count + 1] */
	int32_t *to;      /* [to_off[count]] */
	int32_t count;
};

/* Rows to build exceptions from (topo__routes_x_build): row i is member
 * at[i] forwarding what came from from[i] to to[to_off[i] ..
 * to_off[i + 1]); missing_at/missing_from name rule rows said to be
 * absent.  complete: the rows are the whole table, so every rule row they
 * do not give is missing too.  All ranks, checked by the caller: members
 * of the tree, no two rows (or a row and a missing one) for one member
 * and origin, a missing one only for a rule origin. */
struct topo__routes_in {
	int32_t rows;
	const int32_t *at, *from;
	const int64_t *to_off;
	const int32_t *to;
	int32_t nmissing;
	const int32_t *missing_at, *missing_from;
	bool complete;
};

/* Keeps in t only where in departs from the rule: rows equal to the
 * rule's are dropped.  Replaces t's exceptions.  Returns 0, TOPO_ENOMEM
 * or TOPO_ELIMIT (more than 2^31-1 exceptions). */
int topo__routes_x_build(topo_tree *t, const struct topo__routes_in *in);
void topo__routes_x_free(struct topo__routes_x *x);
/* Member r's exception from `from`, or -1. */
int32_t topo__routes_x_find(const topo_tree *t, int32_t r, int32_t from);
/* Member r's row from `from` as the table has it: the number of targets
 * with *to set (to scratch, of topo_tree_degree(t, r) entries, for a rule
 * row), or -1 when r has no row from `from`.  O(log exceptions of r). */
int32_t topo__routes_find(const topo_tree *t, int32_t r, int32_t from,
			  const int32_t **to, int32_t *scratch);
/*
 * Asks for what topo__routes_find(t, r, ...) reads of a rule row, ahead
 * of a walk that visits members in no useful order (the flood's): stage
 * 1 the member's own entries, stage 2, some steps later once child_off[r]
 * is in, its list of children.  Only a hint, never a fault.
 */
static inline void topo__routes_prefetch(const topo_tree *t, int32_t r,
					 int stage)
{
	if (stage == 1) {
		__builtin_prefetch(&t->parent[r]);
		__builtin_prefetch(&t->child_off[r]);
	} else {
		__builtin_prefetch(&t->child[t->child_off[r]]);
	}
}
/* The rule's rows of r: how many, the origin of the j-th (origin -1,
 * parent, children ascending), and whether it has one from `from`. */
int32_t topo__routes_rule_rows(const topo_tree *t, int32_t r);
int32_t topo__routes_rule_origin(const topo_tree *t, int32_t r, int32_t j);
bool topo__routes_is_rule_origin(const topo_tree *t, int32_t r, int32_t from);

/* ---------------------------------------------------------------------- */
/* Compiled documents */

struct topo_compiled {
	topo_machine *owned; /* set when loaded from a file */
	const topo_machine *m;
	size_t ngroups;
	topo_group **groups;  /* [ngroups] */
	size_t *ntrees;       /* [ngroups] */
	topo_tree ***trees;   /* [ngroups][ntrees[i]] */
};

#endif /* TOPO_INTERNAL_H */
