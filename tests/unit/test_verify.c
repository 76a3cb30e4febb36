/*
 * test_verify.c - the replay's input pattern and verifier (verify.c).
 *
 * Plans are built by hand here (buffers, receipt slots), not by plan.c,
 * and "runs" are simulated by writing what every member must end with
 * straight from the operation's definition.  The verifier must then find
 * nothing, and find exactly the one fault injected afterwards: a wrong
 * byte, a missing delivery, a duplicate, a scribbled send buffer, for
 * every operation.  Reduce expectations for every type x op are recomputed
 * here in wide arithmetic (int64 / uint64 / double, no wrapping), and the
 * inputs are checked against the ranges that make every op exact in every
 * order.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include "check.h"

#include <ctype.h>
#include <math.h>

#define MAXERR 64
#define STARTS(s, prefix) (strncmp((s), (prefix), strlen(prefix)) == 0)

struct run {
	struct topo_plan p;
	int64_t *size[TOPO__NBUF];
	unsigned char **mem[TOPO__NBUF];
	int64_t *count; /* per slot */
	struct topo__verify_error errs[MAXERR];
	int nerr;
};

static unsigned char *getbuf(void *ctx, int32_t r, int kind)
{
	struct run *x = ctx;

	return x->mem[kind][r];
}

static void collect(void *ctx2, const struct topo__verify_error *e)
{
	struct run *x = ctx2;

	if (x->nerr < MAXERR)
		x->errs[x->nerr++] = *e;
}

static int64_t verify(struct run *x, int64_t max)
{
	x->nerr = 0;
	return topo__verify(&x->p, getbuf, x, x->count, collect, x, max);
}

static size_t tsize(enum topo_type t)
{
	static const size_t s[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};

	return s[t];
}

static int is_float(enum topo_type t)
{
	return t == TOPO_FLOAT || t == TOPO_DOUBLE;
}

static int is_signed(enum topo_type t)
{
	return t <= TOPO_INT64;
}

/* Element e of buffer b as a wide signed value (read at the type's width:
 * unsigned types are read as the signed type of their size). */
static int64_t get_i(enum topo_type t, const unsigned char *b, size_t e)
{
	switch (tsize(t)) {
	case 1: {
		int8_t v;

		memcpy(&v, b + e, 1);
		return v;
	}
	case 2: {
		int16_t v;

		memcpy(&v, b + 2 * e, 2);
		return v;
	}
	case 4: {
		int32_t v;

		memcpy(&v, b + 4 * e, 4);
		return v;
	}
	default: {
		int64_t v;

		memcpy(&v, b + 8 * e, 8);
		return v;
	}
	}
}

static uint64_t get_u(enum topo_type t, const unsigned char *b, size_t e)
{
	uint64_t v = 0;

	/* Little or big endian, the low bytes of a uint64 copied from the
	 * element's own bytes: compare through the fixed-width types. */
	switch (tsize(t)) {
	case 1: {
		uint8_t x;

		memcpy(&x, b + e, 1);
		v = x;
		break;
	}
	case 2: {
		uint16_t x;

		memcpy(&x, b + 2 * e, 2);
		v = x;
		break;
	}
	case 4: {
		uint32_t x;

		memcpy(&x, b + 4 * e, 4);
		v = x;
		break;
	}
	default:
		memcpy(&v, b + 8 * e, 8);
		break;
	}
	return v;
}

static double get_d(enum topo_type t, const unsigned char *b, size_t e)
{
	if (t == TOPO_FLOAT) {
		float f;

		memcpy(&f, b + 4 * e, 4);
		return f;
	}
	{
		double d;

		memcpy(&d, b + 8 * e, 8);
		return d;
	}
}

/* Element e as a double, whatever the type (exact for the values of the
 * reduce pattern's sums, products, minima and maxima). */
static double get_any(enum topo_type t, const unsigned char *b, size_t e)
{
	if (is_float(t))
		return get_d(t, b, e);
	if (is_signed(t))
		return (double)get_i(t, b, e);
	return (double)get_u(t, b, e);
}

static void put(enum topo_type t, unsigned char *b, size_t e, uint64_t bits,
		double d)
{
	switch (t) {
	case TOPO_FLOAT: {
		float f = (float)d;

		memcpy(b + 4 * e, &f, 4);
		return;
	}
	case TOPO_DOUBLE:
		memcpy(b + 8 * e, &d, 8);
		return;
	default:
		break;
	}
	switch (tsize(t)) {
	case 1: {
		uint8_t x = (uint8_t)bits;

		memcpy(b + e, &x, 1);
		break;
	}
	case 2: {
		uint16_t x = (uint16_t)bits;

		memcpy(b + 2 * e, &x, 2);
		break;
	}
	case 4: {
		uint32_t x = (uint32_t)bits;

		memcpy(b + 4 * e, &x, 4);
		break;
	}
	default:
		memcpy(b + 8 * e, &bits, 8);
		break;
	}
}

/* The reduction of every member's SEND, in wide arithmetic, into out.
 * Sums and products of the pattern's inputs never leave the type's range
 * (checked by check_inputs), so no wrapping is needed. */
static void ref_reduce(struct run *x, unsigned char *out)
{
	const struct topo_plan *p = &x->p;
	enum topo_type t = p->params.type;
	enum topo_redop op = p->params.redop;
	size_t ne = p->params.bytes / tsize(t);

	for (size_t e = 0; e < ne; e++) {
		int64_t si = get_i(t, x->mem[TOPO__SEND][0], e);
		uint64_t su = get_u(t, x->mem[TOPO__SEND][0], e);
		double sd =
		    is_float(t) ? get_d(t, x->mem[TOPO__SEND][0], e) : 0;

		for (int32_t r = 1; r < p->n; r++) {
			const unsigned char *b = x->mem[TOPO__SEND][r];
			int64_t vi = get_i(t, b, e);
			uint64_t vu = get_u(t, b, e);
			double vd = is_float(t) ? get_d(t, b, e) : 0;

			/* Only the representation of the type is combined
			 * wide: the others would overflow for nothing. */
			if (!is_signed(t))
				vi = si = 0;
			switch (op) {
			case TOPO_SUM:
				si += vi, su += vu, sd += vd;
				break;
			case TOPO_PROD:
				si *= vi, su *= vu, sd *= vd;
				break;
			case TOPO_MIN:
				si = vi < si ? vi : si;
				su = vu < su ? vu : su;
				sd = vd < sd ? vd : sd;
				break;
			case TOPO_MAX:
				si = vi > si ? vi : si;
				su = vu > su ? vu : su;
				sd = vd > sd ? vd : sd;
				break;
			case TOPO_BAND:
				su &= vu;
				break;
			case TOPO_BOR:
				su |= vu;
				break;
			default:
				su ^= vu;
				break;
			}
		}
		if (op >= TOPO_BAND)
			put(t, out, e, su, 0);
		else if (is_signed(t))
			put(t, out, e, (uint64_t)si, 0);
		else
			put(t, out, e, su, sd);
	}
}

static void run_free(struct run *x)
{
	for (int b = 0; b < TOPO__NBUF; b++) {
		if (x->mem[b] != NULL)
			for (int32_t r = 0; r < x->p.n; r++)
				free(x->mem[b][r]);
		free(x->mem[b]);
		free(x->size[b]);
	}
	free(x->p.slot_member);
	free(x->p.slot_expect);
	free(x->count);
	memset(x, 0, sizeof(*x));
}

static void add_slot(struct run *x, int32_t member, int32_t expect)
{
	int64_t s = x->p.nslots++;

	x->p.slot_member =
	    realloc(x->p.slot_member, (size_t)x->p.nslots * sizeof(int32_t));
	x->p.slot_expect =
	    realloc(x->p.slot_expect, (size_t)x->p.nslots * sizeof(int32_t));
	x->count = realloc(x->count, (size_t)x->p.nslots * sizeof(int64_t));
	x->p.slot_member[s] = member;
	x->p.slot_expect[s] = expect;
	x->count[s] = expect;
}

/* A plan of op over tree t with buffers as the algorithms lay them out, and
 * the correct end state already written (slots all delivered once). */
