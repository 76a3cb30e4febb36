#!/usr/bin/env python3
"""tests/mpi/pmpi.py BUILD FLAVOUR LAUNCHER... - libcollc-mpi.so under one
MPI library (run by tests/mpi/run.sh for Open MPI and MPICH; LAUNCHER is
the launcher without -np).

- test_collc_mpi (tests/mpi/test_collc_mpi.c: every wrapped collective
  against the MPI library's own) through the library at np 1 to 9, on one
  node and on uneven layouts (COLLC_MPI_NODES), on a compiled machine
  (COLLC_MPI_MACHINE), with every algorithm of every operation and every
  tree shape chosen by the environment; the same program without the
  library (the control run: MPI against itself) and with the library
  turned off (COLLC_MPI_DISABLE: every call handed to MPI).
- COLLC_MPI_MIN_SIZE: the matrix runs with 1 (collc's way on every
  communicator, MPI_COMM_SELF and 2-member ones too) unless a case says
  otherwise; unset, communicators of 1 and 2 members go to MPI.
- COLLC_MPI_REPORT: the layout, the choices and what is handed to MPI.
- Bad settings: exit status 2 and one message naming the variable.

CHECK_QUICK=N (test_collc_mpi) runs one in N of each run's combinations of
datatype x operator x count x root, a different slice at each np; the
slices are chosen to keep both MPI libraries within CI's time on 2 CPUs.

PMPI_QUICK=1 (tests/mpi/run.sh BUILD quick, in make check) runs the main
cases only: the matrix through the library on one node at np 2 and on an
uneven layout at np 4, and a bad setting refused.  make check-long runs
all of this file.
"""
import os
import re
import subprocess
import sys
import tempfile

import algorithms

B, FLAVOUR = os.path.abspath(sys.argv[1]), sys.argv[2]
LAUNCH = sys.argv[3:]
LIB = os.path.join(B, FLAVOUR, "libcollc-mpi.so")
PROG = os.path.join(B, FLAVOUR, "tests", "test_collc_mpi")
COLLC = os.path.join(B, "collc")
HERE = os.path.dirname(os.path.abspath(__file__))
EX = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples")
passed = failed = 0
# MPICH 4.0 (ch4:ucx) spins while it waits, so an oversubscribed job pays
# a time slice per wait: it runs thinner slices
SLOW = FLAVOUR == "mpich"


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL: %s: %s" % (FLAVOUR, what))


def env_flags(env):
    out = []
    for k, v in env.items():
        out += ["-x", "%s=%s" % (k, v)] if FLAVOUR == "openmpi" else \
            ["-genv", k, v]
    return out


def run(np, env, prog=PROG, timeout=900, wrap=(), args=()):
    cmd = LAUNCH + env_flags(env) + ["-np", str(np)] + list(wrap) + [prog] + \
        list(args)
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "", "timed out"
    return p.returncode, p.stdout, p.stderr


def run_mpmd(contexts, prog, timeout=300):
    """One job of several application contexts, each (np, env, wdir),
    every one with its own environment (MPMD: A : B)."""
    cmd = list(LAUNCH)
    for i, (np, env, wdir) in enumerate(contexts):
        if i > 0:
            cmd.append(":")
        for k, v in env.items():
            cmd += ["-x", "%s=%s" % (k, v)] if FLAVOUR == "openmpi" else \
                ["-env", k, v]
        if wdir is not None:
            cmd += ["-wdir", wdir]
        cmd += ["-np", str(np), prog]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        return -1, "", "timed out"
    return p.returncode, p.stdout, p.stderr


def verdict(name, np, rc, out, err, what):
    """A test program's closing line folded into our counts."""
    global passed, failed
    m = re.search(r"%s \(np (\d+)[^)]*\): (\d+) passed, (\d+) failed" %
                  name, out)
    ok = rc == 0 and m is not None and int(m.group(1)) == np and \
        int(m.group(3)) == 0 and int(m.group(2)) > 0
    if m is not None:
        passed += int(m.group(2))
        failed += int(m.group(3))
    check(ok, "%s np %d, %s: exit %d\n%s%s" %
          (name, np, what, rc, out[-1000:],
           "\n".join(l for l in err.splitlines()
                     if "FAIL" in l or "libcollc-mpi" in l)[:2000]
           if not ok else ""))
    print("%s: %s np %d, %s: %s" % (FLAVOUR, name, np, what,
                                    m.group(0) if m else "no verdict"))


