/*
 * test_reduce_scatter.c - reduce-scatter "tree", "ring",
 * "recursive-halving" and "direct" (libtopo/coll/reduce_scatter/).
 *
 * Every algorithm over groups of 1 to 16 members (powers of two and not),
 * uneven machines, strided and reversed groups, every tree shape for
 * "tree", blocks of 1 and 3 elements and 1000 bytes, the tree's vector in
 * small segments (crossing block boundaries) and in automatic 64 KiB
 * ones, direct's blocks in small segments; every type with every operator
 * that applies to it.  Each plan is checked for its structure (exact
 * transport message counts, local steps and only they without a receipt
 * slot, slots expecting exactly the transport messages, no race: two
 * accesses to the same bytes, one a write, are ordered by the DAG unless
 * both are REDUCEs) and run by topo_plan_run with 2 and 4 threads, 2
 * iterations, which must verify.  Then: corrupted plans (a message's
 * length 0, its source offset moved) fail and name the member; every
 * allocation failure is TOPO_ENOMEM; bad parameters are refused with
 * TOPO_EARG; predict-only plans build the same messages and predict.
 *
 * Direct, message by message, as its file states: n n S messages for S
 * segments of each block (ceil(B / segment), whole blocks by default),
 * SEND n B and RECV B and no WORK, and at each member for each segment one
 * local copy of its own block then a chain of n - 1 REDUCEs into the same
 * bytes, from members q + 1, q + 2, ..., each waiting for exactly the
 * message before it.
 */
#define TOPO_INTERNAL
#include "algocheck.h"

static const char *label; /* what is being checked, for messages */

/* ---------------------------------------------------------------------- */
/* Plans and runs */

/* What to plan (label aside). */
struct want {
	const char *algo;
	enum topo_type type;
	enum topo_redop op;
	size_t bytes, segment;
};

static topo_plan *plan(const topo_tree *t, const struct want *w,
		       int predict_only, int *rc, topo_error *err)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE_SCATTER);
	pp.algorithm = w->algo;
	pp.type = w->type;
	pp.redop = w->op;
	pp.bytes = w->bytes;
	pp.segment = w->segment;
	pp.predict_only = predict_only;
	topo_error_clear(err);
	*rc = topo_plan_new(&p, t, &pp, err);
	return p;
}

/* Runs p (algocheck.h's run_checked): whether it verified; want_ep >= 0:
 * it must not, and some error must name that endpoint. */
static int run(const topo_plan *p, int threads, int32_t want_ep)
{
	return run_checked(label, p, threads, want_ep, NULL);
}

/* Whether the algorithm takes params.segment. */
static int takes_segment(const char *algo)
{
	return strcmp(algo, "tree") == 0 || strcmp(algo, "direct") == 0;
}

/* Direct's segments of a block: whole unless a segment under it is
 * given. */
static int64_t direct_segments(const struct want *w)
{
	int64_t B = (int64_t)w->bytes, seg = (int64_t)w->segment;

	return seg > 0 && seg < B ? (B + seg - 1) / seg : 1;
}

/* Transport messages the algorithm fixes for n members. */
static int64_t want_transport(const struct want *w, int32_t n)
{
	int32_t P = 1, K = 0;

	if (strcmp(w->algo, "ring") == 0)
		return (int64_t)n * (n - 1);
	if (strcmp(w->algo, "direct") == 0)
		return (int64_t)n * (n - 1) * direct_segments(w);
	if (strcmp(w->algo, "tree") == 0) {
		int64_t V = (int64_t)n * (int64_t)w->bytes,
			seg = (int64_t)w->segment, nseg;

		if (seg == 0)
			seg = V >= 256 << 10 ? 64 << 10 : V;
		if (seg > V)
			seg = V;
		nseg = (V + seg - 1) / seg;
		return (nseg + 1) * (n - 1);
	}
	while (P <= n / 2) {
		P *= 2;
		K++;
	}
	return (int64_t)P * K + 2 * (int64_t)(n - P);
}

