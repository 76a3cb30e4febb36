#!/usr/bin/env python3
"""The whole benchmark (`make bench`, `make bench-quick`): writes OUT/ (default
bench-results/) with results.md (every table), one CSV per experiment, PNG
plots drawn by gnuplot, and prints a summary of every target, met or missed.

1. compile - `collc compile` on torus machines of 16 tasks per node, 4,096 to
   8,388,608 endpoints: median wall seconds of --runs runs (each started
   without the previous output and after an untimed sync: compile.py's
   method), peak RSS (GNU time), output size.  The default (rule-encoded
   tables) and `--routes none` at every size, `--routes full` up to
   1,048,576 only: a full table holds about sum(degree^2) targets, and the
   hierarchical tree's alone would be ~150 GB at 8,388,608 endpoints.  Also
   the uneven machine (65,536 nodes on a binary tree, node 0
   running 2 tasks, the others 1: 65,537 endpoints), by default and with
   --routes full, which --max-size refuses up front (the time to refuse and
   the size it would have written are reported).
2. spec - stride-spec evaluation, topo_group_new alone
   (spec_time.c): specs whose terms span 2^31 - 1 endpoints (2 KB of
   "ep 0::2 - ep 0::2 + ...", coprime strides, the bitmap worst case) and
   long specs over 1,048,576; result sizes checked against arithmetic.
   And collc compile of 4,000 groups over 1,048,576 nodes.
3. replay - bcast of 8 bytes over 1,024 .. 8,388,608 members (torus machines,
   16 tasks per node, compiled in memory by collrun, --json --iterations 5):
   median over --runs runs of the collective's median seconds, and deliveries
   per second (members - 1) / seconds.
4. data - bcast, scatter, gather, reduce, and allreduce,
   allgather, reduce-scatter and alltoall (reductions int32 sum; the block
   operations' BYTES per block, cases over 64 MiB of blocks per member left
   out) with 2, 4, 8, 16 members
   (1 node x N tasks), 8 B .. 16 MiB per member, reused and fresh buffers:
   collrun beside Open MPI (mpi_coll under mpirun --oversubscribe -np N --mca
   btl self,vader; the two alternate, and which goes first alternates) and
   beside the memory-copy limit: the bytes the operation must copy divided by
   memcpy_rate's single-thread rate for a buffer of that size, fresh or reused
   as the run.  Bytes to copy: bcast (N-1)*B (every member but the root gets
   B), scatter (N-1)*B (the root's blocks for the others), gather (N-1)*B (the
   others' blocks into the root's buffer), reduce (N-1)*B read and combined
   into the root's result (counted as copies, though combining also adds),
   allreduce 2(N-1)*B, allgather, reduce-scatter and alltoall N(N-1)*B.
   Ratios (collrun / MPI) are per round, then the median over rounds.
   N > 2 is oversubscribed on a 2-CPU machine, and labelled so.
4b. colls - all nine operations, the barrier too (replay.py parts 1, 2 and
   4):
   the fair comparison first, 2 members on 2 threads against 2 ranks bound
   to 2 cores, 8 B .. 16 MiB, then 16 members beside 16 Open MPI ranks,
   oversubscribed and labelled so, 8 B .. 16 MiB of input; MPI timed with a
   barrier between calls and back to back, collrun also beside the
   memory-copy limit from 1 MiB; medians and spreads over interleaved
   rounds.  Then whole processes at scale: bcast of 8
   B over 8,388,608 members and reduce of 64 KiB over 65,536, wall seconds
   and peak RSS.
5. costs - the measured defaults of libtopo/machine/costs.c: reduce_rate.c (ns per
   byte of libtopo's reduction kernel, every type and operator, two warm
   buffers of 1 MiB) and, when mpicc and mpirun exist (and not --no-mpi),
   loggp_fit.c (LogGP of Open MPI between two cores over shared memory);
   --runs invocations of each, alternating.  Also costs.md alone.
6. predict - `collrun OP --predict` at scale (predict_bench.py): bcast of 8
   bytes over 65,536 to 8,388,608 members, whole process, wall seconds and
   peak RSS; other trees and operations at 1,048,576 and 65,536.

Any collrun run that does not verify, and any MPI run whose check fails,
stops the benchmark (replay.run_json).

usage: bench.py BUILD [--quick] [--out DIR] [--runs N] [--rounds N]
                [--only compile,spec,replay,data,colls,costs,predict,plots]
                [--no-mpi]
"""
import argparse, csv, datetime, json, os, shutil, statistics, subprocess
import sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import compile as cbench  # noqa: E402  (compile.py: machine(), run())
import replay as rbench  # noqa: E402  (replay.py: run_json(), build_mpi_coll())
import predict_bench as pbench  # noqa: E402  (the predict stage)

OPS = ["bcast", "scatter", "gather", "reduce"]
# operations with data (the barrier has none: replay.py parts 1
# and 3 time it, stage "colls")
NEW_OPS = ["allreduce", "allgather", "reduce-scatter", "alltoall"]
DATA_OPS = OPS + NEW_OPS
REDUCING = ("reduce", "allreduce", "reduce-scatter")
# allgather, reduce-scatter and alltoall hold N blocks of BYTES per member:
# beyond this per member (16 MiB blocks at 16 members: 256 MiB each, 8 GiB a
# side for alltoall) the case is left out, and the table says so.
BLOCK_OPS_MAX = 64 * (1 << 20)


def copy_bytes_of(op, n, nbytes):
    """The bytes op must move between members at the least, BYTES as
    collrun's --bytes: bcast, scatter, gather, reduce (N-1)B; allreduce
    2(N-1)B (a reduce's and a broadcast's); allgather, reduce-scatter and
    alltoall N(N-1)B (every member gets, or contributes to, N-1 blocks)."""
    if op in OPS:
        return (n - 1) * nbytes
    if op == "allreduce":
        return 2 * (n - 1) * nbytes
    return n * (n - 1) * nbytes
KIB, MIB = 1 << 10, 1 << 20

# torus dims per endpoint count (16 tasks per node)
SHAPES = {1 << 10: [4, 4, 4], 1 << 12: [4, 4, 4, 4], 1 << 14: [8, 8, 4, 4],
          1 << 16: [8, 8, 8, 8], 1 << 18: [16, 16, 8, 8],
          1 << 19: [16, 16, 16, 8], 1 << 20: [16, 16, 16, 16],
          1 << 21: [32, 16, 16, 16], 1 << 22: [32, 32, 16, 16],
          1 << 23: [32, 32, 32, 16]}


