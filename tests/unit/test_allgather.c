/*
 * test_allgather.c - allgather "tree", "ring", "recursive-doubling" and
 * "bruck" (libtopo/coll/allgather/).
 *
 * Every algorithm over groups of 1 to 16 members (powers of two and not),
 * uneven machines, strided and reversed groups, every tree shape for
 * "tree", blocks of 1, 3 and 1000 bytes (and one large): each plan is
 * checked for its structure (exact transport message counts, local steps
 * and only they without a receipt slot, slots expecting exactly the
 * transport messages, no race: two accesses to the same bytes, one a
 * write, are ordered by the DAG) and run by topo_plan_run with 2 and 4
 * threads, 2 iterations, which must verify.  Then: corrupted plans (a
 * message's length 0, its destination offset moved) fail and name the
 * member; every allocation failure is TOPO_ENOMEM; a root is refused;
 * predict-only plans build the same messages and predict.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include "check.h"

static const char *label; /* what is being checked, for messages */

/* ---------------------------------------------------------------------- */
/* Machines, groups, trees */

static topo_machine *machine(int32_t nodes, const int32_t *tasks, int32_t eps,
			     const int32_t *parent)
{
	topo_machine *m = NULL;
	topo_error err;

	topo_error_clear(&err);
	if (topo__machine_build(&m, "test", nodes, tasks, eps, "tree", parent,
				&err) != 0) {
		fprintf(stderr, "machine_build: %s\n", err.text);
		exit(2);
	}
	return m;
}

static topo_group *group(const topo_machine *m, const char *spec)
{
	topo_group *g = NULL;
	topo_error err;

	topo_error_clear(&err);
	if (topo_group_new(&g, m, spec, spec, &err) != 0) {
		fprintf(stderr, "group \"%s\": %s\n", spec, err.text);
		exit(2);
	}
	return g;
}

static topo_tree *tree(const topo_group *g, const char *shape)
{
	topo_tree *t = NULL;
	topo_error err;

	topo_error_clear(&err);
	if (topo_tree_new(&t, g, shape, &err) != 0) {
		fprintf(stderr, "tree %s: %s\n", shape, err.text);
		exit(2);
	}
	return t;
}

/* ---------------------------------------------------------------------- */
/* Races: conflicting accesses must be ordered by the DAG */

/* Ancestors of every message as bitsets, in a topological order; NULL
 * when the plan is too big to check. */
static uint64_t *ancestors(const struct topo_plan *p, size_t *words)
{
	int64_t n = p->nmsg, head = 0, tail = 0;
	size_t w = (size_t)(n + 63) / 64;
	uint64_t *anc;
	int64_t *wait, *q;

	*words = w;
	if (n > 6000)
		return NULL;
	anc = calloc((size_t)n * w + 1, sizeof(uint64_t));
	wait = calloc((size_t)n + 1, sizeof(int64_t));
	q = calloc((size_t)n + 1, sizeof(int64_t));
	for (int64_t i = 0; i < n; i++)
		if ((wait[i] = p->msg[i].nwait) == 0)
			q[tail++] = i;
	while (head < tail) {
		int64_t m = q[head++];

		for (int64_t k = p->succ_off[m]; k < p->succ_off[m + 1]; k++) {
			int64_t s = p->succ[k];
			uint64_t *as = anc + (size_t)s * w,
				 *am = anc + (size_t)m * w;

			for (size_t j = 0; j < w; j++)
				as[j] |= am[j];
			as[m / 64] |= 1ULL << (m % 64);
			if (--wait[s] == 0)
				q[tail++] = s;
		}
	}
	free(wait);
	free(q);
	if (tail != n) { /* a cycle */
		free(anc);
		return NULL;
	}
	return anc;
}

struct access {
	int64_t msg;
	int32_t member;
	int buf;
	int64_t off, len;
	int write, reduce;
};

