/*
 * test_core.c - unit tests of the library's base: error records and their
 * formatting (error.c), the allocation hook and the huge-page advice
 * (alloc.c), network arithmetic
 * (network.c), machine assembly (machine_build.c) and group lookups
 * (group.c).
 */
#define TOPO_INTERNAL
#include "check.h"
#include "exec_internal.h"
#include "plan_memory.h"

#include <malloc.h>
#include <stdint.h>
#include <sys/mman.h>
#include <unistd.h>

/* The runtime version is the header's, and compares as a version. */
static void test_version(void)
{
	char want[32];

	snprintf(want, sizeof(want), "%d.%d.%d", TOPO_VERSION_MAJOR,
		 TOPO_VERSION_MINOR, TOPO_VERSION_PATCH);
	CHECK_STR(topo_version_string(), want);
	CHECK_STR(topo_version_string(), TOPO_VERSION_STRING);
	CHECK_INT(topo_version_cmp(TOPO_VERSION_MAJOR, TOPO_VERSION_MINOR,
				   TOPO_VERSION_PATCH),
		  0);
	CHECK(topo_version_cmp(TOPO_VERSION_MAJOR, TOPO_VERSION_MINOR,
			       TOPO_VERSION_PATCH + 1) < 0,
	      "a later patch is newer");
	CHECK(topo_version_cmp(TOPO_VERSION_MAJOR, TOPO_VERSION_MINOR + 1, 0) <
		  0,
	      "a later minor is newer");
	CHECK(topo_version_cmp(TOPO_VERSION_MAJOR + 1, 0, 0) < 0,
	      "a later major is newer");
	CHECK(topo_version_cmp(TOPO_VERSION_MAJOR, TOPO_VERSION_MINOR - 1,
			       TOPO_VERSION_PATCH + 99) > 0,
	      "an earlier minor is older, whatever its patch");
	CHECK(topo_version_cmp(TOPO_VERSION_MAJOR - 1, 99, 99) > 0,
	      "an earlier major is older");
}

static void test_errors(void)
{
	topo_error err;
	char buf[600];

	CHECK_STR(topo_strerror(TOPO_OK), "success");
	CHECK_STR(topo_strerror(TOPO_ESPEC), "invalid stride specification");
	CHECK_STR(topo_strerror(-999), "unknown error");

	topo_error_clear(&err);
	CHECK_INT(err.code, 0);
	CHECK_INT(err.position, -1);
	CHECK_INT(topo__err(&err, TOPO_EINVAL, "m.json", "/network/parent/5",
			    "node %d does not exist (nodes: 0..%d)", 9, 7),
		  TOPO_EINVAL);
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "m.json: /network/parent/5: node 9 does not exist "
		  "(nodes: 0..7)");
	/* The first error wins. */
	topo__err(&err, TOPO_ENOMEM, "other", NULL, "later");
	CHECK_INT(err.code, TOPO_EINVAL);
	CHECK_STR(err.source, "m.json");

	topo_error_clear(&err);
	topo__err_syntax(&err, "m.json", 3, 14, "duplicate object key");
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "m.json:3:14: duplicate object key");

	topo_error_clear(&err);
	topo__err_spec(&err, "cols 0::0", 7, "stride is %d", 0);
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "spec \"cols 0::0\": at 7: stride is 0");
	/* A spec error found in a file gets the file and group located. */
	topo__err_locate(&err, "m.json", "/groups/even");
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "m.json: /groups/even: spec \"cols 0::0\": at 7: stride is 0");

	/* Truncation keeps the buffer terminated. */
	topo_error_format(&err, buf, 10);
	CHECK_INT(strlen(buf), 9);

	/* Control characters from the input (a spec, a file name, a name in
	 * a document) are shown as \xNN, tabs as they are: the formatted
	 * error is one line.  Found by fuzz_spec (spec "cols 0\n"). */
	topo_error_clear(&err);
	topo__err_spec(&err, "cols 0\n\x7f\t", 6, "unexpected %s", "x");
	topo__err_locate(&err, "a\rb.json", "/groups/g\x01");
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "a\\x0db.json: /groups/g\\x01: spec \"cols 0\\x0a\\x7f\t\": at "
		  "6: unexpected x");
	topo_error_clear(&err);
	topo__err(&err, TOPO_EINVAL, NULL, NULL, "group \"%s\" twice", "a\nb");
	CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
		  "group \"a\\x0ab\" twice");
	/* An escape that does not fit is left out whole, and nothing is
	 * appended after a part cut short. */
	topo_error_clear(&err);
	topo__err_spec(&err, "ab\n", 0, "x");
	CHECK_STR(topo_error_format(&err, buf, 12), "spec \"ab");
	CHECK_STR(topo_error_format(&err, buf, 13), "spec \"ab\\x0a");
	CHECK_STR(topo_error_format(&err, buf, 14), "spec \"ab\\x0a\"");

	buf[0] = '\0';
	topo__pointer_append(buf, sizeof(buf), "groups");
	topo__pointer_append(buf, sizeof(buf), "a/b~c");
	CHECK_STR(buf, "/groups/a~1b~0c");
}

