/*
 * pset.c - sets of integers as sorted runs of periodic patterns (pset.h).
 *
 * A run [lo, hi) holds every integer (pat NULL) or those x whose bit
 * (x + off) mod period is set in a shared, reference-counted pattern.  A
 * pattern is anchored at x = 0, so two runs of one pattern and one off
 * continue each other, and a result computed for one stretch holds for any
 * other: the sweeps below remember the last one and reuse it.
 *
 * Combining patterns of periods p and q gives period lcm(p, q).  Up to
 * topo__tune.pset.cap bits the result stays periodic (reduced to its
 * smallest period by the primes of the lcm); beyond, or when the lcm
 * exceeds the stretch being combined, the result is written literally over
 * that stretch: a pattern whose period is the stretch.  Literal stretches
 * are the one place where cost follows the stretch's length (1/64 of it,
 * word by word, or its members when they are sparse) rather than the spec.
 *
 * Costs, for sets of r runs in total and results of m members:
 *   union of progressions: O(k log k) for k progressions, plus pattern
 *     work when more than one residue class is involved;
 *   and, chain (the spec's terms): O(r log r) events, and per stretch
 *     between events the patterns of the sets above the last one that holds
 *     the whole stretch;
 *   count O(r + pattern words), members O(m + r).
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include "pset.h"

#include <stdlib.h>
#include <string.h>

typedef uint64_t word;

struct pset_pat {
	int64_t period;	 /* >= 1 */
	int64_t xperiod; /* bits stored: a multiple of period, >= 128 */
	int64_t ones;	 /* members in one period, 0 < ones < period */
	long refs;
	word w[]; /* nwords(xperiod); bit i = bit i mod period */
};

/* What a combination gives over a stretch. */
enum piece_kind { PIECE_EMPTY, PIECE_FULL, PIECE_PAT };

struct piece {
	enum piece_kind kind;
	struct pset_pat *pat; /* PIECE_PAT: a reference the piece owns */
	int64_t off;
};

/* The combining buffers: bits c (covered) and, when tracked, r (result)
 * over the stretch [a, b), either periodic (bit i stands for every x = i
 * mod len) or literal (bit i is x = a + i, len = b - a).  Bits past len
 * are always 0. */
struct acc {
	int64_t a, b, len, x0; /* x0: the x of bit 0 (0 or a) */
	bool literal, empty, track;
	word *c, *r, *c2, *r2;
	size_t ccap, rcap, ccap2, rcap2; /* words allocated in each */
};

struct pset_work {
	struct acc acc;
	struct pset_pat *prog; /* the last progression pattern made */
	/* topo__pset_expand: the last pattern expanded and its expansion */
	const struct pset_pat *exp_src;
	const struct pset *exp_rows;
	int64_t exp_unit;
	struct piece exp;
};

enum op { OP_OR, OP_PLUS, OP_AND };

/* ---------------------------------------------------------------------- */
/* Bits */

static size_t nwords(int64_t bits)
{
	return (size_t)((bits + 63) >> 6);
}

static word low_mask(int n)
{
	return n >= 64 ? ~(word)0 : ((word)1 << n) - 1;
}

static bool bit_get(const word *w, int64_t i)
{
	return (w[i >> 6] >> (i & 63)) & 1;
}

static void bit_set(word *w, int64_t i)
{
	w[i >> 6] |= (word)1 << (i & 63);
}

static void bits_set_range(word *w, int64_t lo, int64_t hi)
{
	while (lo < hi) {
		int64_t end = ((lo >> 6) + 1) << 6;
		int n = (int)((end < hi ? end : hi) - lo);

		w[lo >> 6] |= low_mask(n) << (lo & 63);
		lo += n;
	}
}

/* n <= 64 bits of w from bit pos, which must all exist. */
static word bits_at(const word *w, int64_t pos, int n)
{
	size_t i = (size_t)(pos >> 6);
	int sh = (int)(pos & 63);
	word v = w[i] >> sh;

	if (sh != 0 && sh + n > 64)
		v |= w[i + 1] << (64 - sh);
	return v & low_mask(n);
}

/* ORs the low n bits of v into w at bit pos. */
static void bits_or_at(word *w, int64_t pos, word v, int n)
{
	size_t i = (size_t)(pos >> 6);
	int sh = (int)(pos & 63);

	v &= low_mask(n);
	w[i] |= v << sh;
	if (sh != 0 && sh + n > 64)
		w[i + 1] |= v >> (64 - sh);
}

/* 64 bits of the periodic array w (period len) from index start < len. */
static word get64(const word *w, int64_t len, int64_t start)
{
	word v = 0;
	int got = 0;

	while (got < 64) {
		int64_t room = len - start;
		int n = room < 64 - got ? (int)room : 64 - got;

		v |= bits_at(w, start, n) << got;
		got += n;
		start += n;
		if (start == len)
			start = 0;
	}
	return v;
}

static int64_t count_bits(const word *w, int64_t n)
{
	int64_t c = 0;

	for (int64_t i = 0; i < n; i += 64)
		c += __builtin_popcountll(
		    bits_at(w, i, n - i < 64 ? (int)(n - i) : 64));
	return c;
}

/* The first bit of w at or after i that is set (want) or clear (!want),
 * before size, or size. */
static int64_t bits_seek(const word *w, int64_t i, int64_t size, bool want)
{
	while (i < size) {
		word v = (want ? w[i >> 6] : ~w[i >> 6]) &
			 (~(word)0 << (i & 63));

		if (v != 0) {
			int64_t at = (i & ~(int64_t)63) + __builtin_ctzll(v);

			return at < size ? at : size;
		}
		i = (i & ~(int64_t)63) + 64;
	}
	return size;
}

static int64_t mod(int64_t x, int64_t m)
{
	int64_t r = x % m;

	return r < 0 ? r + m : r;
}

static int64_t gcd(int64_t a, int64_t b)
{
	while (b != 0) {
		int64_t t = a % b;

		a = b;
		b = t;
	}
	return a;
}

/* Whether the periodic array w of period len also has period d (d | len). */
static bool has_period(const word *w, int64_t len, int64_t d)
{
	for (int64_t i = 0; i < len; i += 64) {
		int n = len - i < 64 ? (int)(len - i) : 64;

		if (bits_at(w, i, n) != (get64(w, len, (i + d) % len) &
					 low_mask(n)))
			return false;
	}
	return true;
}

/* The smallest period of the periodic array w of period len, among the
 * divisors reached by taking out its prime factors one at a time. */
