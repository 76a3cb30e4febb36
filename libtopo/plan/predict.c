/*
 * predict.c - what a plan costs on the described machine: a discrete-event
 * simulation of the plan under LogGP (collc(7) "Cost model", collrun(1)
 * PREDICTION), with the semantics of LogGOPSim (Hoefler, Schneider and
 * Lumsdaine, HPDC 2010; spcl/LogGOPSim) so that the two agree on the same
 * schedule (topo_plan_write_goal).
 *
 * Every member has a CPU and a network port with a send side and a
 * receive side.  A plan message from a to b (a != b) is three operations,
 * as in a GOAL schedule: a send on a, a receive on b, and, when the message
 * is reduced into b's buffer, a computation on b after the receive.  A
 * member's own step (a == b) is one computation.  The costs of a message
 * are its edge class's (shm within a node, net between nodes; a net edge
 * of k network hops has latency L + (k - 1) hop):
 *   send, at time t when a's CPU and send port are free: CPU busy until
 *     t + o, send port until t + g + (s - 1) G; the first byte arrives at
 *     t + o + L; the send is complete at once (eager: every message);
 *   arrival, once b's CPU and receive port are free: CPU busy for
 *     o + (s - 1) G, receive port for g + (s - 1) G; the receive is complete
 *     when that processing is done and b has posted the receive (all the
 *     receive's own dependencies met);
 *   a computation occupies the CPU: s x reduce[type] for a reduction,
 *     s x shm.G for a member's own copy.
 * An operation whose dependencies are met becomes ready at its member's
 * next free CPU time (and send port, for a send); events are processed in
 * time order, ties in the order they were made, as LogGOPSim does.  A plan
 * dependency "m waits for k" is a dependency of m's send on k's operation
 * on m's sender (k's send, receive or step there), or, when k is at m's
 * receiver (as when a parent's first copy must precede a child's
 * reduction into it), of m's receive.
 *
 * The critical path is kept as one cause per operation (the operation that
 * held it up: a dependency, the CPU, a port, or the message's own send) and
 * the last holder of each member's CPU and ports; it is read backwards from
 * the member that finishes last, and its times are recomputed forwards from
 * the causes, so no time per operation is stored.
 *
 * Memory per message: a 4-byte wait count, a flags byte and two 4-byte
 * causes (three for plans with reductions over the network, and a second
 * wait count for plans with dependencies at receivers); per member, three
 * times and three holders (36 bytes); and the event queue, which holds
 * the operations ready or in flight.
 */
#define TOPO_INTERNAL
#include "predict_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Operations and events */

/* An operation of message m: (m << 2) | type.  A message's arrival
 * occupies its receiver (OP_ARR) and completes its receive (OP_RECV),
 * then or, when the receive is posted later, at the posting. */
enum {
	OP_SEND = TOPO__OP_SEND,
	OP_ARR = TOPO__OP_ARR,
	OP_CALC = TOPO__OP_CALC,
	OP_RECV = TOPO__OP_RECV
};
/* Events: the ready send or computation, the posting of a receive, the
 * arrival of a message; (m << 2) | type. */
enum { EV_SEND = 0, EV_POST = 1, EV_CALC = 2, EV_ARRIVE = 3 };

#define ID(m, type) ((uint32_t)(m) << 2 | (uint32_t)(type))
#define ID_MSG(id) ((int64_t)((id) >> 2))
#define ID_TYPE(id) ((int)((id)&3))
#define NO_OP UINT32_MAX

/* Why an operation started when it did (2 bits). */
enum { WHY_DEP = 0, WHY_CPU = 1, WHY_PORT = 2, WHY_ARRIVE = 3 };

/* Flags of a message.  Its causes: slot 0 its send (or its member's own
 * step), 1 the processing of its arrival, 2 the reduction after its
 * receive, 3 the posting of its receive; bits 4 + 2 x slot hold why. */
#define F_ARRIVED 0x01	/* the arrival has been processed at the receiver */
#define F_POSTED 0x02	/* the receive is posted */
#define F_LATEPOST 0x04 /* ... after the arrival: it completed the receive */
#define F_WAITED 0x08	/* the arrival waited for the receiver */
#define F_WHY(slot) (4 + 2 * (slot))
#define F_INHEAP 0x1000 /* waiting in its member's heap (struct wait) */
#define F_SENDDEP 0x2000 /* something waits for its send itself */
#define F_NET 0x4000	  /* a net edge (set when it is sent) */

/*
 * Operations waiting for their member's CPU or ports.  LogGOPSim puts an
 * operation that finds them busy back into the event queue, to be tried
 * again when they free, and at that moment the first in insertion order
 * (ts) of those tried gets them: so k sends ready at once at one member
 * cost k^2 / 2 events.  Here the operations of one kind waiting at one
 * member (sends, arrivals, computations) wait in a pairing heap by ts, and
 * only its root has an event in the queue: the same order (a waiting
 * operation's retry time is its member's free time, the same for all of
 * them, so the smallest ts goes first) at about one event per operation.
 */
enum { W_SEND = 0, W_ARR = 1, W_CALC = 2 };
#define NONE UINT32_MAX

/* A waiting operation: a node of its heap, from a pool. */
struct pnode {
	uint32_t msg, ts;
	uint32_t child, sib; /* pool indices */
};

struct wentry {
	int32_t member; /* -1: empty slot */
	uint32_t root[3];
	uint32_t gen[3]; /* the root's event's number */
};

/* Members with waiting operations (open addressing, linear probing). */
struct wmap {
	struct wentry *v;
	size_t cap, n;
	int bits; /* cap = 2^bits */
};

struct event {
	double t;
	uint32_t ts; /* insertion order, kept by a re-insertion */
	uint32_t id;
	/* the event of a waiting heap's root: its number, which the heap
	 * keeps (struct wentry), so that an event left behind when the
	 * root changed is known and dropped; 0 otherwise */
	uint32_t gen;
};

/* A 4-ary min-heap of events by (t, ts). */
struct heap {
	struct event *v;
	size_t n, cap;
};

static bool ev_less(const struct event *a, const struct event *b)
{
	return a->t < b->t || (a->t == b->t && a->ts < b->ts);
}

static int heap_push(struct heap *h, struct event e)
{
	size_t i;

	if (h->n == h->cap) {
		size_t cap = h->cap != 0 ? 2 * h->cap : 4096;
		struct event *v = topo__realloc(h->v, cap * sizeof(*v));

		if (v == NULL)
			return TOPO_ENOMEM;
		h->v = v;
		h->cap = cap;
	}
	i = h->n++;
	while (i > 0) {
		size_t up = (i - 1) / 4;

		if (!ev_less(&e, &h->v[up]))
			break;
		h->v[i] = h->v[up];
		i = up;
	}
	h->v[i] = e;
	return 0;
}

static struct event heap_pop(struct heap *h)
{
	struct event top = h->v[0], last = h->v[--h->n];
	size_t i = 0;

	for (;;) {
		size_t c = 4 * i + 1, best = c;

		if (c >= h->n)
			break;
		for (size_t k = c + 1; k < c + 4 && k < h->n; k++)
			if (ev_less(&h->v[k], &h->v[best]))
				best = k;
		if (!ev_less(&h->v[best], &last))
			break;
		h->v[i] = h->v[best];
		i = best;
	}
	if (h->n > 0)
		h->v[i] = last;
	return top;
}

/* ---------------------------------------------------------------------- */
/* The prediction */

/* A member's CPU and ports: when each is next free and the operation
 * that holds it (for the critical path: set by the operation that makes
 * the CPU or port busy, so never read before); its node. */
struct member {
	double cpu, sport, rport;
	uint32_t hcpu, hsport, hrport;
	int32_t node;
};

struct topo_prediction {
	struct topo_costs costs;
	int32_t n;
	/* [n] the members' CPUs and ports at the end: each member finishes
	 * when its CPU is last free (taken over from the simulation, not
	 * copied: 8,388,608 members would copy 64 MiB) */
	struct member *finish;
	double total;	/* ns */
	int32_t last;	 /* rank */
	int32_t last_ep; /* its endpoint id */
	int64_t events;
	int64_t nsteps;
	struct topo_path_step *steps;
	int64_t msgs[2], bytes[2]; /* transport messages: [0] shm, [1] net */
};

/* A ready operation of the member a dissemination is running. */
struct lop {
	uint32_t msg, ts;
	double ready;
};

