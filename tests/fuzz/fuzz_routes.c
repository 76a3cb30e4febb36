/*
 * fuzz_routes.c - libFuzzer target: the loader of compile outputs.
 *
 * The input is a collc-routes document (collc(5)) for
 * topo_compiled_load_string.  A failure must come with a well-formed
 * error record.  A document that loads is:
 *  - written back in every encoding (rule-encoded, full, version 1,
 *    without tables): each is as long as topo_compiled_write_size says,
 *    loads again with the same route rows (where it has them) and writes
 *    the same bytes a second time;
 *  - walked: every row of every member of every tree (topo_routes_rows,
 *    topo_routes_row) names ranks of the group, the derived rule
 *    (topo_tree_route) answers for every tree neighbour, and the lookups by
 *    name find what they should;
 *  - drawn (topo_tree_write_dot, _nodes) and planned: a bcast "flood" of 16
 *    bytes over each tree's table as loaded, hand-edited or not, from a
 *    member the input's size picks; in groups of at most MAX_RUN members
 *    every other algorithm too, and every plan runs on one thread with a
 *    1 s timeout.  A run must verify unless it floods a table read from
 *    the file (which may be hand-edited: its faults are the point).
 */
#define TOPO_INTERNAL
#include "fuzz_common.h"

#include <math.h>
#include "topo_internal.h"

#define MAX_RUN 16
/* Plans and runs cost what the table sends; keep inputs fast. */
#define MAX_PLAN_MEMBERS 4096
#define MAX_ROUNDTRIP (256 << 10)

static void check_rows(const topo_tree *t)
{
	const topo_group *g = topo_tree_group(t);
	int32_t n = topo_group_size(g);
	int32_t *scratch = malloc(((size_t)n + 1) * sizeof(int32_t));

	FUZZ_CHECK(scratch != NULL, "malloc");
	for (int32_t r = 0; r < n; r++) {
		int32_t rows = topo_routes_rows(t, r);
		int32_t deg = topo_tree_degree(t, r);

		FUZZ_CHECK(rows >= 0, "member %d has %d rows", (int)r,
			   (int)rows);
		for (int32_t i = 0; i < rows; i++) {
			const int32_t *to = NULL;
			int32_t from = -2;
			int32_t k =
			    topo_routes_row(t, r, i, &from, &to, scratch);

			FUZZ_CHECK(k >= 0 && (k == 0 || to != NULL),
				   "row %d of %d: %d", (int)i, (int)r, (int)k);
			FUZZ_CHECK(from >= -1 && from < n,
				   "row %d of %d from %d", (int)i, (int)r,
				   (int)from);
			for (int32_t j = 0; j < k; j++)
				FUZZ_CHECK(to[j] >= 0 && to[j] < n,
					   "row %d of %d: target %d", (int)i,
					   (int)r, (int)to[j]);
		}
		FUZZ_CHECK(topo_routes_row(t, r, rows, &(int32_t){0},
					   &(const int32_t *){NULL},
					   scratch) == TOPO_EARG,
			   "row past the end");
		/* The tree's own rule: from the origin every neighbour. */
		FUZZ_CHECK(topo_tree_route(t, r, -1, scratch) == deg,
			   "route from the origin of %d", (int)r);
		if (topo_tree_parent(t)[r] >= 0)
			FUZZ_CHECK(topo_tree_route(t, r, topo_tree_parent(t)[r],
						   scratch) == deg - 1,
				   "route from the parent of %d", (int)r);
	}
	free(scratch);
}

/* A prediction of any plan that could be made, faulty tables included:
 * it ends, its time is that of its critical path's last step and of its
 * last member, every finish is within it, and it counts the messages the
 * plan has. */
