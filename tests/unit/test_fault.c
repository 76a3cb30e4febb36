/*
 * test_fault.c - faults while a plan runs, and the allocation hook itself.
 *
 * Runs go through topo__plan_run_transport with a transport that wraps the
 * in-process one and can fail a chosen message (on a chosen iteration) or
 * slow every delivery down.  A worker whose delivery fails must stop the
 * run: the messages waiting for it never run, the other workers drop what
 * is queued and are joined (the process has no thread left once the run
 * returns: /proc/self/task), the call returns promptly, and the report
 * names the message.  A run past its timeout likewise, with one "timeout"
 * error.  Allocation failures anywhere in a run, also inside a worker
 * (its stack's growth, then the queue's: a task lost for want of memory),
 * end in a verified report or TOPO_ENOMEM, never a hang or a leak.
 *
 * The TOPO_FAIL_ALLOC environment hook is read once per process, so its
 * cases run in child processes (fork): the N-th allocation fails, jansson
 * is routed through the hook only when it is set, and a jansson allocation
 * failure never yields a silently truncated document.
 */
#define TOPO_INTERNAL
#include "alloc_hook.h"
#include "planfix.h"
#include "timeouts.h"

#include <dirent.h>
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#else
#define SANITIZED 0
#endif
/* ThreadSanitizer starts a thread of its own with the first
 * pthread_create. */
#ifdef __SANITIZE_THREAD__
#define RUNTIME_THREADS 1
#else
#define RUNTIME_THREADS 0
#endif

/* Threads of the process between runs: 1, and the sanitizer's. */
static int base;

