/*
 * exec_mpi.c - running a plan across the processes of an MPI job
 * (topo_mpi.h), over the plan's two-sided schedules (sched.c).
 *
 * Each process builds its own host's schedule and holds the buffers of its
 * members only.  Per iteration: reset what the last one wrote, agree on
 * starting (an allreduce that also says whether any process ran out of
 * time), then run the schedule (engine.c, with receipt counters and a
 * barrier's knowledge kept); its time is the slowest process's.  Then
 * every process verifies its own members (verify.c, with `mine`), and the
 * errors, their total and the verdict are agreed (allreduce) and gathered
 * to rank 0.
 *
 * The traffic goes over a duplicate of the caller's communicator, so it
 * never matches the caller's own messages.
 */
#define TOPO_INTERNAL
#include "engine.h"
#include "exec_internal.h"
#include "plan_memory.h"
#include "topo_mpi.h"

#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Errors each process keeps to send to rank 0 (all are counted). */
#define MAX_ERRORS 1000
#define MAX_TIMEOUT 1e9
#define DEFAULT_TIMEOUT 60.0
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

	if (MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, comm) !=
		MPI_SUCCESS ||
	    MPI_Allreduce(&failed, &all, 1, MPI_INT, MPI_SUM, comm) !=
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
	if (MPI_Bcast(&msg, (int)sizeof(msg), MPI_BYTE, first, comm) !=
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
/* One iteration */

/* What the last iteration wrote is poisoned again, and the engine reset. */
static void reset(struct xm *x)
{
	const struct topo_plan *p = x->p;

	for (int32_t k = 0; k < x->e.nlocal; k++)
		for (int b = TOPO__RECV; b <= TOPO__WORK; b++) {
			int64_t len = topo__bufsize(p, b, x->e.local[k]);

			if (len > 0)
				memset(buffer(x, x->e.local[k], b),
				       TOPO__POISON, (size_t)len);
		}
	topo__mx_reset(&x->e);
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

	if (MPI_Gather(&x->e.nerr, 1, MPI_INT, x->counts, 1, MPI_INT, 0,
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
	if (MPI_Bcast(&ok, 1, MPI_INT, 0, x->comm) != MPI_SUCCESS) {
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
	if (MPI_Gatherv(x->e.err, mine, MPI_BYTE, all, x->counts, x->displs,
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

int topo__run_mpi(const topo_plan *p, const struct topo_run_params *params,
		  const int32_t *host, MPI_Comm comm, topo_report **out,
		  topo_error *err)
{
	struct topo_run_params q;
	struct topo__sched *s = NULL;
	struct xm x;
	topo_report *r = NULL;
	double *seconds = NULL, timeout, deadline;
	int rc, iterations, done_it = 0, stop = 0, world_rank, size;
	int seconds_cap = 0;
	/* why the run stopped early (0: it did not), largest first */
	enum { FINE, T_VERIFY, T_ITER, T_BEFORE, T_INPUTS } why = FINE;
	int why_it = 0;

	memset(&x, 0, sizeof(x));
	x.comm = MPI_COMM_NULL;
	*out = NULL;
	if (MPI_Comm_rank(comm, &world_rank) != MPI_SUCCESS ||
	    MPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return topo__err(err, TOPO_EIO, NULL, NULL,
				 "not an MPI communicator");
	rc = 0;
	if (p == NULL || host == NULL)
		rc = topo__err(err, TOPO_EARG, NULL, NULL,
			       "topo__run_mpi: plan and hosts are required");
	else if (p->predict_only)
		rc = topo__err(err, TOPO_EARG, NULL, NULL,
			       "the plan was made for prediction only "
			       "(predict_only): it has no buffers to run");
	if (rc == 0)
		rc = topo__run_params_read(&q, params, err);
	if (rc == 0 &&
	    (q.iterations < 0 || !(q.timeout >= 0) || !(q.elapsed >= 0)))
		rc = topo__err(err, TOPO_EARG, NULL, NULL,
			       "iterations (%d), timeout (%g) and elapsed (%g) "
			       "must not be negative",
			       q.iterations, q.timeout, q.elapsed);
	rc = agree(comm, world_rank, size, rc, err);
	if (rc != 0)
		return rc;
	iterations = q.iterations > 0 ? q.iterations : 1;
	timeout = q.timeout > 0 ? q.timeout : DEFAULT_TIMEOUT;
	if (timeout > MAX_TIMEOUT)
		timeout = MAX_TIMEOUT;
	deadline = topo__now() + timeout - q.elapsed;

	x.p = p;
	x.rank = world_rank;
	x.size = size;
	rc = MPI_Comm_dup(comm, &x.comm) == MPI_SUCCESS
		 ? 0
		 : topo__err(err, TOPO_EIO, NULL, NULL, "MPI_Comm_dup failed");
	rc = agree(comm, world_rank, size, rc, err);
	if (rc != 0)
		return rc;
	MPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN);
	rc = topo__sched_new(&s, p, host, size, world_rank, err);
	if (rc == 0)
		rc = setup(&x, s, host, err);
	if (rc == 0) {
		r = topo__report_new(p, 1);
		/* grown as iterations complete: 2^31 - 1 of them ended by
		 * the timeout reserve nothing up front */
		seconds_cap = iterations < 1024 ? iterations : 1024;
		seconds =
		    topo__mallocarray((size_t)seconds_cap, sizeof(double));
		if (r == NULL || seconds == NULL)
			rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
				       "out of memory");
	}
	rc = agree(x.comm, world_rank, size, rc, err);
	if (rc != 0)
		goto out;
	if (topo__now() >= deadline)
		why = T_INPUTS;

	for (int it = 0; it < iterations && !stop; it++) {
		double t0, t1, local[3], all[3];
		int64_t counts[2], sums[2];
		int w, flag[2] = {why, 0}, any[2];
		struct topo__verify_time vt = {deadline, NULL, NULL, 0,
					       false,	 0,    0,    x.e.mine,
					       NULL,	 NULL, NULL};

		if (flag[0] == FINE && topo__now() >= deadline)
			flag[0] = T_BEFORE;
		if (done_it == seconds_cap) {
			int cap = seconds_cap > INT_MAX / 2 ? INT_MAX
							    : 2 * seconds_cap;
			double *more = topo__realloc(
			    seconds, (size_t)cap * sizeof(double));

			if (more != NULL) {
				seconds = more;
				seconds_cap = cap;
			}
			flag[1] = more == NULL;
		}
		/* Starting together; and whether anyone is out of time or
		 * memory. */
		if (MPI_Allreduce(flag, any, 2, MPI_INT, MPI_MAX, x.comm) !=
		    MPI_SUCCESS) {
			rc = TOPO_EIO;
			break;
		}
		if (any[1]) {
			rc = TOPO_ENOMEM;
			break;
		}
		if (any[0] != FINE) {
			why = any[0];
			why_it = it;
			break;
		}
		reset(&x);
		t0 = topo__now();
		w = topo__mx_run(&x.e, deadline);
		t1 = topo__now();
		local[0] = t1 - t0;
		local[1] = w == 1;
		local[2] = w < 0;
		if (MPI_Allreduce(local, all, 3, MPI_DOUBLE, MPI_MAX, x.comm) !=
		    MPI_SUCCESS) {
			/* nothing to agree with: the requests given up here,
			 * before their buffers go */
			topo__mx_abandon(&x.e);
			rc = TOPO_EIO;
			break;
		}
		/* Someone gave up: every process ends the run together, so
		 * that no message of it is left in MPI (a library may print
		 * a warning of each at MPI_Finalize, on standard output). */
		if ((all[1] > 0 || all[2] > 0) && topo__mx_quiesce(&x.e) != 0) {
			topo__mx_abandon(&x.e); /* what quiesce left */
			all[2] = 1;
		}
		if (all[2] > 0) {
			/* An MPI call or a message failed somewhere: that
			 * process recorded why. */
			if (x.e.mpi_rc != MPI_SUCCESS) {
				char text[MPI_MAX_ERROR_STRING];
				int len = 0;

				MPI_Error_string(x.e.mpi_rc, text, &len);
				topo__mx_error(
				    &x.e, -1, "failed",
				    "process %d: an MPI call failed in "
				    "iteration %d: %s",
				    world_rank, it + 1, text);
			}
			break;
		}
		if (all[1] > 0) {
			why = T_ITER;
			why_it = it;
			break;
		}
		seconds[done_it++] = all[0];
		/* TOPO_VERIFY_LAST: only the last iteration is verified
		 * (exec.c, Verifying the last); the others still agree on
		 * faults and the deadline. */
		counts[0] = 0;
		if (topo__run_verifies(&q, it, iterations))
			counts[0] = topo__verify_until(
			    p, verify_buffer, &x, x.e.slot_count, verify_report,
			    &x, (int64_t)(MAX_ERRORS - x.e.nerr), &vt);
		x.e.total += counts[0];
		counts[1] = vt.timed_out;
		if (MPI_Allreduce(counts, sums, 2, MPI_INT64_T, MPI_SUM,
				  x.comm) != MPI_SUCCESS) {
			rc = TOPO_EIO;
			break;
		}
		if (sums[1] > 0) {
			why = T_VERIFY;
			why_it = it;
			break;
		}
		if (q.progress != NULL && world_rank == 0)
			q.progress(q.progress_ctx, "running", it + 1,
				   iterations);
		/* Later iterations would only repeat the same faults (and
		 * a "failed" or "left early" found in this one stops it). */
		stop = sums[0] > 0 || x.e.total > 0;
		{
			int mine = stop, anyone = 0;

			if (MPI_Allreduce(&mine, &anyone, 1, MPI_INT, MPI_MAX,
					  x.comm) != MPI_SUCCESS) {
				rc = TOPO_EIO;
				break;
			}
			stop = anyone;
		}
	}
	if (rc != 0) {
		/* every process stopped at the same collective */
		rc = topo__err(err, rc, NULL, NULL,
			       rc == TOPO_EIO ? "an MPI collective call failed"
					      : "out of memory recording the "
						"time of an iteration");
		goto out;
	}
	{
		int64_t mine = x.e.total, total = 0;

		if (MPI_Allreduce(&mine, &total, 1, MPI_INT64_T, MPI_SUM,
				  x.comm) != MPI_SUCCESS) {
			rc = topo__err(err, TOPO_EIO, NULL, NULL,
				       "MPI_Allreduce failed");
			goto out;
		}
		rc = gather_errors(&x, r);
		if (rc == TOPO_EIO) {
			rc = topo__err(err, TOPO_EIO, NULL, NULL,
				       "gathering the errors failed");
			goto out;
		}
		rc = 0;
		if (why != FINE) {
			static const char *const phase[] = {
			    "", "verifying iteration", "iteration",
			    "before iteration", "filling the inputs"};

			if (world_rank == 0) {
				char text[160];

				if (why == T_INPUTS)
					snprintf(text, sizeof(text),
						 "the run did not finish "
						 "within %g s (%s)",
						 timeout, phase[why]);
				else
					snprintf(text, sizeof(text),
						 "the run did not finish "
						 "within %g s (%s %d of %d)",
						 timeout, phase[why],
						 why_it + 1, iterations);
				topo__report_error(r, -1, "timeout", text);
			}
			total++;
		}
		topo__report_finish(r, seconds, done_it, total,
				    total == 0 && done_it == iterations);
	}
out:
	teardown(&x);
	topo__sched_free(s);
	topo__free(seconds);
	if (x.comm != MPI_COMM_NULL)
		MPI_Comm_free(&x.comm);
	if (rc != 0) {
		topo_report_free(r);
		return rc;
	}
	*out = r;
	return 0;
}
