/*
 * test_exec_mpi.c - the MPI transport (libtopo/mpi/exec_mpi.c), run under
 * mpirun -np N (tests/mpi/run.sh: N = 1 to 8, Open MPI and MPICH).
 *
 * The machine has one task per process, tasks spread unevenly over nodes
 * and two endpoints per task, so every process hosts two members and
 * plans mix messages within a process and between processes.
 *
 * 1. Every operation x algorithm x tree (physical, binomial) x size (8 B,
 *    1000 B, 300 KiB: segmented trees), rooted operations from the tree's
 *    root and from the last member, the reductions over several types and
 *    operators: every run verifies on every process, and the report's
 *    traffic is the plan's.
 * 2. Faults are found, and found as the in-process executor finds them:
 *    a message's source moved one block (wrong data), a message's receipt
 *    not counted (undelivered): rank 0's errors equal, endpoint for
 *    endpoint and word for word, those of topo_plan_run on the same
 *    mutated plan.
 * 3. A barrier whose member's leave no longer waits for its last receipt:
 *    exactly that member "left early", by the causal check.
 * 3b. A group made from a list of endpoints, as a communicator's would be,
 *    that leaves process 0 without members: every operation tried
 *    verifies.
 * 4. The timeout: a run of 2^31 - 1 iterations stops, unverified, with a
 *    "timeout" error, on every process.
 * 5. Refusals, the same on every process: a host out of range, a
 *    predict-only plan; and a failure on one process only (its memory,
 *    by the allocation hook) becomes every process's TOPO_ENOMEM naming
 *    it.
 * 6. An abandoned run leaves nothing in MPI (topo__mx_quiesce): process 0
 *    gives up before its first event, the others time out waiting for
 *    it, every process quiesces; then no message of the run is left on
 *    any process (MPI_Iprobe), what each process sent another is what
 *    that one took, and the next run completes.  Before quiesce existed,
 *    MPICH's UCX device printed a warning for each message left at
 *    MPI_Finalize, on standard output, after collrun-mpi's report.
 *
 * 7. First combines: over a group of one member per process, a reduce's
 *    accumulators have only remote children, so each copy into an
 *    accumulator waits for a child's bytes and runs with that combine as
 *    one pass (engine.c, topo__reduce3): every such copy is fused once
 *    (at np 2 up, some are), and the root's result is the sum, for an
 *    integer and a floating type, segmented and not.
 *
 * Rank 0 prints "test_exec_mpi: N passed, N failed" over all processes.
 * With CHECK_QUICK set, part 1 runs a quarter of its combinations (which
 * quarter depends on the number of processes); the rest runs whole.
 */
#define TOPO_INTERNAL
#include "alloc_hook.h"
#include "check.h"
#include "engine.h"
#include "exec_internal.h"
#include "topo_mpi.h"

#include <limits.h>

static int rank, size;
static char label[256];

static topo_machine *machine(void)
{
	char json[1024], *p = json;
	topo_machine *m = NULL;
	topo_error err;
	int left = size, k = 1, nodes = 0;

	/* nodes of 1, 2, 3, ... tasks, the last one what remains */
	p += sprintf(p, "{\"name\": \"mpi%d\", \"tasks_per_node\": [", size);
	while (left > 0) {
		int t = k < left ? k : left;

		p += sprintf(p, "%s%d", nodes ? ", " : "", t);
		left -= t;
		k++;
		nodes++;
	}
	sprintf(p,
		"], \"nodes\": %d, \"endpoints_per_task\": 2, \"network\": "
		"{\"type\": \"kary\", \"fanout\": 2, \"physical_root\": 0}}",
		nodes);
	topo_error_clear(&err);
	if (topo_machine_load_string(&m, json, strlen(json), "mpi.json",
				     &err) != 0) {
		fprintf(stderr, "machine: %s\n%s\n", err.text, json);
		exit(2);
	}
	return m;
}

static int32_t *hosts(const topo_group *g)
{
	int32_t n = topo_group_size(g), *h = malloc((size_t)n * sizeof(*h));

	for (int32_t i = 0; i < n; i++)
		h[i] = topo_group_members(g)[i] / 2;
	return h;
}

