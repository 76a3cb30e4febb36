/*
 * test_jget.c - the JSON reading context (libtopo/io/jget.c): every
 * getter's success and failure, the wording of each fault, and the JSON
 * pointer each failure reports, escaping included.
 *
 * Run one test alone by naming it: test_jget pointer.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "io/jget.h"

static json_t *parse(const char *text)
{
	json_error_t je;
	json_t *v = json_loads(text, JSON_DECODE_ANY, &je);

	if (v == NULL)
		fprintf(stderr, "test_jget: bad test JSON %s: %s\n", text,
			je.text);
	return v;
}

/* A fresh context on "t.json" with an empty error record. */
static void start(struct topo__jget *j, topo_error *err)
{
	topo_error_clear(err);
	topo__jget_init(j, "t.json", err);
}

/* The error record holds code, pointer and text. */
#define CHECK_ERR(err, want_ptr, want_text)                                    \
	do {                                                                   \
		CHECK_INT((err).code, TOPO_EINVAL);                            \
		CHECK_STR((err).source, "t.json");                             \
		CHECK_STR((err).pointer, want_ptr);                            \
		CHECK_STR((err).text, want_text);                              \
	} while (0)

static void test_pointer(void)
{
	struct topo__jget j;
	topo_error err;
	char buf[256];

	start(&j, &err);
	topo__jget_pointer(&j, buf, sizeof(buf));
	CHECK_STR(buf, "");
	topo__jget_key(&j, "network");
	topo__jget_key(&j, "parent");
	topo__jget_index(&j, 5);
	topo__jget_pointer(&j, buf, sizeof(buf));
	CHECK_STR(buf, "/network/parent/5");
	topo__jget_pop(&j);
	topo__jget_pop(&j);
	topo__jget_pointer(&j, buf, sizeof(buf));
	CHECK_STR(buf, "/network");

	/* RFC 6901: "~" first as "~0", then "/" as "~1". */
	start(&j, &err);
	topo__jget_key(&j, "a/b~c");
	topo__jget_key(&j, "~1");
	topo__jget_key(&j, "");
	topo__jget_pointer(&j, buf, sizeof(buf));
	CHECK_STR(buf, "/a~1b~0c/~01/");

	/* A control character in a key would break the message's line. */
	start(&j, &err);
	topo__jget_key(&j, "a\nb\x7f");
	topo__jget_pointer(&j, buf, sizeof(buf));
	CHECK_STR(buf, "/a?b?");

	/* A raw fragment is taken as written, steps after it escaped. */
	start(&j, &err);
	topo__jget_raw(&j, "/machine/network");
	topo__jget_key(&j, "x/y");
	topo__jget_pointer(&j, buf, sizeof(buf));
	CHECK_STR(buf, "/machine/network/x~1y");
	CHECK_INT(topo__jget_fail(&j, "bad %d", 7), TOPO_EINVAL);
	CHECK_ERR(err, "/machine/network/x~1y", "bad 7");

	/* A whole pointer replaces the steps taken. */
	topo__jget_at(&j, "/groups/3");
	topo__jget_key(&j, "name");
	topo__jget_pointer(&j, buf, sizeof(buf));
	CHECK_STR(buf, "/groups/3/name");

	/* Past the depth kept, the pointer says so rather than lying. */
	start(&j, &err);
	for (int i = 0; i < TOPO__JGET_DEPTH + 3; i++)
		topo__jget_index(&j, (size_t)i);
	topo__jget_pointer(&j, buf, sizeof(buf));
	CHECK(strstr(buf, "/15/...") != NULL, "deep pointer %s", buf);
	for (int i = 0; i < TOPO__JGET_DEPTH + 3; i++)
		topo__jget_pop(&j);
	topo__jget_pop(&j); /* one too many: stays at the root */
	topo__jget_pointer(&j, buf, sizeof(buf));
	CHECK_STR(buf, "");

	/* A short buffer gets a truncated pointer, never an overflow. */
	start(&j, &err);
	topo__jget_key(&j, "abcdefghij");
	topo__jget_pointer(&j, buf, 6);
	CHECK(strlen(buf) < 6, "truncated %s", buf);

	/* The first error wins, and topo__jget_err keeps its code. */
	start(&j, &err);
	topo__jget_key(&j, "k");
	CHECK_INT(topo__jget_err(&j, TOPO_ENOMEM, "out of memory"),
		  TOPO_ENOMEM);
	CHECK_INT(topo__jget_fail(&j, "second"), TOPO_EINVAL);
	CHECK_INT(err.code, TOPO_ENOMEM);
	CHECK_STR(err.pointer, "/k");
	CHECK_STR(err.text, "out of memory");
}

