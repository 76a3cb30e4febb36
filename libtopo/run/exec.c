/*
 * exec.c - running a plan: buffers through a transport, a pool of worker
 * threads releasing each message once the messages it waits for have
 * completed, timing of the collective alone and verification after every
 * iteration.  The iterations themselves, their deadline, times and
 * verify cadence are the run driver's (driver.c): this file fills its ops.
 *
 * A run: open the transport (which refuses buffers larger than memory),
 * fill every member's SEND with the input pattern, start the pool, then per
 * iteration reset RECV/WORK to the poison byte and the receipt counters
 * (not timed; shared by the participants when the run has homes), start
 * the clock, push one seed task that releases every message waiting for
 * nothing (one per home, each to its participant), wait until all
 * messages have run (or the timeout, or a failed delivery), stop the
 * clock, sum the participants' receipt counts and verify (not timed).
 *
 * Each message task delivers through the transport, bumps its receipt
 * counter (count_receipt) and decrements the wait count of each
 * successor; the one that brings a count to 0 pushes that successor onto
 * its own worker's stack.  The decrement is acquire-release, so a message
 * always sees the bytes written by every message it waited for.
 */
#define TOPO_INTERNAL
#include "exec_hook.h"
#include "plan_memory.h"
#include "run/driver.h"
#include "run/report.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_ERRORS TOPO__REPORT_MAX_ERRORS
/* Most workers a run starts by default. */
#define MAX_THREADS 4096

/* Seed tasks: task -1 - i pushes the messages with nothing to wait for
 * from the i-th on, SEED_BATCH of them and a seed for the rest, from a
 * worker, so that they start on that worker's own stack rather than one by
 * one through the pool's queue, and so that the pool never holds more
 * than a batch of them at once (a gather in a million chunks has tens of
 * millions, which would otherwise all sit on one stack). */
#define SEED_TASK(i) (-1 - (int64_t)(i))
#define SEED_BATCH 4096
/* Release tasks: task -1 - nroots - k releases the successors
 * p->succ[k ..], at most topo__tune.release_chunk of them and not past the end
 * of the list k is in (release()). */
#define RELEASE_TASK(x, k) (-1 - (x)->nroots - (int64_t)(k))
/* Part tasks: task -1 - part_base - k delivers x->part[k] (see parts,
 * below); part_base is past every seed and release task. */
#define PART_TASK(x, k) (-1 - (x)->part_base - (int64_t)(k))

/* Filling the inputs in parallel: tasks of at most FILL_BYTES bytes or
 * FILL_MEMBERS members (a larger member is cut into pieces). */
#define FILL_BYTES ((int64_t)4 << 20)
#define FILL_MEMBERS 4096

/* Members r0 .. r1 - 1 whole (len < 0), or bytes [off, off + len) of
 * member r0 (r1 = r0 + 1). */
struct fill_task {
	int32_t r0, r1;
	int64_t off, len;
};

/* Everything a run's workers share.  Read-only during an iteration except
 * nwait and slot_count (atomic builtins), each participant's own part of
 * tcount, and failed (C11 atomic). */
struct run {
	const struct topo_plan *p;
	const struct topo__transport_ops *tr;
	/* tr's deliver, or its deliver_trusted once every message of the
	 * plan was found within its buffers */
	int (*deliver)(void *state, const struct topo_plan *p, int64_t m);
	/* tr's slices, when the run uses deliver_trusted and the transport
	 * has them: then the run moves small copies itself (SMALL_COPY) */
	const struct topo__slices *sl;
	void *state;
	struct topo__pool *pool;
	int32_t *nwait;	     /* [nmsg], this iteration's remaining waits */
	/* [nmsg]: each message's waits at the start of an iteration, its
	 * dependencies and, in a chain of combines (plan/order.c), the
	 * combine before it */
	const int32_t *nwait0;
	int64_t *slot_count; /* [nslots] */
	/* Receipts counted by each participant apart, without a locked
	 * instruction (count_receipt), and summed into slot_count once an
	 * iteration is done: [threads][nslots], or NULL (then slot_count
	 * directly, atomically). */
	int32_t *tcount;
	int64_t nslots;
	int threads;
	/* a barrier's: [nmsg] when each marked step completed, in the
	 * order of seq (topo__verify_barrier); NULL otherwise */
	int64_t *stamp;
	_Atomic int64_t seq;
	int64_t *roots;	     /* [nroots] messages waiting for nothing */
	int64_t nroots;
	/* Homes (plan_homes): 0, or the participants among which each
	 * iteration's reset and its first messages are split by address.
	 * Participant t resets its part of the receive and work buffers
	 * (split by offset or by arena) and starts with roots[home_roots[t]
	 * .. home_roots[t + 1] - 1], the messages waiting for nothing whose
	 * destination lies there. */
	int nhome;
	bool home_by_offset;
	int64_t *home_roots;
	/* The send bytes participant t reads in the reset (plan_warm):
	 * warm_ranges[warm_at[t] .. warm_at[t + 1] - 1]; NULL: its roots'
	 * sources and its part of every send buffer (or, without
	 * warm_send, nothing). */
	struct warm *warm_ranges;
	int64_t *warm_at;
	/* While the inputs are filled: the tasks are fill[] (not messages),
	 * members done so far, and the progress callback (called by the
	 * calling thread, participant 0, only). */
	bool filling;
	struct fill_task *fill;
	double deadline; /* topo__now() seconds */
	_Atomic int64_t filled;
	topo_progress_fn progress;
	void *progress_ctx;
	double next_progress;
	/* While the verification shares its work (run_par): its tasks,
	 * run instead of messages */
	void (*job)(void *arg, int64_t k);
	void *job_arg;
	struct timespec deadline_ts; /* deadline, for topo__pool_wait */
	bool heavy; /* is_heavy(): workers woken every time (wake_at()) */
	/* Parts (see deliver_parts), or NULL where messages are delivered
	 * whole: this iteration's x->nparts of them, at most PART_CAP. */
	struct part *part;
	_Atomic int64_t nparts;
	int64_t part_base;
	/* Lanes (see run_lane), or NULL: lane_at[i] is message i's entry in
	 * lane_ent, or -1 for a message in no lane. */
	int32_t *lane_at;
	struct lane_ent *lane_ent;
	union lane *lanes;
	_Atomic int64_t failed; /* first message whose delivery failed */
	unsigned char warm;	/* reset()'s reads, kept */
	bool warm_send;		/* the reset reads the send buffers back */
	_Atomic int failed_rc;
};

/* Bytes [lo, hi) of member's send buffer, read by participant home in
 * the reset (plan_warm). */
struct warm {
	int32_t home, member;
	int64_t lo, hi;
};

/* Bytes [lo, hi) of message msg, a part of it that another participant
 * delivers. */
struct part {
	int64_t msg, lo, hi;
};

/* A combine in a lane: its message, its lane, and the next entry of the
 * lane's stack while it waits there (-1: none). */
struct lane_ent {
	int64_t msg;
	int32_t lane, next;
};

/* A lane: the stack of its combines waiting (head, an entry or -1), and
 * how many have joined and not yet been delivered, padded to a cache line
 * of its own: lanes of neighbouring members' bytes taken by different
 * threads would otherwise pass their line back and forth. */
union lane {
	struct {
		_Atomic int32_t head, count;
	} l;
	unsigned char line[64];
};

/* Fill task k (see struct fill_task). */
static void fill_one(struct run *x, int64_t k, int worker)
{
	const struct fill_task *f = &x->fill[k];
	const struct topo_plan *p = x->p;
	int64_t done = f->r1 - f->r0;
	double t;

	/* A task is up to 4 MiB of pattern, tens of milliseconds (more
	 * under a sanitizer): each looks at the clock, so that the run stops
	 * within one task of its deadline, whoever runs it. */
	t = topo__now();
	if (t >= x->deadline) {
		topo__pool_abort(x->pool);
		return;
	}
	if (f->len >= 0) {
		topo__pattern_fill_at(
		    p, f->r0, (uint64_t)f->off,
		    x->tr->buffer(x->state, f->r0, TOPO__SEND) + f->off,
		    (size_t)f->len);
		/* The member counts as done with its last piece. */
		done = f->off + f->len == topo__bufsize(p, TOPO__SEND, f->r0);
	} else {
		for (int32_t r = f->r0; r < f->r1; r++) {
			int64_t len = topo__bufsize(p, TOPO__SEND, r);

			if (len > 0)
				topo__pattern_fill(
				    p, r, x->tr->buffer(x->state, r, TOPO__SEND),
				    (size_t)len);
		}
	}
	done += atomic_fetch_add(&x->filled, done);
	if (worker == 0 && x->progress != NULL && t >= x->next_progress) {
		x->next_progress = t + TOPO__PROGRESS_EVERY;
		x->progress(x->progress_ctx, "filling inputs", done, p->n);
	}
}

