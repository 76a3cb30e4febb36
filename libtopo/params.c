/*
 * params.c - the parameter structs of the replay (struct topo_plan_params,
 * struct topo_run_params): their initialisers, which set the documented
 * defaults, and the reading of a caller's struct of any version (those
 * two, and the prediction's and the schedule writers' params).
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
 * Adding a field: append it, give it a default in *_defaults and a line in
 * *_read, and make 0 mean what older versions did.  It must not lie in
 * the tail padding of a released version (neither struct has any today:
 * 104 and 56 bytes on LP64, ending on a field): a program built against
 * that version may leave those bytes unset, and they would be read as the
 * new field.  Add fields in 8-byte units, or with an explicit member for
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

/* Sets the fields of p that lie within its first size bytes to their
 * defaults for op. */
static void plan_defaults(struct topo_plan_params *p, size_t size,
			  enum topo_op op)
{
	typedef struct topo_plan_params P;

	p->size = size;
	p->op = op;
	if (HAVE(P, algorithm, size))
		p->algorithm = NULL;
	if (HAVE(P, root, size))
		p->root = -1;
	if (HAVE(P, bytes, size))
		p->bytes = op == TOPO_OP_BARRIER ? 0 : 8;
	if (HAVE(P, type, size))
		p->type = topo_op_reduces(op) ? TOPO_INT32 : TOPO_INT8;
	if (HAVE(P, redop, size))
		p->redop = TOPO_SUM;
	if (HAVE(P, segment, size))
		p->segment = 0;
	if (HAVE(P, chunk, size))
		p->chunk = 0;
	if (HAVE(P, timeout, size))
		p->timeout = 0;
	if (HAVE(P, progress, size))
		p->progress = NULL;
	if (HAVE(P, progress_ctx, size))
		p->progress_ctx = NULL;
	if (HAVE(P, elapsed, size))
		p->elapsed = 0;
	if (HAVE(P, predict_only, size))
		p->predict_only = 0;
}

static void run_defaults(struct topo_run_params *p, size_t size)
{
	typedef struct topo_run_params R;

	p->size = size;
	if (HAVE(R, threads, size))
		p->threads = 0;
	if (HAVE(R, iterations, size))
		p->iterations = 1;
	if (HAVE(R, timeout, size))
		p->timeout = 60;
	if (HAVE(R, progress, size))
		p->progress = NULL;
	if (HAVE(R, progress_ctx, size))
		p->progress_ctx = NULL;
	if (HAVE(R, elapsed, size))
		p->elapsed = 0;
	if (HAVE(R, verify, size))
		p->verify = TOPO_VERIFY_EVERY;
	if (HAVE(R, reserved, size))
		p->reserved = 0;
}

int topo_plan_params_init(struct topo_plan_params *p, size_t size,
			  enum topo_op op)
{
	/* A size beyond any struct is garbage: nothing of p is touched. */
	if (p == NULL || size > MAX_SIZE)
		return TOPO_EARG;
	memset(p, 0, size);
	if (size < PLAN_MIN_SIZE)
		return TOPO_EARG;
	plan_defaults(p, size, op);
	return (unsigned)op >= TOPO_OP_COUNT ? TOPO_EARG : 0;
}

int topo_run_params_init(struct topo_run_params *p, size_t size)
{
	if (p == NULL || size > MAX_SIZE)
		return TOPO_EARG;
	memset(p, 0, size);
	if (size < RUN_MIN_SIZE)
		return TOPO_EARG;
	run_defaults(p, size);
	return 0;
}

/* Checks the size of a caller's struct `name` (this version's is `known`
 * bytes, the least acceptable `min`) and copies what this version knows of
 * it into *copy, zero beyond what the caller's holds. */
static int read_struct(void *copy, const void *given, size_t min, size_t known,
		       const char *name, const char *init, topo_error *err)
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
	memset(copy, 0, known);
	memcpy(copy, given, size < known ? size : known);
	return 0;
}

