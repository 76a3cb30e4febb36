/*
 * test_colls.c - the collectives every member takes part in alike, as
 * plans: allreduce (tree, hierarchical, ring, recursive-doubling,
 * rabenseifner), allgather (ring, tree, recursive-doubling, bruck,
 * direct), reduce-scatter (ring, tree, recursive-halving, direct),
 * alltoall (pairwise, bruck, direct) and barrier (dissemination, tree),
 * and reduce direct: 20 algorithms.
 *
 * Every plan is replayed by the tests' own sequential executor
 * (algocheck.h, shared with test_algos.c), independent of exec.c and
 * verify.c: in three topological orders (first ready first, last ready
 * first, random), with plain memmove and a reference reduction, over
 * test-owned buffers.  Every member must end with the bytes the
 * operation's definition gives (CONTEXT: allreduce, everyone the
 * reduction; allgather, block b of everyone's RECV is member b's SEND;
 * reduce-scatter, member r's RECV is block r of the reduction; alltoall,
 * block i of member r's RECV is block r of member i's SEND), SEND
 * untouched, and every receipt slot must count exactly what it expects.
 * Each message that names a slot names one of its destination's, and a
 * message between members that writes bytes of RECV names one.  Plans of
 * up to RACE_MAX messages are checked for races: two messages touching the
 * same bytes of one member's buffer, one of them writing, must be ordered
 * by the DAG (two REDUCEs into one buffer excepted).  A predict-only plan
 * must hold the same messages (who, to whom, how many bytes, what kind)
 * and as many dependencies.
 *
 * Barrier: no data; each member has one ENTER and one LEAVE step (its own
 * 0-byte local steps, each with a slot of its own expecting 1), every
 * LEAVE is reachable in the DAG from every ENTER, each member's other
 * messages follow its ENTER, everything it receives precedes its LEAVE,
 * and in each replay order every LEAVE runs after every ENTER.
 *
 * Coverage: every algorithm x tree shape where it uses the tree (physical,
 * hierarchical, binomial, chain, kary:3; allreduce hierarchical over the
 * hierarchical tree only) x groups of 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11,
 * 12, 13, 15, 16 and 26 members of uneven machines (nodes of different task
 * counts, two endpoints per task; strided and cross-node groups) x sizes (one
 * element, counts not divisible by n, divisible ones, and a small segment for
 * the tree algorithms and reduce-scatter and reduce direct), each of the ten
 * types in turn; for allreduce and reduce-scatter, every type with every valid
 * operator (bitwise on integer types only) on a few groups.  The inputs
 * keep every reduction exact in any order (small values; products of 1,
 * -1 and 2).
 *
 * Then the message counts and bytes of each algorithm against the closed
 * form its file states, a few plans run by topo_plan_run (its verifier and
 * barrier check must agree), and the refusals.  Every algorithm listed
 * here must plan: one that answers TOPO_EARG "not built yet" (a stub) is a
 * failure, counted and named at the end, never a silent pass.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include "algocheck.h"
#include "check.h"

/* Plans of up to this many messages are checked for races. */
#define RACE_MAX 6000

/* Which trees an algorithm is planned over: any one (it ignores the
 * tree), every shape, or the hierarchical tree only. */
enum { TREES_ONE, TREES_ALL, TREES_HIER };

static const struct algo {
	enum topo_op op;
	const char *name;
	int trees;
	/* a tree algorithm, or reduce-scatter direct: tried with
	 * params.segment too (allgather tree ignores it, so its counts are
	 * those of one segment) */
	int segments;
} algos[] = {
    {TOPO_OP_ALLREDUCE, "tree", TREES_ALL, 1},
    {TOPO_OP_ALLREDUCE, "hierarchical", TREES_HIER, 1},
    {TOPO_OP_ALLREDUCE, "ring", TREES_ONE, 0},
    {TOPO_OP_ALLREDUCE, "recursive-doubling", TREES_ONE, 0},
    {TOPO_OP_ALLREDUCE, "rabenseifner", TREES_ONE, 0},
    {TOPO_OP_ALLGATHER, "ring", TREES_ONE, 0},
    {TOPO_OP_ALLGATHER, "tree", TREES_ALL, 1},
    {TOPO_OP_ALLGATHER, "recursive-doubling", TREES_ONE, 0},
    {TOPO_OP_ALLGATHER, "bruck", TREES_ONE, 0},
    {TOPO_OP_REDUCE_SCATTER, "ring", TREES_ONE, 0},
    {TOPO_OP_REDUCE_SCATTER, "tree", TREES_ALL, 1},
    {TOPO_OP_REDUCE_SCATTER, "recursive-halving", TREES_ONE, 0},
    {TOPO_OP_REDUCE_SCATTER, "direct", TREES_ONE, 1},
    {TOPO_OP_ALLTOALL, "pairwise", TREES_ONE, 0},
    {TOPO_OP_ALLTOALL, "bruck", TREES_ONE, 0},
    {TOPO_OP_ALLTOALL, "direct", TREES_ONE, 0},
    {TOPO_OP_BARRIER, "dissemination", TREES_ONE, 0},
    {TOPO_OP_BARRIER, "tree", TREES_ALL, 0},
    /* appended later: indices above are fixed */
    {TOPO_OP_REDUCE, "direct", TREES_ONE, 1},
    {TOPO_OP_ALLGATHER, "direct", TREES_ONE, 0},
};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))

static int64_t planned[NALGOS];		   /* plans checked */
static int64_t stubbed[NALGOS];		   /* "not built yet": failures */
static int64_t race_checked, race_skipped; /* plans, by RACE_MAX */

static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:3"};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static char label[400]; /* what is being checked, for messages */

static int is_int(enum topo_type ty)
{
	return ty != TOPO_FLOAT && ty != TOPO_DOUBLE;
}

