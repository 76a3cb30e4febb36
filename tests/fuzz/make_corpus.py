#!/usr/bin/env python3
"""tests/fuzz/make_corpus.py BUILD - regenerates the committed seed corpora.

    python3 tests/fuzz/make_corpus.py build     (after `make`)

Writes tests/fuzz/corpus/{machine,spec,routes}/ from what the repository
already holds, so the seeds follow the format as it evolves:
  machine  every examples/*.json; the machine.json each
           tests/cli/cases/bad-*/cmd writes (run with a stand-in collc);
           every tests/schemas/bad/*.json
  spec     every spec tests/unit/test_spec.c evaluates or expects to fail,
           and the examples' group specs
  routes   compile outputs of the small examples (BUILD/collc, one or two
           trees, with and without route tables), and hand edits of them:
           the tables collrun's tests break, a cycle, rows out of order,
           summaries left out
Every file stays under 64 KiB.  Files are named after their origin;
running the script again rewrites them (and removes stale ones), but
keeps the found-* files: inputs long fuzzing runs added to coverage,
kept as a -merge=1 of their corpus so that short runs (CI) start there.
"""
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

TOP = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CORPUS = os.path.join(TOP, "tests", "fuzz", "corpus")
MAX_SIZE = 64 << 10


def put(kind, name, data):
    if isinstance(data, str):
        data = data.encode()
    if len(data) >= MAX_SIZE:
        print(f"skipped {kind}/{name}: {len(data)} bytes", file=sys.stderr)
        return
    with open(os.path.join(CORPUS, kind, name), "wb") as f:
        f.write(data)


