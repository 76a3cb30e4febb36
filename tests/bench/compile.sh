#!/bin/sh
# tests/bench/compile.sh BUILD - the compile-scaling benchmark (make bench).
# Results: a table on stdout and in bench-results/compile.md.
set -eu
B=${1:?usage: compile.sh BUILD}
here=$(cd "$(dirname "$0")" && pwd)
exec python3 "$here/compile.py" "$B" --out "$(dirname "$(dirname "$here")")/bench-results" ${BENCH_ARGS:-}
