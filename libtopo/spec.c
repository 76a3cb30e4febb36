/*
 * spec.c - stride specifications (collc(7); seed 003): reading a spec such
 * as "cols 7:0:-2 + node 0" and evaluating it over a machine's endpoint
 * table into the ascending list of selected endpoint ids.
 *
 * The text is read and evaluated in one left-to-right pass, so the error
 * reported is the first one in reading order.  Sets are bitmaps: the value
 * of the spec so far over the N endpoints, and per term one mask per axis
 * it constrains (rows, tasks, endpoints; node selectors are widened into
 * the task mask).  Masks remember which words they dirtied and a term is
 * applied by walking runs of set bits, so a term costs about what it
 * selects (at most O(N/64 + T)), not O(N) per selector: "all - ep 1 -
 * ep 2 - ..." stays linear.  The triplets of one selector are merged per
 * (stride, residue) before they are marked, so a long list of overlapping
 * triplets costs what their union selects, not the sum of their lengths.
 *
 * Whitespace (spaces, tabs) separates the words of a spec: axis names,
 * index lists and operators.  An index list ("0:7:2,9") is one word; an
 * operator needs whitespace on both sides, which is what tells "7:0:-2"
 * (a negative stride) from a difference.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

typedef uint64_t word;

enum axis { AXIS_ROW, AXIS_TASK, AXIS_NODE, AXIS_EP };

/* The axis words; one and many name the axis in messages, in the words the
 * user wrote ("col" talks of columns, "task" of tasks). */
static const struct axis_word {
	const char *word;
	enum axis axis;
	const char *one, *many;
} axis_words[] = {
    {"row", AXIS_ROW, "row", "rows"},
    {"rows", AXIS_ROW, "row", "rows"},
    {"col", AXIS_TASK, "column", "columns"},
    {"cols", AXIS_TASK, "column", "columns"},
    {"task", AXIS_TASK, "task", "tasks"},
    {"tasks", AXIS_TASK, "task", "tasks"},
    {"node", AXIS_NODE, "node", "nodes"},
    {"nodes", AXIS_NODE, "node", "nodes"},
    {"ep", AXIS_EP, "endpoint", "endpoints"},
    {"eps", AXIS_EP, "endpoint", "endpoints"},
};

#define VALID_AXES "row, col, task, node, ep"

/* One triplet as the indices it selects: lo, lo + step, ..., hi, with
 * step > 0 whatever the sign of the written stride (order does not matter
 * in a set).  res = lo % step groups the progressions that can overlap. */
struct prog {
	int64_t lo, hi, step, res;
};

/* A bitmap that knows which of its words may be non-zero, so that clearing,
 * copying and walking it cost what was marked, not its size: a spec of many
 * small terms over a big machine stays cheap. */
struct mask {
	word *w;
	size_t lo, hi; /* every word outside [lo, hi) is 0 */
};

struct parser {
	const char *s;
	size_t len, pos;
	const topo_machine *m; /* NULL when only checking */
	int64_t size[4];       /* of each axis, by enum axis */
	bool check_only;       /* read and check, select nothing */
	topo_error *err;
	word *value;	   /* [N] the spec's value so far */
	struct mask ep;	   /* [N] the current term's ep constraint */
	struct mask task;  /* [T] its task constraint (col, task, node) */
	struct mask row;   /* [E] its row constraint */
	struct mask sel;   /* [N] one selector's indices, before intersecting */
	struct mask widen; /* [T] a node selector widened to tasks */
	bool has_ep, has_task, has_row;
	struct prog *progs; /* one selector's triplets */
	size_t nprogs, cap;
};

/* ---------------------------------------------------------------------- */
/* Bitmaps */

static size_t nwords(int64_t bits)
{
	return (size_t)((bits + 63) / 64);
}

static bool bit_test(const word *b, int64_t i)
{
	return (b[i >> 6] >> (i & 63)) & 1;
}

static void bit_put(word *b, int64_t i, bool on)
{
	if (on)
		b[i >> 6] |= (word)1 << (i & 63);
	else
		b[i >> 6] &= ~((word)1 << (i & 63));
}

/* Sets (on) or clears bits [lo, hi), a word at a time. */
static void bits_range(word *b, int64_t lo, int64_t hi, bool on)
{
	while (lo < hi) {
		int64_t w = lo >> 6,
			end = (w + 1) * 64 < hi ? (w + 1) * 64 : hi;
		int64_t n = end - lo;
		word mask =
		    n == 64 ? ~(word)0 : (((word)1 << n) - 1) << (lo & 63);

		if (on)
			b[w] |= mask;
		else
			b[w] &= ~mask;
		lo = end;
	}
}

