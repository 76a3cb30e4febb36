/*
 * params.c - the parameter structs (struct topo_plan_params,
 * struct topo_run_params, the prediction's and the schedule writers'
 * params): their initialisers, which set the documented defaults, and the
 * reading of a caller's struct of any version.
 *
 * Each struct starts with size, the sizeof the caller was compiled with.
 * A field is read when it lies wholly within those size bytes, and takes
 * its default otherwise, so a program built against an older, smaller
 * struct keeps working.  A caller's struct larger than this version's
 * (built against a later header) is read as far as this version knows it,
 * provided the bytes beyond are all 0: the later initialiser leaves them 0
 * when run through this library, and a field a later version added must
 * keep 0 for "not used", so that only a program that asks for something
 * this version cannot do is refused (the rule of Linux's extensible
 * structs, clone3 and openat2).  Sizes of 0, too small to hold the fields
 * without defaults, or beyond any plausible struct are refused with
 * TOPO_EARG: a struct that was only zero-initialised must not be read as
 * "root endpoint 0, type int8".
 *
 * Adding a field: append it, give it a default in *_defaults (if not 0)
 * and a line in *_fields, and make 0 mean what older versions did.  It
 * must not lie in the tail padding of a released version (neither struct
 * has any today: 104 and 56 bytes on LP64, ending on a field): a program
 * built against that version may leave those bytes unset, and they would
 * be read as the new field.  Add fields in 8-byte units, or with an explicit member for
 * what would be padding.
 */
#define TOPO_INTERNAL
#include "plan/plan.h"

#include <string.h>

/* Does a struct of `size` bytes hold all of `field`? */
#define HAVE(type, field, size)                                                \
	(offsetof(type, field) + sizeof(((type *)0)->field) <= (size))

/* The smallest sizes: a plan must say its operation; every run parameter
 * has a default. */
#define PLAN_MIN_SIZE                                                          \
	(offsetof(struct topo_plan_params, op) + sizeof(enum topo_op))
#define RUN_MIN_SIZE sizeof(size_t)
/* Larger than any version of the structs will be: a size beyond it is
 * garbage, and the bytes it claims are not read. */
#define MAX_SIZE 4096

/* Where a field lies in its struct. */
struct field {
	size_t offset;
	size_t len;
};
#define FIELD(type, f) {offsetof(type, f), sizeof(((type *)0)->f)}
#define NFIELDS(a) (sizeof(a) / sizeof((a)[0]))

typedef struct topo_plan_params P;
typedef struct topo_run_params R;
typedef struct topo_predict_params PR;
typedef struct topo_emit_params E;

/* Each struct's fields after size (and op, which a plan always has),
 * which a caller's struct may or may not hold. */
static const struct field plan_fields[] = {
    FIELD(P, algorithm),    FIELD(P, root),    FIELD(P, bytes),
    FIELD(P, type),	    FIELD(P, redop),   FIELD(P, segment),
    FIELD(P, chunk),	    FIELD(P, timeout), FIELD(P, progress),
    FIELD(P, progress_ctx), FIELD(P, elapsed), FIELD(P, predict_only),
};
static const struct field run_fields[] = {
    FIELD(R, threads),	FIELD(R, iterations),	FIELD(R, timeout),
    FIELD(R, progress), FIELD(R, progress_ctx), FIELD(R, elapsed),
    FIELD(R, verify),	FIELD(R, reserved),
};
static const struct field predict_fields[] = {
    FIELD(PR, costs),	     FIELD(PR, timeout), FIELD(PR, progress),
    FIELD(PR, progress_ctx), FIELD(PR, elapsed),
};
static const struct field emit_fields[] = {
    FIELD(E, costs),	 FIELD(E, timeout),  FIELD(E, elapsed),
    FIELD(E, max_bytes), FIELD(E, progress), FIELD(E, progress_ctx),
};

/* Copies from `from` into `to` (two structs of one type) the fields that
 * lie wholly within the first size bytes; the others, and the padding,
 * keep what `to` holds.  A size may end inside a field: that field's
 * bytes are not a value. */
