/*
 * copy_ideal.c - the least time this machine takes to move the bytes a
 * collective must move, on the CPUs the run has: the copy limit of the
 * data-movement benchmark (tests/bench/replay.py).
 *
 *   copy_ideal OP MEMBERS BYTES THREADS [checked]
 *
 * OP is bcast, scatter, gather, reduce, allreduce, allgather,
 * reduce-scatter or alltoall; BYTES is collrun's --bytes (per member, or
 * per block for the operations with a block per member, collrun(1)).
 * Every member gets a send and a receive buffer of the sizes collrun
 * gives it, and the program writes each byte the operation's result must
 * hold exactly once, straight from where its input lies, with no
 * message, no tree and nothing waited for:
 *
 *   bcast           the root's send buffer into every member's receive
 *                   buffer, the root's included (collrun(1)'s bcast)
 *   scatter         block i of the root's send buffer into member i's
 *                   receive buffer, i = 0..N-1 (the root's own block too:
 *                   MPI_Scatter's root receives it, and collrun verifies it)
 *   gather          member i's block into block i of the root's receive
 *                   buffer, i = 0..N-1
 *   allgather       member i's block into block i of every member's
 *                   receive buffer: N x N blocks
 *   alltoall        block j of member i's send buffer into block i of
 *                   member j's receive buffer: N x N blocks
 *   reduce          the int32 sum of the N send buffers into the root's
 *                   receive buffer, in one pass
 *   allreduce       as reduce, then the sum copied into the N-1 other
 *                   receive buffers
 *   reduce-scatter  block j of the N send buffers summed into member j's
 *                   receive buffer, j = 0..N-1
 *
 * The work is shared among THREADS threads, pinned one per CPU, as
 * collrun --threads shares it: each thread takes the same fraction of
 * every destination (cut on 64-byte lines), so that no thread waits for
 * another and the two halves of a sum stay on the thread that made them.
 * Before every timed repetition each thread clears its part of the
 * destinations, untimed, as collrun resets its receive buffers between
 * iterations, and reads its part of the sources where the send buffers
 * total at most 64 MiB, as collrun's reset reads them back.  Each
 * repetition is timed from a barrier to a barrier.
 *
 * With "checked", every repetition is then checked before the next, as
 * collrun verifies every iteration before it resets the buffers and
 * times the next: each thread compares its share of every destination
 * with the sources (collrun shares its verification of large buffers
 * between its threads), and a thread that is done first waits asleep in
 * a pthread_barrier for the others (collrun's idle workers sleep after a
 * 50 us spin).  The check is not timed, but what follows such a pause is: on the 2-vCPU
 * guest this was written on, a 16 MiB copy after a pause of a
 * verification's length took 1.2-1.5 times as long as one repeated back
 * to back, in some phases of the host (tests/bench/README.md).  Without
 * "checked" the timed repetitions follow each other back to back; the
 * result of each way's untimed first pass and of the last repetition is
 * checked.
 *
 * Four ways of writing are measured: memcpy (and plain stores for the
 * sums) or streaming (non-temporal) stores, which write a line without
 * reading it first, each either a destination after another (each
 * thread's share of it whole) or in segments of 256 KiB, the segment at
 * one offset of every destination before the next (as collrun's
 * segmented messages go: a bcast's source segment is then read once for
 * all its copies, from the cache).  The fastest way's median is the
 * limit, so that the yardstick is never a slow way.  The ways take turns
 * in blocks of repetitions, each block after an untimed pass of its way:
 * taking turns every repetition, each started from the caches the other
 * way left, and on a 2-vCPU Xeon guest (a 300 MiB L3 described) that
 * made both 1.4-1.7 times as slow as alone (2 members' bcast of 16 MiB,
 * memcpy: 2.1-2.2 ms taking turns, 1.44-1.50 alone, 1.16-1.23 alone in
 * segments; collrun took 1.1-1.4), a limit slower than collrun.
 *
 * Output, one JSON line:
 *   {"op": OP, "members": N, "bytes": B, "threads": T, "reps": R,
 *    "checked": C, "written": W, "memcpy_seconds": X, "stream_seconds": Y,
 *    "memcpy_segments_seconds": X2, "stream_segments_seconds": Y2,
 *    "way": NAME, "seconds": min(X, Y, X2, Y2), "min_seconds": A,
 *    "max_seconds": Z, "verified": true}
 * C is true with "checked", false without; W is the bytes the result must
 * hold (written once each); R, the timed repetitions of each way, shrinks
 * with W (checked: with the bytes read too) so that a case takes about a
 * quarter second, checks aside; NAME is the fastest way ("memcpy",
 * "stream", "memcpy_segments" or "stream_segments"), A and Z its fastest
 * and slowest repetition.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if defined(__x86_64__) || defined(__i386__)
#define relax() __builtin_ia32_pause()
#else
#define relax() ((void)0)
#endif

#define MAX_THREADS 256
#define MAX_SRC 4096

/* One destination range, written from one source (a copy) or the sum of
 * several (a reduction).  setup() places it by offsets into the arena
 * (dst_off, and srcs[src_at ..] for the sources); the pointers follow
 * once the arena exists. */
