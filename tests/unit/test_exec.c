/*
 * test_exec.c - the replay engine without the algorithms: names, the
 * elementwise reductions, the plan builder (CSR, wait counts, the checks of
 * topo__plan_finish), the in-process transport, and topo_plan_run on plans
 * built here by hand with topo__plan_* (so the engine is tested apart from
 * the algorithm files), then topo_plan_new's own checks and defaults.
 *
 * Runs check: data lands in the right member (the verifier of verify.c
 * compares every byte with the operation's definition), dependencies order
 * the bytes (a chain of copies through 4096 members), REDUCE messages into
 * one member do not interleave (thousands of members reducing into one, and
 * eight threads delivering directly), receipt counters catch missing and
 * duplicated deliveries, shm/net counts, timeouts, failed deliveries, the
 * refusal of buffers larger than memory (nothing allocated) and every
 * allocation failure.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"
#include "run/report.h"

#include "all_algos.h"
#include "check.h"
#include "timeouts.h"

#include <float.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif

/* ---------------------------------------------------------------------- */
/* Fixtures */

/* A machine whose network is a binary tree of nodes. */
static topo_machine *machine(int32_t nodes, const int32_t *tasks, int32_t eps)
{
	int32_t *parent = malloc((size_t)nodes * sizeof(int32_t));
	topo_machine *m = NULL;
	topo_error err;

	for (int32_t i = 0; i < nodes; i++)
		parent[i] = i == 0 ? -1 : (i - 1) / 2;
	topo_error_clear(&err);
	if (topo__machine_build(&m, "test", nodes, tasks, eps, "tree", parent,
				&err) != 0) {
		fprintf(stderr, "machine_build: %s\n", err.text);
		exit(2);
	}
	free(parent);
	return m;
}

static topo_group *group_of(const topo_machine *m, const char *name,
			    const int32_t *eps, int32_t n)
{
	int32_t *mem = topo__mallocarray((size_t)n, sizeof(int32_t));
	topo_group *g = NULL;

	for (int32_t i = 0; i < n; i++)
		mem[i] = eps != NULL ? eps[i] : i;
	if (topo__group_from_members(&g, m, name, "hand", mem, n) != 0)
		exit(2);
	return g;
}

/* The engine only needs a tree's group and root: hand plans use this. */
static topo_tree fake_tree(const topo_group *g, int32_t root)
{
	topo_tree t;

	memset(&t, 0, sizeof(t));
	t.g = g;
	t.n = g->size;
	t.root = root;
	return t;
}

/* The 12-endpoint machine most cases use: nodes of 2, 1 and 3 tasks of 2
 * endpoints, so node 0 holds endpoints 0..3, node 1 4..5, node 2 6..11. */
static topo_machine *small_machine(void)
{
	static const int32_t tasks[] = {2, 1, 3};

	return machine(3, tasks, 2);
}

/* A plan as topo_plan_new would set it up before the algorithm runs. */
static struct topo_plan *hand_plan(const topo_tree *t, enum topo_op op,
				   size_t bytes, enum topo_type type,
				   enum topo_redop redop)
{
	struct topo_plan *p = topo__calloc(1, sizeof(*p));

	p->t = t;
	p->n = t->n;
	p->root = t->root;
	snprintf(p->algorithm, sizeof(p->algorithm), "hand");
	p->params.algorithm = p->algorithm;
	p->params.op = op;
	p->params.bytes = bytes;
	p->params.type = type;
	p->params.redop = redop;
	p->params.root = t->g->members[t->root];
	p->type_size = topo_type_size(type);
	return p;
}

static void bufsize(struct topo_plan *p, enum topo__buf b, int32_t r,
		    int64_t bytes)
{
	topo_error err;

	topo_error_clear(&err);
	if (topo__plan_bufsize(p, b, r, bytes, &err) != 0)
		CHECK(0, "topo__plan_bufsize: %s", err.text);
}

static int64_t slot(struct topo_plan *p, int32_t member, int32_t expect)
{
	topo_error err;
	int64_t s = -1;

	topo_error_clear(&err);
	if (topo__plan_slot(p, member, expect, &s, &err) != 0)
		CHECK(0, "topo__plan_slot: %s", err.text);
	return s;
}

static int64_t msg(struct topo_plan *p, int kind, int32_t src, int sbuf,
		   int64_t soff, int32_t dst, int dbuf, int64_t doff,
		   int64_t len, int64_t s)
{
	struct topo__msg m;
	topo_error err;
	int64_t id = -1;

	memset(&m, 0, sizeof(m));
	m.src = src;
	m.dst = dst;
	m.sbuf = (uint8_t)sbuf;
	m.dbuf = (uint8_t)dbuf;
	m.kind = (uint8_t)kind;
	m.soff = soff;
	m.doff = doff;
	m.len = len;
	m.slot = s;
	topo_error_clear(&err);
	if (topo__plan_msg(p, &m, &id, &err) != 0)
		CHECK(0, "topo__plan_msg: %s", err.text);
	return id;
}

static void dep(struct topo_plan *p, int64_t before, int64_t after)
{
	topo_error err;

	topo_error_clear(&err);
	if (topo__plan_dep(p, before, after, &err) != 0)
		CHECK(0, "topo__plan_dep: %s", err.text);
}

static void finish(struct topo_plan *p)
{
	topo_error err;

	topo_error_clear(&err);
	CHECK(topo__plan_finish(p, &err) == 0, "%s", err.text);
}

/* Run parameters with the defaults but for these three. */
static struct topo_run_params run_params(int threads, int iterations,
					 double timeout)
{
	struct topo_run_params rp;

	topo_run_params_init(&rp, sizeof(rp));
	rp.threads = threads;
	rp.iterations = iterations;
	rp.timeout = timeout;
	return rp;
}

static topo_report *run(const struct topo_plan *p, int threads, int iterations,
			double timeout)
{
	struct topo_run_params rp = run_params(threads, iterations, timeout);
	topo_report *r = NULL;
	topo_error err;
	int rc;

	topo_error_clear(&err);
	rc = topo_plan_run(p, &rp, &r, &err);
	CHECK(rc == 0 && r != NULL, "topo_plan_run: %d: %s", rc, err.text);
	if (r == NULL)
		exit(2);
	return r;
}

/* Prints a report's errors (when a check about it failed). */
static void dump(const topo_report *r)
{
	for (size_t i = 0; i < topo_report_error_count(r); i++) {
		const char *kind, *detail;
		int32_t ep = topo_report_error(r, i, &kind, &detail);

		fprintf(stderr, "  endpoint %d: %s: %s\n", ep, kind, detail);
	}
}

static void expect_verified(const topo_report *r, const char *what)
{
	CHECK(topo_report_verified(r), "%s: not verified", what);
	CHECK_INT(topo_report_error_total(r), 0);
	if (!topo_report_verified(r))
		dump(r);
}

/* Whether some error names endpoint ep with that kind. */
static int has_error(const topo_report *r, int32_t ep, const char *kind)
{
	for (size_t i = 0; i < topo_report_error_count(r); i++) {
		const char *k, *d;

		if (topo_report_error(r, i, &k, &d) == ep &&
		    strcmp(k, kind) == 0)
			return 1;
	}
	return 0;
}

