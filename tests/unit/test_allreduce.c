/*
 * test_allreduce.c - allreduce "tree", "hierarchical", "ring",
 * "recursive-doubling" and "rabenseifner" (libtopo/coll/allreduce/).
 *
 * Every algorithm (tree over every tree shape, hierarchical over the
 * hierarchical tree) over groups of 1, 2, 3, 4, 5, 7, 8, 13 and 16
 * members, an uneven machine's (nodes of 3, 1, 4 and 2 tasks) and a
 * strided group, one element, a size not divisible by n elements, and 300
 * KiB in small segments, every type with every operator valid for it.
 * Each plan is checked for its structure (exact transport message counts,
 * local steps and only they without a receipt slot, slots expecting
 * exactly the transport messages, nothing written into SEND, no race: two
 * accesses to the same bytes, one a write, two REDUCEs excepted, are
 * ordered by the DAG), replayed by algocheck.h's sequential executor in
 * three topological orders against a reference reduction, and run by
 * topo_plan_run with 2 and 4 threads, 2 iterations, which must verify.
 * Then: a corrupted plan (a message's length 0, a message without its
 * receipt slot) fails and names the member; every allocation failure is
 * TOPO_ENOMEM; bad parameters and the wrong tree for "hierarchical" are
 * refused; predict-only plans build the same messages and predict; the
 * tree algorithm's dependencies stay linear over a flat tree.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include "algocheck.h"
#include "check.h"

static const char *label; /* what is being checked, for messages */
static char label_buf[200];

static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:3"};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))
static const char *const flat_algos[] = {"ring", "recursive-doubling",
					 "rabenseifner"};
#define NFLAT (sizeof(flat_algos) / sizeof(flat_algos[0]))

/* Every (type, operator) pair valid for an allreduce. */
static struct combo {
	enum topo_type type;
	enum topo_redop op;
} combos[TOPO_TYPE_COUNT * TOPO_REDOP_COUNT];
static int ncombos;

static void make_combos(void)
{
	for (int ty = 0; ty < TOPO_TYPE_COUNT; ty++)
		for (int op = 0; op < TOPO_REDOP_COUNT; op++) {
			if (op >= TOPO_BAND &&
			    (ty == TOPO_FLOAT || ty == TOPO_DOUBLE))
				continue;
			combos[ncombos].type = (enum topo_type)ty;
			combos[ncombos].op = (enum topo_redop)op;
			ncombos++;
		}
}

/* ---------------------------------------------------------------------- */
/* Plans and runs */

static topo_plan *plan(const topo_tree *t, const char *algo, enum topo_type ty,
		       enum topo_redop op, size_t bytes, size_t segment,
		       int predict_only, int *rc, topo_error *err)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_ALLREDUCE);
	pp.algorithm = algo;
	pp.type = ty;
	pp.redop = op;
	pp.bytes = bytes;
	pp.segment = segment;
	pp.predict_only = predict_only;
	topo_error_clear(err);
	*rc = topo_plan_new(&p, t, &pp, err);
	return p;
}

/* Runs p (algocheck.h's run_checked): whether it verified.  want_ep >= 0:
 * it must not, and some error of kind want_kind must name that endpoint;
 * -1: the first errors are printed; -2: quietly. */
static int run(const topo_plan *p, int threads, int32_t want_ep,
	       const char *want_kind)
{
	return run_checked(label, p, threads, want_ep, want_kind);
}

/* ---------------------------------------------------------------------- */
/* What each algorithm sends */

static int32_t log2_floor(int32_t n)
{
	int32_t l = 0;

	while ((2 << l) <= n)
		l++;
	return l;
}

/* Segments of a tree plan, as the algorithm must cut them. */
static int64_t tree_segments(const struct topo_plan *p)
{
	int64_t B = (int64_t)p->params.bytes, seg = (int64_t)p->params.segment;

	if (seg == 0)
		seg = B >= 256 << 10 ? 64 << 10 : B;
	if (seg > B)
		seg = B;
	return (B + seg - 1) / seg;
}