struct sim {
	const struct topo_plan *p;
	const topo_machine *m;
	const int32_t *members;
	struct topo_costs c;
	int64_t M;
	int32_t n;
	/* members: what an event touches of a member on one cache line */
	struct member *mem;
	/* messages */
	int32_t *wsend, *wrecv; /* wrecv NULL: no dependency at a receiver */
	uint16_t *flags;
	/* [slot][m]: [2] NULL without reductions over the network, [3]
	 * without dependencies at receivers */
	uint32_t *cause[4];
	/* the tree network's ancestors for deep trees (binary lifting) */
	int32_t **up;
	int uplevels;
	struct heap heap;
	uint32_t ts, gen;
	/* the waiting operations: per message its pairing-heap links and
	 * ts; the members that have some */
	struct pnode *pool;
	uint32_t npool, poolcap, pfree;
	struct wmap wm;
	struct wentry solo; /* a dissemination's one member at a time */
	/* A dissemination (see simulate): arrivals wait in a ring, not in
	 * the queue, and are taken in the order made (which is the plan's
	 * order, and memory's, for a flood). */
	bool dissem;
	struct event *ring;
	size_t rhead, rlen, rcap; /* rcap a power of two */
	/* ... and a member's ready sends and computations, in order */
	struct lop *lq[2];
	size_t lhead[2], llen[2], lcap[2];
	int64_t events;
	int64_t msgs[2], bytes[2]; /* sent: [0] shm, [1] net */
	/* ready operations made by one completion, sorted before queueing */
	uint32_t *freed;
	size_t nfreed, freedcap;
	double deadline, next_progress;
	const struct topo_predict_params *params;
	struct topo__populate populate;
	/* When each operation starts, for the SimGrid writer
	 * (topo__predict_times): [3m] message m's send or step, [3m + 1] the
	 * processing of its arrival, [3m + 2] its reduction; NULL: not
	 * kept. */
	double *times;
};

/* Operation `slot` of message m starts at t (struct sim's times). */
static void note(struct sim *s, int64_t m, int slot, double t)
{
	if (s->times != NULL)
		s->times[3 * m + slot] = t;
}

static int32_t node_of(const struct sim *s, int32_t rank)
{
	return s->mem[rank].node;
}

/* Network hops between two nodes (predict_internal.h). */
static int64_t hops(const struct sim *s, int32_t a, int32_t b)
{
	return topo__hops(s->m, s->up, s->uplevels, a, b);
}

/* The LogGP parameters of message i and its latency. */
static const struct topo_loggp *edge(const struct sim *s, int64_t i,
				     double *latency)
{
	int32_t a = node_of(s, topo__msg_src(s->p, i));
	int32_t b = node_of(s, topo__msg_dst(s->p, i));

	return topo__edge_costs(&s->c, a, b, a == b ? 0 : hops(s, a, b),
				latency);
}

/* Counts a transport message of len bytes sent over an edge of class c
 * (topo_prediction_messages). */
static void sent(struct sim *s, const struct topo_loggp *c, int64_t len)
{
	int net = c == &s->c.net;

	s->msgs[net]++;
	s->bytes[net] += len;
}

/* The LogGP parameters of message i's class, without its latency. */
static const struct topo_loggp *edge_class(const struct sim *s, int64_t i)
{
	return node_of(s, topo__msg_src(s->p, i)) ==
		       node_of(s, topo__msg_dst(s->p, i))
		   ? &s->c.shm
		   : &s->c.net;
}

/* (s - 1) x G, never negative (a message of 0 bytes costs what one of 1
 * does). */
static double per_byte(int64_t len, double G)
{
	return len > 1 ? (double)(len - 1) * G : 0;
}

/* The CPU time of computation i: its reduction, or a member's own copy. */
static double calc_time(const struct sim *s, int64_t i)
{
	return topo__calc_ns(s->p, &s->c, i);
}

/* Where the dependency "m waits for k" lives (predict_internal.h). */
static int dep_at(const struct topo_plan *p, int64_t k, int64_t m,
		  int32_t *x, bool *recv_side)
{
	return topo__dep_at(p, k, m, x, recv_side);
}

static void set_why(struct sim *s, int64_t m, int slot, int why,
		    uint32_t pred)
{
	if (s->cause[slot] == NULL)
		return;
	s->cause[slot][m] = ~pred; /* zeroed memory reads as NO_OP */
	s->flags[m] = (uint16_t)((s->flags[m] & ~(3u << F_WHY(slot))) |
				 (unsigned)why << F_WHY(slot));
}

static int get_why(const struct sim *s, int64_t m, int slot)
{
	return s->flags[m] >> F_WHY(slot) & 3;
}

/* The cause slot of a ready event. */
static int event_slot(const struct sim *s, uint32_t id)
{
	int64_t m = ID_MSG(id);

	switch (ID_TYPE(id)) {
	case EV_POST:
		return 3;
	case EV_CALC:
		return topo__msg_src(s->p, m) != topo__msg_dst(s->p, m) ? 2 : 0;
	case EV_ARRIVE:
		return 1;
	default:
		return 0;
	}
}

/* ---------------------------------------------------------------------- */
/* Waiting operations */

static double wfree(const struct sim *s, int k, int32_t h, int *why,
		    uint32_t *holder);
static int wslot_of(const struct sim *s, int k, uint32_t m);
static uint32_t wevent(int k, uint32_t m);
static void wwhy(struct sim *s, int k, uint32_t m, int why, uint32_t hold);
static void set_why(struct sim *s, int64_t m, int slot, int why,
		    uint32_t pred);

/* Fibonacci hashing: the product's high bits, which every bit of the
 * member feeds (its low bits alone would send the members of one node's
 * stride to a few slots). */
static size_t wslot(const struct wmap *w, int32_t member)
{
	uint64_t h = (uint64_t)(uint32_t)member * UINT64_C(0x9E3779B97F4A7C15);

	return (size_t)(h >> (64 - w->bits));
}

static struct wentry *wfind_map(struct wmap *w, int32_t member)
{
	if (w->n == 0)
		return NULL;
	for (size_t i = wslot(w, member);; i = (i + 1) & (w->cap - 1)) {
		if (w->v[i].member == member)
			return &w->v[i];
		if (w->v[i].member < 0)
			return NULL;
	}
}

static int wgrow(struct wmap *w)
{
	size_t cap = w->cap != 0 ? 2 * w->cap : 1024;
	struct wentry *old = w->v, *v = topo__mallocarray(cap, sizeof(*v));
	size_t ocap = w->cap;

	if (v == NULL)
		return TOPO_ENOMEM;
	for (size_t i = 0; i < cap; i++)
		v[i].member = -1;
	w->v = v;
	w->cap = cap;
	w->bits = 0;
	while (((size_t)1 << w->bits) < cap)
		w->bits++;
	for (size_t i = 0; i < ocap; i++) {
		size_t j;

		if (old[i].member < 0)
			continue;
		for (j = wslot(w, old[i].member); v[j].member >= 0;
		     j = (j + 1) & (cap - 1))
			;
		v[j] = old[i];
	}
	topo__free(old);
	return 0;
}

static struct wentry *wget_map(struct wmap *w, int32_t member)
{
	struct wentry *e = wfind_map(w, member);
	size_t i;

	if (e != NULL)
		return e;
	if ((w->n + 1) * 2 > w->cap && wgrow(w) != 0)
		return NULL;
	for (i = wslot(w, member); w->v[i].member >= 0;
	     i = (i + 1) & (w->cap - 1))
		;
	w->v[i] = (struct wentry){member, {NONE, NONE, NONE}, {0, 0, 0}};
	w->n++;
	return &w->v[i];
}

/* Removes e when none of its heaps holds anything (backward-shift
 * deletion keeps every other entry reachable). */
static void wdrop_map(struct wmap *w, struct wentry *e)
{
	size_t i = (size_t)(e - w->v), j = i;

	if (e->root[0] != NONE || e->root[1] != NONE || e->root[2] != NONE)
		return;
	w->v[i].member = -1;
	w->n--;
	for (;;) {
		size_t k;

		j = (j + 1) & (w->cap - 1);
		if (w->v[j].member < 0)
			return;
		k = wslot(w, w->v[j].member);
		/* Move j back to i unless its home lies in (i, j]. */
		if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
			continue;
		w->v[i] = w->v[j];
		w->v[j].member = -1;
		i = j;
	}
}

