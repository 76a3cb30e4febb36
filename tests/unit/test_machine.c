/*
 * test_machine.c - loading machine descriptions (collc(5)): every network
 * type against hand-computed trees, defaults and annotations, and one
 * failure per way a description can be wrong, each with its exact message;
 * groups made from lists of endpoints.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "topo_internal.h"

#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Loads text as "m.json" and expects success. */
static topo_machine *load_ok(const char *json, int line)
{
	topo_machine *m = NULL;
	topo_error err;
	char msg[1024];
	int rc;

	topo_error_clear(&err);
	rc = topo_machine_load_string(&m, json, strlen(json), "m.json", &err);
	CHECK(rc == 0 && m != NULL, "line %d: rc %d: %s", line, rc,
	      topo_error_format(&err, msg, sizeof(msg)));
	return m;
}

/* Loads len bytes as "m.json" and expects code and the exact message. */
static void load_bad_len(const char *json, size_t len, int code,
			 const char *want, int line)
{
	topo_machine *m = (topo_machine *)&m; /* must become NULL */
	topo_error err;
	char msg[1024];
	int rc;

	topo_error_clear(&err);
	rc = topo_machine_load_string(&m, json, len, "m.json", &err);
	topo_error_format(&err, msg, sizeof(msg));
	CHECK(rc == code, "line %d: rc %d, want %d (%s)", line, rc, code, msg);
	CHECK(err.code == code, "line %d: err.code %d, want %d", line, err.code,
	      code);
	CHECK(m == NULL, "line %d: *out not NULL on failure", line);
	CHECK(strcmp(msg, want) == 0, "line %d:\n   got \"%s\"\n  want \"%s\"",
	      line, msg, want);
	if (rc == 0)
		topo_machine_free(m);
}

#define OK(json) load_ok(json, __LINE__)
#define BAD(json, code, want)                                                  \
	load_bad_len(json, strlen(json), code, want, __LINE__)
#define BADLEN(json, len, code, want)                                          \
	load_bad_len(json, len, code, want, __LINE__)

/* A description with the given network object and 8 nodes of 2 tasks. */
#define NET8(net) "{\"nodes\": 8, \"tasks_per_node\": 2, \"network\": " net "}"
#define TREE8 "{\"type\": \"tree\", \"parent\": [-1,0,0,1,1,2,2,3]}"
/* 8 nodes, kary network, and the given groups object. */
#define GROUPS8(g)                                                             \
	"{\"nodes\": 8, \"tasks_per_node\": 2, \"network\": {\"type\": "       \
	"\"kary\", \"fanout\": 2}, \"groups\": " g "}"

static void check_parents(const topo_machine *m, const int32_t *want,
			  const int32_t *depth, int32_t n)
{
	const int32_t *p = topo_machine_network_parent(m);

	for (int32_t i = 0; i < n; i++) {
		CHECK(p[i] == want[i], "parent[%d] = %d, want %d", i, p[i],
		      want[i]);
		CHECK(topo_machine_node_depth(m, i) == depth[i],
		      "depth[%d] = %d, want %d", i,
		      topo_machine_node_depth(m, i), depth[i]);
	}
}

static void test_kary(void)
{
	/* Root 3 of 7 nodes: node i at position (i - 3) mod 7, parent at
	 * position (p - 1) / 2. */
	static const int32_t parent[7] = {4, 5, 5, -1, 3, 3, 4};
	static const int32_t depth[7] = {2, 2, 2, 0, 1, 1, 2};
	topo_machine *m = OK("{\"nodes\": 7, \"tasks_per_node\": 2, "
			     "\"endpoints_per_task\": 3, \"network\": "
			     "{\"type\": \"kary\", \"fanout\": 2, "
			     "\"physical_root\": 3}}");
	const int32_t *dims = (const int32_t *)&dims;

	if (m == NULL)
		return;
	CHECK_STR(topo_machine_name(m), "m");
	CHECK_INT(topo_machine_nodes(m), 7);
	CHECK_INT(topo_machine_tasks(m), 14);
	CHECK_INT(topo_machine_endpoints_per_task(m), 3);
	CHECK_INT(topo_machine_endpoints(m), 42);
	for (int32_t n = 0; n < 7; n++) {
		CHECK_INT(topo_machine_node_tasks(m, n), 2);
		CHECK_INT(topo_machine_node_first_task(m, n), 2 * n);
	}
	for (int32_t t = 0; t < 14; t++)
		CHECK_INT(topo_machine_task_node(m, t), t / 2);
	CHECK_INT(topo_machine_endpoint_node(m, 41), 6);
	CHECK_INT(topo_machine_endpoint_node(m, 6), 1);
	CHECK_STR(topo_machine_network_type(m), "kary");
	CHECK_INT(topo_machine_physical_root(m), 3);
	CHECK_INT(topo_machine_network_fanout(m), 2);
	CHECK_INT(topo_machine_torus_dims(m, &dims), 0);
	CHECK(dims == NULL, "kary machine has torus dims");
	CHECK_INT(topo_machine_group_count(m), 0);
	check_parents(m, parent, depth, 7);
	topo_machine_free(m);

	/* Defaults: physical root 0, one endpoint per task; fanout 1 is a
	 * chain. */
	m = OK("{\"nodes\": 4, \"tasks_per_node\": 1, \"network\": "
	       "{\"type\": \"kary\", \"fanout\": 1}}");
	if (m != NULL) {
		static const int32_t chain[4] = {-1, 0, 1, 2};
		static const int32_t chain_depth[4] = {0, 1, 2, 3};

		CHECK_INT(topo_machine_endpoints_per_task(m), 1);
		CHECK_INT(topo_machine_physical_root(m), 0);
		check_parents(m, chain, chain_depth, 4);
	}
	topo_machine_free(m);
}

static void test_torus(void)
{
	/* 3 x 4, root 5 = (1,1).  Last dimension first: a node steps back
	 * along it unless its column is the root's; a tie (distance 2 of 4)
	 * counts as positive, so (r,3) steps back to (r,2). */
	static const int32_t parent[12] = {1, 5, 1, 2, 5, -1,
					   5, 6, 9, 5, 9, 10};
	static const int32_t depth[12] = {2, 1, 2, 3, 1, 0, 1, 2, 2, 1, 2, 3};
	static const int32_t first[13] = {0,  3,  4,  6,  7,  8, 9,
					  10, 11, 12, 13, 14, 18};
	topo_machine *m =
	    OK("{\"nodes\": 12, \"tasks_per_node\": [3,1,2,1,1,1,1,1,1,1,1,4],"
	       " \"network\": {\"type\": \"torus\", \"dims\": [3, 4], "
	       "\"physical_root\": 5}}");
	const int32_t *dims = NULL;

	if (m == NULL)
		return;
	CHECK_INT(topo_machine_nodes(m), 12);
	CHECK_INT(topo_machine_tasks(m), 18);
	CHECK_INT(topo_machine_endpoints(m), 18);
	for (int32_t n = 0; n < 12; n++) {
		CHECK_INT(topo_machine_node_first_task(m, n), first[n]);
		CHECK_INT(topo_machine_node_tasks(m, n),
			  first[n + 1] - first[n]);
	}
	CHECK_INT(topo_machine_task_node(m, 0), 0);
	CHECK_INT(topo_machine_task_node(m, 2), 0);
	CHECK_INT(topo_machine_task_node(m, 3), 1);
	CHECK_INT(topo_machine_task_node(m, 5), 2);
	CHECK_INT(topo_machine_task_node(m, 14), 11);
	CHECK_INT(topo_machine_task_node(m, 17), 11);
	CHECK_STR(topo_machine_network_type(m), "torus");
	CHECK_INT(topo_machine_physical_root(m), 5);
	CHECK_INT(topo_machine_network_fanout(m), 0);
	CHECK_INT(topo_machine_torus_dims(m, &dims), 2);
	CHECK(dims != NULL && dims[0] == 3 && dims[1] == 4, "dims [3, 4]");
	check_parents(m, parent, depth, 12);
	topo_machine_free(m);

	/* A ring of 5 from the default root: 1,2 go back, 3,4 forward. */
	m = OK("{\"nodes\": 5, \"tasks_per_node\": 1, \"network\": "
	       "{\"type\": \"torus\", \"dims\": [5]}}");
	if (m != NULL) {
		static const int32_t ring[5] = {-1, 0, 1, 4, 0};
		static const int32_t ring_depth[5] = {0, 1, 2, 2, 1};

		check_parents(m, ring, ring_depth, 5);
	}
	topo_machine_free(m);
}

