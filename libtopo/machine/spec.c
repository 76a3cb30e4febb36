/*
 * spec.c - stride specifications (collc(7); seed 003): reading a spec such
 * as "cols 7:0:-2 + node 0" and evaluating it over a machine's endpoint
 * table into the ascending list of selected endpoint ids.
 *
 * The text is read in one left-to-right pass, so the error reported is the
 * first one in reading order.  Sets are psets (pset.h): sorted runs of
 * periodic patterns, so "ep 0::2" is one run whatever the machine's size
 * and the cost of a spec follows the spec and its result, not the number of
 * endpoints.  Each selector's triplets become the union of their
 * progressions; the selectors of a term are intersected per axis (rows,
 * tasks, endpoints; node selectors are widened to their tasks), and the
 * term becomes a set of endpoints.  The terms are then combined in one
 * sweep (topo__pset_chain): an endpoint is selected when the last term that
 * holds it is added, which is what evaluating left to right gives.
 *
 * Whitespace (spaces, tabs) separates the words of a spec: axis names,
 * index lists and operators.  An index list ("0:7:2,9") is one word; an
 * operator needs whitespace on both sides, which is what tells "7:0:-2"
 * (a negative stride) from a difference.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include "machine/hostlist.h"
#include "machine/hosts.h"
#include "pset.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* AXIS_HOSTS is a selector of nodes by name, not an axis of indices. */
enum axis { AXIS_ROW, AXIS_TASK, AXIS_NODE, AXIS_EP, AXIS_HOSTS };

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
    {"host", AXIS_HOSTS, "host", "hosts"},
    {"hosts", AXIS_HOSTS, "host", "hosts"},
};

#define VALID_AXES "row, col, task, node, ep, hosts"

struct parser {
	const char *s;
	size_t len, pos;
	const topo_machine *m; /* NULL when only checking */
	int64_t size[4];       /* of each axis, by enum axis */
	bool check_only;       /* read and check, select nothing */
	topo_error *err;
	struct pset_work *work;
	/* the current term's constraints, by axis */
	struct pset ep, task, row;
	bool has_ep, has_task, has_row;
	struct pset sel, wide, tmp; /* a selector, widened; scratch */
	struct pset_prog *progs; /* one selector's triplets */
	size_t nprogs, cap;
	/* the terms read so far, and whether each is taken away */
	struct pset *terms;
	bool *minus;
	size_t nterms, tcap;
};

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
			    topo__show_char(c, buf));
	return fail(p, p->pos,
		    "unexpected %s after a number (valid: \":\", "
		    "\",\", a space or the end)",
		    topo__show_char(c, buf));
}

