/*
 * pmpi_state.c - libcollc-mpi.so's communicators: each one's state, the
 * layouts and plans they share, the private communicators their messages
 * travel over, and the agreements that keep every process on the same
 * plan (pmpi.h).
 *
 * Cheap communicators.  A program may make communicators by the thousand
 * (a library that duplicates its caller's for every call, a split in a
 * loop), and a communicator's first collectives must not cost much more
 * than with the MPI library alone.  So nothing here is collective but
 * one MPI_Allreduce at a communicator's first collective over collc's
 * plans, and one at the first use of each plan on it:
 *  - a layout (the members as a group of the machine, their trees and
 *    plans) is found from the communicator's world ranks, which
 *    MPI_Comm_group and MPI_Group_translate_ranks give without talking to
 *    anyone; communicators over the same processes in the same order share
 *    one, and a duplicate takes its parent's (the keyval's copy callback);
 *  - plans are made when first used, kept per layout, and each process
 *    makes its own part (its schedule, its engine state);
 *  - the messages of every communicator over one set of processes go over
 *    one private duplicate of the first of them (a family), each
 *    communicator in a range of tags of its own, so that a duplicate or a
 *    split costs no MPI_Comm_dup of ours.  The range is agreed at the
 *    communicator's first collective: every process offers the ranges it
 *    has free and MPI_BAND keeps those free everywhere, together with the
 *    first plan's key.  A range is free again once its communicator is
 *    freed (its messages all taken, since every collective on it
 *    completed everywhere before anyone offers it again), unless a run
 *    abandoned messages in it.  Where no family can be had (too many sets
 *    of processes, threads founding one for the same set at once) a
 *    communicator gets a private duplicate of its own, as every process
 *    of it agrees.
 *
 * Agreeing.  Every process of a collective must run the same plan.  The
 * settings are agreed at MPI_Init (pmpi_setup.c); the arguments are MPI's
 * rule, but a program that breaks it would run mismatched plans, wrong
 * results, then a hang.  So the first time a plan key is used on a
 * communicator, its hash and complement go through the same MPI_BAND as
 * whether the plan could be made on every process: a key that differs
 * anywhere is named by the communicator's rank 0, and the call fails with
 * MPI_ERR_ARG through the communicator's error handler, on every process
 * alike.  A barrier has no arguments: its plan is agreed on only when it
 * is the communicator's first collective.  A communicator remembers the
 * keys agreed on it (the last MAX_AGREED, a ring that evolves the same
 * way on every process, since they all make the same calls on it), and a
 * duplicate starts with its parent's: only calls that are new to a
 * communicator cost the agreement.
 */
#define TOPO_INTERNAL
#include "pmpi.h"
#include "coll/registry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------------- */
/* Hashes */

static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static uint64_t key_hash(const struct pkey *k)
{
	uint64_t h = mix((uint64_t)k->op);

	h = mix(h ^ (uint64_t)k->bytes);
	h = mix(h ^ (uint64_t)(uint32_t)k->root);
	h = mix(h ^ (uint64_t)k->type);
	return mix(h ^ (uint64_t)k->redop);
}

/* Of the world ranks in communicator order (a layout's). */
static uint64_t order_hash(const int32_t *wr, int n)
{
	uint64_t h = mix((uint64_t)n);

	for (int i = 0; i < n; i++)
		h = mix(h ^ (uint64_t)(uint32_t)wr[i]);
	return h;
}

/* Of the set of world ranks, whatever their order (a family's); wr NULL:
 * MPI_COMM_WORLD's, computed once. */
static uint64_t set_hash(const int32_t *wr, int n)
{
	static uint64_t world;
	uint64_t h = mix((uint64_t)n);

	if (wr == NULL && world != 0)
		return world;
	for (int i = 0; i < n; i++)
		h += mix((uint64_t)(uint32_t)(wr != NULL ? wr[i] : i) ^
			 0x5851f42d4c957f2dULL);
	if (wr == NULL)
		__atomic_store_n(&world, h, __ATOMIC_RELAXED);
	return h;
}

static int32_t task_of(int wr)
{
	return G.task != NULL ? G.task[wr] : wr;
}

/* ---------------------------------------------------------------------- */
/* Layouts */

static void free_entry(struct pentry *e)
{
	while (e->idle != NULL) {
		struct engine *g = e->idle;

		e->idle = g->next;
		topo__mx_teardown(&g->x);
		free(g);
	}
	topo__sched_free(e->s);
	topo_plan_free(e->p);
	free(e);
}

