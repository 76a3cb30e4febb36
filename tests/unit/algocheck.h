/*
 * algocheck.h - the harness shared by the collectives' tests (test_algos.c,
 * test_colls.c, test_allreduce.c and the other test_OP.c): an
 * independent check of collective plans.
 *
 * Machines, groups and trees through the public API (exit 2 on a setup
 * error); a reference reduction and the test's own inputs (independent of
 * redop.c and verify.c); a sequential executor that replays a plan in a
 * topological order of its DAG (first ready first, last ready first, or
 * random) with plain memmove and the reference reduction over test-owned
 * buffers; a race checker (two messages touching the same bytes of one
 * member's buffer, one of them writing, must be ordered by the DAG; two
 * REDUCEs excepted: the transport serialises them); and what every member
 * must end with, computed from the operation's definition alone.
 *
 * Every function is static inline: each test uses what it needs.  Include
 * after defining TOPO_INTERNAL.
 */
#ifndef ALGOCHECK_H
#define ALGOCHECK_H

#include "exec_internal.h"

#include "check.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Machines, groups, trees */

static inline topo_machine *machine(int32_t nodes, const int32_t *tasks,
				    int32_t eps, const int32_t *parent)
{
	topo_machine *m = NULL;
	topo_error err;

	topo_error_clear(&err);
	if (topo__machine_build(&m, "test", nodes, tasks, eps, "tree", parent,
				&err) != 0) {
		fprintf(stderr, "machine_build: %s\n", err.text);
		exit(2);
	}
	return m;
}

static inline topo_group *group(const topo_machine *m, const char *spec)
{
	topo_group *g = NULL;
	topo_error err;

	topo_error_clear(&err);
	if (topo_group_new(&g, m, spec, spec, &err) != 0) {
		fprintf(stderr, "group \"%s\": %s\n", spec, err.text);
		exit(2);
	}
	return g;
}

static inline topo_tree *tree(const topo_group *g, const char *shape)
{
	topo_tree *t = NULL;
	topo_error err;

	topo_error_clear(&err);
	if (topo_tree_new(&t, g, shape, &err) != 0) {
		fprintf(stderr, "tree %s: %s\n", shape, err.text);
		exit(2);
	}
	return t;
}

/* A tree from a parent array of ranks (no route table: derived). */
static inline topo_tree *tree_of(const topo_group *g, const char *name,
				 const int32_t *parent)
{
	int32_t *par = topo__mallocarray((size_t)g->size, sizeof(int32_t));
	topo_tree *t = NULL;
	int32_t bad;

	memcpy(par, parent, (size_t)g->size * sizeof(int32_t));
	if (topo__tree_from_parent(&t, g, name, par, &bad) != 0) {
		fprintf(stderr, "tree_from_parent: bad %d\n", (int)bad);
		exit(2);
	}
	return t;
}

/* Groups of two uneven machines, each spec with the size it must give:
 * machine 0 has 3, 1, 4, 2 tasks of one endpoint; machine 1 has 2, 5, 1,
 * 3, 2 tasks of two endpoints with the physical root in the middle of the
 * network. */
struct gspec {
	int machine;
	const char *spec;
	int32_t size;
};

static inline void uneven_groups(const struct gspec *specs, size_t n,
				 topo_machine *ms[2], topo_group **gs)
{
	const int32_t ta[4] = {3, 1, 4, 2}, pa[4] = {-1, 0, 0, 1};
	const int32_t tb[5] = {2, 5, 1, 3, 2}, pb[5] = {2, -1, 1, 1, 3};

	ms[0] = machine(4, ta, 1, pa);
	ms[1] = machine(5, tb, 2, pb);
	for (size_t i = 0; i < n; i++) {
		gs[i] = group(ms[specs[i].machine], specs[i].spec);
		CHECK(gs[i]->size == specs[i].size,
		      "group \"%s\" has %d members, want %d", specs[i].spec,
		      (int)gs[i]->size, (int)specs[i].size);
	}
}

static inline void uneven_groups_free(size_t n, topo_machine *ms[2],
				      topo_group **gs)
{
	for (size_t i = 0; i < n; i++)
		topo_group_free(gs[i]);
	topo_machine_free(ms[0]);
	topo_machine_free(ms[1]);
}

/* ---------------------------------------------------------------------- */
/* Small helpers */