static void setup(struct run *x, const topo_tree *t, enum topo_op op,
		  enum topo_type type, enum topo_redop redop, size_t bytes,
		  int32_t root)
{
	int32_t n = topo_group_size(topo_tree_group(t));
	int64_t nb = (int64_t)bytes;

	memset(x, 0, sizeof(*x));
	x->p.t = t;
	x->p.params.op = op;
	x->p.params.type = type;
	x->p.params.redop = redop;
	x->p.params.bytes = bytes;
	x->p.n = n;
	x->p.root = root;
	x->p.type_size = tsize(type);
	for (int b = 0; b < TOPO__NBUF; b++) {
		x->size[b] = calloc((size_t)n, sizeof(int64_t));
		x->mem[b] = calloc((size_t)n, sizeof(unsigned char *));
		x->p.buf[b].each = x->size[b];
	}
	for (int32_t r = 0; r < n; r++) {
		switch (op) {
		case TOPO_OP_BCAST:
		case TOPO_OP_REDUCE:
			x->size[TOPO__SEND][r] = nb;
			x->size[TOPO__RECV][r] = nb;
			break;
		case TOPO_OP_SCATTER:
			x->size[TOPO__SEND][r] = r == root ? nb * n : 0;
			x->size[TOPO__RECV][r] = nb;
			break;
		case TOPO_OP_GATHER:
			x->size[TOPO__SEND][r] = nb;
			x->size[TOPO__RECV][r] = r == root ? nb * n : 0;
			break;
		case TOPO_OP_ALLREDUCE:
			x->size[TOPO__SEND][r] = nb;
			x->size[TOPO__RECV][r] = nb;
			break;
		case TOPO_OP_ALLGATHER:
			x->size[TOPO__SEND][r] = nb;
			x->size[TOPO__RECV][r] = nb * n;
			break;
		case TOPO_OP_REDUCE_SCATTER:
			x->size[TOPO__SEND][r] = nb * n;
			x->size[TOPO__RECV][r] = nb;
			break;
		case TOPO_OP_ALLTOALL:
			x->size[TOPO__SEND][r] = nb * n;
			x->size[TOPO__RECV][r] = nb * n;
			break;
		default: /* barrier: no buffers */
			break;
		}
		for (int b = 0; b < TOPO__NBUF; b++)
			x->mem[b][r] = malloc((size_t)x->size[b][r] + 1);
		topo__pattern_fill(&x->p, r, x->mem[TOPO__SEND][r],
				   (size_t)x->size[TOPO__SEND][r]);
		memset(x->mem[TOPO__RECV][r], TOPO__POISON,
		       (size_t)x->size[TOPO__RECV][r]);
	}
	for (int32_t r = 0; r < n; r++) {
		switch (op) {
		case TOPO_OP_BCAST:
			memcpy(x->mem[TOPO__RECV][r], x->mem[TOPO__SEND][root],
			       bytes);
			if (r != root)
				add_slot(x, r, 1);
			break;
		case TOPO_OP_SCATTER:
			memcpy(x->mem[TOPO__RECV][r],
			       x->mem[TOPO__SEND][root] + nb * r, bytes);
			if (r != root)
				add_slot(x, r, 1);
			break;
		case TOPO_OP_GATHER:
			memcpy(x->mem[TOPO__RECV][root] + nb * r,
			       x->mem[TOPO__SEND][r], bytes);
			if (r != root)
				add_slot(x, root, 1);
			break;
		case TOPO_OP_REDUCE:
			if (r != root)
				add_slot(x, root, 1);
			break;
		case TOPO_OP_ALLGATHER:
			for (int32_t b = 0; b < n; b++)
				memcpy(x->mem[TOPO__RECV][r] + nb * b,
				       x->mem[TOPO__SEND][b], bytes);
			add_slot(x, r, 1);
			break;
		case TOPO_OP_ALLTOALL:
			for (int32_t b = 0; b < n; b++)
				memcpy(x->mem[TOPO__RECV][r] + nb * b,
				       x->mem[TOPO__SEND][b] + nb * r, bytes);
			add_slot(x, r, 1);
			break;
		default: /* the reductions below; barrier: nothing */
			if (op != TOPO_OP_BARRIER)
				add_slot(x, r, 1);
			break;
		}
	}
	if (op == TOPO_OP_REDUCE)
		ref_reduce(x, x->mem[TOPO__RECV][root]);
	if (op == TOPO_OP_ALLREDUCE || op == TOPO_OP_REDUCE_SCATTER) {
		/* The whole vector reduced (n blocks for reduce-scatter),
		 * then each member's part of it. */
		size_t all = op == TOPO_OP_ALLREDUCE ? bytes : bytes * (size_t)n;
		unsigned char *v = malloc(all + 1);

		x->p.params.bytes = all;
		ref_reduce(x, v);
		x->p.params.bytes = bytes;
		for (int32_t r = 0; r < n; r++)
			memcpy(x->mem[TOPO__RECV][r],
			       v + (op == TOPO_OP_ALLREDUCE ? 0 : nb * r), bytes);
		free(v);
	}
}

/* ---------------------------------------------------------------------- */

static topo_machine *mach;
static topo_group *grp;
static topo_tree *tree;

/* 8 tasks on 3 nodes; the group leaves out task 0, so endpoint = rank + 1
 * and a detail that names an endpoint is told apart from one naming a
 * rank. */
static void make_tree(void)
{
	static const char json[] =
	    "{\"name\": \"v\", \"nodes\": 3, \"tasks_per_node\": [3, 1, 4],"
	    " \"network\": {\"type\": \"kary\", \"fanout\": 2}}";
	topo_error err;

	topo_error_clear(&err);
	if (topo_machine_load_string(&mach, json, strlen(json), NULL, &err) ||
	    topo_group_new(&grp, mach, "g", "cols 1:7", &err) ||
	    topo_tree_new(&tree, grp, "physical", &err)) {
		fprintf(stderr, "setup: %s\n", err.text);
		exit(2);
	}
}

static void test_pattern(void)
{
	struct run x;
	enum { N = 300, LEN = 64 };
	static unsigned char a[N][LEN];
	unsigned char b[LEN], c[LEN];

	/* Deterministic, and a prefix of a longer fill. */
	setup(&x, tree, TOPO_OP_BCAST, TOPO_INT8, TOPO_SUM, 8, 0);
	x.p.n = N;
	for (int32_t r = 0; r < N; r++)
		topo__pattern_fill(&x.p, r, a[r], LEN);
	topo__pattern_fill(&x.p, 17, b, 37);
	CHECK(memcmp(a[17], b, 37) == 0, "a fill is a prefix of a longer one");
	topo__pattern_fill(&x.p, 17, b, LEN);
	CHECK(memcmp(a[17], b, LEN) == 0, "same inputs, same pattern");

	/* Every pair of members differs in every 4-byte word. */
	{
		long same = 0;

		for (int32_t r = 0; r < N; r++)
			for (int32_t s = r + 1; s < N; s++)
				for (int w = 0; w < LEN / 4; w++)
					same += memcmp(a[r] + 4 * w,
						       a[s] + 4 * w, 4) == 0;
		CHECK_INT(same, 0);
	}
	/* Words within one member differ too (no short period), and the
	 * pattern is not mostly poison. */
	{
		long same = 0, poison = 0;

		for (int w = 1; w < LEN / 4; w++)
			same += memcmp(a[5], a[5] + 4 * w, 4) == 0;
		for (int32_t r = 0; r < N; r++)
			for (int i = 0; i < LEN; i++)
				poison += a[r][i] == TOPO__POISON;
		CHECK_INT(same, 0);
		CHECK(poison < N * LEN / 64, "%ld poison bytes", poison);
	}
	/* Other operations and types give other data. */
	x.p.params.op = TOPO_OP_SCATTER;
	x.p.root = 17;
	topo__pattern_fill(&x.p, 17, b, LEN);
	CHECK(memcmp(a[17], b, LEN) != 0, "scatter pattern = bcast pattern");
	/* A scatter's non-roots contribute zeros (or-combine). */
	x.p.root = 16;
	topo__pattern_fill(&x.p, 17, c, LEN);
	{
		static const unsigned char zero[LEN];

		CHECK(memcmp(c, zero, LEN) == 0, "non-root scatter input "
						 "is not zeros");
	}
	x.p.root = 0;
	x.p.params.op = TOPO_OP_GATHER;
	x.p.params.type = TOPO_INT32;
	topo__pattern_fill(&x.p, 17, c, LEN);
	CHECK(memcmp(b, c, LEN) != 0, "gather pattern = scatter pattern");
	x.p.params.type = TOPO_INT8;
	topo__pattern_fill(&x.p, 17, b, LEN);
	CHECK(memcmp(b, c, LEN) != 0, "type does not change the pattern");
	x.p.n = topo_group_size(grp);
	run_free(&x);

	/* Scatter: the root's blocks differ from one another. */
	setup(&x, tree, TOPO_OP_SCATTER, TOPO_INT8, TOPO_SUM, 4, 2);
	{
		long same = 0;

		for (int32_t r = 0; r < x.p.n; r++)
			for (int32_t s = r + 1; s < x.p.n; s++)
				same += memcmp(x.mem[TOPO__SEND][2] + 4 * r,
					       x.mem[TOPO__SEND][2] + 4 * s,
					       4) == 0;
		CHECK_INT(same, 0);
	}
	run_free(&x);
}

/* Reduce inputs stay where every op is exact in every order. */
static void test_reduce_inputs(void)
{
	enum { N = 40, NE = 24 };
	struct run x;

	for (enum topo_type t = 0; t < TOPO_TYPE_COUNT; t++) {
		for (enum topo_redop op = 0; op < TOPO_REDOP_COUNT; op++) {
			long bad = 0, twos_max = 0, twos_any = 0, neg = 0;
			unsigned char buf[N][NE * 8];

			if (is_float(t) && op >= TOPO_BAND)
				continue;
			setup(&x, tree, TOPO_OP_REDUCE, t, op, tsize(t), 0);
			x.p.n = N;
			for (int32_t r = 0; r < N; r++)
				topo__pattern_fill(&x.p, r, buf[r],
						   NE * tsize(t));
			for (int e = 0; e < NE; e++) {
				long twos = 0;

				for (int32_t r = 0; r < N; r++) {
					double v =
					    get_any(t, buf[r], (size_t)e);

					neg += v < 0;
					if (op == TOPO_SUM)
						bad += !(v >= -3 && v <= 3 &&
							 v == floor(v));
					if (op == TOPO_PROD) {
						bad += !(fabs(v) == 1 ||
							 fabs(v) == 2);
						twos += fabs(v) == 2;
					}
					if (op == TOPO_MIN || op == TOPO_MAX)
						bad += v != floor(v);
				}
				twos_max = twos > twos_max ? twos : twos_max;
				twos_any += twos > 0;
			}
			CHECK(bad == 0,
			      "type %d op %d: %ld inputs out of range", t, op,
			      bad);
			if (op == TOPO_PROD) {
				CHECK(twos_max <= 4,
				      "type %d: %ld twos in one element", t,
				      twos_max);
				CHECK(twos_any > 0, "type %d: no 2 at all", t);
			}
			/* Signed and float sums/products get negative
			 * inputs; unsigned ones never wrap to huge values. */
			if (op == TOPO_SUM || op == TOPO_PROD) {
				if (is_signed(t) || is_float(t))
					CHECK(neg > 0,
					      "type %d op %d: no "
					      "negative input",
					      t, op);
			}
			x.p.n = topo_group_size(grp);
			run_free(&x);
		}
	}
}

