/*
 * report.c - a run's report (topo_report_*): its traffic, its errors (the
 * first TOPO__REPORT_MAX_ERRORS kept, all counted), the times of its
 * iterations and its verdict.  The in-process run (exec.c) and the MPI
 * run (libtopo/mpi/exec_mpi.c) fill it through the run driver (driver.c).
 */
#define TOPO_INTERNAL
#include "run/report.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

topo_report *topo__report_alloc(int threads)
{
	topo_report *r = topo__calloc(1, sizeof(*r));

	if (r == NULL)
		return NULL;
	r->err = topo__mallocarray(TOPO__REPORT_MAX_ERRORS, sizeof(*r->err));
	if (r->err == NULL) {
		topo__free(r);
		return NULL;
	}
	r->threads = threads;
	return r;
}

void topo__report_add(topo_report *r, int32_t endpoint, const char *kind,
		      const char *fmt, ...)
{
	struct topo__report_error *e;
	va_list ap;

	r->total++;
	if (r->nerr >= TOPO__REPORT_MAX_ERRORS)
		return;
	e = &r->err[r->nerr++];
	e->endpoint = endpoint;
	e->kind = kind;
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
}

static int compare_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* seconds[0..n-1] is sorted in place. */
static void summarise(topo_report *r, double *seconds, int n)
{
	if (n == 0)
		return;
	qsort(seconds, (size_t)n, sizeof(double), compare_double);
	r->min = seconds[0];
	r->max = seconds[n - 1];
	r->median =
	    n % 2 ? seconds[n / 2] : (seconds[n / 2 - 1] + seconds[n / 2]) / 2;
}

void topo_report_free(topo_report *r)
{
	if (r == NULL)
		return;
	topo__free(r->err);
	topo__free(r);
}

int topo_report_verified(const topo_report *r)
{
	return r != NULL && r->verified;
}

int topo_report_threads(const topo_report *r)
{
	return r != NULL ? r->threads : 0;
}

int64_t topo__report_parts(const topo_report *r)
{
	return r->parts;
}

int topo_report_iterations(const topo_report *r)
{
	return r != NULL ? r->iterations : 0;
}

void topo_report_messages(const topo_report *r, int64_t *shm, int64_t *net)
{
	*shm = r != NULL ? r->messages[0] : 0;
	*net = r != NULL ? r->messages[1] : 0;
}

void topo_report_bytes_moved(const topo_report *r, int64_t *shm, int64_t *net)
{
	*shm = r != NULL ? r->bytes[0] : 0;
	*net = r != NULL ? r->bytes[1] : 0;
}

void topo_report_seconds(const topo_report *r, double *min, double *median,
			 double *max)
{
	*min = r != NULL ? r->min : 0;
	*median = r != NULL ? r->median : 0;
	*max = r != NULL ? r->max : 0;
}

size_t topo_report_error_count(const topo_report *r)
{
	return r != NULL ? r->nerr : 0;
}

int64_t topo_report_error_total(const topo_report *r)
{
	return r != NULL ? r->total : 0;
}

int32_t topo_report_error(const topo_report *r, size_t i, const char **kind,
			  const char **detail)
{
	if (r == NULL || i >= r->nerr) {
		if (kind != NULL)
			*kind = NULL;
		if (detail != NULL)
			*detail = NULL;
		return -1;
	}
	if (kind != NULL)
		*kind = r->err[i].kind;
	if (detail != NULL)
		*detail = r->err[i].detail;
	return r->err[i].endpoint;
}

/* For transports that run a plan their own way (exec_mpi.c): a report of
 * p's traffic, and its errors and times. */
topo_report *topo__report_new(const struct topo_plan *p, int threads)
{
	topo_report *r = topo__report_alloc(threads);

	if (r == NULL)
		return NULL;
	for (int64_t i = 0; i < p->nmsg; i++)
		topo__traffic_of(p, &p->msg[i], r->messages, r->bytes);
	return r;
}

/* The kinds of error a report holds: static strings, so that an error
 * that came as text from another process is kept as one of them. */
static const char *const error_kinds[] = {
    "undelivered", "duplicated", "wrong data", "left early",
    "timeout",	   "failed",	 "error"};

void topo__report_error(topo_report *r, int32_t endpoint, const char *kind,
			const char *detail)
{
	const char *k =
	    error_kinds[sizeof(error_kinds) / sizeof(*error_kinds) - 1];

	for (size_t i = 0; i < sizeof(error_kinds) / sizeof(*error_kinds); i++)
		if (strcmp(kind, error_kinds[i]) == 0)
			k = error_kinds[i];
	topo__report_add(r, endpoint, k, "%s", detail);
}

void topo__report_finish(topo_report *r, double *seconds, int n, int64_t total,
			 bool verified)
{
	r->iterations = n;
	r->total = total;
	r->verified = verified;
	summarise(r, seconds, n);
}
