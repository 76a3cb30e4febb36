/*
 * exec_mpi.c - running a plan across the processes of an MPI job
 * (topo_mpi.h), over the plan's two-sided schedules (sched.c).
 *
 * Each process builds its own host's schedule and holds the buffers of its
 * members only.  The iterations are the run driver's (run/driver.c), with
 * this file's ops: per iteration the processes agree on starting (an
 * allreduce that also says whether any process ran out of time), each
 * resets what the last one wrote, then runs the schedule (engine.c, with
 * receipt counters and a barrier's knowledge kept); its time is the
 * slowest process's.  Then every process verifies its own members
 * (verify.c, with `mine`), and the errors, their total and the verdict
 * are agreed (allreduce) and gathered to rank 0.
 *
 * The traffic goes over a duplicate of the caller's communicator, so it
 * never matches the caller's own messages.
 */
#define TOPO_INTERNAL
#include "engine.h"
#include "plan/plan.h"
#include "plan_memory.h"
#include "run/driver.h"
#include "topo_mpi.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Errors each process keeps to send to rank 0 (all are counted). */
#define MAX_ERRORS 1000
/* Buffer and staging alignment (the reduction kernels vectorise). */
#define ALIGN 64

struct xm {
	struct topo__mx e; /* the engine, over this process's buffers */
	const struct topo_plan *p;
	MPI_Comm comm;
	int rank, size;
	unsigned char *arena; /* the members' buffers */
	/* rank 0's gathering of the errors ([size]) */
	int *counts, *displs;
	struct topo__sched *s; /* this host's schedule */
	topo_report *r;
	double deadline; /* topo__now() seconds */
};

static unsigned char *buffer(struct xm *x, int32_t r, int b)
{
	return topo__mx_buffer(&x->e, r, b);
}

/* The verifier counts every error itself: only keep what it reports. */
static void verify_report(void *ctx, const struct topo__verify_error *v)
{
	struct xm *x = ctx;
	struct topo__mx_error *e;

	if (x->e.nerr >= MAX_ERRORS)
		return;
	e = &x->e.err[x->e.nerr++];
	e->endpoint = v->rank >= 0 ? x->e.members[v->rank] : -1;
	snprintf(e->kind, sizeof(e->kind), "%s", v->kind);
	snprintf(e->detail, sizeof(e->detail), "%s", v->detail);
}

static unsigned char *verify_buffer(void *ctx, int32_t r, int kind)
{
	return buffer(ctx, r, kind);
}

/* ---------------------------------------------------------------------- */
/* Agreement */

/* Makes a failure of one process the failure of all: every process calls
 * it with its own rc (0: fine); the lowest rank that failed tells the
 * others its code and text, "process K: " before the text unless every
 * process failed.  Returns that code (0 when none failed). */
static int agree(MPI_Comm comm, int rank, int size, int rc, topo_error *err)
{
	struct {
		int code;
		char text[sizeof(err->text)];
	} msg;
	int me = rc != 0 ? rank : size, first = size, failed = rc != 0, all = 0;

	if (PMPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm) !=
		MPI_SUCCESS ||
	    PMPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, comm) !=
		MPI_SUCCESS)
		return topo__err(err, TOPO_EIO, NULL, NULL,
				 "MPI_Allreduce failed");
	if (first == size)
		return 0;
	memset(&msg, 0, sizeof(msg));
	if (rank == first) {
		msg.code = rc;
		snprintf(msg.text, sizeof(msg.text), "%s", err->text);
	}
	if (PMPI_Bcast(&msg, (int)sizeof(msg), MPI_BYTE, first, comm) !=
	    MPI_SUCCESS)
		return topo__err(err, TOPO_EIO, NULL, NULL, "MPI_Bcast failed");
	/* the first error of a record is the one kept: this one replaces
	 * the process's own */
	topo_error_clear(err);
	if (all == size)
		return topo__err(err, msg.code, NULL, NULL, "%s", msg.text);
	return topo__err(err, msg.code, NULL, NULL, "process %d: %s", first,
			 msg.text);
}

/* ---------------------------------------------------------------------- */
/* Setting up */

static int64_t round_up(int64_t v)
{
	return (v + ALIGN - 1) / ALIGN * ALIGN;
}

/* The host's members, their buffers, the run's state.  Only this
 * process's checks: the caller agrees on the result. */
