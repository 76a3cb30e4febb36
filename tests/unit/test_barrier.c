/*
 * test_barrier.c - barrier "dissemination" and "tree"
 * (libtopo/coll/barrier/).
 *
 * Both algorithms over groups of 1 to 16 members (powers of two and not)
 * of uneven machines (nodes of different task counts, built with
 * topo__machine_build), strided groups and a whole machine of 26, "tree"
 * over every tree shape (physical, hierarchical, binomial, chain,
 * kary:3).  Each plan is checked for its exact structure (nK transport
 * messages for dissemination, 2(n - 1) for tree, all of 0 bytes; one
 * ENTER and one LEAVE per member, each with a slot of its own expecting
 * 1; every receipt slot expecting what its member receives) and for the
 * barrier's guarantee statically: every LEAVE is reachable in the DAG
 * from every ENTER (a search over the successor lists), every member's
 * sends from its ENTER, and its LEAVE from everything it receives.  Then
 * replayed by the tests' own executor (algocheck.h) in three orders, and
 * run by topo_plan_run (2 and 4 threads, 2 and 3 iterations), also over
 * a transport that holds one member's ENTER back for 20 ms: all verify.
 *
 * Then the failures that must be caught: a plan with a dependency
 * removed, run with one member's ENTER held back, reports "left early"
 * naming the member (a plan built by hand, and a built plan with one
 * dependency cut out of its successor lists); a 0-byte message not
 * counted shows as "undelivered" at its destination; a plan missing a
 * LEAVE (or with two ENTERs) is refused at planning; every allocation
 * failure is TOPO_ENOMEM; bytes and a root are refused.  Predict-only
 * plans hold the same messages and predict; a barrier of 65,536 members
 * plans with the closed form's counts.
 */
#define TOPO_INTERNAL
#include "exec_hook.h"

#include "algocheck.h"
#include "check.h"

#include <stdatomic.h>
#include <time.h>

static char label[300]; /* what is being checked, for messages */

static const char *const algos[] = {"dissemination", "tree"};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))

static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:3"};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* Groups of the uneven machines, with the size each spec must give. */
static const struct gspec gspecs[] = {
    {1, "ep 3", 1},
    {1, "ep 5,22", 2},
    {1, "row 1 cols 0:8:4", 3},
    {1, "ep 1:25:7", 4},
    {1, "row 0 cols 0:12:3", 5},
    {1, "ep 0:25:5", 6},
    {1, "ep 2:20:3", 7},
    {1, "row 1 cols 0:7", 8},
    {0, "all", 10},
    {1, "row 0", 13},
    {1, "all - node 1", 16},
    {1, "all", 26},
};
#define NGSPECS (sizeof(gspecs) / sizeof(gspecs[0]))

static topo_machine *ms[2];
static topo_group *gs[NGSPECS];

/* ---------------------------------------------------------------------- */
/* Helpers */

static topo_plan *plan(const topo_tree *t, const char *algo, size_t bytes,
		       int predict_only, int32_t root, int *rc, topo_error *err)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BARRIER);
	pp.algorithm = algo;
	pp.bytes = bytes;
	pp.root = root;
	pp.predict_only = predict_only;
	topo_error_clear(err);
	*rc = topo_plan_new(&p, t, &pp, err);
	return p;
}

static int has_error(const topo_report *r, int32_t ep, const char *kind)
{
	for (size_t i = 0; i < topo_report_error_count(r); i++) {
		const char *k;

		if (topo_report_error(r, i, &k, NULL) == ep &&
		    strcmp(k, kind) == 0)
			return 1;
	}
	return 0;
}

/* Whether every error is of that kind and names one of the first n of
 * eps. */
static int only(const topo_report *r, const char *kind, const int32_t *eps,
		int n)
{
	for (size_t i = 0; i < topo_report_error_count(r); i++) {
		const char *k;
		int32_t ep = topo_report_error(r, i, &k, NULL);
		int found = 0;

		for (int j = 0; j < n; j++)
			found |= eps[j] == ep;
		if (!found || strcmp(k, kind) != 0)
			return 0;
	}
	return 1;
}

/* The in-process transport, holding the ENTER of member `slow` back for
 * 20 ms; held counts the ENTERs held back. */
static int32_t slow = -1;
static atomic_int held;

