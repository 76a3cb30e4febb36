/*
 * driver.h - the one run loop (driver.c) of both ways of running a plan:
 * in this process over a transport (exec.c) and across the processes of
 * an MPI job (libtopo/mpi/exec_mpi.c).  The driver owns what they share:
 * the iterations, the deadline, the times of the iterations, which
 * iterations are verified, progress, and the timeout's message; each fills
 * an ops table with what it does its own way.
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_RUN_DRIVER_H
#define TOPO_RUN_DRIVER_H

#include "run/report.h"

/* Deadlines further away than this (about 31 years) are "never". */
#define TOPO__RUN_MAX_TIMEOUT 1e9
#define TOPO__RUN_DEFAULT_TIMEOUT 60.0

/* Why a run stopped before its last iteration, by the deadline; in the
 * order in which processes that disagree settle on one (the largest). */
enum topo__stop {
	TOPO__STOP_NONE,
	TOPO__STOP_VERIFY, /* verifying iteration K */
	TOPO__STOP_ITER,   /* iteration K */
	TOPO__STOP_BEFORE, /* before iteration K */
	TOPO__STOP_INPUTS  /* filling the inputs */
};

/*
 * What a way of running does its own way.  Every function gets the
 * driver's ctx.  Those that can fail return a negative topo_errc with err
 * set.  When the run has several processes, the results of iterate and
 * agree are the same on every process (iterate agrees on its own).
 */
struct topo__drive_ops {
	/* Fills the inputs under the deadline.  Returns 0, 1 when the
	 * deadline came first (*member: the member, from 1, being filled
	 * then; left at -1 to name none), or < 0.  NULL: the inputs are
	 * filled already, and the deadline is only checked. */
	int (*fill)(void *ctx, int64_t *member, topo_error *err);
	/* Combines v[0 .. n - 1] with the other processes' (the maximum, or
	 * the sum when `sum`); NULL for a run of one process. */
	int (*agree)(void *ctx, int64_t *v, int n, bool sum, topo_error *err);
	/* Makes the buffers ready for iteration it (not timed): 0, 1 when
	 * the deadline came (then the run stops before it; a run of several
	 * processes must not return 1), or < 0. */
	int (*reset)(void *ctx, int it, topo_error *err);
	/* Runs iteration it, its time (the slowest process's) into
	 * *seconds.  Returns 0; 1 when the deadline came; 2 when the run
	 * failed (the failure recorded in the report); or < 0. */
	int (*iterate)(void *ctx, int it, double *seconds, topo_error *err);
	/* Verifies iteration it; returns the errors found (recorded by
	 * the ctx), *timed_out set when the deadline came first. */
	int64_t (*verify)(void *ctx, int it, bool *timed_out);
	/* The errors this process has recorded so far. */
	int64_t (*faults)(void *ctx);
	/* After the last iteration: the errors of every process into the
	 * report, *total their number in all.  NULL: faults(). */
	int (*collect)(void *ctx, int64_t *total, topo_error *err);
};

struct topo__drive {
	const struct topo__drive_ops *ops;
	void *ctx;
	topo_report *r;
	/* the caller's parameters, read (topo__run_params_read) */
	const struct topo_run_params *q;
	/* from topo__drive_init */
	int iterations;
	double timeout, deadline;
	/* This process reports progress and the timeout (one per run). */
	bool lead;
	/* Between progress reports in seconds (0: after every iteration),
	 * and when the next is due: the verification's progress shares it
	 * (struct topo__verify_time's next). */
	double progress_every, next_progress;
	int32_t members; /* the plan's, for the timeout's message */
	/* the times of the iterations run, grown as they complete */
	double *seconds;
	int nseconds, seconds_cap;
};

/* Sets d's iterations, timeout and deadline from q (its defaults and
 * limits), the clock starting now. */
void topo__drive_init(struct topo__drive *d, const struct topo_run_params *q);

/* Runs the iterations and finishes d->r.  Returns 0 (the report holds the
 * run's errors and times) or < 0 with err set. */
int topo__drive(struct topo__drive *d, topo_error *err);

/* Frees what topo__drive allocated (not the report). */
void topo__drive_free(struct topo__drive *d);

#endif /* TOPO_RUN_DRIVER_H */
