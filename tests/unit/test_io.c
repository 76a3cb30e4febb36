/*
 * test_io.c - the compile output: writing it (exact text), loading it back
 * (round trips over random machines, every member, parent, edge and route
 * row compared), the loader's complaints about broken documents (each
 * with its exact message), hand-edited route tables, write errors, and
 * the Graphviz output.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "iocheck.h"
#include "topo_internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char tiny_machine[] =
    "{\"name\": \"tiny\", \"nodes\": 2, \"tasks_per_node\": 2, "
    "\"network\": {\"type\": \"kary\", \"fanout\": 2}}";

/* collc compile tiny.json -t physical, byte for byte. */
static const char tiny_doc[] =
    "{\n"
    "  \"format\": \"collc-routes\",\n"
    "  \"version\": 1,\n"
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
    "          \"edge\": [\"root\", \"shm\", \"net\", \"shm\"],\n"
    "          \"routes\": [\n"
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
    "          ]\n"
    "        }\n"
    "      ]\n"
    "    }\n"
    "  ]\n"
    "}\n";

/* ---------------------------------------------------------------------- */
/* Helpers */

/* Version 1 without tables: the full version 1 text less its "routes". */
#define NO_ROUTES_V1 (TOPO_WRITE_NO_ROUTES | TOPO_WRITE_VERSION_1)

/* Version 1 with every row spelled out: the format the byte-for-byte
 * texts below were written in, and still written on request. */
static char *write_mem(const topo_compiled *c, size_t *len)
{
	return write_mem_flags(c, TOPO_WRITE_VERSION_1, len);
}

static char *dot_mem(const topo_tree *t)
{
	char *text = NULL;
	size_t size = 0;
	topo_error err;
	FILE *f = open_memstream(&text, &size);

	topo_error_clear(&err);
	CHECK_INT(topo_tree_write_dot(t, f, &err), 0);
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

/* Everything a and b hold, compared. */
static void same_compiled(const topo_compiled *a, const topo_compiled *b,
			  const char *what)
{
	const topo_machine *ma = topo_compiled_machine(a);
	const topo_machine *mb = topo_compiled_machine(b);
	int32_t nodes = topo_machine_nodes(ma);
	const int32_t *da, *db;
	int nda, ndb;

	CHECK_STR(topo_machine_name(mb), topo_machine_name(ma));
	CHECK_INT(topo_machine_nodes(mb), nodes);
	CHECK_INT(topo_machine_tasks(mb), topo_machine_tasks(ma));
	CHECK_INT(topo_machine_endpoints_per_task(mb),
		  topo_machine_endpoints_per_task(ma));
	CHECK_INT(topo_machine_endpoints(mb), topo_machine_endpoints(ma));
	CHECK_STR(topo_machine_network_type(mb), topo_machine_network_type(ma));
	CHECK_INT(topo_machine_physical_root(mb),
		  topo_machine_physical_root(ma));
	CHECK_INT(topo_machine_network_fanout(mb),
		  topo_machine_network_fanout(ma));
	nda = topo_machine_torus_dims(ma, &da);
	ndb = topo_machine_torus_dims(mb, &db);
	CHECK_INT(ndb, nda);
	CHECK(nda == ndb &&
		  (nda == 0 ||
		   memcmp(da, db, sizeof(int32_t) * (size_t)nda) == 0),
	      "%s: dims differ", what);
	CHECK(memcmp(topo_machine_network_parent(ma),
		     topo_machine_network_parent(mb),
		     sizeof(int32_t) * (size_t)nodes) == 0,
	      "%s: network parents differ", what);
	for (int32_t n = 0; n < nodes; n++)
		if (topo_machine_node_tasks(ma, n) !=
		    topo_machine_node_tasks(mb, n))
			CHECK(0, "%s: node %d tasks differ", what, (int)n);

	CHECK_INT(topo_compiled_group_count(b), topo_compiled_group_count(a));
	for (size_t i = 0; i < topo_compiled_group_count(a) &&
			   i < topo_compiled_group_count(b);
	     i++) {
		const topo_group *ga = topo_compiled_group(a, i);
		const topo_group *gb = topo_compiled_group(b, i);
		int32_t n = topo_group_size(ga);

		CHECK_STR(topo_group_name(gb), topo_group_name(ga));
		CHECK_STR(topo_group_spec(gb), topo_group_spec(ga));
		CHECK_INT(topo_group_size(gb), n);
		if (topo_group_size(gb) != n)
			continue;
		CHECK(memcmp(topo_group_members(ga), topo_group_members(gb),
			     sizeof(int32_t) * (size_t)n) == 0,
		      "%s: members of %s differ", what, topo_group_name(ga));
		CHECK_INT(topo_compiled_tree_count(b, i),
			  topo_compiled_tree_count(a, i));
		for (size_t j = 0; j < topo_compiled_tree_count(a, i) &&
				   j < topo_compiled_tree_count(b, i);
		     j++) {
			const topo_tree *ta = topo_compiled_tree(a, i, j);
			const topo_tree *tb = topo_compiled_tree(b, i, j);
			int64_t sa, na, sb, nb;
			long bad = 0;

			CHECK_STR(topo_tree_name(tb), topo_tree_name(ta));
			CHECK_INT(topo_tree_root(tb), topo_tree_root(ta));
			CHECK_INT(topo_tree_depth(tb), topo_tree_depth(ta));
			topo_tree_edge_counts(ta, &sa, &na);
			topo_tree_edge_counts(tb, &sb, &nb);
			CHECK_INT(sb, sa);
			CHECK_INT(nb, na);
			for (int32_t r = 0; r < n; r++)
				if (topo_tree_parent(ta)[r] !=
					topo_tree_parent(tb)[r] ||
				    topo_tree_edge(ta, r) !=
					topo_tree_edge(tb, r))
					bad++;
			CHECK(bad == 0,
			      "%s: %s/%s: %ld parents or edges "
			      "differ",
			      what, topo_group_name(ga), topo_tree_name(ta),
			      bad);
			same_routes(ta, tb, what);
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Writing */

static void test_tiny_text(void)
{
	const char *shapes[] = {"physical"};
	topo_machine *m = machine(tiny_machine);
	topo_compiled *c = NULL;
	topo_error err;
	size_t len;
	char *text;

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, shapes, 1, &err), 0);
	text = write_mem(c, &len);
	CHECK_STR(text, tiny_doc);
	CHECK_INT(len, strlen(tiny_doc));
	free(text);
	topo_compiled_free(c);
	topo_machine_free(m);
}

/* The torus section carries dims, a tree network neither fanout nor
 * dims; uneven tasks, several endpoints per task. */
static void test_network_sections(void)
{
	topo_machine *m =
	    machine("{\"name\": \"t\", \"nodes\": 4, \"tasks_per_node\": 1, "
		    "\"network\": {\"type\": \"torus\", \"dims\": [2, 2], "
		    "\"physical_root\": 3}}");
	topo_machine *m2 = machine(
	    "{\"name\": \"u\", \"nodes\": 3, \"tasks_per_node\": [1, 3, 2], "
	    "\"endpoints_per_task\": 2, \"network\": {\"type\": \"tree\", "
	    "\"parent\": [1, -1, 1]}}");
	const char *shapes[] = {"chain"};
	topo_compiled *c = NULL;
	topo_error err;
	size_t len;
	char *text;

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, shapes, 1, &err), 0);
	text = write_mem(c, &len);
	CHECK(strstr(text,
		     "    \"network\": {\n      \"type\": \"torus\",\n"
		     "      \"physical_root\": 3,\n      \"dims\": "
		     "[2, 2],\n      \"parent\": [1, 3, 3, -1]\n    }\n") !=
		  NULL,
	      "torus section:\n%s", text);
	CHECK(strstr(text, "fanout") == NULL, "no fanout for a torus");
	free(text);
	topo_compiled_free(c);

	CHECK_INT(topo_compile(&c, m2, NULL, NULL, 0, shapes, 1, &err), 0);
	text = write_mem(c, &len);
	CHECK(strstr(text, "    \"tasks\": 6,\n    \"endpoints_per_task\": 2,\n"
			   "    \"endpoints\": 12,\n    \"tasks_per_node\": "
			   "[1, 3, 2],\n    \"network\": {\n      \"type\": "
			   "\"tree\",\n      \"physical_root\": 1,\n      "
			   "\"parent\": [1, -1, 1]\n    }\n") != NULL,
	      "tree section:\n%s", text);
	/* A chain: rank r's rows are from -1, r-1, r+1. */
	CHECK(strstr(text, "            [5, -1, [4, 6]],\n"
			   "            [5, 4, [6]],\n"
			   "            [5, 6, [4]],\n") != NULL,
	      "chain rows");
	CHECK(strstr(text, "            [11, -1, [10]],\n"
			   "            [11, 10, []]\n          ]\n") != NULL,
	      "last row without a comma");
	free(text);
	topo_compiled_free(c);
	topo_machine_free(m);
	topo_machine_free(m2);
}

