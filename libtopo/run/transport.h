/*
 * transport.h - how a message's bytes get from one member to another: the
 * transport interface, the in-process transport, and the run's homes,
 * parts and lanes that it serves.
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_RUN_TRANSPORT_H
#define TOPO_RUN_TRANSPORT_H

#include "plan/plan.h"
#include "run/verify.h"

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

#endif /* TOPO_RUN_TRANSPORT_H */
