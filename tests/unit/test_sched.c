/*
 * test_sched.c - two-sided schedules (libtopo/run/sched.c): every plan
 * split into per-host events that wait only for their own host's events,
 * as a transport between processes needs.
 *
 * For every operation x algorithm x tree shape (physical, hierarchical,
 * binomial, chain, kary:3) x group (1 to 26 members of two uneven
 * machines, strided and whole), whole and in small segments, with each
 * host's schedule built alone, for a host per member and for several
 * members per host (random blocks, as an MPI job places a task's
 * endpoints, and members scattered at random):
 *
 * 1. Structure: every transport message is one SEND at its source and a
 *    RECV then an APPLY at its destination, every local step one LOCAL;
 *    every SEND (ACK_SEND) has exactly one RECV (ACK_RECV) at its peer
 *    with the same number, numbers are unique per ordered pair and count
 *    data messages from 0 in plan order, RECVs wait for nothing.
 * 2. Order: over the union of the schedules plus the wire (SEND before
 *    its RECV, ACK_SEND before its ACK_RECV), the happens-before relation
 *    keeps every plan dependency's "done(b) before done(a)", and every
 *    chain of combines' (plan/order.c: the segmented plans of the
 *    reductions are in double, whose combines are chained), every
 *    conflicting pair of accesses of the plan in its order (a write
 *    before a later read: done before start; before a later write: done
 *    before done; a read before a later write: start before done, the
 *    executor finishing the send first), and a barrier's guarantee (each
 *    member's ENTER before every LEAVE).
 * 3. Execution: the test's own two-sided executor runs the schedules in a
 *    random interleaving of members, with each send's bytes taken from
 *    the source buffer either when it is posted or at a later random
 *    moment (eager and rendezvous), RECVs completing in any order into
 *    staging buffers, and the executor's rule that a member writes into
 *    bytes only after its sends reading them are complete; what every
 *    member ends with is checked against the operation's definition
 *    (algocheck.h), several seeds per plan.
 *
 * And the failures: a plan whose dependency is cut (a barrier's) shows in
 * the order check; a predict-only plan and a member out of range are
 * refused; every allocation failure is TOPO_ENOMEM with nothing leaked.
 */
#define TOPO_INTERNAL
#include "algocheck.h"
#include "alloc_hook.h"

static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:3"};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static const struct gspec gspecs[] = {
    {1, "ep 3", 1},
    {1, "ep 5,22", 2},
    {1, "row 1 cols 0:8:4", 3},
    {1, "ep 1:25:7", 4},
    {1, "row 0 cols 0:12:3", 5},
    {1, "ep 2:20:3", 7},
    {0, "all", 10},
    {1, "all - node 1", 16},
    {1, "all", 26},
};
#define NGSPECS (sizeof(gspecs) / sizeof(gspecs[0]))
static topo_machine *ms[2];
static topo_group *gs[NGSPECS];

static const char *const algos[TOPO_OP_COUNT][6] = {
    [TOPO_OP_BCAST] = {"flood"},
    [TOPO_OP_SCATTER] = {"tree", "or-combine", "direct"},
    [TOPO_OP_GATHER] = {"chunked", "tree"},
    [TOPO_OP_REDUCE] = {"hierarchical", "tree", "direct"},
    [TOPO_OP_ALLREDUCE] = {"tree", "hierarchical", "ring", "recursive-doubling",
			   "rabenseifner"},
    [TOPO_OP_ALLGATHER] = {"ring", "tree", "recursive-doubling", "bruck"},
    [TOPO_OP_REDUCE_SCATTER] = {"ring", "tree", "recursive-halving", "direct"},
    [TOPO_OP_ALLTOALL] = {"pairwise", "bruck", "direct"},
    [TOPO_OP_BARRIER] = {"dissemination", "tree"},
};

/* ---------------------------------------------------------------------- */
/* Every member's schedule, and the union as one graph */

struct all {
	const struct topo_plan *p;
	const int32_t *host;	/* [n] member -> host, or NULL: identity */
	int32_t nh;		/* hosts */
	struct topo__sched **s; /* [nh] */
	int64_t *base;		/* [nh + 1]: host r's events are base[r].. */
	/* per plan message: its start and done events (global ids) */
	int64_t *start, *done;
};

static int64_t gid(const struct all *A, int32_t r, int64_t e)
{
	return A->base[r] + e;
}

/* The host of member i. */
static int32_t H(const struct all *A, int32_t i)
{
	return A->host != NULL ? A->host[i] : i;
}

static void all_free(struct all *A)
{
	for (int32_t r = 0; A->s != NULL && r < A->nh; r++)
		topo__sched_free(A->s[r]);
	free(A->s);
	free(A->base);
	free(A->start);
	free(A->done);
}

/* Builds every host's schedule (host NULL: a host per member); checks
 * the structure (1).  Returns 0 when the structure holds. */