/*
 * Small copies, moved by the run itself.  Over a million members a bcast
 * of 8 bytes is a million deliveries of 8 bytes, and the calls around
 * each (the pool's, the transport's, memcpy's) were most of its time:
 * about 260 instructions a delivery.  A COPY of at most SMALL_COPY bytes
 * of a transport that gives its slices is therefore moved here, and such
 * a message that releases nothing (a leaf of a bcast) runs at once in the
 * loop of the message that releases it instead of through the pool: it is
 * too small to be worth sharing.
 */
#define SMALL_COPY TOPO__SMALL_COPY

static inline bool is_small_copy(const struct run *x, const struct topo__msg *m)
{
	return x->sl != NULL && m->kind == TOPO__COPY && m->len <= SMALL_COPY;
}

/* len <= SMALL_COPY bytes from src to dst, which may overlap (a local
 * step within one buffer): every byte is loaded before any is stored. */
static inline void copy_small(unsigned char *dst, const unsigned char *src,
			      size_t len)
{
	if (len >= 8) {
		uint64_t a, b;

		memcpy(&a, src, 8);
		memcpy(&b, src + len - 8, 8);
		memcpy(dst, &a, 8);
		memcpy(dst + len - 8, &b, 8);
	} else if (len >= 4) {
		uint32_t a, b;

		memcpy(&a, src, 4);
		memcpy(&b, src + len - 4, 4);
		memcpy(dst, &a, 4);
		memcpy(dst + len - 4, &b, 4);
	} else if (len > 0) {
		unsigned char a = src[0], b = src[len / 2], c = src[len - 1];

		dst[0] = a;
		dst[len / 2] = b;
		dst[len - 1] = c;
	}
}

static inline void move_small(const struct run *x, const struct topo__msg *m)
{
	copy_small(topo__slice(x->sl, m->dst, m->dbuf) + m->doff,
		   topo__slice(x->sl, m->src, m->sbuf) + m->soff,
		   (size_t)m->len);
}

/* Counts a receipt into slot (>= 0) on participant `worker`.  A locked
 * add per delivery also waits for every store before it, the copy's
 * included: a bcast of 8 bytes over 1,048,576 members took 11.5 ms with
 * it, 9.0 without (2 threads, this file's host). */
static inline void count_receipt(struct run *x, int64_t slot, int worker)
{
	if (x->tcount != NULL)
		x->tcount[(size_t)worker * (size_t)x->nslots + (size_t)slot]++;
	else if (x->threads == 1)
		x->slot_count[slot]++;
	else
		__atomic_fetch_add(&x->slot_count[slot], 1, __ATOMIC_RELAXED);
}

/* Whether message s, just released, runs at once (see SMALL_COPY). */
static inline bool runs_inline(const struct run *x, const struct topo_plan *p,
			       int64_t s)
{
	const struct topo__msg *m = &p->msg[s];

	return is_small_copy(x, m) && m->mark == TOPO__MARK_NONE &&
	       p->succ_off[s] == p->succ_off[s + 1];
}

/* (the default of topo__tune.release_chunk: tune.c) */

/* The last index i in [0, n) with a[i] <= k, for a sorted a with
 * a[0] <= k: where k falls in a list of starts (empty ranges, which share
 * their start with the next, are passed over). */
