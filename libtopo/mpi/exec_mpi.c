/*
 * exec_mpi.c - running a plan across the processes of an MPI job
 * (topo_mpi.h), over the plan's two-sided schedules (sched.c).
 *
 * Each process builds its own host's schedule and holds the buffers of its
 * members only.  Per iteration: reset what the last one wrote, agree on
 * starting (an allreduce that also says whether any process ran out of
 * time), post a receive for every wire message the host will get (into a
 * staging area of its own per message, so that no receive writes into a
 * member's buffer while the member still reads or combines there), then
 * run the events as they become ready, one thread per process:
 *
 *   SEND      MPI_Isend from the member's buffer (tag: the event's seq)
 *   ACK_SEND  MPI_Isend of no bytes
 *   APPLY     the staged bytes copied or reduced into the member's buffer
 *   LOCAL     a copy or reduction between members of the host
 *   RECV, ACK_RECV  done when MPI_Testsome completes them
 *
 * and MPI's rule on top of the schedule's: bytes are written (APPLY,
 * LOCAL) only once the sends reading them have completed.  An iteration
 * ends when every event is done and every send complete; its time is the
 * slowest process's.  Then every process verifies its own members
 * (verify.c, with `mine`), and the errors, their total and the verdict are
 * agreed (allreduce) and gathered to rank 0.
 *
 * A barrier's guarantee (no member leaves before every member entered) is
 * checked causally: every event carries the set of members known to have
 * entered (a bit per member), merged along the schedule's waits and sent
 * with every wire message of the barrier; a member's leave must know of
 * them all.  That is the ordering MPI can see: nothing that happens on
 * another process is known without a message from it.
 *
 * The traffic goes over a duplicate of the caller's communicator, so it
 * never matches the caller's own messages.
 */
#define TOPO_INTERNAL
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

/* An error as it travels to rank 0. */
struct wire_error {
	int32_t endpoint;
	char kind[20];
	char detail[160];
};

struct xm {
	const struct topo_plan *p;
	const struct topo__sched *s;
	MPI_Comm comm;
	int rank, size;
	const int32_t *members; /* the group's endpoints */
	/* the host's members and each member's index among them (-1: not
	 * here) */
	int32_t nlocal, *local, *lidx;
	uint8_t *mine;
	unsigned char *arena;
	int64_t *boff; /* [nlocal * TOPO__NBUF] */
	unsigned char *stage;
	int64_t *soff; /* [nev]: a RECV's staging offset */
	int32_t *nwait0, *nwait;
	int64_t *ready, nready;
	int64_t ndone;
	/* the requests in flight and their events */
	MPI_Request *req;
	int64_t *reqev;
	int *idx;
	MPI_Status *st;
	int nact;
	int64_t *slot_count;
	/* a barrier's knowledge: kw words per event */
	uint64_t *known;
	int kw;
	/* errors found here; rank 0's gathering of them ([size]) */
	struct wire_error *err;
	int *counts, *displs;
	int nerr;
	int64_t total;
	int mpi_rc; /* first failed MPI call's code, or MPI_SUCCESS */
};

static unsigned char *buffer(struct xm *x, int32_t r, int b)
{
	return x->arena + x->boff[(int64_t)x->lidx[r] * TOPO__NBUF + b];
}

static int64_t size_of(const struct topo_plan *p, int b, int32_t r)
{
	return p->bufsize[b] != NULL ? p->bufsize[b][r] : 0;
}