def matrix(np, what, env, lib=True, expect_off=False):
    """test_collc_mpi at np, its verdict and counts folded into ours."""
    global passed, failed
    e = dict(env)
    # collc's way on every communicator ("": the library's default)
    e.setdefault("COLLC_MPI_MIN_SIZE", "1")
    if lib:
        e["LD_PRELOAD"] = LIB
        e["EXPECT_LIB"] = "1"
    if expect_off:
        e["EXPECT_OFF"] = "1"
    rc, out, err = run(np, e)
    m = re.search(r"test_collc_mpi \(np (\d+), ([^)]*)\): (\d+) passed, "
                  r"(\d+) failed", out)
    mode = "libcollc-mpi off" if expect_off else \
        "libcollc-mpi" if lib else "MPI alone"
    ok = rc == 0 and m is not None and int(m.group(4)) == 0 and \
        int(m.group(1)) == np and m.group(2) == mode and int(m.group(3)) > 0
    if m is not None:
        passed += int(m.group(3))
        failed += int(m.group(4))
    check(ok, "test_collc_mpi np %d, %s (%s): exit %d\n%s%s" %
          (np, what, mode, rc, out[-1500:],
           "\n".join(l for l in err.splitlines() if "FAIL" in l)[:3000]
           if not ok else ""))
    print("%s: test_collc_mpi np %d, %s: %s" %
          (FLAVOUR, np, what, m.group(0) if m else "no verdict"))


def refused(np, env, pattern, what):
    e = dict(env)
    e["LD_PRELOAD"] = LIB
    rc, out, err = run(np, e, timeout=120)
    said = [l for l in err.splitlines() if l.startswith("libcollc-mpi:")]
    check(rc == 2 and len(said) == 1 and re.search(pattern, said[0]),
          "%s: expected exit 2 and one message matching %r, got exit %d "
          "and %r" % (what, pattern, rc, said))


# the layouts: an uneven one for each np from 3 up
LAYOUT = {3: "2,1", 4: "1,3", 5: "3,2", 6: "1,2,3", 7: "4,1,2", 8: "3,3,2",
          9: "2,4,1,2"}


def slice_for(np):
    if np <= 2:
        return "2"
    return str((8 if np <= 4 else 16) * (16 if SLOW else 1))


if os.environ.get("PMPI_QUICK", "") not in ("", "0"):
    matrix(2, "one node", {"CHECK_QUICK": slice_for(2)})
    matrix(4, "nodes " + LAYOUT[4],
           {"CHECK_QUICK": slice_for(4), "COLLC_MPI_NODES": LAYOUT[4]})
    refused(2, {"COLLC_MPI_TREE": "oak"},
            r"^libcollc-mpi: COLLC_MPI_TREE=oak: ", "an unknown tree shape")
    print("%s: pmpi (quick): %d passed, %d failed" %
          (FLAVOUR, passed, failed))
    sys.exit(1 if failed else 0)

# 1. the matrix through the library at np 1 to 9
for np in range(1, 10):
    env = {"CHECK_QUICK": slice_for(np)}
    what = "one node"
    if np in LAYOUT:
        env["COLLC_MPI_NODES"] = LAYOUT[np]
        what = "nodes " + LAYOUT[np]
    matrix(np, what, env)
# both ways of waiting, whatever the host
matrix(3, "COLLC_MPI_WAIT=block", {"CHECK_QUICK": "64" if SLOW else "16",
                                   "COLLC_MPI_WAIT": "block",
                                   "COLLC_MPI_NODES": "2,1"})
matrix(2, "COLLC_MPI_WAIT=poll", {"CHECK_QUICK": "16",
                                  "COLLC_MPI_WAIT": "poll"})
