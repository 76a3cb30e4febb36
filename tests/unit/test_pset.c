/*
 * test_pset.c - sets as runs of periodic patterns (libtopo/machine/pset.c), the
 * representation stride specs are evaluated in.
 *
 * Every operation is checked against a brute-force model, a byte per
 * integer: unions of random progressions, intersections, chains of added
 * and removed sets, units expanded to parts with and without a row filter,
 * units of uneven sizes widened.  The thresholds that choose between
 * periodic patterns, literal stretches, member-by-member marking and the
 * one-bitmap union are set at random for every case, tiny values included,
 * so that every path runs on sets small enough to model.  Each result must
 * also be well formed (sorted disjoint runs, canonical patterns).  Then
 * allocation failures at every allocation of each operation, and sets over
 * 2^31 - 1 integers whose members are counted arithmetically.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "topo_internal.h"

#include "pset.h"

#include <stdbool.h>

static const struct pset_tune tune_default = {(int64_t)1 << 24, 64, 64};

static void random_tune(void)
{
	static const int64_t caps[] = {1, 2, 3, 8, 64, 1000, (int64_t)1 << 24};
	static const int64_t sparse[] = {1, 2, 5, 64, 100000};
	static const size_t many[] = {0, 1, 2, 3, 64};

	topo__tune.pset.cap = caps[check_rand_range(0, 6)];
	topo__tune.pset.sparse = sparse[check_rand_range(0, 4)];
	topo__tune.pset.many = many[check_rand_range(0, 4)];
}

static const char *tune_text(void)
{
	static char buf[96];

	snprintf(buf, sizeof(buf), "cap %lld sparse %lld many %zu",
		 (long long)topo__tune.pset.cap,
		 (long long)topo__tune.pset.sparse, topo__tune.pset.many);
	return buf;
}

/* s must hold exactly the x < size with want[x]. */
static bool same(const char *what, const struct pset *s, const char *want,
		 int64_t size)
{
	const char *bad = topo__pset_invalid(s, size);
	int64_t n = 0, count = topo__pset_count(s);
	int32_t *members;
	bool ok = true;

	CHECK(bad == NULL, "%s (%s, size %lld): %s", what, tune_text(),
	      (long long)size, bad);
	if (bad != NULL)
		return false;
	for (int64_t x = 0; x < size; x++)
		n += want[x] != 0;
	CHECK(count == n, "%s (%s, size %lld): count %lld, want %lld", what,
	      tune_text(), (long long)size, (long long)count, (long long)n);
	if (count != n)
		return false;
	members = malloc((size_t)(n + 1) * sizeof(*members));
	CHECK_INT(topo__pset_members(s, members), 0);
	for (int64_t x = 0, i = 0; x < size && ok; x++)
		if (want[x])
			ok = members[i++] == x;
	free(members);
	CHECK(ok, "%s (%s, size %lld): members differ", what, tune_text(),
	      (long long)size);
	return ok;
}

/* Random progressions over [0, size), marked into want. */
static size_t random_progs(struct pset_prog *v, size_t max, int64_t size,
			   char *want)
{
	size_t n = (size_t)check_rand_range(1, (long)max);

	for (size_t i = 0; i < n; i++) {
		int64_t step, lo, k;

		switch (check_rand_range(0, 4)) {
		case 0:
			step = 1;
			break;
		case 1:
			step = check_rand_range(2, 8);
			break;
		case 2:
			step = check_rand_range(2, size > 2 ? size : 2);
			break;
		default:
			step = check_rand_range(1, 70);
			break;
		}
		lo = check_rand_range(0, size - 1);
		k = (size - 1 - lo) / step;
		if (check_rand_range(0, 2) == 0)
			k = check_rand_range(0, k);
		v[i] = (struct pset_prog){lo, lo + k * step, step};
		for (int64_t x = lo; x <= lo + k * step; x += step)
			want[x] = 1;
	}
	return n;
}

