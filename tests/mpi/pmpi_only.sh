#!/bin/sh
# tests/mpi/pmpi_only.sh BUILD FLAVOUR - the MPI engine (libtopo/mpi/engine.c)
# and the MPI run (exec_mpi.c) call MPI through its PMPI_ entry points
# only.  Inside libcollc-mpi.so an MPI_ function is the library's own
# wrapper: the engine calling one would run the library inside itself.
# For each object of both, in collrun-mpi's build (BUILD/FLAVOUR/mpi/) and
# libcollc-mpi.so's (BUILD/FLAVOUR/mpi-pic/), nm -u must list no MPI_
# function (MPI_ and a capital, then a small letter: MPI_Allreduce; the
# constants are all capitals or the library's own names).  A small object
# that calls MPI_Barrier is checked the same way first, so that the check
# cannot pass by finding nothing.
# Prints what it found, then "pmpi_only: N passed, N failed".
B=$(cd "${1:?usage: pmpi_only.sh BUILD FLAVOUR}" && pwd)
flavour=${2:?usage: pmpi_only.sh BUILD FLAVOUR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0

# calls OBJECT: the MPI_ functions OBJECT calls
calls() {
	nm -u "$1" | awk '{ print $NF }' | grep -E '^MPI_[A-Z][a-z]'
}

printf '#include <mpi.h>\nint f(void) { return MPI_Barrier(MPI_COMM_WORLD); }\n' \
	>"$work/probe.c"
if mpicc.$flavour -c "$work/probe.c" -o "$work/probe.o" 2>"$work/cc.log" &&
	calls "$work/probe.o" | grep -q '^MPI_Barrier$'; then
	pass=$((pass + 1))
else
	echo "FAIL $flavour: a call of MPI_Barrier is not seen: $(cat "$work/cc.log")"
	fail=$((fail + 1))
fi
for o in mpi/libtopo/mpi/engine.o mpi/libtopo/mpi/exec_mpi.o \
	mpi-pic/libtopo/mpi/engine.o; do
	f=$B/$flavour/$o
	if [ ! -f "$f" ]; then
		echo "FAIL $flavour: $o was not built"
		fail=$((fail + 1))
	elif found=$(calls "$f"); then
		echo "FAIL $flavour: $o calls" $found "(call the PMPI_ ones)"
		fail=$((fail + 1))
	else
		pass=$((pass + 1))
	fi
done
echo "pmpi_only: $pass passed, $fail failed"
[ $fail = 0 ]
