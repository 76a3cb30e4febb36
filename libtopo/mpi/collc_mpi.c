/*
 * collc_mpi.c - libcollc-mpi.so, the PMPI library (libcollc-mpi(7)): an
 * unmodified MPI program's collectives over collc's trees and algorithms.
 *
 * At MPI_Init (or MPI_Init_thread) it describes the job as a machine: the
 * nodes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) and the host names
 * (MPI_Get_processor_name), ordered by their lowest world rank, each with
 * the processes it holds (as many as come:
 * nodes may be uneven), one task and one endpoint per process, tasks
 * numbered in node order.  COLLC_MPI_NODES fakes a layout on one host
 * ("3,1,2": world ranks 0-2 on node 0, 3 on node 1, 4-5 on node 2);
 * COLLC_MPI_MACHINE names a compile output (collc(5)) whose machine the
 * job must match, task r on world rank r.
 *
 * A communicator's members are a group of that machine
 * (topo_group_new_list), ranked in ascending endpoint id; host[g] is the
 * communicator rank of group rank g.  Its state (the group, a tree per
 * shape used, the plans made, scratch buffers, a private duplicate for the
 * traffic) hangs on the communicator as an attribute, made at the first
 * collective that takes collc's way and freed with the communicator or at
 * MPI_Finalize.  A plan per (operation, bytes, root, type, operator) is
 * kept, the sixteen used last; with it this process's two-sided schedule
 * and the engine's state (engine.c), which runs it over the caller's
 * buffers: SEND, RECV and WORK of the process's member are the user's
 * send and receive buffers where they are contiguous, in group order and
 * not aliased, else scratch copied in and out.
 *
 * What is not handled (libcollc-mpi(7) lists it) goes to the MPI library
 * through its PMPI_ entry, and so do communicators of fewer members than
 * COLLC_MPI_MIN_SIZE (3: over 1 or 2 members every tree is the same).
 * Every such decision rests only on arguments MPI requires every process
 * to pass alike (the operator and datatype of a reduction, the
 * communicator, the byte counts), so that all processes of a collective
 * take the same way; a non-contiguous datatype of a collective that only
 * moves bytes is packed rather than handed over, as another process may
 * pass a contiguous type of the same signature.
 */
#define TOPO_INTERNAL
#include "engine.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define API __attribute__((visibility("default")))
#define PFX "libcollc-mpi: "
/* plans kept per communicator */
#define MAX_PLANS 16
/* exit status of a job refused for bad settings (as collc's bad input) */
#define EXIT_SETTINGS 2

/* The wrapped operations, in enum topo_op order, as the environment
 * variables and the report name them. */
static const char *const env_name[TOPO_OP_COUNT] = {"BCAST",
						    "SCATTER",
						    "GATHER",
						    "REDUCE",
						    "ALLREDUCE",
						    "ALLGATHER",
						    "REDUCE_SCATTER_BLOCK",
						    "ALLTOALL",
						    "BARRIER"};
static const char *const mpi_name[TOPO_OP_COUNT] = {"MPI_Bcast",
						    "MPI_Scatter",
						    "MPI_Gather",
						    "MPI_Reduce",
						    "MPI_Allreduce",
						    "MPI_Allgather",
						    "MPI_Reduce_scatter_block",
						    "MPI_Alltoall",
						    "MPI_Barrier"};

struct cplan {
	/* the key */
	enum topo_op op;
	int64_t bytes;
	int root; /* communicator rank, -1: none */
	enum topo_type type;
	enum topo_redop redop;
	/* what it holds */
	topo_plan *p;
	struct topo__sched *s;
	struct topo__mx x;
	bool writes_send; /* the plan writes into this member's SEND */
	uint64_t used;	  /* the call count when last used */
};

struct ccomm {
	MPI_Comm user, dup;
	int rank, size;
	topo_group *g;
	/* group rank -> communicator rank, and back */
	int32_t *host, *grank;
	bool identity; /* host[g] == g for every g */
	/* the trees made, by shape */
	struct {
		char shape[32];
		topo_tree *t;
	} trees[TOPO_OP_COUNT];
	int ntrees;
	struct cplan plans[MAX_PLANS];
	int nplans;
	/* scratch: SEND, RECV, WORK, a copy of SEND, a RECV dropped */
	unsigned char *tmp[5];
	size_t tmpcap[5];
	/* choices reported already (bit per operation) */
	unsigned reported;
	struct ccomm *next;
};

static struct {
	bool on;     /* collc's way is taken at all */
	bool report; /* COLLC_MPI_REPORT */
	int world_rank, world_size;
	topo_machine *m;  /* the job's machine */
	topo_compiled *c; /* its compile output (COLLC_MPI_MACHINE) */
	int32_t *task;	  /* world rank -> task */
	int32_t per;	  /* endpoints per task */
	int keyval;
	const char *tree[TOPO_OP_COUNT], *alg[TOPO_OP_COUNT];
	/* COLLC_MPI_SEGMENT; 0: libtopo's default.  Unset: 256 KiB, by
	 * measurement (tests/bench/pmpi.py: at np 2, bcast of 2 and 16 MiB
	 * went from 1.18 times Open MPI's own to 1.03-1.06, where libtopo's
	 * 64 KiB segments pay a rendezvous per segment) */
	size_t segment;
	/* COLLC_MPI_MIN_SIZE: smaller communicators go to the MPI library.
	 * Over 1 or 2 members every tree is the one MPI uses too, so collc
	 * has nothing to add there and its bookkeeping would only cost
	 * (tests/bench/pmpi.py: 1.2 to 3.4 times Open MPI's own at np 2
	 * below 4 KiB) */
	int min_size;
	/* how to wait (COLLC_MPI_WAIT): in MPI_Waitsome, or polling and
	 * giving the CPU away (the host runs more processes than CPUs) */
	bool poll;
	struct ccomm *comms;
	uint64_t calls;
	int64_t ours[TOPO_OP_COUNT], theirs[TOPO_OP_COUNT];
	/* the nonblocking [0] and persistent [1] forms, all handed over */
	int64_t later[2][TOPO_OP_COUNT];
	unsigned fallback_said; /* bit per reason, reported once */
	MPI_Group world_group;
} G = {.keyval = MPI_KEYVAL_INVALID, .segment = 256 * 1024, .min_size = 3};

/* ---------------------------------------------------------------------- */
/* Saying things */

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void say(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	fprintf(stderr, PFX "%s\n", line);
}

/* Bad settings: one message (from world rank 0 only, as every process
 * reads the same environment) and the job ends with status 2. */