static topo_plan *plan(const topo_tree *t, enum topo_op op, const char *alg,
		       int32_t root, size_t bytes, int type,
		       enum topo_redop redop)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;

	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = alg;
	pp.root = root;
	if (op != TOPO_OP_BARRIER)
		pp.bytes = bytes;
	if (type >= 0)
		pp.type = (enum topo_type)type;
	if (topo_op_reduces(op))
		pp.redop = redop;
	topo_error_clear(&err);
	if (topo_plan_new(&p, t, &pp, &err) != 0) {
		CHECK(0, "%s: planning: %s", label, err.text);
		return NULL;
	}
	return p;
}

static topo_report *run_mpi(const topo_plan *p, const int32_t *h,
			    int iterations, double timeout, int *rc)
{
	struct topo_run_params rp;
	topo_report *r = NULL;
	topo_error err;

	topo_run_params_init(&rp, sizeof(rp));
	rp.iterations = iterations;
	rp.timeout = timeout;
	topo_error_clear(&err);
	*rc = topo__run_mpi(p, &rp, h, MPI_COMM_WORLD, &r, &err);
	CHECK(*rc == 0, "%s: topo__run_mpi: %s", label, err.text);
	return r;
}

static const char *first_error(const topo_report *r)
{
	const char *d = NULL;

	topo_report_error(r, 0, NULL, &d);
	return d != NULL ? d : "none";
}

/* 1: every combination verifies. */
static const struct {
	enum topo_op op;
	const char *alg;
} algs[] = {
    {TOPO_OP_BCAST, "flood"},
    {TOPO_OP_SCATTER, "tree"},
    {TOPO_OP_SCATTER, "or-combine"},
    {TOPO_OP_GATHER, "chunked"},
    {TOPO_OP_GATHER, "tree"},
    {TOPO_OP_REDUCE, "hierarchical"},
    {TOPO_OP_REDUCE, "tree"},
    {TOPO_OP_REDUCE, "direct"},
    {TOPO_OP_ALLREDUCE, "tree"},
    {TOPO_OP_ALLREDUCE, "hierarchical"},
    {TOPO_OP_ALLREDUCE, "ring"},
    {TOPO_OP_ALLREDUCE, "recursive-doubling"},
    {TOPO_OP_ALLREDUCE, "rabenseifner"},
    {TOPO_OP_ALLGATHER, "ring"},
    {TOPO_OP_ALLGATHER, "tree"},
    {TOPO_OP_ALLGATHER, "recursive-doubling"},
    {TOPO_OP_ALLGATHER, "bruck"},
    {TOPO_OP_REDUCE_SCATTER, "ring"},
    {TOPO_OP_REDUCE_SCATTER, "tree"},
    {TOPO_OP_REDUCE_SCATTER, "recursive-halving"},
    {TOPO_OP_REDUCE_SCATTER, "direct"},
    {TOPO_OP_ALLTOALL, "pairwise"},
    {TOPO_OP_ALLTOALL, "bruck"},
    {TOPO_OP_ALLTOALL, "direct"},
    {TOPO_OP_BARRIER, "dissemination"},
    {TOPO_OP_BARRIER, "tree"},
};
#define NALGS (sizeof(algs) / sizeof(algs[0]))

static const struct {
	enum topo_type type;
	enum topo_redop op;
} reds[] = {
    {TOPO_INT32, TOPO_SUM},  {TOPO_DOUBLE, TOPO_SUM}, {TOPO_UINT8, TOPO_BXOR},
    {TOPO_INT64, TOPO_MIN},  {TOPO_FLOAT, TOPO_MAX},  {TOPO_INT16, TOPO_PROD},
    {TOPO_UINT32, TOPO_BOR}, {TOPO_INT8, TOPO_BAND},
};
#define NREDS (sizeof(reds) / sizeof(reds[0]))

