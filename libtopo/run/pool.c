/*
 * pool.c - the replay engine's worker pool: the calling thread and a fixed
 * set of worker threads running int64 task ids through one callback,
 * modelled on libuv's threadpool, with the caller working as in OpenMP's
 * fork-join teams.
 *
 * Participant 0 is the thread that made the pool and calls topo__pool_wait:
 * while it waits it runs tasks like any worker, so a plan too small to
 * share runs on that thread alone, with no hand-off (a 2-member bcast of 8
 * bytes is one memcpy, not two context switches).  Participants 1 ..
 * threads - 1 are threads of their own.
 *
 * Each participant keeps a private LIFO stack of ready tasks.  A task
 * pushed from inside a task goes onto the running participant's own stack
 * without any lock or atomic read-modify-write, so a chain of dependent
 * tasks runs at the speed of a function call.  Work is shared through one
 * global FIFO queue under one mutex: tasks pushed from outside the pool go
 * there, and a participant holding more than one task moves the older half
 * of its stack there when another one is idle and looking for work (and,
 * when the idle ones are asleep, only once it holds more than the pool's
 * wake threshold: waking a thread costs more than running a few small
 * tasks).
 *
 * A task may also be meant for one participant: topo__pool_push_to puts
 * it in that participant's inbox, which only it empties (onto its stack,
 * when it is idle); once there, its tasks are shared like any others.
 * The run uses it to start each participant on the messages into the
 * bytes it reset itself (exec.c, homes).
 *
 * Waiting: an idle participant first spins for a bounded time
 * (SPIN_NS, polling one atomic) and then blocks on a condition variable,
 * so a pool between runs uses no CPU.  It spins only when every
 * participant has a CPU of its own (participants pinned, below); with more
 * participants than CPUs a spinner would take the time slice of the one
 * it waits for, so it blocks at once.  topo__pool_wake makes the workers
 * spin longer (topo__tune.pool_wake_spin_ns, extending a spin under way) before
 * work the caller is about to release, and topo__pool_calm ends that
 * longer spin; topo__pool_ready also waits until they all spin, so that
 * even a plan of two tasks is shared at once.  The caller waiting for the
 * end (topo__pool_wait) spins as long: a caller asleep when the last
 * task ends saw it a futex wake-up later, tens of microseconds on a
 * virtual machine (docs/CONSTANTS.md).
 *
 * The pool's mutex, and the in-process transport's reduction buckets,
 * guard critical sections of a few dozen instructions that two
 * participants often enter at once (both start an iteration, both finish
 * a segment).  A default glibc mutex that finds its owner inside puts the
 * thread to sleep on a futex at once, and the owner's unlock then makes a
 * futex system call to wake it: over 3000 iterations of a 2-member reduce
 * of 1 MiB, 9747 futex calls (strace -c).  topo__mutex_init makes them
 * glibc's adaptive mutexes, which spin on the lock for a bounded number
 * of tries first: 111 calls, and runs of 1 MiB up to an eighth shorter
 * with nothing slower (docs/CONSTANTS.md).
 *
 * A wait that ends early (deadline, abort) discards every queued task and
 * waits for the running ones to return, so the pool is idle and reusable.
 * The caller checks the deadline every CLOCK_EVERY tasks it runs, and
 * whenever it is idle.  A push that finds no memory for its task aborts
 * the wait in progress, which then returns TOPO_ENOMEM rather than 1: a
 * lost task must not pass for a finished one.
 *
 * Completion without a shared atomic counter: every participant counts, in
 * a private `delta`, the tasks it pushed locally minus the tasks it
 * finished, and adds that to pool->pending (under the mutex) only when it
 * shares work or runs out of it.  A task on a stack is accounted either in
 * pending (pushed from outside, or present when its owner last flushed) or
 * in its owner's delta, and only that owner can finish it.  So pending is
 * never below the number of live tasks accounted in it, and it reaches 0
 * only once every task everywhere has finished and every participant has
 * gone idle: then the caller is woken (or sees it while spinning).
 *
 * Locking assumptions:
 *  - pool->mu protects queue/head/tail/qcap, each inbox and inlen, the
 *    writes of pending and queued, nsleep, nspin, nmail, caller_asleep,
 *    aborted, nomem and shutdown.
 *  - A participant's stack, len, cap and delta are touched only by its own
 *    thread (topo__pool_push with worker >= 0 must be called from inside a
 *    task running on that participant, or for 0 by the caller outside a
 *    wait).
 *  - pending, queued, hungry, drop and each participant's mail are
 *    atomics also read without the lock, as hints: queued, mail and
 *    pending end a spin; hungry says that a participant is spinning (1;
 *    more spin than have mail waiting) or that only sleeping ones are
 *    idle (2), with the queue empty, so a busy one sees cheaply that
 *    someone wants work (once it has shared, the queue is not empty and
 *    nobody else shares until the idle ones have taken it: on an
 *    oversubscribed machine a woken worker may take a while to run);
 *    drop tells participants to discard tasks instead of running them.
 *  - A spinner decrements nspin under mu before it checks the queue and
 *    sleeps, and a push decides under mu whether to wake a sleeper (only
 *    when nobody spins), so no push is left with every participant asleep.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

/* Initial capacity of each stack and of the queue, so that most runs never
 * grow them. */
