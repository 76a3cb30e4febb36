/*
 * test_emit.c - the schedules for independent simulators (libtopo/io/emit.c):
 * GOAL schedules (topo_plan_write_goal) parsed back and checked against
 * the plan and the prediction's mapping of it (predict_internal.h), and
 * SimGrid traces (topo_plan_write_smpi) checked for what a replay needs:
 * every file, every message sent once and received once with its size and
 * tag, and per-member orders that cannot deadlock.  Then the error paths:
 * arguments, directories that cannot be used, write errors, and every
 * allocation failing in turn.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "predict_internal.h"

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* Machines of every kind of edge: two nodes of several tasks, one task
 * per node in a torus (multi-hop routes), an uneven machine with two
 * endpoints per task, and one node. */
static const char *const machines[] = {
    "{\"name\": \"tiny\", \"nodes\": 4, \"tasks_per_node\": 2, "
    "\"network\": {\"type\": \"kary\", \"fanout\": 2}}",
    "{\"name\": \"torus\", \"nodes\": 9, \"tasks_per_node\": 1, "
    "\"network\": {\"type\": \"torus\", \"dims\": [3, 3]}}",
    "{\"name\": \"uneven\", \"nodes\": 3, \"tasks_per_node\": [1, 3, 2], "
    "\"endpoints_per_task\": 2, "
    "\"network\": {\"type\": \"tree\", \"parent\": [1, -1, 1]}}",
    "{\"name\": \"one\", \"nodes\": 1, \"tasks_per_node\": 5, "
    "\"network\": {\"type\": \"kary\", \"fanout\": 2}}",
};

struct algo {
	enum topo_op op;
	const char *name;
};

static const struct algo algos[] = {
    {TOPO_OP_BCAST, "flood"},
    {TOPO_OP_SCATTER, "tree"},
    {TOPO_OP_SCATTER, "or-combine"},
    {TOPO_OP_GATHER, "chunked"},
    {TOPO_OP_GATHER, "tree"},
    {TOPO_OP_REDUCE, "tree"},
    {TOPO_OP_REDUCE, "hierarchical"},
    {TOPO_OP_REDUCE, "direct"},
    {TOPO_OP_ALLREDUCE, "tree"},
    {TOPO_OP_ALLREDUCE, "hierarchical"},
    {TOPO_OP_ALLREDUCE, "ring"},
    {TOPO_OP_ALLREDUCE, "recursive-doubling"},
    {TOPO_OP_ALLREDUCE, "rabenseifner"},
    {TOPO_OP_ALLGATHER, "ring"},
    {TOPO_OP_ALLGATHER, "tree"},
    {TOPO_OP_ALLGATHER, "recursive-doubling"},
    {TOPO_OP_ALLGATHER, "bruck"},
    {TOPO_OP_REDUCE_SCATTER, "ring"},
    {TOPO_OP_REDUCE_SCATTER, "tree"},
    {TOPO_OP_REDUCE_SCATTER, "recursive-halving"},
    {TOPO_OP_REDUCE_SCATTER, "direct"},
    {TOPO_OP_ALLTOALL, "pairwise"},
    {TOPO_OP_ALLTOALL, "bruck"},
    {TOPO_OP_ALLTOALL, "direct"},
    {TOPO_OP_BARRIER, "dissemination"},
    {TOPO_OP_BARRIER, "tree"},
};

static const char *const shapes[] = {"physical", "hierarchical", "binomial",
				     "chain", "kary:2"};

struct fixture {
	topo_machine *m;
	topo_group *g;
	topo_tree *t;
};

static int fixture_new(struct fixture *x, const char *json, const char *shape)
{
	topo_error err;
	int rc;

	memset(x, 0, sizeof(*x));
	topo_error_clear(&err);
	rc = topo_machine_load_string(&x->m, json, strlen(json), NULL, &err);
	if (rc == 0)
		rc = topo_group_new(&x->g, x->m, "world", "all", &err);
	if (rc == 0)
		rc = topo_tree_new(&x->t, x->g, shape, &err);
	CHECK(rc == 0, "%s over %s: %s", json, shape, err.text);
	return rc;
}

static void fixture_free(struct fixture *x)
{
	topo_tree_free(x->t);
	topo_group_free(x->g);
	topo_machine_free(x->m);
}

/* A plan of op/algo over x's tree, or NULL when the algorithm refuses the
 * tree (reduce hierarchical wants the hierarchical one). */
static topo_plan *plan(const struct fixture *x, const struct algo *a,
		       size_t bytes, int lean)
{
	struct topo_plan_params pp;
	topo_plan *p = NULL;
	topo_error err;

	topo_plan_params_init(&pp, sizeof(pp), a->op);
	pp.algorithm = a->name;
	pp.bytes = a->op == TOPO_OP_BARRIER ? 0 : bytes; /* no data */
	pp.type = TOPO_INT32;
	pp.predict_only = lean;
	topo_error_clear(&err);
	if (topo_plan_new(&p, x->t, &pp, &err) != 0)
		return NULL;
	return p;
}

/* The costs of the tests: whole where LogGOPSim needs them, reductions
 * at a quarter of a ns a byte (whole for multiples of 4 bytes), copies
 * at 0.3 ns a byte, which GOAL rounds. */
