/*
 * machine.c - loading a machine description (collc(5)): reading the file,
 * parsing it with jansson, checking every rule of the format, and handing
 * the checked values to topo__machine_build.
 *
 * Every complaint says where (the file and line:column for JSON syntax, a
 * JSON pointer for meaning), what is wrong and what would be valid.  Checks
 * run in a fixed order (unknown keys of an object before its values, then
 * the values in the order of the format's description), so a file with
 * several faults always gets the same first complaint.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* The torus generator keeps one coordinate per dimension on its stack. */
#define MAX_DIMS 32

/* Longest rendering of a string value or a key inside a message. */
#define SHOW_MAX 40

/* One load in progress: where complaints go and what has been checked. */
struct load {
	const char *source;
	topo_error *err;
	int32_t nodes;
	int64_t tasks;
	int32_t *node_tasks; /* [nodes] */
	int32_t eps;
	const char *net_type;
	int32_t *parent; /* [nodes] */
	int32_t fanout;	 /* kary */
	int ndims;	 /* torus */
	int32_t *dims;	 /* [ndims], torus */
};

/* The keys of each object, as collc(5) lists them. */
/* clang-format off */
static const char *const top_keys[] = {
	"name", "nodes", "tasks_per_node", "endpoints_per_task", "network",
	"groups", NULL};
static const char *const tree_keys[] = {"type", "parent", NULL};
static const char *const kary_keys[] = {"type", "fanout", "physical_root", NULL};
static const char *const torus_keys[] = {"type", "dims", "physical_root", NULL};
/* Before the type is known, any network key may be a typo of another. */
static const char *const any_net_keys[] = {
	"type", "parent", "fanout", "dims", "physical_root", NULL};
/* clang-format on */

/* ---------------------------------------------------------------------- */
/* Reading */

