/*
 * costs.c - the LogGP costs of a described machine (collc(5) "costs",
 * collc(7) "Cost model"): their defaults, reading them from a machine
 * description or a compile output, writing them back, and the command
 * line's overrides ("net.L=1500").
 *
 * The keys form a small fixed table (class, parameter) so that reading,
 * writing, overriding and reporting all walk the same list and cannot
 * disagree on a name.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"
#include "io/jget.h"

#include <ctype.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The largest cost accepted: about 11.6 days in nanoseconds, far beyond
 * any machine, small enough that sums of millions of them stay exact to
 * the nanosecond in a double. */
#define COST_MAX 1e15

/* Every cost key: its class ("shm", "net", "reduce"), its name within
 * the class, and where it lives in struct topo_costs. */
struct cost_key {
	const char *cls, *name;
	size_t offset;
};

#define LOGGP(cls, f)                                                          \
	{#cls, #f, offsetof(struct topo_costs, cls) +                          \
		       offsetof(struct topo_loggp, f)}
#define REDUCE(e, ctype, tname)                                                \
	{"reduce", tname,                                                      \
	 offsetof(struct topo_costs, reduce) + (size_t)(e) * sizeof(double)},

static const struct cost_key keys[] = {
    LOGGP(shm, L), LOGGP(shm, o), LOGGP(shm, g), LOGGP(shm, G),
    LOGGP(net, L), LOGGP(net, o), LOGGP(net, g), LOGGP(net, G),
    LOGGP(net, hop),
    TOPO_TYPE_MAP(REDUCE)};
#undef LOGGP
#undef REDUCE

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static double *field(struct topo_costs *c, size_t k)
{
	return (double *)((char *)c + keys[k].offset);
}

static double value(const struct topo_costs *c, size_t k)
{
	return *(const double *)((const char *)c + keys[k].offset);
}

/*
 * The defaults (collc(5) lists them with their sources):
 *  - net: LogGOPSim's own defaults (spcl/LogGOPSim,
 *    src/LogGOPSim/loggopsim_cmdline.ggo: L 2500, o 1500, g 1000, G 6),
 *    so that a prediction and LogGOPSim agree out of the box; they describe
 *    no particular network.  hop 100: assumed, not measured, the order of
 *    one switch traversal in current HPC fabrics.
 *  - shm: fitted by tests/bench/loggp_fit.c (make bench-costs;
 *    tests/bench/results/costs.md and loggp.csv) between two cores with
 *    the PRTT method of Hoefler, Lichei and Rehm (IPDPS 2007).  Between
 *    two cores the overheads take the whole one-way time, so L is 0 and o
 *    is chosen to keep the model's round trip the measured one.  The runs
 *    spread widely: these are an order of magnitude; measure your
 *    machine.  Rendezvous (about 6 us more for 64 KiB..1 MiB) is left
 *    out.
 *  - reduce: libtopo's own sum kernel measured by tests/bench/reduce_rate.c
 *    (tests/bench/results/reduce.csv), two significant digits.
 * The figures and method of both: docs/CONSTANTS.md.
 */
static const struct topo_costs defaults = {
    .size = sizeof(struct topo_costs),
    .shm = {.L = 0, .o = 120, .g = 150, .G = 0.12, .hop = 0},
    .net = {.L = 2500, .o = 1500, .g = 1000, .G = 6, .hop = 100},
    .reduce = {[TOPO_INT8] = 0.044,
	       [TOPO_INT16] = 0.041,
	       [TOPO_INT32] = 0.042,
	       [TOPO_INT64] = 0.058,
	       [TOPO_UINT8] = 0.043,
	       [TOPO_UINT16] = 0.046,
	       [TOPO_UINT32] = 0.048,
	       [TOPO_UINT64] = 0.054,
	       [TOPO_FLOAT] = 0.045,
	       [TOPO_DOUBLE] = 0.063},
};

int topo_costs_init(struct topo_costs *c, size_t size)
{
	if (c == NULL || size < sizeof(size_t)) {
		if (c != NULL && size > 0)
			memset(c, 0, size);
		return TOPO_EARG;
	}
	memset(c, 0, size);
	memcpy(c, &defaults,
	       size < sizeof(defaults) ? size : sizeof(defaults));
	c->size = size;
	return 0;
}

void topo__costs_default(struct topo_costs *c)
{
	*c = defaults;
}

int topo_machine_costs(const topo_machine *m, struct topo_costs *out,
		       topo_error *err)
{
	size_t size;

	if (m == NULL || out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_machine_costs: a machine and out are "
				 "required");
	size = out->size;
	if (size < sizeof(size_t))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "struct topo_costs is not initialised "
				 "(size %zu; call topo_costs_init)",
				 size);
	memcpy(out, &m->costs, size < sizeof(m->costs) ? size : sizeof(m->costs));
	out->size = size;
	return 0;
}