def note(msg):
    print(msg, file=sys.stderr, flush=True)


def human(n):
    for unit, size in (("MiB", MIB), ("KiB", KIB)):
        if n >= size and n % size == 0:
            return f"{n // size} {unit}"
    return f"{n} B"


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        w.writerows(rows)


def verdict(ok):
    return "met" if ok else "**MISSED**"


# ------------------------------------------------------------------ compile
def bench_compile(a, out, md, summary):
    collc = os.path.join(a.build, "collc")
    sizes = [s for s in sorted(SHAPES) if s >= 1 << 12]
    if a.quick:
        sizes = [1 << 12, 1 << 16, 1 << 20]
    rows = []
    with tempfile.TemporaryDirectory(dir=os.path.join(a.build)) as tmp:
        for eps in sizes:
            dims = SHAPES[eps]
            m = cbench.machine(dims, 16)
            mpath = os.path.join(tmp, "m.json")
            opath = os.path.join(tmp, "routes.json")
            with open(mpath, "w") as f:
                json.dump(m, f)
            for mode in ("rule", "none", "full"):
                if mode == "full" and eps > (1 << 20):
                    continue
                walls, rss = [], 0
                for _ in range(a.runs):
                    if os.path.exists(opath):
                        os.unlink(opath)
                    os.sync()
                    w, r = cbench.run([collc, "compile", mpath, "-o", opath,
                                       "--routes", mode, "--max-size",
                                       "none"])
                    walls.append(w)
                    rss = max(rss, r)
                size = os.path.getsize(opath)
                os.unlink(opath)
                med = statistics.median(walls)
                rows.append([eps, m["nodes"], "x".join(map(str, dims)), mode,
                             len(walls), f"{med:.4f}", f"{min(walls):.4f}",
                             f"{max(walls):.4f}", rss, size])
                note(f"compile {eps:>9} routes {mode}: median {med:.3f} s, "
                     f"peak {rss / MIB:.0f} MiB, output {size / MIB:.1f} MiB")
        uneven = bench_uneven(a, collc, tmp)
    write_csv(os.path.join(out, "compile.csv"),
              ["endpoints", "nodes", "torus", "routes", "runs", "median_s",
               "min_s", "max_s", "peak_rss_bytes", "output_bytes"], rows)
    md += ["## Compile scaling", "",
           f"`collc compile` (default trees: physical, hierarchical, binomial; "
           f"written to a file), torus machines of 16 tasks per node; median "
           f"of {a.runs} runs, each started without the previous output and "
           "after an untimed `sync`; peak RSS by GNU time (largest of the "
           "runs). `rule` is the default (format version 2, tables "
           "rule-encoded); `--routes full` spells every row out and stops at "
           "1,048,576 endpoints: the full table holds about sum(degree^2) "
           "targets, so the hierarchical tree's table alone (a node's members "
           "are children of its identified member) would be ~150 GB at "
           "8,388,608 endpoints.", "",
           "| endpoints | torus | routes | median s | min..max s | peak MiB "
           "| output MiB | ns/endpoint | peak B/endpoint |",
           "|---:|---|---|---:|---|---:|---:|---:|---:|"]
    for eps, nodes, dims, mode, n, med, lo, hi, rss, size in rows:
        md.append(f"| {eps:,} | {dims} | {mode} | {float(med):.3f} | "
                  f"{float(lo):.3f}..{float(hi):.3f} | {rss / MIB:.0f} | "
                  f"{size / MIB:.1f} | {float(med) / eps * 1e9:.0f} | "
                  f"{rss / eps:.0f} |")
    md.append("")
    md += ["The uneven machine: 65,536 nodes on a binary tree, node "
           "0 running 2 tasks and the others 1 (65,537 endpoints; the "
           "hierarchical tree gives node 0's second member 65,535 children). "
           "With `--routes full` the output would be tens of GB, and "
           "`--max-size` (default 1 GiB) refuses it before writing anything: "
           "the seconds are those of the refusal, the size the one it "
           "reports.", "",
           "| routes | median s | min..max s | peak MiB | output bytes |",
           "|---|---:|---|---:|---:|"]
    for mode, med, lo, hi, rss, size, refused in uneven:
        md.append(f"| {mode}{' (refused)' if refused else ''} | {med:.3f} | "
                  f"{lo:.3f}..{hi:.3f} | {rss / MIB:.0f} | {size:,} |")
    md.append("")
    for mode, med, _, _, rss, size, refused in uneven:
        if mode == "rule":
            summary.append(f"compile the 65,537-endpoint uneven machine, "
                           f"default: {size / 1e6:.1f} MB, {med:.2f} s "
                           f"(target <= 10 MB): {verdict(size <= 10e6)}")
        else:
            summary.append(f"compile the 65,537-endpoint uneven machine, "
                           f"--routes full: refused in {med:.2f} s, would be "
                           f"{size / 1e9:.1f} GB (target: refused up front, "
                           f"nothing written): {verdict(refused)}")
    for eps, _, _, mode, _, med, _, _, rss, size in rows:
        med = float(med)
        if eps == 1 << 20 and mode == "rule":
            ok = med <= 0.5 and size <= 100e6
            summary.append(f"compile 1,048,576 endpoints, default (rule "
                           f"encoding): {med:.2f} s, {size / 1e6:.1f} MB, "
                           f"{rss / MIB:.0f} MiB (target <= 0.5 s, <= 100 "
                           f"MB): {verdict(ok)}")
        elif eps == 1 << 20 and mode == "full":
            # The first target (<= 2 s) was the default's, which wrote
            # every row then: 2.8 GB, bound by the page cache.
            summary.append(f"compile 1,048,576 endpoints, --routes full "
                           f"(opt-in, {size / 1e9:.1f} GB of output): "
                           f"{med:.2f} s, {rss / MIB:.0f} MiB (no time "
                           f"target; <= 1 GiB of memory: "
                           f"{verdict(rss <= 1 << 30)})")
        elif eps == 1 << 20:
            ok = med <= 2 and rss <= 1 << 30
            summary.append(f"compile 1,048,576 endpoints, routes {mode}: "
                           f"{med:.2f} s, {rss / MIB:.0f} MiB (target <= 2 s,"
                           f" <= 1 GiB): {verdict(ok)}")
        if eps == 1 << 23:
            summary.append(f"compile 8,388,608 endpoints, routes {mode}: "
                           f"{med:.2f} s, {rss / MIB:.0f} MiB (target <= 16 "
                           f"s): {verdict(med <= 16)}")
    return rows