/* The k-th valid operator of ty (k taken modulo their number). */
static enum topo_redop nth_redop(enum topo_type ty, unsigned k)
{
	unsigned count = is_int(ty) ? TOPO_REDOP_COUNT : TOPO_BAND;

	return (enum topo_redop)(k % count);
}

/* ---------------------------------------------------------------------- */
/* Planning */

struct req {
	size_t ai; /* algos[ai] */
	size_t bytes;
	enum topo_type type;
	enum topo_redop redop;
	size_t segment;
	int predict_only;
};

/* Plans r over t: the plan, or NULL (a failure is a CHECK, a stub is
 * counted).  *rc gets what topo_plan_new returned. */
static topo_plan *plan_req(const topo_tree *t, const struct req *r, int *rc,
			   topo_error *err)
{
	const struct algo *a = &algos[r->ai];
	struct topo_plan_params pp;
	topo_plan *p = NULL;

	topo_plan_params_init(&pp, sizeof(pp), a->op);
	pp.algorithm = a->name;
	pp.bytes = r->bytes;
	if (topo_op_reduces(a->op)) {
		pp.type = r->type;
		pp.redop = r->redop;
	}
	pp.segment = r->segment;
	pp.predict_only = r->predict_only;
	topo_error_clear(err);
	*rc = topo_plan_new(&p, t, &pp, err);
	return p;
}

static int stub(int rc, const topo_error *err)
{
	return rc == TOPO_EARG && strstr(err->text, "not built yet") != NULL;
}

/* Plans r over t: the plan, or NULL after a failed CHECK (a stub's "not
 * built yet" among them: the callers then stop trying that algorithm). */
static topo_plan *plan_or_fail(const topo_tree *t, const struct req *r)
{
	topo_error err;
	int rc;
	topo_plan *p = plan_req(t, r, &rc, &err);

	if (p == NULL && stub(rc, &err)) {
		stubbed[r->ai]++;
		CHECK(0, "%s: not built yet, but listed as an algorithm",
		      label);
		return NULL;
	}
	CHECK(rc == 0 && p != NULL, "%s: planning failed (%d): %s", label, rc,
	      err.text);
	if (p != NULL)
		planned[r->ai]++;
	return p;
}

/* ---------------------------------------------------------------------- */
/* The checks of one plan */

/* A predict-only plan of the same request holds the same messages. */
static void check_predict_same(const topo_tree *t, const struct req *r,
			       const struct topo_plan *p)
{
	struct req q = *r;
	topo_error err;
	int rc;
	topo_plan *lp;
	int64_t bad = -1;

	q.predict_only = 1;
	lp = plan_req(t, &q, &rc, &err);
	CHECK(lp != NULL, "%s: predict-only plan failed (%d): %s", label, rc,
	      err.text);
	if (lp == NULL)
		return;
	CHECK(lp->nmsg == p->nmsg && lp->ntransport == p->ntransport,
	      "%s: predict-only plan has %lld messages (%lld transport), "
	      "the full one %lld (%lld)",
	      label, (long long)lp->nmsg, (long long)lp->ntransport,
	      (long long)p->nmsg, (long long)p->ntransport);
	for (int64_t i = 0; i < p->nmsg && i < lp->nmsg && bad < 0; i++)
		if (topo__msg_src(lp, i) != p->msg[i].src ||
		    topo__msg_dst(lp, i) != p->msg[i].dst ||
		    topo__msg_len(lp, i) != p->msg[i].len ||
		    topo__msg_kind(lp, i) != p->msg[i].kind)
			bad = i;
	CHECK(bad < 0, "%s: predict-only plan's message %lld differs", label,
	      (long long)bad);
	if (lp->nmsg == p->nmsg)
		CHECK(lp->succ_off[lp->nmsg] == p->succ_off[p->nmsg],
		      "%s: predict-only plan has %lld dependencies, the full "
		      "one %lld",
		      label, (long long)lp->succ_off[lp->nmsg],
		      (long long)p->succ_off[p->nmsg]);
	topo_plan_free(lp);
}

/* Prints message i (for failures). */
static const char *msg_str(const struct topo_plan *p, int64_t i, char *buf,
			   size_t size)
{
	static const char *const bn[] = {"SEND", "RECV", "WORK"};
	const struct topo__msg *m;

	if (i < 0 || i >= p->nmsg) {
		snprintf(buf, size, "(none)");
		return buf;
	}
	m = &p->msg[i];
	snprintf(buf, size, "#%lld %s %d:%s[%lld] -> %d:%s[%lld] len %lld",
		 (long long)i, m->kind == TOPO__REDUCE ? "REDUCE" : "COPY",
		 (int)m->src, m->sbuf < 3 ? bn[m->sbuf] : "?",
		 (long long)m->soff, (int)m->dst,
		 m->dbuf < 3 ? bn[m->dbuf] : "?", (long long)m->doff,
		 (long long)m->len);
	return buf;
}

/*
 * A barrier's DAG: one ENTER and one LEAVE per member (0-byte local
 * steps, each naming a slot of the member's own, named by no other
 * message, expecting 1; the ENTER waiting for nothing); no data; every ENTER an
 * ancestor of every LEAVE; a member's other messages after its ENTER; what it
 * receives before its LEAVE.
 */
