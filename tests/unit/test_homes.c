/*
 * test_homes.c - the run's homes (exec.c): with two threads or more, a
 * run may split each iteration's reset of the receive and work buffers
 * between the participants, and start each on the messages waiting for
 * nothing that write into its part (topo__pool_push_to).  Homes are on
 * by default only for heavy runs on participants with CPUs of their own;
 * here topo__tune.exec_homes forces them on (or off) for small plans.
 *
 * Checked, through a transport that wraps the in-process one:
 *  - every operation and algorithm verifies with homes, on 2 and 3
 *    threads, several iterations, on machines of even and uneven tasks
 *    per node;
 *  - the split reset still covers every byte: for every message of a set
 *    of plans, a delivery skipped in the second iteration (the bytes keep
 *    the first iteration's correct data unless the reset poisoned them)
 *    is caught whenever it is caught without homes;
 *  - the send bytes each participant reads in the reset are exactly
 *    those its home's messages read (every message's home by its
 *    destination, as the roots'), in sorted and merged ranges; none
 *    through that path without homes, or for a plan with more messages
 *    out of send buffers than topo__tune.warm_ranges_max;
 *  - each participant starts on its home: the first message the caller
 *    delivers is home 0's last root, and those the workers deliver are
 *    the other homes' last roots, the homes worked out here from the rule
 *    exec.c documents (by offset in each member's buffer when that gives
 *    no home more than 5/4 of its share of the roots' bytes, else by
 *    arena); on 2 threads, and on more threads than CPUs, whose workers
 *    sleep, so that only the run's hand-out (not the pool's sharing with
 *    a spinning worker) can start them.
 */
#include "all_algos.h"
#include "planfix.h"

#include <pthread.h>
#include <stdatomic.h>

/* Participants watched at most. */
#define MAX_HOMES 8

/* ---------------------------------------------------------------------- */
/* A transport that watches: the in-process one underneath, its slices
 * and its fill kept (homes need the slices), every delivery counted, the
 * first message each thread delivers recorded, and one delivery skipped
 * on request.  Runs are sequential, so its settings are globals. */

static struct {
	pthread_t caller;
	void *state;
	_Atomic int *count; /* [nmsg]: deliveries of each message */
	int64_t nmsg;
	int64_t skip_msg; /* -1: none */
	int skip_on;	  /* its skip_on-th delivery (2: the 2nd iteration) */
	/* the first message each thread delivered: [0] the caller's, the
	 * workers' as they come */
	struct {
		_Atomic int64_t msg;
	} first[MAX_HOMES];
	_Atomic int nfirst;
	_Atomic int64_t run; /* runs so far */
} w;

static void w_reset(int64_t skip_msg, int skip_on)
{
	w.caller = pthread_self();
	w.skip_msg = skip_msg;
	w.skip_on = skip_on;
	for (int k = 0; k < MAX_HOMES; k++)
		atomic_store(&w.first[k].msg, -1);
	atomic_store(&w.nfirst, 1);
	atomic_fetch_add(&w.run, 1);
}

/* Records m as the calling thread's first delivery, if it is. */
static void w_first(int64_t m)
{
	static _Thread_local int64_t seen = 0;
	int64_t run = atomic_load(&w.run);
	int k;

	if (seen == run)
		return;
	seen = run;
	k = pthread_equal(pthread_self(), w.caller)
		? 0
		: atomic_fetch_add(&w.nfirst, 1);
	if (k < MAX_HOMES)
		atomic_store(&w.first[k].msg, m);
}

static int w_open(void **state, const struct topo_plan *p, topo_error *err)
{
	int rc;

	free(w.count);
	w.nmsg = p->nmsg;
	w.count = calloc((size_t)p->nmsg + 1, sizeof(*w.count));
	if (w.count == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "test: calloc");
	rc = topo__transport_inproc.open(state, p, err);
	w.state = rc == 0 ? *state : NULL;
	return rc;
}

static void w_close(void *state)
{
	topo__transport_inproc.close(state);
	w.state = NULL;
}

static int w_deliver(void *state, const struct topo_plan *p, int64_t m)
{
	int k = atomic_fetch_add(&w.count[m], 1) + 1;

	w_first(m);
	if (m == w.skip_msg && k == w.skip_on)
		return 0;
	return topo__transport_inproc.deliver(state, p, m);
}