/* Names and specs with quotes, backslashes, control characters, UTF-8 and
 * bytes that are not UTF-8 come back as written (the last as U+FFFD). */
static void test_escaping(void)
{
	topo_machine *m = machine(tiny_machine);
	const char *names[] = {
	    "q\"b\\s/c\x01\t\n\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80",
	    "bad\xff\xc3(end\xed\xa0\x80\xc0\xaf"};
	const char *specs[] = {"node 1", "row 0"};
	const char *shapes[] = {"binomial"};
	topo_compiled *c = NULL, *back = NULL;
	topo_error err;
	char buf[512];
	size_t len;
	char *text;

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, m, names, specs, 2, shapes, 1, &err), 0);
	text = write_mem(c, &len);
	CHECK(strstr(text, "\"name\": \"q\\\"b\\\\s/c\\u0001\\t\\n"
			   "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\",") != NULL,
	      "escaped name");
	CHECK(strstr(text, "\"name\": \"bad\\ufffd\\ufffd(end\\ufffd\\ufffd"
			   "\\ufffd\\ufffd\\ufffd\",") != NULL,
	      "invalid UTF-8 replaced");
	CHECK_INT(topo_compiled_load_string(&back, text, len, "esc.json", &err),
		  0);
	if (back != NULL) {
		CHECK_STR(topo_group_name(topo_compiled_group(back, 1)),
			  names[0]);
		CHECK_STR(topo_group_name(topo_compiled_group(back, 2)),
			  "bad\xef\xbf\xbd\xef\xbf\xbd(end\xef\xbf\xbd"
			  "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
	} else {
		fprintf(stderr, "%s\n",
			topo_error_format(&err, buf, sizeof(buf)));
	}
	free(text);
	topo_compiled_free(back);
	topo_compiled_free(c);
	topo_machine_free(m);
}

static void test_write_errors(void)
{
	struct stat st;
	topo_machine *m = machine(tiny_machine);
	topo_compiled *c = NULL;
	topo_error err;
	FILE *f;
	int rc;

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, NULL, 0, &err), 0);
	/* Something that renames a file over /dev/full (an "atomic" -o)
	 * would make every write below succeed: say so plainly. */
	CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode),
	      "/dev/full is not the full device any more");
	f = fopen("/dev/full", "w");
	CHECK(f != NULL, "cannot open /dev/full");
	if (f != NULL) {
		rc = topo_compiled_write(c, f, 0, &err);
		CHECK_INT(rc, TOPO_EIO);
		CHECK_INT(err.code, TOPO_EIO);
		CHECK_STR(err.text, "No space left on device");
		fclose(f);

		/* Larger than the writer's buffer: fails in the middle. */
		f = fopen("/dev/full", "w");
		topo_error_clear(&err);
		{
			topo_machine *big = NULL;
			topo_compiled *bc = NULL;

			big = machine("{\"name\": \"big\", \"nodes\": 64, "
				      "\"tasks_per_node\": 64, \"network\": "
				      "{\"type\": \"kary\", \"fanout\": 4}}");
			CHECK_INT(topo_compile(&bc, big, NULL, NULL, 0, NULL, 0,
					       &err),
				  0);
			CHECK_INT(topo_compiled_write(bc, f, 0, &err),
				  TOPO_EIO);
			CHECK_STR(err.text, "No space left on device");
			topo_compiled_free(bc);
			topo_machine_free(big);
		}
		fclose(f);

		f = fopen("/dev/full", "w");
		topo_error_clear(&err);
		CHECK_INT(
		    topo_tree_write_dot(topo_compiled_tree(c, 0, 0), f, &err),
		    TOPO_EIO);
		CHECK_STR(err.text, "No space left on device");
		fclose(f);
	}
	/* A stream opened for reading only. */
	f = tmpfile();
	if (f != NULL) {
		FILE *r = fdopen(dup(fileno(f)), "r");

		topo_error_clear(&err);
		CHECK_INT(topo_compiled_write(c, r, 0, &err), TOPO_EIO);
		CHECK_INT(err.code, TOPO_EIO);
		fclose(r);
		fclose(f);
	}
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_write(NULL, stdout, 0, &err), TOPO_EARG);
	topo_compiled_free(c);
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* Round trips */

/* text less every tree's "routes" member, cut the way the writer leaves
 * it out: what TOPO_WRITE_NO_ROUTES must give byte for byte.  A tree
 * object closes with a newline, 8 spaces and '}', which no route row
 * line (12 spaces) and no escaped string can hold. */
static char *strip_routes(const char *text, size_t *len)
{
	static const char key[] = ",\n          \"routes\": [";
	size_t n = 0, tlen = strlen(text);
	char *out = malloc(tlen + 1);
	const char *p = text, *k, *e;

	while ((k = strstr(p, key)) != NULL &&
	       (e = strstr(k, "\n        }")) != NULL) {
		memcpy(out + n, p, (size_t)(k - p));
		n += (size_t)(k - p);
		p = e;
	}
	memcpy(out + n, p, strlen(p) + 1);
	n += strlen(p);
	*len = n;
	return out;
}

/* Trees of c whose route table departs from the rule. */
static long explicit_tables(const topo_compiled *c)
{
	long n = 0;

	for (size_t i = 0; i < topo_compiled_group_count(c); i++)
		for (size_t j = 0; j < topo_compiled_tree_count(c, i); j++)
			n += topo_routes_departures(topo_compiled_tree(c, i, j),
						    -1) != 0;
	return n;
}

static long tree_count(const topo_compiled *c)
{
	long n = 0;

	for (size_t i = 0; i < topo_compiled_group_count(c); i++)
		n += (long)topo_compiled_tree_count(c, i);
	return n;
}

/*
 * Without route tables: the output is the full one less its "routes"
 * members; it loads back with derived tables (no departures) equal row for
 * row to the compiled trees'; written again in full it is the full output
 * of the original, byte for byte.
 */
static void round_trip_no_routes(const topo_compiled *c, const char *full,
				 size_t full_len, const char *what)
{
	topo_compiled *back = NULL;
	topo_error err;
	char buf[1024];
	size_t len, want_len, len2;
	char *text = write_mem_flags(c, NO_ROUTES_V1, &len);
	char *want = strip_routes(full, &want_len);
	char *text2;

	CHECK(text != NULL && len == want_len && memcmp(text, want, len) == 0,
	      "%s: without routes, not the full output less its routes", what);
	CHECK(text != NULL && strstr(text, "\"routes\"") == NULL,
	      "%s: a \"routes\" key is left", what);
	CHECK(len < full_len, "%s: %zu bytes, not fewer than %zu", what, len,
	      full_len);
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_string(&back, text, len, what, &err), 0);
	if (back == NULL) {
		fprintf(stderr, "%s: %s\n", what,
			topo_error_format(&err, buf, sizeof(buf)));
	} else {
		CHECK(explicit_tables(back) == 0,
		      "%s: %ld loaded tables not derived", what,
		      explicit_tables(back));
		same_compiled(c, back, what);
		text2 = write_mem(back, &len2);
		CHECK(len2 == full_len && memcmp(full, text2, len2) == 0,
		      "%s: derived tables written in full differ", what);
		free(text2);
		text2 = write_mem_flags(back, NO_ROUTES_V1, &len2);
		CHECK(len2 == len && memcmp(text, text2, len2) == 0,
		      "%s: second write without routes differs", what);
		free(text2);
	}
	topo_compiled_free(back);
	free(want);
	free(text);
}