/* A corrupted message must fail the run at its destination. */
static void check_corrupt(topo_plan *p)
{
	int64_t i = last_recv_msg(p), size, B = (int64_t)p->params.bytes;
	struct topo__msg save;
	int32_t ep;

	if (i < 0)
		return;
	save = p->msg[i];
	ep = p->t->g->members[save.dst];
	p->msg[i].len = 0;
	run(p, 2, ep);
	p->msg[i] = save;
	size = topo__bufsize(p, save.sbuf, save.src);
	if (save.soff + save.len + B <= size)
		p->msg[i].soff += B;
	else if (save.soff >= B)
		p->msg[i].soff -= B;
	CHECK(p->msg[i].soff != save.soff, "%s: no room to move message %lld",
	      label, (long long)i);
	run(p, 4, ep);
	p->msg[i] = save;
	CHECK(run(p, 2, -1), "%s: restored plan fails", label);
}

static void check_one(const topo_tree *t, const struct want *w, int corrupt)
{
	topo_plan *p, *q;
	topo_prediction *pr = NULL;
	topo_error err;
	int rc;

	p = plan(t, w, 0, &rc, &err);
	CHECK(rc == 0 && p != NULL, "%s: plan: %s", label, err.text);
	if (p == NULL)
		return;
	check_counts(label, p, want_transport(w, p->n));
	CHECK(run(p, 2, -1), "%s: not verified (2 threads)", label);
	CHECK(run(p, 4, -1), "%s: not verified (4 threads)", label);
	if (corrupt && p->n > 1)
		check_corrupt(p);
	/* The lean plan: the same messages, and a prediction. */
	q = plan(t, w, 1, &rc, &err);
	CHECK(rc == 0 && q != NULL, "%s: predict-only plan: %s", label,
	      err.text);
	if (q != NULL) {
		CHECK_INT(q->nmsg, p->nmsg);
		CHECK_INT(topo_plan_messages(q), topo_plan_messages(p));
		rc = topo_plan_predict(q, NULL, &pr, &err);
		CHECK(rc == 0, "%s: predict: %s", label, err.text);
		topo_prediction_free(pr);
		topo_plan_free(q);
	}
	topo_plan_free(p);
}

static const char *const algos[] = {"tree", "ring", "recursive-halving",
				    "direct"};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))
static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:3"};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* Every algorithm over g (every shape for "tree"): int8 and int32 sums
 * over blocks of 1 and 3 elements and 1000 bytes, and the tree's vector
 * and direct's blocks of 3 elements in segments of 2 elements. */
static void check_group(const topo_group *g, const char *gname)
{
	static const enum topo_type types[] = {TOPO_INT8, TOPO_INT32};
	char buf[200];

	for (size_t k = 0; k < NSHAPES; k++) {
		topo_tree *t = tree(g, shapes[k]);

		for (size_t a = 0; a < NALGOS; a++) {
			/* The tree's shape matters to "tree" only. */
			if (a > 0 && k != (size_t)g->size % NSHAPES)
				continue;
			for (size_t y = 0; y < 2; y++)
				for (int s = 0; s < 3 + takes_segment(algos[a]);
				     s++) {
					size_t ts = tsize(types[y]);
					struct want w = {algos[a], types[y],
							 TOPO_SUM, 0, 0};

					w.bytes = s == 0   ? ts
						  : s == 2 ? 1000
							   : 3 * ts;
					w.segment = s == 3 ? 2 * ts : 0;
					snprintf(buf, sizeof(buf),
						 "%s, %s, %s, %s, %zu bytes, "
						 "segment %zu",
						 gname, shapes[k], algos[a],
						 topo_type_name(types[y]),
						 w.bytes, w.segment);
					label = buf;
					check_one(t, &w, s == 1 && y == 1);
				}
		}
		topo_tree_free(t);
	}
}

/* Every type with every operator that applies to it, every algorithm,
 * over a few groups. */