/* ---------------------------------------------------------------------- */
/* Fixtures */

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Threads of this process in /proc/self/task. */
static int tasks_listed(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

/* Threads of this process once the joined ones are gone: pthread_join
 * returns when the kernel clears the thread's id, a moment before it
 * drops the task from /proc, so a count right after a join may still see
 * it.  Waits up to a second for the count to come down to `want`. */
static int threads_now_want(int want)
{
	int n = tasks_listed();

	for (int i = 0; i < 1000 && n > want; i++) {
		usleep(1000);
		n = tasks_listed();
	}
	return n;
}

/* A plan of op over `nodes` nodes of `tasks` tasks (a binary tree
 * network: planfix.h) and a tree of `shape`; exits 2 if it cannot be
 * made. */
static void fault_fixture(struct fixture *f, int nodes, int tasks,
			  const char *shape, enum topo_op op,
			  const char *algorithm, size_t bytes)
{
	struct topo_plan_params pp;
	topo_error err;
	char tasks_of[64];

	memset(f, 0, sizeof(*f));
	snprintf(tasks_of, sizeof(tasks_of), "%d, \"tasks_per_node\": %d",
		 nodes, tasks);
	f->m = fixture_machine(tasks_of);
	topo_error_clear(&err);
	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = algorithm;
	pp.bytes = bytes;
	if (topo_group_new(&f->g, f->m, "world", "all", &err) != 0 ||
	    topo_tree_new(&f->t, f->g, shape, &err) != 0 ||
	    topo_plan_new(&f->p, f->t, &pp, &err) != 0) {
		fprintf(stderr, "fixture: %s\n", err.text);
		exit(2);
	}
}

/* ---------------------------------------------------------------------- */
/* A transport that fails or stalls: the in-process one underneath.  The
 * transport interface passes no context besides the state open() makes,
 * so the test's settings are this one global (runs are sequential). */

static struct {
	int64_t fail_msg; /* message to fail, -1: none */
	int fail_on;	  /* ... on its fail_on-th delivery (1: first) */
	int64_t bad_msg;  /* message whose delivery is wrong, -1: none */
	int bad_on;	  /* ... on its bad_on-th delivery (1: first) */
	_Atomic int bad_seen; /* deliveries of bad_msg so far */
	int verify;	      /* the runs' topo_run_params verify */
	long delay_ns;	  /* every delivery sleeps this long first */
	_Atomic int64_t attempts;
	_Atomic int64_t late;	/* attempts begun after the failure */
	_Atomic int fail_seen;	/* deliveries of fail_msg so far */
	_Atomic double fail_at; /* when the failure was returned */
	_Atomic int *tried;	/* [nmsg]: deliveries of each message */
	int64_t nmsg;
} fx;

static void fx_reset(int64_t fail_msg, int fail_on, long delay_ns)
{
	free(fx.tried);
	fx.fail_msg = fail_msg;
	fx.fail_on = fail_on;
	fx.bad_msg = -1;
	fx.bad_on = 0;
	atomic_store(&fx.bad_seen, 0);
	fx.verify = TOPO_VERIFY_EVERY;
	fx.delay_ns = delay_ns;
	atomic_store(&fx.attempts, 0);
	atomic_store(&fx.late, 0);
	atomic_store(&fx.fail_seen, 0);
	atomic_store(&fx.fail_at, 0.0);
	fx.tried = NULL;
	fx.nmsg = 0;
}

static int fx_open(void **state, const struct topo_plan *p, topo_error *err)
{
	fx.nmsg = p->nmsg;
	fx.tried = calloc((size_t)p->nmsg + 1, sizeof(*fx.tried));
	if (fx.tried == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "test: calloc");
	return topo__transport_inproc.open(state, p, err);
}

static int fx_deliver(void *state, const struct topo_plan *p, int64_t m)
{
	atomic_fetch_add(&fx.attempts, 1);
	atomic_fetch_add(&fx.tried[m], 1);
	if (atomic_load(&fx.fail_at) > 0)
		atomic_fetch_add(&fx.late, 1);
	if (fx.delay_ns > 0) {
		struct timespec d = {0, fx.delay_ns};

		nanosleep(&d, NULL);
	}
	if (m == fx.fail_msg &&
	    atomic_fetch_add(&fx.fail_seen, 1) + 1 == fx.fail_on) {
		atomic_store(&fx.fail_at, now());
		return TOPO_EIO;
	}
	if (m == fx.bad_msg &&
	    atomic_fetch_add(&fx.bad_seen, 1) + 1 == fx.bad_on) {
		/* Delivered, then its first byte spoilt before anything
		 * that waits for it can read it. */
		const struct topo__msg *g = &p->msg[m];
		int rc = topo__transport_inproc.deliver(state, p, m);

		pass_buffer(state, g->dst, g->dbuf)[g->doff] ^= 0x5a;
		return rc;
	}
	return topo__transport_inproc.deliver(state, p, m);
}

static const struct topo__transport_ops faulty = {
    .name = "faulty",
    .open = fx_open,
    .close = pass_close,
    .buffer = pass_buffer,
    .deliver = fx_deliver,
};

static topo_report *run(const topo_plan *p, int threads, int iterations,
			double timeout, int *rc, topo_error *err)
{
	struct topo_run_params rp;
	topo_report *r = NULL;

	topo_run_params_init(&rp, sizeof(rp));
	rp.threads = threads;
	rp.iterations = iterations;
	rp.timeout = timeout;
	rp.verify = fx.verify;
	topo_error_clear(err);
	*rc = topo__plan_run_transport(p, &rp, &faulty, &r, err);
	return r;
}

/* The message whose destination is rank dst (its first one). */
static int64_t message_to(const topo_plan *p, int32_t dst)
{
	for (int64_t i = 0; i < p->nmsg; i++)
		if (p->msg[i].dst == dst && p->msg[i].src != dst)
			return i;
	return -1;
}

/* Messages that wait, directly or not, for message m, marked in `after`
 * ([nmsg], zeroed by the caller). */
static void mark_after(const topo_plan *p, int64_t m, char *after)
{
	for (int64_t k = p->succ_off[m]; k < p->succ_off[m + 1]; k++) {
		int64_t s = p->succ[k];

		if (!after[s]) {
			after[s] = 1;
			mark_after(p, s, after);
		}
	}
}

/* ---------------------------------------------------------------------- */
/* A delivery that fails */

/*
 * 4096 members on a binary tree, bcast over it: the message to rank 5
 * fails on its first delivery.  Every delivery takes 100 us, so a whole
 * iteration takes 0.4 s over one thread; the failure comes early.
 */
static void test_failed_delivery(int threads)
{
	struct fixture f;
	topo_report *r;
	topo_error err;
	const char *kind, *detail;
	char want[200], *after;
	int64_t m, late = 0;
	double t1;
	int rc;

	fault_fixture(&f, 256, 16, "kary:2", TOPO_OP_BCAST, NULL, 8);
	m = message_to(f.p, 5);
	CHECK(m >= 0, "no message to rank 5");
	fx_reset(m, 1, 100000);
	r = run(f.p, threads, 3, 0, &rc, &err);
	t1 = now();
	CHECK_INT(rc, 0);
	CHECK_INT(threads_now_want(base), base);
	CHECK(!topo_report_verified(r), "threads %d: failed run verified",
	      threads);
	CHECK_INT(topo_report_iterations(r), 0);
	CHECK_INT(topo_report_error_count(r), 1);
	CHECK_INT(topo_report_error_total(r), 1);
	CHECK_INT(topo_report_error(r, 0, &kind, &detail),
		  topo_group_members(f.g)[5]);
	CHECK_STR(kind, "failed");
	snprintf(want, sizeof(want),
		 "message %lld from endpoint %d to endpoint %d could not be "
		 "delivered: input/output error",
		 (long long)m, (int)topo_group_members(f.g)[f.p->msg[m].src],
		 (int)topo_group_members(f.g)[5]);
	CHECK_STR(detail, want);
	/* Stopped: the workers only finished the delivery in hand, and
	 * nothing that waits for the failed message ran.  The messages
	 * tried after the failure show it, whatever the load; the time is
	 * bounded only against a hang. */
	CHECK(t1 - atomic_load(&fx.fail_at) < 30,
	      "threads %d: returned %.3f s after the failure", threads,
	      t1 - atomic_load(&fx.fail_at));
	/* Each other worker may start a delivery or two before it sees the
	 * abort; a run that went on would try thousands. */
	CHECK(atomic_load(&fx.late) <= 4 * threads + 32,
	      "threads %d: %lld messages tried after the failure", threads,
	      (long long)atomic_load(&fx.late));
	after = calloc((size_t)f.p->nmsg, 1);
	mark_after(f.p, m, after);
	for (int64_t i = 0; i < f.p->nmsg; i++)
		late += after[i] && atomic_load(&fx.tried[i]) > 0;
	CHECK_INT(late, 0);
	CHECK_INT(atomic_load(&fx.tried[m]), 1);
	free(after);
	topo_report_free(r);
	fixture_free(&f);
}

/* A failure in the second of three iterations: the first is kept (timed),
 * the run stops there. */
static void test_failed_later(void)
{
	struct fixture f;
	topo_report *r;
	topo_error err;
	const char *kind, *detail;
	double lo, med, hi;
	int64_t m;
	int rc;

	fault_fixture(&f, 16, 4, "binomial", TOPO_OP_REDUCE, "tree", 64);
	m = message_to(f.p, 0);
	CHECK(m >= 0, "no message to rank 0");
	fx_reset(m, 2, 0);
	r = run(f.p, 4, 3, 0, &rc, &err);
	CHECK_INT(rc, 0);
	CHECK_INT(threads_now_want(base), base);
	CHECK(!topo_report_verified(r), "failed run verified");
	CHECK_INT(topo_report_iterations(r), 1);
	CHECK_INT(topo_report_error_count(r), 1);
	CHECK_INT(topo_report_error(r, 0, &kind, &detail),
		  topo_group_members(f.g)[0]);
	CHECK_STR(kind, "failed");
	topo_report_seconds(r, &lo, &med, &hi);
	CHECK(lo > 0 && lo == med && med == hi, "seconds %g %g %g", lo, med,
	      hi);
	CHECK_INT(atomic_load(&fx.fail_seen), 2);
	topo_report_free(r);
	fixture_free(&f);

	/* The same plan with nothing failing verifies: the wrapper itself is
	 * faithful. */
	fault_fixture(&f, 16, 4, "binomial", TOPO_OP_REDUCE, "tree", 64);
	fx_reset(-1, 0, 0);
	r = run(f.p, 4, 3, 0, &rc, &err);
	CHECK_INT(rc, 0);
	CHECK(topo_report_verified(r), "clean run not verified");
	CHECK_INT(topo_report_iterations(r), 3);
	CHECK_INT(atomic_load(&fx.attempts), 3 * f.p->nmsg);
	topo_report_free(r);
	fixture_free(&f);
}

/* ---------------------------------------------------------------------- */
/* Verifying every iteration, or the last */

/*
 * A bcast over 64 members whose message to rank 5 leaves a wrong byte in
 * one chosen iteration of three.  Verifying every iteration catches it in
 * that iteration and stops there; verifying the last only catches it in
 * the last and lets a fault of an earlier one by, as documented, while
 * every iteration still runs and is timed.  A failed delivery ends a run
 * in the iteration it happens either way.
 */
/* A run of plan p verified as `verify` says, message m's bad_on-th
 * delivery spoilt (0: none). */
static topo_report *run_spoilt(const topo_plan *p, int64_t m, int bad_on,
			       int verify, int threads, int iterations, int *rc,
			       topo_error *err)
{
	fx_reset(-1, 0, 0);
	fx.bad_msg = bad_on > 0 ? m : -1;
	fx.bad_on = bad_on;
	fx.verify = verify;
	return run(p, threads, iterations, 0, rc, err);
}

static void test_verify_last(void)
{
	struct fixture f;
	topo_report *r;
	topo_error err;
	const char *kind, *detail;
	int64_t m;
	int rc;

	fault_fixture(&f, 16, 4, "kary:2", TOPO_OP_BCAST, NULL, 64);
	m = message_to(f.p, 5);
	CHECK(m >= 0, "no message to rank 5");
	for (int threads = 1; threads <= 4; threads *= 2) {
		/* every: stopped in the second iteration, which is
		 * reported */
		r = run_spoilt(f.p, m, 2, TOPO_VERIFY_EVERY, threads, 3, &rc,
			       &err);
		CHECK_INT(rc, 0);
		CHECK(!topo_report_verified(r), "every: a wrong byte verified");
		CHECK_INT(topo_report_iterations(r), 2);
		CHECK_INT(topo_report_error_total(r) >= 1, 1);
		CHECK_INT(topo_report_error(r, 0, &kind, &detail),
			  topo_group_members(f.g)[5]);
		CHECK_STR(kind, "wrong data");
		topo_report_free(r);

		/* last: the second iteration's wrong byte is not looked
		 * at; all three ran */
		r = run_spoilt(f.p, m, 2, TOPO_VERIFY_LAST, threads, 3, &rc,
			       &err);
		CHECK_INT(rc, 0);
		CHECK(topo_report_verified(r),
		      "last: an earlier iteration was verified");
		CHECK_INT(topo_report_iterations(r), 3);
		CHECK_INT(atomic_load(&fx.attempts), 3 * f.p->nmsg);
		topo_report_free(r);

		/* last: the last iteration's wrong byte is */
		r = run_spoilt(f.p, m, 3, TOPO_VERIFY_LAST, threads, 3, &rc,
			       &err);
		CHECK_INT(rc, 0);
		CHECK(!topo_report_verified(r),
		      "last: the last iteration's wrong byte verified");
		CHECK_INT(topo_report_iterations(r), 3);
		CHECK_INT(topo_report_error(r, 0, &kind, &detail),
			  topo_group_members(f.g)[5]);
		CHECK_STR(kind, "wrong data");
		topo_report_free(r);

		/* last: a failed delivery in the second iteration still
		 * ends the run there */
		fx_reset(m, 2, 0);
		fx.verify = TOPO_VERIFY_LAST;
		r = run(f.p, threads, 3, 0, &rc, &err);
		CHECK_INT(rc, 0);
		CHECK(!topo_report_verified(r), "last: a failed run verified");
		CHECK_INT(topo_report_iterations(r), 1);
		CHECK_INT(topo_report_error(r, 0, &kind, &detail),
			  topo_group_members(f.g)[5]);
		CHECK_STR(kind, "failed");
		CHECK_INT(atomic_load(&fx.fail_seen), 2);
		topo_report_free(r);

		/* last, nothing wrong: verified, and one iteration is a
		 * run whose only iteration is the last */
		for (int it = 1; it <= 3; it += 2) {
			r = run_spoilt(f.p, m, 0, TOPO_VERIFY_LAST, threads, it,
				       &rc, &err);
			CHECK_INT(rc, 0);
			CHECK(topo_report_verified(r),
			      "last: clean run of %d "
			      "not verified",
			      it);
			CHECK_INT(topo_report_iterations(r), it);
			topo_report_free(r);
		}
	}
	/* An iteration of one: its wrong byte is found under either. */
	for (int v = TOPO_VERIFY_EVERY; v <= TOPO_VERIFY_LAST; v++) {
		r = run_spoilt(f.p, m, 1, v, 2, 1, &rc, &err);
		CHECK_INT(rc, 0);
		CHECK(!topo_report_verified(r),
		      "verify %d: one bad iteration "
		      "verified",
		      v);
		topo_report_free(r);
	}
	fixture_free(&f);
}

/* ---------------------------------------------------------------------- */
/* Timeouts */

/* Deliveries of 2 ms over 4095 messages and 4 threads would take 2 s an
 * iteration, 10 s for the 5: the run stops at its 0.3 s timeout, short of
 * its messages, and says so in one of the documented words (timeouts.h).
 * Those sleeps bound a run that ignored its deadline from below whatever
 * the load, so a stop within them is a stop at the deadline. */
static void test_timeout(void)
{
	struct fixture f;
	struct timespec pause = {0, 50000000};
	topo_report *r;
	topo_error err;
	const char *kind, *detail;
	double t0, t1;
	int64_t tried;
	int rc;

	fault_fixture(&f, 256, 16, "kary:2", TOPO_OP_BCAST, NULL, 8);
	fx_reset(-1, 0, 2000000);
	t0 = now();
	r = run(f.p, 4, 5, 0.3, &rc, &err);
	t1 = now();
	CHECK_INT(rc, 0);
	CHECK_INT(threads_now_want(base), base);
	CHECK(t1 - t0 >= 0.3 && t1 - t0 < 30, /* against a hang only */
	      "run with a 0.3 s timeout took %.3f s", t1 - t0);
	CHECK(!topo_report_verified(r), "timed-out run verified");
	CHECK_INT(topo_report_iterations(r), 0);
	CHECK_INT(topo_report_error_count(r), 1);
	CHECK_INT(topo_report_error(r, 0, &kind, &detail), -1);
	CHECK_STR(kind, "timeout");
	CHECK(timeout_detail_ok(detail, 0.3, 5, 4096),
	      "not a documented timeout: %s", detail ? detail : "(null)");
	tried = atomic_load(&fx.attempts);
	CHECK(tried < f.p->nmsg, "%lld of %lld messages tried",
	      (long long)tried, (long long)f.p->nmsg);
	/* Nobody is still delivering. */
	nanosleep(&pause, NULL);
	CHECK_INT(atomic_load(&fx.attempts), tried);
	topo_report_free(r);
	fixture_free(&f);

	/* Between iterations: fast ones, each about 10 ms, many of them
	 * (their sleeps alone would take hours). */
	fault_fixture(&f, 16, 16, "binomial", TOPO_OP_BCAST, NULL, 8);
	fx_reset(-1, 0, 20000);
	t0 = now();
	r = run(f.p, 2, 1000000, 0.2, &rc, &err);
	t1 = now();
	CHECK_INT(rc, 0);
	CHECK_INT(threads_now_want(base), base);
	CHECK(t1 - t0 >= 0.2 && t1 - t0 < 30, /* against a hang only */
	      "run with a 0.2 s timeout took %.3f s", t1 - t0);
	CHECK(!topo_report_verified(r), "timed-out run verified");
	CHECK(topo_report_iterations(r) < 1000000, "%d iterations",
	      topo_report_iterations(r));
	CHECK_INT(topo_report_error_count(r), 1);
	CHECK_INT(topo_report_error(r, 0, &kind, &detail), -1);
	CHECK_STR(kind, "timeout");
	CHECK(timeout_detail_ok(detail, 0.2, 1000000, 256),
	      "not a documented timeout: %s", detail ? detail : "(null)");
	topo_report_free(r);
	fixture_free(&f);
}

/* ---------------------------------------------------------------------- */
/* Allocation failures during a run */

/*
 * A star of 4096 members (kary:4095): the root's 4095 messages wait for
 * nothing, so the seed task pushes them all onto one worker's stack, which
 * must grow (from 1024 entries) inside the worker.  One failed allocation
 * anywhere gives a verified run (the stack's growth falls back on the
 * queue) or TOPO_ENOMEM; every allocation from a point on failing reaches
 * the lost task (the queue cannot grow either) and TOPO_ENOMEM "while
 * running the plan".  No thread is left behind either way.
 */
static void test_alloc(int threads)
{
	struct fixture f;
	topo_report *r;
	topo_error err;
	long total, k, tolerated = 0, in_run = 0;
	int rc;

	fault_fixture(&f, 256, 16, "kary:4095", TOPO_OP_BCAST, NULL, 8);
	fx_reset(-1, 0, 0);
	total = topo__alloc_fail_after(-1);
	r = run(f.p, threads, 1, 0, &rc, &err);
	total = topo__alloc_fail_after(-1) - total;
	CHECK_INT(rc, 0);
	CHECK(topo_report_verified(r), "run not verified");
	topo_report_free(r);
	CHECK(total > 8, "a run made %ld allocations", total);

	/* One failure at a time. */
	for (k = 0; k <= total; k++) {
		fx_reset(-1, 0, 0);
		topo__alloc_fail_after(k);
		r = run(f.p, threads, 1, 0, &rc, &err);
		topo__alloc_fail_after(-1);
		CHECK_INT(threads_now_want(base), base);
		if (rc == 0) {
			CHECK(topo_report_verified(r),
			      "k %ld: run not verified", k);
			tolerated += k < total;
			topo_report_free(r);
			continue;
		}
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK(r == NULL, "k %ld: failed run gave a report", k);
		CHECK(strncmp(err.text, "out of memory", 13) == 0, "k %ld: %s",
		      k, err.text);
	}
	/* The stack's growth at least (threads 1: only there). */
	CHECK(tolerated >= 1, "threads %d: no failure was tolerated", threads);
	CHECK_INT(rc, 0);

	/* Every allocation from k on. */
	for (k = 0; k <= total; k++) {
		fx_reset(-1, 0, 0);
		topo__alloc_fail_from(k);
		r = run(f.p, threads, 1, 0, &rc, &err);
		topo__alloc_fail_after(-1);
		CHECK_INT(threads_now_want(base), base);
		if (rc == 0) {
			CHECK(topo_report_verified(r),
			      "k %ld: run not verified", k);
			topo_report_free(r);
			continue;
		}
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK(r == NULL, "k %ld: failed run gave a report", k);
		if (strcmp(err.text, "out of memory while running the plan") ==
		    0)
			in_run++;
		else
			CHECK(strncmp(err.text, "out of memory", 13) == 0,
			      "k %ld: %s", k, err.text);
	}
	/* One thread is deterministic: its growth always comes at the same
	 * allocation.  More threads share and take tasks as they go, so the
	 * run's allocations vary and the last k may still find one. */
	if (threads == 1) {
		CHECK(in_run >= 1, "no task was lost inside the worker");
		CHECK_INT(rc, 0);
	}
	fixture_free(&f);
}

/* ---------------------------------------------------------------------- */
/* The TOPO_FAIL_ALLOC environment hook, in child processes */

static const char doc[] =
    "{\"name\": \"a-machine-with-a-rather-long-name-to-grow-buffers\", "
    "\"nodes\": 4, \"tasks_per_node\": 2, "
    "\"network\": {\"type\": \"kary\", \"fanout\": 2}, "
    "\"groups\": {\"a-group-whose-name-is-long-enough-to-grow\": "
    "\"cols 0::2\", \"second-group-with-another-quite-long-name\": "
    "\"node 0,3\"}}";

/* Runs fn(arg) in a child with TOPO_FAIL_ALLOC=value; the child's exit
 * status is its number of failed checks. */
static void in_child(const char *what, const char *value,
		     void (*fn)(const char *), const char *arg)
{
	pid_t pid;
	int status = 0;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		CHECK(0, "%s: fork failed", what);
		return;
	}
	if (pid == 0) {
		if (value != NULL)
			setenv("TOPO_FAIL_ALLOC", value, 1);
		else
			unsetenv("TOPO_FAIL_ALLOC");
		check_failed = 0;
		fn(arg);
		fflush(NULL);
		_exit(check_failed > 100 ? 100 : (int)check_failed);
	}
	CHECK(waitpid(pid, &status, 0) == pid, "%s: waitpid", what);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	      "%s: the child failed %d checks (status %#x)", what,
	      WIFEXITED(status) ? WEXITSTATUS(status) : -1, status);
}