static int all_build(struct all *A, const struct topo_plan *p,
		     const int32_t *host, int32_t nh, const char *label)
{
	int32_t n = host != NULL ? nh : p->n;
	long failed = check_failed;
	topo_error err;

	memset(A, 0, sizeof(*A));
	A->p = p;
	A->host = host;
	A->nh = n;
	A->s = calloc((size_t)n, sizeof(*A->s));
	A->base = calloc((size_t)n + 1, sizeof(int64_t));
	A->start = malloc(((size_t)p->nmsg + 1) * sizeof(int64_t));
	A->done = malloc(((size_t)p->nmsg + 1) * sizeof(int64_t));
	for (int64_t m = 0; m < p->nmsg; m++)
		A->start[m] = A->done[m] = -1;
	for (int32_t r = 0; r < n; r++) {
		int rc;

		topo_error_clear(&err);
		rc = topo__sched_new(&A->s[r], p, host, nh, r, &err);
		CHECK(rc == 0, "%s: host %d: %d %s", label, (int)r, rc,
		      err.text);
		if (rc != 0)
			return -1;
		A->base[r + 1] = A->base[r] + A->s[r]->nev;
	}
	/* Events of each message, where they must be. */
	for (int32_t r = 0; r < n; r++) {
		const struct topo__sched *s = A->s[r];

		for (int64_t e = 0; e < s->nev; e++) {
			const struct topo__ev *v = &s->ev[e];
			const struct topo__msg *m = &p->msg[v->msg];
			int ok = 1;

			switch (v->kind) {
			case TOPO__EV_SEND:
				ok = H(A, m->src) == r &&
				     H(A, m->dst) == v->peer && v->peer != r &&
				     A->start[v->msg] < 0;
				A->start[v->msg] = gid(A, r, e);
				break;
			case TOPO__EV_RECV:
				ok = H(A, m->dst) == r &&
				     H(A, m->src) == v->peer && v->peer != r &&
				     v->nwait == 0 && e + 1 < s->nev &&
				     s->ev[e + 1].kind == TOPO__EV_APPLY &&
				     s->ev[e + 1].msg == v->msg;
				break;
			case TOPO__EV_APPLY:
				ok = H(A, m->dst) == r && H(A, m->src) != r &&
				     A->done[v->msg] < 0;
				A->done[v->msg] = gid(A, r, e);
				break;
			case TOPO__EV_LOCAL:
				ok = H(A, m->src) == r && H(A, m->dst) == r &&
				     A->start[v->msg] < 0;
				A->start[v->msg] = A->done[v->msg] =
				    gid(A, r, e);
				break;
			case TOPO__EV_ACK_SEND:
				ok = H(A, m->dst) == r && v->peer != r;
				break;
			case TOPO__EV_ACK_RECV:
				ok = H(A, m->dst) == v->peer && v->peer != r &&
				     v->nwait == 0;
				break;
			default:
				ok = 0;
			}
			CHECK(ok, "%s: host %d event %lld (kind %d, msg %lld)",
			      label, (int)r, (long long)e, v->kind,
			      (long long)v->msg);
		}
	}
	for (int64_t m = 0; m < p->nmsg; m++)
		CHECK(A->start[m] >= 0 && A->done[m] >= 0,
		      "%s: message %lld has no start or done event", label,
		      (long long)m);
	/* Wire messages: each send matched by one receive, same number;
	 * numbers unique per pair; data numbered 0.. in plan order. */
	for (int32_t r = 0; r < n; r++) {
		const struct topo__sched *s = A->s[r];
		int64_t *next = calloc((size_t)n, sizeof(int64_t));

		for (int64_t e = 0; e < s->nev; e++) {
			const struct topo__ev *v = &s->ev[e];
			const struct topo__sched *d;
			int want, found = 0;

			if (v->kind == TOPO__EV_SEND) {
				CHECK(v->seq == next[v->peer],
				      "%s: send %lld from %d to %d numbered "
				      "%lld, want %lld",
				      label, (long long)v->msg, (int)r,
				      (int)v->peer, (long long)v->seq,
				      (long long)next[v->peer]);
				next[v->peer]++;
			}
			if (v->kind != TOPO__EV_SEND &&
			    v->kind != TOPO__EV_ACK_SEND)
				continue;
			want = v->kind == TOPO__EV_SEND ? TOPO__EV_RECV
							: TOPO__EV_ACK_RECV;
			d = A->s[v->peer];
			for (int64_t f = 0; f < d->nev; f++) {
				const struct topo__ev *u = &d->ev[f];

				if ((u->kind == TOPO__EV_RECV ||
				     u->kind == TOPO__EV_ACK_RECV) &&
				    u->peer == r && u->seq == v->seq) {
					found++;
					CHECK(u->kind == want &&
						  u->msg == v->msg,
					      "%s: %d->%d number %lld: kinds "
					      "%d/%d, messages %lld/%lld",
					      label, (int)r, (int)v->peer,
					      (long long)v->seq, v->kind,
					      u->kind, (long long)v->msg,
					      (long long)u->msg);
				}
			}
			CHECK(found == 1,
			      "%s: %d->%d number %lld received %d times", label,
			      (int)r, (int)v->peer, (long long)v->seq, found);
		}
		free(next);
	}
	return check_failed == failed ? 0 : -1;
}