static int64_t reduce_period(const word *w, int64_t len)
{
	int64_t left = len, q = 2;

	while (left > 1) {
		bool shrinking = true;

		if (q * q > left)
			q = left; /* what is left is prime */
		/* Period len / q^2 implies len / q: stop at the first no. */
		while (left % q == 0) {
			left /= q;
			if (shrinking && has_period(w, len, len / q))
				len /= q;
			else
				shrinking = false;
		}
		q = q == 2 ? 3 : q + 2;
	}
	return len;
}

/* ---------------------------------------------------------------------- */
/* Patterns */

static struct pset_pat *pat_new(int64_t period)
{
	int64_t x = period >= 128 ? period : period * ((127 + period) / period);
	size_t nw = nwords(x);
	struct pset_pat *p;

	if (nw > (SIZE_MAX - sizeof(*p)) / sizeof(word))
		return NULL;
	p = topo__calloc(1, sizeof(*p) + nw * sizeof(word));
	if (p == NULL)
		return NULL;
	p->period = period;
	p->xperiod = x;
	p->refs = 1;
	return p;
}

/* After the first period bits are written: repeats them and counts. */
static void pat_finish(struct pset_pat *p)
{
	for (int64_t i = p->period; i < p->xperiod; i++)
		if (bit_get(p->w, i - p->period))
			bit_set(p->w, i);
	p->ones = count_bits(p->w, p->period);
}

static void pat_unref(struct pset_pat *p)
{
	if (p != NULL && --p->refs == 0)
		topo__free(p);
}

static struct pset_pat *pat_ref(struct pset_pat *p)
{
	if (p != NULL)
		p->refs++;
	return p;
}

static bool pat_same(const struct pset_pat *a, int64_t aoff,
		     const struct pset_pat *b, int64_t boff)
{
	if (a == b)
		return a == NULL || aoff == boff;
	if (a == NULL || b == NULL || a->period != b->period || aoff != boff ||
	    a->ones != b->ones || a->period > 4096)
		return false;
	for (int64_t i = 0; i < a->period; i += 64) {
		int n = a->period - i < 64 ? (int)(a->period - i) : 64;

		if (bits_at(a->w, i, n) != bits_at(b->w, i, n))
			return false;
	}
	return true;
}

/*
 * A piece from the first len bits of w: empty, full, or a new pattern
 * anchored as the bits are (bit i stands for x with (x + off) mod len = i).
 * periodic: the bits are a period, reduced to the smallest one found.
 */
static int piece_from_bits(const word *w, int64_t len, int64_t off,
			   bool periodic, struct piece *out)
{
	int64_t ones = count_bits(w, len), period = len;
	struct pset_pat *p;

	out->kind = PIECE_EMPTY;
	out->pat = NULL;
	out->off = 0;
	if (ones == 0 || ones == len) {
		out->kind = ones == 0 ? PIECE_EMPTY : PIECE_FULL;
		return 0;
	}
	if (periodic) {
		period = reduce_period(w, len);
		off %= period;
	}
	p = pat_new(period);
	if (p == NULL)
		return TOPO_ENOMEM;
	for (int64_t i = 0; i < period; i += 64) {
		int n = period - i < 64 ? (int)(period - i) : 64;

		bits_or_at(p->w, i, bits_at(w, i, n), n);
	}
	pat_finish(p);
	out->kind = PIECE_PAT;
	out->pat = p;
	out->off = off;
	return 0;
}

static void piece_clear(struct piece *p)
{
	if (p->kind == PIECE_PAT)
		pat_unref(p->pat);
	p->kind = PIECE_EMPTY;
	p->pat = NULL;
}

/* ---------------------------------------------------------------------- */
/* Sets */

void topo__pset_free(struct pset *s)
{
	for (size_t i = 0; i < s->n; i++)
		pat_unref(s->v[i].pat);
	topo__free(s->v);
	s->v = NULL;
	s->n = s->cap = 0;
}

void topo__pset_move(struct pset *dst, struct pset *src)
{
	topo__pset_free(dst);
	*dst = *src;
	src->v = NULL;
	src->n = src->cap = 0;
}

/* Appends [lo, hi) of pat at off (taking a reference of its own), joined
 * to the last run when that one continues into it. */
static int push(struct pset *s, int64_t lo, int64_t hi, struct pset_pat *pat,
		int64_t off)
{
	if (lo >= hi)
		return 0;
	if (s->n > 0) {
		struct pset_run *l = &s->v[s->n - 1];

		if (l->hi == lo && pat_same(l->pat, l->off, pat, off)) {
			l->hi = hi;
			return 0;
		}
	}
	if (s->n == s->cap) {
		size_t cap = s->cap != 0 ? 2 * s->cap : 8;
		struct pset_run *v;

		if (cap > SIZE_MAX / sizeof(*v))
			return TOPO_ENOMEM;
		v = topo__realloc(s->v, cap * sizeof(*v));
		if (v == NULL)
			return TOPO_ENOMEM;
		s->v = v;
		s->cap = cap;
	}
	s->v[s->n++] = (struct pset_run){lo, hi, off, pat_ref(pat)};
	return 0;
}

int topo__pset_push_full(struct pset *s, int64_t lo, int64_t hi)
{
	return push(s, lo, hi, NULL, 0);
}

static int push_piece(struct pset *s, int64_t lo, int64_t hi,
		      const struct piece *p)
{
	if (p->kind == PIECE_EMPTY)
		return 0;
	return push(s, lo, hi, p->kind == PIECE_FULL ? NULL : p->pat, p->off);
}

/* The first member of r at or after x (r->lo <= x), or r->hi. */
static int64_t run_next(const struct pset_run *r, int64_t x)
{
	const struct pset_pat *p = r->pat;
	int64_t i, j, d;

	if (x >= r->hi)
		return r->hi;
	if (p == NULL)
		return x;
	i = (x + r->off) % p->xperiod;
	j = bits_seek(p->w, i, p->xperiod, true);
	if (j < p->xperiod)
		d = j - i;
	else
		d = p->xperiod - i + bits_seek(p->w, 0, i, true);
	return x + d < r->hi ? x + d : r->hi;
}

/* Whether x (in [r->lo, r->hi)) is a member of r. */
static bool run_has(const struct pset_run *r, int64_t x)
{
	return r->pat == NULL ||
	       bit_get(r->pat->w, (x + r->off) % r->pat->xperiod);
}

