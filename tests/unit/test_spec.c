/*
 * test_spec.c - stride specifications (collc(7); SPEC 3; seed 003).
 *
 * Hand cases: every example of SPEC 3 and every error text, with exact
 * member lists, positions and messages.  Random cases: spec structures are
 * generated, rendered to text with random whitespace, and evaluated by a
 * brute-force evaluator that walks every endpoint and every triplet
 * straight from the structure (it never parses text); topo_group_new must
 * agree.  Random invalid specs (stride 0, indices off the axis) must fail
 * with the exact position and text.  Then allocation failures at every
 * allocation, and the cost on a 1,048,576-endpoint machine.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "topo_internal.h"

#include "pset.h"

#include <stdarg.h>
#include <stdbool.h>
#include <time.h>

/* ---------------------------------------------------------------------- */
/* Machines */

static topo_machine *machine(int32_t nodes, const int32_t *tasks, int32_t E,
			     int32_t fanout)
{
	int32_t *parent = malloc((size_t)nodes * sizeof(*parent));
	topo_machine *m = NULL;
	topo_error err;
	int rc;

	topo_error_clear(&err);
	topo__network_kary(parent, nodes, fanout, 0);
	rc = topo__machine_build(&m, "test", nodes, tasks, E, "kary", parent,
				 &err);
	CHECK(rc == 0, "topo__machine_build: %d %s", rc, err.text);
	free(parent);
	return m;
}

/* ---------------------------------------------------------------------- */
/* Hand-case helpers */

/* The spec selects exactly want[0..n-1] (ascending). */
static void expect_members(const topo_machine *m, const char *spec,
			   const int32_t *want, int32_t n)
{
	topo_group *g = NULL;
	topo_error err;
	char buf[1024];
	int rc;

	topo_error_clear(&err);
	rc = topo_group_new(&g, m, NULL, spec, &err);
	CHECK(rc == 0, "\"%s\": rc %d: %s", spec, rc,
	      topo_error_format(&err, buf, sizeof(buf)));
	if (rc != 0)
		return;
	CHECK(topo_group_size(g) == n, "\"%s\": size %d, want %d", spec,
	      (int)topo_group_size(g), (int)n);
	if (topo_group_size(g) == n) {
		const int32_t *got = topo_group_members(g);
		int32_t i = 0;

		while (i < n && got[i] == want[i])
			i++;
		CHECK(i == n, "\"%s\": member %d is %d, want %d", spec, (int)i,
		      i < n ? (int)got[i] : 0, i < n ? (int)want[i] : 0);
	}
	CHECK_STR(topo_group_name(g), spec);
	CHECK_INT(topo_spec_check(m, spec, NULL), 0);
	topo_group_free(g);
}

#define MEMBERS(m, spec, ...)                                                  \
	do {                                                                   \
		static const int32_t want_[] = {__VA_ARGS__};                  \
		expect_members(m, spec, want_,                                 \
			       (int32_t)(sizeof(want_) / sizeof(want_[0])));   \
	} while (0)

/* The spec is refused with TOPO_ESPEC, formatted exactly as want
 * ("spec \"S\": at P: text"), by both topo_group_new and topo_spec_check. */
static void expect_error(const topo_machine *m, const char *spec, int pos,
			 const char *text)
{
	topo_group *g = (topo_group *)1;
	topo_error err;
	char got[1024], want[1024];
	size_t n;
	int rc;

	topo_error_clear(&err);
	rc = topo_group_new(&g, m, "name", spec, &err);
	CHECK(rc == TOPO_ESPEC, "\"%s\": rc %d, want TOPO_ESPEC", spec, rc);
	CHECK(g == NULL, "\"%s\": *out not NULL on failure", spec);
	CHECK_INT(err.code, TOPO_ESPEC);
	CHECK_INT(err.position, pos);
	CHECK_STR(err.text, text);
	CHECK_STR(err.spec, spec);
	/* The formatted line shows control characters as \xNN. */
	n = (size_t)snprintf(want, sizeof(want), "spec \"");
	for (const char *c = spec; *c != '\0'; c++)
		n += (size_t)snprintf(want + n, sizeof(want) - n,
				      (unsigned char)*c < 0x20 && *c != '\t'
					  ? "\\x%02x"
					  : "%c",
				      (unsigned char)*c);
	snprintf(want + n, sizeof(want) - n, "\": at %d: %s", pos, text);
	CHECK_STR(topo_error_format(&err, got, sizeof(got)), want);
	topo_error_clear(&err);
	CHECK_INT(topo_spec_check(m, spec, &err), TOPO_ESPEC);
	CHECK_INT(err.position, pos);
	CHECK_STR(err.text, text);
}

/* ---------------------------------------------------------------------- */
/* Hand cases.  Machine A: 3 nodes running 3, 2 and 4 tasks (T = 9), two
 * endpoints per task (E = 2, N = 18):
 *   node 0: tasks 0 1 2    endpoints 0..5
 *   node 1: tasks 3 4      endpoints 6..9
 *   node 2: tasks 5 6 7 8  endpoints 10..17
 * Endpoint id = task * 2 + row. */

static void test_examples(const topo_machine *a)
{
	/* SPEC 3's examples, in its order. */
	MEMBERS(a, "all", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
		16, 17);
	/* Seed 003's column stride: tasks 0 2 4 6 8, both rows. */
	MEMBERS(a, "cols 0::2", 0, 1, 4, 5, 8, 9, 12, 13, 16, 17);
	MEMBERS(a, "row 0", 0, 2, 4, 6, 8, 10, 12, 14, 16);
	MEMBERS(a, "rows 0:1 cols 4:7", 8, 9, 10, 11, 12, 13, 14, 15);
	MEMBERS(a, "node 1", 6, 7, 8, 9);
	MEMBERS(a, "all - row 0", 1, 3, 5, 7, 9, 11, 13, 15, 17);
	/* Tasks 7 5 3 1, plus node 0's tasks 0 1 2. */
	MEMBERS(a, "cols 7:0:-2 + node 0", 0, 1, 2, 3, 4, 5, 6, 7, 10, 11, 14,
		15);
}

