/*
 * plan_part.c - what one process's plan costs in a job of a million
 * ranks: its part of the plan (libtopo/plan/local.c) and its two-sided
 * schedule, beside the whole plan and its schedule that every process
 * built before (tests/bench/prod.py runs it for make bench).
 *
 *   plan_part NODES PER [REPS [WHOLE]]
 *
 * The machine is NODES nodes of PER tasks, one endpoint each, the group
 * every task, the tree hierarchical (libcollc-mpi's default).  For bcast
 * (flood), reduce (hierarchical) and allreduce (tree) of 8 doubles and of
 * 1 MiB (in 64 KiB segments), and for four members (the global root, the
 * identified node's member 1, a local root, a leaf), REPS builds
 * (default 21) of the member's part and its schedule, timed each; the
 * median, and the heap bytes the part and its schedule hold (mallinfo2,
 * measured around one build).  With WHOLE (1, the default): the whole
 * plan and the global root's schedule of it, as before, once (its tree
 * included).  One JSON object per line.
 */
#define TOPO_INTERNAL
#include "exec_internal.h"

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static size_t heap(void)
{
	struct mallinfo2 mi = mallinfo2();

	return mi.uordblks + mi.hblkhd;
}

static void params(struct topo_plan_params *pp, enum topo_op op, size_t bytes)
{
	topo_plan_params_init(pp, sizeof(*pp), op);
	pp->bytes = bytes;
	if (topo_op_reduces(op)) {
		pp->type = TOPO_DOUBLE;
		pp->redop = TOPO_SUM;
	}
	pp->segment = bytes >= 65536 ? 65536 : 0;
}

int main(int argc, char **argv)
{
	int32_t nodes = argc > 1 ? atoi(argv[1]) : 8192,
		per = argc > 2 ? atoi(argv[2]) : 128;
	int reps = argc > 3 ? atoi(argv[3]) : 21;
	int whole = argc > 4 ? atoi(argv[4]) : 1;
	int32_t n = nodes * per;
	int32_t *first = malloc(((size_t)nodes + 1) * sizeof(int32_t));
	const int32_t who[4] = {0, 1, 3 * per, 3 * per + per / 2};
	const char *const what[4] = {"global root", "identified member",
				     "local root", "leaf"};
	static const struct {
		enum topo_op op;
		const char *name;
	} ops[3] = {{TOPO_OP_BCAST, "bcast"},
		    {TOPO_OP_REDUCE, "reduce"},
		    {TOPO_OP_ALLREDUCE, "allreduce"}};
	static const size_t sizes[2] = {64, 1 << 20};
	struct topo__tview tv;
	double *t = malloc((size_t)reps * sizeof(double));
	topo_error err;

	for (int32_t j = 0; j <= nodes; j++)
		first[j] = j * per;
	if (topo__tview_hierarchical(&tv, n, first, nodes) != 0) {
		fprintf(stderr, "plan_part: bad view\n");
		return 2;
	}
	for (int o = 0; o < 3; o++)
		for (int z = 0; z < 2; z++)
			for (int w = 0; w < 4; w++) {
				struct topo_plan_params pp;
				size_t before, held = 0;
				int64_t msgs = 0, evs = 0;

				params(&pp, ops[o].op, sizes[z]);
				for (int i = 0; i < reps; i++) {
					topo_plan *p = NULL;
					struct topo__sched *s = NULL;
					double t0;

					topo_error_clear(&err);
					before = heap();
					t0 = topo__now();
					if (topo__plan_local(&p, &tv, &pp, -1,
							     who[w], false,
							     &err) != 0 ||
					    topo__sched_new(&s, p, NULL, n,
							    who[w], &err) != 0) {
						fprintf(stderr, "plan_part: %s\n",
							err.text);
						return 1;
					}
					t[i] = topo__now() - t0;
					held = heap() - before;
					msgs = p->nmsg;
					evs = s->nev;
					topo__sched_free(s);
					topo_plan_free(p);
				}
				qsort(t, (size_t)reps, sizeof(double), cmp_d);
				printf("{\"kind\": \"part\", \"op\": \"%s\", "
				       "\"bytes\": %zu, \"members\": %d, "
				       "\"member\": \"%s\", \"rank\": %d, "
				       "\"degree\": %d, \"messages\": %lld, "
				       "\"events\": %lld, \"seconds\": %.9f, "
				       "\"seconds_min\": %.9f, \"seconds_max\": "
				       "%.9f, \"bytes_held\": %zu}\n",
				       ops[o].name, sizes[z], (int)n, what[w],
				       (int)who[w],
				       (int)topo__tview_children(&tv, who[w],
								 NULL),
				       (long long)msgs, (long long)evs,
				       t[reps / 2], t[0], t[reps - 1], held);
				fflush(stdout);
			}
	if (whole) {
		/* the whole plan, as every process built it before */
		for (int o = 0; o < 3; o++) {
			char json[256];
			topo_machine *m = NULL;
			topo_group *g = NULL;
			topo_tree *tr = NULL;
			topo_plan *p = NULL;
			struct topo__sched *s = NULL;
			struct topo_plan_params pp;
			size_t before = heap();
			double t0 = topo__now(), tp, ts;

			snprintf(json, sizeof(json),
				 "{\"nodes\": %d, \"tasks_per_node\": %d, "
				 "\"network\": {\"type\": \"kary\", "
				 "\"fanout\": 1024}}",
				 (int)nodes, (int)per);
			params(&pp, ops[o].op, 64);
			topo_error_clear(&err);
			if (topo_machine_load_string(&m, json, strlen(json),
						     "bench", &err) != 0 ||
			    topo_group_new(&g, m, "all", "all", &err) != 0 ||
			    topo_tree_new(&tr, g, "hierarchical", &err) != 0 ||
			    topo__plan_new_hosted(&p, tr, &pp, NULL, 0, &err) !=
				0) {
				fprintf(stderr, "plan_part: whole: %s\n",
					err.text);
				return 1;
			}
			tp = topo__now() - t0;
			if (topo__sched_new(&s, p, NULL, n, 0, &err) != 0) {
				fprintf(stderr, "plan_part: %s\n", err.text);
				return 1;
			}
			ts = topo__now() - t0;
			printf("{\"kind\": \"whole\", \"op\": \"%s\", "
			       "\"bytes\": 64, \"members\": %d, \"messages\": "
			       "%lld, \"events\": %lld, \"seconds_plan\": %.6f, "
			       "\"seconds\": %.6f, \"bytes_held\": %zu}\n",
			       ops[o].name, (int)n, (long long)p->nmsg,
			       (long long)s->nev, tp, ts, heap() - before);
			fflush(stdout);
			topo__sched_free(s);
			topo_plan_free(p);
			topo_tree_free(tr);
			topo_group_free(g);
			topo_machine_free(m);
		}
	}
	free(first);
	free(t);
	return 0;
}
