/*
 * hostlist.c - host names and Slurm's hostlist expressions (hostlist.h).
 *
 * An expression is read whole into items, bracket groups and ranges, and
 * counted, before the first name is made: a caller learns the count (and
 * every syntax error) without paying for the names, and an expression that
 * would expand to millions of names fails at once.  The names are then
 * made one at a time into one buffer, an odometer over each item's
 * groups, so expanding costs no memory per name.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include "hostlist.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct range {
	uint32_t lo, hi;
	int width; /* digits LO was written with */
};

struct group {
	size_t pre, pre_len; /* the text before the bracket */
	size_t first, n;     /* its ranges */
};

struct item {
	size_t pos;
	size_t first, n;       /* its groups */
	size_t tail, tail_len; /* the text after the last group */
	uint64_t count;
};

struct parsed {
	const char *s;
	size_t len;
	struct range *ranges;
	struct group *groups;
	struct item *items;
	size_t nranges, ngroups, nitems;
	uint64_t total;
	struct topo__hostlist_error *e;
};

bool topo__host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_';
}

#define VALID_CHARS "letters, digits, \".\", \"-\", \"_\""

const char *topo__host_check(const char *name, size_t len, char *why,
			     size_t size)
{
	char c[8];

	if (len == 0)
		snprintf(why, size, "is empty");
	else if (len > TOPO__HOST_MAX)
		snprintf(why, size, "is %zu bytes long (at most %d)", len,
			 TOPO__HOST_MAX);
	else
		for (size_t i = 0;; i++) {
			if (i == len)
				return NULL;
			if (!topo__host_char(name[i])) {
				snprintf(why, size,
					 "has the character %s at %zu (valid: "
					 "" VALID_CHARS ")",
					 topo__show_char(name[i], c), i);
				break;
			}
		}
	return why;
}