static void test_matrix(const topo_group *g, const int32_t *h)
{
	static const char *const shapes[] = {"physical", "binomial",
					     "hierarchical"};
	static const size_t sizes[] = {8, 1000, 300 * 1024};
	int32_t n = topo_group_size(g);
	int turn = 0, combo = 0;

	for (size_t s = 0; s < 3; s++) {
		topo_tree *t = NULL;
		topo_error err;

		topo_error_clear(&err);
		if (topo_tree_new(&t, g, shapes[s], &err) != 0) {
			CHECK(0, "tree %s: %s", shapes[s], err.text);
			continue;
		}
		for (size_t a = 0; a < NALGS; a++)
			for (size_t z = 0; z < 3; z++)
				for (int rt = 0; rt < 2; rt++) {
					enum topo_op op = algs[a].op;
					int32_t root =
					    rt == 0
						? -1
						: topo_group_members(g)[n - 1];
					size_t bytes = sizes[z];
					int type = -1;
					enum topo_redop redop = TOPO_SUM;
					topo_plan *p;
					topo_report *r;
					int64_t m[2], b[2];
					int rc;

					if (rt == 1 && !topo_op_has_root(op))
						continue;
					/* seed 001's algorithms need its tree;
					 * the others run over all three */
					if ((strcmp(algs[a].alg,
						    "hierarchical") == 0) !=
					    (s == 2))
						continue;
					if (op == TOPO_OP_BARRIER && z > 0)
						continue;
					/* a 300 KiB block per member per
					 * member: once per tree is enough */
					if (z == 2 &&
					    (op == TOPO_OP_ALLTOALL ||
					     op == TOPO_OP_ALLGATHER ||
					     op == TOPO_OP_GATHER ||
					     op == TOPO_OP_SCATTER ||
					     op == TOPO_OP_REDUCE_SCATTER))
						bytes = 40 * 1024;
					/* CHECK_QUICK: a quarter, a different
					 * one at each size of job */
					if (check_quick() &&
					    (combo++ + size) % 4 != 0)
						continue;
					if (topo_op_reduces(op)) {
						type = reds[turn % NREDS].type;
						redop = reds[turn % NREDS].op;
						turn++;
					}
					snprintf(label, sizeof(label),
						 "np %d %s %s over %s, %zu B, "
						 "root %d, type %d op %d",
						 size, topo_op_name(op),
						 algs[a].alg, shapes[s], bytes,
						 (int)root, (int)type,
						 (int)redop);
					p = plan(t, op, algs[a].alg, root,
						 bytes, type, redop);
					if (p == NULL)
						continue;
					r = run_mpi(p, h, 2, 60, &rc);
					CHECK(topo_report_verified(r),
					      "%s: not verified (%lld errors, "
					      "first: %s)",
					      label,
					      (long long)
						  topo_report_error_total(r),
					      first_error(r));
					CHECK_INT(topo_report_iterations(r), 2);
					topo_report_messages(r, &m[0], &m[1]);
					topo_report_bytes_moved(r, &b[0],
								&b[1]);
					CHECK(m[0] + m[1] == p->ntransport,
					      "%s: %lld messages reported, "
					      "the plan has %lld",
					      label, (long long)(m[0] + m[1]),
					      (long long)p->ntransport);
					topo_report_free(r);
					topo_plan_free(p);
				}
		topo_tree_free(t);
	}
}

/* 2: faults, as the in-process executor reports them. */
static void same_errors(const topo_plan *p, const int32_t *h)
{
	topo_report *mine, *ref = NULL;
	int rc;

	mine = run_mpi(p, h, 1, 60, &rc);
	CHECK(!topo_report_verified(mine) && topo_report_error_total(mine) > 0,
	      "%s: the fault went unseen", label);
	if (rank == 0) {
		struct topo_run_params rp;
		topo_error err;

		topo_run_params_init(&rp, sizeof(rp));
		rp.threads = 2;
		topo_error_clear(&err);
		CHECK(topo_plan_run(p, &rp, &ref, &err) == 0, "%s: %s", label,
		      err.text);
		CHECK(!topo_report_verified(ref), "%s: in-process verified",
		      label);
		CHECK_INT(topo_report_error_total(mine),
			  topo_report_error_total(ref));
		CHECK_INT(topo_report_error_count(mine),
			  topo_report_error_count(ref));
		/* the errors of each process come in rank order, members
		 * ascending within: the in-process order, by members */
		for (size_t i = 0; i < topo_report_error_count(ref) &&
				   i < topo_report_error_count(mine);
		     i++) {
			const char *k1, *d1, *k2, *d2;
			int32_t e1 = topo_report_error(mine, i, &k1, &d1);
			int32_t e2 = topo_report_error(ref, i, &k2, &d2);

			CHECK(e1 == e2 && strcmp(k1, k2) == 0 &&
				  strcmp(d1, d2) == 0,
			      "%s: error %zu: endpoint %d %s: %s; in-process "
			      "endpoint %d %s: %s",
			      label, i, e1, k1, d1, e2, k2, d2);
		}
	}
	topo_report_free(mine);
	topo_report_free(ref);
}

