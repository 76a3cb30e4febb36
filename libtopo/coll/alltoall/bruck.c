/*
 * coll/alltoall/bruck.c - alltoall "bruck" (Bruck, Ho, Kipnis, Upfal and
 * Weathersby, "Efficient algorithms for all-to-all communications in
 * multiport message-passing systems", IEEE TPDS 8(11), 1997; MPICH's
 * MPIR_Alltoall_intra_brucks): K = ceil(log2 n) steps for any n, each
 * block travelling by the binary digits of its distance.
 *
 * The algorithm, member r (indices mod n):
 *   1. rotation: position i (0 <= i < n) of its array holds its SEND block
 *      r + i, the block for the member i further on;
 *   2. step k (0 <= k < K): the blocks at the positions i whose bit k is
 *      set go to member r + 2^k, into the same positions of its array;
 *      after all steps position i holds the block member r - i sent to r;
 *   3. inverse rotation: RECV block j is position r - j.
 *
 * One-sided, the step cannot write straight into the destination's
 * positions: member r + 2^k still has to send the same positions on to
 * r + 2^(k+1), and so on around the ring, so each write would wait for
 * the next member's send and the waits would close a cycle.  A real
 * implementation breaks it with a send buffer; so does this plan, as
 * MPICH packs into one: one message per step, packed.
 *   - pack: the positions with bit k set are runs of 2^k consecutive
 *     positions starting at the odd multiples of 2^k (the last one maybe
 *     shorter); each run is copied locally into OUT, back to back.
 *   - send: OUT (c_k blocks) to member r + 2^k's IN.
 *   - unpack: the receiver copies each run from its IN into its own
 *     positions of the run.
 * Position 0 (the own block) never moves: a local copy SEND -> RECV.
 *
 * Cost, n members, B bytes per block, c_k = the number of i < n with bit
 * k set (n/2 for n a power of two): nK transport messages, member r's
 * step k one of c_k B bytes, n(sum of c_k)B bytes in all (nK(n/2)B for
 * n a power of two, against n(n - 1)B for pairwise and direct); time
 * about K alpha + (sum of c_k)B beta.  Local copies per member: the own
 * block, the rotation (1 or 2: one for ranks 0 and n - 1), n - 1 pack and
 * n - 1 unpack runs (each position i >= 1 starts exactly one run: at the
 * step of its lowest set bit) and n - 1 blocks of the inverse rotation (a
 * reversal: one copy per block, as MPICH's).  Messages in all:
 * n(3(n - 1) + K + 1) + 2(n - 1).
 *
 * Buffers: SEND (nB), RECV (nB), and for n > 1 WORK of (n - 1 + 2c)B
 * bytes, c the largest c_k: positions 1 .. n - 1 at (i - 1)B, then OUT
 * (cB), then IN (cB).  OUT and IN serve every step.
 *
 * Dependencies (member r, d = r + 2^k, s = r - 2^k), so that every pair
 * of accesses to the same bytes is ordered:
 *   - pack of the run at b (its positions b .. b + 2^k - 1): the last
 *     writes of those positions (the rotation piece that holds b, whose
 *     bits below k are clear, and for each j < k the unpack of step j at
 *     b + 2^j, the positions whose highest bit below k is j), and r's
 *     step k - 1 send, which read OUT before it is overwritten;
 *   - send: r's step k packs; d's step k - 1 unpacks, which read d's IN
 *     before it is overwritten;
 *   - unpack of a run: s's step k send into IN, and r's own pack of the
 *     same run, which read the positions before they are overwritten;
 *   - inverse rotation of position i: the unpack at the step of i's
 *     highest bit, its last write.
 * Everything else is ordered through these (each position is read only
 * by the pack of the step of its next set bit between two writes).
 * Every dependency points to an earlier message (steps are built in
 * order), so the plan is acyclic by construction.
 *
 * Receipt slots: one per member (slot0 + rank), expecting K (one
 * message into its IN at every step); the local copies name none.
 */
#define TOPO_INTERNAL
#include "coll_pattern.h"
#include "plan/plan.h"

#include <string.h>

/* More messages than this is refused (plan.c's limit too). */
#define BRUCK_MAX_MESSAGES ((int64_t)1 << 30)

/* The message ids of the plan, computed: every phase builds the same
 * number of messages for each member, in member order. */
struct ids {
	int32_t n;
	int64_t self, rot_a, rot_b;
	int64_t runs[32], pack[32], send[32], unpack[32], fin;
};

/* The rotation piece that wrote position i of member r (i >= 1): A holds
 * positions 1 .. n - r - 1 (ranks 0 .. n - 2), B the rest (ranks >= 1). */
static int64_t rot_id(const struct ids *x, int32_t r, int64_t i)
{
	return i < x->n - r ? x->rot_a + r : x->rot_b + r - 1;
}

