#!/usr/bin/env python3
"""Compile-scaling benchmark (`make bench`): time, peak memory and output size
of `collc compile` (default trees, written to a file) on torus machines of 16
tasks per node, up to 1,048,576 endpoints (and more with --max), with the
route tables rule-encoded (the default), in full (`--routes full`) and without
them (`--routes none`).  The full tables hold about sum(degree^2) targets, which the
hierarchical tree makes quadratic in the members per node: that is the size of
the data, not of the program's work, and the output-size column shows it.  Each size runs several times; the median wall time and the largest
peak RSS are reported, plus time and memory per endpoint so that linearity
shows as flat columns.  Targets: 1,048,576 endpoints in <= 2 s and
<= 1 GiB.

usage: compile.py BUILD [--runs N] [--max ENDPOINTS] [--out DIR]
"""
import argparse, json, os, shutil, statistics, subprocess, sys, tempfile, time

def machine(dims, tpn):
    nodes = 1
    for d in dims:
        nodes *= d
    return {"name": "torus-" + "x".join(map(str, dims)), "nodes": nodes,
            "tasks_per_node": tpn,
            "network": {"type": "torus", "dims": dims, "physical_root": 0}}

def run(cmd):
    """Wall seconds and peak RSS bytes of one run.  The peak comes from GNU
    time when it is installed: a child forked from this Python process
    would otherwise report Python's own RSS as its floor."""
    gnu_time = shutil.which("time") or "/usr/bin/time"
    with tempfile.NamedTemporaryFile("r") as rss_file:
        if os.path.exists(gnu_time):
            cmd = [gnu_time, "-f", "%M", "-o", rss_file.name] + cmd
        t0 = time.perf_counter()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
        _, status, ru = os.wait4(p.pid, 0)
        wall = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != 0:
            sys.exit(f"bench: {' '.join(cmd)} failed ({status})")
        text = rss_file.read().strip()
        kib = int(text.splitlines()[-1]) if text else ru.ru_maxrss
    return wall, kib * 1024  # KiB on Linux


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--max", type=int, default=1 << 20)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    collc = os.path.join(a.build, "collc")
    shapes = [[4, 4, 4, 4], [8, 8, 8, 4], [8, 8, 8, 8], [16, 8, 8, 8],
              [16, 16, 8, 8], [16, 16, 16, 8], [16, 16, 16, 16],
              [32, 16, 16, 16], [32, 32, 16, 16], [32, 32, 32, 16]]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for dims in shapes:
            m = machine(dims, 16)
            eps = m["nodes"] * 16
            if eps > a.max:
                break
            mpath = os.path.join(tmp, "m.json")
            opath = os.path.join(tmp, "routes.json")
            with open(mpath, "w") as f:
                json.dump(m, f)
            for mode in ("rule", "full", "none"):
                walls, rss = [], 0
                for _ in range(a.runs):
                    # Start each run without the previous output and with
                    # the page cache written back, untimed: otherwise the
                    # rename over a gigabytes-large old file bills its
                    # freeing, and earlier runs' writeback, to this run.
                    if os.path.exists(opath):
                        os.unlink(opath)
                    os.sync()
                    w, r = run([collc, "compile", mpath, "-o", opath,
                                "--routes", mode, "--max-size", "none"])
                    walls.append(w)
                    rss = max(rss, r)
                size = os.path.getsize(opath)
                os.unlink(opath)
                med = statistics.median(walls)
                rows.append((eps, m["nodes"], "x".join(map(str, dims)), mode,
                             med, min(walls), max(walls), rss, size))
                print(f"{eps:>9} endpoints ({m['name']}, routes {mode}): "
                      f"median {med:.3f} s (min {min(walls):.3f}, "
                      f"max {max(walls):.3f}), peak {rss / 2**20:.1f} MiB, "
                      f"output {size / 2**20:.1f} MiB, "
                      f"{med / eps * 1e9:.0f} ns/endpoint, "
                      f"{rss / eps:.0f} B/endpoint", flush=True)
    lines = ["| endpoints | nodes | torus | routes | median s | min s | max s "
             "| peak MiB | output MiB | ns/endpoint | peak B/endpoint |",
             "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for eps, nodes, dims, mode, med, lo, hi, rss, size in rows:
        lines.append(f"| {eps} | {nodes} | {dims} | {mode} | {med:.3f} | {lo:.3f} | "
                     f"{hi:.3f} | {rss / 2**20:.1f} | {size / 2**20:.1f} | "
                     f"{med / eps * 1e9:.0f} | {rss / eps:.0f} |")
    table = "\n".join(lines)
    print()
    print(table)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "compile.md"), "w") as f:
            f.write(table + "\n")
    for eps, _, _, mode, med, _, _, rss, size in rows:
        if eps != 1 << 20:
            continue
        ok = med <= 2.0 and rss <= 2**30
        print(f"target 1,048,576 endpoints <= 2 s and <= 1 GiB, routes {mode}: "
              f"{'met' if ok else 'MISSED'} ({med:.2f} s, {rss / 2**20:.0f} MiB, "
              f"output {size / 2**20:.0f} MiB)")

if __name__ == "__main__":
    main()
