/*
 * cpus.c - the processors the process may run on: the affinity mask that
 * taskset(1), MPI launchers, Slurm and cgroup cpusets give it, which sets
 * the executor's default number of workers and where each one is pinned.
 *
 * The mask is read with sched_getaffinity() into a cpu_set_t of
 * CPU_SETSIZE (1024) CPUs first, which allocates nothing; on a kernel
 * configured for more CPUs that call fails with EINVAL, and the mask is
 * read again into sets allocated with CPU_ALLOC_SIZE(), doubling up to
 * MAX_CPUS.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include <errno.h>

/* Largest mask read: 2^18 CPUs, a 32 KiB set.  Beyond it the mask is
 * "unknown" (topo__cpus_allowed returns 0). */
#define MAX_CPUS (1 << 18)

int topo__cpuset_ids(const cpu_set_t *set, size_t setsize, int *ids, int max)
{
	int n = 0;

	if (setsize > CPU_ALLOC_SIZE(MAX_CPUS))
		setsize = CPU_ALLOC_SIZE(MAX_CPUS);
	for (size_t c = 0; c < setsize * 8; c++) {
		if (!CPU_ISSET_S(c, setsize, set))
			continue;
		if (ids != NULL && n < max)
			ids[n] = (int)c;
		n++;
	}
	return n;
}

int topo__cpus_allowed(int *ids, int max)
{
	cpu_set_t small, *set = &small;
	size_t size = sizeof(small);
	int ncpus = CPU_SETSIZE, n = 0;

	for (;;) {
		if (sched_getaffinity(0, size, set) == 0) {
			n = topo__cpuset_ids(set, size, ids, max);
			break;
		}
		if (errno != EINVAL || ncpus >= MAX_CPUS)
			break;
		/* The kernel's mask is larger than the set given. */
		ncpus *= 2;
		if (set != &small)
			topo__free(set);
		size = CPU_ALLOC_SIZE(ncpus);
		set = topo__calloc(1, size);
		if (set == NULL)
			return 0;
	}
	if (set != &small)
		topo__free(set);
	return n;
}