static void refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void refuse(const char *fmt, ...)
{
	char line[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Rank 0 says it, and gives the launcher a moment to pass it on
	 * before its abort kills the job; the others wait for that abort
	 * (one from them first could kill rank 0 before its message is
	 * out: seen under MPICH), a second at most, should rank 0 see other
	 * settings. */
	if (G.world_rank == 0) {
		struct timespec ts = {0, 200000000};

		fprintf(stderr, PFX "%s\n", line);
		nanosleep(&ts, NULL);
	} else {
		struct timespec ts = {1, 0};

		nanosleep(&ts, NULL);
	}
	PMPI_Abort(MPI_COMM_WORLD, EXIT_SETTINGS);
}

/* Something failed that the processes cannot agree their way out of:
 * the job ends rather than leave some processes waiting forever. */
static void fatal(const char *what, const topo_error *err)
{
	fprintf(stderr, PFX "world rank %d: %s: %s\n", G.world_rank, what,
		err != NULL ? err->text : "failed");
	PMPI_Abort(MPI_COMM_WORLD, 1);
}

/* Reasons for handing a call to the MPI library, reported once each. */
enum reason {
	R_OFF,
	R_INTER,
	R_OP,
	R_LOC,
	R_TYPE,
	R_TYPEOP,
	R_ARGS,
	R_LARGE,
	R_PLAN,
	R_NONBLOCKING,
	R_PERSISTENT,
	R_SMALL,
	R_COUNT
};
static const char *const reason_text[R_COUNT] = {
    "libcollc-mpi is off (COLLC_MPI_DISABLE, or MPI_THREAD_MULTIPLE)",
    "an intercommunicator",
    "a user-defined or logical operator",
    "MPI_MINLOC or MPI_MAXLOC",
    "a derived or unsupported datatype in a reduction",
    "a bitwise operator on a floating-point type",
    "arguments MPI would refuse (the MPI library reports them)",
    "a message of more than INT_MAX bytes",
    "a plan that could not be made on every process",
    "a nonblocking collective (libcollc-mpi runs the blocking ones)",
    "a persistent collective (libcollc-mpi runs the blocking ones)",
    "a communicator of fewer members than COLLC_MPI_MIN_SIZE (3 unless "
    "set: over 1 or 2 members every tree is the same, MPI's own)"};

/* Atomic: under MPI_THREAD_MULTIPLE (the library off) several threads
 * may hand calls over at once. */
static void say_handed(const char *name, enum reason why)
{
	if (G.report && !(__atomic_fetch_or(&G.fallback_said, 1u << why,
					    __ATOMIC_RELAXED) >>
			      why &
			  1u))
		say("world rank %d: %s handed to the MPI library: %s",
		    G.world_rank, name, reason_text[why]);
}

static int hand_over(enum topo_op op, enum reason why)
{
	/* on, the library runs under MPI_THREAD_SERIALIZED at most: one
	 * call at a time */
	if (G.on)
		G.theirs[op]++;
	else
		__atomic_fetch_add(&G.theirs[op], 1, __ATOMIC_RELAXED);
	say_handed(mpi_name[op], why);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* The job's machine */

static int32_t *parse_layout(const char *v, int32_t *nodes)
{
	int32_t *t = malloc(((size_t)strlen(v) / 2 + 2) * sizeof(*t));
	const char *s = v;
	int32_t n = 0;

	if (t == NULL)
		return NULL;
	for (;;) {
		char *end;
		long x;

		errno = 0;
		if (!isdigit((unsigned char)*s))
			break;
		x = strtol(s, &end, 10);
		if (errno != 0 || x < 1 || x > INT32_MAX)
			break;
		t[n++] = (int32_t)x;
		s = end;
		if (*s == '\0') {
			*nodes = n;
			return t;
		}
		if (*s != ',')
			break;
		s++;
	}
	free(t);
	*nodes = -(int32_t)(s - v) - 1; /* where it went wrong */
	return NULL;
}

/* The machine as JSON: nodes with their tasks, one endpoint each, and a
 * network of one switch (every node one hop from node 0): nothing more is
 * known of the hosts' network. */
static char *machine_json(const int32_t *tasks, int32_t nodes)
{
	size_t cap = 160 + (size_t)nodes * 24, len = 0;
	char *j = malloc(cap);

	if (j == NULL)
		return NULL;
	len += (size_t)snprintf(j + len, cap - len,
				"{\"name\": \"mpi-job\", \"nodes\": %d, "
				"\"tasks_per_node\": [",
				(int)nodes);
	for (int32_t i = 0; i < nodes; i++)
		len += (size_t)snprintf(j + len, cap - len, "%s%d",
					i > 0 ? ", " : "", (int)tasks[i]);
	len += (size_t)snprintf(j + len, cap - len,
				"], \"endpoints_per_task\": 1, \"network\": "
				"{\"type\": \"tree\", \"parent\": [-1");
	for (int32_t i = 1; i < nodes; i++)
		len += (size_t)snprintf(j + len, cap - len, ", 0");
	snprintf(j + len, cap - len, "]}}");
	return j;
}

/* The lowest world rank among the processes of comm (those sharing
 * memory) whose host name is this process's. */
static int lowest_of_host(MPI_Comm comm)
{
	char me[MPI_MAX_PROCESSOR_NAME + 1], *all;
	int n = 1, len = 0, *wr, low = G.world_rank;

	memset(me, 0, sizeof(me));
	PMPI_Get_processor_name(me, &len);
	PMPI_Comm_size(comm, &n);
	all = malloc((size_t)n * sizeof(me));
	wr = malloc((size_t)n * sizeof(int));
	if (all == NULL || wr == NULL)
		fatal("building the machine", NULL);
	PMPI_Allgather(me, (int)sizeof(me), MPI_CHAR, all, (int)sizeof(me),
		       MPI_CHAR, comm);
	PMPI_Allgather(&G.world_rank, 1, MPI_INT, wr, 1, MPI_INT, comm);
	for (int i = 0; i < n; i++)
		if (wr[i] < low && strcmp(all + (size_t)i * sizeof(me), me) == 0)
			low = wr[i];
	free(all);
	free(wr);
	return low;
}

static void build_machine(void)
{
	const char *file = getenv("COLLC_MPI_MACHINE"),
		   *layout = getenv("COLLC_MPI_NODES");
	int n = G.world_size;
	int32_t *tasks = NULL, nodes = 0;
	topo_error err;
	char *json;

	topo_error_clear(&err);
	G.task = malloc((size_t)n * sizeof(*G.task));
	if (G.task == NULL)
		fatal("building the machine", NULL);
	if (file != NULL && *file != '\0') {
		if (layout != NULL && *layout != '\0')
			refuse("COLLC_MPI_MACHINE and COLLC_MPI_NODES are both "
			       "set; set one");
		if (topo_compiled_load_file(&G.c, file, &err) != 0) {
			char text[600];

			refuse("COLLC_MPI_MACHINE: %s",
			       topo_error_format(&err, text, sizeof(text)));
		}
		G.m = (topo_machine *)topo_compiled_machine(G.c);
		if (topo_machine_tasks(G.m) != n)
			refuse("COLLC_MPI_MACHINE: %s: the machine has %d "
			       "task%s and the job %d process%s; run it with "
			       "mpirun -np %d (world rank r is task r)",
			       file, (int)topo_machine_tasks(G.m),
			       topo_machine_tasks(G.m) == 1 ? "" : "s", n,
			       n == 1 ? "" : "es",
			       (int)topo_machine_tasks(G.m));
		G.per = topo_machine_endpoints_per_task(G.m);
		for (int r = 0; r < n; r++)
			G.task[r] = r;
		return;
	}
	if (layout != NULL && *layout != '\0') {
		int64_t sum = 0;

		tasks = parse_layout(layout, &nodes);
		if (tasks == NULL)
			refuse("COLLC_MPI_NODES=%s: at character %d: expected "
			       "a list of processes per node, as \"3,1,2\"",
			       layout, (int)-nodes);
		for (int32_t i = 0; i < nodes; i++)
			sum += tasks[i];
		if (sum != n)
			refuse("COLLC_MPI_NODES=%s: the layout holds %lld "
			       "process%s and the job %d",
			       layout, (long long)sum, sum == 1 ? "" : "es", n);
		for (int r = 0; r < n; r++)
			G.task[r] = r;
	} else {
		/* A node: the processes that share memory
		 * (MPI_Comm_split_type) and a host name; its lowest world
		 * rank names it.  Nodes in the order of those, tasks in
		 * node order. */
		MPI_Comm node;
		int low = G.world_rank, *lows = malloc((size_t)n * sizeof(int));
		int32_t *first = calloc((size_t)n, sizeof(int32_t));

		tasks = calloc((size_t)n, sizeof(int32_t));
		if (lows == NULL || first == NULL || tasks == NULL)
			fatal("building the machine", NULL);
		PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
				     MPI_INFO_NULL, &node);
		low = lowest_of_host(node);
		PMPI_Comm_free(&node);
		PMPI_Allgather(&low, 1, MPI_INT, lows, 1, MPI_INT,
			       MPI_COMM_WORLD);
		/* node number of each lowest rank, in rank order */
		for (int r = 0; r < n; r++)
			if (lows[r] == r)
				first[r] = nodes++ + 1;
		for (int r = 0; r < n; r++)
			tasks[first[lows[r]] - 1]++;
		{
			/* task = tasks of the nodes before + rank among the
			 * node's processes */
			int32_t *next =
			    calloc((size_t)nodes + 1, sizeof(int32_t));

			if (next == NULL)
				fatal("building the machine", NULL);
			for (int32_t i = 1; i <= nodes; i++)
				next[i] = next[i - 1] + tasks[i - 1];
			for (int r = 0; r < n; r++)
				G.task[r] = next[first[lows[r]] - 1]++;
			free(next);
		}
		free(lows);
		free(first);
	}
	json = machine_json(tasks, nodes);
	if (json == NULL || topo_machine_load_string(&G.m, json, strlen(json),
						     "the job", &err) != 0)
		fatal("building the machine", &err);
	free(json);
	free(tasks);
	G.per = 1;
}

/* The settings: a tree shape and an algorithm per operation. */
static void read_settings(void)
{
	const char *all = getenv("COLLC_MPI_TREE");
	topo_error err;

	topo_error_clear(&err);
	if (all == NULL || *all == '\0')
		all = "hierarchical";
	{
		const char *v = getenv("COLLC_MPI_SEGMENT");
		char *end;

		if (v != NULL && *v != '\0') {
			unsigned long long x;

			errno = 0;
			x = strtoull(v, &end, 10);
			if (errno != 0 || *end != '\0' ||
			    !isdigit((unsigned char)*v) ||
			    x > (unsigned long long)INT_MAX || x % 8 != 0)
				refuse(
				    "COLLC_MPI_SEGMENT=%s: expected a number "
				    "of bytes, a multiple of 8 from 0 to %d",
				    v, INT_MAX - 7);
			G.segment = (size_t)x;
		}
	}
	{
		const char *v = getenv("COLLC_MPI_MIN_SIZE");
		char *end;

		if (v != NULL && *v != '\0') {
			long x;

			errno = 0;
			x = strtol(v, &end, 10);
			if (errno != 0 || *end != '\0' ||
			    !isdigit((unsigned char)*v) || x < 1 ||
			    x > INT_MAX)
				refuse("COLLC_MPI_MIN_SIZE=%s: expected a "
				       "number of members from 1 to %d",
				       v, INT_MAX);
			G.min_size = (int)x;
		}
	}
	if (topo_tree_shape_check(all, &err) != 0)
		refuse("COLLC_MPI_TREE=%s: %s", all, err.text);
	for (int op = 0; op < TOPO_OP_COUNT; op++) {
		char name[64];
		const char *v;

		snprintf(name, sizeof(name), "COLLC_MPI_%s_TREE", env_name[op]);
		v = getenv(name);
		G.tree[op] = v != NULL && *v != '\0' ? v : all;
		if (topo_tree_shape_check(G.tree[op], &err) != 0)
			refuse("%s=%s: %s", name, G.tree[op], err.text);
		snprintf(name, sizeof(name), "COLLC_MPI_%s_ALGORITHM",
			 env_name[op]);
		v = getenv(name);
		G.alg[op] = v != NULL && *v != '\0' ? v : NULL;
		/* the hierarchical reduce (seed 001) runs over the
		 * hierarchical tree only: over another tree, reduce's
		 * default is its tree algorithm, and asking for it is
		 * refused */
		if (strcmp(G.tree[op], "hierarchical") != 0 &&
		    (op == TOPO_OP_REDUCE || op == TOPO_OP_ALLREDUCE)) {
			if (G.alg[op] == NULL && op == TOPO_OP_REDUCE)
				G.alg[op] = "tree";
			else if (G.alg[op] != NULL &&
				 strcmp(G.alg[op], "hierarchical") == 0)
				refuse("%s=hierarchical needs the hierarchical "
				       "tree, and the tree of %s is %s "
				       "(COLLC_MPI_%s_TREE, COLLC_MPI_TREE)",
				       name, mpi_name[op], G.tree[op],
				       env_name[op]);
		}
		if (G.alg[op] != NULL) {
			/* tried on a group of one: an unknown name is
			 * refused by planning */
			struct topo_plan_params pp;
			topo_group *g = NULL;
			topo_tree *t = NULL;
			topo_plan *p = NULL;
			int32_t ep = 0;
			int rc;

			topo_plan_params_init(&pp, sizeof(pp),
					      (enum topo_op)op);
			pp.algorithm = G.alg[op];
			rc = topo_group_new_list(&g, G.m, NULL, &ep, 1, &err);
			if (rc == 0)
				rc = topo_tree_new(&t, g, "binomial", &err);
			if (rc == 0)
				rc = topo_plan_new(&p, t, &pp, &err);
			topo_plan_free(p);
			topo_tree_free(t);
			topo_group_free(g);
			if (rc != 0)
				refuse("%s=%s: %s", name, G.alg[op], err.text);
		}
	}
}

static bool env_on(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' && strcmp(v, "0") != 0;
}

static int delete_state(MPI_Comm comm, int keyval, void *attr, void *extra);
static void free_state(struct ccomm *s);

static void start(void)
{
	int provided = MPI_THREAD_SINGLE;

	PMPI_Comm_rank(MPI_COMM_WORLD, &G.world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &G.world_size);
	PMPI_Query_thread(&provided);
	G.report = env_on("COLLC_MPI_REPORT");
	if (env_on("COLLC_MPI_DISABLE") || provided == MPI_THREAD_MULTIPLE) {
		if (G.report && G.world_rank == 0)
			say("off (%s): every collective goes to the MPI "
			    "library",
			    provided == MPI_THREAD_MULTIPLE
				? "MPI_THREAD_MULTIPLE"
				: "COLLC_MPI_DISABLE");
		return;
	}
	build_machine();
	read_settings();
	{
		/* more processes on this host than it has CPUs: a process
		 * waiting in the MPI library's own loop may keep the CPU
		 * from the one it waits for (MPICH 4.0 spins there) */
		const char *w = getenv("COLLC_MPI_WAIT");
		MPI_Comm host;
		int here = 1;
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
				     MPI_INFO_NULL, &host);
		PMPI_Comm_size(host, &here);
		PMPI_Comm_free(&host);
		if (w == NULL || *w == '\0')
			G.poll = cpus > 0 && here > cpus;
		else if (strcmp(w, "poll") == 0 || strcmp(w, "block") == 0)
			G.poll = strcmp(w, "poll") == 0;
		else
			refuse("COLLC_MPI_WAIT=%s: expected poll or block", w);
	}
	if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_state,
				    &G.keyval, NULL) != MPI_SUCCESS)
		fatal("MPI_Comm_create_keyval", NULL);
	G.on = true;
	if (G.report && G.world_rank == 0) {
		char line[400];
		size_t len = 0;
		int32_t nodes = topo_machine_nodes(G.m);

		for (int32_t i = 0; i < nodes && len < sizeof(line) - 16; i++)
			len += (size_t)snprintf(
			    line + len, sizeof(line) - len, "%s%d",
			    i > 0 ? "+" : "",
			    (int)topo_machine_node_tasks(G.m, i));
		say("%d process%s on %d node%s (%s), from %s", G.world_size,
		    G.world_size == 1 ? "" : "es", (int)nodes,
		    nodes == 1 ? "" : "s", line,
		    G.c != NULL ? "COLLC_MPI_MACHINE"
		    : getenv("COLLC_MPI_NODES") != NULL &&
			    *getenv("COLLC_MPI_NODES") != '\0'
			? "COLLC_MPI_NODES"
			: "MPI_Comm_split_type and host names");
	}
}

