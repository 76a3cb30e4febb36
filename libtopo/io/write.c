/*
 * write.c - writing a compiled machine as a collc-routes document
 * (collc(5)), streamed straight to a FILE without building JSON objects,
 * and measuring exactly how many bytes that would be without writing it.
 *
 * A million-endpoint world has some ten million route rows, so everything
 * here is about bytes per second: one large buffer of our own, integers
 * formatted by hand, and rows of the derived tables assembled from
 * pre-formatted neighbour lists by memcpy.  The layout is fixed (2-space
 * indentation, numeric arrays on one line, one route row per line) so that
 * equal documents are equal byte for byte.
 *
 * Full route tables are most of such an output (a member with d
 * neighbours has d + 1 rows and about d^2 targets).  Version 2's default
 * encoding writes a table as the rule of collc(7) plus its departures
 * from it (routes.c), linear in the members; TOPO_WRITE_FULL_ROUTES spells
 * every row out, TOPO_WRITE_NO_ROUTES leaves the table out.
 *
 * Measuring runs the very same code with a sink that counts: every small
 * item is formatted into the buffer and discarded, and the bulk of full
 * tables (out_put of pre-formatted neighbour lists) is only counted, so a
 * 29 GB output is measured in the time it takes to format its
 * neighbour lists once.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <errno.h>
#include <string.h>

/* Full buffers go to fwrite in one call; 1 MiB amortises the call and
 * stays far below the memory budget. */
#define OUT_SIZE (1u << 20)
/* Room that every small put (one integer, one punctuation run) may count
 * on without checking again. */
#define OUT_SLACK 64

struct out {
	FILE *f;	/* NULL: measuring */
	char *buf;
	size_t len;
	int rc; /* first failure; once set, nothing more is written */
	topo_error *err;
	unsigned flags;	  /* TOPO_WRITE_* */
	uint64_t counted; /* bytes passed on (written or measured) */
};

#define TOPO_WRITE_ALL_FLAGS                                                   \
	(TOPO_WRITE_NO_ROUTES | TOPO_WRITE_FULL_ROUTES | TOPO_WRITE_VERSION_1)

/* Per-tree scratch for the derived route rows of one member. */
struct nbrs {
	int32_t *rank; /* [cap] neighbour ranks, ascending */
	int32_t *off;  /* [cap + 1] start of each neighbour in text */
	char *text;    /* [cap * 12] "e1, e2, ..." endpoint ids */
	size_t cap;
};

static void out_fail_errno(struct out *o, const char *what)
{
	int e = errno;

	if (o->rc != 0)
		return;
	/* The caller (collc) says "FILE: cannot write: TEXT", so TEXT is the
	 * system's reason alone. */
	o->rc = topo__err(o->err, TOPO_EIO, NULL, NULL, "%s",
			  e != 0 ? strerror(e) : what);
}

static void out_flush(struct out *o)
{
	if (o->rc == 0 && o->len > 0 && o->f != NULL) {
		errno = 0;
		if (fwrite(o->buf, 1, o->len, o->f) != o->len)
			out_fail_errno(o, "write error");
	}
	o->counted += o->len;
	o->len = 0;
}

/* Makes room for OUT_SLACK bytes and returns where they go. */
static inline char *out_room(struct out *o)
{
	if (o->len + OUT_SLACK > OUT_SIZE)
		out_flush(o);
	return o->buf + o->len;
}

static void out_put(struct out *o, const char *s, size_t n)
{
	if (o->f == NULL) {
		o->counted += n; /* measuring: the bytes need not exist */
		return;
	}
	while (n > 0) {
		size_t room = OUT_SIZE - o->len;

		if (room == 0) {
			out_flush(o);
			continue;
		}
		if (room > n)
			room = n;
		memcpy(o->buf + o->len, s, room);
		o->len += room;
		s += room;
		n -= room;
	}
}