static void check_barrier_dag(const struct topo_plan *p)
{
	int32_t n = p->n;
	int64_t *enter = malloc((size_t)n * sizeof(int64_t)),
		*leave = malloc((size_t)n * sizeof(int64_t)),
		*named = calloc((size_t)p->nslots + 1, sizeof(int64_t));
	int64_t bad = -1, data = -1;
	int32_t br = -1, bs = -1;
	uint64_t *anc;
	size_t w;
	char b1[120];

	for (int32_t r = 0; r < n; r++)
		enter[r] = leave[r] = -1;
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if (m->len != 0 && data < 0)
			data = i;
		if (m->slot >= 0)
			named[m->slot]++;
		if (m->mark == TOPO__MARK_NONE)
			continue;
		if (m->mark > TOPO__MARK_LEAVE || m->src != m->dst ||
		    m->len != 0) {
			if (bad < 0)
				bad = i;
			continue;
		}
		if (m->mark == TOPO__MARK_ENTER) {
			/* before everything else the member does */
			if ((enter[m->src] >= 0 || m->nwait != 0) && bad < 0)
				bad = i;
			enter[m->src] = i;
		} else {
			if (leave[m->src] >= 0 && bad < 0)
				bad = i;
			leave[m->src] = i;
		}
	}
	CHECK(data < 0, "%s: a barrier moves data: %s", label,
	      msg_str(p, data, b1, sizeof(b1)));
	CHECK(bad < 0, "%s: bad or repeated barrier step %s", label,
	      msg_str(p, bad, b1, sizeof(b1)));
	for (int32_t r = 0; r < n && br < 0; r++) {
		int64_t s1 = enter[r] >= 0 ? p->msg[enter[r]].slot : -2,
			s2 = leave[r] >= 0 ? p->msg[leave[r]].slot : -2;

		if (s1 < 0 || s2 < 0 || s1 == s2 || p->slot_member[s1] != r ||
		    p->slot_member[s2] != r || p->slot_expect[s1] != 1 ||
		    p->slot_expect[s2] != 1 || named[s1] != 1 || named[s2] != 1)
			br = r;
	}
	CHECK(br < 0,
	      "%s: member %d lacks an ENTER or LEAVE step with a slot of its "
	      "own expecting 1",
	      label, (int)br);
	free(named);
	anc = br < 0 ? ancestors_max(p, &w, 200000) : NULL;
	if (anc == NULL) {
		free(enter);
		free(leave);
		return;
	}
	br = -1;
	for (int32_t r = 0; r < n && br < 0; r++)
		for (int32_t s = 0; s < n && br < 0; s++)
			if (!is_ancestor(anc, w, enter[s], leave[r])) {
				br = r;
				bs = s;
			}
	CHECK(br < 0, "%s: LEAVE of member %d does not depend on ENTER of %d",
	      label, (int)br, (int)bs);
	bad = -1;
	for (int64_t i = 0; i < p->nmsg && bad < 0; i++) {
		const struct topo__msg *m = &p->msg[i];

		if (m->mark != TOPO__MARK_NONE)
			continue;
		if (!is_ancestor(anc, w, enter[m->src], i) ||
		    !is_ancestor(anc, w, i, leave[m->dst]))
			bad = i;
	}
	CHECK(bad < 0,
	      "%s: %s does not come after its source's ENTER and before its "
	      "destination's LEAVE",
	      label, msg_str(p, bad, b1, sizeof(b1)));
	free(anc);
	free(enter);
	free(leave);
}

/*
 * Everything about one plan: structure, slots, three replays, the data,
 * races (small plans), the barrier's order, the predict-only twin.
 */
static void check_plan(const topo_tree *t, const struct req *r,
		       const struct topo_plan *p)
{
	int64_t local = 0, wslot = -1, noslot = -1, r1, r2, nr;
	char b1[120], b2[120], why[200];

	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		local += m->src == m->dst;
		if (m->slot >= 0 && m->slot < p->nslots &&
		    p->slot_member[m->slot] != m->dst && wslot < 0)
			wslot = i;
		if (m->src != m->dst && m->dbuf == TOPO__RECV && m->len > 0 &&
		    m->slot < 0 && noslot < 0)
			noslot = i;
	}
	CHECK_INT(p->ntransport, p->nmsg - local);
	CHECK(wslot < 0, "%s: %s names a slot of member %d, not its own", label,
	      msg_str(p, wslot, b1, sizeof(b1)),
	      wslot < 0 ? -1 : (int)p->slot_member[p->msg[wslot].slot]);
	CHECK(noslot < 0, "%s: %s writes RECV without a receipt slot", label,
	      msg_str(p, noslot, b1, sizeof(b1)));
	for (int mode = 0; mode < 3; mode++) {
		struct run x;
		int32_t bad;
		int64_t slot_bad = -1, last_enter = -1, first_leave = -1;

		replay(p, mode, &x);
		CHECK(x.done == p->nmsg,
		      "%s: order %d: %lld of %lld messages ran (a cycle?)",
		      label, mode, (long long)x.done, (long long)p->nmsg);
		CHECK(x.bad_msg < 0, "%s: %s out of bounds", label,
		      msg_str(p, x.bad_msg, b1, sizeof(b1)));
		for (int64_t s = 0; s < p->nslots; s++)
			if (x.count[s] != p->slot_expect[s] && slot_bad < 0)
				slot_bad = s;
		CHECK(slot_bad < 0,
		      "%s: order %d: slot %lld of member %d got %lld, "
		      "expects %d",
		      label, mode, (long long)slot_bad,
		      slot_bad < 0 ? 0 : (int)p->slot_member[slot_bad],
		      slot_bad < 0 ? 0LL : (long long)x.count[slot_bad],
		      slot_bad < 0 ? 0 : (int)p->slot_expect[slot_bad]);
		bad = x.bad_msg < 0 ? wrong_member_why(p, &x, why, sizeof(why))
				    : -1;
		CHECK(bad < 0, "%s: order %d: member rank %d ends wrong: %s",
		      label, mode, (int)bad, why);
		for (int64_t i = 0; i < p->nmsg; i++) {
			if (p->msg[i].mark == TOPO__MARK_ENTER &&
			    x.stamp[i] > last_enter)
				last_enter = x.stamp[i];
			if (p->msg[i].mark == TOPO__MARK_LEAVE &&
			    (first_leave < 0 || x.stamp[i] < first_leave))
				first_leave = x.stamp[i];
		}
		CHECK(first_leave < 0 || first_leave > last_enter,
		      "%s: order %d: a member left (step %lld) before the "
		      "last entered (step %lld)",
		      label, mode, (long long)first_leave,
		      (long long)last_enter);
		run_free(&x);
	}
	nr = races_max(p, RACE_MAX, &r1, &r2);
	if (nr < 0)
		race_skipped++;
	else
		race_checked++;
	CHECK(nr <= 0, "%s: %lld races, first between %s and %s", label,
	      (long long)nr, msg_str(p, r1, b1, sizeof(b1)),
	      msg_str(p, r2, b2, sizeof(b2)));
	if (p->params.op == TOPO_OP_BARRIER)
		check_barrier_dag(p);
	check_predict_same(t, r, p);
}

