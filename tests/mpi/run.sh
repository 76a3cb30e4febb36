#!/bin/sh
# tests/mpi/run.sh BUILD [quick] - the MPI transport and collrun-mpi, under every
# MPI library whose collrun-mpi was built (make mpi-all: BUILD/openmpi/,
# BUILD/mpich/; .ci/run installs both):
#
#   pmpi_only.sh, the engine and the MPI run call PMPI_ functions only;
#   test_exec_mpi (tests/mpi/test_exec_mpi.c) at np 1 to 9 under Open MPI,
#   1 to 6 under MPICH; cli.py, collrun-mpi against collrun at np 2
#   to 8; pmpi.py, libcollc-mpi.so: test_collc_mpi (every wrapped
#   collective against the MPI library's own) through it at np 1 to 9, its
#   settings, report and refusals, and the production tests (test_repro,
#   test_threads, test_comms, test_mismatch, settings that differ between
#   processes, mpi4py_check.py under Open MPI); mpich_suite.py, MPICH's own collective
#   tests (Debian's mpich source package) through the library (skipped,
#   and said, where apt-get source cannot fetch it).  The suite prints how
#   long each part took: CI's time budget is spent here first.
#
# Both launchers oversubscribe this machine's CPUs (np 8 on 2 CPUs).
# MPICH 4.0 (ch4:ucx) waits in its collectives by spinning, without
# yielding, so an oversubscribed job pays a scheduler time slice per wait:
# from np 3 up, test_exec_mpi runs a quarter of its matrix under MPICH
# (CHECK_QUICK; a different quarter at each np); under Open MPI, whose
# --oversubscribe makes it yield, all of it up to np 5 and a quarter from
# np 6 (to keep CI's time; the faults, barrier, timeout and refusals run
# whole at every np).  Under MPICH, np 7 and 8 are left out: they took 58
# of its 105 s on a 2-CPU machine, np 3 to 6 still run each of the four
# quarters once, and Open MPI runs every np.
#
# mpich_suite.py runs here without its control runs (each test under the
# MPI library alone, 90 more runs, about 100 s under Open MPI): they test
# the MPI library, not ours.  Run it by hand to have them:
#   python3 tests/mpi/mpich_suite.py build openmpi
#
# quick (the mpi-quick suite of make check): under both MPI libraries, the
# main cases only: test_exec_mpi at np 1 to 3 (a quarter of its matrix at
# np 3), pmpi.py's main cases (PMPI_QUICK) and cli.py; not MPICH's suite.
# The whole suite is make check-long's.
#
# In a sanitized build (make SANITIZE=address,undefined check) the suite
# runs test_exec_mpi under Open MPI at np 3 alone, with leak detection off:
# the MPI library keeps allocations to its exit by design, and the leaks
# reported are all its own (none in our frames, checked by hand).
B=$(cd "${1:?usage: run.sh BUILD [quick]}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
quick_suite=
case ${2-} in
'') ;;
quick) quick_suite=1 ;;
*) echo "usage: run.sh BUILD [quick]"; exit 2 ;;
esac
# pmpi.py's main cases only, when quick
PMPI_QUICK=$quick_suite
export PMPI_QUICK
# Open MPI refuses to run as root unless told that it is meant.
OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# no network interfaces to probe on a CI machine: shared memory and self
OMPI_MCA_btl=self,vader
export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM OMPI_MCA_btl
pass=0 fail=0 ran=0
sanitized=
case $(basename "$B") in build-*) sanitized=1 ;; esac
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
export ASAN_OPTIONS
count() {  # count LOGFILE: adds its "N passed, N failed" lines
	while read -r p f; do
		pass=$((pass + p)); fail=$((fail + f))
	done <<EOT
$(sed -n -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/p' "$1")
EOT
}
took() {  # took WHAT T0: prints how long WHAT took, for CI's time budget
	echo "mpi: $1 took $(($(date +%s) - $2)) s"
}
# part NAME TIMEOUT CMD...: one script of the suite under $flavour, its
# output shown and its counts added; a script that fails without counting
# a failure (it crashed, or timed out) counts one.
part() {
	name=$1 limit=$2
	shift 2
	t0=$(date +%s) f0=$fail st=0
	timeout "$limit" "$@" >"$log" 2>&1 || st=$?
	[ $st = 0 ] || echo "FAIL: $flavour $name (exit $st)"
	cat "$log"
	count "$log"
	[ $st = 0 ] || [ $fail -gt "$f0" ] || fail=$((fail + 1))
	took "$flavour $name" "$t0"
}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for flavour in openmpi mpich; do
	[ -x "$B/$flavour/collrun-mpi" ] || continue
	[ -n "$sanitized" ] && [ $flavour != openmpi ] && continue
	ran=1
	# MPICH's suite: through the library only; under MPICH each test at
	# its smallest size (MPICH spins oversubscribed)
	case $flavour in
	openmpi) launch="mpirun.openmpi --oversubscribe -np"; nps="1 2 3 4 5 6 7 8 9"
		MPICH_SUITE_ARGS="--no-control" ;;
	mpich) launch="mpiexec.mpich -np"; nps="1 2 3 4 5 6"
		MPICH_SUITE_ARGS="--smallest --no-control" ;;
	esac
	[ -n "$quick_suite" ] && nps="1 2 3"
	[ -n "$sanitized" ] && nps=3
	for np in $nps; do
		quick= t0=$(date +%s)
		[ $flavour = mpich ] && [ "$np" -ge 3 ] && quick=1
		[ $flavour = openmpi ] && [ "$np" -ge 6 ] && quick=1
		[ -n "$quick_suite" ] && [ "$np" -ge 3 ] && quick=1
		if CHECK_QUICK=$quick timeout 600 $launch "$np" \
			"$B/$flavour/tests/test_exec_mpi" >"$log" 2>&1; then :; else
			echo "FAIL: $flavour test_exec_mpi at np $np (exit $?)"
			fail=$((fail + 1))
		fi
		grep -E 'FAIL|passed' "$log" | sed "s/^/$flavour: /"
		count "$log"
		took "$flavour test_exec_mpi at np $np" $t0
	done
	[ -n "$sanitized" ] && continue
	part pmpi_only.sh 60 sh "$here/pmpi_only.sh" "$B" $flavour
	# libcollc-mpi.so: the launcher without -np
	part pmpi.py 1500 python3 "$here/pmpi.py" "$B" $flavour ${launch% -np}
	if [ -n "$quick_suite" ]; then
		part cli.py 1200 python3 "$here/cli.py" "$B" $flavour $launch
		continue
	fi
	# MPICH's own collective tests through the library
	part mpich_suite.py 1800 python3 "$here/mpich_suite.py" "$B" $flavour \
		$MPICH_SUITE_ARGS
	part cli.py 1200 python3 "$here/cli.py" "$B" $flavour $launch
done
if [ $ran = 0 ]; then
	echo "mpi: skipped: no collrun-mpi built (no MPI compiler; make deps installs Open MPI and MPICH)"
fi
echo "mpi: $pass passed, $fail failed"
[ $fail = 0 ]