/* Float and double sums and products are the same in any order. */
static void test_reduce_order(void)
{
	enum { N = 1000, NE = 16 };
	static unsigned char buf[N][NE * 8];
	struct run x;

	for (enum topo_type t = TOPO_FLOAT; t <= TOPO_DOUBLE; t++) {
		for (enum topo_redop op = TOPO_SUM; op <= TOPO_PROD; op++) {
			long differ = 0;

			setup(&x, tree, TOPO_OP_REDUCE, t, op, 8, 0);
			x.p.n = N;
			for (int32_t r = 0; r < N; r++)
				topo__pattern_fill(&x.p, r, buf[r],
						   NE * tsize(t));
			for (int e = 0; e < NE; e++) {
				float ff = op == TOPO_SUM ? 0 : 1, fb = ff;
				double df = ff, db = ff;

				for (int32_t r = 0; r < N; r++) {
					double v = get_d(t, buf[r], (size_t)e);
					double w =
					    get_d(t, buf[N - 1 - r], (size_t)e);

					if (op == TOPO_SUM) {
						ff += (float)v, fb += (float)w;
						df += v, db += w;
					} else {
						ff *= (float)v, fb *= (float)w;
						df *= v, db *= w;
					}
				}
				differ += ff != fb || df != db || ff != df;
			}
			CHECK(differ == 0,
			      "type %d op %d: %ld elements depend "
			      "on the order",
			      t, op, differ);
			x.p.n = topo_group_size(grp);
			run_free(&x);
		}
	}
}

/* Every type x op: the wide-arithmetic result is accepted, one wrong
 * element byte is caught at the right place, and hand-made values check
 * ref_reduce itself. */
static void test_reduce_all(void)
{
	struct run x;
	char want[160];

	for (enum topo_type t = 0; t < TOPO_TYPE_COUNT; t++) {
		for (enum topo_redop op = 0; op < TOPO_REDOP_COUNT; op++) {
			size_t ts = tsize(t);
			int64_t got;

			if (is_float(t) && op >= TOPO_BAND)
				continue;
			setup(&x, tree, TOPO_OP_REDUCE, t, op, 3 * ts, 3);
			got = verify(&x, MAXERR);
			CHECK(got == 0, "type %d op %d: %lld errors (%s)", t,
			      op, (long long)got,
			      x.nerr ? x.errs[0].detail : "");
			/* Element 1's last byte: every type has one that
			 * changes the value. */
			x.mem[TOPO__RECV][3][2 * ts - 1] ^= 0x40;
			got = verify(&x, MAXERR);
			CHECK_INT(got, 1);
			if (x.nerr == 1) {
				unsigned char g =
				    x.mem[TOPO__RECV][3][2 * ts - 1];

				CHECK_INT(x.errs[0].rank, 3);
				CHECK_STR(x.errs[0].kind, "wrong data");
				snprintf(want, sizeof(want),
					 "receive buffer byte %zu (element 1): "
					 "got 0x%02x, want 0x%02x",
					 2 * ts - 1, g, g ^ 0x40);
				CHECK_STR(x.errs[0].detail, want);
			}
			run_free(&x);
		}
	}
}

/* ref_reduce against values written by hand: 7 members, int8, the
 * members' SEND replaced with chosen numbers. */
static void test_reduce_hand(void)
{
	static const int8_t in[7] = {3, -2, 1, 0, -3, 2, 1};
	static const struct {
		enum topo_redop op;
		int8_t want;
	} cases[] = {
	    {TOPO_SUM, 2},
	    {TOPO_PROD, 0},
	    {TOPO_MIN, -3},
	    {TOPO_MAX, 3},
	    {TOPO_BAND, 0},
	    {TOPO_BOR, -1},
	    {TOPO_BXOR, (int8_t)(3 ^ -2 ^ 1 ^ 0 ^ -3 ^ 2 ^ 1)},
	};
	struct run x;
	unsigned char out[1];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setup(&x, tree, TOPO_OP_REDUCE, TOPO_INT8, cases[i].op, 1, 0);
		for (int32_t r = 0; r < 7; r++)
			memcpy(x.mem[TOPO__SEND][r], &in[r], 1);
		ref_reduce(&x, out);
		CHECK_INT((int8_t)out[0], cases[i].want);
		run_free(&x);
	}
	/* uint16 max and double prod, by hand too. */
	{
		static const uint16_t u[7] = {7, 65535, 3, 0, 9, 1, 2};
		static const double d[7] = {1, -1, 2, -1, 1, 2, -1};
		uint16_t uo;
		double dd;

		setup(&x, tree, TOPO_OP_REDUCE, TOPO_UINT16, TOPO_MAX, 2, 0);
		for (int32_t r = 0; r < 7; r++)
			memcpy(x.mem[TOPO__SEND][r], &u[r], 2);
		ref_reduce(&x, x.mem[TOPO__RECV][0]);
		memcpy(&uo, x.mem[TOPO__RECV][0], 2);
		CHECK_INT(uo, 65535);
		run_free(&x);
		setup(&x, tree, TOPO_OP_REDUCE, TOPO_DOUBLE, TOPO_PROD, 8, 0);
		for (int32_t r = 0; r < 7; r++)
			memcpy(x.mem[TOPO__SEND][r], &d[r], 8);
		ref_reduce(&x, x.mem[TOPO__RECV][0]);
		memcpy(&dd, x.mem[TOPO__RECV][0], 8);
		CHECK(dd == -4.0, "prod = %g", dd);
		run_free(&x);
	}
}

/* One fault at a time for every operation. */
static void test_faults(void)
{
	static const enum topo_op ops[] = {TOPO_OP_BCAST, TOPO_OP_SCATTER,
					   TOPO_OP_GATHER, TOPO_OP_REDUCE};
	static const int32_t roots[] = {0, 4, 6};
	struct run x;
	char want[160];

	for (size_t oi = 0; oi < 4; oi++) {
		for (size_t ri = 0; ri < 3; ri++) {
			enum topo_op op = ops[oi];
			int32_t root = roots[ri];
			int32_t victim = root == 4 ? 5 : 4; /* not the root */
			/* Whose RECV holds data: everyone, or the root. */
			int32_t holder =
			    op == TOPO_OP_GATHER || op == TOPO_OP_REDUCE
				? root
				: victim;
			int64_t slot = -1;
			unsigned char g, w;

			setup(&x, tree, op,
			      op == TOPO_OP_REDUCE ? TOPO_INT32 : TOPO_INT8,
			      TOPO_SUM, 12, root);
			CHECK(verify(&x, MAXERR) == 0,
			      "op %d root %d: clean run has errors (%s)",
			      (int)op, root, x.nerr ? x.errs[0].detail : "");

			/* A wrong byte. */
			x.mem[TOPO__RECV][holder][9] ^= 1;
			CHECK_INT(verify(&x, MAXERR), 1);
			CHECK_INT(x.errs[0].rank, holder);
			CHECK_STR(x.errs[0].kind, "wrong data");
			g = x.mem[TOPO__RECV][holder][9];
			w = g ^ 1;
			if (op == TOPO_OP_GATHER)
				snprintf(want, sizeof(want),
					 "receive buffer byte 9 (byte 9 of "
					 "endpoint 1's block): got 0x%02x, "
					 "want 0x%02x",
					 g, w);
			else if (op == TOPO_OP_REDUCE)
				snprintf(want, sizeof(want),
					 "receive buffer byte 9 (element 2): "
					 "got 0x%02x, want 0x%02x",
					 g, w);
			else
				snprintf(want, sizeof(want),
					 "receive buffer byte 9: got 0x%02x, "
					 "want 0x%02x",
					 g, w);
			CHECK_STR(x.errs[0].detail, want);
			x.mem[TOPO__RECV][holder][9] ^= 1;

			/* A missing delivery: the victim's slot (bcast,
			 * scatter), or one of the root's (gather, reduce),
			 * with the data it would have brought. */
			for (int64_t s = 0; s < x.p.nslots; s++)
				if (x.p.slot_member[s] == holder)
					slot = s;
			CHECK(slot >= 0, "no slot for %d", holder);
			x.count[slot] = 0;
			if (op == TOPO_OP_GATHER)
				memset(x.mem[TOPO__RECV][root] + 12 * 6,
				       TOPO__POISON, 12);
			else if (op != TOPO_OP_REDUCE)
				memset(x.mem[TOPO__RECV][victim], TOPO__POISON,
				       12);
			else
				x.mem[TOPO__RECV][root][0] ^= 0x10;
			if (op == TOPO_OP_BCAST || op == TOPO_OP_SCATTER) {
				/* Only "undelivered": the poison it holds is
				 * a consequence. */
				CHECK_INT(verify(&x, MAXERR), 1);
				CHECK_INT(x.errs[0].rank, victim);
				CHECK_STR(x.errs[0].kind, "undelivered");
				CHECK_STR(x.errs[0].detail,
					  "received 0 of 1 expected "
					  "delivery");
				memcpy(x.mem[TOPO__RECV][victim],
				       op == TOPO_OP_BCAST
					   ? x.mem[TOPO__SEND][root]
					   : x.mem[TOPO__SEND][root] +
						 12 * victim,
				       12);
			} else {
				/* A root receiving from many also says
				 * where its data went wrong. */
				CHECK_INT(verify(&x, MAXERR), 2);
				CHECK_INT(x.errs[0].rank, root);
				CHECK_STR(x.errs[0].kind, "undelivered");
				CHECK_STR(x.errs[0].detail,
					  "received 0 of 1 expected "
					  "delivery");
				CHECK_INT(x.errs[1].rank, root);
				CHECK_STR(x.errs[1].kind, "wrong data");
				if (op == TOPO_OP_GATHER) {
					CHECK(STARTS(x.errs[1].detail,
						     "receive buffer byte 72 "
						     "(byte 0 of endpoint 7's "
						     "block): got 0xa5"),
					      "%s", x.errs[1].detail);
					memcpy(x.mem[TOPO__RECV][root] + 72,
					       x.mem[TOPO__SEND][6], 12);
				} else {
					x.mem[TOPO__RECV][root][0] ^= 0x10;
				}
			}
			x.count[slot] = 1;
			CHECK_INT(verify(&x, MAXERR), 0);

			/* A duplicate: same data, counted twice. */
			x.count[slot] = 2;
			CHECK_INT(verify(&x, MAXERR), 1);
			CHECK_INT(x.errs[0].rank, holder);
			CHECK_STR(x.errs[0].kind, "duplicated");
			CHECK_STR(x.errs[0].detail,
				  "received 2 deliveries, 1 expected");
			x.count[slot] = 1;

			/* A scribbled send buffer (the root's for scatter:
			 * the others hold none). */
			{
				int32_t who =
				    op == TOPO_OP_SCATTER ? root : victim;
				unsigned char *s = x.mem[TOPO__SEND][who];

				s[3] ^= 0x80;
				CHECK_INT(verify(&x, MAXERR), 1);
				CHECK_INT(x.errs[0].rank, who);
				CHECK_STR(x.errs[0].kind, "wrong data");
				snprintf(want, sizeof(want),
					 "send buffer changed at byte 3: got "
					 "0x%02x, want 0x%02x",
					 s[3], s[3] ^ 0x80);
				CHECK_STR(x.errs[0].detail, want);
				s[3] ^= 0x80;
			}
			CHECK_INT(verify(&x, MAXERR), 0);
			run_free(&x);
		}
	}
}

