/*
 * topo.h - libtopo, the collc topology library: the one installed header.
 *
 * libtopo reads a JSON description of a parallel machine (nodes, tasks per
 * node, endpoints per task, the collective network), selects groups of
 * endpoints with stride specifications over the endpoint table, builds
 * logical trees over those groups and the route tables that let one table
 * serve a broadcast from any member.  See libtopo(3), collc(5), collc(7).
 *
 * Conventions, which every function below follows:
 *  - Functions that can fail return 0 or a negative TOPO_E* code and, when
 *    given a non-NULL topo_error, fill it with where and what went wrong.
 *    The first error wins: nothing overwrites a record already filled.
 *  - Out-parameters come first and are named out; on failure *out is NULL.
 *  - Objects are opaque; each topo_X_new()/load() has a topo_X_free() that
 *    accepts NULL.  Returned strings and arrays are owned by the object they
 *    came from and live as long as it does, unless the doc says otherwise.
 *  - The library never prints and never exits.
 *  - Ids are 32-bit: endpoint, task and node ids are int32_t >= 0; -1 means
 *    "none" (the parent of a root, the origin of a message).
 *  - Every function is declared TOPO_EXTERN: the shared library exports
 *    these and nothing else.
 */
#ifndef TOPO_H
#define TOPO_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the library's interface, every function below.  The shared
 * library is built with -fvisibility=hidden and exports these alone, in
 * version node TOPO_0 of libtopo/libtopo.map; its internal topo__* names
 * stay hidden.  tests/abi/run.sh checks that the header, the map, the
 * exports and libtopo(3) agree. */
#if defined(__GNUC__) && __GNUC__ >= 4
#define TOPO_EXTERN __attribute__((visibility("default")))
#else
#define TOPO_EXTERN
#endif

/* The version of this header.  The library's own, which may differ when
 * a program runs against another shared library than it was built with,
 * is topo_version_string() and topo_version_cmp(). */
#define TOPO_VERSION_MAJOR 0
#define TOPO_VERSION_MINOR 8
#define TOPO_VERSION_PATCH 0
#define TOPO_VERSION_STRING "0.8.0"

/* The version of the library running, "MAJOR.MINOR.PATCH" (static, never
 * NULL): TOPO_VERSION_STRING as the library was built. */
TOPO_EXTERN const char *topo_version_string(void);
/* Compares the version of the library running with major.minor.patch:
 * returns a negative number when the library is older, 0 when it is that
 * version, a positive number when it is newer.  A program that needs
 * 0.2.0 or later checks topo_version_cmp(0, 2, 0) >= 0. */
TOPO_EXTERN int topo_version_cmp(int major, int minor, int patch);

/* The compile output format version written (collc(5)); every version
 * from 1 up to it is read. */
#define TOPO_FORMAT_VERSION 2

/* Error codes: X(NAME, value, text).  One table, so codes and messages
 * cannot drift apart. */
#define TOPO_ERRNO_MAP(X)                                                      \
	X(TOPO_OK, 0, "success")                                               \
	X(TOPO_ENOMEM, -1, "out of memory")                                    \
	X(TOPO_EIO, -2, "input/output error")                                  \
	X(TOPO_ESYNTAX, -3, "JSON syntax error")                               \
	X(TOPO_EINVAL, -4, "invalid description")                              \
	X(TOPO_ESPEC, -5, "invalid stride specification")                      \
	X(TOPO_ELIMIT, -6, "size limit exceeded")                              \
	X(TOPO_ENOENT, -7, "no such group or tree")                            \
	X(TOPO_EARG, -8, "invalid argument")                                   \
	X(TOPO_ETIMEDOUT, -9, "timed out")

enum topo_errno {
#define TOPO__ENUM(name, value, text) name = value,
	TOPO_ERRNO_MAP(TOPO__ENUM)
#undef TOPO__ENUM
};

/* Returns a static English text for a TOPO_E* code ("unknown error" for
 * anything else).  Never NULL. */
TOPO_EXTERN const char *topo_strerror(int code);

/*
 * An error record, filled by the function that fails.  Fields that do not
 * apply are empty strings or 0 / -1:
 *   source    the file name (or "<string>" / the caller's label) for input
 *             errors; "" for a spec given directly
 *   line, column  1-based, for JSON syntax errors; 0 otherwise
 *   pointer   a JSON pointer (RFC 6901) to the offending value, "" for the
 *             document itself or when not applicable
 *   position  0-based character offset into a stride spec; -1 otherwise
 *   spec      the stride spec text, for TOPO_ESPEC errors
 *   text      what is wrong and, where it helps, what would be valid
 * A record is "set" once code != 0.  Initialise with topo_error_clear().
 */
typedef struct topo_error {
	int code;
	char source[256];
	int line;
	int column;
	char pointer[256];
	int position;
	char spec[256];
	char text[512];
} topo_error;

/* Empties an error record (code 0, no text).  err may be NULL. */
TOPO_EXTERN void topo_error_clear(topo_error *err);

/* Formats err as one line without the program name, the way collc prints
 * it: "FILE:LINE:COL: text", "FILE: /pointer: text",
 * "spec \"S\": at P: text", or combinations of them.  Writes at most size
 * bytes including the terminating NUL; returns buf. */
TOPO_EXTERN char *topo_error_format(const topo_error *err, char *buf,
				    size_t size);

/* ---------------------------------------------------------------------- */
/* Machines (collc(5): the machine description)                            */

typedef struct topo_machine topo_machine;

/* Loads and validates a machine description from a file.  Every rule of
 * collc(5) is checked; duplicate keys, unknown keys (other than "x-*"),
 * wrong types, out-of-range values, cycles in an explicit network, and
 * machines of more than 2^31-1 endpoints are refused.  Groups named in the
 * file are parsed and checked too (TOPO_ESPEC, with err->pointer set to
 * /groups/NAME).
 * Returns 0, TOPO_EIO (cannot read), TOPO_ESYNTAX (JSON; err->line/column
 * set), TOPO_EINVAL (meaning; err->pointer set), TOPO_ESPEC, TOPO_ELIMIT or
 * TOPO_ENOMEM.  On success the caller owns *out (topo_machine_free). */
