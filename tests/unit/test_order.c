/*
 * test_order.c - the combine order of floating-point reductions
 * (libtopo/plan/order.c): every plan of float or double fixes the order
 * of the REDUCEs into the same bytes, and the threaded executor keeps it,
 * so that the same inputs give the same bits whatever the timing.
 *
 * 1. Chains: for every reducing operation and algorithm, over the tree
 *    shapes and groups of two uneven machines, whole and in segments, in
 *    float and double: every two REDUCEs that write overlapping bytes of
 *    one member's buffer are ordered by the plan's dependencies and its
 *    chains together; the chains follow the level order (a message after
 *    everything it waits for); plan and chains have no cycle; the same
 *    plan made twice has the same chains.  Integer plans have none.
 * 2. Bits: a replay of each plan in random topological orders that keep
 *    the chains, over inputs whose sums round (random doubles of
 *    magnitudes from 1e-8 to 1e8), ends with the same bits every time.
 *    The same replays without the chains give other bits for some plan:
 *    the inputs are ones where the order shows.
 * 3. Threads: runs of the threaded executor (2 to 4 threads, random
 *    pauses inside deliveries, several iterations) through a transport
 *    that stamps every REDUCE's delivery: each combine of a chain starts
 *    after the one before it ended, in every iteration, and every byte
 *    verifies.
 */
#define TOPO_INTERNAL
#include "algocheck.h"
#include "all_algos.h"
#include "planfix.h"

#include <math.h>
#include <stdatomic.h>
#include <time.h>

static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:3"};
#define NSHAPES (sizeof(shapes) / sizeof(shapes[0]))

static const struct gspec gspecs[] = {
    {1, "ep 5,22", 2},	  {1, "row 1 cols 0:8:4", 3}, {1, "ep 2:20:3", 7},
    {0, "all", 10},	  {1, "all - node 1", 16},    {1, "all", 26},
};
#define NGSPECS (sizeof(gspecs) / sizeof(gspecs[0]))
static topo_machine *ms[2];
static topo_group *gs[NGSPECS];

static topo_plan *plan(const topo_tree *t, enum topo_op op, const char *algo,
		       size_t bytes, size_t segment, enum topo_type type,
		       enum topo_redop redop)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;

	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = algo;
	pp.bytes = bytes;
	pp.type = type;
	pp.redop = redop;
	pp.segment = segment;
	topo_error_clear(&err);
	if (topo_plan_new(&p, t, &pp, &err) != 0)
		return NULL;
	return p;
}

/* ---------------------------------------------------------------------- */
/* 1. Chains */

/* Ancestors over the dependencies and the chains together (bitsets, as
 * algocheck.h's ancestors over the dependencies alone), or NULL when the
 * plan has more than max messages or the union has a cycle (*cyclic). */
static uint64_t *union_ancestors(const struct topo_plan *p, size_t *words,
				 int64_t max, int *cyclic)
{
	int64_t n = p->nmsg, head = 0, tail = 0;
	size_t w = (size_t)(n + 63) / 64;
	uint64_t *anc;
	int64_t *left, *order;

	*cyclic = 0;
	if (n > max)
		return NULL;
	anc = calloc((size_t)n * w + 1, sizeof(uint64_t));
	left = calloc((size_t)n + 1, sizeof(int64_t));
	order = malloc(((size_t)n + 1) * sizeof(int64_t));
	for (int64_t b = 0; b < n; b++) {
		for (int64_t k = p->succ_off[b]; k < p->succ_off[b + 1]; k++)
			left[p->succ[k]]++;
		if (p->cnext != NULL && p->cnext[b] >= 0)
			left[p->cnext[b]]++;
	}
	for (int64_t i = 0; i < n; i++)
		if (left[i] == 0)
			order[tail++] = i;
	while (head < tail) {
		int64_t b = order[head++];

		for (int64_t k = p->succ_off[b]; k <= p->succ_off[b + 1]; k++) {
			int64_t a;

			if (k < p->succ_off[b + 1])
				a = p->succ[k];
			else if (p->cnext != NULL && p->cnext[b] >= 0)
				a = p->cnext[b];
			else
				break;
			for (size_t i = 0; i < w; i++)
				anc[(size_t)a * w + i] |= anc[(size_t)b * w + i];
			anc[(size_t)a * w + (size_t)b / 64] |= UINT64_C(1)
							       << (b % 64);
			if (--left[a] == 0)
				order[tail++] = a;
		}
	}
	free(left);
	free(order);
	if (tail < n) {
		*cyclic = 1;
		free(anc);
		return NULL;
	}
	*words = w;
	return anc;
}