static int slow_deliver(void *state, const struct topo_plan *p, int64_t m)
{
	const struct topo__msg *x = &p->msg[m];

	if (x->mark == TOPO__MARK_ENTER && x->src == slow) {
		struct timespec ts = {0, 20 * 1000 * 1000};

		atomic_fetch_add(&held, 1);
		nanosleep(&ts, NULL);
	}
	return topo__transport_inproc.deliver(state, p, m);
}

static topo_report *run_over(const topo_plan *p, int threads, int iterations,
			     int32_t slow_member)
{
	struct topo__transport_ops tr = topo__transport_inproc;
	struct topo_run_params rp;
	topo_report *rep = NULL;
	topo_error err;
	int rc;

	/* Every delivery through slow_deliver: neither the unchecked one
	 * nor the run's own small copies (the slices) may bypass it. */
	tr.deliver = slow_deliver;
	tr.deliver_trusted = NULL;
	tr.slices = NULL;
	slow = slow_member;
	atomic_store(&held, 0);
	topo_run_params_init(&rp, sizeof(rp));
	rp.threads = threads;
	rp.iterations = iterations;
	topo_error_clear(&err);
	rc = slow_member < 0
		 ? topo_plan_run(p, &rp, &rep, &err)
		 : topo__plan_run_transport(p, &rp, &tr, &rep, &err);
	CHECK(rc == 0 && rep != NULL, "%s: run: %d: %s", label, rc, err.text);
	/* once an iteration (a run stops at its first failed one) */
	CHECK(rep == NULL || slow_member < 0 ||
		  atomic_load(&held) == topo_report_iterations(rep),
	      "%s: member %d's ENTER held back %d times in %d iterations",
	      label, (int)slow_member, atomic_load(&held),
	      rep != NULL ? topo_report_iterations(rep) : -1);
	return rep;
}

static void check_run(const topo_plan *p, int threads, int iterations,
		      int32_t slow_member)
{
	topo_report *rep = run_over(p, threads, iterations, slow_member);

	if (rep == NULL)
		return;
	CHECK(topo_report_verified(rep) && topo_report_error_total(rep) == 0,
	      "%s: %d threads, member %d slow: not verified", label, threads,
	      (int)slow_member);
	if (!topo_report_verified(rep))
		dump(rep);
	topo_report_free(rep);
}

/* ---------------------------------------------------------------------- */
/* The guarantee, statically */

/* Messages reachable from `from` over the successor lists (from too). */
static void reach(const struct topo_plan *p, int64_t from, uint8_t *seen,
		  int64_t *queue)
{
	int64_t head = 0, tail = 0;

	memset(seen, 0, (size_t)p->nmsg);
	seen[from] = 1;
	queue[tail++] = from;
	while (head < tail) {
		int64_t m = queue[head++];

		for (int64_t k = p->succ_off[m]; k < p->succ_off[m + 1]; k++)
			if (!seen[p->succ[k]]) {
				seen[p->succ[k]] = 1;
				queue[tail++] = p->succ[k];
			}
	}
}

/* Each member's ENTER and LEAVE ids (-1: none or more than one).
 * Returns the first member without exactly one of each, or -1. */
static int32_t marks(const struct topo_plan *p, int64_t *enter, int64_t *leave)
{
	int32_t bad = -1;

	for (int32_t r = 0; r < p->n; r++)
		enter[r] = leave[r] = -1;
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];
		int64_t *at = m->mark == TOPO__MARK_ENTER   ? enter
			      : m->mark == TOPO__MARK_LEAVE ? leave
							    : NULL;

		if (at == NULL)
			continue;
		if (at[m->src] >= 0 && bad < 0)
			bad = m->src;
		at[m->src] = i;
	}
	for (int32_t r = 0; r < p->n && bad < 0; r++)
		if (enter[r] < 0 || leave[r] < 0)
			bad = r;
	return bad;
}

/*
 * Every LEAVE reachable from every ENTER.  Returns -1, or the member
 * whose LEAVE is not reachable from the ENTER of *from.  With check_msgs,
 * also every message reachable from its source's ENTER and reaching its
 * destination's LEAVE (CHECKed).
 */
