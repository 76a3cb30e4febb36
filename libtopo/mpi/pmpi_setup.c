/*
 * pmpi_setup.c - libcollc-mpi.so's MPI_Init, MPI_Init_thread and
 * MPI_Finalize: the settings, agreed on by every process, and the job
 * described as a machine.
 *
 * The settings are environment variables (libcollc-mpi(7)), and a job
 * whose processes see different values would run different plans: wrong
 * results, then a hang.  MPI_Init is collective, so there every process
 * hashes each variable's value (and the contents of the COLLC_MPI_MACHINE
 * file, which the same name may give differently on different hosts) and
 * one MPI_Allreduce of the hashes and their complements with MPI_BAND
 * tells every process whether all agree: a bit that differs anywhere is 0
 * in the hash or in its complement.  Where one differs, rank 0 names the
 * variable, its own value, the ranks that differ and the first one's
 * value, and the job ends with status 2.  Only then are the values
 * checked and the machine built, the same way on every process, so that a
 * bad value is refused once, by rank 0, the same way everywhere.
 *
 * The machine: the nodes from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)
 * and the host names (MPI_Get_processor_name), ordered by their lowest
 * world rank, each with the processes it holds (as many as come: nodes
 * may be uneven), one task and one endpoint per process, tasks numbered in
 * node order.  COLLC_MPI_NODES fakes a layout on one host ("3,1,2": world
 * ranks 0-2 on node 0, 3 on node 1, 4-5 on node 2); COLLC_MPI_MACHINE
 * names a compile output (collc(5)) whose machine the job must match, task
 * r on world rank r; at most MACHINE_MAX_BYTES of it are read.
 */
#define TOPO_INTERNAL
#include "pmpi.h"
#include "coll/registry.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---------------------------------------------------------------------- */
/* The settings' values */

/* The variables that must agree: COLLC_MPI_DISABLE, _TREE, _NODES,
 * _MACHINE, _SEGMENT, _MIN_SIZE, _OP_TREE and _OP_ALGORITHM for each
 * operation, and the machine file's contents.  COLLC_MPI_WAIT is each
 * process's own, but only its valid values may differ (a bad one is
 * refused the same way as the others); COLLC_MPI_REPORT is each
 * process's own. */
enum {
	V_DISABLE,
	V_TREE,
	V_NODES,
	V_MACHINE,
	V_SEGMENT,
	V_MIN_SIZE,
	V_OP_TREE,
	V_OP_ALG = V_OP_TREE + TOPO_OP_COUNT,
	V_FILE = V_OP_ALG + TOPO_OP_COUNT,
	V_WAIT,
	NVARS
};

struct vars {
	char name[NVARS][48];
	const char *value[NVARS]; /* NULL: unset or empty */
	uint64_t hash[NVARS];
	/* the machine file, read once (V_FILE), or why not */
	char *text;
	size_t len;
	topo_error file_err;
	bool file_failed;
};

static uint64_t fnv(uint64_t h, const void *data, size_t len)
{
	const unsigned char *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 1099511628211ULL;
	return h;
}

static uint64_t hash_str(const char *s)
{
	/* unset and empty are the same; set differs from unset */
	return s == NULL ? 0x6c62272e07bb0142ULL
			 : fnv(14695981039346656037ULL, s, strlen(s) + 1);
}

static const char *env(const char *name)
{
	const char *v = getenv(name);

	return v != NULL && *v != '\0' ? v : NULL;
}

/* The machine file, at most MACHINE_MAX_BYTES of a regular file. */
static void read_machine_file(struct vars *v, const char *path)
{
	struct stat st;
	int fd;
	size_t cap;

	topo_error_clear(&v->file_err);
	v->file_failed = true;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		topo__err(&v->file_err, TOPO_EIO, path, NULL,
			  "cannot open: %s", strerror(errno));
		return;
	}
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		topo__err(&v->file_err, TOPO_EIO, path, NULL,
			  "not a regular file (a compile output of collc "
			  "is read whole, at most %zu MiB)",
			  MACHINE_MAX_BYTES >> 20);
		close(fd);
		return;
	}
	if ((uintmax_t)st.st_size > MACHINE_MAX_BYTES) {
		topo__err(&v->file_err, TOPO_ELIMIT, path, NULL,
			  "%lld bytes; libcollc-mpi reads at most %zu MiB "
			  "(a compile output of the machine alone, collc "
			  "compile -t physical, is smaller)",
			  (long long)st.st_size, MACHINE_MAX_BYTES >> 20);
		close(fd);
		return;
	}
	cap = (size_t)st.st_size;
	v->text = malloc(cap + 1);
	if (v->text == NULL) {
		topo__err(&v->file_err, TOPO_ENOMEM, path, NULL,
			  "out of memory reading %zu bytes", cap);
		close(fd);
		return;
	}
	/* the size is a bound: a file that grows is read to it only */
	while (v->len < cap) {
		ssize_t got = read(fd, v->text + v->len, cap - v->len);

		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			topo__err(&v->file_err, TOPO_EIO, path, NULL,
				  "cannot read: %s", strerror(errno));
			close(fd);
			return;
		}
		if (got == 0)
			break;
		v->len += (size_t)got;
	}
	close(fd);
	v->text[v->len] = '\0';
	v->file_failed = false;
}

