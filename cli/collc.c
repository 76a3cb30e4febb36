/*
 * collc.c - the topology compiler: `collc compile | group | dot`.
 *
 * A thin layer over libtopo: parse the command line, call the library,
 * print its errors as one line each and map them to exit statuses
 * (collc(1)).  Everything the output means is the library's.
 */
#include <errno.h>
#include <stdarg.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "topo.h"
#include "util.h"

static const char usage_text[] =
	"usage: collc compile MACHINE.json [-o OUT.json] [-g NAME=SPEC]... "
	"[-t TREE[,TREE...]]\n"
	"                     [--routes full|none] [-v]\n"
	"       collc group   MACHINE.json SPEC|GROUP\n"
	"       collc dot     ROUTES.json|MACHINE.json [-g GROUP] [-t TREE] "
	"[-o OUT.dot]\n"
	"       collc --help | --version\n";

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
	"  dot       draw one group's tree as a Graphviz digraph\n"
	"\n"
	"options:\n"
	"  -o FILE         write to FILE atomically instead of standard "
	"output\n"
	"  -g NAME=SPEC    compile: add (or replace) a group; repeatable\n"
	"  -g GROUP        dot: the group to draw (default world)\n"
	"  -t TREE[,...]   trees: physical, hierarchical, binomial, chain, "
	"kary:K\n"
	"                  (compile default: physical,hierarchical,binomial;\n"
	"                  dot default: physical)\n"
	"  --routes MODE   compile: full (default) writes every tree's route "
	"table;\n"
	"                  none leaves it out (readers derive it from "
	"\"parent\")\n"
	"  -v, --verbose   compile: print a summary line on standard error\n"
	"  -h, --help      show this help\n"
	"  -V, --version   show the version\n"
	"\n"
	"exit status: 0 success, 1 the command failed (output not written), "
	"2 usage or input error\n"
	"See collc(1), collc(5), collc(7).\n";

static const struct option long_opts[] = {
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, 'V'},
	{"verbose", no_argument, NULL, 'v'},
	{"output", required_argument, NULL, 'o'},
	{"group", required_argument, NULL, 'g'},
	{"tree", required_argument, NULL, 't'},
	{"routes", required_argument, NULL, 'R'},
	{NULL, 0, NULL, 0},
};

struct args {
	const char *output;
	const char *trees; /* -t as given */
	const char **gnames, **gspecs; /* compile: -g NAME=SPEC */
	size_t ngroups;
	const char *group; /* dot: -g GROUP */
	unsigned write_flags; /* compile: --routes none */
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
}

/* Parses a subcommand's options (argv[0] is the subcommand).  Returns -1
 * to go on, or an exit status. */
static int parse(struct args *a, int argc, char **argv, int compile)
{
	int c;

	memset(a, 0, sizeof(*a));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:g:t:vV", long_opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'h':
			printf("%s%s", usage_text, help_text);
			return EXIT_OK;
		case 'V':
			printf("collc %s\n", topo_version_string());
			return EXIT_OK;
		case 'v':
			a->verbose = 1;
			break;
		case 'o':
			a->output = optarg;
			break;
		case 't':
			a->trees = optarg;
			break;
		case 'R':
			if (!compile)
				return cli_usage_error(usage_text, "--routes goes with "
						   "compile");
			if (strcmp(optarg, "full") == 0)
				a->write_flags = 0;
			else if (strcmp(optarg, "none") == 0)
				a->write_flags = TOPO_WRITE_NO_ROUTES;
			else
				return cli_usage_error(usage_text, "--routes: expected full "
						   "or none (got \"%s\")",
						   optarg);
			break;
		case 'g':
			if (!compile) {
				a->group = optarg;
				break;
			} else {
				const char *eq = strchr(optarg, '=');
				char *name;
				const char **nn, **ns;

				if (eq == NULL || eq == optarg || eq[1] == '\0')
					return cli_usage_error(usage_text, "-g: expected "
							   "NAME=SPEC (got \"%s\")",
							   optarg);
				if (eq - optarg == 5 &&
				    strncmp(optarg, "world", 5) == 0) {
					cli_msg("-g: group name \"world\" is "
						"reserved (the group of all "
						"endpoints, spec \"all\")");
					return EXIT_USAGE;
				}
				nn = realloc(a->gnames, (a->ngroups + 1) *
								sizeof(char *));
				if (nn != NULL)
					a->gnames = nn;
				ns = realloc(a->gspecs, (a->ngroups + 1) *
								sizeof(char *));
				if (ns != NULL)
					a->gspecs = ns;
				name = strndup(optarg, (size_t)(eq - optarg));
				if (nn == NULL || ns == NULL || name == NULL) {
					free(name);
					cli_msg("out of memory");
					return EXIT_FAILED;
				}
				a->gnames[a->ngroups] = name;
				a->gspecs[a->ngroups] = eq + 1;
				a->ngroups++;
			}
			break;
		case ':':
			return cli_usage_error(usage_text, "option -%c needs an argument",
					   optopt);
		default:
			if (optopt != 0)
				return cli_usage_error(usage_text, "unknown option -%c",
						   optopt);
			return cli_usage_error(usage_text, "unknown option %s",
					   argv[optind - 1]);
		}
	}
	a->npos = argc - optind;
	a->pos = argv + optind;
	return -1;
}