static void layout_free(struct layout *L)
{
	while (L->plans != NULL) {
		struct pentry *e = L->plans;

		L->plans = e->next;
		free_entry(e);
	}
	for (int i = 0; i < L->ntrees; i++)
		topo_tree_free(L->trees[i].t);
	topo_group_free(L->g);
	free(L->wrank);
	free(L->host);
	free(L->grank);
	free(L->first);
	pthread_mutex_destroy(&L->lock);
	free(L);
}

/* Member i's endpoint: its task's first. */
static int32_t endpoint_of(const struct layout *L, int i)
{
	return task_of(L->wrank != NULL ? L->wrank[i] : i) * G.per;
}

/* L's group, made when first asked for (a whole plan, a tree): a layout
 * whose plans are all members' parts (plan/local.c) never needs it, and
 * over a million processes it is 4 MiB.  Under L's lock, or before L is
 * shared. */
static const topo_group *layout_group(struct layout *L, topo_error *err)
{
	int32_t *ep;

	if (L->g != NULL)
		return L->g;
	ep = malloc((size_t)L->n * sizeof(int32_t) + 1);
	if (ep == NULL) {
		topo__err(err, TOPO_ENOMEM, NULL, NULL, "out of memory");
		return NULL;
	}
	for (int i = 0; i < L->n; i++)
		ep[i] = endpoint_of(L, i);
	if (topo_group_new_list(&L->g, G.m, NULL, ep, L->n, err) != 0)
		L->g = NULL;
	free(ep);
	return L->g;
}

/* The layout of the processes wr[0..n-1] (world ranks in communicator
 * order; NULL: MPI_COMM_WORLD's order), found or made; wr is taken over.
 * Under G.lock. */
static struct layout *layout_get(int32_t *wr, int n)
{
	uint64_t h = wr != NULL ? order_hash(wr, n) : 0;
	struct layout *L;
	int32_t prev = -1, nruns = 0, last = -1;
	bool ordered = true;

	for (L = G.layouts; L != NULL; L = L->next)
		if (L->hash == h && L->n == n &&
		    (wr == NULL
			 ? L->wrank == NULL
			 : L->wrank != NULL &&
			       memcmp(L->wrank, wr,
				      (size_t)n * sizeof(int32_t)) == 0)) {
			if (L->refs++ == 0)
				G.nkept--;
			free(wr);
			return L;
		}
	L = calloc(1, sizeof(*L));
	if (L == NULL)
		topo__pmpi_fatal("a communicator's layout", NULL);
	L->hash = h;
	L->n = n;
	L->wrank = wr;
	L->refs = 1;
	pthread_mutex_init(&L->lock, NULL);
	/* In communicator order, are the endpoints ascending (the group's
	 * order, so that group rank i is communicator rank i)? */
	for (int i = 0; i < n && ordered; i++) {
		int32_t ep = endpoint_of(L, i);

		ordered = ep > prev;
		prev = ep;
	}
	if (!ordered) {
		topo_error err;

		topo_error_clear(&err);
		if (layout_group(L, &err) == NULL)
			topo__pmpi_fatal("a communicator's group", &err);
		L->host = malloc((size_t)n * sizeof(int32_t));
		L->grank = malloc((size_t)n * sizeof(int32_t));
		if (L->host == NULL || L->grank == NULL)
			topo__pmpi_fatal("a communicator's layout", NULL);
		for (int i = 0; i < n; i++) {
			int32_t g = topo_group_rank(L->g, endpoint_of(L, i));

			L->grank[i] = g;
			L->host[g] = i;
		}
	}
	/* The runs of group ranks on one node, for the hierarchical tree's
	 * view (tree/tview.c): MPI_COMM_WORLD's straight from the machine
	 * when its ranks are the tasks' order. */
	if (wr == NULL && G.task == NULL && G.per == 1 &&
	    topo_machine_tasks(G.m) == n) {
		nruns = topo_machine_nodes(G.m);
		L->first = malloc(((size_t)nruns + 1) * sizeof(int32_t));
		if (L->first == NULL)
			topo__pmpi_fatal("a communicator's layout", NULL);
		for (int32_t j = 0; j <= nruns; j++)
			L->first[j] = G.m->node_first_task[j];
	} else {
		L->first = malloc(((size_t)n + 1) * sizeof(int32_t));
		if (L->first == NULL)
			topo__pmpi_fatal("a communicator's layout", NULL);
		for (int32_t g = 0; g < n; g++) {
			/* group rank g is communicator rank host[g] */
			int32_t node = topo_machine_endpoint_node(
			    G.m, endpoint_of(L, L->host != NULL ? L->host[g] : g));

			if (node != last)
				L->first[nruns++] = g;
			last = node;
		}
		L->first[nruns] = n;
	}
	L->nruns = nruns;
	L->next = G.layouts;
	G.layouts = L;
	return L;
}