/* The smallest k with 2^k >= n. */
static inline int32_t log2_ceil(int32_t n)
{
	int32_t k = 0;

	while (((int64_t)1 << k) < n)
		k++;
	return k;
}

/* The number of dependencies of p. */
static inline int64_t ndeps(const struct topo_plan *p)
{
	return p->succ_off[p->nmsg];
}

/* A report's errors on standard error. */
static inline void dump(const topo_report *r)
{
	for (size_t i = 0; i < topo_report_error_count(r); i++) {
		const char *kind, *detail;
		int32_t ep = topo_report_error(r, i, &kind, &detail);

		fprintf(stderr, "  endpoint %d: %s: %s\n", (int)ep, kind,
			detail);
	}
}

/* Runs p with topo_plan_run (threads, 2 iterations); returns whether it
 * verified.  want_ep >= 0: it must not, and some error naming that
 * endpoint (of kind want_kind, or any kind when NULL) must say so; -1: the
 * first errors are printed; -2: quietly.  label names the case. */
static inline int run_checked(const char *label, const topo_plan *p,
			      int threads, int32_t want_ep,
			      const char *want_kind)
{
	struct topo_run_params rp;
	topo_report *r = NULL;
	topo_error err;
	int rc, ok, named = 0;

	topo_run_params_init(&rp, sizeof(rp));
	rp.threads = threads;
	rp.iterations = 2;
	topo_error_clear(&err);
	rc = topo_plan_run(p, &rp, &r, &err);
	CHECK(rc == 0 && r != NULL, "%s: topo_plan_run: %d: %s", label, rc,
	      err.text);
	if (r == NULL)
		return 0;
	ok = topo_report_verified(r);
	for (size_t i = 0; i < topo_report_error_count(r); i++) {
		const char *kind, *detail;
		int32_t ep = topo_report_error(r, i, &kind, &detail);

		if (ep == want_ep &&
		    (want_kind == NULL || strcmp(kind, want_kind) == 0))
			named = 1;
		if (want_ep == -1 && i < 3)
			fprintf(stderr, "%s: endpoint %d: %s: %s\n", label,
				(int)ep, kind, detail);
	}
	if (want_ep >= 0)
		CHECK(!ok && named,
		      "%s: corrupted plan: verified %d, endpoint %d named "
		      "\"%s\" %d",
		      label, ok, (int)want_ep,
		      want_kind != NULL ? want_kind : "(any)", named);
	topo_report_free(r);
	return ok;
}

/* ---------------------------------------------------------------------- */
/* Reference reduction and inputs (independent of redop.c, verify.c) */

#define RED_LOOP(T, EXPR)                                                      \
	for (size_t i = 0; i + sizeof(T) <= len; i += sizeof(T)) {             \
		T a, b, c;                                                     \
		memcpy(&a, dst + i, sizeof(T));                                \
		memcpy(&b, src + i, sizeof(T));                                \
		c = (T)(EXPR);                                                 \
		memcpy(dst + i, &c, sizeof(T));                                \
	}

#define RED_ARITH(T)                                                           \
	switch (op) {                                                          \
	case TOPO_SUM:                                                         \
		RED_LOOP(T, (a) + (b)) break;                                  \
	case TOPO_PROD:                                                        \
		RED_LOOP(T, (a) * (b)) break;                                  \
	case TOPO_MIN:                                                         \
		RED_LOOP(T, a < b ? a : b) break;                              \
	case TOPO_MAX:                                                         \
		RED_LOOP(T, a > b ? a : b) break;                              \
	default:                                                               \
		break;                                                         \
	}

#define RED_INT(T)                                                             \
	switch (op) {                                                          \
	case TOPO_BAND:                                                        \
		RED_LOOP(T, (a) & (b)) break;                                  \
	case TOPO_BOR:                                                         \
		RED_LOOP(T, (a) | (b)) break;                                  \
	case TOPO_BXOR:                                                        \
		RED_LOOP(T, (a) ^ (b)) break;                                  \
	default:                                                               \
		RED_ARITH(T)                                                   \
	}