TOPO_EXTERN int topo_machine_load_file(topo_machine **out, const char *path,
				       topo_error *err);

/* As topo_machine_load_file, from len bytes of JSON text; source names the
 * text in errors (NULL: "<string>"). */
TOPO_EXTERN int topo_machine_load_string(topo_machine **out, const char *json,
					 size_t len, const char *source,
					 topo_error *err);

/* Frees a machine and everything it owns.  NULL is allowed. */
TOPO_EXTERN void topo_machine_free(topo_machine *m);

TOPO_EXTERN const char *topo_machine_name(const topo_machine *m);
TOPO_EXTERN int32_t topo_machine_nodes(const topo_machine *m);
TOPO_EXTERN int32_t topo_machine_tasks(const topo_machine *m);
TOPO_EXTERN int32_t topo_machine_endpoints_per_task(const topo_machine *m);
TOPO_EXTERN int32_t topo_machine_endpoints(const topo_machine *m);
/* Tasks on node n, and the global id of its first task (tasks are numbered
 * in node order).  n must be a valid node id. */
TOPO_EXTERN int32_t topo_machine_node_tasks(const topo_machine *m, int32_t n);
TOPO_EXTERN int32_t topo_machine_node_first_task(const topo_machine *m,
						 int32_t n);
/* The node hosting a task / an endpoint (endpoint id = task * E + row). */
TOPO_EXTERN int32_t topo_machine_task_node(const topo_machine *m, int32_t task);
TOPO_EXTERN int32_t topo_machine_endpoint_node(const topo_machine *m,
					       int32_t ep);
/* The name of node n (collc(5) "hosts"; owned by m), or NULL when the
 * machine names no nodes or n is not a node. */
TOPO_EXTERN const char *topo_machine_host(const topo_machine *m, int32_t n);
/* The node named name, or -1 when no node has that name (or the machine
 * names none). */
TOPO_EXTERN int32_t topo_machine_host_node(const topo_machine *m,
					   const char *name);

/* The network: "tree", "kary" or "torus" (as given in the input). */
TOPO_EXTERN const char *topo_machine_network_type(const topo_machine *m);
TOPO_EXTERN int32_t topo_machine_physical_root(const topo_machine *m);
/* The node-level network tree, whatever the input type: parent[n] for
 * n in 0..nodes-1, -1 at the physical root.  Owned by m. */
TOPO_EXTERN const int32_t *topo_machine_network_parent(const topo_machine *m);
/* Depth of node n in the network tree (0 at the physical root). */
TOPO_EXTERN int32_t topo_machine_node_depth(const topo_machine *m, int32_t n);
/* For "kary": the fanout; 0 otherwise. */
TOPO_EXTERN int32_t topo_machine_network_fanout(const topo_machine *m);
/* For "torus": number of dimensions and their sizes (owned by m); 0/NULL
 * otherwise. */
TOPO_EXTERN int topo_machine_torus_dims(const topo_machine *m,
					const int32_t **out);

/* Groups named in the description's "groups" object, in file order. */
TOPO_EXTERN size_t topo_machine_group_count(const topo_machine *m);
TOPO_EXTERN const char *topo_machine_group_name(const topo_machine *m,
						size_t i);
TOPO_EXTERN const char *topo_machine_group_spec(const topo_machine *m,
						size_t i);

/* ---------------------------------------------------------------------- */
/* Groups: stride specifications over the endpoint table (collc(7))       */

typedef struct topo_group topo_group;

/* Evaluates a stride specification over m's endpoint table and makes a
 * group of the selected endpoints, ranked in ascending endpoint id.
 * name may be NULL (the group is then named after the spec).  The grammar is
 * in collc(7).  Returns 0, TOPO_ESPEC (err->spec and err->position set;
 * also for an empty result), TOPO_ENOMEM or TOPO_EARG.  The group keeps a
 * pointer to m, which must outlive it. */
TOPO_EXTERN int topo_group_new(topo_group **out, const topo_machine *m,
			       const char *name, const char *spec,
			       topo_error *err);

/* Makes a group of the n endpoints listed (in any order, each once), ranked
 * in ascending endpoint id like every group: a caller whose ranks follow
 * another order (an MPI communicator's) maps them with topo_group_rank.
 * Its spec is an "ep" spec that selects exactly them (runs at one stride
 * written as triplets), so the group is written and read back like any
 * other.  name may be NULL (named after the spec).  O(n log n).  Returns
 * 0, TOPO_EARG (out, m or endpoints NULL, n < 1, an endpoint outside the
 * machine or listed twice: err->text names it and its place in the list)
 * or TOPO_ENOMEM.  The group keeps a pointer to m. */
TOPO_EXTERN int topo_group_new_list(topo_group **out, const topo_machine *m,
				    const char *name, const int32_t *endpoints,
				    int32_t n, topo_error *err);

/* Checks a spec's syntax and ranges against m without building the group;
 * same errors as topo_group_new. */
TOPO_EXTERN int topo_spec_check(const topo_machine *m, const char *spec,
				topo_error *err);

TOPO_EXTERN void topo_group_free(topo_group *g);
TOPO_EXTERN const char *topo_group_name(const topo_group *g);
TOPO_EXTERN const char *topo_group_spec(const topo_group *g);
TOPO_EXTERN const topo_machine *topo_group_machine(const topo_group *g);
TOPO_EXTERN int32_t topo_group_size(const topo_group *g);
/* Members' endpoint ids, ascending; index = group rank.  Owned by g. */
TOPO_EXTERN const int32_t *topo_group_members(const topo_group *g);
/* Group rank of endpoint ep, or -1 when ep is not a member. O(log n). */
TOPO_EXTERN int32_t topo_group_rank(const topo_group *g, int32_t ep);

/* ---------------------------------------------------------------------- */
/* Trees and route tables (collc(7))                                      */

typedef struct topo_tree topo_tree;