struct item {
	unsigned char *dst;
	const unsigned char **src;
	int nsrc;
	size_t len, dst_off, src_at;
};

static struct item *items;
static size_t nitems;
static int nthreads;
static int reps;
static int checked;	      /* check every repetition (see the top) */
static pthread_barrier_t nap; /* where a thread done checking sleeps */
/* The ways of writing (see the top): bit 0 streaming, bit 1 segments. */
#define NWAYS 4
#define SEGMENT ((size_t)256 << 10)
static const char *const way_name[NWAYS] = {"memcpy", "stream",
					    "memcpy_segments",
					    "stream_segments"};
static double *times[NWAYS];
static int nblocks; /* each way's repetitions come in this many blocks */
static size_t longest; /* the longest item */

/* A spinning barrier: a sleeping one would add a wake-up's tens of
 * microseconds to every repetition.  (collrun's participants spin too.) */
static struct {
	unsigned arrived, phase;
} barrier;

static void barrier_wait(void)
{
	unsigned phase = __atomic_load_n(&barrier.phase, __ATOMIC_ACQUIRE);

	if (__atomic_add_fetch(&barrier.arrived, 1, __ATOMIC_ACQ_REL) ==
	    (unsigned)nthreads) {
		__atomic_store_n(&barrier.arrived, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&barrier.phase, phase + 1, __ATOMIC_RELEASE);
		return;
	}
	while (__atomic_load_n(&barrier.phase, __ATOMIC_ACQUIRE) == phase)
		relax();
}

static double now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *msg)
{
	fprintf(stderr, "copy_ideal: %s\n", msg);
	exit(1);
}

/*
 * The buffers, carved from one arena as collrun carves its members'
 * buffers from arenas (each on a page of its own here).  An arena of
 * 8 MiB or more asks for transparent huge pages, as libtopo's large
 * blocks do (alloc.c), so that neither side pays TLB misses the other
 * does not.
 */
#define PAGE ((size_t)4096)
#define HUGE ((size_t)2 << 20)

static unsigned char *arena;
static size_t arena_size;

/* The offset of a new buffer of len bytes. */
static size_t alloc(size_t len)
{
	size_t at = arena_size;

	arena_size += (len + PAGE - 1) / PAGE * PAGE;
	return at;
}

/* The bytes of the send buffers, and whether each repetition's clear()
 * reads the sources: as collrun's reset reads the send buffers back only
 * where they total at most 64 MiB (exec.c's WARM_BYTES), which a
 * repeated call's caches can hold, so that both sides start from the same
 * caches. */
#define WARM_BYTES ((size_t)64 << 20)
static size_t send_bytes;
static int warm_sources;

/* alloc() for a send buffer. */
static size_t alloc_send(size_t len)
{
	send_bytes += len;
	return alloc(len);
}

