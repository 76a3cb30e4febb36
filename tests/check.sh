#!/bin/sh
# tests/check.sh BUILD [unit|cli|schemas|man|abi|install|tsan|sim|fault|valgrind ...] - runs the test suites and
# prints one closing line "N passed, N failed" summed over all of them.
# Exit status 0 only when every suite passed.
B=${1:?usage: tests/check.sh BUILD [suite...]}
shift
[ $# -gt 0 ] || set -- unit cli schemas man abi install tsan sim
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
case $B in /*) ;; *) B=$top/$B ;; esac
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0

run() {  # run NAME CMD... : its output's "N passed, N failed" lines are summed
	echo "== $1"; shift
	if "$@" >"$log" 2>&1; then :; else status=1; echo "-- FAILED: $*"; fi
	cat "$log"
	grep -E '^[A-Za-z0-9_./-]*:? ?[0-9]+ passed, [0-9]+ failed' "$log" |
	    sed -E 's/.* ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' >>"$B/.counts"
}

mkdir -p "$B"
rm -f "$B/.counts"
for suite in "$@"; do
	case $suite in
	unit)
		for t in "$B"/tests/test_*; do
			[ -x "$t" ] && run "unit $(basename "$t")" "$t"
		done ;;
	cli) run "cli" sh "$here/cli/run.sh" "$B" ;;
	schemas) run "schemas" python3 "$here/schemas/check_schemas.py" "$B" ;;
	man) run "man" sh "$here/man/lint.sh" ;;
	abi) run "abi" sh "$here/abi/run.sh" "$B" ;;
	install) run "install" sh "$here/install/run.sh" ;;
	tsan) run "tsan" sh "$here/tsan/run.sh" "$top/build-thread" ;;
	sim) run "sim" sh "$here/sim/run.sh" "$B" ;;
	fault) run "fault" sh "$here/fault/run.sh" "$top/build-address-undefined" "$top/build-thread" ;;
	valgrind) run "valgrind" sh "$here/valgrind/run.sh" "$B" ;;
	*) echo "check.sh: unknown suite $suite"; exit 2 ;;
	esac
done
awk '{p+=$1; f+=$2} END {printf "%d passed, %d failed\n", p, f}' "$B/.counts"
exit $status