/* The first set (want true) or clear (want false) bit at or after i, or
 * size when there is none. */
static int64_t bits_next(const word *b, int64_t i, int64_t size, bool want)
{
	while (i < size) {
		word w = want ? b[i >> 6] : ~b[i >> 6];

		w &= ~(word)0 << (i & 63);
		if (w != 0) {
			int64_t found = (i & ~(int64_t)63) + __builtin_ctzll(w);

			return found < size ? found : size;
		}
		i = (i & ~(int64_t)63) + 64;
	}
	return size;
}

static int64_t bits_count(const word *b, size_t lo, size_t hi)
{
	int64_t count = 0;

	for (size_t i = lo; i < hi; i++)
		count += __builtin_popcountll(b[i]);
	return count;
}

static void mask_clear(struct mask *b)
{
	memset(b->w + b->lo, 0, (b->hi - b->lo) * sizeof(word));
	b->lo = b->hi = 0;
}

/* Widens b's range of live words to cover bits [lo, hi), lo < hi. */
static void mask_touch(struct mask *b, int64_t lo, int64_t hi)
{
	size_t wl = (size_t)(lo >> 6), wh = (size_t)((hi - 1) >> 6) + 1;

	if (b->lo == b->hi) {
		b->lo = wl;
		b->hi = wh;
		return;
	}
	if (wl < b->lo)
		b->lo = wl;
	if (wh > b->hi)
		b->hi = wh;
}

/* The first set bit of b at or after i, or size when there is none. */
static int64_t mask_next(const struct mask *b, int64_t i, int64_t size)
{
	int64_t lo = (int64_t)b->lo * 64, hi = (int64_t)b->hi * 64;

	if (hi > size)
		hi = size;
	i = bits_next(b->w, i > lo ? i : lo, hi, true);
	return i < hi ? i : size;
}

/* dst = src for the first selector on an axis, else dst &= src. */
static void intersect(struct mask *dst, const struct mask *src, bool *has)
{
	size_t lo, hi;

	if (!*has) {
		mask_clear(dst);
		memcpy(dst->w + src->lo, src->w + src->lo,
		       (src->hi - src->lo) * sizeof(word));
		dst->lo = src->lo;
		dst->hi = src->hi;
		*has = true;
		return;
	}
	lo = dst->lo > src->lo ? dst->lo : src->lo;
	hi = dst->hi < src->hi ? dst->hi : src->hi;
	if (lo >= hi) {
		mask_clear(dst);
		return;
	}
	memset(dst->w + dst->lo, 0, (lo - dst->lo) * sizeof(word));
	memset(dst->w + hi, 0, (dst->hi - hi) * sizeof(word));
	for (size_t i = lo; i < hi; i++)
		dst->w[i] &= src->w[i];
	dst->lo = lo;
	dst->hi = hi;
}

/* ---------------------------------------------------------------------- */
/* Lexing and error reports */