static void add_error(struct xm *x, int32_t endpoint, const char *kind,
		      const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void add_error(struct xm *x, int32_t endpoint, const char *kind,
		      const char *fmt, ...)
{
	struct wire_error *e;
	va_list ap;

	x->total++;
	if (x->nerr >= MAX_ERRORS)
		return;
	e = &x->err[x->nerr++];
	e->endpoint = endpoint;
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
}

/* The verifier counts every error itself: only keep what it reports. */
static void verify_report(void *ctx, const struct topo__verify_error *v)
{
	struct xm *x = ctx;
	struct wire_error *e;

	if (x->nerr >= MAX_ERRORS)
		return;
	e = &x->err[x->nerr++];
	e->endpoint = v->rank >= 0 ? x->members[v->rank] : -1;
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

/* The host's members, their buffers and staging, the run's state.  Only
 * this process's checks: the caller agrees on the result. */
static int setup(struct xm *x, const int32_t *host, topo_error *err)
{
	const struct topo_plan *p = x->p;
	const struct topo__sched *s = x->s;
	struct topo__memory_need need = {0, 0, 0};
	int64_t bytes = 0, stage = 0, nev = s->nev;
	int tag_ub_flag = 0, *tag_ub = NULL;

	MPI_Comm_get_attr(x->comm, MPI_TAG_UB, &tag_ub, &tag_ub_flag);
	if (tag_ub_flag && tag_ub != NULL && s->max_seq > *tag_ub)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "%lld wire messages between two processes; "
				 "the MPI library's tags count to %d "
				 "(MPI_TAG_UB)",
				 (long long)s->max_seq + 1, *tag_ub);
	if (nev > INT_MAX)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "%lld events on one process; at most %d",
				 (long long)nev, INT_MAX);
	for (int32_t i = 0; i < p->n; i++)
		x->nlocal += host[i] == x->rank;
	x->kw = p->params.op == TOPO_OP_BARRIER ? (p->n + 63) / 64 : 0;
	/* Sizes first, so that a run too big is refused with nothing
	 * allocated. */
	for (int32_t i = 0; i < p->n; i++)
		if (host[i] == x->rank)
			for (int b = 0; b < TOPO__NBUF; b++)
				bytes += round_up(size_of(p, b, i));
	for (int64_t e = 0; e < nev; e++) {
		const struct topo__ev *v = &s->ev[e];

		if (v->kind != TOPO__EV_SEND && v->kind != TOPO__EV_RECV)
			continue;
		if (p->msg[v->msg].len > INT_MAX)
			return topo__err(err, TOPO_ELIMIT, NULL, NULL,
					 "message %lld has %lld bytes; an MPI "
					 "message holds at most %d",
					 (long long)v->msg,
					 (long long)p->msg[v->msg].len,
					 INT_MAX);
		if (v->kind == TOPO__EV_RECV)
			stage += round_up(p->msg[v->msg].len);
	}
	need.buffers = bytes + stage;
	need.run = nev * (int64_t)(2 * sizeof(int32_t) + 3 * sizeof(int64_t) +
				   sizeof(MPI_Request) + sizeof(MPI_Status) +
				   sizeof(int) + (size_t)x->kw * 8) +
		   p->nslots * (int64_t)sizeof(int64_t) +
		   (int64_t)p->n * (2 * sizeof(int32_t) + 1);
	{
		int rc = topo__memory_check(&need, err);

		if (rc != 0)
			return rc;
	}
	x->local = topo__mallocarray((size_t)x->nlocal + 1, sizeof(int32_t));
	x->lidx = topo__mallocarray((size_t)p->n, sizeof(int32_t));
	x->mine = topo__calloc((size_t)p->n, 1);
	x->boff = topo__mallocarray((size_t)x->nlocal * TOPO__NBUF + 1,
				    sizeof(int64_t));
	x->arena = topo__malloc((size_t)(bytes + stage) + ALIGN);
	x->soff = topo__mallocarray((size_t)nev + 1, sizeof(int64_t));
	x->nwait0 = topo__mallocarray((size_t)nev + 1, sizeof(int32_t));
	x->nwait = topo__mallocarray((size_t)nev + 1, sizeof(int32_t));
	x->ready = topo__mallocarray((size_t)nev + 1, sizeof(int64_t));
	x->req = topo__mallocarray((size_t)nev + 1, sizeof(MPI_Request));
	x->reqev = topo__mallocarray((size_t)nev + 1, sizeof(int64_t));
	x->idx = topo__mallocarray((size_t)nev + 1, sizeof(int));
	x->st = topo__mallocarray((size_t)nev + 1, sizeof(MPI_Status));
	x->slot_count =
	    topo__mallocarray((size_t)p->nslots + 1, sizeof(int64_t));
	x->err = topo__mallocarray(MAX_ERRORS, sizeof(*x->err));
	x->counts = topo__mallocarray((size_t)x->size, sizeof(int));
	x->displs = topo__mallocarray((size_t)x->size, sizeof(int));
	if (x->kw > 0)
		x->known = topo__mallocarray((size_t)nev * (size_t)x->kw + 1,
					     sizeof(uint64_t));
	if (x->local == NULL || x->lidx == NULL || x->mine == NULL ||
	    x->boff == NULL || x->arena == NULL || x->soff == NULL ||
	    x->nwait0 == NULL || x->nwait == NULL || x->ready == NULL ||
	    x->req == NULL || x->reqev == NULL || x->idx == NULL ||
	    x->st == NULL || x->slot_count == NULL || x->err == NULL ||
	    x->counts == NULL || x->displs == NULL ||
	    (x->kw > 0 && x->known == NULL))
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	{
		/* aligned within the arena */
		int64_t pos =
		    (int64_t)((ALIGN - (uintptr_t)x->arena % ALIGN) % ALIGN);
		int32_t k = 0;

		for (int32_t i = 0; i < p->n; i++) {
			x->lidx[i] = -1;
			if (host[i] != x->rank)
				continue;
			x->lidx[i] = k;
			x->local[k] = i;
			x->mine[i] = 1;
			for (int b = 0; b < TOPO__NBUF; b++) {
				x->boff[(int64_t)k * TOPO__NBUF + b] = pos;
				pos += round_up(size_of(p, b, i));
			}
			k++;
		}
		x->stage = x->arena;
		for (int64_t e = 0; e < nev; e++) {
			const struct topo__ev *v = &s->ev[e];

			x->soff[e] = -1;
			x->nwait0[e] = v->nwait;
			if (v->kind == TOPO__EV_RECV) {
				x->soff[e] = pos;
				pos += round_up(p->msg[v->msg].len);
			}
			if ((v->kind == TOPO__EV_RECV ||
			     v->kind == TOPO__EV_ACK_RECV) &&
			    v->nwait != 0)
				return topo__err(err, TOPO_EINVAL, NULL, NULL,
						 "two-sided schedule: receive "
						 "event %lld waits for %d "
						 "others",
						 (long long)e, (int)v->nwait);
		}
	}
	/* Inputs: the same pattern every run fills (verify.c). */
	for (int32_t k = 0; k < x->nlocal; k++) {
		int32_t i = x->local[k];
		int64_t len = size_of(p, TOPO__SEND, i);

		if (len > 0)
			topo__pattern_fill(p, i, buffer(x, i, TOPO__SEND),
					   (size_t)len);
	}
	return 0;
}