#define INITIAL_CAP 1024
/* How long an idle participant polls before it blocks: about the time a
 * futex wake-up takes to reach a sleeping thread on a virtual machine, so
 * that work released within it is taken at cache speed, and short enough
 * that an idle pool stops using the CPU at once. */
#define SPIN_NS 50000
/* How long workers woken by topo__pool_wake spin at least: long enough to
 * cover the untimed preparation of an iteration (resetting its buffers)
 * between the wake-up and the first task. */
/* (the default of topo__tune.pool_wake_spin_ns: tune.c) */
/* How long topo__pool_ready waits at most for the workers to spin: a few
 * futex wake-ups on a virtual machine. */
#define READY_NS 1000000
/* The caller reads the clock every this many tasks it runs. */
#define CLOCK_EVERY 64
/* Tasks a participant's inbox holds (topo__pool_push_to); more go to the
 * queue. */
#define INBOX_CAP 8

struct worker {
	struct topo__pool *pool;
	pthread_t thread;
	int index;
	/* Owned by the participant's thread. */
	int64_t *stack;
	size_t len, cap;
	int64_t delta;
	/* Tasks for this participant alone (topo__pool_push_to), under
	 * the pool's mu, and whether there are any (a hint read while
	 * spinning). */
	int64_t inbox[INBOX_CAP];
	int inlen;
	_Atomic int mail;
	/* Keep neighbouring participants' hot fields off this cache line. */
	char pad[64];
};

struct topo__pool {
	void (*run)(void *ctx, int64_t task, int worker);
	void *ctx;
	int nthreads; /* participants, the caller included */
	int started;  /* threads started: participants 1 .. started */
	struct worker **workers;
	long spin_ns; /* 0: block at once */
	_Atomic size_t wake_at; /* topo__pool_wake_at */

	/* The caller's CPU mask before the pool bound it (restored by
	 * topo__pool_free), when it did. */
	cpu_set_t *caller_mask;
	size_t caller_mask_size;
	pthread_t caller;

	pthread_mutex_t mu;
	pthread_cond_t work; /* workers: the queue is not empty, or shutdown */
	pthread_cond_t done; /* the caller: pending is 0, an abort, or work */
	int have_mu, have_work, have_done;

	/* Under mu. */
	int64_t *queue; /* FIFO: queue[head .. tail - 1] */
	size_t head, tail, qcap;
	int nsleep;	   /* workers blocked on work */
	int nspin;	   /* participants spinning */
	int nmail;	   /* participants with tasks in their inbox */
	int caller_asleep; /* the caller is blocked on done */
	int aborted;
	int nomem;
	int shutdown;

	/* Written under mu, read without it as hints. */
	_Atomic int64_t pending;
	_Atomic int64_t queued; /* tail - head */
	_Atomic int hungry;
	_Atomic int drop;
	_Atomic int64_t spin_until; /* ns: topo__pool_wake's spin, or 0 */
};

static int64_t pending_of(struct topo__pool *pool)
{
	return atomic_load_explicit(&pool->pending, memory_order_relaxed);
}

static void pending_add(struct topo__pool *pool, int64_t k)
{
	atomic_store_explicit(&pool->pending, pending_of(pool) + k,
			      memory_order_relaxed);
}

/* Recomputes the hints after nspin, nsleep or the queue changed.  Called
 * with mu held. */
static void update_hint(struct topo__pool *pool)
{
	int empty = pool->head == pool->tail;

	atomic_store_explicit(&pool->queued,
			      (int64_t)(pool->tail - pool->head),
			      memory_order_release);
	atomic_store_explicit(&pool->hungry,
			      !empty					? 0
			      : pool->nspin > pool->nmail		? 1
			      : pool->nsleep > 0 || pool->caller_asleep ? 2
									: 0,
			      memory_order_relaxed);
}

