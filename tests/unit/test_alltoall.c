/*
 * test_alltoall.c - alltoall "pairwise", "bruck" and "direct"
 * (libtopo/coll/alltoall/).
 *
 * Every algorithm over groups of 1 to 16 members (powers of two and not)
 * of uneven machines (nodes of different task counts, built with
 * topo__machine_build), strided groups and a whole machine of 26, with
 * blocks of 1, 3 and 1000 bytes and of 64 KiB on a few groups.  Each plan
 * is checked for its exact structure against its file's closed form
 * (messages, transport messages and bytes, dependencies, the partners of
 * every step, slot expectations), replayed by the tests' own sequential
 * executor (algocheck.h) in three topological orders, where every member
 * must end with the definition's blocks, SEND untouched, every receipt
 * slot exact, and checked for races (two accesses to the same bytes, one
 * a write, must be ordered by the DAG); then run by topo_plan_run with 2
 * and 4 threads, 2 and 3 iterations, which must verify.
 *
 * Then: predict-only plans hold the same messages and predict; a block's
 * destination offset corrupted does not verify and names the member;
 * every allocation failure is TOPO_ENOMEM; a root is refused; a group too
 * large for n^2 messages is refused with a clear text.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include "algocheck.h"
#include "check.h"

#include <time.h>

static char label[300]; /* what is being checked, for messages */

static const char *const algos[] = {"pairwise", "bruck", "direct"};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))

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

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_ALLTOALL);
	pp.algorithm = algo;
	pp.bytes = bytes;
	pp.root = root;
	pp.predict_only = predict_only;
	topo_error_clear(err);
	*rc = topo_plan_new(&p, t, &pp, err);
	return p;
}

