/*
 * util.h - helpers shared by the collc and collrun programs: printing
 * library errors the one way users script against, and writing an output
 * file atomically.
 */
#ifndef CLI_UTIL_H
#define CLI_UTIL_H

#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

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
 * the data goes to an unnamed temporary file (O_TMPFILE) in the
 * destination's directory, which is named and renamed over the
 * destination only when complete; a run killed on the way leaves nothing.
 * Where the file system has no O_TMPFILE, a named temporary file
 * ".NAME.XXXXXX" beside it, removed on failure and on SIGINT, SIGTERM and
 * SIGHUP.  An existing destination keeps its mode and is untouched until
 * the rename; a symbolic link is followed to the file it points to, which
 * is the one replaced.  Devices and FIFOs are written in place.
 */
struct cli_out {
	FILE *f;
	const char *path; /* as given; NULL: standard output */
	char *dest;       /* the file replaced (path with links followed) */
	char *dir;        /* its directory */
	int fd;           /* the temporary file, -1 when written in place */
	int named;        /* the temporary file has a name (pending_tmp) */
};

/* Opens path (NULL or "-": stdout).  Returns 0, or prints why (naming the
 * directory when that is what refuses) and returns EXIT_FAILED. */
int cli_out_open(struct cli_out *out, const char *path);
/* Flushes and renames into place; from then on SIGINT, SIGTERM and
 * SIGHUP are held until the process ends.  Returns 0, or prints why,
 * removes the temporary file and returns EXIT_FAILED. */
int cli_out_commit(struct cli_out *out);
/* Discards the output (removes the temporary file).  Safe to call twice. */
void cli_out_abort(struct cli_out *out);
/* After a library writer failed with rc: discards the output and prints
 * why, "out of memory" as cli_error does, anything else as
 * "PATH: cannot write: TEXT".  Returns the exit status. */
int cli_out_fail(struct cli_out *out, int rc, const topo_error *err);

/* Checks, before any work, a directory an option will fill as
 * topo_plan_write_smpi does: path must be a new name or an empty
 * directory, a symbolic link being followed (a link to nothing is
 * refused).  Returns -1, or prints "PROG: OPTION PATH: what is wrong"
 * and returns EXIT_USAGE.  What only creating it can tell (a missing
 * parent, no permission) is left to the writer. */
int cli_dir_check(const char *option, const char *path);

/* Writes o (taking it; NULL means out of memory) to f, indented, in
 * insertion order, reals with `digits` significant digits (0: jansson's
 * default), then a newline.  Measured, then dumped into a buffer of ours:
 * json_dumpf would leave half a document behind when memory runs out
 * midway, and json_dumps drops an object key it could not append to its
 * buffer without saying so; json_dumpb's only allocations (its check for
 * cycles) make it return 0.  Returns 0, or prints why and returns
 * EXIT_FAILED. */
int cli_json_write(FILE *f, json_t *o, int digits);

/* Writes s to f with control characters other than tab as \xNN: every
 * name from a file or a command line is printed this way. */
void cli_put_clean(FILE *f, const char *s);

/* The offset of the first byte of str[0..len) that is not well-formed
 * UTF-8 (RFC 3629), or -1 when it all is. */
long cli_utf8_invalid(const char *str, size_t len);
/* The name errors give path: "standard input" for "-". */
const char *cli_source(const char *path);
/* Reads a whole file ("-": standard input) into a NUL-terminated
 * malloc'ed *text.  Returns -1 on success, else prints "PATH: cannot
 * open: ...", "cannot read: ..." (2) or "out of memory" (1) and returns
 * the exit status. */
int cli_load_text(const char *path, char **text, size_t *len);

/* Does text hold a compile output (a top-level object with "format", or
 * with "machine", which no machine description has) rather than a
 * machine description?  Anything that is neither, syntax errors included,
 * counts as a machine: its loader explains what is wrong.  A document
 * whose first key is "format" (as collc writes it) is recognised without
 * parsing the whole text. */
int cli_is_compiled(const char *text, size_t len);
/* Says that path is a compile output where command cmd wants a machine
 * description, and which commands read it; returns EXIT_USAGE. */
int cli_not_a_machine(const char *path, const char *cmd);

/* A size: decimal digits with an optional binary suffix K, M, G or T
 * (also KiB ... TiB).  Returns 0, -1 when s is not one, -2 when it does
 * not fit in 64 bits. */
int cli_parse_size(const char *s, uint64_t *out);
/* Seconds for --timeout: a decimal number greater than 0 and at most 1e9
 * (not "0x10" or "inf", which strtod alone would read).  Returns 0, or -1
 * when s is not one. */
int cli_parse_seconds(const char *s, double *out);
/* n as "N bytes" below 1 KiB, else "1.5 GiB" (one decimal unless whole). */
void cli_format_bytes(char *buf, size_t size, uint64_t n);

/* The spec of the group of m named name ("world" included), or NULL. */
const char *cli_named_spec(const topo_machine *m, const char *name);
/* The group gname of m: a group name, "world", or else a stride spec.
 * Returns -1 with *out set, or prints why and returns the exit status;
 * a value that is neither is reported as an unknown group, with the
 * names there are and the reason it is no spec. */
int cli_group_new(topo_group **out, const topo_machine *m, const char *path,
		  const char *gname);

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

/*
 * Costs of a prediction (collrun --cost, collc predict --cost).  An
 * override is "CLASS.KEY=NANOSECONDS" (topo_costs_set: "net.L=1500",
 * "reduce.double=0.5").
 */

/* Checks one override against the defaults, so that a bad key or value is
 * refused while the command line is read, before any file.  Returns -1,
 * or prints "PROG: --cost: what is wrong (what is valid)" (followed by
 * usage unless it is NULL) and returns EXIT_USAGE. */
int cli_cost_check(const char *assignment, const char *usage);
/* The costs a prediction over machine m uses: m's (its "costs" over the
 * defaults) with the overrides set[0..n-1] over them in order, a later one
 * winning.  out need not be initialised.  Returns -1, or prints why and
 * returns the exit status. */
int cli_costs_load(struct topo_costs *out, const topo_machine *m,
		   const char *const *set, size_t n);
/* Prints the costs on one line without a newline: "shm L 0 o 120 g 150
 * G 0.12; net L 2500 o 1500 g 1000 G 6 hop 100; reduce int32 0.042", with
 * the reduction cost of type reduce_type alone (an enum topo_type), or
 * none when it is -1. */
void cli_costs_print(FILE *f, const struct topo_costs *c, int reduce_type);
/* The costs as a machine description's "costs" object, every key:
 * {"shm": {"L": ..}, "net": {..}, "reduce": {"int8": .., ..}}.  A new
 * reference, or NULL when out of memory. */
struct json_t;
struct json_t *cli_costs_json(const struct topo_costs *c);

/*
 * A deadline for loading, which runs in the library without a clock of
 * its own: in `seconds` the program prints "PROG: the run did not finish
 * within TIMEOUT s (loading FILE)" and exits 1 (the handler only writes a
 * message made beforehand: async-signal-safe).  Uses SIGALRM; disarm it
 * once loading is over.
 */
void cli_watchdog_arm(double seconds, double timeout, const char *file);
void cli_watchdog_disarm(void);

#endif
