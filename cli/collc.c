/*
 * collc.c - the topology compiler: `collc compile | group | routes | dot |
 * predict` (predict lives in predict.c).
 *
 * A thin layer over libtopo: parse the command line, call the library,
 * print its errors as one line each and map them to exit statuses
 * (collc(1)).  Everything the output means is the library's.  Each command
 * has its own options and its own --help; the usage text of each is the
 * synopsis of collc(1).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "import.h"
#include "predict.h"
#include "topo.h"
#include "util.h"

/* The default --max-size: 1 GiB, far above any compile with the default
 * rule-encoded tables, far below what a full table of a wide tree can
 * reach (tens of gigabytes). */
#define DEFAULT_MAX_SIZE ((uint64_t)1 << 30)

/* Trees a compile may name (-t), and the longest list (-t as given). */
#define MAX_TREES 64

static const char usage_compile[] =
    "usage: collc compile MACHINE.json [-o OUT.json] [-g NAME=SPEC]... "
    "[-t TREE[,TREE...]]...\n"
    "                     [--routes rule|full|none] [--format-version 1|2] "
    "[--max-size SIZE] [-v]\n";
static const char usage_group[] = "usage: collc group MACHINE.json SPEC|GROUP\n";
static const char usage_routes[] =
    "usage: collc routes ROUTES.json|MACHINE.json [-g GROUP] [-t TREE] "
    "[--member EP]...\n"
    "                    [--rank R]... [--departures] [-o OUT]\n";
static const char usage_dot[] =
    "usage: collc dot ROUTES.json|MACHINE.json [-g GROUP] [-t TREE] "
    "[-o OUT.dot]\n"
    "                 [--nodes]\n";

static const char usage_text[] =
    "usage: collc compile MACHINE.json [-o OUT.json] [-g NAME=SPEC]... "
    "[-t TREE[,TREE...]]...\n"
    "                     [--routes rule|full|none] [--format-version 1|2] "
    "[--max-size SIZE] [-v]\n"
    "       collc group   MACHINE.json SPEC|GROUP\n"
    "       collc routes  ROUTES.json|MACHINE.json [-g GROUP] [-t TREE] "
    "[--member EP]...\n"
    "                     [--rank R]... [--departures] [-o OUT]\n"
    "       collc dot     ROUTES.json|MACHINE.json [-g GROUP] [-t TREE] "
    "[-o OUT.dot]\n"
    "                     [--nodes]\n"
    "       collc predict ROUTES.json|MACHINE.json [-g GROUP] "
    "[-t TREE[,TREE...]]...\n"
    "                     [--op OP[,OP...]]... [--sizes LIST] "
    "[--cost CLASS.KEY=NS]...\n"
    "                     [--type T] [--json | --csv] "
    "[--plot FILE.svg|FILE.png]\n"
    "                     [--plot-script FILE] [-o OUT] [--timeout S] "
    "[--jobs N]\n"
    "       collc import  hostfile FILE [-o OUT.json] [--name NAME]\n"
    "       collc COMMAND --help | collc --help | --version\n";

static const char help_text[] =
    "\n"
    "Compile a machine description into groups, logical trees and route "
    "tables.\n"
    "\n"
    "commands:\n"
    "  compile   validate MACHINE.json and write every group's trees and "
    "route\n"
    "            tables as a collc-routes document (collc(5))\n"
    "  group     print the endpoint ids a stride spec (or a named group) "
    "selects\n"
    "  routes    print route rows of one tree, every row spelled out\n"
    "  dot       draw one group's tree as a Graphviz digraph\n"
    "  predict   predict with the machine's LogGP costs what each "
    "operation costs\n"
    "            over each tree and algorithm at each size, and which "
    "is best\n"
    "  import    write a machine description from a job's host file\n"
    "\n"
    "A file named - is standard input; -o - is standard output.\n"
    "`collc COMMAND --help` shows a command's options.\n"
    "\n"
    "exit status: 0 success, 1 the command failed (output not written), "
    "2 usage or input error\n"
    "See collc(1), collc(5), collc(7).\n";