/* The number of i in [0, n) with bit k set. */
static int64_t bit_count(int32_t n, int k)
{
	int64_t c = 0;

	for (int64_t i = 0; i < n; i++)
		c += (i >> k) & 1;
	return c;
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

static int only_endpoint(const topo_report *r, int32_t ep)
{
	for (size_t i = 0; i < topo_report_error_count(r); i++)
		if (topo_report_error(r, i, NULL, NULL) != ep)
			return 0;
	return 1;
}

static topo_report *run(const topo_plan *p, int threads, int iterations)
{
	struct topo_run_params rp;
	topo_report *rep = NULL;
	topo_error err;
	int rc;

	topo_run_params_init(&rp, sizeof(rp));
	rp.threads = threads;
	rp.iterations = iterations;
	topo_error_clear(&err);
	rc = topo_plan_run(p, &rp, &rep, &err);
	CHECK(rc == 0 && rep != NULL, "%s: topo_plan_run: %d: %s", label, rc,
	      err.text);
	return rep;
}

/* ---------------------------------------------------------------------- */
/* Structure: each algorithm's closed form */

static void check_direct(const struct topo_plan *p, int64_t B)
{
	int32_t n = p->n;
	int64_t bad = -1;

	CHECK_INT(p->nmsg, (int64_t)n * n);
	CHECK_INT(p->ntransport, (int64_t)n * (n - 1));
	CHECK_INT(transport_bytes(p), (int64_t)n * (n - 1) * B);
	CHECK_INT(ndeps(p), 0);
	/* Round s, member r: to (r + s) mod n, its block there. */
	for (int64_t i = 0; i < p->nmsg && bad < 0; i++) {
		const struct topo__msg *m = &p->msg[i];
		int32_t s = (int32_t)(i / n), r = (int32_t)(i % n),
			d = (r + s) % n;

		if (m->src != r || m->dst != d || m->sbuf != TOPO__SEND ||
		    m->dbuf != TOPO__RECV || m->soff != d * B ||
		    m->doff != r * B || m->len != B)
			bad = i;
	}
	CHECK(bad < 0, "%s: message %lld is not round %lld's", label,
	      (long long)bad, (long long)(bad / (n > 0 ? n : 1)));
}

static void check_pairwise(const struct topo_plan *p, int64_t B)
{
	int32_t n = p->n;
	int pow2 = (n & (n - 1)) == 0;
	int64_t bad = -1, badd = -1;
	int32_t *got = calloc((size_t)n * (size_t)n, sizeof(int32_t));

	CHECK_INT(p->nmsg, (int64_t)n * n);
	CHECK_INT(p->ntransport, (int64_t)n * (n - 1));
	CHECK_INT(transport_bytes(p), (int64_t)n * (n - 1) * B);
	CHECK_INT(ndeps(p), (int64_t)n * (n - 1));
	for (int64_t i = 0; i < p->nmsg && bad < 0; i++) {
		const struct topo__msg *m = &p->msg[i];
		int32_t s = (int32_t)(i / n), r = (int32_t)(i % n);
		int32_t d = pow2 ? r ^ s : (r + s) % n;

		if (m->src != r || m->dst != d || m->soff != d * B ||
		    m->doff != r * B || m->len != B)
			bad = i;
		else
			got[(size_t)r * (size_t)n + (size_t)d]++;
		/* Its only successor: the member's next step. */
		if (s + 1 < n && (p->succ_off[i + 1] - p->succ_off[i] != 1 ||
				  p->succ[p->succ_off[i]] != i + n))
			badd = i;
		if (s + 1 == n && p->succ_off[i + 1] != p->succ_off[i])
			badd = i;
	}
	CHECK(bad < 0, "%s: message %lld is not its step's (%s)", label,
	      (long long)bad, pow2 ? "r XOR s" : "r + s");
	CHECK(badd < 0,
	      "%s: message %lld does not lead to its member's next "
	      "step alone",
	      label, (long long)badd);
	/* Every ordered pair exactly once. */
	for (size_t k = 0; bad < 0 && k < (size_t)n * (size_t)n; k++)
		if (got[k] != 1)
			bad = (int64_t)k;
	CHECK(bad < 0, "%s: pair %lld sends %d times", label, (long long)bad,
	      bad < 0 ? 0 : got[bad]);
	free(got);
}

static void check_bruck(const struct topo_plan *p, int64_t B)
{
	int32_t n = p->n;
	int K = log2_ceil(n);
	int64_t sum = 0, bad = -1, k_at = 0, seen = 0;
	int64_t maxc = 0;

	for (int k = 0; k < K; k++) {
		sum += bit_count(n, k);
		if (bit_count(n, k) > maxc)
			maxc = bit_count(n, k);
	}
	CHECK_INT(p->ntransport, (int64_t)n * K);
	CHECK_INT(transport_bytes(p), (int64_t)n * sum * B);
	CHECK_INT(p->nmsg,
		  (int64_t)n * (3 * ((int64_t)n - 1) + K + 1) + 2 * (n - 1));
	for (int32_t r = 0; r < n; r++) {
		CHECK_INT(bsize(p, TOPO__WORK, r),
			  n > 1 ? ((int64_t)n - 1 + 2 * maxc) * B : 0);
		CHECK_INT(bsize(p, TOPO__RECV, r), (int64_t)n * B);
	}
	/* The transport messages, step by step in member order: member r
	 * sends c_k blocks to r + 2^k. */
	for (int64_t i = 0; i < p->nmsg && bad < 0; i++) {
		const struct topo__msg *m = &p->msg[i];
		int32_t r = (int32_t)(seen % n);

		if (m->src == m->dst)
			continue;
		k_at = seen / n;
		if (m->src != r || m->dst != (int32_t)((r + (1 << k_at)) % n) ||
		    m->len != bit_count(n, (int)k_at) * B ||
		    m->sbuf != TOPO__WORK || m->dbuf != TOPO__WORK)
			bad = i;
		seen++;
	}
	CHECK(bad < 0, "%s: transport message %lld is not step %lld's", label,
	      (long long)bad, (long long)k_at);
}

/* Slots: one per member expecting what its transport messages bring;
 * the local steps and only they name none. */
static void check_slots(const struct topo_plan *p)
{
	int64_t *in = calloc((size_t)p->n, sizeof(int64_t)), bad = -1;

	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if ((m->src == m->dst) != (m->slot < 0) && bad < 0)
			bad = i;
		if (m->slot >= 0 && p->slot_member[m->slot] != m->dst &&
		    bad < 0)
			bad = i;
		if (m->src != m->dst)
			in[m->dst]++;
	}
	CHECK(bad < 0, "%s: message %lld's slot", label, (long long)bad);
	for (int32_t r = 0; r < p->n; r++)
		CHECK(expected_at(p, r) == in[r],
		      "%s: member %d expects %lld, receives %lld", label,
		      (int)r, (long long)expected_at(p, r), (long long)in[r]);
	free(in);
}

