/*
 * exec_internal.h - the replay engine's private structures: the plan (a
 * DAG of messages over members' buffers), the transport interface that
 * moves a message, and the worker pool.
 *
 * A plan is pure data: members are group ranks and buffers are (member,
 * kind, offset, length), never pointers, so a transport between processes
 * (MPI) can run the same plan.  Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_EXEC_INTERNAL_H
#define TOPO_EXEC_INTERNAL_H

#include "coll/registry.h" /* the algorithms' builders */
#include "topo_internal.h"
#include "sys/sys.h"

#include <sched.h>
#include <time.h>

/* The buffers every member owns. */
enum topo__buf { TOPO__SEND = 0, TOPO__RECV = 1, TOPO__WORK = 2 };
#define TOPO__NBUF 3

/* A barrier member's own steps (struct topo__msg's mark), which the run
 * stamps in the order they complete so that the verifier can check the
 * barrier's guarantee: every member's leave after every member's enter.
 * Each member of a barrier plan has one of each, a local step of 0 bytes:
 * its enter before everything else it does, its leave after. */
enum topo__mark { TOPO__MARK_NONE = 0, TOPO__MARK_ENTER = 1, TOPO__MARK_LEAVE = 2 };

/* What a message does at its destination. */
enum topo__kind {
	TOPO__COPY = 0,   /* dst = src */
	TOPO__REDUCE = 1, /* dst[i] = dst[i] OP src[i], in the plan's type */
};

/*
 * One message: len bytes from member src's buffer sbuf at soff to member
 * dst's buffer dbuf at doff.  It may start once the nwait messages it waits
 * for have completed.  src == dst is a local step (a member's own copy or
 * reduction), not a transport message.  slot >= 0 names a receipt counter
 * (see struct topo_plan) that the delivery increments.
 */
struct topo__msg {
	int32_t src, dst; /* group ranks */
	uint8_t sbuf, dbuf; /* enum topo__buf */
	uint8_t kind;       /* enum topo__kind */
	uint8_t mark;       /* enum topo__mark: 0, or a barrier's step */
	int32_t nwait;
	int64_t soff, doff, len;
	int64_t slot;
};

/*
 * A message of a predict-only plan (params.predict_only): who sends how
 * many bytes to whom, and what the destination does with them; no buffers,
 * offsets or receipt counter.  lk = len | kind << 62.
 */
struct topo__lmsg {
	int32_t src, dst;
	int64_t lk;
};
#define TOPO__LK_SHIFT 62
#define TOPO__LEN_MASK ((INT64_C(1) << TOPO__LK_SHIFT) - 1)

