/*
 * plan.c - plans: checking what to plan and applying the defaults, the
 * dispatch to one algorithm per file (coll/OP/ALGORITHM.c), the
 * builder helpers those algorithms fill a plan with, and the final pass that
 * turns the dependency list into successor lists (CSR) and wait counts.
 *
 * A plan is pure data: group ranks, buffer kinds, offsets and lengths, so
 * that a transport between processes can run the same plan.
 *
 * Memory: a plan that cannot fit is refused while it is being built,
 * before its first message: every algorithm sizes its buffers first and
 * says how many messages, dependencies and receipt counters it will
 * build (topo__plan_expect), and all of that with what a run of it needs
 * must fit under the tightest of the memory available, the process's
 * rlimits and its cgroup's limit.  Otherwise a plan of a few buffers
 * would build millions of messages (bcast of 1 MiB in segments of one
 * byte over 22 members: 22 million, 2 GB of plan) only for the run to
 * fail.  The transport checks again, exactly, before it allocates.
 */
#define TOPO_INTERNAL
#include "run/transport.h"
#include "plan_memory.h"
#include "coll/registry.h"

#include <stdio.h>
#include <string.h>

/* More messages (or dependencies, or receipt counters) than this is
 * refused: at 48 bytes a message it is already 48 GiB of plan. */
#define MAX_ITEMS (INT64_C(1) << 30)

/* ---------------------------------------------------------------------- */
/* Memory */

/* "N MiB", rounded up. */
static long long mib(int64_t bytes)
{
	return (long long)(bytes / 1048576 + (bytes % 1048576 != 0));
}

int topo__memory_check(const struct topo__memory_need *need, topo_error *err)
{
	const char *limit;
	int64_t avail, total = 0, parts[3];

	parts[0] = need->buffers;
	parts[1] = need->plan;
	parts[2] = need->run;
	for (int i = 0; i < 3; i++) {
		if (parts[i] < 0 || parts[i] > INT64_MAX - total)
			return topo__err(err, TOPO_ELIMIT, NULL, NULL,
					 "the run needs more than %lld bytes",
					 (long long)INT64_MAX);
		total += parts[i];
	}
	avail = topo__memory_available(&limit);
	if (total <= avail)
		return 0;
	return topo__err(err, TOPO_ELIMIT, NULL, NULL,
			 "the run needs %lld bytes (%lld MiB: buffers %lld, "
			 "plan %lld, run state %lld MiB); only %lld MiB %s%s",
			 (long long)total, mib(total), mib(parts[0]),
			 mib(parts[1]), mib(parts[2]),
			 (long long)(avail / 1048576),
			 strcmp(limit, "memory") == 0
			     ? "of memory is available"
			     : "is available under ",
			 strcmp(limit, "memory") == 0 ? "" : limit);
}

/* Bytes of a plan and of a run of it, per message, dependency and receipt
 * counter: the message itself, its successor offset, two wait counts
 * (the run's working copy and its reset) and a root entry; a dependency
 * while building and as a successor; a counter's member, expectation and
 * count; and a reduction's entry in its table of fused copies.  (The pool
 * holds a batch of roots at a time and the successors released, which
 * the fixed part covers.)  A plan's estimate beside its
 * buffers is what topo__plan_expect and the run check. */
#define BYTES_PER_MSG                                                          \
	((int64_t)sizeof(struct topo__msg) + 8 + 4 + 4 + 8)
#define BYTES_PER_DEP ((int64_t)8 + 4)
#define BYTES_PER_SLOT ((int64_t)4 + 4 + 8)
/* A predict-only plan: the message, its successor offset and the acyclic
 * check's two counts; no receipt counters, no run.  (What a prediction
 * adds is topo_plan_predict's to count.) */
#define BYTES_PER_LMSG ((int64_t)sizeof(struct topo__lmsg) + 8 + 4 + 4)
/* The run's fixed part: the error records, the pool, the first timing
 * records. */
#define RUN_FIXED ((int64_t)1 << 20)

static int64_t mul_sat(int64_t a, int64_t b)
{
	if (a <= 0 || b <= 0)
		return 0;
	return a > INT64_MAX / b ? -1 : a * b;
}

void topo__plan_need(const struct topo_plan *p, int64_t msgs, int64_t deps,
		     int64_t slots, struct topo__memory_need *need)
{
	int64_t a = mul_sat(msgs, p->predict_only ? BYTES_PER_LMSG
				  : topo__plan_orders(p)
				      ? BYTES_PER_MSG + TOPO__FUSE_BYTES +
					    TOPO__ORDER_NEED
				  : topo_op_reduces(p->params.op)
				      ? BYTES_PER_MSG + TOPO__FUSE_BYTES
				      : BYTES_PER_MSG),
		b = mul_sat(deps, BYTES_PER_DEP),
		c = p->predict_only ? 0 : mul_sat(slots, BYTES_PER_SLOT);
	int64_t buffers = 0;

	if (p->mem_host == NULL && p->mem_rank >= 0) {
		/* a process per member (host NULL): member mem_rank's */
		for (int k = 0; k < TOPO__NBUF; k++) {
			int64_t size = topo__has_buf(p, k)
					   ? topo__bufsize(p, k, p->mem_rank)
					   : 0;

			buffers = size > INT64_MAX - buffers ? INT64_MAX
							     : buffers + size;
		}
	} else if (p->mem_host == NULL) {
		buffers = topo_plan_buffer_bytes(p);
	} else {
		/* the members here (a distributed run) */
		for (int k = 0; k < TOPO__NBUF; k++)
			for (int32_t r = 0; topo__has_buf(p, k) && r < p->n;
			     r++) {
				int64_t size = topo__bufsize(p, k, r);

				if (p->mem_host[r] == p->mem_rank &&
				    buffers != INT64_MAX)
					buffers = size > INT64_MAX - buffers
						      ? INT64_MAX
						      : buffers + size;
			}
	}
	need->buffers = buffers == INT64_MAX ? -1 : buffers;
	need->plan = a < 0 || b < 0 || c < 0 || a > INT64_MAX - b - c
			 ? -1
			 : a + b + c;
	need->run = p->predict_only ? 0 : RUN_FIXED;
}