API int MPI_Init(int *argc, char ***argv)
{
	int rc = PMPI_Init(argc, argv);

	if (rc == MPI_SUCCESS)
		start();
	return rc;
}

API int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	int rc = PMPI_Init_thread(argc, argv, required, provided);

	if (rc == MPI_SUCCESS)
		start();
	return rc;
}

API int MPI_Finalize(void)
{
	if (G.on) {
		if (G.report && G.world_rank == 0) {
			int64_t ours = 0, theirs = 0;

			for (int op = 0; op < TOPO_OP_COUNT; op++) {
				ours += G.ours[op];
				theirs += G.theirs[op] + G.later[0][op] +
					  G.later[1][op];
			}
			say("world rank %d: %lld collective%s over collc's "
			    "plans, %lld handed to the MPI library",
			    G.world_rank, (long long)ours, ours == 1 ? "" : "s",
			    (long long)theirs);
		}
		/* the states still attached go now, while MPI works */
		while (G.comms != NULL) {
			struct ccomm *s = G.comms;

			if (PMPI_Comm_delete_attr(s->user, G.keyval) !=
				MPI_SUCCESS ||
			    G.comms == s) {
				G.comms = s->next;
				free_state(s);
			}
		}
		PMPI_Comm_free_keyval(&G.keyval);
		if (G.world_group != MPI_GROUP_NULL && G.world_group != 0)
			PMPI_Group_free(&G.world_group);
		G.on = false;
		topo_compiled_free(G.c);
		if (G.c == NULL)
			topo_machine_free(G.m);
		G.c = NULL;
		G.m = NULL;
		free(G.task);
		G.task = NULL;
	}
	return PMPI_Finalize();
}

/* ---------------------------------------------------------------------- */
/* A communicator's state */

static void free_plan(struct cplan *c)
{
	topo__mx_teardown(&c->x);
	topo__sched_free(c->s);
	topo_plan_free(c->p);
	memset(c, 0, sizeof(*c));
}

static void free_state(struct ccomm *s)
{
	for (int i = 0; i < s->nplans; i++)
		free_plan(&s->plans[i]);
	for (int i = 0; i < s->ntrees; i++)
		topo_tree_free(s->trees[i].t);
	topo_group_free(s->g);
	for (int i = 0; i < 5; i++)
		free(s->tmp[i]);
	free(s->host);
	free(s->grank);
	if (s->dup != MPI_COMM_NULL)
		PMPI_Comm_free(&s->dup);
	free(s);
}

