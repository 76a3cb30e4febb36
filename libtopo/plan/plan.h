/*
 * plan.h - a plan: the DAG of messages over members' buffers that every
 * algorithm builds and every transport runs, the builder helpers the
 * algorithms fill it with, segments, the parameter readers and the
 * elementwise reductions.
 *
 * A plan is pure data: members are group ranks and buffers are (member,
 * kind, offset, length), never pointers, so a transport between processes
 * (MPI) can run the same plan.
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_PLAN_H
#define TOPO_PLAN_H

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

#endif /* TOPO_PLAN_H */
