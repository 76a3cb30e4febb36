#!/usr/bin/env python3
"""tests/mpi/cli.py BUILD FLAVOUR LAUNCHER... - collrun-mpi's command line
under one MPI library (run by tests/mpi/run.sh for Open MPI and MPICH).

collrun-mpi must do what collrun does, with MPI rank r hosting task r:

- The CLI matrix at np 2 to 8: on a machine of np tasks (uneven nodes, two
  endpoints per task), every operation x algorithm (each size of job runs
  its share of them, and together the sizes run them all), over the
  default tree and, for some, a binomial one or another root, a type or an
  operator: --json must equal collrun's in everything but the times, the
  worker count and the processes, and verify.
- Faults: a hand-edited route table that loses a member, and one that
  delivers twice: the same errors and exit status 1 as collrun.
- The timeout: exit 1, a "timeout" error, and nothing but the report on
  standard output (no message of the run left for MPI to warn of).
- Memory: each process's check counts its own members' buffers (a run
  collrun refuses under ulimit -d runs across 4 processes).
- --predict and --iterations, --fresh, --verify last: the prediction is
  rank 0's and equals collrun's output byte for byte; iterations are
  counted, and the report says which were verified.
- Refusals, exit 2 with one message (rank 0's): a job whose size is not
  the machine's task count, a missing file, a bad option; and --help.
"""
import json
import os
import re
import resource
import subprocess
import sys
import tempfile

import algorithms

B, FLAVOUR = sys.argv[1], sys.argv[2]
LAUNCH = sys.argv[3:]
COLLRUN = os.path.join(B, "collrun")
COLLC = os.path.join(B, "collc")
MPIRUN = os.path.join(B, FLAVOUR, "collrun-mpi")
HERE = os.path.dirname(os.path.abspath(__file__))
EX = os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples")
passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print(f"FAIL ({FLAVOUR}): {what}", flush=True)


def limit_data(kib):
    """A preexec_fn: RLIMIT_DATA (ulimit -d) of kib KiB."""
    if kib is None:
        return None
    return lambda: resource.setrlimit(
        resource.RLIMIT_DATA,
        (kib * 1024, resource.getrlimit(resource.RLIMIT_DATA)[1]))


def mpi(np, args, timeout=300, data_kib=None):
    return subprocess.run(LAUNCH + [str(np), MPIRUN] + args,
                          capture_output=True, text=True, timeout=timeout,
                          preexec_fn=limit_data(data_kib))


def local(args, data_kib=None):
    return subprocess.run([COLLRUN] + args, capture_output=True, text=True,
                          timeout=300, preexec_fn=limit_data(data_kib))


def own_lines(stderr):
    """collrun-mpi's own messages (the launcher adds its own)."""
    return [l for l in stderr.splitlines() if l.startswith("collrun-mpi: ")]


def machine(np, path):
    """np tasks over nodes of 1, 2, 3, ... tasks, two endpoints each."""
    tasks, k = [], 1
    while sum(tasks) < np:
        tasks.append(min(k, np - sum(tasks)))
        k += 1
    with open(path, "w") as f:
        json.dump({"name": f"mpi{np}", "nodes": len(tasks),
                   "tasks_per_node": tasks, "endpoints_per_task": 2,
                   "network": {"type": "kary", "fanout": 2,
                               "physical_root": 0}}, f)


# Every operation x algorithm, and those that need the hierarchical tree.
OPS = algorithms.operations(B)
ALGS = [(o["op"], a["name"]) for o in OPS for a in o["algorithms"]]
HIER = {(o["op"], a["name"]) for o in OPS for a in o["algorithms"]
        if a["hierarchical_tree"]}
REDS = [["--type", "double", "--op", "sum"], ["--type", "uint8", "--op", "bxor"],
        ["--type", "int64", "--op", "min"], ["--type", "float", "--op", "max"]]
# Keys that differ by design: times, and who ran it.
VARY = {"seconds", "threads", "processes"}


