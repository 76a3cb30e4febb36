/*
 * collrun.c - the replay program: `collrun OP [options] FILE`.
 *
 * Plans one collective (bcast, scatter, gather, reduce) over a group's
 * tree, read from a compile output or compiled in memory from a machine
 * description, runs it with real data through libtopo's executor, and
 * prints what happened: a text report, or one JSON object with --json
 * (collrun(1)).  Exit status 0 when every byte every member ended with was
 * right, 1 when the run happened but failed, 2 for usage and input errors.
 *
 * Built with an MPI compiler and -DCOLLRUN_MPI it is collrun-mpi, which
 * runs the plan across the processes of an MPI job (collrun_mpi.c,
 * collrun(1) ACROSS PROCESSES): the same options, reports and statuses.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <malloc.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "algorithms.h"
#include "topo.h"
#include "util.h"

/* Processes of the MPI job that runs the plan (collrun-mpi); 0 for collrun,
 * whose members are threads of one process. */
static int shown_processes;

/* collrun runs the plan in this process; collrun-mpi, built from this
 * file, across the ranks of an MPI job. */
#ifdef COLLRUN_MPI
#include "collrun_mpi.h"
#define run_plan collrun_mpi_run
#define plan_new collrun_mpi_plan
#else
#define run_plan topo_plan_run
#define plan_new topo_plan_new
#endif

static const char usage_text[] =
    "usage: collrun OP [--root EP | --root-rank R] [-g GROUP] [-t TREE]\n"
    "               [--bytes N] [--type T] [--op OP] [--algorithm A] "
    "[--threads N]\n"
    "               [--iterations N] [--timeout S] [--segment N] "
    "[--chunk N] [--fresh]\n"
    "               [--verify every|last] "
    "[--predict] [--cost CLASS.KEY=NS]...\n"
    "               [--emit-goal FILE] [--emit-smpi DIR] "
    "[--max-size SIZE] [--json]\n"
    "               ROUTES.json|MACHINE.json\n"
    "       collrun OP --help | collrun --help | --version\n"
    "       collrun --list-algorithms [--json]\n";

static const char help_text[] =
    "\n"
    "Replay a collective operation over a group's tree with real data, "
    "check\n"
    "every byte every member ends with, and report what it did.\n"
    "\n"
    "operations (OP) and algorithms (the first is the default):\n"
    "  bcast           flood (the route table, from any root)\n"
    "  scatter         tree, or-combine, direct\n"
    "  gather          chunked, tree\n"
    "  reduce          hierarchical, tree, direct\n"
    "  allreduce       tree, hierarchical, ring, recursive-doubling, "
    "rabenseifner\n"
    "  allgather       ring, tree, recursive-doubling, bruck, direct (the "
    "default\n"
    "                  for a group on one node)\n"
    "  reduce-scatter  ring, tree, recursive-halving, direct (the default for "
    "a\n"
    "                  group on one node)\n"
    "  alltoall        pairwise, bruck, direct\n"
    "  barrier         dissemination, tree\n"
    "\n"
    "options:\n"
    "  --root EP         bcast, scatter, gather, reduce: the logical root, "
    "an\n"
    "                    endpoint id (default: the tree's root)\n"
    "  --root-rank R     the logical root, a group rank\n"
    "  -g GROUP          group name, or for a machine a stride spec "
    "(default world)\n"
    "  -t TREE           physical, hierarchical, binomial, chain, kary:K\n"
    "                    (default: hierarchical for reduce and "
    "allreduce,\n"
    "                    physical otherwise)\n"
    "  --bytes N         bytes per member, or per block of scatter, gather, "
    "allgather,\n"
    "                    reduce-scatter, alltoall; suffixes K, M, G "
    "(default 8)\n"
    "  --type T          int8..int64, uint8..uint64, float, double\n"
    "                    (default: int32 for reductions, int8 "
    "otherwise)\n"
    "  --op OP           reduce, allreduce, reduce-scatter: sum, prod, min, "
    "max,\n"
    "                    band, bor, bxor (default sum)\n"
    "  --algorithm A     see above\n"
    "  --threads N       threads, this one too (default: CPUs this "
    "process may use)\n"
    "  --iterations N    repetitions, each timed and verified (default 1)\n"
    "  --timeout S       seconds for the whole run (default 60)\n"
    "  --fresh           newly allocated buffers for every iteration (one "
    "run each)\n"
    "  --verify WHEN     every (default): each iteration verified before "
    "the next;\n"
    "                    last: only the last, the iterations back to back\n"
    "  --segment N       bcast, reduce, allreduce and reduce-scatter over "
    "a tree:\n"
    "                    segment size (default: from 256K up, 64K across nodes,\n"
    "                    256K or more on one node: collrun(1));\n"
    "                    reduce-scatter direct: cut each block (default: "
    "whole);\n"
    "                    reduce direct: default B/4 within 64K..256K from "
    "128K up\n"
    "  --chunk N         gather chunked: chunk size in bytes (default: "
    "auto)\n"
    "  --json            one JSON object on standard output\n"
    "\n"
    "prediction (collrun(1) PREDICTION): no data moves, no buffers\n"
    "  --predict         predict the plan's time on the described machine "
    "(LogGP)\n"
    "  --cost K=NS       override a cost of the machine's, such as "
    "net.L=1500,\n"
    "                    shm.G=0.05 or reduce.double=0.3 (repeatable)\n"
    "  --emit-goal FILE  write the plan as a GOAL schedule (LogGOPSim); "
    "implies\n"
    "                    --predict\n"
    "  --emit-smpi DIR   write SimGrid time-independent traces and a "
    "platform;\n"
    "                    implies --predict\n"
    "  --max-size SIZE   refuse an --emit-* output larger than SIZE (K, M, "
    "G, T\n"
    "                    suffixes; default 1G; none: no limit)\n"
    "  --list-algorithms list every operation's algorithms and default "
    "tree\n"
    "  -h, --help        show this help (after OP: that operation's)\n"
    "  -V, --version     show the version\n"
    "\n"
    "exit status: 0 verified (or predicted), 1 the run failed (undelivered, "
    "duplicated\n"
    "or wrong data, timeout), 2 usage or input error\n"
    "See collrun(1), collc(1), collc(5), collc(7), libtopo(3).\n";

/* Error lines shown by the text report; --json lists all the library
 * kept. */
#define TEXT_ERRORS 20

enum {
	OPT_ROOT = 256,
	OPT_BYTES,
	OPT_TYPE,
	OPT_OP,
	OPT_ALGORITHM,
	OPT_THREADS,
	OPT_ITERATIONS,
	OPT_TIMEOUT,
	OPT_SEGMENT,
	OPT_CHUNK,
	OPT_JSON,
	OPT_FRESH,
	OPT_VERIFY,
	OPT_ROOT_RANK,
	OPT_PREDICT,
	OPT_COST,
	OPT_EMIT_GOAL,
	OPT_EMIT_SMPI,
	OPT_MAX_SIZE,
	OPT_LIST_ALGORITHMS,
};

/* The default --max-size of the --emit-* outputs: collc compile's, 1 GiB,
 * far above the schedules of the plans one would simulate elsewhere
 * (tens of thousands of members: some megabytes), far below those of
 * plans of millions of messages, which can reach gigabytes. */
#define DEFAULT_MAX_SIZE ((uint64_t)1 << 30)

/* What `collrun OP --help` says of each operation: its algorithms (the
 * default first), its default tree, and the options only it takes. */
