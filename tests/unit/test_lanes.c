/*
 * test_lanes.c - the run's lanes (exec.c): REDUCEs of at least
 * topo__tune.lane_min bytes into exactly the same bytes (a star's combines into
 * one accumulator) join a lane, and one participant at a time delivers a
 * lane's combines while the others go on with other work, instead of
 * sleeping on the transport's range lock.
 *
 * Checked, through a transport that wraps the in-process one:
 *  - contention arranged: the first combine of each iteration is held in
 *    its delivery (1 s at most) until another participant has taken a
 *    combine into the same bytes.  With lanes, that participant joins the
 *    lane (the probe, topo__lane_probe, is called) and never delivers a
 *    combine while another is being delivered into the same bytes; each
 *    combine that joined is delivered by another thread than the one
 *    that joined it; every byte verifies.  Without lanes (topo__tune.lane_min
 *    0, or combines below it, or one thread) the same arrangement does
 *    put two deliveries into the same bytes at once, and the probe is
 *    never called: so the arrangement provokes what lanes prevent.  That
 *    another participant takes a combine while one is held needs it to
 *    be idle then (the pool shares with an idle participant): on a busy
 *    host a hold may end unanswered, so the runs are repeated until one
 *    iteration is answered (30 s at most, a bound on a hang, not on
 *    speed), and each run checks what holds whatever the timing (one
 *    delivery at a time with lanes, no probe without, every byte).
 *    Under valgrind, which runs one thread at a time, only those are
 *    checked, and the arrangement's answer is a counted skip;
 *  - every reducing operation and algorithm verifies with lanes formed
 *    from tiny combines up (topo__tune.lane_min 1), on 2 and 3 threads, on
 *    machines of even and uneven tasks per node, several iterations;
 *  - a delivery that fails inside a lane ends the run with that message
 *    reported, and the next run over the same plan verifies.
 */
#include "all_algos.h"
#include "planfix.h"

#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

/* ---------------------------------------------------------------------- */
/* A transport that watches the combines: the in-process one underneath
 * (its slices and fill kept), and for every REDUCE the deliveries into its
 * bytes in flight.  Runs are sequential, so its settings are globals. */

#define MAX_MSG 4096

static struct {
	/* deliveries in flight into the bytes of each message's destination
	 * (counted under the message's first combine of the same bytes) */
	_Atomic int inflight[MAX_MSG];
	_Atomic int most; /* the most ever in flight into the same bytes */
	_Atomic int64_t reduces; /* REDUCE deliveries so far */
	int64_t per_iter;	 /* REDUCEs per iteration */
	bool hold;		 /* hold each iteration's first REDUCE */
	_Atomic int held_out;	 /* holds that gave up (after 10 s) */
	_Atomic int joined;	 /* probe calls */
	/* the thread that each message last joined a lane from, and in
	 * which iteration (-1: never) */
	pthread_t joiner[MAX_MSG];
	_Atomic int64_t joined_in[MAX_MSG];
	_Atomic int bad_deliverer; /* joined and delivered by one thread */
	int64_t fail_at;	   /* fail this REDUCE delivery (-1: none) */
	_Atomic int64_t failed_msg;
} w;

static void w_reset(const struct topo_plan *p, bool hold, int64_t fail_at)
{
	for (int64_t i = 0; i < MAX_MSG; i++) {
		atomic_store(&w.inflight[i], 0);
		atomic_store(&w.joined_in[i], -1);
	}
	atomic_store(&w.most, 0);
	atomic_store(&w.reduces, 0);
	atomic_store(&w.held_out, 0);
	atomic_store(&w.joined, 0);
	atomic_store(&w.bad_deliverer, 0);
	atomic_store(&w.failed_msg, -1);
	w.per_iter = 0;
	for (int64_t i = 0; i < p->nmsg; i++)
		w.per_iter += p->msg[i].kind == TOPO__REDUCE;
	w.hold = hold;
	w.fail_at = fail_at;
}

/* The first message of p writing the same bytes as message i: where the
 * deliveries into those bytes are counted. */
static int64_t key_of(const struct topo_plan *p, int64_t i)
{
	const struct topo__msg *m = &p->msg[i];

	for (int64_t k = 0; k < i; k++) {
		const struct topo__msg *q = &p->msg[k];

		if (q->kind == TOPO__REDUCE && q->dst == m->dst &&
		    q->dbuf == m->dbuf && q->doff == m->doff &&
		    q->len == m->len)
			return k;
	}
	return i;
}

static void lane_probe(int64_t msg, int worker)
{
	(void)worker;
	/* Every REDUCE of the iterations before has been delivered, and
	 * this one has not, so this is the iteration of the count. */
	if (msg >= 0 && msg < MAX_MSG && w.per_iter > 0) {
		w.joiner[msg] = pthread_self();
		atomic_store(&w.joined_in[msg],
			     atomic_load(&w.reduces) / w.per_iter);
	}
	atomic_fetch_add(&w.joined, 1);
}

