/*
 * test_pool.c - the executor's worker pool (pool.c).
 *
 * Every task records that it ran (atomically, so a task run twice is seen
 * as 2 and ThreadSanitizer sees no race); the shapes are those plans make:
 * many independent tasks pushed from outside, a chain of dependent tasks
 * (each pushes the next), a binary tree, and one task releasing a huge
 * fan-out.  The caller is participant 0: a small fan-out runs on it alone,
 * with no hand-off, and it runs queued tasks while a worker is blocked.
 * Then the ways a wait ends early: a deadline while a task is blocked (the
 * pool waits for it, drops what is queued and is reusable), an abort from
 * inside a task and from outside, and pushes that find no memory.  Tasks
 * meant for one participant (topo__pool_push_to) run there.  Idle
 * participants must not use the CPU, spinning or not; after
 * topo__pool_ready two tasks pushed by the caller run at once, one each.
 * Then the CPUs the
 * process may run on (cpus.c): masks of any size counted, and each
 * participant pinned to the i-th allowed CPU when there are enough, the
 * caller's own mask restored afterwards.  Prints tasks per second.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>

#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#define BIG (1 << 17)
#else
#define SANITIZED 0
#define BIG (1 << 20)
#endif

enum shape {
	FLAT,
	CHAIN,
	TREE,
	FANOUT,
	SLEEPY,
	BLOCKING,
	ABORTING,
	GROWING,
	MEETING,
	STOPPING,
	NAP
};

struct ctx {
	enum shape shape;
	int64_t n;
	int32_t *ran;	      /* [n]: times each task ran */
	int32_t *on;	      /* [n]: the participant that last ran it */
	int64_t by_worker[8]; /* tasks run by each worker (owner writes) */
	struct topo__pool *pool;
	/* BLOCKING: task 0 blocks until released, then pushes task 1. */
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int started, released;
	/* ABORTING: task abort_at aborts, then pushes its successor;
	 * STOPPING: it only aborts. */
	int64_t abort_at;
	/* MEETING: each task arrives, then waits (up to 30 s) for all n;
	 * met counts the tasks that saw every other one arrive. */
	int arrived, met;
	/* NAP: with nap_need > 0, the task sleeps until the thread of
	 * nap_clock has used nap_need s of CPU since nap_from (30 s at
	 * most), instead of 600 ms. */
	clockid_t nap_clock;
	double nap_from, nap_need;
};

static double now(void);
static double cpu_seconds(clockid_t clock);

/* A NAP task: 600 ms asleep (a wait for it is long), or asleep until the
 * thread watched has used the CPU asked for, however long a busy host
 * takes to give it that (30 s at most). */
static void nap(const struct ctx *c)
{
	struct timespec d = {0, 600 * 1000 * 1000},
			step = {0, 10 * 1000 * 1000};
	double t0 = now();

	if (c->nap_need <= 0) {
		nanosleep(&d, NULL);
		return;
	}
	while (cpu_seconds(c->nap_clock) - c->nap_from < c->nap_need &&
	       now() - t0 < 30)
		nanosleep(&step, NULL);
}