/* A dissemination has one member's events at a time: its waiting heaps
 * are the one entry solo, not the map. */
static struct wentry *wfind(struct sim *s, int32_t member)
{
	if (s->dissem)
		return s->solo.member == member ? &s->solo : NULL;
	return wfind_map(&s->wm, member);
}

static struct wentry *wget(struct sim *s, int32_t member)
{
	if (s->dissem) {
		if (s->solo.member != member)
			s->solo = (struct wentry){
			    member, {NONE, NONE, NONE}, {0, 0, 0}};
		return &s->solo;
	}
	return wget_map(&s->wm, member);
}

static void wdrop(struct sim *s, struct wentry *e)
{
	if (e->root[0] != NONE || e->root[1] != NONE || e->root[2] != NONE)
		return;
	if (e == &s->solo)
		s->solo.member = -1;
	else
		wdrop_map(&s->wm, e);
}

/* A pool node for message m numbered ts; NONE when out of memory. */
static uint32_t pnew(struct sim *s, uint32_t m, uint32_t ts)
{
	uint32_t i = s->pfree;

	if (i != NONE) {
		s->pfree = s->pool[i].child;
	} else {
		if (s->npool == s->poolcap) {
			uint32_t cap = s->poolcap != 0 ? 2 * s->poolcap : 256;
			struct pnode *v;

			if (s->poolcap >= UINT32_MAX / 2)
				return NONE;
			v = topo__realloc(s->pool, (size_t)cap * sizeof(*v));
			if (v == NULL)
				return NONE;
			s->pool = v;
			s->poolcap = cap;
		}
		i = s->npool++;
	}
	s->pool[i] = (struct pnode){m, ts, NONE, NONE};
	return i;
}

static uint32_t pmeld(struct sim *s, uint32_t a, uint32_t b)
{
	if (a == NONE)
		return b;
	if (b == NONE)
		return a;
	if (s->pool[b].ts < s->pool[a].ts) {
		uint32_t t = a;

		a = b;
		b = t;
	}
	s->pool[b].sib = s->pool[a].child;
	s->pool[a].child = b;
	return a;
}

/* The heap without its root (two-pass pairing); the root's node goes
 * back to the pool. */
static uint32_t ppop(struct sim *s, uint32_t root)
{
	uint32_t first = s->pool[root].child, acc = NONE, res = NONE;

	while (first != NONE) {
		uint32_t x = first, y = s->pool[x].sib, m;

		if (y == NONE) {
			s->pool[x].sib = acc;
			acc = x;
			break;
		}
		first = s->pool[y].sib;
		s->pool[x].sib = s->pool[y].sib = NONE;
		m = pmeld(s, x, y);
		s->pool[m].sib = acc;
		acc = m;
	}
	while (acc != NONE) {
		uint32_t next = s->pool[acc].sib;

		s->pool[acc].sib = NONE;
		res = pmeld(s, res, acc);
		acc = next;
	}
	s->pool[root].child = s->pfree;
	s->pfree = root;
	return res;
}

static int push(struct sim *s, double t, uint32_t id)
{
	struct event e = {t, s->ts++, id, 0};

	if (s->ts == UINT32_MAX)
		return TOPO_ELIMIT;
	if (s->dissem && ID_TYPE(id) == EV_ARRIVE) {
		if (s->rlen == s->rcap) {
			size_t cap = s->rcap != 0 ? 2 * s->rcap : 1024;
			struct event *v = topo__realloc(s->ring, cap * sizeof(*v));

			if (v == NULL)
				return TOPO_ENOMEM;
			/* Unwrap: the part before the head moves past the
			 * old end. */
			memcpy(v + s->rcap, v, s->rhead * sizeof(*v));
			s->ring = v;
			s->rcap = cap;
		}
		s->ring[(s->rhead + s->rlen++) & (s->rcap - 1)] = e;
		return 0;
	}
	return heap_push(&s->heap, e);
}

/* The event of the root r of h's kind-k heap w, at time t. */
static int push_root(struct sim *s, struct wentry *w, int k, uint32_t r,
		     double t)
{
	if (++s->gen == 0)
		s->gen = 1;
	w->gen[k] = s->gen;
	return heap_push(&s->heap,
			 (struct event){t, s->pool[r].ts,
					wevent(k, s->pool[r].msg), s->gen});
}

/* Queues ready operation id (an EV_ id) on member h, freed by pred, as
 * LogGOPSim does: at h's next free CPU time (and send port, for a send). */
static int ready(struct sim *s, uint32_t id, int32_t h, uint32_t pred,
		 double done)
{
	int slot = event_slot(s, id);
	bool send = ID_TYPE(id) == EV_SEND, port = send && s->mem[h].sport > s->mem[h].cpu;
	double t = port ? s->mem[h].sport : s->mem[h].cpu;

	if (t > done)
		set_why(s, ID_MSG(id), slot, port ? WHY_PORT : WHY_CPU,
			port ? s->mem[h].hsport : s->mem[h].hcpu);
	else
		set_why(s, ID_MSG(id), slot, WHY_DEP, pred);
	return push(s, t, id);
}

static int cmp_freed(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int tx = ID_TYPE(x), ty = ID_TYPE(y);

	/* Sends, then receives, then computations (LogGOPSim's order of
	 * operation types); else the plan's order. */
	if (tx != ty)
		return tx < ty ? -1 : 1;
	return ID_MSG(x) < ID_MSG(y) ? -1 : ID_MSG(x) > ID_MSG(y);
}

static int freed_add(struct sim *s, uint32_t id)
{
	if (s->nfreed == s->freedcap) {
		size_t cap = s->freedcap != 0 ? 2 * s->freedcap : 64;
		uint32_t *v = topo__realloc(s->freed, cap * sizeof(*v));

		if (v == NULL)
			return TOPO_ENOMEM;
		s->freed = v;
		s->freedcap = cap;
	}
	s->freed[s->nfreed++] = id;
	return 0;
}

/* A dissemination's ready operation id (EV_SEND or EV_CALC) of member h
 * joins h's queue of its kind, ready when ready() would queue it. */
static int local_ready(struct sim *s, uint32_t id, int32_t h, uint32_t pred,
		       double done)
{
	int q = ID_TYPE(id) == EV_SEND ? 0 : 1;
	uint32_t m = (uint32_t)ID_MSG(id);
	bool port = q == 0 && s->mem[h].sport > s->mem[h].cpu;
	double t = port ? s->mem[h].sport : s->mem[h].cpu;

	if (s->llen[q] + s->lhead[q] == s->lcap[q]) {
		size_t cap = s->lcap[q] != 0 ? 2 * s->lcap[q] : 64;
		struct lop *v;

		if (s->lhead[q] > 0) {
			/* Room at the front: slide down instead. */
			memmove(s->lq[q], s->lq[q] + s->lhead[q],
				s->llen[q] * sizeof(*v));
			s->lhead[q] = 0;
		} else {
			v = topo__realloc(s->lq[q], cap * sizeof(*v));
			if (v == NULL)
				return TOPO_ENOMEM;
			s->lq[q] = v;
			s->lcap[q] = cap;
		}
	}
	if (s->ts == UINT32_MAX)
		return TOPO_ELIMIT;
	s->lq[q][s->lhead[q] + s->llen[q]++] = (struct lop){m, s->ts++, t};
	if (t > done)
		set_why(s, m, wslot_of(s, q == 0 ? W_SEND : W_CALC, m),
			port ? WHY_PORT : WHY_CPU,
			port ? s->mem[h].hsport : s->mem[h].hcpu);
	else
		set_why(s, m, wslot_of(s, q == 0 ? W_SEND : W_CALC, m), WHY_DEP,
			pred);
	return 0;
}

/*
 * Several sends (or computations) of member h made ready at once: they
 * would all be tried at the same moment and the first would take the
 * member, so they go into h's waiting heap together, numbered in order,
 * and only the heap's root keeps an event (see struct wmap).
 */