/* The first message between two processes with len > 0 whose source
 * offset is at least shift: moved back by shift bytes. */
static int64_t move_source(struct topo_plan *p, const int32_t *h, int64_t shift)
{
	for (int64_t i = 0; i < p->nmsg; i++) {
		struct topo__msg *m = &p->msg[i];

		if (h[m->src] != h[m->dst] && m->len > 0 && m->soff >= shift) {
			m->soff -= shift;
			return i;
		}
	}
	return -1;
}

static void test_faults(const topo_group *g, const int32_t *h)
{
	topo_tree *t = NULL;
	topo_error err;
	struct topo_plan *p;

	if (size < 2)
		return;
	topo_error_clear(&err);
	topo_tree_new(&t, g, "physical", &err);
	snprintf(label, sizeof(label), "np %d scatter, a block moved", size);
	p = plan(t, TOPO_OP_SCATTER, "tree", -1, 16, TOPO_INT32, TOPO_SUM);
	if (p != NULL) {
		CHECK(move_source(p, h, 16) >= 0, "%s: no such message", label);
		same_errors(p, h);
		topo_plan_free(p);
	}
	snprintf(label, sizeof(label), "np %d allreduce ring, a chunk moved",
		 size);
	p = plan(t, TOPO_OP_ALLREDUCE, "ring", -1, 4000, TOPO_INT32, TOPO_SUM);
	if (p != NULL) {
		CHECK(move_source(p, h, 4) >= 0, "%s: no such message", label);
		same_errors(p, h);
		topo_plan_free(p);
	}
	snprintf(label, sizeof(label), "np %d bcast, a receipt not counted",
		 size);
	p = plan(t, TOPO_OP_BCAST, NULL, -1, 100, TOPO_INT8, TOPO_SUM);
	if (p != NULL) {
		int64_t cut = -1;

		for (int64_t i = 0; i < p->nmsg && cut < 0; i++)
			if (h[p->msg[i].src] != h[p->msg[i].dst] &&
			    p->msg[i].slot >= 0) {
				p->msg[i].slot = -1;
				cut = i;
			}
		CHECK(cut >= 0, "%s: no such message", label);
		same_errors(p, h);
		topo_plan_free(p);
	}
	topo_tree_free(t);
}