/* The receive at member d matching a wire message from r numbered seq
 * (local id), or -1. */
static int64_t match(const struct all *A, int32_t r, int32_t d, int64_t seq)
{
	const struct topo__sched *s = A->s[d];

	for (int64_t f = 0; f < s->nev; f++)
		if ((s->ev[f].kind == TOPO__EV_RECV ||
		     s->ev[f].kind == TOPO__EV_ACK_RECV) &&
		    s->ev[f].peer == r && s->ev[f].seq == seq)
			return f;
	return -1;
}

/* ---------------------------------------------------------------------- */
/* 2. Order: happens-before over the union */

#define MAX_ORDER_EVENTS 7000

/* anc[y * w + x / 64] bit x: event x happens before event y.  NULL when
 * there are too many events. */
static uint64_t *happens_before(const struct all *A, size_t *words)
{
	int32_t n = A->nh;
	int64_t E = A->base[n], head = 0, tail = 0;
	size_t w = (size_t)(E + 63) / 64;
	int64_t *wait, *q, *xsucc;
	uint64_t *anc;

	*words = w;
	if (E > MAX_ORDER_EVENTS)
		return NULL;
	anc = calloc((size_t)E * w + 1, sizeof(uint64_t));
	wait = calloc((size_t)E + 1, sizeof(int64_t));
	q = calloc((size_t)E + 1, sizeof(int64_t));
	xsucc = malloc(((size_t)E + 1) * sizeof(int64_t)); /* wire */
	for (int32_t r = 0; r < n; r++) {
		const struct topo__sched *s = A->s[r];

		for (int64_t e = 0; e < s->nev; e++) {
			const struct topo__ev *v = &s->ev[e];
			int64_t g = gid(A, r, e);

			wait[g] += v->nwait;
			xsucc[g] = -1;
			if (v->kind == TOPO__EV_SEND ||
			    v->kind == TOPO__EV_ACK_SEND) {
				int64_t f = match(A, r, v->peer, v->seq);

				xsucc[g] = gid(A, v->peer, f);
			}
		}
	}
	for (int64_t g = 0; g < E; g++)
		if (xsucc[g] >= 0)
			wait[xsucc[g]]++;
	for (int64_t g = 0; g < E; g++)
		if (wait[g] == 0)
			q[tail++] = g;
	while (head < tail) {
		int64_t g = q[head++];
		int32_t r = 0;
		const struct topo__sched *s;
		int64_t e;

		while (A->base[r + 1] <= g)
			r++;
		s = A->s[r];
		e = g - A->base[r];
		for (int64_t k = s->succ_off[e]; k <= s->succ_off[e + 1]; k++) {
			int64_t h = k < s->succ_off[e + 1]
					? gid(A, r, s->succ[k])
					: xsucc[g];

			if (h < 0)
				continue;
			for (size_t j = 0; j < w; j++)
				anc[(size_t)h * w + j] |=
				    anc[(size_t)g * w + j];
			anc[(size_t)h * w + (size_t)g / 64] |= 1ULL << (g % 64);
			if (--wait[h] == 0)
				q[tail++] = h;
		}
	}
	CHECK(tail == E,
	      "the schedules' union has a cycle (%lld of %lld "
	      "events ordered)",
	      (long long)tail, (long long)E);
	free(wait);
	free(q);
	free(xsucc);
	return anc;
}

static int hb(const uint64_t *anc, size_t w, int64_t x, int64_t y)
{
	return x == y ||
	       (int)((anc[(size_t)y * w + (size_t)x / 64] >> (x % 64)) & 1);
}

/* Checks (2) for plan p; returns the number of violations (-1: too large
 * to check). */