/* "shm, net, reduce" or "L, o, g, G" or the type names: the valid names
 * of a class (cls NULL: the classes). */
static void valid_names(const char *cls, char *buf, size_t size)
{
	size_t n = 0;

	buf[0] = '\0';
	for (size_t k = 0; k < NKEYS; k++) {
		const char *name = cls == NULL ? keys[k].cls : keys[k].name;

		if (cls != NULL && strcmp(keys[k].cls, cls) != 0)
			continue;
		if (cls == NULL && k > 0 && strcmp(keys[k - 1].cls, name) == 0)
			continue;
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s%s",
				      n > 0 ? ", " : "", name);
	}
}

static bool is_class(const char *cls)
{
	for (size_t k = 0; k < NKEYS; k++)
		if (strcmp(keys[k].cls, cls) == 0)
			return true;
	return false;
}

static long find_key(const char *cls, const char *name)
{
	for (size_t k = 0; k < NKEYS; k++)
		if (strcmp(keys[k].cls, cls) == 0 &&
		    strcmp(keys[k].name, name) == 0)
			return (long)k;
	return -1;
}

/* What a cost may be: a finite number from 0 to COST_MAX. */
static bool good_cost(double v)
{
	return isfinite(v) && v >= 0 && v <= COST_MAX;
}

int topo_costs_set(struct topo_costs *c, const char *assignment,
		   topo_error *err)
{
	char cls[16], name[16], list[160];
	const char *dot, *eq;
	char *end;
	double v;
	long k;

	if (c == NULL || assignment == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_costs_set: costs and an assignment "
				 "are required");
	if (c->size < sizeof(size_t))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "struct topo_costs is not initialised "
				 "(size %zu; call topo_costs_init)",
				 c->size);
	dot = strchr(assignment, '.');
	eq = strchr(assignment, '=');
	if (dot == NULL || eq == NULL || dot > eq)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "expected CLASS.KEY=NANOSECONDS, such as "
				 "net.L=1500 or reduce.double=0.5 (got "
				 "\"%.60s\")",
				 assignment);
	if ((size_t)(dot - assignment) >= sizeof(cls) ||
	    (size_t)(eq - dot - 1) >= sizeof(name)) {
		valid_names(NULL, list, sizeof(list));
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "unknown cost \"%.*s\" (classes: %s)",
				 (int)(eq - assignment > 40 ? 40
							    : eq - assignment),
				 assignment, list);
	}
	memcpy(cls, assignment, (size_t)(dot - assignment));
	cls[dot - assignment] = '\0';
	memcpy(name, dot + 1, (size_t)(eq - dot - 1));
	name[eq - dot - 1] = '\0';
	if (!is_class(cls)) {
		valid_names(NULL, list, sizeof(list));
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "unknown cost class \"%s\" (valid: %s)", cls,
				 list);
	}
	k = find_key(cls, name);
	if (k < 0) {
		valid_names(cls, list, sizeof(list));
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "unknown cost \"%s.%s\" (valid in %s: %s)",
				 cls, name, cls, list);
	}
	/* Decimal only: "0x10" is not sixteen nanoseconds.  No space
	 * before the number either, as none after it: strtod would skip
	 * the one and not the other. */
	if (eq[1] == '\0' || strpbrk(eq + 1, "xXpP") != NULL ||
	    isspace((unsigned char)eq[1]) ||
	    (v = strtod(eq + 1, &end), *end != '\0') || !good_cost(v))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "%s.%s: expected nanoseconds%s, a decimal "
				 "number from 0 to 1e15 (got \"%.40s\")",
				 cls, name,
				 strcmp(cls, "shm") != 0 &&
					 strcmp(cls, "net") != 0
				     ? " per byte"
				 : strcmp(name, "G") == 0 ? " per byte"
							  : "",
				 eq + 1);
	if (keys[k].offset + sizeof(double) > c->size)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "%s.%s is beyond the struct topo_costs of "
				 "%zu bytes given",
				 cls, name, c->size);
	/* -0 is 0: printed, it would read "-0". */
	*field(c, (size_t)k) = v == 0 ? 0 : v;
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Reading and writing JSON */

/* The names of a class's keys (cls NULL: the classes), NULL-terminated,
 * for topo__jget_keys. */
