/*
 * jget.c - reading a parsed JSON document through one context: the
 * pointer to where the reader is, and typed getters whose complaints are
 * worded the same for every document libtopo reads (jget.h lists them).
 */
#define TOPO_INTERNAL
#include "io/jget.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void topo__jget_init(struct topo__jget *j, const char *source, topo_error *err)
{
	j->source = source;
	j->err = err;
	j->depth = 0;
}

static void push(struct topo__jget *j, const char *key, size_t index, bool raw)
{
	if (j->depth < TOPO__JGET_DEPTH) {
		j->at[j->depth].key = key;
		j->at[j->depth].index = index;
		j->at[j->depth].raw = raw;
	}
	j->depth++;
}

void topo__jget_key(struct topo__jget *j, const char *key)
{
	push(j, key, 0, false);
}

void topo__jget_index(struct topo__jget *j, size_t i)
{
	push(j, NULL, i, false);
}

void topo__jget_raw(struct topo__jget *j, const char *fragment)
{
	push(j, fragment, 0, true);
}

void topo__jget_pop(struct topo__jget *j)
{
	if (j->depth > 0)
		j->depth--;
}

void topo__jget_at(struct topo__jget *j, const char *ptr)
{
	j->depth = 0;
	push(j, ptr, 0, true);
}

/* The pointer of the first depth steps. */
static void render(const struct topo__jget *j, int depth, char *buf,
		   size_t size)
{
	char clean[256];
	size_t len;

	if (size == 0)
		return;
	buf[0] = '\0';
	for (int d = 0; d < depth; d++) {
		const struct topo__jget_step *s = &j->at[d];
		size_t i;

		len = strlen(buf);
		if (d >= TOPO__JGET_DEPTH) {
			snprintf(buf + len, size - len, "/...");
			return;
		}
		if (s->key == NULL) {
			snprintf(buf + len, size - len, "/%zu", s->index);
			continue;
		}
		if (s->raw) {
			snprintf(buf + len, size - len, "%s", s->key);
			continue;
		}
		for (i = 0; s->key[i] != '\0' && i + 1 < sizeof(clean); i++)
			clean[i] = ((unsigned char)s->key[i] < 0x20 ||
				    s->key[i] == 0x7f)
				       ? '?'
				       : s->key[i];
		clean[i] = '\0';
		topo__pointer_append(buf, size, clean);
	}
}

void topo__jget_pointer(const struct topo__jget *j, char *buf, size_t size)
{
	render(j, j->depth, buf, size);
}

static int verr(struct topo__jget *j, int code, int depth, const char *fmt,
		va_list ap) __attribute__((format(printf, 4, 0)));

static int verr(struct topo__jget *j, int code, int depth, const char *fmt,
		va_list ap)
{
	char ptr[512], text[512];

	vsnprintf(text, sizeof(text), fmt, ap);
	render(j, depth, ptr, sizeof(ptr));
	return topo__err(j->err, code, j->source, ptr, "%s", text);
}

int topo__jget_fail(struct topo__jget *j, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verr(j, TOPO_EINVAL, j->depth, fmt, ap);
	va_end(ap);
	return rc;
}

int topo__jget_err(struct topo__jget *j, int code, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verr(j, code, j->depth, fmt, ap);
	va_end(ap);
	return rc;
}

