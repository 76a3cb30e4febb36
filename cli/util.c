/*
 * util.c - messages, error reporting and atomic output for the programs,
 * and what both programs need to predict: costs and their overrides.
 */
#include "util.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include <jansson.h>

const char *cli_prog = "collc";

/* The named temporary file of the output being written, for the signal
 * handler.  A fixed buffer because the handler may only call
 * async-signal-safe functions: it unlinks this path and re-raises the
 * signal.  Only the fallback for file systems without O_TMPFILE names
 * its temporary file while writing; with O_TMPFILE a name exists only
 * for the instant between linkat() and rename(), with the signals held. */
static char pending_tmp[4096];
static volatile sig_atomic_t have_pending;

/* Writes s to f with control characters (other than tab) as \xNN, so
 * that a name from a file or a command line can neither break a message
 * over two lines, forge a line of a report, nor send escape sequences to
 * a terminal. */
void cli_put_clean(FILE *f, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c < 0x20 && c != '\t') || c == 0x7f)
			fprintf(f, "\\x%02x", c);
		else
			fputc(c, f);
	}
}

/* "PROG: " and the formatted message, cleaned, without the newline. */
static void vmsg(const char *fmt, va_list ap)
{
	char small[1024], *text = small;
	va_list ap2;
	int n;

	va_copy(ap2, ap);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	if (n >= (int)sizeof(small)) {
		text = malloc((size_t)n + 1);
		if (text != NULL)
			vsnprintf(text, (size_t)n + 1, fmt, ap2);
		else
			text = small; /* cut short rather than lost */
	}
	va_end(ap2);
	fprintf(stderr, "%s: ", cli_prog);
	cli_put_clean(stderr, n < 0 ? fmt : text);
	if (text != small)
		free(text);
}

void cli_msg(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_usage_error(const char *usage, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap);
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
	 * running out of memory or time is a failure of the run (1).  Output
	 * errors are reported by the callers, which return EXIT_FAILED. */
	return code == TOPO_ENOMEM || code == TOPO_ETIMEDOUT ? EXIT_FAILED
							     : EXIT_USAGE;
}

static void on_signal(int sig)
{
	if (have_pending)
		unlink(pending_tmp);
	signal(sig, SIG_DFL);
	raise(sig);
}

static const int watched[] = {SIGINT, SIGTERM, SIGHUP};

static void watched_set(sigset_t *set)
{
	sigemptyset(set);
	for (size_t i = 0; i < sizeof(watched) / sizeof(watched[0]); i++)
		sigaddset(set, watched[i]);
}

static void watch_signals(void)
{
	struct sigaction sa, was;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	/* A signal ignored when we started stays ignored: under nohup (HUP)
	 * or in a shell's background job (INT), the user asked for the
	 * program to go on. */
	for (size_t i = 0; i < sizeof(watched) / sizeof(watched[0]); i++)
		if (sigaction(watched[i], NULL, &was) == 0 &&
		    was.sa_handler != SIG_IGN)
			sigaction(watched[i], &sa, NULL);
	/* Past the file size limit (ulimit -f) a write would kill us with
	 * SIGXFSZ and leave the temporary file behind; ignored, the write
	 * fails with EFBIG ("File too large"), reported and cleaned up like
	 * a full disk. */
	signal(SIGXFSZ, SIG_IGN);
}

/*
 * The file a symbolic link finally points to, following a chain of links
 * (relative targets are relative to the link's directory), so that -o
 * onto a link replaces the file it points to and keeps the link.  The
 * target need not exist yet.  Returns a malloc'ed path, or NULL with errno
 * set (ELOOP for a chain of more than 40 links).
 */
static char *resolve_links(const char *path)
{
	char *cur = strdup(path);

	for (int hops = 0; cur != NULL; hops++) {
		struct stat st;
		char target[4096], *next;
		const char *slash;
		ssize_t n;
		size_t dirlen;

		if (lstat(cur, &st) != 0 || !S_ISLNK(st.st_mode))
			return cur; /* not a link (or not there): the file */
		if (hops == 40) {
			free(cur);
			errno = ELOOP;
			return NULL;
		}
		n = readlink(cur, target, sizeof(target) - 1);
		if (n < 0) {
			free(cur);
			return NULL;
		}
		target[n] = '\0';
		slash = strrchr(cur, '/');
		dirlen = target[0] == '/' || slash == NULL
			     ? 0
			     : (size_t)(slash - cur) + 1;
		next = malloc(dirlen + (size_t)n + 1);
		if (next != NULL) {
			memcpy(next, cur, dirlen);
			memcpy(next + dirlen, target, (size_t)n + 1);
		}
		free(cur);
		cur = next;
	}
	errno = ENOMEM;
	return NULL;
}

