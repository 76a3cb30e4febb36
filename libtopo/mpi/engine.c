/*
 * engine.c - one process's part of a plan, run over MPI against buffers
 * the caller owns (engine.h), one thread per process.
 *
 * A run posts a receive for every wire message the host will get, into a
 * staging area of its own per message (so that no receive writes into a
 * member's buffer while the member still reads or combines there), or,
 * where the caller allows it and the message is the only one writing its
 * destination bytes, straight into them; then it runs the events as they
 * become ready:
 *
 *   SEND      MPI_Isend from the member's buffer (tag: the event's seq,
 *             from x->tag0)
 *   ACK_SEND  MPI_Isend of no bytes
 *   APPLY     the staged bytes copied or reduced into the member's buffer
 *   LOCAL     a copy or reduction between members of the host
 *   RECV, ACK_RECV  done when MPI_Testsome completes them
 *
 * and MPI's rule on top of the schedule's: bytes are written (APPLY,
 * LOCAL) only once the sends reading them have completed.
 *
 * One reordering of its own: a LOCAL copy into an accumulator that only
 * received combines follow (a reduce's SEND copied into its WORK or RECV)
 * waits for the first of those combines to have its bytes, and the two
 * run as one pass, acc = own OP received (topo__reduce3), rather than a
 * copy and then a combine over the accumulator again: a third less
 * memory traffic in the root's part of a large reduce (at np 2, 16 MiB,
 * Open MPI 4.1: 1.48 times the MPI library's own reduce before, 1.18
 * after).  A run ends
 * when every event is done and every send complete.
 *
 * A barrier's guarantee (no member leaves before every member entered) is
 * checked causally when the caller asks for it: every event carries the
 * set of members known to have entered (a bit per member), merged along
 * the schedule's waits and sent with every wire message of the barrier; a
 * member's leave must know of them all.  That is the ordering MPI can
 * see: nothing that happens on another process is known without a message
 * from it.
 */
#define TOPO_INTERNAL
#include "engine.h"

#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Staging alignment (the reduction kernels vectorise). */
#define ALIGN 64

/* An event's peer as a rank of x->comm, and its tag there. */
#define PEER(x, v) ((x)->peer != NULL ? (x)->peer[(v)->peer] : (v)->peer)
#define TAG(x, v) ((x)->tag0 + (int)(v)->seq)

static int64_t round_up(int64_t v)
{
	return (v + ALIGN - 1) / ALIGN * ALIGN;
}

void topo__mx_error(struct topo__mx *x, int32_t endpoint, const char *kind,
		    const char *fmt, ...)
{
	struct topo__mx_error *e;
	va_list ap;

	x->total++;
	if (x->err == NULL || x->nerr >= x->maxerr)
		return;
	e = &x->err[x->nerr++];
	e->endpoint = endpoint;
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
	va_start(ap, fmt);
	vsnprintf(e->detail, sizeof(e->detail), fmt, ap);
	va_end(ap);
}

int topo__mx_check(const struct topo_plan *p, const struct topo__sched *s,
		   MPI_Comm comm, int kw, int64_t *stage_bytes,
		   int64_t *state_bytes, topo_error *err)
{
	int tag_ub_flag = 0, *tag_ub = NULL;
	int64_t stage = 0, nev = s->nev;

	PMPI_Comm_get_attr(comm, MPI_TAG_UB, &tag_ub, &tag_ub_flag);
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
	*stage_bytes += stage;
	*state_bytes +=
	    nev * (int64_t)(2 * sizeof(int32_t) + 4 * sizeof(int64_t) +
			    sizeof(MPI_Request) + sizeof(MPI_Status) +
			    sizeof(int) + 4 + (size_t)kw * 8) +
	    p->nslots * (int64_t)sizeof(int64_t) +
	    (int64_t)p->n * (2 * sizeof(int32_t) + 1);
	return 0;
}

/* A range of a host member's buffer that a message writes. */
struct wrange {
	int64_t key; /* local index * TOPO__NBUF + buffer */
	int64_t lo, hi, msg;
};