static void read_vars(struct vars *v)
{
	static const char *const fixed[] = {
	    "COLLC_MPI_DISABLE", "COLLC_MPI_TREE",    "COLLC_MPI_NODES",
	    "COLLC_MPI_MACHINE", "COLLC_MPI_SEGMENT", "COLLC_MPI_MIN_SIZE"};

	memset(v, 0, sizeof(*v));
	for (int i = 0; i < V_OP_TREE; i++)
		snprintf(v->name[i], sizeof(v->name[i]), "%s", fixed[i]);
	for (int op = 0; op < TOPO_OP_COUNT; op++) {
		snprintf(v->name[V_OP_TREE + op], sizeof(v->name[0]),
			 "COLLC_MPI_%s_TREE", topo__pmpi_env_name[op]);
		snprintf(v->name[V_OP_ALG + op], sizeof(v->name[0]),
			 "COLLC_MPI_%s_ALGORITHM", topo__pmpi_env_name[op]);
	}
	snprintf(v->name[V_FILE], sizeof(v->name[0]),
		 "COLLC_MPI_MACHINE's file");
	snprintf(v->name[V_WAIT], sizeof(v->name[0]), "COLLC_MPI_WAIT");
	for (int i = 0; i < NVARS; i++) {
		if (i == V_FILE)
			continue;
		v->value[i] = env(v->name[i]);
		v->hash[i] = hash_str(v->value[i]);
	}
	if (v->value[V_WAIT] == NULL || strcmp(v->value[V_WAIT], "poll") == 0 ||
	    strcmp(v->value[V_WAIT], "block") == 0)
		v->hash[V_WAIT] = hash_str("valid");
	/* COLLC_MPI_DISABLE: "0" is off, as unset */
	if (v->value[V_DISABLE] != NULL &&
	    strcmp(v->value[V_DISABLE], "0") == 0)
		v->hash[V_DISABLE] = hash_str(NULL);
	if (v->value[V_MACHINE] != NULL &&
	    (v->value[V_DISABLE] == NULL ||
	     strcmp(v->value[V_DISABLE], "0") == 0)) {
		read_machine_file(v, v->value[V_MACHINE]);
		v->hash[V_FILE] =
		    v->file_failed
			? fnv(hash_str("failed"), v->file_err.text,
			      strlen(v->file_err.text))
			: fnv(14695981039346656037ULL, v->text, v->len);
	} else {
		v->hash[V_FILE] = hash_str(NULL);
	}
}

/* ---------------------------------------------------------------------- */
/* Agreeing on them */

/* Bad settings: one message (from world rank 0 only: the processes agree
 * on the values, so all would say the same) and the job ends with status
 * 2. */
static void refuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)))
__attribute__((noreturn));

static void refuse(const char *fmt, ...)
{
	char line[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	/* Rank 0 says it, and gives the launcher a moment to pass it on
	 * before its abort kills the job; the others wait for that abort
	 * (one from them first could kill rank 0 before its message is
	 * out, as a second's wait did under MPICH with eight processes on
	 * two CPUs, rank 0 still gathering who differs), a minute at
	 * most. */
	if (G.world_rank == 0) {
		struct timespec ts = {0, 200000000};

		fprintf(stderr, PFX "%s\n", line);
		fflush(stderr);
		nanosleep(&ts, NULL);
	} else {
		struct timespec ts = {0, 100000000};

		for (int i = 0; i < 600; i++)
			nanosleep(&ts, NULL);
	}
	PMPI_Abort(MPI_COMM_WORLD, EXIT_SETTINGS);
	exit(EXIT_SETTINGS);
}

/* "1-3, 5, 9-12": the ranks set in differ[0..n-1], at most size bytes
 * ("..." at the end when cut). */
static void rank_list(char *buf, size_t size, const int *differ, int n)
{
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < n; i++) {
		int j = i;

		if (!differ[i])
			continue;
		while (j + 1 < n && differ[j + 1])
			j++;
		if (len + 32 >= size) {
			snprintf(buf + len, size - len, ", ...");
			return;
		}
		len += (size_t)snprintf(buf + len, size - len, "%s%d", len ? ", " : "",
					i);
		if (j > i)
			len += (size_t)snprintf(buf + len, size - len, "-%d", j);
		i = j;
	}
}