static int setup(struct xm *x, const struct topo__sched *s, const int32_t *host,
		 topo_error *err)
{
	const struct topo_plan *p = x->p;
	struct topo__memory_need need = {0, 0, 0};
	int64_t bytes = 0, nlocal = 0;
	int rc;

	for (int32_t i = 0; i < p->n; i++)
		if (host[i] == x->rank) {
			nlocal++;
			for (int b = 0; b < TOPO__NBUF; b++)
				bytes += round_up(topo__bufsize(p, b, i));
		}
	/* Sizes first, so that a run too big is refused with nothing
	 * allocated. */
	rc = topo__mx_check(p, s, x->comm,
			    p->params.op == TOPO_OP_BARRIER ? (p->n + 63) / 64
							    : 0,
			    &need.buffers, &need.run, err);
	if (rc != 0)
		return rc;
	need.buffers += bytes;
	need.run += nlocal * TOPO__NBUF * (int64_t)sizeof(void *) +
		    MAX_ERRORS * (int64_t)sizeof(struct topo__mx_error);
	rc = topo__memory_check(&need, err);
	if (rc != 0)
		return rc;
	rc = topo__mx_setup(&x->e, p, s, host, x->comm, x->rank, true, true,
			    MAX_ERRORS, false, true, err);
	if (rc != 0)
		return rc;
	/* waiting processes give the CPU away: a job may have more of them
	 * than there are CPUs */
	x->e.yield = 1;
	x->arena = topo__malloc((size_t)bytes + ALIGN);
	x->counts = topo__mallocarray((size_t)x->size, sizeof(int));
	x->displs = topo__mallocarray((size_t)x->size, sizeof(int));
	if (x->arena == NULL || x->counts == NULL || x->displs == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	{
		/* aligned within the arena */
		int64_t pos =
		    (int64_t)((ALIGN - (uintptr_t)x->arena % ALIGN) % ALIGN);

		for (int32_t k = 0; k < x->e.nlocal; k++)
			for (int b = 0; b < TOPO__NBUF; b++) {
				int64_t len =
				    topo__bufsize(p, b, x->e.local[k]);

				x->e.bp[(int64_t)k * TOPO__NBUF + b] =
				    x->arena + pos;
				pos += round_up(len);
			}
	}
	/* Inputs: the same pattern every run fills (verify.c). */
	for (int32_t k = 0; k < x->e.nlocal; k++) {
		int32_t i = x->e.local[k];
		int64_t len = topo__bufsize(p, TOPO__SEND, i);

		if (len > 0)
			topo__pattern_fill(p, i, buffer(x, i, TOPO__SEND),
					   (size_t)len);
	}
	return 0;
}

static void teardown(struct xm *x)
{
	topo__mx_teardown(&x->e);
	topo__free(x->arena);
	topo__free(x->counts);
	topo__free(x->displs);
}

/* ---------------------------------------------------------------------- */
/* Gathering the errors */

/* Every process's errors, in rank order, into rank 0's report (which,
 * short of memory for them all, says so instead).  Returns 0 or TOPO_EIO. */
static int gather_errors(struct xm *x, topo_report *r)
{
	struct topo__mx_error *all = NULL;
	int64_t total = 0;
	int ok = 1, mine;

	if (PMPI_Gather(&x->e.nerr, 1, MPI_INT, x->counts, 1, MPI_INT, 0,
			x->comm) != MPI_SUCCESS)
		return TOPO_EIO;
	if (x->rank == 0) {
		for (int i = 0; i < x->size; i++) {
			x->displs[i] = (int)total;
			x->counts[i] *= (int)sizeof(struct topo__mx_error);
			total += x->counts[i];
		}
		/* at most MAX_ERRORS per process: far below INT_MAX bytes
		 * for any job of fewer than 10,000 processes */
		ok = total <= INT_MAX;
		if (ok) {
			all = topo__malloc((size_t)total + 1);
			ok = all != NULL;
		}
	}
	/* Whether rank 0 takes them: else nobody sends. */
	if (PMPI_Bcast(&ok, 1, MPI_INT, 0, x->comm) != MPI_SUCCESS) {
		topo__free(all);
		return TOPO_EIO;
	}
	if (!ok) {
		if (x->rank == 0)
			topo__report_error(r, -1, "error",
					   "the errors of the other processes "
					   "could not be gathered (memory)");
		return 0;
	}
	mine = x->e.nerr * (int)sizeof(struct topo__mx_error);
	if (PMPI_Gatherv(x->e.err, mine, MPI_BYTE, all, x->counts, x->displs,
			 MPI_BYTE, 0, x->comm) != MPI_SUCCESS) {
		topo__free(all);
		return TOPO_EIO;
	}
	for (int64_t i = 0; x->rank == 0 && i < total / (int64_t)sizeof(*all);
	     i++) {
		all[i].kind[sizeof(all[i].kind) - 1] = '\0';
		all[i].detail[sizeof(all[i].detail) - 1] = '\0';
		topo__report_error(r, all[i].endpoint, all[i].kind,
				   all[i].detail);
	}
	topo__free(all);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The run driver's ops (run/driver.h) */

static int agree_op(void *ctx, int64_t *v, int n, bool sum, topo_error *err)
{
	struct xm *x = ctx;
	int64_t all[2];

	if (PMPI_Allreduce(v, all, n, MPI_INT64_T, sum ? MPI_SUM : MPI_MAX,
			   x->comm) != MPI_SUCCESS)
		return topo__err(err, TOPO_EIO, NULL, NULL,
				 "an MPI collective call failed");
	memcpy(v, all, (size_t)n * sizeof(*v));
	return 0;
}

/* What the last iteration wrote is poisoned again, and the engine reset. */
static int reset_op(void *ctx, int it, topo_error *err)
{
	struct xm *x = ctx;
	const struct topo_plan *p = x->p;

	(void)it;
	(void)err;
	for (int32_t k = 0; k < x->e.nlocal; k++)
		for (int b = TOPO__RECV; b <= TOPO__WORK; b++) {
			int64_t len = topo__bufsize(p, b, x->e.local[k]);

			if (len > 0)
				memset(buffer(x, x->e.local[k], b),
				       TOPO__POISON, (size_t)len);
		}
	topo__mx_reset(&x->e);
	return 0;
}

/* The schedule run, its time the slowest process's; whether anyone ran
 * out of time or failed, agreed here. */
static int iterate_op(void *ctx, int it, double *seconds, topo_error *err)
{
	struct xm *x = ctx;
	double t0, t1, local[3], all[3];
	int w;

	t0 = topo__now();
	w = topo__mx_run(&x->e, x->deadline);
	t1 = topo__now();
	local[0] = t1 - t0;
	local[1] = w == 1;
	local[2] = w < 0;
	if (PMPI_Allreduce(local, all, 3, MPI_DOUBLE, MPI_MAX, x->comm) !=
	    MPI_SUCCESS) {
		/* nothing to agree with: the requests given up here, before
		 * their buffers go */
		topo__mx_abandon(&x->e);
		return topo__err(err, TOPO_EIO, NULL, NULL,
				 "an MPI collective call failed");
	}
	/* Someone gave up: every process ends the run together, so that no
	 * message of it is left in MPI (a library may print a warning of
	 * each at MPI_Finalize, on standard output). */
	if ((all[1] > 0 || all[2] > 0) && topo__mx_quiesce(&x->e) != 0) {
		topo__mx_abandon(&x->e); /* what quiesce left */
		all[2] = 1;
	}
	if (all[2] > 0) {
		/* An MPI call or a message failed somewhere: that process
		 * recorded why. */
		if (x->e.mpi_rc != MPI_SUCCESS) {
			char text[MPI_MAX_ERROR_STRING];
			int len = 0;

			PMPI_Error_string(x->e.mpi_rc, text, &len);
			topo__mx_error(&x->e, -1, "failed",
				       "process %d: an MPI call failed in "
				       "iteration %d: %s",
				       x->rank, it + 1, text);
		}
		return 2;
	}
	*seconds = all[0];
	return all[1] > 0;
}

static int64_t verify_op(void *ctx, int it, bool *timed_out)
{
	struct xm *x = ctx;
	struct topo__verify_time vt = {x->deadline, NULL, NULL, 0,
				       false,	    0,	  0,	x->e.mine,
				       NULL,	    NULL, NULL};
	int64_t n;

	(void)it;
	n = topo__verify_until(x->p, verify_buffer, x, x->e.slot_count,
			       verify_report, x,
			       (int64_t)(MAX_ERRORS - x->e.nerr), &vt);
	x->e.total += n;
	*timed_out = vt.timed_out;
	return n;
}

static int64_t faults_op(void *ctx)
{
	struct xm *x = ctx;

	return x->e.total;
}

/* Every process's errors into rank 0's report, and their total. */
static int collect_op(void *ctx, int64_t *total, topo_error *err)
{
	struct xm *x = ctx;
	int64_t mine = x->e.total;

	if (PMPI_Allreduce(&mine, total, 1, MPI_INT64_T, MPI_SUM, x->comm) !=
	    MPI_SUCCESS)
		return topo__err(err, TOPO_EIO, NULL, NULL,
				 "MPI_Allreduce failed");
	if (gather_errors(x, x->r) != 0)
		return topo__err(err, TOPO_EIO, NULL, NULL,
				 "gathering the errors failed");
	return 0;
}

static const struct topo__drive_ops mpi_ops = {
    .agree = agree_op,
    .reset = reset_op,
    .iterate = iterate_op,
    .verify = verify_op,
    .faults = faults_op,
    .collect = collect_op,
};

/* ---------------------------------------------------------------------- */

/* What every process's parameters allow, agreed.  Returns 0 or the first
 * failing process's error. */
static int check_run(const topo_plan *p, const struct topo_run_params *params,
		     const int32_t *host, MPI_Comm comm, struct xm *x,
		     struct topo_run_params *q, topo_error *err)
{
	int rc = 0;

	if (p == NULL || host == NULL)
		rc = topo__err(err, TOPO_EARG, NULL, NULL,
			       "topo__run_mpi: plan and hosts are required");
	else if (p->predict_only)
		rc = topo__err(err, TOPO_EARG, NULL, NULL,
			       "the plan was made for prediction only "
			       "(predict_only): it has no buffers to run");
	if (rc == 0)
		rc = topo__run_params_read(q, params, err);
	if (rc == 0 &&
	    (q->iterations < 0 || !(q->timeout >= 0) || !(q->elapsed >= 0)))
		rc = topo__err(err, TOPO_EARG, NULL, NULL,
			       "iterations (%d), timeout (%g) and elapsed (%g) "
			       "must not be negative",
			       q->iterations, q->timeout, q->elapsed);
	return agree(comm, x->rank, x->size, rc, err);
}

/* The run's own communicator, schedule, buffers and report, agreed. */
static int open_run(struct xm *x, const int32_t *host, MPI_Comm comm,
		    topo_error *err)
{
	int rc;

	rc = PMPI_Comm_dup(comm, &x->comm) == MPI_SUCCESS
		 ? 0
		 : topo__err(err, TOPO_EIO, NULL, NULL, "MPI_Comm_dup failed");
	rc = agree(comm, x->rank, x->size, rc, err);
	if (rc != 0)
		return rc;
	PMPI_Comm_set_errhandler(x->comm, MPI_ERRORS_RETURN);
	rc = topo__sched_new(&x->s, x->p, host, x->size, x->rank, err);
	if (rc == 0)
		rc = setup(x, x->s, host, err);
	if (rc == 0) {
		x->r = topo__report_new(x->p, 1);
		if (x->r == NULL)
			rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
				       "out of memory");
	}
	return agree(x->comm, x->rank, x->size, rc, err);
}

int topo__run_mpi(const topo_plan *p, const struct topo_run_params *params,
		  const int32_t *host, MPI_Comm comm, topo_report **out,
		  topo_error *err)
{
	struct topo_run_params q;
	struct topo__drive d;
	struct xm x;
	int rc;

	memset(&x, 0, sizeof(x));
	memset(&d, 0, sizeof(d));
	x.comm = MPI_COMM_NULL;
	*out = NULL;
	if (PMPI_Comm_rank(comm, &x.rank) != MPI_SUCCESS ||
	    PMPI_Comm_size(comm, &x.size) != MPI_SUCCESS)
		return topo__err(err, TOPO_EIO, NULL, NULL,
				 "not an MPI communicator");
	rc = check_run(p, params, host, comm, &x, &q, err);
	if (rc != 0)
		return rc;
	topo__drive_init(&d, &q);
	x.p = p;
	x.deadline = d.deadline;
	rc = open_run(&x, host, comm, err);
	if (rc == 0) {
		d.ops = &mpi_ops;
		d.ctx = &x;
		d.r = x.r;
		/* rank 0 reports, after every iteration */
		d.lead = x.rank == 0;
		d.members = p->n;
		rc = topo__drive(&d, err);
	}
	topo__drive_free(&d);
	teardown(&x);
	topo__sched_free(x.s);
	if (x.comm != MPI_COMM_NULL)
		PMPI_Comm_free(&x.comm);
	if (rc != 0) {
		topo_report_free(x.r);
		return rc;
	}
	*out = x.r;
	return 0;
}
