/*
 * test_routes.c - route tables in every encoding of collc(5): the exact
 * version 2 texts, the size topo_compiled_write_size() predicts against
 * the bytes written, the rule encoding's complaints, rows that name their
 * own member, and random hand-edits of random tables: loaded from a full
 * table, each must show exactly the rows written, written back in every
 * encoding it must load to the same rows, and a flood over each must
 * replay alike.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "iocheck.h"
#include "topo_internal.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char tiny_machine[] =
    "{\"name\": \"tiny\", \"nodes\": 2, \"tasks_per_node\": 2, "
    "\"network\": {\"type\": \"kary\", \"fanout\": 2}}";

/* The head of collc compile tiny.json -t physical in every version 2
 * encoding; then one of the tails. */
static const char tiny_head[] =
    "{\n"
    "  \"format\": \"collc-routes\",\n"
    "  \"version\": 2,\n"
    "  \"generator\": \"collc " TOPO_VERSION_STRING "\",\n"
    "  \"machine\": {\n"
    "    \"name\": \"tiny\",\n"
    "    \"nodes\": 2,\n"
    "    \"tasks\": 4,\n"
    "    \"endpoints_per_task\": 1,\n"
    "    \"endpoints\": 4,\n"
    "    \"tasks_per_node\": [2, 2],\n"
    "    \"network\": {\n"
    "      \"type\": \"kary\",\n"
    "      \"physical_root\": 0,\n"
    "      \"fanout\": 2,\n"
    "      \"parent\": [-1, 0]\n"
    "    }\n"
    "  },\n"
    "  \"groups\": [\n"
    "    {\n"
    "      \"name\": \"world\",\n"
    "      \"spec\": \"all\",\n"
    "      \"size\": 4,\n"
    "      \"members\": [0, 1, 2, 3],\n"
    "      \"trees\": [\n"
    "        {\n"
    "          \"name\": \"physical\",\n"
    "          \"root\": 0,\n"
    "          \"depth\": 2,\n"
    "          \"edges\": {\"shm\": 2, \"net\": 1},\n"
    "          \"parent\": [-1, 0, 0, 2],\n"
    "          \"edge\": [\"root\", \"shm\", \"net\", \"shm\"],\n";

static const char tail_end[] = "        }\n"
			       "      ]\n"
			       "    }\n"
			       "  ]\n"
			       "}\n";

static const char tail_rule[] =
    "          \"routes\": {\"encoding\": \"rule\", \"rows\": [], "
    "\"missing\": []}\n";

static const char tail_full[] = "          \"routes\": [\n"
				"            [0, -1, [1, 2]],\n"
				"            [0, 1, [2]],\n"
				"            [0, 2, [1]],\n"
				"            [1, -1, [0]],\n"
				"            [1, 0, []],\n"
				"            [2, -1, [0, 3]],\n"
				"            [2, 0, [3]],\n"
				"            [2, 3, [0]],\n"
				"            [3, -1, [2]],\n"
				"            [3, 2, []]\n"
				"          ]\n";

/* head + tail + tail_end, malloc'ed. */
static char *doc(const char *tail)
{
	size_t a = strlen(tiny_head), b = strlen(tail), c = strlen(tail_end);
	char *d = malloc(a + b + c + 1);

	memcpy(d, tiny_head, a);
	memcpy(d + a, tail, b);
	memcpy(d + a + b, tail_end, c + 1);
	return d;
}

static topo_compiled *load(const char *text, const char *what)
{
	topo_compiled *c = NULL;
	topo_error err;
	char buf[1024];

	topo_error_clear(&err);
	if (topo_compiled_load_string(&c, text, strlen(text), what, &err) !=
	    0) {
		CHECK(0, "%s: %s", what,
		      topo_error_format(&err, buf, sizeof(buf)));
		return NULL;
	}
	return c;
}

/* Every flag combination a writer takes. */
static const unsigned all_flags[] = {
    0,
    TOPO_WRITE_FULL_ROUTES,
    TOPO_WRITE_NO_ROUTES,
    TOPO_WRITE_VERSION_1,
    TOPO_WRITE_VERSION_1 | TOPO_WRITE_NO_ROUTES,
    TOPO_WRITE_VERSION_1 | TOPO_WRITE_FULL_ROUTES,
};
#define NFLAGS (sizeof(all_flags) / sizeof(all_flags[0]))

