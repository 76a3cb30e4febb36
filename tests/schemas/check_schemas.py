#!/usr/bin/env python3
"""tests/schemas/check_schemas.py BUILD - checks that the JSON Schemas in
schemas/, the shipped examples and collc agree.

  - both schemas are valid draft 2020-12 schemas;
  - every examples/*.json is a valid machine description (machine schema);
  - collc compiles every example, with the default trees and with
    -t kary:3,chain, and every output is valid under the routes schema and
    consistent in the ways a schema cannot say (lengths, ascending members,
    one root, edge labels, depth and edge counts, the route rows of collc(5));
  - collc import hostfile writes descriptions valid under the machine
    schema that collc compiles;
  - every tests/schemas/bad/*.json fails the machine schema AND is refused by
    collc with exit status 2 and one "collc: FILE: ..." line on stderr whose
    JSON pointer agrees with the schema's (one is a prefix of the other), so
    the schema and the program refuse the same things for the same reason.

Prints one line per check and finally "schemas: N passed, N failed";
exit status 1 when any check failed.  Needs python3-jsonschema (Debian).
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

try:
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError, best_match
except ImportError:
    print("check_schemas: python3-jsonschema is not installed (make deps)")
    print("schemas: 0 passed, 1 failed")
    sys.exit(1)

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
# (-t value, trees expected, extra collc arguments)
TREE_SETS = [
    (None, ["physical", "hierarchical", "binomial"], []),
    ("kary:3,chain", ["kary:3", "chain"], ["--routes", "full"]),
    ("chain", ["chain"], ["--routes", "none"]),
    ("physical", ["physical"], ["--format-version", "1"]),
]
TIMEOUT = 120  # seconds per collc run; the largest example takes well under 1

passed = 0
failed = 0


def check(name, problem):
    """Records one check: problem is None (or "") when it passed, else why
    it failed."""
    global passed, failed
    if problem:
        failed += 1
        print("FAIL %s: %s" % (name, problem))
    else:
        passed += 1
        print("ok   %s" % name)


def pointer(path):
    """A JSON pointer (RFC 6901) for a jsonschema error path."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1")
                   for p in path)


def schema_error(validator, doc):
    """None when doc is valid, else the most relevant error as
    (JSON pointer, message)."""
    err = best_match(validator.iter_errors(doc))
    if err is None:
        return None
    return pointer(err.absolute_path), err.message


def schema_problem(validator, doc):
    """None when doc is valid, else the most relevant error as
    "/pointer: message"."""
    err = schema_error(validator, doc)
    if err is None:
        return None
    return "%s: %s" % (err[0] or "(document)", err[1])


def collc_pointer(line, path):
    """The JSON pointer in collc's message "collc: PATH: /pointer: text"
    ("" when the message is about the document as a whole)."""
    rest = line[len("collc: " + path + ": "):]
    if not rest.startswith("/"):
        return ""
    return rest.split(": ", 1)[0]


def same_place(a, b):
    """True when one JSON pointer is a prefix of the other, token-wise: the
    schema may report an object where collc names the key inside it."""
    ta, tb = a.split("/")[1:], b.split("/")[1:]
    n = min(len(ta), len(tb))
    return ta[:n] == tb[:n]


def inline_refs(schema):
    """schema with every local "#/$defs/NAME" reference replaced by the
    definition itself.  The result accepts exactly what schema accepts (the
    definitions are not recursive, and a $ref's only siblings here are
    annotations), but python3-jsonschema validates it more than twice as
    fast, which matters for the 8192-endpoint example's 150,000 route rows."""
    defs = schema.get("$defs", {})

    def walk(x, depth):
        if depth > 64:
            raise ValueError("$defs are recursive")
        if isinstance(x, list):
            return [walk(v, depth + 1) for v in x]
        if not isinstance(x, dict):
            return x
        ref = x.get("$ref", "")
        siblings = set(x) - {"$ref", "description", "title"}
        if ref.startswith("#/$defs/") and not siblings and ref[8:] in defs:
            out = walk(defs[ref[8:]], depth + 1)
            out.update({k: v for k, v in x.items() if k != "$ref"})
            return out
        return {k: walk(v, depth + 1) for k, v in x.items()}

    return walk(schema, 0)