static void teardown(struct xm *x)
{
	topo__free(x->local);
	topo__free(x->lidx);
	topo__free(x->mine);
	topo__free(x->boff);
	topo__free(x->arena);
	topo__free(x->soff);
	topo__free(x->nwait0);
	topo__free(x->nwait);
	topo__free(x->ready);
	topo__free(x->req);
	topo__free(x->reqev);
	topo__free(x->idx);
	topo__free(x->st);
	topo__free(x->slot_count);
	topo__free(x->known);
	topo__free(x->err);
	topo__free(x->counts);
	topo__free(x->displs);
}

/* ---------------------------------------------------------------------- */
/* One iteration */

static void reset(struct xm *x)
{
	const struct topo_plan *p = x->p;

	for (int32_t k = 0; k < x->nlocal; k++)
		for (int b = TOPO__RECV; b <= TOPO__WORK; b++) {
			int64_t len = size_of(p, b, x->local[k]);

			if (len > 0)
				memset(buffer(x, x->local[k], b), TOPO__POISON,
				       (size_t)len);
		}
	/* Counters of members elsewhere are theirs to check. */
	for (int64_t s = 0; s < p->nslots; s++)
		x->slot_count[s] =
		    x->mine[p->slot_member[s]] ? 0 : p->slot_expect[s];
	memcpy(x->nwait, x->nwait0, (size_t)x->s->nev * sizeof(int32_t));
	if (x->kw > 0)
		memset(x->known, 0,
		       (size_t)x->s->nev * (size_t)x->kw * sizeof(uint64_t));
	x->nready = 0;
	x->ndone = 0;
	x->nact = 0;
}

static uint64_t *known(struct xm *x, int64_t e)
{
	return x->known + e * x->kw;
}

/* Event e is done: its successors learn what it knew, and those it was
 * the last wait of become ready. */