/* The size predicted for each encoding is the size written. */
static void check_sizes(const topo_compiled *c, const char *what)
{
	for (size_t k = 0; k < NFLAGS; k++) {
		uint64_t want = 0;
		size_t len = 0;
		topo_error err;
		char *text;

		topo_error_clear(&err);
		CHECK_INT(topo_compiled_write_size(c, all_flags[k], &want, &err),
			  0);
		text = write_mem_flags(c, all_flags[k], &len);
		CHECK(want == len, "%s: flags 0x%x: size %llu predicted, %zu "
				   "written",
		      what, all_flags[k], (unsigned long long)want, len);
		free(text);
	}
}

/* ---------------------------------------------------------------------- */

/* The version 2 texts of the tiny machine, exactly, and their sizes. */
static void test_v2_texts(void)
{
	const char *shapes[] = {"physical"};
	topo_machine *m = machine(tiny_machine);
	topo_compiled *c = NULL, *back;
	topo_error err;
	char *want, *text, *text2;
	size_t len, len2;

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, shapes, 1, &err), 0);
	text = write_mem_flags(c, 0, &len);
	want = doc(tail_rule);
	CHECK_STR(text, want);
	free(want);
	/* It loads as the rule's table and writes the same bytes again. */
	back = load(text, "rule");
	if (back != NULL) {
		CHECK_INT(topo_routes_departures(topo_compiled_tree(back, 0, 0),
						 -1),
			  0);
		same_routes(topo_compiled_tree(c, 0, 0),
			    topo_compiled_tree(back, 0, 0), "rule");
		text2 = write_mem_flags(back, 0, &len2);
		CHECK_STR(text2, text);
		free(text2);
		text2 = write_mem_flags(back, TOPO_WRITE_FULL_ROUTES, &len2);
		want = doc(tail_full);
		CHECK_STR(text2, want);
		free(want);
		free(text2);
	}
	topo_compiled_free(back);
	free(text);
	text = write_mem_flags(c, TOPO_WRITE_FULL_ROUTES, &len);
	want = doc(tail_full);
	CHECK_STR(text, want);
	free(want);
	free(text);
	check_sizes(c, "tiny");
	/* Arguments. */
	{
		uint64_t size = 7;

		topo_error_clear(&err);
		CHECK_INT(topo_compiled_write_size(NULL, 0, &size, &err),
			  TOPO_EARG);
		CHECK_INT(size, 0);
		CHECK_INT(topo_compiled_write_size(c, 0, NULL, NULL),
			  TOPO_EARG);
		topo_error_clear(&err);
		CHECK_INT(topo_compiled_write_size(c, 0x40, &size, &err),
			  TOPO_EARG);
		CHECK_STR(err.text,
			  "topo_compiled_write_size: unknown flags 0x40 "
			  "(valid: TOPO_WRITE_NO_ROUTES, "
			  "TOPO_WRITE_FULL_ROUTES, TOPO_WRITE_VERSION_1)");
	}
	topo_compiled_free(c);
	topo_machine_free(m);
}

/* Sizes over random machines and every tree shape, the wide members of
 * hierarchical trees included. */
static void test_sizes(void)
{
	static const char *const shapes[] = {"physical", "hierarchical",
					     "binomial", "chain", "kary:3"};

	for (int iter = 0; iter < 40; iter++) {
		char json[256], what[64];
		topo_machine *m;
		topo_compiled *c = NULL;
		topo_error err;
		int nodes = (int)check_rand_range(1, 40);

		snprintf(json, sizeof(json),
			 "{\"nodes\": %d, \"tasks_per_node\": %ld, "
			 "\"endpoints_per_task\": %ld, \"network\": "
			 "{\"type\": \"kary\", \"fanout\": %ld}}",
			 nodes, check_rand_range(1, 9), check_rand_range(1, 3),
			 check_rand_range(1, 4));
		m = machine(json);
		topo_error_clear(&err);
		CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, shapes, 5, &err),
			  0);
		snprintf(what, sizeof(what), "sizes %d", iter);
		if (c != NULL)
			check_sizes(c, what);
		topo_compiled_free(c);
		topo_machine_free(m);
	}
}

/* ---------------------------------------------------------------------- */