static void test_hand_members(const topo_machine *a, const topo_machine *b)
{
	/* Every axis word, singular and plural. */
	MEMBERS(a, "col 3", 6, 7);
	MEMBERS(a, "task 3", 6, 7);
	MEMBERS(a, "tasks 8:", 16, 17);
	MEMBERS(a, "rows 1", 1, 3, 5, 7, 9, 11, 13, 15, 17);
	MEMBERS(a, "nodes 0:2:2", 0, 1, 2, 3, 4, 5, 10, 11, 12, 13, 14, 15, 16,
		17);
	MEMBERS(a, "ep 5", 5);
	MEMBERS(a, "eps 3:17:7", 3, 10, 17);
	/* "5:" runs to the axis' last index, "F::-S" down to 0. */
	MEMBERS(a, "col 5:", 10, 11, 12, 13, 14, 15, 16, 17);
	MEMBERS(a, "cols 4::-2", 0, 1, 4, 5, 8, 9);
	MEMBERS(a, "cols 8::-3", 4, 5, 10, 11, 16, 17);
	/* last == first: any nonzero stride. */
	MEMBERS(a, "cols 2:2:-5", 4, 5);
	MEMBERS(a, "cols 2:2:7", 4, 5);
	/* Only selected indices must exist: 9 and -1 are never reached. */
	MEMBERS(a, "cols 0:9:10", 0, 1);
	MEMBERS(a, "cols 8:-1:-5", 6, 7, 16, 17);
	MEMBERS(a, "eps 17:-1:-10", 7, 17);
	/* Overlapping triplets merge. */
	MEMBERS(a, "cols 0:3,2:5,1", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11);
	MEMBERS(a, "eps 0::4,2::4,0:17:2", 0, 2, 4, 6, 8, 10, 12, 14, 16);
	/* Juxtaposed selectors intersect, also on the same axis (col and
	 * task are one axis). */
	MEMBERS(a, "cols 0:5 cols 3:8", 6, 7, 8, 9, 10, 11);
	MEMBERS(a, "cols 0:5 task 3:8", 6, 7, 8, 9, 10, 11);
	MEMBERS(a, "node 0,2 cols 1:6", 2, 3, 4, 5, 10, 11, 12, 13);
	MEMBERS(a, "node 2 row 1", 11, 13, 15, 17);
	MEMBERS(a, "ep 0:17 row 1 col 0", 1);
	MEMBERS(a, "eps 0::3 node 0:1 rows 0", 0, 6);
	MEMBERS(a, "row 0 row 0:1 node 1", 6, 8);
	/* Left to right: union and difference in order. */
	MEMBERS(a, "ep 0::3 - node 1", 0, 3, 12, 15);
	MEMBERS(a, "all - all + ep 4", 4);
	MEMBERS(a, "row 1 - cols 0:8 + ep 0", 0);
	MEMBERS(a, "node 0 - row 0 + ep 2 - col 2", 1, 2, 3);
	MEMBERS(a, "cols 0::2 - rows 0 + node 1 - eps 6", 1, 5, 7, 8, 9, 13,
		17);
	/* Whitespace: runs of spaces and tabs, leading and trailing. */
	MEMBERS(a, "\t cols 0 \t+\t  row 1  ", 0, 1, 3, 5, 7, 9, 11, 13, 15,
		17);
	MEMBERS(a, "  all  ", 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
		15, 16, 17);
	MEMBERS(a, "rows\t0\tcols\t1", 2);
	/* Negative stride with explicit and implied last, and -0. */
	MEMBERS(a, "cols 7:0:-2", 2, 3, 6, 7, 10, 11, 14, 15);
	MEMBERS(a, "ep -0", 0);
	/* Limits of int32 are numbers, just not indices. */
	MEMBERS(a, "ep 0:17:2147483647", 0);
	MEMBERS(a, "ep 17:0:-2147483648", 17);

	/* Machine B: 4 nodes running 1, 3, 1, 2 tasks, E = 1. */
	MEMBERS(b, "node 1", 1, 2, 3);
	MEMBERS(b, "node 3 + node 0", 0, 5, 6);
	MEMBERS(b, "cols 0::2", 0, 2, 4, 6);
	MEMBERS(b, "row 0 - node 1:2", 0, 5, 6);
	MEMBERS(b, "all - ep 1:5", 0, 6);
}

