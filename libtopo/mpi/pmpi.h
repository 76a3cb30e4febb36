/*
 * pmpi.h - the parts of libcollc-mpi.so (libcollc-mpi(7)) and what they
 * share: the settings and the job's machine (pmpi_setup.c), communicators'
 * states, layouts, families and plans (pmpi_state.c), the messages and
 * counters every part uses (pmpi_common.c), and the wrapped calls
 * (collc_mpi.c).  Private to the library: define TOPO_INTERNAL.
 *
 * Threads.  Under MPI_THREAD_MULTIPLE several threads may call
 * collectives at once, on different communicators (MPI forbids two at
 * once on one).  A communicator's own state (struct cstate) is therefore
 * touched by one thread at a time and needs no lock; what communicators
 * share (the tables of layouts and families, a layout's trees and plans,
 * the counters) is under G.lock or a layout's lock, or atomic.  Locks are
 * taken only where G.mt says threads may meet (MPI_THREAD_MULTIPLE), and
 * never across an MPI call that waits for other processes.
 */
#ifndef TOPO_PMPI_H
#define TOPO_PMPI_H

#include "engine.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#define API __attribute__((visibility("default")))
/* The library's thread-locals: a preloaded library's TLS is in the
 * static block, so the initial-exec model reads them with one
 * instruction, where the default calls __tls_get_addr on every call. */
#define TLS _Thread_local __attribute__((tls_model("initial-exec")))
#define PFX "libcollc-mpi: "
/* exit status of a job refused for bad settings (as collc's bad input) */
#define EXIT_SETTINGS 2

/* Plans kept per layout, and the plan keys a communicator remembers as
 * agreed on. */
#define MAX_PLANS 16
#define MAX_AGREED 32
/* Tag ranges of a family: IDW words of bits, so 64 * IDW communicators
 * over one set of processes share its private communicator at once. */
#define IDW 16
#define NIDS (64 * IDW)
/* Families (process sets with a private communicator of their own) one
 * process keeps; beyond, a communicator gets a private one of its own. */
#define MAX_FAMILIES 64
/* Layouts no communicator uses any more, kept for the next one over the
 * same processes in the same order (a split in a loop). */
#define KEEP_LAYOUTS 8
/* The most bytes of a COLLC_MPI_MACHINE file read. */
#define MACHINE_MAX_BYTES ((size_t)256 << 20)

/* ---------------------------------------------------------------------- */
/* pmpi_common.c: the one global, messages, counters */

/* Reasons for handing a call to the MPI library, reported once each. */
enum reason {
	R_OFF,
	R_INTER,
	R_OP,
	R_LOC,
	R_TYPE,
	R_TYPEOP,
	R_ARGS,
	R_LARGE,
	R_PLAN,
	R_TAGS,
	R_NONBLOCKING,
	R_PERSISTENT,
	R_SMALL,
	R_COUNT
};

/* The settings, as every process must have them (pmpi_setup.c). */
struct settings {
	bool disable;
	const char *tree[TOPO_OP_COUNT], *alg[TOPO_OP_COUNT];
	size_t segment; /* COLLC_MPI_SEGMENT; 0: libtopo's default */
	int min_size;	/* COLLC_MPI_MIN_SIZE */
	bool poll;	/* COLLC_MPI_WAIT (this process's own) */
	bool report;	/* COLLC_MPI_REPORT */
};

struct layout;
struct family;
struct cstate;

