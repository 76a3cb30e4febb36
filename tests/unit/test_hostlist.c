/*
 * test_hostlist.c - host names and Slurm's hostlist expressions
 * (libtopo/machine/hostlist.c): the expansions of collc(5)'s examples,
 * widths, products and their order, every error with its position, the
 * bounds, and ClusterShell's nodeset(1) as an independent implementation
 * where it is installed.
 *
 * Run one test alone by naming it: test_hostlist errors.
 */
#define TOPO_INTERNAL
#include "check.h"
#include "topo_internal.h"

#include "machine/hostlist.h"

/* The names of an expansion, space-separated. */
struct names {
	char buf[8192];
	size_t len, count;
	size_t last_item;
};

static int collect(void *arg, const char *name, size_t len, size_t item)
{
	struct names *n = arg;

	if (strlen(name) != len)
		return -100;
	if (n->len + len + 2 < sizeof(n->buf))
		n->len +=
		    (size_t)snprintf(n->buf + n->len, sizeof(n->buf) - n->len,
				     "%s%s", n->count > 0 ? " " : "", name);
	n->count++;
	n->last_item = item;
	return 0;
}

/* Expands s; returns the names, or "ERROR at POS: TEXT". */
static const char *expand(const char *s, char *out, size_t size)
{
	static struct names n;
	struct topo__hostlist_error e;
	size_t count = 0;
	int rc;

	memset(&n, 0, sizeof(n));
	rc = topo__hostlist_expand(s, strlen(s), collect, &n, &count, &e);
	if (rc == TOPO_EINVAL)
		snprintf(out, size, "ERROR at %zu: %s", e.pos, e.text);
	else if (rc != 0)
		snprintf(out, size, "rc %d", rc);
	else if (count != n.count)
		snprintf(out, size, "count %zu, names %zu", count, n.count);
	else
		snprintf(out, size, "%s", n.buf);
	return out;
}

#define CHECK_EXPAND(s, want)                                                  \
	do {                                                                   \
		char check_buf_[8192];                                         \
		CHECK_STR(expand(s, check_buf_, sizeof(check_buf_)), want);    \
	} while (0)

static void test_expand(void)
{
	CHECK_EXPAND("node1", "node1");
	CHECK_EXPAND("a,b,c", "a b c");
	CHECK_EXPAND("dev[0-5,9]", "dev0 dev1 dev2 dev3 dev4 dev5 dev9");
	CHECK_EXPAND("a[01-10]b", "a01b a02b a03b a04b a05b a06b a07b a08b "
				  "a09b a10b");
	CHECK_EXPAND("n[8-11]", "n8 n9 n10 n11");
	CHECK_EXPAND("n[08-11]", "n08 n09 n10 n11");
	/* LO's width, as Slurm reads it: "001-10" is 001..010. */
	CHECK_EXPAND("n[001-3]", "n001 n002 n003");
	CHECK_EXPAND("n[1-010]", "n1 n2 n3 n4 n5 n6 n7 n8 n9 n10");
	CHECK_EXPAND("n[7]", "n7");
	CHECK_EXPAND("[1-3]", "1 2 3");
	CHECK_EXPAND("x.y-z_w", "x.y-z_w");
	/* The order written, repeats kept. */
	CHECK_EXPAND("n[3,1,3]", "n3 n1 n3");
	CHECK_EXPAND("b1,a[1-2],b1", "b1 a1 a2 b1");
	/* Products: the leftmost group slowest, as Slurm expands them. */
	CHECK_EXPAND("r[1-2]n[1-3]", "r1n1 r1n2 r1n3 r2n1 r2n2 r2n3");
	CHECK_EXPAND("r[1,3]n[0-1]-ib", "r1n0-ib r1n1-ib r3n0-ib r3n1-ib");
	CHECK_EXPAND("[0-1][0-1][0-1]", "000 001 010 011 100 101 110 111");
	CHECK_EXPAND("c[1-2,5]s[00-01],login",
		     "c1s00 c1s01 c2s00 c2s01 c5s00 c5s01 login");
	CHECK_EXPAND("n[999999999]", "n999999999");
}

static void test_count_only(void)
{
	struct topo__hostlist_error e;
	size_t count = 0;

	CHECK_INT(topo__hostlist_expand("r[1-4]n[01-16],x", 16, NULL, NULL,
					&count, &e),
		  0);
	CHECK_INT(count, 65);
	/* A length that stops inside the text: only those bytes count. */
	CHECK_INT(topo__hostlist_expand("a,b c", 3, NULL, NULL, &count, &e), 0);
	CHECK_INT(count, 2);
}