def machines():
    for path in sorted(glob.glob(os.path.join(TOP, "examples", "*.json"))):
        with open(path, "rb") as f:
            put("machine", "example-" + os.path.basename(path), f.read())
    # The CLI cases write their machine.json with shell commands: run them
    # with a collc that does nothing.
    for case in sorted(glob.glob(os.path.join(TOP, "tests/cli/cases/bad-*"))):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, COLLC="true", COLLRUN="true",
                       EX=os.path.join(TOP, "examples"), CASE=case)
            subprocess.run(["sh", os.path.join(case, "cmd")], cwd=tmp,
                           env=env, stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            path = os.path.join(tmp, "machine.json")
            if os.path.isfile(path):
                with open(path, "rb") as f:
                    put("machine", "cli-" + os.path.basename(case) + ".json",
                        f.read())
    for path in sorted(glob.glob(os.path.join(TOP, "tests/schemas/bad/*.json"))):
        with open(path, "rb") as f:
            put("machine", "schema-" + os.path.basename(path), f.read())


C_STRING = r'"((?:[^"\\\n]|\\.)*)"'


def c_unescape(s):
    out = bytearray()
    i = 0
    simple = {"n": 10, "t": 9, "r": 13, "0": 0, "\\": 92, '"': 34, "'": 39}
    while i < len(s):
        c = s[i]
        if c != "\\":
            out += c.encode()
            i += 1
            continue
        e = s[i + 1]
        if e == "x":
            m = re.match(r"[0-9a-fA-F]+", s[i + 2:])
            out.append(int(m.group(0), 16) & 0xFF)
            i += 2 + len(m.group(0))
        else:
            out.append(simple[e])
            i += 2
    return bytes(out)


def specs():
    with open(os.path.join(TOP, "tests/unit/test_spec.c")) as f:
        src = f.read()
    found = []
    # MEMBERS(a, "spec", ...) and expect_error(a, "spec", ...), where the
    # spec may be split over adjacent literals on several lines.
    for m in re.finditer(r"(?:MEMBERS|expect_error)\(\s*\w+,\s*((?:"
                         + C_STRING + r"\s*)+),", src):
        parts = re.findall(C_STRING, m.group(1))
        found.append(b"".join(c_unescape(p) for p in parts))
    for path in sorted(glob.glob(os.path.join(TOP, "examples", "*.json"))):
        with open(path) as f:
            for spec in json.load(f).get("groups", {}).values():
                found.append(spec.encode())
    seen = set()
    n = 0
    for spec in found:
        if spec in seen:
            continue
        seen.add(spec)
        put("spec", f"spec-{n:03d}", spec)
        n += 1


def compile_example(build, example, *args):
    out = subprocess.run([os.path.join(build, "collc"), "compile",
                          os.path.join(TOP, "examples", example), *args],
                         check=True, stdout=subprocess.PIPE)
    return out.stdout


def dump(doc):
    return json.dumps(doc, indent=1) + "\n"


def routes(build):
    plans = [
        ("tiny.json", []),
        ("tiny.json", ["-t", "chain,kary:3"]),
        ("tiny.json", ["--routes", "none"]),
        ("uneven.json", ["-t", "physical", "--routes", "full"]),
        ("uneven.json", ["-t", "physical", "--format-version", "1"]),
        ("uneven.json", ["-t", "hierarchical"]),
        ("uneven.json", ["-t", "binomial", "--routes", "none"]),
        ("torus-2d.json", ["-t", "physical"]),
        ("torus-2d.json", ["-t", "chain", "--routes", "none"]),
        ("endpoints.json", ["-t", "physical"]),
        ("endpoints.json", ["-t", "binomial", "--routes", "full"]),
    ]
    docs = {}
    for example, args in plans:
        name = "compile-" + example[:-5] + "".join(
            "-" + re.sub(r"[^a-z0-9]+", "", a) for a in args if a[0] != "-"
            and a != "2")
        text = compile_example(build, example, *args)
        docs[name] = text
        put("routes", name + ".json", text)

    base = json.loads(docs["compile-uneven-physical-full"])

    def edited(name, change):
        doc = json.loads(json.dumps(base))
        change(doc["groups"][0]["trees"][0], doc)
        put("routes", "edit-" + name + ".json", dump(doc))

    def row(t, at, frm):
        return next(r for r in t["routes"] if r[0] == at and r[1] == frm)

    # collrun's own broken tables (tests/cli/cases/run-routes-*).
    edited("duplicated", lambda t, d: row(t, 2, 13)[2].append(1))
    edited("undelivered", lambda t, d: row(t, 0, 2)[2].clear())
    # A table that sends in a circle, and one member's rows reversed.
    edited("cycle", lambda t, d: row(t, 1, 0)[2].append(13))
    edited("reversed", lambda t, d: t["routes"].reverse())
    # Derived data left out: summaries and the table.
    edited("no-summary", lambda t, d: (t.pop("depth"), t.pop("edges")))
    edited("no-routes", lambda t, d: t.pop("routes"))
    # Keys a later version may add.
    edited("future-keys", lambda t, d: (t.update({"x-new": [1]}),
                                        d.update({"extra": {}})))
    # Faults the loader must name (not exhaustive: the fuzzer mutates).
    edited("bad-second-origin", lambda t, d: t["routes"].append(
        [t["root"], -1, []]))
    edited("bad-edge", lambda t, d: t["edge"].__setitem__(0, "shm"))
    edited("bad-depth", lambda t, d: t.__setitem__("depth", 99))
    edited("bad-member", lambda t, d: row(t, 0, 2)[2].append(9999))
    edited("bad-cycle-parent", lambda t, d: t["parent"].__setitem__(
        t["parent"].index(-1) - 1 if t["parent"].index(-1) > 0 else 1, 0))
    edited("bad-self-target", lambda t, d: row(t, 2, 13)[2].append(2))
    edited("bad-self-origin", lambda t, d: row(t, 2, 13).__setitem__(1, 2))

    # The rule encoding of version 2, with departures of every kind.
    rule = json.loads(docs["compile-uneven-hierarchical"])

    def rule_edited(name, rows, missing, extra=None):
        doc = json.loads(json.dumps(rule))
        doc["groups"][0]["trees"][0]["routes"] = dict(
            {"encoding": "rule", "rows": rows, "missing": missing},
            **(extra or {}))
        put("routes", "rule-" + name + ".json", dump(doc))

    rule_edited("replaced", [[13, 2, [5, 14, 15, 16, 17, 1]]], [])
    rule_edited("added", [[0, 13, [1]]], [])
    rule_edited("missing", [], [[13, -1], [0, 1]])
    rule_edited("all-kinds", [[13, 2, [5]], [0, 13, [1]]], [[5, 13]],
                {"x-note": "hand-edited"})
    rule_edited("bad-missing-not-rule", [], [[0, 21]])
    rule_edited("bad-unknown-key", [], [], {"missng": []})


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: make_corpus.py BUILD")
    build = os.path.abspath(sys.argv[1])
    # Inputs the fuzzers found (found-*, a -merge=1 of long runs) stay;
    # everything generated is written anew.
    for kind in ("machine", "spec", "routes"):
        d = os.path.join(CORPUS, kind)
        os.makedirs(d, exist_ok=True)
        for f in os.listdir(d):
            if not f.startswith("found-"):
                os.remove(os.path.join(d, f))
    machines()
    specs()
    routes(build)
    for kind in ("machine", "spec", "routes"):
        files = os.listdir(os.path.join(CORPUS, kind))
        size = sum(os.path.getsize(os.path.join(CORPUS, kind, f))
                   for f in files)
        print(f"corpus/{kind}: {len(files)} files, {size} bytes")


if __name__ == "__main__":
    main()