/* Grows *arr (of *cap elements of size elem) to at least want. */
static int reserve(void **arr, int64_t *cap, int64_t want, size_t elem,
		   topo_error *err)
{
	void *a;

	if (want <= *cap)
		return 0;
	a = topo__realloc(*arr, (size_t)want * elem);
	if (a == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL,
				 "out of memory for a plan of %lld items",
				 (long long)want);
	*arr = a;
	*cap = want;
	return 0;
}

void topo__plan_run_need(const struct topo_plan *p, int64_t arena,
			 struct topo__memory_need *need)
{
	/* Two wait counts and a root entry per message, a count per receipt
	 * counter, and for a reduction the in-process transport's flags of
	 * parked copies and the run's lanes: the plan itself is in memory
	 * already. */
	int64_t per =
	    4 + 4 + 8 +
	    (topo_op_reduces(p->params.op) ? TOPO__PARK_BYTES + TOPO__LANE_BYTES
					   : 0);
	int64_t a = mul_sat(p->nmsg, per), b = mul_sat(p->nslots, 8);

	need->buffers = arena;
	need->plan = 0;
	need->run = a < 0 || b < 0 || a > INT64_MAX - b - RUN_FIXED
			? -1
			: a + b + RUN_FIXED;
}

int topo__plan_segment(const struct topo_plan *p, int64_t total,
		       int64_t auto_min, int64_t auto_seg, int64_t *seg,
		       int64_t *nseg, topo_error *err)
{
	size_t ts = p->type_size, given = p->params.segment;

	if (ts == 0 || given % ts != 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "%s %s: segment size %zu is not a multiple of "
				 "the %s size (%zu bytes)",
				 topo_op_name(p->params.op), p->algorithm,
				 given, topo_type_name(p->params.type), ts);
	if (given == 0)
		*seg = total >= auto_min ? auto_seg : total;
	else
		*seg =
		    (uint64_t)given > (uint64_t)total ? total : (int64_t)given;
	if (*seg > total)
		*seg = total;
	*nseg = total == 0 ? 1 : (total + *seg - 1) / *seg;
	return 0;
}

/*
 * Segments pipeline a tree's levels and share a large message between
 * the threads.  Across nodes 64 KiB keeps a deep path busy (bcast flood
 * and reduce/tree.c have the measurements).  Within one node the trees
 * are a star or nearly (the hierarchical tree of one node; the shared
 * memory costs a hop nothing), so segments only spread the work, and
 * each costs a message: 256 KiB ones did better at 2 and 16 members from
 * 512 KiB to 16 MiB (docs/CONSTANTS.md, "Segments within a node").
 *
 * A reduction of 4 members or more on one node reads longer runs: half
 * of B, within 256 KiB to 1 MiB (a multiple of 4 KiB, so of every type's
 * size).  Every segment's accumulator takes n - 1 contributions, each
 * read from memory in one run of the segment's length, and runs of 1 MiB
 * are what the copy limit's sums read (tests/bench/copy_ideal.c).  Two
 * members keep 256 KiB, where the longer runs gained nothing; so does
 * bcast, whose forwards read nothing twice (docs/CONSTANTS.md, "Longer
 * segments for reductions").
 */
int64_t topo__auto_segment(const struct topo_plan *p)
{
	return topo__auto_segment_for(p->params.op, p->n, p->params.bytes,
				      topo__group_on_one_node(p->t->g));
}

int64_t topo__auto_segment_for(enum topo_op op, int32_t n, size_t bytes,
			       bool one_node)
{
	int64_t half;

	if (!one_node)
		return TOPO__AUTO_SEGMENT;
	if (!topo_op_reduces(op) || n < TOPO__AUTO_SEGMENT_LONG_MEMBERS)
		return TOPO__AUTO_SEGMENT_NODE;
	half = (int64_t)(bytes / 2);
	half -= half % TOPO__AUTO_SEGMENT_ROUND;
	if (half > TOPO__AUTO_SEGMENT_LONG)
		return TOPO__AUTO_SEGMENT_LONG;
	return half > TOPO__AUTO_SEGMENT_NODE ? half : TOPO__AUTO_SEGMENT_NODE;
}

int topo__plan_segments_fit(const struct topo_plan *p, int64_t nseg,
			    int64_t seg, int64_t per_seg, int64_t fixed,
			    int64_t max, topo_error *err)
{
	if (fixed <= max && nseg <= (max - fixed) / per_seg)
		return 0;
	return topo__err(err, TOPO_ELIMIT, NULL, NULL,
			 "%s %s: %lld segments of %lld bytes over %d members "
			 "need more than %lld messages (use a larger segment)",
			 topo_op_name(p->params.op), p->algorithm,
			 (long long)nseg, (long long)seg, (int)p->n,
			 (long long)max);
}