static const char help_compile[] =
    "\n"
    "Validate MACHINE.json (- for standard input) and write every group's "
    "trees and\n"
    "route tables as a collc-routes document (collc(5)).\n"
    "\n"
    "options:\n"
    "  -o FILE              write to FILE atomically (default and -: "
    "standard output)\n"
    "  -g NAME=SPEC         add (or replace) a group; repeatable\n"
    "  -t TREE[,TREE...]    trees: physical, hierarchical, binomial, "
    "chain, kary:K;\n"
    "                       repeatable (default: "
    "physical,hierarchical,binomial)\n"
    "  --routes MODE        rule (default): each table as the rule of "
    "collc(7) and\n"
    "                       the rows that depart from it; full: every row "
    "spelled out;\n"
    "                       none: no tables (readers derive them)\n"
    "  --format-version N   2 (default), or 1 for readers of version 1 "
    "(full or none)\n"
    "  --max-size SIZE      refuse an output larger than SIZE (K, M, G, T "
    "suffixes;\n"
    "                       default 1G; none: no limit)\n"
    "  -v, --verbose        print a summary line on standard error\n"
    "  -h, --help           show this help\n";

static const char help_group[] =
    "\n"
    "Print, one per line, the endpoint ids that a stride spec (collc(7)) "
    "or a group\n"
    "named in MACHINE.json selects.\n"
    "\n"
    "options:\n"
    "  -h, --help   show this help\n";

static const char help_routes[] =
    "\n"
    "Print route rows of one tree as [at, from, [to...]], one per line, "
    "expanded from\n"
    "whatever encoding the file uses: every member's, or those asked for.\n"
    "\n"
    "options:\n"
    "  -g GROUP         the group (default world; for a machine also a "
    "stride spec)\n"
    "  -t TREE          the tree (default physical)\n"
    "  --member EP      only this member, an endpoint id; repeatable\n"
    "  --rank R         only the member of group rank R; repeatable\n"
    "  --departures     only where the table departs from the rule of "
    "collc(7):\n"
    "                   rows that differ or that the rule lacks, and [at, "
    "from, null]\n"
    "                   for each rule row the table lacks\n"
    "  -o FILE          write to FILE atomically\n"
    "  -h, --help       show this help\n";

static const char help_dot[] =
    "\n"
    "Draw one group's tree as a Graphviz digraph.\n"
    "\n"
    "options:\n"
    "  -g GROUP    the group (default world; for a machine also a stride "
    "spec)\n"
    "  -t TREE     the tree (default physical)\n"
    "  -o FILE     write to FILE atomically\n"
    "  --nodes     one vertex per machine node, not per member\n"
    "  -h, --help  show this help\n";

enum {
	OPT_ROUTES = 256,
	OPT_FORMAT_VERSION,
	OPT_MAX_SIZE,
	OPT_MEMBER,
	OPT_RANK,
	OPT_DEPARTURES,
	OPT_NODES,
};

/* Every option of every command; parse() refuses those a command does not
 * take, by name, rather than getopt's "unknown option". */
static const struct option long_opts[] = {
    {"help", no_argument, NULL, 'h'},
    {"verbose", no_argument, NULL, 'v'},
    {"output", required_argument, NULL, 'o'},
    {"group", required_argument, NULL, 'g'},
    {"tree", required_argument, NULL, 't'},
    {"routes", required_argument, NULL, OPT_ROUTES},
    {"format-version", required_argument, NULL, OPT_FORMAT_VERSION},
    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
    {"member", required_argument, NULL, OPT_MEMBER},
    {"rank", required_argument, NULL, OPT_RANK},
    {"departures", no_argument, NULL, OPT_DEPARTURES},
    {"nodes", no_argument, NULL, OPT_NODES},
    {NULL, 0, NULL, 0},
};

struct command {
	const char *name;
	const char *usage, *help;
	const char *takes; /* short options, then long ones by value */
	const int *longs;  /* long-only options it takes, 0-terminated */
};

static const int compile_longs[] = {OPT_ROUTES, OPT_FORMAT_VERSION,
				    OPT_MAX_SIZE, 0};
static const int routes_longs[] = {OPT_MEMBER, OPT_RANK, OPT_DEPARTURES, 0};
static const int dot_longs[] = {OPT_NODES, 0};
static const int no_longs[] = {0};