/* At most how many members r has in [a, b) (r covers it). */
static int64_t run_bound(const struct pset_run *r, int64_t a, int64_t b)
{
	if (r->pat == NULL)
		return b - a;
	return ((b - a) / r->pat->period + 1) * r->pat->ones;
}

/* The members of one period of p, ascending (p->ones of them), or NULL
 * when out of memory. */
static int64_t *pat_residues(const struct pset_pat *p)
{
	int64_t *res = topo__mallocarray((size_t)p->ones, sizeof(*res)), n = 0;

	if (res == NULL)
		return NULL;
	for (int64_t k = bits_seek(p->w, 0, p->period, true); k < p->period;
	     k = bits_seek(p->w, k + 1, p->period, true))
		res[n++] = k;
	return res;
}

/* Appends r's members in [a, b) (r covers it, r->pat set) to out[*n];
 * costs the period's words and the members.  0 or TOPO_ENOMEM. */
static int run_members(const struct pset_run *r, int64_t a, int64_t b,
		       int64_t *out, size_t *n)
{
	const struct pset_pat *p = r->pat;
	int64_t *res = pat_residues(p);

	if (res == NULL)
		return TOPO_ENOMEM;
	for (int64_t base = a - (a + r->off) % p->period; base < b;
	     base += p->period)
		for (int64_t j = 0; j < p->ones; j++) {
			int64_t x = base + res[j];

			if (x >= a && x < b)
				out[(*n)++] = x;
		}
	topo__free(res);
	return 0;
}

static int64_t run_count(const struct pset_run *r)
{
	const struct pset_pat *p = r->pat;
	int64_t n = r->hi - r->lo, count, start, rem;

	if (p == NULL)
		return n;
	count = n / p->period * p->ones;
	rem = n % p->period;
	start = (r->lo + r->off) % p->period;
	while (rem > 0) {
		int k = rem < 64 ? (int)rem : 64;

		count += __builtin_popcountll(get64(p->w, p->xperiod, start) &
					      low_mask(k));
		start = (start + 64) % p->xperiod;
		rem -= k;
	}
	return count;
}

int64_t topo__pset_count(const struct pset *s)
{
	int64_t count = 0;

	for (size_t i = 0; i < s->n; i++)
		count += run_count(&s->v[i]);
	return count;
}

int topo__pset_members(const struct pset *s, int32_t *out)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct pset_run *r = &s->v[i];
		const struct pset_pat *p = r->pat;

		if (p == NULL) {
			for (int64_t x = r->lo; x < r->hi; x++)
				*out++ = (int32_t)x;
		} else if (p->ones * 64 >= p->period) {
			/* Dense: a word of the pattern at a time. */
			int64_t start = (r->lo + r->off) % p->xperiod;

			for (int64_t x = r->lo; x < r->hi; x += 64) {
				int k = r->hi - x < 64 ? (int)(r->hi - x) : 64;
				word v = get64(p->w, p->xperiod, start) &
					 low_mask(k);

				for (; v != 0; v &= v - 1)
					*out++ = (int32_t)(x +
							   __builtin_ctzll(v));
				start = (start + 64) % p->xperiod;
			}
		} else {
			/* Sparse: the members of one period, then each
			 * period's in turn. */
			int64_t *res = pat_residues(p);

			if (res == NULL)
				return TOPO_ENOMEM;
			for (int64_t base = r->lo - (r->lo + r->off) % p->period;
			     base < r->hi; base += p->period)
				for (int64_t j = 0; j < p->ones; j++) {
					int64_t x = base + res[j];

					if (x >= r->lo && x < r->hi)
						*out++ = (int32_t)x;
				}
			topo__free(res);
		}
	}
	return 0;
}

bool topo__pset_is_range(const struct pset *s, int64_t lo, int64_t hi)
{
	return s->n > 0 && s->v[0].lo == lo && s->v[s->n - 1].hi == hi &&
	       (s->n == 1 && s->v[0].pat == NULL
		    ? true
		    : topo__pset_count(s) == hi - lo);
}

/* ---------------------------------------------------------------------- */
/* Combining over one stretch */

static int grow_words(word **w, size_t *cap, size_t n)
{
	size_t want = n > 2 * *cap ? n : 2 * *cap;
	word *v;

	if (*cap >= n)
		return 0;
	if (want > SIZE_MAX / sizeof(word))
		return TOPO_ENOMEM;
	v = topo__realloc(*w, want * sizeof(word));
	if (v == NULL)
		return TOPO_ENOMEM;
	*w = v;
	*cap = want;
	return 0;
}

static void acc_free(struct acc *A)
{
	topo__free(A->c);
	topo__free(A->r);
	topo__free(A->c2);
	topo__free(A->r2);
	memset(A, 0, sizeof(*A));
}

/* Starts an empty combination over [a, b); track: keep r as well. */
static int acc_begin(struct acc *A, int64_t a, int64_t b, bool track)
{
	int rc = grow_words(&A->c, &A->ccap, 1);

	if (rc == 0 && track)
		rc = grow_words(&A->r, &A->rcap, 1);
	if (rc != 0)
		return rc;
	A->a = a;
	A->b = b;
	A->len = 1;
	A->x0 = 0;
	A->literal = false;
	A->empty = true;
	A->track = track;
	A->c[0] = 0;
	if (track)
		A->r[0] = 0;
	return 0;
}

/* Copies the periodic bits of w (period A->len) into dst laid out from x0
 * over len bits. */
static void relay(const struct acc *A, const word *w, word *dst, int64_t x0,
		  int64_t len)
{
	size_t nw = nwords(len);
	int64_t plen = A->len, st, step;
	word wide[4];

	if (A->empty) {
		memset(dst, 0, nw * sizeof(word));
		return;
	}
	if (plen < 128) {
		/* Repeated to 128 bits or more first, so that each word
		 * below takes at most two pieces. */
		int64_t x = plen * ((127 + plen) / plen);

		memset(wide, 0, sizeof(wide));
		for (int64_t i = 0; i < x; i++)
			if (bit_get(w, i % plen))
				bit_set(wide, i);
		w = wide;
		plen = x;
	}
	st = x0 % plen;
	step = 64 % plen;
	for (size_t j = 0; j < nw; j++) {
		dst[j] = get64(w, plen, st);
		st += step;
		if (st >= plen)
			st -= plen;
	}
	if (len % 64 != 0)
		dst[nw - 1] &= low_mask((int)(len % 64));
}

/* Lays the bits out again with period len (a multiple of the old one) or
 * literally over the stretch. */
