#!/usr/bin/env python3
"""matrix.py COLLC COLLRUN INPUT GROUP [compile -g NAME=SPEC]

Runs collrun for every operation x algorithm x tree x root over one group
and checks each --json report against counts computed here from the tree
(read from a collc compile of the same machine): members, root, messages
and bytes moved split into shm and net, and "verified".  Prints one line
per run: "... ok", or what differed.  INPUT is a ROUTES.json or a
MACHINE.json; GROUP is what -g gets (a group name, or a stride spec for a
machine)."""
import json
import subprocess
import sys

collc, collrun, src, group = sys.argv[1:5]
extra = sys.argv[5:]  # e.g. ["-g", "strided=cols 1::3"]
TREES = ["physical", "hierarchical", "binomial", "chain", "kary:3"]
B = 12  # bytes per member: 12 int8, or 3 int32 for reduce

# The trees, as collc compiles them: the reference for every count.
machine_file = src
doc = json.loads(subprocess.run(
    [collc, "compile", machine_file, "-t", ",".join(TREES)] + extra,
    check=True, capture_output=True, text=True).stdout) \
    if "format" not in open(src).read(200) else json.load(open(src))
m = doc["machine"]
E = m["endpoints_per_task"]
task_node = [n for n, k in enumerate(m["tasks_per_node"]) for _ in range(k)]
gname = group if group in [g["name"] for g in doc["groups"]] else \
    extra[1].split("=", 1)[0]
g = next(x for x in doc["groups"] if x["name"] == gname)
members = g["members"]
n = len(members)


def node(ep):
    return task_node[ep // E]


def kind(a, b):
    return "shm" if node(a) == node(b) else "net"


def expect(op, algo, tree, root, seg, chunk):
    """messages {shm, net} and bytes_moved {shm, net} per iteration."""
    parent = dict(zip(members, tree["parent"]))
    adj = {v: [] for v in members}
    for v, p in parent.items():
        if p != -1:
            adj[v].append(p)
            adj[p].append(v)
    # Subtree sizes with the tree re-rooted at the logical root.
    order, up, seen = [root], {root: None}, {root}
    for v in order:
        for w in adj[v]:
            if w not in seen:
                seen.add(w)
                up[w] = v
                order.append(w)
    size = {v: 1 for v in members}
    for v in reversed(order[1:]):
        size[up[v]] += size[v]
    msg = {"shm": 0, "net": 0}
    byt = {"shm": 0, "net": 0}

    def add(k, count, nbytes):
        msg[k] += count
        byt[k] += nbytes
    edges = [(v, p) for v, p in parent.items() if p != -1]
    if op == "bcast":
        s = -(-B // seg) if seg else 1
        for v, p in edges:
            add(kind(v, p), s, B)
    elif algo == "or-combine":
        for v, p in edges:
            add(kind(v, p), 2 * n, 2 * n * B)
    elif op in ("scatter", "gather") and algo == "tree":
        for v in order[1:]:
            add(kind(v, up[v]), 1, size[v] * B)
    elif algo == "chunked":
        k = -(-B // chunk) if chunk else 1
        for v in members:
            if v != root:
                add(kind(v, root), k, B)
    else:  # reduce: up the tree as compiled, then to a --root elsewhere
        for v, p in edges:
            add(kind(v, p), 1, B)
        troot = tree["root"]
        if root != troot:
            add(kind(troot, root), 1, B)
    return msg, byt


RUNS = [("bcast", "flood", {}), ("bcast", "flood", {"segment": 5}),
        ("scatter", "tree", {}), ("scatter", "or-combine", {}),
        ("gather", "chunked", {}), ("gather", "chunked", {"chunk": 4}),
        ("gather", "tree", {}),
        ("reduce", "hierarchical", {}), ("reduce", "tree", {})]

for tree in g["trees"]:
    tname = tree["name"]
    troot = tree["root"]
    kids = [v for v, p in zip(members, tree["parent"]) if p == troot]
    # default (the tree's root), first, middle, last, and a member that
    # is not the tree's root but has the tree root as parent
    roots = [None]
    for r in (members[0], members[n // 2], members[-1], kids[-1]):
        if r not in roots:
            roots.append(r)
    for op, algo, opt in RUNS:
        for r in roots:
            cmd = [collrun, op, "--algorithm", algo, "-t", tname, "-g",
                   group, "--bytes", str(B), "--json", src]
            if r is not None:
                cmd += ["--root", str(r)]
            for k, v in opt.items():
                cmd += ["--" + k, str(v)]
            label = "%s %s%s %s root %s" % (
                op, algo, "".join(" --%s %d" % kv for kv in opt.items()),
                tname, "default" if r is None else r)
            res = subprocess.run(cmd, capture_output=True, text=True)
            if algo == "hierarchical" and tname != "hierarchical":
                want = "collrun: algorithm hierarchical needs the " \
                    "hierarchical tree (-t hierarchical); tree \"%s\"" % tname
                ok = res.returncode == 2 and res.stderr.startswith(want) \
                    and res.stdout == ""
                print("%s: %s" % (label, "refused" if ok else
                                  "FAIL rc %d %s" % (res.returncode,
                                                     res.stderr.strip())))
                continue
            if res.returncode != 0:
                print("%s: FAIL rc %d %s" % (label, res.returncode,
                                             res.stderr.strip()))
                continue
            d = json.loads(res.stdout)
            root = troot if r is None else r
            msg, byt = expect(op, algo, tree, root, opt.get("segment", 0),
                              opt.get("chunk", 0))
            want = {"op": op, "algorithm": algo, "group": group,
                    "tree": tname, "root": root, "members": n, "bytes": B,
                    "type": "int32" if op == "reduce" else "int8",
                    "iterations": 1, "verified": True, "errors_total": 0,
                    "messages": msg, "bytes_moved": byt}
            if op == "reduce":
                want["reduce_op"] = "sum"
            bad = ["%s %r, want %r" % (k, d.get(k), v)
                   for k, v in want.items() if d.get(k) != v]
            s = d.get("seconds", {})
            if not 0 <= s.get("min", -1) <= s.get("median", -1) <= \
                    s.get("max", -1):
                bad.append("seconds %r" % s)
            if "errors" in d:
                bad.append("errors present")
            print("%s: %s" % (label, "; ".join(bad) if bad else
                              "%d messages (%d shm, %d net), %d bytes ok" % (
                                  msg["shm"] + msg["net"], msg["shm"],
                                  msg["net"], byt["shm"] + byt["net"])))
