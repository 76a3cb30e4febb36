/*
 * json_read.c - reading JSON documents: files into memory and jansson's
 * syntax errors into plain messages.
 *
 * Both loaders (machine.c for descriptions, load_compiled.c for compile
 * outputs) come through here, so a missing file, an empty one, a byte
 * order mark, a trailing comma or a duplicate key read the same whichever
 * document it is.  jansson reports the byte offset just past the token it
 * choked on; we point at the token's first character, count columns in
 * characters, and reword the faults users meet most so that the message
 * says what to do.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Longest rendering of a token or a key inside a message. */
#define SHOW_MAX 40

/* ---------------------------------------------------------------------- */
/* Reading */

int topo__read_file(const char *path, char **out, size_t *outlen,
		    topo_error *err)
{
	struct stat st;
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
	/* A regular file's size is only a hint (it may grow while we read),
	 * but a good one: a compile output can be gigabytes, and doubling
	 * up to it would copy it and could reserve twice its size. */
	if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) &&
	    st.st_size > 0 && (uintmax_t)st.st_size < SIZE_MAX / 2)
		cap = (size_t)st.st_size + 1;
	/* Read to the end rather than trusting the size, so pipes and
	 * /dev/stdin work too.  The loop leaves len < cap, room for the
	 * NUL. */
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
		} else if (buf == NULL) {
			buf = topo__malloc(cap);
			if (buf == NULL) {
				rc = topo__err(err, TOPO_ENOMEM, path, NULL,
					       "out of memory reading the "
					       "file (%zu bytes)",
					       cap - 1);
				goto done;
			}
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
	buf[len] = '\0';
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

/* Where jansson's complaint points: the token it quotes (" near 'TOKEN'",
 * when it is short) or the end of the file (" near end of file"). */
struct near {
	size_t end;   /* jansson's offset: just past the token */
	size_t start; /* the token's first byte (end when unknown) */
	const char *tok; /* the token as jansson quotes it, or NULL */
	size_t tlen;	 /* its length */
	size_t mlen;	 /* the length of jansson's text before " near" */
	bool at_eof;
};

static void find_near(const char *buf, size_t len, const json_error_t *je,
		      struct near *n)
{
	const char *near;

	n->end = je->position < 0 ? 0 : (size_t)je->position;
	if (n->end > len)
		n->end = len;
	n->start = n->end;
	n->tok = NULL;
	n->tlen = 0;
	n->mlen = strlen(je->text);
	n->at_eof = false;
	near = strstr(je->text, " near '");
	if (near != NULL) {
		n->tok = near + 7;
		n->tlen = strlen(n->tok);
		n->tlen = n->tlen > 0 ? n->tlen - 1 : 0; /* the closing quote */
		if (n->tlen <= n->end &&
		    memcmp(buf + n->end - n->tlen, n->tok, n->tlen) == 0)
			n->start = n->end - n->tlen;
		n->mlen = (size_t)(near - je->text);
	} else if ((near = strstr(je->text, " near end of file")) != NULL) {
		n->mlen = (size_t)(near - je->text);
		n->at_eof = true;
	}
}

/* A duplicate key, as written: end is just past its closing quote; its
 * opening quote is the nearest one before that is not escaped (a string
 * holds no unescaped quote).  Returns the offset of that quote. */
static size_t duplicate_key(const char *buf, size_t end, char *text,
			    size_t size)
{
	size_t at, tlen;

	for (at = end >= 2 ? end - 2 : 0; at > 0; at--) {
		size_t bs = 0;

		while (bs < at && buf[at - 1 - bs] == '\\')
			bs++;
		if (buf[at] == '"' && bs % 2 == 0)
			break;
	}
	/* The key as written, quotes included; long ones shortened. */
	tlen = end - at >= 2 ? end - at - 2 : 0;
	snprintf(text, size, "duplicate object key \"%.*s%s\"",
		 show_len(buf + at + 1, tlen), buf + at + 1,
		 tlen > SHOW_MAX ? "..." : "");
	return at;
}

/* A number too long or too big: jansson quotes no token for those, so
 * find where it starts.  Returns that offset. */
static size_t bad_number(const char *buf, size_t at, size_t end,
			 const json_error_t *je, char *text, size_t size)
{
	size_t tlen;

	while (at > 0 && buf[at - 1] != '\0' &&
	       strchr("0123456789+-.eE", buf[at - 1]) != NULL)
		at--;
	tlen = end - at;
	snprintf(text, size, "number out of range: %.*s%s%s",
		 show_len(buf + at, tlen), buf + at,
		 (size_t)show_len(buf + at, tlen) < tlen ? "..." : "",
		 strncmp(je->text, "too big", 7) == 0
		     ? " (integers are limited to 64 bits)"
		     : "");
	return at;
}

/* The faults jansson words in its own way (an early end of file, an
 * unterminated string, a control character, a trailing comma): says
 * them plainly when they are recognised.  Returns where to point. */
static size_t reword_other(const char *buf, size_t len,
			   const json_error_t *je, const struct near *n,
			   char *text, size_t size)
{
	size_t at = n->start;
	unsigned byte;

	if (n->at_eof) {
		/* Ran out of input: point just past the last token. */
		at = len;
		while (at > 0 && is_space(buf[at - 1]))
			at--;
		snprintf(text, size, "unexpected end of file (%.*s)",
			 (int)n->mlen, je->text);
		if (strncmp(je->text, "unexpected token", n->mlen) == 0 ||
		    strncmp(je->text, "premature end of input", n->mlen) == 0)
			snprintf(text, size, "unexpected end of file");
	} else if (json_error_code(je) == json_error_premature_end_of_input &&
		   n->tok != NULL && n->tok[0] == '"') {
		snprintf(text, size, "unterminated string");
	} else if (strncmp(je->text, "unexpected newline", 18) == 0) {
		snprintf(text, size,
			 "unterminated string (a newline inside a string "
			 "must be written \\n)");
	} else if (strncmp(je->text, "control character 0x", 20) == 0) {
		/* The offset is that of the control character. */
		at = n->end;
		byte = n->end < len ? (unsigned char)buf[n->end] : 0;
		snprintf(text, size,
			 "control character 0x%02x in a string (write it as "
			 "\\u%04x)",
			 byte, byte);
	} else if (n->tok != NULL && n->tlen == 1 &&
		   (n->tok[0] == '}' || n->tok[0] == ']')) {
		size_t p = n->start;

		while (p > 0 && is_space(buf[p - 1]))
			p--;
		if (p > 0 && buf[p - 1] == ',') {
			at = p - 1;
			snprintf(text, size, "trailing comma before '%c'",
				 n->tok[0]);
		}
	}
	return at;
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
	struct near n;
	char text[512];
	size_t at;
	int line, col;
	unsigned byte = 0;

	find_near(buf, len, je, &n);
	at = n.start;
	snprintf(text, sizeof(text), "%s", je->text);
	switch (json_error_code(je)) {
	case json_error_out_of_memory:
		return topo__err(err, TOPO_ENOMEM, source, NULL,
				 "out of memory parsing JSON");
	case json_error_invalid_utf8:
		/* The offset is that of the undecodable byte itself. */
		at = n.end;
		if (sscanf(je->text, "unable to decode byte 0x%x", &byte) != 1)
			byte = n.end < len ? (unsigned char)buf[n.end] : 0;
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
		at = duplicate_key(buf, n.end, text, sizeof(text));
		break;
	case json_error_numeric_overflow:
		at = bad_number(buf, at, n.end, je, text, sizeof(text));
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
		at = reword_other(buf, len, je, &n, text, sizeof(text));
		break;
	}
	line_col(buf, at, &line, &col);
	return topo__err_syntax(err, source, line, col, text);
}

/* ---------------------------------------------------------------------- */
/* Parsing */

static pthread_once_t jansson_once = PTHREAD_ONCE_INIT;

/*
 * jansson's lexer ignores a failure to grow the buffer of the token it is
 * reading and goes on without that byte; when the byte it drops is a
 * string's closing quote, its copy of the string runs off the heap (a
 * crash, not an error).  So no allocation jansson makes while we parse may
 * fail where it matters:
 *
 *  - every allocation jansson makes goes through parse_malloc, which
 *    notes a failure (the parse then ends as "out of memory", whatever
 *    jansson made of it) and serves the request from a reserve set aside
 *    before the parse began;
 *  - from the first failure on, the input ends (feed() returns end of
 *    file), so jansson reads at most the rest of its 1 KiB buffer before
 *    it stops, and the reserve need only hold that much more;
 *  - the reserve is sized from the longest token of the text (the lexer's
 *    buffer never needs more than twice that), found by a scan before the
 *    parse; a reserve that cannot be had is "out of memory" up front.
 *
 * Requests larger than any token buffer (a hash table's or array's
 * growth) are not served: jansson handles those failures correctly.  The
 * reserve is a bump allocator whose blocks are never freed one by one;
 * the DOM of a failed parse is freed before the reserve is.
 */
struct parse {
	char *reserve;
	size_t size, used;
	size_t max_request; /* largest request the reserve serves */
	bool failed;
	const char *buf; /* the text, fed to jansson by feed() */
	size_t len, pos;
};

/* The parse under way on this thread, or NULL. */
static _Thread_local struct parse *cur_parse;

/* jansson's allocator before ours, which ours forwards to (the program's
 * own, if it set one before us).  When it is malloc and free, ours is
 * topo__malloc and topo__free instead (malloc and free, but for the
 * test-only fault injection of alloc.c), so that jansson's allocations
 * are counted and failed with the library's. */
static json_malloc_t prev_malloc = malloc;
static json_free_t prev_free = free;
static bool hooked;

static void *parse_malloc(size_t size)
{
	struct parse *j = cur_parse;
	void *p = hooked ? topo__malloc(size) : prev_malloc(size);
	size_t need = (size + 15) & ~(size_t)15;

	if (p != NULL || j == NULL)
		return p;
	j->failed = true;
	if (size <= j->max_request && need <= j->size - j->used) {
		p = j->reserve + j->used;
		j->used += need;
	}
	return p;
}

static void parse_free(void *p)
{
	struct parse *j = cur_parse;

	if (j != NULL && (char *)p >= j->reserve &&
	    (char *)p < j->reserve + j->size)
		return; /* the reserve goes as a whole */
	if (hooked)
		topo__free(p);
	else
		prev_free(p);
}

/* Routes jansson's allocations through parse_malloc/parse_free, once per
 * process.  json_set_alloc_funcs is process-global: outside our parses
 * they forward to the allocator that was in place, so a program that uses
 * jansson itself keeps its own.  topo__free is free(), so what jansson
 * allocated before the switch is freed right. */
static void route_jansson(void)
{
	json_get_alloc_funcs(&prev_malloc, &prev_free);
	if (prev_malloc == NULL || prev_free == NULL) {
		prev_malloc = malloc;
		prev_free = free;
	}
	hooked = prev_malloc == malloc && prev_free == free;
	json_set_alloc_funcs(parse_malloc, parse_free);
}

/* jansson's input: the text, until an allocation has failed. */
static size_t feed(void *buffer, size_t buflen, void *data)
{
	struct parse *j = data;
	size_t n = j->len - j->pos;

	if (j->failed)
		return 0;
	if (n > buflen)
		n = buflen;
	memcpy(buffer, j->buf + j->pos, n);
	j->pos += n;
	return n;
}

/* The length of the longest run of bytes jansson's lexer may hold in its
 * token buffer: a string with its quotes, or anything else that is not
 * structure or white space (numbers, words, junk). */
static size_t longest_token(const char *s, size_t n)
{
	size_t best = 0, i = 0, j;

	while (i < n) {
		if (s[i] == '"') {
			for (j = i + 1; j < n && s[j] != '"'; j++)
				if (s[j] == '\\')
					j++;
			j = j < n ? j + 1 : n;
		} else if (strchr("{}[],: \t\r\n", s[i]) != NULL) {
			i++;
			continue;
		} else {
			for (j = i; j < n && s[j] != '"' &&
				    strchr("{}[],: \t\r\n", s[j]) == NULL;
			     j++)
				;
		}
		if (j - i > best)
			best = j - i;
		i = j;
	}
	return best;
}

/*
 * Replaces every number written with a fraction or an exponent whose value
 * is an integer (4.0, 4e0, -1.0) by that integer, in place.  JSON has one
 * kind of number, and JSON Schema's "integer" means a number with no
 * fractional part, so a description that a schema validator accepts
 * ("nodes": 4.0, as a program that keeps numbers in doubles writes it) is
 * read as the schema reads it.  Beyond 2^53 a double is not a count we
 * could have meant; those stay reals and are refused where an integer is
 * wanted.  Returns 0 or -1 (out of memory).  jansson limits nesting to
 * 2048 levels, so the recursion is bounded.
 */
static int integral_reals(json_t *v)
{
	const double limit = 9007199254740992.0; /* 2^53 */
	json_t *x;
	size_t i;
	void *it;

	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
		{
			double d;

			if (json_is_real(x)) {
				d = json_real_value(x);
				if (d >= -limit && d <= limit &&
				    d == (double)(json_int_t)d &&
				    json_array_set_new(
					v, i, json_integer((json_int_t)d)) != 0)
					return -1;
			} else if (integral_reals(x) != 0) {
				return -1;
			}
		}
	} else if (json_is_object(v)) {
		for (it = json_object_iter(v); it != NULL;
		     it = json_object_iter_next(v, it)) {
			double d;

			x = json_object_iter_value(it);
			if (json_is_real(x)) {
				d = json_real_value(x);
				if (d >= -limit && d <= limit &&
				    d == (double)(json_int_t)d &&
				    json_object_iter_set_new(
					v, it, json_integer((json_int_t)d)) != 0)
					return -1;
			} else if (integral_reals(x) != 0) {
				return -1;
			}
		}
	}
	return 0;
}