/* Several faults: reported in rank order, capped at max, all counted. */
static void test_many(void)
{
	struct run x;
	int64_t got;

	setup(&x, tree, TOPO_OP_BCAST, TOPO_INT8, TOPO_SUM, 8, 3);
	/* Slots are in rank order for ranks != 3; shuffle the faults so the
	 * verifier must sort them out per member. */
	for (int64_t s = 0; s < x.p.nslots; s++) {
		int32_t m = x.p.slot_member[s];

		if (m == 6)
			x.count[s] = 3;
		if (m == 1)
			x.count[s] = 0;
	}
	add_slot(&x, 1, 2); /* member 1 has a second slot, also short */
	x.count[x.p.nslots - 1] = 1;
	add_slot(&x, 6, 1); /* and member 6 a second duplicated one */
	x.count[x.p.nslots - 1] = 2;
	x.mem[TOPO__RECV][0][7] ^= 0xff;
	x.mem[TOPO__SEND][6][0] ^= 0xff;
	got = verify(&x, MAXERR);
	CHECK_INT(got, 4);
	CHECK_INT(x.nerr, 4);
	if (x.nerr == 4) {
		CHECK_INT(x.errs[0].rank, 0);
		CHECK_STR(x.errs[0].kind, "wrong data");
		CHECK_INT(x.errs[1].rank, 1);
		CHECK_STR(x.errs[1].kind, "undelivered");
		CHECK_STR(x.errs[1].detail,
			  "received 1 of 3 expected deliveries");
		CHECK_INT(x.errs[2].rank, 6);
		CHECK_STR(x.errs[2].kind, "duplicated");
		CHECK_STR(x.errs[2].detail,
			  "received 5 deliveries, 2 expected");
		CHECK_INT(x.errs[3].rank, 6);
		CHECK_STR(x.errs[3].kind, "wrong data");
		CHECK(
		    STARTS(x.errs[3].detail, "send buffer changed at byte 0:"),
		    "%s", x.errs[3].detail);
	}
	got = verify(&x, 2);
	CHECK_INT(got, 4);
	CHECK_INT(x.nerr, 2);
	/* No report callback: still counted. */
	CHECK_INT(topo__verify(&x.p, getbuf, &x, x.count, NULL, NULL, 10), 4);
	/* Without receipt counters only the data is checked. */
	CHECK_INT(topo__verify(&x.p, getbuf, &x, NULL, collect, &x, 10), 2);

	/* A receive buffer smaller than the result. */
	x.count[0] = x.p.slot_expect[0];
	run_free(&x);
	setup(&x, tree, TOPO_OP_GATHER, TOPO_INT8, TOPO_SUM, 4, 2);
	x.size[TOPO__RECV][2] = 27;
	CHECK_INT(verify(&x, MAXERR), 1);
	CHECK_STR(x.errs[0].kind, "wrong data");
	CHECK_STR(x.errs[0].detail,
		  "receive buffer holds 27 bytes, 28 expected");
	run_free(&x);

	/* Big buffers cross the verifier's chunks: a fault past the first
	 * one is found at its exact offset. */
	setup(&x, tree, TOPO_OP_SCATTER, TOPO_INT8, TOPO_SUM, 10000, 0);
	CHECK_INT(verify(&x, MAXERR), 0);
	x.mem[TOPO__RECV][5][9001] ^= 2;
	CHECK_INT(verify(&x, MAXERR), 1);
	CHECK(STARTS(x.errs[0].detail, "receive buffer byte 9001:"), "%s",
	      x.errs[0].detail);
	x.mem[TOPO__RECV][5][9001] ^= 2;
	x.mem[TOPO__SEND][0][60001] ^= 2;
	/* Only the root's SEND: rank 6's expectation comes from the pattern,
	 * not from the root's (now wrong) buffer. */
	CHECK_INT(verify(&x, MAXERR), 1);
	CHECK_INT(x.errs[0].rank, 0);
	CHECK(STARTS(x.errs[0].detail, "send buffer changed at byte 60001:"),
	      "%s", x.errs[0].detail);
	run_free(&x);

	/* Scatter members other than the root may hold a SEND of zeros
	 * (or-combine): it must stay zeros. */
	setup(&x, tree, TOPO_OP_SCATTER, TOPO_INT8, TOPO_SUM, 4, 1);
	x.size[TOPO__SEND][3] = 4;
	x.mem[TOPO__SEND][3] = realloc(x.mem[TOPO__SEND][3], 4);
	memset(x.mem[TOPO__SEND][3], 0, 4);
	CHECK_INT(verify(&x, MAXERR), 0);
	x.mem[TOPO__SEND][3][2] = 1;
	CHECK_INT(verify(&x, MAXERR), 1);
	CHECK_INT(x.errs[0].rank, 3);
	CHECK_STR(x.errs[0].detail,
		  "send buffer changed at byte 2: got 0x01, want 0x00");
	run_free(&x);

	setup(&x, tree, TOPO_OP_REDUCE, TOPO_DOUBLE, TOPO_MAX, 8 * 1500, 6);
	CHECK_INT(verify(&x, MAXERR), 0);
	x.mem[TOPO__RECV][6][8 * 1200 + 7] ^= 0x01;
	CHECK_INT(verify(&x, MAXERR), 1);
	CHECK(STARTS(x.errs[0].detail,
		     "receive buffer byte 9607 (element 1200): got 0x"),
	      "%s", x.errs[0].detail);
	run_free(&x);
}

/*
 * allreduce, allgather, reduce-scatter, alltoall and barrier: each end
 * state verifies, and one wrong byte in one member's result is found in
 * that member, with the block it came from; a barrier's order is checked from the stamps of its steps.
 */