static void arena_new(void)
{
	size_t size = arena_size > 0 ? arena_size : PAGE;
	void *p = NULL;

	if (posix_memalign(&p, HUGE, size) != 0)
		die("out of memory");
	if (size >= (size_t)8 << 20)
		(void)madvise(p, size / HUGE * HUGE, MADV_HUGEPAGE);
	arena = p;
	memset(arena, 0x5a, size);
}

static void stream_copy(unsigned char *dst, const unsigned char *src,
			size_t len)
{
#if defined(__SSE2__)
	size_t i = 0;

	/* dst is on a 64-byte line (the ranges are cut on lines) */
	for (; i + 64 <= len; i += 64) {
		__m128i a = _mm_loadu_si128((const __m128i *)(src + i));
		__m128i b = _mm_loadu_si128((const __m128i *)(src + i + 16));
		__m128i c = _mm_loadu_si128((const __m128i *)(src + i + 32));
		__m128i d = _mm_loadu_si128((const __m128i *)(src + i + 48));

		_mm_stream_si128((__m128i *)(dst + i), a);
		_mm_stream_si128((__m128i *)(dst + i + 16), b);
		_mm_stream_si128((__m128i *)(dst + i + 32), c);
		_mm_stream_si128((__m128i *)(dst + i + 48), d);
	}
	memcpy(dst + i, src + i, len - i);
#else
	memcpy(dst, src, len);
#endif
}

/* int32 sums, a chunk of the destination at a time, each source added
 * into it in turn.  Unsigned, so that sums of the 0x5a bytes here wrap as
 * defined; the instructions are a signed int32 sum's.  The chunk is large
 * so that each source is read in long runs, which the hardware prefetches:
 * with 8 KiB chunks the sum of 16 inputs of 16 MiB took 15.5-16.0 ms on
 * 2 threads, slower than collrun's tree (11.5 ms); with 1 MiB 7.4-8.2 ms
 * (256 KiB: 8.0-9.1).  A limit slower than what collrun does would
 * flatter it. */
#define CHUNK ((size_t)1 << 20)

static void add2(uint32_t *restrict d, const uint32_t *restrict a,
		 const uint32_t *restrict b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] = a[i] + b[i];
}

static void add1(uint32_t *restrict d, const uint32_t *restrict a, size_t n)
{
	for (size_t i = 0; i < n; i++)
		d[i] += a[i];
}

static void sum_range(const struct item *it, size_t lo, size_t hi, int stream)
{
	_Alignas(64) static __thread uint32_t scratch[CHUNK / 4];

	for (size_t at = lo; at < hi; at += CHUNK) {
		size_t len = hi - at < CHUNK ? hi - at : CHUNK, n = len / 4;
		uint32_t *d = stream ? scratch : (uint32_t *)(it->dst + at);

		add2(d, (const uint32_t *)(it->src[0] + at),
		     (const uint32_t *)(it->src[1] + at), n);
		for (int k = 2; k < it->nsrc; k++)
			add1(d, (const uint32_t *)(it->src[k] + at), n);
		if (stream)
			stream_copy(it->dst + at, (const unsigned char *)d,
				    len);
	}
}

/* Where thread t's part of a range of len bytes starts: on a line. */
static size_t cut(size_t len, int t)
{
	return (size_t)((unsigned __int128)len * (unsigned)t /
			(unsigned)nthreads) &
	       ~(size_t)63;
}

/* Thread t's part of a range of len bytes, the last thread's to the end. */
static void part(size_t len, int t, size_t *lo, size_t *hi)
{
	*lo = cut(len, t);
	*hi = t + 1 == nthreads ? len : cut(len, t + 1);
}

/* Thread t's share of every item, written the way way (see the top): in
 * segments, the bytes [at, at + SEGMENT) of each share before those of
 * the next segment (a segment of 256 KiB keeps each share's start on a
 * line); else each share whole. */