static int ready_group(struct sim *s, const uint32_t *ids, size_t n, int32_t h,
		       uint32_t pred, double done)
{
	int k = ID_TYPE(ids[0]) == EV_SEND ? W_SEND : W_CALC;
	struct wentry *w = wget(s, h);
	uint32_t old, hold;
	int why;
	double t = wfree(s, k, h, &why, &hold);

	if (w == NULL)
		return TOPO_ENOMEM;
	/* Each but the last must hold the member for some time, or the
	 * next would not wait for it (and would keep its own cause). */
	for (size_t i = 0; i + 1 < n; i++) {
		int64_t m = ID_MSG(ids[i]);
		double lat, busy;

		if (k == W_CALC) {
			busy = calc_time(s, m);
		} else {
			const struct topo_loggp *c = edge(s, m, &lat);

			busy = c->o + c->g +
			       per_byte(topo__msg_len(s->p, m), c->G);
		}
		if (!(busy > 0)) {
			int rc = 0;

			wdrop(s, w);
			for (size_t j = 0; rc == 0 && j < n; j++)
				rc = ready(s, ids[j], h, pred, done);
			return rc;
		}
	}
	old = w->root[k];
	for (size_t i = 0; i < n; i++) {
		uint32_t m = (uint32_t)ID_MSG(ids[i]);

		uint32_t node;

		if (s->ts == UINT32_MAX)
			return TOPO_ELIMIT;
		node = pnew(s, m, s->ts++);
		if (node == NONE)
			return TOPO_ENOMEM;
		w->root[k] = pmeld(s, w->root[k], node);
		s->flags[m] |= F_INHEAP;
		if (t > done)
			wwhy(s, k, m, why, hold);
		else
			set_why(s, m, wslot_of(s, k, m), WHY_DEP, pred);
	}
	if (w->root[k] == old)
		return 0; /* an older waiting one keeps its event */
	return push_root(s, w, k, w->root[k], t);
}

/* Operation op of message k completed on member h at `done`: the
 * operations waiting only for it become ready. */
static int complete(struct sim *s, int64_t k, int op, int32_t h, double done)
{
	const struct topo_plan *p = s->p;
	uint32_t pred = ID(k, op);
	int rc = 0;

	s->nfreed = 0;
	for (int64_t j = p->succ_off[k]; rc == 0 && j < p->succ_off[k + 1];
	     j++) {
		int64_t m = p->succ[j];
		int32_t x;
		bool recv_side;

		if (dep_at(p, k, m, &x, &recv_side) != op || x != h)
			continue;
		if (recv_side) {
			if (--s->wrecv[m] == 0)
				rc = freed_add(s, ID(m, EV_POST));
		} else if (--s->wsend[m] == 0) {
			rc = freed_add(s, ID(m, topo__msg_src(p, m) ==
						     topo__msg_dst(p, m)
						 ? EV_CALC
						 : EV_SEND));
		}
	}
	if (rc != 0 || s->nfreed == 0)
		return rc;
	if (s->nfreed > 24) {
		qsort(s->freed, s->nfreed, sizeof(*s->freed), cmp_freed);
	} else {
		for (size_t i = 1; i < s->nfreed; i++) {
			uint32_t x = s->freed[i];
			size_t j = i;

			for (; j > 0 && cmp_freed(&x, &s->freed[j - 1]) < 0; j--)
				s->freed[j] = s->freed[j - 1];
			s->freed[j] = x;
		}
	}
	if (s->dissem) {
		for (size_t i = 0; rc == 0 && i < s->nfreed; i++)
			rc = local_ready(s, s->freed[i], h, pred, done);
		return rc;
	}
	for (size_t i = 0; rc == 0 && i < s->nfreed;) {
		int type = ID_TYPE(s->freed[i]);
		size_t j = i + 1;

		while (j < s->nfreed && ID_TYPE(s->freed[j]) == type)
			j++;
		if (j - i >= 2 && (type == EV_SEND || type == EV_CALC) &&
		    !topo__tune.predict.no_batch)
			rc = ready_group(s, s->freed + i, j - i, h, pred, done);
		else
			for (; rc == 0 && i < j; i++)
				rc = ready(s, s->freed[i], h, pred, done);
		i = j;
	}
	return rc;
}

/* The receive of message m completes at b at `done` (arrived and
 * posted). */
static int recv_done(struct sim *s, int64_t m, int32_t b, double done)
{
	if (topo__msg_kind(s->p, m) == TOPO__REDUCE) {
		/* The reduction runs after the receive, on b's CPU. */
		if (s->dissem)
			return local_ready(s, ID(m, EV_CALC), b, ID(m, OP_RECV),
					   done);
		if (s->mem[b].cpu > done)
			set_why(s, m, 2, WHY_CPU, s->mem[b].hcpu);
		else
			set_why(s, m, 2, WHY_DEP, ID(m, OP_RECV));
		return push(s, s->mem[b].cpu, ID(m, EV_CALC));
	}
	return complete(s, m, OP_RECV, b, done);
}

static int tick(struct sim *s, topo_error *err)
{
	const struct topo_predict_params *q = s->params;
	double t;

	if (s->deadline <= 0 && q->progress == NULL)
		return 0;
	t = topo__now();
	if (s->deadline > 0 && t >= s->deadline)
		return topo__err(err, TOPO_ETIMEDOUT, NULL, NULL,
				 "the run did not finish within %g s "
				 "(predicting: %lld events simulated)",
				 q->timeout, (long long)s->events);
	if (q->progress != NULL && t >= s->next_progress) {
		s->next_progress = t + TOPO__PROGRESS_EVERY;
		q->progress(q->progress_ctx, "predicting", s->events,
			    3 * s->M > s->events ? 3 * s->M : s->events);
	}
	return 0;
}

/* When an operation of kind k can next start at member h (its CPU, and
 * the port of a send or an arrival), why, and what holds it up. */
static double wfree(const struct sim *s, int k, int32_t h, int *why,
		    uint32_t *holder)
{
	double t = s->mem[h].cpu;

	*why = WHY_CPU;
	*holder = s->mem[h].hcpu;
	if (k == W_SEND && s->mem[h].sport > t) {
		t = s->mem[h].sport;
		*why = WHY_PORT;
		*holder = s->mem[h].hsport;
	} else if (k == W_ARR && s->mem[h].rport > t) {
		t = s->mem[h].rport;
		*why = WHY_PORT;
		*holder = s->mem[h].hrport;
	}
	return t;
}

/* The cause slot and event of kind k for message m. */
static int wslot_of(const struct sim *s, int k, uint32_t m)
{
	return k == W_SEND ? 0 : k == W_ARR ? 1
	       : topo__msg_src(s->p, m) == topo__msg_dst(s->p, m) ? 0
								   : 2;
}

static uint32_t wevent(int k, uint32_t m)
{
	return ID(m, k == W_SEND ? EV_SEND : k == W_ARR ? EV_ARRIVE : EV_CALC);
}

static void wwhy(struct sim *s, int k, uint32_t m, int why, uint32_t hold)
{
	set_why(s, m, wslot_of(s, k, m), why, hold);
	if (k == W_ARR)
		s->flags[m] |= F_WAITED;
}

/*
 * Event e of kind k at member h: *go when its operation starts now; else
 * it waits in h's heap (only the root keeps an event: a later event of
 * another member of the heap is stale and dropped).  *was_root: it was
 * the heap's root, so the next root needs an event once it has started
 * (reschedule).
 */
static int gate(struct sim *s, int k, int32_t h, struct event *e, bool *go,
		bool *was_root)
{
	uint32_t m = (uint32_t)ID_MSG(e->id), hold;
	int why;
	double free = wfree(s, k, h, &why, &hold);
	struct wentry *w;

	*go = *was_root = false;
	if (s->flags[m] & F_INHEAP) {
		w = wfind(s, h);
		if (w == NULL || w->root[k] == NONE ||
		    s->pool[w->root[k]].msg != m || w->gen[k] != e->gen)
			return 0; /* left behind when the root changed */
		if (free > e->t) {
			wwhy(s, k, m, why, hold);
			return push_root(s, w, k, w->root[k], free);
		}
		w->root[k] = ppop(s, w->root[k]);
		s->flags[m] &= (uint16_t)~F_INHEAP;
		*go = *was_root = true;
		return 0;
	}
	if (free <= e->t) {
		*go = true;
		return 0;
	}
	wwhy(s, k, m, why, hold);
	w = wget(s, h);
	if (w == NULL)
		return TOPO_ENOMEM;
	{
		uint32_t node = pnew(s, m, e->ts);

		if (node == NONE)
			return TOPO_ENOMEM;
		w->root[k] = pmeld(s, w->root[k], node);
		s->flags[m] |= F_INHEAP;
		if (w->root[k] == node)
			return push_root(s, w, k, node, free);
	}
	return 0;
}