static int32_t unreachable(const struct topo_plan *p, int32_t *from,
			   int check_msgs)
{
	int32_t n = p->n, bad = -1;
	int64_t *enter = malloc((size_t)n * sizeof(int64_t)),
		*leave = malloc((size_t)n * sizeof(int64_t)),
		*queue = malloc((size_t)p->nmsg * sizeof(int64_t));
	uint8_t *seen = malloc((size_t)p->nmsg);
	int64_t badmsg = -1;

	*from = -1;
	CHECK(marks(p, enter, leave) < 0, "%s: ENTER or LEAVE missing", label);
	for (int32_t s = 0; s < n && bad < 0; s++) {
		reach(p, enter[s], seen, queue);
		for (int32_t r = 0; r < n && bad < 0; r++)
			if (!seen[leave[r]]) {
				bad = r;
				*from = s;
			}
		for (int64_t i = 0; check_msgs && i < p->nmsg; i++)
			if (p->msg[i].src == s && !seen[i] && badmsg < 0)
				badmsg = i;
	}
	for (int64_t i = 0; check_msgs && i < p->nmsg; i++) {
		if (p->msg[i].mark != TOPO__MARK_NONE)
			continue;
		reach(p, i, seen, queue);
		if (!seen[leave[p->msg[i].dst]] && badmsg < 0)
			badmsg = i;
	}
	CHECK(badmsg < 0,
	      "%s: message %lld is not after its source's ENTER or not "
	      "before its destination's LEAVE",
	      label, (long long)badmsg);
	free(enter);
	free(leave);
	free(queue);
	free(seen);
	return bad;
}

/* ---------------------------------------------------------------------- */
/* Structure */

static void check_structure(const struct topo_plan *p, const char *algo)
{
	int32_t n = p->n, K = log2_ceil(n);
	int64_t *enter = malloc((size_t)n * sizeof(int64_t)),
		*leave = malloc((size_t)n * sizeof(int64_t)),
		*in = calloc((size_t)n, sizeof(int64_t)),
		*named = calloc((size_t)p->nslots + 1, sizeof(int64_t));
	int64_t bad = -1;
	int32_t br = -1;

	if (strcmp(algo, "dissemination") == 0) {
		CHECK_INT(p->ntransport, (int64_t)n * K);
		CHECK_INT(p->nmsg, (int64_t)n * K + 2 * n);
		CHECK_INT(ndeps(p), n == 1 ? 1 : (int64_t)n * (2 * K + 1));
	} else {
		CHECK_INT(p->ntransport, 2 * ((int64_t)n - 1));
		CHECK_INT(p->nmsg, 4 * (int64_t)n - 2);
		CHECK_INT(ndeps(p), 4 * ((int64_t)n - 1) + 1);
	}
	CHECK_INT(topo_plan_buffer_bytes(p), 0);
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if (m->len != 0 || m->kind != TOPO__COPY || m->slot < 0 ||
		    p->slot_member[m->slot] != m->dst ||
		    ((m->src == m->dst) != (m->mark != TOPO__MARK_NONE)))
			bad = bad < 0 ? i : bad;
		if (m->slot >= 0)
			named[m->slot]++;
		if (m->src != m->dst) {
			in[m->dst]++;
			/* dissemination: round k goes 2^k further */
			if (strcmp(algo, "dissemination") == 0) {
				int64_t k = (i - n) / n;

				if (m->dst != (m->src + (1 << k)) % n)
					bad = bad < 0 ? i : bad;
			} else if (p->t->parent[m->src] != m->dst &&
				   p->t->parent[m->dst] != m->src) {
				bad = bad < 0 ? i : bad;
			}
		}
	}
	CHECK(bad < 0, "%s: message %lld", label, (long long)bad);
	CHECK(marks(p, enter, leave) < 0, "%s: not one ENTER and LEAVE each",
	      label);
	for (int32_t r = 0; r < n && br < 0; r++) {
		int64_t s1 = enter[r] >= 0 ? p->msg[enter[r]].slot : -1,
			s2 = leave[r] >= 0 ? p->msg[leave[r]].slot : -1;

		if (s1 < 0 || s2 < 0 || s1 == s2 || p->slot_expect[s1] != 1 ||
		    p->slot_expect[s2] != 1 || named[s1] != 1 ||
		    named[s2] != 1 || expected_at(p, r) != in[r] + 2)
			br = r;
	}
	CHECK(br < 0, "%s: member %d's slots", label, (int)br);
	free(enter);
	free(leave);
	free(in);
	free(named);
}

/* Three replays: everything runs, slots exact, every LEAVE after every
 * ENTER. */