static void work(int t, int way)
{
	int stream = way & 1;
	size_t seg = way & 2 ? SEGMENT : longest;

	for (size_t at = 0; at < longest; at += seg)
		for (size_t k = 0; k < nitems; k++) {
			const struct item *it = &items[k];
			size_t lo, hi;

			part(it->len, t, &lo, &hi);
			if (hi - lo <= at)
				continue;
			lo += at;
			if (hi - lo > seg)
				hi = lo + seg;
			if (it->nsrc > 1)
				sum_range(it, lo, hi, stream);
			else if (stream)
				stream_copy(it->dst + lo, it->src[0] + lo,
					    hi - lo);
			else
				memcpy(it->dst + lo, it->src[0] + lo, hi - lo);
		}
#if defined(__SSE2__)
	if (stream)
		_mm_sfence();
#endif
}

/* Thread t's part of the destinations cleared, then (warm_sources) its
 * part of the sources read (a byte a line), as collrun's reset leaves its
 * buffers. */
static unsigned char warm;

static void clear(int t)
{
	unsigned char acc = 0;

	for (size_t k = 0; k < nitems; k++) {
		size_t lo, hi;

		part(items[k].len, t, &lo, &hi);
		if (hi > lo)
			memset(items[k].dst + lo, 0, hi - lo);
	}
	for (size_t k = 0; warm_sources && k < nitems; k++) {
		size_t lo, hi;

		part(items[k].len, t, &lo, &hi);
		for (int s = 0; s < items[k].nsrc; s++) {
			const volatile unsigned char *c = items[k].src[s];

			for (size_t i = lo; i < hi; i += 64)
				acc ^= c[i];
		}
	}
	__atomic_fetch_xor(&warm, acc, __ATOMIC_RELAXED);
}

/* Thread t's share of every destination (part) compared with the sum of
 * its sources (a copy's one source); a difference ends the program with
 * status 1. */
static void check(int t)
{
	_Alignas(64) uint32_t want[CHUNK / 4];

	for (size_t k = 0; k < nitems; k++) {
		const struct item *it = &items[k];
		size_t lo, hi;

		part(it->len, t, &lo, &hi);
		if (hi <= lo)
			continue;
		if (it->nsrc == 1) {
			if (memcmp(it->dst + lo, it->src[0] + lo, hi - lo) != 0)
				die("wrong result");
			continue;
		}
		/* the sums again, a chunk at a time, by the kernels sum_range
		 * uses: its whole int32 elements, as sum_range writes them */
		for (size_t at = lo; at < hi; at += CHUNK) {
			size_t len = hi - at < CHUNK ? hi - at : CHUNK;
			size_t n = len / 4;

			add2(want, (const uint32_t *)(it->src[0] + at),
			     (const uint32_t *)(it->src[1] + at), n);
			for (int k = 2; k < it->nsrc; k++)
				add1(want, (const uint32_t *)(it->src[k] + at),
				     n);
			if (memcmp(it->dst + at, want, n * 4) != 0)
				die("wrong result");
		}
	}
}

static void *thread_main(void *arg)
{
	int t = (int)(intptr_t)arg;
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(t % CPU_SETSIZE, &set);
	(void)pthread_setaffinity_np(pthread_self(), sizeof set, &set);
	/* each block of a way's repetitions after an untimed pass of it:
	 * pages, TLB and caches as that way leaves them, and its result
	 * checked */
	for (int b = 0; b < nblocks; b++)
		for (int way = 0; way < NWAYS; way++)
			for (int r = -1; r < reps / nblocks; r++) {
				double t0 = 0;

				clear(t);
				barrier_wait();
				if (t == 0)
					t0 = now();
				work(t, way);
				barrier_wait();
				if (t == 0 && r >= 0)
					times[way][b * (reps / nblocks) + r] =
					    now() - t0;
				/* the untimed passes' results too, so that
				 * every way is checked without "checked" */
				if (checked || r < 0) {
					check(t);
					(void)pthread_barrier_wait(&nap);
				}
			}
	return NULL;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static long parse(const char *s, const char *what, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno != 0 || end == s || *end != '\0' || v < 1 || v > max) {
		fprintf(stderr, "copy_ideal: bad %s '%s'\n", what, s);
		exit(2);
	}
	return v;
}