static void check_types(const topo_group *const *gs, int ng)
{
	char buf[200];

	for (int ty = 0; ty < TOPO_TYPE_COUNT; ty++)
		for (int op = 0; op < TOPO_REDOP_COUNT; op++) {
			int isfloat = ty == TOPO_FLOAT || ty == TOPO_DOUBLE;

			if (isfloat && op >= TOPO_BAND)
				continue;
			for (int i = 0; i < ng; i++) {
				topo_tree *t = tree(
				    gs[i], shapes[(ty + op + i) % NSHAPES]);

				for (size_t a = 0; a < NALGOS; a++) {
					struct want w = {
					    algos[a], (enum topo_type)ty,
					    (enum topo_redop)op,
					    3 * tsize((enum topo_type)ty),
					    takes_segment(algos[a]) && i == 0
						? tsize((enum topo_type)ty)
						: 0};

					snprintf(buf, sizeof(buf),
						 "%s %s, %d members, %s",
						 topo_type_name(w.type),
						 topo_redop_name(w.op),
						 (int)gs[i]->size, algos[a]);
					label = buf;
					check_one(t, &w, 0);
				}
				topo_tree_free(t);
			}
		}
}

/* ---------------------------------------------------------------------- */
/* Direct, message by message */

/* Why message i of a direct plan is not what direct.c's top comment
 * says, or NULL; pred[i] is its one predecessor when npred[i] == 1. */
static const char *direct_wrong(const struct topo_plan *p, int64_t i,
				int64_t seg, const int64_t *npred,
				const int64_t *pred)
{
	const struct topo__msg *m = &p->msg[i], *b;
	int64_t B = (int64_t)p->params.bytes, n = p->n;

	if (p->succ_off[i + 1] - p->succ_off[i] > 1)
		return "more than one message waits for it";
	if (m->sbuf != TOPO__SEND || m->dbuf != TOPO__RECV)
		return "not from SEND to RECV";
	if (m->soff != m->dst * B + m->doff)
		return "not from the destination's block of SEND";
	if (m->src == m->dst) {
		if (m->kind != TOPO__COPY || m->slot >= 0 || npred[i] != 0)
			return "a local step but not a COPY with no slot "
			       "waiting for nothing";
		if (m->doff % seg != 0 || m->doff >= B ||
		    m->len != (B - m->doff < seg ? B - m->doff : seg))
			return "a local COPY that is not one segment";
		return NULL;
	}
	if (m->kind != TOPO__REDUCE)
		return "a transport message but not a REDUCE";
	if (m->slot < 0 || m->slot >= p->nslots ||
	    p->slot_member[m->slot] != m->dst)
		return "a REDUCE without a slot of its destination's";
	if (npred[i] != 1 || pred[i] >= i)
		return "a REDUCE waiting for other than one earlier message";
	b = &p->msg[pred[i]];
	if (b->dst != m->dst || b->dbuf != TOPO__RECV || b->doff != m->doff ||
	    b->len != m->len)
		return "a REDUCE waiting for a message to other bytes";
	if (b->src != (m->src + n - 1) % n)
		return "a REDUCE waiting for another than the previous "
		       "member's";
	return NULL;
}

/*
 * What direct.c's top comment states about plan p, segment seg (as
 * given): n n S messages, n (n - 1) S of them transport, for S =
 * ceil(B / seg) segments (1 for 0 or seg >= B); SEND n B, RECV B and no
 * WORK; every message from its destination's block of SEND to RECV; at
 * each member q, for each segment, exactly one local COPY waiting for
 * nothing, and REDUCEs into the same bytes, each waiting for exactly one
 * earlier message, into the same bytes, from member src - 1 (the COPY
 * for src = q + 1), and waited for by at most one; with (n - 1) S REDUCEs
 * into q, each segment's is then one chain, from q + 1 to q + n - 1; one
 * slot per member, expecting (n - 1) S.
 */