/* The first allocation of the process fails when value is "0".  jansson
 * allocates through the library's parse allocator whether the hook is set
 * or not (so that its failures are noticed in production too). */
static void child_first(const char *armed)
{
	json_malloc_t mf;
	json_free_t ff;
	topo_machine *m = NULL;
	topo_error err;
	int rc;

	topo_error_clear(&err);
	rc = topo_machine_load_string(&m, doc, strlen(doc), "doc", &err);
	json_get_alloc_funcs(&mf, &ff);
	if (*armed == 'y') {
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK_STR(err.text, "out of memory parsing JSON");
		CHECK_STR(err.source, "doc");
		CHECK(mf != malloc, "jansson not routed through the hook");
		CHECK(topo__alloc_env_hooked(), "hook not armed");
		/* Only one allocation fails. */
		topo_error_clear(&err);
		rc =
		    topo_machine_load_string(&m, doc, strlen(doc), "doc", &err);
		CHECK_INT(rc, 0);
	} else {
		CHECK_INT(rc, 0);
		CHECK(mf != malloc && ff != free,
		      "jansson not routed through the parse allocator");
		CHECK(!topo__alloc_env_hooked(), "hook armed");
	}
	topo_machine_free(m);
}

/* A program that uses jansson itself and set its own allocator before
 * libtopo first parsed keeps it: jansson's allocations, ours included,
 * go to it, and what it allocated is freed by it. */
