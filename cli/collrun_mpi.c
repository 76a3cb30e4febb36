/*
 * collrun_mpi.c - collrun-mpi's part of collrun (collrun_mpi.h): starting
 * and ending MPI, the check that the job fits the machine, the agreement
 * that every process is ready before the first collective, and the run
 * itself (libtopo/mpi/exec_mpi.c).
 *
 * Every process parses the same command line and loads, compiles and
 * plans the same files, so they all fail alike on bad input; rank 0
 * prints.  What only some processes meet (memory, a file that differs
 * between hosts) is agreed on before any of them starts the run, so that
 * no process waits in a collective the others never reach.
 */
#define TOPO_INTERNAL
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <mpi.h>

#include "collrun_mpi.h"
#include "exec_internal.h"
#include "topo_mpi.h"
#include "util.h"

static int rank, size;
static int agreed; /* collrun_mpi_ready has run */
static int32_t *host;

int collrun_mpi_start(int *argc, char ***argv)
{
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (rank != 0) {
		int fd = open("/dev/null", O_WRONLY);
		FILE *kept = tmpfile();

		if (fd >= 0) {
			fflush(stdout);
			dup2(fd, STDOUT_FILENO);
			close(fd);
		}
		/* standard error is unbuffered: what it says goes straight
		 * to the file, read back by collrun_mpi_ready */
		if (kept != NULL)
			dup2(fileno(kept), STDERR_FILENO);
	}
	return size;
}

int collrun_mpi_rank(void)
{
	return rank;
}

int collrun_mpi_check(const topo_tree *t, const char *file)
{
	const topo_group *g = topo_tree_group(t);
	const topo_machine *m = topo_group_machine(g);
	int32_t tasks = topo_machine_tasks(m),
		per = topo_machine_endpoints_per_task(m),
		n = topo_group_size(g);
	const int32_t *members = topo_group_members(g);

	if (tasks != size) {
		cli_msg("%s: the machine has %d task%s and the job %d "
			"process%s; run it with mpirun -np %d (rank r hosts "
			"task r)",
			cli_source(file), (int)tasks, tasks == 1 ? "" : "s",
			size, size == 1 ? "" : "es", (int)tasks);
		return EXIT_USAGE;
	}
	host = malloc((size_t)n * sizeof(*host) + 1);
	if (host == NULL) {
		cli_msg("out of memory");
		return EXIT_FAILED;
	}
	/* endpoint id = task * endpoints per task + row (collc(5)) */
	for (int32_t i = 0; i < n; i++)
		host[i] = members[i] / per;
	return -1;
}

/* Rank 0 shows the message another process wrote: its first line as
 * "collrun-mpi: process K: ...", the rest as it came. */
static void show(int from, const char *text)
{
	const char *prefix = "collrun-mpi: ";
	size_t lp = strlen(prefix);

	if (text[0] == '\0') {
		cli_msg("process %d stopped without saying why", from);
		return;
	}
	if (strncmp(text, prefix, lp) == 0)
		text += lp;
	fprintf(stderr, "%sprocess %d: %s", prefix, from, text);
	if (text[strlen(text) - 1] != '\n')
		fputc('\n', stderr);
}

int collrun_mpi_ready(int rc)
{
	struct {
		int code;
		char text[4096];
	} msg;
	int me = rc >= 0 ? rank : size, first = size;

	agreed = 1;
	MPI_Allreduce(&me, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (first == size)
		return -1;
	memset(&msg, 0, sizeof(msg));
	if (rank == first) {
		msg.code = rc;
		if (rank != 0) {
			ssize_t got = pread(STDERR_FILENO, msg.text,
					    sizeof(msg.text) - 1, 0);

			msg.text[got > 0 ? got : 0] = '\0';
		}
	}
	MPI_Bcast(&msg, (int)sizeof(msg), MPI_BYTE, first, MPI_COMM_WORLD);
	if (rank == 0 && first != 0)
		show(first, msg.text);
	return msg.code;
}

int collrun_mpi_plan(topo_plan **out, const topo_tree *t,
		     const struct topo_plan_params *params, topo_error *err)
{
	/* the memory check counts the buffers of this process's members */
	return topo__plan_new_hosted(out, t, params, host, rank, err);
}

int collrun_mpi_run(const topo_plan *p, const struct topo_run_params *rp,
		    topo_report **out, topo_error *err)
{
	return topo__run_mpi(p, rp, host, MPI_COMM_WORLD, out, err);
}

int collrun_mpi_finish(int rc)
{
	/* The report out of our buffers before MPI ends, whatever MPI
	 * prints at MPI_Finalize.  (What once followed the report under
	 * MPICH was its UCX device's warning of each message a timed-out
	 * run left unreceived; exec_mpi.c now quiesces such runs.) */
	fflush(stdout);
	fflush(stderr);
	if (!agreed) {
		int c = collrun_mpi_ready(rc);

		if (c >= 0)
			rc = c;
	}
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(host);
	MPI_Finalize();
	return rc;
}
