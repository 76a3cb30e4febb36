/*
 * pool.c - the replay engine's worker pool: a fixed set of threads running
 * int64 task ids through one callback, modelled on libuv's threadpool.
 *
 * Each worker keeps a private LIFO stack of ready tasks.  A task pushed
 * from inside a task goes onto the running worker's own stack without any
 * lock or atomic read-modify-write, so a chain of dependent tasks runs at
 * the speed of a function call.  Work is shared through one global FIFO
 * queue under one mutex: tasks pushed from outside the pool go there, and a
 * worker holding more than one task moves the older half of its stack there
 * whenever another worker is idle and the queue is empty.  Idle workers
 * block on a condition variable; nothing spins or polls.
 *
 * A wait that ends early (deadline, abort) discards every queued task and
 * waits for the running ones to return, so the pool is idle and reusable.
 * A push that finds no memory for its task aborts the wait in progress,
 * which then returns TOPO_ENOMEM rather than 1: a lost task must not pass
 * for a finished one.
 *
 * Completion without a shared atomic counter: every worker counts, in a
 * private `delta`, the tasks it pushed locally minus the tasks it finished,
 * and adds that to pool->pending (under the mutex) only when it shares work
 * or runs out of it.  A task on a worker's stack is accounted either in
 * pending (pushed from outside, or present when its worker last flushed) or
 * in that worker's delta, and only that worker can finish it.  So pending is
 * never below the number of live tasks accounted in it, and it reaches 0
 * only once every task everywhere has finished and every worker has gone
 * idle: then the waiter is woken.
 *
 * Locking assumptions:
 *  - pool->mu protects queue/head/tail/qcap, pending, nidle, aborted,
 *    nomem and shutdown.
 *  - A worker's stack, len, cap and delta are touched only by its own
 *    thread (topo__pool_push with worker >= 0 must be called from inside a
 *    task running on that worker).
 *  - hungry and drop are atomics read without the lock as hints: hungry
 *    says that a worker is idle and the queue is empty, so a busy worker
 *    sees cheaply that someone wants work (once it has shared, the queue is
 *    not empty and nobody else shares until the idle workers have taken
 *    it: on an oversubscribed machine a woken worker may take a while to
 *    run); drop tells workers to discard tasks instead of running them.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

/* Initial capacity of each stack and of the queue, so that most runs never
 * grow them. */
#define INITIAL_CAP 1024

struct worker {
	struct topo__pool *pool;
	pthread_t thread;
	int index;
	/* Owned by the worker's thread. */
	int64_t *stack;
	size_t len, cap;
	int64_t delta;
	/* Keep neighbouring workers' hot fields off this cache line. */
	char pad[64];
};

struct topo__pool {
	void (*run)(void *ctx, int64_t task, int worker);
	void *ctx;
	int nthreads;
	int started;
	struct worker **workers;

	pthread_mutex_t mu;
	pthread_cond_t work; /* workers: the queue is not empty, or shutdown */
	pthread_cond_t done; /* the waiter: pending is 0, or an abort */
	int have_mu, have_work, have_done;

	/* Under mu. */
	int64_t *queue; /* FIFO: queue[head .. tail - 1] */
	size_t head, tail, qcap;
	int64_t pending;
	int nidle;
	int aborted;
	int nomem;
	int shutdown;

	/* Hints read without the lock. */
	_Atomic int hungry;
	_Atomic int drop;
};

/* Recomputes the hint after nidle or the queue changed.  Called with mu
 * held. */
static void update_hint(struct topo__pool *pool)
{
	atomic_store_explicit(&pool->hungry,
			      pool->nidle > 0 && pool->head == pool->tail,
			      memory_order_relaxed);
}

/* Makes room for `more` tasks at the queue's tail.  Called with mu held. */
static int queue_reserve(struct topo__pool *pool, size_t more)
{
	size_t len = pool->tail - pool->head, cap;
	int64_t *q;

	if (pool->tail + more <= pool->qcap)
		return 0;
	if (pool->head > 0) {
		memmove(pool->queue, pool->queue + pool->head,
			len * sizeof(int64_t));
		pool->head = 0;
		pool->tail = len;
		if (len + more <= pool->qcap)
			return 0;
	}
	cap = pool->qcap;
	while (cap < len + more)
		cap *= 2;
	q = topo__realloc(pool->queue, cap * sizeof(int64_t));
	if (q == NULL)
		return -1;
	pool->queue = q;
	pool->qcap = cap;
	return 0;
}

