/*
 * predict_internal.h - how a plan maps onto LogGP operations, shared by
 * the prediction (predict.c) and the schedule writers (emit.c), so that a
 * GOAL schedule or a SimGrid trace is the very model the prediction
 * simulates: which operation of which message a dependency waits for,
 * the network hops between two nodes, an edge's latency, and the CPU
 * time of a computation.  Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_PREDICT_INTERNAL_H
#define TOPO_PREDICT_INTERNAL_H

#include "plan/plan.h"

#include <string.h>

/*
 * The operations of plan message m (predict.c's header comment): a send
 * on its source, the processing of its arrival and the completion of its
 * receive on its destination, and a computation (the reduction after the
 * receive, or a member's own step when source and destination are one).
 */
enum {
	TOPO__OP_SEND = 0,
	TOPO__OP_ARR = 1,
	TOPO__OP_CALC = 2,
	TOPO__OP_RECV = 3,
};

/*
 * Where the dependency "m waits for k" lives: the rank *x whose operation
 * of m waits (*recv_side: m's receive, else m's send or step) and the
 * operation of k on x it waits for (TOPO__OP_*).  A dependency lives at
 * m's sender unless only m's receiver has a part in k (as when a parent's
 * first copy must precede a child's reduction into it).  When neither end
 * of k is at x (no algorithm makes such a plan) the answer is k's
 * completion at its receiver, which only a simulation that sees every
 * member at once can honour: check_dep_at() in emit.c refuses it.
 */
static inline int topo__dep_at(const struct topo_plan *p, int64_t k, int64_t m,
			       int32_t *x, bool *recv_side)
{
	int32_t ks = topo__msg_src(p, k), kd = topo__msg_dst(p, k);
	int32_t ms = topo__msg_src(p, m), md = topo__msg_dst(p, m);

	*recv_side = false;
	*x = ms;
	if (ms != md && ks != ms && kd != ms && (ks == md || kd == md)) {
		*recv_side = true;
		*x = md;
	}
	if (ks == kd)
		return TOPO__OP_CALC;
	if (kd == *x)
		return topo__msg_kind(p, k) == TOPO__REDUCE ? TOPO__OP_CALC
							    : TOPO__OP_RECV;
	if (ks == *x)
		return TOPO__OP_SEND;
	return topo__msg_kind(p, k) == TOPO__REDUCE ? TOPO__OP_CALC
						    : TOPO__OP_RECV;
}

/*
 * Network hops between nodes a and b of m: the torus distance, or the
 * path in the tree network.  up[k][v] is v's 2^k-th ancestor (the root
 * its own), for trees deeper than 64, where walking parent by parent
 * would cost the depth per message (topo__hops_up builds it; NULL
 * otherwise).
 */
static inline int64_t topo__hops(const topo_machine *m, int32_t *const *up,
				 int uplevels, int32_t a, int32_t b)
{
	int64_t d = 0;

	if (a == b)
		return 0;
	if (strcmp(m->net_type, "torus") == 0 && m->ndims > 0) {
		for (int i = m->ndims - 1; i >= 0; i--) {
			int32_t ca = a % m->dims[i], cb = b % m->dims[i];
			int32_t x = ca > cb ? ca - cb : cb - ca;

			d += x < m->dims[i] - x ? x : m->dims[i] - x;
			a /= m->dims[i];
			b /= m->dims[i];
		}
		return d;
	}
	if (up != NULL) {
		int32_t da = m->net_depth[a], db = m->net_depth[b];

		if (da < db) {
			int32_t t = a;

			a = b;
			b = t;
			t = da;
			da = db;
			db = t;
		}
		for (int k = uplevels - 1; k >= 0; k--)
			if (da - (1 << k) >= db) {
				a = up[k][a];
				da -= 1 << k;
				d += 1 << k;
			}
		if (a == b)
			return d;
		for (int k = uplevels - 1; k >= 0; k--)
			if (up[k][a] != up[k][b]) {
				a = up[k][a];
				b = up[k][b];
				d += 2 << k;
			}
		return d + 2;
	}
	while (a != b) {
		if (m->net_depth[a] >= m->net_depth[b])
			a = m->net_parent[a];
		else
			b = m->net_parent[b];
		d++;
	}
	return d;
}

/* Builds topo__hops's ancestor table for m into *up and *uplevels (NULL
 * and 0 for a torus or a tree of depth 64 or less).  Returns 0 or
 * TOPO_ENOMEM (what was built is left in *up for topo__hops_up_free). */
int topo__hops_up(const topo_machine *m, int32_t ***up, int *uplevels);
void topo__hops_up_free(int32_t **up, int uplevels);

/* The costs of an edge between nodes na and nb, k network hops apart:
 * shm within a node, else net with latency L + (k - 1) hop. */
static inline const struct topo_loggp *
topo__edge_costs(const struct topo_costs *c, int32_t na, int32_t nb, int64_t k,
		 double *latency)
{
	if (na == nb) {
		*latency = c->shm.L;
		return &c->shm;
	}
	*latency = c->net.L + (double)(k - 1) * c->net.hop;
	return &c->net;
}

/* The CPU time (ns) of computation i: its reduction (bytes x the cost
 * per byte of the plan's type), or a member's own copy (bytes x shm.G). */
static inline double topo__calc_ns(const struct topo_plan *p,
				   const struct topo_costs *c, int64_t i)
{
	int64_t len = topo__msg_len(p, i);

	return topo__msg_kind(p, i) == TOPO__REDUCE
		   ? (double)len * c->reduce[p->params.type]
		   : (double)len * c->shm.G;
}

/*
 * topo_plan_predict, also noting when each operation starts in times[3M]
 * (NULL: not noted): [3m] message m's send or a member's own step, [3m +
 * 1] the processing of its arrival, [3m + 2] the reduction after its
 * receive (operations a message does not have are left as they were).
 * For the SimGrid writer, which orders each member's trace as the
 * prediction runs it.  Returns what topo_plan_predict returns.
 */
int topo__predict_times(const topo_plan *p,
			const struct topo_predict_params *params, double *times,
			topo_prediction **out, topo_error *err);

#endif /* TOPO_PREDICT_INTERNAL_H */