static void take_fields(void *to, const void *from, size_t size,
			const struct field *fields, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (fields[i].offset + fields[i].len <= size)
			memcpy((char *)to + fields[i].offset,
			       (const char *)from + fields[i].offset,
			       fields[i].len);
}

/* The documented defaults, in a struct of this version's size; the
 * fields not named are 0 (or NULL). */
static struct topo_plan_params plan_defaults(enum topo_op op)
{
	return (struct topo_plan_params){
	    .size = sizeof(struct topo_plan_params),
	    .op = op,
	    .root = -1,
	    .bytes = op == TOPO_OP_BARRIER ? 0 : 8,
	    .type = topo_op_reduces(op) ? TOPO_INT32 : TOPO_INT8,
	    .redop = TOPO_SUM,
	};
}

static struct topo_run_params run_defaults(void)
{
	return (struct topo_run_params){
	    .size = sizeof(struct topo_run_params),
	    .iterations = 1,
	    .timeout = 60,
	    .verify = TOPO_VERIFY_EVERY,
	};
}

/* The start of every initialiser: a caller's struct of size bytes set to
 * 0 but for its size.  A size beyond any struct is garbage: nothing of p
 * is touched; one too small to hold the fields without defaults (`min`)
 * leaves p all 0. */
static int init_struct(void *p, size_t size, size_t min)
{
	if (p == NULL || size > MAX_SIZE)
		return TOPO_EARG;
	memset(p, 0, size);
	if (size < min)
		return TOPO_EARG;
	memcpy(p, &size, sizeof(size)); /* the first member of each */
	return 0;
}

int topo_plan_params_init(struct topo_plan_params *p, size_t size,
			  enum topo_op op)
{
	struct topo_plan_params d = plan_defaults(op);
	int rc;

	rc = init_struct(p, size, PLAN_MIN_SIZE);
	if (rc != 0)
		return rc;
	take_fields(p, &d, size, plan_fields, NFIELDS(plan_fields));
	p->op = op;
	return (unsigned)op >= TOPO_OP_COUNT ? TOPO_EARG : 0;
}

int topo_run_params_init(struct topo_run_params *p, size_t size)
{
	struct topo_run_params d = run_defaults();
	int rc;

	rc = init_struct(p, size, RUN_MIN_SIZE);
	if (rc != 0)
		return rc;
	take_fields(p, &d, size, run_fields, NFIELDS(run_fields));
	return 0;
}

/* Every field of these two defaults to 0. */
int topo_predict_params_init(struct topo_predict_params *p, size_t size)
{
	return init_struct(p, size, sizeof(size_t));
}

int topo_emit_params_init(struct topo_emit_params *p, size_t size)
{
	return init_struct(p, size, sizeof(size_t));
}

/* Checks the size of a caller's struct `name` (this version's is `known`
 * bytes, the least acceptable `min`) and sets *size to it. */
static int check_struct(const void *given, size_t min, size_t known,
			const char *name, const char *init, size_t *sizep,
			topo_error *err)
{
	size_t size;

	memcpy(&size, given, sizeof(size)); /* the first member of each */
	if (size == 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "struct %s is not initialised (its size is "
				 "0): call %s() first",
				 name, init);
	if (size < min || size > MAX_SIZE)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "struct %s has size %zu, not that of any "
				 "version of it (%zu to %d bytes; this one: "
				 "%zu): initialise it with %s(p, sizeof(*p), "
				 "...)",
				 name, size, min, MAX_SIZE, known, init);
	for (size_t i = known; i < size; i++)
		if (((const unsigned char *)given)[i] != 0)
			return topo__err(
			    err, TOPO_EARG, NULL, NULL,
			    "struct %s of %zu bytes sets byte %zu, but libtopo "
			    "%s knows only its first %zu: a field of a later "
			    "version is not supported by this library",
			    name, size, i, TOPO_VERSION_STRING, known);
	*sizep = size;
	return 0;
}

/* check_struct(), then copies what this version knows of the struct into
 * *copy, zero beyond what the caller's holds. */
