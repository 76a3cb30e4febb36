/*
 * coll/scatter/or_combine.c - scatter "or-combine" (seed 002): for each slot s of the
 * root's SEND (slot s = the block for rank s, in rank order), every member
 * contributes B bytes, zeros except the root's block s; the contributions
 * are OR-combined up the tree to the tree's root and the result is
 * broadcast back down; member s keeps it, all others discard it.  This is
 * how a machine whose collective network can only combine and broadcast
 * (seed 002's global combining network) scatters.
 *
 * Cost, n members, B bytes per member: n slots of 2(n - 1) transport
 * messages, so 2n(n - 1) messages moving 2n(n - 1)B bytes, against n - 1
 * messages for scatter "tree"; time about n(alpha + B beta) + 2d(alpha +
 * B beta) when the slots pipeline (d: tree depth).  Local steps per slot:
 * one copy per member with children, a join at the tree root, and the
 * root's keep copy in its own slot.  Plans of more than OR_MAX_MESSAGES
 * messages (about 2,400 members) are refused with TOPO_ELIMIT.
 *
 * Data and types.  The transport reduces in the plan's type and op, so
 * this builder sets p->params.type = TOPO_UINT8 and p->params.redop =
 * TOPO_BOR: a byte-wise OR, whatever --type was given (a scatter only
 * moves bytes, so the result is the same; collrun reports the --type the
 * user asked for).  Each member other than the
 * root contributes the B zero bytes of its SEND: topo__pattern_fill (and
 * the verifier) must fill a non-root scatter member's SEND with zeros.
 *
 * Per slot s, with area a = s mod K of every member's WORK (K =
 * OR_WINDOW slots in flight; WORK is K * B bytes):
 *   up    a member with children copies its contribution into WORK[a]
 *         (the root's: block s of SEND); each member REDUCEs (OR) its
 *         WORK[a] -- a leaf its SEND directly -- into its parent's WORK[a]
 *         once its own children's have arrived;
 *   join  a local step of 0 bytes at the tree root that waits for its
 *         children, so the broadcast waits on one message instead of each
 *         of the root's k children waiting on all k contributions (k^2);
 *   down  the tree root sends WORK[a] to its children, each member
 *         forwards what it received to its children; member s receives
 *         into RECV (and forwards from there), everyone else into WORK[a],
 *         where it is discarded (overwritten by a later slot).  The tree
 *         root keeps its own slot with a local copy WORK[a] -> RECV.
 * Slot s + K reuses area a: the first message writing a member's WORK[a]
 * in slot s + K waits for the last ones that used it before (that
 * member's forwards, its up message, or its discarded arrival).  So up to
 * K slots are in flight, slot s + 1 combining while slot s broadcasts.
 *
 * Receipt slots: two per member, up (slot up0 + rank: n times its number
 * of children) and down (slot dn0 + rank: n, 0 at the tree root).
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

#include <string.h>

#define OR_WINDOW 4
#define OR_MAX_MESSAGES ((int64_t)1 << 24)

struct orc {
	struct topo_plan *p;
	const topo_tree *t;
	int32_t n, K, R, L;
	int64_t B, up0, dn0;
	int64_t *init, *up, *dn; /* [n]: this slot's messages, -1 */
	int32_t *bfs;		 /* [n]: the tree breadth-first */
	/* [n * K]: the messages that last used member v's area a, which
	 * the next writer of it waits for: a range and one extra. */
	int64_t *tfirst, *textra;
	int32_t *tcnt;
	int64_t join;
};

static int32_t nchild(const topo_tree *t, int32_t v)
{
	return t->child_off[v + 1] - t->child_off[v];
}

/* Message id waits for everything that last used v's area a. */
static int wait_area(struct orc *o, int32_t v, int32_t a, int64_t id,
		     topo_error *err)
{
	size_t i = (size_t)v * (size_t)o->K + (size_t)a;
	int rc = 0;

	for (int32_t k = 0; rc == 0 && k < o->tcnt[i]; k++)
		rc = topo__plan_dep(o->p, o->tfirst[i] + k, id, err);
	if (rc == 0 && o->textra[i] >= 0)
		rc = topo__plan_dep(o->p, o->textra[i], id, err);
	return rc;
}

static void set_area(struct orc *o, int32_t v, int32_t a, int64_t first,
		     int32_t cnt, int64_t extra)
{
	size_t i = (size_t)v * (size_t)o->K + (size_t)a;

	o->tfirst[i] = first;
	o->tcnt[i] = cnt;
	o->textra[i] = extra;
}

