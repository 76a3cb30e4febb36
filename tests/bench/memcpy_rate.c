/*
 * memcpy_rate.c - this machine's memcpy rate, the yardstick of the
 * memory-copy limit in the data-movement benchmark (tests/bench/bench.py).
 *
 *   memcpy_rate BYTES...
 *
 * For each size, one JSON line:
 *   {"bytes": B, "reps": R, "reused_gbs": X, "fresh_gbs": Y,
 *    "reused_stream_gbs": Z}
 * the median over R copies of B bytes, in GB/s (1e9 bytes per second), of
 * one thread's memcpy:
 *   reused - the same source and destination every time, touched before
 *            (warm caches and TLB, as a program reusing its buffers);
 *   fresh  - a newly mapped source and destination every time, both
 *            written before the clock starts (their page faults untimed),
 *            as collrun --fresh and mpi_coll --fresh prepare theirs: what
 *            is left is the cost of memory not yet in the TLB and, beyond
 *            the caches, not in them;
 *   reused_stream - as reused, but copied with streaming (non-temporal)
 *            stores, which write a destination line without reading it
 *            first, as collrun's in-process transport copies large
 *            blocks once its buffers exceed the cache (collrun(1)): the
 *            faster of the two reused rates is the copy limit, so that
 *            the yardstick is never the slower way of copying.
 * R shrinks with the size so that one size takes about a quarter second.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* memcpy with streaming stores (16-byte, to an aligned destination). */
static void stream_copy(unsigned char *dst, const unsigned char *src,
			size_t len)
{
#if defined(__SSE2__)
	size_t i = (16 - (uintptr_t)dst % 16) % 16;

	if (i > len)
		i = len;
	memcpy(dst, src, i);
	for (; i + 64 <= len; i += 64)
		for (int k = 0; k < 64; k += 16)
			_mm_stream_si128(
			    (__m128i *)(void *)(dst + i + k),
			    _mm_loadu_si128(
				(const __m128i *)(const void *)(src + i + k)));
	memcpy(dst + i, src + i, len - i);
	_mm_sfence();
#else
	memcpy(dst, src, len);
#endif
}

static void plain_copy(unsigned char *dst, const unsigned char *src, size_t len)
{
	memcpy(dst, src, len);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static unsigned char *map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("memcpy_rate: mmap");
		exit(1);
	}
	return p;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(double), cmp);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* GB/s of copy over the same warm buffers, the median of reps (times in
 * t[reps]). */
static double reused_rate(void (*copy)(unsigned char *, const unsigned char *,
				       size_t),
			  unsigned char *dst, const unsigned char *src,
			  size_t len, double *t, long reps)
{
	volatile unsigned char sink = 0;

	copy(dst, src, len); /* warm-up */
	for (long i = 0; i < reps; i++) {
		double t0 = now();

		copy(dst, src, len);
		t[i] = now() - t0;
		sink ^= dst[(size_t)i % len];
	}
	(void)sink;
	return (double)len / median(t, (int)reps) / 1e9;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: memcpy_rate BYTES...\n");
		return 2;
	}
	for (int a = 1; a < argc; a++) {
		size_t len = strtoull(argv[a], NULL, 10);
		long reps = len ? (long)((256u << 20) / len) : 0;
		double *t, t0;
		unsigned char *src, *dst;
		volatile unsigned char sink = 0;

		if (len == 0) {
			fprintf(stderr, "memcpy_rate: bad size %s\n", argv[a]);
			return 2;
		}
		if (reps < 7)
			reps = 7;
		if (reps > 2001)
			reps = 2001;
		t = malloc((size_t)reps * sizeof(double));
		if (t == NULL)
			return 1;

		src = map(len);
		dst = map(len);
		memset(src, 0x5a, len);
		memset(dst, 0, len);
		double reused = reused_rate(plain_copy, dst, src, len, t, reps);
		double stream =
		    reused_rate(stream_copy, dst, src, len, t, reps);
		if (memcmp(dst, src, len) != 0) {
			fprintf(stderr, "memcpy_rate: streamed copy differs\n");
			return 1;
		}
		munmap(src, len);
		munmap(dst, len);

		for (long i = 0; i < reps; i++) {
			src = map(len);
			dst = map(len);
			memset(src, (int)(i & 0xff) | 1, len);
			memset(dst, 0, len);
			t0 = now();
			memcpy(dst, src, len);
			t[i] = now() - t0;
			sink ^= dst[len - 1];
			munmap(src, len);
			munmap(dst, len);
		}
		double fresh = (double)len / median(t, (int)reps) / 1e9;
		printf("{\"bytes\": %zu, \"reps\": %ld, \"reused_gbs\": %.4f, "
		       "\"fresh_gbs\": %.4f, \"reused_stream_gbs\": %.4f}\n",
		       len, reps, reused, fresh, stream);
		fflush(stdout);
		free(t);
		(void)sink;
	}
	return 0;
}