static int64_t last_at_or_before(const int64_t *a, int64_t n, int64_t k)
{
	int64_t lo = 0, hi = n - 1;

	while (lo < hi) {
		int64_t mid = lo + (hi - lo + 1) / 2;

		if (a[mid] <= k)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/* The message whose successor list holds p->succ[k]. */
static int64_t owner_of(const struct topo_plan *p, int64_t k)
{
	return last_at_or_before(p->succ_off, p->nmsg, k);
}

/* Releases p->succ[k0 .. k1 - 1], successors of one message: each whose
 * last wait this was runs at once (runs_inline) or goes onto the worker's
 * stack.  A list longer than topo__tune.release_chunk (a flat tree's root, with
 * a successor per member) keeps its first chunk and pushes the others as
 * release tasks, so that an idle thread takes its share of the leaves
 * that would otherwise all run here.  (Gathering the ones that run at
 * once, to count them all before copying, was slower over a million
 * members: 18.7 ms against 16.3.) */
static void release(struct run *x, const struct topo_plan *p, int64_t k0,
		    int64_t k1, int worker)
{
	const uint8_t *conly = p->conly;

	if (k1 - k0 > topo__tune.release_chunk) {
		for (int64_t k = k0 + topo__tune.release_chunk; k < k1;
		     k += topo__tune.release_chunk)
			topo__pool_push(x->pool, RELEASE_TASK(x, k), worker);
		k1 = k0 + topo__tune.release_chunk;
	}

	/* Over a million members each successor's record is a cache miss:
	 * ask for all of them before the first is read, so that the misses
	 * overlap (bcast over 1,048,576 members: 8% less time). */
	if (k1 - k0 > 1)
		for (int64_t k = k0; k < k1; k++)
			__builtin_prefetch(&p->msg[p->succ[k]]);
	for (int64_t k = k0; k < k1; k++) {
		int64_t s = p->succ[k];

		/* A successor that waits for this message alone needs no
		 * count: this is its only release.  In a plan with chains of
		 * combines (conly not NULL), the run's own counts say so,
		 * and a combine that waits for its chain alone is the
		 * chain's to release (finish). */
		if (conly != NULL) {
			if (conly[s] ||
			    (x->nwait0[s] != 1 &&
			     __atomic_sub_fetch(&x->nwait[s], 1,
						__ATOMIC_ACQ_REL) != 0))
				continue;
		} else if (p->msg[s].nwait != 1 &&
			   __atomic_sub_fetch(&x->nwait[s], 1,
					      __ATOMIC_ACQ_REL) != 0) {
			continue;
		}
		if (runs_inline(x, p, s)) {
			const struct topo__msg *q = &p->msg[s];

			move_small(x, q);
			if (q->slot >= 0)
				count_receipt(x, q->slot, worker);
		} else {
			topo__pool_push(x->pool, s, worker);
		}
	}
}

/* The end of the roots that the seed task of roots[i] pushes: the end of
 * its home's (see struct run), or of them all. */
static int64_t seed_last(const struct run *x, int64_t i)
{
	if (x->nhome == 0)
		return x->nroots;
	return x->home_roots[last_at_or_before(x->home_roots, x->nhome, i) + 1];
}

/* A failed delivery of message i: the first is kept, and the run ends. */
static void fail(struct run *x, int64_t i, int rc)
{
	int64_t none = -1;

	if (atomic_compare_exchange_strong(&x->failed, &none, i))
		atomic_store(&x->failed_rc, rc);
	topo__pool_abort(x->pool);
}

/* Message i, delivered: its receipt counted, its mark stamped, and its
 * successors released.  Returns the combine that follows i in its chain
 * (plan/order.c) when this made it ready, for the caller to run or push,
 * else -1. */
static inline __attribute__((always_inline)) int64_t
finish(struct run *x, int64_t i, int worker)
{
	const struct topo_plan *p = x->p;
	const struct topo__msg *m = &p->msg[i];

	if (m->slot >= 0)
		count_receipt(x, m->slot, worker);
	/* Before its successors are released: a step that depends on this
	 * one is always stamped later. */
	if (m->mark != TOPO__MARK_NONE)
		x->stamp[i] = atomic_fetch_add(&x->seq, 1);
	release(x, p, p->succ_off[i], p->succ_off[i + 1], worker);
	/* the next combine into these bytes, in the plan's order: at once
	 * when it waits for its chain alone, else once its count is out */
	if (p->cnext != NULL && p->cnext[i] >= 0 &&
	    (p->conly[p->cnext[i]] ||
	     __atomic_sub_fetch(&x->nwait[p->cnext[i]], 1, __ATOMIC_ACQ_REL) ==
		 0))
		return p->cnext[i];
	return -1;
}

/* finish(), and the chain's next combine (if it became ready) pushed. */
static void finish_push(struct run *x, int64_t i, int worker)
{
	int64_t next = finish(x, i, worker);

	if (next >= 0)
		topo__pool_push(x->pool, next, worker);
}

/*
 * Parts.  A message is one task, so a large one keeps one thread busy
 * while another may have nothing to do: two members' allgather of 1 MiB
 * blocks is four copies along two chains, and the thread whose chain ends
 * first waits for the other's last copy.  So a message of at least
 * topo__tune.split_min bytes is delivered SPLIT_CHUNK bytes at a time, and
 * before each chunk the thread looks whether a participant is spinning
 * idle (topo__pool_hungry, one relaxed load): if one is and at least
 * topo__tune.split_min bytes are left, it hands the upper half of them to the
 * shared queue as a part task and goes on with the lower half.  A part
 * splits again the same way.  nwait[i], which has done its work once the
 * message runs, counts its parts still being delivered (1 to start); the
 * participant whose part brings it to 0 finishes the message.  So the
 * parts are made only when, and as far as, a participant is free to take
 * them, at any point of a delivery: its start, or the end of a run where
 * one thread's last copy would otherwise run alone.  Each offer costs a
 * lock of the pool's queue and a cache line or two between threads, about
 * a microsecond here, against the 5 us that half of the smallest part
 * (topo__tune.split_min, 256 KiB) takes to copy.  Parts stop at PART_CAP an
 * iteration (an idle pool is not that fickle; the rest go whole).
 */
#define SPLIT_CHUNK ((int64_t)128 << 10)
#define PART_CAP 4096
/* (the default of topo__tune.split_min: tune.c) */
/* (the default of topo__tune.split_eager: tune.c) */

static inline bool splits(const struct run *x, int64_t i)
{
	return x->part != NULL && x->p->msg[i].len >= topo__tune.split_min &&
	       x->tr->splits(x->state, x->p, i);
}

/* Offers bytes [lo, hi) of message i as a part task; returns whether it
 * was (false: this iteration has PART_CAP parts already). */
static bool offer(struct run *x, int64_t i, int64_t lo, int64_t hi)
{
	int64_t k =
	    atomic_fetch_add_explicit(&x->nparts, 1, memory_order_relaxed);

	if (k >= PART_CAP)
		return false;
	x->part[k] = (struct part){i, lo, hi};
	/* The caller still holds its own count, so nwait[i] cannot reach 0
	 * before this part is added; the push (under the pool's lock)
	 * publishes part[k] to whoever takes the task. */
	__atomic_add_fetch(&x->nwait[i], 1, __ATOMIC_RELAXED);
	topo__pool_push(x->pool, PART_TASK(x, k), -1);
	return true;
}

/* Delivers bytes [lo, hi) of message i (see Parts), then the message's
 * end when this was its last part. */
static void deliver_parts(struct run *x, int64_t i, int64_t lo, int64_t hi,
			  int worker)
{
	int64_t min = topo__tune.split_min;

	while (lo < hi) {
		int64_t end;
		int rc;

		if (hi - lo >= min && min > 0 &&
		    (topo__tune.split_eager || topo__pool_hungry(x->pool))) {
			int64_t mid = lo + ((hi - lo) / 2 & ~(int64_t)63);

			if (mid > lo && offer(x, i, mid, hi))
				hi = mid;
		}
		end = hi - lo > SPLIT_CHUNK ? lo + SPLIT_CHUNK : hi;
		rc = x->tr->deliver_part(x->state, x->p, i, lo, end);
		if (rc != 0) {
			fail(x, i, rc);
			return;
		}
		lo = end;
	}
	if (__atomic_sub_fetch(&x->nwait[i], 1, __ATOMIC_ACQ_REL) == 0)
		finish_push(x, i, worker);
}

/*
 * Lanes.  The combines into one accumulator (a star's: 15 REDUCEs into
 * each segment of a 16-member reduce on one node, each waiting only for
 * the segment's first copy) run in any order but one at a time: the
 * transport holds their bytes.  A participant that took one while
 * another combined into the same bytes slept on that range until it was
 * free, with nothing else to do, while the combines into the other
 * segments waited: in one iteration of that reduce of 1 MiB, 166 us of
 * 483.  So REDUCEs of at least topo__tune.lane_min bytes into exactly the same
 * bytes of the same buffer (two or more of them, not delivered in parts)
 * form a lane.  A participant that takes one while the lane is empty
 * delivers it at once, one compare-and-swap on the lane's count; one that
 * finds the lane busy pushes its combine onto the lane's stack, counts it
 * in and goes on with other work.  The participant delivering (the
 * runner) counts each combine out once delivered and pops the next until
 * the count falls back to 0.  A combine is counted in after its push, so
 * a runner never finds the stack empty, and only the runner pops.  The
 * combines run in the order the lane hands them over, which the plan
 * leaves free.  A runner stops when the run is stopping (a failed
 * delivery, the deadline), and so does the run: each run makes its lanes
 * anew.  Like a large message, a lane that the caller runs finishes
 * before the caller sees the deadline.
 *
 * A lane keeps its count and its stack on one line of memory, with one
 * atomic operation per combine: lanes spread over two lines with four
 * atomics passed lines between the threads and cost more than they
 * saved (docs/CONSTANTS.md).
 */
/* (the default of topo__tune.lane_min: tune.c) */
void (*topo__lane_probe)(int64_t msg, int worker);

/* Message i, a combine of a lane (x->lane_at[i] >= 0): joins the lane,
 * and delivers its combines when no participant does. */
static void run_lane(struct run *x, int64_t i, int worker)
{
	int32_t e = x->lane_at[i], c = 0, h;
	union lane *l = &x->lanes[x->lane_ent[e].lane];
	int64_t m = i;

	/* Alone in the lane: delivered at once, not through the stack. */
	if (!atomic_compare_exchange_strong_explicit(&l->l.count, &c, 1,
						     memory_order_acq_rel,
						     memory_order_relaxed)) {
		h = atomic_load_explicit(&l->l.head, memory_order_relaxed);
		do
			x->lane_ent[e].next = h;
		while (!atomic_compare_exchange_weak_explicit(
		    &l->l.head, &h, e, memory_order_release,
		    memory_order_relaxed));
		if (atomic_fetch_add_explicit(&l->l.count, 1,
					      memory_order_acq_rel) != 0) {
			if (topo__lane_probe != NULL)
				topo__lane_probe(i, worker);
			return;
		}
		m = -1; /* the lane emptied meanwhile: i is on its stack */
	}
	for (;;) {
		int rc;

		if (m < 0) {
			h = atomic_load_explicit(&l->l.head,
						 memory_order_acquire);
			while (!atomic_compare_exchange_weak_explicit(
			    &l->l.head, &h, x->lane_ent[h].next,
			    memory_order_acquire, memory_order_acquire))
				;
			m = x->lane_ent[h].msg;
		}
		if (topo__pool_dropping(x->pool))
			return;
		rc = x->deliver(x->state, x->p, m);
		if (rc != 0) {
			fail(x, m, rc);
			return;
		}
		finish_push(x, m, worker);
		if (atomic_fetch_sub_explicit(&l->l.count, 1,
					      memory_order_acq_rel) == 1)
			return;
		m = -1;
	}
}

static void run_task(void *ctx, int64_t task, int worker)
{
	struct run *x = ctx;
	const struct topo_plan *p = x->p;
	const struct topo__msg *m;
	int rc;

	if (x->job != NULL) {
		x->job(x->job_arg, task);
		return;
	}
	if (x->filling) {
		fill_one(x, task, worker);
		return;
	}
	if (task < 0 && -1 - task >= x->part_base) {
		const struct part *q = &x->part[-1 - task - x->part_base];

		deliver_parts(x, q->msg, q->lo, q->hi, worker);
		return;
	}
	if (task < 0 && -1 - task >= x->nroots) {
		int64_t k = -1 - task - x->nroots;
		int64_t end = p->succ_off[owner_of(p, k) + 1];

		release(x, p, k,
			end - k > topo__tune.release_chunk
			    ? k + topo__tune.release_chunk
			    : end,
			worker);
		return;
	}
	if (task < 0) {
		int64_t i = -1 - task, end = i + SEED_BATCH,
			last = seed_last(x, i);

		/* The rest first: the stack is LIFO, so this batch runs
		 * before the next is released. */
		if (end < last)
			topo__pool_push(x->pool, SEED_TASK(end), worker);
		else
			end = last;
		for (; i < end; i++)
			topo__pool_push(x->pool, x->roots[i], worker);
		return;
	}
again:
	m = &p->msg[task];
	if (splits(x, task)) {
		/* nwait[task] is 0 or (a single wait, never counted) 1 now,
		 * and read by nobody else until this thread offers a
		 * part. */
		x->nwait[task] = 1;
		deliver_parts(x, task, 0, m->len, worker);
		return;
	}
	if (x->lane_at != NULL && x->lane_at[task] >= 0) {
		run_lane(x, task, worker);
		return;
	}
	rc = 0;
	if (is_small_copy(x, m))
		move_small(x, m);
	else
		rc = x->deliver(x->state, p, task);
	if (rc != 0) {
		fail(x, task, rc);
		return;
	}
	/* The next combine of a chain runs here, on the accumulator this
	 * thread has just written, unless the run is stopping. */
	task = finish(x, task, worker);
	if (task >= 0 && !topo__pool_dropping(x->pool))
		goto again;
}

/* ---------------------------------------------------------------------- */
/* Reports */

struct verify_ctx {
	topo_report *r;
	const int32_t *members;
};

static unsigned char *verify_buffer(void *ctx, int32_t r, int kind)
{
	struct run *x = ctx;

	return x->tr->buffer(x->state, r, kind);
}

/* The run's topo__pool_wake_at: a heavy plan's workers share from 2 tasks
 * held, a small plan's only from the pool's default. */
static size_t wake_at(const struct run *x)
{
	return x->heavy ? 2 : TOPO__POOL_WAKE_AT;
}

/* topo__verify_time's par: the verification's tasks on every thread,
 * woken for them (they are few and long).  Should the pool lose a task
 * (no memory for its queue), every task runs again on this thread: they
 * only write what they compute. */
static int run_par(void *pctx, int64_t n, void (*fn)(void *arg, int64_t k),
		   void *arg)
{
	struct run *x = pctx;
	int w;

	x->job = fn;
	x->job_arg = arg;
	topo__pool_wake_at(x->pool, 2);
	topo__pool_wake(x->pool);
	for (int64_t k = n - 1; k >= 0; k--)
		topo__pool_push(x->pool, k, 0);
	w = topo__pool_wait(x->pool, &x->deadline_ts);
	x->job = NULL;
	topo__pool_wake_at(x->pool, wake_at(x));
	if (!x->heavy) /* see topo__pool_calm */
		topo__pool_calm(x->pool);
	if (w < 0) {
		for (int64_t k = 0; k < n; k++)
			fn(arg, k);
		w = 0;
	}
	return w;
}

/* The verifier counts every error itself: only keep what it reports. */
static void verify_report(void *ctx2, const struct topo__verify_error *e)
{
	struct verify_ctx *v = ctx2;
	struct topo__report_error *d;

	if (v->r->nerr >= MAX_ERRORS)
		return;
	d = &v->r->err[v->r->nerr++];
	d->endpoint = e->rank >= 0 ? v->members[e->rank] : -1;
	d->kind = e->kind;
	snprintf(d->detail, sizeof(d->detail), "%s", e->detail);
}

/* The run's one pass over the plan before its first iteration: each
 * message's waits (nwait0), how many wait for nothing, whether all lie
 * within their buffers (then the trusted deliver) and the traffic the
 * report counts.  Over millions of messages it is memory-bound, so it runs
 * in tasks of SCAN_MSGS messages on every thread (bcast over 8,388,608
 * members: three passes over 400 MB of messages were 0.3 s). */
#define SCAN_MSGS ((int64_t)1 << 18)

struct scan {
	const struct topo_plan *p;
	int32_t *nwait0;
	/* [nmsg]: 1 for a combine with one before it in its chain */
	const uint8_t *chained;
	struct scan_part {
		int64_t nroots;
		int64_t messages[2], bytes[2];
		bool in_bounds;
	} *part;
};

static void scan_task(void *arg, int64_t k)
{
	struct scan *c = arg;
	const struct topo_plan *p = c->p;
	struct scan_part *q = &c->part[k];
	int64_t lo = k * SCAN_MSGS,
		hi = p->nmsg - lo < SCAN_MSGS ? p->nmsg : lo + SCAN_MSGS;

	memset(q, 0, sizeof(*q));
	q->in_bounds = true;
	for (int64_t i = lo; i < hi; i++) {
		const struct topo__msg *m = &p->msg[i];

		c->nwait0[i] = p->conly != NULL && p->conly[i]
				   ? 1
				   : m->nwait + c->chained[i];
		q->nroots += c->nwait0[i] == 0;
		q->in_bounds &= topo__msg_in_bounds(p, m);
		topo__traffic_of(p, m, q->messages, q->bytes);
	}
}

/* Scans p (struct scan) into nwait0, r's traffic, x->nroots and
 * *in_bounds; parts: [ntasks] of them. */
static void scan_plan(struct run *x, topo_report *r, int32_t *nwait0,
		      const uint8_t *chained, struct scan_part *parts,
		      int64_t ntasks, bool *in_bounds)
{
	struct scan c = {x->p, nwait0, chained, parts};

	/* Should the pool lose a task or reach the deadline, every task runs
	 * again here: each only writes its own part and nwait0's. */
	if (ntasks < 2 || run_par(x, ntasks, scan_task, &c) != 0)
		for (int64_t k = 0; k < ntasks; k++)
			scan_task(&c, k);
	*in_bounds = true;
	x->nroots = 0;
	for (int64_t k = 0; k < ntasks; k++) {
		x->nroots += parts[k].nroots;
		*in_bounds &= parts[k].in_bounds;
		for (int net = 0; net < 2; net++) {
			r->messages[net] += parts[k].messages[net];
			r->bytes[net] += parts[k].bytes[net];
		}
	}
}

/* ---------------------------------------------------------------------- */
/* Running */

static struct timespec at(double t)
{
	struct timespec ts;

	ts.tv_sec = (time_t)t;
	ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
	if (ts.tv_nsec >= 1000000000L)
		ts.tv_nsec = 999999999L;
	return ts;
}

/* The fill tasks of p (struct fill_task) into *out, their number in *n.
 * Returns 0 or -1 (no memory). */
static int fill_tasks(const struct topo_plan *p, struct fill_task **out,
		      int64_t *n)
{
	int64_t cap = 0, k = 0;
	struct fill_task *f;

	/* Count first, then fill in: the same walk twice. */
	for (int pass = 0; pass < 2; pass++) {
		int32_t r = 0;

		while (r < p->n) {
			int64_t len = topo__bufsize(p, TOPO__SEND, r);

			if (len > FILL_BYTES) {
				for (int64_t off = 0; off < len;
				     off += FILL_BYTES) {
					if (pass == 1)
						(*out)[k] = (struct fill_task){
						    r, r + 1, off,
						    len - off < FILL_BYTES
							? len - off
							: FILL_BYTES};
					k++;
				}
				r++;
			} else {
				int32_t r1 = r;
				int64_t bytes = 0;

				while (r1 < p->n && r1 - r < FILL_MEMBERS) {
					int64_t size =
					    topo__bufsize(p, TOPO__SEND, r1);

					if (size > FILL_BYTES ||
					    bytes + size > FILL_BYTES)
						break;
					bytes += size;
					r1++;
				}
				if (pass == 1)
					(*out)[k] =
					    (struct fill_task){r, r1, 0, -1};
				k++;
				r = r1;
			}
		}
		if (pass == 0) {
			cap = k;
			k = 0;
			f = topo__mallocarray((size_t)(cap > 0 ? cap : 1),
					      sizeof(*f));
			if (f == NULL)
				return -1;
			*out = f;
		}
	}
	*n = cap;
	return 0;
}

/* Whether a plan has work enough for every worker: then the run wakes the
 * pool's sleeping workers as each iteration starts, and any of them takes
 * work as soon as a participant holds two tasks.  Otherwise the calling
 * thread starts alone and wakes a worker only when it holds many tasks at
 * once: a wake-up costs microseconds, more than a small plan takes on one
 * thread.  Heavy: at least HEAVY_MSGS messages per participant, or
 * HEAVY_BYTES bytes to move per participant. */
#define HEAVY_MSGS 64
#define HEAVY_BYTES (256 << 10)
static bool is_heavy(const struct topo_plan *p, int threads)
{
	int64_t bytes = 0;

	if (threads < 2)
		return false;
	if (p->nmsg >= (int64_t)HEAVY_MSGS * threads)
		return true;
	for (int64_t i = 0; i < p->nmsg; i++)
		bytes += p->msg[i].len;
	return bytes >= (int64_t)HEAVY_BYTES * threads;
}

/* Per-participant receipt counts (struct run's tcount) up to this many
 * bytes in all; more (8,388,608 members on 2 threads, whose run must stay
 * within 1 GiB) count with a locked add. */
#define TCOUNT_BYTES ((int64_t)32 << 20)

static bool use_tcount(const struct topo_plan *p, int threads)
{
	return threads > 1 && p->nslots > 0 &&
	       p->nslots <= TCOUNT_BYTES / 4 / threads;
}

/* slot_count = the participants' counts summed (not timed). */
static void sum_receipts(struct run *x)
{
	for (int t = 0; t < x->threads; t++) {
		const int32_t *c = x->tcount + (size_t)t * (size_t)x->nslots;

		for (int64_t s = 0; s < x->nslots; s++)
			x->slot_count[s] += c[s];
	}
}

/* Send buffers up to this many bytes in all are read once more after the
 * reset, untimed: see reset(). */
#define WARM_BYTES ((int64_t)64 << 20)

/* Reads bytes [lo, hi) of c into the caches, one byte a line; returns
 * their xor, for the caller to keep (struct run's warm) so that the
 * reads are not optimised away. */
static unsigned char read_lines(const unsigned char *c, int64_t lo, int64_t hi)
{
	const volatile unsigned char *v = c;
	unsigned char acc = 0;

	for (int64_t k = lo; k < hi; k += 64)
		acc ^= v[k];
	return acc;
}

/*
 * Homes.  The reset between iterations writes every receive and work
 * buffer, and leaves the lines it wrote in the cache of the CPU that ran
 * it; a copy into them from another CPU must first take each line from
 * there: copying the half a CPU reset itself is markedly faster than
 * copying the other's (docs/CONSTANTS.md).  An MPI rank finds its
 * buffers where it last used them.
 *
 * So a heavy run on a pool whose participants have CPUs of their own
 * (topo__pool_spins) gives each participant a home: a part of the
 * receive and work buffers, which it resets, and the messages waiting for
 * nothing whose destination's middle byte lies there, which it starts
 * with (topo__pool_push_to).  They are shared as usual once a participant
 * runs out of work, and the messages they release run where they are
 * released, as before.  The parts, on cache lines:
 *  - by offset: the same fraction of every member's buffer (participant
 *    t of T: bytes [t B/T, (t+1) B/T) of each).  Segment k of a bcast,
 *    its copy at the root and its forwards, then has one home, which
 *    reads its source once; so do the blocks an allgather or alltoall
 *    sends from one member.  Used when it spreads the first messages'
 *    bytes evenly (no home above 5/4 of its share);
 *  - else by arena: the receive and work arenas end to end, cut into T
 *    parts (a scatter's blocks, one message each).
 *
 * In the reset each participant also reads (one byte a line) the send
 * bytes its messages will read, as a repeated call finds them in its
 * cache: those of every message whose destination lies in its home
 * (plan_warm), not only of its roots, since a chain of messages runs
 * where its root started (each released onto its releaser's own stack):
 * a gather's chunks of one block, a ring's steps.  Reading instead its
 * roots' sources and its fraction of every send buffer, as this did
 * before, left half of the sources in the other CPU's cache wherever the
 * homes do not cut the send buffers the way they cut the destinations:
 * 16 members' chunked gather of 1 MiB blocks, homed by block (members
 * 0-7 and 8-15), read the second half of each block from the other CPU.
 * Reading, besides, each participant's fraction of every send buffer
 * helped only a bcast that reads half of a send buffer no message reads,
 * and cost gathers and alltoalls more: only the bytes the messages read
 * are read (docs/CONSTANTS.md).
 */

/* Runs with homes: -1 where they help (above), 0 never, 1 whenever the
 * transport gives its slices and there are 2 threads or more (tests). */
/* (the default of topo__tune.exec_homes: tune.c) */
/* At most this many roots are sorted by home, and members split by
 * offset; a plan with more roots (a gather in a million chunks) starts
 * from one participant, as without homes. */
#define HOME_ROOTS_MAX 65536
#define HOME_MEMBERS_MAX 65536

/* Where part t of n of `size` bytes starts: parts of size / n bytes
 * rounded down to a cache line, the last one taking the rest. */
static int64_t part_lo(int64_t size, int64_t t, int n)
{
	return t >= n ? size : t * (size / n / 64 * 64);
}

/* The part of n that byte o of `size` bytes lies in (part_lo). */
static int part_of(int64_t size, int64_t o, int n)
{
	int64_t step = size / n / 64 * 64;

	if (step == 0 || o / step >= n - 1)
		return n - 1;
	return (int)(o / step);
}

/* The home of message m, split by offset or by arena (see above). */
static int home_of(const struct run *x, const struct topo__msg *m,
		   bool by_offset)
{
	const struct topo__slices *sl = x->sl;
	int64_t o, mid = m->doff + m->len / 2;

	/* (No message writes a send buffer.) */
	if (m->dbuf != TOPO__RECV && m->dbuf != TOPO__WORK)
		return 0;
	if (by_offset)
		return part_of(topo__bufsize(x->p, m->dbuf, m->dst), mid,
			       x->nhome);
	o = topo__slice(sl, m->dst, m->dbuf) - sl->arena[m->dbuf] + mid;
	if (m->dbuf == TOPO__WORK)
		o += sl->bytes[TOPO__RECV];
	return part_of(sl->bytes[TOPO__RECV] + sl->bytes[TOPO__WORK], o,
		       x->nhome);
}

/* The largest number of root bytes that one home gets, split by offset or
 * by arena. */
static int64_t home_max(struct run *x, bool by_offset, int64_t *load)
{
	int64_t max = 0;

	memset(load, 0, (size_t)x->nhome * sizeof(int64_t));
	for (int64_t i = 0; i < x->nroots; i++) {
		const struct topo__msg *m = &x->p->msg[x->roots[i]];

		load[home_of(x, m, by_offset)] += m->len;
	}
	for (int t = 0; t < x->nhome; t++)
		if (load[t] > max)
			max = load[t];
	return max;
}

/* At most this many messages out of send buffers are sorted into the
 * ranges the homes read in the reset (plan_warm), 24 bytes each; more (a
 * reduce over a million members of 8 bytes) keep the reads by part. */
/* (the default of topo__tune.warm_ranges_max: tune.c) */

void (*topo__warm_probe)(int home, int32_t member, int64_t lo, int64_t hi);

static int warm_cmp(const void *a, const void *b)
{
	const struct warm *u = a, *v = b;

	if (u->home != v->home)
		return u->home < v->home ? -1 : 1;
	if (u->member != v->member)
		return u->member < v->member ? -1 : 1;
	return u->lo < v->lo ? -1 : u->lo > v->lo;
}

/* Whether message m reads bytes of a send buffer. */
static bool reads_send(const struct topo__msg *m)
{
	return m->sbuf == TOPO__SEND && m->len > 0;
}

/* x->warm_ranges and x->warm_at (see Homes): the bytes of send buffers that
 * each message reads, under the home of its destination, sorted and merged.
 * Left NULL when the reset reads nothing (!x->warm_send) or
 * more than topo__tune.warm_ranges_max messages read send buffers.  Returns 0
 * or -1 (no memory). */
static int plan_warm(struct run *x)
{
	const struct topo_plan *p = x->p;
	int64_t n = 0, k = 0;

	if (!x->warm_send)
		return 0;
	for (int64_t i = 0; i < p->nmsg; i++)
		if (reads_send(&p->msg[i]) && ++n > topo__tune.warm_ranges_max)
			return 0;
	x->warm_ranges =
	    topo__mallocarray((size_t)(n > 0 ? n : 1), sizeof(*x->warm_ranges));
	x->warm_at = topo__calloc((size_t)x->nhome + 1, sizeof(int64_t));
	if (x->warm_ranges == NULL || x->warm_at == NULL)
		return -1;
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if (reads_send(m))
			x->warm_ranges[k++] =
			    (struct warm){home_of(x, m, x->home_by_offset),
					  m->src, m->soff, m->soff + m->len};
	}
	qsort(x->warm_ranges, (size_t)n, sizeof(*x->warm_ranges), warm_cmp);
	/* Merged where one home reads overlapping or adjacent bytes of one
	 * member's buffer. */
	k = 0;
	for (int64_t i = 0; i < n; i++) {
		struct warm *last = k > 0 ? &x->warm_ranges[k - 1] : NULL;
		const struct warm *w = &x->warm_ranges[i];

		if (last != NULL && last->home == w->home &&
		    last->member == w->member && w->lo <= last->hi) {
			if (w->hi > last->hi)
				last->hi = w->hi;
			continue;
		}
		x->warm_ranges[k++] = *w;
		x->warm_at[w->home + 1] = k;
	}
	for (int t = 0; t < x->nhome; t++)
		if (x->warm_at[t + 1] < x->warm_at[t])
			x->warm_at[t + 1] = x->warm_at[t];
	return 0;
}

/* Decides whether the run has homes, and how they split the buffers,
 * and sorts x->roots by home (a counting sort, stable).  Returns 0 or -1
 * (no memory). */
static int plan_homes(struct run *x, int threads)
{
	const struct topo_plan *p = x->p;
	int64_t *sorted, *at, bytes = 0;
	int n = threads;

	x->nhome = 0;
	if (x->sl == NULL || threads < 2 || topo__tune.exec_homes == 0 ||
	    x->nroots > HOME_ROOTS_MAX)
		return 0;
	if (topo__tune.exec_homes < 0 &&
	    (!x->heavy || !topo__pool_spins(x->pool)))
		return 0;
	x->home_roots = topo__calloc((size_t)n + 1, sizeof(int64_t));
	sorted = topo__mallocarray((size_t)(x->nroots > 0 ? x->nroots : 1),
				   sizeof(int64_t));
	at = topo__mallocarray((size_t)n + 1, sizeof(int64_t));
	if (x->home_roots == NULL || sorted == NULL || at == NULL) {
		topo__free(sorted);
		topo__free(at);
		return -1;
	}
	x->nhome = n;
	for (int64_t i = 0; i < x->nroots; i++)
		bytes += p->msg[x->roots[i]].len;
	x->home_by_offset = p->n <= HOME_MEMBERS_MAX &&
			    home_max(x, true, at) * 4 * n <= bytes * 5;
	for (int64_t i = 0; i < x->nroots; i++)
		x->home_roots[home_of(x, &p->msg[x->roots[i]],
				      x->home_by_offset) +
			      1]++;
	for (int t = 0; t < n; t++)
		x->home_roots[t + 1] += x->home_roots[t];
	memcpy(at, x->home_roots, (size_t)n * sizeof(int64_t));
	for (int64_t i = 0; i < x->nroots; i++) {
		const struct topo__msg *m = &p->msg[x->roots[i]];

		sorted[at[home_of(x, m, x->home_by_offset)]++] = x->roots[i];
	}
	memcpy(x->roots, sorted, (size_t)x->nroots * sizeof(int64_t));
	topo__free(sorted);
	topo__free(at);
	return plan_warm(x);
}

/* run_homes' task t: participant t's part of the receive and work
 * buffers set to the poison byte, and (as reset() does without homes)
 * the send buffers read: those its first messages read, and its part of
 * all of them. */
static void reset_part(void *arg, int64_t t)
{
	struct run *x = arg;
	const struct topo_plan *p = x->p;
	const struct topo__slices *sl = x->sl;
	int n = x->nhome;

	if (x->home_by_offset) {
		for (int b = TOPO__RECV; b <= TOPO__WORK; b++)
			for (int32_t r = 0; r < p->n; r++) {
				int64_t size = topo__bufsize(p, b, r),
					lo = part_lo(size, t, n),
					hi = part_lo(size, t + 1, n);

				if (lo < hi)
					memset(topo__slice(sl, r, b) + lo,
					       TOPO__POISON, (size_t)(hi - lo));
			}
	} else {
		int64_t total = sl->bytes[TOPO__RECV] + sl->bytes[TOPO__WORK],
			lo = part_lo(total, t, n),
			hi = part_lo(total, t + 1, n), base = 0;

		for (int b = TOPO__RECV; b <= TOPO__WORK; b++) {
			int64_t a = lo > base ? lo : base,
				e = hi < base + sl->bytes[b]
					? hi
					: base + sl->bytes[b];

			if (a < e)
				memset(sl->arena[b] + (a - base), TOPO__POISON,
				       (size_t)(e - a));
			base += sl->bytes[b];
		}
	}
	if (x->warm_ranges != NULL) {
		unsigned char acc = 0;

		for (int64_t i = x->warm_at[t]; i < x->warm_at[t + 1]; i++) {
			const struct warm *w = &x->warm_ranges[i];

			if (topo__warm_probe != NULL)
				topo__warm_probe((int)t, w->member, w->lo,
						 w->hi);
			acc ^=
			    read_lines(topo__slice(sl, w->member, TOPO__SEND),
				       w->lo, w->hi);
		}
		__atomic_fetch_xor(&x->warm, acc, __ATOMIC_RELAXED);
	} else if (x->warm_send) {
		unsigned char acc = 0;

		/* (Only send buffers: the others are being reset.) */
		for (int64_t i = x->home_roots[t]; i < x->home_roots[t + 1];
		     i++) {
			const struct topo__msg *m = &p->msg[x->roots[i]];

			if (m->sbuf == TOPO__SEND)
				acc ^=
				    read_lines(topo__slice(sl, m->src, m->sbuf),
					       m->soff, m->soff + m->len);
		}
		/* and its part of the send buffers, which later messages
		 * read, as without homes */
		if (x->home_by_offset) {
			for (int32_t r = 0; r < p->n; r++) {
				int64_t size = topo__bufsize(p, TOPO__SEND, r);

				acc ^=
				    read_lines(topo__slice(sl, r, TOPO__SEND),
					       part_lo(size, t, n),
					       part_lo(size, t + 1, n));
			}
		} else {
			int64_t size = sl->bytes[TOPO__SEND];

			acc ^= read_lines(sl->arena[TOPO__SEND],
					  part_lo(size, t, n),
					  part_lo(size, t + 1, n));
		}
		__atomic_fetch_xor(&x->warm, acc, __ATOMIC_RELAXED);
	}
}

/* fn(x, t) on participant t, for every home t, at once (the pool's
 * workers spin: topo__pool_wake).  Returns topo__pool_wait's result. */
static int run_homes(struct run *x, void (*fn)(void *arg, int64_t t))
{
	int w;

	x->job = fn;
	x->job_arg = x;
	for (int t = x->nhome - 1; t >= 1; t--)
		topo__pool_push_to(x->pool, t, t);
	topo__pool_push(x->pool, 0, 0);
	w = topo__pool_wait(x->pool, &x->deadline_ts);
	x->job = NULL;
	return w;
}

/* A combine of a lane to be, sorted by the bytes it writes. */
struct lane_key {
	int64_t off, len, msg;
	int32_t dst, buf;
};

static int lane_cmp(const void *a, const void *b)
{
	const struct lane_key *u = a, *v = b;

	if (u->dst != v->dst)
		return u->dst < v->dst ? -1 : 1;
	if (u->buf != v->buf)
		return u->buf < v->buf ? -1 : 1;
	if (u->off != v->off)
		return u->off < v->off ? -1 : 1;
	return u->len < v->len ? -1 : u->len > v->len;
}

/* Whether message i may join a lane (see Lanes). */
static bool lane_candidate(const struct run *x, int64_t i)
{
	const struct topo__msg *m = &x->p->msg[i];

	return m->kind == TOPO__REDUCE && m->len >= topo__tune.lane_min &&
	       !splits(x, i);
}

/* The run's lanes (see Lanes): none for one thread, with topo__tune.lane_min
 * 0, or where no two combines write the same bytes.  Returns 0 or -1 (no
 * memory). */
static int plan_lanes(struct run *x)
{
	const struct topo_plan *p = x->p;
	struct lane_key *key;
	int64_t n = 0, k = 0, e = 0;
	int32_t nl = 0;

	if (x->threads < 2 || topo__tune.lane_min <= 0)
		return 0;
	for (int64_t i = 0; i < p->nmsg; i++)
		n += lane_candidate(x, i);
	if (n < 2 || n > INT32_MAX)
		return 0;
	key = topo__mallocarray((size_t)n, sizeof(*key));
	if (key == NULL)
		return -1;
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if (lane_candidate(x, i))
			key[k++] = (struct lane_key){m->doff, m->len, i, m->dst,
						     m->dbuf};
	}
	qsort(key, (size_t)n, sizeof(*key), lane_cmp);
	/* Room for every candidate: lanes only where two or more write the
	 * same bytes, so at most n / 2 of them. */
	x->lane_at = topo__mallocarray((size_t)p->nmsg, sizeof(int32_t));
	x->lane_ent = topo__mallocarray((size_t)n, sizeof(*x->lane_ent));
	x->lanes = topo__mallocarray((size_t)(n / 2), sizeof(*x->lanes));
	if (x->lane_at == NULL || x->lane_ent == NULL || x->lanes == NULL) {
		topo__free(key);
		return -1;
	}
	memset(x->lane_at, 0xff, (size_t)p->nmsg * sizeof(int32_t));
	for (int64_t i = 0; i < n; i = k) {
		for (k = i + 1; k < n && lane_cmp(&key[k], &key[i]) == 0; k++)
			;
		if (k - i < 2)
			continue;
		for (int64_t j = i; j < k; j++) {
			x->lane_ent[e] = (struct lane_ent){key[j].msg, nl, -1};
			x->lane_at[key[j].msg] = (int32_t)e++;
		}
		atomic_init(&x->lanes[nl].l.head, -1);
		atomic_init(&x->lanes[nl].l.count, 0);
		nl++;
	}
	topo__free(key);
	if (nl == 0) {
		topo__free(x->lane_at);
		topo__free(x->lane_ent);
		topo__free(x->lanes);
		x->lane_at = NULL;
		x->lane_ent = NULL;
		x->lanes = NULL;
	}
	return 0;
}