def bench_uneven(a, collc, tmp):
    """The 65,537-endpoint machine: by default, and --routes full
    refused by --max-size.  Rows (mode, median, min, max, rss, bytes,
    refused)."""
    mpath = os.path.join(tmp, "uneven.json")
    opath = os.path.join(tmp, "uneven.routes.json")
    with open(mpath, "w") as f:
        json.dump({"name": "uneven-65537", "nodes": 65536,
                   "tasks_per_node": [2] + [1] * 65535,
                   "network": {"type": "kary", "fanout": 2}}, f)
    res = []
    for mode in ("rule", "full"):
        walls, rss, size, refused = [], 0, 0, False
        for _ in range(a.runs):
            if os.path.exists(opath):
                os.unlink(opath)
            os.sync()
            t0 = time.perf_counter()
            p = subprocess.run(["/usr/bin/time", "-f", "%M", collc, "compile",
                                mpath, "-o", opath, "--routes", mode],
                               capture_output=True, text=True)
            walls.append(time.perf_counter() - t0)
            lines = p.stderr.strip().splitlines()
            rss = max(rss, int(lines[-1]) * 1024)
            if mode == "full":
                # exit 2, nothing written, the size in the message
                refused = (p.returncode == 2 and not os.path.exists(opath)
                           and "the output would be" in p.stderr)
                if not refused:
                    rbench.die("collc did not refuse the full table: "
                               + p.stderr)
                size = int(p.stderr.split("would be ")[1].split(" ")[0])
            else:
                if p.returncode != 0:
                    rbench.die("collc compile failed: " + p.stderr)
                size = os.path.getsize(opath)
        med = statistics.median(walls)
        res.append((mode, med, min(walls), max(walls), rss, size, refused))
        note(f"compile uneven 65,537 routes {mode}: median {med:.3f} s, "
             f"{size:,} bytes{' (refused)' if refused else ''}")
    return res


# ------------------------------------------------------------------ spec
def bench_spec(a, out, md, summary, bdir):
    """Stride-spec evaluation: topo_group_new alone, loading
    excluded (spec_time.c), on 2^31 - 1 endpoints (one task) and on
    1,048,576; every result's size is checked against arithmetic.  And
    collc compile of 4,000 groups over 1,048,576 nodes, end to end."""
    exe = os.path.join(bdir, "spec_time")
    src = os.path.join(HERE, "spec_time.c")
    lib = os.path.join(a.build, "libtopo.a")
    if (not os.path.exists(exe) or os.path.getmtime(exe) < max(
            os.path.getmtime(src), os.path.getmtime(lib))):
        if subprocess.run(["cc", "-std=c11", "-O2", "-I",
                           os.path.join(REPO, "libtopo"), "-o", exe, src,
                           lib, "-ljansson", "-lpthread", "-lm"]).returncode:
            rbench.die("cc spec_time.c failed")
    N = (1 << 31) - 1
    huge = os.path.join(bdir, "spec-huge.json")
    mid = os.path.join(bdir, "spec-1m.json")
    with open(huge, "w") as f:
        json.dump({"name": "huge", "nodes": 1, "tasks_per_node": 1,
                   "endpoints_per_task": N,
                   "network": {"type": "kary", "fanout": 2}}, f)
    with open(mid, "w") as f:
        json.dump({"name": "1m", "nodes": 65536, "tasks_per_node": 16,
                   "network": {"type": "kary", "fanout": 4}}, f)

    def spec_file(name, text):
        path = os.path.join(bdir, name)
        with open(path, "w") as f:
            f.write(text)
        return "@" + path

    pairs2k = "ep 0::2"
    while len(pairs2k) < 2000:
        pairs2k += " - ep 0::2 + ep 0::2"
    pairs16 = "ep 0::2" + " - ep 0::2 + ep 0::2" * 16

    def mult(step, res, n):
        return 0 if res >= n else (n - 1 - res) // step + 1

    strides = sorted(set(e for i in range(100000)
                         for e in range(i % 1000, 1 << 20, i + 2)))
    cases = [
        ("2 KB of ep 0::2 - ep 0::2 + ...", huge,
         spec_file("s2k.txt", pairs2k + " - ep 0::2 + ep 0:7"), 8),
        ("16 pairs of the same", huge,
         spec_file("s16.txt", pairs16 + " - ep 0::2 + ep 0:7"), 8),
        ("odd multiples of 3 below 100", huge,
         "ep 0::3 - ep 0::2 - ep 100:", 17),
        ("ep 0::65537,1::65539 (coprime, sparse)", huge,
         "ep 0::65537,1::65539", mult(65537, 0, N) + mult(65539, 1, N)),
        ("ep 0::3 + ep 1::8000009 - ep 0::3 (lcm > 2^24: bitmap)", huge,
         "ep 0::3 + ep 1::8000009 - ep 0::3",
         sum(1 for x in range(1, N, 8000009) if x % 3)),
        ("all - 100,000 x ep (1M endpoints)", mid,
         spec_file("s1e5.txt", "all - " + " - ".join(
             f"ep {2 * i}" for i in range(100000))), (1 << 20) - 100000),
        ("100,000 strides in one selector (1M endpoints)", mid,
         spec_file("sstr.txt", "eps " + ",".join(
             f"{i % 1000}::{i + 2}" for i in range(100000))), len(strides)),
    ]
    if a.quick:
        cases = cases[:3]
    rows = []
    for label, machine, spec, want in cases:
        secs, rss = [], 0
        for _ in range(a.runs):
            p = subprocess.run(["/usr/bin/time", "-f", "%M", exe, machine,
                                spec], capture_output=True, text=True)
            if p.returncode != 0:
                rbench.die(f"spec_time failed on {label}: {p.stderr}")
            o = json.loads(p.stdout)
            if o["members"] != want:
                rbench.die(f"{label}: {o['members']} members, want {want}")
            secs.append(o["seconds"])
            rss = max(rss, int(p.stderr.strip().splitlines()[-1]) * 1024)
        med = statistics.median(secs)
        rows.append([label, f"{med * 1e3:.3f}", f"{min(secs) * 1e3:.3f}",
                     f"{max(secs) * 1e3:.3f}", want, f"{rss / MIB:.0f}"])
        note(f"spec {label}: median {med * 1e3:.3f} ms")
    write_csv(os.path.join(out, "spec.csv"),
              ["spec", "median_ms", "min_ms", "max_ms", "members",
               "peak_rss_MiB"], rows)
    md += ["## Stride specs", "",
           "topo_group_new alone (loading excluded), median of "
           f"{a.runs} runs; peak RSS includes loading the machine.  Sizes "
           "are checked against arithmetic.  Issue 9 measured the first "
           "two at about 8 minutes and 81 s before specs were evaluated "
           "on runs (not in this run).", "",
           "| spec | median ms | min..max ms | members | peak RSS MiB |",
           "| --- | --- | --- | --- | --- |"]
    md += [f"| {r[0]} | {r[1]} | {r[2]}..{r[3]} | {r[4]:,} | {r[5]} |"
           for r in rows]
    md.append("")
    ok = float(rows[0][1]) <= 10
    summary.append(f"spec: 2 KB of +/- ep 0::2 over 2^31-1 endpoints "
                   f"{rows[0][1]} ms (target <= 10 ms): {verdict(ok)}")

    # 4,000 groups over 1,048,576 nodes: compile was O(groups x nodes)
    g = os.path.join(bdir, "spec-g4000.json")
    with open(g, "w") as f:
        json.dump({"nodes": 1 << 20, "tasks_per_node": 1,
                   "network": {"type": "kary", "fanout": 4},
                   "groups": {f"g{i}": f"node {i * 250}:{i * 250 + 3}"
                              for i in range(4000)}}, f)
    walls = []
    for _ in range(1 if a.quick else a.runs):
        t0 = time.perf_counter()
        p = subprocess.run([os.path.join(a.build, "collc"), "compile", g,
                            "--routes", "none", "-o", os.devnull],
                           capture_output=True, text=True)
        walls.append(time.perf_counter() - t0)
        if p.returncode != 0:
            rbench.die("collc compile of 4,000 groups failed: " + p.stderr)
    med = statistics.median(walls)
    md += [f"collc compile of 4,000 groups over 1,048,576 nodes (a 90 KB "
           f"file; --routes none -o /dev/null): median {med:.2f} s, "
           f"{min(walls):.2f}..{max(walls):.2f} s (the first evaluator took 10 s).",
           ""]
    summary.append(f"compile 4,000 groups over 1,048,576 nodes: {med:.2f} s "
                   f"(target <= 1 s): {verdict(med <= 1)}")