static int delete_state(MPI_Comm comm, int keyval, void *attr, void *extra)
{
	struct ccomm *s = attr, **pp;

	(void)comm;
	(void)keyval;
	(void)extra;
	for (pp = &G.comms; *pp != NULL; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	free_state(s);
	return MPI_SUCCESS;
}

/* The state of comm, made at its first collective that takes collc's
 * way (a collective call itself: every process makes it at the same
 * call). */
static struct ccomm *state_of(MPI_Comm comm)
{
	struct ccomm *s = NULL;
	int flag = 0;
	MPI_Group grp;
	int32_t *ep = NULL;
	int *mine = NULL, *world = NULL;
	topo_error err;

	PMPI_Comm_get_attr(comm, G.keyval, &s, &flag);
	if (flag && s != NULL)
		return s;
	topo_error_clear(&err);
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		fatal("a communicator's state", NULL);
	s->user = comm;
	s->dup = MPI_COMM_NULL;
	PMPI_Comm_rank(comm, &s->rank);
	PMPI_Comm_size(comm, &s->size);
	s->host = malloc((size_t)s->size * sizeof(int32_t));
	s->grank = malloc((size_t)s->size * sizeof(int32_t));
	ep = malloc((size_t)s->size * sizeof(int32_t));
	mine = malloc((size_t)s->size * sizeof(int));
	world = malloc((size_t)s->size * sizeof(int));
	if (s->host == NULL || s->grank == NULL || ep == NULL || mine == NULL ||
	    world == NULL)
		fatal("a communicator's state", NULL);
	/* the members' world ranks, hence their tasks and endpoints */
	PMPI_Comm_group(comm, &grp);
	if (G.world_group == MPI_GROUP_NULL || G.world_group == 0)
		PMPI_Comm_group(MPI_COMM_WORLD, &G.world_group);
	for (int i = 0; i < s->size; i++)
		mine[i] = i;
	PMPI_Group_translate_ranks(grp, s->size, mine, G.world_group, world);
	PMPI_Group_free(&grp);
	for (int i = 0; i < s->size; i++)
		ep[i] = G.task[world[i]] * G.per;
	if (topo_group_new_list(&s->g, G.m, NULL, ep, s->size, &err) != 0)
		fatal("a communicator's group", &err);
	s->identity = true;
	for (int i = 0; i < s->size; i++) {
		int32_t g = topo_group_rank(s->g, ep[i]);

		s->grank[i] = g;
		s->host[g] = i;
		s->identity &= g == i;
	}
	free(ep);
	free(mine);
	free(world);
	if (PMPI_Comm_dup(comm, &s->dup) != MPI_SUCCESS)
		fatal("MPI_Comm_dup", NULL);
	PMPI_Comm_set_errhandler(s->dup, MPI_ERRORS_RETURN);
	if (PMPI_Comm_set_attr(comm, G.keyval, s) != MPI_SUCCESS)
		fatal("MPI_Comm_set_attr", NULL);
	s->next = G.comms;
	G.comms = s;
	return s;
}

static const topo_tree *tree_of(struct ccomm *s, enum topo_op op)
{
	const char *shape = G.tree[op];
	topo_error err;

	for (int i = 0; i < s->ntrees; i++)
		if (strcmp(s->trees[i].shape, shape) == 0)
			return s->trees[i].t;
	topo_error_clear(&err);
	snprintf(s->trees[s->ntrees].shape, sizeof(s->trees[0].shape), "%s",
		 shape);
	if (topo_tree_new(&s->trees[s->ntrees].t, s->g, shape, &err) != 0)
		fatal("a communicator's tree", &err);
	return s->trees[s->ntrees++].t;
}

/* Scratch buffer k of at least len bytes. */
static unsigned char *scratch(struct ccomm *s, int k, int64_t len)
{
	if ((size_t)len > s->tmpcap[k]) {
		size_t cap = (size_t)len + 64;
		unsigned char *t = realloc(s->tmp[k], cap);

		if (t == NULL)
			return NULL;
		s->tmp[k] = t;
		s->tmpcap[k] = cap;
	}
	return s->tmp[k];
}

/* The nodes a communicator's members are on. */
static int32_t count_nodes(const struct ccomm *s)
{
	const int32_t *ep = topo_group_members(s->g);
	int32_t n = 0, last = -1;

	/* endpoints ascend, so nodes do */
	for (int i = 0; i < s->size; i++) {
		int32_t node = topo_machine_endpoint_node(G.m, ep[i]);

		n += node != last;
		last = node;
	}
	return n;
}

/* The plan for this call: found, or made (and agreed on: making it can
 * fail on some processes only, for memory).  NULL: not made anywhere. */
static struct cplan *plan_of(struct ccomm *s, enum topo_op op, int64_t bytes,
			     int root, enum topo_type type,
			     enum topo_redop redop)
{
	struct cplan *c = NULL;
	struct topo_plan_params pp;
	topo_error err;
	int rc, ok, all = 0;

	G.calls++;
	for (int i = 0; i < s->nplans; i++) {
		struct cplan *k = &s->plans[i];

		if (k->op == op && k->bytes == bytes && k->root == root &&
		    k->type == type && k->redop == redop) {
			k->used = G.calls;
			return k;
		}
	}
	/* a slot: a free one, or the one used longest ago */
	if (s->nplans < MAX_PLANS) {
		c = &s->plans[s->nplans++];
	} else {
		c = &s->plans[0];
		for (int i = 1; i < s->nplans; i++)
			if (s->plans[i].used < c->used)
				c = &s->plans[i];
		free_plan(c);
	}
	c->op = op;
	c->bytes = bytes;
	c->root = root;
	c->type = type;
	c->redop = redop;
	c->used = G.calls;
	topo_error_clear(&err);
	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = G.alg[op];
	pp.segment = G.segment;
	if (op != TOPO_OP_BARRIER) {
		pp.bytes = (size_t)bytes;
		pp.type = type;
		if (topo_op_reduces(op))
			pp.redop = redop;
	}
	if (root >= 0)
		pp.root = topo_group_members(s->g)[s->grank[root]];
	/* the memory check counts this process's buffers alone */
	rc = topo__plan_new_hosted(&c->p, tree_of(s, op), &pp, s->host,
				   s->rank, &err);
	if (rc == 0)
		rc = topo__sched_new(&c->s, c->p, s->host, s->size, s->rank,
				     &err);
	if (rc == 0) {
		int64_t stage = 0, state = 0;

		rc =
		    topo__mx_check(c->p, c->s, s->dup, 0, &stage, &state, &err);
	}
	/* the root of a bcast sends from and "receives" into the one
	 * buffer: no receive may land straight in it there */
	if (rc == 0)
		rc = topo__mx_setup(
		    &c->x, c->p, c->s, s->host, s->dup, s->rank, false, false,
		    0, !(op == TOPO_OP_BCAST && root == s->rank), false, &err);
	ok = rc == 0;
	if (PMPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, s->dup) !=
	    MPI_SUCCESS)
		fatal("agreeing on a plan", NULL);
	if (!all) {
		if (G.report && !ok)
			say("world rank %d: %s: %s", G.world_rank, mpi_name[op],
			    err.text);
		free_plan(c);
		*c = s->plans[--s->nplans];
		memset(&s->plans[s->nplans], 0, sizeof(s->plans[0]));
		return NULL;
	}
	/* waiting is the MPI library's own loop (MPI_Waitsome), unless the
	 * host is oversubscribed: then polling, giving the CPU away */
	c->x.block = !G.poll;
	c->x.yield = G.poll;
	for (int64_t e = 0; e < c->s->nev; e++) {
		const struct topo__ev *v = &c->s->ev[e];

		if ((v->kind == TOPO__EV_RECV || v->kind == TOPO__EV_LOCAL) &&
		    c->p->msg[v->msg].dbuf == TOPO__SEND)
			c->writes_send = true;
	}
	if (G.report && s->rank == 0 && !(s->reported >> op & 1u)) {
		s->reported |= 1u << op;
		say("%s on a communicator of %d process%s (%d node%s): tree "
		    "%s, algorithm %s",
		    mpi_name[op], s->size, s->size == 1 ? "" : "es",
		    (int)count_nodes(s), count_nodes(s) == 1 ? "" : "s",
		    G.tree[op], topo_plan_algorithm(c->p));
	}
	return c;
}

/* ---------------------------------------------------------------------- */
/* Datatypes and operators */

/* Whether count elements of t are one run of bytes: then they start at
 * buf + *lb.  Sets *size to the bytes of one element. */
static bool contiguous(MPI_Datatype t, MPI_Aint *lb, int *size)
{
	MPI_Aint tlb = 0, text = 0, elb = 0, ext = 0;

	*size = 0;
	*lb = 0;
	if (PMPI_Type_size(t, size) != MPI_SUCCESS ||
	    PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS ||
	    PMPI_Type_get_extent(t, &elb, &ext) != MPI_SUCCESS)
		return false;
	*lb = tlb;
	return text == *size && ext == *size;
}

/* The libtopo integer type of a C type of n bytes (a constant). */
#define SIZED(is_signed, n)                                                    \
	((n) == 1   ? ((is_signed) ? TOPO_INT8 : TOPO_UINT8)                   \
	 : (n) == 2 ? ((is_signed) ? TOPO_INT16 : TOPO_UINT16)                 \
	 : (n) == 4 ? ((is_signed) ? TOPO_INT32 : TOPO_UINT32)                 \
		    : ((is_signed) ? TOPO_INT64 : TOPO_UINT64))