static void test_tree(void)
{
	static const int32_t parent[8] = {2, 2, -1, 2, 0, 0, 4, 1};
	static const int32_t depth[8] = {1, 1, 0, 1, 2, 2, 3, 2};
	topo_machine *m =
	    OK("{\"name\": \"bgq-midplane\", \"x-comment\": {\"any\": [1, "
	       "{\"thing\": null}]}, \"nodes\": 8, \"tasks_per_node\": 4, "
	       "\"endpoints_per_task\": 2, \"network\": {\"x-cable\": \"c7\", "
	       "\"type\": \"tree\", \"parent\": [2,2,-1,2,0,0,4,1]}, "
	       "\"groups\": {\"b-evens\": \"cols 0::2\", \"a-all\": \"all\", "
	       "\"c\": \"row 0\", \"x-not-special\": \"all\"}}");

	if (m == NULL)
		return;
	CHECK_STR(topo_machine_name(m), "bgq-midplane");
	CHECK_INT(topo_machine_tasks(m), 32);
	CHECK_INT(topo_machine_endpoints(m), 64);
	CHECK_INT(topo_machine_endpoint_node(m, 63), 7);
	CHECK_INT(topo_machine_endpoint_node(m, 8), 1);
	CHECK_STR(topo_machine_network_type(m), "tree");
	CHECK_INT(topo_machine_physical_root(m), 2);
	CHECK_INT(topo_machine_network_fanout(m), 0);
	check_parents(m, parent, depth, 8);
	/* Groups keep file order; "x-" is not special for group names. */
	CHECK_INT(topo_machine_group_count(m), 4);
	if (topo_machine_group_count(m) == 4) {
		CHECK_STR(topo_machine_group_name(m, 0), "b-evens");
		CHECK_STR(topo_machine_group_spec(m, 0), "cols 0::2");
		CHECK_STR(topo_machine_group_name(m, 1), "a-all");
		CHECK_STR(topo_machine_group_spec(m, 1), "all");
		CHECK_STR(topo_machine_group_name(m, 2), "c");
		CHECK_STR(topo_machine_group_spec(m, 2), "row 0");
		CHECK_STR(topo_machine_group_name(m, 3), "x-not-special");
	}
	topo_machine_free(m);

	/* A single node is its own physical root. */
	m = OK("{\"nodes\": 1, \"tasks_per_node\": [3], \"network\": "
	       "{\"type\": \"tree\", \"parent\": [-1]}}");
	if (m != NULL) {
		CHECK_INT(topo_machine_physical_root(m), 0);
		CHECK_INT(topo_machine_tasks(m), 3);
	}
	topo_machine_free(m);
}

static void check_name(const char *source, const char *want)
{
	static const char json[] = "{\"nodes\": 1, \"tasks_per_node\": 1, "
				   "\"network\": {\"type\": \"kary\", "
				   "\"fanout\": 2}}";
	topo_machine *m = NULL;
	int rc =
	    topo_machine_load_string(&m, json, sizeof(json) - 1, source, NULL);

	CHECK(rc == 0, "source %s: rc %d", source ? source : "NULL", rc);
	if (m != NULL)
		CHECK_STR(topo_machine_name(m), want);
	topo_machine_free(m);
}

static void test_defaults(void)
{
	topo_machine *m;

	check_name(NULL, "machine");
	check_name("m.json", "m");
	check_name("dir/sub/bgq-rack.json", "bgq-rack");
	check_name("a.json.json", "a.json");
	check_name("no-extension", "no-extension");
	check_name("dir/.json", "machine");
	check_name("upper.JSON", "upper.JSON");
	/* A UTF-8 byte order mark is ignored, and so is surrounding space. */
	m = OK("\xef\xbb\xbf\n  {\"nodes\": 2, \"tasks_per_node\": 1, "
	       "\"network\": {\"type\": \"kary\", \"fanout\": 2}}  \n\n");
	CHECK(m != NULL && topo_machine_nodes(m) == 2, "BOM accepted");
	topo_machine_free(m);
	/* Unicode names survive. */
	m = OK("{\"name\": \"n\\u00e9ud \xc3\xa9\", \"nodes\": 2, "
	       "\"tasks_per_node\": 1, \"network\": {\"type\": \"kary\", "
	       "\"fanout\": 2}}");
	if (m != NULL)
		CHECK_STR(topo_machine_name(m), "n\xc3\xa9ud \xc3\xa9");
	topo_machine_free(m);
}

