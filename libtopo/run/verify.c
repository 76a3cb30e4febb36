/*
 * verify.c - the replay's input data and the check of what every member
 * ends with.
 *
 * Inputs are a pure function of (member rank, byte offset, op, type,
 * redop), so nothing keeps a copy: the verifier regenerates them.  What a
 * member must end with comes from the operation's definition (SPEC 8)
 * alone, never from the plan's messages, so a wrong plan cannot vouch for
 * itself; the reduction is recomputed here with plain typed loops in rank
 * order, apart from redop.c's topo__reduce that the plan runs.
 *
 * Copy operations (bcast, scatter, gather) use a byte pattern in which,
 * for every 4-byte word of a buffer, the word's value is a bijection of the
 * member's rank: two members' inputs differ in every whole word, so data
 * delivered to the wrong member or the wrong block is always caught.  In a
 * scatter only the root has input; the others' SEND, if any, is zeros.
 *
 * Reduce inputs are chosen so that every operator gives the same result in
 * every type whatever order the plan combines them in, which lets float
 * and double be compared bit for bit:
 *   sum   integers in -3..3 (0..3 unsigned): partial sums stay integers far
 *         below 2^24, and integer types wrap the same way in any order;
 *   prod  +-1 (1 unsigned), with a 2 for at most 4 members per element:
 *         every partial product is +-2^k with k <= 4, which fits int8;
 *   min, max  integers spread over most of the type's range (exact);
 *   band, bor, bxor  arbitrary bits, biased towards ones for band and
 *         zeros for bor so that results do not saturate.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Verification works through buffers of this many bytes on the stack (a
 * multiple of every element size). */
#define CHUNK 4096

/* ---------------------------------------------------------------------- */
/* Pattern arithmetic: pure functions, no allocation. */

/* murmur3's finaliser: a bijection of 32-bit values. */
static uint32_t fmix32(uint32_t h)
{
	h ^= h >> 16;
	h *= 0x85ebca6bu;
	h ^= h >> 13;
	h *= 0xc2b2ae35u;
	h ^= h >> 16;
	return h;
}

/* splitmix64's finaliser: a bijection of 64-bit values. */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* What the pattern depends on besides rank and offset. */
static uint64_t plan_seed(const struct topo_plan *p)
{
	return mix64(0x636f6c6c72756eull ^ ((uint64_t)p->params.op << 16 |
					    (uint64_t)p->params.type << 8 |
					    (uint64_t)p->params.redop));
}

/* Copy operations: the value of 4-byte word w of member r's input.  For a
 * fixed word, r -> value is a bijection (xor with a constant, then fmix32),
 * so no two members ever share a word. */
static uint32_t copy_word(uint64_t seed, int32_t r, uint64_t w)
{
	uint32_t k = (uint32_t)mix64(seed + w * 0x9e3779b97f4a7c15ull);

	return fmix32((uint32_t)r ^ k);
}

static void copy_fill(uint64_t seed, int32_t r, uint64_t off,
		      unsigned char *out, size_t len)
{
	size_t i = 0;

	/* Bytes are taken from the word little-end first, whatever the host,
	 * so that a buffer's content does not depend on the machine. */
	while (i < len) {
		uint64_t o = off + i;
		uint32_t v = copy_word(seed, r, o / 4);

		if (o % 4 == 0 && len - i >= 4) {
			out[i] = (unsigned char)v;
			out[i + 1] = (unsigned char)(v >> 8);
			out[i + 2] = (unsigned char)(v >> 16);
			out[i + 3] = (unsigned char)(v >> 24);
			i += 4;
		} else {
			out[i++] = (unsigned char)(v >> (8 * (o % 4)));
		}
	}
}

static int is_float(enum topo_type t)
{
	return t == TOPO_FLOAT || t == TOPO_DOUBLE;
}

static int is_signed(enum topo_type t)
{
	return t == TOPO_INT8 || t == TOPO_INT16 || t == TOPO_INT32 ||
	       t == TOPO_INT64;
}

static size_t type_bytes(enum topo_type t)
{
	switch (t) {
#define SIZE_CASE(e, ctype, name)                                              \
	case e:                                                                \
		return sizeof(ctype);
		TOPO_TYPE_MAP(SIZE_CASE)
#undef SIZE_CASE
	default:
		return 1;
	}
}