static void test_alloc_hook(void)
{
	void *a, *b, *c;

	topo__alloc_fail_after(1);
	a = topo__malloc(8);
	b = topo__malloc(8);
	c = topo__malloc(8);
	CHECK(a != NULL, "first allocation succeeds");
	CHECK(b == NULL, "second allocation is the injected failure");
	CHECK(c != NULL, "the hook fires once");
	topo__free(a);
	topo__free(c);
	topo__alloc_fail_after(-1);
	CHECK(topo__mallocarray(SIZE_MAX / 2, 4) == NULL,
	      "mallocarray refuses overflow");
}

/* Whether the mapping that holds addr was advised to use transparent huge
 * pages ("hg" among its VmFlags in /proc/self/smaps): 1, 0, or -1 when
 * the mapping or its flags were not found. */
static int advised_huge(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	char line[512];
	int in = 0, got = -1;
	uintptr_t a = (uintptr_t)addr;

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;

		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 &&
		    strchr(line, '-') < strchr(line, ' ')) {
			in = a >= lo && a < hi;
		} else if (in && strncmp(line, "VmFlags:", 8) == 0) {
			got = strstr(line, " hg") != NULL;
			break;
		}
	}
	fclose(f);
	return got;
}

#define MIB ((size_t)1 << 20)
#define HUGE ((uintptr_t)2 << 20)

/* The first 2 MiB boundary within p (the part of a block the advice
 * covers starts there). */
static const void *first_huge(const void *p)
{
	return (const void *)(((uintptr_t)p + HUGE - 1) & ~(HUGE - 1));
}

/* Blocks of topo__tune.hugepage_min bytes and more are advised to use huge
 * pages (alloc.c), from malloc, calloc and realloc alike; smaller ones are
 * not; and the blocks hold what was written, calloc's zeroed. */
static void test_huge_pages(void)
{
	unsigned char *small, *big, *zeroed, *grown;
	size_t min = topo__tune.hugepage_min;

	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) != 0) {
		check_skip("test_core: no transparent huge pages here: "
			   "advice not checked");
		return;
	}
	/* Every block of a megabyte and more a mapping of its own, whatever
	 * glibc's threshold has grown to (valgrind's allocator ignores
	 * this: its blocks share mappings, which the advice splits). */
	(void)mallopt(M_MMAP_THRESHOLD, 128 * 1024);
	CHECK(min >= 2 * HUGE, "default threshold %zu covers a huge page", min);

	small = topo__malloc(min / 2);
	big = topo__malloc(min + 2 * MIB);
	zeroed = topo__calloc(2, min / 2 + MIB);
	grown = topo__malloc(MIB);
	if (grown != NULL)
		memset(grown, 0x5a, MIB);
	grown = topo__realloc(grown, min + 4 * MIB);
	CHECK(small != NULL && big != NULL && zeroed != NULL && grown != NULL,
	      "blocks allocated");
	if (small == NULL || big == NULL || zeroed == NULL || grown == NULL)
		goto out;
	CHECK_INT(advised_huge(first_huge(small)), 0);
	CHECK_INT(advised_huge(first_huge(big)), 1);
	CHECK_INT(advised_huge(first_huge(zeroed)), 1);
	CHECK_INT(advised_huge(first_huge(grown)), 1);
	{
		size_t nz = 0, bad = 0;

		for (size_t i = 0; i < min + 2 * MIB; i++)
			nz += zeroed[i] != 0;
		for (size_t i = 0; i < MIB; i++)
			bad += grown[i] != 0x5a;
		CHECK(nz == 0, "calloc'd block zero (%zu bytes not)", nz);
		CHECK(bad == 0, "realloc kept the block (%zu bytes lost)", bad);
		memset(big, 0x33, min + 2 * MIB);
		CHECK(big[0] == 0x33 && big[min + 2 * MIB - 1] == 0x33,
		      "advised block written end to end");
	}
	/* A lower threshold advises the smaller block too. */
	topo__tune.hugepage_min = min / 4;
	topo__free(small);
	small = topo__malloc(min / 2);
	CHECK(small != NULL, "small block allocated again");
	if (small != NULL)
		CHECK_INT(advised_huge(first_huge(small)), 1);
	topo__tune.hugepage_min = min;
	/* a size that wraps is refused before calloc or the advice */
	CHECK(topo__calloc(SIZE_MAX / 2, 4) == NULL, "calloc refuses overflow");
