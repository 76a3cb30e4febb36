/*
 * driver.c - the one run loop (driver.h).  Per iteration: whether the
 * deadline has passed (agreed between processes, with whether the times'
 * array could grow), the reset (not timed), the iteration, its time, its
 * verification when the run's verify says so, progress, and whether any
 * process found an error (later iterations would only repeat it).  At the
 * end the errors are collected, the timeout's message is added, and the
 * report gets the times, the total and the verdict.
 */
#define TOPO_INTERNAL
#include "run/driver.h"

#include <limits.h>
#include <stdio.h>

/* The phase a timeout names (enum topo__stop). */
static const char *const stop_phase[] = {"", "verifying iteration", "iteration",
					 "before iteration",
					 "filling the inputs"};

void topo__drive_init(struct topo__drive *d, const struct topo_run_params *q)
{
	d->q = q;
	d->iterations = q->iterations > 0 ? q->iterations : 1;
	d->timeout = q->timeout > 0 ? q->timeout : TOPO__RUN_DEFAULT_TIMEOUT;
	if (d->timeout > TOPO__RUN_MAX_TIMEOUT)
		d->timeout = TOPO__RUN_MAX_TIMEOUT;
	d->deadline = topo__now() + d->timeout - q->elapsed;
}

void topo__drive_free(struct topo__drive *d)
{
	topo__free(d->seconds);
	d->seconds = NULL;
	d->nseconds = d->seconds_cap = 0;
}

/* Room for one more time: 0, or 1 when there is no memory for it.  Grown
 * as iterations complete: a run asked for 2^31 - 1 iterations and ended by
 * its timeout must not reserve 16 GiB up front. */
static int grow_seconds(struct topo__drive *d)
{
	int cap;
	double *more;

	if (d->nseconds < d->seconds_cap)
		return 0;
	if (d->seconds_cap == 0)
		cap = d->iterations < 1024 ? d->iterations : 1024;
	else
		cap =
		    d->seconds_cap > INT_MAX / 2 ? INT_MAX : 2 * d->seconds_cap;
	more = topo__realloc(d->seconds, (size_t)cap * sizeof(double));
	if (more == NULL)
		return 1;
	d->seconds = more;
	d->seconds_cap = cap;
	return 0;
}

static int agree(struct topo__drive *d, int64_t *v, int n, bool sum,
		 topo_error *err)
{
	return d->ops->agree != NULL ? d->ops->agree(d->ctx, v, n, sum, err)
				     : 0;
}

/* Iteration it, from the deadline's check to the verification.  Returns
 * < 0 (err set), 0 to go on, 1 to stop (*why says whether by the
 * deadline). */
static int one_iteration(struct topo__drive *d, int it, enum topo__stop *why,
			 topo_error *err)
{
	const struct topo__drive_ops *o = d->ops;
	int64_t v[2] = {*why, 0};
	double seconds = 0;
	bool timed_out = false;
	int w;

	if (v[0] == TOPO__STOP_NONE && topo__now() >= d->deadline)
		v[0] = TOPO__STOP_BEFORE;
	v[1] = grow_seconds(d);
	/* Starting together; and whether anyone is out of time or memory. */
	w = agree(d, v, 2, false, err);
	if (w < 0)
		return w;
	if (v[1] != 0)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory recording the time of "
				 "iteration %d",
				 it + 1);
	*why = (enum topo__stop)v[0];
	if (*why != TOPO__STOP_NONE)
		return 1;
	w = o->reset(d->ctx, it, err);
	if (w != 0) {
		*why = TOPO__STOP_BEFORE;
		return w;
	}
	w = o->iterate(d->ctx, it, &seconds, err);
	if (w != 0) {
		*why = w == 1 ? TOPO__STOP_ITER : TOPO__STOP_NONE;
		return w < 0 ? w : 1;
	}
	d->seconds[d->nseconds++] = seconds;
	v[0] = 0;
	if (topo__run_verifies(d->q, it, d->iterations))
		v[0] = o->verify(d->ctx, it, &timed_out);
	v[1] = timed_out;
	w = agree(d, v, 2, true, err);
	if (w < 0)
		return w;
	if (v[1] > 0) {
		*why = TOPO__STOP_VERIFY;
		return 1;
	}
	if (d->lead && d->q->progress != NULL &&
	    topo__now() >= d->next_progress) {
		d->next_progress = topo__now() + d->progress_every;
		d->q->progress(d->q->progress_ctx, "running", it + 1,
			       d->iterations);
	}
	/* Later iterations would only repeat the same faults. */
	v[0] = v[0] > 0 || o->faults(d->ctx) > 0;
	w = agree(d, v, 1, false, err);
	return w < 0 ? w : v[0] != 0;
}

/* The timeout's message, on the lead process. */
static void report_stop(struct topo__drive *d, enum topo__stop why, int it,
			int64_t member)
{
	if (why == TOPO__STOP_INPUTS && member >= 0)
		topo__report_add(d->r, -1, "timeout",
				 "the run did not finish within %g s (filling "
				 "the inputs: member %lld of %d)",
				 d->timeout, (long long)member,
				 (int)d->members);
	else if (why == TOPO__STOP_INPUTS)
		topo__report_add(d->r, -1, "timeout",
				 "the run did not finish within %g s (%s)",
				 d->timeout, stop_phase[why]);
	else
		topo__report_add(d->r, -1, "timeout",
				 "the run did not finish within %g s (%s %d "
				 "of %d)",
				 d->timeout, stop_phase[why], it + 1,
				 d->iterations);
}

int topo__drive(struct topo__drive *d, topo_error *err)
{
	enum topo__stop why = TOPO__STOP_NONE;
	int64_t member = -1, total = 0;
	int it, rc = 0;

	if (d->ops->fill != NULL)
		rc = d->ops->fill(d->ctx, &member, err);
	else if (topo__now() >= d->deadline)
		rc = 1;
	if (rc < 0)
		return rc;
	if (rc == 1)
		why = TOPO__STOP_INPUTS;
	for (it = 0; it < d->iterations; it++) {
		rc = one_iteration(d, it, &why, err);
		if (rc < 0)
			return rc;
		if (rc != 0)
			break;
	}
	if (d->ops->collect != NULL) {
		rc = d->ops->collect(d->ctx, &total, err);
		if (rc < 0)
			return rc;
	} else {
		total = d->ops->faults(d->ctx);
	}
	if (why != TOPO__STOP_NONE) {
		if (d->lead)
			report_stop(d, why, it, member);
		total++;
	}
	topo__report_finish(d->r, d->seconds, d->nseconds, total,
			    total == 0 && d->nseconds == d->iterations);
	return 0;
}