/* 3: a leave that does not wait for the last receipt before it. */
static void test_barrier(const topo_group *g, const int32_t *h)
{
	static const char *const algs2[] = {"dissemination", "tree"};
	int32_t n = topo_group_size(g);
	topo_tree *t = NULL;
	topo_error err;

	if (n < 3)
		return;
	topo_error_clear(&err);
	topo_tree_new(&t, g, "physical", &err);
	for (int a = 0; a < 2; a++) {
		struct topo_plan *p;
		int64_t leave = -1, before = -1;
		int32_t who = n - 1;
		topo_report *r;
		int rc;

		snprintf(label, sizeof(label),
			 "np %d barrier %s, a wait of member %d's leave cut",
			 size, algs2[a], (int)who);
		p = plan(t, TOPO_OP_BARRIER, algs2[a], -1, 0, -1, TOPO_SUM);
		if (p == NULL)
			continue;
		for (int64_t i = 0; i < p->nmsg; i++)
			if (p->msg[i].mark == TOPO__MARK_LEAVE &&
			    p->msg[i].src == who)
				leave = i;
		/* the last message from another member it waits for */
		for (int64_t b = 0; b < p->nmsg; b++)
			for (int64_t k = p->succ_off[b]; k < p->succ_off[b + 1];
			     k++)
				if (p->succ[k] == leave && p->msg[b].src != who)
					before = b;
		CHECK(leave >= 0 && before >= 0, "%s: no such wait", label);
		if (leave >= 0 && before >= 0) {
			int64_t k = p->succ_off[before],
				end = p->succ_off[p->nmsg];

			while (p->succ[k] != leave)
				k++;
			memmove(&p->succ[k], &p->succ[k + 1],
				(size_t)(end - k - 1) * sizeof(p->succ[0]));
			for (int64_t m = before + 1; m <= p->nmsg; m++)
				p->succ_off[m]--;
			p->msg[leave].nwait--;
		}
		r = run_mpi(p, h, 1, 60, &rc);
		CHECK(!topo_report_verified(r), "%s: verified", label);
		CHECK_INT(topo_report_error_total(r), 1);
		if (rank == 0 && topo_report_error_count(r) == 1) {
			const char *kind, *detail;
			int32_t ep = topo_report_error(r, 0, &kind, &detail);

			CHECK(ep == topo_group_members(g)[who] &&
				  strcmp(kind, "left early") == 0,
			      "%s: endpoint %d %s: %s", label, ep, kind,
			      detail);
		}
		topo_report_free(r);
		topo_plan_free(p);
	}
	topo_tree_free(t);
}

/* A group made from a list (topo_group_new_list), as a communicator's
 * members would be: the first endpoint of every process but rank 0, in
 * reverse order, so that process 0 holds no member and still takes part
 * (and gathers the verdict). */
/* A group of the n endpoints listed (as a communicator's would be) and
 * its binomial tree; NULL (a failed check, nothing left) when either
 * cannot be made. */
static topo_tree *listed_tree(const topo_machine *m, const char *name,
			      const int32_t *list, int32_t n, topo_group **g)
{
	topo_tree *t = NULL;
	topo_error err;

	topo_error_clear(&err);
	*g = NULL;
	CHECK(topo_group_new_list(g, m, name, list, n, &err) == 0 &&
		  topo_tree_new(&t, *g, "binomial", &err) == 0,
	      "group %s: %s", name, err.text);
	if (t == NULL) {
		topo_group_free(*g);
		*g = NULL;
	}
	return t;
}

static void test_list_group(const topo_machine *m)
{
	static const struct {
		enum topo_op op;
		const char *alg;
	} some[] = {{TOPO_OP_BCAST, NULL},
		    {TOPO_OP_GATHER, "tree"},
		    {TOPO_OP_ALLREDUCE, "ring"},
		    {TOPO_OP_ALLTOALL, "pairwise"},
		    {TOPO_OP_BARRIER, "dissemination"}};
	int32_t list[64], n = 0;
	topo_group *g = NULL;
	topo_tree *t;
	int32_t *h;

	if (size < 2)
		return;
	for (int r = size - 1; r >= 1; r--)
		list[n++] = 2 * r;
	if ((t = listed_tree(m, "comm", list, n, &g)) == NULL)
		return;
	h = hosts(g);
	for (size_t k = 0; k < sizeof(some) / sizeof(some[0]); k++) {
		topo_plan *p;
		topo_report *r;
		int rc;

		snprintf(label, sizeof(label), "np %d %s over a listed group",
			 size, topo_op_name(some[k].op));
		p = plan(t, some[k].op, some[k].alg, -1, 1000, -1, TOPO_SUM);
		if (p == NULL)
			continue;
		r = run_mpi(p, h, 2, 60, &rc);
		CHECK(topo_report_verified(r), "%s: not verified: %s", label,
		      first_error(r));
		topo_report_free(r);
		topo_plan_free(p);
	}
	free(h);
	topo_tree_free(t);
	topo_group_free(g);
}