/* TOPO_EINVAL at the enclosing value (for a missing member). */
static int fail_up(struct topo__jget *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static int fail_up(struct topo__jget *j, const char *fmt, ...)
{
	va_list ap;
	int rc;

	va_start(ap, fmt);
	rc = verr(j, TOPO_EINVAL, j->depth > 0 ? j->depth - 1 : 0, fmt, ap);
	va_end(ap);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Describing values */

/* A string as a JSON string literal, shortened, on one line. */
static void show_string(const char *s, char *buf, size_t size)
{
	size_t n = 0, len = strlen(s), i;

	if (size < 16) {
		if (size > 0)
			buf[0] = '\0';
		return;
	}
	buf[n++] = '"';
	for (i = 0; i < len && n + 10 < size; i++) {
		unsigned char c = (unsigned char)s[i];

		if (i >= TOPO__JGET_SHOW_MAX && (c & 0xc0) != 0x80) {
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

/* A real with as many digits as it takes to read back as itself (so that
 * 1e15 + 0.125, refused for being past 1e15, does not show as 1e+15), and
 * ".0" when it would look like an integer (it is not one). */
static void show_real(double d, char *buf, size_t size)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, size, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	if (strpbrk(buf, ".eEn") == NULL)
		snprintf(buf + strlen(buf), size - strlen(buf), ".0");
}

void topo__jget_show(const json_t *v, char *buf, size_t size)
{
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
		show_real(json_real_value(v), buf, size);
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

/* "must be WHAT (got SHOWN)" at the current pointer. */
static int wrong(struct topo__jget *j, const json_t *v, const char *what)
{
	char got[128];

	topo__jget_show(v, got, sizeof(got));
	return topo__jget_fail(j, "must be %s (got %s)", what, got);
}

/* ---------------------------------------------------------------------- */
/* Objects */

int topo__jget_member(struct topo__jget *j, const json_t *obj, const char *key,
		      const char *what, json_t **out)
{
	*out = json_object_get(obj, key);
	topo__jget_key(j, key);
	if (*out == NULL && what != NULL)
		return fail_up(j, "missing \"%s\" (%s)", key, what);
	return 0;
}

int topo__jget_keys(struct topo__jget *j, const json_t *obj,
		    const char *const *valid, const char *context)
{
	const char *key;
	json_t *v;
	char list[256];
	size_t n = 0, i;
	int rc;

	json_object_foreach ((json_t *)obj, key, v) {
		if (strncmp(key, "x-", 2) == 0)
			continue;
		for (i = 0; valid[i] != NULL; i++)
			if (strcmp(key, valid[i]) == 0)
				break;
		if (valid[i] != NULL)
			continue;
		list[0] = '\0';
		for (i = 0; valid[i] != NULL && n < sizeof(list); i++)
			n += (size_t)snprintf(list + n, sizeof(list) - n,
					      "%s, ", valid[i]);
		topo__jget_key(j, key);
		rc = topo__jget_fail(j, "unknown key%s (valid: %sor x-*)",
				     context, list);
		topo__jget_pop(j);
		return rc;
	}
	return 0;
}

int topo__jget_object(struct topo__jget *j, const json_t *v, const char *what)
{
	if (json_is_object(v))
		return 0;
	return wrong(j, v, what != NULL ? what : "an object");
}

/* ---------------------------------------------------------------------- */
/* Scalars */

int topo__jget_int(struct topo__jget *j, const json_t *v, int64_t lo,
		   int64_t hi, const char *what, int64_t *out)
{
	char range[96];
	json_int_t x;

	if (json_is_integer(v)) {
		x = json_integer_value(v);
		if (x >= lo && x <= hi) {
			*out = x;
			return 0;
		}
		/* Past a bound the default wording does not show: say it. */
		if (what == NULL && x > hi) {
			snprintf(range, sizeof(range),
				 "an integer from %lld to %lld", (long long)lo,
				 (long long)hi);
			return wrong(j, v, range);
		}
	}
	if (what == NULL) {
		if (hi == INT32_MAX || hi == INT64_MAX)
			snprintf(range, sizeof(range), "an integer >= %lld",
				 (long long)lo);
		else
			snprintf(range, sizeof(range),
				 "an integer from %lld to %lld", (long long)lo,
				 (long long)hi);
		what = range;
	}
	return wrong(j, v, what);
}

int topo__jget_int32(struct topo__jget *j, const json_t *v, int32_t lo,
		     int32_t hi, const char *what, int32_t *out)
{
	int64_t x;
	int rc;

	/* The common case without the call, for arrays of millions. */
	if (json_is_integer(v) && json_integer_value(v) >= lo &&
	    json_integer_value(v) <= hi) {
		*out = (int32_t)json_integer_value(v);
		return 0;
	}
	rc = topo__jget_int(j, v, lo, hi, what, &x);
	if (rc == 0)
		*out = (int32_t)x;
	return rc;
}

int topo__jget_number(struct topo__jget *j, const json_t *v, double lo,
		      double hi, const char *what, double *out)
{
	char range[96];
	double d;

	if (json_is_number(v)) {
		d = json_number_value(v);
		if (d >= lo && d <= hi) {
			*out = d;
			return 0;
		}
	}
	if (what == NULL) {
		snprintf(range, sizeof(range), "a number from %g to %g", lo,
			 hi);
		what = range;
	}
	return wrong(j, v, what);
}

int topo__jget_bool(struct topo__jget *j, const json_t *v, const char *what,
		    bool *out)
{
	if (json_is_boolean(v)) {
		*out = json_is_true(v);
		return 0;
	}
	return wrong(j, v, what != NULL ? what : "true or false");
}

int topo__jget_string(struct topo__jget *j, const json_t *v, size_t min_len,
		      const char *what, const char **out)
{
	if (json_is_string(v) && json_string_length(v) >= min_len) {
		*out = json_string_value(v);
		return 0;
	}
	if (what == NULL)
		what = min_len > 0 ? "a non-empty string" : "a string";
	return wrong(j, v, what);
}

int topo__jget_enum(struct topo__jget *j, const json_t *v,
		    const char *const *names, int *out)
{
	char what[256];
	size_t n = 0;
	int i;

	for (i = 0; json_is_string(v) && names[i] != NULL; i++) {
		if (strcmp(json_string_value(v), names[i]) == 0) {
			*out = i;
			return 0;
		}
	}
	/* "a", "b" or "c" */
	what[0] = '\0';
	for (i = 0; names[i] != NULL && n < sizeof(what); i++)
		n += (size_t)snprintf(what + n, sizeof(what) - n, "%s\"%s\"",
				      i == 0		     ? ""
				      : names[i + 1] == NULL ? " or "
							     : ", ",
				      names[i]);
	return wrong(j, v, what);
}

/* ---------------------------------------------------------------------- */
/* Arrays */

int topo__jget_array(struct topo__jget *j, const json_t *v, size_t min,
		     size_t max, const char *what, const char *unit,
		     size_t *len)
{
	char want[64];
	size_t n;

	if (!json_is_array(v))
		return wrong(j, v, what != NULL ? what : "an array");
	n = json_array_size(v);
	if (n >= min && n <= max) {
		*len = n;
		return 0;
	}
	if (min == max)
		snprintf(want, sizeof(want), "%zu", min);
	else if (max == SIZE_MAX)
		snprintf(want, sizeof(want), "at least %zu", min);
	else
		snprintf(want, sizeof(want), "%zu to %zu", min, max);
	return topo__jget_fail(j, "has %zu entries, want %s%s", n, want,
			       unit != NULL ? unit : "");
}
