/*
 * version.c - the library's version at run time, beside the compile-time
 * TOPO_VERSION_* macros of topo.h (jansson's version.c is the model): a
 * program built against one version and run against another shared
 * library can tell which one it got.
 */
#define TOPO_INTERNAL
#include "topo_internal.h"

const char *topo_version_string(void)
{
	return TOPO_VERSION_STRING;
}

int topo_version_cmp(int major, int minor, int patch)
{
	if (major != TOPO_VERSION_MAJOR)
		return TOPO_VERSION_MAJOR < major ? -1 : 1;
	if (minor != TOPO_VERSION_MINOR)
		return TOPO_VERSION_MINOR < minor ? -1 : 1;
	if (patch != TOPO_VERSION_PATCH)
		return TOPO_VERSION_PATCH < patch ? -1 : 1;
	return 0;
}