# libtopo's own segments (64 KiB from 256 KiB up), and small ones
matrix(3, "COLLC_MPI_SEGMENT=0", {"CHECK_QUICK": "32" if SLOW else "16",
                                  "COLLC_MPI_SEGMENT": "0",
                                  "COLLC_MPI_NODES": "1,2"})
matrix(2, "COLLC_MPI_SEGMENT=64", {"CHECK_QUICK": "16",
                                   "COLLC_MPI_SEGMENT": "64"})
# one node of 4 found by MPI_Comm_split_type
matrix(4, "one node, from MPI", {"CHECK_QUICK": "32" if SLOW else "16"})

# Host names: one host plays two by giving each process a UTS namespace of
# its own (unshare --uts, root only) named collc-h0 for even world ranks and
# collc-h1 for odd ones.  MPI_Comm_split_type still sees one node of 5; the
# library must split it by host name: ranks 0, 2, 4 and 1, 3, tasks in node
# order (a permutation of the world ranks).
WRAP = """#!/bin/sh
if [ -z "${COLLC_TEST_HOST:-}" ]; then
	r=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-0}}
	COLLC_TEST_HOST=collc-h$((r % 2)) exec unshare --uts "$0" "$@"
fi
hostname "$COLLC_TEST_HOST" && exec "$@"
"""
if subprocess.run(["unshare", "--uts", "true"],
                  capture_output=True).returncode != 0:
    print("%s: skipped: host names (unshare --uts is not permitted here)"
          % FLAVOUR)
else:
    with tempfile.TemporaryDirectory() as tmp:
        wrap = os.path.join(tmp, "host.sh")
        with open(wrap, "w") as f:
            f.write(WRAP)
        os.chmod(wrap, 0o755)
        rc, out, err = run(5, {"LD_PRELOAD": LIB, "EXPECT_LIB": "1",
                               "COLLC_MPI_REPORT": "1",
                               "COLLC_MPI_MIN_SIZE": "1",
                               "CHECK_QUICK": "64" if SLOW else "32"},
                           wrap=[wrap])
        m = re.search(r"test_collc_mpi \(np 5, libcollc-mpi\): (\d+) passed, "
                      r"(\d+) failed", out)
        if m is not None:
            passed += int(m.group(1))
            failed += int(m.group(2))
        check(rc == 0 and m is not None and m.group(2) == "0",
              "host names: exit %d: %s%s" % (rc, out[-800:], err[-1500:]))
        check("libcollc-mpi: 5 processes on 2 nodes (3+2), from "
              "MPI_Comm_split_type and host names" in err.splitlines(),
              "host names: the layout said: %s" %
              [l for l in err.splitlines() if "processes on" in l])
        print("%s: test_collc_mpi np 5, two host names: %s" %
              (FLAVOUR, m.group(0) if m else "no verdict"))

# the default COLLC_MPI_MIN_SIZE (3): at np 2 every call goes to MPI; at
# np 3 the world takes collc's way, the halves (1 and 2 members) and
# MPI_COMM_SELF go to MPI; and a minimum above the world's size
matrix(2, "COLLC_MPI_MIN_SIZE unset", {"CHECK_QUICK": "16",
                                       "COLLC_MPI_MIN_SIZE": ""})
matrix(3, "COLLC_MPI_MIN_SIZE unset", {"CHECK_QUICK": "64" if SLOW else "16",
                                       "COLLC_MPI_MIN_SIZE": "",
                                       "COLLC_MPI_NODES": "2,1"})
matrix(3, "COLLC_MPI_MIN_SIZE=4", {"CHECK_QUICK": "64" if SLOW else "16",
                                   "COLLC_MPI_MIN_SIZE": "4"})

# 2. the control: the same program without the library, and turned off
for np in (2,) if SLOW else (2, 3):
    matrix(np, "control", {"CHECK_QUICK": "16"}, lib=False)
matrix(3, "COLLC_MPI_DISABLE", {"CHECK_QUICK": "16", "COLLC_MPI_DISABLE": "1"},
       expect_off=True)