static void run(void *vctx, int64_t task, int worker)
{
	struct ctx *c = vctx;

	__atomic_fetch_add(&c->ran[task], 1, __ATOMIC_RELAXED);
	__atomic_store_n(&c->on[task], worker, __ATOMIC_RELAXED);
	if (worker >= 0 && worker < 8)
		c->by_worker[worker]++;
	switch (c->shape) {
	case FLAT:
		break;
	case CHAIN:
		if (task + 1 < c->n)
			topo__pool_push(c->pool, task + 1, worker);
		break;
	case TREE:
		for (int64_t k = 2 * task + 1; k <= 2 * task + 2; k++)
			if (k < c->n)
				topo__pool_push(c->pool, k, worker);
		break;
	case FANOUT:
		if (task == 0)
			for (int64_t k = 1; k < c->n; k++)
				topo__pool_push(c->pool, k, worker);
		break;
	case SLEEPY:
		/* Task 0 releases the others, which each sleep 5 ms: only
		 * sharing lets several workers sleep at once. */
		if (task == 0) {
			for (int64_t k = 1; k < c->n; k++)
				topo__pool_push(c->pool, k, worker);
		} else {
			struct timespec d = {0, 5 * 1000 * 1000};

			nanosleep(&d, NULL);
		}
		break;
	case NAP:
		nap(c);
		break;
	case BLOCKING:
		if (task != 0)
			break;
		pthread_mutex_lock(&c->mu);
		c->started = 1;
		pthread_cond_broadcast(&c->cv);
		while (!c->released)
			pthread_cond_wait(&c->cv, &c->mu);
		pthread_mutex_unlock(&c->mu);
		topo__pool_push(c->pool, 1, worker);
		break;
	case ABORTING:
		if (task == c->abort_at)
			topo__pool_abort(c->pool);
		if (task + 1 < c->n)
			topo__pool_push(c->pool, task + 1, worker);
		break;
	case STOPPING: /* task abort_at aborts; nothing pushes */
		if (task == c->abort_at)
			topo__pool_abort(c->pool);
		break;
	case GROWING:
		/* Task 0 pushes the others; the stack's first growth fails
		 * and that task must go through the queue instead. */
		if (task != 0)
			break;
		for (int64_t k = 1; k < c->n; k++) {
			if (k == 1024)
				topo__alloc_fail_after(0);
			topo__pool_push(c->pool, k, worker);
		}
		break;
	case MEETING: {
		struct timespec d = {0, 100 * 1000};

		__atomic_fetch_add(&c->arrived, 1, __ATOMIC_ACQ_REL);
		for (int i = 0; i < 300000; i++) {
			if (__atomic_load_n(&c->arrived, __ATOMIC_ACQUIRE) ==
			    c->n) {
				__atomic_fetch_add(&c->met, 1,
						   __ATOMIC_RELAXED);
				break;
			}
			nanosleep(&d, NULL);
		}
		break;
	}
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU seconds so far on CLOCK (the process's or the calling thread's). */
static double cpu_seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double cpu_now(void)
{
	return cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
}

/* The process's CPU seconds over a sleep of span s (below 1), after
 * settling for settle s (the threads' state from before it has played
 * out). */
static double cpu_over_sleep(double settle, double span)
{
	struct timespec d = {0, (long)(span * 1e9)};
	struct timespec s = {(time_t)settle,
			     (long)((settle - (double)(time_t)settle) * 1e9)};
	double c0, c1;

	if (settle > 0)
		nanosleep(&s, NULL);
	c0 = cpu_now();
	nanosleep(&d, NULL);
	c1 = cpu_now();
	return c1 - c0;
}

/* The process's CPU seconds from now on, after settling for settle s,
 * once they reach need, or when max s have passed. */
static double cpu_until(double settle, double need, double max)
{
	struct timespec s = {0, (long)(settle * 1e9)}, step = {0, 10000000};
	double c0, t0;

	nanosleep(&s, NULL);
	c0 = cpu_now();
	t0 = now();
	while (cpu_now() - c0 < need && now() - t0 < max)
		nanosleep(&step, NULL);
	return cpu_now() - c0;
}

static struct timespec in(double seconds)
{
	struct timespec ts;
	double t = now() + seconds;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	return ts;
}

static struct ctx *ctx_new(enum shape shape, int64_t n)
{
	struct ctx *c = calloc(1, sizeof(*c));

	c->shape = shape;
	c->n = n;
	c->ran = calloc((size_t)n, sizeof(int32_t));
	c->on = calloc((size_t)n, sizeof(int32_t));
	c->abort_at = -1;
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->cv, NULL);
	return c;
}

static void ctx_free(struct ctx *c)
{
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cv);
	free(c->ran);
	free(c->on);
	free(c);
}

static struct topo__pool *pool_new(struct ctx *c, int threads)
{
	topo_error err;

	topo_error_clear(&err);
	CHECK(topo__pool_new(&c->pool, threads, run, c, &err) == 0, "%s",
	      err.text);
	if (c->pool == NULL)
		exit(2);
	return c->pool;
}

/* Counts tasks in [lo, hi) that ran exactly `times` times. */
static int64_t count_ran(const struct ctx *c, int64_t lo, int64_t hi,
			 int32_t times)
{
	int64_t k = 0;

	for (int64_t i = lo; i < hi; i++)
		k += c->ran[i] == times;
	return k;
}

static int workers_used(const struct ctx *c)
{
	int used = 0;

	for (int i = 0; i < 8; i++)
		used += c->by_worker[i] > 0;
	return used;
}

/* Runs one shape to completion and reports its rate. */
static void shape_case(enum shape shape, const char *name, int threads,
		       int64_t n, double limit)
{
	struct ctx *c = ctx_new(shape, n);
	struct timespec deadline = in(60);
	double t0, t1;
	int w;

	pool_new(c, threads);
	/* Tasks that block: any idle participant should take some. */
	if (shape == SLEEPY)
		topo__pool_wake_at(c->pool, 2);
	t0 = now();
	if (shape == FLAT)
		for (int64_t i = 0; i < n; i++)
			topo__pool_push(c->pool, i, -1);
	else
		topo__pool_push(c->pool, 0, -1);
	w = topo__pool_wait(c->pool, &deadline);
	t1 = now();
	CHECK_INT(w, 0);
	CHECK(count_ran(c, 0, n, 1) == n,
	      "%s, %d threads: %lld of %lld ran once", name, threads,
	      (long long)count_ran(c, 0, n, 1), (long long)n);
	/* The time is printed, not asserted: speed is make bench's business.
	 * That the pool shares work is asserted below by who ran tasks. */
	(void)limit;
	if (shape == SLEEPY)
		CHECK(workers_used(c) >= threads / 2,
		      "%s on %d threads: only %d worker(s) ran tasks", name,
		      threads, workers_used(c));
	printf("pool: %-7s %8lld tasks, %d thread(s): %.3f s, %.1f M tasks/s\n",
	       name, (long long)n, threads, t1 - t0,
	       (double)n / (t1 - t0) / 1e6);
	/* Reuse: the same pool runs the shape again. */
	memset(c->ran, 0, (size_t)n * sizeof(int32_t));
	topo__pool_push(c->pool, 0, -1);
	if (shape == FLAT)
		for (int64_t i = 1; i < n; i++)
			topo__pool_push(c->pool, i, -1);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
	CHECK_INT(count_ran(c, 0, n, 1), n);
	topo__pool_free(c->pool);
	ctx_free(c);
}