static const struct {
	enum topo_op op;
	const char *text;
} op_help[] = {
    {TOPO_OP_BCAST, "\nbcast: every member ends with the root's --bytes.\n"
		    "  algorithms:  flood (the route table, from any root)\n"
		    "  tree:        physical by default\n"
		    "  --segment N  segment size (default: from 256K up, 64K across "
		    "nodes,\n"
		    "               256K on one node)\n"
		    "  type:        int8 by default (bytes are bytes)\n"},
    {TOPO_OP_SCATTER,
     "\nscatter: member of rank r ends with block r of the root's buffer "
     "of\nmembers x --bytes.\n"
     "  algorithms:  tree (default), or-combine, direct\n"
     "  tree:        physical by default\n"},
    {TOPO_OP_GATHER,
     "\ngather: the root ends with every member's --bytes, in rank "
     "order.\n"
     "  algorithms:  chunked (default), tree\n"
     "  tree:        physical by default\n"
     "  --chunk N    chunked: chunk size in bytes, a multiple of the type "
     "size\n"
     "               (default: auto)\n"},
    {TOPO_OP_REDUCE,
     "\nreduce: the root ends with the element-wise --op of every "
     "member's --bytes.\n"
     "  algorithms:  hierarchical (default; needs -t hierarchical), tree "
     "(any tree),\n"
     "               direct (the root combines every member's contribution "
     "itself;\n"
     "               any tree)\n"
     "  tree:        hierarchical by default\n"
     "  --type T     int8..int64, uint8..uint64, float, double (default "
     "int32)\n"
     "  --op OP      sum (default), prod, min, max, band, bor, bxor\n"
     "  --segment N  segment size, a multiple of the type size (default: "
     "from 256K\n"
     "               up, 64K across nodes; on one node 256K, for 4 members "
     "or more\n"
     "               half of --bytes up to 1M; direct: a quarter of --bytes "
     "within\n"
     "               64K..256K from 128K up)\n"},
    {TOPO_OP_ALLREDUCE,
     "\nallreduce: every member ends with the element-wise --op of every "
     "member's\n--bytes.\n"
     "  algorithms:  tree (default: reduce up the tree, broadcast back "
     "down,\n"
     "               pipelined), hierarchical (needs -t hierarchical), "
     "ring,\n"
     "               recursive-doubling, rabenseifner\n"
     "  tree:        hierarchical by default (tree and hierarchical use "
     "it)\n"
     "  --type T     int8..int64, uint8..uint64, float, double (default "
     "int32)\n"
     "  --op OP      sum (default), prod, min, max, band, bor, bxor\n"
     "  --segment N  tree, hierarchical: segment size, a multiple of the "
     "type size\n"
     "               (default: from 256K up, 64K across nodes; on one node "
     "256K, for\n"
     "               4 members or more half of --bytes up to 1M)\n"},
    {TOPO_OP_ALLGATHER,
     "\nallgather: every member ends with every member's --bytes, in rank "
     "order.\n"
     "  algorithms:  ring (default), tree (gather up the tree, broadcast "
     "down),\n"
     "               recursive-doubling, bruck\n"
     "  tree:        physical by default (used by tree)\n"},
    {TOPO_OP_REDUCE_SCATTER,
     "\nreduce-scatter: member of rank r ends with block r (--bytes) of the "
     "element-wise\n--op of every member's members x --bytes.\n"
     "  algorithms:  ring (default across nodes), tree (reduce up the tree, "
     "scatter\n"
     "               down), recursive-halving, direct (each block combined "
     "where it\n"
     "               ends; default for a group on one node)\n"
     "  tree:        physical by default (used by tree)\n"
     "  --type T     int8..int64, uint8..uint64, float, double (default "
     "int32)\n"
     "  --op OP      sum (default), prod, min, max, band, bor, bxor\n"
     "  --segment N  tree, direct: segment size, a multiple of the type "
     "size\n"
     "               (direct: default whole blocks)\n"},
    {TOPO_OP_ALLTOALL,
     "\nalltoall: member r ends with block r (--bytes) of every member's "
     "members x\n--bytes, in rank order.\n"
     "  algorithms:  pairwise (default), bruck, direct\n"},
    {TOPO_OP_BARRIER,
     "\nbarrier: no member leaves before every member has entered; no "
     "data.\n"
     "  algorithms:  dissemination (default), tree (fan in, fan out)\n"
     "  tree:        physical by default (used by tree)\n"},
};

static const struct option long_opts[] = {
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {"group", required_argument, NULL, 'g'},
    {"tree", required_argument, NULL, 't'},
    {"root", required_argument, NULL, OPT_ROOT},
    {"bytes", required_argument, NULL, OPT_BYTES},
    {"type", required_argument, NULL, OPT_TYPE},
    {"op", required_argument, NULL, OPT_OP},
    {"algorithm", required_argument, NULL, OPT_ALGORITHM},
    {"threads", required_argument, NULL, OPT_THREADS},
    {"iterations", required_argument, NULL, OPT_ITERATIONS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"segment", required_argument, NULL, OPT_SEGMENT},
    {"chunk", required_argument, NULL, OPT_CHUNK},
    {"json", no_argument, NULL, OPT_JSON},
    {"fresh", no_argument, NULL, OPT_FRESH},
    {"verify", required_argument, NULL, OPT_VERIFY},
    {"root-rank", required_argument, NULL, OPT_ROOT_RANK},
    {"predict", no_argument, NULL, OPT_PREDICT},
    {"cost", required_argument, NULL, OPT_COST},
    {"emit-goal", required_argument, NULL, OPT_EMIT_GOAL},
    {"emit-smpi", required_argument, NULL, OPT_EMIT_SMPI},
    {"max-size", required_argument, NULL, OPT_MAX_SIZE},
    {"list-algorithms", no_argument, NULL, OPT_LIST_ALGORITHMS},
    {NULL, 0, NULL, 0},
};

struct args {
	enum topo_op op;
	const char *file;
	const char *group, *tree, *algorithm;
	const char *type_name, *redop_name; /* as given, or NULL */
	struct topo_plan_params plan;
	struct topo_run_params run;
	int have_segment, have_chunk, have_bytes;
	int32_t root_rank; /* --root-rank, or -1 */
	int json;
	int fresh; /* --fresh: one run per iteration, buffers anew */
	/* --predict (also implied by --emit-*): no run, a prediction */
	int predict;
	const char **costs; /* the --cost assignments in order [ncosts] */
	int ncosts;
	const char *emit_goal, *emit_smpi;
	uint64_t max_size; /* --max-size of the --emit-* outputs; 0: none */
	int have_max_size;
	/* replay-only options given (refused with --predict) */
	const char *run_option;
	int list_algorithms; /* --list-algorithms */
	int help;            /* -h, --help */
	int others; /* options given besides --json and --list-algorithms */
};

/* What an option parser returns for an option of another's. */
#define NOT_MINE (-2)

/* A size that fits a size_t (cli_parse_size).  Returns 0, -1 when s is
 * not a size, -2 when it is too large. */
static int parse_size(const char *s, size_t *out)
{
	uint64_t v;
	int rc = cli_parse_size(s, &v);

	if (rc != 0)
		return rc;
	if (v > SIZE_MAX)
		return -2;
	*out = (size_t)v;
	return 0;
}

/* A decimal integer in [min, max].  Returns 0 or -1. */
static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* Options of what is planned: the root, sizes, type, operator and
 * algorithm.  Returns -1 when c was one and is taken, NOT_MINE when it is
 * none of them, or an exit status. */
