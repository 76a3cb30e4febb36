/*
 * registry.c - the table of every algorithm (registry.h lists them) and
 * the lookups on it: by name, by position within an operation, the
 * default of an operation, and the exported topo_algorithm_* functions.
 */
#define TOPO_INTERNAL
#include "coll/registry.h"
#include "topo_internal.h"

#include <stdio.h>
#include <string.h>

/* The flags of the list, without their prefix. */
enum {
	DEFAULT = TOPO_ALG_DEFAULT,
	TREE = TOPO_ALG_TREE,
	HIERARCHICAL = TOPO_ALG_HIERARCHICAL,
	ONE_NODE = TOPO_ALG_ONE_NODE,
	SEGMENT = TOPO_ALG_SEGMENT,
	CHUNK = TOPO_ALG_CHUNK,
	PART = TOPO__ALG_PART,
};

static const struct topo__algorithm algorithms[] = {
#define TOPO__ALGORITHM_ENTRY(op, name, builder, flags)                        \
	{TOPO_OP_##op, name, topo__plan_##builder, (unsigned)(flags)},
    TOPO__ALGORITHMS(TOPO__ALGORITHM_ENTRY)
#undef TOPO__ALGORITHM_ENTRY
};
#define NALGORITHMS (sizeof(algorithms) / sizeof(algorithms[0]))

const struct topo__algorithm *topo__algorithm_find(enum topo_op op,
						   const char *name)
{
	for (size_t i = 0; i < NALGORITHMS && name != NULL; i++)
		if (algorithms[i].op == op &&
		    strcmp(algorithms[i].name, name) == 0)
			return &algorithms[i];
	return NULL;
}

const struct topo__algorithm *topo__algorithm_at(enum topo_op op, size_t i)
{
	for (size_t k = 0; k < NALGORITHMS; k++)
		if (algorithms[k].op == op && i-- == 0)
			return &algorithms[k];
	return NULL;
}

const struct topo__algorithm *topo__algorithm_default(enum topo_op op,
						      bool one_node)
{
	const struct topo__algorithm *def = NULL;

	for (size_t k = 0; k < NALGORITHMS; k++) {
		if (algorithms[k].op != op)
			continue;
		if (one_node && (algorithms[k].flags & TOPO_ALG_ONE_NODE))
			return &algorithms[k];
		if (def == NULL && (algorithms[k].flags & TOPO_ALG_DEFAULT))
			def = &algorithms[k];
	}
	return def;
}

void topo__algorithm_list(char *buf, size_t size, enum topo_op op)
{
	size_t len = 0;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (size_t k = 0; k < NALGORITHMS && len < size; k++)
		if (algorithms[k].op == op)
			len += (size_t)snprintf(buf + len, size - len, "%s%s",
						len > 0 ? ", " : "",
						algorithms[k].name);
}

size_t topo_algorithm_count(enum topo_op op)
{
	size_t n = 0;

	for (size_t k = 0; k < NALGORITHMS; k++)
		n += algorithms[k].op == op;
	return n;
}

const char *topo_algorithm_name(enum topo_op op, size_t i)
{
	const struct topo__algorithm *a = topo__algorithm_at(op, i);

	return a != NULL ? a->name : NULL;
}

unsigned topo_algorithm_flags(enum topo_op op, size_t i)
{
	const struct topo__algorithm *a = topo__algorithm_at(op, i);

	return a != NULL ? a->flags & TOPO__ALG_PUBLIC : 0;
}

const char *topo_op_default_tree(enum topo_op op)
{
	bool hierarchical = false;

	if ((unsigned)op >= TOPO_OP_COUNT)
		return NULL;
	for (size_t k = 0; k < NALGORITHMS; k++)
		if (algorithms[k].op == op &&
		    (algorithms[k].flags & TOPO_ALG_HIERARCHICAL))
			hierarchical = true;
	return hierarchical ? "hierarchical" : "physical";
}