static int cmp_access(const void *a, const void *b)
{
	const struct access *x = a, *y = b;

	if (x->member != y->member)
		return x->member < y->member ? -1 : 1;
	if (x->buf != y->buf)
		return x->buf < y->buf ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

/* The number of unordered conflicting pairs (and the first); -1 when the
 * plan is too big to check. */
static int64_t races(const struct topo_plan *p, int64_t *m1, int64_t *m2)
{
	size_t w;
	uint64_t *anc = ancestors(p, &w);
	struct access *acc;
	int64_t na = 0, bad = 0;

	*m1 = *m2 = -1;
	if (anc == NULL)
		return -1;
	acc = calloc(2 * (size_t)p->nmsg + 1, sizeof(*acc));
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if (m->len == 0)
			continue;
		acc[na++] =
		    (struct access){i, m->src, m->sbuf, m->soff, m->len, 0, 0};
		acc[na++] = (struct access){i,
					    m->dst,
					    m->dbuf,
					    m->doff,
					    m->len,
					    1,
					    m->kind == TOPO__REDUCE};
	}
	qsort(acc, (size_t)na, sizeof(*acc), cmp_access);
	for (int64_t i = 0; i < na; i++)
		for (int64_t j = i + 1; j < na; j++) {
			const struct access *a = &acc[i], *b = &acc[j];
			int64_t x = a->msg, y = b->msg;

			if (b->member != a->member || b->buf != a->buf ||
			    b->off >= a->off + a->len)
				break;
			if (x == y || (!a->write && !b->write) ||
			    (a->reduce && b->reduce))
				continue;
			if ((anc[(size_t)y * w + (size_t)x / 64] >> (x % 64)) &
				1 ||
			    (anc[(size_t)x * w + (size_t)y / 64] >> (y % 64)) &
				1)
				continue;
			if (bad++ == 0) {
				*m1 = x;
				*m2 = y;
			}
		}
	free(acc);
	free(anc);
	return bad;
}

/* ---------------------------------------------------------------------- */
/* Plans and runs */

static topo_plan *plan(const topo_tree *t, const char *algo, size_t bytes,
		       int predict_only, int *rc, topo_error *err)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;

	topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_ALLGATHER);
	pp.algorithm = algo;
	pp.bytes = bytes;
	pp.predict_only = predict_only;
	topo_error_clear(err);
	*rc = topo_plan_new(&p, t, &pp, err);
	return p;
}

/* Runs p; returns whether it verified.  want_ep >= 0: it must not, and
 * some error must name that endpoint. */
static int run(const topo_plan *p, int threads, int32_t want_ep)
{
	struct topo_run_params rp;
	topo_report *r = NULL;
	topo_error err;
	int rc, ok, named = 0;

	topo_run_params_init(&rp, sizeof(rp));
	rp.threads = threads;
	rp.iterations = 2;
	topo_error_clear(&err);
	rc = topo_plan_run(p, &rp, &r, &err);
	CHECK(rc == 0 && r != NULL, "%s: topo_plan_run: %d: %s", label, rc,
	      err.text);
	if (r == NULL)
		return 0;
	ok = topo_report_verified(r);
	for (size_t i = 0; i < topo_report_error_count(r); i++) {
		const char *kind, *detail;
		int32_t ep = topo_report_error(r, i, &kind, &detail);

		if (ep == want_ep)
			named = 1;
		if (want_ep < 0 && i < 3)
			fprintf(stderr, "%s: endpoint %d: %s: %s\n", label,
				(int)ep, kind, detail);
	}
	if (want_ep >= 0)
		CHECK(!ok && named,
		      "%s: corrupted plan: verified %d, endpoint %d named %d",
		      label, ok, (int)want_ep, named);
	topo_report_free(r);
	return ok;
}

static int32_t ilog2_ceil(int32_t n)
{
	int32_t k = 0;

	while (((int64_t)1 << k) < n)
		k++;
	return k;
}

