/*
 * emit.c - a plan as the input of independent simulators, so that what
 * topo_plan_predict says can be checked by tools that share none of its
 * code (collrun(1) PREDICTION, libtopo(3) "Prediction"):
 *
 *  - topo_plan_write_goal: a GOAL schedule, the text input of LogGOPSim
 *    (Hoefler, Schneider and Lumsdaine, HPDC 2010; spcl/LogGOPSim, whose
 *    txt2bin turns it into the simulator's binary input).  Its operations
 *    and dependencies are exactly those predict.c simulates
 *    (predict_internal.h), so with one edge class and the same L, o, g, G
 *    LogGOPSim and the prediction agree.
 *  - topo_plan_write_smpi: SimGrid SMPI time-independent traces, one per
 *    member, with a platform generated from the machine, for
 *    smpirun -replay.  SMPI's model is not LogGP (a flow model of the
 *    network, sequential ranks), so this is a second opinion, not a copy.
 *    A trace is a sequence, so each member's operations come in the order
 *    the prediction runs them (smpi_order runs it to know).
 */
#define TOPO_INTERNAL
#include "predict_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/types.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* What both writers need */

struct emit {
	const struct topo_plan *p;
	const topo_machine *m;
	const int32_t *members;
	struct topo_costs c;
	int32_t n;
	int64_t M;
	int32_t **up; /* topo__hops's ancestors (predict_internal.h) */
	int uplevels;
	/* Each member's operations in the plan's order: ops[off[r] ..
	 * off[r + 1] - 1], each (message << 1) | 1 for the receive of a
	 * message from another member, (message << 1) for its send or a
	 * member's own step. */
	int64_t *off, *ops;
	/* Who each message waits for: pred[pred_off[m] .. pred_off[m + 1] -
	 * 1], ascending (the plan keeps only the successors). */
	int64_t *pred_off;
	int32_t *pred;
	topo_error *err;
	/* The deadline (topo__now() seconds; 0: none), the timeout it came
	 * from, and the progress callback (emit_tick). */
	double deadline, timeout, next_progress;
	topo_progress_fn progress;
	void *progress_ctx;
};

static int32_t node_of(const struct emit *e, int32_t rank)
{
	return e->m->task_node[e->members[rank] / e->m->eps_per_task];
}

/* The costs and latency of transport message i. */
static const struct topo_loggp *edge(const struct emit *e, int64_t i,
				     double *latency)
{
	int32_t a = node_of(e, topo__msg_src(e->p, i));
	int32_t b = node_of(e, topo__msg_dst(e->p, i));

	return topo__edge_costs(
	    &e->c, a, b,
	    a == b ? 0 : topo__hops(e->m, e->up, e->uplevels, a, b), latency);
}

static bool is_step(const struct emit *e, int64_t i)
{
	return topo__msg_src(e->p, i) == topo__msg_dst(e->p, i);
}

static void emit_free(struct emit *e)
{
	topo__hops_up_free(e->up, e->uplevels);
	topo__free(e->off);
	topo__free(e->ops);
	topo__free(e->pred_off);
	topo__free(e->pred);
}

static int emit_nomem(struct emit *e)
{
	return topo__err(e->err, TOPO_ENOMEM, NULL, NULL,
			 "out of memory writing a schedule of %lld messages "
			 "over %d members",
			 (long long)e->M, (int)e->n);
}

/*
 * Checks the deadline and reports progress, every member or few thousand
 * operations: "the run did not finish within T s (PHASE: member DONE of
 * TOTAL)", as planning and predicting say it.  Returns 0 or
 * TOPO_ETIMEDOUT (err set).
 */
static int emit_tick(struct emit *e, const char *phase, const char *unit,
		     int64_t done, int64_t total)
{
	double t;

	if (e->deadline <= 0 && e->progress == NULL)
		return 0;
	t = topo__now();
	if (e->deadline > 0 && t >= e->deadline)
		return topo__err(e->err, TOPO_ETIMEDOUT, NULL, NULL,
				 "the run did not finish within %g s (%s: %s "
				 "%lld of %lld)",
				 e->timeout, phase, unit, (long long)done,
				 (long long)total);
	if (e->progress != NULL && t >= e->next_progress) {
		e->next_progress = t + TOPO__PROGRESS_EVERY;
		e->progress(e->progress_ctx, phase, done, total);
	}
	return 0;
}

/*
 * Sets e up for plan p: the costs (q->costs, NULL: the machine's), the
 * deadline, each member's operations and each message's predecessors.
 * Returns 0, TOPO_EARG or TOPO_ENOMEM (err set).
 */
static int emit_init(struct emit *e, const topo_plan *p,
		     const struct topo_emit_params *q, topo_error *err)
{
	int64_t ndep;
	int rc;

	memset(e, 0, sizeof(*e));
	e->err = err;
	e->p = p;
	e->m = p->t->g->m;
	e->members = p->t->g->members;
	e->n = p->n;
	e->M = p->nmsg;
	if (!(q->timeout >= 0) || !(q->elapsed >= 0))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "the timeout (%g) and the time elapsed (%g) "
				 "must not be negative",
				 q->timeout, q->elapsed);
	e->timeout = q->timeout;
	if (q->timeout > 0)
		e->deadline = topo__now() +
			      (q->timeout < 1e9 ? q->timeout : 1e9) -
			      q->elapsed;
	e->progress = q->progress;
	e->progress_ctx = q->progress_ctx;
	if (q->costs != NULL) {
		rc = topo__costs_read(&e->c, q->costs, err);
		if (rc != 0)
			return rc;
	} else {
		e->c = e->m->costs;
	}
	if (topo__hops_up(e->m, &e->up, &e->uplevels) != 0)
		return emit_nomem(e);
	e->off = topo__calloc((size_t)e->n + 1, sizeof(*e->off));
	e->pred_off = topo__calloc((size_t)e->M + 1, sizeof(*e->pred_off));
	if (e->off == NULL || e->pred_off == NULL)
		return emit_nomem(e);
	/* Members' operations: counted, then placed in message order. */
	for (int64_t i = 0; i < e->M; i++) {
		e->off[topo__msg_src(p, i) + 1]++;
		if (!is_step(e, i))
			e->off[topo__msg_dst(p, i) + 1]++;
	}
	for (int32_t r = 0; r < e->n; r++)
		e->off[r + 1] += e->off[r];
	e->ops = topo__mallocarray((size_t)e->off[e->n] + 1, sizeof(*e->ops));
	if (e->ops == NULL)
		return emit_nomem(e);
	for (int64_t i = 0; i < e->M; i++) {
		e->ops[e->off[topo__msg_src(p, i)]++] = i << 1;
		if (!is_step(e, i))
			e->ops[e->off[topo__msg_dst(p, i)]++] = i << 1 | 1;
	}
	for (int32_t r = e->n; r > 0; r--)
		e->off[r] = e->off[r - 1];
	e->off[0] = 0;
	/* Predecessors, from the successors: ascending, as k runs so. */
	ndep = e->M > 0 ? p->succ_off[e->M] : 0;
	e->pred = topo__mallocarray((size_t)ndep + 1, sizeof(*e->pred));
	if (e->pred == NULL)
		return emit_nomem(e);
	for (int64_t j = 0; j < ndep; j++)
		e->pred_off[p->succ[j] + 1]++;
	for (int64_t i = 0; i < e->M; i++)
		e->pred_off[i + 1] += e->pred_off[i];
	for (int64_t k = 0; k < e->M; k++)
		for (int64_t j = p->succ_off[k]; j < p->succ_off[k + 1]; j++)
			e->pred[e->pred_off[p->succ[j]]++] = (int32_t)k;
	for (int64_t i = e->M; i > 0; i--)
		e->pred_off[i] = e->pred_off[i - 1];
	e->pred_off[0] = 0;
	return 0;
}