struct global {
	bool on;	/* collc's way is taken at all */
	bool finalized; /* MPI_Finalize ran: the states are gone */
	bool mt;	/* MPI_THREAD_MULTIPLE: threads may meet */
	int world_rank, world_size;
	struct settings set;
	topo_machine *m;  /* the job's machine */
	topo_compiled *c; /* its compile output (COLLC_MPI_MACHINE) */
	int32_t *task;	  /* world rank -> task (NULL: task r is rank r) */
	int32_t per;	  /* endpoints per task */
	int keyval;
	int seen; /* marks the communicators a thread remembers */
	int tag_ub; /* MPI_TAG_UB */
	pthread_mutex_t lock;
	/* under lock: the layouts (used and kept), the families, every
	 * communicator's state */
	struct layout *layouts;
	int nkept;
	struct family *families;
	int nfamilies;
	uint64_t creating[MAX_FAMILIES]; /* process sets being founded */
	int ncreating;
	struct cstate *states;
	MPI_Group world_group;
	/* atomic */
	int64_t calls;
	int64_t freed; /* remembered communicators freed so far */
	int64_t shadows; /* private communicators made */
	int64_t ours[TOPO_OP_COUNT], theirs[TOPO_OP_COUNT];
	/* the nonblocking [0] and persistent [1] forms, all handed over */
	int64_t later[2][TOPO_OP_COUNT];
	unsigned fallback_said; /* bit per reason, reported once */
};

extern struct global G;

extern const char *const topo__pmpi_env_name[TOPO_OP_COUNT];
extern const char *const topo__pmpi_mpi_name[TOPO_OP_COUNT];

void topo__pmpi_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Something failed that the processes cannot agree their way out of: the
 * job ends (status 1) rather than leave processes waiting forever. */
void topo__pmpi_fatal(const char *what, const topo_error *err)
    __attribute__((noreturn));
/* Says, once a reason under COLLC_MPI_REPORT, why a call went to the MPI
 * library (topo__pmpi_hand_over). */
void topo__pmpi_said_handed(enum topo_op op, enum reason why);

/* Counts a call handed to the MPI library and says why (once a reason,
 * under COLLC_MPI_REPORT).  Inline: it is on the way of every
 * call the library hands over. */
/* Adds one to a count of G: threads meet only under
 * MPI_THREAD_MULTIPLE, and only then does it take a locked instruction. */
static inline void topo__pmpi_count(int64_t *count)
{
	if (G.mt)
		__atomic_fetch_add(count, 1, __ATOMIC_RELAXED);
	else
		++*count;
}

static inline void topo__pmpi_hand_over(enum topo_op op, enum reason why)
{
	topo__pmpi_count(&G.theirs[op]);
	if (G.set.report)
		topo__pmpi_said_handed(op, why);
}
/* The same for a nonblocking (persistent 0) or persistent form. */
void topo__pmpi_later(int persistent, enum topo_op op, const char *name);
void topo__pmpi_lock(void);
void topo__pmpi_unlock(void);

/* ---------------------------------------------------------------------- */
/* pmpi_setup.c: MPI_Init, MPI_Finalize, the settings and the machine */

/* Reads COLLC_MPI_NODES ("3,1,2"): the counts, or NULL with *nodes the
 * negated 1-based character where it went wrong (exposed for tests). */
int32_t *topo__pmpi_parse_layout(const char *v, int32_t *nodes,
				 const char **why);

/* ---------------------------------------------------------------------- */
/* pmpi_state.c: communicators */

/* A plan's key: what every process of a collective passes alike. */
struct pkey {
	int op;
	int64_t bytes;
	int root; /* communicator rank, -1: none */
	int type, redop;
};

/* A plan made for a layout, its schedule for this process, and the idle
 * engine states that run it (each run takes one, so that communicators
 * of one layout can run it at once). */
struct engine {
	struct topo__mx x;
	struct engine *next;
};

struct pentry {
	struct pkey key;
	topo_plan *p;
	struct topo__sched *s;
	bool writes_send; /* the plan writes into this member's SEND */
	bool ok;	  /* made (else: why, in err) */
	topo_error err;
	int64_t used; /* for the cache's order */
	int busy;     /* engines out */
	struct engine *idle;
	struct pentry *next;
};

/* A communicator's members as a group of the machine: shared by every
 * communicator over the same processes in the same order (a dup and its
 * parent, a split and the same split again). */
