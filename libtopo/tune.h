/*
 * tune.h - the library's tunable thresholds, in one place: values that a
 * test lowers or raises to reach every path on small inputs, or a
 * benchmark sets to compare one way with another.  Programs never set
 * them; each is read where it is used, at the start of the work it
 * shapes, so a test sets it before that work starts.  Private to libtopo:
 * define TOPO_INTERNAL.
 */
#ifndef TOPO_TUNE_H
#define TOPO_TUNE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Thresholds, settable by tests to force every path on small sets. */
struct pset_tune {
	int64_t cap;	/* longest period kept periodic (bits) */
	int64_t sparse; /* a pattern with fewer than period / sparse members
			 * is applied member by member, not word by word */
	size_t many;	/* a union of more classes than this is marked
			 * straight into one bitmap */
};

/* For tests (predict.c): the simulation's shortcuts turned off, to check
 * that they change nothing. */
struct topo__predict_tune {
	bool no_dissemination; /* always in time order */
	bool no_batch;	       /* sends made ready together queue apart */
};

struct topo__tuning {
	/* Arrays of at least this many bytes are populated by a thread of their
	 * own (alloc.c, topo__populate_*); tests lower it. */
	size_t populate_min;
	/* Blocks of at least this many bytes are advised to use transparent
	 * huge pages (alloc.c); tests lower it to have every block advised. */
	size_t hugepage_min;
	/* Blocks of at least this many bytes are mappings of their own
	 * (alloc.c, topo__block_alloc); tests lower it. */
	size_t map_min;
	/* A bcast flood of at least this many messages, none a duplicate, is
	 * numbered depth first (coll/bcast/flood.c); tests lower it. */
	int64_t flood_depth_first;
	/* The widest copy of the pattern loops used (verify.c,
	 * topo__pattern_simd): 0 the widest the processor runs; tests cap it.
	 */
	int pattern_simd_cap;
	/* Bytes checked in all from which a check is shared between threads
	 * (verify.c); tests lower it. */
	int64_t verify_par_min;
	/* Bytes per task when a few members' buffers are checked in pieces, and
	 * the buffer size from which they are (verify.c); tests lower it. */
	int64_t verify_piece;
	/* Members per task when the members' checks are shared between threads
	 * (verify.c: from four tasks on); tests lower it. */
	int32_t verify_member_task;
	/* Successors one task of a run releases: a message with more shares the
	 * rest as tasks of this many (exec.c); tests lower it. */
	int64_t release_chunk;
	/* Messages of at least this many bytes are delivered in parts, and a
	 * part of at least this many bytes is halved whenever a participant is
	 * idle (exec.c, parts): 0 never (tests set it low, benchmarks to 0). */
	int64_t split_min;
	/* 1: such a part is halved whether or not a participant is idle (tests:
	 * parts on every run); 0: only for an idle one. */
	int split_eager;
	/* Combines of at least this many bytes into the same bytes run in a
	 * lane (exec.c): 0 never (tests, benchmarks). */
	int64_t lane_min;
	/* Whether runs split their reset and first messages between the
	 * participants by address (exec.c, homes): -1 where it helps, 0 never,
	 * 1 whenever the transport gives its slices (tests). */
	int exec_homes;
	/* The most messages out of send buffers for which the run chooses homes
	 * message by message (exec.c; tests set 0); beyond, each participant
	 * reads its first messages' sources and its part of every send buffer.
	 */
	int64_t warm_ranges_max;
	/* Whether the in-process transport streams its large copies
	 * (transport_inproc.c): -1 when its arenas are at least twice the
	 * last-level cache (topo__stream_run), 0 never, 1 always (tests). */
	int stream_copies;
	/* Whether the in-process transport fuses a reduction's first copy with
	 * its first combine (transport_inproc.c): 1, or 0 never (tests,
	 * benchmarks). */
	int fuse_copies;
	/* How long topo__pool_wake makes sleeping workers spin (pool.c);
	 * tests raise it. */
	int64_t pool_wake_spin_ns;
	/* stride-spec evaluation (machine/pset.c) */
	struct pset_tune pset;
	/* prediction (plan/predict.c) */
	struct topo__predict_tune predict;
};
/* The one instance (tune.c), holding the defaults. */
extern struct topo__tuning topo__tune;

#endif /* TOPO_TUNE_H */