/* Resets what the previous iteration wrote (not timed).  Returns 0, or
 * topo__pool_wait's result for a reset shared by homes. */
static int reset(struct run *x, const int32_t *nwait0)
{
	const struct topo_plan *p = x->p;

	if (x->nhome > 0) {
		int w = run_homes(x, reset_part);

		if (w != 0)
			return w;
		goto counters;
	}
	for (int b = TOPO__RECV; b <= TOPO__WORK; b++) {
		if (!topo__has_buf(p, b))
			continue;
		/* Millions of members of a few bytes: one memset, not a
		 * call and a memset each. */
		if (x->tr->fill != NULL) {
			x->tr->fill(x->state, b, TOPO__POISON);
			continue;
		}
		for (int32_t r = 0; r < p->n; r++)
			memset(x->tr->buffer(x->state, r, b), TOPO__POISON,
			       (size_t)topo__bufsize(p, b, r));
	}
	/* The previous iteration's verification streamed the expected bytes
	 * through the caches, and the reset's own writes evicted what the
	 * iteration read, which a program calling the collective again on
	 * the same buffers does not: read the send buffers back (one byte a
	 * cache line), so that an iteration starts from the caches a
	 * repeated call finds, as MPI's benchmarks (and the memcpy that the
	 * copy limit is measured with) do.  Only send buffers that can stay
	 * cached (x->warm_send). */
	if (x->warm_send) {
		unsigned char acc = 0;

		for (int32_t r = 0; r < p->n; r++)
			acc ^=
			    read_lines(x->tr->buffer(x->state, r, TOPO__SEND),
				       0, topo__bufsize(p, TOPO__SEND, r));
		x->warm = acc;
	}
counters:
	memset(x->slot_count, 0, (size_t)p->nslots * sizeof(int64_t));
	if (x->tcount != NULL)
		memset(x->tcount, 0,
		       (size_t)x->threads * (size_t)p->nslots *
			   sizeof(int32_t));
	memcpy(x->nwait, nwait0, (size_t)p->nmsg * sizeof(int32_t));
	atomic_store_explicit(&x->nparts, 0, memory_order_relaxed);
	if (x->stamp != NULL) {
		for (int64_t m = 0; m < p->nmsg; m++)
			x->stamp[m] = -1;
		atomic_store(&x->seq, 0);
	}
	return 0;
}