static int acc_relayout(struct acc *A, int64_t len, bool literal)
{
	int64_t x0 = literal ? A->a : 0;
	size_t nw = nwords(len), tc;
	word *t;
	int rc = grow_words(&A->c2, &A->ccap2, nw);

	if (rc == 0 && A->track)
		rc = grow_words(&A->r2, &A->rcap2, nw);
	if (rc != 0)
		return rc;
	relay(A, A->c, A->c2, x0, len);
	t = A->c, A->c = A->c2, A->c2 = t;
	tc = A->ccap, A->ccap = A->ccap2, A->ccap2 = tc;
	if (A->track) {
		relay(A, A->r, A->r2, x0, len);
		t = A->r, A->r = A->r2, A->r2 = t;
		tc = A->rcap, A->rcap = A->rcap2, A->rcap2 = tc;
	}
	A->len = len;
	A->literal = literal;
	A->x0 = x0;
	return 0;
}

/* Makes the layout able to hold a pattern of period p. */
static int acc_fit(struct acc *A, int64_t p)
{
	int64_t span = A->b - A->a, len;

	if (A->literal)
		return 0;
	len = A->len / gcd(A->len, p) * p;
	if (len == A->len)
		return 0;
	if (len <= topo__tune.pset.cap && len < span)
		return acc_relayout(A, len, false);
	return acc_relayout(A, span, true);
}

/* Whether c holds everything, checked where that is cheap next to the
 * work it may save. */
static bool acc_full(const struct acc *A)
{
	if (A->literal && A->len > ((int64_t)1 << 16))
		return false;
	return count_bits(A->c, A->len) == A->len;
}

/* Applies one word: t the run's bits, m the bits in range. */
static void acc_word(struct acc *A, size_t j, word t, word m, enum op op)
{
	switch (op) {
	case OP_OR:
		A->c[j] |= t & m;
		break;
	case OP_PLUS:
		A->r[j] |= t & ~A->c[j] & m;
		A->c[j] |= t & m;
		break;
	case OP_AND:
		A->c[j] &= t | ~m;
		break;
	}
}

/*
 * Applies run t to the combination: OP_OR: c |= t; OP_PLUS: r |= t & ~c,
 * c |= t (t decides where nothing later has); OP_AND: c &= t.  t must
 * cover the whole stretch unless the layout is literal (and op not AND).
 */
static int acc_op(struct acc *A, const struct pset_run *t, enum op op)
{
	const struct pset_pat *p = t->pat;
	int64_t ilo, ihi, st;
	int rc;

	if (p != NULL) {
		rc = acc_fit(A, p->period);
		if (rc != 0)
			return rc;
	}
	A->empty = false;
	if (A->literal) {
		ilo = (t->lo > A->a ? t->lo : A->a) - A->a;
		ihi = (t->hi < A->b ? t->hi : A->b) - A->a;
	} else {
		ilo = 0;
		ihi = A->len;
	}
	if (ilo >= ihi)
		return 0;
	if (p == NULL && op == OP_AND)
		return 0;
	if (p != NULL && A->literal && op != OP_AND &&
	    p->ones * topo__tune.pset.sparse < p->period) {
		/* Sparse: member by member.  Residue k holds the x with
		 * (x + off) mod period = k. */
		int64_t s = A->a + ilo, e = A->a + ihi;

		for (int64_t k = bits_seek(p->w, 0, p->period, true); k < p->period;
		     k = bits_seek(p->w, k + 1, p->period, true)) {
			for (int64_t x = s + mod(k - t->off - s, p->period);
			     x < e; x += p->period) {
				int64_t i = x - A->a;

				if (op == OP_PLUS && !bit_get(A->c, i))
					bit_set(A->r, i);
				bit_set(A->c, i);
			}
		}
		return 0;
	}
	st = p != NULL ? mod(A->x0 + (ilo & ~(int64_t)63) + t->off,
			     p->xperiod)
		       : 0;
	for (size_t j = (size_t)(ilo >> 6); j < nwords(ihi); j++) {
		int64_t base = (int64_t)j * 64;
		int lo = base < ilo ? (int)(ilo - base) : 0;
		int hi = base + 64 > ihi ? (int)(ihi - base) : 64;
		word m = low_mask(hi - lo) << lo;

		acc_word(A, j, p != NULL ? get64(p->w, p->xperiod, st) : ~(word)0,
			 m, op);
		if (p != NULL) {
			st += 64;
			if (st >= p->xperiod)
				st -= p->xperiod;
		}
	}
	return 0;
}

/* The periodic result (r when result, else c) as a piece. */
static int acc_take(const struct acc *A, bool result, struct piece *out)
{
	return piece_from_bits(result ? A->r : A->c, A->len, 0, true, out);
}

/* Appends a literal result to out: as intervals when there are few of
 * them (1 per 256 bits or fewer), else as a pattern over the stretch. */