/* Wakes up to k sleeping participants for k new tasks in the queue, less
 * those a spinner will take.  Called with mu held. */
static void wake_locked(struct topo__pool *pool, size_t k)
{
	size_t spin = (size_t)pool->nspin, n;

	if (k <= spin)
		return;
	k -= spin;
	n = (size_t)pool->nsleep < k ? (size_t)pool->nsleep : k;
	for (size_t i = 0; i < n; i++)
		pthread_cond_signal(&pool->work);
	if (n < k && pool->caller_asleep)
		pthread_cond_signal(&pool->done);
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

/* Appends one task to the global queue and wakes a participant.  Called
 * with mu held; the task is accounted in pending directly. */
static void queue_push_locked(struct topo__pool *pool, int64_t task)
{
	if (queue_reserve(pool, 1) != 0) {
		lost_task(pool);
		return;
	}
	pool->queue[pool->tail++] = task;
	pending_add(pool, 1);
	update_hint(pool);
	wake_locked(pool, 1);
}

/* Adds the participant's private count to pending.  Called with mu held. */
static void flush(struct topo__pool *pool, struct worker *w)
{
	pending_add(pool, w->delta);
	w->delta = 0;
	if (pending_of(pool) == 0)
		pthread_cond_broadcast(&pool->done);
}

/* Another participant is idle and w holds more than one task: move the
 * older half of w's stack (the bottom, which in a tree of tasks tends to
 * hold the larger subtrees) to the queue and wake as many sleepers as it
 * can feed beyond the spinners. */
static void share(struct topo__pool *pool, struct worker *w)
{
	size_t h = w->len / 2;

	pthread_mutex_lock(&pool->mu);
	if (queue_reserve(pool, h) != 0)
		h = 0; /* keep running them here: nothing is lost */
	memcpy(pool->queue + pool->tail, w->stack, h * sizeof(int64_t));
	pool->tail += h;
	memmove(w->stack, w->stack + h, (w->len - h) * sizeof(int64_t));
	w->len -= h;
	/* The moved tasks may now be finished by other participants, so
	 * they must be accounted in pending before anyone can take them. */
	flush(pool, w);
	update_hint(pool);
	wake_locked(pool, h);
	pthread_mutex_unlock(&pool->mu);
}

/* Whether w, holding w->len tasks, should share now. */
static int should_share(struct topo__pool *pool, const struct worker *w)
{
	int h;

	if (w->len < 2)
		return 0;
	h = atomic_load_explicit(&pool->hungry, memory_order_relaxed);
	return h == 1 ||
	       (h == 2 && w->len > atomic_load_explicit(&pool->wake_at,
							  memory_order_relaxed));
}

/* Moves a fair share of the queue onto w's (empty) stack.  Called with mu
 * held and the queue not empty. */
static void take(struct topo__pool *pool, struct worker *w)
{
	size_t len = pool->tail - pool->head;
	size_t idle = (size_t)pool->nspin + (size_t)pool->nsleep;
	size_t k = (len + idle) / (idle + 1);

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

/* Moves w's inbox onto its (empty) stack, the first pushed on top: those
 * tasks are accounted in pending already, as the queue's are.  Called
 * with mu held. */
static void take_mail(struct topo__pool *pool, struct worker *w)
{
	for (int i = 0; i < w->inlen; i++)
		w->stack[w->len++] = w->inbox[w->inlen - 1 - i];
	w->inlen = 0;
	atomic_store_explicit(&w->mail, 0, memory_order_relaxed);
	pool->nmail--;
	update_hint(pool);
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int64_t ns_of(const struct timespec *t)
{
	return (int64_t)t->tv_sec * 1000000000 + t->tv_nsec;
}

/* Spins until the queue or w's inbox has work, or (for the caller, done
 * != 0) pending is 0 or tasks are being dropped, or spin_ns or the
 * deadline (ns, or -1) passed.  Called without mu, as a participant
 * counted in nspin. */
static void spin(struct topo__pool *pool, struct worker *w, int done,
		 int64_t deadline)
{
	int64_t base = now_ns() + pool->spin_ns, end = base,
		until = atomic_load_explicit(&pool->spin_until,
					     memory_order_relaxed);

	if (until > end)
		end = until;
	if (deadline >= 0 && deadline < end)
		end = deadline;
	for (unsigned i = 1;; i++) {
		if (atomic_load_explicit(&pool->queued, memory_order_relaxed) >
			0 ||
		    atomic_load_explicit(&w->mail, memory_order_relaxed))
			return;
		if (done && (pending_of(pool) == 0 ||
			     atomic_load_explicit(&pool->drop,
						  memory_order_relaxed)))
			return;
		cpu_relax();
		if (i % 64 != 0)
			continue;
		/* topo__pool_wake may extend a spin under way, and
		 * topo__pool_calm end the extension. */
		until = atomic_load_explicit(&pool->spin_until,
					     memory_order_relaxed);
		end = until > base ? until : base;
		if (deadline >= 0 && deadline < end)
			end = deadline;
		if (now_ns() >= end)
			return;
	}
}

/* Runs the task on top of w's stack. */
static void run_one(struct topo__pool *pool, struct worker *w)
{
	int64_t task;

	if (should_share(pool, w))
		share(pool, w);
	task = w->stack[--w->len];
	if (!atomic_load_explicit(&pool->drop, memory_order_relaxed))
		pool->run(pool->ctx, task, w->index);
	w->delta--;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct topo__pool *pool = w->pool;

	for (;;) {
		int spun = 0;

		while (w->len > 0)
			run_one(pool, w);
		pthread_mutex_lock(&pool->mu);
		flush(pool, w);
		while (pool->head == pool->tail && w->inlen == 0 &&
		       !pool->shutdown) {
			if (pool->spin_ns > 0 && !spun) {
				pool->nspin++;
				update_hint(pool);
				pthread_mutex_unlock(&pool->mu);
				spin(pool, w, 0, -1);
				pthread_mutex_lock(&pool->mu);
				pool->nspin--;
				update_hint(pool);
				spun = 1;
				continue;
			}
			pool->nsleep++;
			update_hint(pool);
			pthread_cond_wait(&pool->work, &pool->mu);
			pool->nsleep--;
			update_hint(pool);
			spun = 0;
		}
		if (w->inlen > 0)
			take_mail(pool, w);
		else if (pool->head == pool->tail) { /* and shutdown */
			pthread_mutex_unlock(&pool->mu);
			break;
		} else
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

void topo__pool_push_to(struct topo__pool *pool, int64_t task, int target)
{
	struct worker *w;

	if (target <= 0 || target >= pool->nthreads) {
		topo__pool_push(pool, task, target == 0 ? 0 : -1);
		return;
	}
	if (atomic_load_explicit(&pool->drop, memory_order_relaxed))
		return;
	w = pool->workers[target];
	pthread_mutex_lock(&pool->mu);
	if (w->inlen == INBOX_CAP) {
		queue_push_locked(pool, task);
	} else {
		/* A spinner with mail is not hungry: the caller would
		 * otherwise share the tasks it is about to start itself
		 * with a participant about to start its own. */
		if (w->inlen++ == 0)
			pool->nmail++;
		w->inbox[w->inlen - 1] = task;
		pending_add(pool, 1);
		update_hint(pool);
		atomic_store_explicit(&w->mail, 1, memory_order_relaxed);
		/* The condition variable cannot wake one thread in
		 * particular: wake them all, the others sleep again. */
		if (pool->nsleep > 0)
			pthread_cond_broadcast(&pool->work);
	}
	pthread_mutex_unlock(&pool->mu);
}

void topo__pool_wake_at(struct topo__pool *pool, size_t tasks)
{
	atomic_store_explicit(&pool->wake_at, tasks < 1 ? 1 : tasks,
			      memory_order_relaxed);
}

void topo__pool_wake(struct topo__pool *pool)
{
	if (pool->spin_ns == 0)
		return;
	atomic_store_explicit(&pool->spin_until,
			      now_ns() + topo__tune.pool_wake_spin_ns,
			      memory_order_relaxed);
	pthread_mutex_lock(&pool->mu);
	if (pool->nsleep > 0)
		pthread_cond_broadcast(&pool->work);
	pthread_mutex_unlock(&pool->mu);
}

void topo__pool_calm(struct topo__pool *pool)
{
	atomic_store_explicit(&pool->spin_until, 0, memory_order_relaxed);
}

int topo__pool_ready(struct topo__pool *pool)
{
	int64_t end = now_ns() + READY_NS;

	if (pool->spin_ns == 0)
		return 0;
	topo__pool_wake(pool);
	for (;;) {
		int ready;

		pthread_mutex_lock(&pool->mu);
		ready = pool->nspin >= pool->started;
		pthread_mutex_unlock(&pool->mu);
		if (ready || now_ns() >= end)
			return ready;
		for (int k = 0; k < 16; k++)
			cpu_relax();
	}
}

/* The caller's idle step: takes queued work, or spins, or sleeps until
 * there is work, pending is 0, an abort or the deadline.  Returns 1 when
 * the wait is over (*rc set), 0 to go on.  *spun: whether the last idle
 * step spun. */
static int caller_idle(struct topo__pool *pool, struct worker *w,
		       const struct timespec *deadline, int *spun, int *rc)
{
	int64_t dl = deadline != NULL ? ns_of(deadline) : -1;

	pthread_mutex_lock(&pool->mu);
	flush(pool, w);
	for (;;) {
		if (pool->aborted) {
			*rc = 1;
			break;
		}
		if (pending_of(pool) == 0) {
			*rc = 0;
			break;
		}
		if (pool->head != pool->tail) {
			take(pool, w);
			pthread_mutex_unlock(&pool->mu);
			return 0;
		}
		if (dl >= 0 && now_ns() >= dl) {
			*rc = 1;
			break;
		}
		if (pool->spin_ns > 0 && !*spun) {
			pool->nspin++;
			update_hint(pool);
			pthread_mutex_unlock(&pool->mu);
			spin(pool, w, 1, dl);
			pthread_mutex_lock(&pool->mu);
			pool->nspin--;
			update_hint(pool);
			*spun = 1;
			continue;
		}
		pool->caller_asleep = 1;
		update_hint(pool);
		if (deadline == NULL)
			pthread_cond_wait(&pool->done, &pool->mu);
		else if (pthread_cond_timedwait(&pool->done, &pool->mu,
						deadline) != 0)
			/* ETIMEDOUT, or EINVAL for a malformed deadline:
			 * either way waiting longer would not end. */
			dl = 0;
		pool->caller_asleep = 0;
		update_hint(pool);
		*spun = 0;
	}
	pthread_mutex_unlock(&pool->mu);
	return 1;
}

int topo__pool_wait(struct topo__pool *pool, const struct timespec *deadline)
{
	struct worker *w = pool->workers[0];
	int64_t dl = deadline != NULL ? ns_of(deadline) : -1;
	int rc = 0, spun = 0;
	unsigned ran = 0;

	for (;;) {
		while (w->len > 0) {
			run_one(pool, w);
			spun = 0;
			if (dl >= 0 && ++ran % CLOCK_EVERY == 0 &&
			    now_ns() >= dl) {
				rc = 1;
				break;
			}
		}
		if (rc != 0 || caller_idle(pool, w, deadline, &spun, &rc))
			break;
	}
	pthread_mutex_lock(&pool->mu);
	if (pool->aborted)
		rc = 1;
	if (rc != 0) {
		/* Discard what is left: the queue, the inboxes and the
		 * caller's stack here, the workers' stacks by their owners (a
		 * worker with tasks never sleeps), then wait for the tasks
		 * still running to return so that the pool is idle and
		 * reusable. */
		atomic_store(&pool->drop, 1);
		pending_add(pool, -(int64_t)(pool->tail - pool->head));
		pool->head = pool->tail = 0;
		for (int i = 1; i < pool->nthreads; i++) {
			struct worker *o = pool->workers[i];

			pending_add(pool, -(int64_t)o->inlen);
			pool->nmail -= o->inlen > 0;
			o->inlen = 0;
			atomic_store_explicit(&o->mail, 0,
					      memory_order_relaxed);
		}
		w->delta -= (int64_t)w->len;
		w->len = 0;
		flush(pool, w);
		update_hint(pool);
		while (pending_of(pool) > 0) {
			pool->caller_asleep = 1;
			pthread_cond_wait(&pool->done, &pool->mu);
			pool->caller_asleep = 0;
		}
		update_hint(pool);
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
		for (int i = 1; i <= pool->started; i++)
			pthread_join(pool->workers[i]->thread, NULL);
	}
	if (pool->caller_mask != NULL) {
		if (pthread_equal(pool->caller, pthread_self()))
			pthread_setaffinity_np(pool->caller,
					       pool->caller_mask_size,
					       pool->caller_mask);
		topo__free(pool->caller_mask);
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

int topo__mutex_init(pthread_mutex_t *mu)
{
	pthread_mutexattr_t attr;
	int rc = pthread_mutexattr_init(&attr);

	if (rc != 0)
		return rc;
#if defined(__GLIBC__)
	rc = pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_ADAPTIVE_NP);
#endif
	if (rc == 0)
		rc = pthread_mutex_init(mu, &attr);
	pthread_mutexattr_destroy(&attr);
	return rc;
}

/* The caller's condition variable measures deadlines on CLOCK_MONOTONIC,
 * which wall-clock changes do not move. */
static int init_sync(struct topo__pool *pool)
{
	pthread_condattr_t attr;
	int rc;

	if (topo__mutex_init(&pool->mu) != 0)
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
 * Pins a thread to one CPU: the pool pins participant i to the i-th CPU
 * the process may run on (topo__cpus_allowed), when there are no more
 * participants than those CPUs.  Without it, a worker woken by a running
 * one may be queued on the waker's CPU even when another is idle, and
 * wait there for the load balancer, milliseconds, longer than a whole
 * 16-member reduce (docs/CONSTANTS.md); and a caller
 * left free may share a CPU with a spinning worker.  Best effort: a
 * failure leaves the thread unpinned.
 */
static cpu_set_t *one_cpu(int cpu, cpu_set_t *one, size_t *size)
{
	cpu_set_t *set = one;

	*size = sizeof(*one);
	if (cpu >= CPU_SETSIZE) {
		*size = CPU_ALLOC_SIZE(cpu + 1);
		set = topo__calloc(1, *size);
		if (set == NULL)
			return NULL;
	} else {
		CPU_ZERO(one);
	}
	CPU_SET_S(cpu, *size, set);
	return set;
}

static void pin_attr(pthread_attr_t *attr, int cpu)
{
	cpu_set_t one, *set;
	size_t size;

	set = one_cpu(cpu, &one, &size);
	if (set == NULL)
		return;
	pthread_attr_setaffinity_np(attr, size, set);
	if (set != &one)
		topo__free(set);
}

/* Binds the calling thread (participant 0) to cpu, keeping its mask for
 * topo__pool_free to restore. */
static void pin_caller(struct topo__pool *pool, int cpu)
{
	cpu_set_t one, *set;
	size_t size;

	pool->caller = pthread_self();
	for (size_t bits = CPU_SETSIZE; bits <= ((size_t)1 << 20); bits *= 2) {
		size_t sz = CPU_ALLOC_SIZE(bits);
		cpu_set_t *mask = topo__calloc(1, sz);

		if (mask == NULL)
			return;
		if (pthread_getaffinity_np(pool->caller, sz, mask) == 0) {
			pool->caller_mask = mask;
			pool->caller_mask_size = sz;
			break;
		}
		topo__free(mask);
	}
	if (pool->caller_mask == NULL)
		return;
	set = one_cpu(cpu, &one, &size);
	if (set == NULL ||
	    pthread_setaffinity_np(pool->caller, size, set) != 0) {
		/* Nothing to restore. */
		topo__free(pool->caller_mask);
		pool->caller_mask = NULL;
	}
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
	atomic_init(&pool->wake_at, TOPO__POOL_WAKE_AT);
	atomic_init(&pool->pending, 0);
	atomic_init(&pool->queued, 0);
	atomic_init(&pool->hungry, 0);
	atomic_init(&pool->drop, 0);
	atomic_init(&pool->spin_until, 0);
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
		atomic_init(&w->mail, 0);
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
	/* Where to pin each participant, when each can have a CPU of its
	 * own (a failed allocation only leaves them unpinned); only then do
	 * idle participants spin. */
	if (threads > 1 && topo__cpus_allowed(NULL, 0) >= threads) {
		cpu = topo__mallocarray((size_t)threads, sizeof(int));
		if (cpu != NULL && topo__cpus_allowed(cpu, threads) < threads) {
			topo__free(cpu); /* the mask changed meanwhile */
			cpu = NULL;
		}
	}
	if (cpu != NULL) {
		pool->spin_ns = SPIN_NS;
		pin_caller(pool, cpu[0]);
	}
	for (int i = 1; i < threads; i++) {
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
				  i, threads - 1, strerror(e));
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

bool topo__pool_spins(const struct topo__pool *pool)
{
	return pool->spin_ns > 0;
}

bool topo__pool_hungry(struct topo__pool *pool)
{
	return atomic_load_explicit(&pool->hungry, memory_order_relaxed) == 1;
}

bool topo__pool_dropping(struct topo__pool *pool)
{
	return atomic_load_explicit(&pool->drop, memory_order_relaxed) != 0;
}