struct layout {
	int refs; /* under G.lock */
	uint64_t hash;
	int n;
	/* [n]: communicator rank -> world rank; NULL: MPI_COMM_WORLD's
	 * order */
	int32_t *wrank;
	/* group rank -> communicator rank, and back; NULL when the same */
	int32_t *host, *grank;
	/* the group ranks of each member node: first[j] .. first[j + 1] - 1
	 * (the hierarchical tree's view, tree/tview.c) */
	int32_t *first, nruns;
	pthread_mutex_t lock; /* g, the trees and plans below */
	topo_group *g; /* made when a whole plan needs it */
	struct {
		char shape[32];
		topo_tree *t;
	} trees[TOPO_OP_COUNT];
	int ntrees;
	struct pentry *plans;
	int nplans;
	int64_t clock;
	int64_t gone; /* plans let go so far (atomic) */
	struct layout *next;
};

/* A set of processes and its private communicator, whose tags are cut
 * into NIDS ranges: each communicator over those processes sends in a
 * range of its own (struct cstate's id).  Made once every process of the
 * set agrees, kept to MPI_Finalize. */
struct family {
	uint64_t hash; /* of the sorted world ranks */
	int n;
	MPI_Group group;
	MPI_Comm shadow;
	uint64_t used[IDW];	/* under G.lock */
	uint64_t pending[IDW];	/* offered in an agreement under way */
	uint64_t retired[IDW];	/* ranges a run abandoned messages in */
	struct family *next;
};

/* A communicator's state: an attribute of it, made at its first
 * collective over collc's plans, or copied from its parent's by
 * MPI_Comm_dup (the same layout, the plans agreed on). */
struct cstate {
	MPI_Comm user; /* MPI_COMM_NULL until seen */
	/* made by the keyval's copy callback and not yet checked against
	 * its communicator: the parent's group (pgroup) */
	bool copied;
	MPI_Group pgroup;
	struct layout *L;
	int rank, size;
	/* where its messages go, once agreed (ready) */
	bool ready;
	struct family *F; /* NULL: a private shadow of its own */
	int id;		  /* its tag range in F */
	MPI_Comm shadow;
	int tag0, tags; /* tags tag0 .. tag0 + tags - 1 */
	int32_t *peer;	/* communicator rank -> rank in shadow; NULL: same */
	/* the keys of plans agreed on (a ring, newest last) */
	uint64_t agreed[MAX_AGREED];
	int nagreed;
	/* scratch: SEND, RECV, WORK, a copy of SEND, a RECV dropped */
	unsigned char *tmp[5];
	size_t tmpcap[5];
	unsigned reported; /* choices reported (bit per operation) */
	/* the plan of the last call, agreed on and run: the next call with
	 * the same key takes it without a look-up, while no plan of the
	 * layout was let go since (gone) */
	struct pkey last_key;
	struct pentry *last;
	int64_t last_gone;
	struct cstate *next, **prevp; /* G.states */
};

/* The keyval's callbacks (MPI_Comm_create_keyval). */
int topo__pmpi_copy_state(MPI_Comm comm, int keyval, void *extra, void *in,
			  void *out, int *flag);
int topo__pmpi_delete_state(MPI_Comm comm, int keyval, void *attr,
			    void *extra);
/* The delete callback of G.seen: counts in G.freed. */
int topo__pmpi_forget(MPI_Comm comm, int keyval, void *attr, void *extra);
/* comm's state, made at its first call. */
struct cstate *topo__pmpi_state(MPI_Comm comm);
/* The plan for this call on s, made (or found) and agreed on, with an
 * engine state checked out to run it; NULL: the call goes to the MPI
 * library (*why says why).  Returns with *eng set. */
struct pentry *topo__pmpi_plan(struct cstate *s, MPI_Comm comm,
			       const struct pkey *k, struct engine **eng,
			       enum reason *why);
/* Gives the engine state back after the run (abandoned: the run ended
 * with messages in flight, whose tag range is not used again). */
void topo__pmpi_done(struct cstate *s, struct pentry *e, struct engine *eng,
		     bool abandoned);
/* Scratch buffer k of s, of at least len bytes (NULL: no memory). */
unsigned char *topo__pmpi_scratch(struct cstate *s, int k, int64_t len);
/* Everything freed at MPI_Finalize, while MPI works. */
void topo__pmpi_free_all(void);

#endif /* TOPO_PMPI_H */