/* After the root of h's kind-k heap started: the next root's event, at
 * h's new free time, held up by what just started. */
static int reschedule(struct sim *s, int k, int32_t h)
{
	struct wentry *w = wfind(s, h);
	uint32_t r, hold;
	int why;
	double free;

	if (w == NULL)
		return 0;
	r = w->root[k];
	if (r == NONE) {
		wdrop(s, w);
		return 0;
	}
	free = wfree(s, k, h, &why, &hold);
	wwhy(s, k, s->pool[r].msg, why, hold);
	return push_root(s, w, k, r, free);
}

/*
 * Runs member h's ready operations (its queues) to the end, alone: the
 * next to start is the one that can start first, the earlier made among
 * equals, which is what LogGOPSim's retries come to when nothing else
 * happens at h.  Sends put their arrivals in the ring.
 */
static int local_run(struct sim *s, int32_t h)
{
	struct member *v = &s->mem[h];
	int rc = 0;

	while (rc == 0 && (s->llen[0] > 0 || s->llen[1] > 0)) {
		struct lop *sd = s->llen[0] > 0 ? &s->lq[0][s->lhead[0]] : NULL;
		struct lop *cl = s->llen[1] > 0 ? &s->lq[1][s->lhead[1]] : NULL;
		double ts_ = 0, tc = 0, t;
		bool send;

		if (sd != NULL) {
			ts_ = sd->ready > v->cpu ? sd->ready : v->cpu;
			if (v->sport > ts_)
				ts_ = v->sport;
		}
		if (cl != NULL)
			tc = cl->ready > v->cpu ? cl->ready : v->cpu;
		send = sd != NULL &&
		       (cl == NULL || ts_ < tc || (ts_ == tc && sd->ts < cl->ts));
		if (send) {
			uint32_t m = sd->msg;
			int64_t len = topo__msg_len(s->p, m);
			const struct topo_loggp *c;
			double lat;

			t = ts_;
			if (t > sd->ready) {
				bool port = v->sport > v->cpu;

				set_why(s, m, 0, port ? WHY_PORT : WHY_CPU,
					port ? v->hsport : v->hcpu);
			}
			s->lhead[0]++;
			s->llen[0]--;
			c = edge(s, m, &lat);
			if (c == &s->c.net)
				s->flags[m] |= F_NET;
			sent(s, c, len);
			note(s, m, 0, t);
			v->cpu = t + c->o;
			v->sport = t + c->g + per_byte(len, c->G);
			v->hcpu = v->hsport = ID(m, OP_SEND);
			rc = push(s, t + c->o + lat, ID(m, EV_ARRIVE));
			if (rc == 0 && (s->flags[m] & F_SENDDEP))
				rc = complete(s, m, OP_SEND, h, v->cpu);
		} else {
			uint32_t m = cl->msg;

			t = tc;
			if (t > cl->ready)
				set_why(s, m, wslot_of(s, W_CALC, m), WHY_CPU,
					v->hcpu);
			s->lhead[1]++;
			s->llen[1]--;
			note(s, m, wslot_of(s, W_CALC, m), t);
			v->cpu = t + calc_time(s, m);
			v->hcpu = ID(m, OP_CALC);
			rc = complete(s, m, OP_CALC, h, v->cpu);
		}
		s->events++;
	}
	s->lhead[0] = s->lhead[1] = 0;
	return rc;
}

/* By member, sends before computations, then the plan's order. */
static int cmp_initial(const void *x, const void *y, void *ctx)
{
	int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
	const struct topo_plan *p = ctx;
	int32_t ma = topo__msg_src(p, a), mb = topo__msg_src(p, b);
	bool la = ma == topo__msg_dst(p, a), lb = mb == topo__msg_dst(p, b);

	if (ma != mb)
		return ma < mb ? -1 : 1;
	if (la != lb)
		return la ? 1 : -1;
	return a < b ? -1 : a > b;
}

/* A dissemination's simulation: the members free at the start, then each
 * member as its one message arrives (ring order). */
static int simulate_dissem(struct sim *s, topo_error *err)
{
	const struct topo_plan *p = s->p;
	int32_t cur = -1;
	int rc = 0;

	/* The operations free at the start, member by member: its sends,
	 * then its computations, each in the plan's order (as simulate()
	 * numbers them). */
	{
		int64_t n0 = 0, *v;

		for (int64_t m = 0; m < s->M; m++)
			n0 += s->wsend[m] == 0;
		v = topo__mallocarray((size_t)n0 + 1, sizeof(*v));
		if (v == NULL)
			return TOPO_ENOMEM;
		n0 = 0;
		for (int64_t m = 0; m < s->M; m++)
			if (s->wsend[m] == 0)
				v[n0++] = m;
		qsort_r(v, (size_t)n0, sizeof(*v), cmp_initial, (void *)p);
		for (int64_t i = 0; rc == 0 && i < n0; i++) {
			int32_t a = topo__msg_src(p, v[i]);

			if (a != cur && cur >= 0)
				rc = local_run(s, cur);
			cur = a;
			if (rc == 0)
				rc = local_ready(
				    s, ID(v[i], a == topo__msg_dst(p, v[i])
						    ? EV_CALC
						    : EV_SEND),
				    a, NO_OP, 0);
		}
		if (rc == 0 && cur >= 0)
			rc = local_run(s, cur);
		topo__free(v);
	}
	/* Receives need no posting: nothing waits at a receiver. */
	for (int64_t m = 0; m < s->M; m++)
		s->flags[m] |= F_POSTED;
	while (rc == 0 && s->rlen > 0) {
		struct event e = s->ring[s->rhead];
		int64_t m = ID_MSG(e.id), len = topo__msg_len(p, m);
		int32_t b = topo__msg_dst(p, m);
		struct member *v = &s->mem[b];
		/* (Its class, noted when it was sent: the sender's line is
		 * long gone from the cache.) */
		const struct topo_loggp *c =
		    s->flags[m] & F_NET ? &s->c.net : &s->c.shm;

		s->rhead = (s->rhead + 1) & (s->rcap - 1);
		s->rlen--;
		if ((++s->events & 65535) == 0) {
			rc = tick(s, err);
			if (rc != 0)
				break;
		}
		/* b has done nothing yet: the arrival is processed as it
		 * comes. */
		set_why(s, m, 1, WHY_ARRIVE, ID(m, OP_SEND));
		note(s, m, 1, e.t);
		v->cpu = e.t + c->o + per_byte(len, c->G);
		v->rport = e.t + c->g + per_byte(len, c->G);
		v->hcpu = v->hrport = ID(m, OP_ARR);
		s->flags[m] |= F_ARRIVED;
		rc = recv_done(s, m, b, v->cpu);
		if (rc == 0)
			rc = local_run(s, b);
	}
	return rc;
}

/* A send leaves its member: the CPU's overhead, the port's gap, and its
 * arrival after the latency. */
static int on_send(struct sim *s, struct event *e, int64_t m, int32_t a,
		   int64_t len)
{
	const struct topo_loggp *c;
	double lat;
	bool go, was_root;
	int rc;

	rc = gate(s, W_SEND, a, e, &go, &was_root);
	if (rc != 0 || !go)
		return rc;
	c = edge(s, m, &lat);
	sent(s, c, len);
	note(s, m, 0, e->t);
	s->mem[a].cpu = e->t + c->o;
	s->mem[a].sport = e->t + c->g + per_byte(len, c->G);
	s->mem[a].hcpu = s->mem[a].hsport = ID(m, OP_SEND);
	rc = push(s, e->t + c->o + lat, ID(m, EV_ARRIVE));
	if (rc == 0 && was_root)
		rc = reschedule(s, W_SEND, a);
	if (rc == 0 && (s->flags[m] & F_SENDDEP))
		rc = complete(s, m, OP_SEND, a, s->mem[a].cpu);
	return rc;
}

/* An arrival at member b: processed when b's CPU and port are free; the
 * receive completes once it is posted too. */