/* A random set over [0, size) into s and want. */
static void random_set(struct pset_work *w, struct pset *s, int64_t size,
		       char *want)
{
	struct pset_prog v[12];

	memset(want, 0, (size_t)size);
	if (check_rand_range(0, 5) == 0) {
		/* Intervals, some touching. */
		for (int64_t x = check_rand_range(0, 3); x < size;) {
			int64_t len = check_rand_range(1, 6);

			if (x + len > size)
				len = size - x;
			CHECK_INT(topo__pset_push_full(s, x, x + len), 0);
			memset(want + x, 1, (size_t)len);
			x += len + check_rand_range(0, 4);
		}
		return;
	}
	CHECK_INT(topo__pset_union_progs(w, v, random_progs(v, 12, size, want), size,
				   s),
		  0);
}

static int64_t random_size(void)
{
	switch (check_rand_range(0, 9)) {
	case 0:
		return check_rand_range(1, 4);
	case 1:
		return check_rand_range(1000, 20000);
	default:
		return check_rand_range(1, 400);
	}
}

static void test_union_and(struct pset_work *w)
{
	for (int i = 0; i < 3000; i++) {
		int64_t size = random_size();
		char *a = malloc((size_t)size), *b = malloc((size_t)size);
		char *both = malloc((size_t)size);
		struct pset sa = {0}, sb = {0}, sc = {0};

		random_tune();
		random_set(w, &sa, size, a);
		same("union", &sa, a, size);
		random_set(w, &sb, size, b);
		for (int64_t x = 0; x < size; x++)
			both[x] = a[x] && b[x];
		CHECK_INT(topo__pset_and(w, &sa, &sb, &sc), 0);
		same("and", &sc, both, size);
		CHECK(topo__pset_is_range(&sa, 0, size) ==
			  (memchr(a, 0, (size_t)size) == NULL),
		      "is_range disagrees");
		topo__pset_free(&sa);
		topo__pset_free(&sb);
		topo__pset_free(&sc);
		free(a);
		free(b);
		free(both);
	}
}

static void test_chain(struct pset_work *w)
{
	for (int i = 0; i < 3000; i++) {
		int64_t size = random_size();
		size_t n = (size_t)check_rand_range(1, 7);
		struct pset sets[7] = {{0}}, out = {0};
		bool minus[7];
		char *want = calloc((size_t)size, 1), *one = malloc((size_t)size);

		random_tune();
		for (size_t k = 0; k < n; k++) {
			random_set(w, &sets[k], size, one);
			minus[k] = check_rand_range(0, 1) == 1;
			for (int64_t x = 0; x < size; x++) {
				if (!one[x])
					continue;
				want[x] = k == 0 || !minus[k];
			}
		}
		CHECK_INT(topo__pset_chain(w, sets, minus, n, &out), 0);
		same("chain", &out, want, size);
		for (size_t k = 0; k < n; k++)
			topo__pset_free(&sets[k]);
		topo__pset_free(&out);
		free(want);
		free(one);
	}
}

static void test_expand_widen(struct pset_work *w)
{
	for (int i = 0; i < 3000; i++) {
		int64_t units = check_rand_range(1, 80);
		int64_t unit = check_rand_range(1, i % 10 == 0 ? 300 : 12);
		int64_t size = units * unit;
		char *in = malloc((size_t)units), *rows = malloc((size_t)unit);
		char *want = malloc((size_t)size);
		struct pset sin = {0}, srows = {0}, out = {0};
		bool filter = check_rand_range(0, 1) == 1;
		int32_t *first = malloc((size_t)(units + 1) * sizeof(*first));
		char *wide;

		random_tune();
		random_set(w, &sin, units, in);
		if (filter)
			random_set(w, &srows, unit, rows);
		for (int64_t x = 0; x < size; x++)
			want[x] = in[x / unit] && (!filter || rows[x % unit]);
		CHECK_INT(topo__pset_expand(w, &sin, unit, filter ? &srows : NULL,
				      &out),
			  0);
		same(filter ? "expand with rows" : "expand", &out, want, size);

		/* Units of uneven sizes. */
		first[0] = 0;
		for (int64_t u = 0; u < units; u++)
			first[u + 1] = first[u] + (int32_t)check_rand_range(1, 5);
		wide = malloc((size_t)first[units]);
		for (int64_t u = 0; u < units; u++)
			memset(wide + first[u], in[u],
			       (size_t)(first[u + 1] - first[u]));
		CHECK_INT(topo__pset_widen(&sin, first, &out), 0);
		same("widen", &out, wide, first[units]);
		topo__pset_free(&sin);
		topo__pset_free(&srows);
		topo__pset_free(&out);
		free(in);
		free(rows);
		free(want);
		free(first);
		free(wide);
	}
}