static void test_syntax(void)
{
	static const char rest[] = ", \"nodes\": 1, \"tasks_per_node\": 1, "
				   "\"network\": {\"type\": \"tree\", "
				   "\"parent\": [-1]}}";
	char deep[5000];
	size_t n = 0;

	BADLEN("", 0, TOPO_ESYNTAX, "m.json:1:1: file is empty");
	BAD(" \n\t\n", TOPO_ESYNTAX,
	    "m.json:1:1: file holds only white space (want a JSON object)");
	BAD("{\"nodes\" 8}", TOPO_ESYNTAX,
	    "m.json:1:10: ':' expected near '8'");
	BAD("{\"nodes\": 8,}", TOPO_ESYNTAX,
	    "m.json:1:12: trailing comma before '}'");
	BAD("{\n  \"nodes\": 8,\n  \"tasks_per_node\": [1, 2,\n  ]\n}",
	    TOPO_ESYNTAX, "m.json:3:26: trailing comma before ']'");
	BAD("{\n  \"nodes\": 8,\n  \"tasks_per_node\": 1,\n  \"nodes\": 9\n}",
	    TOPO_ESYNTAX, "m.json:4:3: duplicate object key \"nodes\"");
	BAD("{\"network\": {\"type\": \"tree\", \"ty\\\"pe\": 1, "
	    "\"ty\\\"pe\": 2}}",
	    TOPO_ESYNTAX, "m.json:1:43: duplicate object key \"ty\\\"pe\"");
	BAD("{\"x-a-rather-long-annotation-key-name-here-and-more\": 1, "
	    "\"x-a-rather-long-annotation-key-name-here-and-more\": 2}",
	    TOPO_ESYNTAX,
	    "m.json:1:58: duplicate object key "
	    "\"x-a-rather-long-annotation-key-name-here...\"");
	BAD("{\"name\": \"caf\xc3\xa9 \xff\"}", TOPO_ESYNTAX,
	    "m.json:1:16: invalid UTF-8 (byte 0xff)");
	BAD("{\"name\": \"\xc3\x28\"}", TOPO_ESYNTAX,
	    "m.json:1:11: invalid UTF-8 (byte 0xc3)");
	BAD("{\n\"nodes\": tru}", TOPO_ESYNTAX,
	    "m.json:2:10: invalid token near 'tru'");
	BAD("{\"nodes\": 8", TOPO_ESYNTAX,
	    "m.json:1:12: unexpected end of file ('}' expected)");
	BAD("{\"nodes\": 8, \n\n", TOPO_ESYNTAX,
	    "m.json:1:13: unexpected end of file (string or '}' expected)");
	BAD("{\"name\": \"abc", TOPO_ESYNTAX,
	    "m.json:1:10: unterminated string");
	BAD("{\"name\": \"abc\n\"}", TOPO_ESYNTAX,
	    "m.json:1:10: unterminated string (a newline inside a string "
	    "must be written \\n)");
	BAD("{\"nodes\": ", TOPO_ESYNTAX,
	    "m.json:1:10: unexpected end of file");
	BAD("{\"nodes\": 99999999999999999999}", TOPO_ESYNTAX,
	    "m.json:1:11: number out of range: 99999999999999999999 "
	    "(integers are limited to 64 bits)");
	BAD("{\"nodes\": -99999999999999999999}", TOPO_ESYNTAX,
	    "m.json:1:11: number out of range: -99999999999999999999 "
	    "(integers are limited to 64 bits)");
	BAD("{\"nodes\": 1e999}", TOPO_ESYNTAX,
	    "m.json:1:11: number out of range: 1e999");
	BAD("{\"name\": \"a\tb\"}", TOPO_ESYNTAX,
	    "m.json:1:12: control character 0x09 in a string (write it as "
	    "\\u0009)");
	BAD("{\"name\": \"a\\u0000b\"}", TOPO_ESYNTAX,
	    "m.json:1:10: \\u0000 is not allowed in strings");
	BAD("{\"nodes\": 8} {}", TOPO_ESYNTAX,
	    "m.json:1:14: unexpected text after the end of the JSON document");
	BAD("{'nodes': 8}", TOPO_ESYNTAX,
	    "m.json:1:2: string or '}' expected near '''");
	BADLEN("{\"name\": \"a\0\"}", 14, TOPO_ESYNTAX,
	       "m.json:1:12: a NUL byte (0x00) is not allowed in JSON text");
	BADLEN("{\"nodes\":\n 4\0}", 14, TOPO_ESYNTAX,
	       "m.json:2:3: a NUL byte (0x00) is not allowed in JSON text");
	deep[n++] = '{';
	memcpy(deep + n, "\"x-a\": ", 7);
	n += 7;
	while (n < 2100)
		deep[n++] = '[';
	BADLEN(deep, n, TOPO_ESYNTAX,
	       "m.json:1:2056: maximum parsing depth reached (more than 2048 "
	       "nested arrays and objects)");
	/* Nesting just under the limit is only an annotation. */
	n = 8;
	while (n < 8 + 2000)
		deep[n++] = '[';
	while (n < 8 + 4000)
		deep[n++] = ']';
	memcpy(deep + n, rest, sizeof(rest) - 1);
	n += sizeof(rest) - 1;
	{
		topo_machine *m = NULL;
		int rc = topo_machine_load_string(&m, deep, n, NULL, NULL);

		CHECK(rc == 0, "2000 levels of nesting: rc %d", rc);
		topo_machine_free(m);
	}
	BAD("[1, 2]", TOPO_EINVAL,
	    "m.json: a machine description must be a JSON object (got an "
	    "array)");
	BAD("\"machine\"", TOPO_EINVAL,
	    "m.json: a machine description must be a JSON object (got "
	    "\"machine\")");
}

static void test_keys(void)
{
	BAD("{\"nodes\": 8, \"colour\": \"red\"}", TOPO_EINVAL,
	    "m.json: /colour: unknown key (valid: name, nodes, "
	    "tasks_per_node, endpoints_per_task, hosts, network, groups, "
	    "costs, or x-*)");
	/* The unknown key is reported before values are checked. */
	BAD("{\"nodes\": 0, \"node\": 8}", TOPO_EINVAL,
	    "m.json: /node: unknown key (valid: name, nodes, tasks_per_node, "
	    "endpoints_per_task, hosts, network, groups, costs, or x-*)");
	BAD("{\"a/b~c\": 1}", TOPO_EINVAL,
	    "m.json: /a~1b~0c: unknown key (valid: name, nodes, "
	    "tasks_per_node, endpoints_per_task, hosts, network, groups, "
	    "costs, or x-*)");
	BAD("{\"X-upper\": 1}", TOPO_EINVAL,
	    "m.json: /X-upper: unknown key (valid: name, nodes, "
	    "tasks_per_node, endpoints_per_task, hosts, network, groups, "
	    "costs, or x-*)");
	BAD("{\"a\\nb\": 1}", TOPO_EINVAL,
	    "m.json: /a?b: unknown key (valid: name, nodes, tasks_per_node, "
	    "endpoints_per_task, hosts, network, groups, costs, or x-*)");
	BAD(NET8("{\"type\": \"tree\", \"fanout\": 2, \"parent\": []}"),
	    TOPO_EINVAL,
	    "m.json: /network/fanout: unknown key for type \"tree\" (valid: "
	    "type, parent, or x-*)");
	BAD(NET8("{\"type\": \"tree\", \"physical_root\": 0}"), TOPO_EINVAL,
	    "m.json: /network/physical_root: unknown key for type \"tree\" "
	    "(valid: type, parent, or x-*)");
	BAD(NET8("{\"type\": \"kary\", \"fanout\": 2, \"dims\": [8]}"),
	    TOPO_EINVAL,
	    "m.json: /network/dims: unknown key for type \"kary\" (valid: "
	    "type, fanout, physical_root, or x-*)");
	BAD(NET8("{\"type\": \"torus\", \"parent\": [8]}"), TOPO_EINVAL,
	    "m.json: /network/parent: unknown key for type \"torus\" (valid: "
	    "type, dims, physical_root, or x-*)");
	BAD(NET8("{\"typ\": \"kary\", \"fanout\": 2}"), TOPO_EINVAL,
	    "m.json: /network/typ: unknown key (valid: type, parent, fanout, "
	    "dims, physical_root, or x-*)");
	BAD("{\"tasks_per_node\": 2}", TOPO_EINVAL,
	    "m.json: missing \"nodes\" (the number of compute nodes, an "
	    "integer >= 1)");
	BAD("{\"nodes\": 2}", TOPO_EINVAL,
	    "m.json: missing \"tasks_per_node\" (an integer >= 1, or an array "
	    "of one per node)");
	BAD("{\"nodes\": 2, \"tasks_per_node\": 2}", TOPO_EINVAL,
	    "m.json: missing \"network\" (an object with \"type\": \"tree\", "
	    "\"kary\" or \"torus\")");
	BAD(NET8("{\"fanout\": 2}"), TOPO_EINVAL,
	    "m.json: /network: missing \"type\" (\"tree\", \"kary\" or "
	    "\"torus\")");
	BAD(NET8("{\"type\": \"tree\"}"), TOPO_EINVAL,
	    "m.json: /network: missing \"parent\" (required for type "
	    "\"tree\")");
	BAD(NET8("{\"type\": \"kary\", \"physical_root\": 1}"), TOPO_EINVAL,
	    "m.json: /network: missing \"fanout\" (required for type "
	    "\"kary\")");
	BAD(NET8("{\"type\": \"torus\"}"), TOPO_EINVAL,
	    "m.json: /network: missing \"dims\" (required for type "
	    "\"torus\")");
}

