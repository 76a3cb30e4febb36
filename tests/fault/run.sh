#!/bin/sh
# tests/fault/run.sh ASAN_BUILD TSAN_BUILD [PLAIN_BUILD] - the
# fault-injection suites (make check-fault): alloc.sh, output.sh, signal.sh
# and timeout.sh over the programs of ASAN_BUILD (AddressSanitizer + UBSan,
# so that a memory error or a leak on an error path fails them too),
# limits.sh over PLAIN_BUILD (real memory limits, which sanitizers cannot
# run under; default build/), then test_fault from both sanitized builds.  Each suite prints its own "NAME: N passed, N failed" line (no
# total here: tests/check.sh sums those lines); the exit status is 0 only
# when every suite passed.
A=$(cd "${1:?usage: run.sh ASAN_BUILD TSAN_BUILD}" && pwd)
T=$(cd "${2:?usage: run.sh ASAN_BUILD TSAN_BUILD}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
P=$(cd "${3:-$here/../../build}" && pwd)
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT

suite() {  # suite NAME CMD...
	s=$(date +%s)
	echo "== fault: $1"
	shift
	"$@" || status=1
	echo "-- $(($(date +%s) - s)) s"
}

# A sanitizer report is a failure even where an exit status would pass.
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1 exitcode=66 second_deadlock_stack=1}
export ASAN_OPTIONS UBSAN_OPTIONS TSAN_OPTIONS

suite alloc sh "$here/alloc.sh" "$A"
suite output sh "$here/output.sh" "$A"
suite signal sh "$here/signal.sh" "$A"
suite timeout sh "$here/timeout.sh" "$A"
suite limits sh "$here/limits.sh" "$P"

# test_fault prints its own line; a sanitizer report anywhere in its output
# fails it as well.
unit() {  # unit NAME BINARY
	if "$2" >"$log" 2>&1 && ! grep -q "Sanitizer" "$log"; then
		cat "$log"
	else
		cat "$log"
		echo "FAIL $1: exit status or sanitizer report"
		echo "$1-run: 0 passed, 1 failed"
		return 1
	fi
}
suite "test_fault (address, undefined)" unit test_fault "$A/tests/test_fault"
suite "test_fault (thread)" unit test_fault "$T/tests/test_fault"
exit $status