static const struct command commands[] = {
    {"compile", usage_compile, help_compile, "hvogt", compile_longs},
    {"group", usage_group, help_group, "h", no_longs},
    {"routes", usage_routes, help_routes, "hogt", routes_longs},
    {"dot", usage_dot, help_dot, "hogt", dot_longs},
};

struct args {
	const struct command *cmd;
	const char *output;
	const char *shapes[MAX_TREES]; /* -t, accumulated, into tbuf */
	size_t nshapes;
	char *tbuf[MAX_TREES];         /* each -t value, split */
	size_t ntbuf;
	const char **gnames, **gspecs; /* compile: -g NAME=SPEC */
	size_t ngroups;
	const char *group; /* routes, dot: -g GROUP */
	const char *tree;  /* routes, dot: -t TREE */
	const char *routes; /* --routes as given */
	int format_version;
	uint64_t max_size; /* 0: no limit */
	int32_t *members, *ranks;
	size_t nmembers, nranks;
	int departures;
	int nodes; /* dot: --nodes */
	int verbose;
	int npos;
	char **pos;
};

static void args_free(struct args *a)
{
	for (size_t i = 0; i < a->ngroups; i++)
		free((char *)a->gnames[i]);
	free(a->gnames);
	free(a->gspecs);
	for (size_t i = 0; i < a->ntbuf; i++)
		free(a->tbuf[i]);
	free(a->members);
	free(a->ranks);
}

static const char *option_name(int c, char *buf, size_t size)
{
	for (const struct option *o = long_opts; o->name != NULL; o++)
		if (o->val == c) {
			if (c < 256)
				snprintf(buf, size, "-%c", c);
			else
				snprintf(buf, size, "--%s", o->name);
			return buf;
		}
	snprintf(buf, size, "-%c", c);
	return buf;
}

static int takes(const struct command *cmd, int c)
{
	if (c < 256)
		return strchr(cmd->takes, c) != NULL;
	for (const int *l = cmd->longs; *l != 0; l++)
		if (*l == c)
			return 1;
	return 0;
}

/* -t: each comma-separated name checked and added; names accumulate over
 * repeated -t, and an empty name (",chain", "chain,", "") is refused
 * rather than skipped.  Returns -1 to go on, or an exit status. */