/* Splits -t into shape names, checking each; fills shapes (which point
 * into buf).  Returns -1 to go on, or an exit status. */
static int parse_trees(const char *list, char *buf, size_t bufsize,
		       const char **shapes, size_t *nshapes, size_t max)
{
	topo_error err;
	char *save = NULL, *tok;

	*nshapes = 0;
	if (list == NULL)
		return -1;
	if (strlen(list) >= bufsize)
		return cli_usage_error(usage_text, "-t: list too long");
	strcpy(buf, list);
	for (tok = strtok_r(buf, ",", &save); tok != NULL;
	     tok = strtok_r(NULL, ",", &save)) {
		topo_error_clear(&err);
		if (topo_tree_shape_check(tok, &err) != 0) {
			cli_msg("-t: %s", err.text);
			return EXIT_USAGE;
		}
		for (size_t i = 0; i < *nshapes; i++)
			if (strcmp(shapes[i], tok) == 0) {
				cli_msg("-t: tree \"%s\" is named twice", tok);
				return EXIT_USAGE;
			}
		if (*nshapes == max)
			return cli_usage_error(usage_text, "-t: too many trees (at most %zu)",
					   max);
		shapes[(*nshapes)++] = tok;
	}
	if (*nshapes == 0)
		return cli_usage_error(usage_text, "-t: no tree named");
	return -1;
}

static int cmd_compile(int argc, char **argv)
{
	struct args a;
	topo_error err;
	topo_machine *m = NULL;
	topo_compiled *c = NULL;
	struct cli_out out;
	char tbuf[4096];
	const char *shapes[64];
	size_t nshapes = 0;
	int rc;

	rc = parse(&a, argc, argv, 1);
	if (rc >= 0)
		goto done;
	if (a.npos != 1) {
		rc = cli_usage_error(usage_text, a.npos == 0 ? "compile: no machine file given"
					     : "compile: too many arguments");
		goto done;
	}
	rc = parse_trees(a.trees, tbuf, sizeof(tbuf), shapes, &nshapes, 64);
	if (rc >= 0)
		goto done;
	topo_error_clear(&err);
	rc = topo_machine_load_file(&m, a.pos[0], &err);
	if (rc != 0) {
		rc = cli_error(&err, rc);
		goto done;
	}
	rc = topo_compile(&c, m, a.gnames, a.gspecs, a.ngroups,
			  nshapes > 0 ? shapes : NULL, nshapes, &err);
	if (rc != 0) {
		rc = cli_error(&err, rc);
		goto done;
	}
	rc = cli_out_open(&out, a.output);
	if (rc != 0)
		goto done;
	rc = topo_compiled_write(c, out.f, a.write_flags, &err);
	if (rc != 0) {
		cli_out_abort(&out);
		cli_msg("%s: cannot write: %s",
			a.output != NULL ? a.output : "standard output",
			err.text);
		rc = EXIT_FAILED;
		goto done;
	}
	rc = cli_out_commit(&out);
	if (rc == 0 && a.verbose) {
		struct stat st;
		char size[48] = "";
		size_t trees = 0;

		for (size_t i = 0; i < topo_compiled_group_count(c); i++)
			trees += topo_compiled_tree_count(c, i);
		/* A size only for a file: a pipe or device has none. */
		if (a.output != NULL && stat(a.output, &st) == 0 &&
		    S_ISREG(st.st_mode))
			snprintf(size, sizeof(size), ", %lld bytes",
				 (long long)st.st_size);
		cli_msg("wrote %s: %zu groups, %zu trees, %d endpoints%s",
			a.output != NULL ? a.output : "standard output",
			topo_compiled_group_count(c), trees,
			(int)topo_machine_endpoints(m), size);
	}
done:
	topo_compiled_free(c);
	topo_machine_free(m);
	args_free(&a);
	return rc;
}

