/*
 * coll_pattern.h - tree arithmetic shared by the collective algorithms
 * (coll/pattern.c): re-rooting a tree at a logical root, children lists,
 * breadth-first and preorder numbering, subtree sizes.  Pure arithmetic:
 * it allocates nothing and moves no data; callers own every array.
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_COLL_PATTERN_H
#define TOPO_COLL_PATTERN_H

#include "topo_internal.h"

struct topo__msg; /* plan/plan.h */

/* The same undirected tree as t, rooted at rank root: parent[r] for every
 * rank, -1 at root.  Only the path from root to t's root turns round.
 * O(n). */
void topo__pattern_reroot(const topo_tree *t, int32_t root, int32_t *parent);

/* Children in CSR form from a parent array of n ranks (one -1): the
 * children of r are child[child_off[r] .. child_off[r + 1] - 1], ascending.
 * child_off holds n + 1 entries, child n - 1 (at least 1).  O(n). */
void topo__pattern_children(const int32_t *parent, int32_t n,
			    int32_t *child_off, int32_t *child);

/* Breadth-first order from root over a CSR tree: order[0] = root, parents
 * before children, siblings ascending.  O(n). */
void topo__pattern_bfs(int32_t n, int32_t root, const int32_t *child_off,
		       const int32_t *child, int32_t *order);

/*
 * Preorder of a CSR tree from root, children visited in ascending rank:
 * order[i] is the rank visited i-th, pre[r] its inverse, size[r] the
 * number of members in r's subtree (r included).  So r's subtree is
 * order[pre[r] .. pre[r] + size[r] - 1], r first, then each child's
 * subtree in turn: the packed layout of scatter and gather "tree".  No
 * stack: sizes bottom-up over a breadth-first order, then positions
 * top-down.  O(n).
 */
void topo__pattern_preorder(int32_t n, int32_t root, const int32_t *child_off,
			    const int32_t *child, int32_t *order, int32_t *pre,
			    int32_t *size);

/* The end (exclusive) of the run of consecutive ranks in order[] that
 * starts at position i and stays below position end: the largest j <= end
 * with order[k + 1] == order[k] + 1 for i <= k < j - 1.  A run is one
 * contiguous range of rank-ordered blocks, so it moves as one copy. */
int32_t topo__pattern_run_end(const int32_t *order, int32_t i, int32_t end);

/* Number of such runs in order[lo .. hi - 1]. */
int32_t topo__pattern_runs(const int32_t *order, int32_t lo, int32_t hi);

/* The packed layout of scatter and gather "tree" (coll/layout.c, which
 * allocates): t re-rooted at root, its children in CSR form, its preorder
 * (order, pre, size as topo__pattern_preorder), and whether the root must
 * pack because some child's subtree is not one run of ranks. */
struct topo__layout {
	int32_t *par, *coff, *ch, *order, *pre, *size;
	int packs;
};

/* Returns 0 or TOPO_ENOMEM (nothing left allocated). */
int topo__layout_new(struct topo__layout *l, const topo_tree *t, int32_t n,
		     int32_t root);
void topo__layout_free(struct topo__layout *l);

/* What scatter and gather "tree" (what: "scatter", "gather") set up
 * alike: the layout l of p's tree at p->root, *ids an array of n message
 * ids, the buffers (the root's n blocks in its buffer all, each member's
 * own block in its buffer own, WORK for what a member passes on and for
 * the root's packing) and the plan's expected size.  l and *ids are the
 * caller's to free, whatever this returns: 0, TOPO_ELIMIT (n blocks
 * overflow), TOPO_ENOMEM, or the error of topo__plan_bufsize/_expect. */
int topo__layout_setup(struct topo_plan *p, struct topo__layout *l,
		       int64_t **ids, int all, int own, const char *what,
		       topo_error *err);

/* gather "tree"'s phase up the layout (coll/gather/tree.c), shared with
 * allgather "tree": blocks of B bytes, slots slot0 + rank; up[v] the id of
 * v's message to its parent.  0, or the error of topo__plan_msg/_dep. */
int topo__gather_up(struct topo_plan *p, const struct topo__layout *l,
		    int32_t root, int64_t B, int64_t slot0, int64_t *up,
		    topo_error *err);

/* The receipt slots of scatter "tree" and "direct": one per member
 * (*slot0 + rank), expecting 1 arrival, the root's 0.  0, or the error of
 * topo__plan_slots. */
