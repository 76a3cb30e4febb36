/*
 * error.c - error codes, error records and their one-line formatting.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <stdio.h>
#include <string.h>

const char *topo_strerror(int code)
{
	switch (code) {
#define TOPO__CASE(name, value, text)                                          \
	case value:                                                            \
		return text;
		TOPO_ERRNO_MAP(TOPO__CASE)
#undef TOPO__CASE
	}
	return "unknown error";
}

void topo_error_clear(topo_error *err)
{
	if (err == NULL)
		return;
	memset(err, 0, sizeof(*err));
	err->position = -1;
}

static void copy(char *dst, size_t size, const char *src)
{
	if (src == NULL)
		src = "";
	snprintf(dst, size, "%s", src);
}

/* A record already holding an error keeps it: the first error is the one
 * that explains the others. */
static int claim(topo_error *err, int code)
{
	if (err == NULL || err->code != 0)
		return 0;
	topo_error_clear(err);
	err->code = code;
	return 1;
}

int topo__err(topo_error *err, int code, const char *source,
	      const char *pointer, const char *fmt, ...)
{
	va_list ap;

	if (!claim(err, code))
		return code;
	copy(err->source, sizeof(err->source), source);
	copy(err->pointer, sizeof(err->pointer), pointer);
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return code;
}

int topo__err_syntax(topo_error *err, const char *source, int line,
		     int column, const char *text)
{
	if (!claim(err, TOPO_ESYNTAX))
		return TOPO_ESYNTAX;
	copy(err->source, sizeof(err->source), source);
	err->line = line;
	err->column = column;
	copy(err->text, sizeof(err->text), text);
	return TOPO_ESYNTAX;
}

int topo__err_spec(topo_error *err, const char *spec, int pos,
		   const char *fmt, ...)
{
	va_list ap;

	if (!claim(err, TOPO_ESPEC))
		return TOPO_ESPEC;
	copy(err->spec, sizeof(err->spec), spec);
	err->position = pos;
	va_start(ap, fmt);
	vsnprintf(err->text, sizeof(err->text), fmt, ap);
	va_end(ap);
	return TOPO_ESPEC;
}

void topo__err_locate(topo_error *err, const char *source, const char *pointer)
{
	if (err == NULL)
		return;
	if (err->source[0] == '\0')
		copy(err->source, sizeof(err->source), source);
	if (err->pointer[0] == '\0')
		copy(err->pointer, sizeof(err->pointer), pointer);
}

void topo__pointer_append(char *buf, size_t size, const char *token)
{
	size_t len = strlen(buf);

	if (len + 1 >= size)
		return;
	buf[len++] = '/';
	for (; *token != '\0' && len + 2 < size; token++) {
		if (*token == '~' || *token == '/') {
			buf[len++] = '~';
			buf[len++] = *token == '~' ? '0' : '1';
		} else {
			buf[len++] = *token;
		}
	}
	buf[len] = '\0';
}

/*
 * Appends s to buf at *len with control characters other than tab written
 * as \xNN: a spec, a file name, a group or tree name read from a document
 * can hold a newline, and the formatted error must stay one line.  *len
 * may already be past size (a truncated earlier part): then nothing is
 * added; when s does not fit, *len becomes size so nothing more is.
 */
static void put_clean(char *buf, size_t size, size_t *len, const char *s)
{
	if (*len >= size)
		return;
	for (; *s != '\0' && *len + 1 < size; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && c != '\t') || c == 0x7f) {
			if (*len + 4 >= size)
				break;
			snprintf(buf + *len, size - *len, "\\x%02x", c);
			*len += 4;
		} else {
			buf[(*len)++] = (char)c;
		}
	}
	buf[*len] = '\0';
	/* Cut short: what follows would be appended to a partial text. */
	if (*s != '\0')
		*len = size;
}

char *topo_error_format(const topo_error *err, char *buf, size_t size)
{
	size_t len = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	if (err == NULL)
		return buf;
#define PUT(...)                                                               \
	do {                                                                   \
		if (len < size)                                                \
			len += (size_t)snprintf(buf + len, size - len,         \
						__VA_ARGS__);                  \
	} while (0)
	if (err->source[0] != '\0') {
		put_clean(buf, size, &len, err->source);
		if (err->line > 0)
			PUT(":%d:%d: ", err->line, err->column);
		else
			PUT(": ");
	}
	if (err->pointer[0] != '\0') {
		put_clean(buf, size, &len, err->pointer);
		PUT(": ");
	}
	if (err->position >= 0) {
		PUT("spec \"");
		put_clean(buf, size, &len, err->spec);
		PUT("\": at %d: ", err->position);
	}
	put_clean(buf, size, &len,
		  err->text[0] != '\0' ? err->text : topo_strerror(err->code));
#undef PUT
	return buf;
}

const char *topo__show_char(char c, char buf[8])
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
