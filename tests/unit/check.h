/*
 * check.h - the unit tests' minimal harness.
 *
 * CHECK(cond, fmt, ...) records one assertion; a failure prints the file,
 * line and message and the test goes on.  check_done() prints
 * "NAME: N passed, N failed" and returns the exit status; check_skip
 * counts and prints a check the host cannot make.  Unit tests may
 * define TOPO_INTERNAL before including it to reach libtopo's internals.
 *
 * Named tests: a program's main is its list of tests, each call wrapped
 * in CHECK_RUN(NAME, call) (or a block under check_want("NAME")), in
 * the order they run; check_args(argc, argv) first.  Without arguments
 * every test runs; with names, only those (a name used several times, as
 * for one test over several thread counts, runs each time); --list
 * prints the names and runs nothing.  A name that is not in the list is
 * an error: check_done says so and returns 2.
 */
#ifndef CHECK_H
#define CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static long check_passed, check_failed, check_skipped;

/* The names asked for (check_args), and whether each was found; listing:
 * --list; check_listed: the names printed so far, each once. */
#define CHECK_MAX_NAMES 256
static int check_nnames, check_listing, check_nlisted;
static const char *check_names[CHECK_MAX_NAMES];
static int check_found[CHECK_MAX_NAMES];
static const char *check_listed[CHECK_MAX_NAMES];

static inline void check_usage(const char *prog, FILE *f)
{
	fprintf(f,
		"usage: %s [--list | NAME...]\n"
		"  runs every test, or only the tests named; --list names "
		"them\n",
		prog);
}

/* Whether the program's --list (run as a child, before anything else
 * has run) has every name asked for: each missing one is said on
 * standard error.  Returns -1 when the list cannot be had. */
static inline int check_names_known(const char *prog)
{
	char self[4096], line[256];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	int fd[2], status, missing = 0;
	FILE *f;
	pid_t pid;

	if (len <= 0 || pipe(fd) != 0)
		return -1;
	self[len] = '\0';
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execl(self, self, "--list", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	f = pid > 0 ? fdopen(fd[0], "r") : NULL;
	if (f == NULL) {
		close(fd[0]);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		for (int i = 0; i < check_nnames; i++)
			if (strcmp(check_names[i], line) == 0)
				check_found[i] = 1;
	}
	fclose(f);
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0)
		return -1;
	for (int i = 0; i < check_nnames; i++) {
		if (!check_found[i])
			fprintf(stderr,
				"%s: no test is called \"%s\" (--list names "
				"them)\n",
				prog, check_names[i]);
		missing |= !check_found[i];
		check_found[i] = 0;
	}
	return missing;
}

/* Reads the command line: --list, or the names of the tests to run.
 * Exits 2 on an option it does not know and on a name no test has. */
static inline void check_args(int argc, char **argv)
{
	const char *prog = argc > 0 ? argv[0] : "test";

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--list") == 0) {
			check_listing = 1;
		} else if (strcmp(argv[i], "--help") == 0 ||
			   strcmp(argv[i], "-h") == 0) {
			check_usage(prog, stdout);
			exit(0);
		} else if (argv[i][0] == '-' ||
			   check_nnames == CHECK_MAX_NAMES) {
			fprintf(stderr,
				"%s: unknown option or too many names: %s\n",
				prog, argv[i]);
			check_usage(prog, stderr);
			exit(2);
		} else {
			check_names[check_nnames++] = argv[i];
		}
	}
	if (!check_listing && check_nnames > 0 && check_names_known(prog) > 0)
		exit(2);
}

/* Whether the test called name runs now; under --list, prints the name
 * (once) instead. */
static inline int check_want(const char *name)
{
	int want = 0;

	if (check_listing) {
		for (int i = 0; i < check_nlisted; i++)
			if (strcmp(check_listed[i], name) == 0)
				return 0;
		if (check_nlisted < CHECK_MAX_NAMES)
			check_listed[check_nlisted++] = name;
		printf("%s\n", name);
		return 0;
	}
	if (check_nnames == 0)
		return 1;
	for (int i = 0; i < check_nnames; i++)
		if (strcmp(check_names[i], name) == 0)
			want = check_found[i] = 1;
	return want;
}