static int64_t check_order(const struct all *A, const char *label)
{
	const struct topo_plan *p = A->p;
	size_t w, pw;
	uint64_t *anc = happens_before(A, &w), *panc;
	int64_t bad = 0;

	if (anc == NULL)
		return -1;
	panc = ancestors_max(p, &pw, MAX_ORDER_EVENTS);
	/* Dependencies: done(b) before done(a). */
	for (int64_t b = 0; b < p->nmsg; b++)
		for (int64_t k = p->succ_off[b]; k < p->succ_off[b + 1]; k++) {
			int64_t a = p->succ[k];

			if (!hb(anc, w, A->done[b], A->done[a]) && bad++ < 3)
				fprintf(stderr,
					"%s: message %lld waits for %lld, "
					"done is not after its done\n",
					label, (long long)a, (long long)b);
		}
	/* Chains of combines (plan/order.c): each one's done after the
	 * done of the one before it. */
	for (int64_t b = 0; p->cnext != NULL && b < p->nmsg; b++) {
		int64_t a = p->cnext[b];

		if (a >= 0 && !hb(anc, w, A->done[b], A->done[a]) && bad++ < 3)
			fprintf(stderr,
				"%s: combine %lld follows %lld in its chain, "
				"done is not after its done\n",
				label, (long long)a, (long long)b);
	}
	/* Conflicting accesses, in the plan's order. */
	for (int64_t x = 0; panc != NULL && x < p->nmsg; x++)
		for (int64_t y = 0; y < p->nmsg; y++) {
			const struct topo__msg *X = &p->msg[x], *Y = &p->msg[y];
			/* accesses: 0 read at src, 1 write at dst */
			for (int ax = 0; ax < 2; ax++)
				for (int ay = 0; ay < 2; ay++) {
					int32_t mx = ax ? X->dst : X->src,
						my = ay ? Y->dst : Y->src;
					int bx = ax ? X->dbuf : X->sbuf,
					    by = ay ? Y->dbuf : Y->sbuf;
					int64_t ox = ax ? X->doff : X->soff,
						oy = ay ? Y->doff : Y->soff;
					int64_t from, to;

					if (x == y || mx != my || bx != by ||
					    (!ax && !ay) || X->len == 0 ||
					    Y->len == 0 || ox + X->len <= oy ||
					    oy + Y->len <= ox ||
					    !is_ancestor(panc, pw, x, y))
						continue;
					from = ax ? A->done[x] : A->start[x];
					to = ay ? A->done[y] : A->start[y];
					if (!hb(anc, w, from, to) && bad++ < 3)
						fprintf(
						    stderr,
						    "%s: messages %lld then "
						    "%lld (%s then %s at "
						    "member %d) not "
						    "ordered\n",
						    label, (long long)x,
						    (long long)y,
						    ax ? "write" : "read",
						    ay ? "write" : "read",
						    (int)mx);
				}
		}
	/* A barrier: every ENTER before every LEAVE. */
	for (int64_t x = 0; x < p->nmsg; x++)
		for (int64_t y = 0; y < p->nmsg; y++)
			if (p->msg[x].mark == TOPO__MARK_ENTER &&
			    p->msg[y].mark == TOPO__MARK_LEAVE &&
			    !hb(anc, w, A->done[x], A->start[y]) && bad++ < 3)
				fprintf(stderr,
					"%s: member %d may leave before "
					"member %d enters\n",
					label, (int)p->msg[y].src,
					(int)p->msg[x].src);
	free(anc);
	free(panc);
	return bad;
}

/* ---------------------------------------------------------------------- */
/* 3. A two-sided executor over the test's buffers */

struct wire {
	int posted, taken, done; /* send posted, bytes taken, send complete */
	unsigned char *data;
};

struct exec {
	const struct all *A;
	struct run x;	       /* buffers (algocheck.h) */
	int32_t *left;	       /* [E] remaining waits */
	unsigned char *state;  /* [E]: 0 waiting, 1 ready, 2 done */
	unsigned char **stage; /* [E]: a RECV's staged bytes */
	struct wire *wire;     /* [E], by the SEND's global id */
	int64_t *send_of;      /* [E]: a receive's SEND (global) */
	int64_t todo;	       /* actions left */
};

static int32_t host_of(const struct all *A, int64_t g)
{
	int32_t r = 0;

	while (A->base[r + 1] <= g)
		r++;
	return r;
}

static const struct topo__ev *ev_of(const struct all *A, int64_t g)
{
	int32_t r = host_of(A, g);

	return &A->s[r]->ev[g - A->base[r]];
}

static void release(struct exec *X, int64_t g)
{
	const struct all *A = X->A;
	int32_t r = host_of(A, g);
	const struct topo__sched *s = A->s[r];
	int64_t e = g - A->base[r];

	X->state[g] = 2;
	X->todo--;
	for (int64_t k = s->succ_off[e]; k < s->succ_off[e + 1]; k++) {
		int64_t h = gid(A, r, s->succ[k]);

		if (--X->left[h] == 0)
			X->state[h] = 1;
	}
}

/* Whether member i's host has a send not complete that reads bytes [off,
 * off + len) of i's buffer b. */
static int send_pending(const struct exec *X, int32_t i, int b, int64_t off,
			int64_t len)
{
	const struct all *A = X->A;
	int32_t r = H(A, i);

	for (int64_t e = 0; e < A->s[r]->nev; e++) {
		int64_t g = gid(A, r, e);
		const struct topo__ev *v = &A->s[r]->ev[e];
		const struct topo__msg *m;

		if (v->kind != TOPO__EV_SEND || !X->wire[g].posted ||
		    X->wire[g].done)
			continue;
		m = &A->p->msg[v->msg];
		if (m->src == i && m->sbuf == b && m->soff < off + len &&
		    off < m->soff + m->len)
			return 1;
	}
	return 0;
}