static void test_new_ops(void)
{
	static const enum topo_op ops[] = {TOPO_OP_ALLREDUCE,
					   TOPO_OP_ALLGATHER,
					   TOPO_OP_REDUCE_SCATTER,
					   TOPO_OP_ALLTOALL};
	struct run x;

	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		enum topo_op op = ops[i];
		int red = topo_op_reduces(op);
		enum topo_type ty = red ? TOPO_INT32 : TOPO_INT8;
		size_t nb = red ? 12 : 10;
		int32_t victim = 5, blk = 2;
		int64_t at;

		setup(&x, tree, op, ty, red ? TOPO_SUM : TOPO_SUM, nb, -1);
		CHECK(verify(&x, MAXERR) == 0, "%s: the right end state has "
		      "errors (%s)", topo_op_name(op),
		      x.nerr > 0 ? x.errs[0].detail : "");
		/* A byte of block blk (allgather, alltoall) or of the
		 * member's result, flipped. */
		at = op == TOPO_OP_ALLGATHER || op == TOPO_OP_ALLTOALL
			 ? (int64_t)nb * blk + 3
			 : 5;
		x.mem[TOPO__RECV][victim][at] ^= 0x40;
		CHECK_INT(verify(&x, MAXERR), 1);
		CHECK_INT(x.errs[0].rank, victim);
		CHECK_STR(x.errs[0].kind, "wrong data");
		if (op == TOPO_OP_ALLGATHER || op == TOPO_OP_ALLTOALL) {
			char want[96];

			/* Endpoint = rank + 1 in this group. */
			snprintf(want, sizeof(want),
				 "receive buffer byte %lld (byte 3 of "
				 "endpoint %d's block)",
				 (long long)at, blk + 1);
			CHECK(STARTS(x.errs[0].detail, want), "%s: \"%s\"",
			      topo_op_name(op), x.errs[0].detail);
		} else {
			CHECK(STARTS(x.errs[0].detail,
				     "receive buffer byte 5 (element 1)"),
			      "%s: \"%s\"", topo_op_name(op),
			      x.errs[0].detail);
		}
		x.mem[TOPO__RECV][victim][at] ^= 0x40;
		/* Every member holds a result: the last one too. */
		x.mem[TOPO__RECV][x.p.n - 1][0] ^= 1;
		CHECK_INT(verify(&x, MAXERR), 1);
		CHECK_INT(x.errs[0].rank, x.p.n - 1);
		x.mem[TOPO__RECV][x.p.n - 1][0] ^= 1;
		/* A scribbled input. */
		x.mem[TOPO__SEND][1][0] ^= 1;
		CHECK(verify(&x, MAXERR) >= 1 && x.errs[x.nerr - 1].rank == 1 &&
			  STARTS(x.errs[x.nerr - 1].detail,
				 "send buffer changed at byte 0"),
		      "%s: a changed SEND", topo_op_name(op));
		x.mem[TOPO__SEND][1][0] ^= 1;
		/* A lost delivery. */
		x.count[0] = 0;
		CHECK(verify(&x, MAXERR) >= 1 &&
			  strcmp(x.errs[0].kind, "undelivered") == 0,
		      "%s: an undelivered slot", topo_op_name(op));
		run_free(&x);
	}

	/* Barrier: member r's enter is message 2r, its leave 2r + 1. */
	{
		int32_t n = topo_group_size(topo_tree_group(tree));
		struct topo__msg *msg = calloc((size_t)(2 * n), sizeof(*msg));
		int64_t *stamp = malloc((size_t)(2 * n) * sizeof(int64_t));

		setup(&x, tree, TOPO_OP_BARRIER, TOPO_INT8, TOPO_SUM, 0, -1);
		x.p.msg = msg;
		x.p.nmsg = 2 * n;
		for (int32_t r = 0; r < n; r++) {
			msg[2 * r].src = msg[2 * r].dst = r;
			msg[2 * r].mark = TOPO__MARK_ENTER;
			msg[2 * r + 1].src = msg[2 * r + 1].dst = r;
			msg[2 * r + 1].mark = TOPO__MARK_LEAVE;
			stamp[2 * r] = r;	      /* all enter, */
			stamp[2 * r + 1] = n + r; /* then all leave */
		}
		x.nerr = 0;
		CHECK_INT(topo__verify_barrier(&x.p, stamp, collect, &x, MAXERR),
			  0);
		CHECK_INT(topo__verify_barrier(&x.p, NULL, collect, &x, MAXERR),
			  0);
		/* Member 2 leaves before the last (member n - 1) enters. */
		stamp[2 * 2 + 1] = n - 3;
		x.nerr = 0;
		CHECK_INT(topo__verify_barrier(&x.p, stamp, collect, &x, MAXERR),
			  1);
		CHECK_INT(x.errs[0].rank, 2);
		CHECK_STR(x.errs[0].kind, "left early");
		{
			char want[128];

			snprintf(want, sizeof(want),
				 "left the barrier (step %d of the run) before "
				 "endpoint %d entered it (step %d)",
				 n - 2, n, n);
			CHECK_STR(x.errs[0].detail, want);
		}
		/* A leave that never ran is not "early" (its receipt
		 * counter says it was not delivered). */
		stamp[2 * 2 + 1] = -1;
		x.nerr = 0;
		CHECK_INT(topo__verify_barrier(&x.p, stamp, collect, &x, MAXERR),
			  0);
		/* The cap on reports still counts every one. */
		for (int32_t r = 0; r < n; r++)
			stamp[2 * r + 1] = 0;
		stamp[0] = 1;
		x.nerr = 0;
		CHECK_INT(topo__verify_barrier(&x.p, stamp, collect, &x, 2),
			  n);
		CHECK_INT(x.nerr, 2);
		x.p.msg = NULL;
		x.p.nmsg = 0;
		free(msg);
		free(stamp);
		run_free(&x);
	}
}

/* Every copy of the pattern loops (baseline, SSE4.1, AVX2, AVX-512: those
 * this processor runs, topo__tune.pattern_simd_cap lowering the choice) makes
 * the same bytes, for every operation's inputs, type and operator, from
 * offsets within a block and across the 2^32-element boundary. */
static void test_pattern_copies(void)
{
	enum { LEN = 9000 };
	static unsigned char want[LEN], got[LEN];
	static const enum topo_op ops[] = {TOPO_OP_BCAST, TOPO_OP_SCATTER,
					   TOPO_OP_REDUCE};
	int top = topo__pattern_simd();
	struct run x;

	CHECK(top >= 1 && top <= 4, "pattern copy %d", top);
	topo__tune.pattern_simd_cap = 1;
	CHECK_INT(topo__pattern_simd(), 1);
	topo__tune.pattern_simd_cap = 0;
	CHECK_INT(topo__pattern_simd(), top);
	printf("test_verify: pattern copies 1..%d compared\n", top);
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		for (enum topo_type t = 0; t < TOPO_TYPE_COUNT; t++)
			for (enum topo_redop op = 0; op < TOPO_REDOP_COUNT;
			     op++) {
				uint64_t ts = tsize(t);
				uint64_t offs[] = {0, 3 * ts, 4093,
						   (ts << 32) - 4097};
				long bad = 0;

				if ((is_float(t) && op >= TOPO_BAND) ||
				    (ops[i] != TOPO_OP_REDUCE &&
				     (t > 0 || op > 0)))
					continue;
				setup(&x, tree, ops[i], t, op, ts, 1);
				for (size_t o = 0; o < 4; o++)
					for (int32_t r = 0; r < 3; r++) {
						topo__tune.pattern_simd_cap = 1;
						topo__pattern_fill_at(
						    &x.p, r, offs[o], want, LEN);
						for (int c = 2; c <= top; c++) {
							topo__tune
							    .pattern_simd_cap =
							    c;
							memset(got, 0, LEN);
							topo__pattern_fill_at(
							    &x.p, r, offs[o],
							    got, LEN);
							bad += memcmp(got, want,
								      LEN) != 0;
						}
					}
				topo__tune.pattern_simd_cap = 0;
				CHECK(bad == 0,
				      "%s %s %s: %ld fills differ between "
				      "copies",
				      topo_op_name(ops[i]), topo_type_name(t),
				      topo_redop_name(op), bad);
				run_free(&x);
			}
}

/* A pattern made in pieces is the same as made whole: pieces cut at odd
 * bytes, inside elements and words, across the generator's blocks and
 * across the 2^32nd element (or word), where its keys change. */
static void test_pattern_pieces(void)
{
	enum { LEN = 9000 };
	static const enum topo_op ops[] = {TOPO_OP_BCAST, TOPO_OP_REDUCE};
	static unsigned char whole[LEN], part[LEN];
	struct run x;

	for (size_t i = 0; i < 2; i++) {
		for (enum topo_type t = 0; t < TOPO_TYPE_COUNT; t++) {
			for (enum topo_redop op = 0; op < TOPO_REDOP_COUNT;
			     op++) {
				uint64_t size = ops[i] == TOPO_OP_REDUCE
						    ? tsize(t)
						    : 4;
				uint64_t bases[] = {0, (size << 32) - 4097};
				long bad = 0;

				if ((is_float(t) && op >= TOPO_BAND) ||
				    (ops[i] != TOPO_OP_REDUCE &&
				     (t > 0 || op > 0)))
					continue;
				setup(&x, tree, ops[i], t, op, tsize(t), 0);
				for (size_t b = 0; b < 2; b++) {
					uint64_t base = bases[b];
					size_t at = 0, step = 1;

					topo__pattern_fill_at(&x.p, 3, base,
							      whole, LEN);
					while (at < LEN) {
						size_t len = step < LEN - at
								 ? step
								 : LEN - at;

						topo__pattern_fill_at(
						    &x.p, 3, base + at,
						    part + at, len);
						at += len;
						step = step * 3 + 1;
					}
					bad += memcmp(whole, part, LEN) != 0;
					if (b == 0) {
						topo__pattern_fill(&x.p, 3,
								   part, LEN);
						bad += memcmp(whole, part,
							      LEN) != 0;
					}
				}
				CHECK(bad == 0,
				      "%s %s %s: pieces differ from the whole",
				      topo_op_name(ops[i]), topo_type_name(t),
				      topo_redop_name(op));
				run_free(&x);
			}
		}
	}
	/* The keys do change there: the element before 2^32 and the one
	 * after belong to different blocks but not the same sequence. */
	setup(&x, tree, TOPO_OP_REDUCE, TOPO_UINT32, TOPO_BXOR, 4, 0);
	{
		uint32_t lo[64], hi[64];

		topo__pattern_fill_at(&x.p, 3, 0, lo, sizeof(lo));
		topo__pattern_fill_at(&x.p, 3, (uint64_t)4 << 32, hi,
				      sizeof(hi));
		CHECK(memcmp(lo, hi, sizeof(lo)) != 0,
		      "element 2^32 repeats element 0");
	}
	run_free(&x);
}

/* The reduce inputs use their whole ranges: every value -3..3 of a sum,
 * both signs and both magnitudes of a product, min/max inputs over most
 * of the type's range. */
