/*
 * timeouts.h - what the unit tests check of a run that ran out of time.
 *
 * A timeout test checks that the deadline was honoured (the run stopped
 * short of its work: fewer iterations, fewer messages than it had) and
 * that the report says so in one of the documented words, never which
 * phase the deadline fell in: a loaded machine may still be filling the
 * inputs when an idle one is well into the first iteration.  Wall-clock
 * bounds on how soon a run stops are bounds on a hang, far above any
 * stop, never claims on speed.
 */
#ifndef TIMEOUTS_H
#define TIMEOUTS_H

#include <stdio.h>
#include <string.h>

/* Whether "N of M)" ends s, with 1 <= N <= M and M == of. */
static inline int timeout_count_ok(const char *s, long long of)
{
	long long n = -1, m = -1;
	int end = -1;

	if (sscanf(s, "%lld of %lld)%n", &n, &m, &end) != 2 || end < 0 ||
	    s[end] != '\0')
		return 0;
	return n >= 1 && n <= m && m == of;
}

/*
 * Whether detail is a run's timeout as libtopo(3) (topo_plan_run) and
 * collrun(1) (--timeout) document it: "the run did not finish within T s
 * (PHASE)", T the timeout as %g prints it, PHASE one of "filling the
 * inputs: member N of MEMBERS", "before iteration N of ITERATIONS",
 * "iteration N of ITERATIONS" or "verifying iteration N of ITERATIONS".
 */
static inline int timeout_detail_ok(const char *detail, double timeout,
				    int iterations, int members)
{
	static const char *const iter[] = {"before iteration ", "iteration ",
					   "verifying iteration "};
	static const char fill[] = "filling the inputs: member ";
	char head[80];
	size_t len;

	if (detail == NULL)
		return 0;
	len = (size_t)snprintf(head, sizeof(head),
			       "the run did not finish within %g s (", timeout);
	if (strncmp(detail, head, len) != 0)
		return 0;
	detail += len;
	if (strncmp(detail, fill, sizeof(fill) - 1) == 0)
		return timeout_count_ok(detail + sizeof(fill) - 1, members);
	for (size_t i = 0; i < sizeof(iter) / sizeof(iter[0]); i++)
		if (strncmp(detail, iter[i], strlen(iter[i])) == 0)
			return timeout_count_ok(detail + strlen(iter[i]),
						iterations);
	return 0;
}

#endif /* TIMEOUTS_H */