# ------------------------------------------------------------------ replay
def bench_replay(a, out, md, summary, bdir):
    collrun = os.path.join(a.build, "collrun")
    sizes = sorted(SHAPES)
    if a.quick:
        sizes = [1 << 10, 1 << 16, 1 << 20]
    threads = len(os.sched_getaffinity(0))
    rows = []
    for eps in sizes:
        dims = SHAPES[eps]
        nodes = eps // 16
        mpath = rbench.write_machine(
            os.path.join(bdir, f"replay-{eps}.json"), nodes, 16,
            {"type": "torus", "dims": dims})
        meds = []
        for _ in range(a.runs):
            res = rbench.run_json(
                [collrun, "bcast", "--bytes", "8", "--iterations", "5",
                 "--threads", str(threads), "--json", mpath], what="collrun")
            if res.get("members") != eps:
                rbench.die(f"collrun ran {res.get('members')} members, "
                           f"not {eps}")
            meds.append(res["seconds"]["median"])
        med = statistics.median(meds)
        rate = (eps - 1) / med
        rows.append([eps, "x".join(map(str, dims)), len(meds), f"{med:.6f}",
                     f"{min(meds):.6f}", f"{max(meds):.6f}", f"{rate:.0f}"])
        note(f"replay bcast 8 B x {eps:>9}: median {med:.4f} s, "
             f"{rate / 1e6:.2f} M deliveries/s")
    write_csv(os.path.join(out, "replay.csv"),
              ["members", "torus", "runs", "median_s", "min_s", "max_s",
               "deliveries_per_s"], rows)
    md += ["## Replay scaling: bcast of 8 bytes", "",
           f"`collrun bcast --bytes 8 --iterations 5 --threads {threads} "
           "--json MACHINE.json` on torus machines of 16 tasks per node "
           "(compiled in memory); seconds of the collective alone, median "
           f"over {a.runs} runs of each run's median. Deliveries: the members "
           "other than the root, each receiving once.", "",
           "| members | torus | median s | min..max s | deliveries/s |",
           "|---:|---|---:|---|---:|"]
    for eps, dims, n, med, lo, hi, rate in rows:
        md.append(f"| {eps:,} | {dims} | {float(med):.6f} | "
                  f"{float(lo):.6f}..{float(hi):.6f} | "
                  f"{float(rate) / 1e6:.1f} M |")
    md.append("")
    for eps, _, _, med, _, _, rate in rows:
        if eps == 1 << 20:
            med = float(med)
            summary.append(f"bcast 8 B over 1,048,576 members: {med:.4f} s, "
                           f"{float(rate) / 1e6:.1f} M deliveries/s (target "
                           f"<= 0.5 s): {verdict(med <= 0.5)}")
    return rows


