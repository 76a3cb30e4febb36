/*
 * pmpi_common.c - what every part of libcollc-mpi.so uses: the one
 * global, the names of the wrapped operations, messages on standard
 * error, the counts of what ran where, and the lock (pmpi.h).
 */
#define TOPO_INTERNAL
#include "pmpi.h"
#include "wrapped.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

struct global G = {.keyval = MPI_KEYVAL_INVALID,
		   .seen = MPI_KEYVAL_INVALID,
		   .per = 1,
		   .set = {.segment = 256 * 1024, .min_size = 3},
		   .lock = PTHREAD_MUTEX_INITIALIZER,
		   .world_group = MPI_GROUP_NULL};

/* The wrapped operations (wrapped.h), as the environment variables and
 * the report name them. */
#define ENV_NAME(OP, N, n, E, ...) [TOPO_OP_##OP] = #E,
#define MPI_NAME(OP, N, n, ...) [TOPO_OP_##OP] = "MPI_" #N,
const char *const topo__pmpi_env_name[TOPO_OP_COUNT] = {
    TOPO_MPI_WRAPPED(ENV_NAME)};
const char *const topo__pmpi_mpi_name[TOPO_OP_COUNT] = {
    TOPO_MPI_WRAPPED(MPI_NAME)};
#undef ENV_NAME
#undef MPI_NAME

static const char *const reason_text[R_COUNT] = {
    "libcollc-mpi is off (COLLC_MPI_DISABLE)",
    "an intercommunicator",
    "a user-defined or logical operator",
    "MPI_MINLOC or MPI_MAXLOC",
    "a derived or unsupported datatype in a reduction",
    "a bitwise operator on a floating-point type",
    "arguments MPI would refuse (the MPI library reports them)",
    "a message of more than INT_MAX bytes",
    "a plan that could not be made on every process",
    "a plan of more messages between two processes than the "
    "communicator's range of tags",
    "a nonblocking collective (libcollc-mpi runs the blocking ones)",
    "a persistent collective (libcollc-mpi runs the blocking ones)",
    "a communicator of fewer members than COLLC_MPI_MIN_SIZE (3 unless "
    "set: over 1 or 2 members every tree is the same, MPI's own)"};

void topo__pmpi_say(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, PFX "%s\n", line);
}

void topo__pmpi_fatal(const char *what, const topo_error *err)
{
	fprintf(stderr, PFX "world rank %d: %s: %s\n", G.world_rank, what,
		err != NULL && err->text[0] != '\0' ? err->text : "failed");
	PMPI_Abort(MPI_COMM_WORLD, 1);
	abort(); /* PMPI_Abort does not return */
}

static void say_handed(const char *name, enum reason why)
{
	if (G.set.report && !(__atomic_fetch_or(&G.fallback_said, 1u << why,
						__ATOMIC_RELAXED) >>
				  why &
			      1u))
		topo__pmpi_say("world rank %d: %s handed to the MPI library: "
			       "%s",
			       G.world_rank, name, reason_text[why]);
}

void topo__pmpi_said_handed(enum topo_op op, enum reason why)
{
	say_handed(topo__pmpi_mpi_name[op], why);
}

void topo__pmpi_later(int persistent, enum topo_op op, const char *name)
{
	topo__pmpi_count(&G.later[persistent][op]);
	say_handed(name, !G.on ? R_OFF : persistent ? R_PERSISTENT : R_NONBLOCKING);
}

void topo__pmpi_lock(void)
{
	if (G.mt)
		pthread_mutex_lock(&G.lock);
}

void topo__pmpi_unlock(void)
{
	if (G.mt)
		pthread_mutex_unlock(&G.lock);
}