int topo__plan_expect(struct topo_plan *p, int64_t msgs, int64_t deps,
		      int64_t slots, topo_error *err)
{
	struct topo__memory_need need;
	int rc;

	if (msgs > MAX_ITEMS || deps > MAX_ITEMS || slots > MAX_ITEMS)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "the plan would need %lld messages, %lld "
				 "dependencies and %lld receipt counters "
				 "(at most %lld of each)",
				 (long long)msgs, (long long)deps,
				 (long long)slots, (long long)MAX_ITEMS);
	topo__plan_need(p, msgs, deps, slots, &need);
	rc = topo__memory_check(&need, err);
	if (rc != 0)
		return rc;
	p->expected = true;
	p->expect_msgs = msgs;
	/* The arrays at their final size now: growing by doubling would
	 * reach up to twice that, and hold old and new at once while it
	 * copies, which the check above does not count. */
	if (p->predict_only)
		rc = reserve((void **)&p->lmsg, &p->cap, msgs,
			     sizeof(*p->lmsg), err);
	else
		rc = reserve((void **)&p->msg, &p->cap, msgs, sizeof(*p->msg),
			     err);
	/* Each reservation is one call the deadline cannot interrupt, and
	 * the largest are not cheap everywhere: under AddressSanitizer the
	 * 1.1 GB message list of a bcast of 1 MiB in one-byte segments
	 * takes 0.6 s to map, its shadow written.  So the clock is read
	 * after each, before more is reserved or populated. */
	if (rc == 0)
		rc = topo__plan_tick(p, err);
	if (rc == 0)
		rc = reserve((void **)&p->dep, &p->depcap, deps,
			     sizeof(*p->dep), err);
	if (rc == 0)
		rc = topo__plan_tick(p, err);
	/* The pages of the message list fault in on the other CPU while
	 * this one fills it (topo__plan_finish stops it). */
	if (rc == 0) {
		topo__populate_stop(&p->populate);
		if (p->predict_only)
			topo__populate_add(&p->populate, p->lmsg,
					   (size_t)msgs * sizeof(*p->lmsg));
		else
			topo__populate_add(&p->populate, p->msg,
					   (size_t)msgs * sizeof(*p->msg));
		topo__populate_add(&p->populate, p->dep,
				   (size_t)deps * sizeof(*p->dep));
		topo__populate_start(&p->populate);
	}
	if (rc == 0 && slots > p->slotcap && !p->predict_only) {
		int64_t cap = p->slotcap;

		rc = reserve((void **)&p->slot_member, &cap, slots,
			     sizeof(int32_t), err);
		if (rc == 0)
			rc = reserve((void **)&p->slot_expect, &p->slotcap,
				     slots, sizeof(int32_t), err);
	}
	return rc;
}

/* ---------------------------------------------------------------------- */
/* Builder helpers */

/* Makes room for one more element in *arr (of *cap elements of size
 * elem), doubling.  Returns 0 or TOPO_ENOMEM / TOPO_ELIMIT with err set. */
static int grow(void **arr, int64_t *cap, int64_t len, size_t elem,
		const char *what, topo_error *err)
{
	int64_t ncap;
	void *a;

	if (len < *cap)
		return 0;
	if (len >= MAX_ITEMS)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "the plan needs more than %lld %s",
				 (long long)MAX_ITEMS, what);
	ncap = *cap < 64 ? 64 : *cap * 2;
	if (ncap > MAX_ITEMS)
		ncap = MAX_ITEMS;
	a = topo__realloc(*arr, (size_t)ncap * elem);
	if (a == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	*arr = a;
	*cap = ncap;
	return 0;
}

int topo__plan_bufsize(struct topo_plan *p, enum topo__buf b, int32_t member,
		       int64_t bytes, topo_error *err)
{
	struct topo__bufsizes *s;

	if ((unsigned)b >= TOPO__NBUF || member < 0 || member >= p->n ||
	    bytes < 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "plan: buffer %d of member %d cannot hold "
				 "%lld bytes (members: 0..%d)",
				 (int)b, member, (long long)bytes, p->n - 1);
	if (p->predict_only)
		return 0; /* no buffers, so no sizes */
	s = &p->buf[b];
	if (s->each == NULL) {
		if (topo__bufsize(p, b, member) == bytes)
			return 0;
		if (s->one_size == s->all) {
			s->one = member;
			s->one_size = bytes;
			return 0;
		}
		/* A second member of its own: an array after all. */
		s->each = topo__mallocarray((size_t)p->n, sizeof(int64_t));
		if (s->each == NULL)
			return topo__err(err, TOPO_ENOMEM, NULL, NULL,
					 "out of memory");
		for (int32_t r = 0; r < p->n; r++)
			s->each[r] = s->all;
		s->each[s->one] = s->one_size;
	}
	s->each[member] = bytes;
	return 0;
}

int topo__plan_bufsize_all(struct topo_plan *p, enum topo__buf b, int64_t bytes,
			   topo_error *err)
{
	struct topo__bufsizes *s;

	if ((unsigned)b >= TOPO__NBUF || bytes < 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "plan: buffer %d cannot hold %lld bytes",
				 (int)b, (long long)bytes);
	if (p->predict_only)
		return 0;
	s = &p->buf[b];
	topo__free(s->each);
	s->each = NULL;
	s->all = bytes;
	s->one = 0;
	s->one_size = bytes;
	return 0;
}