/* Runs the statement (a call) when the test NAME is wanted. */
#define CHECK_RUN(name, ...)                                                   \
	do {                                                                   \
		if (check_want(#name)) {                                       \
			__VA_ARGS__;                                           \
		}                                                              \
	} while (0)

/* Nonzero under valgrind, which runs one thread at a time and 20-50 times
 * slower: tests that time threads stretch or skip those assertions. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define UNDER_VALGRIND RUNNING_ON_VALGRIND
#endif
#endif
#ifndef UNDER_VALGRIND
#define UNDER_VALGRIND 0
#endif

#define CHECK(cond, ...)                                                       \
	do {                                                                   \
		if (cond) {                                                    \
			check_passed++;                                        \
		} else {                                                       \
			check_failed++;                                        \
			fprintf(stderr, "%s:%d: FAIL: %s: ", __FILE__,         \
				__LINE__, #cond);                              \
			fprintf(stderr, __VA_ARGS__);                          \
			fputc('\n', stderr);                                   \
		}                                                              \
	} while (0)

#define CHECK_INT(got, want)                                                   \
	do {                                                                   \
		long long check_g_ = (long long)(got);                         \
		long long check_w_ = (long long)(want);                        \
		CHECK(check_g_ == check_w_, "%s = %lld, want %lld", #got,      \
		      check_g_, check_w_);                                     \
	} while (0)

#define CHECK_STR(got, want)                                                   \
	do {                                                                   \
		const char *check_g_ = (got), *check_w_ = (want);              \
		CHECK(check_g_ != NULL && strcmp(check_g_, check_w_) == 0,     \
		      "%s = \"%s\", want \"%s\"", #got,                        \
		      check_g_ ? check_g_ : "(null)", check_w_);               \
	} while (0)

/* A check not made here (a host without what it needs): counted, said on
 * standard output, and summed up by check_done, so that a skip never
 * passes unseen.  A skip is for what the host lacks, never for what the
 * library under test answers. */
static inline __attribute__((format(printf, 1, 2))) void
check_skip(const char *fmt, ...)
{
	va_list ap;

	check_skipped++;
	fputs("skipped: ", stdout);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static inline int check_done(const char *name)
{
	int unknown = 0;

	if (check_listing)
		return 0;
	for (int i = 0; i < check_nnames; i++)
		if (!check_found[i]) {
			fprintf(stderr,
				"%s: no test is called \"%s\" (--list names "
				"them)\n",
				name, check_names[i]);
			unknown = 1;
		}
	if (unknown)
		return 2;
	if (check_skipped > 0)
		printf("%s: %ld checks skipped (see \"skipped:\" above)\n",
		       name, check_skipped);
	printf("%s: %ld passed, %ld failed\n", name, check_passed,
	       check_failed);
	return check_failed == 0 ? 0 : 1;
}

/* A small, fast, seedable generator (splitmix64) so random cases are
 * reproducible: every test prints its seed, and CHECK_SEED overrides it. */
static uint64_t check_rng_state;

static inline uint64_t check_rand64(void)
{
	uint64_t z = (check_rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline long check_rand_range(long lo, long hi)
{
	return lo + (long)(check_rand64() % (uint64_t)(hi - lo + 1));
}

/* Whether CHECK_QUICK is set (and not "0"): the valgrind suite sets it,
 * and the largest randomised or exhaustive sweeps then run a sample of
 * their cases (saying so), since valgrind checks memory, which the sample
 * exercises on every path, not arithmetic, which the full runs cover in
 * make check and under AddressSanitizer. */
static inline int check_quick(void)
{
	const char *env = getenv("CHECK_QUICK");

	return env != NULL && env[0] != '\0' && strcmp(env, "0") != 0;
}

static inline void check_seed(const char *name, uint64_t def)
{
	const char *env = getenv("CHECK_SEED");

	check_rng_state = env != NULL ? strtoull(env, NULL, 0) : def;
	if (check_listing)
		return;
	printf("%s: seed %" PRIu64 " (set CHECK_SEED to repeat)\n", name,
	       check_rng_state);
	if (check_quick())
		printf("%s: CHECK_QUICK: the largest sweeps run a sample\n",
		       name);
}

#endif