static const struct topo__transport_ops watcher = {
    .name = "watcher",
    .open = w_open,
    .close = w_close,
    .buffer = pass_buffer,
    .deliver = w_deliver,
    .deliver_trusted = w_deliver,
    .fill = pass_fill,
    .slices = pass_slices,
};

static topo_report *run(const topo_plan *p, int threads, int iterations)
{
	return run_over(p, &watcher, threads, iterations, NULL);
}

/* ---------------------------------------------------------------------- */
/* Every operation and algorithm, with homes */

static const char *const shapes[] = {
    "1, \"tasks_per_node\": 2",
    "3, \"tasks_per_node\": [3, 1, 2]",
};

static void test_all_ops(void)
{
	const struct op_algo *algos;
	size_t nalgos = all_algos(&algos);
	int runs = 0;

	topo__tune.exec_homes = 1;
	for (size_t i = 0; i < nalgos; i++)
		for (size_t s = 0; s < sizeof(shapes) / sizeof(*shapes); s++)
			for (int threads = 2; threads <= 3; threads++) {
				struct fixture f;
				topo_report *r;

				/* 4 KiB blocks in 1 KiB segments: parts that
				 * split members' buffers */
				if (fixture_new(&f, shapes[s], algos[i].op,
						algos[i].name, 4096,
						1024) != 0)
					continue;
				w_reset(-1, 0);
				r = run(f.p, threads, 3);
				CHECK(topo_report_verified(r),
				      "%s %s over %s, %d threads: not verified "
				      "with homes",
				      topo_op_name(algos[i].op), algos[i].name,
				      shapes[s], threads);
				runs++;
				topo_report_free(r);
				fixture_free(&f);
			}
	topo__tune.exec_homes = -1;
	CHECK_INT(runs, 2 * 2 * (int)nalgos);
}

/* ---------------------------------------------------------------------- */
/* The split reset covers every byte */

struct plan_case {
	enum topo_op op;
	const char *algorithm;
	const char *nodes;
	size_t bytes, segment;
};

static const struct plan_case cases[] = {
    {TOPO_OP_BCAST, "flood", "1, \"tasks_per_node\": 2", 8192, 1024},
    {TOPO_OP_BCAST, "flood", "2, \"tasks_per_node\": 3", 4096, 1024},
    {TOPO_OP_SCATTER, "tree", "2, \"tasks_per_node\": 3", 4096, 0},
    {TOPO_OP_SCATTER, "direct", "1, \"tasks_per_node\": 2", 4096, 0},
    {TOPO_OP_GATHER, "chunked", "2, \"tasks_per_node\": [3, 1]", 4096, 0},
    {TOPO_OP_REDUCE, "tree", "2, \"tasks_per_node\": 2", 4096, 1024},
    {TOPO_OP_REDUCE, "direct", "1, \"tasks_per_node\": 3", 4096, 1024},
    {TOPO_OP_ALLREDUCE, "ring", "1, \"tasks_per_node\": 4", 4096, 0},
    {TOPO_OP_ALLREDUCE, "tree", "2, \"tasks_per_node\": 2", 4096, 1024},
    {TOPO_OP_ALLGATHER, "ring", "1, \"tasks_per_node\": 3", 4096, 0},
    {TOPO_OP_ALLGATHER, "bruck", "2, \"tasks_per_node\": [3, 2]", 1024, 0},
    {TOPO_OP_REDUCE_SCATTER, "ring", "1, \"tasks_per_node\": 4", 1024, 0},
    {TOPO_OP_REDUCE_SCATTER, "direct", "2, \"tasks_per_node\": [3, 1]", 1024,
     256},
    {TOPO_OP_ALLTOALL, "pairwise", "1, \"tasks_per_node\": 3", 1024, 0},
    {TOPO_OP_ALLTOALL, "bruck", "1, \"tasks_per_node\": 5", 1024, 0},
};

/* Whether a run of 2 iterations, message m's second delivery skipped,
 * fails its verification; homes as given. */
static int skip_caught(const topo_plan *p, int64_t m, int homes)
{
	topo_report *r;
	int caught;

	topo__tune.exec_homes = homes;
	w_reset(m, 2);
	r = run(p, 2, 2);
	topo__tune.exec_homes = -1;
	caught = r != NULL && !topo_report_verified(r);
	topo_report_free(r);
	return caught;
}