def load_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def expected_machine(m):
    """The machine section collc should write for description m, as far as
    the input determines it (the node tree itself is checked separately)."""
    nodes = m["nodes"]
    tpn = m["tasks_per_node"]
    tpn = [tpn] * nodes if isinstance(tpn, int) else list(tpn)
    ept = m.get("endpoints_per_task", 1)
    net = m["network"]
    want = {
        "nodes": nodes,
        "tasks": sum(tpn),
        "endpoints_per_task": ept,
        "endpoints": sum(tpn) * ept,
        "tasks_per_node": tpn,
    }
    if "name" in m:  # else collc names the machine after its file
        want["name"] = m["name"]
    want_net = {"type": net["type"]}
    if net["type"] == "tree":
        want_net["parent"] = net["parent"]
        want_net["physical_root"] = net["parent"].index(-1)
    else:
        want_net["physical_root"] = net.get("physical_root", 0)
    if net["type"] == "kary":
        want_net["fanout"] = net["fanout"]
    if net["type"] == "torus":
        want_net["dims"] = net["dims"]
    return want, want_net


def check_machine_section(label, m, doc):
    """The output's machine section against the description it came from."""
    om = doc["machine"]
    want, want_net = expected_machine(m)
    probs = ["%s is %r, want %r" % (k, om.get(k), v)
             for k, v in want.items() if om.get(k) != v]
    net = om["network"]
    probs += ["network.%s is %r, want %r" % (k, net.get(k), v)
              for k, v in want_net.items() if net.get(k) != v]
    check("%s: machine section matches the description" % label,
          "; ".join(probs))

    parent = net["parent"]
    nodes = om["nodes"]
    prob = None
    if len(parent) != nodes:
        prob = "len(network.parent) is %d, nodes is %d" % (len(parent), nodes)
    elif [i for i, p in enumerate(parent) if p == -1] != [net["physical_root"]]:
        prob = "network.parent's -1 entries are not exactly the physical root"
    elif any(p >= nodes for p in parent):
        prob = "network.parent names a node >= nodes"
    elif tree_depths(parent, lambda p: p) is None:
        prob = "network.parent is not a tree (cycle)"
    check("%s: network.parent is a tree over the nodes rooted at "
          "physical_root" % label, prob)


def tree_depths(parent, index):
    """Depth of every entry of parent (index maps a parent value to a
    position), or None when parent has a cycle or a dangling entry.  Linear:
    each entry's depth is computed once."""
    n = len(parent)
    depth = [-1] * n
    for start in range(n):
        path = []
        i = start
        while depth[i] < 0:
            if len(path) > n:
                return None
            path.append(i)
            p = parent[i]
            if p == -1:
                depth[i] = 0
                path.pop()
                break
            i = index(p)
            if i is None:
                return None
        d = depth[i]
        for j in reversed(path):
            d += 1
            depth[j] = d
    return depth