/* 4 and 5 */
static void test_timeout_and_refusals(const topo_group *g, const int32_t *h)
{
	topo_tree *t = NULL;
	topo_error err;
	topo_plan *p;
	topo_report *r = NULL;
	struct topo_run_params rp;
	int32_t n = topo_group_size(g), *bad;
	int rc;

	topo_error_clear(&err);
	topo_tree_new(&t, g, "physical", &err);
	snprintf(label, sizeof(label), "np %d timeout", size);
	p = plan(t, TOPO_OP_ALLREDUCE, "ring", -1, 4096, TOPO_INT32, TOPO_SUM);
	r = run_mpi(p, h, INT_MAX, 0.3, &rc);
	CHECK(!topo_report_verified(r) && topo_report_iterations(r) < INT_MAX,
	      "%s: ran to the end", label);
	if (rank == 0) {
		const char *kind = NULL, *detail = NULL;

		CHECK_INT(topo_report_error_total(r), 1);
		topo_report_error(r, 0, &kind, &detail);
		CHECK(kind != NULL && strcmp(kind, "timeout") == 0 &&
			  strstr(detail, "within 0.3 s") != NULL,
		      "%s: %s: %s", label, kind ? kind : "-",
		      detail ? detail : "-");
	}
	topo_report_free(r);

	topo_run_params_init(&rp, sizeof(rp));
	bad = malloc((size_t)n * sizeof(*bad));
	memcpy(bad, h, (size_t)n * sizeof(*bad));
	bad[n - 1] = size;
	snprintf(label, sizeof(label), "np %d host out of range", size);
	topo_error_clear(&err);
	r = NULL;
	rc = topo__run_mpi(p, &rp, bad, MPI_COMM_WORLD, &r, &err);
	CHECK(rc == TOPO_EARG && r == NULL &&
		  strstr(err.text, "on host") != NULL,
	      "%s: rc %d: %s", label, rc, err.text);
	free(bad);

	/* one process without memory: everyone says so, naming it */
	if (size >= 2) {
		snprintf(label, sizeof(label), "np %d process 1 out of memory",
			 size);
		topo_error_clear(&err);
		if (rank == 1)
			topo__alloc_fail_from(3);
		rc = topo__run_mpi(p, &rp, h, MPI_COMM_WORLD, &r, &err);
		if (rank == 1)
			topo__alloc_fail_from(-1);
		CHECK(rc == TOPO_ENOMEM && r == NULL &&
			  strncmp(err.text, "process 1: ", 11) == 0,
		      "%s: rc %d: %s", label, rc, err.text);
	}
	topo_plan_free(p);

	snprintf(label, sizeof(label), "np %d predict-only", size);
	{
		struct topo_plan_params pp;
		topo_plan *q = NULL;

		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
		pp.predict_only = 1;
		topo_plan_new(&q, t, &pp, &err);
		topo_error_clear(&err);
		rc = topo__run_mpi(q, &rp, h, MPI_COMM_WORLD, &r, &err);
		CHECK(rc == TOPO_EARG && strstr(err.text, "predict") != NULL,
		      "%s: rc %d: %s", label, rc, err.text);
		topo_plan_free(q);
	}
	topo_tree_free(t);
}