static int add_trees(struct args *a, const char *list)
{
	topo_error err;
	char *buf, *tok, *next;

	if (a->ntbuf == MAX_TREES)
		return cli_usage_error(a->cmd->usage,
				       "-t: too many trees (at most %d)",
				       MAX_TREES);
	buf = strdup(list);
	if (buf == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	a->tbuf[a->ntbuf++] = buf;
	for (tok = buf; tok != NULL; tok = next) {
		next = strchr(tok, ',');
		if (next != NULL)
			*next++ = '\0';
		if (*tok == '\0')
			return cli_usage_error(a->cmd->usage,
					       "-t: an empty tree name in "
					       "\"%s\" (names are separated by "
					       "single commas)",
					       list);
		topo_error_clear(&err);
		if (topo_tree_shape_check(tok, &err) != 0) {
			cli_msg("-t: %s", err.text);
			return EXIT_USAGE;
		}
		for (size_t i = 0; i < a->nshapes; i++)
			if (strcmp(a->shapes[i], tok) == 0) {
				cli_msg("-t: tree \"%s\" is named twice", tok);
				return EXIT_USAGE;
			}
		if (a->nshapes == MAX_TREES)
			return cli_usage_error(a->cmd->usage,
					       "-t: too many trees (at most %d)",
					       MAX_TREES);
		a->shapes[a->nshapes++] = tok;
	}
	return -1;
}

/* compile -g NAME=SPEC.  Returns -1 to go on, or an exit status. */
static int add_group(struct args *a, const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char **nn, **ns;
	char *name;

	if (eq == NULL || eq == arg || eq[1] == '\0')
		return cli_usage_error(a->cmd->usage,
				       "-g: expected NAME=SPEC (got \"%s\")",
				       arg);
	/* A name goes into JSON text, which must be UTF-8: written with
	 * U+FFFD in place of bad bytes, the group could not be found by the
	 * name given. */
	{
		long bad = cli_utf8_invalid(arg, (size_t)(eq - arg));

		if (bad >= 0) {
			cli_msg("-g: the group name is not valid UTF-8 (byte "
				"0x%02x at offset %ld)",
				(unsigned char)arg[bad], bad);
			return EXIT_USAGE;
		}
	}
	if (eq - arg == 5 && strncmp(arg, "world", 5) == 0) {
		cli_msg("-g: group name \"world\" is reserved (the group of "
			"all endpoints, spec \"all\")");
		return EXIT_USAGE;
	}
	nn = realloc(a->gnames, (a->ngroups + 1) * sizeof(char *));
	if (nn != NULL)
		a->gnames = nn;
	ns = realloc(a->gspecs, (a->ngroups + 1) * sizeof(char *));
	if (ns != NULL)
		a->gspecs = ns;
	name = strndup(arg, (size_t)(eq - arg));
	if (nn == NULL || ns == NULL || name == NULL) {
		free(name);
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	a->gnames[a->ngroups] = name;
	a->gspecs[a->ngroups] = eq + 1;
	a->ngroups++;
	return -1;
}

/* --member EP / --rank R: an integer 0..2^31-1 appended to *list. */
static int add_id(struct args *a, const char *opt, const char *arg,
		  int32_t **list, size_t *n)
{
	char *end;
	long v;
	int32_t *grown;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno != 0 || end == arg || *end != '\0' || arg[0] == '+' ||
	    arg[0] == ' ' || v < 0 || v > INT32_MAX)
		return cli_usage_error(a->cmd->usage,
				       "%s: expected an integer in "
				       "0..2147483647 (got \"%s\")",
				       opt, arg);
	grown = realloc(*list, (*n + 1) * sizeof(int32_t));
	if (grown == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	*list = grown;
	(*list)[(*n)++] = (int32_t)v;
	return -1;
}

/* What an option parser returns for an option of another's. */
#define NOT_MINE (-2)

/* Options that select what a command works on: trees, groups, members,
 * ranks.  Returns -1 when c was one and is taken, NOT_MINE when it is
 * none of them, or an exit status. */
/* Sets *slot to arg for an option a command takes once.  Returns -1, or
 * the exit status of the usage error. */
static int set_once(const struct command *cmd, const char *opt,
		    const char *what, const char **slot, const char *arg)
{
	if (*slot != NULL)
		return cli_usage_error(cmd->usage,
				       "%s: %s takes one %s (given twice)", opt,
				       cmd->name, what);
	*slot = arg;
	return -1;
}

static int selection_option(struct args *a, const struct command *cmd,
			    int c, const char *arg)
{
	int compile = strcmp(cmd->name, "compile") == 0;

	switch (c) {
	case 't':
		return compile ? add_trees(a, arg)
			       : set_once(cmd, "-t", "tree", &a->tree, arg);
	case 'g':
		return compile ? add_group(a, arg)
			       : set_once(cmd, "-g", "group", &a->group, arg);
	case OPT_MEMBER:
		return add_id(a, "--member", arg, &a->members, &a->nmembers);
	case OPT_RANK:
		return add_id(a, "--rank", arg, &a->ranks, &a->nranks);
	default:
		return NOT_MINE;
	}
}

/* Options of what a command writes.  As selection_option. */
static int output_option(struct args *a, const struct command *cmd, int c,
			 const char *arg)
{
	uint64_t size;

	switch (c) {
	case 'v':
		a->verbose = 1;
		return -1;
	case 'o':
		a->output = arg;
		return -1;
	case OPT_ROUTES:
		if (strcmp(arg, "rule") != 0 && strcmp(arg, "full") != 0 &&
		    strcmp(arg, "none") != 0)
			return cli_usage_error(
			    cmd->usage,
			    "--routes: expected rule, full or none "
			    "(got \"%s\")",
			    arg);
		a->routes = arg;
		return -1;
	case OPT_FORMAT_VERSION:
		if (strcmp(arg, "1") != 0 && strcmp(arg, "2") != 0)
			return cli_usage_error(cmd->usage,
					       "--format-version: "
					       "expected 1 or 2 (got "
					       "\"%s\")",
					       arg);
		a->format_version = arg[0] - '0';
		return -1;
	case OPT_MAX_SIZE:
		if (strcmp(arg, "none") == 0) {
			a->max_size = 0;
			return -1;
		}
		if (cli_parse_size(arg, &size) != 0 || size == 0)
			return cli_usage_error(
			    cmd->usage,
			    "--max-size: expected a size of at "
			    "least 1, such as 500M or 4G, or none "
			    "(got \"%s\")",
			    arg);
		a->max_size = size;
		return -1;
	case OPT_DEPARTURES:
		a->departures = 1;
		return -1;
	case OPT_NODES:
		a->nodes = 1;
		return -1;
	default:
		return NOT_MINE;
	}
}

/* What getopt_long found wrong with argv: an exit status. */
static int option_error(const struct command *cmd, int c, char **argv)
{
	char name[64];

	if (c == ':')
		return cli_usage_error(cmd->usage,
				       "option %s needs an argument",
				       argv[optind - 1]);
	/* A long option that takes no argument, given one. */
	if (optopt >= 256)
		return cli_usage_error(cmd->usage,
				       "%s takes no argument (got \"%s\")",
				       option_name(optopt, name, sizeof(name)),
				       argv[optind - 1]);
	if (optopt > 0 && optopt < 256)
		return cli_usage_error(cmd->usage, "unknown option -%c",
				       optopt);
	return cli_usage_error(cmd->usage, "unknown option %s",
			       argv[optind - 1]);
}

/* Parses a command's options (argv[0] is the command).  Returns -1 to go
 * on, or an exit status. */
static int parse(struct args *a, const struct command *cmd, int argc,
		 char **argv)
{
	char name[64];
	int c, rc;

	memset(a, 0, sizeof(*a));
	a->cmd = cmd;
	a->format_version = TOPO_FORMAT_VERSION;
	a->max_size = DEFAULT_MAX_SIZE;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hvo:g:t:", long_opts, NULL)) !=
	       -1) {
		if (c != ':' && c != '?' && !takes(cmd, c))
			return cli_usage_error(
			    cmd->usage, "%s: %s takes no option %s",
			    cmd->name, cmd->name,
			    option_name(c, name, sizeof(name)));
		if (c == 'h') {
			printf("%s%s", cmd->usage, cmd->help);
			return EXIT_OK;
		}
		rc = selection_option(a, cmd, c, optarg);
		if (rc == NOT_MINE)
			rc = output_option(a, cmd, c, optarg);
		if (rc == NOT_MINE)
			rc = option_error(cmd, c, argv);
		if (rc >= 0)
			return rc;
	}
	a->npos = argc - optind;
	a->pos = argv + optind;
	return -1;
}

/* The write flags --routes and --format-version ask for. */
static unsigned write_flags(const struct args *a)
{
	unsigned flags = 0;

	if (a->routes != NULL && strcmp(a->routes, "none") == 0)
		flags |= TOPO_WRITE_NO_ROUTES;
	if (a->routes != NULL && strcmp(a->routes, "full") == 0)
		flags |= TOPO_WRITE_FULL_ROUTES;
	if (a->format_version == 1)
		flags |= TOPO_WRITE_VERSION_1;
	return flags;
}

/*
 * Refuses, before anything is written, an output larger than --max-size:
 * with the size it would be and what to do instead.  Returns -1 to go on,
 * or an exit status.
 */
static int check_size(const struct args *a, const topo_compiled *c,
		      unsigned flags, uint64_t *size)
{
	const char *dest = a->output != NULL && strcmp(a->output, "-") != 0
			       ? a->output
			       : "standard output";
	char have[32], limit[32], alt[32], hint[256];
	uint64_t rule;
	topo_error err;
	int rc;

	if (a->max_size == 0)
		return -1; /* --max-size none: nothing to measure */
	topo_error_clear(&err);
	rc = topo_compiled_write_size(c, flags, size, &err);
	if (rc != 0)
		return cli_error(&err, rc);
	if (*size <= a->max_size)
		return -1;
	cli_format_bytes(have, sizeof(have), *size);
	cli_format_bytes(limit, sizeof(limit), a->max_size);
	/* What would fit: the rule encoding when tables are written in full
	 * (it holds the same tables), else a larger limit. */
	if ((flags & (TOPO_WRITE_FULL_ROUTES | TOPO_WRITE_VERSION_1)) &&
	    !(flags & TOPO_WRITE_NO_ROUTES) &&
	    topo_compiled_write_size(c, 0, &rule, &err) == 0) {
		cli_format_bytes(alt, sizeof(alt), rule);
		snprintf(hint, sizeof(hint),
			 "--routes rule writes the same tables in %" PRIu64
			 " bytes (%s); or raise the limit with --max-size",
			 rule, alt);
	} else {
		snprintf(hint, sizeof(hint),
			 "raise the limit with --max-size, or compile fewer "
			 "groups (-g) or trees (-t)");
	}
	cli_msg("%s: the output would be %" PRIu64 " bytes (%s), over the "
		"%s limit of --max-size; nothing written: %s",
		dest, *size, have, limit, hint);
	return EXIT_USAGE;
}

/* Loads MACHINE.json (or standard input) as a machine description; a
 * compile output there is named as such.  Returns -1 or an exit status. */
static int load_machine(topo_machine **m, const char *path, const char *cmd)
{
	topo_error err;
	char *text;
	size_t len;
	int rc;

	rc = cli_load_text(path, &text, &len);
	if (rc >= 0)
		return rc;
	if (cli_is_compiled(text, len)) {
		free(text);
		return cli_not_a_machine(path, cmd);
	}
	topo_error_clear(&err);
	rc = topo_machine_load_string(m, text, len, cli_source(path), &err);
	free(text);
	return rc != 0 ? cli_error(&err, rc) : -1;
}

static int cmd_compile(struct args *a)
{
	topo_error err;
	topo_machine *m = NULL;
	topo_compiled *c = NULL;
	struct cli_out out;
	unsigned flags = write_flags(a);
	uint64_t size = 0;
	int rc;

	if (a->npos != 1)
		return cli_usage_error(a->cmd->usage,
				       a->npos == 0
					   ? "compile: no machine file given"
					   : "compile: too many arguments");
	if (a->format_version == 1 && a->routes != NULL &&
	    strcmp(a->routes, "rule") == 0)
		return cli_usage_error(a->cmd->usage,
				       "--routes rule needs --format-version "
				       "2 (version 1 has full tables or none)");
	rc = load_machine(&m, a->pos[0], "compile");
	if (rc >= 0)
		goto done;
	topo_error_clear(&err);
	rc = topo_compile(&c, m, a->gnames, a->gspecs, a->ngroups,
			  a->nshapes > 0 ? a->shapes : NULL, a->nshapes, &err);
	if (rc != 0) {
		rc = cli_error(&err, rc);
		goto done;
	}
	rc = check_size(a, c, flags, &size);
	if (rc >= 0)
		goto done;
	rc = cli_out_open(&out, a->output);
	if (rc != 0)
		goto done;
	rc = topo_compiled_write(c, out.f, flags, &err);
	if (rc != 0) {
		rc = cli_out_fail(&out, rc, &err);
		goto done;
	}
	rc = cli_out_commit(&out);
	if (rc == 0 && a->verbose) {
		size_t trees = 0;
		uint64_t written = size;

		/* Measured before writing, unless --max-size none. */
		if (a->max_size == 0)
			topo_compiled_write_size(c, flags, &written, NULL);

		for (size_t i = 0; i < topo_compiled_group_count(c); i++)
			trees += topo_compiled_tree_count(c, i);
		cli_msg("wrote %s: %zu group%s, %zu tree%s, %d endpoint%s, "
			"%" PRIu64 " bytes",
			a->output != NULL && strcmp(a->output, "-") != 0
			    ? a->output
			    : "standard output",
			topo_compiled_group_count(c),
			topo_compiled_group_count(c) == 1 ? "" : "s", trees,
			trees == 1 ? "" : "s", (int)topo_machine_endpoints(m),
			topo_machine_endpoints(m) == 1 ? "" : "s", written);
	}
done:
	topo_compiled_free(c);
	topo_machine_free(m);
	return rc;
}

static int cmd_group(struct args *a)
{
	topo_machine *m = NULL;
	topo_group *g = NULL;
	int rc;

	if (a->npos != 2)
		return cli_usage_error(a->cmd->usage,
				       "group: expected MACHINE.json and SPEC");
	rc = load_machine(&m, a->pos[0], "group");
	if (rc >= 0)
		goto done;
	rc = cli_group_new(&g, m, a->pos[0], a->pos[1]);
	if (rc >= 0)
		goto done;
	{
		const int32_t *mem = topo_group_members(g);

		for (int32_t i = 0; i < topo_group_size(g); i++)
			printf("%d\n", (int)mem[i]);
	}
	rc = EXIT_OK;
	if (fflush(stdout) != 0 || ferror(stdout)) {
		cli_msg("standard output: cannot write: %s", strerror(errno));
		rc = EXIT_FAILED;
	}
done:
	topo_group_free(g);
	topo_machine_free(m);
	return rc;
}

/* A row as collc(5) writes it: [at, from, [to...]], endpoint ids; to NULL
 * (a rule row the table lacks) is written null. */
static void put_row(FILE *f, const int32_t *mem, int32_t r, int32_t from,
		    const int32_t *to, int32_t n)
{
	fprintf(f, "[%d, %d, ", (int)mem[r], from >= 0 ? (int)mem[from] : -1);
	if (to == NULL) {
		fputs("null]\n", f);
		return;
	}
	fputc('[', f);
	for (int32_t i = 0; i < n; i++)
		fprintf(f, "%s%d", i ? ", " : "", (int)mem[to[i]]);
	fputs("]]\n", f);
}

/* Member r's rows, or with departures only where they leave the rule. */
static void put_member(FILE *f, const topo_tree *t, int32_t r, int departures,
		       int32_t *scratch, int32_t *rule)
{
	const int32_t *mem = topo_group_members(topo_tree_group(t));
	int32_t rows = topo_routes_rows(t, r), from, n, k;
	const int32_t *to;

	for (int32_t i = 0; i < rows; i++) {
		n = topo_routes_row(t, r, i, &from, &to, scratch);
		if (departures) {
			k = topo_tree_route(t, r, from, rule);
			if (k == n && memcmp(to, rule, (size_t)n *
							   sizeof(int32_t)) == 0)
				continue;
		}
		put_row(f, mem, r, from, to, n);
	}
	if (!departures || topo_routes_departures(t, r) == 0)
		return;
	/* The rule's origins the table has no row for: -1, the parent, the
	 * children (topo_tree_route answers for exactly these). */
	{
		const int32_t *c;
		int32_t nc = topo_tree_children(t, r, &c);
		int32_t p = topo_tree_parent(t)[r];

		for (int32_t j = -2; j < nc; j++) {
			int32_t o = j == -2 ? -1 : j == -1 ? p : c[j];
			int found = 0;

			if (j == -1 && p < 0)
				continue;
			for (int32_t i = 0; i < rows && !found; i++)
				found = topo_routes_row(t, r, i, &from, &to,
							scratch) >= 0 &&
					from == o;
			if (!found)
				put_row(f, mem, r, o, NULL, 0);
		}
	}
}

/* Loads the tree the routes and dot commands print: the one positional
 * argument, group "world" and the physical tree unless -g and -t say
 * otherwise.  Returns -1, or the exit status. */
static int load_one_tree(struct args *a, struct cli_tree *tree)
{
	if (a->npos != 1)
		return cli_usage_error(a->cmd->usage,
				       "%s: expected one ROUTES.json or "
				       "MACHINE.json",
				       a->cmd->name);
	return cli_tree_load(tree, a->pos[0],
			     a->group != NULL ? a->group : "world",
			     a->tree != NULL ? a->tree : "physical");
}

static int cmd_routes(struct args *a)
{
	struct cli_tree tree = {0};
	struct cli_out out;
	const topo_tree *t;
	const topo_group *g;
	int32_t *scratch = NULL, *rule = NULL, *want = NULL, maxdeg = 1;
	size_t nwant = 0;
	int rc;

	rc = load_one_tree(a, &tree);
	if (rc >= 0)
		goto done;
	t = tree.t;
	g = topo_tree_group(t);
	/* The members asked for, as ranks, in the order asked. */
	want = malloc((a->nmembers + a->nranks + 1) * sizeof(int32_t));
	for (int32_t r = 0; r < topo_group_size(g); r++)
		if (topo_tree_degree(t, r) > maxdeg)
			maxdeg = topo_tree_degree(t, r);
	scratch = malloc(((size_t)maxdeg + 1) * sizeof(int32_t));
	rule = malloc(((size_t)maxdeg + 1) * sizeof(int32_t));
	if (want == NULL || scratch == NULL || rule == NULL) {
		cli_msg("out of memory");
		rc = EXIT_FAILED;
		goto done;
	}
	for (size_t i = 0; i < a->nmembers; i++) {
		int32_t r = topo_group_rank(g, a->members[i]);

		if (r < 0) {
			cli_msg("--member: endpoint %d is not a member of "
				"group \"%s\" (%d members, endpoints %d..%d)",
				(int)a->members[i], topo_group_name(g),
				(int)topo_group_size(g),
				(int)topo_group_members(g)[0],
				(int)topo_group_members(
				    g)[topo_group_size(g) - 1]);
			rc = EXIT_USAGE;
			goto done;
		}
		want[nwant++] = r;
	}
	for (size_t i = 0; i < a->nranks; i++) {
		if (a->ranks[i] >= topo_group_size(g)) {
			cli_msg("--rank: group \"%s\" has ranks 0..%d (got "
				"%d)",
				topo_group_name(g), (int)topo_group_size(g) - 1,
				(int)a->ranks[i]);
			rc = EXIT_USAGE;
			goto done;
		}
		want[nwant++] = a->ranks[i];
	}
	rc = cli_out_open(&out, a->output);
	if (rc != 0)
		goto done;
	if (nwant > 0) {
		for (size_t i = 0; i < nwant; i++)
			put_member(out.f, t, want[i], a->departures, scratch,
				   rule);
	} else {
		for (int32_t r = 0; r < topo_group_size(g); r++)
			if (!a->departures ||
			    topo_routes_departures(t, r) != 0)
				put_member(out.f, t, r, a->departures, scratch,
					   rule);
	}
	rc = cli_out_commit(&out);
done:
	free(want);
	free(scratch);
	free(rule);
	cli_tree_free(&tree);
	return rc;
}

static int cmd_dot(struct args *a)
{
	struct cli_tree tree = {0};
	struct cli_out out;
	topo_error err;
	int rc;

	rc = load_one_tree(a, &tree);
	if (rc >= 0)
		goto done;
	rc = cli_out_open(&out, a->output);
	if (rc != 0)
		goto done;
	topo_error_clear(&err);
	rc = a->nodes ? topo_tree_write_dot_nodes(tree.t, out.f, &err)
		      : topo_tree_write_dot(tree.t, out.f, &err);
	if (rc != 0) {
		rc = cli_out_fail(&out, rc, &err);
		goto done;
	}
	rc = cli_out_commit(&out);
done:
	cli_tree_free(&tree);
	return rc;
}

int main(int argc, char **argv)
{
	const struct command *cmd = NULL;
	struct args a;
	int rc;

	cli_prog = "collc";
	if (argc < 2) {
		fprintf(stderr, "collc: no command given\n%s", usage_text);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		printf("%s%s", usage_text, help_text);
		return EXIT_OK;
	}
	if (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0) {
		printf("collc %s\n", topo_version_string());
		return EXIT_OK;
	}
	/* predict has options of its own (predict.c). */
	if (strcmp(argv[1], "predict") == 0)
		return collc_predict(argc - 1, argv + 1);
	if (strcmp(argv[1], "import") == 0)
		return collc_import(argc - 1, argv + 1);
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (strcmp(argv[1], commands[i].name) == 0)
			cmd = &commands[i];
	if (cmd == NULL) {
		fprintf(stderr, "collc: unknown command \"");
		cli_put_clean(stderr, argv[1]);
		fprintf(stderr, "\" (valid: compile, group, routes, dot, "
			"predict, import)\n%s",
			usage_text);
		return EXIT_USAGE;
	}
	rc = parse(&a, cmd, argc - 1, argv + 1);
	if (rc < 0) {
		if (cmd == &commands[0])
			rc = cmd_compile(&a);
		else if (cmd == &commands[1])
			rc = cmd_group(&a);
		else if (cmd == &commands[2])
			rc = cmd_routes(&a);
		else
			rc = cmd_dot(&a);
	}
	args_free(&a);
	return rc;
}