/* The combine towards the tree root, for slot s in area a. */
static int plan_up(struct orc *o, int32_t s, int32_t a, topo_error *err)
{
	const topo_tree *t = o->t;
	struct topo__msg m;
	int rc = 0;

	for (int32_t v = 0; rc == 0 && v < o->n; v++) {
		o->init[v] = -1;
		if (nchild(t, v) == 0)
			continue;
		rc = topo__local_copy(o->p, v, TOPO__SEND,
				      v == o->L ? (int64_t)s * o->B : 0,
				      TOPO__WORK, (int64_t)a * o->B, o->B,
				      &o->init[v], err);
		if (rc == 0)
			rc = wait_area(o, v, a, o->init[v], err);
	}
	topo__msg_init(&m, TOPO__REDUCE, TOPO__SEND, TOPO__WORK, o->B);
	m.doff = (int64_t)a * o->B;
	for (int32_t v = 0; rc == 0 && v < o->n; v++) {
		int32_t pv = t->parent[v];

		o->up[v] = -1;
		if (pv < 0)
			continue;
		m.src = v;
		m.dst = pv;
		if (nchild(t, v) > 0) {
			m.sbuf = TOPO__WORK;
			m.soff = (int64_t)a * o->B;
		} else {
			m.sbuf = TOPO__SEND;
			m.soff = v == o->L ? (int64_t)s * o->B : 0;
		}
		m.slot = o->up0 + pv;
		rc = topo__plan_msg(o->p, &m, &o->up[v], err);
		if (rc == 0)
			rc = topo__plan_dep(o->p, o->init[pv], o->up[v], err);
	}
	for (int32_t v = 0; rc == 0 && v < o->n; v++) {
		int32_t pv = t->parent[v];

		if (pv >= 0 && pv != o->R)
			rc = topo__plan_dep(o->p, o->up[v], o->up[pv], err);
		/* Member s gets its result in RECV: its area's last use in
		 * this slot is its contribution going up. */
		if (v == s && pv >= 0 && nchild(t, v) > 0)
			set_area(o, v, a, o->up[v], 1, -1);
	}
	/* The join: the root's area holds the slot's result. */
	if (rc == 0)
		rc = topo__local_copy(o->p, o->R, TOPO__WORK, (int64_t)a * o->B,
				      TOPO__WORK, (int64_t)a * o->B, 0,
				      &o->join, err);
	for (int32_t k = t->child_off[o->R];
	     rc == 0 && k < t->child_off[o->R + 1]; k++)
		rc = topo__plan_dep(o->p, o->up[t->child[k]], o->join, err);
	return rc;
}

/* The broadcast from the tree root, parents before children. */
static int plan_down(struct orc *o, int32_t s, int32_t a, topo_error *err)
{
	const topo_tree *t = o->t;
	struct topo__msg m;
	int64_t keep = -1;
	int rc = 0;

	topo__msg_init(&m, TOPO__COPY, TOPO__WORK, TOPO__WORK, o->B);
	for (int32_t i = 0; rc == 0 && i < o->n; i++) {
		int32_t v = o->bfs[i], nc = nchild(t, v);
		int64_t first = -1, id;

		if (nc == 0)
			continue;
		m.src = v;
		if (v != o->R && v == s) {
			m.sbuf = TOPO__RECV;
			m.soff = 0;
		} else {
			m.sbuf = TOPO__WORK;
			m.soff = (int64_t)a * o->B;
		}
		for (int32_t k = t->child_off[v];
		     rc == 0 && k < t->child_off[v + 1]; k++) {
			int32_t c = t->child[k];

			m.dst = c;
			m.dbuf = c == s ? TOPO__RECV : TOPO__WORK;
			m.doff = c == s ? 0 : (int64_t)a * o->B;
			m.slot = o->dn0 + c;
			rc = topo__plan_msg(o->p, &m, &id, err);
			if (first < 0)
				first = id;
			o->dn[c] = id;
			if (rc == 0)
				rc = topo__plan_dep(
				    o->p, v == o->R ? o->join : o->dn[v], id,
				    err);
			/* A leaf's discarded arrival is the first and last
			 * use of its area in this slot. */
			if (rc == 0 && c != s && nchild(t, c) == 0) {
				rc = wait_area(o, c, a, id, err);
				set_area(o, c, a, id, 1, -1);
			}
		}
		if (v == o->R || v != s)
			set_area(o, v, a, first, nc, -1);
	}
	if (rc == 0 && o->R == s) {
		rc = topo__local_copy(o->p, o->R, TOPO__WORK,
				      (int64_t)a * o->B, TOPO__RECV, 0, o->B,
				      &keep, err);
		if (rc == 0)
			rc = topo__plan_dep(o->p, o->join, keep, err);
		o->textra[(size_t)o->R * (size_t)o->K + (size_t)a] = keep;
	}
	return rc;
}

/* The working arrays (each member's ids, the breadth-first order, the
 * window's areas): 0 or TOPO_ENOMEM; or_free frees what was made. */