static void test_reset_covers(void)
{
	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++) {
		const struct plan_case *pc = &cases[c];
		struct fixture f;
		int64_t with = 0, without = 0, missed = 0;
		topo_report *r;

		if (fixture_new(&f, pc->nodes, pc->op, pc->algorithm, pc->bytes,
				pc->segment) != 0)
			continue;
		/* nothing skipped: verified either way */
		for (int homes = 0; homes <= 1; homes++) {
			topo__tune.exec_homes = homes;
			w_reset(-1, 0);
			r = run(f.p, 2, 2);
			CHECK(topo_report_verified(r),
			      "%s %s: not verified, homes %d",
			      topo_op_name(pc->op), pc->algorithm, homes);
			topo_report_free(r);
		}
		for (int64_t m = 0; m < f.p->nmsg; m++) {
			int on, off;

			if (f.p->msg[m].len == 0)
				continue;
			on = skip_caught(f.p, m, 1);
			off = skip_caught(f.p, m, 0);
			with += on;
			without += off;
			missed += off && !on;
		}
		CHECK(missed == 0,
		      "%s %s over %s: %lld skipped deliveries caught without "
		      "homes but not with them",
		      topo_op_name(pc->op), pc->algorithm, pc->nodes,
		      (long long)missed);
		/* The test can fail: most skips are caught at all. */
		CHECK(with * 2 > f.p->nmsg,
		      "%s %s: only %lld of %lld skips caught",
		      topo_op_name(pc->op), pc->algorithm, (long long)with,
		      (long long)f.p->nmsg);
		printf("homes: %-14s %-9s %3lld messages, %3lld skips caught "
		       "(%lld without homes)\n",
		       topo_op_name(pc->op), pc->algorithm,
		       (long long)f.p->nmsg, (long long)with,
		       (long long)without);
		fixture_free(&f);
	}
}

/* ---------------------------------------------------------------------- */
/* Each participant starts on its home */

/* Where part of n holds byte o of `size` bytes: parts of size / n bytes
 * rounded down to 64, the last taking the rest (exec.c). */
static int part(int64_t size, int64_t o, int n)
{
	int64_t step = size / n / 64 * 64;

	if (step == 0)
		return n - 1;
	return o / step >= n - 1 ? n - 1 : (int)(o / step);
}

static int home(const topo_plan *p, const struct topo__slices *sl, int64_t i,
		int by_offset, int n)
{
	const struct topo__msg *m = &p->msg[i];
	int64_t mid = m->doff + m->len / 2, o;

	if (m->dbuf == TOPO__SEND)
		return 0;
	if (by_offset)
		return part(topo__bufsize(p, m->dbuf, m->dst), mid, n);
	o = topo__slice(sl, m->dst, m->dbuf) - sl->arena[m->dbuf] + mid;
	if (m->dbuf == TOPO__WORK)
		o += sl->bytes[TOPO__RECV];
	return part(sl->bytes[TOPO__RECV] + sl->bytes[TOPO__WORK], o, n);
}

/* The last root of each of n homes, into last[n], and the split the rule
 * picks (1: by offset), for p opened as sl. */
static int last_roots(const topo_plan *p, const struct topo__slices *sl, int n,
		      int64_t *last)
{
	int64_t load[MAX_HOMES] = {0}, bytes = 0, max = 0;
	int by_offset;

	for (int64_t i = 0; i < p->nmsg; i++)
		if (p->msg[i].nwait == 0) {
			load[home(p, sl, i, 1, n)] += p->msg[i].len;
			bytes += p->msg[i].len;
		}
	for (int t = 0; t < n; t++)
		max = load[t] > max ? load[t] : max;
	by_offset = max * 4 * n <= bytes * 5;
	for (int t = 0; t < n; t++)
		last[t] = -1;
	for (int64_t i = 0; i < p->nmsg; i++)
		if (p->msg[i].nwait == 0)
			last[home(p, sl, i, by_offset, n)] = i;
	return by_offset;
}

/* Whether the first messages the threads of the last run delivered are
 * last[0] for the caller and last[1 .. n - 1], in any order, for the
 * workers (which thread is which participant, deliver cannot tell). */
static int started_home(const int64_t *last, int n)
{
	int seen = 0;

	if (atomic_load(&w.first[0].msg) != last[0])
		return 0;
	for (int k = 1; k < MAX_HOMES; k++) {
		int64_t m = atomic_load(&w.first[k].msg);
		int t;

		if (m < 0)
			continue;
		for (t = 1; t < n && last[t] != m; t++)
			;
		if (t == n)
			return 0;
		seen++;
	}
	return seen == n - 1;
}

