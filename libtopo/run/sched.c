/*
 * sched.c - a member's two-sided schedule of a plan (exec_internal.h,
 * "Two-sided schedules"): the events of its messages, the dependencies
 * that concern it as waits on its own events, and the ACKs that carry the
 * others from member to member.
 *
 * One pass over the messages finds the member's own (in plan order, so
 * that they can be looked up by binary search) and numbers its wire
 * messages per peer; one pass over the dependencies turns each that
 * concerns the member into a local wait, and collects the ACKs it sends
 * and receives; those are sorted, made unique and numbered after the data
 * messages of their pair; a last pass links every wait on an ACK.  A
 * plan's chains of combines (plan/order.c) are waits at their
 * destination: the APPLY (or LOCAL) of each combine after the one
 * before it.
 */
#define TOPO_INTERNAL
#include "run/sched.h"

#include <stdlib.h>
#include <string.h>

/* At most this many events in one member's schedule (indices stay well
 * inside int64_t arithmetic; allocation fails long before). */
#define MAX_EVENTS (INT64_C(1) << 40)

struct ack {
	int64_t b;    /* the message whose done it announces */
	int32_t peer; /* to (sent) or from (received) */
	int64_t ev;   /* its event, once made */
};

struct build {
	const struct topo_plan *p;
	const int32_t *host; /* [n], or NULL: member i is host i */
	int32_t r;	     /* the host whose schedule this is */
	topo_error *err;
	/* the member's messages, ascending, and each one's first event */
	struct tmsg {
		int64_t m, ev;
	} * tm;
	int64_t ntm, captm;
	struct topo__ev *ev;
	int64_t nev, capev;
	int64_t (*edge)[2]; /* {before, after} events */
	int64_t nedge, capedge;
	struct ack *out, *in; /* ACKs sent, received */
	int64_t nout, capout, nin, capin;
};

static int grow(void **a, int64_t *cap, int64_t need, size_t size,
		topo_error *err)
{
	int64_t c = *cap ? *cap : 64;
	void *q;

	if (need <= *cap)
		return 0;
	while (c < need)
		c *= 2;
	if (c > MAX_EVENTS)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "two-sided schedule: more than %lld events",
				 (long long)MAX_EVENTS);
	q = topo__realloc(*a, (size_t)c * size);
	if (q == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	*a = q;
	*cap = c;
	return 0;
}

static int add_ev(struct build *x, int64_t msg, int64_t seq, int32_t peer,
		  int kind)
{
	int rc = grow((void **)&x->ev, &x->capev, x->nev + 1, sizeof(*x->ev),
		      x->err);

	if (rc != 0)
		return rc;
	x->ev[x->nev++] = (struct topo__ev){msg, seq, peer, (uint8_t)kind, 0};
	return 0;
}

static int add_edge(struct build *x, int64_t before, int64_t after)
{
	int rc = grow((void **)&x->edge, &x->capedge, x->nedge + 1,
		      sizeof(*x->edge), x->err);

	if (rc != 0)
		return rc;
	x->edge[x->nedge][0] = before;
	x->edge[x->nedge][1] = after;
	x->nedge++;
	return 0;
}

static int add_ack(struct build *x, struct ack **a, int64_t *n, int64_t *cap,
		   int64_t b, int32_t peer)
{
	int rc = grow((void **)a, cap, *n + 1, sizeof(**a), x->err);

	if (rc != 0)
		return rc;
	(*a)[(*n)++] = (struct ack){b, peer, -1};
	return 0;
}

/* The host of member i. */
static inline int32_t H(const struct build *x, int32_t i)
{
	return x->host != NULL ? x->host[i] : i;
}