struct topo_plan {
	const topo_tree *t;
	struct topo_plan_params params; /* as given, defaults applied */
	char algorithm[32];
	int32_t n;       /* members */
	int32_t root;    /* rank of the logical root (params.root's rank) */
	size_t type_size;
	/* Each member's buffer sizes, read through topo__bufsize: an array
	 * where they differ, else one size for all members but one, which
	 * at 8 million members spares two arrays of 64 MiB per buffer kind
	 * (the plan's and the arena's offsets). */
	struct topo__bufsizes {
		int64_t *each; /* [n], or NULL: all, and one */
		int64_t all;   /* every member's size but one's */
		/* member one's size; one_size == all when no member has a
		 * size of its own (as in a plan zeroed by calloc) */
		int32_t one;
		int64_t one_size;
	} buf[TOPO__NBUF];
	int64_t nmsg;
	int64_t cap;
	/* The messages: msg, or lmsg in a predict-only plan (msg NULL). */
	bool predict_only;
	/* while planning (topo__plan_new_hosted): the memory check counts
	 * the buffers of the members with mem_host[r] == mem_rank only */
	const int32_t *mem_host;
	int mem_rank;
	struct topo__msg *msg;
	struct topo__lmsg *lmsg;
	/* Successors in CSR form: message m is waited for by
	 * succ[succ_off[m] .. succ_off[m + 1] - 1].  Built by
	 * topo__plan_finish from the dependency list.  Message ids fit in
	 * int32_t: a plan has at most 2^30 messages. */
	int64_t *succ_off;
	int32_t *succ;
	int64_t ndep, depcap;
	int32_t (*dep)[2]; /* [ndep] {before, after} until finished */
	/* Receipt counters: slot s belongs to member slot_member[s] and must
	 * be delivered to exactly slot_expect[s] times. */
	int64_t nslots, slotcap;
	int32_t *slot_member;
	int32_t *slot_expect;
	int64_t ntransport; /* messages with src != dst */
	bool expected;	    /* the algorithm called topo__plan_expect */
	int64_t expect_msgs; /* what it said, for progress */
	/* Planning's deadline (topo__now() seconds; 0: none) and the next
	 * time its progress callback may be called. */
	double deadline, next_progress;
	/* arrays being populated in the background (topo__populate_*) */
	struct topo__populate populate;
	/* A reduction's fused copies (plan/fuse.c), found when finished:
	 * fuse[i] is, for a REDUCE, the copy it may be fused with, for a
	 * copy that may be fused, i, else -1.  NULL when no copy may be. */
	int32_t *fuse;
	/* A floating-point reduction's combine order (plan/order.c), found
	 * when finished: cnext[m], for a REDUCE, the REDUCE into bytes it
	 * overlaps that combines next, or -1.  NULL when no two REDUCEs of
	 * the plan write the same bytes, or the type is an integer. */
	int32_t *cnext;
	/* With cnext: conly[a] is 1 for a combine whose dependencies are
	 * all among those of the combine before it in its chain, which it
	 * therefore needs to wait for alone (plan/order.c). */
	uint8_t *conly;
	/* A member's part of a plan (plan/local.c): the messages that touch
	 * member mem_rank only; one_node: the group is on one node. */
	bool local, one_node;
};

/* Message i of either kind of plan. */
static inline int32_t topo__msg_src(const struct topo_plan *p, int64_t i)
{
	return p->msg != NULL ? p->msg[i].src : p->lmsg[i].src;
}

static inline int32_t topo__msg_dst(const struct topo_plan *p, int64_t i)
{
	return p->msg != NULL ? p->msg[i].dst : p->lmsg[i].dst;
}

static inline int64_t topo__msg_len(const struct topo_plan *p, int64_t i)
{
	return p->msg != NULL ? p->msg[i].len
			      : p->lmsg[i].lk & TOPO__LEN_MASK;
}

static inline int topo__msg_kind(const struct topo_plan *p, int64_t i)
{
	return p->msg != NULL ? p->msg[i].kind
			      : (int)(p->lmsg[i].lk >> TOPO__LK_SHIFT);
}

/* Between calls of a progress callback: about ten a second. */
#define TOPO__PROGRESS_EVERY 0.1

/* Checks planning's deadline and reports its progress; called every few
 * thousand messages.  Returns 0 or TOPO_ETIMEDOUT (err set). */
int topo__plan_tick(struct topo_plan *p, topo_error *err);

/* Reading a caller's parameter struct of any version (params.c): *q gets
 * every field the caller's struct holds, the defaults for the others.
 * Returns 0 or TOPO_EARG with err->text saying what is wrong (size 0: not
 * initialised; a size no version has; bytes set beyond what this version
 * knows).  topo__run_params_read accepts NULL params: all defaults. */
/* topo_plan_new for one process of a distributed run (MPI): the memory
 * check counts only the buffers of the members with host[r] == rank, the
 * ones this process holds (host NULL: member rank's alone, a process per
 * member); host is read while planning only. */
int topo__plan_new_hosted(topo_plan **out, const topo_tree *t,
			  const struct topo_plan_params *params,
			  const int32_t *host, int rank, topo_error *err);
int topo__plan_params_read(struct topo_plan_params *q,
			   const struct topo_plan_params *params,
			   topo_error *err);
int topo__run_params_read(struct topo_run_params *q,
			  const struct topo_run_params *params,
			  topo_error *err);
/* Whether iteration `it` (from 0) of `iterations` is verified, as q's
 * verify says (exec.c, Verifying the last): every one, or the last. */