/* Holds the calling delivery until another participant has joined a
 * lane, or has entered a delivery into the same bytes as one in flight
 * (1 s at most). */
static void hold(int joined0)
{
	struct timespec nap = {0, 100000};

	for (int k = 0; k < 10000; k++) {
		if (atomic_load(&w.joined) > joined0 ||
		    atomic_load(&w.most) > 1)
			return;
		nanosleep(&nap, NULL);
	}
	atomic_fetch_add(&w.held_out, 1);
}

static int w_deliver(void *state, const struct topo_plan *p, int64_t m)
{
	int64_t key, k;
	int in, most, rc;

	if (p->msg[m].kind != TOPO__REDUCE || m >= MAX_MSG)
		return topo__transport_inproc.deliver(state, p, m);
	k = atomic_fetch_add(&w.reduces, 1);
	if (k == w.fail_at) {
		atomic_store(&w.failed_msg, m);
		return TOPO_EIO;
	}
	key = key_of(p, m);
	in = atomic_fetch_add(&w.inflight[key], 1) + 1;
	most = atomic_load(&w.most);
	while (in > most && !atomic_compare_exchange_weak(&w.most, &most, in))
		;
	if (atomic_load(&w.joined_in[m]) ==
		k / (w.per_iter > 0 ? w.per_iter : 1) &&
	    pthread_equal(w.joiner[m], pthread_self()))
		atomic_fetch_add(&w.bad_deliverer, 1);
	if (w.hold && w.per_iter > 0 && k % w.per_iter == 0)
		hold(atomic_load(&w.joined));
	rc = topo__transport_inproc.deliver(state, p, m);
	atomic_fetch_sub(&w.inflight[key], 1);
	return rc;
}

static const struct topo__transport_ops watcher = {
    .name = "watcher",
    .open = pass_open,
    .close = pass_close,
    .buffer = pass_buffer,
    .deliver = w_deliver,
    .deliver_trusted = w_deliver,
    .fill = pass_fill,
    .slices = pass_slices,
};

static topo_report *run(const topo_plan *p, int threads, int iterations,
			int *rc_out)
{
	return run_over(p, &watcher, threads, iterations, rc_out);
}

/* ---------------------------------------------------------------------- */
/* Contention arranged */

/* One segment of 512 KiB, so that its combines are large enough for the
 * default topo__tune.lane_min and for a heavy run (idle workers spin and
 * share), over 8 members of one node: a star, the root's fused copy and
 * 7 combines into the same bytes, all released at once by the copy. */
#define STAR_BYTES ((size_t)512 << 10)

static void star(struct fixture *f)
{
	fixture_new(f, "1, \"tasks_per_node\": 8", TOPO_OP_REDUCE, NULL,
		    STAR_BYTES, STAR_BYTES);
}

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Runs of the star with lanes, repeated until an iteration's hold is
 * answered (30 s at most): each run verifies and never has two
 * deliveries into the same bytes at once, whatever the timing. */
static void arranged_lanes(const topo_plan *p, int iters)
{
	double t0 = wall_now();
	int answered = 0, runs = 0;

	do {
		topo_report *r;

		w_reset(p, true, -1);
		r = run(p, 2, iters, NULL);
		runs++;
		CHECK(r != NULL && topo_report_verified(r),
		      "the star with lanes verifies");
		CHECK_INT(atomic_load(&w.most), 1);
		CHECK_INT(atomic_load(&w.bad_deliverer), 0);
		CHECK_INT(atomic_load(&w.reduces), w.per_iter * iters);
		topo_report_free(r);
		answered = atomic_load(&w.joined) > 0 &&
			   atomic_load(&w.held_out) < iters;
	} while (!answered && !UNDER_VALGRIND && wall_now() - t0 < 30);
	if (UNDER_VALGRIND && !answered)
		check_skip("lanes: no hold answered under valgrind (one "
			   "thread at a time)");
	else
		CHECK(answered,
		      "no combine joined a lane in %d runs of %d iterations",
		      runs, iters);
}

/* Runs of the star without lanes (why), repeated until two deliveries
 * into the same bytes were in flight at once (30 s at most), when
 * threads is 2; never a probe call, and every run verifies. */
static void arranged_plain(const topo_plan *p, int iters, int threads,
			   const char *why)
{
	double t0 = wall_now();
	int two = 0, runs = 0;

	do {
		topo_report *r;

		w_reset(p, threads > 1, -1);
		r = run(p, threads, iters, NULL);
		runs++;
		CHECK(r != NULL && topo_report_verified(r),
		      "the star without lanes (%s) verifies", why);
		CHECK(atomic_load(&w.joined) == 0,
		      "without lanes (%s), %d probe calls", why,
		      atomic_load(&w.joined));
		topo_report_free(r);
		two = atomic_load(&w.most) == 2;
	} while (threads > 1 && !two && !UNDER_VALGRIND &&
		 wall_now() - t0 < 30);
	if (threads < 2)
		return;
	if (UNDER_VALGRIND && !two)
		check_skip("lanes: without lanes (%s), no two deliveries at "
			   "once under valgrind",
			   why);
	else
		CHECK(two,
		      "without lanes (%s), at most %d in flight in %d runs",
		      why, atomic_load(&w.most), runs);
}

