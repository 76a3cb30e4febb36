/*
 * coll/bcast/flood.c - bcast "flood" (seed 000): a broadcast from any member
 * that follows the tree's route table as it is, derived or loaded from a
 * file (possibly hand-edited, possibly wrong).
 *
 * Cost, n members, B bytes, S segments of at most B/S bytes, correct
 * table: S(n - 1) transport messages moving (n - 1)B bytes, plus S local
 * copies at the root; time about (depth + S - 1)(alpha + (B/S)beta) once
 * the segments pipeline down the tree.  A faulty table costs what it
 * sends: every member forwards what its row says, once per segment.
 *
 * The plan is a simulation of the flood.  The root forwards along its
 * origin row (from -1); a member that receives from u forwards along its
 * row for "from u".  Only a member's FIRST arrival (first in the
 * simulation's breadth-first order, which is deterministic) is forwarded: a
 * duplicate is still a real message, delivered and counted by the
 * member's receipt slot, but not passed on (a real implementation drops
 * it by sequence number; forwarding it would flood forever on a table with
 * a cycle).  An arrival for which the member has no row is a plan-time
 * fault: the message is delivered, nothing is forwarded, and the members
 * beyond it show up at run time as undelivered.  No row names its own
 * member: the loader refuses such a table (collc(5)).
 *
 * Data: the root copies SEND to RECV locally and forwards from its SEND
 * (so its forwards need not wait for that copy); every other member
 * receives into RECV and forwards from RECV once its first arrival is in.
 * A duplicate lands in the member's WORK (B bytes, only for members that
 * get one), the receive area a real implementation would drop it from:
 * it never races with the forwards that read RECV, and ordering it after
 * them instead could deadlock (on a table where two members send each
 * other duplicates, each would wait for the other's forward).  Duplicates
 * at one member wait for each other, as they write the same WORK bytes.
 *
 * Receipt slots: one per (member, segment), expecting 1; the root's expect
 * 0, so an arrival back at the root counts as a duplicate.
 *
 * Segmentation: params.segment > 0 cuts B into segments of that size;
 * 0 picks topo__auto_segment bytes once B reaches 256 KiB (64 KiB, or
 * 256 KiB for a group on one node: below, and plan.c).  Each segment is
 * its own flood with its own slots, so segment k + 1 leaves the root
 * while segment k is still on its way.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

#include <stdlib.h>
#include <string.h>

/*
 * Automatic segmentation (topo__auto_segment): 64 KiB segments once B
 * reaches 256 KiB across nodes, so a path has at least four segments in
 * flight and the two threads of this machine both copy from the first
 * microseconds on.  Measured with the
 * in-process transport (2 threads, 16 members on 4 nodes of 4 tasks,
 * physical tree, median of 100 iterations, middle of 5 runs, a loaded
 * 2-core host): 1 MiB whole 1.02 ms, 256 KiB segments 0.79, 64 KiB 0.78,
 * 32 KiB 0.97; on a chain 1.08 whole against 0.74-0.87 segmented.  At
 * 256 KiB, 64 KiB segments gain a little (0.175 -> 0.171 ms, 32 KiB
 * 0.156); at 128 KiB nothing (0.063 whole, 0.064 in 64 KiB).  Smaller
 * segments only add messages.  Within one node, 256 KiB (plan.c).
 */

/* More messages than this is refused (plan.c's limit too: some 50 GiB of
 * plan), here with a hint at the segment size. */
#define FLOOD_MAX_MESSAGES ((int64_t)1 << 30)

/* The simulated flood, identical for every segment. */
struct flood {
	int32_t n;
	int32_t *src, *dst; /* [cnt] */
	int32_t *wait;	    /* [cnt] the arrival at src it passes on; -1 */
	int64_t cnt, cap;
	int32_t *first;	  /* [n] first arrival; ROOT or NONE */
	int64_t ndup;	  /* arrivals that are not a member's first */
	int32_t *scratch; /* derived rows' targets */
	struct topo__populate populate; /* src, dst, wait at the start */
};

/* A dependency {before, after} between flood messages. */
typedef int64_t flood_dep[2];

#define FLOOD_NONE (-1)
#define FLOOD_ROOT (-2)