/* Transport messages each algorithm sends, from its definition. */
static int64_t want_transport(const struct topo_plan *p)
{
	const char *a = p->algorithm;
	int64_t n = p->n, E = (int64_t)(p->params.bytes / p->type_size);
	int32_t L = log2_floor(p->n), pof2 = (int32_t)1 << L;
	int64_t rem = n - pof2, cnt = 0;

	if (strcmp(a, "tree") == 0 || strcmp(a, "hierarchical") == 0)
		return 2 * tree_segments(p) * (n - 1);
	if (strcmp(a, "ring") == 0)
		return 2 * (n - 1) * (E < n ? E : n);
	if (strcmp(a, "recursive-doubling") == 0)
		return (int64_t)pof2 * L + 2 * rem;
	/* Rabenseifner: after step k new rank x holds the blocks from
	 * sum over j <= k of bit j of x times pof2 / 2^(j + 1); its
	 * partner sends it those, and it sends them back in the
	 * allgather, unless they are empty (blocks from E on, E < pof2). */
	for (int32_t x = 0; x < pof2; x++) {
		int64_t lo = 0;

		for (int32_t k = 0; k < L; k++) {
			if (x >> k & 1)
				lo += pof2 >> (k + 1);
			cnt += lo < E;
		}
	}
	return 2 * cnt + 2 * rem;
}

/* The structure: counts, slots, SEND never written, and (small plans) no
 * race. */
static void check_structure(const struct topo_plan *p)
{
	int64_t local = 0, noslot = 0, tosend = 0, expect = 0, r1, r2, nr;

	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		local += m->src == m->dst;
		noslot += (m->src == m->dst) != (m->slot < 0);
		tosend += m->dbuf == TOPO__SEND;
	}
	CHECK(p->ntransport == p->nmsg - local, "%s: %lld transport of %lld",
	      label, (long long)p->ntransport, (long long)p->nmsg);
	CHECK(p->ntransport == want_transport(p),
	      "%s: %lld transport messages, want %lld", label,
	      (long long)p->ntransport, (long long)want_transport(p));
	CHECK(noslot == 0,
	      "%s: %lld local steps with a slot or messages "
	      "without",
	      label, (long long)noslot);
	CHECK(tosend == 0, "%s: %lld messages write SEND", label,
	      (long long)tosend);
	for (int64_t s = 0; s < p->nslots; s++)
		expect += p->slot_expect[s];
	CHECK(expect == p->ntransport, "%s: slots expect %lld, %lld sent",
	      label, (long long)expect, (long long)p->ntransport);
	for (int32_t r = 0; r < p->n; r++)
		CHECK(bsize(p, TOPO__RECV, r) == (int64_t)p->params.bytes &&
			  bsize(p, TOPO__SEND, r) == (int64_t)p->params.bytes,
		      "%s: member %d's buffers", label, (int)r);
	nr = races_max(p, 3000, &r1, &r2);
	CHECK(nr <= 0, "%s: %lld races, first between messages %lld and %lld",
	      label, (long long)nr, (long long)r1, (long long)r2);
}

/* Replays p in three orders: every message runs, in bounds, every slot
 * gets what it expects, every member's RECV is the reduction (in rank
 * order, by the test's own reduction) and its SEND its input. */
static void check_replay(const struct topo_plan *p)
{
	size_t B = p->params.bytes;
	unsigned char *want = malloc(B), *tmp = malloc(B);

	fill_send(p, 0, want, B);
	for (int32_t r = 1; r < p->n; r++) {
		fill_send(p, r, tmp, B);
		ref_reduce(p->params.type, p->params.redop, want, tmp, B);
	}
	for (int mode = 0; mode < 3; mode++) {
		struct run x;
		int64_t slot_bad = -1;
		int32_t bad = -1;

		replay(p, mode, &x);
		CHECK(x.done == p->nmsg && x.bad_msg < 0,
		      "%s: mode %d: %lld of %lld ran, out of bounds: %lld",
		      label, mode, (long long)x.done, (long long)p->nmsg,
		      (long long)x.bad_msg);
		for (int64_t s = 0; s < p->nslots && slot_bad < 0; s++)
			if (x.count[s] != p->slot_expect[s])
				slot_bad = s;
		CHECK(slot_bad < 0, "%s: mode %d: slot %lld", label, mode,
		      (long long)slot_bad);
		for (int32_t r = 0; r < p->n && bad < 0; r++) {
			fill_send(p, r, tmp, B);
			if (memcmp(x.buf[TOPO__RECV][r], want, B) != 0 ||
			    memcmp(x.buf[TOPO__SEND][r], tmp, B) != 0)
				bad = r;
		}
		CHECK(bad < 0, "%s: mode %d: member rank %d ends wrong", label,
		      mode, (int)bad);
		run_free(&x);
	}
	free(want);
	free(tmp);
}