static int push_prog(struct parser *p, int64_t lo, int64_t last, int64_t step)
{
	if (p->nprogs == p->cap) {
		size_t cap = p->cap != 0 ? 2 * p->cap : 16;
		struct pset_prog *v;

		if (cap > SIZE_MAX / sizeof(*v))
			return TOPO_ENOMEM;
		v = topo__realloc(p->progs, cap * sizeof(*v));
		if (v == NULL)
			return TOPO_ENOMEM;
		p->progs = v;
		p->cap = cap;
	}
	p->progs[p->nprogs++] = (struct pset_prog){lo, last, step};
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

/* dst = src for the first selector on an axis, else dst &= src. */
static int constrain(struct parser *p, struct pset *dst, struct pset *src,
		     bool *has)
{
	int rc;

	if (!*has) {
		topo__pset_move(dst, src);
		*has = true;
		return 0;
	}
	rc = topo__pset_and(p->work, dst, src, &p->tmp);
	if (rc == 0)
		topo__pset_move(dst, &p->tmp);
	return rc;
}

/* The nodes of p->sel stand for their tasks: widen them, and constrain
 * the term's tasks. */
static int widen_nodes(struct parser *p)
{
	const topo_machine *m = p->m;
	int rc;

	if (m->uniform_tasks != 0)
		rc = topo__pset_expand(p->work, &p->sel, m->uniform_tasks, NULL,
				       &p->wide);
	else
		rc = topo__pset_widen(&p->sel, m->node_first_task, &p->wide);
	if (rc != 0)
		return rc;
	return constrain(p, &p->task, &p->wide, &p->has_task);
}

/* AXIS triplet {',' triplet}, the axis word at p->pos (n letters). */
static int read_selector(struct parser *p, const struct axis_word *aw, size_t n)
{
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
	rc =
	    topo__pset_union_progs(p->work, p->progs, p->nprogs, size, &p->sel);
	if (rc != 0)
		return rc;
	switch (aw->axis) {
	case AXIS_ROW:
		return constrain(p, &p->row, &p->sel, &p->has_row);
	case AXIS_TASK:
		return constrain(p, &p->task, &p->sel, &p->has_task);
	case AXIS_NODE:
		return widen_nodes(p);
	case AXIS_EP:
		return constrain(p, &p->ep, &p->sel, &p->has_ep);
	case AXIS_HOSTS:
		break; /* read_hosts' */
	}
	return 0;
}

/* The hosts selector's lookups: each name becomes its node. */
struct host_sel {
	struct parser *p;
	size_t start; /* of the expression in the spec */
};

static int host_node(void *arg, const char *name, size_t len, size_t item)
{
	struct host_sel *h = arg;
	int32_t node = topo__host_find(h->p->m, name, len);

	if (node < 0)
		return fail(
		    h->p, h->start + item, "no node is named \"%.*s%s\"",
		    len > 40 ? 40 : (int)len, name, len > 40 ? "..." : "");
	return push_prog(h->p, node, node, 1);
}

/*
 * "hosts HOSTLIST", the word at p->pos (n letters): the endpoints of the
 * nodes named by a hostlist expression (collc(5)), which runs to the next
 * whitespace.  Only its syntax is checked without a machine; with one,
 * every name must be a node's.
 */
static int read_hosts(struct parser *p, size_t n)
{
	struct topo__hostlist_error e;
	struct host_sel h = {p, 0};
	size_t word = p->pos, len = 0;
	int rc;

	p->pos += n;
	if (!at_end(p) && !is_space(at(p, p->pos)))
		return fail(p, p->pos, "expected a space after \"%.*s\"",
			    (int)n, p->s + word);
	skip_space(p);
	h.start = p->pos;
	while (p->pos + len < p->len && !is_space(p->s[p->pos + len]))
		len++;
	if (len == 0)
		return fail(p, p->pos,
			    "expected host names after \"%.*s\" (a hostlist "
			    "such as dev[0-5,9])",
			    (int)n, p->s + word);
	if (!p->check_only && p->m->hosts == NULL)
		return fail(p, word,
			    "the machine names no nodes (no \"hosts\" in its "
			    "description)");
	p->nprogs = 0;
	rc = topo__hostlist_expand(p->s + h.start, len,
				   p->check_only ? NULL : host_node, &h, NULL,
				   &e);
	if (rc == TOPO_EINVAL)
		return fail(p, h.start + e.pos, "%s", e.text);
	if (rc != 0)
		return rc;
	p->pos += len;
	if (p->check_only)
		return 0;
	rc = topo__pset_union_progs(p->work, p->progs, p->nprogs, p->m->nodes,
				    &p->sel);
	if (rc == 0)
		rc = widen_nodes(p);
	return rc;
}

/* The current term as a set of endpoints, appended to the terms. */
static int end_term(struct parser *p, bool all, bool minus)
{
	int64_t N = p->m->endpoints, T = p->m->tasks, E = p->m->eps_per_task;
	bool rows = p->has_row && !topo__pset_is_range(&p->row, 0, E);
	struct pset term = {0}, base = {0};
	int rc = 0;

	if (p->nterms == p->tcap) {
		size_t cap = p->tcap != 0 ? 2 * p->tcap : 8;
		struct pset *t;
		bool *mn;

		if (cap > SIZE_MAX / sizeof(*t))
			return TOPO_ENOMEM;
		t = topo__realloc(p->terms, cap * sizeof(*t));
		if (t == NULL)
			return TOPO_ENOMEM;
		p->terms = t;
		mn = topo__realloc(p->minus, cap * sizeof(*mn));
		if (mn == NULL)
			return TOPO_ENOMEM;
		p->minus = mn;
		p->tcap = cap;
	}
	if (all || (!p->has_task && !rows && !p->has_ep)) {
		rc = topo__pset_push_full(&term, 0, N);
	} else if (!p->has_task && !rows) {
		topo__pset_move(&term, &p->ep);
	} else {
		if (!p->has_task)
			rc = topo__pset_push_full(&p->task, 0, T);
		if (rc == 0)
			rc = topo__pset_expand(p->work, &p->task, E,
					       rows ? &p->row : NULL, &base);
		if (rc == 0 && p->has_ep)
			rc = topo__pset_and(p->work, &base, &p->ep, &term);
		else if (rc == 0)
			topo__pset_move(&term, &base);
	}
	topo__pset_free(&base);
	topo__pset_free(&p->ep);
	topo__pset_free(&p->task);
	topo__pset_free(&p->row);
	if (rc != 0) {
		topo__pset_free(&term);
		return rc;
	}
	p->terms[p->nterms] = term;
	p->minus[p->nterms++] = minus;
	return 0;
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
			rc = aw->axis == AXIS_HOSTS ? read_hosts(p, n)
						    : read_selector(p, aw, n);
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

/* Reads the whole spec, making each term a set unless only checking. */
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
	if (!p->check_only) {
		rc = end_term(p, all, false);
		if (rc != 0)
			return rc;
	}
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
		if (!p->check_only) {
			rc = end_term(p, all, op == '-');
			if (rc != 0)
				return rc;
		}
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
	struct pset result = {0};
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
	p.work = topo__pset_work_new();
	rc = p.work != NULL ? read_spec(&p) : TOPO_ENOMEM;
	if (rc == 0 && p.nterms == 1 && !p.minus[0])
		topo__pset_move(&result, &p.terms[0]);
	else if (rc == 0)
		rc = topo__pset_chain(p.work, p.terms, p.minus, p.nterms,
				      &result);
	if (rc != 0)
		goto out;

	count = topo__pset_count(&result);
	if (count == 0) {
		rc = fail(&p, 0, "selects no endpoints");
		goto out;
	}
	out = topo__mallocarray((size_t)count, sizeof(int32_t));
	if (out == NULL) {
		rc = TOPO_ENOMEM;
		goto out;
	}
	rc = topo__pset_members(&result, out);
	if (rc != 0) {
		topo__free(out);
		goto out;
	}
	*members = out;
	*n = (int32_t)count;
out:
	if (rc == TOPO_ENOMEM)
		topo__err(err, rc, NULL, NULL,
			  "out of memory evaluating spec "
			  "\"%.200s\" over %lld endpoints",
			  spec, (long long)N);
	topo__pset_free(&result);
	for (size_t i = 0; i < p.nterms; i++)
		topo__pset_free(&p.terms[i]);
	topo__free(p.terms);
	topo__free(p.minus);
	topo__pset_free(&p.ep);
	topo__pset_free(&p.task);
	topo__pset_free(&p.row);
	topo__pset_free(&p.sel);
	topo__pset_free(&p.wide);
	topo__pset_free(&p.tmp);
	topo__free(p.progs);
	topo__pset_work_free(p.work);
	return rc;
}
