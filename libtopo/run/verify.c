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
 * The patterns are this file's alone (SPEC fixes none); both are one or two
 * rounds of 32-bit multiply-xorshift per word or element, in loops the
 * compiler vectorises, several times faster than a 64-bit mix and a
 * switch per element (docs/CONSTANTS.md).
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
 *
 * The reductions' check makes every member's input once more (the fill
 * made it first): so it compares each member's SEND on the way, instead
 * of making it a third time for check_send, and it is cut into tasks of
 * CHUNK positions that every thread of the run shares (time->par).  The
 * copy operations' check makes each input once too: the SENDs that hold
 * one first (copy_sends), then every RECV is compared with the SEND found
 * intact that it was copied from.
 *
 * The inputs are made again rather than kept: a kept copy made verified
 * runs shorter, but a verification then reads twice the bytes, the timed
 * iteration after it slowed, and beyond the cache two streams from memory
 * lost to making the pattern (docs/CONSTANTS.md).
 */
#define TOPO_INTERNAL
#include "run/transport.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Verification works through buffers of this many bytes on the stack (a
 * multiple of every element size). */
#define CHUNK 4096

/* ---------------------------------------------------------------------- */
/* Pattern arithmetic: pure functions, no allocation.
 *
 * Cost matters: over 65,536 members of 64 KiB the inputs are a billion
 * elements, made once to fill the buffers and twice more to check them.
 * So the per-element work is one or two rounds of 32-bit multiply-xorshift
 * in loops with no branch, which compilers vectorise, and everything that
 * depends only on the member (or on the high half of the position) is
 * computed once per call. */

/* Elements (or words) made at a time, on the stack. */
#define BLOCK 512

/* for (i = 0; i < n; i++) body, as two loops: whole groups of 16 (a count
 * the compiler knows to be a multiple of any vector width, which the
 * "very cheap" vectoriser of -O2 needs), then the rest (redop.c does the
 * same). */
#define EACH(n, body)                                                          \
	do {                                                                   \
		size_t whole_ = (n) / 16 * 16, i;                              \
		for (i = 0; i < whole_; i++) {                                 \
			body;                                                  \
		}                                                              \
		for (; i < (n); i++) {                                         \
			body;                                                  \
		}                                                              \
	} while (0)

/* EACH for the loops of a switch (combine's): gcc 12 hoists code common
 * to EACH's loops in the cases out of the switch, and then vectorises none
 * of them at -O2; whole groups of 16 as a loop of their own it does. */
#define EACH_CASE(n, body)                                                     \
	do {                                                                   \
		size_t i;                                                      \
		for (size_t b_ = 0; b_ < (n) / 16; b_++)                       \
			for (size_t j_ = 0; j_ < 16; j_++) {                   \
				i = b_ * 16 + j_;                              \
				body;                                          \
			}                                                      \
		for (i = (n) / 16 * 16; i < (n); i++) {                        \
			body;                                                  \
		}                                                              \
	} while (0)

/*
 * The loops that make patterns have three more copies for x86-64
 * processors, for SSE4.1, AVX2 and AVX-512 (F, BW and VL), the widest the
 * processor has taken: SSE4.1's pmulld multiplies four 32-bit lanes in
 * one instruction, which the baseline SSE2 must emulate with shuffles,
 * AVX2's eight, AVX-512's sixteen; each wider copy shortened the
 * verification's pause (docs/CONSTANTS.md).  A reduction's fill is copied
 * whole (reduce_fill: its values and their stores too, not the hash
 * alone).  The AVX-512 copy runs on AMD processors only: Zen 4 and later
 * run 512-bit instructions at full clock, while Intel's Skylake-SP to
 * Cascade Lake lower the core's clock for some time after heavy 512-bit
 * work, which would slow the timed iteration that follows a verification
 * (and no Intel processor was at hand to measure); there the AVX2 copy
 * runs, as under valgrind, whose processor has no AVX-512.  Every copy
 * makes the same bytes (test_verify's test_pattern_copies).  Chosen by a
 * test on first use, not by an ifunc: an ifunc's resolver runs while the
 * program is being relocated, before a sanitizer's runtime is up, and
 * ThreadSanitizer's instrumentation of it crashes there.
 */
#if defined(__x86_64__) && defined(__GNUC__)
#define SIMD_CLONES 1
#else
#define SIMD_CLONES 0
#endif

/* (the default of topo__tune.pattern_simd_cap: tune.c) */

/* The widest of the pattern loops' copies the processor can run: 1 the
 * baseline, 2 SSE4.1, 3 AVX2, 4 AVX-512; at most topo__tune.pattern_simd_cap
 * where that is set. */
static int simd_level(void)
{
#if SIMD_CLONES
	static int known; /* __atomic: 0 not yet asked */
	int v = __atomic_load_n(&known, __ATOMIC_RELAXED),
	    cap =
		__atomic_load_n(&topo__tune.pattern_simd_cap, __ATOMIC_RELAXED);

	if (v == 0) {
		__builtin_cpu_init();
		v = __builtin_cpu_is("amd") &&
			    __builtin_cpu_supports("avx512bw") &&
			    __builtin_cpu_supports("avx512vl")
			? 4
		    : __builtin_cpu_supports("avx2")   ? 3
		    : __builtin_cpu_supports("sse4.1") ? 2
						       : 1;
		__atomic_store_n(&known, v, __ATOMIC_RELAXED);
	}
	return cap > 0 && v > cap ? cap : v;
#else
	return 1;
#endif
}

/* static void name params { body }, four times where SIMD_CLONES: name
 * calls the widest copy the processor can run.  name is not inlined:
 * where it was, gcc 12 no longer vectorised the caller's own loops
 * ("unsupported data-type"). */
#if SIMD_CLONES
#define CLONED(name, params, args, body)                                       \
	static void name##_base params                                         \
	{                                                                      \
		body;                                                          \
	}                                                                      \
	__attribute__((target("sse4.1"))) static void name##_sse41 params      \
	{                                                                      \
		body;                                                          \
	}                                                                      \
	__attribute__((target("avx2"))) static void name##_avx2 params         \
	{                                                                      \
		body;                                                          \
	}                                                                      \
	__attribute__((target(                                                 \
	    "avx512f,avx512bw,avx512vl"))) static void name##_avx512 params    \
	{                                                                      \
		body;                                                          \
	}                                                                      \
	__attribute__((noinline)) static void name params                      \
	{                                                                      \
		int level_ = simd_level();                                     \
		if (level_ == 4)                                               \
			name##_avx512 args;                                    \
		else if (level_ == 3)                                          \
			name##_avx2 args;                                      \
		else if (level_ == 2)                                          \
			name##_sse41 args;                                     \
		else                                                           \
			name##_base args;                                      \
	}