static void done(struct xm *x, int64_t e)
{
	const struct topo__sched *s = x->s;

	x->ndone++;
	for (int64_t k = s->succ_off[e]; k < s->succ_off[e + 1]; k++) {
		int64_t f = s->succ[k];

		if (x->kw > 0) {
			uint64_t *a = known(x, f), *b = known(x, e);

			for (int w = 0; w < x->kw; w++)
				a[w] |= b[w];
		}
		if (--x->nwait[f] == 0)
			x->ready[x->nready++] = f;
	}
}

static void track(struct xm *x, MPI_Request r, int64_t e)
{
	x->req[x->nact] = r;
	x->reqev[x->nact] = e;
	x->nact++;
}

/* Drops the completed requests (MPI_REQUEST_NULL) from the list. */
static void compact(struct xm *x)
{
	int k = 0;

	for (int i = 0; i < x->nact; i++)
		if (x->req[i] != MPI_REQUEST_NULL) {
			x->req[k] = x->req[i];
			x->reqev[k] = x->reqev[i];
			k++;
		}
	x->nact = k;
}

static int mpi_failed(struct xm *x, int rc)
{
	if (rc != MPI_SUCCESS && x->mpi_rc == MPI_SUCCESS)
		x->mpi_rc = rc;
	return rc != MPI_SUCCESS;
}

/* MPI's rule: before bytes of member r's buffer b in [lo, hi) are
 * written, the sends reading them complete. */
static int before_write(struct xm *x, int32_t r, int b, int64_t lo, int64_t hi)
{
	const struct topo_plan *p = x->p;
	bool waited = false;

	for (int i = 0; i < x->nact; i++) {
		const struct topo__ev *v = &x->s->ev[x->reqev[i]];
		const struct topo__msg *m;

		if (v->kind != TOPO__EV_SEND || x->req[i] == MPI_REQUEST_NULL)
			continue;
		m = &p->msg[v->msg];
		if (m->src != r || m->sbuf != b || m->len == 0 ||
		    m->soff >= hi || lo >= m->soff + m->len)
			continue;
		if (mpi_failed(x, MPI_Wait(&x->req[i], MPI_STATUS_IGNORE)))
			return -1;
		waited = true;
	}
	if (waited)
		compact(x);
	return 0;
}

/* Checks a message's ranges against its buffers (as the in-process
 * transport does: a plan changed after planning must still not write
 * outside them). */
static bool in_bounds(const struct topo_plan *p, const struct topo__msg *m,
		      bool src, bool dst)
{
	if (m->len < 0 || m->soff < 0 || m->doff < 0)
		return false;
	if (src && m->soff > size_of(p, m->sbuf, m->src) - m->len)
		return false;
	return !dst || m->doff <= size_of(p, m->dbuf, m->dst) - m->len;
}

/* Writes m's bytes from src into its destination here. */
static int apply(struct xm *x, const struct topo__msg *m,
		 const unsigned char *src)
{
	const struct topo_plan *p = x->p;
	unsigned char *dst;

	if (before_write(x, m->dst, m->dbuf, m->doff, m->doff + m->len) != 0)
		return -1;
	dst = buffer(x, m->dst, m->dbuf) + m->doff;
	if (m->kind == TOPO__COPY)
		memmove(dst, src, (size_t)m->len);
	else
		topo__reduce(p->params.type, p->params.redop, dst, src,
			     (size_t)m->len);
	if (m->slot >= 0)
		x->slot_count[m->slot]++;
	return 0;
}

static void bad_message(struct xm *x, int64_t mi)
{
	const struct topo__msg *m = &x->p->msg[mi];

	add_error(x, x->members[m->dst], "failed",
		  "message %lld from endpoint %d to endpoint %d could not be "
		  "delivered: %s",
		  (long long)mi, x->members[m->src], x->members[m->dst],
		  topo_strerror(TOPO_EINVAL));
}

/* Starts a ready event.  Returns 0, or -1 when the iteration cannot go on
 * (an MPI call failed, or a message lies outside its buffers). */