static int64_t pack_id(const struct ids *x, int k, int32_t r, int64_t m)
{
	return x->pack[k] + (int64_t)r * x->runs[k] + m;
}

static int64_t unpack_id(const struct ids *x, int k, int32_t r, int64_t m)
{
	return x->unpack[k] + (int64_t)r * x->runs[k] + m;
}

/* Highest set bit of i > 0. */
static int high_bit(int64_t i)
{
	return 63 - __builtin_clzll((unsigned long long)i);
}

/* Step k's messages: packs, sends, unpacks, of every member. */
static int emit_step(struct topo_plan *p, const struct ids *x, int k,
		     int64_t cnt, int64_t in_off, int64_t slot0,
		     topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes, h = (int64_t)1 << k;
	int64_t out_off = (int64_t)(n - 1) * B, id;
	struct topo__msg m;
	int rc = 0;

	/* Packs: run q at b = 2hq + h, of min(h, n - b) positions, to OUT at
	 * hq blocks. */
	for (int32_t r = 0; rc == 0 && r < n; r++)
		for (int64_t q = 0; rc == 0 && q < x->runs[k]; q++) {
			int64_t b = 2 * h * q + h, len = n - b < h ? n - b : h;

			rc = topo__local_copy(p, r, TOPO__WORK, (b - 1) * B,
					      TOPO__WORK, out_off + h * q * B,
					      len * B, &id, err);
			if (rc == 0)
				rc =
				    topo__plan_dep(p, rot_id(x, r, b), id, err);
			for (int j = 0;
			     rc == 0 && j < k && ((int64_t)1 << j) < len; j++)
				rc = topo__plan_dep(
				    p,
				    unpack_id(x, j, r,
					      (b + ((int64_t)1 << j)) >>
						  (j + 1)),
				    id, err);
			if (rc == 0 && k > 0)
				rc = topo__plan_dep(p, x->send[k - 1] + r, id,
						    err);
		}
	/* Sends: OUT to member r + h's IN. */
	topo__msg_init(&m, TOPO__COPY, TOPO__WORK, TOPO__WORK, cnt * B);
	m.soff = out_off;
	m.doff = in_off;
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		int32_t d = (int32_t)((r + h) % n);

		m.src = r;
		m.dst = d;
		m.slot = slot0 + d;
		rc = topo__plan_msg(p, &m, &id, err);
		for (int64_t q = 0; rc == 0 && q < x->runs[k]; q++)
			rc = topo__plan_dep(p, pack_id(x, k, r, q), id, err);
		for (int64_t q = 0; rc == 0 && k > 0 && q < x->runs[k - 1]; q++)
			rc = topo__plan_dep(p, unpack_id(x, k - 1, d, q), id,
					    err);
	}
	/* Unpacks: IN back into the run's positions. */
	for (int32_t r = 0; rc == 0 && r < n; r++) {
		int32_t s = (int32_t)((r - h % n + n) % n);

		for (int64_t q = 0; rc == 0 && q < x->runs[k]; q++) {
			int64_t b = 2 * h * q + h, len = n - b < h ? n - b : h;

			rc = topo__local_copy(p, r, TOPO__WORK,
					      in_off + h * q * B, TOPO__WORK,
					      (b - 1) * B, len * B, &id, err);
			if (rc == 0)
				rc = topo__plan_dep(p, x->send[k] + s, id, err);
			if (rc == 0)
				rc = topo__plan_dep(p, pack_id(x, k, r, q), id,
						    err);
		}
	}
	return rc;
}

/* The pattern's arithmetic for n members and K steps: cnt[k] the blocks
 * a member sends at step k, x->runs[k] the runs it packs, *maxcnt the
 * largest cnt[k]; returns the dependencies of one member's messages. */
static int64_t count_steps(int32_t n, int K, struct ids *x, int64_t *cnt,
			   int64_t *maxcnt)
{
	int64_t deps_per = 0;

	*maxcnt = 0;
	for (int k = 0; k < K; k++) {
		int64_t h = (int64_t)1 << k, rem = n % (2 * h);

		cnt[k] = (n / (2 * h)) * h + (rem > h ? rem - h : 0);
		x->runs[k] = (n - h + 2 * h - 1) / (2 * h);
		if (cnt[k] > *maxcnt)
			*maxcnt = cnt[k];
		/* Dependencies of member r's step k: each pack waits for
		 * its rotation piece, the unpacks below it and the last
		 * send; the send for its packs and the receiver's last
		 * unpacks; each unpack for a send and a pack. */
		for (int64_t q = 0; q < x->runs[k]; q++) {
			int64_t b = 2 * h * q + h, len = n - b < h ? n - b : h;

			deps_per += 1 + (k > 0);
			for (int j = 0; j < k && ((int64_t)1 << j) < len; j++)
				deps_per++;
		}
		deps_per += 3 * x->runs[k] + (k > 0 ? x->runs[k - 1] : 0);
	}
	return deps_per + n - 1; /* the inverse rotation */
}