/* Starts an iteration: the seed tasks, from each home's participant
 * (struct run), or all from this one. */
static void push_seeds(struct run *x)
{
	if (x->nhome == 0) {
		topo__pool_push(x->pool, SEED_TASK(0), 0);
		return;
	}
	for (int t = x->nhome - 1; t >= 1; t--)
		if (x->home_roots[t] < x->home_roots[t + 1])
			topo__pool_push_to(x->pool, SEED_TASK(x->home_roots[t]),
					   t);
	if (x->home_roots[1] > 0)
		topo__pool_push(x->pool, SEED_TASK(0), 0);
}

/*
 * Verifying the last.  Each iteration is verified before the next starts
 * (TOPO_VERIFY_EVERY): every byte of every iteration is checked, but an
 * iteration then starts after a pause of the verification's length,
 * which is not what a program calling a collective again and again
 * does, nor what the copy limit (tests/bench/copy_ideal.c) or MPI's back
 * to back calls measure.  Such a pause, even one spent spinning without
 * touching memory, slows the next iteration's copies and combines by
 * half again (docs/CONSTANTS.md).
 * TOPO_VERIFY_LAST verifies the last iteration only: the others run one
 * after another, each from buffers reset as usual (untimed), so that
 * their bytes are the last one's; a failed delivery or the deadline
 * still ends the run in whatever iteration it happens
 * (topo__run_verifies, which the MPI engine shares).
 */