static void costs(struct topo_costs *c)
{
	topo_costs_init(c, sizeof(*c));
	c->shm.G = 0.3;
	for (int t = 0; t < TOPO_TYPE_COUNT; t++)
		c->reduce[t] = 0.25;
}

/* Writes p's GOAL schedule into a string (caller frees). */
static char *goal_text(const topo_plan *p, const struct topo_costs *c)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	topo_error err;
	int rc;

	topo_error_clear(&err);
	rc = topo_plan_write_goal(p, c, f, &err);
	fclose(f);
	CHECK(rc == 0, "topo_plan_write_goal: %s", err.text);
	return buf;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

struct strs {
	char **v;
	size_t n, cap;
};

static void strs_add(struct strs *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void strs_add(struct strs *s, const char *fmt, ...)
{
	va_list ap;
	char buf[128];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 64;
		s->v = realloc(s->v, s->cap * sizeof(*s->v));
	}
	s->v[s->n++] = strdup(buf);
}

static void strs_free(struct strs *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
	memset(s, 0, sizeof(*s));
}

/* Are two lists equal as multisets? */
static bool strs_same(struct strs *a, struct strs *b)
{
	if (a->n != b->n)
		return false;
	if (a->n == 0)
		return true;
	qsort(a->v, a->n, sizeof(*a->v), cmp_str);
	qsort(b->v, b->n, sizeof(*b->v), cmp_str);
	for (size_t i = 0; i < a->n; i++)
		if (strcmp(a->v[i], b->v[i]) != 0)
			return false;
	return true;
}

static char op_label(int op)
{
	return op == TOPO__OP_SEND ? 's' : op == TOPO__OP_RECV ? 'r' : 'c';
}

/*
 * Parses a GOAL schedule back and checks it against plan p: the ranks,
 * each message's send and receive (where, size, peer, tag), each
 * computation and its whole-ns time, labels defined in their rank before
 * use, and exactly the "requires" lines the prediction's mapping gives.
 */
static void check_goal(const topo_plan *p, const struct topo_costs *c,
		       const char *text, const char *what)
{
	struct strs want = {0}, got = {0};
	int64_t M = p->nmsg, sends = 0, recvs = 0, calcs = 0;
	int64_t want_sends = 0, want_calcs = 0;
	bool *seen = calloc((size_t)M * 3 + 1, sizeof(*seen));
	int rank = -1, nranks = -1, bad = 0;
	const char *line = text;

	/* What the mapping says. */
	for (int64_t m = 0; m < M; m++) {
		int32_t ms = topo__msg_src(p, m), md = topo__msg_dst(p, m);

		if (ms != md) {
			want_sends++;
			if (topo__msg_kind(p, m) == TOPO__REDUCE) {
				want_calcs++;
				strs_add(&want, "%d c%lld r%lld", (int)md,
					 (long long)m, (long long)m);
			}
		} else {
			want_calcs++;
		}
		for (int64_t j = p->succ_off[m]; j < p->succ_off[m + 1]; j++) {
			int64_t n = p->succ[j];
			int32_t x;
			bool rs;
			int op = topo__dep_at(p, m, n, &x, &rs);
			char own = rs ? 'r'
				   : topo__msg_src(p, n) == topo__msg_dst(p, n)
				       ? 'c'
				       : 's';

			strs_add(&want, "%d %c%lld %c%lld", (int)x, own,
				 (long long)n, op_label(op), (long long)m);
		}
	}
	while (*line != '\0') {
		const char *end = strchr(line, '\n');
		size_t len = end != NULL ? (size_t)(end - line) : strlen(line);
		char buf[256], l1[32], l2[32], kind[16];
		long long a, b, tag;
		int peer;

		snprintf(buf, sizeof(buf), "%.*s", (int)len, line);
		line += len + (end != NULL);
		if (buf[0] == '\0' || strncmp(buf, "//", 2) == 0)
			continue;
		if (sscanf(buf, "num_ranks %d", &nranks) == 1)
			continue;
		if (sscanf(buf, "rank %d {", &rank) == 1)
			continue;
		if (strcmp(buf, "}") == 0) {
			rank = -1;
			continue;
		}
		if (sscanf(buf, "%31s requires %31s", l1, l2) == 2) {
			int64_t m1 = atoll(l1 + 1), m2 = atoll(l2 + 1);
			int t1 = l1[0] == 's' ? 0 : l1[0] == 'r' ? 1 : 2;
			int t2 = l2[0] == 's' ? 0 : l2[0] == 'r' ? 1 : 2;

			if (m1 < 0 || m1 >= M || m2 < 0 || m2 >= M ||
			    !seen[3 * m1 + t1] || !seen[3 * m2 + t2])
				bad++;
			strs_add(&got, "%d %s %s", rank, l1, l2);
			continue;
		}
		if (sscanf(buf, "s%lld: send %lldb to %d tag %lld", &a, &b,
			   &peer, &tag) == 4) {
			sends++;
			if (a < 0 || a >= M || topo__msg_src(p, a) != rank ||
			    topo__msg_dst(p, a) != peer || tag != a ||
			    b != (topo__msg_len(p, a) > 0 ? topo__msg_len(p, a)
							  : 1))
				bad++;
			else
				seen[3 * a] = true;
			continue;
		}
		if (sscanf(buf, "r%lld: recv %lldb from %d tag %lld", &a, &b,
			   &peer, &tag) == 4) {
			recvs++;
			if (a < 0 || a >= M || topo__msg_dst(p, a) != rank ||
			    topo__msg_src(p, a) != peer || tag != a ||
			    b != (topo__msg_len(p, a) > 0 ? topo__msg_len(p, a)
							  : 1))
				bad++;
			else
				seen[3 * a + 1] = true;
			continue;
		}
		if (sscanf(buf, "c%lld: %15s %lld", &a, kind, &b) == 3 &&
		    strcmp(kind, "calc") == 0) {
			calcs++;
			if (a < 0 || a >= M || topo__msg_dst(p, a) != rank ||
			    b != (long long)round(topo__calc_ns(p, c, a)))
				bad++;
			else
				seen[3 * a + 2] = true;
			continue;
		}
		bad++;
		CHECK(0, "%s: a line not understood: %s", what, buf);
	}
	CHECK_INT(nranks, p->n);
	CHECK(bad == 0, "%s: %d operations or requires do not match", what,
	      bad);
	CHECK(sends == want_sends && recvs == want_sends,
	      "%s: %lld sends, %lld receives, want %lld", what,
	      (long long)sends, (long long)recvs, (long long)want_sends);
	CHECK_INT(sends, topo_plan_messages(p));
	CHECK(calcs == want_calcs, "%s: %lld calcs, want %lld", what,
	      (long long)calcs, (long long)want_calcs);
	CHECK(strs_same(&want, &got),
	      "%s: the requires lines (%zu) are not the mapping's (%zu)", what,
	      got.n, want.n);
	strs_free(&want);
	strs_free(&got);
	free(seen);
}

