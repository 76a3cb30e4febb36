/*
 * alloc.c - the library's allocation wrappers and the fault-injection hook.
 *
 * Every allocation goes through here so that a test can fail the Nth one
 * and check that each caller cleans up and reports TOPO_ENOMEM.
 *
 * Two ways to arm the hook, both for tests only:
 *  - topo__alloc_fail_after(n), from a unit test linked against the
 *    library;
 *  - the environment variable TOPO_FAIL_ALLOC=N (a decimal N >= 0), read
 *    once per process at the first allocation, which makes the N-th
 *    allocation of the process (0-based) fail, so that a test script can
 *    drive the programs (tests/fault/alloc.sh).  When it is set,
 *    json_read.c also routes jansson's allocations through here, so that
 *    the JSON parser's allocations are failed and counted like the
 *    library's own.  Any other value (empty, negative, not a number) leaves
 *    the hook unarmed.  It is not part of the interface: programs must not
 *    rely on it, and nothing is printed (the library never prints): a test
 *    finds how many allocations a command makes by raising N until the
 *    command succeeds.
 */
#define TOPO_INTERNAL
#include "alloc_hook.h"
#include "sys/sys.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Allocations left before the injected failure; < 0 means never fail.
 * Atomic because the executor allocates from worker threads.  Sticky: the
 * failure does not end at one allocation (topo__alloc_fail_from). */
static _Atomic long fail_countdown = -1;
static _Atomic bool fail_sticky;
static _Atomic long alloc_count;

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static bool env_hooked;

/* Arms the hook from TOPO_FAIL_ALLOC (test-only, see the top). */
static void read_env(void)
{
	const char *s = getenv("TOPO_FAIL_ALLOC");
	char *end;
	long n;

	if (s == NULL || *s < '0' || *s > '9')
		return;
	errno = 0;
	n = strtol(s, &end, 10);
	if (errno != 0 || *end != '\0')
		return;
	atomic_store(&fail_countdown, n);
	env_hooked = true;
}

bool topo__alloc_env_hooked(void)
{
	pthread_once(&env_once, read_env);
	return env_hooked;
}

long topo__alloc_fail_after(long n)
{
	/* The environment is read first, so that an explicit call wins. */
	pthread_once(&env_once, read_env);
	atomic_store(&fail_sticky, false);
	atomic_store(&fail_countdown, n);
	return atomic_load(&alloc_count);
}

long topo__alloc_fail_from(long n)
{
	pthread_once(&env_once, read_env);
	atomic_store(&fail_countdown, n);
	atomic_store(&fail_sticky, n >= 0);
	return atomic_load(&alloc_count);
}

static int injected_failure(void)
{
	long left;

	pthread_once(&env_once, read_env);
	atomic_fetch_add(&alloc_count, 1);
	left = atomic_load(&fail_countdown);
	while (left >= 0) {
		if (left == 0 && atomic_load(&fail_sticky))
			return 1;
		if (atomic_compare_exchange_weak(&fail_countdown, &left,
						 left - 1))
			return left == 0;
	}
	return 0;
}

/*
 * Huge pages for large arrays.  A plan over 8,388,608 members is about
 * 0.9 GiB of arrays, each written once in turn: in 4 KiB pages that is
 * 230,000 page faults, and on a virtual machine whose page faults are
 * costly (a paravirtualised guest: each one exits to the hypervisor) the
 * faults and the TLB misses of the planning that walks those arrays can
 * take more than half of the whole run (docs/CONSTANTS.md).  So a
 * block of at least topo__tune.hugepage_min bytes asks the kernel for
 * transparent huge pages (MADV_HUGEPAGE) over the 2 MiB-aligned part of
 * it, before any of its pages is touched: the kernel then maps 2 MiB at a
 * fault where it has them, and 4 KiB pages where it has not.  Only advice:
 * a kernel without transparent huge pages, or with them turned off
 * ("never"), ignores it, and the block is the same memory either way.
 * Blocks from the heap may share their first and last huge page with
 * other blocks: those two are left out.
 */
#define HUGE_PAGE ((uintptr_t)2 << 20)

/* (the default of topo__tune.hugepage_min: tune.c) */