static int wrange_cmp(const void *a, const void *b)
{
	const struct wrange *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	return (x->hi > y->hi) - (x->hi < y->hi);
}

/* Marks the receives that may land straight in their destination: a copy
 * of some bytes into a range of a member's buffer that no other message
 * of the host writes.  Returns 0 or TOPO_ENOMEM. */
static int find_direct(struct topo__mx *x, topo_error *err)
{
	const struct topo_plan *p = x->p;
	const struct topo__sched *s = x->s;
	struct wrange *w;
	uint8_t *alone;
	int64_t nw = 0, k = 0;

	/* the messages writing here: this host's RECV and LOCAL events */
	for (int64_t e = 0; e < s->nev; e++)
		nw += s->ev[e].kind == TOPO__EV_RECV ||
		      s->ev[e].kind == TOPO__EV_LOCAL;
	w = topo__mallocarray((size_t)nw + 1, sizeof(*w));
	alone = topo__calloc((size_t)nw + 1, 1);
	if (w == NULL || alone == NULL) {
		topo__free(w);
		topo__free(alone);
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	}
	for (int64_t e = 0; e < s->nev; e++) {
		const struct topo__ev *v = &s->ev[e];
		const struct topo__msg *m;

		if (v->kind != TOPO__EV_RECV && v->kind != TOPO__EV_LOCAL)
			continue;
		m = &p->msg[v->msg];
		w[k].key =
		    (int64_t)topo__mx_lidx(x, m->dst) * TOPO__NBUF + m->dbuf;
		w[k].lo = m->doff;
		w[k].hi = m->doff + m->len;
		/* the event, negated for a LOCAL one (never direct) */
		w[k].msg = v->kind == TOPO__EV_RECV ? e : -1;
		k++;
	}
	qsort(w, (size_t)nw, sizeof(*w), wrange_cmp);
	for (int64_t i = 0; i < nw; i++) {
		bool ok = w[i].hi > w[i].lo;

		if (i > 0 && w[i - 1].key == w[i].key && w[i - 1].hi > w[i].lo)
			ok = false;
		if (i + 1 < nw && w[i + 1].key == w[i].key &&
		    w[i + 1].lo < w[i].hi)
			ok = false;
		alone[i] = ok;
	}
	/* a range that overlaps one further back than its neighbour: sweep
	 * the largest end so far */
	for (int64_t i = 0, hi = 0; i < nw; i++) {
		if (i == 0 || w[i - 1].key != w[i].key)
			hi = INT64_MIN;
		if (hi > w[i].lo)
			alone[i] = 0;
		if (w[i].hi > hi)
			hi = w[i].hi;
	}
	for (int64_t i = 0; i < nw; i++) {
		int64_t e = w[i].msg;

		if (e >= 0 && alone[i] &&
		    p->msg[s->ev[e].msg].kind == TOPO__COPY)
			x->direct[e] = 1;
	}
	topo__free(w);
	topo__free(alone);
	return 0;
}

/* Whether event f of the schedule is a combine a copy l may be fused
 * with: the APPLY of a REDUCE into exactly l's bytes, not claimed by
 * another copy. */
static bool combine_of(const struct topo__mx *x, int64_t l, int64_t f)
{
	const struct topo_plan *p = x->p;
	const struct topo__sched *s = x->s;
	const struct topo__msg *c = &p->msg[s->ev[l].msg],
			       *m = &p->msg[s->ev[f].msg];

	return s->ev[f].kind == TOPO__EV_APPLY && f > 0 && !x->direct[f - 1] &&
	       m->kind == TOPO__REDUCE && m->dst == c->dst &&
	       m->dbuf == c->dbuf && m->doff == c->doff && m->len == c->len &&
	       x->lpart[f] < 0;
}

/* Marks the copies that may wait for their first combine (engine.h): a
 * LOCAL copy whose successors are such combines, and events that wait
 * for one of those combines too (the accumulator's reader after it, say).
 * Parked, such a copy holds back only events that come after a combine
 * anyway; every path from it passes through one, so a combine with no
 * other wait on the copy's side exists, and its receipt wakes the copy. */
