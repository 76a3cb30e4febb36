/*
 * fuzz_spec.c - libFuzzer target: the stride-spec parser and evaluator.
 *
 * The input, up to its first NUL, is a stride spec (collc(7)) evaluated
 * with topo_group_new over three small machines built once: A has 3
 * nodes running 3, 2 and 4 tasks of 2 endpoints (N = 18), B 4 nodes
 * running 1, 3, 1 and 2 tasks of one endpoint (N = 7; one endpoint per
 * task takes other paths), C 4 nodes of 2 tasks of 3 endpoints (N = 24;
 * as many tasks on every node makes node selectors patterns).  Each is
 * evaluated twice: with the evaluator's thresholds (libtopo/pset.h) as
 * shipped, and set tiny, so that these small sets take the paths big
 * machines take (literal stretches, member-by-member marking, one-bitmap
 * unions, per-member expansion).  Checked on every input:
 *  - topo_spec_check agrees with topo_group_new (code, position, text);
 *  - a failure is TOPO_ESPEC at a position inside the spec, with the spec
 *    in the record;
 *  - a group has members strictly ascending below N, topo_group_rank
 *    inverts them and gives -1 for every other endpoint;
 *  - algebra that holds for any spec S that evaluates: "S + S" and
 *    "all - all + S" select exactly what S selects (a spec is evaluated
 *    left to right, and both only repeat or reset what came before);
 *  - a reference evaluator written from collc(7) alone (split into words
 *    at spaces and tabs, every endpoint tested against every triplet; no
 *    bitmaps, no merging) accepts the same specs and selects the same
 *    endpoints.  It does not reproduce the error texts and positions,
 *    which test_spec.c checks by hand.
 */
#define TOPO_INTERNAL
#include "fuzz_common.h"
#include "topo_internal.h"

#include "pset.h"

#define NMACHINES 3
static const char *const machine_text[NMACHINES] = {
    "{\"name\": \"A\", \"nodes\": 3, \"tasks_per_node\": [3, 2, 4],"
    " \"endpoints_per_task\": 2,"
    " \"network\": {\"type\": \"kary\", \"fanout\": 2}}",
    "{\"name\": \"B\", \"nodes\": 4, \"tasks_per_node\": [1, 3, 1, 2],"
    " \"network\": {\"type\": \"tree\", \"parent\": [-1, 0, 1, 1]}}",
    "{\"name\": \"C\", \"nodes\": 4, \"tasks_per_node\": 2,"
    " \"endpoints_per_task\": 3,"
    " \"network\": {\"type\": \"kary\", \"fanout\": 3}}",
};

static topo_machine *machines[NMACHINES];

/* ---------------------------------------------------------------------- */
/* The reference evaluator.  Sets are arrays of N bytes (N is 18 or 7). */

#define REF_MAX 64

struct ref {
	const topo_machine *m;
	char **word; /* the spec's words */
	size_t nwords, at;
};

static int ref_axis(const char *w, int64_t *size, const topo_machine *m)
{
	static const char *const names[] = {"row",  "rows",  "col",  "cols",
					    "task", "tasks", "node", "nodes",
					    "ep",   "eps"};

	for (int i = 0; i < 10; i++) {
		if (strcmp(w, names[i]) != 0)
			continue;
		switch (i / 2) {
		case 0:
			*size = topo_machine_endpoints_per_task(m);
			break;
		case 1:
		case 2:
			*size = topo_machine_tasks(m);
			break;
		case 3:
			*size = topo_machine_nodes(m);
			break;
		default:
			*size = topo_machine_endpoints(m);
		}
		return i / 2;
	}
	return -1;
}

/* -?[0-9]+ within int32 at *p, up to end. */
static int ref_number(const char **p, const char *end, int64_t *out)
{
	const char *s = *p;
	int neg = s < end && *s == '-';
	int64_t v = 0;

	s += neg;
	if (s == end || *s < '0' || *s > '9')
		return -1;
	for (; s < end && *s >= '0' && *s <= '9'; s++)
		if ((v = v * 10 + (*s - '0')) > (int64_t)1 << 32)
			return -1;
	v = neg ? -v : v;
	if (v < INT32_MIN || v > INT32_MAX)
		return -1;
	*out = v;
	*p = s;
	return 0;
}

/* One triplet [s, end): marks the indexes it selects in idx[size]. */
static int ref_triplet(const char *s, const char *end, int64_t size, char *idx)
{
	int64_t first, last, stride = 1, k;
	int colon = 0, has_last = 0;

	if (ref_number(&s, end, &first) != 0)
		return -1;
	if (s < end) {
		if (*s++ != ':')
			return -1;
		colon = 1;
		if (s < end && *s != ':') {
			if (ref_number(&s, end, &last) != 0)
				return -1;
			has_last = 1;
		}
		if (s < end) {
			if (*s++ != ':' || ref_number(&s, end, &stride) != 0 ||
			    s != end)
				return -1;
		}
	}
	if (stride == 0 || first < 0 || first >= size)
		return -1;
	if (!colon)
		last = first;
	else if (!has_last)
		last = stride > 0 ? size - 1 : 0;
	if ((stride > 0 && last < first) || (stride < 0 && last > first))
		return -1;
	k = (last - first) / stride;
	if (first + k * stride < 0 || first + k * stride >= size)
		return -1;
	for (int64_t i = 0; i <= k; i++)
		idx[first + i * stride] = 1;
	return 0;
}