/* Stores an integer (given as its two's complement bits) or a double as
 * one element of type t, in host byte order (the plan reduces in host
 * order). */
static void store(enum topo_type t, uint64_t bits, double d, void *out)
{
	switch (t) {
	case TOPO_INT8:
	case TOPO_UINT8: {
		uint8_t v = (uint8_t)bits;

		memcpy(out, &v, 1);
		break;
	}
	case TOPO_INT16:
	case TOPO_UINT16: {
		uint16_t v = (uint16_t)bits;

		memcpy(out, &v, 2);
		break;
	}
	case TOPO_INT32:
	case TOPO_UINT32: {
		uint32_t v = (uint32_t)bits;

		memcpy(out, &v, 4);
		break;
	}
	case TOPO_FLOAT: {
		float v = (float)d;

		memcpy(out, &v, 4);
		break;
	}
	case TOPO_DOUBLE:
		memcpy(out, &d, 8);
		break;
	default:
		memcpy(out, &bits, 8);
		break;
	}
}

/* Half-width of the min/max range per element size: integers within it
 * are exact in the type (and in float's 24-bit mantissa). */
static uint64_t minmax_limit(enum topo_type t)
{
	switch (t) {
	case TOPO_INT8:
		return 100;
	case TOPO_UINT8:
		return 200;
	case TOPO_INT16:
		return 30000;
	case TOPO_UINT16:
		return 60000;
	case TOPO_INT32:
		return 1000000000;
	case TOPO_UINT32:
		return 4000000000u;
	case TOPO_INT64:
		return 4000000000000000000ull;
	case TOPO_UINT64:
		return UINT64_MAX;
	case TOPO_FLOAT:
		return 1000000;
	default:
		return 1000000000000000ull; /* double: below 2^53 */
	}
}

static uint64_t rank_key(uint64_t seed, int32_t r)
{
	return seed ^ mix64((uint64_t)(uint32_t)r + 1);
}

/* Reduce: element e of member r (whose rank_key is key), written to out. */
static void reduce_elem(uint64_t key, enum topo_type t, enum topo_redop op,
			int32_t r, uint64_t e, void *out)
{
	uint64_t h = mix64(key ^ e * 0x9e3779b97f4a7c15ull);
	int64_t v = 0;
	uint64_t bits;

	switch (op) {
	case TOPO_SUM:
		if (is_signed(t) || is_float(t))
			v = (int64_t)(h % 7) - 3;
		else
			v = (int64_t)(h % 4);
		break;
	case TOPO_PROD:
		/* At most 4 ranks (those below 12 with r + e divisible by 3)
		 * contribute a 2 to any element. */
		v = r < 12 && ((uint64_t)r + e) % 3 == 0 ? 2 : 1;
		if ((is_signed(t) || is_float(t)) && (h & 1))
			v = -v;
		break;
	case TOPO_MIN:
	case TOPO_MAX: {
		uint64_t lim = minmax_limit(t);

		if (lim == UINT64_MAX) {
			store(t, h, 0, out);
			return;
		}
		if (is_signed(t) || is_float(t))
			v = (int64_t)(h % (2 * lim + 1)) - (int64_t)lim;
		else
			v = (int64_t)(h % (lim + 1));
		break;
	}
	case TOPO_BAND:
	case TOPO_BOR: {
		/* A bit is rare (1/16) in bor inputs and cleared as rarely in
		 * band inputs: across a few dozen members some bits survive
		 * either way. */
		uint64_t h2 = mix64(h), h3 = mix64(h2), h4 = mix64(h3);
		uint64_t rare = h & h2 & h3 & h4;

		bits = op == TOPO_BOR ? rare : ~rare;
		store(t, bits, (double)(int64_t)(bits >> 11), out);
		return;
	}
	default: /* bxor, and anything unknown: arbitrary bits */
		store(t, h, (double)(int64_t)(h >> 11), out);
		return;
	}
	store(t, (uint64_t)v, (double)v, out);
}