static void *release_later(void *arg)
{
	struct ctx *c = arg;
	struct timespec d = {0, 300 * 1000 * 1000};

	nanosleep(&d, NULL);
	pthread_mutex_lock(&c->mu);
	c->released = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* A deadline passes while task 0 is blocked on a worker: meanwhile the
 * caller runs the tasks queued behind it; wait waits for task 0 to return
 * (the pool must be idle afterwards), drops task 1 that it pushes, and
 * returns 1.  The pool then runs new work.  Needs a worker besides the
 * caller (threads >= 2). */
static void timeout_case(int threads)
{
	struct ctx *c = ctx_new(BLOCKING, 1000);
	struct timespec deadline;
	pthread_t releaser;
	double t0, t1, c0, c1;

	pool_new(c, threads);
	topo__pool_push(c->pool, 0, -1);
	pthread_mutex_lock(&c->mu);
	while (!c->started)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
	for (int64_t i = 2; i < c->n; i++)
		topo__pool_push(c->pool, i, -1);
	pthread_create(&releaser, NULL, release_later, c);
	t0 = now();
	c0 = cpu_now();
	deadline = in(0.1);
	CHECK_INT(topo__pool_wait(c->pool, &deadline), 1);
	t1 = now();
	c1 = cpu_now();
	pthread_join(releaser, NULL);
	CHECK(t1 - t0 >= 0.25,
	      "wait returned after %.3f s, before the "
	      "blocked task did",
	      t1 - t0);
	CHECK(t1 - t0 < 30, "wait took %.3f s (a hang?)", t1 - t0);
	CHECK(c1 - c0 < 0.1, "%d threads used %.3f s of CPU while waiting",
	      threads, c1 - c0);
	CHECK_INT(c->ran[0], 1);
	CHECK_INT(c->ran[1], 0);
	/* Before the deadline, the idle workers ran them, or with one
	 * worker (blocked) the caller. */
	CHECK_INT(count_ran(c, 2, c->n, 1), c->n - 2);
	if (threads == 2)
		CHECK(c->by_worker[0] == c->n - 2,
		      "the caller ran %lld of the %lld tasks queued behind "
		      "the blocked worker",
		      (long long)c->by_worker[0], (long long)c->n - 2);
	/* Reusable: everything pushed now runs. */
	c->shape = FLAT;
	memset(c->ran, 0, (size_t)c->n * sizeof(int32_t));
	for (int64_t i = 0; i < c->n; i++)
		topo__pool_push(c->pool, i, -1);
	deadline = in(30);
	CHECK_INT(topo__pool_wait(c->pool, &deadline), 0);
	CHECK_INT(count_ran(c, 0, c->n, 1), c->n);
	topo__pool_free(c->pool);
	ctx_free(c);
}

/* A plan too small to share: 16 tasks released by one, with the workers
 * asleep, run on the caller alone (no wake-up, no hand-off); with the
 * wake threshold at 2 they are shared.  Then a deadline already past
 * while the caller itself runs a long chain: it notices within
 * CLOCK_EVERY tasks and drops the rest. */
static void caller_case(int threads)
{
	struct ctx *c = ctx_new(FANOUT, 17);
	struct timespec d = {0, 20 * 1000 * 1000}, deadline = in(30);

	pool_new(c, threads);
	for (int round = 0; round < 3; round++) {
		memset(c->by_worker, 0, sizeof(c->by_worker));
		memset(c->ran, 0, (size_t)c->n * sizeof(int32_t));
		nanosleep(&d, NULL); /* past any spin: workers asleep */
		topo__pool_push(c->pool, 0, 0);
		CHECK_INT(topo__pool_wait(c->pool, &deadline), 0);
		CHECK_INT(count_ran(c, 0, c->n, 1), c->n);
		CHECK(c->by_worker[0] == c->n,
		      "%d threads, round %d: the caller ran %lld of %lld "
		      "tasks",
		      threads, round, (long long)c->by_worker[0],
		      (long long)c->n);
	}
	topo__pool_free(c->pool);
	ctx_free(c);

	c = ctx_new(CHAIN, 1000000);
	pool_new(c, threads);
	topo__pool_push(c->pool, 0, 0);
	deadline = in(-1);
	CHECK_INT(topo__pool_wait(c->pool, &deadline), 1);
	CHECK(count_ran(c, 0, c->n, 1) < 1000,
	      "a past deadline: %lld tasks ran",
	      (long long)count_ran(c, 0, c->n, 1));
	CHECK_INT(count_ran(c, 0, c->n, 2), 0);
	topo__pool_free(c->pool);
	ctx_free(c);
}

/* topo__pool_ready before a plan of few long tasks (an iteration of a
 * collective of 2 large messages): with the workers asleep, 2 tasks on the
 * caller's stack would stay there (the wake threshold is 64), so they would
 * run one after the other.  Once every worker spins, the second is taken
 * at once: the two tasks, each waiting for the other to start, meet, one on
 * each participant.  What is checked holds whatever the timing (a loaded
 * host, valgrind's one thread at a time): the workers' spin is made a
 * minute long, so that a worker once spinning still spins when the tasks
 * come, topo__pool_ready is asked until it says yes, and each task waits
 * for the other as long as a hung run would take to notice (30 s). */
static void ready_case(void)
{
	struct timespec d = {0, 20 * 1000 * 1000}, deadline = in(60);
	int64_t was = topo__tune.pool_wake_spin_ns;

	if (topo__cpus_allowed(NULL, 0) < 2) {
		check_skip("ready: fewer than 2 CPUs");
		return;
	}
	topo__tune.pool_wake_spin_ns = (int64_t)60 * 1000 * 1000 * 1000;
	for (int round = 0; round < (UNDER_VALGRIND ? 1 : 5); round++) {
		struct ctx *c = ctx_new(MEETING, 2);
		double t0 = now();
		int ready;

		pool_new(c, 2);
		nanosleep(&d, NULL); /* past any spin: asleep */
		/* Each call waits 1 ms at most, which a busy host may not
		 * give the worker: asking again extends the spin and waits
		 * anew. */
		while (!(ready = topo__pool_ready(c->pool)) && now() - t0 < 30)
			;
		CHECK(ready,
		      "round %d: topo__pool_ready never saw the worker spin "
		      "in 30 s",
		      round);
		topo__pool_push(c->pool, 0, 0);
		topo__pool_push(c->pool, 1, 0);
		CHECK_INT(topo__pool_wait(c->pool, &deadline), 0);
		CHECK_INT(count_ran(c, 0, c->n, 1), c->n);
		CHECK(c->met == 2 && c->by_worker[0] == 1 &&
			  c->by_worker[1] == 1,
		      "round %d: after topo__pool_ready, 2 tasks met %d "
		      "times (caller ran %lld, worker %lld)",
		      round, c->met, (long long)c->by_worker[0],
		      (long long)c->by_worker[1]);
		topo__pool_calm(c->pool);
		topo__pool_free(c->pool);
		ctx_free(c);
	}
	topo__tune.pool_wake_spin_ns = was;
}

/* A task aborts: its successor, pushed after the abort, is dropped. */
static void abort_case(int threads)
{
	struct ctx *c = ctx_new(ABORTING, 100000);
	struct timespec deadline = in(30);
	double t0;

	c->abort_at = 1000;
	pool_new(c, threads);
	topo__pool_push(c->pool, 0, -1);
	t0 = now();
	CHECK_INT(topo__pool_wait(c->pool, &deadline), 1);
	/* Well short of the 30 s deadline: the abort ended the wait. */
	CHECK(now() - t0 < 20, "abort took %.3f s", now() - t0);
	CHECK_INT(count_ran(c, 0, 1001, 1), 1001);
	CHECK_INT(count_ran(c, 1001, c->n, 0), c->n - 1001);
	/* Reusable: the chain now runs to its end. */
	c->abort_at = -1;
	memset(c->ran, 0, (size_t)c->n * sizeof(int32_t));
	topo__pool_push(c->pool, 0, -1);
	CHECK_INT(topo__pool_wait(c->pool, &deadline), 0);
	CHECK_INT(count_ran(c, 0, c->n, 1), c->n);
	/* An abort from outside makes the next wait return at once. */
	c->shape = FLAT;
	topo__pool_abort(c->pool);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 1);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
	topo__pool_free(c->pool);
	ctx_free(c);
}

