/*
 * utf8.c - recognising well-formed UTF-8, for the writers that must not
 * pass invalid bytes on (JSON text must be UTF-8, and dot refuses anything
 * else).  Names and specs may come from a command line, so they may hold
 * any bytes at all.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

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