enum topo_edge { TOPO_EDGE_ROOT = 0, TOPO_EDGE_SHM = 1, TOPO_EDGE_NET = 2 };

/* "root", "shm" or "net". */
TOPO_EXTERN const char *topo_edge_name(enum topo_edge e);

/* Checks a tree shape name: "physical", "hierarchical", "binomial",
 * "chain" or "kary:K" with 1 <= K <= 2^31-1.  Returns 0 or TOPO_EARG
 * (err->text says what is valid). */
TOPO_EXTERN int topo_tree_shape_check(const char *shape, topo_error *err);

/* Builds the spanning tree of the given shape over g's members.  Linear in
 * the group size.  Returns 0, TOPO_EARG (unknown shape) or TOPO_ENOMEM.
 * The tree keeps a pointer to g, which must outlive it. */
TOPO_EXTERN int topo_tree_new(topo_tree **out, const topo_group *g,
			      const char *shape, topo_error *err);

TOPO_EXTERN void topo_tree_free(topo_tree *t);
/* The shape name as given ("kary:4"). */
TOPO_EXTERN const char *topo_tree_name(const topo_tree *t);
TOPO_EXTERN const topo_group *topo_tree_group(const topo_tree *t);
/* The root's group rank. */
TOPO_EXTERN int32_t topo_tree_root(const topo_tree *t);
/* parent[r] is the parent's group rank, -1 at the root.  Owned by t. */
TOPO_EXTERN const int32_t *topo_tree_parent(const topo_tree *t);
/* The edge from rank r to its parent (TOPO_EDGE_ROOT at the root). */
TOPO_EXTERN enum topo_edge topo_tree_edge(const topo_tree *t, int32_t r);
/* The children of rank r, ascending; returns their count and sets *out to
 * an array owned by t. */
TOPO_EXTERN int32_t topo_tree_children(const topo_tree *t, int32_t r,
				       const int32_t **out);
/* Longest root-to-leaf path, in edges. */
TOPO_EXTERN int32_t topo_tree_depth(const topo_tree *t);
/* Number of shm and net edges. */
TOPO_EXTERN void topo_tree_edge_counts(const topo_tree *t, int64_t *shm,
				       int64_t *net);

/* The route table (collc(7)): where member r forwards a message that
 * arrived from rank `from` (-1: r is the logical root and originates it).
 * Writes the ranks to forward to, ascending, into out (which must hold
 * topo_tree_degree(t, r) entries) and returns their count, or TOPO_EARG
 * when `from` is neither -1 nor a tree neighbour of r.  Allocates nothing. */
TOPO_EXTERN int32_t topo_tree_route(const topo_tree *t, int32_t r, int32_t from,
				    int32_t *out);
/* Number of tree neighbours of r (parent and children). */
TOPO_EXTERN int32_t topo_tree_degree(const topo_tree *t, int32_t r);

/* ---------------------------------------------------------------------- */
/* Compilation: a machine, its groups and their trees (collc(5) output)    */

typedef struct topo_compiled topo_compiled;

/* Compiles m: the group "world" (spec "all"), then the groups of the
 * description in file order, then the extra groups given (names[i],
 * specs[i]; a name already used replaces the description's group of that
 * name), each with one tree per shape in shapes (NULL: the default
 * "physical", "hierarchical", "binomial").  Returns 0, TOPO_ESPEC,
 * TOPO_EARG, TOPO_ENOMEM.  *out keeps a pointer to m, which must outlive
 * it. */
TOPO_EXTERN int topo_compile(topo_compiled **out, const topo_machine *m,
			     const char *const *names, const char *const *specs,
			     size_t nextra, const char *const *shapes,
			     size_t nshapes, topo_error *err);

/*
 * Loads a compile output file (collc(5)), checking its structure: the
 * machine section agrees with itself ("fanout" / "dims", when present, must
 * generate the parent array written), members are ascending and within the
 * machine, each tree is a spanning tree of its group whose edge labels
 * match the machine, "depth" and "edges" (when present) match the tree,
 * and each route row names members.  Keys this version does not know are
 * ignored (later versions may add keys).
 * Versions 1 and 2 are read.  A tree's "routes" is optional.  When
 * present, in full or rule-encoded, the table is kept as written (see
 * topo_routes_*), so a hand-edited table can be replayed and its faults
 * observed; only where it departs from the rule is stored.  A row that
 * names its own member (as origin or target) is refused.  When absent
 * (TOPO_WRITE_NO_ROUTES), the table is derived from the tree by the rule
 * of collc(7), as for a tree built by topo_tree_new.
 * Returns 0, TOPO_EIO (cannot read), TOPO_ESYNTAX (JSON; err->line/column
 * set), TOPO_EINVAL (meaning; err->pointer set), TOPO_ELIMIT, TOPO_ENOMEM
 * or TOPO_EARG (out or path NULL).  On success the caller owns *out
 * (topo_compiled_free), which owns its machine.
 */
TOPO_EXTERN int topo_compiled_load_file(topo_compiled **out, const char *path,
					topo_error *err);
/* As topo_compiled_load_file, from len bytes of JSON text; source names
 * the text in errors (NULL: "<string>"). */
TOPO_EXTERN int topo_compiled_load_string(topo_compiled **out, const char *json,
					  size_t len, const char *source,
					  topo_error *err);

TOPO_EXTERN void topo_compiled_free(topo_compiled *c);
TOPO_EXTERN const topo_machine *topo_compiled_machine(const topo_compiled *c);
TOPO_EXTERN size_t topo_compiled_group_count(const topo_compiled *c);
TOPO_EXTERN const topo_group *topo_compiled_group(const topo_compiled *c,
						  size_t i);
/* The group of that name, or NULL. */
TOPO_EXTERN const topo_group *topo_compiled_find_group(const topo_compiled *c,
						       const char *name);
TOPO_EXTERN size_t topo_compiled_tree_count(const topo_compiled *c,
					    size_t group);
TOPO_EXTERN const topo_tree *topo_compiled_tree(const topo_compiled *c,
						size_t group, size_t i);