static inline void ref_reduce(enum topo_type ty, enum topo_redop op,
			      unsigned char *dst, const unsigned char *src,
			      size_t len)
{
	switch (ty) {
	case TOPO_INT8:
		RED_INT(int8_t) break;
	case TOPO_INT16:
		RED_INT(int16_t) break;
	case TOPO_INT32:
		RED_INT(int32_t) break;
	case TOPO_INT64:
		RED_INT(int64_t) break;
	case TOPO_UINT8:
		RED_INT(uint8_t) break;
	case TOPO_UINT16:
		RED_INT(uint16_t) break;
	case TOPO_UINT32:
		RED_INT(uint32_t) break;
	case TOPO_UINT64:
		RED_INT(uint64_t) break;
	case TOPO_FLOAT:
		RED_ARITH(float) break;
	case TOPO_DOUBLE:
		RED_ARITH(double) break;
	default:
		break;
	}
}

static inline size_t tsize(enum topo_type ty)
{
	static const size_t sz[] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8};

	return sz[ty];
}

/* Element e of member r's reduce input: small values, so that sums and
 * products are exact in every type and in any order. */
static inline double elem_value(enum topo_redop op, int32_t r, size_t e)
{
	switch (op) {
	case TOPO_PROD:
		return (r + e) % 7 == 3 ? 2 : (r + 2 * e) % 5 == 1 ? -1 : 1;
	case TOPO_MIN:
	case TOPO_MAX:
		return (double)((r * 7 + e * 3) % 11) - 5;
	default:
		return (double)((r * 3 + e) % 7) - 3;
	}
}

/* Stores v (or, when use_bits, the low bits of bits) as a ty at at. */
static inline void put_elem(enum topo_type ty, unsigned char *at, double v,
			    uint64_t bits, int use_bits)
{
	switch (ty) {
#define PUT(E, T)                                                              \
	case E: {                                                              \
		T x = use_bits ? (T)bits : (T)v;                               \
		memcpy(at, &x, sizeof(T));                                     \
		break;                                                         \
	}
		PUT(TOPO_INT8, int8_t)
		PUT(TOPO_INT16, int16_t)
		PUT(TOPO_INT32, int32_t)
		PUT(TOPO_INT64, int64_t)
		PUT(TOPO_UINT8, uint8_t)
		PUT(TOPO_UINT16, uint16_t)
		PUT(TOPO_UINT32, uint32_t)
		PUT(TOPO_UINT64, uint64_t)
		PUT(TOPO_FLOAT, float)
		PUT(TOPO_DOUBLE, double)
#undef PUT
	default:
		break;
	}
}

/* Member r's SEND, as this test defines it. */
static inline void fill_send(const struct topo_plan *p, int32_t r,
			     unsigned char *b, size_t len)
{
	enum topo_op op = p->params.op;

	/* reduce, allreduce, reduce-scatter: elements */
	if (topo_op_reduces(op)) {
		enum topo_redop ro = p->params.redop;
		size_t ts = tsize(p->params.type);
		int bitwise =
		    ro == TOPO_BAND || ro == TOPO_BOR || ro == TOPO_BXOR;

		for (size_t e = 0; (e + 1) * ts <= len; e++) {
			uint64_t h = (uint64_t)(r * 37 + e * 11 + 1) *
				     0x9e3779b97f4a7c15ULL;

			if (ro == TOPO_BAND)
				h |= (h >> 7) | (h << 13); /* mostly ones */
			put_elem(p->params.type, b + e * ts,
				 elem_value(ro, r, e), h, bitwise);
		}
		return;
	}
	/* A scatter member other than the root contributes zeros. */
	if (op == TOPO_OP_SCATTER && r != p->root) {
		memset(b, 0, len);
		return;
	}
	for (size_t i = 0; i < len; i++)
		b[i] = (unsigned char)(r * 131 + i * 7 + 1 + i / 251);
}

/* ---------------------------------------------------------------------- */
/* The test's executor */

struct run {
	const struct topo_plan *p;
	unsigned char **buf[TOPO__NBUF]; /* [b][r] */
	int64_t *count;			 /* [nslots] */
	int64_t *stamp;	 /* [nmsg]: message m ran stamp[m]-th, from 0 */
	int64_t done;	 /* messages executed */
	int64_t bad_msg; /* first out-of-bounds message */
};

static inline int64_t bsize(const struct topo_plan *p, int b, int32_t r)
{
	return topo__bufsize(p, b, r);
}

