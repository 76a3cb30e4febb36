/*
 * import.c - `collc import`: machine descriptions from what users already
 * have.  `collc import hostfile FILE` reads the host file of an MPI job
 * (Open MPI's "HOST slots=N max_slots=M", MPICH's "HOST:N", or one host
 * per line, a repeat adding a slot) and writes a description whose nodes
 * are the hosts in order of first appearance, whose tasks per node are
 * their slots and whose "hosts" are their names (collc(1) IMPORT).
 *
 * The whole file is read and checked before anything is written, so a
 * bad line leaves no output; the description is then loaded back through
 * libtopo, so what is written is what `collc compile` accepts.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "import.h"
#include "topo.h"
#include "util.h"

/* The longest host name collc(5) allows. */
#define HOST_MAX 255

static const char usage[] =
    "usage: collc import hostfile FILE [-o OUT.json] [--name NAME]\n";

static const char help[] =
    "\n"
    "Write a machine description (collc(5)) from a host file: Open MPI's "
    "\"HOST slots=N\n"
    "max_slots=M\", MPICH's \"HOST:N\", or one host per line (a repeat "
    "adds a slot).\n"
    "Nodes are the hosts in order of first appearance, tasks per node "
    "their slots.\n"
    "A host file says nothing of the network: the description has a star "
    "(kary,\n"
    "fanout nodes - 1), to be replaced by the machine's own.\n"
    "\n"
    "options:\n"
    "  -o FILE       write to FILE atomically (default and -: standard "
    "output)\n"
    "  --name NAME   the machine's name (default: FILE's base name without "
    "extension)\n"
    "  -h, --help    show this help\n";

/* One host of the file: its name and the slots its lines add up to. */
struct host {
	char *name;
	int64_t slots;
};

struct hostfile {
	const char *source; /* for messages */
	long line;
	struct host *hosts;
	size_t n, cap;
	json_t *index; /* name -> position in hosts */
	int64_t total;
};

/* A token for a message: at most 40 bytes, other than printable ASCII
 * shown as "?", so a message stays one line. */
static const char *shown(const char *s, size_t len, char buf[48])
{
	size_t n = len > 40 ? 40 : len;

	for (size_t i = 0; i < n; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	strcpy(buf + n, len > 40 ? "..." : "");
	return buf;
}

__attribute__((format(printf, 2, 3))) static int bad(struct hostfile *hf,
						     const char *fmt, ...)
{
	char text[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	cli_msg("%s:%ld: %s", hf->source, hf->line, text);
	return EXIT_USAGE;
}

static int is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

/* A host name as collc(5) allows it: 1 to 255 letters, digits, '.', '-'
 * and '_'.  Returns -1, or prints why and returns EXIT_USAGE. */
static int check_name(struct hostfile *hf, const char *s, size_t len)
{
	char buf[48];

	if (len > HOST_MAX)
		return bad(hf,
			   "host name \"%s\" is %zu bytes long (at most %d)",
			   shown(s, len, buf), len, HOST_MAX);
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '.' || c == '-' || c == '_')
			continue;
		return bad(hf,
			   "host name \"%s\" has a character other than "
			   "letters, digits, \".\", \"-\", \"_\" at %zu",
			   shown(s, len, buf), i);
	}
	return -1;
}

/* A count: decimal digits only, 1 to INT32_MAX.  what names it in the
 * message ("slots=", "max_slots=", "node7:").  Returns -1 with *out set,
 * or prints why. */
static int read_count(struct hostfile *hf, const char *what, const char *s,
		      size_t len, int64_t *out)
{
	char buf[48];
	int64_t v = 0;

	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9' || v > INT32_MAX) {
			v = -1;
			break;
		}
		v = v * 10 + (s[i] - '0');
	}
	if (len == 0 || v < 0 || v > INT32_MAX)
		return bad(hf,
			   "\"%s%s\": must be an integer from 1 to "
			   "2147483647",
			   what, shown(s, len, buf));
	if (v == 0)
		return bad(hf,
			   "\"%s0\": must be at least 1 (a host listed runs "
			   "at least one task)",
			   what);
	*out = v;
	return -1;
}

/* Adds slots to the host name (len bytes), a new node when first seen. */
static int add_slots(struct hostfile *hf, const char *name, size_t len,
		     int64_t slots)
{
	char key[HOST_MAX + 1];
	json_t *at;

	memcpy(key, name, len);
	key[len] = '\0';
	hf->total += slots;
	if (hf->total > INT32_MAX)
		return bad(hf, "more than 2147483647 slots in all");
	at = json_object_get(hf->index, key);
	if (at != NULL) {
		hf->hosts[json_integer_value(at)].slots += slots;
		return -1;
	}
	if (hf->n == hf->cap) {
		size_t cap = hf->cap != 0 ? 2 * hf->cap : 64;
		struct host *h = realloc(hf->hosts, cap * sizeof(*h));

		if (h == NULL)
			goto nomem;
		hf->hosts = h;
		hf->cap = cap;
	}
	hf->hosts[hf->n].name = strdup(key);
	if (hf->hosts[hf->n].name == NULL ||
	    json_object_set_new(hf->index, key,
				json_integer((json_int_t)hf->n)) != 0)
		goto nomem;
	hf->hosts[hf->n++].slots = slots;
	return -1;
nomem:
	cli_msg("out of memory reading %s", hf->source);
	return EXIT_FAILED;
}