static void take(struct exec *X, int64_t g)
{
	const struct topo__ev *v = ev_of(X->A, g);
	const struct topo__msg *m = &X->A->p->msg[v->msg];

	if (v->kind == TOPO__EV_SEND)
		memcpy(X->wire[g].data, X->x.buf[m->sbuf][m->src] + m->soff,
		       (size_t)m->len);
	X->wire[g].taken = 1;
	X->todo--;
}

static void apply(struct exec *X, const struct topo__msg *m,
		  const unsigned char *src)
{
	unsigned char *d = X->x.buf[m->dbuf][m->dst] + m->doff;

	if (m->kind == TOPO__REDUCE)
		ref_reduce(X->A->p->params.type, X->A->p->params.redop, d, src,
			   (size_t)m->len);
	else
		memmove(d, src, (size_t)m->len);
	if (m->slot >= 0)
		X->x.count[m->slot]++;
}

/* Tries action g (an event, or the wire of a posted send): returns 1 when
 * it ran. */
static int step(struct exec *X, int64_t g)
{
	const struct all *A = X->A;
	const struct topo__ev *v = ev_of(A, g);
	const struct topo__msg *m = &A->p->msg[v->msg];

	if (X->state[g] == 2) {
		/* a posted send: take its bytes, or complete it */
		struct wire *wr = &X->wire[g];

		if ((v->kind != TOPO__EV_SEND &&
		     v->kind != TOPO__EV_ACK_SEND) ||
		    wr->done)
			return 0;
		if (!wr->taken) {
			take(X, g);
		} else {
			wr->done = 1;
			X->todo--;
		}
		return 1;
	}
	if (X->state[g] != 1)
		return 0;
	switch (v->kind) {
	case TOPO__EV_SEND:
	case TOPO__EV_ACK_SEND:
		X->wire[g].posted = 1;
		if (v->kind == TOPO__EV_SEND)
			X->wire[g].data = malloc((size_t)m->len + 1);
		if (check_rand_range(0, 1))
			take(X, g); /* eager */
		release(X, g);
		return 1;
	case TOPO__EV_RECV:
	case TOPO__EV_ACK_RECV: {
		int64_t sg = X->send_of[g];

		if (sg < 0 || !X->wire[sg].taken)
			return 0;
		if (v->kind == TOPO__EV_RECV) {
			X->stage[g] = malloc((size_t)m->len + 1);
			memcpy(X->stage[g], X->wire[sg].data, (size_t)m->len);
		}
		release(X, g);
		return 1;
	}
	case TOPO__EV_APPLY: {
		int64_t rg = g - 1; /* its RECV */

		if (send_pending(X, m->dst, m->dbuf, m->doff, m->len))
			return 0;
		apply(X, m, X->stage[rg]);
		release(X, g);
		return 1;
	}
	case TOPO__EV_LOCAL: {
		unsigned char *tmp;

		if (send_pending(X, m->dst, m->dbuf, m->doff, m->len))
			return 0;
		tmp = malloc((size_t)m->len + 1);
		memcpy(tmp, X->x.buf[m->sbuf][m->src] + m->soff,
		       (size_t)m->len);
		apply(X, m, tmp);
		free(tmp);
		release(X, g);
		return 1;
	}
	}
	return 0;
}

/* Runs the schedules in a random interleaving; returns the first wrong
 * member (or -1), or -2 when the run stuck. */