/* Three replays: all messages run, in bounds, slots exact, the right
 * blocks everywhere; no race. */
static void check_replay(const struct topo_plan *p)
{
	int64_t r1, r2, nr;

	for (int mode = 0; mode < 3; mode++) {
		struct run x;
		int64_t slot_bad = -1;
		int32_t bad;
		char why[200];

		replay(p, mode, &x);
		CHECK(x.done == p->nmsg, "%s: order %d: %lld of %lld ran",
		      label, mode, (long long)x.done, (long long)p->nmsg);
		CHECK(x.bad_msg < 0, "%s: message %lld out of bounds", label,
		      (long long)x.bad_msg);
		for (int64_t s = 0; s < p->nslots; s++)
			if (x.count[s] != p->slot_expect[s] && slot_bad < 0)
				slot_bad = s;
		CHECK(slot_bad < 0, "%s: order %d: slot %lld", label, mode,
		      (long long)slot_bad);
		bad = wrong_member_why(p, &x, why, sizeof(why));
		CHECK(bad < 0, "%s: order %d: member %d ends wrong: %s", label,
		      mode, (int)bad, why);
		run_free(&x);
	}
	nr = races_max(p, 4000, &r1, &r2);
	CHECK(nr <= 0, "%s: %lld races, first between %lld and %lld", label,
	      (long long)nr, (long long)r1, (long long)r2);
}

static void check_run(const topo_plan *p, int threads, int iterations)
{
	topo_report *rep = run(p, threads, iterations);

	if (rep == NULL)
		return;
	CHECK(topo_report_verified(rep) && topo_report_error_total(rep) == 0,
	      "%s: %d threads: not verified", label, threads);
	if (!topo_report_verified(rep))
		dump(rep);
	topo_report_free(rep);
}

/* ---------------------------------------------------------------------- */
/* Coverage */

static void one(const topo_tree *t, size_t ai, size_t bytes, int turn)
{
	topo_error err;
	int rc;
	topo_plan *p;

	snprintf(label, sizeof(label),
		 "alltoall %s, \"%s\" (%d members), %zu "
		 "bytes",
		 algos[ai], t->g->name, (int)t->n, bytes);
	p = plan(t, algos[ai], bytes, 0, -1, &rc, &err);
	CHECK(rc == 0 && p != NULL, "%s: %d: %s", label, rc, err.text);
	if (p == NULL)
		return;
	if (ai == 0)
		check_pairwise(p, (int64_t)bytes);
	else if (ai == 1)
		check_bruck(p, (int64_t)bytes);
	else
		check_direct(p, (int64_t)bytes);
	for (int32_t r = 0; r < p->n; r++)
		CHECK(bsize(p, TOPO__SEND, r) == (int64_t)(p->n * bytes) &&
			  bsize(p, TOPO__RECV, r) == (int64_t)(p->n * bytes),
		      "%s: member %d's buffers", label, (int)r);
	check_slots(p);
	check_replay(p);
	check_run(p, turn % 2 ? 4 : 2, 2 + turn % 2);
	topo_plan_free(p);
}

static void test_coverage(void)
{
	static const size_t sizes[] = {1, 3, 1000};
	int turn = 0;

	for (size_t ai = 0; ai < NALGOS; ai++)
		for (size_t gi = 0; gi < NGSPECS; gi++) {
			topo_tree *t = tree(gs[gi], "physical");

			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]);
			     s++)
				one(t, ai, sizes[s], turn++);
			/* 64 KiB blocks on a few groups */
			if (gs[gi]->size == 4 || gs[gi]->size == 7 ||
			    gs[gi]->size == 16)
				one(t, ai, 64 << 10, turn++);
			topo_tree_free(t);
		}
}

