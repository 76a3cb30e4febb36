/*
 * report.h - a run's report (topo_report_*, report.c), as the runs that
 * fill it see it: the in-process run (exec.c), the MPI run
 * (libtopo/mpi/exec_mpi.c) and the run driver (driver.c).
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_RUN_REPORT_H
#define TOPO_RUN_REPORT_H

#include "plan/plan.h"

/* Errors kept in a report; all of them are counted. */
#define TOPO__REPORT_MAX_ERRORS 1000

struct topo__report_error {
	int32_t endpoint;
	const char *kind; /* static */
	char detail[160];
};

struct topo_report {
	int verified;
	int threads;
	int iterations;		       /* completed */
	int64_t parts;		       /* offered (exec.c's parts), all told */
	int64_t messages[2], bytes[2]; /* shm, net */
	double min, median, max;
	size_t nerr;
	int64_t total;
	struct topo__report_error *err; /* [TOPO__REPORT_MAX_ERRORS] */
};

/* An empty report of a run on `threads` threads, its traffic not yet
 * counted (the in-process run counts it in its own pass over the plan);
 * NULL: no memory. */
topo_report *topo__report_alloc(int threads);

/* Records an error (counted in r->total; its text kept while there is
 * room); kind must be a static string. */
void topo__report_add(topo_report *r, int32_t endpoint, const char *kind,
		      const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* Reports made by a run outside topo_plan_run, for the MPI transport
 * (libtopo/mpi/): a report of p's messages and bytes (NULL: no memory); an
 * error (kind one of the verifier's, "timeout", "failed", or else kept as
 * "error"; counted in the total until topo__report_finish sets it); the
 * times of n iterations (sorted in place), the total of errors found and
 * the verdict. */
topo_report *topo__report_new(const struct topo_plan *p, int threads);
/* The parts a run's iterations offered (exec.c), all told (tests). */
int64_t topo__report_parts(const topo_report *r);
void topo__report_error(topo_report *r, int32_t endpoint, const char *kind,
			const char *detail);
void topo__report_finish(topo_report *r, double *seconds, int n, int64_t total,
			 bool verified);

/* Adds message m to messages[] and bytes[] by whether both ends share a
 * node (index 0) or not (1); a local step (src == dst) is not a transport
 * message.  Reads the machine's tables directly: it runs for every
 * message of the plan, tens of millions at the largest scales. */
static inline void topo__traffic_of(const struct topo_plan *p,
				    const struct topo__msg *m,
				    int64_t messages[2], int64_t bytes[2])
{
	const topo_group *g = p->t->g;
	const int32_t *members = g->members, *task_node = g->m->task_node;
	int32_t eps = g->m->eps_per_task, a, b;
	int net;

	if (m->src == m->dst)
		return;
	a = members[m->src];
	b = members[m->dst];
	if (eps != 1) {
		a /= eps;
		b /= eps;
	}
	net = task_node[a] != task_node[b];
	messages[net]++;
	bytes[net] += m->len;
}

#endif /* TOPO_RUN_REPORT_H */