/* One communicator less on L: kept for the next, up to KEEP_LAYOUTS
 * unused ones.  Under G.lock. */
static void layout_put(struct layout *L)
{
	if (--L->refs > 0)
		return;
	if (++G.nkept <= KEEP_LAYOUTS)
		return;
	/* the unused one furthest down the list: the oldest */
	{
		struct layout **pp, **last = NULL;

		for (pp = &G.layouts; *pp != NULL; pp = &(*pp)->next)
			if ((*pp)->refs == 0)
				last = pp;
		if (last != NULL) {
			struct layout *o = *last;

			*last = o->next;
			G.nkept--;
			layout_free(o);
		}
	}
}

/* The world ranks of comm's members, in its order. */
static int32_t *world_ranks(MPI_Comm comm, int n)
{
	int32_t *wr = malloc((size_t)n * sizeof(int32_t) + 1);
	int *in, *out;
	MPI_Group g;

	if (wr == NULL)
		topo__pmpi_fatal("a communicator's layout", NULL);
	if (comm == MPI_COMM_WORLD) {
		free(wr);
		return NULL;
	}
	in = malloc((size_t)n * sizeof(int) + 1);
	out = malloc((size_t)n * sizeof(int) + 1);
	if (in == NULL || out == NULL)
		topo__pmpi_fatal("a communicator's layout", NULL);
	for (int i = 0; i < n; i++)
		in[i] = i;
	PMPI_Comm_group(comm, &g);
	PMPI_Group_translate_ranks(g, n, in, G.world_group, out);
	PMPI_Group_free(&g);
	for (int i = 0; i < n; i++)
		wr[i] = out[i];
	free(in);
	free(out);
	/* MPI_COMM_WORLD's processes in its order: its layout */
	if (n == G.world_size) {
		bool same = true;

		for (int i = 0; i < n && same; i++)
			same = wr[i] == i;
		if (same) {
			free(wr);
			return NULL;
		}
	}
	return wr;
}

/* ---------------------------------------------------------------------- */
/* States */

static void link_state(struct cstate *s)
{
	s->next = G.states;
	s->prevp = &G.states;
	if (G.states != NULL)
		G.states->prevp = &s->next;
	G.states = s;
}

static void unlink_state(struct cstate *s)
{
	*s->prevp = s->next;
	if (s->next != NULL)
		s->next->prevp = s->prevp;
}

/* Frees s, its shadow and its tag range (under G.lock: the family's bits
 * and the layout's count; the shadow is freed by the caller, outside). */
static MPI_Comm release_state(struct cstate *s)
{
	MPI_Comm own = MPI_COMM_NULL;

	if (s->ready && s->F != NULL)
		s->F->used[s->id / 64] &= ~(UINT64_C(1) << (s->id % 64));
	else if (s->ready)
		own = s->shadow;
	if (s->copied)
		PMPI_Group_free(&s->pgroup);
	unlink_state(s);
	layout_put(s->L);
	free(s->peer);
	for (int i = 0; i < 5; i++)
		free(s->tmp[i]);
	free(s);
	return own;
}

/* Set while this thread duplicates a communicator for the library's own
 * messages: the duplicate takes no state. */
static TLS bool own_dup;

static int dup_own(MPI_Comm comm, MPI_Comm *out)
{
	int rc;

	__atomic_fetch_add(&G.shadows, 1, __ATOMIC_RELAXED);
	own_dup = true;
	rc = PMPI_Comm_dup(comm, out);
	own_dup = false;
	if (rc == MPI_SUCCESS)
		PMPI_Comm_set_errhandler(*out, MPI_ERRORS_RETURN);
	return rc;
}

int topo__pmpi_copy_state(MPI_Comm comm, int keyval, void *extra, void *in,
			  void *out, int *flag)
{
	const struct cstate *p = in;
	struct cstate *s;

	(void)keyval;
	(void)extra;
	*flag = 0;
	if (G.finalized || p == NULL || own_dup)
		return MPI_SUCCESS;
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return MPI_SUCCESS; /* the duplicate makes its own at need */
	/* MPI copies attributes at MPI_Comm_dup alone, but Open MPI 4.1
	 * also at MPI_Comm_create_group, whose communicator may have other
	 * processes or another order: the copy is checked against its
	 * communicator at its first use (topo__pmpi_state) */
	if (PMPI_Comm_group(comm, &s->pgroup) != MPI_SUCCESS) {
		free(s);
		return MPI_SUCCESS;
	}
	s->copied = true;
	/* the parent's processes and order, and its agreed keys: the
	 * duplicate is made at the same point of every process's calls on
	 * the parent, so they are the same on all of them */
	s->user = MPI_COMM_NULL;
	s->rank = p->rank;
	s->size = p->size;
	memcpy(s->agreed, p->agreed, sizeof(s->agreed));
	s->nagreed = p->nagreed;
	topo__pmpi_lock();
	s->L = p->L;
	s->L->refs++;
	link_state(s);
	topo__pmpi_unlock();
	*(void **)out = s;
	*flag = 1;
	return MPI_SUCCESS;
}