def compare(label, np, args):
    a = mpi(np, args + ["--json"])
    b = local(args + ["--json", "--threads", "2"])
    check(a.returncode == b.returncode,
          f"{label}: exit {a.returncode}, collrun {b.returncode}: "
          f"{a.stderr.strip()[-400:]}")
    try:
        ja, jb = json.loads(a.stdout), json.loads(b.stdout)
    except ValueError:
        check(False, f"{label}: no JSON: {a.stdout[:200]!r} "
              f"{a.stderr.strip()[-400:]}")
        return None
    check(ja.get("processes") == np,
          f"{label}: processes {ja.get('processes')}, want {np}")
    for k in sorted(set(ja) | set(jb)):
        if k in VARY:
            continue
        check(ja.get(k) == jb.get(k),
              f"{label}: {k}: {ja.get(k)!r}, collrun {jb.get(k)!r}")
    return ja


def test_matrix(tmp):
    for np in range(2, 9):
        path = os.path.join(tmp, f"m{np}.json")
        machine(np, path)
        # np's share: every 7th combination from np - 2, so that np 2..8
        # together run them all
        for i in range(np - 2, len(ALGS), 7):
            op, alg = ALGS[i]
            args = [op, "--algorithm", alg]
            if op != "barrier":
                args += ["--bytes", ["8", "1000", "70000"][i % 3]]
            if (op, alg) in HIER:
                args += ["-t", "hierarchical"]
            elif i % 2:
                args += ["-t", "binomial"]
            if op in ("reduce", "allreduce", "reduce-scatter"):
                args += REDS[i % len(REDS)]
            if op in ("bcast", "scatter", "gather", "reduce") and i % 2 == 0:
                args += ["--root-rank", str(2 * np - 1)]
            j = compare(f"np {np} {' '.join(args)}", np, args + [path])
            if j is not None:
                check(j.get("verified") is True,
                      f"np {np} {' '.join(args)}: not verified")
        # the defaults of bcast, from the last member, with 3 iterations
        j = compare(f"np {np} bcast", np,
                    ["bcast", "--iterations", "3", path])
        if j is not None:
            check(j.get("iterations") == 3 and j.get("verified") is True,
                  f"np {np} bcast: {j.get('iterations')} iterations")


def edit_routes(tmp, name, change):
    """A route table of the 6-task machine with one row changed."""
    src, out = os.path.join(tmp, "m6.json"), os.path.join(tmp, name)
    r = subprocess.run([COLLC, "compile", src, "-t", "physical", "--routes",
                        "full", "-o", out + ".full"], capture_output=True,
                       text=True)
    check(r.returncode == 0, f"compile: {r.stderr}")
    d = json.load(open(out + ".full"))
    t = d["groups"][0]["trees"][0]
    change(t)
    json.dump(d, open(out, "w"))
    return out


def test_faults(tmp):
    def lose(t):
        # the first row that forwards to someone forwards to nobody
        row = next(r for r in t["routes"] if r[2])
        row[2] = []

    def twice(t):
        row = next(r for r in t["routes"] if r[2])
        row[2] = row[2] + row[2][:1]

    for name, change, kind in (("lose.json", lose, "undelivered"),
                               ("twice.json", twice, "duplicated")):
        path = edit_routes(tmp, name, change)
        j = compare(f"bcast over {name}", 6, ["bcast", path])
        check(j is not None and j.get("verified") is False and
              any(e["kind"] == kind for e in j.get("errors", [])),
              f"bcast over {name}: no {kind} error: {j}")
        a = mpi(6, ["bcast", path])
        b = local(["bcast", path, "--threads", "2"])
        strip = lambda s: [l for l in s.splitlines()
                           if not l.startswith(("seconds:", "threads:",
                                                "processes:"))]
        check(a.returncode == 1 and strip(a.stdout) == strip(b.stdout),
              f"bcast over {name}: text report differs:\n{a.stdout}\n"
              f"collrun:\n{b.stdout}")


