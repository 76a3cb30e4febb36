/*
 * alloc.c - the library's allocation wrappers and the fault-injection hook.
 *
 * Every allocation goes through here so that a test can fail the Nth one
 * and check that each caller cleans up and reports TOPO_ENOMEM.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Allocations left before the injected failure; < 0 means never fail.
 * Atomic because the executor allocates from worker threads. */
static _Atomic long fail_countdown = -1;
static _Atomic long alloc_count;

long topo__alloc_fail_after(long n)
{
	atomic_store(&fail_countdown, n);
	return atomic_load(&alloc_count);
}

static int injected_failure(void)
{
	long left;

	atomic_fetch_add(&alloc_count, 1);
	left = atomic_load(&fail_countdown);
	while (left >= 0) {
		if (atomic_compare_exchange_weak(&fail_countdown, &left,
						 left - 1))
			return left == 0;
	}
	return 0;
}

void *topo__malloc(size_t size)
{
	if (injected_failure())
		return NULL;
	return malloc(size == 0 ? 1 : size);
}

void *topo__calloc(size_t count, size_t size)
{
	if (injected_failure())
		return NULL;
	if (count == 0 || size == 0)
		count = size = 1;
	return calloc(count, size);
}

void *topo__realloc(void *p, size_t size)
{
	if (injected_failure())
		return NULL;
	return realloc(p, size == 0 ? 1 : size);
}

void *topo__mallocarray(size_t count, size_t size)
{
	if (size != 0 && count > SIZE_MAX / size)
		return NULL;
	return topo__malloc(count * size);
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