/* Whether every error names endpoint ep. */
static int only_endpoint(const topo_report *r, int32_t ep)
{
	for (size_t i = 0; i < topo_report_error_count(r); i++)
		if (topo_report_error(r, i, NULL, NULL) != ep)
			return 0;
	return 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------------- */
/* Names */

static void test_names(void)
{
	static const char *const ops[] = {
	    "bcast",	 "scatter",	   "gather",   "reduce", "allreduce",
	    "allgather", "reduce-scatter", "alltoall", "barrier"};
	static const int rooted[] = {1, 1, 1, 1, 0, 0, 0, 0, 0};
	static const int reduces[] = {0, 0, 0, 1, 1, 0, 1, 0, 0};
	static const char *const types[] = {
	    "int8",   "int16",	"int32",  "int64", "uint8",
	    "uint16", "uint32", "uint64", "float", "double"};
	static const size_t sizes[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};
	static const char *const redops[] = {"sum",  "prod", "min", "max",
					     "band", "bor",  "bxor"};
	topo_error err;

	CHECK_INT(TOPO_OP_COUNT, sizeof(ops) / sizeof(ops[0]));
	for (int i = 0; i < TOPO_OP_COUNT; i++) {
		enum topo_op op = TOPO_OP_REDUCE;

		CHECK_STR(topo_op_name((enum topo_op)i), ops[i]);
		CHECK_INT(topo_op_has_root((enum topo_op)i), rooted[i]);
		CHECK_INT(topo_op_reduces((enum topo_op)i), reduces[i]);
		topo_error_clear(&err);
		CHECK_INT(topo_op_parse(&op, ops[i], &err), 0);
		CHECK_INT(op, i);
	}
	for (int i = 0; i < TOPO_TYPE_COUNT; i++) {
		enum topo_type t = TOPO_DOUBLE;

		CHECK_STR(topo_type_name((enum topo_type)i), types[i]);
		CHECK_INT(topo_type_size((enum topo_type)i), sizes[i]);
		topo_error_clear(&err);
		CHECK_INT(topo_type_parse(&t, types[i], &err), 0);
		CHECK_INT(t, i);
	}
	for (int i = 0; i < TOPO_REDOP_COUNT; i++) {
		enum topo_redop o = TOPO_BXOR;

		CHECK_STR(topo_redop_name((enum topo_redop)i), redops[i]);
		topo_error_clear(&err);
		CHECK_INT(topo_redop_parse(&o, redops[i], &err), 0);
		CHECK_INT(o, i);
	}
	CHECK_STR(topo_op_name(TOPO_OP_COUNT), "unknown");
	CHECK_STR(topo_type_name(TOPO_TYPE_COUNT), "unknown");
	CHECK_INT(topo_type_size(TOPO_TYPE_COUNT), 0);
	CHECK_STR(topo_redop_name(TOPO_REDOP_COUNT), "unknown");
	{
		enum topo_op op = TOPO_OP_GATHER;
		enum topo_type t = TOPO_UINT16;
		enum topo_redop o = TOPO_MAX;

		topo_error_clear(&err);
		CHECK_INT(topo_op_parse(&op, "Bcast", &err), TOPO_EARG);
		CHECK_STR(err.text,
			  "unknown operation \"Bcast\" (valid: bcast, scatter, "
			  "gather, reduce, allreduce, allgather, reduce-scatter, "
			  "alltoall, barrier)");
		CHECK_INT(op, TOPO_OP_GATHER);
		topo_error_clear(&err);
		CHECK_INT(topo_type_parse(&t, "int", &err), TOPO_EARG);
		CHECK_STR(err.text,
			  "unknown type \"int\" (valid: int8, int16, int32, "
			  "int64, uint8, uint16, uint32, uint64, float, "
			  "double)");
		CHECK_INT(t, TOPO_UINT16);
		topo_error_clear(&err);
		CHECK_INT(topo_redop_parse(&o, "", &err), TOPO_EARG);
		CHECK_STR(err.text, "unknown operator \"\" (valid: sum, prod, "
				    "min, max, band, bor, bxor)");
		topo_error_clear(&err);
		CHECK_INT(topo_redop_parse(&o, NULL, &err), TOPO_EARG);
		CHECK_STR(err.text, "no operator given (valid: sum, prod, "
				    "min, max, band, bor, bxor)");
		CHECK_INT(o, TOPO_MAX);
	}
}

/* ---------------------------------------------------------------------- */
/* topo__reduce: every type x operator against the C operators, applied to
 * one element at a time in a wider type (__int128 for the integers) and
 * converted back, which wraps modulo 2^bits. */

#define INT_EXPECT(name, T)                                                    \
	static void name(int op, const void *pa, const void *pb, void *pw)     \
	{                                                                      \
		T a, b, w;                                                     \
		memcpy(&a, pa, sizeof(T));                                     \
		memcpy(&b, pb, sizeof(T));                                     \
		switch (op) {                                                  \
		case TOPO_SUM:                                                 \
			w = (T)((__int128)a + (__int128)b);                    \
			break;                                                 \
		case TOPO_PROD:                                                \
			w = (T)((unsigned __int128)a * (unsigned __int128)b);  \
			break;                                                 \
		case TOPO_MIN:                                                 \
			w = a < b ? a : b;                                     \
			break;                                                 \
		case TOPO_MAX:                                                 \
			w = a > b ? a : b;                                     \
			break;                                                 \
		case TOPO_BAND:                                                \
			w = (T)(a & b);                                        \
			break;                                                 \
		case TOPO_BOR:                                                 \
			w = (T)(a | b);                                        \
			break;                                                 \
		default:                                                       \
			w = (T)(a ^ b);                                        \
		}                                                              \
		memcpy(pw, &w, sizeof(T));                                     \
	}

#define FLT_EXPECT(name, T)                                                    \
	static void name(int op, const void *pa, const void *pb, void *pw)     \
	{                                                                      \
		T a, b, w;                                                     \
		memcpy(&a, pa, sizeof(T));                                     \
		memcpy(&b, pb, sizeof(T));                                     \
		switch (op) {                                                  \
		case TOPO_SUM:                                                 \
			w = a + b;                                             \
			break;                                                 \
		case TOPO_PROD:                                                \
			w = a * b;                                             \
			break;                                                 \
		case TOPO_MIN:                                                 \
			w = a < b ? a : b;                                     \
			break;                                                 \
		default:                                                       \
			w = a > b ? a : b;                                     \
		}                                                              \
		memcpy(pw, &w, sizeof(T));                                     \
	}

INT_EXPECT(expect_i8, int8_t)
INT_EXPECT(expect_i16, int16_t)
INT_EXPECT(expect_i32, int32_t)
INT_EXPECT(expect_i64, int64_t)
INT_EXPECT(expect_u8, uint8_t)
INT_EXPECT(expect_u16, uint16_t)
INT_EXPECT(expect_u32, uint32_t)
INT_EXPECT(expect_u64, uint64_t)
FLT_EXPECT(expect_f, float)
FLT_EXPECT(expect_d, double)

typedef void (*expect_fn)(int op, const void *a, const void *b, void *w);

/* In the order of enum topo_type. */
static const expect_fn expects[TOPO_TYPE_COUNT] = {
    expect_i8,	expect_i16, expect_i32, expect_i64, expect_u8,
    expect_u16, expect_u32, expect_u64, expect_f,   expect_d};

/* A random element: any bits for integers (every 5th equal to the other
 * operand's, for ties), eighths in -125..125 for floats (exact sums). */
static void random_elem(enum topo_type type, unsigned char *out,
			const unsigned char *other, size_t i)
{
	uint64_t x = check_rand64();
	double d = (double)check_rand_range(-1000, 1000) / 8;
	float f = (float)d;

	if (other != NULL && i % 5 == 0)
		memcpy(out, other, topo_type_size(type));
	else if (type == TOPO_FLOAT)
		memcpy(out, &f, sizeof(f));
	else if (type == TOPO_DOUBLE)
		memcpy(out, &d, sizeof(d));
	else
		memcpy(out, &x, topo_type_size(type));
}

/* One random case of type x op: 1..67 elements at an odd address (the
 * buffers of a plan need no alignment). */
static void reduce_case(enum topo_type type, enum topo_redop op)
{
	size_t ts = topo_type_size(type);
	size_t count = (size_t)check_rand_range(1, 67), len = count * ts;
	unsigned char *d = malloc(len + 1), *s = malloc(len + 1);
	unsigned char *want = malloc(len);
	long bad = -1;

	for (size_t i = 0; i < count; i++) {
		random_elem(type, d + 1 + i * ts, NULL, i);
		random_elem(type, s + 1 + i * ts, d + 1 + i * ts, i);
		expects[type](op, d + 1 + i * ts, s + 1 + i * ts,
			      want + i * ts);
	}
	topo__reduce(type, op, d + 1, s + 1, len);
	for (size_t i = 0; i < count && bad < 0; i++)
		if (memcmp(d + 1 + i * ts, want + i * ts, ts) != 0)
			bad = (long)i;
	CHECK(bad < 0, "%s %s: element %ld of %zu wrong", topo_type_name(type),
	      topo_redop_name(op), bad, count);
	free(d);
	free(s);
	free(want);
}

static void test_reduce_ops(void)
{
	for (int rep = 0; rep < 20; rep++) {
		for (int t = 0; t < TOPO_TYPE_COUNT; t++) {
			int ops = t == TOPO_FLOAT || t == TOPO_DOUBLE
				      ? TOPO_BAND
				      : TOPO_REDOP_COUNT;

			for (int op = 0; op < ops; op++)
				reduce_case((enum topo_type)t,
					    (enum topo_redop)op);
		}
	}
	/* Wrapping at the edges, by hand. */
	{
		int8_t a = 127, b = 1;
		uint8_t c = 200, e = 2;
		int64_t f = INT64_MAX, g = 1, h = INT64_MIN, k = -1;
		int16_t m = -32768, n = -1;

		topo__reduce(TOPO_INT8, TOPO_SUM, &a, &b, 1);
		CHECK_INT(a, -128);
		topo__reduce(TOPO_UINT8, TOPO_PROD, &c, &e, 1);
		CHECK_INT(c, 144);
		topo__reduce(TOPO_INT64, TOPO_SUM, &f, &g, 8);
		CHECK(f == INT64_MIN, "INT64_MAX + 1 = %lld", (long long)f);
		topo__reduce(TOPO_INT64, TOPO_PROD, &h, &k, 8);
		CHECK(h == INT64_MIN, "INT64_MIN * -1 = %lld", (long long)h);
		topo__reduce(TOPO_INT16, TOPO_PROD, &m, &n, 2);
		CHECK_INT(m, -32768);
	}
	{
		double a[3] = {1.5, -2, 7}, b[3] = {0.25, -3, -7};

		topo__reduce(TOPO_DOUBLE, TOPO_MIN, a, b, sizeof(a));
		CHECK(a[0] == 0.25 && a[1] == -3 && a[2] == -7,
		      "double min: %g %g %g", a[0], a[1], a[2]);
		topo__reduce(TOPO_DOUBLE, TOPO_PROD, a, b, 0); /* nothing */
		CHECK(a[0] == 0.25, "len 0 changed %g", a[0]);
	}
}

/* The reference for overlapping operands: element by element, in order,
 * each element of src read before that element of dst is written. */
static void sequential_sum_i32(unsigned char *d, const unsigned char *s,
			       size_t count)
{
	for (size_t i = 0; i < count; i++) {
		int32_t x, y;

		memcpy(&x, d + 4 * i, 4);
		memcpy(&y, s + 4 * i, 4);
		x = (int32_t)((uint32_t)x + (uint32_t)y);
		memcpy(d + 4 * i, &x, 4);
	}
}

/* The operators defined on type t: the bitwise ones not on floats. */
static int kernel_ops(int t)
{
	return t == TOPO_FLOAT || t == TOPO_DOUBLE ? TOPO_BAND
						   : TOPO_REDOP_COUNT;
}

/* A case of the long kernels: random elements of type t at a + shift and
 * b + 2 * shift (buffers of 4n + 64 bytes), and want = a OP b.  Returns
 * the number of elements. */
static size_t kernel_case(int t, int op, size_t shift, unsigned char *a,
			  unsigned char *b, unsigned char *want, size_t n)
{
	size_t ts = topo_type_size((enum topo_type)t),
	       count = (4 * n - 8) / ts - shift * 7;

	for (size_t i = 0; i < count; i++) {
		random_elem((enum topo_type)t, a + shift + i * ts, NULL, i);
		random_elem((enum topo_type)t, b + 2 * shift + i * ts,
			    a + shift + i * ts, i);
		expects[t](op, a + shift + i * ts, b + 2 * shift + i * ts,
			   want + i * ts);
	}
	return count;
}

/* Long operands (whole vector blocks and a tail) at every alignment, and
 * overlapping ones, which must behave as the element-by-element loop. */
static void test_reduce_kernels(void)
{
	enum { N = 1000 };
	unsigned char *a = malloc(4 * N + 64), *b = malloc(4 * N + 64),
		      *want = malloc(4 * N + 64);
	long bad = -1;

	for (int t = 0; t < TOPO_TYPE_COUNT; t++) {
		size_t ts = topo_type_size((enum topo_type)t);

		for (int op = 0; op < kernel_ops(t); op++) {
			for (size_t shift = 0; shift < 3; shift++) {
				size_t count =
				    kernel_case(t, op, shift, a, b, want, N);
				topo__reduce((enum topo_type)t,
					     (enum topo_redop)op, a + shift,
					     b + 2 * shift, count * ts);
				if (memcmp(a + shift, want, count * ts) != 0 &&
				    bad < 0)
					bad = t * 100 + op * 10 + (long)shift;
			}
		}
	}
	CHECK(bad < 0, "long kernel wrong: type %ld op %ld shift %ld",
	      bad / 100, bad / 10 % 10, bad % 10);

	/* Overlapping operands: dst == src doubles; dst 3 elements after
	 * src (or before) reads what it wrote (or not yet). */
	for (int back = 0; back < 2; back++) {
		for (int i = 0; i < N; i++) {
			int32_t v = i % 17 - 8;

			memcpy(a + 4 * i, &v, 4);
		}
		memcpy(want, a, 4 * N);
		if (back) {
			sequential_sum_i32(want + 12, want, N - 3);
			topo__reduce(TOPO_INT32, TOPO_SUM, a + 12, a,
				     4 * (N - 3));
		} else {
			sequential_sum_i32(want, want + 12, N - 3);
			topo__reduce(TOPO_INT32, TOPO_SUM, a, a + 12,
				     4 * (N - 3));
		}
		CHECK(memcmp(a, want, 4 * N) == 0,
		      "overlapping sum (dst %s src) wrong",
		      back ? "after" : "before");
	}
	for (int i = 0; i < N; i++) {
		int32_t v = i - 500;

		memcpy(a + 4 * i, &v, 4);
	}
	topo__reduce(TOPO_INT32, TOPO_SUM, a, a, 4 * N);
	{
		int32_t first, last;

		memcpy(&first, a, 4);
		memcpy(&last, a + 4 * (N - 1), 4);
		CHECK_INT(first, -1000);
		CHECK_INT(last, 998);
	}
	memset(a, 0x5a, 100);
	topo__reduce(TOPO_UINT8, TOPO_BXOR, a, a, 100);
	CHECK(a[0] == 0 && a[99] == 0, "x ^ x: %d %d", a[0], a[99]);
	free(a);
	free(b);
	free(want);
}

/* topo__reduce3, dst = a OP src: every type x operator, at three
 * misalignments of each operand, against the C operators; the operands
 * untouched; overlapping ones as copy-then-combine. */
static void test_reduce3(void)
{
	enum { N = 1000 };
	unsigned char *a = malloc(4 * N + 64), *b = malloc(4 * N + 64),
		      *d = malloc(4 * N + 64), *want = malloc(4 * N + 64),
		      *a0 = malloc(4 * N + 64), *b0 = malloc(4 * N + 64);
	long bad = -1, touched = -1;

	/* whole buffers are compared below: every byte defined */
	memset(a, 0, 4 * N + 64);
	memset(b, 0, 4 * N + 64);
	for (int t = 0; t < TOPO_TYPE_COUNT; t++) {
		size_t ts = topo_type_size((enum topo_type)t);

		for (int op = 0; op < kernel_ops(t); op++) {
			for (size_t shift = 0; shift < 3; shift++) {
				size_t count =
				    kernel_case(t, op, shift, a, b, want, N);
				memcpy(a0, a, 4 * N + 64);
				memcpy(b0, b, 4 * N + 64);
				memset(d, 0xa5, 4 * N + 64);
				topo__reduce3((enum topo_type)t,
					      (enum topo_redop)op,
					      d + 3 - shift, a + shift,
					      b + 2 * shift, count * ts);
				if (memcmp(d + 3 - shift, want, count * ts) !=
					0 &&
				    bad < 0)
					bad = t * 100 + op * 10 + (long)shift;
				/* nothing written around the result, nothing
				 * in the operands */
				if ((d[2 - shift] != 0xa5 ||
				     d[3 - shift + count * ts] != 0xa5 ||
				     memcmp(a, a0, 4 * N + 64) != 0 ||
				     memcmp(b, b0, 4 * N + 64) != 0) &&
				    touched < 0)
					touched =
					    t * 100 + op * 10 + (long)shift;
			}
		}
	}
	CHECK(bad < 0, "three-operand kernel wrong: type %ld op %ld shift %ld",
	      bad / 100, bad / 10 % 10, bad % 10);
	CHECK(touched < 0,
	      "three-operand kernel wrote outside its result: type %ld op "
	      "%ld shift %ld",
	      touched / 100, touched / 10 % 10, touched % 10);
	/* dst is a: the same as dst OP= src; dst overlapping src: as a copy
	 * of a, then the combine that reads what it wrote */
	for (int i = 0; i < N; i++) {
		int32_t v = i % 17 - 8, w = 3 * i - 1000;

		memcpy(a + 4 * i, &v, 4);
		memcpy(b + 4 * i, &w, 4);
	}
	memcpy(want, a, 4 * N);
	topo__reduce(TOPO_INT32, TOPO_SUM, want, b, 4 * N);
	topo__reduce3(TOPO_INT32, TOPO_SUM, a, a, b, 4 * N);
	CHECK(memcmp(a, want, 4 * N) == 0, "three-operand sum, dst == a");
	memcpy(d, b, 4 * N);
	memcpy(want, b, 4 * N);
	memmove(want + 12, a, 4 * (N - 3));
	sequential_sum_i32(want + 12, want, N - 3);
	topo__reduce3(TOPO_INT32, TOPO_SUM, d + 12, a, d, 4 * (N - 3));
	CHECK(memcmp(d, want, 4 * N) == 0,
	      "three-operand sum, dst overlapping src");
	free(a);
	free(b);
	free(d);
	free(want);
	free(a0);
	free(b0);
}

/* ---------------------------------------------------------------------- */
/* The builder */

static void test_builder(void)
{
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p =
	    hand_plan(&t, TOPO_OP_BCAST, 8, TOPO_INT8, TOPO_SUM);
	int64_t a, b, c, d;
	topo_error err;
	struct topo__msg mm;

	for (int32_t r = 0; r < 4; r++) {
		bufsize(p, TOPO__SEND, r, 16);
		bufsize(p, TOPO__RECV, r, 16);
	}
	a = msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 0, TOPO__RECV, 0, 16, -1);
	b = msg(p, TOPO__COPY, 0, TOPO__RECV, 0, 1, TOPO__RECV, 0, 16, -1);
	c = msg(p, TOPO__COPY, 0, TOPO__RECV, 0, 2, TOPO__RECV, 0, 16, -1);
	d = msg(p, TOPO__COPY, 1, TOPO__RECV, 8, 3, TOPO__RECV, 0, 8, -1);
	CHECK_INT(a, 0);
	CHECK_INT(d, 3);
	dep(p, a, b);
	dep(p, a, c);
	dep(p, b, d);
	dep(p, c, d);
	finish(p);
	CHECK_INT(p->ntransport, 3);
	CHECK_INT(topo_plan_messages(p), 3);
	CHECK_INT(topo_plan_buffer_bytes(p), 8 * 16);
	CHECK_INT(p->msg[0].nwait, 0);
	CHECK_INT(p->msg[1].nwait, 1);
	CHECK_INT(p->msg[2].nwait, 1);
	CHECK_INT(p->msg[3].nwait, 2);
	CHECK_INT(p->succ_off[0], 0);
	CHECK_INT(p->succ_off[1], 2);
	CHECK_INT(p->succ_off[2], 3);
	CHECK_INT(p->succ_off[3], 4);
	CHECK_INT(p->succ_off[4], 4);
	CHECK_INT(p->succ[0], 1);
	CHECK_INT(p->succ[1], 2);
	CHECK_INT(p->succ[2], 3);
	CHECK_INT(p->succ[3], 3);
	CHECK(p->dep == NULL, "dependency list kept after finish");
	finish(p); /* a second call changes nothing */
	CHECK_INT(p->msg[3].nwait, 2);

	/* Argument errors. */
	topo_error_clear(&err);
	CHECK_INT(topo__plan_dep(p, 1, 1, &err), TOPO_EARG);
	CHECK_STR(err.text, "plan: message 1 cannot wait for message 1 "
			    "(messages: 0..3)");
	topo_error_clear(&err);
	CHECK_INT(topo__plan_dep(p, 0, 4, &err), TOPO_EARG);
	topo_error_clear(&err);
	CHECK_INT(topo__plan_bufsize(p, TOPO__WORK, 12, 8, &err), TOPO_EARG);
	CHECK_STR(err.text, "plan: buffer 2 of member 12 cannot hold 8 bytes "
			    "(members: 0..11)");
	topo_error_clear(&err);
	CHECK_INT(topo__plan_slot(p, -1, 1, NULL, &err), TOPO_EARG);
	CHECK_STR(err.text, "plan: member -1 cannot expect 1 deliveries "
			    "(members: 0..11)");
	/* A block of counters: consecutive, owned per member or by one
	 * member, expecting nothing until set. */
	{
		int64_t first = -1, before = p->nslots;

		topo_error_clear(&err);
		CHECK_INT(topo__plan_slots(p, 12, -1, &first, &err), 0);
		CHECK_INT(first, before);
		CHECK_INT(p->nslots, before + 12);
		for (int32_t i = 0; i < 12; i++) {
			CHECK_INT(p->slot_member[first + i], i);
			CHECK_INT(p->slot_expect[first + i], 0);
		}
		CHECK_INT(topo__plan_slots(p, 5, 7, &first, &err), 0);
		CHECK_INT(first, before + 12);
		for (int32_t i = 0; i < 5; i++)
			CHECK_INT(p->slot_member[first + i], 7);
		CHECK_INT(topo__plan_slots(p, 5, -1, &first, &err), TOPO_EARG);
		CHECK_STR(err.text, "plan: a block of one counter per member "
				    "needs 12 counters, not 5");
		CHECK_INT(p->nslots, before + 17);
	}
	topo_plan_free(p);

	/* What topo__plan_finish refuses. */
#define BAD_PLAN(setup, want)                                                  \
	do {                                                                   \
		p = hand_plan(&t, TOPO_OP_REDUCE, 8, TOPO_INT32, TOPO_SUM);    \
		bufsize(p, TOPO__SEND, 1, 16);                                 \
		bufsize(p, TOPO__RECV, 2, 8);                                  \
		setup;                                                         \
		topo_error_clear(&err);                                        \
		CHECK_INT(topo__plan_finish(p, &err), TOPO_EINVAL);            \
		CHECK_STR(err.text, want);                                     \
		CHECK(p->succ_off == NULL && p->succ == NULL,                  \
		      "refused plan kept its successor lists");                \
		topo_plan_free(p);                                             \
	} while (0)
	BAD_PLAN(msg(p, TOPO__COPY, 1, TOPO__SEND, 8, 2, TOPO__RECV, 0, 8, -1);
		 msg(p, TOPO__COPY, 1, TOPO__SEND, 9, 2, TOPO__RECV, 0, 8, -1),
		 "plan: message 1 moves 8 bytes from SEND+9 of member 1 (16 "
		 "bytes) to RECV+0 of member 2 (8 bytes): out of bounds");
	BAD_PLAN(msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 2, TOPO__RECV, 4, 8, -1),
		 "plan: message 0 moves 8 bytes from SEND+0 of member 1 (16 "
		 "bytes) to RECV+4 of member 2 (8 bytes): out of bounds");
	BAD_PLAN(msg(p, TOPO__COPY, 1, TOPO__WORK, 0, 2, TOPO__RECV, 0, 1, -1),
		 "plan: message 0 moves 1 bytes from WORK+0 of member 1 (0 "
		 "bytes) to RECV+0 of member 2 (8 bytes): out of bounds");
	BAD_PLAN(
	    msg(p, TOPO__REDUCE, 1, TOPO__SEND, 0, 2, TOPO__RECV, 0, 6, -1),
	    "plan: message 0 reduces a partial element");
	BAD_PLAN(msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 12, TOPO__RECV, 0, 0, -1),
		 "plan: message 0 names a member that does not exist");
	BAD_PLAN(msg(p, TOPO__COPY, 1, 3, 0, 2, TOPO__RECV, 0, 0, -1),
		 "plan: message 0 names a buffer that does not exist");
	BAD_PLAN(msg(p, 2, 1, TOPO__SEND, 0, 2, TOPO__RECV, 0, 0, -1),
		 "plan: message 0 has an unknown kind");
	BAD_PLAN(msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 2, TOPO__RECV, 0, -1, -1),
		 "plan: message 0 has a negative offset or length");
	BAD_PLAN(msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 2, TOPO__RECV, 0, 8, 0),
		 "plan: message 0 names a receipt counter that does not "
		 "exist");
	BAD_PLAN(for (int i = 0; i < 4; i++) msg(p, TOPO__COPY, 1, TOPO__SEND,
						 0, 2, TOPO__RECV, 0, 8, -1);
		 dep(p, 0, 1); dep(p, 1, 2); dep(p, 2, 3);
		 dep(p, 3, 1),
		 "plan: 3 messages wait on a cycle of dependencies (the "
		 "first is message 1)");
#undef BAD_PLAN

	/* Allocation failures in the builder leave a plan that frees. */
	for (long k = 0; k < 40; k++) {
		int rc = 0;

		p = hand_plan(&t, TOPO_OP_BCAST, 8, TOPO_INT8, TOPO_SUM);
		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo__plan_bufsize(p, TOPO__SEND, 0, 8, &err);
		for (int i = 0; i < 200 && rc == 0; i++) {
			memset(&mm, 0, sizeof(mm));
			mm.dbuf = TOPO__RECV;
			mm.slot = -1;
			rc = topo__plan_msg(p, &mm, NULL, &err);
			if (rc == 0 && i > 0)
				rc = topo__plan_dep(p, i - 1, i, &err);
			if (rc == 0)
				rc = topo__plan_slot(p, 0, 1, NULL, &err);
		}
		if (rc == 0)
			rc = topo__plan_finish(p, &err);
		topo__alloc_fail_after(-1);
		CHECK(rc == 0 || (rc == TOPO_ENOMEM &&
				  strcmp(err.text, "out of memory") == 0),
		      "k %ld: rc %d: %s", k, rc, err.text);
		topo_plan_free(p);
		if (rc == 0)
			break;
	}
	topo_plan_free(NULL);
	topo_group_free(g);
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* The in-process transport, driven directly */

struct hammer {
	const struct topo__transport_ops *tr;
	void *state;
	const struct topo_plan *p;
	int64_t first, count;
	int rc;
};

static void *hammer(void *arg)
{
	struct hammer *h = arg;

	for (int64_t i = h->first; i < h->first + h->count; i++)
		h->rc |= h->tr->deliver(h->state, h->p, i);
	return NULL;
}

/* Opens the arena of p's 12 members: each buffer non-NULL, aligned (64
 * bytes from 64 up, else 8), and filled with a byte of its own (ASan sees
 * any overrun), which must still be there once all are filled: members
 * never share bytes.  Returns 1 when all of that holds. */
static int open_arena(const struct topo__transport_ops *tr,
		      const struct topo_plan *p, void **state,
		      unsigned char *buf[12][3])
{
	topo_error err;
	int ok = 1;

	topo_error_clear(&err);
	CHECK_INT(tr->open(state, p, &err), 0);
	for (int32_t r = 0; r < 12; r++) {
		for (int b = 0; b < 3; b++) {
			int64_t size = topo__bufsize(p, b, r);

			buf[r][b] = tr->buffer(*state, r, b);
			ok &= buf[r][b] != NULL;
			if (size >= 64)
				ok &= (uintptr_t)buf[r][b] % 64 == 0;
			else if (size > 0)
				ok &= (uintptr_t)buf[r][b] % 8 == 0;
			memset(buf[r][b], 0x10 * b + r, (size_t)size);
		}
	}
	for (int32_t r = 0; r < 12; r++)
		for (int b = 0; b < 3; b++)
			for (int64_t i = 0; i < topo__bufsize(p, b, r); i++)
				ok &= buf[r][b][i] == 0x10 * b + r;
	return ok;
}

/* The transport's fill (the run's reset): every byte of every member's
 * buffer of kind b set, no byte of another kind touched.  Returns 1 when
 * that holds. */
static int fill_kind(const struct topo__transport_ops *tr,
		     const struct topo_plan *p, void *state,
		     unsigned char *buf[12][3], int b)
{
	static unsigned char before[12][3][512];
	int ok = 1;

	for (int32_t r = 0; r < 12; r++)
		for (int k = 0; k < 3; k++)
			memcpy(before[r][k], buf[r][k],
			       (size_t)topo__bufsize(p, k, r));
	tr->fill(state, b, 0xa5);
	for (int32_t r = 0; r < 12; r++)
		for (int k = 0; k < 3; k++)
			for (int64_t i = 0; i < topo__bufsize(p, k, r); i++)
				ok &= buf[r][k][i] ==
				      (k == b ? 0xa5 : before[r][k][i]);
	return ok;
}

/* Buffer sizes the same for all members but one at most are kept without
 * an array (struct topo__bufsizes), whether set for all at once or member
 * by member (compacted by topo__plan_finish), and the arena lays them out
 * without overlap, aligned as the array's layout is: member r at r times
 * the aligned size, the member of its own size after them all.  Two
 * members of their own sizes keep the array. */
