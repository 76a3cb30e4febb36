/*
 * simtool.c - the sim suite's driver (tests/sim/run.sh, loggopsim.sh):
 * plans one collective as collrun would for --predict (a predict-only
 * plan), prints the prediction in nanoseconds and writes the schedules for
 * the independent simulators.  A test tool, not an installed program.
 *
 *   simtool MACHINE.json OP ALGORITHM TREE BYTES [-g SPEC] [-c K=NS]...
 *           [-t TYPE] [-s SEGMENT] [-k CHUNK] [--goal FILE] [--smpi DIR]
 *
 * Prints "predicted NS" (%.3f) on standard output; exit status 0, or 1
 * with one line on standard error.
 */
#include <topo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(const char *what, const topo_error *err)
{
	char buf[1024];

	fprintf(stderr, "simtool: %s: %s\n", what,
		topo_error_format(err, buf, sizeof(buf)));
	return 1;
}

int main(int argc, char **argv)
{
	topo_machine *m = NULL;
	topo_group *g = NULL;
	topo_tree *t = NULL;
	topo_plan *p = NULL;
	topo_prediction *r = NULL;
	struct topo_plan_params pp;
	struct topo_predict_params q;
	struct topo_costs c;
	enum topo_op op;
	const char *spec = "all", *goal = NULL, *smpi = NULL;
	topo_error err;
	int rc = 1;

	if (argc < 6) {
		fprintf(stderr,
			"usage: simtool MACHINE.json OP ALGORITHM TREE BYTES "
			"[-g SPEC] [-c K=NS]... [-t TYPE] [-s SEGMENT] "
			"[-k CHUNK] [--goal FILE] [--smpi DIR]\n");
		return 2;
	}
	topo_error_clear(&err);
	if (topo_op_parse(&op, argv[2], &err) != 0)
		return fail("operation", &err);
	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = argv[3];
	pp.bytes = strtoull(argv[5], NULL, 0);
	pp.predict_only = 1;
	if (topo_machine_load_file(&m, argv[1], &err) != 0)
		return fail(argv[1], &err);
	if (topo_machine_costs(m, (topo_costs_init(&c, sizeof(c)), &c), &err) !=
	    0)
		goto bad;
	for (int i = 6; i < argc; i++) {
		const char *o = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (v == NULL) {
			fprintf(stderr, "simtool: %s needs a value\n", o);
			goto out;
		}
		i++;
		if (strcmp(o, "-g") == 0) {
			spec = v;
		} else if (strcmp(o, "-c") == 0) {
			if (topo_costs_set(&c, v, &err) != 0)
				goto bad;
		} else if (strcmp(o, "-t") == 0) {
			if (topo_type_parse(&pp.type, v, &err) != 0)
				goto bad;
		} else if (strcmp(o, "-s") == 0) {
			pp.segment = strtoull(v, NULL, 0);
		} else if (strcmp(o, "-k") == 0) {
			pp.chunk = strtoull(v, NULL, 0);
		} else if (strcmp(o, "--goal") == 0) {
			goal = v;
		} else if (strcmp(o, "--smpi") == 0) {
			smpi = v;
		} else {
			fprintf(stderr, "simtool: unknown option %s\n", o);
			goto out;
		}
	}
	if (topo_group_new(&g, m, NULL, spec, &err) != 0 ||
	    topo_tree_new(&t, g, argv[4], &err) != 0 ||
	    topo_plan_new(&p, t, &pp, &err) != 0)
		goto bad;
	topo_predict_params_init(&q, sizeof(q));
	q.costs = &c;
	if (topo_plan_predict(p, &q, &r, &err) != 0)
		goto bad;
	printf("predicted %.3f\n", topo_prediction_seconds(r) * 1e9);
	if (goal != NULL) {
		FILE *f = fopen(goal, "w");

		if (f == NULL) {
			perror(goal);
			goto out;
		}
		if (topo_plan_write_goal(p, &c, f, &err) != 0) {
			fclose(f);
			goto bad;
		}
		if (fclose(f) != 0) {
			perror(goal);
			goto out;
		}
	}
	if (smpi != NULL && topo_plan_write_smpi(p, &c, smpi, &err) != 0)
		goto bad;
	rc = 0;
	goto out;
bad:
	rc = fail("error", &err);
out:
	topo_prediction_free(r);
	topo_plan_free(p);
	topo_tree_free(t);
	topo_group_free(g);
	topo_machine_free(m);
	return rc;
}