static void reduce_fill(uint64_t seed, enum topo_type t, enum topo_redop op,
			int32_t r, uint64_t off, unsigned char *out, size_t len)
{
	size_t ts = type_bytes(t), i = 0;
	unsigned char elem[8];
	uint64_t key = rank_key(seed, r);

	while (i < len) {
		uint64_t o = off + i;
		size_t in = (size_t)(o % ts), n = ts - in;

		if (n > len - i)
			n = len - i;
		reduce_elem(key, t, op, r, o / ts, elem);
		memcpy(out + i, elem + in, n);
		i += n;
	}
}

/* Bytes [off, off + len) of member r's input. */
static void input_range(const struct topo_plan *p, int32_t r, uint64_t off,
			unsigned char *out, size_t len)
{
	uint64_t seed = plan_seed(p);

	if (topo_op_reduces(p->params.op))
		reduce_fill(seed, p->params.type, p->params.redop, r, off, out,
			    len);
	else if (p->params.op == TOPO_OP_SCATTER && r != p->root)
		/* A scatter's input is the root's alone; other members' SEND
		 * (when the algorithm gives them one) holds zeros, which is
		 * what "or-combine" contributes for the slots not theirs. */
		memset(out, 0, len);
	else
		copy_fill(seed, r, off, out, len);
}

void topo__pattern_fill(const struct topo_plan *p, int32_t r, void *buf,
			size_t len)
{
	input_range(p, r, 0, buf, len);
}

void topo__pattern_fill_at(const struct topo_plan *p, int32_t r,
			   uint64_t off, void *buf, size_t len)
{
	input_range(p, r, off, buf, len);
}

/* ---------------------------------------------------------------------- */
/* The expected reduction: acc = acc OP src over count elements, with the C
 * operators on the type itself.  Integer sums and products go through an
 * unsigned type of at least the same width, so that wrapping is defined
 * (and the same as any order of combining); both buffers are aligned
 * scratch arrays of this file. */

#define INT_COMBINE(name, T, U)                                                \
	static void name(enum topo_redop op, T *acc, const T *src,             \
			 size_t count)                                         \
	{                                                                      \
		for (size_t i = 0; i < count; i++) {                           \
			T a = acc[i], b = src[i];                              \
			switch (op) {                                          \
			case TOPO_SUM:                                         \
				a = (T)((U)a + (U)b);                          \
				break;                                         \
			case TOPO_PROD:                                        \
				a = (T)((U)a * (U)b);                          \
				break;                                         \
			case TOPO_MIN:                                         \
				a = b < a ? b : a;                             \
				break;                                         \
			case TOPO_MAX:                                         \
				a = b > a ? b : a;                             \
				break;                                         \
			case TOPO_BAND:                                        \
				a = (T)(a & b);                                \
				break;                                         \
			case TOPO_BOR:                                         \
				a = (T)(a | b);                                \
				break;                                         \
			default:                                               \
				a = (T)(a ^ b);                                \
				break;                                         \
			}                                                      \
			acc[i] = a;                                            \
		}                                                              \
	}

/* Bitwise operators do not exist on floating types (the plan refuses
 * them); the accumulator is then left as it is. */
#define FLT_COMBINE(name, T)                                                   \
	static void name(enum topo_redop op, T *acc, const T *src,             \
			 size_t count)                                         \
	{                                                                      \
		for (size_t i = 0; i < count; i++) {                           \
			T a = acc[i], b = src[i];                              \
			switch (op) {                                          \
			case TOPO_SUM:                                         \
				a = a + b;                                     \
				break;                                         \
			case TOPO_PROD:                                        \
				a = a * b;                                     \
				break;                                         \
			case TOPO_MIN:                                         \
				a = b < a ? b : a;                             \
				break;                                         \
			case TOPO_MAX:                                         \
				a = b > a ? b : a;                             \
				break;                                         \
			default:                                               \
				break;                                         \
			}                                                      \
			acc[i] = a;                                            \
		}                                                              \
	}

INT_COMBINE(combine_i8, int8_t, unsigned)
INT_COMBINE(combine_i16, int16_t, unsigned)
INT_COMBINE(combine_i32, int32_t, uint32_t)
INT_COMBINE(combine_i64, int64_t, uint64_t)
INT_COMBINE(combine_u8, uint8_t, unsigned)
INT_COMBINE(combine_u16, uint16_t, unsigned)
INT_COMBINE(combine_u32, uint32_t, uint32_t)
INT_COMBINE(combine_u64, uint64_t, uint64_t)
FLT_COMBINE(combine_f, float)
FLT_COMBINE(combine_d, double)