static int read_file(const char *path, char **out, size_t *outlen,
		     topo_error *err)
{
	FILE *f;
	char *buf = NULL, *bigger;
	size_t len = 0, cap = 0, got;
	int rc = 0;

	*out = NULL;
	*outlen = 0;
	f = fopen(path, "rb");
	if (f == NULL)
		return topo__err(err, TOPO_EIO, path, NULL, "cannot open: %s",
				 strerror(errno));
	/* Read to the end rather than trusting a size from stat(), so pipes
	 * and /dev/stdin work too. */
	for (;;) {
		if (len == cap) {
			cap = cap == 0 ? 65536 : 2 * cap;
			bigger = cap > len ? topo__realloc(buf, cap) : NULL;
			if (bigger == NULL) {
				rc = topo__err(err, TOPO_ENOMEM, path, NULL,
					       "out of memory reading the "
					       "file (%zu bytes so far)",
					       len);
				goto done;
			}
			buf = bigger;
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
		if (got == 0 || len < cap) {
			if (ferror(f)) {
				rc = topo__err(err, TOPO_EIO, path, NULL,
					       "cannot read: %s",
					       strerror(errno));
				goto done;
			}
			if (feof(f))
				break;
		}
	}
	*out = buf;
	*outlen = len;
	buf = NULL;
done:
	topo__free(buf);
	fclose(f);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* JSON syntax errors */

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* 1-based line and column of byte offset off; columns count characters,
 * not bytes, so a UTF-8 name before the fault does not shift it. */
static void line_col(const char *buf, size_t off, int *line, int *col)
{
	long l = 1, c = 1;

	for (size_t i = 0; i < off; i++) {
		if (buf[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)buf[i] & 0xc0) != 0x80) {
			c++;
		}
	}
	*line = l > INT32_MAX ? INT32_MAX : (int)l;
	*col = c > INT32_MAX ? INT32_MAX : (int)c;
}

/* Shortens raw text (a token as written in the file) to at most SHOW_MAX
 * bytes, cutting at a character boundary. */
static int show_len(const char *s, size_t len)
{
	if (len <= SHOW_MAX)
		return (int)len;
	len = SHOW_MAX;
	while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
		len--;
	return (int)len;
}

/*
 * Turns jansson's complaint into ours.  jansson gives the byte offset just
 * past the token it was reading and ends its text with " near 'TOKEN'"
 * (the token as written, when it is short) or " near end of file".  We
 * point at the start of the offending token instead, and reword the faults
 * users meet most so that the text says what to do.
 */
static int syntax_error(const char *buf, size_t len, const json_error_t *je,
			const char *source, topo_error *err)
{
	enum json_error_code code = json_error_code(je);
	size_t end = je->position < 0 ? 0 : (size_t)je->position;
	size_t at, start, tlen = 0, mlen;
	const char *near, *tok = NULL;
	bool at_eof = false;
	char text[512];
	int line, col;
	unsigned byte = 0;

	if (end > len)
		end = len;
	start = end;
	mlen = strlen(je->text);
	near = strstr(je->text, " near '");
	if (near != NULL) {
		tok = near + 7;
		tlen = strlen(tok);
		tlen = tlen > 0 ? tlen - 1 : 0; /* the closing quote */
		if (tlen <= end && memcmp(buf + end - tlen, tok, tlen) == 0)
			start = end - tlen;
		mlen = (size_t)(near - je->text);
	} else if ((near = strstr(je->text, " near end of file")) != NULL) {
		mlen = (size_t)(near - je->text);
		at_eof = true;
	}
	at = start;
	snprintf(text, sizeof(text), "%s", je->text);

	switch (code) {
	case json_error_out_of_memory:
		return topo__err(err, TOPO_ENOMEM, source, NULL,
				 "out of memory parsing JSON");
	case json_error_invalid_utf8:
		/* The offset is that of the undecodable byte itself. */
		at = end;
		if (sscanf(je->text, "unable to decode byte 0x%x", &byte) != 1)
			byte = end < len ? (unsigned char)buf[end] : 0;
		snprintf(text, sizeof(text), "invalid UTF-8 (byte 0x%02x)",
			 byte);
		break;
	case json_error_stack_overflow:
		snprintf(text, sizeof(text),
			 "maximum parsing depth reached (more than %d nested "
			 "arrays and objects)",
			 JSON_PARSER_MAX_DEPTH);
		break;
	case json_error_duplicate_key:
		/* end is just past the key's closing quote; its opening quote
		 * is the nearest one before that is not escaped (a string
		 * holds no unescaped quote). */
		for (at = end >= 2 ? end - 2 : 0; at > 0; at--) {
			size_t bs = 0;

			while (bs < at && buf[at - 1 - bs] == '\\')
				bs++;
			if (buf[at] == '"' && bs % 2 == 0)
				break;
		}
		/* The key as written, quotes included; long ones shortened. */
		tlen = end - at >= 2 ? end - at - 2 : 0;
		snprintf(text, sizeof(text), "duplicate object key \"%.*s%s\"",
			 show_len(buf + at + 1, tlen), buf + at + 1,
			 tlen > SHOW_MAX ? "..." : "");
		break;
	case json_error_numeric_overflow:
		/* Long numbers come without a " near" token: find the start. */
		while (at > 0 && buf[at - 1] != '\0' &&
		       strchr("0123456789+-.eE", buf[at - 1]) != NULL)
			at--;
		tlen = end - at;
		snprintf(text, sizeof(text), "number out of range: %.*s%s%s",
			 show_len(buf + at, tlen), buf + at,
			 (size_t)show_len(buf + at, tlen) < tlen ? "..." : "",
			 strncmp(je->text, "too big", 7) == 0
			     ? " (integers are limited to 64 bits)"
			     : "");
		break;
	case json_error_null_character:
	case json_error_null_byte_in_key:
		snprintf(text, sizeof(text),
			 "\\u0000 is not allowed in strings");
		break;
	case json_error_end_of_input_expected:
		snprintf(text, sizeof(text),
			 "unexpected text after the end of the JSON document");
		break;
	default:
		if (at_eof) {
			/* Ran out of input: point just past the last token. */
			at = len;
			while (at > 0 && is_space(buf[at - 1]))
				at--;
			snprintf(text, sizeof(text),
				 "unexpected end of file (%.*s)", (int)mlen,
				 je->text);
			if (strncmp(je->text, "unexpected token", mlen) == 0 ||
			    strncmp(je->text, "premature end of input", mlen) ==
				0)
				snprintf(text, sizeof(text),
					 "unexpected end of file");
		} else if (code == json_error_premature_end_of_input &&
			   tok != NULL && tok[0] == '"') {
			snprintf(text, sizeof(text), "unterminated string");
		} else if (strncmp(je->text, "unexpected newline", 18) == 0) {
			snprintf(text, sizeof(text),
				 "unterminated string (a newline inside a "
				 "string must be written \\n)");
		} else if (strncmp(je->text, "control character 0x", 20) == 0) {
			/* The offset is that of the control character. */
			at = end;
			byte = end < len ? (unsigned char)buf[end] : 0;
			snprintf(text, sizeof(text),
				 "control character 0x%02x in a string (write "
				 "it as \\u%04x)",
				 byte, byte);
		} else if (tok != NULL && tlen == 1 &&
			   (tok[0] == '}' || tok[0] == ']')) {
			size_t p = start;

			while (p > 0 && is_space(buf[p - 1]))
				p--;
			if (p > 0 && buf[p - 1] == ',') {
				at = p - 1;
				snprintf(text, sizeof(text),
					 "trailing comma before '%c'", tok[0]);
			}
		}
		break;
	}
	line_col(buf, at, &line, &col);
	return topo__err_syntax(err, source, line, col, text);
}

/* ---------------------------------------------------------------------- */
/* Describing values in messages */

/* Renders a string as a JSON string literal, shortened, on one line. */
static void show_string(const char *s, char *buf, size_t size)
{
	size_t n = 0, len = strlen(s), i;

	if (size < 16)
		return;
	buf[n++] = '"';
	for (i = 0; i < len && n + 10 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i >= SHOW_MAX && (c & 0xc0) != 0x80) {
			n += (size_t)snprintf(buf + n, size - n, "...");
			break;
		}
		if (c == '"' || c == '\\')
			n += (size_t)snprintf(buf + n, size - n, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			n += (size_t)snprintf(buf + n, size - n, "\\u%04x", c);
		else
			buf[n++] = (char)c;
	}
	buf[n++] = '"';
	buf[n] = '\0';
}

/* What a value is, for "(got ...)". */
static void show(const json_t *v, char *buf, size_t size)
{
	double d;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		snprintf(buf, size, "an object");
		break;
	case JSON_ARRAY:
		snprintf(buf, size, "an array");
		break;
	case JSON_STRING:
		show_string(json_string_value(v), buf, size);
		break;
	case JSON_INTEGER:
		snprintf(buf, size, "%" JSON_INTEGER_FORMAT,
			 json_integer_value(v));
		break;
	case JSON_REAL:
		/* Keep "4.0" recognisable as the non-integer it is. */
		d = json_real_value(v);
		snprintf(buf, size, "%.15g", d);
		if (strpbrk(buf, ".eEn") == NULL)
			snprintf(buf + strlen(buf), size - strlen(buf), ".0");
		break;
	case JSON_TRUE:
		snprintf(buf, size, "true");
		break;
	case JSON_FALSE:
		snprintf(buf, size, "false");
		break;
	case JSON_NULL:
		snprintf(buf, size, "null");
		break;
	}
}