/* The ids every phase will have, from the plan's next id on. */
static void number_ids(struct ids *x, int K, int64_t first)
{
	int32_t n = x->n;
	int64_t next;

	x->self = first;
	x->rot_a = x->self + n;
	x->rot_b = x->rot_a + (n - 1);
	next = x->rot_b + (n - 1);
	for (int k = 0; k < K; k++) {
		x->pack[k] = next;
		x->send[k] = x->pack[k] + (int64_t)n * x->runs[k];
		x->unpack[k] = x->send[k] + n;
		next = x->unpack[k] + (int64_t)n * x->runs[k];
	}
	x->fin = next;
}

/* The own block, SEND -> RECV, then the rotation: positions 1 .. n - r - 1
 * are SEND blocks r + 1 .. n - 1 (piece A), positions n - r .. n - 1
 * blocks 0 .. r - 1 (B). */
static int rotate(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes;
	int rc = 0;

	for (int32_t r = 0; rc == 0 && r < n; r++)
		rc = topo__local_copy(p, r, TOPO__SEND, (int64_t)r * B,
				      TOPO__RECV, (int64_t)r * B, B, NULL, err);
	for (int32_t r = 0; rc == 0 && r < n - 1; r++)
		rc = topo__local_copy(p, r, TOPO__SEND, ((int64_t)r + 1) * B,
				      TOPO__WORK, 0, ((int64_t)n - r - 1) * B,
				      NULL, err);
	for (int32_t r = 1; rc == 0 && r < n; r++)
		rc = topo__local_copy(p, r, TOPO__SEND, 0, TOPO__WORK,
				      ((int64_t)n - r - 1) * B, (int64_t)r * B,
				      NULL, err);
	return rc;
}

/* The inverse rotation: position i to RECV block r - i, after the unpack
 * at the step of i's highest bit. */
static int unrotate(struct topo_plan *p, const struct ids *x, topo_error *err)
{
	int32_t n = p->n;
	int64_t B = (int64_t)p->params.bytes;
	int rc = 0;

	for (int32_t r = 0; rc == 0 && r < n; r++)
		for (int64_t i = 1; rc == 0 && i < n; i++) {
			int j = high_bit(i);
			int64_t id;

			rc = topo__local_copy(p, r, TOPO__WORK, (i - 1) * B,
					      TOPO__RECV, ((r - i + n) % n) * B,
					      B, &id, err);
			if (rc == 0)
				rc = topo__plan_dep(
				    p, unpack_id(x, j, r, i >> (j + 1)), id,
				    err);
		}
	return rc;
}

int topo__plan_alltoall_bruck(struct topo_plan *p, topo_error *err)
{
	int32_t n = p->n;
	int K = 0;
	int64_t B = (int64_t)p->params.bytes, slot0 = -1, maxcnt;
	int64_t cnt[32], msgs, deps_per, work_blocks;
	struct ids x;
	int rc = 0;

	memset(&x, 0, sizeof(x));
	x.n = n;
	while (K < 31 && ((int64_t)1 << K) < n)
		K++;
	deps_per = count_steps(n, K, &x, cnt, &maxcnt);
	/* Per member: the own block, the packs and unpacks (n - 1 each),
	 * K sends and n - 1 inverse rotation copies; the rotation pieces. */
	msgs =
	    (int64_t)n * (3 * ((int64_t)n - 1) + K + 1) + 2 * ((int64_t)n - 1);
	if (msgs > BRUCK_MAX_MESSAGES)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "alltoall bruck over %d members needs %lld "
				 "messages (n(3(n - 1) + K + 1) + 2(n - 1), "
				 "K = %d); at most %lld are planned",
				 (int)n, (long long)msgs, K,
				 (long long)BRUCK_MAX_MESSAGES);
	work_blocks = n > 1 ? (int64_t)n - 1 + 2 * maxcnt : 0;
	if (work_blocks > 0 && B > INT64_MAX / work_blocks)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "alltoall bruck over %d members: a work "
				 "buffer of %lld blocks of %lld bytes is more "
				 "than a buffer can hold",
				 (int)n, (long long)work_blocks, (long long)B);
	rc = topo__bufs_each(p, (int64_t)n * B, (int64_t)n * B,
			     work_blocks * B, err);
	if (rc == 0)
		rc = topo__plan_expect(p, msgs, (int64_t)n * deps_per, n, err);
	if (rc == 0)
		rc = topo__slots_each(p, K, &slot0, err);
	if (rc != 0)
		return rc;
	number_ids(&x, K, p->nmsg);
	rc = rotate(p, err);
	for (int k = 0; rc == 0 && k < K; k++)
		rc = emit_step(p, &x, k, cnt[k], ((int64_t)n - 1 + maxcnt) * B,
			       slot0, err);
	if (rc == 0)
		rc = unrotate(p, &x, err);
	return rc;
}