static void test_bufsizes_compact(void)
{
	const struct topo__transport_ops *tr = &topo__transport_inproc;
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p =
	    hand_plan(&t, TOPO_OP_REDUCE, 8, TOPO_INT32, TOPO_SUM);
	void *state = NULL;
	unsigned char *buf[12][3];
	topo_error err;
	int ok = 1;

	/* SEND: member 3 alone; RECV: 24 bytes each, member 7 100, set
	 * for all first; WORK: 72 bytes each, member by member. */
	bufsize(p, TOPO__SEND, 3, 200);
	topo_error_clear(&err);
	CHECK_INT(topo__plan_bufsize_all(p, TOPO__RECV, 24, &err), 0);
	bufsize(p, TOPO__RECV, 7, 100);
	bufsize(p, TOPO__RECV, 8, 24); /* already so: no array */
	for (int32_t r = 0; r < 12; r++)
		bufsize(p, TOPO__WORK, r, 72);
	CHECK(p->buf[TOPO__SEND].each == NULL &&
		  p->buf[TOPO__RECV].each == NULL,
	      "sizes of one member, or of all but one, made an array");
	CHECK(p->buf[TOPO__WORK].each != NULL,
	      "WORK set member by member: an array while planning");
	msg(p, TOPO__COPY, 3, TOPO__SEND, 0, 7, TOPO__RECV, 0, 100, -1);
	finish(p);
	CHECK(p->buf[TOPO__WORK].each == NULL,
	      "topo__plan_finish kept an array of 12 equal sizes");
	for (int32_t r = 0; r < 12; r++) {
		CHECK_INT(topo__bufsize(p, TOPO__SEND, r), r == 3 ? 200 : 0);
		CHECK_INT(topo__bufsize(p, TOPO__RECV, r), r == 7 ? 100 : 24);
		CHECK_INT(topo__bufsize(p, TOPO__WORK, r), 72);
	}
	CHECK_INT(topo_plan_buffer_bytes(p), 200 + 11 * 24 + 100 + 12 * 72);
	for (int b = 0; b < 3; b++)
		CHECK(topo__has_buf(p, b), "kind %d has buffers", b);

	CHECK(open_arena(tr, p, &state, buf),
	      "compact buffers misaligned or overlapping");
	for (int i = 0; i < 100; i++)
		buf[3][TOPO__SEND][i] = (unsigned char)(i + 1);
	CHECK_INT(tr->deliver(state, p, 0), 0);
	for (int i = 0; i < 100; i++)
		ok &= buf[7][TOPO__RECV][i] == i + 1;
	CHECK(ok, "COPY into the member of its own size landed wrong");
	for (int b = 0; b < 3; b++)
		CHECK(fill_kind(tr, p, state, buf, b),
		      "fill of compact kind %d missed or overran a slice", b);
	tr->close(state);
	topo_plan_free(p);

	/* Two members of their own sizes: the array stays. */
	p = hand_plan(&t, TOPO_OP_REDUCE, 8, TOPO_INT32, TOPO_SUM);
	for (int32_t r = 0; r < 12; r++)
		bufsize(p, TOPO__RECV, r, r == 2 || r == 9 ? 16 : 8);
	msg(p, TOPO__COPY, 2, TOPO__RECV, 0, 9, TOPO__RECV, 0, 16, -1);
	finish(p);
	CHECK(p->buf[TOPO__RECV].each != NULL,
	      "sizes of two members of their own lost");
	CHECK_INT(topo_plan_buffer_bytes(p), 10 * 8 + 2 * 16);
	CHECK(!topo__has_buf(p, TOPO__SEND), "no SEND was sized");
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

static topo_plan *plan_with(const topo_tree *t, const void *params,
			    const char *what);

/* The default: copies stream from arenas of twice the last-level cache,
 * 32 MiB taken where the system describes none.  Buffers of the cache's
 * size are mostly still cached, and the streaming stores would have to
 * evict them (transport_inproc.c). */
static void test_stream_run(void)
{
	const int64_t mib = (int64_t)1 << 20;

	CHECK_INT(topo__stream_run(32 * mib, 32 * mib), 0);
	CHECK_INT(topo__stream_run(64 * mib - 1, 32 * mib), 0);
	CHECK_INT(topo__stream_run(64 * mib, 32 * mib), 1);
	CHECK_INT(topo__stream_run(16 * mib, 8 * mib), 1);
	CHECK_INT(topo__stream_run(16 * mib - 1, 8 * mib), 0);
	CHECK_INT(topo__stream_run(64 * mib - 1, 0), 0);
	CHECK_INT(topo__stream_run(64 * mib, 0), 1);
	CHECK_INT(topo__stream_run(64 * mib, -1), 1);
	CHECK_INT(topo__stream_run(INT64_MAX, 32 * mib), 1);
	CHECK_INT(topo__stream_run(INT64_MAX, INT64_MAX), 0);
}

/* The cache streaming's rule takes: what its sharing CPUs can hold, at
 * most 16 MiB each (a virtual machine describing its host's 300 MiB L3
 * holds about 32), the size as described where who shares it is not
 * known; and the sysfs CPU lists that count them. */
static void test_llc_share(void)
{
	const int64_t mib = (int64_t)1 << 20;

	CHECK_INT(topo__llc_share(300 * mib, 2), 32 * mib);
	CHECK_INT(topo__llc_share(32 * mib, 2), 32 * mib);
	CHECK_INT(topo__llc_share(33 * mib, 2), 32 * mib);
	CHECK_INT(topo__llc_share(8 * mib, 4), 8 * mib);
	CHECK_INT(topo__llc_share(320 * mib, 64), 320 * mib);
	CHECK_INT(topo__llc_share(300 * mib, 1), 16 * mib);
	CHECK_INT(topo__llc_share(300 * mib, 0), 300 * mib);
	CHECK_INT(topo__llc_share(300 * mib, -3), 300 * mib);
	CHECK_INT(topo__llc_share(0, 2), 0);
	CHECK_INT(topo__llc_share(-1, 2), 0);
	CHECK_INT(topo__llc_share(INT64_MAX, INT64_MAX), INT64_MAX);
	CHECK_INT(topo__stream_run(64 * mib, topo__llc_share(300 * mib, 2)), 1);
	CHECK_INT(topo__stream_run(64 * mib - 1,
				   topo__llc_share(300 * mib, 2)),
		  0);

	CHECK_INT(topo__cpu_list_count("0-1\n"), 2);
	CHECK_INT(topo__cpu_list_count("0"), 1);
	CHECK_INT(topo__cpu_list_count("7\n"), 1);
	CHECK_INT(topo__cpu_list_count("0-3,8,10-11\n"), 7);
	CHECK_INT(topo__cpu_list_count("0-63"), 64);
	CHECK_INT(topo__cpu_list_count(""), 0);
	CHECK_INT(topo__cpu_list_count("\n"), 0);
	CHECK_INT(topo__cpu_list_count("3-1"), 0);
	CHECK_INT(topo__cpu_list_count("0-"), 0);
	CHECK_INT(topo__cpu_list_count("0,"), 0);
	CHECK_INT(topo__cpu_list_count("-1"), 0);
	CHECK_INT(topo__cpu_list_count("0-1x"), 0);
	CHECK_INT(topo__cpu_list_count("ff"), 0);
	CHECK_INT(topo__cpu_list_count("16777216"), 1);
	CHECK_INT(topo__cpu_list_count("0-16777217"), 0);
	CHECK_INT(topo__cpu_list_count("0-99999999999999999999999"), 0);
}

/* Streamed copies (topo__tune.stream_copies): bytes at any alignment and
 * length land exactly, those around them untouched, whether streaming is
 * forced, refused or left to the arena's size; and whole runs of the
 * operations that copy large blocks verify with it forced. */
static void test_stream(void)
{
	const struct topo__transport_ops *tr = &topo__transport_inproc;
	int was = topo__tune.stream_copies;
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 0);
	const int64_t big = (int64_t)1 << 20;
	/* {soff, doff, len}: aligned, odd, tails of several lengths mod 64,
	 * at and below the 64 KiB from which copies stream */
	static const int64_t cases[][3] = {
	    {0, 0, 65536},	{5, 3, 300001}, {64, 17, 524288 + 63},
	    {1, 0, 65536 + 48}, {7, 9, 1000},	{0, 1, 65535},
	    {3, 2, 100000 + 31}};

	/* modes -1..1 with arenas from malloc, then 0 and 1 with arenas
	 * mapped (topo__tune.map_min 0: alloc.c's topo__block_alloc) */
	for (int k = 0; k < 5; k++) {
		int mode = k < 3 ? k - 1 : k - 3;
		size_t map_was = topo__tune.map_min;
		struct topo_plan *p =
		    hand_plan(&t, TOPO_OP_BCAST, 8, TOPO_INT8, TOPO_SUM);
		const size_t nc = sizeof(cases) / sizeof(cases[0]);
		unsigned char *src, *dst;
		void *state = NULL;
		topo_error err;
		int ok = 1;

		topo__tune.stream_copies = mode;
		if (k >= 3)
			topo__tune.map_min = 0;
		bufsize(p, TOPO__SEND, 1, big);
		bufsize(p, TOPO__RECV, 2, big);
		for (size_t c = 0; c < nc; c++)
			msg(p, TOPO__COPY, 1, TOPO__SEND, cases[c][0], 2,
			    TOPO__RECV, cases[c][1], cases[c][2], -1);
		finish(p);
		topo_error_clear(&err);
		CHECK_INT(tr->open(&state, p, &err), 0);
		topo__tune.map_min = map_was;
		src = tr->buffer(state, 1, TOPO__SEND);
		dst = tr->buffer(state, 2, TOPO__RECV);
		/* a mapped arena's first member at its mapping's start */
		if (k >= 3)
			CHECK(((uintptr_t)tr->buffer(state, 0, TOPO__SEND) &
			       (((uintptr_t)2 << 20) - 1)) == 0,
			      "mapped arena on a 2 MiB boundary");
		for (int64_t i = 0; i < big; i++)
			src[i] = (unsigned char)(i * 7 + i / 251);
		for (size_t c = 0; c < nc; c++) {
			int64_t so = cases[c][0], d = cases[c][1],
				len = cases[c][2];

			memset(dst, 0xa5, (size_t)big);
			CHECK_INT(tr->deliver(state, p, (int64_t)c), 0);
			for (int64_t i = 0; i < big; i++)
				ok &= dst[i] == (i >= d && i < d + len
						     ? src[so + i - d]
						     : 0xa5);
			CHECK(ok, "mode %d: copy %zu (%lld bytes from %lld to "
				  "%lld) landed wrong",
			      mode, c, (long long)len, (long long)so,
			      (long long)d);
		}
		tr->close(state);
		topo_plan_free(p);
		/* the mapped arenas returned (leak checkers see the heap) */
		CHECK_INT(topo__blocks_mapped(), 0);
	}

	/* Which copies stream: 64 KiB and more between two buffers, not a
	 * local step within one, nor a REDUCE, nor a copy whose bytes a
	 * successor reads (as its source, or as the accumulator of a
	 * REDUCE); none when refused, none in an arena smaller than the
	 * cache (auto). */
	for (int mode = -1; mode <= 1; mode++) {
		struct topo_plan *p =
		    hand_plan(&t, TOPO_OP_REDUCE, 8, TOPO_INT32, TOPO_SUM);
		void *state = NULL;
		topo_error err;
		int64_t c[11];

		topo__tune.stream_copies = mode;
		for (int32_t r = 1; r <= 3; r++) {
			bufsize(p, TOPO__SEND, r, big);
			bufsize(p, TOPO__RECV, r, big);
		}
		c[0] = msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 2, TOPO__RECV, 0,
			   65536, -1);
		c[1] = msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 2, TOPO__RECV, 0,
			   65535, -1);
		c[2] = msg(p, TOPO__COPY, 3, TOPO__SEND, 0, 3, TOPO__RECV, 0,
			   big, -1);
		c[3] = msg(p, TOPO__COPY, 1, TOPO__RECV, 0, 1, TOPO__RECV,
			   70000, 65536, -1);
		c[4] = msg(p, TOPO__REDUCE, 1, TOPO__SEND, 0, 3, TOPO__RECV,
			   0, 65536, -1);
		/* forwarded: a successor copies part of it on */
		c[5] = msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 2, TOPO__RECV,
			   200000, 65536, -1);
		c[6] = msg(p, TOPO__COPY, 2, TOPO__RECV, 200100, 1, TOPO__RECV,
			   300000, 1000, -1);
		dep(p, c[5], c[6]);
		/* combined into: a successor REDUCEs into its last bytes */
		c[7] = msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 2, TOPO__RECV,
			   400000, 65536, -1);
		c[8] = msg(p, TOPO__REDUCE, 3, TOPO__SEND, 0, 2, TOPO__RECV,
			   400000 + 65000, 536, -1);
		dep(p, c[7], c[8]);
		/* a successor that reads the bytes just after it */
		c[9] = msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 2, TOPO__RECV,
			   600000, 65536, -1);
		c[10] = msg(p, TOPO__COPY, 2, TOPO__RECV, 600000 + 65536, 1,
			    TOPO__RECV, 400000, 1000, -1);
		dep(p, c[9], c[10]);
		finish(p);
		topo_error_clear(&err);
		CHECK_INT(tr->open(&state, p, &err), 0);
		CHECK_INT(topo__inproc_streams(state, p, c[0]), mode == 1);
		CHECK_INT(topo__inproc_streams(state, p, c[1]), 0);
		CHECK_INT(topo__inproc_streams(state, p, c[2]), mode == 1);
		CHECK_INT(topo__inproc_streams(state, p, c[3]), 0);
		CHECK_INT(topo__inproc_streams(state, p, c[4]), 0);
		CHECK_INT(topo__inproc_streams(state, p, c[5]), 0);
		CHECK_INT(topo__inproc_streams(state, p, c[7]), 0);
		CHECK_INT(topo__inproc_streams(state, p, c[9]), mode == 1);
		tr->close(state);
		topo_plan_free(p);
	}

	/* Whole runs, streaming forced: 6 members, blocks of 300 KiB
	 * (bcast and reduce-scatter in 64 KiB segments). */
	topo__tune.stream_copies = 1;
	{
		static const enum topo_op ops[] = {
		    TOPO_OP_SCATTER, TOPO_OP_GATHER, TOPO_OP_ALLGATHER,
		    TOPO_OP_ALLTOALL, TOPO_OP_BCAST, TOPO_OP_REDUCE_SCATTER};
		static const int32_t tasks[] = {6};
		topo_machine *m6 = machine(1, tasks, 1);
		topo_group *g6 = group_of(m6, "world", NULL, 6);
		topo_tree *t6 = NULL;
		topo_error err;

		topo_error_clear(&err);
		CHECK_INT(topo_tree_new(&t6, g6, "physical", &err), 0);
		for (size_t i = 0; t6 != NULL && i < sizeof(ops) / sizeof(ops[0]);
		     i++) {
			struct topo_plan_params pp;
			topo_plan *p = NULL;
			topo_report *r;
			char what[64];

			topo_plan_params_init(&pp, sizeof(pp), ops[i]);
			pp.bytes = 300 * 1024 + 4;
			pp.type = TOPO_INT32;
			p = plan_with(t6, &pp, topo_op_name(ops[i]));
			if (p == NULL)
				continue;
			snprintf(what, sizeof(what), "%s of 300 KiB, streamed",
				 topo_op_name(ops[i]));
			r = run(p, 2, 2, 0);
			expect_verified(r, what);
			topo_report_free(r);
			topo_plan_free(p);
		}
		topo_tree_free(t6);
		topo_group_free(g6);
		topo_machine_free(m6);
	}
	topo__tune.stream_copies = was;
	topo_group_free(g);
	topo_machine_free(m);
}

/* Fused copies (transport_inproc.c): which copies park and which
 * REDUCEs combine them, and runs that are right whichever combine comes
 * first. */
static struct topo_plan *fuse_plan(const topo_tree *t, int64_t len,
				   bool write_send)
{
	struct topo_plan *p =
	    hand_plan(t, TOPO_OP_REDUCE, (size_t)len, TOPO_INT32, TOPO_SUM);
	int64_t c0, c1, r1, r2, r3, s0, s1;

	/* 0 <- {1 <- 3, 2}: member 1 accumulates 3's into its WORK */
	for (int32_t r = 0; r < 4; r++)
		bufsize(p, TOPO__SEND, r, len);
	bufsize(p, TOPO__RECV, 0, len);
	bufsize(p, TOPO__WORK, 1, len);
	s0 = slot(p, 0, 2);
	s1 = slot(p, 1, 1);
	c0 = msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 0, TOPO__RECV, 0, len, -1);
	c1 = msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 1, TOPO__WORK, 0, len, -1);
	r3 = msg(p, TOPO__REDUCE, 3, TOPO__SEND, 0, 1, TOPO__WORK, 0, len, s1);
	r1 = msg(p, TOPO__REDUCE, 1, TOPO__WORK, 0, 0, TOPO__RECV, 0, len, s0);
	r2 = msg(p, TOPO__REDUCE, 2, TOPO__SEND, 0, 0, TOPO__RECV, 0, len, s0);
	dep(p, c1, r3);
	dep(p, r3, r1);
	dep(p, c0, r1);
	dep(p, c0, r2);
	if (write_send) /* a step within member 3's SEND, after all */
		dep(p, r1,
		    msg(p, TOPO__COPY, 3, TOPO__SEND, 0, 3, TOPO__SEND, 4, 4,
			-1));
	finish(p);
	return p;
}

