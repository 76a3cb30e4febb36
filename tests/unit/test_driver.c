/*
 * test_driver.c - the run driver (libtopo/run/driver.c) on its own, with
 * fake ops: no plan, no threads, no clock but the deadline each case sets
 * (already past, or a day away), so that nothing depends on how fast the
 * machine is.  Covered: the timeout's message in each phase (filling the
 * inputs, with and without the member reached; before an iteration, from
 * the deadline or the reset; an iteration; verifying one), the verify
 * cadence (every iteration, or the last), the times' array growing past
 * its first 1024 and their summary, the stop after an iteration that found
 * errors or failed, agreement and collection, progress on the lead
 * process only, and running out of memory while recording a time.
 */
#define TOPO_INTERNAL
#include "alloc_hook.h"
#include "run/driver.h"

#include "check.h"

/* What the fake ops do and saw. */
struct fake {
	struct topo__drive *d;
	int fill_rc;	     /* fill's return (its member: 5) */
	int deadline_before; /* the deadline passes before this iteration (from
				1) */
	int reset_late;	     /* reset says the deadline came, here */
	int iterate_rc_at;   /* iterate returns iterate_rc here */
	int iterate_rc;
	int verify_late;      /* verification times out here */
	int verify_errors_at; /* verification finds 1 error here */
	int64_t faults;	      /* recorded errors so far */
	int resets, iterates, verifies, agrees, collects, progresses;
	int verified[8]; /* the iterations verified, the first 8 */
	int64_t collect_total;
};

static int fill_op(void *ctx, int64_t *member, topo_error *err)
{
	struct fake *f = ctx;

	(void)err;
	*member = 5;
	return f->fill_rc;
}

static int agree_op(void *ctx, int64_t *v, int n, bool sum, topo_error *err)
{
	struct fake *f = ctx;

	(void)v;
	(void)n;
	(void)sum;
	(void)err;
	f->agrees++;
	return 0;
}

static int reset_op(void *ctx, int it, topo_error *err)
{
	struct fake *f = ctx;

	(void)err;
	f->resets++;
	return it == f->reset_late;
}

static int iterate_op(void *ctx, int it, double *seconds, topo_error *err)
{
	struct fake *f = ctx;

	(void)err;
	f->iterates++;
	*seconds = it;
	if (it + 2 == f->deadline_before)
		f->d->deadline = topo__now() - 1;
	if (it == f->iterate_rc_at) {
		if (f->iterate_rc == 2) {
			topo__report_add(f->d->r, 3, "failed", "message 0");
			f->faults++;
		}
		return f->iterate_rc;
	}
	return 0;
}

static int64_t verify_op(void *ctx, int it, bool *timed_out)
{
	struct fake *f = ctx;

	if (f->verifies < 8)
		f->verified[f->verifies] = it;
	f->verifies++;
	*timed_out = it == f->verify_late;
	if (it != f->verify_errors_at)
		return 0;
	topo__report_add(f->d->r, 1, "wrong data", "member 1");
	f->faults++;
	return 1;
}

static int64_t faults_op(void *ctx)
{
	return ((struct fake *)ctx)->faults;
}

static int collect_op(void *ctx, int64_t *total, topo_error *err)
{
	struct fake *f = ctx;

	(void)err;
	f->collects++;
	*total = f->collect_total;
	return 0;
}

static void progress(void *ctx, const char *phase, int64_t done, int64_t total)
{
	struct fake *f = ctx;

	(void)phase;
	(void)done;
	(void)total;
	f->progresses++;
}

static const struct topo__drive_ops ops = {
    .fill = fill_op,
    .reset = reset_op,
    .iterate = iterate_op,
    .verify = verify_op,
    .faults = faults_op,
};

/* A fake that does nothing unusual. */
static void fake_init(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->deadline_before = f->reset_late = f->iterate_rc_at = -1;
	f->verify_late = f->verify_errors_at = -1;
}

/* Runs `iterations` with o (NULL: ops) and f, the deadline a day away
 * unless past; returns the driver's rc, *out the report. */
static int drive(struct fake *f, const struct topo__drive_ops *o,
		 int iterations, int verify, bool past, topo_report **out,
		 topo_error *err)
{
	struct topo_run_params q;
	struct topo__drive d;
	int rc;

	memset(&d, 0, sizeof(d));
	topo_run_params_init(&q, sizeof(q));
	q.iterations = iterations;
	q.timeout = 2;
	q.verify = verify;
	q.progress = progress;
	q.progress_ctx = f;
	topo__drive_init(&d, &q);
	d.deadline = past ? topo__now() - 1 : topo__now() + 86400;
	d.ops = o != NULL ? o : &ops;
	d.ctx = f;
	d.r = topo__report_alloc(1);
	d.lead = true;
	d.members = 12;
	f->d = &d;
	rc = d.r != NULL ? topo__drive(&d, err) : TOPO_ENOMEM;
	topo__drive_free(&d);
	if (rc != 0) {
		topo_report_free(d.r);
		d.r = NULL;
	}
	*out = d.r;
	return rc;
}