static void round_trip(const topo_machine *m, const char *const *names,
		       const char *const *specs, size_t nextra,
		       const char *const *shapes, size_t nshapes,
		       const char *what)
{
	topo_compiled *c = NULL, *back = NULL;
	topo_error err;
	char buf[1024];
	size_t len, len2;
	char *text, *text2;

	topo_error_clear(&err);
	CHECK_INT(
	    topo_compile(&c, m, names, specs, nextra, shapes, nshapes, &err),
	    0);
	if (c == NULL) {
		fprintf(stderr, "%s: %s\n", what,
			topo_error_format(&err, buf, sizeof(buf)));
		return;
	}
	text = write_mem(c, &len);
	CHECK_INT(topo_compiled_load_string(&back, text, len, what, &err), 0);
	if (back == NULL) {
		fprintf(stderr, "%s: %s\n", what,
			topo_error_format(&err, buf, sizeof(buf)));
	} else {
		/* A table that follows the rule keeps nothing but the
		 * rule. */
		CHECK(explicit_tables(back) == 0,
		      "%s: %ld of %ld loaded tables depart from the rule",
		      what, explicit_tables(back), tree_count(back));
		same_compiled(c, back, what);
		text2 = write_mem(back, &len2);
		CHECK(len2 == len && memcmp(text, text2, len) == 0,
		      "%s: second write differs", what);
		free(text2);
	}
	round_trip_no_routes(c, text, len, what);
	free(text);
	topo_compiled_free(back);
	topo_compiled_free(c);
}

static void test_round_trips(void)
{
	static const char *const all_shapes[] = {"physical", "hierarchical",
						 "binomial", "chain",
						 "kary:3",   "kary:1"};
	static const char *const names[] = {"evens", "row1", "mixed"};
	static const char *const specs[] = {"cols 0::2", "row 1",
					    "node 0 + ep 5:9"};
	char json[512];
	int with_extras = 0;

	for (int iter = 0; iter < 60; iter++) {
		int nodes = (int)check_rand_range(1, 7);
		int eps = (int)check_rand_range(1, 3);
		int type = (int)check_rand_range(0, 2);
		int len = 0;
		char what[64];
		topo_machine *m;

		len += snprintf(json + len, sizeof(json) - (size_t)len,
				"{\"name\": \"r%d\", \"nodes\": %d, "
				"\"endpoints_per_task\": %d, "
				"\"tasks_per_node\": [",
				iter, nodes, eps);
		for (int n = 0; n < nodes; n++)
			len += snprintf(json + len, sizeof(json) - (size_t)len,
					"%s%ld", n ? ", " : "",
					check_rand_range(1, 5));
		if (type == 0) {
			len += snprintf(json + len, sizeof(json) - (size_t)len,
					"], \"network\": {\"type\": \"kary\", "
					"\"fanout\": %ld, \"physical_root\": "
					"%ld}}",
					check_rand_range(1, 3),
					check_rand_range(0, nodes - 1));
		} else if (type == 1) {
			/* A random tree: each node below an earlier one,
			 * then a random relabelling is not needed: the
			 * loader must accept any tree. */
			len += snprintf(json + len, sizeof(json) - (size_t)len,
					"], \"network\": {\"type\": \"tree\", "
					"\"parent\": [-1");
			for (int n = 1; n < nodes; n++)
				len += snprintf(
				    json + len, sizeof(json) - (size_t)len,
				    ", %ld", check_rand_range(0, n - 1));
			len += snprintf(json + len, sizeof(json) - (size_t)len,
					"]}}");
		} else {
			len += snprintf(json + len, sizeof(json) - (size_t)len,
					"], \"network\": {\"type\": \"torus\", "
					"\"dims\": [1, %d], \"physical_root\": "
					"%ld}}",
					nodes, check_rand_range(0, nodes - 1));
		}
		m = machine(json);
		snprintf(what, sizeof(what), "round trip %d", iter);
		/* Extra groups only where their specs fit the machine. */
		if (topo_machine_tasks(m) >= 1 && eps >= 2 &&
		    topo_machine_endpoints(m) >= 10) {
			round_trip(m, names, specs, 3, all_shapes, 6, what);
			with_extras++;
		} else {
			round_trip(m, NULL, NULL, 0, all_shapes, 6, what);
		}
		topo_machine_free(m);
	}
	CHECK(with_extras >= 5, "only %d round trips had extra groups",
	      with_extras);
}

/* A hierarchical tree with many children on one member: the writer's
 * derived-row path must agree with topo_routes_row() there too. */
static void test_wide_round_trip(void)
{
	static const char *const shapes[] = {"hierarchical", "kary:200",
					     "physical"};
	topo_machine *m = machine(
	    "{\"name\": \"wide\", \"nodes\": 300, \"tasks_per_node\": 3, "
	    "\"network\": {\"type\": \"torus\", \"dims\": [10, 30]}}");

	round_trip(m, NULL, NULL, 0, shapes, 3, "wide");
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* Loading: broken documents */

static void expect_error(const char *doc, const char *from, const char *to,
			 int code, const char *line)
{
	topo_compiled *c = (topo_compiled *)1;
	char *text = edit(doc, from, to);
	topo_error err;
	char buf[1024];
	int rc;

	topo_error_clear(&err);
	rc = topo_compiled_load_string(&c, text, strlen(text), "tiny.json",
				       &err);
	CHECK(rc == code, "%s -> %s: rc %d, want %d", from, to, rc, code);
	CHECK_INT(err.code, code);
	CHECK(c == NULL, "no result on failure");
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)), line);
	topo_compiled_free(c);
	free(text);
}