static void test_show(void)
{
	static const struct {
		const char *json, *shown;
	} cases[] = {
	    {"{}", "an object"},
	    {"[1]", "an array"},
	    {"\"abc\"", "\"abc\""},
	    {"\"a\\\"b\\\\c\\n\"", "\"a\\\"b\\\\c\\u000a\""},
	    {"\"0123456789012345678901234567890123456789overflow\"",
	     "\"0123456789012345678901234567890123456789...\""},
	    {"-12", "-12"},
	    {"4.5", "4.5"},
	    {"1e300", "1e+300"},
	    {"0.1", "0.1"},
	    {"true", "true"},
	    {"false", "false"},
	    {"null", "null"},
	};
	char buf[128];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *v = parse(cases[i].json);

		if (v == NULL)
			continue;
		topo__jget_show(v, buf, sizeof(buf));
		CHECK(strcmp(buf, cases[i].shown) == 0, "%s shows as %s",
		      cases[i].json, buf);
		json_decref(v);
	}
	/* A real that looks like an integer keeps a ".0"; one past 1e15 by
	 * a fraction shows its fraction. */
	{
		json_t *v = json_real(4.0);

		topo__jget_show(v, buf, sizeof(buf));
		CHECK_STR(buf, "4.0");
		json_decref(v);
		v = json_real(1e15 + 0.125);
		topo__jget_show(v, buf, sizeof(buf));
		CHECK_STR(buf, "1000000000000000.1");
		json_decref(v);
	}
}

static void test_member(void)
{
	json_t *doc = parse("{\"a\": 1, \"b/c\": {\"d\": 2}}"), *v;
	struct topo__jget j;
	topo_error err;

	if (doc == NULL)
		return;
	start(&j, &err);
	CHECK_INT(topo__jget_member(&j, doc, "a", "an integer", &v), 0);
	CHECK(v != NULL && json_integer_value(v) == 1, "member a");
	topo__jget_pop(&j);
	/* Optional and absent: NULL, no error. */
	CHECK_INT(topo__jget_member(&j, doc, "z", NULL, &v), 0);
	CHECK(v == NULL, "absent optional member");
	topo__jget_pop(&j);
	CHECK_INT(err.code, 0);

	/* Required and absent: reported at the object, not the key. */
	CHECK_INT(topo__jget_member(&j, doc, "b/c", NULL, &v), 0);
	CHECK_INT(topo__jget_member(&j, v, "e", "an integer >= 0", &v),
		  TOPO_EINVAL);
	CHECK_ERR(err, "/b~1c", "missing \"e\" (an integer >= 0)");

	start(&j, &err);
	CHECK_INT(topo__jget_member(&j, doc, "nodes",
				    "the number of nodes, an integer >= 1", &v),
		  TOPO_EINVAL);
	CHECK_ERR(err, "",
		  "missing \"nodes\" (the number of nodes, an "
		  "integer >= 1)");
	json_decref(doc);
}