/* "key=value" after the host name: slots or max_slots, each once. */
static int read_pair(struct hostfile *hf, const char *tok, size_t len,
		     int64_t *slots, int64_t *max_slots)
{
	const char *eq = memchr(tok, '=', len);
	size_t klen = eq != NULL ? (size_t)(eq - tok) : len;
	int64_t *slot;
	char buf[48];

	if (eq == NULL)
		return bad(hf,
			   "unexpected \"%s\" after the host name (valid: "
			   "slots=N, max_slots=N)",
			   shown(tok, len, buf));
	if (klen == 5 && memcmp(tok, "slots", 5) == 0)
		slot = slots;
	else if (klen == 9 && memcmp(tok, "max_slots", 9) == 0)
		slot = max_slots;
	else
		return bad(hf, "unknown key \"%s\" (valid: slots, max_slots)",
			   shown(tok, klen, buf));
	if (*slot != 0)
		return bad(hf, "%.*s given twice", (int)klen, tok);
	return read_count(hf, slot == slots ? "slots=" : "max_slots=", eq + 1,
			  len - klen - 1, slot);
}

/* One line without its comment: HOST[:N] [key=value]... */
static int read_line(struct hostfile *hf, const char *s, size_t len)
{
	size_t i = 0, start, hlen;
	const char *colon;
	int64_t slots = 0, max_slots = 0;
	char buf[48];
	int rc;

	while (i < len && is_space(s[i]))
		i++;
	if (i == len)
		return -1; /* blank */
	start = i;
	while (i < len && !is_space(s[i]))
		i++;
	hlen = i - start;
	colon = memchr(s + start, ':', hlen);
	if (colon != NULL) {
		size_t nlen = (size_t)(colon - (s + start));
		char what[64];

		snprintf(what, sizeof(what),
			 "%s:", shown(s + start, nlen, buf));
		rc = read_count(hf, what, colon + 1, hlen - nlen - 1, &slots);
		if (rc >= 0)
			return rc;
		hlen = nlen;
	}
	if (hlen == 0)
		return bad(hf, "the host name is empty");
	rc = check_name(hf, s + start, hlen);
	if (rc >= 0)
		return rc;
	for (;;) {
		size_t t;

		while (i < len && is_space(s[i]))
			i++;
		if (i == len)
			break;
		t = i;
		while (i < len && !is_space(s[i]))
			i++;
		if (colon != NULL)
			return bad(hf,
				   "HOST:N takes no keys (write HOST slots=N "
				   "max_slots=M instead)");
		rc = read_pair(hf, s + t, i - t, &slots, &max_slots);
		if (rc >= 0)
			return rc;
	}
	if (slots == 0)
		slots = 1;
	if (max_slots != 0 && max_slots < slots)
		return bad(hf,
			   "max_slots=%lld is less than slots=%lld (max_slots "
			   "bounds the slots)",
			   (long long)max_slots, (long long)slots);
	return add_slots(hf, s + start, hlen, slots);
}

/* Every line of text; "#" starts a comment. */
static int read_hostfile(struct hostfile *hf, const char *text, size_t len)
{
	size_t at = 0;
	int rc;

	hf->line = 0;
	while (at < len) {
		const char *s = text + at, *nl = memchr(s, '\n', len - at);
		size_t n = nl != NULL ? (size_t)(nl - s) : len - at;
		const char *hash = memchr(s, '#', n);

		hf->line++;
		rc = read_line(hf, s, hash != NULL ? (size_t)(hash - s) : n);
		if (rc >= 0)
			return rc;
		at += n + 1;
	}
	if (hf->n == 0) {
		hf->line++;
		return bad(hf,
			   "no host in the file (a host file lists one host a "
			   "line: HOST, HOST slots=N [max_slots=M] or "
			   "HOST:N)");
	}
	return -1;
}

/* The machine's default name: path's base name without its extension. */
static char *default_name(const char *path)
{
	const char *base = strrchr(path, '/');
	const char *dot;
	size_t n;

	if (strcmp(path, "-") == 0)
		return strdup("hostfile");
	base = base != NULL ? base + 1 : path;
	dot = strrchr(base, '.');
	n = dot != NULL && dot != base ? (size_t)(dot - base) : strlen(base);
	return n > 0 ? strndup(base, n) : strdup("hostfile");
}

/* The description: name, nodes, tasks_per_node (one integer when every
 * node has the same), hosts, and a star network. */