/* AXIS LIST: intersects the endpoints selected into term. */
static int ref_selector(struct ref *r, char *term)
{
	const topo_machine *m = r->m;
	int32_t N = topo_machine_endpoints(m);
	int32_t E = topo_machine_endpoints_per_task(m);
	char idx[REF_MAX];
	const char *list, *s, *comma;
	int64_t size;
	int axis;

	if (r->at + 1 >= r->nwords)
		return -1;
	axis = ref_axis(r->word[r->at], &size, m);
	if (axis < 0)
		return -1;
	list = r->word[r->at + 1];
	r->at += 2;
	memset(idx, 0, sizeof(idx));
	for (s = list;; s = comma + 1) {
		comma = strchr(s, ',');
		if (comma == NULL)
			comma = s + strlen(s);
		if (ref_triplet(s, comma, size, idx) != 0)
			return -1;
		if (*comma == '\0')
			break;
	}
	for (int32_t e = 0; e < N; e++) {
		int32_t task = e / E, i;

		switch (axis) {
		case 0:
			i = e % E;
			break;
		case 1:
		case 2:
			i = task;
			break;
		case 3:
			i = topo_machine_task_node(m, task);
			break;
		default:
			i = e;
		}
		term[e] &= idx[i];
	}
	return 0;
}

static int is_op(const char *w)
{
	return strcmp(w, "+") == 0 || strcmp(w, "-") == 0;
}

static int ref_term(struct ref *r, char *term)
{
	memset(term, 1, REF_MAX);
	if (r->at < r->nwords && strcmp(r->word[r->at], "all") == 0) {
		r->at++;
		return r->at == r->nwords || is_op(r->word[r->at]) ? 0 : -1;
	}
	do {
		if (ref_selector(r, term) != 0)
			return -1;
	} while (r->at < r->nwords && !is_op(r->word[r->at]));
	return 0;
}

/* Evaluates spec over m into sel[N]; 0, or -1 when it is not valid. */
static int ref_eval(const topo_machine *m, const char *spec, char *sel)
{
	char *copy = strdup(spec), *save = NULL, *w;
	struct ref r = {.m = m};
	char term[REF_MAX];
	int32_t N = topo_machine_endpoints(m);
	int rc = -1, any = 0;

	FUZZ_CHECK(copy != NULL, "strdup");
	r.word = malloc((strlen(spec) / 2 + 1) * sizeof(char *));
	FUZZ_CHECK(r.word != NULL, "malloc");
	for (w = strtok_r(copy, " \t", &save); w != NULL;
	     w = strtok_r(NULL, " \t", &save))
		r.word[r.nwords++] = w;
	if (r.nwords == 0 || ref_term(&r, sel) != 0)
		goto done;
	while (r.at < r.nwords) {
		int plus = r.word[r.at++][0] == '+';

		if (r.at == r.nwords || ref_term(&r, term) != 0)
			goto done;
		for (int32_t e = 0; e < N; e++)
			sel[e] =
			    plus ? (sel[e] | term[e]) : (sel[e] & !term[e]);
	}
	for (int32_t e = 0; e < N; e++)
		any |= sel[e];
	rc = any ? 0 : -1;
done:
	free(r.word);
	free(copy);
	return rc;
}

/* topo_group_new's answer (g, NULL on failure) against the reference. */
static void check_reference(const topo_machine *m, const char *spec,
			    const topo_group *g)
{
	char sel[REF_MAX];
	int rc = ref_eval(m, spec, sel);
	int32_t r = 0;

	FUZZ_CHECK((rc == 0) == (g != NULL),
		   "the reference %s \"%s\" on machine %s, topo_group_new %s",
		   rc == 0 ? "accepts" : "refuses", spec, topo_machine_name(m),
		   g != NULL ? "accepts" : "refuses");
	if (g == NULL)
		return;
	for (int32_t e = 0; e < topo_machine_endpoints(m); e++) {
		int member =
		    r < topo_group_size(g) && topo_group_members(g)[r] == e;

		FUZZ_CHECK(member == sel[e],
			   "\"%s\" on machine %s: endpoint %d is %sa member, "
			   "the reference says it is %s",
			   spec, topo_machine_name(m), (int)e,
			   member ? "" : "not ", sel[e] ? "one" : "not");
		r += member;
	}
}