static long host_mallocs, host_frees;

static void *host_malloc(size_t size)
{
	host_mallocs++;
	return malloc(size);
}

static void host_free(void *p)
{
	if (p != NULL)
		host_frees++;
	free(p);
}

static void child_host_allocator(const char *unused)
{
	topo_machine *m = NULL;
	topo_error err;
	json_t *own;
	long before;

	(void)unused;
	json_set_alloc_funcs(host_malloc, host_free);
	own = json_pack("{s:i}", "mine", 1); /* allocated by the host's */
	topo_error_clear(&err);
	CHECK_INT(topo_machine_load_string(&m, doc, strlen(doc), "doc", &err),
		  0);
	CHECK(host_mallocs > 3, "jansson did not use the host's allocator "
				"during the parse (%ld)",
	      host_mallocs);
	topo_machine_free(m);
	before = host_frees;
	json_decref(own); /* the host's object, freed by the host's free */
	CHECK(host_frees > before, "the host's object was not freed by the "
				   "host's free");
	/* After the parse, jansson outside libtopo still reaches the host's
	 * allocator. */
	before = host_mallocs;
	own = json_string("after");
	CHECK(host_mallocs > before, "jansson after the parse bypasses the "
				     "host's allocator");
	json_decref(own);
	CHECK_INT(host_mallocs, host_frees);
}