/* How many arrivals ahead simulate asks for a member's lines: about the
 * misses a core keeps in flight, measured at 8,388,608 members. */
#define FLOOD_AHEAD 16

static int flood_grow(struct flood *f)
{
	int64_t cap = f->cap < 1024 ? 1024 : 2 * f->cap;
	int32_t *s, *d, *w;

	topo__populate_wait(&f->populate); /* the arrays may move */
	if (cap > FLOOD_MAX_MESSAGES)
		cap = FLOOD_MAX_MESSAGES;
	if (f->cnt >= cap)
		return TOPO_ELIMIT;
	s = topo__realloc(f->src, (size_t)cap * sizeof(int32_t));
	if (s == NULL)
		return TOPO_ENOMEM;
	f->src = s;
	d = topo__realloc(f->dst, (size_t)cap * sizeof(int32_t));
	if (d == NULL)
		return TOPO_ENOMEM;
	f->dst = d;
	w = topo__realloc(f->wait, (size_t)cap * sizeof(int32_t));
	if (w == NULL)
		return TOPO_ENOMEM;
	f->wait = w;
	f->cap = cap;
	return 0;
}

/* v forwards an arrival from `from` (carried by flood message `wait`, -1
 * at the root) along its row, found by origin (routes.c): a rule row is
 * computed, a row of a hand-edited table looked up among its exceptions. */
static int forward(struct flood *f, const topo_tree *t, int32_t v, int32_t from,
		   int32_t wait)
{
	const int32_t *to;
	int32_t cnt = topo__routes_find(t, v, from, &to, f->scratch);
	int rc;

	/* No row (cnt < 0) is the plan-time fault: nothing goes on.  A
	 * loaded table never names v itself (the loader refuses that). */
	for (int32_t i = 0; i < cnt; i++) {
		if (f->cnt == f->cap && (rc = flood_grow(f)) != 0)
			return rc;
		f->src[f->cnt] = v;
		f->dst[f->cnt] = to[i];
		f->wait[f->cnt] = wait;
		f->cnt++;
	}
	return 0;
}

/*
 * Simulates the flood from root: messages in the order they are sent,
 * breadth-first.  The message list doubles as the queue: when message j is
 * reached and is the first to arrive at its destination, the destination
 * forwards.  Every member forwards at most once, so the work is the sum of
 * the rows used: O(n) for a correct table.
 */
static int simulate(struct flood *f, const topo_tree *t, int32_t root)
{
	int rc;

	for (int32_t v = 0; v < f->n; v++)
		f->first[v] = FLOOD_NONE;
	f->first[root] = FLOOD_ROOT;
	rc = forward(f, t, root, -1, -1);
	for (int64_t j = 0; rc == 0 && j < f->cnt; j++) {
		int32_t v = f->dst[j];

		/* The members a few arrivals on lie anywhere in memory: ask
		 * for their lines now (the queue is usually that long). */
		if (j + FLOOD_AHEAD < f->cnt) {
			int32_t w = f->dst[j + FLOOD_AHEAD];

			__builtin_prefetch(&f->first[w]);
			topo__routes_prefetch(t, w, 1);
		}
		if (j + FLOOD_AHEAD / 2 < f->cnt)
			topo__routes_prefetch(t, f->dst[j + FLOOD_AHEAD / 2], 2);

		if (f->first[v] != FLOOD_NONE) {
			f->ndup++; /* a duplicate: delivered, not forwarded */
			continue;
		}
		f->first[v] = (int32_t)j;
		rc = forward(f, t, v, f->src[j], (int32_t)j);
	}
	return rc;
}

/* A forward and what it leads to, while a member's forwards are sorted. */
struct fwd {
	int32_t dst;
	int32_t key;  /* the time of the subtree it reaches, in sends */
	int64_t old;  /* its index before sorting */
};

static int fwd_cmp(const void *a, const void *b)
{
	const struct fwd *x = a, *y = b;

	/* The longest subtree first; the row's order among equals. */
	if (x->key != y->key)
		return x->key > y->key ? -1 : 1;
	return x->old < y->old ? -1 : x->old > y->old;
}

