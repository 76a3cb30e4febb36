/*
 * local.c - one member's part of a plan (exec_internal.h,
 * topo__plan_local): the messages it sends, receives or runs itself and
 * the dependencies among them that it waits on, built from a tree view
 * (tree/tview.c) in time and memory that follow its degree, the tree's
 * depth and the segments, not the group's size.  A process of an MPI job
 * of a million ranks needs no more than that: its two-sided schedule
 * (run/sched.c) of the part is its schedule of the whole plan.
 *
 * The algorithms are those of coll/: bcast flood (coll/bcast/flood.c),
 * reduce tree and hierarchical (coll/reduce/tree.c), allreduce tree and
 * hierarchical (coll/allreduce/tree.c), over the hierarchical tree,
 * binomial trees and chains, each member on a process of its own.  The
 * part is the whole plan's, message for message, in the same order for
 * each pair of members (so that the wire numbers agree), with the same
 * buffers, offsets and lengths, the same dependencies where this member
 * waits, the same chains of combines (plan/order.c: a REDUCE from member
 * c is at level 1 + c's height, so a member's combines go by their
 * senders' heights, then ranks) and a bcast's forwards in the same order
 * (longest flood first, ranks among equals).  tests/unit/test_local.c
 * checks that against the whole plans' schedules.
 *
 * What differs is what the member cannot see: no receipt counters (slot
 * -1: an MPI run keeps none), and buffer sizes exact only for the member
 * itself (the others' are the largest any has, for the bounds checks).
 */
#define TOPO_INTERNAL
#include "plan/plan.h"

#include <stdlib.h>
#include <string.h>

struct part {
	struct topo_plan *p;
	const struct topo__tview *tv;
	int32_t r, R, L; /* this member, the tree's root, the logical one */
	int32_t *scratch;
	/* the links of the member's chains of combines, {before, after} */
	int64_t (*link)[2];
	int64_t nlink, linkcap;
	topo_error *err;
};

static int nomem(struct part *x)
{
	return topo__err(x->err, TOPO_ENOMEM, NULL, NULL,
			 "out of memory planning member %d's part of %s",
			 (int)x->r, topo_op_name(x->p->params.op));
}

/* v's children, into a new array (*out, freed by the caller). */
static int children(struct part *x, int32_t v, int32_t **out, int32_t *n)
{
	*n = topo__tview_children(x->tv, v, NULL);
	*out = topo__mallocarray((size_t)*n + 1, sizeof(int32_t));
	if (*out == NULL)
		return nomem(x);
	topo__tview_children(x->tv, v, *out);
	return 0;
}

static int msg(struct part *x, int32_t src, int32_t dst, int kind, int sbuf,
	       int dbuf, int64_t off, int64_t len, int64_t *id)
{
	struct topo__msg m;

	memset(&m, 0, sizeof(m));
	m.src = src;
	m.dst = dst;
	m.kind = (uint8_t)kind;
	m.sbuf = (uint8_t)sbuf;
	m.dbuf = (uint8_t)dbuf;
	m.soff = m.doff = off;
	m.len = len;
	m.slot = -1;
	return topo__plan_msg(x->p, &m, id, x->err);
}

/* ---------------------------------------------------------------------- */
/* Reduce and allreduce: up the tree, and for allreduce back down */

struct up {
	int32_t src, key; /* sender, its height (the chain's order) */
	int64_t id;
};

static int up_cmp(const void *a, const void *b)
{
	const struct up *u = a, *v = b;

	return (u->src > v->src) - (u->src < v->src);
}

static int chain_cmp(const void *a, const void *b)
{
	const struct up *u = a, *v = b;

	if (u->key != v->key)
		return u->key < v->key ? -1 : 1;
	return (u->src > v->src) - (u->src < v->src);
}

/* A reduction's part at member r: its parent, its children (ch, nc), the
 * REDUCEs into it and its own up, by sender (ups, nup), the chain of its
 * combines of a segment (chain), the logical root L, and segments of seg
 * bytes of B. */
