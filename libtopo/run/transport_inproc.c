/*
 * transport_inproc.c - the in-process transport: every member's buffers
 * live in this address space and a message is a memcpy, or an elementwise
 * reduction into bytes no other reduction is writing.
 *
 * Each buffer kind is one arena aligned to 64 bytes, cut into one slice per
 * member: slices of 64 bytes or more start on a cache line of their own,
 * smaller ones on 8 bytes (a million 8-byte buffers would otherwise take
 * 64 MiB per kind).  Members never share bytes.
 *
 * Locking: COPY messages take no lock (the plan orders every write to a
 * byte after the reads and writes it must follow).  REDUCE messages read,
 * combine and write their destination, so two of them into overlapping
 * bytes of one member's buffer must not interleave, while reductions into
 * different bytes (the segments of a segmented reduce) should run at once.
 * A REDUCE therefore holds a byte range: the destination (member, buffer)
 * picks one of NBUCKETS buckets, whose mutex guards the list of ranges
 * being reduced into in that bucket; a REDUCE waits on the bucket's
 * condition variable while its range overlaps one in the list.  A small
 * REDUCE (at most SMALL_REDUCE bytes) combines while holding the mutex,
 * one lock round trip instead of two; a larger one enters its range in
 * the list and combines without the mutex, so that the bucket's other
 * members and its other byte ranges are not held up meanwhile.  Each
 * bucket has a cache line of its own: a million small reductions into
 * thousands of members touch little else.  The mutexes are adaptive
 * (topo__mutex_init, pool.c): the segments of one reduce, reduced at once
 * into one member's buffer, meet in its bucket, and a thread put to sleep
 * there cost a futex wake-up each time.
 *
 * Streaming: when the arenas together are at least twice the size of the
 * last-level cache, a COPY of at least STREAM_MIN bytes writes its
 * destination with streaming (non-temporal) stores.  An ordinary store
 * first reads the destination's line into the cache, which for buffers
 * that cannot stay cached is a third stream of memory traffic besides the
 * read and the write; a streaming store writes the line whole.  Below
 * the cache's size the destination is usually cached already (the run's
 * reset has just written it) and streaming would evict it; at about the
 * cache's size streaming still cost more than it saved, hence twice the
 * cache: only runs that clearly cannot stay cached stream.  Every large
 * copy streams, even those into bytes a REDUCE then writes: leaving those
 * to memcpy helped reduce but cost reduce-scatter more.  Copies below
 * STREAM_MIN (the flood's segments are 64 KiB) are left to memcpy.  So
 * is a copy whose bytes one of its successors reads, as a source (a
 * tree's forward, a ring's next step) or as the accumulator of a REDUCE:
 * streamed, they would be read back from memory at once.  Where sysfs
 * describes no cache (some virtual machines), LLC_UNKNOWN stands in: 32
 * MiB, a server core complex's L3.  A virtual machine may also describe
 * its host's whole cache (hundreds of MiB shared by two CPUs, of which
 * one thread reads fast only the first tens of MiB), so a cache counts
 * for at most LLC_PER_CPU for each CPU that shares it (topo__llc_share).
 * The measurements behind each of these choices: docs/CONSTANTS.md,
 * "Streaming copies".
 *
 * Fused copies.  A reduction starts its accumulator as a member's own
 * contribution, a local COPY of its SEND, and then REDUCEs the others'
 * into it: two passes over the result where one would do.  So, as the MPI
 * engine does (engine.h), a local COPY out of a SEND is "fusable" when the
 * plan's successors of it are REDUCEs into exactly its bytes (its
 * "combines"), or wait for one of them; the plan finds those copies once
 * (plan/fuse.c, struct topo_plan's fuse).  Its delivery then writes nothing
 * and parks it; the first of its combines to hold the bytes' range
 * combines the copy's source with its own into them, dst = a OP src
 * (topo__reduce3), and unparks it; the others reduce as usual.  Nothing
 * reads or writes the accumulator between the copy and its first combine,
 * since every path on from the copy passes through a combine, and the
 * copy's source stays as it was, since no message of such a plan writes a
 * SEND.  A copy the run moves itself (exec.c's small copies) never parks,
 * and its combines reduce as usual.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"
#include "plan_memory.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define NBUCKETS 4096
#define ARENA_ALIGN 64

/* The last-level cache taken for one the system does not describe (see
 * the file comment). */