/* The tree of that shape name in that group, or NULL. */
TOPO_EXTERN const topo_tree *topo_compiled_find_tree(const topo_compiled *c,
						     const topo_group *g,
						     const char *name);

/* Flags for topo_compiled_write() and topo_compiled_write_size().  The
 * default (0) writes a version 2 document whose route tables are
 * rule-encoded: the rule of collc(7) plus the rows where a table departs
 * from it, linear in the members. */
/* Omit each tree's "routes": readers derive them from "parent". */
#define TOPO_WRITE_NO_ROUTES 0x1u
/* Spell every row of every table out (about sum(degree^2) targets). */
#define TOPO_WRITE_FULL_ROUTES 0x2u
/* A version 1 document, for readers that know no other: tables in full
 * (or none, with TOPO_WRITE_NO_ROUTES). */
#define TOPO_WRITE_VERSION_1 0x4u

/* Writes c as a collc-routes document (collc(5)) to f, streaming: memory
 * use does not grow with the output.  flags: 0 or TOPO_WRITE_* (NO_ROUTES
 * and FULL_ROUTES exclude each other).  Whatever the encoding, a table
 * reads back with the same rows (topo_routes_row), also a hand-edited one.
 * Returns 0, TOPO_EIO (err->text has strerror(errno)), TOPO_ENOMEM or
 * TOPO_EARG (c or f NULL, unknown or contradictory flags).  f is flushed,
 * not closed. */
TOPO_EXTERN int topo_compiled_write(const topo_compiled *c, FILE *f,
				    unsigned flags, topo_error *err);

/* The exact number of bytes topo_compiled_write(c, f, flags) writes,
 * without writing: linear in the members (and the rows of tables that
 * depart from the rule), not in the output, so a caller can refuse an
 * output too large before making it.  Returns 0 (*out set), TOPO_ENOMEM
 * or TOPO_EARG (as topo_compiled_write; *out is 0 then). */
TOPO_EXTERN int topo_compiled_write_size(const topo_compiled *c, unsigned flags,
					 uint64_t *out, topo_error *err);

/* ---------------------------------------------------------------------- */
/* Route tables as data (the rule, or as loaded from a file)               */

/*
 * A table's rows for member rank r: the number of rows, and for row i its
 * origin (`from`, a rank or -1) and its targets.  A tree built by
 * topo_tree_new, or loaded from a file whose table follows the rule, has
 * the rule's rows: first from -1, then from the parent, then from each
 * child ascending.  A table loaded from a file that departs from the rule
 * (hand-edited, faulty) has its own rows, as written, listed in that same
 * order: the rule's origins first (a row replaced where the file says so,
 * left out where the file has none), then the rows the rule does not
 * have, ascending by origin.  The order of a member's rows carries no
 * meaning; a row is known by its origin.
 */
TOPO_EXTERN int32_t topo_routes_rows(const topo_tree *t, int32_t r);
/* Row i of member r: returns the number of targets and sets *from and *to
 * (owned by t, or filled into scratch, which must hold
 * topo_tree_degree(t, r) entries), or TOPO_EARG when r or i is out of
 * range. */
TOPO_EXTERN int32_t topo_routes_row(const topo_tree *t, int32_t r, int32_t i,
				    int32_t *from, const int32_t **to,
				    int32_t *scratch);
/* How many rows of member r depart from the rule of collc(7) (rows that
 * differ from the rule's, rows the rule does not have, and rule rows that
 * are missing); r = -1: of the whole table.  0 for a table that follows
 * the rule; TOPO_EARG for an r out of range. */
TOPO_EXTERN int64_t topo_routes_departures(const topo_tree *t, int32_t r);

/* ---------------------------------------------------------------------- */
/* Graphviz                                                                */

/* Writes t as a Graphviz digraph to f: one vertex per member labelled with
 * its endpoint id and group rank, in one cluster per node labelled with the
 * node id; shm edges solid, net edges bold and dashed; the tree root
 * double-circled and every member whose edge to its parent is net boxed.
 * When t's route table departs from the rule (loaded hand-edited), the
 * label says how many rows do and those members are outlined in red.
 * Returns 0, TOPO_EIO (err->text has strerror(errno)) or TOPO_EARG (t or f
 * NULL).  f is flushed, not closed. */
TOPO_EXTERN int topo_tree_write_dot(const topo_tree *t, FILE *f,
				    topo_error *err);

/* Writes t as a Graphviz digraph to f node by node, for trees too large
 * to draw member by member: one vertex per node that hosts members of t's
 * group, labelled with the node id, its number of members and of shm edges
 * inside it (the tree root's node filled and labelled with the root's
 * endpoint id too); one edge per ordered pair of nodes (parent's node,
 * child's node) joined by net edges of t, labelled with their number when
 * more than one.  Laid out left to right by the fewest net hops from the
 * root to each node.  The output grows with the nodes and node pairs, the
 * memory it uses (freed before it returns) with the members.  Returns 0,
 * TOPO_ENOMEM (nothing written), TOPO_EIO (err->text has strerror(errno))
 * or TOPO_EARG (t or f NULL).  f is flushed, not closed. */
TOPO_EXTERN int topo_tree_write_dot_nodes(const topo_tree *t, FILE *f,
					  topo_error *err);

/* ---------------------------------------------------------------------- */
/* Replay: plan a collective over a tree and run it with real data         */
/* (collrun(1); the algorithms are described in libtopo(3))                */

/* The collectives (collrun(1) OPERATIONS says what each leaves where).
 * New operations are added before TOPO_OP_COUNT, never in between. */
enum topo_op {
	TOPO_OP_BCAST,
	TOPO_OP_SCATTER,
	TOPO_OP_GATHER,
	TOPO_OP_REDUCE,
	TOPO_OP_ALLREDUCE,
	TOPO_OP_ALLGATHER,
	TOPO_OP_REDUCE_SCATTER, /* equal blocks: MPI_Reduce_scatter_block */
	TOPO_OP_ALLTOALL,
	TOPO_OP_BARRIER,
	TOPO_OP_COUNT
};