/*
 * Orders each member's forwards so that the subtree that will take
 * longest is sent to first: the greedy order that is optimal for a tree
 * broadcast when every send costs a unit (T(v) = max over v's i-th send
 * of i + 1 + T(child), children by decreasing T), which is how MPI
 * libraries walk a binomial tree (the largest half first).  A row's order
 * says which targets, not when: the set of messages is unchanged, only
 * their order within each member's forwards, so every dependency still
 * goes from a lower index to a higher one.
 *
 * T is kept by message, not by member: tm[j] is the time of the subtree
 * that arrival j starts (0 for a leaf, and for a duplicate, which starts
 * nothing).  A member's forwards are one group, and its first arrival
 * lies before them; groups come in the order of their arrivals.  So a
 * pass from the last group back reads each group's tm in order and
 * writes its member's at its arrival, in its parent's group, which is
 * yet to come: both streams run downwards, with none of the random
 * accesses that a member's array costs over millions of members.  Once a
 * group is sorted, its tm entries are read no more and hold instead where
 * each of its messages went (tm[old] = new), which the wait pass reads.
 * first[] is kept exact only where something reads it again: with
 * duplicates (dup_deps, emit_segment).
 */
static int order_forwards(struct flood *f, int32_t maxdeg)
{
	int32_t *tm = topo__calloc((size_t)f->cnt + 1, sizeof(int32_t));
	struct fwd *g = topo__mallocarray((size_t)maxdeg + 1, sizeof(*g));
	int64_t end = f->cnt, gcap = (int64_t)maxdeg + 1;

	if (tm == NULL || g == NULL) {
		topo__free(tm);
		topo__free(g);
		return TOPO_ENOMEM;
	}
	/* Groups (one member's forwards, contiguous) from the last: a
	 * member's own forwards come after its first arrival. */
	while (end > 0) {
		int64_t start = end - 1;
		int32_t u = f->src[start], best = 0;

		while (start > 0 && f->src[start - 1] == u &&
		       f->wait[start - 1] == f->wait[end - 1])
			start--;
		if (end - start > gcap) {
			/* A hand-edited row longer than any tree degree. */
			struct fwd *ng = topo__realloc(
			    g, (size_t)(end - start) * sizeof(*g));

			if (ng == NULL) {
				topo__free(tm);
				topo__free(g);
				return TOPO_ENOMEM;
			}
			g = ng;
			gcap = end - start;
		}
		for (int64_t j = start; j < end; j++)
			g[j - start] = (struct fwd){
			    f->dst[j], tm[j] < INT32_MAX - 1 ? tm[j] + 1 : 1, j};
		if (end - start > 24) {
			qsort(g, (size_t)(end - start), sizeof(*g), fwd_cmp);
		} else {
			/* Rows are short: insertion sort, no allocation. */
			for (int64_t i = 1; i < end - start; i++) {
				struct fwd x = g[i];
				int64_t k = i;

				for (; k > 0 && fwd_cmp(&x, &g[k - 1]) < 0; k--)
					g[k] = g[k - 1];
				g[k] = x;
			}
		}
		for (int64_t i = 0; i < end - start; i++) {
			int64_t j = start + i;

			if (f->ndup > 0 && g[i].old != j &&
			    f->first[g[i].dst] == g[i].old)
				f->first[g[i].dst] = (int32_t)j;
			f->dst[j] = g[i].dst;
			tm[g[i].old] = (int32_t)j; /* where it went */
			if (i + g[i].key > best)
				best = (int32_t)(i + g[i].key < INT32_MAX
							 ? i + g[i].key
							 : INT32_MAX);
		}
		if (f->wait[start] >= 0)
			tm[f->wait[start]] = best; /* in the parent's group */
		end = start;
	}
	/* Each forward waits for its member's first arrival, wherever the
	 * sort above moved it (-1 at the root). */
	for (int64_t j = 0; j < f->cnt; j++)
		f->wait[j] = f->wait[j] < 0 ? -1 : tm[f->wait[j]];
	topo__free(tm);
	topo__free(g);
	return 0;
}