static int cmd_group(int argc, char **argv)
{
	struct args a;
	topo_error err;
	topo_machine *m = NULL;
	topo_group *g = NULL;
	const char *spec, *name = NULL;
	int rc;

	rc = parse(&a, argc, argv, 0);
	if (rc >= 0)
		goto done;
	if (a.output != NULL || a.trees != NULL || a.group != NULL) {
		rc = cli_usage_error(usage_text, "group: takes no options");
		goto done;
	}
	if (a.npos != 2) {
		rc = cli_usage_error(usage_text, "group: expected MACHINE.json and SPEC");
		goto done;
	}
	topo_error_clear(&err);
	rc = topo_machine_load_file(&m, a.pos[0], &err);
	if (rc != 0) {
		rc = cli_error(&err, rc);
		goto done;
	}
	spec = cli_named_spec(m, a.pos[1]);
	if (spec != NULL)
		name = a.pos[1];
	else
		spec = a.pos[1];
	rc = topo_group_new(&g, m, name, spec, &err);
	if (rc != 0) {
		rc = cli_error(&err, rc);
		goto done;
	}
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
	args_free(&a);
	return rc;
}

static int cmd_dot(int argc, char **argv)
{
	struct args a;
	struct cli_tree tree = {0};
	struct cli_out out;
	topo_error err;
	int rc;

	rc = parse(&a, argc, argv, 0);
	if (rc >= 0)
		goto done;
	if (a.npos != 1) {
		rc = cli_usage_error(usage_text, "dot: expected one ROUTES.json or "
				 "MACHINE.json");
		goto done;
	}
	rc = cli_tree_load(&tree, a.pos[0], a.group != NULL ? a.group : "world",
			   a.trees != NULL ? a.trees : "physical");
	if (rc >= 0)
		goto done;
	rc = cli_out_open(&out, a.output);
	if (rc != 0)
		goto done;
	topo_error_clear(&err);
	rc = topo_tree_write_dot(tree.t, out.f, &err);
	if (rc != 0) {
		cli_out_abort(&out);
		cli_msg("%s: cannot write: %s",
			a.output != NULL ? a.output : "standard output",
			err.text);
		rc = EXIT_FAILED;
		goto done;
	}
	rc = cli_out_commit(&out);
done:
	cli_tree_free(&tree);
	args_free(&a);
	return rc;
}

int main(int argc, char **argv)
{
	const char *cmd;

	cli_prog = "collc";
	if (argc < 2) {
		fprintf(stderr, "collc: no command given\n%s", usage_text);
		return EXIT_USAGE;
	}
	cmd = argv[1];
	if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
	    strcmp(cmd, "help") == 0) {
		printf("%s%s", usage_text, help_text);
		return EXIT_OK;
	}
	if (strcmp(cmd, "-V") == 0 || strcmp(cmd, "--version") == 0) {
		printf("collc %s\n", topo_version_string());
		return EXIT_OK;
	}
	if (strcmp(cmd, "compile") == 0)
		return cmd_compile(argc - 1, argv + 1);
	if (strcmp(cmd, "group") == 0)
		return cmd_group(argc - 1, argv + 1);
	if (strcmp(cmd, "dot") == 0)
		return cmd_dot(argc - 1, argv + 1);
	fprintf(stderr, "collc: unknown command \"%s\" (valid: compile, "
			"group, dot)\n%s",
		cmd, usage_text);
	return EXIT_USAGE;
}