static inline bool topo__run_verifies(const struct topo_run_params *q, int it,
				      int iterations)
{
	return q->verify != TOPO_VERIFY_LAST || it == iterations - 1;
}

int topo__predict_params_read(struct topo_predict_params *q,
			      const struct topo_predict_params *params,
			      topo_error *err);
int topo__emit_params_read(struct topo_emit_params *q,
			   const struct topo_emit_params *params,
			   topo_error *err);

/* Builder helpers (plan.c).  All return 0 or TOPO_ENOMEM / TOPO_ELIMIT
 * with err filled. */
int topo__plan_bufsize(struct topo_plan *p, enum topo__buf b, int32_t member,
		       int64_t bytes, topo_error *err);
/* Every member's buffer of kind b holds `bytes` (before any member's own
 * size is set): no array for them. */
int topo__plan_bufsize_all(struct topo_plan *p, enum topo__buf b, int64_t bytes,
			   topo_error *err);
/* Appends a message; *id receives its index (may be NULL). */
int topo__plan_msg(struct topo_plan *p, const struct topo__msg *m,
		   int64_t *id, topo_error *err);
/* Message `after` waits for message `before`. */
int topo__plan_dep(struct topo_plan *p, int64_t before, int64_t after,
		   topo_error *err);
/* A new receipt counter for member expecting `expect` deliveries. */
int topo__plan_slot(struct topo_plan *p, int32_t member, int32_t expect,
		    int64_t *slot, topo_error *err);
/* A block of count consecutive receipt counters, expecting 0 deliveries
 * until the caller sets slot_expect[*first + i]: counter i belongs to
 * member i when member < 0 (count must then be p->n), else all to member.
 * Algorithms name a member's counter *first + rank, which this makes
 * true by construction. */
int topo__plan_slots(struct topo_plan *p, int64_t count, int32_t member,
		     int64_t *first, topo_error *err);
/* A chain into m's bytes (m->dst, dbuf, doff, len; sbuf and soff in every
 * source): a local COPY out of member first's, then REDUCEs out of members
 * first + 1, ..., first + n - 1 (mod n), each waiting for the one before,
 * each counted by slot (reduce and reduce-scatter "direct"). */
int topo__plan_chain(struct topo_plan *p, const struct topo__msg *m,
		     int32_t first, int32_t n, int64_t slot, topo_error *err);
/* Builds succ/succ_off and nwait from the dependencies; counts
 * ntransport; finds a reduction's fused copies (topo__plan_fuse). */
int topo__plan_finish(struct topo_plan *p, topo_error *err);
/* p->fuse for a finished plan that reduces (plan/fuse.c); a no-op for any
 * other, or when found already.  Returns 0 or TOPO_ENOMEM. */
int topo__plan_fuse(struct topo_plan *p, topo_error *err);
/* Whether p's combines get a fixed order (plan/order.c): a reduction of
 * float or double. */
bool topo__plan_orders(const struct topo_plan *p);
/* p->cnext for a finished plan that orders its combines (plan/order.c);
 * a no-op for any other, or when found already.  Returns 0 or
 * TOPO_ENOMEM. */
int topo__plan_order(struct topo_plan *p, topo_error *err);
/* p->conly for p's chains (p->cnext set, the successor lists made). */
int topo__plan_chain_alone(struct topo_plan *p, topo_error *err);
/*
 * Member r's part of the plan of params over tree view tv, a member per
 * process (plan/local.c): the messages r sends, receives or runs itself,
 * the dependencies among them that r waits on, and r's chains of
 * combines, so that topo__sched_new(out, NULL, tv->n, r) is r's schedule
 * of the whole plan, in time and memory that follow r's degree, the
 * tree's depth and the segments.  root: the logical root, a rank (-1: the
 * tree's); one_node: every member on one node (for the segment size).
 * Bcast flood, reduce tree and hierarchical, allreduce tree and
 * hierarchical (hierarchical over the hierarchical view only).  Returns
 * 0, TOPO_EARG (another operation or algorithm: make the whole plan),
 * TOPO_ENOMEM or TOPO_ELIMIT.
 */