static void check_direct(const struct topo_plan *p, int64_t seg)
{
	int32_t n = p->n, who = -1;
	int64_t B = (int64_t)p->params.bytes, bad = -1, S;
	int64_t *npred = calloc((size_t)p->nmsg + 1, sizeof(int64_t)),
		*pred = calloc((size_t)p->nmsg + 1, sizeof(int64_t)), *copies,
		*reduces = calloc((size_t)n, sizeof(int64_t)),
		*slots = calloc((size_t)n, sizeof(int64_t));
	const char *why = NULL;

	if (seg <= 0 || seg > B)
		seg = B;
	S = (B + seg - 1) / seg;
	copies = calloc((size_t)(n * S), sizeof(int64_t));
	CHECK(p->nmsg == (int64_t)n * n * S &&
		  p->ntransport == (int64_t)n * (n - 1) * S,
	      "%s: %lld messages, %lld transport; want %lld and %lld", label,
	      (long long)p->nmsg, (long long)p->ntransport,
	      (long long)n * n * S, (long long)n * (n - 1) * S);
	for (int32_t r = 0; r < n && who < 0; r++)
		if (topo__bufsize(p, TOPO__WORK, r) != 0 ||
		    topo__bufsize(p, TOPO__SEND, r) != n * B ||
		    topo__bufsize(p, TOPO__RECV, r) != B)
			who = r;
	CHECK(who < 0 && !topo__has_buf(p, TOPO__WORK),
	      "%s: member %d's buffers are not SEND %lld, RECV %lld and no "
	      "WORK",
	      label, (int)who, (long long)n * B, (long long)B);
	for (int64_t i = 0; i < p->nmsg; i++)
		for (int64_t k = p->succ_off[i]; k < p->succ_off[i + 1]; k++) {
			npred[p->succ[k]]++;
			pred[p->succ[k]] = i;
		}
	for (int64_t i = 0; i < p->nmsg && bad < 0; i++) {
		const struct topo__msg *m = &p->msg[i];

		why = direct_wrong(p, i, seg, npred, pred);
		if (why != NULL) {
			bad = i;
		} else if (m->src == m->dst) {
			copies[m->dst * S + m->doff / seg]++;
		} else {
			reduces[m->dst]++;
		}
	}
	CHECK(bad < 0, "%s: message %lld (%d to %d, at %lld, %lld bytes): %s",
	      label, (long long)bad, bad < 0 ? 0 : (int)p->msg[bad].src,
	      bad < 0 ? 0 : (int)p->msg[bad].dst,
	      bad < 0 ? 0LL : (long long)p->msg[bad].doff,
	      bad < 0 ? 0LL : (long long)p->msg[bad].len, why);
	who = -1;
	for (int32_t q = 0; bad < 0 && q < n && who < 0; q++) {
		if (reduces[q] != (int64_t)(n - 1) * S)
			who = q;
		for (int64_t k = 0; k < S; k++)
			if (copies[q * S + k] != 1)
				who = q;
	}
	CHECK(who < 0,
	      "%s: member %d has not one COPY and %d REDUCEs for each of "
	      "its %lld segments",
	      label, (int)who, (int)n - 1, (long long)S);
	who = -1;
	for (int64_t s = 0; s < p->nslots; s++) {
		if (p->slot_expect[s] != (int64_t)(n - 1) * S && who < 0)
			who = p->slot_member[s];
		slots[p->slot_member[s]]++;
	}
	for (int32_t q = 0; q < n && who < 0; q++)
		if (slots[q] != 1)
			who = q;
	CHECK(p->nslots == n && who < 0,
	      "%s: %lld slots; member %d's not one expecting %lld", label,
	      (long long)p->nslots, (int)who, (long long)(n - 1) * S);
	free(npred);
	free(pred);
	free(copies);
	free(reduces);
	free(slots);
}

/* Direct over groups of 1, 2, 3, 5 and 16 members and uneven ones,
 * blocks of 3 elements whole and in segments of 1, 2 (the last partial),
 * 3 and more elements, and 1000 bytes of int16 in 64-byte segments (the
 * last 40); each plan checked by check_one (structure, runs) and
 * check_direct, then replayed by the tests' own executor in three
 * orders. */
