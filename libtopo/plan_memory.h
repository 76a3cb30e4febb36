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

/* Memory the process could be given now, in bytes: the least of
 * MemAvailable (/proc/meminfo, which counts reclaimable caches; else the
 * free pages), the room under RLIMIT_AS and RLIMIT_DATA (ulimit -v, -d)
 * given what the process uses of them, and the room under its cgroup's
 * memory limit (v2 memory.max at every level, or v1); INT64_MAX when
 * none is known.  *limit (when not NULL) names the one that binds. */
int64_t topo__memory_available(const char **limit);

/* What a run needs, in bytes, by kind; a part < 0 stands for more than
 * int64 counts. */
struct topo__memory_need {
	int64_t buffers, plan, run;
};

/* Returns 0 when need fits in the memory available now, else TOPO_ELIMIT
 * with err saying "the run needs N bytes (M MiB: buffers B, plan P, run
 * state R MiB); only A MiB is available under LIMIT". */
int topo__memory_check(const struct topo__memory_need *need, topo_error *err);

#endif /* TOPO_PLAN_MEMORY_H */