struct topo__tview;
int topo__plan_local(topo_plan **out, const struct topo__tview *tv,
		     const struct topo_plan_params *params, int32_t root,
		     int32_t r, bool one_node, topo_error *err);
/* topo__auto_segment for op over n members of bytes each, on one node or
 * not. */
int64_t topo__auto_segment_for(enum topo_op op, int32_t n, size_t bytes,
			       bool one_node);
/* Bytes per message of a plan's combine order (its cnext and conly), and
 * at most while it is found (levels, the work lists and their sort
 * keys). */
#define TOPO__ORDER_BYTES ((int64_t)sizeof(int32_t))
#define TOPO__ORDER_NEED ((int64_t)64)

/* The stack of each worker thread (pool.c), counted by the run's memory
 * check. */
#define TOPO__POOL_STACK ((size_t)1 << 20)

struct topo__memory_need;
/* What p's buffers (sized so far), a plan of msgs messages, deps
 * dependencies and slots receipt counters, and a run of it need. */
void topo__plan_need(const struct topo_plan *p, int64_t msgs, int64_t deps,
		     int64_t slots, struct topo__memory_need *need);
/* An algorithm says, once its buffers are sized and before its first
 * message, how many messages, dependencies and receipt counters it will
 * build (upper bounds): a plan that would not fit in memory with its
 * buffers and its run is refused now (TOPO_ELIMIT, with the sizes), not
 * after gigabytes of messages. */
int topo__plan_expect(struct topo_plan *p, int64_t msgs, int64_t deps,
		      int64_t slots, topo_error *err);
/* The segment size of a segmented reducing algorithm: params.segment,
 * which must be a multiple of the type size (else TOPO_EARG naming the
 * operation and algorithm); 0 gives auto_seg when total >= auto_min, else
 * total; never more than total.  *nseg is how many segments cut total (1
 * when total is 0).  The byte count itself was checked by
 * topo_plan_new. */
int topo__plan_segment(const struct topo_plan *p, int64_t total,
		       int64_t auto_min, int64_t auto_seg, int64_t *seg,
		       int64_t *nseg, topo_error *err);
/*
 * The automatic segment of the segmented trees (bcast flood, reduce and
 * allreduce tree and hierarchical), from TOPO__AUTO_SEGMENT_MIN bytes per
 * member: TOPO__AUTO_SEGMENT across nodes; on one node
 * TOPO__AUTO_SEGMENT_NODE, or for a reduction of at least
 * TOPO__AUTO_SEGMENT_LONG_MEMBERS members half of the bytes, rounded down
 * to TOPO__AUTO_SEGMENT_ROUND, within TOPO__AUTO_SEGMENT_NODE and
 * TOPO__AUTO_SEGMENT_LONG (plan.c says why).
 */
#define TOPO__AUTO_SEGMENT_MIN ((int64_t)256 << 10)
#define TOPO__AUTO_SEGMENT ((int64_t)64 << 10)
#define TOPO__AUTO_SEGMENT_NODE ((int64_t)256 << 10)
#define TOPO__AUTO_SEGMENT_LONG ((int64_t)1 << 20)
#define TOPO__AUTO_SEGMENT_LONG_MEMBERS 4
#define TOPO__AUTO_SEGMENT_ROUND ((int64_t)4096)
int64_t topo__auto_segment(const struct topo_plan *p);
/* Whether every member of g is on one node of its machine. */
bool topo__group_on_one_node(const topo_group *g);
/* Refuses (TOPO_ELIMIT, naming the operation and algorithm) a segmented
 * plan whose nseg segments of seg bytes over n members, at per_seg
 * messages each plus fixed others, would build more than max messages:
 * the hint is a larger segment. */
int topo__plan_segments_fit(const struct topo_plan *p, int64_t nseg,
			    int64_t seg, int64_t per_seg, int64_t fixed,
			    int64_t max, topo_error *err);
/* What a run of the finished plan p needs beyond the plan: arena bytes of
 * buffers, the wait counts and receipt counts of a run. */
void topo__plan_run_need(const struct topo_plan *p, int64_t arena,
			 struct topo__memory_need *need);