/* r's only error: a timeout saying `text`. */
static void check_timeout(const topo_report *r, const char *text)
{
	const char *kind = NULL, *detail = NULL;

	CHECK_INT(topo_report_error_count(r), 1);
	CHECK_INT(topo_report_error_total(r), 1);
	CHECK_INT(topo_report_error(r, 0, &kind, &detail), -1);
	CHECK_STR(kind, "timeout");
	CHECK_STR(detail, text);
	CHECK(!topo_report_verified(r), "a run that timed out is verified");
}

static void test_timeouts(void)
{
	topo_error err = {0};
	struct topo__drive_ops no_fill = ops;
	struct fake f;
	topo_report *r;

	/* while filling, at member 5 */
	fake_init(&f);
	f.fill_rc = 1;
	CHECK_INT(drive(&f, NULL, 3, TOPO_VERIFY_EVERY, false, &r, &err), 0);
	check_timeout(r, "the run did not finish within 2 s (filling the "
			 "inputs: member 5 of 12)");
	CHECK_INT(topo_report_iterations(r), 0);
	CHECK_INT(f.resets, 0);
	topo_report_free(r);

	/* no fill of its own, the deadline already past */
	fake_init(&f);
	no_fill.fill = NULL;
	CHECK_INT(drive(&f, &no_fill, 3, TOPO_VERIFY_EVERY, true, &r, &err), 0);
	check_timeout(r, "the run did not finish within 2 s (filling the "
			 "inputs)");
	CHECK_INT(f.resets, 0);
	topo_report_free(r);

	/* the deadline passes during iteration 2: before iteration 3 */
	fake_init(&f);
	f.deadline_before = 3;
	CHECK_INT(drive(&f, NULL, 10, TOPO_VERIFY_EVERY, false, &r, &err), 0);
	check_timeout(r, "the run did not finish within 2 s (before "
			 "iteration 3 of 10)");
	CHECK_INT(topo_report_iterations(r), 2);
	topo_report_free(r);

	/* the reset of iteration 4 finds it */
	fake_init(&f);
	f.reset_late = 3;
	CHECK_INT(drive(&f, NULL, 10, TOPO_VERIFY_EVERY, false, &r, &err), 0);
	check_timeout(r, "the run did not finish within 2 s (before "
			 "iteration 4 of 10)");
	CHECK_INT(topo_report_iterations(r), 3);
	CHECK_INT(f.iterates, 3);
	topo_report_free(r);

	/* during iteration 2 */
	fake_init(&f);
	f.iterate_rc_at = 1;
	f.iterate_rc = 1;
	CHECK_INT(drive(&f, NULL, 5, TOPO_VERIFY_EVERY, false, &r, &err), 0);
	check_timeout(r, "the run did not finish within 2 s (iteration 2 "
			 "of 5)");
	CHECK_INT(topo_report_iterations(r), 1);
	CHECK_INT(f.verifies, 1);
	topo_report_free(r);

	/* verifying iteration 1 */
	fake_init(&f);
	f.verify_late = 0;
	CHECK_INT(drive(&f, NULL, 4, TOPO_VERIFY_EVERY, false, &r, &err), 0);
	check_timeout(r, "the run did not finish within 2 s (verifying "
			 "iteration 1 of 4)");
	CHECK_INT(topo_report_iterations(r), 1);
	topo_report_free(r);
}

static void test_cadence(void)
{
	topo_error err = {0};
	struct fake f;
	topo_report *r;

	fake_init(&f);
	CHECK_INT(drive(&f, NULL, 5, TOPO_VERIFY_EVERY, false, &r, &err), 0);
	CHECK_INT(f.verifies, 5);
	for (int i = 0; i < 5; i++)
		CHECK_INT(f.verified[i], i);
	CHECK(topo_report_verified(r), "a clean run is not verified");
	CHECK_INT(topo_report_iterations(r), 5);
	/* progress after every iteration, at most every 0 s */
	CHECK_INT(f.progresses, 5);
	topo_report_free(r);

	fake_init(&f);
	CHECK_INT(drive(&f, NULL, 5, TOPO_VERIFY_LAST, false, &r, &err), 0);
	CHECK_INT(f.verifies, 1);
	CHECK_INT(f.verified[0], 4);
	CHECK(topo_report_verified(r), "a clean run is not verified");
	topo_report_free(r);
}

