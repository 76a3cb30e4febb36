/*
 * jget.h - one context for reading a parsed JSON document: the source it
 * came from, the error record to fill, where the reader is (a JSON
 * pointer), and typed getters that check a value and say what is wrong
 * with it in one wording whichever document it is.
 *
 * Private to libtopo: the machine loader (machine.c), the compile-output
 * loader (load_compiled.c) and the costs reader (costs.c) use it.
 *
 * The pointer is a stack of steps (object keys, array indexes, or
 * fragments already written as a pointer) rendered only when a message
 * needs it, so that a loop over an array of millions of entries pays a
 * store per entry, not a formatted string.  Keys are not copied: a key
 * pushed must outlive its step (keys of the document and string literals
 * do).  After a getter fails the pointer is left where the fault is; the
 * reader is expected to stop (the first error wins anyway).
 *
 * Every failure is TOPO_EINVAL with the source and the current pointer,
 * and every getter returns 0 or that code.  The wording, one per fault:
 *
 *   wrong type or value    must be WHAT (got SHOWN)
 *   integer above a bound  must be an integer from LO to HI (got N)
 *   missing member         missing "KEY" (WHAT)        at the object
 *   unknown member         unknown key (valid: a, b, or x-*)  at the key
 *   wrong array length     has N entries, want M[UNIT]
 *
 * SHOWN is the value itself (a string as a short JSON literal, a number as
 * written back, true, false, null), or "an object", "an array".
 */
#ifndef TOPO_JGET_H
#define TOPO_JGET_H

#ifndef TOPO_INTERNAL
#error "jget.h is private to libtopo"
#endif

#include "topo_internal.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Deeper steps are counted but not kept (they render as "/..."); the
 * documents libtopo reads nest at most 8 deep. */
#define TOPO__JGET_DEPTH 16

/* Longest rendering of a string value or a key inside a message. */
#define TOPO__JGET_SHOW_MAX 40

struct topo__jget_step {
	const char *key; /* NULL: an array index */
	size_t index;
	bool raw; /* key is a pointer fragment ("/a/b"), appended as is */
};

struct topo__jget {
	const char *source;
	topo_error *err;
	int depth;
	struct topo__jget_step at[TOPO__JGET_DEPTH];
};

/* A context at the document's root ("" pointer). */
void topo__jget_init(struct topo__jget *j, const char *source, topo_error *err);

/* Steps into member key, array entry i, or a fragment written as a
 * pointer ("/machine/network", escaped already); and back out. */
void topo__jget_key(struct topo__jget *j, const char *key);
void topo__jget_index(struct topo__jget *j, size_t i);
void topo__jget_raw(struct topo__jget *j, const char *fragment);
void topo__jget_pop(struct topo__jget *j);
/* Moves to ptr, a whole pointer written already ("/groups/3/trees"): for
 * a reader that formats its pointers itself, only when it complains. */
void topo__jget_at(struct topo__jget *j, const char *ptr);

/* The current pointer into buf (RFC 6901: "~" as "~0", "/" as "~1";
 * control characters of keys as "?" so a message stays on one line). */
void topo__jget_pointer(const struct topo__jget *j, char *buf, size_t size);

/* TOPO_EINVAL at the current pointer, with a formatted text. */
int topo__jget_fail(struct topo__jget *j, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* Any code (TOPO_ENOMEM, TOPO_ELIMIT...), at the current pointer. */
int topo__jget_err(struct topo__jget *j, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* What a value is, for "(got ...)": see SHOWN above. */
void topo__jget_show(const json_t *v, char *buf, size_t size);

/* obj[key] into *out, and steps into key (pop it after use, whatever
 * the result).  A missing member is an error when what is not NULL
 * ('missing "key" (what)', at obj) and *out NULL otherwise. */
int topo__jget_member(struct topo__jget *j, const json_t *obj, const char *key,
		      const char *what, json_t **out);

/* Refuses the first member of obj that is not in valid (NULL-terminated)
 * and does not start with "x-", the place for users' own annotations;
 * context is added after "unknown key" (" for type \"tree\""), or "". */
int topo__jget_keys(struct topo__jget *j, const json_t *obj,
		    const char *const *valid, const char *context);

/* The typed getters: each checks the value at the current pointer, which
 * must not be NULL (an absent member is the caller's to report, with
 * topo__jget_member's what).  what describes a valid value ("an integer
 * >= 1", "a node id 0..7"); NULL lets the getter say it from the type and
 * bounds. */
int topo__jget_object(struct topo__jget *j, const json_t *v, const char *what);
int topo__jget_int(struct topo__jget *j, const json_t *v, int64_t lo,
		   int64_t hi, const char *what, int64_t *out);
int topo__jget_int32(struct topo__jget *j, const json_t *v, int32_t lo,
		     int32_t hi, const char *what, int32_t *out);
int topo__jget_number(struct topo__jget *j, const json_t *v, double lo,
		      double hi, const char *what, double *out);
int topo__jget_bool(struct topo__jget *j, const json_t *v, const char *what,
		    bool *out);
/* A string of at least min_len bytes. */
int topo__jget_string(struct topo__jget *j, const json_t *v, size_t min_len,
		      const char *what, const char **out);
/* An array of min..max entries (max SIZE_MAX: no upper bound); unit ends
 * the length complaint ("has 3 entries, want 4" + " (one per node)"). */
int topo__jget_array(struct topo__jget *j, const json_t *v, size_t min,
		     size_t max, const char *what, const char *unit,
		     size_t *len);
/* One of names (NULL-terminated): *out gets its index. */
int topo__jget_enum(struct topo__jget *j, const json_t *v,
		    const char *const *names, int *out);

#endif