int topo__scatter_slots(struct topo_plan *p, int64_t *slot0, topo_error *err);

/* scatter "tree"'s phase down the layout (coll/scatter/tree.c), shared
 * with reduce-scatter "tree": root's blocks in its buffer src at rank * B,
 * packed into its WORK at pack0 where needed; keep >= 0 a message root's
 * packing and sends wait for; slots slot0 + rank; arrival[v] the id of
 * v's message from its parent. */
int topo__scatter_down(struct topo_plan *p, const struct topo__layout *l,
		       int32_t root, int64_t B, int src, int64_t pack0,
		       int64_t keep, int64_t slot0, int64_t *arrival,
		       topo_error *err);

/* The fold to a power of two of recursive doubling and halving (MPICH's,
 * for any n): pof2 the largest power of two <= n, rem = n - pof2; of the
 * first 2 rem ranks each even one sits out (its data folded into the odd
 * one above it), and the pof2 others run the power-of-two algorithm under
 * new ranks 0..pof2 - 1: odd rank 2 nr + 1 for nr < rem, nr + rem after.
 * Used by allreduce recursive-doubling and rabenseifner, allgather
 * recursive-doubling and reduce-scatter recursive-halving. */
struct topo__fold {
	int32_t n, pof2, rem, steps; /* steps = log2 pof2 */
};

static inline void topo__fold_init(struct topo__fold *f, int32_t n)
{
	f->n = n;
	f->pof2 = 1;
	f->steps = 0;
	while (f->pof2 <= n / 2) {
		f->pof2 *= 2;
		f->steps++;
	}
	f->rem = n - f->pof2;
}

/* The new rank of r, or -1 for an even rank that sits out. */
static inline int32_t topo__fold_new(const struct topo__fold *f, int32_t r)
{
	if (r < 2 * f->rem)
		return r % 2 != 0 ? r / 2 : -1;
	return r - f->rem;
}

/* The rank of new rank nr. */
static inline int32_t topo__fold_old(const struct topo__fold *f, int32_t nr)
{
	return nr < f->rem ? 2 * nr + 1 : nr + f->rem;
}

/* The first block of new rank nr's run, rank-ordered blocks: new rank nr
 * holds blocks [2 nr, 2 nr + 2) (nr < rem) or the one block nr + rem, so
 * an aligned range of new ranks holds a contiguous run (nr == pof2: n). */
static inline int64_t topo__fold_run_lo(const struct topo__fold *f, int32_t nr)
{
	return nr < f->rem ? 2 * (int64_t)nr : (int64_t)nr + f->rem;
}

/* The receipt counters most algorithms keep (coll/slots.c): one per
 * member, *slot0 + rank, each expecting `expect` deliveries.  0, or the
 * error of topo__plan_slots. */
int topo__slots_each(struct topo_plan *p, int32_t expect, int64_t *slot0,
		     topo_error *err);

/* Every member's buffers (coll/slots.c): SEND of send bytes, RECV of
 * recv, WORK of work (0: none).  0, or the error of topo__plan_bufsize. */
int topo__bufs_each(struct topo_plan *p, int64_t send, int64_t recv,
		    int64_t work, topo_error *err);

/* The planning steps allgather recursive-doubling and reduce-scatter
 * recursive-halving share (coll/fold.c, the counters coll/slots.c).
 * Receipt slots: one per member (*slot0 + rank), expecting a message per
 * step, plus the fold's, at the pof2 members that take part, and the one
 * result at each member that sits out.  0, or the error of
 * topo__plan_slots. */
int topo__fold_slots(struct topo_plan *p, const struct topo__fold *f,
		     int64_t *slot0, topo_error *err);

/* Message ids by new rank: own[nr] the local step that readied nr's
 * data, fold[nr] the fold into it (nr < rem), prev[nr] and cur[nr] nr's
 * messages of the step before and of this one. */
struct topo__fold_ids {
	int64_t *own, *fold, *prev, *cur;
};

/* Allocates ids for f; what names the algorithm ("allgather
 * recursive-doubling") for the refusal.  0 or TOPO_ENOMEM (nothing left
 * allocated). */
int topo__fold_ids_new(struct topo__fold_ids *ids, const struct topo__fold *f,
		       const char *what, topo_error *err);
void topo__fold_ids_free(struct topo__fold_ids *ids);

/* The dependencies of new rank v's message id of step k: at step 0 its
 * own step and the fold into it; after, its message of the step before
 * (which waited for everything before it) and the message into it then,
 * from its partner of that step, pw.  0, or the error of topo__plan_dep. */