static void test_errors(void)
{
	CHECK_EXPAND("", "ERROR at 0: the expression is empty");
	CHECK_EXPAND("a,,b",
		     "ERROR at 2: empty item (two commas, or a comma at an "
		     "end)");
	CHECK_EXPAND(",a",
		     "ERROR at 0: empty item (two commas, or a comma at an "
		     "end)");
	CHECK_EXPAND("a,",
		     "ERROR at 2: empty item (two commas, or a comma at an "
		     "end)");
	CHECK_EXPAND("dev[0-5", "ERROR at 3: unmatched \"[\"");
	CHECK_EXPAND("dev[", "ERROR at 3: unmatched \"[\"");
	CHECK_EXPAND("dev[1-", "ERROR at 3: unmatched \"[\"");
	CHECK_EXPAND("dev[1,", "ERROR at 3: unmatched \"[\"");
	CHECK_EXPAND("dev0]", "ERROR at 4: unmatched \"]\"");
	CHECK_EXPAND("a[1-2],b]", "ERROR at 8: unmatched \"]\"");
	CHECK_EXPAND("n[5-3]",
		     "ERROR at 2: range 5-3 goes down (want LO-HI with LO <= "
		     "HI)");
	CHECK_EXPAND("n[a-3]",
		     "ERROR at 2: expected a number in brackets (got \"a\")");
	CHECK_EXPAND("n[1-x]",
		     "ERROR at 4: expected a number in brackets (got \"x\")");
	CHECK_EXPAND("n[]",
		     "ERROR at 2: expected a number in brackets (got \"]\")");
	CHECK_EXPAND("n[1-2[3]]",
		     "ERROR at 5: unexpected \"[\" in brackets (valid: "
		     "digits, \"-\", \",\", \"]\")");
	CHECK_EXPAND("n[1 2]",
		     "ERROR at 3: unexpected \" \" in brackets (valid: "
		     "digits, \"-\", \",\", \"]\")");
	CHECK_EXPAND("n[-1]",
		     "ERROR at 2: expected a number in brackets (got \"-\")");
	CHECK_EXPAND("n[1234567890]",
		     "ERROR at 2: number of more than 9 digits");
	CHECK_EXPAND("a b",
		     "ERROR at 1: unexpected \" \" (valid in a host name: "
		     "letters, digits, \".\", \"-\", \"_\")");
	CHECK_EXPAND("a/b",
		     "ERROR at 1: unexpected \"/\" (valid in a host name: "
		     "letters, digits, \".\", \"-\", \"_\")");
	CHECK_EXPAND("\xc3\xa9",
		     "ERROR at 0: unexpected \"\\xc3\" (valid in a host name: "
		     "letters, digits, \".\", \"-\", \"_\")");
	/* The first error in reading order wins. */
	CHECK_EXPAND("n[5-3],x]",
		     "ERROR at 2: range 5-3 goes down (want LO-HI with LO <= "
		     "HI)");
}

static void test_bounds(void)
{
	char name[300];

	/* 2^20 names pass, one more does not; the count is known without
	 * making them. */
	CHECK_EXPAND("n[0-1048576]",
		     "ERROR at 0: expands to more than 1048576 names");
	CHECK_EXPAND("a,n[1-1048576]",
		     "ERROR at 2: expands to more than 1048576 names");
	CHECK_EXPAND("n[1-1024]m[1-1025]",
		     "ERROR at 0: expands to more than 1048576 names");
	CHECK_EXPAND("n[0-999999999][0-999999999][0-999999999]",
		     "ERROR at 0: expands to more than 1048576 names");
	{
		struct topo__hostlist_error e;
		size_t count = 0;

		CHECK_INT(topo__hostlist_expand("n[1-1024]m[1-1024]", 18, NULL,
						NULL, &count, &e),
			  0);
		CHECK_INT(count, 1048576);
	}
	/* A long list of plain names: 2^20 of them pass, one more does
	 * not. */
	{
		struct topo__hostlist_error e;
		size_t n = 1 << 20, len = 0, count = 0;
		char *list = malloc(n * 9 + 16);

		if (list != NULL) {
			for (size_t i = 0; i < n; i++)
				len += (size_t)sprintf(list + len, "%sh%zu",
						       i > 0 ? "," : "", i);
			CHECK_INT(topo__hostlist_expand(list, len, NULL, NULL,
							&count, &e),
				  0);
			CHECK_INT(count, n);
			len += (size_t)sprintf(list + len, ",x");
			CHECK_INT(topo__hostlist_expand(list, len, NULL, NULL,
							&count, &e),
				  TOPO_EINVAL);
			CHECK_INT(e.pos, len - 1);
			CHECK_STR(e.text, "expands to more than 1048576 names");
		}
		free(list);
	}
	/* Names of 255 bytes pass, 256 do not, counted with the widest
	 * number. */
	memset(name, 'x', 255);
	name[255] = '\0';
	CHECK_EXPAND(name, name);
	memset(name, 'x', 253);
	strcpy(name + 253, "[1-100]");
	CHECK_EXPAND(name, "ERROR at 0: makes names of 256 bytes (at most "
			   "255)");
	{
		struct topo__hostlist_error e;
		size_t count = 0;

		CHECK_INT(topo__hostlist_expand(name + 1, strlen(name + 1),
						NULL, NULL, &count, &e),
			  0);
		CHECK_INT(count, 100);
	}
}