static void predict(const topo_plan *p, const topo_tree *t)
{
	struct topo_predict_params pp;
	topo_prediction *r = NULL;
	topo_error err;
	int64_t shm = -1, net = -1, n;
	double sec;
	int rc;

	topo_predict_params_init(&pp, sizeof(pp));
	pp.timeout = 1.0;
	topo_error_clear(&err);
	rc = topo_plan_predict(p, &pp, &r, &err);
	fuzz_check_error(rc, &err, "topo_plan_predict");
	FUZZ_CHECK(rc == 0 || rc == TOPO_ENOMEM || rc == TOPO_ETIMEDOUT,
		   "predict: rc %d: %s", rc, err.text);
	if (rc != 0)
		return;
	sec = topo_prediction_seconds(r);
	n = topo_prediction_path_length(r);
	FUZZ_CHECK(isfinite(sec) && sec >= 0, "predicted %g s", sec);
	FUZZ_CHECK(n == 0 ||
		       topo_prediction_path_step(r, n - 1)->end == sec,
		   "the path ends at %g s, the prediction at %g s",
		   n > 0 ? topo_prediction_path_step(r, n - 1)->end : 0.0,
		   sec);
	FUZZ_CHECK(topo_group_rank(topo_tree_group(t),
				   topo_prediction_last(r)) >= 0,
		   "last member %d", (int)topo_prediction_last(r));
	for (int32_t v = 0; v < topo_group_size(topo_tree_group(t)); v++)
		FUZZ_CHECK(topo_prediction_finish(r, v) >= 0 &&
			       topo_prediction_finish(r, v) <= sec,
			   "member %d finishes at %g s of %g", (int)v,
			   topo_prediction_finish(r, v), sec);
	topo_prediction_messages(r, &shm, &net, NULL, NULL);
	FUZZ_CHECK(shm + net == topo_plan_messages(p),
		   "predicted %lld + %lld messages, the plan has %lld",
		   (long long)shm, (long long)net,
		   (long long)topo_plan_messages(p));
	topo_prediction_free(r);
}

/* The algorithms of collrun(1) (plan.c's table). */
static const struct {
	enum topo_op op;
	const char *name;
} algos[] = {
    {TOPO_OP_BCAST, "flood"},	     {TOPO_OP_SCATTER, "tree"},
    {TOPO_OP_SCATTER, "or-combine"}, {TOPO_OP_GATHER, "chunked"},
    {TOPO_OP_GATHER, "tree"},	     {TOPO_OP_REDUCE, "hierarchical"},
    {TOPO_OP_REDUCE, "tree"},
    /* the algorithms of the rootless operations that follow the tree */
    {TOPO_OP_ALLREDUCE, "tree"},	     {TOPO_OP_ALLREDUCE, "hierarchical"},
    {TOPO_OP_ALLGATHER, "tree"},	     {TOPO_OP_REDUCE_SCATTER, "tree"},
    {TOPO_OP_BARRIER, "tree"},
};

/*
 * Plans algorithm a over t from the member at rank root_rank, and runs
 * the plan when the group is small.  Only flood reads the route table;
 * the others follow the tree, which the loader has checked, so their runs
 * must verify, and so must flood's over a derived table.
 */