int topo__pmpi_delete_state(MPI_Comm comm, int keyval, void *attr,
			    void *extra)
{
	MPI_Comm own;

	(void)comm;
	(void)keyval;
	(void)extra;
	if (G.finalized || attr == NULL)
		return MPI_SUCCESS; /* freed at MPI_Finalize */
	topo__pmpi_lock();
	own = release_state(attr);
	topo__pmpi_unlock();
	__atomic_fetch_add(&G.freed, 1, __ATOMIC_RELEASE);
	if (own != MPI_COMM_NULL)
		PMPI_Comm_free(&own);
	return MPI_SUCCESS;
}

/* The last communicator this thread called with and its state, valid
 * while no state was freed since (G.freed): a handle freed and made
 * again may name another communicator. */
static TLS struct {
	MPI_Comm comm;
	struct cstate *s;
	int64_t freed;
} last_state;

/* Whether s, a state the keyval's copy callback made, is comm's: the
 * same processes in the same order as the parent it was copied from. */
static bool copy_holds(struct cstate *s, MPI_Comm comm)
{
	MPI_Group g;
	int same = MPI_UNEQUAL;

	if (PMPI_Comm_group(comm, &g) == MPI_SUCCESS) {
		PMPI_Group_compare(s->pgroup, g, &same);
		PMPI_Group_free(&g);
	}
	PMPI_Group_free(&s->pgroup);
	s->copied = false;
	return same == MPI_IDENT;
}

struct cstate *topo__pmpi_state(MPI_Comm comm)
{
	struct cstate *s = NULL;
	int flag = 0;
	int32_t *wr;

	if (last_state.s != NULL && last_state.comm == comm &&
	    last_state.freed == __atomic_load_n(&G.freed, __ATOMIC_ACQUIRE))
		return last_state.s;
	last_state.s = NULL;
	last_state.comm = comm;
	last_state.freed = __atomic_load_n(&G.freed, __ATOMIC_ACQUIRE);
	PMPI_Comm_get_attr(comm, G.keyval, &s, &flag);
	if (flag && s != NULL && (!s->copied || copy_holds(s, comm))) {
		s->user = comm;
		last_state.s = s;
		return s;
	}
	/* none, or a copy of another communicator's: replaced below (the
	 * keyval's delete callback frees the copy) */
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		topo__pmpi_fatal("a communicator's state", NULL);
	s->user = comm;
	PMPI_Comm_rank(comm, &s->rank);
	PMPI_Comm_size(comm, &s->size);
	wr = world_ranks(comm, s->size);
	topo__pmpi_lock();
	s->L = layout_get(wr, s->size);
	link_state(s);
	topo__pmpi_unlock();
	if (PMPI_Comm_set_attr(comm, G.keyval, s) != MPI_SUCCESS)
		topo__pmpi_fatal("MPI_Comm_set_attr", NULL);
	last_state.s = s;
	return s;
}

unsigned char *topo__pmpi_scratch(struct cstate *s, int k, int64_t len)
{
	if ((size_t)len > s->tmpcap[k]) {
		size_t cap = (size_t)len + 64;
		unsigned char *t = realloc(s->tmp[k], cap);

		if (t == NULL)
			return NULL;
		s->tmp[k] = t;
		s->tmpcap[k] = cap;
	}
	return s->tmp[k];
}

/* ---------------------------------------------------------------------- */
/* Families and agreeing */

/* comm's family: one over the same processes (under G.lock). */
static struct family *family_of(MPI_Group cg, uint64_t h, int n)
{
	for (struct family *F = G.families; F != NULL; F = F->next) {
		int res = MPI_UNEQUAL;

		if (F->hash != h || F->n != n)
			continue;
		PMPI_Group_compare(cg, F->group, &res);
		if (res == MPI_IDENT || res == MPI_SIMILAR)
			return F;
	}
	return NULL;
}

/* The tags of a family's range: the most a plan may number between two
 * processes in it. */
static int family_tags(void)
{
	return (int)(((int64_t)G.tag_ub + 1) / NIDS);
}

/* The agreement's vector: the tag ranges free (IDW words), whether the
 * family is present, absent, can be founded, then the key, its
 * complement and whether the plan was made. */
enum { A_PRESENT = IDW, A_ABSENT, A_FOUND, A_KEY, A_NKEY, A_OK, A_LEN };