static void test_values(void)
{
	BAD("{\"nodes\": 0}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer >= 1 (got 0)");
	BAD("{\"nodes\": -3}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer >= 1 (got -3)");
	BAD("{\"nodes\": \"8\"}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer >= 1 (got \"8\")");
	/* A number whose value is whole is an integer however written
	 * (JSON Schema's reading): 4.0 and 1e3 pass /nodes, so the next
	 * fault is the one reported. */
	BAD("{\"nodes\": 4.0}", TOPO_EINVAL,
	    "m.json: missing \"tasks_per_node\" (an integer >= 1, or an "
	    "array of one per node)");
	BAD("{\"nodes\": 2.5}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer >= 1 (got 2.5)");
	BAD("{\"nodes\": 1e3}", TOPO_EINVAL,
	    "m.json: missing \"tasks_per_node\" (an integer >= 1, or an "
	    "array of one per node)");
	BAD("{\"nodes\": 1e100}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer >= 1 (got 1e+100)");
	BAD("{\"nodes\": -0.0, \"tasks_per_node\": 1}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer >= 1 (got 0)");
	BAD("{\"nodes\": true}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer >= 1 (got true)");
	BAD("{\"nodes\": null}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer >= 1 (got null)");
	BAD("{\"nodes\": [8]}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer >= 1 (got an array)");
	BAD("{\"nodes\": 2147483648}", TOPO_EINVAL,
	    "m.json: /nodes: must be an integer from 1 to 2147483647 (got "
	    "2147483648)");
	BAD("{\"name\": \"\", \"nodes\": 8}", TOPO_EINVAL,
	    "m.json: /name: must be a non-empty string (got \"\")");
	BAD("{\"name\": 7}", TOPO_EINVAL,
	    "m.json: /name: must be a non-empty string (got 7)");
	BAD("{\"nodes\": 8, \"tasks_per_node\": [1,1,1,1,1,1,1]}", TOPO_EINVAL,
	    "m.json: /tasks_per_node: has 7 entries, want 8 (one per node)");
	BAD("{\"nodes\": 8, \"tasks_per_node\": [1,1,1,-2,1,1,1,1]}",
	    TOPO_EINVAL,
	    "m.json: /tasks_per_node/3: must be an integer >= 1 (got -2)");
	BAD("{\"nodes\": 2, \"tasks_per_node\": [1, \"2\"]}", TOPO_EINVAL,
	    "m.json: /tasks_per_node/1: must be an integer >= 1 (got \"2\")");
	BAD("{\"nodes\": 2, \"tasks_per_node\": [1, 4294967296]}", TOPO_EINVAL,
	    "m.json: /tasks_per_node/1: must be an integer from 1 to "
	    "2147483647 (got 4294967296)");
	BAD("{\"nodes\": 2, \"tasks_per_node\": 0}", TOPO_EINVAL,
	    "m.json: /tasks_per_node: must be an integer >= 1 (got 0)");
	BAD("{\"nodes\": 2, \"tasks_per_node\": \"a very long string that "
	    "goes on and on and on\"}",
	    TOPO_EINVAL,
	    "m.json: /tasks_per_node: must be an integer >= 1 or an array of "
	    "2 integers >= 1 (got \"a very long string that goes on and on "
	    "a...\")");
	BAD("{\"nodes\": 2, \"tasks_per_node\": {}}", TOPO_EINVAL,
	    "m.json: /tasks_per_node: must be an integer >= 1 or an array of "
	    "2 integers >= 1 (got an object)");
	BAD("{\"nodes\": 2, \"tasks_per_node\": 1, \"endpoints_per_task\": 0}",
	    TOPO_EINVAL,
	    "m.json: /endpoints_per_task: must be an integer >= 1 (got 0)");
	BAD("{\"nodes\": 2, \"tasks_per_node\": 1, \"endpoints_per_task\": "
	    "\"2\\n\"}",
	    TOPO_EINVAL,
	    "m.json: /endpoints_per_task: must be an integer >= 1 (got "
	    "\"2\\u000a\")");
}

static void test_limit(void)
{
	BAD("{\"nodes\": 65536, \"tasks_per_node\": 65536, \"network\": "
	    "{\"type\": \"kary\", \"fanout\": 2}}",
	    TOPO_ELIMIT,
	    "m.json: 4294967296 tasks x 1 endpoints = 4294967296 endpoints; "
	    "at most 2147483647 are supported");
	BAD("{\"nodes\": 1, \"tasks_per_node\": 2147483647, "
	    "\"endpoints_per_task\": 2}",
	    TOPO_ELIMIT,
	    "m.json: 2147483647 tasks x 2 endpoints = 4294967294 endpoints; "
	    "at most 2147483647 are supported");
	BAD("{\"nodes\": 2, \"tasks_per_node\": [2147483647, 1]}", TOPO_ELIMIT,
	    "m.json: 2147483648 tasks x 1 endpoints = 2147483648 endpoints; "
	    "at most 2147483647 are supported");
	/* Beyond 64 bits, and refused before anything that size is
	 * allocated. */
	BAD("{\"nodes\": 2147483647, \"tasks_per_node\": 2147483647, "
	    "\"endpoints_per_task\": 2147483647}",
	    TOPO_ELIMIT,
	    "m.json: 4611686014132420609 tasks x 2147483647 endpoints = "
	    "9903520300447984150353281023 endpoints; at most 2147483647 are "
	    "supported");
}