int topo__fold_step_deps(struct topo_plan *p, const struct topo__fold *f,
			 const struct topo__fold_ids *ids, int32_t k,
			 int32_t v, int32_t pw, int64_t id, topo_error *err);

/* Step k of recursive doubling (halving false) or halving over f: every
 * new rank v moves to w = v ^ mask the blocks (B bytes each, at their
 * rank-order offsets in both buffers) of the aligned group of mask new
 * ranks that holds v (doubling, mask = 2^k: passing on all v holds) or w
 * (halving, mask = pof2 / 2^(k + 1): giving away what w keeps, once w's
 * buffer holds its own data, ids->own[w]), in tmpl's kind and buffers,
 * counted by w's slot (slot0 + rank).  Each waits as topo__fold_step_deps
 * says; then this step's ids become the step before's.  0, or the error
 * of topo__plan_msg/_dep. */
int topo__fold_step(struct topo_plan *p, const struct topo__fold *f,
		    struct topo__fold_ids *ids, const struct topo__msg *tmpl,
		    int32_t k, bool halving, int64_t B, int64_t slot0,
		    topo_error *err);

/* Step done: this step's messages become the step before's. */
static inline void topo__fold_ids_next(struct topo__fold_ids *ids)
{
	int64_t *t = ids->prev;

	ids->prev = ids->cur;
	ids->cur = t;
}

/* alltoall pairwise's n rounds (coll/alltoall/pairwise.c): round s, every
 * member r sends its block to (r + s) mod n (r XOR s when chained and n is
 * a power of two), round 0 the local copies; ROUNDS_CHAINED: each member's
 * sends wait for its send of the round before (pairwise), else none
 * (direct); ROUNDS_ONE_BLOCK: every member sends the one block of its
 * SEND (B bytes) to all (allgather direct), not block d of n to member d.
 * name is the algorithm's ("alltoall direct"), for the refusal beyond 2^30
 * messages. */
enum { ROUNDS_CHAINED = 1, ROUNDS_ONE_BLOCK = 2 };
/* allgather direct over a group on one node cuts blocks of at least
 * twice this many bytes into pieces of this many (the last one shorter),
 * each its own message (coll/allgather/direct.c). */
#define TOPO__ALLGATHER_PIECE ((int64_t)256 << 10)
/* allgather direct's blocks of at least this many bytes are sent member by
 * member, each to every member in a row (smaller ones: in rounds). */
#define TOPO__ALLGATHER_BY_MEMBER ((int64_t)4096)
int topo__alltoall_rounds(struct topo_plan *p, const char *name, int flags,
			  topo_error *err);

/* The message set-ups the builders share (coll/msg.c).  topo__msg_init:
 * *m cleared, then kind (enum topo__kind) from buffer sbuf to dbuf (enum
 * topo__buf), len bytes, counted by no receipt slot (-1): the template a
 * loop starts from before it sets each message's members, offsets and
 * slot.  topo__local_copy: member's own COPY of len bytes from its sbuf at
 * soff to its dbuf at doff, a local step no slot counts; *id its id (id
 * may be NULL).  0, or the error of topo__plan_msg. */
void topo__msg_init(struct topo__msg *m, int kind, int sbuf, int dbuf,
		    int64_t len);
int topo__local_copy(struct topo_plan *p, int32_t member, int sbuf,
		     int64_t soff, int dbuf, int64_t doff, int64_t len,
		     int64_t *id, topo_error *err);

/* TOPO_ENOMEM, err saying that planning what ("allgather ring") over n
 * members ran out of memory. */
int topo__nomem(topo_error *err, const char *what, int32_t n);

/* The barriers' common parts (coll/barrier/tree.c): the plan's expected
 * size (msgs, deps, and these 3 n slots) and the receipt slots every
 * member has, its ENTER's and its LEAVE's (expecting 1 each, set here) and
 * one for the messages it receives (expectation the caller's); and the
 * ENTER (or LEAVE) step of every member, in rank order, counted by slot
 * slot0 + rank. */
int topo__barrier_setup(struct topo_plan *p, int64_t msgs, int64_t deps,
			int64_t *enter0, int64_t *leave0, int64_t *recv0,
			topo_error *err);
int topo__barrier_marks(struct topo_plan *p, int mark, int64_t slot0,
			topo_error *err);

#endif /* TOPO_COLL_PATTERN_H */