/* Once the plan is built: sizes that are the same for all members but one
 * at most need no array (8 MiB per million members and kind, and as much
 * again for the arena's offsets). */
static void compact_bufsizes(struct topo_plan *p)
{
	for (int b = 0; b < TOPO__NBUF; b++) {
		struct topo__bufsizes *s = &p->buf[b];

		if (s->each == NULL)
			continue;
		/* With at most one exception, the common size is that of
		 * member 0 or, when 0 is the exception, of member 1. */
		for (int32_t c = 0; c < 2 && c < p->n; c++) {
			int64_t all = s->each[c];
			int32_t one = -1, r;

			for (r = 0; r < p->n; r++) {
				if (s->each[r] == all)
					continue;
				if (one >= 0)
					break;
				one = r;
			}
			if (r < p->n)
				continue;
			s->all = all;
			s->one = one >= 0 ? one : 0;
			s->one_size = s->each[s->one];
			topo__free(s->each);
			s->each = NULL;
			break;
		}
	}
}

int topo__plan_msg(struct topo_plan *p, const struct topo__msg *m, int64_t *id,
		   topo_error *err)
{
	int rc = 0;

	/* The buffers sized so far (all of them, for every algorithm here)
	 * must fit, when the algorithm did not say what it would build
	 * (topo__plan_expect): see the file comment. */
	if (p->nmsg == 0 && !p->expected) {
		struct topo__memory_need need;

		topo__plan_need(p, 0, 0, 0, &need);
		rc = topo__memory_check(&need, err);
	}
	/* Every 4096 messages, a glance at the clock: about a tenth of a
	 * millisecond of planning between glances. */
	if (rc == 0 && (p->nmsg & 4095) == 0 && p->nmsg > 0)
		rc = topo__plan_tick(p, err);
	if (rc == 0 && p->nmsg == p->cap)
		topo__populate_stop(&p->populate); /* it may move */
	if (rc == 0 && p->predict_only)
		rc = grow((void **)&p->lmsg, &p->cap, p->nmsg,
			  sizeof(*p->lmsg), "messages", err);
	else if (rc == 0)
		rc = grow((void **)&p->msg, &p->cap, p->nmsg, sizeof(*p->msg),
			  "messages", err);
	if (rc != 0)
		return rc;
	if (p->predict_only) {
		/* What check_msg checks of a message that has no buffers. */
		const char *what = NULL;

		if (m->src < 0 || m->src >= p->n || m->dst < 0 ||
		    m->dst >= p->n)
			what = "names a member that does not exist";
		else if (m->kind != TOPO__COPY && m->kind != TOPO__REDUCE)
			what = "has an unknown kind";
		else if (m->len < 0 || m->len > TOPO__LEN_MASK)
			what = "has a negative or impossible length";
		else if (m->kind == TOPO__REDUCE &&
			 (p->type_size == 0 ||
			  m->len % (int64_t)p->type_size != 0))
			what = "reduces a partial element";
		if (what != NULL)
			return topo__err(err, TOPO_EINVAL, NULL, NULL,
					 "plan: message %lld %s",
					 (long long)p->nmsg, what);
		p->lmsg[p->nmsg] = (struct topo__lmsg){
		    m->src, m->dst,
		    m->len | (int64_t)m->kind << TOPO__LK_SHIFT};
	} else {
		p->msg[p->nmsg] = *m;
		p->msg[p->nmsg].nwait = 0; /* counted by topo__plan_finish */
	}
	if (id != NULL)
		*id = p->nmsg;
	p->nmsg++;
	return 0;
}

int topo__plan_dep(struct topo_plan *p, int64_t before, int64_t after,
		   topo_error *err)
{
	int rc;

	if (before < 0 || before >= p->nmsg || after < 0 || after >= p->nmsg ||
	    before == after)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "plan: message %lld cannot wait for message "
				 "%lld (messages: 0..%lld)",
				 (long long)after, (long long)before,
				 (long long)p->nmsg - 1);
	if (p->ndep == p->depcap)
		topo__populate_stop(&p->populate); /* it may move */
	rc = grow((void **)&p->dep, &p->depcap, p->ndep, sizeof(*p->dep),
		  "dependencies", err);
	if (rc != 0)
		return rc;
	p->dep[p->ndep][0] = (int32_t)before;
	p->dep[p->ndep][1] = (int32_t)after;
	p->ndep++;
	return 0;
}

int topo__plan_slots(struct topo_plan *p, int64_t count, int32_t member,
		     int64_t *first, topo_error *err)
{
	int rc = 0;

	*first = p->nslots;
	if (member < 0 && count != p->n)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "plan: a block of one counter per member needs "
				 "%d counters, not %lld",
				 p->n, (long long)count);
	/* Room reserved already (topo__plan_expect): the block at once,
	 * a million counters being a million calls otherwise. */
	if (count > 0 && member < p->n &&
	    (p->predict_only || p->slotcap - p->nslots >= count)) {
		for (int64_t i = 0; !p->predict_only && i < count; i++) {
			p->slot_member[p->nslots + i] =
			    member < 0 ? (int32_t)i : member;
			p->slot_expect[p->nslots + i] = 0;
		}
		p->nslots += count;
		return 0;
	}
	/* topo__plan_slot appends, so the block is consecutive. */
	for (int64_t i = 0; rc == 0 && i < count; i++)
		rc = topo__plan_slot(p, member < 0 ? (int32_t)i : member, 0,
				     NULL, err);
	return rc;
}