/* A reduction's datatype and operator in libtopo's terms, or why not. */
static enum reason reduction(MPI_Datatype t, MPI_Op o, enum topo_type *type,
			     enum topo_redop *redop)
{
	/* static: built once, not on every call */
	static const struct {
		MPI_Datatype t;
		enum topo_type v;
	} types[] = {
	    {MPI_SIGNED_CHAR, TOPO_INT8},
	    {MPI_INT8_T, TOPO_INT8},
	    {MPI_SHORT, SIZED(1, sizeof(short))},
	    {MPI_INT16_T, TOPO_INT16},
	    {MPI_INT, SIZED(1, sizeof(int))},
	    {MPI_INT32_T, TOPO_INT32},
	    {MPI_LONG, SIZED(1, sizeof(long))},
	    {MPI_LONG_LONG, SIZED(1, sizeof(long long))},
	    {MPI_LONG_LONG_INT, SIZED(1, sizeof(long long))},
	    {MPI_INT64_T, TOPO_INT64},
	    {MPI_AINT, SIZED(1, sizeof(MPI_Aint))},
	    {MPI_OFFSET, SIZED(1, sizeof(MPI_Offset))},
	    {MPI_COUNT, SIZED(1, sizeof(MPI_Count))},
	    {MPI_UNSIGNED_CHAR, TOPO_UINT8},
	    {MPI_UINT8_T, TOPO_UINT8},
	    {MPI_BYTE, TOPO_UINT8},
	    {MPI_UNSIGNED_SHORT, SIZED(0, sizeof(unsigned short))},
	    {MPI_UINT16_T, TOPO_UINT16},
	    {MPI_UNSIGNED, SIZED(0, sizeof(unsigned))},
	    {MPI_UINT32_T, TOPO_UINT32},
	    {MPI_UNSIGNED_LONG, SIZED(0, sizeof(unsigned long))},
	    {MPI_UNSIGNED_LONG_LONG, SIZED(0, sizeof(unsigned long long))},
	    {MPI_UINT64_T, TOPO_UINT64},
	    {MPI_FLOAT, TOPO_FLOAT},
	    {MPI_DOUBLE, TOPO_DOUBLE},
	};
	static const struct {
		MPI_Op o;
		enum topo_redop v;
	} ops[] = {
	    {MPI_SUM, TOPO_SUM},   {MPI_PROD, TOPO_PROD}, {MPI_MIN, TOPO_MIN},
	    {MPI_MAX, TOPO_MAX},   {MPI_BAND, TOPO_BAND}, {MPI_BOR, TOPO_BOR},
	    {MPI_BXOR, TOPO_BXOR},
	};
	size_t i, j;
	bool bitwise;

	for (j = 0; j < sizeof(ops) / sizeof(ops[0]) && ops[j].o != o; j++)
		;
	if (j == sizeof(ops) / sizeof(ops[0]))
		return o == MPI_MINLOC || o == MPI_MAXLOC ? R_LOC : R_OP;
	for (i = 0; i < sizeof(types) / sizeof(types[0]) && types[i].t != t;
	     i++)
		;
	if (i == sizeof(types) / sizeof(types[0]))
		return R_TYPE;
	bitwise = ops[j].v == TOPO_BAND || ops[j].v == TOPO_BOR ||
		  ops[j].v == TOPO_BXOR;
	if (bitwise && (types[i].v == TOPO_FLOAT || types[i].v == TOPO_DOUBLE))
		return R_TYPEOP;
	/* MPI_BYTE takes the bitwise operators only */
	if (t == MPI_BYTE && !bitwise)
		return R_ARGS;
	*type = types[i].v;
	*redop = ops[j].v;
	return R_COUNT;
}

/* Whether comm can take collc's way at all (the reason when not). */
static enum reason usable(MPI_Comm comm)
{
	int inter = 0, n = 0;

	if (!G.on)
		return R_OFF;
	/* the size first: a small communicator's call goes to MPI at the
	 * cost of one query at most (an intercommunicator's local group
	 * counts) */
	if (comm == MPI_COMM_WORLD)
		n = G.world_size;
	else if (comm == MPI_COMM_SELF)
		n = 1;
	else if (comm == MPI_COMM_NULL ||
		 PMPI_Comm_size(comm, &n) != MPI_SUCCESS)
		return R_ARGS;
	if (n < G.min_size)
		return R_SMALL;
	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
		return R_ARGS;
	return inter ? R_INTER : R_COUNT;
}

/* ---------------------------------------------------------------------- */
/* The user's bytes */

/* count elements of t at buf as one run of bytes: buf itself where they
 * are one run (and copy is false), else packed into scratch k. */
static unsigned char *bytes_in(struct ccomm *s, int k, const void *buf,
			       int count, MPI_Datatype t, int64_t len,
			       bool copy)
{
	MPI_Aint lb;
	int size, pos = 0;
	unsigned char *d;

	if (contiguous(t, &lb, &size) && !copy)
		return (unsigned char *)buf + lb;
	d = scratch(s, k, len);
	if (d == NULL)
		return NULL;
	if (contiguous(t, &lb, &size))
		memcpy(d, (const unsigned char *)buf + lb, (size_t)len);
	else
		PMPI_Pack(buf, count, t, d, (int)len, &pos, s->dup);
	return d;
}

/* Where a result of count elements of t for buf goes: buf itself where
 * they are one run of bytes, else scratch k (bytes_out moves it). */
static unsigned char *bytes_at(struct ccomm *s, int k, void *buf,
			       MPI_Datatype t, int64_t len)
{
	MPI_Aint lb;
	int size;

	if (contiguous(t, &lb, &size))
		return (unsigned char *)buf + lb;
	return scratch(s, k, len);
}

static void bytes_out(struct ccomm *s, const unsigned char *from, void *buf,
		      int count, MPI_Datatype t, int64_t len)
{
	MPI_Aint lb;
	int size, pos = 0;

	if (!contiguous(t, &lb, &size))
		PMPI_Unpack(from, (int)len, &pos, buf, count, t, s->dup);
}

/* s->size blocks of count elements of t at buf (in communicator rank
 * order, block i at buf + i * count * extent) as one run of B-byte blocks
 * in group rank order: buf itself when it is that already (and copy is
 * false), else scratch k. */
static unsigned char *blocks_in(struct ccomm *s, int k, const void *buf,
				int count, MPI_Datatype t, int64_t B, bool copy)
{
	MPI_Aint lb, elb, ext;
	int size;
	bool contig = contiguous(t, &lb, &size);
	unsigned char *d;

	if (contig && s->identity && !copy)
		return (unsigned char *)buf + lb;
	d = scratch(s, k, B * s->size);
	if (d == NULL)
		return NULL;
	PMPI_Type_get_extent(t, &elb, &ext);
	for (int g = 0; g < s->size; g++) {
		const unsigned char *from = (const unsigned char *)buf +
					    (MPI_Aint)s->host[g] * count * ext;
		int pos = 0;

		if (contig)
			memcpy(d + g * B, from + lb, (size_t)B);
		else
			PMPI_Pack(from, count, t, d + g * B, (int)B, &pos,
				  s->dup);
	}
	return d;
}

/* Where s->size blocks of a result go: buf itself when it takes them in
 * group order, else scratch k (blocks_out moves them). */
static unsigned char *blocks_at(struct ccomm *s, int k, void *buf,
				MPI_Datatype t, int64_t B)
{
	MPI_Aint lb;
	int size;

	if (contiguous(t, &lb, &size) && s->identity)
		return (unsigned char *)buf + lb;
	return scratch(s, k, B * s->size);
}

static void blocks_out(struct ccomm *s, const unsigned char *from, void *buf,
		       int count, MPI_Datatype t, int64_t B)
{
	MPI_Aint lb, elb, ext;
	int size;
	bool contig = contiguous(t, &lb, &size);

	if (contig && s->identity)
		return;
	PMPI_Type_get_extent(t, &elb, &ext);
	for (int g = 0; g < s->size; g++) {
		unsigned char *to =
		    (unsigned char *)buf + (MPI_Aint)s->host[g] * count * ext;
		int pos = 0;

		if (contig)
			memcpy(to + lb, from + g * B, (size_t)B);
		else
			PMPI_Unpack(from + g * B, (int)B, &pos, to, count, t,
				    s->dup);
	}
}

/* ---------------------------------------------------------------------- */
/* Running */

/* Runs plan c with this process's SEND and RECV at send and recv.
 * Returns MPI_SUCCESS or the MPI library's code of a failed call (the
 * communicator's error handler called). */