/*
 * The dependency "m waits for k" as two operations of one member:
 * predict_internal.h's mapping, and a check that k's operation is on that
 * member, which is all a schedule of per-member operations can express.
 * *op is k's operation (TOPO__OP_SEND, _RECV or _CALC).  Returns 0 or
 * TOPO_EARG (err set).
 */
static int check_dep_at(struct emit *e, int64_t k, int64_t m, int32_t *x,
			bool *recv_side, int *op)
{
	const struct topo_plan *p = e->p;
	int32_t ks = topo__msg_src(p, k), kd = topo__msg_dst(p, k);
	bool there;

	*op = topo__dep_at(p, k, m, x, recv_side);
	if (*op == TOPO__OP_SEND)
		there = ks == *x;
	else if (ks == kd)
		there = ks == *x;
	else
		there = kd == *x;
	if (there)
		return 0;
	return topo__err(e->err, TOPO_EARG, NULL, NULL,
			 "plan message %lld (%d to %d) waits for message "
			 "%lld (%d to %d), which has no part at rank %d: a "
			 "schedule of per-member operations cannot express "
			 "it",
			 (long long)m, (int)topo__msg_src(p, m),
			 (int)topo__msg_dst(p, m), (long long)k, (int)ks,
			 (int)kd, (int)*x);
}

/* Does every transport message of the plan cost the same (one edge class,
 * and one latency)?  *c and *lat are its costs (shm for a plan without
 * transport messages). */
static bool one_class(const struct emit *e, const struct topo_loggp **c,
		      double *lat)
{
	bool any = false;

	*c = &e->c.shm;
	*lat = e->c.shm.L;
	for (int64_t i = 0; i < e->M; i++) {
		const struct topo_loggp *ci;
		double li;

		if (is_step(e, i))
			continue;
		ci = edge(e, i, &li);
		if (any && (ci != *c || li != *lat))
			return false;
		*c = ci;
		*lat = li;
		any = true;
	}
	return true;
}

/* ---------------------------------------------------------------------- */
/* GOAL */

/*
 * A computation's time in GOAL, which takes whole nanoseconds: rounded to
 * the nearest, halves away from zero (round()), so a time the prediction
 * uses exactly stays exact whenever it is whole.
 */
static double goal_ns(double ns)
{
	return round(ns);
}

/* A message's size in GOAL: LogGOPSim charges (size - 1) G in unsigned
 * arithmetic, so an empty message is written as 1 byte, which costs what
 * the prediction charges an empty one (predict.c's per_byte). */
static long long goal_bytes(int64_t len)
{
	return len > 0 ? (long long)len : 1;
}

/* The label of operation op (TOPO__OP_*) of message i: s<i> its send, r<i>
 * its receive, c<i> its computation. */
static char label_char(int op)
{
	return op == TOPO__OP_SEND ? 's' : op == TOPO__OP_RECV ? 'r' : 'c';
}

static void goal_header(const struct emit *e, FILE *f)
{
	const struct topo_plan *p = e->p;
	const struct topo_loggp *c;
	double lat;

	/* Names may hold anything (a JSON "\n", a file name): cleaned, so
	 * that one cannot end the comment and become schedule lines. */
	fprintf(f, "// collc: %s %s over tree ", topo_op_name(p->params.op),
		p->algorithm);
	topo__put_clean(f, p->t->name);
	fputs(" of group ", f);
	topo__put_clean(f, p->t->g->name);
	fputs(" (machine ", f);
	topo__put_clean(f, e->m->name);
	fprintf(f, "): %d members, %zu bytes, %lld messages\n", (int)e->n,
		p->params.bytes, (long long)e->M);
	fprintf(f,
		"// costs (ns): shm L=%g o=%g g=%g G=%g; net L=%g o=%g g=%g "
		"G=%g hop=%g; reduce %s %g/byte\n",
		e->c.shm.L, e->c.shm.o, e->c.shm.g, e->c.shm.G, e->c.net.L,
		e->c.net.o, e->c.net.g, e->c.net.G, e->c.net.hop,
		topo_type_name(p->params.type), e->c.reduce[p->params.type]);
	fprintf(f, "// labels: s<i>, r<i>, c<i>: plan message i's send, "
		   "receive, computation; tag i\n");
	if (one_class(e, &c, &lat))
		fprintf(f,
			"// one edge class: LogGOPSim -f FILE.bin -L %g -o %g "
			"-g %g -G %g -S 2147483647%s\n",
			lat, c->o, c->g, c->G,
			lat != round(lat) || c->o != round(c->o) ||
				c->g != round(c->g) || c->G != round(c->G)
			    ? " (LogGOPSim takes whole ns)"
			    : "");
	else
		fprintf(f, "// several edge classes or latencies: LogGOPSim "
			   "applies one L, o, g, G to all\n");
}

/* The requires lines of rank r's operations, in the order they were
 * defined (so that LogGOPSim frees a completion's dependents in the order
 * the prediction does: by kind, then by message). */
static int goal_requires(struct emit *e, FILE *f, int32_t r)
{
	const struct topo_plan *p = e->p;

	for (int64_t j = e->off[r]; j < e->off[r + 1]; j++) {
		int64_t m = e->ops[j] >> 1;
		bool recv_entry = e->ops[j] & 1;
		char own = recv_entry ? 'r' : is_step(e, m) ? 'c' : 's';

		for (int64_t q = e->pred_off[m]; q < e->pred_off[m + 1]; q++) {
			int64_t k = e->pred[q];
			int32_t x;
			bool recv_side;
			int op, rc = check_dep_at(e, k, m, &x, &recv_side, &op);

			if (rc != 0)
				return rc;
			if (recv_side != recv_entry)
				continue;
			fprintf(f, "%c%lld requires %c%lld\n", own,
				(long long)m, label_char(op), (long long)k);
		}
		if (recv_entry && topo__msg_kind(p, m) == TOPO__REDUCE)
			fprintf(f, "c%lld requires r%lld\n", (long long)m,
				(long long)m);
	}
	return 0;
}

/* The GOAL schedule of e to f; phase names what it is for (measuring or
 * writing) in progress and timeout messages.  Returns 0, TOPO_EARG or
 * TOPO_ETIMEDOUT (err set); write errors are f's. */