/* A value as a message shows it: quoted, or "unset". */
static void shown(char *buf, size_t size, const char *v)
{
	if (v == NULL)
		snprintf(buf, size, "it unset");
	else
		snprintf(buf, size, "\"%.200s\"", v);
}

/* Every process's values against the others'; a difference ends the job
 * (status 2) with one message from rank 0. */
static void agree_vars(const struct vars *v)
{
	uint64_t all[2 * NVARS], mine[NVARS];
	int bad = -1, n = G.world_size, first = -1;
	int *differ = NULL;
	char ranks[200], v0[272], vk[272], their[256];

	for (int i = 0; i < NVARS; i++) {
		all[2 * i] = v->hash[i];
		all[2 * i + 1] = ~v->hash[i];
	}
	if (PMPI_Allreduce(MPI_IN_PLACE, all, 2 * NVARS, MPI_UINT64_T,
			   MPI_BAND, MPI_COMM_WORLD) != MPI_SUCCESS)
		topo__pmpi_fatal("agreeing on the settings", NULL);
	for (int i = 0; i < NVARS && bad < 0; i++)
		if (all[2 * i] != v->hash[i] || all[2 * i + 1] != ~v->hash[i])
			bad = i;
	if (bad < 0)
		return;
	/* The same on every process: which variable, then who differs from
	 * rank 0 and what the first of them has. */
	memcpy(mine, v->hash, sizeof(mine));
	PMPI_Bcast(mine, NVARS, MPI_UINT64_T, 0, MPI_COMM_WORLD);
	{
		int me = mine[bad] != v->hash[bad];

		if (G.world_rank == 0) {
			differ = calloc((size_t)n, sizeof(int));
			if (differ == NULL)
				topo__pmpi_fatal("agreeing on the settings",
						 NULL);
		}
		PMPI_Gather(&me, 1, MPI_INT, differ, 1, MPI_INT, 0,
			    MPI_COMM_WORLD);
	}
	if (G.world_rank == 0)
		for (int r = 0; r < n && first < 0; r++)
			if (differ[r])
				first = r;
	PMPI_Bcast(&first, 1, MPI_INT, 0, MPI_COMM_WORLD);
	memset(their, 0, sizeof(their));
	if (bad == V_FILE) {
		/* what the file is to them */
		snprintf(their, sizeof(their), "%s",
			 v->file_failed ? v->file_err.text
					: "a file of other contents");
	} else if (v->value[bad] != NULL) {
		snprintf(their, sizeof(their), "\"%.200s\"", v->value[bad]);
	} else {
		snprintf(their, sizeof(their), "it unset");
	}
	if (G.world_rank == first && first > 0)
		PMPI_Send(their, (int)sizeof(their), MPI_CHAR, 0, 1,
			  MPI_COMM_WORLD);
	if (G.world_rank == 0) {
		if (first > 0)
			PMPI_Recv(their, (int)sizeof(their), MPI_CHAR, first, 1,
				  MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		their[sizeof(their) - 1] = '\0';
		rank_list(ranks, sizeof(ranks), differ, n);
		if (bad == V_FILE) {
			snprintf(v0, sizeof(v0), "%s",
				 v->file_failed ? v->file_err.text
						: "its own contents");
		} else {
			shown(v0, sizeof(v0), v->value[bad]);
		}
		snprintf(vk, sizeof(vk), "%s", their);
		free(differ);
		if (bad == V_FILE)
			refuse("%s differs between the processes (every "
			       "process must read the same file): world rank "
			       "0 reads %s (%s); world rank%s %s read%s "
			       "otherwise (world rank %d: %s)",
			       v->name[V_FILE], v->value[V_MACHINE], v0,
			       strchr(ranks, ',') || strchr(ranks, '-') ? "s"
									 : "",
			       ranks,
			       strchr(ranks, ',') || strchr(ranks, '-') ? ""
									 : "s",
			       first, vk);
		refuse("%s differs between the processes (every process must "
		       "see the same settings): world rank 0 has %s, world "
		       "rank%s %s another value (world rank %d: %s)",
		       v->name[bad], v0,
		       strchr(ranks, ',') || strchr(ranks, '-') ? "s" : "", ranks,
		       first, vk);
	}
	refuse("(the settings differ)");
}

/* ---------------------------------------------------------------------- */
/* The job's machine */

int32_t *topo__pmpi_parse_layout(const char *v, int32_t *nodes,
				 const char **why)
{
	int32_t *t = malloc(((size_t)strlen(v) / 2 + 2) * sizeof(*t));
	const char *s = v;
	int32_t n = 0;

	*why = "expected a list of processes per node, as \"3,1,2\"";
	if (t == NULL)
		return NULL;
	for (;;) {
		char *end;
		unsigned long long x;

		if (!isdigit((unsigned char)*s))
			break;
		errno = 0;
		x = strtoull(s, &end, 10);
		if (x == 0) {
			*why = "a node of no processes (every count is 1 or "
			       "more)";
			break;
		}
		if (errno != 0 || x > INT32_MAX) {
			*why = "more processes on a node than libcollc-mpi "
			       "counts (at most 2147483647)";
			break;
		}
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
		topo__pmpi_fatal("building the machine", NULL);
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

static void build_machine(struct vars *v)
{
	const char *file = v->value[V_MACHINE], *layout = v->value[V_NODES];
	int n = G.world_size;
	int32_t *tasks = NULL, nodes = 0;
	topo_error err;
	char *json;

	topo_error_clear(&err);
	G.task = NULL; /* task r is world rank r, unless found otherwise */
	if (file != NULL) {
		char text[700];

		if (layout != NULL)
			refuse("COLLC_MPI_MACHINE and COLLC_MPI_NODES are both "
			       "set; set one");
		if (v->file_failed)
			refuse("COLLC_MPI_MACHINE: %s",
			       topo_error_format(&v->file_err, text,
						 sizeof(text)));
		if (topo_compiled_load_string(&G.c, v->text, v->len, file,
					      &err) != 0)
			refuse("COLLC_MPI_MACHINE: %s",
			       topo_error_format(&err, text, sizeof(text)));
		free(v->text);
		v->text = NULL;
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
		return;
	}
	if (layout != NULL) {
		int64_t sum = 0;
		const char *why = NULL;

		tasks = topo__pmpi_parse_layout(layout, &nodes, &why);
		if (tasks == NULL)
			refuse("COLLC_MPI_NODES=%s: at character %d: %s",
			       layout, (int)-nodes, why);
		for (int32_t i = 0; i < nodes; i++)
			sum += tasks[i];
		if (sum != n)
			refuse("COLLC_MPI_NODES=%s: the layout holds %lld "
			       "process%s and the job %d",
			       layout, (long long)sum, sum == 1 ? "" : "es", n);
	} else {
		/* A node: the processes that share memory
		 * (MPI_Comm_split_type) and a host name; its lowest world
		 * rank names it.  Nodes in the order of those, tasks in
		 * node order. */
		MPI_Comm node;
		int low = G.world_rank, *lows = malloc((size_t)n * sizeof(int));
		int32_t *first = calloc((size_t)n, sizeof(int32_t));
		bool same = true;

		tasks = calloc((size_t)n, sizeof(int32_t));
		G.task = malloc((size_t)n * sizeof(*G.task));
		if (lows == NULL || first == NULL || tasks == NULL ||
		    G.task == NULL)
			topo__pmpi_fatal("building the machine", NULL);
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
				topo__pmpi_fatal("building the machine", NULL);
			for (int32_t i = 1; i <= nodes; i++)
				next[i] = next[i - 1] + tasks[i - 1];
			for (int r = 0; r < n; r++) {
				G.task[r] = next[first[lows[r]] - 1]++;
				same &= G.task[r] == r;
			}
			free(next);
		}
		free(lows);
		free(first);
		if (same) {
			free(G.task);
			G.task = NULL;
		}
	}
	json = machine_json(tasks, nodes);
	if (json == NULL || topo_machine_load_string(&G.m, json, strlen(json),
						     "the job", &err) != 0)
		topo__pmpi_fatal("building the machine", &err);
	free(json);
	free(tasks);
	G.per = 1;
}

/* ---------------------------------------------------------------------- */
/* The settings' meaning, checked on every process alike */

/* An algorithm that needs the hierarchical tree (the hierarchical reduce,
 * seed 001) runs over it only: over another tree, an operation whose
 * default needs it takes its first algorithm that does not, and asking
 * for one that needs it is refused. */
static void check_not_hierarchical(int op, const char *aname)
{
	const struct topo__algorithm *a;

	if (G.set.alg[op] == NULL) {
		a = topo__algorithm_default((enum topo_op)op, false);
		for (size_t i = 0;
		     a != NULL && (a->flags & TOPO_ALG_HIERARCHICAL); i++)
			a = topo__algorithm_at((enum topo_op)op, i);
		if (a != NULL && !(a->flags & TOPO_ALG_DEFAULT))
			G.set.alg[op] = a->name;
		return;
	}
	a = topo__algorithm_find((enum topo_op)op, G.set.alg[op]);
	if (a != NULL && (a->flags & TOPO_ALG_HIERARCHICAL))
		refuse("%s=%s needs the hierarchical tree, and the tree of %s "
		       "is %s (COLLC_MPI_%s_TREE, COLLC_MPI_TREE)",
		       aname, a->name, topo__pmpi_mpi_name[op], G.set.tree[op],
		       topo__pmpi_env_name[op]);
}

static void check_settings(const struct vars *v)
{
	const char *all = v->value[V_TREE];
	topo_error err;

	topo_error_clear(&err);
	if (all == NULL)
		all = "hierarchical";
	if (v->value[V_SEGMENT] != NULL) {
		const char *s = v->value[V_SEGMENT];
		char *end;
		unsigned long long x;

		errno = 0;
		x = strtoull(s, &end, 10);
		if (errno != 0 || *end != '\0' || !isdigit((unsigned char)*s) ||
		    x > (unsigned long long)INT_MAX || x % 8 != 0)
			refuse("COLLC_MPI_SEGMENT=%s: expected a number of "
			       "bytes, a multiple of 8 from 0 to %d",
			       s, INT_MAX - 7);
		G.set.segment = (size_t)x;
	}
	if (v->value[V_MIN_SIZE] != NULL) {
		const char *s = v->value[V_MIN_SIZE];
		char *end;
		long x;

		errno = 0;
		x = strtol(s, &end, 10);
		if (errno != 0 || *end != '\0' || !isdigit((unsigned char)*s) ||
		    x < 1 || x > INT_MAX)
			refuse("COLLC_MPI_MIN_SIZE=%s: expected a number of "
			       "members from 1 to %d",
			       s, INT_MAX);
		G.set.min_size = (int)x;
	}
	if (topo_tree_shape_check(all, &err) != 0)
		refuse("COLLC_MPI_TREE=%s: %s", all, err.text);
	for (int op = 0; op < TOPO_OP_COUNT; op++) {
		const char *name = v->name[V_OP_TREE + op],
			   *aname = v->name[V_OP_ALG + op];
		const char *t = v->value[V_OP_TREE + op];

		G.set.tree[op] = t != NULL ? t : all;
		if (topo_tree_shape_check(G.set.tree[op], &err) != 0)
			refuse("%s=%s: %s", name, G.set.tree[op], err.text);
		G.set.alg[op] = v->value[V_OP_ALG + op];
		if (strcmp(G.set.tree[op], "hierarchical") != 0)
			check_not_hierarchical(op, aname);
		if (G.set.alg[op] != NULL) {
			/* tried on a group of one: an unknown name is
			 * refused by planning */
			struct topo_plan_params pp;
			topo_group *g = NULL;
			topo_tree *tr = NULL;
			topo_plan *p = NULL;
			int32_t ep = 0;
			int rc;

			topo_plan_params_init(&pp, sizeof(pp),
					      (enum topo_op)op);
			pp.algorithm = G.set.alg[op];
			rc = topo_group_new_list(&g, G.m, NULL, &ep, 1, &err);
			if (rc == 0)
				rc = topo_tree_new(&tr, g, "binomial", &err);
			if (rc == 0)
				rc = topo_plan_new(&p, tr, &pp, &err);
			topo_plan_free(p);
			topo_tree_free(tr);
			topo_group_free(g);
			if (rc != 0)
				refuse("%s=%s: %s", aname, G.set.alg[op],
				       err.text);
		}
	}
}

/* ---------------------------------------------------------------------- */
/* MPI_Init, MPI_Finalize */

static void start(void)
{
	int provided = MPI_THREAD_SINGLE, flag = 0, *ub = NULL;
	struct vars v;

	PMPI_Comm_rank(MPI_COMM_WORLD, &G.world_rank);
	PMPI_Comm_size(MPI_COMM_WORLD, &G.world_size);
	PMPI_Query_thread(&provided);
	G.mt = provided == MPI_THREAD_MULTIPLE;
	{
		const char *r = env("COLLC_MPI_REPORT");

		G.set.report = r != NULL && strcmp(r, "0") != 0;
	}
	/* every process, on or off: a process off while the others run
	 * collc's plans would leave them waiting */
	read_vars(&v);
	agree_vars(&v);
	G.set.disable = v.value[V_DISABLE] != NULL &&
			strcmp(v.value[V_DISABLE], "0") != 0;
	if (G.set.disable) {
		free(v.text);
		if (G.set.report && G.world_rank == 0)
			topo__pmpi_say("off (COLLC_MPI_DISABLE): every "
				       "collective goes to the MPI library");
		return;
	}
	build_machine(&v);
	free(v.text);
	check_settings(&v);
	{
		/* more processes on this host than it has CPUs: a process
		 * waiting in the MPI library's own loop may keep the CPU
		 * from the one it waits for (MPICH 4.0 spins there) */
		const char *w = v.value[V_WAIT];
		MPI_Comm host;
		int here = 1;
		long cpus = sysconf(_SC_NPROCESSORS_ONLN);

		PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
				     MPI_INFO_NULL, &host);
		PMPI_Comm_size(host, &here);
		PMPI_Comm_free(&host);
		if (w == NULL)
			G.set.poll = cpus > 0 && here > cpus;
		else if (strcmp(w, "poll") == 0 || strcmp(w, "block") == 0)
			G.set.poll = strcmp(w, "poll") == 0;
		else /* every process has this value (agree_vars) */
			refuse("COLLC_MPI_WAIT=%s: expected poll or block", w);
	}
	if (PMPI_Comm_create_keyval(topo__pmpi_copy_state,
				    topo__pmpi_delete_state, &G.keyval,
				    NULL) != MPI_SUCCESS)
		topo__pmpi_fatal("MPI_Comm_create_keyval", NULL);
	if (PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, topo__pmpi_forget,
				    &G.seen, NULL) != MPI_SUCCESS)
		topo__pmpi_fatal("MPI_Comm_create_keyval", NULL);
	PMPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag);
	G.tag_ub = flag && ub != NULL ? *ub : 32767;
	PMPI_Comm_group(MPI_COMM_WORLD, &G.world_group);
	G.on = true;
	if (G.set.report && G.world_rank == 0) {
		char line[400];
		size_t len = 0;
		int32_t nodes = topo_machine_nodes(G.m);

		for (int32_t i = 0; i < nodes && len < sizeof(line) - 16; i++)
			len += (size_t)snprintf(
			    line + len, sizeof(line) - len, "%s%d",
			    i > 0 ? "+" : "",
			    (int)topo_machine_node_tasks(G.m, i));
		topo__pmpi_say(
		    "%d process%s on %d node%s (%s), from %s%s", G.world_size,
		    G.world_size == 1 ? "" : "es", (int)nodes,
		    nodes == 1 ? "" : "s", line,
		    G.c != NULL			     ? "COLLC_MPI_MACHINE"
		    : v.value[V_NODES] != NULL ? "COLLC_MPI_NODES"
					       : "MPI_Comm_split_type and host "
						 "names",
		    G.mt ? "; MPI_THREAD_MULTIPLE" : "");
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
		if (G.set.report && G.world_rank == 0) {
			int64_t ours = 0, theirs = 0;

			for (int op = 0; op < TOPO_OP_COUNT; op++) {
				ours += G.ours[op];
				theirs += G.theirs[op] + G.later[0][op] +
					  G.later[1][op];
			}
			topo__pmpi_say("world rank %d: %lld collective%s over "
				       "collc's plans, %lld handed to the MPI "
				       "library",
				       G.world_rank, (long long)ours,
				       ours == 1 ? "" : "s", (long long)theirs);
		}
		topo__pmpi_free_all();
		PMPI_Comm_free_keyval(&G.keyval);
		PMPI_Comm_free_keyval(&G.seen);
		if (G.world_group != MPI_GROUP_NULL)
			PMPI_Group_free(&G.world_group);
		G.on = false;
		G.finalized = true;
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