/*
 * Depth-first numbering, for a flood of at least topo__tune.flood_depth_first
 * messages that sends no duplicate.  A worker runs a bcast depth first:
 * a message releases its member's forwards (a leaf's own copy runs at
 * once) and the last one it pushes runs next (exec.c, a LIFO stack).  In
 * breadth-first order every such step lands far from the last in the
 * plan's arrays: over a million members each forward cost two misses one
 * after the other, its successor list and then their records.  Numbered
 * in the order a worker takes them, the groups it reads follow one
 * another in memory.  Only the numbering changes: every member's forwards
 * stay one group in their order (order_forwards), each after the member's
 * arrival, so a dependency still goes from a lower index to a higher.
 * The breadth-first order is kept below the threshold, where plans gain
 * nothing and their outputs (GOAL, traces) list it, and in a plan that is
 * only predicted: the simulation takes the messages in time order, which
 * is breadth first, and so is memory's.
 */
/* (the default of topo__tune.flood_depth_first: tune.c) */

static int depth_first(struct flood *f)
{
	int64_t cnt = f->cnt, k = 0, top = 0;
	int32_t *gstart, *stack, *perm, *tmp;
	int32_t **arr[3] = {&f->src, &f->dst, &f->wait};

	if (cnt == 0)
		return 0; /* nothing to number (the threshold at 0, in tests) */
	gstart = topo__mallocarray((size_t)cnt, sizeof(int32_t));
	stack = topo__mallocarray((size_t)cnt, sizeof(int32_t));
	perm = topo__mallocarray((size_t)cnt, sizeof(int32_t));
	if (gstart == NULL || stack == NULL || perm == NULL) {
		topo__free(gstart);
		topo__free(stack);
		topo__free(perm);
		return TOPO_ENOMEM;
	}
	topo__populate_wait(&f->populate); /* the arrays are replaced */
	/* Where the forwards of arrival j start (a member's forwards are
	 * one group, sharing its arrival as their wait); -1: none. */
	for (int64_t j = 0; j < cnt; j++)
		gstart[j] = -1;
	for (int64_t j = 0; j < cnt; j++)
		if (f->wait[j] >= 0 && (j == 0 || f->wait[j - 1] != f->wait[j]))
			gstart[f->wait[j]] = (int32_t)j;
	/* The root's group first (index 0), then as a worker's stack. */
	stack[top++] = 0;
	while (top > 0) {
		int64_t g = stack[--top], e = g + 1;

		while (e < cnt && f->wait[e] == f->wait[g])
			e++;
		for (int64_t j = g; j < e; j++)
			perm[j] = (int32_t)k++;
		for (int64_t j = g; j < e; j++)
			if (gstart[j] >= 0)
				stack[top++] = gstart[j];
	}
	topo__free(stack);
	topo__free(gstart);
	tmp = topo__mallocarray((size_t)cnt, sizeof(int32_t));
	if (tmp == NULL) {
		topo__free(perm);
		return TOPO_ENOMEM;
	}
	for (int j = 0; j < 3; j++) {
		int32_t *a = *arr[j], *swap;

		for (int64_t i = 0; i < cnt; i++)
			tmp[perm[i]] =
			    a == f->wait && a[i] >= 0 ? perm[a[i]] : a[i];
		swap = *arr[j];
		*arr[j] = tmp;
		tmp = swap;
	}
	topo__free(tmp);
	topo__free(perm);
	f->cap = cnt;
	return 0;
}

/*
 * Duplicates land in the member's WORK (see the file comment), where only
 * duplicates write: each waits for the previous one at the same member.
 * Returns pairs {before, after} of flood indices, computed once for all
 * segments, and whether member v receives any duplicate (has_dup[v]).
 * Every dependency of the flood, these included, goes from a lower index
 * to a higher one, so the plan is acyclic whatever the table.
 */