struct red {
	struct part *x;
	bool all, chains;
	int32_t par, nc, L;
	int32_t *ch;
	struct up *ups, *chain;
	int64_t nup, B, seg;
};

/* The buffers: every member's SEND; RECV at the logical root (every
 * member for allreduce); WORK at a member with children, but the tree
 * root when it is the logical root.  The others' sizes are the largest
 * (bounds); this member's its own. */
static int red_buffers(struct red *y)
{
	struct part *x = y->x;
	struct topo_plan *p = x->p;
	int32_t r = x->r, R = x->R;
	int rc;

	rc = topo__plan_bufsize_all(p, TOPO__SEND, y->B, x->err);
	if (rc == 0)
		rc = topo__plan_bufsize_all(p, TOPO__RECV, y->B, x->err);
	if (rc == 0)
		rc = topo__plan_bufsize_all(p, TOPO__WORK, y->B, x->err);
	if (rc == 0 && !y->all && r != y->L)
		rc = topo__plan_bufsize(p, TOPO__RECV, r, 0, x->err);
	if (rc == 0 && (y->nc == 0 || (r == R && (y->all || y->L == R))))
		rc = topo__plan_bufsize(p, TOPO__WORK, r, 0, x->err);
	return rc;
}

/* allreduce: the root's result is final (join), then down the tree: r's
 * copy from its parent, then r's to its children. */
static int red_down(struct red *y, int64_t off, int64_t len, int64_t init)
{
	struct part *x = y->x;
	struct topo_plan *p = x->p;
	int32_t r = x->r, R = x->R;
	int64_t join = -1;
	int rc;

	if (r == R) {
		rc = msg(x, R, R, TOPO__COPY, TOPO__RECV, TOPO__RECV, off, 0,
			 &join);
		if (rc == 0)
			rc = topo__plan_dep(p, init, join, x->err);
		for (int64_t i = 0; rc == 0 && i < y->nup; i++)
			rc = topo__plan_dep(p, y->ups[i].id, join, x->err);
	} else {
		rc = msg(x, y->par, r, TOPO__COPY, TOPO__RECV, TOPO__RECV, off,
			 len, &join);
	}
	for (int32_t i = 0; rc == 0 && i < y->nc; i++) {
		int64_t d;

		rc = msg(x, r, y->ch[i], TOPO__COPY, TOPO__RECV, TOPO__RECV,
			 off, len, &d);
		if (rc == 0)
			rc = topo__plan_dep(p, join, d, x->err);
	}
	return rc;
}

/* The chain of r's combines of a segment: by their senders' heights
 * (plan/order.c), in the floating types. */
static void red_chain(struct red *y, int64_t nchain)
{
	struct part *x = y->x;

	if (!y->chains || nchain <= 1)
		return;
	qsort(y->chain, (size_t)nchain, sizeof(*y->chain), chain_cmp);
	for (int64_t i = 0; i + 1 < nchain; i++) {
		x->link[x->nlink][0] = y->chain[i].id;
		x->link[x->nlink++][1] = y->chain[i + 1].id;
	}
}

/* Segment k: r's accumulator, every REDUCE touching r, the forward to a
 * logical root other than the tree's, and for allreduce the way down. */
