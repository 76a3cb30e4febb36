/*
 * check.h - the unit tests' minimal harness.
 *
 * CHECK(cond, fmt, ...) records one assertion; a failure prints the file,
 * line and message and the test goes on.  check_done() prints
 * "NAME: N passed, N failed" and returns the exit status; check_skip
 * counts and prints a check the host cannot make.  Unit tests may
 * define TOPO_INTERNAL before including it to reach libtopo's internals.
 */
#ifndef CHECK_H
#define CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long check_passed, check_failed, check_skipped;

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
	printf("%s: seed %" PRIu64 " (set CHECK_SEED to repeat)\n", name,
	       check_rng_state);
	if (check_quick())
		printf("%s: CHECK_QUICK: the largest sweeps run a sample\n",
		       name);
}

#endif