static void expect(const char *text, int code, const char *line)
{
	topo_compiled *c = (topo_compiled *)1;
	topo_error err;
	char buf[1024];
	int rc;

	topo_error_clear(&err);
	rc = topo_compiled_load_string(&c, text, strlen(text), "t.json", &err);
	CHECK(rc == code, "rc %d, want %d (%s)", rc, code, line);
	CHECK(c == NULL, "no result on failure");
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)), line);
	topo_compiled_free(c);
}

/* A rule-encoded tail with the given rows and missing pairs. */
static char *rule_doc(const char *rows, const char *missing)
{
	char tail[1024];

	snprintf(tail, sizeof(tail),
		 "          \"routes\": {\"encoding\": \"rule\", \"rows\": "
		 "[%s], \"missing\": [%s]}\n",
		 rows, missing);
	return doc(tail);
}

static void expect_rule(const char *rows, const char *missing, int code,
			const char *line)
{
	char *d = rule_doc(rows, missing);

	expect(d, code, line);
	free(d);
}

static void expect_tail(const char *tail, int code, const char *line)
{
	char *d = doc(tail);

	expect(d, code, line);
	free(d);
}

/* What the rule encoding refuses, each with its exact message; what it
 * accepts. */
static void test_rule_errors(void)
{
	const char *p = "t.json: /groups/0/trees/0/routes";
	char want[512];
	char *d, *v1;
	topo_compiled *c;

#define WANT(...) (snprintf(want, sizeof(want), __VA_ARGS__), want)
	expect_tail("          \"routes\": {\"encoding\": \"rule\", "
		    "\"missng\": [[0, 1]]}\n",
		    TOPO_EINVAL,
		    WANT("%s/missng: unknown key in a rule-encoded table "
			 "(valid: encoding, rows, missing, or x-*)",
			 p));
	expect_tail("          \"routes\": {\"rows\": []}\n", TOPO_EINVAL,
		    WANT("%s: missing \"encoding\" (\"rule\")", p));
	expect_tail("          \"routes\": {\"encoding\": \"full\"}\n",
		    TOPO_EINVAL,
		    WANT("%s/encoding: must be \"rule\" (got \"full\")", p));
	expect_tail("          \"routes\": {\"encoding\": 2}\n", TOPO_EINVAL,
		    WANT("%s/encoding: must be \"rule\" (got 2)", p));
	expect_tail("          \"routes\": 5\n", TOPO_EINVAL,
		    WANT("%s: must be an array of rows [at, from, [to...]] or "
			 "a rule-encoded table (got 5)",
			 p));
	expect_tail("          \"routes\": {\"encoding\": \"rule\", \"rows\": "
		    "{}}\n",
		    TOPO_EINVAL,
		    WANT("%s/rows: must be an array of rows [at, from, "
			 "[to...]] (got an object)",
			 p));
	expect_tail("          \"routes\": {\"encoding\": \"rule\", "
		    "\"missing\": 1}\n",
		    TOPO_EINVAL,
		    WANT("%s/missing: must be an array of pairs [at, from] "
			 "(got 1)",
			 p));
	expect_rule("", "[0]", TOPO_EINVAL,
		    WANT("%s/missing/0: must be a pair [at, from] (got an "
			 "array of another length)",
			 p));
	expect_rule("", "[9, 1]", TOPO_EINVAL,
		    WANT("%s/missing/0/0: endpoint 9 is not a member of group "
			 "\"world\"",
			 p));
	/* Endpoint 3 is no tree neighbour of endpoint 0. */
	expect_rule("", "[0, 3]", TOPO_EINVAL,
		    WANT("%s/missing/0/1: endpoint 0 has no rule row from "
			 "endpoint 3 to be missing (the rule gives rows from "
			 "-1 and the tree neighbours only)",
			 p));
	expect_rule("[0, 1, [2, 2]]", "[0, 1]", TOPO_EINVAL,
		    WANT("%s/missing/0: a second row for endpoint 0 arriving "
			 "from endpoint 1 (the first is "
			 "/groups/0/trees/0/routes/rows/0)",
			 p));
	expect_rule("", "[2, -1], [2, -1]", TOPO_EINVAL,
		    WANT("%s/missing/1: a second origin row for endpoint 2 "
			 "(the first is /groups/0/trees/0/routes/missing/0)",
			 p));
	expect_rule("[3, 0, []], [3, 0, [2]]", "", TOPO_EINVAL,
		    WANT("%s/rows/1: a second row for endpoint 3 arriving from "
			 "endpoint 0 (the first is "
			 "/groups/0/trees/0/routes/rows/0)",
			 p));
	expect_rule("[3, 1, 2]", "", TOPO_EINVAL,
		    WANT("%s/rows/0/2: must be an array of endpoint ids to "
			 "forward to (got 2)",
			 p));
	/* A member never sends to itself: refused, not silently dropped. */
	expect_rule("[2, 2, [0]]", "", TOPO_EINVAL,
		    WANT("%s/rows/0/1: a row for endpoint 2 arriving from "
			 "itself (a member never sends to itself)",
			 p));
	expect_rule("[2, 0, [3, 2]]", "", TOPO_EINVAL,
		    WANT("%s/rows/0/2/1: endpoint 2 forwards to itself (a "
			 "member never sends to itself)",
			 p));
	/* Version 1 has no rule encoding; its full rows are checked alike. */
	d = rule_doc("", "");
	v1 = edit(d, "\"version\": 2", "\"version\": 1");
	expect(v1, TOPO_EINVAL,
	       WANT("%s: must be an array of rows [at, from, [to...]] (got an "
		    "object)",
		    p));
	free(v1);
	free(d);
	d = doc(tail_full);
	v1 = edit(d, "[2, 0, [3]]", "[2, 0, [3, 2]]");
	expect(v1, TOPO_EINVAL,
	       WANT("%s/6/2/1: endpoint 2 forwards to itself (a member never "
		    "sends to itself)",
		    p));
	free(v1);
	v1 = edit(d, "[2, 0, [3]]", "[2, 2, [3]]");
	expect(v1, TOPO_EINVAL,
	       WANT("%s/6/1: a row for endpoint 2 arriving from itself (a "
		    "member never sends to itself)",
		    p));
	free(v1);
	free(d);

	/* Accepted: x- keys, absent rows and missing, a row equal to the
	 * rule's (no departure), and real departures. */
	d = doc("          \"routes\": {\"encoding\": \"rule\", \"x-note\": "
		"1}\n");
	c = load(d, "x-note");
	CHECK(c != NULL && topo_routes_departures(topo_compiled_tree(c, 0, 0),
						  -1) == 0,
	      "x- key and absent rows");
	topo_compiled_free(c);
	free(d);
	d = rule_doc("[2, 0, [3]]", "");
	c = load(d, "rule row");
	CHECK(c != NULL && topo_routes_departures(topo_compiled_tree(c, 0, 0),
						  -1) == 0,
	      "a row equal to the rule's is no departure");
	topo_compiled_free(c);
	free(d);
	d = rule_doc("[2, 0, [3, 0]], [1, 3, [0]]", "[3, 2], [0, -1]");
	c = load(d, "departures");
	if (c != NULL) {
		const topo_tree *t = topo_compiled_tree(c, 0, 0);
		int32_t from, scratch[4], n;
		const int32_t *to;

		CHECK_INT(topo_routes_departures(t, -1), 4);
		CHECK_INT(topo_routes_departures(t, 0), 1);
		CHECK_INT(topo_routes_departures(t, 2), 1);
		CHECK_INT(topo_routes_departures(t, 99), TOPO_EARG);
		CHECK_INT(topo_routes_rows(t, 0), 2); /* origin row gone */
		n = topo_routes_row(t, 0, 0, &from, &to, scratch);
		CHECK(n == 1 && from == 1 && to[0] == 2, "0's first row");
		CHECK_INT(topo_routes_rows(t, 3), 1); /* from 2 gone */
		CHECK_INT(topo_routes_rows(t, 1), 3); /* from 3 added */
		n = topo_routes_row(t, 1, 2, &from, &to, scratch);
		CHECK(n == 1 && from == 3 && to[0] == 0, "1's added row");
		n = topo_routes_row(t, 2, 1, &from, &to, scratch);
		CHECK(n == 2 && from == 0 && to[0] == 3 && to[1] == 0,
		      "2's replaced row, targets as written");
		CHECK_INT(topo_routes_row(t, 1, 3, &from, &to, scratch),
			  TOPO_EARG);
		/* Written back, rows by member then origin. */
		{
			size_t len;
			char *text = write_mem_flags(c, 0, &len);

			CHECK(strstr(text,
				     "          \"routes\": {\n"
				     "            \"encoding\": \"rule\",\n"
				     "            \"rows\": [\n"
				     "              [1, 3, [0]],\n"
				     "              [2, 0, [3, 0]]\n"
				     "            ],\n"
				     "            \"missing\": [\n"
				     "              [0, -1],\n"
				     "              [3, 2]\n"
				     "            ]\n"
				     "          }\n") != NULL,
			      "rule encoding with departures:\n%s", text);
			free(text);
			check_sizes(c, "departures");
		}
	}
	topo_compiled_free(c);
	free(d);
#undef WANT
}