/* Elementwise reduction of len bytes: dst = dst OP src (redop.c). */
void topo__reduce(enum topo_type type, enum topo_redop op, void *dst,
		  const void *src, size_t len);
/* dst = a OP src, len bytes each; the same bytes as copying a to dst and
 * then topo__reduce (and done that way when the buffers overlap). */
void topo__reduce3(enum topo_type type, enum topo_redop op, void *dst,
		   const void *a, const void *src, size_t len);

/* ---------------------------------------------------------------------- */
/* Input data and what every member must end with (verify.c), computed
 * from the operation's definition alone, independently of any plan. */

/* Fills member rank r's SEND buffer (len bytes) for the plan's op, type and
 * redop; the same function the verifier uses to know the inputs. */
void topo__pattern_fill(const struct topo_plan *p, int32_t r, void *buf,
			size_t len);
/* The same for bytes [off, off + len) of that buffer, into buf. */
void topo__pattern_fill_at(const struct topo_plan *p, int32_t r,
			   uint64_t off, void *buf, size_t len);
/* The copy of the pattern loops in use (verify.c): 1 the baseline, 2
 * SSE4.1, 3 AVX2, 4 AVX-512 (AMD only; x86-64, 1 elsewhere), the widest
 * the processor runs, or at most topo__tune.pattern_simd_cap where that is
 * above 0 (tests set it: every copy makes the same bytes). */
int topo__pattern_simd(void);
/* The byte that RECV and WORK are reset to before every iteration. */
#define TOPO__POISON 0xA5

struct topo__verify_error {
	int32_t rank;
	const char *kind; /* static: "undelivered", "duplicated", ... */
	char detail[160];
};

/* A verification's deadline (topo__now() seconds; 0: none) and progress
 * callback; timed_out says whether it stopped at the deadline. */
/* What a run's verifications keep from one iteration to the next
 * (verify.c, reduce_all): the expected reduction of a reduce, allreduce
 * or reduce-scatter, len bytes, once one verification has computed it
 * whole; NULL before.  Zeroed to start; topo__verify_keep_free frees it. */
struct topo__verify_keep {
	unsigned char *reduced;
	int64_t len;
};
void topo__verify_keep_free(struct topo__verify_keep *keep);

struct topo__verify_time {
	double deadline;
	topo_progress_fn progress;
	void *ctx;
	double next;
	bool timed_out;
	/* progress reports base + members checked, of total (a run's
	 * verifications count on from one iteration to the next) */
	int64_t base, total;
	/* [n]: check only the members r with mine[r] != 0 (a process of an
	 * MPI run checks those it holds); NULL: all */
	const uint8_t *mine;
	/* Runs fn(arg, k) for every k in [0, n), on all of a run's threads,
	 * and returns once all have run: 0, or nonzero when it stopped
	 * early (the deadline; fn is then not run for the rest).  NULL: the
	 * verifier runs them itself, one after the other. */
	int (*par)(void *pctx, int64_t n, void (*fn)(void *arg, int64_t k),
		   void *arg);
	void *pctx;
	/* a run's: what its verifications keep (NULL: nothing) */
	struct topo__verify_keep *keep;
};

/* Checks member buffers after an iteration; buf(ctx, r, kind) gives
 * member r's buffer.  Calls report(ctx2, e) for each error found (at most
 * `max` reported, all counted); returns the number of errors. */
int64_t topo__verify(const struct topo_plan *p,
		     unsigned char *(*buf)(void *ctx, int32_t r, int kind),
		     void *ctx, const int64_t *slot_count,
		     void (*report)(void *ctx2,
				    const struct topo__verify_error *e),
		     void *ctx2, int64_t max);
/* topo__verify, stopping at time->deadline (time->timed_out set; the
 * errors found so far are counted) and reporting progress. */
int64_t topo__verify_until(const struct topo_plan *p,
			   unsigned char *(*buf)(void *ctx, int32_t r,
						 int kind),
			   void *ctx, const int64_t *slot_count,
			   void (*report)(void *ctx2,
					  const struct topo__verify_error *e),
			   void *ctx2, int64_t max,
			   struct topo__verify_time *time);