static inline void run_free(struct run *x)
{
	for (int b = 0; b < TOPO__NBUF; b++) {
		for (int32_t r = 0; x->buf[b] != NULL && r < x->p->n; r++)
			free(x->buf[b][r]);
		free(x->buf[b]);
	}
	free(x->count);
	free(x->stamp);
}

static inline int msg_in_bounds(const struct topo_plan *p,
				const struct topo__msg *m)
{
	return m->src >= 0 && m->src < p->n && m->dst >= 0 && m->dst < p->n &&
	       m->sbuf < TOPO__NBUF && m->dbuf < TOPO__NBUF && m->len >= 0 &&
	       m->soff >= 0 && m->doff >= 0 &&
	       m->soff + m->len <= bsize(p, m->sbuf, m->src) &&
	       m->doff + m->len <= bsize(p, m->dbuf, m->dst) && m->slot >= -1 &&
	       m->slot < p->nslots;
}

/*
 * Replays p in a topological order: mode 0 takes the oldest ready message,
 * 1 the newest, 2 a random one.  Returns in x the buffers and counts.
 */
static inline void replay(const struct topo_plan *p, int mode, struct run *x)
{
	int64_t *wait = calloc((size_t)p->nmsg + 1, sizeof(int64_t));
	int64_t *ready = calloc((size_t)p->nmsg + 1, sizeof(int64_t));
	int64_t head = 0, tail = 0;

	memset(x, 0, sizeof(*x));
	x->p = p;
	x->bad_msg = -1;
	x->count = calloc((size_t)p->nslots + 1, sizeof(int64_t));
	x->stamp = malloc(((size_t)p->nmsg + 1) * sizeof(int64_t));
	for (int64_t i = 0; i < p->nmsg; i++)
		x->stamp[i] = -1;
	for (int b = 0; b < TOPO__NBUF; b++) {
		x->buf[b] = calloc((size_t)p->n, sizeof(unsigned char *));
		for (int32_t r = 0; r < p->n; r++) {
			size_t len = (size_t)bsize(p, b, r);

			x->buf[b][r] = malloc(len + 1);
			if (b == TOPO__SEND)
				fill_send(p, r, x->buf[b][r], len);
			else
				memset(x->buf[b][r], TOPO__POISON, len);
		}
	}
	for (int64_t i = 0; i < p->nmsg; i++) {
		wait[i] = p->msg[i].nwait;
		if (wait[i] == 0)
			ready[tail++] = i;
	}
	while (head < tail) {
		int64_t id;
		const struct topo__msg *m;

		if (mode == 1) {
			id = ready[--tail];
		} else {
			int64_t pick =
			    mode == 0 ? head : check_rand_range(head, tail - 1);

			id = ready[pick];
			ready[pick] = ready[head];
			head++;
		}
		m = &p->msg[id];
		x->stamp[id] = x->done++;
		if (!msg_in_bounds(p, m)) {
			if (x->bad_msg < 0)
				x->bad_msg = id;
		} else {
			unsigned char *d = x->buf[m->dbuf][m->dst] + m->doff;
			const unsigned char *s =
			    x->buf[m->sbuf][m->src] + m->soff;

			if (m->kind == TOPO__REDUCE)
				ref_reduce(p->params.type, p->params.redop, d,
					   s, (size_t)m->len);
			else
				memmove(d, s, (size_t)m->len);
			if (m->slot >= 0)
				x->count[m->slot]++;
		}
		for (int64_t k = p->succ_off[id]; k < p->succ_off[id + 1]; k++)
			if (--wait[p->succ[k]] == 0)
				ready[tail++] = p->succ[k];
	}
	free(wait);
	free(ready);
}

/* ---------------------------------------------------------------------- */
/* Races: conflicting accesses must be ordered by the DAG */

/* Ancestors of every message as bitsets, in a topological order: message
 * x is an ancestor of y when bit x of anc[y * words ...] is set.  Returns
 * NULL when the plan has more than max messages (or is cyclic: replay
 * finds that). */
