/*
 * utf8.c - recognising well-formed UTF-8, for the writers that must not
 * pass invalid bytes on (JSON text must be UTF-8, and dot refuses anything
 * else), and names made safe for a comment line.  Names and specs may
 * come from a command line, a file name or a JSON string with escapes, so
 * they may hold any bytes at all.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <stdio.h>

size_t topo__utf8_len(const unsigned char *s)
{
	unsigned c = s[0], lo = 0x80, hi = 0xbf;
	size_t n;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	/* The second byte's range rules out overlong forms (e0, f0),
	 * surrogates (ed) and code points above U+10FFFF (f4). */
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	/* Stops at a NUL, which is never a continuation byte. */
	for (size_t i = 2; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

void topo__put_clean(FILE *f, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s != '\0') {
		size_t n = topo__utf8_len(s);

		/* C0 controls (tab too), DEL, the C1 controls U+0080..U+009F
		 * (c2 80..c2 9f) and bytes that start no UTF-8 sequence. */
		if (n == 0 || *s < 0x20 || *s == 0x7f ||
		    (n == 2 && s[0] == 0xc2 && s[1] < 0xa0)) {
			if (n == 0)
				n = 1;
			for (size_t i = 0; i < n; i++)
				fprintf(f, "\\x%02x", s[i]);
		} else {
			fwrite(s, 1, n, f);
		}
		s += n;
	}
}