static void test_hand_errors(const topo_machine *a)
{
	/* Strides.  SPEC 3's own example first: at the ':' of the stride. */
	expect_error(a, "cols 0::0", 7, "stride is 0");
	expect_error(a, "cols 0:5:0", 8, "stride is 0");
	expect_error(a, "cols 9::0", 7, "stride is 0");
	expect_error(a, "cols 0:5:-1", 8, "stride -1 goes away from last 5");
	expect_error(a, "cols 5:0:2", 8, "stride 2 goes away from last 0");
	expect_error(a, "cols 5:0", 7,
		     "stride 1 goes away from last 0 (count down with "
		     "5:0:-1)");

	/* Selected indices outside their axis, named in the user's words. */
	expect_error(a, "cols 9", 5, "column 9 does not exist (columns: 0..8)");
	expect_error(a, "cols -1", 5,
		     "column -1 does not exist (columns: 0..8)");
	expect_error(a, "col -2147483648", 4,
		     "column -2147483648 does not exist (columns: 0..8)");
	expect_error(a, "task 0:9", 7, "task 9 does not exist (tasks: 0..8)");
	expect_error(a, "tasks 0:12:4", 8,
		     "task 12 does not exist (tasks: 0..8)");
	expect_error(a, "cols 0:12:9", 7,
		     "column 9 does not exist (columns: 0..8)");
	expect_error(a, "cols 8:-1:-3", 7,
		     "column -1 does not exist (columns: 0..8)");
	expect_error(a, "cols 9::-1", 5,
		     "column 9 does not exist (columns: 0..8)");
	expect_error(a, "cols 9:5:1", 5,
		     "column 9 does not exist (columns: 0..8)");
	expect_error(a, "row 2", 4, "row 2 does not exist (rows: 0..1)");
	expect_error(a, "rows 0:2", 7, "row 2 does not exist (rows: 0..1)");
	expect_error(a, "node 3", 5, "node 3 does not exist (nodes: 0..2)");
	expect_error(a, "nodes 1,0,3", 10,
		     "node 3 does not exist (nodes: 0..2)");
	expect_error(a, "ep 18", 3,
		     "endpoint 18 does not exist (endpoints: 0..17)");
	expect_error(a, "eps 0:2147483647:2147483647", 6,
		     "endpoint 2147483647 does not exist (endpoints: 0..17)");
	expect_error(a, "ep 0:17 - ep 1:99:50", 15,
		     "endpoint 51 does not exist (endpoints: 0..17)");

	/* Numbers. */
	expect_error(a, "cols 2147483648", 5,
		     "number 2147483648 is out of range "
		     "(-2147483648..2147483647)");
	expect_error(a, "cols -2147483649", 5,
		     "number -2147483649 is out of range "
		     "(-2147483648..2147483647)");
	expect_error(
	    a, "cols 0::99999999999999999999999999999999999999999999", 8,
	    "number 9999999999999999999999999999999999999999... is out "
	    "of range (-2147483648..2147483647)");
	expect_error(a, "cols", 4, "expected a number");
	expect_error(a, "cols ", 5, "expected a number");
	expect_error(a, "cols + row 1", 5, "expected a number");
	expect_error(a, "cols 0::", 8, "expected a number");
	expect_error(a, "cols 0:x", 7, "expected a number");
	expect_error(a, "cols 0:5:-", 10, "expected a number");
	expect_error(a, "cols 0,,2", 7, "expected a number");
	expect_error(a, "cols 0,", 7, "expected a number");
	expect_error(a, "cols 0, 2", 7,
		     "expected a number (an index list has no spaces: "
		     "0:7:2,9)");
	expect_error(a, "cols 0: 2", 8,
		     "expected \" + \" or \" - \" between terms");
	expect_error(a, "cols 0x", 6,
		     "unexpected \"x\" after a number (valid: \":\", \",\", a "
		     "space or the end)");
	expect_error(a, "cols 0:1\"", 8,
		     "unexpected \"\\\"\" after a number (valid: \":\", \",\", "
		     "a space or the end)");
	expect_error(
	    a, "cols 0\n", 6,
	    "unexpected \"\\x0a\" after a number (valid: \":\", \",\", "
	    "a space or the end)");
	expect_error(a, "cols 0:1:1:2", 10,
		     "unexpected \":\" after a stride (valid: \",\", a space "
		     "or the end)");

	/* Words. */
	expect_error(
	    a, "colz 1", 0,
	    "unknown axis \"colz\" (valid: row, col, task, node, ep, hosts, or "
	    "all)");
	expect_error(
	    a, "Cols 1", 0,
	    "unknown axis \"Cols\" (valid: row, col, task, node, ep, hosts, or "
	    "all)");
	expect_error(
	    a, "row 0 nod 1", 6,
	    "unknown axis \"nod\" (valid: row, col, task, node, ep, hosts, or "
	    "all)");
	expect_error(a, "cols5", 4, "expected a space after \"cols\"");
	expect_error(a, "all cols 1", 4,
		     "\"all\" cannot be combined with selectors");
	expect_error(a, "cols 1 all", 7,
		     "\"all\" cannot be combined with selectors");
	expect_error(a, "5", 0,
		     "expected an axis (row, col, task, node, ep, hosts) or \"all\"");
	expect_error(a, "+ all", 0,
		     "expected an axis (row, col, task, node, ep, hosts) or \"all\"");
	expect_error(a, "all + + row 0", 6,
		     "expected an axis (row, col, task, node, ep, hosts) or \"all\"");

	/* Operators need whitespace on both sides. */
	expect_error(a, "all all", 4,
		     "expected \" + \" or \" - \" between terms");
	expect_error(a, "cols 0+ row 1", 6,
		     "expected \" + \" or \" - \" between terms");
	expect_error(a, "cols 0 +row 1", 7,
		     "expected \" + \" or \" - \" between terms");
	expect_error(a, "cols 0 1", 7,
		     "expected \" + \" or \" - \" between terms");
	expect_error(a, "all -row 0", 4,
		     "expected \" + \" or \" - \" between terms");
	expect_error(a, "all+", 3, "expected \" + \" or \" - \" between terms");
	expect_error(a, "all,", 3, "expected \" + \" or \" - \" between terms");
	expect_error(a, "all -", 5, "expected a term after \"-\"");
	expect_error(a, "all + \t", 7, "expected a term after \"+\"");

	/* Empty spec, empty result. */
	expect_error(a, "", 0,
		     "spec is empty (expected \"all\" or selectors such as "
		     "\"cols 0::2\")");
	expect_error(a, " \t ", 0,
		     "spec is empty (expected \"all\" or selectors such as "
		     "\"cols 0::2\")");
	expect_error(a, "all - all", 0, "selects no endpoints");
	expect_error(a, "row 0 row 1", 0, "selects no endpoints");
	expect_error(a, "node 1 cols 5:8", 0, "selects no endpoints");
	expect_error(a, "ep 4 + all - all", 0, "selects no endpoints");

	/* The first error in reading order wins. */
	expect_error(a, "cols 9 + colz 1", 5,
		     "column 9 does not exist (columns: 0..8)");
	expect_error(
	    a, "colz 1 + cols 0::0", 0,
	    "unknown axis \"colz\" (valid: row, col, task, node, ep, hosts, or "
	    "all)");
	expect_error(a, "all - all + cols 0::0", 19, "stride is 0");
}

