/*
 * util.c - messages, error reporting and atomic output for the programs.
 */
#include "util.h"

#include <jansson.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const char *cli_prog = "collc";

/* The temporary file of the output being written, for the signal handler.
 * A fixed buffer because the handler may only call async-signal-safe
 * functions: it unlinks this path and re-raises the signal. */
static char pending_tmp[4096];
static volatile sig_atomic_t have_pending;

void cli_msg(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cli_prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n%s", usage);
	return EXIT_USAGE;
}

int cli_error(const topo_error *err, int code)
{
	char line[2048];

	if (err != NULL && err->code != 0) {
		topo_error_format(err, line, sizeof(line));
		fprintf(stderr, "%s: %s\n", cli_prog, line);
	} else {
		fprintf(stderr, "%s: %s\n", cli_prog, topo_strerror(code));
	}
	/* Input that cannot be read or understood is the user's to fix (2);
	 * running out of memory is a failure of the run (1).  Output errors
	 * are reported by the callers, which return EXIT_FAILED. */
	return code == TOPO_ENOMEM ? EXIT_FAILED : EXIT_USAGE;
}

static void on_signal(int sig)
{
	if (have_pending)
		unlink(pending_tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static void watch_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa, was;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* A signal ignored when we started stays ignored: under nohup (HUP)
	 * or in a shell's background job (INT), the user asked for the
	 * program to go on. */
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], NULL, &was) == 0 &&
		    was.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	/* Past the file size limit (ulimit -f) a write would kill us with
	 * SIGXFSZ and leave the temporary file behind; ignored, the write
	 * fails with EFBIG ("File too large"), reported and cleaned up like
	 * a full disk. */
	signal(SIGXFSZ, SIG_IGN);
}

int cli_out_open(struct cli_out *out, const char *path)
{
	struct stat st;
	sigset_t block, old;
	const char *slash;
	size_t dirlen;
	int fd, e;

	memset(out, 0, sizeof(*out));
	if (path == NULL || strcmp(path, "-") == 0) {
		out->f = stdout;
		return 0;
	}
	out->path = path;
	/* A device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is
	 * written in place: renaming a temporary file over it would replace
	 * the device itself. */
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		out->f = fopen(path, "w");
		if (out->f == NULL) {
			cli_msg("%s: cannot write: %s", path, strerror(errno));
			return EXIT_FAILED;
		}
		return 0;
	}
	/* ".NAME.XXXXXX" in the destination's directory, so that rename()
	 * stays within one file system and is atomic. */
	slash = strrchr(path, '/');
	dirlen = slash != NULL ? (size_t)(slash - path) + 1 : 0;
	out->tmp = malloc(strlen(path) + 16);
	if (out->tmp == NULL) {
		cli_msg("%s: out of memory", path);
		return EXIT_FAILED;
	}
	sprintf(out->tmp, "%.*s.%s.XXXXXX", (int)dirlen, path, path + dirlen);
	if (strlen(out->tmp) >= sizeof(pending_tmp)) {
		cli_msg("%s: path too long", path);
		free(out->tmp);
		out->tmp = NULL;
		return EXIT_USAGE;
	}
	watch_signals();
	/* The signals are held while the file comes to exist and its name is
	 * published: one arriving after mkstemp created the file but before
	 * have_pending is set would otherwise leave it behind. */
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	sigprocmask(SIG_BLOCK, &block, &old);
	memcpy(pending_tmp, out->tmp, strlen(out->tmp) + 1);
	fd = mkstemp(pending_tmp);
	e = errno;
	if (fd >= 0)
		have_pending = 1;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (fd < 0) {
		cli_msg("%s: cannot write: %s", path, strerror(e));
		free(out->tmp);
		out->tmp = NULL;
		return EXIT_FAILED;
	}
	memcpy(out->tmp, pending_tmp, strlen(pending_tmp) + 1);
	/* mkstemp makes 0600; an output file should get the usual mode. */
	{
		mode_t mask = umask(0);

		umask(mask);
		fchmod(fd, 0666 & ~mask);
	}
	out->f = fdopen(fd, "w");
	if (out->f == NULL) {
		cli_msg("%s: cannot write: %s", path, strerror(errno));
		close(fd);
		cli_out_abort(out);
		return EXIT_FAILED;
	}
	return 0;
}

int cli_out_commit(struct cli_out *out)
{
	int failed;

	if (out->path == NULL) {
		if (fflush(stdout) != 0 || ferror(stdout)) {
			cli_msg("standard output: cannot write: %s",
				strerror(errno));
			return EXIT_FAILED;
		}
		return 0;
	}
	failed = fflush(out->f) != 0 || ferror(out->f);
	if (fclose(out->f) != 0)
		failed = 1;
	out->f = NULL;
	if (failed) {
		cli_msg("%s: cannot write: %s", out->path, strerror(errno));
		cli_out_abort(out);
		return EXIT_FAILED;
	}
	if (out->tmp == NULL) /* written in place */
		return 0;
	if (rename(out->tmp, out->path) != 0) {
		cli_msg("%s: cannot write: %s", out->path, strerror(errno));
		cli_out_abort(out);
		return EXIT_FAILED;
	}
	have_pending = 0;
	free(out->tmp);
	out->tmp = NULL;
	return 0;
}