/* Every operation, algorithm and tree: the GOAL schedule matches the
 * plan, and a predict-only plan writes the very same text as a full one. */
static void test_goal_all(void)
{
	struct topo_costs c;

	costs(&c);
	for (size_t i = 0; i < sizeof(machines) / sizeof(*machines); i++)
		for (size_t s = 0; s < sizeof(shapes) / sizeof(*shapes); s++) {
			struct fixture x;

			if (fixture_new(&x, machines[i], shapes[s]) != 0)
				continue;
			for (size_t a = 0; a < sizeof(algos) / sizeof(*algos);
			     a++)
				for (size_t bytes = 8; bytes <= 1 << 18;
				     bytes <<= 15) {
					topo_plan *full =
					    plan(&x, &algos[a], bytes, 0);
					topo_plan *lean =
					    plan(&x, &algos[a], bytes, 1);
					char what[160], *t1, *t2;

					if (full == NULL || lean == NULL) {
						CHECK(full == NULL &&
							  lean == NULL,
						      "a plan refused once");
						topo_plan_free(full);
						topo_plan_free(lean);
						continue;
					}
					snprintf(what, sizeof(what),
						 "machine %zu %s %s over %s, "
						 "%zu B",
						 i, topo_op_name(algos[a].op),
						 algos[a].name, shapes[s],
						 bytes);
					t1 = goal_text(full, &c);
					t2 = goal_text(lean, &c);
					check_goal(lean, &c, t2, what);
					CHECK(t1 != NULL && t2 != NULL &&
						  strcmp(t1, t2) == 0,
					      "%s: full and predict-only plans "
					      "write different schedules",
					      what);
					free(t1);
					free(t2);
					topo_plan_free(full);
					topo_plan_free(lean);
				}
			fixture_free(&x);
		}
}

/* A small case spelled out: a chain bcast of 8 bytes over 3 tasks of one
 * node, with its header and its copy rounded (8 x 0.3 = 2.4 -> 2). */
static void test_goal_text(void)
{
	struct fixture x;
	struct topo_costs c;
	const struct algo bc = {TOPO_OP_BCAST, "flood"};
	topo_plan *p;
	char *t;

	costs(&c);
	c.shm.L = 200;
	c.shm.o = c.shm.g = 100;
	if (fixture_new(&x,
			"{\"name\": \"three\", \"nodes\": 1, "
			"\"tasks_per_node\": 3, \"network\": {\"type\": "
			"\"kary\", \"fanout\": 2}}",
			"chain") != 0)
		return;
	p = plan(&x, &bc, 8, 1);
	t = goal_text(p, &c);
	CHECK(t != NULL && strstr(t, "num_ranks 3\n\nrank 0 {\nc0: calc 2\n"
				     "s1: send 8b to 1 tag 1\n}\n\n"
				     "rank 1 {\nr1: recv 8b from 0 tag 1\n"
				     "s2: send 8b to 2 tag 2\ns2 requires r1\n"
				     "}\n\nrank 2 {\nr2: recv 8b from 1 tag 2\n"
				     "}\n") != NULL,
	      "chain schedule:\n%s", t != NULL ? t : "");
	CHECK(t != NULL &&
		  strstr(t, "// one edge class: LogGOPSim -f FILE.bin -L 200 "
			    "-o 100 -g 100 -G 0.3 -S 2147483647 (LogGOPSim "
			    "takes whole ns)\n") != NULL,
	      "no LogGOPSim line:\n%s", t != NULL ? t : "");
	free(t);
	topo_plan_free(p);
	fixture_free(&x);
}