static void test_names(void)
{
	char why[160], name[300];

	CHECK(topo__host_check("dev-1.example_org", 17, why, sizeof(why)) ==
		  NULL,
	      "valid name refused");
	CHECK_STR(topo__host_check("", 0, why, sizeof(why)), "is empty");
	CHECK_STR(topo__host_check("a b", 3, why, sizeof(why)),
		  "has the character \" \" at 1 (valid: letters, digits, "
		  "\".\", \"-\", \"_\")");
	CHECK_STR(topo__host_check("a[1]", 4, why, sizeof(why)),
		  "has the character \"[\" at 1 (valid: letters, digits, "
		  "\".\", \"-\", \"_\")");
	memset(name, 'a', 256);
	CHECK(topo__host_check(name, 255, why, sizeof(why)) == NULL,
	      "255 bytes refused");
	CHECK_STR(topo__host_check(name, 256, why, sizeof(why)),
		  "is 256 bytes long (at most 255)");
}

/* A callback's non-zero return stops the expansion and is returned. */
static int stop_at_third(void *arg, const char *name, size_t len, size_t item)
{
	int *calls = arg;

	(void)name;
	(void)len;
	(void)item;
	return ++*calls == 3 ? -7 : 0;
}

static int item_of(void *arg, const char *name, size_t len, size_t item)
{
	char *out = arg;

	(void)len;
	sprintf(out + strlen(out), "%s@%zu ", name, item);
	return 0;
}

static void test_callback(void)
{
	struct topo__hostlist_error e;
	char out[256] = "";
	int calls = 0;

	CHECK_INT(
	    topo__hostlist_expand("n[1-9]", 6, stop_at_third, &calls, NULL, &e),
	    -7);
	CHECK_INT(calls, 3);
	/* Nothing is called for a wrong expression, however far it
	 * reads. */
	calls = 0;
	CHECK_INT(topo__hostlist_expand("a,b,c,[", 7, stop_at_third, &calls,
					NULL, &e),
		  TOPO_EINVAL);
	CHECK_INT(calls, 0);
	CHECK_INT(
	    topo__hostlist_expand("a,n[1-2],zz", 11, item_of, out, NULL, &e),
	    0);
	CHECK_STR(out, "a@0 n1@2 n2@2 zz@9 ");
}

/* nodeset -e prints a sorted set; a sorted, repeat-free expansion must
 * be the same. */
static void oracle_one(const char *expr)
{
	char cmd[512], got[8192], want[8192];
	FILE *f;
	size_t n;

	snprintf(cmd, sizeof(cmd), "nodeset -e '%s' 2>&1", expr);
	f = popen(cmd, "r");
	if (f == NULL) {
		check_skip("nodeset: popen failed");
		return;
	}
	n = fread(want, 1, sizeof(want) - 1, f);
	want[n] = '\0';
	pclose(f);
	if (n > 0 && want[n - 1] == '\n')
		want[n - 1] = '\0';
	CHECK(strcmp(expand(expr, got, sizeof(got)), want) == 0,
	      "%s: collc \"%s\", nodeset \"%s\"", expr, got, want);
}

static void test_nodeset(void)
{
	static const char *const exprs[] = {
	    "dev[0-5,9]",    "a[01-10]b",	  "n[08-11]",
	    "r[1-2]n[1-3]",  "r[1,3]n[0-1]-ib",	  "c[1-2,5]s[00-01]",
	    "node1",	     "a1,b[2-3]",	  "x[0-3]y[0-1]z[5-6]",
	    "cn[0001-0012]", "gpu[1-3].site.org", "n[1-99]",
	};

	if (system("command -v nodeset >/dev/null 2>&1") != 0) {
		check_skip("nodeset (ClusterShell) not installed: its "
			   "expansions not compared (Debian: apt-get "
			   "install clustershell)");
		return;
	}
	for (size_t i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++)
		oracle_one(exprs[i]);
}

static const struct {
	const char *name;
	void (*run)(void);
} tests[] = {
    {"expand", test_expand},   {"count_only", test_count_only},
    {"errors", test_errors},   {"bounds", test_bounds},
    {"names", test_names},     {"callback", test_callback},
    {"nodeset", test_nodeset},
};

int main(int argc, char **argv)
{
	check_args(argc, argv);
	for (size_t i = 0; i < sizeof(tests) / sizeof(tests[0]); i++)
		if (check_want(tests[i].name))
			tests[i].run();
	return check_done("test_hostlist");
}