int topo__plan_chain(struct topo_plan *p, const struct topo__msg *m,
		     int32_t first, int32_t n, int64_t slot, topo_error *err)
{
	struct topo__msg c = *m;
	int64_t prev = -1;
	int rc;

	c.kind = TOPO__COPY;
	c.src = first;
	c.slot = -1;
	rc = topo__plan_msg(p, &c, &prev, err);
	c.kind = TOPO__REDUCE;
	c.slot = slot;
	for (int32_t j = 1; rc == 0 && j < n; j++) {
		int64_t id = -1;

		c.src = (int32_t)(((int64_t)first + j) % n);
		rc = topo__plan_msg(p, &c, &id, err);
		if (rc == 0)
			rc = topo__plan_dep(p, prev, id, err);
		prev = id;
	}
	return rc;
}

int topo__plan_slot(struct topo_plan *p, int32_t member, int32_t expect,
		    int64_t *slot, topo_error *err)
{
	int64_t cap = p->slotcap;
	int rc;

	if (member < 0 || member >= p->n || expect < 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "plan: member %d cannot expect %d deliveries "
				 "(members: 0..%d)",
				 member, expect, p->n - 1);
	if (p->predict_only) {
		/* Numbered as ever, kept nowhere: nothing is verified. */
		if (slot != NULL)
			*slot = p->nslots;
		p->nslots++;
		return 0;
	}
	/* Two arrays share one capacity: grow the second only once the
	 * first has grown, so a failure leaves both consistent. */
	rc = grow((void **)&p->slot_member, &cap, p->nslots, sizeof(int32_t),
		  "receipt counters", err);
	if (rc == 0 && cap != p->slotcap) {
		int32_t *e = topo__realloc(p->slot_expect,
					   (size_t)cap * sizeof(int32_t));

		if (e == NULL)
			return topo__err(err, TOPO_ENOMEM, NULL, NULL,
					 "out of memory");
		p->slot_expect = e;
		p->slotcap = cap;
	}
	if (rc != 0)
		return rc;
	p->slot_member[p->nslots] = member;
	p->slot_expect[p->nslots] = expect;
	if (slot != NULL)
		*slot = p->nslots;
	p->nslots++;
	return 0;
}

static const char *const buf_names[TOPO__NBUF] = {"SEND", "RECV", "WORK"};

/* An algorithm that builds a message outside its members' buffers has a
 * bug; catching it here keeps the transports free of checks that would
 * otherwise have to be repeated for every delivery. */
static int check_msg(const struct topo_plan *p, int64_t i, topo_error *err)
{
	const struct topo__msg *m = &p->msg[i];
	const char *what = NULL;

	if (m->src < 0 || m->src >= p->n || m->dst < 0 || m->dst >= p->n)
		what = "names a member that does not exist";
	else if (m->sbuf >= TOPO__NBUF || m->dbuf >= TOPO__NBUF)
		what = "names a buffer that does not exist";
	else if (m->kind != TOPO__COPY && m->kind != TOPO__REDUCE)
		what = "has an unknown kind";
	else if (m->len < 0 || m->soff < 0 || m->doff < 0)
		what = "has a negative offset or length";
	else if (m->kind == TOPO__REDUCE &&
		 (p->type_size == 0 || m->len % (int64_t)p->type_size != 0))
		what = "reduces a partial element";
	else if (m->slot < -1 || m->slot >= p->nslots)
		what = "names a receipt counter that does not exist";
	else if (m->mark > TOPO__MARK_LEAVE ||
		 (m->mark != TOPO__MARK_NONE &&
		  (m->src != m->dst || m->len != 0 ||
		   p->params.op != TOPO_OP_BARRIER)))
		what = "marks a barrier step that is not a barrier member's "
		       "own step of 0 bytes";
	if (what != NULL)
		return topo__err(err, TOPO_EINVAL, NULL, NULL,
				 "plan: message %lld %s", (long long)i, what);
	if (!topo__msg_in_bounds(p, m))
		return topo__err(
		    err, TOPO_EINVAL, NULL, NULL,
		    "plan: message %lld moves %lld bytes from %s+%lld of "
		    "member %d (%lld bytes) to %s+%lld of member %d "
		    "(%lld bytes): out of bounds",
		    (long long)i, (long long)m->len, buf_names[m->sbuf],
		    (long long)m->soff, m->src,
		    (long long)topo__bufsize(p, m->sbuf, m->src),
		    buf_names[m->dbuf], (long long)m->doff, m->dst,
		    (long long)topo__bufsize(p, m->dbuf, m->dst));
	return 0;
}

/* A barrier plan gives each member one enter and one leave step (the
 * run's check of its order needs them; exec_internal.h). */