out:
	topo__free(small);
	topo__free(big);
	topo__free(zeroed);
	topo__free(grown);
}

/* The protection of the mapping holding addr in /proc/self/maps ("rw-p",
 * "---p"), or "" when no mapping holds it. */
static void mapping_perms(const void *addr, char perms[8])
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	uintptr_t a = (uintptr_t)addr;

	perms[0] = 0;
	if (f == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;
		char pr[8];

		if (sscanf(line, "%lx-%lx %7s", &lo, &hi, pr) == 3 && a >= lo &&
		    a < hi) {
			memcpy(perms, pr, sizeof(pr));
			break;
		}
	}
	fclose(f);
}

/* Large buffers (topo__block_alloc): from topo__tune.map_min bytes a mapping of
 * their own, 2 MiB-aligned, zeroed, writable end to end, advised to use
 * huge pages, with no access to the page after their page-rounded end,
 * and gone when freed; smaller ones from malloc; failure injected into
 * either. */
static void test_blocks(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), min = topo__tune.map_min,
	       size = min + 3 * MIB + 100,
	       len = (size + page - 1) & ~(page - 1);
	struct topo__block big = {0}, small = {0}, none = {0};
	unsigned char *p, *q;
	char perms[8];

	CHECK(min >= 2 * HUGE, "default threshold %zu covers a huge page", min);
	CHECK_INT(topo__blocks_mapped(), 0);
	p = topo__block_alloc(&big, size);
	CHECK_INT(topo__blocks_mapped(), 1);
	CHECK(p != NULL && big.p == p, "large block mapped");
	if (p == NULL)
		return;
	CHECK_INT((long)((uintptr_t)p % HUGE), 0);
	CHECK_INT((long)big.mapped, (long)(len + page));
	{
		size_t nz = 0;

		for (size_t i = 0; i < size; i++)
			nz += p[i] != 0;
		CHECK(nz == 0, "mapped block zero (%zu bytes not)", nz);
	}
	memset(p, 0x6b, size);
	CHECK(p[0] == 0x6b && p[size - 1] == 0x6b, "written end to end");
	mapping_perms(p + len - 1, perms);
	CHECK_STR(perms, "rw-p");
	mapping_perms(p + len, perms);
	CHECK_STR(perms, "---p");
	if (access("/sys/kernel/mm/transparent_hugepage/enabled", F_OK) == 0) {
		CHECK_INT(advised_huge(p), 1);
		CHECK_INT(advised_huge(p + len - 1), 1);
	}
	topo__block_free(&big);
	CHECK(big.p == NULL && big.mapped == 0, "freed block cleared");
	CHECK_INT(topo__blocks_mapped(), 0);
	mapping_perms(p + len, perms);
	CHECK(strcmp(perms, "---p") != 0, "guard page unmapped");
	topo__block_free(&big); /* twice: nothing */

	q = topo__block_alloc(&small, min - 1);
	CHECK(q != NULL && small.mapped == 0, "small block from malloc");
	if (q != NULL)
		memset(q, 0x11, min - 1);
	topo__block_free(&small);

	/* One injected failure, on either path, is reported and leaves the
	 * block empty; the next allocation succeeds. */
	topo__alloc_fail_after(0);
	CHECK(topo__block_alloc(&none, size) == NULL && none.p == NULL &&
		  none.mapped == 0,
	      "injected failure of a large block");
	p = topo__block_alloc(&big, size);
	CHECK(p != NULL, "the hook fired once");
	topo__block_free(&big);
	topo__alloc_fail_after(0);
	CHECK(topo__block_alloc(&none, 64) == NULL && none.p == NULL,
	      "injected failure of a small block");
	topo__alloc_fail_after(-1);
	topo__block_free(&none);
	/* A size that cannot be mapped is refused, not wrapped. */
	CHECK(topo__block_alloc(&none, SIZE_MAX - page) == NULL &&
		  none.p == NULL,
	      "block of SIZE_MAX refused");
	/* A lower threshold maps small blocks too. */
	topo__tune.map_min = 0;
	q = topo__block_alloc(&small, 1);
	CHECK(q != NULL && small.mapped == 2 * page, "one byte mapped: %zu",
	      small.mapped);
	topo__block_free(&small);
	topo__tune.map_min = min;
	CHECK_INT(topo__blocks_mapped(), 0);
}

