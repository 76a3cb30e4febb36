#!/usr/bin/env python3
"""tests/mpi/mpich_suite.py BUILD FLAVOUR [--src DIR] [--max-np N] - MPICH's
own collective tests (test/mpi/coll of Debian's mpich source package)
through libcollc-mpi.so, and the same tests without it (the control).

The source comes from DIR, else from BUILD/mpich-src (fetched there once
with `apt-get source mpich`, which needs a deb-src line: .ci/run enables
it); without it the suite says it is skipped.  The collective tests and
what they build from are copied to BUILD/mpich-suite/FLAVOUR and the tests
of the wrapped operations built there with the FLAVOUR's mpicc, without
configure (CONFIG below; the tests are plain MPI: they build against Open
MPI too): every coll/testlist entry for MPI_Bcast,
MPI_Scatter, MPI_Gather, MPI_Reduce, MPI_Allreduce, MPI_Allgather,
MPI_Reduce_scatter_block, MPI_Alltoall and MPI_Barrier, the predefined
operators' tests (op*), the user-defined ones (uoplong, op_commutative)
and the intercommunicator tests of those operations (ic*, which the
library hands to MPI).  Each entry runs with its testlist np and
arguments (--max-np skips larger ones; --smallest keeps each test's
smallest size only, for MPICH, which spins when oversubscribed), once with
the library preloaded and once without (--no-control: with it only); it
passes when it exits 0 and prints "No Errors", as MPICH's runtests counts
them.  With the library, COLLC_MPI_REPORT=1 must
show that the library was on; COLLC_MPI_MIN_SIZE=1 makes it take
communicators of 1 and 2 members too (by default handed to MPI).

A run that fails under the MPI library alone and is listed in KNOWN (a
bug of that library) is reported, not counted.  Prints each failure and
"mpich-suite (FLAVOUR): ...: P passed, F failed".
"""
import argparse
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys

WRAPPED = re.compile(
    r"^(allred\d*|allredmany|reduce|op_coll|op_commutative|red3|red4|"
    r"alltoall1|allgather2|allgather3|allgather_struct|bcasttest|"
    r"bcastzerotype|coll\d+|longuser|red_scat_block2?|redscatblk3|"
    r"redscatbkinter|gather2?|scattern|scatter[23]|"
    r"ic(bcast|allreduce|reduce|scatter|gather|allgather|barrier|alltoall)|"
    r"op(land|lor|lxor|band|bor|bxor|prod|sum|min|minloc|max|maxloc)|"
    r"uoplong)$")


# Runs that fail under the MPI library alone, not through libcollc-mpi:
# reported, not counted as failures (they may pass elsewhere).
KNOWN = {
    # Open MPI 4.1.4's op/avx component sums 8-bit integers wrongly
    # (passes with --mca op ^avx, and through the library, which reduces
    # with libtopo's kernels)
    ("openmpi", "allred", ("-count=100",)):
        "Open MPI 4.1.4's op/avx: wrong 8-bit sums",
}


# The tests' build uses every CPU this process may run on.
JOBS = max(1, len(os.sched_getaffinity(0)))


# What the test suite's configure finds on Debian 12 (amd64 and the other
# LP64 ports, gcc 12, either MPI library), with --disable-fortran, cxx,
# romio, spawn, rma and dtpools and --enable-strictmpi: its
# include/mpitestconf.h.  The tests are built from it directly: configure
# took 90 s per MPI library on a 2-CPU machine, half of this suite's time
# in CI, to find the same answers every time.  Of these, the sources of
# util/, coll/ and include/ read HAVE_LONG_LONG, HAVE_LONG_DOUBLE, the
# complex types, the headers, THREAD_PACKAGE_NAME and USE_STRICT_MPI.
# (configure also defines HAVE_MPI_INTEGER16 under MPICH: nothing there
# reads it.)
CONFIG = [
    ("HAVE_DLFCN_H", "1"), ("HAVE_DOUBLE__COMPLEX", "1"),
    ("HAVE_FLOAT__COMPLEX", "1"), ("HAVE_GETRUSAGE", "1"),
    ("HAVE_H_ADDR_LIST", "1"), ("HAVE_INTTYPES_H", "1"),
    ("HAVE_LONG_DOUBLE", "1"), ("HAVE_LONG_DOUBLE__COMPLEX", "1"),
    ("HAVE_LONG_LONG", "1"), ("HAVE_MEMORY_H", "1"), ("HAVE_PTHREAD_H", "1"),
    ("HAVE_STDARG_H", "1"), ("HAVE_STDINT_H", "1"), ("HAVE_STDLIB_H", "1"),
    ("HAVE_STRDUP", "1"), ("HAVE_STRINGS_H", "1"), ("HAVE_STRING_H", "1"),
    ("HAVE_SYS_RESOURCE_H", "1"), ("HAVE_SYS_STAT_H", "1"),
    ("HAVE_SYS_TIME_H", "1"), ("HAVE_SYS_TYPES_H", "1"),
    ("HAVE_UNISTD_H", "1"), ("HAVE_USLEEP", "1"), ("HAVE__BOOL", "1"),
    ("POINTERINT_t", "long"), ("SIZEOF_INT", "4"), ("SIZEOF_LONG", "8"),
    ("SIZEOF_LONG_LONG", "8"), ("SIZEOF_SHORT", "2"),
    ("SIZEOF_VOID_P", "8"), ("STDC_HEADERS", "1"),
    ("THREAD_PACKAGE_NAME", "THREAD_PACKAGE_POSIX"),
    ("USE_LONG_DOUBLE_COMPLEX", "1"), ("USE_STRICT_MPI", "1"),
]
UTIL = ["mtest", "mtest_common", "mtest_single"]


