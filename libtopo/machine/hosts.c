/*
 * hosts.c - a machine's node names: reading "hosts" (an array of names or
 * a hostlist expression, collc(5)) in the same words for a description and
 * a compile output, and finding a node by its name.
 *
 * The names live in one block of text with a pointer per node, and an
 * index of the nodes sorted by name serves both the check that no name is
 * given twice and the lookups of the "hosts" selector (a binary search,
 * so that selecting a few nodes of a large machine costs little).
 */
#define TOPO_INTERNAL
#include "hosts.h"

#include "hostlist.h"

#include <stdlib.h>
#include <string.h>

#define WHAT_HOSTS                                                             \
	"an array of %d host names, or a hostlist expression such as "         \
	"\"dev[0-%d]\""

static int want_hosts(struct topo__jget *j, const json_t *v, int32_t nodes)
{
	char got[128];

	topo__jget_show(v, got, sizeof(got));
	return topo__jget_fail(j, "must be " WHAT_HOSTS " (got %s)", (int)nodes,
			       (int)nodes - 1, got);
}

/* The expression's error, in the words of a spec's: where and what. */
static int bad_expression(struct topo__jget *j, const char *s,
			  const struct topo__hostlist_error *e)
{
	return topo__jget_fail(
	    j, "hostlist \"%.*s%s\": at %zu: %s", TOPO__JGET_SHOW_MAX, s,
	    strlen(s) > TOPO__JGET_SHOW_MAX ? "..." : "", e->pos, e->text);
}

int topo__hosts_check(struct topo__jget *j, const json_t *v, int32_t nodes)
{
	struct topo__hostlist_error e;
	char what[128], why[160];
	const char *s;
	size_t count;
	int rc;

	if (json_is_string(v)) {
		s = json_string_value(v);
		rc = topo__hostlist_expand(s, json_string_length(v), NULL, NULL,
					   &count, &e);
		if (rc == TOPO_EINVAL)
			return bad_expression(j, s, &e);
		if (rc != 0)
			return topo__jget_err(j, rc,
					      "out of memory reading "
					      "a hostlist");
		if (count != (size_t)nodes)
			return topo__jget_fail(j,
					       "expands to %zu name%s, want %d "
					       "(one per node)",
					       count, count == 1 ? "" : "s",
					       (int)nodes);
		return 0;
	}
	if (!json_is_array(v))
		return want_hosts(j, v, nodes);
	snprintf(what, sizeof(what), WHAT_HOSTS, (int)nodes, (int)nodes - 1);
	rc = topo__jget_array(j, v, (size_t)nodes, (size_t)nodes, what,
			      " (one per node)", &count);
	for (size_t n = 0; rc == 0 && n < count; n++) {
		const json_t *h = json_array_get(v, n);

		topo__jget_index(j, n);
		rc = topo__jget_string(j, h, 0, "a host name", &s);
		if (rc != 0)
			return rc;
		if (topo__host_check(s, json_string_length(h), why,
				     sizeof(why)) != NULL)
			return topo__jget_fail(
			    j, "host name \"%.*s%s\" %s", TOPO__JGET_SHOW_MAX,
			    s, strlen(s) > TOPO__JGET_SHOW_MAX ? "..." : "",
			    why);
		topo__jget_pop(j);
	}
	return rc;
}

/* Copies each name into the block: the expansion's callback. */
struct fill {
	topo_machine *m;
	char *at;
	int32_t n;
};

static int put_name(void *arg, const char *name, size_t len, size_t item)
{
	struct fill *f = arg;

	(void)item;
	memcpy(f->at, name, len + 1);
	f->m->hosts[f->n++] = f->at;
	f->at += len + 1;
	return 0;
}

static int by_name(const void *a, const void *b, void *arg)
{
	char *const *hosts = arg;
	int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
	int c = strcmp(hosts[x], hosts[y]);

	/* Equal names in node order, so a repeat names its first node. */
	return c != 0 ? c : (x > y) - (x < y);
}

/* The bytes the names take, NULs included (the expansion's: one call to
 * count, a second to copy, rather than a guess). */
static int add_len(void *arg, const char *name, size_t len, size_t item)
{
	(void)name;
	(void)item;
	*(size_t *)arg += len + 1;
	return 0;
}

static int copy_names(topo_machine *m, const json_t *v)
{
	struct topo__hostlist_error e;
	struct fill f = {.m = m};
	size_t bytes = 0;
	int rc = 0;

	if (json_is_string(v)) {
		rc = topo__hostlist_expand(json_string_value(v),
					   json_string_length(v), add_len,
					   &bytes, NULL, &e);
	} else {
		for (int32_t n = 0; n < m->nodes; n++)
			bytes +=
			    json_string_length(json_array_get(v, (size_t)n)) +
			    1;
	}
	if (rc != 0)
		return rc;
	m->host_text = topo__malloc(bytes);
	if (m->host_text == NULL)
		return TOPO_ENOMEM;
	f.at = m->host_text;
	if (json_is_string(v))
		return topo__hostlist_expand(json_string_value(v),
					     json_string_length(v), put_name,
					     &f, NULL, &e);
	for (int32_t n = 0; n < m->nodes; n++) {
		const json_t *h = json_array_get(v, (size_t)n);

		put_name(&f, json_string_value(h), json_string_length(h), 0);
	}
	return 0;
}

int topo__hosts_set(struct topo__jget *j, topo_machine *m, const json_t *v)
{
	int32_t a, b;
	int rc;

	m->hosts = topo__mallocarray((size_t)m->nodes, sizeof(char *));
	m->host_sorted = topo__mallocarray((size_t)m->nodes, sizeof(int32_t));
	rc = m->hosts != NULL && m->host_sorted != NULL ? copy_names(m, v)
							: TOPO_ENOMEM;
	if (rc != 0)
		return topo__jget_err(j, rc, "out of memory naming %d nodes",
				      (int)m->nodes);
	for (int32_t n = 0; n < m->nodes; n++)
		m->host_sorted[n] = n;
	qsort_r(m->host_sorted, (size_t)m->nodes, sizeof(int32_t), by_name,
		m->hosts);
	for (int32_t i = 1; i < m->nodes; i++) {
		a = m->host_sorted[i - 1];
		b = m->host_sorted[i];
		if (strcmp(m->hosts[a], m->hosts[b]) != 0)
			continue;
		if (json_is_string(v))
			return topo__jget_fail(j,
					       "expands to \"%s\" twice (nodes "
					       "%d and %d)",
					       m->hosts[a], (int)a, (int)b);
		topo__jget_index(j, (size_t)b);
		return topo__jget_fail(j,
				       "\"%s\" is node %d's name already "
				       "(names are unique)",
				       m->hosts[b], (int)a);
	}
	return 0;
}

int32_t topo__host_find(const topo_machine *m, const char *name, size_t len)
{
	size_t lo = 0, hi;

	if (m->hosts == NULL)
		return -1;
	hi = (size_t)m->nodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const char *h = m->hosts[m->host_sorted[mid]];
		int c = strncmp(h, name, len);

		if (c == 0)
			c = h[len] != '\0'; /* h is longer: after name */
		if (c == 0)
			return m->host_sorted[mid];
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

const char *topo_machine_host(const topo_machine *m, int32_t node)
{
	if (m == NULL || m->hosts == NULL || node < 0 || node >= m->nodes)
		return NULL;
	return m->hosts[node];
}

int32_t topo_machine_host_node(const topo_machine *m, const char *name)
{
	if (m == NULL || name == NULL)
		return -1;
	return topo__host_find(m, name, strlen(name));
}