/* Sets up where s's messages go, from the agreement's result v (its
 * first collective).  offered: what this process offered of F. */
static void settle(struct cstate *s, MPI_Comm comm, MPI_Group cg,
		   struct family *F, const uint64_t *offered, uint64_t sh,
		   bool founding, const uint64_t *v)
{
	int id = -1;

	topo__pmpi_lock();
	if (F != NULL)
		for (int w = 0; w < IDW; w++)
			F->pending[w] &= ~offered[w];
	if (founding) {
		for (int i = 0; i < G.ncreating; i++)
			if (G.creating[i] == sh) {
				G.creating[i] = G.creating[--G.ncreating];
				break;
			}
	}
	if (F != NULL && v[A_PRESENT] == ~UINT64_C(0))
		for (int w = 0; w < IDW && id < 0; w++)
			if (v[w] != 0) {
				id = w * 64 + __builtin_ctzll(v[w]);
				F->used[w] |= UINT64_C(1) << (id % 64);
			}
	topo__pmpi_unlock();
	if (id < 0) {
		F = NULL;
		if (v[A_ABSENT] == ~UINT64_C(0) && v[A_FOUND] == ~UINT64_C(0)) {
			/* every process founds the family, with this
			 * communicator in its first range */
			F = calloc(1, sizeof(*F));
			if (F == NULL || dup_own(comm, &F->shadow) != MPI_SUCCESS)
				topo__pmpi_fatal("MPI_Comm_dup", NULL);
			PMPI_Comm_group(F->shadow, &F->group);
			F->hash = sh;
			F->n = s->size;
			F->used[0] = 1;
			id = 0;
			topo__pmpi_lock();
			F->next = G.families;
			G.families = F;
			G.nfamilies++;
			topo__pmpi_unlock();
		} else {
			if (dup_own(comm, &s->shadow) != MPI_SUCCESS)
				topo__pmpi_fatal("MPI_Comm_dup", NULL);
		}
	}
	s->F = F;
	s->id = id;
	if (F != NULL) {
		int n = s->size, *in, *out;
		bool same = true;

		s->shadow = F->shadow;
		s->tags = family_tags();
		s->tag0 = id * s->tags;
		in = malloc((size_t)n * sizeof(int) + 1);
		out = malloc((size_t)n * sizeof(int) + 1);
		if (in == NULL || out == NULL)
			topo__pmpi_fatal("a communicator's state", NULL);
		for (int i = 0; i < n; i++)
			in[i] = i;
		PMPI_Group_translate_ranks(cg, n, in, F->group, out);
		for (int i = 0; i < n; i++)
			same &= out[i] == i;
		if (!same) {
			s->peer = malloc((size_t)n * sizeof(int32_t));
			if (s->peer == NULL)
				topo__pmpi_fatal("a communicator's state", NULL);
			for (int i = 0; i < n; i++)
				s->peer[i] = out[i];
		}
		free(in);
		free(out);
	} else {
		s->tag0 = 0;
		s->tags = G.tag_ub; /* 0 .. TAG_UB - 1: no more is needed */
	}
	s->ready = true;
}

static bool is_agreed(const struct cstate *s, uint64_t h)
{
	for (int i = 0; i < s->nagreed; i++)
		if (s->agreed[i] == h)
			return true;
	return false;
}

static void remember(struct cstate *s, uint64_t h)
{
	if (s->nagreed == MAX_AGREED) {
		memmove(s->agreed, s->agreed + 1,
			(MAX_AGREED - 1) * sizeof(uint64_t));
		s->nagreed--;
	}
	s->agreed[s->nagreed++] = h;
}

/* Says, from the communicator's rank 0, which processes passed another
 * key than it: every process calls it. */
static void mismatch(struct cstate *s, MPI_Comm comm, const struct pkey *k,
		     uint64_t h)
{
	uint64_t *all = NULL;

	if (s->rank == 0)
		all = malloc((size_t)s->size * sizeof(uint64_t));
	PMPI_Gather(&h, 1, MPI_UINT64_T, all, 1, MPI_UINT64_T, 0, comm);
	if (s->rank == 0) {
		char list[200];
		size_t len = 0;
		int count = 0;

		list[0] = '\0';
		for (int r = 0; all != NULL && r < s->size; r++) {
			if (all[r] == h)
				continue;
			count++;
			if (len + 16 < sizeof(list))
				len += (size_t)snprintf(list + len,
							sizeof(list) - len,
							"%s%d", len ? ", " : "",
							r);
			else if (len + 5 < sizeof(list))
				len += (size_t)snprintf(list + len,
							sizeof(list) - len,
							", ...");
		}
		char what[120];

		len = (size_t)snprintf(what, sizeof(what), "%lld bytes",
				       (long long)k->bytes);
		if (k->root >= 0)
			len += (size_t)snprintf(what + len, sizeof(what) - len,
						", root %d", k->root);
		if (topo_op_reduces((enum topo_op)k->op))
			snprintf(what + len, sizeof(what) - len, ", %s %s",
				 topo_type_name((enum topo_type)k->type),
				 topo_redop_name((enum topo_redop)k->redop));
		topo__pmpi_say(
		    "%s on a communicator of %d processes: the processes "
		    "passed different arguments (MPI requires the same "
		    "amount of data, root, datatype and operator on every "
		    "process): rank%s %s of the communicator differ%s from "
		    "rank 0 (%s)",
		    topo__pmpi_mpi_name[k->op], s->size, count == 1 ? "" : "s",
		    list, count == 1 ? "s" : "", what);
		free(all);
	}
}

