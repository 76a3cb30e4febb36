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
#include "sys/sys.h"

#include <errno.h>
#include <stdlib.h>

/* Largest mask read: 2^18 CPUs, a 32 KiB set.  Beyond it the mask is
 * "unknown" (topo__cpus_allowed returns 0). */
#define MAX_CPUS (1 << 18)
/* The largest CPU number a sysfs CPU list is taken to hold. */
#define CPU_MAX (1L << 24)

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
			CPU_FREE(set);
		/* glibc's own allocation, not the library's: the allocator
		 * asks this room how many CPUs it may use. */
		size = CPU_ALLOC_SIZE(ncpus);
		set = CPU_ALLOC(ncpus);
		if (set == NULL)
			return 0;
	}
	if (set != &small)
		CPU_FREE(set);
	return n;
}

int64_t topo__cpu_list_count(const char *s)
{
	int64_t n = 0;

	for (;;) {
		char *end;
		long a, b;

		if (*s < '0' || *s > '9')
			return 0;
		a = strtol(s, &end, 10);
		b = a;
		s = end;
		if (*s == '-') {
			if (s[1] < '0' || s[1] > '9')
				return 0;
			b = strtol(s + 1, &end, 10);
			s = end;
		}
		/* (CPU numbers far beyond any machine's: not a list) */
		if (b < a || b > CPU_MAX)
			return 0;
		n += (int64_t)(b - a) + 1;
		if (*s != ',')
			break;
		s++;
	}
	return *s == '\0' || *s == '\n' ? n : 0;
}
