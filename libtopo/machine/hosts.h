/*
 * hosts.h - a machine's node names ("hosts" of collc(5)), private to
 * libtopo: read by the machine loader and the compile-output loader in
 * the same words, looked up by the stride spec's "hosts" selector.
 */
#ifndef TOPO_HOSTS_H
#define TOPO_HOSTS_H

#ifndef TOPO_INTERNAL
#error "hosts.h is private to libtopo"
#endif

#include "io/jget.h"
#include "topo_internal.h"

#include <jansson.h>
#include <stddef.h>

/* Checks a "hosts" value at the current pointer against the machine's
 * nodes without allocating per node: an array of nodes valid names, or a
 * hostlist expression that expands to nodes names.  Repeats are found by
 * topo__hosts_set, which needs the names sorted. */
int topo__hosts_check(struct topo__jget *j, const json_t *v, int32_t nodes);

/* Gives m the names of a "hosts" value that topo__hosts_check accepted
 * (at the same pointer), refusing a name given to two nodes.  Returns 0,
 * TOPO_EINVAL or TOPO_ENOMEM. */
int topo__hosts_set(struct topo__jget *j, topo_machine *m, const json_t *v);

/* The node named name (len bytes), or -1 (and -1 on a machine without
 * names). */
int32_t topo__host_find(const topo_machine *m, const char *name, size_t len);

#endif
