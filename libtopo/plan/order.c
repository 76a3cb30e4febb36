/*
 * order.c - the order in which a floating-point reduction combines into
 * each of its accumulators (exec_internal.h, struct topo_plan's cnext),
 * fixed once when the plan is finished and kept by every run of it.
 *
 * Floating-point addition and multiplication are not associative: a sum
 * of the same contributions taken in another order may round to other
 * bits.  A plan leaves free the order of REDUCEs into the same bytes that
 * do not wait for one another (the children's contributions into a
 * parent's accumulator), and a run that combines them in the order they
 * arrive gives other bits from call to call.  MPI advises that a
 * reduction of the same inputs on the same communicator give the same
 * result, and a user chasing a difference in a simulation relies on it.
 * So the REDUCEs into overlapping bytes of one member's buffer are put in
 * one order per plan, a chain: cnext[m] is the REDUCE that combines after
 * m into those bytes, or -1 (also where that one waits for m already, as
 * the links of a chain an algorithm built itself do).  Every executor runs a chain in its order
 * (run/exec.c as a wait of each REDUCE on the one before it; the
 * two-sided schedules, run/sched.c, as a wait of each APPLY on the one
 * before it at the destination, while the bytes travel as early as
 * ever), so the same plan gives the same bits from any arrival order.
 *
 * The order: by level, the length of the longest chain of dependencies
 * before the message (a leaf's contribution before that of a child with
 * children of its own: the order in which they are expected to come),
 * then by message number.  A message that waits, through any path, for
 * another has the greater level, so the chains never contradict the
 * dependencies, and the plan with its chains stays free of cycles.
 *
 * Only plans of float and double get chains: the integer types wrap and
 * their operators are exact, so every order gives the same bits there and
 * a chain would only take the executor's freedom away.  Predictions and
 * the schedules written for other simulators (predict.c, io/emit.c) model
 * the plan's dependencies alone: combines in the order of arrival.
 */
#define TOPO_INTERNAL
#include "plan/plan.h"

#include <stdlib.h>

/* A REDUCE, by the bytes it writes. */
struct wkey {
	int64_t doff, end;
	int32_t dst, msg;
	uint8_t dbuf;
};

static int wkey_cmp(const void *a, const void *b)
{
	const struct wkey *x = a, *y = b;

	if (x->dst != y->dst)
		return x->dst < y->dst ? -1 : 1;
	if (x->dbuf != y->dbuf)
		return x->dbuf < y->dbuf ? -1 : 1;
	if (x->doff != y->doff)
		return x->doff < y->doff ? -1 : 1;
	return (x->msg > y->msg) - (x->msg < y->msg);
}

/* The sort of a chain: level, then message. */
struct okey {
	int32_t level, msg;
};

static int okey_cmp(const void *a, const void *b)
{
	const struct okey *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return (x->msg > y->msg) - (x->msg < y->msg);
}

/* Whether message a waits for message b directly (then a link of a chain
 * from b to a would only repeat it). */
static bool waits_for(const struct topo_plan *p, int32_t a, int32_t b)
{
	for (int64_t k = p->succ_off[b]; k < p->succ_off[b + 1]; k++)
		if (p->succ[k] == a)
			return true;
	return false;
}

bool topo__plan_orders(const struct topo_plan *p)
{
	return topo_op_reduces(p->params.op) &&
	       (p->params.type == TOPO_FLOAT || p->params.type == TOPO_DOUBLE);
}

/* level[m]: the longest chain of dependencies before m (Kahn's order over
 * the finished successor lists).  Returns 0 or TOPO_ENOMEM. */
static int levels(const struct topo_plan *p, int32_t *level, topo_error *err)
{
	int32_t *left = topo__calloc((size_t)p->nmsg + 1, sizeof(int32_t));
	int32_t *ready = topo__mallocarray((size_t)p->nmsg + 1, sizeof(int32_t));
	int64_t nready = 0;

	if (left == NULL || ready == NULL) {
		topo__free(left);
		topo__free(ready);
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory: the combine order of %lld "
				 "messages",
				 (long long)p->nmsg);
	}
	for (int64_t k = 0; k < p->succ_off[p->nmsg]; k++)
		left[p->succ[k]]++;
	for (int64_t i = 0; i < p->nmsg; i++) {
		level[i] = 0;
		if (left[i] == 0)
			ready[nready++] = (int32_t)i;
	}
	/* the plan is acyclic (topo__plan_finish checked): every message
	 * comes out, after all it waits for */
	while (nready > 0) {
		int32_t m = ready[--nready];

		for (int64_t k = p->succ_off[m]; k < p->succ_off[m + 1]; k++) {
			int32_t s = p->succ[k];

			if (level[s] < level[m] + 1)
				level[s] = level[m] + 1;
			if (--left[s] == 0)
				ready[nready++] = s;
		}
	}
	topo__free(left);
	topo__free(ready);
	return 0;
}

/*
 * p->conly: the combines whose dependencies are all among those of the
 * combine before them in their chain (a star's combines, each waiting for
 * the accumulator's first copy alone): once that one is done, so is all
 * they wait for, and the threaded executor releases them from the chain
 * alone, without counting their dependencies.  For each message x, its
 * successors are stamped x; a chained successor a with b before it keeps
 * the mark when b is x or b is stamped x too.  O(messages + dependencies);
 * prev is scratch of nmsg entries.
 */
static int find_alone(struct topo_plan *p, int32_t *prev, topo_error *err);