static int plan_option(struct args *a, int c, const char *arg)
{
	topo_error err;
	size_t size;
	long v;

	switch (c) {
	case OPT_ROOT:
		if (parse_long(arg, 0, INT32_MAX, &v) != 0)
			return cli_usage_error(usage_text,
					       "--root: expected an "
					       "endpoint id, an integer "
					       ">= 0 (got \"%s\")",
					       arg);
		a->plan.root = (int32_t)v;
		return -1;
	case OPT_ROOT_RANK:
		if (parse_long(arg, 0, INT32_MAX, &v) != 0)
			return cli_usage_error(usage_text,
					       "--root-rank: expected a "
					       "group rank, an integer from 0 "
					       "to 2147483647 (got \"%s\")",
					       arg);
		a->root_rank = (int32_t)v;
		return -1;
	case OPT_BYTES:
		if (parse_size(arg, &size) == -2)
			return cli_usage_error(usage_text,
					       "--bytes: %s is too large", arg);
		if (parse_size(arg, &size) != 0 || size == 0)
			return cli_usage_error(usage_text,
					       "--bytes: expected a size "
					       "of at least 1, such as 8, "
					       "4K or 1M (got \"%s\")",
					       arg);
		a->plan.bytes = size;
		a->have_bytes = 1;
		return -1;
	case OPT_SEGMENT:
	case OPT_CHUNK:
		if (parse_size(arg, &size) == -2)
			return cli_usage_error(
			    usage_text, "--%s: %s is too large",
			    c == OPT_SEGMENT ? "segment" : "chunk", arg);
		if (parse_size(arg, &size) != 0)
			return cli_usage_error(
			    usage_text,
			    "--%s: expected a size such "
			    "as 0, 4096 or 64K (got "
			    "\"%s\")",
			    c == OPT_SEGMENT ? "segment" : "chunk", arg);
		if (c == OPT_SEGMENT) {
			a->plan.segment = size;
			a->have_segment = 1;
		} else {
			a->plan.chunk = size;
			a->have_chunk = 1;
		}
		return -1;
	case OPT_TYPE:
		a->type_name = arg;
		topo_error_clear(&err);
		if (topo_type_parse(&a->plan.type, arg, &err) != 0) {
			cli_msg("--type: %s", err.text);
			return EXIT_USAGE;
		}
		return -1;
	case OPT_OP:
		a->redop_name = arg;
		topo_error_clear(&err);
		if (topo_redop_parse(&a->plan.redop, arg, &err) != 0) {
			cli_msg("--op: %s", err.text);
			return EXIT_USAGE;
		}
		return -1;
	case OPT_ALGORITHM:
		a->algorithm = arg;
		return -1;
	default:
		return NOT_MINE;
	}
}

/* Options of the replay: threads, iterations, timeout, --fresh and
 * --verify.  As plan_option. */
static int run_option(struct args *a, int c, const char *arg)
{
	long v;

	switch (c) {
	case OPT_THREADS:
		if (parse_long(arg, 1, 4096, &v) != 0)
			return cli_usage_error(usage_text,
					       "--threads: expected 1 to "
					       "4096 (got \"%s\")",
					       arg);
		a->run.threads = (int)v;
		a->run_option = "--threads";
		return -1;
	case OPT_ITERATIONS:
		if (parse_long(arg, 1, INT_MAX, &v) != 0)
			return cli_usage_error(usage_text,
					       "--iterations: expected an "
					       "integer from 1 to 2147483647 "
					       "(got \"%s\")",
					       arg);
		a->run.iterations = (int)v;
		a->run_option = "--iterations";
		return -1;
	case OPT_TIMEOUT:
		if (cli_parse_seconds(arg, &a->run.timeout) != 0)
			return cli_usage_error(usage_text,
					       "--timeout: expected "
					       "seconds greater than 0, "
					       "such as 60 or 0.5 (got "
					       "\"%s\")",
					       arg);
		return -1;
	case OPT_FRESH:
		a->fresh = 1;
		a->run_option = "--fresh";
		return -1;
	case OPT_VERIFY:
		if (strcmp(arg, "every") == 0)
			a->run.verify = TOPO_VERIFY_EVERY;
		else if (strcmp(arg, "last") == 0)
			a->run.verify = TOPO_VERIFY_LAST;
		else
			return cli_usage_error(usage_text,
					       "--verify: expected "
					       "every or last (got "
					       "\"%s\")",
					       arg);
		a->run_option = "--verify";
		return -1;
	default:
		return NOT_MINE;
	}
}

/* Options of the prediction and its schedules.  As plan_option. */
static int predict_option(struct args *a, int c, const char *arg)
{
	switch (c) {
	case OPT_PREDICT:
		a->predict = 1;
		return -1;
	case OPT_COST:
		/* Checked now; applied over the machine's costs once
		 * it is loaded. */
		if (cli_cost_check(arg, usage_text) >= 0)
			return EXIT_USAGE;
		a->costs[a->ncosts++] = arg;
		return -1;
	case OPT_EMIT_GOAL:
	case OPT_EMIT_SMPI:
		if (*arg == '\0')
			return cli_usage_error(
			    usage_text, "%s: expected a %s name",
			    c == OPT_EMIT_GOAL ? "--emit-goal" : "--emit-smpi",
			    c == OPT_EMIT_GOAL ? "file" : "directory");
		if (c == OPT_EMIT_GOAL)
			a->emit_goal = arg;
		else
			a->emit_smpi = arg;
		a->predict = 1;
		return -1;
	case OPT_MAX_SIZE: {
		uint64_t max;

		a->have_max_size = 1;
		if (strcmp(arg, "none") == 0) {
			a->max_size = 0;
			return -1;
		}
		if (cli_parse_size(arg, &max) != 0 || max == 0)
			return cli_usage_error(
			    usage_text,
			    "--max-size: expected a size of at least "
			    "1, such as 500M or 4G, or none (got "
			    "\"%s\")",
			    arg);
		a->max_size = max;
		return -1;
	}
	default:
		return NOT_MINE;
	}
}

/* The other options (what to show, the group and tree) and the errors
 * getopt_long found.  As plan_option, but never NOT_MINE. */
static int other_option(struct args *a, int c, char **argv)
{
	switch (c) {
	case OPT_LIST_ALGORITHMS:
		a->list_algorithms = 1;
		return -1;
	case 'h':
		a->help = 1; /* after the loop: which operation's? */
		return -1;
	case 'V':
		printf("%s %s\n", cli_prog, topo_version_string());
		return EXIT_OK;
	case 'g':
		a->group = optarg;
		return -1;
	case 't':
		a->tree = optarg;
		return -1;
	case OPT_JSON:
		a->json = 1;
		return -1;
	case ':':
		if (optopt >= OPT_ROOT || optopt == 0)
			return cli_usage_error(usage_text,
					       "option %s needs an "
					       "argument",
					       argv[optind - 1]);
		return cli_usage_error(usage_text,
				       "option -%c needs an argument", optopt);
	default:
		if (optopt > 0 && optopt < OPT_ROOT)
			return cli_usage_error(usage_text, "unknown option -%c",
					       optopt);
		return cli_usage_error(usage_text, "unknown option %s",
				       argv[optind - 1]);
	}
}

/* `collrun OP --help`: the usage, then that operation's part; without a
 * known operation, the whole help. */
static int show_help(struct args *a, int argc, char **argv)
{
	topo_error err;
	int npos = argc - optind;

	topo_error_clear(&err);
	if (npos >= 1 && topo_op_parse(&a->op, argv[optind], &err) == 0) {
		for (size_t i = 0; i < sizeof(op_help) / sizeof(op_help[0]);
		     i++)
			if (op_help[i].op == a->op)
				printf("%s%s", usage_text, op_help[i].text);
	} else {
		printf("%s%s", usage_text, help_text);
	}
	return EXIT_OK;
}

/* Options that exclude or need one another. Returns -1 or an exit
 * status. */
static int check_combinations(const struct args *a)
{
	if (a->predict && a->run_option != NULL)
		return cli_usage_error(usage_text,
				       "%s applies to a replay; "
				       "--predict%s runs none",
				       a->run_option,
				       a->emit_goal != NULL ||
					       a->emit_smpi != NULL
					   ? " (implied by --emit-*)"
					   : "");
	if (a->fresh && a->run.verify == TOPO_VERIFY_LAST)
		return cli_usage_error(
		    usage_text, "--verify last applies to iterations on the "
				"same buffers; --fresh makes each "
				"iteration a run of its own, verified");
	if (a->have_max_size && a->emit_goal == NULL && a->emit_smpi == NULL)
		return cli_usage_error(usage_text,
				       "--max-size applies to --emit-goal and "
				       "--emit-smpi");
	if (!a->predict && a->ncosts > 0)
		return cli_usage_error(usage_text,
				       "--cost applies to --predict, "
				       "--emit-goal and --emit-smpi; a "
				       "replay moves real data on this host");
	if (a->root_rank >= 0 && a->plan.root >= 0)
		return cli_usage_error(usage_text,
				       "--root and --root-rank both name "
				       "the root: give one");
	return -1;
}

