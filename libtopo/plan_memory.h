/*
 * plan_memory.h - the check of a run's buffers against the memory the
 * system has available (plan.c), shared by the planner, which refuses a
 * plan before building its messages, and the in-process transport, which
 * checks its exact arena size before allocating.  Private to libtopo:
 * define TOPO_INTERNAL.
 */
#ifndef TOPO_PLAN_MEMORY_H
#define TOPO_PLAN_MEMORY_H

#include "topo_internal.h"

/* Memory the system could give us now, in bytes: MemAvailable from
 * /proc/meminfo (which counts reclaimable caches), else the free pages;
 * INT64_MAX when neither is known. */
int64_t topo__memory_available(void);

/* Returns 0 when `need` bytes of buffers fit in the memory available now,
 * else TOPO_ELIMIT with err saying "buffers need N bytes (M MiB); only A
 * MiB of memory is available".  need < 0 stands for more than int64
 * counts. */
int topo__memory_check(int64_t need, topo_error *err);

#endif /* TOPO_PLAN_MEMORY_H */