/* A barrier's guarantee, from the order in which its members' marked steps
 * completed (stamp[m]: message m's place in that order, from 0; -1: it
 * did not run): every member's leave after every member's enter.  Reports
 * each member that left before the last one entered (kind "left early");
 * returns their number.  0 for other operations or a NULL stamp. */
int64_t topo__verify_barrier(const struct topo_plan *p, const int64_t *stamp,
			     void (*report)(void *ctx2,
					    const struct topo__verify_error *e),
			     void *ctx2, int64_t max);

/* ---------------------------------------------------------------------- */
/* Transports: how a message's bytes get from one member to another. */

/* Where an in-process transport keeps its members' buffers: member r's of
 * kind b lies in arena[b], at off[b][r] when off[b] is not NULL (members
 * of many sizes), else at r * stride[b], or at one_off[b] for member
 * one[b] (the plan's one member of a size of its own). */
struct topo__slices {
	unsigned char *arena[TOPO__NBUF];
	int64_t bytes[TOPO__NBUF]; /* of arena b, every slice in it */
	int64_t *off[TOPO__NBUF];
	int64_t stride[TOPO__NBUF], one_off[TOPO__NBUF];
	int32_t one[TOPO__NBUF];
};

static inline unsigned char *topo__slice(const struct topo__slices *s,
					 int32_t r, int b)
{
	if (s->off[b] != NULL)
		return s->arena[b] + s->off[b][r];
	return s->arena[b] +
	       (r == s->one[b] ? s->one_off[b] : (int64_t)r * s->stride[b]);
}

struct topo__transport_ops {
	const char *name;
	/* Allocates every member's buffers for p.  Returns 0, TOPO_ENOMEM,
	 * TOPO_ELIMIT (more than memory holds; nothing allocated) or
	 * TOPO_EIO. */
	int (*open)(void **state, const struct topo_plan *p, topo_error *err);
	void (*close)(void *state);
	/* Member r's buffer of kind b (in-process transports only; NULL
	 * otherwise). */
	unsigned char *(*buffer)(void *state, int32_t r, int b);
	/* Moves message m of p.  Called concurrently from worker threads for
	 * different messages; two REDUCE messages into overlapping bytes of
	 * one destination buffer must not interleave (the transport
	 * serialises them), while REDUCEs into disjoint bytes of it (the
	 * segments of a segmented reduce) may run at once.  Returns 0 or a
	 * negative TOPO_E* code. */
	int (*deliver)(void *state, const struct topo_plan *p, int64_t m);
	/* The same without the check of m's bounds (topo__msg_in_bounds),
	 * for a run that checked every message before it started; NULL
	 * when the transport has none. */
	int (*deliver_trusted)(void *state, const struct topo_plan *p,
			       int64_t m);
	/* Sets every byte of every member's buffer of kind b to c (the
	 * run's reset between iterations), at once; NULL when the
	 * transport has no such shortcut: the run then sets each member's
	 * through buffer(). */
	void (*fill)(void *state, int b, int c);
	/* Where every member's buffers lie, for a transport whose
	 * deliver_trusted moves a COPY with memcpy/memmove between them and
	 * does nothing else: the run then moves the smallest copies itself
	 * (exec.c), without a call per message.  NULL otherwise.  A
	 * transport made from another's ops with a deliver of its own (a
	 * test's) clears deliver_trusted and slices, or its deliver is
	 * bypassed. */
	const struct topo__slices *(*slices)(void *state);
	/* Splitting one message between threads (exec.c's parts), both NULL
	 * when the transport cannot: splits(state, p, m) says whether
	 * message m may be delivered in parts, and deliver_part moves bytes
	 * [lo, hi) of it alone (0 <= lo < hi <= its len, both multiples of
	 * 64 but for hi == len), with deliver_trusted's contract.  Parts of
	 * one message run at once on different threads, and with other
	 * messages as deliver's do; a part of a REDUCE combines its bytes
	 * atomically with respect to other REDUCEs into them.  Used only
	 * where deliver_trusted is. */
	bool (*splits)(void *state, const struct topo_plan *p, int64_t m);
	int (*deliver_part)(void *state, const struct topo_plan *p, int64_t m,
			    int64_t lo, int64_t hi);
};

