/*
 * alloc_hook.h - the allocation fault-injection hook's extras, shared by
 * alloc.c, json_read.c (which routes jansson through it) and the unit
 * tests.  Private to libtopo: define TOPO_INTERNAL.  Test-only: see
 * alloc.c.
 */
#ifndef TOPO_ALLOC_HOOK_H
#define TOPO_ALLOC_HOOK_H

#include "topo_internal.h"

/* Is the TOPO_FAIL_ALLOC environment hook set (a valid N >= 0)?  Reads the
 * environment once per process (pthread_once). */
bool topo__alloc_env_hooked(void);

/* Like topo__alloc_fail_after(n), but every allocation from then on fails
 * too, until the next topo__alloc_fail_after() or topo__alloc_fail_from()
 * call (n < 0: never fail).  For code that survives one failure by falling
 * back on another allocation.  Returns the number of allocations made so
 * far. */
long topo__alloc_fail_from(long n);

#endif /* TOPO_ALLOC_HOOK_H */