/* Scratch that every element type may be read from in place. */
union scratch {
	int64_t i;
	double d;
	unsigned char b[CHUNK];
};

static void combine(enum topo_type t, enum topo_redop op, union scratch *acc,
		    const union scratch *src, size_t bytes)
{
	switch (t) {
	case TOPO_INT8:
		combine_i8(op, (int8_t *)acc->b, (const int8_t *)src->b, bytes);
		break;
	case TOPO_INT16:
		combine_i16(op, (int16_t *)acc->b, (const int16_t *)src->b,
			    bytes / 2);
		break;
	case TOPO_INT32:
		combine_i32(op, (int32_t *)acc->b, (const int32_t *)src->b,
			    bytes / 4);
		break;
	case TOPO_INT64:
		combine_i64(op, (int64_t *)acc->b, (const int64_t *)src->b,
			    bytes / 8);
		break;
	case TOPO_UINT8:
		combine_u8(op, (uint8_t *)acc->b, (const uint8_t *)src->b,
			   bytes);
		break;
	case TOPO_UINT16:
		combine_u16(op, (uint16_t *)acc->b, (const uint16_t *)src->b,
			    bytes / 2);
		break;
	case TOPO_UINT32:
		combine_u32(op, (uint32_t *)acc->b, (const uint32_t *)src->b,
			    bytes / 4);
		break;
	case TOPO_UINT64:
		combine_u64(op, (uint64_t *)acc->b, (const uint64_t *)src->b,
			    bytes / 8);
		break;
	case TOPO_FLOAT:
		combine_f(op, (float *)acc->b, (const float *)src->b,
			  bytes / 4);
		break;
	case TOPO_DOUBLE:
		combine_d(op, (double *)acc->b, (const double *)src->b,
			  bytes / 8);
		break;
	default:
		break;
	}
}

/* ---------------------------------------------------------------------- */
/* The check */

struct check {
	const struct topo_plan *p;
	/* allreduce and reduce-scatter: the reduction of every member's
	 * input, computed once for all members (NULL: per member) */
	unsigned char *reduced;
	unsigned char *(*buf)(void *ctx, int32_t r, int kind);
	void *ctx;
	void (*report)(void *ctx2, const struct topo__verify_error *e);
	void *ctx2;
	int64_t max;
	int64_t count;
	union scratch want, tmp;
};

static void emit(struct check *c, int32_t r, const char *kind, const char *fmt,
		 ...) __attribute__((format(printf, 4, 5)));

static void emit(struct check *c, int32_t r, const char *kind, const char *fmt,
		 ...)
{
	struct topo__verify_error e;
	va_list ap;

	if (c->count++ >= c->max || c->report == NULL)
		return;
	e.rank = r;
	e.kind = kind;
	va_start(ap, fmt);
	vsnprintf(e.detail, sizeof(e.detail), fmt, ap);
	va_end(ap);
	c->report(c->ctx2, &e);
}

static int64_t bufsize(const struct topo_plan *p, enum topo__buf b, int32_t r)
{
	return p->bufsize[b] != NULL ? p->bufsize[b][r] : 0;
}

static int32_t endpoint(const struct topo_plan *p, int32_t r)
{
	if (p->t != NULL && p->t->g != NULL && r >= 0 && r < p->t->g->size)
		return p->t->g->members[r];
	return r;
}

/* Index of the first byte where a and b differ (they do). */
static size_t first_diff(const unsigned char *a, const unsigned char *b,
			 size_t len)
{
	size_t i = 0;

	while (i < len && a[i] == b[i])
		i++;
	return i;
}

/* Compares member r's RECV bytes [off, off + len) with member src's input
 * bytes [soff, soff + len).  Returns 1 (and reports) on a difference. */