/* ---------------------------------------------------------------------- */
/* Predict-only plans */

static void test_predict(void)
{
	for (size_t ai = 0; ai < NALGOS; ai++)
		for (size_t gi = 0; gi < NGSPECS; gi++) {
			topo_tree *t = tree(gs[gi], "hierarchical");
			topo_plan *p, *lp;
			topo_prediction *pr = NULL;
			topo_error err;
			int rc, rc2;
			int64_t bad = -1;

			snprintf(label, sizeof(label),
				 "predict: alltoall %s, %d members", algos[ai],
				 (int)t->n);
			p = plan(t, algos[ai], 24, 0, -1, &rc, &err);
			lp = plan(t, algos[ai], 24, 1, -1, &rc2, &err);
			CHECK(p != NULL && lp != NULL, "%s: %d %d: %s", label,
			      rc, rc2, err.text);
			if (p != NULL && lp != NULL) {
				CHECK(lp->nmsg == p->nmsg &&
					  lp->ntransport == p->ntransport &&
					  ndeps(lp) == ndeps(p),
				      "%s: %lld/%lld/%lld messages, "
				      "transport, deps; full %lld/%lld/%lld",
				      label, (long long)lp->nmsg,
				      (long long)lp->ntransport,
				      (long long)ndeps(lp), (long long)p->nmsg,
				      (long long)p->ntransport,
				      (long long)ndeps(p));
				for (int64_t i = 0;
				     i < p->nmsg && i < lp->nmsg && bad < 0;
				     i++)
					if (topo__msg_src(lp, i) !=
						p->msg[i].src ||
					    topo__msg_dst(lp, i) !=
						p->msg[i].dst ||
					    topo__msg_len(lp, i) !=
						p->msg[i].len)
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

/* ---------------------------------------------------------------------- */
/* Failures */

/* A message writing member d's RECV block b moved to block b + 1: the run
 * does not verify and names d alone. */
static void test_corrupt(void)
{
	topo_group *g = gs[4]; /* 5 members */
	topo_tree *t = tree(g, "physical");

	for (size_t ai = 0; ai < NALGOS; ai++) {
		topo_error err;
		int rc;
		topo_plan *p = plan(t, algos[ai], 8, 0, -1, &rc, &err);
		int64_t victim = -1;
		int32_t d;
		topo_report *rep;
		struct run x;

		snprintf(label, sizeof(label), "corrupt: alltoall %s",
			 algos[ai]);
		CHECK(p != NULL, "%s: %s", label, err.text);
		if (p == NULL)
			continue;
		/* The last message into RECV from another member's data
		 * (bruck: the inverse rotation's, local) */
		for (int64_t i = 0; i < p->nmsg; i++) {
			const struct topo__msg *m = &p->msg[i];

			if (m->dbuf == TOPO__RECV && m->len > 0 &&
			    m->doff != (int64_t)m->dst * 8)
				victim = i;
		}
		CHECK(victim >= 0, "%s: no message to corrupt", label);
		if (victim < 0) {
			topo_plan_free(p);
			continue;
		}
		d = p->msg[victim].dst;
		p->msg[victim].doff = (p->msg[victim].doff + 8) % (5 * 8);
		replay(p, 0, &x);
		CHECK_INT(wrong_member(p, &x), d);
		run_free(&x);
		rep = run(p, 2, 2);
		if (rep != NULL) {
			int32_t ep = g->members[d];

			CHECK(!topo_report_verified(rep), "%s: verified",
			      label);
			CHECK(has_error(rep, ep, "wrong data"),
			      "%s: no wrong data at endpoint %d", label,
			      (int)ep);
			CHECK(only_endpoint(rep, ep),
			      "%s: errors name others than endpoint %d", label,
			      (int)ep);
			if (!only_endpoint(rep, ep))
				dump(rep);
			topo_report_free(rep);
		}
		topo_plan_free(p);
	}
	/* bruck: a transport message into WORK misplaced: the data goes
	 * wrong further on, the run says so. */
	{
		topo_error err;
		int rc;
		topo_plan *p = plan(t, "bruck", 8, 0, -1, &rc, &err);

		snprintf(label, sizeof(label), "corrupt: bruck's step 0");
		if (p != NULL) {
			topo_report *rep;

			for (int64_t i = 0; i < p->nmsg; i++)
				if (p->msg[i].src != p->msg[i].dst) {
					p->msg[i].doff += 8; /* c_0 = 2 of 3 */
					break;
				}
			rep = run(p, 2, 2);
			if (rep != NULL) {
				CHECK(!topo_report_verified(rep) &&
					  topo_report_error_total(rep) > 0,
				      "%s: verified", label);
				topo_report_free(rep);
			}
		}
		topo_plan_free(p);
	}
	topo_tree_free(t);
}

/* Every allocation failing in turn: TOPO_ENOMEM, no leak (the sanitizer
 * build checks that), and then a plan that works. */
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
			p = plan(t, algos[ai], 8, (int)(k & 1), -1, &rc, &err);
			if (rc != 0 &&
			    (rc != TOPO_ENOMEM || err.code != rc || p != NULL))
				other++;
			topo_plan_free(p);
		}
		topo__alloc_fail_after(-1);
		CHECK(
		    rc == 0 && other == 0,
		    "alltoall %s: %d failures other than TOPO_ENOMEM, last %d",
		    algos[ai], other, rc);
		CHECK(k > 3, "alltoall %s: only %ld allocations", algos[ai], k);
	}
	topo_tree_free(t);
}