/* topo__pool_push_to: a task for each participant runs on that one,
 * whether it spins or sleeps (rounds apart by more than the spin), and
 * with one task each nobody shares; target 0 is the caller's own stack.
 * An inbox holds 8: more tasks for one participant still all run once
 * (the rest through the queue), and so do tasks for a target out of
 * range.  A pool that drops its tasks drops mail too, and an aborted
 * wait leaves no mail behind: the next wait runs what it is given. */
static void mail_case(int threads)
{
	struct ctx *c = ctx_new(FLAT, 64);
	struct timespec pause = {0, 2 * 1000 * 1000};
	int wrong = 0;

	pool_new(c, threads);
	for (int round = 0; round < 40; round++) {
		memset(c->ran, 0, (size_t)c->n * sizeof(int32_t));
		for (int t = threads - 1; t >= 0; t--)
			topo__pool_push_to(c->pool, t, t);
		CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
		CHECK_INT(count_ran(c, 0, threads, 1), threads);
		for (int t = 0; t < threads; t++)
			wrong += c->on[t] != t;
		if (round % 4 == 3)
			nanosleep(&pause, NULL);
	}
	CHECK(wrong == 0, "%d thread(s): %d of %d tasks ran off their target",
	      threads, wrong, 40 * threads);
	/* more than an inbox holds, and targets out of range */
	memset(c->ran, 0, (size_t)c->n * sizeof(int32_t));
	for (int k = 0; k < 20; k++)
		topo__pool_push_to(c->pool, k, threads > 1 ? 1 : 0);
	topo__pool_push_to(c->pool, 20, -1);
	topo__pool_push_to(c->pool, 21, threads);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
	CHECK_INT(count_ran(c, 0, 22, 1), 22);
	CHECK_INT(count_ran(c, 22, c->n, 0), c->n - 22);
	/* dropped: pushed after an abort, before the wait that ends it */
	memset(c->ran, 0, (size_t)c->n * sizeof(int32_t));
	topo__pool_abort(c->pool);
	for (int t = threads - 1; t >= 1; t--)
		topo__pool_push_to(c->pool, t, t);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 1);
	CHECK_INT(count_ran(c, 0, c->n, 0), c->n);
	/* an abort while mail may wait: every task at most once, and the
	 * pool is whole afterwards */
	c->shape = STOPPING;
	c->abort_at = 40;
	for (int t = threads - 1; t >= 0; t--)
		topo__pool_push_to(c->pool, 40 + t % 8, t);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 1);
	CHECK_INT(count_ran(c, 0, c->n, 2), 0);
	c->shape = FLAT;
	memset(c->ran, 0, (size_t)c->n * sizeof(int32_t));
	for (int t = threads - 1; t >= 0; t--)
		topo__pool_push_to(c->pool, t, t);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
	CHECK_INT(count_ran(c, 0, threads, 1), threads);
	topo__pool_free(c->pool);
	ctx_free(c);
}