int topo__json_parse(const char *buf, size_t len, const char *source,
		     json_t **out, topo_error *err)
{
	struct parse p = {0};
	json_error_t je;
	size_t i;

	*out = NULL;
	pthread_once(&jansson_once, route_jansson);
	/* RFC 8259 lets a parser ignore a byte order mark, and editors on
	 * some systems write one. */
	if (len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0) {
		buf += 3;
		len -= 3;
	}
	/* jansson's own words for these ("'[' or '{' expected near end of
	 * file") would hide the simple cause. */
	for (i = 0; i < len && is_space(buf[i]); i++)
		;
	if (i == len)
		return topo__err_syntax(err, source, 1, 1,
					len == 0
					    ? "file is empty"
					    : "file holds only white "
					      "space (want a JSON object)");
	/* A NUL byte is no JSON text anywhere (a string holds one as
	 * \u0000), and jansson reads it as the end of its input, so it
	 * would be reported at the end of the text: report it where it is. */
	{
		const char *nul = memchr(buf, '\0', len);

		if (nul != NULL) {
			int line, col;

			line_col(buf, (size_t)(nul - buf), &line, &col);
			return topo__err_syntax(err, source, line, col,
						"a NUL byte (0x00) is not allowed "
						"in JSON text");
		}
	}
	/* The reserve: a token of L bytes needs a lexer buffer of at most
	 * twice the power of two above L; twice that for the at most 1 KiB
	 * jansson reads on after a failure, and room for the values that
	 * holds. */
	{
		size_t tok = longest_token(buf, len), buffer = 32;

		while (buffer < tok + 2 && buffer < SIZE_MAX / 8)
			buffer *= 2;
		p.max_request = 2 * buffer;
		p.size = 4 * buffer + ((size_t)512 << 10);
		if (tok >= SIZE_MAX / 16)
			p.reserve = NULL;
		else
			p.reserve = topo__malloc(p.size);
		/* The token's size says why, when it is what costs. */
		if (p.reserve == NULL && tok >= ((size_t)1 << 20))
			return topo__err(err, TOPO_ENOMEM, source, NULL,
					 "out of memory parsing JSON (its "
					 "longest token is %zu bytes)",
					 tok);
		if (p.reserve == NULL)
			return topo__err(err, TOPO_ENOMEM, source, NULL,
					 "out of memory parsing JSON");
	}
	p.buf = buf;
	p.len = len;
	/* Duplicate keys are refused: of two "parent" arrays, which one
	 * would the user have meant?  Any value is accepted at the top, so
	 * that "[1, 2]" is told it is not an object rather than a syntax
	 * error. */
	je.text[0] = '\0';
	cur_parse = &p;
	*out = json_load_callback(feed, &p,
				  JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
			   &je);
	/* Integral reals become integers while the reserve still stands. */
	if (*out != NULL && !p.failed && integral_reals(*out) != 0)
		p.failed = true;
	/* A parse during which an allocation failed is out of memory,
	 * whatever jansson made of it: a truncated token ("invalid token"),
	 * the end of input we fed it ("unexpected end of file"), or a value
	 * that holds bytes of the reserve. */
	if (p.failed) {
		json_decref(*out);
		*out = NULL;
	}
	cur_parse = NULL;
	topo__free(p.reserve);
	if (p.failed)
		return topo__err(err, TOPO_ENOMEM, source, NULL,
				 "out of memory parsing JSON");
	if (*out == NULL) {
		/* jansson leaves the text empty when it ran out of memory
		 * building a value (it sets no error then). */
		if (je.text[0] == '\0')
			return topo__err(err, TOPO_ENOMEM, source, NULL,
					 "out of memory parsing JSON");
		return syntax_error(buf, len, &je, source, err);
	}
	return 0;
}