static int check_barrier_marks(const struct topo_plan *p, topo_error *err)
{
	uint8_t *seen = topo__calloc((size_t)p->n + 1, 1);
	int32_t bad = -1;

	if (seen == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	for (int64_t i = 0; i < p->nmsg && bad < 0; i++) {
		int k = p->msg[i].mark;

		if (k == TOPO__MARK_NONE)
			continue;
		if (seen[p->msg[i].src] & k)
			bad = p->msg[i].src;
		seen[p->msg[i].src] |= (uint8_t)k;
	}
	for (int32_t r = 0; r < p->n && bad < 0; r++)
		if (seen[r] != (TOPO__MARK_ENTER | TOPO__MARK_LEAVE))
			bad = r;
	topo__free(seen);
	if (bad >= 0)
		return topo__err(err, TOPO_EINVAL, NULL, NULL,
				 "plan: barrier member %d does not have exactly "
				 "one enter and one leave step",
				 (int)bad);
	return 0;
}

/* Kahn's algorithm over the finished CSR: a message on a cycle would never
 * become ready, and the run would only end at its timeout. */
static int check_acyclic(const struct topo_plan *p, topo_error *err)
{
	int32_t *left = topo__calloc((size_t)p->nmsg + 1, sizeof(int32_t));
	int32_t *ready = topo__mallocarray((size_t)p->nmsg + 1, sizeof(int32_t));
	int64_t nready = 0, done = 0;
	int rc = 0;

	if (left == NULL || ready == NULL) {
		rc = topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
		goto out;
	}
	for (int64_t k = 0; k < p->succ_off[p->nmsg]; k++)
		left[p->succ[k]]++;
	for (int64_t i = 0; i < p->nmsg; i++)
		if (left[i] == 0)
			ready[nready++] = (int32_t)i;
	while (nready > 0) {
		int64_t m = ready[--nready];

		done++;
		for (int64_t k = p->succ_off[m]; k < p->succ_off[m + 1]; k++)
			if (--left[p->succ[k]] == 0)
				ready[nready++] = p->succ[k];
	}
	if (done < p->nmsg) {
		int64_t stuck = 0;

		while (left[stuck] == 0)
			stuck++;
		rc = topo__err(err, TOPO_EINVAL, NULL, NULL,
			       "plan: %lld messages wait on a cycle of "
			       "dependencies (the first is message %lld)",
			       (long long)(p->nmsg - done), (long long)stuck);
	}
out:
	topo__free(left);
	topo__free(ready);
	return rc;
}

int topo__plan_tick(struct topo_plan *p, topo_error *err)
{
	double t;

	if (p->deadline <= 0 && p->params.progress == NULL)
		return 0;
	t = topo__now();
	if (p->deadline > 0 && t >= p->deadline)
		return topo__err(err, TOPO_ETIMEDOUT, NULL, NULL,
				 "the run did not finish within %g s "
				 "(planning: %lld messages built)",
				 p->params.timeout, (long long)p->nmsg);
	if (p->params.progress != NULL && t >= p->next_progress) {
		p->next_progress = t + TOPO__PROGRESS_EVERY;
		p->params.progress(p->params.progress_ctx, "planning", p->nmsg,
				   p->expect_msgs > p->nmsg ? p->expect_msgs
							    : p->nmsg);
	}
	return 0;
}

int topo__plan_finish(struct topo_plan *p, topo_error *err)
{
	int64_t *off;
	int rc;

	if (p->succ_off != NULL)
		return 0; /* already finished */
	rc = topo__plan_tick(p, err);
	if (rc != 0)
		return rc;
	p->ntransport = 0;
	for (int64_t i = 0; i < p->nmsg; i++) {
		if (!p->predict_only) {
			rc = check_msg(p, i, err);
			if (rc != 0)
				return rc;
			p->msg[i].nwait = 0;
		}
		if (topo__msg_src(p, i) != topo__msg_dst(p, i))
			p->ntransport++;
	}
	if (!p->predict_only && p->params.op == TOPO_OP_BARRIER) {
		rc = check_barrier_marks(p, err);
		if (rc != 0)
			return rc;
	}
	compact_bufsizes(p);
	/* The arrays of the message list are complete. */
	topo__populate_stop(&p->populate);
	off = topo__calloc((size_t)p->nmsg + 1, sizeof(int64_t));
	p->succ = topo__mallocarray((size_t)p->ndep + 1, sizeof(int32_t));
	if (off == NULL || p->succ == NULL) {
		topo__free(off);
		topo__free(p->succ);
		p->succ = NULL;
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	}
	/* The successor list's pages fault in on the other CPU while this
	 * one counts. */
	topo__populate_add(&p->populate, p->succ,
			   ((size_t)p->ndep + 1) * sizeof(int32_t));
	topo__populate_start(&p->populate);
	/* Counting pass: off[b + 1] = successors of b, then prefix sums so
	 * off[b] is where b's list starts. */
	for (int64_t d = 0; d < p->ndep; d++) {
		if (!p->predict_only) {
			struct topo__msg *after = &p->msg[p->dep[d][1]];

			if (after->nwait == INT32_MAX) {
				topo__free(off);
				topo__free(p->succ);
				p->succ = NULL;
				return topo__err(
				    err, TOPO_ELIMIT, NULL, NULL,
				    "plan: message %lld waits for more "
				    "than %d messages",
				    (long long)p->dep[d][1], INT32_MAX);
			}
			after->nwait++;
		}
		off[p->dep[d][0] + 1]++;
	}
	for (int64_t i = 0; i < p->nmsg; i++)
		off[i + 1] += off[i];
	rc = topo__plan_tick(p, err);
	if (rc != 0) {
		topo__free(off);
		topo__free(p->succ);
		p->succ = NULL;
		return rc;
	}
	/* Filling advances off[b] to the end of b's list, which is where
	 * b + 1's starts: shifting by one restores the starts.  Each list
	 * keeps the order in which the dependencies were added. */
	topo__populate_wait(&p->populate);
	for (int64_t d = 0; d < p->ndep; d++)
		p->succ[off[p->dep[d][0]]++] = p->dep[d][1];
	memmove(off + 1, off, (size_t)p->nmsg * sizeof(int64_t));
	off[0] = 0;
	p->succ_off = off;
	/* The list is in the successors now: freed before the check's
	 * arrays are made, so that the two never add up. */
	topo__free(p->dep);
	p->dep = NULL;
	p->depcap = 0;
	/* Dependencies that all go from a lower index to a higher one (as
	 * the flood's do) cannot close a cycle: no need to look. */
	{
		bool forward = true;

		for (int64_t m = 0; m < p->nmsg && forward; m++)
			for (int64_t k = off[m]; k < off[m + 1]; k++)
				if (p->succ[k] <= m)
					forward = false;
		rc = forward ? 0 : check_acyclic(p, err);
	}
	if (rc != 0) {
		topo__free(p->succ_off);
		topo__free(p->succ);
		p->succ_off = NULL;
		p->succ = NULL;
		return rc;
	}
	rc = topo__plan_order(p, err);
	return rc != 0 ? rc : topo__plan_fuse(p, err);
}

/* ---------------------------------------------------------------------- */
/* Planning */

void topo_plan_free(topo_plan *p)
{
	if (p == NULL)
		return;
	topo__populate_stop(&p->populate);
	for (int b = 0; b < TOPO__NBUF; b++)
		topo__free(p->buf[b].each);
	topo__free(p->msg);
	topo__free(p->lmsg);
	topo__free(p->succ_off);
	topo__free(p->succ);
	topo__free(p->dep);
	topo__free(p->slot_member);
	topo__free(p->slot_expect);
	topo__free(p->fuse);
	topo__free(p->cnext);
	topo__free(p->conly);
	topo__free(p);
}

/* "0..63" for a contiguous group, else the first few ids and the count. */
static void describe_members(char *buf, size_t size, const topo_group *g)
{
	const int32_t *mem = g->members;
	int32_t n = g->size;
	size_t len = 0;

	if (mem[n - 1] - mem[0] == n - 1) {
		if (n == 1)
			snprintf(buf, size, "%d", mem[0]);
		else
			snprintf(buf, size, "%d..%d", mem[0], mem[n - 1]);
		return;
	}
	buf[0] = '\0';
	for (int32_t i = 0; i < n && i < 6 && len < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%d",
					i > 0 ? ", " : "", mem[i]);
	if (n > 6 && len < size)
		snprintf(buf + len, size - len, ", ..., %d; %d in all",
			 mem[n - 1], n);
}

bool topo__group_on_one_node(const topo_group *g)
{
	int32_t node =
	    g->size > 0 ? topo_machine_endpoint_node(g->m, g->members[0]) : -1;

	for (int32_t i = 1; i < g->size; i++)
		if (topo_machine_endpoint_node(g->m, g->members[i]) != node)
			return false;
	return true;
}

/* Checks params (defaults applied into *q) and finds the algorithm. */
static int check_params(struct topo_plan_params *q, const topo_tree *t,
			const struct topo__algorithm **algo, int32_t *root,
			topo_error *err)
{
	const topo_group *g = t->g;
	char list[160];
	size_t size;

	if ((unsigned)q->op >= TOPO_OP_COUNT)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "unknown operation %d", (int)q->op);
	if ((unsigned)q->type >= TOPO_TYPE_COUNT)
		return topo__err(err, TOPO_EARG, NULL, NULL, "unknown type %d",
				 (int)q->type);
	if ((unsigned)q->redop >= TOPO_REDOP_COUNT)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "unknown operator %d", (int)q->redop);
	/* With none named, reduce-scatter and allgather over a group on one
	 * node take direct (registry.h's ONE_NODE): in one memory reading
	 * another member's buffer costs no more than one's own;
	 * reduce-scatter direct moves the fewest bytes, and allgather direct
	 * reads every block from its sender's send buffer, not from the
	 * member that passed it on.  Across nodes their n - 1 messages into
	 * each member share that member's link, and ring is the default.
	 * reduce's default stays hierarchical everywhere, as SPEC.md section
	 * 8 has it. */
	*algo = q->algorithm == NULL
		    ? topo__algorithm_default(q->op, topo__group_on_one_node(g))
		    : topo__algorithm_find(q->op, q->algorithm);
	if (*algo == NULL) {
		topo__algorithm_list(list, sizeof(list), q->op);
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "unknown %s algorithm \"%s\" (valid: %s)",
				 topo_op_name(q->op), q->algorithm, list);
	}
	if (!topo_op_has_root(q->op) && q->root != -1)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "%s has no root (endpoint %d given)",
				 topo_op_name(q->op), q->root);
	*root = q->root == -1 ? t->root : topo_group_rank(g, q->root);
	if (*root < 0) {
		describe_members(list, sizeof(list), g);
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "endpoint %d is not a member of group "
				 "\"%s\" (members: %s)",
				 q->root, g->name, list);
	}
	/* (A rootless operation's is the tree's, which it may ignore.) */
	q->root = topo_op_has_root(q->op) ? g->members[*root] : -1;
	if (q->op == TOPO_OP_BARRIER && q->bytes != 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "barrier moves no data (%zu bytes given)",
				 q->bytes);
	if (q->bytes == 0 && q->op != TOPO_OP_BARRIER)
		q->bytes = 8;
	size = topo_type_size(q->type);
	if ((topo_op_reduces(q->op) ||
	     ((*algo)->flags & TOPO_ALG_CHUNK)) &&
	    q->bytes % size != 0)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "%zu bytes is not a multiple of %zu, the "
				 "size of %s",
				 q->bytes, size, topo_type_name(q->type));
	/* A chunk size the algorithm would ignore is refused: the caller
	 * would think the gather chunked. */
	if (q->chunk != 0 && !((*algo)->flags & TOPO_ALG_CHUNK))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "a chunk size applies to gather chunked only, "
				 "not %s %s",
				 topo_op_name(q->op), (*algo)->name);
	if (topo_op_reduces(q->op) && q->redop >= TOPO_BAND &&
	    (q->type == TOPO_FLOAT || q->type == TOPO_DOUBLE))
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "operator %s applies to integer types only, "
				 "not %s (valid: sum, prod, min, max)",
				 topo_redop_name(q->redop),
				 topo_type_name(q->type));
	/* Scatter's root sends and gather's root receives n blocks; so
	 * does every member of an allgather, reduce-scatter or alltoall. */
	if (q->bytes > (uint64_t)INT64_MAX / (uint64_t)g->size)
		return topo__err(err, TOPO_ELIMIT, NULL, NULL,
				 "%zu bytes for each of %d members is more "
				 "than a buffer can hold",
				 q->bytes, g->size);
	return 0;
}

