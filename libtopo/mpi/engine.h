/*
 * engine.h - the event engine that runs one process's part of a plan over
 * MPI (engine.c): the plan's two-sided schedule for this process
 * (topo__sched_new) run against buffers the caller owns.  collrun-mpi
 * (exec_mpi.c) gives it buffers it allocated, filled and verifies; the
 * PMPI library (collc_mpi.c) gives it the application's own.  Private to
 * libtopo's MPI parts: define TOPO_INTERNAL.
 */
#ifndef TOPO_MPI_ENGINE_H
#define TOPO_MPI_ENGINE_H

#include <mpi.h>

#include "exec_internal.h"

/* An error found while running (a message outside its buffers, a barrier
 * member that left too early), kept to be reported. */
struct topo__mx_error {
	int32_t endpoint;
	char kind[20];
	char detail[160];
};

struct topo__mx {
	const struct topo_plan *p;
	const struct topo__sched *s;
	/* where the messages go: comm, with tags from tag0 (tag0 + an
	 * event's seq), and peer[h] the rank in comm of the schedule's host
	 * h (NULL: h itself); set up as comm, 0 and NULL, changeable between
	 * runs (libcollc-mpi runs one plan over several communicators) */
	MPI_Comm comm;
	int tag0;
	const int32_t *peer;
	int rank;
	const int32_t *members; /* the group's endpoints (for errors) */
	/* the host's members and each member's index among them (-1: not
	 * here); lidx and mine NULL for a member per host (set up with host
	 * NULL): then member me alone, at index 0 */
	int32_t nlocal, *local, *lidx, me;
	uint8_t *mine;
	/* the caller's buffers: bp[k * TOPO__NBUF + b] is buffer b of the
	 * host's k-th member (NULL where it has no bytes) */
	unsigned char **bp;
	/* receives land in staging bytes of their own (soff[e] into stage)
	 * unless direct[e]: then straight into the destination */
	unsigned char *stage;
	int64_t *soff;
	uint8_t *direct;
	/* First combines: a LOCAL copy into an accumulator whose successors
	 * all REDUCE received bytes into the same range (fusable[e]) waits
	 * (parked[e]) for the first of them to have its bytes, and the two
	 * run as one pass, acc = copied OP received (topo__reduce3), where
	 * copy then combine would pass over the accumulator twice.
	 * lpart[f]: the copy an APPLY f may be fused with, or -1;
	 * predone[f]: f's bytes were combined so. */
	int64_t *lpart;
	uint8_t *fusable, *parked, *predone;
	int64_t fused; /* combines run so in the last run */
	int32_t *nwait0, *nwait;
	int64_t *ready, nready;
	int64_t ndone;
	/* the requests in flight and their events */
	MPI_Request *req;
	int64_t *reqev;
	int *idx;
	MPI_Status *st;
	int nact;
	/* receipt counters (NULL: not kept) */
	int64_t *slot_count;
	/* a barrier's knowledge: kw words per event (kw 0: none kept) */
	uint64_t *known;
	int kw;
	/* errors found here (err NULL: only counted) */
	struct topo__mx_error *err;
	int nerr, maxerr;
	int64_t total;
	/* messages this process ever sent to each process of comm, and
	 * took from each, over all runs (NULL: not counted); what
	 * topo__mx_quiesce needs */
	int64_t *sent, *got, *want;
	int nprocs;
	unsigned char *drop; /* where such messages are dropped */
	int dropcap;
	int mpi_rc; /* first failed MPI call's code, or MPI_SUCCESS */
	int yield;  /* give the CPU away while waiting (sched_yield) */
	int block;  /* wait in MPI_Waitsome (no deadline then) */
};

/* The checks a run must pass before anything is allocated: tags within
 * MPI_TAG_UB, events and message sizes within int.  Adds the bytes the
 * engine's staging and state need to *stage_bytes and *state_bytes.
 * Returns 0 or TOPO_ELIMIT (err says why). */
int topo__mx_check(const struct topo_plan *p, const struct topo__sched *s,
		   MPI_Comm comm, int kw, int64_t *stage_bytes,
		   int64_t *state_bytes, topo_error *err);

/*
 * Sets x up to run schedule s of plan p on process `rank` of comm, whose
 * members are those with host[i] == rank (host NULL: member rank alone,
 * and nothing kept per member of the plan: its memory follows the
 * schedule's events, not the group's size; counters and knowledge need
 * host).  x->bp is allocated (all NULL)
 * for the caller to fill; receipt counters are kept when counters is
 * nonzero, a barrier's knowledge when knowledge is, and up to maxerr
 * errors.  direct_ok: receives that copy into a range of a buffer no
 * other message of the host writes go straight there (the caller's
 * buffers never alias one another then).  quiesce: the messages sent to
 * and taken from each process are counted, so that an abandoned run can
 * be ended with topo__mx_quiesce.  Returns 0, TOPO_ENOMEM or TOPO_EINVAL
 * (a malformed schedule).
 */
int topo__mx_setup(struct topo__mx *x, const struct topo_plan *p,
		   const struct topo__sched *s, const int32_t *host,
		   MPI_Comm comm, int rank, bool counters, bool knowledge,
		   int maxerr, bool direct_ok, bool quiesce, topo_error *err);
void topo__mx_teardown(struct topo__mx *x);

/* Buffer b of member r (one of the host's). */
static inline int32_t topo__mx_lidx(const struct topo__mx *x, int32_t r)
{
	return x->lidx != NULL ? x->lidx[r] : r == x->me ? 0 : -1;
}

static inline unsigned char *topo__mx_buffer(const struct topo__mx *x,
					     int32_t r, int b)
{
	return x->bp[(int64_t)topo__mx_lidx(x, r) * TOPO__NBUF + b];
}

/* Readies x for a run of the schedule: waits, counters, knowledge. */
void topo__mx_reset(struct topo__mx *x);

/* Runs the schedule once: every receive posted, the events run as they
 * become ready.  Returns 0, 1 when the deadline (topo__now() seconds)
 * passed, or -1 (x->mpi_rc, or an error recorded); after 1 or -1 the
 * requests are still in flight, and the caller ends them with
 * topo__mx_abandon or topo__mx_quiesce. */
int topo__mx_run(struct topo__mx *x, double deadline);

/* Gives up the requests in flight, here alone: receives cancelled, sends
 * freed.  Messages the peers sent that no receive took stay in MPI's
 * queues (MPI libraries may warn of them at MPI_Finalize). */
void topo__mx_abandon(struct topo__mx *x);

/* Ends a run every process of comm gave up or finished, collectively
 * (every process of comm calls it, x set up with quiesce): receives
 * cancelled, every message a peer sent that this process did not take
 * received and dropped, and every send completed, so that nothing of
 * the run is left in MPI.  Returns 0, or -1 when an MPI call failed
 * (x->mpi_rc). */
int topo__mx_quiesce(struct topo__mx *x);

/* Records an error (counted always, kept up to maxerr). */
void topo__mx_error(struct topo__mx *x, int32_t endpoint, const char *kind,
		    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif /* TOPO_MPI_ENGINE_H */