/* 6 */
static void test_quiesce(const topo_group *g, const int32_t *h)
{
	topo_tree *t = NULL;
	topo_error err;
	topo_plan *p;
	struct topo__sched *s = NULL;
	struct topo__mx x;
	MPI_Comm comm;
	int64_t *sent, *got;
	int rc, flag = 0, any = 0, same = 1;

	if (size < 2)
		return;
	snprintf(label, sizeof(label), "np %d quiesce", size);
	topo_error_clear(&err);
	topo_tree_new(&t, g, "physical", &err);
	p = plan(t, TOPO_OP_ALLREDUCE, "ring", -1, 300 * 1024, TOPO_INT32,
		 TOPO_SUM);
	MPI_Comm_dup(MPI_COMM_WORLD, &comm);
	memset(&x, 0, sizeof(x));
	rc = p == NULL ? -1 : topo__sched_new(&s, p, h, size, rank, &err);
	if (rc == 0)
		rc = topo__mx_setup(&x, p, s, h, comm, rank, false, false, 0,
				    false, true, &err);
	CHECK(rc == 0, "%s: setup: %s", label, err.text);
	if (rc != 0)
		MPI_Abort(MPI_COMM_WORLD, 1);
	for (int32_t k = 0; k < x.nlocal; k++)
		for (int b = 0; b < TOPO__NBUF; b++)
			if (topo__bufsize(p, b, x.local[k]) > 0)
				x.bp[k * TOPO__NBUF + b] = calloc(
				    (size_t)topo__bufsize(p, b, x.local[k]), 1);
	topo__mx_reset(&x);
	rc = rank == 0 ? 1 : topo__mx_run(&x, topo__now() + 0.05);
	CHECK(rc == 1, "%s: the run did not time out (%d)", label, rc);
	CHECK(topo__mx_quiesce(&x) == 0, "%s: topo__mx_quiesce failed",
	      label);
	/* nothing left: every message sent was taken */
	/* (a message may need MPI's progress a while to show: look for
	 * a tenth of a second) */
	for (double end = topo__now() + 0.1; !flag && topo__now() < end;)
		MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &flag,
			   MPI_STATUS_IGNORE);
	MPI_Allreduce(&flag, &any, 1, MPI_INT, MPI_MAX, comm);
	CHECK(any == 0, "%s: a message of the run is left", label);
	sent = calloc((size_t)size, sizeof(*sent));
	got = calloc((size_t)size, sizeof(*got));
	MPI_Alltoall(x.sent, 1, MPI_INT64_T, got, 1, MPI_INT64_T, comm);
	for (int q = 0; q < size; q++)
		same &= got[q] == x.got[q];
	CHECK(same, "%s: sent and taken differ", label);
	/* process 0 had messages to drop: the others sent to it */
	sent[0] = rank != 0 ? x.sent[0] : 0;
	MPI_Allreduce(MPI_IN_PLACE, sent, 1, MPI_INT64_T, MPI_SUM, comm);
	CHECK(sent[0] > 0, "%s: nothing was sent to process 0", label);
	/* and the next run goes through */
	topo__mx_reset(&x);
	CHECK_INT(topo__mx_run(&x, topo__now() + 60), 0);
	for (int64_t i = 0; i < (int64_t)x.nlocal * TOPO__NBUF; i++)
		free(x.bp[i]);
	free(sent);
	free(got);
	topo__mx_teardown(&x);
	topo__sched_free(s);
	MPI_Comm_free(&comm);
	topo_plan_free(p);
	topo_tree_free(t);
}