/* A push that found no memory: the task is lost, so the wait in progress
 * must fail rather than report success.  Called with mu held. */
static void lost_task(struct topo__pool *pool)
{
	pool->nomem = 1;
	pool->aborted = 1;
	atomic_store(&pool->drop, 1);
	pthread_cond_broadcast(&pool->done);
}

/* Appends one task to the global queue and wakes a worker.  Called with mu
 * held; the task is accounted in pending directly. */
static void queue_push_locked(struct topo__pool *pool, int64_t task)
{
	if (queue_reserve(pool, 1) != 0) {
		lost_task(pool);
		return;
	}
	pool->queue[pool->tail++] = task;
	pool->pending++;
	update_hint(pool);
	if (pool->nidle > 0)
		pthread_cond_signal(&pool->work);
}

/* Adds the worker's private count to pending.  Called with mu held. */
static void flush(struct topo__pool *pool, struct worker *w)
{
	pool->pending += w->delta;
	w->delta = 0;
	if (pool->pending == 0)
		pthread_cond_broadcast(&pool->done);
}

/* Another worker is idle and w holds more than one task: move the older
 * half of w's stack (the bottom, which in a tree of tasks tends to hold the
 * larger subtrees) to the queue and wake as many workers as it can feed. */
static void share(struct topo__pool *pool, struct worker *w)
{
	size_t h = w->len / 2, wake;

	pthread_mutex_lock(&pool->mu);
	if (queue_reserve(pool, h) != 0)
		h = 0; /* keep running them here: nothing is lost */
	memcpy(pool->queue + pool->tail, w->stack, h * sizeof(int64_t));
	pool->tail += h;
	memmove(w->stack, w->stack + h, (w->len - h) * sizeof(int64_t));
	w->len -= h;
	/* The moved tasks may now be finished by other workers, so they must
	 * be accounted in pending before anyone can take them. */
	flush(pool, w);
	update_hint(pool);
	wake = (size_t)pool->nidle < h ? (size_t)pool->nidle : h;
	for (size_t i = 0; i < wake; i++)
		pthread_cond_signal(&pool->work);
	pthread_mutex_unlock(&pool->mu);
}

/* Moves a fair share of the queue onto w's (empty) stack.  Called with mu
 * held and the queue not empty. */
static void take(struct topo__pool *pool, struct worker *w)
{
	size_t len = pool->tail - pool->head;
	size_t k = (len + (size_t)pool->nidle) / ((size_t)pool->nidle + 1);

	if (k > w->cap - w->len) {
		size_t cap = w->cap;
		int64_t *s;

		while (cap - w->len < k)
			cap *= 2;
		s = topo__realloc(w->stack, cap * sizeof(int64_t));
		if (s != NULL) {
			w->stack = s;
			w->cap = cap;
		} else {
			k = w->cap -
			    w->len; /* at least 1: the stack is empty */
		}
	}
	/* Reversed, so the oldest task is popped first. */
	for (size_t i = 0; i < k; i++)
		w->stack[w->len + k - 1 - i] = pool->queue[pool->head + i];
	w->len += k;
	pool->head += k;
	if (pool->head == pool->tail)
		pool->head = pool->tail = 0;
	update_hint(pool);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct topo__pool *pool = w->pool;

	for (;;) {
		if (w->len > 0) {
			int64_t task;

			if (w->len > 1 &&
			    atomic_load_explicit(&pool->hungry,
						 memory_order_relaxed))
				share(pool, w);
			task = w->stack[--w->len];
			if (!atomic_load_explicit(&pool->drop,
						  memory_order_relaxed))
				pool->run(pool->ctx, task, w->index);
			w->delta--;
			continue;
		}
		pthread_mutex_lock(&pool->mu);
		flush(pool, w);
		while (pool->head == pool->tail && !pool->shutdown) {
			pool->nidle++;
			update_hint(pool);
			pthread_cond_wait(&pool->work, &pool->mu);
			pool->nidle--;
			update_hint(pool);
		}
		if (pool->head == pool->tail) { /* and shutdown */
			pthread_mutex_unlock(&pool->mu);
			break;
		}
		take(pool, w);
		pthread_mutex_unlock(&pool->mu);
	}
	return NULL;
}

