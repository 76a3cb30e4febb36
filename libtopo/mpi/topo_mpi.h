/*
 * topo_mpi.h - running a plan across the processes of an MPI job
 * (exec_mpi.c), over the plan's two-sided schedules (exec_internal.h,
 * "Two-sided schedules").  Built only where an MPI compiler is found
 * (the Makefile's MPICC); private to libtopo and its MPI programs: define
 * TOPO_INTERNAL.
 */
#ifndef TOPO_MPI_H
#define TOPO_MPI_H

#include <mpi.h>

#include "topo.h"

/*
 * Runs plan p across the processes of comm, collectively: every process
 * calls it with the same plan (each made its own from the same file and
 * parameters) and the same params.  Process h holds the members whose
 * host[i] is h (0 <= host[i] < the size of comm): their buffers, inputs
 * and verification; every message between two processes travels over
 * comm with tag = its number in the schedule (topo__sched_new).
 *
 * As topo_plan_run: params.iterations iterations (each timed from a
 * barrier to the last message of the slowest process: the report's
 * seconds are the maximum over processes of each one's time), every byte
 * of every member verified after each, a barrier's guarantee checked, and
 * the whole run bounded by params.timeout; params.threads is ignored (one
 * thread per process).  On every process *out gets the report: the
 * totals and verdict of the whole job, and on the process of rank 0 in
 * comm the errors found by all, rank by rank (up to the report's limit).
 *
 * Returns 0, or the same negative code on every process: TOPO_EARG (a
 * host out of range, a predict-only plan), TOPO_ELIMIT (a message of more
 * than INT_MAX bytes, more wire messages between two processes than the
 * MPI library's tags count, buffers larger than memory), TOPO_ENOMEM, or
 * TOPO_EIO (an MPI call failed); err says which process and why.
 */
int topo__run_mpi(const topo_plan *p, const struct topo_run_params *params,
		  const int32_t *host, MPI_Comm comm, topo_report **out,
		  topo_error *err);

#endif /* TOPO_MPI_H */