static void test_direct(topo_machine *m16, topo_machine *const ms[2])
{
	static const struct {
		int machine; /* 0: m16, 1 and 2: ms[0] and ms[1] */
		const char *spec;
	} groups[] = {{0, "ep 0"},	  {0, "ep 0:1"},	 {0, "ep 0:2"},
		      {0, "ep 0:4"},	  {0, "ep 0:15"},	 {1, "all"},
		      {2, "cols 9:0:-3"}, {2, "rows 1 + node 0"}};
	static const struct {
		enum topo_type type;
		enum topo_redop op;
		size_t bytes, segment;
	} cases[] = {
	    {TOPO_INT32, TOPO_SUM, 12, 0},   {TOPO_INT32, TOPO_PROD, 12, 4},
	    {TOPO_INT32, TOPO_MAX, 12, 8},   {TOPO_INT32, TOPO_BXOR, 12, 12},
	    {TOPO_DOUBLE, TOPO_MIN, 24, 80}, {TOPO_INT16, TOPO_SUM, 1000, 64},
	};
	char buf[200];

	for (size_t gi = 0; gi < sizeof(groups) / sizeof(groups[0]); gi++) {
		topo_machine *m =
		    groups[gi].machine == 0 ? m16 : ms[groups[gi].machine - 1];
		topo_group *g;
		topo_tree *t;

		if (topo_spec_check(m, groups[gi].spec, NULL) != 0) {
			CHECK(0, "direct: no group \"%s\"", groups[gi].spec);
			continue;
		}
		g = group(m, groups[gi].spec);
		t = tree(g, shapes[gi % NSHAPES]);
		for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
			struct want w = {"direct", cases[c].type, cases[c].op,
					 cases[c].bytes, cases[c].segment};
			topo_error err;
			topo_plan *p;
			int rc;

			snprintf(buf, sizeof(buf),
				 "direct, \"%s\" (%d members), %s %s, %zu "
				 "bytes, segment %zu",
				 groups[gi].spec, (int)g->size,
				 topo_type_name(w.type), topo_redop_name(w.op),
				 w.bytes, w.segment);
			label = buf;
			check_one(t, &w, c == 5);
			p = plan(t, &w, 0, &rc, &err);
			CHECK(rc == 0 && p != NULL, "%s: plan: %s", label,
			      err.text);
			if (p == NULL)
				continue;
			check_direct(p, (int64_t)w.segment);
			for (int mode = 0; mode < 3; mode++) {
				struct run x;

				replay(p, mode, &x);
				CHECK(x.done == p->nmsg && x.bad_msg < 0 &&
					  wrong_member(p, &x) < 0,
				      "%s: replay %d: %lld of %lld ran, wrong",
				      label, mode, (long long)x.done,
				      (long long)p->nmsg);
				run_free(&x);
			}
			topo_plan_free(p);
		}
		topo_tree_free(t);
		topo_group_free(g);
	}
	/* 16 members, 20000 bytes of int32 in 4096-byte segments: 5
	 * chains per member, 16 x 16 x 5 messages */
	{
		topo_group *g = group(m16, "ep 0:15");
		topo_tree *t = tree(g, "physical");
		struct want w = {"direct", TOPO_INT32, TOPO_SUM, 20000, 4096};
		topo_error err;
		int rc;
		topo_plan *p;

		label = "direct, 16 members, 20000 bytes, segment 4096";
		check_one(t, &w, 0);
		p = plan(t, &w, 0, &rc, &err);
		CHECK(p != NULL && p->nmsg == 16 * 16 * 5 &&
			  p->ntransport == 16 * 15 * 5,
		      "%s: %lld messages, want 1280", label,
		      p != NULL ? (long long)p->nmsg : -1LL);
		if (p != NULL)
			check_direct(p, 4096);
		topo_plan_free(p);
		topo_tree_free(t);
		topo_group_free(g);
	}
}

/* ---------------------------------------------------------------------- */
/* Large vectors, failure paths */

/* The tree's automatic segments (the vector reaches 256 KiB), and the
 * other algorithms over as much. */
