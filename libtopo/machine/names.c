/*
 * names.c - the replay vocabulary as the command line spells it: operation,
 * element type and reduction operator names, type sizes, and the parsers
 * that turn a name back into its enum (listing the valid names otherwise).
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <stdio.h>
#include <string.h>

/* In the order of the enums. */
static const char *const op_names[] = {
    "bcast",	 "scatter",	   "gather",   "reduce", "allreduce",
    "allgather", "reduce-scatter", "alltoall", "barrier"};
#define NOPS (sizeof(op_names) / sizeof(op_names[0]))

static const char *const type_names[] = {
#define TYPE_NAME(e, ctype, name) [e] = name,
    TOPO_TYPE_MAP(TYPE_NAME)
#undef TYPE_NAME
};

static const size_t type_sizes[] = {
#define TYPE_SIZE(e, ctype, name) [e] = sizeof(ctype),
    TOPO_TYPE_MAP(TYPE_SIZE)
#undef TYPE_SIZE
};

static const char *const redop_names[] = {"sum",  "prod", "min", "max",
					  "band", "bor",  "bxor"};

/* The enums are public, so a caller may pass any int: out-of-range values
 * get a printable name rather than a crash. */
const char *topo_op_name(enum topo_op op)
{
	return (unsigned)op < NOPS ? op_names[op] : "unknown";
}

int topo_op_has_root(enum topo_op op)
{
	return op == TOPO_OP_BCAST || op == TOPO_OP_SCATTER ||
	       op == TOPO_OP_GATHER || op == TOPO_OP_REDUCE;
}

int topo_op_reduces(enum topo_op op)
{
	return op == TOPO_OP_REDUCE || op == TOPO_OP_ALLREDUCE ||
	       op == TOPO_OP_REDUCE_SCATTER;
}

const char *topo_type_name(enum topo_type type)
{
	return (unsigned)type < TOPO_TYPE_COUNT ? type_names[type] : "unknown";
}

size_t topo_type_size(enum topo_type type)
{
	return (unsigned)type < TOPO_TYPE_COUNT ? type_sizes[type] : 0;
}

const char *topo_redop_name(enum topo_redop op)
{
	return (unsigned)op < TOPO_REDOP_COUNT ? redop_names[op] : "unknown";
}

/* Looks name up in names[0..count-1]; on failure the error lists them all:
 * 'unknown type "int3" (valid: int8, int16, ...)'. */
static int parse(int *out, const char *name, const char *const *names,
		 size_t count, const char *what, topo_error *err)
{
	char valid[256];
	size_t len = 0;

	for (size_t i = 0; name != NULL && i < count; i++) {
		if (strcmp(name, names[i]) == 0) {
			*out = (int)i;
			return 0;
		}
	}
	valid[0] = '\0';
	for (size_t i = 0; i < count && len < sizeof(valid); i++)
		len += (size_t)snprintf(valid + len, sizeof(valid) - len,
					"%s%s", i > 0 ? ", " : "", names[i]);
	if (name == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "no %s given (valid: %s)", what, valid);
	return topo__err(err, TOPO_EARG, NULL, NULL,
			 "unknown %s \"%s\" (valid: %s)", what, name, valid);
}

int topo_op_parse(enum topo_op *out, const char *name, topo_error *err)
{
	int v = 0;
	int rc = parse(&v, name, op_names, NOPS, "operation", err);

	if (rc == 0)
		*out = (enum topo_op)v;
	return rc;
}

int topo_type_parse(enum topo_type *out, const char *name, topo_error *err)
{
	int v = 0;
	int rc = parse(&v, name, type_names, TOPO_TYPE_COUNT, "type", err);

	if (rc == 0)
		*out = (enum topo_type)v;
	return rc;
}

int topo_redop_parse(enum topo_redop *out, const char *name, topo_error *err)
{
	int v = 0;
	int rc =
	    parse(&v, name, redop_names, TOPO_REDOP_COUNT, "operator", err);

	if (rc == 0)
		*out = (enum topo_redop)v;
	return rc;
}