#else
#define CLONED(name, params, args, body)                                       \
	static void name params                                                \
	{                                                                      \
		body;                                                          \
	}
#endif

/* splitmix64's finaliser: a bijection of 64-bit values (keys only, never
 * per element). */
static uint64_t mix64(uint64_t z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A cheap bijection of 32-bit values: xorshift, odd multiply, xorshift
 * (the first round of hash32 below). */
static inline uint32_t mix1(uint32_t x)
{
	x ^= x >> 16;
	x *= 0x7feb352du;
	x ^= x >> 15;
	return x;
}

/* mix1 and a second round: the "lowbias32" of Chris Wellons's
 * hash-prospector search, a bijection that mixes every bit into every
 * other. */
static inline uint32_t hash32(uint32_t x)
{
	x = mix1(x) * 0x846ca68bu;
	return x ^ x >> 16;
}

#define GOLDEN 0x9e3779b97f4a7c15ull
#define WEYL 0x9e3779b9u /* odd: w -> w WEYL is a bijection */

/* What the pattern depends on besides rank and offset. */
static uint64_t plan_seed(const struct topo_plan *p)
{
	return mix64(0x636f6c6c72756eull ^ ((uint64_t)p->params.op << 16 |
					    (uint64_t)p->params.type << 8 |
					    (uint64_t)p->params.redop));
}

/* Copy operations: 4-byte word w of member r is
 *     mix1(r xor mix1(s + (low 32 bits of w) x WEYL)),
 * s a key of the seed and of w's high 32 bits.  For a fixed word,
 * r -> value is a bijection, so no two members ever share a word; for a
 * fixed member, words of the same high half differ from one another. */
static uint32_t copy_key(uint64_t seed, uint32_t hi)
{
	return (uint32_t)mix64(seed ^ ((uint64_t)hi + 1) * GOLDEN);
}

CLONED(copy_words,
       (uint32_t s, uint32_t rank, uint32_t w0, uint32_t *out, size_t n),
       (s, rank, w0, out, n),
       EACH(n, out[i] = mix1(rank ^ mix1(s + (w0 + (uint32_t)i) * WEYL))))

/* Bytes are taken from each word little-end first, whatever the host, so
 * that a buffer's content does not depend on the machine. */
static void to_little_endian(uint32_t *w, size_t n)
{
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	for (size_t i = 0; i < n; i++)
		w[i] = __builtin_bswap32(w[i]);
#else
	(void)w;
	(void)n;
#endif
}

/* Scratch that every element type may be read from in place. */
union block {
	int64_t i[BLOCK];
	uint64_t u[BLOCK];
	uint32_t w[BLOCK];
	double d[BLOCK];
	unsigned char b[BLOCK * 8];
};

/* Bytes [off, off + len) of a copy operation's input of member r: blocks
 * of whole words that never cross a change of the words' high half. */
static void copy_fill(uint64_t seed, int32_t r, uint64_t off,
		      unsigned char *out, size_t len)
{
	union block blk;
	uint64_t w = off / 4;
	size_t skip = (size_t)(off % 4);

	while (len > 0) {
		uint32_t lo = (uint32_t)w;
		size_t n = (skip + len + 3) / 4, take;

		if (n > BLOCK)
			n = BLOCK;
		if (n > (size_t)(UINT32_MAX - lo) + 1)
			n = (size_t)(UINT32_MAX - lo) + 1;
		copy_words(copy_key(seed, (uint32_t)(w >> 32)), (uint32_t)r,
			   lo, blk.w, n);
		to_little_endian(blk.w, n);
		take = 4 * n - skip;
		if (take > len)
			take = len;
		memcpy(out, blk.b + skip, take);
		out += take;
		len -= take;
		w += n;
		skip = 0;
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

/* Half-width of the min/max range per type: integers within it are exact
 * in the type (and in float's 24-bit mantissa). */
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

/* The high 64 bits of a x b. */
static inline uint64_t mulhi64(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	__extension__ typedef unsigned __int128 u128;

	return (uint64_t)(((u128)a * b) >> 64);
#else
	uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	uint64_t mid = ah * bl + (al * bl >> 32);
	uint64_t mid2 = al * bh + (uint32_t)mid;

	return ah * bh + (mid >> 32) + (mid2 >> 32);
#endif
}

/*
 * Reduce inputs.  Element e of member r starts from
 *     h = mix1(a + (low 32 bits of e) x WEYL) xor b
 * (and, where 64 bits are needed, mix1(h xor c) above it), a, b and c
 * keys of the seed, the rank and e's high 32 bits.  Then, per operator:
 *   sum   -3..3 (signed and floating types), 0..3 (unsigned): from h's
 *         high bits, by multiplication (no division per element);
 *   prod  1, or 2 for ranks below 12 where r + e is divisible by 3; negated
 *         when h is odd (signed and floating types);
 *   min, max  h scaled onto the type's range [-lim, lim] ([0, lim]);
 *   band, bor  the and of four chained hashes (a bit set 1 time in 16),
 *         complemented for band;
 *   bxor  h itself.
 */
struct rkey {
	uint32_t a, b, c;
};

static struct rkey reduce_key(uint64_t seed, int32_t r, uint32_t hi)
{
	uint64_t k = mix64(seed ^ mix64((uint64_t)(uint32_t)r + 1) ^
			   ((uint64_t)hi + 1) * GOLDEN);
	uint64_t k2 = mix64(k);

	return (struct rkey){(uint32_t)k, (uint32_t)(k >> 32), (uint32_t)k2};
}

/* The 32-bit starting points of n elements from e0 (low half); inlined
 * into each copy of reduce_fill, which is CLONED whole. */
static inline __attribute__((always_inline)) void
reduce_h32(struct rkey k, uint32_t e0, uint32_t *h, size_t n)
{
	EACH(n, h[i] = mix1(k.a + (e0 + (uint32_t)i) * WEYL) ^ k.b);
}

/* 64 bits from h: h below, mix1(h xor c) above (inlined likewise). */
static inline __attribute__((always_inline)) void
widen(uint32_t c, const uint32_t *h, uint64_t *out, size_t n)
{
	EACH(n, out[i] = (uint64_t)mix1(h[i] ^ c) << 32 | h[i]);
}

/* Per operator, the values of n elements from e0: 32-bit two's complement
 * into v->w (returns 0), or, where 8-byte types need 64 bits (min, max and
 * the bitwise operators), 64-bit into v->u (returns 1).  tmp is scratch. */
static inline __attribute__((always_inline)) int
reduce_values(enum topo_type t, enum topo_redop op, int32_t r, uint64_t e0,
	      struct rkey k, union block *v, union block *tmp, size_t n)
{
	int sgn = is_signed(t) || is_float(t);
	int wide = type_bytes(t) == 8;
	uint32_t *restrict h = tmp->w, *restrict w = v->w;

	reduce_h32(k, (uint32_t)e0, h, n);
	switch (op) {
	case TOPO_SUM:
		/* 7 values from 16 high bits, without a division */
		if (sgn)
			EACH(n, w[i] = ((h[i] >> 16) * 7u >> 16) - 3u);
		else
			EACH(n, w[i] = h[i] >> 30);
		return 0;
	case TOPO_PROD: {
		/* At most 4 ranks (those below 12 with r + e divisible by 3)
		 * contribute a 2 to any element. */
		unsigned m = r < 12 ? (unsigned)(((uint64_t)r + e0) % 3) : 3;

		for (size_t i = 0; i < n; i++) {
			uint32_t x = m == 0 ? 2 : 1;

			w[i] = sgn && (h[i] & 1) ? 0u - x : x;
			if (m < 3)
				m = m == 2 ? 0 : m + 1;
		}
		return 0;
	}
	case TOPO_MIN:
	case TOPO_MAX: {
		uint64_t lim = minmax_limit(t);
		uint64_t span = sgn ? 2 * lim + 1 : lim + 1;
		uint64_t low = sgn ? lim : 0;

		if (!wide) {
			/* span < 2^32: the high half of h x span */
			uint32_t low32 = (uint32_t)low;

			EACH(n, w[i] = (uint32_t)((uint64_t)h[i] * span >> 32) -
				       low32);
			return 0;
		}
		widen(k.c, h, v->u, n);
		if (lim == UINT64_MAX)
			return 1; /* uint64: every value */
		EACH(n, v->u[i] = mulhi64(v->u[i], span) - low);
		return 1;
	}
	case TOPO_BAND:
	case TOPO_BOR:
		/* A bit is rare (1/16) in bor inputs and cleared as rarely in
		 * band inputs: across a few dozen members some bits survive
		 * either way. */
		for (size_t i = 0; i < n; i++) {
			uint32_t x = h[i];
			uint64_t rare = UINT64_MAX;

			for (uint32_t j = 0; j < 4; j++) {
				uint64_t up = wide ? hash32(x ^ k.c) : 0;

				rare &= up << 32 | x;
				x = hash32(x ^ (k.c + j + 1));
			}
			v->u[i] = op == TOPO_BOR ? rare : ~rare;
		}
		if (wide)
			return 1;
		EACH(n, w[i] = (uint32_t)v->u[i]);
		return 0;
	default: /* bxor, and anything unknown: arbitrary bits */
		if (wide) {
			widen(k.c, h, v->u, n);
			return 1;
		}
		EACH(n, w[i] = h[i]);
		return 0;
	}
}

/* The int32_t of the same bits. */
static inline int32_t s32(uint32_t x)
{
	int32_t y;

	memcpy(&y, &x, sizeof(y));
	return y;
}

static inline int64_t s64(uint64_t x)
{
	int64_t y;

	memcpy(&y, &x, sizeof(y));
	return y;
}

/* The n values of reduce_values (64-bit when is64) as elements of type t,
 * in host byte order (the plan reduces in host order): v's own bytes where
 * they already are (4-byte integers from 32-bit values, 8-byte ones from
 * 64-bit values), else converted into out. */
static inline __attribute__((always_inline)) const unsigned char *
store_values(enum topo_type t, int is64, const union block *v, union block *out,
	     size_t n)
{
	const uint32_t *w = v->w;
	const uint64_t *u = v->u;

	switch (t) {
	case TOPO_INT8:
	case TOPO_UINT8:
		EACH(n, out->b[i] = (uint8_t)w[i]);
		break;
	case TOPO_INT16:
	case TOPO_UINT16: {
		uint16_t *o = (uint16_t *)(void *)out->b;

		EACH(n, o[i] = (uint16_t)w[i]);
		break;
	}
	case TOPO_INT32:
	case TOPO_UINT32:
		return v->b;
	case TOPO_FLOAT: {
		float *o = (float *)(void *)out->b;

		EACH(n, o[i] = (float)s32(w[i]));
		break;
	}
	case TOPO_DOUBLE:
		if (is64)
			EACH(n, out->d[i] = (double)s64(u[i] >> 11));
		else
			EACH(n, out->d[i] = (double)s32(w[i]));
		break;
	default: /* 8-byte integers */
		if (is64)
			return v->b;
		EACH(n, out->u[i] = (uint64_t)(int64_t)s32(w[i]));
		break;
	}
	return out->b;
}

/* Bytes [off, off + len) of a reduction's input of member r: blocks of
 * whole elements that never cross a change of the elements' high half. */
static inline __attribute__((always_inline)) void
reduce_fill_body(uint64_t seed, enum topo_type t, enum topo_redop op, int32_t r,
		 uint64_t off, unsigned char *out, size_t len)
{
	size_t ts = type_bytes(t), skip = (size_t)(off % ts);
	uint64_t e = off / ts;
	uint32_t hi = (uint32_t)(e >> 32);
	struct rkey k = reduce_key(seed, r, hi);
	union block v, tmp;

	while (len > 0) {
		uint32_t lo = (uint32_t)e;
		size_t n = (skip + len + ts - 1) / ts, take;
		const unsigned char *src;
		int is64;

		if (n > BLOCK)
			n = BLOCK;
		if (n > (size_t)(UINT32_MAX - lo) + 1)
			n = (size_t)(UINT32_MAX - lo) + 1;
		if ((uint32_t)(e >> 32) != hi) {
			hi = (uint32_t)(e >> 32);
			k = reduce_key(seed, r, hi);
		}
		is64 = reduce_values(t, op, r, e, k, &v, &tmp, n);
		src = store_values(t, is64, &v, &tmp, n);
		take = n * ts - skip;
		if (take > len)
			take = len;
		memcpy(out, src + skip, take);
		out += take;
		len -= take;
		e += n;
		skip = 0;
	}
}

/* reduce_fill_body in each copy of the loops, the values' and the stores'
 * loops with it (inlined). */
CLONED(reduce_fill,
       (uint64_t seed, enum topo_type t, enum topo_redop op, int32_t r,
	uint64_t off, unsigned char *out, size_t len),
       (seed, t, op, r, off, out, len),
       reduce_fill_body(seed, t, op, r, off, out, len))

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

int topo__pattern_simd(void)
{
	return simd_level();
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

/* min and max, the same in every type */
#define MINMAX_CASES                                                           \
	case TOPO_MIN:                                                         \
		EACH_CASE(count, acc[i] = src[i] < acc[i] ? src[i] : acc[i]);  \
		break;                                                         \
	case TOPO_MAX:                                                         \
		EACH_CASE(count, acc[i] = src[i] > acc[i] ? src[i] : acc[i]);  \
		break;

#define INT_COMBINE(name, T, U)                                                \
	static void name(enum topo_redop op, T *restrict acc,                  \
			 const T *restrict src, size_t count)                  \
	{                                                                      \
		switch (op) {                                                  \
		case TOPO_SUM:                                                 \
			EACH_CASE(count, acc[i] = (T)((U)acc[i] + (U)src[i])); \
			break;                                                 \
		case TOPO_PROD:                                                \
			EACH_CASE(count, acc[i] = (T)((U)acc[i] * (U)src[i])); \
			break;                                                 \
			MINMAX_CASES                                           \
		case TOPO_BAND:                                                \
			EACH_CASE(count, acc[i] = (T)(acc[i] & src[i]));       \
			break;                                                 \
		case TOPO_BOR:                                                 \
			EACH_CASE(count, acc[i] = (T)(acc[i] | src[i]));       \
			break;                                                 \
		default:                                                       \
			EACH_CASE(count, acc[i] = (T)(acc[i] ^ src[i]));       \
			break;                                                 \
		}                                                              \
	}

/* Bitwise operators do not exist on floating types (the plan refuses
 * them); the accumulator is then left as it is. */
#define FLT_COMBINE(name, T)                                                   \
	static void name(enum topo_redop op, T *restrict acc,                  \
			 const T *restrict src, size_t count)                  \
	{                                                                      \
		switch (op) {                                                  \
		case TOPO_SUM:                                                 \
			EACH_CASE(count, acc[i] = acc[i] + src[i]);            \
			break;                                                 \
		case TOPO_PROD:                                                \
			EACH_CASE(count, acc[i] = acc[i] * src[i]);            \
			break;                                                 \
			MINMAX_CASES                                           \
		default:                                                       \
			break;                                                 \
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
	/* reduce, allreduce and reduce-scatter: the reduction of every
	 * member's input, computed once for all members (NULL: per member),
	 * or once for all of a run's iterations (kept: time->keep's) */
	unsigned char *reduced;
	bool kept;
	/* [n]: 1 where the member's SEND was found intact while the
	 * reduction was computed (reduce_all), so check_send need not read
	 * it again; NULL: every member's is checked there */
	unsigned char *sendok;
	/* a bcast's: the root's input, which every member must hold (NULL:
	 * made again for each member) */
	unsigned char *expect;
	topo__verify_buf_fn *buf;
	void *ctx;
	topo__verify_report_fn *report;
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

static int32_t endpoint(const struct topo_plan *p, int32_t r)
{
	if (p->t != NULL && p->t->g != NULL && r >= 0 && r < p->t->g->size)
		return p->t->g->members[r];
	return r;
}

/* Index of the first byte where a and b differ (they do): whole CHUNKs
 * passed over with memcmp, then byte by byte. */
static size_t first_diff(const unsigned char *a, const unsigned char *b,
			 size_t len)
{
	size_t i = 0;

	while (len - i > CHUNK && memcmp(a + i, b + i, CHUNK) == 0)
		i += CHUNK;
	while (i < len && a[i] == b[i])
		i++;
	return i;
}

/* Where member src's input bytes [soff, soff + len) are already found
 * right: its SEND, when copy_sends found all of it equal to its input and
 * it is that long; else a bcast's c->expect; else NULL (make them). */
static const unsigned char *copy_source(const struct check *c, int32_t src,
					int64_t soff, int64_t len)
{
	if (c->sendok != NULL && c->sendok[src] &&
	    topo__bufsize(c->p, TOPO__SEND, src) >= soff + len)
		return c->buf(c->ctx, src, TOPO__SEND) + soff;
	if (c->expect != NULL)
		return c->expect + soff;
	return NULL;
}

/* The first byte of got (len bytes) that differs from member src's input
 * bytes [soff, soff + len), made again CHUNK bytes at a time, or -1 where
 * none does; want: scratch, left holding the input's chunk of that byte
 * (at index % CHUNK). */
static int64_t input_diff(const struct check *c, const unsigned char *got,
			  int32_t src, int64_t soff, int64_t len,
			  union scratch *want)
{
	for (int64_t i = 0; i < len; i += CHUNK) {
		size_t n = (size_t)(len - i < CHUNK ? len - i : CHUNK);

		input_range(c->p, src, (uint64_t)(soff + i), want->b, n);
		if (memcmp(got + i, want->b, n) != 0)
			return i + (int64_t)first_diff(got + i, want->b, n);
	}
	return -1;
}

/* Compares member r's RECV bytes [off, off + len) with member src's input
 * bytes [soff, soff + len): with memcmp against bytes already found right
 * (copy_source), else against the input made again.  Returns 1 (and
 * reports) on a difference.  block: where RECV byte off lies in src's
 * block, for the report, or -1 where the buffer is not made of blocks. */
static int check_copy(struct check *c, int32_t r, int64_t off, int32_t src,
		      int64_t soff, int64_t len, int64_t block)
{
	const unsigned char *got = c->buf(c->ctx, r, TOPO__RECV) + off;
	const unsigned char *right = copy_source(c, src, soff, len);
	int64_t d, at;
	unsigned char want;

	if (right != NULL) {
		if (memcmp(got, right, (size_t)len) == 0)
			return 0;
		d = (int64_t)first_diff(got, right, (size_t)len);
		want = right[d];
	} else {
		d = input_diff(c, got, src, soff, len, &c->want);
		if (d < 0)
			return 0;
		want = c->want.b[d % CHUNK];
	}
	at = off + d;
	if (block >= 0)
		emit(c, r, "wrong data",
		     "receive buffer byte %" PRId64 " (byte %" PRId64
		     " of endpoint %d's block): got 0x%02x, want 0x%02x",
		     at, block + d, (int)endpoint(c->p, src), got[d], want);
	else
		emit(c, r, "wrong data",
		     "receive buffer byte %" PRId64 ": got 0x%02x, want 0x%02x",
		     at, got[d], want);
	return 1;
}

/* The reduction of every member's input bytes [off, off + n) (n at most
 * CHUNK), combined in rank order, into want (tmp: scratch).  With sendok,
 * each member's SEND bytes [off, off + n) are compared with its input on
 * the way (the input is at hand), and its sendok cleared where they
 * differ; a member whose sendok is 0 is not looked at.  Without fold
 * (the reduction is kept from an earlier iteration) only those SENDs are
 * compared, and want is left as it was. */
static void reduce_chunk(const struct check *c, int64_t off, size_t n,
			 union scratch *want, union scratch *tmp,
			 unsigned char *sendok, bool fold)
{
	const struct topo_plan *p = c->p;
	enum topo_type t = p->params.type;
	size_t ts = type_bytes(t);

	for (int32_t m = 0; m < p->n; m++) {
		union scratch *in = m == 0 && fold ? want : tmp;

		if (!fold &&
		    (sendok == NULL || !__atomic_load_n(&sendok[m],
							 __ATOMIC_RELAXED)))
			continue;
		input_range(p, m, (uint64_t)off, in->b, n);
		if (sendok != NULL &&
		    __atomic_load_n(&sendok[m], __ATOMIC_RELAXED) &&
		    memcmp(c->buf(c->ctx, m, TOPO__SEND) + off, in->b, n) != 0)
			__atomic_store_n(&sendok[m], 0, __ATOMIC_RELAXED);
		if (m > 0 && fold)
			combine(t, p->params.redop, want, tmp, n - n % ts);
	}
}

/* Member r's RECV [roff, roff + len) against the reduction of every
 * member's input bytes [off, off + len): computed here, CHUNK bytes at a
 * time, or taken from c->reduced. */
static int check_reduce(struct check *c, int32_t r, int64_t roff, int64_t off,
			int64_t len)
{
	const struct topo_plan *p = c->p;
	const unsigned char *got = c->buf(c->ctx, r, TOPO__RECV) + roff;
	size_t ts = type_bytes(p->params.type);

	for (int64_t i = 0; i < len; i += CHUNK) {
		size_t n = (size_t)(len - i < CHUNK ? len - i : CHUNK);
		const unsigned char *want;

		if (c->reduced != NULL) {
			want = c->reduced + off + i;
		} else {
			reduce_chunk(c, off + i, n, &c->want, &c->tmp, NULL,
				     true);
			want = c->want.b;
		}
		if (memcmp(got + i, want, n) != 0) {
			size_t d = first_diff(got + i, want, n);
			int64_t at = roff + i + (int64_t)d;

			emit(c, r, "wrong data",
			     "receive buffer byte %" PRId64 " (element %" PRId64
			     "): got 0x%02x, want 0x%02x",
			     at, at / (int64_t)ts, got[i + (int64_t)d],
			     want[d]);
			return 1;
		}
	}
	return 0;
}

/* fn(arg, k) for every k in [0, ntask): through time->par when share,
 * else one after the other on this thread until *late (which fn sets at
 * the deadline).  Sets time->timed_out when the tasks stopped early. */
static void run_tasks(struct topo__verify_time *time, int share, int64_t ntask,
		      void (*fn)(void *arg, int64_t k), void *arg,
		      const int *late)
{
	int stopped = 0;

	if (share && time->par != NULL) {
		stopped = time->par(time->pctx, ntask, fn, arg) != 0;
	} else {
		for (int64_t k = 0;
		     k < ntask && !__atomic_load_n(late, __ATOMIC_RELAXED); k++)
			fn(arg, k);
	}
	if (stopped || __atomic_load_n(late, __ATOMIC_RELAXED))
		time->timed_out = true;
}

/* Bytes checked in all (a reduction: members times the bytes of each's
 * input) from which the verification is worth sharing between threads (a
 * test lowers it). */
/* (the default of topo__tune.verify_par_min: tune.c) */

/*
 * Work over members cut into tasks for time->par: runs of
 * topo__tune.verify_member_task whole members, or, for a few members with a
 * buffer of topo__tune.verify_piece bytes or more to check, pieces of that
 * many bytes of each member's (one task for a member with fewer), so that
 * 16 members' 1 MiB, or 2 members' 16 MiB, are checked on every thread
 * and not one member to a thread.  over >= 0: the one member `over`
 * alone (a bcast's or a scatter's root).
 */
/* (the default of topo__tune.verify_piece: tune.c) */

/* Members from which pieces are not cut (their table would cost more than
 * it shares). */
#define PIECE_MEMBERS 4096

struct cut {
	int32_t n;	/* members, or 1 with over */
	int32_t over;	/* the one member, or -1 */
	int64_t per;	/* members per task; 0: pieces */
	int64_t piece;	/* bytes per piece */
	int64_t *first; /* pieces: member i's tasks [first[i], first[i + 1]) */
	int64_t ntask;
	int64_t bytes; /* in all */
};

/* Cuts the members' len(c, mine, r) bytes; returns 0, or -1 without
 * memory for the pieces' table. */
static int cut_make(struct cut *u, const struct check *c, const uint8_t *mine,
		    int32_t over,
		    int64_t (*len)(const struct check *c, const uint8_t *mine,
				   int32_t r))
{
	int64_t per = topo__tune.verify_member_task > 0
			  ? topo__tune.verify_member_task
			  : 1;
	int64_t piece = topo__tune.verify_piece - topo__tune.verify_piece % 64,
		k = 0, most = 0;

	if (piece < 64)
		piece = 64; /* a multiple of every element size */
	u->n = over >= 0 ? 1 : c->p->n;
	u->over = over;
	u->per = per;
	u->piece = piece;
	u->first = NULL;
	u->ntask = ((int64_t)u->n + per - 1) / per;
	u->bytes = 0;
	if (u->n > PIECE_MEMBERS)
		return 0;
	for (int32_t i = 0; i < u->n; i++) {
		int64_t l = len(c, mine, over >= 0 ? over : i);

		u->bytes += l;
		most = l > most ? l : most;
	}
	if (most < piece)
		return 0; /* whole members */
	u->first = topo__malloc(((size_t)u->n + 1) * sizeof(*u->first));
	if (u->first == NULL)
		return -1;
	for (int32_t i = 0; i < u->n; i++) {
		int64_t l = len(c, mine, over >= 0 ? over : i);

		u->first[i] = k;
		k += l > piece ? (l + piece - 1) / piece : 1;
	}
	u->first[u->n] = k;
	u->per = 0;
	u->ntask = k;
	return 0;
}

/* Worth sharing: pieces from topo__tune.verify_par_min bytes in all, runs of
 * whole members from four tasks. */
static int cut_share(const struct cut *u)
{
	return u->per == 0
		   ? u->ntask >= 2 && u->bytes >= topo__tune.verify_par_min
		   : u->ntask >= 4;
}

/* Task k: members [*r0, *r1), or bytes [*lo, *hi) of member *r0 (*r1 =
 * *r0 + 1) when the cut is in pieces (else *lo = 0, *hi = -1: whole). */
static void cut_task(const struct cut *u, int64_t k, int32_t *r0, int32_t *r1,
		     int64_t *lo, int64_t *hi)
{
	int32_t a = 0, b = u->n - 1;

	*lo = 0;
	*hi = -1;
	if (u->per > 0) {
		*r0 = (int32_t)(k * u->per);
		*r1 = u->n - *r0 > u->per ? *r0 + (int32_t)u->per : u->n;
	} else {
		while (a < b) { /* the last member whose first task <= k */
			int32_t m = a + (b - a + 1) / 2;

			if (u->first[m] <= k)
				a = m;
			else
				b = m - 1;
		}
		*r0 = a;
		*r1 = a + 1;
		*lo = (k - u->first[a]) * u->piece;
		*hi = *lo + u->piece;
	}
	if (u->over >= 0) {
		*r0 = u->over;
		*r1 = u->over + 1;
	}
}

/* reduce_all's work, cut into tasks of CHUNK positions each. */
struct reduce_job {
	const struct check *c;
	int64_t len;
	bool fold; /* false: the reduction is kept, SENDs only */
	double deadline;
	int late; /* __atomic: a task found the deadline passed */
};

static void reduce_task(void *arg, int64_t k)
{
	struct reduce_job *j = arg;
	int64_t off = k * CHUNK;
	size_t n = (size_t)(j->len - off < CHUNK ? j->len - off : CHUNK);
	union scratch want, tmp;

	if (j->deadline > 0 && topo__now() >= j->deadline) {
		__atomic_store_n(&j->late, 1, __ATOMIC_RELAXED);
		return;
	}
	reduce_chunk(j->c, off, n, &want, &tmp, j->c->sendok, j->fold);
	if (j->fold)
		memcpy(j->c->reduced + off, want.b, n);
}

/*
 * The reduction the root of a reduce (B bytes), or every member of an
 * allreduce (B bytes) or a reduce-scatter (n blocks of B), is checked
 * against, computed once: c->reduced, or NULL without the memory (each
 * member's check then computes its part).  A process of an MPI run
 * (time->mine) that does not hold a reduce's root leaves it to the one
 * that does.
 *
 * Every member's input is made here anyway, so the members' SEND buffers
 * are checked on the way (c->sendok), by every thread when time->par
 * shares the CHUNK-position tasks.  Stops at the deadline
 * (time->timed_out).
 *
 * The reduction is the same in every iteration of a run (the inputs are
 * a function of the plan alone), so with time->keep the first
 * verification that completes keeps it, and the later ones compare the
 * RECVs with it and only make the inputs again to check the SENDs: a
 * large part of a large verification otherwise goes to the kernel
 * clearing the pages of a new reduction and to combining it
 * (docs/CONSTANTS.md).
 */
static void reduce_all(struct check *c, struct topo__verify_time *time)
{
	const struct topo_plan *p = c->p;
	int64_t len = (int64_t)p->params.bytes, ntask;
	struct topo__verify_keep *keep = time->keep;
	struct reduce_job job;

	c->reduced = NULL;
	c->kept = false;
	c->sendok = NULL;
	if (p->params.op == TOPO_OP_REDUCE_SCATTER)
		len *= p->n;
	else if (p->params.op == TOPO_OP_REDUCE)
		len = time->mine == NULL || time->mine[p->root] ? len : 0;
	else if (p->params.op != TOPO_OP_ALLREDUCE)
		return;
	if (len <= 0 || p->n < 2)
		return;
	if (keep != NULL && keep->reduced != NULL && keep->len == len) {
		c->reduced = keep->reduced;
		c->kept = true;
	} else {
		c->reduced = topo__malloc((size_t)len);
		if (c->reduced == NULL)
			return;
	}
	c->sendok = topo__malloc((size_t)p->n);
	if (c->sendok != NULL)
		for (int32_t m = 0; m < p->n; m++)
			c->sendok[m] = (time->mine == NULL || time->mine[m]) &&
				       topo__bufsize(p, TOPO__SEND, m) == len;
	/* Kept, and no flags to set: check_send makes each input again. */
	if (c->kept && c->sendok == NULL)
		return;
	job.c = c;
	job.len = len;
	job.fold = !c->kept;
	job.deadline = time->deadline;
	job.late = 0;
	ntask = (len + CHUNK - 1) / CHUNK;
	run_tasks(time,
		  ntask > 1 && (int64_t)p->n * len >= topo__tune.verify_par_min,
		  ntask, reduce_task, &job, &job.late);
	/* A reduction the deadline cut short is not kept. */
	if (!c->kept && keep != NULL && !time->timed_out) {
		topo__free(keep->reduced);
		keep->reduced = c->reduced;
		keep->len = len;
		c->kept = true;
	}
}

void topo__verify_keep_free(struct topo__verify_keep *keep)
{
	if (keep == NULL)
		return;
	topo__free(keep->reduced);
	keep->reduced = NULL;
	keep->len = 0;
}

/* The bytes of member r's RECV that the operation defines: its result. */
static int64_t recv_need(const struct topo_plan *p, int32_t r)
{
	int64_t nb = (int64_t)p->params.bytes;

	switch (p->params.op) {
	case TOPO_OP_BCAST:
	case TOPO_OP_SCATTER:
	case TOPO_OP_ALLREDUCE:
	case TOPO_OP_REDUCE_SCATTER:
		return nb;
	case TOPO_OP_ALLGATHER:
	case TOPO_OP_ALLTOALL:
		return nb * p->n;
	case TOPO_OP_GATHER: /* only the root holds a result */
		return r == p->root ? nb * p->n : 0;
	case TOPO_OP_REDUCE:
		return r == p->root ? nb : 0;
	default: /* barrier: no data (its order is checked apart) */
		return 0;
	}
}

/* Bytes [lo, hi) of member r's RECV (hi < 0: to the end of its result),
 * per the operation's definition.  Returns 1 when an error was reported. */
static int check_recv(struct check *c, int32_t r, int64_t lo, int64_t hi)
{
	const struct topo_plan *p = c->p;
	int64_t nb = (int64_t)p->params.bytes, need = recv_need(p, r), have;
	int32_t root = p->root;

	if (need == 0)
		return 0;
	have = topo__bufsize(p, TOPO__RECV, r);
	if (have < need) {
		emit(c, r, "wrong data",
		     "receive buffer holds %" PRId64 " bytes, %" PRId64
		     " expected",
		     have, need);
		return 1;
	}
	if (hi < 0 || hi > need)
		hi = need;
	if (lo >= hi)
		return 0;
	switch (p->params.op) {
	case TOPO_OP_BCAST:
		return check_copy(c, r, lo, root, lo, hi - lo, -1);
	case TOPO_OP_SCATTER:
		return check_copy(c, r, lo, root, nb * r + lo, hi - lo, -1);
	case TOPO_OP_GATHER:
	case TOPO_OP_ALLGATHER:
	case TOPO_OP_ALLTOALL:
		/* Block b: what member b sent to r (alltoall: its block r). */
		for (int64_t b = lo / nb; b * nb < hi; b++) {
			int64_t from = lo > b * nb ? lo - b * nb : 0;
			int64_t to = hi < (b + 1) * nb ? hi - b * nb : nb;
			int64_t soff = p->params.op == TOPO_OP_ALLTOALL
					   ? nb * r + from
					   : from;

			if (check_copy(c, r, b * nb + from, (int32_t)b, soff,
				       to - from, from))
				return 1;
		}
		return 0;
	case TOPO_OP_REDUCE_SCATTER:
		return check_reduce(c, r, lo, nb * r + lo, hi - lo);
	default: /* reduce, allreduce */
		return check_reduce(c, r, lo, lo, hi - lo);
	}
}

/* Member r's SEND must still hold its input. */
static void check_send(struct check *c, int32_t r)
{
	int64_t len = topo__bufsize(c->p, TOPO__SEND, r), at;

	if (len <= 0 || (c->sendok != NULL && c->sendok[r]))
		return;
	at = input_diff(c, c->buf(c->ctx, r, TOPO__SEND), r, 0, len, &c->want);
	if (at >= 0)
		emit(c, r, "wrong data",
		     "send buffer changed at byte %" PRId64
		     ": got 0x%02x, want 0x%02x",
		     at, c->buf(c->ctx, r, TOPO__SEND)[at],
		     c->want.b[at % CHUNK]);
}

/*
 * A copy operation's sources: the members whose input some member's RECV
 * must hold.  Their SEND buffers are compared with their inputs first
 * (c->sendok), so that each RECV can then be compared with the bytes of a
 * SEND found right (check_copy), with memcmp, instead of with the input
 * made once more for every copy of it.  A byte equal to one found equal to
 * the input is the input's, so the check is the same; a SEND found wrong
 * is left to check_send to report, and the RECVs copied from it are
 * compared with the input made again.  The inputs are then made once in
 * all: for 16 members' scatter of 1 MiB blocks, 16 MiB instead of 32 (the
 * root's send buffer, then every block again).
 */
static int copies_from(const struct topo_plan *p, int32_t m)
{
	switch (p->params.op) {
	case TOPO_OP_BCAST:
	case TOPO_OP_SCATTER:
		return m == p->root;
	case TOPO_OP_GATHER:
	case TOPO_OP_ALLGATHER:
	case TOPO_OP_ALLTOALL:
		return 1;
	default:
		return 0;
	}
}

/* The bytes of member r's SEND that copy_sends checks: all of a source's
 * that this process holds. */
static int64_t source_len(const struct check *c, const uint8_t *mine, int32_t r)
{
	if (!copies_from(c->p, r) || (mine != NULL && !mine[r]))
		return 0;
	return topo__bufsize(c->p, TOPO__SEND, r);
}

struct send_job {
	const struct check *c;
	const uint8_t *mine;
	struct cut cut;
	double deadline;
	int late; /* __atomic: a task found the deadline passed */
};

/* Bytes [lo, hi) of member r's SEND (hi < 0: all) compared with its
 * input, if r is a source this process holds: a difference clears
 * sendok[r], which copy_sends set for r.  Returns 1, checking nothing,
 * once the deadline has passed (the clock read before each piece or large
 * buffer, or every 256 members). */
static int check_source(struct send_job *j, int32_t r, int64_t lo, int64_t hi,
			union scratch *want)
{
	const struct check *c = j->c;
	int64_t len = source_len(c, j->mine, r);

	if (hi < 0 || hi > len)
		hi = len;
	if (lo >= hi)
		return 0;
	if (j->deadline > 0 &&
	    (r % 256 == 0 || hi - lo >= (1 << 18) ||
	     c->p->params.bytes >= (1u << 20)) &&
	    topo__now() >= j->deadline) {
		__atomic_store_n(&j->late, 1, __ATOMIC_RELAXED);
		return 1;
	}
	if (input_diff(c, c->buf(c->ctx, r, TOPO__SEND) + lo, r, lo, hi - lo,
		       want) >= 0)
		__atomic_store_n(&c->sendok[r], 0, __ATOMIC_RELAXED);
	return 0;
}

/* The sources among task k's members, or its piece of one. */
static void send_task(void *arg, int64_t k)
{
	struct send_job *j = arg;
	int32_t r0, r1;
	int64_t lo, hi;
	union scratch want;

	cut_task(&j->cut, k, &r0, &r1, &lo, &hi);
	for (int32_t r = r0; r < r1; r++)
		if (check_source(j, r, lo, hi, &want))
			return;
}

static void copy_sends(struct check *c, struct topo__verify_time *time)
{
	const struct topo_plan *p = c->p;
	int one =
	    p->params.op == TOPO_OP_BCAST || p->params.op == TOPO_OP_SCATTER;
	struct send_job job;

	if (!copies_from(p, p->root) || p->params.bytes == 0)
		return;
	c->sendok = topo__calloc((size_t)p->n, 1);
	if (c->sendok == NULL)
		return; /* every RECV is compared with its input made again */
	job.c = c;
	job.mine = time->mine;
	job.deadline = time->deadline;
	job.late = 0;
	/* Found right unless a task finds otherwise, or does not run. */
	for (int32_t r = one ? p->root : 0; r < (one ? p->root + 1 : p->n); r++)
		c->sendok[r] = source_len(c, time->mine, r) > 0;
	if (cut_make(&job.cut, c, time->mine, one ? p->root : -1, source_len) !=
	    0) {
		memset(c->sendok, 0, (size_t)p->n);
		return;
	}
	if (one && !cut_share(&job.cut)) { /* this thread, no hand-off */
		if (check_source(&job, p->root, 0, -1, &c->want))
			time->timed_out = true;
	} else {
		run_tasks(time, cut_share(&job.cut), job.cut.ntask, send_task,
			  &job, &job.late);
	}
	topo__free(job.cut.first);
	/* A task that did not run left its sources unchecked: none counts
	 * (the check has stopped anyway). */
	if (time->timed_out)
		memset(c->sendok, 0, (size_t)p->n);
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

/* Member r's checks, as the operation defines them, with the receipt
 * counters' tally (NULL: every counter right). */
static void check_member(struct check *c, int32_t r, const struct tally *tally)
{
	int missing = 0;

	if (tally != NULL) {
		report_tally(c, r, &tally[r]);
		missing = tally[r].short_want > 0;
	}
	/* A member that receives from one source and missed it holds
	 * poison: "undelivered" already says why.  The other operations'
	 * members receive from many, and where their data goes wrong says
	 * from whom. */
	if (!missing || (c->p->params.op != TOPO_OP_BCAST &&
			 c->p->params.op != TOPO_OP_SCATTER))
		check_recv(c, r, 0, -1);
	check_send(c, r);
}

/*
 * The members' checks shared between threads (time->par): tasks of
 * topo__tune.verify_member_task members, or pieces of a few members' receive
 * buffers (struct cut), each checking its own without reporting, in a
 * check of its own (its scratch, its count).  A task that finds an error,
 * or does not run, leaves its members to the loop in topo__verify_until,
 * which checks them again and reports in member order as ever.  A correct
 * run, the usual case, is thus checked on every thread; 8,388,608 members
 * of a bcast took a quarter of a second on one.
 */
/* (the default of topo__tune.verify_member_task: tune.c) */

/* The bytes of member r's RECV that its check reads: its result. */
static int64_t member_len(const struct check *c, const uint8_t *mine, int32_t r)
{
	return mine != NULL && !mine[r] ? 0 : recv_need(c->p, r);
}

struct member_job {
	const struct check *c;
	struct topo__verify_time *time; /* progress: the caller's only */
	pthread_t caller;
	struct cut cut;
	uint8_t *dirty; /* [tasks]: 1 = check again (errors, or not run) */
	int64_t done;	/* __atomic: members checked */
	int late;	/* __atomic: a task found the deadline passed */
};

static void member_task(void *arg, int64_t k)
{
	struct member_job *j = arg;
	struct topo__verify_time *time = j->time;
	int32_t r0, r1;
	int64_t lo, hi, done;
	struct check *c;

	cut_task(&j->cut, k, &r0, &r1, &lo, &hi);
	if (time->deadline > 0 && topo__now() >= time->deadline) {
		__atomic_store_n(&j->late, 1, __ATOMIC_RELAXED);
		return; /* dirty[k] stays 1 */
	}
	/* The scratch (two CHUNKs) is the task's own. */
	c = topo__malloc(sizeof(*c));
	if (c == NULL)
		return;
	*c = *j->c;
	c->report = NULL;
	c->count = 0;
	for (int32_t r = r0; r < r1; r++) {
		if (time->mine != NULL && !time->mine[r])
			continue;
		if (hi < 0) {
			check_member(c, r, NULL);
		} else { /* a piece; the first also checks the SEND */
			check_recv(c, r, lo, hi);
			if (lo == 0)
				check_send(c, r);
		}
	}
	j->dirty[k] = c->count > 0;
	topo__free(c);
	if (lo > 0)
		return; /* the member counted with its first piece */
	done = __atomic_add_fetch(&j->done, r1 - r0, __ATOMIC_RELAXED);
	if (time->progress != NULL && pthread_equal(pthread_self(), j->caller)) {
		double t = topo__now();

		if (t >= time->next) {
			time->next = t + TOPO__PROGRESS_EVERY;
			time->progress(
			    time->ctx, "verifying", time->base + done,
			    time->total > 0 ? time->total : j->c->p->n);
		}
	}
}

/* Runs the member tasks (*cut: how they are cut); returns dirty[] (NULL:
 * no sharing, check every member in the loop) and sets time->timed_out at
 * the deadline. */
static uint8_t *share_members(const struct check *c,
			      struct topo__verify_time *time, struct cut *cut)
{
	struct member_job job;

	if (time->par == NULL ||
	    cut_make(&job.cut, c, time->mine, -1, member_len) != 0)
		return NULL;
	if (!cut_share(&job.cut)) {
		topo__free(job.cut.first);
		return NULL;
	}
	job.dirty = topo__malloc((size_t)job.cut.ntask);
	if (job.dirty == NULL) {
		topo__free(job.cut.first);
		return NULL;
	}
	memset(job.dirty, 1, (size_t)job.cut.ntask);
	job.c = c;
	job.time = time;
	job.caller = pthread_self();
	job.done = 0;
	job.late = 0;
	if (time->par(time->pctx, job.cut.ntask, member_task, &job) != 0 ||
	    __atomic_load_n(&job.late, __ATOMIC_RELAXED))
		time->timed_out = true;
	*cut = job.cut;
	return job.dirty;
}

/* Member r, and the members after it up to *next, found right by the
 * shared tasks (dirty, cut: share_members'). */
static int found_right(const struct cut *u, const uint8_t *dirty, int32_t r,
		       int32_t *next)
{
	if (u->per > 0) {
		int64_t k = r / u->per;

		*next = (int32_t)((k + 1) * u->per < u->n ? (k + 1) * u->per
							  : u->n);
		return !dirty[k];
	}
	*next = r + 1;
	for (int64_t k = u->first[r]; k < u->first[r + 1]; k++)
		if (dirty[k])
			return 0;
	return 1;
}

int64_t topo__verify(const struct topo_plan *p, topo__verify_buf_fn *buf,
		     void *ctx, const int64_t *slot_count,
		     topo__verify_report_fn *report, void *ctx2, int64_t max)
{
	struct topo__verify_time none = {0,    NULL, NULL, 0,    false, 0,
					 0,    NULL, NULL, NULL, NULL};

	return topo__verify_until(p, buf, ctx, slot_count, report, ctx2, max,
				  &none);
}

int64_t topo__verify_until(const struct topo_plan *p,
			   topo__verify_buf_fn *buf, void *ctx,
			   const int64_t *slot_count,
			   topo__verify_report_fn *report, void *ctx2,
			   int64_t max, struct topo__verify_time *time)
{
	struct check chk, *c = &chk;
	struct tally *tally = NULL;
	int64_t bad = 0, total;
	uint8_t *dirty = NULL;
	struct cut cut = {0, -1, 1, 0, NULL, 0, 0};

	c->p = p;
	c->buf = buf;
	c->ctx = ctx;
	c->report = report;
	c->ctx2 = ctx2;
	c->max = max;
	c->count = 0;
	c->reduced = NULL;
	c->kept = false;
	c->sendok = NULL;
	c->expect = NULL;

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
	copy_sends(c, time);
	/* A bcast's root SEND found wrong: its input made once for all */
	if (p->params.op == TOPO_OP_BCAST && p->params.bytes > 0 && p->n > 1 &&
	    copy_source(c, p->root, 0, (int64_t)p->params.bytes) == NULL &&
	    !time->timed_out) {
		c->expect = topo__malloc(p->params.bytes);
		if (c->expect != NULL)
			input_range(p, p->root, 0, c->expect, p->params.bytes);
	}
	/* Shared between threads when every counter is right: an error
	 * anywhere is then looked for again below, and reported. */
	if (tally == NULL && bad == 0)
		dirty = share_members(c, time, &cut);
	for (int32_t r = 0, next; r < p->n && !time->timed_out; r++) {
		/* What the threads found right is right. */
		if (dirty != NULL && found_right(&cut, dirty, r, &next)) {
			r = next - 1;
			continue;
		}
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
		check_member(c, r, tally);
	}
	total = c->count;
	if (!c->kept)
		topo__free(c->reduced);
	topo__free(c->sendok);
	topo__free(c->expect);
	topo__free(tally);
	topo__free(dirty);
	topo__free(cut.first);
	return total;
}

int64_t topo__verify_barrier(const struct topo_plan *p, const int64_t *stamp,
			     topo__verify_report_fn *report, void *ctx2,
			     int64_t max)
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