#define LLC_UNKNOWN ((int64_t)32 << 20)
/* The most last-level cache a CPU sharing it is taken to hold (see the
 * file comment): no processor has more than 12 MiB of L3 a core (AMD's
 * stacked-cache parts), so a larger share is a virtual machine's sysfs
 * describing its host's whole cache. */
#define LLC_PER_CPU ((int64_t)16 << 20)
/* Copies of at least this many bytes may stream (see the file comment). */
#define STREAM_MIN ((int64_t)64 << 10)

/* Reductions of at most this many bytes combine under their bucket's
 * mutex: the 1,048,576-member reduce of 8 bytes runs a million of them,
 * each a few nanoseconds of arithmetic. */
#define SMALL_REDUCE 4096

/* A reduction in progress into bytes [lo, hi) of member dst's buffer buf;
 * it lives on the stack of the thread that delivers it. */
struct range {
	int32_t dst;
	int buf;
	int64_t lo, hi;
	struct range *next;
};

/* A bucket, padded to a cache line (its condition variable, used only by
 * waiters, is apart). */
union bucket {
	struct {
		pthread_mutex_t mu;
		struct range *busy; /* under mu */
		int waiting;	    /* under mu: threads waiting on freed */
	} b;
	unsigned char line[ARENA_ALIGN];
};

struct inproc {
	struct topo__block raw[TOPO__NBUF]; /* as allocated (alloc.c) */
	/* The aligned arenas, and member r's slice of arena b in them: at
	 * off[b][r] where the plan keeps each member's size, else at r *
	 * stride[b], or at one_off[b] for the plan's member of its own size
	 * (one[b]). */
	struct topo__slices sl;
	int64_t stream_min;	   /* COPYs of this many bytes stream */
	enum topo_type type;
	enum topo_redop op;
	/* Fused copies (see the file comment), NULL when the plan has none:
	 * fuse, the plan's table (struct topo_plan), or NULL: none fuses;
	 * park[c], for a copy c, 1 while it is parked. */
	const int32_t *fuse;
	uint8_t *park;
	unsigned char *raw_buckets;
	union bucket *buckets; /* [NBUCKETS], aligned */
	int nbuckets, nconds;  /* initialised so far */
	/* A range left the list of bucket k: freed[k]. */
	pthread_cond_t freed[NBUCKETS];
};

static int64_t slice_align(int64_t size)
{
	return size >= ARENA_ALIGN ? ARENA_ALIGN : 8;
}

/* Where the slices of kind b lie when the plan gives all members one size
 * but one at most: member r's at r * *stride, member one's after them all,
 * at *one_off.  Returns the arena's bytes, or -1 when that overflows. */
static int64_t compact_layout(const struct topo_plan *p, int b, int64_t *stride,
			      int64_t *one_off)
{
	const struct topo__bufsizes *s = &p->buf[b];
	int64_t a = slice_align(s->all), oa = slice_align(s->one_size), end;

	if (s->all > INT64_MAX / 2 - a)
		return -1;
	*stride = (s->all + a - 1) & -a; /* a: a power of 2 */
	if (*stride > 0 && p->n > (INT64_MAX / 2) / *stride)
		return -1;
	end = (int64_t)p->n * *stride;
	*one_off = (end + oa - 1) & -oa;
	if (s->one_size == s->all)
		return end; /* no member of its own size */
	if (s->one_size > INT64_MAX - *one_off)
		return -1;
	return *one_off + s->one_size;
}

/* Bytes of the arena for kind b, with every slice aligned; -1 when that
 * overflows. */