static void test_bad_arguments(const topo_machine *a)
{
	topo_group *g = (topo_group *)1;
	topo_error err;

	topo_error_clear(&err);
	CHECK_INT(topo_group_new(&g, NULL, NULL, "all", &err), TOPO_EARG);
	CHECK(g == NULL, "*out not NULL");
	topo_error_clear(&err);
	CHECK_INT(topo_spec_check(a, NULL, &err), TOPO_EARG);
	CHECK_INT(err.code, TOPO_EARG);
	/* A NULL error record is allowed. */
	CHECK_INT(topo_spec_check(a, "cols 0::0", NULL), TOPO_ESPEC);
	/* A record already set keeps its first error. */
	topo_error_clear(&err);
	CHECK_INT(topo_spec_check(a, "colz", &err), TOPO_ESPEC);
	CHECK_INT(topo_spec_check(a, "cols 0::0", &err), TOPO_ESPEC);
	CHECK_INT(err.position, 0);
	CHECK(strncmp(err.text, "unknown axis", 12) == 0, "%s", err.text);
}

/* ---------------------------------------------------------------------- */
/* Random specs and the brute-force evaluator */

enum { MAX_TRIP = 6, MAX_SEL = 4, MAX_TERM = 5 };

/* Axis words and how messages name them; axis: 0 row, 1 task, 2 node,
 * 3 ep. */
static const struct {
	const char *word, *one, *many;
	int axis;
} words[] = {
    {"row", "row", "rows", 0},		{"rows", "row", "rows", 0},
    {"col", "column", "columns", 1},	{"cols", "column", "columns", 1},
    {"task", "task", "tasks", 1},	{"tasks", "task", "tasks", 1},
    {"node", "node", "nodes", 2},	{"nodes", "node", "nodes", 2},
    {"ep", "endpoint", "endpoints", 3}, {"eps", "endpoint", "endpoints", 3},
};
#define NWORDS ((int)(sizeof(words) / sizeof(words[0])))

/* form: 0 "F", 1 "F:L", 2 "F:L:S", 3 "F:", 4 "F::S". */
struct rtrip {
	int32_t first, last, stride;
	int form;
};

struct rsel {
	int word;
	int ntrip;
	struct rtrip trip[MAX_TRIP];
};

struct rterm {
	bool all;
	char op; /* '+' or '-' before this term; unused for the first */
	int nsel;
	struct rsel sel[MAX_SEL];
};

struct rspec {
	int nterm;
	struct rterm term[MAX_TERM];
};

struct rmachine {
	int32_t nodes, tasks, E, N;
	int32_t node_tasks[8];
	topo_machine *m;
};

static int64_t axis_len(const struct rmachine *rm, int axis)
{
	return axis == 0   ? rm->E
	       : axis == 1 ? rm->tasks
	       : axis == 2 ? rm->nodes
			   : rm->N;
}

/* Whether idx is one of the triplet's indices, by walking it as
 * MPI_Group_range_incl does (omitted last: the axis end in the stride's
 * direction). */
static bool trip_has(const struct rtrip *t, int64_t len, int64_t idx)
{
	int64_t stride = t->form == 2 || t->form == 4 ? t->stride : 1;
	int64_t last = t->form == 0		      ? t->first
		       : t->form == 1 || t->form == 2 ? t->last
		       : stride > 0		      ? len - 1
						      : 0;

	for (int64_t i = t->first; stride > 0 ? i <= last : i >= last;
	     i += stride)
		if (i == idx)
			return true;
	return false;
}

static bool brute_in(const struct rmachine *rm, const struct rspec *s,
		     int32_t ep)
{
	int32_t task = ep / rm->E, row = ep % rm->E, node = 0;
	bool in = false;

	for (int32_t t = task; t >= rm->node_tasks[node]; node++)
		t -= rm->node_tasks[node];
	for (int i = 0; i < s->nterm; i++) {
		const struct rterm *t = &s->term[i];
		bool term = true;

		for (int j = 0; !t->all && j < t->nsel; j++) {
			const struct rsel *sel = &t->sel[j];
			int axis = words[sel->word].axis;
			int64_t idx = axis == 0	  ? row
				      : axis == 1 ? task
				      : axis == 2 ? node
						  : ep;
			bool any = false;

			for (int k = 0; k < sel->ntrip; k++)
				any = any || trip_has(&sel->trip[k],
						      axis_len(rm, axis), idx);
			term = term && any;
		}
		if (i == 0 || t->op == '+')
			in = in || term;
		else
			in = in && !term;
	}
	return in;
}

/* A valid triplet over an axis of len indices, in a random form. */
static struct rtrip random_trip(int64_t len)
{
	struct rtrip t = {0};