static void test_network(void)
{
	BAD(NET8("[1]"), TOPO_EINVAL,
	    "m.json: /network: must be an object with \"type\": \"tree\", "
	    "\"kary\" or \"torus\" (got an array)");
	BAD(NET8("{\"type\": \"ring\"}"), TOPO_EINVAL,
	    "m.json: /network/type: must be \"tree\", \"kary\" or \"torus\" "
	    "(got \"ring\")");
	BAD(NET8("{\"type\": 3}"), TOPO_EINVAL,
	    "m.json: /network/type: must be \"tree\", \"kary\" or \"torus\" "
	    "(got 3)");
	/* tree */
	BAD(NET8("{\"type\": \"tree\", \"parent\": {}}"), TOPO_EINVAL,
	    "m.json: /network/parent: must be an array of 8 node ids, -1 for "
	    "the physical root (got an object)");
	BAD(NET8("{\"type\": \"tree\", \"parent\": [-1,0,0,1,1,2,2]}"),
	    TOPO_EINVAL,
	    "m.json: /network/parent: has 7 entries, want 8 (one per node)");
	BAD(NET8("{\"type\": \"tree\", \"parent\": [-1,0,0,1,1,9,2,3]}"),
	    TOPO_EINVAL,
	    "m.json: /network/parent/5: node 9 does not exist (nodes: 0..7)");
	BAD(NET8("{\"type\": \"tree\", \"parent\": [-1,0,0,-2,1,1,2,3]}"),
	    TOPO_EINVAL,
	    "m.json: /network/parent/3: must be -1 (the physical root) or a "
	    "node id 0..7 (got -2)");
	BAD(NET8("{\"type\": \"tree\", \"parent\": [-1,0,\"0\",1,1,1,2,3]}"),
	    TOPO_EINVAL,
	    "m.json: /network/parent/2: must be -1 (the physical root) or a "
	    "node id 0..7 (got \"0\")");
	BAD(NET8("{\"type\": \"tree\", \"parent\": [-1,0,0.5,1,1,1,2,3]}"),
	    TOPO_EINVAL,
	    "m.json: /network/parent/2: must be -1 (the physical root) or a "
	    "node id 0..7 (got 0.5)");
	BAD(NET8("{\"type\": \"tree\", \"parent\": [1,0,0,1,1,2,2,3]}"),
	    TOPO_EINVAL,
	    "m.json: /network/parent: no entry is -1 (one node must be the "
	    "physical root)");
	BAD(NET8("{\"type\": \"tree\", \"parent\": [1,2,-1,1,1,2,-1,3]}"),
	    TOPO_EINVAL,
	    "m.json: /network/parent/6: second root (node 2 is already the "
	    "physical root)");
	BAD(NET8("{\"type\": \"tree\", \"parent\": [-1,0,0,1,5,4,2,3]}"),
	    TOPO_EINVAL,
	    "m.json: /network/parent/4: cycle through node 4 (4 -> 5 -> 4)");
	BAD(NET8("{\"type\": \"tree\", \"parent\": [-1,0,0,1,1,2,6,3]}"),
	    TOPO_EINVAL, "m.json: /network/parent/6: node 6 is its own parent");
	BAD("{\"nodes\": 12, \"tasks_per_node\": 1, \"network\": {\"type\": "
	    "\"tree\", \"parent\": [-1,2,3,4,5,6,7,8,9,10,11,1]}}",
	    TOPO_EINVAL,
	    "m.json: /network/parent/1: cycle through node 1 (1 -> 2 -> 3 -> "
	    "4 -> 5 -> 6 -> 7 -> 8 -> 9 -> ...)");
	BAD("{\"nodes\": 1, \"tasks_per_node\": 1, \"network\": {\"type\": "
	    "\"tree\", \"parent\": [1]}}",
	    TOPO_EINVAL,
	    "m.json: /network/parent/0: node 1 does not exist "
	    "(nodes: 0)");
	/* kary */
	BAD(NET8("{\"type\": \"kary\", \"fanout\": 0}"), TOPO_EINVAL,
	    "m.json: /network/fanout: must be an integer >= 1 (got 0)");
	BAD(NET8("{\"type\": \"kary\", \"fanout\": \"2\"}"), TOPO_EINVAL,
	    "m.json: /network/fanout: must be an integer >= 1 (got \"2\")");
	BAD(NET8("{\"type\": \"kary\", \"fanout\": 2147483648}"), TOPO_EINVAL,
	    "m.json: /network/fanout: must be an integer from 1 to "
	    "2147483647 (got 2147483648)");
	BAD(NET8("{\"type\": \"kary\", \"fanout\": 2, \"physical_root\": 8}"),
	    TOPO_EINVAL,
	    "m.json: /network/physical_root: node 8 does not exist (nodes: "
	    "0..7)");
	BAD(NET8("{\"type\": \"kary\", \"fanout\": 2, \"physical_root\": -1}"),
	    TOPO_EINVAL,
	    "m.json: /network/physical_root: node -1 does not exist (nodes: "
	    "0..7)");
	BAD(NET8("{\"type\": \"kary\", \"fanout\": 2, \"physical_root\": "
		 "null}"),
	    TOPO_EINVAL,
	    "m.json: /network/physical_root: must be a node id 0..7 (got "
	    "null)");
	/* torus */
	BAD("{\"nodes\": 64, \"tasks_per_node\": 1, \"network\": {\"type\": "
	    "\"torus\", \"dims\": [3, 4, 5]}}",
	    TOPO_EINVAL,
	    "m.json: /network/dims: product is 60, want 64 (nodes)");
	BAD("{\"nodes\": 64, \"tasks_per_node\": 1, \"network\": {\"type\": "
	    "\"torus\", \"dims\": [65536, 65536, 65536, 65536, 65536]}}",
	    TOPO_EINVAL,
	    "m.json: /network/dims: product is more than 2147483647, want 64 "
	    "(nodes)");
	BAD(NET8("{\"type\": \"torus\", \"dims\": []}"), TOPO_EINVAL,
	    "m.json: /network/dims: has 0 entries, want 1 to 32 dimension "
	    "sizes");
	BAD(NET8("{\"type\": \"torus\", \"dims\": [1,1,1,1,1,1,1,1,1,1,1,1,1,"
		 "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,8]}"),
	    TOPO_EINVAL,
	    "m.json: /network/dims: has 33 entries, want 1 to 32 dimension "
	    "sizes");
	BAD(NET8("{\"type\": \"torus\", \"dims\": [2, 0, 4]}"), TOPO_EINVAL,
	    "m.json: /network/dims/1: must be an integer >= 1 (got 0)");
	BAD(NET8("{\"type\": \"torus\", \"dims\": 8}"), TOPO_EINVAL,
	    "m.json: /network/dims: must be an array of 1 to 32 dimension "
	    "sizes (got 8)");
	BAD(NET8("{\"type\": \"torus\", \"dims\": [8], \"physical_root\": "
		 "\"0\"}"),
	    TOPO_EINVAL,
	    "m.json: /network/physical_root: must be a node id 0..7 (got "
	    "\"0\")");
}

static void test_groups(void)
{
	BAD(GROUPS8("[\"all\"]"), TOPO_EINVAL,
	    "m.json: /groups: must be an object of group name -> stride spec "
	    "(got an array)");
	BAD(GROUPS8("{\"evens\": \"cols 0::2\", \"world\": \"all\"}"),
	    TOPO_EINVAL,
	    "m.json: /groups/world: the name \"world\" is reserved (the group "
	    "of all endpoints, spec \"all\")");
	BAD(GROUPS8("{\"\": \"all\"}"), TOPO_EINVAL,
	    "m.json: /groups/: group name is empty");
	BAD(GROUPS8("{\"evens\": \"\"}"), TOPO_EINVAL,
	    "m.json: /groups/evens: must be a non-empty stride spec string "
	    "such as \"cols 0::2\" (got \"\")");
	BAD(GROUPS8("{\"evens\": 2}"), TOPO_EINVAL,
	    "m.json: /groups/evens: must be a non-empty stride spec string "
	    "such as \"cols 0::2\" (got 2)");
	BAD(GROUPS8("{\"evens\": \"cols 0::2\", \"a/b\": \"cols 0::0\"}"),
	    TOPO_ESPEC,
	    "m.json: /groups/a~1b: spec \"cols 0::0\": at 7: stride is 0");
}

/* topo_group_new_list: random lists in random order make the group of
 * those endpoints, ascending, whose spec selects exactly them again (and
 * the spec is the short one for runs); every wrong list is refused with
 * its exact message; every allocation failure is TOPO_ENOMEM. */