static void find_fusable(struct topo__mx *x)
{
	const struct topo_plan *p = x->p;
	const struct topo__sched *s = x->s;

	for (int64_t e = 0; e < s->nev; e++)
		x->lpart[e] = -1;
	for (int64_t e = 0; e < s->nev; e++) {
		const struct topo__msg *l = &p->msg[s->ev[e].msg];
		bool ok = s->ev[e].kind == TOPO__EV_LOCAL &&
			  l->kind == TOPO__COPY && l->len > 0;
		int64_t ncomb = 0;

		for (int64_t k = s->succ_off[e]; ok && k < s->succ_off[e + 1];
		     k++)
			ncomb += combine_of(x, e, s->succ[k]);
		for (int64_t k = s->succ_off[e];
		     ok && ncomb > 0 && k < s->succ_off[e + 1]; k++) {
			int64_t g = s->succ[k];
			bool after = combine_of(x, e, g);

			/* g also waits for one of the combines */
			for (int64_t j = s->succ_off[e];
			     !after && j < s->succ_off[e + 1]; j++) {
				int64_t f = s->succ[j];

				if (!combine_of(x, e, f))
					continue;
				for (int64_t i = s->succ_off[f];
				     !after && i < s->succ_off[f + 1]; i++)
					after = s->succ[i] == g;
			}
			ok = after;
		}
		if (!ok || ncomb == 0)
			continue;
		x->fusable[e] = 1;
		for (int64_t k = s->succ_off[e]; k < s->succ_off[e + 1]; k++)
			if (combine_of(x, e, s->succ[k]))
				x->lpart[s->succ[k]] = e;
	}
}

/* The per-event arrays of x's nev events; false when one could not be
 * allocated. */
static bool alloc_events(struct topo__mx *x, int64_t nev)
{
	x->soff = topo__mallocarray((size_t)nev + 1, sizeof(int64_t));
	x->direct = topo__calloc((size_t)nev + 1, 1);
	x->lpart = topo__mallocarray((size_t)nev + 1, sizeof(int64_t));
	x->fusable = topo__calloc((size_t)nev + 1, 1);
	x->parked = topo__calloc((size_t)nev + 1, 1);
	x->predone = topo__calloc((size_t)nev + 1, 1);
	x->nwait0 = topo__mallocarray((size_t)nev + 1, sizeof(int32_t));
	x->nwait = topo__mallocarray((size_t)nev + 1, sizeof(int32_t));
	x->ready = topo__mallocarray((size_t)nev + 1, sizeof(int64_t));
	x->req = topo__mallocarray((size_t)nev + 1, sizeof(MPI_Request));
	x->reqev = topo__mallocarray((size_t)nev + 1, sizeof(int64_t));
	x->idx = topo__mallocarray((size_t)nev + 1, sizeof(int));
	x->st = topo__mallocarray((size_t)nev + 1, sizeof(MPI_Status));
	return x->soff != NULL && x->direct != NULL && x->lpart != NULL &&
	       x->fusable != NULL && x->parked != NULL && x->predone != NULL &&
	       x->nwait0 != NULL && x->nwait != NULL && x->ready != NULL &&
	       x->req != NULL && x->reqev != NULL && x->idx != NULL &&
	       x->st != NULL;
}

/* What topo__mx_quiesce needs: the counts per process and room for the
 * largest message this host receives.  Returns 0, TOPO_ENOMEM (err not
 * set) or TOPO_EIO. */