/* A predict-only plan builds the same messages, and predicts. */
static void check_predict(const topo_tree *t, const struct topo_plan *full)
{
	topo_prediction *pr = NULL;
	topo_error err;
	topo_plan *q;
	int rc;

	q = plan(t, full->algorithm, full->params.type, full->params.redop,
		 full->params.bytes, full->params.segment, 1, &rc, &err);
	CHECK(rc == 0, "%s: predict-only: %s", label, err.text);
	if (q == NULL)
		return;
	CHECK(q->nmsg == full->nmsg && q->ntransport == full->ntransport,
	      "%s: predict-only builds %lld messages (%lld transport), the "
	      "full plan %lld (%lld)",
	      label, (long long)q->nmsg, (long long)q->ntransport,
	      (long long)full->nmsg, (long long)full->ntransport);
	for (int64_t i = 0; i < q->nmsg && i < full->nmsg; i++)
		if (topo__msg_src(q, i) != full->msg[i].src ||
		    topo__msg_dst(q, i) != full->msg[i].dst ||
		    topo__msg_len(q, i) != full->msg[i].len ||
		    topo__msg_kind(q, i) != full->msg[i].kind) {
			CHECK(0, "%s: predict-only message %lld differs", label,
			      (long long)i);
			break;
		}
	topo_error_clear(&err);
	rc = topo_plan_predict(q, NULL, &pr, &err);
	CHECK(rc == 0 && pr != NULL && topo_prediction_seconds(pr) >= 0,
	      "%s: predict: %d %s", label, rc, err.text);
	topo_prediction_free(pr);
	topo_plan_free(q);
}

/* A transport message of p that writes a RECV, the middle one. */
static int64_t victim(const struct topo_plan *p)
{
	int64_t cnt = 0, k = 0;

	for (int64_t i = 0; i < p->nmsg; i++)
		cnt += p->msg[i].src != p->msg[i].dst && p->msg[i].len > 0;
	for (int64_t i = 0; i < p->nmsg; i++)
		if (p->msg[i].src != p->msg[i].dst && p->msg[i].len > 0 &&
		    k++ == cnt / 2)
			return i;
	return -1;
}

/* A message that delivers nothing fails the run (wrong data, at some
 * member: the data it dropped is everyone's), one without its receipt
 * slot fails it at its destination (undelivered). */
static void check_corrupt(topo_plan *p)
{
	int64_t i = victim(p);
	struct topo__msg save;
	int32_t ep;
	int ok;

	if (i < 0)
		return;
	save = p->msg[i];
	ep = p->t->g->members[save.dst];
	p->msg[i].len = 0;
	ok = run(p, 2, -2, "");
	CHECK(!ok, "%s: message %lld of 0 bytes verifies", label, (long long)i);
	p->msg[i] = save;
	p->msg[i].slot = -1;
	run(p, 4, ep, "undelivered");
	p->msg[i] = save;
	CHECK(run(p, 2, -1, ""), "%s: restored plan fails", label);
}

/* ---------------------------------------------------------------------- */
/* The sweep */

/* One plan: structure, replay, runs; predict and corruption when asked.
 * Combos: every valid (type, operator) pair when all, else combo c
 * alone. */