/* Idle workers block: a pool of 8 threads doing nothing uses no CPU, and a
 * wait with nothing pushed returns 0 at once. */
static void idle_case(void)
{
	struct ctx *c = ctx_new(FLAT, 1);
	double used;

	pool_new(c, 8);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
	used = cpu_over_sleep(0, 0.2);
	CHECK(used < 0.02, "8 idle threads used %.3f s of CPU in 0.2 s", used);
	topo__pool_free(c->pool);
	/* One participant per CPU: idle ones spin, for a bounded time, even
	 * after topo__pool_wake (2 ms). */
	pool_new(c, (int)topo__cpus_allowed(NULL, 0));
	topo__pool_wake(c->pool);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
	used = cpu_over_sleep(0.2, 0.2);
	CHECK(used < 0.02, "idle participants used %.3f s of CPU in 0.2 s",
	      used);
	topo__pool_free(c->pool);
	topo__pool_free(NULL);
	ctx_free(c);
}

/* topo__pool_calm ends topo__pool_wake's longer spin, for workers already
 * spinning too: with that spin made a minute long, woken workers still
 * use the CPU a second later, and calmed ones stop within their short
 * spin.  (Where idle participants do not spin, valgrind's one thread at a
 * time, neither uses the CPU.) */
static void calm_case(void)
{
	struct ctx *c = ctx_new(FLAT, 1);
	int64_t was = topo__tune.pool_wake_spin_ns;
	int threads = (int)topo__cpus_allowed(NULL, 0);
	double used;

	if (threads < 2 || UNDER_VALGRIND) {
		check_skip("test_pool: calm (one CPU, or valgrind, which runs "
			   "one thread at a time)");
		ctx_free(c);
		return;
	}
	topo__tune.pool_wake_spin_ns = (int64_t)60 * 1000 * 1000 * 1000;
	pool_new(c, threads);
	topo__pool_wake(c->pool);
	/* A spinning worker uses whatever CPU the host gives it, which a
	 * busy host (make check's other suites) makes a small share: so the
	 * check is that it uses some, 0.03 s, within its minute of spin (30
	 * s asked), not how fast.  Calmed, below, they use under 0.02 s of
	 * 0.2, which a busy host only makes less. */
	used = cpu_until(0.2, 0.03, 30);
	CHECK(used >= 0.03, "woken workers used only %.3f s of CPU in 30 s",
	      used);
	/* calmed while they spin */
	topo__pool_calm(c->pool);
	used = cpu_over_sleep(0.2, 0.2);
	CHECK(used < 0.02, "calmed workers used %.3f s of CPU in 0.2 s", used);
	/* and the pool still runs work */
	topo__pool_push(c->pool, 0, -1);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
	CHECK_INT(count_ran(c, 0, c->n, 1), c->n);
	topo__pool_free(c->pool);
	topo__tune.pool_wake_spin_ns = was;
	ctx_free(c);
}

static double thread_cpu_now(void)
{
	return cpu_seconds(CLOCK_THREAD_CPUTIME_ID);
}