/* t's first line is head; every line before "num_ranks" is a comment;
 * one num_ranks line and a rank block per member; no control character
 * but the line ends. */
static void check_goal_head(const char *t, const char *head, int members)
{
	int nranks = 0, blocks = 0, comments = 1, r;
	bool clean = true;

	if (t == NULL)
		return;
	CHECK(strncmp(t, head, strlen(head)) == 0 && t[strlen(head)] == '\n',
	      "first line:\n%s\nwant:\n%s", t, head);
	for (const char *l = t; *l != '\0';) {
		const char *e = strchr(l, '\n');
		char tail;

		if (e == NULL)
			e = l + strlen(l);
		for (const char *c = l; c < e; c++)
			clean &= (unsigned char)*c >= 0x20 && *c != 0x7f;
		if (strncmp(l, "num_ranks", 9) == 0)
			nranks++;
		if (nranks == 0)
			comments &= strncmp(l, "// ", 3) == 0;
		if (sscanf(l, "rank %d %c", &r, &tail) == 2 && tail == '{')
			blocks++;
		l = *e != '\0' ? e + 1 : e;
	}
	CHECK(clean && comments && nranks == 1 && blocks == members,
	      "clean %d, comments %d, %d num_ranks, %d blocks:\n%s", clean,
	      comments, nranks, blocks, t);
}

/*
 * Names with every control character (C0 and tab, DEL, C1 as UTF-8) and a
 * byte that is not UTF-8: the machine's (a JSON string), the group's (any
 * string through topo_group_new) and the tree's (a compile output): the
 * header comment holds them as \xNN, so its line cannot end early and no
 * name becomes a line of the schedule.
 */
static void test_goal_names(void)
{
	static const char machine[] =
	    "{\"name\": \"m\\nnum_ranks 99\\rrank 0 {\\u001b\\u007f"
	    "\\u0085\\t}\", \"nodes\": 2, \"tasks_per_node\": 1, "
	    "\"network\": {\"type\": \"kary\", \"fanout\": 1}}";
	const struct algo bc = {TOPO_OP_BCAST, "flood"};
	char gname[64], *doc = NULL, *t, *at;
	size_t len = 0, n = 0;
	topo_machine *m = NULL;
	topo_group *g = NULL;
	topo_compiled *c = NULL;
	topo_plan *p = NULL;
	struct fixture x;
	topo_error err;
	FILE *f;
	int rc;

	/* "g" then bytes 0x01..0x1f, 0x7f, U+0080, 0xff. */
	gname[n++] = 'g';
	for (int ch = 1; ch < 0x20; ch++)
		gname[n++] = (char)ch;
	memcpy(gname + n, "\x7f\xc2\x80\xff", 5);
	topo_error_clear(&err);
	rc = topo_machine_load_string(&m, machine, strlen(machine), NULL, &err);
	if (rc == 0)
		rc = topo_group_new(&g, m, gname, "all", &err);
	memset(&x, 0, sizeof(x));
	if (rc == 0)
		rc = topo_tree_new(&x.t, g, "chain", &err);
	CHECK(rc == 0, "names: %s", err.text);
	if (rc == 0) {
		p = plan(&x, &bc, 8, 1);
		t = goal_text(p, NULL);
		check_goal_head(
		    t,
		    "// collc: bcast flood over tree chain of group "
		    "g\\x01\\x02\\x03\\x04\\x05\\x06\\x07\\x08"
		    "\\x09\\x0a\\x0b\\x0c\\x0d\\x0e\\x0f\\x10"
		    "\\x11\\x12\\x13\\x14\\x15\\x16\\x17\\x18"
		    "\\x19\\x1a\\x1b\\x1c\\x1d\\x1e\\x1f\\x7f"
		    "\\xc2\\x80\\xff (machine m\\x0anum_ranks "
		    "99\\x0drank 0 {\\x1b\\x7f\\xc2\\x85\\x09}): 2 "
		    "members, 8 bytes, 2 messages",
		    2);
		free(t);
		topo_plan_free(p);
		p = NULL;
	}
	topo_tree_free(x.t);
	/* A tree named in a compile output. */
	f = open_memstream(&doc, &len);
	rc = topo_compile(&c, m, NULL, NULL, 0, (const char *const[]){"chain"},
			  1, &err);
	if (rc == 0)
		rc = topo_compiled_write(c, f, 0, &err);
	fclose(f);
	topo_compiled_free(c);
	c = NULL;
	at = rc == 0 ? strstr(doc, "\"name\": \"chain\"") : NULL;
	CHECK(at != NULL, "compile: %s", err.text);
	if (at != NULL) {
		char *edited = NULL;

		*at = '\0';
		CHECK(asprintf(&edited, "%s\"name\": \"c\\n}\\nrank 1 {\\r\"%s",
			       doc, at + strlen("\"name\": \"chain\"")) > 0,
		      "asprintf");
		rc = topo_compiled_load_string(&c, edited, strlen(edited), NULL,
					       &err);
		CHECK(rc == 0, "edited compile output: %s", err.text);
		free(edited);
	}
	if (c != NULL) {
		const topo_group *cg = topo_compiled_find_group(c, "world");
		struct topo_plan_params pp;

		topo_plan_params_init(&pp, sizeof(pp), TOPO_OP_BCAST);
		pp.predict_only = 1;
		rc = cg != NULL ? topo_plan_new(&p,
						topo_compiled_find_tree(
						    c, cg, "c\n}\nrank 1 {\r"),
						&pp, &err)
				: -1;
		CHECK(rc == 0, "plan over the renamed tree: %s", err.text);
		t = rc == 0 ? goal_text(p, NULL) : NULL;
		check_goal_head(
		    t,
		    "// collc: bcast flood over tree c\\x0a}\\x0arank "
		    "1 {\\x0d of group world (machine m\\x0anum_ranks "
		    "99\\x0drank 0 {\\x1b\\x7f\\xc2\\x85\\x09}): 2 "
		    "members, 8 bytes, 2 messages",
		    2);
		free(t);
		topo_plan_free(p);
	}
	topo_compiled_free(c);
	free(doc);
	topo_group_free(g);
	topo_machine_free(m);
}