static int read_struct(void *copy, const void *given, size_t min, size_t known,
		       const char *name, const char *init, topo_error *err)
{
	size_t size;
	int rc;

	rc = check_struct(given, min, known, name, init, &size, err);
	if (rc != 0)
		return rc;
	memset(copy, 0, known);
	memcpy(copy, given, size < known ? size : known);
	return 0;
}

int topo__plan_params_read(struct topo_plan_params *q,
			   const struct topo_plan_params *params,
			   topo_error *err)
{
	struct topo_plan_params given;
	int rc;

	rc = read_struct(&given, params, PLAN_MIN_SIZE, sizeof(given),
			 "topo_plan_params", "topo_plan_params_init", err);
	if (rc != 0)
		return rc;
	*q = plan_defaults(given.op);
	take_fields(q, &given, given.size, plan_fields, NFIELDS(plan_fields));
	return 0;
}

int topo__run_params_read(struct topo_run_params *q,
			  const struct topo_run_params *params, topo_error *err)
{
	struct topo_run_params given;
	int rc;

	*q = run_defaults();
	if (params == NULL)
		return 0;
	rc = read_struct(&given, params, RUN_MIN_SIZE, sizeof(given),
			 "topo_run_params", "topo_run_params_init", err);
	if (rc != 0)
		return rc;
	take_fields(q, &given, given.size, run_fields, NFIELDS(run_fields));
	if (q->verify != TOPO_VERIFY_EVERY && q->verify != TOPO_VERIFY_LAST)
		return topo__err(
		    err, TOPO_EARG, NULL, NULL,
		    "topo_run_params: verify is %d, not "
		    "TOPO_VERIFY_EVERY (0) or TOPO_VERIFY_LAST (1)",
		    q->verify);
	if (q->reserved != 0)
		return topo__err(
		    err, TOPO_EARG, NULL, NULL,
		    "topo_run_params: reserved is %d; it must be 0",
		    q->reserved);
	return 0;
}

/* A caller's struct whose fields all default to 0, read into *q (this
 * version's size); params NULL reads as all defaults. */
static int read_zeroed(void *q, size_t known, const void *params,
		       const struct field *fields, size_t n, const char *name,
		       const char *init, topo_error *err)
{
	size_t size;
	int rc;

	memset(q, 0, known);
	memcpy(q, &known, sizeof(known)); /* its size, the first member */
	if (params == NULL)
		return 0;
	rc =
	    check_struct(params, sizeof(size_t), known, name, init, &size, err);
	if (rc != 0)
		return rc;
	/* Only the bytes of whole fields within size are read. */
	take_fields(q, params, size, fields, n);
	return 0;
}

int topo__predict_params_read(struct topo_predict_params *q,
			      const struct topo_predict_params *params,
			      topo_error *err)
{
	return read_zeroed(q, sizeof(*q), params, predict_fields,
			   NFIELDS(predict_fields), "topo_predict_params",
			   "topo_predict_params_init", err);
}

int topo__emit_params_read(struct topo_emit_params *q,
			   const struct topo_emit_params *params,
			   topo_error *err)
{
	return read_zeroed(q, sizeof(*q), params, emit_fields,
			   NFIELDS(emit_fields), "topo_emit_params",
			   "topo_emit_params_init", err);
}

int topo__costs_read(struct topo_costs *q, const struct topo_costs *c,
		     topo_error *err)
{
	struct topo_costs given;
	size_t size;
	int rc;

	topo__costs_default(q);
	if (c == NULL)
		return 0;
	rc = read_struct(&given, c, sizeof(size_t), sizeof(given), "topo_costs",
			 "topo_costs_init", err);
	if (rc != 0)
		return rc;
	/* The caller's costs, field by field as far as its struct goes;
	 * its size stops at a double, every field being one. */
	size = given.size < sizeof(given) ? given.size : sizeof(given);
	memcpy((char *)q + sizeof(size_t),
	       (const char *)&given + sizeof(size_t), size - sizeof(size_t));
	q->size = sizeof(*q);
	return 0;
}