static void test_pattern_values(void)
{
	enum { NE = 4096 };
	static int32_t buf[NE];
	struct run x;
	long seen[7] = {0}, pm[4] = {0};
	int32_t lo = INT32_MAX, hi = INT32_MIN;

	setup(&x, tree, TOPO_OP_REDUCE, TOPO_INT32, TOPO_SUM, 4, 0);
	topo__pattern_fill(&x.p, 2, buf, sizeof(buf));
	for (int e = 0; e < NE; e++)
		if (buf[e] >= -3 && buf[e] <= 3)
			seen[buf[e] + 3]++;
	for (int k = 0; k < 7; k++)
		CHECK(seen[k] > NE / 7 / 2, "sum input %d: %ld of %d", k - 3,
		      seen[k], NE);
	run_free(&x);
	setup(&x, tree, TOPO_OP_REDUCE, TOPO_INT32, TOPO_PROD, 4, 0);
	topo__pattern_fill(&x.p, 2, buf, sizeof(buf));
	for (int e = 0; e < NE; e++)
		if (buf[e] == -2 || buf[e] == -1 || buf[e] == 1 || buf[e] == 2)
			pm[buf[e] < 0 ? -buf[e] - 1 : buf[e] + 1]++;
	for (int k = 0; k < 4; k++)
		CHECK(pm[k] > NE / 20, "prod input class %d: %ld", k, pm[k]);
	run_free(&x);
	setup(&x, tree, TOPO_OP_REDUCE, TOPO_INT32, TOPO_MAX, 4, 0);
	topo__pattern_fill(&x.p, 2, buf, sizeof(buf));
	for (int e = 0; e < NE; e++) {
		lo = buf[e] < lo ? buf[e] : lo;
		hi = buf[e] > hi ? buf[e] : hi;
	}
	CHECK(lo >= -1000000000 && lo < -900000000 && hi <= 1000000000 &&
		  hi > 900000000,
	      "max inputs span [%d, %d]", lo, hi);
	run_free(&x);
}

/* topo__verify_time's par, for the test: the tasks in reverse order (the
 * verdict must not depend on it), counted; after stop_after tasks (>= 0)
 * it stops as a deadline would. */
struct par_log {
	int calls;
	int64_t tasks, stop_after;
};

static int par_reverse(void *pctx, int64_t n, void (*fn)(void *, int64_t),
		       void *arg)
{
	struct par_log *l = pctx;

	l->calls++;
	for (int64_t k = n - 1; k >= 0; k--) {
		if (l->stop_after >= 0 && l->tasks >= l->stop_after)
			return 1;
		fn(arg, k);
		l->tasks++;
	}
	return 0;
}

/* A check through par_reverse for the members mine holds (NULL: all),
 * keeping what a run keeps in keep (NULL: nothing). */
static int64_t verify_with(struct run *x, struct par_log *l,
			   const uint8_t *mine, struct topo__verify_keep *keep,
			   bool *timed_out)
{
	struct topo__verify_time vt = {0,    NULL, NULL,	 0, false, 0,
				       0,    mine, par_reverse, l,	 keep};
	int64_t got;

	x->nerr = 0;
	l->calls = 0;
	l->tasks = 0;
	got = topo__verify_until(&x->p, getbuf, x, x->count, collect, x,
				 MAXERR, &vt);
	*timed_out = vt.timed_out;
	return got;
}

static int64_t verify_par(struct run *x, struct par_log *l,
			  const uint8_t *mine, bool *timed_out)
{
	return verify_with(x, l, mine, NULL, timed_out);
}

/* The reductions' check, shared out in tasks of 4096 positions: the same
 * verdicts and details as one thread's, a changed SEND caught in the pass
 * that computes the reduction, the deadline, and an MPI process's share
 * (mine). */
static void test_verify_par(void)
{
	static const enum topo_op ops[] = {TOPO_OP_REDUCE, TOPO_OP_ALLREDUCE,
					   TOPO_OP_REDUCE_SCATTER};
	int64_t was = topo__tune.verify_par_min;
	struct par_log l;
	bool late;
	struct run x;

	topo__tune.verify_par_min = 0;
	l.stop_after = -1;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		enum topo_op op = ops[i];
		/* reduce-scatter: 7 blocks of 1760 = 3 tasks too */
		size_t nb = op == TOPO_OP_REDUCE_SCATTER ? 1760 : 3 * 4096 + 8;
		char want[160];
		int32_t victim = 4;
		int64_t at = 4096 + 9;
		uint8_t mine[7];
		unsigned char *s;

		setup(&x, tree, op, TOPO_INT32, TOPO_SUM, nb, 2);
		CHECK_INT(x.p.n, 7);
		CHECK_INT(verify_par(&x, &l, NULL, &late), 0);
		CHECK(!late, "%s: timed out", topo_op_name(op));
		CHECK_INT(l.calls, 1);
		CHECK_INT(l.tasks, 4); /* 12296 or 7 x 1760 bytes */

		/* A changed SEND, found by the task of its position. */
		s = x.mem[TOPO__SEND][victim];
		s[at] ^= 0x10;
		snprintf(want, sizeof(want),
			 "send buffer changed at byte %lld: got 0x%02x, want "
			 "0x%02x",
			 (long long)at, s[at], s[at] ^ 0x10);
		CHECK(verify_par(&x, &l, NULL, &late) >= 1 && x.nerr >= 1,
		      "%s: changed SEND not found", topo_op_name(op));
		{
			int found = 0;

			for (int e = 0; e < x.nerr; e++)
				found += x.errs[e].rank == victim &&
					 strcmp(x.errs[e].detail, want) == 0;
			CHECK(found == 1, "%s: no \"%s\" for rank %d",
			      topo_op_name(op), want, victim);
		}
		/* The same errors as without sharing. */
		{
			struct topo__verify_error one[MAXERR];
			int n1 = x.nerr;

			memcpy(one, x.errs, sizeof(one));
			CHECK_INT(verify(&x, MAXERR), n1);
			for (int e = 0; e < n1 && e < x.nerr; e++)
				CHECK(one[e].rank == x.errs[e].rank &&
					  strcmp(one[e].detail,
						 x.errs[e].detail) == 0,
				      "%s: error %d differs", topo_op_name(op),
				      e);
		}
		/* An MPI process that does not hold the victim does not
		 * look at its SEND. */
		memset(mine, 1, sizeof(mine));
		mine[victim] = 0;
		CHECK_INT(verify_par(&x, &l, mine, &late), 0);
		s[at] ^= 0x10;

		/* A changed SEND where the process does not hold a reduce's
		 * root: no reduction made (no tasks), the SEND still
		 * checked. */
		memset(mine, 0, sizeof(mine));
		mine[victim] = 1;
		s[0] ^= 1;
		CHECK_INT(verify_par(&x, &l, mine, &late), 1);
		CHECK_INT(l.calls, op == TOPO_OP_REDUCE ? 0 : 1);
		CHECK(x.nerr == 1 && x.errs[0].rank == victim &&
			  STARTS(x.errs[0].detail,
				 "send buffer changed at byte 0:"),
		      "%s: SEND of the member held", topo_op_name(op));
		s[0] ^= 1;

		/* The deadline, in the middle of the tasks. */
		l.stop_after = 1;
		verify_par(&x, &l, NULL, &late);
		CHECK(late, "%s: stopped tasks not a timeout",
		      topo_op_name(op));
		l.stop_after = -1;
		run_free(&x);
	}
	topo__tune.verify_par_min = was;
}

/* Whether the last verify_par reported the errors that one thread's check
 * reports, in the same order. */
static void same_as_serial(struct run *x, const char *what)
{
	struct topo__verify_error par[MAXERR];
	int npar = x->nerr;

	memcpy(par, x->errs, sizeof(par));
	CHECK_INT(verify(x, MAXERR), npar);
	for (int e = 0; e < npar && e < x->nerr; e++)
		CHECK(par[e].rank == x->errs[e].rank &&
			  strcmp(par[e].kind, x->errs[e].kind) == 0 &&
			  strcmp(par[e].detail, x->errs[e].detail) == 0,
		      "%s: error %d differs: rank %d \"%s\" against %d "
		      "\"%s\"",
		      what, e, par[e].rank, par[e].detail, x->errs[e].rank,
		      x->errs[e].detail);
}

/* The reduction kept from one verification to the next (a run's keep):
 * the first that completes keeps it whole, equal to what the members
 * hold; the later ones use it (a kept byte changed is reported against
 * the RECVs), still check every SEND by making the inputs again, and
 * report what a check that keeps nothing reports; a verification the
 * deadline cut short keeps nothing; a keep of another length is not
 * used. */