/* Element types: X(enum name, C type, name in the CLI). */
#define TOPO_TYPE_MAP(X)                                                       \
	X(TOPO_INT8, int8_t, "int8")                                           \
	X(TOPO_INT16, int16_t, "int16")                                        \
	X(TOPO_INT32, int32_t, "int32")                                        \
	X(TOPO_INT64, int64_t, "int64")                                        \
	X(TOPO_UINT8, uint8_t, "uint8")                                        \
	X(TOPO_UINT16, uint16_t, "uint16")                                     \
	X(TOPO_UINT32, uint32_t, "uint32")                                     \
	X(TOPO_UINT64, uint64_t, "uint64")                                     \
	X(TOPO_FLOAT, float, "float")                                          \
	X(TOPO_DOUBLE, double, "double")

enum topo_type {
#define TOPO__TYPE_ENUM(e, ctype, name) e,
	TOPO_TYPE_MAP(TOPO__TYPE_ENUM)
#undef TOPO__TYPE_ENUM
	TOPO_TYPE_COUNT
};

/* Reduction operators (bitwise ones on integer types only). */
enum topo_redop {
	TOPO_SUM, TOPO_PROD, TOPO_MIN, TOPO_MAX, TOPO_BAND, TOPO_BOR, TOPO_BXOR,
	TOPO_REDOP_COUNT
};

/* Names as the CLI spells them ("bcast", "int32", "sum"), and back: the
 * parsers return 0 or TOPO_EARG (err->text lists the valid names). */
TOPO_EXTERN const char *topo_op_name(enum topo_op op);
TOPO_EXTERN const char *topo_type_name(enum topo_type type);
TOPO_EXTERN size_t topo_type_size(enum topo_type type);
TOPO_EXTERN const char *topo_redop_name(enum topo_redop op);
TOPO_EXTERN int topo_op_parse(enum topo_op *out, const char *name,
			      topo_error *err);
TOPO_EXTERN int topo_type_parse(enum topo_type *out, const char *name,
				topo_error *err);
TOPO_EXTERN int topo_redop_parse(enum topo_redop *out, const char *name,
				 topo_error *err);
/* 1 when op has a root (bcast, scatter, gather, reduce), else 0. */
TOPO_EXTERN int topo_op_has_root(enum topo_op op);
/* 1 when op combines with an operator (reduce, allreduce,
 * reduce-scatter), else 0. */
TOPO_EXTERN int topo_op_reduces(enum topo_op op);

/* The algorithms of each operation (libtopo(3) ALGORITHMS), in the order
 * collrun(1) lists them, and what each needs and offers: */
#define TOPO_ALG_DEFAULT 0x1      /* op's default (over several nodes) */
#define TOPO_ALG_TREE 0x2         /* follows the tree (else ignores it) */
#define TOPO_ALG_HIERARCHICAL 0x4 /* needs the hierarchical tree */
#define TOPO_ALG_ONE_NODE 0x8     /* op's default over a group on one node */
#define TOPO_ALG_SEGMENT 0x10     /* takes a segment size */
#define TOPO_ALG_CHUNK 0x20       /* takes a chunk size */
/* How many algorithms op has; 0 for an op out of range. */
TOPO_EXTERN size_t topo_algorithm_count(enum topo_op op);
/* The name of op's i-th algorithm (static), or NULL when op or i is out
 * of range. */
TOPO_EXTERN const char *topo_algorithm_name(enum topo_op op, size_t i);
/* Its TOPO_ALG_* flags, or 0 when op or i is out of range. */
TOPO_EXTERN unsigned topo_algorithm_flags(enum topo_op op, size_t i);
/* The shape of the tree collrun(1) plans op over when none is named:
 * "hierarchical" when one of op's algorithms needs it (reduce,
 * allreduce), so that every algorithm of op runs over the default tree,
 * else "physical"; NULL for an op out of range. */
TOPO_EXTERN const char *topo_op_default_tree(enum topo_op op);

/* ---------------------------------------------------------------------- */
/* Costs of the described machine (collc(5) "costs"; the model: collc(7))  */

/* LogGP parameters of one class of edge, in nanoseconds (G: nanoseconds
 * per byte).  hop applies to net edges only. */
struct topo_loggp {
	double L;   /* latency: from a message's send to its arrival */
	double o;   /* overhead: CPU time to send, and to receive, a message */
	double g;   /* gap: least time between messages leaving (or
		     * entering) one member's port */
	double G;   /* gap per byte after the first */
	double hop; /* net: latency of each network hop beyond the first */
};

/* What moving and combining data costs.  May grow at its end, like the
 * parameter structs below: initialise it with topo_costs_init. */
struct topo_costs {
	size_t size;	      /* sizeof the caller's struct */
	struct topo_loggp shm; /* between two members on one node */
	struct topo_loggp net; /* between members on different nodes */
	/* nanoseconds per byte of applying a reduction operator, by type
	 * (enum topo_type) */
	double reduce[TOPO_TYPE_COUNT];
};

/* Sets c->size = size and every cost to its default (collc(5)).  Returns
 * 0, or TOPO_EARG when c is NULL or size too small. */
TOPO_EXTERN int topo_costs_init(struct topo_costs *c, size_t size);
/* The machine's costs: the defaults with its "costs" over them.  out must
 * be initialised (its size is kept).  0 or TOPO_EARG. */
TOPO_EXTERN int topo_machine_costs(const topo_machine *m,
				   struct topo_costs *out, topo_error *err);
/* Sets one cost from "CLASS.KEY=NANOSECONDS" ("net.L=1500",
 * "reduce.double=0.5"), as collrun --cost does.  0, or TOPO_EARG with
 * err->text naming what is wrong and what is valid (c unchanged). */
TOPO_EXTERN int topo_costs_set(struct topo_costs *c, const char *assignment,
			       topo_error *err);
/* The cost keys in their order, for listing them: for i = 0, 1, ... while
 * it returns 1, the class ("shm", "net", "reduce"), the key ("L", ...,
 * "hop", "int8", ...) and its value in c (NULL c: the default). */