static int red_segment(struct red *y, int64_t k)
{
	struct part *x = y->x;
	struct topo_plan *p = x->p;
	int32_t r = x->r, R = x->R, L = y->L, par = y->par;
	int64_t off = k * y->seg,
		len = y->B - off < y->seg ? y->B - off : y->seg;
	int64_t init = -1, self_up = -1, fwd = -1, nchain = 0;
	int acc = r == R && L == R ? TOPO__RECV : TOPO__WORK;
	int rc = 0;

	/* init: the accumulator starts as r's own contribution */
	if (y->nc > 0 || r == R)
		rc = msg(x, r, r, TOPO__COPY, TOPO__SEND, acc, off, len, &init);
	/* every REDUCE touching r, in the order of their senders */
	for (int64_t i = 0; rc == 0 && i < y->nup; i++) {
		int32_t v = y->ups[i].src;

		if (v == r) {
			int32_t pacc =
			    par == R && L == R ? TOPO__RECV : TOPO__WORK;

			rc = msg(x, r, par, TOPO__REDUCE,
				 y->nc > 0 ? TOPO__WORK : TOPO__SEND, pacc, off,
				 len, &self_up);
		} else {
			bool has = topo__tview_children(x->tv, v, NULL) > 0;

			rc = msg(x, v, r, TOPO__REDUCE,
				 has ? TOPO__WORK : TOPO__SEND, acc, off, len,
				 &y->ups[i].id);
			if (rc == 0)
				y->chain[nchain++] = y->ups[i];
		}
	}
	/* r waits for its children before it sends up; each child's REDUCE
	 * waits for r's copy */
	for (int64_t i = 0; rc == 0 && i < y->nup; i++) {
		if (y->ups[i].src == r)
			continue;
		rc = topo__plan_dep(p, init, y->ups[i].id, x->err);
		if (rc == 0 && self_up >= 0)
			rc = topo__plan_dep(p, y->ups[i].id, self_up, x->err);
	}
	/* reduce: a logical root other than the tree's gets the result */
	if (rc == 0 && !y->all && L != R && (r == R || r == L)) {
		rc = msg(x, R, L, TOPO__COPY, TOPO__WORK, TOPO__RECV, off, len,
			 &fwd);
		if (rc == 0 && r == R)
			rc = topo__plan_dep(p, init, fwd, x->err);
		for (int64_t i = 0; rc == 0 && r == R && i < y->nup; i++)
			rc = topo__plan_dep(p, y->ups[i].id, fwd, x->err);
	}
	if (rc == 0)
		red_chain(y, nchain);
	if (!y->all || p->n == 1 || rc != 0)
		return rc;
	return red_down(y, off, len, init);
}