/* ---------------------------------------------------------------------- */
/* Random hand-edits */

/* A random subset of the group's endpoints other than at, in random order,
 * perhaps with a duplicate: a faulty target list. */
static json_t *random_targets(const int32_t *mem, int32_t n, int32_t at)
{
	json_t *a = json_array();
	int32_t k = (int32_t)check_rand_range(0, n < 4 ? n : 4);

	for (int32_t i = 0; i < k; i++) {
		int32_t e = mem[check_rand_range(0, n - 1)];

		if (e != at)
			json_array_append_new(a, json_integer(e));
	}
	if (json_array_size(a) > 0 && check_rand_range(0, 3) == 0)
		json_array_append(a, json_array_get(a, 0));
	return a;
}

/* Applies 1..6 random edits to rows (endpoint ids): replace a row's
 * targets, drop a row, add a row from a member that has none from there,
 * or shuffle a row's targets. */
static void random_edits(json_t *rows, const int32_t *mem, int32_t n)
{
	int edits = (int)check_rand_range(1, 6);

	for (int e = 0; e < edits; e++) {
		size_t nr = json_array_size(rows);
		json_t *row;
		int32_t at, from;

		switch (check_rand_range(0, 3)) {
		case 0: /* replace */
			if (nr == 0)
				break;
			row = json_array_get(rows, (size_t)check_rand_range(
						       0, (long)nr - 1));
			at = (int32_t)json_integer_value(json_array_get(row, 0));
			json_array_set_new(row, 2, random_targets(mem, n, at));
			break;
		case 1: /* drop */
			if (nr == 0)
				break;
			json_array_remove(rows, (size_t)check_rand_range(
						    0, (long)nr - 1));
			break;
		case 2: { /* add, from an origin the member has no row for */
			int dup = 0;

			at = mem[check_rand_range(0, n - 1)];
			from = check_rand_range(0, 4) == 0
				   ? -1
				   : mem[check_rand_range(0, n - 1)];
			if (from == at)
				break;
			for (size_t i = 0; i < nr && !dup; i++) {
				row = json_array_get(rows, i);
				dup = json_integer_value(json_array_get(
					  row, 0)) == at &&
				      json_integer_value(json_array_get(
					  row, 1)) == from;
			}
			if (dup)
				break;
			row = json_pack("[iio]", (int)at, (int)from,
					random_targets(mem, n, at));
			json_array_append_new(rows, row);
			break;
		}
		default: { /* shuffle */
			json_t *to;
			size_t k;

			if (nr == 0)
				break;
			row = json_array_get(rows, (size_t)check_rand_range(
						       0, (long)nr - 1));
			to = json_array_get(row, 2);
			k = json_array_size(to);
			for (size_t i = k; i > 1; i--) {
				size_t j = (size_t)check_rand_range(0,
								    (long)i - 1);
				json_t *x = json_incref(json_array_get(to, i - 1));

				json_array_set(to, i - 1, json_array_get(to, j));
				json_array_set_new(to, j, x);
			}
			break;
		}
		}
	}
}