static void test_arranged(void)
{
	struct fixture f;
	int64_t lane_min = topo__tune.lane_min;
	int homes = topo__tune.exec_homes, iters = UNDER_VALGRIND ? 2 : 8;

	star(&f);
	if (f.p == NULL)
		return;
	CHECK(f.p->nmsg < MAX_MSG, "%lld messages", (long long)f.p->nmsg);
	topo__tune.exec_homes = 0;
	topo__lane_probe = lane_probe;

	/* Lanes (the default topo__tune.lane_min). */
	arranged_lanes(f.p, iters);

	/* No lanes: the same arrangement puts two deliveries into the same
	 * bytes (one of them waiting on the transport's range lock). */
	for (int k = 0; k < 3; k++) {
		const char *why[] = {"topo__tune.lane_min 0",
				     "combines below it", "one thread"};

		topo__tune.lane_min = k == 0   ? 0
				      : k == 1 ? (int64_t)1 << 20
					       : lane_min;
		arranged_plain(f.p, iters, k < 2 ? 2 : 1, why[k]);
	}
	topo__tune.lane_min = lane_min;
	topo__tune.exec_homes = homes;
	topo__lane_probe = NULL;
	fixture_free(&f);
}

/* ---------------------------------------------------------------------- */
/* Every reducing operation and algorithm, lanes from tiny combines up */

static const char *const shapes[] = {
    "1, \"tasks_per_node\": 6",
    "3, \"tasks_per_node\": [3, 1, 2]",
};

static void reducing_case(enum topo_op op, const char *algorithm,
			  const char *shape, size_t bytes)
{
	struct fixture f;

	if (fixture_new(&f, shape, op, algorithm, bytes, 16) != 0)
		return;
	for (int threads = 2; threads <= 3; threads++) {
		topo_report *r;

		w_reset(f.p, false, -1);
		r = run(f.p, threads, 4, NULL);
		CHECK(r != NULL && topo_report_verified(r),
		      "%s %s over %s, %zu bytes, %d threads, lanes from 1 "
		      "byte",
		      topo_op_name(op), algorithm, shape, bytes, threads);
		topo_report_free(r);
	}
	fixture_free(&f);
}

static void test_all_reducing(void)
{
	int64_t lane_min = topo__tune.lane_min;
	size_t sizes[] = {64, 4096};
	const struct op_algo *algos;
	size_t nalgos = all_algos(&algos);

	topo__tune.lane_min = 1;
	for (size_t a = 0; a < nalgos; a++)
		if (topo_op_reduces(algos[a].op))
			for (size_t s = 0; s < 2; s++)
				for (size_t z = 0; z < 2; z++)
					reducing_case(algos[a].op,
						      algos[a].name, shapes[s],
						      sizes[z]);
	topo__tune.lane_min = lane_min;
}

/* ---------------------------------------------------------------------- */
/* A failed delivery inside a lane */

static void test_failure(void)
{
	struct fixture f;
	topo_report *r;
	int rc, homes = topo__tune.exec_homes;
	const char *kind = NULL, *text = NULL;

	star(&f);
	if (f.p == NULL)
		return;
	topo__tune.exec_homes = 0;
	w_reset(f.p, false, 3);
	r = run(f.p, 2, 3, &rc);
	CHECK_INT(rc, 0);
	CHECK(r != NULL && !topo_report_verified(r),
	      "a failed combine fails the run");
	if (r != NULL) {
		char want[64];

		CHECK_INT(topo_report_error_count(r), 1);
		topo_report_error(r, 0, &kind, &text);
		snprintf(want, sizeof(want), "message %lld ",
			 (long long)atomic_load(&w.failed_msg));
		CHECK(kind != NULL && strcmp(kind, "failed") == 0 &&
			  text != NULL && strstr(text, want) != NULL,
		      "reported as %s: %s (want %s)", kind ? kind : "-",
		      text ? text : "-", want);
		CHECK_INT(topo_report_iterations(r), 0);
	}
	topo_report_free(r);
	/* The same plan again: lanes start empty. */
	w_reset(f.p, false, -1);
	r = run(f.p, 2, 3, NULL);
	CHECK(r != NULL && topo_report_verified(r),
	      "the run after a failed one verifies");
	topo_report_free(r);
	topo__tune.exec_homes = homes;
	fixture_free(&f);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	CHECK_RUN(arranged, test_arranged());
	CHECK_RUN(all_reducing, test_all_reducing());
	CHECK_RUN(failure, test_failure());
	return check_done("test_lanes");
}