/* Pages of the len bytes from p (page-aligned) that are resident; -1 when
 * mincore fails. */
static long resident_pages(const unsigned char *p, size_t len)
{
	size_t pages = len / 4096;
	unsigned char *vec = malloc(pages);
	long n = 0;

	if (vec == NULL || mincore((void *)p, len, vec) != 0) {
		free(vec);
		return -1;
	}
	for (size_t i = 0; i < pages; i++)
		n += vec[i] & 1;
	free(vec);
	return n;
}

/* A population stopped at once leaves most of a large block untouched
 * (it stops within a step of a few megabytes), and never changes what the
 * block holds; one waited for populates all of it. */
static void test_populate_stop(void)
{
	size_t len = (size_t)1 << 30, nz = 0;
	long pages = (long)(len / 4096) - 1, got;
	struct topo__populate pp = {0};
	unsigned char *block, *at;

	if (UNDER_VALGRIND ||
	    topo__memory_available(NULL) < ((int64_t)8 << 30) ||
	    topo__cpus_allowed(NULL, 0) < 2) {
		check_skip("test_core: population's stop not checked "
			   "(valgrind, one CPU, or under 8 GiB available)");
		return;
	}
	block = topo__calloc(1, len);
	CHECK(block != NULL, "block of 1 GiB");
	if (block == NULL)
		return;
	/* mincore takes a page-aligned start */
	at = (unsigned char *)(((uintptr_t)block + 4095) & ~(uintptr_t)4095);
	topo__populate_add(&pp, block, len);
	CHECK_INT(pp.n, 1);
	topo__populate_start(&pp);
	CHECK(pp.started, "population started");
	topo__populate_stop(&pp);
	CHECK(!pp.started && pp.n == 0, "stopped and joined");
	got = resident_pages(at, (size_t)pages * 4096);
	CHECK(got >= 0 && got < pages / 2,
	      "stopped population left %ld of %ld pages resident", got, pages);
	for (size_t i = 0; i < len; i += 4096 * 64)
		nz += block[i] != 0;
	CHECK(nz == 0, "population changed the block (%zu pages)", nz);
	/* Waiting lets it finish: every page resident. */
	topo__populate_add(&pp, block, len);
	topo__populate_start(&pp);
	topo__populate_wait(&pp);
	got = resident_pages(at, (size_t)pages * 4096);
	CHECK(got == pages, "population left %ld of %ld pages out", pages - got,
	      pages);
	topo__free(block);
}

static void test_kary(void)
{
	int32_t parent[7];
	static const int32_t want[7] = {-1, 0, 0, 1, 1, 2, 2};
	/* Root 5 of 7, fanout 3: positions p = (i - 5) mod 7. */
	static const int32_t want_r5[7] = {5, 5, 6, 6, 6, -1, 5};

	topo__network_kary(parent, 7, 2, 0);
	for (int i = 0; i < 7; i++)
		CHECK_INT(parent[i], want[i]);
	topo__network_kary(parent, 7, 3, 5);
	for (int i = 0; i < 7; i++)
		CHECK_INT(parent[i], want_r5[i]);
	topo__network_kary(parent, 4, 1, 2); /* a chain 2 -> 3 -> 0 -> 1 */
	CHECK_INT(parent[2], -1);
	CHECK_INT(parent[3], 2);
	CHECK_INT(parent[0], 3);
	CHECK_INT(parent[1], 0);
}