static int start(struct xm *x, int64_t e)
{
	const struct topo_plan *p = x->p;
	const struct topo__ev *v = &x->s->ev[e];
	const struct topo__msg *m = &p->msg[v->msg];
	MPI_Request r;
	bool barrier = x->kw > 0 && m->len == 0;

	switch (v->kind) {
	case TOPO__EV_SEND:
		if (!in_bounds(p, m, true, false)) {
			bad_message(x, v->msg);
			return -1;
		}
		if (mpi_failed(
			x, barrier
			       ? MPI_Isend(known(x, e), x->kw * 8, MPI_BYTE,
					   v->peer, (int)v->seq, x->comm, &r)
			       : MPI_Isend(buffer(x, m->src, m->sbuf) + m->soff,
					   (int)m->len, MPI_BYTE, v->peer,
					   (int)v->seq, x->comm, &r)))
			return -1;
		track(x, r, e);
		break;
	case TOPO__EV_ACK_SEND:
		if (mpi_failed(x, MPI_Isend(x->kw > 0 ? known(x, e) : NULL,
					    x->kw * 8, MPI_BYTE, v->peer,
					    (int)v->seq, x->comm, &r)))
			return -1;
		track(x, r, e);
		break;
	case TOPO__EV_APPLY:
		if (!in_bounds(p, m, false, true)) {
			bad_message(x, v->msg);
			return -1;
		}
		/* the RECV is the event before (sched.c) */
		if (apply(x, m, x->stage + x->soff[e - 1]) != 0)
			return -1;
		break;
	case TOPO__EV_LOCAL:
		if (!in_bounds(p, m, true, true)) {
			bad_message(x, v->msg);
			return -1;
		}
		if (apply(x, m, buffer(x, m->src, m->sbuf) + m->soff) != 0)
			return -1;
		if (m->mark == TOPO__MARK_ENTER && x->kw > 0)
			known(x, e)[m->src / 64] |= UINT64_C(1)
						    << (m->src % 64);
		else if (m->mark == TOPO__MARK_LEAVE && x->kw > 0) {
			const uint64_t *k = known(x, e);
			int32_t missing = -1;

			for (int32_t i = 0; i < p->n && missing < 0; i++)
				if (!(k[i / 64] >> (i % 64) & 1))
					missing = i;
			if (missing >= 0)
				add_error(x, x->members[m->src], "left early",
					  "left the barrier before it could "
					  "know that endpoint %d entered it",
					  (int)x->members[missing]);
		}
		break;
	default:
		return 0; /* receives are posted, not started */
	}
	done(x, e);
	return 0;
}

/* Gives up the requests in flight: receives cancelled, sends freed (MPI
 * completes them when their receivers take them, or drops them at
 * MPI_Finalize). */
static void abandon(struct xm *x)
{
	for (int i = 0; i < x->nact; i++) {
		const struct topo__ev *v = &x->s->ev[x->reqev[i]];

		if (x->req[i] == MPI_REQUEST_NULL)
			continue;
		if (v->kind == TOPO__EV_RECV || v->kind == TOPO__EV_ACK_RECV) {
			MPI_Cancel(&x->req[i]);
			MPI_Wait(&x->req[i], MPI_STATUS_IGNORE);
		} else {
			MPI_Request_free(&x->req[i]);
		}
	}
	x->nact = 0;
}

/* Runs one iteration.  Returns 0, 1 when the deadline passed (the
 * requests in flight cancelled or freed), or -1 (x->mpi_rc, or an error
 * recorded). */