/* Transport messages the algorithm fixes for n members. */
static int64_t want_transport(const char *algo, int32_t n)
{
	int32_t P = 1, K = 0;

	if (strcmp(algo, "ring") == 0)
		return (int64_t)n * (n - 1);
	if (strcmp(algo, "bruck") == 0)
		return (int64_t)n * ilog2_ceil(n);
	if (strcmp(algo, "tree") == 0)
		return 2 * (int64_t)(n - 1);
	while (P <= n / 2) {
		P *= 2;
		K++;
	}
	return (int64_t)P * K + 2 * (int64_t)(n - P);
}

/* The structure: counts, slots, races. */
static void check_structure(const struct topo_plan *p, const char *algo)
{
	int64_t local = 0, noslot = 0, expect = 0, r1, r2, nr;

	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		local += m->src == m->dst;
		noslot += (m->src == m->dst) != (m->slot < 0);
	}
	for (int64_t s = 0; s < p->nslots; s++)
		expect += p->slot_expect[s];
	CHECK_INT(p->ntransport, p->nmsg - local);
	CHECK(p->ntransport == want_transport(algo, p->n),
	      "%s: %lld transport messages, want %lld", label,
	      (long long)p->ntransport, (long long)want_transport(algo, p->n));
	CHECK(noslot == 0,
	      "%s: %lld local steps with a slot or transport "
	      "messages without",
	      label, (long long)noslot);
	CHECK(expect == p->ntransport, "%s: slots expect %lld, %lld sent",
	      label, (long long)expect, (long long)p->ntransport);
	nr = races(p, &r1, &r2);
	CHECK(nr <= 0, "%s: %lld races, first between messages %lld and %lld",
	      label, (long long)nr, (long long)r1, (long long)r2);
}

/* The last transport message writing a RECV, or else the last one. */
static int64_t victim(const struct topo_plan *p)
{
	int64_t any = -1;

	for (int64_t i = p->nmsg - 1; i >= 0; i--) {
		if (p->msg[i].src == p->msg[i].dst)
			continue;
		if (p->msg[i].dbuf == TOPO__RECV)
			return i;
		if (any < 0)
			any = i;
	}
	return any;
}

/* A corrupted message must fail the run at its destination. */
static void check_corrupt(topo_plan *p)
{
	int64_t i = victim(p), size;
	struct topo__msg save;
	int32_t ep;

	if (i < 0)
		return;
	save = p->msg[i];
	ep = p->t->g->members[save.dst];
	p->msg[i].len = 0;
	run(p, 2, ep);
	p->msg[i] = save;
	size = p->bufsize[save.dbuf][save.dst];
	if (save.doff + save.len + (int64_t)p->params.bytes <= size)
		p->msg[i].doff += (int64_t)p->params.bytes;
	else if (save.doff >= (int64_t)p->params.bytes)
		p->msg[i].doff -= (int64_t)p->params.bytes;
	if (p->msg[i].doff != save.doff)
		run(p, 4, ep);
	p->msg[i] = save;
	CHECK(run(p, 2, -1), "%s: restored plan fails", label);
}

static void check_one(const topo_tree *t, const char *algo, size_t bytes,
		      int corrupt)
{
	topo_plan *p, *q;
	topo_prediction *pr = NULL;
	topo_error err;
	int rc;

	p = plan(t, algo, bytes, 0, &rc, &err);
	CHECK(rc == 0 && p != NULL, "%s: plan: %s", label, err.text);
	if (p == NULL)
		return;
	check_structure(p, algo);
	CHECK(run(p, 2, -1), "%s: not verified (2 threads)", label);
	CHECK(run(p, 4, -1), "%s: not verified (4 threads)", label);
	if (corrupt && p->n > 1)
		check_corrupt(p);
	/* The lean plan: the same messages, and a prediction. */
	q = plan(t, algo, bytes, 1, &rc, &err);
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

static const char *const algos[] = {"tree", "ring", "recursive-doubling",
				    "bruck"};
#define NALGOS (sizeof(algos) / sizeof(algos[0]))
static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:3"};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

/* Every algorithm over g (every shape for "tree"), for each block size. */
static void check_group(const topo_group *g, const char *gname)
{
	static const size_t sizes[] = {1, 3, 1000};
	char buf[200];

	for (size_t k = 0; k < NSHAPES; k++) {
		topo_tree *t = tree(g, shapes[k]);

		for (size_t a = 0; a < NALGOS; a++) {
			/* The tree's shape matters to "tree" only. */
			if (a > 0 && k != (size_t)g->size % NSHAPES)
				continue;
			for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]);
			     s++) {
				snprintf(buf, sizeof(buf),
					 "%s, %s, %s, %zu bytes", gname,
					 shapes[k], algos[a], sizes[s]);
				label = buf;
				check_one(t, algos[a], sizes[s], s == 1);
			}
		}
		topo_tree_free(t);
	}
}