/* The bytes of every member's buffer of kind b in all (INT64_MAX when
 * that overflows); topo_plan_buffer_bytes is their sum over the kinds. */
int64_t topo__plan_kind_bytes(const struct topo_plan *p, int b);
/* Bytes of member r's buffer of kind b (0: it has none). */
static inline int64_t topo__bufsize(const struct topo_plan *p, int b, int32_t r)
{
	const struct topo__bufsizes *s = &p->buf[b];

	return s->each != NULL ? s->each[r]
	       : r == s->one   ? s->one_size
			       : s->all;
}

/* Whether any member has a buffer of kind b. */
static inline bool topo__has_buf(const struct topo_plan *p, int b)
{
	const struct topo__bufsizes *s = &p->buf[b];

	return s->each != NULL || s->all != 0 || s->one_size != 0;
}

/* Whether message m lies within its source and destination buffers
 * (topo__plan_finish checked it; a plan changed since must still not
 * write outside them). */
static inline bool topo__msg_in_bounds(const struct topo_plan *p,
				       const struct topo__msg *m)
{
	int64_t ss = topo__bufsize(p, m->sbuf, m->src);
	int64_t ds = topo__bufsize(p, m->dbuf, m->dst);

	return m->len >= 0 && m->soff >= 0 && m->doff >= 0 &&
	       m->soff <= ss - m->len && m->doff <= ds - m->len;
}

extern const struct topo__transport_ops topo__transport_inproc;

/* Whether a run whose arenas total need bytes streams its large copies by
 * default, on a machine whose last-level cache is llc bytes (<= 0: not
 * described; 32 MiB is taken). */
int topo__stream_run(int64_t need, int64_t llc);
/* The last-level cache taken for streaming's rule: size bytes shared by
 * sharing CPUs, but at most 16 MiB for each of them (sharing < 1, not
 * known: size); 0 when size <= 0 (not described). */
int64_t topo__llc_share(int64_t size, int64_t sharing);
/* Tests: when set, called by each participant of a run with homes for
 * every range of a send buffer it reads in the reset, where the run
 * chose them message by message (exec.c, homes); concurrently. */
extern void (*topo__warm_probe)(int home, int32_t member, int64_t lo,
				int64_t hi);
/* Copies of at most this many bytes are moved by the run itself (exec.c),
 * not by the transport. */
#define TOPO__SMALL_COPY 16
/* Bytes per message of a reducing plan's table of fused copies
 * (struct topo_plan's fuse), and of a run's flags of the copies parked
 * (transport_inproc.c). */
#define TOPO__FUSE_BYTES ((int64_t)sizeof(int32_t))
#define TOPO__PARK_BYTES ((int64_t)sizeof(uint8_t))
/* Bytes per message of a reducing plan that a run's lanes take at most
 * (exec.c, Lanes): a lane position per message (4), and per combine that
 * may join one its sort key while the lanes are made (32), an entry (16)
 * and half a lane (a cache line, 64). */
#define TOPO__LANE_BYTES ((int64_t)84)
/* Called, when set, for every combine that joins a lane while another
 * participant is delivering one of its combines (tests). */
extern void (*topo__lane_probe)(int64_t msg, int worker);
/* For message i of p, opened as state by the in-process transport: a
 * REDUCE's fused copy, or i for a fusable copy, or -1 (tests). */
int topo__inproc_fused(const void *state, const struct topo_plan *p, int64_t i);
/* Whether message i of p, opened as state by the in-process transport,
 * is delivered with streaming stores (tests). */
int topo__inproc_streams(const void *state, const struct topo_plan *p,
			 int64_t i);