static int run(struct ccomm *s, struct cplan *c, const unsigned char *send,
	       unsigned char *recv)
{
	struct topo__mx *x = &c->x;
	const struct topo_plan *p = c->p;
	int32_t me = s->grank[s->rank];
	int64_t slen = topo__bufsize(p, TOPO__SEND, me),
		rlen = topo__bufsize(p, TOPO__RECV, me),
		wlen = topo__bufsize(p, TOPO__WORK, me);
	unsigned char *work = NULL;
	int rc;

	/* Buffers the operation does not give this process but the
	 * algorithm has: a send of zeros (a scatter "or-combine" member's
	 * contribution), a receive dropped. */
	if (send == NULL && slen > 0) {
		unsigned char *t = scratch(s, 3, slen);

		if (t == NULL)
			fatal("scratch memory", NULL);
		memset(t, 0, (size_t)slen);
		send = t;
	}
	if (recv == NULL && rlen > 0 && (recv = scratch(s, 4, rlen)) == NULL)
		fatal("scratch memory", NULL);
	if (c->writes_send && slen > 0) {
		/* never the caller's: a copy (scratch 3) */
		unsigned char *t = scratch(s, 3, slen);

		if (t == NULL)
			fatal("scratch memory", NULL);
		memcpy(t, send, (size_t)slen);
		send = t;
	}
	if (wlen > 0 && (work = scratch(s, 2, wlen)) == NULL)
		fatal("scratch memory", NULL);
	x->bp[TOPO__SEND] = (unsigned char *)send;
	x->bp[TOPO__RECV] = recv;
	x->bp[TOPO__WORK] = work;
	topo__mx_reset(x);
	rc = topo__mx_run(x, INFINITY);
	if (rc != 0) {
		topo__mx_abandon(x);
		if (x->mpi_rc != MPI_SUCCESS) {
			PMPI_Comm_call_errhandler(s->user, x->mpi_rc);
			return x->mpi_rc;
		}
		fatal("running a plan", NULL);
	}
	G.ours[p->params.op]++;
	return MPI_SUCCESS;
}

static void no_memory(const void *a)
{
	if (a == NULL)
		fatal("scratch memory", NULL);
}

/* ---------------------------------------------------------------------- */
/* The collectives */

API int MPI_Barrier(MPI_Comm comm)
{
	enum reason why = usable(comm);
	struct ccomm *s;
	struct cplan *c;

	if (why != R_COUNT)
		return hand_over(TOPO_OP_BARRIER, why), PMPI_Barrier(comm);
	s = state_of(comm);
	c = plan_of(s, TOPO_OP_BARRIER, 0, -1, TOPO_INT8, TOPO_SUM);
	if (c == NULL)
		return hand_over(TOPO_OP_BARRIER, R_PLAN), PMPI_Barrier(comm);
	return run(s, c, NULL, NULL);
}

API int MPI_Bcast(void *buf, int count, MPI_Datatype t, int root, MPI_Comm comm)
{
	enum reason why = usable(comm);
	struct ccomm *s;
	struct cplan *c;
	int size = 0, rc;
	int64_t B;
	unsigned char *d;

	if (why == R_COUNT &&
	    (count < 0 || PMPI_Type_size(t, &size) != MPI_SUCCESS))
		why = R_ARGS;
	B = (int64_t)count * size;
	if (why == R_COUNT) {
		int n = 0;

		PMPI_Comm_size(comm, &n);
		if (root < 0 || root >= n)
			why = R_ARGS;
		else if (B > INT_MAX)
			why = R_LARGE;
	}
	if (why != R_COUNT)
		return hand_over(TOPO_OP_BCAST, why),
		       PMPI_Bcast(buf, count, t, root, comm);
	if (B == 0) /* nothing to move: done */
		return G.ours[TOPO_OP_BCAST]++, MPI_SUCCESS;
	s = state_of(comm);
	c = plan_of(s, TOPO_OP_BCAST, B, root, TOPO_INT8, TOPO_SUM);
	if (c == NULL)
		return hand_over(TOPO_OP_BCAST, R_PLAN),
		       PMPI_Bcast(buf, count, t, root, comm);
	if (s->rank == root)
		d = bytes_in(s, 0, buf, count, t, B, false);
	else
		d = bytes_at(s, 1, buf, t, B);
	no_memory(d);
	rc = run(s, c, d, d);
	if (rc == MPI_SUCCESS && s->rank != root)
		bytes_out(s, d, buf, count, t, B);
	return rc;
}

/* The checks of scatter and gather, each the other's mirror: the root
 * passes the n blocks' side (rcount, rtype), and every process its own
 * block's side (ocount, otype), except the root in place (place: that
 * buffer is MPI_IN_PLACE).  Sets *rank and *B, the bytes of a block as
 * this process counts them. */
static enum reason block_args(MPI_Comm comm, int root, bool place, int rcount,
			      MPI_Datatype rtype, int ocount,
			      MPI_Datatype otype, int *rank, int64_t *B)
{
	enum reason why = usable(comm);
	int n = 0, rsize = 0, osize = 0;

	if (why != R_COUNT)
		return why;
	PMPI_Comm_size(comm, &n);
	PMPI_Comm_rank(comm, rank);
	if (root < 0 || root >= n)
		return R_ARGS;
	if (*rank == root &&
	    (rcount < 0 || PMPI_Type_size(rtype, &rsize) != MPI_SUCCESS))
		return R_ARGS;
	if (!(*rank == root && place) &&
	    (ocount < 0 || PMPI_Type_size(otype, &osize) != MPI_SUCCESS))
		return R_ARGS;
	*B = *rank == root ? (int64_t)rcount * rsize : (int64_t)ocount * osize;
	return *B * n > INT_MAX ? R_LARGE : R_COUNT;
}

API int MPI_Scatter(const void *sendbuf, int scount, MPI_Datatype stype,
		    void *recvbuf, int rcount, MPI_Datatype rtype, int root,
		    MPI_Comm comm)
{
	int rank = 0, rc;
	int64_t B = 0;
	enum reason why = block_args(comm, root, recvbuf == MPI_IN_PLACE,
				     scount, stype, rcount, rtype, &rank, &B);
	struct ccomm *s;
	struct cplan *c;
	bool in_place = rank == root && recvbuf == MPI_IN_PLACE;
	const unsigned char *send = NULL;
	unsigned char *recv;

	if (why != R_COUNT)
		return hand_over(TOPO_OP_SCATTER, why),
		       PMPI_Scatter(sendbuf, scount, stype, recvbuf, rcount,
				    rtype, root, comm);
	if (B == 0) /* nothing to move: done */
		return G.ours[TOPO_OP_SCATTER]++, MPI_SUCCESS;
	s = state_of(comm);
	c = plan_of(s, TOPO_OP_SCATTER, B, root, TOPO_INT8, TOPO_SUM);
	if (c == NULL)
		return hand_over(TOPO_OP_SCATTER, R_PLAN),
		       PMPI_Scatter(sendbuf, scount, stype, recvbuf, rcount,
				    rtype, root, comm);
	if (rank == root)
		no_memory(
		    send = blocks_in(s, 0, sendbuf, scount, stype, B, false));
	/* in place, the root's block stays where it is: received into
	 * scratch and dropped */
	recv = in_place ? scratch(s, 1, B) : bytes_at(s, 1, recvbuf, rtype, B);
	no_memory(recv);
	rc = run(s, c, send, recv);
	if (rc == MPI_SUCCESS && !in_place)
		bytes_out(s, recv, recvbuf, rcount, rtype, B);
	return rc;
}

API int MPI_Gather(const void *sendbuf, int scount, MPI_Datatype stype,
		   void *recvbuf, int rcount, MPI_Datatype rtype, int root,
		   MPI_Comm comm)
{
	int rank = 0, rc;
	int64_t B = 0;
	enum reason why = block_args(comm, root, sendbuf == MPI_IN_PLACE,
				     rcount, rtype, scount, stype, &rank, &B);
	struct ccomm *s;
	struct cplan *c;
	bool in_place = rank == root && sendbuf == MPI_IN_PLACE;
	const unsigned char *send;
	unsigned char *recv = NULL;

	if (why != R_COUNT)
		return hand_over(TOPO_OP_GATHER, why),
		       PMPI_Gather(sendbuf, scount, stype, recvbuf, rcount,
				   rtype, root, comm);
	if (B == 0) /* nothing to move: done */
		return G.ours[TOPO_OP_GATHER]++, MPI_SUCCESS;
	s = state_of(comm);
	c = plan_of(s, TOPO_OP_GATHER, B, root, TOPO_INT8, TOPO_SUM);
	if (c == NULL)
		return hand_over(TOPO_OP_GATHER, R_PLAN),
		       PMPI_Gather(sendbuf, scount, stype, recvbuf, rcount,
				   rtype, root, comm);
	if (in_place) {
		/* the root's own block, from its place in recvbuf */
		MPI_Aint elb, ext;

		PMPI_Type_get_extent(rtype, &elb, &ext);
		send = bytes_in(s, 0,
				(unsigned char *)recvbuf +
				    (MPI_Aint)root * rcount * ext,
				rcount, rtype, B, true);
	} else {
		send = bytes_in(s, 0, sendbuf, scount, stype, B, false);
	}
	no_memory(send);
	if (rank == root)
		no_memory(recv = blocks_at(s, 1, recvbuf, rtype, B));
	rc = run(s, c, send, recv);
	if (rc == MPI_SUCCESS && rank == root)
		blocks_out(s, recv, recvbuf, rcount, rtype, B);
	return rc;
}

/* The checks of the reductions: counts, types, operator, size. */
static enum reason reduce_args(MPI_Comm comm, int count, MPI_Datatype t,
			       MPI_Op o, int64_t blocks, enum topo_type *type,
			       enum topo_redop *redop, int64_t *B)
{
	enum reason why = usable(comm);
	int size = 0;