/* The loaded tree t has exactly the rows of the JSON array rows (endpoint
 * ids), no more; departures count those that differ from the rule and
 * the rule rows absent. */
static void same_as_written(const topo_tree *t, const json_t *rows,
			    const char *what)
{
	const topo_group *g = topo_tree_group(t);
	const int32_t *mem = topo_group_members(g);
	int32_t n = topo_group_size(g);
	int32_t *scratch = malloc(sizeof(int32_t) * ((size_t)n + 1));
	int32_t *rule = malloc(sizeof(int32_t) * ((size_t)n + 1));
	int64_t want_dep = 0, rows_seen = 0, total_rows = 0;
	long bad = 0;

	for (size_t i = 0; i < json_array_size(rows); i++) {
		const json_t *row = json_array_get(rows, i);
		int32_t at = topo_group_rank(
		    g, (int32_t)json_integer_value(json_array_get(row, 0)));
		int32_t fe = (int32_t)json_integer_value(json_array_get(row, 1));
		int32_t from = fe < 0 ? -1 : topo_group_rank(g, fe);
		const json_t *tl = json_array_get(row, 2);
		int32_t got_from, k, found = 0;
		const int32_t *to;

		for (int32_t j = 0; j < topo_routes_rows(t, at) && !found;
		     j++) {
			k = topo_routes_row(t, at, j, &got_from, &to, scratch);
			if (got_from != from)
				continue;
			found = 1;
			if ((size_t)k != json_array_size(tl)) {
				bad++;
				continue;
			}
			for (int32_t x = 0; x < k; x++)
				if (mem[to[x]] !=
				    json_integer_value(json_array_get(tl, x)))
					bad++;
		}
		if (!found)
			bad++;
		rows_seen++;
		/* A departure unless it is the rule's own row. */
		k = topo_tree_route(t, at, from, rule);
		if (k < 0 || (size_t)k != json_array_size(tl))
			want_dep++;
		else
			for (int32_t x = 0; x < k; x++)
				if (mem[rule[x]] !=
				    json_integer_value(json_array_get(tl, x))) {
					want_dep++;
					break;
				}
	}
	for (int32_t r = 0; r < n; r++)
		total_rows += topo_routes_rows(t, r);
	/* Rule rows the table lacks: the rule's count less the rule origins
	 * among the rows. */
	{
		int64_t rule_rows = 0, rule_origins = 0;

		for (int32_t r = 0; r < n; r++)
			rule_rows += 1 + topo_tree_degree(t, r);
		for (size_t i = 0; i < json_array_size(rows); i++) {
			const json_t *row = json_array_get(rows, i);
			int32_t at = topo_group_rank(
			    g, (int32_t)json_integer_value(
				   json_array_get(row, 0)));
			int32_t fe = (int32_t)json_integer_value(
			    json_array_get(row, 1));
			int32_t from = fe < 0 ? -1 : topo_group_rank(g, fe);

			rule_origins += topo__routes_is_rule_origin(t, at, from);
		}
		want_dep += rule_rows - rule_origins;
	}
	CHECK(bad == 0, "%s: %ld rows not as written", what, bad);
	CHECK(total_rows == rows_seen, "%s: %lld rows loaded, %lld written",
	      what, (long long)total_rows, (long long)rows_seen);
	CHECK(topo_routes_departures(t, -1) == want_dep,
	      "%s: %lld departures, want %lld", what,
	      (long long)topo_routes_departures(t, -1), (long long)want_dep);
	free(scratch);
	free(rule);
}