/* The longest chain of dependencies before each message: relaxed along
 * the successor lists until nothing changes (at most nmsg rounds in an
 * acyclic plan). */
static int32_t *levels_of(const struct topo_plan *p)
{
	int32_t *lv = calloc((size_t)p->nmsg + 1, sizeof(int32_t));

	for (int64_t round = 0, changed = 1; changed && round <= p->nmsg;
	     round++) {
		changed = 0;
		for (int64_t b = 0; b < p->nmsg; b++)
			for (int64_t k = p->succ_off[b];
			     k < p->succ_off[b + 1]; k++)
				if (lv[p->succ[k]] < lv[b] + 1) {
					lv[p->succ[k]] = lv[b] + 1;
					changed = 1;
				}
	}
	return lv;
}

static int overlap(const struct topo__msg *x, const struct topo__msg *y)
{
	return x->dst == y->dst && x->dbuf == y->dbuf && x->len > 0 &&
	       y->len > 0 && x->doff < y->doff + y->len &&
	       y->doff < x->doff + x->len;
}

static long plans_checked, chained_plans, pairs_checked;

static void check_chains(const topo_plan *p, const char *label)
{
	uint64_t *anc;
	size_t w = 0;
	int cyclic = 0;
	int32_t *lv;
	int64_t heads = 0;

	plans_checked++;
	if (p->params.type != TOPO_FLOAT && p->params.type != TOPO_DOUBLE) {
		CHECK(p->cnext == NULL, "%s: an integer plan has chains",
		      label);
		return;
	}
	anc = union_ancestors(p, &w, 4000, &cyclic);
	CHECK(!cyclic, "%s: the plan and its chains have a cycle", label);
	if (anc == NULL)
		return;
	chained_plans += p->cnext != NULL;
	for (int64_t x = 0; x < p->nmsg; x++)
		for (int64_t y = x + 1; y < p->nmsg; y++) {
			const struct topo__msg *X = &p->msg[x],
					       *Y = &p->msg[y];

			if (X->kind != TOPO__REDUCE ||
			    Y->kind != TOPO__REDUCE || !overlap(X, Y))
				continue;
			pairs_checked++;
			CHECK(is_ancestor(anc, w, x, y) ||
				  is_ancestor(anc, w, y, x),
			      "%s: REDUCEs %lld and %lld into member %d's "
			      "bytes are not ordered",
			      label, (long long)x, (long long)y, (int)X->dst);
		}
	/* Each chain in level order, then message order; only REDUCEs;
	 * each REDUCE in at most one chain, followed at most once. */
	lv = levels_of(p);
	for (int64_t m = 0; lv != NULL && p->cnext != NULL && m < p->nmsg;
	     m++) {
		int64_t a = p->cnext[m];

		if (a < 0)
			continue;
		CHECK(a < p->nmsg && p->msg[m].kind == TOPO__REDUCE &&
			  p->msg[a].kind == TOPO__REDUCE &&
			  p->msg[m].dst == p->msg[a].dst,
		      "%s: chain %lld -> %lld is not of two REDUCEs into one "
		      "member",
		      label, (long long)m, (long long)a);
		if (a >= p->nmsg)
			continue;
		CHECK(lv[m] < lv[a] || (lv[m] == lv[a] && m < a),
		      "%s: chain %lld (level %d) -> %lld (level %d) out of "
		      "order",
		      label, (long long)m, (int)lv[m], (long long)a,
		      (int)lv[a]);
	}
	if (p->cnext != NULL) {
		int32_t *into = calloc((size_t)p->nmsg + 1, sizeof(int32_t));

		for (int64_t m = 0; m < p->nmsg; m++)
			if (p->cnext[m] >= 0 && p->cnext[m] < p->nmsg)
				into[p->cnext[m]]++;
		for (int64_t m = 0; m < p->nmsg; m++) {
			CHECK(into[m] <= 1, "%s: %d combines before %lld",
			      label, (int)into[m], (long long)m);
			heads += into[m] == 0 && p->cnext[m] >= 0;
		}
		CHECK(heads > 0, "%s: chains without a head", label);
		free(into);
	}
	free(lv);
	free(anc);
}