/* A root is refused; so are groups whose n^2 messages would not fit. */
static void test_refusals(void)
{
	topo_tree *t = tree(gs[4], "physical");
	const int32_t tasks[1] = {32769}, parent[1] = {-1};
	topo_machine *big = machine(1, tasks, 1, parent);
	topo_group *bg = group(big, "all");
	topo_tree *bt = tree(bg, "binomial");
	char want[200];

	for (size_t ai = 0; ai < NALGOS; ai++) {
		topo_error err;
		int rc;
		topo_plan *p;
		double t0 = (double)clock() / CLOCKS_PER_SEC;

		p = plan(t, algos[ai], 8, 0, gs[4]->members[2], &rc, &err);
		CHECK(p == NULL && rc == TOPO_EARG, "%s: root: %d", algos[ai],
		      rc);
		snprintf(want, sizeof(want),
			 "alltoall has no root (endpoint %d given)",
			 (int)gs[4]->members[2]);
		CHECK_STR(err.text, want);
		topo_plan_free(p);

		p = plan(bt, algos[ai], 8, 0, -1, &rc, &err);
		CHECK(p == NULL && rc == TOPO_ELIMIT, "%s: 32769 members: %d",
		      algos[ai], rc);
		snprintf(want, sizeof(want), "alltoall %s over 32769 members",
			 algos[ai]);
		CHECK(strncmp(err.text, want, strlen(want)) == 0, "%s: \"%s\"",
		      algos[ai], err.text);
		/* Building it would take minutes of CPU; the bound is on
		 * that, not on a fast refusal. */
		CHECK((double)clock() / CLOCKS_PER_SEC - t0 < 10,
		      "%s: the refusal took %g s", algos[ai],
		      (double)clock() / CLOCKS_PER_SEC - t0);
		topo_plan_free(p);
	}
	topo_tree_free(bt);
	topo_group_free(bg);
	topo_machine_free(big);
	topo_tree_free(t);
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_alltoall", 20250311);
	uneven_groups(gspecs, NGSPECS, ms, gs);
	CHECK_RUN(coverage, test_coverage());
	CHECK_RUN(predict, test_predict());
	CHECK_RUN(corrupt, test_corrupt());
	CHECK_RUN(nomem, test_nomem());
	CHECK_RUN(refusals, test_refusals());
	uneven_groups_free(NGSPECS, ms, gs);
	return check_done("test_alltoall");
}