static void test_broken(void)
{
	const char *d = tiny_doc;

	/* The document itself */
	expect_error(d, "\"collc-routes\"", "\"collc-machine\"", TOPO_EINVAL,
		     "tiny.json: /format: must be \"collc-routes\" (got "
		     "\"collc-machine\")");
	expect_error(d, "\"format\": \"collc-routes\"", "\"format\": 7",
		     TOPO_EINVAL,
		     "tiny.json: /format: must be \"collc-routes\" (got 7)");
	expect_error(d, "\"format\"", "\"formats\"", TOPO_EINVAL,
		     "tiny.json: missing \"format\" (\"collc-routes\")");
	expect_error(d, "\"version\": 1", "\"version\": 3", TOPO_EINVAL,
		     "tiny.json: /version: version 3 is not supported "
		     "(supported: 1 to 2)");
	expect_error(d, "\"version\": 1", "\"version\": 0", TOPO_EINVAL,
		     "tiny.json: /version: version 0 is not supported "
		     "(supported: 1 to 2)");
	expect_error(d, "\"version\": 1", "\"version\": \"1\"", TOPO_EINVAL,
		     "tiny.json: /version: must be an integer (got \"1\"; "
		     "supported: 1 to 2)");
	expect_error(d, d, "[1, 2]", TOPO_EINVAL,
		     "tiny.json: must be a collc-routes document, a JSON "
		     "object (got an array)");
	expect_error(d, "\"version\": 1,", "\"version\": 1", TOPO_ESYNTAX,
		     "tiny.json:4:3: '}' expected near '\"generator\"'");
	expect_error(d, "\"generator\": \"collc " TOPO_VERSION_STRING "\",",
		     "\"generator\": \"collc " TOPO_VERSION_STRING "\", \"version\": 1,",
		     TOPO_ESYNTAX,
		     "tiny.json:4:31: duplicate object key \"version\"");
	/* The machine loader's reading of JSON, word for word (json_read.c). */
	expect_error(d, d, "", TOPO_ESYNTAX, "tiny.json:1:1: file is empty");
	expect_error(d, d, " \n\t\n", TOPO_ESYNTAX,
		     "tiny.json:1:1: file holds only white space (want a JSON "
		     "object)");
	expect_error(d, "\"parent\": [-1, 0]", "\"parent\": [-1, 0,]",
		     TOPO_ESYNTAX,
		     "tiny.json:16:23: trailing comma before ']'");
	expect_error(d, "\"name\": \"tiny\"", "\"name\": \"ti\xffny\"",
		     TOPO_ESYNTAX, "tiny.json:6:16: invalid UTF-8 (byte 0xff)");
	expect_error(d, "  ]\n}\n", "  ]\n}\n{}", TOPO_ESYNTAX,
		     "tiny.json:50:1: unexpected text after the end of the "
		     "JSON document");
	expect_error(d, "  ]\n}\n", "  ]\n", TOPO_ESYNTAX,
		     "tiny.json:48:4: unexpected end of file ('}' expected)");
	expect_error(d, d, "7", TOPO_EINVAL,
		     "tiny.json: must be a collc-routes document, a JSON "
		     "object (got 7)");

	/* The machine section */
	expect_error(d, "\"tasks\": 4", "\"tasks\": 5", TOPO_EINVAL,
		     "tiny.json: /machine/tasks: 5 does not match "
		     "tasks_per_node, which sums to 4");
	expect_error(d, "\"endpoints\": 4", "\"endpoints\": 8", TOPO_EINVAL,
		     "tiny.json: /machine/endpoints: 8 does not match tasks x "
		     "endpoints_per_task (4 x 1 = 4)");
	expect_error(d, "\"tasks_per_node\": [2, 2]",
		     "\"tasks_per_node\": [2, 2, 0]", TOPO_EINVAL,
		     "tiny.json: /machine/tasks_per_node: has 3 entries, want "
		     "2 (one per node)");
	expect_error(d, "\"tasks_per_node\": [2, 2]",
		     "\"tasks_per_node\": [2, 0]", TOPO_EINVAL,
		     "tiny.json: /machine/tasks_per_node/1: must be an integer "
		     ">= 1 (got 0)");
	expect_error(d, "\"nodes\": 2", "\"nodes\": \"2\"", TOPO_EINVAL,
		     "tiny.json: /machine/nodes: must be an integer >= 1 (got "
		     "\"2\")");
	expect_error(d, "\"name\": \"tiny\",", "", TOPO_EINVAL,
		     "tiny.json: /machine: missing \"name\" (a string)");
	/* Every required count and the physical root: missing is said, at
	 * the object, never read as an absent value. */
	expect_error(d, "\"nodes\": 2,", "", TOPO_EINVAL,
		     "tiny.json: /machine: missing \"nodes\" (an integer >= "
		     "1)");
	expect_error(d, "\"tasks\": 4,", "", TOPO_EINVAL,
		     "tiny.json: /machine: missing \"tasks\" (an integer >= "
		     "1)");
	expect_error(d, "\"endpoints_per_task\": 1,", "", TOPO_EINVAL,
		     "tiny.json: /machine: missing \"endpoints_per_task\" (an "
		     "integer >= 1)");
	expect_error(d, "\"endpoints\": 4,", "", TOPO_EINVAL,
		     "tiny.json: /machine: missing \"endpoints\" (an integer "
		     ">= 1)");
	expect_error(d, "\"physical_root\": 0,", "", TOPO_EINVAL,
		     "tiny.json: /machine/network: missing \"physical_root\" "
		     "(a node id in 0..1)");
	expect_error(d, "\"type\": \"kary\"", "\"type\": \"ring\"", TOPO_EINVAL,
		     "tiny.json: /machine/network/type: must be \"tree\", "
		     "\"kary\" or \"torus\" (got \"ring\")");
	expect_error(d, "\"parent\": [-1, 0]", "\"parent\": [1, 0]",
		     TOPO_EINVAL,
		     "tiny.json: /machine/network/parent: no node has parent "
		     "-1 (exactly one, the physical root, must)");
	expect_error(d, "\"parent\": [-1, 0]", "\"parent\": [-1, 5]",
		     TOPO_EINVAL,
		     "tiny.json: /machine/network/parent/1: node 5 does not "
		     "exist (nodes: 0..1, or -1 at the physical root)");
	expect_error(d, "\"parent\": [-1, 0]", "\"parent\": [-1, -1]",
		     TOPO_EINVAL,
		     "tiny.json: /machine/network/parent/1: node 1 is a second "
		     "root (exactly one node has parent -1)");
	expect_error(d, "\"physical_root\": 0", "\"physical_root\": 1",
		     TOPO_EINVAL,
		     "tiny.json: /machine/network/physical_root: 1 is not the "
		     "root of the network's parent array (node 0 is)");
	expect_error(d, "\"physical_root\": 0", "\"physical_root\": 2",
		     TOPO_EINVAL,
		     "tiny.json: /machine/network/physical_root: must be a "
		     "node id in 0..1 (got 2)");
	expect_error(d, "\"parent\": [-1, 0]", "\"parent\": [1, -1]",
		     TOPO_EINVAL,
		     "tiny.json: /machine/network/physical_root: 0 is not the "
		     "root of the network's parent array (node 1 is)");
	expect_error(d, "\"fanout\": 2", "\"fanout\": 0", TOPO_EINVAL,
		     "tiny.json: /machine/network/fanout: must be an integer "
		     ">= 1 (got 0)");

	/* Groups */
	expect_error(d, "\"members\": [0, 1, 2, 3]",
		     "\"members\": [0, 2, 1, 3]", TOPO_EINVAL,
		     "tiny.json: /groups/0/members/2: 1 follows 2 (members are "
		     "strictly ascending)");
	expect_error(d, "\"members\": [0, 1, 2, 3]",
		     "\"members\": [0, 1, 1, 3]", TOPO_EINVAL,
		     "tiny.json: /groups/0/members/2: 1 follows 1 (members are "
		     "strictly ascending)");
	expect_error(d, "\"members\": [0, 1, 2, 3]",
		     "\"members\": [0, 1, 2, 4]", TOPO_EINVAL,
		     "tiny.json: /groups/0/members/3: endpoint 4 does not "
		     "exist (endpoints: 0..3)");
	expect_error(d, "\"members\": [0, 1, 2, 3]", "\"members\": []",
		     TOPO_EINVAL,
		     "tiny.json: /groups/0/members: a group has at least one "
		     "member");
	expect_error(d, "\"size\": 4", "\"size\": 3", TOPO_EINVAL,
		     "tiny.json: /groups/0/size: 3 does not match the 4 "
		     "members");
	expect_error(d, "\"spec\": \"all\",", "", TOPO_EINVAL,
		     "tiny.json: /groups/0: missing \"spec\" (a string)");

	/* Trees */
	expect_error(d, "\"parent\": [-1, 0, 0, 2]",
		     "\"parent\": [-1, 0, 9, 2]", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/parent/2: endpoint 9 is not "
		     "a member of group \"world\"");
	expect_error(
	    d, "\"parent\": [-1, 0, 0, 2]", "\"parent\": [-1, 0, 3, 2]",
	    TOPO_EINVAL,
	    "tiny.json: /groups/0/trees/0/parent/2: endpoint 2 is on a "
	    "cycle (its parent chain never reaches the root, "
	    "endpoint 0)");
	expect_error(d, "\"parent\": [-1, 0, 0, 2]",
		     "\"parent\": [-1, 0, 0, 3]", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/parent/3: endpoint 3 is its "
		     "own parent");
	expect_error(d, "\"parent\": [-1, 0, 0, 2]", "\"parent\": [-1, 0, 0]",
		     TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/parent: has 3 entries, "
		     "want 4 (one per member)");
	expect_error(d, "\"root\": 0", "\"root\": 1", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/parent/0: endpoint 0 has "
		     "parent -1, but the root is endpoint 1");
	expect_error(d, "\"parent\": [-1, 0, 0, 2]",
		     "\"parent\": [2, 0, -1, 2]", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/parent/0: endpoint 0 is the "
		     "root, so its parent is -1, not 2");
	expect_error(d, "\"root\": 0", "\"root\": 6", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/root: endpoint 6 is not a "
		     "member of group \"world\"");
	expect_error(d, "\"edge\": [\"root\", \"shm\", \"net\", \"shm\"]",
		     "\"edge\": [\"root\", \"shm\", \"shm\", \"shm\"]",
		     TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/edge/2: \"shm\" is wrong: "
		     "endpoint 2 is on node 1 and its parent 0 on node 0, so "
		     "the edge is \"net\"");
	expect_error(d, "\"edge\": [\"root\", \"shm\", \"net\", \"shm\"]",
		     "\"edge\": [\"root\", \"net\", \"net\", \"shm\"]",
		     TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/edge/1: \"net\" is wrong: "
		     "endpoint 1 and its parent 0 are both on node 0, so the "
		     "edge is \"shm\"");
	expect_error(d, "\"edge\": [\"root\", \"shm\", \"net\", \"shm\"]",
		     "\"edge\": [\"net\", \"shm\", \"net\", \"shm\"]",
		     TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/edge/0: \"net\" is wrong: "
		     "endpoint 0 is the root, so its edge is \"root\"");
	expect_error(d, "\"edge\": [\"root\", \"shm\", \"net\", \"shm\"]",
		     "\"edge\": [\"root\", \"shm\", \"ib\", \"shm\"]",
		     TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/edge/2: must be \"root\", "
		     "\"shm\" or \"net\" (got \"ib\")");
	expect_error(d, "\"depth\": 2", "\"depth\": 3", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/depth: 3 does not match the "
		     "tree, whose depth is 2");
	expect_error(d, "\"edges\": {\"shm\": 2, \"net\": 1}",
		     "\"edges\": {\"shm\": 2, \"net\": 2}", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/edges/net: 2 does not match "
		     "the tree, which has 1 net edges");

	/* Route rows: structure only */
	expect_error(d, "[0, 1, [2]]", "[0, 1, [7]]", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/routes/1/2/0: endpoint 7 is "
		     "not a member of group \"world\"");
	expect_error(d, "[0, 1, [2]]", "[9, 1, [2]]", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/routes/1/0: endpoint 9 is "
		     "not a member of group \"world\"");
	expect_error(d, "[0, 1, [2]]", "[0, -2, [2]]", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/routes/1/1: endpoint -2 is "
		     "not a member of group \"world\"");
	expect_error(d, "[0, 1, [2]]", "[0, 1]", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/routes/1: must be a row "
		     "[at, from, [to...]] (got an array of another length)");
	expect_error(
	    d, "[0, 1, [2]]", "[0, 1, 2]", TOPO_EINVAL,
	    "tiny.json: /groups/0/trees/0/routes/1/2: must be an array "
	    "of endpoint ids to forward to (got 2)");
	expect_error(d, "[0, 1, [2]]", "[0, -1, [2]]", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/routes/1: a second origin "
		     "row for endpoint 0 (the first is "
		     "/groups/0/trees/0/routes/0)");
	expect_error(d, "[2, 3, [0]]", "[2, 0, [0]]", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/routes/7: a second row for "
		     "endpoint 2 arriving from endpoint 0 (the first is "
		     "/groups/0/trees/0/routes/6)");
	expect_error(d, "\"routes\": [", "\"routes\": 5, \"x\": [", TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/routes: must be an array of "
		     "rows [at, from, [to...]] (got 5)");
	/* Leaving "routes" out is allowed (TOPO_WRITE_NO_ROUTES); null is
	 * not leaving it out. */
	expect_error(d, "\"routes\": [", "\"routes\": null, \"x\": [",
		     TOPO_EINVAL,
		     "tiny.json: /groups/0/trees/0/routes: must be an array of "
		     "rows [at, from, [to...]] (got null)");
}