static int32_t execute(const struct all *A, char *why, size_t size)
{
	const struct topo_plan *p = A->p;
	int32_t n = p->n;
	int64_t E = A->base[A->nh];
	struct exec X = {.A = A};
	int32_t bad;

	/* buffers as algocheck's replay makes them */
	memset(&X.x, 0, sizeof(X.x));
	X.x.p = p;
	X.x.count = calloc((size_t)p->nslots + 1, sizeof(int64_t));
	for (int b = 0; b < TOPO__NBUF; b++) {
		X.x.buf[b] = calloc((size_t)n, sizeof(unsigned char *));
		for (int32_t r = 0; r < n; r++) {
			size_t len = (size_t)bsize(p, b, r);

			X.x.buf[b][r] = malloc(len + 1);
			if (b == TOPO__SEND)
				fill_send(p, r, X.x.buf[b][r], len);
			else
				memset(X.x.buf[b][r], TOPO__POISON, len);
		}
	}
	X.left = calloc((size_t)E + 1, sizeof(int32_t));
	X.state = calloc((size_t)E + 1, 1);
	X.stage = calloc((size_t)E + 1, sizeof(unsigned char *));
	X.wire = calloc((size_t)E + 1, sizeof(struct wire));
	X.send_of = malloc(((size_t)E + 1) * sizeof(int64_t));
	for (int64_t g = 0; g < E; g++)
		X.send_of[g] = -1;
	for (int32_t r = 0; r < A->nh; r++)
		for (int64_t e = 0; e < A->s[r]->nev; e++) {
			const struct topo__ev *v = &A->s[r]->ev[e];
			int64_t g = gid(A, r, e);

			X.left[g] = v->nwait;
			X.state[g] = v->nwait == 0;
			X.todo++;
			if (v->kind == TOPO__EV_SEND ||
			    v->kind == TOPO__EV_ACK_SEND) {
				X.send_of[gid(A, v->peer,
					      match(A, r, v->peer, v->seq))] =
				    g;
				X.todo += 2; /* take, complete */
			}
		}
	while (X.todo > 0) {
		int64_t start = check_rand_range(0, E - 1), g;
		int ran = 0;

		for (int64_t i = 0; i < E && !ran; i++) {
			g = (start + i) % E;
			ran = step(&X, g);
		}
		if (!ran)
			break;
	}
	why[0] = '\0';
	bad = X.todo > 0 ? -2 : wrong_member_why(p, &X.x, why, size);
	if (bad == -1)
		for (int64_t s = 0; s < p->nslots; s++)
			if (X.x.count[s] != p->slot_expect[s]) {
				snprintf(why, size,
					 "receipt counter %lld: %lld, want "
					 "%lld",
					 (long long)s, (long long)X.x.count[s],
					 (long long)p->slot_expect[s]);
				bad = p->slot_member[s];
				break;
			}
	for (int64_t g = 0; g < E; g++) {
		free(X.stage[g]);
		free(X.wire[g].data);
	}
	free(X.left);
	free(X.state);
	free(X.stage);
	free(X.wire);
	free(X.send_of);
	run_free(&X.x);
	return bad;
}

/* ---------------------------------------------------------------------- */

static topo_plan *plan(const topo_tree *t, enum topo_op op, const char *algo,
		       size_t bytes, size_t segment, enum topo_type type,
		       enum topo_redop redop)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;

	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = algo;
	if (op != TOPO_OP_BARRIER)
		pp.bytes = bytes;
	if (topo_op_reduces(op)) {
		pp.type = type;
		pp.redop = redop;
	}
	pp.segment = segment;
	topo_error_clear(&err);
	if (topo_plan_new(&p, t, &pp, &err) != 0)
		return NULL;
	return p;
}

static long plans_checked, orders_checked, runs_checked;

static long hosted_checked;

/* Checks (1), (2) and (3) for p's schedules on hosts host[] (NULL: a host
 * per member). */
static void check_hosts(const topo_plan *p, const int32_t *host, int32_t nh,
			const char *label, int runs)
{
	struct all A;
	char why[200];

	if (all_build(&A, p, host, nh, label) != 0) {
		all_free(&A);
		return;
	}
	plans_checked++;
	hosted_checked += host != NULL;
	{
		int64_t bad = check_order(&A, label);

		if (bad >= 0) {
			orders_checked++;
			CHECK(bad == 0, "%s: %lld ordering violations", label,
			      (long long)bad);
		}
	}
	for (int i = 0; i < runs; i++) {
		int32_t bad = execute(&A, why, sizeof(why));

		runs_checked++;
		CHECK(bad == -1, "%s: two-sided run %d: %s%d: %s", label, i,
		      bad == -2 ? "stuck, " : "member ", (int)bad, why);
	}
	all_free(&A);
}

/* A host per member, then several members per host: in blocks as an MPI
 * job places a task's endpoints (some hosts holding one member, some
 * several), and scattered at random (members of one host far apart in the
 * tree). */
static void check_plan(const topo_plan *p, const char *label, int runs)
{
	int32_t n = p->n;
	int32_t *host = malloc(((size_t)n + 1) * sizeof(int32_t));
	char l2[220];

	int pick = (int)(plans_checked % 2);

	check_hosts(p, NULL, 0, label, runs);
	if (n < 2)
		goto out;
	for (int v = 0; v < 2; v++) {
		int32_t nh;

		/* quick (valgrind): one of the two, in turn */
		if (check_quick() && v != pick)
			continue;
		nh = (int32_t)check_rand_range(1, (n + 1) / 2);
		if (v == 0) {
			/* contiguous blocks of random sizes, every host used */
			int32_t h = 0;

			for (int32_t i = 0; i < n; i++) {
				if (i > 0 && h + 1 < nh &&
				    (n - i <= nh - h - 1 ||
				     check_rand_range(0, 2) == 0))
					h++;
				host[i] = h;
			}
			nh = h + 1;
		} else {
			for (int32_t i = 0; i < n; i++)
				host[i] = (int32_t)check_rand_range(0, nh - 1);
		}
		snprintf(l2, sizeof(l2), "%s, on %d hosts (%s)", label, (int)nh,
			 v == 0 ? "blocks" : "scattered");
		check_hosts(p, host, nh, l2, (runs + 1) / 2);
	}
out:
	free(host);
}