static int alloc_quiesce(struct topo__mx *x, MPI_Comm comm, topo_error *err)
{
	const struct topo_plan *p = x->p;
	const struct topo__sched *s = x->s;

	if (PMPI_Comm_size(comm, &x->nprocs) != MPI_SUCCESS)
		return topo__err(err, TOPO_EIO, NULL, NULL,
				 "not an MPI communicator");
	x->sent = topo__calloc((size_t)x->nprocs, sizeof(int64_t));
	x->got = topo__calloc((size_t)x->nprocs, sizeof(int64_t));
	x->want = topo__calloc((size_t)x->nprocs, sizeof(int64_t));
	x->dropcap = x->kw * 8;
	for (int64_t e = 0; e < s->nev; e++)
		if (s->ev[e].kind == TOPO__EV_RECV &&
		    p->msg[s->ev[e].msg].len > x->dropcap)
			x->dropcap = (int)p->msg[s->ev[e].msg].len;
	x->drop = topo__malloc((size_t)x->dropcap + 1);
	if (x->sent == NULL || x->got == NULL || x->want == NULL ||
	    x->drop == NULL)
		return TOPO_ENOMEM;
	return 0;
}

/* The host's members (local, lidx, mine), each receive's place in the
 * staging area, and the events' first waits. */
static int lay_out(struct topo__mx *x, const int32_t *host, topo_error *err)
{
	const struct topo_plan *p = x->p;
	const struct topo__sched *s = x->s;
	int64_t pos = (int64_t)((ALIGN - (uintptr_t)x->stage % ALIGN) % ALIGN);
	int32_t k = 0;

	for (int32_t i = 0; host != NULL && i < p->n; i++) {
		x->lidx[i] = -1;
		if (host[i] != x->rank)
			continue;
		x->lidx[i] = k;
		x->local[k++] = i;
		x->mine[i] = 1;
	}
	if (host == NULL && x->nlocal > 0)
		x->local[0] = x->rank;
	for (int64_t e = 0; e < s->nev; e++) {
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
					 "two-sided schedule: receive event "
					 "%lld waits for %d others",
					 (long long)e, (int)v->nwait);
	}
	return 0;
}

int topo__mx_setup(struct topo__mx *x, const struct topo_plan *p,
		   const struct topo__sched *s, const int32_t *host,
		   MPI_Comm comm, int rank, bool counters, bool knowledge,
		   int maxerr, bool direct_ok, bool quiesce, topo_error *err)
{
	int64_t nev = s->nev, stage = 0;
	bool ok;
	int rc;

	x->p = p;
	x->s = s;
	x->comm = comm;
	x->tag0 = 0;
	x->peer = NULL;
	x->rank = rank;
	x->members = p->t != NULL ? p->t->g->members : NULL;
	x->mpi_rc = MPI_SUCCESS;
	x->nlocal = 0;
	x->me = rank;
	if (host == NULL && (counters || knowledge))
		return topo__err(err, TOPO_EINVAL, NULL, NULL,
				 "counters and knowledge need the hosts");
	if (host == NULL)
		x->nlocal = rank >= 0 && rank < p->n;
	for (int32_t i = 0; host != NULL && i < p->n; i++)
		x->nlocal += host[i] == rank;
	x->kw =
	    knowledge && p->params.op == TOPO_OP_BARRIER ? (p->n + 63) / 64 : 0;
	for (int64_t e = 0; e < nev; e++)
		if (s->ev[e].kind == TOPO__EV_RECV)
			stage += round_up(p->msg[s->ev[e].msg].len);
	x->local = topo__mallocarray((size_t)x->nlocal + 1, sizeof(int32_t));
	if (host != NULL) {
		x->lidx = topo__mallocarray((size_t)p->n, sizeof(int32_t));
		x->mine = topo__calloc((size_t)p->n, 1);
	}
	x->bp = topo__calloc((size_t)x->nlocal * TOPO__NBUF + 1,
			     sizeof(unsigned char *));
	x->stage = topo__malloc((size_t)stage + ALIGN);
	ok = alloc_events(x, nev) && x->local != NULL && x->bp != NULL &&
	     x->stage != NULL &&
	     (host == NULL || (x->lidx != NULL && x->mine != NULL));
	if (counters) {
		x->slot_count =
		    topo__mallocarray((size_t)p->nslots + 1, sizeof(int64_t));
		ok &= x->slot_count != NULL;
	}
	if (quiesce) {
		rc = alloc_quiesce(x, comm, err);
		if (rc == TOPO_EIO)
			return rc;
		ok &= rc == 0;
	}
	x->maxerr = maxerr;
	if (maxerr > 0) {
		x->err = topo__mallocarray((size_t)maxerr, sizeof(*x->err));
		ok &= x->err != NULL;
	}
	if (x->kw > 0) {
		x->known = topo__mallocarray((size_t)nev * (size_t)x->kw + 1,
					     sizeof(uint64_t));
		ok &= x->known != NULL;
	}
	if (!ok)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	rc = lay_out(x, host, err);
	if (rc != 0)
		return rc;
	if (direct_ok && x->kw == 0 && find_direct(x, err) != 0)
		return TOPO_ENOMEM;
	if (x->kw == 0)
		find_fusable(x);
	else
		for (int64_t e = 0; e < nev; e++)
			x->lpart[e] = -1;
	return 0;
}