static int64_t arena_bytes(const struct topo_plan *p, int b)
{
	const int64_t *each = p->buf[b].each;
	int64_t total = 0, stride, one_off;

	if (each == NULL)
		return compact_layout(p, b, &stride, &one_off);
	for (int32_t r = 0; r < p->n; r++) {
		int64_t size = each[r], a = slice_align(size);

		if (size > INT64_MAX - total - 2 * a)
			return -1;
		total = ((total + a - 1) & -a) + size;
	}
	return total;
}

/* (the default of topo__tune.stream_copies: tune.c) */

int topo__stream_run(int64_t need, int64_t llc)
{
	if (llc <= 0)
		llc = LLC_UNKNOWN;
	return need / 2 >= llc;
}

int64_t topo__llc_share(int64_t size, int64_t sharing)
{
	if (size <= 0)
		return 0;
	/* (who shares it not known: as described) */
	if (sharing >= 1 && sharing < INT64_MAX / LLC_PER_CPU &&
	    size > sharing * LLC_PER_CPU)
		return sharing * LLC_PER_CPU;
	return size;
}

/* The outermost cache of CPU 0 as far as the CPUs sharing it can hold it
 * (topo__llc_share), or 0 when it is not described. */
static int64_t outermost_cache(void)
{
	int64_t sharing, size = topo__cache_outermost(&sharing);

	return topo__llc_share(size, sharing);
}

/* Streams a COPY's bytes into dst (the destination written whole, not
 * read first), in 16-byte aligned stores; the fence makes them visible
 * before the delivery is counted and its successors released. */
static void stream_copy(unsigned char *dst, const unsigned char *src,
			size_t len)
{
#if defined(__SSE2__)
	size_t i = (16 - (uintptr_t)dst % 16) % 16;

	if (i > len)
		i = len;
	memcpy(dst, src, i);
	for (; i + 64 <= len; i += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)(src + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
		__m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));

		_mm_stream_si128((__m128i *)(void *)(dst + i), a);
		_mm_stream_si128((__m128i *)(void *)(dst + i + 16), b);
		_mm_stream_si128((__m128i *)(void *)(dst + i + 32), c);
		_mm_stream_si128((__m128i *)(void *)(dst + i + 48), d);
	}
	memcpy(dst + i, src + i, len - i);
	_mm_sfence();
#else
	memcpy(dst, src, len);
#endif
}

/* (the default of topo__tune.fuse_copies: tune.c) */

/* s->fuse and s->park for p (see the file comment): left NULL when the
 * plan has no fused copies or topo__tune.fuse_copies is 0.  Returns 0 or
 * TOPO_ENOMEM. */
static int find_fusable(struct inproc *s, const struct topo_plan *p)
{
	if (!topo__tune.fuse_copies || p->fuse == NULL)
		return 0;
	s->park = topo__calloc((size_t)p->nmsg + 1, TOPO__PARK_BYTES);
	if (s->park == NULL)
		return TOPO_ENOMEM;
	s->fuse = p->fuse;
	return 0;
}

static void inproc_close(void *state)
{
	struct inproc *s = state;

	if (s == NULL)
		return;
	for (int i = 0; i < s->nbuckets; i++)
		pthread_mutex_destroy(&s->buckets[i].b.mu);
	for (int i = 0; i < s->nconds; i++)
		pthread_cond_destroy(&s->freed[i]);
	topo__free(s->raw_buckets);
	topo__free(s->park);
	for (int b = 0; b < TOPO__NBUF; b++) {
		topo__block_free(&s->raw[b]);
		topo__free(s->sl.off[b]);
	}
	topo__free(s);
}