static void test_fuse(void)
{
	const struct topo__transport_ops *tr = &topo__transport_inproc;
	static const int32_t tasks[] = {4};
	topo_machine *m = machine(1, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, 4);
	topo_tree t = fake_tree(g, 0);
	const int64_t big = 4096;
	int was = topo__tune.fuse_copies;
	void *state = NULL;
	topo_error err;

	/* The tree above: both copies park; r3 combines c1, r1 and r2 both
	 * may combine c0 (the first to come does).  Runs of every size on
	 * 1, 2 and 4 threads end verified, fused or not. */
	for (int fuse = 0; fuse <= 1; fuse++) {
		static const int64_t lens[] = {4, 16, 20, 4096, 65536 + 12};

		topo__tune.fuse_copies = fuse;
		for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
			struct topo_plan *p = fuse_plan(&t, lens[i], false);
			bool parks = fuse && lens[i] > TOPO__SMALL_COPY;

			/* the plan's table, whatever the transport does */
			CHECK_INT(p->fuse != NULL, lens[i] > TOPO__SMALL_COPY);
			if (p->fuse != NULL)
				CHECK_INT(p->fuse[3], 0);
			topo_error_clear(&err);
			CHECK_INT(tr->open(&state, p, &err), 0);
			CHECK_INT(topo__inproc_fused(state, p, 0),
				  parks ? 0 : -1);
			CHECK_INT(topo__inproc_fused(state, p, 1),
				  parks ? 1 : -1);
			CHECK_INT(topo__inproc_fused(state, p, 2),
				  parks ? 1 : -1);
			CHECK_INT(topo__inproc_fused(state, p, 3),
				  parks ? 0 : -1);
			CHECK_INT(topo__inproc_fused(state, p, 4),
				  parks ? 0 : -1);
			tr->close(state);
			state = NULL;
			for (int threads = 1; threads <= 4; threads *= 2) {
				topo_report *r = run(p, threads, 5, 60);
				char what[64];

				snprintf(what, sizeof(what),
					 "fused reduce of %lld bytes, fuse %d, "
					 "%d threads",
					 (long long)lens[i], fuse, threads);
				expect_verified(r, what);
				topo_report_free(r);
			}
			topo_plan_free(p);
		}
	}
	topo__tune.fuse_copies = 1;

	/* Copies that must not park, each in bytes of its own. */
	{
		struct topo_plan *p =
		    hand_plan(&t, TOPO_OP_REDUCE, 8, TOPO_INT32, TOPO_SUM);
		int64_t a, ra, ga, b, rb, c, rc_, d, rd, d2, rd2, e, re, ge, f,
		    rf;

		for (int32_t r = 0; r < 4; r++) {
			bufsize(p, TOPO__SEND, r, 8 * big);
			bufsize(p, TOPO__RECV, r, 8 * big);
			bufsize(p, TOPO__WORK, r, 8 * big);
		}
		/* a reader of the accumulator that waits for no combine */
		a = msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 0, TOPO__RECV, 0, big,
			-1);
		ra = msg(p, TOPO__REDUCE, 2, TOPO__SEND, 0, 0, TOPO__RECV, 0,
			 big, -1);
		ga = msg(p, TOPO__COPY, 0, TOPO__RECV, 0, 1, TOPO__RECV, 0, big,
			 -1);
		dep(p, a, ra);
		dep(p, a, ga);
		/* out of a WORK, not a SEND */
		b = msg(p, TOPO__COPY, 1, TOPO__WORK, 0, 1, TOPO__RECV, big,
			big, -1);
		rb = msg(p, TOPO__REDUCE, 2, TOPO__SEND, 0, 1, TOPO__RECV, big,
			 big, -1);
		dep(p, b, rb);
		/* a REDUCE into other bytes (8 further on) */
		c = msg(p, TOPO__COPY, 2, TOPO__SEND, 0, 2, TOPO__RECV, 0, big,
			-1);
		rc_ = msg(p, TOPO__REDUCE, 3, TOPO__SEND, 0, 2, TOPO__RECV, 8,
			  big - 8, -1);
		dep(p, c, rc_);
		/* a REDUCE of fewer bytes; one into another buffer */
		d = msg(p, TOPO__COPY, 3, TOPO__SEND, 0, 3, TOPO__WORK, 0, big,
			-1);
		rd = msg(p, TOPO__REDUCE, 0, TOPO__SEND, 0, 3, TOPO__WORK, 0,
			 big - 8, -1);
		dep(p, d, rd);
		d2 = msg(p, TOPO__COPY, 3, TOPO__SEND, big, 3, TOPO__WORK, big,
			 big, -1);
		rd2 = msg(p, TOPO__REDUCE, 1, TOPO__SEND, 0, 3, TOPO__RECV, big,
			  big, -1);
		dep(p, d2, rd2);
		/* these two may: a reader after the combine too, and a
		 * copy of 20 bytes */
		e = msg(p, TOPO__COPY, 0, TOPO__SEND, big, 0, TOPO__WORK, big,
			big, -1);
		re = msg(p, TOPO__REDUCE, 1, TOPO__SEND, 0, 0, TOPO__WORK, big,
			 big, -1);
		ge = msg(p, TOPO__COPY, 0, TOPO__WORK, big, 2, TOPO__WORK, 0,
			 big, -1);
		dep(p, e, re);
		dep(p, e, ge);
		dep(p, re, ge);
		f = msg(p, TOPO__COPY, 1, TOPO__SEND, 0, 1, TOPO__WORK, 0,
			TOPO__SMALL_COPY + 4, -1);
		rf = msg(p, TOPO__REDUCE, 0, TOPO__SEND, 0, 1, TOPO__WORK, 0,
			 TOPO__SMALL_COPY + 4, -1);
		dep(p, f, rf);
		finish(p);
		topo_error_clear(&err);
		CHECK_INT(tr->open(&state, p, &err), 0);
		CHECK_INT(topo__inproc_fused(state, p, a), -1);
		CHECK_INT(topo__inproc_fused(state, p, ra), -1);
		CHECK_INT(topo__inproc_fused(state, p, b), -1);
		CHECK_INT(topo__inproc_fused(state, p, rb), -1);
		CHECK_INT(topo__inproc_fused(state, p, c), -1);
		CHECK_INT(topo__inproc_fused(state, p, rc_), -1);
		CHECK_INT(topo__inproc_fused(state, p, d), -1);
		CHECK_INT(topo__inproc_fused(state, p, rd), -1);
		CHECK_INT(topo__inproc_fused(state, p, d2), -1);
		CHECK_INT(topo__inproc_fused(state, p, rd2), -1);
		CHECK_INT(topo__inproc_fused(state, p, e), (int)e);
		CHECK_INT(topo__inproc_fused(state, p, re), (int)e);
		CHECK_INT(topo__inproc_fused(state, p, ge), -1);
		CHECK_INT(topo__inproc_fused(state, p, f), (int)f);
		CHECK_INT(topo__inproc_fused(state, p, rf), (int)f);
		tr->close(state);
		state = NULL;
		topo_plan_free(p);
	}
	/* A plan that writes a SEND parks nothing. */
	{
		struct topo_plan *p = fuse_plan(&t, big, true);

		CHECK(p->fuse == NULL, "a plan writing a SEND fuses nothing");
		topo_error_clear(&err);
		CHECK_INT(tr->open(&state, p, &err), 0);
		for (int64_t i = 0; i < p->nmsg; i++)
			CHECK_INT(topo__inproc_fused(state, p, i), -1);
		tr->close(state);
		state = NULL;
		topo_plan_free(p);
	}
	topo__tune.fuse_copies = was;
	topo_group_free(g);
	topo_machine_free(m);
}

/*
 * Parts (exec.c): a message of at least topo__tune.split_min bytes may be
 * delivered in parts by several threads.  First the transport's side:
 * which messages may split, and that a part moves exactly its bytes,
 * copied, streamed or combined.  Then runs of every operation and
 * algorithm with parts made eagerly (topo__tune.split_eager: whether or not a
 * thread is idle), so that every run splits: each ends verified, with at
 * least one part a splittable message an iteration and at most one per
 * 192 of its bytes (halves of at least 256 - 64).
 */
static void check_part_bytes(const unsigned char *got, const unsigned char *was,
			     const unsigned char *want, int64_t len, int64_t lo,
			     int64_t hi, const char *what)
{
	int64_t bad = -1;

	for (int64_t j = 0; j < len && bad < 0; j++)
		if (got[j] != (j >= lo && j < hi ? want[j] : was[j]))
			bad = j;
	CHECK(bad < 0, "%s [%lld, %lld): byte %lld wrong", what, (long long)lo,
	      (long long)hi, (long long)bad);
}

static void test_part_transport(void)
{
	const struct topo__transport_ops *tr = &topo__transport_inproc;
	static const int32_t tasks[] = {4};
	topo_machine *m = machine(1, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, 4);
	topo_tree t = fake_tree(g, 0);
	const int64_t L = 20000; /* int32 elements, B bytes: copies of as
				    many stream when asked to */
	const int64_t B = 4 * L;
	int was_stream = topo__tune.stream_copies;
	unsigned char *before = malloc((size_t)B), *want = malloc((size_t)B);
	void *state = NULL;
	topo_error err;

	for (int stream = 0; stream <= 1; stream++) {
		struct topo_plan *p = hand_plan(&t, TOPO_OP_REDUCE, (size_t)B,
						TOPO_INT32, TOPO_SUM);
		const int64_t range[][2] = {
		    {0, 64}, {64, 4096}, {4096, B}, {128, B - 64}, {0, B}};
		int64_t a, b, c, d;
		unsigned char *s0, *s2, *r1, *w1;

		for (int32_t r = 0; r < 4; r++) {
			bufsize(p, TOPO__SEND, r, B);
			bufsize(p, TOPO__RECV, r, 2 * B);
			bufsize(p, TOPO__WORK, r, B);
		}
		/* a: a copy between members, at an odd offset; b: a combine
		 * nothing fuses with; c: a move within one buffer, after d,
		 * a copy into member 2 */
		a = msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 1, TOPO__RECV, 3,
			B - 3, -1);
		b = msg(p, TOPO__REDUCE, 2, TOPO__SEND, 0, 1, TOPO__WORK, 0, B,
			-1);
		c = msg(p, TOPO__COPY, 1, TOPO__RECV, 0, 1, TOPO__RECV, B, B,
			-1);
		d = msg(p, TOPO__COPY, 3, TOPO__SEND, 0, 2, TOPO__RECV, 0, B,
			-1);
		dep(p, d, c);
		finish(p);
		topo__tune.stream_copies = stream;
		topo_error_clear(&err);
		CHECK_INT(tr->open(&state, p, &err), 0);
		CHECK(tr->splits != NULL && tr->deliver_part != NULL,
		      "the in-process transport delivers parts");
		CHECK(tr->splits(state, p, a), "a copy splits");
		CHECK(tr->splits(state, p, b), "a combine fused with no copy "
					       "splits");
		CHECK(!tr->splits(state, p, c), "a move within one buffer "
						"does not split");
		CHECK(tr->splits(state, p, d), "a copy splits");
		CHECK_INT(topo__inproc_streams(state, p, a), stream);
		s0 = tr->buffer(state, 0, TOPO__SEND);
		s2 = tr->buffer(state, 2, TOPO__SEND);
		r1 = tr->buffer(state, 1, TOPO__RECV);
		w1 = tr->buffer(state, 1, TOPO__WORK);
		for (int64_t j = 0; j < B; j++) {
			s0[j] = (unsigned char)(j * 7 + 1);
			s2[j] = (unsigned char)(j * 13 + 5);
		}
		for (size_t k = 0; k < sizeof(range) / sizeof(range[0]); k++) {
			int64_t lo = range[k][0], hi = range[k][1];
			char what[64];

			/* the copy: a's len is B - 3, its last part ends
			 * there */
			if (hi > B - 3)
				hi = B - 3;
			memset(r1, 0xa5, (size_t)(2 * B));
			memcpy(before, r1 + 3, (size_t)(B - 3));
			memcpy(want, s0, (size_t)(B - 3));
			CHECK_INT(tr->deliver_part(state, p, a, lo, hi), 0);
			snprintf(what, sizeof(what), "copy part, stream %d",
				 stream);
			check_part_bytes(r1 + 3, before, want, B - 3, lo, hi,
					 what);
			CHECK_INT(r1[0] + r1[1] + r1[2], 3 * 0xa5);
			CHECK_INT(r1[B], 0xa5);
			/* the combine: int32 sums over whole elements */
			hi = range[k][1];
			for (int64_t j = 0; j < B; j++)
				w1[j] = (unsigned char)(j * 3 + k);
			memcpy(before, w1, (size_t)B);
			memcpy(want, w1, (size_t)B);
			topo__reduce(TOPO_INT32, TOPO_SUM, want, s2, (size_t)B);
			CHECK_INT(tr->deliver_part(state, p, b, lo, hi), 0);
			check_part_bytes(w1, before, want, B, lo, hi,
					 "combine part");
		}
		tr->close(state);
		state = NULL;
		topo_plan_free(p);
	}
	topo__tune.stream_copies = was_stream;
	/* Fused copies and their combines never split: the first combine
	 * writes the copy's bytes whole. */
	{
		struct topo_plan *p = fuse_plan(&t, B, false);

		topo_error_clear(&err);
		CHECK_INT(tr->open(&state, p, &err), 0);
		for (int64_t i = 0; i < p->nmsg; i++) {
			bool fused = topo__inproc_fused(state, p, i) >= 0;

			CHECK(fused, "fuse_plan's message %lld is fused",
			      (long long)i);
			CHECK(!tr->splits(state, p, i),
			      "fused message %lld does not split",
			      (long long)i);
		}
		tr->close(state);
		state = NULL;
		topo_plan_free(p);
	}
	free(before);
	free(want);
	topo_group_free(g);
	topo_machine_free(m);
}

static void test_part_runs(void)
{
	static const struct {
		size_t bytes;
		enum topo_type type;
		enum topo_redop redop;
	} kinds[] = {{3000, TOPO_INT32, TOPO_SUM},
		     {2056, TOPO_DOUBLE, TOPO_MAX},
		     {1601, TOPO_INT8, TOPO_BXOR}};
	const int64_t min = 512;
	int64_t was_min = topo__tune.split_min;
	int was_eager = topo__tune.split_eager;
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree *t = NULL, *th = NULL;
	topo_error err;
	int64_t split_runs = 0;
	const struct op_algo *algos;
	size_t nalgos = all_algos(&algos);

	topo_error_clear(&err);
	CHECK_INT(topo_tree_new(&t, g, "physical", &err), 0);
	CHECK_INT(topo_tree_new(&th, g, "hierarchical", &err), 0);
	topo__tune.split_min = min;
	topo__tune.split_eager = 1;
	for (size_t o = 0; o < nalgos; o++)
		for (size_t k = 0;
		     k < sizeof(kinds) / sizeof(kinds[0]) &&
		     algos[o].op != TOPO_OP_BARRIER; /* no bytes */
		     k++) {
			struct topo_plan_params q;
			topo_plan *p = NULL;
			void *state = NULL;
			int64_t nsplit = 0, most = 0;
			bool reduces = topo_op_reduces(algos[o].op);

			if (!reduces && k > 0)
				break;
			topo_plan_params_init(&q, sizeof(q), algos[o].op);
			q.algorithm = algos[o].name;
			q.bytes = kinds[k].bytes;
			if (reduces) {
				q.type = kinds[k].type;
				q.redop = kinds[k].redop;
			}
			topo_error_clear(&err);
			CHECK(
			    topo_plan_new(
				&p,
				algos[o].flags & TOPO_ALG_HIERARCHICAL ? th : t,
				&q, &err) == 0,
			    "%s: %s", algos[o].name, err.text);
			if (p == NULL)
				continue;
			CHECK_INT(topo__transport_inproc.open(&state, p, &err),
				  0);
			for (int64_t i = 0; i < p->nmsg; i++)
				if (p->msg[i].len >= min &&
				    topo__transport_inproc.splits(state, p,
								  i)) {
					nsplit++;
					most += p->msg[i].len / 192;
				}
			topo__transport_inproc.close(state);
			for (int threads = 1; threads <= 4; threads *= 2) {
				topo_report *r = run(p, threads, 2, 60);
				int64_t parts = topo__report_parts(r);
				char what[96];

				snprintf(what, sizeof(what),
					 "%s in parts, %zu bytes, %d "
					 "threads",
					 algos[o].name, kinds[k].bytes,
					 threads);
				expect_verified(r, what);
				if (threads == 1)
					CHECK(parts == 0, "%s: %lld parts",
					      what, (long long)parts);
				else
					CHECK(parts >= 2 * nsplit &&
						  parts <= 2 * most,
					      "%s: %lld parts, %lld "
					      "splittable messages",
					      what, (long long)parts,
					      (long long)nsplit);
				split_runs += threads > 1 && parts > 0;
				topo_report_free(r);
			}
			topo_plan_free(p);
		}
	/* Most plans have messages to split at these sizes. */
	CHECK(split_runs >= 40, "%lld runs in parts", (long long)split_runs);
	/* Never: no parts, and the runs are as verified. */
	topo__tune.split_min = 0;
	{
		struct topo_plan_params q;
		topo_plan *p = NULL;
		topo_report *r;

		topo_plan_params_init(&q, sizeof(q), TOPO_OP_ALLTOALL);
		q.bytes = 4096;
		CHECK_INT(topo_plan_new(&p, t, &q, &err), 0);
		r = run(p, 4, 2, 60);
		expect_verified(r, "alltoall without parts");
		CHECK_INT(topo__report_parts(r), 0);
		topo_report_free(r);
		/* the default: parts only for an idle thread, 256 KiB and
		 * up */
		topo__tune.split_min = was_min;
		topo__tune.split_eager = 0;
		topo_plan_free(p);
		topo_plan_params_init(&q, sizeof(q), TOPO_OP_SCATTER);
		q.algorithm = "direct";
		q.bytes = (size_t)1 << 20;
		CHECK_INT(topo_plan_new(&p, t, &q, &err), 0);
		r = run(p, 2, 3, 60);
		expect_verified(r, "scatter of 1 MiB blocks, parts on demand");
		CHECK(topo__report_parts(r) <= 3 * 11 * ((1 << 20) / 192),
		      "%lld parts", (long long)topo__report_parts(r));
		topo_report_free(r);
		topo_plan_free(p);
	}
	topo__tune.split_min = was_min;
	topo__tune.split_eager = was_eager;
	topo_tree_free(th);
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
}

static void test_transport(void)
{
	const struct topo__transport_ops *tr = &topo__transport_inproc;
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p =
	    hand_plan(&t, TOPO_OP_REDUCE, 8, TOPO_INT32, TOPO_SUM);
	void *state = NULL;
	unsigned char *buf[12][3];
	topo_error err;
	int ok = 1;

	/* Sizes of every kind, some 0, some small, some large. */
	for (int32_t r = 0; r < 12; r++) {
		bufsize(p, TOPO__SEND, r, 100 + r);
		bufsize(p, TOPO__RECV, r, r % 3 == 0 ? 0 : 8 * r);
	}
	bufsize(p, TOPO__WORK, 5, 4);
	msg(p, TOPO__COPY, 1, TOPO__SEND, 3, 2, TOPO__RECV, 5, 10, -1);
	msg(p, TOPO__REDUCE, 4, TOPO__SEND, 4, 5, TOPO__RECV, 8, 8, -1);
	msg(p, TOPO__COPY, 5, TOPO__SEND, 0, 5, TOPO__WORK, 0, 4, -1);
	finish(p);
	topo_error_clear(&err);
	CHECK(open_arena(tr, p, &state, buf),
	      "buffers NULL, misaligned or overlapping");

	/* COPY: SEND[3..13) of member 1 to RECV[5..15) of member 2. */
	for (int i = 0; i < 101; i++)
		buf[1][TOPO__SEND][i] = (unsigned char)i;
	CHECK_INT(tr->deliver(state, p, 0), 0);
	for (int i = 0; i < 16; i++)
		ok &= buf[2][TOPO__RECV][i] ==
		      (i >= 5 && i < 15 ? i - 2 : 0x10 + 2);
	CHECK(ok, "COPY landed wrong");
	/* REDUCE int32 sum: two elements of member 4's SEND at 4 into member
	 * 5's RECV at 8. */
	{
		int32_t x[2] = {7, -9}, y[2] = {1000, 2000}, z[2];

		memcpy(buf[4][TOPO__SEND] + 4, x, 8);
		memcpy(buf[5][TOPO__RECV] + 8, y, 8);
		CHECK_INT(tr->deliver(state, p, 1), 0);
		memcpy(z, buf[5][TOPO__RECV] + 8, 8);
		CHECK_INT(z[0], 1007);
		CHECK_INT(z[1], 1991);
		CHECK_INT(buf[5][TOPO__RECV][7], 0x10 + 5);
		CHECK_INT(buf[5][TOPO__RECV][16], 0x10 + 5);
	}
	CHECK_INT(tr->deliver(state, p, 2), 0);
	CHECK(memcmp(buf[5][TOPO__WORK], buf[5][TOPO__SEND], 4) == 0,
	      "local step into WORK");
	/* A message changed after finishing is still refused. */
	p->msg[0].len = 100;
	CHECK_INT(tr->deliver(state, p, 0), TOPO_EINVAL);
	p->msg[0].doff = -1;
	p->msg[0].len = 1;
	CHECK_INT(tr->deliver(state, p, 0), TOPO_EINVAL);
	/* Sizes that differ (an offset per member), some 0. */
	for (int b = 0; b < 3; b++)
		CHECK(fill_kind(tr, p, state, buf, b),
		      "fill of kind %d missed or overran a slice", b);
	tr->close(state);
	tr->close(NULL);
	topo_plan_free(p);

	/* Eight threads deliver 4096 REDUCE messages (sum, int64) from 4096
	 * members into member 0 at once: without serialisation updates
	 * would be lost (and ThreadSanitizer would see the race). */
	{
		static const int32_t tasks[] = {4096};
		topo_machine *m2 = machine(1, tasks, 1);
		topo_group *g2 = group_of(m2, "world", NULL, 4096);
		topo_tree t2 = fake_tree(g2, 0);
		const int64_t len = 512;
		struct hammer h[8];
		pthread_t th[8];
		int64_t want[64], got[64];

		p = hand_plan(&t2, TOPO_OP_REDUCE, (size_t)len, TOPO_INT64,
			      TOPO_SUM);
		bufsize(p, TOPO__RECV, 0, len);
		for (int32_t r = 0; r < 4096; r++) {
			bufsize(p, TOPO__SEND, r, len);
			msg(p, TOPO__REDUCE, r, TOPO__SEND, 0, 0, TOPO__RECV, 0,
			    len, -1);
		}
		finish(p);
		state = NULL;
		topo_error_clear(&err);
		CHECK_INT(tr->open(&state, p, &err), 0);
		memset(want, 0, sizeof(want));
		memset(tr->buffer(state, 0, TOPO__RECV), 0, (size_t)len);
		for (int32_t r = 0; r < 4096; r++) {
			int64_t v[64];

			for (int i = 0; i < 64; i++) {
				v[i] = (int64_t)(check_rand64() >> 20);
				want[i] += v[i];
			}
			memcpy(tr->buffer(state, r, TOPO__SEND), v,
			       (size_t)len);
		}
		for (int i = 0; i < 8; i++) {
			h[i] = (struct hammer){tr, state, p, i * 512, 512, 0};
			pthread_create(&th[i], NULL, hammer, &h[i]);
		}
		for (int i = 0; i < 8; i++) {
			pthread_join(th[i], NULL);
			CHECK_INT(h[i].rc, 0);
		}
		memcpy(got, tr->buffer(state, 0, TOPO__RECV), (size_t)len);
		CHECK(memcmp(got, want, sizeof(want)) == 0,
		      "concurrent REDUCE lost updates: %lld != %lld",
		      (long long)got[0], (long long)want[0]);
		tr->close(state);
		topo_plan_free(p);
		topo_group_free(g2);
		topo_machine_free(m2);
	}
	topo_group_free(g);
	topo_machine_free(m);
}