static int on_arrive(struct sim *s, struct event *e, int64_t m, int32_t b,
		     int64_t len)
{
	const struct topo_loggp *c;
	bool go, was_root;
	int rc;

	rc = gate(s, W_ARR, b, e, &go, &was_root);
	if (rc != 0 || !go)
		return rc;
	if (!(s->flags[m] & F_WAITED))
		set_why(s, m, 1, WHY_ARRIVE, ID(m, OP_SEND));
	c = edge_class(s, m);
	note(s, m, 1, e->t);
	s->mem[b].cpu = e->t + c->o + per_byte(len, c->G);
	s->mem[b].rport = e->t + c->g + per_byte(len, c->G);
	s->mem[b].hcpu = s->mem[b].hrport = ID(m, OP_ARR);
	s->flags[m] |= F_ARRIVED;
	if (was_root)
		rc = reschedule(s, W_ARR, b);
	if (rc == 0 && (s->flags[m] & F_POSTED))
		rc = recv_done(s, m, b, s->mem[b].cpu);
	return rc;
}

/* A member's own step (a copy or a reduction) on its CPU. */
static int on_calc(struct sim *s, struct event *e, int64_t m, int32_t b)
{
	bool go, was_root;
	int rc;

	rc = gate(s, W_CALC, b, e, &go, &was_root);
	if (rc != 0 || !go)
		return rc;
	note(s, m, wslot_of(s, W_CALC, m), e->t);
	s->mem[b].cpu = e->t + calc_time(s, m);
	s->mem[b].hcpu = ID(m, OP_CALC);
	if (was_root)
		rc = reschedule(s, W_CALC, b);
	if (rc == 0)
		rc = complete(s, m, OP_CALC, b, s->mem[b].cpu);
	return rc;
}

/* The next event: the heap's earliest, else the ring's first; false when
 * both are empty. */
static bool next_event(struct sim *s, struct event *e)
{
	if (s->heap.n > 0) {
		*e = heap_pop(&s->heap);
		return true;
	}
	if (s->rlen > 0) {
		*e = s->ring[s->rhead];
		s->rhead = (s->rhead + 1) & (s->rcap - 1);
		s->rlen--;
		return true;
	}
	return false;
}

/* The event loop in time order (see simulate). */
static int simulate_events(struct sim *s, topo_error *err)
{
	const struct topo_plan *p = s->p;
	struct event e;
	int rc = 0;

	/* The operations free at the start: every member's sends, then its
	 * computations (receives free at the start are posted at once: no
	 * arrival can come before them). */
	for (int pass = 0; pass < 2 && rc == 0; pass++)
		for (int64_t m = 0; rc == 0 && m < s->M; m++) {
			bool local = topo__msg_src(p, m) == topo__msg_dst(p, m);

			if (s->wsend[m] == 0 && local == (pass == 1))
				rc = push(s, 0, ID(m, local ? EV_CALC : EV_SEND));
			if (pass == 0 && !local &&
			    (s->wrecv == NULL || s->wrecv[m] == 0))
				s->flags[m] |= F_POSTED;
		}
	while (rc == 0 && next_event(s, &e)) {
		int64_t m = ID_MSG(e.id);

		if ((++s->events & 65535) == 0) {
			rc = tick(s, err);
			if (rc != 0)
				break;
		}
		switch (ID_TYPE(e.id)) {
		case EV_SEND:
			rc = on_send(s, &e, m, topo__msg_src(p, m),
				     topo__msg_len(p, m));
			break;
		case EV_ARRIVE:
			rc = on_arrive(s, &e, m, topo__msg_dst(p, m),
				       topo__msg_len(p, m));
			break;
		case EV_POST:
			/* Posted after the arrival: the posting completes
			 * the receive, now. */
			s->flags[m] |= F_POSTED;
			if (s->flags[m] & F_ARRIVED) {
				s->flags[m] |= F_LATEPOST;
				rc = recv_done(s, m, topo__msg_dst(p, m), e.t);
			}
			break;
		case EV_CALC:
			rc = on_calc(s, &e, m, topo__msg_dst(p, m));
			break;
		}
	}
	return rc;
}

/*
 * The event loop.  A dissemination (s->dissem: every member receives at
 * most one message, and a member that receives does nothing before: all
 * its operations depend on that receive, as in a broadcast or a scatter
 * down a tree) has no member where two things compete but its own ready
 * operations, which it orders alone: each member's events can then run to
 * the end at once, the arrivals it makes waiting on a stack for their own
 * members' turns.  The queue then holds one member's events at a time,
 * and the result is the same as in time order (the operations' order at a
 * member is decided among its own events, numbered in the same order).
 */