/* lit must be a string literal: "" lit "" will not compile otherwise,
 * which keeps sizeof honest. */
#define OUT_LIT(o, lit) out_put((o), "" lit "", sizeof("" lit "") - 1)

/* Starts an item of a multi-line array: a newline, or a comma and one. */
static void out_item(struct out *o, int first)
{
	if (first)
		OUT_LIT(o, "\n");
	else
		OUT_LIT(o, ",\n");
}

static const char digit_pairs[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233"
    "34353637383940414243444546474849505152535455565758596061626364656667"
    "68697071727374757677787980818283848586878889909192939495969798"
    "99";

/* Formats v at p (at most 11 bytes) and returns the length.  Two digits
 * per step from a table: this is the writer's innermost loop. */
static inline size_t fmt_i32(char *p, int32_t v)
{
	char tmp[12], *e = tmp + sizeof(tmp), *s = e;
	uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
	size_t n;

	while (u >= 100) {
		uint32_t q = u / 100, r = u - q * 100;

		s -= 2;
		memcpy(s, digit_pairs + 2 * r, 2);
		u = q;
	}
	if (u >= 10) {
		s -= 2;
		memcpy(s, digit_pairs + 2 * u, 2);
	} else {
		*--s = (char)('0' + u);
	}
	if (v < 0)
		*--s = '-';
	n = (size_t)(e - s);
	memcpy(p, s, n);
	return n;
}

static inline void out_i32(struct out *o, int32_t v)
{
	char *p = out_room(o);

	o->len += fmt_i32(p, v);
}

static void out_i64(struct out *o, int64_t v)
{
	char *p = out_room(o);

	o->len += (size_t)snprintf(p, OUT_SLACK, "%lld", (long long)v);
}

/*
 * A JSON string.  Names and specs may come from a command line, so they
 * may hold anything: quotes and backslashes are escaped, control
 * characters become \n, \t or \u00XX, and bytes that are not UTF-8 become
 * U+FFFD, because JSON text must be UTF-8 and a document our own loader
 * refuses would be worse than a replaced character.
 */
static void out_str(struct out *o, const char *str)
{
	static const char hex[] = "0123456789abcdef";
	/* The control characters JSON has a short escape for. */
	static const char short_esc[32] = {['\b'] = 'b',
					   ['\f'] = 'f',
					   ['\n'] = 'n',
					   ['\r'] = 'r',
					   ['\t'] = 't'};
	const unsigned char *s = (const unsigned char *)str;

	OUT_LIT(o, "\"");
	while (*s != '\0') {
		char *p = out_room(o);
		unsigned c = *s;
		size_t n;

		if (c == '"' || c == '\\') {
			p[0] = '\\';
			p[1] = (char)c;
			o->len += 2;
			s++;
		} else if (c < 0x20 && short_esc[c] != 0) {
			p[0] = '\\';
			p[1] = short_esc[c];
			o->len += 2;
			s++;
		} else if (c < 0x20) {
			memcpy(p, "\\u00", 4);
			p[4] = hex[c >> 4];
			p[5] = hex[c & 15];
			o->len += 6;
			s++;
		} else if ((n = topo__utf8_len(s)) > 0) {
			memcpy(p, s, n);
			o->len += n;
			s += n;
		} else {
			memcpy(p, "\\ufffd", 6);
			o->len += 6;
			s++;
		}
	}
	OUT_LIT(o, "\"");
}

/* Decimal digits of v, and a '-' for negatives: what fmt_i32 writes. */
static inline size_t len_i32(int32_t v)
{
	uint32_t u = v < 0 ? 0u - (uint32_t)v : (uint32_t)v;
	size_t n = 1 + (v < 0);

	while (u >= 10) {
		u /= 10;
		n++;
	}
	return n;
}

/* [a, b, c] on one line; map (if not NULL) turns ranks into endpoint ids,
 * with -1 kept as -1.  Measuring counts digits instead of formatting. */
static void out_ids(struct out *o, const int32_t *v, size_t n,
		    const int32_t *map)
{
	OUT_LIT(o, "[");
	if (o->f == NULL) {
		uint64_t len = n > 0 ? 2 * (uint64_t)(n - 1) : 0;

		for (size_t i = 0; i < n; i++)
			len += len_i32(map != NULL && v[i] >= 0 ? map[v[i]]
								: v[i]);
		o->counted += len;
		OUT_LIT(o, "]");
		return;
	}
	for (size_t i = 0; i < n; i++) {
		char *p = out_room(o);
		int32_t x = v[i];

		if (map != NULL && x >= 0)
			x = map[x];
		if (i > 0) {
			p[0] = ',';
			p[1] = ' ';
			p += 2;
			o->len += 2;
		}
		o->len += fmt_i32(p, x);
	}
	OUT_LIT(o, "]");
}

static void out_machine(struct out *o, const topo_machine *m)
{
	OUT_LIT(o, "  \"machine\": {\n    \"name\": ");
	out_str(o, m->name);
	OUT_LIT(o, ",\n    \"nodes\": ");
	out_i32(o, m->nodes);
	OUT_LIT(o, ",\n    \"tasks\": ");
	out_i32(o, m->tasks);
	OUT_LIT(o, ",\n    \"endpoints_per_task\": ");
	out_i32(o, m->eps_per_task);
	OUT_LIT(o, ",\n    \"endpoints\": ");
	out_i32(o, m->endpoints);
	OUT_LIT(o, ",\n    \"tasks_per_node\": ");
	out_ids(o, m->node_tasks, (size_t)m->nodes, NULL);
	if (m->hosts != NULL) {
		OUT_LIT(o, ",\n    \"hosts\": [");
		for (int32_t n = 0; n < m->nodes; n++) {
			if (n > 0)
				OUT_LIT(o, ", ");
			out_str(o, m->hosts[n]);
		}
		OUT_LIT(o, "]");
	}
	OUT_LIT(o, ",\n    \"network\": {\n      \"type\": ");
	out_str(o, m->net_type);
	OUT_LIT(o, ",\n      \"physical_root\": ");
	out_i32(o, m->physical_root);
	/* A loaded file may have left the shape parameters out; then so do
	 * we, rather than invent them. */
	if (strcmp(m->net_type, "kary") == 0 && m->fanout > 0) {
		OUT_LIT(o, ",\n      \"fanout\": ");
		out_i32(o, m->fanout);
	} else if (strcmp(m->net_type, "torus") == 0 && m->ndims > 0) {
		OUT_LIT(o, ",\n      \"dims\": ");
		out_ids(o, m->dims, (size_t)m->ndims, NULL);
	}
	OUT_LIT(o, ",\n      \"parent\": ");
	out_ids(o, m->net_parent, (size_t)m->nodes, NULL);
	OUT_LIT(o, "\n    }");
	/* The costs as the description gave them: the defaults stay the
	 * library's, not frozen into the file. */
	if (m->costs_given != 0) {
		char text[2048];

		if (topo__costs_to_text(&m->costs, m->costs_given, "    ", text,
					sizeof(text)) == 0) {
			OUT_LIT(o, ",\n    \"costs\": ");
			out_put(o, text, strlen(text));
		}
	}
	OUT_LIT(o, "\n  },\n");
}

static int nbrs_reserve(struct nbrs *nb, size_t d, topo_error *err)
{
	int32_t *rank, *off;
	char *text;
	size_t cap = nb->cap;

	if (d <= cap)
		return 0;
	while (cap < d)
		cap = cap < 64 ? 64 : cap * 2;
	rank = topo__realloc(nb->rank, cap * sizeof(int32_t));
	if (rank != NULL)
		nb->rank = rank;
	off = topo__realloc(nb->off, (cap + 1) * sizeof(int32_t));
	if (off != NULL)
		nb->off = off;
	/* 11 characters of "-2147483648" plus ", ". */
	text = topo__realloc(nb->text, cap * 13);
	if (text != NULL)
		nb->text = text;
	if (rank == NULL || off == NULL || text == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory writing a route table "
				 "(%zu neighbours)",
				 d);
	nb->cap = cap;
	return 0;
}

/* One route row: "[at, from, [targets]]", preceded by the separator from
 * the previous row.  pre is "            [AT, " ready-made. */
static inline void out_row_start(struct out *o, int *first, const char *pre,
				 size_t prelen)
{
	out_item(o, *first);
	*first = 0;
	out_put(o, pre, prelen);
}

/*
 * The rows of a derived table (collc(7)), written without asking
 * topo_routes_row() for them: every row of member u is u's neighbour list
 * with at most one neighbour left out, so the list is formatted once and
 * each row is at most two memcpy calls.  Hierarchical trees give some
 * members thousands of children and so millions of targets; formatting
 * each would dominate the write.  The order and content are those of
 * topo_routes_row() (origin, parent, children ascending; targets
 * ascending), which test_io.c checks row by row.
 */
static int out_rows_derived(struct out *o, const topo_tree *t,
			    const int32_t *mem, int32_t r, struct nbrs *nb,
			    int *first)
{
	const int32_t *c = t->child + t->child_off[r];
	int32_t nc = t->child_off[r + 1] - t->child_off[r];
	int32_t p = t->parent[r], d = 0, pk = -1;
	char pre[40];
	size_t prelen, len = 0;
	int rc;

	rc = nbrs_reserve(nb, (size_t)nc + 1, o->err);
	if (rc != 0)
		return rc;
	/* Neighbours ascending: the children with the parent merged in. */
	for (int32_t i = 0; i < nc; i++) {
		if (p >= 0 && pk < 0 && p < c[i]) {
			pk = d;
			nb->rank[d++] = p;
		}
		nb->rank[d++] = c[i];
	}
	if (p >= 0 && pk < 0) {
		pk = d;
		nb->rank[d++] = p;
	}
	for (int32_t k = 0; k < d; k++) {
		nb->off[k] = (int32_t)len;
		len += fmt_i32(nb->text + len, mem[nb->rank[k]]);
		nb->text[len++] = ',';
		nb->text[len++] = ' ';
	}
	nb->off[d] = (int32_t)len;
	/* Drop the last ", "; element k spans off[k] .. off[k+1] - 2. */
	len = d > 0 ? len - 2 : 0;

	memcpy(pre, "            [", 13);
	prelen = 13 + fmt_i32(pre + 13, mem[r]);
	pre[prelen++] = ',';
	pre[prelen++] = ' ';

	/* From the origin: every neighbour. */
	out_row_start(o, first, pre, prelen);
	OUT_LIT(o, "-1, [");
	out_put(o, nb->text, len);
	OUT_LIT(o, "]]");
	/* From the parent (k = pk), then from each child: the others. */
	for (int32_t j = -1; j < nc; j++) {
		int32_t k;
		const char *text = nb->text;
		size_t a, b;

		if (j < 0) {
			if (pk < 0)
				continue;
			k = pk;
		} else {
			k = j < pk || pk < 0 ? j : j + 1;
		}
		a = (size_t)nb->off[k];
		b = (size_t)nb->off[k + 1];
		out_row_start(o, first, pre, prelen);
		out_put(o, text + a, b - a - 2);
		OUT_LIT(o, ", [");
		if (k == 0) {
			if (d > 1)
				out_put(o, text + b, len - b);
		} else if (k == d - 1) {
			out_put(o, text, a - 2);
		} else {
			out_put(o, text, a);
			out_put(o, text + b, len - b);
		}
		OUT_LIT(o, "]]");
	}
	return 0;
}

/* "SPACES[AT, " into pre (at least 48 bytes); returns its length. */
static size_t row_prefix(char *pre, int32_t at, size_t indent)
{
	size_t len = indent;

	memset(pre, ' ', indent);
	pre[len++] = '[';
	len += fmt_i32(pre + len, at);
	pre[len++] = ',';
	pre[len++] = ' ';
	return len;
}

/* One whole row "[AT, FROM, [TO...]]", ranks mapped to endpoint ids. */
static void out_row(struct out *o, int *first, const char *pre, size_t prelen,
		    int32_t from, const int32_t *to, int32_t n,
		    const int32_t *mem)
{
	out_row_start(o, first, pre, prelen);
	out_i32(o, from >= 0 ? mem[from] : -1);
	OUT_LIT(o, ", ");
	out_ids(o, to, n > 0 ? (size_t)n : 0, mem);
	OUT_LIT(o, "]");
}

/*
 * Every row of a member whose table departs from the rule, in the order
 * of topo_routes_row(): the rule's rows, replaced or left out as its
 * exceptions say, then the rows the rule does not have.  scratch holds
 * the member's degree.
 */
static void out_rows_member(struct out *o, const topo_tree *t,
			    const int32_t *mem, int32_t r, int32_t *scratch,
			    int *first)
{
	const struct topo__routes_x *x = t->routes_x;
	int32_t rule = topo__routes_rule_rows(t, r);
	char pre[48];
	size_t prelen = row_prefix(pre, mem[r], 12);

	for (int32_t j = 0; j < rule; j++) {
		int32_t from = topo__routes_rule_origin(t, r, j);
		int32_t e = topo__routes_x_find(t, r, from);

		if (e < 0)
			out_row(o, first, pre, prelen, from, scratch,
				topo_tree_route(t, r, from, scratch), mem);
		else if (!x->missing[e])
			out_row(o, first, pre, prelen, from,
				x->to + x->to_off[e],
				(int32_t)(x->to_off[e + 1] - x->to_off[e]),
				mem);
	}
	for (int32_t e = x->off[r]; e < x->off[r + 1]; e++)
		if (!x->missing[e] &&
		    !topo__routes_is_rule_origin(t, r, x->from[e]))
			out_row(o, first, pre, prelen, x->from[e],
				x->to + x->to_off[e],
				(int32_t)(x->to_off[e + 1] - x->to_off[e]),
				mem);
}

/*
 * Version 2's compact encoding: the rule, then the rows that replace the
 * rule's or that it does not have ("rows", by member then origin), and the
 * rule's rows the table lacks ("missing", [at, from]).  A table that
 * follows the rule is one line.
 */
static void out_routes_rule(struct out *o, const topo_tree *t,
			    const int32_t *mem)
{
	const struct topo__routes_x *x = t->routes_x;
	char pre[48];
	size_t prelen;
	int first = 1;

	if (x == NULL) {
		OUT_LIT(o, ",\n          \"routes\": {\"encoding\": \"rule\", "
			   "\"rows\": [], \"missing\": []}");
		return;
	}
	OUT_LIT(o, ",\n          \"routes\": {\n            \"encoding\": "
		   "\"rule\",\n            \"rows\": [");
	for (int32_t r = 0; r < t->n; r++) {
		if (x->off[r] == x->off[r + 1])
			continue;
		prelen = row_prefix(pre, mem[r], 14);
		for (int32_t e = x->off[r]; e < x->off[r + 1]; e++)
			if (!x->missing[e])
				out_row(o, &first, pre, prelen, x->from[e],
					x->to + x->to_off[e],
					(int32_t)(x->to_off[e + 1] -
						  x->to_off[e]),
					mem);
	}
	if (!first)
		OUT_LIT(o, "\n            ");
	OUT_LIT(o, "],\n            \"missing\": [");
	first = 1;
	for (int32_t r = 0; r < t->n; r++) {
		for (int32_t e = x->off[r]; e < x->off[r + 1]; e++) {
			if (!x->missing[e])
				continue;
			out_item(o, first);
			first = 0;
			OUT_LIT(o, "              [");
			out_i32(o, mem[r]);
			OUT_LIT(o, ", ");
			out_i32(o, x->from[e] >= 0 ? mem[x->from[e]] : -1);
			OUT_LIT(o, "]");
		}
	}
	if (!first)
		OUT_LIT(o, "\n            ");
	OUT_LIT(o, "]\n          }");
}

static int out_tree(struct out *o, const topo_tree *t, struct nbrs *nb)
{
	static const char edge_json[3][12] = {", \"root\"", ", \"shm\"",
					      ", \"net\""};
	static const size_t edge_len[3] = {8, 7, 7};
	const int32_t *mem = t->g->members;
	const struct topo__routes_x *x = t->routes_x;
	int first = 1, rc;

	OUT_LIT(o, "        {\n          \"name\": ");
	out_str(o, t->name);
	OUT_LIT(o, ",\n          \"root\": ");
	out_i32(o, mem[t->root]);
	OUT_LIT(o, ",\n          \"depth\": ");
	out_i32(o, t->depth);
	OUT_LIT(o, ",\n          \"edges\": {\"shm\": ");
	out_i64(o, t->shm);
	OUT_LIT(o, ", \"net\": ");
	out_i64(o, t->net);
	OUT_LIT(o, "},\n          \"parent\": ");
	out_ids(o, t->parent, (size_t)t->n, mem);
	OUT_LIT(o, ",\n          \"edge\": [");
	for (int32_t r = 0; r < t->n; r++) {
		/* Each label with the separator before it: ", \"shm\"". */
		unsigned k = t->edge[r] <= 2 ? t->edge[r] : 0;
		size_t skip = r == 0 ? 2 : 0, n = edge_len[k] - skip;

		if (o->f == NULL) {
			o->counted += n;
			continue;
		}
		/* Eight bytes, always: a constant size the compiler copies
		 * inline (the entries have 12 and out_room 64), of which n
		 * count. */
		memcpy(out_room(o), edge_json[k] + skip, 8);
		o->len += n;
	}
	OUT_LIT(o, "]");
	if (o->flags & TOPO_WRITE_NO_ROUTES) {
		OUT_LIT(o, "\n        }");
		return o->rc;
	}
	if (!(o->flags & (TOPO_WRITE_FULL_ROUTES | TOPO_WRITE_VERSION_1))) {
		out_routes_rule(o, t, mem);
		OUT_LIT(o, "\n        }");
		return o->rc;
	}
	OUT_LIT(o, ",\n          \"routes\": [");
	for (int32_t r = 0; r < t->n && o->rc == 0; r++) {
		if (x == NULL || x->off[r] == x->off[r + 1]) {
			rc = out_rows_derived(o, t, mem, r, nb, &first);
		} else {
			rc = nbrs_reserve(nb, (size_t)topo_tree_degree(t, r) + 1,
					  o->err);
			if (rc == 0)
				out_rows_member(o, t, mem, r, nb->rank, &first);
		}
		if (rc != 0)
			return rc;
	}
	if (!first)
		OUT_LIT(o, "\n          ");
	OUT_LIT(o, "]\n        }");
	return o->rc;
}

static int out_group(struct out *o, const topo_compiled *c, size_t i,
		     struct nbrs *nb)
{
	const topo_group *g = c->groups[i];
	int rc;

	OUT_LIT(o, "    {\n      \"name\": ");
	out_str(o, g->name);
	OUT_LIT(o, ",\n      \"spec\": ");
	out_str(o, g->spec);
	OUT_LIT(o, ",\n      \"size\": ");
	out_i32(o, g->size);
	OUT_LIT(o, ",\n      \"members\": ");
	out_ids(o, g->members, (size_t)g->size, NULL);
	OUT_LIT(o, ",\n      \"trees\": [");
	for (size_t j = 0; j < c->ntrees[i]; j++) {
		out_item(o, j == 0);
		rc = out_tree(o, c->trees[i][j], nb);
		if (rc != 0)
			return rc;
	}
	if (c->ntrees[i] > 0)
		OUT_LIT(o, "\n      ");
	OUT_LIT(o, "]\n    }");
	return o->rc;
}

static int check_flags(const char *fn, unsigned flags, topo_error *err)
{
	/* A flag this version does not know would be silently ignored, and
	 * the output would not be what the caller asked for. */
	if ((flags & ~TOPO_WRITE_ALL_FLAGS) != 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "%s: unknown flags 0x%x (valid: "
				 "TOPO_WRITE_NO_ROUTES, TOPO_WRITE_FULL_ROUTES, "
				 "TOPO_WRITE_VERSION_1)",
				 fn, flags & ~TOPO_WRITE_ALL_FLAGS);
	if ((flags & TOPO_WRITE_NO_ROUTES) && (flags & TOPO_WRITE_FULL_ROUTES))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "%s: TOPO_WRITE_NO_ROUTES and "
				 "TOPO_WRITE_FULL_ROUTES exclude each other",
				 fn);
	return 0;
}