/* A flood over t from root: messages planned, whether it verifies, and
 * the endpoints with errors and their kinds, as one comparable text. */
static char *replay(const topo_tree *t, int32_t root)
{
	struct topo_plan_params pp;
	struct topo_run_params rp;
	topo_plan *p = NULL;
	topo_report *r = NULL;
	topo_error err;
	char *out = malloc(8192);
	size_t len = 0;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
	topo_run_params_init(&rp, sizeof(rp));
	pp.root = root;
	pp.bytes = 16;
	rp.threads = 1;
	rp.timeout = 10;
	topo_error_clear(&err);
	if (topo_plan_new(&p, t, &pp, &err) != 0 ||
	    topo_plan_run(p, &rp, &r, &err) != 0) {
		snprintf(out, 8192, "error %s", err.text);
		goto done;
	}
	len += (size_t)snprintf(out + len, 8192 - len, "%lld %d %lld:",
				(long long)topo_plan_messages(p),
				topo_report_verified(r),
				(long long)topo_report_error_total(r));
	for (size_t i = 0; i < topo_report_error_count(r) && len < 8000; i++) {
		const char *kind, *detail;
		int32_t ep = topo_report_error(r, i, &kind, &detail);

		len += (size_t)snprintf(out + len, 8192 - len, " %d %s",
					(int)ep, kind);
	}
done:
	topo_report_free(r);
	topo_plan_free(p);
	return out;
}