static int plan_new(topo_plan **out, const topo_tree *t,
		    const struct topo_plan_params *params, const int32_t *host,
		    int rank, topo_error *err);

int topo_plan_new(topo_plan **out, const topo_tree *t,
		  const struct topo_plan_params *params, topo_error *err)
{
	return plan_new(out, t, params, NULL, -1, err);
}

int topo__plan_new_hosted(topo_plan **out, const topo_tree *t,
			  const struct topo_plan_params *params,
			  const int32_t *host, int rank, topo_error *err)
{
	return plan_new(out, t, params, host, rank, err);
}

static int plan_new(topo_plan **out, const topo_tree *t,
		    const struct topo_plan_params *params, const int32_t *host,
		    int rank, topo_error *err)
{
	struct topo_plan_params q;
	const struct topo__algorithm *algo = NULL;
	struct topo_plan *p = NULL;
	int32_t root = -1;
	int rc;

	if (out != NULL)
		*out = NULL;
	if (out == NULL || t == NULL || params == NULL)
		return topo__err(err, TOPO_EARG, NULL, NULL,
				 "topo_plan_new: out, tree and parameters are "
				 "required");
	rc = topo__plan_params_read(&q, params, err);
	if (rc == 0 && !(q.timeout >= 0 && q.elapsed >= 0))
		rc = topo__err(err, TOPO_EARG, NULL, NULL,
			       "the planning timeout (%g) and the time "
			       "elapsed (%g) must not be negative",
			       q.timeout, q.elapsed);
	if (rc == 0)
		rc = check_params(&q, t, &algo, &root, err);
	if (rc != 0)
		return rc;
	p = topo__calloc(1, sizeof(*p));
	if (p == NULL)
		return topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
	p->t = t;
	p->predict_only = q.predict_only != 0;
	p->mem_host = host;
	p->mem_rank = rank;
	snprintf(p->algorithm, sizeof(p->algorithm), "%s", algo->name);
	p->params = q;
	p->params.algorithm = p->algorithm; /* the caller's may not last */
	p->n = t->n;
	p->root = root;
	p->type_size = topo_type_size(q.type);
	if (q.timeout > 0)
		p->deadline = topo__now() +
			      (q.timeout < 1e9 ? q.timeout : 1e9) - q.elapsed;
	if (q.progress != NULL)
		q.progress(q.progress_ctx, "planning", 0, 0);
	p->next_progress = topo__now() + TOPO__PROGRESS_EVERY;
	rc = algo->fn(p, err);
	if (rc == 0)
		rc = topo__plan_finish(p, err);
	p->mem_host = NULL; /* the caller's, for planning only */
	if (rc != 0) {
		/* An algorithm that forgot to say why still leaves a text. */
		topo__err(err, rc, NULL, NULL, "cannot plan %s %s: %s",
			  topo_op_name(q.op), p->algorithm, topo_strerror(rc));
		topo_plan_free(p);
		return rc;
	}
	*out = p;
	return 0;
}