	if (why != R_COUNT)
		return why;
	if (count < 0 || PMPI_Type_size(t, &size) != MPI_SUCCESS)
		return R_ARGS;
	why = reduction(t, o, type, redop);
	if (why != R_COUNT)
		return why;
	*B = (int64_t)count * size;
	return *B * blocks > INT_MAX ? R_LARGE : R_COUNT;
}

API int MPI_Reduce(const void *sendbuf, void *recvbuf, int count,
		   MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm)
{
	enum topo_type type = TOPO_INT8;
	enum topo_redop redop = TOPO_SUM;
	int64_t B = 0;
	enum reason why = reduce_args(comm, count, t, o, 1, &type, &redop, &B);
	struct ccomm *s;
	struct cplan *c;
	int n = 0, rank = 0;
	const unsigned char *send;

	if (why == R_COUNT) {
		PMPI_Comm_size(comm, &n);
		PMPI_Comm_rank(comm, &rank);
		if (root < 0 || root >= n ||
		    (sendbuf == MPI_IN_PLACE && rank != root))
			why = R_ARGS;
	}
	if (why != R_COUNT)
		return hand_over(TOPO_OP_REDUCE, why),
		       PMPI_Reduce(sendbuf, recvbuf, count, t, o, root, comm);
	if (B == 0) /* nothing to move: done */
		return G.ours[TOPO_OP_REDUCE]++, MPI_SUCCESS;
	s = state_of(comm);
	c = plan_of(s, TOPO_OP_REDUCE, B, root, type, redop);
	if (c == NULL)
		return hand_over(TOPO_OP_REDUCE, R_PLAN),
		       PMPI_Reduce(sendbuf, recvbuf, count, t, o, root, comm);
	/* in place: the root's input is copied out of recvbuf first */
	send = sendbuf == MPI_IN_PLACE
		   ? bytes_in(s, 0, recvbuf, count, t, B, true)
		   : bytes_in(s, 0, sendbuf, count, t, B, false);
	no_memory(send);
	return run(s, c, send, rank == root ? recvbuf : NULL);
}

API int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count,
		      MPI_Datatype t, MPI_Op o, MPI_Comm comm)
{
	enum topo_type type = TOPO_INT8;
	enum topo_redop redop = TOPO_SUM;
	int64_t B = 0;
	enum reason why = reduce_args(comm, count, t, o, 1, &type, &redop, &B);
	struct ccomm *s;
	struct cplan *c;
	const unsigned char *send;

	if (why != R_COUNT)
		return hand_over(TOPO_OP_ALLREDUCE, why),
		       PMPI_Allreduce(sendbuf, recvbuf, count, t, o, comm);
	if (B == 0) /* nothing to move: done */
		return G.ours[TOPO_OP_ALLREDUCE]++, MPI_SUCCESS;
	s = state_of(comm);
	c = plan_of(s, TOPO_OP_ALLREDUCE, B, -1, type, redop);
	if (c == NULL)
		return hand_over(TOPO_OP_ALLREDUCE, R_PLAN),
		       PMPI_Allreduce(sendbuf, recvbuf, count, t, o, comm);
	send = sendbuf == MPI_IN_PLACE
		   ? bytes_in(s, 0, recvbuf, count, t, B, true)
		   : bytes_in(s, 0, sendbuf, count, t, B, false);
	no_memory(send);
	return run(s, c, send, recvbuf);
}

API int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int count,
				 MPI_Datatype t, MPI_Op o, MPI_Comm comm)
{
	enum topo_type type = TOPO_INT8;
	enum topo_redop redop = TOPO_SUM;
	int64_t B = 0;
	int n = 1;
	enum reason why;
	struct ccomm *s;
	struct cplan *c;
	const unsigned char *send;

	if (comm != MPI_COMM_NULL)
		PMPI_Comm_size(comm, &n);
	why = reduce_args(comm, count, t, o, n, &type, &redop, &B);
	if (why != R_COUNT)
		return hand_over(TOPO_OP_REDUCE_SCATTER, why),
		       PMPI_Reduce_scatter_block(sendbuf, recvbuf, count, t, o,
						 comm);
	if (B == 0) /* nothing to move: done */
		return G.ours[TOPO_OP_REDUCE_SCATTER]++, MPI_SUCCESS;
	s = state_of(comm);
	c = plan_of(s, TOPO_OP_REDUCE_SCATTER, B, -1, type, redop);
	if (c == NULL)
		return hand_over(TOPO_OP_REDUCE_SCATTER, R_PLAN),
		       PMPI_Reduce_scatter_block(sendbuf, recvbuf, count, t, o,
						 comm);
	/* in place, the n blocks are in recvbuf, whose first block takes
	 * the result */
	send = sendbuf == MPI_IN_PLACE
		   ? blocks_in(s, 0, recvbuf, count, t, B, true)
		   : blocks_in(s, 0, sendbuf, count, t, B, false);
	no_memory(send);
	return run(s, c, send, recvbuf);
}

API int MPI_Allgather(const void *sendbuf, int scount, MPI_Datatype stype,
		      void *recvbuf, int rcount, MPI_Datatype rtype,
		      MPI_Comm comm)
{
	enum reason why = usable(comm);
	struct ccomm *s;
	struct cplan *c;
	int n = 0, rsize = 0, rank = 0, rc;
	int64_t B = 0;
	const unsigned char *send;
	unsigned char *recv;

	if (why == R_COUNT) {
		PMPI_Comm_size(comm, &n);
		PMPI_Comm_rank(comm, &rank);
		if (rcount < 0 || PMPI_Type_size(rtype, &rsize) != MPI_SUCCESS)
			why = R_ARGS;
		B = (int64_t)rcount * rsize;
		if (why == R_COUNT && B * n > INT_MAX)
			why = R_LARGE;
	}
	if (why != R_COUNT)
		return hand_over(TOPO_OP_ALLGATHER, why),
		       PMPI_Allgather(sendbuf, scount, stype, recvbuf, rcount,
				      rtype, comm);
	if (B == 0) /* nothing to move: done */
		return G.ours[TOPO_OP_ALLGATHER]++, MPI_SUCCESS;
	s = state_of(comm);
	c = plan_of(s, TOPO_OP_ALLGATHER, B, -1, TOPO_INT8, TOPO_SUM);
	if (c == NULL)
		return hand_over(TOPO_OP_ALLGATHER, R_PLAN),
		       PMPI_Allgather(sendbuf, scount, stype, recvbuf, rcount,
				      rtype, comm);
	if (sendbuf == MPI_IN_PLACE) {
		MPI_Aint elb, ext;

		PMPI_Type_get_extent(rtype, &elb, &ext);
		send = bytes_in(s, 0,
				(unsigned char *)recvbuf +
				    (MPI_Aint)rank * rcount * ext,
				rcount, rtype, B, true);
	} else {
		send = bytes_in(s, 0, sendbuf, scount, stype, B, false);
	}
	no_memory(send);
	no_memory(recv = blocks_at(s, 1, recvbuf, rtype, B));
	rc = run(s, c, send, recv);
	if (rc == MPI_SUCCESS)
		blocks_out(s, recv, recvbuf, rcount, rtype, B);
	return rc;
}

API int MPI_Alltoall(const void *sendbuf, int scount, MPI_Datatype stype,
		     void *recvbuf, int rcount, MPI_Datatype rtype,
		     MPI_Comm comm)
{
	enum reason why = usable(comm);
	struct ccomm *s;
	struct cplan *c;
	int n = 0, rsize = 0, rc;
	int64_t B = 0;
	const unsigned char *send;
	unsigned char *recv;

	if (why == R_COUNT) {
		PMPI_Comm_size(comm, &n);
		if (rcount < 0 || PMPI_Type_size(rtype, &rsize) != MPI_SUCCESS)
			why = R_ARGS;
		B = (int64_t)rcount * rsize;
		if (why == R_COUNT && B * n > INT_MAX)
			why = R_LARGE;
	}
	if (why != R_COUNT)
		return hand_over(TOPO_OP_ALLTOALL, why),
		       PMPI_Alltoall(sendbuf, scount, stype, recvbuf, rcount,
				     rtype, comm);
	if (B == 0) /* nothing to move: done */
		return G.ours[TOPO_OP_ALLTOALL]++, MPI_SUCCESS;
	s = state_of(comm);
	c = plan_of(s, TOPO_OP_ALLTOALL, B, -1, TOPO_INT8, TOPO_SUM);
	if (c == NULL)
		return hand_over(TOPO_OP_ALLTOALL, R_PLAN),
		       PMPI_Alltoall(sendbuf, scount, stype, recvbuf, rcount,
				     rtype, comm);
	/* in place, the blocks to send are in recvbuf: copied out first */
	send = sendbuf == MPI_IN_PLACE
		   ? blocks_in(s, 0, recvbuf, rcount, rtype, B, true)
		   : blocks_in(s, 0, sendbuf, scount, stype, B, false);
	no_memory(send);
	no_memory(recv = blocks_at(s, 1, recvbuf, rtype, B));
	rc = run(s, c, send, recv);
	if (rc == MPI_SUCCESS)
		blocks_out(s, recv, recvbuf, rcount, rtype, B);
	return rc;
}