static int simulate(struct sim *s, topo_error *err)
{
	int rc = 0;

	if (s->dissem)
		rc = simulate_dissem(s, err);
	else
		rc = simulate_events(s, err);
	if (rc == TOPO_ENOMEM)
		return topo__err(err, rc, NULL, NULL,
				 "out of memory predicting a plan of %lld "
				 "messages",
				 (long long)s->M);
	if (rc == TOPO_ELIMIT)
		return topo__err(err, rc, NULL, NULL,
				 "a plan of %lld messages makes more than "
				 "2^32 events to predict",
				 (long long)s->M);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Setting up */

/* Binary lifting over the tree network, for trees too deep to walk
 * (predict_internal.h). */
int topo__hops_up(const topo_machine *m, int32_t ***out, int *uplevels)
{
	int32_t maxd = 0, **up;

	*out = NULL;
	*uplevels = 0;
	if (strcmp(m->net_type, "torus") == 0 && m->ndims > 0)
		return 0;
	for (int32_t v = 0; v < m->nodes; v++)
		if (m->net_depth[v] > maxd)
			maxd = m->net_depth[v];
	if (maxd <= 64)
		return 0;
	while ((1 << *uplevels) <= maxd)
		(*uplevels)++;
	up = *out = topo__calloc((size_t)*uplevels, sizeof(*up));
	if (up == NULL)
		return TOPO_ENOMEM;
	for (int k = 0; k < *uplevels; k++) {
		up[k] = topo__mallocarray((size_t)m->nodes, sizeof(int32_t));
		if (up[k] == NULL)
			return TOPO_ENOMEM;
		for (int32_t v = 0; v < m->nodes; v++) {
			int32_t u = k == 0 ? m->net_parent[v]
					   : up[k - 1][v] < 0
						 ? -1
						 : up[k - 1][up[k - 1][v]];

			up[k][v] = u < 0 ? v : u; /* the root stays */
		}
	}
	return 0;
}

void topo__hops_up_free(int32_t **up, int uplevels)
{
	for (int k = 0; up != NULL && k < uplevels; k++)
		topo__free(up[k]);
	topo__free(up);
}

static void sim_free(struct sim *s)
{
	topo__populate_stop(&s->populate);
	topo__free(s->mem);
	topo__free(s->wsend);
	topo__free(s->wrecv);
	topo__free(s->flags);
	for (int i = 0; i < 4; i++)
		topo__free(s->cause[i]);
	topo__hops_up_free(s->up, s->uplevels);
	topo__free(s->heap.v);
	topo__free(s->freed);
	topo__free(s->pool);
	topo__free(s->wm.v);
	topo__free(s->ring);
	topo__free(s->lq[0]);
	topo__free(s->lq[1]);
}

/* Counts every message's dependencies by side, and allocates what the
 * plan needs. */
static int sim_setup(struct sim *s)
{
	const struct topo_plan *p = s->p;
	size_t n = (size_t)s->n, M = (size_t)s->M;
	bool has_recv = false, has_reduce = false;

	s->mem = topo__mallocarray(n + 1, sizeof(*s->mem));
	s->wsend = topo__calloc(M + 1, sizeof(int32_t));
	s->flags = topo__calloc(M + 1, sizeof(uint16_t));
	s->cause[0] = topo__calloc(M + 1, sizeof(uint32_t));
	s->cause[1] = topo__calloc(M + 1, sizeof(uint32_t));
	if (s->mem == NULL || s->wsend == NULL || s->flags == NULL || s->cause[0] == NULL ||
	    s->cause[1] == NULL || topo__hops_up(s->m, &s->up, &s->uplevels) != 0)
		return TOPO_ENOMEM;
	/* The second half of the members and the arrays the loops below
	 * write fault in on the other CPU meanwhile (waited for at the
	 * end, and by sim_free on the way out). */
	topo__populate_add(&s->populate, s->mem + n / 2,
			   (n - n / 2) * sizeof(*s->mem));
	topo__populate_add(&s->populate, s->wsend, M * sizeof(int32_t));
	topo__populate_add(&s->populate, s->cause[0], M * sizeof(uint32_t));
	topo__populate_add(&s->populate, s->cause[1], M * sizeof(uint32_t));
	topo__populate_start(&s->populate);
	for (size_t v = 0; v < n; v++)
		s->mem[v] = (struct member){
		    0, 0, 0, NO_OP, NO_OP, NO_OP,
		    s->m->task_node[s->members[v] / s->m->eps_per_task]};
	for (int64_t k = 0; k < s->M; k++) {
		if (topo__msg_kind(p, k) == TOPO__REDUCE &&
		    topo__msg_src(p, k) != topo__msg_dst(p, k))
			has_reduce = true;
		for (int64_t j = p->succ_off[k]; j < p->succ_off[k + 1]; j++) {
			int32_t x;
			bool recv_side;

			if (dep_at(p, k, p->succ[j], &x, &recv_side) ==
				OP_SEND &&
			    x == topo__msg_src(p, k))
				s->flags[k] |= F_SENDDEP;
			if (recv_side)
				has_recv = true;
			else
				s->wsend[p->succ[j]]++;
		}
	}
	/* A dissemination?  Members with an incoming message, and with two,
	 * as bits (a member's own 40 bytes would be a cache miss each). */
	s->dissem = !has_recv;
	if (s->dissem) {
		uint64_t *one = topo__calloc(n / 64 + 1, sizeof(uint64_t));
		uint64_t *two = topo__calloc(n / 64 + 1, sizeof(uint64_t));

		if (one == NULL || two == NULL) {
			topo__free(one);
			topo__free(two);
			return TOPO_ENOMEM;
		}
		for (int64_t k = 0; k < s->M; k++) {
			int32_t d = topo__msg_dst(p, k);
			uint64_t bit = (uint64_t)1 << (d & 63);

			if (topo__msg_src(p, k) == d)
				continue;
			two[d >> 6] |= one[d >> 6] & bit;
			one[d >> 6] |= bit;
		}
		for (size_t w = 0; s->dissem && w <= n / 64; w++)
			if (two[w] != 0)
				s->dissem = false;
		for (int64_t k = 0; s->dissem && k < s->M; k++) {
			int32_t a = topo__msg_src(p, k);

			if (((one[a >> 6] >> (a & 63)) & 1) && s->wsend[k] == 0)
				s->dissem = false;
		}
		topo__free(one);
		topo__free(two);
	}
	if (topo__tune.predict.no_dissemination)
		s->dissem = false;
	if (has_reduce) {
		s->cause[2] = topo__calloc(M + 1, sizeof(uint32_t));
		if (s->cause[2] == NULL)
			return TOPO_ENOMEM;
	}
	if (has_recv) {
		s->wrecv = topo__calloc(M + 1, sizeof(int32_t));
		s->cause[3] = topo__calloc(M + 1, sizeof(uint32_t));
		if (s->wrecv == NULL || s->cause[3] == NULL)
			return TOPO_ENOMEM;
		for (int64_t k = 0; k < s->M; k++)
			for (int64_t j = p->succ_off[k]; j < p->succ_off[k + 1];
			     j++) {
				int32_t x;
				bool recv_side;

				dep_at(p, k, p->succ[j], &x, &recv_side);
				if (recv_side)
					s->wrecv[p->succ[j]]++;
			}
	}
	topo__populate_wait(&s->populate);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The critical path */

/* The cause of operation op: *why and the operation before it. */
static uint32_t cause_of(const struct sim *s, uint32_t op, int *why)
{
	int64_t m = ID_MSG(op);
	int slot;

	switch (ID_TYPE(op)) {
	case OP_SEND:
		slot = 0;
		break;
	case OP_ARR:
		slot = 1;
		break;
	case OP_RECV:
		/* Completed by its arrival, or by a posting after it. */
		if (!(s->flags[m] & F_LATEPOST)) {
			*why = WHY_DEP;
			return ID(m, OP_ARR);
		}
		slot = 3;
		break;
	default:
		slot = topo__msg_src(s->p, m) == topo__msg_dst(s->p, m) ? 0 : 2;
		break;
	}
	if (s->cause[slot] == NULL) {
		*why = WHY_DEP;
		return NO_OP;
	}
	*why = get_why(s, m, slot);
	return ~s->cause[slot][m];
}

/* When operation `op`, started at `start`, lets others go: its CPU's end,
 * or, for `port`, its port's.  A receive's completion takes no time. */
static double op_end(const struct sim *s, uint32_t op, double start,
		     bool port)
{
	int64_t m = ID_MSG(op), len = topo__msg_len(s->p, m);
	double lat;
	const struct topo_loggp *c;

	if (ID_TYPE(op) == OP_CALC)
		return start + calc_time(s, m);
	if (ID_TYPE(op) == OP_RECV)
		return start;
	c = edge(s, m, &lat);
	if (port)
		return start + c->g + per_byte(len, c->G);
	if (ID_TYPE(op) == OP_SEND)
		return start + c->o;
	return start + c->o + per_byte(len, c->G);
}

static const char *const why_names[] = {"dependency", "cpu", "port",
					"arrival"};

static void step_fill(const struct sim *s, uint32_t op, double start,
		      double end, const char *after, struct topo_path_step *st)
{
	int64_t m = ID_MSG(op);
	int32_t a = topo__msg_src(s->p, m), b = topo__msg_dst(s->p, m);
	int32_t na = node_of(s, a), nb = node_of(s, b);
	bool reduce = topo__msg_kind(s->p, m) == TOPO__REDUCE;

	memset(st, 0, sizeof(*st));
	st->op = ID_TYPE(op) == OP_SEND	  ? "send"
		 : ID_TYPE(op) == OP_ARR  ? "receive"
		 : ID_TYPE(op) == OP_RECV ? "posted"
		 : reduce		  ? "reduce"
					  : "copy";
	st->src = s->members[a];
	st->dst = s->members[b];
	st->bytes = topo__msg_len(s->p, m);
	st->edge = a == b ? "" : na == nb ? "shm" : "net";
	st->hops = (int32_t)hops(s, na, nb);
	st->start = start * 1e-9;
	st->end = end * 1e-9;
	st->after = after;
}

static int critical_path(struct sim *s, struct topo_prediction *r,
			 topo_error *err)
{
	/* (A member that did nothing has no holder: no path.  One whose
	 * steps took no time, with costs of 0, has one.) */
	uint32_t op = s->n > 0 ? s->mem[r->last].hcpu : NO_OP;
	uint32_t *ops = NULL;
	uint8_t *whys = NULL;
	double *start = NULL;
	size_t n = 0, cap = 0;
	int rc = 0;

	/* Backwards from the operation that ended the last member's work. */
	while (op != NO_OP) {
		int why;
		uint32_t pred;

		if (n == cap) {
			size_t c = cap != 0 ? 2 * cap : 64;
			uint32_t *o = topo__realloc(ops, c * sizeof(*o));
			uint8_t *w;

			if (o == NULL) {
				rc = TOPO_ENOMEM;
				break;
			}
			ops = o;
			w = topo__realloc(whys, c * sizeof(*w));
			if (w == NULL) {
				rc = TOPO_ENOMEM;
				break;
			}
			whys = w;
			cap = c;
		}
		pred = cause_of(s, op, &why);
		ops[n] = op;
		whys[n] = (uint8_t)(pred == NO_OP ? 0xff : why);
		n++;
		if (n > (size_t)3 * (size_t)s->M + 1)
			break; /* cannot happen: causes go back in time */
		op = pred;
	}
	r->nsteps = 0;
	if (rc == 0 && n > 0) {
		start = topo__mallocarray(n, sizeof(double));
		r->steps = topo__calloc(n, sizeof(*r->steps));
		if (start == NULL || r->steps == NULL)
			rc = TOPO_ENOMEM;
	}
	/* Forwards: each step starts when its cause let it. */
	for (size_t i = n; rc == 0 && i-- > 0;) {
		uint32_t cur = ops[i];
		int why = whys[i];
		double t = 0, lat;

		if (why != 0xff) {
			uint32_t prev = ops[i + 1];
			double ps = start[i + 1];

			if (why == WHY_ARRIVE) {
				const struct topo_loggp *c =
				    edge(s, ID_MSG(cur), &lat);

				t = ps + c->o + lat;
			} else {
				t = op_end(s, prev, ps, why == WHY_PORT);
			}
		}
		start[i] = t;
		/* A receive completed by its own arrival is that arrival's
		 * step already. */
		if (ID_TYPE(cur) == OP_RECV &&
		    !(s->flags[ID_MSG(cur)] & F_LATEPOST))
			continue;
		step_fill(s, cur, t, op_end(s, cur, t, false),
			  why == 0xff ? "start" : why_names[why],
			  &r->steps[r->nsteps++]);
	}
	topo__free(ops);
	topo__free(whys);
	topo__free(start);
	if (rc != 0)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory tracing a critical path");
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The interface */

int topo_plan_predict(const topo_plan *p,
		      const struct topo_predict_params *params,
		      topo_prediction **out, topo_error *err)
{
	return topo__predict_times(p, params, NULL, out, err);
}

int topo__predict_times(const topo_plan *p,
			const struct topo_predict_params *params,
			double *times, topo_prediction **out, topo_error *err)
{
	struct topo_predict_params q;
	struct topo_prediction *r = NULL;
	struct sim s;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (p == NULL || out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_plan_predict: plan and out are "
				 "required");
	rc = topo__predict_params_read(&q, params, err);
	if (rc != 0)
		return rc;
	if (!(q.timeout >= 0) || !(q.elapsed >= 0))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "the timeout (%g) and the time elapsed (%g) "
				 "must not be negative",
				 q.timeout, q.elapsed);
	memset(&s, 0, sizeof(s));
	s.pfree = NONE;
	s.solo.member = -1;
	s.p = p;
	s.params = &q;
	s.times = times;
	s.m = p->t->g->m;
	s.members = p->t->g->members;
	s.n = p->n;
	s.M = p->nmsg;
	if (q.costs != NULL) {
		rc = topo__costs_read(&s.c, q.costs, err);
		if (rc != 0)
			return rc;
	} else {
		s.c = s.m->costs;
	}
	if (q.timeout > 0)
		s.deadline = topo__now() + (q.timeout < 1e9 ? q.timeout : 1e9) -
			     q.elapsed;
	if (q.progress != NULL)
		q.progress(q.progress_ctx, "predicting", 0, 3 * s.M);
	s.next_progress = topo__now() + TOPO__PROGRESS_EVERY;
	rc = sim_setup(&s);
	if (rc != 0) {
		rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
			       "out of memory predicting a plan of %lld "
			       "messages over %d members",
			       (long long)s.M, (int)s.n);
		goto out;
	}
	rc = simulate(&s, err);
	if (rc != 0)
		goto out;
	r = topo__calloc(1, sizeof(*r));
	if (r == NULL) {
		rc = topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	r->costs = s.c;
	r->n = s.n;
	r->events = s.events;
	memcpy(r->msgs, s.msgs, sizeof(r->msgs));
	memcpy(r->bytes, s.bytes, sizeof(r->bytes));
	r->last = 0;
	for (int32_t v = 1; v < s.n; v++)
		if (s.mem[v].cpu > s.mem[r->last].cpu)
			r->last = v;
	r->total = s.n > 0 ? s.mem[r->last].cpu : 0;
	r->last_ep = s.n > 0 ? s.members[r->last] : -1;
	rc = critical_path(&s, r, err);
	if (rc != 0)
		goto out;
	/* The members' finish times are their CPUs' last busy time. */
	r->finish = s.mem;
	s.mem = NULL;
	*out = r;
	r = NULL;
out:
	topo_prediction_free(r);
	sim_free(&s);
	return rc;
}

void topo_prediction_free(topo_prediction *r)
{
	if (r == NULL)
		return;
	topo__free(r->finish);
	topo__free(r->steps);
	topo__free(r);
}

double topo_prediction_seconds(const topo_prediction *r)
{
	return r->total * 1e-9;
}

int32_t topo_prediction_last(const topo_prediction *r)
{
	return r->last_ep;
}

double topo_prediction_finish(const topo_prediction *r, int32_t rank)
{
	return rank >= 0 && rank < r->n ? r->finish[rank].cpu * 1e-9 : -1;
}

/* Rearranges v[lo..hi) so that v[k] is the value of rank k, smaller
 * ones before it and larger after (quickselect, median of three). */
static void select_k(double *v, size_t lo, size_t hi, size_t k)
{
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2, i = lo, j = hi - 1;
		double a = v[lo], b = v[mid], c = v[hi - 1], pivot;

		pivot = a < b ? (b < c ? b : a < c ? c : a)
			      : (a < c ? a : b < c ? c : b);
		while (i <= j) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i <= j) {
				double t = v[i];

				v[i] = v[j];
				v[j] = t;
				i++;
				if (j == 0)
					break;
				j--;
			}
		}
		if (k <= j)
			hi = j + 1;
		else if (k >= i)
			lo = i;
		else
			return;
	}
}

