/*
 * predict.c - `collc predict`: which tree and which algorithm, by the time
 * the machine description's LogGP costs predict (collc(1) PREDICTION).
 *
 * For every operation, every tree and every algorithm of the operation, and
 * every message size, the command plans the collective as collrun would
 * (the tree's root, the default segments and chunks, collrun's default
 * types) and simulates the plan with topo_plan_predict: the same plan and
 * the same seconds as `collrun OP -t TREE --algorithm A --bytes N
 * --predict`.  A combination that cannot be planned or predicted (an
 * algorithm that needs another tree, a plan past the library's limits, a
 * size that is no multiple of the type) is reported as not available with
 * the library's reason; running out of memory or time ends the command.
 *
 * The predictions are independent: a few threads take them from one list,
 * largest sizes first, and each writes its own result, so the output does
 * not depend on the order they finish in.  The output is a table per
 * operation, JSON or CSV, and on request a gnuplot drawing, made by
 * running gnuplot with the script on its standard input and the
 * (atomically written) plot file on its standard output.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "predict.h"
#include "topo.h"
#include "util.h"

static const char usage[] =
    "usage: collc predict ROUTES.json|MACHINE.json [-g GROUP] "
    "[-t TREE[,TREE...]]...\n"
    "                     [--op OP[,OP...]]... [--sizes LIST] "
    "[--cost CLASS.KEY=NS]...\n"
    "                     [--type T] [--json | --csv] "
    "[--plot FILE.svg|FILE.png]\n"
    "                     [--plot-script FILE] [-o OUT] [--timeout S] "
    "[--jobs N]\n";

static const char help[] =
    "\n"
    "Predict, with the LogGP costs of the machine description, the time of "
    "every\n"
    "operation over every tree with every algorithm at each message size, "
    "and\n"
    "which is the best for each size.  Plans are collrun's: the tree's "
    "root, the\n"
    "default segments and chunks; nothing runs and no buffer is "
    "allocated.\n"
    "\n"
    "options:\n"
    "  -g GROUP             the group (default world; for a machine also a "
    "stride spec)\n"
    "  -t TREE[,TREE...]    trees, repeatable (default for a machine: "
    "physical,\n"
    "                       hierarchical, binomial, chain, kary:2, kary:4; "
    "for a\n"
    "                       compile output: the group's trees)\n"
    "  --op OP[,OP...]      operations, repeatable: bcast, scatter, "
    "gather, reduce,\n"
    "                       allreduce, allgather, reduce-scatter, alltoall, "
    "barrier\n"
    "                       (default: all but barrier)\n"
    "  --sizes LIST         bytes per member, comma-separated, suffixes K, "
    "M, G\n"
    "                       (default: 8,64,512,4K,32K,256K,2M,16M)\n"
    "  --cost K=NS          override a cost of the machine's, such as "
    "net.L=1500,\n"
    "                       shm.G=0.05 or reduce.int32=0.3 (repeatable)\n"
    "  --type T             element type of every operation (default: "
    "int32 for\n"
    "                       reduce, int8 otherwise)\n"
    "  --json               one JSON object\n"
    "  --csv                one line per operation, tree, algorithm and "
    "size\n"
    "  --plot FILE          draw time against size with gnuplot into "
    "FILE.svg or\n"
    "                       FILE.png, atomically\n"
    "  --plot-script FILE   write the gnuplot script, data included, to "
    "FILE\n"
    "  -o FILE              write to FILE atomically (default and -: "
    "standard output)\n"
    "  --timeout S          seconds for the whole command (default 60)\n"
    "  --jobs N             predictions at once (default: CPUs this "
    "process may use)\n"
    "  -h, --help           show this help\n"
    "\n"
    "exit status: 0 success (also with combinations not available), 1 "
    "the command\n"
    "failed (timeout, out of memory, output not written, gnuplot missing "
    "or failed),\n"
    "2 usage or input error\n";

/* The operations, in topo.h's order: an index into the table is the
 * operation.  Their algorithms are the library's (topo_algorithm_*). */
#define NOPS ((size_t)TOPO_OP_COUNT)

/* Barrier moves no data: its time is the same at every size, so it is
 * predicted when asked for only. */
static int op_by_default(size_t k)
{
	return k != TOPO_OP_BARRIER;
}

/* "bcast, scatter, ..., barrier", for the messages. */
static const char *op_names(void)
{
	static char buf[160];
	size_t len = 0;

	for (size_t k = 0; k < NOPS && len < sizeof(buf); k++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s",
					k > 0 ? ", " : "",
					topo_op_name((enum topo_op)k));
	return buf;
}

/* The trees for a machine description: the shapes collc knows, with the
 * two k-ary trees that bracket the usual fanouts. */
static const char *const default_trees[] = {
    "physical", "hierarchical", "binomial", "chain", "kary:2", "kary:4",
};

/* Powers of 8 from 8 B to 16 MiB: both ends, and every third power of
 * two between (a table of eight rows). */
static const uint64_t default_sizes[] = {
    8, 64, 512, 4096, 32768, 262144, 2097152, 16777216,
};

#define MAX_TREES 64
#define MAX_SIZES 64
#define MAX_JOBS 1024
#define DEFAULT_TIMEOUT 60.0

enum { FMT_TEXT, FMT_JSON, FMT_CSV };

enum {
	OPT_OP = 256,
	OPT_SIZES,
	OPT_COST,
	OPT_TYPE,
	OPT_JSON,
	OPT_CSV,
	OPT_PLOT,
	OPT_PLOT_SCRIPT,
	OPT_TIMEOUT,
	OPT_JOBS,
};

static const struct option long_opts[] = {
    {"help", no_argument, NULL, 'h'},
    {"group", required_argument, NULL, 'g'},
    {"tree", required_argument, NULL, 't'},
    {"output", required_argument, NULL, 'o'},
    {"op", required_argument, NULL, OPT_OP},
    {"sizes", required_argument, NULL, OPT_SIZES},
    {"cost", required_argument, NULL, OPT_COST},
    {"type", required_argument, NULL, OPT_TYPE},
    {"json", no_argument, NULL, OPT_JSON},
    {"csv", no_argument, NULL, OPT_CSV},
    {"plot", required_argument, NULL, OPT_PLOT},
    {"plot-script", required_argument, NULL, OPT_PLOT_SCRIPT},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {NULL, 0, NULL, 0},
};