/* ---------------------------------------------------------------------- */
/* SimGrid traces */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, got;

	if (f == NULL)
		return NULL;
	do {
		if (cap - len < 4096) {
			cap = cap ? 2 * cap : 8192;
			buf = realloc(buf, cap + 1);
		}
		got = fread(buf + len, 1, cap - len, f);
		len += got;
	} while (got > 0);
	fclose(f);
	buf[len] = '\0';
	return buf;
}

static int count_lines(const char *s)
{
	int n = 0;

	for (; s != NULL && *s != '\0'; s++)
		n += *s == '\n';
	return n;
}

/* Removes dir and the files in it. */
static void rmtree(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[4096];

	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	closedir(d);
	rmdir(dir);
}

/* Entries of dir (but . and ..). */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		n +=
		    strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
	closedir(d);
	return n;
}

struct action {
	int kind; /* 0 isend, 1 recv, 2 other */
	int peer;
	long long tag, bytes;
};

/*
 * Checks the traces in dir against p: the lists, each member's file, each
 * message sent and received once with its size, and, by playing the
 * traces with blocking receives, that they cannot deadlock.
 */
static void check_smpi(const topo_plan *p, const char *dir, const char *what)
{
	char path[4096], *text;
	int n = p->n, bad = 0;
	struct action **acts = calloc((size_t)n, sizeof(*acts));
	int *nacts = calloc((size_t)n, sizeof(*nacts)), *pc;
	bool *sent = calloc((size_t)p->nmsg + 1, sizeof(*sent));
	int64_t isends = 0, recvs = 0;
	bool moved = true;

	snprintf(path, sizeof(path), "%s/traces.txt", dir);
	text = slurp(path);
	CHECK(count_lines(text) == n, "%s: traces.txt has %d lines", what,
	      count_lines(text));
	free(text);
	snprintf(path, sizeof(path), "%s/hostfile", dir);
	text = slurp(path);
	if (text != NULL) {
		char *line = text;

		for (int r = 0; r < n; r++) {
			char want[32];
			const topo_machine *m = p->t->g->m;

			snprintf(want, sizeof(want), "node%d\n",
				 (int)topo_machine_endpoint_node(
				     m, p->t->g->members[r]));
			if (strncmp(line, want, strlen(want)) != 0)
				bad++;
			line = strchr(line, '\n');
			line = line != NULL ? line + 1 : text;
		}
	}
	CHECK(count_lines(text) == n, "%s: hostfile has %d lines", what,
	      count_lines(text));
	free(text);
	snprintf(path, sizeof(path), "%s/platform.xml", dir);
	text = slurp(path);
	CHECK(text != NULL && strstr(text, "<platform version=\"4.1\">") &&
		  strstr(text, "</platform>"),
	      "%s: no platform", what);
	free(text);
	snprintf(path, sizeof(path), "%s/replay.sh", dir);
	CHECK(access(path, X_OK) == 0, "%s: replay.sh not executable", what);
	for (int r = 0; r < n; r++) {
		char *line, *next;
		int cap = 0;

		snprintf(path, sizeof(path), "%s/rank-%d.txt", dir, r);
		text = slurp(path);
		CHECK(text != NULL, "%s: no %s", what, path);
		if (text == NULL)
			continue;
		for (line = text; *line != '\0'; line = next) {
			int who;
			char verb[16];
			long long x1, x2, x3;
			struct action a = {2, 0, 0, 0};
			int got;

			next = strchr(line, '\n');
			next = next != NULL ? next + 1 : line + strlen(line);
			if (line[0] == '#')
				continue;
			got = sscanf(line, "%d %15s %lld %lld %lld", &who, verb,
				     &x1, &x2, &x3);
			if (got < 2 || who != r) {
				bad++;
				continue;
			}
			if (strcmp(verb, "isend") == 0 && got == 5)
				a = (struct action){0, (int)x1, x2, x3};
			else if (strcmp(verb, "recv") == 0 && got == 5)
				a = (struct action){1, (int)x1, x2, x3};
			if (a.kind < 2 &&
			    (a.tag < 0 || a.tag >= p->nmsg ||
			     topo__msg_len(p, a.tag) != a.bytes ||
			     (a.kind == 0
				  ? topo__msg_src(p, a.tag) != r ||
					topo__msg_dst(p, a.tag) != a.peer
				  : topo__msg_dst(p, a.tag) != r ||
					topo__msg_src(p, a.tag) != a.peer)))
				bad++;
			isends += a.kind == 0;
			recvs += a.kind == 1;
			if (nacts[r] == cap) {
				cap = cap ? 2 * cap : 16;
				acts[r] = realloc(acts[r],
						  (size_t)cap * sizeof(**acts));
			}
			acts[r][nacts[r]++] = a;
		}
		CHECK(strstr(text, "init\n") != NULL &&
			  strstr(text, "finalize\n") != NULL,
		      "%s: rank %d has no init or finalize", what, r);
		free(text);
	}
	CHECK(bad == 0, "%s: %d trace lines do not match the plan", what, bad);
	CHECK(isends == topo_plan_messages(p) && recvs == isends,
	      "%s: %lld isends, %lld recvs, want %lld", what, (long long)isends,
	      (long long)recvs, (long long)topo_plan_messages(p));
	/* The replay, with receives that block until their send ran. */
	pc = calloc((size_t)n, sizeof(*pc));
	while (moved) {
		moved = false;
		for (int r = 0; r < n; r++)
			while (pc[r] < nacts[r]) {
				struct action *a = &acts[r][pc[r]];

				if (a->kind == 1 && !sent[a->tag])
					break;
				if (a->kind == 0)
					sent[a->tag] = true;
				pc[r]++;
				moved = true;
			}
	}
	for (int r = 0; r < n; r++)
		if (pc[r] != nacts[r])
			bad++;
	CHECK(bad == 0, "%s: the traces deadlock", what);
	for (int r = 0; r < n; r++)
		free(acts[r]);
	free(acts);
	free(nacts);
	free(pc);
	free(sent);
}