static int goal_body(struct emit *e, FILE *f, const char *phase)
{
	const struct topo_plan *p = e->p;
	int rc = emit_tick(e, phase, "member", 0, e->n);

	if (rc != 0)
		return rc;
	goal_header(e, f);
	fprintf(f, "num_ranks %d\n", (int)e->n);
	for (int32_t r = 0; r < e->n && rc == 0; r++) {
		rc = r > 0 ? emit_tick(e, phase, "member", r, e->n) : 0;
		if (rc != 0)
			break;
		fprintf(f, "\nrank %d {\n", (int)r);
		for (int64_t j = e->off[r]; j < e->off[r + 1]; j++) {
			int64_t m = e->ops[j] >> 1;
			long long len = goal_bytes(topo__msg_len(p, m));

			/* A member may hold most of the operations (a
			 * flat tree's root). */
			if (((j - e->off[r]) & 4095) == 4095) {
				rc = emit_tick(e, phase, "member", r, e->n);
				if (rc != 0)
					return rc;
			}
			if (is_step(e, m))
				fprintf(f, "c%lld: calc %.0f\n", (long long)m,
					goal_ns(topo__calc_ns(p, &e->c, m)));
			else if (!(e->ops[j] & 1))
				fprintf(f, "s%lld: send %lldb to %d tag %lld\n",
					(long long)m, len,
					(int)topo__msg_dst(p, m), (long long)m);
			else {
				fprintf(f,
					"r%lld: recv %lldb from %d tag %lld\n",
					(long long)m, len,
					(int)topo__msg_src(p, m), (long long)m);
				if (topo__msg_kind(p, m) == TOPO__REDUCE)
					fprintf(f, "c%lld: calc %.0f\n",
						(long long)m,
						goal_ns(topo__calc_ns(p, &e->c,
								      m)));
			}
		}
		rc = goal_requires(e, f, r);
		fprintf(f, "}\n");
	}
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Measuring: an output written once into a stream that only counts */

static ssize_t count_write(void *cookie, const char *buf, size_t size)
{
	(void)buf;
	*(uint64_t *)cookie += size;
	return (ssize_t)size;
}

/* A stream that counts the bytes written to *count; NULL when out of
 * memory. */
static FILE *count_open(uint64_t *count)
{
	cookie_io_functions_t io = {NULL, count_write, NULL, NULL};

	return fopencookie(count, "w", io);
}

/* " (1.5 GiB)": n in the binary unit that shows it best, or nothing
 * below 1 KiB. */
static void human_bytes(char *buf, size_t size, uint64_t n)
{
	static const char *const unit[] = {"KiB", "MiB", "GiB", "TiB", "PiB"};
	double v = (double)n;
	int u = -1;

	while (v >= 1024 && u < 4) {
		v /= 1024;
		u++;
	}
	if (u < 0)
		snprintf(buf, size, "%s", "");
	else if (v == (double)(uint64_t)v)
		snprintf(buf, size, " (%.0f %s)", v, unit[u]);
	else
		snprintf(buf, size, " (%.1f %s)", v, unit[u]);
}

/* The refusal of an output of `bytes` over max. */
static int too_large(struct emit *e, uint64_t bytes, uint64_t max)
{
	char have[32], limit[32];

	human_bytes(have, sizeof(have), bytes);
	human_bytes(limit, sizeof(limit), max);
	return topo__err(e->err, TOPO_ELIMIT, NULL, NULL,
			 "the output would be %llu bytes%s, over the limit "
			 "of %llu bytes%s",
			 (unsigned long long)bytes, have,
			 (unsigned long long)max, limit);
}

int topo_plan_emit_goal(const topo_plan *p,
			const struct topo_emit_params *params, FILE *f,
			topo_error *err)
{
	struct topo_emit_params q;
	struct emit e;
	int rc;

	memset(&e, 0, sizeof(e));
	if (p == NULL || f == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_plan_write_goal: a plan and a file are "
				 "required");
	rc = topo__emit_params_read(&q, params, err);
	if (rc == 0)
		rc = emit_init(&e, p, &q, err);
	/* Measured by writing it where only its length is kept. */
	if (rc == 0 && q.max_bytes > 0) {
		uint64_t bytes = 0;
		FILE *c = count_open(&bytes);

		if (c == NULL)
			rc = emit_nomem(&e);
		if (rc == 0)
			rc = goal_body(&e, c, "measuring the GOAL schedule");
		if (c != NULL)
			fclose(c);
		if (rc == 0 && bytes > q.max_bytes)
			rc = too_large(&e, bytes, q.max_bytes);
	}
	if (rc == 0)
		rc = goal_body(&e, f, "writing the GOAL schedule");
	if (rc == 0) {
		errno = 0;
		if (fflush(f) != 0 || ferror(f))
			rc = topo__err(err, TOPO_EIO, NULL, NULL,
				       "writing the GOAL schedule: %s",
				       errno != 0 ? strerror(errno)
						  : "write error");
	}
	emit_free(&e);
	return rc;
}

int topo_plan_write_goal(const topo_plan *p, const struct topo_costs *costs,
			 FILE *f, topo_error *err)
{
	struct topo_emit_params q;

	topo_emit_params_init(&q, sizeof(q));
	q.costs = costs;
	return topo_plan_emit_goal(p, &q, f, err);
}

/* ---------------------------------------------------------------------- */
/* SimGrid SMPI */

/*
 * The operations of the SimGrid traces: op 3i is message i's send (or a
 * member's own step), 3i + 1 its receive, 3i + 2 the reduction after the
 * receive.
 */
#define OP_ORIGIN 0
#define OP_RECV 1
#define OP_REDUCE 2

static bool op_exists(const struct emit *e, int64_t op)
{
	int64_t i = op / 3;

	switch (op % 3) {
	case OP_ORIGIN:
		return true;
	case OP_RECV:
		return !is_step(e, i);
	default:
		return !is_step(e, i) &&
		       topo__msg_kind(e->p, i) == TOPO__REDUCE;
	}
}

/* The member whose trace holds op. */
static int32_t op_member(const struct emit *e, int64_t op)
{
	return op % 3 == OP_ORIGIN ? topo__msg_src(e->p, op / 3)
				   : topo__msg_dst(e->p, op / 3);
}

/* The kind an operation counts as when two may start at once: sends,
 * then receives, then computations, as LogGOPSim and the prediction order
 * the operations one event makes ready. */
static int op_class(const struct emit *e, int64_t op)
{
	if (op % 3 == OP_ORIGIN)
		return is_step(e, op / 3) ? 2 : 0;
	return op % 3 == OP_RECV ? 1 : 2;
}

struct smpi_order {
	int64_t *order; /* [3M] the operations in trace order */
	double *key;	/* [3M] when the prediction starts each */
	int64_t *indeg; /* [3M] predecessors not yet placed */
	int64_t *heap;	/* the operations ready to place */
	size_t nheap;
	const struct emit *e;
};

static void order_free(struct smpi_order *o)
{
	topo__free(o->order);
	topo__free(o->key);
	topo__free(o->indeg);
	topo__free(o->heap);
}

/* Which of two ready operations is placed first: by start time, then
 * kind, then message. */
static bool op_before(const struct smpi_order *o, int64_t x, int64_t y)
{
	int cx, cy;

	if (o->key[x] != o->key[y])
		return o->key[x] < o->key[y];
	cx = op_class(o->e, x);
	cy = op_class(o->e, y);
	if (cx != cy)
		return cx < cy;
	return x < y;
}

static void heap_push(struct smpi_order *o, int64_t u)
{
	size_t i = o->nheap++;

	while (i > 0 && op_before(o, u, o->heap[(i - 1) / 2])) {
		o->heap[i] = o->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	o->heap[i] = u;
}

static int64_t heap_pop(struct smpi_order *o)
{
	int64_t top = o->heap[0], last = o->heap[--o->nheap];
	size_t i = 0;

	for (;;) {
		size_t c = 2 * i + 1;

		if (c >= o->nheap)
			break;
		if (c + 1 < o->nheap &&
		    op_before(o, o->heap[c + 1], o->heap[c]))
			c++;
		if (!op_before(o, o->heap[c], last))
			break;
		o->heap[i] = o->heap[c];
		i = c;
	}
	if (o->nheap > 0)
		o->heap[i] = last;
	return top;
}

/* A predecessor of v is placed. */
static void release(struct smpi_order *o, int64_t v)
{
	if (--o->indeg[v] == 0)
		heap_push(o, v);
}

/*
 * Linearising the plan for sequential traces.  A time-independent trace
 * runs a member's actions one after another, so each member's operations
 * need one order, and the orders together must not deadlock.  The order
 * is the prediction's own: the operations sorted by the time the
 * prediction starts them (a receive: when it processes the message's
 * arrival), sends before receives before computations at one time, then
 * the plan's order, and placed only once their predecessors are (a
 * topological sort that takes the earliest of the operations free to go).
 * Each member's trace is its part of that one order, so SimGrid sees each
 * member do what LogGP had it do, in the same order, and only the network
 * and the timing are SimGrid's own; and a member blocked in a receive
 * waits for a send placed earlier, so the replay cannot deadlock.
 *
 * Fills o->order with the *n operations.  0, or what topo_plan_predict
 * returns, or TOPO_EARG (a dependency a per-member trace cannot express).
 */
static int smpi_order(struct emit *e, struct smpi_order *o, int64_t *n)
{
	const struct topo_plan *p = e->p;
	size_t nops = (size_t)e->M * 3;
	int64_t placed = 0, exist = 0;
	struct topo_predict_params q;
	topo_prediction *r = NULL;
	int rc;

	o->e = e;
	o->order = topo__mallocarray(nops + 1, sizeof(*o->order));
	o->key = topo__calloc(nops + 1, sizeof(*o->key));
	o->indeg = topo__calloc(nops + 1, sizeof(*o->indeg));
	o->heap = topo__mallocarray(nops + 1, sizeof(*o->heap));
	if (o->order == NULL || o->key == NULL || o->indeg == NULL ||
	    o->heap == NULL)
		return emit_nomem(e);
	topo_predict_params_init(&q, sizeof(q));
	q.costs = &e->c;
	/* The prediction stops at the writer's deadline. */
	if (e->deadline > 0) {
		q.timeout = e->timeout;
		q.elapsed = e->timeout - (e->deadline - topo__now());
		if (q.elapsed < 0)
			q.elapsed = 0;
	}
	q.progress = e->progress;
	q.progress_ctx = e->progress_ctx;
	rc = topo__predict_times(p, &q, o->key, &r, e->err);
	topo_prediction_free(r);
	if (rc != 0)
		return rc;
	/* In-degrees: a receive waits for its send, a reduction for its
	 * receive, and each plan dependency is one more. */
	for (int64_t i = 0; i < e->M; i++) {
		if (!is_step(e, i))
			o->indeg[3 * i + OP_RECV]++;
		if (op_exists(e, 3 * i + OP_REDUCE))
			o->indeg[3 * i + OP_REDUCE]++;
		for (int64_t j = e->pred_off[i]; j < e->pred_off[i + 1]; j++) {
			int32_t x;
			bool recv_side;
			int op;

			rc =
			    check_dep_at(e, e->pred[j], i, &x, &recv_side, &op);
			if (rc != 0)
				return rc;
			o->indeg[3 * i + (recv_side ? OP_RECV : OP_ORIGIN)]++;
		}
	}
	for (int64_t u = 0; u < (int64_t)nops; u++) {
		if (!op_exists(e, u))
			continue;
		exist++;
		if (o->indeg[u] == 0)
			heap_push(o, u);
	}
	while (o->nheap > 0) {
		int64_t u = heap_pop(o), i = u / 3;

		if ((placed & 65535) == 65535) {
			rc = emit_tick(e, "ordering the SimGrid traces",
				       "operation", placed, exist);
			if (rc != 0)
				return rc;
		}
		o->order[placed++] = u;
		if (u % 3 == OP_ORIGIN && !is_step(e, i))
			release(o, 3 * i + OP_RECV);
		if (u % 3 == OP_RECV && op_exists(e, 3 * i + OP_REDUCE)) {
			/* Its dependents wait for the reduction. */
			release(o, 3 * i + OP_REDUCE);
			continue;
		}
		/* The plan's dependents of this operation. */
		for (int64_t j = p->succ_off[i]; j < p->succ_off[i + 1]; j++) {
			int64_t m = p->succ[j], v;
			int32_t x;
			bool recv_side;
			int op = topo__dep_at(p, i, m, &x, &recv_side);

			v = op == TOPO__OP_SEND	  ? 3 * i + OP_ORIGIN
			    : op == TOPO__OP_RECV ? 3 * i + OP_RECV
			    : is_step(e, i)	  ? 3 * i + OP_ORIGIN
						  : 3 * i + OP_REDUCE;
			if (v == u)
				release(o, 3 * m + (recv_side ? OP_RECV
							      : OP_ORIGIN));
		}
	}
	/* Every operation placed, or the plan has a cycle (which
	 * topo_plan_new never makes). */
	if (placed != exist)
		return topo__err(e->err, TOPO_EARG, NULL, NULL,
				 "the plan's dependencies form a cycle");
	*n = placed;
	return 0;
}

/*
 * The directory of the SimGrid files.  It is filled under a temporary
 * name beside it (".NAME.PID.N", NAME cut to fit the file system's limit
 * on a name, created with mkdir so that the user's umask applies) and
 * renamed into place at the end, so that a failure leaves nothing behind
 * and a reader never sees half a set.  DIR must not exist, or be an empty
 * directory (which the rename replaces).  A symbolic link is followed, as
 * an output file's is (collc(1) -o): the directory it points to is the
 * one filled, and the link stays; a link to nothing is refused, since
 * what it should become is no clearer than a directory's missing parent.
 */
struct outdir {
	const char *dir; /* as given, for messages */
	char *dest;	 /* the directory replaced: links followed */
	char *tmp;
	int32_t nranks; /* rank files that may exist in tmp */
	topo_error *err;
	/* Measuring: every file goes to this stream, which counts into
	 * counted (no directory exists yet); NULL when writing.  Each file
	 * takes whole blocks of the file system: disk sums them. */
	FILE *count;
	uint64_t counted, opened_at, disk, block;
	int64_t files;
};

static const char *const fixed_files[] = {"platform.xml", "hostfile",
					  "traces.txt", "replay.sh"};

static int dir_error(struct outdir *d, const char *name, const char *what)
{
	int e = errno;

	return topo__err(d->err, TOPO_EIO, NULL, NULL, "%s%s%s: %s%s%s", d->dir,
			 name != NULL ? "/" : "", name != NULL ? name : "",
			 what, what[0] != '\0' && e != 0 ? ": " : "",
			 e != 0 ? strerror(e) : "");
}

static bool dir_is_empty(const char *dir)
{
	DIR *dp = opendir(dir);
	struct dirent *de;
	bool empty = true;

	if (dp == NULL)
		return false;
	while (empty && (de = readdir(dp)) != NULL)
		empty = strcmp(de->d_name, ".") == 0 ||
			strcmp(de->d_name, "..") == 0;
	closedir(dp);
	return empty;
}

/*
 * path (topo__malloc'ed, no trailing slash) with its symbolic links
 * followed to what the last one names (relative targets are relative to
 * the link's directory), which need not exist; *hops is the links
 * followed.  Returns the new path (path is freed), or NULL with errno set
 * (ELOOP past 40 links, ENOMEM).
 */
static char *follow_links(char *path, int *hops)
{
	for (*hops = 0;; (*hops)++) {
		struct stat st;
		char target[4096], *next;
		const char *slash;
		ssize_t n;
		size_t dirlen, len;

		if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode))
			return path;
		n = *hops < 40 ? readlink(path, target, sizeof(target) - 1)
			       : -1;
		if (n < 0) {
			if (*hops >= 40)
				errno = ELOOP;
			topo__free(path);
			return NULL;
		}
		target[n] = '\0';
		/* The target without trailing slashes, as rename wants. */
		for (len = (size_t)n; len > 1 && target[len - 1] == '/'; len--)
			;
		slash = strrchr(path, '/');
		dirlen = target[0] == '/' || slash == NULL
			     ? 0
			     : (size_t)(slash - path) + 1;
		next = topo__malloc(dirlen + len + 1);
		if (next != NULL) {
			memcpy(next, path, dirlen);
			memcpy(next + dirlen, target, len);
			next[dirlen + len] = '\0';
		} else {
			errno = ENOMEM;
		}
		topo__free(path);
		if (next == NULL)
			return NULL;
		path = next;
	}
}