/* Every allocation of each operation fails once: TOPO_ENOMEM, an empty
 * result, nothing leaked (the sanitizer builds). */
static void test_enomem(void)
{
	struct pset_tune tunes[] = {{(int64_t)1 << 24, 64, 64}, {3, 2, 1},
				    {1, 100000, 0}};

	for (size_t t = 0; t < sizeof(tunes) / sizeof(tunes[0]); t++) {
		long k;

		topo__tune.pset = tunes[t];
		for (k = 0; k < 1000; k++) {
			struct pset_work *w;
			struct pset a = {0}, b = {0}, c = {0}, d = {0},
				    e = {0}, f = {0}, sets[2];
			struct pset_prog v[] = {{0, 998, 2},   {1, 997, 3},
						{5, 905, 100}, {7, 7, 1},
						{3, 600, 7},   {10, 20, 1}};
			struct pset_prog u[] = {{1, 999, 2}, {0, 999, 5}};
			struct pset_prog r[] = {{1, 2, 1}};
			bool minus[2] = {false, true};
			int rc;

			topo__alloc_fail_after(k);
			w = topo__pset_work_new();
			rc = w != NULL ? 0 : TOPO_ENOMEM;
			if (rc == 0)
				rc = topo__pset_union_progs(w, v, 6, 1000, &a);
			if (rc == 0)
				rc = topo__pset_union_progs(w, u, 2, 1000, &b);
			if (rc == 0)
				rc = topo__pset_and(w, &a, &b, &c);
			if (rc == 0) {
				sets[0] = a;
				sets[1] = b;
				rc = topo__pset_chain(w, sets, minus, 2, &d);
			}
			if (rc == 0)
				rc = topo__pset_union_progs(w, r, 1, 3, &e);
			if (rc == 0)
				rc = topo__pset_expand(w, &c, 3, &e, &f);
			topo__alloc_fail_after(-1);
			CHECK(rc == 0 || rc == TOPO_ENOMEM, "rc %d", rc);
			if (rc != 0)
				CHECK(f.n == 0 && f.v == NULL,
				      "failure %ld left a result", k);
			topo__pset_free(&a);
			topo__pset_free(&b);
			topo__pset_free(&c);
			topo__pset_free(&d);
			topo__pset_free(&e);
			topo__pset_free(&f);
			topo__pset_work_free(w);
			if (rc == 0)
				break;
		}
		CHECK(k > 3 && k < 1000, "tune %zu: succeeded after %ld failures",
		      t, k);
	}
	topo__tune.pset = tune_default;
}

/* Sets over [0, 2^31 - 1): the cost follows the runs, and counts and
 * members are checked arithmetically. */
static int64_t multiples(int64_t step, int64_t res, int64_t size)
{
	return res >= size ? 0 : (size - 1 - res) / step + 1;
}