static char scratch[4096];

static void test_smpi_all(void)
{
	struct topo_costs c;
	int k = 0;

	costs(&c);
	for (size_t i = 0; i < sizeof(machines) / sizeof(*machines); i++)
		for (size_t s = 0; s < sizeof(shapes) / sizeof(*shapes); s++) {
			struct fixture x;

			if (fixture_new(&x, machines[i], shapes[s]) != 0)
				continue;
			for (size_t a = 0; a < sizeof(algos) / sizeof(*algos);
			     a++) {
				topo_plan *p = plan(&x, &algos[a], 4096, 1);
				char dir[4200], what[160];
				topo_error err;
				int rc;

				if (p == NULL)
					continue;
				snprintf(dir, sizeof(dir), "%s/t%d", scratch,
					 k++);
				snprintf(what, sizeof(what),
					 "machine %zu %s %s over %s", i,
					 topo_op_name(algos[a].op),
					 algos[a].name, shapes[s]);
				topo_error_clear(&err);
				rc = topo_plan_write_smpi(p, &c, dir, &err);
				CHECK(rc == 0, "%s: %s", what, err.text);
				if (rc == 0)
					check_smpi(p, dir, what);
				rmtree(dir);
				topo_plan_free(p);
			}
			fixture_free(&x);
		}
	CHECK_INT(entries(scratch), 0);
}

/* ---------------------------------------------------------------------- */
/* Errors */