/* The default number of workers: one per CPU the process may run on (its
 * affinity mask, as taskset, MPI launchers, Slurm and cgroup cpusets set
 * it), or per online processor when the mask cannot be read; at least 1,
 * at most MAX_THREADS. */
static int default_threads(void)
{
	long n = topo__cpus_allowed(NULL, 0);

	if (n < 1)
		n = sysconf(_SC_NPROCESSORS_ONLN);
	return n < 1 ? 1 : n > MAX_THREADS ? MAX_THREADS : (int)n;
}

int topo_plan_run(const topo_plan *p, const struct topo_run_params *params,
		  topo_report **out, topo_error *err)
{
	return topo__plan_run_transport(p, params, &topo__transport_inproc, out,
					err);
}

/* A run in this process: the workers' state, and what the run driver
 * (run/driver.h) needs of it. */
struct inproc {
	struct run x;
	struct topo__drive d;
	struct topo_run_params q;
	topo_report *r;
	int32_t *nwait0;
	struct verify_ctx v;
	struct topo__verify_keep keep;
	struct topo__verify_time vt;
};

/* What the parameters allow, before anything is done. */
static int check_run(const topo_plan *p, const struct topo_run_params *params,
		     topo_report **out, struct topo_run_params *q,
		     topo_error *err)
{
	int rc;

	if (out != NULL)
		*out = NULL;
	if (p == NULL || out == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_plan_run: plan and out are required");
	if (p->predict_only)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_plan_run: the plan was made for "
				 "prediction only (predict_only): it has no "
				 "buffers to run");
	rc = topo__run_params_read(q, params, err);
	if (rc != 0)
		return rc;
	if (q->threads < 0 || q->iterations < 0 || !(q->timeout >= 0) ||
	    !(q->elapsed >= 0))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "threads (%d), iterations (%d), timeout "
				 "(%g) and elapsed (%g) must not be negative",
				 q->threads, q->iterations, q->timeout,
				 q->elapsed);
	return 0;
}