# 3. every algorithm of every operation, and the tree shapes
# (the operations of more than one algorithm: bcast's one runs everywhere)
OPS = algorithms.operations(B)
ALGS = {algorithms.mpi_name(o["op"]): [a["name"] for a in o["algorithms"]]
        for o in OPS if len(o["algorithms"]) > 1}
HIER = {(algorithms.mpi_name(o["op"]), a["name"]) for o in OPS
        for a in o["algorithms"] if a["hierarchical_tree"]}
SHAPES = ["physical", "binomial", "chain", "kary:3", "hierarchical"]
for i, np in enumerate((5, 6, 7, 3, 4)):
    env = {"CHECK_QUICK": "256" if SLOW else "32",
           "COLLC_MPI_NODES": LAYOUT[np], "COLLC_MPI_TREE": SHAPES[i]}
    for op, algs in ALGS.items():
        env["COLLC_MPI_%s_ALGORITHM" % op] = algs[i % len(algs)]
        # the hierarchical reduce needs the hierarchical tree
        if (op, algs[i % len(algs)]) in HIER:
            env["COLLC_MPI_%s_TREE" % op] = "hierarchical"
    # one operation on a tree of its own
    env["COLLC_MPI_BCAST_TREE"] = SHAPES[(i + 1) % len(SHAPES)]
    matrix(np, "algorithms #%d, tree %s" % (i + 1, SHAPES[i]), env)

# 4. a compiled machine: tiny.json's 8 tasks on 4 nodes
with tempfile.TemporaryDirectory() as tmp:
    routes = os.path.join(tmp, "tiny-routes.json")
    p = subprocess.run([COLLC, "compile", os.path.join(EX, "tiny.json"),
                        "-o", routes], capture_output=True, text=True)
    check(p.returncode == 0, "collc compile tiny.json: %s" % p.stderr)
    # MPICH at np 8: the slice of the other runs of np 5 and up (at 64 it
    # took 35 s of CI's time)
    matrix(8, "COLLC_MPI_MACHINE tiny", {"CHECK_QUICK": "256" if SLOW else "32",
                                        "COLLC_MPI_MACHINE": routes})
    refused(3, {"COLLC_MPI_MACHINE": routes},
            r"^libcollc-mpi: COLLC_MPI_MACHINE: .*tiny-routes\.json: the "
            r"machine has 8 tasks and the job 3 processes; run it with "
            r"mpirun -np 8", "a compiled machine of another size")
    refused(2, {"COLLC_MPI_MACHINE": routes, "COLLC_MPI_NODES": "1,1"},
            r"COLLC_MPI_MACHINE and COLLC_MPI_NODES are both set",
            "both layouts")
    missing = os.path.join(tmp, "none.json")
    refused(2, {"COLLC_MPI_MACHINE": missing},
            r"^libcollc-mpi: COLLC_MPI_MACHINE: .*none\.json",
            "a missing compile output")

# 5. bad settings
refused(2, {"COLLC_MPI_NODES": "1,x"},
        r"COLLC_MPI_NODES=1,x: at character 3: expected a list of "
        r"processes per node", "a layout that does not parse")
refused(2, {"COLLC_MPI_NODES": "1,0,1"}, r"COLLC_MPI_NODES=1,0,1: at "
        r"character 3", "a node of no processes")
refused(3, {"COLLC_MPI_NODES": "1,1"},
        r"COLLC_MPI_NODES=1,1: the layout holds 2 processes and the job 3",
        "a layout of another size")
refused(2, {"COLLC_MPI_TREE": "oak"}, r"^libcollc-mpi: COLLC_MPI_TREE=oak: ",
        "an unknown tree shape")
refused(2, {"COLLC_MPI_GATHER_TREE": "kary:0"},
        r"^libcollc-mpi: COLLC_MPI_GATHER_TREE=kary:0: ", "a bad k-ary tree")
refused(2, {"COLLC_MPI_ALLREDUCE_ALGORITHM": "telepathy"},
        r"^libcollc-mpi: COLLC_MPI_ALLREDUCE_ALGORITHM=telepathy: .*",
        "an unknown algorithm")