static void test_errors(void)
{
	struct fixture x;
	const struct algo rd = {TOPO_OP_REDUCE, "tree"};
	topo_plan *p;
	topo_error err;
	char dir[4200], file[4200];
	FILE *f;
	int rc;
	long k;

	if (fixture_new(&x, machines[0], "binomial") != 0)
		return;
	p = plan(&x, &rd, 64, 1);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_write_goal(NULL, NULL, stdout, &err), TOPO_EARG);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_write_goal(p, NULL, NULL, &err), TOPO_EARG);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_write_smpi(p, NULL, NULL, &err), TOPO_EARG);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_write_smpi(p, NULL, "", &err), TOPO_EARG);

	/* A full device: the write fails at the flush, and says so. */
	f = fopen("/dev/full", "w");
	if (f != NULL) {
		topo_error_clear(&err);
		rc = topo_plan_write_goal(p, NULL, f, &err);
		CHECK_INT(rc, TOPO_EIO);
		CHECK(strstr(err.text, "No space") != NULL, "%s", err.text);
		fclose(f);
	}

	/* A directory whose parent does not exist: the path in the error,
	 * nothing made. */
	snprintf(dir, sizeof(dir), "%s/no/such", scratch);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_write_smpi(p, NULL, dir, &err), TOPO_EIO);
	CHECK(strstr(err.text, dir) != NULL &&
		  strstr(err.text, "No such file") != NULL,
	      "%s", err.text);
	CHECK_INT(entries(scratch), 0);

	/* A file, and a directory that is not empty: refused, untouched. */
	snprintf(file, sizeof(file), "%s/file", scratch);
	f = fopen(file, "w");
	fclose(f);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_write_smpi(p, NULL, file, &err), TOPO_EIO);
	CHECK(strstr(err.text, "not a directory") != NULL, "%s", err.text);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_write_smpi(p, NULL, scratch, &err), TOPO_EIO);
	CHECK(strstr(err.text, "not empty") != NULL, "%s", err.text);
	CHECK_INT(entries(scratch), 1);
	unlink(file);

	/* An empty directory is replaced; a trailing slash is fine. */
	snprintf(dir, sizeof(dir), "%s/empty/", scratch);
	mkdir(dir, 0777);
	topo_error_clear(&err);
	rc = topo_plan_write_smpi(p, NULL, dir, &err);
	CHECK(rc == 0, "an empty directory: %s", err.text);
	check_smpi(p, dir, "an empty directory");
	rmtree(dir);

	/* A symbolic link to an empty directory is followed (the link
	 * stays); a link to nothing is refused before any work, nothing
	 * made. */
	snprintf(dir, sizeof(dir), "%s/empty", scratch);
	mkdir(dir, 0777);
	snprintf(file, sizeof(file), "%s/link", scratch);
	CHECK(symlink("empty", file) == 0, "symlink: %s", strerror(errno));
	topo_error_clear(&err);
	rc = topo_plan_write_smpi(p, NULL, file, &err);
	CHECK(rc == 0, "a link to an empty directory: %s", err.text);
	check_smpi(p, dir, "a link to an empty directory");
	{
		struct stat st;

		CHECK(lstat(file, &st) == 0 && S_ISLNK(st.st_mode),
		      "the link is kept");
	}
	unlink(file);
	rmtree(dir);
	CHECK(symlink("gone", file) == 0, "symlink: %s", strerror(errno));
	topo_error_clear(&err);
	CHECK_INT(topo_plan_write_smpi(p, NULL, file, &err), TOPO_EIO);
	CHECK(strstr(err.text, "is a symbolic link to") != NULL &&
		  strstr(err.text, "which does not exist") != NULL,
	      "%s", err.text);
	CHECK_INT(entries(scratch), 1);
	unlink(file);
	/* A name of 250 bytes: its temporary sibling still fits. */
	{
		char name[251];

		memset(name, 'n', 250);
		name[250] = '\0';
		CHECK(strlen(scratch) + 252 < sizeof(dir), "scratch");
		strcpy(dir, scratch);
		strcat(dir, "/");
		strcat(dir, name);
		topo_error_clear(&err);
		rc = topo_plan_write_smpi(p, NULL, dir, &err);
		CHECK(rc == 0, "a name of 250 bytes: %s", err.text);
		check_smpi(p, dir, "a name of 250 bytes");
		rmtree(dir);
		CHECK_INT(entries(scratch), 0);
	}

	/* An unwritable parent (root may write anywhere: then skipped). */
	snprintf(file, sizeof(file), "%s/ro", scratch);
	mkdir(file, 0555);
	snprintf(dir, sizeof(dir), "%s/ro/out", scratch);
	if (access(file, W_OK) != 0) {
		topo_error_clear(&err);
		CHECK_INT(topo_plan_write_smpi(p, NULL, dir, &err), TOPO_EIO);
		CHECK(strstr(err.text, dir) != NULL, "%s", err.text);
	}
	rmdir(file);
	CHECK_INT(entries(scratch), 0);

	/* Every allocation failing in turn: out of memory, said so, and
	 * nothing left behind. */
	snprintf(dir, sizeof(dir), "%s/oom", scratch);
	for (k = 0; k < 1000; k++) {
		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo_plan_write_smpi(p, NULL, dir, &err);
		topo__alloc_fail_after(-1);
		if (rc == 0)
			break;
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK(strstr(err.text, "out of memory") != NULL, "%s",
		      err.text);
		CHECK_INT(entries(scratch), 0);
	}
	CHECK(k > 5 && k < 1000, "smpi: succeeded after %ld failures", k);
	rmtree(dir);
	for (k = 0; k < 1000; k++) {
		char *buf = NULL;
		size_t len = 0;

		f = open_memstream(&buf, &len);
		topo_error_clear(&err);
		topo__alloc_fail_after(k);
		rc = topo_plan_write_goal(p, NULL, f, &err);
		topo__alloc_fail_after(-1);
		fclose(f);
		free(buf);
		if (rc == 0)
			break;
		CHECK_INT(rc, TOPO_ENOMEM);
	}
	CHECK(k > 2 && k < 1000, "goal: succeeded after %ld failures", k);
	topo_plan_free(p);
	fixture_free(&x);
}

/* What the files of dir take on disk: each, and dir itself, a whole
 * number of blocks of block bytes (as du counts them). */
static uint64_t disk_use(const char *dir, uint64_t block)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	uint64_t sum = block;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL) {
		char path[4500];
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] != '.' && stat(path, &st) == 0)
			sum +=
			    ((uint64_t)st.st_size + block - 1) / block * block;
	}
	closedir(d);
	return sum;
}

/*
 * topo_plan_emit_goal and topo_plan_emit_smpi: the defaults write what
 * topo_plan_write_* write; a deadline already past stops them before
 * anything is written (deterministic, whatever the machine's speed);
 * max_bytes refuses, before writing, an output one byte over its exact
 * size (a GOAL file's bytes, a directory's space on disk) and takes one
 * of exactly that size.
 */