/* An item writing len bytes at offset dst from the nsrc sources at
 * srcs[src_at ..]. */
static void add_item(size_t dst, size_t src_at, int nsrc, size_t len)
{
	items[nitems].dst_off = dst;
	items[nitems].src_at = src_at;
	items[nitems].nsrc = nsrc;
	items[nitems].len = len;
	nitems++;
}

/* The buffers and items of op over n members, b bytes as collrun's
 * --bytes (see the top of the file). */
static void setup(const char *op, long n, size_t b, size_t *send, size_t *recv,
		  size_t *srcs)
{
	if (!strcmp(op, "bcast")) {
		send[0] = alloc_send(b);
		for (long i = 0; i < n; i++) {
			recv[i] = alloc(b);
			srcs[i] = send[0];
			add_item(recv[i], (size_t)i, 1, b);
		}
	} else if (!strcmp(op, "scatter")) {
		send[0] = alloc_send(b * (size_t)n);
		for (long i = 0; i < n; i++) {
			recv[i] = alloc(b);
			srcs[i] = send[0] + (size_t)i * b;
			add_item(recv[i], (size_t)i, 1, b);
		}
	} else if (!strcmp(op, "gather")) {
		recv[0] = alloc(b * (size_t)n);
		for (long i = 0; i < n; i++) {
			send[i] = alloc_send(b);
			srcs[i] = send[i];
			add_item(recv[0] + (size_t)i * b, (size_t)i, 1, b);
		}
	} else if (!strcmp(op, "allgather") || !strcmp(op, "alltoall")) {
		int a2a = !strcmp(op, "alltoall");

		for (long i = 0; i < n; i++) {
			send[i] = alloc_send(a2a ? b * (size_t)n : b);
			recv[i] = alloc(b * (size_t)n);
		}
		/* member j receives block i from member i: all of one
		 * source's blocks in a row, as the senders send them */
		for (long i = 0; i < n; i++)
			for (long j = 0; j < n; j++) {
				size_t k = (size_t)(i * n + j);

				srcs[k] = send[i] + (a2a ? (size_t)j * b : 0);
				add_item(recv[j] + (size_t)i * b, k, 1, b);
			}
	} else if (!strcmp(op, "reduce") || !strcmp(op, "allreduce")) {
		for (long i = 0; i < n; i++) {
			send[i] = alloc_send(b);
			srcs[i] = send[i];
		}
		recv[0] = alloc(b);
		add_item(recv[0], 0, (int)n, b);
		if (!strcmp(op, "allreduce")) {
			srcs[n] = recv[0];
			for (long i = 1; i < n; i++) {
				recv[i] = alloc(b);
				add_item(recv[i], (size_t)n, 1, b);
			}
		}
	} else if (!strcmp(op, "reduce-scatter")) {
		for (long i = 0; i < n; i++)
			send[i] = alloc_send(b * (size_t)n);
		for (long j = 0; j < n; j++) {
			recv[j] = alloc(b);
			for (long i = 0; i < n; i++)
				srcs[j * n + i] = send[i] + (size_t)j * b;
			add_item(recv[j], (size_t)(j * n), (int)n, b);
		}
	} else {
		fprintf(stderr, "copy_ideal: unknown operation '%s'\n", op);
		exit(2);
	}
}