const char *topo_plan_algorithm(const topo_plan *p)
{
	return p->algorithm;
}

int32_t topo_plan_root(const topo_plan *p)
{
	return p->params.root;
}

int64_t topo_plan_messages(const topo_plan *p)
{
	return p->ntransport;
}

int64_t topo__plan_kind_bytes(const struct topo_plan *p, int b)
{
	const struct topo__bufsizes *s = &p->buf[b];
	int64_t total = 0;

	if (s->each == NULL) {
		/* n - 1 members of `all` and one of one_size */
		int64_t k = p->n - 1;

		if (s->all > 0 && k > INT64_MAX / s->all)
			return INT64_MAX;
		total = k * s->all;
		return s->one_size > INT64_MAX - total ? INT64_MAX
						       : total + s->one_size;
	}
	for (int32_t r = 0; r < p->n; r++) {
		if (s->each[r] > INT64_MAX - total)
			return INT64_MAX;
		total += s->each[r];
	}
	return total;
}

int64_t topo_plan_buffer_bytes(const topo_plan *p)
{
	int64_t total = 0;

	for (int b = 0; b < TOPO__NBUF; b++) {
		int64_t k = topo__plan_kind_bytes(p, b);

		if (k > INT64_MAX - total)
			return INT64_MAX;
		total += k;
	}
	return total;
}
