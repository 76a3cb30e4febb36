/*
 * util.h - helpers shared by the collc and collrun programs: printing
 * library errors the one way users script against, and writing an output
 * file atomically.
 */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H

#include <stdio.h>

#include "topo.h"

/* Exit statuses of both programs (collc(1), collrun(1)). */
enum { EXIT_OK = 0, EXIT_FAILED = 1, EXIT_USAGE = 2 };

/* The program name used in messages ("collc"). Set once by main. */
extern const char *cli_prog;

/* Prints "PROG: " and the formatted message on stderr, one line. */
void cli_msg(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Prints "PROG: " and the message, then the usage text, on stderr;
 * returns EXIT_USAGE. */
int cli_usage_error(const char *usage, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Prints a library error as "PROG: " + topo_error_format() and returns the
 * exit status it implies: 1 for out of memory, 2 for everything the user
 * can fix in the input (including an input file that cannot be read). */
int cli_error(const topo_error *err, int code);

/*
 * An output that is either standard output or a file written atomically:
 * the data goes to a temporary file beside the destination, which is
 * renamed over it only when complete.  Until then an interrupted or failed
 * run removes the temporary file (also on SIGINT, SIGTERM and SIGHUP) and
 * leaves any existing destination untouched.
 */
struct cli_out {
	FILE *f;
	const char *path; /* NULL: standard output */
	char *tmp;        /* temporary file, NULL for standard output */
};

/* Opens path (NULL or "-": stdout).  Returns 0, or prints why and returns
 * EXIT_FAILED. */
int cli_out_open(struct cli_out *out, const char *path);
/* Flushes, closes and renames into place.  Returns 0, or prints why,
 * removes the temporary file and returns EXIT_FAILED. */
int cli_out_commit(struct cli_out *out);
/* Discards the output (removes the temporary file).  Safe to call twice. */
void cli_out_abort(struct cli_out *out);

/* Reads a whole file into a NUL-terminated malloc'ed buffer.  Returns NULL
 * with errno set on failure. */
char *cli_read_file(const char *path, size_t *len);

/* Does text hold a compile output (a top-level object with "format")
 * rather than a machine description?  Anything that is neither, syntax
 * errors included, counts as a machine: its loader explains what is
 * wrong.  A document whose first key is "format" (as collc writes it) is
 * recognised without parsing the whole text. */
int cli_is_compiled(const char *text, size_t len);

/* The spec of the group of m named name ("world" included), or NULL. */
const char *cli_named_spec(const topo_machine *m, const char *name);

/*
 * One group's tree, read from a file that is either a compile output
 * (ROUTES.json: the group and tree must be in it, route tables kept as
 * written) or a machine description (compiled in memory: the group is a
 * name from its "groups", "world", or a stride spec; the tree is built from
 * the shape name).  t is the tree; the rest owns what it points into.
 */
struct cli_tree {
	topo_machine *m;
	topo_compiled *c;
	topo_group *g;
	topo_tree *own;
	const topo_tree *t;
};

/* Loads path and finds group gname and tree tname (checked as a shape
 * name first, "-t: ..." on error).  Returns -1 on success, or prints why
 * (missing group or tree: with the list of what exists) and returns the
 * exit status.  cli_tree_free() in every case. */
int cli_tree_load(struct cli_tree *out, const char *path, const char *gname,
		  const char *tname);
void cli_tree_free(struct cli_tree *t);

#endif