/*
 * REDUCE messages into overlapping bytes of one buffer never interleave,
 * whether small (combined under the bucket's mutex) or large (combined
 * while holding a byte range): 8 threads deliver the same int32 sums of
 * ones, large and small, overlapping and not, into two members' RECV,
 * many times over; every element must end with exactly one per delivery
 * that covers it (a lost update would leave less).  Under
 * ThreadSanitizer this also shows that the locking orders every access.
 */
#define RL_BYTES (256 << 10)
#define RL_THREADS 8
#define RL_ROUNDS 12

struct range_run {
	const struct topo__transport_ops *tr;
	void *state;
	const struct topo_plan *p;
	int index;
	int failed;
};

static void *range_thread(void *arg)
{
	struct range_run *x = arg;

	for (int round = 0; round < RL_ROUNDS; round++)
		for (int64_t k = 0; k < x->p->nmsg; k++) {
			/* Each thread in its own order. */
			int64_t i = (k + x->index + round) % x->p->nmsg;

			if (x->tr->deliver(x->state, x->p, i) != 0)
				x->failed = 1;
		}
	return NULL;
}

static void test_range_locks(void)
{
	static const struct {
		int32_t dst;
		int64_t off, len;
	} rl[] = {
	    {0, 0, 128 << 10},	       /* large */
	    {0, 64 << 10, 128 << 10},  /* large, overlaps the first */
	    {0, 128 << 10, 128 << 10}, /* large, overlaps the second only */
	    {0, (64 << 10) - 8, 16},   /* small, across the first two */
	    {0, 100, 4},	       /* small, inside the first */
	    {0, 4096, 8192},	       /* large, inside the first */
	    {1, 0, RL_BYTES},	       /* another member */
	    {1, 8, 4096},	       /* small at the limit */
	};
	const struct topo__transport_ops *tr = &topo__transport_inproc;
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p =
	    hand_plan(&t, TOPO_OP_REDUCE, RL_BYTES, TOPO_INT32, TOPO_SUM);
	struct range_run x[RL_THREADS];
	pthread_t th[RL_THREADS];
	void *state = NULL;
	topo_error err;
	int64_t bad = -1;
	int failed = 0;

	bufsize(p, TOPO__SEND, 2, RL_BYTES);
	bufsize(p, TOPO__RECV, 0, RL_BYTES);
	bufsize(p, TOPO__RECV, 1, RL_BYTES);
	for (size_t i = 0; i < sizeof(rl) / sizeof(rl[0]); i++)
		msg(p, TOPO__REDUCE, 2, TOPO__SEND, rl[i].off, rl[i].dst,
		    TOPO__RECV, rl[i].off, rl[i].len, -1);
	finish(p);
	topo_error_clear(&err);
	CHECK_INT(tr->open(&state, p, &err), 0);
	if (state == NULL)
		goto out;
	for (int64_t i = 0; i < RL_BYTES / 4; i++) {
		int32_t one = 1, zero = 0;

		memcpy(tr->buffer(state, 2, TOPO__SEND) + 4 * i, &one, 4);
		memcpy(tr->buffer(state, 0, TOPO__RECV) + 4 * i, &zero, 4);
		memcpy(tr->buffer(state, 1, TOPO__RECV) + 4 * i, &zero, 4);
	}
	for (int i = 0; i < RL_THREADS; i++) {
		x[i] = (struct range_run){tr, state, p, i, 0};
		if (pthread_create(&th[i], NULL, range_thread, &x[i]) != 0)
			exit(2);
	}
	for (int i = 0; i < RL_THREADS; i++) {
		pthread_join(th[i], NULL);
		failed |= x[i].failed;
	}
	CHECK(!failed, "a delivery failed");
	for (int32_t dst = 0; dst < 2; dst++) {
		const unsigned char *got = tr->buffer(state, dst, TOPO__RECV);

		for (int64_t e = 0; e < RL_BYTES / 4 && bad < 0; e++) {
			int32_t v, want = 0;

			for (size_t i = 0; i < sizeof(rl) / sizeof(rl[0]); i++)
				if (rl[i].dst == dst && 4 * e >= rl[i].off &&
				    4 * e < rl[i].off + rl[i].len)
					want += RL_THREADS * RL_ROUNDS;
			memcpy(&v, got + 4 * e, 4);
			if (v != want)
				bad = dst * (RL_BYTES / 4) + e;
		}
	}
	CHECK(bad < 0, "member %lld element %lld: updates lost",
	      (long long)(bad / (RL_BYTES / 4)),
	      (long long)(bad % (RL_BYTES / 4)));
	tr->close(state);
out:
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* Runs of hand-built plans */

/* Bcast straight from the root: a local copy at the root, then one message
 * from the root's SEND to each member's RECV. */
static struct topo_plan *direct_bcast(const topo_tree *t, size_t bytes)
{
	struct topo_plan *p =
	    hand_plan(t, TOPO_OP_BCAST, bytes, TOPO_INT8, TOPO_SUM);
	int32_t root = t->root;

	bufsize(p, TOPO__SEND, root, (int64_t)bytes);
	for (int32_t r = 0; r < p->n; r++) {
		bufsize(p, TOPO__RECV, r, (int64_t)bytes);
		msg(p, TOPO__COPY, root, TOPO__SEND, 0, r, TOPO__RECV, 0,
		    (int64_t)bytes, slot(p, r, 1));
	}
	return p;
}

static void test_bcast(int threads)
{
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 0);
	static const int32_t odd[] = {1, 4, 7, 10};
	topo_group *g2 = group_of(m, "strided", odd, 4);
	topo_tree t2 = fake_tree(g2, 2); /* endpoint 7, on node 2 */
	struct topo_plan *p = direct_bcast(&t, 1000);
	topo_report *r;
	int64_t shm, net;
	double lo, med, hi;

	finish(p);
	CHECK_INT(topo_plan_messages(p), 11);
	r = run(p, threads, 5, 0);
	expect_verified(r, "direct bcast");
	CHECK_INT(topo_report_threads(r), threads);
	CHECK_INT(topo_report_iterations(r), 5);
	CHECK_INT(topo_report_error_count(r), 0);
	/* Root endpoint 0 is on node 0 with endpoints 1..3. */
	topo_report_messages(r, &shm, &net);
	CHECK_INT(shm, 3);
	CHECK_INT(net, 8);
	topo_report_bytes_moved(r, &shm, &net);
	CHECK_INT(shm, 3000);
	CHECK_INT(net, 8000);
	topo_report_seconds(r, &lo, &med, &hi);
	CHECK(lo > 0 && lo <= med && med <= hi && hi < 10, "seconds %g %g %g",
	      lo, med, hi);
	topo_report_free(r);
	topo_plan_free(p);

	/* A strided group rooted at rank 2: members 1 and 4 are on other
	 * nodes, 10 shares node 2 with the root. */
	p = direct_bcast(&t2, 24);
	finish(p);
	r = run(p, threads, 1, 0);
	expect_verified(r, "strided bcast");
	topo_report_messages(r, &shm, &net);
	CHECK_INT(shm, 1);
	CHECK_INT(net, 2);
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g2);
	topo_group_free(g);
	topo_machine_free(m);
}

/* Bcast along a chain of 4096 members, each forwarding the 4 KiB it
 * received: only the dependencies keep a member from forwarding poison. */
static void test_chain(int threads)
{
	static const int32_t tasks[] = {1024, 1024, 1024, 1024};
	topo_machine *m = machine(4, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, 4096);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p =
	    hand_plan(&t, TOPO_OP_BCAST, 4096, TOPO_INT8, TOPO_SUM);
	topo_report *r;
	int64_t prev, shm, net;

	bufsize(p, TOPO__SEND, 0, 4096);
	for (int32_t k = 0; k < 4096; k++)
		bufsize(p, TOPO__RECV, k, 4096);
	prev = msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 0, TOPO__RECV, 0, 4096,
		   slot(p, 0, 1));
	for (int32_t k = 1; k < 4096; k++) {
		/* In two halves, so that a member forwards each half as soon
		 * as it has it. */
		int64_t a = msg(p, TOPO__COPY, k - 1, TOPO__RECV, 0, k,
				TOPO__RECV, 0, 2048, slot(p, k, 1));
		int64_t b = msg(p, TOPO__COPY, k - 1, TOPO__RECV, 2048, k,
				TOPO__RECV, 2048, 2048, slot(p, k, 1));

		dep(p, prev, a);
		dep(p, prev, b);
		prev = b;
		if (k > 1)
			dep(p, a - 2, a);
	}
	finish(p);
	r = run(p, threads, 3, 0);
	expect_verified(r, "chain bcast");
	topo_report_messages(r, &shm, &net);
	CHECK_INT(shm, 2 * 4092);
	CHECK_INT(net, 2 * 3);
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

/*
 * Copies of at most 16 bytes, which the run moves itself, and a leaf among
 * them at once in the loop of the message that releases it (exec.c,
 * SMALL_COPY): a bcast of len bytes over 7 members, in two pieces of len /
 * 2 and the rest (every length 0..17 at an odd offset once len > 2).
 *  - The root: SEND[1..len) to RECV[0..len-1), then a local step within
 *    RECV that moves those bytes up by one (overlapping: memmove's
 *    semantics), then SEND[0] to RECV[0].
 *  - Member 1 gets both pieces from the root's RECV; members 2..5 from
 *    member 1's, each piece waiting for member 1's (leaves: run at once);
 *    member 6 from member 5, so member 5's pieces release something.
 * The verifier checks every byte of every RECV and that every receipt
 * counter counted once; the same plan with member 3's first piece sent
 * twice reports member 3 duplicated.
 */
static struct topo_plan *small_bcast(const topo_tree *t, int64_t len, int dup)
{
	struct topo_plan *p =
	    hand_plan(t, TOPO_OP_BCAST, (size_t)len, TOPO_INT8, TOPO_SUM);
	int64_t half = len / 2, piece[7][2], a, b;

	bufsize(p, TOPO__SEND, 0, len);
	for (int32_t r = 0; r < 7; r++)
		bufsize(p, TOPO__RECV, r, len);
	if (len > 0) {
		a = msg(p, TOPO__COPY, 0, TOPO__SEND, 1, 0, TOPO__RECV, 0,
			len - 1, -1);
		b = msg(p, TOPO__COPY, 0, TOPO__RECV, 0, 0, TOPO__RECV, 1,
			len - 1, -1);
		dep(p, a, b);
		a = msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 0, TOPO__RECV, 0, 1,
			slot(p, 0, 1));
		dep(p, b, a);
	} else {
		a = msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 0, TOPO__RECV, 0, 0,
			slot(p, 0, 1));
	}
	piece[0][0] = piece[0][1] = a;
	for (int32_t r = 1; r < 7; r++) {
		int32_t from = r == 1 ? 0 : r == 6 ? 5 : 1;
		int64_t s = slot(p, r, 2);

		for (int h = 0; h < 2; h++) {
			int64_t off = h == 0 ? 0 : half;
			int64_t n = h == 0 ? half : len - half;

			piece[r][h] = msg(p, TOPO__COPY, from, TOPO__RECV, off,
					  r, TOPO__RECV, off, n, s);
			dep(p, piece[from][h], piece[r][h]);
			if (dup && r == 3 && h == 0)
				dep(p, piece[from][h],
				    msg(p, TOPO__COPY, from, TOPO__RECV, off, r,
					TOPO__RECV, off, n, s));
		}
	}
	finish(p);
	return p;
}

/*
 * Receipts counted at once by every thread: a bcast of 32 KiB to 2
 * members whose second member gets it in 4096 copies of 8 bytes, all into
 * one receipt counter expecting 4096 (the root copies its input whole).
 * Every copy waits for nothing, so the threads share them; the counts of
 * 20 iterations must all be exact (a counter updated by two threads
 * without care loses some), and one copy more is reported duplicated.
 */
static struct topo_plan *counted_bcast(const topo_tree *t, int extra)
{
	enum { PIECES = 4096, PIECE = 8 };
	struct topo_plan *p =
	    hand_plan(t, TOPO_OP_BCAST, PIECES * PIECE, TOPO_INT8, TOPO_SUM);
	int64_t s;

	bufsize(p, TOPO__SEND, 0, PIECES * PIECE);
	bufsize(p, TOPO__RECV, 0, PIECES * PIECE);
	bufsize(p, TOPO__RECV, 1, PIECES * PIECE);
	msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 0, TOPO__RECV, 0, PIECES * PIECE,
	    slot(p, 0, 1));
	s = slot(p, 1, PIECES);
	for (int64_t i = 0; i < PIECES + extra; i++)
		msg(p, TOPO__COPY, 0, TOPO__SEND, i % PIECES * PIECE, 1,
		    TOPO__RECV, i % PIECES * PIECE, PIECE, s);
	finish(p);
	return p;
}

static void test_counted(int threads)
{
	static const int32_t tasks[] = {2};
	topo_machine *m = machine(1, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, 2);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p = counted_bcast(&t, 0);
	topo_report *r = run(p, threads, 20, 0);

	CHECK(topo_report_verified(r) && topo_report_iterations(r) == 20,
	      "%d threads: 4096 receipts into one counter, 20 iterations: "
	      "not verified",
	      threads);
	if (!topo_report_verified(r))
		dump(r);
	topo_report_free(r);
	topo_plan_free(p);
	p = counted_bcast(&t, 1);
	r = run(p, threads, 1, 0);
	CHECK(!topo_report_verified(r) && has_error(r, 1, "duplicated") &&
		  only_endpoint(r, 1),
	      "%d threads: 4097 receipts of 4096 not (only) duplicated",
	      threads);
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

static void test_small_copies(int threads)
{
	static const int32_t tasks[] = {7};
	topo_machine *m = machine(1, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, 7);
	topo_tree t = fake_tree(g, 0);
	char what[80];

	for (int64_t len = 0; len <= 34; len++) {
		struct topo_plan *p = small_bcast(&t, len, 0);
		topo_report *r = run(p, threads, 2, 0);

		snprintf(what, sizeof(what),
			 "small bcast of %lld bytes, %d thread(s)",
			 (long long)len, threads);
		expect_verified(r, what);
		CHECK_INT(topo_report_iterations(r), 2);
		topo_report_free(r);
		topo_plan_free(p);
	}
	for (int64_t len = 2; len <= 32; len += 15) {
		struct topo_plan *p = small_bcast(&t, len, 1);
		topo_report *r = run(p, threads, 1, 0);

		snprintf(what, sizeof(what),
			 "small bcast of %lld bytes, a piece twice",
			 (long long)len);
		CHECK(!topo_report_verified(r), "%s: verified", what);
		CHECK(has_error(r, 3, "duplicated") && only_endpoint(r, 3),
		      "%s: member 3 not (alone) duplicated", what);
		if (!has_error(r, 3, "duplicated"))
			dump(r);
		topo_report_free(r);
		topo_plan_free(p);
	}
	topo_group_free(g);
	topo_machine_free(m);
}

/*
 * A message with many successors shares them as release tasks of
 * topo__tune.release_chunk (exec.c): a bcast of len bytes over 1500 members in
 * which the root's own copy releases member 1's and members 2..999's, and
 * member 1's releases members 1000..1499's, two long lists side by side.
 * At chunks of 1, 2, 7 and 4096 successors, on 1 and 4 threads, with
 * leaves that run at once (8 bytes) and ones that are tasks (24 bytes),
 * every member gets its data once.
 */
static void test_release_chunks(void)
{
	static const int32_t tasks[] = {1500};
	static const int64_t chunks[] = {1, 2, 7, 4096};
	topo_machine *m = machine(1, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, 1500);
	topo_tree t = fake_tree(g, 0);
	int64_t saved = topo__tune.release_chunk;
	char what[96];

	for (int64_t len = 8; len <= 24; len += 16) {
		struct topo_plan *p = hand_plan(&t, TOPO_OP_BCAST, (size_t)len,
						TOPO_INT8, TOPO_SUM);
		int64_t a, b;

		bufsize(p, TOPO__SEND, 0, len);
		for (int32_t r = 0; r < 1500; r++)
			bufsize(p, TOPO__RECV, r, len);
		a = msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 0, TOPO__RECV, 0, len,
			slot(p, 0, 1));
		b = msg(p, TOPO__COPY, 0, TOPO__RECV, 0, 1, TOPO__RECV, 0, len,
			slot(p, 1, 1));
		dep(p, a, b);
		for (int32_t r = 2; r < 1500; r++) {
			int32_t from = r < 1000 ? 0 : 1;

			dep(p, from == 0 ? a : b,
			    msg(p, TOPO__COPY, from, TOPO__RECV, 0, r,
				TOPO__RECV, 0, len, slot(p, r, 1)));
		}
		finish(p);
		for (size_t c = 0; c < sizeof(chunks) / sizeof(chunks[0]);
		     c++) {
			for (int threads = 1; threads <= 4; threads *= 4) {
				topo_report *r;

				topo__tune.release_chunk = chunks[c];
				r = run(p, threads, 3, 0);
				snprintf(what, sizeof(what),
					 "%lld-byte bcast, release chunks of "
					 "%lld, %d thread(s)",
					 (long long)len, (long long)chunks[c],
					 threads);
				expect_verified(r, what);
				CHECK_INT(topo_report_iterations(r), 3);
				topo_report_free(r);
			}
		}
		topo_plan_free(p);
	}
	topo__tune.release_chunk = saved;
	topo_group_free(g);
	topo_machine_free(m);
}

/*
 * Floods numbered depth first (coll/bcast/flood.c), run: over every tree
 * shape, 8 bytes (leaves that run at once) and 24 in segments of 16, on 1
 * and 4 threads, every member gets its data once; and at the default
 * threshold, a flood over 70,000 members (renumbered) on 2 threads.
 */
