/*
 * verify.h - the input data of a run and what every member must end with
 * (verify.c), computed from the operation's definition alone,
 * independently of any plan; the checks of members' buffers.
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_RUN_VERIFY_H
#define TOPO_RUN_VERIFY_H

#include "plan/plan.h"

/* Input data and what every member must end with (verify.c), computed
 * from the operation's definition alone, independently of any plan. */

/* Fills member rank r's SEND buffer (len bytes) for the plan's op, type and
 * redop; the same function the verifier uses to know the inputs. */
void topo__pattern_fill(const struct topo_plan *p, int32_t r, void *buf,
			size_t len);
/* The same for bytes [off, off + len) of that buffer, into buf. */
void topo__pattern_fill_at(const struct topo_plan *p, int32_t r,
			   uint64_t off, void *buf, size_t len);
/* The copy of the pattern loops in use (verify.c): 1 the baseline, 2
 * SSE4.1, 3 AVX2, 4 AVX-512 (AMD only; x86-64, 1 elsewhere), the widest
 * the processor runs, or at most topo__tune.pattern_simd_cap where that is
 * above 0 (tests set it: every copy makes the same bytes). */
int topo__pattern_simd(void);
/* The byte that RECV and WORK are reset to before every iteration. */
#define TOPO__POISON 0xA5

struct topo__verify_error {
	int32_t rank;
	const char *kind; /* static: "undelivered", "duplicated", ... */
	char detail[160];
};

/* What the checks are given: member r's buffer of a kind (TOPO__SEND,
 * ...), and where each error found is told. */
typedef unsigned char *topo__verify_buf_fn(void *ctx, int32_t r, int kind);
typedef void topo__verify_report_fn(void *ctx2,
				    const struct topo__verify_error *e);

/* A verification's deadline (topo__now() seconds; 0: none) and progress
 * callback; timed_out says whether it stopped at the deadline. */
/* What a run's verifications keep from one iteration to the next
 * (verify.c, reduce_all): the expected reduction of a reduce, allreduce
 * or reduce-scatter, len bytes, once one verification has computed it
 * whole; NULL before.  Zeroed to start; topo__verify_keep_free frees it. */
struct topo__verify_keep {
	unsigned char *reduced;
	int64_t len;
};
void topo__verify_keep_free(struct topo__verify_keep *keep);

struct topo__verify_time {
	double deadline;
	topo_progress_fn progress;
	void *ctx;
	double next;
	bool timed_out;
	/* progress reports base + members checked, of total (a run's
	 * verifications count on from one iteration to the next) */
	int64_t base, total;
	/* [n]: check only the members r with mine[r] != 0 (a process of an
	 * MPI run checks those it holds); NULL: all */
	const uint8_t *mine;
	/* Runs fn(arg, k) for every k in [0, n), on all of a run's threads,
	 * and returns once all have run: 0, or nonzero when it stopped
	 * early (the deadline; fn is then not run for the rest).  NULL: the
	 * verifier runs them itself, one after the other. */
	int (*par)(void *pctx, int64_t n, void (*fn)(void *arg, int64_t k),
		   void *arg);
	void *pctx;
	/* a run's: what its verifications keep (NULL: nothing) */
	struct topo__verify_keep *keep;
};

/* Checks member buffers after an iteration; buf(ctx, r, kind) gives
 * member r's buffer.  Calls report(ctx2, e) for each error found (at most
 * `max` reported, all counted); returns the number of errors. */
int64_t topo__verify(const struct topo_plan *p, topo__verify_buf_fn *buf,
		     void *ctx, const int64_t *slot_count,
		     topo__verify_report_fn *report, void *ctx2, int64_t max);
/* topo__verify, stopping at time->deadline (time->timed_out set; the
 * errors found so far are counted) and reporting progress. */
int64_t topo__verify_until(const struct topo_plan *p,
			   topo__verify_buf_fn *buf, void *ctx,
			   const int64_t *slot_count,
			   topo__verify_report_fn *report, void *ctx2,
			   int64_t max, struct topo__verify_time *time);

/* A barrier's guarantee, from the order in which its members' marked steps
 * completed (stamp[m]: message m's place in that order, from 0; -1: it
 * did not run): every member's leave after every member's enter.  Reports
 * each member that left before the last one entered (kind "left early");
 * returns their number.  0 for other operations or a NULL stamp. */
int64_t topo__verify_barrier(const struct topo_plan *p, const int64_t *stamp,
			     topo__verify_report_fn *report, void *ctx2,
			     int64_t max);

#endif /* TOPO_RUN_VERIFY_H */