/* The caller waiting for the end polls as long as topo__pool_wake's
 * workers do: with that spin made a minute long, a wait for a worker's
 * task costs the calling thread CPU all along (a caller asleep after its
 * 50 us spin, as before, used about 0.0001 s); calmed, it sleeps after its
 * short spin and costs almost none.  The CPU a spinner gets is its share
 * of what the host's other work leaves, so the woken wait is for a task
 * that sleeps until the caller has used 0.03 s (30 s at most): the check
 * is that the waiting caller uses the CPU at all, not how much of it a
 * busy host gives it.  The calmed wait is for a task of 600 ms, of which
 * the caller uses under 0.02 s, which a busy host only makes less. */
static void caller_spin_case(void)
{
	struct ctx *c = ctx_new(NAP, 1);
	int64_t was = topo__tune.pool_wake_spin_ns;
	double t0, used;

	if (topo__cpus_allowed(NULL, 0) < 2 || UNDER_VALGRIND) {
		check_skip("test_pool: caller's spin (one CPU, or valgrind, "
			   "which runs one thread at a time)");
		ctx_free(c);
		return;
	}
	CHECK_INT(pthread_getcpuclockid(pthread_self(), &c->nap_clock), 0);
	topo__tune.pool_wake_spin_ns = (int64_t)60 * 1000 * 1000 * 1000;
	pool_new(c, 2);
	topo__pool_wake(c->pool);
	t0 = thread_cpu_now();
	c->nap_from = t0;
	c->nap_need = 0.03;
	topo__pool_push_to(c->pool, 0, 1);
	CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
	used = thread_cpu_now() - t0;
	CHECK(used >= 0.03, "woken: the caller used %.3f s of CPU waiting",
	      used);
	CHECK_INT(c->on[0], 1);
	c->nap_need = 0;
	topo__pool_calm(c->pool);
	topo__pool_push_to(c->pool, 0, 1);
	t0 = thread_cpu_now();
	CHECK_INT(topo__pool_wait(c->pool, NULL), 0);
	used = thread_cpu_now() - t0;
	CHECK(used < 0.02,
	      "calmed: the caller used %.3f s of CPU waiting 0.6 s", used);
	CHECK_INT(count_ran(c, 0, c->n, 2), c->n);
	topo__pool_free(c->pool);
	topo__tune.pool_wake_spin_ns = was;
	ctx_free(c);
}

/* Allocation failures: every one in topo__pool_new is reported and cleaned
 * up; a push whose stack cannot grow goes through the queue (nothing lost);
 * a push that finds no memory at all makes the wait fail with
 * TOPO_ENOMEM, and the pool still works afterwards. */
static void nomem_case(void)
{
	struct ctx *c = ctx_new(GROWING, 3000);
	struct timespec deadline = in(30);
	topo_error err;
	int rc = 0, fails = 0;

	for (long k = 0; k < 100; k++) {
		struct topo__pool *pool = NULL;

		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo__pool_new(&pool, 4, run, c, &err);
		topo__alloc_fail_after(-1);
		if (rc == 0) {
			topo__pool_free(pool);
			break;
		}
		fails++;
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK_STR(err.text, "out of memory");
		CHECK(pool == NULL, "failed topo__pool_new set *out");
	}
	CHECK_INT(rc, 0);
	CHECK(fails >= 3, "only %d allocations in topo__pool_new", fails);

	pool_new(c, 1);
	topo__pool_push(c->pool, 0, -1);
	CHECK_INT(topo__pool_wait(c->pool, &deadline), 0);
	topo__alloc_fail_after(-1);
	CHECK_INT(count_ran(c, 0, c->n, 1), c->n);

	topo__pool_free(c->pool);

	/* Fill the queue (1024 entries) while the only worker is blocked
	 * and the caller is not waiting, then fail the queue's growth. */
	pool_new(c, 2);
	c->shape = BLOCKING;
	c->started = c->released = 0;
	memset(c->ran, 0, (size_t)c->n * sizeof(int32_t));
	topo__pool_push(c->pool, 0, -1);
	pthread_mutex_lock(&c->mu);
	while (!c->started)
		pthread_cond_wait(&c->cv, &c->mu);
	pthread_mutex_unlock(&c->mu);
	for (int64_t i = 2; i < 1026; i++)
		topo__pool_push(c->pool, i, -1);
	topo__alloc_fail_after(0);
	topo__pool_push(c->pool, 1026, -1);
	topo__alloc_fail_after(-1);
	pthread_mutex_lock(&c->mu);
	c->released = 1;
	pthread_cond_broadcast(&c->cv);
	pthread_mutex_unlock(&c->mu);
	CHECK_INT(topo__pool_wait(c->pool, &deadline), TOPO_ENOMEM);
	CHECK_INT(c->ran[1026], 0);
	CHECK_INT(count_ran(c, 1, c->n, 0), c->n - 1);
	c->shape = FLAT;
	for (int64_t i = 0; i < 2000; i++)
		topo__pool_push(c->pool, i, -1);
	CHECK_INT(topo__pool_wait(c->pool, &deadline), 0);
	CHECK_INT(c->ran[1999], 1);
	topo__pool_free(c->pool);
	ctx_free(c);
}

/* topo__cpuset_ids on masks made up here: one of CPU_SETSIZE CPUs, and
 * one of 4096 (larger than a cpu_set_t), whose CPUs beyond 1023 count. */