static void check_replay(const struct topo_plan *p)
{
	for (int mode = 0; mode < 3; mode++) {
		struct run x;
		int64_t slot_bad = -1, last_enter = -1, first_leave = -1;

		replay(p, mode, &x);
		CHECK(x.done == p->nmsg, "%s: order %d: %lld of %lld ran",
		      label, mode, (long long)x.done, (long long)p->nmsg);
		for (int64_t s = 0; s < p->nslots; s++)
			if (x.count[s] != p->slot_expect[s] && slot_bad < 0)
				slot_bad = s;
		CHECK(slot_bad < 0, "%s: order %d: slot %lld", label, mode,
		      (long long)slot_bad);
		for (int64_t i = 0; i < p->nmsg; i++) {
			if (p->msg[i].mark == TOPO__MARK_ENTER &&
			    x.stamp[i] > last_enter)
				last_enter = x.stamp[i];
			if (p->msg[i].mark == TOPO__MARK_LEAVE &&
			    (first_leave < 0 || x.stamp[i] < first_leave))
				first_leave = x.stamp[i];
		}
		CHECK(first_leave > last_enter,
		      "%s: order %d: a LEAVE (%lld) before the last ENTER "
		      "(%lld)",
		      label, mode, (long long)first_leave,
		      (long long)last_enter);
		run_free(&x);
	}
}

/* ---------------------------------------------------------------------- */
/* Coverage */

static void one(const topo_tree *t, const char *algo, int turn)
{
	topo_error err;
	int rc;
	int32_t from = -1, bad;
	topo_plan *p;

	snprintf(label, sizeof(label),
		 "barrier %s, \"%s\" (%d members), "
		 "tree %s",
		 algo, t->g->name, (int)t->n, t->name);
	p = plan(t, algo, 0, 0, -1, &rc, &err);
	CHECK(rc == 0 && p != NULL, "%s: %d: %s", label, rc, err.text);
	if (p == NULL)
		return;
	check_structure(p, algo);
	bad = unreachable(p, &from, 1);
	CHECK(bad < 0, "%s: LEAVE of %d not reachable from ENTER of %d", label,
	      (int)bad, (int)from);
	check_replay(p);
	check_run(p, turn % 2 ? 4 : 2, 2 + turn % 2, -1);
	/* One member's ENTER held back: the last, or the tree's root. */
	if (t->n > 1 && turn % 3 == 0)
		check_run(p, 2, 1, turn % 2 ? t->root : t->n - 1);
	topo_plan_free(p);
}

static void test_coverage(void)
{
	int turn = 0;

	for (size_t gi = 0; gi < NGSPECS; gi++) {
		topo_tree *t = tree(gs[gi], "physical");

		one(t, "dissemination", turn++);
		topo_tree_free(t);
		for (size_t k = 0; k < NSHAPES; k++) {
			t = tree(gs[gi], shapes[k]);
			one(t, "tree", turn++);
			topo_tree_free(t);
		}
	}
}

/* n = 1: ENTER, then LEAVE. */
static void test_one_member(void)
{
	topo_tree *t = tree(gs[0], "physical");

	for (size_t ai = 0; ai < NALGOS; ai++) {
		topo_error err;
		int rc;
		topo_plan *p = plan(t, algos[ai], 0, 0, -1, &rc, &err);

		CHECK(p != NULL, "one member, %s: %s", algos[ai], err.text);
		if (p == NULL)
			continue;
		CHECK_INT(p->nmsg, 2);
		CHECK_INT(p->ntransport, 0);
		CHECK_INT(p->msg[0].mark, TOPO__MARK_ENTER);
		CHECK_INT(p->msg[1].mark, TOPO__MARK_LEAVE);
		CHECK(p->succ_off[1] == 1 && p->succ[0] == 1,
		      "one member, %s: LEAVE waits for ENTER", algos[ai]);
		topo_plan_free(p);
	}
	topo_tree_free(t);
}

/* ---------------------------------------------------------------------- */
/* Predict-only plans, and large groups */