TOPO_EXTERN int topo_costs_key(const struct topo_costs *c, size_t i,
			       const char **cls, const char **key,
			       double *value);

/*
 * The parameter structs below may grow, at their end only, in later
 * versions.  Their first member, size, is the size of the struct the
 * caller was compiled with, so that a program built against an older,
 * smaller struct keeps working with a newer library (the fields it does
 * not know take their defaults) and one built against a newer struct is
 * understood as far as this library can.  Initialise them with their
 * _init function, which sets size and every default, then set what you
 * need:
 *
 *	struct topo_plan_params pp;
 *
 *	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
 *	pp.bytes = 1 << 20;
 *
 * A struct whose size is 0 (zero-initialised, never initialised) or too
 * small is refused with TOPO_EARG, never read with guessed defaults.
 */

/*
 * Progress of a long plan or run, for a caller that wants to show it (the
 * library never prints): phase names what is under way ("planning",
 * "filling inputs", "running", "verifying"), done of total units
 * (messages, members, iterations).  Called on the caller's thread only,
 * when a phase starts and then at most about ten times a second.
 */
typedef void (*topo_progress_fn)(void *ctx, const char *phase, int64_t done,
				 int64_t total);

/* What to plan.  The defaults are topo_plan_params_init's. */
struct topo_plan_params {
	size_t size;	 /* sizeof the caller's struct: the _init sets it */
	enum topo_op op; /* set by the _init */
	/* NULL (default): the op's default algorithm (collrun(1)) */
	const char *algorithm;
	/* endpoint id; -1 (default): the tree's root.  Operations without a
	 * root (topo_op_has_root) refuse any other value. */
	int32_t root;
	/* per member or per block (see collrun(1)); default 8, a barrier's
	 * 0 (its only value) */
	size_t bytes;
	/* element type; default TOPO_INT32 for the reductions
	 * (topo_op_reduces), TOPO_INT8 otherwise */
	enum topo_type type;
	enum topo_redop redop; /* the reductions only; default TOPO_SUM */
	/* bcast, reduce, allreduce tree and hierarchical, reduce-scatter
	 * tree: segment size in bytes (the reductions: a multiple of the
	 * type size); 0 (default): from 256 KiB up 64 KiB segments (256
	 * KiB ones for a group on one node), else whole; the other
	 * algorithms ignore it */
	size_t segment;
	size_t chunk; /* gather chunked: chunk size; 0 (default): auto */
	/* seconds planning may take; 0 (default): no limit.  A plan not
	 * built by then is refused with TOPO_ETIMEDOUT. */
	double timeout;
	/* Called on the caller's thread as planning goes (phase
	 * "planning", messages built of those expected), at most about ten
	 * times a second; NULL (default): not called. */
	topo_progress_fn progress;
	void *progress_ctx;
	/* seconds of timeout already spent (loading, say): planning stops
	 * at timeout - elapsed from now, and says "within <timeout> s" */
	double elapsed;
	/* nonzero: the plan is for topo_plan_predict and the schedule
	 * writers only, which need who sends how much to whom and after
	 * what: it keeps no buffer offsets and no receipt counters (a third
	 * of the memory), its buffers are not counted against memory, and
	 * topo_plan_run refuses it.  Default 0. */
	int predict_only;
	int reserved; /* 0 */
};

/* Sets p->size = size and every field within the first size bytes to its
 * default for op (the rest of those bytes to 0).  size is sizeof(*p) as
 * the caller knows it; it must cover at least size and op.  Returns 0, or
 * TOPO_EARG when p is NULL, size is too small (the bytes given are then
 * zeroed) or op is out of range (the struct is initialised all the same,
 * and topo_plan_new will refuse the op). */
TOPO_EXTERN int topo_plan_params_init(struct topo_plan_params *p, size_t size,
				      enum topo_op op);

typedef struct topo_plan topo_plan;

/* Plans an operation over tree t (and its group) as params says: only its
 * first params->size bytes are read, and the fields beyond them take their
 * defaults.  bcast "flood" follows t's route table as it is (also a
 * hand-edited one: faults show up when the plan runs).  Returns 0,
 * TOPO_EARG (params not initialised: size 0 or too small, or setting a
 * field this version does not know; unknown algorithm, root not a member,
 * bytes not a multiple of the type size, bitwise op on a float type, ...),
 * TOPO_ELIMIT (more messages than supported, or buffers that cannot fit
 * in memory) or TOPO_ENOMEM.  The plan keeps a pointer to t, which must
 * outlive it. */
TOPO_EXTERN int topo_plan_new(topo_plan **out, const topo_tree *t,
			      const struct topo_plan_params *params,
			      topo_error *err);
TOPO_EXTERN void topo_plan_free(topo_plan *p);
/* The algorithm's name ("flood"), the root's endpoint id, messages per
 * iteration (transport messages, local steps excluded), and the bytes of
 * buffers a run allocates. */
TOPO_EXTERN const char *topo_plan_algorithm(const topo_plan *p);
TOPO_EXTERN int32_t topo_plan_root(const topo_plan *p);
TOPO_EXTERN int64_t topo_plan_messages(const topo_plan *p);
TOPO_EXTERN int64_t topo_plan_buffer_bytes(const topo_plan *p);

/* How to run.  The defaults are topo_run_params_init's. */
struct topo_run_params {
	size_t size; /* sizeof the caller's struct (the _init sets it) */
	/* worker threads; 0 (default): one per CPU of the process's affinity
	 * mask (sched_getaffinity), at least 1, at most 4096 */
	int threads;
	int iterations; /* default 1 */
	/* seconds for the whole run (inputs, iterations, verification);
	 * default 60 */
	double timeout;
	/* As for topo_plan_params: phases "filling inputs", "running"
	 * (iterations), "verifying" (members); NULL (default): none. */
	topo_progress_fn progress;
	void *progress_ctx;
	/* seconds of timeout already spent before this call (loading and
	 * planning, say), so that one timeout bounds a program's whole
	 * run: the run stops at timeout - elapsed from now; default 0 */
	double elapsed;
	/* Which iterations are verified: TOPO_VERIFY_EVERY (0, the
	 * default), each one before the next starts; or TOPO_VERIFY_LAST,
	 * only the last, the others following one another with nothing but
	 * the (untimed) reset between them, as a program's repeated calls
	 * do.  Delivery failures and the deadline are caught in every
	 * iteration either way. */
	int verify;
	int reserved; /* 0 */
};