/* Parses the command line into a.  Returns -1 to go on, or an exit
 * status. */
static int parse(struct args *a, int argc, char **argv)
{
	topo_error err;
	int c, npos, rc;

	memset(a, 0, sizeof(*a));
	/* at most one --cost per argument */
	a->costs = calloc((size_t)argc + 1, sizeof(*a->costs));
	if (a->costs == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	/* The library's defaults (collrun(1) documents them); the operation,
	 * and so reduce's default type, is known only at the end. */
	topo_plan_params_init(&a->plan, sizeof(a->plan), TOPO_OP_BCAST);
	topo_run_params_init(&a->run, sizeof(a->run));
	a->root_rank = -1;
	a->max_size = DEFAULT_MAX_SIZE;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":hVg:t:", long_opts, NULL)) !=
	       -1) {
		a->others += c != OPT_JSON && c != OPT_LIST_ALGORITHMS;
		rc = plan_option(a, c, optarg);
		if (rc == NOT_MINE)
			rc = run_option(a, c, optarg);
		if (rc == NOT_MINE)
			rc = predict_option(a, c, optarg);
		if (rc == NOT_MINE)
			rc = other_option(a, c, argv);
		if (rc >= 0)
			return rc;
	}
	npos = argc - optind;
	if (a->help)
		return show_help(a, argc, argv);
	if (a->list_algorithms) {
		if (npos > 0 || a->others > 0)
			return cli_usage_error(usage_text,
					       "--list-algorithms takes no "
					       "operation, file or option but "
					       "--json");
		return cli_list_algorithms(a->json);
	}
	rc = check_combinations(a);
	if (rc >= 0)
		return rc;
	if (npos == 0)
		return cli_usage_error(usage_text, "no operation given");
	topo_error_clear(&err);
	if (topo_op_parse(&a->op, argv[optind], &err) != 0)
		return cli_usage_error(usage_text, "%s", err.text);
	if (npos == 1)
		return cli_usage_error(
		    usage_text, "%s: no ROUTES.json or MACHINE.json given",
		    argv[optind]);
	if (npos > 2)
		return cli_usage_error(usage_text,
				       "too many arguments (\"%s\")",
				       argv[optind + 2]);
	a->file = argv[optind + 1];
	a->plan.op = a->op;
	if (a->type_name == NULL || !a->have_bytes) {
		struct topo_plan_params d;

		topo_plan_params_init(&d, sizeof(d), a->op);
		if (a->type_name == NULL)
			a->plan.type = d.type;
		if (!a->have_bytes)
			a->plan.bytes = d.bytes; /* barrier: 0 */
	}
	return -1;
}

/* The TOPO_ALG_* flags of op's algorithm alg (0: no such one). */
static unsigned algorithm_flags(enum topo_op op, const char *alg)
{
	for (size_t i = 0; i < topo_algorithm_count(op); i++)
		if (strcmp(topo_algorithm_name(op, i), alg) == 0)
			return topo_algorithm_flags(op, i);
	return 0;
}

/* Which of op's algorithms have any of flags: 1 some, 2 all, 0 none. */
static int algorithms_with(enum topo_op op, unsigned flags)
{
	size_t n = 0, k = topo_algorithm_count(op);

	for (size_t i = 0; i < k; i++)
		n += (topo_algorithm_flags(op, i) & flags) != 0;
	return n == 0 ? 0 : n == k ? 2 : 1;
}

/* Whether --segment applies to alg of op (segments cut the tree
 * algorithms' pipelines).  With none named, one of the defaults must
 * take it: which one runs depends on the group's nodes, checked once
 * planned (segment_refused).  A name op does not have is the planner's
 * to refuse, unless no algorithm of op would take a segment. */
static int segment_applies(enum topo_op op, const char *alg)
{
	unsigned f;

	for (size_t i = 0; alg == NULL && i < topo_algorithm_count(op); i++) {
		f = topo_algorithm_flags(op, i);
		if ((f & (TOPO_ALG_DEFAULT | TOPO_ALG_ONE_NODE)) &&
		    (f & TOPO_ALG_SEGMENT))
			return 1;
	}
	if (alg == NULL)
		return 0;
	f = algorithm_flags(op, alg);
	return f != 0 ? (f & TOPO_ALG_SEGMENT) != 0
		      : algorithms_with(op, TOPO_ALG_SEGMENT) == 2;
}

/* --segment with the default algorithm, once planned, where the default
 * over the group's nodes takes none (reduce-scatter's across nodes,
 * ring). */
static int segment_refused(const struct args *a, const topo_plan *p)
{
	const char *alg = topo_plan_algorithm(p);

	if (!a->have_segment || a->algorithm != NULL ||
	    (algorithm_flags(a->op, alg) & TOPO_ALG_SEGMENT))
		return -1;
	cli_msg("--segment applies to bcast, reduce, allreduce tree and "
		"hierarchical, and reduce-scatter tree and direct, not "
		"%s %s (the default for a group across nodes)",
		topo_op_name(a->op), alg);
	return EXIT_USAGE;
}

/* Options that only one operation reads are refused elsewhere rather than
 * silently ignored. */
static int check_op_options(const struct args *a)
{
	if (a->redop_name != NULL && !topo_op_reduces(a->op)) {
		cli_msg("--op applies to reduce, allreduce and reduce-scatter, "
			"not %s",
			topo_op_name(a->op));
		return EXIT_USAGE;
	}
	if ((a->plan.root >= 0 || a->root_rank >= 0) &&
	    !topo_op_has_root(a->op)) {
		cli_msg("%s has no root: --root and --root-rank apply to bcast, "
			"scatter, gather and reduce",
			topo_op_name(a->op));
		return EXIT_USAGE;
	}
	if (a->op == TOPO_OP_BARRIER &&
	    (a->have_bytes || a->type_name != NULL)) {
		cli_msg("barrier moves no data: --bytes and --type do not apply");
		return EXIT_USAGE;
	}
	if (a->have_segment && !segment_applies(a->op, a->algorithm)) {
		cli_msg("--segment applies to bcast, reduce, allreduce tree and "
			"hierarchical, and reduce-scatter tree and direct, not "
			"%s%s%s",
			topo_op_name(a->op), a->algorithm != NULL ? " " : "",
			a->algorithm != NULL ? a->algorithm : "");
		return EXIT_USAGE;
	}
	if (a->have_chunk && algorithms_with(a->op, TOPO_ALG_CHUNK) == 0) {
		cli_msg("--chunk applies to gather only, not %s",
			topo_op_name(a->op));
		return EXIT_USAGE;
	}
	if (a->have_chunk && a->algorithm != NULL &&
	    !(algorithm_flags(a->op, a->algorithm) & TOPO_ALG_CHUNK)) {
		cli_msg("--chunk applies to gather chunked only, not gather "
			"%s",
			a->algorithm);
		return EXIT_USAGE;
	}
	return -1;
}

/* What the report shows besides the library's report object. */
struct shown {
	const struct args *a;
	const topo_tree *t;
	const topo_plan *p;
	const topo_report *r;
	/* --fresh: the runs made and their seconds, which replace the
	 * report's (each run timed one iteration) */
	int runs;
	double tmin, tmed, tmax;
};

/* The report's seconds, or with --fresh those of all the runs. */
static void shown_seconds(const struct shown *s, double *tmin, double *tmed,
			  double *tmax)
{
	if (s->a->fresh) {
		*tmin = s->tmin;
		*tmed = s->tmed;
		*tmax = s->tmax;
		return;
	}
	topo_report_seconds(s->r, tmin, tmed, tmax);
}

static int shown_iterations(const struct shown *s)
{
	return s->a->fresh ? s->runs : topo_report_iterations(s->r);
}

/* What --bytes counts for op: a member's buffer, or one block of it. */
static const char *bytes_unit(enum topo_op op)
{
	/* (scatter's and gather's blocks are one per member) */
	return op == TOPO_OP_REDUCE_SCATTER || op == TOPO_OP_ALLTOALL
		   ? "block"
		   : "member";
}

