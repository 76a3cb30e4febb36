"""The predict stage of `make bench`: `collrun bcast --predict`
of 8 bytes over torus machines of 16 tasks per node, 65,536 to 8,388,608
members, compiled in memory from the machine description, end to end: wall
seconds of the whole process and its peak RSS (GNU time), median and range
over --runs runs.  The target: 8,388,608 members in at most 3 s and 1 GiB.

Also the same plans predicted with every other bcast tree at 1,048,576
members, and reduce / scatter / gather at 65,536 (scatter or-combine,
whose slots grow as n^2, at 2,048), to show what a prediction
costs beyond the flood's dissemination fast path.
"""
import json, os, statistics, subprocess, tempfile

import replay as rbench  # noqa: E402

SHAPES = {1 << 11: [8, 4, 4], 1 << 16: [8, 8, 8, 8], 1 << 20: [16, 16, 16, 16],
          1 << 23: [32, 32, 32, 16]}


def timed(cmd):
    """Runs cmd under GNU time: (wall s, peak RSS MiB, parsed JSON)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as tf:
        p = subprocess.run(["/usr/bin/time", "-f", "%e %M", "-o", tf.name]
                           + cmd, capture_output=True, text=True)
        if p.returncode != 0:
            rbench.die(f"{' '.join(cmd)} failed ({p.returncode}): "
                       f"{p.stderr.strip()}")
        wall, kb = tf.read().split()[-2:]
    return float(wall), int(kb) / 1024, json.loads(p.stdout)


def bench_predict(a, out, md, summary, bdir, write_csv, verdict):
    collrun = os.path.join(a.build, "collrun")
    sizes = [n for n in sorted(SHAPES) if n >= 1 << 16]
    cases = [(eps, "bcast", "physical", None) for eps in sizes]
    if not a.quick:
        cases += [(1 << 20, "bcast", t, None)
                  for t in ("hierarchical", "binomial", "chain", "kary:4")]
        cases += [(1 << 16, op, t, alg) for op, t, alg in (
            ("reduce", "hierarchical", "hierarchical"),
            ("reduce", "binomial", "tree"),
            ("scatter", "physical", "tree"),
            ("gather", "physical", "chunked"),
            ("gather", "physical", "tree"))]
        # or-combine sends 2n(n - 1) slots: 2,048 members, not 65,536
        cases += [(1 << 11, "scatter", "physical", "or-combine")]
    rows = []
    for eps, op, tree, alg in cases:
        dims = SHAPES[eps]
        mpath = rbench.write_machine(
            os.path.join(bdir, f"predict-{eps}.json"), eps // 16, 16,
            {"type": "torus", "dims": dims})
        cmd = [collrun, op, "-t", tree, "--predict", "--json", mpath]
        if alg:
            cmd[2:2] = ["--algorithm", alg]
        walls, rss, res = [], [], None
        for _ in range(a.runs):
            w, m, res = timed(cmd)
            walls.append(w)
            rss.append(m)
            if res.get("members") != eps:
                rbench.die(f"collrun predicted {res.get('members')} "
                           f"members, not {eps}")
        msgs = res["messages"]["shm"] + res["messages"]["net"]
        rows.append([eps, op, alg or res["algorithm"], tree, len(walls),
                     f"{statistics.median(walls):.2f}", f"{min(walls):.2f}",
                     f"{max(walls):.2f}", f"{max(rss):.0f}", msgs,
                     f"{res['predicted']['seconds']:.9f}",
                     res["predicted"]["events"]])
        rbench.note(f"predict {op} {tree} x {eps:>9}: median "
                    f"{statistics.median(walls):.2f} s, {max(rss):.0f} MiB, "
                    f"predicted {res['predicted']['seconds'] * 1e6:.1f} us")
    write_csv(os.path.join(out, "predict.csv"),
              ["members", "op", "algorithm", "tree", "runs", "median_s",
               "min_s", "max_s", "peak_rss_mib", "messages",
               "predicted_s", "events"], rows)
    md += ["## Prediction at scale", "",
           "`collrun OP -t TREE --predict --json MACHINE.json` on torus "
           "machines of 16 tasks per node (8 bytes per member, compiled in "
           "memory): wall seconds of the whole process, loading included, "
           f"median and range over {a.runs} runs, and the largest peak RSS "
           "(GNU time).  `predicted` is the simulated time on the described "
           "machine with the default costs.", "",
           "| members | op | algorithm | tree | median s | min..max s | "
           "peak RSS MiB | messages | predicted us | events |",
           "|---:|---|---|---|---:|---|---:|---:|---:|---:|"]
    for eps, op, alg, tree, _, med, lo, hi, mib, msgs, pred, ev in rows:
        md.append(f"| {eps:,} | {op} | {alg} | {tree} | {med} | {lo}..{hi} "
                  f"| {mib} | {msgs:,} | {float(pred) * 1e6:.1f} | {ev:,} |")
    md.append("")
    for r in rows:
        if r[0] == 1 << 23 and r[1] == "bcast":
            med, mib = float(r[5]), float(r[8])
            summary.append(f"predict bcast 8 B over 8,388,608 members: "
                           f"{med:.2f} s, {mib:.0f} MiB (target <= 3 s, "
                           f"<= 1024 MiB): {verdict(med <= 3 and mib <= 1024)}")