/* Index in tm of message m (one of the member's), or -1. */
static int64_t find_msg(const struct build *x, int64_t m)
{
	int64_t lo = 0, hi = x->ntm - 1;

	while (lo <= hi) {
		int64_t mid = lo + (hi - lo) / 2;

		if (x->tm[mid].m == m)
			return mid;
		if (x->tm[mid].m < m)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

/* The member's event where message m starts (SEND, LOCAL) or is done
 * (APPLY, LOCAL); the caller knows the member is the right end. */
static int64_t start_ev(const struct build *x, int64_t m)
{
	return x->tm[find_msg(x, m)].ev;
}

static int64_t done_ev(const struct build *x, int64_t m)
{
	const struct topo__msg *q = &x->p->msg[m];
	int64_t e = x->tm[find_msg(x, m)].ev;

	return H(x, q->src) == H(x, q->dst) ? e : e + 1; /* RECV, APPLY */
}

static int cmp_ack(const void *a, const void *b)
{
	const struct ack *u = a, *v = b;

	if (u->b != v->b)
		return u->b < v->b ? -1 : 1;
	return (u->peer > v->peer) - (u->peer < v->peer);
}

/* The peers of the member's events and ACKs, sorted and unique, so that
 * the numbers per peer take memory for them alone, not for every host (a
 * member's part of a plan over a million: plan/local.c). */
struct peers {
	int32_t *id;
	int64_t n;
};

static int cmp_i32(const void *a, const void *b)
{
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

	return (x > y) - (x < y);
}

static int peers_make(struct peers *pe, const struct build *x)
{
	int64_t n = 0, k = 0;

	pe->id = topo__mallocarray((size_t)(x->nev + x->nout + x->nin) + 1,
				   sizeof(int32_t));
	if (pe->id == NULL)
		return topo__err(x->err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory");
	for (int64_t e = 0; e < x->nev; e++)
		if (x->ev[e].peer >= 0)
			pe->id[n++] = x->ev[e].peer;
	for (int64_t i = 0; i < x->nout; i++)
		pe->id[n++] = x->out[i].peer;
	for (int64_t i = 0; i < x->nin; i++)
		pe->id[n++] = x->in[i].peer;
	qsort(pe->id, (size_t)n, sizeof(int32_t), cmp_i32);
	for (int64_t i = 0; i < n; i++)
		if (k == 0 || pe->id[k - 1] != pe->id[i])
			pe->id[k++] = pe->id[i];
	pe->n = k;
	return 0;
}

/* The index of host h among the peers (h is one). */
static int64_t peer_of(const struct peers *pe, int32_t h)
{
	const int32_t *f =
	    bsearch(&h, pe->id, (size_t)pe->n, sizeof(int32_t), cmp_i32);

	return f - pe->id;
}

/* Sorts, removes repeats, and makes an event for each ACK, numbered after
 * the data messages of its pair (count[peer's index]) in the order of b. */
static int make_acks(struct build *x, struct ack *a, int64_t *n, int64_t *count,
		     const struct peers *pe, int kind)
{
	int64_t k = 0;

	if (*n == 0)
		return 0;
	qsort(a, (size_t)*n, sizeof(*a), cmp_ack);
	for (int64_t i = 0; i < *n; i++)
		if (k == 0 || cmp_ack(&a[k - 1], &a[i]) != 0)
			a[k++] = a[i];
	*n = k;
	for (int64_t i = 0; i < k; i++) {
		int rc;

		a[i].ev = x->nev;
		rc = add_ev(x, a[i].b, count[peer_of(pe, a[i].peer)]++,
			    a[i].peer, kind);
		if (rc != 0)
			return rc;
	}
	return 0;
}

static int64_t find_ack(const struct ack *a, int64_t n, int64_t b, int32_t peer)
{
	struct ack key = {b, peer, -1};
	const struct ack *f = bsearch(&key, a, (size_t)n, sizeof(*a), cmp_ack);

	return f != NULL ? f->ev : -1;
}

static void build_free(struct build *x)
{
	topo__free(x->tm);
	topo__free(x->ev);
	topo__free(x->edge);
	topo__free(x->out);
	topo__free(x->in);
}

void topo__sched_free(struct topo__sched *s)
{
	if (s == NULL)
		return;
	topo__free(s->ev);
	topo__free(s->succ_off);
	topo__free(s->succ);
	topo__free(s);
}

/* The dependencies of the plan that concern member r, as waits on r's own
 * events, and the ACKs r sends and receives (pass 1), or the waits on the
 * ACKs it receives (pass 2, once they are events). */
static int scan_deps(struct build *x, int pass)
{
	const struct topo_plan *p = x->p;
	int32_t r = x->r;
	int rc = 0;

	for (int64_t b = 0; b < p->nmsg && rc == 0; b++) {
		const struct topo__msg *B = &p->msg[b];

		for (int64_t k = p->succ_off[b];
		     k < p->succ_off[b + 1] && rc == 0; k++) {
			int64_t a = p->succ[k];
			const struct topo__msg *A = &p->msg[a];

			int32_t bs = H(x, B->src), bd = H(x, B->dst),
				as = H(x, A->src), ad = H(x, A->dst);

			if (bd == as) {
				if (pass == 1 && r == as)
					rc = add_edge(x, done_ev(x, b),
						      start_ev(x, a));
			} else if (bd == ad) {
				if (pass == 1 && r == ad)
					rc = add_edge(x, done_ev(x, b),
						      done_ev(x, a));
				if (rc == 0 && pass == 1 && r == as && bs == as)
					rc = add_edge(x, start_ev(x, b),
						      start_ev(x, a));
			} else if (pass == 1) {
				if (r == bd)
					rc = add_ack(x, &x->out, &x->nout,
						     &x->capout, b, as);
				else if (r == as)
					rc = add_ack(x, &x->in, &x->nin,
						     &x->capin, b, bd);
			} else if (r == as) {
				rc = add_edge(x, find_ack(x->in, x->nin, b, bd),
					      start_ev(x, a));
			}
		}
	}
	return rc;
}

/* The hosts are valid for p (host NULL: a host per member). */
static int check_hosts(const struct topo_plan *p, const int32_t *host,
		       int32_t nhosts, int32_t r, topo_error *err)
{
	if (p->msg == NULL || nhosts < 1 || r < 0 || r >= nhosts)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "two-sided schedule: %s",
				 p->msg == NULL ? "plan is predict-only"
				 : nhosts < 1	? "no hosts"
						: "host out of range");
	for (int32_t i = 0; host != NULL && i < p->n; i++)
		if (host[i] < 0 || host[i] >= nhosts)
			return topo__err(err, TOPO_EARG, NULL, NULL,
					 "two-sided schedule: member %d on "
					 "host %d of %d",
					 (int)i, (int)host[i], (int)nhosts);
	return 0;
}

/* The member's messages and their events, in plan order (wire numbers
 * once the peers are known), their waits, and a chain of combines
 * (plan/order.c) at its destination: each one's bytes applied after the
 * one before it, however they arrive. */
static int own_messages(struct build *x)
{
	const struct topo_plan *p = x->p;
	int rc;

	for (int64_t m = 0; m < p->nmsg; m++) {
		const struct topo__msg *q = &p->msg[m];
		int32_t hs = H(x, q->src), hd = H(x, q->dst);

		if (hs != x->r && hd != x->r)
			continue;
		rc = grow((void **)&x->tm, &x->captm, x->ntm + 1,
			  sizeof(*x->tm), x->err);
		if (rc != 0)
			return rc;
		x->tm[x->ntm++] = (struct tmsg){m, x->nev};
		if (hs == hd)
			rc = add_ev(x, m, -1, -1, TOPO__EV_LOCAL);
		else if (hs == x->r)
			rc = add_ev(x, m, -1, hd, TOPO__EV_SEND);
		else {
			rc = add_ev(x, m, -1, hs, TOPO__EV_RECV);
			if (rc == 0)
				rc = add_ev(x, m, -1, -1, TOPO__EV_APPLY);
			if (rc == 0)
				rc = add_edge(x, x->nev - 2, x->nev - 1);
		}
		if (rc != 0)
			return rc;
	}
	rc = scan_deps(x, 1);
	for (int64_t i = 0; rc == 0 && p->cnext != NULL && i < x->ntm; i++) {
		int64_t b = x->tm[i].m, a = p->cnext[b];

		if (a >= 0 && H(x, p->msg[b].dst) == x->r)
			rc = add_edge(x, done_ev(x, b), done_ev(x, a));
	}
	return rc;
}

/* The wire numbers: per peer, the data messages in plan order, then the
 * ACKs; an ACK leaves once the message it announces is done here. */
static int wire_numbers(struct build *x)
{
	struct peers pe = {NULL, 0};
	int64_t *nto = NULL, *nfrom = NULL; /* messages per peer, by index */
	int rc = peers_make(&pe, x);

	if (rc == 0) {
		nto = topo__calloc((size_t)pe.n + 1, sizeof(int64_t));
		nfrom = topo__calloc((size_t)pe.n + 1, sizeof(int64_t));
		if (nto == NULL || nfrom == NULL)
			rc = topo__err(x->err, TOPO_ENOMEM, NULL, NULL,
				       "out of memory");
	}
	for (int64_t e = 0; rc == 0 && e < x->nev; e++) {
		struct topo__ev *v = &x->ev[e];

		if (v->kind == TOPO__EV_SEND)
			v->seq = nto[peer_of(&pe, v->peer)]++;
		else if (v->kind == TOPO__EV_RECV)
			v->seq = nfrom[peer_of(&pe, v->peer)]++;
	}
	if (rc == 0)
		rc =
		    make_acks(x, x->out, &x->nout, nto, &pe, TOPO__EV_ACK_SEND);
	if (rc == 0)
		rc =
		    make_acks(x, x->in, &x->nin, nfrom, &pe, TOPO__EV_ACK_RECV);
	for (int64_t i = 0; rc == 0 && i < x->nout; i++)
		rc = add_edge(x, done_ev(x, x->out[i].b), x->out[i].ev);
	if (rc == 0)
		rc = scan_deps(x, 2);
	topo__free(nto);
	topo__free(nfrom);
	topo__free(pe.id);
	return rc;
}

/* x's events into s: successors in CSR form, the wait counts and the
 * sends' and receives' counts. */
static int to_sched(struct topo__sched *s, struct build *x)
{
	int64_t *fill;

	s->host = x->r;
	s->nev = x->nev;
	s->ev = x->ev;
	x->ev = NULL;
	s->succ_off = topo__calloc((size_t)s->nev + 1, sizeof(int64_t));
	s->succ = topo__mallocarray((size_t)x->nedge + 1, sizeof(int64_t));
	fill = topo__mallocarray((size_t)s->nev + 1, sizeof(int64_t));
	if (s->succ_off == NULL || s->succ == NULL || fill == NULL) {
		topo__free(fill);
		return topo__err(x->err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory");
	}
	for (int64_t i = 0; i < x->nedge; i++) {
		s->succ_off[x->edge[i][0] + 1]++;
		s->ev[x->edge[i][1]].nwait++;
	}
	for (int64_t e = 0; e < s->nev; e++)
		s->succ_off[e + 1] += s->succ_off[e];
	memcpy(fill, s->succ_off, (size_t)s->nev * sizeof(int64_t));
	for (int64_t i = 0; i < x->nedge; i++)
		s->succ[fill[x->edge[i][0]]++] = x->edge[i][1];
	topo__free(fill);
	s->max_seq = -1;
	for (int64_t e = 0; e < s->nev; e++) {
		const struct topo__ev *v = &s->ev[e];

		if (v->kind == TOPO__EV_SEND || v->kind == TOPO__EV_ACK_SEND)
			s->nsend++;
		else if (v->kind == TOPO__EV_RECV ||
			 v->kind == TOPO__EV_ACK_RECV)
			s->nrecv++;
		if (v->seq > s->max_seq)
			s->max_seq = v->seq;
	}
	return 0;
}

int topo__sched_new(struct topo__sched **out, const struct topo_plan *p,
		    const int32_t *host, int32_t nhosts, int32_t r,
		    topo_error *err)
{
	struct build x = {.p = p, .host = host, .r = r, .err = err};
	struct topo__sched *s = NULL;
	int rc;

	*out = NULL;
	if (host == NULL)
		nhosts = p->n;
	rc = check_hosts(p, host, nhosts, r, err);
	if (rc != 0)
		return rc;
	s = topo__calloc(1, sizeof(*s));
	if (s == NULL)
		rc = topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	if (rc == 0)
		rc = own_messages(&x);
	if (rc == 0)
		rc = wire_numbers(&x);
	if (rc == 0)
		rc = to_sched(s, &x);
	build_free(&x);
	if (rc != 0) {
		topo__sched_free(s);
		return rc;
	}
	*out = s;
	return 0;
}
