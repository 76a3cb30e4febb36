/*
 * collrun_mpi.h - what collrun-mpi adds to collrun (collrun_mpi.c): the
 * same program, built with an MPI compiler and -DCOLLRUN_MPI, replaying a
 * plan across the processes of an MPI job, rank r hosting task r's
 * endpoints (collrun(1), "ACROSS PROCESSES").
 */
#ifndef COLLRUN_MPI_H
#define COLLRUN_MPI_H

#include "topo.h"

/* MPI_Init; ranks other than 0 write their standard output nowhere and
 * keep their standard error for rank 0 to show if they fail alone.
 * Returns the number of processes. */
int collrun_mpi_start(int *argc, char ***argv);
int collrun_mpi_rank(void);
/* The job must have a process per task of t's machine: returns -1, or
 * says why not (naming file) and returns EXIT_USAGE.  Also maps the
 * group's members to their tasks' ranks. */
int collrun_mpi_check(const topo_tree *t, const char *file);
/* Collective, once per process: rc -1 when this process is ready to run
 * the plan, else its exit status.  Returns -1 when every process is
 * ready; else the status of the lowest rank that is not, whose message
 * rank 0 shows when it is not rank 0's own. */
int collrun_mpi_ready(int rc);
/* topo_plan_new, its memory check counting only the buffers of the
 * members this process hosts (after collrun_mpi_check). */
int collrun_mpi_plan(topo_plan **out, const topo_tree *t,
		     const struct topo_plan_params *params, topo_error *err);
/* topo__run_mpi over MPI_COMM_WORLD with the mapping of
 * collrun_mpi_check. */
int collrun_mpi_run(const topo_plan *p, const struct topo_run_params *rp,
		    topo_report **out, topo_error *err);
/* Collective: agrees (collrun_mpi_ready) if that has not happened, then
 * returns rank 0's status on every process, after MPI_Finalize. */
int collrun_mpi_finish(int rc);

#endif /* COLLRUN_MPI_H */
