/*
 * exec_internal.h - everything the replay engine keeps private, by concern:
 * the plan (plan/plan.h), input data and checks (run/verify.h), transports
 * (run/transport.h), two-sided schedules (run/sched.h) and the worker pool
 * (run/pool.h).  Code that needs only one of them includes that header;
 * this one is for the engine and the tests, which use them all.  Private
 * to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_EXEC_INTERNAL_H
#define TOPO_EXEC_INTERNAL_H

#include "plan/plan.h"
#include "run/pool.h"
#include "run/sched.h"
#include "run/transport.h"
#include "run/verify.h"

#endif /* TOPO_EXEC_INTERNAL_H */