static int check_copy(struct check *c, int32_t r, int64_t off, int32_t src,
		      int64_t soff, int64_t len, int block)
{
	const unsigned char *got = c->buf(c->ctx, r, TOPO__RECV);

	for (int64_t i = 0; i < len; i += CHUNK) {
		size_t n = (size_t)(len - i < CHUNK ? len - i : CHUNK);

		input_range(c->p, src, (uint64_t)(soff + i), c->want.b, n);
		if (memcmp(got + off + i, c->want.b, n) != 0) {
			size_t d = first_diff(got + off + i, c->want.b, n);
			int64_t at = off + i + (int64_t)d;

			if (block)
				emit(c, r, "wrong data",
				     "receive buffer byte %" PRId64
				     " (byte %" PRId64 " of endpoint %d's "
				     "block): got 0x%02x, want 0x%02x",
				     at, i + (int64_t)d,
				     (int)endpoint(c->p, src), got[at],
				     c->want.b[d]);
			else
				emit(c, r, "wrong data",
				     "receive buffer byte %" PRId64
				     ": got 0x%02x, want 0x%02x",
				     at, got[at], c->want.b[d]);
			return 1;
		}
	}
	return 0;
}

/* The reduction of every member's input bytes [off, off + n) (n at most
 * CHUNK), combined in rank order, into c->want. */
static void reduce_chunk(struct check *c, int64_t off, size_t n)
{
	const struct topo_plan *p = c->p;
	enum topo_type t = p->params.type;
	size_t ts = type_bytes(t);

	input_range(p, 0, (uint64_t)off, c->want.b, n);
	for (int32_t m = 1; m < p->n; m++) {
		input_range(p, m, (uint64_t)off, c->tmp.b, n);
		combine(t, p->params.redop, &c->want, &c->tmp, n - n % ts);
	}
}

/* Member r's RECV [0, len) against the reduction of every member's input
 * bytes [off, off + len): computed here, CHUNK bytes at a time, or taken
 * from c->reduced. */
static int check_reduce(struct check *c, int32_t r, int64_t off, int64_t len)
{
	const struct topo_plan *p = c->p;
	const unsigned char *got = c->buf(c->ctx, r, TOPO__RECV);
	size_t ts = type_bytes(p->params.type);

	for (int64_t i = 0; i < len; i += CHUNK) {
		size_t n = (size_t)(len - i < CHUNK ? len - i : CHUNK);
		const unsigned char *want;

		if (c->reduced != NULL) {
			want = c->reduced + off + i;
		} else {
			reduce_chunk(c, off + i, n);
			want = c->want.b;
		}
		if (memcmp(got + i, want, n) != 0) {
			size_t d = first_diff(got + i, want, n);
			int64_t at = i + (int64_t)d;

			emit(c, r, "wrong data",
			     "receive buffer byte %" PRId64 " (element %" PRId64
			     "): got 0x%02x, want 0x%02x",
			     at, at / (int64_t)ts, got[at], want[d]);
			return 1;
		}
	}
	return 0;
}

/* The reduction every member of an allreduce (B bytes) or a
 * reduce-scatter (n blocks of B) is checked against, computed once:
 * c->reduced, or NULL without the memory (each member's check then
 * computes its part).  Stops at the deadline (time->timed_out). */
static void reduce_all(struct check *c, struct topo__verify_time *time)
{
	const struct topo_plan *p = c->p;
	int64_t len = (int64_t)p->params.bytes;

	c->reduced = NULL;
	if (p->params.op == TOPO_OP_REDUCE_SCATTER)
		len *= p->n;
	else if (p->params.op != TOPO_OP_ALLREDUCE)
		return;
	if (len <= 0 || p->n < 2)
		return;
	c->reduced = topo__malloc((size_t)len);
	if (c->reduced == NULL)
		return;
	for (int64_t i = 0; i < len; i += CHUNK) {
		size_t n = (size_t)(len - i < CHUNK ? len - i : CHUNK);

		if (time->deadline > 0 && topo__now() >= time->deadline) {
			time->timed_out = true;
			return;
		}
		reduce_chunk(c, i, n);
		memcpy(c->reduced + i, c->want.b, n);
	}
}

/* Member r's RECV, per the operation's definition.  Returns 1 when an
 * error was reported. */