/* Torus distance from a to b, computed independently of network.c. */
static int torus_dist(const int32_t *dims, int nd, int64_t a, int64_t b)
{
	int dist = 0;

	for (int i = nd - 1; i >= 0; i--) {
		int ca = (int)(a % dims[i]), cb = (int)(b % dims[i]);
		int d = ca > cb ? ca - cb : cb - ca;

		dist += d < dims[i] - d ? d : dims[i] - d;
		a /= dims[i];
		b /= dims[i];
	}
	return dist;
}

static void test_torus(void)
{
	static const int32_t shapes[][5] = {
		{4, 4, 0}, {5, 3, 0}, {2, 2, 2, 0}, {4, 4, 4, 4, 2},
		{1, 7, 0}, {6, 0}, {3, 1, 4, 0},
	};

	for (size_t s = 0; s < sizeof(shapes) / sizeof(shapes[0]); s++) {
		int32_t dims[5];
		int nd = 0;
		int64_t nodes = 1;

		for (; nd < 5 && shapes[s][nd] != 0; nd++) {
			dims[nd] = shapes[s][nd];
			nodes *= dims[nd];
		}
		for (int32_t root = 0; root < nodes; root += (int32_t)(nodes / 3) + 1) {
			int32_t *parent = calloc((size_t)nodes, 4);
			int32_t *scratch = calloc((size_t)nodes + 1, 4);
			int32_t *order = calloc((size_t)nodes, 4);
			int32_t *depth = calloc((size_t)nodes, 4);
			int32_t bad;
			const char *why;
			int links = 1, least = 1;

			topo__network_torus(parent, dims, nd, root);
			CHECK_INT(topo__network_check(parent, (int32_t)nodes,
						      scratch, &bad, &why),
				  0);
			CHECK_INT(parent[root], -1);
			topo__network_order(parent, (int32_t)nodes, order,
					    depth, scratch);
			for (int32_t i = 0; i < nodes; i++) {
				if (i == root)
					continue;
				/* Every tree edge is one torus link, and the
				 * depth equals the torus distance. */
				if (torus_dist(dims, nd, i, parent[i]) != 1)
					links = 0;
				if (depth[i] != torus_dist(dims, nd, i, root))
					least = 0;
			}
			CHECK(links, "torus shape %zu root %d: tree uses torus "
			      "links only", s, root);
			CHECK(least, "torus shape %zu root %d: least depth", s,
			      root);
			free(parent);
			free(scratch);
			free(order);
			free(depth);
		}
	}
}

static void test_check_and_order(void)
{
	int32_t scratch[9], order[8], depth[8], bad = 0;
	const char *why = NULL;
	int32_t good[6] = {3, 3, 0, -1, 0, 2};
	int32_t two_roots[4] = {-1, 0, -1, 0};
	int32_t none[3] = {1, 2, 0};
	int32_t range[3] = {-1, 0, 7};
	int32_t self[3] = {-1, 1, 0};
	int32_t cycle[5] = {-1, 0, 3, 4, 2};

	CHECK_INT(topo__network_check(good, 6, scratch, &bad, &why), 0);
	topo__network_order(good, 6, order, depth, scratch);
	/* By depth, ids ascending within a level: 3 | 0 1 | 2 4 | 5 */
	static const int32_t want_order[6] = {3, 0, 1, 2, 4, 5};
	static const int32_t want_depth[6] = {1, 1, 2, 0, 2, 3};
	for (int i = 0; i < 6; i++) {
		CHECK_INT(order[i], want_order[i]);
		CHECK_INT(depth[i], want_depth[i]);
	}
	CHECK_INT(topo__network_check(two_roots, 4, scratch, &bad, &why), -1);
	CHECK_INT(bad, 2);
	CHECK_STR(why, "second root");
	CHECK_INT(topo__network_check(none, 3, scratch, &bad, &why), -1);
	CHECK_STR(why, "no root");
	CHECK_INT(topo__network_check(range, 3, scratch, &bad, &why), -1);
	CHECK_INT(bad, 2);
	CHECK_STR(why, "no such node");
	CHECK_INT(topo__network_check(self, 3, scratch, &bad, &why), -1);
	CHECK_INT(bad, 1);
	CHECK_STR(why, "own parent");
	CHECK_INT(topo__network_check(cycle, 5, scratch, &bad, &why), -1);
	CHECK_STR(why, "cycle");
	CHECK(bad >= 2 && bad <= 4, "cycle reported on the cycle (bad %d)",
	      bad);
}