/* With the hook set (far away), every single allocation failure during
 * the parse is either reported as TOPO_ENOMEM or invisible: the machine
 * loaded is the one without failures.  jansson's lexer drops a byte when
 * its buffer cannot grow; that must not pass for a good parse. */
static void child_sweep(const char *unused)
{
	topo_machine *ref = NULL, *m;
	topo_error err;
	long k, failed = 0;
	int rc = -1;

	(void)unused;
	topo_error_clear(&err);
	CHECK_INT(topo_machine_load_string(&ref, doc, strlen(doc), NULL, &err),
		  0);
	for (k = 0; k < 2000 && rc != 0; k++) {
		m = NULL;
		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo_machine_load_string(&m, doc, strlen(doc), NULL, &err);
		topo__alloc_fail_after(-1);
		if (rc != 0) {
			failed++;
			CHECK_INT(rc, TOPO_ENOMEM);
			CHECK(m == NULL, "k %ld: *out set", k);
			continue;
		}
		CHECK_STR(topo_machine_name(m), topo_machine_name(ref));
		CHECK_INT(topo_machine_group_count(m), 2);
		for (size_t i = 0; i < 2; i++) {
			CHECK_STR(topo_machine_group_name(m, i),
				  topo_machine_group_name(ref, i));
			CHECK_STR(topo_machine_group_spec(m, i),
				  topo_machine_group_spec(ref, i));
		}
		topo_machine_free(m);
	}
	CHECK_INT(rc, 0);
	CHECK(failed > 20, "only %ld allocations failed", failed);
	topo_machine_free(ref);
}