struct args {
	const char *file;
	const char *group;
	const char *output, *plot, *plot_script;
	int plot_png; /* --plot names a .png (else the script draws SVG) */
	const char *shapes[MAX_TREES]; /* -t, into tbuf */
	size_t nshapes;
	char *tbuf[MAX_TREES];
	size_t ntbuf;
	size_t ops[NOPS]; /* the operations, in the order given */
	size_t nops;
	uint64_t sizes[MAX_SIZES]; /* ascending */
	size_t nsizes;
	const char **costs; /* the --cost assignments, in order */
	size_t ncosts;
	int have_type;
	enum topo_type type;
	int format;
	double timeout;
	int jobs; /* 0: one per CPU */
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------------- */
/* The command line */

/* -t: comma-separated shape names, accumulated over repeated -t; an empty
 * name or one given twice is refused.  Returns -1 or an exit status. */
static int add_trees(struct args *a, const char *list)
{
	topo_error err;
	char *buf, *tok, *next;

	if (a->ntbuf == MAX_TREES)
		return cli_usage_error(usage, "-t: too many trees (at most %d)",
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
			return cli_usage_error(
			    usage,
			    "-t: an empty tree name in \"%s\" "
			    "(names are separated by single "
			    "commas)",
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
			return cli_usage_error(
			    usage, "-t: too many trees (at most %d)",
			    MAX_TREES);
		a->shapes[a->nshapes++] = tok;
	}
	return -1;
}

/* --op: comma-separated operation names, accumulated. */
static int add_ops(struct args *a, const char *list)
{
	const char *tok = list, *end;
	char name[32];
	topo_error err;
	enum topo_op op;

	for (;; tok = end + 1) {
		size_t len;

		end = strchr(tok, ',');
		len = end != NULL ? (size_t)(end - tok) : strlen(tok);
		if (len == 0)
			return cli_usage_error(usage,
					       "--op: an empty operation in "
					       "\"%s\" (valid: %s)",
					       list, op_names());
		snprintf(name, sizeof(name), "%.*s",
			 (int)(len < sizeof(name) ? len : sizeof(name) - 1),
			 tok);
		topo_error_clear(&err);
		if (len >= sizeof(name) ||
		    topo_op_parse(&op, name, &err) != 0) {
			cli_msg("--op: unknown operation \"%.*s\" (valid: %s)",
				(int)(len > 40 ? 40 : len), tok, op_names());
			return EXIT_USAGE;
		}
		for (size_t i = 0; i < a->nops; i++)
			if (a->ops[i] == (size_t)op) {
				cli_msg("--op: operation \"%s\" is named twice",
					name);
				return EXIT_USAGE;
			}
		a->ops[a->nops++] = (size_t)op;
		if (end == NULL)
			return -1;
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return (a > b) - (a < b);
}

/* --sizes: comma-separated sizes of at least 1 byte (K, M, G, T
 * suffixes), sorted; one given twice (also as 1K and 1024) is refused. */
static int parse_sizes(struct args *a, const char *list)
{
	const char *tok = list, *end;
	char one[64];

	a->nsizes = 0;
	for (;; tok = end + 1) {
		size_t len;
		uint64_t v;
		int rc;

		end = strchr(tok, ',');
		len = end != NULL ? (size_t)(end - tok) : strlen(tok);
		if (len == 0 || len >= sizeof(one))
			return cli_usage_error(
			    usage,
			    "--sizes: expected sizes of at "
			    "least 1 byte separated by single "
			    "commas, such as 8,4K,1M (got "
			    "\"%s\")",
			    list);
		memcpy(one, tok, len);
		one[len] = '\0';
		rc = cli_parse_size(one, &v);
		if (rc == -2 || (rc == 0 && v > SIZE_MAX / 2))
			return cli_usage_error(usage,
					       "--sizes: %s is too large", one);
		if (rc != 0 || v == 0)
			return cli_usage_error(usage,
					       "--sizes: expected a size of at "
					       "least 1 byte, such as 8, 4K or "
					       "1M (got \"%s\")",
					       one);
		for (size_t i = 0; i < a->nsizes; i++)
			if (a->sizes[i] == v)
				return cli_usage_error(usage,
						       "--sizes: %" PRIu64
						       " bytes are given "
						       "twice (\"%s\")",
						       v, list);
		if (a->nsizes == MAX_SIZES)
			return cli_usage_error(usage,
					       "--sizes: too many sizes (at "
					       "most %d)",
					       MAX_SIZES);
		a->sizes[a->nsizes++] = v;
		if (end == NULL)
			break;
	}
	qsort(a->sizes, a->nsizes, sizeof(a->sizes[0]), cmp_u64);
	return -1;
}

/* Does name end in ext (case-insensitive) after at least one character? */
static int has_ext(const char *name, const char *ext)
{
	size_t n = strlen(name), e = strlen(ext);

	return n > e && strcasecmp(name + n - e, ext) == 0;
}

/* What an option parser returns for an option of another's. */
#define NOT_MINE (-2)

/* Options of what is predicted: the group, trees, operations, sizes,
 * costs and type.  Returns -1 when c was one and is taken, NOT_MINE when
 * it is none of them, or an exit status. */
static int input_option(struct args *a, int c, const char *arg)
{
	topo_error err;
	int rc;

	switch (c) {
	case 'g':
		if (a->group != NULL)
			return cli_usage_error(usage, "-g: predict takes one "
						      "group (given twice)");
		a->group = arg;
		return -1;
	case 't':
		return add_trees(a, arg);
	case OPT_OP:
		return add_ops(a, arg);
	case OPT_SIZES:
		return parse_sizes(a, arg);
	case OPT_COST:
		rc = cli_cost_check(arg, usage);
		if (rc < 0)
			a->costs[a->ncosts++] = arg;
		return rc;
	case OPT_TYPE:
		topo_error_clear(&err);
		if (topo_type_parse(&a->type, arg, &err) != 0) {
			cli_msg("--type: %s", err.text);
			return EXIT_USAGE;
		}
		a->have_type = 1;
		return -1;
	default:
		return NOT_MINE;
	}
}

/* Options of the output and of the command's limits.  As input_option. */
static int output_option(struct args *a, int c, const char *arg)
{
	switch (c) {
	case 'o':
		a->output = arg;
		return -1;
	case OPT_JSON:
	case OPT_CSV:
		if (a->format != FMT_TEXT &&
		    a->format != (c == OPT_JSON ? FMT_JSON : FMT_CSV))
			return cli_usage_error(usage, "--json and --csv "
						      "exclude each other");
		a->format = c == OPT_JSON ? FMT_JSON : FMT_CSV;
		return -1;
	case OPT_PLOT:
		if (!has_ext(arg, ".svg") && !has_ext(arg, ".png"))
			return cli_usage_error(
			    usage,
			    "--plot: expected a file name ending in "
			    ".svg or .png (got \"%s\")",
			    arg);
		a->plot = arg;
		a->plot_png = has_ext(arg, ".png");
		return -1;
	case OPT_PLOT_SCRIPT:
		if (*arg == '\0')
			return cli_usage_error(usage, "--plot-script: expected "
						      "a file name");
		a->plot_script = arg;
		return -1;
	case OPT_TIMEOUT:
		if (cli_parse_seconds(arg, &a->timeout) != 0)
			return cli_usage_error(
			    usage,
			    "--timeout: expected seconds greater than "
			    "0, such as 60 or 0.5 (got \"%s\")",
			    arg);
		return -1;
	case OPT_JOBS: {
		char *end;
		long v;

		errno = 0;
		v = strtol(arg, &end, 10);
		if (errno != 0 || end == arg || *end != '\0' || arg[0] == '+' ||
		    v < 1 || v > MAX_JOBS)
			return cli_usage_error(usage,
					       "--jobs: expected 1 to "
					       "%d (got \"%s\")",
					       MAX_JOBS, arg);
		a->jobs = (int)v;
		return -1;
	}
	default:
		return NOT_MINE;
	}
}

/* What getopt_long found wrong with argv: an exit status. */
static int option_error(int c, char **argv)
{
	switch (c) {
	case ':':
		return cli_usage_error(usage, "option %s needs an argument",
				       argv[optind - 1]);
	default:
		if (optopt >= 256)
			for (const struct option *o = long_opts;
			     o->name != NULL; o++)
				if (o->val == optopt)
					return cli_usage_error(
					    usage,
					    "--%s takes no argument "
					    "(got \"%s\")",
					    o->name, argv[optind - 1]);
		if (optopt > 0)
			return cli_usage_error(usage, "unknown option -%c",
					       optopt);
		return cli_usage_error(usage, "unknown option %s",
				       argv[optind - 1]);
	}
}

/* The operand and the defaults of what was not given.  Returns -1 or an
 * exit status. */
static int finish_args(struct args *a, int argc, char **argv)
{
	if (argc - optind != 1)
		return cli_usage_error(
		    usage, argc - optind == 0 ? "predict: no ROUTES.json or "
						"MACHINE.json given"
					      : "predict: too many arguments "
						"(expected one ROUTES.json or "
						"MACHINE.json)");
	a->file = argv[optind];
	if (a->group == NULL)
		a->group = "world";
	if (a->nops == 0)
		for (size_t k = 0; k < NOPS; k++)
			if (op_by_default(k))
				a->ops[a->nops++] = k;
	if (a->nsizes == 0) {
		a->nsizes = sizeof(default_sizes) / sizeof(default_sizes[0]);
		memcpy(a->sizes, default_sizes, sizeof(default_sizes));
	}
	return -1;
}

/* Parses argv (argv[0] = "predict").  Returns -1 to go on, or an exit
 * status. */
static int parse(struct args *a, int argc, char **argv)
{
	int c, rc;

	memset(a, 0, sizeof(*a));
	a->timeout = DEFAULT_TIMEOUT;
	a->costs = calloc((size_t)argc + 1, sizeof(*a->costs));
	if (a->costs == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hg:t:o:", long_opts, NULL)) !=
	       -1) {
		if (c == 'h') {
			printf("%s%s", usage, help);
			return EXIT_OK;
		}
		rc = input_option(a, c, optarg);
		if (rc == NOT_MINE)
			rc = output_option(a, c, optarg);
		if (rc == NOT_MINE)
			rc = option_error(c, argv);
		if (rc >= 0)
			return rc;
	}
	return finish_args(a, argc, argv);
}

static void args_free(struct args *a)
{
	for (size_t i = 0; i < a->ntbuf; i++)
		free(a->tbuf[i]);
	free(a->costs);
}

/* ---------------------------------------------------------------------- */
/* The input: a group and its trees */

struct input {
	topo_machine *m;   /* a machine description, or */
	topo_compiled *c;  /* a compile output */
	topo_group *own_g; /* built from the machine */
	const topo_group *g;
	const topo_tree *trees[MAX_TREES];
	topo_tree *own[MAX_TREES];
	size_t ntrees;
};

static void input_free(struct input *in)
{
	for (size_t i = 0; i < in->ntrees; i++)
		topo_tree_free(in->own[i]);
	topo_group_free(in->own_g);
	topo_compiled_free(in->c);
	topo_machine_free(in->m);
	memset(in, 0, sizeof(*in));
}

/* "a, b, c": the groups of c (gi = (size_t)-1) or the trees of group gi. */
static void list_names(char *buf, size_t size, const topo_compiled *c,
		       size_t gi)
{
	size_t len = 0;
	size_t n = gi == (size_t)-1 ? topo_compiled_group_count(c)
				    : topo_compiled_tree_count(c, gi);

	buf[0] = '\0';
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(
		    buf + len, len < size ? size - len : 0, "%s%s",
		    i ? ", " : "",
		    gi == (size_t)-1
			? topo_group_name(topo_compiled_group(c, i))
			: topo_tree_name(topo_compiled_tree(c, gi, i)));
}

/* A compile output: the group by name, and its trees (those of -t, each
 * of which it must hold, or all of them in file order). */
static int load_compiled(struct input *in, const struct args *a,
			 const char *text, size_t len)
{
	const char *source = cli_source(a->file);
	char names[2048];
	topo_error err;
	size_t gi = 0;
	int rc;

	topo_error_clear(&err);
	rc = topo_compiled_load_string(&in->c, text, len, source, &err);
	if (rc != 0)
		return cli_error(&err, rc);
	in->g = topo_compiled_find_group(in->c, a->group);
	if (in->g == NULL) {
		list_names(names, sizeof(names), in->c, (size_t)-1);
		cli_msg("%s: no group \"%s\" (groups: %s)", source, a->group,
			names);
		return EXIT_USAGE;
	}
	while (topo_compiled_group(in->c, gi) != in->g)
		gi++;
	if (a->nshapes == 0) {
		size_t n = topo_compiled_tree_count(in->c, gi);

		for (size_t i = 0; i < n && i < MAX_TREES; i++)
			in->trees[in->ntrees++] =
			    topo_compiled_tree(in->c, gi, i);
		if (in->ntrees == 0) {
			cli_msg("%s: group \"%s\" has no tree", source,
				a->group);
			return EXIT_USAGE;
		}
		return -1;
	}
	for (size_t i = 0; i < a->nshapes; i++) {
		const topo_tree *t =
		    topo_compiled_find_tree(in->c, in->g, a->shapes[i]);

		if (t == NULL) {
			list_names(names, sizeof(names), in->c, gi);
			cli_msg("%s: group \"%s\" has no tree \"%s\" (trees: "
				"%s)",
				source, a->group, a->shapes[i], names);
			return EXIT_USAGE;
		}
		in->trees[in->ntrees++] = t;
	}
	return -1;
}

/* A machine description: the group (a name or a spec) and a tree of each
 * shape, built here. */
static int load_machine(struct input *in, const struct args *a,
			const char *text, size_t len)
{
	const char *const *shapes = a->nshapes > 0 ? a->shapes : default_trees;
	size_t n = a->nshapes > 0
		       ? a->nshapes
		       : sizeof(default_trees) / sizeof(default_trees[0]);
	topo_error err;
	int rc;

	topo_error_clear(&err);
	rc = topo_machine_load_string(&in->m, text, len, cli_source(a->file),
				      &err);
	if (rc != 0)
		return cli_error(&err, rc);
	rc = cli_group_new(&in->own_g, in->m, a->file, a->group);
	if (rc >= 0)
		return rc;
	in->g = in->own_g;
	for (size_t i = 0; i < n; i++) {
		rc = topo_tree_new(&in->own[i], in->g, shapes[i], &err);
		if (rc != 0)
			return cli_error(&err, rc);
		in->trees[in->ntrees++] = in->own[i];
	}
	return -1;
}

static int load_input(struct input *in, const struct args *a)
{
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(in, 0, sizeof(*in));
	rc = cli_load_text(a->file, &text, &len);
	if (rc >= 0)
		return rc;
	rc = cli_is_compiled(text, len) ? load_compiled(in, a, text, len)
					: load_machine(in, a, text, len);
	free(text);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* The predictions */

/* A column of an operation's table: a tree and an algorithm. */
struct col {
	size_t op;   /* the operation */
	size_t tree; /* index into input.trees (the first: any) */
	int tree_free; /* the algorithm does not use the tree */
	const char *algo;
	int is_default; /* the operation's default algorithm */
	int any; /* some size was predicted */
	int told; /* the text table told why it never was */
};

struct pool;
static const char *col_tree(const struct pool *P, const struct col *c);

/* One prediction: column col at size s is cell col * nsizes + s. */
struct cell {
	double seconds;
	int64_t messages;
	int code;     /* 0, or why there is no prediction (TOPO_E*) */
	char *reason; /* the library's text when code != 0 */
	int best;     /* the least time of its operation and size */
};

struct pool {
	const struct args *a;
	const struct input *in;
	struct col *cols;
	size_t ncols;
	struct cell *cells;
	const struct topo_costs *costs;
	double start;
	size_t *order; /* the jobs, largest sizes first */
	size_t njobs, next, done;
	int stop; /* a fatal error: the workers take no more jobs */
	size_t fatal_job;
	int fatal_code;
	topo_error fatal_err;
	pthread_mutex_t lock;
	pthread_cond_t changed;
};

/* The element type of operation k: --type, or collrun's default. */
static enum topo_type op_type(const struct args *a, size_t k)
{
	struct topo_plan_params d;

	if (a->have_type)
		return a->type;
	topo_plan_params_init(&d, sizeof(d), (enum topo_op)k);
	return d.type;
}

/* Plans and predicts job j into its cell.  Returns 0, or a fatal code
 * (out of memory or time) with err set. */
static int run_job(struct pool *P, size_t j, topo_error *err)
{
	const struct args *a = P->a;
	const struct col *c = &P->cols[j / a->nsizes];
	struct cell *cell = &P->cells[j];
	struct topo_plan_params pp;
	struct topo_predict_params qp;
	topo_plan *p = NULL;
	topo_prediction *r = NULL;
	int rc;

	topo_error_clear(err);
	topo_plan_params_init(&pp, sizeof(pp), (enum topo_op)c->op);
	pp.algorithm = c->algo;
	pp.bytes = (enum topo_op)c->op == TOPO_OP_BARRIER
		       ? 0
		       : (size_t)a->sizes[j % a->nsizes];
	pp.type = op_type(a, c->op);
	pp.predict_only = 1;
	pp.timeout = a->timeout;
	pp.elapsed = now_s() - P->start;
	if (pp.elapsed >= a->timeout) {
		err->code = TOPO_ETIMEDOUT;
		snprintf(err->text, sizeof(err->text),
			 "the run did not finish within %g s (predicting)",
			 a->timeout);
		return TOPO_ETIMEDOUT;
	}
	rc = topo_plan_new(&p, P->in->trees[c->tree], &pp, err);
	if (rc == 0) {
		topo_predict_params_init(&qp, sizeof(qp));
		qp.costs = P->costs;
		qp.timeout = a->timeout;
		qp.elapsed = now_s() - P->start;
		rc = topo_plan_predict(p, &qp, &r, err);
	}
	if (rc == 0) {
		cell->seconds = topo_prediction_seconds(r);
		cell->messages = topo_plan_messages(p);
	}
	topo_prediction_free(r);
	topo_plan_free(p);
	if (rc == TOPO_ENOMEM || rc == TOPO_ETIMEDOUT)
		return rc;
	cell->code = rc;
	if (rc != 0) {
		cell->reason = strdup(err->text[0] != '\0' ? err->text
							   : topo_strerror(rc));
		if (cell->reason == NULL) {
			err->code = TOPO_ENOMEM;
			snprintf(err->text, sizeof(err->text), "out of memory");
			return TOPO_ENOMEM;
		}
	}
	return 0;
}

static void *worker(void *arg)
{
	struct pool *P = arg;
	topo_error err;

	pthread_mutex_lock(&P->lock);
	while (!P->stop && P->next < P->njobs) {
		size_t j = P->order[P->next++];
		int rc;

		pthread_mutex_unlock(&P->lock);
		rc = run_job(P, j, &err);
		pthread_mutex_lock(&P->lock);
		P->done++;
		/* The first fatal error in job order is the one reported,
		 * whichever thread met it first. */
		if (rc != 0 && (!P->stop || j < P->fatal_job)) {
			P->stop = 1;
			P->fatal_job = j;
			P->fatal_code = rc;
			P->fatal_err = err;
		}
		pthread_cond_broadcast(&P->changed);
	}
	pthread_mutex_unlock(&P->lock);
	return NULL;
}

/* CPUs this process may run on (at least 1). */
static int cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	return 1;
}

/* Largest sizes first, so that the long predictions start early and the
 * threads end together; then column order. */
static const struct pool *sort_pool;

static int cmp_job(const void *x, const void *y)
{
	size_t i = *(const size_t *)x, j = *(const size_t *)y;
	size_t n = sort_pool->a->nsizes;
	uint64_t a = sort_pool->a->sizes[i % n], b = sort_pool->a->sizes[j % n];

	if (a != b)
		return a > b ? -1 : 1;
	return (i > j) - (i < j);
}

/* Progress on standard error when it is a terminal, erased at the end. */
static void show_progress(size_t done, size_t total, int *shown)
{
	fprintf(stderr, "\r\033[K%s: predicting: %zu of %zu (%d%%)", cli_prog,
		done, total, (int)(100.0 * (double)done / (double)total));
	fflush(stderr);
	*shown = 1;
}

/* Runs every job.  Returns -1, or prints the fatal error and returns the
 * exit status. */
static int run_all(struct pool *P)
{
	const struct args *a = P->a;
	pthread_t tid[MAX_JOBS];
	int nthreads = a->jobs > 0 ? a->jobs : cpus(), started = 0;
	int tty = isatty(STDERR_FILENO), shown = 0;

	P->njobs = P->ncols * a->nsizes;
	P->order = malloc((P->njobs + 1) * sizeof(size_t));
	if (P->order == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	for (size_t j = 0; j < P->njobs; j++)
		P->order[j] = j;
	sort_pool = P;
	qsort(P->order, P->njobs, sizeof(size_t), cmp_job);
	if ((size_t)nthreads > P->njobs)
		nthreads = (int)P->njobs;
	if (nthreads > MAX_JOBS)
		nthreads = MAX_JOBS;
	pthread_mutex_init(&P->lock, NULL);
	pthread_cond_init(&P->changed, NULL);
	/* One job at a time needs no thread: the main thread works. */
	for (int i = 0; nthreads > 1 && i < nthreads; i++) {
		if (pthread_create(&tid[i], NULL, worker, P) != 0)
			break;
		started++;
	}
	if (started == 0) {
		worker(P);
	} else {
		pthread_mutex_lock(&P->lock);
		while (P->done < P->njobs && !(P->stop && P->done == P->next)) {
			struct timespec ts;

			clock_gettime(CLOCK_REALTIME, &ts);
			ts.tv_nsec += 100000000L;
			if (ts.tv_nsec >= 1000000000L) {
				ts.tv_sec++;
				ts.tv_nsec -= 1000000000L;
			}
			pthread_cond_timedwait(&P->changed, &P->lock, &ts);
			if (tty && !P->stop)
				show_progress(P->done, P->njobs, &shown);
		}
		pthread_mutex_unlock(&P->lock);
		for (int i = 0; i < started; i++)
			pthread_join(tid[i], NULL);
	}
	if (shown)
		fputs("\r\033[K", stderr);
	pthread_cond_destroy(&P->changed);
	pthread_mutex_destroy(&P->lock);
	if (P->stop) {
		const struct col *c = &P->cols[P->fatal_job / a->nsizes];
		char size[32];

		snprintf(size, sizeof(size), "%" PRIu64,
			 a->sizes[P->fatal_job % a->nsizes]);
		/* Which prediction ran out, then the library's words. */
		fprintf(stderr, "%s: %s over ", cli_prog,
			topo_op_name((enum topo_op)c->op));
		cli_put_clean(stderr, col_tree(P, c));
		fprintf(stderr, " with %s at %s bytes: ", c->algo, size);
		cli_put_clean(stderr, P->fatal_err.text[0] != '\0'
					  ? P->fatal_err.text
					  : topo_strerror(P->fatal_code));
		fputc('\n', stderr);
		return EXIT_FAILED;
	}
	return -1;
}

/* Marks the best cell of every operation and size: the least time, the
 * first column among equals. */
static void mark_best(struct pool *P)
{
	size_t n = P->a->nsizes;

	for (size_t c = 0; c < P->ncols; c++)
		for (size_t s = 0; s < n; s++)
			if (P->cells[c * n + s].code == 0)
				P->cols[c].any = 1;
	for (size_t k = 0; k < NOPS; k++)
		for (size_t s = 0; s < n; s++) {
			struct cell *best = NULL;

			for (size_t c = 0; c < P->ncols; c++) {
				struct cell *x = &P->cells[c * n + s];

				if (P->cols[c].op != k || x->code != 0)
					continue;
				if (best == NULL || x->seconds < best->seconds)
					best = x;
			}
			if (best != NULL)
				best->best = 1;
		}
}

/* ---------------------------------------------------------------------- */
/* Formats */

/* Bytes exactly: "8 B", "4 KiB", "16 MiB"; "1500 B" where no binary unit
 * divides them. */
static void fmt_size(char *buf, size_t size, uint64_t n)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	int u = 0;

	while (u < 4 && n >= 1024 && n % 1024 == 0) {
		n /= 1024;
		u++;
	}
	snprintf(buf, size, "%" PRIu64 " %s", n, unit[u]);
}

/* Seconds for people, three significant digits in the unit that shows
 * them best: "830 ns", "51.9 us", "1.23 ms", "4.56 s". */
static void fmt_time(char *buf, size_t size, double sec)
{
	static const char *const unit[] = {"ns", "us", "ms", "s"};
	double v = sec * 1e9;
	int u = 0;

	if (sec <= 0) {
		snprintf(buf, size, "0 s");
		return;
	}
	while (u < 3 && v >= 999.5) {
		v /= 1000;
		u++;
	}
	snprintf(buf, size, "%.*f %s",
		 v >= 99.95   ? 0
		 : v >= 9.995 ? 1
			      : 2,
		 v, unit[u]);
}

/* Number of nodes hosting members of g. */
static int32_t member_nodes(const topo_group *g)
{
	const topo_machine *m = topo_group_machine(g);
	const int32_t *mem = topo_group_members(g);
	int32_t n = 0, last = -1;

	/* Members ascend by endpoint id, hence by node. */
	for (int32_t r = 0; r < topo_group_size(g); r++) {
		int32_t node = topo_machine_endpoint_node(m, mem[r]);

		if (node != last)
			n++;
		last = node;
	}
	return n;
}

/* The reduction type shown with the costs, or -1 without reduce. */
static int reduce_type(const struct args *a)
{
	for (size_t i = 0; i < a->nops; i++)
		if (topo_op_reduces((enum topo_op)a->ops[i]))
			return (int)op_type(a, a->ops[i]);
	return -1;
}

/* The columns of operation k: [first, end). */
static void op_cols(const struct pool *P, size_t k, size_t *first, size_t *end)
{
	*first = 0;
	while (*first < P->ncols && P->cols[*first].op != k)
		(*first)++;
	*end = *first;
	while (*end < P->ncols && P->cols[*end].op == k)
		(*end)++;
}

/* Whether column c has no prediction at any of its n sizes, for one
 * reason. */
static int same_reason(const struct pool *P, size_t c, size_t n)
{
	const char *r0 = n > 0 ? P->cells[c * n].reason : NULL;

	if (P->cols[c].any || r0 == NULL)
		return 0;
	for (size_t s = 0; s < n; s++)
		if (P->cells[c * n + s].code == 0 ||
		    P->cells[c * n + s].reason == NULL ||
		    strcmp(P->cells[c * n + s].reason, r0) != 0)
			return 0;
	return 1;
}

static const char *col_tree(const struct pool *P, const struct col *c)
{
	return c->tree_free ? "any" : topo_tree_name(P->in->trees[c->tree]);
}

/* Columns c and d show the same tree (tree-free ones: "any"). */
static int same_tree(const struct col *c, const struct col *d)
{
	return c->tree_free == d->tree_free &&
	       (c->tree_free || c->tree == d->tree);
}

/* Writes line (a memstream's text) to f without its trailing blanks, and
 * a newline; frees it. */
static void put_line(FILE *f, char *line, size_t len)
{
	while (len > 0 && line[len - 1] == ' ')
		len--;
	fwrite(line, 1, len, f);
	fputc('\n', f);
	free(line);
}

/* The width of s as cli_put_clean prints it. */
static size_t clean_len(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		n += ((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f ? 4
									    : 1;
	return n;
}

/* The text of a cell: its time, or "n/a". */
static void fmt_cell(char *buf, size_t size, const struct cell *x)
{
	if (x->code == 0)
		fmt_time(buf, size, x->seconds);
	else
		snprintf(buf, size, "n/a");
}

/* The columns [first, end) of one operation's table. */
struct table_cols {
	size_t first, end;
	size_t wl;		  /* the width of the sizes */
	size_t w[2 * MAX_TREES]; /* of each column, w[c - first] */
};

/* Widths: a column is as wide as its algorithm and its cells; the sizes
 * as wide as the widest.  (write_headings widens some further.) */
static void table_widths(const struct pool *P, struct table_cols *t)
{
	const struct args *a = P->a;
	size_t n = a->nsizes;
	char buf[64];

	t->wl = strlen("bytes");
	for (size_t s = 0; s < n; s++) {
		fmt_size(buf, sizeof(buf), a->sizes[s]);
		if (strlen(buf) > t->wl)
			t->wl = strlen(buf);
	}
	for (size_t c = t->first; c < t->end; c++) {
		t->w[c - t->first] = strlen(P->cols[c].algo);
		for (size_t s = 0; s < n; s++) {
			fmt_cell(buf, sizeof(buf), &P->cells[c * n + s]);
			if (strlen(buf) > t->w[c - t->first])
				t->w[c - t->first] = strlen(buf);
		}
	}
}

/* The line of tree headings: a tree's heading spans its columns,
 * widening the last if need be.  Columns with no prediction at all are
 * left out (listed under the table instead). */
static void write_headings(FILE *f, const struct pool *P, struct table_cols *t)
{
	size_t first = t->first, end = t->end, wl = t->wl, *w = t->w;
	char *line;
	size_t len;
	FILE *l = open_memstream(&line, &len);

	if (l == NULL)
		return;
	fprintf(l, "%*s", (int)wl, "");
	for (size_t c = first; c < end;) {
		size_t e = c, span = 0, k2 = 0, name, pad;

		/* The visible columns of this tree: [c, e). */
		while (e < end && same_tree(&P->cols[e], &P->cols[c]))
			e++;
		for (size_t x = c; x < e; x++)
			if (P->cols[x].any) {
				span += (k2 > 0 ? 3 : 0) + w[x - first];
				k2++;
			}
		name = clean_len(col_tree(P, &P->cols[c]));
		if (k2 == 1 && name > span) {
			for (size_t x = c; x < e; x++)
				if (P->cols[x].any)
					w[x - first] += name - span;
			span = name;
		} else if (k2 > 1 && name + 2 > span) {
			size_t last = e - 1;

			while (!P->cols[last].any)
				last--;
			w[last - first] += name + 2 - span;
			span = name + 2;
		}
		if (k2 == 1) {
			fputs("  ", l);
			for (size_t i = name; i < span; i++)
				fputc(' ', l);
			cli_put_clean(l, col_tree(P, &P->cols[c]));
			fputc(' ', l);
		} else if (k2 > 1) {
			pad = span - name - 2;
			fputs("  ", l);
			for (size_t i = 0; i < pad / 2; i++)
				fputc('-', l);
			fputc(' ', l);
			cli_put_clean(l, col_tree(P, &P->cols[c]));
			fputc(' ', l);
			for (size_t i = 0; i < pad - pad / 2; i++)
				fputc('-', l);
			fputc(' ', l);
		}
		c = e;
	}
	fclose(l);
	put_line(f, line, len);
}

/* The heading of algorithms, then a row per size with the best marked
 * and named. */
static void write_rows(FILE *f, const struct pool *P, const struct table_cols *t)
{
	const struct args *a = P->a;
	size_t n = a->nsizes, first = t->first, end = t->end, wl = t->wl;
	const size_t *w = t->w;
	char buf[64];

	fprintf(f, "%*s", (int)wl, "bytes");
	for (size_t c = first; c < end; c++)
		if (P->cols[c].any)
			fprintf(f, "  %*s ", (int)w[c - first],
				P->cols[c].algo);
	fputs("  best\n", f);
	for (size_t s = 0; s < n; s++) {
		const struct col *bc = NULL;

		fmt_size(buf, sizeof(buf), a->sizes[s]);
		fprintf(f, "%*s", (int)wl, buf);
		for (size_t c = first; c < end; c++) {
			const struct cell *x = &P->cells[c * n + s];

			if (!P->cols[c].any)
				continue;
			fmt_cell(buf, sizeof(buf), x);
			fprintf(f, "  %*s%c", (int)w[c - first], buf,
				x->best ? '*' : ' ');
			if (x->best)
				bc = &P->cols[c];
		}
		fputs("  ", f);
		if (bc != NULL) {
			cli_put_clean(f, col_tree(P, bc));
			fprintf(f, "/%s\n", bc->algo);
		} else {
			fputs("-\n", f);
		}
	}
}

/* Why some combinations have no prediction.  An algorithm that no tree
 * but its own can run (reduce hierarchical) is refused at every size of
 * every other tree for one reason, told once with the trees it names;
 * the tree-specific detail after the reason's first ';' is left to
 * --json. */
static void write_shared_reasons(FILE *f, const struct pool *P,
				 const struct table_cols *t)
{
	size_t n = P->a->nsizes, first = t->first, end = t->end;

	for (size_t c = first; c < end; c++) {
		const char *r0 = P->cells[c * n].reason;
		size_t plen;
		int done = 0;

		if (!same_reason(P, c, n))
			continue;
		plen = strcspn(r0, ";");
		for (size_t d = first; d < c && !done; d++)
			done = same_reason(P, d, n) &&
			       strcmp(P->cols[d].algo, P->cols[c].algo) == 0 &&
			       P->cells[d * n].reason != NULL &&
			       strncmp(P->cells[d * n].reason, r0, plen) == 0 &&
			       strcspn(P->cells[d * n].reason, ";") == plen;
		if (done)
			continue; /* told with an earlier tree */
		fprintf(f, "  n/a: %s at every size over ", P->cols[c].algo);
		for (size_t d = c, nt = 0; d < end; d++) {
			const char *rd = P->cells[d * n].reason;

			if (!same_reason(P, d, n) || strcmp(P->cols[d].algo, P->cols[c].algo) ||
			    strncmp(rd, r0, plen) != 0 ||
			    strcspn(rd, ";") != plen)
				continue;
			fputs(nt++ ? ", " : "", f);
			cli_put_clean(f, col_tree(P, &P->cols[d]));
			P->cols[d].told = 1;
		}
		fputs(": ", f);
		fwrite(r0, 1, plen, f);
		fputc('\n', f);
	}
}

/* The other combinations without a prediction: each run of sizes with
 * one reason, once. */
static void write_size_reasons(FILE *f, const struct pool *P,
			       const struct table_cols *t)
{
	const struct args *a = P->a;
	size_t n = a->nsizes, first = t->first, end = t->end;

	for (size_t c = first; c < end; c++)
		for (size_t s = 0; s < n && !P->cols[c].told;) {
			const struct cell *x = &P->cells[c * n + s];
			size_t e = s + 1;
			char from[32], to[32];

			if (x->code == 0) {
				s++;
				continue;
			}
			while (e < n && P->cells[c * n + e].code != 0 &&
			       strcmp(P->cells[c * n + e].reason, x->reason) ==
				   0)
				e++;
			fmt_size(from, sizeof(from), a->sizes[s]);
			fmt_size(to, sizeof(to), a->sizes[e - 1]);
			fputs("  n/a: ", f);
			cli_put_clean(f, col_tree(P, &P->cols[c]));
			fprintf(f, "/%s", P->cols[c].algo);
			if (s == 0 && e == n)
				fputs(", every size: ", f);
			else if (e - s == 1)
				fprintf(f, ", %s: ", from);
			else
				fprintf(f, ", %s to %s: ", from, to);
			cli_put_clean(f, x->reason);
			fputc('\n', f);
			s = e;
		}
}

/* The table of operation k: a row per size, a column per tree and
 * algorithm that has any prediction (a tree's algorithms under one
 * heading), the best marked and named; then why some have none. */
static void write_table(FILE *f, const struct pool *P, size_t k)
{
	const struct args *a = P->a;
	struct table_cols t;

	op_cols(P, k, &t.first, &t.end);
	if ((enum topo_op)k == TOPO_OP_BARRIER) /* no data, no type */
		fprintf(f, "\nbarrier (no data: the same at every size)\n");
	else
		fprintf(f, "\n%s (%s)\n", topo_op_name((enum topo_op)k),
			topo_type_name(op_type(a, k)));
	table_widths(P, &t);
	write_headings(f, P, &t);
	write_rows(f, P, &t);
	write_shared_reasons(f, P, &t);
	write_size_reasons(f, P, &t);
}

static void write_text(FILE *f, const struct pool *P)
{
	const struct args *a = P->a;
	const topo_group *g = P->in->g;
	const topo_machine *m = topo_group_machine(g);

	fputs("machine: ", f);
	cli_put_clean(f, topo_machine_name(m));
	fprintf(f, " (%d nodes, %d endpoints)\ngroup:   ",
		(int)topo_machine_nodes(m), (int)topo_machine_endpoints(m));
	cli_put_clean(f, topo_group_name(g));
	fputs(" (", f);
	cli_put_clean(f, topo_group_spec(g));
	fprintf(f, "): %d member%s on %d node%s\n", (int)topo_group_size(g),
		topo_group_size(g) == 1 ? "" : "s", (int)member_nodes(g),
		member_nodes(g) == 1 ? "" : "s");
	fputs("costs:   ", f);
	cli_costs_print(f, P->costs, reduce_type(a));
	fputs(" (ns; G, reduce: ns per byte)\n", f);
	fputs("plans:   as collrun's: each tree's root, the default segments "
	      "and chunks\n"
	      "times:   predicted (LogGP) per tree and algorithm; * marks the "
	      "least of each\n"
	      "         size, named under best as tree/algorithm\n",
	      f);
	for (size_t i = 0; i < a->nops; i++)
		write_table(f, P, a->ops[i]);
}

/*
 * A CSV field: quoted (RFC 4180) when it holds a comma, a quote or a line
 * break.  A name is anything a compile output says, and a spreadsheet runs
 * a cell that starts with =, +, - or @ (or a tab or a carriage return
 * before one) as a formula: such a field is neutralised as OWASP's advice
 * on CSV injection says, with a single quote before it, and quoted, so
 * that it reads as the text it is.
 */
static void csv_field(FILE *f, const char *s)
{
	int formula = s[0] != '\0' && strchr("=+-@\t\r", s[0]) != NULL;

	if (!formula && strpbrk(s, ",\"\r\n") == NULL) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	if (formula)
		fputc('\'', f);
	for (; *s != '\0'; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

static void write_csv(FILE *f, const struct pool *P)
{
	const struct args *a = P->a;
	size_t n = a->nsizes;

	fputs("op,tree,algorithm,bytes,seconds,best,reason\n", f);
	for (size_t i = 0; i < a->nops; i++) {
		size_t first, end;

		op_cols(P, a->ops[i], &first, &end);
		for (size_t c = first; c < end; c++)
			for (size_t s = 0; s < n; s++) {
				const struct cell *x = &P->cells[c * n + s];

				fprintf(f, "%s,",
					topo_op_name((enum topo_op)a->ops[i]));
				csv_field(f, col_tree(P, &P->cols[c]));
				fprintf(f, ",%s,%" PRIu64 ",", P->cols[c].algo,
					a->sizes[s]);
				if (x->code == 0)
					fprintf(f, "%.10g", x->seconds);
				fprintf(f, ",%d,", x->best);
				if (x->code != 0)
					csv_field(f, x->reason);
				fputc('\n', f);
			}
	}
}

/* The --json object; NULL when out of memory. */
/* Sets e's "tree" and "algorithm" to column c's; nonzero when one could
 * not be set. */
static int set_column(json_t *e, const struct pool *P, size_t c)
{
	int bad = json_object_set_new(e, "tree",
				      json_string(col_tree(P, &P->cols[c])));

	bad |= json_object_set_new(e, "algorithm",
				   json_string(P->cols[c].algo));
	return bad != 0;
}

static json_t *report_json(const struct pool *P)
{
	const struct args *a = P->a;
	const topo_group *g = P->in->g;
	size_t n = a->nsizes;
	json_t *o = json_object(), *sizes = json_array(), *ops = json_array();
	int bad = o == NULL || sizes == NULL || ops == NULL;

	if (bad) {
		json_decref(o);
		json_decref(sizes);
		json_decref(ops);
		return NULL;
	}
	bad |= json_object_set_new(
	    o, "machine",
	    json_string(topo_machine_name(topo_group_machine(g))));
	bad |= json_object_set_new(o, "group", json_string(topo_group_name(g)));
	bad |= json_object_set_new(o, "spec", json_string(topo_group_spec(g)));
	bad |=
	    json_object_set_new(o, "members", json_integer(topo_group_size(g)));
	bad |= json_object_set_new(o, "member_nodes",
				   json_integer(member_nodes(g)));
	bad |= json_object_set_new(o, "costs", cli_costs_json(P->costs));
	for (size_t s = 0; s < n; s++)
		bad |= json_array_append_new(
		    sizes, json_integer((json_int_t)a->sizes[s]));
	bad |= json_object_set_new(o, "sizes", sizes);
	for (size_t i = 0; i < a->nops && !bad; i++) {
		size_t k = a->ops[i], first, end;
		json_t *op = json_object(), *res = json_array(),
		       *best = json_array();

		op_cols(P, k, &first, &end);
		/* Children are filled, then attached: a failed attach frees
		 * the child, and the whole object is dropped. */
		bad |= json_object_set_new(
		    op, "op", json_string(topo_op_name((enum topo_op)k)));
		bad |= json_object_set_new(
		    op, "type", json_string(topo_type_name(op_type(a, k))));
		for (size_t c = first; c < end; c++)
			for (size_t s = 0; s < n; s++) {
				const struct cell *x = &P->cells[c * n + s];
				json_t *e = json_object();

				bad |= set_column(e, P, c);
				bad |= json_object_set_new(
				    e, "bytes",
				    json_integer((json_int_t)a->sizes[s]));
				bad |= json_object_set_new(
				    e, "seconds",
				    x->code == 0 ? json_real(x->seconds)
						 : json_null());
				if (x->code == 0)
					bad |= json_object_set_new(
					    e, "messages",
					    json_integer(x->messages));
				bad |= json_object_set_new(
				    e, "best", json_boolean(x->best));
				if (x->code != 0)
					bad |= json_object_set_new(
					    e, "reason",
					    json_string(x->reason));
				bad |= json_array_append_new(res, e);
			}
		for (size_t s = 0; s < n; s++) {
			json_t *e = NULL;

			for (size_t c = first; c < end; c++) {
				const struct cell *x = &P->cells[c * n + s];

				if (!x->best)
					continue;
				e = json_object();
				bad |= json_object_set_new(
				    e, "bytes",
				    json_integer((json_int_t)a->sizes[s]));
				bad |= set_column(e, P, c);
				bad |= json_object_set_new(
				    e, "seconds", json_real(x->seconds));
			}
			if (e == NULL) { /* nothing predicted at this size */
				e = json_object();
				bad |= json_object_set_new(
				    e, "bytes",
				    json_integer((json_int_t)a->sizes[s]));
				bad |=
				    json_object_set_new(e, "tree", json_null());
				bad |= json_object_set_new(e, "algorithm",
							   json_null());
				bad |= json_object_set_new(e, "seconds",
							   json_null());
			}
			bad |= json_array_append_new(best, e);
		}
		bad |= json_object_set_new(op, "results", res);
		bad |= json_object_set_new(op, "best", best);
		bad |= json_array_append_new(ops, op);
	}
	bad |= json_object_set_new(o, "operations", ops);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---------------------------------------------------------------------- */
/* The plot */

/* s as a gnuplot single-quoted string (no escapes inside; '' is a quote),
 * control characters dropped. */
static void gp_string(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s != '\0'; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			continue;
		if (*s == '\'')
			fputc('\'', f);
		fputc(*s, f);
	}
	fputc('\'', f);
}

/* The name of operation k's data block: "$" and the operation's name with
 * every character that cannot be in a gnuplot identifier (reduce-scatter's
 * hyphen) as an underscore, since gnuplot takes "$reduce" alone as the
 * name and refuses the rest of the line. */
static void gp_block(FILE *f, size_t k)
{
	fputc('$', f);
	for (const char *s = topo_op_name((enum topo_op)k); *s != '\0'; s++)
		fputc((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
			      (*s >= '0' && *s <= '9')
			  ? *s
			  : '_',
		      f);
}

/* Can operation k be drawn: a column with a time above 0 (log scale)? */
static int plottable(const struct pool *P, size_t k, size_t c)
{
	size_t n = P->a->nsizes;

	if (P->cols[c].op != k)
		return 0;
	for (size_t s = 0; s < n; s++)
		if (P->cells[c * n + s].code == 0 &&
		    P->cells[c * n + s].seconds > 0)
			return 1;
	return 0;
}

/* Writes the gnuplot script, data included as one data block per
 * operation: it draws on standard output.  Returns the number of panels
 * (operations with something to draw). */
static int write_plot_script(FILE *f, const struct pool *P, int png)
{
	const struct args *a = P->a;
	const topo_group *g = P->in->g;
	size_t n = a->nsizes;
	int panels = 0, rows, cols;
	char buf[32], title[600];

	for (size_t i = 0; i < a->nops; i++)
		for (size_t c = 0; c < P->ncols; c++)
			if (plottable(P, a->ops[i], c)) {
				panels++;
				break;
			}
	rows = panels > 2 ? 2 : 1;
	cols = panels > 1 ? 2 : 1;
	fputs("# collc predict: predicted time against bytes per member, one "
	      "line per\n# tree/algorithm.  gnuplot 5 draws it on standard "
	      "output:\n",
	      f);
	fprintf(f, "#   gnuplot THIS_FILE > plot.%s\n", png ? "png" : "svg");
	if (png) {
		fprintf(f,
			"if (strstrt(GPVAL_TERMINALS, 'pngcairo') > 0) {\n"
			"    set terminal pngcairo size %d,%d font "
			"'Helvetica,10' noenhanced\n"
			"} else {\n"
			"    set terminal png size %d,%d noenhanced\n"
			"}\n",
			cols * 700, rows * 500, cols * 700, rows * 500);
	} else {
		fprintf(f,
			"set terminal svg size %d,%d dynamic noenhanced "
			"font 'Helvetica,11' background rgb 'white'\n",
			cols * 700, rows * 500);
	}
	fputs("set encoding utf8\n"
	      "set datafile missing '?'\n"
	      "set logscale xy\n"
	      "set grid\n"
	      "set key outside right top noenhanced\n"
	      "set xlabel 'bytes per member'\n"
	      "set ylabel 'predicted time (s)'\n"
	      "set format y '%g'\n"
	      "set style data linespoints\n",
	      f);
	/* x tics at the sizes, labelled exactly. */
	fputs("set xtics (", f);
	for (size_t s = 0; s < n; s++) {
		fmt_size(buf, sizeof(buf), a->sizes[s]);
		fprintf(f, "%s'%s' %" PRIu64, s ? ", " : "", buf, a->sizes[s]);
	}
	fputs(") rotate by -30\n", f);
	for (size_t i = 0; i < a->nops; i++) {
		size_t k = a->ops[i];

		/* Numbers only: names, which a compile output may make
		 * anything, go in quoted titles (gp_string). */
		gp_block(f, k);
		fputs(" << EOD\n", f);
		for (size_t s = 0; s < n; s++) {
			fprintf(f, "%" PRIu64, a->sizes[s]);
			for (size_t c = 0; c < P->ncols; c++) {
				const struct cell *x = &P->cells[c * n + s];

				if (!plottable(P, k, c))
					continue;
				if (x->code == 0 && x->seconds > 0)
					fprintf(f, " %.10g", x->seconds);
				else
					fputs(" ?", f);
			}
			fputc('\n', f);
		}
		fputs("EOD\n", f);
	}
	fprintf(f, "set multiplot layout %d,%d title ", rows, cols);
	snprintf(title, sizeof(title),
		 "%s, group %s (%d members): predicted time (LogGP)",
		 topo_machine_name(topo_group_machine(g)), topo_group_name(g),
		 (int)topo_group_size(g));
	gp_string(f, title);
	fputc('\n', f);
	/* A colour per tree, a dash pattern and a point per algorithm (the
	 * operation's default solid), so a tree's lines read together. */
	for (size_t i = 0; i < a->nops; i++) {
		size_t k = a->ops[i], col = 1;
		const char *sep = "plot ";

		fprintf(f, "set title '%s (%s)'\n",
			topo_op_name((enum topo_op)k),
			topo_type_name(op_type(a, k)));
		for (size_t c = 0; c < P->ncols; c++) {
			size_t alg = P->cols[c].is_default ? 0 : 1;

			if (!plottable(P, k, c))
				continue;
			col++;
			snprintf(title, sizeof(title), "%s/%s",
				 col_tree(P, &P->cols[c]), P->cols[c].algo);
			fputs(sep, f);
			gp_block(f, k);
			fprintf(f, " using 1:%zu title ", col);
			gp_string(f, title);
			fprintf(f, " lc %zu dt %zu pt %zu",
				P->cols[c].tree % 8 + 1, alg + 1, 2 * alg + 5);
			sep = ", \\\n     ";
		}
		if (col > 1)
			fputc('\n', f);
	}
	fputs("unset multiplot\n", f);
	return panels;
}

/* Is gnuplot on PATH? */
static int have_gnuplot(void)
{
	const char *path = getenv("PATH");
	char buf[4096];

	if (path == NULL)
		path = "/usr/bin:/bin";
	while (*path != '\0') {
		size_t len = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/gnuplot",
			 len == 0 ? 1 : (int)len, len == 0 ? "." : path);
		if (access(buf, X_OK) == 0)
			return 1;
		path += len;
		if (*path == ':')
			path++;
	}
	return 0;
}

/* Writes the plot script to --plot-script.  Returns 0 or an exit status. */
static int plot_script(const struct pool *P)
{
	struct cli_out out;
	int rc = cli_out_open(&out, P->a->plot_script);

	if (rc != 0)
		return rc;
	write_plot_script(out.f, P, P->a->plot_png);
	return cli_out_commit(&out);
}

/* The first line gnuplot wrote on its standard error, without leading
 * blanks, into buf. */
static void first_line(FILE *f, char *buf, size_t size)
{
	char line[512];

	buf[0] = '\0';
	rewind(f);
	while (fgets(line, sizeof(line), f) != NULL) {
		char *s = line + strspn(line, " \t");

		s[strcspn(s, "\r\n")] = '\0';
		if (*s != '\0') {
			snprintf(buf, size, "%s", s);
			return;
		}
	}
}

/* --plot: runs gnuplot with the script on its standard input and the plot
 * file (atomic, as -o) on its standard output, within the time left.
 * Returns 0 or an exit status. */
static int plot(const struct pool *P)
{
	const struct args *a = P->a;
	FILE *script = tmpfile(), *errs = tmpfile();
	struct cli_out out;
	struct stat st;
	char why[512];
	int rc = EXIT_FAILED, status = 0, panels;
	pid_t pid;

	if (script == NULL || errs == NULL) {
		cli_msg("--plot: cannot make a temporary file: %s",
			strerror(errno));
		goto done;
	}
	panels = write_plot_script(script, P, a->plot_png);
	if (fflush(script) != 0 || ferror(script)) {
		cli_msg("--plot: cannot write a temporary file: %s",
			strerror(errno));
		goto done;
	}
	if (panels == 0) {
		cli_msg("--plot: nothing to draw: no prediction above 0 s (a "
			"log scale has no 0)");
		goto done;
	}
	rewind(script);
	rc = cli_out_open(&out, a->plot);
	if (rc != 0)
		goto done;
	fflush(out.f);
	pid = fork();
	if (pid == 0) {
		char *argv[] = {"gnuplot", NULL};

		if (dup2(fileno(script), STDIN_FILENO) < 0 ||
		    dup2(fileno(out.f), STDOUT_FILENO) < 0 ||
		    dup2(fileno(errs), STDERR_FILENO) < 0)
			_exit(127);
		execvp("gnuplot", argv);
		fprintf(stderr, "cannot run gnuplot: %s\n", strerror(errno));
		_exit(127);
	}
	if (pid < 0) {
		cli_out_abort(&out);
		cli_msg("--plot: cannot run gnuplot: %s", strerror(errno));
		rc = EXIT_FAILED;
		goto done;
	}
	/* gnuplot within what is left of --timeout. */
	for (;;) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR))
			break;
		if (now_s() - P->start >= a->timeout) {
			kill(pid, SIGKILL);
			waitpid(pid, &status, 0);
			cli_out_abort(&out);
			cli_msg("the run did not finish within %g s (gnuplot "
				"drawing %s)",
				a->timeout, a->plot);
			rc = EXIT_FAILED;
			goto done;
		}
		nanosleep(&(struct timespec){0, 5000000L}, NULL);
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
	    fstat(fileno(out.f), &st) != 0 ||
	    (S_ISREG(st.st_mode) && st.st_size == 0)) {
		fflush(errs);
		first_line(errs, why, sizeof(why));
		cli_out_abort(&out);
		if (WIFSIGNALED(status))
			cli_msg("--plot: gnuplot was killed by signal %d",
				WTERMSIG(status));
		else
			cli_msg("--plot: gnuplot failed (exit status %d)%s%s",
				WIFEXITED(status) ? WEXITSTATUS(status) : -1,
				why[0] != '\0' ? ": " : "", why);
		rc = EXIT_FAILED;
		goto done;
	}
	rc = cli_out_commit(&out);
done:
	if (script != NULL)
		fclose(script);
	if (errs != NULL)
		fclose(errs);
	return rc;
}

/* ---------------------------------------------------------------------- */

/* The columns: per operation, per tree, per algorithm; per operation the
 * algorithms over each tree, then those that use no tree, once (planned
 * over the first tree).  Returns -1 with *out and *n set, or an exit
 * status. */
static int make_cols(const struct args *a, const struct input *in,
		     struct col **out, size_t *n)
{
	struct col *cols;
	size_t ncols = 0, max_algos = 0;

	for (size_t k = 0; k < NOPS; k++)
		if (topo_algorithm_count((enum topo_op)k) > max_algos)
			max_algos = topo_algorithm_count((enum topo_op)k);
	cols = calloc(NOPS * (MAX_TREES + 1) * max_algos, sizeof(*cols));
	if (cols == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	for (size_t i = 0; i < a->nops; i++) {
		size_t k0 = a->ops[i];
		enum topo_op op = (enum topo_op)k0;

		for (size_t t = 0; t <= in->ntrees; t++)
			for (size_t k = 0; k < topo_algorithm_count(op); k++) {
				unsigned f = topo_algorithm_flags(op, k);
				int free_ = !(f & TOPO_ALG_TREE);

				if (t == in->ntrees ? !free_ : free_)
					continue;
				cols[ncols].op = k0;
				cols[ncols].tree = t == in->ntrees ? 0 : t;
				cols[ncols].tree_free = free_;
				cols[ncols].algo = topo_algorithm_name(op, k);
				cols[ncols].is_default =
				    (f & TOPO_ALG_DEFAULT) != 0;
				ncols++;
			}
	}
	*out = cols;
	*n = ncols;
	return -1;
}

/* The outputs, each complete or not at all, one after the other
 * (cli_out names one temporary file at a time): the plot first, so that
 * gnuplot failing leaves nothing behind.  Returns the exit status. */
static int write_outputs(const struct pool *P)
{
	const struct args *a = P->a;
	struct cli_out out;
	int rc;

	if (a->plot != NULL) {
		rc = plot(P);
		if (rc != 0)
			return rc;
	}
	if (a->plot_script != NULL) {
		rc = plot_script(P);
		if (rc != 0)
			return rc;
	}
	rc = cli_out_open(&out, a->output);
	if (rc != 0)
		return rc;
	if (a->format == FMT_JSON) {
		/* Ten significant digits, as collrun --predict --json:
		 * nanoseconds up to ten seconds. */
		rc = cli_json_write(out.f, report_json(P), 10);
		if (rc != 0) {
			cli_out_abort(&out);
			return rc;
		}
	} else if (a->format == FMT_CSV) {
		write_csv(out.f, P);
	} else {
		write_text(out.f, P);
	}
	return cli_out_commit(&out);
}

int collc_predict(int argc, char **argv)
{
	struct args a;
	struct input in;
	struct pool P;
	struct topo_costs costs;
	struct col *cols = NULL;
	double start = now_s();
	size_t ncols = 0;
	int rc;

	memset(&in, 0, sizeof(in));
	memset(&P, 0, sizeof(P));
	rc = parse(&a, argc, argv);
	if (rc >= 0)
		goto done;
	cli_watchdog_arm(a.timeout, a.timeout, a.file);
	rc = load_input(&in, &a);
	cli_watchdog_disarm();
	if (rc >= 0)
		goto done;
	if (now_s() - start >= a.timeout) {
		cli_msg("the run did not finish within %g s (loading %s)",
			a.timeout, cli_source(a.file));
		rc = EXIT_FAILED;
		goto done;
	}
	rc =
	    cli_costs_load(&costs, topo_group_machine(in.g), a.costs, a.ncosts);
	if (rc >= 0)
		goto done;
	if (a.plot != NULL && !have_gnuplot()) {
		cli_msg("--plot: gnuplot is not installed (Debian: apt-get "
			"install gnuplot-nox); --plot-script FILE writes the "
			"script to draw it elsewhere");
		rc = EXIT_FAILED;
		goto done;
	}
	rc = make_cols(&a, &in, &cols, &ncols);
	if (rc >= 0)
		goto done;
	P.a = &a;
	P.in = &in;
	P.cols = cols;
	P.ncols = ncols;
	P.costs = &costs;
	P.start = start;
	P.cells = calloc(ncols * a.nsizes, sizeof(*P.cells));
	if (P.cells == NULL) {
		cli_msg("out of memory");
		rc = EXIT_FAILED;
		goto done;
	}
	rc = run_all(&P);
	if (rc >= 0)
		goto done;
	mark_best(&P);
	rc = write_outputs(&P);
done:
	if (P.cells != NULL)
		for (size_t j = 0; j < ncols * a.nsizes; j++)
			free(P.cells[j].reason);
	free(P.cells);
	free(P.order);
	free(cols);
	input_free(&in);
	args_free(&a);
	return rc;
}