static int check_recv(struct check *c, int32_t r)
{
	const struct topo_plan *p = c->p;
	int64_t nb = (int64_t)p->params.bytes, need, have;
	int32_t root = p->root;

	switch (p->params.op) {
	case TOPO_OP_BCAST:
	case TOPO_OP_SCATTER:
	case TOPO_OP_ALLREDUCE:
	case TOPO_OP_REDUCE_SCATTER:
		need = nb;
		break;
	case TOPO_OP_ALLGATHER:
	case TOPO_OP_ALLTOALL:
		need = nb * p->n;
		break;
	case TOPO_OP_GATHER:
	case TOPO_OP_REDUCE: /* only the root holds a result */
		if (r != root)
			return 0;
		need = p->params.op == TOPO_OP_GATHER ? nb * p->n : nb;
		break;
	default: /* barrier: no data (its order is checked apart) */
		return 0;
	}
	have = bufsize(p, TOPO__RECV, r);
	if (have < need) {
		emit(c, r, "wrong data",
		     "receive buffer holds %" PRId64 " bytes, %" PRId64
		     " expected",
		     have, need);
		return 1;
	}
	switch (p->params.op) {
	case TOPO_OP_BCAST:
		return check_copy(c, r, 0, root, 0, nb, 0);
	case TOPO_OP_SCATTER:
		return check_copy(c, r, 0, root, nb * r, nb, 0);
	case TOPO_OP_GATHER:
	case TOPO_OP_ALLGATHER:
		for (int32_t b = 0; b < p->n; b++)
			if (check_copy(c, r, nb * b, b, 0, nb, 1))
				return 1;
		return 0;
	case TOPO_OP_ALLTOALL:
		/* Block b: what member b sent to r. */
		for (int32_t b = 0; b < p->n; b++)
			if (check_copy(c, r, nb * b, b, nb * r, nb, 1))
				return 1;
		return 0;
	case TOPO_OP_REDUCE_SCATTER:
		return check_reduce(c, r, nb * r, nb);
	default: /* reduce, allreduce */
		return check_reduce(c, r, 0, nb);
	}
}

/* Member r's SEND must still hold its input. */
static void check_send(struct check *c, int32_t r)
{
	int64_t len = bufsize(c->p, TOPO__SEND, r);
	const unsigned char *got;

	if (len <= 0)
		return;
	got = c->buf(c->ctx, r, TOPO__SEND);
	for (int64_t i = 0; i < len; i += CHUNK) {
		size_t n = (size_t)(len - i < CHUNK ? len - i : CHUNK);

		input_range(c->p, r, (uint64_t)i, c->want.b, n);
		if (memcmp(got + i, c->want.b, n) != 0) {
			size_t d = first_diff(got + i, c->want.b, n);

			emit(c, r, "wrong data",
			     "send buffer changed at byte %" PRId64
			     ": got 0x%02x, want 0x%02x",
			     i + (int64_t)d, got[i + (int64_t)d], c->want.b[d]);
			return;
		}
	}
}

/* Receipt counts summed per member over its faulty slots. */
struct tally {
	int64_t short_got, short_want; /* slots delivered too rarely */
	int64_t over_got, over_want;   /* slots delivered too often */
};

static void report_tally(struct check *c, int32_t r, const struct tally *t)
{
	if (t->short_want > 0)
		emit(c, r, "undelivered",
		     "received %" PRId64 " of %" PRId64 " expected deliver%s",
		     t->short_got, t->short_want,
		     t->short_want == 1 ? "y" : "ies");
	if (t->over_want > 0 || t->over_got > 0)
		emit(c, r, "duplicated",
		     "received %" PRId64 " deliver%s, %" PRId64 " expected",
		     t->over_got, t->over_got == 1 ? "y" : "ies",
		     t->over_want);
}

int64_t topo__verify(const struct topo_plan *p,
		     unsigned char *(*buf)(void *ctx, int32_t r, int kind),
		     void *ctx, const int64_t *slot_count,
		     void (*report)(void *ctx2,
				    const struct topo__verify_error *e),
		     void *ctx2, int64_t max)
{
	struct topo__verify_time none = {0, NULL, NULL, 0, false, 0, 0, NULL};

	return topo__verify_until(p, buf, ctx, slot_count, report, ctx2, max,
				  &none);
}

int64_t topo__verify_until(const struct topo_plan *p,
			   unsigned char *(*buf)(void *ctx, int32_t r,
						 int kind),
			   void *ctx, const int64_t *slot_count,
			   void (*report)(void *ctx2,
					  const struct topo__verify_error *e),
			   void *ctx2, int64_t max,
			   struct topo__verify_time *time)
{
	struct check chk, *c = &chk;
	struct tally *tally = NULL;
	int64_t bad = 0, total;