void topo__mx_teardown(struct topo__mx *x)
{
	topo__free(x->local);
	topo__free(x->lidx);
	topo__free(x->mine);
	topo__free(x->bp);
	topo__free(x->stage);
	topo__free(x->soff);
	topo__free(x->direct);
	topo__free(x->lpart);
	topo__free(x->fusable);
	topo__free(x->parked);
	topo__free(x->predone);
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
	topo__free(x->sent);
	topo__free(x->got);
	topo__free(x->want);
	topo__free(x->drop);
	memset(x, 0, sizeof(*x));
}

void topo__mx_reset(struct topo__mx *x)
{
	const struct topo_plan *p = x->p;

	/* Counters of members elsewhere are theirs to check. */
	for (int64_t s = 0; x->slot_count != NULL && s < p->nslots; s++)
		x->slot_count[s] =
		    x->mine[p->slot_member[s]] ? 0 : p->slot_expect[s];
	memcpy(x->nwait, x->nwait0, (size_t)x->s->nev * sizeof(int32_t));
	memset(x->parked, 0, (size_t)x->s->nev);
	memset(x->predone, 0, (size_t)x->s->nev);
	x->fused = 0;
	if (x->kw > 0)
		memset(x->known, 0,
		       (size_t)x->s->nev * (size_t)x->kw * sizeof(uint64_t));
	x->nready = 0;
	x->ndone = 0;
	x->nact = 0;
	x->mpi_rc = MPI_SUCCESS;
}

static uint64_t *known(struct topo__mx *x, int64_t e)
{
	return x->known + e * x->kw;
}

/* Event e is done: its successors learn what it knew, and those it was
 * the last wait of become ready. */
static void done(struct topo__mx *x, int64_t e)
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
		if (--x->nwait[f] == 0) {
			x->ready[x->nready++] = f;
		} else if (x->nwait[f] == 1 && x->lpart[f] >= 0 &&
			   x->parked[x->lpart[f]]) {
			/* all but the parked copy: f's bytes are in, and the
			 * copy runs now, fused with f */
			x->parked[x->lpart[f]] = 0;
			x->ready[x->nready++] = x->lpart[f];
		}
	}
}

static void track(struct topo__mx *x, MPI_Request r, int64_t e)
{
	const struct topo__ev *v = &x->s->ev[e];

	if (x->sent != NULL &&
	    (v->kind == TOPO__EV_SEND || v->kind == TOPO__EV_ACK_SEND))
		x->sent[v->peer]++;
	x->req[x->nact] = r;
	x->reqev[x->nact] = e;
	x->nact++;
}

/* Drops the completed requests (MPI_REQUEST_NULL) from the list. */
static void compact(struct topo__mx *x)
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

static int mpi_failed(struct topo__mx *x, int rc)
{
	if (rc != MPI_SUCCESS && x->mpi_rc == MPI_SUCCESS)
		x->mpi_rc = rc;
	return rc != MPI_SUCCESS;
}

/* MPI's rule: before bytes of member r's buffer b in [lo, hi) are
 * written, the sends reading them complete. */