static void test_flood_depth_first(void)
{
	static const char *const shapes[] = {"binomial", "kary:3", "chain",
					     "physical", "hierarchical"};
	static const int32_t tasks[] = {16, 16, 16, 16, 16};
	topo_machine *m = machine(5, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, 80);
	int64_t saved = topo__tune.flood_depth_first;
	char what[96];

	topo__tune.flood_depth_first = 0;
	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		topo_tree *t = NULL;
		topo_error err;

		topo_error_clear(&err);
		CHECK_INT(topo_tree_new(&t, g, shapes[s], &err), 0);
		for (int len = 8; t != NULL && len <= 24; len += 16) {
			struct topo_plan_params pp;
			topo_plan *p = NULL;

			topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
			pp.root = g->members[37];
			pp.bytes = (size_t)len;
			pp.segment = len == 24 ? 16 : 0;
			CHECK_INT(topo_plan_new(&p, t, &pp, &err), 0);
			for (int th = 1; p != NULL && th <= 4; th *= 4) {
				topo_report *r = run(p, th, 3, 0);

				snprintf(what, sizeof(what),
					 "depth-first flood, %s, %d bytes, %d "
					 "thread(s)",
					 shapes[s], len, th);
				expect_verified(r, what);
				CHECK_INT(topo_report_iterations(r), 3);
				topo_report_free(r);
			}
			topo_plan_free(p);
		}
		topo_tree_free(t);
	}
	topo__tune.flood_depth_first = saved;
	topo_group_free(g);
	topo_machine_free(m);
	{
		static const int32_t big[] = {70000};
		topo_machine *mb = machine(1, big, 1);
		topo_group *gb = group_of(mb, "world", NULL, 70000);
		struct topo_plan_params pp;
		topo_tree *t = NULL;
		topo_plan *p = NULL;
		topo_error err;

		topo_error_clear(&err);
		CHECK_INT(topo_tree_new(&t, gb, "kary:4", &err), 0);
		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
		pp.bytes = 8;
		if (t != NULL)
			CHECK_INT(topo_plan_new(&p, t, &pp, &err), 0);
		if (p != NULL) {
			topo_report *r = run(p, 2, 2, 0);

			expect_verified(r, "depth-first flood, 70,000 members");
			topo_report_free(r);
		}
		topo_plan_free(p);
		topo_tree_free(t);
		topo_group_free(gb);
		topo_machine_free(mb);
	}
}

/* Gather straight to the root: every member copies its SEND into its
 * block of the root's RECV (many writers, distinct bytes, no lock). */
static void test_gather(int threads)
{
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 11);
	struct topo_plan *p =
	    hand_plan(&t, TOPO_OP_GATHER, 100, TOPO_INT8, TOPO_SUM);
	topo_report *r;

	bufsize(p, TOPO__RECV, 11, 1200);
	for (int32_t k = 0; k < 12; k++) {
		bufsize(p, TOPO__SEND, k, 100);
		msg(p, TOPO__COPY, k, TOPO__SEND, 0, 11, TOPO__RECV, 100 * k,
		    100, slot(p, 11, 1));
	}
	finish(p);
	r = run(p, threads, 2, 0);
	expect_verified(r, "direct gather");
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

/* The inputs are filled in parallel, in tasks of at most 4 MiB or 4096
 * members: a member of 9 MiB + 10 bytes (three pieces, the last short),
 * one of exactly 4 MiB, and 5000 of 8 bytes (two groups), whose first 8
 * bytes are gathered into member 0's RECV.  The verifier checks every
 * byte of every SEND against the pattern, so a piece filled at the wrong
 * offset, or a member left out, fails the run. */
static void test_fill(int threads)
{
	const int32_t n = 5002;
	int32_t tasks[1] = {n};
	topo_machine *m = machine(1, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, n);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p;
	int64_t size[5002];
	topo_report *r;
	char what[64];

	for (int32_t k = 0; k < n; k++)
		size[k] = k == 1 ? (9 << 20) + 10 : k == 2 ? 4 << 20 : 8;
	p = hand_plan(&t, TOPO_OP_GATHER, 8, TOPO_INT8, TOPO_SUM);
	bufsize(p, TOPO__RECV, 0, 8 * (int64_t)n);
	for (int32_t k = 0; k < n; k++) {
		bufsize(p, TOPO__SEND, k, size[k]);
		msg(p, TOPO__COPY, k, TOPO__SEND, 0, 0, TOPO__RECV, 8 * k, 8,
		    slot(p, 0, 1));
	}
	finish(p);
	r = run(p, threads, 2, 0);
	snprintf(what, sizeof(what), "inputs filled by %d thread(s)", threads);
	expect_verified(r, what);
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

/* Reduce with every member reducing straight into the root's RECV once
 * the root has copied its own input there. */
static void test_reduce(int threads, int32_t n, enum topo_type type,
			enum topo_redop op, size_t bytes)
{
	int32_t tasks[4] = {n / 4, n / 4, n / 4, n - 3 * (n / 4)};
	topo_machine *m = machine(4, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, n);
	topo_tree t = fake_tree(g, n / 2);
	struct topo_plan *p = hand_plan(&t, TOPO_OP_REDUCE, bytes, type, op);
	int32_t root = n / 2;
	int64_t first, s = -1;
	topo_report *r;
	char what[64];

	bufsize(p, TOPO__RECV, root, (int64_t)bytes);
	for (int32_t k = 0; k < n; k++)
		bufsize(p, TOPO__SEND, k, (int64_t)bytes);
	s = slot(p, root, n);
	first = msg(p, TOPO__COPY, root, TOPO__SEND, 0, root, TOPO__RECV, 0,
		    (int64_t)bytes, s);
	for (int32_t k = 0; k < n; k++) {
		if (k != root)
			dep(p, first,
			    msg(p, TOPO__REDUCE, k, TOPO__SEND, 0, root,
				TOPO__RECV, 0, (int64_t)bytes, s));
	}
	finish(p);
	r = run(p, threads, 2, 0);
	snprintf(what, sizeof(what), "reduce %s %s over %d",
		 topo_type_name(type), topo_redop_name(op), n);
	expect_verified(r, what);
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

/* The reductions' check and the members' checks shared by the run's
 * threads (run_par, lowered thresholds: 14 tasks of 3 members): a right
 * result verifies; a message that writes into a member's SEND is caught
 * there, by whichever thread checks that position, with the byte named,
 * and reported once. */
static void test_verify_threads(void)
{
	const int32_t n = 40, root = 3, victim = 9;
	const int64_t bytes = 3 * 4096 + 8;
	int32_t tasks[1] = {n};
	topo_machine *m = machine(1, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, n);
	topo_tree t = fake_tree(g, root);
	int64_t was = topo__tune.verify_par_min;
	int32_t was_task = topo__tune.verify_member_task;

	topo__tune.verify_par_min = 0;
	topo__tune.verify_member_task = 3;
	for (int scribble = 0; scribble < 2; scribble++) {
		struct topo_plan *p =
		    hand_plan(&t, TOPO_OP_ALLREDUCE, (size_t)bytes, TOPO_INT32,
			      TOPO_BXOR); /* every bit arbitrary */
		int64_t first, s;
		topo_report *r;

		for (int32_t k = 0; k < n; k++) {
			bufsize(p, TOPO__SEND, k, bytes);
			bufsize(p, TOPO__RECV, k, bytes);
		}
		/* reduce into the root's RECV, then copy it to the others */
		s = slot(p, root, n);
		first = msg(p, TOPO__COPY, root, TOPO__SEND, 0, root,
			    TOPO__RECV, 0, bytes, s);
		{
			int64_t red[40];

			for (int32_t k = 0; k < n; k++)
				if (k != root) {
					red[k] = msg(p, TOPO__REDUCE, k,
						     TOPO__SEND, 0, root,
						     TOPO__RECV, 0, bytes, s);
					dep(p, first, red[k]);
				}
			for (int32_t k = 0; k < n; k++) {
				int64_t c;

				if (k == root)
					continue;
				c = msg(p, TOPO__COPY, root, TOPO__RECV, 0, k,
					TOPO__RECV, 0, bytes, slot(p, k, 1));
				for (int32_t j = 0; j < n; j++)
					if (j != root)
						dep(p, red[j], c);
				/* after every reduction: the scribble */
				if (scribble && k == n - 1)
					dep(p, c,
					    msg(p, TOPO__COPY, 5, TOPO__SEND,
						0, victim, TOPO__SEND, 4104,
						4, slot(p, victim, 1)));
			}
		}
		finish(p);
		r = run(p, 2, 2, 0);
		if (!scribble) {
			expect_verified(r, "allreduce, check by 2 threads");
		} else {
			int found = 0;

			for (size_t i = 0; i < topo_report_error_count(r);
			     i++) {
				const char *k, *d;

				found += topo_report_error(r, i, &k, &d) ==
						 victim &&
					 strcmp(k, "wrong data") == 0 &&
					 strncmp(d,
						 "send buffer changed at "
						 "byte 4104:",
						 32) == 0;
			}
			CHECK(!topo_report_verified(r) && found == 1,
			      "a changed SEND, checked by 2 threads");
			if (found != 1) {
				fprintf(stderr, "verified %d, %zu errors\n",
					topo_report_verified(r),
					topo_report_error_count(r));
				dump(r);
			}
		}
		topo_report_free(r);
		topo_plan_free(p);
	}
	topo__tune.verify_par_min = was;
	topo__tune.verify_member_task = was_task;
	topo_group_free(g);
	topo_machine_free(m);
}

/* Receipt counters and wrong data name the endpoints concerned. */
static void test_faults(void)
{
	topo_machine *m = small_machine();
	static const int32_t odd[] = {1, 4, 7, 10};
	topo_group *g = group_of(m, "strided", odd, 4);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p;
	topo_report *r;

	/* Member rank 2 (endpoint 7) gets nothing. */
	p = hand_plan(&t, TOPO_OP_BCAST, 16, TOPO_INT8, TOPO_SUM);
	bufsize(p, TOPO__SEND, 0, 16);
	for (int32_t k = 0; k < 4; k++) {
		int64_t s = slot(p, k, 1);

		bufsize(p, TOPO__RECV, k, 16);
		if (k != 2)
			msg(p, TOPO__COPY, 0, TOPO__SEND, 0, k, TOPO__RECV, 0,
			    16, s);
	}
	finish(p);
	r = run(p, 2, 3, 0);
	CHECK(!topo_report_verified(r), "undelivered run verified");
	CHECK(has_error(r, 7, "undelivered"), "no undelivered for 7");
	CHECK(only_endpoint(r, 7), "errors name others than endpoint 7");
	CHECK(topo_report_error_total(r) >= 1 &&
		  topo_report_error_total(r) ==
		      (int64_t)topo_report_error_count(r),
	      "total %lld, kept %zu", (long long)topo_report_error_total(r),
	      topo_report_error_count(r));
	/* Stops after the first faulty iteration. */
	CHECK_INT(topo_report_iterations(r), 1);
	topo_report_free(r);
	topo_plan_free(p);

	/* Member rank 3 (endpoint 10) gets it twice. */
	p = hand_plan(&t, TOPO_OP_BCAST, 16, TOPO_INT8, TOPO_SUM);
	bufsize(p, TOPO__SEND, 0, 16);
	for (int32_t k = 0; k < 4; k++) {
		int64_t s = slot(p, k, 1);

		bufsize(p, TOPO__RECV, k, 16);
		msg(p, TOPO__COPY, 0, TOPO__SEND, 0, k, TOPO__RECV, 0, 16, s);
		if (k == 3)
			msg(p, TOPO__COPY, 0, TOPO__SEND, 0, k, TOPO__RECV, 0,
			    16, s);
	}
	finish(p);
	r = run(p, 2, 1, 0);
	CHECK(!topo_report_verified(r), "duplicated run verified");
	CHECK(has_error(r, 10, "duplicated"), "no duplicated for 10");
	CHECK(only_endpoint(r, 10), "errors name others than endpoint 10");
	topo_report_free(r);
	topo_plan_free(p);

	/* Member rank 1 (endpoint 4) gets bytes from the wrong place. */
	p = hand_plan(&t, TOPO_OP_BCAST, 16, TOPO_INT8, TOPO_SUM);
	bufsize(p, TOPO__SEND, 0, 32);
	for (int32_t k = 0; k < 4; k++) {
		bufsize(p, TOPO__RECV, k, 16);
		msg(p, TOPO__COPY, 0, TOPO__SEND, k == 1 ? 16 : 0, k,
		    TOPO__RECV, 0, 16, slot(p, k, 1));
	}
	finish(p);
	r = run(p, 2, 1, 0);
	CHECK(!topo_report_verified(r), "wrong data verified");
	CHECK(has_error(r, 4, "wrong data"), "no wrong data for 4");
	CHECK(only_endpoint(r, 4), "errors name others than endpoint 4");
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

/* A chain of 100000 1 MiB copies cannot finish in 0.2 s: the run stops at
 * its timeout, before its first iteration ends, with one "timeout" error
 * for the run as a whole (-1) in one of the documented words.  Which
 * phase the deadline fell in depends on the host's load (timeouts.h). */
static void test_timeout(void)
{
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p =
	    hand_plan(&t, TOPO_OP_BCAST, 8, TOPO_INT8, TOPO_SUM);
	const int64_t mib = 1 << 20;
	topo_report *r;
	const char *kind, *detail;
	double t0, lo, med, hi;

	bufsize(p, TOPO__WORK, 0, mib);
	bufsize(p, TOPO__WORK, 1, mib);
	for (int64_t i = 0; i < 100000; i++) {
		msg(p, TOPO__COPY, i % 2, TOPO__WORK, 0, 1 - i % 2, TOPO__WORK,
		    0, mib, -1);
		if (i > 0)
			dep(p, i - 1, i);
	}
	finish(p);
	t0 = now();
	r = run(p, 2, 3, 0.2);
	/* Not a wait for the work: three iterations of 100 GB of copies.
	 * The bound is on a hang; that the deadline stopped the run is
	 * shown by the iterations (none ended). */
	CHECK(now() - t0 >= 0.2 && now() - t0 < 30,
	      "timed-out run took %.3f s", now() - t0);
	CHECK(!topo_report_verified(r), "timed-out run verified");
	CHECK_INT(topo_report_iterations(r), 0);
	CHECK_INT(topo_report_error_count(r), 1);
	CHECK_INT(topo_report_error_total(r), 1);
	CHECK_INT(topo_report_error(r, 0, &kind, &detail), -1);
	CHECK_STR(kind, "timeout");
	CHECK(timeout_detail_ok(detail, 0.2, 3, 12),
	      "not a documented timeout: %s", detail ? detail : "(null)");
	topo_report_seconds(r, &lo, &med, &hi);
	CHECK(lo == 0 && med == 0 && hi == 0, "seconds %g %g %g", lo, med, hi);
	CHECK_INT(topo_report_error(r, 1, &kind, &detail), -1);
	CHECK(kind == NULL && detail == NULL, "error past the end");
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

/* Progress as a caller sees it: phases in order, done never above total,
 * every call on the calling thread. */
struct seen {
	pthread_t caller;
	int calls, wrong_thread, regress;
	char phases[8][32];
	int nphases;
	int64_t last_done;
};

static void record_progress(void *ctx, const char *phase, int64_t done,
			    int64_t total)
{
	struct seen *s = ctx;

	s->calls++;
	if (!pthread_equal(pthread_self(), s->caller))
		s->wrong_thread++;
	if (s->nphases == 0 || strcmp(s->phases[s->nphases - 1], phase) != 0) {
		if (s->nphases < 8)
			snprintf(s->phases[s->nphases++], 32, "%s", phase);
		s->last_done = -1;
	}
	if (done < s->last_done || (total > 0 && done > total))
		s->regress++;
	s->last_done = done;
}

/* One timeout bounds planning, the inputs, the iterations and their
 * verification, each stopping within a glance at the clock of its
 * deadline and saying which phase ran; elapsed counts time already spent;
 * progress reaches the caller on its own thread. */
static void test_deadlines(void)
{
	const int32_t tasks[] = {16, 16, 16, 16};
	topo_machine *m = machine(4, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, 64);
	topo_tree *t = NULL;
	struct topo_plan_params pp;
	struct topo_run_params rp;
	struct seen seen;
	topo_plan *p = NULL;
	topo_report *r = NULL;
	topo_error err;
	const char *kind, *detail;
	long long built = -1;
	double t0;

	topo_error_clear(&err);
	CHECK_INT(topo_tree_new(&t, g, "binomial", &err), 0);

	/* Planning: a bcast of 2 MiB in 16-byte segments is 131,072
	 * segments of 63 messages; 0.05 s is far too little.  (A sanitizer
	 * slows every glance at the clock's 4096 messages tenfold.) */
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
	pp.bytes = (size_t)2 << 20;
	pp.segment = 16;
	pp.timeout = 0.05;
	/* That the deadline stopped planning is shown by the messages
	 * built, fewer than the plan's; the time bound is on a hang (a
	 * stop takes 0.05 s and a glance), not on a loaded host's speed. */
	t0 = now();
	CHECK_INT(topo_plan_new(&p, t, &pp, &err), TOPO_ETIMEDOUT);
	CHECK(now() - t0 < 30, "planning stopped %.3f s after its start",
	      now() - t0);
	CHECK(p == NULL, "a plan that timed out was returned");
	CHECK(strncmp(err.text,
		      "the run did not finish within 0.05 s (planning: ",
		      47) == 0,
	      "%s", err.text);
	CHECK(sscanf(err.text + 47, "%lld messages built)", &built) == 1 &&
		  built >= 0 && built < 131072LL * 63,
	      "%s: not short of 131072 x 63 messages", err.text);
	CHECK_STR(topo_strerror(TOPO_ETIMEDOUT), "timed out");
	/* Time already spent counts: with all of it gone, planning stops at
	 * its first glance, which comes right after the message list is
	 * reserved, before any message is built (the reservations are the
	 * only calls the deadline cannot cut short). */
	pp.timeout = 30;
	pp.elapsed = 30;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, t, &pp, &err), TOPO_ETIMEDOUT);
	CHECK_STR(err.text, "the run did not finish within 30 s "
			    "(planning: 0 messages built)");
	pp.elapsed = -1;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, t, &pp, &err), TOPO_EARG);

	/* A plan that finishes, with progress: "planning" reported. */
	memset(&seen, 0, sizeof(seen));
	seen.caller = pthread_self();
	pp.elapsed = 0;
	pp.timeout = 0;
	pp.bytes = (size_t)1 << 20;
	pp.segment = 64;
	pp.progress = record_progress;
	pp.progress_ctx = &seen;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(&p, t, &pp, &err), 0);
	CHECK(seen.nphases >= 1 && strcmp(seen.phases[0], "planning") == 0,
	      "planning's progress not reported");

	/* The run: every phase reported in order, on this thread. */
	topo_run_params_init(&rp, sizeof(rp));
	rp.threads = 4;
	rp.iterations = 2;
	rp.progress = record_progress;
	rp.progress_ctx = &seen;
	seen.nphases = 0;
	seen.calls = 0;
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), 0);
	expect_verified(r, "run with progress");
	/* Inputs, then iterations (between which "verifying" may show). */
	CHECK(seen.nphases >= 2 &&
		  strcmp(seen.phases[0], "filling inputs") == 0 &&
		  strcmp(seen.phases[1], "running") == 0,
	      "phases: %d: %s, %s", seen.nphases, seen.phases[0],
	      seen.phases[1]);
	for (int i = 2; i < seen.nphases; i++)
		CHECK(strcmp(seen.phases[i], "verifying") == 0 ||
			  strcmp(seen.phases[i], "running") == 0,
		      "phase %d: %s", i, seen.phases[i]);
	CHECK_INT(seen.wrong_thread, 0);
	CHECK_INT(seen.regress, 0);
	topo_report_free(r);

	/* All the time gone before the run: it stops while filling the
	 * inputs, at its first member, and says so (the detail below): no
	 * iteration ran.  The clock is checked only against a hang. */
	rp.progress = NULL;
	rp.timeout = 10;
	rp.elapsed = 10;
	t0 = now();
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), 0);
	CHECK(now() - t0 < 60, "took %.3f s", now() - t0);
	CHECK(!topo_report_verified(r), "a run out of time verified");
	CHECK_INT(topo_report_iterations(r), 0);
	CHECK_INT(topo_report_error(r, 0, &kind, &detail), -1);
	CHECK_STR(kind, "timeout");
	CHECK_STR(detail, "the run did not finish within 10 s (filling the "
			  "inputs: member 1 of 64)");
	topo_report_free(r);
	rp.elapsed = -0.5;
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), TOPO_EARG);
	topo_plan_free(p);
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
}