/* Plans and checks one request over t. */
static void one(const topo_tree *t, const struct req *r)
{
	const struct algo *a = &algos[r->ai];
	topo_plan *p;

	snprintf(label, sizeof(label),
		 "%s %s, group \"%s\" (%d members), tree %s, %zu bytes",
		 topo_op_name(a->op), a->name, t->g->name, (int)t->n, t->name,
		 r->bytes);
	if (topo_op_reduces(a->op))
		snprintf(label + strlen(label), sizeof(label) - strlen(label),
			 " of %s %s", topo_type_name(r->type),
			 topo_redop_name(r->redop));
	if (r->segment != 0)
		snprintf(label + strlen(label), sizeof(label) - strlen(label),
			 ", segment %zu", r->segment);
	p = plan_or_fail(t, r);
	if (p == NULL)
		return;
	check_plan(t, r, p);
	topo_plan_free(p);
}

/* ---------------------------------------------------------------------- */
/* Coverage: algorithms x trees x groups x sizes x types */

/* Groups of the uneven machines, with the size each spec must give. */
static const struct gspec gspecs[] = {
    {1, "ep 3", 1},
    {1, "ep 5,22", 2},
    {1, "row 1 cols 0:8:4", 3},
    {1, "ep 1:25:7", 4},
    {1, "row 0 cols 0:12:3", 5},
    {1, "ep 2:20:3", 7},
    {1, "row 1 cols 0:7", 8},
    {0, "all", 10},
    {1, "cols 0:10:2", 12},
    {1, "all - node 1", 16},
    /* more non-powers of two, and the whole machine */
    {1, "ep 0:25:5", 6},
    {1, "row 0 cols 0:8", 9},
    {1, "row 1 cols 2:12", 11},
    {1, "row 0", 13},
    {1, "ep 1:15", 15},
    {1, "all", 26},
};
#define NGSPECS (sizeof(gspecs) / sizeof(gspecs[0]))

static topo_machine *ms[2];
static topo_group *gs[NGSPECS];

/*
 * The sizes tried for an algorithm over n members: elements (reducing
 * operations; bytes otherwise) of the block the definition names (all of
 * B for allreduce; one block for the others), and the segment (in
 * elements; 0: none).  One element, counts not divisible by n, a
 * divisible one, and a small segment that cuts the message into several
 * with a partial last one.
 */
struct size_case {
	size_t elems;
	size_t seg_elems;
};

static int size_cases(const struct algo *a, int32_t n, struct size_case *out)
{
	int k = 0;

	switch (a->op) {
	case TOPO_OP_BARRIER:
		out[k++] = (struct size_case){0, 0};
		return k;
	case TOPO_OP_ALLREDUCE:
		out[k++] = (struct size_case){1, 0};
		out[k++] = (struct size_case){(size_t)n + 1, 0};
		out[k++] = (struct size_case){2 * (size_t)n, 0};
		out[k++] = (struct size_case){4 * (size_t)n - 1, 0};
		if (a->segments)
			out[k++] = (struct size_case){4 * (size_t)n - 1, 3};
		return k;
	default:
		out[k++] = (struct size_case){1, 0};
		out[k++] = (struct size_case){3, 0};
		out[k++] = (struct size_case){13, 0};
		if (a->segments) {
			out[k++] = (struct size_case){13, 4};
			out[k++] = (struct size_case){2, 1};
		}
		return k;
	}
}

/* Every algorithm over every group and tree it uses, every size; the
 * reducing operations with the ten types in turn, each with one of its
 * operators in turn (the others move bytes: int8). */
static void test_coverage(void)
{
	unsigned turn = 0;

	for (size_t ai = 0; ai < NALGOS; ai++) {
		const struct algo *a = &algos[ai];

		for (size_t gi = 0; gi < NGSPECS; gi++)
			for (size_t k = 0; k < NSHAPES; k++) {
				struct size_case sc[8];
				int nsc;
				topo_tree *t;

				if ((a->trees == TREES_ONE && k != 0) ||
				    (a->trees == TREES_HIER && k != 1))
					continue;
				t = tree(gs[gi], shapes[k]);
				nsc = size_cases(a, t->n, sc);
				for (int c = 0; c < nsc; c++) {
					enum topo_type ty = (enum topo_type)(
					    turn % TOPO_TYPE_COUNT);
					size_t ts = topo_op_reduces(a->op)
							? tsize(ty)
							: 1;
					struct req r = {ai,
							sc[c].elems * ts,
							ty,
							nth_redop(ty, turn / 3),
							sc[c].seg_elems * ts,
							0};

					turn++;
					one(t, &r);
					if (stubbed[ai] > 0)
						break;
				}
				topo_tree_free(t);
			}
	}
}

/* Allreduce and reduce-scatter: every type with every valid operator, on
 * groups of 1, 5, 7 and 16 members, n + 1 elements (a block size that
 * does not divide). */