static void test_group_list(void)
{
	topo_machine *m = OK("{\"nodes\": 7, \"tasks_per_node\": "
			     "[3,1,2,5,1,1,4], \"endpoints_per_task\": 3, "
			     "\"network\": {\"type\": \"kary\", "
			     "\"fanout\": 3}}");
	static const struct {
		int32_t n, ids[8];
		const char *spec;
	} fixed[] = {
	    {1, {5}, "ep 5"},
	    {2, {6, 5}, "ep 5:6"},
	    {2, {9, 5}, "ep 5,9"},
	    {5, {8, 0, 6, 2, 4}, "ep 0:8:2"},
	    {6, {13, 10, 0, 2, 9, 4}, "ep 0:4:2,9:10,13"},
	    {4, {50, 0, 1, 2}, "ep 0:2,50"},
	};
	int32_t E = topo_machine_endpoints(m), *ids, *want;
	uint8_t *in;
	topo_group *g = NULL, *h = NULL;
	topo_error err;
	int rc;

	CHECK_INT(E, 17 * 3);
	for (size_t k = 0; k < sizeof(fixed) / sizeof(fixed[0]); k++) {
		topo_error_clear(&err);
		rc = topo_group_new_list(&g, m, NULL, fixed[k].ids, fixed[k].n,
					 &err);
		CHECK(rc == 0 && g != NULL, "list %zu: rc %d: %s", k, rc,
		      err.text);
		if (rc != 0)
			continue;
		CHECK_STR(topo_group_spec(g), fixed[k].spec);
		CHECK_STR(topo_group_name(g), fixed[k].spec);
		topo_group_free(g);
		g = NULL;
	}
	ids = malloc((size_t)E * sizeof(*ids));
	want = malloc((size_t)E * sizeof(*want));
	in = malloc((size_t)E);
	for (int round = 0; round < 300; round++) {
		int32_t n = 0, w = 0;
		long density = check_rand_range(1, 100);

		for (int32_t e = 0; e < E; e++) {
			in[e] = check_rand_range(1, 100) <= density;
			if (in[e])
				ids[n++] = e;
		}
		if (n == 0)
			ids[n++] = (int32_t)check_rand_range(0, E - 1);
		for (int32_t i = n - 1; i > 0; i--) {
			int32_t j = (int32_t)check_rand_range(0, i), t = ids[i];

			ids[i] = ids[j];
			ids[j] = t;
		}
		for (int32_t e = 0; e < E; e++)
			in[e] = 0;
		for (int32_t i = 0; i < n; i++)
			in[ids[i]] = 1;
		for (int32_t e = 0; e < E; e++)
			if (in[e])
				want[w++] = e;
		topo_error_clear(&err);
		rc = topo_group_new_list(&g, m, "comm", ids, n, &err);
		CHECK(rc == 0, "round %d: rc %d: %s", round, rc, err.text);
		if (rc != 0)
			continue;
		CHECK_STR(topo_group_name(g), "comm");
		CHECK_INT(topo_group_size(g), n);
		CHECK(memcmp(topo_group_members(g), want,
			     (size_t)n * sizeof(*want)) == 0,
		      "round %d: members not the list, ascending", round);
		for (int32_t i = 0; i < n; i++)
			CHECK(topo_group_rank(g, ids[i]) >= 0 &&
				  topo_group_members(g)[topo_group_rank(
				      g, ids[i])] == ids[i],
			      "round %d: rank of %d", round, ids[i]);
		/* the spec selects the same endpoints */
		topo_error_clear(&err);
		rc = topo_group_new(&h, m, NULL, topo_group_spec(g), &err);
		CHECK(rc == 0 && topo_group_size(h) == n &&
			  memcmp(topo_group_members(h), want,
				 (size_t)n * sizeof(*want)) == 0,
		      "round %d: spec \"%.80s\" selects otherwise (rc %d: %s)",
		      round, topo_group_spec(g), rc, err.text);
		topo_group_free(h);
		topo_group_free(g);
		h = g = NULL;
	}
	/* refusals */
	{
		int32_t dup[4] = {3, 7, 9, 7}, out[3] = {0, 51, 2},
			neg[2] = {1, -1};

		topo_error_clear(&err);
		g = (topo_group *)&g;
		rc = topo_group_new_list(&g, m, NULL, dup, 4, &err);
		CHECK(rc == TOPO_EARG && g == NULL, "dup: rc %d", rc);
		CHECK_STR(err.text, "topo_group_new_list: endpoint 7 is listed "
				    "twice (items 1 and 3)");
		topo_error_clear(&err);
		rc = topo_group_new_list(&g, m, NULL, out, 3, &err);
		CHECK_INT(rc, TOPO_EARG);
		CHECK_STR(err.text, "topo_group_new_list: endpoint 51 (item 1) "
				    "is not in the machine (endpoints 0..50)");
		topo_error_clear(&err);
		rc = topo_group_new_list(&g, m, NULL, neg, 2, &err);
		CHECK_STR(err.text, "topo_group_new_list: endpoint -1 (item 1) "
				    "is not in the machine (endpoints 0..50)");
		topo_error_clear(&err);
		rc = topo_group_new_list(&g, m, NULL, dup, 0, &err);
		CHECK_INT(rc, TOPO_EARG);
		CHECK_STR(err.text, "topo_group_new_list: a group needs at "
				    "least one endpoint (got 0)");
		topo_error_clear(&err);
		CHECK_INT(topo_group_new_list(&g, NULL, NULL, dup, 1, &err),
			  TOPO_EARG);
		CHECK_INT(topo_group_new_list(&g, m, NULL, NULL, 1, &err),
			  TOPO_EARG);
		CHECK_INT(topo_group_new_list(NULL, m, NULL, dup, 1, &err),
			  TOPO_EARG);
	}
	/* every allocation that can fail */
	{
		int32_t list[6] = {13, 10, 0, 2, 9, 4};
		long n, failures = 0;

		rc = TOPO_ENOMEM;
		for (n = 0; n < 100 && rc == TOPO_ENOMEM; n++) {
			topo_error_clear(&err);
			topo__alloc_fail_after(n);
			rc = topo_group_new_list(&g, m, "x", list, 6, &err);
			topo__alloc_fail_after(-1);
			if (rc == TOPO_ENOMEM) {
				failures++;
				CHECK(g == NULL && err.code == TOPO_ENOMEM,
				      "allocation %ld: *out set or no error",
				      n);
			}
		}
		CHECK_INT(rc, 0);
		CHECK(failures >= 4, "only %ld allocations could fail",
		      failures);
		topo_group_free(g);
	}
	free(ids);
	free(want);
	free(in);
	topo_machine_free(m);
}

static char tmpdir[64];

static void write_file(const char *name, const char *text, size_t len)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "wb");
	CHECK(f != NULL, "cannot create %s", path);
	if (f == NULL)
		return;
	fwrite(text, 1, len, f);
	fclose(f);
}

static void test_files(void)
{
	static const char good[] = "{\"nodes\": 4, \"tasks_per_node\": 2, "
				   "\"network\": {\"type\": \"kary\", "
				   "\"fanout\": 3}}\n";
	char path[128], want[256], msg[512];
	topo_machine *m = NULL;
	topo_error err;
	int rc;

	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_machine.XXXXXX");
	CHECK(mkdtemp(tmpdir) != NULL, "mkdtemp");
	write_file("bgq-rack.json", good, sizeof(good) - 1);
	write_file("empty.json", "", 0);
	write_file("bad.json", "{\n  \"nodes\": 4,\n  \"nodez\": 4\n}\n", 31);

	snprintf(path, sizeof(path), "%s/bgq-rack.json", tmpdir);
	topo_error_clear(&err);
	rc = topo_machine_load_file(&m, path, &err);
	CHECK_INT(rc, 0);
	if (m != NULL) {
		CHECK_STR(topo_machine_name(m), "bgq-rack");
		CHECK_INT(topo_machine_tasks(m), 8);
	}
	topo_machine_free(m);

	snprintf(path, sizeof(path), "%s/empty.json", tmpdir);
	topo_error_clear(&err);
	rc = topo_machine_load_file(&m, path, &err);
	CHECK_INT(rc, TOPO_ESYNTAX);
	snprintf(want, sizeof(want), "%s:1:1: file is empty", path);
	CHECK_STR(topo_error_format(&err, msg, sizeof(msg)), want);

	snprintf(path, sizeof(path), "%s/bad.json", tmpdir);
	topo_error_clear(&err);
	rc = topo_machine_load_file(&m, path, &err);
	CHECK_INT(rc, TOPO_EINVAL);
	CHECK_STR(err.pointer, "/nodez");
	snprintf(want, sizeof(want),
		 "%s: /nodez: unknown key (valid: name, nodes, tasks_per_node, "
		 "endpoints_per_task, hosts, network, groups, costs, or x-*)",
		 path);
	CHECK_STR(topo_error_format(&err, msg, sizeof(msg)), want);

	snprintf(path, sizeof(path), "%s/missing.json", tmpdir);
	topo_error_clear(&err);
	m = (topo_machine *)&m;
	rc = topo_machine_load_file(&m, path, &err);
	CHECK_INT(rc, TOPO_EIO);
	CHECK(m == NULL, "*out NULL after EIO");
	snprintf(want, sizeof(want),
		 "%s: cannot open: No such file or directory", path);
	CHECK_STR(topo_error_format(&err, msg, sizeof(msg)), want);

	topo_error_clear(&err);
	rc = topo_machine_load_file(&m, tmpdir, &err);
	CHECK_INT(rc, TOPO_EIO);
	snprintf(want, sizeof(want), "%s: cannot read: Is a directory", tmpdir);
	CHECK_STR(topo_error_format(&err, msg, sizeof(msg)), want);

	/* A NULL error record is allowed. */
	CHECK_INT(topo_machine_load_file(&m, path, NULL), TOPO_EIO);
	CHECK_INT(topo_machine_load_string(&m, "{", 1, NULL, NULL),
		  TOPO_ESYNTAX);
	topo_error_clear(&err);
	CHECK_INT(topo_machine_load_string(NULL, "{}", 2, NULL, &err),
		  TOPO_EARG);

	snprintf(path, sizeof(path), "%s/bgq-rack.json", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/empty.json", tmpdir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/bad.json", tmpdir);
	unlink(path);
	rmdir(tmpdir);
}