enum { TOPO_VERIFY_EVERY = 0, TOPO_VERIFY_LAST = 1 };

/* Sets p->size = size and every field within the first size bytes to its
 * default (the rest of those bytes to 0).  size is sizeof(*p) as the
 * caller knows it; it must cover at least size.  Returns 0, or TOPO_EARG
 * when p is NULL or size is too small (the bytes given are then
 * zeroed). */
TOPO_EXTERN int topo_run_params_init(struct topo_run_params *p, size_t size);

typedef struct topo_report topo_report;

/* Runs p as params says (NULL: all the defaults; read like topo_plan_new's
 * params): allocates every member's buffers, replays the plan `iterations`
 * times with a pool of worker threads, verifies every byte every member ends
 * with after each iteration (or after the last only: verify), and fills a
 * report.  A run stops after the first iteration that finds errors.  Returns 0
 * when the run happened (verified or not: see topo_report_verified),
 * TOPO_ELIMIT when the buffers would not fit in memory (err->text gives the
 * size needed; nothing allocated), TOPO_ENOMEM, TOPO_EIO when threads cannot be
 * started, or TOPO_EARG (NULL plan or out; params not initialised; negative
 * threads, iterations or timeout; an unknown verify).  The caller owns *out
 * (topo_report_free). */
TOPO_EXTERN int topo_plan_run(const topo_plan *p,
			      const struct topo_run_params *params,
			      topo_report **out, topo_error *err);

TOPO_EXTERN void topo_report_free(topo_report *r);
TOPO_EXTERN int topo_report_verified(const topo_report *r);
TOPO_EXTERN int topo_report_threads(const topo_report *r);
/* Iterations that completed and were timed. */
TOPO_EXTERN int topo_report_iterations(const topo_report *r);
/* Transport messages and bytes of one iteration, split by where they go:
 * shm when source and destination members are on one node, net otherwise. */
TOPO_EXTERN void topo_report_messages(const topo_report *r, int64_t *shm,
				      int64_t *net);
TOPO_EXTERN void topo_report_bytes_moved(const topo_report *r, int64_t *shm,
					 int64_t *net);
/* Seconds of the collective alone, over the iterations. */
TOPO_EXTERN void topo_report_seconds(const topo_report *r, double *min,
				     double *median, double *max);
/* Errors found (0 when verified).  Error i: the endpoint concerned (-1
 * for the run as a whole, as with "timeout"), its kind ("undelivered",
 * "duplicated", "wrong data", "timeout", "failed") and a detail text; all
 * owned by r.  Only the first 1000 are kept;
 * topo_report_error_total() counts them all. */
TOPO_EXTERN size_t topo_report_error_count(const topo_report *r);
TOPO_EXTERN int64_t topo_report_error_total(const topo_report *r);
TOPO_EXTERN int32_t topo_report_error(const topo_report *r, size_t i,
				      const char **kind, const char **detail);

/* ---------------------------------------------------------------------- */
/* Prediction: what a plan costs on the described machine, under LogGP    */
/* (collrun(1) PREDICTION; the model: collc(7))                            */

/* How to predict.  The defaults are topo_predict_params_init's. */
struct topo_predict_params {
	size_t size; /* sizeof the caller's struct (the _init sets it) */
	/* the costs; NULL (default): the machine's (topo_machine_costs) */
	const struct topo_costs *costs;
	/* seconds the prediction may take; 0 (default): no limit */
	double timeout;
	/* phase "predicting", events simulated of about 3 per message */
	topo_progress_fn progress;
	void *progress_ctx;
	double elapsed; /* as for topo_plan_params */
};

/* As topo_plan_params_init: 0, or TOPO_EARG. */
TOPO_EXTERN int topo_predict_params_init(struct topo_predict_params *p,
					 size_t size);

typedef struct topo_prediction topo_prediction;

/* One operation on the critical path: the chain of operations, from the
 * start to the last member's last operation, each of which held up the
 * next.  Owned by the prediction. */
struct topo_path_step {
	/* "send", "receive" (processing a message's arrival), "posted" (a
	 * receive posted after its message arrived, which completes it),
	 * "reduce" (a received or own block into a buffer), "copy" (a
	 * member's own) */
	const char *op;
	int32_t src, dst; /* endpoint ids; equal for a member's own step */
	int64_t bytes;
	const char *edge; /* "shm", "net", or "" for a member's own step */
	int32_t hops;	  /* network hops of a net edge, else 0 */
	double start, end; /* seconds from the start of the collective */
	/* what it waited for: "start" (nothing: the first step),
	 * "dependency" (the step before it in the plan), "cpu" (its member's
	 * CPU, busy with the step before), "port" (its member's port, busy
	 * with the step before), "arrival" (its message, sent by the step
	 * before) */
	const char *after;
};

/*
 * Simulates plan p (of any kind; a predict_only plan is the lean one) on
 * the machine its tree's group lives on, with the machine's costs or
 * params->costs: a discrete-event simulation of LogGP with LogGOPSim's
 * semantics (collrun(1) PREDICTION).  Allocates no buffers and moves no
 * data.  Returns 0, TOPO_ENOMEM, TOPO_ETIMEDOUT, TOPO_ELIMIT (more than
 * 2^32 events), or TOPO_EARG.  The caller owns *out.
 */
TOPO_EXTERN int topo_plan_predict(const topo_plan *p,
				  const struct topo_predict_params *params,
				  topo_prediction **out, topo_error *err);