static void test_coverage(void)
{
	int quick = check_quick();

	for (int op = 0; op < TOPO_OP_COUNT; op++)
		for (int ai = 0; ai < 6 && algos[op][ai] != NULL; ai++)
			for (size_t gi = 0; gi < NGSPECS; gi++)
				for (size_t si = 0; si < NSHAPES; si++) {
					topo_tree *t = NULL;
					topo_error err;

					if (quick && (gi + si) % 3 != 0)
						continue;
					topo_error_clear(&err);
					if (topo_tree_new(&t, gs[gi],
							  shapes[si],
							  &err) != 0)
						continue;
					/* whole, then small segments */
					for (int seg = 0; seg < 2; seg++) {
						char label[160];
						size_t bytes = seg ? 64 : 8;
						/* in segments, the
						 * reductions in double:
						 * chains of combines */
						topo_plan *p = plan(
						    t, op, algos[op][ai], bytes,
						    seg ? 16 : 0,
						    seg ? TOPO_DOUBLE
							: TOPO_INT32,
						    TOPO_SUM);

						snprintf(label, sizeof(label),
							 "%s %s, %d members, "
							 "%s, %zu B%s",
							 topo_op_name(op),
							 algos[op][ai],
							 (int)gs[gi]->size,
							 shapes[si], bytes,
							 seg ? " in 16 B "
							       "segments"
							     : "");
						CHECK(
						    p != NULL ||
							op == TOPO_OP_BARRIER ||
							(op == TOPO_OP_REDUCE &&
							 strcmp(
							     algos[op][ai],
							     "hierarchical") ==
							     0) ||
							(op ==
							     TOPO_OP_ALLREDUCE &&
							 strcmp(
							     algos[op][ai],
							     "hierarchical") ==
							     0),
						    "%s: not planned", label);
						if (p != NULL)
							check_plan(p, label,
								   quick ? 1
									 : 3);
						topo_plan_free(p);
						if (op == TOPO_OP_BARRIER)
							break;
					}
					topo_tree_free(t);
				}
	printf("test_sched: %ld schedules of plans (%ld with several members "
	       "per host), %ld order checks, %ld two-sided runs\n",
	       plans_checked, hosted_checked, orders_checked, runs_checked);
	CHECK(plans_checked > (quick ? 400 : 2500) &&
		  hosted_checked > (quick ? 200 : 1500),
	      "only %ld plans checked (%ld with hosts)", plans_checked,
	      hosted_checked);
	CHECK(orders_checked > plans_checked / 2,
	      "only %ld of %ld plans' order checked", orders_checked,
	      plans_checked);
}

/* Other types and operators: the schedule does not depend on them, the
 * execution's reductions do. */
static void test_types(void)
{
	topo_tree *t = tree(gs[5], "binomial");
	static const struct {
		enum topo_type ty;
		enum topo_redop op;
	} tos[] = {{TOPO_INT8, TOPO_MAX},   {TOPO_UINT64, TOPO_PROD},
		   {TOPO_FLOAT, TOPO_MIN},  {TOPO_DOUBLE, TOPO_SUM},
		   {TOPO_INT16, TOPO_BXOR}, {TOPO_UINT32, TOPO_BOR}};

	for (size_t i = 0; i < sizeof(tos) / sizeof(tos[0]); i++)
		for (int op = 0; op < TOPO_OP_COUNT; op++) {
			char label[120];
			topo_plan *p;

			if (!topo_op_reduces(op))
				continue;
			p = plan(t, op, op == TOPO_OP_REDUCE ? "tree" : NULL,
				 48, 16, tos[i].ty, tos[i].op);
			snprintf(label, sizeof(label), "%s, type %d op %d",
				 topo_op_name(op), tos[i].ty, tos[i].op);
			CHECK(p != NULL, "%s: not planned", label);
			if (p != NULL)
				check_plan(p, label, 2);
			topo_plan_free(p);
		}
	topo_tree_free(t);
}

/* A barrier with one dependency cut out: a LEAVE no longer waits for a
 * message it received, which the order check must find. */
static void test_cut_dependency(void)
{
	topo_tree *t = tree(gs[6], "binomial");
	topo_plan *p =
	    plan(t, TOPO_OP_BARRIER, "tree", 0, 0, TOPO_INT8, TOPO_SUM);
	struct all A;
	int64_t cut_b = -1, cut_k = -1;

	CHECK(p != NULL, "barrier tree not planned");
	if (p == NULL)
		goto out;
	for (int64_t b = 0; b < p->nmsg && cut_k < 0; b++)
		for (int64_t k = p->succ_off[b]; k < p->succ_off[b + 1]; k++)
			if (p->msg[p->succ[k]].mark == TOPO__MARK_LEAVE &&
			    p->msg[b].src != p->msg[b].dst) {
				cut_b = b;
				cut_k = k;
				break;
			}
	CHECK(cut_k >= 0, "no LEAVE with a transport predecessor");
	if (cut_k < 0)
		goto out;
	/* Remove successor cut_k from the CSR lists. */
	p->msg[p->succ[cut_k]].nwait--;
	for (int64_t k = cut_k; k + 1 < p->succ_off[p->nmsg]; k++)
		p->succ[k] = p->succ[k + 1];
	for (int64_t m = cut_b + 1; m <= p->nmsg; m++)
		p->succ_off[m]--;
	if (all_build(&A, p, NULL, 0, "cut barrier") == 0)
		CHECK(check_order(&A, "cut barrier (a violation expected)") > 0,
		      "a barrier missing a dependency passed the order check");
	all_free(&A);
out:
	topo_plan_free(p);
	topo_tree_free(t);
}