static bool is_space(char c)
{
	return c == ' ' || c == '\t';
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static char at(const struct parser *p, size_t i)
{
	return i < p->len ? p->s[i] : '\0';
}

static void skip_space(struct parser *p)
{
	while (p->pos < p->len && is_space(p->s[p->pos]))
		p->pos++;
}

static bool at_end(const struct parser *p)
{
	return p->pos >= p->len;
}

/* An operator is '+' or '-' with whitespace (or the end) after it; the
 * caller has already seen whitespace before it. */
static bool at_operator(const struct parser *p)
{
	char c = at(p, p->pos), next = at(p, p->pos + 1);

	return (c == '+' || c == '-') && (next == '\0' || is_space(next));
}

#define fail(p, pos, ...)                                                      \
	topo__err_spec((p)->err, (p)->s, (int)(pos), __VA_ARGS__)

/* Quotes one character for a message: "x", "\"" or "\x01". */
static const char *show_char(char c, char buf[8])
{
	unsigned char u = (unsigned char)c;

	if (c == '"' || c == '\\')
		snprintf(buf, 8, "\"\\%c\"", c);
	else if (u >= 0x20 && u < 0x7f)
		snprintf(buf, 8, "\"%c\"", c);
	else
		snprintf(buf, 8, "\"\\x%02x\"", u);
	return buf;
}

/* Length of the run of letters at p->pos (a word: "all" or an axis). */
static size_t word_len(const struct parser *p)
{
	size_t n = 0;

	while (is_letter(at(p, p->pos + n)))
		n++;
	return n;
}

static bool word_is(const struct parser *p, size_t n, const char *w)
{
	return strlen(w) == n && memcmp(p->s + p->pos, w, n) == 0;
}

/* ---------------------------------------------------------------------- */
/* Reading */

/* A number: an optional '-' and decimal digits, within int32_t.  Reads
 * every digit once, however many there are. */
static int read_number(struct parser *p, int32_t *out)
{
	size_t start = p->pos, i = p->pos;
	bool negative = at(p, i) == '-', big = false;
	int64_t v = 0;

	if (negative)
		i++;
	if (!is_digit(at(p, i))) {
		if (is_space(at(p, i)) && i == start && start > 0 &&
		    (p->s[start - 1] == ',' || p->s[start - 1] == ':'))
			return fail(p, i,
				    "expected a number (an index list "
				    "has no spaces: 0:7:2,9)");
		return fail(p, i, "expected a number");
	}
	for (; is_digit(at(p, i)); i++) {
		if (!big)
			v = v * 10 + (p->s[i] - '0');
		if (v > (int64_t)INT32_MAX + 1)
			big = true;
	}
	if (negative)
		v = -v;
	if (big || v > INT32_MAX || v < INT32_MIN) {
		int n = (int)(i - start);

		return fail(p, start,
			    "number %.*s%s is out of range "
			    "(-2147483648..2147483647)",
			    n > 40 ? 40 : n, p->s + start, n > 40 ? "..." : "");
	}
	p->pos = i;
	*out = (int32_t)v;
	return 0;
}

static int64_t axis_size(const struct parser *p, enum axis axis)
{
	return p->size[axis];
}

/* What may follow a number that ends an index list element. */
static int after_number(struct parser *p, bool stride)
{
	char c = at(p, p->pos), buf[8];

	if (c == '\0' || is_space(c) || c == ',' || (!stride && c == ':'))
		return 0;
	if (c == '+' || c == '-')
		return fail(p, p->pos,
			    "expected \" + \" or \" - \" between "
			    "terms");
	if (stride)
		return fail(p, p->pos,
			    "unexpected %s after a stride (valid: "
			    "\",\", a space or the end)",
			    show_char(c, buf));
	return fail(p, p->pos,
		    "unexpected %s after a number (valid: \":\", "
		    "\",\", a space or the end)",
		    show_char(c, buf));
}

static int push_prog(struct parser *p, int64_t lo, int64_t hi, int64_t step)
{
	if (p->nprogs == p->cap) {
		size_t cap = p->cap != 0 ? 2 * p->cap : 16;
		struct prog *v;

		if (cap > SIZE_MAX / sizeof(*v))
			return TOPO_ENOMEM;
		v = topo__realloc(p->progs, cap * sizeof(*v));
		if (v == NULL)
			return TOPO_ENOMEM;
		p->progs = v;
		p->cap = cap;
	}
	p->progs[p->nprogs++] = (struct prog){lo, hi, step, lo % step};
	return 0;
}

/*
 * One triplet: first [':' [last] [':' stride]], as MPI_Group_range_incl
 * reads it.  Checked in this order, because the stride decides which
 * indices are selected: stride 0; first outside the axis; a stride that
 * goes away from last; the last selected index outside the axis.
 */
static int read_triplet(struct parser *p, const struct axis_word *aw)
{
	size_t first_pos = p->pos, last_pos = 0, colon_pos = 0;
	int32_t first, last = 0, stride = 1;
	bool colon = false, has_last = false, has_stride = false;
	int64_t size = axis_size(p, aw->axis), lo, k, far;
	int rc;

	rc = read_number(p, &first);
	if (rc != 0)
		return rc;
	if (at(p, p->pos) == ':') {
		colon = true;
		p->pos++;
		if (is_digit(at(p, p->pos)) || at(p, p->pos) == '-') {
			last_pos = p->pos;
			rc = read_number(p, &last);
			if (rc != 0)
				return rc;
			has_last = true;
		}
		if (at(p, p->pos) == ':') {
			colon_pos = p->pos++;
			rc = read_number(p, &stride);
			if (rc != 0)
				return rc;
			has_stride = true;
		} else if (!has_last) {
			char c = at(p, p->pos);

			/* "5:" is 5..last; anything else wants a number. */
			if (c != '\0' && !is_space(c) && c != ',')
				return fail(p, p->pos, "expected a number");
		}
	}
	rc = after_number(p, has_stride);
	if (rc != 0)
		return rc;

	if (stride == 0)
		return fail(p, colon_pos, "stride is 0");
	if (first < 0 || first >= size)
		return fail(p, first_pos, "%s %d does not exist (%s: 0..%lld)",
			    aw->one, (int)first, aw->many,
			    (long long)(size - 1));
	if (!colon)
		last = first; /* "5" is just 5 */
	else if (!has_last)
		last = stride > 0 ? (int32_t)(size - 1) : 0;
	if ((stride > 0 && last < first) || (stride < 0 && last > first)) {
		if (has_stride)
			return fail(p, colon_pos,
				    "stride %d goes away from last %d",
				    (int)stride, (int)last);
		return fail(p, last_pos,
			    "stride 1 goes away from last %d (count down "
			    "with %d:%d:-1)",
			    (int)last, (int)first, (int)last);
	}
	k = ((int64_t)last - first) / stride;
	far = first + k * stride;
	if (far < 0 || far >= size) {
		/* Only an explicit last can take the walk off the axis; name
		 * the first index it selects outside. */
		int64_t s = stride, bad;

		if (s > 0)
			bad = first + (size - first + s - 1) / s * s;
		else
			bad = first - (first / -s + 1) * -s;
		return fail(p, last_pos, "%s %lld does not exist (%s: 0..%lld)",
			    aw->one, (long long)bad, aw->many,
			    (long long)(size - 1));
	}
	lo = first < far ? first : far;
	rc = push_prog(p, lo, first < far ? far : first,
		       stride > 0 ? stride : -(int64_t)stride);
	if (rc != 0)
		return rc;
	return 0;
}

static int prog_cmp(const void *a, const void *b)
{
	const struct prog *x = a, *y = b;

	if (x->step != y->step)
		return x->step < y->step ? -1 : 1;
	if (x->res != y->res)
		return x->res < y->res ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return 0;
}

/*
 * Marks the selector's progressions into b (cleared first).  Progressions
 * of the same step and residue are walked in order of lo and each resumes
 * after the highest index its class has marked, so every index is marked at
 * most once per distinct step.
 */
static void mark(struct parser *p, struct mask *b)
{
	struct prog *v = p->progs;
	int64_t covered = -1;

	mask_clear(b);
	if (p->nprogs > 1)
		qsort(v, p->nprogs, sizeof(*v), prog_cmp);
	for (size_t i = 0; i < p->nprogs; i++) {
		int64_t start = v[i].lo, step = v[i].step;

		if (i == 0 || step != v[i - 1].step || v[i].res != v[i - 1].res)
			covered = -1;
		if (covered >= start)
			start = covered + step;
		if (start <= v[i].hi)
			mask_touch(b, start, v[i].hi + 1);
		if (step == 1)
			bits_range(b->w, start, v[i].hi + 1, true);
		else
			for (int64_t x = start; x <= v[i].hi; x += step)
				bit_put(b->w, x, true);
		if (v[i].hi > covered)
			covered = v[i].hi;
	}
}

/* AXIS triplet {',' triplet}, the axis word at p->pos (n letters). */
static int read_selector(struct parser *p, const struct axis_word *aw, size_t n)
{
	const topo_machine *m = p->m;
	int64_t size = axis_size(p, aw->axis);
	int rc;

	p->pos += n;
	if (!at_end(p) && !is_space(at(p, p->pos)))
		return fail(p, p->pos, "expected a space after \"%s\"",
			    aw->word);
	skip_space(p);
	p->nprogs = 0;
	for (;;) {
		rc = read_triplet(p, aw);
		if (rc != 0)
			return rc;
		if (at(p, p->pos) != ',')
			break;
		p->pos++;
	}
	if (p->check_only)
		return 0;
	mark(p, &p->sel);
	switch (aw->axis) {
	case AXIS_ROW:
		intersect(&p->row, &p->sel, &p->has_row);
		break;
	case AXIS_TASK:
		intersect(&p->task, &p->sel, &p->has_task);
		break;
	case AXIS_NODE:
		/* A node stands for its tasks' endpoints: widen. */
		mask_clear(&p->widen);
		for (int64_t i = mask_next(&p->sel, 0, size); i < size;
		     i = mask_next(&p->sel, i + 1, size)) {
			int64_t lo = m->node_first_task[i];
			int64_t hi = m->node_first_task[i + 1];

			mask_touch(&p->widen, lo, hi);
			bits_range(p->widen.w, lo, hi, true);
		}
		intersect(&p->task, &p->widen, &p->has_task);
		break;
	case AXIS_EP:
		intersect(&p->ep, &p->sel, &p->has_ep);
		break;
	}
	return 0;
}

/* Adds (on) or removes the current term's endpoints from the value. */
static void apply_term(struct parser *p, bool all, bool on)
{
	int64_t N = p->m->endpoints, T = p->m->tasks, E = p->m->eps_per_task;
	bool all_rows =
	    !p->has_row || bits_count(p->row.w, p->row.lo, p->row.hi) == E;

	if (all || (all_rows && !p->has_task && !p->has_ep)) {
		bits_range(p->value, 0, N, on);
	} else if (p->has_ep && !p->has_task && all_rows) {
		for (size_t i = p->ep.lo; i < p->ep.hi; i++)
			p->value[i] = on ? p->value[i] | p->ep.w[i]
					 : p->value[i] & ~p->ep.w[i];
	} else if (p->has_ep) {
		for (int64_t e = mask_next(&p->ep, 0, N); e < N;
		     e = mask_next(&p->ep, e + 1, N)) {
			if (p->has_task && !bit_test(p->task.w, e / E))
				continue;
			if (!all_rows && !bit_test(p->row.w, e % E))
				continue;
			bit_put(p->value, e, on);
		}
	} else if (all_rows && E == 1) {
		/* One endpoint per task: the task mask is the term. */
		for (size_t i = p->task.lo; i < p->task.hi; i++)
			p->value[i] = on ? p->value[i] | p->task.w[i]
					 : p->value[i] & ~p->task.w[i];
	} else if (all_rows) {
		/* Whole columns: each run of selected tasks is one range. */
		for (int64_t t = mask_next(&p->task, 0, T); t < T;) {
			int64_t end = bits_next(p->task.w, t, T, false);

			bits_range(p->value, t * E, end * E, on);
			t = mask_next(&p->task, end, T);
		}
	} else {
		for (int64_t t = p->has_task ? mask_next(&p->task, 0, T) : 0;
		     t < T;
		     t = p->has_task ? mask_next(&p->task, t + 1, T) : t + 1)
			for (int64_t r = mask_next(&p->row, 0, E); r < E;
			     r = mask_next(&p->row, r + 1, E))
				bit_put(p->value, t * E + r, on);
	}
}

/*
 * term := 'all' | selector {selector}.  Leaves p->pos at the operator that
 * follows or at the end.  *all tells whether the term was "all".
 */
static int read_term(struct parser *p, bool *all)
{
	bool selectors = false;
	int rc;

	p->has_ep = p->has_task = p->has_row = false;
	*all = false;
	for (;;) {
		size_t n = word_len(p);
		const struct axis_word *aw = NULL;

		if (n == 0 || (*all && word_is(p, n, "all"))) {
			if (selectors || *all)
				return fail(p, p->pos,
					    "expected \" + \" or "
					    "\" - \" between terms");
			return fail(p, p->pos,
				    "expected an axis (" VALID_AXES
				    ") or \"all\"");
		}
		if (word_is(p, n, "all")) {
			if (selectors)
				return fail(p, p->pos,
					    "\"all\" cannot be "
					    "combined with selectors");
			p->pos += n;
			*all = true;
		} else {
			for (size_t i = 0;
			     i < sizeof(axis_words) / sizeof(axis_words[0]);
			     i++)
				if (word_is(p, n, axis_words[i].word))
					aw = &axis_words[i];
			if (aw == NULL)
				return fail(p, p->pos,
					    "unknown axis \"%.*s%s\" "
					    "(valid: " VALID_AXES ", or all)",
					    n > 40 ? 40 : (int)n, p->s + p->pos,
					    n > 40 ? "..." : "");
			if (*all)
				return fail(p, p->pos,
					    "\"all\" cannot be "
					    "combined with selectors");
			rc = read_selector(p, aw, n);
			if (rc != 0)
				return rc;
			selectors = true;
		}
		/* A term ends at the end or at an operator; whitespace and a
		 * word juxtapose another selector. */
		if (at_end(p))
			return 0;
		if (!is_space(at(p, p->pos)))
			return fail(p, p->pos,
				    "expected \" + \" or \" - \" "
				    "between terms");
		skip_space(p);
		if (at_end(p) || at_operator(p))
			return 0;
		if (!is_letter(at(p, p->pos)))
			return fail(p, p->pos,
				    "expected \" + \" or \" - \" "
				    "between terms");
	}
}

static int alloc_maps(struct parser *p)
{
	const topo_machine *m = p->m;

	p->value = topo__calloc(nwords(m->endpoints), sizeof(word));
	p->ep.w = topo__calloc(nwords(m->endpoints), sizeof(word));
	p->sel.w = topo__calloc(nwords(m->endpoints), sizeof(word));
	p->task.w = topo__calloc(nwords(m->tasks), sizeof(word));
	p->widen.w = topo__calloc(nwords(m->tasks), sizeof(word));
	p->row.w = topo__calloc(nwords(m->eps_per_task), sizeof(word));
	if (p->value == NULL || p->ep.w == NULL || p->sel.w == NULL ||
	    p->task.w == NULL || p->widen.w == NULL || p->row.w == NULL)
		return TOPO_ENOMEM;
	return 0;
}

/* Reads the whole spec, applying each term unless only checking. */
static int read_spec(struct parser *p)
{
	bool all;
	int rc;

	p->len = strlen(p->s);
	if (p->len > INT_MAX)
		return fail(p, 0, "spec is too long (%zu characters)", p->len);
	skip_space(p);
	if (at_end(p))
		return fail(p, 0,
			    "spec is empty (expected \"all\" or "
			    "selectors such as \"cols 0::2\")");
	rc = read_term(p, &all);
	if (rc != 0)
		return rc;
	if (!p->check_only)
		apply_term(p, all, true);
	while (!at_end(p)) {
		/* read_term stopped at an operator with whitespace around. */
		char op = p->s[p->pos++];

		skip_space(p);
		if (at_end(p))
			return fail(p, p->pos, "expected a term after \"%c\"",
				    op);
		rc = read_term(p, &all);
		if (rc != 0)
			return rc;
		if (!p->check_only)
			apply_term(p, all, op == '+');
	}
	return 0;
}

int topo__spec_syntax(int32_t rows, int32_t tasks, int32_t nodes,
		      int32_t endpoints, const char *spec, topo_error *err)
{
	struct parser p = {.s = spec, .err = err, .check_only = true};
	int rc;

	if (spec == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "a spec is required");
	p.size[AXIS_ROW] = rows;
	p.size[AXIS_TASK] = tasks;
	p.size[AXIS_NODE] = nodes;
	p.size[AXIS_EP] = endpoints;
	rc = read_spec(&p);
	if (rc == TOPO_ENOMEM)
		topo__err(err, rc, NULL, NULL,
			  "out of memory reading spec \"%.200s\"", spec);
	topo__free(p.progs);
	return rc;
}

int topo__spec_eval(const topo_machine *m, const char *spec, int32_t **members,
		    int32_t *n, topo_error *err)
{
	struct parser p = {.s = spec, .m = m, .err = err};
	int64_t count, N;
	int32_t *out = NULL;
	int rc;

	*members = NULL;
	*n = 0;
	if (m == NULL || spec == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "a machine and a spec are required");
	N = m->endpoints;
	p.size[AXIS_ROW] = m->eps_per_task;
	p.size[AXIS_TASK] = m->tasks;
	p.size[AXIS_NODE] = m->nodes;
	p.size[AXIS_EP] = m->endpoints;
	rc = alloc_maps(&p);
	if (rc == 0)
		rc = read_spec(&p);
	if (rc != 0)
		goto out;

	count = bits_count(p.value, 0, nwords(N));
	if (count == 0) {
		rc = fail(&p, 0, "selects no endpoints");
		goto out;
	}
	out = topo__mallocarray((size_t)count, sizeof(int32_t));
	if (out == NULL) {
		rc = TOPO_ENOMEM;
		goto out;
	}
	for (size_t w = 0, i = 0; w < nwords(N); w++) {
		int32_t base = (int32_t)(w * 64);

		/* Bits past N are never set, so whole words are safe. */
		for (word bits = p.value[w]; bits != 0; bits &= bits - 1)
			out[i++] = base + __builtin_ctzll(bits);
	}
	*members = out;
	*n = (int32_t)count;
out:
	if (rc == TOPO_ENOMEM)
		topo__err(err, rc, NULL, NULL,
			  "out of memory evaluating spec "
			  "\"%.200s\" over %lld endpoints",
			  spec, (long long)N);
	topo__free(p.value);
	topo__free(p.ep.w);
	topo__free(p.sel.w);
	topo__free(p.task.w);
	topo__free(p.widen.w);
	topo__free(p.row.w);
	topo__free(p.progs);
	return rc;
}