/* The same plan made twice: the same chains. */
static void check_same(const topo_tree *t, enum topo_op op, const char *algo,
		       size_t bytes, size_t seg, const topo_plan *p,
		       const char *label)
{
	topo_plan *q = plan(t, op, algo, bytes, seg, p->params.type,
			    p->params.redop);

	CHECK(q != NULL && q->nmsg == p->nmsg &&
		  (p->cnext == NULL) == (q->cnext == NULL) &&
		  (p->cnext == NULL ||
		   memcmp(p->cnext, q->cnext,
			  (size_t)p->nmsg * sizeof(int32_t)) == 0),
	      "%s: made again, other chains", label);
	topo_plan_free(q);
}

/* ---------------------------------------------------------------------- */
/* 2. Bits */

/* Member r's inputs: doubles (or floats) whose sums round. */
static void fill_rounding(const struct topo_plan *p, int32_t r,
			  unsigned char *b, size_t len, uint64_t seed)
{
	size_t ts = tsize(p->params.type);

	for (size_t e = 0; (e + 1) * ts <= len; e++) {
		uint64_t h = (seed ^ ((uint64_t)r * 0x9e3779b97f4a7c15ULL)) +
			     e * 0xbf58476d1ce4e5b9ULL;
		double v;

		h ^= h >> 31;
		h *= 0x94d049bb133111ebULL;
		h ^= h >> 29;
		/* mantissa from the hash, magnitude 1e-8 .. 1e8, both signs */
		v = ((double)(h >> 11) / 9007199254740992.0 - 0.5) *
		    pow(10.0, (double)((h >> 3) % 17) - 8.0);
		if (p->params.redop == TOPO_PROD)
			v = 1.0 + v * 1e-9;
		put_elem(p->params.type, b + e * ts, v, 0, 0);
	}
}

/* Replays p in a random topological order that keeps the chains when
 * chains is set; returns every member's RECV bytes, concatenated. */