	t.form = (int)check_rand_range(0, 4);
	t.first = (int32_t)check_rand_range(0, len - 1);
	t.stride = 1;
	for (;;) {
		int64_t far;

		if (t.form == 2 || t.form == 4) {
			do
				t.stride = (int32_t)check_rand_range(-len - 1,
								     len + 1);
			while (t.stride == 0);
		}
		if (t.form != 1 && t.form != 2)
			return t;
		/* Last may lie beyond the axis as long as no selected index
		 * does. */
		if (t.stride > 0)
			t.last =
			    (int32_t)check_rand_range(t.first, len + t.stride);
		else
			t.last =
			    (int32_t)check_rand_range(t.stride - 1, t.first);
		far =
		    t.first + (t.last - (int64_t)t.first) / t.stride * t.stride;
		if (far >= 0 && far < len)
			return t;
	}
}

static void random_spec(const struct rmachine *rm, struct rspec *s)
{
	s->nterm = (int)check_rand_range(1, MAX_TERM);
	for (int i = 0; i < s->nterm; i++) {
		struct rterm *t = &s->term[i];

		t->op = check_rand_range(0, 2) == 0 ? '-' : '+';
		t->all = check_rand_range(0, 7) == 0;
		t->nsel = (int)check_rand_range(1, MAX_SEL);
		for (int j = 0; j < t->nsel; j++) {
			struct rsel *sel = &t->sel[j];

			sel->word = (int)check_rand_range(0, NWORDS - 1);
			sel->ntrip = (int)check_rand_range(1, MAX_TRIP);
			for (int k = 0; k < sel->ntrip; k++)
				sel->trip[k] = random_trip(
				    axis_len(rm, words[sel->word].axis));
		}
	}
}

/* Text rendering; records where one triplet's numbers and stride ':' land
 * so invalid-spec tests know the exact error position. */
struct render {
	char buf[4096];
	size_t len;
	int mark_term, mark_sel, mark_trip; /* the triplet to locate */
	int first_at, last_at, colon_at;
};

static void put(struct render *r, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	r->len += (size_t)vsnprintf(r->buf + r->len, sizeof(r->buf) - r->len,
				    fmt, ap);
	va_end(ap);
}

static void put_space(struct render *r, int min, int max)
{
	int n = (int)check_rand_range(min, max);

	for (int i = 0; i < n; i++)
		put(r, "%c", check_rand_range(0, 2) == 0 ? '\t' : ' ');
}

static void render(struct render *r, const struct rspec *s)
{
	r->len = 0;
	r->buf[0] = '\0';
	put_space(r, 0, 2);
	for (int i = 0; i < s->nterm; i++) {
		const struct rterm *t = &s->term[i];

		if (i > 0) {
			put_space(r, 1, 3);
			put(r, "%c", t->op);
			put_space(r, 1, 3);
		}
		if (t->all) {
			put(r, "all");
			continue;
		}
		for (int j = 0; j < t->nsel; j++) {
			const struct rsel *sel = &t->sel[j];

			if (j > 0)
				put_space(r, 1, 3);
			put(r, "%s", words[sel->word].word);
			put_space(r, 1, 3);
			for (int k = 0; k < sel->ntrip; k++) {
				const struct rtrip *tr = &sel->trip[k];
				bool here = i == r->mark_term &&
					    j == r->mark_sel &&
					    k == r->mark_trip;

				if (k > 0)
					put(r, ",");
				if (here)
					r->first_at = (int)r->len;
				put(r, "%d", (int)tr->first);
				if (tr->form != 0)
					put(r, ":");
				if (here)
					r->last_at = (int)r->len;
				if (tr->form == 1 || tr->form == 2)
					put(r, "%d", (int)tr->last);
				if (tr->form == 2 || tr->form == 4) {
					if (here)
						r->colon_at = (int)r->len;
					put(r, ":%d", (int)tr->stride);
				}
			}
		}
	}
	put_space(r, 0, 2);
}

static struct rmachine random_machine(void)
{
	struct rmachine rm;

	bool uniform = check_rand_range(0, 2) == 0;

	rm.nodes = (int32_t)check_rand_range(1, 6);
	rm.tasks = 0;
	for (int32_t i = 0; i < rm.nodes; i++) {
		/* Some machines run as many tasks on every node: node
		 * selectors then become patterns rather than lists. */
		rm.node_tasks[i] = uniform && i > 0
				       ? rm.node_tasks[0]
				       : (int32_t)check_rand_range(1, 4);
		rm.tasks += rm.node_tasks[i];
	}
	rm.E = (int32_t)check_rand_range(1, 4);
	rm.N = rm.tasks * rm.E;
	rm.m = machine(rm.nodes, rm.node_tasks, rm.E,
		       (int32_t)check_rand_range(1, 3));
	return rm;
}

static long random_valid, random_empty;

static void check_random_spec(const struct rmachine *rm, const struct rspec *s)
{
	struct render r = {.mark_term = -1};
	int32_t want[4 * 8 * 4], nwant = 0;
	topo_group *g = NULL;
	topo_error err;
	char buf[1024];
	int rc;

	render(&r, s);
	for (int32_t ep = 0; ep < rm->N; ep++)
		if (brute_in(rm, s, ep))
			want[nwant++] = ep;
	topo_error_clear(&err);
	rc = topo_group_new(&g, rm->m, NULL, r.buf, &err);
	if (nwant == 0) {
		random_empty++;
		CHECK(rc == TOPO_ESPEC && err.position == 0 &&
			  strcmp(err.text, "selects no endpoints") == 0,
		      "\"%s\": rc %d \"%s\", want an empty result", r.buf, rc,
		      err.text);
		return;
	}
	random_valid++;
	CHECK(rc == 0, "\"%s\": %s", r.buf,
	      topo_error_format(&err, buf, sizeof(buf)));
	if (rc != 0)
		return;
	{
		bool same = topo_group_size(g) == nwant;

		for (int32_t i = 0; same && i < nwant; i++)
			same = topo_group_members(g)[i] == want[i];
		CHECK(same, "\"%s\" on %d nodes, E %d: size %d, want %d", r.buf,
		      (int)rm->nodes, (int)rm->E, (int)topo_group_size(g),
		      (int)nwant);
	}
	topo_group_free(g);
}