static void test_predict(void)
{
	for (size_t ai = 0; ai < NALGOS; ai++)
		for (size_t gi = 0; gi < NGSPECS; gi++) {
			topo_tree *t = tree(gs[gi], "kary:3");
			topo_plan *p, *lp;
			topo_prediction *pr = NULL;
			topo_error err;
			int rc, rc2;
			int64_t bad = -1;

			snprintf(label, sizeof(label),
				 "predict: barrier %s, %d members", algos[ai],
				 (int)t->n);
			p = plan(t, algos[ai], 0, 0, -1, &rc, &err);
			lp = plan(t, algos[ai], 0, 1, -1, &rc2, &err);
			CHECK(p != NULL && lp != NULL, "%s: %d %d: %s", label,
			      rc, rc2, err.text);
			if (p != NULL && lp != NULL) {
				CHECK(lp->nmsg == p->nmsg &&
					  lp->ntransport == p->ntransport &&
					  ndeps(lp) == ndeps(p),
				      "%s: counts differ", label);
				for (int64_t i = 0;
				     i < p->nmsg && i < lp->nmsg && bad < 0;
				     i++)
					if (topo__msg_src(lp, i) !=
						p->msg[i].src ||
					    topo__msg_dst(lp, i) !=
						p->msg[i].dst ||
					    topo__msg_len(lp, i) != 0)
						bad = i;
				CHECK(bad < 0, "%s: message %lld differs",
				      label, (long long)bad);
				topo_error_clear(&err);
				rc = topo_plan_predict(lp, NULL, &pr, &err);
				CHECK(rc == 0 && pr != NULL, "%s: %d: %s",
				      label, rc, err.text);
				if (pr != NULL)
					CHECK(t->n == 1 ||
						  topo_prediction_seconds(pr) >
						      0,
					      "%s: %g s", label,
					      topo_prediction_seconds(pr));
				topo_prediction_free(pr);
			}
			topo_plan_free(p);
			topo_plan_free(lp);
			topo_tree_free(t);
		}
}

/* 65,536 members (256 nodes of 256 tasks): the closed form's counts, and
 * a run of 4,096. */
