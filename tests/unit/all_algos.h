/*
 * all_algos.h - every operation and each of its algorithms, as the
 * library lists them (topo_algorithm_*), for the tests that run them all
 * (test_homes.c, test_exec.c): an algorithm added to the library's
 * registry is run by both without a change here.
 */
#ifndef ALL_ALGOS_H
#define ALL_ALGOS_H

#include "topo.h"

#include <stdio.h>
#include <stdlib.h>

struct op_algo {
	enum topo_op op;
	const char *name;
	unsigned flags; /* TOPO_ALG_* */
};

/* Sets *out to every (operation, algorithm) pair, in the library's
 * order, and returns how many there are. */
static inline size_t all_algos(const struct op_algo **out)
{
	static struct op_algo list[128];
	static size_t n;
	static int filled;

	for (int op = 0; !filled && op < TOPO_OP_COUNT; op++)
		for (size_t i = 0; i < topo_algorithm_count(op); i++) {
			if (n == sizeof(list) / sizeof(list[0])) {
				fprintf(stderr, "all_algos.h: more than %zu "
						"algorithms\n",
					n);
				exit(2);
			}
			list[n].op = op;
			list[n].name = topo_algorithm_name(op, i);
			list[n++].flags = topo_algorithm_flags(op, i);
		}
	filled = 1;
	*out = list;
	return n;
}

#endif /* ALL_ALGOS_H */