refused(2, {"COLLC_MPI_SEGMENT": "1001"},
        r"^libcollc-mpi: COLLC_MPI_SEGMENT=1001: expected a number of bytes, "
        r"a multiple of 8", "a segment size not a multiple of 8")
refused(2, {"COLLC_MPI_SEGMENT": "64K"},
        r"^libcollc-mpi: COLLC_MPI_SEGMENT=64K: ", "a segment with a suffix")
refused(2, {"COLLC_MPI_MIN_SIZE": "0"},
        r"^libcollc-mpi: COLLC_MPI_MIN_SIZE=0: expected a number of members "
        r"from 1 to \d+$", "a minimum size of 0")
refused(2, {"COLLC_MPI_MIN_SIZE": "2x"},
        r"^libcollc-mpi: COLLC_MPI_MIN_SIZE=2x: ", "a minimum size with a suffix")
refused(2, {"COLLC_MPI_WAIT": "spin"},
        r"^libcollc-mpi: COLLC_MPI_WAIT=spin: expected poll or block$",
        "an unknown way of waiting")
refused(2, {"COLLC_MPI_TREE": "binomial",
            "COLLC_MPI_ALLREDUCE_ALGORITHM": "hierarchical"},
        r"^libcollc-mpi: COLLC_MPI_ALLREDUCE_ALGORITHM=hierarchical needs "
        r"the hierarchical tree, and the tree of MPI_Allreduce is binomial",
        "the hierarchical reduce over another tree")

# 6. the report
e = {"LD_PRELOAD": LIB, "COLLC_MPI_NODES": "2,1", "COLLC_MPI_REPORT": "1",
     "CHECK_QUICK": "64", "COLLC_MPI_MIN_SIZE": "1"}
rc, out, err = run(3, e)
lines = [l for l in err.splitlines() if l.startswith("libcollc-mpi:")]
check(rc == 0, "the report run: exit %d" % rc)
for want in [
        r"^libcollc-mpi: 3 processes on 2 nodes \(2\+1\), from "
        r"COLLC_MPI_NODES$",
        r"^libcollc-mpi: MPI_Allreduce on a communicator of 3 processes "
        r"\(2 nodes\): tree hierarchical, algorithm tree$",
        r"^libcollc-mpi: MPI_Barrier on a communicator of 1 process "
        r"\(1 node\): tree hierarchical, algorithm dissemination$",
        r"^libcollc-mpi: world rank 0: MPI_Reduce handed to the MPI library: "
        r"a user-defined or logical operator$",
        r"^libcollc-mpi: world rank 2: MPI_Reduce handed to the MPI "
        r"library: MPI_MINLOC or MPI_MAXLOC$",
        r"^libcollc-mpi: world rank 1: MPI_Allreduce handed to the MPI "
        r"library: an intercommunicator$",
        r"^libcollc-mpi: world rank 0: MPI_Ibcast handed to the MPI library: "
        r"a nonblocking collective \(libcollc-mpi runs the blocking ones\)$",
        r"^libcollc-mpi: world rank 0: MPIX?_Bcast_init handed to the MPI "
        r"library: a persistent collective \(libcollc-mpi runs the blocking "
        r"ones\)$",
        r"^libcollc-mpi: world rank 0: \d+ collectives over collc's plans, "
        r"\d+ handed to the MPI library$"]:
    check(any(re.search(want, l) for l in lines),
          "the report has no line matching %r:\n%s" %
          (want, "\n".join(lines[:40])))
# the layout is said once, by world rank 0
check(sum("processes on" in l for l in lines) == 1,
      "the layout is said once")
e = {"LD_PRELOAD": LIB, "COLLC_MPI_DISABLE": "1", "COLLC_MPI_REPORT": "1",
     "CHECK_QUICK": "64", "EXPECT_OFF": "1"}
rc, out, err = run(2, e)
check(rc == 0 and "libcollc-mpi: off (COLLC_MPI_DISABLE): every collective "
      "goes to the MPI library" in err, "the report when turned off")