/* The homes of p's messages among n, from p opened on the in-process
 * transport for its slices: the last root of each into last[n], and
 * when msg_home is not NULL every message's home into msg_home[nmsg].
 * Returns the split the rule picks (1: by offset), or -1 (reported). */
static int homes_of(const topo_plan *p, int n, int64_t *last, int *msg_home)
{
	const struct topo__slices *sl;
	void *state;
	topo_error err;
	int by_offset;

	topo_error_clear(&err);
	if (topo__transport_inproc.open(&state, p, &err) != 0) {
		CHECK(0, "open: %s", err.text);
		return -1;
	}
	sl = topo__transport_inproc.slices(state);
	by_offset = last_roots(p, sl, n, last);
	for (int64_t i = 0; msg_home != NULL && i < p->nmsg; i++)
		msg_home[i] = home(p, sl, i, by_offset, n);
	topo__transport_inproc.close(state);
	return by_offset;
}

static void start_case(const struct plan_case *pc, int threads,
		       int want_by_offset)
{
	struct fixture f;
	int64_t last[MAX_HOMES];
	int by_offset, wrong = 0;

	if (fixture_new(&f, pc->nodes, pc->op, pc->algorithm, pc->bytes,
			pc->segment) != 0)
		return;
	by_offset = homes_of(f.p, threads, last, NULL);
	if (by_offset < 0) {
		fixture_free(&f);
		return;
	}
	CHECK(by_offset == want_by_offset, "%s %s: split by %s, want %s",
	      topo_op_name(pc->op), pc->algorithm,
	      by_offset ? "offset" : "arena",
	      want_by_offset ? "offset" : "arena");
	for (int t = 0; t < threads; t++)
		CHECK(last[t] >= 0, "%s %s, %d threads: home %d has no roots",
		      topo_op_name(pc->op), pc->algorithm, threads, t);
	topo__tune.exec_homes = 1;
	for (int k = 0; k < 10; k++) {
		topo_report *r;

		w_reset(-1, 0);
		r = run(f.p, threads, 1);
		CHECK(topo_report_verified(r), "%s %s: not verified",
		      topo_op_name(pc->op), pc->algorithm);
		wrong += !started_home(last, threads);
		topo_report_free(r);
	}
	topo__tune.exec_homes = -1;
	CHECK(wrong == 0,
	      "%s %s, %d threads: %d of 10 runs did not start each "
	      "participant on its home's last root",
	      topo_op_name(pc->op), pc->algorithm, threads, wrong);
	fixture_free(&f);
}

static void test_starts(void)
{
	/* segments of a bcast and the blocks each member sends: by
	 * offset */
	static const struct plan_case bcast_seg = {
	    TOPO_OP_BCAST, "flood", "1, \"tasks_per_node\": 2", 16384, 1024};
	static const struct plan_case alltoall = {
	    TOPO_OP_ALLTOALL, "pairwise", "1, \"tasks_per_node\": 2", 4096, 0};
	/* one message per member's buffer: by arena */
	static const struct plan_case bcast_one = {
	    TOPO_OP_BCAST, "flood", "1, \"tasks_per_node\": 2", 4096, 0};
	struct plan_case scatter = {TOPO_OP_SCATTER, "direct", NULL, 4096, 0};
	char nodes[64];
	/* More participants than CPUs: workers sleep rather than spin, so
	 * only the run's own hand-out (not the pool's sharing with a
	 * spinning worker) can start them. */
	int many = (int)topo__cpus_allowed(NULL, 0) + 1;

	many = many < 3 ? 3 : many > MAX_HOMES ? MAX_HOMES : many;
	start_case(&bcast_seg, 2, 1);
	start_case(&alltoall, 2, 1);
	start_case(&bcast_one, 2, 0);
	snprintf(nodes, sizeof(nodes), "1, \"tasks_per_node\": 2");
	scatter.nodes = nodes;
	start_case(&scatter, 2, 0);
	start_case(&bcast_seg, many, 1);
	snprintf(nodes, sizeof(nodes), "1, \"tasks_per_node\": %d", many);
	start_case(&scatter, many, 0);
}

