/*
 * memory.c - the memory the process could be given now: what the system
 * has available, the room under the process's rlimits and under its
 * cgroup's limit.  The planner refuses a plan that cannot fit before it
 * builds a message, and the transport checks its exact arena size, both
 * against this figure.
 */
#define TOPO_INTERNAL
#include "sys/sys.h"

#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

/* A number from a one-line file (a cgroup's memory.max), or -1 ("max", no
 * such file, no number). */
static int64_t read_number_file(const char *path)
{
	FILE *f = fopen(path, "r");
	long long v = -1;

	if (f == NULL)
		return -1;
	if (fscanf(f, "%lld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* "Key: N kB" of /proc/self/status or /proc/meminfo, in bytes; -1. */
static int64_t read_kb(const char *path, const char *key)
{
	FILE *f = fopen(path, "r");
	char line[256];
	size_t klen = strlen(key);
	long long kb = -1;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, klen) == 0 && line[klen] == ':' &&
		    sscanf(line + klen + 1, "%lld", &kb) == 1)
			break;
	fclose(f);
	return kb < 0 ? -1 : kb > INT64_MAX / 1024 ? INT64_MAX : kb * 1024;
}

/* Room left under a limit: limit - used, or INT64_MAX for no limit. */
static int64_t room(int64_t limit, int64_t used)
{
	if (limit < 0)
		return INT64_MAX;
	if (used < 0)
		used = 0;
	return limit > used ? limit - used : 0;
}

/* The cgroup (v2, else v1 memory controller) of this process: the room
 * under its memory limit, INT64_MAX when it has none or none is found. */
static int64_t cgroup_room(void)
{
	FILE *f = fopen("/proc/self/cgroup", "r");
	char line[4096], path[4200];
	int64_t best = INT64_MAX;

	if (f == NULL)
		return INT64_MAX;
	while (fgets(line, sizeof(line), f) != NULL) {
		char *nl = strchr(line, '\n'), *rel;

		if (nl != NULL)
			*nl = '\0';
		if (strncmp(line, "0::", 3) == 0) {
			/* v2: limits apply at every level up to the root. */
			rel = line + 3;
			for (;;) {
				int64_t lim, cur, r;

				snprintf(path, sizeof(path),
					 "/sys/fs/cgroup%s/memory.max", rel);
				lim = read_number_file(path);
				snprintf(path, sizeof(path),
					 "/sys/fs/cgroup%s/memory.current", rel);
				cur = read_number_file(path);
				r = room(lim, cur);
				if (r < best)
					best = r;
				nl = strrchr(rel, '/');
				if (nl == NULL || nl == rel)
					break;
				*nl = '\0';
			}
		} else if ((rel = strstr(line, ":memory:")) != NULL) {
			int64_t lim, cur, r;

			rel += 8;
			snprintf(path, sizeof(path),
				 "/sys/fs/cgroup/memory%s/memory.limit_in_bytes",
				 rel);
			lim = read_number_file(path);
			snprintf(path, sizeof(path),
				 "/sys/fs/cgroup/memory%s/memory.usage_in_bytes",
				 rel);
			cur = read_number_file(path);
			/* v1 says "no limit" with a huge number. */
			if (lim >= INT64_MAX / 2)
				lim = -1;
			r = room(lim, cur);
			if (r < best)
				best = r;
		}
	}
	fclose(f);
	return best;
}

/* The room under an rlimit, given what the process uses of it now. */
static int64_t rlimit_room(int resource, const char *status_key)
{
	struct rlimit rl;

	if (getrlimit(resource, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur > (rlim_t)INT64_MAX)
		return INT64_MAX;
	return room((int64_t)rl.rlim_cur,
		    read_kb("/proc/self/status", status_key));
}

int64_t topo__memory_available(const char **limit)
{
	int64_t best = INT64_MAX, r;
	const char *why = "memory";
	long pages, page;

	r = read_kb("/proc/meminfo", "MemAvailable");
	if (r < 0) {
		pages = sysconf(_SC_AVPHYS_PAGES);
		page = sysconf(_SC_PAGESIZE);
		if (pages >= 0 && page > 0)
			r = (int64_t)pages > INT64_MAX / page
				? INT64_MAX
				: (int64_t)pages * page;
	}
	if (r >= 0 && r < best) {
		best = r;
		why = "memory";
	}
	r = rlimit_room(RLIMIT_AS, "VmSize");
	if (r < best) {
		best = r;
		why = "the address space limit (ulimit -v)";
	}
	r = rlimit_room(RLIMIT_DATA, "VmData");
	if (r < best) {
		best = r;
		why = "the data size limit (ulimit -d)";
	}
	r = cgroup_room();
	if (r < best) {
		best = r;
		why = "the cgroup's memory limit";
	}
	if (limit != NULL)
		*limit = why;
	return best;
}
