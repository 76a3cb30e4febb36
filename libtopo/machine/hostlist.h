/*
 * hostlist.h - host names and Slurm's hostlist expressions ("dev[0-5,9]",
 * "a[01-10]b", "r[1-2]n[1-3]"), private to libtopo: the machine loader
 * reads "hosts" with them and the stride spec's "hosts" selector names
 * nodes with them.
 *
 * An expression is a comma-separated list of items; an item is host name
 * text with zero or more bracket groups, each a comma-separated list of
 * numbers and ranges LO-HI.  A range prints its numbers at least as wide
 * as LO is written ("01-10" gives 01..10), as Slurm does.  Several groups
 * in one item expand as their product, the leftmost group slowest (Slurm's
 * order: "r[1-2]n[1-3]" gives r1n1, r1n2, r1n3, r2n1...).  Names come out
 * in the order written, repeats included: whether a repeat is an error is
 * the caller's to say.
 */
#ifndef TOPO_HOSTLIST_H
#define TOPO_HOSTLIST_H

#ifndef TOPO_INTERNAL
#error "hostlist.h is private to libtopo"
#endif

#include <stdbool.h>
#include <stddef.h>

/* The longest host name, in bytes: a fully qualified domain name
 * (RFC 1035's 253) fits. */
#define TOPO__HOST_MAX 255
/* The most names one expression may expand to.  Slurm refuses a range of
 * more than 65536 hosts as a likely typo; a machine is allowed 16 times
 * that in one expression (more nodes than any machine has had), and its
 * "hosts" may always be an array instead. */
#define TOPO__HOSTLIST_MAX (1L << 20)
/* The most digits of a number inside brackets (so that it fits 32 bits
 * whatever its value). */
#define TOPO__HOSTLIST_DIGITS 9

/* Where an expression is wrong (0-based byte offset) and what is wrong. */
struct topo__hostlist_error {
	size_t pos;
	char text[160];
};

/* Whether c may be part of a host name: ASCII letters, digits, '.', '-'
 * and '_'. */
bool topo__host_char(char c);

/*
 * Why name (len bytes) is not a valid host name, as a phrase ("is empty",
 * "is 300 bytes long (at most 255)", "has the character \"/\" at 3
 * (valid: ...)") written into why; or NULL (why untouched) when it is
 * valid.
 */
const char *topo__host_check(const char *name, size_t len, char *why,
			     size_t size);

/* Called with each name in order (NUL-terminated, len bytes) and the
 * offset of the item it comes from; a non-zero return stops the
 * expansion and is returned. */
typedef int (*topo__hostlist_fn)(void *arg, const char *name, size_t len,
				 size_t item);

/*
 * Expands the expression s (len bytes), calling fn (when not NULL) for
 * each name; *count (when not NULL) gets the number of names, known before
 * the first call.  Returns 0, TOPO_EINVAL with *e filled (the whole
 * expression is checked before fn is first called), TOPO_ENOMEM, or what
 * fn returned.
 */
int topo__hostlist_expand(const char *s, size_t len, topo__hostlist_fn fn,
			  void *arg, size_t *count,
			  struct topo__hostlist_error *e);

#endif