static unsigned char *replay_bits(const struct topo_plan *p, int chains,
				  uint64_t seed, size_t *out_len)
{
	int64_t *wait = calloc((size_t)p->nmsg + 1, sizeof(int64_t));
	int64_t *ready = calloc((size_t)p->nmsg + 1, sizeof(int64_t));
	unsigned char **buf[TOPO__NBUF];
	int64_t tail = 0;
	size_t total = 0, at = 0;
	unsigned char *out;

	for (int b = 0; b < TOPO__NBUF; b++) {
		buf[b] = calloc((size_t)p->n, sizeof(unsigned char *));
		for (int32_t r = 0; r < p->n; r++) {
			size_t len = (size_t)bsize(p, b, r);

			buf[b][r] = malloc(len + 1);
			if (b == TOPO__SEND)
				fill_rounding(p, r, buf[b][r], len, seed);
			else
				memset(buf[b][r], TOPO__POISON, len);
		}
	}
	for (int64_t i = 0; i < p->nmsg; i++)
		wait[i] = p->msg[i].nwait;
	for (int64_t i = 0; chains && p->cnext != NULL && i < p->nmsg; i++)
		if (p->cnext[i] >= 0)
			wait[p->cnext[i]]++;
	for (int64_t i = 0; i < p->nmsg; i++)
		if (wait[i] == 0)
			ready[tail++] = i;
	while (tail > 0) {
		int64_t pick = check_rand_range(0, tail - 1), id = ready[pick];
		const struct topo__msg *m = &p->msg[id];
		unsigned char *d = buf[m->dbuf][m->dst] + m->doff;
		const unsigned char *s = buf[m->sbuf][m->src] + m->soff;

		ready[pick] = ready[--tail];
		if (m->kind == TOPO__REDUCE)
			ref_reduce(p->params.type, p->params.redop, d, s,
				   (size_t)m->len);
		else
			memmove(d, s, (size_t)m->len);
		for (int64_t k = p->succ_off[id]; k < p->succ_off[id + 1]; k++)
			if (--wait[p->succ[k]] == 0)
				ready[tail++] = p->succ[k];
		if (chains && p->cnext != NULL && p->cnext[id] >= 0 &&
		    --wait[p->cnext[id]] == 0)
			ready[tail++] = p->cnext[id];
	}
	for (int32_t r = 0; r < p->n; r++)
		total += (size_t)bsize(p, TOPO__RECV, r);
	out = malloc(total + 1);
	for (int32_t r = 0; r < p->n; r++) {
		size_t len = (size_t)bsize(p, TOPO__RECV, r);

		memcpy(out + at, buf[TOPO__RECV][r], len);
		at += len;
	}
	for (int b = 0; b < TOPO__NBUF; b++) {
		for (int32_t r = 0; r < p->n; r++)
			free(buf[b][r]);
		free(buf[b]);
	}
	free(wait);
	free(ready);
	*out_len = total;
	return out;
}

static long bit_plans, unordered_differ;

/* Replays with chains: the same bits each time; without: some plan
 * (counted in unordered_differ) differs. */
static void check_bits(const topo_plan *p, const char *label, int rounds)
{
	size_t len0 = 0, len = 0;
	unsigned char *first = replay_bits(p, 1, 7, &len0);
	int differ = 0;

	bit_plans++;
	for (int i = 1; i < rounds; i++) {
		unsigned char *b = replay_bits(p, 1, 7, &len);

		CHECK(len == len0 && memcmp(b, first, len) == 0,
		      "%s: replay %d in another order gave other bits", label,
		      i);
		free(b);
	}
	for (int i = 0; i < rounds && !differ; i++) {
		unsigned char *b = replay_bits(p, 0, 7, &len);

		differ = len != len0 || memcmp(b, first, len) != 0;
		free(b);
	}
	unordered_differ += differ;
	free(first);
}

static void test_plans(void)
{
	int quick = check_quick();
	static const enum topo_type types[] = {TOPO_DOUBLE, TOPO_FLOAT,
					       TOPO_INT32};
	const struct op_algo *algos;
	size_t nalgos = all_algos(&algos);

	for (size_t a = 0; a < nalgos; a++) {
		enum topo_op op = algos[a].op;

		if (!topo_op_reduces(op))
			continue;
		for (size_t gi = 0; gi < NGSPECS; gi++)
			for (size_t si = 0; si < NSHAPES; si++) {
				const char *algo = algos[a].name;
				topo_tree *t = NULL;
				topo_error err;

				if (quick && (gi + si) % 3 != 0)
					continue;
				topo_error_clear(&err);
				if (topo_tree_new(&t, gs[gi], shapes[si],
						  &err) != 0)
					continue;
				for (int k = 0; k < 6; k++) {
					char label[200];
					enum topo_type ty = types[k % 3];
					int seg = k >= 3;
					size_t bytes = seg ? 96 : 24;
					topo_plan *p = plan(
					    t, op, algo, bytes, seg ? 16 : 0,
					    ty, k == 1 ? TOPO_PROD : TOPO_SUM);

					if (p == NULL)
						continue;
					snprintf(label, sizeof(label),
						 "%s %s, %d members, "
						 "%s, %s %zu B%s",
						 topo_op_name(op), algo,
						 (int)gs[gi]->size, shapes[si],
						 topo_type_name(ty), bytes,
						 seg ? " in 16 B "
						       "segments"
						     : "");
					check_chains(p, label);
					check_same(t, op, algo, bytes,
						   seg ? 16 : 0, p, label);
					if (ty != TOPO_INT32)
						check_bits(p, label,
							   quick ? 3 : 6);
					topo_plan_free(p);
				}
				topo_tree_free(t);
			}
	}
	printf("test_order: %ld plans, %ld with chains, %ld pairs of "
	       "combines ordered; %ld replayed for bits, %ld of them with "
	       "other bits unordered\n",
	       plans_checked, chained_plans, pairs_checked, bit_plans,
	       unordered_differ);
	CHECK(chained_plans > (quick ? 50 : 300), "only %ld plans have chains",
	      chained_plans);
	CHECK(unordered_differ > bit_plans / 10,
	      "only %ld of %ld plans gave other bits without their chains: "
	      "the inputs do not show the order",
	      unordered_differ, bit_plans);
}