static inline uint64_t *ancestors_max(const struct topo_plan *p, size_t *words,
				      int64_t max)
{
	int64_t n = p->nmsg, head = 0, tail = 0;
	size_t w = (size_t)(n + 63) / 64;
	uint64_t *anc;
	int64_t *wait, *q;

	*words = w;
	if (n > max)
		return NULL;
	anc = calloc((size_t)n * w + 1, sizeof(uint64_t));
	wait = calloc((size_t)n + 1, sizeof(int64_t));
	q = calloc((size_t)n + 1, sizeof(int64_t));
	for (int64_t i = 0; i < n; i++)
		if ((wait[i] = p->msg[i].nwait) == 0)
			q[tail++] = i;
	while (head < tail) {
		int64_t m = q[head++];

		for (int64_t k = p->succ_off[m]; k < p->succ_off[m + 1]; k++) {
			int64_t s = p->succ[k];
			uint64_t *as = anc + (size_t)s * w,
				 *am = anc + (size_t)m * w;

			for (size_t j = 0; j < w; j++)
				as[j] |= am[j];
			as[m / 64] |= 1ULL << (m % 64);
			if (--wait[s] == 0)
				q[tail++] = s;
		}
	}
	free(wait);
	free(q);
	return anc;
}

struct access {
	int64_t msg;
	int32_t member;
	int buf;
	int64_t off, len;
	int write, reduce;
};

static inline int cmp_access(const void *a, const void *b)
{
	const struct access *x = a, *y = b;

	if (x->member != y->member)
		return x->member < y->member ? -1 : 1;
	if (x->buf != y->buf)
		return x->buf < y->buf ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

static inline uint64_t *ancestors(const struct topo_plan *p, size_t *words)
{
	return ancestors_max(p, words, 6000);
}

/* Whether message x is an ancestor of message y. */
static inline int is_ancestor(const uint64_t *anc, size_t w, int64_t x,
			      int64_t y)
{
	return (int)((anc[(size_t)y * w + (size_t)x / 64] >> (x % 64)) & 1);
}

/* Returns the number of unordered conflicting pairs (and the first), or
 * -1 when the plan has more than max messages (not checked). */
static inline int64_t races_max(const struct topo_plan *p, int64_t max,
				int64_t *m1, int64_t *m2)
{
	size_t w;
	uint64_t *anc = ancestors_max(p, &w, max);
	struct access *acc;
	int64_t na = 0, bad = 0;

	*m1 = *m2 = -1;
	if (anc == NULL)
		return -1;
	acc = calloc(2 * (size_t)p->nmsg + 1, sizeof(*acc));
	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		if (m->len == 0)
			continue;
		acc[na++] =
		    (struct access){i, m->src, m->sbuf, m->soff, m->len, 0, 0};
		acc[na++] = (struct access){i,
					    m->dst,
					    m->dbuf,
					    m->doff,
					    m->len,
					    1,
					    m->kind == TOPO__REDUCE};
	}
	qsort(acc, (size_t)na, sizeof(*acc), cmp_access);
	for (int64_t i = 0; i < na; i++)
		for (int64_t j = i + 1; j < na; j++) {
			const struct access *a = &acc[i], *b = &acc[j];
			int64_t x = a->msg, y = b->msg;

			if (b->member != a->member || b->buf != a->buf ||
			    b->off >= a->off + a->len)
				break;
			if (x == y || (!a->write && !b->write) ||
			    (a->reduce && b->reduce))
				continue;
			if ((anc[(size_t)y * w + (size_t)x / 64] >> (x % 64)) &
				1 ||
			    (anc[(size_t)x * w + (size_t)y / 64] >> (y % 64)) &
				1)
				continue;
			if (bad++ == 0) {
				*m1 = x;
				*m2 = y;
			}
		}
	free(acc);
	free(anc);
	return bad;
}

static inline int64_t races(const struct topo_plan *p, int64_t *m1, int64_t *m2)
{
	return races_max(p, 6000, m1, m2);
}

/* The counts a data algorithm's plan keeps whatever its shape: want
 * transport messages, each with a receipt slot and no local step with
 * one, the slots expecting exactly what is sent, and no races. */