int topo__plan_chain_alone(struct topo_plan *p, topo_error *err)
{
	int32_t *prev =
	    topo__mallocarray((size_t)p->nmsg + 1, sizeof(int32_t));
	int rc;

	if (prev == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory: the combine order of %lld "
				 "messages",
				 (long long)p->nmsg);
	rc = find_alone(p, prev, err);
	topo__free(prev);
	return rc;
}

static int find_alone(struct topo_plan *p, int32_t *prev, topo_error *err)
{
	int32_t *stamp;

	p->conly = topo__calloc((size_t)p->nmsg + 1, 1);
	stamp = topo__mallocarray((size_t)p->nmsg + 1, sizeof(int32_t));
	if (p->conly == NULL || stamp == NULL) {
		topo__free(stamp);
		topo__free(p->conly);
		p->conly = NULL;
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory: the combine order of %lld "
				 "messages",
				 (long long)p->nmsg);
	}
	for (int64_t i = 0; i < p->nmsg; i++) {
		prev[i] = -1;
		stamp[i] = -1;
	}
	for (int64_t i = 0; i < p->nmsg; i++)
		if (p->cnext[i] >= 0) {
			prev[p->cnext[i]] = (int32_t)i;
			p->conly[p->cnext[i]] = 1;
		}
	for (int64_t x = 0; x < p->nmsg; x++) {
		for (int64_t k = p->succ_off[x]; k < p->succ_off[x + 1]; k++)
			stamp[p->succ[k]] = (int32_t)x;
		for (int64_t k = p->succ_off[x]; k < p->succ_off[x + 1]; k++) {
			int32_t a = p->succ[k], b = prev[a];

			if (b >= 0 && b != x && stamp[b] != x)
				p->conly[a] = 0;
		}
	}
	topo__free(stamp);
	return 0;
}

int topo__plan_order(struct topo_plan *p, topo_error *err)
{
	struct wkey *w = NULL;
	struct okey *o = NULL;
	int32_t *level = NULL;
	int64_t nr = 0, k = 0, chained = 0, links = 0;
	int rc = 0;

	/* a member's part of a plan (plan/local.c) brings its own */
	if (p->cnext != NULL || p->msg == NULL || p->succ_off == NULL ||
	    p->local || !topo__plan_orders(p))
		return 0;
	for (int64_t i = 0; i < p->nmsg; i++)
		nr += p->msg[i].kind == TOPO__REDUCE;
	if (nr < 2)
		return 0;
	w = topo__mallocarray((size_t)nr, sizeof(*w));
	if (w == NULL)
		goto nomem;
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if (m->kind == TOPO__REDUCE && m->len > 0)
			w[k++] = (struct wkey){m->doff, m->doff + m->len,
					       m->dst, (int32_t)i, m->dbuf};
	}
	nr = k;
	qsort(w, (size_t)nr, sizeof(*w), wkey_cmp);
	/* Is any byte written by two?  Most plans of one reduction are. */
	for (int64_t i = 1; i < nr && chained == 0; i++)
		chained = w[i].dst == w[i - 1].dst &&
			  w[i].dbuf == w[i - 1].dbuf &&
			  w[i].doff < w[i - 1].end;
	if (chained == 0)
		goto done;
	level = topo__mallocarray((size_t)p->nmsg + 1, sizeof(int32_t));
	o = topo__mallocarray((size_t)nr, sizeof(*o));
	p->cnext = topo__mallocarray((size_t)p->nmsg + 1, TOPO__ORDER_BYTES);
	if (level == NULL || o == NULL || p->cnext == NULL)
		goto nomem;
	rc = levels(p, level, err);
	if (rc != 0)
		goto done;
	for (int64_t i = 0; i < p->nmsg; i++)
		p->cnext[i] = -1;
	/* Clusters of REDUCEs whose ranges overlap, one after the other in
	 * (dst, dbuf, doff) order; each cluster one chain. */
	for (int64_t i = 0; i < nr;) {
		int64_t j = i + 1, end = w[i].end;

		while (j < nr && w[j].dst == w[i].dst &&
		       w[j].dbuf == w[i].dbuf && w[j].doff < end) {
			if (w[j].end > end)
				end = w[j].end;
			j++;
		}
		if (j - i > 1) {
			for (int64_t c = i; c < j; c++)
				o[c - i] = (struct okey){level[w[c].msg],
							 w[c].msg};
			qsort(o, (size_t)(j - i), sizeof(*o), okey_cmp);
			for (int64_t c = 0; c + 1 < j - i; c++)
				if (!waits_for(p, o[c + 1].msg, o[c].msg)) {
					p->cnext[o[c].msg] = o[c + 1].msg;
					links++;
				}
		}
		i = j;
	}
	/* every link a dependency already (a chain the algorithm built, as
	 * reduce direct's): nothing to keep */
	if (links == 0) {
		topo__free(p->cnext);
		p->cnext = NULL;
		goto done;
	}
	rc = find_alone(p, level, err);
	goto done;
nomem:
	rc = topo__err(err, TOPO_ENOMEM, NULL, NULL,
		       "out of memory: the combine order of %lld messages",
		       (long long)p->nmsg);
done:
	if (rc != 0) {
		topo__free(p->cnext);
		topo__free(p->conly);
		p->cnext = NULL;
		p->conly = NULL;
	}
	topo__free(w);
	topo__free(o);
	topo__free(level);
	return rc;
}