/* ---------------------------------------------------------------------- */
/* 3. Threads */

#define MAX_MSG 8192

static struct {
	_Atomic int64_t clock;
	_Atomic int64_t start[MAX_MSG], end[MAX_MSG];
	_Atomic int64_t late; /* chain pairs that overlapped */
	_Atomic int64_t pauses;
} wt;

/* Each thread's own pseudo-random numbers (check_rand's state is the
 * main thread's). */
static long o_rand(long lo, long hi)
{
	static _Thread_local uint64_t x;

	if (x == 0)
		x = (uint64_t)(uintptr_t)&x | 1;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return lo + (long)(x % (uint64_t)(hi - lo + 1));
}

static int o_deliver(void *state, const struct topo_plan *p, int64_t m)
{
	int rc;

	if (p->msg[m].kind != TOPO__REDUCE || m >= MAX_MSG)
		return topo__transport_inproc.deliver(state, p, m);
	atomic_store(&wt.start[m], atomic_fetch_add(&wt.clock, 1));
	/* a pause now and then: other threads take what is ready */
	if (o_rand(0, 3) == 0) {
		struct timespec nap = {0, o_rand(1000, 50000)};

		nanosleep(&nap, NULL);
		atomic_fetch_add(&wt.pauses, 1);
	}
	rc = topo__transport_inproc.deliver(state, p, m);
	atomic_store(&wt.end[m], atomic_fetch_add(&wt.clock, 1));
	return rc;
}

static const struct topo__transport_ops stamper = {
    .name = "stamper",
    .open = pass_open,
    .close = pass_close,
    .buffer = pass_buffer,
    .deliver = o_deliver,
    .deliver_trusted = o_deliver,
    .fill = pass_fill,
};

/* One iteration at a time, so that each is checked on its own stamps. */
static void check_threads(const topo_plan *p, const char *label, int threads)
{
	for (int it = 0; it < (UNDER_VALGRIND ? 1 : 4); it++) {
		topo_report *r;

		for (int64_t m = 0; m < p->nmsg && m < MAX_MSG; m++) {
			atomic_store(&wt.start[m], -1);
			atomic_store(&wt.end[m], -1);
		}
		r = run_over(p, &stamper, threads, 1, NULL);
		CHECK(r != NULL && topo_report_verified(r),
		      "%s, %d threads: does not verify", label, threads);
		topo_report_free(r);
		for (int64_t m = 0; p->cnext != NULL && m < p->nmsg; m++) {
			int64_t a = p->cnext[m];

			if (a < 0 || m >= MAX_MSG || a >= MAX_MSG)
				continue;
			if (atomic_load(&wt.end[m]) < 0 ||
			    atomic_load(&wt.start[a]) < 0)
				continue; /* fused or moved by the run */
			if (atomic_load(&wt.end[m]) >
			    atomic_load(&wt.start[a])) {
				atomic_fetch_add(&wt.late, 1);
				CHECK(0,
				      "%s, %d threads: combine %lld started "
				      "before %lld, the one before it in its "
				      "chain, ended",
				      label, threads, (long long)a,
				      (long long)m);
			}
		}
	}
}