static inline void check_counts(const char *label, const struct topo_plan *p,
				int64_t want)
{
	int64_t local = 0, noslot = 0, expect = 0, r1, r2, nr;

	for (int64_t i = 0; i < p->nmsg; i++) {
		const struct topo__msg *m = &p->msg[i];

		local += m->src == m->dst;
		noslot += (m->src == m->dst) != (m->slot < 0);
	}
	for (int64_t s = 0; s < p->nslots; s++)
		expect += p->slot_expect[s];
	CHECK_INT(p->ntransport, p->nmsg - local);
	CHECK(p->ntransport == want, "%s: %lld transport messages, want %lld",
	      label, (long long)p->ntransport, (long long)want);
	CHECK(noslot == 0,
	      "%s: %lld local steps with a slot or transport "
	      "messages without",
	      label, (long long)noslot);
	CHECK(expect == p->ntransport, "%s: slots expect %lld, %lld sent",
	      label, (long long)expect, (long long)p->ntransport);
	nr = races(p, &r1, &r2);
	CHECK(nr <= 0, "%s: %lld races, first between messages %lld and %lld",
	      label, (long long)nr, (long long)r1, (long long)r2);
}

/* The message to corrupt: the last transport message writing a RECV, or
 * else the last transport message; -1 when there is none. */
static inline int64_t last_recv_msg(const struct topo_plan *p)
{
	int64_t any = -1;

	for (int64_t i = p->nmsg - 1; i >= 0; i--) {
		if (p->msg[i].src == p->msg[i].dst)
			continue;
		if (p->msg[i].dbuf == TOPO__RECV)
			return i;
		if (any < 0)
			any = i;
	}
	return any;
}

/* ---------------------------------------------------------------------- */
/* What every member must end with, from the operation's definition */

/* The bytes of RECV each member must hold (B = params.bytes), for the
 * operations where every member holds a result; -1 for the others. */
static inline int64_t recv_need(const struct topo_plan *p)
{
	int64_t B = (int64_t)p->params.bytes;

	switch (p->params.op) {
	case TOPO_OP_ALLREDUCE:
	case TOPO_OP_REDUCE_SCATTER:
		return B;
	case TOPO_OP_ALLGATHER:
	case TOPO_OP_ALLTOALL:
		return B * p->n;
	case TOPO_OP_BARRIER:
		return 0;
	default:
		return -1;
	}
}

/* The first byte where got and want differ. */
static inline size_t first_diff_at(const unsigned char *got,
				   const unsigned char *want, size_t len)
{
	size_t i = 0;

	while (i < len && got[i] == want[i])
		i++;
	return i;
}

/*
 * Returns the first member whose RECV (or SEND) is wrong, or -1; why (of
 * size bytes; may be NULL) says what is wrong: SEND written, RECV too
 * small, or the first wrong byte of RECV and what it should be.
 */