# the default minimum: world rank 0 is alone in its half (and in
# MPI_COMM_SELF), and says so once, at its first call there (a barrier)
e = {"LD_PRELOAD": LIB, "COLLC_MPI_NODES": "2,1", "COLLC_MPI_REPORT": "1",
     "CHECK_QUICK": "64"}
rc, out, err = run(3, e)
small = [l for l in err.splitlines()
         if "world rank 0" in l and "COLLC_MPI_MIN_SIZE" in l]
check(rc == 0 and small == [
    "libcollc-mpi: world rank 0: MPI_Barrier handed to the MPI library: a "
    "communicator of fewer members than COLLC_MPI_MIN_SIZE (3 unless set: "
    "over 1 or 2 members every tree is the same, MPI's own)"],
      "the report of a communicator below the minimum: exit %d, %r" %
      (rc, small))

# 7. libcollc-mpi(7)'s example, whose output the page and the README show
rc, out, err = run(5, {"LD_PRELOAD": LIB, "COLLC_MPI_NODES": "3,2",
                       "COLLC_MPI_REPORT": "1"},
                   prog=os.path.join(B, FLAVOUR, "tests", "mpi-allreduce"))
got = sorted(l for l in (out + err).splitlines()
             if l.startswith("libcollc-mpi:") or "processes:" in l)
with open(os.path.join(HERE, "..", "..", "man",
                       "libcollc-mpi.7")) as f:
    page = f.read()
shown = page[page.index("COLLC_MPI_REPORT=1 ./mpi-allreduce"):]
shown = shown[shown.index("\n") + 1:shown.index(".Ed")]
want = sorted(l for l in shown.splitlines() if l)
check(rc == 0 and got == want,
      "examples/mpi-allreduce.c: the output differs from libcollc-mpi(7)'s:"
      "\n%s\n---\n%s" % ("\n".join(got), "\n".join(want)))

# 8. production jobs (libcollc-mpi(7): reproducible results, threads,
# communicators, one configuration for the job)


def tprog(name):
    return os.path.join(B, FLAVOUR, "tests", name)


# 8a. floating-point reductions: the same bits over 1,000 calls with one
# process late in turn, every reduction algorithm (five runs per np, each
# a reduce, an allreduce and a reduce-scatter algorithm, so that every
# algorithm of each runs), and the same bits from one run to the next
# (one of the five twice)
REDUCTIONS = {op: ALGS[op]
              for op in ("REDUCE", "ALLREDUCE", "REDUCE_SCATTER_BLOCK")}
# (np 2-9 under both MPIs: MPICH spins when oversubscribed, but these
# runs take seconds)
for np in range(2, 10):
    for k in range(5):
        env = {"LD_PRELOAD": LIB, "EXPECT_LIB": "1",
               "COLLC_MPI_MIN_SIZE": "1"}
        algs = []
        for op, names in REDUCTIONS.items():
            env["COLLC_MPI_%s_ALGORITHM" % op] = names[k % len(names)]
            algs.append(names[k % len(names)])
        if np in LAYOUT:
            env["COLLC_MPI_NODES"] = LAYOUT[np]
        runs = []
        for rep in range(2 if k == np % 5 else 1):
            rc, out, err = run(np, env, prog=tprog("test_repro"))
            verdict("test_repro", np, rc, out, err, "/".join(algs))
            runs.append(sorted(l for l in out.splitlines()
                               if l.startswith("repro ")))
        if len(runs) == 2:
            check(runs[0] == runs[1] and len(runs[0]) == 9,
                  "test_repro np %d, %s: two runs gave other bits:\n%s\n"
                  "---\n%s" % (np, "/".join(algs), "\n".join(runs[0]),
                                "\n".join(runs[1])))

# 8b. MPI_THREAD_MULTIPLE: threads on communicators of their own
for np in ((2, 3) if SLOW else (2, 3, 4)):
    rc, out, err = run(np, {"LD_PRELOAD": LIB, "EXPECT_LIB": "1",
                            "COLLC_MPI_MIN_SIZE": "1"},
                       prog=tprog("test_threads"), timeout=600)
    verdict("test_threads", np, rc, out, err, "4 threads")

