/*
 * cache.c - the size of the processor's outermost cache and how many CPUs
 * share it, as Linux's sysfs describes CPU 0's caches
 * (/sys/devices/system/cpu/cpu0/cache/index*).  The in-process transport
 * streams copies that cannot stay cached; a virtual machine may describe
 * no cache at all, or its host's whole one.
 */
#define TOPO_INTERNAL
#include "sys/sys.h"

#include <stdio.h>

/* The CPUs in the sysfs CPU list at path, or 0 when it cannot be read. */
static int64_t cpu_list_file(const char *path)
{
	char line[4096];
	FILE *f = fopen(path, "r");
	int64_t n = 0;

	if (f == NULL)
		return 0;
	if (fgets(line, sizeof(line), f) != NULL)
		n = topo__cpu_list_count(line);
	fclose(f);
	return n;
}

int64_t topo__cache_outermost(int64_t *sharing_out)
{
	int64_t best = 0, sharing = 0;
	int best_level = 0;

	for (int i = 0; i < 16; i++) {
		char path[96], unit = 0;
		long long size = 0;
		int level = 0;
		FILE *f;

		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		f = fopen(path, "r");
		if (f == NULL)
			break;
		if (fscanf(f, "%d", &level) != 1)
			level = 0;
		fclose(f);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
		f = fopen(path, "r");
		if (f == NULL)
			continue;
		if (fscanf(f, "%lld%c", &size, &unit) < 1)
			size = 0;
		fclose(f);
		size *= unit == 'K' ? 1024 : unit == 'M' ? 1024 * 1024 : 1;
		if (level > best_level || (level == best_level && size > best)) {
			best_level = level;
			best = size;
			snprintf(path, sizeof(path),
				 "/sys/devices/system/cpu/cpu0/cache/index%d/"
				 "shared_cpu_list",
				 i);
			sharing = cpu_list_file(path);
		}
	}
	if (sharing_out != NULL)
		*sharing_out = sharing;
	return best;
}