/* Agrees on key h (whether every process made its plan: ok), and, at the
 * communicator's first collective, on where its messages go.  Returns 0
 * (*all_ok set) or 1 when the processes passed different keys. */
static int agree(struct cstate *s, MPI_Comm comm, uint64_t h, bool ok,
		 bool *all_ok)
{
	uint64_t v[A_LEN], offered[IDW];
	bool first = !s->ready, founding = false;
	struct family *F = NULL;
	MPI_Group cg = MPI_GROUP_NULL;
	uint64_t sh = 0;

	memset(v, 0, sizeof(v));
	memset(offered, 0, sizeof(offered));
	if (first) {
		PMPI_Comm_group(comm, &cg);
		sh = set_hash(s->L->wrank, s->size);
		topo__pmpi_lock();
		F = family_of(cg, sh, s->size);
		if (F != NULL) {
			for (int w = 0; w < IDW; w++) {
				offered[w] = ~F->used[w] & ~F->pending[w] &
					     ~F->retired[w];
				F->pending[w] |= offered[w];
				v[w] = offered[w];
			}
			v[A_PRESENT] = ~UINT64_C(0);
		} else {
			bool busy = false;

			for (int i = 0; i < G.ncreating; i++)
				busy |= G.creating[i] == sh;
			v[A_ABSENT] = ~UINT64_C(0);
			if (!busy && G.nfamilies + G.ncreating < MAX_FAMILIES &&
			    G.ncreating < MAX_FAMILIES) {
				v[A_FOUND] = ~UINT64_C(0);
				G.creating[G.ncreating++] = sh;
				founding = true;
			}
		}
		topo__pmpi_unlock();
	}
	v[A_KEY] = h;
	v[A_NKEY] = ~h;
	v[A_OK] = ok ? ~UINT64_C(0) : 0;
	if (PMPI_Allreduce(MPI_IN_PLACE, first ? v : v + A_KEY,
			   first ? A_LEN : A_LEN - A_KEY, MPI_UINT64_T,
			   MPI_BAND, comm) != MPI_SUCCESS)
		topo__pmpi_fatal("agreeing on a plan", NULL);
	if (first) {
		settle(s, comm, cg, F, offered, sh, founding, v);
		PMPI_Group_free(&cg);
	}
	if (v[A_KEY] != h || v[A_NKEY] != ~h)
		return 1;
	*all_ok = v[A_OK] == ~UINT64_C(0);
	if (*all_ok)
		remember(s, h);
	return 0;
}

/* ---------------------------------------------------------------------- */
/* Plans */

static const topo_tree *tree_of(struct layout *L, enum topo_op op,
				topo_error *err)
{
	const char *shape = G.set.tree[op];

	for (int i = 0; i < L->ntrees; i++)
		if (strcmp(L->trees[i].shape, shape) == 0)
			return L->trees[i].t;
	if (L->ntrees == TOPO_OP_COUNT || layout_group(L, err) == NULL)
		return NULL;
	if (topo_tree_new(&L->trees[L->ntrees].t, L->g, shape, err) != 0)
		return NULL;
	snprintf(L->trees[L->ntrees].shape, sizeof(L->trees[0].shape), "%s",
		 shape);
	return L->trees[L->ntrees++].t;
}

/* This process's part of the plan of pp (plan/local.c), where its
 * operation, algorithm and tree have one: 0, TOPO_EARG (they have none:
 * the whole plan), or another failure (e->err). */