# 8c. communicators by the thousand
for np in (1, 2, 3, 4, 5):
    quick = SLOW and np > 2
    if SLOW and np > 3:
        continue
    rc, out, err = run(np, {"LD_PRELOAD": LIB, "EXPECT_LIB": "1",
                            "COLLC_MPI_MIN_SIZE": "1"},
                       prog=tprog("test_comms"), timeout=600,
                       args=["quick"] if quick else [])
    verdict("test_comms", np, rc, out, err, "quick" if quick else "whole")

# 8d. processes that pass different arguments: MPI_ERR_ARG everywhere,
# one message per call from the communicator's rank 0
for np in ((2, 3) if SLOW else (2, 3, 4)):
    rc, out, err = run(np, {"LD_PRELOAD": LIB, "COLLC_MPI_MIN_SIZE": "1"},
                       prog=tprog("test_mismatch"), timeout=120)
    verdict("test_mismatch", np, rc, out, err, "mismatched arguments")
    said = [l for l in err.splitlines() if l.startswith("libcollc-mpi:")]
    pre = (r"^libcollc-mpi: %s on a communicator of %d processes: the "
           r"processes passed different arguments \(MPI requires the same "
           r"amount of data, root, datatype and operator on every "
           r"process\): rank %d of the communicator differs from rank 0 ")
    check(len(said) == 2 and
          re.search(pre % ("MPI_Bcast", np, np - 1) +
                    r"\(16 bytes, root 0\)$", said[0]) and
          re.search(pre % ("MPI_Reduce", np, np - 1) +
                    r"\(4 bytes, root 0, int32 sum\)$", said[1]),
          "test_mismatch np %d: the messages: %r" % (np, said))

# 8e. settings that differ between the processes: exit 2 and one message
# naming the variable, world rank 0's value, the ranks that differ and
# the first one's value


def differs(contexts, pattern, what, prog=None):
    rc, out, err = run_mpmd(contexts, prog or tprog("mpi-allreduce"))
    said = [l for l in err.splitlines() if l.startswith("libcollc-mpi:")]
    check(rc == 2 and len(said) == 1 and re.search(pattern, said[0]),
          "%s: expected exit 2 and one message matching %r, got exit %d "
          "and %r" % (what, pattern, rc, said))


L0 = {"LD_PRELOAD": LIB}
differs([(1, dict(L0, COLLC_MPI_TREE="chain"), None),
         (2, dict(L0, COLLC_MPI_TREE="binomial"), None)],
        r"^libcollc-mpi: COLLC_MPI_TREE differs between the processes "
        r"\(every process must see the same settings\): world rank 0 has "
        r"\"chain\", world ranks 1-2 another value \(world rank 1: "
        r"\"binomial\"\)$", "COLLC_MPI_TREE differs")
differs([(2, dict(L0), None), (1, dict(L0, COLLC_MPI_DISABLE="1"), None)],
        r"^libcollc-mpi: COLLC_MPI_DISABLE differs between the processes "
        r".*: world rank 0 has it unset, world rank 2 another value "
        r"\(world rank 2: \"1\"\)$", "one process disabled")
differs([(1, dict(L0, COLLC_MPI_MIN_SIZE="2"), None),
         (1, dict(L0), None),
         (1, dict(L0, COLLC_MPI_MIN_SIZE="2"), None),
         (1, dict(L0, COLLC_MPI_MIN_SIZE="4"), None)],
        r"^libcollc-mpi: COLLC_MPI_MIN_SIZE differs .*: world rank 0 has "
        r"\"2\", world ranks 1, 3 another value \(world rank 1: it "
        r"unset\)$", "COLLC_MPI_MIN_SIZE differs")
differs([(2, dict(L0, COLLC_MPI_REDUCE_ALGORITHM="tree"), None),
         (2, dict(L0, COLLC_MPI_REDUCE_ALGORITHM="direct"), None)],
        r"^libcollc-mpi: COLLC_MPI_REDUCE_ALGORITHM differs .*: world rank "
        r"0 has \"tree\", world ranks 2-3 another value", "an algorithm "
        r"differs")