/* 7 */
static void test_fused(const topo_machine *m)
{
	int32_t list[64], n = 0;
	topo_group *g = NULL;
	topo_tree *t;
	topo_error err;
	int32_t *h;

	if (size < 2)
		return;
	for (int r = 0; r < size; r++)
		list[n++] = 2 * r;
	if ((t = listed_tree(m, "one per process", list, n, &g)) == NULL)
		return;
	h = hosts(g);
	for (int k = 0; k < 4; k++) {
		int type = k % 2 ? TOPO_DOUBLE : TOPO_INT32;
		size_t bytes = k < 2 ? 8192 : 600 * 1024, cnt = bytes / 4;
		struct topo__sched *s = NULL;
		struct topo__mx x;
		topo_plan *p;
		int rc;
		int64_t fusable = 0, all[2], mine[2];
		int32_t root = n - 1; /* the member; list[root] its endpoint */
		long bad = -1;

		snprintf(label, sizeof(label), "np %d fused reduce, %s, %zu B",
			 size, type == TOPO_DOUBLE ? "double" : "int32", bytes);
		p = plan(t, TOPO_OP_REDUCE, "tree", list[root], bytes, type,
			 TOPO_SUM);
		if (p == NULL)
			continue;
		memset(&x, 0, sizeof(x));
		rc = topo__sched_new(&s, p, h, size, rank, &err);
		if (rc == 0)
			rc = topo__mx_setup(&x, p, s, h, MPI_COMM_WORLD, rank,
					    false, false, 0, false, false,
					    &err);
		CHECK(rc == 0, "%s: setup: %s", label, err.text);
		if (rc != 0)
			MPI_Abort(MPI_COMM_WORLD, 1);
		for (int32_t j = 0; j < x.nlocal; j++) {
			int32_t mem = x.local[j];

			for (int b = 0; b < TOPO__NBUF; b++) {
				int64_t len = topo__bufsize(p, b, mem);
				unsigned char *a;

				if (len <= 0)
					continue;
				a = calloc((size_t)len, 1);
				x.bp[j * TOPO__NBUF + b] = a;
				/* member mem's input: (mem + 1) * (i % 7 + 1) */
				for (size_t i = 0; b == TOPO__SEND && i < cnt;
				     i++) {
					if (type == TOPO_DOUBLE && i % 2 == 0) {
						double v = (double)(mem + 1) *
							   (double)(i / 2 % 7 + 1);

						memcpy(a + 4 * i, &v, 8);
					} else if (type == TOPO_INT32) {
						int32_t v = (mem + 1) *
							    (int32_t)(i % 7 + 1);

						memcpy(a + 4 * i, &v, 4);
					}
				}
			}
		}
		for (int64_t e = 0; e < s->nev; e++)
			fusable += x.fusable[e];
		topo__mx_reset(&x);
		CHECK_INT(topo__mx_run(&x, topo__now() + 60), 0);
		/* the root's result: the sum of every member's input */
		if (h[root] == rank) {
			const unsigned char *r = topo__mx_buffer(
			    &x, root, TOPO__RECV);
			double tri = (double)n * (n + 1) / 2;

			for (size_t i = 0; i < cnt && bad < 0; i++) {
				if (type == TOPO_DOUBLE && i % 2 == 0) {
					double v;

					memcpy(&v, r + 4 * i, 8);
					if (v != tri * (double)(i / 2 % 7 + 1))
						bad = (long)i;
				} else if (type == TOPO_INT32) {
					int32_t v;

					memcpy(&v, r + 4 * i, 4);
					if (v != (int32_t)tri *
						     (int32_t)(i % 7 + 1))
						bad = (long)i;
				}
			}
			CHECK(bad < 0, "%s: the root's element %ld is wrong",
			      label, bad);
		}
		/* every fusable copy was fused, once; and there were some */
		mine[0] = fusable;
		mine[1] = x.fused;
		MPI_Allreduce(mine, all, 2, MPI_INT64_T, MPI_SUM,
			      MPI_COMM_WORLD);
		CHECK(x.fused == fusable, "%s: %lld of %lld copies fused here",
		      label, (long long)x.fused, (long long)fusable);
		CHECK(all[0] > 0, "%s: no copy could be fused", label);
		for (int64_t i = 0; i < (int64_t)x.nlocal * TOPO__NBUF; i++)
			free(x.bp[i]);
		topo__mx_teardown(&x);
		topo__sched_free(s);
		/* and the whole transport's run of it verifies */
		{
			topo_report *r = run_mpi(p, h, 2, 60, &rc);

			CHECK(topo_report_verified(r), "%s: not verified: %s",
			      label, first_error(r));
			topo_report_free(r);
		}
		topo_plan_free(p);
	}
	free(h);
	topo_tree_free(t);
	topo_group_free(g);
}

int main(int argc, char **argv)
{
	topo_machine *m;
	topo_group *g = NULL;
	topo_error err;
	int32_t *h;
	long failed = 0, passed = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	m = machine();
	topo_error_clear(&err);
	if (topo_group_new(&g, m, "world", "all", &err) != 0) {
		fprintf(stderr, "group: %s\n", err.text);
		return 2;
	}
	h = hosts(g);
	test_matrix(g, h);
	test_faults(g, h);
	test_barrier(g, h);
	test_list_group(m);
	test_timeout_and_refusals(g, h);
	test_quiesce(g, h);
	test_fused(m);
	free(h);
	topo_group_free(g);
	topo_machine_free(m);
	MPI_Reduce(&check_failed, &failed, 1, MPI_LONG, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	MPI_Reduce(&check_passed, &passed, 1, MPI_LONG, MPI_SUM, 0,
		   MPI_COMM_WORLD);
	MPI_Finalize();
	if (rank == 0) {
		printf("test_exec_mpi (np %d): %ld passed, %ld failed\n", size,
		       passed, failed);
		return failed == 0 ? 0 : 1;
	}
	return 0;
}