/* More than the first 1024 times, each kept: iteration i takes i s. */
static void test_seconds(void)
{
	topo_error err = {0};
	struct fake f;
	topo_report *r;
	double min, median, max;

	fake_init(&f);
	CHECK_INT(drive(&f, NULL, 3001, TOPO_VERIFY_LAST, false, &r, &err), 0);
	CHECK_INT(topo_report_iterations(r), 3001);
	topo_report_seconds(r, &min, &median, &max);
	CHECK(min == 0 && median == 1500 && max == 3000,
	      "seconds %g %g %g, want 0 1500 3000", min, median, max);
	topo_report_free(r);

	/* no memory to grow past 1024: the report's two allocations, then
	 * the first 1024, then the growth fails */
	fake_init(&f);
	topo__alloc_fail_after(3);
	CHECK_INT(drive(&f, NULL, 3001, TOPO_VERIFY_LAST, false, &r, &err),
		  TOPO_ENOMEM);
	topo__alloc_fail_after(-1);
	CHECK(r == NULL, "a failed run gave a report");
	CHECK_STR(err.text, "out of memory recording the time of iteration "
			    "1025");
	CHECK_INT(f.iterates, 1024);
}

/* Errors found or a failure end the run after their iteration. */
static void test_stops(void)
{
	topo_error err = {0};
	struct topo__drive_ops several = ops;
	struct fake f;
	topo_report *r;

	fake_init(&f);
	f.verify_errors_at = 1;
	CHECK_INT(drive(&f, NULL, 6, TOPO_VERIFY_EVERY, false, &r, &err), 0);
	CHECK_INT(f.iterates, 2);
	CHECK_INT(topo_report_iterations(r), 2);
	CHECK_INT(topo_report_error_total(r), 1);
	CHECK(!topo_report_verified(r), "a run with errors is verified");
	topo_report_free(r);

	fake_init(&f);
	f.iterate_rc_at = 2;
	f.iterate_rc = 2;
	CHECK_INT(drive(&f, NULL, 6, TOPO_VERIFY_EVERY, false, &r, &err), 0);
	CHECK_INT(f.iterates, 3);
	CHECK_INT(f.verifies, 2);
	CHECK_INT(topo_report_iterations(r), 2);
	CHECK_INT(topo_report_error_count(r), 1);
	CHECK(!topo_report_verified(r), "a failed run is verified");
	topo_report_free(r);

	/* Several processes: three agreements an iteration, the total
	 * collected, and a process that does not lead reports nothing. */
	fake_init(&f);
	several.agree = agree_op;
	several.collect = collect_op;
	f.collect_total = 7;
	CHECK_INT(drive(&f, &several, 4, TOPO_VERIFY_EVERY, false, &r, &err),
		  0);
	CHECK_INT(f.agrees, 12);
	CHECK_INT(f.collects, 1);
	CHECK_INT(topo_report_error_total(r), 7);
	CHECK(!topo_report_verified(r), "errors elsewhere, yet verified");
	topo_report_free(r);
}

static void test_not_lead(void)
{
	struct topo_run_params q;
	topo_error err = {0};
	struct topo__drive d;
	struct fake f;

	fake_init(&f);
	memset(&d, 0, sizeof(d));
	topo_run_params_init(&q, sizeof(q));
	q.iterations = 3;
	q.progress = progress;
	q.progress_ctx = &f;
	topo__drive_init(&d, &q);
	d.deadline = topo__now() - 1; /* times out: the lead says so */
	d.ops = &ops;
	d.ctx = &f;
	d.r = topo__report_alloc(1);
	f.d = &d;
	f.fill_rc = 1;
	CHECK(d.r != NULL, "no report");
	if (d.r == NULL)
		return;
	CHECK_INT(topo__drive(&d, &err), 0);
	CHECK_INT(topo_report_error_count(d.r), 0);
	CHECK_INT(topo_report_error_total(d.r), 1);
	CHECK_INT(f.progresses, 0);
	topo__drive_free(&d);
	topo_report_free(d.r);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	CHECK_RUN(timeouts, test_timeouts());
	CHECK_RUN(cadence, test_cadence());
	CHECK_RUN(seconds, test_seconds());
	CHECK_RUN(stops, test_stops());
	CHECK_RUN(not_lead, test_not_lead());
	return check_done("test_driver");
}