/* The lines that say what was planned, the same for a replay's report and
 * a prediction's: op .. type. */
static void print_plan_text(const struct args *a, const topo_tree *t,
			    const topo_plan *p)
{
	const topo_group *g = topo_tree_group(t);

	printf("op:          %s\n", topo_op_name(a->op));
	printf("algorithm:   %s\n", topo_plan_algorithm(p));
	/* Names come from files and command lines: escaped, so that a name
	 * cannot forge a line of the report or reach the terminal raw. */
	fputs("group:       ", stdout);
	cli_put_clean(stdout, topo_group_name(g));
	fputs("\ntree:        ", stdout);
	cli_put_clean(stdout, topo_tree_name(t));
	putchar('\n');
	if (topo_op_has_root(a->op))
		printf("root:        endpoint %d (rank %d)\n",
		       (int)topo_plan_root(p),
		       (int)topo_group_rank(g, topo_plan_root(p)));
	printf("members:     %d\n", (int)topo_group_size(g));
	if (a->op == TOPO_OP_BARRIER)
		printf("bytes:       none (a barrier moves no data)\n");
	else
		printf("bytes:       %zu per %s\n", a->plan.bytes,
		       bytes_unit(a->op));
	if (a->op == TOPO_OP_BARRIER)
		;
	else if (topo_op_reduces(a->op))
		printf("type:        %s, op %s\n", topo_type_name(a->plan.type),
		       topo_redop_name(a->plan.redop));
	else
		printf("type:        %s\n", topo_type_name(a->plan.type));
}

/* The keys of the --json report that say what was planned, the same for a
 * replay and a prediction: op .. chunk.  Nonzero when one could not be
 * set. */
static int plan_json(json_t *o, const struct args *a, const topo_tree *t,
		     const topo_plan *p)
{
	const topo_group *g = topo_tree_group(t);
	int bad = 0;

	bad |= json_object_set_new(o, "op", json_string(topo_op_name(a->op)));
	bad |= json_object_set_new(o, "algorithm",
				   json_string(topo_plan_algorithm(p)));
	bad |= json_object_set_new(o, "group", json_string(topo_group_name(g)));
	bad |=
	    json_object_set_new(o, "tree", json_string(topo_tree_name(t)));
	if (topo_op_has_root(a->op)) {
		bad |= json_object_set_new(o, "root",
					   json_integer(topo_plan_root(p)));
		bad |= json_object_set_new(
		    o, "root_rank",
		    json_integer(topo_group_rank(g, topo_plan_root(p))));
	}
	bad |=
	    json_object_set_new(o, "members", json_integer(topo_group_size(g)));
	bad |= json_object_set_new(o, "bytes",
				   json_integer((json_int_t)a->plan.bytes));
	if (a->op != TOPO_OP_BARRIER)
		bad |= json_object_set_new(
		    o, "type", json_string(topo_type_name(a->plan.type)));
	if (topo_op_reduces(a->op))
		bad |= json_object_set_new(
		    o, "reduce_op",
		    json_string(topo_redop_name(a->plan.redop)));
	if (a->have_segment)
		bad |= json_object_set_new(
		    o, "segment", json_integer((json_int_t)a->plan.segment));
	if (a->have_chunk)
		bad |= json_object_set_new(
		    o, "chunk", json_integer((json_int_t)a->plan.chunk));
	return bad;
}

static int print_text(const struct shown *s)
{
	const struct args *a = s->a;
	const topo_report *r = s->r;
	/* A named machine's errors name the node too (collc(5) "hosts"). */
	const topo_machine *m = topo_group_machine(topo_tree_group(s->t));
	const char *host = topo_machine_host(m, 0);
	int64_t mshm, mnet, bshm, bnet, total;
	double tmin, tmed, tmax;
	size_t nerr = topo_report_error_count(r);

	topo_report_messages(r, &mshm, &mnet);
	topo_report_bytes_moved(r, &bshm, &bnet);
	shown_seconds(s, &tmin, &tmed, &tmax);
	total = topo_report_error_total(r);
	print_plan_text(a, s->t, s->p);
	if (shown_processes > 0)
		printf("processes:   %d (MPI ranks, a thread each)\n",
		       shown_processes);
	else
		printf("threads:     %d\n", topo_report_threads(r));
	printf("iterations:  %d%s\n", shown_iterations(s),
	       a->fresh ? " (fresh buffers each)"
	       : a->run.verify == TOPO_VERIFY_LAST
		   ? " (back to back, the last verified)"
		   : "");
	printf("messages:    %" PRId64 " per iteration (shm %" PRId64
	       ", net %" PRId64 ")\n",
	       mshm + mnet, mshm, mnet);
	printf("bytes moved: %" PRId64 " per iteration (shm %" PRId64
	       ", net %" PRId64 ")\n",
	       bshm + bnet, bshm, bnet);
	if (shown_iterations(s) > 0)
		printf("seconds:     min %.6f, median %.6f, max %.6f\n", tmin,
		       tmed, tmax);
	else
		printf("seconds:     none (no iteration completed)\n");
	if (topo_report_verified(r)) {
		printf("verified:    yes\n");
		return 0;
	}
	printf("verified:    no, %" PRId64 " error%s\n", total,
	       total == 1 ? "" : "s");
	for (size_t i = 0; i < nerr && i < TEXT_ERRORS; i++) {
		const char *kind, *detail;
		int32_t ep = topo_report_error(r, i, &kind, &detail);

		if (ep >= 0 && host != NULL)
			printf("  endpoint %d (node %d %s): %s: %s\n", (int)ep,
			       (int)topo_machine_endpoint_node(m, ep),
			       topo_machine_host(
				   m, topo_machine_endpoint_node(m, ep)),
			       kind, detail);
		else if (ep >= 0)
			printf("  endpoint %d: %s: %s\n", (int)ep, kind,
			       detail);
		else
			printf("  %s: %s\n", kind, detail);
	}
	if (total > TEXT_ERRORS)
		printf("  ... and %" PRId64 " more (--json lists up to %zu)\n",
		       total - TEXT_ERRORS, nerr);
	return 0;
}