def prepare_tree(src, tree):
    """The parts of SRC (test/mpi) the collective tests build from, in
    TREE: include/ (with mpitestconf.h), util/, coll/ (with testlist:
    testlist.in without the entries configure leaves out by default, the
    large ones, marked @largetest@) and dtpools' headers."""
    for d in ("include", "util", "coll", os.path.join("dtpools", "include")):
        shutil.copytree(os.path.join(src, d), os.path.join(tree, d),
                        symlinks=True)
    with open(os.path.join(tree, "include", "mpitestconf.h"), "w") as f:
        f.write("#ifndef MPITESTCONF_H_INCLUDED\n"
                "#define MPITESTCONF_H_INCLUDED\n")
        for k, v in CONFIG:
            f.write("#define %s %s\n" % (k, v))
        f.write("#endif\n")
    with open(os.path.join(tree, "coll", "testlist.in")) as f:
        lines = [x for x in f if "@" not in x]
    with open(os.path.join(tree, "coll", "testlist"), "w") as f:
        f.writelines(lines)


def mpicc_of(flavour):
    """The flavour's compiler wrapper, as Debian installs both."""
    return "mpicc." + flavour


def build(tree, progs, flavour, log, env):
    """util/'s objects once, then each of PROGS (coll/NAME.c, as the suite's
    Makefile builds them) that is not built yet, JOBS at a time, with the
    flavour's mpicc.  Returns the ones that did not build."""
    mpicc = mpicc_of(flavour)
    flags = ["-O2", "-DHAVE_CONFIG_H", "-I" + os.path.join(tree, "include"),
             "-I" + os.path.join(tree, "dtpools", "include")]
    if flavour == "openmpi":
        # Open MPI 4.1's mpi.h hides the MPI-1 functions MPI-3 removed,
        # which the tests still call (libmpi keeps them)
        flags.append("-DOMPI_OMIT_MPI1_COMPAT_DECLS=0")
    objs = [os.path.join(tree, "util", u + ".o") for u in UTIL]

    def cc(args, out):
        if os.path.exists(out):
            return True
        p = subprocess.run([mpicc] + flags + args + ["-o", out + ".tmp"],
                           capture_output=True, text=True, env=env)
        if p.returncode != 0:
            with open(log, "a") as f:
                f.write("%s: exit %d\n%s" % (out, p.returncode,
                                             p.stdout + p.stderr))
            return False
        os.rename(out + ".tmp", out)
        return True

    with concurrent.futures.ThreadPoolExecutor(JOBS) as ex:
        util = list(ex.map(lambda u: cc(["-c", os.path.join(
            tree, "util", u + ".c")], os.path.join(tree, "util", u + ".o")),
            UTIL))
        if not all(util):
            return progs
        done = list(ex.map(lambda n: cc(
            [os.path.join(tree, "coll", n + ".c")] + objs + ["-lm"],
            os.path.join(tree, "coll", n)), progs))
    return [n for n, ok in zip(progs, done) if not ok]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("flavour")
    ap.add_argument("--src")
    ap.add_argument("--max-np", type=int, default=16,
                    help="skip the entries of more processes")
    ap.add_argument("--no-control", action="store_true",
                    help="through the library only")
    ap.add_argument("--smallest", action="store_true",
                    help="each test once, at its smallest testlist size")
    ap.add_argument("--only", help="comma-separated test names")
    a = ap.parse_args()
    b = os.path.abspath(a.build)
    lib = os.path.join(b, a.flavour, "libcollc-mpi.so")
    if not os.path.exists(lib):
        print("mpich-suite (%s): skipped: no %s" % (a.flavour, lib))
        return 0
    src = a.src
    if src is None:
        cache = os.path.join(b, "mpich-src")
        found = [d for d in (os.listdir(cache) if os.path.isdir(cache)
                             else []) if d.startswith("mpich-")
                 and os.path.isdir(os.path.join(cache, d, "test", "mpi"))]
        if not found:
            os.makedirs(cache, exist_ok=True)
            p = subprocess.run(["apt-get", "source", "-qq", "mpich"],
                               cwd=cache, capture_output=True, text=True)
            found = [d for d in os.listdir(cache) if d.startswith("mpich-")
                     and os.path.isdir(os.path.join(cache, d, "test", "mpi"))]
            if not found:
                print("mpich-suite (%s): skipped: apt-get source mpich "
                      "failed (no deb-src line?): %s" %
                      (a.flavour, p.stderr.strip()[-300:]))
                return 0
        src = os.path.join(cache, sorted(found)[-1])
    tree = os.path.join(b, "mpich-suite", a.flavour)
    log = os.path.join(b, "mpich-suite", a.flavour + ".log")
    mpicc = mpicc_of(a.flavour)
    if a.flavour == "openmpi":
        launch = ["mpirun.openmpi", "--oversubscribe"]
    else:
        launch = ["mpiexec.mpich"]
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader")
    if not os.path.exists(os.path.join(tree, "coll", "testlist")):
        shutil.rmtree(tree, ignore_errors=True)
        if os.path.exists(log):
            os.remove(log)
        prepare_tree(os.path.join(src, "test", "mpi"), tree)
    entries = []
    with open(os.path.join(tree, "coll", "testlist")) as f:
        for line in f:
            w = line.split()
            if not w or w[0].startswith("#") or not WRAPPED.match(w[0]):
                continue
            if a.only and w[0] not in a.only.split(","):
                continue
            args = [x[4:] for x in w[2:] if x.startswith("arg=")]
            if int(w[1]) > a.max_np:
                continue
            if a.smallest:
                same = [i for i, e in enumerate(entries) if e[0] == w[0]]
                if same and entries[same[0]][1] <= int(w[1]):
                    continue
                if same:
                    entries[same[0]] = (w[0], int(w[1]), args)
                    continue
            entries.append((w[0], int(w[1]), args))
    progs = sorted({e[0] for e in entries})
    unbuilt = build(tree, progs, a.flavour, log, env)
    if unbuilt:
        print("FAIL: building MPICH's tests %s with %s (see %s)" %
              (" ".join(unbuilt), mpicc, log))
        print("mpich-suite (%s): 0 passed, 1 failed" % a.flavour)
        return 1
    passed = failed = 0
    xfail = []
    for name, np, args in entries:
        prog = os.path.join(tree, "coll", name)
        for with_lib in (True,) if a.no_control else (True, False):
            e = {}
            if with_lib:
                # collc's way on communicators of every size, the
                # 1- and 2-member ones that it hands to MPI by default too
                e = {"LD_PRELOAD": lib, "COLLC_MPI_REPORT": "1",
                     "COLLC_MPI_MIN_SIZE": "1"}
            flags = []
            for k, v in e.items():
                flags += ["-x", "%s=%s" % (k, v)] if a.flavour == "openmpi" \
                    else ["-genv", k, v]
            cmd = launch + flags + ["-np", str(np), prog] + args
            try:
                p = subprocess.run(cmd, capture_output=True, text=True,
                                   env=env, timeout=300)
                out, code = p.stdout + p.stderr, p.returncode
            except subprocess.TimeoutExpired:
                out, code = "timed out after 300 s", -1
            ok = code == 0 and re.search(r"^\s*No Errors\s*$", out, re.M)
            if ok and with_lib:
                ok = re.search(r"^libcollc-mpi: \d+ process", out, re.M)
            what = "%s np %d %s%s" % (name, np, " ".join(args),
                                      " (libcollc-mpi)" if with_lib
                                      else " (MPI alone)")
            known = None if with_lib else \
                KNOWN.get((a.flavour, name, tuple(args)))
            if ok:
                passed += 1
            elif known:
                xfail.append("%s: %s" % (what, known))
            else:
                failed += 1
                print("FAIL: %s: exit %d\n%s" % (what, code, out[-1500:]))
    for x in xfail:
        print("known failure of the MPI library alone: " + x)
    print("mpich-suite (%s): %d tests, %d runs (%d known failures of the MPI "
          "library alone): %d passed, %d failed" %
          (a.flavour, len(progs), passed + failed + len(xfail), len(xfail),
           passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