static json_t *describe(const struct hostfile *hf, const char *name)
{
	json_t *o = json_object(), *tasks, *hosts = json_array(), *net;
	int even = 1, bad = 0;

	for (size_t i = 1; i < hf->n; i++)
		even &= hf->hosts[i].slots == hf->hosts[0].slots;
	tasks = even ? json_integer(hf->hosts[0].slots) : json_array();
	/* An append that fails (out of memory) takes its value with it. */
	for (size_t i = 0; i < hf->n && !bad; i++) {
		if (!even)
			bad |= json_array_append_new(
			    tasks, json_integer(hf->hosts[i].slots));
		bad |= json_array_append_new(hosts,
					     json_string(hf->hosts[i].name));
	}
	net = json_pack("{s:s, s:i}", "type", "kary", "fanout",
			hf->n > 1 ? (int)hf->n - 1 : 1);
	/* json_object_set_new takes (and on failure frees) the value, also
	 * a NULL one, and fails on a NULL object. */
	bad |= json_object_set_new(o, "name", json_string(name));
	bad |= json_object_set_new(
	    o, "x-comment",
	    json_string("from a host file, which says nothing of the "
			"network: the network is a star; give the machine's "
			"own"));
	bad |= json_object_set_new(o, "nodes", json_integer((json_int_t)hf->n));
	bad |= json_object_set_new(o, "tasks_per_node", tasks);
	bad |= json_object_set_new(o, "hosts", hosts);
	bad |= json_object_set_new(o, "network", net);
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* What was made must load: a check of this file, not of the user's. */
static int check_loads(json_t *o, const char *name)
{
	topo_machine *m = NULL;
	topo_error err;
	char *text = json_dumps(o, 0);
	int rc;

	if (text == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	topo_error_clear(&err);
	rc = topo_machine_load_string(&m, text, strlen(text), name, &err);
	free(text);
	topo_machine_free(m);
	return rc != 0 ? cli_error(&err, rc) : -1;
}

static int write_machine(const struct hostfile *hf, const char *name,
			 const char *output)
{
	struct cli_out out;
	json_t *o = describe(hf, name);
	int rc;

	if (o == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	rc = check_loads(o, name);
	if (rc >= 0) {
		json_decref(o);
		return rc;
	}
	rc = cli_out_open(&out, output);
	if (rc != 0) {
		json_decref(o);
		return rc;
	}
	rc = cli_json_write(out.f, o, 0);
	if (rc != 0) {
		cli_out_abort(&out);
		return rc;
	}
	return cli_out_commit(&out);
}

static int import_hostfile(const char *path, const char *output,
			   const char *name)
{
	struct hostfile hf = {.source = cli_source(path)};
	char *text = NULL, *def = NULL;
	size_t len;
	int rc;

	rc = cli_load_text(path, &text, &len);
	if (rc >= 0)
		return rc;
	hf.index = json_object();
	if (hf.index == NULL) {
		cli_msg("out of memory");
		rc = EXIT_FAILED;
		goto done;
	}
	rc = read_hostfile(&hf, text, len);
	if (rc >= 0)
		goto done;
	if (name == NULL) {
		name = def = default_name(path);
		/* A file name need not be text; the name must be. */
		if (def != NULL && cli_utf8_invalid(def, strlen(def)) >= 0)
			name = "hostfile";
	}
	if (name == NULL) {
		cli_msg("out of memory");
		rc = EXIT_FAILED;
		goto done;
	}
	rc = write_machine(&hf, name, output);
done:
	for (size_t i = 0; i < hf.n; i++)
		free(hf.hosts[i].name);
	free(hf.hosts);
	json_decref(hf.index);
	free(text);
	free(def);
	return rc < 0 ? EXIT_OK : rc;
}

enum { OPT_NAME = 256 };

int collc_import(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"help", no_argument, NULL, 'h'},
	    {"output", required_argument, NULL, 'o'},
	    {"name", required_argument, NULL, OPT_NAME},
	    {NULL, 0, NULL, 0},
	};
	const char *output = NULL, *name = NULL;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			printf("%s%s", usage, help);
			return EXIT_OK;
		case 'o':
			output = optarg;
			break;
		case OPT_NAME:
			if (optarg[0] == '\0' ||
			    cli_utf8_invalid(optarg, strlen(optarg)) >= 0)
				return cli_usage_error(usage, "--name: want a "
							      "non-empty UTF-8 "
							      "name");
			name = optarg;
			break;
		case ':':
			return cli_usage_error(usage,
					       "option %s needs an argument",
					       argv[optind - 1]);
		default:
			return cli_usage_error(usage, "unknown option %s",
					       argv[optind - 1]);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc == 0)
		return cli_usage_error(usage, "import: what to import? (valid: "
					      "hostfile)");
	if (strcmp(argv[0], "hostfile") != 0) {
		fprintf(stderr, "%s: import: unknown kind \"", cli_prog);
		cli_put_clean(stderr, argv[0]);
		fprintf(stderr, "\" (valid: hostfile)\n%s", usage);
		return EXIT_USAGE;
	}
	if (argc != 2)
		return cli_usage_error(usage, argc == 1
						  ? "import hostfile: no host "
						    "file given"
						  : "import hostfile: too many "
						    "arguments");
	return import_hostfile(argv[1], output, name);
}