/* ---------------------------------------------------------------------- */
/* The nonblocking and persistent forms: the MPI library's own, counted
 * and reported, so that COLLC_MPI_REPORT and collc_mpi_counts can say
 * what did not take collc's way.  The persistent ones are MPI 4.0's
 * (MPICH 4.0), or Open MPI's MPIX_ extension of them (pcollreq). */

#if MPI_VERSION >= 4
#define PERSISTENT 1
#define PNAME(x) "MPI_" x "_init"
#define PFN(x) MPI_##x##_init
#define PPFN(x) PMPI_##x##_init
#else
#include <mpi-ext.h>
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define PERSISTENT 1
#define PNAME(x) "MPIX_" x "_init"
#define PFN(x) MPIX_##x##_init
#define PPFN(x) PMPIX_##x##_init
#else
#define PERSISTENT 0
#define PNAME(x) NULL
#endif
#endif

static const char *const later_name[2][TOPO_OP_COUNT] = {
    {"MPI_Ibcast", "MPI_Iscatter", "MPI_Igather", "MPI_Ireduce",
     "MPI_Iallreduce", "MPI_Iallgather", "MPI_Ireduce_scatter_block",
     "MPI_Ialltoall", "MPI_Ibarrier"},
    {PNAME("Bcast"), PNAME("Scatter"), PNAME("Gather"), PNAME("Reduce"),
     PNAME("Allreduce"), PNAME("Allgather"), PNAME("Reduce_scatter_block"),
     PNAME("Alltoall"), PNAME("Barrier")}};

static void later(int persistent, enum topo_op op)
{
	__atomic_fetch_add(&G.later[persistent][op], 1, __ATOMIC_RELAXED);
	say_handed(later_name[persistent][op],
		   !G.on	? R_OFF
		   : persistent ? R_PERSISTENT
				: R_NONBLOCKING);
}

API int MPI_Ibcast(void *buf, int count, MPI_Datatype t, int root,
		   MPI_Comm comm, MPI_Request *req)
{
	later(0, TOPO_OP_BCAST);
	return PMPI_Ibcast(buf, count, t, root, comm, req);
}

API int MPI_Iscatter(const void *sendbuf, int scount, MPI_Datatype stype,
		     void *recvbuf, int rcount, MPI_Datatype rtype, int root,
		     MPI_Comm comm, MPI_Request *req)
{
	later(0, TOPO_OP_SCATTER);
	return PMPI_Iscatter(sendbuf, scount, stype, recvbuf, rcount, rtype,
			     root, comm, req);
}

API int MPI_Igather(const void *sendbuf, int scount, MPI_Datatype stype,
		    void *recvbuf, int rcount, MPI_Datatype rtype, int root,
		    MPI_Comm comm, MPI_Request *req)
{
	later(0, TOPO_OP_GATHER);
	return PMPI_Igather(sendbuf, scount, stype, recvbuf, rcount, rtype,
			    root, comm, req);
}

API int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count,
		    MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm,
		    MPI_Request *req)
{
	later(0, TOPO_OP_REDUCE);
	return PMPI_Ireduce(sendbuf, recvbuf, count, t, o, root, comm, req);
}

API int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count,
		       MPI_Datatype t, MPI_Op o, MPI_Comm comm,
		       MPI_Request *req)
{
	later(0, TOPO_OP_ALLREDUCE);
	return PMPI_Iallreduce(sendbuf, recvbuf, count, t, o, comm, req);
}

API int MPI_Iallgather(const void *sendbuf, int scount, MPI_Datatype stype,
		       void *recvbuf, int rcount, MPI_Datatype rtype,
		       MPI_Comm comm, MPI_Request *req)
{
	later(0, TOPO_OP_ALLGATHER);
	return PMPI_Iallgather(sendbuf, scount, stype, recvbuf, rcount, rtype,
			       comm, req);
}

API int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf,
				  int count, MPI_Datatype t, MPI_Op o,
				  MPI_Comm comm, MPI_Request *req)
{
	later(0, TOPO_OP_REDUCE_SCATTER);
	return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, count, t, o, comm,
					  req);
}

API int MPI_Ialltoall(const void *sendbuf, int scount, MPI_Datatype stype,
		      void *recvbuf, int rcount, MPI_Datatype rtype,
		      MPI_Comm comm, MPI_Request *req)
{
	later(0, TOPO_OP_ALLTOALL);
	return PMPI_Ialltoall(sendbuf, scount, stype, recvbuf, rcount, rtype,
			      comm, req);
}

API int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	later(0, TOPO_OP_BARRIER);
	return PMPI_Ibarrier(comm, req);
}

#if PERSISTENT
API int PFN(Bcast)(void *buf, int count, MPI_Datatype t, int root,
		   MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	later(1, TOPO_OP_BCAST);
	return PPFN(Bcast)(buf, count, t, root, comm, info, req);
}

API int PFN(Scatter)(const void *sendbuf, int scount, MPI_Datatype stype,
		     void *recvbuf, int rcount, MPI_Datatype rtype, int root,
		     MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	later(1, TOPO_OP_SCATTER);
	return PPFN(Scatter)(sendbuf, scount, stype, recvbuf, rcount, rtype,
			     root, comm, info, req);
}

API int PFN(Gather)(const void *sendbuf, int scount, MPI_Datatype stype,
		    void *recvbuf, int rcount, MPI_Datatype rtype, int root,
		    MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	later(1, TOPO_OP_GATHER);
	return PPFN(Gather)(sendbuf, scount, stype, recvbuf, rcount, rtype,
			    root, comm, info, req);
}

API int PFN(Reduce)(const void *sendbuf, void *recvbuf, int count,
		    MPI_Datatype t, MPI_Op o, int root, MPI_Comm comm,
		    MPI_Info info, MPI_Request *req)
{
	later(1, TOPO_OP_REDUCE);
	return PPFN(Reduce)(sendbuf, recvbuf, count, t, o, root, comm, info,
			    req);
}

API int PFN(Allreduce)(const void *sendbuf, void *recvbuf, int count,
		       MPI_Datatype t, MPI_Op o, MPI_Comm comm, MPI_Info info,
		       MPI_Request *req)
{
	later(1, TOPO_OP_ALLREDUCE);
	return PPFN(Allreduce)(sendbuf, recvbuf, count, t, o, comm, info, req);
}

API int PFN(Allgather)(const void *sendbuf, int scount, MPI_Datatype stype,
		       void *recvbuf, int rcount, MPI_Datatype rtype,
		       MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	later(1, TOPO_OP_ALLGATHER);
	return PPFN(Allgather)(sendbuf, scount, stype, recvbuf, rcount, rtype,
			       comm, info, req);
}

API int PFN(Reduce_scatter_block)(const void *sendbuf, void *recvbuf,
				  int count, MPI_Datatype t, MPI_Op o,
				  MPI_Comm comm, MPI_Info info,
				  MPI_Request *req)
{
	later(1, TOPO_OP_REDUCE_SCATTER);
	return PPFN(Reduce_scatter_block)(sendbuf, recvbuf, count, t, o, comm,
					  info, req);
}

API int PFN(Alltoall)(const void *sendbuf, int scount, MPI_Datatype stype,
		      void *recvbuf, int rcount, MPI_Datatype rtype,
		      MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	later(1, TOPO_OP_ALLTOALL);
	return PPFN(Alltoall)(sendbuf, scount, stype, recvbuf, rcount, rtype,
			      comm, info, req);
}

API int PFN(Barrier)(MPI_Comm comm, MPI_Info info, MPI_Request *req)
{
	later(1, TOPO_OP_BARRIER);
	return PPFN(Barrier)(comm, info, req);
}
#endif

/* ---------------------------------------------------------------------- */
/* The query (libcollc-mpi(7)) */

API int collc_mpi_counts(const char *name, long long *ours, long long *theirs);

API int collc_mpi_counts(const char *name, long long *ours, long long *theirs)
{
	long long a = 0, b = 0;
	int found = name == NULL;

	for (int op = 0; op < TOPO_OP_COUNT; op++) {
		if (name == NULL || strcmp(name, mpi_name[op]) == 0) {
			a += G.ours[op];
			b += G.theirs[op];
			found = 1;
		}
		for (int k = 0; k < 2; k++)
			if (later_name[k][op] != NULL &&
			    (name == NULL ||
			     strcmp(name, later_name[k][op]) == 0)) {
				b += G.later[k][op];
				found = 1;
			}
	}
	if (ours != NULL)
		*ours = a;
	if (theirs != NULL)
		*theirs = b;
	return found ? (G.on ? 1 : 0) : -1;
}