void topo__pool_push(struct topo__pool *pool, int64_t task, int worker)
{
	struct worker *w;

	/* A pool that drops its tasks (a failed delivery, a lost task, the
	 * deadline) would discard this one too: not pushing it spares an
	 * allocation that may be what failed, which a seed of millions of
	 * tasks would otherwise retry for each of them. */
	if (atomic_load_explicit(&pool->drop, memory_order_relaxed))
		return;
	if (worker < 0 || worker >= pool->nthreads) {
		pthread_mutex_lock(&pool->mu);
		queue_push_locked(pool, task);
		pthread_mutex_unlock(&pool->mu);
		return;
	}
	w = pool->workers[worker];
	if (w->len == w->cap) {
		int64_t *s =
		    topo__realloc(w->stack, 2 * w->cap * sizeof(int64_t));

		if (s == NULL) {
			/* The queue may still have room. */
			pthread_mutex_lock(&pool->mu);
			queue_push_locked(pool, task);
			pthread_mutex_unlock(&pool->mu);
			return;
		}
		w->stack = s;
		w->cap *= 2;
	}
	w->stack[w->len++] = task;
	w->delta++;
}

int topo__pool_wait(struct topo__pool *pool, const struct timespec *deadline)
{
	int rc = 0;

	pthread_mutex_lock(&pool->mu);
	while (pool->pending > 0 && !pool->aborted) {
		if (deadline == NULL) {
			pthread_cond_wait(&pool->done, &pool->mu);
		} else if (pthread_cond_timedwait(&pool->done, &pool->mu,
						  deadline) != 0 &&
			   pool->pending > 0) {
			/* ETIMEDOUT, or EINVAL for a malformed deadline:
			 * either way waiting longer would not end. */
			rc = 1;
			break;
		}
	}
	if (pool->aborted)
		rc = 1;
	if (rc != 0) {
		/* Discard what is left: the queue here, the workers' stacks
		 * by their owners (a worker with tasks never sleeps), then
		 * wait for the tasks still running to return so that the
		 * pool is idle and reusable. */
		atomic_store(&pool->drop, 1);
		pool->pending -= (int64_t)(pool->tail - pool->head);
		pool->head = pool->tail = 0;
		update_hint(pool);
		while (pool->pending > 0)
			pthread_cond_wait(&pool->done, &pool->mu);
		atomic_store(&pool->drop, 0);
		pool->aborted = 0;
		if (pool->nomem)
			rc = TOPO_ENOMEM;
		pool->nomem = 0;
	}
	pthread_mutex_unlock(&pool->mu);
	return rc;
}

void topo__pool_abort(struct topo__pool *pool)
{
	/* Stop running tasks at once, even before the waiter wakes. */
	atomic_store(&pool->drop, 1);
	pthread_mutex_lock(&pool->mu);
	pool->aborted = 1;
	pthread_cond_broadcast(&pool->done);
	pthread_mutex_unlock(&pool->mu);
}

void topo__pool_free(struct topo__pool *pool)
{
	if (pool == NULL)
		return;
	if (pool->started > 0) {
		atomic_store(&pool->drop, 1);
		pthread_mutex_lock(&pool->mu);
		pool->shutdown = 1;
		pthread_cond_broadcast(&pool->work);
		pthread_mutex_unlock(&pool->mu);
		for (int i = 0; i < pool->started; i++)
			pthread_join(pool->workers[i]->thread, NULL);
	}
	if (pool->workers != NULL) {
		for (int i = 0; i < pool->nthreads; i++) {
			if (pool->workers[i] != NULL)
				topo__free(pool->workers[i]->stack);
			topo__free(pool->workers[i]);
		}
	}
	if (pool->have_done)
		pthread_cond_destroy(&pool->done);
	if (pool->have_work)
		pthread_cond_destroy(&pool->work);
	if (pool->have_mu)
		pthread_mutex_destroy(&pool->mu);
	topo__free(pool->workers);
	topo__free(pool->queue);
	topo__free(pool);
}

/* The waiter's condition variable measures deadlines on CLOCK_MONOTONIC,
 * which wall-clock changes do not move. */
static int init_sync(struct topo__pool *pool)
{
	pthread_condattr_t attr;
	int rc;

	if (pthread_mutex_init(&pool->mu, NULL) != 0)
		return -1;
	pool->have_mu = 1;
	if (pthread_cond_init(&pool->work, NULL) != 0)
		return -1;
	pool->have_work = 1;
	if (pthread_condattr_init(&attr) != 0)
		return -1;
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (rc == 0)
		rc = pthread_cond_init(&pool->done, &attr);
	pthread_condattr_destroy(&attr);
	if (rc != 0)
		return -1;
	pool->have_done = 1;
	return 0;
}