int topo__plan_params_read(struct topo_plan_params *q,
			   const struct topo_plan_params *params,
			   topo_error *err)
{
	typedef struct topo_plan_params P;
	struct topo_plan_params given;
	size_t size;
	int rc;

	rc = read_struct(&given, params, PLAN_MIN_SIZE, sizeof(given),
			 "topo_plan_params", "topo_plan_params_init", err);
	if (rc != 0)
		return rc;
	size = given.size;
	plan_defaults(q, sizeof(*q), given.op);
	if (HAVE(P, algorithm, size))
		q->algorithm = given.algorithm;
	if (HAVE(P, root, size))
		q->root = given.root;
	if (HAVE(P, bytes, size))
		q->bytes = given.bytes;
	if (HAVE(P, type, size))
		q->type = given.type;
	if (HAVE(P, redop, size))
		q->redop = given.redop;
	if (HAVE(P, segment, size))
		q->segment = given.segment;
	if (HAVE(P, chunk, size))
		q->chunk = given.chunk;
	if (HAVE(P, timeout, size))
		q->timeout = given.timeout;
	if (HAVE(P, progress, size))
		q->progress = given.progress;
	if (HAVE(P, progress_ctx, size))
		q->progress_ctx = given.progress_ctx;
	if (HAVE(P, elapsed, size))
		q->elapsed = given.elapsed;
	if (HAVE(P, predict_only, size))
		q->predict_only = given.predict_only;
	return 0;
}

int topo__run_params_read(struct topo_run_params *q,
			  const struct topo_run_params *params, topo_error *err)
{
	typedef struct topo_run_params R;
	struct topo_run_params given;
	size_t size;
	int rc;

	run_defaults(q, sizeof(*q));
	if (params == NULL)
		return 0;
	rc = read_struct(&given, params, RUN_MIN_SIZE, sizeof(given),
			 "topo_run_params", "topo_run_params_init", err);
	if (rc != 0)
		return rc;
	size = given.size;
	if (HAVE(R, threads, size))
		q->threads = given.threads;
	if (HAVE(R, iterations, size))
		q->iterations = given.iterations;
	if (HAVE(R, timeout, size))
		q->timeout = given.timeout;
	if (HAVE(R, progress, size))
		q->progress = given.progress;
	if (HAVE(R, progress_ctx, size))
		q->progress_ctx = given.progress_ctx;
	if (HAVE(R, elapsed, size))
		q->elapsed = given.elapsed;
	if (HAVE(R, verify, size))
		q->verify = given.verify;
	if (HAVE(R, reserved, size))
		q->reserved = given.reserved;
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

int topo__predict_params_read(struct topo_predict_params *q,
			      const struct topo_predict_params *params,
			      topo_error *err)
{
	typedef struct topo_predict_params Q;
	struct topo_predict_params given;
	size_t size;
	int rc;

	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	if (params == NULL)
		return 0;
	rc = read_struct(&given, params, sizeof(size_t), sizeof(given),
			 "topo_predict_params", "topo_predict_params_init",
			 err);
	if (rc != 0)
		return rc;
	size = given.size;
	if (HAVE(Q, costs, size))
		q->costs = given.costs;
	if (HAVE(Q, timeout, size))
		q->timeout = given.timeout;
	if (HAVE(Q, progress, size))
		q->progress = given.progress;
	if (HAVE(Q, progress_ctx, size))
		q->progress_ctx = given.progress_ctx;
	if (HAVE(Q, elapsed, size))
		q->elapsed = given.elapsed;
	return 0;
}

int topo__emit_params_read(struct topo_emit_params *q,
			   const struct topo_emit_params *params,
			   topo_error *err)
{
	typedef struct topo_emit_params Q;
	struct topo_emit_params given;
	size_t size;
	int rc;

	memset(q, 0, sizeof(*q));
	q->size = sizeof(*q);
	if (params == NULL)
		return 0;
	rc = read_struct(&given, params, sizeof(size_t), sizeof(given),
			 "topo_emit_params", "topo_emit_params_init", err);
	if (rc != 0)
		return rc;
	size = given.size;
	if (HAVE(Q, costs, size))
		q->costs = given.costs;
	if (HAVE(Q, timeout, size))
		q->timeout = given.timeout;
	if (HAVE(Q, elapsed, size))
		q->elapsed = given.elapsed;
	if (HAVE(Q, max_bytes, size))
		q->max_bytes = given.max_bytes;
	if (HAVE(Q, progress, size))
		q->progress = given.progress;
	if (HAVE(Q, progress_ctx, size))
		q->progress_ctx = given.progress_ctx;
	return 0;
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
	rc = read_struct(&given, c, sizeof(size_t), sizeof(given),
			 "topo_costs", "topo_costs_init", err);
	if (rc != 0)
		return rc;
	/* The caller's costs, field by field as far as its struct goes;
	 * its size stops at a double, every field being one. */
	size = given.size < sizeof(given) ? given.size : sizeof(given);
	memcpy((char *)q + sizeof(size_t), (const char *)&given + sizeof(size_t),
	       size - sizeof(size_t));
	q->size = sizeof(*q);
	return 0;
}