# COLLC_MPI_WAIT is each process's own: poll here, block there runs
rc, out, err = run_mpmd([(1, dict(L0, COLLC_MPI_WAIT="poll"), None),
                         (2, dict(L0, COLLC_MPI_WAIT="block"), None)],
                        tprog("mpi-allreduce"))
check(rc == 0 and "3 processes: allreduce" in out,
      "COLLC_MPI_WAIT poll and block in one job: exit %d, %r" % (rc, out))
# the same name, another file: the machine's contents are agreed on
with tempfile.TemporaryDirectory() as tmp:
    # a machine of 4 tasks, compiled with two sets of trees: the same
    # machine, two files (a job of 8 under Open MPI 4.1 sometimes loses
    # its launcher in the abort's help message)
    small = os.path.join(tmp, "small.json")
    with open(small, "w") as f:
        f.write('{"nodes": 2, "tasks_per_node": 2, "network": '
                '{"type": "kary", "fanout": 2}}')
    for d in ("a", "b"):
        os.mkdir(os.path.join(tmp, d))
    subprocess.run([COLLC, "compile", small, "-o",
                    os.path.join(tmp, "a", "routes.json")], check=True)
    subprocess.run([COLLC, "compile", small, "-t", "binomial", "-o",
                    os.path.join(tmp, "b", "routes.json")], check=True)
    e = dict(L0, COLLC_MPI_MACHINE="routes.json")
    differs([(2, e, os.path.join(tmp, "a")), (2, e, os.path.join(tmp, "b"))],
            r"^libcollc-mpi: COLLC_MPI_MACHINE's file differs between the "
            r"processes \(every process must read the same file\): world "
            r"rank 0 reads routes.json \(its own contents\); world ranks "
            r"2-3 read otherwise \(world rank 2: a file of other "
            r"contents\)$", "the machine file differs")
    # what is read is bounded: a device, a file over 256 MiB
    big = os.path.join(tmp, "big.json")
    with open(big, "wb") as f:
        f.truncate((256 << 20) + 1)
    refused(2, {"COLLC_MPI_MACHINE": big},
            r"^libcollc-mpi: COLLC_MPI_MACHINE: .*big\.json: 268435457 "
            r"bytes; libcollc-mpi reads at most 256 MiB", "a file too large")
refused(2, {"COLLC_MPI_MACHINE": "/dev/zero"},
        r"^libcollc-mpi: COLLC_MPI_MACHINE: /dev/zero: not a regular file",
        "a device as the machine")
refused(2, {"COLLC_MPI_NODES": "4294967299"},
        r"^libcollc-mpi: COLLC_MPI_NODES=4294967299: at character 1: more "
        r"processes on a node than libcollc-mpi counts \(at most "
        r"2147483647\)$", "a count too large")

# 8f. mpi4py at its default thread level (Debian's is Open MPI's)
PY = "/usr/bin/python3"
if FLAVOUR == "openmpi" and subprocess.run(
        [PY, "-c", "import mpi4py.MPI"], capture_output=True).returncode == 0:
    for np, extra in ((1, {}), (2, {}), (3, {}), (5, {}),
                      (3, {"COLLC_MPI_NODES": "2,1"})):
        env = dict(L0, COLLC_MPI_MIN_SIZE="1", **extra)
        rc, out, err = run(np, env, prog=PY,
                           args=[os.path.join(HERE, "mpi4py_check.py")])
        verdict("mpi4py_check", np, rc, out, err,
                "mpi4py" + (" nodes " + extra["COLLC_MPI_NODES"]
                            if extra else ""))
elif FLAVOUR == "openmpi":
    check(False, "mpi4py is not installed for %s (apt-get install "
          "python3-mpi4py)" % PY)

print("%s: pmpi: %d passed, %d failed" % (FLAVOUR, passed, failed))
sys.exit(1 if failed else 0)