static int make_part(struct layout *L, struct pentry *e,
		     const struct topo_plan_params *pp, int rank)
{
	const struct pkey *k = &e->key;
	const char *shape = G.set.tree[k->op], *alg = pp->algorithm;
	struct topo__tview tv;
	int32_t me = L->grank != NULL ? L->grank[rank] : rank;
	int32_t root = k->root < 0 ? -1
		       : L->grank != NULL ? L->grank[k->root]
					  : k->root;
	const struct topo__algorithm *a =
	    alg == NULL ? topo__algorithm_default((enum topo_op)k->op, false)
			: topo__algorithm_find((enum topo_op)k->op, alg);

	if (a == NULL || !(a->flags & TOPO__ALG_PART))
		return TOPO_EARG;
	if (strcmp(shape, "hierarchical") == 0) {
		if (topo__tview_hierarchical(&tv, L->n, L->first, L->nruns) !=
		    0)
			return TOPO_EARG;
	} else if (strcmp(shape, "binomial") == 0) {
		topo__tview_simple(&tv, TOPO__TV_BINOMIAL, L->n);
	} else if (strcmp(shape, "chain") == 0) {
		topo__tview_simple(&tv, TOPO__TV_CHAIN, L->n);
	} else {
		return TOPO_EARG;
	}
	return topo__plan_local(&e->p, &tv, pp, root, me, L->nruns == 1,
				&e->err);
}

/* Makes e's plan and this process's schedule of it (e->ok, or e->err):
 * its part where there is one (make_part), else the whole plan.  Under
 * L->lock. */
static void make(struct layout *L, struct pentry *e, int rank)
{
	const struct pkey *k = &e->key;
	struct topo_plan_params pp;
	const topo_tree *t;
	int rc;

	topo_error_clear(&e->err);
	topo_plan_params_init(&pp, sizeof(pp), (enum topo_op)k->op);
	pp.algorithm = G.set.alg[k->op];
	pp.segment = G.set.segment;
	if (k->op != TOPO_OP_BARRIER) {
		pp.bytes = (size_t)k->bytes;
		pp.type = (enum topo_type)k->type;
		if (topo_op_reduces((enum topo_op)k->op))
			pp.redop = (enum topo_redop)k->redop;
	}
	rc = make_part(L, e, &pp, rank);
	if (rc == 0)
		goto schedule;
	if (rc != TOPO_EARG)
		return;
	topo_error_clear(&e->err);
	t = tree_of(L, (enum topo_op)k->op, &e->err);
	if (k->root >= 0 && t != NULL)
		pp.root = topo_group_members(L->g)[L->grank != NULL
						       ? L->grank[k->root]
						       : k->root];
	if (t == NULL) {
		if (e->err.text[0] == '\0')
			topo__err(&e->err, TOPO_ELIMIT, NULL, NULL,
				  "too many trees");
		return;
	}
	/* the memory check counts this process's buffers alone */
	rc = topo__plan_new_hosted(&e->p, t, &pp, L->host, rank, &e->err);
	if (rc != 0)
		return;
schedule:
	rc = topo__sched_new(&e->s, e->p, L->host, L->n, rank, &e->err);
	if (rc != 0)
		return;
	for (int64_t i = 0; i < e->s->nev; i++) {
		const struct topo__ev *v = &e->s->ev[i];

		if ((v->kind == TOPO__EV_RECV || v->kind == TOPO__EV_LOCAL) &&
		    e->p->msg[v->msg].dbuf == TOPO__SEND)
			e->writes_send = true;
	}
	e->ok = true;
}

/* The entry for key k in L, found or made; busy counted.  Under
 * L->lock. */
static struct pentry *entry(struct layout *L, const struct pkey *k, int rank)
{
	struct pentry *e, **pp, **lru = NULL;

	for (e = L->plans; e != NULL; e = e->next)
		if (memcmp(&e->key, k, sizeof(*k)) == 0)
			break;
	if (e == NULL) {
		/* room: the least recently used idle entry goes */
		if (L->nplans >= MAX_PLANS) {
			for (pp = &L->plans; *pp != NULL; pp = &(*pp)->next)
				if ((*pp)->busy == 0 &&
				    (lru == NULL || (*pp)->used < (*lru)->used))
					lru = pp;
			if (lru != NULL) {
				struct pentry *o = *lru;

				*lru = o->next;
				L->nplans--;
				__atomic_fetch_add(&L->gone, 1, __ATOMIC_RELEASE);
				free_entry(o);
			}
		}
		e = calloc(1, sizeof(*e));
		if (e == NULL)
			topo__pmpi_fatal("a plan", NULL);
		e->key = *k;
		make(L, e, rank);
		e->next = L->plans;
		L->plans = e;
		L->nplans++;
	}
	e->used = ++L->clock;
	e->busy++;
	return e;
}

static void lock_layout(struct layout *L)
{
	if (G.mt)
		pthread_mutex_lock(&L->lock);
}

static void unlock_layout(struct layout *L)
{
	if (G.mt)
		pthread_mutex_unlock(&L->lock);
}