static int inproc_open(void **state, const struct topo_plan *p, topo_error *err)
{
	int64_t bytes[TOPO__NBUF], need = 0;
	struct topo__memory_need mem;
	struct inproc *s = NULL;
	size_t pad;
	int rc = TOPO_ENOMEM;

	*state = NULL;
	/* Refuse before allocating anything, so that a run too big for the
	 * machine fails at once instead of swapping or being killed.  The
	 * planner checked the buffers' sizes already; this is the exact
	 * arena, alignment included. */
	for (int b = 0; b < TOPO__NBUF; b++) {
		bytes[b] = arena_bytes(p, b);
		if (bytes[b] < 0 ||
		    bytes[b] > INT64_MAX - need - TOPO__NBUF * ARENA_ALIGN) {
			need = -1;
			break;
		}
		need += bytes[b];
	}
	topo__plan_run_need(p, need, &mem);
	rc = topo__memory_check(&mem, err);
	if (rc != 0)
		return rc;
	rc = TOPO_ENOMEM;
	s = topo__calloc(1, sizeof(*s));
	if (s == NULL)
		goto fail;
	s->type = p->params.type;
	s->op = p->params.redop;
	s->stream_min = INT64_MAX;
	if (topo__tune.stream_copies > 0)
		s->stream_min = STREAM_MIN;
	else if (topo__tune.stream_copies < 0) {
		if (topo__stream_run(need, outermost_cache()))
			s->stream_min = STREAM_MIN;
	}
	for (int b = 0; b < TOPO__NBUF; b++) {
		int64_t pos = 0;
		unsigned char *raw = topo__block_alloc(
		    &s->raw[b], (size_t)bytes[b] + ARENA_ALIGN);

		if (raw == NULL)
			goto fail;
		s->sl.bytes[b] = bytes[b];
		s->sl.arena[b] =
		    raw +
		    (ARENA_ALIGN - (uintptr_t)raw % ARENA_ALIGN) % ARENA_ALIGN;
		s->sl.one[b] =
		    p->buf[b].one_size != p->buf[b].all ? p->buf[b].one : -1;
		if (p->buf[b].each == NULL) {
			compact_layout(p, b, &s->sl.stride[b],
				       &s->sl.one_off[b]);
			continue;
		}
		s->sl.off[b] = topo__mallocarray((size_t)p->n, sizeof(int64_t));
		if (s->sl.off[b] == NULL)
			goto fail;
		for (int32_t r = 0; r < p->n; r++) {
			int64_t a = slice_align(p->buf[b].each[r]);

			pos = (pos + a - 1) & -a; /* a: a power of 2 */
			s->sl.off[b][r] = pos;
			pos += p->buf[b].each[r];
		}
	}
	s->raw_buckets =
	    topo__malloc(NBUCKETS * sizeof(union bucket) + ARENA_ALIGN);
	if (s->raw_buckets == NULL)
		goto fail;
	pad = (ARENA_ALIGN - (uintptr_t)s->raw_buckets % ARENA_ALIGN) %
	      ARENA_ALIGN;
	s->buckets = (union bucket *)(void *)(s->raw_buckets + pad);
	for (; s->nbuckets < NBUCKETS; s->nbuckets++) {
		union bucket *k = &s->buckets[s->nbuckets];

		k->b.busy = NULL;
		k->b.waiting = 0;
		if (topo__mutex_init(&k->b.mu) != 0)
			break;
	}
	for (; s->nbuckets == NBUCKETS && s->nconds < NBUCKETS; s->nconds++)
		if (pthread_cond_init(&s->freed[s->nconds], NULL) != 0)
			break;
	if (s->nbuckets < NBUCKETS || s->nconds < NBUCKETS) {
		rc = TOPO_EIO;
		topo__err(err, rc, NULL, NULL,
			  "cannot initialise the reduction locks");
		goto fail;
	}
	if (find_fusable(s, p) != 0) {
		topo__err(err, TOPO_ENOMEM, NULL, NULL,
			  "out of memory: fusing copies needs %lld bytes",
			  (long long)(p->nmsg * TOPO__PARK_BYTES));
		inproc_close(s);
		return TOPO_ENOMEM;
	}
	*state = s;
	return 0;
fail:
	if (rc == TOPO_ENOMEM)
		topo__err(err, rc, NULL, NULL,
			  "out of memory: buffers need %lld bytes",
			  (long long)need);
	inproc_close(s);
	return rc;
}