static int before_write(struct topo__mx *x, int32_t r, int b, int64_t lo,
			int64_t hi)
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
		if (mpi_failed(x, PMPI_Wait(&x->req[i], MPI_STATUS_IGNORE)))
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
	if (src && m->soff > topo__bufsize(p, m->sbuf, m->src) - m->len)
		return false;
	return !dst || m->doff <= topo__bufsize(p, m->dbuf, m->dst) - m->len;
}

/* m's bytes are in their destination: its receipt slot counts it. */
static void received(struct topo__mx *x, const struct topo__msg *m)
{
	if (m->slot >= 0 && x->slot_count != NULL)
		x->slot_count[m->slot]++;
}

/* Writes m's bytes from src into its destination here. */
static int apply(struct topo__mx *x, const struct topo__msg *m,
		 const unsigned char *src)
{
	const struct topo_plan *p = x->p;
	unsigned char *dst;

	if (before_write(x, m->dst, m->dbuf, m->doff, m->doff + m->len) != 0)
		return -1;
	dst = topo__mx_buffer(x, m->dst, m->dbuf) + m->doff;
	if (m->kind == TOPO__COPY) {
		if (dst != src)
			memmove(dst, src, (size_t)m->len);
	} else {
		topo__reduce(p->params.type, p->params.redop, dst, src,
			     (size_t)m->len);
	}
	received(x, m);
	return 0;
}

/* The endpoint of member r, for a message (the rank where the plan is a
 * member's part, without the group). */
static int32_t endpoint(const struct topo__mx *x, int32_t r)
{
	return x->members != NULL ? x->members[r] : r;
}

static void bad_message(struct topo__mx *x, int64_t mi)
{
	const struct topo__msg *m = &x->p->msg[mi];

	topo__mx_error(x, endpoint(x, m->dst), "failed",
		       "message %lld from endpoint %d to endpoint %d could not "
		       "be delivered: %s",
		       (long long)mi, endpoint(x, m->src), endpoint(x, m->dst),
		       topo_strerror(TOPO_EINVAL));
}

/* Copy event l (fusable): with a successor whose received bytes are in,
 * acc = copied OP received in one pass; with none, parked (returns 1)
 * until done() finds one.  Returns 0, 1, or -1 (an MPI call failed, or
 * the successor's message lies outside its buffers). */
static int fuse(struct topo__mx *x, int64_t l)
{
	const struct topo_plan *p = x->p;
	const struct topo__sched *s = x->s;
	const struct topo__msg *c = &p->msg[s->ev[l].msg], *m;
	int64_t f = -1;
	unsigned char *dst;

	for (int64_t k = s->succ_off[l]; k < s->succ_off[l + 1] && f < 0; k++)
		if (x->lpart[s->succ[k]] == l && x->nwait[s->succ[k]] == 1)
			f = s->succ[k];
	if (f < 0) {
		x->parked[l] = 1;
		return 1;
	}
	m = &p->msg[s->ev[f].msg];
	if (!in_bounds(p, m, false, true)) {
		bad_message(x, s->ev[f].msg);
		return -1;
	}
	if (before_write(x, c->dst, c->dbuf, c->doff, c->doff + c->len) != 0)
		return -1;
	dst = topo__mx_buffer(x, c->dst, c->dbuf) + c->doff;
	topo__reduce3(p->params.type, p->params.redop, dst,
		      topo__mx_buffer(x, c->src, c->sbuf) + c->soff,
		      x->stage + x->soff[f - 1], (size_t)c->len);
	received(x, c);
	received(x, m);
	x->predone[f] = 1;
	x->fused++;
	return 0;
}

/* Starts a ready event.  Returns 0, or -1 when the run cannot go on (an
 * MPI call failed, or a message lies outside its buffers). */