/* Checked first, so that a run too big for memory allocates nothing: the
 * buffers, the run's state, the parts' table and the workers' stacks
 * (the transport checks its exact arena again). */
static int check_memory(const topo_plan *p, int threads, topo_error *err)
{
	struct topo__memory_need need;
	int64_t buffers = topo_plan_buffer_bytes(p);

	topo__plan_run_need(p, buffers == INT64_MAX ? -1 : buffers, &need);
	if (need.run >= 0)
		need.run +=
		    (int64_t)(threads - 1) * (int64_t)TOPO__POOL_STACK +
		    (use_tcount(p, threads) ? (int64_t)threads * p->nslots * 4
					    : 0) +
		    (threads > 1 ? PART_CAP * (int64_t)sizeof(struct part) : 0);
	return topo__memory_check(&need, err);
}

/* The report and the run's arrays, and the pool.  Returns 0, TOPO_ENOMEM
 * (err not set) or the pool's error. */
static int open_arrays(struct inproc *ip, int threads, topo_error *err)
{
	const struct topo_plan *p = ip->x.p;
	struct run *x = &ip->x;
	int rc;

	ip->r = topo__report_alloc(threads);
	ip->nwait0 = topo__mallocarray((size_t)p->nmsg, sizeof(int32_t));
	x->nwait = topo__mallocarray((size_t)p->nmsg, sizeof(int32_t));
	x->slot_count = topo__mallocarray((size_t)p->nslots, sizeof(int64_t));
	x->threads = threads;
	x->nslots = p->nslots;
	if (ip->r == NULL || ip->nwait0 == NULL || x->nwait == NULL ||
	    x->slot_count == NULL)
		return TOPO_ENOMEM;
	if (use_tcount(p, threads)) {
		x->tcount = topo__mallocarray(
		    (size_t)threads * (size_t)p->nslots, sizeof(int32_t));
		if (x->tcount == NULL)
			return TOPO_ENOMEM;
	}
	if (p->params.op == TOPO_OP_BARRIER) {
		x->stamp =
		    topo__mallocarray((size_t)p->nmsg + 1, sizeof(int64_t));
		if (x->stamp == NULL)
			return TOPO_ENOMEM;
	}
	rc = topo__pool_new(&x->pool, threads, run_task, x, err);
	x->deadline_ts = at(ip->d.deadline);
	return rc;
}

/* The pass over the plan (scan_plan), the deliver it allows, the parts'
 * table, the lanes and the roots.  Returns 0 or TOPO_ENOMEM. */
static int prepare(struct inproc *ip)
{
	struct run *x = &ip->x;
	const struct topo_plan *p = x->p;
	const struct topo__transport_ops *tr = x->tr;
	int64_t ntasks = (p->nmsg + SCAN_MSGS - 1) / SCAN_MSGS;
	struct scan_part *parts = topo__mallocarray(
	    (size_t)(ntasks > 0 ? ntasks : 1), sizeof(*parts));
	/* the combines that wait for the one before them (plan/order.c); no
	 * chains, no waits: every message reads a zero */
	uint8_t *chained = topo__calloc((size_t)p->nmsg + 1, 1);
	bool in_bounds;

	if (parts == NULL || chained == NULL) {
		topo__free(parts);
		topo__free(chained);
		return TOPO_ENOMEM;
	}
	for (int64_t i = 0; p->cnext != NULL && i < p->nmsg; i++)
		if (p->cnext[i] >= 0)
			chained[p->cnext[i]] = 1;
	scan_plan(x, ip->r, ip->nwait0, chained, parts, ntasks, &in_bounds);
	topo__free(parts);
	topo__free(chained);
	x->nwait0 = ip->nwait0;
	/* Checked here once, not in every delivery; a message out of its
	 * buffers keeps the checking deliver, which reports it. */
	if (tr->deliver_trusted != NULL && in_bounds) {
		x->deliver = tr->deliver_trusted;
		if (tr->slices != NULL)
			x->sl = tr->slices(x->state);
	}
	x->part_base = INT64_MAX;
	atomic_init(&x->nparts, 0);
	if (x->deliver == tr->deliver_trusted && tr->deliver_part != NULL &&
	    x->threads > 1 && topo__tune.split_min > 0) {
		x->part = topo__mallocarray(PART_CAP, sizeof(*x->part));
		if (x->part == NULL)
			return TOPO_ENOMEM;
	}
	if (plan_lanes(x) != 0)
		return TOPO_ENOMEM;
	x->roots = topo__mallocarray((size_t)x->nroots, sizeof(int64_t));
	if (x->roots == NULL)
		return TOPO_ENOMEM;
	x->nroots = 0;
	for (int64_t i = 0; i < p->nmsg; i++)
		if (ip->nwait0[i] == 0)
			x->roots[x->nroots++] = i;
	if (x->part != NULL)
		x->part_base = x->nroots + p->succ_off[p->nmsg];
	return 0;
}

/* The inputs, by every thread, under the run's deadline too: over tens of
 * thousands of members of large buffers they take seconds.  Returns as
 * the driver's fill, without the homes (fill_op). */