/* Writes (f) or measures (f NULL) the document; *size gets the bytes. */
static int write_doc(const topo_compiled *c, FILE *f, unsigned flags,
		     uint64_t *size, topo_error *err)
{
	struct out o = {f, NULL, 0, 0, err, flags, 0};
	struct nbrs nb = {NULL, NULL, NULL, 0};
	int rc;

	o.buf = topo__malloc(OUT_SIZE);
	if (o.buf == NULL) {
		rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
			       "out of memory for the output buffer");
		goto done;
	}
	OUT_LIT(&o, "{\n  \"format\": \"collc-routes\",\n  \"version\": ");
	out_i32(&o, flags & TOPO_WRITE_VERSION_1 ? 1 : TOPO_FORMAT_VERSION);
	OUT_LIT(&o, ",\n  \"generator\": \"collc " TOPO_VERSION_STRING "\",\n");
	out_machine(&o, c->m);
	OUT_LIT(&o, "  \"groups\": [");
	for (size_t i = 0; i < c->ngroups; i++) {
		out_item(&o, i == 0);
		rc = out_group(&o, c, i, &nb);
		if (rc != 0)
			goto done;
	}
	if (c->ngroups > 0)
		OUT_LIT(&o, "\n  ");
	OUT_LIT(&o, "]\n}\n");
	out_flush(&o);
	/* stdio may still hold bytes, and an earlier failure may only show
	 * in the error flag: both are write errors too. */
	if (o.rc == 0 && f != NULL) {
		errno = 0;
		if (fflush(f) != 0 || ferror(f))
			out_fail_errno(&o, "write error");
	}
	rc = o.rc;
	*size = o.counted;
done:
	topo__free(nb.rank);
	topo__free(nb.off);
	topo__free(nb.text);
	topo__free(o.buf);
	return rc;
}

int topo_compiled_write(const topo_compiled *c, FILE *f, unsigned flags,
			topo_error *err)
{
	uint64_t size;
	int rc;

	if (c == NULL || f == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_compiled_write: a compiled machine and "
				 "a stream are required");
	rc = check_flags("topo_compiled_write", flags, err);
	if (rc != 0)
		return rc;
	return write_doc(c, f, flags, &size, err);
}

int topo_compiled_write_size(const topo_compiled *c, unsigned flags,
			     uint64_t *out, topo_error *err)
{
	int rc;

	if (out != NULL)
		*out = 0;
	if (c == NULL || out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_compiled_write_size: a compiled "
				 "machine and out are required");
	rc = check_flags("topo_compiled_write_size", flags, err);
	if (rc != 0)
		return rc;
	return write_doc(c, NULL, flags, out, err);
}