static int dup_deps(const struct flood *f, flood_dep **out, int64_t *nout,
		    uint8_t *has_dup)
{
	flood_dep *dd = NULL;
	int64_t *last_dup = NULL, ndup = 0, nd = 0;

	*out = NULL;
	*nout = 0;
	memset(has_dup, 0, (size_t)f->n);
	if (f->ndup == 0)
		return 0; /* the usual case */
	for (int64_t j = 0; j < f->cnt; j++)
		if (f->first[f->dst[j]] != j)
			ndup++;
	last_dup = topo__mallocarray((size_t)f->n, sizeof(int64_t));
	dd = topo__mallocarray((size_t)ndup, sizeof(*dd));
	if (last_dup == NULL || dd == NULL) {
		topo__free(last_dup);
		topo__free(dd);
		return TOPO_ENOMEM;
	}
	for (int32_t v = 0; v < f->n; v++)
		last_dup[v] = -1;
	for (int64_t j = 0; j < f->cnt; j++) {
		int32_t v = f->dst[j];

		if (f->first[v] == j)
			continue;
		has_dup[v] = 1;
		if (last_dup[v] >= 0) {
			dd[nd][0] = last_dup[v];
			dd[nd++][1] = j;
		}
		last_dup[v] = j;
	}
	topo__free(last_dup);
	*out = dd;
	*nout = nd;
	return 0;
}

/* Emits one segment: bytes [off, off + len) of every member's buffer. */
static int emit_segment(struct topo_plan *p, const struct flood *f,
			const flood_dep *dd, int64_t nd, int64_t off,
			int64_t len, int64_t slot0, topo_error *err)
{
	struct topo__msg m;
	int64_t base, id;
	int rc;

	topo__msg_init(&m, TOPO__COPY, TOPO__SEND, TOPO__RECV, len);
	m.src = m.dst = p->root;
	m.soff = m.doff = off;
	rc = topo__plan_msg(p, &m, &base, err);
	for (int64_t j = 0; rc == 0 && j < f->cnt; j++) {
		m.src = f->src[j];
		m.dst = f->dst[j];
		m.sbuf = m.src == p->root ? TOPO__SEND : TOPO__RECV;
		/* (A predict-only plan keeps no buffers: spare the lookup.) */
		m.dbuf = p->predict_only || f->ndup == 0 ||
				 f->first[m.dst] == j
			     ? TOPO__RECV
			     : TOPO__WORK;
		m.slot = slot0 + m.dst;
		rc = topo__plan_msg(p, &m, &id, err);
		if (rc == 0 && f->wait[j] >= 0)
			rc = topo__plan_dep(p, base + 1 + f->wait[j], id, err);
	}
	for (int64_t i = 0; rc == 0 && i < nd; i++)
		rc = topo__plan_dep(p, base + 1 + dd[i][0], base + 1 + dd[i][1],
				    err);
	return rc;
}

/* The flood's arrays: first and scratch, has_dup, and room for the
 * n - 1 messages a table that follows the rule sends, their pages faulted
 * in on the other CPU while the flood starts (see alloc.c).  0 or
 * TOPO_ENOMEM. */
static int flood_alloc(struct flood *f, int32_t maxdeg, uint8_t **has_dup)
{
	f->first = topo__mallocarray((size_t)f->n, sizeof(int32_t));
	f->scratch = topo__mallocarray((size_t)maxdeg, sizeof(int32_t));
	*has_dup = topo__malloc((size_t)f->n);
	if (f->first == NULL || f->scratch == NULL || *has_dup == NULL)
		return TOPO_ENOMEM;
	f->cap = f->n > 1024 ? f->n : 1024;
	if (f->cap > FLOOD_MAX_MESSAGES)
		f->cap = FLOOD_MAX_MESSAGES;
	f->src = topo__mallocarray((size_t)f->cap, sizeof(int32_t));
	f->dst = topo__mallocarray((size_t)f->cap, sizeof(int32_t));
	f->wait = topo__mallocarray((size_t)f->cap, sizeof(int32_t));
	if (f->src == NULL || f->dst == NULL || f->wait == NULL)
		return TOPO_ENOMEM;
	topo__populate_add(&f->populate, f->src,
			   (size_t)f->cap * sizeof(int32_t));
	topo__populate_add(&f->populate, f->dst,
			   (size_t)f->cap * sizeof(int32_t));
	topo__populate_add(&f->populate, f->wait,
			   (size_t)f->cap * sizeof(int32_t));
	topo__populate_start(&f->populate);
	return 0;
}

/* The plan of the flood found: the buffers (the root's input, everyone's
 * result, a WORK where duplicates arrive), then nseg segments of seg
 * bytes, each its own receipt counters. */