int main(int argc, char **argv)
{
	const char *op;
	long n, t;
	size_t b, written = 0, touched = 0;
	size_t *send, *recv, *srcs;
	const unsigned char **srcp;
	pthread_t tid[MAX_THREADS];

	if (argc == 6 && !strcmp(argv[5], "checked"))
		checked = 1;
	else if (argc != 5) {
		fprintf(stderr, "usage: copy_ideal OP MEMBERS BYTES THREADS "
				"[checked]\n");
		return 2;
	}
	op = argv[1];
	n = parse(argv[2], "MEMBERS", MAX_SRC);
	b = (size_t)parse(argv[3], "BYTES", 1L << 34);
	t = parse(argv[4], "THREADS", MAX_THREADS);
	nthreads = (int)t;

	send = calloc((size_t)n, sizeof *send);
	recv = calloc((size_t)n, sizeof *recv);
	items = calloc((size_t)(n * n + n), sizeof *items);
	srcs = calloc((size_t)(n * n + n), sizeof *srcs);
	srcp = calloc((size_t)(n * n + n), sizeof *srcp);
	if (send == NULL || recv == NULL || items == NULL || srcs == NULL ||
	    srcp == NULL)
		die("out of memory");

	setup(op, n, b, send, recv, srcs);
	warm_sources = send_bytes <= WARM_BYTES;
	arena_new();
	for (size_t k = 0; k < (size_t)(n * n + n); k++)
		srcp[k] = arena + srcs[k];
	for (size_t k = 0; k < nitems; k++) {
		items[k].dst = arena + items[k].dst_off;
		items[k].src = srcp + items[k].src_at;
	}
	if (n == 1 && nitems == 0)
		die("nothing to move with one member");
	for (size_t k = 0; k < nitems; k++) {
		written += items[k].len;
		touched += items[k].len * (size_t)(items[k].nsrc + 1);
	}

	for (size_t k = 0; k < nitems; k++)
		if (items[k].len > longest)
			longest = items[k].len;
	/* about a quarter second of all ways, at least 5 repetitions of
	 * each; checked, by every byte read and written, since each
	 * repetition's check reads them all again; in 3 blocks a way from 9
	 * repetitions on */
	reps = (int)(0.0625 / ((double)(checked ? touched : written) / 20e9));
	reps = reps < 5 ? 5 : reps > 500 ? 500 : reps;
	nblocks = reps >= 9 ? 3 : 1;
	reps -= reps % nblocks;
	for (int w = 0; w < NWAYS; w++) {
		times[w] = calloc((size_t)reps, sizeof(double));
		if (times[w] == NULL)
			die("out of memory");
	}

	if (pthread_barrier_init(&nap, NULL, (unsigned)nthreads) != 0)
		die("pthread_barrier_init failed");
	for (int i = 1; i < nthreads; i++)
		if (pthread_create(&tid[i], NULL, thread_main,
				   (void *)(intptr_t)i) != 0)
			die("pthread_create failed");
	thread_main((void *)(intptr_t)0);
	for (int i = 1; i < nthreads; i++)
		pthread_join(tid[i], NULL);

	/* the last pass's result (every pass's, checked; the untimed ones'
	 * above), so that a fast wrong kernel of either way cannot pass
	 * ("verified" in the output; a wrong result exits 1) */
	pthread_barrier_destroy(&nap);
	if (!checked)
		for (int t = 0; t < nthreads; t++)
			check(t);

	{
		double med[NWAYS];
		int best = 0;

		for (int w = 0; w < NWAYS; w++) {
			med[w] = median(times[w], reps); /* sorts times[w] */
			if (med[w] < med[best])
				best = w;
		}
		printf("{\"op\": \"%s\", \"members\": %ld, \"bytes\": %zu, "
		       "\"threads\": %d, \"reps\": %d, \"checked\": %s, "
		       "\"written\": %zu",
		       op, n, b, nthreads, reps, checked ? "true" : "false",
		       written);
		for (int w = 0; w < NWAYS; w++)
			printf(", \"%s_seconds\": %.9g", way_name[w], med[w]);
		printf(", \"way\": \"%s\", \"seconds\": %.9g, "
		       "\"min_seconds\": %.9g, \"max_seconds\": %.9g, "
		       "\"verified\": true}\n",
		       way_name[best], med[best], times[best][0],
		       times[best][reps - 1]);
	}
	for (int w = 0; w < NWAYS; w++)
		free(times[w]);
	free(arena);
	free(srcp);
	free(srcs);
	free(items);
	free(recv);
	free(send);
	return 0;
}