/* ---------------------------------------------------------------------- */
/* What each participant reads of the send buffers in the reset */

/* The probe's record: for each home and member, which send bytes it read
 * (one byte per byte), the ranges it was given in order, and whether
 * they came sorted by member and offset, apart and not touching. */
#define WARM_MEMBERS 8
static struct {
	pthread_mutex_t mu;
	unsigned char *read[MAX_HOMES][WARM_MEMBERS];
	int64_t size[WARM_MEMBERS];
	int32_t last_member[MAX_HOMES];
	int64_t last_hi[MAX_HOMES];
	int64_t calls, bad_order, out_of_range;
} probe = {.mu = PTHREAD_MUTEX_INITIALIZER};

static void warm_probe(int home, int32_t member, int64_t lo, int64_t hi)
{
	pthread_mutex_lock(&probe.mu);
	probe.calls++;
	if (home < 0 || home >= MAX_HOMES || member < 0 ||
	    member >= WARM_MEMBERS || lo < 0 || lo >= hi ||
	    hi > probe.size[member]) {
		probe.out_of_range++;
		pthread_mutex_unlock(&probe.mu);
		return;
	}
	/* merged: after the last range of this home, and not touching it */
	if (member < probe.last_member[home] ||
	    (member == probe.last_member[home] && lo <= probe.last_hi[home]))
		probe.bad_order++;
	probe.last_member[home] = member;
	probe.last_hi[home] = hi;
	memset(probe.read[home][member] + lo, 1, (size_t)(hi - lo));
	pthread_mutex_unlock(&probe.mu);
}

static void probe_reset(const topo_plan *p)
{
	probe.calls = probe.bad_order = probe.out_of_range = 0;
	for (int t = 0; t < MAX_HOMES; t++) {
		probe.last_member[t] = -1;
		probe.last_hi[t] = -1;
		for (int32_t r = 0; r < WARM_MEMBERS; r++) {
			free(probe.read[t][r]);
			probe.read[t][r] = NULL;
		}
	}
	for (int32_t r = 0; r < WARM_MEMBERS; r++) {
		probe.size[r] = r < p->n ? topo__bufsize(p, TOPO__SEND, r) : 0;
		for (int t = 0; t < MAX_HOMES; t++)
			probe.read[t][r] = calloc(
			    (size_t)(probe.size[r] > 0 ? probe.size[r] : 1), 1);
	}
}

/* Each participant of n reads in the reset exactly the send bytes that
 * the messages of its home read, every message's home worked out here
 * from its destination as the roots' are (home()), in ranges sorted and
 * merged. */
static void warm_case(const struct plan_case *pc, int n)
{
	struct fixture f;
	int64_t last[MAX_HOMES], want_bytes = 0, wrong = 0;
	unsigned char *want[MAX_HOMES][WARM_MEMBERS] = {{NULL}};
	topo_report *r;
	int *msg_home;

	if (fixture_new(&f, pc->nodes, pc->op, pc->algorithm, pc->bytes,
			pc->segment) != 0)
		return;
	if (f.p->n > WARM_MEMBERS) {
		CHECK(0, "%s: %d members, at most %d watched",
		      topo_op_name(pc->op), (int)f.p->n, WARM_MEMBERS);
		fixture_free(&f);
		return;
	}
	probe_reset(f.p);
	msg_home = calloc((size_t)f.p->nmsg + 1, sizeof(int));
	if (msg_home == NULL || homes_of(f.p, n, last, msg_home) < 0) {
		CHECK(msg_home != NULL, "calloc");
		free(msg_home);
		fixture_free(&f);
		return;
	}
	for (int t = 0; t < n; t++)
		for (int32_t q = 0; q < f.p->n; q++)
			want[t][q] = calloc(
			    (size_t)(probe.size[q] > 0 ? probe.size[q] : 1), 1);
	for (int64_t i = 0; i < f.p->nmsg; i++) {
		const struct topo__msg *m = &f.p->msg[i];

		if (m->sbuf != TOPO__SEND || m->len == 0)
			continue;
		memset(want[msg_home[i]][m->src] + m->soff, 1, (size_t)m->len);
	}
	free(msg_home);

	topo__tune.exec_homes = 1;
	topo__warm_probe = warm_probe;
	w_reset(-1, 0);
	r = run(f.p, n, 1);
	topo__warm_probe = NULL;
	topo__tune.exec_homes = -1;
	CHECK(topo_report_verified(r), "%s %s: not verified",
	      topo_op_name(pc->op), pc->algorithm);
	topo_report_free(r);

	for (int t = 0; t < n; t++)
		for (int32_t q = 0; q < f.p->n; q++)
			for (int64_t b = 0; b < probe.size[q]; b++) {
				want_bytes += want[t][q][b];
				wrong += want[t][q][b] != probe.read[t][q][b];
			}
	for (int t = n; t < MAX_HOMES; t++)
		for (int32_t q = 0; q < f.p->n; q++)
			for (int64_t b = 0; b < probe.size[q]; b++)
				wrong += probe.read[t][q][b];
	CHECK(want_bytes > 0, "%s %s: no message reads a send buffer",
	      topo_op_name(pc->op), pc->algorithm);
	CHECK(wrong == 0 && probe.out_of_range == 0,
	      "%s %s over %s, %d threads: %lld send bytes read in the reset "
	      "by another participant than their messages' home, or by "
	      "none, %lld ranges out of the buffers",
	      topo_op_name(pc->op), pc->algorithm, pc->nodes, n,
	      (long long)wrong, (long long)probe.out_of_range);
	CHECK(probe.bad_order == 0,
	      "%s %s, %d threads: %lld ranges out of order or unmerged",
	      topo_op_name(pc->op), pc->algorithm, n,
	      (long long)probe.bad_order);
	for (int t = 0; t < n; t++)
		for (int32_t q = 0; q < f.p->n; q++)
			free(want[t][q]);
	fixture_free(&f);
}