static void test_all_operators(void)
{
	static const size_t pick[] = {0, 4, 5, 9};

	for (size_t ai = 0; ai < NALGOS; ai++) {
		const struct algo *a = &algos[ai];

		if (!topo_op_reduces(a->op))
			continue;
		for (size_t q = 0; q < sizeof(pick) / sizeof(pick[0]); q++) {
			topo_tree *t =
			    tree(gs[pick[q]],
				 a->trees == TREES_ONE || a->trees == TREES_HIER
				     ? "hierarchical"
				     : "binomial");

			for (int ty = 0; ty < TOPO_TYPE_COUNT; ty++)
				for (int op = 0; op < TOPO_REDOP_COUNT; op++) {
					struct req r = {
					    ai,
					    ((size_t)t->n + 1) *
						tsize((enum topo_type)ty),
					    (enum topo_type)ty,
					    (enum topo_redop)op,
					    0,
					    0};

					if (op >= TOPO_BAND &&
					    !is_int((enum topo_type)ty))
						continue;
					one(t, &r);
				}
			topo_tree_free(t);
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Message counts and bytes against each algorithm's closed form */

/* The largest power of two <= n, and its log. */
static int32_t pow2_floor(int32_t n, int32_t *lg)
{
	int32_t P = 1;

	*lg = 0;
	while (P <= n / 2) {
		P *= 2;
		(*lg)++;
	}
	return P;
}

/* Sum over members v other than the root of the size of v's subtree
 * (each member counted once per edge above it). */
static int64_t subtree_sum(const topo_tree *t)
{
	int64_t sum = 0;

	for (int32_t v = 0; v < t->n; v++)
		for (int32_t u = v; t->parent[u] >= 0; u = t->parent[u])
			sum++;
	return sum;
}

/* The segments of a vector of V bytes, as reduce cuts them: of seg bytes,
 * or (0) 64 KiB ones from 256 KiB up, else whole. */
static int64_t segs(int64_t V, int64_t seg)
{
	if (seg > 0)
		return (V + seg - 1) / seg;
	return V >= (256 << 10) ? (V + 65535) / 65536 : 1;
}

/*
 * The transport messages and bytes algos[ai] moves over t with B bytes
 * (the operation's B: all of it for allreduce, one block for the others)
 * and segments of seg bytes (0: none), as its file's top comment states.
 * Returns 0 when the form is not known.
 */
static int closed_form(size_t ai, const topo_tree *t, int64_t B, int64_t ts,
		       int64_t seg, int64_t *msgs, int64_t *bytes)
{
	int64_t E = B / ts, ck = 0;
	const struct algo *a = &algos[ai];
	int32_t n = t->n, K = log2_ceil(n), lg, P = pow2_floor(n, &lg);
	int32_t rem = n - P;

	switch (a->op) {
	case TOPO_OP_BARRIER:
		/* 0-byte messages: K rounds of n, or up and down the tree */
		*msgs = strcmp(a->name, "tree") == 0 ? 2 * (int64_t)(n - 1)
						     : (int64_t)n * K;
		*bytes = 0;
		return 1;
	case TOPO_OP_ALLREDUCE:
		if (strcmp(a->name, "tree") == 0 ||
		    strcmp(a->name, "hierarchical") == 0) {
			/* S(n - 1) REDUCEs up, S(n - 1) copies down */
			*msgs = 2 * segs(B, seg) * (n - 1);
			*bytes = 2 * (int64_t)(n - 1) * B;
			return 1;
		}
		if (strcmp(a->name, "ring") == 0) {
			/* 2(n - 1) messages per non-empty block */
			*msgs = 2 * (int64_t)(n - 1) * (E < n ? E : n);
			*bytes = 2 * (int64_t)(n - 1) * B;
			return 1;
		}
		if (strcmp(a->name, "recursive-doubling") == 0) {
			/* whole vectors: the exchange's, the fold's */
			*msgs = (int64_t)P * lg + 2 * rem;
			*bytes = *msgs * B;
			return 1;
		}
		/* rabenseifner: in each phase, for each half size h = 1, 2,
		 * .., P/2 blocks, h members send each aligned range of h
		 * blocks, only those holding elements (blocks i < E when
		 * E < P); everyone sends all but its own block in each
		 * phase; and the fold */
		*msgs = 2 * (int64_t)rem;
		for (int64_t h = 1; h < P; h *= 2) {
			int64_t ranges = (E + h - 1) / h;

			*msgs += 2 * h * (ranges < P / h ? ranges : P / h);
		}
		*bytes = (2 * (int64_t)(P - 1) + 2 * (int64_t)rem) * B;
		return 1;
	case TOPO_OP_ALLTOALL:
		if (strcmp(a->name, "direct") == 0 ||
		    strcmp(a->name, "pairwise") == 0) {
			*msgs = (int64_t)n * (n - 1);
			*bytes = (int64_t)n * (n - 1) * B;
			return 1;
		}
		/* bruck: at step k each member sends the c_k blocks whose
		 * position has bit k set */
		for (int32_t i = 1; i < n; i++)
			for (int32_t k = 0; k < K; k++)
				ck += (i >> k) & 1;
		*msgs = (int64_t)n * K;
		*bytes = (int64_t)n * ck * B;
		return 1;
	case TOPO_OP_REDUCE_SCATTER:
		if (strcmp(a->name, "tree") == 0) {
			/* S(n - 1) REDUCEs of the vector up, n - 1 copies
			 * of subtrees' blocks down */
			*msgs = (segs((int64_t)n * B, seg) + 1) * (n - 1);
			*bytes = (int64_t)(n - 1) * n * B + subtree_sum(t) * B;
			return 1;
		}
		if (strcmp(a->name, "ring") == 0) {
			*msgs = (int64_t)n * (n - 1);
			*bytes = (int64_t)n * (n - 1) * B;
			return 1;
		}
		if (strcmp(a->name, "direct") == 0) {
			/* n - 1 REDUCEs into each member's RECV per
			 * segment; whole blocks unless a segment is given
			 * (no automatic one) */
			*msgs = (int64_t)n * (n - 1) *
				(seg > 0 ? (B + seg - 1) / seg : 1);
			*bytes = (int64_t)n * (n - 1) * B;
			return 1;
		}
		/* recursive-halving: the P give away every block but their
		 * own run; rem folds of n B in, rem blocks back */
		*msgs = (int64_t)P * lg + 2 * rem;
		*bytes = ((int64_t)(P - 1) * n + (int64_t)rem * n + rem) * B;
		return 1;
	case TOPO_OP_REDUCE: {
		/* direct: n - 1 REDUCEs into the root's RECV per segment;
		 * by default whole below 128 KiB, else segments of B/4
		 * within 64..256 KiB, a multiple of the type size */
		int64_t sg = seg;

		if (sg == 0 && B >= ((int64_t)128 << 10)) {
			sg = B / 4 < ((int64_t)64 << 10) ? (int64_t)64 << 10
							 : B / 4;
			sg =
			    sg > ((int64_t)256 << 10) ? (int64_t)256 << 10 : sg;
			sg -= sg % ts;
		}
		*msgs = (int64_t)(n - 1) * (sg > 0 ? (B + sg - 1) / sg : 1);
		*bytes = (int64_t)(n - 1) * B;
		return 1;
	}
	case TOPO_OP_ALLGATHER:
		if (strcmp(a->name, "ring") == 0 ||
		    strcmp(a->name, "direct") == 0) {
			*msgs = (int64_t)n * (n - 1);
			*bytes = (int64_t)n * (n - 1) * B;
		} else if (strcmp(a->name, "bruck") == 0) {
			*msgs = (int64_t)n * K;
			*bytes = (int64_t)n * (n - 1) * B;
		} else if (strcmp(a->name, "recursive-doubling") == 0) {
			*msgs = (int64_t)P * lg + 2 * rem;
			*bytes =
			    ((int64_t)(P - 1) * n + rem + (int64_t)rem * n) * B;
		} else { /* tree: gather up, broadcast of n B down */
			*msgs = 2 * (int64_t)(n - 1);
			*bytes = subtree_sum(t) * B + (int64_t)(n - 1) * n * B;
		}
		return 1;
	default:
		return 0;
	}
}

static void test_counts(void)
{
	/* elements (bytes for the operations that do not reduce), and a
	 * segment in elements for the algorithms that take one */
	static const size_t cases[][2] = {{1, 0},  {3, 0}, {8, 0},    {13, 0},
					  {13, 2}, {5, 1}, {65536, 0}};
	int64_t known = 0;

	for (size_t ai = 0; ai < NALGOS; ai++) {
		const struct algo *a = &algos[ai];

		for (size_t gi = 0; gi < NGSPECS; gi++) {
			topo_tree *t = tree(gs[gi], a->trees == TREES_ALL
							? "binomial"
							: "hierarchical");

			for (size_t e = 0; e < sizeof(cases) / sizeof(cases[0]);
			     e++) {
				int64_t ts = topo_op_reduces(a->op) ? 4 : 1;
				struct req r = {ai,
						cases[e][0] * (size_t)ts,
						TOPO_INT32,
						TOPO_SUM,
						cases[e][1] * (size_t)ts,
						0};
				int64_t msgs, bytes;
				topo_plan *p;

				if (a->op == TOPO_OP_BARRIER) {
					if (e > 0)
						break;
					r.bytes = 0;
				}
				/* segments, and 256 KiB: automatic ones */
				if ((r.segment > 0 || cases[e][0] > 1000) &&
				    !a->segments)
					continue;
				snprintf(label, sizeof(label),
					 "counts: %s %s, %d members, tree %s, "
					 "%zu bytes, segment %zu",
					 topo_op_name(a->op), a->name,
					 (int)t->n, t->name, r.bytes,
					 r.segment);
				p = plan_or_fail(t, &r);
				if (p == NULL)
					break;
				msgs = bytes = -1;
				CHECK(closed_form(ai, t, (int64_t)r.bytes, ts,
						  (int64_t)r.segment, &msgs,
						  &bytes),
				      "%s: no closed form", label);
				known++;
				CHECK(p->ntransport == msgs &&
					  transport_bytes(p) == bytes,
				      "%s: %lld messages of %lld bytes, the "
				      "closed form says %lld of %lld",
				      label, (long long)p->ntransport,
				      (long long)transport_bytes(p),
				      (long long)msgs, (long long)bytes);
				topo_plan_free(p);
			}
			topo_tree_free(t);
		}
	}
	printf("test_colls: %lld plans counted against closed forms\n",
	       (long long)known);
}

/* ---------------------------------------------------------------------- */
/* A few plans run by the library (exec.c, verify.c): they must agree */

static void test_runs(void)
{
	const topo_group *g = gs[5]; /* 7 members */

	for (size_t ai = 0; ai < NALGOS; ai++) {
		const struct algo *a = &algos[ai];
		topo_tree *t = tree(g, "hierarchical");
		struct req r = {ai,	    a->op == TOPO_OP_BARRIER ? 0 : 40,
				TOPO_INT64, TOPO_MAX,
				0,	    0};
		struct topo_run_params rp;
		topo_report *rep = NULL;
		topo_error err;
		topo_plan *p;
		int rc;

		snprintf(label, sizeof(label), "run: %s %s, 7 members",
			 topo_op_name(a->op), a->name);
		p = plan_or_fail(t, &r);
		if (p != NULL) {
			topo_run_params_init(&rp, sizeof(rp));
			rp.threads = 4;
			rp.iterations = 3;
			topo_error_clear(&err);
			rc = topo_plan_run(p, &rp, &rep, &err);
			CHECK(rc == 0 && rep != NULL, "%s: %d: %s", label, rc,
			      err.text);
			if (rep != NULL) {
				CHECK(topo_report_verified(rep) &&
					  topo_report_error_total(rep) == 0,
				      "%s: not verified", label);
				for (size_t i = 0;
				     i < topo_report_error_count(rep); i++) {
					const char *k, *d;
					int32_t ep =
					    topo_report_error(rep, i, &k, &d);

					fprintf(stderr,
						"  endpoint %d: %s: %s\n",
						(int)ep, k, d);
				}
				topo_report_free(rep);
			}
			topo_plan_free(p);
		}
		topo_tree_free(t);
	}
}

/* Reduce direct from every root, message by message against direct.c's
 * comment: per segment the root's copy of its own SEND, waiting for
 * nothing, then the REDUCEs of members L + 1, L + 2, ... (mod n) into
 * the same bytes of its RECV, each waiting for exactly the one before;
 * one slot, the root's; and the data right in every replay order. */
static void test_reduce_direct(void)
{
	const topo_group *g = gs[5]; /* 7 members */
	topo_tree *t = tree(g, "binomial");
	int32_t n = t->n;

	for (int32_t L = 0; L < n; L++)
		for (int sc = 0; sc < 2; sc++) {
			struct topo_plan_params pp;
			topo_plan *p = NULL;
			topo_error err;
			int64_t B = 13 * 4, seg = sc ? 16 : 0,
				S = sc ? (B + seg - 1) / seg : 1, i = 0;
			int64_t r1, r2;
			struct run x;
			int ok = 1;

			topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
			pp.algorithm = "direct";
			pp.root = g->members[L];
			pp.bytes = (size_t)B;
			pp.type = TOPO_INT32;
			pp.redop = TOPO_SUM;
			pp.segment = (size_t)seg;
			topo_error_clear(&err);
			snprintf(label, sizeof(label),
				 "reduce direct, root rank %d, segment %lld",
				 (int)L, (long long)seg);
			CHECK(topo_plan_new(&p, t, &pp, &err) == 0, "%s: %s",
			      label, err.text);
			if (p == NULL)
				continue;
			CHECK_INT(p->nmsg, S * n);
			CHECK_INT(p->nslots, 1);
			CHECK(p->nslots == 1 && p->slot_member[0] == L &&
				  p->slot_expect[0] == (n - 1) * S,
			      "%s: slot", label);
			CHECK_INT(topo__bufsize(p, TOPO__RECV, L), B);
			for (int32_t r = 0; r < n; r++) {
				CHECK_INT(topo__bufsize(p, TOPO__SEND, r), B);
				if (r != L)
					CHECK_INT(
					    topo__bufsize(p, TOPO__RECV, r), 0);
				CHECK_INT(topo__bufsize(p, TOPO__WORK, r), 0);
			}
			for (int64_t k = 0; ok && k < S && p->nmsg == S * n;
			     k++) {
				int64_t off = k * seg, len = sc ? seg : B;

				len = B - off < len ? B - off : len;
				for (int32_t j = 0; j < n; j++, i++) {
					const struct topo__msg *m = &p->msg[i];
					int64_t nw = 0, pred = -1;

					for (int64_t q = 0; q < p->nmsg; q++)
						for (int64_t e = p->succ_off[q];
						     e < p->succ_off[q + 1];
						     e++)
							if (p->succ[e] == i) {
								nw++;
								pred = q;
							}
					ok &=
					    m->kind == (j == 0 ? TOPO__COPY
							       : TOPO__REDUCE);
					ok &= m->src == (L + j) % n &&
					      m->dst == L;
					ok &= m->sbuf == TOPO__SEND &&
					      m->dbuf == TOPO__RECV;
					ok &= m->soff == off &&
					      m->doff == off && m->len == len;
					ok &= m->slot == (j == 0 ? -1 : 0);
					ok &= j == 0 ? nw == 0
						     : nw == 1 && pred == i - 1;
				}
			}
			CHECK(ok,
			      "%s: message %lld differs from direct.c's "
			      "comment",
			      label, (long long)i);
			CHECK_INT(races_max(p, RACE_MAX, &r1, &r2), 0);
			for (int mode = 0; mode < 3; mode++) {
				replay(p, mode, &x);
				CHECK(wrong_member(p, &x) < 0,
				      "%s: wrong data in order %d", label,
				      mode);
				run_free(&x);
			}
			topo_plan_free(p);
		}
	topo_tree_free(t);
}

/* ---------------------------------------------------------------------- */
/* Refusals, and every allocation failing in turn */

static void expect_refusal(const topo_tree *t, enum topo_op op,
			   const char *algo, int32_t root, size_t bytes,
			   enum topo_type ty, enum topo_redop ro,
			   const char *want)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;
	int rc;

	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = algo;
	pp.root = root;
	pp.bytes = bytes;
	pp.type = ty;
	pp.redop = ro;
	topo_error_clear(&err);
	rc = topo_plan_new(&p, t, &pp, &err);
	if (stub(rc, &err))
		return;
	CHECK(rc == TOPO_EARG && p == NULL, "%s %s: refused with %d",
	      topo_op_name(op), algo, rc);
	CHECK(strstr(err.text, want) != NULL, "%s %s: \"%s\", want \"...%s\"",
	      topo_op_name(op), algo, err.text, want);
	topo_plan_free(p);
}

static void test_refusals(void)
{
	topo_tree *b = tree(gs[9], "binomial");

	expect_refusal(b, TOPO_OP_ALLREDUCE, "hierarchical", -1, 8, TOPO_INT32,
		       TOPO_SUM, "needs the hierarchical tree");
	expect_refusal(b, TOPO_OP_ALLREDUCE, "ring", -1, 6, TOPO_INT32,
		       TOPO_SUM, "6 bytes is not a multiple of");
	expect_refusal(b, TOPO_OP_REDUCE_SCATTER, "ring", -1, 8, TOPO_DOUBLE,
		       TOPO_BXOR, "applies to integer types only");
	expect_refusal(b, TOPO_OP_ALLGATHER, "ring", gs[9]->members[0], 8,
		       TOPO_INT8, TOPO_SUM, "has no root");
	expect_refusal(b, TOPO_OP_BARRIER, "dissemination", -1, 8, TOPO_INT8,
		       TOPO_SUM, "barrier moves no data");
	{
		struct topo_plan_params pp;
		topo_plan *p = NULL;
		topo_error err;

		/* reduce direct's segment, by topo__plan_segment */
		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE);
		pp.algorithm = "direct";
		pp.bytes = 64;
		pp.segment = 6;
		topo_error_clear(&err);
		CHECK_INT(topo_plan_new(&p, b, &pp, &err), TOPO_EARG);
		CHECK(p == NULL && strstr(err.text, "reduce direct: segment "
						    "size 6 is not a "
						    "multiple") != NULL,
		      "reduce direct segment refusal: \"%s\"", err.text);
		topo_plan_free(p);
	}
	topo_tree_free(b);
}

static void test_nomem(void)
{
	topo_tree *t = tree(gs[9], "hierarchical");

	for (size_t ai = 0; ai < NALGOS; ai++) {
		const struct algo *a = &algos[ai];
		struct req r = {ai,
				a->op == TOPO_OP_BARRIER ? 0 : 24,
				TOPO_INT32,
				TOPO_SUM,
				a->segments ? 8 : 0,
				0};
		int rc = -1, other = 0, stubbed_here = 0;
		long k;

		for (k = 0; k < 100000 && rc != 0; k++) {
			topo_error err;
			topo_plan *p;

			topo__alloc_fail_after(k);
			p = plan_req(t, &r, &rc, &err);
			if (rc != 0 && stub(rc, &err)) {
				stubbed_here = 1;
				CHECK(0, "%s %s: not built yet",
				      topo_op_name(a->op), a->name);
				break;
			}
			if (rc != 0 &&
			    (rc != TOPO_ENOMEM || err.code != rc || p != NULL))
				other++;
			topo_plan_free(p);
		}
		topo__alloc_fail_after(-1);
		if (stubbed_here)
			continue;
		CHECK(rc == 0 && other == 0,
		      "%s %s: %d failures other than TOPO_ENOMEM, last %d",
		      topo_op_name(a->op), a->name, other, rc);
	}
	topo_tree_free(t);
}

/* ---------------------------------------------------------------------- */
/* The checker itself: plans broken on purpose must be caught */

static void test_harness(void)
{
	size_t ai = 5; /* allgather ring */
	struct req r = {ai, 3, TOPO_INT8, TOPO_SUM, 0, 0};
	topo_tree *t = tree(gs[3], "physical"); /* 4 members */
	topo_plan *p;
	struct run x;
	int64_t r1, r2, tr = -1;

	snprintf(label, sizeof(label), "harness: allgather ring mutated");
	p = plan_or_fail(t, &r);
	if (p == NULL) {
		topo_tree_free(t);
		return;
	}
	/* Intact: no race, right data. */
	CHECK_INT(races_max(p, RACE_MAX, &r1, &r2), 0);
	replay(p, 2, &x);
	CHECK_INT(wrong_member(p, &x), -1);
	run_free(&x);
	/* A transport message delivered to the wrong block: wrong data in
	 * every order. */
	for (int64_t i = 0; i < p->nmsg && tr < 0; i++)
		if (p->msg[i].src != p->msg[i].dst)
			tr = i;
	p->msg[tr].doff = (p->msg[tr].doff + 3) % (3 * p->n);
	for (int mode = 0; mode < 3; mode++) {
		replay(p, mode, &x);
		CHECK(wrong_member(p, &x) >= 0,
		      "harness: misplaced block not seen in order %d", mode);
		run_free(&x);
	}
	p->msg[tr].doff = (p->msg[tr].doff + 3 * p->n - 3) % (3 * p->n);
	/* A receipt expected twice: the count differs. */
	p->slot_expect[p->msg[tr].slot]++;
	replay(p, 0, &x);
	CHECK(x.count[p->msg[tr].slot] != p->slot_expect[p->msg[tr].slot],
	      "harness: slot miscount not seen");
	run_free(&x);
	p->slot_expect[p->msg[tr].slot]--;
	/* Every dependency dropped: races (a block forwarded before it
	 * arrived). */
	for (int64_t i = 0; i <= p->nmsg; i++)
		p->succ_off[i] = 0;
	for (int64_t i = 0; i < p->nmsg; i++)
		p->msg[i].nwait = 0;
	CHECK(races_max(p, RACE_MAX, &r1, &r2) > 0,
	      "harness: unordered plan has no race");
	topo_plan_free(p);
	topo_tree_free(t);
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_colls", 20250311);
	uneven_groups(gspecs, NGSPECS, ms, gs);
	CHECK_RUN(harness, test_harness());
	CHECK_RUN(coverage, test_coverage());
	CHECK_RUN(all_operators, test_all_operators());
	CHECK_RUN(counts, test_counts());
	CHECK_RUN(runs, test_runs());
	CHECK_RUN(reduce_direct, test_reduce_direct());
	CHECK_RUN(refusals, test_refusals());
	CHECK_RUN(nomem, test_nomem());
	uneven_groups_free(NGSPECS, ms, gs);
	if (check_listing)
		return 0;
	printf("test_colls: %lld plans checked for races, %lld too big (over "
	       "%d messages)\n",
	       (long long)race_checked, (long long)race_skipped, RACE_MAX);
	for (size_t ai = 0; ai < NALGOS; ai++) {
		printf("test_colls: %-14s %-18s %6lld plans checked",
		       topo_op_name(algos[ai].op), algos[ai].name,
		       (long long)planned[ai]);
		if (stubbed[ai] > 0)
			printf("  NOT BUILT YET (%lld plans failed)",
			       (long long)stubbed[ai]);
		putchar('\n');
	}
	return check_done("test_colls");
}