static void cpuset_case(void)
{
	size_t big = CPU_ALLOC_SIZE(4096);
	cpu_set_t *set = CPU_ALLOC(4096), one;
	int ids[4] = {-7, -7, -7, -7};

	if (set == NULL)
		exit(2);
	CPU_ZERO_S(big, set);
	CHECK_INT(topo__cpuset_ids(set, big, ids, 4), 0);
	CHECK_INT(ids[0], -7);
	CPU_SET_S(4095, big, set);
	CPU_SET_S(3, big, set);
	CPU_SET_S(1024, big, set);
	CPU_SET_S(1023, big, set);
	CHECK_INT(topo__cpuset_ids(set, big, NULL, 0), 4);
	CHECK_INT(topo__cpuset_ids(set, big, ids, 3), 4);
	CHECK_INT(ids[0], 3);
	CHECK_INT(ids[1], 1023);
	CHECK_INT(ids[2], 1024);
	CHECK_INT(ids[3], -7); /* max 3: the fourth is not stored */
	/* Only the first setsize bytes are read. */
	CHECK_INT(topo__cpuset_ids(set, CPU_ALLOC_SIZE(1024), ids, 4), 2);
	CPU_FREE(set);
	CPU_ZERO(&one);
	CPU_SET(1, &one);
	CHECK_INT(topo__cpuset_ids(&one, sizeof(one), ids, 4), 1);
	CHECK_INT(ids[0], 1);
}

/* What each worker's thread may run on, recorded by its own tasks: the CPU
 * when it is pinned to one, -1 when it may run on several. */
struct pins {
	int cpu[8];
	int ran[8];
};

static void record_pin(void *vctx, int64_t task, int worker)
{
	struct pins *p = vctx;
	struct timespec d = {0, 1000 * 1000};
	cpu_set_t set;

	(void)task;
	if (worker < 0 || worker >= 8)
		return;
	p->cpu[worker] = -2;
	if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) == 0) {
		p->cpu[worker] = -1;
		for (int c = 0; c < CPU_SETSIZE && CPU_COUNT(&set) == 1; c++)
			if (CPU_ISSET(c, &set))
				p->cpu[worker] = c;
	}
	p->ran[worker]++;
	nanosleep(&d, NULL); /* so that the other workers get tasks too */
}

/* Runs 16 tasks per worker on a new pool of `threads` and checks that
 * every worker that ran one is pinned to want[i] (-1: not pinned to one
 * CPU). */
static void check_pins(int threads, const int *want, const char *what)
{
	struct pins p;
	struct topo__pool *pool = NULL;
	struct timespec deadline = in(30);
	cpu_set_t before, after;
	topo_error err;
	int ran = 0;

	CHECK_INT(pthread_getaffinity_np(pthread_self(), sizeof(before),
					 &before),
		  0);
	memset(&p, 0, sizeof(p));
	topo_error_clear(&err);
	CHECK(topo__pool_new(&pool, threads, record_pin, &p, &err) == 0,
	      "%s: %s", what, err.text);
	if (pool == NULL)
		return;
	for (int64_t i = 0; i < 16 * threads; i++)
		topo__pool_push(pool, i, -1);
	CHECK_INT(topo__pool_wait(pool, &deadline), 0);
	topo__pool_free(pool);
	/* The caller, participant 0, has its own mask back. */
	CHECK_INT(pthread_getaffinity_np(pthread_self(), sizeof(after), &after),
		  0);
	CHECK(CPU_EQUAL(&before, &after), "%s: the caller's CPU mask was not "
	      "restored (%d CPUs before, %d after)", what, CPU_COUNT(&before),
	      CPU_COUNT(&after));
	for (int i = 0; i < threads; i++) {
		if (p.ran[i] == 0)
			continue;
		ran++;
		CHECK(p.cpu[i] == want[i], "%s: worker %d on CPU %d, want %d",
		      what, i, p.cpu[i], want[i]);
	}
	CHECK(ran > 0, "%s: no worker ran a task", what);
}

/* The process's own mask: counted like sched_getaffinity's CPU_COUNT,
 * workers pinned to its CPUs in order when there are enough of them, and
 * the same again when the mask is cut down to its last CPU (as `taskset -c
 * N` would): one CPU, worker 0 pinned to it rather than to CPU 0. */