static void test_verify_keep(void)
{
	static const enum topo_op ops[] = {TOPO_OP_REDUCE, TOPO_OP_ALLREDUCE,
					   TOPO_OP_REDUCE_SCATTER};
	int64_t was = topo__tune.verify_par_min;
	struct par_log l;
	bool late;
	struct run x;

	topo__tune.verify_par_min = 0;
	l.stop_after = -1;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		enum topo_op op = ops[i];
		const char *name = topo_op_name(op);
		size_t nb = op == TOPO_OP_REDUCE_SCATTER ? 1760 : 3 * 4096 + 8;
		int64_t len =
		    op == TOPO_OP_REDUCE_SCATTER ? 7 * (int64_t)nb : (int64_t)nb;
		int32_t holder = op == TOPO_OP_REDUCE ? 2 : 5;
		int64_t roff = op == TOPO_OP_REDUCE_SCATTER ? holder * 1760 : 0;
		struct topo__verify_keep keep = {NULL, 0};
		unsigned char *s, *rv;

		setup(&x, tree, op, TOPO_INT32, TOPO_SUM, nb, 2);
		CHECK_INT(x.p.n, 7);
		rv = x.mem[TOPO__RECV][holder];

		/* A cut-short verification keeps nothing. */
		l.stop_after = 1;
		verify_with(&x, &l, NULL, &keep, &late);
		CHECK(late && keep.reduced == NULL, "%s: kept a partial "
		      "reduction", name);
		l.stop_after = -1;

		/* The first whole one keeps it: the holder's RECV. */
		CHECK_INT(verify_with(&x, &l, NULL, &keep, &late), 0);
		CHECK(!late && keep.reduced != NULL && keep.len == len,
		      "%s: nothing kept (len %lld)", name, (long long)keep.len);
		if (keep.reduced == NULL) {
			run_free(&x);
			continue;
		}
		CHECK(memcmp(keep.reduced + roff, rv,
			     op == TOPO_OP_REDUCE_SCATTER ? nb : (size_t)len) ==
			  0,
		      "%s: kept reduction differs from the result", name);
		{
			unsigned char *first = keep.reduced;

			CHECK_INT(verify_with(&x, &l, NULL, &keep, &late), 0);
			CHECK(keep.reduced == first,
			      "%s: the kept reduction was made again", name);
			CHECK_INT(l.tasks, 4); /* SENDs still checked */
		}

		/* A changed SEND is found without the reduction made again,
		 * as a check that keeps nothing finds it. */
		s = x.mem[TOPO__SEND][4];
		s[4096 + 9] ^= 0x10;
		CHECK(verify_with(&x, &l, NULL, &keep, &late) >= 1,
		      "%s: changed SEND not found with a kept reduction", name);
		same_as_serial(&x, name);
		s[4096 + 9] ^= 0x10;

		/* A wrong RECV byte, likewise. */
		rv[17] ^= 0x40;
		CHECK_INT(verify_with(&x, &l, NULL, &keep, &late), 1);
		CHECK(x.nerr == 1 && x.errs[0].rank == holder &&
			  STARTS(x.errs[0].detail, "receive buffer byte 17 "),
		      "%s: wrong RECV not reported", name);
		same_as_serial(&x, name);
		rv[17] ^= 0x40;

		/* The kept bytes are what RECVs are compared with: one
		 * changed there is reported against every RECV holding it,
		 * which a fresh reduction finds right. */
		keep.reduced[roff + 3] ^= 1;
		CHECK_INT(verify_with(&x, &l, NULL, &keep, &late),
			  op == TOPO_OP_ALLREDUCE ? 7 : 1);
		CHECK(x.nerr >= 1 && x.errs[x.nerr - 1].rank ==
					 (op == TOPO_OP_ALLREDUCE ? 6 : holder),
		      "%s: the kept reduction is not the one used", name);
		CHECK_INT(verify(&x, MAXERR), 0);
		keep.reduced[roff + 3] ^= 1;

		/* A keep of another length is left alone: a reduction is
		 * made for this check, and kept instead. */
		keep.len--;
		CHECK_INT(verify_with(&x, &l, NULL, &keep, &late), 0);
		CHECK_INT(keep.len, len);
		topo__verify_keep_free(&keep);
		CHECK(keep.reduced == NULL && keep.len == 0, "%s: keep freed",
		      name);
		topo__verify_keep_free(&keep);
		topo__verify_keep_free(NULL);
		run_free(&x);
	}
	topo__tune.verify_par_min = was;
}

/* The members' checks, shared out in tasks of 2 members (7 members: 4
 * tasks): nothing found in a correct run, and every error of a wrong one
 * found again and reported as one thread reports it, in member order;
 * none shared when a receipt counter is wrong; the deadline; an MPI
 * process's share (mine). */
static void test_verify_members(void)
{
	static const enum topo_op ops[] = {
	    TOPO_OP_BCAST,  TOPO_OP_SCATTER,   TOPO_OP_GATHER,
	    TOPO_OP_REDUCE, TOPO_OP_ALLGATHER, TOPO_OP_ALLTOALL};
	int32_t was = topo__tune.verify_member_task;
	struct par_log l;
	bool late;
	struct run x;

	topo__tune.verify_member_task = 2;
	l.stop_after = -1;
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		enum topo_op op = ops[i];
		const char *name = topo_op_name(op);
		/* The root of gather and reduce holds every result: the
		 * errors then fall in one task, and elsewhere in two. */
		int32_t root = 2, a = 5, b = 1;
		unsigned char *ra, *sb;
		uint8_t mine[7];
		/* Operations that copy every member's input check the SEND
		 * buffers first, in 4 tasks of their own (copy_sends). */
		int sends = op == TOPO_OP_GATHER || op == TOPO_OP_ALLGATHER ||
			    op == TOPO_OP_ALLTOALL;

		setup(&x, tree, op, TOPO_INT32, TOPO_SUM, 40, root);
		CHECK_INT(x.p.n, 7);
		CHECK_INT(verify_par(&x, &l, NULL, &late), 0);
		CHECK(!late, "%s: timed out", name);
		/* (A reduction of 7 members is made on one thread, below
		 * topo__tune.verify_par_min: these are the members' tasks.) */
		CHECK_INT(l.calls, 1 + sends);
		CHECK_INT(l.tasks, 4 + 4 * sends);

		/* Wrong bytes in one member's RECV (the root's, where only
		 * it has a result), and a changed SEND at a lower rank (a
		 * scatter's root, where only it has one). */
		if (op == TOPO_OP_GATHER || op == TOPO_OP_REDUCE)
			a = root;
		if (op == TOPO_OP_SCATTER)
			b = root;
		ra = x.mem[TOPO__RECV][a];
		sb = x.mem[TOPO__SEND][b];
		ra[12] ^= 0x40;
		sb[3] ^= 0x01;
		CHECK(verify_par(&x, &l, NULL, &late) >= 2 && !late,
		      "%s: errors not found", name);
		CHECK(x.nerr >= 2 && x.errs[0].rank == b &&
			  x.errs[x.nerr - 1].rank == a,
		      "%s: errors of ranks %d..%d, not %d..%d", name,
		      x.nerr > 0 ? x.errs[0].rank : -1,
		      x.nerr > 0 ? x.errs[x.nerr - 1].rank : -1, b, a);
		same_as_serial(&x, name);

		/* Max errors: the first one only, as ever. */
		l.calls = 0;
		{
			struct topo__verify_time vt = {
			    0,	  NULL, NULL,	     0,	 false,
			    0,	  0,	NULL, par_reverse, &l,	 NULL};

			x.nerr = 0;
			CHECK(topo__verify_until(&x.p, getbuf, &x, x.count,
						 collect, &x, 1, &vt) >= 2,
			      "%s: errors not counted past max", name);
			CHECK(x.nerr == 1 && x.errs[0].rank == b,
			      "%s: max 1 reported %d errors", name, x.nerr);
		}

		/* An MPI process that holds neither member finds nothing. */
		memset(mine, 1, sizeof(mine));
		mine[a] = mine[b] = 0;
		CHECK_INT(verify_par(&x, &l, mine, &late), 0);

		/* A wrong receipt counter: nothing shared, every error
		 * reported. */
		x.count[0]++;
		CHECK(verify_par(&x, &l, NULL, &late) >= 3, "%s: counter",
		      name);
		CHECK_INT(l.tasks, 4 * sends);
		same_as_serial(&x, name);
		x.count[0]--;

		/* The deadline, in the middle of the tasks. */
		l.stop_after = 1;
		verify_par(&x, &l, NULL, &late);
		CHECK(late, "%s: stopped tasks not a timeout", name);
		l.stop_after = -1;
		ra[12] ^= 0x40;
		sb[3] ^= 0x01;
		CHECK_INT(verify_par(&x, &l, NULL, &late), 0);
		run_free(&x);
	}
	topo__tune.verify_member_task = was;
}

/* Tasks of a buffer of l bytes cut in pieces of `piece`: at least one. */
static int64_t pieces_of(int64_t l, int64_t piece)
{
	return l > piece ? (l + piece - 1) / piece : 1;
}

/*
 * A few members with big buffers are checked in pieces (struct cut in
 * verify.c): here pieces of 128 bytes (topo__tune.verify_piece 150, rounded
 * down to a multiple of 64) of 7 members' 200-byte blocks, so that pieces
 * and blocks never line up.  A correct run is checked in exactly the
 * pieces the sizes give, on the shared path; a wrong byte at every piece
 * and block boundary, and between, is found and reported as one thread
 * reports it; a changed SEND found by its piece; the deadline; an MPI
 * process's share.
 */