def test_timeout_predict(tmp):
    path = os.path.join(tmp, "m4.json")
    # The timeout counts from the start of the process, and 4 ranks
    # starting on 2 CPUs beside other work may still be loading or
    # planning at the deadline: the run then ends before its first
    # iteration, with one line on stderr naming the phase and no report
    # (collrun(1)).  Either ending is the deadline honoured; which one
    # depends on the host's load, so both pass.
    a = mpi(4, ["allreduce", "--algorithm", "ring", "--bytes", "64K",
                "--iterations", "2147483647", "--timeout", "2", "--json",
                path])
    check(a.returncode == 1, f"timeout: exit {a.returncode}: {a.stderr}")
    early = re.search(r"the run did not finish within 2 s "
                      r"\((loading|planning)", a.stderr)
    if a.stdout.strip() == "" and early:
        check(True, "")
    else:
        try:
            j = json.loads(a.stdout)
            check(j["verified"] is False
                  and j["errors"][0]["kind"] == "timeout"
                  and "within 2 s" in j["errors"][0]["detail"],
                  f"timeout: {j.get('errors')}")
        except (ValueError, KeyError, IndexError) as e:
            check(False,
                  f"timeout: {e}: {a.stdout[:300]} {a.stderr[-600:]}")
    for extra in (["--predict"], ["--predict", "--json"]):
        args = ["reduce", "--bytes", "64K", path] + extra
        a, b = mpi(4, args), local(args)
        check(a.returncode == 0 and a.stdout == b.stdout and b.stdout,
              f"{' '.join(extra)}: differs from collrun's:\n{a.stdout}\n"
              f"{b.stdout}\n{a.stderr}")
    a = mpi(4, ["gather", "--fresh", "--iterations", "3", "--json", path])
    try:
        j = json.loads(a.stdout)
        check(a.returncode == 0 and j["verified"] and j["iterations"] == 3
              and j["fresh"], f"--fresh: {a.stdout[:300]}")
    except ValueError:
        check(False, f"--fresh: {a.stdout[:300]} {a.stderr[-300:]}")
    # --verify last: every process verifies the last iteration only, and
    # the report says so
    a = mpi(4, ["reduce", "--verify", "last", "--iterations", "4",
                "--bytes", "4K", "--json", path])
    try:
        j = json.loads(a.stdout)
        check(a.returncode == 0 and j["verified"] and j["iterations"] == 4
              and j["verify"] == "last", f"--verify last: {a.stdout[:300]}")
    except ValueError:
        check(False, f"--verify last: {a.stdout[:300]} {a.stderr[-300:]}")


def test_refusals(tmp):
    path = os.path.join(tmp, "m4.json")
    a = mpi(3, ["bcast", path])
    want = (f"collrun-mpi: {path}: the machine has 4 tasks and the job 3 "
            f"processes; run it with mpirun -np 4 (rank r hosts task r)")
    check(a.returncode == 2 and own_lines(a.stderr) == [want],
          f"size mismatch: exit {a.returncode}: {a.stderr}")
    check(a.stdout == "", f"size mismatch: output {a.stdout!r}")
    a = mpi(2, ["bcast", os.path.join(tmp, "none.json")])
    lines = own_lines(a.stderr)
    check(a.returncode == 2 and len(lines) == 1 and "none.json" in lines[0],
          f"missing file: exit {a.returncode}: {a.stderr}")
    a = mpi(2, ["bcast", "--bytes", "lots", path])
    lines = own_lines(a.stderr)
    check(a.returncode == 2 and len(lines) == 1 and "--bytes" in lines[0],
          f"bad option: exit {a.returncode}: {a.stderr}")
    a, b = mpi(2, ["--help"]), local(["--help"])
    check(a.returncode == 0 and a.stdout == b.stdout and a.stdout,
          f"--help differs: {a.stdout[:200]!r}")


def test_memory(tmp):
    """The memory check of collrun-mpi counts the buffers of each process's
    own members: an alltoall of 8 MiB blocks over m4.json's 8 members
    needs 1 GiB of buffers in one process (collrun refuses it under a
    683 MiB data limit) and 256 MiB in each of collrun-mpi's 4."""
    path = os.path.join(tmp, "m4.json")
    args = ["alltoall", "--bytes", "8M", "--json", path]
    b = local(args, data_kib=700000)
    check(b.returncode == 2 and "data size limit" in b.stderr,
          f"memory: collrun under ulimit -d: exit {b.returncode}: "
          f"{b.stderr.strip()[-300:]}")
    a = mpi(4, args, data_kib=700000)
    try:
        ok = a.returncode == 0 and json.loads(a.stdout)["verified"] is True
    except (ValueError, KeyError):
        ok = False
    check(ok, f"memory: collrun-mpi np 4 under ulimit -d: exit "
          f"{a.returncode}: {a.stdout[-300:]} {a.stderr.strip()[-300:]}")


with tempfile.TemporaryDirectory() as tmp:
    for np in (4, 6):
        machine(np, os.path.join(tmp, f"m{np}.json"))
    test_refusals(tmp)
    test_matrix(tmp)
    test_faults(tmp)
    test_timeout_predict(tmp)
    test_memory(tmp)
print(f"mpi cli ({FLAVOUR}): {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