/*
 * Pins a worker to one CPU: the pool pins worker i to the i-th CPU the
 * process may run on (topo__cpus_allowed), when there are no more workers
 * than those CPUs.  Without it, a worker woken by a running one is queued
 * on the waker's CPU even when another is idle (seen on a 2-CPU KVM
 * guest, kernel 6.18), and waits there for the load balancer, 1 to 3 ms,
 * which is longer than a whole 16-member reduce.  Best effort: a failure
 * leaves the thread unpinned.
 */
static void pin_attr(pthread_attr_t *attr, int cpu)
{
	cpu_set_t one, *set = &one;
	size_t size = sizeof(one);

	if (cpu >= CPU_SETSIZE) {
		size = CPU_ALLOC_SIZE(cpu + 1);
		set = topo__calloc(1, size);
		if (set == NULL)
			return;
	} else {
		CPU_ZERO(&one);
	}
	CPU_SET_S(cpu, size, set);
	pthread_attr_setaffinity_np(attr, size, set);
	if (set != &one)
		topo__free(set);
}

int topo__pool_new(struct topo__pool **out, int threads,
		   void (*run)(void *ctx, int64_t task, int worker), void *ctx,
		   topo_error *err)
{
	struct topo__pool *pool;
	int rc = TOPO_ENOMEM, *cpu = NULL;

	*out = NULL;
	if (threads < 1)
		threads = 1;
	pool = topo__calloc(1, sizeof(*pool));
	if (pool == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	pool->run = run;
	pool->ctx = ctx;
	pool->nthreads = threads;
	pool->workers = topo__calloc((size_t)threads, sizeof(*pool->workers));
	pool->queue = topo__mallocarray(INITIAL_CAP, sizeof(int64_t));
	pool->qcap = INITIAL_CAP;
	if (pool->workers == NULL || pool->queue == NULL)
		goto out;
	for (int i = 0; i < threads; i++) {
		struct worker *w = topo__calloc(1, sizeof(*w));

		pool->workers[i] = w;
		if (w == NULL)
			goto out;
		w->pool = pool;
		w->index = i;
		w->stack = topo__mallocarray(INITIAL_CAP, sizeof(int64_t));
		w->cap = INITIAL_CAP;
		if (w->stack == NULL)
			goto out;
	}
	if (init_sync(pool) != 0) {
		rc = TOPO_EIO;
		topo__err(err, rc, NULL, NULL,
			  "cannot initialise the worker pool's locks");
		goto out;
	}
	/* Where to pin each worker, when each can have a CPU of its own (a
	 * failed allocation only leaves them unpinned). */
	if (topo__cpus_allowed(NULL, 0) >= threads) {
		cpu = topo__mallocarray((size_t)threads, sizeof(int));
		if (cpu != NULL && topo__cpus_allowed(cpu, threads) < threads) {
			topo__free(cpu); /* the mask changed meanwhile */
			cpu = NULL;
		}
	}
	for (int i = 0; i < threads; i++) {
		pthread_attr_t attr;
		int e = pthread_attr_init(&attr);

		if (e == 0) {
			if (cpu != NULL)
				pin_attr(&attr, cpu[i]);
			/* A worker's calls are shallow; the default stack (8
			 * MiB of address space) would count against
			 * RLIMIT_AS for nothing.  Best effort. */
			pthread_attr_setstacksize(&attr, TOPO__POOL_STACK);
			e = pthread_create(&pool->workers[i]->thread, &attr,
					   worker_main, pool->workers[i]);
			pthread_attr_destroy(&attr);
		}

		if (e != 0) {
			rc = TOPO_EIO;
			topo__err(err, rc, NULL, NULL,
				  "cannot start worker thread %d of %d: %s",
				  i + 1, threads, strerror(e));
			goto out;
		}
		pool->started++;
	}
	topo__free(cpu);
	*out = pool;
	return 0;
out:
	topo__free(cpu);
	if (rc == TOPO_ENOMEM)
		topo__err(err, rc, NULL, NULL, "out of memory");
	topo__pool_free(pool);
	return rc;
}