static void test_keys(void)
{
	static const char *const valid[] = {"type", "parent", NULL};
	json_t *good = parse("{\"type\": 1, \"x-note\": 2, \"parent\": 3}");
	json_t *bad = parse("{\"type\": 1, \"x-\": 0, \"par/ent\": 3}");
	json_t *xonly = parse("{\"x\": 1}");
	struct topo__jget j;
	topo_error err;

	if (good == NULL || bad == NULL || xonly == NULL)
		goto done;
	start(&j, &err);
	topo__jget_key(&j, "network");
	CHECK_INT(topo__jget_keys(&j, good, valid, ""), 0);
	CHECK_INT(err.code, 0);
	CHECK_INT(topo__jget_keys(&j, bad, valid, " for type \"tree\""),
		  TOPO_EINVAL);
	CHECK_ERR(
	    err, "/network/par~1ent",
	    "unknown key for type \"tree\" (valid: type, parent, or x-*)");
	/* The key's step is gone again: the context is where it was. */
	{
		char buf[64];

		topo__jget_pointer(&j, buf, sizeof(buf));
		CHECK_STR(buf, "/network");
	}
	/* "x" alone is no extension: only "x-" starts one. */
	start(&j, &err);
	CHECK_INT(topo__jget_keys(&j, xonly, valid, ""), TOPO_EINVAL);
	CHECK_ERR(err, "/x", "unknown key (valid: type, parent, or x-*)");
done:
	json_decref(good);
	json_decref(bad);
	json_decref(xonly);
}

static void test_object(void)
{
	json_t *o = parse("{}"), *a = parse("[]");
	struct topo__jget j;
	topo_error err;

	if (o == NULL || a == NULL)
		goto done;
	start(&j, &err);
	CHECK_INT(topo__jget_object(&j, o, NULL), 0);
	topo__jget_key(&j, "network");
	CHECK_INT(topo__jget_object(&j, a, NULL), TOPO_EINVAL);
	CHECK_ERR(err, "/network", "must be an object (got an array)");
	start(&j, &err);
	CHECK_INT(topo__jget_object(&j, a, "an object of costs"), TOPO_EINVAL);
	CHECK_ERR(err, "", "must be an object of costs (got an array)");
done:
	json_decref(o);
	json_decref(a);
}