static int start(struct topo__mx *x, int64_t e)
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
			       ? PMPI_Isend(known(x, e), x->kw * 8, MPI_BYTE,
					   PEER(x, v), TAG(x, v), x->comm, &r)
			       : PMPI_Isend(topo__mx_buffer(x, m->src, m->sbuf) +
					       m->soff,
					   (int)m->len, MPI_BYTE, PEER(x, v),
					   TAG(x, v), x->comm, &r)))
			return -1;
		track(x, r, e);
		break;
	case TOPO__EV_ACK_SEND:
		if (mpi_failed(x, PMPI_Isend(x->kw > 0 ? known(x, e) : NULL,
					    x->kw * 8, MPI_BYTE, PEER(x, v),
					    TAG(x, v), x->comm, &r)))
			return -1;
		track(x, r, e);
		break;
	case TOPO__EV_APPLY:
		if (!in_bounds(p, m, false, true)) {
			bad_message(x, v->msg);
			return -1;
		}
		/* the RECV is the event before (sched.c); a direct one has
		 * written the bytes already, and so has a fused copy */
		if (x->predone[e]) {
			x->predone[e] = 0;
		} else if (x->direct[e - 1]) {
			received(x, m);
		} else if (apply(x, m, x->stage + x->soff[e - 1]) != 0) {
			return -1;
		}
		break;
	case TOPO__EV_LOCAL:
		if (!in_bounds(p, m, true, true)) {
			bad_message(x, v->msg);
			return -1;
		}
		if (x->fusable[e]) {
			int rc = fuse(x, e);

			if (rc > 0)
				return 0; /* parked */
			if (rc < 0)
				return -1;
		} else if (apply(x, m, topo__mx_buffer(x, m->src, m->sbuf) +
					   m->soff) != 0) {
			return -1;
		}
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
				topo__mx_error(
				    x, endpoint(x, m->src), "left early",
				    "left the barrier before it could know "
				    "that endpoint %d entered it",
				    (int)endpoint(x, missing));
		}
		break;
	default:
		return 0; /* receives are posted, not started */
	}
	done(x, e);
	return 0;
}

void topo__mx_abandon(struct topo__mx *x)
{
	/* receives cancelled, sends freed (MPI completes them when their
	 * receivers take them, or drops them at MPI_Finalize) */
	for (int i = 0; i < x->nact; i++) {
		const struct topo__ev *v = &x->s->ev[x->reqev[i]];

		if (x->req[i] == MPI_REQUEST_NULL)
			continue;
		if (v->kind == TOPO__EV_RECV || v->kind == TOPO__EV_ACK_RECV) {
			PMPI_Cancel(&x->req[i]);
			PMPI_Wait(&x->req[i], MPI_STATUS_IGNORE);
		} else {
			PMPI_Request_free(&x->req[i]);
		}
	}
	x->nact = 0;
}

int topo__mx_quiesce(struct topo__mx *x)
{
	int failed = 0;

	/* receives cancelled; one that matched first counts as taken */
	for (int i = 0; i < x->nact; i++) {
		const struct topo__ev *v = &x->s->ev[x->reqev[i]];
		MPI_Status st;
		int cancelled = 0;

		if (x->req[i] == MPI_REQUEST_NULL ||
		    (v->kind != TOPO__EV_RECV && v->kind != TOPO__EV_ACK_RECV))
			continue;
		failed |= mpi_failed(x, PMPI_Cancel(&x->req[i]));
		failed |= mpi_failed(x, PMPI_Wait(&x->req[i], &st));
		failed |= mpi_failed(x, PMPI_Test_cancelled(&st, &cancelled));
		if (!cancelled)
			x->got[v->peer]++;
	}
	/* What each peer sent here, against what was taken: the rest is
	 * received and dropped, so that no message outlives the run and
	 * every send completes.  The counts are of all runs: every earlier
	 * one ended with each message taken. */
	if (mpi_failed(x, PMPI_Alltoall(x->sent, 1, MPI_INT64_T, x->want, 1,
				       MPI_INT64_T, x->comm)))
		return -1;
	for (int q = 0; q < x->nprocs; q++) {
		while (x->got[q] < x->want[q]) {
			MPI_Message msg;
			MPI_Status st;
			int n = 0, rc;

			if (mpi_failed(x, PMPI_Mprobe(x->peer != NULL
							  ? x->peer[q]
							  : q,
						      MPI_ANY_TAG, x->comm,
						      &msg, &st)) ||
			    mpi_failed(x, PMPI_Get_count(&st, MPI_BYTE, &n)))
				return -1;
			/* larger than any message the plan sends here (a
			 * peer with another plan): taken truncated */
			rc = PMPI_Mrecv(x->drop, n < x->dropcap ? n : x->dropcap,
				       MPI_BYTE, &msg, MPI_STATUS_IGNORE);
			if (rc != MPI_SUCCESS && n <= x->dropcap) {
				mpi_failed(x, rc);
				return -1;
			}
			x->got[q]++;
		}
	}
	/* the sends: taken by now */
	for (int i = 0; i < x->nact; i++)
		if (x->req[i] != MPI_REQUEST_NULL)
			failed |= mpi_failed(
			    x, PMPI_Wait(&x->req[i], MPI_STATUS_IGNORE));
	x->nact = 0;
	return failed ? -1 : 0;
}