/* Appends an object key to a JSON pointer.  Control characters become
 * '?' so that a message stays on one line. */
static void pointer_key(char *ptr, size_t size, const char *key)
{
	char clean[256];
	size_t i;

	for (i = 0; key[i] != '\0' && i + 1 < sizeof(clean); i++)
		clean[i] = ((unsigned char)key[i] < 0x20 || key[i] == 0x7f)
			       ? '?'
			       : key[i];
	clean[i] = '\0';
	topo__pointer_append(ptr, size, clean);
}

/* "0..7", or "0" for a machine of one node. */
static void node_range(int32_t nodes, char *buf, size_t size)
{
	if (nodes == 1)
		snprintf(buf, size, "0");
	else
		snprintf(buf, size, "0..%d", (int)(nodes - 1));
}

/* ---------------------------------------------------------------------- */
/* Checking values */

static int invalid(struct load *ld, const char *ptr, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int invalid(struct load *ld, const char *ptr, const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	return topo__err(ld->err, TOPO_EINVAL, ld->source, ptr, "%s", text);
}

static int no_memory(struct load *ld)
{
	return topo__err(ld->err, TOPO_ENOMEM, ld->source, NULL,
			 "out of memory loading a machine of %d nodes",
			 (int)ld->nodes);
}

/* v must be an integer in lo..INT32_MAX. */
static int want_int(struct load *ld, const json_t *v, const char *ptr,
		    int32_t lo, int32_t *out)
{
	char got[128];

	if (json_is_integer(v) && json_integer_value(v) >= lo &&
	    json_integer_value(v) <= INT32_MAX) {
		*out = (int32_t)json_integer_value(v);
		return 0;
	}
	show(v, got, sizeof(got));
	if (json_is_integer(v) && json_integer_value(v) > INT32_MAX)
		return invalid(ld, ptr,
			       "must be an integer from %d to 2147483647 "
			       "(got %s)",
			       (int)lo, got);
	return invalid(ld, ptr, "must be an integer >= %d (got %s)", (int)lo,
		       got);
}

/* v must name a node (physical_root). */
static int want_node(struct load *ld, const json_t *v, const char *ptr,
		     int32_t *out)
{
	char got[128], range[32];

	node_range(ld->nodes, range, sizeof(range));
	if (!json_is_integer(v)) {
		show(v, got, sizeof(got));
		return invalid(ld, ptr, "must be a node id %s (got %s)", range,
			       got);
	}
	if (json_integer_value(v) < 0 || json_integer_value(v) >= ld->nodes)
		return invalid(ld, ptr,
			       "node %" JSON_INTEGER_FORMAT
			       " does not exist (nodes: %s)",
			       json_integer_value(v), range);
	*out = (int32_t)json_integer_value(v);
	return 0;
}

/* Refuses any key of obj that is not in valid and does not start with
 * "x-" (the place for users' own annotations). */
static int check_keys(struct load *ld, json_t *obj, const char *at,
		      const char *const *valid, const char *context)
{
	const char *key;
	json_t *v;
	char ptr[256], list[256];
	size_t n = 0;

	json_object_foreach (obj, key, v) {
		size_t i;

		if (strncmp(key, "x-", 2) == 0)
			continue;
		for (i = 0; valid[i] != NULL; i++)
			if (strcmp(key, valid[i]) == 0)
				break;
		if (valid[i] != NULL)
			continue;
		for (i = 0; valid[i] != NULL; i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n,
					      "%s, ", valid[i]);
		snprintf(ptr, sizeof(ptr), "%s", at);
		pointer_key(ptr, sizeof(ptr), key);
		return invalid(ld, ptr, "unknown key%s (valid: %sor x-*)",
			       context, list);
	}
	return 0;
}

/* tasks_per_node: checks it and sums the tasks, allocating nothing (the
 * sum must pass check_limit first). */
static int check_tasks(struct load *ld, json_t *v)
{
	char got[128], ptr[64];
	size_t count;
	int32_t t;
	int rc;

	if (json_is_integer(v)) {
		rc = want_int(ld, v, "/tasks_per_node", 1, &t);
		if (rc == 0)
			ld->tasks = (int64_t)t * ld->nodes;
		return rc;
	}
	if (!json_is_array(v)) {
		show(v, got, sizeof(got));
		return invalid(ld, "/tasks_per_node",
			       "must be an integer >= 1 or an array of %d "
			       "integers >= 1 (got %s)",
			       (int)ld->nodes, got);
	}
	count = json_array_size(v);
	if (count != (size_t)ld->nodes)
		return invalid(ld, "/tasks_per_node",
			       "has %zu entries, want %d (one per node)", count,
			       (int)ld->nodes);
	for (size_t n = 0; n < count; n++) {
		snprintf(ptr, sizeof(ptr), "/tasks_per_node/%zu", n);
		rc = want_int(ld, json_array_get(v, n), ptr, 1, &t);
		if (rc != 0)
			return rc;
		ld->tasks += t;
	}
	return 0;
}

static int fill_tasks(struct load *ld, json_t *v)
{
	ld->node_tasks = topo__mallocarray((size_t)ld->nodes, sizeof(int32_t));
	if (ld->node_tasks == NULL)
		return no_memory(ld);
	for (int32_t n = 0; n < ld->nodes; n++)
		ld->node_tasks[n] = (int32_t)json_integer_value(
		    json_is_array(v) ? json_array_get(v, (size_t)n) : v);
	return 0;
}

/*
 * Refuses machines of more than 2^31-1 endpoints before anything of that
 * size is allocated, in topo__machine_build's words.  Tasks can reach
 * 2^62 and endpoints 2^93, so the product is printed from 128 bits.
 */
static int check_limit(struct load *ld)
{
	__extension__ typedef unsigned __int128 u128;
	u128 eps = (u128)ld->tasks * (u128)ld->eps;
	char digits[48];
	int i = (int)sizeof(digits) - 1;

	if (eps <= TOPO_MAX_ENDPOINTS)
		return 0;
	digits[i] = '\0';
	do {
		digits[--i] = (char)('0' + (int)(eps % 10));
		eps /= 10;
	} while (eps != 0);
	return topo__err(ld->err, TOPO_ELIMIT, ld->source, NULL,
			 "%lld tasks x %d endpoints = %s endpoints; at most "
			 "2147483647 are supported",
			 (long long)ld->tasks, (int)ld->eps, digits + i);
}

/* Explicit network: check each entry, then that the whole is a tree. */
static int load_tree(struct load *ld, json_t *v)
{
	char got[128], ptr[64], range[32], path[160];
	int32_t *state = NULL, bad, root;
	const char *why;
	size_t count;
	int rc = 0;

	node_range(ld->nodes, range, sizeof(range));
	if (!json_is_array(v)) {
		show(v, got, sizeof(got));
		return invalid(ld, "/network/parent",
			       "must be an array of %d node ids, -1 for the "
			       "physical root (got %s)",
			       (int)ld->nodes, got);
	}
	count = json_array_size(v);
	if (count != (size_t)ld->nodes)
		return invalid(ld, "/network/parent",
			       "has %zu entries, want %d (one per node)", count,
			       (int)ld->nodes);
	for (int32_t n = 0; n < ld->nodes; n++) {
		json_t *e = json_array_get(v, (size_t)n);
		json_int_t p = json_is_integer(e) ? json_integer_value(e) : 0;

		snprintf(ptr, sizeof(ptr), "/network/parent/%d", (int)n);
		if (!json_is_integer(e) || p < -1) {
			show(e, got, sizeof(got));
			return invalid(ld, ptr,
				       "must be -1 (the physical root) or a "
				       "node id %s (got %s)",
				       range, got);
		}
		if (p >= ld->nodes)
			return invalid(ld, ptr,
				       "node %" JSON_INTEGER_FORMAT
				       " does not exist (nodes: %s)",
				       p, range);
		ld->parent[n] = (int32_t)p;
	}
	state = topo__mallocarray((size_t)ld->nodes, sizeof(int32_t));
	if (state == NULL)
		return no_memory(ld);
	if (topo__network_check(ld->parent, ld->nodes, state, &bad, &why) == 0)
		goto done;
	snprintf(ptr, sizeof(ptr), "/network/parent/%d", (int)bad);
	if (strcmp(why, "no root") == 0) {
		rc = invalid(ld, "/network/parent",
			     "no entry is -1 (one node must be the physical "
			     "root)");
	} else if (strcmp(why, "second root") == 0) {
		for (root = 0; ld->parent[root] != -1; root++)
			;
		rc = invalid(ld, ptr,
			     "second root (node %d is already the physical "
			     "root)",
			     (int)root);
	} else if (strcmp(why, "own parent") == 0) {
		rc = invalid(ld, ptr, "node %d is its own parent", (int)bad);
	} else if (strcmp(why, "cycle") == 0) {
		/* Show the loop (its first steps), so the fix is obvious. */
		size_t n = (size_t)snprintf(path, sizeof(path), "%d", (int)bad);
		int32_t u = ld->parent[bad];

		for (int steps = 0; steps < 8 && u != bad; steps++) {
			n += (size_t)snprintf(path + n, sizeof(path) - n,
					      " -> %d", (int)u);
			u = ld->parent[u];
		}
		if (u == bad)
			snprintf(path + n, sizeof(path) - n, " -> %d",
				 (int)bad);
		else
			snprintf(path + n, sizeof(path) - n, " -> ...");
		rc = invalid(ld, ptr, "cycle through node %d (%s)", (int)bad,
			     path);
	} else {
		rc = invalid(ld, ptr, "%s", why);
	}
done:
	topo__free(state);
	return rc;
}

/* Torus sizes: 1..32 dimensions of at least 1 whose product is nodes. */
static int load_dims(struct load *ld, json_t *v)
{
	char got[128], ptr[64];
	size_t count;
	int64_t product = 1;
	int rc;

	if (!json_is_array(v)) {
		show(v, got, sizeof(got));
		return invalid(ld, "/network/dims",
			       "must be an array of 1 to %d dimension sizes "
			       "(got %s)",
			       MAX_DIMS, got);
	}
	count = json_array_size(v);
	if (count == 0 || count > MAX_DIMS)
		return invalid(ld, "/network/dims",
			       "has %zu entries, want 1 to %d dimension sizes",
			       count, MAX_DIMS);
	ld->ndims = (int)count;
	ld->dims = topo__mallocarray(count, sizeof(int32_t));
	if (ld->dims == NULL)
		return no_memory(ld);
	for (size_t i = 0; i < count; i++) {
		snprintf(ptr, sizeof(ptr), "/network/dims/%zu", i);
		rc = want_int(ld, json_array_get(v, i), ptr, 1, &ld->dims[i]);
		if (rc != 0)
			return rc;
	}
	/* Stop multiplying once past any possible node count: no overflow,
	 * and the answer is already known. */
	for (size_t i = 0; i < count && product <= INT32_MAX; i++)
		product *= ld->dims[i];
	if (product > INT32_MAX)
		return invalid(ld, "/network/dims",
			       "product is more than 2147483647, want %d "
			       "(nodes)",
			       (int)ld->nodes);
	if (product != ld->nodes)
		return invalid(ld, "/network/dims",
			       "product is %lld, want %d (nodes)",
			       (long long)product, (int)ld->nodes);
	return 0;
}

static int load_network(struct load *ld, json_t *net)
{
	const char *const *valid;
	json_t *type, *v;
	char got[128], context[32];
	int32_t root = 0;
	int rc;

	if (!json_is_object(net)) {
		show(net, got, sizeof(got));
		return invalid(ld, "/network",
			       "must be an object with \"type\": \"tree\", "
			       "\"kary\" or \"torus\" (got %s)",
			       got);
	}
	type = json_object_get(net, "type");
	if (type == NULL) {
		rc = check_keys(ld, net, "/network", any_net_keys, "");
		if (rc != 0)
			return rc;
		return invalid(ld, "/network",
			       "missing \"type\" (\"tree\", \"kary\" or "
			       "\"torus\")");
	}
	if (json_is_string(type) &&
	    strcmp(json_string_value(type), "tree") == 0) {
		valid = tree_keys;
	} else if (json_is_string(type) &&
		   strcmp(json_string_value(type), "kary") == 0) {
		valid = kary_keys;
	} else if (json_is_string(type) &&
		   strcmp(json_string_value(type), "torus") == 0) {
		valid = torus_keys;
	} else {
		show(type, got, sizeof(got));
		return invalid(ld, "/network/type",
			       "must be \"tree\", \"kary\" or \"torus\" (got "
			       "%s)",
			       got);
	}
	ld->net_type = json_string_value(type);
	snprintf(context, sizeof(context), " for type \"%s\"", ld->net_type);
	rc = check_keys(ld, net, "/network", valid, context);
	if (rc != 0)
		return rc;

	/* Each type's table lists its one required key second. */
	v = json_object_get(net, valid[1]);
	if (v == NULL)
		return invalid(ld, "/network",
			       "missing \"%s\" (required for type \"%s\")",
			       valid[1], ld->net_type);
	ld->parent = topo__mallocarray((size_t)ld->nodes, sizeof(int32_t));
	if (ld->parent == NULL)
		return no_memory(ld);
	if (valid == tree_keys)
		return load_tree(ld, v);

	if (valid == kary_keys)
		rc = want_int(ld, v, "/network/fanout", 1, &ld->fanout);
	else
		rc = load_dims(ld, v);
	if (rc != 0)
		return rc;
	v = json_object_get(net, "physical_root");
	if (v != NULL) {
		rc = want_node(ld, v, "/network/physical_root", &root);
		if (rc != 0)
			return rc;
	}
	if (valid == kary_keys)
		topo__network_kary(ld->parent, ld->nodes, ld->fanout, root);
	else
		topo__network_torus(ld->parent, ld->dims, ld->ndims, root);
	return 0;
}

/* The groups' shape and names; their specs need the built machine. */
static int check_groups(struct load *ld, json_t *groups)
{
	const char *name;
	json_t *v;
	char got[128], ptr[256];

	if (!json_is_object(groups)) {
		show(groups, got, sizeof(got));
		return invalid(ld, "/groups",
			       "must be an object of group name -> stride "
			       "spec (got %s)",
			       got);
	}
	json_object_foreach (groups, name, v) {
		snprintf(ptr, sizeof(ptr), "/groups");
		pointer_key(ptr, sizeof(ptr), name);
		if (name[0] == '\0')
			return invalid(ld, ptr, "group name is empty");
		if (strcmp(name, "world") == 0)
			return invalid(ld, ptr,
				       "the name \"world\" is reserved (the "
				       "group of all endpoints, spec \"all\")");
		if (!json_is_string(v) || json_string_length(v) == 0) {
			show(v, got, sizeof(got));
			return invalid(ld, ptr,
				       "must be a non-empty stride spec "
				       "string such as \"cols 0::2\" (got %s)",
				       got);
		}
	}
	return 0;
}

static int add_groups(struct load *ld, topo_machine *m, json_t *groups)
{
	const char *name;
	json_t *v;
	char ptr[256];
	int rc;

	json_object_foreach (groups, name, v) {
		rc = topo_spec_check(m, json_string_value(v), ld->err);
		if (rc != 0) {
			snprintf(ptr, sizeof(ptr), "/groups");
			pointer_key(ptr, sizeof(ptr), name);
			topo__err_locate(ld->err, ld->source, ptr);
			return rc;
		}
		if (topo__machine_add_group(m, name, json_string_value(v)) != 0)
			return no_memory(ld);
	}
	return 0;
}

/* The default name: the source's base name without ".json". */
static char *default_name(const char *source)
{
	const char *base;
	char *name;
	size_t len;

	if (source == NULL)
		return topo__strdup("machine");
	base = strrchr(source, '/');
	base = base != NULL ? base + 1 : source;
	len = strlen(base);
	if (len >= 5 && strcmp(base + len - 5, ".json") == 0)
		len -= 5;
	if (len == 0)
		return topo__strdup("machine");
	name = topo__malloc(len + 1);
	if (name != NULL) {
		memcpy(name, base, len);
		name[len] = '\0';
	}
	return name;
}

/* Checks a parsed document and builds the machine. */
static int load_doc(topo_machine **out, struct load *ld, json_t *doc,
		    const char *name_source)
{
	topo_machine *m = NULL;
	json_t *v, *tasks, *groups;
	char got[128];
	char *name = NULL;
	int rc;

	if (!json_is_object(doc)) {
		show(doc, got, sizeof(got));
		return invalid(ld, "",
			       "a machine description must be a JSON object "
			       "(got %s)",
			       got);
	}
	rc = check_keys(ld, doc, "", top_keys, "");
	if (rc != 0)
		return rc;

	v = json_object_get(doc, "name");
	if (v != NULL && (!json_is_string(v) || json_string_length(v) == 0)) {
		show(v, got, sizeof(got));
		return invalid(ld, "/name",
			       "must be a non-empty string (got %s)", got);
	}
	name = v != NULL ? topo__strdup(json_string_value(v))
			 : default_name(name_source);
	if (name == NULL)
		return no_memory(ld);

	v = json_object_get(doc, "nodes");
	if (v == NULL) {
		rc = invalid(ld, "",
			     "missing \"nodes\" (the number of compute "
			     "nodes, an integer >= 1)");
		goto done;
	}
	rc = want_int(ld, v, "/nodes", 1, &ld->nodes);
	if (rc != 0)
		goto done;

	v = json_object_get(doc, "tasks_per_node");
	if (v == NULL) {
		rc = invalid(ld, "",
			     "missing \"tasks_per_node\" (an integer "
			     ">= 1, or an array of one per node)");
		goto done;
	}
	tasks = v;
	rc = check_tasks(ld, tasks);
	if (rc != 0)
		goto done;

	ld->eps = 1;
	v = json_object_get(doc, "endpoints_per_task");
	if (v != NULL) {
		rc = want_int(ld, v, "/endpoints_per_task", 1, &ld->eps);
		if (rc != 0)
			goto done;
	}
	rc = check_limit(ld);
	if (rc == 0)
		rc = fill_tasks(ld, tasks);
	if (rc != 0)
		goto done;

	v = json_object_get(doc, "network");
	if (v == NULL) {
		rc = invalid(ld, "",
			     "missing \"network\" (an object with "
			     "\"type\": \"tree\", \"kary\" or "
			     "\"torus\")");
		goto done;
	}
	rc = load_network(ld, v);
	if (rc != 0)
		goto done;

	groups = json_object_get(doc, "groups");
	if (groups != NULL) {
		rc = check_groups(ld, groups);
		if (rc != 0)
			goto done;
	}

	rc = topo__machine_build(&m, name, ld->nodes, ld->node_tasks, ld->eps,
				 ld->net_type, ld->parent, ld->err);
	if (rc != 0) {
		topo__err_locate(ld->err, ld->source, "");
		goto done;
	}
	m->fanout = ld->fanout;
	m->ndims = ld->ndims;
	m->dims = ld->dims;
	ld->dims = NULL;
	if (groups != NULL) {
		rc = add_groups(ld, m, groups);
		if (rc != 0)
			goto done;
	}
	*out = m;
	m = NULL;
done:
	topo_machine_free(m);
	topo__free(name);
	return rc;
}

/* Parses len bytes of buf; source names them in errors, name_source
 * gives the default machine name (NULL: "machine"). */
static int load(topo_machine **out, const char *buf, size_t len,
		const char *source, const char *name_source, topo_error *err)
{
	struct load ld = {.source = source, .err = err};
	json_error_t je;
	json_t *doc;
	size_t i;
	int rc;

	/* A byte order mark is allowed by RFC 8259 to be ignored; editors
	 * on some systems write one. */
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
		buf += 3;
		len -= 3;
	}
	for (i = 0; i < len && is_space(buf[i]); i++)
		;
	if (i == len)
		return topo__err_syntax(err, source, 1, 1,
					len == 0
					    ? "file is empty"
					    : "file holds only white "
					      "space (want a JSON object)");
	doc =
	    json_loadb(buf, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &je);
	if (doc == NULL)
		return syntax_error(buf, len, &je, source, err);
	rc = load_doc(out, &ld, doc, name_source);
	json_decref(doc);
	topo__free(ld.node_tasks);
	topo__free(ld.parent);
	topo__free(ld.dims);
	return rc;
}

int topo_machine_load_file(topo_machine **out, const char *path,
			   topo_error *err)
{
	char *buf = NULL;
	size_t len;
	int rc;

	if (out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_machine_load_file: out is required");
	*out = NULL;
	if (path == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_machine_load_file: path is required");
	rc = read_file(path, &buf, &len, err);
	if (rc == 0)
		rc = load(out, buf, len, path, path, err);
	topo__free(buf);
	return rc;
}

int topo_machine_load_string(topo_machine **out, const char *json, size_t len,
			     const char *source, topo_error *err)
{
	if (out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_machine_load_string: out is required");
	*out = NULL;
	if (json == NULL && len > 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_machine_load_string: text is NULL");
	return load(out, json != NULL ? json : "", len,
		    source != NULL ? source : "<string>", source, err);
}