static void test_int(void)
{
	json_t *doc =
	    parse("[5, 0, 3000000000, 4.5, \"5\", true, -9223372036854775807]");
	struct topo__jget j;
	topo_error err;
	int64_t x = -1;
	int32_t y = -1;

	if (doc == NULL)
		return;
	start(&j, &err);
	CHECK_INT(topo__jget_int(&j, json_array_get(doc, 0), 1, 5, NULL, &x),
		  0);
	CHECK_INT(x, 5);
	CHECK_INT(topo__jget_int32(&j, json_array_get(doc, 0), 5, 5, NULL, &y),
		  0);
	CHECK_INT(y, 5);
	CHECK_INT(topo__jget_int(&j, json_array_get(doc, 6), INT64_MIN + 1, 0,
				 NULL, &x),
		  0);
	CHECK_INT(x, INT64_MIN + 1);

	/* Below the least: the default wording names it. */
	topo__jget_index(&j, 1);
	CHECK_INT(topo__jget_int32(&j, json_array_get(doc, 1), 1, INT32_MAX,
				   NULL, &y),
		  TOPO_EINVAL);
	CHECK_ERR(err, "/1", "must be an integer >= 1 (got 0)");
	/* Above an int32: the bound that was passed is said. */
	start(&j, &err);
	topo__jget_index(&j, 2);
	CHECK_INT(topo__jget_int32(&j, json_array_get(doc, 2), 1, INT32_MAX,
				   NULL, &y),
		  TOPO_EINVAL);
	CHECK_ERR(err, "/2",
		  "must be an integer from 1 to 2147483647 (got 3000000000)");
	/* A closed range. */
	start(&j, &err);
	CHECK_INT(topo__jget_int(&j, json_array_get(doc, 1), 1, 7, NULL, &x),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be an integer from 1 to 7 (got 0)");
	/* Other types, shown as they are. */
	start(&j, &err);
	CHECK_INT(topo__jget_int(&j, json_array_get(doc, 3), 0, 9, NULL, &x),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be an integer from 0 to 9 (got 4.5)");
	start(&j, &err);
	CHECK_INT(
	    topo__jget_int(&j, json_array_get(doc, 4), 0, INT64_MAX, NULL, &x),
	    TOPO_EINVAL);
	CHECK_ERR(err, "", "must be an integer >= 0 (got \"5\")");
	/* The caller's words, for every fault. */
	start(&j, &err);
	CHECK_INT(topo__jget_int32(&j, json_array_get(doc, 5), 0, 7,
				   "a node id 0..7", &y),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be a node id 0..7 (got true)");
	start(&j, &err);
	CHECK_INT(topo__jget_int32(&j, json_array_get(doc, 2), 0, 7,
				   "a node id 0..7", &y),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be a node id 0..7 (got 3000000000)");
	CHECK_INT(y, 5); /* untouched by failures */
	json_decref(doc);
}

static void test_number(void)
{
	json_t *doc = parse("[2, 0.5, -1, \"x\", null, 1e16]");
	struct topo__jget j;
	topo_error err;
	double d = -1;

	if (doc == NULL)
		return;
	start(&j, &err);
	CHECK_INT(
	    topo__jget_number(&j, json_array_get(doc, 0), 0, 1e15, NULL, &d),
	    0);
	CHECK(d == 2, "integer as number: %g", d);
	CHECK_INT(topo__jget_number(&j, json_array_get(doc, 1), 0, 1, NULL, &d),
		  0);
	CHECK(d == 0.5, "real: %g", d);
	CHECK_INT(
	    topo__jget_number(&j, json_array_get(doc, 2), 0, 1e15, NULL, &d),
	    TOPO_EINVAL);
	CHECK_ERR(err, "", "must be a number from 0 to 1e+15 (got -1)");
	start(&j, &err);
	topo__jget_key(&j, "net");
	topo__jget_key(&j, "L");
	CHECK_INT(topo__jget_number(&j, json_array_get(doc, 3), 0, 1e15,
				    "a number of nanoseconds from 0 to 1e15",
				    &d),
		  TOPO_EINVAL);
	CHECK_ERR(err, "/net/L",
		  "must be a number of nanoseconds from 0 to 1e15 (got \"x\")");
	start(&j, &err);
	CHECK_INT(topo__jget_number(&j, json_array_get(doc, 4), 0, 1, NULL, &d),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be a number from 0 to 1 (got null)");
	start(&j, &err);
	CHECK_INT(topo__jget_number(&j, json_array_get(doc, 5), 0, 1e15,
				    "a cost", &d),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be a cost (got 1e+16)");
	CHECK(d == 0.5, "untouched by failures: %g", d);
	json_decref(doc);
}

static void test_bool_string(void)
{
	json_t *doc = parse("[true, false, 1, \"\", \"s\"]");
	struct topo__jget j;
	topo_error err;
	const char *s = NULL;
	bool b = false;

	if (doc == NULL)
		return;
	start(&j, &err);
	CHECK_INT(topo__jget_bool(&j, json_array_get(doc, 0), NULL, &b), 0);
	CHECK(b, "true");
	CHECK_INT(topo__jget_bool(&j, json_array_get(doc, 1), NULL, &b), 0);
	CHECK(!b, "false");
	topo__jget_index(&j, 2);
	CHECK_INT(topo__jget_bool(&j, json_array_get(doc, 2), NULL, &b),
		  TOPO_EINVAL);
	CHECK_ERR(err, "/2", "must be true or false (got 1)");

	start(&j, &err);
	CHECK_INT(topo__jget_string(&j, json_array_get(doc, 3), 0, NULL, &s),
		  0);
	CHECK_STR(s, "");
	CHECK_INT(topo__jget_string(&j, json_array_get(doc, 4), 1, NULL, &s),
		  0);
	CHECK_STR(s, "s");
	CHECK_INT(topo__jget_string(&j, json_array_get(doc, 3), 1, NULL, &s),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be a non-empty string (got \"\")");
	start(&j, &err);
	CHECK_INT(topo__jget_string(&j, json_array_get(doc, 0), 0, NULL, &s),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be a string (got true)");
	start(&j, &err);
	CHECK_INT(topo__jget_string(&j, doc, 1, "a stride spec", &s),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be a stride spec (got an array)");
	json_decref(doc);
}

static void test_array(void)
{
	json_t *doc = parse("{\"a\": [1, 2, 3], \"o\": {}}");
	struct topo__jget j;
	topo_error err;
	size_t n = 99;

	if (doc == NULL)
		return;
	start(&j, &err);
	topo__jget_key(&j, "a");
	CHECK_INT(topo__jget_array(&j, json_object_get(doc, "a"), 3, 3, NULL,
				   NULL, &n),
		  0);
	CHECK_INT(n, 3);
	CHECK_INT(topo__jget_array(&j, json_object_get(doc, "a"), 0, SIZE_MAX,
				   NULL, NULL, &n),
		  0);
	CHECK_INT(topo__jget_array(&j, json_object_get(doc, "a"), 4, 4, NULL,
				   " (one per node)", &n),
		  TOPO_EINVAL);
	CHECK_ERR(err, "/a", "has 3 entries, want 4 (one per node)");
	start(&j, &err);
	CHECK_INT(topo__jget_array(&j, json_object_get(doc, "a"), 4, SIZE_MAX,
				   NULL, NULL, &n),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "has 3 entries, want at least 4");
	start(&j, &err);
	CHECK_INT(topo__jget_array(&j, json_object_get(doc, "a"), 1, 2, NULL,
				   " dimension sizes", &n),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "has 3 entries, want 1 to 2 dimension sizes");
	start(&j, &err);
	topo__jget_key(&j, "o");
	CHECK_INT(topo__jget_array(&j, json_object_get(doc, "o"), 0, 9,
				   "an array of node ids", NULL, &n),
		  TOPO_EINVAL);
	CHECK_ERR(err, "/o", "must be an array of node ids (got an object)");
	start(&j, &err);
	CHECK_INT(topo__jget_array(&j, json_object_get(doc, "o"), 0, 9, NULL,
				   NULL, &n),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be an array (got an object)");
	CHECK_INT(n, 3);
	json_decref(doc);
}

static void test_enum(void)
{
	static const char *const types[] = {"tree", "kary", "torus", NULL};
	static const char *const two[] = {"rule", "full", NULL};
	static const char *const one[] = {"collc-routes", NULL};
	json_t *doc = parse("[\"kary\", \"mesh\", 3]");
	struct topo__jget j;
	topo_error err;
	int i = -1;

	if (doc == NULL)
		return;
	start(&j, &err);
	CHECK_INT(topo__jget_enum(&j, json_array_get(doc, 0), types, &i), 0);
	CHECK_INT(i, 1);
	topo__jget_key(&j, "type");
	CHECK_INT(topo__jget_enum(&j, json_array_get(doc, 1), types, &i),
		  TOPO_EINVAL);
	CHECK_ERR(err, "/type",
		  "must be \"tree\", \"kary\" or \"torus\" (got \"mesh\")");
	start(&j, &err);
	CHECK_INT(topo__jget_enum(&j, json_array_get(doc, 2), two, &i),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be \"rule\" or \"full\" (got 3)");
	start(&j, &err);
	CHECK_INT(topo__jget_enum(&j, json_array_get(doc, 1), one, &i),
		  TOPO_EINVAL);
	CHECK_ERR(err, "", "must be \"collc-routes\" (got \"mesh\")");
	CHECK_INT(i, 1);
	json_decref(doc);
}

static const struct {
	const char *name;
	void (*run)(void);
} tests[] = {
    {"pointer", test_pointer}, {"show", test_show},
    {"member", test_member},   {"keys", test_keys},
    {"object", test_object},   {"int", test_int},
    {"number", test_number},   {"bool_string", test_bool_string},
    {"array", test_array},     {"enum", test_enum},
};

int main(int argc, char **argv)
{
	check_args(argc, argv);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (check_want(tests[i].name))
			tests[i].run();
	return check_done("test_jget");
}