/* Breaks one triplet of a valid spec: stride 0, or a selected index off
 * the axis through first or through last.  Everything else stays valid, so
 * that triplet must be the error, at the exact position. */
static void check_random_invalid(const struct rmachine *rm, struct rspec *s)
{
	struct render r;
	struct rtrip *t;
	struct rterm *term;
	char text[256];
	int ti, kind, pos;
	int64_t len;
	const char *one, *many;
	topo_error err;

	for (ti = 0; ti < s->nterm && s->term[ti].all; ti++)
		;
	if (ti == s->nterm)
		return;
	term = &s->term[ti];
	r.mark_term = ti;
	r.mark_sel = (int)check_rand_range(0, term->nsel - 1);
	r.mark_trip = (int)check_rand_range(0, term->sel[r.mark_sel].ntrip - 1);
	t = &term->sel[r.mark_sel].trip[r.mark_trip];
	len = axis_len(rm, words[term->sel[r.mark_sel].word].axis);
	one = words[term->sel[r.mark_sel].word].one;
	many = words[term->sel[r.mark_sel].word].many;
	kind = (int)check_rand_range(0, 3);
	if (kind == 0) {
		t->form = check_rand_range(0, 1) ? 2 : 4;
		t->stride = 0;
	} else if (kind == 1) {
		/* First off the axis, either side. */
		t->first = check_rand_range(0, 1)
			       ? (int32_t)(len + check_rand_range(0, 3))
			       : (int32_t)-check_rand_range(1, 3);
		t->form = 0;
	} else if (kind == 2) {
		/* Walking up past the end: the first index reached >= len. */
		t->first = (int32_t)check_rand_range(0, len - 1);
		t->stride = (int32_t)check_rand_range(1, 3);
		t->form = check_rand_range(0, 1) || t->stride != 1 ? 2 : 1;
		t->last =
		    (int32_t)(len - 1 + t->stride + check_rand_range(0, 5));
	} else {
		/* Walking down past 0. */
		t->first = (int32_t)check_rand_range(0, len - 1);
		t->stride = -(int32_t)check_rand_range(1, 3);
		t->form = 2;
		t->last = (int32_t)(t->stride - check_rand_range(0, 5));
	}
	render(&r, s);
	if (kind == 0) {
		pos = r.colon_at;
		snprintf(text, sizeof(text), "stride is 0");
	} else if (kind == 1) {
		pos = r.first_at;
		snprintf(text, sizeof(text), "%s %d does not exist (%s: 0..%d)",
			 one, (int)t->first, many, (int)(len - 1));
	} else {
		/* The first walked index off the axis, by walking. */
		int64_t i = t->first;

		while (i >= 0 && i < len)
			i += t->stride;
		pos = r.last_at;
		snprintf(text, sizeof(text),
			 "%s %lld does not exist (%s: 0..%d)", one,
			 (long long)i, many, (int)(len - 1));
	}
	topo_error_clear(&err);
	CHECK_INT(topo_spec_check(rm->m, r.buf, &err), TOPO_ESPEC);
	CHECK(err.position == pos && strcmp(err.text, text) == 0,
	      "\"%s\": at %d: %s; want at %d: %s", r.buf, err.position,
	      err.text, pos, text);
}

/* The evaluator's thresholds at random, tiny ones included, so that the
 * small machines here take the paths big ones take (literal stretches,
 * member-by-member marking, one-bitmap unions, per-member expansion). */
static void random_tune(bool on)
{
	static const int64_t caps[] = {1, 2, 3, 8, 64};
	static const int64_t sparse[] = {1, 2, 5, 64, 100000};
	static const size_t many[] = {0, 1, 2, 64};
	static const struct pset_tune def = {(int64_t)1 << 24, 64, 64};

	if (!on) {
		topo__tune.pset = def;
		return;
	}
	topo__tune.pset.cap = caps[check_rand_range(0, 4)];
	topo__tune.pset.sparse = sparse[check_rand_range(0, 4)];
	topo__tune.pset.many = many[check_rand_range(0, 3)];
}

static void test_random(void)
{
	random_valid = random_empty = 0;
	for (int i = 0; i < 600; i++) {
		struct rmachine rm = random_machine();

		random_tune(i >= 400);

		for (int j = 0; j < 20; j++) {
			struct rspec s;

			random_spec(&rm, &s);
			check_random_spec(&rm, &s);
			check_random_invalid(&rm, &s);
		}
		topo_machine_free(rm.m);
	}
	random_tune(false);
	/* The generator must exercise both outcomes in earnest. */
	CHECK(random_valid > 4000, "only %ld non-empty random specs",
	      random_valid);
	CHECK(random_empty > 200, "only %ld empty random specs", random_empty);
	printf("random: %ld non-empty, %ld empty\n", random_valid,
	       random_empty);
}

/* ---------------------------------------------------------------------- */
/* Allocation failures: every allocation of an evaluation fails once; each
 * must give TOPO_ENOMEM, no members, and leak nothing (ASan). */