static void test_verify_pieces(void)
{
	static const enum topo_op ops[] = {
	    TOPO_OP_BCAST,	    TOPO_OP_SCATTER,   TOPO_OP_GATHER,
	    TOPO_OP_REDUCE,	    TOPO_OP_ALLREDUCE, TOPO_OP_ALLGATHER,
	    TOPO_OP_REDUCE_SCATTER, TOPO_OP_ALLTOALL};
	const int64_t nb = 200, piece = 128;
	int64_t was_min = topo__tune.verify_par_min,
		was_piece = topo__tune.verify_piece;
	struct run x;

	topo__tune.verify_par_min = 0;
	topo__tune.verify_piece = 150;
	for (size_t oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
		enum topo_op op = ops[oi];
		const char *name = topo_op_name(op);
		int32_t root = 2, n;
		int one = op == TOPO_OP_BCAST || op == TOPO_OP_SCATTER;
		int copies = one || op == TOPO_OP_GATHER ||
			     op == TOPO_OP_ALLGATHER || op == TOPO_OP_ALLTOALL;
		int64_t want_tasks = 0;
		struct par_log l = {0, 0, -1};
		bool late;
		uint8_t mine[7];

		setup(&x, tree, op, TOPO_INT32, TOPO_SUM, (size_t)nb, root);
		n = x.p.n;
		CHECK_INT(n, 7);
		/* The tasks the sizes give: the sources' SENDs (a copy
		 * operation's), then every member's result; a reduction of
		 * 200 or 1400 bytes is one task of 4096 positions, made on
		 * this thread. */
		for (int32_t r = 0; r < n && copies; r++)
			if (!one || r == root)
				want_tasks +=
				    pieces_of(x.size[TOPO__SEND][r], piece);
		for (int32_t r = 0; r < n; r++) {
			int64_t need = x.size[TOPO__RECV][r];

			if ((op == TOPO_OP_GATHER || op == TOPO_OP_REDUCE) &&
			    r != root)
				need = 0;
			want_tasks += pieces_of(need, piece);
		}
		CHECK_INT(verify_par(&x, &l, NULL, &late), 0);
		CHECK(!late, "%s: timed out", name);
		CHECK_INT(l.calls, 1 + copies);
		CHECK_INT(l.tasks, want_tasks);

		/* One wrong byte of a result at a time. */
		for (int32_t r = 0; r < n; r++) {
			int64_t need = x.size[TOPO__RECV][r];
			int64_t at[] = {0,	   piece - 1,  piece,
					nb - 1,	   nb,	       2 * piece - 1,
					2 * piece, 3 * nb + 5, need - 1};
			unsigned char *rb = x.mem[TOPO__RECV][r];

			if ((op == TOPO_OP_GATHER || op == TOPO_OP_REDUCE) &&
			    r != root)
				continue;
			for (size_t i = 0; i < sizeof(at) / sizeof(at[0]);
			     i++) {
				char want[64];

				if (at[i] < 0 || at[i] >= need)
					continue;
				rb[at[i]] ^= 0x08;
				CHECK(verify_par(&x, &l, NULL, &late) == 1 &&
					  !late,
				      "%s: rank %d byte %lld not found", name,
				      r, (long long)at[i]);
				snprintf(want, sizeof(want),
					 "receive buffer byte %lld",
					 (long long)at[i]);
				CHECK(x.nerr == 1 && x.errs[0].rank == r &&
					  STARTS(x.errs[0].detail, want) &&
					  !isdigit((unsigned char)x.errs[0]
						       .detail[strlen(want)]),
				      "%s: rank %d byte %lld: %s", name, r,
				      (long long)at[i],
				      x.nerr ? x.errs[0].detail : "none");
				same_as_serial(&x, name);
				rb[at[i]] ^= 0x08;
			}
		}

		/* A SEND changed in its last piece: found by the piece
		 * that checks it (a copy operation's source) or by the
		 * member's own check. */
		{
			int32_t s = one ? root : 4;
			int64_t len = x.size[TOPO__SEND][s];
			unsigned char *sb = x.mem[TOPO__SEND][s];
			char want[96];

			sb[len - 3] ^= 0x01;
			snprintf(want, sizeof(want),
				 "send buffer changed at byte %lld: got "
				 "0x%02x, want 0x%02x",
				 (long long)(len - 3), sb[len - 3],
				 sb[len - 3] ^ 0x01);
			CHECK(verify_par(&x, &l, NULL, &late) >= 1 && !late,
			      "%s: changed SEND not found", name);
			{
				int found = 0;

				for (int e = 0; e < x.nerr; e++)
					found +=
					    x.errs[e].rank == s &&
					    strcmp(x.errs[e].detail, want) == 0;
				CHECK(found == 1, "%s: no \"%s\"", name, want);
			}
			same_as_serial(&x, name);
			/* held by another process: not looked at */
			memset(mine, 1, sizeof(mine));
			mine[s] = 0;
			verify_par(&x, &l, mine, &late);
			for (int e = 0; e < x.nerr; e++)
				CHECK(x.errs[e].rank != s,
				      "%s: a SEND not held was checked", name);
			sb[len - 3] ^= 0x01;
		}

		/* The deadline, in the middle of the pieces. */
		l.stop_after = 2;
		verify_par(&x, &l, NULL, &late);
		CHECK(late, "%s: stopped pieces not a timeout", name);
		l.stop_after = -1;
		CHECK_INT(verify_par(&x, &l, NULL, &late), 0);
		run_free(&x);
	}
	topo__tune.verify_par_min = was_min;
	topo__tune.verify_piece = was_piece;
}

/*
 * The copy operations compare a RECV with the SEND it was copied from
 * once that SEND is found to hold its input (copy_sends).  A SEND changed
 * in the same way as a RECV copied from it must not vouch for it: both
 * are reported, the RECV against the input.  Also with the SENDs' check
 * shared between threads, and in an MPI process that holds the receiver
 * but not the sender.
 */
static void test_copy_from_send(void)
{
	static const enum topo_op ops[] = {TOPO_OP_BCAST, TOPO_OP_SCATTER,
					   TOPO_OP_GATHER, TOPO_OP_ALLGATHER,
					   TOPO_OP_ALLTOALL};
	const int64_t nb = 12, k = 7;
	int32_t was = topo__tune.verify_member_task;
	struct run x;
	char want[160];

	topo__tune.verify_member_task = 2;
	for (size_t oi = 0; oi < sizeof(ops) / sizeof(ops[0]); oi++) {
		enum topo_op op = ops[oi];
		const char *name = topo_op_name(op);
		int32_t root = 2;
		int one = op == TOPO_OP_BCAST || op == TOPO_OP_SCATTER;
		/* sender s, receiver d, and where the byte is in each */
		int32_t s = one ? root : 4;
		int32_t d = op == TOPO_OP_GATHER ? root : 5;
		int64_t sat = k, rat = k;
		unsigned char orig;
		struct par_log l = {0, 0, -1}; /* no task stopped */
		bool late;
		uint8_t mine[7];

		if (op == TOPO_OP_SCATTER || op == TOPO_OP_ALLTOALL)
			sat += nb * d;
		if (!one)
			rat += nb * s;
		setup(&x, tree, op, TOPO_INT8, TOPO_SUM, (size_t)nb, root);
		CHECK_INT(verify(&x, MAXERR), 0);
		orig = x.mem[TOPO__SEND][s][sat];
		CHECK(x.mem[TOPO__RECV][d][rat] == orig, "%s: setup", name);
		x.mem[TOPO__SEND][s][sat] ^= 0x22;
		x.mem[TOPO__RECV][d][rat] ^= 0x22;

		for (int way = 0; way < 3; way++) {
			int64_t got;
			int se = -1, re = -1;

			if (way == 0) {
				got = verify(&x, MAXERR);
			} else if (way == 1) {
				got = verify_par(&x, &l, NULL, &late);
				CHECK(!late, "%s: timed out", name);
			} else {
				/* holds d, not s: only d's error */
				memset(mine, 0, sizeof(mine));
				mine[d] = 1;
				got = verify_par(&x, &l, mine, &late);
			}
			CHECK_INT(got, way == 2 ? 1 : 2);
			for (int e = 0; e < x.nerr; e++) {
				if (x.errs[e].rank == s &&
				    STARTS(x.errs[e].detail, "send buffer"))
					se = e;
				if (x.errs[e].rank == d &&
				    STARTS(x.errs[e].detail, "receive buffer"))
					re = e;
			}
			CHECK(way == 2 ? se < 0 : se >= 0,
			      "%s way %d: send error %d", name, way, se);
			CHECK(re >= 0,
			      "%s way %d: the RECV copied from a "
			      "changed SEND passed",
			      name, way);
			if (se >= 0) {
				snprintf(want, sizeof(want),
					 "send buffer changed at byte %lld: "
					 "got 0x%02x, want 0x%02x",
					 (long long)sat, orig ^ 0x22, orig);
				CHECK_STR(x.errs[se].detail, want);
			}
			if (re >= 0) {
				snprintf(want, sizeof(want),
					 "receive buffer byte %lld",
					 (long long)rat);
				CHECK(STARTS(x.errs[re].detail, want), "%s: %s",
				      name, x.errs[re].detail);
				snprintf(want, sizeof(want),
					 "got 0x%02x, want 0x%02x", orig ^ 0x22,
					 orig);
				CHECK(strstr(x.errs[re].detail, want) != NULL,
				      "%s: %s", name, x.errs[re].detail);
			}
		}
		/* The SEND put right: the RECV alone, against it. */
		x.mem[TOPO__SEND][s][sat] = orig;
		CHECK_INT(verify(&x, MAXERR), 1);
		CHECK_INT(x.errs[0].rank, d);
		x.mem[TOPO__RECV][d][rat] = orig;
		CHECK_INT(verify(&x, MAXERR), 0);
		run_free(&x);
	}
	topo__tune.verify_member_task = was;
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	make_tree();
	CHECK_RUN(new_ops, test_new_ops());
	CHECK_RUN(pattern, test_pattern());
	CHECK_RUN(pattern_pieces, test_pattern_pieces());
	CHECK_RUN(pattern_copies, test_pattern_copies());
	CHECK_RUN(pattern_values, test_pattern_values());
	CHECK_RUN(verify_par, test_verify_par());
	CHECK_RUN(verify_keep, test_verify_keep());
	CHECK_RUN(verify_members, test_verify_members());
	CHECK_RUN(reduce_inputs, test_reduce_inputs());
	CHECK_RUN(reduce_order, test_reduce_order());
	CHECK_RUN(reduce_all, test_reduce_all());
	CHECK_RUN(reduce_hand, test_reduce_hand());
	CHECK_RUN(faults, test_faults());
	CHECK_RUN(copy_from_send, test_copy_from_send());
	CHECK_RUN(verify_pieces, test_verify_pieces());
	CHECK_RUN(many, test_many());
	topo_tree_free(tree);
	topo_group_free(grp);
	topo_machine_free(mach);
	return check_done("test_verify");
}
