"""tests/mpi/mpi4py_check.py - mpi4py, at its default thread level
(MPI_THREAD_MULTIPLE), under libcollc-mpi: run as
  mpirun -np N python3 tests/mpi/mpi4py_check.py
with the library preloaded (tests/mpi/pmpi.py does, under Open MPI: Debian's
mpi4py is built for it).

Every wrapped collective through mpi4py's buffer interface (array module
buffers, no numpy needed) on MPI.COMM_WORLD and on a duplicate, the
results checked against what the operation's definition gives; the
pickle-based bcast, gather and allgather too; then four Python threads,
each with a duplicate of its own, run Allreduce and Bcast at once.  Checked
besides: the thread level mpi4py asked for and got is MPI_THREAD_MULTIPLE,
and the library ran the calls over its plans (collc_mpi_counts, found with
ctypes).  Rank 0 prints "mpi4py_check (np N): P passed, F failed".
"""
import ctypes
import sys
import threading
from array import array

from mpi4py import MPI

comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
passed = failed = 0
lock = threading.Lock()


def check(ok, what):
    global passed, failed
    with lock:
        if ok:
            passed += 1
        else:
            failed += 1
            if failed <= 10:
                sys.stderr.write("FAIL (rank %d): %s\n" % (rank, what))


def counts():
    try:
        f = ctypes.CDLL(None).collc_mpi_counts
    except AttributeError:
        return None
    f.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_longlong),
                  ctypes.POINTER(ctypes.c_longlong)]
    ours, theirs = ctypes.c_longlong(), ctypes.c_longlong()
    f(None, ctypes.byref(ours), ctypes.byref(theirs))
    return ours.value


def collectives(c, tag):
    n, r = c.Get_size(), c.Get_rank()
    for count in (1, 100, 40000):
        # allreduce and reduce of doubles: sums of integers, exact
        x = array("d", [float(r + i) for i in range(count)])
        y = array("d", [0.0]) * count
        c.Allreduce(x, y, op=MPI.SUM)
        want = [float(n * i + n * (n - 1) // 2) for i in range(count)]
        check(list(y) == want, "%s Allreduce %d" % (tag, count))
        y = array("d", [0.0]) * count
        c.Reduce(x, y, op=MPI.MAX, root=n - 1)
        if r == n - 1:
            check(list(y) == [float(n - 1 + i) for i in range(count)],
                  "%s Reduce %d" % (tag, count))
        # bcast of ints from the last rank
        b = array("i", [r * 7 + i if r == n - 1 else -1
                        for i in range(count)])
        c.Bcast(b, root=n - 1)
        check(list(b) == [(n - 1) * 7 + i for i in range(count)],
              "%s Bcast %d" % (tag, count))
        # blocks: scatter, gather, allgather, alltoall, reduce-scatter
        blk = array("i", [r * 1000 + i for i in range(count * n)])
        out = array("i", [0]) * count
        c.Scatter(blk, out, root=0)
        check(list(out) == [r * count + i for i in range(count)],
              "%s Scatter %d" % (tag, count))
        mine = array("i", [r + i for i in range(count)])
        got = array("i", [0]) * (count * n)
        c.Gather(mine, got, root=0)
        if r == 0:
            check(list(got) == [q + i for q in range(n)
                                for i in range(count)],
                  "%s Gather %d" % (tag, count))
        got = array("i", [0]) * (count * n)
        c.Allgather(mine, got)
        check(list(got) == [q + i for q in range(n) for i in range(count)],
              "%s Allgather %d" % (tag, count))
        got = array("i", [0]) * (count * n)
        c.Alltoall(blk, got)
        check(list(got) == [q * 1000 + r * count + i for q in range(n)
                            for i in range(count)],
              "%s Alltoall %d" % (tag, count))
        out = array("i", [0]) * count
        c.Reduce_scatter_block(blk, out, op=MPI.SUM)
        check(list(out) == [sum(q * 1000 for q in range(n)) + n * (r * count + i)
                            for i in range(count)],
              "%s Reduce_scatter_block %d" % (tag, count))
        c.Barrier()
    # pickled objects
    check(c.bcast({"from": n - 1} if r == n - 1 else None, root=n - 1) ==
          {"from": n - 1}, "%s bcast of an object" % tag)
    got = c.gather((r, tag), root=0)
    if r == 0:
        check(got == [(q, tag) for q in range(n)], "%s gather" % tag)
    check(c.allgather(r * r) == [q * q for q in range(n)],
          "%s allgather" % tag)


def threaded(t, c):
    for i in range(20):
        x = array("d", [float(t + i + c.Get_rank())])
        y = array("d", [0.0])
        c.Allreduce(x, y, op=MPI.SUM)
        n = c.Get_size()
        check(y[0] == n * (t + i) + n * (n - 1) / 2,
              "thread %d Allreduce %d" % (t, i))
        b = array("i", [t * 100 + i if c.Get_rank() == 0 else -1])
        c.Bcast(b, root=0)
        check(b[0] == t * 100 + i, "thread %d Bcast %d" % (t, i))


level = MPI.Query_thread()
check(level == MPI.THREAD_MULTIPLE,
      "mpi4py's thread level is %d, not MPI_THREAD_MULTIPLE" % level)
before = counts()
collectives(comm, "world")
d = comm.Dup()
collectives(d, "dup")
d.Free()
dups = [comm.Dup() for _ in range(4)]
threads = [threading.Thread(target=threaded, args=(t, dups[t]))
           for t in range(4)]
for t in threads:
    t.start()
for t in threads:
    t.join()
for x in dups:
    x.Free()
after = counts()
check(after is not None, "collc_mpi_counts not found: the library is not "
      "loaded")
if after is not None:
    # at least the buffer collectives and the threads' calls
    check(after - before >= 2 * 3 * 9 + 4 * 40,
          "only %d collectives over collc's plans" % (after - before))
p = comm.reduce(passed, root=0)
f = comm.reduce(failed, root=0)
if rank == 0:
    print("mpi4py_check (np %d): %d passed, %d failed" % (size, p, f))
sys.exit(1 if failed else 0)