/* Posts the receive of event e. */
static int post(struct topo__mx *x, int64_t e)
{
	const struct topo__ev *v = &x->s->ev[e];
	const struct topo__msg *m = &x->p->msg[v->msg];
	MPI_Request r;
	int rc;

	if (v->kind == TOPO__EV_ACK_RECV)
		rc = PMPI_Irecv(x->kw > 0 ? known(x, e) : NULL, x->kw * 8,
			       MPI_BYTE, PEER(x, v), TAG(x, v), x->comm, &r);
	else if (x->kw > 0 && m->len == 0)
		rc = PMPI_Irecv(known(x, e), x->kw * 8, MPI_BYTE, PEER(x, v),
			       TAG(x, v), x->comm, &r);
	else if (!x->direct[e])
		rc = PMPI_Irecv(x->stage + x->soff[e], (int)m->len, MPI_BYTE,
			       PEER(x, v), TAG(x, v), x->comm, &r);
	else if (in_bounds(x->p, m, false, true))
		rc = PMPI_Irecv(topo__mx_buffer(x, m->dst, m->dbuf) + m->doff,
			       (int)m->len, MPI_BYTE, PEER(x, v), TAG(x, v),
			       x->comm, &r);
	else {
		bad_message(x, v->msg);
		return -1;
	}
	if (mpi_failed(x, rc))
		return -1;
	track(x, r, e);
	return 0;
}

int topo__mx_run(struct topo__mx *x, double deadline)
{
	const struct topo__sched *s = x->s;
	int spins = 0;

	/* Every receive first. */
	for (int64_t e = 0; e < s->nev; e++) {
		const struct topo__ev *v = &s->ev[e];

		if (v->kind == TOPO__EV_RECV || v->kind == TOPO__EV_ACK_RECV) {
			if (post(x, e) != 0)
				return -1;
		} else if (x->nwait[e] == 0) {
			x->ready[x->nready++] = e;
		}
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
				topo__mx_error(x, -1, "failed",
					       "the schedule stalled: %lld of "
					       "%lld events could not start",
					       (long long)(s->nev - x->ndone),
					       (long long)s->nev);
				return -1;
			}
			break;
		}
		if (mpi_failed(x, x->block ? PMPI_Waitsome(x->nact, x->req, &n,
							  x->idx, x->st)
					   : PMPI_Testsome(x->nact, x->req, &n,
							  x->idx, x->st)))
			return -1;
		if (n == MPI_UNDEFINED)
			n = 0;
		for (int i = 0; i < n; i++) {
			int64_t e = x->reqev[x->idx[i]];
			const struct topo__ev *v = &s->ev[e];

			if (v->kind == TOPO__EV_RECV ||
			    v->kind == TOPO__EV_ACK_RECV) {
				if (x->got != NULL)
					x->got[v->peer]++;
				done(x, e);
			}
		}
		if (n > 0) {
			compact(x);
			spins = 0;
			continue;
		}
		/* Nothing completed: look at the clock now and then, and
		 * give the CPU away when asked (a job of more processes
		 * than CPUs). */
		if (++spins % 64 == 0) {
			if (topo__now() >= deadline)
				return 1;
			if (x->yield)
				sched_yield();
		}
	}
	return 0;
}