static void check_one(const topo_tree *t, const char *gname, const char *algo,
		      size_t elems, size_t segment_elems, int c, int extra)
{
	enum topo_type ty = combos[c].type;
	enum topo_redop op = combos[c].op;
	size_t ts = tsize(ty);
	topo_error err;
	topo_plan *p;
	int rc;

	snprintf(label_buf, sizeof(label_buf),
		 "%s %s over %s tree of %s (%d), %zu x %s %s, segment %zu",
		 "allreduce", algo, t->name, gname, (int)t->n, elems,
		 topo_type_name(ty), topo_redop_name(op), segment_elems);
	label = label_buf;
	p = plan(t, algo, ty, op, elems * ts, segment_elems * ts, 0, &rc, &err);
	CHECK(rc == 0 && p != NULL, "%s: %d %s", label, rc, err.text);
	if (p == NULL)
		return;
	check_structure(p);
	check_replay(p);
	CHECK(run(p, 2, -1, ""), "%s: 2 threads: not verified", label);
	CHECK(run(p, 4, -1, ""), "%s: 4 threads: not verified", label);
	if (extra) {
		check_predict(t, p);
		if (p->n > 1 && op == TOPO_SUM)
			check_corrupt(p);
	}
	topo_plan_free(p);
}

/* (CHECK_QUICK, under valgrind: no group is `full`.)
 * Every algorithm over g: all valid combos at one element and at a size
 * not divisible by n elements (one of them rotating over the algorithms
 * and trees when not `full`), a few at 300 KiB in segments of 16 KiB
 * (and the automatic 64 KiB of the tree algorithms) when large. */
static void check_group(const topo_group *g, const char *gname, int full,
			int large)
{
	static int rot;
	size_t sizes[2] = {1, 2 * (size_t)g->size + 3};

	for (size_t a = 0; a < NSHAPES + 1 + NFLAT; a++) {
		const char *algo = a < NSHAPES	  ? "tree"
				   : a == NSHAPES ? "hierarchical"
						  : flat_algos[a - NSHAPES - 1];
		topo_tree *t =
		    tree(g, a < NSHAPES ? shapes[a] : "hierarchical");

		/* The flat algorithms ignore the tree: once is enough. */
		for (size_t s = 0; s < 2; s++) {
			if (full) {
				for (int c = 0; c < ncombos; c++)
					check_one(t, gname, algo, sizes[s], 0,
						  c, c == 0 && s == 1);
			} else {
				check_one(t, gname, algo, sizes[s], 0,
					  rot++ % ncombos, 0);
				/* int32 sum, with predict and corruption */
				check_one(t, gname, algo, sizes[s], 0, 2 * 7,
					  s == 1);
			}
		}
		/* 300 KiB: int32 sum, double max; 16 KiB segments and
		 * automatic ones. */
		if (large)
			check_one(t, gname, algo, (300 << 10) / 4, 16 << 8,
				  2 * 7, 0);
		if (large && a <= NSHAPES)
			check_one(t, gname, algo, (300 << 10) / 8, 0,
				  ncombos - 1, 0);
		topo_tree_free(t);
	}
}

static void test_sweep(void)
{
	/* 16 tasks on nodes of 5, 3, 4 and 4; the uneven machine's 3, 1,
	 * 4 and 2. */
	const int32_t t16[4] = {5, 3, 4, 4}, p16[4] = {-1, 0, 0, 1};
	const int32_t tu[4] = {3, 1, 4, 2}, pu[4] = {-1, 0, 0, 1};
	static const int32_t sizes[] = {1, 2, 3, 4, 5, 7, 8, 13, 16};
	topo_machine *m = machine(4, t16, 1, p16), *u = machine(4, tu, 1, pu);
	char spec[64];

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		topo_group *g;

		snprintf(spec, sizeof(spec), "ep 0:%d", (int)sizes[i] - 1);
		g = group(m, spec);
		check_group(g, spec, sizes[i] == 5 && !check_quick(),
			    sizes[i] == 16 && !check_quick());
		topo_group_free(g);
	}
	{
		topo_group *g = group(u, "all");

		check_group(g, "uneven all", !check_quick(), 1);
		topo_group_free(g);
		g = group(u, "ep 0::2");
		check_group(g, "uneven ep 0::2", 0, 0);
		topo_group_free(g);
		g = group(m, "ep 15:0:-3");
		check_group(g, "ep 15:0:-3", 0, 0);
		topo_group_free(g);
	}
	topo_machine_free(m);
	topo_machine_free(u);
}

/* ---------------------------------------------------------------------- */
/* Failure paths */

static const char *const all_algos[] = {"tree", "hierarchical", "ring",
					"recursive-doubling", "rabenseifner"};