static void plan(const topo_tree *t, size_t a, int32_t root_rank, int derived)
{
	const topo_group *g = topo_tree_group(t);
	struct topo_plan_params pp;
	struct topo_run_params rp;
	topo_plan *p = (topo_plan *)1;
	topo_report *rep = NULL;
	topo_error err;
	int rc;

	topo_plan_params_init(&pp, sizeof(pp), algos[a].op);
	pp.algorithm = algos[a].name;
	/* (a rootless operation refuses a root, a barrier bytes) */
	pp.root = topo_op_has_root(algos[a].op) ? topo_group_members(g)[root_rank]
						: -1;
	pp.bytes = algos[a].op == TOPO_OP_BARRIER
		       ? 0
		       : 16; /* type: int32 for the reductions, else int8 */
	topo_error_clear(&err);
	rc = topo_plan_new(&p, t, &pp, &err);
	fuzz_check_error(rc, &err, "topo_plan_new");
	if (rc != 0) {
		FUZZ_CHECK(p == NULL, "*out set on failure");
		/* Some algorithms want a tree of their own shape (EARG). */
		FUZZ_CHECK(rc == TOPO_ENOMEM || rc == TOPO_ELIMIT ||
			       (rc == TOPO_EARG && a != 0),
			   "%s plan: rc %d: %s", algos[a].name, rc, err.text);
		return;
	}
	FUZZ_CHECK(!topo_op_has_root(algos[a].op) ||
		       topo_plan_root(p) == pp.root,
		   "plan root %d, want %d", (int)topo_plan_root(p),
		   (int)pp.root);
	if (topo_group_size(g) <= MAX_RUN) {
		topo_run_params_init(&rp, sizeof(rp));
		rp.threads = 1;
		rp.iterations = 1;
		rp.timeout = 1.0;
		topo_error_clear(&err);
		rc = topo_plan_run(p, &rp, &rep, &err);
		fuzz_check_error(rc, &err, "topo_plan_run");
		FUZZ_CHECK(rc == 0 || rc == TOPO_ENOMEM || rc == TOPO_ELIMIT,
			   "run: rc %d: %s", rc, err.text);
		if (rc == 0) {
			const char *kind = "", *detail = "";

			if (topo_report_error_count(rep) > 0)
				topo_report_error(rep, 0, &kind, &detail);
			FUZZ_CHECK(topo_report_verified(rep) ==
				       (topo_report_error_total(rep) == 0),
				   "verified %d with %lld errors",
				   topo_report_verified(rep),
				   (long long)topo_report_error_total(rep));
			FUZZ_CHECK(topo_report_verified(rep) ||
				       (a == 0 && !derived),
				   "%s %s from endpoint %d over tree \"%s\" of "
				   "%d members does not verify: %s: %s",
				   topo_op_name(algos[a].op), algos[a].name,
				   (int)pp.root, topo_tree_name(t),
				   (int)topo_group_size(g), kind, detail);
		}
		topo_report_free(rep);
	}
	predict(p, t);
	topo_plan_free(p);
}

/* Whether tree j of group i has a table that departs from the rule
 * (hand-edited, faulty); a table that follows it must replay cleanly. */
static int has_routes(const topo_compiled *c, size_t i, size_t j)
{
	return topo_routes_departures(topo_compiled_tree(c, i, j), -1) != 0;
}

/* a and b hold the same route rows, member by member. */
static void same_rows(const topo_tree *a, const topo_tree *b)
{
	int32_t n = topo_group_size(topo_tree_group(a));
	int32_t *sa = malloc(((size_t)n + 1) * sizeof(int32_t));
	int32_t *sb = malloc(((size_t)n + 1) * sizeof(int32_t));

	FUZZ_CHECK(sa != NULL && sb != NULL, "malloc");
	FUZZ_CHECK(topo_routes_departures(a, -1) ==
		       topo_routes_departures(b, -1),
		   "departures %lld, then %lld",
		   (long long)topo_routes_departures(a, -1),
		   (long long)topo_routes_departures(b, -1));
	for (int32_t r = 0; r < n; r++) {
		int32_t rows = topo_routes_rows(a, r);

		FUZZ_CHECK(rows == topo_routes_rows(b, r),
			   "member %d: %d rows, then %d", (int)r, (int)rows,
			   (int)topo_routes_rows(b, r));
		for (int32_t i = 0; i < rows; i++) {
			int32_t fa, fb, na, nb;
			const int32_t *ta, *tb;

			na = topo_routes_row(a, r, i, &fa, &ta, sa);
			nb = topo_routes_row(b, r, i, &fb, &tb, sb);
			FUZZ_CHECK(na == nb && fa == fb &&
				       (na <= 0 ||
					memcmp(ta, tb, (size_t)na *
							   sizeof(int32_t)) ==
					    0),
				   "member %d row %d differs", (int)r, (int)i);
		}
	}
	free(sa);
	free(sb);
}