static unsigned char *inproc_buffer(void *state, int32_t r, int b)
{
	struct inproc *s = state;

	return topo__slice(&s->sl, r, b);
}

/* dst OP= src, or dst = a OP src when a is not NULL. */
static inline void combine(const struct inproc *s, unsigned char *dst,
			   const unsigned char *a, const unsigned char *src,
			   int64_t len)
{
	if (a != NULL)
		topo__reduce3(s->type, s->op, dst, a, src, (size_t)len);
	else
		topo__reduce(s->type, s->op, dst, src, (size_t)len);
}

/* Whether a reduction into r would interleave with one in the list. */
static int overlaps(const struct range *list, const struct range *r)
{
	for (; list != NULL; list = list->next)
		if (list->dst == r->dst && list->buf == r->buf &&
		    list->lo < r->hi && r->lo < list->hi)
			return 1;
	return 0;
}

/* Bytes [lo, lo + len) of m's reduction (dst and src point at the
 * first), once no other reduction into overlapping bytes runs (see the
 * file comment).  The list holds at most one range per thread,
 * so the overlap scan is short. */
static void reduce_locked(struct inproc *s, const struct topo_plan *p,
			  int64_t id, int64_t lo, int64_t len,
			  unsigned char *dst, const unsigned char *src)
{
	const struct topo__msg *m = &p->msg[id];
	int32_t c = s->fuse != NULL ? s->fuse[id] : -1;
	const unsigned char *a = NULL;
	uint32_t i = ((uint32_t)m->dst * TOPO__NBUF + m->dbuf) % NBUCKETS;
	union bucket *k = &s->buckets[i];
	pthread_cond_t *freed = &s->freed[i];
	struct range me = {m->dst, m->dbuf, m->doff + lo, m->doff + lo + len,
			   NULL};
	struct range **pp;

	pthread_mutex_lock(&k->b.mu);
	while (overlaps(k->b.busy, &me)) {
		k->b.waiting++;
		pthread_cond_wait(freed, &k->b.mu);
		k->b.waiting--;
	}
	/* The first combine of a parked copy (see the file comment). */
	if (c >= 0 && s->park[c]) {
		const struct topo__msg *l = &p->msg[c];

		a = inproc_buffer(s, l->src, l->sbuf) + l->soff + lo;
		s->park[c] = 0;
	}
	if (len <= SMALL_REDUCE) {
		combine(s, dst, a, src, len);
		pthread_mutex_unlock(&k->b.mu);
		return;
	}
	me.next = k->b.busy;
	k->b.busy = &me;
	pthread_mutex_unlock(&k->b.mu);

	combine(s, dst, a, src, len);

	pthread_mutex_lock(&k->b.mu);
	for (pp = &k->b.busy; *pp != &me; pp = &(*pp)->next)
		;
	*pp = me.next;
	if (k->b.waiting > 0)
		pthread_cond_broadcast(freed);
	pthread_mutex_unlock(&k->b.mu);
}

/* Whether a successor of message i reads the bytes it writes (see the
 * file comment). */
static bool read_next(const struct topo_plan *p, int64_t i)
{
	const struct topo__msg *m = &p->msg[i];

	for (int64_t k = p->succ_off[i]; k < p->succ_off[i + 1]; k++) {
		const struct topo__msg *f = &p->msg[p->succ[k]];

		if (f->src == m->dst && f->sbuf == m->dbuf &&
		    f->soff < m->doff + m->len && m->doff < f->soff + f->len)
			return true;
		if (f->kind == TOPO__REDUCE && f->dst == m->dst &&
		    f->dbuf == m->dbuf && f->doff < m->doff + m->len &&
		    m->doff < f->doff + f->len)
			return true;
	}
	return false;
}