static int or_alloc(struct orc *o, topo_error *err)
{
	size_t nk = (size_t)o->n * (size_t)o->K;

	o->init = topo__mallocarray((size_t)o->n, sizeof(int64_t));
	o->up = topo__mallocarray((size_t)o->n, sizeof(int64_t));
	o->dn = topo__mallocarray((size_t)o->n, sizeof(int64_t));
	o->bfs = topo__mallocarray((size_t)o->n, sizeof(int32_t));
	o->tfirst = topo__mallocarray(nk, sizeof(int64_t));
	o->textra = topo__mallocarray(nk, sizeof(int64_t));
	o->tcnt = topo__calloc(nk, sizeof(int32_t));
	if (o->init == NULL || o->up == NULL || o->dn == NULL ||
	    o->bfs == NULL || o->tfirst == NULL || o->textra == NULL ||
	    o->tcnt == NULL)
		return topo__nomem(err, "scatter or-combine", o->n);
	for (size_t i = 0; i < nk; i++)
		o->textra[i] = -1;
	return 0;
}

static void or_free(struct orc *o)
{
	topo__free(o->init);
	topo__free(o->up);
	topo__free(o->dn);
	topo__free(o->bfs);
	topo__free(o->tfirst);
	topo__free(o->textra);
	topo__free(o->tcnt);
}

/* Buffers (the root's n blocks, everyone's zeros, result, areas), the
 * expected size (total messages; per slot at most two dependencies per
 * member and its pipelining waits) and two counters per member, up0 +
 * rank and dn0 + rank. */
static int or_setup(struct orc *o, int64_t total, topo_error *err)
{
	struct topo_plan *p = o->p;
	int64_t s0;
	int rc = 0;

	for (int32_t v = 0; rc == 0 && v < o->n; v++) {
		rc = topo__plan_bufsize(p, TOPO__SEND, v,
					v == o->L ? (int64_t)o->n * o->B : o->B,
					err);
		if (rc == 0)
			rc = topo__plan_bufsize(p, TOPO__RECV, v, o->B, err);
		if (rc == 0 && o->n > 1)
			rc = topo__plan_bufsize(p, TOPO__WORK, v,
						(int64_t)o->K * o->B, err);
	}
	if (rc == 0)
		rc = topo__plan_expect(p, total, 3 * total, 2 * (int64_t)o->n,
				       err);
	for (int pass = 0; pass < 2; pass++)
		for (int32_t v = 0; rc == 0 && v < o->n; v++) {
			int64_t want = pass == 0
					   ? (int64_t)o->n * nchild(o->t, v)
					   : (v == o->R ? 0 : o->n);

			rc = topo__plan_slot(p, v, (int32_t)want, &s0, err);
			if (rc == 0 && v == 0)
				*(pass == 0 ? &o->up0 : &o->dn0) = s0;
			else if (rc == 0 &&
				 s0 != (pass == 0 ? o->up0 : o->dn0) + v)
				rc = topo__err(err, TOPO_EINVAL, NULL, NULL,
					       "internal error: receipt slots "
					       "are not numbered in order");
		}
	return rc;
}

int topo__plan_scatter_or(struct topo_plan *p, topo_error *err)
{
	const topo_tree *t = p->t;
	struct orc o;
	int64_t internal = 0, total;
	int rc = 0;

	memset(&o, 0, sizeof(o));
	o.p = p;
	o.t = t;
	o.n = p->n;
	o.R = t->root;
	o.L = p->root;
	o.B = (int64_t)p->params.bytes;
	o.K = p->n < OR_WINDOW ? p->n : OR_WINDOW;
	/* A byte-wise OR, whatever the type asked for (see above). */
	p->params.type = TOPO_UINT8;
	p->params.redop = TOPO_BOR;
	p->type_size = 1;

	for (int32_t v = 0; v < o.n; v++)
		internal += nchild(t, v) > 0;
	total = (int64_t)o.n * (internal + 2 * ((int64_t)o.n - 1) + 1) + 1;
	if (total > OR_MAX_MESSAGES)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "scatter or-combine over %d members needs "
				 "%lld messages (2n(n-1) = %lld between "
				 "members); at most %lld are planned: use "
				 "scatter \"tree\"",
				 (int)o.n, (long long)total,
				 2 * (long long)o.n * (o.n - 1),
				 (long long)OR_MAX_MESSAGES);
	if (p->params.bytes > (size_t)INT64_MAX / (size_t)o.n)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "scatter: %d blocks of %zu bytes do not fit "
				 "in a 64-bit size",
				 (int)o.n, p->params.bytes);
	rc = or_alloc(&o, err);
	if (rc == 0) {
		topo__pattern_bfs(o.n, o.R, t->child_off, t->child, o.bfs);
		rc = or_setup(&o, total, err);
	}
	if (rc == 0 && o.n == 1) {
		/* One member: its slot is its own block. */
		rc = topo__local_copy(p, 0, TOPO__SEND, 0, TOPO__RECV, 0, o.B,
				      NULL, err);
		goto done;
	}
	for (int32_t s = 0; rc == 0 && s < o.n; s++) {
		rc = plan_up(&o, s, s % o.K, err);
		if (rc == 0)
			rc = plan_down(&o, s, s % o.K, err);
	}
done:
	or_free(&o);
	return rc;
}