/*
 * Checks dir before any work: a new name, or an empty directory, links
 * followed (d->dest).  Returns 0, or TOPO_EIO (a link to nothing, or
 * anything else that is not a new or empty directory) or TOPO_ENOMEM, err
 * set.
 */
static int dir_check(struct outdir *d, const char *dir)
{
	struct stat st;
	size_t len = strlen(dir), cut;
	int hops;

	d->dir = dir;
	while (len > 1 && dir[len - 1] == '/')
		len--;
	d->dest = topo__malloc(len + 1);
	if (d->dest == NULL)
		return topo__err(d->err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory");
	memcpy(d->dest, dir, len);
	d->dest[len] = '\0';
	errno = 0;
	d->dest = follow_links(d->dest, &hops);
	if (d->dest == NULL)
		return errno == ENOMEM ? topo__err(d->err, TOPO_ENOMEM, NULL,
						   NULL, "out of memory")
				       : dir_error(d, NULL, "");
	errno = 0;
	if (stat(d->dest, &st) == 0) {
		if (!S_ISDIR(st.st_mode)) {
			errno = 0;
			return dir_error(d, NULL,
					 "exists and is not a directory");
		}
		if (!dir_is_empty(d->dest)) {
			errno = 0;
			return dir_error(d, NULL,
					 "exists and is not empty (give a new "
					 "or an empty directory)");
		}
	} else if (errno != ENOENT) {
		return dir_error(d, NULL, "");
	} else if (hops > 0) {
		errno = 0;
		topo__err(d->err, TOPO_EIO, NULL, NULL,
			  "%s: is a symbolic link to \"%s\", which does not "
			  "exist (link it to an empty directory, or give a "
			  "new directory's name)",
			  d->dir, d->dest);
		return TOPO_EIO;
	}
	len = strlen(d->dest);
	for (cut = len; cut > 0 && d->dest[cut - 1] != '/'; cut--)
		;
	if (len - cut == 0 || strcmp(d->dest + cut, ".") == 0 ||
	    strcmp(d->dest + cut, "..") == 0) {
		errno = 0;
		return dir_error(d, NULL,
				 "cannot be replaced (name a new directory)");
	}
	return 0;
}

/* Creates the temporary directory beside d->dest: ".NAME.PID.N", with
 * NAME cut (at a character) so that the whole fits the longest name the
 * file system takes, so that every name the directory may have works. */
static int dir_begin(struct outdir *d)
{
	static unsigned counter;
	size_t len = strlen(d->dest), cut, size;
	const char *base;
	long name_max;
	char *parent;

	for (cut = len; cut > 0 && d->dest[cut - 1] != '/'; cut--)
		;
	base = d->dest + cut;
	parent = topo__malloc(cut + 2);
	if (parent == NULL)
		return topo__err(d->err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory");
	if (cut == 0)
		strcpy(parent, ".");
	else if (cut == 1)
		strcpy(parent, "/");
	else {
		memcpy(parent, d->dest, cut - 1);
		parent[cut - 1] = '\0';
	}
	errno = 0;
	name_max = pathconf(parent, _PC_NAME_MAX);
	if (name_max <= 0 || name_max > 255)
		name_max = 255;
	size = strlen(parent) + name_max + 2;
	d->tmp = topo__malloc(size);
	if (d->tmp == NULL) {
		topo__free(parent);
		return topo__err(d->err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory");
	}
	for (int tries = 0;; tries++) {
		unsigned n = __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
		char suffix[48];
		size_t keep = len - cut, room;

		snprintf(suffix, sizeof(suffix), ".%ld.%u", (long)getpid(), n);
		room = (size_t)name_max - 1 - strlen(suffix);
		if (keep > room) {
			keep = room;
			/* Not inside a UTF-8 sequence. */
			while (keep > 0 &&
			       ((unsigned char)base[keep] & 0xc0) == 0x80)
				keep--;
		}
		snprintf(d->tmp, size, "%s/.%.*s%s", parent, (int)keep, base,
			 suffix);
		if (mkdir(d->tmp, 0777) == 0) {
			topo__free(parent);
			return 0;
		}
		if (errno != EEXIST || tries == 100) {
			topo__free(parent);
			topo__free(d->tmp);
			d->tmp = NULL;
			return dir_error(d, NULL, "cannot create");
		}
	}
}

/* Removes what the writer made in the temporary directory, and it. */
static void dir_abort(struct outdir *d)
{
	char path[4096];

	if (d->tmp == NULL)
		return;
	for (size_t i = 0; i < sizeof(fixed_files) / sizeof(*fixed_files);
	     i++) {
		snprintf(path, sizeof(path), "%s/%s", d->tmp, fixed_files[i]);
		unlink(path);
	}
	for (int32_t r = 0; r < d->nranks; r++) {
		snprintf(path, sizeof(path), "%s/rank-%d.txt", d->tmp, (int)r);
		unlink(path);
	}
	rmdir(d->tmp);
	topo__free(d->tmp);
	d->tmp = NULL;
}

static int dir_commit(struct outdir *d)
{
	if (rename(d->tmp, d->dest) != 0) {
		int rc = dir_error(d, NULL, "cannot create");

		dir_abort(d);
		return rc;
	}
	topo__free(d->tmp);
	d->tmp = NULL;
	return 0;
}

static FILE *dir_open(struct outdir *d, const char *name)
{
	char path[4096];
	FILE *f;

	if (d->count != NULL) {
		fflush(d->count);
		d->opened_at = d->counted;
		return d->count;
	}

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", d->tmp, name) >=
	    sizeof(path)) {
		errno = ENAMETOOLONG;
		dir_error(d, name, "cannot create");
		return NULL;
	}
	f = fopen(path, "w");
	if (f == NULL)
		dir_error(d, name, "cannot create");
	return f;
}

static int dir_close(struct outdir *d, FILE *f, const char *name)
{
	bool bad;

	if (f == d->count) {
		uint64_t len;

		fflush(f);
		len = d->counted - d->opened_at;
		d->disk += (len + d->block - 1) / d->block * d->block;
		d->files++;
		return 0;
	}
	errno = 0;
	bad = fflush(f) != 0 || ferror(f);
	if (fclose(f) != 0)
		bad = true;
	if (bad)
		return dir_error(d, name, "write error");
	return 0;
}

/* A bandwidth in bytes per second for G ns per byte: a G of 0 (free
 * bytes) is 10^15 B/s, which no message of a plan notices. */
static double bandwidth(double G)
{
	return G > 1e-6 ? 1e9 / G : 1e15;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The platform: the machine as SimGrid sees a cluster.  One host per node
 * that holds members, of 1 Gflop/s per core and a core per member, so a
 * trace's compute of x flops is x ns of that member's CPU, as in LogGP,
 * whoever else computes on the node.  Shared-memory messages take the
 * node's loopback link (shm L, 1/shm.G), network messages leave through
 * the sender node's link and enter through the receiver's (full duplex:
 * net L/2 each way, so L in all, and 1/net.G), with (k - 1) x hop more on
 * a route of k hops (a latency-only link per hop count, which shares no
 * bandwidth).  Links share their bandwidth among the messages crossing
 * them at once (SimGrid's flow model): the members of a node share its
 * network link and its loopback, where LogGP gives each member a port of
 * its own; libtopo(3) says what follows.  Routes are written for the
 * pairs of nodes the plan uses, which is all SimGrid looks up.
 */
/* What platform.xml needs: the cores of each node, the node pairs that
 * exchange messages (sorted, repeated), and the hop counts their routes
 * take. */
struct platform {
	int32_t *cores;	 /* [nodes] */
	int64_t *pairs;	 /* [np]: a * nodes + b */
	int64_t np, maxhops;
	bool *hop_used; /* [maxhops + 1] */
};

static int count_platform(struct emit *e, struct platform *pf)
{
	const topo_machine *m = e->m;

	pf->maxhops = 1;
	pf->cores = topo__calloc((size_t)m->nodes, sizeof(*pf->cores));
	pf->pairs = topo__mallocarray((size_t)e->M + 1, sizeof(*pf->pairs));
	if (pf->cores == NULL || pf->pairs == NULL)
		return emit_nomem(e);
	for (int32_t r = 0; r < e->n; r++)
		pf->cores[node_of(e, r)]++;
	for (int64_t i = 0; i < e->M; i++)
		if (!is_step(e, i))
			pf->pairs[pf->np++] =
			    (int64_t)node_of(e, topo__msg_src(e->p, i)) *
				m->nodes +
			    node_of(e, topo__msg_dst(e->p, i));
	qsort(pf->pairs, (size_t)pf->np, sizeof(*pf->pairs), cmp_i64);
	/* The hop counts the routes need. */
	for (int64_t i = 0; i < pf->np; i++) {
		int32_t a = (int32_t)(pf->pairs[i] / m->nodes);
		int32_t b = (int32_t)(pf->pairs[i] % m->nodes);
		int64_t k =
		    a == b ? 0 : topo__hops(m, e->up, e->uplevels, a, b);

		if (k > pf->maxhops)
			pf->maxhops = k;
	}
	pf->hop_used =
	    topo__calloc((size_t)pf->maxhops + 1, sizeof(*pf->hop_used));
	if (pf->hop_used == NULL)
		return emit_nomem(e);
	for (int64_t i = 0; i < pf->np; i++) {
		int32_t a = (int32_t)(pf->pairs[i] / m->nodes);
		int32_t b = (int32_t)(pf->pairs[i] % m->nodes);

		if (a != b)
			pf->hop_used[topo__hops(m, e->up, e->uplevels, a, b)] =
			    true;
	}
	return 0;
}

/* The SMPI host of node v: its name on a named machine (collc(5): names
 * are safe in XML attributes and in the hostfile as they are), else
 * "nodeV".  Link ids are the host's with "-shm" or "-net" appended, which
 * cannot meet the "hops-K" links (those end in a digit). */
static const char *host_id(const topo_machine *m, int32_t v, char buf[16])
{
	if (m->hosts != NULL)
		return m->hosts[v];
	snprintf(buf, 16, "node%d", (int)v);
	return buf;
}

/* The hosts and the links of platform.xml. */
static void put_platform_links(FILE *f, const struct emit *e,
			       const struct platform *pf)
{
	const topo_machine *m = e->m;
	double net_bw = bandwidth(e->c.net.G);
	char id[16];

	for (int32_t v = 0; v < m->nodes; v++)
		if (pf->cores[v] > 0)
			fprintf(f,
				"  <host id=\"%s\" speed=\"1Gf\" "
				"core=\"%d\"/>\n",
				host_id(m, v, id), (int)pf->cores[v]);
	for (int32_t v = 0; v < m->nodes; v++) {
		if (pf->cores[v] == 0)
			continue;
		fprintf(f,
			"  <link id=\"%s-shm\" bandwidth=\"%.9gBps\" "
			"latency=\"%.9gns\"/>\n",
			host_id(m, v, id), bandwidth(e->c.shm.G), e->c.shm.L);
		fprintf(f,
			"  <link id=\"%s-net\" bandwidth=\"%.9gBps\" "
			"latency=\"%.9gns\" sharing_policy=\"SPLITDUPLEX\"/>\n",
			host_id(m, v, id), net_bw, e->c.net.L / 2);
	}
	for (int64_t k = 2; e->c.net.hop > 0 && k <= pf->maxhops; k++)
		if (pf->hop_used[k])
			fprintf(
			    f,
			    "  <link id=\"hops-%lld\" bandwidth=\"%.9gBps\" "
			    "latency=\"%.9gns\" sharing_policy=\"FATPIPE\"/>\n",
			    (long long)k, net_bw,
			    (double)(k - 1) * e->c.net.hop);
}

/* A route per pair of nodes that exchange messages. */
static void put_platform_routes(FILE *f, const struct emit *e,
				const struct platform *pf)
{
	const topo_machine *m = e->m;
	char ia[16], ib[16];

	for (int64_t i = 0; i < pf->np; i++) {
		int32_t a = (int32_t)(pf->pairs[i] / m->nodes);
		int32_t b = (int32_t)(pf->pairs[i] % m->nodes);
		const char *ha = host_id(m, a, ia), *hb = host_id(m, b, ib);
		int64_t k;

		if (i > 0 && pf->pairs[i] == pf->pairs[i - 1])
			continue;
		if (a == b) {
			fprintf(f,
				"  <route src=\"%s\" dst=\"%s\">"
				"<link_ctn id=\"%s-shm\"/></route>\n",
				ha, ha, ha);
			continue;
		}
		k = topo__hops(m, e->up, e->uplevels, a, b);
		fprintf(f,
			"  <route src=\"%s\" dst=\"%s\" "
			"symmetrical=\"NO\"><link_ctn id=\"%s-net\" "
			"direction=\"UP\"/>",
			ha, hb, ha);
		if (k > 1 && e->c.net.hop > 0)
			fprintf(f, "<link_ctn id=\"hops-%lld\"/>",
				(long long)k);
		fprintf(f,
			"<link_ctn id=\"%s-net\" direction=\"DOWN\"/>"
			"</route>\n",
			hb);
	}
}

static int write_platform(struct emit *e, struct outdir *d)
{
	struct platform pf = {0};
	FILE *f = NULL;
	int rc;

	rc = count_platform(e, &pf);
	if (rc != 0)
		goto out;
	f = dir_open(d, "platform.xml");
	if (f == NULL) {
		rc = TOPO_EIO;
		goto out;
	}
	fprintf(f,
		"<?xml version='1.0'?>\n"
		"<!DOCTYPE platform SYSTEM "
		"\"https://simgrid.org/simgrid.dtd\">\n"
		"<!-- collc (topo_plan_write_smpi, libtopo(3)): a host per "
		"node, 1 Gflop/s per core\n"
		"     and a core per member (a flop is a ns of CPU); "
		"shared memory on each host's\n"
		"     loopback; the network through a full-duplex link per "
		"node, and the hop\n"
		"     latency on a latency-only link per hop count.  Replay: "
		"replay.sh. -->\n"
		"<platform version=\"4.1\">\n"
		"<zone id=\"collc\" routing=\"Full\">\n");
	put_platform_links(f, e, &pf);
	put_platform_routes(f, e, &pf);
	fprintf(f, "</zone>\n</platform>\n");
	rc = dir_close(d, f, "platform.xml");
out:
	topo__free(pf.cores);
	topo__free(pf.pairs);
	topo__free(pf.hop_used);
	return rc;
}

/* The hostfile (rank r's host on line r), the list of traces (rank r's
 * on line r, named relative to the directory, which is why replay.sh
 * runs there), and replay.sh, which replays them as the model intends:
 * SimGrid's plain flow model (CM02: no latency or bandwidth correction
 * factors, no cross traffic, no TCP window bound), SMPI's own overheads
 * and correction factors off (the traces charge o themselves), and every
 * message eager, sent at once whether the receive is posted or not, as
 * LogGP's are. */
static int write_lists(struct emit *e, struct outdir *d)
{
	FILE *f = dir_open(d, "hostfile");
	char id[16];
	int rc;
	struct stat st;
	char path[4096];

	if (f == NULL)
		return TOPO_EIO;
	for (int32_t r = 0; r < e->n; r++)
		fprintf(f, "%s\n", host_id(e->m, node_of(e, r), id));
	rc = dir_close(d, f, "hostfile");
	if (rc != 0)
		return rc;
	f = dir_open(d, "traces.txt");
	if (f == NULL)
		return TOPO_EIO;
	for (int32_t r = 0; r < e->n; r++)
		fprintf(f, "rank-%d.txt\n", (int)r);
	rc = dir_close(d, f, "traces.txt");
	if (rc != 0)
		return rc;
	f = dir_open(d, "replay.sh");
	if (f == NULL)
		return TOPO_EIO;
	fprintf(f,
		"#!/bin/sh\n"
		"# Replays the traces beside this script with SimGrid's SMPI "
		"(collc:\n"
		"# topo_plan_write_smpi, libtopo(3)).  Arguments go to "
		"smpirun; the last\n"
		"# line SMPI prints is \"Simulation time S T\": T is the "
		"clock, in seconds.\n"
		"cd \"$(dirname \"$0\")\" || exit 1\n"
		"exec smpirun -np %d -platform platform.xml -hostfile "
		"hostfile \\\n"
		"    -replay traces.txt -no-privatize \\\n"
		"    --cfg=network/model:CM02 --cfg=network/crosstraffic:0 \\\n"
		"    --cfg=network/TCP-gamma:1e20 \\\n"
		"    --cfg=smpi/lat-factor:0:1 --cfg=smpi/bw-factor:0:1 \\\n"
		"    --cfg=smpi/os:0:0:0 --cfg=smpi/or:0:0:0 "
		"--cfg=smpi/ois:0:0:0 \\\n"
		"    --cfg=smpi/async-small-thresh:2147483647 \\\n"
		"    --cfg=smpi/send-is-detached-thresh:2147483647 \\\n"
		"    --cfg=smpi/simulate-computation:yes \\\n"
		"    '--log=smpi_replay.fmt:%%m%%e%%.9r%%n' \"$@\"\n",
		(int)e->n);
	rc = dir_close(d, f, "replay.sh");
	if (rc != 0)
		return rc;
	/* Executable where readable, as the umask left it. */
	if (d->count != NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/replay.sh", d->tmp);
	if (stat(path, &st) == 0)
		chmod(path, st.st_mode | ((st.st_mode & 0444) >> 2));
	return 0;
}

/*
 * Member r's trace: its operations in order, each send's wait at the end
 * (so that no send holds the member up, as none does in LogGP).  SMPI has
 * no gap: a host's messages share its links' bandwidth at once, where a
 * LogGP member's port sends them one after another, each g + (s - 1)G
 * after the one before.  So a send that the prediction held up for the
 * port (it started after the member's previous operation ended, and no
 * later than the port was free) sleeps that long first.  times[] are the
 * prediction's start times (smpi_order).
 */
static int write_rank(struct emit *e, struct outdir *d, int32_t r,
		      const int64_t *seq, int64_t len, const double *times)
{
	const struct topo_plan *p = e->p;
	double cpu = 0, port = 0; /* when the prediction frees them */
	char name[32];
	FILE *f;

	snprintf(name, sizeof(name), "rank-%d.txt", (int)r);
	f = dir_open(d, name);
	if (f == NULL)
		return TOPO_EIO;
	if (d->count == NULL)
		d->nranks = r + 1;
	fprintf(f,
		"# collc: rank %d, endpoint %d on node %d%s%s; compute in "
		"flops = ns\n%d init\n",
		(int)r, (int)e->members[r], (int)node_of(e, r),
		e->m->hosts != NULL ? " " : "",
		e->m->hosts != NULL ? e->m->hosts[node_of(e, r)] : "", (int)r);
	for (int64_t j = 0; j < len; j++) {
		int64_t u = seq[j], i = u / 3;
		int64_t bytes = topo__msg_len(p, i);
		double lat, ns;
		const struct topo_loggp *c =
		    is_step(e, i) ? NULL : edge(e, i, &lat);

		double t = times[u], per_byte = bytes > 1 && c != NULL
						    ? (double)(bytes - 1) * c->G
						    : 0;

		if (u % 3 == OP_ORIGIN && c != NULL) {
			double held = (t < port ? t : port) - cpu;

			if (held > 0)
				fprintf(f, "%d sleep %.9g\n", (int)r,
					held * 1e-9);
			if (c->o > 0)
				fprintf(f, "%d compute %.9g\n", (int)r, c->o);
			fprintf(f, "%d isend %d %lld %lld\n", (int)r,
				(int)topo__msg_dst(p, i), (long long)i,
				(long long)bytes);
			cpu = t + c->o > cpu ? t + c->o : cpu;
			port = t + c->g + per_byte;
			continue;
		}
		if (u % 3 == OP_RECV) {
			fprintf(f, "%d recv %d %lld %lld\n", (int)r,
				(int)topo__msg_src(p, i), (long long)i,
				(long long)bytes);
			ns = c->o;
			t += c->o + per_byte;
		} else {
			ns = topo__calc_ns(p, &e->c, i);
			t += ns;
		}
		/* (A receive whose arrival the prediction processed before the
		 * member posted it comes after what it waited for here, so the
		 * member's time never goes back.) */
		if (t > cpu)
			cpu = t;
		if (ns > 0)
			fprintf(f, "%d compute %.9g\n", (int)r, ns);
	}
	for (int64_t j = 0; j < len; j++) {
		int64_t i = seq[j] / 3;

		if (seq[j] % 3 == OP_ORIGIN && !is_step(e, i))
			fprintf(f, "%d wait %d %d %lld\n", (int)r, (int)r,
				(int)topo__msg_dst(p, i), (long long)i);
	}
	fprintf(f, "%d finalize\n", (int)r);
	return dir_close(d, f, name);
}

/* The block size of the file system dir is to be made on (its parent's),
 * the unit a file's space is counted in; 4096 when it cannot be told. */
static uint64_t dir_block(const struct outdir *d)
{
	char parent[4096];
	const char *slash = strrchr(d->dest, '/');
	struct statvfs sv;

	if (slash == NULL)
		snprintf(parent, sizeof(parent), ".");
	else if (slash == d->dest)
		snprintf(parent, sizeof(parent), "/");
	else
		snprintf(parent, sizeof(parent), "%.*s", (int)(slash - d->dest),
			 d->dest);
	if (statvfs(parent, &sv) == 0 && sv.f_frsize >= 512 &&
	    sv.f_frsize <= (1 << 20))
		return sv.f_frsize;
	return 4096;
}

/* The refusal of a directory that would take d->disk bytes over max. */
static int dir_too_large(struct emit *e, const struct outdir *d, uint64_t max)
{
	char bytes[32], disk[32], limit[32];

	human_bytes(bytes, sizeof(bytes), d->counted);
	human_bytes(disk, sizeof(disk), d->disk);
	human_bytes(limit, sizeof(limit), max);
	return topo__err(e->err, TOPO_ELIMIT, NULL, NULL,
			 "the output would be %lld files of %llu bytes%s, "
			 "%llu bytes%s on disk in blocks of %llu, over the "
			 "limit of %llu bytes%s",
			 (long long)d->files, (unsigned long long)d->counted,
			 bytes, (unsigned long long)d->disk, disk,
			 (unsigned long long)d->block, (unsigned long long)max,
			 limit);
}

/* Every file of the set into d (measuring when d->count is set);
 * phase names what it is for.  seq/off: each member's operations. */
static int smpi_files(struct emit *e, struct outdir *d, const int64_t *seq,
		      const int64_t *off, const double *times,
		      const char *phase)
{
	int rc = write_platform(e, d);

	if (rc == 0)
		rc = write_lists(e, d);
	for (int32_t r = 0; rc == 0 && r < e->n; r++) {
		rc = emit_tick(e, phase, "member", r, e->n);
		if (rc == 0)
			rc = write_rank(e, d, r, seq + off[r],
					off[r + 1] - off[r], times);
	}
	return rc;
}

int topo_plan_emit_smpi(const topo_plan *p,
			const struct topo_emit_params *params, const char *dir,
			topo_error *err)
{
	struct topo_emit_params q;
	struct emit e;
	struct smpi_order o;
	struct outdir d;
	int64_t nops = 0, *off = NULL, *seq = NULL;
	int rc;

	memset(&e, 0, sizeof(e));
	memset(&o, 0, sizeof(o));
	memset(&d, 0, sizeof(d));
	d.err = err;
	if (p == NULL || dir == NULL || dir[0] == '\0')
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_plan_write_smpi: a plan and a directory "
				 "are required");
	rc = topo__emit_params_read(&q, params, err);
	/* The destination first: a name that cannot be used is refused
	 * before any work. */
	if (rc == 0)
		rc = dir_check(&d, dir);
	if (rc == 0)
		rc = emit_init(&e, p, &q, err);
	if (rc == 0)
		rc = smpi_order(&e, &o, &nops);
	/* Each member's part of the order, in order (a counting sort). */
	if (rc == 0) {
		off = topo__calloc((size_t)e.n + 2, sizeof(*off));
		seq = topo__mallocarray((size_t)nops + 1, sizeof(*seq));
		if (off == NULL || seq == NULL)
			rc = emit_nomem(&e);
	}
	if (rc == 0) {
		for (int64_t j = 0; j < nops; j++)
			off[op_member(&e, o.order[j]) + 2]++;
		for (int32_t r = 0; r < e.n; r++)
			off[r + 2] += off[r + 1];
		for (int64_t j = 0; j < nops; j++)
			seq[off[op_member(&e, o.order[j]) + 1]++] = o.order[j];
	}
	/* Measured by writing every file where only the length is kept,
	 * before the directory exists: what the files take on disk, each a
	 * whole number of the file system's blocks (262144 members' small
	 * traces hold 74 MiB, and take 1 GiB in blocks of 4 KiB). */
	if (rc == 0 && q.max_bytes > 0) {
		d.count = count_open(&d.counted);
		d.block = dir_block(&d);
		d.disk = d.block; /* the directory's own */
		if (d.count == NULL)
			rc = emit_nomem(&e);
		if (rc == 0)
			rc = smpi_files(&e, &d, seq, off, o.key,
					"measuring the SimGrid traces");
		if (d.count != NULL)
			fclose(d.count);
		d.count = NULL;
		if (rc == 0 && d.disk > q.max_bytes)
			rc = dir_too_large(&e, &d, q.max_bytes);
	}
	if (rc == 0)
		rc = dir_begin(&d);
	if (rc == 0)
		rc = smpi_files(&e, &d, seq, off, o.key,
				"writing the SimGrid traces");
	if (rc == 0)
		rc = dir_commit(&d);
	else
		dir_abort(&d);
	topo__free(d.dest);
	order_free(&o);
	topo__free(off);
	topo__free(seq);
	emit_free(&e);
	return rc;
}

int topo_plan_write_smpi(const topo_plan *p, const struct topo_costs *costs,
			 const char *dir, topo_error *err)
{
	struct topo_emit_params q;

	topo_emit_params_init(&q, sizeof(q));
	q.costs = costs;
	return topo_plan_emit_smpi(p, &q, dir, err);
}