static json_t *pair(const char *k1, json_t *v1, const char *k2, json_t *v2)
{
	json_t *o = json_object();
	int bad = 0;

	/* json_object_set_new takes (and on failure frees) the value, also a
	 * NULL one, and fails on a NULL object. */
	bad |= json_object_set_new(o, k1, v1);
	bad |= json_object_set_new(o, k2, v2);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* Builds the --json object; NULL when out of memory (any value or member
 * that could not be made: a report with a key missing must not pass for a
 * complete one). */
static json_t *report_json(const struct shown *s)
{
	const struct args *a = s->a;
	const topo_report *r = s->r;
	const topo_machine *m = topo_group_machine(topo_tree_group(s->t));
	int64_t mshm, mnet, bshm, bnet;
	double tmin, tmed, tmax;
	json_t *o = json_object(), *sec;
	int bad = 0;

	if (o == NULL)
		return NULL;
	topo_report_messages(r, &mshm, &mnet);
	topo_report_bytes_moved(r, &bshm, &bnet);
	shown_seconds(s, &tmin, &tmed, &tmax);
	bad |= plan_json(o, a, s->t, s->p);
	bad |= json_object_set_new(o, "threads",
				   json_integer(topo_report_threads(r)));
	if (shown_processes > 0)
		bad |= json_object_set_new(o, "processes",
					   json_integer(shown_processes));
	bad |= json_object_set_new(o, "iterations",
				   json_integer(shown_iterations(s)));
	bad |= json_object_set_new(o, "fresh", json_boolean(a->fresh));
	bad |= json_object_set_new(
	    o, "verify",
	    json_string(a->run.verify == TOPO_VERIFY_LAST ? "last" : "every"));
	bad |= json_object_set_new(o, "timeout", json_real(a->run.timeout));
	bad |= json_object_set_new(o, "buffer_bytes",
				   json_integer(topo_plan_buffer_bytes(s->p)));
	bad |= json_object_set_new(
	    o, "messages",
	    pair("shm", json_integer(mshm), "net", json_integer(mnet)));
	bad |= json_object_set_new(
	    o, "bytes_moved",
	    pair("shm", json_integer(bshm), "net", json_integer(bnet)));
	/* No iteration completed (a timeout before the first): no times, not
	 * zeros that would read as an instant collective. */
	sec = json_object();
	bad |= json_object_set_new(sec, "min", shown_iterations(s) > 0
						   ? json_real(tmin)
						   : json_null());
	bad |= json_object_set_new(sec, "median", shown_iterations(s) > 0
						      ? json_real(tmed)
						      : json_null());
	bad |= json_object_set_new(sec, "max", shown_iterations(s) > 0
						   ? json_real(tmax)
						   : json_null());
	bad |= json_object_set_new(o, "seconds", sec);
	bad |= json_object_set_new(o, "verified",
				   json_boolean(topo_report_verified(r)));
	bad |= json_object_set_new(o, "errors_total",
				   json_integer(topo_report_error_total(r)));
	if (!topo_report_verified(r)) {
		json_t *errs = json_array();

		for (size_t i = 0; i < topo_report_error_count(r); i++) {
			const char *kind, *detail;
			int32_t ep = topo_report_error(r, i, &kind, &detail);
			json_t *e = json_object();

			bad |= json_object_set_new(e, "endpoint",
						   ep >= 0 ? json_integer(ep)
							   : json_null());
			if (ep >= 0 && topo_machine_host(m, 0) != NULL) {
				int32_t node =
				    topo_machine_endpoint_node(m, ep);

				bad |= json_object_set_new(e, "node",
							   json_integer(node));
				bad |= json_object_set_new(
				    e, "host",
				    json_string(topo_machine_host(m, node)));
			}
			bad |=
			    json_object_set_new(e, "kind", json_string(kind));
			bad |= json_object_set_new(e, "detail",
						   json_string(detail));
			bad |= json_array_append_new(errs, e);
		}
		bad |= json_object_set_new(o, "errors", errs);
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Progress on standard error when it is a terminal: one line, rewritten
 * in place ("collrun: running: 9000 of 20000 (45%)"), erased when the run
 * ends.  The library calls it at most about ten times a second. */
static int progress_shown;

static void show_progress(void *ctx, const char *phase, int64_t done,
			  int64_t total)
{
	(void)ctx;
	if (total > 0)
		fprintf(stderr,
			"\r\033[K%s: %s: %" PRId64 " of %" PRId64 " (%d%%)",
			cli_prog, phase, done, total,
			(int)(100.0 * (double)done / (double)total));
	else
		fprintf(stderr, "\r\033[K%s: %s", cli_prog, phase);
	fflush(stderr);
	progress_shown = 1;
}

static void end_progress(void)
{
	if (progress_shown)
		fputs("\r\033[K", stderr);
	progress_shown = 0;
}

static int compare_double(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;

	return (a > b) - (a < b);
}

/* --fresh: one run of one iteration per iteration asked for, so that every
 * iteration works on buffers allocated for it alone, as a program would
 * whose data is new each time.  glibc's malloc would hand a freed arena
 * below its (dynamic, up to 32 MiB) mmap threshold back from the heap,
 * still warm; a threshold of one page makes every arena new zeroed pages
 * from mmap, returned to the kernel when the run frees them.  Stops at the
 * first run that does not verify, whose report is the one kept in *out;
 * s gets the runs made and their min, median and max seconds. */
static int run_fresh(const topo_plan *p, const struct topo_run_params *rp,
		     double start, topo_report **out, struct shown *s,
		     topo_error *err)
{
	struct topo_run_params one = *rp;
	int n = rp->iterations, rc = 0, cap = 0;
	double *secs = NULL, lo, med, hi;

	*out = NULL;
	s->runs = 0;
	mallopt(M_MMAP_THRESHOLD, 4096);
	one.iterations = 1;
	/* No progress per run: the runs are the iterations, shown here. */
	one.progress = NULL;
	for (int i = 0; i < n; i++) {
		topo_report_free(*out);
		*out = NULL;
		/* One timeout for all the runs: each is told how much of it
		 * is gone, and the one that runs out reports it. */
		one.elapsed = now_s() - start;
		rc = run_plan(p, &one, out, err);
		if (rc != 0)
			break;
		if (topo_report_iterations(*out) > 0) {
			/* The times, grown as runs complete: 2^31 - 1 runs
			 * ended by the timeout reserve nothing up front. */
			if (s->runs == cap) {
				int ncap = cap == 0 ? 1024
					   : cap > INT_MAX / 2 ? INT_MAX
							       : 2 * cap;
				double *more =
				    realloc(secs, (size_t)ncap * sizeof(double));

				if (more == NULL) {
					err->code = TOPO_ENOMEM;
					snprintf(err->text, sizeof(err->text),
						 "out of memory");
					rc = TOPO_ENOMEM;
					break;
				}
				secs = more;
				cap = ncap;
			}
			topo_report_seconds(*out, &lo, &med, &hi);
			secs[s->runs++] = med;
		}
		if (rp->progress != NULL)
			rp->progress(rp->progress_ctx, "running", i + 1, n);
		if (!topo_report_verified(*out))
			break;
	}
	if (s->runs > 0) {
		int k = s->runs;

		qsort(secs, (size_t)k, sizeof(double), compare_double);
		s->tmin = secs[0];
		s->tmax = secs[k - 1];
		s->tmed = k % 2 ? secs[k / 2]
				: (secs[k / 2 - 1] + secs[k / 2]) / 2;
	}
	free(secs);
	return rc;
}

static int print_json(const struct shown *s)
{
	/* Six significant digits: microseconds for the usual runs, and no
	 * binary noise such as 1.170899986391305e-5. */
	return cli_json_write(stdout, report_json(s), 6);
}

/* ---------------------------------------------------------------------- */
/* --predict */

/* The finish-time quantiles reported, and their names. */
static const double finish_q[] = {0, 0.5, 0.9, 0.99, 1};
static const char *const finish_names[] = {"min", "p50", "p90", "p99",
					   "max"};
#define NFINISH (sizeof(finish_q) / sizeof(finish_q[0]))

/* Critical-path steps listed: by the text report (the first and last
 * half of them), and by --json (the first and last half: a chain of
 * 8 million members has a path of 16 million steps). */
#define TEXT_STEPS 20
#define JSON_STEPS 10000

/* A time for people: seconds in the unit that shows it best. */
static void put_time(FILE *f, double sec)
{
	double a = fabs(sec);

	if (a == 0)
		fputs("0 s", f);
	else if (a < 1e-6)
		fprintf(f, "%.3f ns", sec * 1e9);
	else if (a < 1e-3)
		fprintf(f, "%.3f us", sec * 1e6);
	else if (a < 1)
		fprintf(f, "%.3f ms", sec * 1e3);
	else
		fprintf(f, "%.3f s", sec);
}

/* Steps i of the path shown when it has n: all of a short one, else the
 * first and last limit / 2. */
static int step_shown(int64_t i, int64_t n, int64_t limit)
{
	return n <= limit || i < limit / 2 || i >= n - limit / 2;
}

struct predicted {
	const struct args *a;
	const topo_tree *t;
	const topo_plan *p;
	const topo_prediction *r;
	double finish[NFINISH];
};

static int print_predict_text(const struct predicted *s)
{
	const struct args *a = s->a;
	const topo_group *g = topo_tree_group(s->t);
	const topo_prediction *r = s->r;
	int64_t mshm, mnet, bshm, bnet, n = topo_prediction_path_length(r);
	int32_t last = topo_prediction_last(r);
	struct topo_costs c;

	topo_costs_init(&c, sizeof(c));
	topo_prediction_costs(r, &c);
	topo_prediction_messages(r, &mshm, &mnet, &bshm, &bnet);
	print_plan_text(a, s->t, s->p);
	printf("messages:    %" PRId64 " (shm %" PRId64 ", net %" PRId64 ")\n",
	       mshm + mnet, mshm, mnet);
	printf("bytes moved: %" PRId64 " (shm %" PRId64 ", net %" PRId64 ")\n",
	       bshm + bnet, bshm, bnet);
	fputs("costs:       ", stdout);
	cli_costs_print(stdout, &c,
			a->op == TOPO_OP_REDUCE ? (int)a->plan.type : -1);
	fputs(" (ns; G, reduce: ns per byte)\n", stdout);
	fputs("predicted:   ", stdout);
	put_time(stdout, topo_prediction_seconds(r));
	printf(" (%.9f s)\n", topo_prediction_seconds(r));
	if (last >= 0)
		printf("last member: endpoint %d (rank %d)\n", (int)last,
		       (int)topo_group_rank(g, last));
	fputs("finish:      ", stdout);
	for (size_t i = 0; i < NFINISH; i++) {
		printf("%s%s ", i ? ", " : "", finish_names[i]);
		put_time(stdout, s->finish[i]);
	}
	printf("\ncritical path: %" PRId64 " step%s\n", n, n == 1 ? "" : "s");
	if (n > 0)
		printf("  %-12s %-12s %-8s %-25s %10s  %-10s %s\n", "start",
		       "end", "step", "endpoints", "bytes", "edge", "after");
	for (int64_t i = 0; i < n; i++) {
		const struct topo_path_step *st = topo_prediction_path_step(r, i);
		char who[40], edge[24];

		if (!step_shown(i, n, TEXT_STEPS)) {
			if (i == TEXT_STEPS / 2)
				printf("  ... %" PRId64 " more (--json lists "
				       "up to %d)\n",
				       n - TEXT_STEPS, JSON_STEPS);
			continue;
		}
		if (st->src == st->dst)
			snprintf(who, sizeof(who), "%d", (int)st->src);
		else
			snprintf(who, sizeof(who), "%d -> %d", (int)st->src,
				 (int)st->dst);
		if (st->hops > 1)
			snprintf(edge, sizeof(edge), "%s %d hops", st->edge,
				 (int)st->hops);
		else
			snprintf(edge, sizeof(edge), "%s",
				 *st->edge ? st->edge : "-");
		printf("  %-12.9f %-12.9f %-8s %-25s %10" PRId64 "  %-10s %s\n",
		       st->start, st->end, st->op, who, st->bytes, edge,
		       st->after);
	}
	return 0;
}

static json_t *predict_json(const struct predicted *s)
{
	const struct args *a = s->a;
	const topo_group *g = topo_tree_group(s->t);
	const topo_prediction *r = s->r;
	int64_t mshm, mnet, bshm, bnet, n = topo_prediction_path_length(r);
	int32_t last = topo_prediction_last(r);
	struct topo_costs c;
	json_t *o = json_object(), *pr = json_object(), *fin = json_object();
	json_t *path = json_object(), *steps = json_array();
	int bad = o == NULL || pr == NULL || fin == NULL || path == NULL ||
		  steps == NULL;

	if (bad) {
		json_decref(o);
		json_decref(pr);
		json_decref(fin);
		json_decref(path);
		json_decref(steps);
		return NULL;
	}
	topo_costs_init(&c, sizeof(c));
	topo_prediction_costs(r, &c);
	topo_prediction_messages(r, &mshm, &mnet, &bshm, &bnet);
	bad |= plan_json(o, a, s->t, s->p);
	bad |= json_object_set_new(o, "timeout", json_real(a->run.timeout));
	bad |= json_object_set_new(
	    o, "messages",
	    pair("shm", json_integer(mshm), "net", json_integer(mnet)));
	bad |= json_object_set_new(
	    o, "bytes_moved",
	    pair("shm", json_integer(bshm), "net", json_integer(bnet)));
	bad |= json_object_set_new(o, "costs", cli_costs_json(&c));
	/* Children are filled before they are attached: a failed attach
	 * frees the child. */
	bad |= json_object_set_new(pr, "seconds",
				   json_real(topo_prediction_seconds(r)));
	bad |= json_object_set_new(
	    pr, "last",
	    last >= 0 ? pair("endpoint", json_integer(last), "rank",
			     json_integer(topo_group_rank(g, last)))
		      : json_null());
	for (size_t i = 0; i < NFINISH; i++)
		bad |= json_object_set_new(fin, finish_names[i],
					   json_real(s->finish[i]));
	bad |= json_object_set_new(pr, "finish", fin);
	bad |= json_object_set_new(path, "length", json_integer(n));
	bad |= json_object_set_new(
	    path, "omitted", json_integer(n > JSON_STEPS ? n - JSON_STEPS : 0));
	for (int64_t i = 0; i < n && !bad; i++) {
		const struct topo_path_step *st = topo_prediction_path_step(r, i);
		json_t *e;

		if (!step_shown(i, n, JSON_STEPS))
			continue;
		e = json_object();
		bad |= json_object_set_new(e, "step", json_string(st->op));
		bad |= json_object_set_new(e, "from", json_integer(st->src));
		bad |= json_object_set_new(e, "to", json_integer(st->dst));
		bad |= json_object_set_new(e, "bytes", json_integer(st->bytes));
		bad |= json_object_set_new(
		    e, "edge", *st->edge ? json_string(st->edge) : json_null());
		bad |= json_object_set_new(e, "hops", json_integer(st->hops));
		bad |= json_object_set_new(e, "start", json_real(st->start));
		bad |= json_object_set_new(e, "end", json_real(st->end));
		bad |= json_object_set_new(e, "after", json_string(st->after));
		bad |= json_array_append_new(steps, e);
	}
	bad |= json_object_set_new(path, "steps", steps);
	bad |= json_object_set_new(pr, "critical_path", path);
	bad |= json_object_set_new(
	    pr, "events", json_integer(topo_prediction_events(r)));
	bad |= json_object_set_new(o, "predicted", pr);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* An --emit-* output could not be written: the library's reason, as the
 * house says it, and the exit status.  A size over --max-size is refused
 * like collc compile's output, naming where it was to go. */
static int emit_failed(const char *option, const char *dest,
		       const topo_error *err, int rc)
{
	if (rc == TOPO_ELIMIT) {
		cli_msg("%s %s: %s of --max-size; nothing written: raise the "
			"limit with --max-size",
			option, dest, err->text);
		return EXIT_USAGE;
	}
	/* A timeout, or memory, is a failed run (1); a plan no schedule can
	 * hold is the user's (2); a directory that cannot be made or written
	 * fails the run, as an -o file does (1). */
	cli_error(err, rc);
	return rc == TOPO_EARG ? EXIT_USAGE : EXIT_FAILED;
}

/* --emit-goal and --emit-smpi: writes the schedules, within what is left
 * of --timeout and no larger than --max-size, each measured before it is
 * written.  The GOAL file is committed only once the traces are written
 * too, so that a failure of either leaves neither.  Returns -1, or prints
 * why and returns the exit status. */
static int emit(const struct args *a, const topo_plan *p,
		const struct topo_costs *c, double start)
{
	struct topo_emit_params q;
	struct cli_out out;
	topo_error err;
	int rc, goal_open = 0;

	topo_emit_params_init(&q, sizeof(q));
	q.costs = c;
	q.timeout = a->run.timeout;
	q.max_bytes = a->max_size;
	q.progress = a->plan.progress;
	if (a->emit_goal != NULL) {
		/* Written whole into a temporary file, renamed at the end. */
		if (cli_out_open(&out, a->emit_goal) != 0)
			return EXIT_FAILED;
		goal_open = 1;
		topo_error_clear(&err);
		q.elapsed = now_s() - start;
		rc = topo_plan_emit_goal(p, &q, out.f, &err);
		end_progress();
		if (rc != 0) {
			cli_out_abort(&out);
			return emit_failed("--emit-goal", a->emit_goal, &err,
					   rc);
		}
	}
	if (a->emit_smpi != NULL) {
		topo_error_clear(&err);
		q.elapsed = now_s() - start;
		rc = topo_plan_emit_smpi(p, &q, a->emit_smpi, &err);
		end_progress();
		if (rc != 0) {
			if (goal_open)
				cli_out_abort(&out);
			return emit_failed("--emit-smpi", a->emit_smpi, &err,
					   rc);
		}
	}
	if (goal_open && cli_out_commit(&out) != 0)
		return EXIT_FAILED;
	return -1;
}

/* --predict: simulates plan p and prints the prediction.  Returns the
 * exit status. */
static int predict(const struct args *a, const topo_tree *t,
		   const topo_plan *p, double start)
{
	struct topo_predict_params pp;
	struct topo_costs c;
	struct predicted s;
	topo_prediction *r = NULL;
	topo_error err;
	int rc = cli_costs_load(&c, topo_group_machine(topo_tree_group(t)),
				a->costs, (size_t)a->ncosts);

	if (rc >= 0)
		return rc;
	topo_predict_params_init(&pp, sizeof(pp));
	pp.costs = &c;
	pp.timeout = a->run.timeout;
	pp.progress = a->plan.progress;
	pp.elapsed = now_s() - start;
	topo_error_clear(&err);
	rc = topo_plan_predict(p, &pp, &r, &err);
	end_progress();
	if (rc != 0)
		return cli_error(&err, rc);
	memset(&s, 0, sizeof(s));
	s.a = a;
	s.t = t;
	s.p = p;
	s.r = r;
	topo_error_clear(&err);
	rc = topo_prediction_quantiles(r, finish_q, NFINISH, s.finish, &err);
	if (rc != 0) {
		rc = cli_error(&err, rc);
		goto out;
	}
	rc = emit(a, p, &c, start);
	if (rc >= 0)
		goto out;
	/* Ten significant digits: nanoseconds up to ten seconds. */
	rc = a->json ? cli_json_write(stdout, predict_json(&s), 10) : print_predict_text(&s);
	if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
		cli_msg("standard output: cannot write: %s", strerror(errno));
		rc = EXIT_FAILED;
	}
out:
	topo_prediction_free(r);
	return rc;
}

/* Checks what only the operation tells and applies the defaults that
 * depend on it (collrun(1)): the tree the operation's algorithms run
 * over, the group "world"; the parameters' other defaults are the
 * library's (parse).  Returns -1 or an exit status. */
static int apply_defaults(struct args *a)
{
	int rc = check_op_options(a);

	if (rc >= 0)
		return rc;
	/* A directory --emit-smpi cannot fill is refused before any work. */
	if (a->emit_smpi != NULL) {
		rc = cli_dir_check("--emit-smpi", a->emit_smpi);
		if (rc >= 0)
			return rc;
	}
	if (a->tree == NULL)
		a->tree = topo_op_default_tree(a->op);
	if (a->group == NULL)
		a->group = "world";
	a->plan.algorithm = a->algorithm;
	a->plan.predict_only = a->predict;
	return -1;
}

/* Loads the group's tree into in and turns --root-rank into the root.
 * Returns -1 or an exit status. */
static int load(struct args *a, struct cli_tree *in, double start)
{
	const topo_group *g;
	int rc;

	cli_watchdog_arm(a->run.timeout - (now_s() - start), a->run.timeout,
			 a->file);
	rc = cli_tree_load(in, a->file, a->group, a->tree);
	cli_watchdog_disarm();
	if (rc >= 0)
		return rc;
#ifdef COLLRUN_MPI
	rc = collrun_mpi_check(in->t, a->file);
	if (rc >= 0)
		return rc;
#endif
	if (a->root_rank < 0)
		return -1;
	g = topo_tree_group(in->t);
	if (a->root_rank >= topo_group_size(g)) {
		cli_msg("--root-rank: group \"%s\" has ranks 0..%d (got %d)",
			topo_group_name(g), (int)topo_group_size(g) - 1,
			(int)a->root_rank);
		return EXIT_USAGE;
	}
	a->plan.root = topo_group_members(g)[a->root_rank];
	return -1;
}

/* Plans the operation over t into *p within what is left of --timeout.
 * Returns -1 or an exit status. */
static int make_plan(struct args *a, const topo_tree *t, topo_plan **p,
		     double start)
{
	topo_error err;
	int rc;

	/* --timeout bounds the whole run: loading, planning, the inputs,
	 * every iteration and its verification.  Each stage is told how
	 * much of it is gone. */
	if (isatty(STDERR_FILENO)) {
		a->plan.progress = show_progress;
		a->run.progress = show_progress;
	}
	a->plan.timeout = a->run.timeout;
	a->plan.elapsed = now_s() - start;
	if (a->plan.elapsed >= a->run.timeout) {
		cli_msg("the run did not finish within %g s (loading %s)",
			a->run.timeout, cli_source(a->file));
		return EXIT_FAILED;
	}
	topo_error_clear(&err);
	rc = plan_new(p, t, &a->plan, &err);
	end_progress();
	if (rc != 0)
		return cli_error(&err, rc);
	return segment_refused(a, *p);
}

/* Runs p (its report into *r, freed by the caller) and prints the
 * report.  Returns the exit status. */
static int replay(struct args *a, const topo_tree *t, const topo_plan *p,
		  double start, topo_report **r)
{
	struct shown s;
	topo_error err;
	int rc;

	memset(&s, 0, sizeof(s));
	topo_error_clear(&err);
	s.a = a;
	a->run.elapsed = now_s() - start;
	if (a->fresh)
		rc = run_fresh(p, &a->run, start, r, &s, &err);
	else
		rc = run_plan(p, &a->run, r, &err);
	end_progress();
	if (rc != 0) {
		/* Buffers too big for memory are the user's to fix (2);
		 * threads that cannot start, or memory that runs out after
		 * all, are a failed run (1). */
		int status = cli_error(&err, rc);

		return rc == TOPO_ELIMIT ? status : EXIT_FAILED;
	}
	s.t = t;
	s.p = p;
	s.r = *r;
	rc = a->json ? print_json(&s) : print_text(&s);
	if (rc == 0 && (fflush(stdout) != 0 || ferror(stdout))) {
		cli_msg("standard output: cannot write: %s", strerror(errno));
		rc = EXIT_FAILED;
	}
	if (rc == 0)
		rc = topo_report_verified(*r) ? EXIT_OK : EXIT_FAILED;
	return rc;
}

int main(int argc, char **argv)
{
	struct args a;
	struct cli_tree in;
	topo_plan *p = NULL;
	topo_report *r = NULL;
	double start = now_s();
	int rc;

	cli_prog = "collrun";
#ifdef COLLRUN_MPI
	/* Every process parses, loads and plans the same; rank 0 speaks. */
	cli_prog = "collrun-mpi";
	shown_processes = collrun_mpi_start(&argc, &argv);
#endif
	memset(&in, 0, sizeof(in));
	rc = parse(&a, argc, argv);
	if (rc < 0)
		rc = apply_defaults(&a);
	if (rc < 0)
		rc = load(&a, &in, start);
	if (rc < 0)
		rc = make_plan(&a, in.t, &p, start);
	if (rc >= 0)
		goto done;
#ifdef COLLRUN_MPI
	/* Every process is ready to run, or all stop with the status of the
	 * first that could not (its message shown by rank 0).  A prediction
	 * is rank 0's alone. */
	rc = collrun_mpi_ready(-1);
	if (rc >= 0 || (a.predict && collrun_mpi_rank() != 0)) {
		rc = rc >= 0 ? rc : EXIT_OK;
		goto done;
	}
#endif
	if (a.predict)
		rc = predict(&a, in.t, p, start);
	else
		rc = replay(&a, in.t, p, start, &r);
done:
	topo_report_free(r);
	topo_plan_free(p);
	cli_tree_free(&in);
	free(a.costs);
#ifdef COLLRUN_MPI
	rc = collrun_mpi_finish(rc);
#endif
	return rc;
}