static void test_env_hook(void)
{
	in_child("TOPO_FAIL_ALLOC=0", "0", child_first, "y");
	in_child("TOPO_FAIL_ALLOC unset", NULL, child_first, "n");
	in_child("TOPO_FAIL_ALLOC empty", "", child_first, "n");
	in_child("TOPO_FAIL_ALLOC=-1", "-1", child_first, "n");
	in_child("TOPO_FAIL_ALLOC=5x", "5x", child_first, "n");
	in_child("TOPO_FAIL_ALLOC sweep", "1000000000", child_sweep, NULL);
	in_child("host allocator", NULL, child_host_allocator, NULL);
}

int main(int argc, char **argv)
{
	struct fixture f;
	topo_report *r;
	topo_error err;
	int rc;

	check_args(argc, argv);
	/* Every arena mapped (alloc.c's topo__block_alloc), however small,
	 * so that each failure path below must return its mappings too. */
	topo__tune.map_min = 0;
	/* Children first: fork is simplest with no thread started yet. */
	CHECK_RUN(env_hook, test_env_hook());
	CHECK_INT(threads_now_want(1), 1);
	/* A first run starts whatever threads the runtime keeps. */
	fault_fixture(&f, 2, 2, "binomial", TOPO_OP_BCAST, NULL, 8);
	fx_reset(-1, 0, 0);
	r = run(f.p, 2, 1, 0, &rc, &err);
	CHECK(rc == 0 && topo_report_verified(r), "first run: %s", err.text);
	topo_report_free(r);
	fixture_free(&f);
	base = threads_now_want(1 + RUNTIME_THREADS);
	CHECK_INT(base, 1 + RUNTIME_THREADS);
	for (int threads = 1; threads <= 8; threads *= 2)
		CHECK_RUN(failed_delivery, test_failed_delivery(threads));
	CHECK_RUN(failed_later, test_failed_later());
	CHECK_RUN(verify_last, test_verify_last());
	CHECK_RUN(timeout, test_timeout());
	CHECK_RUN(alloc, test_alloc(1));
	CHECK_RUN(alloc, test_alloc(SANITIZED ? 2 : 4));
	CHECK_INT(threads_now_want(base), base);
	fx_reset(-1, 0, 0);
	/* failed, stalled and timed-out runs returned their mapped arenas */
	CHECK_INT(topo__blocks_mapped(), 0);
	return check_done("test_fault");
}