static void test_emit_limits(void)
{
	const struct algo rd = {TOPO_OP_REDUCE, "tree"};
	struct topo_emit_params q;
	struct fixture x;
	struct statvfs sv;
	topo_error err;
	topo_plan *p;
	char dir[4200], *want, *got = NULL;
	size_t len = 0;
	uint64_t block, disk;
	FILE *f;
	int rc;

	CHECK_INT(topo_emit_params_init(NULL, sizeof(q)), TOPO_EARG);
	CHECK_INT(topo_emit_params_init(&q, 0), TOPO_EARG);
	CHECK_INT(topo_emit_params_init(&q, sizeof(q)), 0);
	CHECK(q.size == sizeof(q) && q.costs == NULL && q.timeout == 0 &&
		  q.elapsed == 0 && q.max_bytes == 0 && q.progress == NULL,
	      "defaults");
	if (fixture_new(&x, machines[2], "binomial") != 0)
		return;
	p = plan(&x, &rd, 64, 1);
	want = goal_text(p, NULL);

	/* The defaults: the same schedule. */
	f = open_memstream(&got, &len);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_emit_goal(p, NULL, f, &err), 0);
	fclose(f);
	CHECK(want != NULL && got != NULL && strcmp(want, got) == 0,
	      "emit_goal differs from write_goal");
	free(got);

	/* The deadline already past: stopped at once, nothing written. */
	q.timeout = 1;
	q.elapsed = 1;
	f = open_memstream(&got, &len);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_emit_goal(p, &q, f, &err), TOPO_ETIMEDOUT);
	fclose(f);
	CHECK(strcmp(err.text, "the run did not finish within 1 s (writing "
			       "the GOAL schedule: member 0 of 12)") == 0,
	      "%s", err.text);
	CHECK_INT(len, 0);
	free(got);
	snprintf(dir, sizeof(dir), "%s/late", scratch);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_emit_smpi(p, &q, dir, &err), TOPO_ETIMEDOUT);
	CHECK(strncmp(err.text, "the run did not finish within 1 s (", 35) == 0,
	      "%s", err.text);
	CHECK_INT(entries(scratch), 0);
	q.max_bytes = 1;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_emit_smpi(p, &q, dir, &err), TOPO_ETIMEDOUT);
	CHECK_INT(entries(scratch), 0);
	q.timeout = q.elapsed = 0;
	CHECK_INT(topo_plan_emit_smpi(p, &q, dir, &err), TOPO_ELIMIT);
	CHECK_INT(entries(scratch), 0);

	/* GOAL: exactly its size passes, a byte less is refused unwritten. */
	q.max_bytes = want != NULL ? strlen(want) - 1 : 1;
	f = open_memstream(&got, &len);
	topo_error_clear(&err);
	CHECK_INT(topo_plan_emit_goal(p, &q, f, &err), TOPO_ELIMIT);
	fclose(f);
	CHECK_INT(len, 0);
	{
		char text[160];

		snprintf(text, sizeof(text),
			 "the output would be %zu bytes (%.1f KiB), over the "
			 "limit of %zu bytes (%.1f KiB)",
			 strlen(want), strlen(want) / 1024.0, strlen(want) - 1,
			 (strlen(want) - 1) / 1024.0);
		CHECK(strcmp(err.text, text) == 0, "%s, want %s", err.text,
		      text);
	}
	free(got);
	q.max_bytes++;
	f = open_memstream(&got, &len);
	CHECK_INT(topo_plan_emit_goal(p, &q, f, &err), 0);
	fclose(f);
	CHECK(want != NULL && got != NULL && strcmp(want, got) == 0,
	      "at its limit");
	free(got);

	/* SimGrid: what the directory takes on disk, to the byte. */
	block = statvfs(scratch, &sv) == 0 && sv.f_frsize >= 512 &&
			sv.f_frsize <= (1 << 20)
		    ? sv.f_frsize
		    : 4096;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_write_smpi(p, NULL, dir, &err), 0);
	disk = disk_use(dir, block);
	rmtree(dir);
	q.max_bytes = disk - 1;
	topo_error_clear(&err);
	CHECK_INT(topo_plan_emit_smpi(p, &q, dir, &err), TOPO_ELIMIT);
	CHECK(strstr(err.text, "the output would be 16 files of ") ==
		      err.text &&
		  strstr(err.text, " on disk in blocks of ") != NULL,
	      "%s", err.text);
	CHECK_INT(entries(scratch), 0);
	q.max_bytes = disk;
	topo_error_clear(&err);
	rc = topo_plan_emit_smpi(p, &q, dir, &err);
	CHECK(rc == 0, "at its limit: %s", err.text);
	check_smpi(p, dir, "at its limit");
	rmtree(dir);
	CHECK_INT(entries(scratch), 0);
	free(want);
	topo_plan_free(p);
	fixture_free(&x);
}

int main(int argc, char **argv)
{
	const char *tmp = getenv("TMPDIR");

	check_args(argc, argv);
	snprintf(scratch, sizeof(scratch), "%s/test_emit.XXXXXX",
		 tmp != NULL ? tmp : "/tmp");
	if (mkdtemp(scratch) == NULL) {
		perror(scratch);
		return 1;
	}
	CHECK_RUN(goal_text, test_goal_text());
	CHECK_RUN(goal_names, test_goal_names());
	CHECK_RUN(goal_all, test_goal_all());
	CHECK_RUN(smpi_all, test_smpi_all());
	CHECK_RUN(errors, test_errors());
	CHECK_RUN(emit_limits, test_emit_limits());
	rmtree(scratch);
	return check_done("test_emit");
}