static void test_random_edits(void)
{
	static const char *const shapes[] = {"physical", "hierarchical",
					     "binomial", "kary:2"};
	int faulty_replays = 0;

	for (int iter = 0; iter < 150; iter++) {
		char json[256], what[96];
		topo_machine *m;
		topo_compiled *c = NULL, *loaded = NULL;
		topo_error err;
		json_t *root;
		char *text, *edited;
		size_t len;

		snprintf(json, sizeof(json),
			 "{\"nodes\": %ld, \"tasks_per_node\": %ld, "
			 "\"network\": {\"type\": \"kary\", \"fanout\": 2}}",
			 check_rand_range(1, 6), check_rand_range(1, 4));
		m = machine(json);
		topo_error_clear(&err);
		CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, shapes, 4, &err),
			  0);
		if (c == NULL) {
			topo_machine_free(m);
			continue;
		}
		text = write_mem_flags(c, TOPO_WRITE_FULL_ROUTES, &len);
		root = json_loadb(text, len, 0, NULL);
		free(text);
		for (size_t j = 0; j < 4; j++) {
			const topo_group *g = topo_compiled_group(c, 0);
			json_t *tj = json_array_get(
			    json_object_get(
				json_array_get(json_object_get(root, "groups"),
					       0),
				"trees"),
			    j);

			if (check_rand_range(0, 3) != 0)
				random_edits(json_object_get(tj, "routes"),
					     topo_group_members(g),
					     topo_group_size(g));
		}
		edited = json_dumps(root, JSON_INDENT(1));
		snprintf(what, sizeof(what), "edits %d", iter);
		loaded = load(edited, what);
		if (loaded == NULL) {
			fprintf(stderr, "%s\n", edited);
			goto next;
		}
		for (size_t j = 0; j < 4; j++)
			same_as_written(
			    topo_compiled_tree(loaded, 0, j),
			    json_object_get(
				json_array_get(
				    json_object_get(
					json_array_get(json_object_get(root,
								       "groups"),
						       0),
					"trees"),
				    j),
				"routes"),
			    what);
		check_sizes(loaded, what);
		/* Every encoding that keeps the table gives it back. */
		for (size_t k = 0; k < NFLAGS; k++) {
			topo_compiled *back;
			char *t2;

			if (all_flags[k] & TOPO_WRITE_NO_ROUTES)
				continue;
			t2 = write_mem_flags(loaded, all_flags[k], &len);
			back = load(t2, what);
			if (back != NULL) {
				for (size_t j = 0; j < 4; j++) {
					const topo_tree *a =
					    topo_compiled_tree(loaded, 0, j);
					const topo_tree *b =
					    topo_compiled_tree(back, 0, j);
					int32_t n = topo_group_size(
					    topo_tree_group(a));
					int32_t root_rank =
					    (int32_t)check_rand_range(0, n - 1);
					int32_t ep = topo_group_members(
					    topo_tree_group(a))[root_rank];
					char *ra, *rb;

					same_routes(a, b, what);
					CHECK(topo_routes_departures(a, -1) ==
						  topo_routes_departures(b, -1),
					      "%s: departures differ", what);
					/* Replayed alike, faults and all. */
					ra = replay(a, ep);
					rb = replay(b, ep);
					CHECK(strcmp(ra, rb) == 0,
					      "%s: flags 0x%x: replays "
					      "differ:\n  %s\n  %s",
					      what, all_flags[k], ra, rb);
					faulty_replays += strstr(ra, " 0 ") !=
							  NULL;
					free(ra);
					free(rb);
				}
			}
			topo_compiled_free(back);
			free(t2);
		}
	next:
		topo_compiled_free(loaded);
		free(edited);
		json_decref(root);
		topo_compiled_free(c);
		topo_machine_free(m);
	}
	/* The edits must reach the replays, or the comparison says little. */
	CHECK(faulty_replays >= 50, "only %d replays of edited tables failed",
	      faulty_replays);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_routes", 20261123);
	CHECK_RUN(v2_texts, test_v2_texts());
	CHECK_RUN(sizes, test_sizes());
	CHECK_RUN(rule_errors, test_rule_errors());
	CHECK_RUN(random_edits, test_random_edits());
	return check_done("test_routes");
}