/* seed picks the root of the plans (any member may be a root). */
static void check_trees(const topo_compiled *c, size_t seed)
{
	FILE *dot = fopen("/dev/null", "w");
	int64_t members = 0;

	FUZZ_CHECK(dot != NULL, "/dev/null");
	for (size_t i = 0; i < topo_compiled_group_count(c); i++) {
		const topo_group *g = topo_compiled_group(c, i);

		FUZZ_CHECK(topo_compiled_find_group(c, topo_group_name(g)) == g,
			   "find group %zu", i);
		members += topo_group_size(g);
		for (size_t j = 0; j < topo_compiled_tree_count(c, i); j++) {
			const topo_tree *t = topo_compiled_tree(c, i, j);
			topo_error err;

			FUZZ_CHECK(topo_tree_group(t) == g, "tree's group");
			FUZZ_CHECK(topo_compiled_find_tree(
				       c, g, topo_tree_name(t)) == t,
				   "find tree %zu/%zu", i, j);
			check_rows(t);
			topo_error_clear(&err);
			fuzz_check_error(topo_tree_write_dot(t, dot, &err),
					 &err, "topo_tree_write_dot");
			topo_error_clear(&err);
			fuzz_check_error(topo_tree_write_dot_nodes(t, dot, &err),
					 &err, "topo_tree_write_dot_nodes");
			if (members > MAX_PLAN_MEMBERS)
				continue;
			for (size_t a = 0; a < sizeof(algos) / sizeof(algos[0]);
			     a++)
				if (a == 0 || topo_group_size(g) <= MAX_RUN)
					plan(t, a,
					     (int32_t)(seed %
						       (size_t)topo_group_size(
							   g)),
					     !has_routes(c, i, j));
		}
	}
	fclose(dot);
}

/* c written with flags is as long as predicted, loads back with the same
 * route rows (unless written without them) and writes the same bytes. */
static void roundtrip(const topo_compiled *c, unsigned flags)
{
	topo_compiled *back = NULL;
	topo_error err;
	size_t len = 0, len2 = 0;
	uint64_t want = 0;
	char *text = fuzz_write(c, flags, &len), *again;
	int rc;

	if (text == NULL)
		return;
	topo_error_clear(&err);
	rc = topo_compiled_write_size(c, flags, &want, &err);
	fuzz_check_error(rc, &err, "topo_compiled_write_size");
	FUZZ_CHECK(rc != 0 || want == len,
		   "flags 0x%x: %llu bytes predicted, %zu written", flags,
		   (unsigned long long)want, len);
	if (len > MAX_ROUNDTRIP) {
		free(text);
		return;
	}
	topo_error_clear(&err);
	rc = topo_compiled_load_string(&back, text, len, "out.json", &err);
	fuzz_check_error(rc, &err, "reloading the written document");
	FUZZ_CHECK(rc == 0 || rc == TOPO_ENOMEM,
		   "the written document does not load: %s: %s", err.pointer,
		   err.text);
	if (rc == 0 && !(flags & TOPO_WRITE_NO_ROUTES))
		for (size_t i = 0; i < topo_compiled_group_count(c); i++)
			for (size_t j = 0; j < topo_compiled_tree_count(c, i);
			     j++)
				same_rows(topo_compiled_tree(c, i, j),
					  topo_compiled_tree(back, i, j));
	if (rc == 0) {
		again = fuzz_write(back, flags, &len2);
		if (again != NULL)
			FUZZ_CHECK(len2 == len && memcmp(again, text, len) == 0,
				   "writing the reloaded document differs "
				   "(%zu bytes, then %zu)",
				   len, len2);
		free(again);
	}
	topo_compiled_free(back);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	topo_compiled *c = (topo_compiled *)1;
	topo_error err;
	int rc;

	topo_error_clear(&err);
	rc = topo_compiled_load_string(&c, (const char *)data, size,
				       "fuzz.json", &err);
	fuzz_check_error(rc, &err, "topo_compiled_load_string");
	if (rc != 0) {
		FUZZ_CHECK(c == NULL, "*out set on failure");
		return 0;
	}
	roundtrip(c, 0);
	roundtrip(c, TOPO_WRITE_FULL_ROUTES);
	roundtrip(c, TOPO_WRITE_VERSION_1);
	roundtrip(c, TOPO_WRITE_NO_ROUTES);
	check_trees(c, size);
	topo_compiled_free(c);
	return 0;
}