static int acc_push_literal(const struct acc *A, bool result, struct pset *out)
{
	const word *w = result ? A->r : A->c;
	int64_t len = A->len, ones = 0, starts = 0;
	word carry = 0;
	struct piece piece;
	int rc = 0;

	for (size_t j = 0; j < nwords(len); j++) {
		word v = w[j];

		ones += __builtin_popcountll(v);
		starts += __builtin_popcountll(v & ~(v << 1 | carry));
		carry = v >> 63;
	}
	if (ones == 0)
		return 0;
	if (ones == len)
		return push(out, A->a, A->b, NULL, 0);
	if (starts * 256 < len) {
		for (int64_t i = bits_seek(w, 0, len, true); rc == 0 && i < len;) {
			int64_t e = bits_seek(w, i, len, false);

			rc = push(out, A->a + i, A->a + e, NULL, 0);
			i = bits_seek(w, e, len, true);
		}
		return rc;
	}
	rc = piece_from_bits(w, len, mod(-A->a, len), false, &piece);
	if (rc == 0)
		rc = push_piece(out, A->a, A->b, &piece);
	piece_clear(&piece);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Work */

struct pset_work *topo__pset_work_new(void)
{
	return topo__calloc(1, sizeof(struct pset_work));
}

void topo__pset_work_free(struct pset_work *w)
{
	if (w == NULL)
		return;
	acc_free(&w->acc);
	pat_unref(w->prog);
	piece_clear(&w->exp);
	topo__free(w);
}

/* The pattern of one member in every step (step >= 2), shared. */
static struct pset_pat *prog_pat(struct pset_work *w, int64_t step)
{
	struct pset_pat *p;

	if (w->prog != NULL && w->prog->period == step)
		return w->prog;
	p = pat_new(step);
	if (p == NULL)
		return NULL;
	bit_set(p->w, 0);
	pat_finish(p);
	pat_unref(w->prog);
	w->prog = p;
	return p;
}

/* ---------------------------------------------------------------------- */
/* The sweep: sets in order, each added or taken away */

struct event {
	int64_t x;
	uint32_t set;  /* which set */
	uint32_t run;  /* which of its runs */
	uint32_t open; /* 0: the run ends at x, 1: it starts */
};

static int event_cmp(const void *a, const void *b)
{
	const struct event *x = a, *y = b;

	if (x->x != y->x)
		return x->x < y->x ? -1 : 1;
	return (int)x->open - (int)y->open;
}

/* A bitset over the sets with a summary word per 64 words, for the highest
 * member below a bound. */
struct hbits {
	word *lo, *hi;
};

static int hbits_init(struct hbits *h, size_t n)
{
	h->lo = topo__calloc(nwords((int64_t)n + 1), sizeof(word));
	h->hi = topo__calloc(nwords((int64_t)nwords((int64_t)n + 1)),
			     sizeof(word));
	return h->lo != NULL && h->hi != NULL ? 0 : TOPO_ENOMEM;
}

static void hbits_free(struct hbits *h)
{
	topo__free(h->lo);
	topo__free(h->hi);
}

static void hbits_set(struct hbits *h, size_t i)
{
	h->lo[i >> 6] |= (word)1 << (i & 63);
	h->hi[i >> 12] |= (word)1 << ((i >> 6) & 63);
}

static void hbits_clear(struct hbits *h, size_t i)
{
	h->lo[i >> 6] &= ~((word)1 << (i & 63));
	if (h->lo[i >> 6] == 0)
		h->hi[i >> 12] &= ~((word)1 << ((i >> 6) & 63));
}

static int top_bit(word v)
{
	return 63 - __builtin_clzll(v);
}

/* The highest member below i, or -1. */
static int64_t hbits_below(const struct hbits *h, size_t i)
{
	size_t w = i >> 6, hw;
	word v = h->lo[w] & low_mask((int)(i & 63));

	if (v != 0)
		return (int64_t)(w * 64) + top_bit(v);
	hw = w >> 6;
	v = h->hi[hw] & low_mask((int)(w & 63));
	for (;;) {
		if (v != 0) {
			size_t lw = hw * 64 + (size_t)top_bit(v);

			return (int64_t)(lw * 64) + top_bit(h->lo[lw]);
		}
		if (hw == 0)
			return -1;
		v = h->hi[--hw];
	}
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The stretch [a, b) when the sets that could add anything to it hold few
 * members (fewer than one per topo__tune.pset.sparse integers): their
 * members are listed, and each is kept when the highest set above floor
 * that holds it is added.  *done false: not sparse, nothing done.
 */
static int chain_sparse(const struct pset_run *const *act, const bool *minus,
			const struct hbits *partial, size_t top, int64_t floor,
			int64_t a, int64_t b, struct pset *out, bool *done)
{
	int64_t bound = 0, *cand;
	size_t n = 0;
	int rc = 0;

	*done = false;
	for (int64_t k = hbits_below(partial, top); k > floor;
	     k = hbits_below(partial, (size_t)k))
		if (!minus[k])
			bound += run_bound(act[k], a, b);
	if (bound >= (b - a) / topo__tune.pset.sparse)
		return 0;
	*done = true;
	if (bound == 0)
		return 0;
	cand = topo__mallocarray((size_t)bound, sizeof(*cand));
	if (cand == NULL)
		return TOPO_ENOMEM;
	for (int64_t k = hbits_below(partial, top); rc == 0 && k > floor;
	     k = hbits_below(partial, (size_t)k))
		if (!minus[k])
			rc = run_members(act[k], a, b, cand, &n);
	if (rc == 0)
		qsort(cand, n, sizeof(*cand), cmp_i64);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		if (i > 0 && cand[i] == cand[i - 1])
			continue;
		for (int64_t k = hbits_below(partial, top); k > floor;
		     k = hbits_below(partial, (size_t)k)) {
			if (!run_has(act[k], cand[i]))
				continue;
			if (!minus[k])
				rc = push(out, cand[i], cand[i] + 1, NULL, 0);
			break;
		}
	}
	topo__free(cand);
	return rc;
}

/* The stretch [A->a, A->b): x is in when the highest set above `floor`
 * that holds x is added, or, when none holds x, floor is an added set that
 * holds the whole stretch (floor < 0: none). */
static int chain_stretch(struct acc *A, const struct pset_run *const *act,
			 const bool *minus, const struct hbits *partial,
			 size_t top, int64_t floor)
{
	int rc;

	for (int64_t k = hbits_below(partial, top); k > floor;
	     k = hbits_below(partial, (size_t)k)) {
		/* Untracked (a union): only c, the result. */
		rc = acc_op(A, act[k],
			    !A->track || minus[k] ? OP_OR : OP_PLUS);
		if (rc != 0)
			return rc;
		if (acc_full(A))
			break;
	}
	if (floor >= 0 && !minus[floor]) {
		struct pset_run all = {A->a, A->b, 0, NULL};

		rc = acc_op(A, &all, OP_PLUS);
		if (rc != 0)
			return rc;
	}
	return 0;
}

/* The sweep's events, in order: each run of each set opens at its lo
 * and closes at its hi.  sign[k] says whether set k is subtracted (the
 * first never is); *all_plus whether none is.  Returns the count. */
static size_t chain_events(const struct pset *sets, const bool *minus,
			   size_t n, struct event *ev, bool *sign,
			   bool *all_plus)
{
	size_t nev = 0;

	*all_plus = true;
	for (size_t k = 0; k < n; k++) {
		sign[k] = k > 0 && minus[k];
		if (sign[k])
			*all_plus = false;
		for (size_t i = 0; i < sets[k].n; i++) {
			ev[nev++] = (struct event){sets[k].v[i].lo, (uint32_t)k,
						   (uint32_t)i, 1};
			ev[nev++] = (struct event){sets[k].v[i].hi, (uint32_t)k,
						   (uint32_t)i, 0};
		}
	}
	qsort(ev, nev, sizeof(*ev), event_cmp);
	return nev;
}

int topo__pset_chain(struct pset_work *w, const struct pset *sets,
		     const bool *minus, size_t n, struct pset *out)
{
	struct event *ev = NULL;
	const struct pset_run **act = NULL;
	struct hbits whole = {0}, partial = {0};
	struct piece memo = {PIECE_EMPTY, NULL, 0}, piece = memo;
	uint64_t gen = 0, memo_gen = UINT64_MAX;
	int64_t memo_floor = -2;
	size_t nev = 0, total = 0;
	bool *sign = NULL, all_plus;
	int rc = TOPO_ENOMEM;

	topo__pset_free(out);
	for (size_t k = 0; k < n; k++)
		total += sets[k].n;
	if (n > UINT32_MAX || total > UINT32_MAX ||
	    total > SIZE_MAX / (2 * sizeof(*ev)))
		return TOPO_ENOMEM;
	ev = topo__mallocarray(2 * total + 1, sizeof(*ev));
	act = topo__calloc(n + 1, sizeof(*act));
	sign = topo__calloc(n + 1, sizeof(*sign));
	if (ev == NULL || act == NULL || sign == NULL)
		goto out;
	if (hbits_init(&whole, n) != 0 || hbits_init(&partial, n) != 0)
		goto out;
	nev = chain_events(sets, minus, n, ev, sign, &all_plus);
	for (size_t e = 0; e < nev;) {
		int64_t x = ev[e].x, y, floor, top;

		for (; e < nev && ev[e].x == x; e++) {
			const struct pset_run *r =
			    &sets[ev[e].set].v[ev[e].run];
			struct hbits *h = r->pat == NULL ? &whole : &partial;

			if (r->pat != NULL)
				gen++;
			if (ev[e].open) {
				act[ev[e].set] = r;
				hbits_set(h, ev[e].set);
			} else {
				act[ev[e].set] = NULL;
				hbits_clear(h, ev[e].set);
			}
		}
		if (e == nev)
			break;
		y = ev[e].x;
		floor = hbits_below(&whole, n);
		top = hbits_below(&partial, n);
		if (top <= floor || (all_plus && floor >= 0)) {
			if (floor >= 0 && !sign[floor]) {
				rc = push(out, x, y, NULL, 0);
				if (rc != 0)
					goto out;
			}
			continue;
		}
		if (gen == memo_gen && floor == memo_floor) {
			rc = push_piece(out, x, y, &memo);
			if (rc != 0)
				goto out;
			continue;
		}
		if (floor < 0 || sign[floor]) {
			bool done;

			rc = chain_sparse(act, sign, &partial, n, floor, x, y,
					  out, &done);
			if (rc != 0)
				goto out;
			if (done)
				continue;
		}
		/* A union needs only c; otherwise c is what a later set
		 * decides and r the result. */
		rc = acc_begin(&w->acc, x, y, !all_plus);
		if (rc == 0)
			rc = chain_stretch(&w->acc, act, sign, &partial, n,
					   floor);
		if (rc == 0 && w->acc.literal) {
			rc = acc_push_literal(&w->acc, !all_plus, out);
		} else if (rc == 0) {
			rc = acc_take(&w->acc, !all_plus, &piece);
			if (rc == 0)
				rc = push_piece(out, x, y, &piece);
			/* A periodic result holds for any stretch. */
			piece_clear(&memo);
			memo = piece;
			memo_gen = gen;
			memo_floor = floor;
		}
		if (rc != 0)
			goto out;
	}
	rc = 0;
out:
	piece_clear(&memo);
	hbits_free(&whole);
	hbits_free(&partial);
	topo__free(ev);
	topo__free(act);
	topo__free(sign);
	if (rc != 0)
		topo__pset_free(out);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Intersection */

static int and_sparse(const struct pset_run *x, const struct pset_run *y,
		      int64_t lo, int64_t hi, struct pset *out)
{
	const struct pset_run *list = x, *test = y;
	int64_t *cand;
	size_t n = 0;
	int rc;

	if (run_bound(y, lo, hi) < run_bound(x, lo, hi)) {
		list = y;
		test = x;
	}
	cand = topo__mallocarray((size_t)run_bound(list, lo, hi) + 1,
				 sizeof(*cand));
	if (cand == NULL)
		return TOPO_ENOMEM;
	rc = run_members(list, lo, hi, cand, &n);
	qsort(cand, n, sizeof(*cand), cmp_i64);
	for (size_t i = 0; rc == 0 && i < n; i++)
		if (run_has(test, cand[i]))
			rc = push(out, cand[i], cand[i] + 1, NULL, 0);
	topo__free(cand);
	return rc;
}

int topo__pset_and(struct pset_work *w, const struct pset *a,
		   const struct pset *b, struct pset *out)
{
	struct piece memo = {PIECE_EMPTY, NULL, 0};
	const struct pset_run *ma = NULL, *mb = NULL;
	size_t i = 0, j = 0;
	int rc = 0;

	topo__pset_free(out);
	while (rc == 0 && i < a->n && j < b->n) {
		const struct pset_run *x = &a->v[i], *y = &b->v[j];
		int64_t lo = x->lo > y->lo ? x->lo : y->lo;
		int64_t hi = x->hi < y->hi ? x->hi : y->hi;

		if (lo < hi) {
			if (x->pat == NULL) {
				rc = push(out, lo, hi, y->pat, y->off);
			} else if (y->pat == NULL) {
				rc = push(out, lo, hi, x->pat, x->off);
			} else if (run_bound(x, lo, hi) <
				       (hi - lo) / topo__tune.pset.sparse ||
				   run_bound(y, lo, hi) <
				       (hi - lo) / topo__tune.pset.sparse) {
				/* Few members: list the sparser, test the
				 * other. */
				rc = and_sparse(x, y, lo, hi, out);
			} else if (ma != NULL && ma->pat == x->pat &&
				   ma->off == x->off && mb->pat == y->pat &&
				   mb->off == y->off) {
				rc = push_piece(out, lo, hi, &memo);
			} else {
				struct pset_run cx = *x, cy = *y;
				struct piece piece = {PIECE_EMPTY, NULL, 0};

				cx.lo = cy.lo = lo;
				cx.hi = cy.hi = hi;
				rc = acc_begin(&w->acc, lo, hi, false);
				if (rc == 0)
					rc = acc_op(&w->acc, &cx, OP_OR);
				if (rc == 0)
					rc = acc_op(&w->acc, &cy, OP_AND);
				if (rc != 0)
					break;
				if (w->acc.literal) {
					rc = acc_push_literal(&w->acc, false,
							      out);
				} else {
					rc = acc_take(&w->acc, false, &piece);
					if (rc == 0)
						rc = push_piece(out, lo, hi,
								&piece);
					piece_clear(&memo);
					memo = piece;
					ma = x;
					mb = y;
				}
			}
		}
		if (x->hi < y->hi)
			i++;
		else
			j++;
	}
	piece_clear(&memo);
	if (rc != 0)
		topo__pset_free(out);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Progressions */

static int prog_cmp(const void *a, const void *b)
{
	const struct pset_prog *x = a, *y = b;
	int64_t rx = x->lo % x->step, ry = y->lo % y->step;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	if (rx != ry)
		return rx < ry ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

/* Appends one merged progression to s: a run of the step's pattern over
 * the stretch it reaches, widened to the ends of the axis where no other
 * member of the class could be. */
static int add_prog(struct pset_work *w, struct pset *s, int64_t lo,
		    int64_t last, int64_t step, int64_t size)
{
	struct pset_pat *p;

	if (step == 1)
		return push(s, lo, last + 1, NULL, 0);
	p = prog_pat(w, step);
	if (p == NULL)
		return TOPO_ENOMEM;
	return push(s, lo < step ? 0 : lo, last + step >= size ? size : last + 1,
		    p, mod(-lo, step));
}

/* Marks the progressions straight into one literal stretch. */
static int union_literal(struct pset_work *w, const struct pset_prog *v,
			 size_t n, struct pset *out)
{
	struct acc *A = &w->acc;
	int64_t lo = v[0].lo, hi = v[0].last + 1, bound = 0;
	int rc;

	for (size_t i = 1; i < n; i++) {
		if (v[i].lo < lo)
			lo = v[i].lo;
		if (v[i].last + 1 > hi)
			hi = v[i].last + 1;
	}
	for (size_t i = 0; i < n; i++)
		bound += (v[i].last - v[i].lo) / v[i].step + 1;
	if (bound < (hi - lo) / topo__tune.pset.sparse) {
		/* Few members: list them. */
		int64_t *m = topo__mallocarray((size_t)bound, sizeof(*m));
		size_t k = 0;

		if (m == NULL)
			return TOPO_ENOMEM;
		for (size_t i = 0; i < n; i++)
			for (int64_t x = v[i].lo; x <= v[i].last; x += v[i].step)
				m[k++] = x;
		qsort(m, k, sizeof(*m), cmp_i64);
		rc = 0;
		for (size_t i = 0; rc == 0 && i < k; i++)
			if (i == 0 || m[i] != m[i - 1])
				rc = push(out, m[i], m[i] + 1, NULL, 0);
		topo__free(m);
		return rc;
	}
	rc = acc_begin(A, lo, hi, false);
	if (rc == 0)
		rc = acc_relayout(A, hi - lo, true);
	for (size_t i = 0; rc == 0 && i < n; i++) {
		int64_t step = v[i].step;

		A->empty = false;
		if (step == 1) {
			bits_set_range(A->c, v[i].lo - lo, v[i].last + 1 - lo);
		} else if (step >= topo__tune.pset.sparse) {
			for (int64_t x = v[i].lo; x <= v[i].last; x += step)
				bit_set(A->c, x - lo);
		} else {
			struct pset_pat *p = prog_pat(w, step);
			struct pset_run r = {v[i].lo, v[i].last + 1,
					     mod(-v[i].lo, step), p};

			rc = p != NULL ? acc_op(A, &r, OP_OR) : TOPO_ENOMEM;
		}
	}
	if (rc == 0)
		rc = acc_push_literal(A, false, out);
	return rc;
}

/* A progression of a few members, or of a step past the periodic limit,
 * is better as its members (steps of 1): they join the intervals' class
 * instead of making a class and a pattern of their own. */
static bool prog_few(const struct pset_prog *p)
{
	return p->step > 1 && ((p->last - p->lo) / p->step < 4 ||
			       p->step > topo__tune.pset.cap);
}

int topo__pset_union_progs(struct pset_work *w, struct pset_prog *v, size_t n,
			   int64_t size, struct pset *out)
{
	struct pset *classes = NULL;
	struct pset_prog *mine = NULL;
	bool *minus = NULL;
	size_t nclass = 0, k = 0, more = 0;
	bool few = false;
	int rc = 0;

	topo__pset_free(out);
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (prog_few(&v[i])) {
			few = true;
			more += (size_t)((v[i].last - v[i].lo) / v[i].step);
		}
	if (few) {
		if (more > SIZE_MAX / sizeof(*mine) - n)
			return TOPO_ENOMEM;
		mine = topo__mallocarray(n + more, sizeof(*mine));
		if (mine == NULL)
			return TOPO_ENOMEM;
		for (size_t i = 0; i < n; i++) {
			if (!prog_few(&v[i])) {
				mine[k++] = v[i];
				continue;
			}
			for (int64_t x = v[i].lo; x <= v[i].last;
			     x += v[i].step)
				mine[k++] = (struct pset_prog){x, x, 1};
		}
		v = mine;
		n = k;
		k = 0;
	}
	qsort(v, n, sizeof(*v), prog_cmp);
	/* Merge the progressions of each class (step, residue) that meet or
	 * overlap: they come in order of lo. */
	for (size_t i = 0; i < n; i++) {
		bool same = k > 0 && v[i].step == v[k - 1].step &&
			    v[i].lo % v[i].step ==
				v[k - 1].lo % v[k - 1].step;

		if (same && v[i].lo <= v[k - 1].last + v[k - 1].step) {
			if (v[i].last > v[k - 1].last)
				v[k - 1].last = v[i].last;
			continue;
		}
		if (!same)
			nclass++;
		v[k++] = v[i];
	}
	n = k;
	if (nclass > topo__tune.pset.many) {
		rc = union_literal(w, v, n, out);
		goto out;
	}
	classes = topo__calloc(nclass, sizeof(*classes));
	minus = topo__calloc(nclass, sizeof(*minus));
	if (classes == NULL || minus == NULL) {
		rc = TOPO_ENOMEM;
		goto out;
	}
	for (size_t i = 0, c = 0; rc == 0 && i < n; i++) {
		if (i > 0 && (v[i].step != v[i - 1].step ||
			      v[i].lo % v[i].step !=
				  v[i - 1].lo % v[i - 1].step))
			c++;
		rc = add_prog(w, &classes[c], v[i].lo, v[i].last, v[i].step,
			      size);
	}
	if (rc == 0) {
		if (nclass == 1) {
			topo__pset_move(out, &classes[0]);
		} else {
			rc = topo__pset_chain(w, classes, minus, nclass, out);
		}
	}
out:
	for (size_t c = 0; classes != NULL && c < nclass; c++)
		topo__pset_free(&classes[c]);
	topo__free(classes);
	topo__free(minus);
	topo__free(mine);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Units to parts */

/* The pattern of a run of pattern src (NULL: full) expanded to unit parts
 * per member, keeping the parts in rowbits (NULL: all): period
 * src->period * unit.  Remembered for the next run of the same src. */
static int expand_pat(struct pset_work *w, const struct pset_pat *src,
		      int64_t unit, const struct pset *rows,
		      const word *rowbits, struct piece *out)
{
	int64_t period = src != NULL ? src->period : 1, len = period * unit;
	struct pset_pat *q;
	int rc;

	if (w->exp_unit == unit && w->exp_src == src && w->exp_rows == rows &&
	    w->exp.kind != PIECE_EMPTY) {
		*out = w->exp;
		return 0;
	}
	q = pat_new(len);
	if (q == NULL)
		return TOPO_ENOMEM;
	for (int64_t k = src != NULL ? bits_seek(src->w, 0, period, true) : 0;
	     k < period;
	     k = src != NULL ? bits_seek(src->w, k + 1, period, true) : period) {
		if (rowbits == NULL) {
			bits_set_range(q->w, k * unit, (k + 1) * unit);
			continue;
		}
		for (int64_t i = 0; i < unit; i += 64) {
			int n = unit - i < 64 ? (int)(unit - i) : 64;

			bits_or_at(q->w, k * unit + i, bits_at(rowbits, i, n),
				   n);
		}
	}
	piece_clear(&w->exp);
	rc = piece_from_bits(q->w, len, 0, true, &w->exp);
	pat_unref(q);
	if (rc != 0)
		return rc;
	w->exp_src = src;
	w->exp_unit = unit;
	w->exp_rows = rows;
	*out = w->exp;
	return 0;
}

int topo__pset_expand(struct pset_work *w, const struct pset *in, int64_t unit,
		      const struct pset *rows, struct pset *out)
{
	word *rowbits = NULL;
	int rc = 0;

	topo__pset_free(out);
	piece_clear(&w->exp);
	w->exp_src = NULL;
	w->exp_unit = 0;
	if (rows != NULL && unit <= topo__tune.pset.cap) {
		rowbits = topo__calloc(nwords(unit), sizeof(word));
		if (rowbits == NULL)
			return TOPO_ENOMEM;
		for (size_t i = 0; i < rows->n; i++) {
			const struct pset_run *r = &rows->v[i];

			for (int64_t x = run_next(r, r->lo); x < r->hi;
			     x = run_next(r, x + 1))
				bit_set(rowbits, x);
		}
	}
	for (size_t i = 0; rc == 0 && i < in->n; i++) {
		const struct pset_run *r = &in->v[i];
		int64_t period = r->pat != NULL ? r->pat->period : 1;

		if (r->pat == NULL && rows == NULL) {
			rc = push(out, r->lo * unit, r->hi * unit, NULL, 0);
		} else if (period <= topo__tune.pset.cap / unit &&
			   (rows == NULL || rowbits != NULL)) {
			struct piece piece;

			rc = expand_pat(w, r->pat, unit, rows, rowbits, &piece);
			if (rc == 0 && piece.kind == PIECE_PAT)
				piece.off = r->off * unit % piece.pat->period;
			if (rc == 0)
				rc = push_piece(out, r->lo * unit, r->hi * unit,
						&piece);
		} else {
			/* Member by member: each is a unit. */
			for (int64_t x = run_next(r, r->lo); rc == 0 && x < r->hi;
			     x = run_next(r, x + 1)) {
				int64_t base = x * unit;

				if (rows == NULL) {
					rc = push(out, base, base + unit, NULL,
						  0);
					continue;
				}
				for (size_t j = 0; rc == 0 && j < rows->n; j++) {
					const struct pset_run *q = &rows->v[j];

					rc = push(out, base + q->lo,
						  base + q->hi, q->pat,
						  q->pat != NULL
						      ? mod(q->off - base,
							    q->pat->period)
						      : 0);
				}
			}
		}
	}
	topo__free(rowbits);
	piece_clear(&w->exp);
	w->exp_src = NULL;
	w->exp_unit = 0;
	if (rc != 0)
		topo__pset_free(out);
	return rc;
}

int topo__pset_widen(const struct pset *in, const int32_t *first,
		     struct pset *out)
{
	int rc = 0;

	topo__pset_free(out);
	for (size_t i = 0; rc == 0 && i < in->n; i++) {
		const struct pset_run *r = &in->v[i];

		if (r->pat == NULL) {
			rc = push(out, first[r->lo], first[r->hi], NULL, 0);
			continue;
		}
		for (int64_t x = run_next(r, r->lo); rc == 0 && x < r->hi;
		     x = run_next(r, x + 1))
			rc = push(out, first[x], first[x + 1], NULL, 0);
	}
	if (rc != 0)
		topo__pset_free(out);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Checking (tests) */

const char *topo__pset_invalid(const struct pset *s, int64_t size)
{
	for (size_t i = 0; i < s->n; i++) {
		const struct pset_run *r = &s->v[i];
		const struct pset_pat *p = r->pat;

		if (r->lo < 0 || r->lo >= r->hi || r->hi > size)
			return "a run is empty or outside the set's range";
		if (i > 0 && s->v[i - 1].hi > r->lo)
			return "runs overlap or are out of order";
		if (p == NULL)
			continue;
		if (p->refs < 1)
			return "a run's pattern has no references";
		if (r->off < 0 || r->off >= p->period)
			return "a run's offset is outside its period";
		if (p->ones <= 0 || p->ones >= p->period ||
		    p->ones != count_bits(p->w, p->period))
			return "a pattern is empty, full or miscounted";
		if (p->xperiod < 128 || p->xperiod % p->period != 0)
			return "a pattern's stored length is wrong";
		for (int64_t k = p->period; k < p->xperiod; k++)
			if (bit_get(p->w, k) != bit_get(p->w, k - p->period))
				return "a pattern does not repeat";
		if (p->xperiod % 64 != 0 &&
		    (p->w[p->xperiod / 64] >> (p->xperiod % 64)) != 0)
			return "a pattern has bits past its end";
	}
	return NULL;
}
