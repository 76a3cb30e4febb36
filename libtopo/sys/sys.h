/*
 * sys.h - what libtopo asks of the system it runs on: the memory it may
 * still use, the CPUs it may run on, the size of its caches and a
 * monotonic clock.  The lowest room of the library: it depends on nothing
 * above it (the allocator, alloc.c, uses it), and nothing in it allocates
 * through the library.  Private to libtopo: define TOPO_INTERNAL.
 */
#ifndef TOPO_SYS_H
#define TOPO_SYS_H

#ifndef TOPO_INTERNAL
#error "sys/sys.h is private to libtopo"
#endif

#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* ---------------------------------------------------------------------- */
/* Memory (memory.c) */

/* Memory the process could be given now, in bytes: the least of
 * MemAvailable (/proc/meminfo, which counts reclaimable caches; else the
 * free pages), the room under RLIMIT_AS and RLIMIT_DATA (ulimit -v, -d)
 * given what the process uses of them, and the room under its cgroup's
 * memory limit (v2 memory.max at every level, or v1); INT64_MAX when
 * none is known.  *limit (when not NULL) names the one that binds. */
int64_t topo__memory_available(const char **limit);

/* ---------------------------------------------------------------------- */
/* The processors the process may run on (cpus.c) */

/* Counts the CPUs set in the first setsize bytes of set (as
 * CPU_ALLOC_SIZE() sizes them; at most 2^18 CPUs are looked at) and
 * stores the ids of the first max of them, ascending, into ids (which may
 * be NULL).  Returns the count.  Pure: no system call, no allocation. */
int topo__cpuset_ids(const cpu_set_t *set, size_t setsize, int *ids,
		     int max);
/* The CPUs of the calling thread's affinity mask (sched_getaffinity: set
 * for the whole process by taskset, MPI launchers, Slurm and cgroup
 * cpusets, and inherited by every thread), of any size up to 2^18 CPUs:
 * returns their count and stores the ids of the first max of them,
 * ascending, into ids (which may be NULL).  Returns 0 when the mask
 * cannot be read (ids untouched). */
int topo__cpus_allowed(int *ids, int max);
/* The CPUs a sysfs CPU list names ("0-3,8,10-11", a newline allowed at
 * the end), or 0 when s is not one. */
int64_t topo__cpu_list_count(const char *s);

/* ---------------------------------------------------------------------- */
/* Caches (cache.c) */

/* The size in bytes of CPU 0's outermost cache (the highest level Linux's
 * sysfs describes; the largest of that level), or 0 when sysfs describes
 * none.  *sharing (when not NULL) is set to the number of CPUs that share
 * it, 0 when not known. */
int64_t topo__cache_outermost(int64_t *sharing);

/* ---------------------------------------------------------------------- */
/* Clock */

/* Seconds on the monotonic clock. */
static inline double topo__now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif /* TOPO_SYS_H */