static void test_large(const topo_machine *m)
{
	topo_group *g = group(m, "ep 0:15");
	topo_tree *t = tree(g, "hierarchical");
	char buf[100];

	for (size_t a = 0; a < NALGOS; a++) {
		struct want w = {algos[a], TOPO_INT32, TOPO_SUM, 20000, 0};

		snprintf(buf, sizeof(buf), "large, %s", algos[a]);
		label = buf;
		check_one(t, &w, a == 0);
	}
	/* 16 x 20000 bytes: 5 segments. */
	{
		struct want w = {"tree", TOPO_INT32, TOPO_SUM, 20000, 0};
		topo_error err;
		int rc;
		topo_plan *p = plan(t, &w, 0, &rc, &err);

		CHECK(p != NULL && p->ntransport == 6 * 15,
		      "large tree: %lld transport messages, want 90",
		      p != NULL ? (long long)p->ntransport : -1LL);
		topo_plan_free(p);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

static void test_nomem(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *t = tree(g, "hierarchical");

	for (size_t a = 0; a < NALGOS; a++) {
		struct want w = {algos[a], TOPO_INT32, TOPO_SUM, 8, 4};
		int rc = -1, other = 0;
		long k;

		for (k = 0; k < 100000 && rc != 0; k++) {
			topo_error err;
			topo_plan *p;

			topo__alloc_fail_after(k);
			p = plan(t, &w, 0, &rc, &err);
			if (rc != 0 &&
			    (rc != TOPO_ENOMEM || err.code != rc || p != NULL))
				other++;
			topo_plan_free(p);
		}
		topo__alloc_fail_after(-1);
		CHECK(rc == 0 && other == 0,
		      "reduce-scatter %s: %d failures other than TOPO_ENOMEM, "
		      "last %d",
		      algos[a], other, rc);
		CHECK(k > 3, "reduce-scatter %s: only %ld allocations",
		      algos[a], k);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

static void test_refusals(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *t = tree(g, "binomial");
	topo_plan *p;
	topo_error err;
	int rc;

	for (size_t a = 0; a < NALGOS; a++) {
		struct topo_plan_params pp;
		struct want w = {algos[a], TOPO_INT32, TOPO_SUM, 6, 0};

		/* 6 bytes of int32 */
		p = plan(t, &w, 0, &rc, &err);
		CHECK(rc == TOPO_EARG && p == NULL &&
			  strstr(err.text, "multiple") != NULL,
		      "reduce-scatter %s of 6 int32 bytes: %d \"%s\"", algos[a],
		      rc, err.text);
		topo_plan_free(p);
		/* a bitwise operator on a float type */
		w.bytes = 8;
		w.type = TOPO_DOUBLE;
		w.op = TOPO_BXOR;
		p = plan(t, &w, 0, &rc, &err);
		CHECK(rc == TOPO_EARG && p == NULL,
		      "reduce-scatter %s double bxor: %d \"%s\"", algos[a], rc,
		      err.text);
		topo_plan_free(p);
		/* a root */
		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_REDUCE_SCATTER);
		pp.algorithm = algos[a];
		pp.root = g->members[1];
		p = NULL;
		topo_error_clear(&err);
		CHECK_INT(topo_plan_new(&p, t, &pp, &err), TOPO_EARG);
		CHECK(p == NULL && strstr(err.text, "no root") != NULL,
		      "reduce-scatter %s with a root: \"%s\"", algos[a],
		      err.text);
		topo_plan_free(p);
	}
	{
		/* A partial element: a segment of tree or direct (6 bytes
		 * of int32, 12 of double, 1 of int16), and bytes that are
		 * not whole elements, with a segment that is (plan.c's
		 * check, before any algorithm). */
		static const struct {
			struct want w;
			const char *word;
		} cs[] = {
		    {{"tree", TOPO_INT32, TOPO_SUM, 8, 6}, "segment size 6"},
		    {{"direct", TOPO_INT32, TOPO_SUM, 8, 6}, "segment size 6"},
		    {{"direct", TOPO_DOUBLE, TOPO_MAX, 32, 12},
		     "segment size 12"},
		    {{"direct", TOPO_INT16, TOPO_SUM, 8, 1}, "segment size 1"},
		    {{"direct", TOPO_DOUBLE, TOPO_SUM, 12, 8}, "12 bytes"},
		    {{"direct", TOPO_INT16, TOPO_MIN, 7, 0}, "7 bytes"},
		};

		for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
			p = plan(t, &cs[i].w, 0, &rc, &err);
			CHECK(rc == TOPO_EARG && p == NULL &&
				  strstr(err.text, cs[i].word) != NULL,
			      "reduce-scatter %s, %zu B of %s, segment %zu: "
			      "%d \"%s\" (want \"%s\")",
			      cs[i].w.algo, cs[i].w.bytes,
			      topo_type_name(cs[i].w.type), cs[i].w.segment, rc,
			      err.text, cs[i].word);
			topo_plan_free(p);
		}
	}
	topo_tree_free(t);
	topo_group_free(g);
}

/* The default algorithm (plan.c, collrun(1)): direct for a group on one
 * node, ring across nodes; a named algorithm stays. */
static void test_default(const topo_machine *m16, const topo_machine *m)
{
	static const struct {
		int uneven;
		const char *spec, *algo, *want;
	} cs[] = {
	    {0, "node 1", NULL, "direct"}, {0, "ep 4:7", NULL, "direct"},
	    {0, "ep 6", NULL, "direct"},   {0, "ep 3:4", NULL, "ring"},
	    {0, "all", NULL, "ring"},	   {1, "node 1", NULL, "direct"},
	    {1, "all", NULL, "ring"},	   {0, "node 1", "ring", "ring"},
	    {0, "node 2", "tree", "tree"}, {0, "all", "direct", "direct"},
	};

	for (size_t i = 0; i < sizeof(cs) / sizeof(cs[0]); i++) {
		topo_group *g = group(cs[i].uneven ? m : m16, cs[i].spec);
		topo_tree *t = tree(g, "binomial");
		struct want w = {cs[i].algo, TOPO_INT32, TOPO_SUM, 64, 0};
		topo_error err;
		topo_plan *p;
		int rc;

		p = plan(t, &w, 0, &rc, &err);
		CHECK(rc == 0 && p != NULL &&
			  strcmp(topo_plan_algorithm(p), cs[i].want) == 0,
		      "reduce-scatter over \"%s\" of machine %d, algorithm "
		      "%s: %d %s, want %s (%s)",
		      cs[i].spec, cs[i].uneven,
		      cs[i].algo != NULL ? cs[i].algo : "(default)", rc,
		      p != NULL ? topo_plan_algorithm(p) : "no plan",
		      cs[i].want, err.text);
		if (p != NULL)
			CHECK(run(p, 2, -1),
			      "reduce-scatter default over \"%s\"", cs[i].spec);
		topo_plan_free(p);
		topo_tree_free(t);
		topo_group_free(g);
	}
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	/* 16 endpoints on 4 nodes; uneven machines: 3, 1, 4, 2 tasks, and
	 * 2, 5, 1, 3, 2 tasks of 2 endpoints. */
	const int32_t t16[4] = {4, 4, 4, 4}, p16[4] = {-1, 0, 0, 1};
	const int32_t ta[4] = {3, 1, 4, 2}, pa[4] = {-1, 0, 0, 1};
	const int32_t tb[5] = {2, 5, 1, 3, 2}, pb[5] = {2, -1, 1, 1, 3};
	static const int32_t sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 13, 16};
	static const char *const uneven[] = {"all", "ep 0::2", "cols 9:0:-3",
					     "rows 1 + node 0"};
	topo_machine *m16 = machine(4, t16, 1, p16);
	topo_machine *ms[2] = {machine(4, ta, 1, pa), machine(5, tb, 2, pb)};
	const topo_group *gs[3];

	check_args(argc, argv);
	if (check_want("groups")) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			char spec[40];
			topo_group *g;

			snprintf(spec, sizeof(spec), "ep 0:%d",
				 (int)sizes[i] - 1);
			g = group(m16, spec);
			check_group(g, spec);
			topo_group_free(g);
		}
	}
	if (check_want("uneven_groups")) {
		for (int i = 0; i < 2; i++)
			for (size_t j = 0;
			     j < sizeof(uneven) / sizeof(uneven[0]); j++) {
				char name[80];
				topo_group *g;

				if (topo_spec_check(ms[i], uneven[j], NULL) !=
				    0)
					continue;
				snprintf(name, sizeof(name),
					 "machine %d \"%s\"", i, uneven[j]);
				g = group(ms[i], uneven[j]);
				check_group(g, name);
				topo_group_free(g);
			}
	}
	if (check_want("types")) {
		gs[0] = group(m16, "ep 0:4");
		gs[1] = group(m16, "ep 0:7");
		gs[2] = group(ms[1], "cols 9:0:-3");
		check_types(gs, 3);
		for (int i = 0; i < 3; i++)
			topo_group_free((topo_group *)gs[i]);
	}
	CHECK_RUN(direct, test_direct(m16, ms));
	CHECK_RUN(large, test_large(m16));
	CHECK_RUN(nomem, test_nomem(ms[1]));
	CHECK_RUN(refusals, test_refusals(ms[0]));
	CHECK_RUN(default, test_default(m16, ms[1]));

	topo_machine_free(m16);
	topo_machine_free(ms[0]);
	topo_machine_free(ms[1]);
	return check_done("test_reduce_scatter");
}