static int iterate(struct xm *x, double deadline)
{
	const struct topo__sched *s = x->s;
	const struct topo_plan *p = x->p;
	int spins = 0;

	/* Every receive first, into its staging bytes. */
	for (int64_t e = 0; e < s->nev; e++) {
		const struct topo__ev *v = &s->ev[e];
		MPI_Request r;
		int rc;

		if (v->kind == TOPO__EV_RECV) {
			const struct topo__msg *m = &p->msg[v->msg];

			rc = x->kw > 0 && m->len == 0
				 ? MPI_Irecv(known(x, e), x->kw * 8, MPI_BYTE,
					     v->peer, (int)v->seq, x->comm, &r)
				 : MPI_Irecv(x->stage + x->soff[e], (int)m->len,
					     MPI_BYTE, v->peer, (int)v->seq,
					     x->comm, &r);
		} else if (v->kind == TOPO__EV_ACK_RECV) {
			rc = MPI_Irecv(x->kw > 0 ? known(x, e) : NULL,
				       x->kw * 8, MPI_BYTE, v->peer,
				       (int)v->seq, x->comm, &r);
		} else {
			if (x->nwait[e] == 0)
				x->ready[x->nready++] = e;
			continue;
		}
		if (mpi_failed(x, rc))
			return -1;
		track(x, r, e);
	}
	/* The ready events, from a stack (the latest first, as the
	 * in-process pool runs a worker's own); then wait for MPI. */
	while (x->ndone < s->nev || x->nact > 0) {
		int n = 0;

		while (x->nready > 0)
			if (start(x, x->ready[--x->nready]) != 0)
				return -1;
		if (x->nact == 0) {
			if (x->ndone < s->nev) {
				add_error(x, -1, "failed",
					  "the schedule stalled: %lld of "
					  "%lld events could not start",
					  (long long)(s->nev - x->ndone),
					  (long long)s->nev);
				return -1;
			}
			break;
		}
		if (mpi_failed(
			x, MPI_Testsome(x->nact, x->req, &n, x->idx, x->st)))
			return -1;
		if (n == MPI_UNDEFINED)
			n = 0;
		for (int i = 0; i < n; i++) {
			int64_t e = x->reqev[x->idx[i]];
			const struct topo__ev *v = &s->ev[e];

			if (v->kind == TOPO__EV_RECV ||
			    v->kind == TOPO__EV_ACK_RECV)
				done(x, e);
		}
		if (n > 0) {
			compact(x);
			spins = 0;
			continue;
		}
		/* Nothing completed: look at the clock now and then, and
		 * give the CPU away when the job has more processes than
		 * CPUs. */
		if (++spins % 64 == 0) {
			if (topo__now() >= deadline) {
				abandon(x);
				return 1;
			}
			sched_yield();
		}
	}
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Gathering the errors */

/* Every process's errors, in rank order, into rank 0's report (which,
 * short of memory for them all, says so instead).  Returns 0 or TOPO_EIO. */
static int gather_errors(struct xm *x, topo_report *r)
{
	struct wire_error *all = NULL;
	int64_t total = 0;
	int ok = 1, mine;

	if (MPI_Gather(&x->nerr, 1, MPI_INT, x->counts, 1, MPI_INT, 0,
		       x->comm) != MPI_SUCCESS)
		return TOPO_EIO;
	if (x->rank == 0) {
		for (int i = 0; i < x->size; i++) {
			x->displs[i] = (int)total;
			x->counts[i] *= (int)sizeof(struct wire_error);
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
	mine = x->nerr * (int)sizeof(struct wire_error);
	if (MPI_Gatherv(x->err, mine, MPI_BYTE, all, x->counts, x->displs,
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
	x.members = p->t->g->members;
	rc = MPI_Comm_dup(comm, &x.comm) == MPI_SUCCESS
		 ? 0
		 : topo__err(err, TOPO_EIO, NULL, NULL, "MPI_Comm_dup failed");
	rc = agree(comm, world_rank, size, rc, err);
	if (rc != 0)
		return rc;
	MPI_Comm_set_errhandler(x.comm, MPI_ERRORS_RETURN);
	rc = topo__sched_new(&s, p, host, size, world_rank, err);
	x.s = s;
	if (rc == 0)
		rc = setup(&x, host, err);
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
					       false,	 0,    0,    x.mine};

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
		w = iterate(&x, deadline);
		t1 = topo__now();
		if (w < 0)
			abandon(&x);
		local[0] = t1 - t0;
		local[1] = w == 1;
		local[2] = w < 0;
		if (MPI_Allreduce(local, all, 3, MPI_DOUBLE, MPI_MAX, x.comm) !=
		    MPI_SUCCESS) {
			rc = TOPO_EIO;
			break;
		}
		if (all[2] > 0) {
			/* An MPI call or a message failed somewhere: that
			 * process recorded why. */
			if (x.mpi_rc != MPI_SUCCESS) {
				char text[MPI_MAX_ERROR_STRING];
				int len = 0;

				MPI_Error_string(x.mpi_rc, text, &len);
				add_error(&x, -1, "failed",
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
		counts[0] = topo__verify_until(
		    p, verify_buffer, &x, x.slot_count, verify_report, &x,
		    (int64_t)(MAX_ERRORS - x.nerr), &vt);
		x.total += counts[0];
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
		stop = sums[0] > 0 || x.total > 0;
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
		int64_t mine = x.total, total = 0;

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
