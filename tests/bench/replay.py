#!/usr/bin/env python3
"""Replay benchmark: collrun beside Open MPI's own collectives.

Every operation collrun replays - bcast, scatter, gather, reduce, allreduce,
allgather, reduce-scatter, alltoall, barrier - against the same MPI
collective run by mpi_coll.c (MPI_Bcast ... MPI_Reduce_scatter_block,
MPI_Alltoall, MPI_Barrier).  Both sides move the same data: mpi_coll's BYTES
is collrun's --bytes (per member, or per block for scatter, gather,
allgather, reduce-scatter and alltoall: collrun(1) "Operations"); the
reductions are int32 sum on both sides; the barrier moves nothing.  Both time
the collective alone (set-up and verification excluded), take the median of
their iterations, and check every result byte; any run that does not verify
stops the benchmark (run_json).  The two alternate, round after round, and
which goes first alternates too, so that noise hits both.

1. FAIR - 2 members on 2 CPUs: collrun on a machine of 1 node x 2 tasks with
   --threads 2 (the calling thread and one worker, pinned one per CPU)
   against `mpirun -np 2 --bind-to core --mca btl self,vader mpi_coll OP`
   (one rank per CPU), every operation at 8 B, 512 B, 4 KiB, 64 KiB, 1 MiB
   and 16 MiB (barrier once).  Both are measured two ways, each beside the
   other's same way: OSU-style, MPI's calls each released by a barrier and
   checked before the next, the slowest rank's time, median over the
   calls, beside collrun's default run (each iteration from buffers reset,
   untimed, and verified before the next); and back to back, MPI's calls
   in a row (`mpi_coll --back-to-back`: the slowest rank's loop time / N,
   the last call's result checked) beside `collrun --verify last` (the
   iterations in a row, each from buffers reset, untimed, the last
   verified).  Target: collrun no slower than MPI both ways at
   every size.  The verdicts also count, apart, collrun's default run
   against MPI back to back: a pause before each of collrun's iterations
   and none between MPI's calls.  From 1 MiB of input per member,
   collrun's time is also set beside the copy limit: copy_ideal's time to
   write every byte the operation's result must hold, once, straight
   from where it lies, on the same CPUs with the same number of threads
   and buffers of the same sizes (tests/bench/copy_ideal.c), run in the
   same rounds as collrun; target: at least 0.8 of it (the limit's time
   over collrun's, per part).  The limit is measured two ways in the same
   rounds, each beside collrun run the same way: back to back (each
   repetition straight after the last; each way's untimed first pass and
   the last repetition checked) beside `collrun --verify last` (the
   iterations in a row, each from buffers reset, the last verified), and
   checked (`copy_ideal ... checked`: every repetition checked before
   the next, each thread its share, as collrun shares its verification of
   large buffers) beside collrun's default,
   which verifies every iteration before the next; both are shown and
   counted.  The cases with a copy limit run more rounds than the others
   (--limit-rounds, 11), the first --rounds of them beside MPI: a ratio
   whose rounds spread 0.65-1.3 needs more than 3 or 5 for a steady
   median.  The MPI ratios use only the rounds that ran beside MPI.
2. OVERSUBSCRIBED - 16 members on 2 CPUs, 8 B, 64 KiB, 1 MiB and 16 MiB of
   input per member (allgather, reduce-scatter and alltoall: 16 blocks of
   a sixteenth, at least 8 B): `collrun OP --json` on a machine of 1 node x
   16 tasks, one thread per CPU, against `mpirun --oversubscribe -np 16
   --mca btl self,vader mpi_coll OP`, both ways as part 1.  16 MPI ranks on
   this host's few CPUs time-share them, so MPI's times include the
   scheduling waits of ranks queued behind others, which collrun's threads
   do not pay: this part flatters collrun, and says so.  Target:
   at most 0.5 of MPI's time both ways.
3. bcast of 8 bytes over 1,048,576 members (65,536 nodes x 16 tasks, torus
   16x16x16x16): collrun's median seconds and deliveries per second (members
   other than the root, each of which receives the data once), against the
   targets (<= 1 s, then <= 0.5 s,
   now <= 10 ms).
4. Whole runs at scale, one process each: bcast of 8 bytes over 8,388,608
   members (524,288 nodes x 16 tasks, torus 32x32x32x16: targets the
   collective in <= 0.1 s, the process in <= 2 s and <= 1 GiB) and reduce
   of 64 KiB over 65,536 members, int32 sum (4,096 nodes x 16 tasks, torus
   8x8x8x8: target the process in <= 5 s): wall seconds and peak RSS
   (wait4), medians over rounds.

Parts 1 and 2 also show reduce with algorithm "direct" (collrun
--algorithm direct), not the default, beside the same MPI reduce and copy
limit in the same rounds: labelled, and left out of every count of
targets met.

Every comparison runs in rounds; in each, every case runs collrun's
default run, MPI OSU-style, collrun back to back and MPI back to back, the
order reversed every other round.
Tables: the median over rounds of each run's median, min..max over rounds,
and ratios collrun / MPI of those medians, with the range of the rounds'
own ratios.

Writes OUT/replay.md (Markdown) and OUT/replay-mpi.csv (every run of every
round; not replay.csv, which is bench.py's replay-scaling table in the same
folder), and prints the Markdown.

usage: replay.py BUILD [--quick] [--rounds N] [--limit-rounds N] [--out DIR]
                 [--parts 1,2,3,4]
                 [--no-mpi]
"""
import argparse, csv, datetime, json, os, platform, shutil, statistics
import subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
# collrun's operations, the seeds' four first; mpi_coll takes the same names
OPS = ["bcast", "scatter", "gather", "reduce", "allreduce", "allgather",
       "reduce-scatter", "alltoall", "barrier"]