/*
 * Reading files larger than the first read buffer, through both of
 * topo__read_file's paths: a regular file, read into a buffer of its size,
 * and a pipe, which has no size and is read by doubling.  Each loads the
 * same machine; an allocation failure in each says how far it got.
 */
static void test_read_paths(void)
{
	static const char head[] = "{\"nodes\": 3, \"tasks_per_node\": 2, "
				   "\"network\": {\"type\": \"kary\", "
				   "\"fanout\": 2}, \"x-pad\": \"";
	static const char tail[] = "\"}\n";
	size_t len = 200000, n = 0;
	char *json = malloc(len);
	char path[128], fifo[128], want[256], msg[512];
	topo_machine *m = NULL;
	topo_error err;
	pid_t pid;
	int rc, status = 0;

	if (json == NULL)
		return;
	memcpy(json, head, sizeof(head) - 1);
	n = sizeof(head) - 1;
	for (; n < len - (sizeof(tail) - 1); n++)
		json[n] = (char)('a' + n % 26);
	memcpy(json + n, tail, sizeof(tail) - 1);
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_machine.XXXXXX");
	CHECK(mkdtemp(tmpdir) != NULL, "mkdtemp");
	write_file("big.json", json, len);
	snprintf(path, sizeof(path), "%s/big.json", tmpdir);
	snprintf(fifo, sizeof(fifo), "%s/pipe.json", tmpdir);

	topo_error_clear(&err);
	rc = topo_machine_load_file(&m, path, &err);
	CHECK_INT(rc, 0);
	CHECK(m != NULL && topo_machine_tasks(m) == 6, "big file loads");
	topo_machine_free(m);
	m = NULL;
	/* The buffer is the file's size: its first allocation. */
	topo_error_clear(&err);
	topo__alloc_fail_after(0);
	rc = topo_machine_load_file(&m, path, &err);
	topo__alloc_fail_after(-1);
	CHECK_INT(rc, TOPO_ENOMEM);
	snprintf(want, sizeof(want),
		 "%s: out of memory reading the file (200000 bytes)", path);
	CHECK_STR(topo_error_format(&err, msg, sizeof(msg)), want);

	/* Through a pipe, twice: whole, and with the second buffer (128 KiB)
	 * refused after the first 64 KiB arrived. */
	CHECK(mkfifo(fifo, 0600) == 0, "mkfifo");
	for (int round = 0; round < 2; round++) {
		pid = fork();
		if (pid == 0) {
			FILE *w = fopen(fifo, "wb");

			/* The reader may give up early: no SIGPIPE death. */
			signal(SIGPIPE, SIG_IGN);
			if (w != NULL) {
				fwrite(json, 1, len, w);
				fclose(w);
			}
			free(json);
			_exit(0);
		}
		CHECK(pid > 0, "fork");
		if (pid < 0)
			break;
		topo_error_clear(&err);
		if (round == 1)
			topo__alloc_fail_after(1);
		rc = topo_machine_load_file(&m, fifo, &err);
		topo__alloc_fail_after(-1);
		waitpid(pid, &status, 0);
		if (round == 0) {
			CHECK_INT(rc, 0);
			CHECK(m != NULL && topo_machine_nodes(m) == 3,
			      "machine through a pipe");
			topo_machine_free(m);
			m = NULL;
		} else {
			CHECK_INT(rc, TOPO_ENOMEM);
			snprintf(want, sizeof(want),
				 "%s: out of memory reading the file (65536 "
				 "bytes so far)",
				 fifo);
			CHECK_STR(topo_error_format(&err, msg, sizeof(msg)),
				  want);
		}
	}
	unlink(fifo);
	unlink(path);
	rmdir(tmpdir);
	free(json);
}

/* Fails each allocation in turn: every failure must be TOPO_ENOMEM with
 * nothing leaked (the sanitizer build checks the leaks). */