static void test_refusals(void)
{
	topo_tree *t = tree(gs[3], "binomial");
	topo_plan *p = plan(t, TOPO_OP_BCAST, NULL, 8, 0, TOPO_INT8, TOPO_SUM);
	struct topo__sched *s = (void *)1;
	struct topo_plan_params pp;
	topo_plan *q = NULL;
	topo_error err;
	int rc;

	topo_error_clear(&err);
	rc = topo__sched_new(&s, p, NULL, 0, p->n, &err);
	CHECK(rc == TOPO_EARG && s == NULL, "member n: %d", rc);
	topo_error_clear(&err);
	rc = topo__sched_new(&s, p, NULL, 0, -1, &err);
	CHECK(rc == TOPO_EARG && s == NULL, "member -1: %d", rc);
	{
		int32_t *host = calloc((size_t)p->n, sizeof(int32_t));

		topo_error_clear(&err);
		rc = topo__sched_new(&s, p, host, 0, 0, &err);
		CHECK(rc == TOPO_EARG && s == NULL, "no hosts: %d", rc);
		topo_error_clear(&err);
		rc = topo__sched_new(&s, p, host, 2, 2, &err);
		CHECK(rc == TOPO_EARG && s == NULL, "host 2 of 2: %d", rc);
		host[p->n - 1] = 2;
		topo_error_clear(&err);
		rc = topo__sched_new(&s, p, host, 2, 0, &err);
		CHECK(rc == TOPO_EARG && s == NULL &&
			  strstr(err.text, "on host 2 of 2") != NULL,
		      "a member on host 2 of 2: %d %s", rc, err.text);
		host[p->n - 1] = 1;
		topo_error_clear(&err);
		rc = topo__sched_new(&s, p, host, 2, 1, &err);
		CHECK(rc == 0 && s != NULL && s->host == 1, "host 1: %d %s", rc,
		      err.text);
		topo__sched_free(s);
		s = NULL;
		free(host);
	}
	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
	pp.predict_only = 1;
	topo_error_clear(&err);
	CHECK(topo_plan_new(&q, t, &pp, &err) == 0, "predict-only plan: %s",
	      err.text);
	topo_error_clear(&err);
	rc = topo__sched_new(&s, q, NULL, 0, 0, &err);
	CHECK(rc == TOPO_EARG && s == NULL &&
		  strstr(err.text, "predict-only") != NULL,
	      "predict-only: %d %s", rc, err.text);
	topo_plan_free(q);
	topo_plan_free(p);
	topo_tree_free(t);
}

/* Every allocation failing in turn: TOPO_ENOMEM, nothing leaked (the
 * sanitizer and valgrind runs see leaks), and success once none fails. */
static void test_nomem(void)
{
	topo_tree *t = tree(gs[6], "binomial");
	topo_plan *p = plan(t, TOPO_OP_ALLREDUCE, "recursive-doubling", 64, 16,
			    TOPO_INT32, TOPO_SUM);
	int32_t hosts[10] = {0, 0, 0, 1, 1, 2, 2, 2, 2, 1};
	int ok = 0;

	CHECK(p != NULL && p->n == 10, "allreduce not planned");
	for (int k = 0; p != NULL && k < 10000 && !ok; k++) {
		struct topo__sched *s = NULL;
		topo_error err;
		int rc;

		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo__sched_new(&s, p, hosts, 3, 1, &err);
		topo__alloc_fail_after(-1);
		if (rc == 0) {
			ok = 1;
			CHECK(s != NULL && s->nev > 0, "built at %d", k);
		} else {
			CHECK(rc == TOPO_ENOMEM && s == NULL, "failure %d: %d",
			      k, rc);
		}
		topo__sched_free(s);
	}
	CHECK(ok, "never built with allocations succeeding");
	topo_plan_free(p);
	topo_tree_free(t);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_sched", 20261124);
	uneven_groups(gspecs, NGSPECS, ms, gs);
	CHECK_RUN(coverage, test_coverage());
	CHECK_RUN(types, test_types());
	CHECK_RUN(cut_dependency, test_cut_dependency());
	CHECK_RUN(refusals, test_refusals());
	CHECK_RUN(nomem, test_nomem());
	uneven_groups_free(NGSPECS, ms, gs);
	return check_done("test_sched");
}