/* A delivery the transport refuses ends the run with "failed", naming the
 * destination endpoint; the messages waiting for it never run.  Also for a
 * copy small enough for the run to move itself (16 bytes one byte past
 * the destination): a run with a message out of its buffers moves none. */
static void failed_case(int threads, int small)
{
	topo_machine *m = small_machine();
	static const int32_t odd[] = {1, 4, 7, 10};
	topo_group *g = group_of(m, "strided", odd, 4);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p = direct_bcast(&t, 16);
	topo_report *r;
	const char *kind, *detail;

	finish(p);
	/* past both buffers, or past the destination, after the checks */
	if (small)
		p->msg[2].doff = 1;
	else
		p->msg[2].len = 17;
	r = run(p, threads, 2, 0);
	CHECK(!topo_report_verified(r), "failed run verified");
	CHECK_INT(topo_report_error_count(r), 1);
	CHECK_INT(topo_report_error(r, 0, &kind, &detail), 7);
	CHECK_STR(kind, "failed");
	CHECK_STR(detail, "message 2 from endpoint 1 to endpoint 7 could not "
			  "be delivered: invalid description");
	CHECK_INT(topo_report_iterations(r), 0);
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

static void test_failed(int threads)
{
	for (int small = 0; small <= 1; small++)
		failed_case(threads, small);
}

/* Buffers larger than memory are refused before anything is allocated. */
static void test_memory(void)
{
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 0);
	struct topo_plan *p = direct_bcast(&t, 8);
	struct topo_run_params rp = run_params(1, 1, 0);
	topo_report *r = (topo_report *)&r;
	topo_error err;
	long before, after;
	/* The buffers' MiB in the breakdown; the limit that binds depends
	 * on where the test runs (memory, an rlimit, a cgroup). */
	const char *head = "the run needs ";
	const char *tail = "buffers 1073741825, plan 0, run state ";
	int rc;

	bufsize(p, TOPO__WORK, 3, INT64_C(1) << 50);
	finish(p);
	CHECK_INT(topo_plan_buffer_bytes(p), (INT64_C(1) << 50) + 12 * 8 + 8);
	topo_error_clear(&err);
	before = topo__alloc_fail_after(-1);
	rc = topo_plan_run(p, &rp, &r, &err);
	after = topo__alloc_fail_after(-1);
	CHECK_INT(rc, TOPO_ELIMIT);
	CHECK(r == NULL, "refused run set *out");
	CHECK_INT(after - before, 0);
	CHECK(strncmp(err.text, head, strlen(head)) == 0, "%s", err.text);
	CHECK(strstr(err.text, tail) != NULL && strstr(err.text, " MiB ") &&
		  strstr(err.text, "available") != NULL,
	      "%s", err.text);
	topo_plan_free(p);

	/* More than int64 can count. */
	p = direct_bcast(&t, 8);
	bufsize(p, TOPO__WORK, 3, INT64_MAX);
	bufsize(p, TOPO__WORK, 4, INT64_MAX);
	finish(p);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), TOPO_ELIMIT);
	CHECK_STR(err.text, "the run needs more than 9223372036854775807 "
			    "bytes");
	CHECK_INT(topo_plan_buffer_bytes(p), INT64_MAX);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

/* Bad run parameters, defaults, and every allocation failure of a run. */
static void test_run_params(void)
{
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree t = fake_tree(g, 3);
	struct topo_plan *p = direct_bcast(&t, 64);
	struct topo_run_params rp = run_params(-1, 0, 0);
	topo_report *r = (topo_report *)&r;
	topo_error err;
	cpu_set_t mask, one;
	long k;
	int rc = 0, c, streak = 0;

	finish(p);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), TOPO_EARG);
	CHECK_STR(err.text, "threads (-1), iterations (0), timeout (0) and "
			    "elapsed (0) must not be negative");
	CHECK(r == NULL, "*out not cleared");
	rp = run_params(0, 0, -0.5);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), TOPO_EARG);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_run(NULL, &rp, &r, &err), TOPO_EARG);
	CHECK_INT(topo_plan_run(p, NULL, NULL, &err), TOPO_EARG);
	/* NULL parameters: all defaults, one worker per CPU of the affinity
	 * mask. */
	CHECK_INT(sched_getaffinity(0, sizeof(mask), &mask), 0);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_run(p, NULL, &r, &err), 0);
	expect_verified(r, "defaults");
	CHECK_INT(topo_report_threads(r), CPU_COUNT(&mask));
	CHECK_INT(topo_report_iterations(r), 1);
	topo_report_free(r);
	/* A mask of one CPU, as `taskset -c N` gives: one worker. */
	for (c = CPU_SETSIZE - 1; c > 0 && !CPU_ISSET(c, &mask); c--)
		;
	CPU_ZERO(&one);
	CPU_SET(c, &one);
	CHECK_INT(sched_setaffinity(0, sizeof(one), &one), 0);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_run(p, NULL, &r, &err), 0);
	CHECK_INT(sched_setaffinity(0, sizeof(mask), &mask), 0);
	expect_verified(r, "one CPU");
	CHECK_INT(topo_report_threads(r), 1);
	topo_report_free(r);
	/* Accessors accept NULL. */
	topo_report_free(NULL);
	CHECK_INT(topo_report_verified(NULL), 0);
	CHECK_INT(topo_report_error_count(NULL), 0);

	/* Until 5 runs in a row succeed: a failure the run survives (where
	 * to pin the workers) is followed by more allocations. */
	for (k = 0; k < 200 && streak < 5; k++) {
		rp = run_params(2, 2, 0);
		r = (topo_report *)&r;
		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo_plan_run(p, &rp, &r, &err);
		topo__alloc_fail_after(-1);
		if (rc == 0) {
			expect_verified(r, "after allocation failures");
			topo_report_free(r);
			streak++;
			continue;
		}
		streak = 0;
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK(strncmp(err.text, "out of memory", 13) == 0, "%s",
		      err.text);
		CHECK(r == NULL, "failed run set *out");
	}
	CHECK(rc == 0 && streak == 5 && k >= 13, "succeeded after %ld runs", k);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* topo_plan_new: checks and defaults (the algorithms themselves are tested
 * elsewhere) */

/* Reduce in segments through the real planner and pool: large segments
 * (byte ranges held while combining), small ones (under the bucket's
 * mutex), a partial last segment, on the physical and hierarchical trees,
 * with more threads than cores. */
static void test_reduce_segments(void)
{
	static const struct {
		const char *shape, *algo;
		int32_t root;
		size_t bytes, segment;
		enum topo_type type;
		enum topo_redop op;
	} c[] = {
	    {"hierarchical", "hierarchical", -1, (64 << 10) + 12, 8 << 10,
	     TOPO_INT32, TOPO_SUM},
	    {"hierarchical", "hierarchical", 7, 3000, 1000, TOPO_INT8,
	     TOPO_BXOR},
	    {"physical", "tree", 11, (96 << 10) + 8, 0, TOPO_DOUBLE, TOPO_SUM},
	    {"physical", "tree", 0, 512 << 10, 0, TOPO_FLOAT, TOPO_MAX},
	};
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);

	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct topo_plan_params q;
		topo_tree *t = NULL;
		topo_plan *p = NULL;
		topo_report *r;
		topo_error err;
		char what[96];
		int64_t S = c[i].segment == 0
				? (c[i].bytes >= (256 << 10)
				       ? (int64_t)(c[i].bytes + 65535) / 65536
				       : 1)
				: (int64_t)((c[i].bytes + c[i].segment - 1) /
					    c[i].segment);

		topo_error_clear(&err);
		CHECK_INT(topo_tree_new(&t, g, c[i].shape, &err), 0);
		topo_plan_params_init(&q, sizeof(q), TOPO_OP_REDUCE);
		q.algorithm = c[i].algo;
		q.root = c[i].root;
		q.bytes = c[i].bytes;
		q.segment = c[i].segment;
		q.type = c[i].type;
		q.redop = c[i].op;
		CHECK(topo_plan_new(&p, t, &q, &err) == 0, "%s", err.text);
		if (p == NULL) {
			topo_tree_free(t);
			continue;
		}
		CHECK_INT(topo_plan_messages(p),
			  S * (11 + (q.root >= 0 &&
				     topo_group_rank(g, q.root) != t->root)));
		snprintf(what, sizeof(what), "reduce %s in %lld segments",
			 c[i].algo, (long long)S);
		r = run(p, 8, 3, 0);
		expect_verified(r, what);
		CHECK_INT(topo_report_iterations(r), 3);
		topo_report_free(r);
		topo_plan_free(p);
		topo_tree_free(t);
	}
	topo_group_free(g);
	topo_machine_free(m);
}

/*
 * A plan whose buffers cannot fit is refused while it is built, before its
 * messages: 1 TiB per member in 64 KiB segments would otherwise be some 200
 * million messages (and far more memory than the buffers' absence saves).
 * The sizes are the plan's own (topo_plan_buffer_bytes), so the message
 * names the exact need.
 */
static void test_plan_memory(void)
{
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree *t = NULL;
	struct topo_plan_params q;
	int64_t B = INT64_C(1) << 40;
	char head[160];
	topo_error err;
	double t0;

	topo_error_clear(&err);
	CHECK_INT(topo_tree_new(&t, g, "hierarchical", &err), 0);
	topo_plan_params_init(&q, sizeof(q), TOPO_OP_BCAST);
	for (int op = 0; op <= TOPO_OP_REDUCE; op++) {
		topo_plan *p = NULL;
		int64_t need = -1;

		/* Every buffer is a multiple of the bytes per member: the
		 * same plan over 8 bytes, scaled, is the need. */
		q.op = (enum topo_op)op;
		q.type = op == TOPO_OP_REDUCE ? TOPO_INT64 : TOPO_INT8;
		q.bytes = 8;
		topo_error_clear(&err);
		CHECK(topo_plan_new(&p, t, &q, &err) == 0, "%s", err.text);
		if (p != NULL)
			need = topo_plan_buffer_bytes(p) / 8 * B;
		topo_plan_free(p);
		q.bytes = (size_t)B;
		p = (topo_plan *)&p;
		topo_error_clear(&err);
		t0 = now();
		CHECK_INT(topo_plan_new(&p, t, &q, &err), TOPO_ELIMIT);
		/* Refused before anything is built: building it would take
		 * hours (or all memory).  A bound against a hang only, far
		 * above what a loaded host adds. */
		CHECK(now() - t0 < 60.0, "%s refused after %.3f s",
		      topo_op_name(q.op), now() - t0);
		CHECK(p == NULL, "refused plan set *out");
		snprintf(head, sizeof(head), "MiB: buffers %lld, plan ",
			 (long long)((need >> 20) + ((need & 1048575) != 0)));
		CHECK(strncmp(err.text, "the run needs ", 14) == 0 &&
			  strstr(err.text, head) != NULL,
		      "%s: \"%s\", want \"...%s...\"", topo_op_name(q.op),
		      err.text, head);
		CHECK(strstr(err.text, "available") != NULL, "%s", err.text);
	}
	/* More than int64 counts: gather's root receives 12 blocks of 2^59
	 * bytes and the members send 12 more. */
	q.op = TOPO_OP_GATHER;
	q.algorithm = "tree";
	q.bytes = (size_t)1 << 59;
	q.type = TOPO_INT8;
	topo_error_clear(&err);
	{
		topo_plan *p = (topo_plan *)&p;

		CHECK_INT(topo_plan_new(&p, t, &q, &err), TOPO_ELIMIT);
		CHECK(p == NULL, "refused plan set *out");
	}
	CHECK_STR(err.text, "the run needs more than 9223372036854775807 bytes");
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
}

/* topo_plan_new refuses params (of any version) with code and text want. */
static void plan_refused(const topo_tree *t, const void *params, int code,
			 const char *want, int line)
{
	topo_plan *p = (topo_plan *)&p;
	topo_error err;

	topo_error_clear(&err);
	CHECK(topo_plan_new(&p, t, params, &err) == code, "line %d: code %d",
	      line, err.code);
	CHECK(p == NULL, "line %d: *out not NULL", line);
	CHECK(strcmp(err.text, want) == 0, "line %d: \"%s\", want \"%s\"", line,
	      err.text, want);
}

static void plan_bad(const topo_tree *t, struct topo_plan_params q, int code,
		     const char *want, int line)
{
	plan_refused(t, &q, code, want, line);
}

static void test_plan_new(void)
{
	static const int32_t tasks[] = {1024, 1024, 1024, 1024};
	topo_machine *m = small_machine();
	topo_machine *big = machine(4, tasks, 1);
	topo_group *g = group_of(m, "world", NULL, 12);
	static const int32_t odd[] = {1, 4, 7, 10};
	topo_group *g2 = group_of(m, "odd", odd, 4);
	int32_t *even = malloc(2048 * sizeof(int32_t));
	topo_group *g3;
	topo_tree *t = NULL, *t2 = NULL, *t2h = NULL, *t3 = NULL;
	topo_error err;
	struct topo_plan_params q;
	static const char *const defaults[] = {"flood", "tree", "chunked",
					       "hierarchical"};

	for (int i = 0; i < 2048; i++)
		even[i] = 2 * i;
	g3 = group_of(big, "even", even, 2048);
	free(even);
	topo_error_clear(&err);
	CHECK_INT(topo_tree_new(&t, g, "physical", &err), 0);
	CHECK_INT(topo_tree_new(&t2, g2, "binomial", &err), 0);
	CHECK_INT(topo_tree_new(&t2h, g2, "hierarchical", &err), 0);
	CHECK_INT(topo_tree_new(&t3, g3, "binomial", &err), 0);

	topo_plan_params_init(&q, sizeof(q), TOPO_OP_BCAST);
	q.root = 99;
	plan_bad(t, q, TOPO_EARG,
		 "endpoint 99 is not a member of group \"world\" (members: "
		 "0..11)",
		 __LINE__);
	q.root = 2;
	plan_bad(t2, q, TOPO_EARG,
		 "endpoint 2 is not a member of group \"odd\" (members: 1, "
		 "4, 7, 10)",
		 __LINE__);
	q.root = -2;
	plan_bad(t3, q, TOPO_EARG,
		 "endpoint -2 is not a member of group \"even\" (members: 0, "
		 "2, 4, 6, 8, 10, ..., 4094; 2048 in all)",
		 __LINE__);
	q.root = -1;
	q.algorithm = "tree";
	plan_bad(t, q, TOPO_EARG,
		 "unknown bcast algorithm \"tree\" (valid: flood)", __LINE__);
	q.op = TOPO_OP_SCATTER;
	q.algorithm = "flood";
	plan_bad(t, q, TOPO_EARG,
		 "unknown scatter algorithm \"flood\" (valid: tree, "
		 "or-combine, direct)",
		 __LINE__);
	q.op = TOPO_OP_GATHER;
	q.algorithm = "";
	plan_bad(t, q, TOPO_EARG,
		 "unknown gather algorithm \"\" (valid: chunked, tree)",
		 __LINE__);
	q.op = TOPO_OP_REDUCE;
	q.algorithm = "Tree";
	plan_bad(t, q, TOPO_EARG,
		 "unknown reduce algorithm \"Tree\" (valid: hierarchical, "
		 "tree, direct)",
		 __LINE__);
	q.algorithm = NULL;
	q.type = TOPO_INT32;
	q.bytes = 10;
	plan_bad(t, q, TOPO_EARG,
		 "10 bytes is not a multiple of 4, the size of int32",
		 __LINE__);
	q.op = TOPO_OP_GATHER;
	q.type = TOPO_DOUBLE;
	plan_bad(t, q, TOPO_EARG,
		 "10 bytes is not a multiple of 8, the size of double",
		 __LINE__);
	q.op = TOPO_OP_REDUCE;
	q.type = TOPO_FLOAT;
	q.bytes = 0;
	q.redop = TOPO_BXOR;
	plan_bad(t, q, TOPO_EARG,
		 "operator bxor applies to integer types only, not float "
		 "(valid: sum, prod, min, max)",
		 __LINE__);
	q.redop = TOPO_REDOP_COUNT;
	plan_bad(t, q, TOPO_EARG, "unknown operator 7", __LINE__);
	q.redop = TOPO_SUM;
	q.type = (enum topo_type) - 1;
	plan_bad(t, q, TOPO_EARG, "unknown type -1", __LINE__);
	q.type = TOPO_INT8;
	q.op = TOPO_OP_COUNT;
	plan_bad(t, q, TOPO_EARG, "unknown operation 9", __LINE__);
	/* Rootless operations refuse a root; a barrier, bytes. */
	q.op = TOPO_OP_ALLREDUCE;
	q.root = t->g->members[0];
	plan_bad(t, q, TOPO_EARG, "allreduce has no root (endpoint 0 given)",
		 __LINE__);
	q.root = -1;
	q.op = TOPO_OP_BARRIER;
	q.bytes = 8;
	plan_bad(t, q, TOPO_EARG, "barrier moves no data (8 bytes given)",
		 __LINE__);
	q.bytes = 8;
	q.op = TOPO_OP_SCATTER;
	q.bytes = SIZE_MAX / 4;
	plan_bad(t, q, TOPO_ELIMIT,
		 "4611686018427387903 bytes for each of 12 members is more "
		 "than a buffer can hold",
		 __LINE__);
	plan_bad(NULL, q, TOPO_EARG,
		 "topo_plan_new: out, tree and parameters are required",
		 __LINE__);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_new(NULL, t, &q, &err), TOPO_EARG);

	/* Defaults (topo_plan_params_init): 8 bytes, the op's first
	 * algorithm, the tree's root (reduce's default algorithm wants the
	 * hierarchical tree). */
	for (int op = 0; op < 4; op++) {
		const topo_tree *tt = op == TOPO_OP_REDUCE ? t2h : t2;
		topo_plan *p = NULL;

		topo_plan_params_init(&q, sizeof(q), (enum topo_op)op);
		topo_error_clear(&err);
		CHECK(topo_plan_new(&p, tt, &q, &err) == 0, "%s: %s",
		      defaults[op], err.text);
		if (p == NULL)
			continue;
		CHECK_STR(topo_plan_algorithm(p), defaults[op]);
		CHECK_INT(topo_plan_root(p), odd[tt->root]);
		CHECK_INT(p->params.bytes, 8);
		CHECK_INT(p->root, tt->root);
		CHECK_INT(p->n, 4);
		/* reduce: int32, the others int8 */
		CHECK_INT(p->params.type,
			  op == TOPO_OP_REDUCE ? TOPO_INT32 : TOPO_INT8);
		CHECK_INT(p->type_size, op == TOPO_OP_REDUCE ? 4 : 1);
		CHECK_INT(p->params.redop, TOPO_SUM);
		CHECK(p->params.algorithm == p->algorithm,
		      "params.algorithm not the plan's own");
		topo_plan_free(p);
	}
	/* Explicit choices are kept; root given by endpoint id. */
	{
		topo_plan *p = NULL;
		char name[] = "or-combine";

		topo_plan_params_init(&q, sizeof(q), TOPO_OP_SCATTER);
		q.algorithm = name;
		q.root = 10;
		q.bytes = 24;
		topo_error_clear(&err);
		CHECK(topo_plan_new(&p, t2, &q, &err) == 0, "%s", err.text);
		name[0] = 'X'; /* the plan keeps its own copy */
		if (p != NULL) {
			CHECK_STR(topo_plan_algorithm(p), "or-combine");
			CHECK_INT(topo_plan_root(p), 10);
			CHECK_INT(p->root, 3);
			CHECK_INT(p->params.bytes, 24);
		}
		topo_plan_free(p);
	}
	topo_tree_free(t);
	topo_tree_free(t2);
	topo_tree_free(t2h);
	topo_tree_free(t3);
	topo_group_free(g);
	topo_group_free(g2);
	topo_group_free(g3);
	topo_machine_free(m);
	topo_machine_free(big);
}

