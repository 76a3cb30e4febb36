/*
 * planfix.h - for the unit tests that run plans through a transport
 * wrapping the in-process one (test_homes.c, test_lanes.c, test_fault.c):
 * a plan of an operation over a small machine of a k-ary network, and the
 * in-process transport's calls that such a wrapper passes through
 * unchanged.
 */
#ifndef PLANFIX_H
#define PLANFIX_H

#define TOPO_INTERNAL
#include "exec_hook.h"

#include "check.h"

struct fixture {
	topo_machine *m;
	topo_group *g;
	topo_tree *t;
	topo_plan *p;
};

/* The machine of `tasks` (its "nodes" and what follows), a binary tree
 * network; exits 2 if it does not load. */
static inline topo_machine *fixture_machine(const char *tasks)
{
	char json[256];
	topo_machine *m = NULL;
	topo_error err;
	int n;

	n = snprintf(json, sizeof(json),
		     "{\"nodes\": %s, \"network\": {\"type\": \"kary\", "
		     "\"fanout\": 2}}",
		     tasks);
	topo_error_clear(&err);
	if (topo_machine_load_string(&m, json, (size_t)n, NULL, &err) != 0) {
		fprintf(stderr, "machine %s: %s\n", tasks, err.text);
		exit(2);
	}
	return m;
}

/* nodes: the machine's "nodes" and what follows, such as
 * "2, \"tasks_per_node\": 3" or "3, \"tasks_per_node\": [3, 1, 2]"; the
 * tree is collrun's default for op (topo_op_default_tree).  Returns 0,
 * or -1 (a failed check) with f->p NULL. */
static inline int fixture_new(struct fixture *f, const char *nodes,
			      enum topo_op op, const char *algorithm,
			      size_t bytes, size_t segment)
{
	struct topo_plan_params pp;
	topo_error err;

	memset(f, 0, sizeof(*f));
	f->m = fixture_machine(nodes);
	topo_error_clear(&err);
	topo_plan_params_init(&pp, sizeof(pp), op);
	pp.algorithm = algorithm;
	if (op != TOPO_OP_BARRIER)
		pp.bytes = bytes;
	pp.segment = segment;
	if (topo_group_new(&f->g, f->m, "world", "all", &err) != 0 ||
	    topo_tree_new(&f->t, f->g, topo_op_default_tree(op), &err) != 0 ||
	    topo_plan_new(&f->p, f->t, &pp, &err) != 0) {
		CHECK(0, "%s %s over %s: %s", topo_op_name(op),
		      algorithm ? algorithm : "(default)", nodes, err.text);
		return -1;
	}
	return 0;
}

static inline void fixture_free(struct fixture *f)
{
	topo_plan_free(f->p);
	topo_tree_free(f->t);
	topo_group_free(f->g);
	topo_machine_free(f->m);
}

/* The in-process transport's own calls, for a wrapper's ops. */
static inline int pass_open(void **state, const struct topo_plan *p,
			    topo_error *err)
{
	return topo__transport_inproc.open(state, p, err);
}

static inline void pass_close(void *state)
{
	topo__transport_inproc.close(state);
}

static inline unsigned char *pass_buffer(void *state, int32_t r, int b)
{
	return topo__transport_inproc.buffer(state, r, b);
}

static inline void pass_fill(void *state, int b, int c)
{
	topo__transport_inproc.fill(state, b, c);
}

static inline const struct topo__slices *pass_slices(void *state)
{
	return topo__transport_inproc.slices(state);
}

/* A run of p over transport tr.  Its status goes to *rc_out, or with
 * rc_out NULL is checked to be 0.  Returns the report (NULL on failure). */
static inline topo_report *run_over(const topo_plan *p,
				    const struct topo__transport_ops *tr,
				    int threads, int iterations, int *rc_out)
{
	struct topo_run_params rp;
	topo_report *r = NULL;
	topo_error err;
	int rc;

	topo_run_params_init(&rp, sizeof(rp));
	rp.threads = threads;
	rp.iterations = iterations;
	topo_error_clear(&err);
	rc = topo__plan_run_transport(p, &rp, tr, &r, &err);
	if (rc_out != NULL)
		*rc_out = rc;
	else
		CHECK(rc == 0, "run: %s", err.text);
	return r;
}

#endif /* PLANFIX_H */