__attribute__((format(printf, 3, 4))) static int
fail(struct parsed *p, size_t pos, const char *fmt, ...)
{
	va_list ap;

	p->e->pos = pos;
	va_start(ap, fmt);
	vsnprintf(p->e->text, sizeof(p->e->text), fmt, ap);
	va_end(ap);
	return TOPO_EINVAL;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* A number of at most TOPO__HOSTLIST_DIGITS digits at *i. */
static int read_number(struct parsed *p, size_t *i, size_t open, uint32_t *v,
		       int *width)
{
	size_t start = *i;
	char c[8];

	if (*i == p->len)
		return fail(p, open, "unmatched \"[\"");
	if (!is_digit(p->s[*i]))
		return fail(p, *i, "expected a number in brackets (got %s)",
			    topo__show_char(p->s[*i], c));
	*v = 0;
	for (; *i < p->len && is_digit(p->s[*i]); (*i)++) {
		if (*i - start == TOPO__HOSTLIST_DIGITS)
			return fail(p, start, "number of more than %d digits",
				    TOPO__HOSTLIST_DIGITS);
		*v = *v * 10 + (uint32_t)(p->s[*i] - '0');
	}
	*width = (int)(*i - start);
	return 0;
}

static int digits(uint32_t v)
{
	int n = 1;

	while (v >= 10) {
		v /= 10;
		n++;
	}
	return n;
}

/* One bracket group, *i just past its "[" at open: ranges up to "]".
 * *count gets the numbers it holds (at most TOPO__HOSTLIST_MAX + 1, which
 * is already too many), *width the widest of them. */
static int read_group(struct parsed *p, size_t *i, size_t open, uint64_t *count,
		      int *width)
{
	struct range *r;
	size_t lo_pos;
	int hi_width, rc;
	char c[8];

	*count = 0;
	*width = 0;
	for (;;) {
		r = &p->ranges[p->nranges];
		lo_pos = *i;
		rc = read_number(p, i, open, &r->lo, &r->width);
		if (rc != 0)
			return rc;
		r->hi = r->lo;
		if (*i < p->len && p->s[*i] == '-') {
			(*i)++;
			rc = read_number(p, i, open, &r->hi, &hi_width);
			if (rc != 0)
				return rc;
			if (r->lo > r->hi)
				return fail(p, lo_pos,
					    "range %.*s goes down (want LO-HI "
					    "with LO <= HI)",
					    (int)(*i - lo_pos), p->s + lo_pos);
		}
		p->nranges++;
		*count += (uint64_t)(r->hi - r->lo) + 1;
		if (*count > TOPO__HOSTLIST_MAX)
			*count = TOPO__HOSTLIST_MAX + 1;
		if (digits(r->hi) > *width)
			*width = digits(r->hi);
		if (r->width > *width)
			*width = r->width;
		if (*i == p->len)
			return fail(p, open, "unmatched \"[\"");
		if (p->s[*i] == ']') {
			(*i)++;
			return 0;
		}
		if (p->s[*i] != ',')
			return fail(p, *i,
				    "unexpected %s in brackets (valid: digits, "
				    "\"-\", \",\", \"]\")",
				    topo__show_char(p->s[*i], c));
		(*i)++;
	}
}

/* One item at *i, up to the next "," outside brackets or the end. */
static int read_item(struct parsed *p, size_t *i)
{
	struct item *it = &p->items[p->nitems];
	size_t lit = *i, longest = 0;
	uint64_t count;
	char c[8];
	int width, rc;

	*it = (struct item){.pos = *i, .first = p->ngroups, .count = 1};
	while (*i < p->len && p->s[*i] != ',') {
		char ch = p->s[*i];

		if (ch == '[') {
			struct group *g = &p->groups[p->ngroups++];

			*g = (struct group){lit, *i - lit, p->nranges, 0};
			longest += *i - lit;
			(*i)++;
			rc = read_group(p, i, *i - 1, &count, &width);
			if (rc != 0)
				return rc;
			g->n = p->nranges - g->first;
			longest += (size_t)width;
			it->count *= count;
			if (it->count > TOPO__HOSTLIST_MAX)
				it->count = TOPO__HOSTLIST_MAX + 1;
			lit = *i;
		} else if (ch == ']') {
			return fail(p, *i, "unmatched \"]\"");
		} else if (!topo__host_char(ch)) {
			return fail(p, *i,
				    "unexpected %s (valid in a host name: "
				    "" VALID_CHARS ")",
				    topo__show_char(ch, c));
		} else {
			(*i)++;
		}
	}
	it->n = p->ngroups - it->first;
	it->tail = lit;
	it->tail_len = *i - lit;
	longest += *i - lit;
	if (*i == it->pos)
		return fail(p, it->pos,
			    "empty item (two commas, or a comma at an end)");
	if (longest > TOPO__HOST_MAX)
		return fail(p, it->pos, "makes names of %zu bytes (at most %d)",
			    longest, TOPO__HOST_MAX);
	p->total += it->count;
	if (p->total > TOPO__HOSTLIST_MAX)
		return fail(p, it->pos, "expands to more than %ld names",
			    (long)TOPO__HOSTLIST_MAX);
	p->nitems++;
	return 0;
}

static int parse(struct parsed *p)
{
	size_t i = 0;
	int rc;

	if (p->len == 0)
		return fail(p, 0, "the expression is empty");
	for (;;) {
		rc = read_item(p, &i);
		if (rc != 0)
			return rc;
		if (i == p->len)
			return 0;
		i++; /* the comma; an item must follow */
	}
}

/* Writes the name at the odometer's position into buf. */
static size_t make_name(const struct parsed *p, const struct item *it,
			const size_t *ri, const uint32_t *v, char *buf)
{
	size_t n = 0;

	for (size_t g = 0; g < it->n; g++) {
		const struct group *gr = &p->groups[it->first + g];

		memcpy(buf + n, p->s + gr->pre, gr->pre_len);
		n += gr->pre_len;
		n += (size_t)sprintf(buf + n, "%0*u", p->ranges[ri[g]].width,
				     (unsigned)v[g]);
	}
	memcpy(buf + n, p->s + it->tail, it->tail_len);
	n += it->tail_len;
	buf[n] = '\0';
	return n;
}

/* Calls fn with every name of item it, the rightmost group fastest. */
static int expand_item(const struct parsed *p, const struct item *it,
		       size_t *ri, uint32_t *v, topo__hostlist_fn fn, void *arg)
{
	char name[TOPO__HOST_MAX + 1];
	size_t len;
	int rc;

	for (size_t g = 0; g < it->n; g++) {
		ri[g] = p->groups[it->first + g].first;
		v[g] = p->ranges[ri[g]].lo;
	}
	for (;;) {
		size_t g = it->n;

		len = make_name(p, it, ri, v, name);
		rc = fn(arg, name, len, it->pos);
		if (rc != 0)
			return rc;
		/* Next: bump the last group, carrying leftwards. */
		while (g > 0) {
			const struct group *gr = &p->groups[it->first + g - 1];

			g--;
			if (v[g] < p->ranges[ri[g]].hi) {
				v[g]++;
				break;
			}
			if (++ri[g] < gr->first + gr->n) {
				v[g] = p->ranges[ri[g]].lo;
				break;
			}
			ri[g] = gr->first;
			v[g] = p->ranges[ri[g]].lo;
			if (g == 0)
				return 0;
		}
		if (it->n == 0)
			return 0;
	}
}

int topo__hostlist_expand(const char *s, size_t len, topo__hostlist_fn fn,
			  void *arg, size_t *count,
			  struct topo__hostlist_error *e)
{
	struct parsed p = {.s = s, .len = len, .e = e};
	size_t commas = 0, brackets = 0, *ri = NULL;
	uint32_t *v = NULL;
	int rc = TOPO_ENOMEM;

	/* Sized by the punctuation, not the length: a long list of long
	 * names needs little.  Items are separated by commas, groups open
	 * with "[", and a group's ranges by commas. */
	for (size_t i = 0; i < len; i++) {
		commas += s[i] == ',';
		brackets += s[i] == '[';
	}
	p.ranges = topo__mallocarray(commas + brackets + 1, sizeof(*p.ranges));
	p.groups = topo__mallocarray(brackets + 1, sizeof(*p.groups));
	p.items = topo__mallocarray(commas + 1, sizeof(*p.items));
	ri = topo__mallocarray(brackets + 1, sizeof(*ri));
	v = topo__mallocarray(brackets + 1, sizeof(*v));
	if (p.ranges == NULL || p.groups == NULL || p.items == NULL ||
	    ri == NULL || v == NULL)
		goto out;
	rc = parse(&p);
	if (rc != 0)
		goto out;
	if (count != NULL)
		*count = (size_t)p.total;
	for (size_t i = 0; fn != NULL && rc == 0 && i < p.nitems; i++)
		rc = expand_item(&p, &p.items[i], ri, v, fn, arg);
out:
	topo__free(p.ranges);
	topo__free(p.groups);
	topo__free(p.items);
	topo__free(ri);
	topo__free(v);
	return rc;
}