/* ---------------------------------------------------------------------- */
/* The parameter structs: initialisers, and structs of other versions */

/* A struct topo_plan_params as an older version might have had it: the
 * fields up to bytes. */
struct old_plan_params {
	size_t size;
	enum topo_op op;
	const char *algorithm;
	int32_t root;
	size_t bytes;
};

/* The oldest possible: the operation alone. */
struct op_plan_params {
	size_t size;
	enum topo_op op;
};

/* One from a later version, with a field this one does not know. */
struct new_plan_params {
	struct topo_plan_params known;
	uint64_t later;
};

/* Plans over t with params (any version), expecting success; NULL
 * otherwise. */
static topo_plan *plan_with(const topo_tree *t, const void *params,
			    const char *what)
{
	topo_plan *p = NULL;
	topo_error err;

	topo_error_clear(&err);
	CHECK(topo_plan_new(&p, t, params, &err) == 0, "%s: %s", what,
	      err.text);
	return p;
}

static void test_params(void)
{
	topo_machine *m = small_machine();
	topo_group *g = group_of(m, "world", NULL, 12);
	topo_tree *t = NULL;
	struct topo_plan_params q, zero;
	struct topo_run_params rp, rzero;
	struct old_plan_params *old = malloc(sizeof(*old));
	struct op_plan_params *opq = malloc(sizeof(*opq));
	struct new_plan_params big;
	topo_plan *p = NULL;
	topo_report *r = NULL;
	topo_error err;
	char want[400];
	int32_t root;

	topo_error_clear(&err);
	CHECK_INT(topo_tree_new(&t, g, "hierarchical", &err), 0);
	/* The fixture's tree root is not endpoint 0, which a zero-filled
	 * root would name. */
	root = g->members[t->root];
	CHECK_INT(root, 6);

	/* Every documented default. */
	memset(&q, 0x5a, sizeof(q));
	CHECK_INT(topo_plan_params_init(&q, sizeof(q), TOPO_OP_REDUCE), 0);
	CHECK_INT(q.size, sizeof(q));
	CHECK_INT(q.op, TOPO_OP_REDUCE);
	CHECK(q.algorithm == NULL, "algorithm not NULL");
	CHECK_INT(q.root, -1);
	CHECK_INT(q.bytes, 8);
	CHECK_INT(q.type, TOPO_INT32);
	CHECK_INT(q.redop, TOPO_SUM);
	CHECK_INT(q.segment, 0);
	CHECK_INT(q.chunk, 0);
	CHECK_INT(topo_plan_params_init(&q, sizeof(q), TOPO_OP_SCATTER), 0);
	CHECK_INT(q.type, TOPO_INT8);
	CHECK_INT(q.root, -1);
	memset(&rp, 0x5a, sizeof(rp));
	CHECK_INT(topo_run_params_init(&rp, sizeof(rp)), 0);
	CHECK_INT(rp.size, sizeof(rp));
	CHECK_INT(rp.threads, 0);
	CHECK_INT(rp.iterations, 1);
	CHECK(rp.timeout == 60, "timeout %g", rp.timeout);
	CHECK_INT(rp.verify, TOPO_VERIFY_EVERY);
	CHECK_INT(rp.reserved, 0);

	/* Initialised: the tree's root, not endpoint 0. */
	topo_plan_params_init(&q, sizeof(q), TOPO_OP_BCAST);
	p = plan_with(t, &q, "initialised");
	if (p != NULL)
		CHECK_INT(topo_plan_root(p), root);
	topo_plan_free(p);

	/* Zero-initialised, as the header once said to: refused, and the
	 * text says what to do. */
	memset(&zero, 0, sizeof(zero));
	zero.op = TOPO_OP_BCAST;
	plan_bad(t, zero, TOPO_EARG,
		 "struct topo_plan_params is not initialised (its size is 0): "
		 "call topo_plan_params_init() first",
		 __LINE__);
	topo_plan_params_init(&q, sizeof(q), TOPO_OP_BCAST);
	p = plan_with(t, &q, "for the runs");
	memset(&rzero, 0, sizeof(rzero));
	r = (topo_report *)&r;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_run(p, &rzero, &r, &err), TOPO_EARG);
	CHECK_STR(err.text, "struct topo_run_params is not initialised (its "
			    "size is 0): call topo_run_params_init() first");
	CHECK(r == NULL, "*out not cleared");
	/* verify: one of the two; reserved: 0. */
	topo_run_params_init(&rp, sizeof(rp));
	rp.verify = 2;
	r = (topo_report *)&r;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), TOPO_EARG);
	CHECK_STR(err.text, "topo_run_params: verify is 2, not "
			    "TOPO_VERIFY_EVERY (0) or TOPO_VERIFY_LAST (1)");
	CHECK(r == NULL, "*out not cleared");
	rp.verify = -1;
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), TOPO_EARG);
	rp.verify = TOPO_VERIFY_LAST;
	rp.reserved = 1;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), TOPO_EARG);
	CHECK_STR(err.text, "topo_run_params: reserved is 1; it must be 0");
	rp.reserved = 0;
	rp.iterations = 3;
	CHECK_INT(topo_plan_run(p, &rp, &r, &err), 0);
	if (r != NULL) {
		CHECK_INT(topo_report_iterations(r), 3);
		CHECK_INT(topo_report_verified(r), 1);
	}
	topo_report_free(r);
	r = NULL;
	topo_plan_free(p);

	/* Too small, or no size at all: refused. */
	topo_plan_params_init(&q, sizeof(q), TOPO_OP_BCAST);
	q.size = sizeof(size_t);
	for (int i = 0; i < 2; i++) {
		snprintf(want, sizeof(want),
			 "struct topo_plan_params has size %zu, not that of "
			 "any version of it (%zu to 4096 bytes; this one: "
			 "%zu): initialise it with topo_plan_params_init(p, "
			 "sizeof(*p), ...)",
			 q.size,
			 offsetof(struct topo_plan_params, op) +
			     sizeof(enum topo_op),
			 sizeof(q));
		plan_bad(t, q, TOPO_EARG, want, __LINE__);
		q.size = 5000; /* garbage: the bytes it claims are not read */
	}
	CHECK_INT(topo_plan_params_init(&q, sizeof(size_t), TOPO_OP_BCAST),
		  TOPO_EARG);
	CHECK_INT(q.size, 0); /* the bytes given are zeroed */
	CHECK_INT(topo_plan_params_init(NULL, sizeof(q), TOPO_OP_BCAST),
		  TOPO_EARG);
	CHECK_INT(topo_run_params_init(NULL, sizeof(rp)), TOPO_EARG);
	CHECK_INT(topo_run_params_init(&rp, 4), TOPO_EARG);
	/* A garbage size is refused before anything is written: q and rp
	 * are far smaller than what it claims. */
	q.size = 77;
	CHECK_INT(topo_plan_params_init(&q, (size_t)1 << 20, TOPO_OP_BCAST),
		  TOPO_EARG);
	CHECK_INT(q.size, 77);
	rp.size = 77;
	CHECK_INT(topo_run_params_init(&rp, (size_t)1 << 20), TOPO_EARG);
	CHECK_INT(rp.size, 77);
	/* An unknown op: initialised all the same, and refused when
	 * planned. */
	CHECK_INT(topo_plan_params_init(&q, sizeof(q), (enum topo_op)9),
		  TOPO_EARG);
	CHECK_INT(q.size, sizeof(q));
	CHECK_INT(q.root, -1);
	plan_bad(t, q, TOPO_EARG, "unknown operation 9", __LINE__);

	/* A program built against an older, smaller struct: the fields it
	 * has are read, the others take their defaults (reduce: int32).
	 * old and opq are allocated to their size, so that AddressSanitizer
	 * sees any read beyond it. */
	CHECK_INT(sizeof(*old), offsetof(struct topo_plan_params, type));
	memset(old, 0, sizeof(*old));
	old->size = sizeof(*old);
	old->op = TOPO_OP_REDUCE;
	old->algorithm = "tree";
	old->root = 3;
	old->bytes = 16;
	p = plan_with(t, old, "old struct");
	if (p != NULL) {
		CHECK_STR(topo_plan_algorithm(p), "tree");
		CHECK_INT(topo_plan_root(p), 3);
		CHECK_INT(p->params.bytes, 16);
		CHECK_INT(p->params.type, TOPO_INT32);
		CHECK_INT(p->params.redop, TOPO_SUM);
		CHECK_INT(p->params.segment, 0);
		CHECK_INT(p->params.chunk, 0);
	}
	topo_plan_free(p);
	opq->size = sizeof(*opq);
	opq->op = TOPO_OP_GATHER;
	p = plan_with(t, opq, "op only");
	if (p != NULL) {
		CHECK_STR(topo_plan_algorithm(p), "chunked");
		CHECK_INT(topo_plan_root(p), root);
		CHECK_INT(p->params.bytes, 8);
		CHECK_INT(p->params.type, TOPO_INT8);
	}
	topo_plan_free(p);

	/* A later version's struct: understood while what this version does
	 * not know is 0, refused once it is set. */
	CHECK_INT(topo_plan_params_init(&big.known, sizeof(big), TOPO_OP_BCAST),
		  0);
	CHECK_INT(big.later, 0);
	big.known.bytes = 24;
	p = plan_with(t, &big, "later struct");
	if (p != NULL)
		CHECK_INT(p->params.bytes, 24);
	topo_plan_free(p);
	big.later = 1;
	snprintf(want, sizeof(want),
		 "struct topo_plan_params of %zu bytes sets byte %zu, but "
		 "libtopo %s knows only its first %zu: a field of a later "
		 "version is not supported by this library",
		 sizeof(big), offsetof(struct new_plan_params, later),
		 TOPO_VERSION_STRING, sizeof(struct topo_plan_params));
	plan_refused(t, &big, TOPO_EARG, want, __LINE__);

	/* Run parameters of an older version, without timeout (which must
	 * then be the default, 60 s), read directly and used for a run. */
	topo_plan_params_init(&q, sizeof(q), TOPO_OP_BCAST);
	p = plan_with(t, &q, "for the runs");
	{
		struct old_run_params {
			size_t size;
			int threads;
			int iterations;
		} *oldrun = malloc(sizeof(*oldrun));
		struct topo_run_params got;

		CHECK_INT(sizeof(*oldrun),
			  offsetof(struct topo_run_params, timeout));
		oldrun->size = sizeof(*oldrun);
		oldrun->threads = 3;
		oldrun->iterations = 2;
		memset(&got, 0x5a, sizeof(got));
		topo_error_clear(&err);
		CHECK_INT(topo__run_params_read(&got, (const void *)oldrun,
						&err),
			  0);
		CHECK_INT(got.threads, 3);
		CHECK_INT(got.iterations, 2);
		CHECK(got.timeout == 60, "timeout %g, want 60", got.timeout);
		CHECK_INT(got.verify, TOPO_VERIFY_EVERY);
		CHECK_INT(got.reserved, 0);
		topo_error_clear(&err);
		CHECK_INT(topo_plan_run(p, (const void *)oldrun, &r, &err), 0);
		if (r != NULL) {
			CHECK_INT(topo_report_threads(r), 3);
			CHECK_INT(topo_report_iterations(r), 2);
			CHECK_INT(topo_report_verified(r), 1);
		}
		topo_report_free(r);
		free(oldrun);
	}
	topo_plan_free(p);
	free(old);
	free(opq);
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* The engine at scale: a bcast of 8 bytes down a binary tree of 1,048,576
 * members (each member forwards from its parent's RECV) on 2 threads. */
static void bench_million(void)
{
	const int32_t n = SANITIZED ? 1 << 16 : 1 << 20;
	int32_t tasks[1024];
	topo_machine *m;
	topo_group *g;
	topo_tree t;
	struct topo_plan *p;
	topo_report *r;
	double lo, med, hi, t0;

	for (int i = 0; i < 1024; i++)
		tasks[i] = n / 1024;
	m = machine(1024, tasks, 1);
	g = group_of(m, "world", NULL, n);
	t = fake_tree(g, 0);
	t0 = now();
	p = hand_plan(&t, TOPO_OP_BCAST, 8, TOPO_INT8, TOPO_SUM);
	bufsize(p, TOPO__SEND, 0, 8);
	for (int32_t k = 0; k < n; k++) {
		bufsize(p, TOPO__RECV, k, 8);
		if (k == 0)
			msg(p, TOPO__COPY, 0, TOPO__SEND, 0, 0, TOPO__RECV, 0,
			    8, slot(p, 0, 1));
		else
			msg(p, TOPO__COPY, (k - 1) / 2, TOPO__RECV, 0, k,
			    TOPO__RECV, 0, 8, slot(p, k, 1));
		if (k > 0)
			dep(p, (k - 1) / 2, k);
	}
	finish(p);
	printf("exec: plan of %d messages built in %.3f s\n", n, now() - t0);
	t0 = now();
	r = run(p, 2, 3, 0);
	expect_verified(r, "million bcast");
	/* The traffic, counted by the run's pass over the plan in tasks of
	 * 2^18 messages on both threads: the edges within a node of n/1024
	 * members, and the rest. */
	{
		int64_t shm = 0, net = 0, want_shm = 0;

		for (int32_t k = 1; k < n; k++)
			want_shm += (k - 1) / 2 / (n / 1024) == k / (n / 1024);
		topo_report_messages(r, &shm, &net);
		CHECK_INT(shm, want_shm);
		CHECK_INT(net, n - 1 - want_shm);
		topo_report_bytes_moved(r, &shm, &net);
		CHECK_INT(shm, 8 * want_shm);
		CHECK_INT(net, 8 * (n - 1 - want_shm));
	}
	topo_report_seconds(r, &lo, &med, &hi);
	/* Speed is make bench's business, not a test's: this only prints. */
	printf("exec: bcast of 8 bytes to %d members, 2 threads: min %.3f s, "
	       "median %.3f s, max %.3f s (%.1f M messages/s); whole run "
	       "%.3f s\n",
	       n, lo, med, hi, n / med / 1e6, now() - t0);
	topo_report_free(r);
	topo_plan_free(p);
	topo_group_free(g);
	topo_machine_free(m);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_exec", 20240611);
	CHECK_RUN(names, test_names());
	CHECK_RUN(reduce_ops, test_reduce_ops());
	CHECK_RUN(reduce_kernels, test_reduce_kernels());
	CHECK_RUN(reduce3, test_reduce3());
	CHECK_RUN(builder, test_builder());
	CHECK_RUN(transport, test_transport());
	CHECK_RUN(bufsizes_compact, test_bufsizes_compact());
	CHECK_RUN(stream_run, test_stream_run());
	CHECK_RUN(llc_share, test_llc_share());
	CHECK_RUN(stream, test_stream());
	CHECK_RUN(fuse, test_fuse());
	CHECK_RUN(part_transport, test_part_transport());
	CHECK_RUN(part_runs, test_part_runs());
	CHECK_RUN(range_locks, test_range_locks());
	for (int threads = 1; threads <= 8; threads *= 8) {
		CHECK_RUN(bcast, test_bcast(threads));
		CHECK_RUN(chain, test_chain(threads));
		CHECK_RUN(gather, test_gather(threads));
		CHECK_RUN(failed, test_failed(threads));
		CHECK_RUN(small_copies, test_small_copies(threads));
		CHECK_RUN(counted, test_counted(threads));
	}
	CHECK_RUN(counted, test_counted(2));
	CHECK_RUN(reduce, test_reduce(8, 2000, TOPO_INT32, TOPO_SUM, 4096));
	CHECK_RUN(reduce, test_reduce(2, 1000, TOPO_DOUBLE, TOPO_SUM, 1024));
	CHECK_RUN(reduce, test_reduce(8, 500, TOPO_FLOAT, TOPO_PROD, 512));
	CHECK_RUN(reduce, test_reduce(2, 300, TOPO_INT8, TOPO_PROD, 64));
	CHECK_RUN(reduce, test_reduce(8, 300, TOPO_UINT16, TOPO_MIN, 64));
	CHECK_RUN(reduce, test_reduce(8, 300, TOPO_INT64, TOPO_MAX, 64));
	CHECK_RUN(reduce, test_reduce(2, 300, TOPO_UINT64, TOPO_BAND, 64));
	CHECK_RUN(reduce, test_reduce(8, 300, TOPO_UINT32, TOPO_BOR, 64));
	CHECK_RUN(reduce, test_reduce(8, 301, TOPO_INT16, TOPO_BXOR, 64));
	CHECK_RUN(reduce, test_reduce(1, 5, TOPO_DOUBLE, TOPO_MAX, 8));
	CHECK_RUN(release_chunks, test_release_chunks());
	CHECK_RUN(flood_depth_first, test_flood_depth_first());
	CHECK_RUN(fill, test_fill(1));
	CHECK_RUN(fill, test_fill(2));
	CHECK_RUN(faults, test_faults());
	CHECK_RUN(verify_threads, test_verify_threads());
	CHECK_RUN(timeout, test_timeout());
	CHECK_RUN(deadlines, test_deadlines());
	CHECK_RUN(memory, test_memory());
	CHECK_RUN(run_params, test_run_params());
	CHECK_RUN(plan_new, test_plan_new());
	CHECK_RUN(params, test_params());
	CHECK_RUN(reduce_segments, test_reduce_segments());
	CHECK_RUN(plan_memory, test_plan_memory());
	CHECK_RUN(bench_million, bench_million());
	/* every run's mapped arenas returned, whatever way it ended */
	CHECK_INT(topo__blocks_mapped(), 0);
	return check_done("test_exec");
}