/* The ranges the probe sees in a verified run of p on 2 threads, homes
 * as given (topo__tune.exec_homes) and topo__tune.warm_ranges_max at max. */
static int64_t probed_run(const topo_plan *p, int homes, int64_t max)
{
	topo_report *r;

	probe_reset(p);
	topo__tune.exec_homes = homes;
	topo__tune.warm_ranges_max = max;
	topo__warm_probe = warm_probe;
	w_reset(-1, 0);
	r = run(p, 2, 1);
	topo__warm_probe = NULL;
	topo__tune.warm_ranges_max = 16384;
	topo__tune.exec_homes = -1;
	CHECK(topo_report_verified(r),
	      "homes %d, at most %lld ranges: not "
	      "verified",
	      homes, (long long)max);
	topo_report_free(r);
	return probe.calls;
}

static void test_warm(void)
{
	/* a gather's chunks: every chunk of a member's block, not just the
	 * first (its root), is read by the home of the block */
	static const struct plan_case gather = {
	    TOPO_OP_GATHER, "chunked", "1, \"tasks_per_node\": 4", 8192, 0};
	int64_t calls = 0;

	for (size_t c = 0; c < sizeof(cases) / sizeof(*cases); c++)
		for (int n = 2; n <= 3; n++) {
			warm_case(&cases[c], n);
			calls += probe.calls;
		}
	warm_case(&gather, 2);
	CHECK(probe.calls >= 4, "gather: %lld ranges read",
	      (long long)probe.calls);
	calls += probe.calls;
	CHECK(calls > 0, "no range read at all");
	printf("homes: %lld send ranges read in resets\n", (long long)calls);

	/* Homes off: the reset reads every send buffer on the caller, and
	 * the probe (ranges chosen by homes) is not called.  More messages
	 * out of send buffers than ranges are sorted for: the reads by
	 * part, as before, and not the probe either. */
	{
		struct fixture f;

		if (fixture_new(&f, gather.nodes, gather.op, gather.algorithm,
				gather.bytes, 0) == 0) {
			CHECK_INT(probed_run(f.p, 0, 16384), 0);
			CHECK_INT(probed_run(f.p, 1, 0), 0);
			CHECK(probed_run(f.p, 1, 16384) >= 4,
			      "gather with homes: too few ranges read");
			fixture_free(&f);
		}
	}
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	CHECK_RUN(all_ops, test_all_ops());
	CHECK_RUN(reset_covers, test_reset_covers());
	CHECK_RUN(starts, test_starts());
	CHECK_RUN(warm, test_warm());
	free(w.count);
	for (int t = 0; t < MAX_HOMES; t++)
		for (int32_t q = 0; q < WARM_MEMBERS; q++)
			free(probe.read[t][q]);
	return check_done("test_homes");
}