/* The shape parameters must generate the network that is written. */
static void test_generated_networks(void)
{
	topo_machine *k =
	    machine("{\"name\": \"k\", \"nodes\": 3, \"tasks_per_node\": 1, "
		    "\"network\": {\"type\": \"kary\", \"fanout\": 1}}");
	topo_machine *t =
	    machine("{\"name\": \"t\", \"nodes\": 4, \"tasks_per_node\": 1, "
		    "\"network\": {\"type\": \"torus\", \"dims\": [2, 2]}}");
	const char *shapes[] = {"chain"};
	topo_compiled *c = NULL;
	topo_error err;
	char *kdoc, *tdoc;
	size_t len;

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, k, NULL, NULL, 0, shapes, 1, &err), 0);
	kdoc = write_mem(c, &len);
	topo_compiled_free(c);
	CHECK_INT(topo_compile(&c, t, NULL, NULL, 0, shapes, 1, &err), 0);
	tdoc = write_mem(c, &len);
	topo_compiled_free(c);

	expect_error(kdoc, "\"parent\": [-1, 0, 1]", "\"parent\": [-1, 0, 0]",
		     TOPO_EINVAL,
		     "tiny.json: /machine/network/parent/2: node 2 has parent "
		     "0, but a kary network of fanout 1 rooted at node 0 gives "
		     "1");
	expect_error(kdoc, "\"parent\": [-1, 0, 1]", "\"parent\": [-1, 2, 1]",
		     TOPO_EINVAL,
		     "tiny.json: /machine/network/parent/1: node 1 is on a "
		     "cycle (its parent chain never reaches the physical "
		     "root)");
	expect_error(tdoc, "\"dims\": [2, 2]", "\"dims\": [4, 1]", TOPO_EINVAL,
		     "tiny.json: /machine/network/parent/2: node 2 has parent "
		     "0, but a torus network of dims [4, 1] rooted at node 0 "
		     "gives 1");
	expect_error(tdoc, "\"dims\": [2, 2]", "\"dims\": [2, 3]", TOPO_EINVAL,
		     "tiny.json: /machine/network/dims: the product of dims is "
		     "6, not the 4 nodes");
	expect_error(tdoc, "\"dims\": [2, 2]", "\"dims\": [2, 0]", TOPO_EINVAL,
		     "tiny.json: /machine/network/dims/1: must be an integer "
		     ">= 1 (got 0)");
	expect_error(tdoc, "\"dims\": [2, 2]", "\"dims\": 4", TOPO_EINVAL,
		     "tiny.json: /machine/network/dims: must be an array of 1 "
		     "to 32 integers >= 1");
	free(kdoc);
	free(tdoc);
	topo_machine_free(k);
	topo_machine_free(t);
}

/* Group and tree names are unique; unknown keys are fine. */
static void test_names_and_extras(void)
{
	const char *tree = strstr(tiny_doc, "        {\n          \"name\": "
					    "\"physical\"");
	const char *tree_end = strstr(tiny_doc, "      ]\n    }\n  ]\n}\n");
	const char *group = strstr(tiny_doc, "    {\n      \"name\": "
					     "\"world\"");
	const char *group_end = strstr(tiny_doc, "  ]\n}\n");
	char *twice, *doc;
	topo_compiled *c = NULL;
	topo_error err;
	char buf[1024];
	size_t n;

	/* The tree twice in its group. */
	n = (size_t)(tree_end - tree);
	twice = malloc(2 * n + 8);
	memcpy(twice, tree, n - 1);
	memcpy(twice + n - 1, ",\n", 2);
	memcpy(twice + n + 1, tree, n);
	twice[2 * n + 1] = '\0';
	doc = edit(tiny_doc, "", "");
	{
		char *fixed = malloc(strlen(tiny_doc) + n + 8);
		size_t pre = (size_t)(tree - tiny_doc);

		memcpy(fixed, tiny_doc, pre);
		strcpy(fixed + pre, twice);
		strcat(fixed, tree_end);
		free(doc);
		doc = fixed;
	}
	topo_error_clear(&err);
	CHECK_INT(
	    topo_compiled_load_string(&c, doc, strlen(doc), "tiny.json", &err),
	    TOPO_EINVAL);
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "tiny.json: /groups/0/trees/1/name: tree \"physical\" is "
		  "already defined at /groups/0/trees/0 (tree names are "
		  "unique in a group)");
	/* Renamed, it loads, and both trees are there. */
	{
		char *renamed = edit(doc,
				     "\"name\": \"physical\",\n"
				     "          \"root\": 0,\n"
				     "          \"depth\": 2,\n"
				     "          \"edges\": {\"shm\": 2, "
				     "\"net\": 1},\n"
				     "          \"parent\": [-1, 0, 0, 2],\n"
				     "          \"edge\": [\"root\", \"shm\", "
				     "\"net\", \"shm\"],\n"
				     "          \"routes\": [\n"
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
				     "          ]\n"
				     "        },\n"
				     "        {\n"
				     "          \"name\": \"physical\"",
				     "\"name\": \"physical\",\n"
				     "          \"root\": 0,\n"
				     "          \"depth\": 2,\n"
				     "          \"edges\": {\"shm\": 2, "
				     "\"net\": 1},\n"
				     "          \"parent\": [-1, 0, 0, 2],\n"
				     "          \"edge\": [\"root\", \"shm\", "
				     "\"net\", \"shm\"],\n"
				     "          \"routes\": [\n"
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
				     "          ]\n"
				     "        },\n"
				     "        {\n"
				     "          \"name\": \"copy\"");

		topo_error_clear(&err);
		CHECK_INT(topo_compiled_load_string(
			      &c, renamed, strlen(renamed), "tiny.json", &err),
			  0);
		if (c != NULL) {
			const topo_group *w =
			    topo_compiled_find_group(c, "world");

			CHECK_INT(topo_compiled_tree_count(c, 0), 2);
			CHECK(topo_compiled_find_tree(c, w, "copy") != NULL,
			      "tree \"copy\" found");
		}
		topo_compiled_free(c);
		c = NULL;
		free(renamed);
	}
	free(doc);
	free(twice);

	/* The group twice. */
	n = (size_t)(group_end - group);
	doc = malloc(strlen(tiny_doc) + n + 8);
	memcpy(doc, tiny_doc, (size_t)(group - tiny_doc));
	memcpy(doc + (group - tiny_doc), group, n - 1);
	strcpy(doc + (group - tiny_doc) + n - 1, ",\n");
	strcat(doc, group);
	topo_error_clear(&err);
	CHECK_INT(
	    topo_compiled_load_string(&c, doc, strlen(doc), "tiny.json", &err),
	    TOPO_EINVAL);
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "tiny.json: /groups/1/name: group \"world\" is already "
		  "defined at /groups/0 (group names are unique)");
	free(doc);

	/* Unknown keys anywhere are ignored; optional summaries may go. */
	doc = edit(tiny_doc, "\"generator\": \"collc " TOPO_VERSION_STRING "\",",
		   "\"generator\": \"collc " TOPO_VERSION_STRING "\", \"stats\": {\"a\": [1]},");
	{
		char *d2 = edit(doc, "\"depth\": 2,", "\"hops\": 7,");
		char *d3 = edit(d2, "\"size\": 4,", "");

		topo_error_clear(&err);
		CHECK_INT(topo_compiled_load_string(&c, d3, strlen(d3),
						    "tiny.json", &err),
			  0);
		if (c != NULL) {
			size_t len;
			char *again = write_mem(c, &len);

			/* Written back, it is the original document. */
			CHECK_STR(again, tiny_doc);
			free(again);
			/* The loaded machine can be compiled again. */
			CHECK_INT(
			    topo_machine_group_count(topo_compiled_machine(c)),
			    0);
		}
		topo_compiled_free(c);
		c = NULL;
		free(d2);
		free(d3);
	}
	free(doc);
}