/* Does directory dir hold nothing but "." and ".."? */
static int dir_empty(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	int empty = 1;

	if (dp == NULL)
		return 0;
	while (empty && (de = readdir(dp)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 ||
			strcmp(de->d_name, "..") == 0;
	closedir(dp);
	return empty;
}

/* The directory part of path ("." for none), malloc'ed. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	if (slash == NULL)
		return strdup(".");
	if (slash == path)
		return strdup("/");
	return strndup(path, (size_t)(slash - path));
}

/*
 * Writes into buf the temporary name "DIR/.BASE" + suffix, BASE cut (at a
 * character) so that the name fits the longest one DIR's file system
 * takes: a destination whose own name is near that limit still gets a
 * temporary sibling.
 */
static void tmp_path(char *buf, size_t size, const char *dir, const char *base,
		     const char *suffix)
{
	long name_max = pathconf(dir, _PC_NAME_MAX);
	size_t keep = strlen(base), room;

	if (name_max <= 0 || name_max > 255)
		name_max = 255;
	room = (size_t)name_max - 1 - strlen(suffix);
	if (keep > room) {
		keep = room;
		while (keep > 0 && ((unsigned char)base[keep] & 0xc0) == 0x80)
			keep--;
	}
	snprintf(buf, size, "%s/.%.*s%s", dir, (int)keep, base, suffix);
}

/* The last component of path. */
static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash != NULL ? slash + 1 : path;
}

/* Test hook: COLLC_TEST_NO_TMPFILE=1 behaves as on a file system without
 * O_TMPFILE, so the fallback is tested on every machine. */
static int tmpfile_disabled(void)
{
	const char *v = getenv("COLLC_TEST_NO_TMPFILE");

	return v != NULL && strcmp(v, "1") == 0;
}

/* Reports that out->path cannot be written: the directory when that is
 * what refuses (read-only, no permission, missing), the file otherwise. */
static int open_failed(struct cli_out *out, int e)
{
	if (e == EACCES || e == EROFS || e == ENOENT || e == ENOTDIR ||
	    e == EPERM)
		cli_msg("%s: cannot write: cannot create a file in directory "
			"\"%s\": %s",
			out->path, out->dir, strerror(e));
	else
		cli_msg("%s: cannot write: %s", out->path, strerror(e));
	free(out->dir);
	free(out->dest);
	out->dir = out->dest = NULL;
	return EXIT_FAILED;
}

int cli_out_open(struct cli_out *out, const char *path)
{
	struct stat st;
	sigset_t block, old;
	mode_t mode, mask;
	int fd = -1, e;

	memset(out, 0, sizeof(*out));
	out->fd = -1;
	if (path == NULL || strcmp(path, "-") == 0) {
		out->f = stdout;
		return 0;
	}
	out->path = path;
	out->dest = resolve_links(path);
	if (out->dest == NULL) {
		cli_msg("%s: cannot write: %s", path, strerror(errno));
		return EXIT_FAILED;
	}
	/* A device, FIFO or socket (/dev/null, /dev/stdout, a pipe) is
	 * written in place: renaming a temporary file over it would replace
	 * the device itself. */
	if (stat(out->dest, &st) == 0 && !S_ISREG(st.st_mode)) {
		out->f = fopen(out->dest, "w");
		if (out->f == NULL) {
			cli_msg("%s: cannot write: %s", path, strerror(errno));
			free(out->dest);
			out->dest = NULL;
			return EXIT_FAILED;
		}
		return 0;
	}
	/* The new file gets the mode of the one it replaces, or the usual
	 * mode of a new file. */
	mask = umask(0);
	umask(mask);
	mode = out->dest != NULL && stat(out->dest, &st) == 0
		   ? st.st_mode & 07777
		   : 0666 & ~mask;
	out->dir = dir_of(out->dest);
	if (out->dir == NULL || strlen(out->dest) + 16 >= sizeof(pending_tmp))
		return open_failed(out, out->dir == NULL ? ENOMEM
							 : ENAMETOOLONG);
	watch_signals();

	/* An unnamed file in the destination's directory: if the run is
	 * killed (SIGKILL, the out-of-memory killer, a batch time limit),
	 * the kernel frees it, where a named one would stay behind. */
	if (!tmpfile_disabled()) {
		fd = open(out->dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EOPNOTSUPP && errno != EISDIR &&
		    errno != EINVAL)
			return open_failed(out, errno);
	}
	if (fd < 0) {
		/* The file system has no O_TMPFILE: ".NAME.XXXXXX" beside
		 * the destination, removed on failure and on SIGINT, SIGTERM
		 * and SIGHUP.  The signals are held while the file comes to
		 * exist and its name is published: one arriving after
		 * mkstemp created the file but before have_pending is set
		 * would otherwise leave it behind. */
		watched_set(&block);
		sigprocmask(SIG_BLOCK, &block, &old);
		tmp_path(pending_tmp, sizeof(pending_tmp), out->dir,
			 base_of(out->dest), ".XXXXXX");
		fd = mkstemp(pending_tmp);
		e = errno;
		if (fd >= 0) {
			have_pending = 1;
			out->named = 1;
		}
		sigprocmask(SIG_SETMASK, &old, NULL);
		if (fd < 0)
			return open_failed(out, e);
	}
	fchmod(fd, mode);
	out->fd = fd;
	out->f = fdopen(fd, "w");
	if (out->f == NULL) {
		e = errno;
		close(fd);
		out->fd = -1;
		cli_out_abort(out);
		cli_msg("%s: cannot write: %s", path, strerror(e));
		return EXIT_FAILED;
	}
	return 0;
}

/* Gives the unnamed file a temporary name in its directory (linkat
 * through /proc/self/fd, which needs no privilege), published for the
 * signal handler.  Called with the signals held. */
static int name_tmpfile(struct cli_out *out)
{
	char proc[64];
	int e = 0;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", out->fd);
	for (int attempt = 0; attempt < 100; attempt++) {
		char suffix[32];

		snprintf(suffix, sizeof(suffix), ".%d.%d", (int)getpid(),
			 attempt);
		tmp_path(pending_tmp, sizeof(pending_tmp), out->dir,
			 base_of(out->dest), suffix);
		if (linkat(AT_FDCWD, proc, AT_FDCWD, pending_tmp,
			   AT_SYMLINK_FOLLOW) == 0) {
			have_pending = 1;
			out->named = 1;
			return 0;
		}
		e = errno;
		if (e != EEXIST)
			break;
	}
	errno = e;
	return -1;
}

int cli_out_commit(struct cli_out *out)
{
	sigset_t block, old;
	int failed, e = 0;

	if (out->path == NULL) {
		if (fflush(stdout) != 0 || ferror(stdout)) {
			cli_msg("standard output: cannot write: %s",
				strerror(errno));
			return EXIT_FAILED;
		}
		return 0;
	}
	/* Not synced to disk: waiting for the disk would cost a 2.8 GB
	 * output some 20 s here, for a file that can be compiled again; a
	 * system crash is left to the file system's own guarantees (ext4
	 * flushes a file renamed over another). */
	errno = 0;
	failed = fflush(out->f) != 0 || ferror(out->f);
	if (failed)
		e = errno;
	if (out->fd < 0) { /* written in place */
		if (fclose(out->f) != 0 && !failed) {
			failed = 1;
			e = errno;
		}
		out->f = NULL;
		free(out->dest);
		out->dest = NULL;
		if (failed) {
			cli_msg("%s: cannot write: %s", out->path,
				strerror(e != 0 ? e : EIO));
			return EXIT_FAILED;
		}
		return 0;
	}
	/* From here until the process ends the signals stay held: once the
	 * new file is in place, a signal must not make the run look failed
	 * (the exit status is 0 and the output is complete); before that,
	 * one must not interrupt between naming the file and renaming it. */
	watched_set(&block);
	sigprocmask(SIG_BLOCK, &block, &old);
	if (!failed && !out->named && name_tmpfile(out) != 0) {
		failed = 1;
		e = errno;
	}
	if (!failed && rename(pending_tmp, out->dest) != 0) {
		failed = 1;
		e = errno;
	}
	if (failed) {
		cli_msg("%s: cannot write: %s", out->path,
			strerror(e != 0 ? e : EIO));
		cli_out_abort(out);
		sigprocmask(SIG_SETMASK, &old, NULL);
		return EXIT_FAILED;
	}
	have_pending = 0;
	out->named = 0;
	fclose(out->f);
	out->f = NULL;
	out->fd = -1;
	free(out->dir);
	free(out->dest);
	out->dir = out->dest = NULL;
	return 0;
}

void cli_out_abort(struct cli_out *out)
{
	if (out->f != NULL && out->f != stdout)
		fclose(out->f);
	out->f = NULL;
	out->fd = -1;
	if (out->named) {
		unlink(pending_tmp);
		have_pending = 0;
		out->named = 0;
	}
	free(out->dir);
	free(out->dest);
	out->dir = out->dest = NULL;
}

int cli_dir_check(const char *option, const char *path)
{
	size_t len = strlen(path), cut;
	struct stat st, lst;
	char *trimmed, *dest;
	const char *base;
	int rc = -1;

	while (len > 1 && path[len - 1] == '/')
		len--;
	trimmed = strndup(path, len);
	if (trimmed == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	dest = resolve_links(trimmed);
	if (dest == NULL) {
		cli_msg("%s %s: %s", option, path, strerror(errno));
		free(trimmed);
		return EXIT_USAGE;
	}
	/* (resolve_links keeps a trailing slash a link's target has) */
	for (len = strlen(dest); len > 1 && dest[len - 1] == '/'; len--)
		dest[len - 1] = '\0';
	for (cut = len; cut > 0 && dest[cut - 1] != '/'; cut--)
		;
	base = dest + cut;
	if (stat(dest, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			cli_msg("%s %s: exists and is not a directory", option,
				path);
			rc = EXIT_USAGE;
		} else if (!dir_empty(dest)) {
			cli_msg("%s %s: exists and is not empty (give a new or "
				"an empty directory)",
				option, path);
			rc = EXIT_USAGE;
		}
	} else if (errno == ENOENT && lstat(trimmed, &lst) == 0 &&
		   S_ISLNK(lst.st_mode)) {
		cli_msg("%s %s: is a symbolic link to \"%s\", which does not "
			"exist (link it to an empty directory, or give a new "
			"directory's name)",
			option, path, dest);
		rc = EXIT_USAGE;
	}
	if (rc < 0 && (*base == '\0' || strcmp(base, ".") == 0 ||
		       strcmp(base, "..") == 0)) {
		cli_msg("%s %s: cannot be replaced (name a new directory)",
			option, path);
		rc = EXIT_USAGE;
	}
	free(dest);
	free(trimmed);
	return rc;
}

/* Reads f to the end; NULL with errno set on failure. */
static char *read_all(FILE *f, size_t *len)
{
	char *buf = NULL;
	size_t size = 0, cap = 0;

	for (;;) {
		size_t got;

		if (size + 1 >= cap) {
			char *nbuf;

			cap = cap ? cap * 2 : 65536;
			nbuf = realloc(buf, cap);
			if (nbuf == NULL) {
				free(buf);
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
		errno = e;
		return NULL;
	}
	buf[size] = '\0';
	*len = size;
	return buf;
}

long cli_utf8_invalid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;

	for (long i = 0; (size_t)i < len;) {
		unsigned c = s[i];
		int n = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1
				      : (c & 0xf0) == 0xe0 ? 2
				      : (c & 0xf8) == 0xf0 ? 3 : -1;
		unsigned cp = n == 1 ? c & 0x1f : n == 2 ? c & 0x0f : c & 0x07;

		if (n < 0)
			return i;
		for (int k = 1; k <= n; k++) {
			if ((size_t)(i + k) >= len || (s[i + k] & 0xc0) != 0x80)
				return i;
			cp = cp << 6 | (s[i + k] & 0x3f);
		}
		/* No overlong forms, surrogates, or code points past
		 * U+10FFFF (RFC 3629). */
		if ((n == 1 && cp < 0x80) || (n == 2 && cp < 0x800) ||
		    (n == 3 && cp < 0x10000) || cp > 0x10ffff ||
		    (cp >= 0xd800 && cp <= 0xdfff))
			return i;
		i += 1 + n;
	}
	return -1;
}

const char *cli_source(const char *path)
{
	return strcmp(path, "-") == 0 ? "standard input" : path;
}

int cli_load_text(const char *path, char **text, size_t *len)
{
	FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
	int e;

	*text = NULL;
	if (f == NULL) {
		cli_msg("%s: cannot open: %s", cli_source(path),
			strerror(errno));
		return EXIT_USAGE;
	}
	*text = read_all(f, len);
	e = errno;
	if (f != stdin)
		fclose(f);
	if (*text != NULL)
		return -1;
	/* Running out of memory is a failure of the run (1), not an input
	 * the user must fix. */
	if (e == ENOMEM) {
		cli_msg("%s: out of memory reading the file", cli_source(path));
		return EXIT_FAILED;
	}
	cli_msg("%s: cannot read: %s", cli_source(path), strerror(e));
	return EXIT_USAGE;
}

static size_t skip_space(const char *t, size_t i, size_t len)
{
	while (i < len && strchr(" \t\r\n", t[i]) != NULL && t[i] != '\0')
		i++;
	return i;
}

/* The end of the string starting at t[i] (a quote): the index past its
 * closing quote, or len when it has none. */
static size_t skip_string(const char *t, size_t i, size_t len)
{
	for (i++; i < len && t[i] != '"'; i++)
		if (t[i] == '\\')
			i++;
	return i < len ? i + 1 : len;
}

/* The end of the value starting at t[i]: strings whole, arrays and
 * objects by counting brackets (strings inside skipped), anything else up
 * to the next comma or closing bracket.  Malformed text ends it early;
 * nothing here reports errors, the loaders do. */
static size_t skip_value(const char *t, size_t i, size_t len)
{
	size_t depth = 0;

	while (i < len) {
		char c = t[i];

		if (c == '"') {
			i = skip_string(t, i, len);
		} else if (c == '{' || c == '[') {
			depth++;
			i++;
		} else if (c == '}' || c == ']') {
			if (depth == 0)
				return i;
			depth--;
			i++;
		} else if (c == ',' && depth == 0) {
			return i;
		} else {
			i++;
		}
		if (depth == 0 && i < len &&
		    (t[i - 1] == '"' || t[i - 1] == '}' || t[i - 1] == ']'))
			return i;
	}
	return i;
}

int cli_is_compiled(const char *text, size_t len)
{
	size_t i = 0;

	/* The top-level object's keys, read without building a document: a
	 * compile output can be gigabytes, and a parse here would also be a
	 * second place for the JSON reader to run out of memory.  collc
	 * writes "format" first, so that is usually the first key looked
	 * at.  A compile output is recognised by "format", or by "machine"
	 * (a key no machine description has) when "format" was lost. */
	if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	i = skip_space(text, i, len);
	if (i >= len || text[i] != '{')
		return 0;
	i++;
	for (;;) {
		size_t k;

		i = skip_space(text, i, len);
		if (i >= len || text[i] != '"')
			return 0;
		k = skip_string(text, i, len);
		if ((k - i == 8 && memcmp(text + i, "\"format\"", 8) == 0) ||
		    (k - i == 9 && memcmp(text + i, "\"machine\"", 9) == 0))
			return 1;
		i = skip_space(text, k, len);
		if (i >= len || text[i] != ':')
			return 0;
		i = skip_value(text, skip_space(text, i + 1, len), len);
		i = skip_space(text, i, len);
		if (i >= len || text[i] != ',')
			return 0;
		i++;
	}
}

int cli_not_a_machine(const char *path, const char *cmd)
{
	cli_msg("%s: a compile output (collc-routes), not a machine "
		"description: collc %s takes a machine description; collc "
		"routes, collc dot and collrun read compile outputs",
		cli_source(path), cmd);
	return EXIT_USAGE;
}

int cli_parse_size(const char *s, uint64_t *out)
{
	unsigned long long v;
	unsigned shift = 0;
	char *end;

	if (*s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0)
		return errno == ERANGE ? -2 : -1;
	switch (*end) {
	case '\0':
		break;
	case 'K':
	case 'k':
		shift = 10;
		break;
	case 'M':
	case 'm':
		shift = 20;
		break;
	case 'G':
	case 'g':
		shift = 30;
		break;
	case 'T':
	case 't':
		shift = 40;
		break;
	default:
		return -1;
	}
	if (shift != 0) {
		end++;
		if (strcmp(end, "iB") == 0)
			end += 2;
	}
	if (*end != '\0')
		return -1;
	if (v > (UINT64_MAX >> shift))
		return -2;
	*out = (uint64_t)v << shift;
	return 0;
}

void cli_format_bytes(char *buf, size_t size, uint64_t n)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)n;
	int u = -1;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%llu bytes", (unsigned long long)n);
	else if (v == (double)(uint64_t)v)
		snprintf(buf, size, "%.0f %s", v, unit[u]);
	else
		snprintf(buf, size, "%.1f %s", v, unit[u]);
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

/* "world, a, b": the groups a machine description names. */
static void list_machine_groups(char *buf, size_t size, const topo_machine *m)
{
	size_t len = (size_t)snprintf(buf, size, "world");

	for (size_t i = 0; i < topo_machine_group_count(m); i++)
		len += (size_t)snprintf(buf + len, len < size ? size - len : 0,
					", %s", topo_machine_group_name(m, i));
}

int cli_group_new(topo_group **out, const topo_machine *m, const char *path,
		  const char *gname)
{
	const char *spec = cli_named_spec(m, gname);
	topo_error err;
	char names[1024], why[1024];
	int rc;

	topo_error_clear(&err);
	rc = topo_group_new(out, m, gname, spec != NULL ? spec : gname, &err);
	if (rc == 0)
		return -1;
	/* A value with a space, or whose first word is an axis, was meant
	 * as a spec: its error is the answer.  A single word that is not
	 * an axis was most often a group name mistyped, so that comes
	 * first, with the names there are. */
	if (rc != TOPO_ESPEC || spec != NULL || err.position != 0 ||
	    strpbrk(gname, " \t") != NULL)
		return cli_error(&err, rc);
	list_machine_groups(names, sizeof(names), m);
	topo_error_format(&err, why, sizeof(why));
	cli_msg("%s: no group \"%s\" (groups: %s), and it is not a stride "
		"spec either (%s)",
		cli_source(path), gname, names, why);
	return EXIT_USAGE;
}

int cli_tree_load(struct cli_tree *out, const char *path, const char *gname,
		  const char *tname)
{
	const char *source = cli_source(path);
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
	rc = cli_load_text(path, &text, &len);
	if (rc >= 0)
		return rc;
	if (cli_is_compiled(text, len)) {
		char names[1024];
		const topo_group *g;

		rc = topo_compiled_load_string(&out->c, text, len, source,
					       &err);
		if (rc != 0) {
			rc = cli_error(&err, rc);
			goto done;
		}
		g = topo_compiled_find_group(out->c, gname);
		if (g == NULL) {
			list_names(names, sizeof(names), out->c, NULL);
			cli_msg("%s: no group \"%s\" (groups: %s)", source,
				gname, names);
			rc = EXIT_USAGE;
			goto done;
		}
		out->t = topo_compiled_find_tree(out->c, g, tname);
		if (out->t == NULL) {
			list_names(names, sizeof(names), out->c, g);
			cli_msg("%s: group \"%s\" has no tree \"%s\" "
				"(trees: %s)",
				source, gname, tname, names);
			rc = EXIT_USAGE;
			goto done;
		}
	} else {
		rc = topo_machine_load_string(&out->m, text, len, source, &err);
		if (rc != 0) {
			rc = cli_error(&err, rc);
			goto done;
		}
		/* A group name of the machine, or else a stride spec. */
		rc = cli_group_new(&out->g, out->m, path, gname);
		if (rc >= 0)
			goto done;
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

/* ---------------------------------------------------------------------- */
/* Costs of a prediction (--cost) */

int cli_cost_check(const char *assignment, const char *usage)
{
	struct topo_costs scratch;
	topo_error err;

	topo_costs_init(&scratch, sizeof(scratch));
	topo_error_clear(&err);
	if (topo_costs_set(&scratch, assignment, &err) == 0)
		return -1;
	if (usage != NULL)
		return cli_usage_error(usage, "--cost: %s", err.text);
	cli_msg("--cost: %s", err.text);
	return EXIT_USAGE;
}

int cli_costs_load(struct topo_costs *out, const topo_machine *m,
		   const char *const *set, size_t n)
{
	topo_error err;
	int rc;

	topo_costs_init(out, sizeof(*out));
	topo_error_clear(&err);
	rc = topo_machine_costs(m, out, &err);
	if (rc != 0)
		return cli_error(&err, rc);
	for (size_t i = 0; i < n; i++) {
		topo_error_clear(&err);
		if (topo_costs_set(out, set[i], &err) != 0) {
			cli_msg("--cost: %s", err.text);
			return EXIT_USAGE;
		}
	}
	return -1;
}

void cli_costs_print(FILE *f, const struct topo_costs *c, int reduce_type)
{
	const char *cls, *key, *prev = "";
	double v;

	for (size_t i = 0; topo_costs_key(c, i, &cls, &key, &v); i++) {
		if (strcmp(cls, "reduce") == 0 &&
		    (reduce_type < 0 ||
		     strcmp(key, topo_type_name((enum topo_type)reduce_type)) !=
			 0))
			continue;
		if (strcmp(cls, prev) != 0)
			fprintf(f, "%s%s", *prev ? "; " : "", cls);
		fprintf(f, " %s %g", key, v);
		prev = cls;
	}
}

json_t *cli_costs_json(const struct topo_costs *c)
{
	json_t *o = json_object();
	const char *cls, *key;
	double v;
	int bad = o == NULL;

	for (size_t i = 0; !bad && topo_costs_key(c, i, &cls, &key, &v); i++) {
		json_t *sub = json_object_get(o, cls);

		if (sub == NULL) {
			sub = json_object();
			/* set_new takes sub (and frees it on failure) */
			bad |= json_object_set_new(o, cls, sub);
		}
		bad |= json_object_set_new(sub, key, json_real(v));
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* ---------------------------------------------------------------------- */
/* A deadline for loading */

static char watchdog_msg[640];
static size_t watchdog_len;

static void watchdog_fire(int sig)
{
	ssize_t unused;

	(void)sig;
	unused = write(STDERR_FILENO, watchdog_msg, watchdog_len);
	(void)unused;
	_exit(EXIT_FAILED);
}

void cli_watchdog_arm(double seconds, double timeout, const char *file)
{
	struct itimerval it;
	struct sigaction sa;
	FILE *f = fmemopen(watchdog_msg, sizeof(watchdog_msg) - 1, "w");

	if (f == NULL)
		return;
	fprintf(f, "%s: the run did not finish within %g s (loading ", cli_prog,
		timeout);
	cli_put_clean(f, cli_source(file));
	fputs(")\n", f);
	fflush(f);
	watchdog_len = (size_t)ftell(f);
	fclose(f);
	if (watchdog_len == 0 || watchdog_msg[watchdog_len - 1] != '\n')
		return; /* too long to say: the caller's check after loading */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = watchdog_fire;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGALRM, &sa, NULL) != 0)
		return;
	if (seconds > 1e8)
		seconds = 1e8; /* three years: no deadline to speak of */
	memset(&it, 0, sizeof(it));
	it.it_value.tv_sec = (time_t)seconds;
	it.it_value.tv_usec =
	    (suseconds_t)((seconds - (double)(time_t)seconds) * 1e6);
	if (it.it_value.tv_sec <= 0 && it.it_value.tv_usec <= 0) {
		it.it_value.tv_sec = 0;
		it.it_value.tv_usec = 1;
	}
	setitimer(ITIMER_REAL, &it, NULL);
}

void cli_watchdog_disarm(void)
{
	struct itimerval it;

	memset(&it, 0, sizeof(it));
	setitimer(ITIMER_REAL, &it, NULL);
	signal(SIGALRM, SIG_DFL);
}

int cli_parse_seconds(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno != 0 || end == s || *end != '\0' ||
	    strspn(s, "0123456789.eE+-") != strlen(s) || !isfinite(v) ||
	    v <= 0 || v > 1e9)
		return -1;
	*out = v;
	return 0;
}

int cli_json_write(FILE *f, json_t *o, int digits)
{
	const size_t flags = JSON_INDENT(2) | JSON_PRESERVE_ORDER |
			     JSON_REAL_PRECISION(digits);
	char *text = NULL;
	size_t len = 0;

	if (o != NULL)
		len = json_dumpb(o, NULL, 0, flags);
	if (len > 0)
		text = malloc(len);
	if (text == NULL || json_dumpb(o, text, len, flags) != len) {
		json_decref(o);
		free(text);
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	json_decref(o);
	fwrite(text, 1, len, f);
	fputc('\n', f);
	free(text);
	return 0;
}

int cli_out_fail(struct cli_out *out, int rc, const topo_error *err)
{
	const char *path = out->path;

	cli_out_abort(out);
	if (rc == TOPO_ENOMEM)
		return cli_error(err, rc);
	cli_msg("%s: cannot write: %s",
		path != NULL ? path : "standard output", err->text);
	return EXIT_FAILED;
}