int topo_prediction_quantiles(const topo_prediction *r, const double *q,
			      size_t nq, double *out, topo_error *err)
{
	double *v;
	size_t *ks, *ord;

	if (r == NULL || (nq > 0 && (q == NULL || out == NULL)))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_prediction_quantiles: a prediction and "
				 "arrays are required");
	for (size_t i = 0; i < nq; i++)
		if (!(q[i] >= 0 && q[i] <= 1))
			return topo__err(err, TOPO_EARG, NULL, NULL,
					 "quantile %g is not in 0..1", q[i]);
	if (r->n == 0) {
		for (size_t i = 0; i < nq; i++)
			out[i] = 0;
		return 0;
	}
	v = topo__mallocarray((size_t)r->n, sizeof(double));
	if (v == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory for %d finish times",
				 (int)r->n);
	ks = topo__mallocarray(2 * nq + 1, sizeof(size_t));
	if (ks == NULL) {
		topo__free(v);
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory for %zu quantiles", nq);
	}
	ord = ks + nq;
	for (int32_t i = 0; i < r->n; i++)
		v[i] = r->finish[i].cpu;
	/* The nearest rank: the smallest value with at least q of the
	 * members at or below it. */
	for (size_t i = 0; i < nq; i++) {
		double pos = ceil(q[i] * (double)r->n);

		ks[i] = pos < 1 ? 0 : (size_t)pos - 1;
		if (ks[i] >= (size_t)r->n)
			ks[i] = (size_t)r->n - 1;
		ord[i] = i;
		for (size_t j = i; j > 0 && ks[ord[j - 1]] > ks[ord[j]]; j--) {
			size_t t = ord[j];

			ord[j] = ord[j - 1];
			ord[j - 1] = t;
		}
	}
	/* In increasing order of rank, each selected above the one before:
	 * a selection leaves every value below its rank before it.  The
	 * least and the greatest are a scan. */
	for (size_t t = 0, lo = 0, n = (size_t)r->n; t < nq; t++) {
		size_t k = ks[ord[t]], at = k == 0 ? 0 : n - 1;

		if (k == 0 || k == n - 1) {
			for (size_t j = lo; j < n; j++)
				if (k == 0 ? v[j] < v[at] : v[j] > v[at]) {
					double x = v[at];

					v[at] = v[j];
					v[j] = x;
				}
		} else {
			select_k(v, lo, n, k);
		}
		out[ord[t]] = v[k] * 1e-9;
		lo = k;
	}
	topo__free(ks);
	topo__free(v);
	return 0;
}

int64_t topo_prediction_path_length(const topo_prediction *r)
{
	return r->nsteps;
}

const struct topo_path_step *topo_prediction_path_step(const topo_prediction *r,
							int64_t i)
{
	return i >= 0 && i < r->nsteps ? &r->steps[i] : NULL;
}

void topo_prediction_costs(const topo_prediction *r, struct topo_costs *out)
{
	size_t size = out->size;

	if (size < sizeof(size_t))
		return;
	memcpy(out, &r->costs,
	       size < sizeof(r->costs) ? size : sizeof(r->costs));
	out->size = size;
}

void topo_prediction_messages(const topo_prediction *r, int64_t *shm,
			      int64_t *net, int64_t *shm_bytes,
			      int64_t *net_bytes)
{
	if (shm != NULL)
		*shm = r->msgs[0];
	if (net != NULL)
		*net = r->msgs[1];
	if (shm_bytes != NULL)
		*shm_bytes = r->bytes[0];
	if (net_bytes != NULL)
		*net_bytes = r->bytes[1];
}

int64_t topo_prediction_events(const topo_prediction *r)
{
	return r->events;
}