static int flood_emit(struct topo_plan *p, const struct flood *f,
		      const flood_dep *dd, int64_t nd, const uint8_t *has_dup,
		      int64_t seg, int64_t nseg, topo_error *err)
{
	int64_t bytes = (int64_t)p->params.bytes;
	int rc;

	rc = topo__plan_bufsize(p, TOPO__SEND, p->root, bytes, err);
	if (rc == 0)
		rc = topo__plan_bufsize_all(p, TOPO__RECV, bytes, err);
	for (int32_t v = 0; rc == 0 && v < p->n; v++)
		if (has_dup[v])
			rc = topo__plan_bufsize(p, TOPO__WORK, v, bytes, err);
	/* Per segment: the root's copy and the flood's messages, each
	 * waiting for at most its arrival, the duplicates' order, and a
	 * counter per member. */
	if (rc == 0)
		rc = topo__plan_expect(p, nseg * (f->cnt + 1),
				       nseg * (f->cnt + nd),
				       nseg * (int64_t)p->n, err);
	for (int64_t k = 0; rc == 0 && k < nseg; k++) {
		int64_t slot0 = -1, off = k * seg;

		/* emit_segment names slots slot0 + member. */
		rc = topo__plan_slots(p, p->n, -1, &slot0, err);
		for (int32_t v = 0;
		     rc == 0 && p->slot_expect != NULL && v < p->n; v++)
			p->slot_expect[slot0 + v] = v == p->root ? 0 : 1;
		if (rc == 0)
			rc = emit_segment(p, f, dd, nd, off,
					  bytes - off < seg ? bytes - off : seg,
					  slot0, err);
	}
	return rc;
}

int topo__plan_bcast_flood(struct topo_plan *p, topo_error *err)
{
	const topo_tree *t = p->t;
	struct flood f;
	flood_dep *dd = NULL;
	int64_t nd = 0, nseg, bytes = (int64_t)p->params.bytes;
	uint8_t *has_dup = NULL;
	size_t seg = p->params.segment;
	int32_t maxdeg = 1;
	int rc;

	memset(&f, 0, sizeof(f));
	f.n = p->n;
	if (seg == 0)
		seg = (int64_t)p->params.bytes >= TOPO__AUTO_SEGMENT_MIN
			  ? (size_t)topo__auto_segment(p)
			  : p->params.bytes;
	if (seg > p->params.bytes)
		seg = p->params.bytes;
	nseg = bytes == 0 ? 1 : (bytes + (int64_t)seg - 1) / (int64_t)seg;
	for (int32_t v = 0; v < p->n; v++) {
		int32_t d = topo_tree_degree(t, v);

		if (d > maxdeg)
			maxdeg = d;
	}
	rc = flood_alloc(&f, maxdeg, &has_dup);
	if (rc != 0)
		goto fail;
	rc = simulate(&f, t, p->root);
	if (rc == 0)
		rc = order_forwards(&f, maxdeg);
	if (rc == 0 && !p->predict_only && f.ndup == 0 &&
	    f.cnt >= topo__tune.flood_depth_first)
		rc = depth_first(&f);
	if (rc == 0)
		rc = dup_deps(&f, &dd, &nd, has_dup);
	if (rc == TOPO_ELIMIT) {
		rc = topo__err(err, TOPO_ELIMIT, NULL, NULL,
			       "bcast flood: the route table of tree \"%s\" "
			       "sends more than %lld messages from endpoint %d",
			       t->name, (long long)FLOOD_MAX_MESSAGES,
			       (int)t->g->members[p->root]);
		goto done;
	}
	if (rc != 0)
		goto fail;
	rc = topo__plan_segments_fit(p, nseg, (int64_t)seg, (int64_t)f.cnt + 1,
				     0, FLOOD_MAX_MESSAGES, err);
	if (rc == 0)
		rc = flood_emit(p, &f, dd, nd, has_dup, (int64_t)seg, nseg,
				err);
	goto done;
fail:
	rc = topo__err(err, rc, NULL, NULL,
		       "out of memory planning bcast flood over %d members",
		       (int)p->n);
done:
	topo__populate_wait(&f.populate);
	topo__free(f.src);
	topo__free(f.dst);
	topo__free(f.wait);
	topo__free(f.first);
	topo__free(f.scratch);
	topo__free(dd);
	topo__free(has_dup);
	return rc;
}