static int plan_tree_reduction(struct part *x, bool all)
{
	struct topo_plan *p = x->p;
	const struct topo__tview *tv = x->tv;
	struct red y = {.x = x, .all = all};
	int64_t nseg;
	int rc;

	y.L = all ? x->R : x->L;
	y.B = (int64_t)p->params.bytes;
	y.chains = topo__plan_orders(p);
	rc = topo__plan_segment(p, y.B, TOPO__AUTO_SEGMENT_MIN,
				topo__auto_segment_for(p->params.op, p->n,
						       p->params.bytes,
						       p->one_node),
				&y.seg, &nseg, x->err);
	if (rc != 0)
		return rc;
	y.par = topo__tview_parent(tv, x->r);
	rc = children(x, x->r, &y.ch, &y.nc);
	if (rc != 0)
		goto done;
	rc = red_buffers(&y);
	y.ups = topo__mallocarray((size_t)y.nc + 2, sizeof(*y.ups));
	y.chain = topo__mallocarray((size_t)y.nc + 2, sizeof(*y.chain));
	x->linkcap = y.chains ? nseg * (int64_t)y.nc : 0;
	x->link = topo__mallocarray((size_t)x->linkcap + 1, sizeof(*x->link));
	if (rc == 0 && (y.ups == NULL || y.chain == NULL || x->link == NULL))
		rc = nomem(x);
	/* The senders into r, their heights (for the chain) and whether
	 * each accumulates (has children) */
	for (int32_t i = 0; rc == 0 && i < y.nc; i++) {
		y.ups[y.nup].src = y.ch[i];
		y.ups[y.nup].key = topo__tview_height(tv, y.ch[i], x->scratch);
		y.nup++;
	}
	if (rc == 0 && y.par >= 0) {
		y.ups[y.nup].src = x->r;
		y.ups[y.nup].key = -1;
		y.nup++;
	}
	if (rc == 0)
		qsort(y.ups, (size_t)y.nup, sizeof(*y.ups), up_cmp);
	for (int64_t k = 0; rc == 0 && k < nseg; k++)
		rc = red_segment(&y, k);
done:
	topo__free(y.ch);
	topo__free(y.ups);
	topo__free(y.chain);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Bcast flood */

/* The flood time of the tree without c's side, flooding from v (c a
 * neighbour of v): what a forward from c to v starts. */
static int32_t time_without(struct part *x, int32_t v, int32_t c, int *rc)
{
	const struct topo__tview *tv = x->tv;
	int32_t par = topo__tview_parent(tv, v), *ch = NULL, n = 0, m = 0, t = 0;
	int32_t *ts;

	if (children(x, v, &ch, &n) != 0) {
		*rc = TOPO_ENOMEM;
		return 0;
	}
	ts = topo__mallocarray((size_t)n + 2, sizeof(int32_t));
	if (ts == NULL) {
		topo__free(ch);
		*rc = nomem(x);
		return 0;
	}
	if (par >= 0 && par != c)
		ts[m++] = time_without(x, par, v, rc);
	for (int32_t i = 0; i < n; i++)
		if (ch[i] != c)
			ts[m++] = topo__tview_time(tv, ch[i], x->scratch);
	/* longest first */
	for (int32_t i = 1; i < m; i++)
		for (int32_t j = i; j > 0 && ts[j] > ts[j - 1]; j--) {
			int32_t s = ts[j];

			ts[j] = ts[j - 1];
			ts[j - 1] = s;
		}
	for (int32_t i = 0; i < m; i++)
		if (i + 1 + ts[i] > t)
			t = i + 1 + ts[i];
	topo__free(ch);
	topo__free(ts);
	return t;
}

struct fwd {
	int32_t dst, key;
};

static int fwd_cmp(const void *a, const void *b)
{
	const struct fwd *u = a, *v = b;

	/* the longest flood first; ranks (the route row's order) among
	 * equals */
	if (u->key != v->key)
		return u->key > v->key ? -1 : 1;
	return (u->dst > v->dst) - (u->dst < v->dst);
}

static int plan_flood(struct part *x)
{
	struct topo_plan *p = x->p;
	const struct topo__tview *tv = x->tv;
	int32_t r = x->r, L = x->L, par = topo__tview_parent(tv, r), from = -1;
	int32_t *ch = NULL, nc = 0, nf = 0;
	struct fwd *f = NULL;
	int64_t B = (int64_t)p->params.bytes, seg, nseg;
	int rc;

	seg = (int64_t)p->params.segment;
	if (seg == 0)
		seg = B >= TOPO__AUTO_SEGMENT_MIN
			  ? topo__auto_segment_for(p->params.op, p->n,
						   p->params.bytes, p->one_node)
			  : B;
	if (seg > B)
		seg = B;
	nseg = B == 0 ? 1 : (B + seg - 1) / seg;
	rc = children(x, r, &ch, &nc);
	if (rc != 0)
		return rc;
	f = topo__mallocarray((size_t)nc + 2, sizeof(*f));
	if (f == NULL) {
		rc = nomem(x);
		goto done;
	}
	/* Where the bcast comes from: the neighbour towards L. */
	if (r != L) {
		from = par;
		for (int32_t i = 0; i < nc; i++)
			if (topo__tview_below(tv, ch[i], L))
				from = ch[i];
	}
	/* The forwards: every neighbour but that one, the longest flood
	 * first. */
	for (int32_t i = 0; i < nc && rc == 0; i++)
		if (ch[i] != from)
			f[nf++] = (struct fwd){
			    ch[i], topo__tview_time(tv, ch[i], x->scratch) + 1};
	if (par >= 0 && par != from)
		f[nf++] = (struct fwd){par, time_without(x, par, r, &rc) + 1};
	if (rc != 0)
		goto done;
	qsort(f, (size_t)nf, sizeof(*f), fwd_cmp);
	/* Buffers: the root's SEND, everyone's RECV. */
	rc = topo__plan_bufsize_all(p, TOPO__SEND, B, x->err);
	if (rc == 0 && r != L)
		rc = topo__plan_bufsize(p, TOPO__SEND, r, 0, x->err);
	if (rc == 0)
		rc = topo__plan_bufsize_all(p, TOPO__RECV, B, x->err);
	for (int64_t k = 0; rc == 0 && k < nseg; k++) {
		int64_t off = k * seg, len = B - off < seg ? B - off : seg,
			in = -1, id;

		if (r == L)
			rc = msg(x, L, L, TOPO__COPY, TOPO__SEND, TOPO__RECV,
				 off, len, &id);
		else
			rc = msg(x, from, r, TOPO__COPY,
				 from == L ? TOPO__SEND : TOPO__RECV,
				 TOPO__RECV, off, len, &in);
		for (int32_t i = 0; rc == 0 && i < nf; i++) {
			rc = msg(x, r, f[i].dst, TOPO__COPY,
				 r == L ? TOPO__SEND : TOPO__RECV, TOPO__RECV,
				 off, len, &id);
			if (rc == 0 && in >= 0)
				rc = topo__plan_dep(p, in, id, x->err);
		}
	}
done:
	topo__free(ch);
	topo__free(f);
	return rc;
}

/* ---------------------------------------------------------------------- */

int topo__plan_local(topo_plan **out, const struct topo__tview *tv,
		     const struct topo_plan_params *params, int32_t root,
		     int32_t r, bool one_node, topo_error *err)
{
	struct topo_plan_params q;
	struct topo_plan *p = NULL;
	struct part x;
	const struct topo__algorithm *a;
	const char *alg;
	int rc;

	*out = NULL;
	rc = topo__plan_params_read(&q, params, err);
	if (rc != 0)
		return rc;
	/* The algorithms with a part (registry.h's PART); one that needs the
	 * hierarchical tree has one over that tree only. */
	a = q.algorithm == NULL ? topo__algorithm_default(q.op, false)
				: topo__algorithm_find(q.op, q.algorithm);
	alg = a != NULL ? a->name : q.algorithm != NULL ? q.algorithm : "?";
	if (a == NULL || !(a->flags & TOPO__ALG_PART) ||
	    ((a->flags & TOPO_ALG_HIERARCHICAL) &&
	     tv->shape != TOPO__TV_HIERARCHICAL) ||
	    q.predict_only || r < 0 || r >= tv->n || root >= tv->n)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "no part of a plan of %s %s for member %d",
				 topo_op_name(q.op), alg, (int)r);
	p = topo__calloc(1, sizeof(*p));
	if (p == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	snprintf(p->algorithm, sizeof(p->algorithm), "%s", alg);
	p->params = q;
	p->params.algorithm = p->algorithm;
	p->n = tv->n;
	p->root = root < 0 ? tv->root : root;
	p->type_size = topo_type_size(q.type);
	p->local = true;
	p->one_node = one_node;
	p->mem_rank = r;
	memset(&x, 0, sizeof(x));
	x.p = p;
	x.tv = tv;
	x.r = r;
	x.R = tv->root;
	x.L = p->root;
	x.err = err;
	x.scratch = topo__mallocarray((size_t)topo__tview_scratch(tv) + 1,
				      sizeof(int32_t));
	if (x.scratch == NULL) {
		rc = nomem(&x);
		goto fail;
	}
	if (q.op == TOPO_OP_BCAST)
		rc = plan_flood(&x);
	else
		rc = plan_tree_reduction(&x, q.op == TOPO_OP_ALLREDUCE);
	if (rc == 0)
		rc = topo__plan_finish(p, err);
	/* the chains, once the successor lists are made */
	if (rc == 0 && x.nlink > 0) {
		p->cnext = topo__mallocarray((size_t)p->nmsg + 1,
					     TOPO__ORDER_BYTES);
		if (p->cnext == NULL)
			rc = nomem(&x);
		for (int64_t i = 0; rc == 0 && i < p->nmsg; i++)
			p->cnext[i] = -1;
		for (int64_t i = 0; rc == 0 && i < x.nlink; i++)
			p->cnext[x.link[i][0]] = (int32_t)x.link[i][1];
		if (rc == 0)
			rc = topo__plan_chain_alone(p, err);
	}
	topo__free(x.scratch);
	topo__free(x.link);
	if (rc != 0)
		goto fail_freed;
	*out = p;
	return 0;
fail:
	topo__free(x.scratch);
	topo__free(x.link);
fail_freed:
	topo_plan_free(p);
	return rc;
}
