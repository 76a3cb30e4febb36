/*
 * pool.h - the worker pool (pool.c): the calling thread and worker threads
 * running tasks through a callback.
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_RUN_POOL_H
#define TOPO_RUN_POOL_H

#include "topo_internal.h"

#include <time.h>

/* The worker pool (pool.c): the calling thread and threads - 1 worker
 * threads running tasks (int64 ids) through a callback.  Participant 0 is
 * the thread that calls topo__pool_new and topo__pool_wait: it runs tasks
 * while it waits.  Idle participants spin briefly (only when each has a
 * CPU of its own), then block on a condition variable. */

struct topo__pool;

/* Initialises *mu for the replay's short critical sections (the pool's
 * queue, the in-process transport's reduction buckets): with glibc, an
 * adaptive mutex, which spins briefly before it sleeps (pool.c).  Returns
 * 0 or pthread_mutex_init's error. */
int topo__mutex_init(pthread_mutex_t *mu);

/* run(ctx, task, worker) executes a task; it may push more tasks with
 * topo__pool_push(pool, task, worker).  When there are at least `threads`
 * CPUs the process may run on, participant i is bound to the i-th of them
 * (the caller's own mask is restored by topo__pool_free).  Returns 0,
 * TOPO_ENOMEM or TOPO_EIO (threads could not be created). */
int topo__pool_new(struct topo__pool **out, int threads,
		   void (*run)(void *ctx, int64_t task, int worker),
		   void *ctx, topo_error *err);
/* Queues a task; worker is the calling participant's index (inside a task,
 * or 0 from the caller before topo__pool_wait), or -1 for the shared
 * queue. */
void topo__pool_push(struct topo__pool *pool, int64_t task, int worker);
/* Queues a task for participant `target` alone, which takes it when idle
 * (a spinning one at once; a sleeping one is woken); where its inbox is
 * full, or target is out of range, the task goes to the shared queue, and
 * target 0 is the caller's own stack (so only the caller may call this,
 * before topo__pool_wait).  The task may still be shared once the target
 * holds it with others. */
void topo__pool_push_to(struct topo__pool *pool, int64_t task, int target);
/* Whether idle participants spin: each has a CPU of its own. */
bool topo__pool_spins(const struct topo__pool *pool);
/* Whether a participant is spinning idle with the queue empty (a hint,
 * one relaxed load): work pushed to the shared queue now would be taken
 * at once.  False where idle participants only sleep. */
bool topo__pool_hungry(struct topo__pool *pool);
/* Whether the pool is discarding its tasks (a failed delivery, an abort,
 * the wait's deadline): a task running a queue of its own stops (a hint,
 * one relaxed load). */
bool topo__pool_dropping(struct topo__pool *pool);
/* Runs tasks on the calling thread until every pushed task (and those they
 * pushed) has run, or until the absolute CLOCK_MONOTONIC deadline.
 * Returns 0, 1 on timeout or abort (queued tasks are then dropped and the
 * pool is idle on return), or TOPO_ENOMEM when a push found no memory and
 * a task was lost. */
int topo__pool_wait(struct topo__pool *pool, const struct timespec *deadline);
/* Wakes the sleeping workers so that they spin for up to 2 ms
 * (topo__tune.pool_wake_spin_ns; tests raise it), ready for work about to be
 * released (a no-op where idle participants do not spin). */
void topo__pool_wake(struct topo__pool *pool);
/* Ends the longer spin of topo__pool_wake, also for workers spinning now:
 * they go back to the short spin after their last task, then sleep.  For
 * a run whose plan is too small to share, once the work it woke them for
 * (filling the inputs, a verification) is done: a worker still spinning
 * when an iteration starts would be handed half of its few tasks, a
 * cache-line hand-off that costs more than running them. */
void topo__pool_calm(struct topo__pool *pool);
/* topo__pool_wake, then waits (at most 1 ms) until every worker spins, so
 * that work pushed next is taken at once, as MPI's ranks are all in the
 * call when a benchmark's barrier before it returns.  Returns 1 when every
 * worker spins, 0 when the time ran out first or idle participants do not
 * spin. */
int topo__pool_ready(struct topo__pool *pool);
/* How many tasks a participant holds before it wakes a sleeping one to
 * share them (default TOPO__POOL_WAKE_AT; at least 1); a spinning one
 * takes work from anyone holding 2. */
#define TOPO__POOL_WAKE_AT 64
void topo__pool_wake_at(struct topo__pool *pool, size_t tasks);
/* Makes topo__pool_wait return early; callable from a task. */
void topo__pool_abort(struct topo__pool *pool);
/* Stops and joins the workers.  NULL is allowed. */
void topo__pool_free(struct topo__pool *pool);

#endif /* TOPO_RUN_POOL_H */