static inline int32_t wrong_member_why(const struct topo_plan *p,
				       const struct run *x, char *why,
				       size_t size)
{
	int32_t n = p->n, L = p->root;
	size_t B = p->params.bytes;
	unsigned char *want = malloc(B * (size_t)n + 1),
		      *tmp = malloc(B * (size_t)n + 1);
	int32_t bad = -1;
	int64_t need = recv_need(p);
	char scratch[200];

	if (why == NULL) {
		why = scratch;
		size = sizeof(scratch);
	}
	why[0] = '\0';
	for (int32_t r = 0; r < n && bad < 0; r++) {
		size_t len = (size_t)bsize(p, TOPO__SEND, r);

		fill_send(p, r, tmp, len);
		if (memcmp(tmp, x->buf[TOPO__SEND][r], len) != 0) {
			bad = r;
			snprintf(
			    why, size, "SEND byte %zu written",
			    first_diff_at(x->buf[TOPO__SEND][r], tmp, len));
		}
	}
	for (int32_t r = 0; r < n && bad < 0 && need >= 0; r++)
		if (bsize(p, TOPO__RECV, r) < need) {
			bad = r;
			snprintf(why, size, "RECV of %lld bytes, needs %lld",
				 (long long)bsize(p, TOPO__RECV, r),
				 (long long)need);
		}
	switch (p->params.op) {
	case TOPO_OP_BCAST:
		fill_send(p, L, want, B);
		for (int32_t r = 0; r < n && bad < 0; r++)
			if (bsize(p, TOPO__RECV, r) != (int64_t)B ||
			    memcmp(want, x->buf[TOPO__RECV][r], B) != 0)
				bad = r;
		break;
	case TOPO_OP_SCATTER:
		fill_send(p, L, want, B * (size_t)n);
		for (int32_t r = 0; r < n && bad < 0; r++)
			if (bsize(p, TOPO__RECV, r) != (int64_t)B ||
			    memcmp(want + (size_t)r * B, x->buf[TOPO__RECV][r],
				   B) != 0)
				bad = r;
		break;
	case TOPO_OP_GATHER:
		for (int32_t r = 0; r < n && bad < 0; r++) {
			fill_send(p, r, tmp, B);
			if (bsize(p, TOPO__RECV, L) !=
				(int64_t)(B * (size_t)n) ||
			    memcmp(tmp, x->buf[TOPO__RECV][L] + (size_t)r * B,
				   B) != 0)
				bad = r;
		}
		break;
	case TOPO_OP_REDUCE:
		/* Directly, in rank order. */
		fill_send(p, 0, want, B);
		for (int32_t r = 1; r < n; r++) {
			fill_send(p, r, tmp, B);
			ref_reduce(p->params.type, p->params.redop, want, tmp,
				   B);
		}
		if (bad < 0 && (bsize(p, TOPO__RECV, L) != (int64_t)B ||
				memcmp(want, x->buf[TOPO__RECV][L], B) != 0))
			bad = L;
		break;
	case TOPO_OP_ALLREDUCE:
	case TOPO_OP_REDUCE_SCATTER: {
		/* The reduction of every member's SEND, in rank order; member
		 * r holds all of it (allreduce) or its block r. */
		size_t len =
		    p->params.op == TOPO_OP_ALLREDUCE ? B : B * (size_t)n;

		fill_send(p, 0, want, len);
		for (int32_t r = 1; r < n; r++) {
			fill_send(p, r, tmp, len);
			ref_reduce(p->params.type, p->params.redop, want, tmp,
				   len);
		}
		for (int32_t r = 0; r < n && bad < 0; r++) {
			const unsigned char *w =
			    want + (p->params.op == TOPO_OP_ALLREDUCE
					? 0
					: (size_t)r * B);
			size_t d = first_diff_at(x->buf[TOPO__RECV][r], w, B);

			if (d < B) {
				bad = r;
				snprintf(why, size,
					 "RECV byte %zu (element %zu) is "
					 "0x%02x, want 0x%02x",
					 d, d / tsize(p->params.type),
					 x->buf[TOPO__RECV][r][d], w[d]);
			}
		}
		break;
	}
	case TOPO_OP_ALLGATHER:
	case TOPO_OP_ALLTOALL:
		/* Block b of member r's RECV: member b's SEND (allgather), or
		 * block r of member b's SEND (alltoall). */
		for (int32_t b = 0; b < n && bad < 0; b++) {
			size_t from = 0;

			if (p->params.op == TOPO_OP_ALLGATHER) {
				fill_send(p, b, want, B);
			} else {
				fill_send(p, b, want, B * (size_t)n);
				from = 1;
			}
			for (int32_t r = 0; r < n && bad < 0; r++) {
				const unsigned char *w = want +
							 from * (size_t)r * B,
						    *got =
							x->buf[TOPO__RECV][r] +
							(size_t)b * B;
				size_t d = first_diff_at(got, w, B);

				if (d < B) {
					bad = r;
					snprintf(why, size,
						 "RECV block %d (from member "
						 "%d) byte %zu is 0x%02x, "
						 "want 0x%02x",
						 (int)b, (int)b, d, got[d],
						 w[d]);
				}
			}
		}
		break;
	default: /* barrier: no data */
		break;
	}
	free(want);
	free(tmp);
	return bad;
}

/* Returns the first member whose RECV (or SEND) is wrong, or -1. */
static inline int32_t wrong_member(const struct topo_plan *p,
				   const struct run *x)
{
	return wrong_member_why(p, x, NULL, 0);
}

/* Sum over slots of member r of their expectations. */
static inline int64_t expected_at(const struct topo_plan *p, int32_t r)
{
	int64_t e = 0;

	for (int64_t s = 0; s < p->nslots; s++)
		if (p->slot_member[s] == r)
			e += p->slot_expect[s];
	return e;
}

static inline int64_t transport_bytes(const struct topo_plan *p)
{
	int64_t b = 0;

	for (int64_t i = 0; i < p->nmsg; i++)
		if (p->msg[i].src != p->msg[i].dst)
			b += p->msg[i].len;
	return b;
}

#endif /* ALGOCHECK_H */