def check_group(label, om, g, want_spec, want_trees):
    """One group of a compile output: its members, then each tree."""
    members = g["members"]
    eps = om["endpoints"]
    prob = None
    if g["size"] != len(members):
        prob = "size is %d, len(members) is %d" % (g["size"], len(members))
    elif any(members[i] >= members[i + 1] for i in range(len(members) - 1)):
        prob = "members are not strictly ascending"
    elif members[-1] >= eps:
        prob = "member %d >= endpoints (%d)" % (members[-1], eps)
    elif want_spec is not None and g["spec"] != want_spec:
        prob = "spec is %r, want %r" % (g["spec"], want_spec)
    elif g["name"] == "world" and members != list(range(eps)):
        prob = "world is not every endpoint"
    check("%s: len(members) == size, ascending, within the machine" % label,
          prob)

    names = [t["name"] for t in g["trees"]]
    check("%s: trees are %s" % (label, ",".join(want_trees)),
          None if names == want_trees else "trees are %r" % names)

    # node of each endpoint, for the edge labels
    ept = om["endpoints_per_task"]
    task_node = []
    for node, t in enumerate(om["tasks_per_node"]):
        task_node.extend([node] * t)
    rank = {ep: r for r, ep in enumerate(members)}
    for t in g["trees"]:
        check("%s/%s: consistent" % (label, t["name"]),
              tree_problem(t, members, rank, lambda ep: task_node[ep // ept]))


def tree_problem(t, members, rank, node_of):
    """What is wrong with tree t over members, or None.  Checks what the
    routes schema cannot: alignment, one root, parents that are members,
    no cycles, edge labels, depth and edge counts, and the route table rows
    of collc(5) (3n-2 rows; per member from -1, then the parent, then each
    child ascending; targets ascending)."""
    n = len(members)
    parent, edge, routes = t["parent"], t["edge"], t.get("routes")
    if len(parent) != n or len(edge) != n:
        return ("len(parent) %d, len(edge) %d, size %d"
                % (len(parent), len(edge), n))
    roots = [r for r in range(n) if parent[r] == -1]
    if len(roots) != 1:
        return "%d entries of parent are -1, want 1" % len(roots)
    root = roots[0]
    if t["root"] != members[root]:
        return "root is %d but parent is -1 at member %d" % (
            t["root"], members[root])
    for r in range(n):
        if parent[r] != -1 and parent[r] not in rank:
            return "parent of %d is %d, not a member" % (members[r], parent[r])
    depth = tree_depths(parent, rank.get)
    if depth is None:
        return "parent has a cycle"
    if t["depth"] != max(depth):
        return "depth is %d, the longest path is %d" % (t["depth"], max(depth))
    shm = net = 0
    for r in range(n):
        if r == root:
            want = "root"
        elif node_of(members[r]) == node_of(parent[r]):
            want = "shm"
        else:
            want = "net"
        if edge[r] != want:
            return "edge of %d is %r, want %r" % (members[r], edge[r], want)
        shm += want == "shm"
        net += want == "net"
    if t["edges"].get("shm") != shm or t["edges"].get("net") != net:
        return "edges is %r, want shm %d net %d" % (t["edges"], shm, net)

    if routes is None:  # compiled with --routes none: nothing more to check
        return None
    if isinstance(routes, dict):
        # The rule encoding: a compiled table follows the rule, so it
        # departs from it nowhere.
        if routes != {"encoding": "rule", "rows": [], "missing": []}:
            return "a compiled rule-encoded table departs from the rule: %s" \
                % short(routes)
        return None
    if len(routes) != 3 * n - 2:
        return "%d route rows, want 3*size-2 = %d" % (len(routes), 3 * n - 2)
    children = [[] for _ in range(n)]
    for r in range(n):  # ranks ascending, so each list is ascending
        if r != root:
            children[rank[parent[r]]].append(members[r])
    i = 0
    for r in range(n):
        ep = members[r]
        p = [] if r == root else [parent[r]]
        kids = children[r]
        want_rows = [[ep, -1, sorted(p + kids)]]
        if p:
            want_rows.append([ep, p[0], kids])
        for c in kids:
            want_rows.append([ep, c, sorted(p + [k for k in kids if k != c])])
        for w in want_rows:
            if routes[i] != w:
                return "route row %d is %s, want %s" % (i, short(routes[i]),
                                                        short(w))
            i += 1
    return None


def short(x, limit=160):
    """repr(x), cut to limit characters for a one-line message."""
    r = repr(x)
    return r if len(r) <= limit else r[:limit - 3] + "..."


def run_collc(collc, args, cwd=None):
    try:
        p = subprocess.run([collc] + args, capture_output=True, text=True,
                           timeout=TIMEOUT, cwd=cwd)
    except subprocess.TimeoutExpired:
        return None, "", "timed out after %d s" % TIMEOUT
    return p.returncode, p.stdout, p.stderr


def check_examples(machine_v, routes_v, collc):
    examples = sorted(glob.glob(os.path.join(TOP, "examples", "*.json")))
    check("examples/ holds machine descriptions",
          None if examples else "no examples/*.json")
    for path in examples:
        base = os.path.basename(path)
        try:
            m = load_json(path)
        except (OSError, ValueError) as e:
            check("examples/%s: is JSON" % base, str(e))
            continue
        check("examples/%s: valid under machine.schema.json" % base,
              schema_problem(machine_v, m))
        check("examples/%s: has an x-comment" % base,
              None if "x-comment" in m else "no \"x-comment\" key")
        if collc is None or schema_problem(machine_v, m):
            continue
        for tflag, want_trees, extra in TREE_SETS:
            label = "examples/%s [%s]" % (base, " ".join(
                [tflag or "default trees"] + extra))
            with tempfile.TemporaryDirectory(prefix="collc-schemas-") as tmp:
                out = os.path.join(tmp, "out.json")
                args = ["compile", path, "-o", out]
                if tflag:
                    args += ["-t", tflag]
                args += extra
                rc, so, se = run_collc(collc, args)
                check("%s: collc compile exits 0" % label,
                      None if rc == 0 else "exit %s: %s" % (rc, se.strip()))
                if rc != 0:
                    continue
                try:
                    doc = load_json(out)
                except (OSError, ValueError) as e:
                    check("%s: output is JSON" % label, str(e))
                    continue
            prob = schema_problem(routes_v, doc)
            check("%s: output valid under routes.schema.json" % label, prob)
            want_routes = "none" not in extra
            want_version = 1 if "--format-version" in extra else 2
            check("%s: version %d" % (label, want_version),
                  None if doc.get("version") == want_version
                  else "version is %r" % doc.get("version"))
            want_kind = dict if not extra else list
            bad = [(g.get("name"), t.get("name"))
                   for g in doc.get("groups", []) for t in g.get("trees", [])
                   if want_routes and
                   not isinstance(t.get("routes"), want_kind)]
            check("%s: every table is %s" % (
                label, "rule-encoded" if want_kind is dict else "full rows"),
                  "trees %r differ" % bad if bad else None)
            bad = [(g.get("name"), t.get("name"))
                   for g in doc.get("groups", []) for t in g.get("trees", [])
                   if ("routes" in t) != want_routes]
            check("%s: every tree %s \"routes\"" % (
                label, "has" if want_routes else "omits"),
                  "trees %r differ" % bad if bad else None)
            if prob:
                continue
            check_machine_section(label, m, doc)
            groups = doc["groups"]
            want_names = ["world"] + list(m.get("groups", {}))
            names = [g["name"] for g in groups]
            check("%s: groups are world then the description's, in order"
                  % label, None if names == want_names
                  else "groups are %r, want %r" % (names, want_names))
            specs = dict(m.get("groups", {}), world="all")
            for g in groups:
                check_group("%s %s" % (label, g["name"]), doc["machine"], g,
                            specs.get(g["name"]), want_trees)


# Host files in each syntax `collc import hostfile` reads, and what the
# import must make of them: (text, tasks_per_node, hosts).
HOSTFILES = [
    ("# Open MPI\nn1 slots=4 max_slots=8\nn2 slots=2\n\nn1\n",
     [5, 2], ["n1", "n2"]),
    ("a01:2\na02:2\na03:2\n", 2, ["a01", "a02", "a03"]),
    ("x\ny\nx\nz.site-1_b\n", [2, 1, 1], ["x", "y", "z.site-1_b"]),
    ("solo\n", 1, ["solo"]),
]


def check_import(machine_v, collc):
    """collc import hostfile writes descriptions the schema accepts and
    collc compiles, with the nodes and tasks the host file gives."""
    for i, (text, want_tasks, want_hosts) in enumerate(HOSTFILES):
        label = "import hostfile #%d" % i
        with tempfile.TemporaryDirectory(prefix="collc-schemas-") as tmp:
            src = os.path.join(tmp, "job.hosts")
            out = os.path.join(tmp, "job.json")
            with open(src, "w") as f:
                f.write(text)
            rc, so, se = run_collc(collc, ["import", "hostfile", src,
                                           "-o", out])
            check("%s: exits 0" % label,
                  None if rc == 0 else "exit %s: %s" % (rc, se.strip()))
            if rc != 0:
                continue
            m = load_json(out)
            check("%s: valid under machine.schema.json" % label,
                  schema_problem(machine_v, m))
            got = (m.get("nodes"), m.get("tasks_per_node"), m.get("hosts"))
            want = (len(want_hosts), want_tasks, want_hosts)
            check("%s: nodes, tasks_per_node and hosts" % label,
                  None if got == want else "%r, want %r" % (got, want))
            rc, so, se = run_collc(collc, ["compile", out, "-o",
                                           os.path.join(tmp, "r.json")])
            check("%s: collc compile accepts it" % label,
                  None if rc == 0 else "exit %s: %s" % (rc, se.strip()))


def check_bad(machine_v, collc):
    bad = sorted(glob.glob(os.path.join(HERE, "bad", "*.json")))
    check("tests/schemas/bad/ holds 10 or more descriptions",
          None if len(bad) >= 10 else "only %d" % len(bad))
    for path in bad:
        base = os.path.basename(path)
        try:
            m = load_json(path)
        except (OSError, ValueError) as e:
            check("bad/%s: is JSON" % base, str(e))
            continue
        err = schema_error(machine_v, m)
        check("bad/%s: fails machine.schema.json (%s)"
              % (base, err and "%s: %s" % (err[0] or "(document)", err[1])),
              None if err else "the schema accepts it")
        if collc is None:
            continue
        # relative to tests/schemas, so that collc's messages stay short
        rel = "bad/" + base
        with tempfile.TemporaryDirectory(prefix="collc-schemas-") as tmp:
            out = os.path.join(tmp, "out.json")
            rc, so, se = run_collc(os.path.abspath(collc),
                                   ["compile", rel, "-o", out], cwd=HERE)
            left = os.listdir(tmp)
        lines = se.splitlines()
        one = len(lines) == 1 and lines[0].startswith("collc: %s: " % rel)
        if rc != 2:
            why = "exit %s, want 2 (%s)" % (rc, se.strip() or "no message")
        elif not one:
            why = "stderr is %r, want one line \"collc: %s: ...\"" % (se, rel)
        elif left:
            why = "files left behind: %r" % left
        else:
            why = None
        check("bad/%s: collc refuses it, exit 2 (%s)"
              % (base, lines[0] if len(lines) == 1 else "..."), why)
        if err and one:
            cp = collc_pointer(lines[0], rel)
            check("bad/%s: collc and the schema point at the same place "
                  "(%s, %s)" % (base, cp or "(document)", err[0] or
                                "(document)"),
                  None if same_place(cp, err[0]) else "they differ")


def check_bad_routes(routes_v, collc):
    """Every tests/schemas/bad-routes/*.json (a compile output broken by
    hand) fails the routes schema and is refused by `collc routes` with
    exit 2 and one line naming the file."""
    bad = sorted(glob.glob(os.path.join(HERE, "bad-routes", "*.json")))
    check("tests/schemas/bad-routes/ holds 5 or more documents",
          None if len(bad) >= 5 else "only %d" % len(bad))
    for path in bad:
        base = os.path.basename(path)
        try:
            d = load_json(path)
        except (OSError, ValueError) as e:
            check("bad-routes/%s: is JSON" % base, str(e))
            continue
        err = schema_error(routes_v, d)
        check("bad-routes/%s: fails routes.schema.json (%s)"
              % (base, err and "%s: %s" % (err[0] or "(document)", err[1])),
              None if err else "the schema accepts it")
        if collc is None:
            continue
        rel = "bad-routes/" + base
        rc, so, se = run_collc(os.path.abspath(collc), ["routes", rel],
                               cwd=HERE)
        lines = se.splitlines()
        one = len(lines) == 1 and lines[0].startswith("collc: %s: " % rel)
        check("bad-routes/%s: collc refuses it, exit 2 (%s)"
              % (base, lines[0] if len(lines) == 1 else "..."),
              None if rc == 2 and one and so == ""
              else "exit %s, stderr %r" % (rc, se))


def main():
    if len(sys.argv) != 2:
        print("usage: check_schemas.py BUILD_DIR", file=sys.stderr)
        return 2
    build = sys.argv[1]
    validators = {}
    for name in ("machine", "routes"):
        path = os.path.join(TOP, "schemas", name + ".schema.json")
        try:
            schema = load_json(path)
            Draft202012Validator.check_schema(schema)
            prob = None
            if schema.get("$schema") != \
                    "https://json-schema.org/draft/2020-12/schema":
                prob = "$schema is not draft 2020-12"
            if name == "routes":
                schema = inline_refs(schema)
            validators[name] = Draft202012Validator(schema)
        except (OSError, ValueError) as e:
            prob = str(e)
        except SchemaError as e:
            prob = "%s: %s" % (pointer(e.absolute_path), e.message)
        check("schemas/%s.schema.json is a valid draft 2020-12 schema" % name,
              prob)
    if len(validators) != 2:
        print("schemas: %d passed, %d failed" % (passed, failed))
        return 1

    collc = os.path.join(build, "collc")
    ok = os.access(collc, os.X_OK)
    check("%s exists" % collc, None if ok else "not built (make %s)" % collc)
    check_examples(validators["machine"], validators["routes"],
                   collc if ok else None)
    if ok:
        check_import(validators["machine"], collc)
    check_bad(validators["machine"], collc if ok else None)
    check_bad_routes(validators["routes"], collc if ok else None)
    print("schemas: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