struct pentry *topo__pmpi_plan(struct cstate *s, MPI_Comm comm,
			       const struct pkey *k, struct engine **eng,
			       enum reason *why)
{
	struct layout *L = s->L;
	struct pentry *e;
	struct engine *g;
	uint64_t h;
	bool ok, all_ok = true;

	*eng = NULL;
	if (s->last != NULL && memcmp(&s->last_key, k, sizeof(*k)) == 0 &&
	    __atomic_load_n(&L->gone, __ATOMIC_ACQUIRE) == s->last_gone) {
		/* the last call's plan, agreed on and kept since */
		e = s->last;
		lock_layout(L);
		e->used = ++L->clock;
		e->busy++;
		g = e->idle;
		if (g != NULL)
			e->idle = g->next;
		unlock_layout(L);
		if (g != NULL)
			goto run;
		goto engine;
	}
	s->last = NULL;
	h = key_hash(k);
	lock_layout(L);
	e = entry(L, k, s->rank);
	unlock_layout(L);
	/* a plan runs in any family's range of tags */
	ok = e->ok && e->s->max_seq < family_tags();
	/* a barrier has no arguments to disagree on: agreed with the
	 * communicator's first collective at most */
	if (!s->ready || (k->op != TOPO_OP_BARRIER && !is_agreed(s, h))) {
		if (agree(s, comm, h, ok, &all_ok) != 0) {
			mismatch(s, comm, k, h);
			topo__pmpi_done(s, e, NULL, false);
			*why = R_ARGS;
			return NULL;
		}
		if (!all_ok) {
			if (G.set.report && !ok)
				topo__pmpi_say("world rank %d: %s: %s",
					       G.world_rank,
					       topo__pmpi_mpi_name[k->op],
					       e->ok ? "more messages between "
						       "two processes than "
						       "a range of tags holds"
						     : e->err.text);
			*why = e->ok ? R_TAGS : R_PLAN;
			topo__pmpi_done(s, e, NULL, false);
			return NULL;
		}
	} else if (!ok) {
		/* agreed before, and made again since (the cache let it
		 * go), but not now: the others are running it */
		topo__pmpi_fatal(topo__pmpi_mpi_name[k->op], &e->err);
	}
	/* kept for the next call: taken before this one's plan could go */
	s->last_key = *k;
	s->last = e;
	s->last_gone = __atomic_load_n(&L->gone, __ATOMIC_ACQUIRE);
	lock_layout(L);
	g = e->idle;
	if (g != NULL)
		e->idle = g->next;
	unlock_layout(L);
engine:
	if (g == NULL) {
		topo_error err;

		topo_error_clear(&err);
		g = calloc(1, sizeof(*g));
		/* the root of a bcast sends from and "receives" into the one
		 * buffer: no receive may land straight in it there */
		if (g == NULL ||
		    topo__mx_setup(&g->x, e->p, e->s, L->host, s->shadow,
				   s->rank, false, false, 0,
				   !(k->op == TOPO_OP_BCAST && k->root == s->rank),
				   false, &err) != 0)
			topo__pmpi_fatal("an engine", &err);
		/* waiting is the MPI library's own loop (MPI_Waitsome),
		 * unless the host is oversubscribed: then polling, giving
		 * the CPU away */
		g->x.block = !G.set.poll;
		g->x.yield = G.set.poll;
	}
run:
	g->x.comm = s->shadow;
	g->x.tag0 = s->tag0;
	g->x.peer = s->peer;
	*eng = g;
	return e;
}

void topo__pmpi_done(struct cstate *s, struct pentry *e, struct engine *g,
		     bool abandoned)
{
	struct layout *L = s->L;

	if (abandoned && s->F != NULL) {
		/* messages may still come in this range: never again */
		topo__pmpi_lock();
		s->F->retired[s->id / 64] |= UINT64_C(1) << (s->id % 64);
		topo__pmpi_unlock();
	}
	lock_layout(L);
	if (g != NULL) {
		g->next = e->idle;
		e->idle = g;
	}
	e->busy--;
	unlock_layout(L);
}

void topo__pmpi_free_all(void)
{
	topo__pmpi_lock();
	while (G.states != NULL) {
		MPI_Comm own = release_state(G.states);

		if (own != MPI_COMM_NULL)
			PMPI_Comm_free(&own);
	}
	while (G.families != NULL) {
		struct family *F = G.families;

		G.families = F->next;
		PMPI_Group_free(&F->group);
		PMPI_Comm_free(&F->shadow);
		free(F);
	}
	G.nfamilies = 0;
	while (G.layouts != NULL) {
		struct layout *L = G.layouts;

		G.layouts = L->next;
		layout_free(L);
	}
	G.nkept = 0;
	topo__pmpi_unlock();
}