TOPO_EXTERN void topo_prediction_free(topo_prediction *r);
/* When the last member finishes, in seconds from the start. */
TOPO_EXTERN double topo_prediction_seconds(const topo_prediction *r);
/* The endpoint id of the member that finishes last (the lowest rank among
 * equals). */
TOPO_EXTERN int32_t topo_prediction_last(const topo_prediction *r);
/* When the member of group rank `rank` finishes (its last operation's
 * end), seconds; -1 for a rank out of range. */
TOPO_EXTERN double topo_prediction_finish(const topo_prediction *r,
					  int32_t rank);
/* The members' finish times at quantiles q[0..nq-1] (each in 0..1; the
 * nearest rank), seconds, into out.  0, TOPO_EARG or TOPO_ENOMEM. */
TOPO_EXTERN int topo_prediction_quantiles(const topo_prediction *r,
					  const double *q, size_t nq,
					  double *out, topo_error *err);
/* The critical path: steps 0 .. length - 1, in time order (NULL out of
 * range).  The last step ends when the last member finishes. */
TOPO_EXTERN int64_t topo_prediction_path_length(const topo_prediction *r);
TOPO_EXTERN const struct topo_path_step *
topo_prediction_path_step(const topo_prediction *r, int64_t i);
/* The costs the prediction used (out initialised; its size is kept). */
TOPO_EXTERN void topo_prediction_costs(const topo_prediction *r,
				       struct topo_costs *out);
/* The plan's transport messages and their bytes by edge class (shm
 * within a node, net between nodes), as topo_report_messages and
 * topo_report_bytes_moved count them; any pointer may be NULL. */
TOPO_EXTERN void topo_prediction_messages(const topo_prediction *r,
					  int64_t *shm, int64_t *net,
					  int64_t *shm_bytes,
					  int64_t *net_bytes);
/* Events the simulation processed (operations and their waits). */
TOPO_EXTERN int64_t topo_prediction_events(const topo_prediction *r);

/*
 * Schedules for independent simulators: plan p (of any kind; a
 * predict_only plan is the lean one) as the operations topo_plan_predict
 * simulates, with costs (NULL: the machine's).  libtopo(3) "Prediction"
 * gives the formats and every choice made.
 *
 * topo_plan_write_goal writes a GOAL schedule (the text input of
 * LogGOPSim) to f: one rank per member (its group rank), per plan message
 * i a "send" labelled s<i> on its source and a "recv" r<i> on its
 * destination, with tag i, and a "calc" c<i> for a reduction or a
 * member's own step (whole ns, rounded to the nearest); "requires" lines
 * give the prediction's dependencies.  Names in its comments have their
 * control characters (and bytes that are not UTF-8) written as \xNN.
 * Returns 0, TOPO_EARG (NULL plan or file; a dependency no per-member
 * schedule can hold), TOPO_ENOMEM or TOPO_EIO (a write failed; what was
 * written stays in f).
 *
 * topo_plan_write_smpi writes SimGrid SMPI time-independent traces into
 * directory dir, which must not exist or be empty: rank-<r>.txt for each
 * member, traces.txt listing them, hostfile (rank r's host on line r),
 * platform.xml (a host per node) and replay.sh (smpirun -replay with the
 * settings the model needs).  A symbolic link dir is followed: the
 * directory it names is the one written, and the link stays; dir is
 * checked before any work (a link to nothing is refused).  The files are
 * written into a temporary directory beside dir and renamed to dir at the
 * end: on failure nothing is left.  Returns 0, TOPO_EARG, TOPO_ENOMEM or
 * TOPO_EIO (err->text names the path).
 */
TOPO_EXTERN int topo_plan_write_goal(const topo_plan *p,
				     const struct topo_costs *costs, FILE *f,
				     topo_error *err);
TOPO_EXTERN int topo_plan_write_smpi(const topo_plan *p,
				     const struct topo_costs *costs,
				     const char *dir, topo_error *err);

/* How topo_plan_emit_goal and topo_plan_emit_smpi write.  The defaults are
 * topo_emit_params_init's: the machine's costs, no time or size limit. */
struct topo_emit_params {
	size_t size; /* sizeof the caller's struct (the _init sets it) */
	/* the costs; NULL (default): the machine's (topo_machine_costs) */
	const struct topo_costs *costs;
	/* seconds the writing may take (ordering, measuring, every file);
	 * 0 (default): no limit.  Past it the writer stops: TOPO_ETIMEDOUT,
	 * and nothing of the output is left (as on any failure). */
	double timeout;
	double elapsed; /* as for topo_plan_params */
	/* the most bytes the output may hold (a directory's: all its files);
	 * 0 (default): no limit.  The output is measured, exactly, before
	 * anything is written: a larger one is refused with TOPO_ELIMIT,
	 * err->text giving its size ("the output would be 4030 bytes (3.9
	 * KiB) in 12 files, over the limit of 1024 bytes (1 KiB)"). */
	uint64_t max_bytes;
	/* Called on the caller's thread, at most about ten times a second:
	 * phases "measuring ..." and "writing ..." with members done of all
	 * (and "predicting", the SimGrid order); NULL (default): not
	 * called. */
	topo_progress_fn progress;
	void *progress_ctx;
};

/* As topo_plan_params_init: 0, or TOPO_EARG. */
TOPO_EXTERN int topo_emit_params_init(struct topo_emit_params *p, size_t size);

/*
 * topo_plan_write_goal and topo_plan_write_smpi with params (NULL: the
 * defaults): the same output, within params->timeout and no larger than
 * params->max_bytes.  They return what those return, and TOPO_ETIMEDOUT
 * or TOPO_ELIMIT (err set); a GOAL schedule stopped midway leaves what
 * was written in f, for the caller to discard.
 */
TOPO_EXTERN int topo_plan_emit_goal(const topo_plan *p,
				    const struct topo_emit_params *params,
				    FILE *f, topo_error *err);
TOPO_EXTERN int topo_plan_emit_smpi(const topo_plan *p,
				    const struct topo_emit_params *params,
				    const char *dir, topo_error *err);

#ifdef __cplusplus
}
#endif

#endif /* TOPO_H */