/* A hand-edited table is kept as written: a row that delivers to a
 * member twice, rows out of member order, a row from a non-neighbour. */
static void test_hand_edited(void)
{
	topo_compiled *c = NULL;
	topo_error err;
	char buf[1024];
	char *d1 = edit(tiny_doc, "[0, -1, [1, 2]],", "[0, -1, [1, 2, 3, 3]],");
	char *d2 = edit(d1, "            [3, 2, []]\n",
			"            [3, 2, []],\n            [1, 3, [0]],\n"
			"            [0, 3, []]\n");
	const topo_tree *t;
	int32_t from, scratch[8], n;
	const int32_t *to;

	topo_error_clear(&err);
	CHECK_INT(
	    topo_compiled_load_string(&c, d2, strlen(d2), "edit.json", &err),
	    0);
	if (c == NULL) {
		fprintf(stderr, "%s\n",
			topo_error_format(&err, buf, sizeof(buf)));
		goto done;
	}
	t = topo_compiled_tree(c, 0, 0);
	CHECK_INT(topo_routes_rows(t, 0), 4);
	CHECK_INT(topo_routes_rows(t, 1), 3);
	CHECK_INT(topo_routes_rows(t, 3), 2);
	n = topo_routes_row(t, 0, 0, &from, &to, scratch);
	CHECK_INT(n, 4);
	CHECK_INT(from, -1);
	CHECK(n == 4 && to[0] == 1 && to[1] == 2 && to[2] == 3 && to[3] == 3,
	      "the doubled row is kept");
	/* The appended row of member 0 comes last among its rows. */
	n = topo_routes_row(t, 0, 3, &from, &to, scratch);
	CHECK_INT(n, 0);
	CHECK_INT(from, 3);
	n = topo_routes_row(t, 1, 2, &from, &to, scratch);
	CHECK_INT(n, 1);
	CHECK_INT(from, 3);
	CHECK(n == 1 && to[0] == 0, "row [1, 3, [0]]");
	/* The tree's own rule is still the tree's. */
	CHECK_INT(topo_tree_route(t, 0, -1, scratch), 2);
	{
		size_t len;
		char *text = write_mem(c, &len);

		CHECK(strstr(text, "            [0, -1, [1, 2, 3, 3]],\n"
				   "            [0, 1, [2]],\n"
				   "            [0, 2, [1]],\n"
				   "            [0, 3, []],\n"
				   "            [1, -1, [0]],\n"
				   "            [1, 0, []],\n"
				   "            [1, 3, [0]],\n") != NULL,
		      "edited rows written grouped by member:\n%s", text);
		free(text);
	}
done:
	topo_compiled_free(c);
	free(d1);
	free(d2);
}

/* ---------------------------------------------------------------------- */
/* Without route tables */

/* The tiny document without routes, exactly; its tables derived on
 * loading; a document mixing trees with and without tables; flags this
 * version does not know. */
static void test_no_routes(void)
{
	static const char tiny_tail[] =
	    "          \"parent\": [-1, 0, 0, 2],\n"
	    "          \"edge\": [\"root\", \"shm\", \"net\", \"shm\"]\n"
	    "        }\n"
	    "      ]\n"
	    "    }\n"
	    "  ]\n"
	    "}\n";
	const char *shapes[] = {"physical", "chain"};
	topo_machine *m = machine(tiny_machine);
	topo_compiled *c = NULL, *back = NULL;
	topo_error err;
	char buf[1024];
	int32_t from, scratch[8], n;
	const int32_t *to;
	const topo_tree *t;
	size_t len, flen, len2, want_len;
	char *text, *full, *mixed, *text2, *want;
	FILE *f;

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, shapes, 1, &err), 0);
	text = write_mem_flags(c, NO_ROUTES_V1, &len);
	want = strip_routes(tiny_doc, &want_len);
	CHECK_STR(text, want);
	CHECK_INT(len, want_len);
	CHECK_INT(len, strlen(tiny_doc) - 292); /* the 10 rows */
	CHECK(len > strlen(tiny_tail) &&
		  strcmp(text + len - strlen(tiny_tail), tiny_tail) == 0,
	      "tiny without routes ends:\n%s", text);
	CHECK_INT(topo_compiled_load_string(&back, text, len, "nr.json", &err),
		  0);
	if (back != NULL) {
		t = topo_compiled_tree(back, 0, 0);
		CHECK(topo_routes_departures(t, -1) == 0,
		      "tiny: table derived");
		CHECK_INT(topo_routes_rows(t, 0), 3);
		CHECK_INT(topo_routes_rows(t, 3), 2);
		n = topo_routes_row(t, 0, 0, &from, &to, scratch);
		CHECK_INT(n, 2);
		CHECK_INT(from, -1);
		CHECK(n == 2 && to[0] == 1 && to[1] == 2,
		      "row [0, -1, [1, 2]]");
		n = topo_routes_row(t, 2, 2, &from, &to, scratch);
		CHECK_INT(n, 1);
		CHECK_INT(from, 3);
		CHECK(n == 1 && to[0] == 0, "row [2, 3, [0]]");
		text2 = write_mem(back, &len2);
		CHECK_STR(text2, tiny_doc);
		free(text2);
	} else {
		fprintf(stderr, "%s\n",
			topo_error_format(&err, buf, sizeof(buf)));
	}
	topo_compiled_free(back);
	back = NULL;
	free(want);
	free(text);
	topo_compiled_free(c);
	c = NULL;

	/* Two trees: the first keeps an edited table, the second has none
	 * and gets the derived one. */
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, shapes, 2, &err), 0);
	full = write_mem(c, &flen);
	{
		char *edited =
		    edit(full, "[0, -1, [1, 2]],", "[0, -1, [1, 2, 3, 3]],");
		char *second = strstr(edited, "\"name\": \"chain\"");
		size_t cut_len;
		char *cut = strip_routes(second, &cut_len);

		mixed = malloc(strlen(edited) + 1);
		memcpy(mixed, edited, (size_t)(second - edited));
		strcpy(mixed + (second - edited), cut);
		free(cut);
		free(edited);
	}
	CHECK_INT(count(mixed, "\"routes\""), 1);
	CHECK_INT(topo_compiled_load_string(&back, mixed, strlen(mixed),
					    "mixed.json", &err),
		  0);
	if (back != NULL) {
		t = topo_compiled_tree(back, 0, 0);
		CHECK_INT(topo_routes_departures(t, -1), 1);
		n = topo_routes_row(t, 0, 0, &from, &to, scratch);
		CHECK_INT(n, 4);
		CHECK(topo_routes_departures(topo_compiled_tree(back, 0, 1),
					     -1) == 0,
		      "mixed: second table derived");
		same_routes(topo_compiled_tree(c, 0, 1),
			    topo_compiled_tree(back, 0, 1), "mixed chain");
		/* Written in full: the edited row and the derived chain. */
		text2 = write_mem(back, &len2);
		want = edit(full, "[0, -1, [1, 2]],", "[0, -1, [1, 2, 3, 3]],");
		CHECK_STR(text2, want);
		free(want);
		free(text2);
		/* Without routes, the edit is gone with its table. */
		text2 = write_mem_flags(back, NO_ROUTES_V1, &len2);
		want = strip_routes(full, &want_len);
		CHECK_STR(text2, want);
		free(want);
		free(text2);
	} else {
		fprintf(stderr, "%s\n",
			topo_error_format(&err, buf, sizeof(buf)));
	}
	topo_compiled_free(back);
	free(mixed);
	free(full);

	/* Unknown flags are refused before anything is written. */
	{
		char *out = NULL;
		size_t size = 0;

		f = open_memstream(&out, &size);
		topo_error_clear(&err);
		CHECK_INT(topo_compiled_write(c, f, 0x18u, &err), TOPO_EARG);
		CHECK_STR(err.text,
			  "topo_compiled_write: unknown flags 0x18 (valid: "
			  "TOPO_WRITE_NO_ROUTES, TOPO_WRITE_FULL_ROUTES, "
			  "TOPO_WRITE_VERSION_1)");
		topo_error_clear(&err);
		CHECK_INT(topo_compiled_write(
			      c, f, TOPO_WRITE_NO_ROUTES | 0x80u, &err),
			  TOPO_EARG);
		CHECK_STR(err.text,
			  "topo_compiled_write: unknown flags 0x80 (valid: "
			  "TOPO_WRITE_NO_ROUTES, TOPO_WRITE_FULL_ROUTES, "
			  "TOPO_WRITE_VERSION_1)");
		topo_error_clear(&err);
		CHECK_INT(topo_compiled_write(c, f,
					      TOPO_WRITE_NO_ROUTES |
						  TOPO_WRITE_FULL_ROUTES,
					      &err),
			  TOPO_EARG);
		CHECK_STR(err.text, "topo_compiled_write: TOPO_WRITE_NO_ROUTES "
				    "and TOPO_WRITE_FULL_ROUTES exclude each "
				    "other");
		fclose(f);
		CHECK_INT(size, 0);
		free(out);
	}
	/* Write errors are errors without routes too. */
	f = fopen("/dev/full", "w");
	if (f != NULL) {
		topo_error_clear(&err);
		CHECK_INT(topo_compiled_write(c, f, TOPO_WRITE_NO_ROUTES, &err),
			  TOPO_EIO);
		CHECK_STR(err.text, "No space left on device");
		fclose(f);
	}
	topo_compiled_free(c);
	topo_machine_free(m);
}

