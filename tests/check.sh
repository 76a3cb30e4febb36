#!/bin/sh
# tests/check.sh BUILD [unit|cli|schemas|man|abi|install|tsan|sim|mpi|mpi-quick|fault|valgrind ...]
# - runs the test suites and prints one closing line "N passed, N failed"
# summed over all of them.  Exit status 0 only when every suite passed.
# Without suites, make check's: unit cli schemas man abi install sim
# mpi-quick (the MPI suite's main cases under both libraries); tsan and
# the whole mpi suite are make check-long's, with fault and valgrind.
#
# The suites (and each unit test program on its own) are independent
# tasks, run CHECK_JOBS at a time (default: the CPUs this process may use),
# longest first; each task's output is kept apart and printed whole, in the
# order the suites were named, so the log reads as if they ran one after
# the other.  CHECK_JOBS=1 runs them one after the other.
B=${1:?usage: tests/check.sh BUILD [suite...]}
shift
[ $# -gt 0 ] || set -- unit cli schemas man abi install sim mpi-quick
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
case $B in /*) ;; *) B=$top/$B ;; esac
jobs=${CHECK_JOBS:-$(nproc 2>/dev/null || echo 1)}
case $jobs in '' | *[!0-9]* | 0) echo "check.sh: CHECK_JOBS must be a positive number"; exit 2 ;; esac
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$B"

# The task list, "N<TAB>weight<TAB>name<TAB>command", in the order of
# printing; weight (seconds, roughly, on a 2-CPU machine) orders the start.
n=0
add() {  # add WEIGHT NAME CMD...
	n=$((n + 1))
	w=$1 name=$2
	shift 2
	printf '%s\n' "$@" >"$work/$n.cmd"
	printf '%s\n' "$name" >"$work/$n.name"
	printf '%d %d\n' "$w" "$n" >>"$work/order"
}
for suite in "$@"; do
	case $suite in
	unit)
		for t in "$B"/tests/test_*; do
			[ -x "$t" ] || continue
			case $(basename "$t") in
			test_allreduce | test_sched) w=12 ;; test_reduce_scatter) w=7 ;;
			*) w=2 ;;
			esac
			add $w "unit $(basename "$t")" "$t"
		done ;;
	cli) add 31 cli sh "$here/cli/run.sh" "$B" ;;
	schemas) add 17 schemas python3 "$here/schemas/check_schemas.py" "$B" ;;
	man) add 1 man sh "$here/man/lint.sh" ;;
	abi) add 1 abi sh "$here/abi/run.sh" "$B" ;;
	install) add 35 install sh "$here/install/run.sh" ;;
	tsan) add 28 tsan sh "$here/tsan/run.sh" "$top/build-thread" ;;
	sim) add 44 sim sh "$here/sim/run.sh" "$B" ;;
	mpi) add 180 mpi sh "$here/mpi/run.sh" "$B" ;;
	mpi-quick) add 60 mpi-quick sh "$here/mpi/run.sh" "$B" quick ;;
	fault) add 60 fault sh "$here/fault/run.sh" "$top/build-address-undefined" "$top/build-thread" ;;
	valgrind) add 60 valgrind sh "$here/valgrind/run.sh" "$B" ;;
	*) echo "check.sh: unknown suite $suite"; exit 2 ;;
	esac
done
[ "$n" -gt 0 ] || { echo "0 passed, 0 failed"; exit 0; }

# Runs task $1: its command's lines are its arguments; output in
# $work/N.out, its "N passed, N failed" lines in $work/N.counts, and
# $work/N.failed when it failed.  From the top, as the suites expect
# (test_examples reads examples/).
cat >"$work/task.sh" <<'TASK'
i=$1 work=$2
set --
while IFS= read -r a; do set -- "$@" "$a"; done <"$work/$i.cmd"
t0=$(date +%s)
if "$@" >"$work/$i.out" 2>&1; then :; else echo "$*" >"$work/$i.failed"; fi
echo $(($(date +%s) - t0)) >"$work/$i.secs"
grep -E '^[A-Za-z0-9_./-]*:? ?[0-9]+ passed, [0-9]+ failed' "$work/$i.out" |
    sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' >"$work/$i.counts"
TASK
cd "$top" || exit 2
sort -k1,1nr -k2,2n "$work/order" | cut -d' ' -f2 |
    xargs -P "$jobs" -I{} sh "$work/task.sh" {} "$work"

status=0
: >"$work/all.counts"
i=1
while [ $i -le $n ]; do
	echo "== $(cat "$work/$i.name") ($(cat "$work/$i.secs" 2>/dev/null) s)"
	if [ -e "$work/$i.failed" ]; then
		status=1
		echo "-- FAILED: $(cat "$work/$i.failed" 2>/dev/null)"
		# A task that failed without counting a failure (a crash)
		# counts as one, so the closing line never says 0 failed.
		awk '$2 > 0 {f = 1} END {exit !f}' "$work/$i.counts" ||
		    echo "0 1" >>"$work/$i.counts"
	fi
	cat "$work/$i.out" 2>/dev/null
	cat "$work/$i.counts" >>"$work/all.counts" 2>/dev/null
	i=$((i + 1))
done
awk '{p+=$1; f+=$2} END {printf "%d passed, %d failed\n", p, f}' "$work/all.counts"
exit $status