REDUCTIONS = ("reduce", "allreduce", "reduce-scatter")  # int32 sum, both sides
# Extra rows, OP/ALGORITHM: an algorithm other than OP's default, beside
# the same MPI operation and copy limit, labelled and left out of every
# count of targets met (they are not what collrun runs unless asked).
EXTRA = ["reduce/direct"]
KIB, MIB = 1 << 10, 1 << 20
BLOCK_OPS = ("allgather", "reduce-scatter", "alltoall")
# Part 1: sizes and iterations per run (many where one is short, so that
# the medians are steady)
FAIR_SIZES = [8, 512, 4 * KIB, 64 * KIB, MIB, 16 * MIB]
ITERS = {0: 1000, 8: 1000, 512: 1000, 4 * KIB: 500, 64 * KIB: 200,
         MIB: 200, 16 * MIB: 10}
ITERS_QUICK = {0: 100, 8: 100, 512: 100, 4 * KIB: 50, 64 * KIB: 20,
               MIB: 5, 16 * MIB: 3}
# Part 2: input bytes per member
OVER_SIZES = [8, 64 * KIB, MIB, 16 * MIB]
# Below this, no copy limit is shown: latency, not bandwidth, decides.
LIMIT_FROM = MIB


TIMEOUT = 900  # seconds for any one command: a hung run must not hang bench
INSTALL_MPI = "apt-get install -y openmpi-bin libopenmpi-dev"


def die(msg, status=1):
    print(f"replay.py: {msg}", file=sys.stderr)
    sys.exit(status)


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def run_json(cmd, env=None, what=""):
    """Runs cmd, returns the JSON object it printed (the last line starting
    with '{' for mpirun, whose helpers may print around it; all of stdout
    otherwise).  Any failure stops the benchmark: a number from a run that did
    not verify is worth nothing."""
    try:
        p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        die(f"{what}: no answer after {TIMEOUT} s: {' '.join(cmd)}")
    return result_of(cmd, p.returncode, p.stdout, p.stderr, what)


def result_of(cmd, returncode, stdout, stderr, what):
    """run_json's verdict on a finished run: its JSON object, or the
    benchmark stops (a failed run, no JSON, a result not verified)."""
    if returncode != 0:
        sys.stderr.write(stderr[-4000:])
        die(f"{what}: exit {returncode}: {' '.join(cmd)}")
    try:
        out = stdout.strip()
        if out.startswith("{") and "\n{" not in out:
            obj = json.loads(out)
        else:
            obj = json.loads([l for l in out.splitlines()
                              if l.startswith("{")][-1])
    except (ValueError, IndexError):
        sys.stderr.write(stdout[-2000:] + stderr[-2000:])
        die(f"{what}: no JSON result from: {' '.join(cmd)}")
    if obj.get("verified") is not True:
        sys.stderr.write(json.dumps(obj)[:2000] + "\n")
        die(f"{what}: result not verified: {' '.join(cmd)}")
    return obj


def write_machine(path, nodes, tpn, network):
    with open(path, "w") as f:
        json.dump({"name": os.path.basename(path)[:-5], "nodes": nodes,
                   "tasks_per_node": tpn, "network": network}, f)
    return path


def build_mpi_coll(bdir):
    src = os.path.join(HERE, "mpi_coll.c")
    exe = os.path.join(bdir, "mpi_coll")
    if (not os.path.exists(exe)
            or os.path.getmtime(exe) < os.path.getmtime(src)):
        cmd = ["mpicc", "-std=c11", "-O2", "-Wall", "-Wextra", "-o", exe,
               src]
        note(" ".join(cmd))
        if subprocess.run(cmd).returncode != 0:
            die("mpicc failed")
    return exe


def build_copy_ideal(bdir):
    """copy_ideal, at -O3: gcc 12's -O2 leaves its int32 sums scalar
    (2.5x slower over 1 MiB), and a slow yardstick would flatter collrun."""
    src = os.path.join(HERE, "copy_ideal.c")
    exe = os.path.join(bdir, "copy_ideal")
    if (not os.path.exists(exe)
            or os.path.getmtime(exe) < os.path.getmtime(src)):
        cmd = ["cc", "-std=gnu11", "-O3", "-Wall", "-Wextra", "-pthread",
               "-o", exe, src]
        note(" ".join(cmd))
        if subprocess.run(cmd).returncode != 0:
            die("cc copy_ideal.c failed")
    return exe