static void name_list(const char *cls, const char **names)
{
	size_t n = 0;

	for (size_t k = 0; k < NKEYS; k++) {
		if (cls != NULL && strcmp(keys[k].cls, cls) != 0)
			continue;
		if (cls == NULL && k > 0 &&
		    strcmp(keys[k - 1].cls, keys[k].cls) == 0)
			continue;
		names[n++] = cls == NULL ? keys[k].cls : keys[k].name;
	}
	names[n] = NULL;
}

/* The object's unknown keys, at every level: a typo anywhere is found
 * before any value is read. */
static int check_cost_keys(struct topo__jget *j, const json_t *obj)
{
	const char *names[NKEYS + 1];
	const char *cls;
	json_t *cv;
	int rc;

	name_list(NULL, names);
	rc = topo__jget_keys(j, obj, names, "");
	if (rc != 0)
		return rc;
	json_object_foreach ((json_t *)obj, cls, cv) {
		if (strncmp(cls, "x-", 2) == 0)
			continue;
		topo__jget_key(j, cls);
		rc = topo__jget_object(j, cv,
				       "an object of costs in nanoseconds");
		if (rc != 0)
			return rc;
		name_list(cls, names);
		rc = topo__jget_keys(j, cv, names, "");
		if (rc != 0)
			return rc;
		topo__jget_pop(j);
	}
	return 0;
}

int topo__costs_from_json(struct topo__jget *j, const json_t *obj,
			  struct topo_costs *c, uint32_t *given)
{
	int rc;

	*c = defaults;
	*given = 0;
	rc = topo__jget_object(j, obj,
			       "an object with \"shm\", \"net\" and "
			       "\"reduce\"");
	if (rc == 0)
		rc = check_cost_keys(j, obj);
	for (size_t k = 0; rc == 0 && k < NKEYS; k++) {
		json_t *cv = json_object_get(obj, keys[k].cls);
		json_t *v =
		    cv != NULL ? json_object_get(cv, keys[k].name) : NULL;
		bool per_byte = strcmp(keys[k].cls, "reduce") == 0 ||
				strcmp(keys[k].name, "G") == 0;
		double d;

		if (v == NULL)
			continue;
		topo__jget_key(j, keys[k].cls);
		topo__jget_key(j, keys[k].name);
		rc = topo__jget_number(j, v, 0, COST_MAX,
				       per_byte ? "a number of nanoseconds per "
						  "byte from 0 to 1e15"
						: "a number of nanoseconds "
						  "from 0 to 1e15",
				       &d);
		if (rc != 0)
			return rc;
		topo__jget_pop(j);
		topo__jget_pop(j);
		*field(c, k) = d == 0 ? 0 : d; /* -0 is 0 */
		*given |= (uint32_t)1 << k;
	}
	return rc;
}

/* The shortest decimal that reads back as v, without an exponent (costs
 * are from 0 to 1e15). */
static void fmt_double(char *buf, size_t size, double v)
{
	for (int prec = 0; prec <= 20; prec++) {
		snprintf(buf, size, "%.*f", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
	snprintf(buf, size, "%.17g", v);
}

int topo__costs_to_text(const struct topo_costs *c, uint32_t given,
			const char *indent, char *buf, size_t size)
{
	size_t n = 0;
	const char *cls = NULL;
	bool any = false;

	n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "{");
	for (size_t k = 0; k < NKEYS; k++) {
		char num[32];

		if ((given & ((uint32_t)1 << k)) == 0)
			continue;
		if (cls == NULL || strcmp(cls, keys[k].cls) != 0) {
			n += (size_t)snprintf(buf + n, n < size ? size - n : 0,
					      "%s\n%s  \"%s\": {",
					      cls != NULL ? "}," : "", indent,
					      keys[k].cls);
			cls = keys[k].cls;
			any = false;
		}
		fmt_double(num, sizeof(num), value(c, k));
		n += (size_t)snprintf(buf + n, n < size ? size - n : 0,
				      "%s\"%s\": %s", any ? ", " : "",
				      keys[k].name, num);
		any = true;
	}
	n += (size_t)snprintf(buf + n, n < size ? size - n : 0, "%s\n%s}",
			      cls != NULL ? "}" : "", indent);
	return n < size ? 0 : TOPO_ELIMIT;
}

uint32_t topo__costs_all(void)
{
	return ((uint32_t)1 << NKEYS) - 1;
}

int topo_costs_key(const struct topo_costs *c, size_t i, const char **cls,
		   const char **name, double *v)
{
	if (i >= NKEYS)
		return 0;
	if (cls != NULL)
		*cls = keys[i].cls;
	if (name != NULL)
		*name = keys[i].name;
	if (v != NULL)
		*v = c != NULL && keys[i].offset + sizeof(double) <= c->size
			 ? value(c, i)
			 : value(&defaults, i);
	return 1;
}