static void setup(void)
{
	topo_error err;

	for (int i = 0; i < NMACHINES; i++) {
		topo_error_clear(&err);
		if (topo_machine_load_string(&machines[i], machine_text[i],
					     strlen(machine_text[i]), NULL,
					     &err) != 0) {
			fprintf(stderr, "fuzz_spec: machine %d: %s\n", i,
				err.text);
			abort();
		}
	}
}

/* The group spec selects over m, or NULL when the spec fails (after
 * checking the failure and topo_spec_check's agreement). */
static topo_group *eval(const topo_machine *m, const char *spec)
{
	topo_group *g = (topo_group *)1;
	topo_error err, err2;
	size_t len = strlen(spec);
	int rc, rc2;

	topo_error_clear(&err);
	rc = topo_group_new(&g, m, NULL, spec, &err);
	fuzz_check_error(rc, &err, "topo_group_new");
	topo_error_clear(&err2);
	rc2 = topo_spec_check(m, spec, &err2);
	FUZZ_CHECK(rc == rc2, "topo_group_new %d, topo_spec_check %d", rc, rc2);
	if (rc != 0) {
		FUZZ_CHECK(g == NULL, "*out set on failure");
		FUZZ_CHECK(rc == TOPO_ESPEC, "rc %d: %s", rc, err.text);
		FUZZ_CHECK(err.position >= 0 && (size_t)err.position <= len,
			   "position %d in a spec of %zu characters",
			   err.position, len);
		FUZZ_CHECK(strncmp(err.spec, spec, sizeof(err.spec) - 1) == 0,
			   "err.spec is not the spec");
		FUZZ_CHECK(err2.position == err.position &&
			       strcmp(err2.text, err.text) == 0,
			   "topo_spec_check says at %d: %s; topo_group_new "
			   "at %d: %s",
			   err2.position, err2.text, err.position, err.text);
		return NULL;
	}
	return g;
}

static void check_group(const topo_machine *m, const topo_group *g,
			const char *spec)
{
	int32_t n = topo_group_size(g), N = topo_machine_endpoints(m), r = 0;
	const int32_t *mem = topo_group_members(g);

	FUZZ_CHECK(strcmp(topo_group_name(g), spec) == 0 &&
		       strcmp(topo_group_spec(g), spec) == 0,
		   "name/spec");
	FUZZ_CHECK(n >= 1 && n <= N, "size %d of %d", (int)n, (int)N);
	for (int32_t i = 0; i < n; i++)
		FUZZ_CHECK(mem[i] >= 0 && mem[i] < N &&
			       (i == 0 || mem[i - 1] < mem[i]),
			   "member %d is %d", (int)i, (int)mem[i]);
	for (int32_t e = 0; e < N; e++) {
		int32_t want = r < n && mem[r] == e ? r++ : -1;

		FUZZ_CHECK(topo_group_rank(g, e) == want,
			   "rank of %d is %d, want %d", (int)e,
			   (int)topo_group_rank(g, e), (int)want);
	}
}

/* spec and text (built from it) select the same endpoints. */
static void same_members(const topo_machine *m, const topo_group *g,
			 const char *spec, const char *text)
{
	topo_group *h = eval(m, text);

	FUZZ_CHECK(h != NULL, "\"%s\" evaluates but \"%s\" does not", spec,
		   text);
	FUZZ_CHECK(topo_group_size(h) == topo_group_size(g) &&
		       memcmp(topo_group_members(h), topo_group_members(g),
			      (size_t)topo_group_size(g) * sizeof(int32_t)) ==
			   0,
		   "\"%s\" selects %d endpoints, \"%s\" %d", spec,
		   (int)topo_group_size(g), text, (int)topo_group_size(h));
	topo_group_free(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t tlen = 2 * size + 32;
	char *spec = malloc(size + 1), *text = malloc(tlen);

	if (machines[0] == NULL)
		setup();
	FUZZ_CHECK(spec != NULL && text != NULL, "malloc");
	memcpy(spec, data, size);
	spec[size] = '\0';
	for (int t = 0; t < 2; t++) {
		static const struct pset_tune shipped = {(int64_t)1 << 24, 64,
							 64},
					      tiny = {3, 2, 1};

		topo__tune.pset = t == 0 ? shipped : tiny;
		for (int i = 0; i < NMACHINES; i++) {
			topo_group *g = eval(machines[i], spec);

			check_reference(machines[i], spec, g);
			if (g == NULL)
				continue;
			check_group(machines[i], g, spec);
			snprintf(text, tlen, "%s + %s", spec, spec);
			same_members(machines[i], g, spec, text);
			snprintf(text, tlen, "all - all + %s", spec);
			same_members(machines[i], g, spec, text);
			topo_group_free(g);
		}
	}
	topo__tune.pset = (struct pset_tune){(int64_t)1 << 24, 64, 64};
	free(text);
	free(spec);
	return 0;
}