static void test_large(void)
{
	int32_t tasks[256], parent[256];
	topo_machine *m;
	topo_group *g, *g2;
	topo_tree *t, *t2;

	for (int i = 0; i < 256; i++) {
		tasks[i] = 256;
		parent[i] = i == 0 ? -1 : (i - 1) / 4;
	}
	m = machine(256, tasks, 1, parent);
	g = group(m, "all");
	g2 = group(m, "nodes 0:15");
	t = tree(g, "hierarchical");
	t2 = tree(g2, "binomial");
	for (size_t ai = 0; ai < NALGOS; ai++) {
		topo_error err;
		int rc;
		topo_plan *p;

		snprintf(label, sizeof(label), "barrier %s, 65536 members",
			 algos[ai]);
		p = plan(t, algos[ai], 0, 0, -1, &rc, &err);
		CHECK(p != NULL, "%s: %d: %s", label, rc, err.text);
		if (p != NULL) {
			CHECK_INT(p->ntransport,
				  ai == 0 ? 65536 * 16 : 2 * 65535);
			topo_plan_free(p);
		}
		snprintf(label, sizeof(label), "barrier %s, 4096 members",
			 algos[ai]);
		p = plan(t2, algos[ai], 0, 0, -1, &rc, &err);
		CHECK(p != NULL, "%s: %d: %s", label, rc, err.text);
		if (p != NULL) {
			check_structure(p, algos[ai]);
			check_run(p, 4, 2, -1);
			topo_plan_free(p);
		}
	}
	topo_tree_free(t);
	topo_tree_free(t2);
	topo_group_free(g);
	topo_group_free(g2);
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* Hand plans */

/* A barrier plan as topo_plan_new sets it up before the algorithm. */
static struct topo_plan *hand_plan(const topo_tree *t)
{
	struct topo_plan *p = topo__calloc(1, sizeof(*p));

	p->t = t;
	p->n = t->n;
	p->root = t->root;
	snprintf(p->algorithm, sizeof(p->algorithm), "hand");
	p->params.algorithm = p->algorithm;
	p->params.op = TOPO_OP_BARRIER;
	p->params.bytes = 0;
	p->params.type = TOPO_INT8;
	p->params.redop = TOPO_SUM;
	p->params.root = -1;
	p->type_size = 1;
	return p;
}

static int64_t hmsg(struct topo_plan *p, int32_t src, int32_t dst, int mark,
		    int64_t slot)
{
	struct topo__msg m;
	topo_error err;
	int64_t id = -1;

	memset(&m, 0, sizeof(m));
	m.src = src;
	m.dst = dst;
	m.sbuf = m.dbuf = TOPO__RECV;
	m.kind = TOPO__COPY;
	m.mark = (uint8_t)mark;
	m.slot = slot;
	topo_error_clear(&err);
	CHECK(topo__plan_msg(p, &m, &id, &err) == 0, "plan_msg: %s", err.text);
	return id;
}

static void hdep(struct topo_plan *p, int64_t before, int64_t after)
{
	topo_error err;

	topo_error_clear(&err);
	CHECK(topo__plan_dep(p, before, after, &err) == 0, "plan_dep: %s",
	      err.text);
}

static int64_t hslot(struct topo_plan *p, int32_t member, int32_t expect)
{
	topo_error err;
	int64_t s = -1;

	topo_error_clear(&err);
	CHECK(topo__plan_slot(p, member, expect, &s, &err) == 0,
	      "plan_slot: %s", err.text);
	return s;
}

/*
 * A star barrier over 3 members with the hub 2: fan-in 0 -> 2 and 1 -> 2,
 * the hub's LEAVE, fan-out 2 -> 0, 2 -> 1.  With cut, the hub's LEAVE
 * does not wait for member 0's message: all three may leave before 0
 * enters.  (Member 0's ENTER is the first root of the run, which the
 * pool takes last: held back or not, it comes after the rest.)  Returns
 * the plan finished.
 */
static struct topo_plan *star(const topo_tree *t, int cut)
{
	struct topo_plan *p = hand_plan(t);
	int64_t enter[3], leave[3], up[2], down[2], rs[3];
	topo_error err;

	for (int32_t r = 0; r < 3; r++)
		rs[r] = hslot(p, r, r == 2 ? 2 : 1);
	for (int32_t r = 0; r < 3; r++)
		enter[r] = hmsg(p, r, r, TOPO__MARK_ENTER, hslot(p, r, 1));
	for (int32_t r = 0; r < 2; r++) {
		up[r] = hmsg(p, r, 2, TOPO__MARK_NONE, rs[2]);
		hdep(p, enter[r], up[r]);
	}
	for (int32_t r = 0; r < 3; r++)
		leave[r] = hmsg(p, r, r, TOPO__MARK_LEAVE, hslot(p, r, 1));
	hdep(p, enter[2], leave[2]);
	hdep(p, up[1], leave[2]);
	if (!cut)
		hdep(p, up[0], leave[2]);
	for (int32_t r = 0; r < 2; r++) {
		down[r] = hmsg(p, 2, r, TOPO__MARK_NONE, rs[r]);
		hdep(p, leave[2], down[r]);
		hdep(p, down[r], leave[r]);
	}
	topo_error_clear(&err);
	CHECK(topo__plan_finish(p, &err) == 0, "star: %s", err.text);
	return p;
}

/* Removes the dependency before -> after from a finished plan's successor
 * lists, and after's wait for it. */
static void cut_dep(struct topo_plan *p, int64_t before, int64_t after)
{
	int64_t k = p->succ_off[before], end = p->succ_off[p->nmsg];

	while (k < p->succ_off[before + 1] && p->succ[k] != after)
		k++;
	CHECK(k < p->succ_off[before + 1], "no dependency %lld -> %lld",
	      (long long)before, (long long)after);
	if (k == p->succ_off[before + 1])
		return;
	memmove(&p->succ[k], &p->succ[k + 1],
		(size_t)(end - k - 1) * sizeof(p->succ[0]));
	for (int64_t m = before + 1; m <= p->nmsg; m++)
		p->succ_off[m]--;
	p->msg[after].nwait--;
}

/* Runs p with member slow_member's ENTER held back until some error is
 * reported (the schedule may hide an early leave; a few tries). */
static topo_report *run_until_error(const topo_plan *p, int32_t slow_member)
{
	topo_report *rep = NULL;

	for (int i = 0; i < 5; i++) {
		topo_report_free(rep);
		rep = run_over(p, 2, 3, slow_member);
		if (rep == NULL || topo_report_error_total(rep) > 0)
			break;
	}
	return rep;
}

static void test_left_early(void)
{
	topo_group *g = gs[2]; /* 3 members */
	topo_tree *t = tree(g, "physical");
	topo_tree ft = *t;
	struct topo_plan *p;
	topo_report *rep;
	int32_t from = -1;

	/* The star with every dependency: verifies, 0 held back or not. */
	ft.root = 2;
	snprintf(label, sizeof(label), "star barrier");
	p = star(&ft, 0);
	CHECK(unreachable(p, &from, 1) < 0, "%s: not a barrier", label);
	check_run(p, 2, 3, -1);
	check_run(p, 2, 3, 0);
	topo_plan_free(p);

	/* Without 0 -> LEAVE(2): everyone may leave before 0 enters. */
	snprintf(label, sizeof(label), "star barrier, a dependency cut");
	p = star(&ft, 1);
	CHECK(unreachable(p, &from, 0) >= 0 && from == 0,
	      "%s: the static check misses it", label);
	rep = run_until_error(p, 0);
	if (rep != NULL) {
		CHECK(!topo_report_verified(rep), "%s: verified", label);
		CHECK(has_error(rep, g->members[2], "left early") &&
			  has_error(rep, g->members[1], "left early"),
		      "%s: members 2 and 1 (endpoints %d, %d) did not leave "
		      "early",
		      label, (int)g->members[2], (int)g->members[1]);
		CHECK(only(rep, "left early", g->members, 3),
		      "%s: errors other than \"left early\"", label);
		if (!has_error(rep, g->members[2], "left early"))
			dump(rep);
		topo_report_free(rep);
	}
	topo_plan_free(p);
	topo_tree_free(t);

	/* Dissemination over 4 members without member 3's LEAVE waiting
	 * for its last receipt (round 1, from member 1): it then hears only
	 * from 3 and 2, and leaves before 0 enters.  (Member 0's ENTER is
	 * the first root, which the pool takes last.) */
	{
		topo_tree *t4 = tree(gs[3], "physical");
		topo_error err;
		int rc;
		topo_plan *dp = plan(t4, "dissemination", 0, 0, -1, &rc, &err);
		/* ids: ENTER 0..3, round 0 4..7, round 1 8..11, LEAVE 12.. */
		int32_t ep3 = gs[3]->members[3];

		snprintf(label, sizeof(label),
			 "dissemination, member 3's last receipt cut");
		CHECK(dp != NULL && dp->msg[15].mark == TOPO__MARK_LEAVE &&
			  dp->msg[15].src == 3 && dp->msg[9].src == 1 &&
			  dp->msg[9].dst == 3,
		      "%s: not the expected plan", label);
		if (dp != NULL) {
			cut_dep(dp, 9, 15);
			CHECK(unreachable(dp, &from, 0) == 3 &&
				  (from == 0 || from == 1),
			      "%s: the static check misses it (%d)", label,
			      (int)from);
			rep = run_until_error(dp, 0);
			if (rep != NULL) {
				CHECK(!topo_report_verified(rep),
				      "%s: verified", label);
				CHECK(has_error(rep, ep3, "left early") &&
					  only(rep, "left early", &ep3, 1),
				      "%s: not member 3 alone left early",
				      label);
				if (!has_error(rep, ep3, "left early"))
					dump(rep);
				topo_report_free(rep);
			}
			topo_plan_free(dp);
		}
		topo_tree_free(t4);
	}
}

/* A 0-byte message that is not counted (its slot cut) shows as
 * "undelivered" at its destination, and only there. */
static void test_undelivered(void)
{
	topo_tree *t = tree(gs[4], "binomial"); /* 5 members */

	for (size_t ai = 0; ai < NALGOS; ai++) {
		topo_error err;
		int rc;
		topo_plan *p = plan(t, algos[ai], 0, 0, -1, &rc, &err);
		int64_t victim = -1;

		snprintf(label, sizeof(label), "barrier %s, a message lost",
			 algos[ai]);
		CHECK(p != NULL, "%s: %s", label, err.text);
		if (p == NULL)
			continue;
		for (int64_t i = 0; i < p->nmsg && victim < 0; i++)
			if (p->msg[i].src != p->msg[i].dst &&
			    p->msg[i].dst == 3)
				victim = i;
		CHECK(victim >= 0, "%s: no message to 3", label);
		if (victim >= 0) {
			int32_t ep = gs[4]->members[3];
			topo_report *rep;

			p->msg[victim].slot = -1;
			rep = run_over(p, 2, 2, -1);
			if (rep != NULL) {
				CHECK(!topo_report_verified(rep),
				      "%s: verified", label);
				CHECK(has_error(rep, ep, "undelivered") &&
					  only(rep, "undelivered", &ep, 1),
				      "%s: not undelivered at endpoint %d "
				      "alone",
				      label, (int)ep);
				if (!has_error(rep, ep, "undelivered"))
					dump(rep);
				topo_report_free(rep);
			}
		}
		topo_plan_free(p);
	}
	topo_tree_free(t);
}

/* A plan without member 1's LEAVE, or with two ENTERs for it, is refused
 * when finished. */
static void test_marks_refused(void)
{
	topo_tree *t = tree(gs[2], "physical"); /* 3 members */

	for (int c = 0; c < 2; c++) {
		struct topo_plan *p = hand_plan(t);
		topo_error err;
		int64_t e[3];

		for (int32_t r = 0; r < 3; r++)
			e[r] = hmsg(p, r, r, TOPO__MARK_ENTER, hslot(p, r, 1));
		for (int32_t r = 0; r < 3; r++) {
			int64_t l;

			if (r == 1 && c == 0)
				continue;
			l = hmsg(p, r, r,
				 r == 1 ? TOPO__MARK_ENTER : TOPO__MARK_LEAVE,
				 hslot(p, r, 1));
			hdep(p, e[r], l);
		}
		topo_error_clear(&err);
		CHECK_INT(topo__plan_finish(p, &err), TOPO_EINVAL);
		CHECK_STR(err.text, "plan: barrier member 1 does not have "
				    "exactly one enter and one leave step");
		topo_plan_free(p);
	}
	topo_tree_free(t);
}

/* Every allocation failing in turn: TOPO_ENOMEM, then a plan. */
static void test_nomem(void)
{
	topo_tree *t = tree(gs[6], "hierarchical"); /* 7 members */

	for (size_t ai = 0; ai < NALGOS; ai++) {
		int rc = -1, other = 0;
		long k;

		for (k = 0; k < 100000 && rc != 0; k++) {
			topo_error err;
			topo_plan *p;

			topo__alloc_fail_after(k);
			p = plan(t, algos[ai], 0, (int)(k & 1), -1, &rc, &err);
			if (rc != 0 &&
			    (rc != TOPO_ENOMEM || err.code != rc || p != NULL))
				other++;
			topo_plan_free(p);
		}
		topo__alloc_fail_after(-1);
		CHECK(rc == 0 && other == 0,
		      "barrier %s: %d failures other than TOPO_ENOMEM, last %d",
		      algos[ai], other, rc);
		CHECK(k > 3, "barrier %s: only %ld allocations", algos[ai], k);
	}
	topo_tree_free(t);
}

/* Bytes, and a root, are refused. */
static void test_refusals(void)
{
	topo_tree *t = tree(gs[4], "physical");
	char want[120];

	for (size_t ai = 0; ai < NALGOS; ai++) {
		topo_error err;
		int rc;
		topo_plan *p = plan(t, algos[ai], 8, 0, -1, &rc, &err);

		CHECK(p == NULL && rc == TOPO_EARG, "%s: bytes: %d", algos[ai],
		      rc);
		CHECK_STR(err.text, "barrier moves no data (8 bytes given)");
		topo_plan_free(p);
		p = plan(t, algos[ai], 0, 0, gs[4]->members[1], &rc, &err);
		CHECK(p == NULL && rc == TOPO_EARG, "%s: root: %d", algos[ai],
		      rc);
		snprintf(want, sizeof(want),
			 "barrier has no root (endpoint %d given)",
			 (int)gs[4]->members[1]);
		CHECK_STR(err.text, want);
		topo_plan_free(p);
	}
	topo_tree_free(t);
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_barrier", 20250311);
	uneven_groups(gspecs, NGSPECS, ms, gs);
	CHECK_RUN(coverage, test_coverage());
	CHECK_RUN(one_member, test_one_member());
	CHECK_RUN(predict, test_predict());
	CHECK_RUN(large, test_large());
	CHECK_RUN(left_early, test_left_early());
	CHECK_RUN(undelivered, test_undelivered());
	CHECK_RUN(marks_refused, test_marks_refused());
	CHECK_RUN(nomem, test_nomem());
	CHECK_RUN(refusals, test_refusals());
	uneven_groups_free(NGSPECS, ms, gs);
	return check_done("test_barrier");
}