/* ---------------------------------------------------------------------- */
/* Two-sided schedules (sched.c): one host's part of a plan, for a
 * transport between processes (MPI), where a process can wait only for
 * what happens in itself.  A host is a process; it holds one or more
 * members (an MPI rank holds its task's endpoints); host(i) below is
 * member i's.
 *
 * A plan message a from member s to member d on different hosts becomes
 * three events: SEND at host(s) (its bytes leave s's buffer), RECV at
 * host(d) (they arrive in a staging buffer; posted when the run starts)
 * and APPLY at host(d) (the staged bytes copied or reduced into d's
 * buffer, after RECV).  A message within one host (a local step, or one
 * between two members of the host) is one LOCAL event.  start(a) is SEND
 * or LOCAL, done(a) is APPLY or LOCAL.  Each dependency "a waits for b"
 * of the plan becomes a wait that is local to one host:
 *
 *   host(b.dst) == host(a.src): start(a) waits for done(b) there.
 *   host(b.dst) == host(a.dst) != host(a.src): APPLY(a) waits for done(b)
 *     at host(a.dst), and the bytes of a may travel before b is done (a
 *     reduce into a parent's buffer moves while the parent still
 *     combines); when host(b.src) == host(a.src) as well, SEND(a) waits
 *     for SEND(b), so that a host's sends to one place keep their order.
 *   otherwise: host(b.dst) tells host(a.src) with an ACK (a message of no
 *     bytes, ACK_SEND after done(b), ACK_RECV posted when the run
 *     starts), and start(a) waits for ACK_RECV.  One ACK per (b,
 *     host(a.src)), however many messages there wait for b.
 *
 * So every dependency keeps "done(b) before done(a)", and a's reading of
 * its source bytes waits for the last message before it that wrote them
 * (tests/unit/test_sched.c checks both for every plan of the test shapes,
 * a host per member and several members per host).  An executor must add
 * one rule of MPI's: a host writes (APPLY, LOCAL) into bytes of its
 * members only after its sends reading them have completed locally.
 *
 * Wire messages between two hosts (data and ACKs) are numbered per
 * ordered pair: the data messages from s to d in plan order 0, 1, ...,
 * then the ACKs from s to d in the order of b: an event's seq, which an
 * MPI transport uses as the tag (both ends compute the same numbers from
 * the plan). */
enum topo__ev_kind {
	TOPO__EV_SEND = 0,
	TOPO__EV_RECV = 1,
	TOPO__EV_APPLY = 2,
	TOPO__EV_LOCAL = 3,
	TOPO__EV_ACK_SEND = 4,
	TOPO__EV_ACK_RECV = 5,
};

struct topo__ev {
	int64_t msg;  /* the plan message (ACKs: b, whose done they announce) */
	int64_t seq;  /* SEND, RECV, ACKs: the wire message's number; else -1 */
	int32_t peer; /* host; SEND, ACK_SEND: to; RECV, ACK_RECV: from;
			 else -1 */
	uint8_t kind; /* enum topo__ev_kind */
	int32_t nwait; /* events of this member it waits for */
};

struct topo__sched {
	int32_t host;
	int64_t nev;
	struct topo__ev *ev;
	/* successors in CSR form: event e is waited for by
	 * succ[succ_off[e] .. succ_off[e + 1] - 1] */
	int64_t *succ_off;
	int64_t *succ;
	int64_t nsend, nrecv; /* wire messages out and in (ACKs included) */
	int64_t max_seq;      /* largest seq, -1 when none */
};

/* Host h's schedule of plan p (p not predict-only, or a member's part of
 * one: plan/local.c); host[i] (0 <= host[i] < nhosts) is member i's host,
 * or host is NULL: each member its own host (nhosts is then p->n).  Reads
 * the whole plan: O(messages + dependencies) time, memory O(the host's
 * events and peers).  Returns 0, TOPO_EARG, TOPO_ENOMEM or TOPO_ELIMIT
 * (more events than fit). */
int topo__sched_new(struct topo__sched **out, const struct topo_plan *p,
		    const int32_t *host, int32_t nhosts, int32_t h,
		    topo_error *err);
void topo__sched_free(struct topo__sched *s);

/* ---------------------------------------------------------------------- */
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

#endif /* TOPO_EXEC_INTERNAL_H */