static void test_enomem(const topo_machine *a)
{
	const char *spec = "cols 0:3,1,2,3,4,5,6,7,8,0,1,2,3,4,5,6,7,8,0,1,2 "
			   "node 1:2 + ep 1:5 - row 0";
	long k;

	for (k = 0; k < 100; k++) {
		int32_t *members = (int32_t *)1, n = -1;
		topo_error err;
		int rc;

		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo__spec_eval(a, spec, &members, &n, &err);
		topo__alloc_fail_after(-1);
		if (rc == 0) {
			CHECK_INT(n, 9);
			topo__free(members);
			break;
		}
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK_INT(err.code, TOPO_ENOMEM);
		CHECK(members == NULL && n == 0, "failure %ld left members", k);
		CHECK(strstr(err.text, "out of memory") != NULL, "%s",
		      err.text);
	}
	/* The work area, the triplet list, each set's runs and patterns,
	 * the sweep's events, the members. */
	CHECK(k >= 8 && k < 100, "succeeded after %ld failures", k);
}

/* ---------------------------------------------------------------------- */
/* Cost on a 1,048,576-endpoint machine */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Builds a spec of count repetitions of item joined by sep after head. */
static char *repeat(const char *head, const char *sep, int count,
		    void (*item)(char *buf, int i))
{
	size_t cap = strlen(head) + (size_t)count * 48 + 1, len;
	char *s = malloc(cap), piece[48];

	len = (size_t)snprintf(s, cap, "%s", head);
	for (int i = 0; i < count; i++) {
		item(piece, i);
		len += (size_t)snprintf(s + len, cap - len, "%s%s",
					i > 0 ? sep : "", piece);
	}
	return s;
}

static void item_whole(char *buf, int i)
{
	(void)i;
	strcpy(buf, "0:1048575");
}

static void item_stride(char *buf, int i)
{
	sprintf(buf, "%d::%d", i % 1000, i + 2);
}

static void item_ep(char *buf, int i)
{
	sprintf(buf, "ep %d", 2 * i);
}

static void item_huge(char *buf, int i)
{
	/* i and i + 1073741824 + i: two members per triplet, distinct. */
	sprintf(buf, "%d::%d", i, 1073741824 + i);
}

static void timed(const topo_machine *m, const char *label, const char *spec,
		  int32_t want, double limit)
{
	topo_group *g = NULL;
	topo_error err;
	double t0 = now(), dt;
	int rc;

	topo_error_clear(&err);
	rc = topo_group_new(&g, m, label, spec, &err);
	dt = now() - t0;
	CHECK(rc == 0, "%s: %s", label, err.text);
	if (rc == 0)
		CHECK_INT(topo_group_size(g), want);
	printf("big: %-28s %8.1f ms\n", label, dt * 1e3);
	/* Printed, not asserted: speed is make bench's business. */
	(void)limit;
	topo_group_free(g);
}

/* On 2^31 - 1 endpoints (one task), specs whose terms each span
 * the machine cost what the spec says, not what the machine holds: the
 * results are small so that only the evaluation is timed. */
static void test_huge(void)
{
	static const int32_t one[] = {1};
	topo_machine *m = machine(1, one, INT32_MAX, 2);
	char *s = malloc(4096);
	size_t len;

	if (m == NULL)
		return;
	len = (size_t)sprintf(s, "ep 0::2");
	while (len < 2000)
		len += (size_t)sprintf(s + len, " - ep 0::2 + ep 0::2");
	sprintf(s + len, " - ep 0::2 + ep 0:7");
	timed(m, "2 KB of ep 0::2 +/- on 2^31", s, 8, 1.0);
	/* Odd multiples of 3 below 100: 3, 9, ..., 99. */
	timed(m, "3-strides minus evens", "ep 0::3 - ep 0::2 - ep 100:", 17, 1.0);
	/* Rows are the endpoints of the one task. */
	timed(m, "row 0::1000000", "row 0::1000000", 2148, 1.0);
	/* Coprime strides past the periodic limit: a literal stretch. */
	timed(m, "ep 0::65537,1::65539", "ep 0::65537,1::65539", 32768 + 32767,
	      1.0);
	{
		/* One member of each large stride, all over the machine. */
		char *r = repeat("ep ", ",", 1000, item_huge);

		timed(m, "1000 huge strides", r, 1000 * 2, 1.0);
		free(r);
	}
	free(s);
	topo_machine_free(m);
}

static void test_big(void)
{
	int32_t *tasks = malloc(65536 * sizeof(*tasks));
	topo_machine *m1, *m4;
	char *s;

	for (int i = 0; i < 65536; i++)
		tasks[i] = 16;
	m1 = machine(65536, tasks, 1, 4); /* 1,048,576 tasks, E = 1 */
	for (int i = 0; i < 65536; i++)
		tasks[i] = 4;
	m4 = machine(65536, tasks, 4, 4); /* 262,144 tasks, E = 4 */
	free(tasks);
	if (m1 == NULL || m4 == NULL)
		goto out;
	/* Limits are generous for sanitizer builds; the times are printed. */
	timed(m1, "all", "all", 1048576, 0.5);
	timed(m1, "node 7 + cols 0::2", "node 7 + cols 0::2", 524296, 0.5);
	/* Even tasks, rows 1..3: 131072 * 3; node 7 adds its rows 0 of tasks
	 * 28 and 30 and every row of tasks 29 and 31: 2 + 8. */
	timed(m4, "cols 0::2 - row 0 + node 7", "cols 0::2 - row 0 + node 7",
	      393226, 0.5);
	/* Multiples of 5 (209716) but not of 4 (52429 multiples of 20). */
	timed(m4, "rows 1:3 ep 0::5", "rows 1:3 ep 0::5", 157287, 0.5);

	/* A million-triplet list of the whole axis. */
	s = repeat("ep ", ",", 1000000, item_whole);
	timed(m1, "1e6 x ep 0:1048575", s, 1048576, 3.0);
	free(s);
	/* 100,000 triplets with 100,000 different strides; the size is
	 * counted here by walking every triplet. */
	{
		char *hit = calloc(1048576, 1);
		int32_t count = 0;

		for (int i = 0; i < 100000; i++)
			for (int64_t e = i % 1000; e < 1048576; e += i + 2)
				hit[e] = 1;
		for (int64_t e = 0; e < 1048576; e++)
			count += hit[e];
		free(hit);
		s = repeat("eps ", ",", 100000, item_stride);
		timed(m1, "1e5 strides", s, count, 3.0);
		free(s);
	}
	/* 100,000 small terms over the big machine. */
	s = repeat("all - ", " - ", 100000, item_ep);
	timed(m1, "all - 1e5 x ep", s, 1048576 - 100000, 3.0);
	free(s);
out:
	topo_machine_free(m1);
	topo_machine_free(m4);
	test_huge();
}

