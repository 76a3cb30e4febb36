#!/usr/bin/env python3
"""tests/bench/pmpi.py BUILD [--rounds R] [--quick] [--out DIR] - latency of
every collective libcollc-mpi.so wraps, through the library and the MPI
library's own, OSU-style and back to back (tests/bench/pmpi_bench.c: both
sides in one process, in interleaved rounds).

Runs, under Open MPI (BUILD/openmpi/) and MPICH (BUILD/mpich/):
  np 2, one node (the fair comparison on this machine: 2 processes on 2
      CPUs, each bound to a core);
  np 4, 8 and 16 on an even layout (COLLC_MPI_NODES n/2,n/2) and an uneven
      one, oversubscribed: 2 CPUs, so every wait is a trip through the
      scheduler, for both sides alike (Open MPI with --oversubscribe
      yields in its progress loop; MPICH 4.0 does not, so its
      oversubscribed runs are skipped: they measure time slices).
The layouts change collc's trees only: the MPI library sees one host.
Writes DIR/pmpi.md (default tests/bench/results/) and DIR/pmpi.csv, and
prints the tables.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
           OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader")
UNEVEN = {4: "1,3", 8: "1,5,2", 16: "2,9,5"}


def build(b, flavour):
    out = os.path.join(b, flavour, "pmpi_bench")
    src = os.path.join(HERE, "pmpi_bench.c")
    if not os.path.exists(out) or \
            os.path.getmtime(out) < os.path.getmtime(src):
        subprocess.run(["mpicc." + flavour, "-O2", "-o", out, src],
                       check=True)
    return out


def run(b, flavour, np, layout, rounds, maxb, extra):
    lib = os.path.join(b, flavour, "libcollc-mpi.so")
    env = {"LD_PRELOAD": lib}
    env.update(extra)
    if layout:
        env["COLLC_MPI_NODES"] = layout
    if flavour == "openmpi":
        cmd = ["mpirun.openmpi", "-np", str(np)]
        cmd += ["--bind-to", "core"] if np <= 2 else ["--oversubscribe"]
        for k, v in env.items():
            cmd += ["-x", "%s=%s" % (k, v)]
    else:
        cmd = ["mpiexec.mpich", "-bind-to", "core", "-np", str(np)]
        for k, v in env.items():
            cmd += ["-genv", k, v]
    cmd += [build(b, flavour), str(rounds), str(maxb)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=ENV,
                       timeout=3600)
    if p.returncode != 0:
        sys.exit("pmpi.py: %s failed:\n%s" % (" ".join(cmd), p.stderr))
    rows = {}
    for line in p.stdout.splitlines():
        f = line.split()
        op, nbytes, way, side = f[0], int(f[1]), f[2], f[3]
        rows.setdefault((op, nbytes, way), {})[side] = \
            [float(x) for x in f[4:]]
    return rows


def size(n):
    for unit, k in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return "%d %s" % (n // k, unit)
    return "%d B" % n


def us(t):
    return "%.2f" % (t * 1e6) if t < 1e-3 else "%.0f" % (t * 1e6)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=os.path.join(HERE, "results"))
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    rounds = 3 if a.quick else a.rounds
    runs = []
    for flavour in ("openmpi", "mpich"):
        if not os.path.exists(os.path.join(b, flavour, "libcollc-mpi.so")):
            continue
        # np 2 both ways: by default the library hands a communicator of
        # 2 to MPI (COLLC_MPI_MIN_SIZE), and with COLLC_MPI_MIN_SIZE=2 it
        # runs collc's plans there (the engine's own cost)
        runs.append((flavour, 2, None, "one node, 2 processes on 2 CPUs, "
                     "default (a communicator of 2 is handed to MPI)", {}))
        runs.append((flavour, 2, None, "one node, 2 processes on 2 CPUs, "
                     "COLLC_MPI_MIN_SIZE=2 (collc's plans)",
                     {"COLLC_MPI_MIN_SIZE": "2"}))
        if flavour == "mpich" or a.quick:
            continue
        for np in (4, 8, 16):
            half = "%d,%d" % (np // 2, np // 2)
            runs.append((flavour, np, half, "even %s, oversubscribed"
                         % half.replace(",", "+"), {}))
            runs.append((flavour, np, UNEVEN[np], "uneven %s, oversubscribed"
                         % UNEVEN[np].replace(",", "+"), {}))
    if not runs:
        sys.exit("pmpi.py: no libcollc-mpi.so built (make mpi-all)")
    os.makedirs(a.out, exist_ok=True)
    md = ["# libcollc-mpi.so beside the MPI library's own collectives", "",
          "Made by `tests/bench/pmpi.py` (`make bench-pmpi`) on %s: %d CPUs, "
          "%s." % (time.strftime("%Y-%m-%d"), os.cpu_count(),
                   os.uname().release),
          "Both sides run in the same processes, in %d interleaved rounds "
          "(tests/bench/pmpi_bench.c): `MPI_` through the library, `PMPI_` "
          "the MPI library's own.  Microseconds per call, median of the "
          "rounds and [min-max]; ratio = collc / MPI (below 1: collc "
          "faster).  osu: a barrier before every call, the call's time "
          "averaged over the processes (OSU's Avg); b2b: calls back to "
          "back.  Bytes per process (per block for scatter, gather, "
          "allgather, reduce-scatter and alltoall), int32 sums for the "
          "reductions; default trees and algorithms; sizes whose buffers "
          "exceed 64 MiB per process at np 16 are skipped.  Oversubscribed "
          "runs (np 4 to 16 on 2 CPUs) give both sides the same CPUs, but "
          "each process waits its turn for a CPU: Open MPI's own "
          "collectives yield while they wait (--oversubscribe), and so does "
          "the library (its default, polling, on an oversubscribed host); "
          "they are not latencies of a machine with a CPU per process."
          % rounds, ""]
    csv = ["flavour,np,layout,setting,op,bytes,way,collc_median,collc_min,"
           "collc_max,mpi_median,mpi_min,mpi_max"]
    for flavour, np, layout, what, extra in runs:
        maxb = 64 << 20 if np >= 16 else 256 << 20
        rows = run(b, flavour, np, layout, rounds, maxb, extra)
        setting = " ".join("%s=%s" % kv for kv in extra.items())
        title = "%s, np %d, %s" % ({"openmpi": "Open MPI 4.1",
                                    "mpich": "MPICH 4.0"}[flavour], np, what)
        md += ["## " + title, "",
               "| op | bytes | osu collc | osu MPI | ratio | b2b collc | "
               "b2b MPI | ratio |",
               "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"]
        for (op, nbytes, way) in sorted(rows):
            if way != "osu":
                continue
            cells = []
            for w in ("osu", "b2b"):
                d = rows[(op, nbytes, w)]
                c, m = d["collc"], d["mpi"]
                mc, mm = statistics.median(c), statistics.median(m)
                cells += ["%s [%s-%s]" % (us(mc), us(min(c)), us(max(c))),
                          "%s [%s-%s]" % (us(mm), us(min(m)), us(max(m))),
                          "%.2f" % (mc / mm)]
                csv.append("%s,%d,%s,%s,%s,%d,%s,%g,%g,%g,%g,%g,%g" % (
                    flavour, np, (layout or "").replace(",", "+"), setting,
                    op, nbytes, w, mc, min(c), max(c), mm, min(m), max(m)))
            md.append("| %s | %s | %s |" % (op, size(nbytes),
                                             " | ".join(cells)))
        md.append("")
        print("\n".join(md[-len(rows) // 2 - 5:]))
        sys.stdout.flush()
    with open(os.path.join(a.out, "pmpi.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(a.out, "pmpi.csv"), "w") as f:
        f.write("\n".join(csv) + "\n")


if __name__ == "__main__":
    main()