def first_line(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True,
                              timeout=60).stdout.splitlines()[0].strip()
    except (OSError, IndexError, subprocess.TimeoutExpired):
        return "?"


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def ms(s):
    return f"{s * 1e3:.3f}"


def us(s):
    return f"{s * 1e6:.1f}" if s < 1e-3 else f"{s * 1e6:.0f}"


def human(n):
    for unit, size in (("MiB", MIB), ("KiB", KIB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def rfmt(x):
    """A ratio: two decimals near 1, fewer where they mean nothing."""
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def spread(xs, fmt):
    return f"{fmt(min(xs))}..{fmt(max(xs))}"


def loadavg():
    try:
        return "/".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def base_op(op):
    """The operation of an OPS or EXTRA entry ("reduce/direct": reduce)."""
    return op.partition("/")[0]


def collrun_cmd(collrun, op, nbytes, n_iter, threads, machine,
                verify="every"):
    # --timeout: the default 60 s bounds the whole run, verification of
    # every iteration included, which for 16 members' reduce-scatter of 1
    # MiB blocks is over a second an iteration.
    op, _, alg = op.partition("/")
    cmd = [collrun, op, "--iterations", str(n_iter), "--threads",
           str(threads), "--timeout", str(TIMEOUT), "--json"]
    if verify != "every":
        cmd += ["--verify", verify]
    if alg:
        cmd += ["--algorithm", alg]
    if op != "barrier":  # collrun refuses --bytes for the barrier
        cmd += ["--bytes", str(nbytes)]
    if op in REDUCTIONS:
        cmd += ["--type", "int32", "--op", "sum"]  # as mpi_coll
    return cmd + [machine]


def check_run(res, what, **want):
    """The run did what was asked: a replay or MPI job of another size or
    member count would compare nothing."""
    for k, v in want.items():
        if res.get(k) != v:
            die(f"{what}: {k} is {res.get(k)!r}, asked for {v!r}")


def main():
    t_start = time.time()
    ap = argparse.ArgumentParser(
        description="collrun beside Open MPI's collectives")
    ap.add_argument("build", help="build directory holding collrun")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: fewer rounds, iterations and sizes")
    ap.add_argument("--rounds", type=int,
                    help="rounds of parts 1 and 2 (default 5 and 3; "
                    "quick 2 and 1)")
    ap.add_argument("--limit-rounds", type=int,
                    help="rounds of the copy-limit cases of parts 1 and 2 "
                    "(from 1 MiB: collrun both ways and the limit both "
                    "ways; default 11, quick 2), the first --rounds of "
                    "them beside MPI")
    ap.add_argument("--parts", default="1,2,3,4",
                    help="parts to run (default 1,2,3,4): 1 = 2 members, "
                    "fair; 2 = 16 members, oversubscribed; 3 = bcast over "
                    "1,048,576 members; 4 = whole runs at scale")
    ap.add_argument("--out", default=os.path.join(REPO, "bench-results"),
                    help="results folder (default: bench-results/)")
    ap.add_argument("--no-mpi", action="store_true",
                    help="collrun only (no Open MPI at hand)")
    a = ap.parse_args()
    rounds = a.rounds if a.rounds is not None else (2 if a.quick else 5)
    over_rounds = (a.rounds if a.rounds is not None
                   else (1 if a.quick else 3))
    lim_rounds = (a.limit_rounds if a.limit_rounds is not None
                  else (2 if a.quick else 11))
    big_rounds = 1 if a.quick else 3
    big_iters = 2 if a.quick else 5
    fair_sizes = [8, 64 * KIB, MIB] if a.quick else FAIR_SIZES
    over_sizes = [8, MIB] if a.quick else OVER_SIZES
    iters_of = ITERS_QUICK if a.quick else ITERS
    if rounds < 1:
        die("--rounds must be >= 1", 2)
    if lim_rounds < 1:
        die("--limit-rounds must be >= 1", 2)
    parts = set(a.parts.split(","))
    if not parts or parts - {"1", "2", "3", "4"}:
        die("--parts: a list of 1, 2, 3 and 4", 2)

    collrun = os.path.join(a.build, "collrun")
    if not os.access(collrun, os.X_OK):
        die(f"{collrun} not found: build it first (make)", 2)
    use_mpi = not a.no_mpi
    if use_mpi:
        missing = [t for t in ("mpicc", "mpirun") if not shutil.which(t)]
        if missing:
            die(f"Open MPI not found ({', '.join(missing)} missing); install "
                f"it with `{INSTALL_MPI}` (as root), or run with --no-mpi",
                2)
    bdir = os.path.join(a.build, "bench")
    os.makedirs(bdir, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    cpus = len(os.sched_getaffinity(0))
    threads = cpus  # collrun's default, one thread per CPU

    m16 = write_machine(os.path.join(bdir, "replay-1x16.json"), 1, 16,
                        {"type": "kary", "fanout": 2})
    m2 = write_machine(os.path.join(bdir, "replay-1x2.json"), 1, 2,
                       {"type": "kary", "fanout": 2})
    mbig = write_machine(os.path.join(bdir, "replay-65536x16.json"), 65536,
                         16, {"type": "torus", "dims": [16, 16, 16, 16]})

    if use_mpi:
        mpi_coll = build_mpi_coll(bdir)
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        mpi_version = first_line(["mpirun", "--version"])

    def per_member(op, size, members):
        """--bytes for `size` bytes of input per member: a block of
        size / members for the operations with a block per member."""
        if op == "barrier":
            return 0
        if op in BLOCK_OPS and members > 2:
            return max(8, size // members)
        return size

    copy_ideal = build_copy_ideal(bdir)

    def run_ideal(op, members, nbytes, n_threads, checked=False):
        op = base_op(op)
        res = run_json([copy_ideal, op, str(members), str(nbytes),
                        str(n_threads)] + (["checked"] if checked else []),
                       what=f"copy_ideal {op}")
        check_run(res, f"copy_ideal {op}", op=op, members=members,
                  bytes=nbytes, threads=n_threads, checked=checked)
        return res

    def run_collrun(op, machine, members, nbytes, n_iter, n_threads,
                    verify="every"):
        res = run_json(collrun_cmd(collrun, op, nbytes, n_iter, n_threads,
                                   machine, verify), what=f"collrun {op}")
        check_run(res, f"collrun {op}", members=members, bytes=nbytes,
                  threads=n_threads, iterations=n_iter, verify=verify)
        return res

    def run_mpi(op, ranks, nbytes, n_iter, launch, mode="barrier"):
        op = base_op(op)
        cmd = (["mpirun", "--allow-run-as-root", "-np", str(ranks)] + launch
               + ["--mca", "btl", "self,vader", mpi_coll, op, str(nbytes),
                  str(n_iter)]
               + (["--back-to-back"] if mode == "back-to-back" else []))
        res = run_json(cmd, env=env, what=f"mpirun {op}")
        check_run(res, f"mpi_coll {op}", ranks=ranks, bytes=nbytes,
                  iterations=n_iter, mode=mode)
        return res

    csv_rows = []
    algo = {}
    load = {}
    took = {}

    def compare(tag, members, machine, sizes, n_rounds, launch, label):
        """Every case of `members` members in n_rounds interleaved rounds,
        and the cases with a copy limit on to lim_rounds rounds without
        MPI: {(op, bytes): {"collrun": [...], "mpi": [...], "b2b": [...],
        ...}} of run medians, round by round (MPI's lists the shorter when
        lim_rounds > n_rounds); bytes as --bytes."""
        cases = [(op, per_member(op, b, members)) for op in OPS + EXTRA
                 for b in ([0] if op == "barrier" else sizes)]
        # iterations by the input per member, not by the block
        size_of = {(op, per_member(op, b, members)): b for op in OPS + EXTRA
                   for b in ([0] if op == "barrier" else sizes)}
        res_of = {c: {"collrun": [], "mpi": [], "b2b": [], "ideal": [],
                      "checked": [], "last": []} for c in cases}
        load[tag] = [loadavg()]
        t0 = time.time()
        for r in range(max(n_rounds, lim_rounds)):
            for op, nbytes in cases:
                n_iter = iters_of[size_of[(op, nbytes)]]
                limited = size_of[(op, nbytes)] >= LIMIT_FROM
                if r >= n_rounds and not limited:
                    continue
                # collrun's default run (each iteration verified) beside
                # MPI OSU-style; collrun back to back (--verify last)
                # beside MPI back to back
                sides = ["collrun"]
                if use_mpi and r < n_rounds:
                    sides += ["mpi", "b2b", "last"]
                if limited and r < lim_rounds:
                    sides += [x for x in ("last", "ideal", "checked")
                              if x not in sides]
                if r % 2:
                    sides.reverse()
                for side in sides:
                    if side in ("collrun", "last"):
                        res = run_collrun(op, machine, members, nbytes,
                                          n_iter, threads,
                                          "last" if side == "last"
                                          else "every")
                        algo[(tag, op, nbytes)] = res.get("algorithm", "?")
                    elif side in ("ideal", "checked"):
                        res = run_ideal(op, members, nbytes, threads,
                                        side == "checked")
                        res["seconds"] = {"min": res["min_seconds"],
                                          "median": res["seconds"],
                                          "max": res["max_seconds"]}
                    else:
                        mode = ("barrier" if side == "mpi"
                                else "back-to-back")
                        res = run_mpi(op, members, nbytes, n_iter, launch,
                                      mode)
                    sec = res["seconds"]
                    res_of[(op, nbytes)][side].append(sec["median"])
                    csv_rows.append(
                        [label, op, members, nbytes,
                         {"collrun": "collrun", "mpi": "mpi", "b2b": "mpi",
                          "ideal": "copy_ideal", "checked": "copy_ideal",
                          "last": "collrun"}[side],
                         {"collrun": "", "mpi": "barrier",
                          "b2b": "back-to-back", "ideal": "back-to-back",
                          "checked": "checked",
                          "last": "verify-last"}[side], r + 1,
                         res["reps"] if side in ("ideal", "checked")
                         else n_iter,
                         sec["min"], sec["median"], sec["max"],
                         algo[(tag, op, nbytes)]
                         if side in ("collrun", "last") else ""])
                    note(f"{label} round {r + 1}/"
                         f"{max(n_rounds, lim_rounds)} {op:14} "
                         f"{human(nbytes):>7} {side:8} median "
                         f"{us(sec['median'])} us")
        load[tag].append(loadavg())
        took[tag] = time.time() - t0
        return cases, res_of

    def table(tag, members, cases, res_of, target):
        """Markdown rows and (cases, met both ways, met OSU-style, met back
        to back, worst ratio; per way of measuring the copy limit, limit
        cases, limit met, worst fraction)."""
        L = []
        lim_head = ("| collrun back to back us, limit rounds | copy limit us "
                    "| of copy limit | per round | collrun us, limit rounds "
                    "| checked limit us | of checked limit | per round |")
        lim_rule = "| ---: | ---: | ---: | --- | ---: | ---: | ---: | --- |"
        if use_mpi:
            L += ["| op | bytes | collrun algorithm | collrun us | min..max "
                  "| MPI us | min..max | ratio | per round "
                  "| collrun back to back us | min..max "
                  "| MPI back to back us | min..max | ratio | per round "
                  + lim_head,
                  "| --- | ---: | --- | ---: | --- | ---: | --- | ---: "
                  "| --- | ---: | --- | ---: | --- | ---: | --- "
                  + lim_rule]
        else:
            L += ["| op | bytes | collrun algorithm | collrun us | min..max "
                  + lim_head,
                  "| --- | ---: | --- | ---: | --- " + lim_rule]
        st = {"cases": 0, "both": 0, "osu": 0, "b2b": 0, "worst": None,
              "b2b_default": 0, "worst_default": None,
              "lim": {w: {"cases": 0, "met": 0, "worst": None}
                      for w in ("ideal", "checked")}}
        for case in cases:
            op, nbytes = case
            extra = op in EXTRA  # shown, not counted
            cs = res_of[case]["collrun"]
            # beside MPI: collrun's rounds that ran with MPI; beside the
            # copy limit: those that ran with the limit (all)
            mm = res_of[case]["mpi"]
            cm = cs[:len(mm)] if use_mpi else cs
            c = statistics.median(cm)
            ls = res_of[case]["last"]
            lim = [us(statistics.median(ls))
                   if ls and res_of[case]["ideal"] else ""]
            # The copy limit's repetitions follow one another: set beside
            # collrun's iterations back to back (--verify last); the
            # checked limit's, each after a check: beside collrun's own,
            # each verified before the next.
            for way, ours in (("ideal", ls), ("checked", cs)):
                ii = res_of[case][way]
                # the rounds that ran the limit (all of collrun's unless
                # --limit-rounds is below --rounds)
                ours = ours[:len(ii)]
                if not ii:  # below LIMIT_FROM: no limit
                    lim += ["", "", ""] + ([""] if way == "checked" else [])
                    continue
                t_lim = statistics.median(ii)
                frac = t_lim / statistics.median(ours)
                if way == "checked":
                    lim.append(us(statistics.median(ours)))
                lim += [us(t_lim), f"{frac:.2f}",
                        spread([x / y for x, y in zip(ii, ours)], rfmt)]
                w = st["lim"][way]
                if not extra:
                    w["cases"] += 1
                    w["met"] += frac >= 0.8
                    if w["worst"] is None or frac < w["worst"][0]:
                        w["worst"] = (frac, op, nbytes)
            lim = "| " + " | ".join(lim) + " |"
            shown = (f"{base_op(op)} (not the default, not counted)"
                     if extra else op)
            row = (f"| {shown} | {human(nbytes)} "
                   f"| {algo[(tag, op, nbytes)]} | {us(c)} "
                   f"| {spread(cm, us)} ")
            if not use_mpi:
                L.append(row + lim)
                continue
            bb = res_of[case]["b2b"]
            # collrun back to back in the rounds beside MPI
            lb = ls[:len(bb)]
            m, bm = statistics.median(mm), statistics.median(bb)
            cb = statistics.median(lb)
            per = [x / y for x, y in zip(cm, mm)]
            perb = [x / y for x, y in zip(lb, bb)]
            L.append(row + f"| {us(m)} | {spread(mm, us)} | {rfmt(c / m)} "
                     f"| {spread(per, rfmt)} | {us(cb)} | {spread(lb, us)} "
                     f"| {us(bm)} | {spread(bb, us)} | {rfmt(cb / bm)} "
                     f"| {spread(perb, rfmt)} " + lim)
            if extra:
                continue
            st["cases"] += 1
            st["osu"] += c / m <= target
            st["b2b"] += cb / bm <= target
            st["both"] += c / m <= target and cb / bm <= target
            worst = max(c / m, cb / bm)
            if st["worst"] is None or worst > st["worst"][0]:
                st["worst"] = (worst, op, nbytes)
            # the harsher pairing, shown apart: collrun's default run,
            # a pause for the verification before every iteration,
            # against MPI's calls in a row
            st["b2b_default"] += c / bm <= target
            if (st["worst_default"] is None
                    or c / bm > st["worst_default"][0]):
                st["worst_default"] = (c / bm, op, nbytes)
        return L, st

    def verdict_lines(st, target, what):
        out = []
        if use_mpi and st["cases"]:
            w = st["worst"]
            out.append(
                f"{what}: collrun / Open MPI <= {target} in {st['both']} of "
                f"{st['cases']} cases both ways ({st['osu']} OSU-style, "
                f"{st['b2b']} back to back); the largest ratio "
                f"{rfmt(w[0])} ({w[1]}, {human(w[2])}).")
            w = st["worst_default"]
            out.append(
                f"{what}: collrun's default run (every iteration verified) / "
                f"Open MPI back to back <= {target} in {st['b2b_default']} "
                f"of {st['cases']} cases; the largest ratio {rfmt(w[0])} "
                f"({w[1]}, {human(w[2])}).")
        for way, name in (("ideal", "the copy limit (back to back)"),
                          ("checked", "the checked copy limit")):
            lim = st["lim"][way]
            if lim["cases"]:
                w = lim["worst"]
                out.append(
                    f"{what}: at least 0.8 of {name} in {lim['met']} of "
                    f"{lim['cases']} cases from {human(LIMIT_FROM)} of "
                    f"input per member; the lowest {w[0]:.2f} ({w[1]}, "
                    f"{human(w[2])}).")
        return out

    summary = []

    def lim_rounds_text(n_rounds):
        """How many rounds the copy-limit cases ran, if not n_rounds."""
        if lim_rounds <= n_rounds:
            return ""
        return (f" (the cases with a copy limit, from {human(LIMIT_FROM)}: "
                f"{lim_rounds} rounds of collrun both ways and the limit "
                f"both ways, the first {n_rounds} of them beside MPI; the "
                "MPI columns use collrun's rounds beside MPI, the limit "
                "columns all)")

    def part_tail(number, tag, st, target, what):
        """A part's verdicts (also kept for the summary) and timing."""
        v = verdict_lines(st, target, what)
        summary.extend(v)
        return v + ["", f"Part {number} took {took[tag]:.0f} s; load "
                    f"average (1/5/15 min) {load[tag][0]} before, "
                    f"{load[tag][1]} after.", ""]

    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    L = [f"# Replay benchmark ({now}"
         + (", --quick smoke run" if a.quick else "") + ")", "",
         f"Host: {cpu_model()}, {os.cpu_count()} CPUs online, {cpus} "
         "usable by this process"
         + (f"; {mpi_version}" if use_mpi else "; Open MPI not run") + ". "
         "Both sides time the collective alone and check every result byte "
         "(a run that does not verify stops the benchmark). mpi_coll's "
         "BYTES is collrun's --bytes: per member, or per block for scatter, "
         "gather, allgather, reduce-scatter and alltoall (collrun(1)); "
         "reductions are int32 sum on both sides; the barrier moves no data. "
         "Both are measured two ways, each beside the other's same way: "
         "**OSU-style**, MPI with a barrier before every call, each call's "
         "result checked before the next, and the slowest rank's time, "
         "median over the calls, beside collrun's default run (each "
         "iteration from buffers reset, untimed, and verified before the "
         "next); and **back to back**, MPI's calls in a row with no barrier "
         "and the last one's result checked, the slowest rank's loop time "
         "/ N (a rank may start the next call while the other finishes "
         "this one), beside **collrun back to back** (`collrun --verify "
         "last`: the iterations in a row, each from buffers reset as ever, "
         "untimed, the last one's every byte verified). Each part's "
         "verdicts also count collrun's default run against MPI back to "
         "back, a pairing that gives collrun a pause before every "
         "iteration and MPI none. In each round every case runs those "
         "four, the order reversed every other round. Times in "
         "microseconds: the median over rounds of each run's median, "
         "min..max over rounds; ratio = collrun / MPI of the medians "
         "(above 1: collrun is slower), per round = the range of the "
         "rounds' own ratios. **Copy limit** "
         f"(from {human(LIMIT_FROM)} of input per member): copy_ideal's "
         "time (tests/bench/copy_ideal.c) to write every byte the "
         "operation's result must hold once, straight from where it lies: "
         "the root's buffer into every receive buffer for bcast (the "
         "root's too, as collrun's bcast does), every block into place for "
         "scatter, gather, allgather and alltoall (each member's own block "
         "too), and for reduce, allreduce and reduce-scatter every result "
         "element summed from all N inputs in one pass (allreduce: then "
         "copied to the other N-1). It uses buffers of collrun's sizes, the "
         "same number of threads pinned one per CPU, each writing the same "
         "share of every destination, with no message, tree or wait; each "
         "repetition starts from destinations cleared and sources read by "
         "the thread that uses them (warm caches, as collrun's reset "
         "leaves them), and the faster of memcpy and streaming stores "
         "counts. It runs in the same rounds as collrun, interleaved, and "
         "is measured two ways, each set beside collrun run the same way: "
         "the **copy limit** times repetitions back to back (each way's "
         "untimed first pass and the last repetition checked), beside "
         "collrun back to back; the **checked limit** "
         "(`copy_ideal ... checked`) checks every repetition before the "
         "next, each thread its own share, beside collrun's "
         "default run, which verifies every iteration before the next. "
         "On this kind of host an iteration that follows such a pause "
         "can be slower than one repeated back to back, whatever the "
         "caches hold (collrun(1), --verify), so the two ways can differ; "
         "both run in the same rounds and both are counted. 'of copy "
         "limit' = the limit's median / collrun's of the same way (above "
         "1: collrun is faster), per round = the range of the rounds' own "
         "ratios.", ""]

    if "1" in parts and cpus < 2:
        L += ["## 1. FAIR: 2 members on 2 CPUs", "",
              f"Not run: this process may run on {cpus} CPU(s); the fair "
              "comparison needs 2.", ""]
        note("part 1 skipped: fewer than 2 CPUs")
    elif "1" in parts:
        cases, res_of = compare("2", 2, m2, fair_sizes, rounds,
                                ["--bind-to", "core"], "2-fair")
        rows, st = table("2", 2, cases, res_of, 1.0)
        L += ["## 1. FAIR: 2 members on 2 CPUs, every operation", "",
              "One thread or rank per CPU on each side. collrun: machine 1 "
              "node x 2 tasks, `--threads 2` (the calling thread and one "
              "worker, pinned to CPUs 0 and 1). Open MPI: `mpirun -np 2 "
              "--bind-to core --mca btl self,vader mpi_coll OP BYTES N` "
              f"(rank i bound to core i, shared memory). {rounds} rounds"
              + lim_rounds_text(rounds) + "; "
              "N (iterations per run, both sides) = "
              + ", ".join(f"{iters_of[b]} at {human(b)}" for b in fair_sizes)
              + f", {iters_of[0]} for the barrier. Target: "
              "collrun no slower than Open MPI both ways at every size, and "
              "from 1 MiB at least 0.8 of the copy limit.", ""] + rows + [""]
        L += part_tail(1, "2", st, 1.0, "2 members")

    if "2" in parts:
        cases, res_of = compare("16", 16, m16, over_sizes, over_rounds,
                                ["--oversubscribe"], "16-oversubscribed")
        rows, st = table("16", 16, cases, res_of, 0.5)
        L += ["## 2. OVERSUBSCRIBED: 16 members, 16 MPI ranks on "
              f"{cpus} CPUs", "",
              f"**16 MPI ranks on {cpus} CPUs.** The ranks time-share the "
              "CPUs: a rank whose turn it is to send, receive or add often "
              "waits in the run queue behind ranks that are only polling, so "
              "Open MPI's times below include scheduling waits that "
              f"collrun's {threads} threads (one per CPU, pinned) do not "
              "pay. This comparison flatters collrun; part 1 is the fair "
              "one.", "",
              "collrun: machine 1 node x 16 tasks (all shared memory), "
              f"`--threads {threads}`. Open MPI: `mpirun --oversubscribe "
              "-np 16 --mca btl self,vader mpi_coll OP BYTES N`. Sizes: "
              + ", ".join(human(b) for b in over_sizes)
              + " of input per member: allgather, reduce-scatter and "
              "alltoall take blocks of a sixteenth (at least 8 B), so that "
              "every member's input is the same. "
              f"{over_rounds} rounds" + lim_rounds_text(over_rounds)
              + ". Target: at most 0.5 of "
              "Open MPI's time both ways.", ""] + rows + [""]
        L += part_tail(2, "16", st, 0.5, "16 members (oversubscribed MPI)")

    big = []
    members = 65536 * 16
    if "3" in parts:
        t3 = time.time()
        for r in range(big_rounds):
            res = run_collrun("bcast", mbig, members, 8, big_iters, threads)
            sec = res["seconds"]
            big.append(sec["median"])
            algo["big"] = res.get("algorithm", "?")
            csv_rows.append(["1Mx8B", "bcast", members, 8, "collrun", "",
                             r + 1, big_iters, sec["min"], sec["median"],
                             sec["max"], algo["big"]])
            note(f"part 3 round {r + 1}/{big_rounds} bcast 8 B x {members} "
                 f"members median {sec['median']:.4f} s")
        b = statistics.median(big)
        rate = (members - 1) / b
        L += ["## 3. bcast of 8 bytes over 1,048,576 members", "",
              "Machine: 65,536 nodes x 16 tasks, torus 16x16x16x16, compiled "
              f"in memory by collrun; algorithm {algo['big']}; "
              f"`--threads {threads}`; {big_rounds} run(s) of {big_iters} "
              "iterations, median of the run medians. Deliveries: the "
              "1,048,575 members other than the root, each receiving once.",
              "",
              "| members | seconds | min..max | deliveries/s "
              "| <= 0.5 s | <= 10 ms |",
              "| ---: | ---: | --- | ---: | --- | --- |",
              f"| {members:,} | {b:.4f} "
              f"| {spread(big, lambda x: f'{x:.4f}')} | {rate / 1e6:.1f} M "
              f"| {'yes' if b <= 0.5 else '**no**'} "
              f"| {'yes' if b <= 0.01 else '**no**'} |", "",
              f"Part 3 took {time.time() - t3:.0f} s.", ""]
        summary.append(f"bcast 8 B over 1,048,576 members: {b * 1e3:.1f} ms "
                       f"({rate / 1e6:.1f} M deliveries/s; target <= 10 ms)")

    if "4" in parts:
        # Whole processes: planning, filling, the run and verification,
        # as a user waits for them.  Wall seconds and peak RSS from the
        # kernel's accounting of the child (wait4), one run at a time.
        t4 = time.time()
        m8m = write_machine(os.path.join(bdir, "replay-524288x16.json"),
                            524288, 16,
                            {"type": "torus", "dims": [32, 32, 32, 16]})
        m64k = write_machine(os.path.join(bdir, "replay-4096x16.json"),
                             4096, 16, {"type": "torus", "dims": [8, 8, 8, 8]})
        cases = [("bcast 8 B over 8,388,608 members", "bcast", m8m,
                  524288 * 16, 8, 0.1, 2.0, 1.0),
                 ("reduce 64 KiB over 65,536 members (int32 sum)", "reduce",
                  m64k, 4096 * 16, 64 * KIB, None, 5.0, None)]
        got = {c[0]: ([], [], []) for c in cases}
        for r in range(big_rounds):
            for name, op, mpath, members, nbytes, *_ in cases:
                cmd = collrun_cmd(collrun, op, nbytes, 1, threads, mpath)
                outp = os.path.join(bdir, "whole.out")
                errp = os.path.join(bdir, "whole.err")
                t0 = time.time()
                with open(outp, "w") as fo, open(errp, "w") as fe:
                    proc = subprocess.Popen(cmd, stdout=fo, stderr=fe)
                    _, status, ru = os.wait4(proc.pid, 0)
                wall = time.time() - t0
                res = result_of(cmd, os.waitstatus_to_exitcode(status),
                                open(outp).read(), open(errp).read(),
                                f"collrun {op}")
                check_run(res, f"collrun {op}", members=members,
                          bytes=nbytes, threads=threads, iterations=1)
                coll = res["seconds"]["median"]
                rss = ru.ru_maxrss * 1024 / (1 << 30)  # KiB -> GiB
                got[name][0].append(coll)
                got[name][1].append(wall)
                got[name][2].append(rss)
                csv_rows.append(["whole", op, members, nbytes, "collrun",
                                 "", r + 1, 1, coll, coll, coll,
                                 res.get("algorithm", "?")])
                note(f"part 4 round {r + 1}/{big_rounds} {name}: whole "
                     f"{wall:.2f} s, {rss:.2f} GiB, collective {coll:.4f} s")
        L += ["## 4. Whole runs at scale", "",
              "One `collrun OP --bytes B --iterations 1 --json` process per "
              "run, machine compiled in memory, one thread per CPU: the "
              "collective's seconds as collrun reports them, and the whole "
              "process (planning, filling the inputs, the run, verifying "
              "every byte) in wall seconds and peak resident memory (the "
              f"kernel's, wait4). {big_rounds} rounds, the cases "
              "alternating; medians, min..max.", "",
              "| case | collective s | target | whole s | target "
              "| peak GiB | target |",
              "| --- | ---: | --- | ---: | --- | ---: | --- |"]

        def cell(xs, target, fmt):
            m = statistics.median(xs)
            ok = ("" if target is None else
                  ("yes" if m <= target else "**no**"))
            return (f"{fmt(m)} ({spread(xs, fmt)})",
                    "-" if target is None else f"<= {target:g}: {ok}")

        for name, op, mpath, members, nbytes, tc, tw, tm in cases:
            cs, ws, rs = got[name]
            c1, c2 = cell(cs, tc, lambda x: f"{x:.3f}")
            w1, w2 = cell(ws, tw, lambda x: f"{x:.2f}")
            r1, r2 = cell(rs, tm, lambda x: f"{x:.2f}")
            L.append(f"| {name} | {c1} | {c2} | {w1} | {w2} | {r1} | {r2} |")
            summary.append(
                f"{name}: whole process {statistics.median(ws):.2f} s "
                f"(target <= {tw:g} s), {statistics.median(rs):.2f} GiB"
                + (f" (target <= {tm:g} GiB)" if tm else "")
                + (f", collective {statistics.median(cs) * 1e3:.0f} ms "
                   f"(target <= {tc * 1e3:.0f} ms)" if tc else ""))
        L += ["", f"Part 4 took {time.time() - t4:.0f} s.", ""]

    if summary:
        L[2:2] = ["## Summary", ""] + [f"- {x}" for x in summary] + [""]
    L += [f"The whole run took {(time.time() - t_start) / 60:.1f} min. "
          "Reproduce: `python3 tests/bench/replay.py build [--quick]`.", ""]
    md = "\n".join(L)
    with open(os.path.join(a.out, "replay.md"), "w") as f:
        f.write(md)
    with open(os.path.join(a.out, "replay-mpi.csv"), "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["case", "op", "members", "bytes", "tool", "timing",
                    "round", "iterations", "min_s", "median_s", "max_s",
                    "collrun_algorithm"])
        w.writerows(csv_rows)
    print(md)


if __name__ == "__main__":
    main()