/* The "hosts" selector: nodes by name over a named machine (4 nodes of
 * 1, 3, 1, 2 tasks, 2 endpoints each), and every refusal. */
static void test_hosts(const topo_machine *unnamed)
{
	static const char json[] =
	    "{\"nodes\": 4, \"tasks_per_node\": [1, 3, 1, 2], "
	    "\"endpoints_per_task\": 2, \"hosts\": \"r1n[1-2],r2n[1-2]\", "
	    "\"network\": {\"type\": \"kary\", \"fanout\": 3}}";
	static const int32_t n1[] = {2, 3, 4, 5, 6, 7};
	static const int32_t n1n3[] = {2, 3, 4, 5, 6, 7, 10, 11, 12, 13};
	static const int32_t rack2_row0[] = {8, 10, 12};
	static const int32_t not_r1n2[] = {0, 1, 8, 9, 10, 11, 12, 13};
	static const int32_t plus[] = {0, 1, 13};
	topo_machine *m = NULL;
	topo_error err;

	topo_error_clear(&err);
	CHECK_INT(topo_machine_load_string(&m, json, strlen(json), "n.json",
					   &err),
		  0);
	if (m == NULL)
		return;
	expect_members(m, "hosts r1n2", n1, 6);
	expect_members(m, "host r1n2", n1, 6);
	expect_members(m, "hosts r2n2,r1n2", n1n3, 10);
	expect_members(m, "hosts r1n2,r1n2,r1n[2]", n1, 6);
	expect_members(m, "hosts r2n[1-2] row 0", rack2_row0, 3);
	expect_members(m, "row 0 hosts r2n[1-2]", rack2_row0, 3);
	expect_members(m, "all - hosts r1n2", not_r1n2, 8);
	expect_members(m, "hosts r1n1 + ep 13", plus, 3);
	expect_members(m, "hosts  r1n2\t", n1, 6);

	expect_error(m, "hosts r1n9", 6, "no node is named \"r1n9\"");
	expect_error(m, "hosts r1n[1-3]", 6, "no node is named \"r1n3\"");
	expect_error(m, "hosts r1n1,x", 11, "no node is named \"x\"");
	expect_error(m, "all - hosts r1n[1-", 15, "unmatched \"[\"");
	expect_error(m, "hosts r1n[2-1]", 10,
		     "range 2-1 goes down (want LO-HI with LO <= HI)");
	expect_error(m, "hosts a,,b", 8,
		     "empty item (two commas, or a comma at an end)");
	expect_error(m, "hosts r1n2]", 10, "unmatched \"]\"");
	expect_error(m, "hosts n[x]", 8,
		     "expected a number in brackets (got \"x\")");
	expect_error(m, "hosts", 5,
		     "expected host names after \"hosts\" (a hostlist such as "
		     "dev[0-5,9])");
	expect_error(m, "hosts  ", 7,
		     "expected host names after \"hosts\" (a hostlist such as "
		     "dev[0-5,9])");
	expect_error(m, "hosts r1n1 r1n2", 11,
		     "unknown axis \"r\" (valid: row, col, task, node, ep, hosts, or "
		     "all)");
	expect_error(m, "hosts r1n1 - ", 13, "expected a term after \"-\"");
	expect_error(m, "hosts r1n2 node 0", 0, "selects no endpoints");
	expect_error(unnamed, "cols 0 + hosts a", 9,
		     "the machine names no nodes (no \"hosts\" in its "
		     "description)");
	/* The syntax pass of a machine's groups needs no names. */
	CHECK_INT(topo__spec_syntax(2, 7, 4, 14, "hosts a[1-3],b", &err), 0);
	topo_error_clear(&err);
	CHECK_INT(topo__spec_syntax(2, 7, 4, 14, "hosts a[1-", &err),
		  TOPO_ESPEC);
	CHECK_INT(err.position, 7);
	topo_machine_free(m);
}

int main(int argc, char **argv)
{
	static const int32_t ta[] = {3, 2, 4}, tb[] = {1, 3, 1, 2};
	topo_machine *a, *b;

	check_args(argc, argv);
	check_seed("test_spec", 3003);
	a = machine(3, ta, 2, 2);
	b = machine(4, tb, 1, 1);
	if (a != NULL && b != NULL) {
		CHECK_RUN(examples, test_examples(a));
		CHECK_RUN(hand_members, test_hand_members(a, b));
		CHECK_RUN(hand_errors, test_hand_errors(a));
		CHECK_RUN(bad_arguments, test_bad_arguments(a));
		CHECK_RUN(enomem, test_enomem(a));
		CHECK_RUN(hosts, test_hosts(a));
	}
	topo_machine_free(a);
	topo_machine_free(b);
	CHECK_RUN(random, test_random());
	CHECK_RUN(big, test_big());
	return check_done("test_spec");
}