/* Whether COPY i (between two buffers) streams: see the file comment. */
static inline bool streams(const struct inproc *s, const struct topo_plan *p,
			   int64_t i)
{
	return p->msg[i].len >= s->stream_min && !read_next(p, i);
}

int topo__inproc_streams(const void *state, const struct topo_plan *p,
			 int64_t i)
{
	const struct topo__msg *m = &p->msg[i];

	return m->kind == TOPO__COPY &&
	       !(m->src == m->dst && m->sbuf == m->dbuf) &&
	       streams(state, p, i);
}

static int inproc_deliver_trusted(void *state, const struct topo_plan *p,
				  int64_t i)
{
	struct inproc *s = state;
	const struct topo__msg *m = &p->msg[i];
	unsigned char *src, *dst;

	src = inproc_buffer(s, m->src, m->sbuf) + m->soff;
	dst = inproc_buffer(s, m->dst, m->dbuf) + m->doff;
	if (m->kind == TOPO__COPY) {
		if (s->fuse != NULL && s->fuse[i] == i)
			s->park[i] = 1; /* its first combine writes it */
		else if (m->src == m->dst && m->sbuf == m->dbuf)
			memmove(dst, src, (size_t)m->len);
		else if (streams(s, p, i))
			stream_copy(dst, src, (size_t)m->len);
		else
			memcpy(dst, src, (size_t)m->len);
		return 0;
	}
	reduce_locked(s, p, i, 0, m->len, dst, src);
	return 0;
}

/* Whether message i may be delivered in parts: not a fused copy or
 * combine (a parked copy's first combine writes its bytes whole), nor a
 * move within one buffer (memmove's order). */
static bool inproc_splits(void *state, const struct topo_plan *p, int64_t i)
{
	const struct inproc *s = state;
	const struct topo__msg *m = &p->msg[i];

	if (s->fuse != NULL && s->fuse[i] >= 0)
		return false;
	return !(m->src == m->dst && m->sbuf == m->dbuf);
}

static int inproc_deliver_part(void *state, const struct topo_plan *p,
			       int64_t i, int64_t lo, int64_t hi)
{
	struct inproc *s = state;
	const struct topo__msg *m = &p->msg[i];
	const unsigned char *src =
	    inproc_buffer(s, m->src, m->sbuf) + m->soff + lo;
	unsigned char *dst = inproc_buffer(s, m->dst, m->dbuf) + m->doff + lo;

	if (m->kind != TOPO__COPY)
		reduce_locked(s, p, i, lo, hi - lo, dst, src);
	else if (streams(s, p, i))
		stream_copy(dst, src, (size_t)(hi - lo));
	else
		memcpy(dst, src, (size_t)(hi - lo));
	return 0;
}

static int inproc_deliver(void *state, const struct topo_plan *p, int64_t i)
{
	if (!topo__msg_in_bounds(p, &p->msg[i]))
		return TOPO_EINVAL;
	return inproc_deliver_trusted(state, p, i);
}

/* Every member's buffer of kind b set to c at once: one memset over the
 * arena, slices and the padding between them (which nothing reads). */
static void inproc_fill(void *state, int b, int c)
{
	struct inproc *s = state;

	memset(s->sl.arena[b], c, (size_t)s->sl.bytes[b]);
}

static const struct topo__slices *inproc_slices(void *state)
{
	return &((struct inproc *)state)->sl;
}

int topo__inproc_fused(const void *state, const struct topo_plan *p, int64_t i)
{
	const struct inproc *s = state;

	(void)p;
	return s->fuse != NULL ? s->fuse[i] : -1;
}

const struct topo__transport_ops topo__transport_inproc = {
    .name = "inproc",
    .open = inproc_open,
    .close = inproc_close,
    .buffer = inproc_buffer,
    .deliver = inproc_deliver,
    .deliver_trusted = inproc_deliver_trusted,
    .fill = inproc_fill,
    .slices = inproc_slices,
    .splits = inproc_splits,
    .deliver_part = inproc_deliver_part,
};
