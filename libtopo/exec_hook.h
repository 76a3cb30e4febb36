/*
 * exec_hook.h - running a plan over a transport of the caller's choice, so
 * that a test can make deliveries fail or stall (a worker that fails
 * mid-run, a run past its timeout) and check that the run stops cleanly.
 * Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_EXEC_HOOK_H
#define TOPO_EXEC_HOOK_H

#include "exec_internal.h"

/*
 * topo_plan_run() over transport tr (topo_plan_run uses
 * topo__transport_inproc).  tr->buffer must give every member's buffers:
 * the run fills, resets and verifies them.  A delivery that returns an
 * error stops the run: the other workers drop what is queued, are joined,
 * and the report holds one error of kind "failed" naming the message.
 * Returns as topo_plan_run.
 */
int topo__plan_run_transport(const topo_plan *p,
			     const struct topo_run_params *params,
			     const struct topo__transport_ops *tr,
			     topo_report **out, topo_error *err);

#endif /* TOPO_EXEC_HOOK_H */