static void test_files(void)
{
	char path[] = "/tmp/test_io_XXXXXX";
	topo_compiled *c = (topo_compiled *)1;
	topo_error err;
	char buf[1024];
	int fd = mkstemp(path);
	FILE *f;

	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	fputs(tiny_doc, f);
	fclose(f);
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_file(&c, path, &err), 0);
	CHECK(c != NULL && topo_compiled_group_count(c) == 1, "file loads");
	topo_compiled_free(c);
	unlink(path);

	c = (topo_compiled *)1;
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_file(&c, "/nonexistent/x.json", &err),
		  TOPO_EIO);
	CHECK(c == NULL, "no result");
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "/nonexistent/x.json: cannot open: No such file or "
		  "directory");

	/* Read as the machine loader reads (json_read.c). */
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_file(&c, "/tmp", &err), TOPO_EIO);
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "/tmp: cannot read: Is a directory");
	memcpy(path + strlen(path) - 6, "XXXXXX", 6);
	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp");
	if (fd < 0)
		return;
	close(fd);
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_file(&c, path, &err), TOPO_ESYNTAX);
	{
		char want[256];

		snprintf(want, sizeof(want), "%s:1:1: file is empty", path);
		CHECK_STR(topo_error_format(&err, buf, sizeof(buf)), want);
	}
	/* A byte order mark, and a file without routes. */
	f = fopen(path, "w");
	fputs("\xef\xbb\xbf", f);
	{
		size_t len;
		char *nr = strip_routes(tiny_doc, &len);

		fputs(nr, f);
		free(nr);
	}
	fclose(f);
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_file(&c, path, &err), 0);
	CHECK(c != NULL &&
		  topo_routes_departures(topo_compiled_tree(c, 0, 0), -1) ==
		      0 &&
		  topo_routes_rows(topo_compiled_tree(c, 0, 0), 2) == 3,
	      "BOM file without routes loads, tables derived");
	topo_compiled_free(c);
	unlink(path);

	/* Arguments. */
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_file(NULL, "x.json", &err), TOPO_EARG);
	CHECK_STR(err.text, "topo_compiled_load_file: out is required");
	c = (topo_compiled *)1;
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_file(&c, NULL, &err), TOPO_EARG);
	CHECK(c == NULL, "no result");
	CHECK_STR(err.text, "topo_compiled_load_file: path is required");
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_string(NULL, "{}", 2, NULL, &err),
		  TOPO_EARG);
	CHECK_STR(err.text, "topo_compiled_load_string: out is required");
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_string(&c, NULL, 3, NULL, &err),
		  TOPO_EARG);
	CHECK_STR(err.text, "topo_compiled_load_string: text is NULL");
	topo_error_clear(&err);
	CHECK_INT(topo_compiled_load_string(&c, NULL, 0, NULL, &err),
		  TOPO_ESYNTAX);
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "<string>:1:1: file is empty");
	CHECK_INT(topo_compiled_load_string(&c, "[", 1, NULL, NULL),
		  TOPO_ESYNTAX);
	topo_error_clear(&err);
	CHECK_INT(topo_tree_write_dot(NULL, stdout, &err), TOPO_EARG);
	CHECK_STR(err.text, "topo_tree_write_dot: a tree and a stream are "
			    "required");
}

/* Every allocation of a load and a write may fail: each failure gives
 * TOPO_ENOMEM and leaks nothing (the sanitizer build checks that). */
static void test_out_of_memory(void)
{
	topo_machine *m = machine(tiny_machine);
	topo_compiled *c = NULL, *back;
	topo_error err;
	long fails = 0, k;
	size_t len = strlen(tiny_doc);
	int rc;

	for (k = 0; k < 10000; k++) {
		back = NULL;
		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo_compiled_load_string(&back, tiny_doc, len, "t", &err);
		topo__alloc_fail_after(-1);
		if (rc == 0) {
			topo_compiled_free(back);
			break;
		}
		if (rc != TOPO_ENOMEM)
			fails++;
		CHECK(back == NULL, "no result after a failed allocation");
	}
	CHECK(fails == 0, "%ld failed loads did not say TOPO_ENOMEM", fails);
	CHECK(k > 20 && k < 10000, "load: %ld allocations", k);
	/* The same without routes: fewer allocations, the same answers. */
	{
		size_t nlen;
		char *nr = strip_routes(tiny_doc, &nlen);
		long k2;

		fails = 0;
		for (k2 = 0; k2 < 10000; k2++) {
			back = NULL;
			topo_error_clear(&err);
			topo__alloc_fail_after(k2);
			rc = topo_compiled_load_string(&back, nr, nlen, "t",
						       &err);
			topo__alloc_fail_after(-1);
			if (rc == 0) {
				topo_compiled_free(back);
				break;
			}
			if (rc != TOPO_ENOMEM)
				fails++;
			CHECK(back == NULL, "no result after a failed "
					    "allocation");
		}
		CHECK(fails == 0, "%ld failed loads did not say TOPO_ENOMEM",
		      fails);
		CHECK(k2 > 10 && k2 < k, "load without routes: %ld allocations",
		      k2);
		free(nr);
	}

	/* jansson's own allocations fail too, its lexer's buffer among them:
	 * a machine named with 3000 bytes (the buffer doubles eight times),
	 * each failure "out of memory", none a crash or a syntax error. */
	{
		char doc[4096];
		long k3;

		snprintf(doc, sizeof(doc),
			 "{\"name\": \"%03000d\", \"nodes\": 2, "
			 "\"tasks_per_node\": 2, \"network\": {\"type\": "
			 "\"kary\", \"fanout\": 2}}",
			 7);
		fails = 0;
		for (k3 = 0; k3 < 10000; k3++) {
			topo_machine *m2 = NULL;

			topo_error_clear(&err);
			topo__alloc_fail_after(k3);
			rc = topo_machine_load_string(&m2, doc, strlen(doc),
						      "n.json", &err);
			topo__alloc_fail_after(-1);
			if (rc == 0) {
				CHECK_INT(strlen(topo_machine_name(m2)), 3000);
				topo_machine_free(m2);
				break;
			}
			if (rc != TOPO_ENOMEM)
				fails++;
			CHECK(m2 == NULL, "no result after a failed "
					  "allocation");
		}
		CHECK(fails == 0, "%ld failed loads did not say TOPO_ENOMEM",
		      fails);
		CHECK(k3 > 8 && k3 < 10000, "long name: %ld allocations", k3);
	}

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, NULL, 0, &err), 0);
	for (k = 0; k < 100; k++) {
		char *text = NULL;
		size_t size = 0;
		FILE *f = open_memstream(&text, &size);

		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo_compiled_write(c, f, 0, &err);
		topo__alloc_fail_after(-1);
		fclose(f);
		free(text);
		if (rc == 0)
			break;
		CHECK_INT(rc, TOPO_ENOMEM);
	}
	CHECK(k > 0 && k < 100, "write: %ld allocations", k);
	topo_compiled_free(c);
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* Graphviz */