/* ---------------------------------------------------------------------- */
/* Failure paths */

static void test_nomem(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *t = tree(g, "hierarchical");

	for (size_t a = 0; a < NALGOS; a++) {
		int rc = -1, other = 0;
		long k;

		for (k = 0; k < 100000 && rc != 0; k++) {
			topo_error err;
			topo_plan *p;

			topo__alloc_fail_after(k);
			p = plan(t, algos[a], 8, 0, &rc, &err);
			if (rc != 0 &&
			    (rc != TOPO_ENOMEM || err.code != rc || p != NULL))
				other++;
			topo_plan_free(p);
		}
		topo__alloc_fail_after(-1);
		CHECK(rc == 0 && other == 0,
		      "allgather %s: %d failures other than TOPO_ENOMEM, last "
		      "%d",
		      algos[a], other, rc);
		CHECK(k > 3, "allgather %s: only %ld allocations", algos[a], k);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

static void test_refusals(const topo_machine *m)
{
	topo_group *g = group(m, "all");
	topo_tree *t = tree(g, "binomial");

	for (size_t a = 0; a < NALGOS; a++) {
		struct topo_plan_params pp;
		topo_plan *p = NULL;
		topo_error err;

		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_ALLGATHER);
		pp.algorithm = algos[a];
		pp.root = g->members[1];
		topo_error_clear(&err);
		CHECK_INT(topo_plan_new(&p, t, &pp, &err), TOPO_EARG);
		CHECK(p == NULL && strstr(err.text, "no root") != NULL,
		      "allgather %s with a root: \"%s\"", algos[a], err.text);
		topo_plan_free(p);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

/* A large block over the tree's packed gather and every algorithm. */
static void test_large(const topo_machine *m)
{
	topo_group *g = group(m, "ep 0::2");
	topo_tree *t = tree(g, "hierarchical");

	for (size_t a = 0; a < NALGOS; a++) {
		char buf[100];

		snprintf(buf, sizeof(buf), "large, %s", algos[a]);
		label = buf;
		check_one(t, algos[a], 40000, 0);
	}
	topo_tree_free(t);
	topo_group_free(g);
}

/* ---------------------------------------------------------------------- */

int main(void)
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

	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		char spec[40];
		topo_group *g;

		snprintf(spec, sizeof(spec), "ep 0:%d", (int)sizes[i] - 1);
		g = group(m16, spec);
		check_group(g, spec);
		topo_group_free(g);
	}
	for (int i = 0; i < 2; i++)
		for (size_t j = 0; j < sizeof(uneven) / sizeof(uneven[0]);
		     j++) {
			char name[80];
			topo_group *g;

			if (topo_spec_check(ms[i], uneven[j], NULL) != 0)
				continue;
			snprintf(name, sizeof(name), "machine %d \"%s\"", i,
				 uneven[j]);
			g = group(ms[i], uneven[j]);
			check_group(g, name);
			topo_group_free(g);
		}
	test_large(ms[1]);
	test_nomem(ms[1]);
	test_refusals(ms[0]);

	topo_machine_free(m16);
	topo_machine_free(ms[0]);
	topo_machine_free(ms[1]);
	return check_done("test_allgather");
}