static void affinity_case(void)
{
	cpu_set_t mask, last;
	int ids[8], want[8], n, c;

	if (sched_getaffinity(0, sizeof(mask), &mask) != 0) {
		check_skip("affinity: sched_getaffinity failed");
		return;
	}
	n = topo__cpus_allowed(ids, 8);
	CHECK_INT(n, CPU_COUNT(&mask));
	c = 0;
	for (int i = 0; i < n && i < 8; i++) {
		while (!CPU_ISSET(c, &mask))
			c++;
		CHECK_INT(ids[i], c);
		c++;
	}
	if (n >= 1 && n <= 8)
		check_pins(n, ids, "one participant per allowed CPU");
	for (int i = 0; i < 8; i++)
		want[i] = n == 1 ? ids[0] : -1;
	if (n < 8)
		check_pins(n + 1, want, "more workers than CPUs: not pinned");

	CPU_ZERO(&last);
	CPU_SET(ids[n < 8 ? n - 1 : 7], &last);
	CHECK_INT(sched_setaffinity(0, sizeof(last), &last), 0);
	CHECK_INT(topo__cpus_allowed(ids, 8), 1);
	CHECK(CPU_ISSET(ids[0], &last), "allowed CPU %d", ids[0]);
	want[0] = ids[0];
	check_pins(1, want, "restricted to one CPU");
	CHECK_INT(sched_setaffinity(0, sizeof(mask), &mask), 0);
	CHECK_INT(topo__cpus_allowed(NULL, 0), CPU_COUNT(&mask));
}

/* topo__mutex_init: with glibc an adaptive mutex (the kind glibc keeps in
 * the mutex, its low two bits), and a mutex all the same: trylock fails
 * while it is held, and two threads incrementing a counter under it lose
 * no increment. */
struct mutex_arg {
	pthread_mutex_t *mu;
	long *count;
};

static void *mutex_hammer(void *p)
{
	struct mutex_arg *a = p;

	for (int i = 0; i < 200000; i++) {
		pthread_mutex_lock(a->mu);
		(*a->count)++;
		pthread_mutex_unlock(a->mu);
	}
	return NULL;
}

static void mutex_case(void)
{
	pthread_mutex_t mu;
	pthread_t th[2];
	int started[2];
	long count = 0;
	struct mutex_arg a = {&mu, &count};

	CHECK(topo__mutex_init(&mu) == 0, "topo__mutex_init failed");
#if defined(__GLIBC__)
	CHECK((mu.__data.__kind & 3) == PTHREAD_MUTEX_ADAPTIVE_NP,
	      "mutex kind %d, not adaptive (%d)", mu.__data.__kind,
	      (int)PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	CHECK(pthread_mutex_trylock(&mu) == 0, "trylock of a free mutex");
	CHECK(pthread_mutex_trylock(&mu) != 0, "trylock of a held mutex");
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 2; i++) {
		started[i] =
		    pthread_create(&th[i], NULL, mutex_hammer, &a) == 0;
		CHECK(started[i], "thread %d", i);
	}
	for (int i = 0; i < 2; i++)
		if (started[i])
			pthread_join(th[i], NULL);
	/* (each thread makes 200000) */
	CHECK(count == 200000L * (started[0] + started[1]),
	      "%ld increments under the mutex, not %ld", count,
	      200000L * (started[0] + started[1]));
	pthread_mutex_destroy(&mu);
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	CHECK_RUN(mutex, mutex_case());
	CHECK_RUN(shape, shape_case(FLAT, "flat", 1, 100000, 0));
	CHECK_RUN(shape, shape_case(FLAT, "flat", 8, 100000, 0));
	CHECK_RUN(shape, shape_case(CHAIN, "chain", 1, BIG, 0.5));
	CHECK_RUN(shape, shape_case(CHAIN, "chain", 2, BIG, 0.5));
	CHECK_RUN(shape, shape_case(CHAIN, "chain", 8, BIG, 0.5));
	CHECK_RUN(shape, shape_case(TREE, "tree", 1, BIG, 0.5));
	CHECK_RUN(shape, shape_case(TREE, "tree", 2, BIG, 0.5));
	CHECK_RUN(shape, shape_case(TREE, "tree", 8, BIG, 0.5));
	CHECK_RUN(shape, shape_case(FANOUT, "fan-out", 2, BIG, 0.5));
	CHECK_RUN(shape, shape_case(FANOUT, "fan-out", 8, BIG, 0.5));
	/* 64 x 5 ms: 0.32 s on one worker, 0.04 s shared by eight. */
	CHECK_RUN(shape, shape_case(SLEEPY, "sleepy", 8, 64, 0.2));
	CHECK_RUN(shape, shape_case(SLEEPY, "sleepy", 2, 64, 0.25));
	CHECK_RUN(timeout, timeout_case(2));
	CHECK_RUN(timeout, timeout_case(8));
	CHECK_RUN(caller, caller_case(1));
	CHECK_RUN(caller, caller_case(2));
	CHECK_RUN(caller, caller_case(8));
	CHECK_RUN(abort, abort_case(1));
	CHECK_RUN(abort, abort_case(2));
	CHECK_RUN(abort, abort_case(8));
	CHECK_RUN(mail, mail_case(1));
	CHECK_RUN(mail, mail_case(2));
	CHECK_RUN(mail, mail_case(8));
	CHECK_RUN(idle, idle_case());
	CHECK_RUN(calm, calm_case());
	CHECK_RUN(caller_spin, caller_spin_case());
	CHECK_RUN(ready, ready_case());
	CHECK_RUN(nomem, nomem_case());
	CHECK_RUN(cpuset, cpuset_case());
	CHECK_RUN(affinity, affinity_case());
	return check_done("test_pool");
}