static void test_enomem(void)
{
	static const char json[] =
	    "{\"nodes\": 12, \"tasks_per_node\": [3,1,2,1,1,1,1,1,1,1,1,4],"
	    " \"network\": {\"type\": \"torus\", \"dims\": [3, 4]}, "
	    "\"groups\": {\"a\": \"all\", \"b\": \"cols 0::2\"}}";
	long failures = 0, n;
	int rc = TOPO_ENOMEM;

	for (n = 0; n < 1000 && rc == TOPO_ENOMEM; n++) {
		topo_machine *m = NULL;
		topo_error err;

		topo_error_clear(&err);
		topo__alloc_fail_after(n);
		rc = topo_machine_load_string(&m, json, sizeof(json) - 1,
					      "m.json", &err);
		topo__alloc_fail_after(-1);
		if (rc == TOPO_ENOMEM) {
			failures++;
			CHECK(m == NULL, "allocation %ld: *out set", n);
			CHECK(err.code == TOPO_ENOMEM && err.text[0] != '\0',
			      "allocation %ld: no error text", n);
		} else {
			CHECK(rc == 0, "allocation %ld: rc %d", n, rc);
			CHECK(m != NULL && topo_machine_group_count(m) == 2,
			      "allocation %ld: incomplete machine", n);
		}
		topo_machine_free(m);
	}
	CHECK(failures >= 10, "only %ld allocations could fail", failures);
	CHECK_INT(rc, 0);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A 65,536-node x 16-task machine, kary and explicit: loads, with the right
 * counts and depths.  The times are printed for reference only; speed is
 * make bench's business, never a test's. */
static void test_speed(void)
{
	static const char kary[] = "{\"nodes\": 65536, \"tasks_per_node\": 16,"
				   " \"network\": {\"type\": \"kary\", "
				   "\"fanout\": 4}, \"groups\": {\"a\": "
				   "\"all\"}}";
	size_t cap = 65536 * 16 + 256, n = 0;
	char *json = malloc(cap);
	topo_machine *m = NULL;
	double t0, t;
	int rc;

	t0 = now();
	rc = topo_machine_load_string(&m, kary, sizeof(kary) - 1, NULL, NULL);
	t = now() - t0;
	CHECK_INT(rc, 0);
	printf("machine: kary 65536 x 16 loaded in %.3f s\n", t);
	if (m != NULL) {
		CHECK_INT(topo_machine_endpoints(m), 1048576);
		CHECK_INT(topo_machine_node_depth(m, 65535), 8);
		CHECK_INT(topo_machine_network_parent(m)[65535], 16383);
	}
	topo_machine_free(m);

	/* The same size with explicit arrays: a chain 0 <- 1 <- 2 ... */
	if (json == NULL)
		return;
	n += (size_t)snprintf(json + n, cap - n,
			      "{\"nodes\": 65536, \"tasks_per_node\": [");
	for (int i = 0; i < 65536; i++)
		n += (size_t)snprintf(json + n, cap - n, "%s16", i ? "," : "");
	n += (size_t)snprintf(json + n, cap - n,
			      "], \"network\": {\"type\": \"tree\", "
			      "\"parent\": [");
	for (int i = 0; i < 65536; i++)
		n += (size_t)snprintf(json + n, cap - n, "%s%d", i ? "," : "",
				      i - 1);
	n += (size_t)snprintf(json + n, cap - n, "]}}");
	t0 = now();
	rc = topo_machine_load_string(&m, json, n, NULL, NULL);
	t = now() - t0;
	CHECK_INT(rc, 0);
	printf("machine: explicit 65536 x 16 loaded in %.3f s\n", t);
	if (m != NULL) {
		CHECK_INT(topo_machine_tasks(m), 1048576);
		CHECK_INT(topo_machine_node_depth(m, 65535), 65535);
	}
	topo_machine_free(m);
	free(json);
}

/* A description of 4 nodes of 2 tasks with the given "hosts" value. */
#define HOSTS4(h)                                                              \
	"{\"nodes\": 4, \"tasks_per_node\": 2, \"hosts\": " h ", "            \
	"\"network\": {\"type\": \"kary\", \"fanout\": 2}}"

static void test_hosts(void)
{
	topo_machine *m;

	m = OK(HOSTS4("\"dev[0-2],login\""));
	if (m != NULL) {
		CHECK_STR(topo_machine_host(m, 0), "dev0");
		CHECK_STR(topo_machine_host(m, 3), "login");
		CHECK(topo_machine_host(m, 4) == NULL, "node 4 has a name");
		CHECK(topo_machine_host(m, -1) == NULL, "node -1 has a name");
		CHECK_INT(topo_machine_host_node(m, "dev2"), 2);
		CHECK_INT(topo_machine_host_node(m, "login"), 3);
		CHECK_INT(topo_machine_host_node(m, "dev"), -1);
		CHECK_INT(topo_machine_host_node(m, "dev00"), -1);
		CHECK_INT(topo_machine_host_node(m, ""), -1);
		CHECK_INT(topo_machine_host_node(m, NULL), -1);
	}
	topo_machine_free(m);
	/* An array, in node order whatever the names' order. */
	m = OK(HOSTS4("[\"z\", \"a.b\", \"m-1\", \"c_2\"]"));
	if (m != NULL) {
		CHECK_INT(topo_machine_host_node(m, "z"), 0);
		CHECK_INT(topo_machine_host_node(m, "a.b"), 1);
		CHECK_INT(topo_machine_host_node(m, "m-1"), 2);
		CHECK_INT(topo_machine_host_node(m, "c_2"), 3);
		CHECK_STR(topo_machine_host(m, 2), "m-1");
	}
	topo_machine_free(m);
	/* The names go through a compile output and back. */
	m = OK(HOSTS4("\"n[08-11]\""));
	if (m != NULL) {
		topo_compiled *c = NULL, *back = NULL;
		topo_error err;
		char *text = NULL;
		size_t len = 0;
		uint64_t size = 0;
		FILE *f = open_memstream(&text, &len);

		topo_error_clear(&err);
		CHECK_INT(topo_compile(&c, m, NULL, NULL, 0, NULL, 0, &err), 0);
		CHECK_INT(topo_compiled_write(c, f, 0, &err), 0);
		fclose(f);
		CHECK_INT(topo_compiled_write_size(c, 0, &size, &err), 0);
		CHECK_INT(size, len);
		CHECK(strstr(text, "\"hosts\": [\"n08\", \"n09\", \"n10\", "
				   "\"n11\"]") != NULL,
		      "no hosts in the output");
		CHECK_INT(topo_compiled_load_string(&back, text, len, "c.json",
						    &err),
			  0);
		if (back != NULL) {
			const topo_machine *bm = topo_compiled_machine(back);

			CHECK_STR(topo_machine_host(bm, 0), "n08");
			CHECK_INT(topo_machine_host_node(bm, "n11"), 3);
		}
		topo_compiled_free(back);
		topo_compiled_free(c);
		free(text);
	}
	topo_machine_free(m);
	/* Unnamed machines answer NULL and -1. */
	m = OK(NET8(TREE8));
	if (m != NULL) {
		CHECK(topo_machine_host(m, 0) == NULL, "unnamed node named");
		CHECK_INT(topo_machine_host_node(m, "n0"), -1);
	}
	topo_machine_free(m);

	BAD(HOSTS4("\"n[1-3]\""), TOPO_EINVAL,
	    "m.json: /hosts: expands to 3 names, want 4 (one per node)");
	BAD(HOSTS4("\"n[1-3\""), TOPO_EINVAL,
	    "m.json: /hosts: hostlist \"n[1-3\": at 1: unmatched \"[\"");
	BAD(HOSTS4("\"n[1-2],,x\""), TOPO_EINVAL,
	    "m.json: /hosts: hostlist \"n[1-2],,x\": at 7: empty item (two "
	    "commas, or a comma at an end)");
	BAD(HOSTS4("\"n[3-0]\""), TOPO_EINVAL,
	    "m.json: /hosts: hostlist \"n[3-0]\": at 2: range 3-0 goes down "
	    "(want LO-HI with LO <= HI)");
	BAD(HOSTS4("\"n[0-2],n1\""), TOPO_EINVAL,
	    "m.json: /hosts: expands to \"n1\" twice (nodes 1 and 3)");
	BAD(HOSTS4("[\"a\", \"b\", \"c\"]"), TOPO_EINVAL,
	    "m.json: /hosts: has 3 entries, want 4 (one per node)");
	BAD(HOSTS4("[\"a\", \"b\", \"a\", \"b\"]"), TOPO_EINVAL,
	    "m.json: /hosts/2: \"a\" is node 0's name already (names are "
	    "unique)");
	BAD(HOSTS4("[\"a\", \"b\", \"\", \"d\"]"), TOPO_EINVAL,
	    "m.json: /hosts/2: host name \"\" is empty");
	BAD(HOSTS4("[\"a\", \"b\", \"c/d\", \"d\"]"), TOPO_EINVAL,
	    "m.json: /hosts/2: host name \"c/d\" has the character \"/\" at "
	    "1 (valid: letters, digits, \".\", \"-\", \"_\")");
	BAD(HOSTS4("[\"a\", \"b\", 3, \"d\"]"), TOPO_EINVAL,
	    "m.json: /hosts/2: must be a host name (got 3)");
	BAD(HOSTS4("{}"), TOPO_EINVAL,
	    "m.json: /hosts: must be an array of 4 host names, or a hostlist "
	    "expression such as \"dev[0-3]\" (got an object)");
	/* Checked after the sizes, before the network. */
	BAD("{\"nodes\": 2, \"tasks_per_node\": 1, \"hosts\": \"a\", "
	    "\"network\": 5}",
	    TOPO_EINVAL,
	    "m.json: /hosts: expands to 1 name, want 2 (one per node)");
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_machine", 20261125);
	CHECK_RUN(kary, test_kary());
	CHECK_RUN(torus, test_torus());
	CHECK_RUN(tree, test_tree());
	CHECK_RUN(defaults, test_defaults());
	CHECK_RUN(syntax, test_syntax());
	CHECK_RUN(keys, test_keys());
	CHECK_RUN(values, test_values());
	CHECK_RUN(limit, test_limit());
	CHECK_RUN(network, test_network());
	CHECK_RUN(groups, test_groups());
	CHECK_RUN(hosts, test_hosts());
	CHECK_RUN(group_list, test_group_list());
	CHECK_RUN(files, test_files());
	CHECK_RUN(read_paths, test_read_paths());
	CHECK_RUN(enomem, test_enomem());
	CHECK_RUN(speed, test_speed());
	return check_done("test_machine");
}