static void test_huge(struct pset_work *w)
{
	const int64_t N = INT32_MAX;
	struct pset_prog even = {0, N - 1 - (N - 1) % 2, 2};
	struct pset_prog three = {0, N - 1 - (N - 1) % 3, 3};
	struct pset_prog big[] = {{0, N - 1 - (N - 1) % 65537, 65537},
				  {1, 1 + (N - 2) / 65539 * 65539, 65539}};
	struct pset s2 = {0}, s3 = {0}, out = {0}, sets[2];
	bool minus[2] = {false, true};
	int32_t first[8];

	topo__tune.pset = tune_default;
	CHECK_INT(topo__pset_union_progs(w, &even, 1, N, &s2), 0);
	CHECK_INT(topo__pset_union_progs(w, &three, 1, N, &s3), 0);
	CHECK_INT(s2.n, 1);
	/* Multiples of 3 that are odd. */
	sets[0] = s3;
	sets[1] = s2;
	CHECK_INT(topo__pset_chain(w, sets, minus, 2, &out), 0);
	CHECK_INT(out.n, 1);
	CHECK_INT(topo__pset_count(&out), multiples(3, 0, N) - multiples(6, 0, N));
	CHECK(topo__pset_invalid(&out, N) == NULL, "%s", topo__pset_invalid(&out, N));
	/* Two coprime strides of 65,537 and 65,539: an lcm past the cap,
	 * so one literal stretch, marked member by member. */
	CHECK_INT(topo__pset_union_progs(w, big, 2, N, &out), 0);
	CHECK_INT(topo__pset_count(&out),
		  multiples(65537, 0, N) + multiples(65539, 1, N) -
		      /* x = 0 mod 65537 and 1 mod 65539: x = 65537 * 32769 */
		      (65537LL * 32769 < N ? 1 : 0));
	{
		int32_t *m = malloc((size_t)topo__pset_count(&out) * sizeof(*m));

		CHECK_INT(topo__pset_members(&out, m), 0);
		CHECK(m[0] == 0 && m[1] == 1 && m[2] == 65537 && m[3] == 65540,
		      "members %d %d %d %d", m[0], m[1], m[2], m[3]);
		free(m);
	}
	/* One member of a step of 2^31 - 1 is that member, not a pattern of
	 * 2^31 bits (found by fuzz_spec: "ep 0:17:2147483647"). */
	{
		struct pset_prog one = {5, 5, N};
		struct pset s1 = {0};

		CHECK_INT(topo__pset_union_progs(w, &one, 1, N, &s1), 0);
		CHECK(topo__pset_is_range(&s1, 5, 6) && s1.v[0].pat == NULL,
		      "a one-member progression is not the run [5, 6)");
		topo__pset_free(&s1);
	}
	/* The endpoints of a task of 2^31 - 1: every other one. */
	{
		struct pset task = {0}, ep = {0};

		CHECK_INT(topo__pset_push_full(&task, 0, 1), 0);
		CHECK_INT(topo__pset_expand(w, &task, N, &s2, &ep), 0);
		CHECK_INT(ep.n, 1);
		CHECK_INT(topo__pset_count(&ep), multiples(2, 0, N));
		topo__pset_free(&task);
		topo__pset_free(&ep);
	}
	/* Uneven units of a set with a huge period. */
	first[0] = 0;
	for (int i = 1; i < 8; i++)
		first[i] = first[i - 1] + i;
	topo__pset_free(&out);
	CHECK_INT(topo__pset_union_progs(w, &even, 1, 7, &out), 0);
	CHECK_INT(topo__pset_widen(&out, first, &s3), 0);
	CHECK_INT(topo__pset_count(&s3), 1 + 3 + 5 + 7);
	topo__pset_free(&s2);
	topo__pset_free(&s3);
	topo__pset_free(&out);
}

int main(int argc, char **argv)
{
	struct pset_work *w;

	check_args(argc, argv);
	check_seed("test_pset", 4242);
	w = topo__pset_work_new();
	CHECK_RUN(union_and, test_union_and(w));
	CHECK_RUN(chain, test_chain(w));
	CHECK_RUN(expand_widen, test_expand_widen(w));
	CHECK_RUN(huge, test_huge(w));
	topo__pset_work_free(w);
	CHECK_RUN(enomem, test_enomem());
	topo__tune.pset = tune_default;
	return check_done("test_pset");
}