static void test_dot(void)
{
	topo_machine *m = machine(tiny_machine);
	topo_machine *m3 =
	    machine("{\"name\": \"three\", \"nodes\": 3, \"tasks_per_node\": "
		    "[2, 1, 3], \"network\": {\"type\": \"tree\", \"parent\": "
		    "[-1, 0, 0]}}");
	const char *names[] = {"we\"ird\\N"};
	const char *specs[] = {"all - ep 0"};
	const char *shapes[] = {"physical", "binomial"};
	topo_compiled *c = NULL, *c3 = NULL;
	topo_error err;
	char *text, *again;

	topo_error_clear(&err);
	CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, shapes, 1, &err), 0);
	text = dot_mem(topo_compiled_tree(c, 0, 0));
	CHECK_STR(text,
		  "digraph \"world/physical\" {\n"
		  "  graph [labelloc=t, fontname=\"Helvetica\", label=\"group "
		  "world (all), tree physical: 4 members, depth 2, 2 shm "
		  "edges, 1 net edge\\nroot: double circle; members reached "
		  "over the network: boxes; shm edges solid, net edges bold "
		  "dashed\"];\n"
		  "  node [shape=ellipse, fontname=\"Helvetica\", "
		  "fontsize=10];\n"
		  "  edge [arrowsize=0.7];\n"
		  "  subgraph cluster_node0 {\n"
		  "    label=\"node 0\";\n"
		  "    style=rounded;\n"
		  "    color=gray60;\n"
		  "    e0 [label=\"ep 0\\nrank 0\", shape=doublecircle, "
		  "style=filled, fillcolor=gold];\n"
		  "    e1 [label=\"ep 1\\nrank 1\"];\n"
		  "  }\n"
		  "  subgraph cluster_node1 {\n"
		  "    label=\"node 1\";\n"
		  "    style=rounded;\n"
		  "    color=gray60;\n"
		  "    e2 [label=\"ep 2\\nrank 2\", shape=box];\n"
		  "    e3 [label=\"ep 3\\nrank 3\"];\n"
		  "  }\n"
		  "  e0 -> e1 [style=solid, color=black];\n"
		  "  e0 -> e2 [style=\"bold,dashed\", color=\"#1f5fbf\"];\n"
		  "  e2 -> e3 [style=solid, color=black];\n"
		  "}\n");
	free(text);

	/* A group without endpoint 0 on an uneven machine: ranks differ
	 * from endpoint ids, three clusters, a binomial tree whose net
	 * edges leave from the middle of nodes. */
	CHECK_INT(topo_compile(&c3, m3, names, specs, 1, shapes, 2, &err), 0);
	text = dot_mem(topo_compiled_tree(c3, 1, 0));
	{
		const char *head = "digraph \"we\\\"ird\\\\N/physical\" {\n";

		CHECK(strncmp(text, head, strlen(head)) == 0,
		      "escaped graph name: %.40s", text);
	}
	CHECK(strstr(text, "label=\"group we\\\"ird\\\\N (all - ep 0), tree "
			   "physical: 5 members, depth 2, 2 shm edges, 2 net "
			   "edges\\n") != NULL,
	      "escaped legend");
	CHECK_INT(count(text, "subgraph cluster_node"), 3);
	CHECK(strstr(text,
		     "    e1 [label=\"ep 1\\nrank 0\", shape="
		     "doublecircle, style=filled, fillcolor=gold];\n") != NULL,
	      "root e1 is rank 0");
	CHECK_INT(count(text, "shape=doublecircle"), 1);
	CHECK_INT(count(text, "shape=box"), 2);
	CHECK_INT(count(text, " -> "), 4);
	CHECK_INT(count(text, "style=\"bold,dashed\""), 2);
	CHECK_INT(count(text, "style=solid"), 2);
	CHECK(strstr(text, "  e1 -> e2 [style=\"bold,dashed\"") != NULL,
	      "net edge to node 1");
	CHECK(strstr(text, "  e3 -> e4 [style=solid") != NULL,
	      "shm edge inside node 2");
	/* Deterministic. */
	again = dot_mem(topo_compiled_tree(c3, 1, 0));
	CHECK_STR(again, text);
	free(again);
	free(text);

	text = dot_mem(topo_compiled_tree(c3, 1, 1));
	CHECK(strstr(text, "tree binomial: 5 members, depth 2") != NULL,
	      "binomial legend");
	/* Node 2 is reached twice over the network (eps 3 and 5): two boxes
	 * in one cluster, which the legend must not call node-local roots. */
	CHECK(strstr(text, "; members reached over the network: boxes;") !=
		  NULL,
	      "the legend says what the boxes are");
	CHECK(strstr(text, "node-local") == NULL, "no node-local roots");
	CHECK_INT(count(text, "shape=box"), 3);
	CHECK(strstr(text,
		     "    e3 [label=\"ep 3\\nrank 2\", shape=box];\n"
		     "    e4 [label=\"ep 4\\nrank 3\"];\n"
		     "    e5 [label=\"ep 5\\nrank 4\", shape=box];\n") != NULL,
	      "two boxes in node 2");
	/* binomial over ranks 0..4 = eps 1..5: 2 -> 3 and 1 -> 5 cross
	 * nodes; 1 -> 2 and 3 -> 4 stay inside. */
	CHECK(strstr(text, "  e1 -> e2 [style=\"bold,dashed\"") != NULL,
	      "ep 1 (node 0) -> ep 2 (node 1) is net");
	CHECK(strstr(text, "  e1 -> e3 [style=\"bold,dashed\"") != NULL,
	      "ep 1 -> ep 3 is net");
	CHECK(strstr(text, "  e3 -> e4 [style=solid") != NULL,
	      "ep 3 -> ep 4 is shm");
	free(text);

	topo_compiled_free(c);
	topo_compiled_free(c3);
	topo_machine_free(m);
	topo_machine_free(m3);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_io", 20240601);
	CHECK_RUN(tiny_text, test_tiny_text());
	CHECK_RUN(network_sections, test_network_sections());
	CHECK_RUN(escaping, test_escaping());
	CHECK_RUN(write_errors, test_write_errors());
	CHECK_RUN(round_trips, test_round_trips());
	CHECK_RUN(wide_round_trip, test_wide_round_trip());
	CHECK_RUN(broken, test_broken());
	CHECK_RUN(generated_networks, test_generated_networks());
	CHECK_RUN(names_and_extras, test_names_and_extras());
	CHECK_RUN(hand_edited, test_hand_edited());
	CHECK_RUN(no_routes, test_no_routes());
	CHECK_RUN(files, test_files());
	CHECK_RUN(out_of_memory, test_out_of_memory());
	CHECK_RUN(dot, test_dot());
	return check_done("test_io");
}
