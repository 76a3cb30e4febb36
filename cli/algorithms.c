/*
 * algorithms.c - `collrun --list-algorithms [--json]`: every operation's
 * algorithms as the library lists them (topo_algorithm_*), with what each
 * needs and offers and the operation's default tree, for people and for
 * the scripts that run every algorithm (collrun(1) documents both forms).
 */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "algorithms.h"
#include "util.h"

/* The flags as the text and the JSON forms name them. */
static const struct {
	unsigned flag;
	const char *text, *key;
} flag_names[] = {
    {TOPO_ALG_DEFAULT, "default", "default"},
    {TOPO_ALG_ONE_NODE, "default on one node", "default_one_node"},
    {TOPO_ALG_TREE, "tree", "tree"},
    {TOPO_ALG_HIERARCHICAL, "hierarchical tree", "hierarchical_tree"},
    {TOPO_ALG_SEGMENT, "segment", "segment"},
    {TOPO_ALG_CHUNK, "chunk", "chunk"},
};
#define NFLAGS (sizeof(flag_names) / sizeof(flag_names[0]))

static int list_text(void)
{
	for (int op = 0; op < TOPO_OP_COUNT; op++) {
		printf("%s (default tree: %s)\n", topo_op_name(op),
		       topo_op_default_tree(op));
		for (size_t i = 0; i < topo_algorithm_count(op); i++) {
			unsigned f = topo_algorithm_flags(op, i);
			int n = 0;

			printf("  %-20s", topo_algorithm_name(op, i));
			for (size_t k = 0; k < NFLAGS; k++)
				if (f & flag_names[k].flag)
					printf("%s%s", n++ > 0 ? ", " : "",
					       flag_names[k].text);
			printf("%s\n", n == 0 ? "-" : "");
		}
	}
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILED;
}

/* One algorithm: its name, then every flag as true or false. */
static json_t *algorithm_json(enum topo_op op, size_t i)
{
	unsigned f = topo_algorithm_flags(op, i);
	json_t *a = json_object();
	int bad = a == NULL;

	if (!bad)
		bad |= json_object_set_new(
		    a, "name", json_string(topo_algorithm_name(op, i)));
	for (size_t k = 0; k < NFLAGS && !bad; k++)
		bad |= json_object_set_new(a, flag_names[k].key,
					   json_boolean(f & flag_names[k].flag));
	if (bad) {
		json_decref(a);
		return NULL;
	}
	return a;
}

/* One operation: its name, default tree and algorithms. */
static json_t *operation_json(enum topo_op op)
{
	json_t *o = json_object(), *list = json_array();
	int bad = o == NULL || list == NULL;

	for (size_t i = 0; i < topo_algorithm_count(op) && !bad; i++)
		bad |= json_array_append_new(list, algorithm_json(op, i));
	if (bad) {
		json_decref(list);
		json_decref(o);
		return NULL;
	}
	/* json_object_set_new takes its value even when it fails */
	bad |= json_object_set_new(o, "op", json_string(topo_op_name(op)));
	bad |= json_object_set_new(o, "default_tree",
				   json_string(topo_op_default_tree(op)));
	bad |= json_object_set_new(o, "algorithms", list);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static int list_json(void)
{
	json_t *ops = json_array(), *o = json_object();
	int bad = ops == NULL || o == NULL;

	for (int op = 0; op < TOPO_OP_COUNT && !bad; op++)
		bad |= json_array_append_new(ops, operation_json(op));
	if (bad)
		json_decref(ops);
	else
		bad |= json_object_set_new(o, "operations", ops);
	if (bad) {
		json_decref(o);
		o = NULL;
	}
	if (cli_json_write(stdout, o, 0) != 0)
		return EXIT_FAILED;
	return fflush(stdout) == 0 ? EXIT_OK : EXIT_FAILED;
}

int cli_list_algorithms(int json)
{
	return json ? list_json() : list_text();
}