	c->p = p;
	c->buf = buf;
	c->ctx = ctx;
	c->report = report;
	c->ctx2 = ctx2;
	c->max = max;
	c->count = 0;
	c->reduced = NULL;

	/* Receipt counters are only aggregated per member when some are
	 * wrong, which keeps the usual case free of allocations. */
	if (slot_count != NULL)
		for (int64_t s = 0; s < p->nslots; s++)
			bad += slot_count[s] != p->slot_expect[s];
	if (bad > 0) {
		tally = topo__calloc((size_t)p->n, sizeof(*tally));
		for (int64_t s = 0; s < p->nslots; s++) {
			int64_t got = slot_count[s], want = p->slot_expect[s];
			int32_t m = p->slot_member[s];
			struct tally one = {0, 0, 0, 0};
			struct tally *t = tally != NULL ? &tally[m] : &one;

			if (got < want) {
				t->short_got += got;
				t->short_want += want;
			} else if (got > want) {
				t->over_got += got;
				t->over_want += want;
			} else {
				continue;
			}
			/* Out of memory: one error per faulty slot. */
			if (tally == NULL)
				report_tally(c, m, t);
		}
	}
	reduce_all(c, time);
	for (int32_t r = 0; r < p->n && !time->timed_out; r++) {
		int missing = 0;

		/* Every 256 members, the clock: a member's check costs its
		 * buffers' bytes, so a run of few large members looks each
		 * time. */
		if ((time->deadline > 0 || time->progress != NULL) &&
		    (r % 256 == 0 || p->params.bytes >= (1u << 20))) {
			double t = topo__now();

			if (time->deadline > 0 && t >= time->deadline) {
				time->timed_out = true;
				break;
			}
			if (time->progress != NULL && t >= time->next) {
				time->next = t + TOPO__PROGRESS_EVERY;
				time->progress(time->ctx, "verifying",
					       time->base + r,
					       time->total > 0 ? time->total
							       : p->n);
			}
		}
		if (time->mine != NULL && !time->mine[r])
			continue;
		if (tally != NULL) {
			report_tally(c, r, &tally[r]);
			missing = tally[r].short_want > 0;
		}
		/* A member that receives from one source and missed it holds
		 * poison: "undelivered" already says why.  The other
		 * operations' members receive from many, and where their data
		 * goes wrong says from whom. */
		if (!missing || (p->params.op != TOPO_OP_BCAST &&
				 p->params.op != TOPO_OP_SCATTER))
			check_recv(c, r);
		check_send(c, r);
	}
	total = c->count;
	topo__free(c->reduced);
	topo__free(tally);
	return total;
}

int64_t topo__verify_barrier(const struct topo_plan *p, const int64_t *stamp,
			     void (*report)(void *ctx2,
					    const struct topo__verify_error *e),
			     void *ctx2, int64_t max)
{
	struct check chk, *c = &chk;
	int64_t last = -1, lm = -1;

	memset(c, 0, sizeof(*c));
	c->p = p;
	c->report = report;
	c->ctx2 = ctx2;
	c->max = max;
	if (p->params.op != TOPO_OP_BARRIER || stamp == NULL || p->msg == NULL)
		return 0;
	/* The last member to enter, in the order the steps completed. */
	for (int64_t m = 0; m < p->nmsg; m++)
		if (p->msg[m].mark == TOPO__MARK_ENTER && stamp[m] > last) {
			last = stamp[m];
			lm = m;
		}
	if (lm < 0)
		return 0;
	/* Steps that never ran are the receipt counters' to report. */
	for (int64_t m = 0; m < p->nmsg; m++)
		if (p->msg[m].mark == TOPO__MARK_LEAVE && stamp[m] >= 0 &&
		    stamp[m] < last)
			emit(c, p->msg[m].src, "left early",
			     "left the barrier (step %" PRId64 " of the run) "
			     "before endpoint %d entered it (step %" PRId64 ")",
			     stamp[m] + 1, (int)endpoint(p, p->msg[lm].src),
			     last + 1);
	return c->count;
}
