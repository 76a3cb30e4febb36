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
#include "sys/sys.h"

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