#define NALL (sizeof(all_algos) / sizeof(all_algos[0]))

/* Every allocation of every builder may fail: TOPO_ENOMEM with its text,
 * no plan (the sanitizer checks for leaks), and a later plan works. */
static void test_nomem(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *t = tree(g, "hierarchical");

	for (size_t a = 0; a < NALL; a++) {
		int rc = -1, other = 0;
		long k;

		for (k = 0; k < 100000 && rc != 0; k++) {
			topo_error err;
			topo_plan *p;

			topo__alloc_fail_after(k);
			p = plan(t, all_algos[a], TOPO_INT32, TOPO_SUM, 4 * 13,
				 4, 0, &rc, &err);
			if (rc != 0 && (rc != TOPO_ENOMEM || err.code != rc ||
					p != NULL || err.text[0] == '\0'))
				other++;
			topo_plan_free(p);
		}
		topo__alloc_fail_after(-1);
		CHECK(rc == 0 && other == 0,
		      "allreduce %s: %d failures other than TOPO_ENOMEM, "
		      "last %d",
		      all_algos[a], other, rc);
		CHECK(k > 3, "allreduce %s: only %ld allocations", all_algos[a],
		      k);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

static void test_refusals(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *b = tree(g, "binomial"), *h = tree(g, "hierarchical");
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;
	char want[300];
	int32_t bad = -1;
	int rc;

	for (size_t a = 0; a < NALL; a++) {
		label = all_algos[a];
		/* 6 bytes of int32 */
		p = plan(h, all_algos[a], TOPO_INT32, TOPO_SUM, 6, 0, 0, &rc,
			 &err);
		CHECK(rc == TOPO_EARG && p == NULL, "%s: 6 bytes of int32: %d",
		      label, rc);
		/* a root */
		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_ALLREDUCE);
		pp.algorithm = all_algos[a];
		pp.root = g->members[1];
		topo_error_clear(&err);
		rc = topo_plan_new(&p, h, &pp, &err);
		CHECK(rc == TOPO_EARG && p == NULL, "%s: a root: %d", label,
		      rc);
		/* bitwise on floats */
		p = plan(h, all_algos[a], TOPO_FLOAT, TOPO_BXOR, 8, 0, 0, &rc,
			 &err);
		CHECK(rc == TOPO_EARG && p == NULL, "%s: bxor of floats: %d",
		      label, rc);
	}
	/* A segment that cuts an element. */
	p = plan(b, "tree", TOPO_INT32, TOPO_SUM, 64, 6, 0, &rc, &err);
	CHECK(rc == TOPO_EARG && p == NULL, "tree: segment 6: %d", rc);
	CHECK_STR(err.text, "allreduce tree: segment size 6 is not a multiple "
			    "of the int32 size (4 bytes)");
	/* hierarchical over another tree: refused, naming the endpoint */
	for (int32_t r = 0; r < g->size && bad < 0; r++)
		if (b->parent[r] != h->parent[r])
			bad = r;
	snprintf(want, sizeof(want),
		 "algorithm hierarchical needs the hierarchical tree (-t "
		 "hierarchical); tree \"binomial\" differs from it at "
		 "endpoint %d (parent %d, hierarchical: %d); algorithm tree "
		 "(--algorithm tree) reduces over any tree",
		 (int)g->members[bad],
		 b->parent[bad] < 0 ? -1 : (int)g->members[b->parent[bad]],
		 h->parent[bad] < 0 ? -1 : (int)g->members[h->parent[bad]]);
	p = plan(b, "hierarchical", TOPO_INT32, TOPO_SUM, 8, 0, 0, &rc, &err);
	CHECK(rc == TOPO_EARG && p == NULL, "hierarchical over binomial: %d",
	      rc);
	CHECK_STR(err.text, want);
	/* and over a tree named "hierarchical" but edited */
	{
		int32_t *edited = malloc((size_t)g->size * sizeof(int32_t));
		topo_tree *e;

		memcpy(edited, h->parent, (size_t)g->size * sizeof(int32_t));
		for (int32_t r = 0; r < g->size; r++)
			if (edited[r] >= 0 && edited[r] != h->root &&
			    edited[edited[r]] >= 0) {
				edited[r] = h->root;
				snprintf(want, sizeof(want),
					 "differs from it at endpoint %d",
					 (int)g->members[r]);
				break;
			}
		e = tree_of(g, "hierarchical", edited);
		p = plan(e, "hierarchical", TOPO_INT32, TOPO_SUM, 8, 0, 0, &rc,
			 &err);
		CHECK(rc == TOPO_EARG && strstr(err.text, want) != NULL,
		      "edited: %d %s", rc, err.text);
		/* algorithm tree takes it */
		p = plan(e, "tree", TOPO_INT32, TOPO_SUM, 8, 0, 0, &rc, &err);
		CHECK(rc == 0, "tree over edited: %s", err.text);
		if (p != NULL) {
			label = "tree over an edited tree";
			check_structure(p);
			CHECK(run(p, 2, -1, ""), "%s", label);
		}
		topo_plan_free(p);
		topo_tree_free(e);
		free(edited);
	}
	topo_tree_free(b);
	topo_tree_free(h);
	topo_group_free(g);
}

/* Big groups: a flat tree (one node of 3000) keeps the tree's
 * dependencies linear; ring refuses its quadratic plan beyond the limit
 * and names the way out; recursive doubling and Rabenseifner plan 3000
 * members at once. */
static void test_big(void)
{
	const int32_t tasks[1] = {3000}, parent[1] = {-1};
	const int32_t tb[1] = {40000};
	topo_machine *m = machine(1, tasks, 1, parent),
		     *mb = machine(1, tb, 1, parent);
	topo_group *g = group(m, "all"), *gb = group(mb, "all");
	topo_tree *t = tree(g, "physical"), *tb_ = tree(gb, "binomial");
	topo_error err;
	topo_plan *p;
	int rc;

	label = "tree over 3000 on one node";
	p = plan(t, "tree", TOPO_INT32, TOPO_SUM, 8, 0, 0, &rc, &err);
	CHECK(rc == 0 && p != NULL, "%s: %s", label, err.text);
	if (p != NULL) {
		CHECK(p->succ_off[p->nmsg] <= 4 * (int64_t)p->n,
		      "%s: %lld dependencies", label,
		      (long long)p->succ_off[p->nmsg]);
		CHECK_INT(p->ntransport, 2 * 2999);
		CHECK(run(p, 2, -1, ""), "%s", label);
	}
	topo_plan_free(p);
	for (size_t a = 3; a < NALL; a++) {
		label = all_algos[a];
		p = plan(t, all_algos[a], TOPO_INT32, TOPO_SUM, 4 * 1000, 0, 0,
			 &rc, &err);
		CHECK(rc == 0 && p != NULL, "%s over 3000: %s", label,
		      err.text);
		if (p != NULL) {
			CHECK_INT(p->ntransport, want_transport(p));
			CHECK(run(p, 2, -1, ""), "%s over 3000", label);
		}
		topo_plan_free(p);
	}
	p = plan(tb_, "ring", TOPO_INT32, TOPO_SUM, 4 * 40000, 0, 0, &rc, &err);
	CHECK(rc == TOPO_ELIMIT && p == NULL, "ring over 40000: %d", rc);
	CHECK_STR(err.text, "allreduce ring over 40000 members needs "
			    "3199920000 messages (2(n - 1) per block of "
			    "40000); at most 1073741824 are planned: use "
			    "allreduce \"rabenseifner\"");
	topo_tree_free(t);
	topo_tree_free(tb_);
	topo_group_free(g);
	topo_group_free(gb);
	topo_machine_free(m);
	topo_machine_free(mb);
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
	const int32_t tu[4] = {3, 1, 4, 2}, pu[4] = {-1, 0, 0, 1};
	topo_machine *u;

	check_args(argc, argv);
	check_seed("test_allreduce", 20250311);
	make_combos();
	CHECK_RUN(sweep, test_sweep());
	u = machine(4, tu, 1, pu);
	CHECK_RUN(nomem, test_nomem(u));
	CHECK_RUN(refusals, test_refusals(u));
	topo_machine_free(u);
	CHECK_RUN(big, test_big());
	return check_done("test_allreduce");
}