void cli_out_abort(struct cli_out *out)
{
	if (out->f != NULL && out->f != stdout)
		fclose(out->f);
	out->f = NULL;
	if (out->tmp != NULL) {
		have_pending = 0;
		unlink(out->tmp);
		free(out->tmp);
		out->tmp = NULL;
	}
}

char *cli_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t size = 0, cap = 0;

	if (f == NULL)
		return NULL;
	for (;;) {
		size_t got;

		if (size + 1 >= cap) {
			char *nbuf;

			cap = cap ? cap * 2 : 65536;
			nbuf = realloc(buf, cap);
			if (nbuf == NULL) {
				free(buf);
				fclose(f);
				errno = ENOMEM;
				return NULL;
			}
			buf = nbuf;
		}
		got = fread(buf + size, 1, cap - size - 1, f);
		size += got;
		if (got == 0)
			break;
	}
	if (ferror(f)) {
		int e = errno;

		free(buf);
		fclose(f);
		errno = e;
		return NULL;
	}
	fclose(f);
	buf[size] = '\0';
	*len = size;
	return buf;
}

int cli_is_compiled(const char *text, size_t len)
{
	size_t i = 0;
	json_t *root;
	int yes;

	/* Fast path: collc writes "format" first, and a compile output can
	 * be hundreds of megabytes that need not be parsed twice. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len && strchr(" \t\r\n", text[i]) != NULL)
		i++;
	if (i < len && text[i] == '{') {
		i++;
		while (i < len && strchr(" \t\r\n", text[i]) != NULL)
			i++;
		if (len - i >= 8 && memcmp(text + i, "\"format\"", 8) == 0)
			return 1;
	}
	root = json_loadb(text, len, 0, NULL);
	yes = json_is_object(root) && json_object_get(root, "format") != NULL;
	json_decref(root);
	return yes;
}

const char *cli_named_spec(const topo_machine *m, const char *name)
{
	if (strcmp(name, "world") == 0)
		return "all";
	for (size_t i = 0; i < topo_machine_group_count(m); i++)
		if (strcmp(topo_machine_group_name(m, i), name) == 0)
			return topo_machine_group_spec(m, i);
	return NULL;
}

/* "a, b, c": the groups of c (g NULL) or the trees of group g. */
static void list_names(char *buf, size_t size, const topo_compiled *c,
		       const topo_group *g)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < topo_compiled_group_count(c); i++) {
		if (g == NULL) {
			len += (size_t)snprintf(
				buf + len, len < size ? size - len : 0, "%s%s",
				i ? ", " : "",
				topo_group_name(topo_compiled_group(c, i)));
			continue;
		}
		if (topo_compiled_group(c, i) != g)
			continue;
		for (size_t j = 0; j < topo_compiled_tree_count(c, i); j++)
			len += (size_t)snprintf(
				buf + len, len < size ? size - len : 0, "%s%s",
				j ? ", " : "",
				topo_tree_name(topo_compiled_tree(c, i, j)));
	}
}

int cli_tree_load(struct cli_tree *out, const char *path, const char *gname,
		  const char *tname)
{
	topo_error err;
	char *text = NULL;
	size_t len = 0;
	int rc;

	memset(out, 0, sizeof(*out));
	topo_error_clear(&err);
	if (topo_tree_shape_check(tname, &err) != 0) {
		cli_msg("-t: %s", err.text);
		return EXIT_USAGE;
	}
	text = cli_read_file(path, &len);
	if (text == NULL) {
		/* Running out of memory is a failure of the run (1), not an
		 * input the user must fix. */
		if (errno == ENOMEM) {
			cli_msg("%s: out of memory reading the file", path);
			return EXIT_FAILED;
		}
		cli_msg("%s: cannot open: %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	if (cli_is_compiled(text, len)) {
		char names[1024];

		rc = topo_compiled_load_string(&out->c, text, len, path, &err);
		if (rc != 0) {
			rc = cli_error(&err, rc);
			goto done;
		}
		{
			const topo_group *g = topo_compiled_find_group(out->c,
								       gname);

			if (g == NULL) {
				list_names(names, sizeof(names), out->c, NULL);
				cli_msg("%s: no group \"%s\" (groups: %s)",
					path, gname, names);
				rc = EXIT_USAGE;
				goto done;
			}
			out->t = topo_compiled_find_tree(out->c, g, tname);
			if (out->t == NULL) {
				list_names(names, sizeof(names), out->c, g);
				cli_msg("%s: group \"%s\" has no tree \"%s\" "
					"(trees: %s)",
					path, gname, tname, names);
				rc = EXIT_USAGE;
				goto done;
			}
		}
	} else {
		const char *spec;

		rc = topo_machine_load_string(&out->m, text, len, path, &err);
		if (rc != 0) {
			rc = cli_error(&err, rc);
			goto done;
		}
		/* A group name of the machine, or else a stride spec. */
		spec = cli_named_spec(out->m, gname);
		rc = topo_group_new(&out->g, out->m, gname,
				    spec != NULL ? spec : gname, &err);
		if (rc == 0)
			rc = topo_tree_new(&out->own, out->g, tname, &err);
		if (rc != 0) {
			rc = cli_error(&err, rc);
			goto done;
		}
		out->t = out->own;
	}
	rc = -1;
done:
	free(text);
	return rc;
}

void cli_tree_free(struct cli_tree *t)
{
	topo_tree_free(t->own);
	topo_group_free(t->g);
	topo_compiled_free(t->c);
	topo_machine_free(t->m);
	memset(t, 0, sizeof(*t));
}