static int fill_inputs(struct inproc *ip, int64_t *member, topo_error *err)
{
	struct run *x = &ip->x;
	const struct topo_plan *p = x->p;
	struct fill_task *fill = NULL;
	int64_t nfill = 0, done;
	int w = 0;

	if (ip->q.progress != NULL)
		ip->q.progress(ip->q.progress_ctx, "filling inputs", 0, p->n);
	x->next_progress = topo__now() + TOPO__PROGRESS_EVERY;
	x->progress = ip->q.progress;
	x->progress_ctx = ip->q.progress_ctx;
	x->deadline = ip->d.deadline;
	if (fill_tasks(p, &fill, &nfill) != 0)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	x->fill = fill;
	x->filling = true;
	if (topo__now() >= x->deadline) {
		w = 1;
	} else if (nfill > 0) {
		topo__pool_wake_at(x->pool, 2);
		topo__pool_wake(x->pool);
		for (int64_t k = nfill - 1; k >= 0; k--)
			topo__pool_push(x->pool, k, 0);
		w = topo__pool_wait(x->pool, &x->deadline_ts);
	}
	x->filling = false;
	x->fill = NULL;
	topo__free(fill);
	ip->d.next_progress = x->next_progress;
	if (w < 0)
		return topo__err(err, w, NULL, NULL,
				 "out of memory while filling the inputs");
	if (w == 0)
		return 0;
	done = atomic_load(&x->filled);
	*member = done < p->n ? done + 1 : p->n;
	return 1;
}

/* The driver's fill: the inputs, then the homes and the verifier's
 * state, which the iterations need. */
static int fill_op(void *ctx, int64_t *member, topo_error *err)
{
	struct inproc *ip = ctx;
	struct run *x = &ip->x;
	const struct topo_plan *p = x->p;
	int w = fill_inputs(ip, member, err);

	if (w < 0)
		return w;
	x->heavy = is_heavy(p, x->threads);
	if (plan_homes(x, x->threads) != 0)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	topo__pool_wake_at(x->pool, wake_at(x));
	/* The workers woken to fill the inputs would spin through the first
	 * iterations and take half of a small plan's tasks, which a run
	 * short enough to fit in their spin then pays for. */
	if (!x->heavy)
		topo__pool_calm(x->pool);
	ip->v.r = ip->r;
	ip->v.members = p->t->g->members;
	ip->vt.deadline = ip->d.deadline;
	ip->vt.progress = ip->q.progress;
	ip->vt.ctx = ip->q.progress_ctx;
	ip->vt.total = (int64_t)ip->d.iterations * p->n;
	ip->vt.keep = &ip->keep;
	if (x->threads > 1) {
		ip->vt.par = run_par;
		ip->vt.pctx = x;
	}
	if (ip->q.progress != NULL && w == 0)
		ip->q.progress(ip->q.progress_ctx, "running", 0,
			       ip->d.iterations);
	return w;
}

static int reset_op(void *ctx, int it, topo_error *err)
{
	struct inproc *ip = ctx;
	int w;

	(void)it;
	/* Workers spin through the reset, so that they take work as soon
	 * as the clock starts, as MPI's ranks poll in the barrier before a
	 * call. */
	if (ip->x.heavy)
		topo__pool_wake(ip->x.pool);
	w = reset(&ip->x, ip->nwait0);
	if (w < 0)
		return topo__err(err, w, NULL, NULL,
				 "out of memory while resetting the buffers");
	return w != 0;
}

static int iterate_op(void *ctx, int it, double *seconds, topo_error *err)
{
	struct inproc *ip = ctx;
	struct run *x = &ip->x;
	const struct topo_plan *p = x->p;
	double t0, t1;
	int64_t k;
	int w = 0;

	(void)it;
	/* A reset longer than the workers' spin (buffers of many MiB) lets
	 * them fall asleep: have them spinning again before the clock
	 * starts, or a plan of a few large messages runs on the caller
	 * while a woken worker is still on its way. */
	if (x->heavy)
		topo__pool_ready(x->pool);
	t0 = topo__now();
	if (p->nmsg > 0) {
		push_seeds(x);
		w = topo__pool_wait(x->pool, &x->deadline_ts);
	}
	t1 = topo__now();
	if (w < 0)
		return topo__err(err, w, NULL, NULL,
				 "out of memory while running the plan");
	k = atomic_load_explicit(&x->nparts, memory_order_relaxed);
	ip->r->parts += k < PART_CAP ? k : PART_CAP;
	if (atomic_load(&x->failed) >= 0) {
		int64_t f = atomic_load(&x->failed);
		const struct topo__msg *m = &p->msg[f];

		topo__report_add(ip->r, ip->v.members[m->dst], "failed",
				 "message %lld from endpoint %d to endpoint "
				 "%d could not be delivered: %s",
				 (long long)f, ip->v.members[m->src],
				 ip->v.members[m->dst],
				 topo_strerror(atomic_load(&x->failed_rc)));
		return 2;
	}
	*seconds = t1 - t0;
	return w != 0;
}

static int64_t verify_op(void *ctx, int it, bool *timed_out)
{
	struct inproc *ip = ctx;
	struct run *x = &ip->x;
	topo_report *r = ip->r;
	int64_t n;

	if (x->tcount != NULL)
		sum_receipts(x);
	ip->vt.base = (int64_t)it * x->p->n;
	ip->vt.next = ip->d.next_progress;
	n = topo__verify_until(x->p, verify_buffer, x, x->slot_count,
			       verify_report, &ip->v,
			       (int64_t)(MAX_ERRORS - r->nerr), &ip->vt);
	if (!ip->vt.timed_out)
		n += topo__verify_barrier(x->p, x->stamp, verify_report, &ip->v,
					  (int64_t)(MAX_ERRORS - r->nerr));
	ip->d.next_progress = ip->vt.next;
	r->total += n;
	*timed_out = ip->vt.timed_out;
	return n;
}

static int64_t faults_op(void *ctx)
{
	struct inproc *ip = ctx;

	return ip->r->total;
}

static const struct topo__drive_ops inproc_ops = {
    .fill = fill_op,
    .reset = reset_op,
    .iterate = iterate_op,
    .verify = verify_op,
    .faults = faults_op,
};

static void close_run(struct inproc *ip)
{
	struct run *x = &ip->x;

	topo__pool_free(x->pool);
	topo__verify_keep_free(&ip->keep);
	if (x->tr != NULL)
		x->tr->close(x->state);
	topo__free(x->roots);
	topo__free(x->home_roots);
	topo__free(x->warm_ranges);
	topo__free(x->warm_at);
	topo__free(x->slot_count);
	topo__free(x->tcount);
	topo__free(x->stamp);
	topo__free(x->nwait);
	topo__free(x->part);
	topo__free(x->lane_at);
	topo__free(x->lane_ent);
	topo__free(x->lanes);
	topo__free(ip->nwait0);
	topo__drive_free(&ip->d);
}

int topo__plan_run_transport(const topo_plan *p,
			     const struct topo_run_params *params,
			     const struct topo__transport_ops *tr,
			     topo_report **out, topo_error *err)
{
	struct inproc in = {0}, *ip = &in;
	int rc, threads;

	rc = check_run(p, params, out, &ip->q, err);
	if (rc != 0)
		goto out;
	threads = ip->q.threads > 0 ? ip->q.threads : default_threads();
	topo__drive_init(&ip->d, &ip->q);
	ip->x.p = p;
	ip->x.deliver = tr->deliver;
	/*
	 * Send buffers of up to WARM_BYTES in all are read back after each
	 * reset: a repeated call reads them, so they are what its caches
	 * hold, unless its own writes evicted them; the reset's writes
	 * would, and its copies of 64 KiB or more into buffers beyond the
	 * cache stream, without evicting them (transport_inproc.c).  Sent
	 * bytes, not the buffers in all, decide: a repeated alltoall whose
	 * sent blocks fit the last level of cache runs markedly faster
	 * with them read back, and copy_ideal reads its sources by the same
	 * rule.
	 */
	ip->x.warm_send = topo__has_buf(p, TOPO__SEND) &&
			  topo__plan_kind_bytes(p, TOPO__SEND) <= WARM_BYTES;
	atomic_init(&ip->x.filled, 0);
	atomic_init(&ip->x.failed, -1);
	atomic_init(&ip->x.failed_rc, 0);
	rc = check_memory(p, threads, err);
	if (rc != 0)
		goto out;
	rc = tr->open(&ip->x.state, p, err);
	if (rc != 0)
		goto out;
	ip->x.tr = tr;
	rc = open_arrays(ip, threads, err);
	if (rc == 0)
		rc = prepare(ip);
	if (rc == 0) {
		ip->d.ops = &inproc_ops;
		ip->d.ctx = ip;
		ip->d.r = ip->r;
		ip->d.lead = true;
		ip->d.progress_every = TOPO__PROGRESS_EVERY;
		ip->d.members = p->n;
		rc = topo__drive(&ip->d, err);
	}
out:
	close_run(ip);
	if (rc != 0) {
		if (rc == TOPO_ENOMEM)
			topo__err(err, rc, NULL, NULL, "out of memory");
		topo_report_free(ip->r);
	} else {
		*out = ip->r;
	}
	return rc;
}