# ------------------------------------------------------------------ data
def bench_data(a, out, md, summary, bdir):
    collrun = os.path.join(a.build, "collrun")
    threads = len(os.sched_getaffinity(0))
    if a.quick:
        members, sizes = [2, 16], [8, 64 * KIB, MIB]
    else:
        members = [2, 4, 8, 16]
        sizes = [8, 512, 4 * KIB, 64 * KIB, 256 * KIB, MIB, 4 * MIB,
                 16 * MIB]
    # memcpy rates, measured now, in this run
    mexe = os.path.join(bdir, "memcpy_rate")
    src = os.path.join(HERE, "memcpy_rate.c")
    if (not os.path.exists(mexe)
            or os.path.getmtime(mexe) < os.path.getmtime(src)):
        if subprocess.run(["cc", "-std=c11", "-O2", "-o", mexe, src]).returncode:
            rbench.die("cc memcpy_rate.c failed")
    # per-member buffer sizes, and the working sets N x B of the runs
    msizes = sorted(set(sizes) | {n * b for n in members for b in sizes})
    p = subprocess.run([mexe] + [str(s) for s in msizes], capture_output=True,
                       text=True, check=True)
    rate = {}
    for line in p.stdout.splitlines():
        o = json.loads(line)
        rate[(o["bytes"], False)] = o["reused_gbs"] * 1e9
        rate[(o["bytes"], True)] = o["fresh_gbs"] * 1e9
    write_csv(os.path.join(out, "memcpy.csv"),
              ["bytes", "reused_GBps", "fresh_GBps"],
              [[s, f"{rate[(s, False)] / 1e9:.3f}",
                f"{rate[(s, True)] / 1e9:.3f}"] for s in msizes])

    use_mpi = not a.no_mpi
    if use_mpi:
        mpi_coll = rbench.build_mpi_coll(bdir)
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                   OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    machines = {n: rbench.write_machine(
        os.path.join(bdir, f"data-1x{n}.json"), 1, n,
        {"type": "kary", "fanout": 2}) for n in members}

    def iters_for(nbytes, n):
        # enough iterations for a median, few where one is long
        total = nbytes * n
        return 21 if total <= MIB else 9 if total <= 16 * MIB else 5

    rows = []
    for n in members:
        rounds = a.rounds if n == 16 else max(1, a.rounds // 2)
        for op in DATA_OPS:
            for fresh in (False, True):
                for nbytes in sizes:
                    if op in NEW_OPS[1:] and n * nbytes > BLOCK_OPS_MAX:
                        continue
                    it = iters_for(nbytes, n)
                    c_s, m_s = [], []
                    for r in range(rounds):
                        sides = ["collrun", "mpi"] if use_mpi else ["collrun"]
                        if r % 2:
                            sides.reverse()
                        for side in sides:
                            if side == "collrun":
                                cmd = [collrun, op, "--bytes", str(nbytes),
                                       "--iterations", str(it), "--threads",
                                       str(threads), "--json"]
                                if op in REDUCING:
                                    cmd += ["--type", "int32", "--op", "sum"]
                                if fresh:
                                    cmd.append("--fresh")
                                res = rbench.run_json(cmd + [machines[n]],
                                                      what="collrun")
                                c_s.append(res["seconds"]["median"])
                            else:
                                cmd = ["mpirun", "--oversubscribe",
                                       "--allow-run-as-root", "-np", str(n),
                                       "--mca", "btl", "self,vader",
                                       mpi_coll, op, str(nbytes), str(it)]
                                if fresh:
                                    cmd.append("--fresh")
                                res = rbench.run_json(cmd, env=env,
                                                      what="mpirun")
                                m_s.append(res["seconds"]["median"])
                    c = statistics.median(c_s)
                    m = statistics.median(m_s) if m_s else float("nan")
                    ratio = (statistics.median(x / y for x, y in
                                               zip(c_s, m_s))
                             if m_s else float("nan"))
                    copy_bytes = copy_bytes_of(op, n, nbytes)
                    limit = copy_bytes / rate[(nbytes, fresh)]
                    wlimit = copy_bytes / rate[(n * nbytes, fresh)]
                    rows.append([op, n, nbytes, "fresh" if fresh else
                                 "reused", rounds, it, f"{c:.7f}",
                                 f"{m:.7f}", f"{ratio:.4f}", copy_bytes,
                                 f"{limit:.7f}", f"{limit / c:.4f}",
                                 f"{wlimit:.7f}", f"{wlimit / c:.4f}"])
                    note(f"data {op:7} N={n:2} {human(nbytes):>7} "
                         f"{'fresh ' if fresh else 'reused'}: collrun "
                         f"{c * 1e3:.3f} ms, MPI {m * 1e3:.3f} ms, ratio "
                         f"{ratio:.2f}, copy limit {limit * 1e3:.3f} ms")
    write_csv(os.path.join(out, "data.csv"),
              ["op", "members", "bytes", "buffers", "rounds", "iterations",
               "collrun_s", "mpi_s", "ratio_collrun_mpi", "copy_bytes",
               "copy_limit_s", "fraction_of_limit", "ws_copy_limit_s",
               "fraction_of_ws_limit"], rows)

    md += ["## Data movement: collrun, Open MPI and the memory-copy limit",
           "",
           "1 node x N tasks (collrun: machine with 1 node of N tasks, all "
           "shared memory; Open MPI: `mpirun --oversubscribe -np N --mca btl "
           "self,vader mpi_coll OP BYTES ITER [--fresh]`). BYTES per member "
           "as collrun's `--bytes`. Both time the collective alone and check "
           "every result; collrun and MPI alternate, the first alternating "
           "too. Columns: medians over rounds (16 members: "
           f"{a.rounds} rounds; fewer members: {max(1, a.rounds // 2)}); "
           "ratio = median per-round collrun/MPI (target <= 0.5 at 16 "
           "members, 64 KiB..16 MiB, for the first four operations); "
           "copy limit = (N-1) x BYTES (allreduce: 2(N-1) x BYTES; "
           "allgather, reduce-scatter, alltoall: N(N-1) x BYTES, their "
           "BYTES being a block; cases holding more than "
           f"{BLOCK_OPS_MAX >> 20} MiB of blocks per member are left out) "
           "at this machine's single-thread memcpy rate for a buffer of BYTES "
           "(memcpy_rate, same run), fresh or reused as the row; "
           "'of limit' = limit / collrun time (1 = as fast as memcpy; can "
           "exceed 1 with 2 threads). The per-buffer rate flatters the limit "
           "where one buffer fits a cache level but the N buffers of the run "
           "do not, so a second limit uses the memcpy rate for a buffer of "
           "the run's working set, N x BYTES ('ws limit'). "
           f"**Oversubscribed where N > {threads}:** more MPI ranks than "
           "the CPUs this runs on time-share them, which slows Open MPI "
           f"(collrun runs {threads} threads whatever N); the fair "
           f"comparison is N = {threads} here, and stage colls part 1.", "",
           "| op | N | bytes | buffers | collrun us | MPI us | ratio | copy "
           "limit us | of limit | ws limit us | of ws limit |",
           "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for (op, n, nbytes, buf, rounds, it, c, m, ratio, cb, lim,
         frac, wlim, wfrac) in rows:
        md.append(f"| {op} | {n} | {human(nbytes)} | {buf} | "
                  f"{float(c) * 1e6:.1f} | {float(m) * 1e6:.1f} | "
                  f"{float(ratio):.2f} | {float(lim) * 1e6:.2f} | "
                  f"{float(frac):.2f} | {float(wlim) * 1e6:.2f} | "
                  f"{float(wfrac):.2f} |")
    md.append("")
    met = missed = 0
    worst = []
    for (op, n, nbytes, buf, rounds, it, c, m, ratio, cb, lim,
         frac, wlim, wfrac) in rows:
        if n == 16 and nbytes >= 64 * KIB and use_mpi and op in OPS:
            if float(ratio) <= 0.5:
                met += 1
            else:
                missed += 1
                worst.append(f"{op} {human(nbytes)} {buf} {float(ratio):.2f}")
        if op == "bcast" and n == 16 and nbytes == 16 * MIB:
            summary.append(f"bcast 16 MiB to 16 members, {buf} buffers: "
                           f"{float(frac):.2f} of the memory-copy limit "
                           f"({float(c) * 1e3:.1f} ms vs "
                           f"{float(lim) * 1e3:.1f} ms; target >= 0.5): "
                           f"{verdict(float(frac) >= 0.5)}; "
                           f"{float(wfrac):.2f} of the working-set limit "
                           f"({float(wlim) * 1e3:.1f} ms)")
    if use_mpi:
        summary.append(f"16 members, 64 KiB..16 MiB, collrun <= 0.5x Open "
                       f"MPI: {met} of {met + missed} cases met"
                       + (f"; missed: {', '.join(worst)}" if worst else ""))
    return rows


# ------------------------------------------------------------------ colls
def bench_colls(a, out, md, summary, bdir):
    """All nine operations beside Open MPI (replay.py parts 1 and 2): the
    fair comparison, 2 members on 2 threads against 2 ranks bound to 2
    cores, then 16 members against 16 ranks, oversubscribed and labelled
    so, both with a barrier between MPI's calls and back to back; and the
    whole runs at scale (part 4).  Its Markdown becomes this stage's
    section; replay-mpi.csv has every run."""
    cmd = [sys.executable, os.path.join(HERE, "replay.py"), a.build,
           "--out", out, "--parts", "1,2,4"]
    if a.quick:
        cmd.append("--quick")
    if a.no_mpi:
        # parts 1 and 2 are comparisons with Open MPI; part 4 needs none
        rbench.note("colls: parts 1 and 2 skipped (--no-mpi)")
        cmd[cmd.index("1,2,4")] = "4"
        cmd.append("--no-mpi")
    if subprocess.run(cmd).returncode != 0:
        rbench.die("replay.py (stage colls) failed")
    text = open(os.path.join(out, "replay.md")).read().splitlines()
    # One level down: results.md has the title.
    md += [("#" + l if l.startswith("#") else l) for l in text] + [""]
    # replay.md's own summary: both MPI timings, the copy limit.
    i = text.index("## Summary") + 2 if "## Summary" in text else len(text)
    while i < len(text) and text[i].startswith("- "):
        summary.append(f"colls: {text[i][2:]} (replay.md)")
        i += 1


# ------------------------------------------------------------------ costs
def bench_costs(a, out, md, summary, bdir):
    """The measured defaults of libtopo/machine/costs.c: reduce_rate (libtopo's
    reduction kernel, ns per byte) and, where Open MPI is at hand,
    loggp_fit (LogGP of MPI between two cores over shared memory).  --runs
    invocations of each, alternating; per parameter, the median over
    invocations of each one's median, and the range of those medians."""
    runs = a.runs
    exe = os.path.join(bdir, "reduce_rate")
    src = os.path.join(HERE, "reduce_rate.c")
    lib = os.path.join(a.build, "libtopo.a")
    if (not os.path.exists(exe) or os.path.getmtime(exe) < max(
            os.path.getmtime(src), os.path.getmtime(lib))):
        if subprocess.run(["cc", "-std=c11", "-O2", "-I",
                           os.path.join(REPO, "libtopo"), "-o", exe, src,
                           lib, "-ljansson", "-lpthread", "-lm"]).returncode:
            rbench.die("cc reduce_rate.c failed")
    fit = None
    if a.no_mpi or not (shutil.which("mpicc") and shutil.which("mpirun")):
        note("costs: no Open MPI (or --no-mpi): loggp_fit skipped")
    elif os.cpu_count() < 2:
        note("costs: one CPU: loggp_fit needs two, skipped")
    else:
        fit = os.path.join(bdir, "loggp_fit")
        fsrc = os.path.join(HERE, "loggp_fit.c")
        if (not os.path.exists(fit)
                or os.path.getmtime(fit) < os.path.getmtime(fsrc)):
            if subprocess.run(["mpicc", "-std=c11", "-O2", "-o", fit,
                               fsrc]).returncode:
                rbench.die("mpicc loggp_fit.c failed")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

    def last_json(cmd, what):
        try:
            p = subprocess.run(cmd, env=env, capture_output=True, text=True,
                               timeout=rbench.TIMEOUT)
        except subprocess.TimeoutExpired:
            rbench.die(f"{what}: no answer after {rbench.TIMEOUT} s")
        lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
        if p.returncode != 0 or not lines:
            sys.stderr.write(p.stdout[-2000:] + p.stderr[-2000:])
            rbench.die(f"{what}: exit {p.returncode}: {' '.join(cmd)}")
        return json.loads(lines[-1])

    red, lgp = [], []
    load0 = os.getloadavg()[0]
    for r in range(runs):
        red.append(last_json([exe, "11" if a.quick else "101"],
                             "reduce_rate"))
        note(f"costs run {r + 1}/{runs}: reduce sum int32 "
             f"{red[-1]['sum']['int32']:.4f} ns/B")
        if fit:
            lgp.append(last_json(
                ["mpirun", "--allow-run-as-root", "-np", "2", "--bind-to",
                 "core", "--mca", "btl", "self,vader", fit,
                 "5" if a.quick else "41"], "loggp_fit"))
            o = lgp[-1]
            note(f"costs run {r + 1}/{runs}: shm L {o['L']['median']:.0f} "
                 f"o {o['o']['median']:.0f} g {o['g']['median']:.0f} ns, "
                 f"G {o['G']['median']:.4f} ns/B")

    def across(vals):
        return statistics.median(vals), min(vals), max(vals)

    rows = []
    for i, o in enumerate(red):
        for k in o["kernels"]:
            rows.append([i + 1, k["type"], k["op"]] +
                        [k[s] for s in ("median", "q1", "q3", "min", "max")])
    write_csv(os.path.join(out, "reduce.csv"),
              ["run", "type", "op", "median_ns_per_byte", "q1", "q3", "min",
               "max"], rows)
    kernels = [(k["type"], k["op"]) for k in red[0]["kernels"]]
    md += ["## Costs: the measured defaults of libtopo/machine/costs.c", "",
           f"`reduce_rate` ({len(red)} runs of "
           f"{red[0]['reps']} rounds): libtopo's reduction kernel "
           "(topo__reduce) on two warm buffers of 1 MiB, ns per byte of "
           "one operand; the median over runs of each run's median, and "
           "the range of those medians.", "",
           "| type | op | ns/B | runs' range |", "|---|---|---:|---|"]
    for ty, op in kernels:
        v = [k["median"] for o in red for k in o["kernels"]
             if (k["type"], k["op"]) == (ty, op)]
        med, lo, hi = across(v)
        md.append(f"| {ty} | {op} | {med:.4f} | {lo:.4f}..{hi:.4f} |")
    md.append("")
    sums = {t: across([o["sum"][t] for o in red])[0] for t in red[0]["sum"]}
    summary.append("costs: reduce (sum) ns/B: " + ", ".join(
        f"{t} {v:.3f}" for t, v in sums.items()))
    if lgp:
        names = ["L", "o", "g", "G", "o_s", "o_r", "L_raw", "rtt8",
                 "big_intercept"]
        rows = [[i + 1, n] + [o[n][s] for s in ("median", "q1", "q3", "min",
                                                  "max")]
                for i, o in enumerate(lgp) for n in names]
        write_csv(os.path.join(out, "loggp.csv"),
                  ["run", "parameter", "median_ns", "q1", "q3", "min",
                   "max"], rows)
        md += [f"`loggp_fit` ({len(lgp)} runs of {lgp[0]['rounds']} "
               "rounds; `mpirun -np 2 --bind-to core --mca btl self,vader`)"
               ": LogGP of Open MPI between two cores over shared memory, "
               "by the PRTT method (loggp_fit.c). Per parameter: the median "
               "over runs of each run's median over rounds, the range of "
               "the runs' medians, and the median over runs of the rounds' "
               "quartiles. ns (G: ns per byte). L, o, g, G are the "
               "model's (L_raw = RTT/2 - o_s - o_r - 7G; when it is "
               "negative, L = 0 and o = (RTT/2 - 7G) / 2: loggp_fit.c says "
               "why).", "",
               "| parameter | median | runs' range | rounds' q1..q3 |",
               "|---|---:|---|---|"]
        med = {}
        for n in names:
            m, lo, hi = across([o[n]["median"] for o in lgp])
            q1 = statistics.median(o[n]["q1"] for o in lgp)
            q3 = statistics.median(o[n]["q3"] for o in lgp)
            med[n] = m
            md.append(f"| {n} | {m:.4g} | {lo:.4g}..{hi:.4g} | "
                      f"{q1:.4g}..{q3:.4g} |")
        md += ["", "One-way time (RTT / 2, median over runs) beside the "
               "model's L + 2o + (s - 1) G with the medians above (the "
               "model has no rendezvous: large messages cost a constant "
               "more than it says):", "",
               "| bytes | measured ns | model ns | model / measured |",
               "|---:|---:|---:|---:|"]
        for s in lgp[0]["oneway"]:
            meas = statistics.median(o["oneway"][s] for o in lgp)
            model = (med["L"] + 2 * med["o"]
                     + (int(s) - 1) * med["G"])
            md.append(f"| {human(int(s))} | {meas:.0f} | {model:.0f} | "
                      f"{model / meas:.2f} |")
        md.append("")
        summary.append(f"costs: shm L {med['L']:.0f} o {med['o']:.0f} (o_s "
                       f"{med['o_s']:.0f}, o_r {med['o_r']:.0f}) g "
                       f"{med['g']:.0f} ns, G {med['G']:.4f} ns/B "
                       f"(loggp_fit, {len(lgp)} runs)")
    md += [f"Load average {load0:.2f} before this stage, "
           f"{os.getloadavg()[0]:.2f} after: other work on the machine "
           "disturbs both tools.", ""]
    head = [f"# costs ({datetime.datetime.now():%Y-%m-%d %H:%M})", "",
            f"Host: {rbench.cpu_model()}, {os.cpu_count()} CPUs; "
            + (rbench.first_line(["mpirun", "--version"]) if fit
               else "no Open MPI") + ".", ""]
    with open(os.path.join(out, "costs.md"), "w") as f:
        f.write("\n".join(head + md) + "\n")


# ------------------------------------------------------------------ plots
PLOT_HEAD = """set terminal pngcairo size 900,600 noenhanced font ',11'
set datafile separator ','
set key top left
set grid
"""


def gnuplot(script, out):
    if not shutil.which("gnuplot"):
        note("gnuplot not found: no plots (make bench-deps)")
        return False
    p = subprocess.run(["gnuplot"], input=script, text=True, cwd=out,
                       capture_output=True)
    if p.returncode != 0:
        rbench.die("gnuplot failed:\n" + p.stderr[-3000:])
    return True


def plots(out, md, have):
    made = []
    if "compile" in have:
        # split by routes mode into files gnuplot can read directly
        rows = list(csv.DictReader(open(os.path.join(out, "compile.csv"))))
        for mode in ("rule", "none", "full"):
            with open(os.path.join(out, f".compile-{mode}.dat"), "w") as f:
                for r in rows:
                    if r["routes"] == mode:
                        f.write(f"{r['endpoints']},{r['median_s']},"
                                f"{int(r['peak_rss_bytes']) / MIB},"
                                f"{int(r['output_bytes']) / MIB}\n")
        s = PLOT_HEAD + """set output 'compile.png'
set multiplot layout 1,2 title 'collc compile, torus, 16 tasks/node (median)'
set key bottom right font ',9'
set logscale xy
set xlabel 'endpoints'
set ylabel 'seconds'
set format x '%.0s%c'
plot '.compile-rule.dat' u 1:2 w lp pt 9 t 'default (rule-encoded)', \
     '.compile-none.dat' u 1:2 w lp pt 7 t 'routes none', \
     '.compile-full.dat' u 1:2 w lp pt 5 t 'routes full', \
     x*1.3e-7 dt 2 lc rgb 'gray' t 'linear: 130 ns/endpoint', \
     2 dt 3 lc rgb 'red' t '2 s'
set ylabel 'MiB'
plot '.compile-none.dat' u 1:3 w lp pt 7 t 'peak RSS, routes none', \
     '.compile-full.dat' u 1:3 w lp pt 5 t 'peak RSS, routes full', \
     '.compile-full.dat' u 1:4 w lp pt 4 t 'output, routes full', \
     '.compile-none.dat' u 1:4 w lp pt 6 t 'output, routes none', \
     '.compile-rule.dat' u 1:4 w lp pt 8 t 'output, default', \
     x*54/1048576 dt 2 lc rgb 'gray' t 'linear: 54 B/endpoint', \
     1024 dt 3 lc rgb 'red' t '1 GiB'
unset multiplot
"""
        if gnuplot(s, out):
            made.append("compile.png")
    if "replay" in have:
        s = PLOT_HEAD + """set output 'replay.png'
set logscale xy
set xlabel 'members'
set ylabel 'seconds (median, log)'
set y2label 'deliveries per second (linear)'
set y2tics
set y2range [0:*]
set format x '%.0s%c'
set format y '%.0s%cs'
set format y2 '%.0s%c'
set key bottom right
set title 'collrun bcast of 8 bytes, torus, 16 tasks/node'
plot 'replay.csv' every ::1 u 1:4 w lp pt 7 t 'seconds', \
     'replay.csv' every ::1 u 1:7 axes x1y2 w lp pt 5 t 'deliveries/s', \
     0.5 dt 3 lc rgb 'red' t '0.5 s'
"""
        if gnuplot(s, out):
            made.append("replay.png")
    if "data" in have:
        rows = list(csv.DictReader(open(os.path.join(out, "data.csv"))))
        ns = sorted({int(r["members"]) for r in rows})
        nmax = ns[-1]
        ncpu = len(os.sched_getaffinity(0))
        over = (f"; Open MPI OVERSUBSCRIBED: {nmax} ranks on {ncpu} CPUs"
                if nmax > ncpu else "")
        for png, pops in (("data.png", OPS), ("data-new.png", NEW_OPS)):
            pops = [o for o in pops if any(r["op"] == o for r in rows)]
            if not pops:
                continue
            for op in pops:
                for buf in ("reused", "fresh"):
                    with open(os.path.join(out, f".data-{op}-{buf}.dat"),
                              "w") as f:
                        for r in rows:
                            if (r["op"] == op and r["buffers"] == buf
                                    and int(r["members"]) == nmax):
                                f.write(f"{r['bytes']},{r['collrun_s']},"
                                        f"{r['mpi_s']},{r['copy_limit_s']},"
                                        f"{r.get('ws_copy_limit_s') or r['copy_limit_s']}\n")
            s = PLOT_HEAD.replace('900,600', '1400,800') + f"""set output '{png}'
set multiplot layout 2,{len(pops)} title 'time vs bytes per member (per block: allgather, reduce-scatter, alltoall), {nmax} members, 1 node (median){over}'
set logscale xy
set xtics ('8' 8, '512' 512, '4K' 4096, '64K' 65536, '1M' 1048576, '16M' 16777216)
set format y '%.0s%cs'
set key top left font ',8'
"""
            for buf in ("reused", "fresh"):
                for op in pops:
                    s += (f"set title '{op}, {buf} buffers'\n"
                          f"plot '.data-{op}-{buf}.dat' u 1:2 w lp pt 7 t "
                          f"'collrun', '' u 1:3 w lp pt 5 t 'Open MPI', "
                          f"'' u 1:4 w l dt 2 lc rgb 'gray' t 'copy limit', "
                          f"'' u 1:5 w l dt 3 lc rgb 'black' t 'ws copy limit'\n")
            s += "unset multiplot\n"
            if gnuplot(s, out):
                made.append(png)
    for name in os.listdir(out):
        if name.startswith("."):
            os.unlink(os.path.join(out, name))
    if made:
        md += ["## Plots", ""] + [f"![{m}]({m})" for m in made] + [""]
    return made


def save_part(out, name, md, summary):
    """Keeps a stage's Markdown and summary lines in OUT/parts/, so that a
    later --only run of another stage still finds them for results.md."""
    d = os.path.join(out, "parts")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name + ".json"), "w") as f:
        json.dump({"md": md, "summary": summary}, f)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("build")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: few sizes, 1 run/round")
    ap.add_argument("--out", default=os.path.join(REPO, "bench-results"))
    ap.add_argument("--runs", type=int, help="runs per compile/replay "
                    "point (default 5; quick 1)")
    ap.add_argument("--rounds", type=int, help="rounds per data point at 16 "
                    "members (default 3, half that below; quick 1)")
    ap.add_argument("--only",
                    default="compile,spec,replay,data,colls,costs,predict,"
                    "plots")
    ap.add_argument("--no-mpi", action="store_true")
    a = ap.parse_args()
    a.runs = a.runs or (1 if a.quick else 5)
    a.rounds = a.rounds or (1 if a.quick else 3)
    only = set(a.only.split(","))
    for tool in ("collc", "collrun"):
        if not os.access(os.path.join(a.build, tool), os.X_OK):
            rbench.die(f"{a.build}/{tool} not found: build it first (make)", 2)
    if ("data" in only or "colls" in only) and not a.no_mpi:
        missing = [t for t in ("mpicc", "mpirun") if not shutil.which(t)]
        if missing:
            rbench.die(f"Open MPI not found ({', '.join(missing)}): make "
                       "bench-deps, or --no-mpi", 2)
    out = a.out
    os.makedirs(out, exist_ok=True)
    bdir = os.path.join(a.build, "bench")
    os.makedirs(bdir, exist_ok=True)
    t0 = time.time()
    now = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    md = [f"# collc benchmarks ({now}{', --quick smoke run' if a.quick else ''})",
          "", f"Host: {rbench.cpu_model()}, {os.cpu_count()} CPUs; "
          f"{rbench.first_line(['mpirun', '--version']) if shutil.which('mpirun') else 'no Open MPI'}.",
          ""]
    have = set()
    for name, fn, args in (("compile", bench_compile, ()),
                           ("spec", bench_spec, (bdir,)),
                           ("replay", bench_replay, (bdir,)),
                           ("data", bench_data, (bdir,)),
                           ("colls", bench_colls, (bdir,)),
                           ("costs", bench_costs, (bdir,)),
                           ("predict", pbench.bench_predict,
                            (bdir, write_csv, verdict))):
        if name in only:
            t1 = time.time()
            pmd, psum = [], []
            fn(a, out, pmd, psum, *args)
            psum.append(f"{name} stage took {(time.time() - t1) / 60:.1f} "
                        "min")
            save_part(out, name, pmd, psum)
            have.add(name)
    if "plots" in only:
        have |= {k for k, f in (("compile", "compile.csv"),
                                ("replay", "replay.csv"),
                                ("data", "data.csv"))
                 if os.path.exists(os.path.join(out, f))}
        pmd = []
        plots(out, pmd, have)
        save_part(out, "plots", pmd, [])
    summary = []
    for name in ("compile", "spec", "replay", "data", "colls", "costs",
                 "predict", "plots"):
        f = os.path.join(out, "parts", name + ".json")
        if os.path.exists(f):
            part = json.load(open(f))
            md += part["md"]
            summary += part["summary"]
    took = time.time() - t0
    md[2:2] = ["## Summary", ""] + [f"- {s}" for s in summary] + [
        "", f"This invocation ({a.only}) took {took / 60:.1f} min.", ""]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    print("\n".join(["", "Summary (" + os.path.join(out, "results.md") + "):"]
                    + [f"  {s}" for s in summary]
                    + [f"  took {took / 60:.1f} min"]))


if __name__ == "__main__":
    main()