static void test_machine_build(void)
{
	static const int32_t tasks[4] = {2, 5, 1, 3};
	static const int32_t net[4] = {2, 2, -1, 1};
	topo_machine *m = NULL;
	topo_error err;
	topo_group *g = NULL;
	int32_t *members;

	topo_error_clear(&err);
	CHECK_INT(topo__machine_build(&m, "t", 4, tasks, 3, "tree", net, &err),
		  0);
	if (m == NULL)
		return;
	CHECK_INT(topo_machine_tasks(m), 11);
	CHECK_INT(topo_machine_endpoints(m), 33);
	CHECK_INT(topo_machine_node_first_task(m, 3), 8);
	CHECK_INT(topo_machine_task_node(m, 7), 2);
	CHECK_INT(topo_machine_endpoint_node(m, 20), 1); /* task 6 */
	CHECK_INT(topo_machine_endpoint_node(m, 32), 3); /* task 10 */
	CHECK_INT(topo_machine_physical_root(m), 2);
	CHECK_INT(topo_machine_node_depth(m, 3), 2);
	CHECK_STR(topo_machine_network_type(m), "tree");

	members = malloc(4 * sizeof(int32_t));
	members[0] = 1;
	members[1] = 4;
	members[2] = 9;
	members[3] = 30;
	CHECK_INT(topo__group_from_members(&g, m, "g", "ep 1,4,9,30", members,
					   4),
		  0);
	CHECK_INT(topo_group_rank(g, 9), 2);
	CHECK_INT(topo_group_rank(g, 30), 3);
	CHECK_INT(topo_group_rank(g, 1), 0);
	CHECK_INT(topo_group_rank(g, 5), -1);
	CHECK_INT(topo_group_rank(g, 31), -1);
	CHECK_STR(topo_group_name(g), "g");
	topo_group_free(g);
	topo_group_free(NULL);
	topo_machine_free(m);
	topo_machine_free(NULL);

	/* More than 2^31-1 endpoints is refused with the count. */
	{
		int32_t big[2] = {65536, 65536};
		int32_t p2[2] = {-1, 0};
		char buf[600];

		topo_error_clear(&err);
		CHECK_INT(topo__machine_build(&m, "big", 2, big, 16384, "tree",
					      p2, &err),
			  TOPO_ELIMIT);
		CHECK(m == NULL, "no machine on failure");
		CHECK_STR(topo_error_format(&err, buf, sizeof(buf)),
			  "131072 tasks x 16384 endpoints = 2147483648 "
			  "endpoints; at most 2147483647 are supported");
	}
	/* Allocation failure at every site gives TOPO_ENOMEM, no leak. */
	for (long n = 0; n < 12; n++) {
		topo_error_clear(&err);
		topo__alloc_fail_after(n);
		int rc = topo__machine_build(&m, "t", 4, tasks, 3, "tree", net,
					     &err);
		topo__alloc_fail_after(-1);
		if (rc == 0) {
			topo_machine_free(m);
			break;
		}
		CHECK_INT(rc, TOPO_ENOMEM);
		CHECK(m == NULL, "no machine after failure %ld", n);
	}
}

int main(int argc, char **argv)
{
	check_args(argc, argv);
	CHECK_RUN(version, test_version());
	CHECK_RUN(errors, test_errors());
	CHECK_RUN(alloc_hook, test_alloc_hook());
	CHECK_RUN(huge_pages, test_huge_pages());
	CHECK_RUN(blocks, test_blocks());
	CHECK_RUN(populate_stop, test_populate_stop());
	CHECK_RUN(kary, test_kary());
	CHECK_RUN(torus, test_torus());
	CHECK_RUN(check_and_order, test_check_and_order());
	CHECK_RUN(machine_build, test_machine_build());
	return check_done("test_core");
}
