/*
 * sched.h - two-sided schedules (sched.c): one host's part of a plan, for a
 * transport between processes (MPI), where a process can wait only for
 * what happens in itself.
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_RUN_SCHED_H
#define TOPO_RUN_SCHED_H

#include "plan/plan.h"

/* Two-sided schedules (sched.c): one host's part of a plan, for a
 * transport between processes (MPI), where a process can wait only for
 * what happens in itself.  A host is a process; it holds one or more
 * members (an MPI rank holds its task's endpoints); host(i) below is
 * member i's.
 *
 * A plan message a from member s to member d on different hosts becomes
 * three events: SEND at host(s) (its bytes leave s's buffer), RECV at
 * host(d) (they arrive in a staging buffer; posted when the run starts)
 * and APPLY at host(d) (the staged bytes copied or reduced into d's
 * buffer, after RECV).  A message within one host (a local step, or one
 * between two members of the host) is one LOCAL event.  start(a) is SEND
 * or LOCAL, done(a) is APPLY or LOCAL.  Each dependency "a waits for b"
 * of the plan becomes a wait that is local to one host:
 *
 *   host(b.dst) == host(a.src): start(a) waits for done(b) there.
 *   host(b.dst) == host(a.dst) != host(a.src): APPLY(a) waits for done(b)
 *     at host(a.dst), and the bytes of a may travel before b is done (a
 *     reduce into a parent's buffer moves while the parent still
 *     combines); when host(b.src) == host(a.src) as well, SEND(a) waits
 *     for SEND(b), so that a host's sends to one place keep their order.
 *   otherwise: host(b.dst) tells host(a.src) with an ACK (a message of no
 *     bytes, ACK_SEND after done(b), ACK_RECV posted when the run
 *     starts), and start(a) waits for ACK_RECV.  One ACK per (b,
 *     host(a.src)), however many messages there wait for b.
 *
 * So every dependency keeps "done(b) before done(a)", and a's reading of
 * its source bytes waits for the last message before it that wrote them
 * (tests/unit/test_sched.c checks both for every plan of the test shapes,
 * a host per member and several members per host).  An executor must add
 * one rule of MPI's: a host writes (APPLY, LOCAL) into bytes of its
 * members only after its sends reading them have completed locally.
 *
 * Wire messages between two hosts (data and ACKs) are numbered per
 * ordered pair: the data messages from s to d in plan order 0, 1, ...,
 * then the ACKs from s to d in the order of b: an event's seq, which an
 * MPI transport uses as the tag (both ends compute the same numbers from
 * the plan). */
enum topo__ev_kind {
	TOPO__EV_SEND = 0,
	TOPO__EV_RECV = 1,
	TOPO__EV_APPLY = 2,
	TOPO__EV_LOCAL = 3,
	TOPO__EV_ACK_SEND = 4,
	TOPO__EV_ACK_RECV = 5,
};

struct topo__ev {
	int64_t msg;  /* the plan message (ACKs: b, whose done they announce) */
	int64_t seq;  /* SEND, RECV, ACKs: the wire message's number; else -1 */
	int32_t peer; /* host; SEND, ACK_SEND: to; RECV, ACK_RECV: from;
			 else -1 */
	uint8_t kind; /* enum topo__ev_kind */
	int32_t nwait; /* events of this member it waits for */
};

struct topo__sched {
	int32_t host;
	int64_t nev;
	struct topo__ev *ev;
	/* successors in CSR form: event e is waited for by
	 * succ[succ_off[e] .. succ_off[e + 1] - 1] */
	int64_t *succ_off;
	int64_t *succ;
	int64_t nsend, nrecv; /* wire messages out and in (ACKs included) */
	int64_t max_seq;      /* largest seq, -1 when none */
};

/* Host h's schedule of plan p (p not predict-only, or a member's part of
 * one: plan/local.c); host[i] (0 <= host[i] < nhosts) is member i's host,
 * or host is NULL: each member its own host (nhosts is then p->n).  Reads
 * the whole plan: O(messages + dependencies) time, memory O(the host's
 * events and peers).  Returns 0, TOPO_EARG, TOPO_ENOMEM or TOPO_ELIMIT
 * (more events than fit). */
int topo__sched_new(struct topo__sched **out, const struct topo_plan *p,
		    const int32_t *host, int32_t nhosts, int32_t h,
		    topo_error *err);
void topo__sched_free(struct topo__sched *s);

#endif /* TOPO_RUN_SCHED_H */