static void test_threads(void)
{
	/* chains: whether the plan has links of its own (reduce and
	 * reduce-scatter direct chain their combines themselves) */
	static const struct {
		const char *nodes;
		enum topo_op op;
		const char *algo;
		size_t bytes, seg;
		int chains;
	} cases[] = {
	    {"1, \"tasks_per_node\": 8", TOPO_OP_REDUCE, NULL, 4096, 0, 1},
	    {"1, \"tasks_per_node\": 8", TOPO_OP_REDUCE, NULL, 65536, 8192, 1},
	    {"3, \"tasks_per_node\": [3, 1, 4]", TOPO_OP_REDUCE, "tree", 2048,
	     512, 1},
	    {"4, \"tasks_per_node\": 4", TOPO_OP_ALLREDUCE, NULL, 8192, 1024,
	     1},
	    {"2, \"tasks_per_node\": 5", TOPO_OP_ALLREDUCE,
	     "recursive-doubling", 4000, 0, 1},
	    {"4, \"tasks_per_node\": 2", TOPO_OP_REDUCE_SCATTER, "direct", 512,
	     0, 0},
	    {"4, \"tasks_per_node\": 2", TOPO_OP_REDUCE_SCATTER, "tree", 512, 0,
	     1},
	    {"1, \"tasks_per_node\": 6", TOPO_OP_REDUCE, "direct", 8192, 0, 0},
	};
	int64_t lane_min = topo__tune.lane_min;

	/* lanes from tiny combines up too: chains must hold through them */
	for (int lanes = 0; lanes < 2; lanes++) {
		topo__tune.lane_min = lanes ? 1 : lane_min;
		for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			struct fixture f;
			struct topo_plan_params pp;
			topo_error err;
			char label[160];

			memset(&f, 0, sizeof(f));
			f.m = fixture_machine(cases[i].nodes);
			topo_error_clear(&err);
			topo_plan_params_init(&pp, sizeof(pp), cases[i].op);
			pp.algorithm = cases[i].algo;
			pp.bytes = cases[i].bytes;
			pp.segment = cases[i].seg;
			pp.type = TOPO_DOUBLE;
			pp.redop = TOPO_SUM;
			if (topo_group_new(&f.g, f.m, "world", "all", &err) !=
				0 ||
			    topo_tree_new(&f.t, f.g,
					  cases[i].op == TOPO_OP_REDUCE_SCATTER
					      ? "binomial"
					      : "hierarchical",
					  &err) != 0 ||
			    topo_plan_new(&f.p, f.t, &pp, &err) != 0) {
				CHECK(0, "case %zu: %s", i, err.text);
				fixture_free(&f);
				continue;
			}
			snprintf(label, sizeof(label), "%s %s over %s, %zu B%s",
				 topo_op_name(cases[i].op),
				 topo_plan_algorithm(f.p), cases[i].nodes,
				 cases[i].bytes, lanes ? ", lanes" : "");
			CHECK((f.p->cnext != NULL) == cases[i].chains,
			      "%s: chains %d, want %d", label,
			      f.p->cnext != NULL, cases[i].chains);
			for (int th = 2; th <= 4; th++)
				check_threads(f.p, label, th);
			fixture_free(&f);
		}
	}
	topo__tune.lane_min = lane_min;
	CHECK(atomic_load(&wt.pauses) > 0,
	      "only %lld pauses", (long long)atomic_load(&wt.pauses));
	CHECK_INT(atomic_load(&wt.late), 0);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	check_seed("test_order", 4242);
	uneven_groups(gspecs, NGSPECS, ms, gs);
	CHECK_RUN(plans, test_plans());
	CHECK_RUN(threads, test_threads());
	uneven_groups_free(NGSPECS, ms, gs);
	return check_done("test_order");
}
