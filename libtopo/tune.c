/*
 * tune.c - the defaults of the library's tunable thresholds (tune.h).
 * The reasons for each value are given where it is used.
 */
#define TOPO_INTERNAL
#include "tune.h"

struct topo__tuning topo__tune = {
    .populate_min = (size_t)16 << 20,
    .hugepage_min = (size_t)8 << 20,
    .map_min = (size_t)8 << 20,
    .flood_depth_first = (int64_t)1 << 16,
    .pattern_simd_cap = 0,
    .verify_par_min = (int64_t)1 << 20,
    .verify_piece = (int64_t)256 << 10,
    .verify_member_task = 16384,
    .release_chunk = 4096,
    .split_min = (int64_t)256 << 10,
    .split_eager = 0,
    .lane_min = (int64_t)64 << 10,
    .exec_homes = -1,
    .warm_ranges_max = 16384,
    .stream_copies = -1,
    .fuse_copies = 1,
    .pool_wake_spin_ns = 2000000,
    .pset = {.cap = (int64_t)1 << 24, .sparse = 64, .many = 64},
};