static void *advise_huge(void *p, size_t size)
{
	uintptr_t a, b;

	if (p == NULL || size < topo__tune.hugepage_min)
		return p;
	a = ((uintptr_t)p + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	b = ((uintptr_t)p + size) & ~(HUGE_PAGE - 1);
	if (b > a)
		(void)madvise((void *)a, b - a, MADV_HUGEPAGE);
	return p;
}

void *topo__malloc(size_t size)
{
	if (injected_failure())
		return NULL;
	return advise_huge(malloc(size == 0 ? 1 : size), size);
}

void *topo__calloc(size_t count, size_t size)
{
	if (injected_failure())
		return NULL;
	if (count == 0 || size == 0)
		count = size = 1;
	if (count > SIZE_MAX / size)
		return NULL; /* as calloc: count * size would wrap */
	return advise_huge(calloc(count, size), count * size);
}

void *topo__realloc(void *p, size_t size)
{
	if (injected_failure())
		return NULL;
	/* Grown in place or moved, the block's new pages are untouched. */
	return advise_huge(realloc(p, size == 0 ? 1 : size), size);
}

void *topo__mallocarray(size_t count, size_t size)
{
	if (size != 0 && count > SIZE_MAX / size)
		return NULL;
	return topo__malloc(count * size);
}

/*
 * Large buffers.  The members' buffers of a run are one arena per kind,
 * up to gigabytes, allocated once per run and written from the first
 * byte to the last.  From malloc such a block is a mapping of glibc's
 * anyway, but one that starts 16 bytes into a page, so that its first
 * and last huge pages are left out of the advice above; and under
 * AddressSanitizer each is worse: the allocator writes the block's
 * shadow (an eighth of its size) when it maps it and again when it is
 * freed, a large part of a second for a gigabyte (docs/CONSTANTS.md),
 * which the deadline of a run cannot cut short.  So a block of at least
 * topo__tune.map_min bytes is mapped here: over-allocated by a huge page and
 * trimmed to start on a 2 MiB boundary, advised to use huge pages over
 * all of it, and followed by a page with no access, so that a write
 * past its (page-rounded) end faults in every build, where the heap's
 * redzone caught it under a sanitizer only.  Zeroed, like any fresh
 * anonymous mapping.
 */
/* (the default of topo__tune.map_min: tune.c) */

static _Atomic long blocks_mapped;

long topo__blocks_mapped(void)
{
	return atomic_load(&blocks_mapped);
}

void *topo__block_alloc(struct topo__block *b, size_t size)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len, total;
	uintptr_t base, a, end;
	void *m;

	b->p = NULL;
	b->mapped = 0;
	if (size < topo__tune.map_min)
		return b->p = topo__malloc(size);
	if (injected_failure())
		return NULL;
	if (size > SIZE_MAX - 2 * HUGE_PAGE - 2 * page)
		return NULL;
	len = (size + page - 1) & ~(page - 1);
	total = len + page + HUGE_PAGE;
	m = mmap(NULL, total, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return NULL;
	base = (uintptr_t)m;
	a = (base + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1);
	end = a + len + page;
	if (a > base)
		(void)munmap(m, a - base);
	if (base + total > end)
		(void)munmap((void *)end, base + total - end);
	if (mprotect((void *)(a + len), page, PROT_NONE) != 0) {
		(void)munmap((void *)a, len + page);
		return NULL;
	}
	(void)madvise((void *)a, len, MADV_HUGEPAGE);
	b->p = (void *)a;
	b->mapped = len + page;
	atomic_fetch_add(&blocks_mapped, 1);
	return b->p;
}

void topo__block_free(struct topo__block *b)
{
	if (b->mapped > 0) {
		(void)munmap(b->p, b->mapped);
		atomic_fetch_sub(&blocks_mapped, 1);
	} else {
		topo__free(b->p);
	}
	b->p = NULL;
	b->mapped = 0;
}

char *topo__strdup(const char *s)
{
	size_t len = strlen(s) + 1;
	char *copy = topo__malloc(len);

	if (copy != NULL)
		memcpy(copy, s, len);
	return copy;
}

void topo__free(void *p)
{
	free(p);
}

/*
 * Populating a large fresh array in the background.  An array of many
 * megabytes that the caller is about to fill costs a page fault per 4 KiB
 * page (the kernel zeroes each one): about a third of predicting a
 * broadcast over 8,388,608 members, in a virtual machine.  A thread asks
 * the kernel to populate the array's pages (MADV_POPULATE_WRITE, Linux
 * 5.14; it never changes their contents, so the caller may write the
 * array meanwhile) on the other CPU while the caller works on something
 * else.  Only an optimisation: without the call, a thread or a CPU to
 * spare, nothing happens and the caller faults the pages in itself.
 */
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23
#endif

/* Arrays smaller than this fault in quickly enough (a test lowers it to
 * have every array populated). */
/* (the default of topo__tune.populate_min: tune.c) */

/* Populated at a time, between looks at the stop flag: a few huge pages,
 * some milliseconds where a virtual machine's host backs its memory at
 * the first touch. */
#define POPULATE_STEP ((uintptr_t)8 << 20)

static void *populate_main(void *arg)
{
	struct topo__populate *pp = arg;

	for (size_t i = 0; i < pp->n; i++) {
		uintptr_t page = (uintptr_t)4096;
		uintptr_t a = ((uintptr_t)pp->p[i] + page - 1) & ~(page - 1);
		uintptr_t b = ((uintptr_t)pp->p[i] + pp->len[i]) & ~(page - 1);

		while (a < b) {
			uintptr_t e =
			    b - a > POPULATE_STEP ? a + POPULATE_STEP : b;

			if (atomic_load_explicit(&pp->stop,
						 memory_order_relaxed))
				return NULL;
			(void)madvise((void *)a, e - a, MADV_POPULATE_WRITE);
			a = e;
		}
	}
	return NULL;
}

void topo__populate_add(struct topo__populate *pp, void *p, size_t len)
{
	if (p != NULL && len >= topo__tune.populate_min && len > 0 &&
	    pp->n < sizeof(pp->p) / sizeof(pp->p[0])) {
		pp->p[pp->n] = p;
		pp->len[pp->n++] = len;
	}
}

void topo__populate_start(struct topo__populate *pp)
{
	size_t total = 0;

	pp->started = false;
	if (pp->n == 0)
		return;
	for (size_t i = 0; i < pp->n; i++)
		total += pp->len[i];
	/* Never the cause of memory running out: populated pages are the
	 * caller's to fill, but one that stops early (a faulty table, an
	 * error) would not have touched them all. */
	if (total > (size_t)(topo__memory_available(NULL) / 4)) {
		pp->n = 0;
		return;
	}
	if (topo__cpus_allowed(NULL, 0) < 2)
		return; /* no CPU to spare: it would only take turns */
	atomic_store(&pp->stop, false);
	pp->started = pthread_create(&pp->th, NULL, populate_main, pp) == 0;
}

void topo__populate_wait(struct topo__populate *pp)
{
	if (pp->started)
		pthread_join(pp->th, NULL);
	pp->started = false;
	pp->n = 0;
}

void topo__populate_stop(struct topo__populate *pp)
{
	if (pp->started)
		atomic_store(&pp->stop, true);
	topo__populate_wait(pp);
}
